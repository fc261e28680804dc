"""Batched evaluation: one instruction form applied to many inputs at once, as numpy arrays.

The readable semantics (:func:`ptxspec.semantics.instructions.evaluate`) takes one vector of
source bit patterns and returns one result. Golden-vector generation and checking need millions of
results, so every scalar form (a semantics that takes one thread's registers) also has a *fast
path*: a numpy transcription of its semantics on whole arrays of bit patterns. It adds no meaning
of its own:

* each path is written from the manual and the scalar function, step by step, and says in its
  docstring why its numpy arithmetic is exact (integer arithmetic on int64/uint64 arrays, one
  rounding through the batched rounding routine :mod:`ptxspec.semantics.batch_rounding`, the
  twin of numerics.round_value, or host binary64 operations proven not to round);
* a path may leave a rare input class *undecided* (:attr:`BatchResult.undecided`: where its
  arithmetic is not proven exact, such as a transcendental function's value too close to a
  rounding boundary): those vectors are evaluated by the readable semantics itself;
* the tests prove every path bit-identical to the readable semantics on every input class
  (``tests/batch_agreement.py``: the edge values of ``ptxspec vectors`` -- zeros, infinities,
  NaN payloads, subnormals, ties, overflow, integer extremes -- crossed, then seeded random
  vectors; every destination and every allowed set compared), and against independent oracles.

This module holds the front door (:func:`evaluate_batch`, :func:`evaluate_batch_all`), the
batched result (:class:`BatchResult`), the registry of the chapters' paths (:func:`batched`, one
module per chapter of the manual: :data:`CHAPTERS`), and the first paths, written for the forms
of the exhaustive silicon spaces:

* ``fma.rn.f32`` (§9.7.3.6), ``{add,sub,mul}{.rn}{.ftz}{.sat}.{f16,f16x2}`` (§9.7.4.1-3, on
  binary64 arithmetic) and ``{mul,mad}.wide.{s32,u32}`` (§9.7.1.3, §9.7.1.4), each written for its
  forms;
* on the one batched rounding routine: ``{add,sub,mul}{.rn}{.ftz}{.sat}.{bf16,bf16x2}`` and
  ``{min,max}{.ftz}{.NaN}{.xorsign.abs}.{f16,bf16,f16x2,bf16x2}`` (§9.7.4.7-8).

:func:`fast_path` is what :func:`evaluate_batch` asks; a form without a path (none of the scalar
forms, since issue 22) would loop the readable semantics.

Where the manual leaves a result open (an f32 NaN is "an unspecified NaN", §9.7.3; an ``.approx``
result lies within an error bound), the scalar semantics returns a set. A :class:`BatchResult`
keeps that information beside the bits -- a boolean mask ``any_nan``, :class:`Intervals`,
:class:`Members`, a :class:`SharedSet`, or the set itself in ``sets`` -- so that nothing is
lost in the batch: :meth:`BatchResult.result`
rebuilds exactly the scalar result of element ``i``.
"""

from __future__ import annotations

import functools
import importlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import attrs
import numpy as np

