"""§9.7.9.21 cvt and §9.7.9.22 cvt.pack on numpy arrays: the forms semantics/batch.py does not cover.

batch.py converts .f32 into .f16/.bf16/.tf32/the integers and the .f32 pairs into
.f16x2/.bf16x2/.e4m3x2/.e5m2x2. This module covers every other form of the cvt families, each
builder following :mod:`ptxspec.semantics.data_movement` step by step:

* integer to integer (Table 15: sign/zero extension, chop, .sat), :func:`integer_to_integer`;
* integer to float (every .frnd; the magnitude shortened to 59 bits and a sticky bit by
  batch_float's :func:`~ptxspec.semantics.batch_float.narrow`), :func:`integer_to_float`;
* float to integer from every float source, :func:`float_to_integer`;
* the same-type integral roundings (``cvt.rni.f32.f32``), :func:`round_to_integral`;
* float to float from and to .f64/.f32/.f16/.bf16 (and .tf32), :func:`float_to_float`;
* the packed families: pairs of .f32 into every x2 type (:func:`f32_pair`), .f16x2 into
  .e4m3x2/.e5m2x2, the narrow pairs into .f16x2 (:func:`packed_source`), the stochastic roundings
  ``cvt.rs`` (:func:`stochastic`), .ue8m0x2 both ways (:func:`to_ue8m0x2`,
  :func:`packed_source`), and cvt.pack (:func:`pack`).

Every floating-point element goes through :func:`_convert`, the batched
:func:`~ptxspec.semantics.data_movement.convert`: batch_rounding.decode (every format, .f64 and
the unsigned, subnormal-less .ue8m0 included), the NaN rule of
:func:`~ptxspec.semantics.data_movement.conversion_nan` (:func:`_nan_rule`), and one rounding by
batch_rounding.round_bits, the one rounding routine.

The open NaN. Where a profile pins the NaN a conversion writes (``profile.cvt_nan``, a scalar
function), this module reads it exactly as the scalar semantics does: for sources of at most 16
bits it tabulates ``profile.cvt_nan`` over every NaN encoding of the source (at most 2046 calls,
once per form and profile); for an .f32 source into a narrower format it uses the profile's
batched twin ``profile.cvt_nan_from_f32_batch`` (as batch.py does); for an .f64 NaN, and an .f32
NaN into .f32 or .f64, it leaves the vector undecided -- the readable semantics decides it (sm_90
keeps payloads there). That class is rare: NaN encodings are about 2^-8 of random .f32 bit
patterns and 2^-11 of .f64 ones, and under the manual (no ``cvt_nan``) nothing is undecided.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import batch_rounding, data_movement
from ptxspec.semantics.batch import BatchResult, FastPath, _dtype, _lanes_result, _open_nan, _split, batched
from ptxspec.semantics.batch_float import narrow, wide_integer
from ptxspec.semantics.numerics import NaN, Rounding, canonical_nan, decode
from ptxspec.spec.catalogue import Form
from ptxspec.spec.data_movement import is_integer
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, NanEncoding

F64 = FORMATS["f64"]
F32 = FORMATS["f32"]
F16 = FORMATS["f16"]
BF16 = FORMATS["bf16"]
UE8M0 = FORMATS["ue8m0"]

#: An element's result: its bits (int64 or uint64), the lanes whose result is any NaN (or None),
#: and the vectors left to the readable semantics (or None).
Element = tuple[np.ndarray, "np.ndarray | None", "np.ndarray | None"]


# ---------------------------------------------------------------------------------------------
# The NaN rule (data_movement.conversion_nan)
# ---------------------------------------------------------------------------------------------

#: (form, source, destination, id of the profile) -> (the profile, the source's NaN encodings in
#: increasing order, the profile's NaN for each).
_NAN_TABLES: dict[tuple[str, str, str, int], tuple[Profile, np.ndarray, np.ndarray]] = {}


def _tabulated_nan(form: Form, src: FloatFormat, dst: FloatFormat, a: np.ndarray, nan: np.ndarray, profile: Profile) -> np.ndarray:
    """``profile.cvt_nan`` of the NaN elements of ``a`` (a source of at most 16 bits), the other
    elements holding the canonical NaN of ``dst`` (unused). The scalar rule is called once for
    each NaN encoding of ``src`` (at most 2046), with the arguments data_movement.conversion_nan
    passes it, and kept per form and profile; the elements look their encoding up."""
    key = (form.text, src.name, dst.name, id(profile))
    if key not in _NAN_TABLES:
        assert profile.cvt_nan is not None
        nans = [(bits, value) for bits in range(1 << src.width) if isinstance(value := decode(src, bits), NaN)]
        results = [profile.cvt_nan(form, src, dst, value, bits) for bits, value in nans]
        _NAN_TABLES[key] = (profile, np.array([bits for bits, _ in nans], dtype=np.uint64), np.array(results, dtype=np.uint64))
    _, table_bits, table_results = _NAN_TABLES[key]
    out = np.full(a.shape, canonical_nan(dst), dtype=np.uint64)
    out[nan] = table_results[np.searchsorted(table_bits, a[nan].astype(np.uint64))]
    return out


def _nan_rule(form: Form, src: FloatFormat, dst: FloatFormat, a: np.ndarray, nan: np.ndarray, profile: Profile, *, fixed: bool):
    """data_movement.conversion_nan as ``(bits, open mask, undecided mask)``. ``fixed``: .sat,
    .relu or a destination without NaN, whose NaN result round_bits gives itself. A destination with
    one NaN encoding gives it; without a chip's choice the chapter's unspecified NaN (spec: any
    NaN, an open mask); with one, ``profile.cvt_nan`` -- tabulated (sources of at most 16 bits),
    batched by the profile (.f32 into a narrower format), else undecided (an .f64 source, or .f32
    into .f32/.f64; see the module docstring)."""
    if fixed or data_movement._single_nan(dst):
        return (canonical_nan(dst) if dst.nan is not NanEncoding.NONE else 0), None, None
    if profile.cvt_nan is None:
        bits, open_ = _open_nan(dst, profile)
        return bits, (nan if open_ else None), None
    if src.width <= 16:
        return _tabulated_nan(form, src, dst, a, nan, profile), None, None
    if src is F32 and dst.width < 32 and profile.cvt_nan_from_f32_batch is not None:
        return profile.cvt_nan_from_f32_batch(form, dst, a), None, None
    return canonical_nan(dst), None, (nan if nan.any() else None)


# ---------------------------------------------------------------------------------------------
# convert(): one floating-point element (data_movement.convert)
# ---------------------------------------------------------------------------------------------


def _convert(
    form: Form,
    a: np.ndarray,
    src: FloatFormat,
    dst: FloatFormat,
    mode: Rounding,
    profile: Profile,
    *,
    ftz: bool = False,
    sat: bool = False,
    satfinite: bool = False,
    relu: bool = False,
    random: tuple[np.ndarray, int] | None = None,
) -> Element:
    """data_movement.convert of the elements ``a`` of ``src``: decode (.ftz flushes an .f32 input
    where the profile says it does), the NaN rule, the magnitude for an unsigned destination, one
    rounding (.ftz on .f32 results, .sat, .satfinite, .relu; .rs with ``random`` = (bits, k))."""
    flush = ftz and src is F32 and data_movement.flushes_input(form, profile)
    sign, significand, exponent, nan, infinite = batch_rounding.decode(src, a, ftz=flush)
    fixed = sat or relu or dst.nan is NanEncoding.NONE
    nan_bits, open_, undecided = _nan_rule(form, src, dst, a, nan, profile, fixed=fixed)
    if not dst.signed:
        sign = np.zeros(sign.shape, dtype=bool)
    if random is not None:
        significand, exponent = _stochastic(significand, exponent, dst, *random)
        mode = Rounding.RN  # the value is on dst's grid now: nothing is rounded, overflow as .rs
    bits = batch_rounding.round_bits(
        sign, significand, exponent, dst, mode,
        ftz=ftz and dst is F32, sat=sat, satfinite=satfinite, relu=relu, infinite=infinite, nan=nan, nan_bits=nan_bits,
    )  # fmt: skip
    return bits, open_, undecided


def _stochastic(significand: np.ndarray, exponent: np.ndarray, fmt: FloatFormat, rbits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The magnitude ``significand * 2^exponent`` rounded by .rs onto ``fmt``'s grid, as
    numerics.round_exact does it (``_round_at`` at ``lsb = max(msb, emin) - mantissa_bits`` and
    ``_round_up``'s .rs rule): the k most significant discarded bits plus the k random bits carry
    out of k bits -> one unit away from zero. Returns ``(q, lsb)``: ``q * 2^lsb`` lies on the grid
    (q <= 2^precision; 2^precision is the next binade's first value), so rounding it to nearest
    afterwards rounds nothing and overflows exactly as .rs does (away from zero: infinity, or
    MAX_NORM with .satfinite).

    Exact: integer shifts and compares. The sources are .f32 (24-bit significands) and the
    destinations have fewer mantissa bits, so ``lsb - exponent >= 0``; beyond 62 places the
    clamped shift gives q = 0 and no discarded bit in the top k, as the true shift does
    (k <= 16 and 24 + 16 < 62)."""
    msb = exponent + batch_rounding.bit_length(significand) - 1
    lsb = np.maximum(msb, fmt.min_normal_exponent) - fmt.mantissa_bits
    shift = np.clip(lsb - exponent, 0, 62)
    q = significand >> shift
    rem = significand - (q << shift)
    # The k most significant discarded bits: (rem << k) >> shift, without overflowing int64.
    top = np.where(shift >= k, rem >> np.maximum(shift - k, 0), rem << np.maximum(k - shift, 0))
    up = top + rbits.astype(np.int64) >= (1 << k)
    return q + up, lsb


