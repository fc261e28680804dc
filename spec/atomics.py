"""Catalogue entries for the atomic instructions: atom (§9.7.13.5), red (§9.7.13.6) and red.async
(§9.7.13.7).

Each syntax line of the three sections is a :class:`Family` here; where one line stands for
several that differ only in the type (atom's four ``.add.noftz`` lines, one per half type), they
share a family:

==============================  =========  ===============================================================
key                             section    syntax
==============================  =========  ===============================================================
``atom``                        9.7.13.5   ``atom{.sem}{.scope}{.space}.op{.level::cache_hint}.type
                                           d, [a], b{, cache-policy}`` (every .op but .cas)
``atom.cas``                    9.7.13.5   ``atom{.sem}{.scope}{.space}.op.type d, [a], b, c`` (.op = .cas)
``atom.cas.b16``                9.7.13.5   ``atom{.sem}{.scope}{.space}.cas.b16 d, [a], b, c``
``atom.b128``                   9.7.13.5   ``atom{.sem}{.scope}{.space}.cas.b128 d, [a], b, c`` and
                                           ``atom{.sem}{.scope}{.space}.exch{.level::cache_hint}.b128
                                           d, [a], b{, cache-policy}``
``atom.noftz``                  9.7.13.5   ``atom{.sem}{.scope}{.space}.add.noftz{.level::cache_hint}.type
                                           d, [a], b{, cache-policy}``, .type = .f16, .f16x2, .bf16, .bf16x2
``atom.vector.f32``             9.7.13.5   ``atom{.sem}{.scope}{.global}.add{.level::cache_hint}.vec_32_bit.f32
                                           d, [a], b{, cache-policy}``
``atom.vector.half``            9.7.13.5   ``atom{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}
                                           .vec_16_bit.half_word_type d, [a], b{, cache-policy}``
``atom.vector.packed``          9.7.13.5   ``atom{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}
                                           .vec_32_bit.packed_type d, [a], b{, cache-policy}``
``red``                         9.7.13.6   ``red{.sem}{.scope}{.space}.op{.level::cache_hint}.type
                                           [a], b{, cache-policy}``
``red.noftz``                   9.7.13.6   ``red{.sem}{.scope}{.space}.add.noftz{.level::cache_hint}.type
                                           [a], b{, cache-policy}``, .type = .f16, .f16x2, .bf16, .bf16x2
``red.vector.f32``              9.7.13.6   ``red{.sem}{.scope}{.global}.add{.level::cache_hint}.vec_32_bit.f32
                                           [a], b{, cache-policy}``
``red.vector.half``             9.7.13.6   ``red{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}
                                           .vec_16_bit.half_word_type [a], b{, cache-policy}``
``red.vector.packed``           9.7.13.6   ``red{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}
                                           .vec_32_bit.packed_type [a], b{, cache-policy}``
``red.async.mbarrier.inc_dec``  9.7.13.7   ``red.async.sem.scope{.ss}.completion_mechanism.op.type [a], b, [mbar]``
                                           "Increment and Decrement reductions", .op = .inc, .dec; .type = .u32
``red.async.mbarrier.min_max``  9.7.13.7   the same line, "MIN and MAX reductions": .min, .max on .u32, .s32
``red.async.mbarrier.bitwise``  9.7.13.7   the same line, "Bitwise AND, OR and XOR reductions": .b32
``red.async.mbarrier.add``      9.7.13.7   ``red.async.sem.scope{.ss}.completion_mechanism.add.type [a], b, [mbar]``,
                                           "ADD reductions", .type = .u32, .s32, .u64
``red.async.release``           9.7.13.7   ``red.async{.mmio}.sem.scope{.ss}{.completion_mechanism}.add.type [a], b``
==============================  =========  ===============================================================

Slots: ``sem``, ``scope``, ``ss`` (the state space as written: ``global``, ``shared``,
``shared::cta``, ``shared::cluster``), ``op``, ``noftz``, ``cache_hint`` (``L2::cache_hint``),
``vec``, ``type``; red.async adds ``async``, ``mmio`` and ``completion_mechanism``.

Operands: the destination ``d`` (atom only), the address ``a`` (``u64``, written ``[a]``), the
value ``b``, cas's new value ``c``, ``cache_policy`` (``b64``) when ``.L2::cache_hint`` is given
("The qualifier .level::cache_hint is required when the optional argument cache-policy is
specified"), and red.async's mbarrier address ``mbar`` (``u64``, written ``[mbar]``). The vector
forms have ``d.0, d.1, ...`` and ``b.0, b.1, ...``: "For vector-type atom, operands d and b are
brace-enclosed vector expressions, whose size equals the size of the vector qualifier." Operands
have the instruction's type (a ``.bf16`` operand lives in a ``.b16`` register, §5.2.1).

Some slots admit more tokens than their syntax line lists (the vector lines' ``{.global}`` admits
the ``.shared`` spaces, their ``.vec`` admits ``.v8`` for ``.f32``) so that such a text is refused
by a rule with the manual's reason, not by "qualifier not allowed"; the rules below quote the
manual for each restriction. Where PTX ISA 8.7 is silent and ``ptxas`` (CUDA 13.0) decides (which
scalar types each .op takes), the rule says so. The known disagreements with ptxas are in
:data:`ptxspec.conformance.ptxas_agreement.KNOWN`.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import SM_INTRODUCED_IN, Catalogue, Family, Form, Operand, Rule, Slot, Target, forbid
from ptxspec.spec.errors import PtxSpecError

ATOM = "9.7.13.5"
RED = "9.7.13.6"
RED_ASYNC = "9.7.13.7"
#: The table of valid .redOp and element-type combinations of cp.reduce.async.bulk.
REDUCTION_TABLE = "9.7.9.25.4.2"

SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "cluster", "gpu", "sys")
SPACES = ("global", "shared", "shared::cta", "shared::cluster")
SHARED = ("shared", "shared::cta", "shared::cluster")
#: ".type = { .b32, .b64, .u32, .u64, .s32, .s64, .f32, .f64 }"
TYPES = ("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64")
HALF_TYPES = ("f16", "bf16")
PACKED_TYPES = ("f16x2", "bf16x2")
BIT_OPS = ("and", "or", "xor", "cas", "exch")
ATOM_OPS = ("and", "or", "xor", "exch", "add", "inc", "dec", "min", "max")
RED_OPS = ("and", "or", "xor", "add", "inc", "dec", "min", "max")

#: The scalar types each .op takes. §9.7.13.5: "The bit-size operations are .and, .or, .xor, .cas
#: (compare-and-swap), and .exch (exchange). The integer operations are .add, .inc, .dec, .min,
#: .max. ... The floating-point operation .add rounds to nearest even." The syntax block lists
#: .op and .type without pairing them; the pairing below is the one the manual states for the
#: reductions to .global of §9.7.9.25.4.2 (cp.reduce.async.bulk: ".add: .u32, .s32, .u64, .f32,
#: .f64, .f16, .bf16", ".min, .max: .u32, .s32, .u64, .s64, .f16, .bf16", ".inc, .dec: .u32",
#: ".and, .or, .xor: .b32, .b64"), restricted to this line's .type list (the half types are the
#: .noftz lines), and it is what ptxas 13.0 enforces for atom and red ("Operation .inc requires
#: .u32 type"). .cas and .exch, bit-size operations, take the bit-size types.
OP_TYPES: dict[str, tuple[str, ...]] = {
    "and": ("b32", "b64"),
    "or": ("b32", "b64"),
    "xor": ("b32", "b64"),
    "cas": ("b32", "b64"),
    "exch": ("b32", "b64"),
    "add": ("u32", "s32", "u64", "f32", "f64"),
    "inc": ("u32",),
    "dec": ("u32",),
    "min": ("u32", "s32", "u64", "s64"),
    "max": ("u32", "s32", "u64", "s64"),
}

SEM = Slot("sem", SEMS)
SCOPE = Slot("scope", SCOPES)
SPACE = Slot("ss", SPACES)
CACHE_HINT = Slot("cache_hint", ("L2::cache_hint",))
NOFTZ = Slot("noftz", ("noftz",), required=True)
#: ".vec_16_bit = { .v2, .v4, .v8 }", ".vec_32_bit = { .v2, .v4 }": one slot, and a rule for .v8.
VEC = Slot("vec", ("v2", "v4", "v8"), required=True)
ADDRESS = Operand("a", "u64")


def _slot(name: str, *tokens: str, required: bool = True) -> Slot:
    return Slot(name, tokens, required=required)


def _width(type_name: str) -> int:
    return 128 if type_name == "b128" else 64 if type_name.endswith("64") else 32


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------

Need = tuple[tuple[int, int], int]


def _latest(needs: list[Need]) -> Target:
    """The form's target: every requirement that applies at once (the latest PTX ISA version and
    the highest architecture among them), the version raised to the one that introduced that
    architecture (§11.1.2)."""
    ptx = max(n[0] for n in needs)
    sm = max(n[1] for n in needs)
    return Target(max(ptx, SM_INTRODUCED_IN.get(sm, (1, 0))), sm)


def _qualifier_needs(form: Form) -> list[Need]:
    """The requirements that atom and red share (PTX ISA notes and Target ISA notes of §9.7.13.5
    and §9.7.13.6): ".scope qualifier introduced in PTX ISA version 5.0" / "requires sm_60";
    ".sem qualifier introduced in PTX ISA version 6.0" / "requires sm_70"; ".level::cache_hint
    qualifier introduced in PTX ISA version 7.4" / "requires sm_80"; ".cluster scope qualifier
    introduced in PTX ISA version 7.8" / "requires sm_90"; "::cta and ::cluster sub-qualifiers
    introduced in PTX ISA version 7.8", "sub-qualifier ::cta requires sm_30", "sub-qualifier
    ::cluster requires sm_90"; "use of generic addressing requires sm_20"."""
    needs: list[Need] = []
    ss = form.get("ss")
    if ss is None:
        needs.append(((2, 0), 20))
    elif ss == "shared::cta":
        needs.append(((7, 8), 30))
    elif ss == "shared::cluster":
        needs.append(((7, 8), 90))
    if form.get("scope") is not None:
        needs.append(((5, 0), 60))
    if form.get("scope") == "cluster":
        needs.append(((7, 8), 90))
    if form.get("sem") is not None:
        needs.append(((6, 0), 70))
    if "cache_hint" in dict(form.choices):
        needs.append(((7, 4), 80))
    return needs