from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS, PACKED_TYPES, FloatFormat, NanEncoding, register_bits
from ptxspec.semantics import batch_rounding, data_movement
from ptxspec.semantics.numerics import Rounding, canonical_nan
from ptxspec.profiles import Profile, profile_named
from ptxspec.semantics.results import Allowed, AnyNaN, Interval, Lanes, OneOf, Result, contains, pack_lanes

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
class Intervals:
    """The lanes whose result is an :class:`~ptxspec.semantics.results.Interval` (an ``.approx``
    error bound): ``mask`` marks them, and for those lanes the interval is
    ``Interval(format, low, high, nan)``, after ``.ftz`` where ``flushed`` is set
    (:class:`~ptxspec.semantics.floating_point_approx.Flushed`: subnormal members become zeros of
    their sign). Arrays of shape ``(n,)`` for a destination of one element, ``(n, lanes)`` for a
    packed one (lane 0 the most significant): ``low`` and ``high`` the lane's bit patterns,
    ``nan`` and ``flushed`` booleans (``flushed`` None: no lane is flushed)."""

    mask: np.ndarray
    low: np.ndarray
    high: np.ndarray
    nan: np.ndarray
    flushed: np.ndarray | None = None

    def allowed(self, fmt: FloatFormat, index: tuple) -> Allowed:
        """The set of one lane (``index``: ``(i,)`` or ``(i, lane)``)."""
        interval = Interval(fmt, int(self.low[index]), int(self.high[index]), bool(self.nan[index]))
        if self.flushed is not None and self.flushed[index]:
            from ptxspec.semantics.floating_point_approx import Flushed

            return Flushed(interval)
        return interval

    def contains(self, fmt: FloatFormat, observed: np.ndarray, lane: int | None = None) -> np.ndarray:
        """Per vector, whether the ``observed`` bits of the lane lie in its set (the set's own
        ``__contains__``, on arrays): NaN where ``nan`` allows it; else the value between the
        ends (encodings in value order, both zeros equal); under ``.ftz`` no subnormal, and a zero
        of a sign whose subnormals the interval reaches."""
        pick = (lambda x: x) if lane is None else (lambda x: x[:, lane])
        low, high = _order(fmt, pick(self.low)), _order(fmt, pick(self.high))
        key = _order(fmt, observed)
        inside = np.where(_is_nan(fmt, observed), pick(self.nan), (low <= key) & (key <= high))
        if self.flushed is not None:
            largest = (1 << fmt.mantissa_bits) - 1
            subnormal = (key != 0) & (np.abs(key) <= largest)
            positive_zero, negative_zero = (key == 0) & ~_sign(fmt, observed), (key == 0) & _sign(fmt, observed)
            reaches = (positive_zero & (low <= largest) & (high >= 1)) | (negative_zero & (low <= -1) & (high >= -largest))
            inside = np.where(pick(self.flushed), (inside | reaches) & ~subnormal, inside)
        return inside


@attrs.frozen(eq=False)
class Members:
    """The lanes whose result is a small finite set of encodings
    (:class:`~ptxspec.semantics.results.OneOf`: two remainders of a signed ``rem``, the words an
    ``.approx`` upper-word result may be, the 16-bit ``ex2.approx`` sets that reach +0): ``mask``
    marks them, shape ``(n,)`` for a destination of one element, ``(n, lanes)`` for a packed one
    (lane 0 the most significant); ``values``, shape ``mask.shape + (k,)``, lists each set's
    members (a member may repeat: the set is the distinct values)."""

    mask: np.ndarray
    values: np.ndarray

    def allowed(self, index: tuple, width: int) -> Allowed:
        """The set of one lane (``index``: ``(i,)`` or ``(i, lane)``), of ``width`` bits."""
        return OneOf(frozenset(int(v) for v in self.values[index]), width)

    def contains(self, observed: np.ndarray, lane: int | None = None) -> np.ndarray:
        """Per vector, whether the ``observed`` bits of the lane are one of its members."""
        values = self.values if lane is None else self.values[:, lane]
        return (values == observed.astype(values.dtype)[:, None]).any(axis=1)


@attrs.frozen(eq=False)
class SharedSet:
    """The lanes whose result is one and the same allowed set ``allowed`` (``fma.oob``'s "+0.0
    or the NaN result" for a lane with a NaN operand, :class:`~ptxspec.semantics.half_precision.ZeroOrNaN`
    or a :class:`~ptxspec.semantics.results.OneOf`): ``mask`` marks them, shape ``(n,)`` for a
    destination of one element, ``(n, lanes)`` for a packed one (lane 0 the most significant).
    One set object for all of them, so that no Python object is built per vector."""

    mask: np.ndarray
    allowed: Allowed

    def contains(self, observed: np.ndarray) -> np.ndarray:
        """Per element, whether the ``observed`` lane bits are a member of the set: the set's own
        ``__contains__``, asked once per distinct observed value."""
        values, where = np.unique(observed, return_inverse=True)
        member = np.fromiter((int(v) in self.allowed for v in values.tolist()), bool, len(values))
        return member[where.reshape(observed.shape)]


