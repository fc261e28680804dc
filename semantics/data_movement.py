"""§9.7.9 Data movement and conversion: cvt (§9.7.9.21) and cvt.pack (§9.7.9.22).

Every floating-point element goes through :func:`convert`, the ``convert()`` of the manual's
pseudo-code: decode the source exactly, apply the NaN rule, and round once with the numerics core's
:func:`~ptxspec.semantics.numerics.round_value` (rounding, .ftz, .sat, .satfinite, .relu and the
random bits of .rs). The packed forms only say which element lands where; they follow the manual's
pseudo-code, in which operand ``a`` always lands in the most significant position::

    d[31:16] = convert(a); d[15:0] = convert(b);           // .f16x2, .bf16x2
    d[15:8]  = convert(a); d[7:0]  = convert(b);           // .e4m3x2, .e5m2x2, .ue8m0x2
    d[7:4]   = convert(a); d[3:0]  = convert(b);           // .e2m1x2
    d[13:8]  = convert(a); d[5:0]  = convert(b);           // .e2m3x2, .e3m2x2 (d[15:14] = d[7:6] = 0)
    d[31:24], d[23:16], d[15:8], d[7:0] = convert(a, b, e, f)   // .e4m3x4 ... (.e2m1x4: 4-bit lanes)

NaN results. The manual fixes some: ".sat ... NaN results are flushed to positive zero"; ".relu
... NaN results are converted to canonical NaN"; ".satfinite ... if the input value is NaN, then
the result is NaN in the specified destination format", and for .e2m1x2, .e2m3x2, .e3m2x2 (which
have no NaN) "NaN results are converted to positive MAX_NORM"; "In float-to-integer conversions,
NaN inputs are converted to 0". Everywhere else it leaves the NaN open -- it says so outright
only for one form ("For cvt.f32.bf16, NaN input yields unspecified NaN"), and it gives cvt no
payload rule (§9.7.3's "double-precision instructions support NaN payloads" is about the
floating-point instructions; IEEE 754-2019 §6.2.3 only recommends payload preservation). So the
spec-level result of such a conversion is any NaN of the destination format, and a profile pins
the one a chip writes (``profile.cvt_nan``; :mod:`ptxspec.profiles.sm_90.cvt` holds what an H100
was measured to write), with the places where the chip departs from the manual
(``profile.cvt_integer_nan`` for a float-to-integer NaN, ``profile.cvt_ftz_flushes_input`` for
.ftz on cvt.f16.f32; sm_90's cvt.rna.tf32.f32 NaN comes out as infinity).
"""

from __future__ import annotations

from collections.abc import Sequence

from ptxspec.spec.catalogue import Form
from ptxspec.spec.data_movement import is_integer
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, NanEncoding
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    round_to_integer,
    canonical_nan,
    decode,
    round_value,
)
from ptxspec.profiles import Profile
from ptxspec.semantics.results import Result, pack_lanes, split_lanes

F64 = FORMATS["f64"]
F32 = FORMATS["f32"]
TF32 = FORMATS["tf32"]
F16 = FORMATS["f16"]
BF16 = FORMATS["bf16"]
UE8M0 = FORMATS["ue8m0"]

#: Table 17 (§6.5.2): the integer rounding modifiers, as the direction of rounding to an integer.
INTEGER_ROUNDING = {"rni": Rounding.RN, "rzi": Rounding.RZ, "rmi": Rounding.RM, "rpi": Rounding.RP}


# ---------------------------------------------------------------------------------------------
# NaN results the manual leaves open
# ---------------------------------------------------------------------------------------------


def _single_nan(fmt: FloatFormat) -> bool:
    """Whether ``fmt`` has exactly one NaN encoding (ue8m0: 0xff; ue4m3: 0x7f)."""
    return fmt.nan is NanEncoding.ALL_ONES and not fmt.signed


def conversion_nan(form: Form, src: FloatFormat, dst: FloatFormat, nan: NaN, bits: int, profile: Profile, *, sat: bool = False, relu: bool = False) -> Result:
    """The result of converting the NaN ``nan`` (encoded as ``bits`` in ``src``) to ``dst``.

    Fixed by §9.7.9.21: .sat gives +0.0, a destination without NaN gives +MAX_NORM, .relu gives
    the canonical NaN (the core's :func:`round_value` applies those three); a destination with a
    single NaN encoding (ue8m0) gives that. Otherwise the NaN is open: the profile's measurement,
    else any NaN of ``dst``.
    """
    if sat or relu or dst.nan is NanEncoding.NONE:
        return round_value(nan, dst, sat=sat, relu=relu)
    if _single_nan(dst):
        return canonical_nan(dst)
    if profile.cvt_nan is not None:
        return profile.cvt_nan(form, src, dst, nan, bits)
    return profile.unspecified_nan(dst)


