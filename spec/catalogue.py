"""The instruction catalogue and the parser from instruction text to a frozen :class:`Form`.

An instruction *family* is one syntax line of the manual, such as §9.7.3.3's
``add{.rnd}{.ftz}{.sat}.f32`` / ``add{.rnd}.f64``: an opcode followed by an ordered list of
qualifier :class:`Slot` s, the operands, the legality rules that the syntax alone does not say (as
small predicates with the manual's reason), and the PTX ISA version and target that it needs: one
:class:`Target`, or several alternatives (:class:`Targets`) where the manual allows a form in more
than one way.

:func:`parse` turns ``"fma.rn.ftz.f32"`` into a :class:`Form` -- the family plus the qualifier
chosen for each slot -- or raises :class:`~ptxspec.spec.errors.IllegalForm` naming the offending
qualifier and the section whose rule it breaks. The text may carry an operand template after the
qualifiers (``"mov.b64 d, {a, b}"``, :func:`parse_template`), which picks among families that only
their operands tell apart.

Families live in the chapter modules (:mod:`ptxspec.spec.floating_point`,
:mod:`ptxspec.spec.data_movement`, ...) and are collected here in :data:`CATALOGUE`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping

import attrs

from ptxspec.spec.errors import IllegalForm, Location


@attrs.frozen
class Slot:
    """One position in an instruction's qualifier list: its name and the tokens it admits.

    A boolean modifier such as ``.ftz`` is a slot with the single token ``"ftz"``.
    """

    name: str
    tokens: tuple[str, ...]
    required: bool = False
    #: The tokens as a set, for membership tests (video selector slots hold thousands).
    token_set: frozenset[str] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "token_set", frozenset(self.tokens))

    def __str__(self) -> str:
        body = "|".join("." + t for t in self.tokens)
        if not self.required:
            return "{" + body + "}"
        return body if len(self.tokens) == 1 else "(" + body + ")"


@attrs.frozen
class Operand:
    """An operand of an instruction form: its name in the manual, its register type, and whether it
    is written (a destination) or read; ``read`` marks a destination that is read as well (the
    accumulator ``d`` of wgmma.mma_async, "D = A*B+D", §9.7.15.5.2)."""

    name: str
    type: str
    destination: bool = False
    read: bool = False

    @property
    def implicit(self) -> bool:
        """The carry flag ``CC.CF`` is an operand of the semantics (§9.7.2), not of the PTX text."""
        return self.name.startswith("CC.")


@attrs.frozen
class Target:
    """One (PTX ISA version, target architecture) requirement: PTX ISA ``ptx`` or later on
    ``sm_<sm><suffix>`` (``sm`` as an integer: 90 for sm_90; ``suffix`` "a" or "f" for the
    architecture- and family-specific targets).

    :meth:`admits` reads it as the "PTX ISA notes" and "Target ISA notes" do: a plain ``sm_XX``
    is satisfied by every later architecture ("each generation adds new features and keeps all the
    features of the earlier ones", §11.1.2 ``.target``), an "a" target only by that very
    architecture ("targets with the suffix "a" ... include architecture-accelerated features
    supported only on the specified architecture, so such targets do not follow the onion-layer
    model"), an "f" target by the "a" and "f" targets of the same family (the same hundreds-and-tens
    digits) from that architecture on.

    A form that the manual allows in several ways is a :class:`Targets`: ``Target(...) | Target(...)``.
    """

    ptx: tuple[int, int] = (1, 0)
    sm: int = 10
    suffix: str = ""

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}{self.suffix}"

    @property
    def alternatives(self) -> tuple[Target, ...]:
        return (self,)

    def admits(self, ptx: tuple[int, int], arch: str) -> bool:
        """Whether PTX ISA version ``ptx`` on ``arch`` (``"sm_90a"``) satisfies this requirement."""
        sm, suffix = split_arch(arch)
        if ptx < self.ptx or sm < self.sm:
            return False
        if self.suffix == "a":
            return suffix == "a" and sm == self.sm
        if self.suffix == "f":
            return suffix in ("a", "f") and sm // 10 == self.sm // 10
        return True

    def __or__(self, other: Target | Targets) -> Targets:
        return Targets((*self.alternatives, *other.alternatives))

    def __str__(self) -> str:
        return f"PTX ISA {self.ptx[0]}.{self.ptx[1]}, {self.arch}"


@attrs.frozen
class Targets:
    """The requirements of a form that the manual allows in more than one way: it may be used where
    any one of the ``alternatives`` is satisfied. §9.7.9.21 says, for example, "cvt with
    .e4m3x2/.e5m2x2 for sm_90 or higher introduced in PTX ISA version 7.8" and "for sm_89
    introduced in PTX ISA 8.1": ``Target((8, 1), 89) | Target((7, 8), 90)``; and "... is supported
    on the following architectures: sm_100a, sm_101a, sm_120a": :func:`on`.

    ``ptx``, ``sm`` and ``suffix`` are those of the first alternative (the one a single
    :class:`Target` would have recorded), so code that reads one requirement keeps working; legality
    is :meth:`admits`.
    """

    alternatives: tuple[Target, ...] = attrs.field(validator=attrs.validators.min_len(1))

    @property
    def first(self) -> Target:
        return self.alternatives[0]

    @property
    def ptx(self) -> tuple[int, int]:
        return self.first.ptx

    @property
    def sm(self) -> int:
        return self.first.sm

    @property
    def suffix(self) -> str:
        return self.first.suffix

    def admits(self, ptx: tuple[int, int], arch: str) -> bool:
        """Whether some alternative is satisfied by PTX ISA version ``ptx`` on ``arch``."""
        return any(t.admits(ptx, arch) for t in self.alternatives)

    def __or__(self, other: Target | Targets) -> Targets:
        return Targets((*self.alternatives, *other.alternatives))

    def __str__(self) -> str:
        return " or ".join(str(t) for t in self.alternatives)


def split_arch(arch: str) -> tuple[int, str]:
    """``"sm_90a"`` -> ``(90, "a")``; ``"sm_89"`` -> ``(89, "")``."""
    body = arch.removeprefix("sm_")
    suffix = body[-1] if body and body[-1].isalpha() else ""
    digits = body[: len(body) - len(suffix)]
    if not digits.isdigit():
        raise ValueError(f"not a target architecture: {arch!r}")
    return int(digits), suffix


#: The PTX ISA version that introduced each target (§11.1.2 ``.target``, "Target ISA notes": "the
#: target string sm_89 was introduced in PTX ISA version 7.8", ...): a form needs at least that
#: version for its target, whatever version introduced the form itself.
SM_INTRODUCED_IN: dict[int, tuple[int, int]] = {
    10: (1, 0),
    13: (1, 2),
    20: (2, 0),
    30: (3, 0),
    53: (4, 2),
    61: (5, 0),
    70: (6, 0),
    75: (6, 3),
    80: (7, 0),
    86: (7, 1),
    89: (7, 8),
    90: (7, 8),
    100: (8, 6),
    101: (8, 6),
    120: (8, 7),
}

#: The "a" targets: "the target string sm_90a was introduced in PTX ISA version 8.0"; sm_100a and
#: sm_101a in 8.6, sm_120a in 8.7 (§11.1.2).
SM_A_INTRODUCED_IN: dict[int, tuple[int, int]] = {90: (8, 0), 100: (8, 6), 101: (8, 6), 120: (8, 7)}


def target_at(ptx: tuple[int, int], sm: int, suffix: str = "") -> Target:
    """The form's target, with the PTX ISA version raised to the one that introduced ``sm_<sm><suffix>``."""
    introduced = SM_A_INTRODUCED_IN[sm] if suffix else SM_INTRODUCED_IN[sm]
    return Target(max(ptx, introduced), sm, suffix)


def on(ptx: tuple[int, int], *archs: str) -> Target | Targets:
    """A form "introduced in PTX ISA version ``ptx``" and "supported on the following
    architectures: ``archs``" (``"sm_100a"``, ...): one alternative per architecture, each with the
    PTX ISA version raised to the one that introduced that target (:func:`target_at`)."""
    alternatives = tuple(target_at(ptx, *split_arch(arch)) for arch in archs)
    return alternatives[0] if len(alternatives) == 1 else Targets(alternatives)


@attrs.frozen
class Rule:
    """A legality rule: ``illegal(form)`` is true for the forms the manual forbids, with the reason."""

    illegal: Callable[[Form], bool]
    message: str | Callable[[Form], str]
    section: str | None = None

    def reason(self, form: Form) -> str:
        return self.message(form) if callable(self.message) else self.message


@attrs.frozen
class Family:
    """One syntax line of the manual (see the module docstring)."""

    opcode: str
    key: str
    section: str
    slots: tuple[Slot, ...]
    operands: Callable[[Form], tuple[Operand, ...]]
    rules: tuple[Rule, ...] = ()
    target: Callable[[Form], Target | Targets] | Target | Targets = Target()
    summary: str = ""
    #: Source operands that PTX writes as one braced vector although they are listed one by one
    #: (``cvt.rs...f32 d, {a, b, e, f}, rbits``); members named ``a.x, a.y`` are a vector anyway.
    vector: tuple[str, ...] = ()
    #: The operand list as the manual writes it (``"d, {a.x, a.y}"``), where several families share
    #: an opcode and qualifiers and only the operands tell them apart (see :func:`parse_template`).
    operand_syntax: str = ""
    #: The operands that PTX writes in brackets, as addresses (``ld``'s ``[a]``): a template that
    #: writes brackets must put them there (:func:`fit`), and :attr:`Form.template` shows them.
    addresses: tuple[str, ...] = ()

    def syntax(self) -> str:
        return self.opcode + "".join(str(s) for s in self.slots)

    def full_syntax(self) -> str:
        """:meth:`syntax` followed by :attr:`operand_syntax`, when the family has one."""
        return f"{self.syntax()} {self.operand_syntax}" if self.operand_syntax else self.syntax()

    def target_of(self, form: Form) -> Target | Targets:
        """The form's requirements as declared: one :class:`Target` or several (:class:`Targets`)."""
        return self.target(form) if callable(self.target) else self.target


@attrs.frozen
class Form:
    """A legal instruction form: a family and the token chosen in each of its slots.

    ``form.get("rnd")`` is the rounding token or None; ``"ftz" in form`` tests a modifier.
    """

    family: Family
    choices: tuple[tuple[str, str], ...]

    @property
    def opcode(self) -> str:
        return self.family.opcode

    @property
    def text(self) -> str:
        return ".".join([self.opcode, *(token for _, token in self.choices)])

    def get(self, slot: str, default: str | None = None) -> str | None:
        for name, token in self.choices:
            if name == slot:
                return token
        return default

    def __contains__(self, token: str) -> bool:
        return any(t == token for _, t in self.choices)

    def __getitem__(self, slot: str) -> str:
        value = self.get(slot)
        if value is None:
            raise KeyError(slot)
        return value

    @property
    def operands(self) -> tuple[Operand, ...]:
        return self.family.operands(self)

    @property
    def destinations(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if o.destination)

    @property
    def sources(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if not o.destination)

    @property
    def inputs(self) -> tuple[Operand, ...]:
        """The operands the instruction reads, in the manual's order: its sources, and a
        destination it reads as well (:attr:`Operand.read`)."""
        return tuple(o for o in self.operands if not o.destination or o.read)

    @property
    def layout(self) -> tuple[tuple[Operand, ...], ...]:
        """The operands as PTX writes them (:func:`operand_layout`)."""
        return operand_layout(self.operands, self.family.vector)

    @property
    def template(self) -> str:
        """The operand list in PTX syntax with the manual's names: ``"d, {a.x, a.y}"``."""
        return ", ".join(_group_text(group, self.family.addresses) for group in self.layout)

    @property
    def targets(self) -> Targets:
        """Every way the manual allows this form: legal where any alternative is satisfied."""
        declared = self.family.target_of(self)
        return declared if isinstance(declared, Targets) else Targets((declared,))

    @property
    def target(self) -> Target:
        """The form's first alternative -- its only one, for most forms (see :attr:`targets`)."""
        return self.targets.first

    def admits(self, ptx: tuple[int, int], arch: str) -> bool:
        """Whether the form may be used with ``.version`` ``ptx`` and ``.target`` ``arch``."""
        return self.targets.admits(ptx, arch)

    def __str__(self) -> str:
        return self.text


#: A chapter's account of why ``text`` is refused, as ``(message, section)``, or None when it has
#: none to give: ``explain_refusal(catalogue, text)`` in a chapter module of spec/.
Explainer = Callable[["Catalogue", str], "tuple[str, str] | None"]


class Catalogue:
    """All families, indexed by opcode."""

    def __init__(self, families: Iterable[Family] = (), explainers: Mapping[str, Explainer] | None = None, chapters: Mapping[str, str] | None = None):
        self._by_opcode: dict[str, list[Family]] = {}
        self._by_key: dict[str, Family] = {}
        #: Per opcode, a chapter's sharper account of a refused text (see :meth:`parse`).
        self._explainers: dict[str, Explainer] = dict(explainers or {})
        #: Per family key, the chapter module (of :data:`CHAPTERS`) that states it.
        self._chapters: dict[str, str] = dict(chapters or {})
        for family in families:
            self.add(family)

    def chapter_of(self, key: str) -> str | None:
        """The chapter module that states the family ``key``: its semantics live in the semantics
        module of the same name, so one instruction loads one chapter."""
        return self._chapters.get(key)

    def add(self, family: Family) -> None:
        if family.key in self._by_key:
            raise ValueError(f"duplicate family key {family.key}")
        self._by_key[family.key] = family
        self._by_opcode.setdefault(family.opcode, []).append(family)

    def families(self, opcode: str | None = None) -> list[Family]:
        if opcode is None:
            return list(self._by_key.values())
        return list(self._by_opcode.get(opcode, ()))

    def family(self, key: str) -> Family:
        return self._by_key[key]

    @property
    def opcodes(self) -> list[str]:
        return sorted(self._by_opcode)

    def parse(self, text: str, *, where: Location | str | None = None) -> Form:
        """Parse instruction text such as ``"cvt.rn.satfinite.e4m3x2.f32"`` into a :class:`Form`
        (:meth:`match`). A text that is refused is refused in the words of its chapter's
        :data:`Explainer` where the chapter has one and it applies (a qualifier that the form's
        syntax line lacks, §9.7.14; a shape that is not the type's, §9.7.15), else in the words of
        the family that matched furthest."""
        try:
            return self.match(text, where=where)
        except IllegalForm as error:
            opcode = text.strip().split(None, 1)[0].split(".")[0] if text.strip() else ""
            explain = self._explainers.get(opcode)
            blamed = explain(self, text) if explain is not None else None
            if blamed is None:
                raise
            message, section = blamed
            raise IllegalForm(f"{text.strip()}: {message}", where=error.where, section=section) from None

    def match(self, text: str, *, where: Location | str | None = None) -> Form:
        """Parse instruction text such as ``"cvt.rn.satfinite.e4m3x2.f32"`` into a :class:`Form`.

        The text may carry an operand template after the qualifiers, ``"mov.b64 d, {a, b}"``
        (:func:`parse_template`): then the form is the first family whose qualifiers match *and*
        whose operands have the template's shape -- the way to reach forms that only their
        operands tell apart, such as §9.7.9.4's vector mov. Without one, the first family whose
        qualifiers match.
        """
        where = where if where is not None else Location("<instruction>")
        lead = len(text) - len(text.lstrip())
        raw = text.strip()
        parts = raw.split(None, 1)
        head = parts[0] if parts else ""
        # An operand template may end in PTX's ';'.
        template_text = parts[1].rstrip().removesuffix(";").rstrip() or None if len(parts) > 1 else None
        if not head:
            raise IllegalForm(f"expected an instruction such as 'add.rn.f32', got {text!r}", where=where)
        opcode, *tokens = head.split(".")
        if any(t == "" for t in tokens):
            raise IllegalForm(f"empty qualifier in {head!r}", where=where)
        candidates = self._by_opcode.get(opcode)
        if not candidates:
            raise IllegalForm(f"unknown opcode {opcode!r}", where=where)
        items: tuple[TemplateItem, ...] | None = None
        if template_text is not None:
            start = lead + raw.index(template_text, len(head))
            items = parse_template(template_text, where=where, offset=start)
        best: tuple[int, str, str | None] | None = None
        misfit: tuple[int, int, str, str] | None = None  # (rank, item index, message, section)
        misfits: list[Family] = []  # the families whose qualifiers match
        fitting: list[Form] = []
        for family in candidates:
            matched = _match(family, tokens)
            if isinstance(matched, Form):
                if items is not None:
                    problem = fit(matched, items)
                    misfits.append(family)
                    if problem is not None:
                        rank, index, message = problem
                        if misfit is None or rank > misfit[0]:
                            misfit = (rank, index, message, family.section)
                        continue
                    fitting.append(matched)
                    continue
                return _legal(matched, raw, where)
            depth, message = matched
            if best is None or depth > best[0]:
                best = (depth, message, family.section)
        if fitting:
            assert items is not None
            # Forms of one shape (cp.async's src-size and ignore-src) are told apart by the
            # manual's operand names where the template spells them; otherwise the first.
            spelled = {name for item in items for name in item.names}
            named = [f for f in fitting if spelled >= {o.name for o in f.operands}]
            return _legal((named or fitting)[0], raw, where)
        if misfit is not None:
            assert items is not None and template_text is not None
            rank, index, message, section = misfit
            if rank == 1 and len(misfits) > 1:
                message = f"no form of {head} takes operands shaped {template_text.strip()!r}"
            at = start + (items[index].offset if index < len(items) else len(template_text))
            # The families that matched, and those that only their operands tell apart.
            syntaxes = " | ".join(f.full_syntax() for f in candidates if f in misfits or f.operand_syntax)
            raise IllegalForm(f"{raw}: {message}; the forms are {syntaxes}", where=shift(where, at), section=section)
        assert best is not None
        syntaxes = " | ".join(f.full_syntax() for f in candidates)
        raise IllegalForm(f"{raw}: {best[1]}; the forms are {syntaxes}", where=where, section=best[2])


def _legal(form: Form, raw: str, where: Location | str) -> Form:
    """``form`` unless one of its family's rules makes it illegal (a located :class:`IllegalForm`)."""
    for rule in form.family.rules:
        if rule.illegal(form):
            raise IllegalForm(f"{raw}: {rule.reason(form)}", where=where, section=rule.section or form.family.section)
    return form


def _match(family: Family, tokens: list[str]) -> Form | tuple[int, str]:
    """Assign each token to the first still-empty slot (in the manual's order) that admits it.

    Modifiers may come in any order, as ptxas accepts them (``add.ftz.rn.f32`` is
    ``add.rn.ftz.f32``); two slots that admit the same tokens (cvt's ``.dtype.atype``) keep their
    relative order. The Form's choices are in slot order, so ``Form.text`` is canonical.
    Returns the Form, or how many tokens matched and why matching stopped.
    """
    filled: dict[int, str] = {}
    position: dict[int, int] = {}
    for i, token in enumerate(tokens):
        admitting = [k for k, slot in enumerate(family.slots) if token in slot.token_set]
        free = [k for k in admitting if k not in filled]
        if not free:
            if admitting:
                return i, f"qualifier .{token} is repeated (only one {family.slots[admitting[0]].name} qualifier is allowed)"
            return i, f"qualifier .{token} is not allowed with {family.opcode}"
        filled[free[0]] = token
        position[free[0]] = i
    # The type qualifiers (.dtype.atype of cvt and set, ...) and any slots whose tokens overlap
    # are told apart by their order, as ptxas does ("Unexpected instruction types").
    for k1 in filled:
        for k2 in filled:
            s1, s2 = family.slots[k1], family.slots[k2]
            ordered = s1.token_set & s2.token_set or (_is_type_slot(s1) and _is_type_slot(s2))
            if k1 < k2 and position[k1] > position[k2] and ordered:
                return position[k2], f"qualifier .{filled[k1]} ({s1.name}) must come before .{filled[k2]} ({s2.name})"
    for k, slot in enumerate(family.slots):
        if slot.required and k not in filled:
            return len(tokens), f"missing {slot.name} qualifier ({' '.join('.' + t for t in slot.tokens)})"
    return Form(family, tuple((family.slots[k].name, filled[k]) for k in sorted(filled)))


def _is_type_slot(slot: Slot) -> bool:
    """The manual names its type qualifiers .type, .dtype, .atype, .btype, .abType, ..."""
    return slot.name.lower().endswith("type")


# ---------------------------------------------------------------------------------------------
# Operand templates: the operand list of an instruction, as PTX writes it
# ---------------------------------------------------------------------------------------------


def operand_layout(operands: Iterable[Operand], vector: Iterable[str] = ()) -> tuple[tuple[Operand, ...], ...]:
    """The operands as PTX writes them, one tuple per comma-separated position: the destinations
    first, as one position (``d``, ``p|q``, or a vector ``{d.x, d.y}``); then each source, except
    that the members of a vector (named ``a.x, a.y, ...``, or listed in ``vector``) share one
    position. The carry flag ``CC.CF`` (§9.7.2) is implicit and has none."""
    vector = tuple(vector)
    explicit = [o for o in operands if not o.implicit]
    groups: list[tuple[Operand, ...]] = []
    destinations = tuple(o for o in explicit if o.destination)
    if any("." in o.name for o in destinations) and any("." not in o.name for o in destinations):
        # A vector and a scalar destination (tcgen05.ld.red's "r, redval"): one position each.
        prefixes = dict.fromkeys(o.name.split(".")[0] for o in destinations)
        groups.extend(tuple(o for o in destinations if o.name.split(".")[0] == p) for p in prefixes)
    elif destinations:
        groups.append(destinations)
    key_of = lambda o: "{}" if o.name in vector else (o.name.split(".")[0] if "." in o.name else None)  # noqa: E731
    current: list[Operand] = []
    for o in (o for o in explicit if not o.destination):
        if current and (key_of(o) is None or key_of(o) != key_of(current[0])):
            groups.append(tuple(current))
            current = []
        current.append(o)
        if key_of(o) is None:
            groups.append(tuple(current))
            current = []
    if current:
        groups.append(tuple(current))
    return tuple(groups)


def is_vector(group: tuple[Operand, ...]) -> bool:
    """Whether a position of :func:`operand_layout` is a braced vector (its members are named
    ``a.x, a.y, ...`` or listed in the family's ``vector``), rather than ``d`` or ``p|q``."""
    if len(group) < 2:
        return False
    return not group[0].destination or all("." in o.name for o in group)


def _group_text(group: tuple[Operand, ...], addresses: tuple[str, ...] = ()) -> str:
    names = [o.name for o in group]
    if len(names) == 1 and names[0] in addresses:
        return f"[{names[0]}]"
    return "{" + ", ".join(names) + "}" if is_vector(group) else "|".join(names)


@attrs.frozen
class TemplateItem:
    """One comma-separated position of an operand template: a register name (``d``, or ``p|q``
    for the destinations that PTX joins with ``|``) or a braced vector (``{a, b}``; ``_`` is a
    sink element); ``offset`` is where it starts in the template (0-based)."""

    names: tuple[str, ...]
    vector: bool
    offset: int
    #: Written in brackets, ``[taddr]``: an address operand.
    address: bool = False
    #: The immediate offset written after the name, ``[a+imm]`` or ``var+imm`` (§6.4.1, 0 if none).
    displacement: int = 0
    #: Where the offset is written in the template (0-based), for an error that names it.
    displacement_at: int | None = None


_NAME = re.compile(r"[%A-Za-z_$][\w$.%]*|-?(?:0[xX][0-9a-fA-F]+|[0-9]+)")  # a register, or an immediate

#: Per opcode, the operands its syntax writes in brackets, as addresses (``addresses(form) ->
#: names``): a chapter whose forms differ only in whether an operand is an address
#: (``tcgen05.mma``'s ``a-desc`` and ``[a-tmem]``) registers it, and a template that writes
#: brackets then chooses between them (:func:`fit`).
ADDRESS_OPERANDS: dict[str, Callable[[Form], frozenset[str]]] = {}

#: Per opcode, the operands its syntax lets name a variable with an offset, ``var+imm``, without
#: brackets (cvta's "p, var+imm", mapa's "d, sh + imm, b"; ``variables(form) -> names``).
VARIABLE_OPERANDS: dict[str, Callable[[Form], frozenset[str]]] = {}

_DISPLACEMENT = re.compile(r"\s*\+\s*(-?)\s*(0[xX][0-9a-fA-F]+|[0-9]+)(?![\w$.%])")


def shift(where: Location | str, offset: int) -> Location | str:
    """``where`` moved ``offset`` characters into the text it locates."""
    if isinstance(where, Location):
        if where.line is not None:
            return Location(where.source, where.line, (where.column or 1) + offset)
        return f"{where}, character {offset + 1}"
    return f"{where}, character {offset + 1}"


def parse_template(text: str, *, where: Location | str | None = None, offset: int = 0) -> tuple[TemplateItem, ...]:
    """Parse an operand template such as ``"d, {a, b}"`` or ``"{lo, hi}, x"``.

    Names are ignored (any PTX identifier, ``%r1`` included); braces mark a vector operand,
    brackets an address (``[taddr]``, :data:`ADDRESS_OPERANDS`) and ``|`` joins destinations
    (``p|q``). ``offset`` is where ``text`` starts in the instruction text,
    so that an error names the column. Raises :class:`~ptxspec.spec.errors.IllegalForm`.
    """
    where = where if where is not None else Location("<instruction>")
    items: list[TemplateItem] = []
    i, n = 0, len(text)

    def fail(message: str, at: int) -> IllegalForm:
        return IllegalForm(f"operand template {text.strip()!r}: {message}", where=shift(where, offset + at))

    def skip_space(k: int) -> int:
        while k < n and text[k].isspace():
            k += 1
        return k

    def name_at(k: int) -> tuple[str, int]:
        m = _NAME.match(text, k)
        if m is None:
            raise fail(f"expected a register name at {text[k : k + 10]!r}" if k < n else "expected a register name at the end", k)
        return m.group(), m.end()

    def displacement_at(k: int) -> tuple[int, int | None, int]:
        """An offset after a name (§6.4.1: "[reg+imm]", "var+imm"; "+-imm" negative -- ptxas
        takes no "reg-imm")."""
        m = _DISPLACEMENT.match(text, k)
        if m is None:
            return 0, None, k
        return (-1 if m.group(1) else 1) * int(m.group(2), 0), k + len(m.group()) - len(m.group().lstrip()), m.end()

    while True:
        i = skip_space(i)
        start = i
        if i < n and text[i] == "{":
            names = []
            i += 1
            while True:
                i = skip_space(i)
                name, i = name_at(i)
                names.append(name)
                i = skip_space(i)
                if i < n and text[i] == ",":
                    i += 1
                    continue
                if i < n and text[i] == "}":
                    i += 1
                    break
                raise fail("a vector operand is closed by '}'" if i >= n else f"unexpected {text[i]!r} in a vector operand", i)
            items.append(TemplateItem(tuple(names), True, start))
        elif i < n and text[i] == "[":
            i = skip_space(i + 1)
            name, i = name_at(i)
            displacement, at, i = displacement_at(i)
            i = skip_space(i)
            if i >= n or text[i] != "]":
                raise fail("an address operand is closed by ']'", i)
            items.append(TemplateItem((name,), False, start, address=True, displacement=displacement, displacement_at=at))
            i += 1
        else:
            names = []
            while True:
                name, i = name_at(i)
                names.append(name)
                if i < n and text[i] == "|":
                    i += 1
                    continue
                break
            displacement, at, i = displacement_at(i) if len(names) == 1 else (0, None, i)
            items.append(TemplateItem(tuple(names), False, start, displacement=displacement, displacement_at=at))
        i = skip_space(i)
        if i >= n:
            break
        if text[i] != ",":
            raise fail(f"expected ',' between operands, found {text[i]!r}", i)
        i += 1
    return tuple(items)


def fit(form: Form, items: tuple[TemplateItem, ...]) -> tuple[int, int, str] | None:
    """None if the operand template ``items`` has the shape of ``form``'s operands (the same
    positions, the vectors where the form has vectors, of the same length), else ``(rank, index,
    why)``: the item that does not fit and why (rank 2: the shape fits but a sink is misplaced).

    §9.7.9.4 on sinks: "When the destination operand d is a vector register, the sink symbol '_'
    may be used for one or more elements provided that at least one element is a scalar register";
    a sink is never read.
    """
    layout = form.layout
    if len(items) != len(layout):
        index = min(len(items), len(layout))
        return 1, index, f"{form.text} takes {len(layout)} operand(s) ({form.template}), the template has {len(items)}"
    for index, (item, group) in enumerate(zip(items, layout)):
        vector = is_vector(group)
        if item.vector != vector or (vector and len(item.names) != len(group)):
            shape = _group_text(group)
            if vector:
                want = f"a vector of {len(group)} ({shape})"
            else:
                want = f"a register ({shape})"
            got = f"a vector of {len(item.names)}" if item.vector else "a register"
            return 1, index, f"{form.text} takes {want} at operand {index + 1}, the template has {got}"
    if any(item.address for item in items):  # brackets written: they must be where the addresses are
        if form.family.opcode in ADDRESS_OPERANDS:
            bracketed: frozenset[str] | None = ADDRESS_OPERANDS[form.family.opcode](form)
        else:
            bracketed = frozenset(form.family.addresses) if form.family.addresses else None
        for index, (item, group) in enumerate(zip(items, layout)):
            address = bracketed is None or (len(group) == 1 and group[0].name in bracketed)
            if item.address and not address:
                return 1, index, f"{form.text} takes a register ({_group_text(group)}) at operand {index + 1}, the template has an address"
            if bracketed is not None and address and not item.address:
                return 1, index, f"{form.text} takes an address [{group[0].name}] at operand {index + 1}, the template has a register"
    for index, (item, group) in enumerate(zip(items, layout)):
        if item.displacement_at is None:
            continue
        variables = VARIABLE_OPERANDS[form.family.opcode](form) if form.family.opcode in VARIABLE_OPERANDS else frozenset()
        if not (item.address or (len(group) == 1 and group[0].name in variables)):
            return (
                1,
                index,
                f"{form.text} takes a register ({_group_text(group)}) at operand {index + 1}: an offset '+imm' follows an address [a+imm] or a variable (var+imm)",
            )
    sinks = _sink_opcode(form.opcode)
    for index, (item, group) in enumerate(zip(items, layout)):
        # Where a syntax line writes the sink itself ("mbarrier.arrive ... _, [addr]": an arrive on
        # another CTA's object "cannot return a value"), the sink and a register tell the lines apart.
        if len(group) == 1 and group[0].name == "_" and item.names != ("_",):
            return 1, index, f"{form.text} writes the sink '_' at operand {index + 1}, the template has {item.names[0]!r}"
        if sinks and len(group) == 1 and group[0].destination and group[0].name != "_" and item.names == ("_",) and not item.vector:
            return 1, index, f"{form.text} takes a register ({group[0].name}) at operand {index + 1}, the template has the sink '_'"
    for index, (item, group) in enumerate(zip(items, layout)):
        if "_" in item.names:
            if not group[0].destination:
                return 2, index, "a sink '_' is not allowed in a source operand (it has no value to read)"
            if item.vector and all(name == "_" for name in item.names):
                return 2, index, "a destination vector needs at least one register besides the sinks '_' (§9.7.9.4)"
    return None


def template_offsets(form: Form, text: str) -> dict[str, int]:
    """The immediate offsets that instruction ``text``'s operand template writes on ``form``'s
    address operands, by operand name: ``[a+4]`` or ``var+4`` gives ``{"a": 4}`` (§6.4.1: "the
    address is ... the sum of the register and the offset"; a variable's name stands for its
    address, given as the operand's value). Empty without a template or an offset."""
    parts = text.strip().split(None, 1)
    if len(parts) < 2 or "+" not in parts[1]:
        return {}
    items = parse_template(parts[1].rstrip().removesuffix(";").rstrip())
    return {group[0].name: item.displacement for item, group in zip(items, form.layout) if item.displacement and len(group) == 1}


@functools.cache
def _sink_opcode(opcode: str) -> bool:
    """Whether some syntax line of ``opcode`` writes the sink ``_`` as an operand of its own."""
    return any(re.search(r"(^|[\s,{|])_($|[\s,}|])", f.operand_syntax) for f in _load_catalogue().families(opcode))


# ---------------------------------------------------------------------------------------------
# Helpers for the chapter modules
# ---------------------------------------------------------------------------------------------


def same_type_operands(*names: str, slot: str = "type") -> Callable[[Form], tuple[Operand, ...]]:
    """Operands all of the instruction type: the first is the destination (``d, a, b, ...``)."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = form[slot]
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def forbid(slot: str, when: Callable[[Form], bool], message: str | Callable[[Form], str], section: str | None = None) -> Rule:
    """A rule: the slot's qualifier is illegal when ``when(form)`` holds."""
    return Rule(lambda f: f.get(slot) is not None and when(f), message, section)


@functools.cache
def _load_catalogue() -> Catalogue:
    # Imported here, not at the top: the chapter modules import this module for Slot and Family.
    import importlib

    modules = [importlib.import_module(f"ptxspec.spec.{name}") for name in CHAPTERS]
    chapter_of = {family.key: name for name, module in zip(CHAPTERS, modules) for family in module.FAMILIES}
    chapters: dict[str, list[Explainer]] = {}
    for module in modules:
        if hasattr(module, "explain_refusal"):
            for opcode in dict.fromkeys(family.opcode for family in module.FAMILIES):
                chapters.setdefault(opcode, []).append(module.explain_refusal)
    return Catalogue([family for module in modules for family in module.FAMILIES], {op: _first_explanation(e) for op, e in chapters.items()}, chapter_of)


def _first_explanation(explainers: list[Explainer]) -> Explainer:
    """One explainer from the chapters that share an opcode (``cp`` is §9.7.9.25's and
    §9.7.13.15.15's): the first account that applies."""
    if len(explainers) == 1:
        return explainers[0]
    return lambda catalogue, text: next((e for e in (x(catalogue, text) for x in explainers) if e is not None), None)


#: The chapter modules of spec/ (and, by the same names, of semantics/), in the manual's order.
CHAPTERS = (
    "integer",  # §9.7.1, §9.7.2
    "floating_point",  # §9.7.3
    "floating_point_approx",  # §9.7.3, the .approx forms
    "half_precision",  # §9.7.4, §9.7.5
    "comparison",  # §9.7.6, §9.7.7
    "logic_shift",  # §9.7.8
    "data_movement",  # §9.7.9 mov, shfl, prmt, cvt, cvt.pack
    "memory_access",  # §9.7.9.8-24 ld, st, prefetch, createpolicy, cvta, isspacep, mapa, ... ; multimem
    "atomics",  # §9.7.13.5-7 atom, red, red.async
    "mbarrier",  # §9.7.13.15 mbarrier.*, cp.async.mbarrier.arrive
    "async_copy",  # §9.7.9.25-26 cp.async, cp.async.bulk, cp.reduce.async.bulk, tensor copies, tensormap.replace
    "warp",  # warp-level collectives
    "matrix",  # §9.7.14 warp-level matrix instructions (mma, mma.sp, ldmatrix, stmatrix, movmatrix)
    "wgmma",  # §9.7.15 warpgroup-level matrix instructions
    "tcgen05",  # §9.7.16 tcgen05 allocation and data movement (tcgen05.mma: not yet)
    "video",  # §9.7.18
)


def __getattr__(name: str):
    # CATALOGUE is built on first use (PEP 562), so that a chapter module can be imported first.
    if name == "CATALOGUE":
        return _load_catalogue()
    raise AttributeError(name)


def parse(text: str, *, where: Location | str | None = None) -> Form:
    """Parse instruction text against the whole catalogue (see :meth:`Catalogue.parse`)."""
    return _load_catalogue().parse(text, where=where)