def _sign(fmt: FloatFormat, bits: np.ndarray) -> np.ndarray:
    """Elementwise, whether the sign bit of an encoding of ``fmt`` is set."""
    return ((bits.astype(np.uint64) >> np.uint64(fmt.shift + fmt.field_bits - 1)) & np.uint64(1)) != 0 if fmt.signed else np.zeros(bits.shape, bool)


@attrs.frozen(eq=False)
class BatchResult:
    """The results of one destination operand for ``n`` input vectors.

    * ``bits``: shape ``(n,)``, the destination register bits. In a lane whose result is a set,
      they hold one member of it (the canonical NaN for an ``any_nan`` lane).
    * ``any_nan``: ``None`` when every result is fixed bits; else booleans marking the lanes whose
      result is "any NaN of ``format``" (:class:`~ptxspec.semantics.results.AnyNaN`): shape ``(n,)``
      for a destination of one element, ``(n, lanes)`` for a packed one, lane 0 being the most
      significant (as :class:`~ptxspec.semantics.results.Lanes` orders them).
    * ``sets``: results that are other allowed sets (a set of payloads, a flushed interval), by
      index; the scalar semantics produces them (the fallback, and the undecided vectors).
    * ``intervals``: None, or the lanes whose result is an interval of ``format``
      (:class:`Intervals`); ``members``: None, or the vectors whose result is a small finite set
      (:class:`Members`); ``shared``: None, or the lanes whose result is one set common to them
      all (:class:`SharedSet`). ``bits`` then holds one member of the set (for a vector in
      ``sets``, no particular value).
    * ``undecided``: what a fast path returns, never what :func:`evaluate_batch` returns: None, or
      the vectors the path leaves to the readable semantics (a rare input class where its numpy
      arithmetic is not proven exact); the front door evaluates them one at a time and writes
      their results in (:func:`_decide`).
    * ``format``: the element format of a lane (None for integer destinations); ``lanes`` and
      ``lane_bits``: how the register is split into elements.
    """

    bits: np.ndarray
    any_nan: np.ndarray | None
    format: FloatFormat | None
    lanes: int
    lane_bits: int
    sets: dict[int, Allowed] = attrs.field(factory=dict)
    undecided: np.ndarray | None = None
    intervals: Intervals | None = None
    members: Members | None = None
    shared: SharedSet | None = None

    def __len__(self) -> int:
        return len(self.bits)

    def _lane_flags(self, i: int, field: np.ndarray | None) -> list[bool]:
        """Vector ``i``'s row of a per-lane mask (``any_nan``, an interval or shared-set mask),
        one flag per lane; all False where the mask is None."""
        if field is None:
            return [False] * self.lanes
        return [bool(x) for x in np.atleast_1d(field[i])]

    def result(self, i: int) -> Result:
        """Element ``i`` as the scalar semantics returns it: bits, AnyNaN, an Interval, a shared
        set, or Lanes of those."""
        if i in self.sets:
            return self.sets[i]
        iv, shared, members = self.intervals, self.shared, self.members
        open_ = self._lane_flags(i, self.any_nan)
        in_interval = self._lane_flags(i, None if iv is None else iv.mask)
        in_shared = self._lane_flags(i, None if shared is None else shared.mask)
        in_members = self._lane_flags(i, None if members is None else members.mask)
        bits = int(self.bits[i])
        lane_mask = (1 << self.lane_bits) - 1
        parts: list[Result] = []
        for lane in range(self.lanes):
            index = (i,) if self.lanes == 1 else (i, lane)
            if in_members[lane]:
                assert members is not None
                parts.append(members.allowed(index, self.lane_bits))
            elif in_shared[lane]:
                assert shared is not None
                parts.append(shared.allowed)
            elif in_interval[lane]:
                assert iv is not None and self.format is not None
                parts.append(iv.allowed(self.format, index))
            elif open_[lane]:
                assert self.format is not None
                parts.append(AnyNaN(self.format))
            else:
                parts.append((bits >> ((self.lanes - 1 - lane) * self.lane_bits)) & lane_mask)
        return pack_lanes(parts, self.lane_bits)

    def results(self) -> list[Result]:
        return [self.result(i) for i in range(len(self))]

    def contains(self, observed: np.ndarray) -> np.ndarray:
        """For each element, whether the ``observed`` bits are an allowed result (a batched
        :func:`~ptxspec.semantics.instructions.check`): lane by lane, its bits, any NaN, its
        interval or its shared set; then the member rows and the sets by index."""
        observed = np.asarray(observed)
        if observed.shape != self.bits.shape:
            raise OperandError(f"expected {len(self)} observed results, got shape {observed.shape}")
        observed = _as_bits(observed, self.lanes * self.lane_bits, "observed results")
        if self.lanes == 1:
            ok = self._lane_contains(observed, self.bits, None)
        else:
            ok = np.ones(observed.shape, dtype=bool)
            lane_mask = (1 << self.lane_bits) - 1
            for lane in range(self.lanes):
                shift = (self.lanes - 1 - lane) * self.lane_bits
                ok &= self._lane_contains((observed >> shift) & lane_mask, (self.bits >> shift) & lane_mask, lane)
        for i, allowed in self.sets.items():
            ok[i] = contains(allowed, int(observed[i]))
        return ok

    def _lane_contains(self, got: np.ndarray, want: np.ndarray, lane: int | None) -> np.ndarray:
        """Per vector, whether the observed bits ``got`` of one lane (``lane`` None: the whole
        destination of one element) are allowed: its bits ``want``, any NaN where ``any_nan``
        opens it, its interval, its members, or its shared set."""
        pick = (lambda x: x) if lane is None else (lambda x: x[:, lane])
        ok = got == want
        fmt = self.format
        if self.any_nan is not None:
            assert fmt is not None
            ok |= pick(self.any_nan) & _is_nan(fmt, got)
        if self.intervals is not None:
            assert fmt is not None
            ok = np.where(pick(self.intervals.mask), self.intervals.contains(fmt, got, lane), ok)
        if self.members is not None:
            ok = np.where(pick(self.members.mask), self.members.contains(got, lane), ok)
        if self.shared is not None:
            marked = pick(self.shared.mask)
            if marked.any():
                ok = ok.copy()
                ok[marked] = self.shared.contains(got[marked])
        return ok

    def open_mask(self) -> np.ndarray:
        """Per vector, whether its result is a set rather than fixed bits (any lane open to any
        NaN, an interval, a shared set, a member row, or a set by index)."""
        fields = (self.any_nan, self.intervals, self.members, self.shared)
        open_ = np.zeros(len(self), bool)
        for m in (f if isinstance(f, np.ndarray) or f is None else f.mask for f in fields):
            if m is not None:
                open_ |= m if m.ndim == 1 else m.any(axis=1)
        if self.sets:
            open_[np.fromiter(self.sets, np.int64, len(self.sets))] = True
        return open_