def _random_fields(dtype: str) -> list[tuple[int, int, int]]:
    """data_movement.rs_random_bits as bit fields: per source, ``(shift, mask, k)`` with its random
    bits ``(rbits >> shift) & mask``. Read off the scalar function itself, one rbits bit at a
    time, and checked to be such a field."""
    fields = []
    for lane, (mask, k) in enumerate(data_movement.rs_random_bits(dtype, 0xFFFF_FFFF)):
        shift = min(j for j in range(32) if data_movement.rs_random_bits(dtype, 1 << j)[lane][0])
        assert all(data_movement.rs_random_bits(dtype, 1 << j)[lane][0] == ((1 << j) >> shift) & mask for j in range(32))
        fields.append((shift, mask, k))
    return fields


def _lanes(parts: Sequence[Element], fmt: FloatFormat, lane_bits: int) -> BatchResult:
    """Pack the elements' results into one register, lane 0 (the first source) the most
    significant (batch._lanes_result), with the union of their undecided vectors."""
    result = _lanes_result([(bits, open_) for bits, open_, _ in parts], fmt, lane_bits)
    masks = [u for _, _, u in parts if u is not None]
    return attrs.evolve(result, undecided=np.logical_or.reduce(masks)) if masks else result


def _modifiers(form: Form) -> dict[str, Any]:
    """The rounding modifiers of :func:`_convert` that the form writes (as keyword arguments)."""
    return {name: name in form for name in ("ftz", "sat", "satfinite", "relu")}


