"""Catalogue entries for §9.7.9, the data movement and conversion instructions (cvt, cvt.pack).

§9.7.9.21 gives cvt as a list of syntax lines; each line that takes its own operands is a
:class:`Family` here:

==========================  =====================================================================
key                         syntax (§9.7.9.21 unless noted)
==========================  =====================================================================
``cvt``                     ``cvt{.irnd|.frnd}{.ftz}{.sat}.dtype.atype d, a`` together with the
                            scalar lines ``cvt.frnd2{.relu}{.satfinite}.{f16,bf16}.f32``,
                            ``cvt.rna{.satfinite}.tf32.f32`` and
                            ``cvt.frnd2{.satfinite}{.relu}.tf32.f32``
``cvt.x2.f32``              ``cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``
``cvt.rs.x2.f32``           ``cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits``
``cvt.f8x2.f32``            ``cvt.rn.satfinite{.relu}.{f8x2type,f6x2type,f4x2type}.f32 d, a, b``
``cvt.f8x2.f16x2``          ``cvt.rn.satfinite{.relu}.f8x2type.f16x2 d, a``
``cvt.f16x2.f8x2``          ``cvt.rn{.relu}.f16x2.{f8x2type,f6x2type,f4x2type} d, a``
``cvt.rs.x4``               ``cvt.rs{.relu}.satfinite.{f8x4type,f6x4type,f4x4type}.f32
                            d, {a, b, e, f}, rbits``
``cvt.ue8m0x2``             ``cvt.frnd3{.satfinite}.ue8m0x2.{f32,bf16x2}`` (``d, a, b`` / ``d, a``)
``cvt.bf16x2.ue8m0x2``      ``cvt.rn.bf16x2.ue8m0x2 d, a``
``cvt.pack``                ``cvt.pack.sat.{u16,s16}.s32 d, a, b`` (§9.7.9.22)
``cvt.pack.c``              ``cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c`` (§9.7.9.22)
==========================  =====================================================================

The scalar lines share one family because they are one instruction with one operand list; the
rules below carry the restrictions that the separate syntax lines express (which rounding, .relu
and .satfinite go with which types). Where the manual and ``ptxas`` (CUDA 13.0) differ, the rule
follows the manual and its docstring says so.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, Targets, on
from ptxspec.spec.types import FORMATS, INTEGER_TYPES

SECTION = "9.7.9.21"
PACK_SECTION = "9.7.9.22"

INTEGER = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")
FLOATS = ("bf16", "f16", "f32", "f64")
IRND = ("rni", "rzi", "rmi", "rpi")
FRND = ("rn", "rz", "rm", "rp")

F8X2 = ("e4m3x2", "e5m2x2")
F6X2 = ("e2m3x2", "e3m2x2")
F4X2 = ("e2m1x2",)
F8X4 = ("e4m3x4", "e5m2x4")
F6X4 = ("e2m3x4", "e3m2x4")
F4X4 = ("e2m1x4",)

FTZ = Slot("ftz", ("ftz",))
SAT = Slot("sat", ("sat",))
RELU = Slot("relu", ("relu",))
SATFINITE = Slot("satfinite", ("satfinite",))


def is_integer(type_name: str) -> bool:
    return type_name in INTEGER


def is_float(type_name: str) -> bool:
    return type_name in FLOATS or type_name == "tf32"


def exact_widening(dtype: str, atype: str) -> bool:
    """Whether every value of float type ``atype`` is a value of float type ``dtype``: at least as
    many exponent and fraction bits (f16 -> f32, bf16 -> f64, ...). f16 <-> bf16 is not, either way."""
    d, a = FORMATS[dtype], FORMATS[atype]
    return d.exponent_bits >= a.exponent_bits and d.mantissa_bits >= a.mantissa_bits


def value_range(type_name: str) -> tuple[int, int]:
    t = INTEGER_TYPES[type_name]
    return t.min, t.max


# ---------------------------------------------------------------------------------------------
# The scalar family: cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}{.relu}.dtype.atype d, a
# ---------------------------------------------------------------------------------------------


def _rounding_problem(form: Form) -> str | None:
    """Which rounding modifier the conversion needs, from the manual's rules, or None if it is fine.

    §9.7.9.21: "The rounding modifier is mandatory in all of the following cases: float-to-float
    conversions, when destination type is smaller than source type; all float-to-int conversions;
    all int-to-float conversions; all conversions involving .f16x2, ... .tf32 ... instruction types."
    Integer notes: "Integer rounding is required for float-to-integer conversions, and for same-size
    float-to-float conversions where the value is rounded to an integer. Integer rounding is
    illegal in all other cases." Floating-point notes: "Floating-point rounding is required for
    float-to-float conversions that result in loss of precision, and for integer-to-float
    conversions. Floating-point rounding is illegal in all other cases."

    The manual's own example ``cvt.f64.bf16.rp f, b;`` puts a floating-point rounding modifier on an
    exact widening from .bf16, and ptxas accepts one there: for a .bf16 source it is optional (and
    has no effect). .rna exists only for .tf32 (``cvt.rna{.satfinite}.tf32.f32``).
    """
    d, a, rnd = form["dtype"], form["atype"], form.get("rnd")
    if d == "tf32":
        if a != "f32":
            return "the .tf32 destination converts only from .f32 (cvt.rna{.satfinite}.tf32.f32, cvt.frnd2{.satfinite}{.relu}.tf32.f32)"
        if rnd not in ("rna", "rn", "rz"):
            return "conversion to .tf32 needs .rna, .rn or .rz"
        return None
    if rnd == "rna":
        return "rounding modifier .rna is only for the .tf32 destination"
    if is_integer(d) and is_integer(a):
        return None if rnd is None else "integer-to-integer conversions take no rounding modifier"
    if is_integer(d):
        return None if rnd in IRND else "float-to-integer conversions need an integer rounding modifier (.rni, .rzi, .rmi, .rpi)"
    if is_integer(a):
        return None if rnd in FRND else "integer-to-float conversions need a floating-point rounding modifier (.rn, .rz, .rm, .rp)"
    if d == a:
        if rnd in FRND:
            return f"a .{d} to .{d} conversion loses no precision: floating-point rounding is illegal (use .rni, .rzi, .rmi or .rpi to round to an integer)"
        return None
    if rnd in IRND:
        return "integer rounding converts only between the same float type (cvt.rni.f32.f32)"
    if exact_widening(d, a):
        if rnd is not None and a != "bf16":
            return f".{a} to .{d} is exact: floating-point rounding is illegal"
        return None
    if rnd is None:
        return f".{a} to .{d} loses precision: a rounding modifier (.rn, .rz, .rm, .rp) is required"
    return None


def _ftz_problem(form: Form) -> str | None:
    """§9.7.9.21: "The optional .ftz modifier may be specified only when either .dtype or .atype is
    .f32 and applies only to single precision (.f32) inputs and results." The .relu, .satfinite and
    .tf32 syntax lines have no .ftz."""
    if form["dtype"] != "f32" and form["atype"] != "f32":
        return ".ftz is allowed only when .dtype or .atype is .f32"
    if form["dtype"] == "tf32" or "relu" in form or "satfinite" in form:
        return ".ftz is not part of the .relu/.satfinite/.tf32 forms (cvt.frnd2{.relu}{.satfinite}.f16.f32, cvt.rna{.satfinite}.tf32.f32)"
    return None


def _sat_problem(form: Form) -> str | None:
    """.sat: "For integer destination types, .sat limits the result to MININT..MAXINT for the size
    of the operation ... The saturation modifier is allowed only in cases where the destination
    type's value range is not a superset of the source type's value range." "For float-to-integer
    conversions, the result is clamped to the destination range by default; i.e, .sat is
    redundant." "For floating-point destination types, .sat limits the result to the range
    [0.0, 1.0] ... Applies to .f16, .f32, and .f64 types." (§9.7.9.21)

    .bf16 is not among the types .sat applies to, and the .bf16 conversions added in PTX ISA 7.8
    are given without it; ptxas rejects .sat whenever either type is .bf16, and so does this rule.
    """
    d, a = form["dtype"], form["atype"]
    if "bf16" in (d, a) or d == "tf32":
        return ".sat applies to .f16, .f32, .f64 and integer types, not .bf16 or .tf32"
    if "relu" in form or "satfinite" in form:
        return ".sat cannot be combined with .relu or .satfinite"
    if is_integer(d) and is_integer(a):
        dmin, dmax = value_range(d)
        amin, amax = value_range(a)
        if dmin <= amin and amax <= dmax:
            return f".sat is illegal: the range of .{d} contains every .{a} value, so saturation cannot happen"
    return None


def _relu_satfinite_problem(form: Form) -> str | None:
    """.relu and .satfinite on a scalar destination appear only in
    ``cvt.frnd2{.relu}{.satfinite}.{f16,bf16}.f32``, ``cvt.rna{.satfinite}.tf32.f32`` and
    ``cvt.frnd2{.satfinite}{.relu}.tf32.f32`` (.frnd2 = .rn, .rz)."""
    d, a, rnd = form["dtype"], form["atype"], form.get("rnd")
    if d not in ("f16", "bf16", "tf32") or a != "f32":
        return ".relu and .satfinite convert only .f32 to .f16, .bf16 or .tf32"
    if "relu" in form and rnd == "rna":
        return ".relu is not allowed with .rna (cvt.rna{.satfinite}.tf32.f32)"
    if d != "tf32" and rnd not in ("rn", "rz"):
        return f".relu and .satfinite with .{d} need .rn or .rz"
    return None


def _check(problem: Callable[[Form], str | None], applies: Callable[[Form], bool] = lambda f: True) -> Rule:
    """A rule from a function that names the problem with a form (or returns None)."""
    return Rule(lambda f: applies(f) and problem(f) is not None, lambda f: problem(f) or "", SECTION)


def _scalar_target(form: Form) -> Target:
    """PTX ISA notes and target ISA notes of §9.7.9.21, the latest requirement that applies.

    * conversions to or from .f64 need sm_13;
    * ".relu modifier and {.f16x2, .bf16, .bf16x2, .tf32} destination formats introduced in PTX ISA
      version 7.0" and "require sm_80 or higher";
    * "cvt.bf16.{u8/s8/u16/s16/u32/s32/u64/s64/f16/f64/bf16}, cvt.{u8/.../f16/f64}.bf16, and
      cvt.tf32.f32.{relu}.{rn/rz} introduced in PTX ISA 7.8" and "require sm_90 or higher";
    * "cvt.satfinite.{f16, bf16, f16x2, bf16x2, tf32}.f32 introduced in PTX ISA version 8.1";
    * "cvt.{rn/rz}.satfinite.tf32.f32 introduced in PTX ISA version 8.6" and "requires sm_100";
    * cvt.f32.bf16 is in none of these lists; ptxas asks for PTX ISA 7.1 and sm_80 (with .ftz:
      PTX ISA 7.8 and sm_90, like the other .bf16 conversions of PTX ISA 7.8), used here.
    """
    d, a, rnd = form["dtype"], form["atype"], form.get("rnd")
    ptx, sm = (1, 0), 10
    if "f64" in (d, a):
        sm = 13

    def need(p: tuple[int, int], s: int) -> None:
        nonlocal ptx, sm
        ptx, sm = max(ptx, p), max(sm, s)

    if "relu" in form or d in ("bf16", "tf32"):
        need((7, 0), 80)
    if d == "f32" and a == "bf16":
        need((7, 1), 80)
        if "ftz" in form:
            need((7, 8), 90)
    if "bf16" in (d, a) and not (d == "bf16" and a == "f32") and not (d == "f32" and a == "bf16"):
        need((7, 8), 90)
    if d == "tf32" and rnd in ("rn", "rz"):
        need((7, 8), 90)
    if "satfinite" in form:
        need((8, 1), 80)
        if d == "tf32" and rnd in ("rn", "rz"):
            need((8, 6), 100)
    return Target(ptx, sm)


def _scalar_operands(form: Form) -> tuple[Operand, ...]:
    """d has type .b16 for .bf16 and .b32 for .tf32 (§9.7.9.21); otherwise d and a have the
    instruction's types."""
    d = {"bf16": "b16", "tf32": "b32"}.get(form["dtype"], form["dtype"])
    return (Operand("d", d, destination=True), Operand("a", form["atype"]))