def _scalar_needs(form: Form, opcode: str) -> list[Need]:
    """The per-operation requirements of the scalar lines.

    atom: "32-bit atom.global introduced in PTX ISA version 1.1" / "requires sm_11"; "atom.shared
    and 64-bit atom.global.{add,cas,exch} introduced in PTX ISA 1.2" / "sm_12"; "atom.add.f32 and
    64-bit atom.shared.{add,cas,exch} introduced in PTX ISA 2.0" / "sm_20"; "64-bit
    atom.{and,or,xor,min,max} introduced in PTX ISA 3.1" / "sm_32"; "atom.add.f64 introduced in
    PTX ISA 5.0" / "sm_60".

    red: "Introduced in PTX ISA version 1.2"; "red.global requires sm_11", "red.shared requires
    sm_12", "red.global.add.u64 requires sm_12", "red.add.f32 and red.shared.add.u64 introduced in
    PTX ISA 2.0" / "sm_20", "64-bit red.{and,or,xor,min,max} introduced in PTX ISA 3.1" / "sm_32",
    "red.add.f64 introduced in PTX ISA 5.0" / "sm_60"."""
    op, t, ss = form["op"], form["type"], form.get("ss")
    needs: list[Need] = [((1, 1) if opcode == "atom" else (1, 2), 11)]
    if ss is not None and ss != "global":
        needs.append(((1, 2), 12))
    if _width(t) == 64:
        if op in ("add", "cas", "exch"):
            needs.append(((1, 2), 12) if ss == "global" else ((2, 0), 20))
        else:
            needs.append(((3, 1), 32))
    if op == "add" and t == "f32":
        needs.append(((2, 0), 20))
    if op == "add" and t == "f64":
        needs.append(((5, 0), 60))
    return needs