# ---------------------------------------------------------------------------------------------
# cvt: the scalar forms (data_movement.cvt)
# ---------------------------------------------------------------------------------------------


def _integer_source(type_name: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """data_movement.integer_value as ``(negative, pattern)``: the sign, and the value's 64-bit
    two's-complement bits (uint64; sign extension sets every bit above the type's)."""
    t = INTEGER_TYPES[type_name]
    a = a.astype(np.uint64) & np.uint64((1 << t.bits) - 1)
    if not t.signed:
        return np.zeros(a.shape, dtype=bool), a
    negative = (a >> np.uint64(t.bits - 1)) != 0
    return negative, a | (negative.astype(np.uint64) * np.uint64((~((1 << t.bits) - 1)) & ((1 << 64) - 1)))


def integer_to_integer(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt{.sat}.dtype.atype`` between integer types (data_movement.integer_to_integer):
    Table 15's sign or zero extension by the source type, ".sat limits the result to
    MININT..MAXINT for the size of the operation", then chop to the destination.

    Exact: the value is held as its 64-bit two's-complement pattern (every source fits); the
    clamp compares a negative value as int64 and a non-negative one as uint64, where each is
    exact; chopping is a mask."""
    src, dst = form["atype"], INTEGER_TYPES[form["dtype"]]
    sat = "sat" in form
    mask = np.uint64((1 << dst.bits) - 1)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        negative, pattern = _integer_source(src, a)
        if sat:
            below = negative & (pattern.view(np.int64) < dst.min)
            above = ~negative & (pattern > np.uint64(dst.max))
            pattern = np.where(below, np.uint64(dst.min & ((1 << 64) - 1)), np.where(above, np.uint64(dst.max), pattern))
        return BatchResult((pattern & mask).astype(_dtype(dst.bits)), None, None, 1, dst.bits)

    return fast


def integer_to_float(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.frnd{.ftz}{.sat}.ftype.itype`` (data_movement.integer_to_float): the exact
    integer rounded once by .frnd, with .sat and .ftz (.f32 results). The magnitude is exact in
    uint64 (two's-complement negation modulo 2^64 gives 2^63 for -2^63); as a two-limb value
    (:func:`~ptxspec.semantics.batch_float.wide_integer`) it is shortened to 59 bits and a sticky
    bit by :func:`~ptxspec.semantics.batch_float.narrow`, which every mode rounds as the whole."""
    src, dst = form["atype"], FORMATS[form["dtype"]]
    mode = Rounding(form["rnd"])
    ftz, sat = "ftz" in form and dst is F32, "sat" in form

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        negative, pattern = _integer_source(src, a)
        magnitude = np.where(negative, np.uint64(0) - pattern, pattern)
        sign, significand, exponent = narrow(wide_integer(negative, magnitude), dst)
        bits = batch_rounding.round_bits(sign, significand, exponent, dst, mode, ftz=ftz, sat=sat)
        return _lanes([(bits, None, None)], dst, dst.width)

    return fast


def float_to_integer(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.irnd{.ftz}{.sat}.itype.ftype`` (data_movement.float_to_integer): rounded to
    an integer by .irnd (batch_rounding.round_integer), clamped to the destination range
    (infinities too), NaN -> 0 or the profile's measured integer (``profile.cvt_integer_nan``)."""
    src, dtype = FORMATS[form["atype"]], form["dtype"]
    integer = INTEGER_TYPES[dtype]
    mode = data_movement.INTEGER_ROUNDING[form["rnd"]]

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        flush = "ftz" in form and src is F32 and data_movement.flushes_input(form, profile)
        sign, significand, exponent, nan, infinite = batch_rounding.decode(src, a, ftz=flush)
        magnitude, huge = batch_rounding.round_integer(sign, significand, exponent, mode)
        bits = batch_rounding.saturate_integer(sign, magnitude, huge | infinite, integer.bits, integer.signed)
        nan_value = 0 if profile.cvt_integer_nan is None else data_movement.integer_bits(dtype, profile.cvt_integer_nan(form))
        bits = np.where(nan, np.uint64(nan_value), bits)
        return BatchResult(bits.astype(_dtype(integer.bits)), None, None, 1, integer.bits)

    return fast


def round_to_integral(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.irnd{.ftz}{.sat}.ftype.ftype`` (data_movement.round_to_integral): "an integral
    value, stored in floating-point format"; a zero keeps the input's sign, infinities stay, NaN
    by the conversion NaN rule. A value with exponent >= 0 is an integer already and is kept; the
    others lie below 2^precision, where batch_rounding.round_integer is exact; the integer (at
    most 2^precision) is then re-encoded exactly (round to nearest, .ftz, .sat)."""
    fmt = FORMATS[form["atype"]]
    mode = data_movement.INTEGER_ROUNDING[form["rnd"]]
    ftz, sat = "ftz" in form, "sat" in form

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        flush = ftz and fmt is F32 and data_movement.flushes_input(form, profile)
        sign, significand, exponent, nan, infinite = batch_rounding.decode(fmt, a, ftz=flush)
        nan_bits, open_, undecided = _nan_rule(form, fmt, fmt, a, nan, profile, fixed=sat)
        magnitude, _ = batch_rounding.round_integer(sign, significand, np.minimum(exponent, 0), mode)
        integral = exponent < 0
        significand = np.where(integral, magnitude.astype(np.int64), significand)
        exponent = np.where(integral, 0, exponent)
        bits = batch_rounding.round_bits(
            sign, significand, exponent, fmt, Rounding.RN, ftz=ftz and fmt is F32, sat=sat, infinite=infinite, nan=nan, nan_bits=nan_bits
        )
        return _lanes([(bits, open_, undecided)], fmt, fmt.width)

    return fast


def float_to_float(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt{.frnd}{.ftz}{.sat}{.relu}{.satfinite}.ftype.ftype`` (data_movement.cvt's last
    branch): one :func:`_convert`; an exact conversion has no .frnd, and .rn stands in for it."""
    src, dst = FORMATS[form["atype"]], FORMATS[form["dtype"]]
    mode = Rounding(form.get("rnd") or "rn")

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        return _lanes([_convert(form, a, src, dst, mode, profile, **_modifiers(form))], dst, dst.width)

    return fast


@batched("cvt")
def _cvt(form: Form) -> FastPath | None:
    """The branches of data_movement.cvt, in its order."""
    dtype, atype = form["dtype"], form["atype"]
    if is_integer(dtype) and is_integer(atype):
        return integer_to_integer(form)
    if is_integer(dtype):
        return float_to_integer(form)
    if is_integer(atype):
        return integer_to_float(form)
    if form.get("rnd") in data_movement.INTEGER_ROUNDING:
        return round_to_integral(form)
    return float_to_float(form)


# ---------------------------------------------------------------------------------------------
# cvt: packed destinations and sources
# ---------------------------------------------------------------------------------------------


def f32_pair(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`` and
    ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2}.f32 d, a, b``
    (data_movement._convert_all): a into the upper lane, b into the lower (a 6-bit value in the
    low bits of its byte, 4-bit lanes for .e2m1x2)."""
    packed = PACKED_TYPES[form["dtype"]]
    dst = FORMATS[packed.element]
    mode = Rounding(form["rnd"])
    flags: dict[str, Any] = {"satfinite": "satfinite" in form, "relu": "relu" in form}

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        high = _convert(form, a, F32, dst, mode, profile, **flags)
        low = high if b is a else _convert(form, b, F32, dst, mode, profile, **flags)
        return _lanes([high, low], dst, packed.lane_bits)

    return fast


def packed_source(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a``,
    ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2} d, a`` and
    ``cvt.rn.bf16x2.ue8m0x2 d, a``: the upper part of a into the upper lane of d, the lower into
    the lower (data_movement.cvt_half2_to_narrow2, cvt_narrow2_to_half2, cvt_ue8m0x2_to_bf16x2);
    a 6-bit element is read from the low 6 bits of its byte."""
    source, destination = PACKED_TYPES[form["atype"]], PACKED_TYPES[form["dtype"]]
    src, dst = FORMATS[source.element], FORMATS[destination.element]
    mode = Rounding(form["rnd"])
    flags: dict[str, Any] = {"satfinite": "satfinite" in form, "relu": "relu" in form}
    element_mask = np.uint64((1 << src.width) - 1)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        parts = [_convert(form, x & element_mask, src, dst, mode, profile, **flags) for x in _split(a, source.count, source.lane_bits)]
        return _lanes(parts, dst, destination.lane_bits)

    return fast


def stochastic(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits`` and
    ``cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4,e2m1x4}.f32 d, {a, b, e, f}, rbits``:
    each source converted with its random bits (:func:`_random_fields`, read off
    data_movement.rs_random_bits) and stochastic rounding (:func:`_stochastic`), packed from the
    most significant lane."""
    packed = PACKED_TYPES[form["dtype"]]
    dst = FORMATS[packed.element]
    fields = _random_fields(form["dtype"])
    flags: dict[str, Any] = {"satfinite": "satfinite" in form, "relu": "relu" in form}

    def fast(*operands: np.ndarray, profile: Profile) -> BatchResult:
        *sources, rbits = operands
        rbits = rbits.astype(np.int64)
        parts = [
            _convert(form, x, F32, dst, Rounding.RS, profile, random=((rbits >> shift) & mask, k), **flags) for x, (shift, mask, k) in zip(sources, fields)
        ]
        return _lanes(parts, dst, packed.lane_bits)

    return fast


def to_ue8m0x2(form: Form) -> FastPath:
    """§9.7.9.21 ``cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b`` and ``... .ue8m0x2.bf16x2 d, a``
    (data_movement.cvt_to_ue8m0x2): each magnitude rounded by .rz/.rp onto .ue8m0
    (batch_rounding.round_bits), a (or a's upper half) into the upper byte."""
    dst = UE8M0
    mode = Rounding(form["rnd"])
    satfinite = "satfinite" in form

    def fast(*sources: np.ndarray, profile: Profile) -> BatchResult:
        if form["atype"] == "f32":
            elements, src = list(sources), F32
        else:
            elements, src = _split(sources[0], 2, 16), BF16
        parts = [_convert(form, x, src, dst, mode, profile, satfinite=satfinite) for x in elements]
        return _lanes(parts, dst, PACKED_TYPES["ue8m0x2"].lane_bits)

    return fast


@batched("cvt.x2.f32", "cvt.f8x2.f32")
def _pair(form: Form) -> FastPath | None:
    return f32_pair(form)


@batched("cvt.f8x2.f16x2", "cvt.f16x2.f8x2", "cvt.bf16x2.ue8m0x2")
def _packed_source(form: Form) -> FastPath | None:
    return packed_source(form)


@batched("cvt.rs.x2.f32", "cvt.rs.x4")
def _stochastic_forms(form: Form) -> FastPath | None:
    return stochastic(form)


@batched("cvt.ue8m0x2")
def _ue8m0x2(form: Form) -> FastPath | None:
    return to_ue8m0x2(form)


# ---------------------------------------------------------------------------------------------
# §9.7.9.22 cvt.pack
# ---------------------------------------------------------------------------------------------


def pack(form: Form) -> FastPath:
    """§9.7.9.22 ``cvt.pack.sat.{u16,s16}.s32 d, a, b`` and
    ``cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c`` (data_movement._pack): a and b, read as
    .s32, clamped to MIN..MAX of .convertType, a above b in the low 2*size bits, the rest of d from
    the low bits of c. Exact: the clamp compares int64 values; the fields are masks and shifts of
    uint64 patterns, chopped to 32 bits."""
    size, signed = data_movement.PACK_TYPES[form["convertType"]]
    low, high = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if signed else (0, (1 << size) - 1)
    field = np.int64((1 << size) - 1)

    def saturate(x: np.ndarray) -> np.ndarray:
        return (np.clip(x.astype(np.uint32).view(np.int32).astype(np.int64), low, high) & field).astype(np.uint64)

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, profile: Profile) -> BatchResult:
        d = (saturate(a) << np.uint64(size)) | saturate(b)
        if size != 16:
            assert c is not None, "cvt.pack to 8 bits takes c"
            d = (d | (c.astype(np.uint64) << np.uint64(2 * size))) & np.uint64(0xFFFF_FFFF)
        return BatchResult(d.astype(np.uint32), None, None, 1, 32)

    return fast


@batched("cvt.pack", "cvt.pack.c")
def _pack(form: Form) -> FastPath | None:
    return pack(form)


__all__ = [
    "f32_pair",
    "float_to_float",
    "float_to_integer",
    "integer_to_float",
    "integer_to_integer",
    "pack",
    "packed_source",
    "round_to_integral",
    "stochastic",
    "to_ue8m0x2",
]