SCALAR = Family(
    opcode="cvt",
    key="cvt",
    section=SECTION,
    slots=(
        Slot("rnd", (*IRND, "rn", "rna", "rz", "rm", "rp")),
        FTZ,
        SAT,
        RELU,
        SATFINITE,
        Slot("dtype", (*INTEGER, *FLOATS, "tf32"), required=True),
        Slot("atype", (*INTEGER, *FLOATS), required=True),
    ),
    operands=_scalar_operands,
    rules=(
        _check(_rounding_problem),
        _check(_ftz_problem, lambda f: "ftz" in f),
        _check(_sat_problem, lambda f: "sat" in f),
        _check(_relu_satfinite_problem, lambda f: "relu" in f or "satfinite" in f),
    ),
    target=_scalar_target,
    summary="Convert a value from one type to another.",
)


# ---------------------------------------------------------------------------------------------
# Packed destinations from .f32 pairs: .f16x2 and .bf16x2
# ---------------------------------------------------------------------------------------------


def _x2_target(form: Form) -> Target:
    """{.f16x2, .bf16x2} destinations: PTX ISA 7.0, sm_80; .satfinite: PTX ISA 8.1."""
    return Target((8, 1), 80) if "satfinite" in form else Target((7, 0), 80)


def _rs_target(form: Form) -> Target:
    """ "The .rs rounding mode [was] introduced in PTX ISA version 8.7" and "requires sm_100a"."""
    return Target((8, 7), 100, "a")