#: ".add.noftz.f16x2 introduced in PTX ISA version 6.2" / "requires sm_60"; ".add.noftz.f16
#: introduced in PTX ISA version 6.3" / "requires sm_70"; ".add.noftz.bf16 and .add.noftz.bf16x2
#: introduced in PTX ISA version 7.8" / "require sm_90" (atom and red alike).
NOFTZ_NEEDS: dict[str, Need] = {"f16x2": ((6, 2), 60), "f16": ((6, 3), 70), "bf16": ((7, 8), 90), "bf16x2": ((7, 8), 90)}


def _atom_target(form: Form) -> Target:
    return _latest(_scalar_needs(form, "atom") + _qualifier_needs(form))


def _red_target(form: Form) -> Target:
    return _latest(_scalar_needs(form, "red") + _qualifier_needs(form))


def _cas_b16_target(form: Form) -> Target:
    """The notes: "atom.cas.b16 introduced in PTX ISA version 6.3" / "requires sm_70"."""
    return _latest([((6, 3), 70), *_qualifier_needs(form)])


def _b128_target(form: Form) -> Target:
    """The notes: "Support for .b128 type introduced in PTX ISA version 8.3" / "requires sm_90";
    "Support for .sys scope with .b128 type introduced in PTX ISA version 8.4"."""
    needs: list[Need] = [((8, 3), 90), *_qualifier_needs(form)]
    if form.get("scope") == "sys":
        needs.append(((8, 4), 90))
    return _latest(needs)