def _order(fmt: FloatFormat, bits: np.ndarray) -> np.ndarray:
    """Elementwise, the position of a non-NaN encoding of ``fmt`` in value order (int64: the
    magnitude's bits, negated for a negative sign; both zeros are 0). Ordered by value, the
    encodings of a signed binary format run monotonically on each side of zero (the order
    :class:`~ptxspec.semantics.results.Interval` uses)."""
    raw = bits.astype(np.uint64) >> np.uint64(fmt.shift)
    if not fmt.signed:
        return raw.astype(np.int64)
    top = fmt.field_bits - 1
    magnitude = (raw & np.uint64((1 << top) - 1)).astype(np.int64)
    return np.where((raw >> np.uint64(top)) != 0, -magnitude, magnitude)


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
# The paths below cover the scalar 16-bit add/sub/mul/min/max forms of the "binary16" exhaustive
# silicon space (docs/silicon-exhaustive.rst; its conversions are semantics/batch_cvt.py's). Each
# one follows the scalar function step by step (decode, NaN rule, exact operation, round once)
# with the batched decode and rounding of :mod:`ptxspec.semantics.batch_rounding`, and reads its
# decisions from the profile, as the scalar semantics does (:meth:`Profile.unspecified_nan`).


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
        sign, significand, exponent = batch_rounding.exact_sum(sa, ma, ea, sb, mb, eb, span=fmt.precision + 2)
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
    return None


