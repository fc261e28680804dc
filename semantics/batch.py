"""Batched evaluation: one instruction form applied to many inputs at once, as numpy arrays.

The readable semantics (:func:`ptxspec.semantics.instructions.evaluate`) takes one vector of
source bit patterns and returns one result. Golden-vector generation needs millions of results,
so this module evaluates whole arrays of bit patterns. It adds no meaning of its own:

* a *fast path* is a numpy transcription of one form's semantics, written from the manual and
  IEEE 754, and ``tests/test_batch.py`` proves it bit-identical to the readable semantics on every
  input class (zeros, infinities, NaN payloads, subnormals, ties, overflow, random bit patterns);
* every other form falls back to looping the readable semantics over the arrays.

Fast paths exist for ``fma.rn.f32`` (§9.7.3.6), ``{add,sub,mul}{.rn}{.ftz}{.sat}.{f16,f16x2}``
(§9.7.4.1-3, on binary64 arithmetic) and ``{mul,mad}.wide.{s32,u32}`` (§9.7.1.3, §9.7.1.4), each
written for its forms; and, on the one batched rounding routine of
:mod:`ptxspec.semantics.batch_rounding` (the twin of numerics.round_value), for every form of the
exhaustive silicon spaces (docs/silicon-exhaustive.rst) and their packed relatives:

* ``{add,sub,mul}{.rn}{.ftz}{.sat}.{bf16,bf16x2}`` (§9.7.4.1-3);
* ``{min,max}{.ftz}{.NaN}{.xorsign.abs}.{f16,bf16,f16x2,bf16x2}`` (§9.7.4.7-8);
* ``cvt`` from ``.f32`` (§9.7.9.21): to ``.f16``/``.bf16``/``.tf32`` in every rounding mode with
  ``.ftz``/``.sat``/``.relu``/``.satfinite``; to every integer type with ``.rni``/``.rzi``/
  ``.rmi``/``.rpi``, ``.ftz``, ``.sat``; and the pairs ``.f16x2``/``.bf16x2``/``.e4m3x2``/``.e5m2x2``.

:data:`FAST_PATHS` maps form text to path; :func:`fast_path` is what :func:`evaluate_batch` asks.

Where the manual leaves a result open (an f32 NaN is "an unspecified NaN", §9.7.3), the scalar
semantics returns an :class:`~ptxspec.semantics.results.AnyNaN` set. A :class:`BatchResult` keeps
that information as a boolean mask ``any_nan`` beside the bits, so that nothing is lost in the
batch: :meth:`BatchResult.result` rebuilds exactly the scalar result of element ``i``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence

import attrs
import numpy as np

from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, NanEncoding, register_bits
from ptxspec.semantics import batch_rounding, data_movement
from ptxspec.semantics.numerics import Rounding, canonical_nan
from ptxspec.profiles import Profile, profile_named
from ptxspec.semantics.results import Allowed, AnyNaN, Lanes, Result, contains

F32 = FORMATS["f32"]
F16 = FORMATS["f16"]
TF32 = FORMATS["tf32"]


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
# The exhaustive spaces: every form through the one batched rounding routine
# ---------------------------------------------------------------------------------------------
#
# The paths below cover every form of the two exhaustive silicon spaces (docs/silicon-exhaustive.rst): the scalar
# 16-bit add/sub/mul/min/max forms and the conversions of one or two .f32 sources to .f16, .bf16,
# .tf32, .e4m3x2, .e5m2x2, .f16x2, .bf16x2 and the integer types. Each one follows the scalar
# function step by step (decode, NaN rule, exact operation, round once) with the batched decode
# and rounding of :mod:`ptxspec.semantics.batch_rounding`, and reads its decisions from the
# profile, as the scalar semantics does (:func:`~ptxspec.semantics.data_movement.flushes_input`,
# ``profile.cvt_integer_nan``, ``profile.cvt_nan_from_f32_batch``, :meth:`Profile.unspecified_nan`).


def covers(profile: Profile) -> bool:
    """Whether the paths below know ``profile``'s decisions: it says so (``profile.batch_paths``,
    set where tests/test_batch_exhaustive.py proves them under it: spec and sm_90), and a chip's
    open cvt NaN comes with its batched form. Any other profile is looped through the scalar
    semantics, so a new profile can never silently get another chip's decisions."""
    return profile.batch_paths and (profile.cvt_nan is None or profile.cvt_nan_from_f32_batch is not None)