def _noftz_target(form: Form) -> Target:
    return _latest([NOFTZ_NEEDS[form["type"]], *_qualifier_needs(form)])


def _vector_target(form: Form) -> Target:
    """The notes: "Support for vector types introduced in PTX ISA version 8.1" / "requires sm_90"."""
    return _latest([((8, 1), 90), *_qualifier_needs(form)])


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------


def _hint(form: Form) -> tuple[Operand, ...]:
    """The cache policy operand: "The qualifier .level::cache_hint is required when the optional
    argument cache-policy is specified. The 64-bit operand cache-policy specifies the cache eviction
    policy"."""
    return (Operand("cache_policy", "b64"),) if form.get("cache_hint") is not None else ()


def _scalar_operands(*values: str, destination: bool = True) -> Callable[[Form], tuple[Operand, ...]]:
    """``d, [a], b{, c}{, cache-policy}`` (atom) or ``[a], b{, cache-policy}`` (red): d, b and c
    of the instruction type."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = form["type"]
        d = (Operand("d", t, destination=True),) if destination else ()
        return (*d, ADDRESS, *(Operand(v, t) for v in values), *_hint(form))

    return operands


def _b128_operands(form: Form) -> tuple[Operand, ...]:
    """``atom.cas.b128 d, [a], b, c`` and ``atom.exch{.level::cache_hint}.b128 d, [a], b{, cache-policy}``."""
    values = ("b", "c") if form["op"] == "cas" else ("b",)
    return (Operand("d", "b128", destination=True), ADDRESS, *(Operand(v, "b128") for v in values), *_hint(form))


def _vector_operands(destination: bool) -> Callable[[Form], tuple[Operand, ...]]:
    """``{d.0, ..., d.n-1}, [a], {b.0, ..., b.n-1}{, cache-policy}``, n the vector length."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t, n = form["type"], int(form["vec"][1:])
        d = tuple(Operand(f"d.{i}", t, destination=True) for i in range(n)) if destination else ()
        return (*d, ADDRESS, *(Operand(f"b.{i}", t) for i in range(n)), *_hint(form))

    return operands


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


def _op_type_rule(opcode: str, section: str) -> Rule:
    def problem(form: Form) -> str:
        op, t = form["op"], form["type"]
        allowed = " or ".join("." + a for a in OP_TYPES[op])
        if op in BIT_OPS:
            why = '"The bit-size operations are .and, .or, .xor, .cas (compare-and-swap), and .exch (exchange)"'
        elif t.startswith("b"):
            why = '"The integer operations are .add, .inc, .dec, .min, .max": not a bit-size type'
        else:
            why = f"§{section} lists .op and .type without pairing them; this is the pairing §{REDUCTION_TABLE} gives for reductions, which ptxas enforces for {opcode}"
        return f"{opcode}.{op} takes {allowed}, not .{t} ({why})"

    return Rule(lambda f: f["type"] not in OP_TYPES[f["op"]], problem, section)


def _cache_hint_rule(opcode: str, section: str) -> Rule:
    return forbid(
        "cache_hint",
        lambda f: f.get("ss") in SHARED,
        lambda f: (
            f'.L2::cache_hint is not allowed with .{f["ss"]}: "The qualifier .level::cache_hint is only supported for '
            '.global state space and for generic addressing where the address points to the .global state space"'
        ),
        section,
    )


def _red_sem_rule() -> Rule:
    return forbid(
        "sem",
        lambda f: f["sem"] in ("acquire", "acq_rel"),
        lambda f: f'.{f["sem"]} is not allowed with red: ".sem = {{ .relaxed, .release }}" (a reduction writes and returns nothing to acquire)',
        RED,
    )