#: The paths found, by family and text: forms that only their operands tell apart share a text
#: (``mov.b32 d, a`` and ``mov.b32 d, {a.x, a.y}``).
_EXACT_CACHE: dict[tuple[str, str], FastPath | None] = {}


def fast_path(form: Form, profile: Profile | str = "spec") -> FastPath | None:
    """The batched implementation that :func:`evaluate_batch` uses for ``form`` under ``profile``,
    or None (then it loops the readable semantics)."""
    profile = profile_named(profile)
    if form.text in _EXPLICIT:
        return _EXPLICIT[form.text]
    if not covers(profile):
        return None
    key = (form.family.key, form.text)
    if key not in _EXACT_CACHE:
        _EXACT_CACHE[key] = _exact_path(form) or _built_path(form)
    return _EXACT_CACHE[key]


# ---------------------------------------------------------------------------------------------
# The chapters' paths: one registry of builders
# ---------------------------------------------------------------------------------------------

#: A builder gives the batched path of one form of its families, or None where it does not cover
#: that form.
Builder = Callable[[Form], "FastPath | None"]

#: Family key -> its builders, tried in registration order after the paths of this module.
_BUILDERS: dict[str, list[Builder]] = {}

#: The modules that register builders, one per chapter of the manual (§9.7.1 integer, §9.7.8
#: logic and shift, §9.7.9 data movement and conversion, §9.7.3 and §9.7.5 floating point, §9.7.4
#: half precision, §9.7.7 comparison and selection, §9.7.10 video, and the .approx functions);
#: imported on the first look-up, so that importing this module stays cheap.
CHAPTERS = (
    "batch_integer",
    "batch_logic_shift",
    "batch_data_movement",
    "batch_cvt",
    "batch_float",
    "batch_approx",
    "batch_half",
    "batch_comparison",
    "batch_video",
)


def batched(*family_keys: str) -> Callable[[Builder], Builder]:
    """Register the decorated builder for the catalogue families ``family_keys``: the batched
    twin of :func:`~ptxspec.semantics.instructions.semantic`."""

    def register(builder: Builder) -> Builder:
        for key in family_keys:
            _BUILDERS.setdefault(key, []).append(builder)
        return builder

    return register


@functools.cache
def _load_chapters() -> None:
    for name in CHAPTERS:
        importlib.import_module(f"ptxspec.semantics.{name}")


def _built_path(form: Form) -> FastPath | None:
    """The first registered builder's path for ``form``, or None."""
    _load_chapters()
    for builder in _BUILDERS.get(form.family.key, ()):
        path = builder(form)
        if path is not None:
            return path
    return None


# ---------------------------------------------------------------------------------------------
# The front door
# ---------------------------------------------------------------------------------------------

