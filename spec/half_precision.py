"""Catalogue entries for §9.7.4, the half-precision floating-point instructions on .f16, .f16x2,
.bf16 and .bf16x2.

Families here: add, sub, mul, fma (with ``.relu`` and ``.oob``), neg, abs, min and max. Their
keys end in ``.h`` so that they stay apart from the §9.7.3 families of the same opcodes
(``add.f`` ...); the parser tries every family of an opcode and the type slot decides.

§9.7.5, the mixed-precision add, sub and fma (an .f32 result from .f16/.bf16 inputs), are here too,
under the keys ``add.mixed``, ``sub.mixed`` and ``fma.mixed``.

tanh.approx and ex2.approx on half types (§9.7.4.9, §9.7.4.10) are the families
``tanh.approx.half`` and ``ex2.approx.half``.

Syntax lines (§9.7.4.1-3)::

    add{.rnd}{.ftz}{.sat}.f16   d, a, b;     add{.rnd}{.ftz}{.sat}.f16x2 d, a, b;
    add{.rnd}.bf16   d, a, b;                add{.rnd}.bf16x2 d, a, b;
    .rnd = { .rn };

Operand types: "for the .f16 instruction type, operands d, a, b have .f16 or .b16 type; for
.f16x2, .b32; for .bf16, .b16; for .bf16x2, .b32".
"""

from __future__ import annotations

from ptxspec.spec.catalogue import target_at as _target
from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid

HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")
# ".rnd = { .rn }". The slot admits the other rounding tokens too, so that ``add.rz.f16`` is
# refused by :func:`_only_rn` with the manual's reason rather than matched against another family.
RN = Slot("rnd", ("rn", "rz", "rm", "rp"))
RN_REQUIRED = Slot("rnd", ("rn", "rz", "rm", "rp"), required=True)
FTZ = Slot("ftz", ("ftz",))
SAT = Slot("sat", ("sat",))
RELU = Slot("relu", ("relu",))
TYPE = Slot("type", HALF_TYPES, required=True)


def _bf16(form: Form) -> bool:
    return form["type"] in ("bf16", "bf16x2")