def _vector_rules(opcode: str, section: str, only_add: bool, v8: bool) -> tuple[Rule, ...]:
    """The vector lines' restrictions: "vector-type {opcode} can only be used with the .global
    space and with generic addressing where the address points to .global space", and the table
    of supported combinations (".v2/.v4: .f16/.bf16 and .f16x2/.bf16x2 .add, .min, .max; .f32
    .add"; ".v8: .f16/.bf16 .add, .min, .max; .f16x2/.bf16x2 and .f32 not supported")."""
    rules = [
        forbid(
            "ss",
            lambda f: f["ss"] != "global",
            lambda f: (
                f'.{f["ss"]} is not allowed: "vector-type {opcode} can only be used with .global space and with generic addressing '
                'where the address points to .global space"'
            ),
            section,
        )
    ]
    if only_add:
        rules.append(
            Rule(lambda f: f["op"] != "add", lambda f: f".{f['op']} on vectors of .f32 is not supported: the .f32 vector forms support only .add", section)
        )
    if not v8:
        rules.append(Rule(lambda f: f["vec"] == "v8", lambda f: f'.v8 of .{f["type"]} is not supported: ".vec_32_bit = {{ .v2, .v4 }}"', section))
    return tuple(rules)


# ---------------------------------------------------------------------------------------------
# §9.7.13.5 atom, §9.7.13.6 red
# ---------------------------------------------------------------------------------------------


def _families(opcode: str, section: str) -> list[Family]:
    atom = opcode == "atom"
    returns = ", returning the old value" if atom else ""
    extra = (_red_sem_rule(),) if not atom else ()
    common = (_cache_hint_rule(opcode, section), *extra)
    ops = ATOM_OPS if atom else RED_OPS
    out = [
        Family(
            opcode=opcode,
            key=opcode,
            section=section,
            slots=(SEM, SCOPE, SPACE, Slot("op", ops, required=True), CACHE_HINT, Slot("type", TYPES, required=True)),
            operands=_scalar_operands("b", destination=atom),
            rules=(_op_type_rule(opcode, section), *common),
            target=_atom_target if atom else _red_target,
            summary="Atomically apply .op to the value at [a] and b, returning the old value."
            if atom
            else "Reduction: apply .op to the value at [a] and b, in place.",
            addresses=("a",),
        ),
        Family(
            opcode=opcode,
            key=f"{opcode}.noftz",
            section=section,
            slots=(SEM, SCOPE, SPACE, _slot("op", "add"), NOFTZ, CACHE_HINT, Slot("type", (*HALF_TYPES, *PACKED_TYPES), required=True)),
            operands=_scalar_operands("b", destination=atom),
            rules=common,
            target=_noftz_target,
            summary=f"{'Atomic' if atom else 'Reduction'} add of .f16, .f16x2, .bf16 or .bf16x2 at [a], keeping subnormals{returns}.",
            addresses=("a",),
        ),
    ]
    if atom:
        out[1:1] = [
            Family(
                opcode="atom",
                key="atom.cas",
                section=section,
                slots=(SEM, SCOPE, SPACE, _slot("op", "cas"), Slot("type", TYPES, required=True)),
                operands=_scalar_operands("b", "c"),
                rules=(_op_type_rule("atom", section),),
                target=_atom_target,
                summary="Atomic compare-and-swap: if the value at [a] equals b, write c; return the old value.",
                addresses=("a",),
            ),
            Family(
                opcode="atom",
                key="atom.cas.b16",
                section=section,
                slots=(SEM, SCOPE, SPACE, _slot("op", "cas"), _slot("type", "b16")),
                operands=_scalar_operands("b", "c"),
                target=_cas_b16_target,
                summary="Atomic 16-bit compare-and-swap, returning the old value.",
                addresses=("a",),
            ),
            Family(
                opcode="atom",
                key="atom.b128",
                section=section,
                slots=(SEM, SCOPE, SPACE, _slot("op", "cas", "exch"), CACHE_HINT, _slot("type", "b128")),
                operands=_b128_operands,
                rules=(
                    forbid(
                        "cache_hint",
                        lambda f: f["op"] == "cas",
                        '.L2::cache_hint is not allowed with .cas.b128: its syntax line "atom{.sem}{.scope}{.space}.cas.b128 d, [a], b, c" '
                        "has no {.level::cache_hint} (only the .exch.b128 line has one)",
                        section,
                    ),
                    _cache_hint_rule("atom", section),
                ),
                target=_b128_target,
                summary="Atomic 128-bit compare-and-swap or exchange, returning the old value.",
                addresses=("a",),
            ),
        ]
    vector_summary = "returning the old values" if atom else "in place"
    out += [
        Family(
            opcode=opcode,
            key=f"{opcode}.vector.f32",
            section=section,
            slots=(SEM, SCOPE, SPACE, _slot("op", "add", "min", "max"), CACHE_HINT, VEC, _slot("type", "f32")),
            operands=_vector_operands(atom),
            rules=(*_vector_rules(opcode, section, only_add=True, v8=False), *extra),
            target=_vector_target,
            summary=f"Element-wise {'atomic' if atom else 'reduction'} add of a vector of .f32 at [a], {vector_summary}.",
            addresses=("a",),
        ),
        Family(
            opcode=opcode,
            key=f"{opcode}.vector.half",
            section=section,
            slots=(SEM, SCOPE, SPACE, _slot("op", "add", "min", "max"), NOFTZ, CACHE_HINT, VEC, Slot("type", HALF_TYPES, required=True)),
            operands=_vector_operands(atom),
            rules=(*_vector_rules(opcode, section, only_add=False, v8=True), *extra),
            target=_vector_target,
            summary=f"Element-wise {'atomic' if atom else 'reduction'} add, min or max of a vector of .f16 or .bf16 at [a], {vector_summary}.",
            addresses=("a",),
        ),
        Family(
            opcode=opcode,
            key=f"{opcode}.vector.packed",
            section=section,
            slots=(SEM, SCOPE, SPACE, _slot("op", "add", "min", "max"), NOFTZ, CACHE_HINT, VEC, Slot("type", PACKED_TYPES, required=True)),
            operands=_vector_operands(atom),
            rules=(*_vector_rules(opcode, section, only_add=False, v8=False), *extra),
            target=_vector_target,
            summary=f"Element-wise {'atomic' if atom else 'reduction'} add, min or max of a vector of .f16x2 or .bf16x2 at [a], {vector_summary}.",
            addresses=("a",),
        ),
    ]
    return out