#: A batched path: ``fast(*sources, profile=...)`` -> one BatchResult per destination (a tuple
#: where the form has several).
FastPath = Callable[..., "BatchResult | tuple[BatchResult, ...]"]

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
    """Form text -> batched implementation ``fn(*sources, profile=...)``: every path, the chapters'
    too, built on first use. Iterating lists this module's own paths (the explicit ones and those
    of the exhaustive spaces; it parses every candidate spelling once, so it takes a moment); the
    scalar forms are listed by :func:`ptxspec.conformance.coverage.scalar_forms`."""

    def __getitem__(self, text: str) -> FastPath:
        if text in _EXPLICIT:
            return _EXPLICIT[text]
        path = _exact_path_for_text(text)
        if path is None:
            raise KeyError(text)

        def called_directly(*sources: np.ndarray, profile: Profile | str = "spec") -> BatchResult | tuple[BatchResult, ...]:
            # The front door asks covers() first; a direct call must too.
            return path(*sources, profile=_covered(profile))

        return called_directly

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
    return (_exact_path(form) or _built_path(form)) if form.text == text else None


@functools.cache
def _exact_texts() -> tuple[str, ...]:
    """Every form (canonical text) of the exhaustive spaces: the spellings of add, sub, mul, min,
    max on the 16-bit types (:func:`_exact_path`) and of cvt from .f32 (semantics/batch_cvt.py),
    parsed by the catalogue."""
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
        if form.text not in _EXPLICIT and (_exact_path(form) or _built_path(form)) is not None:
            found.add(form.text)
    return tuple(sorted(found))


