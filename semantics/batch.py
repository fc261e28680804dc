"""Batched evaluation: one instruction form applied to many inputs at once, as numpy arrays.

The readable semantics (:func:`ptxspec.semantics.instructions.evaluate`) takes one vector of
source bit patterns and returns one result. Golden-vector generation needs millions of results,
so this module evaluates whole arrays of bit patterns. It adds no meaning of its own:

* a *fast path* is a numpy transcription of one form's semantics, written from the manual and
  IEEE 754, and ``tests/test_batch.py`` proves it bit-identical to the readable semantics on every
  input class (zeros, infinities, NaN payloads, subnormals, ties, overflow, random bit patterns);
* every other form falls back to looping the readable semantics over the arrays.

Fast paths exist for ``fma.rn.f32`` (§9.7.3.6), ``cvt.rn.f16.f32`` and
``cvt.rn.satfinite.e4m3x2.f32`` (§9.7.9.21), ``{add,sub,mul}{.rn}{.ftz}{.sat}.{f16,f16x2}``
(§9.7.4.1-3) and ``{mul,mad}.wide.{s32,u32}`` (§9.7.1.3, §9.7.1.4).

Where the manual leaves a result open (an f32 NaN is "an unspecified NaN", §9.7.3), the scalar
semantics returns an :class:`~ptxspec.semantics.results.AnyNaN` set. A :class:`BatchResult` keeps
that information as a boolean mask ``any_nan`` beside the bits, so that nothing is lost in the
batch: :meth:`BatchResult.result` rebuilds exactly the scalar result of element ``i``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS, PACKED_TYPES, FloatFormat, NanEncoding, register_bits
from ptxspec.semantics.numerics import canonical_nan
from ptxspec.semantics.results import Allowed, AnyNaN, Lanes, Profile, Result, contains, profile_named

F32 = FORMATS["f32"]
F16 = FORMATS["f16"]
E4M3 = FORMATS["e4m3"]


# ---------------------------------------------------------------------------------------------
# The batched result
# ---------------------------------------------------------------------------------------------


def _dtype(width: int) -> np.dtype:
    """The unsigned dtype that holds a register of ``width`` bits (object beyond 64 bits)."""
    for bits, dtype in ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64)):
        if width <= bits:
            return np.dtype(dtype)
    return np.dtype(object)


@attrs.frozen(eq=False)
class BatchResult:
    """The results of one destination operand for ``n`` input vectors.

    * ``bits``: shape ``(n,)``, the destination register bits. In a lane whose result is a set,
      they hold one member of it (the canonical NaN for an ``any_nan`` lane).
    * ``any_nan``: ``None`` when every result is fixed bits; else booleans marking the lanes whose
      result is "any NaN of ``format``" (:class:`~ptxspec.semantics.results.AnyNaN`): shape ``(n,)``
      for a destination of one element, ``(n, lanes)`` for a packed one, lane 0 being the most
      significant (as :class:`~ptxspec.semantics.results.Lanes` orders them).
    * ``sets``: results that are other allowed sets (an interval, a set of payloads), by index;
      only the scalar fallback produces them.
    * ``format``: the element format of a lane (None for integer destinations); ``lanes`` and
      ``lane_bits``: how the register is split into elements.
    """

    bits: np.ndarray
    any_nan: np.ndarray | None
    format: FloatFormat | None
    lanes: int
    lane_bits: int
    sets: dict[int, Allowed] = attrs.field(factory=dict)

    def __len__(self) -> int:
        return len(self.bits)

    def _lane_mask(self, i: int) -> list[bool]:
        if self.any_nan is None:
            return [False] * self.lanes
        row = self.any_nan[i]
        return [bool(x) for x in np.atleast_1d(row)]

    def result(self, i: int) -> Result:
        """Element ``i`` as the scalar semantics returns it: bits, AnyNaN, or Lanes of those."""
        if i in self.sets:
            return self.sets[i]
        bits = int(self.bits[i])
        mask = self._lane_mask(i)
        if not any(mask):
            return bits
        assert self.format is not None
        if self.lanes == 1:
            return AnyNaN(self.format)
        lane_mask = (1 << self.lane_bits) - 1
        parts = []
        for lane, open_ in enumerate(mask):
            lane_value = (bits >> ((self.lanes - 1 - lane) * self.lane_bits)) & lane_mask
            parts.append(AnyNaN(self.format) if open_ else lane_value)
        return Lanes(tuple(parts), self.lane_bits)

    def results(self) -> list[Result]:
        return [self.result(i) for i in range(len(self))]

    def contains(self, observed: np.ndarray) -> np.ndarray:
        """For each element, whether the ``observed`` bits are an allowed result (a batched
        :func:`~ptxspec.semantics.instructions.check`)."""
        observed = np.asarray(observed)
        if observed.shape != self.bits.shape:
            raise OperandError(f"expected {len(self)} observed results, got shape {observed.shape}")
        observed = _as_bits(observed, self.lanes * self.lane_bits, "observed results")
        ok = observed == self.bits
        if self.any_nan is not None:
            assert self.format is not None
            if self.lanes == 1:
                ok |= self.any_nan & _is_nan(self.format, observed)
            else:
                lane_ok = np.ones(ok.shape, dtype=bool)
                for lane in range(self.lanes):
                    shift = (self.lanes - 1 - lane) * self.lane_bits
                    mask = (1 << self.lane_bits) - 1
                    got = (observed >> shift) & mask
                    want = (self.bits >> shift) & mask
                    lane_ok &= (got == want) | (self.any_nan[:, lane] & _is_nan(self.format, got))
                ok = lane_ok
        for i, allowed in self.sets.items():
            ok[i] = contains(allowed, int(observed[i]))
        return ok


def _is_nan(fmt: FloatFormat, bits: np.ndarray) -> np.ndarray:
    """Elementwise: whether ``bits`` encode a NaN of ``fmt`` (§5.2.1, §5.2.3)."""
    bits = bits.astype(np.uint64) >> np.uint64(fmt.shift)
    magnitude = bits & np.uint64((1 << (fmt.field_bits - 1)) - 1) if fmt.signed else bits
    exponent_all_ones = np.uint64(fmt.exponent_field_max << fmt.mantissa_bits)
    mantissa_all_ones = np.uint64((1 << fmt.mantissa_bits) - 1)
    if fmt.nan is NanEncoding.IEEE:
        return magnitude > exponent_all_ones
    if fmt.nan is NanEncoding.ALL_ONES:
        return magnitude == exponent_all_ones | mantissa_all_ones
    return np.zeros(bits.shape, dtype=bool)


# ---------------------------------------------------------------------------------------------
# NaN lanes
# ---------------------------------------------------------------------------------------------


def _nan_lanes(bits: np.ndarray, nan: np.ndarray, result: Result, fmt: FloatFormat) -> np.ndarray | None:
    """Write the NaN result into the lanes marked ``nan``; return the ``any_nan`` mask.

    ``result`` is what the profile makes of the NaN (the scalar semantics asks the same
    ``profile.unspecified_nan``): fixed bits, or any NaN, kept as a mask over the canonical NaN.
    """
    if isinstance(result, int):
        bits[nan] = result
        return None
    if not nan.any():
        return None
    if not isinstance(result, AnyNaN):  # pragma: no cover - no profile makes anything else
        raise PtxSpecError(f"batched paths cannot represent the NaN result {result.describe()}")
    bits[nan] = canonical_nan(fmt)
    return nan.copy()


# ---------------------------------------------------------------------------------------------
# fma.rn.f32 (§9.7.3.6)
# ---------------------------------------------------------------------------------------------


def fma_rn_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.3.6 ``fma.rn.f32 d, a, b, c`` on arrays of .f32 bit patterns.

    "fma.f32 computes the product of a and b to infinite precision and then adds c to this
    product, again in infinite precision. The resulting value is then rounded to single precision
    using the rounding mode specified by .rnd." NaN results: "single-precision instructions return
    an unspecified NaN" (§9.7.3).

    How that is exact with host floats, rounding ONCE:

    1. ``p = a * b`` in binary64 is exact: two 24-bit significands give at most 48 bits, and the
       exponent lies in [-298, 256], inside binary64's normal range.
    2. ``s = p + c`` in binary64 is rounded; TwoSum gives the exact error ``e = (p + c) - s``.
    3. ``s`` is made *round-to-odd*: if ``e != 0`` and the last bit of ``s`` is even, step ``s``
       one binary64 ulp toward ``e``. Now ``s`` is p + c truncated to 53 bits with the last bit
       set when anything was dropped (a sticky bit).
    4. Converting that ``s`` to binary32 with round-to-nearest-even rounds correctly: round-to-odd
       at 53 >= 24 + 2 bits keeps enough information that the second rounding decides exactly as
       one rounding of p + c would (Boldo and Melquiond, "When double rounding is odd", 2005),
       including for subnormal and overflowing binary32 results.

    An exact zero sum has the sign of IEEE 754 §6.3 in binary64 already (+0 unless both addends
    are -0), and the conversion keeps it. Infinities follow binary64; a NaN operand, ``inf * 0``
    and ``inf - inf`` give NaN, which the profile turns into bits.
    """
    profile = profile_named(profile)
    a, b, c = (_as_bits(x, 32) for x in (a, b, c))
    with np.errstate(all="ignore"):
        p = a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)
        c64 = c.view(np.float32).astype(np.float64)
        s = p + c64
        # TwoSum (Knuth): e is exactly (p + c) - s whenever s is finite.
        c_virtual = s - p
        p_virtual = s - c_virtual
        e = (p - p_virtual) + (c64 - c_virtual)
        finite = np.isfinite(s)
        s_bits = s.view(np.uint64)
        even = (s_bits & np.uint64(1)) == 0
        inexact = finite & (e != 0) & even
        # One ulp toward e: toward larger magnitude (bits + 1) when e has the sign of s.
        away = np.signbit(e) == np.signbit(s)
        step = np.where(away, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))  # +1 or -1 mod 2^64
        s_bits = np.where(inexact, s_bits + step, s_bits)
        bits = s_bits.view(np.float64).astype(np.float32).view(np.uint32).copy()
    nan = np.isnan(s)
    any_nan = _nan_lanes(bits, nan, profile.unspecified_nan(F32), F32)
    return BatchResult(bits, any_nan, F32, 1, 32)