HALF_PAIR = Family(
    opcode="cvt",
    key="cvt.x2.f32",
    section=SECTION,
    slots=(
        Slot("rnd", ("rn", "rz"), required=True),
        RELU,
        SATFINITE,
        Slot("dtype", ("f16x2", "bf16x2"), required=True),
        Slot("atype", ("f32",), required=True),
    ),
    operands=lambda f: (Operand("d", "b32", destination=True), Operand("a", "f32"), Operand("b", "f32")),
    target=_x2_target,
    summary="Convert two .f32 values to .f16 or .bf16 and pack them: a in the upper half, b in the lower.",
)

HALF_PAIR_RS = Family(
    opcode="cvt",
    key="cvt.rs.x2.f32",
    section=SECTION,
    slots=(Slot("rnd", ("rs",), required=True), RELU, SATFINITE, Slot("dtype", ("f16x2", "bf16x2"), required=True), Slot("atype", ("f32",), required=True)),
    operands=lambda f: (Operand("d", "b32", destination=True), Operand("a", "f32"), Operand("b", "f32"), Operand("rbits", "b32")),
    target=_rs_target,
    summary="Convert two .f32 values to packed .f16x2 or .bf16x2 with stochastic rounding by rbits.",
)


# ---------------------------------------------------------------------------------------------
# The low-precision packed formats
# ---------------------------------------------------------------------------------------------