def _covered(profile: Profile | str) -> Profile:
    """The profile, if the paths below know its decisions (:func:`covers`)."""
    profile = profile_named(profile)
    if not covers(profile):
        raise PtxSpecError(f"the batched paths do not know the decisions of profile {profile.name!r}; use evaluate_batch")
    return profile


def _open_nan(fmt: FloatFormat, profile: Profile) -> tuple[int, bool]:
    """The chapter's "unspecified NaN" as ``(bits, open)``: the profile's NaN, or (spec) the
    canonical NaN standing for "any NaN", with ``open`` set so the lanes get an any_nan mask."""
    rule = profile.unspecified_nan(fmt)
    if isinstance(rule, int):
        return rule, False
    return canonical_nan(fmt), True


def _lanes_result(parts: list[tuple[np.ndarray, np.ndarray | None]], fmt: FloatFormat, lane_bits: int) -> BatchResult:
    """Pack per-lane (bits, open-NaN mask) pairs into one register, lane 0 the most significant
    (the first source's result lands in the upper half, as every packed form of the manual)."""
    dtype = _dtype(lane_bits * len(parts))
    bits = parts[0][0].astype(dtype)
    for lane_bits_array, _ in parts[1:]:
        bits = (bits << dtype.type(lane_bits)) | lane_bits_array.astype(dtype)
    masks = [m for _, m in parts]
    any_nan = None
    if any(m is not None and m.any() for m in masks):
        zeros = np.zeros(len(bits), dtype=bool)
        stacked = np.stack([m if m is not None else zeros for m in masks], axis=1)
        any_nan = stacked[:, 0] if len(parts) == 1 else stacked
    return BatchResult(bits, any_nan, fmt, len(parts), lane_bits)


# --- §9.7.4.1-3 add, sub, mul on .f16/.bf16 (and their x2 forms) ---------------------------

#: How far the larger addend is shifted left before the smaller one is reduced to a sticky unit
#: (see :func:`_exact_sum`); at least precision + 1 for every 16-bit format (f16: 11, bf16: 8).
_ALIGN = 40


def _exact_sum(sa, ma, ea, sb, mb, eb):
    """``a + b`` for finite decoded operands: the batched :func:`~ptxspec.semantics.numerics.exact_sum`
    under round to nearest, as (sign, significand, exponent).

    Aligning both significands on the smaller exponent is exact but, for bf16's wide exponent
    range, would need up to 260 bits. So the larger operand ``hi`` is shifted left by at most
    :data:`_ALIGN` places (onto the exponent ``base``); if the exponents differ by more, the
    smaller operand ``lo`` is replaced by one unit at ``base`` (zero stays zero). That changes the
    value but never its rounding: then ``hi`` is normal (its exponent is above the subnormal one),
    so ``|hi| >= 2^(e_hi + p - 1)`` and ``|lo| < 2^(e_hi - 2)`` (``d > _ALIGN >= p + 1``); the
    sum lies in the binade of ``hi`` or the one below, where the rounding grid of the format (and
    the unbounded grid of .ftz's tininess test) has spacing at least ``2^(e_hi - 1)``, so every
    rounding boundary (grid point or midpoint) is a multiple of ``2^(e_hi - 2)``. ``hi`` is such
    a multiple, and the exact sum and the replaced one both lie strictly between ``hi`` and the
    next multiple of ``2^(e_hi - 2)`` on the same side: every mode rounds them alike.

    A zero operand has the smallest exponent (batch_rounding.decode gives a zero exponent field
    the subnormal exponent, as numerics.decode), so it is never the larger one unless both are
    on that exponent, where nothing is shifted. The zero sum takes IEEE 754 §6.3's sign: +0 unless
    both addends are zeros of the same sign (round to nearest; the 16-bit forms have no other
    mode). Selections are arithmetic (multiplying by 0/1 masks) rather than np.where, whose
    branches mispredict on random signs.
    """
    d = np.abs(ea - eb)
    k = np.minimum(d, _ALIGN)
    base = np.maximum(ea, eb) - k

    def aligned(s, m, e):
        shift = e - base  # k for the larger operand, k - d <= 0 for the smaller one
        kept = shift >= 0
        # A shift below zero (d > _ALIGN, the smaller operand): one unit, or zero.
        m = np.minimum(m, 1 + kept * (1 << 62))
        return (m << (shift * kept)) * (1 - 2 * s.astype(np.int64))

    total = aligned(sa, ma, ea) + aligned(sb, mb, eb)
    sign = (total < 0) | (sa & sb & (ma == 0) & (mb == 0))
    return sign, np.abs(total), base