# ---------------------------------------------------------------------------------------------
# cvt.rn.f16.f32 (§9.7.9.21)
# ---------------------------------------------------------------------------------------------


def cvt_rn_f16_f32(a: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.f16.f32 d, a`` on an array of .f32 bit patterns.

    ".rn: round to nearest, ties to even"; subnormals are supported by default (sm_20+). numpy's
    binary32 -> binary16 conversion is IEEE 754 ``convertFormat`` with roundTiesToEven, gradual
    underflow and overflow to infinity, which is this rounding exactly. numpy carries NaN payloads
    through; the NaN rule is applied here instead: the result is the profile's unspecified f16 NaN,
    as in the scalar semantics.
    """
    profile = profile_named(profile)
    a = _as_bits(a, 32)
    with np.errstate(all="ignore"):
        bits = a.view(np.float32).astype(np.float16).view(np.uint16).copy()
    nan = (a & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    any_nan = _nan_lanes(bits, nan, profile.unspecified_nan(F16), F16)
    return BatchResult(bits, any_nan, F16, 1, 16)


# ---------------------------------------------------------------------------------------------
# cvt.rn.satfinite.e4m3x2.f32 (§9.7.9.21)
# ---------------------------------------------------------------------------------------------

#: 448.0f, the largest finite e4m3 value (MAX_NORM, 0x7e), as f32 bits.
_F32_448 = np.uint32(0x43E00000)
#: 2^-6 as f32 bits: the smallest normal e4m3 value; below it the e4m3 result is subnormal.
_F32_2_POW_M6 = np.uint32((127 - 6) << 23)
_F32_INF = np.uint32(0x7F800000)


def _e4m3_rn_satfinite(x: np.ndarray, profile: Profile) -> tuple[np.ndarray, np.ndarray | None]:
    """One .f32 lane to e4m3 bits (uint8): ``.rn`` with ``.satfinite``, on the f32 bit fields.

    e4m3: bias 7, 3 mantissa bits, smallest normal 2^-6, subnormal step 2^-9, MAX_NORM 448
    (§5.2.3). Round to nearest even keeps ``q`` (the bits above the target's last place) and adds
    one when the dropped part ``rem`` is above half, or exactly half with ``q`` odd.
    """
    sign = (x >> np.uint32(24)) & np.uint32(0x80)
    magnitude = x & np.uint32(0x7FFFFFFF)
    one = np.uint32(1)

    # Normal results (|x| >= 2^-6): the target's last place is bit 20 of the f32 encoding, and
    # exponent and mantissa fields are contiguous, so rounding the encoding rounds the value (a
    # carry out of the mantissa moves to the next binade). Rebias: f32 exponent field 127 + E,
    # e4m3 field 7 + E, i.e. (127 - 7) << 3 = 960 units of the shifted encoding.
    q = magnitude >> np.uint32(20)
    rem = magnitude & np.uint32(0xFFFFF)
    up = (rem > np.uint32(0x80000)) | ((rem == np.uint32(0x80000)) & ((q & one) == one))
    normal = q + up - np.uint32(960)

    # Subnormal results (|x| < 2^-6): units of 2^-9. The significand m (hidden bit set) is worth
    # m * 2^(E - 23), so m >> (14 - E) counts units of 2^-9; beyond a shift of 25 everything
    # (f32 subnormals included, whose hidden bit is wrongly set here but whose value < 2^-126)
    # rounds to zero.
    exponent_field = magnitude >> np.uint32(23)
    shift = np.minimum(np.uint32(141) - np.minimum(exponent_field, np.uint32(120)), np.uint32(25))
    m = (magnitude & np.uint32(0x7FFFFF)) | np.uint32(0x800000)
    q = m >> shift
    rem = m & ((one << shift) - one)
    half = one << (shift - one)
    up = (rem > half) | ((rem == half) & ((q & one) == one))
    subnormal = q + up

    out = np.where(magnitude < _F32_2_POW_M6, subnormal, normal)
    # .satfinite: "if the absolute value of the input (ignoring sign) is greater than MAX_NORM of
    # the target format, the result is sign-preserving MAX_NORM" -- infinities included.
    out = np.where(magnitude >= _F32_448, np.uint32(0x7E), out)
    out = (out | sign).astype(np.uint8)
    # "If the input value is NaN, the result is a NaN of the specified destination format."
    nan = magnitude > _F32_INF
    any_nan = _nan_lanes(out, nan, profile.unspecified_nan(E4M3), E4M3)
    return out, any_nan


def cvt_rn_satfinite_e4m3x2_f32(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.satfinite.e4m3x2.f32 d, a, b`` on arrays of .f32 bit patterns.

    "The converted values are packed in the destination operand d such that the value converted
    from input a is stored in the upper 8 bits of d and the value converted from input b is stored
    in the lower 8 bits of d" (``d[15:8] = convert(a); d[7:0] = convert(b)``). Each conversion
    rounds to nearest even, saturates to MAX_NORM (448) and keeps NaN a NaN.
    """
    profile = profile_named(profile)
    a, b = _as_bits(a, 32), _as_bits(b, 32)
    high, high_nan = _e4m3_rn_satfinite(a, profile)
    low, low_nan = _e4m3_rn_satfinite(b, profile)
    bits = (high.astype(np.uint16) << np.uint16(8)) | low.astype(np.uint16)
    any_nan = None
    if high_nan is not None or low_nan is not None:
        zeros = np.zeros(len(bits), dtype=bool)
        any_nan = np.stack([high_nan if high_nan is not None else zeros, low_nan if low_nan is not None else zeros], axis=1)
    return BatchResult(bits, any_nan, E4M3, 2, 8)


# ---------------------------------------------------------------------------------------------
# add, sub, mul .rn{.ftz}{.sat}.{f16, f16x2} (§9.7.4.1-3)
# ---------------------------------------------------------------------------------------------

#: 2^-14 - 2^-26 in binary64: an .ftz result is "tiny after rounding" (IEEE 754 §7.5, as
#: :func:`~ptxspec.semantics.numerics.round_exact` decides it) exactly when its magnitude lies
#: below this. 2^-14 is the smallest normal f16; its neighbour below on the 11-bit grid of an
#: unbounded exponent is 2^-14 - 2^-25, and the midpoint 2^-14 - 2^-26 is a tie that goes to
#: 2^-14 (even significand), so it is not tiny.
_F16_TINY = 2.0**-14 - 2.0**-26


def _half_element(
    op: Callable[[np.ndarray, np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray, *, ftz: bool, sat: bool, profile: Profile
) -> tuple[np.ndarray, np.ndarray | None]:
    """``op`` on arrays of .f16 bit patterns (uint16, any shape), rounded once to nearest even.

    Why binary64 arithmetic followed by numpy's binary64 -> binary16 conversion is the one
    correct rounding of the exact result:

    * an f16 value is m * 2^e with |m| < 2^11 and -24 <= e <= 5 (subnormals included), and
      binary16 -> binary64 is exact;
    * a sum or difference of two such values is an integer multiple of 2^-24 below 2^17 in
      magnitude: at most 41 significant bits, so binary64 (53 bits) holds it exactly;
    * a product has at most 22 significant bits and magnitude in [2^-48, 2^32]: exact as well;
    * so the float64 operation does not round, and ``astype(np.float16)`` is the single rounding.
      numpy converts binary64 -> binary16 (npy_doublebits_to_halfbits) with round to nearest
      even on the full binary64 significand, gradual underflow (subnormal results, ties to even
      there too) and overflow to infinity; tests/test_batch.py checks that conversion against
      MPFR on every f16 midpoint and against the scalar semantics on every input class.
    * IEEE 754 §6.3 zero signs are binary64's too: x + (-x) = +0 under round to nearest,
      -0 + -0 = -0, and a - b is a + (-b) (sub's zero difference is +0, as the scalar
      :func:`~ptxspec.semantics.floating_point.exact_sub`); a product's zero has the XOR sign.
    * NaN: a NaN operand, inf - inf and 0 * inf all make the binary64 result NaN; the profile
      decides its bits (§9.7.4: "Half-precision instructions return an unspecified NaN").
    * ``.ftz``: subnormal inputs become zeros of their sign before the operation; a result whose
      magnitude is below :data:`_F16_TINY` (tiny after rounding) becomes a zero of its sign.
    * ``.sat``: clamps to [0.0, 1.0], NaN and -0.0 to +0.0 (:func:`round_element`). Rounding is
      monotone and 0 and 1 are f16 values, so clamping the rounded result is clamping the exact
      one: on the bits, any sign bit or NaN gives +0, anything above 0x3c00 (1.0, +inf too) 1.0.
    """
    sign = np.uint16(0x8000)
    if ftz:
        # A zero exponent field is zero or subnormal: keep the sign only.
        a = np.where((a & np.uint16(0x7C00)) == 0, a & sign, a)
        b = np.where((b & np.uint16(0x7C00)) == 0, b & sign, b)
    with np.errstate(all="ignore"):
        exact = op(a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64))
        bits = exact.astype(np.float16).view(np.uint16).copy()
    if ftz:
        tiny = np.abs(exact) < _F16_TINY
        bits = np.where(tiny, bits & sign, bits)
    nan = np.isnan(exact)
    if sat:
        bits = np.where((bits & sign) != 0, np.uint16(0), bits)
        bits = np.where(bits > np.uint16(0x3C00), np.uint16(0x3C00), bits)  # +inf, +NaN included
        bits = np.where(nan, np.uint16(0), bits)
        return bits, None
    return bits, _nan_lanes(bits, nan, profile.unspecified_nan(F16), F16)


def half_arithmetic(op: Callable[[np.ndarray, np.ndarray], np.ndarray], *, packed: bool, ftz: bool, sat: bool) -> FastPath:
    """The batched ``{add,sub,mul}.rn{.ftz}{.sat}.{f16,f16x2}``: per element
    :func:`_half_element`; for .f16x2 "the half-word operands are then [operated on] in
    parallel" (§9.7.4), lane 0 being the upper half-word as :class:`Lanes` orders them."""

    def fast(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = profile_named(profile)
        if not packed:
            a, b = _as_bits(a, 16), _as_bits(b, 16)
            bits, any_nan = _half_element(op, a, b, ftz=ftz, sat=sat, profile=profile)
            return BatchResult(bits, any_nan, F16, 1, 16)
        a, b = _as_bits(a, 32), _as_bits(b, 32)
        halves = [np.stack([(x >> np.uint32(16)).astype(np.uint16), (x & np.uint32(0xFFFF)).astype(np.uint16)], axis=1) for x in (a, b)]
        lanes, any_nan = _half_element(op, *halves, ftz=ftz, sat=sat, profile=profile)
        bits = (lanes[:, 0].astype(np.uint32) << np.uint32(16)) | lanes[:, 1].astype(np.uint32)
        return BatchResult(bits, any_nan, F16, 2, 16)

    return fast


def _half_paths() -> dict[str, FastPath]:
    """Every .rn form (and the default-rounding spelling, which is .rn) of add, sub, mul on
    .f16/.f16x2, with and without .ftz and .sat."""
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
    paths = {}
    for name, op in ops.items():
        for rnd in ("", ".rn"):
            for ftz in (False, True):
                for sat in (False, True):
                    for packed in (False, True):
                        text = f"{name}{rnd}{'.ftz' if ftz else ''}{'.sat' if sat else ''}.f16{'x2' if packed else ''}"
                        paths[text] = half_arithmetic(op, packed=packed, ftz=ftz, sat=sat)
    return paths


# ---------------------------------------------------------------------------------------------
# mul.wide and mad.wide .{s32, u32} (§9.7.1.3, §9.7.1.4)
# ---------------------------------------------------------------------------------------------

_U64_MASK_32 = np.uint64(0xFFFFFFFF)


def _widen(x: np.ndarray, signed: bool) -> np.ndarray:
    """32-bit patterns as 64-bit two's-complement patterns (uint64): sign- or zero-extended."""
    if signed:
        # Sign extension: read the bits as int32, widen the value to int64, take its bits.
        return x.view(np.int32).astype(np.int64).view(np.uint64)
    return x.astype(np.uint64)


def integer_wide(*, signed: bool, add: bool) -> FastPath:
    """``mul.wide.{s32,u32} d, a, b`` / ``mad.wide.{s32,u32} d, a, b, c``: "the product of a and
    b is twice the input width"; ``.wide`` "computes the full 64-bit result" (§9.7.1.3), and
    mad adds the 64-bit c (§9.7.1.4).

    All arithmetic is on uint64 two's-complement patterns, where numpy's array multiplication and
    addition wrap modulo 2^64 silently. The sign-extended product of two s32 values fits in
    64 bits exactly (``|a*b| <= 2^62``), and so does a u32 product (< 2^64): the multiplication never
    wraps, and its low 64 bits are the product's two's-complement bits either way. Adding c
    modulo 2^64 is the two's-complement sum with wraparound (mad.wide has no .sat or .cc)."""

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, profile: Profile | str = "spec") -> BatchResult:
        profile_named(profile)
        a, b = _widen(_as_bits(a, 32), signed), _widen(_as_bits(b, 32), signed)
        with np.errstate(all="ignore"):
            d = a * b
            if add:
                d = d + _as_bits(c, 64).astype(np.uint64)
        return BatchResult(d, None, None, 1, 64)

    if add:
        return fast

    def product(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        return fast(a, b, None, profile=profile)

    return product


# ---------------------------------------------------------------------------------------------
# The front door
# ---------------------------------------------------------------------------------------------

FastPath = Callable[..., BatchResult]

#: Form text -> batched implementation ``fn(*sources, profile)``.
FAST_PATHS: dict[str, FastPath] = {
    "fma.rn.f32": fma_rn_f32,
    "cvt.rn.f16.f32": cvt_rn_f16_f32,
    "cvt.rn.satfinite.e4m3x2.f32": cvt_rn_satfinite_e4m3x2_f32,
    **_half_paths(),
    "mul.wide.s32": integer_wide(signed=True, add=False),
    "mul.wide.u32": integer_wide(signed=False, add=False),
    "mad.wide.s32": integer_wide(signed=True, add=True),
    "mad.wide.u32": integer_wide(signed=False, add=True),
}


def has_fast_path(form: Form | str) -> bool:
    from ptxspec.semantics.instructions import as_form

    return as_form(form).text in FAST_PATHS


def _as_bits(values, width: int, name: str = "operand") -> np.ndarray:
    """``values`` as a 1-D array of unsigned ``width``-bit patterns, checking that they fit."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise OperandError(f"{name}: expected a 1-D array of bit patterns, got shape {array.shape}")
    dtype = _dtype(width)
    if array.dtype == dtype:
        return array
    if array.size and array.dtype.kind not in "uiO":
        raise OperandError(f"{name}: expected integer bit patterns, got dtype {array.dtype}")
    if array.size and (min(int(array.min()), 0) < 0 or int(array.max()) >> width):
        raise OperandError(f"{name}: values do not fit in {width} bits")
    return array.astype(dtype)


def evaluate_batch(form: Form | str, sources: Sequence[np.ndarray], profile: Profile | str = "spec") -> BatchResult:
    """The results of ``form`` on ``n`` input vectors: ``sources[k][i]`` is source operand ``k``
    of vector ``i``. Same meaning as calling :func:`~ptxspec.semantics.instructions.evaluate` on
    each vector; a fast path is used where one exists, else the readable semantics is looped.
    """
    from ptxspec.semantics.instructions import as_form, check_source_count, evaluate

    form = as_form(form)
    profile = profile_named(profile)
    operands = check_source_count(form, len(sources))
    if len(form.destinations) != 1:
        raise PtxSpecError(f"{form.text}: batched evaluation supports forms with one destination operand")
    arrays = [_as_bits(s, register_bits(o.type), f"operand {o.name} of {form.text}") for s, o in zip(sources, operands)]
    if len({len(x) for x in arrays}) > 1:
        raise OperandError(f"{form.text}: source arrays differ in length: {[len(x) for x in arrays]}", where=form.text)
    fast = FAST_PATHS.get(form.text)
    if fast is not None:
        return _in_blocks(fast, arrays, profile)
    return _loop(form, arrays, profile, evaluate)


#: Vectors per call of a fast path: small enough that its temporaries stay in cache (about three
#: times faster than whole 10^6-element arrays), large enough that numpy's per-call cost vanishes.
BLOCK = 1 << 15


def _in_blocks(fast: FastPath, arrays: list[np.ndarray], profile: Profile) -> BatchResult:
    """Run ``fast`` on consecutive blocks of the inputs and join the results. Elementwise
    semantics make this the same as one call on the whole arrays."""
    n = len(arrays[0])
    if n <= BLOCK:
        return fast(*arrays, profile=profile)
    parts = [fast(*(x[i : i + BLOCK] for x in arrays), profile=profile) for i in range(0, n, BLOCK)]
    first = parts[0]
    any_nan = None
    if any(p.any_nan is not None for p in parts):
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))
        any_nan = np.concatenate([p.any_nan if p.any_nan is not None else np.zeros(shape(len(p)), dtype=bool) for p in parts])
    return BatchResult(np.concatenate([p.bits for p in parts]), any_nan, first.format, first.lanes, first.lane_bits)


def _packed_by_qualifier(form: Form, width: int):
    """The packed type a bit-size destination holds, read from the form's type qualifiers (the
    half-precision instructions declare ``.f16x2`` operands as ``.b32`` registers, §9.7.4)."""
    for _, token in form.choices:
        packed = PACKED_TYPES.get(token)
        if packed is not None and packed.count * packed.lane_bits == width:
            return packed
    return None


def _loop(form: Form, arrays: list[np.ndarray], profile: Profile, evaluate) -> BatchResult:
    """The fallback: the readable semantics, one vector at a time."""
    destination = form.destinations[0]
    width = register_bits(destination.type)
    packed = PACKED_TYPES.get(destination.type) or _packed_by_qualifier(form, width)
    n = len(arrays[0]) if arrays else 0
    bits = np.zeros(n, dtype=_dtype(width))
    lanes = packed.count if packed else 1
    lane_bits = packed.lane_bits if packed else width
    any_nan = np.zeros((n, lanes), dtype=bool)
    sets: dict[int, Allowed] = {}
    fmt: FloatFormat | None = FORMATS.get(packed.element if packed else destination.type)
    columns = [x.tolist() for x in arrays]
    for i in range(n):
        (result,) = evaluate(form, [col[i] for col in columns], profile)
        if isinstance(result, int):
            bits[i] = result
        elif isinstance(result, AnyNaN) and lanes == 1:
            bits[i], any_nan[i, 0], fmt = canonical_nan(result.format), True, result.format
        elif isinstance(result, Lanes) and all(isinstance(r, (int, AnyNaN)) for r in result.lanes):
            value = 0
            for lane, r in enumerate(result.lanes):
                if isinstance(r, AnyNaN):
                    any_nan[i, lane], fmt, r = True, r.format, canonical_nan(r.format)
                value = (value << result.lane_bits) | r
            bits[i] = value
        else:
            sets[i] = result
    mask = (any_nan[:, 0] if lanes == 1 else any_nan) if any_nan.any() else None
    return BatchResult(bits, mask, fmt, lanes, lane_bits, sets)


__all__ = [
    "BatchResult",
    "FAST_PATHS",
    "cvt_rn_f16_f32",
    "cvt_rn_satfinite_e4m3x2_f32",
    "evaluate_batch",
    "fma_rn_f32",
    "half_arithmetic",
    "has_fast_path",
    "integer_wide",
]