# ---------------------------------------------------------------------------------------------
# §9.7.13.7 red.async
# ---------------------------------------------------------------------------------------------

ASYNC = _slot("async", "async")
COMPLETE_TX = "mbarrier::complete_tx::bytes"


def _async_operands(mbarrier: bool) -> Callable[[Form], tuple[Operand, ...]]:
    """The operands: "a is the destination address", "b is the source value, of the type indicated
    by .type", "mbar is the mbarrier object address"."""

    def operands(form: Form) -> tuple[Operand, ...]:
        mbar = (Operand("mbar", "u64"),) if mbarrier else ()
        return (ADDRESS, Operand("b", form["type"]), *mbar)

    return operands


def _mbarrier_family(key: str, ops: tuple[str, ...], types: tuple[str, ...], comment: str) -> Family:
    """One of the four ``.relaxed`` lines ``red.async.sem.scope{.ss}.completion_mechanism.op.type
    [a], b, [mbar]``: ".sem = { .relaxed }", ".scope = { .cluster }", ".ss = { .shared::cluster }",
    ".completion_mechanism = { .mbarrier::complete_tx::bytes }"; "Introduced in PTX ISA version
    8.1", "Requires sm_90 or higher"."""
    return Family(
        opcode="red",
        key=key,
        section=RED_ASYNC,
        slots=(
            ASYNC,
            _slot("sem", "relaxed"),
            _slot("scope", "cluster"),
            _slot("ss", "shared::cluster", required=False),
            _slot("completion_mechanism", COMPLETE_TX),
            _slot("op", *ops),
            _slot("type", *types),
        ),
        operands=_async_operands(True),
        target=Target((8, 1), 90),
        summary=f"Asynchronous {comment} on shared memory of another CTA of the cluster, signalling completion on the mbarrier mbar.",
        addresses=("a", "mbar"),
    )