#: Register type of each packed low-precision operand (§9.7.9.21: ".e4m3x2/.e5m2x2 ... d has .b16
#: type", ".e2m1x2 ... .b8", ".e2m3x2/.e3m2x2 ... .b16", ".e2m1x4 ... .b16", ".e5m2x4/.e4m3x4/
#: .e3m2x4/.e2m3x4 ... .b32", ".ue8m0x2 ... .b16").
PACKED_REGISTER = {
    **{t: "b16" for t in (*F8X2, *F6X2, "e2m1x4", "ue8m0x2")},
    "e2m1x2": "b8",
    **{t: "b32" for t in (*F8X4, *F6X4)},
}


def _blackwell_target(ptx: tuple[int, int]) -> Targets | Target:
    """The fp6/fp4/.ue8m0x2 forms: "... is supported on the following architectures: sm_100a,
    sm_101a, sm_120a" (each line of §9.7.9.21's Target ISA notes), introduced in PTX ISA 8.6 --
    on sm_120a, whose target string PTX ISA 8.7 introduced, from 8.7."""
    return on(ptx, "sm_100a", "sm_101a", "sm_120a")


def _f8_target(form: Form) -> Targets | Target:
    """.e4m3x2/.e5m2x2, two ways (§9.7.9.21): "cvt with .e4m3x2/.e5m2x2 for sm_90 or higher
    introduced in PTX ISA version 7.8" and "cvt with .e4m3x2/.e5m2x2 for sm_89 introduced in PTX
    ISA version 8.1"; "cvt.satfinite.{e4m3x2, e5m2x2}.{f32, f16x2} requires sm_89 or higher".
    So PTX ISA 8.1 on sm_89 or later, or PTX ISA 7.8 on sm_90 or later. The fp6/fp4 types: see
    :func:`_blackwell_target`."""
    types = (form.get("dtype"), form.get("atype"))
    if any(t in F8X2 for t in types):
        return Target((8, 1), 89) | Target((7, 8), 90)
    return _blackwell_target((8, 6))