# ---------------------------------------------------------------------------------------------
# convert(): one floating-point element
# ---------------------------------------------------------------------------------------------


def flushes_input(form: Form, profile: Profile) -> bool:
    """Whether the form's .ftz flushes its subnormal .f32 inputs: always by the manual; a measured
    profile may record otherwise (``profile.cvt_ftz_flushes_input``)."""
    return profile.cvt_ftz_flushes_input is None or profile.cvt_ftz_flushes_input(form)


def _unsigned(value: Exact | Infinity) -> Exact | Infinity:
    """.ue8m0 has no sign bit: "... positive MAX_NORM in .ue8m0x2 for which destination sign is
    not supported" -- the magnitude of the input is what gets converted (the manual compares
    "the absolute value of input (ignoring sign)")."""
    return Infinity(0) if isinstance(value, Infinity) else value.magnitude()


def convert(
    bits: int,
    src: FloatFormat,
    dst: FloatFormat,
    mode: Rounding,
    *,
    form: Form,
    profile: Profile,
    ftz: bool = False,
    sat: bool = False,
    satfinite: bool = False,
    relu: bool = False,
    random: tuple[int, int] | None = None,
) -> Result:
    """``convert(a)`` of §9.7.9.21 for one floating-point element ``bits`` of format ``src``.

    ``.ftz`` "applies only to single precision (.f32) inputs and results": a subnormal .f32
    input is read as a zero of its sign, and a .f32 result that is subnormal is flushed.
    """
    value = decode(src, bits, ftz=ftz and src is F32 and flushes_input(form, profile))
    if isinstance(value, NaN):
        return conversion_nan(form, src, dst, value, bits, profile, sat=sat, relu=relu)
    if not dst.signed:
        value = _unsigned(value)
    return round_value(value, dst, mode, ftz=ftz and dst is F32, sat=sat, satfinite=satfinite, relu=relu, random=random)


# ---------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------


def integer_value(type_name: str, bits: int) -> int:
    """The integer that ``bits`` holds as a ``type_name`` (two's complement for .sN)."""
    t = INTEGER_TYPES[type_name]
    bits &= (1 << t.bits) - 1
    return bits - (1 << t.bits) if t.signed and bits >> (t.bits - 1) else bits


def integer_bits(type_name: str, value: int) -> int:
    """The low bits of ``value`` that a ``type_name`` holds ("chop" of Table 15, §6.5.1)."""
    return value & ((1 << INTEGER_TYPES[type_name].bits) - 1)


def clamp(type_name: str, value: int) -> int:
    """``value`` limited to MININT..MAXINT of ``type_name``."""
    t = INTEGER_TYPES[type_name]
    return max(t.min, min(t.max, value))


def integer_to_integer(form: Form, a: int) -> int:
    """Table 15 (§6.5.1): the source is sign- or zero-extended by its own type, then chopped to the
    destination ("sext", "zext", "chop"). ".sat limits the result to MININT..MAXINT for the size of
    the operation" (§9.7.9.21)."""
    value = integer_value(form["atype"], a)
    if "sat" in form:
        value = clamp(form["dtype"], value)
    return integer_bits(form["dtype"], value)


def float_to_integer(form: Form, a: int, profile: Profile) -> int:
    """Float to integer, rounded by .irnd. "In float-to-integer conversions, NaN inputs are
    converted to 0"; "For float-to-integer conversions, the result is clamped to the destination
    range by default; i.e, .sat is redundant" (§9.7.9.21) -- infinities clamp to MININT/MAXINT."""
    src = FORMATS[form["atype"]]
    value = decode(src, a, ftz="ftz" in form and src is F32 and flushes_input(form, profile))
    dtype = form["dtype"]
    if isinstance(value, NaN):
        return 0 if profile.cvt_integer_nan is None else integer_bits(dtype, profile.cvt_integer_nan(form))
    if isinstance(value, Infinity):
        t = INTEGER_TYPES[dtype]
        return integer_bits(dtype, t.min if value.sign else t.max)
    return integer_bits(dtype, clamp(dtype, round_to_integer(value, INTEGER_ROUNDING[form["rnd"]])))


