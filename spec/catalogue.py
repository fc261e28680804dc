"""The instruction catalogue and the parser from instruction text to a frozen :class:`Form`.

An instruction *family* is one syntax line of the manual, such as §9.7.3.3's
``add{.rnd}{.ftz}{.sat}.f32`` / ``add{.rnd}.f64``: an opcode followed by an ordered list of
qualifier :class:`Slot` s, the operands, the legality rules that the syntax alone does not say (as
small predicates with the manual's reason), and the PTX ISA version and target that it needs.

:func:`parse` turns ``"fma.rn.ftz.f32"`` into a :class:`Form` -- the family plus the qualifier
chosen for each slot -- or raises :class:`~ptxspec.spec.errors.IllegalForm` naming the offending
qualifier and the section whose rule it breaks.

Families live in the chapter modules (:mod:`ptxspec.spec.floating_point`,
:mod:`ptxspec.spec.data_movement`, ...) and are collected here in :data:`CATALOGUE`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

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
    is written (a destination) or read."""

    name: str
    type: str
    destination: bool = False


@attrs.frozen
class Target:
    """The PTX ISA version and target architecture that a form needs (``sm`` as an integer: 90 for
    sm_90; ``suffix`` "a" or "f" for the architecture-specific targets)."""

    ptx: tuple[int, int] = (1, 0)
    sm: int = 10
    suffix: str = ""

    def __str__(self) -> str:
        return f"PTX ISA {self.ptx[0]}.{self.ptx[1]}, sm_{self.sm}{self.suffix}"


#: The PTX ISA version that introduced each target (§11.1.2, release notes): a form needs at least
#: that version for its target, whatever version introduced the form itself.
SM_INTRODUCED_IN: dict[int, tuple[int, int]] = {
    10: (1, 0), 13: (1, 2), 20: (2, 0), 30: (3, 0), 53: (4, 2), 61: (5, 0), 70: (6, 0),
    80: (7, 0), 86: (7, 1), 90: (7, 8), 100: (8, 6),
}


def target_at(ptx: tuple[int, int], sm: int) -> Target:
    """The form's target, with the PTX ISA version raised to the one that introduced ``sm_<sm>``."""
    return Target(max(ptx, SM_INTRODUCED_IN[sm]), sm)


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
    target: Callable[[Form], Target] | Target = Target()
    summary: str = ""

    def syntax(self) -> str:
        return self.opcode + "".join(str(s) for s in self.slots)

    def target_of(self, form: Form) -> Target:
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
    def target(self) -> Target:
        return self.family.target_of(self)

    def __str__(self) -> str:
        return self.text


class Catalogue:
    """All families, indexed by opcode."""

    def __init__(self, families: Iterable[Family] = ()):
        self._by_opcode: dict[str, list[Family]] = {}
        self._by_key: dict[str, Family] = {}
        for family in families:
            self.add(family)

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
        """Parse instruction text such as ``"cvt.rn.satfinite.e4m3x2.f32"`` into a :class:`Form`."""
        where = where if where is not None else Location("<instruction>")
        raw = text.strip()
        if not raw or any(c.isspace() for c in raw):
            raise IllegalForm(f"expected an instruction such as 'add.rn.f32', got {text!r}", where=where)
        opcode, *tokens = raw.split(".")
        if any(t == "" for t in tokens):
            raise IllegalForm(f"empty qualifier in {raw!r}", where=where)
        candidates = self._by_opcode.get(opcode)
        if not candidates:
            raise IllegalForm(f"unknown opcode {opcode!r}", where=where)
        best: tuple[int, str, str | None] | None = None
        for family in candidates:
            matched = _match(family, tokens)
            if isinstance(matched, Form):
                for rule in family.rules:
                    if rule.illegal(matched):
                        raise IllegalForm(f"{raw}: {rule.reason(matched)}", where=where, section=rule.section or family.section)
                return matched
            depth, message = matched
            if best is None or depth > best[0]:
                best = (depth, message, family.section)
        assert best is not None
        syntaxes = " | ".join(f.syntax() for f in candidates)
        raise IllegalForm(f"{raw}: {best[1]}; the forms are {syntaxes}", where=where, section=best[2])


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
# Helpers for the chapter modules
# ---------------------------------------------------------------------------------------------


def same_type_operands(*names: str, slot: str = "type") -> Callable[[Form], tuple[Operand, ...]]:
    """Operands all of the instruction type: the first is the destination (``d, a, b, ...``)."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = form[slot]
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def forbid(slot: str, when: Callable[[Form], bool], message: str, section: str | None = None) -> Rule:
    """A rule: the slot's qualifier is illegal when ``when(form)`` holds."""
    return Rule(lambda f: f.get(slot) is not None and when(f), message, section)


@functools.cache
def _load_catalogue() -> Catalogue:
    # Imported here, not at the top: the chapter modules import this module for Slot and Family.
    import importlib

    modules = [importlib.import_module(f"ptxspec.spec.{name}") for name in CHAPTERS]
    return Catalogue([family for module in modules for family in module.FAMILIES])


#: The chapter modules of spec/ (and, by the same names, of semantics/), in the manual's order.
CHAPTERS = (
    "integer",  # §9.7.1, §9.7.2
    "floating_point",  # §9.7.3
    "floating_point_approx",  # §9.7.3, the .approx forms
    "half_precision",  # §9.7.4, §9.7.5
    "comparison",  # §9.7.6, §9.7.7
    "logic_shift",  # §9.7.8
    "data_movement",  # §9.7.9
    "warp",  # warp-level collectives
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