NARROW_PAIR = Family(
    opcode="cvt",
    key="cvt.f8x2.f32",
    section=SECTION,
    slots=(
        Slot("rnd", ("rn",), required=True),
        # ".satfinite ... For such conversions, .satfinite modifier is mandatory."
        # Slot order is the manual's (cvt.rn.satfinite{.relu}); the parser takes any order.
        Slot("satfinite", ("satfinite",), required=True),
        RELU,
        Slot("dtype", (*F8X2, *F6X2, *F4X2), required=True),
        Slot("atype", ("f32",), required=True),
    ),
    operands=lambda f: (Operand("d", PACKED_REGISTER[f["dtype"]], destination=True), Operand("a", "f32"), Operand("b", "f32")),
    target=_f8_target,
    summary="Convert two .f32 values to a packed fp8/fp6/fp4 pair: a in the upper element, b in the lower.",
)

NARROW_FROM_HALF = Family(
    opcode="cvt",
    key="cvt.f8x2.f16x2",
    section=SECTION,
    slots=(
        Slot("rnd", ("rn",), required=True),
        Slot("satfinite", ("satfinite",), required=True),
        RELU,
        Slot("dtype", F8X2, required=True),
        Slot("atype", ("f16x2",), required=True),
    ),
    operands=lambda f: (Operand("d", "b16", destination=True), Operand("a", "b32")),
    target=_f8_target,
    summary="Convert the two .f16 halves of a to a packed .e4m3x2/.e5m2x2.",
)

HALF_FROM_NARROW = Family(
    opcode="cvt",
    key="cvt.f16x2.f8x2",
    section=SECTION,
    slots=(
        Slot("rnd", ("rn",), required=True),
        RELU,
        Slot("dtype", ("f16x2",), required=True),
        Slot("atype", (*F8X2, *F6X2, *F4X2), required=True),
    ),
    operands=lambda f: (Operand("d", "b32", destination=True), Operand("a", PACKED_REGISTER[f["atype"]])),
    target=_f8_target,
    summary="Unpack an fp8/fp6/fp4 pair and convert both elements to a packed .f16x2.",
)

NARROW_QUAD_RS = Family(
    opcode="cvt",
    key="cvt.rs.x4",
    section=SECTION,
    slots=(
        Slot("rnd", ("rs",), required=True),
        RELU,
        Slot("satfinite", ("satfinite",), required=True),
        Slot("dtype", (*F8X4, *F6X4, *F4X4), required=True),
        Slot("atype", ("f32",), required=True),
    ),
    operands=lambda f: (
        Operand("d", PACKED_REGISTER[f["dtype"]], destination=True),
        Operand("a", "f32"),
        Operand("b", "f32"),
        Operand("e", "f32"),
        Operand("f", "f32"),
        Operand("rbits", "b32"),
    ),
    target=_rs_target,
    summary="Convert four .f32 values {a, b, e, f} to a packed fp8/fp6/fp4 quad with stochastic rounding.",
    vector=("a", "b", "e", "f"),
)

UE8M0_PAIR = Family(
    opcode="cvt",
    key="cvt.ue8m0x2",
    section=SECTION,
    slots=(
        Slot("rnd", ("rz", "rp"), required=True),
        SATFINITE,
        Slot("dtype", ("ue8m0x2",), required=True),
        Slot("atype", ("f32", "bf16x2"), required=True),
    ),
    operands=lambda f: (
        (Operand("d", "b16", destination=True), Operand("a", "f32"), Operand("b", "f32"))
        if f["atype"] == "f32"
        else (Operand("d", "b16", destination=True), Operand("a", "b32"))
    ),
    target=_blackwell_target((8, 6)),
    summary="Convert two .f32 values, or the two halves of a .bf16x2, to a packed .ue8m0x2 scale pair.",
)