def integer_to_float(form: Form, a: int) -> Result:
    """Integer to float: the exact integer, rounded once by .frnd (§9.7.9.21 floating-point notes),
    then .sat ([0.0, 1.0]) and .ftz (.f32 results) as for any float result."""
    n = integer_value(form["atype"], a)
    exact = Exact(int(n < 0), abs(n))
    dst = FORMATS[form["dtype"]]
    return round_value(exact, dst, Rounding(form["rnd"]), ftz="ftz" in form and dst is F32, sat="sat" in form)


def round_to_integral(form: Form, a: int, profile: Profile) -> Result:
    """Same-size float to float with integer rounding (``cvt.rni.f32.f32``): "The result is an
    integral value, stored in floating-point format" (§9.7.9.21). A zero result keeps the sign of
    the input (IEEE 754 roundToIntegral: -0.4 with .rni gives -0.0); infinities stay infinities."""
    fmt = FORMATS[form["atype"]]
    ftz, sat = "ftz" in form, "sat" in form
    value = decode(fmt, a, ftz=ftz and fmt is F32 and flushes_input(form, profile))
    if isinstance(value, NaN):
        return conversion_nan(form, fmt, fmt, value, a, profile, sat=sat)
    if isinstance(value, Exact):
        value = Exact(value.sign, abs(round_to_integer(value, INTEGER_ROUNDING[form["rnd"]])))
    return round_value(value, fmt, Rounding.RN, ftz=ftz and fmt is F32, sat=sat)


# ---------------------------------------------------------------------------------------------
# cvt: the scalar forms
# ---------------------------------------------------------------------------------------------