def cvt_rn_f16_f32(a: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.f16.f32 d, a`` on an array of .f32 bit patterns (semantics/batch_cvt.py)."""
    return cast(BatchResult, FAST_PATHS["cvt.rn.f16.f32"](a, profile=profile))


def cvt_rn_satfinite_e4m3x2_f32(a: np.ndarray, b: np.ndarray, profile: Profile | str = "spec") -> BatchResult:
    """§9.7.9.21 ``cvt.rn.satfinite.e4m3x2.f32 d, a, b`` on arrays of .f32 bit patterns
    (semantics/batch_cvt.py): d[15:8] = convert(a), d[7:0] = convert(b)."""
    return cast(BatchResult, FAST_PATHS["cvt.rn.satfinite.e4m3x2.f32"](a, b, profile=profile))


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
    For a form with one destination operand (:func:`evaluate_batch_all` gives every destination).
    """
    from ptxspec.semantics.instructions import as_form

    form = as_form(form)
    if len(form.destinations) != 1:
        raise PtxSpecError(f"{form.text}: it has {len(form.destinations)} destination operands; use evaluate_batch_all")
    (result,) = evaluate_batch_all(form, sources, profile)
    return result


def evaluate_batch_all(form: Form | str, sources: Sequence[np.ndarray], profile: Profile | str = "spec") -> tuple[BatchResult, ...]:
    """:func:`evaluate_batch` for every destination operand of ``form`` (setp's ``p`` and ``q``,
    add.cc's ``d`` and the carry flag), in the form's order."""
    from ptxspec.semantics.instructions import as_form, check_source_count

    form = as_form(form)
    profile = profile_named(profile)
    operands = check_source_count(form, len(sources))
    arrays = [_as_bits(s, register_bits(o.type), f"operand {o.name} of {form.text}") for s, o in zip(sources, operands)]
    if len({len(x) for x in arrays}) > 1:
        raise OperandError(f"{form.text}: source arrays differ in length: {[len(x) for x in arrays]}", where=form.text)
    fast = fast_path(form, profile)
    if fast is not None:
        return _in_blocks(form, fast, arrays, profile)
    return _loop(form, arrays, profile)


#: Vectors per call of a fast path: small enough that its temporaries stay in cache (about three
#: times faster than whole 10^6-element arrays), large enough that numpy's per-call cost vanishes.
BLOCK = 1 << 15


def _in_blocks(form: Form, fast: FastPath, arrays: list[np.ndarray], profile: Profile) -> tuple[BatchResult, ...]:
    """Run ``fast`` on consecutive blocks of the inputs, decide the vectors it left undecided
    (:func:`_decide`), and join the results. Elementwise semantics make this the same as one
    call on the whole arrays."""
    n = len(arrays[0]) if arrays else 0
    parts = []
    for start in range(0, max(n, 1), BLOCK):
        block = _block(arrays, start)
        results = fast(*block, profile=profile)
        parts.append(_decide(form, results if isinstance(results, tuple) else (results,), block, profile))
    if len(parts) == 1:
        return parts[0]
    return tuple(_join([part[k] for part in parts]) for k in range(len(parts[0])))


def _decide(form: Form, results: tuple[BatchResult, ...], arrays: list[np.ndarray], profile: Profile) -> tuple[BatchResult, ...]:
    """The fast path's results with its undecided vectors evaluated by the readable semantics."""
    masks = [r.undecided for r in results if r.undecided is not None]
    if not masks:
        return results
    undecided = np.logical_or.reduce(masks)
    index = np.flatnonzero(undecided)
    scalar = _loop(form, [x[index] for x in arrays], profile)
    return tuple(_merge(r, s, index, undecided) for r, s in zip(results, scalar))


def _merge(fast: BatchResult, scalar: BatchResult, index: np.ndarray, undecided: np.ndarray) -> BatchResult:
    """``fast`` with the vectors at ``index`` replaced by ``scalar``'s results for them."""
    assert (fast.lanes, fast.lane_bits) == (scalar.lanes, scalar.lane_bits), "a fast path splits its register as the semantics does"
    bits = fast.bits.copy()
    bits[index] = scalar.bits.astype(bits.dtype)
    any_nan = fast.any_nan
    if any_nan is not None or scalar.any_nan is not None:
        any_nan = any_nan.copy() if any_nan is not None else np.zeros(bits.shape if fast.lanes == 1 else (len(bits), fast.lanes), dtype=bool)
        any_nan[index] = scalar.any_nan if scalar.any_nan is not None else False
    intervals = fast.intervals
    if intervals is not None:
        intervals = attrs.evolve(intervals, mask=intervals.mask & ~(undecided if intervals.mask.ndim == 1 else undecided[:, None]))
    members = fast.members
    if members is not None:
        members = attrs.evolve(members, mask=members.mask & ~(undecided if members.mask.ndim == 1 else undecided[:, None]))
    shared = fast.shared
    if shared is not None:
        shared = attrs.evolve(shared, mask=shared.mask & ~(undecided if shared.mask.ndim == 1 else undecided[:, None]))
    sets = {i: v for i, v in fast.sets.items() if not undecided[i]}
    sets.update({int(index[j]): v for j, v in scalar.sets.items()})
    return BatchResult(bits, any_nan, fast.format or scalar.format, fast.lanes, fast.lane_bits, sets, None, intervals, members, shared)


def _join(parts: list[BatchResult]) -> BatchResult:
    """One result from the results of consecutive blocks."""
    first = parts[0]
    any_nan = None
    if any(p.any_nan is not None for p in parts):
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))
        any_nan = np.concatenate([p.any_nan if p.any_nan is not None else np.zeros(shape(len(p)), dtype=bool) for p in parts])
    intervals = None
    if any(p.intervals is not None for p in parts):
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))
        none = lambda p: Intervals(*(np.zeros(shape(len(p)), dtype) for dtype in (bool, p.bits.dtype, p.bits.dtype, bool)))  # noqa: E731
        ivs = [p.intervals if p.intervals is not None else none(p) for p in parts]
        flushed = None
        if any(iv.flushed is not None for iv in ivs):
            flushed = np.concatenate([iv.flushed if iv.flushed is not None else np.zeros(iv.mask.shape, bool) for iv in ivs])
        mask, low, high, nan = (np.concatenate([getattr(iv, f) for iv in ivs]) for f in ("mask", "low", "high", "nan"))
        intervals = Intervals(mask, low, high, nan, flushed)
    members = None
    if any(p.members is not None for p in parts):
        k = max(p.members.values.shape[-1] for p in parts if p.members is not None)
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))

        def widened_to_k(m: Members) -> Members:  # the last member repeated: the same set
            pad = [(0, 0)] * (m.values.ndim - 1) + [(0, k - m.values.shape[-1])]
            return Members(m.mask, np.pad(m.values, pad, mode="edge"))

        widened = [
            widened_to_k(p.members) if p.members is not None else Members(np.zeros(shape(len(p)), bool), np.zeros((*shape(len(p)), k), p.bits.dtype))
            for p in parts
        ]
        members = Members(np.concatenate([m.mask for m in widened]), np.concatenate([m.values for m in widened]))
    shared = None
    if any(p.shared is not None for p in parts):
        (allowed,) = {p.shared.allowed for p in parts if p.shared is not None}  # one form, one profile: one set
        shape = (lambda m: (m,)) if first.lanes == 1 else (lambda m: (m, first.lanes))
        shared = SharedSet(np.concatenate([p.shared.mask if p.shared is not None else np.zeros(shape(len(p)), bool) for p in parts]), allowed)
    sets: dict[int, Allowed] = {}
    offset = 0
    for p in parts:
        sets.update({offset + i: v for i, v in p.sets.items()})
        offset += len(p)
    fmt = next((p.format for p in parts if p.format is not None), None)
    return BatchResult(np.concatenate([p.bits for p in parts]), any_nan, fmt, first.lanes, first.lane_bits, sets, None, intervals, members, shared)


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