HALF_FROM_UE8M0 = Family(
    opcode="cvt",
    key="cvt.bf16x2.ue8m0x2",
    section=SECTION,
    slots=(Slot("rnd", ("rn",), required=True), Slot("dtype", ("bf16x2",), required=True), Slot("atype", ("ue8m0x2",), required=True)),
    operands=lambda f: (Operand("d", "b32", destination=True), Operand("a", "b16")),
    target=_blackwell_target((8, 6)),
    summary="Unpack a .ue8m0x2 pair and convert both scales to a packed .bf16x2.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.22 cvt.pack
# ---------------------------------------------------------------------------------------------


def _pack_target(form: Form) -> Target:
    """ "Introduced in PTX ISA version 6.5." "Requires sm_72 or higher. Sub-byte types (.u4/.s4 and
    .u2/.s2) requires sm_75 or higher." (§9.7.9.22)"""
    return Target((6, 5), 75 if form["convertType"] in ("u2", "s2", "u4", "s4") else 72)


PACK = Family(
    opcode="cvt",
    key="cvt.pack",
    section=PACK_SECTION,
    slots=(
        Slot("pack", ("pack",), required=True),
        Slot("sat", ("sat",), required=True),
        Slot("convertType", ("u16", "s16"), required=True),
        Slot("abType", ("s32",), required=True),
    ),
    operands=lambda f: (Operand("d", "u32", destination=True), Operand("a", "s32"), Operand("b", "s32")),
    target=_pack_target,
    summary="Convert two .s32 values to .u16/.s16 with saturation and pack them: a above b.",
)

PACK_C = Family(
    opcode="cvt",
    key="cvt.pack.c",
    section=PACK_SECTION,
    slots=(
        Slot("pack", ("pack",), required=True),
        Slot("sat", ("sat",), required=True),
        Slot("convertType", ("u2", "s2", "u4", "s4", "u8", "s8"), required=True),
        Slot("abType", ("s32",), required=True),
        Slot("cType", ("b32",), required=True),
    ),
    operands=lambda f: (Operand("d", "u32", destination=True), Operand("a", "s32"), Operand("b", "s32"), Operand("c", "b32")),
    target=_pack_target,
    summary="Convert two .s32 values to a narrow integer type with saturation, pack them, and fill the rest of d from c.",
)


FAMILIES: list[Family] = [
    SCALAR,
    HALF_PAIR,
    HALF_PAIR_RS,
    NARROW_PAIR,
    NARROW_FROM_HALF,
    HALF_FROM_NARROW,
    NARROW_QUAD_RS,
    UE8M0_PAIR,
    HALF_FROM_UE8M0,
    PACK,
    PACK_C,
]


# ---------------------------------------------------------------------------------------------
# §9.7.9.3 mov (scalar) and §9.7.9.4 mov (vector pack / unpack)
# ---------------------------------------------------------------------------------------------
#
# ``mov.b64 d, a`` and ``mov.b64 d, {a.x, a.y}`` have the same qualifiers: only the operand list
# tells them apart. So the pack/unpack lines are families of their own (one per direction and
# element count), each with its ``operand_syntax``; :func:`parse` reaches them when the text carries
# an operand template (``parse("mov.b64 d, {a, b}")``, names ignored, braces marking the vector),
# and ``parse("mov.b64")`` is the scalar move. :func:`vector_mov` picks one by direction and count.

from ptxspec.spec.catalogue import same_type_operands  # noqa: E402 - kept with the families that use it

MOV_SECTION = "9.7.9.3"
MOV_VECTOR_SECTION = "9.7.9.4"
PRMT_SECTION = "9.7.9.7"

#: §9.7.9.3: ".type = { .pred, .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }".
MOV_TYPES = ("pred", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64")
#: §9.7.9.4: ".type = { .b16, .b32, .b64, .b128 }".
MOV_VECTOR_TYPES = ("b16", "b32", "b64", "b128")
#: The element names of a vector operand, in the manual's order (``a.x | (a.y << 8) | ...``).
LANES = ("x", "y", "z", "w")


def _mov_target(form: Form) -> Target:
    """ "Introduced in PTX ISA version 1.0." "mov.f64 requires sm_13 or higher." (§9.7.9.3)"""
    return Target((1, 0), 13 if form["type"] == "f64" else 10)


MOV = Family(
    opcode="mov",
    key="mov",
    section=MOV_SECTION,
    slots=(Slot("type", MOV_TYPES, required=True),),
    operands=lambda f: (Operand("d", f["type"], destination=True), Operand("a", f["type"])),
    target=_mov_target,
    summary="Set a register to the value of a register (d = a).",
    operand_syntax="d, a",
)


def _mov_vector_target(form: Form) -> Target:
    """ "Support for .b128 type introduced in PTX ISA version 8.3." "Support for .b128 type requires
    sm_70 or higher." (§9.7.9.4)"""
    return Target((8, 3), 70) if form["type"] == "b128" else Target((1, 0), 10)


def element_type(type_name: str, count: int) -> str:
    """The ``.bN`` type of one of ``count`` elements of a ``type_name`` register: "The overall size
    of the vector and the size of the scalar must match the size of the instruction type"
    (§9.7.9.4)."""
    return f"b{INTEGER_TYPES[type_name].bits // count}"


#: §9.7.9.4's semantics lists four-element vectors only for .b32 (8-bit), .b64 (16-bit) and
#: .b128 (32-bit): a .b16 holds two 8-bit elements, not four 4-bit ones.
_NO_FOUR_LANES = Rule(
    lambda f: f["type"] == "b16",
    "a .b16 register packs or unpacks two 8-bit elements, not four (§9.7.9.4 lists {x, y, z, w} only for .b32, .b64, .b128)",
    MOV_VECTOR_SECTION,
)


def _vector_family(direction: str, count: int) -> Family:
    names = tuple(f"{'a' if direction == 'pack' else 'd'}.{lane}" for lane in LANES[:count])

    def operands(form: Form) -> tuple[Operand, ...]:
        t, e = form["type"], element_type(form["type"], count)
        if direction == "pack":
            return (Operand("d", t, destination=True), *(Operand(n, e) for n in names))
        return (*(Operand(n, e, destination=True) for n in names), Operand("a", t))

    shape = "{" + ", ".join(names) + "}"
    syntax = f"d, {shape}" if direction == "pack" else f"{shape}, a"
    return Family(
        opcode="mov",
        key=f"mov.{direction}.x{count}",
        section=MOV_VECTOR_SECTION,
        slots=(Slot("type", MOV_VECTOR_TYPES, required=True),),
        operands=operands,
        rules=(_NO_FOUR_LANES,) if count == 4 else (),
        target=_mov_vector_target,
        operand_syntax=syntax,
        summary=(
            f"mov.type {syntax}: "
            + ("pack the elements into a scalar, x lowest." if direction == "pack" else "unpack a scalar into elements, x from the lowest bits.")
        ),
    )


MOV_PACK_X2 = _vector_family("pack", 2)
MOV_PACK_X4 = _vector_family("pack", 4)
MOV_UNPACK_X2 = _vector_family("unpack", 2)
MOV_UNPACK_X4 = _vector_family("unpack", 4)
MOV_VECTOR = {(f.key.split(".")[1], int(f.key[-1])): f for f in (MOV_PACK_X2, MOV_PACK_X4, MOV_UNPACK_X2, MOV_UNPACK_X4)}


def vector_mov(text: str, direction: str, count: int) -> Form:
    """The form of ``text`` (such as ``"mov.b64"``) as the §9.7.9.4 vector move ``direction``
    ("pack": ``mov.type d, {a.x, ...}``; "unpack": ``mov.type {d.x, ...}, a``) of ``count``
    elements, with that family's legality rules; raises IllegalForm like :func:`parse`."""
    from ptxspec.spec.catalogue import Catalogue
    from ptxspec.spec.errors import IllegalForm

    family = MOV_VECTOR.get((direction, count))
    if family is None:
        raise IllegalForm(f"{text}: a vector mov is 'pack' or 'unpack' of 2 or 4 elements, not {direction!r} of {count}", section=MOV_VECTOR_SECTION)
    return Catalogue([family]).parse(text)


# ---------------------------------------------------------------------------------------------
# §9.7.9.7 prmt
# ---------------------------------------------------------------------------------------------

#: §9.7.9.7: ".mode = { .f4e, .b4e, .rc8, .ecl, .ecr, .rc16 }".
PRMT_MODES = ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")

PRMT = Family(
    opcode="prmt",
    key="prmt",
    section=PRMT_SECTION,
    slots=(Slot("type", ("b32",), required=True), Slot("mode", PRMT_MODES)),
    operands=same_type_operands("d", "a", "b", "c"),
    target=Target((2, 0), 20),
    summary="Pick four bytes of the pair {b, a} under the control of c.",
)

FAMILIES += [MOV, MOV_PACK_X2, MOV_PACK_X4, MOV_UNPACK_X2, MOV_UNPACK_X4, PRMT]