@semantic("cvt")
def cvt(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.9.21 cvt ``d, a``: convert between the fundamental types (and to .tf32).

    * integer to integer: sign/zero extension or chop by Table 15, optionally saturated (.sat);
    * float to integer: rounded by .irnd, clamped to the destination range, NaN -> 0;
    * integer to float: rounded by .frnd;
    * same-type float with .irnd: rounded to an integral value in the same format;
    * float to float: rounded once by .frnd (exact widenings need none), with .ftz (.f32 inputs and
      results), .sat ([0.0, 1.0], NaN -> +0.0), .relu (negative -> +0.0, NaN -> canonical NaN) and
      .satfinite (infinities and overflow -> ±MAX_NORM, NaN stays NaN).

    NaN results that the manual leaves open are any NaN (see the module docstring).
    """
    dtype, atype, rnd = form["dtype"], form["atype"], form.get("rnd")
    if is_integer(dtype) and is_integer(atype):
        return integer_to_integer(form, a)
    if is_integer(dtype):
        return float_to_integer(form, a, profile)
    if is_integer(atype):
        return integer_to_float(form, a)
    if rnd in INTEGER_ROUNDING:
        return round_to_integral(form, a, profile)
    # An exact conversion (a widening, or a .f32 -> .f32 move with .ftz/.sat) has no rounding to
    # do; .rn stands in for the absent modifier.
    mode = Rounding(rnd) if rnd else Rounding.RN
    return convert(
        a,
        FORMATS[atype],
        FORMATS[dtype],
        mode,
        form=form,
        profile=profile,
        ftz="ftz" in form,
        sat="sat" in form,
        satfinite="satfinite" in form,
        relu="relu" in form,
    )


# ---------------------------------------------------------------------------------------------
# cvt: packed destinations and sources
# ---------------------------------------------------------------------------------------------


def _element(packed_type: str) -> FloatFormat:
    return FORMATS[PACKED_TYPES[packed_type].element]


def _lane_bits(packed_type: str) -> int:
    return PACKED_TYPES[packed_type].lane_bits


def _convert_all(
    form: Form, profile: Profile, sources: list[int], src: FloatFormat, mode: Rounding, randoms: Sequence[tuple[int, int] | None] | None = None
) -> Result:
    """Convert each source element to the destination's element format and pack them, the first
    source in the most significant lane (the manual's pseudo-code)."""
    dst = _element(form["dtype"])
    randoms = randoms or [None] * len(sources)
    lanes = [
        convert(x, src, dst, mode, form=form, profile=profile, satfinite="satfinite" in form, relu="relu" in form, random=r) for x, r in zip(sources, randoms)
    ]
    return pack_lanes(lanes, _lane_bits(form["dtype"]))


@semantic("cvt.x2.f32")
def cvt_f32_pair_to_half2(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: "two inputs a and b of
    .f32 type are converted into .f16 or .bf16 type and the converted values are packed in the
    destination register d, such that the value converted from input a is stored in the upper half
    of d and the value converted from input b is stored in the lower half of d"."""
    return _convert_all(form, profile, [a, b], F32, Rounding(form["rnd"]))


def rs_random_bits(dtype: str, rbits: int) -> list[tuple[int, int]]:
    """The random bits of each source (in operand order a, b[, e, f]) for .rs, as ``(bits, k)``.

    §9.7.9.21, as read here (the figures 37-40 the text refers to are not in the text):

    * .f16x2: "13 LSBs from upper 16-bits are used as random bits for operand a with 3 MSBs are 0
      and 13 LSBs from lower 16-bits are used as random bits for operand b" -- a: rbits[28:16],
      b: rbits[12:0], 13 bits each (as many as .f32 -> .f16 discards); rbits[31:29] and
      rbits[15:13] are not used.
    * .bf16x2: "upper 16-bits are used as random bits for operand a and lower 16-bits ... for
      operand b" -- a: rbits[31:16], b: rbits[15:0].
    * .e4m3x4/.e5m2x4/.e2m3x4/.e3m2x4: "lower 16-bits are used for operands e, f and upper 16 bits
      are used for operands a, b" -- a and b both take rbits[31:16], e and f both rbits[15:0],
      16 bits each.
    * .e2m1x4: "lower 8-bits from both 16-bits half of rbits are used for operands e, f and upper
      8-bits from both 16-bits half of rbits are used for operands a, b" -- a: rbits[31:24],
      b: rbits[15:8], e: rbits[23:16], f: rbits[7:0], 8 bits each (the higher half for the
      earlier operand, as everywhere else in cvt).
    """
    if dtype == "f16x2":
        return [((rbits >> 16) & 0x1FFF, 13), (rbits & 0x1FFF, 13)]
    if dtype == "bf16x2":
        return [((rbits >> 16) & 0xFFFF, 16), (rbits & 0xFFFF, 16)]
    if dtype == "e2m1x4":
        return [((rbits >> 24) & 0xFF, 8), ((rbits >> 8) & 0xFF, 8), ((rbits >> 16) & 0xFF, 8), (rbits & 0xFF, 8)]
    upper, lower = (rbits >> 16) & 0xFFFF, rbits & 0xFFFF
    return [(upper, 16), (upper, 16), (lower, 16), (lower, 16)]


@semantic("cvt.rs.x2.f32")
def cvt_rs_f32_pair_to_half2(form: Form, a: int, b: int, rbits: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits``: as the .rn form,
    rounded by .rs: "the result of the operation is rounded toward or away from zero based on the
    carry out of the integer addition of the supplied random bits (rbits) to the truncated bits
    (discarded bits) of the input mantissa" -- the random bits of :func:`rs_random_bits`."""
    return _convert_all(form, profile, [a, b], F32, Rounding.RS, rs_random_bits(form["dtype"], rbits))


@semantic("cvt.f8x2.f32")
def cvt_f32_pair_to_narrow2(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2}.f32 d, a, b``:
    "the value converted from input a is stored in the upper 8 bits of d and the value converted
    from input b is stored in the lower 8 bits of d" (upper/lower 4 bits for .e2m1x2; for
    .e2m3x2/.e3m2x2 each 6-bit value is padded with zeros in its byte's 2 MSBs).

    .satfinite: "If the absolute value of input (ignoring sign) is greater than MAX_NORM of the
    specified destination format, then the result is sign-preserved MAX_NORM of the destination
    format" -- infinities included; a NaN gives a NaN of .e4m3/.e5m2 and +MAX_NORM of the formats
    without NaN (.e2m1, .e2m3, .e3m2).

    Where ml_dtypes differs (tests/test_cvt.py pins each case): its float8_e4m3fn turns overflow
    and infinities into NaN and its float8_e5m2 into infinities, where the mandatory .satfinite
    gives ±MAX_NORM; its float6/float4 types turn NaN into -0.0, where PTX gives +MAX_NORM; its
    float8_e5m2 NaN is 0x7e, where PTX allows any .e5m2 NaN.
    """
    return _convert_all(form, profile, [a, b], F32, Rounding.RN)


@semantic("cvt.f8x2.f16x2")
def cvt_half2_to_narrow2(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a``: "the value converted from
    the upper 16 bits of input a is stored in the upper 8 bits of d and the value converted from
    the lower 16 bits of input a is stored in the lower 8 bits of d"."""
    return _convert_all(form, profile, split_lanes(a, 2, 16), F16, Rounding.RN)


@semantic("cvt.f16x2.f8x2")
def cvt_narrow2_to_half2(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2} d, a``: "the value
    converted from the upper 8 bits of a is stored in the upper 16 bits of d and the value
    converted from the lower 8 bits of a is stored in the lower 16 bits of d" (4-bit halves for
    .e2m1x2). Every value of these formats is an .f16 value, so .rn never rounds; .relu clamps
    negative results to +0.0 and turns NaN into the canonical NaN; other NaNs are open.

    .e2m3x2/.e3m2x2: "Each 8-bit input value in operand a with the 2 MSBs being 0 is converted";
    the manual defines no other input, and this reads only the 6 low bits of each byte.
    """
    src = _element(form["atype"])
    lane = _lane_bits(form["atype"])
    elements = [x & ((1 << src.width) - 1) for x in split_lanes(a, 2, lane)]
    return _convert_all(form, profile, elements, src, Rounding.RN)


@semantic("cvt.rs.x4")
def cvt_rs_f32_quad_to_narrow4(form: Form, a: int, b: int, e: int, f: int, rbits: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4,e2m1x4}.f32 d, {a, b, e, f},
    rbits``: "the value converted from inputs a, b, e, f are stored in each 8 bits starting from
    the upper bits of d" (4 bits for .e2m1x4; each 6-bit value of .e2m3x4/.e3m2x4 padded with 2
    zero MSBs), stochastically rounded with the random bits of :func:`rs_random_bits`."""
    return _convert_all(form, profile, [a, b, e, f], F32, Rounding.RS, rs_random_bits(form["dtype"], rbits))


@semantic("cvt.ue8m0x2")
def cvt_to_ue8m0x2(form: Form, *sources: int, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b`` and ``... .ue8m0x2.bf16x2 d, a``
    (.frnd3 = .rz, .rp): "the value converted from input a is stored in the upper 8 bits of d and
    the value converted from input b is stored in the lower 8 bits of d" (for .bf16x2: the upper
    and lower halves of a).

    .ue8m0 is 2^(e-127), e in 0..254, with 0xff the NaN: no sign, no zero, no infinity. The input's
    magnitude is converted (the sign is ignored, see :func:`_unsigned`); .satfinite turns overflow
    and infinity into 2^127 ("positive MAX_NORM in .ue8m0x2"), and without it an infinite or
    overflowing result is the NaN 0xff. Zero and magnitudes below 2^-127 become 2^-127 (0x00), the
    smallest value (the core's rule for ue8m0, which has no zero; the manual is silent).
    """
    if form["atype"] == "f32":
        elements, src = list(sources), F32
    else:
        elements, src = split_lanes(sources[0], 2, 16), BF16
    return _convert_all(form, profile, elements, src, Rounding(form["rnd"]))


@semantic("cvt.bf16x2.ue8m0x2")
def cvt_ue8m0x2_to_bf16x2(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.9.21 ``cvt.rn.bf16x2.ue8m0x2 d, a``: "the value converted from the upper 8 bits of a is
    stored in the upper 16 bits of d and the value converted from the lower 8 bits of a is stored
    in the lower 16 bits of d". Every .ue8m0 value 2^-127..2^127 is a .bf16 value (2^-127 a
    subnormal), so nothing rounds; the NaN 0xff gives a .bf16 NaN the manual leaves open."""
    return _convert_all(form, profile, split_lanes(a, 2, 8), UE8M0, Rounding.RN)


# ---------------------------------------------------------------------------------------------
# §9.7.9.22 cvt.pack
# ---------------------------------------------------------------------------------------------

#: Widths and signedness of the .convertType of cvt.pack (§9.7.9.22).
PACK_TYPES = {"u2": (2, False), "s2": (2, True), "u4": (4, False), "s4": (4, True), "u8": (8, False), "s8": (8, True), "u16": (16, False), "s16": (16, True)}


def _saturate_pack(type_name: str, value: int) -> int:
    """MIN(convertType)..MAX(convertType) as a two's complement field of the type's width."""
    size, signed = PACK_TYPES[type_name]
    low, high = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if signed else (0, (1 << size) - 1)
    return max(low, min(high, value)) & ((1 << size) - 1)


def _pack(form: Form, a: int, b: int, c: int = 0) -> int:
    """§9.7.9.22 semantics: ``ta``, ``tb`` are a, b clamped to the range of .convertType ("The .sat
    modifier limits the converted values to MIN(convertType)..MAX(convertedType) (no overflow)";
    the pseudo-code's second ``ta = a > MAX ? MAX : a`` line reads as continuing the clamp, not
    undoing the first); ``td[size-1:0] = tb``, ``td[2*size-1:size] = ta``; for .u16/.s16
    ``d = td``, else ``d[2*size-1:0] = td`` and ``d[31:2*size] = c[31-2*size:0]``."""
    size, _ = PACK_TYPES[form["convertType"]]
    ta = _saturate_pack(form["convertType"], integer_value("s32", a))
    tb = _saturate_pack(form["convertType"], integer_value("s32", b))
    td = (ta << size) | tb
    if size == 16:
        return td
    return (td | (c << (2 * size))) & 0xFFFF_FFFF


@semantic("cvt.pack")
def cvt_pack(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.9.22 ``cvt.pack.sat.{u16,s16}.s32 d, a, b``: "Convert two 32-bit integers a and b into
    specified type and pack the results into d" -- a in d[31:16], b in d[15:0], each saturated."""
    return _pack(form, a, b)


@semantic("cvt.pack.c")
def cvt_pack_c(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.9.22 ``cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c``: a and b saturated and
    packed into the low 2*size bits of d (a above b); "If operand c is specified then remaining bits
    of d are copied from lower bits of c"."""
    return _pack(form, a, b, c)


# ---------------------------------------------------------------------------------------------
# §9.7.9.3, §9.7.9.4 mov
# ---------------------------------------------------------------------------------------------


@semantic("mov")
def mov(form: Form, a: int, *, profile: Profile) -> int:
    """§9.7.9.3 ``mov.type d, a``: "Write register d with the value of a." Semantics ``d = a;``.

    Every type moves its bit pattern unchanged ("Although only predicate and bit-size types are
    required, we include the arithmetic types for the programmer's convenience"): a NaN of .f32 or
    .f64 keeps its payload, and ``.pred`` is the one-bit register.

    Out of scope, by design: the other syntax lines read state, not register operands.
    ``mov.type d, sreg`` ("d = sreg;") reads a special register (§10: ``%tid``, ``%laneid``,
    ``%clock``, ...), whose value is a fact about the executing thread and the machine; given that
    value explicitly, the move is this same ``d = a`` (evaluate ``mov.u32`` on it), so a second
    function would add nothing but a table of §10's registers. ``mov.type d, avar{+imm}`` ("d =
    &avar; // address is non-generic; i.e., within the variable's declared state space") and
    ``mov.{u32,u64} d, fname/kernel`` give addresses that the placement of variables and functions
    in the state spaces decides (the loader's choice), which no register operand determines.
    The vector moves of §9.7.9.4 are :func:`mov_pack_x2` and the three after it.
    """
    return a


def _element_bits(form: Form, count: int) -> int:
    """ "The overall size of the vector and the size of the scalar must match the size of the
    instruction type" (§9.7.9.4): each of ``count`` elements is 1/count of the type."""
    return INTEGER_TYPES[form["type"]].bits // count


def pack(form: Form, elements: tuple[int, ...]) -> int:
    """§9.7.9.4 pack: ``d = a.x | (a.y << n) | (a.z << 2n) | (a.w << 3n)`` for n-bit elements --
    the first element of the vector is the least significant."""
    n = _element_bits(form, len(elements))
    d = 0
    for i, element in enumerate(elements):
        d |= element << (i * n)
    return d


def unpack(form: Form, a: int, count: int) -> tuple[int, ...]:
    """§9.7.9.4 unpack: ``{ d.x, d.y, ... } = { a[0..n-1], a[n..2n-1], ... }`` -- the first element
    of the vector receives the least significant bits."""
    n = _element_bits(form, count)
    return tuple((a >> (i * n)) & ((1 << n) - 1) for i in range(count))


@semantic("mov.pack.x2")
def mov_pack_x2(form: Form, x: int, y: int, *, profile: Profile) -> int:
    """§9.7.9.4 ``mov.type d, {a.x, a.y}``: "Write scalar register d with the packed value of vector
    register a"; ``d = a.x | (a.y << n)`` with n half the type's size (``mov.b64 d, {lo, hi}``)."""
    return pack(form, (x, y))


@semantic("mov.pack.x4")
def mov_pack_x4(form: Form, x: int, y: int, z: int, w: int, *, profile: Profile) -> int:
    """§9.7.9.4 ``mov.type d, {a.x, a.y, a.z, a.w}``: ``d = a.x | (a.y << n) | (a.z << 2n) |
    (a.w << 3n)`` with n a quarter of the type's size."""
    return pack(form, (x, y, z, w))


@semantic("mov.unpack.x2")
def mov_unpack_x2(form: Form, a: int, *, profile: Profile) -> tuple[int, int]:
    """§9.7.9.4 ``mov.type {d.x, d.y}, a``: "write vector register d with the unpacked values from
    scalar register a"; ``{d.x, d.y} = {a[0..n-1], a[n..2n-1]}``. A sink ``_`` in place of an
    element discards that result; the values do not change (``ptxspec eval`` prints every element,
    the discarded ones too)."""
    x, y = unpack(form, a, 2)
    return x, y


@semantic("mov.unpack.x4")
def mov_unpack_x4(form: Form, a: int, *, profile: Profile) -> tuple[int, int, int, int]:
    """§9.7.9.4 ``mov.type {d.x, d.y, d.z, d.w}, a``: ``{d.x, d.y, d.z, d.w} = {a[0..n-1],
    a[n..2n-1], a[2n..3n-1], a[3n..4n-1]}``."""
    x, y, z, w = unpack(form, a, 4)
    return x, y, z, w


# ---------------------------------------------------------------------------------------------
# §9.7.9.7 prmt
# ---------------------------------------------------------------------------------------------

#: §9.7.9.7's table of the specialised modes: for each mode and selector ``c[1:0]``, the source
#: byte that lands in d.b3, d.b2, d.b1, d.b0 (the manual's column order).
PRMT_TABLE: dict[str, tuple[tuple[int, int, int, int], ...]] = {
    "f4e": ((3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)),  # forward 4 extract
    "b4e": ((5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)),  # backward 4 extract
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),  # replicate 8
    "ecl": ((3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)),  # edge clamp left
    "ecr": ((0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)),  # edge clamp right
    "rc16": ((1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)),  # replicate 16
}


def read_byte(mode: str | None, ctl: int, tmp64: int, position: int) -> int:
    """The manual's ``ReadByte(mode, ctl, tmp64)`` for destination byte ``position``.

    Generic form: "The 3 lsbs of the selection value specify which of the 8 source bytes should be
    moved into the target position. The msb defines if the byte value should be copied, or if the
    sign (msb of the byte) should be replicated over all 8 bits of the target position (sign
    extend of the byte value); msb=0 means copy the literal value; msb=1 means replicate the sign."
    The modes: the table above; "Note that the sign extension is only performed as part of
    generic form."
    """
    if mode is None:
        byte = (tmp64 >> (8 * (ctl & 0b111))) & 0xFF
        if ctl & 0b1000:
            return 0xFF if byte & 0x80 else 0x00
        return byte
    source = PRMT_TABLE[mode][ctl][3 - position]
    return (tmp64 >> (8 * source)) & 0xFF


@semantic("prmt")
def prmt(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.9.7 ``prmt.b32{.mode} d, a, b, c``: "Pick four arbitrary bytes from two 32-bit
    registers, and reassemble them into a 32-bit destination register."

    The bytes are numbered "{b, a} = {{b7, b6, b5, b4}, {b3, b2, b1, b0}}" (``tmp64 = (b<<32) | a``).
    Without a mode, ``ctl[i] = (c >> 4i) & 0xf``, the selector of d's byte i; with one,
    "the two lsbs of operand c" select a row of the mode's table: ``ctl[0..3] = c & 0x3``.
    ``tmp[8i+7:8i] = ReadByte(mode, ctl[i], tmp64)``. The other bits of c are not read.
    """
    mode = form.get("mode")
    tmp64 = (b << 32) | a
    if mode is None:
        ctl = [(c >> (4 * i)) & 0xF for i in range(4)]
    else:
        ctl = [c & 0x3] * 4
    d = 0
    for i in range(4):
        d |= read_byte(mode, ctl[i], tmp64, i) << (8 * i)
    return d