class _Collector:
    """One destination's results gathered vector by vector (the fallback's bookkeeping)."""

    def __init__(self, form: Form, destination, n: int):
        width = register_bits(destination.type)
        packed = PACKED_TYPES.get(destination.type) or _packed_by_qualifier(form, width)
        self.bits = np.zeros(n, dtype=_dtype(width))
        self.lanes = packed.count if packed else 1
        self.lane_bits = packed.lane_bits if packed else width
        self.any_nan = np.zeros((n, self.lanes), dtype=bool)
        self.sets: dict[int, Allowed] = {}
        self.fmt: FloatFormat | None = FORMATS.get(packed.element if packed else destination.type)

    def put(self, i: int, result: Result) -> None:
        if isinstance(result, int):
            self.bits[i] = result
        elif isinstance(result, AnyNaN) and self.lanes == 1:
            self.bits[i], self.any_nan[i, 0], self.fmt = canonical_nan(result.format), True, result.format
        elif isinstance(result, Lanes) and all(isinstance(r, (int, AnyNaN)) for r in result.lanes):
            value = 0
            for lane, r in enumerate(result.lanes):
                if isinstance(r, AnyNaN):
                    self.any_nan[i, lane], self.fmt, r = True, r.format, canonical_nan(r.format)
                assert isinstance(r, int), "the lanes are bits or any NaN (tested above)"
                value = (value << result.lane_bits) | r
            self.bits[i] = value
        else:
            self.sets[i] = result

    def result(self) -> BatchResult:
        mask = (self.any_nan[:, 0] if self.lanes == 1 else self.any_nan) if self.any_nan.any() else None
        return BatchResult(self.bits, mask, self.fmt, self.lanes, self.lane_bits, self.sets)


def _loop(form: Form, arrays: list[np.ndarray], profile: Profile) -> tuple[BatchResult, ...]:
    """The fallback: the readable semantics, one vector at a time."""
    from ptxspec.semantics.instructions import evaluate

    n = len(arrays[0]) if arrays else 0
    collectors = [_Collector(form, d, n) for d in form.destinations]
    columns = [x.tolist() for x in arrays]
    for i in range(n):
        for collector, result in zip(collectors, evaluate(form, [col[i] for col in columns], profile)):
            collector.put(i, result)
    return tuple(c.result() for c in collectors)


__all__ = [
    "BatchResult",
    "FAST_PATHS",
    "cvt_rn_f16_f32",
    "cvt_rn_satfinite_e4m3x2_f32",
    "Intervals",
    "Members",
    "SharedSet",
    "batched",
    "evaluate_batch",
    "evaluate_batch_all",
    "fma_rn_f32",
    "half_arithmetic",
    "has_fast_path",
    "integer_wide",
]
