"""Does the catalogue agree with ``ptxas`` on which instruction forms are legal?

For every family of :data:`ptxspec.spec.catalogue.CATALOGUE` this module generates instruction
texts -- the legal qualifier combinations (every choice of every slot, sampled when there are too
many) and deliberately illegal variants -- and asks two judges for a verdict at a (PTX ISA version,
target) pair:

* **the catalogue**: legal iff :func:`~ptxspec.spec.catalogue.parse` accepts the text *and* the
  form's :attr:`~ptxspec.spec.catalogue.Form.targets` admit the request (:func:`target_allows`);
* **ptxas**: legal iff ``ptxas -arch=sm_NN`` assembles a kernel with ``.version X.Y`` and
  ``.target sm_NN`` that declares one register per operand and applies the instruction.

Variant categories (``Case.category``):

- ``legal``: a combination of slot choices that the catalogue accepts, at every requested target;
- ``rule``: a combination of slot choices that a legality Rule (or the slots) rejects;
- ``wrong_type``: a type qualifier replaced by a type that the slot does not list;
- ``missing``: a required non-type qualifier left out (``fma.f32`` without rounding);
- ``duplicate``: a qualifier written twice;
- ``foreign``: a qualifier that only other families take (``add.approx.f32``);
- ``lane_type``: a legal vector mov whose elements are declared with another type of their size;
- ``shape``: a vector mov operand template of a length, kind or sink placement that §9.7.9.4
  and §5.4.2 do or do not allow (:data:`MOV_SHAPES`).

A family that only its operands tell apart from the others of its opcode (§9.7.9.4's vector mov)
is generated with its operand template, ``mov.b64 d, {a.x, a.y}``.

Kernels are batched: one module holds many instructions, each in its own ``{ }`` block on one line,
and ptxas's ``line N; error`` messages say which instruction it rejected; the rest are assembled
again until ptxas accepts what is left. Run it with
``python -m ptxspec.conformance.ptxas_agreement [--targets ...] [--sample N] [--seed S] [--json]``;
``--write`` stores the summary in ``conformance/data/ptxas_agreement.json``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from ptxspec.spec import catalogue as cat
from ptxspec.spec.catalogue import Family, Form, Operand, Target, Targets
from ptxspec.spec.errors import PtxSpecError

#: The ISA version this project specifies; every requested target is also tried at it.
SPEC_VERSION = (8, 7)

#: §11.1.2 / Table "PTX ISA versions": the version that introduced each target string. A module
#: for sm_NN must declare at least this ``.version``, so it is the lowest version worth asking.
TARGET_INTRODUCED: dict[str, tuple[int, int]] = {
    "sm_50": (4, 0),
    "sm_60": (5, 0),
    "sm_70": (6, 0),
    "sm_75": (6, 3),
    "sm_80": (7, 0),
    "sm_86": (7, 1),
    "sm_89": (7, 8),
    "sm_90": (7, 8),
    "sm_90a": (8, 0),
    "sm_100a": (8, 6),
    "sm_120a": (8, 7),
}

DEFAULT_TARGETS = tuple(TARGET_INTRODUCED)

#: The target at which the illegal variants are tried: the richest one, so that a rejection is the
#: form's fault and not the architecture's.
ILLEGAL_PROBE = ("sm_100a", SPEC_VERSION)

#: Register type used for an operand type that ``.reg`` does not take (§5.2.1: bit-size registers
#: are compatible with every fundamental type of the same size).
_REGISTER_OF = {"bf16": "b16", "tf32": "b32", "bf16x2": "b32", "f32x2": "b64"}

#: ptxas's message on a line of the module (``k.ptx, line N``), not of its own macros
#: (``<macro util>, line N``: st.volatile is expanded to a macro whose errors it reports too).
_LINE_ERROR = re.compile(r"k\.ptx, line (\d+); (?:error|fatal)\s*:\s*(.*)")


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------


@attrs.frozen(order=True)
class Request:
    """A requested (architecture, PTX ISA version) pair, as ``.target`` and ``.version`` say it."""

    arch: str
    version: tuple[int, int]

    @property
    def sm(self) -> int:
        return int(re.sub(r"\D", "", self.arch))

    @property
    def suffix(self) -> str:
        return self.arch[-1] if self.arch[-1].isalpha() else ""

    def __str__(self) -> str:
        return f"{self.arch}@{self.version[0]}.{self.version[1]}"


def target_allows(need: Target | Targets, request: Request) -> bool:
    """Whether a form that needs ``need`` (one :class:`~ptxspec.spec.catalogue.Target` or several
    alternatives) may be used at ``request``: some alternative admits the request's ``.version``
    and ``.target`` (:meth:`ptxspec.spec.catalogue.Target.admits`: a plain ``sm_XX`` admits every
    later architecture, an "a" target only itself, an "f" target its family's "a"/"f" targets)."""
    return need.admits(request.version, request.arch)


def requests_for(targets: Sequence[str]) -> list[Request]:
    """Each target at the version that introduced it and at :data:`SPEC_VERSION`."""
    out = []
    for arch in targets:
        low = TARGET_INTRODUCED[arch]
        out.append(Request(arch, low))
        if low != SPEC_VERSION:
            out.append(Request(arch, SPEC_VERSION))
    return out


# ---------------------------------------------------------------------------------------------
# Generated cases
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One instruction text generated from ``family`` (the family it was made from)."""

    family: str
    category: str
    text: str
    operands: tuple[Operand, ...]


def catalogue_verdict(text: str, request: Request) -> tuple[bool, str]:
    """The catalogue's verdict on ``text`` at ``request`` and why."""
    try:
        form = cat.parse(text)
    except PtxSpecError as error:
        return False, str(error)
    need = form.targets
    if not target_allows(need, request):
        return False, f"needs {need}"
    return True, ""


def _combinations(family: Family, limit: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Slot choices (``""`` for an optional slot left out): all of them, or ``limit`` sampled."""
    choices = [(*slot.tokens,) if slot.required else ("", *slot.tokens) for slot in family.slots]
    total = 1
    for c in choices:
        total *= len(c)
    if total <= limit:
        return [tuple(t for t in combo if t) for combo in itertools.product(*choices)]
    picked = sorted(rng.sample(range(total), limit))
    out = []
    for index in picked:
        combo = []
        for c in reversed(choices):
            index, k = divmod(index, len(c))
            combo.append(c[k])
        out.append(tuple(t for t in reversed(combo) if t))
    return out


def _text(opcode: str, tokens: Iterable[str], family: Family | None = None) -> str:
    """The instruction text; for a family that only its operands tell apart from others of its
    opcode (§9.7.9.4's vector mov), followed by its operand template (``mov.b64 d, {a.x, a.y}``)."""
    text = ".".join([opcode, *tokens])
    return f"{text} {family.operand_syntax}" if family is not None and family.operand_syntax else text


def _form_text(form: Form) -> str:
    return f"{form.text} {form.template}" if form.family.operand_syntax else form.text


def _variant(family: Family, category: str, text: str, operands: tuple[Operand, ...]) -> Case:
    """An illegal-by-construction variant; if the catalogue nonetheless parses it (it is another
    family's form: ``cvt.sat.u16.s32`` without ``.pack``), it gets that form's operands, and an
    operand template in the text is that form's (``mbarrier.try_wait.b64 waitComplete, [addr],
    state`` for a variant without ``.parity``), so that the registers written are those declared."""
    try:
        form = cat.parse(text)
    except PtxSpecError:
        pass
    else:
        operands = form.operands
        head, _, template = text.partition(" ")
        text = f"{head} {form.template}" if template else text
    return Case(family.key, category, text, operands)


def _fallback_operands(family: Family, tokens: Sequence[str]) -> tuple[Operand, ...] | None:
    """Operands for a text the catalogue rejects: those the family's slots give it when only a
    legality rule refuses it (``ld.shared.L2::cache_hint.v2.f32`` keeps its vector and its cache
    policy), else those of the closest legal form of the family (the same type qualifiers), so that
    ptxas judges the qualifiers, not the operand count."""
    matched = cat._match(family, list(tokens))
    if isinstance(matched, Form):
        try:
            return matched.operands
        except (KeyError, ValueError, IndexError):
            pass  # an operand list that only legal forms have
    for form in _legal_forms(family):
        if all(t in tokens for name, t in form.choices if "type" in name.lower()):
            return form.operands
    forms = _legal_forms(family)
    return forms[0].operands if forms else None


_LEGAL_CACHE: dict[str, list[Form]] = {}


def _legal_forms(family: Family) -> list[Form]:
    if family.key not in _LEGAL_CACHE:
        forms = []
        for combo in _combinations(family, 300, random.Random(0)):
            form = _parse_in(family, combo)
            if form is not None:
                forms.append(form)
        _LEGAL_CACHE[family.key] = forms
    return _LEGAL_CACHE[family.key]


def _parse_in(family: Family, tokens: Sequence[str]) -> Form | None:
    try:
        form = cat.parse(_text(family.opcode, tokens, family))
    except PtxSpecError:
        return None
    return form if form.family.key == family.key else None


@functools.cache
def _token_union() -> frozenset[str]:
    """Every qualifier token of every family."""
    return frozenset(t for f in cat.CATALOGUE.families() for s in f.slots for t in s.tokens)


#: Types tried as replacements in ``wrong_type`` variants.
_TYPES = ("b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64")


def cases_for(family: Family, limit: int, rng: random.Random) -> list[Case]:
    """The legal combinations, the rule-rejected ones, and the illegal variants of ``family``."""
    out: list[Case] = []
    legal_seen: list[Form] = []
    for combo in _combinations(family, limit, rng):
        text = _text(family.opcode, combo, family)
        try:
            form = cat.parse(text)
        except PtxSpecError:
            operands = _fallback_operands(family, combo)
            if operands is not None:
                out.append(Case(family.key, "rule", text, operands))
            continue
        if form.family.key != family.key:
            continue  # another family's form: it is generated there
        out.append(Case(family.key, "legal", _form_text(form), form.operands))
        legal_seen.append(form)
    if not legal_seen:
        return out
    base = legal_seen[rng.randrange(len(legal_seen))]
    tokens = [t for _, t in base.choices]
    slots = dict(base.choices)
    own = {t for s in family.slots for t in s.tokens}
    # wrong type: each type slot's token replaced by a type the slot does not list.
    for slot in family.slots:
        if "type" not in slot.name.lower() or slot.name not in slots:
            continue
        old = slots[slot.name]
        # The same slot of the opcode's other families supplies types of the right kind
        # (cvt's .e2m1x2 for the .f16x2-source family); the fundamental types the rest.
        kin = sorted({t for f in cat.CATALOGUE.families(family.opcode) for s in f.slots if s.name == slot.name for t in s.tokens} - set(slot.tokens))
        pool = sorted(set(_TYPES) - set(slot.tokens))
        for new in rng.sample(kin, min(2, len(kin))) + rng.sample(pool, 2):
            swapped = [new if t == old else t for t in tokens]
            operands = tuple(attrs.evolve(o, type=new) if o.type == old else o for o in base.operands)
            out.append(_variant(family, "wrong_type", _text(family.opcode, swapped, family), operands))
    # missing: a required, non-type qualifier left out.
    for slot in family.slots:
        if slot.required and "type" not in slot.name.lower() and slot.name in slots and len(family.slots) > 1:
            out.append(_variant(family, "missing", _text(family.opcode, [t for n, t in base.choices if n != slot.name], family), base.operands))
    # duplicate: a non-type qualifier written twice.
    for name, token in base.choices:
        if "type" not in name.lower():
            i = tokens.index(token)
            out.append(_variant(family, "duplicate", _text(family.opcode, tokens[: i + 1] + [token] + tokens[i + 1 :], family), base.operands))
            break
    # foreign: a qualifier of another family, placed before the type qualifiers.
    others = sorted(_token_union() - own - set(_TYPES))
    for token in rng.sample(others, min(2, len(others))):
        out.append(_variant(family, "foreign", _text(family.opcode, [token, *tokens], family), base.operands))
    out += _lane_type_cases(family, legal_seen, rng)
    if family.key == "mov":
        out += mov_shape_cases()
    return out


#: The register types of one element of a vector: §5.4.2 "Vectors of length 2 and 4 of any
#: non-predicate fundamental type may be declared", so the lanes of a vector mov may be of any
#: such type of the element's size (§9.7.9.4's examples: ".u16", ".u32", ".b8", ".u8", ".b64").
LANE_TYPES = {8: ("b8", "u8", "s8"), 16: ("b16", "u16", "s16", "f16"), 32: ("b32", "u32", "s32", "f32"), 64: ("b64", "u64", "s64", "f64")}


def _lane_type_cases(family: Family, forms: Sequence[Form], rng: random.Random) -> list[Case]:
    """Each legal vector form again, its elements declared with another type of their size."""
    out = []
    for form in forms:
        members = {o.name for group in form.layout if cat.is_vector(group) for o in group}
        # §5.4.2's lane types are those of mov; a typed instruction's vector (atom.v2.f32) takes its type.
        if not members or form.family.vector or form.opcode != "mov":
            continue
        width = int(next(o.type for o in form.operands if o.name in members)[1:])
        lane = rng.choice([t for t in LANE_TYPES[width] if not t.startswith("b")])
        operands = tuple(attrs.evolve(o, type=lane) if o.name in members else o for o in form.operands)
        out.append(Case(family.key, "lane_type", _form_text(form), operands))
    return out


#: Operand templates that no vector mov has, and sinks where they may or may not stand
#: (``text``, operands as ``name:type``): §9.7.9.4 and §5.4.2.
MOV_SHAPES: tuple[tuple[str, str], ...] = (
    ("mov.b64 d, {a, b, c}", "d:b64,a:b16,b:b16,c:b16"),  # "Vectors of length 2 and 4"
    ("mov.b64 {a, b, c}, d", "a:b16,b:b16,c:b16,d:b64"),
    ("mov.b64 d, {a, b, c, e, f, g, h, i}", "d:b64,a:b8,b:b8,c:b8,e:b8,f:b8,g:b8,h:b8,i:b8"),
    ("mov.b32 d, {a}", "d:b32,a:b32"),
    ("mov.b32 {a}, d", "a:b32,d:b32"),
    ("mov.b32 {a, b}, {c, e}", "a:b16,b:b16,c:b16,e:b16"),  # vector to vector
    ("mov.b64 d, {a, _}", "d:b64,a:b32"),  # a sink is never read
    ("mov.b64 {_, _}, d", "d:b64"),  # "provided that at least one element is a scalar register"
    ("mov.b64 {a, _}, d", "a:b32,d:b64"),  # the manual's "mov.b64 {%r1, _}, %x"
    ("mov.b128 {_, a, _, b}, d", "a:b32,b:b32,d:b128"),
    ("mov.u32 d, {a, b}", "d:u32,a:u16,b:u16"),  # ".type = { .b16, .b32, .b64, .b128 }"
    ("mov.f64 {a, b}, d", "a:f32,b:f32,d:f64"),
)


def _operands_from(spec: str) -> tuple[Operand, ...]:
    """``"d:f16,a:b16"`` -> operands, the first a destination."""
    return tuple(Operand(n, t, destination=(i == 0)) for i, (n, t) in enumerate(x.split(":") for x in spec.split(",")))


def mov_shape_cases() -> list[Case]:
    """:data:`MOV_SHAPES` as cases of category ``shape`` (of the family ``mov``)."""
    return [Case("mov", "shape", text, _operands_from(spec)) for text, spec in MOV_SHAPES]


#: §9.7.14/§9.7.15/§9.7.16 opcodes, whose operands (fragment vectors, descriptors, [p] selectors,
#: Tensor Memory addresses, immediates) this module's operand writer does not make; their own tests
#: compare them with ptxas.
MATRIX_OPCODES = ("mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05")


def generate(limit: int = 200, seed: int = 0, families: Sequence[Family] | None = None) -> list[Case]:
    """Every family's cases, ``limit`` combinations at most per family, seeded by ``seed``."""
    out = []
    for family in families if families is not None else cat.CATALOGUE.families():
        if family.opcode in MATRIX_OPCODES:
            continue  # tests/test_{matrix,wgmma,tcgen05}_catalogue.py write their kernels
        rng = random.Random(f"{seed}:{family.key}")
        out.extend(cases_for(family, limit, rng))
    return out


# ---------------------------------------------------------------------------------------------
# ptxas
# ---------------------------------------------------------------------------------------------


def register_type(type_name: str) -> str:
    """The ``.reg`` type that holds an operand of ``type_name``."""
    return _REGISTER_OF.get(type_name, type_name)


#: The video chapter models operand selectors as qualifier tokens named after their operand
#: (``dsel_b1`` is ``d.b1``, ``asel_b7354`` of the SIMD forms ``a.b7354``; see
#: :mod:`ptxspec.spec.video`); PTX writes them on the operand.
_SELECTOR = re.compile(r"^([a-z])sel_(b[0-7]+|h[0-3]+)$")

#: vmad's operand negations ``{-}a``, ``{-}b``, ``{-}c`` (§9.7.18.1.3), modelled as the qualifier
#: tokens ``neg_a``, ``neg_b``, ``neg_c`` (see :mod:`ptxspec.spec.video`); PTX writes ``-%a``.
_NEGATION = re.compile(r"^neg_([a-z])$")


def _reg(operand: Operand) -> str:
    """The register written for ``operand``; the sink ``_`` (an operand of that name: the remote
    mbarrier.arrive's destination, §9.7.13.15.13) is written as itself and declares none."""
    return "_" if operand.name == "_" else "%" + operand.name.replace(".", "_")


def _implicit(operand: Operand) -> bool:
    """The carry flag ``CC.CF`` is an operand of the semantics, not of the PTX text (§9.7.2)."""
    return operand.name.startswith("CC")


#: Operands that PTX requires to be constants although the manual does not name them ``imm...``,
#: per family key, and the value written for them: §9.7.9.13 st.bulk "The only numeric value
#: allowed for operand initval is 0"; §9.7.9.16 applypriority and §9.7.9.17 discard "size is an
#: integer constant ... The only supported value for the size operand is 128".
IMMEDIATES: dict[tuple[str, str], str] = {("st.bulk", "initval"): "0", ("applypriority", "size"): "128", ("discard", "size"): "128"}
# §9.7.9.25.3.1 "The operand cp-size is an integer constant" (4, 8 or 16; 16 with .cg); §9.7.9.25.3.3
# and §9.7.9.25.6.2 "The operand N is an integer constant"; §9.7.9.26 "The immediate integer operand
# ord", and "When .field3 is specified, the operand new_val must be an immediate".
IMMEDIATES.update({(key, "cp_size"): "16" for key in ("cp.async", "cp.async.src_size", "cp.async.ignore_src")})
IMMEDIATES.update({("cp.async.wait_group", "N"): "0", ("cp.async.bulk.wait_group", "N"): "0"})
IMMEDIATES.update({("tensormap.replace.tile.field2", "ord"): "0", ("tensormap.replace.tile.field3", "new_val"): "0"})

#: Addresses that PTX writes with a vector inside their brackets, and that vector's name:
#: §9.7.9.25.5.2 ``[tensorMap, tensorCoords]`` (``[%tensorMap, {%tensorCoords_0, %tensorCoords_1}]``).
ADDRESS_VECTORS = {"tensorMap": "tensorCoords"}

#: Qualifiers that PTX writes on the address operand, after its brackets, and the catalogue among
#: the instruction's qualifiers: §9.7.9.8 ``ld.global.f32 d, [a].unified``.
ADDRESS_QUALIFIERS = ("unified",)


def _immediate(operand: Operand, family_key: str = "") -> bool:
    """``immLut`` and the like, and the operands of :data:`IMMEDIATES`: PTX requires a constant there."""
    return operand.name.startswith("imm") or (family_key, operand.name) in IMMEDIATES


def operand_text(
    family_key: str, operands: Sequence[Operand], selectors: dict[str, str] | None = None, negated: Iterable[str] = (), address_suffix: str = ""
) -> str:
    """The operand list as PTX writes it: destinations joined by ``|`` (``d|p``, ``p|q``), the
    members of a vector (``a.x, a.y``, or the family's ``vector``) in braces, the family's
    addresses in brackets (the first followed by ``address_suffix``: ``[%a].unified``), immediates
    as 0 (or as :data:`IMMEDIATES` says)."""
    selectors = selectors or {}

    try:
        family: Family | None = cat.CATALOGUE.family(family_key)
    except KeyError:
        family = None
    addresses: tuple[str, ...] = family.addresses if family is not None else ()

    def _register(o: Operand) -> str:
        text = ("-" if o.name in negated else "") + _reg(o) + selectors.get(o.name, "")
        if o.name not in addresses:
            return text
        # ADDRESS_QUALIFIERS go after the first address's brackets: [%a].unified
        return f"[{text}]" + (address_suffix if o.name == addresses[0] else "")

    explicit = [o for o in operands if not _implicit(o)]
    destinations = [o for o in explicit if o.destination]
    # A destination vector (members named ``d.0, d.1`` or ``d.x, d.y``) is braced; scalars join with '|'.
    braced = len(destinations) > 1 and all("." in o.name for o in destinations)
    joined = (", " if braced else "|").join(_register(o) for o in destinations)
    parts = [("{" + joined + "}" if braced else joined)] if destinations else []
    vector = family.vector if family is not None else ()
    group: list[str] = []
    group_key = None
    for o in (o for o in explicit if not o.destination):
        key = "vec" if o.name in vector else (o.name.split(".")[0] if "." in o.name else None)
        if key != group_key and group:
            parts.append("{" + ", ".join(group) + "}")
            group = []
        group_key = key
        if key is None:
            parts.append(IMMEDIATES.get((family_key, o.name), "0") if _immediate(o, family_key) else _register(o))
        else:
            group.append(_register(o))
    if group:
        parts.append("{" + ", ".join(group) + "}")
    # An address and the vector that PTX writes inside its brackets: [%tensorMap, {%tensorCoords_0}].
    for address, inner in ADDRESS_VECTORS.items():
        if address in addresses and any(o.name.startswith(inner + ".") for o in explicit):
            k = parts.index(f"[{_reg(Operand(address, ''))}]")
            parts[k : k + 2] = [f"{parts[k][:-1]}, {parts[k + 1]}]"]
    return ", ".join(parts)


def _template_operands(template: str, constants: dict[str, str] | None = None) -> str:
    """An operand template as PTX operands: each name a register (``a.x`` -> ``%a_x``), ``_`` a sink,
    the names in ``constants`` their value (the immediates, :func:`_immediate`)."""
    constants = constants or {}

    def operand(name: str) -> str:
        return name if name == "_" else constants.get(name, "%" + name.replace(".", "_"))

    return re.sub(r"[A-Za-z_][\w.]*", lambda m: operand(m.group()), template)


def instruction_line(case: Case) -> str:
    """One ``{ }`` block: a register per operand and the instruction applied to them (the
    operands as the case's operand template writes them, when its text has one)."""
    head, _, template = case.text.partition(" ")
    opcode, *tokens = head.split(".")
    operands = case.operands
    suffix = {}
    negated = set()
    kept = []
    after_address = ""
    for token in tokens:
        m = _SELECTOR.match(token)
        n = _NEGATION.match(token)
        if m and any(o.name == m.group(1) for o in operands):
            suffix[m.group(1)] = "." + m.group(2)
        elif n and any(o.name == n.group(1) for o in operands):
            negated.add(n.group(1))
        elif token in ADDRESS_QUALIFIERS and not template:
            after_address += "." + token
        else:
            kept.append(token)
    regs = " ".join(f".reg .{register_type(o.type)} {_reg(o)};" for o in operands if not _implicit(o) and not _immediate(o, case.family) and o.name != "_")
    constants = {o.name: IMMEDIATES.get((case.family, o.name), "0") for o in operands if _immediate(o, case.family)}
    written = _template_operands(template, constants) if template else operand_text(case.family, operands, suffix, negated, after_address)
    return f"{{ {regs} {_text(opcode, kept)} {written}; }}"


def module(request: Request, lines: Sequence[str]) -> str:
    """A PTX module with one kernel holding ``lines``; line ``5 + i`` is ``lines[i]``."""
    v = request.version
    head = [f".version {v[0]}.{v[1]}", f".target {request.arch}", ".address_size 64", ".visible .entry k()", "{"]
    return "\n".join([*head, *lines, "ret;", "}", ""])


FIRST_LINE = 6


def _ptxas(ptxas: str, request: Request, lines: Sequence[str]) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.ptx"
        path.write_text(module(request, lines))
        run = subprocess.run([ptxas, f"-arch={request.arch}", str(path), "-o", str(Path(tmp) / "k.cubin")], capture_output=True, text=True)
    return run.returncode, run.stderr.replace(str(path), "k.ptx")


def ptxas_verdicts(ptxas: str, request: Request, lines: Sequence[str]) -> list[tuple[bool, str]]:
    """ptxas's verdict on each line: assemble them together, blame the lines it names, and
    assemble the others again until it accepts them (or, with no line named, split in two)."""
    verdicts: list[tuple[bool, str] | None] = [None] * len(lines)
    pending = [list(range(len(lines)))]
    while pending:
        group = pending.pop()
        rc, err = _ptxas(ptxas, request, [lines[i] for i in group])
        if rc == 0:
            for i in group:
                verdicts[i] = (True, "")
            continue
        blamed: dict[int, str] = {}
        for number, message in _LINE_ERROR.findall(err):
            k = int(number) - FIRST_LINE
            if 0 <= k < len(group) and group[k] not in blamed:
                blamed[group[k]] = message.strip()
        for i, message in blamed.items():
            verdicts[i] = (False, message)
        rest = [i for i in group if i not in blamed]
        if not rest:
            continue
        if blamed:
            pending.append(rest)
        elif len(group) == 1:
            verdicts[group[0]] = (False, err.strip().splitlines()[0] if err.strip() else f"ptxas exit {rc}")
        else:
            half = len(group) // 2
            pending += [group[:half], group[half:]]
    return [v for v in verdicts if v is not None]


def supported(ptxas: str, arch: str) -> str | None:
    """None when ptxas assembles an empty kernel for ``arch``, else its message."""
    rc, err = _ptxas(ptxas, Request(arch, SPEC_VERSION), [])
    return None if rc == 0 else (err.strip().splitlines() or [f"exit {rc}"])[0]


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Known:
    """A known, explained disagreement: which records it covers and the manual's sentence that
    justifies the catalogue's verdict (or, for ``kind == "catalogue"``, the open catalogue error
    reported to the owners of spec/, which the tests tolerate until it is fixed)."""

    name: str
    kind: str  # "ptxas" (ptxas differs from the manual) or "catalogue" (an open catalogue error)
    pattern: str  # regular expression matched against the instruction text
    catalogue: str  # the catalogue's verdict it covers: "legal" or "illegal"
    justification: str
    category: str | None = None
    request: str | None = None  # regular expression matched against str(Request)
    #: A concrete disagreement ``(text, request, operands)`` -- operands as ``"d:f16,a:b16"``, the
    #: first the destination -- that the tests replay, so that an entry goes stale loudly when
    #: ptxas or the catalogue changes.
    example: tuple[str, str, str] | None = None

    def covers(self, record: dict) -> bool:
        return (
            re.fullmatch(self.pattern, record["text"]) is not None
            and record["catalogue"] == self.catalogue
            and (self.category is None or record["category"] == self.category)
            and (self.request is None or re.fullmatch(self.request, record["request"]) is not None)
        )


_TESTP_OPS = "(finite|infinite|number|notanumber|normal|subnormal)"

#: The allow-list. Each entry quotes the manual (PTX ISA 8.7) where our verdict follows it.
KNOWN: tuple[Known, ...] = (
    Known(
        "cvt-f16-bf16-without-rounding",
        "ptxas",
        r"cvt(\.(relu|satfinite|ftz|sat))*\.(f16\.bf16|bf16\.f16)",
        "illegal",
        '§9.7.9.21: "The rounding modifier is mandatory in all of the following cases: float-to-float '
        'conversions, when destination type is smaller than source type"; ptxas 13.0 accepts both '
        "directions without one.",
        example=("cvt.f16.bf16", "sm_90@7.8", "d:f16,a:b16"),
    ),
    Known(
        "rcp-ftz-f64",
        "ptxas",
        r"rcp\.(rn|rz|rm|rp)\.ftz\.f64",
        "illegal",
        '§9.7.3.12 syntax: "rcp.rnd{.ftz}.f32 d, a; rcp.rnd.f64 d, a;" and Table 28: .ftz on .f64 "not applicable"; ptxas 13.0 accepts rcp.rnd.ftz.f64.',
        example=("rcp.rn.ftz.f64", "sm_90@7.8", "d:f64,a:f64"),
    ),
    Known(
        "cvt-e2m1x2-from-f16x2",
        "ptxas",
        r"cvt\.rn\.satfinite(\.relu)?\.(e2m1x2|e2m3x2|e3m2x2)\.f16x2",
        "illegal",
        '§9.7.9.21 syntax: "cvt.rn.satfinite{.relu}.f8x2type.f16x2 d, a; .f8x2type = { .e4m3x2, '
        '.e5m2x2 }": PTX ISA 8.7 has no f16x2 source for the fp6/fp4 pairs; ptxas 13.0 accepts them.',
        example=("cvt.rn.satfinite.e2m1x2.f16x2", "sm_100a@8.7", "d:b8,a:b32"),
    ),
    Known(
        "one-element-vector",
        "ptxas",
        r"mov\.b(16|32|64|128) (\{[^,}]*\}, \w+|\w+, \{[^,}]*\})",
        "illegal",
        '§5.4.2: "Vectors of length 2 and 4 of any non-predicate fundamental type may be declared by '
        'prefixing the type with .v2 or .v4", and §9.7.9.4 packs and unpacks two or four elements '
        '("pack two 8-bit elements into .b16" ... "unpack 64-bit elements from .b128"); ptxas 13.0 '
        "accepts a one-element vector such as mov.b32 %d, {%a}.",
        category="shape",
        example=("mov.b32 d, {a}", "sm_100a@8.7", "d:b32,a:b32"),
    ),
    Known(
        "mov-b128-scalar",
        "ptxas",
        r"mov\.b128 d, a",
        "illegal",
        '§9.7.9.3: "mov.type d, a; ... .type = { .pred, .b16, .b32, .b64, .u16, .u32, .u64, .s16, '
        '.s32, .s64, .f32, .f64 }" has no .b128, and §9.7.9.4 gives .b128 only to the vector moves: '
        '"Write scalar register d with the packed value of vector register a, or write vector register '
        'd with the unpacked values from scalar register a"; ptxas 13.0 accepts mov.b128 between two '
        ".b128 registers.",
        example=("mov.b128 d, a", "sm_100a@8.7", "d:b128,a:b128"),
    ),
    Known(
        "vmad-po-both-negated",
        "ptxas",
        r"vmad\.[su]32\.[su]32\.[su]32\.po(\.sat)?(\.shr7|\.shr15)?\.neg_a\.neg_b(\.[ab]sel_\w+)*",
        "illegal",
        '§9.7.18.1.3: "The plus-one mode (.po) computes (a*b) + c + 1, which is used in computing '
        'averages. Source operands may not be negated in .po mode."; ptxas 13.0 rejects a single '
        "negated operand with .po but accepts -a with -b (whose product is a*b).",
        example=("vmad.s32.s32.s32.po.neg_a.neg_b", "sm_90@7.8", "d:s32,a:s32,b:s32,c:s32"),
    ),
    Known(
        "repeated-qualifier",
        "ptxas",
        r".*",
        "illegal",
        "Every syntax line lists a qualifier at most once (for example §9.7.3.19 "
        '"cos.approx{.ftz}.f32"); ptxas 13.0 accepts a repeated qualifier such as cos.approx.approx.f32.',
        category="duplicate",
        example=("cos.approx.approx.f32", "sm_90@7.8", "d:f32,a:f32"),
    ),
    Known(
        "foreign-qualifier-ignored",
        "ptxas",
        r".*",
        "illegal",
        "A qualifier is legal only where the family's syntax line lists it (for example §9.7.3.6 "
        '"fma.rnd{.ftz}{.sat}.f32" has no .pred, §9.7.3.21 "ex2.approx{.ftz}.f32" no .normal); '
        "ptxas 13.0 silently accepts many tokens it knows from other instructions (testp's "
        ".finite/.normal/..., .pred, video selectors such as .asel_b0) on any instruction.",
        category="foreign",
        example=("add.finite.f32", "sm_90@7.8", "d:f32,a:f32,b:f32"),
    ),
    Known(
        "testp-without-property",
        "ptxas",
        r"testp\.(f32|f64)",
        "illegal",
        '§9.7.3.1: "testp.op.type p, a; .op = { .finite, .infinite, .number, .notanumber, .normal, '
        '.subnormal }": the property is not optional; ptxas 13.0 accepts testp.f32 without one.',
        example=("testp.f32", "sm_90@7.8", "p:pred,a:f32"),
    ),
    Known(
        "half-fma-bf16-directed-rounding",
        "ptxas",
        r"fma\.(rz|rm|rp)(\.relu|\.oob)*\.(bf16|bf16x2)",
        "illegal",
        '§9.7.4.4: "fma.rnd{.relu}.bf16 d, a, b, c; ... fma.rnd.oob.{relu}.type d, a, b, c; .rnd = '
        '{ .rn };": PTX ISA 8.7 has only .rn; ptxas 13.0 also accepts .rz, .rm and .rp on '
        ".bf16/.bf16x2 (not on .f16), with or without .oob.",
        example=("fma.rz.bf16", "sm_90@7.8", "d:b16,a:b16,b:b16,c:b16"),
    ),
    Known(
        "half-fma-oob-sat",
        "ptxas",
        r"fma\.rn(\.ftz)?\.sat(\.ftz)?(\.relu)?\.oob(\.relu)?\.(f16|f16x2)",
        "illegal",
        '§9.7.4.4: the .oob syntax line is "fma.rnd.oob.{relu}.type d, a, b, c;", with no .sat '
        "(only the lines without .oob have {.sat}); ptxas 13.0 accepts fma.rn.sat.oob.f16.",
        example=("fma.rn.sat.oob.f16", "sm_100a@8.7", "d:b16,a:b16,b:b16,c:b16"),
    ),
    Known(
        "red-async-mmio-gpu",
        "ptxas",
        r"red\.async\.mmio\.release\.gpu(\.global)?\.add\.(u32|s32|u64|s64)",
        "illegal",
        '§9.7.13.7, the conditions for .release: "If .mmio is specified then .scope must be .sys"; ptxas 13.0 accepts red.async.mmio.release.gpu.',
        example=("red.async.mmio.release.gpu.add.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    Known(
        "red-async-mbarrier-add-s64",
        "ptxas",
        r"red\.async\.relaxed\.cluster(\.shared::cluster)?\.mbarrier::complete_tx::bytes\.add\.s64",
        "illegal",
        '§9.7.13.7, "ADD reductions": "red.async.sem.scope{.ss}.completion_mechanism.add.type [a], b, '
        '[mbar]; ... .type = { .u32, .s32, .u64 }" (.s64 only on the .release line); ptxas 13.0 '
        "accepts the mbarrier add on .s64.",
        example=("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.s64", "sm_90@8.7", "a:u64,b:s64,mbar:u64"),
    ),
    Known(
        "red-async-relaxed-global",
        "ptxas",
        r"red\.async\.relaxed\.(gpu|sys)(\.global)?\.(add|inc|dec|min|max|and|or|xor)\.(u32|s32|u64|s64|b32)",
        "illegal",
        '§9.7.13.7, the conditions for .relaxed: "If .scope is specified, it must be .cluster", "If .ss '
        'is specified, it must be .shared::cluster", and the .relaxed lines need .mbarrier::complete_tx::bytes '
        "and [mbar]; ptxas 13.0 accepts red.async.relaxed.gpu/.sys to .global with no mbarrier.",
        example=("red.async.relaxed.sys.global.add.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    Known(
        "red-async-release-other-ops",
        "ptxas",
        r"red\.async(\.mmio)?\.release\.(gpu|sys)(\.global)?\.(inc|dec|min|max|and|or|xor)\.(u32|s32|u64|s64|b32)",
        "illegal",
        '§9.7.13.7: the .release line is "red.async{.mmio}.sem.scope{.ss}{.completion_mechanism}.add.type '
        '[a], b", with .add only; ptxas 13.0 accepts the other operations there too.',
        example=("red.async.release.sys.global.inc.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    # §9.7.9 memory instructions (spec/memory_access.py).
    Known(
        "cvta-u32-address",
        "ptxas",
        r"cvta(\.to)?\.[\w:]+\.u32",
        "legal",
        '§9.7.9.20: "cvta.space.size p, a; cvta.to.space.size p, a; ... .size = { .u32, .u64 }", with '
        'no target restriction on .u32; ptxas 13.0 refuses every 32-bit address ("32-Bit compilation '
        'is no longer supported", "32-Bit ABI ... is not supported on sm_90 or higher arch").',
        example=("cvta.global.u32", "sm_90@7.8", "p:u32,a:u32"),
    ),
    Known(
        "ld-unified-target",
        "ptxas",
        r"ld(\.[\w:]+)*\.unified",
        "illegal",
        '§9.7.9.8: "Support for .unified qualifier introduced in PTX ISA version 8.0" and "Support for '
        '.unified qualifier requires sm_90 or higher"; ptxas 13.0 accepts [a].unified on sm_75 and '
        "sm_80 and at earlier PTX ISA versions.",
        category="legal",
        example=("ld.global.f32.unified", "sm_80@8.7", "d:f32,a:u64"),
    ),
    Known(
        "st-param-crash",
        "ptxas",
        r"st(\.weak)?\.param(::func)?(\.[\w:]+)*",
        "legal",
        '§9.7.9.11: ".ss = { .global, .local, .param{::func}, .shared{::cta, ::cluster} }" ("st.param{::func} '
        'used for passing arguments to device function"); ptxas 13.0 crashes (SIGSEGV) on a kernel whose '
        "only instruction is such a st.param.",
        example=("st.param.u32", "sm_90@7.8", "a:u64,b:u32"),
    ),
    Known(
        "multimem-acc-prec-min-max",
        "ptxas",
        r"multimem\.ld_reduce(\.[\w:]+)*\.(min|max)\.acc::f(16|32)(\.[\w:]+)*",
        "legal",
        '§9.7.9.14: "multimem.ld_reduce{.ldsem}{.scope}{.ss}.op{.acc_prec}{.vec}.type d, [a]; .op = '
        '{ .min, .max, .add }; .acc_prec = { .acc::f32, .acc::f16 }", and the .acc_prec table restricts '
        'it by type only; ptxas 13.0 refuses .acc_prec with .min and .max ("Illegal reduction operation").',
        example=("multimem.ld_reduce.min.acc::f32.f16x2", "sm_90@8.7", "d:f16x2,a:u64"),
    ),
    Known(
        "multimem-red-default-sem-scope",
        "ptxas",
        r"multimem\.red\.((relaxed|release)|(cta|cluster|gpu|sys))(\.global)?\.(min|max|add|and|or|xor)(\.v[248])?\.\w+",
        "legal",
        '§9.7.9.14: "If no explicit semantics qualifier is specified, then ... multimem.red defaults to '
        '.relaxed" and "If the .scope qualifier is not specified for multimem.red then .sys scope is '
        'assumed by default"; ptxas 13.0 takes .relaxed/.release only with a scope ("requires scope") and '
        'a scope only with them ("requires order").',
        example=("multimem.red.relaxed.add.u32", "sm_90@8.1", "a:u64,b:u32"),
    ),
    Known(
        "st-async-default-completion",
        "ptxas",
        r"st\.async(\.weak)?(\.cluster)?(\.shared::cluster)?(\.v[24])?\.[bsuf](32|64)",
        "legal",
        '§9.7.9.12, .weak: "If .completion_mechanism is not specified, it defaults to '
        '.mbarrier::complete_tx::bytes"; ptxas 13.0 requires it ("... requires modifier '
        "'.completion_mechanism'\").",
        example=("st.async.u32", "sm_90@8.1", "a:u64,b:u32,mbar:u64"),
    ),
    Known(
        "st-async-weak-cluster",
        "ptxas",
        r"st\.async\.weak\.cluster(\.shared::cluster)?\.mbarrier::complete_tx::bytes(\.v[24])?\.[bsuf](32|64)",
        "legal",
        '§9.7.9.12: "st.async{.sem}{.scope}{.ss}{.completion_mechanism}{.vec}.type [a], b, [mbar]; .sem = '
        "{ .weak }; .scope = { .cluster }\"; ptxas 13.0: \"Modifier '.weak' cannot be combined with modifier "
        "'.cluster'\".",
        example=("st.async.weak.cluster.mbarrier::complete_tx::bytes.u32", "sm_90@8.1", "a:u64,b:u32,mbar:u64"),
    ),
    Known(
        "st-async-release-default-scope",
        "ptxas",
        r"st\.async(\.mmio)?\.release(\.global)?\.\w+",
        "legal",
        '§9.7.9.12, .release: "If .scope is not specified, it defaults to .sys"; ptxas 13.0 requires a scope ("Modifier \'.release\' requires scope").',
        example=("st.async.release.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    Known(
        "st-async-mmio-gpu",
        "ptxas",
        r"st\.async\.mmio\.release\.gpu(\.global)?\.\w+",
        "illegal",
        '§9.7.9.12, .release: "If .mmio is specified, then .scope must be .sys"; ptxas 13.0 accepts st.async.mmio.release.gpu.',
        example=("st.async.mmio.release.gpu.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    Known(
        "st-async-release-implied",
        "ptxas",
        r"st\.async\.(gpu|sys)(\.global)?\.\w+",
        "illegal",
        '§9.7.9.12: "st.async{.mmio}.sem{.scope}{.ss}{.completion_mechanism}.type [a], b; .sem = { .release }": '
        "the line's .sem is not optional; ptxas 13.0 accepts st.async.gpu.u32 without it.",
        example=("st.async.gpu.u32", "sm_100a@8.7", "a:u64,b:u32"),
    ),
    Known(
        "mapa-getctarank-signed",
        "ptxas",
        r"(mapa|getctarank)(\.shared::cluster)?\.s(32|64)",
        "illegal",
        '§9.7.9.23 and §9.7.9.24: ".type = { .u32, .u64 }"; ptxas 13.0 accepts .s32 and .s64 as well.',
        example=("mapa.s64", "sm_90@7.8", "d:s64,a:s64,b:u32"),
    ),
    Known(
        "prefetch-eviction-generic",
        "ptxas",
        r"prefetch\.L2::evict_(last|normal)",
        "illegal",
        '§9.7.9.15: "prefetch.global.level::eviction_priority [a]": .global is written without braces on '
        "this line (unlike prefetch{.space}.level); ptxas 13.0 accepts the eviction priority on a generic address.",
        example=("prefetch.L2::evict_last", "sm_80@8.7", "a:u64"),
    ),
    # §9.7.13.15 mbarrier (spec/mbarrier.py).
    Known(
        "mbarrier-sem-without-scope",
        "ptxas",
        r"mbarrier\.(?=.*\.(release|relaxed|acquire)\b)(?!.*\.(cta|cluster)\b).*|mbarrier\.(?=.*\.(cta|cluster)\b)(?!.*\.(release|relaxed|acquire)\b).*",
        "legal",
        '§9.7.13.15.11-16: ".sem" and ".scope" are optional apart ("If no .sem qualifier is specified, .release '
        'is assumed by default"; "If the .scope qualifier is not specified, it defaults to .cta"; the .noComplete '
        'line writes "{.release}{.cta}"); ptxas 13.0 takes a .sem only with a scope ("requires scope") and a '
        'scope only with a .sem ("requires order").',
        example=("mbarrier.arrive.release.b64", "sm_90@8.7", "state:b64,addr:u64"),
    ),
    Known(
        "mbarrier-relaxed-sm80",
        "ptxas",
        r"mbarrier\..*\.relaxed\b.*",
        "legal",
        '§9.7.13.15.13/14/16: "Support for .relaxed qualifier introduced in PTX ISA version 8.6", and the Target '
        "ISA notes ask sm_90 only of .cluster, ::cluster, .expect_tx, try_wait and a count without .noComplete; "
        "ptxas 13.0: \"Modifier '.relaxed' ... requires .target sm_90 or higher\".",
        request=r"sm_8\d.*",
        example=("mbarrier.arrive.relaxed.cta.b64", "sm_80@8.7", "state:b64,addr:u64"),
    ),
    # §9.7.9.25-26 asynchronous copies (spec/async_copy.py).
    Known(
        "cp-async-shared-cta-version",
        "ptxas",
        r"cp\.async\.(ca|cg)\.shared::cta\.global(\.[\w:]+)*( .*)?",
        "illegal",
        '§9.7.9.25.3.1: "Support for sub-qualifier ::cta introduced in PTX ISA version 7.8"; ptxas 13.0 accepts '
        "cp.async.ca.shared::cta.global at PTX ISA 7.0 to 7.7.",
        request=r"sm_\d+a?@7\.[0-7]",
        example=("cp.async.ca.shared::cta.global", "sm_80@7.0", "dstMem:u64,srcMem:u64,cp_size:u32"),
    ),
)


def example_outcome(known: Known, ptxas: str) -> Outcome:
    """Replay ``known.example`` through both judges."""
    assert known.example is not None
    text, where, spec = known.example
    arch, version = where.split("@")
    major, minor = version.split(".")
    request = Request(arch, (int(major), int(minor)))
    operands = _operands_from(spec)
    # The family of the opcode that writes the most of these operands as addresses ([a], [mbar]).
    opcode, names = text.split(".")[0], {o.name for o in operands}
    family = max((f for f in cat.CATALOGUE.families(opcode) if f.addresses and set(f.addresses) <= names), key=lambda f: len(f.addresses), default=None)
    case = Case(family.key if family is not None else opcode, known.category or "legal", text, operands)
    ours, why = catalogue_verdict(text, request)
    ((theirs, message),) = ptxas_verdicts(ptxas, request, [instruction_line(case)])
    return Outcome(case, request, ours, why, theirs, message)


def record(outcome: Outcome) -> dict:
    """The JSON record of an outcome (see :func:`summary`)."""
    o = outcome
    return {
        "family": o.case.family,
        "category": o.case.category,
        "text": o.case.text,
        "request": str(o.request),
        "catalogue": "legal" if o.ours else "illegal",
        "catalogue_reason": o.why,
        "ptxas": "legal" if o.theirs else "illegal",
        "ptxas_message": o.message,
    }


def explain(record: dict) -> str | None:
    """The name of the :data:`KNOWN` entry that covers a disagreement record, or None."""
    return next((k.name for k in KNOWN if k.covers(record)), None)


@attrs.frozen
class Outcome:
    case: Case
    request: Request
    ours: bool
    why: str
    theirs: bool
    message: str

    @property
    def agree(self) -> bool:
        return self.ours == self.theirs


def compare(
    cases: Sequence[Case], targets: Sequence[str] = DEFAULT_TARGETS, ptxas: str | None = None, workers: int = 2
) -> tuple[list[Outcome], dict[str, str]]:
    """Run every case at its requests; return the outcomes and the skipped targets with why.

    Legal-category cases are tried at every request; the others at :data:`ILLEGAL_PROBE` (their
    verdict does not depend on the target: the text itself is rejected).
    """
    ptxas = ptxas or shutil.which("ptxas")
    if ptxas is None:
        raise RuntimeError("ptxas is not on PATH")
    skipped = {arch: why for arch in targets if (why := supported(ptxas, arch)) is not None}
    live = [a for a in targets if a not in skipped]
    jobs: dict[Request, list[Case]] = defaultdict(list)
    for request in requests_for(live):
        jobs[request] = [c for c in cases if c.category == "legal"]
    probe = Request(ILLEGAL_PROBE[0], ILLEGAL_PROBE[1])
    if probe.arch in live:
        jobs[probe] = jobs.get(probe, []) + [c for c in cases if c.category != "legal"]
    chunks = [(request, group[i : i + 200]) for request, group in sorted(jobs.items()) for i in range(0, len(group), 200)]

    def run(chunk: tuple[Request, list[Case]]) -> list[Outcome]:
        request, group = chunk
        theirs = ptxas_verdicts(ptxas, request, [instruction_line(c) for c in group])
        out = []
        for case, (ok, message) in zip(group, theirs):
            ours, why = catalogue_verdict(case.text, request)
            out.append(Outcome(case, request, ours, why, ok, message))
        return out

    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = [o for batch in pool.map(run, chunks) for o in batch]
    return outcomes, skipped


def summary(outcomes: Sequence[Outcome], skipped: dict[str, str], *, seed: int, sample: int, targets: Sequence[str]) -> dict:
    """A deterministic JSON-able summary: counts per family and category, and every disagreement."""
    per_family: dict[str, Counter] = defaultdict(Counter)
    per_category: dict[str, Counter] = defaultdict(Counter)
    disagreements = []
    for o in outcomes:
        key = "agree" if o.agree else "disagree"
        per_family[o.case.family][key] += 1
        per_category[o.case.category][key] += 1
        if not o.agree:
            disagreements.append(record(o))
            disagreements[-1]["known"] = explain(disagreements[-1])
    disagreements.sort(key=lambda d: (d["family"], d["text"], d["request"]))
    total = Counter(o.agree for o in outcomes)
    return {
        "ptxas_version": "CUDA 13.0",
        "seed": seed,
        "sample_per_family": sample,
        "targets": list(targets),
        "skipped_targets": dict(sorted(skipped.items())),
        "total": len(outcomes),
        "agree": total[True],
        "disagree": total[False],
        "disagree_known": dict(sorted(Counter(d["known"] or "unexplained" for d in disagreements).items())),
        "by_category": {k: dict(sorted(v.items())) for k, v in sorted(per_category.items())},
        "by_family": {k: dict(sorted(v.items())) for k, v in sorted(per_family.items())},
        "disagreements": disagreements,
    }


DATA = Path(__file__).resolve().parent / "data" / "ptxas_agreement.json"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptxspec.conformance.ptxas_agreement", description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=list(DEFAULT_TARGETS), choices=list(DEFAULT_TARGETS))
    parser.add_argument("--sample", type=int, default=200, help="combinations per family at most (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--write", action="store_true", help=f"store the summary in {DATA.name}")
    args = parser.parse_args(argv)
    cases = generate(args.sample, args.seed)
    outcomes, skipped = compare(cases, args.targets)
    result = summary(outcomes, skipped, seed=args.seed, sample=args.sample, targets=args.targets)
    text = json.dumps(result, indent=1, sort_keys=False) + "\n"
    if args.write:
        DATA.write_text(text)
    if args.json:
        sys.stdout.write(text)
        return 0
    for arch, why in result["skipped_targets"].items():
        print(f"skipped {arch}: {why}")
    print(f"{result['total']} verdicts: {result['agree']} agree, {result['disagree']} disagree")
    for category, counts in result["by_category"].items():
        print(f"  {category:11} agree {counts.get('agree', 0):6}  disagree {counts.get('disagree', 0):5}")
    for family, counts in result["by_family"].items():
        if counts.get("disagree"):
            print(f"  {family:22} agree {counts.get('agree', 0):6}  disagree {counts['disagree']:5}")
    for name, n in result["disagree_known"].items():
        print(f"  {name:30} {n:5}")
    for d in result["disagreements"]:
        print(
            f"[{d['known'] or 'UNEXPLAINED'}] {d['text']} @ {d['request']}: catalogue {d['catalogue']} ({d['catalogue_reason']}); ptxas {d['ptxas']} ({d['ptxas_message']})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