def _half_arith_element(opcode: str, fmt: FloatFormat, a: np.ndarray, b: np.ndarray, *, ftz: bool, sat: bool, profile: Profile):
    """One element of :func:`~ptxspec.semantics.half_precision.arithmetic_element` for add, sub
    and mul (round to nearest even): decode (.ftz flushes subnormal inputs), the NaN rule (a NaN
    operand, inf - inf and 0 * inf are invalid), the exact operation, one rounding with .ftz
    (tiny results) and .sat ([0.0, 1.0], NaN -> +0.0); other NaNs are the profile's unspecified
    NaN (§9.7.4: "Half-precision instructions return an unspecified NaN")."""
    sa, ma, ea, na, ia = batch_rounding.decode(fmt, a, ftz=ftz)
    sb, mb, eb, nb, ib = batch_rounding.decode(fmt, b, ftz=ftz)
    if opcode == "sub":  # a - b = a + (-b) (exact_sub)
        sb = ~sb
    if opcode == "mul":
        invalid = na | nb | (ia & (mb == 0) & ~ib) | (ib & (ma == 0) & ~ia)
        infinite = ia | ib
        sign, significand, exponent = sa ^ sb, ma * mb, ea + eb
    else:
        invalid = na | nb | (ia & ib & (sa != sb))
        infinite = ia | ib
        sign, significand, exponent = _exact_sum(sa, ma, ea, sb, mb, eb)
        sign = np.where(ia, sa, np.where(ib, sb, sign))
    nan_bits, open_ = _open_nan(fmt, profile)
    bits = batch_rounding.round_bits(sign, significand, exponent, fmt, Rounding.RN, ftz=ftz, sat=sat, infinite=infinite, nan=invalid, nan_bits=nan_bits)
    return bits, (invalid if open_ and not sat else None)


def _split(x: np.ndarray, lanes: int, lane_bits: int) -> list[np.ndarray]:
    """The lanes of packed registers, lane 0 (the most significant) first."""
    mask = (1 << lane_bits) - 1
    return [(x.astype(np.uint64) >> np.uint64((lanes - 1 - i) * lane_bits)) & np.uint64(mask) for i in range(lanes)]