RED_ASYNC_RELEASE = Family(
    opcode="red",
    key="red.async.release",
    section=RED_ASYNC,
    # "red.async{.mmio}.sem.scope{.ss}{.completion_mechanism}.add.type [a], b; .sem = { .release };
    # .scope = { .gpu, .cluster }; .ss = { .global }; .type = { .u32, .s32, .u64, .s64 };
    # .completion_mechanism = { };"
    slots=(
        ASYNC,
        _slot("mmio", "mmio", required=False),
        _slot("sem", "release"),
        _slot("scope", "gpu", "cluster", "sys"),
        _slot("ss", "global", required=False),
        _slot("completion_mechanism", COMPLETE_TX, required=False),
        _slot("op", "add"),
        _slot("type", "u32", "s32", "u64", "s64"),
    ),
    operands=_async_operands(False),
    rules=(
        # The syntax block says ".scope = { .gpu, .cluster }"; the conditions, the PTX ISA notes
        # and the Target ISA notes all say .gpu and .sys, and so does ptxas.
        forbid(
            "scope",
            lambda f: f["scope"] == "cluster",
            '.cluster is not allowed with .release: "If .scope is specified, it can be either .gpu or .sys" (.sem is .release)',
            RED_ASYNC,
        ),
        forbid("mmio", lambda f: f["scope"] != "sys", '.mmio needs .sys: "If .mmio is specified then .scope must be .sys"', RED_ASYNC),
        forbid(
            "completion_mechanism",
            lambda f: True,
            '.mbarrier::complete_tx::bytes is not allowed with .release: ".completion_mechanism must not be specified"',
            RED_ASYNC,
        ),
    ),
    # "Support for .mmio qualifier, .release semantics, .global state space and .gpu and .sys
    # scopes introduced in PTX ISA version 8.7"; "... require sm_100 or higher".
    target=Target((8, 7), 100),
    summary="Asynchronous release add to global memory at [a] (an MMIO operation with .mmio).",
    addresses=("a",),
)


FAMILIES: list[Family] = [
    *_families("atom", ATOM),
    *_families("red", RED),
    _mbarrier_family("red.async.mbarrier.inc_dec", ("inc", "dec"), ("u32",), "increment or decrement"),
    _mbarrier_family("red.async.mbarrier.min_max", ("min", "max"), ("u32", "s32"), "min or max"),
    _mbarrier_family("red.async.mbarrier.bitwise", ("and", "or", "xor"), ("b32",), "bitwise and, or or xor"),
    _mbarrier_family("red.async.mbarrier.add", ("add",), ("u32", "s32", "u64"), "add"),
    RED_ASYNC_RELEASE,
]


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` for atom and red, in the manual's
    words where the nearest family would only say which qualifier it does not take:

    * a half-precision form without ``.noftz`` (``atom.add.f16``): "atom.add.f16, atom.add.f16x2,
      atom.add.bf16 and atom.add.bf16x2 operations require the .noftz qualifier" (§9.7.13.6 says
      the same of red);
    * ``.b128`` or ``.b16`` with another operation than their syntax lines' (``atom.add.b128``):
      only ``.cas.b128``, ``.exch.b128`` and ``.cas.b16`` are written;
    * red with ``.cas`` or ``.exch``, which its ``.op`` list does not have.
    """
    head, _, operands = text.strip().partition(" ")
    opcode, *tokens = head.split(".")
    if opcode not in ("atom", "red") or "async" in tokens:
        return None
    section = ATOM if opcode == "atom" else RED
    if "noftz" not in tokens and set(tokens) & {*HALF_TYPES, *PACKED_TYPES}:
        try:
            catalogue.match(".".join([opcode, *tokens, "noftz"]) + (" " + operands if operands else ""))
        except PtxSpecError:
            pass
        else:
            return (
                f".noftz is required: {opcode}.add.f16, {opcode}.add.f16x2, {opcode}.add.bf16 and {opcode}.add.bf16x2 operations require "
                "the .noftz qualifier (and the vector forms are written .op.noftz)",
                section,
            )
    ops = [t for t in tokens if t in OP_TYPES]
    if opcode == "red":
        bad = [op for op in ops if op in ("cas", "exch")]
        return (f'red has no .{bad[0]}: its ".op = {{ .and, .or, .xor, .add, .inc, .dec, .min, .max }}"', RED) if bad else None
    if "b128" in tokens and ops and ops[0] not in ("cas", "exch"):
        return (
            f".{ops[0]} does not take .b128: the .b128 syntax lines are atom{{.sem}}{{.scope}}{{.space}}.cas.b128 and atom{{.sem}}{{.scope}}{{.space}}.exch{{.level::cache_hint}}.b128",
            ATOM,
        )
    if "b16" in tokens and ops and ops[0] != "cas":
        return (f".{ops[0]} does not take .b16: the only .b16 syntax line is atom{{.sem}}{{.scope}}{{.space}}.cas.b16 d, [a], b, c", ATOM)
    return None