def register_type(type_name: str) -> str:
    """The register type of an operand: .f16 stays .f16 (".f16 or .b16"), .bf16 is .b16, the
    packed types are .b32 (§9.7.4.1 Description)."""
    return {"f16": "f16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}[type_name]


def _operands(*names: str):
    def operands(form: Form) -> tuple[Operand, ...]:
        t = register_type(form["type"])
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def _f16_only(slot: str, section: str) -> Rule:
    """The .bf16 and .bf16x2 syntax lines have no ``{.ftz}`` and no ``{.sat}``."""
    return forbid(slot, _bf16, lambda f: f"`.{slot}` is not allowed with `.{f['type']}` (only the .f16 and .f16x2 syntax lines have {{.{slot}}})", section)


# ---------------------------------------------------------------------------------------------
# §9.7.4.1-3 add, sub, mul
# ---------------------------------------------------------------------------------------------


def _only_rn(section: str) -> Rule:
    return forbid(
        "rnd",
        lambda f: f["rnd"] != "rn",
        lambda f: f'`.{f["rnd"]}` is not allowed with `.{f["type"]}`: the half-precision forms have ".rnd = {{ .rn }}"',
        section,
    )


def _add_sub_mul_target(form: Form) -> Target:
    """§9.7.4.1-3: "Introduced in PTX ISA version 4.2", "requires sm_53 or higher"; "add{.rnd}.bf16
    and add{.rnd}.bf16x2 introduced in PTX ISA version 7.8", "require sm_90 or higher" (sub, mul
    alike)."""
    return _target((7, 8), 90) if _bf16(form) else _target((4, 2), 53)


def _add_sub_mul(opcode: str, section: str, summary: str) -> Family:
    return Family(
        opcode=opcode,
        key=f"{opcode}.h",
        section=section,
        slots=(RN, FTZ, SAT, TYPE),
        operands=_operands("d", "a", "b"),
        rules=(_only_rn(section), _f16_only("ftz", section), _f16_only("sat", section)),
        target=_add_sub_mul_target,
        summary=summary,
    )


ADD = _add_sub_mul("add", "9.7.4.1", "Add two half-precision values.")
SUB = _add_sub_mul("sub", "9.7.4.2", "Subtract two half-precision values.")
MUL = _add_sub_mul("mul", "9.7.4.3", "Multiply two half-precision values.")


# ---------------------------------------------------------------------------------------------
# §9.7.4.4 fma
# ---------------------------------------------------------------------------------------------


def _fma_target(form: Form) -> Target:
    """§9.7.4.4: "Introduced in PTX ISA version 4.2", "requires sm_53 or higher";
    "fma.relu.{f16, f16x2} and fma{.relu}.{bf16, bf16x2} introduced in PTX ISA version 7.0",
    "require sm_80 or higher"; "Support for modifier .oob introduced in PTX ISA version 8.1",
    "fma{.oob}.{f16, f16x2, bf16, bf16x2} requires sm_90 or higher"."""
    if "oob" in form:
        return _target((8, 1), 90)
    if _bf16(form) or "relu" in form:
        return _target((7, 0), 80)
    return _target((4, 2), 53)


FMA = Family(
    opcode="fma",
    key="fma.h",
    section="9.7.4.4",
    # fma.rnd{.ftz}{.sat}.f16, fma.rnd{.ftz}.relu.f16, fma.rnd{.relu}.bf16 (and the x2 forms),
    # "fma.rnd.oob.{relu}.type d, a, b, c;"; ".rnd = { .rn }" with no default.
    slots=(RN_REQUIRED, FTZ, SAT, RELU, Slot("oob", ("oob",)), TYPE),
    operands=_operands("d", "a", "b", "c"),
    rules=(
        _only_rn("9.7.4.4"),
        _f16_only("ftz", "9.7.4.4"),
        _f16_only("sat", "9.7.4.4"),
        Rule(lambda f: "sat" in f and "relu" in f, "`.sat` and `.relu` are not allowed together (they are separate syntax lines)", "9.7.4.4"),
        # ptxas 13.0 says the same ("Modifier '.ftz' cannot be combined with modifier '.oob'").
        forbid("ftz", lambda f: "oob" in f, '`.ftz` is not allowed with `.oob`: the syntax line is "fma.rnd.oob.{relu}.type"', "9.7.4.4"),
        # ptxas 13.0 accepts fma.rn.oob.sat.f16; the manual's syntax line has no {.sat}, and the
        # manual is the authority (a known disagreement with ptxas).
        forbid("sat", lambda f: "oob" in f, '`.sat` is not allowed with `.oob`: the syntax line is "fma.rnd.oob.{relu}.type"', "9.7.4.4"),
    ),
    target=_fma_target,
    summary="Fused multiply-add on half-precision values.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.4.5 neg, §9.7.4.6 abs
# ---------------------------------------------------------------------------------------------


def _neg_abs(opcode: str, section: str, ptx: tuple[int, int], summary: str) -> Family:
    def target(form: Form) -> Target:
        # "Introduced in PTX ISA version 6.0 (neg) / 6.5 (abs)", "requires sm_53 or higher";
        # "neg.bf16 and neg.bf16x2 introduced in PTX ISA 7.0", "require sm_80 or higher".
        return _target((7, 0), 80) if _bf16(form) else _target(ptx, 53)

    return Family(
        opcode=opcode,
        key=f"{opcode}.h",
        section=section,
        # "neg{.ftz}.f16", "neg{.ftz}.f16x2", "neg.bf16", "neg.bf16x2" (abs alike)
        slots=(FTZ, TYPE),
        operands=_operands("d", "a"),
        rules=(_f16_only("ftz", section),),
        target=target,
        summary=summary,
    )


NEG = _neg_abs("neg", "9.7.4.5", (6, 0), "Negate a half-precision value.")
ABS = _neg_abs("abs", "9.7.4.6", (6, 5), "Absolute value of a half-precision value.")


# ---------------------------------------------------------------------------------------------
# §9.7.4.7 min, §9.7.4.8 max
# ---------------------------------------------------------------------------------------------


def _min_max_target(form: Form) -> Target:
    """§9.7.4.7-8: "Introduced in PTX ISA version 7.0", "requires sm_80 or higher";
    ".xorsign.abs introduced in PTX ISA version 7.2", "requires sm_86 or higher"."""
    if "xorsign" in form:
        return _target((7, 2), 86)
    return _target((7, 0), 80)


def _min_max(opcode: str, section: str, summary: str) -> Family:
    return Family(
        opcode=opcode,
        key=f"{opcode}.h",
        section=section,
        # "min{.ftz}{.NaN}{.xorsign.abs}.f16", "min{.NaN}{.xorsign.abs}.bf16" (and x2)
        slots=(FTZ, Slot("NaN", ("NaN",)), Slot("xorsign", ("xorsign",)), Slot("abs", ("abs",)), TYPE),
        operands=_operands("d", "a", "b"),
        rules=(
            Rule(
                lambda f: ("xorsign" in f) != ("abs" in f),
                '"the modifiers .abs and .xorsign must be specified together"',
                section,
            ),
            _f16_only("ftz", section),
        ),
        target=_min_max_target,
        summary=summary,
    )


MIN = _min_max("min", "9.7.4.7", "Minimum of two half-precision values.")
MAX = _min_max("max", "9.7.4.8", "Maximum of two half-precision values.")


# ---------------------------------------------------------------------------------------------
# §9.7.4.9 tanh
# ---------------------------------------------------------------------------------------------


def _tanh_target(form: Form) -> Target:
    """§9.7.4.9: "Introduced in PTX ISA version 7.0", "requires sm_75 or higher";
    "tanh.approx.{bf16/bf16x2} introduced in PTX ISA version 7.8", "requires sm_90 or higher"."""
    return _target((7, 8), 90) if _bf16(form) else Target((7, 0), 75)


TANH = Family(
    opcode="tanh",
    key="tanh.approx.half",
    section="9.7.4.9",
    # "tanh.approx.type d, a;" ".type = {.f16, .f16x2, .bf16, .bf16x2}"
    slots=(Slot("approx", ("approx",), required=True), TYPE),
    operands=_operands("d", "a"),
    target=_tanh_target,
    summary="Fast approximation of the hyperbolic tangent on half-precision values.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.4.10 ex2
# ---------------------------------------------------------------------------------------------


def _ex2_target(form: Form) -> Target:
    """§9.7.4.10: "Introduced in PTX ISA version 7.0", "requires sm_75 or higher";
    "ex2.approx.ftz.{bf16/bf16x2} introduced in PTX ISA version 7.8", "requires sm_90 or higher"."""
    return _target((7, 8), 90) if _bf16(form) else Target((7, 0), 75)


EX2 = Family(
    opcode="ex2",
    key="ex2.approx.half",
    section="9.7.4.10",
    # "ex2.approx.atype d, a;" "ex2.approx.ftz.btype d, a;" ".atype = { .f16, .f16x2}"
    # ".btype = { .bf16, .bf16x2}": .ftz belongs to the bf16 line only, and is required there.
    slots=(Slot("approx", ("approx",), required=True), FTZ, TYPE),
    operands=_operands("d", "a"),
    rules=(
        # ptxas 13.0: "Illegal modifier '.ftz' for instruction 'ex2'" on .f16.
        forbid(
            "ftz",
            lambda f: not _bf16(f),
            lambda f: f'`.ftz` is not allowed with `.{f["type"]}`: the syntax line is "ex2.approx.atype" for .f16/.f16x2',
            "9.7.4.10",
        ),
        # ptxas 13.0: ".ftz modifier required for instruction 'ex2.bf16'".
        Rule(
            lambda f: _bf16(f) and "ftz" not in f,
            lambda f: f'`.ftz` is required with `.{f["type"]}`: the syntax line is "ex2.approx.ftz.btype"',
            "9.7.4.10",
        ),
    ),
    target=_ex2_target,
    summary="Fast approximation of 2 raised to a power, on half-precision values.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.5 mixed precision: add, sub, fma with an .f32 result
# ---------------------------------------------------------------------------------------------

RND_F32 = Slot("rnd", ("rn", "rz", "rm", "rp"))
RND_F32_REQUIRED = Slot("rnd", ("rn", "rz", "rm", "rp"), required=True)
F32 = Slot("type", ("f32",), required=True)
ATYPE = Slot("atype", ("f16", "bf16"), required=True)


def _mixed_operands(*names: str):
    """``d`` and ``c`` are .f32; ``a`` (and ``b``) are .atype: .f16, or .b16 for .bf16 (the
    examples declare ".reg .b16 ba" and ".reg .f16 ha")."""

    def operands(form: Form) -> tuple[Operand, ...]:
        narrow = register_type(form["atype"])
        return tuple(Operand(n, "f32" if n in ("d", "c") else narrow, destination=(n == "d")) for n in names)

    return operands


#: The syntax line of §9.7.5.3 shows ``{.ftz}``, but the section says only "subnormal numbers are
#: supported by default" and gives .ftz no meaning, and ptxas 8.7 rejects it ("Illegal modifier
#: '.ftz' for instruction 'fma'"); the catalogue follows ptxas (the slot stays so that the reason
#: is given).
_NO_MIXED_FTZ = forbid(
    "ftz",
    lambda f: True,
    '`.ftz` is not allowed with the mixed-precision fma.f32.{f16,bf16}: the section gives it no meaning ("subnormal numbers are supported by default") and ptxas rejects it',
    "9.7.5.3",
)


def _mixed(opcode: str, section: str, rnd: Slot, extra: tuple[Slot, ...], names: tuple[str, ...], summary: str) -> Family:
    return Family(
        opcode=opcode,
        key=f"{opcode}.mixed",
        section=section,
        slots=(rnd, *extra, SAT, F32, ATYPE),
        operands=_mixed_operands(*names),
        rules=(_NO_MIXED_FTZ,) if extra else (),
        # "add.f32.{f16/bf16} introduced in PTX ISA version 8.6", "requires sm_100 or higher".
        target=_target((8, 6), 100),
        summary=summary,
    )


# "add{.rnd}{.sat}.f32.atype d, a, c;" ".rnd = { .rn, .rz, .rm, .rp }" (default .rn)
ADD_MIXED = _mixed("add", "9.7.5.1", RND_F32, (), ("d", "a", "c"), "Add a half-precision value to an .f32 value.")
# "sub{.rnd}{.sat}.f32.atype d, a, c;"
SUB_MIXED = _mixed("sub", "9.7.5.2", RND_F32, (), ("d", "a", "c"), "Subtract an .f32 value from a half-precision value.")
# "fma.rnd{.ftz}{.sat}.f32.abtype d, a, b, c;" (rounding has no default)
FMA_MIXED = _mixed("fma", "9.7.5.3", RND_F32_REQUIRED, (FTZ,), ("d", "a", "b", "c"), "Fused multiply-add of half-precision values into .f32.")


FAMILIES: list[Family] = [ADD, SUB, MUL, FMA, NEG, ABS, MIN, MAX, TANH, EX2, ADD_MIXED, SUB_MIXED, FMA_MIXED]