def half_arithmetic_exact(form: Form) -> FastPath:
    """The batched §9.7.4.1-3 ``{add,sub,mul}{.rn}{.ftz}{.sat}.{f16,bf16,f16x2,bf16x2}`` on the
    integer rounding routine (per lane :func:`_half_arith_element`)."""
    fmt = FORMATS["bf16"] if form["type"].startswith("bf16") else F16
    lanes = 2 if form["type"].endswith("x2") else 1
    ftz, sat = "ftz" in form, "sat" in form

    def fast(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = _covered(profile)
        parts = [_half_arith_element(form.opcode, fmt, x, y, ftz=ftz, sat=sat, profile=profile) for x, y in zip(_split(a, lanes, 16), _split(b, lanes, 16))]
        return _lanes_result(parts, fmt, 16)

    return fast


# --- §9.7.4.7-8 min, max on .f16/.bf16 --------------------------------------------------------


def _min_max_element(form: Form, fmt: FloatFormat, a: np.ndarray, b: np.ndarray, profile: Profile):
    """One element of the pseudo-code of §9.7.4.7-8 (the scalar
    :func:`~ptxspec.semantics.floating_point.min_max_element`), on bit patterns::

        if (.xorsign) { xorsign = getSignBit(a) ^ getSignBit(b); if (.abs) { a = |a|; b = |b|; } }
        if (.NaN && (isNaN(a) || isNaN(b)))    d = canonical NaN;
        else if (isNaN(a) && isNaN(b))         d = NaN;       // the chapter's unspecified NaN
        else if (isNaN(a))                     d = b;
        else if (isNaN(b))                     d = a;
        else                                   d = (a < b) ? a : b;     // max: (a > b)
        if (.xorsign && !isNaN(d)) { setSignBit(d, xorsign); }

    No rounding happens: d is one of the (.ftz-flushed) operands, which the scalar function
    re-encodes unchanged. The order ``a < b`` is that of the values with "+0.0 > -0.0": on the
    bits, a magnitude ``m`` with the sign clear is the key ``m`` and with the sign set ``-m - 1``
    (so -0.0 is -1, below +0.0's 0, and above every negative non-zero value).
    """
    sign_bit = 1 << (fmt.width - 1)
    magnitude_mask = sign_bit - 1
    exponent_mask = fmt.exponent_field_max << fmt.mantissa_bits
    a, b = a.astype(np.int64), b.astype(np.int64)
    if "ftz" in form:  # a subnormal reads as a zero of its sign
        a = np.where((a & exponent_mask) == 0, a & sign_bit, a)
        b = np.where((b & exponent_mask) == 0, b & sign_bit, b)
    xorsign = (a ^ b) & sign_bit
    if "abs" in form:
        a, b = a & magnitude_mask, b & magnitude_mask
    a_nan, b_nan = (a & magnitude_mask) > exponent_mask, (b & magnitude_mask) > exponent_mask

    def key(x):
        # m with the sign clear, ~m = -m - 1 with it set (x >> (width - 1) is the sign bit).
        return (x & magnitude_mask) ^ -(x >> (fmt.width - 1))

    key_a, key_b = key(a), key(b)
    pick_a = key_a < key_b if form.opcode == "min" else key_b < key_a
    d = b ^ ((a ^ b) & -pick_a.astype(np.int64))  # a where pick_a, else b (no branches)
    d = np.where(a_nan, b, np.where(b_nan, a, d))
    if "xorsign" in form:
        d = (d & magnitude_mask) | xorsign
    both = a_nan & b_nan
    open_mask = None
    if "NaN" in form:
        d = np.where(a_nan | b_nan, canonical_nan(fmt), d)
    else:
        nan_bits, open_ = _open_nan(fmt, profile)
        d = np.where(both, nan_bits, d)
        open_mask = both if open_ else None
    return d.astype(np.uint64), open_mask


def half_min_max(form: Form) -> FastPath:
    """The batched §9.7.4.7-8 ``{min,max}{.ftz}{.NaN}{.xorsign.abs}.{f16,bf16,f16x2,bf16x2}``
    (per lane :func:`_min_max_element`)."""
    fmt = FORMATS["bf16"] if form["type"].startswith("bf16") else F16
    lanes = 2 if form["type"].endswith("x2") else 1

    def fast(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = _covered(profile)
        parts = [_min_max_element(form, fmt, x, y, profile) for x, y in zip(_split(a, lanes, 16), _split(b, lanes, 16))]
        return _lanes_result(parts, fmt, 16)

    return fast


# --- §9.7.9.21 cvt from .f32 -------------------------------------------------------------------


def _conversion_nan(form: Form, dst: FloatFormat, a: np.ndarray, profile: Profile) -> tuple[int | np.ndarray, bool]:
    """The open NaN of a conversion from .f32 (data_movement.conversion_nan, after the .sat,
    .relu and no-NaN cases that :func:`~batch_rounding.round_bits` applies itself), as
    ``(bits, open)``: without a chip's choice the chapter's unspecified NaN (spec: open, any NaN of
    ``dst``); with one, what ``profile.cvt_nan`` says for an .f32 source, in its batched form
    ``profile.cvt_nan_from_f32_batch`` (sm_90: :func:`ptxspec.profiles.sm_90.cvt.cvt_nan_from_f32_batch`)."""
    if profile.cvt_nan is None:
        return _open_nan(dst, profile)
    if profile.cvt_nan_from_f32_batch is None:
        raise AssertionError("a profile that covers() the batch paths has cvt_nan's batched form")
    return profile.cvt_nan_from_f32_batch(form, dst, a), False


def _convert_f32(form: Form, dst: FloatFormat, a: np.ndarray, profile: Profile, *, ftz: bool, sat: bool):
    """data_movement.convert of .f32 elements: decode (.ftz flushes the input where the profile
    says it does: data_movement.flushes_input), the NaN rule, one rounding by the form's .rnd with
    .sat, .satfinite and .relu. (.ftz on the result applies to .f32 results only, none here.)"""
    flush = ftz and data_movement.flushes_input(form, profile)
    sign, significand, exponent, nan, infinite = batch_rounding.decode(F32, a, ftz=flush)
    relu, satfinite = "relu" in form, "satfinite" in form
    nan_bits, open_ = _conversion_nan(form, dst, a, profile)
    bits = batch_rounding.round_bits(
        sign, significand, exponent, dst, Rounding(form.get("rnd") or "rn"),
        sat=sat, satfinite=satfinite, relu=relu, infinite=infinite, nan=nan, nan_bits=nan_bits,
    )  # fmt: skip
    fixed = sat or relu or dst.nan is NanEncoding.NONE
    return bits, (nan if open_ and not fixed else None)


def cvt_f32_to_float(form: Form) -> FastPath:
    """The batched §9.7.9.21 ``cvt.frnd{.ftz}{.sat}{.relu}{.satfinite}.{f16,bf16,tf32}.f32``
    (data_movement.cvt's float-to-float branch)."""
    dst = FORMATS[form["dtype"]]

    def fast(a: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = _covered(profile)
        return _lanes_result([_convert_f32(form, dst, a, profile, ftz="ftz" in form, sat="sat" in form)], dst, dst.width)

    return fast


def cvt_f32_pair(form: Form) -> FastPath:
    """The batched ``cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`` and
    ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`` (data_movement._convert_all): a
    converted into the upper lane, b into the lower; no .ftz or .sat on these forms."""
    packed = PACKED_TYPES[form["dtype"]]
    dst = FORMATS[packed.element]

    def fast(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = _covered(profile)
        high = _convert_f32(form, dst, a, profile, ftz=False, sat=False)
        # The exhaustive checker passes one array as both sources: convert it once.
        low = high if b is a else _convert_f32(form, dst, b, profile, ftz=False, sat=False)
        parts = [high, low]
        return _lanes_result(parts, dst, packed.lane_bits)

    return fast


def cvt_f32_to_integer(form: Form) -> FastPath:
    """The batched data_movement.float_to_integer for an .f32 source: decode (.ftz flushing as
    the profile says), round to an integer by .irnd (batch_rounding.round_integer), clamp to the
    destination's range (infinities too; "the result is clamped to the destination range by
    default; i.e, .sat is redundant"), and NaN -> 0 ("In float-to-integer conversions, NaN inputs
    are converted to 0", §9.7.9.21) or the profile's measured integer (``profile.cvt_integer_nan``)."""
    dtype = form["dtype"]
    integer = INTEGER_TYPES[dtype]
    mode = data_movement.INTEGER_ROUNDING[form["rnd"]]

    def fast(a: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
        profile = _covered(profile)
        flush = "ftz" in form and data_movement.flushes_input(form, profile)
        sign, significand, exponent, nan, infinite = batch_rounding.decode(F32, a, ftz=flush)
        magnitude, huge = batch_rounding.round_integer(sign, significand, exponent, mode)
        bits = batch_rounding.saturate_integer(sign, magnitude, huge | infinite, integer.bits, integer.signed)
        nan_value = 0 if profile.cvt_integer_nan is None else data_movement.integer_bits(dtype, profile.cvt_integer_nan(form))
        bits = np.where(nan, np.uint64(nan_value), bits)
        return BatchResult(bits.astype(_dtype(integer.bits)), None, None, 1, integer.bits)

    return fast


# --- Which forms have these paths ----------------------------------------------------------------

_HALF_TYPES = frozenset({"f16", "bf16", "f16x2", "bf16x2"})
_CVT_FLOAT_DESTINATIONS = frozenset({"f16", "bf16", "tf32"})
_CVT_INTEGER_DESTINATIONS = frozenset({"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"})
_CVT_PAIR_DESTINATIONS = frozenset({"f16x2", "bf16x2", "e4m3x2", "e5m2x2"})


def _exact_path(form: Form) -> FastPath | None:
    """The path of this section for ``form``, or None."""
    key = form.family.key
    if key in ("add.h", "sub.h", "mul.h") and form["type"] in _HALF_TYPES and "relu" not in form:
        return half_arithmetic_exact(form)
    if key in ("min.h", "max.h") and form["type"] in _HALF_TYPES and "relu" not in form:
        return half_min_max(form)
    if key == "cvt" and form.get("atype") == "f32":
        rnd = form.get("rnd")
        if form["dtype"] in _CVT_FLOAT_DESTINATIONS and rnd in ("rn", "rna", "rz", "rm", "rp"):
            return cvt_f32_to_float(form)
        if form["dtype"] in _CVT_INTEGER_DESTINATIONS and rnd in data_movement.INTEGER_ROUNDING:
            return cvt_f32_to_integer(form)
    if key in ("cvt.x2.f32", "cvt.f8x2.f32") and form["dtype"] in _CVT_PAIR_DESTINATIONS and form.get("rnd") in ("rn", "rz"):
        return cvt_f32_pair(form)
    return None


_EXACT_CACHE: dict[str, FastPath | None] = {}


def fast_path(form: Form, profile: Profile | str = "spec") -> FastPath | None:
    """The batched implementation that :func:`evaluate_batch` uses for ``form`` under ``profile``,
    or None (then it loops the readable semantics)."""
    profile = profile_named(profile)
    if form.text in _EXPLICIT:
        return _EXPLICIT[form.text]
    if not covers(profile):
        return None
    if form.text not in _EXACT_CACHE:
        _EXACT_CACHE[form.text] = _exact_path(form)
    return _EXACT_CACHE[form.text]


# ---------------------------------------------------------------------------------------------
# The front door
# ---------------------------------------------------------------------------------------------

FastPath = Callable[..., BatchResult]

#: The paths written for one form each (their own numpy transcriptions, proved above).
_EXPLICIT: dict[str, FastPath] = {
    "fma.rn.f32": fma_rn_f32,
    **_half_paths(),
    "mul.wide.s32": integer_wide(signed=True, add=False),
    "mul.wide.u32": integer_wide(signed=False, add=False),
    "mad.wide.s32": integer_wide(signed=True, add=True),
    "mad.wide.u32": integer_wide(signed=False, add=True),
}


class FastPathTable(Mapping):
    """Form text -> batched implementation ``fn(*sources, profile=...)``: the explicit paths, and
    the paths of the exhaustive spaces (:func:`_exact_path`), built on first use. Iterating lists
    them all (it parses every candidate spelling once, so it takes a moment)."""

    def __getitem__(self, text: str) -> FastPath:
        if text in _EXPLICIT:
            return _EXPLICIT[text]
        path = _exact_path_for_text(text)
        if path is None:
            raise KeyError(text)
        return path

    def __iter__(self):
        return iter(sorted(set(_EXPLICIT) | set(_exact_texts())))

    def __len__(self) -> int:
        return len(set(_EXPLICIT) | set(_exact_texts()))


FAST_PATHS = FastPathTable()


@functools.cache
def _exact_path_for_text(text: str) -> FastPath | None:
    from ptxspec.semantics.instructions import as_form

    try:
        form = as_form(text)
    except PtxSpecError:
        return None
    return _exact_path(form) if form.text == text else None


@functools.cache
def _exact_texts() -> tuple[str, ...]:
    """Every form (canonical text) that :func:`_exact_path` covers: the spellings of add, sub,
    mul, min, max on the 16-bit types and of cvt from .f32, parsed by the catalogue."""
    from ptxspec.spec.catalogue import CATALOGUE

    flags = lambda *names: itertools.product(*(("", "." + n) for n in names))  # noqa: E731
    candidates = []
    for op in ("add", "sub", "mul"):
        candidates += [f"{op}{r}{f}{s}.{t}" for r, f, s in flags("rn", "ftz", "sat") for t in sorted(_HALF_TYPES)]
    for op in ("min", "max"):
        candidates += [f"{op}{f}{n}{x}.{t}" for f, n, x in flags("ftz", "NaN", "xorsign.abs") for t in sorted(_HALF_TYPES)]
    destinations = sorted(_CVT_FLOAT_DESTINATIONS | _CVT_INTEGER_DESTINATIONS | _CVT_PAIR_DESTINATIONS)
    for rnd in ("rn", "rna", "rz", "rm", "rp", *data_movement.INTEGER_ROUNDING):
        for mods in flags("ftz", "sat", "relu", "satfinite"):
            candidates += [f"cvt.{rnd}{''.join(mods)}.{d}.f32" for d in destinations]
    found = set()
    for text in candidates:
        try:
            form = CATALOGUE.parse(text)
        except PtxSpecError:
            continue
        if form.text not in _EXPLICIT and _exact_path(form) is not None:
            found.add(form.text)
    return tuple(sorted(found))


def cvt_rn_f16_f32(a: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.f16.f32 d, a`` on an array of .f32 bit patterns (:func:`cvt_f32_to_float`)."""
    return FAST_PATHS["cvt.rn.f16.f32"](a, profile=profile)


def cvt_rn_satfinite_e4m3x2_f32(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.satfinite.e4m3x2.f32 d, a, b`` on arrays of .f32 bit patterns
    (:func:`cvt_f32_pair`): d[15:8] = convert(a), d[7:0] = convert(b)."""
    return FAST_PATHS["cvt.rn.satfinite.e4m3x2.f32"](a, b, profile=profile)


def has_fast_path(form: Form | str, profile: Profile | str = "spec") -> bool:
    from ptxspec.semantics.instructions import as_form

    return fast_path(as_form(form), profile) is not None


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
    fast = fast_path(form, profile)
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
    parts = [fast(*_block(arrays, i), profile=profile) for i in range(0, n, BLOCK)]
    first = parts[0]
    any_nan = None
    if any(p.any_nan is not None for p in parts):
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))
        any_nan = np.concatenate([p.any_nan if p.any_nan is not None else np.zeros(shape(len(p)), dtype=bool) for p in parts])
    return BatchResult(np.concatenate([p.bits for p in parts]), any_nan, first.format, first.lanes, first.lane_bits)


def _block(arrays: list[np.ndarray], start: int) -> list[np.ndarray]:
    """Each array's block at ``start``; an array passed as several operands gives one block
    object for all of them (a path may then compute their shared work once)."""
    views: dict[int, np.ndarray] = {}
    return [views.setdefault(id(x), x[start : start + BLOCK]) for x in arrays]


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
                assert isinstance(r, int), "the lanes are bits or any NaN (tested above)"
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
