"""§9.7.3 the approximate floating-point instructions and §9.7.4.9-10 their 16-bit forms, batched.

The numpy twins of :mod:`ptxspec.semantics.floating_point_approx` (and of ``tanh.approx`` and
``ex2.approx`` in :mod:`ptxspec.semantics.half_precision`), one builder per family, each following
its scalar function step by step: decode (``.ftz`` flushing subnormal inputs), the special-value
table, then the allowed set of the error bound, an ordinal interval ``[low, high]`` turned into a
result exactly as :func:`~ptxspec.semantics.floating_point_approx.between` does it.

The ends of the interval are roundings of real numbers (the exact result moved by the bound). Two
mechanisms compute them, both exact where they decide:

* **exact integers** for the rational results (``1/a``, ``a/b``): the quotient of the normalised
  significands with a sticky bit, rounded by :func:`~ptxspec.semantics.batch_rounding.round_bits`
  (:func:`_quotient_ordinal`);
* **filter and exact fallback** for the transcendental ones (sqrt, rsqrt, sin, cos, lg2, ex2,
  tanh): binary64 numpy functions give an estimate ``e`` of each end, and :func:`_round_bracket`
  rounds both ends of ``[e - M, e + M]`` (one rounding of exact binary64 values each, by
  round_bits). The end is *decided* when the two roundings agree: rounding is monotone, so every
  real in the bracket, the true end among them, rounds alike. Otherwise the vector is left
  *undecided* and the front door runs the scalar function on it.

**The margin M.** numpy's binary64 ``sqrt`` is correctly rounded (IEEE 754); ``sin``, ``cos``,
``exp2``, ``log2``, ``tanh`` are not, but any libm numpy uses (glibc, SVML, its own SIMD kernels)
stays within a few binary64 ulps (2^-50 relative). We assume a far weaker bound,
:data:`NUMPY_ERROR` = 2^-42 relative to the result, restricted to arguments where it is safe
(``|a| <= 100 pi`` for sin and cos, whose argument reduction is then short; beyond that the
manual's set is every encoding and nothing is computed), and ``tests/test_batch_approx.py`` checks
it against MPFR on every class of argument the paths use. A bound's end is the estimate of the
function combined with the bound by one or two binary64 operations, each rounding by at most
2^-53 of its result; so its error stays below 2^-41 of ``|y| + |delta|`` and :data:`MARGIN` =
2^-40 of that covers it, with the rounding of ``e -+ M`` itself (2^-53) inside the slack.

Rounding boundaries (grid points for the directed ends, midpoints for ``.rn``) that the true end
could *equal* would never be decided, so the exact cases are handled exactly: an exact square
root (sqrt of a perfect square), ``log2`` of a power of two, ``2^a`` of an integer a -- there the
binary64 end is exact and the margin is 0 -- and ``tanh`` near 1, where ``y (1 + eps)`` lies
strictly below the grid point ``1 + eps``: the bracket's top is clamped to the binary64 number
just below it, on which every rounding agrees with the true end's (:func:`_below`). Every other
end is irrational (sin, cos: Lindemann; 2^a for non-integer a: Gelfond-Schneider; the bounds
2^-20.5, 2^-22.9 irrational), so it equals no boundary and lies within 2^-40 of one for about
2^-16 of the inputs: the undecided vectors are that rare.

The sets are :class:`~ptxspec.semantics.batch.Intervals` lanes, ``flushed`` where ``.ftz`` makes
one a :class:`~ptxspec.semantics.floating_point_approx.Flushed` interval; the
:class:`~ptxspec.semantics.results.OneOf` sets of ``ex2.approx`` on 16 bits (those reaching +0)
are :class:`~ptxspec.semantics.batch.Members` rows. The x2 16-bit forms under the spec look both
lanes up in a table of the lane path's result for each of the 2^16 inputs, built once per profile
(:func:`_two_lanes`), and stack the lanes' masks and rows. Under sm_90 the 16-bit forms are the
recorded tables (``profile.approx16_tables``): a lookup per lane.

The .f64 forms: ``rsqrt.approx.f64`` rounds its ends to .f64 from double-double estimates
(:func:`_rsqrt_approx_f64`); ``rcp.approx.ftz.f64`` and ``rsqrt.approx.ftz.f64`` compute the
nearest 1.11.20 word (an exact integer quotient; a binary64 root with a margin), and their
finite results, a :class:`~ptxspec.semantics.results.OneOf` of three words, are rows of
:class:`~ptxspec.semantics.batch.Members`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import functools
from fractions import Fraction

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import batch_rounding
from ptxspec.semantics import floating_point_approx as fpa
from ptxspec.semantics import half_precision
from ptxspec.semantics.batch import BatchResult, FastPath, Intervals, Members, _open_nan, _order, batched
from ptxspec.semantics.floating_point_approx import Real
from ptxspec.semantics.numerics import Rounding, canonical_nan
from ptxspec.semantics.results import Allowed, Lanes, OneOf
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat

F32 = FORMATS["f32"]
F64 = FORMATS["f64"]

#: The error we assume of numpy's binary64 transcendental functions, relative to the result (see
#: the module docstring; checked against MPFR by the tests).
NUMPY_ERROR = 2.0**-42
#: The half-width of a bracket, relative to the magnitudes that make up the end.
MARGIN = 2.0**-40
#: The same for ends built from correctly rounded operations only (sqrt, a division, products):
#: at most three roundings of 2^-53, so within 2^-51.4 of the end.
ROUNDED_MARGIN = 2.0**-50

# ---------------------------------------------------------------------------------------------
# Ordinals and the allowed set (floating_point_approx.ordinal, from_ordinal, between)
# ---------------------------------------------------------------------------------------------


def _from_ordinal(fmt: FloatFormat, n: np.ndarray) -> np.ndarray:
    """:func:`~ptxspec.semantics.floating_point_approx.from_ordinal`: the bits of ordinal n
    (int64): n for n >= 0, the sign bit with ``-n`` below zero."""
    return np.where(n >= 0, n, fmt.sign_mask | -n)


@attrs.frozen(eq=False)
class _Bound:
    """Per vector, the ordinal interval ``[low, high]`` of an error bound (int64), and whether
    its ends are decided (False: the front door evaluates the vector)."""

    low: np.ndarray
    high: np.ndarray
    decided: np.ndarray


@attrs.frozen(eq=False)
class _Sets:
    """What :func:`~ptxspec.semantics.floating_point_approx.between` returns, per vector: ``bits``
    where it is one encoding, else ``interval`` (an Interval from ``low`` to ``high`` bits),
    ``flushed`` among those (the Interval inside a :class:`~ptxspec.semantics.floating_point_approx.Flushed`)."""

    bits: np.ndarray
    interval: np.ndarray
    flushed: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _between(fmt: FloatFormat, low: np.ndarray, high: np.ndarray, *, ftz: bool) -> _Sets:
    """The batched :func:`~ptxspec.semantics.floating_point_approx.between`, case by case: under
    ``.ftz`` an interval of positive (negative) subnormals only is +0.0 (-0.0); one non-zero
    ordinal is its encoding; anything else an Interval, a :class:`~ptxspec.semantics.floating_point_approx.Flushed` one under ``.ftz``
    where it holds a subnormal of either sign (``Flushed.flushes_to_zero``)."""
    largest = (1 << fmt.mantissa_bits) - 1
    low_bits, high_bits = _from_ordinal(fmt, low), _from_ordinal(fmt, high)
    single = (low == high) & (low != 0)
    bits = low_bits
    interval = ~single
    flushed = np.zeros(low.shape, dtype=bool)
    if ftz:
        positive = (1 <= low) & (high <= largest)
        negative = (-largest <= low) & (high <= -1)
        bits = np.where(positive, 0, np.where(negative, fmt.sign_mask, bits))
        interval &= ~(positive | negative)
        touches = ((low <= largest) & (high >= 1)) | ((low <= -1) & (high >= -largest))
        flushed = interval & touches
        # bits holds a member of the set: a flushed interval has no subnormal, so where its low
        # end is one, the zero of that sign (a member: the interval reaches its subnormals).
        bits = np.where(flushed & (1 <= low) & (low <= largest), 0, np.where(flushed & (-largest <= low) & (low <= -1), fmt.sign_mask, bits))
    return _Sets(bits, interval, flushed, low_bits, high_bits)


def _clip(fmt: FloatFormat, n: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~ptxspec.semantics.floating_point_approx.within_ulps`'s interval around the
    unbounded ordinal n: ``[n - k, n + k]`` clamped to the ordinals of -inf .. +inf."""
    top = fmt.exponent_field_max << fmt.mantissa_bits
    return np.clip(n - k, -top, top), np.clip(n + k, -top, top)


# ---------------------------------------------------------------------------------------------
# Rounding exact values and brackets
# ---------------------------------------------------------------------------------------------


def _nearest_ordinal(sign: np.ndarray, significand: np.ndarray, exponent: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """:func:`~ptxspec.semantics.floating_point_approx.nearest_ordinal` of the exact values
    ``(-1)^sign significand 2^exponent``: the ordinal of the correctly rounded value with an
    unbounded exponent range above the format. A value of at least 2 is scaled by
    ``2^-max_exponent`` into the normal range (at least 2^emin), rounded there (rounding commutes
    with scaling a normal value), and moved back by ``max_exponent`` binades of ordinals, as the
    scalar function does; one that overflows even scaled (at least ``2^(2 max_exponent + 1)``)
    lies far beyond every bound's reach above +inf, which the callers clamp to."""
    msb = exponent + batch_rounding.bit_length(significand) - 1
    scale = np.where(msb >= 1, fmt.max_exponent, 0)
    bits = batch_rounding.round_bits(sign, significand, exponent - scale, fmt, Rounding.RN)
    magnitude = (bits & (fmt.sign_mask - 1)) + (scale << fmt.mantissa_bits)
    return np.where(sign, -magnitude, magnitude)


def _binary64_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite binary64 values as exact (sign, significand, exponent), significands below 2^53
    (batch_rounding.decode of their encodings)."""
    sign, significand, exponent, _, _ = batch_rounding.decode(F64, x.view(np.uint64))
    return sign, significand, exponent


def _round_bracket(lo: np.ndarray, hi: np.ndarray, fmt: FloatFormat, mode: Rounding | None) -> tuple[np.ndarray, np.ndarray]:
    """The ordinal of the rounding of a real known to lie in ``[lo, hi]`` (binary64 arrays), and
    whether it is decided: both ends round alike (``mode`` None: to nearest with the unbounded
    exponent of :func:`_nearest_ordinal`; else round_bits in ``mode`` without flushing, as
    :func:`~ptxspec.semantics.floating_point_approx.round_real`)."""
    ends = []
    for x in (lo, hi):
        sign, significand, exponent = _binary64_parts(x)
        if mode is None:
            ends.append(_nearest_ordinal(sign, significand, exponent, fmt))
        else:
            ends.append(_order(fmt, batch_rounding.round_bits(sign, significand, exponent, fmt, mode)))
    return ends[0], ends[0] == ends[1]


def _bracket(e: np.ndarray, scale: np.ndarray, exact: np.ndarray | None, margin: float = MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """``[e - M, e + M]`` with ``M = margin * scale`` (``scale`` the magnitudes that make up the
    end), and M = 0 where the end is ``exact``."""
    m = margin * scale
    if exact is not None:
        m = np.where(exact, 0.0, m)
    return e - m, e + m


def _below(hi: np.ndarray, grid: np.ndarray | float, valid: np.ndarray | bool = True) -> np.ndarray:
    """The top of a bracket whose real lies strictly below ``grid`` (binary64 numbers of fewer
    than 52 significant bits), where ``valid``: clamped to the binary64 number just below
    ``grid``. That number has 53 significant bits, so it is a number of no narrower format, and
    none lies strictly between it and ``grid``: every directed rounding is constant on [that
    number, grid), so the clamped bracket decides what the true one does."""
    return np.where(valid, np.minimum(hi, np.nextafter(grid, -np.inf)), hi)


def _above(lo: np.ndarray, grid: np.ndarray | float, valid: np.ndarray | bool = True) -> np.ndarray:
    """The mirror of :func:`_below`: a bracket whose real lies strictly above ``grid``."""
    return np.where(valid, np.maximum(lo, np.nextafter(grid, np.inf)), lo)


def _two_sum(a: np.ndarray, b: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a + b`` in binary64 and whether it is exact with fewer than 52 significant bits (the
    grids :func:`_below` takes): Knuth's TwoSum gives the rounding error exactly (0 when exact),
    and two clear low bits bound the length."""
    s = a + b
    bb = s - a
    error = (a - (s - bb)) + (b - bb)
    return s, (error == 0) & ((s.view(np.uint64) & np.uint64(3)) == 0)


@functools.cache
def _as_float(x: Real) -> float:
    """A bound (a Real) in binary64, within 2^-52 of its value (from a 2^-80 enclosure)."""
    lo, hi, s = x.enclose(80)
    return float(Fraction(lo + hi, 2 << s) if s >= 0 else Fraction((lo + hi) << -s, 2))


# ---------------------------------------------------------------------------------------------
# The error bounds (within_ulps, within_distance, within_relative), on estimates
# ---------------------------------------------------------------------------------------------


def _within_ulps(y: np.ndarray, exact: np.ndarray | None, fmt: FloatFormat, k: int) -> _Bound:
    """:func:`~ptxspec.semantics.floating_point_approx.within_ulps` from the estimate y (> 0)."""
    n, decided = _round_bracket(*_bracket(y, np.abs(y), exact), fmt, None)
    return _Bound(*_clip(fmt, n, k), decided)


def _within_distance(
    y: np.ndarray,
    delta: float | np.ndarray,
    fmt: FloatFormat,
    exact: np.ndarray | None = None,
    *,
    below: np.ndarray | None = None,
    above: np.ndarray | None = None,
) -> _Bound:
    """:func:`~ptxspec.semantics.floating_point_approx.within_distance`: from RP(y - delta) to
    RM(y + delta). ``below`` (``above``): y is known to lie strictly below (above) it, so each
    end lies strictly below (above) ``below -+ delta`` (:func:`_below`, :func:`_above`, where
    that sum is exact: :func:`_two_sum`)."""
    scale = np.abs(y) + delta
    (l_lo, l_hi), (h_lo, h_hi) = _bracket(y - delta, scale, exact), _bracket(y + delta, scale, exact)
    if below is not None:
        l_hi = _below(l_hi, *_two_sum(below, -delta))
        h_hi = _below(h_hi, *_two_sum(below, delta))
    if above is not None:
        l_lo = _above(l_lo, *_two_sum(above, -delta))
        h_lo = _above(h_lo, *_two_sum(above, delta))
    low, low_ok = _round_bracket(l_lo, l_hi, fmt, Rounding.RP)
    high, high_ok = _round_bracket(h_lo, h_hi, fmt, Rounding.RM)
    return _Bound(low, high, low_ok & high_ok)


def _within_relative(
    y: np.ndarray, exact: np.ndarray | None, eps: float, fmt: FloatFormat, *, below: np.ndarray | float | None = None, margin: float = MARGIN
) -> _Bound:
    """:func:`~ptxspec.semantics.floating_point_approx.within_relative` from the estimate y
    (non-zero): from RP of the lesser of ``y (1 - eps)``, ``y (1 + eps)`` to RM of the greater.
    ``below``: y (> 0) is known to lie strictly below it, so each end lies strictly below
    ``below`` times its factor (:func:`_below`; the caller makes those products exact binary64
    numbers of fewer than 52 bits)."""
    down, up = y * (1.0 - eps), y * (1.0 + eps)
    lesser, greater = np.minimum(down, up), np.maximum(down, up)
    (l_lo, l_hi), (g_lo, g_hi) = _bracket(lesser, np.abs(lesser), exact, margin), _bracket(greater, np.abs(greater), exact, margin)
    if below is not None:
        l_hi, g_hi = _below(l_hi, below * (1.0 - eps)), _below(g_hi, below * (1.0 + eps))
    low, low_ok = _round_bracket(l_lo, l_hi, fmt, Rounding.RP)
    high, high_ok = _round_bracket(g_lo, g_hi, fmt, Rounding.RM)
    return _Bound(low, high, low_ok & high_ok)


# ---------------------------------------------------------------------------------------------
# The batched result
# ---------------------------------------------------------------------------------------------


def _result(
    fmt: FloatFormat,
    *,
    ftz: bool,
    profile: Profile,
    nan: np.ndarray,
    fixed: Sequence[tuple[np.ndarray, Any]],
    bound: _Bound,
    given: Members | None = None,
) -> BatchResult:
    """One destination from the special-value table and the bound: ``nan`` (the profile's
    unspecified NaN), ``fixed`` (mask, bits) pairs, ``given`` member rows built already (bits:
    their least member), and every other vector the set of ``bound`` (:func:`_between`) -- bits,
    or an :class:`Intervals` lane, ``flushed`` where it is a :class:`~ptxspec.semantics.floating_point_approx.Flushed` one -- undecided where its
    ends are."""
    chosen = nan.copy()
    for mask, _ in fixed:
        chosen |= mask
    if given is not None:
        chosen |= given.mask
        fixed = [*fixed, (given.mask, given.values.min(axis=1))]
    bounded = ~chosen
    between = _between(fmt, bound.low, bound.high, ftz=ftz)
    dtype = np.dtype(f"uint{fmt.width}")
    decided = bounded & bound.decided
    interval = decided & between.interval
    low, high = between.low.astype(dtype), between.high.astype(dtype)
    bits = between.bits  # an interval's member (its low end, or the zero a flushed one allows)
    for mask, value in fixed:
        bits = np.where(mask, value, bits)
    nan_bits, open_ = _open_nan(fmt, profile)
    bits = np.where(nan, nan_bits, bits).astype(dtype)
    intervals = Intervals(interval, low, high, np.zeros(len(bits), dtype=bool), interval & between.flushed if ftz else None)
    undecided = bounded & ~bound.decided
    members = given if given is not None and given.mask.any() else None
    return BatchResult(bits, nan.copy() if open_ and nan.any() else None, fmt, 1, fmt.width, {}, undecided if undecided.any() else None, intervals, members)


def _empty_bound(n: int) -> _Bound:
    zeros = np.zeros(n, dtype=np.int64)
    return _Bound(zeros, zeros, np.ones(n, dtype=bool))


def _merge_bounds(parts: list[tuple[np.ndarray, _Bound]], n: int) -> _Bound:
    """One bound from several, each taken where its mask is set."""
    out = _empty_bound(n)
    for mask, b in parts:
        out = _Bound(np.where(mask, b.low, out.low), np.where(mask, b.high, out.high), np.where(mask, b.decided, out.decided))
    return out


# ---------------------------------------------------------------------------------------------
# Reading .f32 sources
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class _Source:
    """An .f32 source decoded (batch_rounding.decode, ``.ftz`` flushing subnormals) and as exact
    binary64 values ``x`` (every .f32 value is a binary64 value)."""

    sign: np.ndarray
    significand: np.ndarray
    exponent: np.ndarray
    nan: np.ndarray
    infinite: np.ndarray
    zero: np.ndarray
    x: np.ndarray


def _source(a: np.ndarray, ftz: bool) -> _Source:
    """:func:`~ptxspec.semantics.floating_point_approx._source` on an array."""
    sign, significand, exponent, nan, infinite = batch_rounding.decode(F32, a, ftz=ftz)
    zero = (significand == 0) & ~nan & ~infinite
    if ftz:
        a = np.where((a & np.uint32(0x7F800000)) == 0, a & np.uint32(0x80000000), a)
    with np.errstate(all="ignore"):
        x = a.astype(np.uint32).view(np.float32).astype(np.float64)
    return _Source(sign, significand, exponent, nan, infinite, zero, x)


def _negative(s: _Source) -> np.ndarray:
    """:func:`~ptxspec.semantics.floating_point_approx._is_negative`: -inf or a negative non-zero."""
    return s.sign & ~s.nan & ~s.zero


def _finite_nonzero(s: _Source) -> np.ndarray:
    return ~(s.nan | s.infinite | s.zero)


def _signed_zero(sign: np.ndarray, fmt: FloatFormat = F32) -> np.ndarray:
    return sign.astype(np.int64) * fmt.sign_mask


F32_ONE = fpa.F32_ONE
F32_INF = 0x7F800000
F64_SIGN = 1 << 63
F64_INF = 0x7FF0000000000000

# ---------------------------------------------------------------------------------------------
# §9.7.3.8 div.approx, div.full; §9.7.3.13 rcp.approx: rational, exact
# ---------------------------------------------------------------------------------------------


def _normalised(significand: np.ndarray, exponent: np.ndarray, bits: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """A non-zero significand shifted up to exactly ``bits`` bits, the exponent compensating."""
    shift = bits - batch_rounding.bit_length(significand)
    return significand << shift, exponent - shift


def _quotient_ordinal(sign: np.ndarray, ma: np.ndarray, ea: np.ndarray, mb: np.ndarray, eb: np.ndarray, fmt: FloatFormat = F32) -> np.ndarray:
    """The unbounded nearest ordinal (:func:`_nearest_ordinal`) in ``fmt`` (of at most 24
    significant bits) of ``(ma 2^ea) / (mb 2^eb)``, for non-zero significands below 2^24 (mb may
    be 1 for a reciprocal).

    Both significands are normalised to 24 bits, so ``q = (ma << 37) // mb`` has 37 or 38 bits
    and the remainder r the rest. ``2q + (r != 0)`` at exponent ``ea - eb - 38`` stands for the
    quotient: it is exact when r = 0, else both lie strictly between 2q and 2q + 2, and every
    rounding boundary of a result of at most 24 bits (a grid point or midpoint, at least 2^11
    units apart here) is a multiple of 2 units, so none lies between them: they round alike (the sticky bit
    of numerics.exact_quotient)."""
    ma, ea = _normalised(ma, ea)
    mb, eb = _normalised(mb, eb)
    numerator = ma << 37
    q = numerator // mb
    sticky = (numerator - q * mb) != 0
    return _nearest_ordinal(sign, (q << 1) | sticky, ea - eb - 38, fmt)


def _quotient(form: Form, x: _Source, z: _Source, profile: Profile, *, huge: np.ndarray | None = None) -> BatchResult:
    """:func:`~ptxspec.semantics.floating_point_approx._quotient` (within ``ULPS_DIV`` of a / b)
    after the NaN operands: 0/0, inf/inf invalid; x/0, inf/z infinite; 0/z, x/inf zero, each of
    sign a xor b. ``huge``: div.approx's divisors beyond 2^126, decided before (NaN for an
    infinite a, else a zero of sign a xor b)."""
    sign = x.sign ^ z.sign
    huge = np.zeros(len(sign), dtype=bool) if huge is None else huge & ~x.nan
    nan = x.nan | z.nan | (huge & x.infinite) | (~huge & ((x.infinite & z.infinite) | (x.zero & z.zero)))
    infinite = ~nan & ~huge & (x.infinite | z.zero)
    zero = ~nan & ~infinite & (huge | z.infinite | x.zero)
    n = _quotient_ordinal(sign, x.significand | (x.significand == 0), x.exponent, z.significand | (z.significand == 0), z.exponent)
    bound = _Bound(*_clip(F32, n, fpa.ULPS_DIV), np.ones(len(n), dtype=bool))
    fixed = [(infinite, F32_INF | _signed_zero(sign)), (zero, _signed_zero(sign))]
    return _result(F32, ftz="ftz" in form, profile=profile, nan=nan, fixed=fixed, bound=bound)


@batched("div.full")
def _div_full(form: Form) -> FastPath:
    """§9.7.3.8 div.full{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.div_full`):
    NaN operands give the unspecified NaN, the special operands IEEE's quotients, every other
    quotient the encodings within 2 ulps of its correct rounding, computed exactly with integers
    (:func:`_quotient_ordinal`)."""
    ftz = "ftz" in form

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return _quotient(form, _source(a, ftz), _source(b, ftz), profile)

    return fast


@batched("div.approx")
def _div_approx(form: Form) -> FastPath:
    """§9.7.3.8 div.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.div_approx`):
    for ``2^126 < |b| < 2^128`` NaN if a is infinite, else a zero of sign a xor b; otherwise as
    div.full. ``|b| > 2^126`` on the decoded finite b is an integer comparison: its leading bit
    lies above 2^126, or at 2^126 with more bits below it."""
    ftz = "ftz" in form

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        x, z = _source(a, ftz), _source(b, ftz)
        msb = z.exponent + batch_rounding.bit_length(z.significand) - 1
        power = (z.significand & (z.significand - 1)) == 0
        huge = _finite_nonzero(z) & ((msb > 126) | ((msb == 126) & ~power))
        return _quotient(form, x, z, profile, huge=huge)

    return fast


@batched("rcp.approx")
def _rcp_approx(form: Form) -> FastPath:
    """§9.7.3.13 rcp.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.rcp_approx`):
    NaN -> NaN, +-inf -> +-0, +-0 (a subnormal under .ftz) -> +-inf, else within 1 ulp of the
    correctly rounded 1/a, exactly by :func:`_quotient_ordinal`."""
    ftz = "ftz" in form

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, ftz)
        one = np.ones(len(a), dtype=np.int64)
        n = _quotient_ordinal(x.sign, one, np.zeros(len(a), dtype=np.int64), x.significand | x.zero, x.exponent)
        bound = _Bound(*_clip(F32, n, fpa.ULPS_RCP), np.ones(len(a), dtype=bool))
        fixed = [(x.infinite, _signed_zero(x.sign)), (x.zero, F32_INF | _signed_zero(x.sign))]
        return _result(F32, ftz=ftz, profile=profile, nan=x.nan, fixed=fixed, bound=bound)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.3.15 sqrt.approx, §9.7.3.16 rsqrt.approx: relative bounds on binary64 square roots
# ---------------------------------------------------------------------------------------------


def _square_root(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sqrt(x) for positive .f32 values in binary64 (correctly rounded, IEEE 754), and whether it
    is exact. An exact root of a 24-bit significand has at most 12 significant bits; a binary64
    root with at most 26 has an exact square in binary64, so ``y * y == x`` then tests exactness."""
    y = np.sqrt(x)
    short = (y.view(np.uint64) & np.uint64((1 << 27) - 1)) == 0
    return y, short & (y * y == x)


@batched("sqrt.approx")
def _sqrt_approx(form: Form) -> FastPath:
    """§9.7.3.15 sqrt.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.sqrt_approx`):
    NaN and negatives -> NaN, +inf -> +inf, +-0 -> +-0, else every encoding within relative 2^-23
    of sqrt(a). numpy's sqrt is correctly rounded, so the ends carry :data:`ROUNDED_MARGIN` (an
    end of a one-bit significand, ``sqrt(1 + 2^-23) (1 - 2^-23)``, lies 2^-46.7 from the grid
    point 1 - 2^-24). An exact root y (at most 12 bits) makes ``y (1 -+ 2^-23)`` exact in
    binary64 (36 bits): margin 0 there; every other root is irrational."""
    ftz = "ftz" in form
    eps = _as_float(fpa.SQRT_RELATIVE)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, ftz)
        nan = x.nan | _negative(x)
        with np.errstate(all="ignore"):
            y, exact = _square_root(np.where(_finite_nonzero(x) & ~nan, x.x, 1.0))
            bound = _within_relative(y, exact, eps, F32, margin=ROUNDED_MARGIN)
        fixed = [(x.infinite & ~nan, F32_INF), (x.zero, _signed_zero(x.sign))]
        return _result(F32, ftz=ftz, profile=profile, nan=nan, fixed=fixed, bound=bound)

    return fast


@batched("rsqrt.approx")
def _rsqrt_approx(form: Form) -> FastPath:
    """§9.7.3.16 rsqrt.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.rsqrt_approx`):
    NaN and negatives -> NaN, +inf -> +0, +-0 -> +-inf, else every encoding within relative
    2^-22.9 of 1/sqrt(a): ``1 / np.sqrt(x)`` errs by two binary64 roundings, the end by a third
    (:data:`ROUNDED_MARGIN`). Every end
    ``y (1 -+ 2^-22.9)`` is irrational (2^-22.9 is), so none is a rounding boundary."""
    ftz = "ftz" in form
    eps = _as_float(fpa.RSQRT_RELATIVE)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, ftz)
        nan = x.nan | _negative(x)
        with np.errstate(all="ignore"):
            y = 1.0 / np.sqrt(np.where(_finite_nonzero(x) & ~nan, x.x, 1.0))
            bound = _within_relative(y, None, eps, F32, margin=ROUNDED_MARGIN)
        fixed = [(x.infinite & ~nan, 0), (x.zero, F32_INF | _signed_zero(x.sign))]
        return _result(F32, ftz=ftz, profile=profile, nan=nan, fixed=fixed, bound=bound)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.3.18-19 sin.approx, cos.approx: absolute bounds
# ---------------------------------------------------------------------------------------------

#: 2 pi and 100 pi in binary64. The f32 numbers nearest them are 1.7e-7 and 5.9e-6 away, the
#: binary64 ones within 1e-15 and 3e-14: no f32 number lies between a constant and its binary64
#: value, so comparing an f32 a with them is comparing with 2 pi and 100 pi (the scalar compare()).
TWO_PI = 2 * np.pi
HUNDRED_PI = 100 * np.pi


def _sin_cos(form: Form, cosine: bool) -> FastPath:
    """The common part of §9.7.3.18-19 (:func:`~ptxspec.semantics.floating_point_approx._sin_cos`):
    NaN and infinities -> NaN, zeros -> +1.0 (cos) or the zero (sin), ``|a| <= 2 pi`` within
    the profile's near bound (2^-20.5 unless ``profile.sin_cos_near_bound`` says otherwise),
    ``|a| <= 100 pi`` within 2^-14.7, beyond that every non-NaN encoding (``anything``).
    The binary64 sin/cos are used on ``|a| <= 100 pi`` only."""
    ftz = "ftz" in form
    far = _as_float(fpa.SIN_COS_FAR)
    top = F32.exponent_field_max << F32.mantissa_bits

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        near = _as_float(profile.sin_cos_near_bound.get(form.opcode, fpa.SIN_COS_NEAR))
        x = _source(a, ftz)
        nan = x.nan | x.infinite
        magnitude = np.abs(x.x)
        computed = _finite_nonzero(x) & (magnitude <= HUNDRED_PI)
        with np.errstate(all="ignore"):
            arg = np.where(computed, x.x, 0.0)
            y = np.cos(arg) if cosine else np.sin(arg)
            b = _within_distance(y, np.where(magnitude <= TWO_PI, near, far), F32)
        anything = ~computed
        bound = _Bound(np.where(anything, -top, b.low), np.where(anything, top, b.high), anything | b.decided)
        zero_result = F32_ONE if cosine else _signed_zero(x.sign)
        return _result(F32, ftz=ftz, profile=profile, nan=nan, fixed=[(x.zero, zero_result)], bound=bound)

    return fast


@batched("sin.approx")
def _sin_approx(form: Form) -> FastPath:
    """§9.7.3.18 sin.approx{.ftz}.f32 (:func:`_sin_cos`)."""
    return _sin_cos(form, cosine=False)


@batched("cos.approx")
def _cos_approx(form: Form) -> FastPath:
    """§9.7.3.19 cos.approx{.ftz}.f32 (:func:`_sin_cos`)."""
    return _sin_cos(form, cosine=True)


# ---------------------------------------------------------------------------------------------
# §9.7.3.20 lg2.approx, §9.7.3.21 ex2.approx, §9.7.3.22 tanh.approx
# ---------------------------------------------------------------------------------------------


def _power_of_two(x: _Source) -> tuple[np.ndarray, np.ndarray]:
    """Whether each decoded value is a power of two, and its exponent then (log2, exactly)."""
    power = (x.significand & (x.significand - 1)) == 0
    return power, x.exponent + batch_rounding.bit_length(x.significand) - 1


@batched("lg2.approx")
def _lg2_approx(form: Form) -> FastPath:
    """§9.7.3.20 lg2.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.lg2_approx`):
    NaN and negatives -> NaN, +inf -> +inf, +-0 -> -inf; on (0.5, 2) within absolute 2^-22 of
    log2(a), elsewhere within relative 2^-22. A power of two has the exact integer log2 e, whose
    ends ``e -+ 2^-22`` (e = 0) or ``e (1 -+ 2^-22)`` are exact in binary64: margin 0; every
    other log2 of a dyadic is irrational."""
    ftz = "ftz" in form
    bound_value = _as_float(fpa.LG2_BOUND)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, ftz)
        nan = x.nan | _negative(x)
        power, e = _power_of_two(x)
        with np.errstate(all="ignore"):
            arg = np.where(_finite_nonzero(x) & ~nan, x.x, 2.0)
            y = np.where(power, e.astype(np.float64), np.log2(arg))
            inner = (arg > 0.5) & (arg < 2.0)
            # 1.0 is the only power of two inside (0.5, 2): its ends -+2^-22 are exact.
            distance = _within_distance(y, bound_value, F32, power)
            relative = _within_relative(np.where(inner, 1.0, y), power, bound_value, F32)
        bound = _merge_bounds([(~inner, relative), (inner, distance)], len(a))
        fixed = [(x.infinite & ~nan, F32_INF), (x.zero, F32_INF | F32.sign_mask)]
        return _result(F32, ftz=ftz, profile=profile, nan=nan, fixed=fixed, bound=bound)

    return fast


@batched("ex2.approx")
def _ex2_approx(form: Form) -> FastPath:
    """§9.7.3.21 ex2.approx{.ftz}.f32 (:func:`~ptxspec.semantics.floating_point_approx.ex2_approx`):
    NaN -> NaN, -inf -> +0, +inf -> +inf, +-0 -> 1.0, a >= 129 -> +inf, a < -152 -> the
    ordinals [-2, 2], else within 2 ulps of the correctly rounded 2^a. For an integer a, 2^a is
    exact (``np.ldexp``) and rounds exactly; every other 2^a is irrational, so never a midpoint."""
    ftz = "ftz" in form

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, ftz)
        inside = _finite_nonzero(x) & (x.x < fpa.EX2_OVERFLOW) & (x.x >= fpa.EX2_UNDERFLOW)
        with np.errstate(all="ignore"):
            arg = np.where(inside, x.x, 0.0)
            integer = np.floor(arg) == arg
            y = np.where(integer, np.ldexp(1.0, arg.astype(np.int64)), np.exp2(arg))
            bound = _within_ulps(y, integer, F32, fpa.ULPS_EX2)
        underflow = _finite_nonzero(x) & (x.x < fpa.EX2_UNDERFLOW)
        bound = _merge_bounds([(inside, bound), (underflow, _Bound(*_clip(F32, np.zeros(len(a), np.int64), fpa.ULPS_EX2), np.ones(len(a), bool)))], len(a))
        overflow = _finite_nonzero(x) & (x.x >= fpa.EX2_OVERFLOW)
        fixed = [(x.infinite & x.sign, 0), ((x.infinite & ~x.sign) | overflow, F32_INF), (x.zero, F32_ONE)]
        return _result(F32, ftz=ftz, profile=profile, nan=x.nan, fixed=fixed, bound=bound)

    return fast


@batched("tanh.approx")
def _tanh_approx(form: Form) -> FastPath:
    """§9.7.3.22 tanh.approx.f32 (:func:`~ptxspec.semantics.floating_point_approx.tanh_approx`):
    NaN -> NaN, +-inf -> +-1.0, +-0 -> +-0, else within relative 2^-11 of tanh(a) (no .ftz).
    tanh is odd, and so is the set (RP(-z) = -RM(z)): it is computed on |a| and mirrored. There
    ``0 < tanh|a| < min(|a|, 1)``, so the ends lie strictly below ``min(|a|, 1) (1 -+ 2^-11)``
    (:func:`_within_relative`'s ``below``; exact products of at most 36 bits), which decides
    them where tanh|a| is within the margin of 1 (large |a|) or of |a| (tiny |a|): the ends
    are then just below those products, often f32 numbers."""
    eps = _as_float(fpa.TANH_RELATIVE)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _source(a, False)
        with np.errstate(all="ignore"):
            magnitude = np.where(_finite_nonzero(x), np.abs(x.x), 1.0)
            b = _within_relative(np.tanh(magnitude), None, eps, F32, below=np.minimum(magnitude, 1.0))
        mirrored = _Bound(np.where(x.sign, -b.high, b.low), np.where(x.sign, -b.low, b.high), b.decided)
        fixed = [(x.infinite, F32_ONE | _signed_zero(x.sign)), (x.zero, _signed_zero(x.sign))]
        return _result(F32, ftz=False, profile=profile, nan=x.nan, fixed=fixed, bound=mirrored)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.3.16 rsqrt.approx.f64: ends in double-double arithmetic
# ---------------------------------------------------------------------------------------------


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split: ``a = hi + lo`` exactly, each of at most 26 significant bits (binary64,
    no overflow)."""
    t = 134217729.0 * a
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's TwoProduct: ``a b = p + e`` exactly, p = fl(a b), for binary64 a, b whose
    partial products neither overflow nor underflow (here all lie within [2^-60, 2^4])."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fast_two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's Fast2Sum: ``a + b = s + e`` exactly, s = fl(a + b), for ``|a| >= |b|``; then
    ``|e|`` is at most half the spacing of binary64 at s on e's side."""
    s = a + b
    return s, b - (s - a)


def _double_double(x: Fraction) -> tuple[float, float]:
    """A rational as ``hi + lo`` (binary64s, hi = RN(x)) within 2^-106 |x| + 2^-1074."""
    hi = float(x)
    return hi, float(x - Fraction(hi))


#: Each end of rsqrt.approx.f64's bracket is decided when its double-double lies farther than
#: this (relative) from the binary64 number nearest it.
DOUBLE_DOUBLE_MARGIN = 2.0**-98


@batched("rsqrt.approx.f64")
def _rsqrt_approx_f64(form: Form) -> FastPath:
    """§9.7.3.16 rsqrt.approx.f64 (:func:`~ptxspec.semantics.floating_point_approx.rsqrt_approx_f64`):
    NaN -> the quiet input NaN (a single NaN operand is what ``payload_nan`` returns under
    either rule), negatives -> ``payload_nan`` without NaN operands, +inf -> +0, +-0 -> +-inf,
    else every .f64 encoding from RP(y (1 - eps)) to RM(y (1 + eps)), y = 1/sqrt(a), eps =
    2^-22.9. Binary64 alone cannot round these ends to .f64, so they are computed in
    double-double arithmetic, exact but for a few roundings of 2^-104:

    1. ``a = m 4^k``, m in [1, 4) (exact), so y = 2^-k / sqrt(m);
    2. ``r0 = 1 / sqrt(m)`` in binary64: two correct roundings, ``r0 = r (1 + e0)``, ``|e0| <=
       2^-52 (1 + 2^-52)`` (r = 1/sqrt(m));
    3. one Newton step ``r1 = r0 + r0 rho / 2``, ``rho = 1 - m r0^2`` from the exact products
       ``r0^2 = p + pe``, ``m p = q + qe`` (TwoProduct): ``1 - q`` is exact (Sterbenz), the
       other three operations err by at most 2^-104 in all, so rho is within 2^-103 of its
       value; with it r1 would be ``r (1 - 3 e0^2 / 2 - e0^3 / 2)``, within 2^-103.4; r1 is kept
       as the pair Fast2Sum(r0, correction): within 2^-102 of r;
    4. times ``1 -+ eps`` as a double-double (:func:`_double_double`, within 2^-106.9): the
       TwoProduct of the high parts and three cross terms of 2^-53 (each rounding by 2^-106,
       their sum by 2^-104), joined by Fast2Sum: z_hi + z_lo within 2^-101 of ``r (1 -+ eps)``.

    The end lies within :data:`DOUBLE_DOUBLE_MARGIN` (2^-98, eight times that) of z_hi + z_lo;
    where ``|z_lo|`` exceeds it, the end lies strictly on z_lo's side of the binary64 z_hi and
    within half a spacing of it (Fast2Sum), so RP is z_hi or the next number up, RM z_hi or the
    next down; scaling by 2^-k is exact (y lies in [2^-512, 2^538], normal). The end is never a
    binary64 number (eps is of degree 10, y of degree at most 2), so only vectors within 2^-97
    of one are undecided: about 2^-44 of them."""
    eps = fpa.RSQRT_RELATIVE
    low_end, high_end, shift = eps.enclose(140)
    middle = Fraction(low_end + high_end, 2 << shift) if shift >= 0 else Fraction((low_end + high_end) << -shift, 2)
    factors = (_double_double(1 - middle), _double_double(1 + middle))

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = a.view(np.float64)
        nan_in = np.isnan(x)
        negative = ~nan_in & np.signbit(x) & (x != 0)
        zero, infinite = x == 0, np.isposinf(x)
        finite = ~(nan_in | negative | zero | infinite)
        _, significand, exponent = _binary64_parts(np.where(finite, x, 1.0))
        k = (exponent + batch_rounding.bit_length(significand) - 1) >> 1
        m = np.ldexp(significand.astype(np.float64), exponent - 2 * k)
        r0 = 1.0 / np.sqrt(m)
        p, pe = _two_product(r0, r0)
        q, qe = _two_product(m, p)
        rho = (1.0 - q) - (qe + m * pe)
        r_hi, r_lo = _fast_two_sum(r0, r0 * (0.5 * rho))
        ends, decided = [], finite.copy()
        for (c_hi, c_lo), up in zip(factors, (True, False)):
            product, error = _two_product(r_hi, np.full(len(a), c_hi))
            z_hi, z_lo = _fast_two_sum(product, error + (r_hi * c_lo + r_lo * c_hi))
            decided &= np.abs(z_lo) > DOUBLE_DOUBLE_MARGIN * z_hi
            moved = np.where(z_lo > 0, np.nextafter(z_hi, np.inf), z_hi) if up else np.where(z_lo < 0, np.nextafter(z_hi, -np.inf), z_hi)
            ends.append(np.ldexp(moved, -k).view(np.uint64))
        low, high = ends
        interval = decided & (low != high)
        bits = np.where(zero, np.uint64(F64_INF) | (a & np.uint64(F64_SIGN)), np.where(infinite, np.uint64(0), low))
        bits = np.where(nan_in, a | np.uint64(1 << 51), bits)
        no_operand = profile.payload_nan(F64, [None])
        any_nan = None
        if isinstance(no_operand, int):
            bits = np.where(negative, np.uint64(no_operand), bits)
        else:
            bits = np.where(negative, np.uint64(canonical_nan(F64)), bits)
            any_nan = negative if negative.any() else None
        intervals = Intervals(interval, low, high, np.zeros(len(a), dtype=bool))
        undecided = finite & ~decided
        return BatchResult(bits.astype(np.uint64), any_nan, F64, 1, 64, {}, undecided if undecided.any() else None, intervals)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.3.14 rcp.approx.ftz.f64, §9.7.3.17 rsqrt.approx.ftz.f64: the 1.11.20 upper word
# ---------------------------------------------------------------------------------------------

F64_UPPER = fpa.F64_UPPER


def _upper_word_result(n: np.ndarray, done: np.ndarray, fixed: np.ndarray) -> BatchResult:
    """:func:`~ptxspec.semantics.floating_point_approx._upper_word_result` from the nearest
    ordinals n (in 1.11.20) of the vectors not ``done`` (``fixed`` holds the bits of those):
    the words of ordinals ``n - 1 .. n + 1``, a subnormal one flushed to the zero of its sign,
    each in the upper half of the register. One member is bits; more are a
    :class:`~ptxspec.semantics.results.OneOf`, kept as a row of :class:`Members`."""
    subnormal_top = 1 << F64_UPPER.mantissa_bits
    members = []
    for d in range(-fpa.ULPS_UPPER_WORD, fpa.ULPS_UPPER_WORD + 1):
        m = n + d
        word = np.where((m != 0) & (np.abs(m) < subnormal_top), (m < 0) * F64_UPPER.sign_mask, _from_ordinal(F64_UPPER, m))
        members.append(word.astype(np.uint64) << np.uint64(32))
    single = np.logical_and.reduce([m == members[0] for m in members])
    bits = np.where(done, fixed, members[0]).astype(np.uint64)
    return BatchResult(bits, None, F64, 1, 64, members=Members(~done & ~single, np.stack(members, axis=1)))


def _upper_word(a: np.ndarray) -> _Source:
    """:func:`~ptxspec.semantics.floating_point_approx._upper_word`: a[63:32] decoded in 1.11.20
    with subnormals flushed, and its exact binary64 value (21 significant bits)."""
    sign, significand, exponent, nan, infinite = batch_rounding.decode(F64_UPPER, (a >> np.uint64(32)).astype(np.uint32), ftz=True)
    zero = (significand == 0) & ~nan & ~infinite
    with np.errstate(all="ignore"):
        x = np.where(nan | infinite, 1.0, np.ldexp(np.where(sign, -1.0, 1.0) * significand, np.where(nan | infinite, 0, exponent)))
    return _Source(sign, significand, exponent, nan, infinite, zero, x)


@batched("rcp.approx.ftz.f64")
def _rcp_approx_ftz_f64(form: Form) -> FastPath:
    """§9.7.3.14 rcp.approx.ftz.f64 (:func:`~ptxspec.semantics.floating_point_approx.rcp_approx_ftz_f64`):
    on tmp = a[63:32] in 1.11.20, NaN -> the canonical 0x7fffffff00000000, +-inf -> +-0,
    +-0 (and subnormals) -> +-inf, else the words within 1 ulp of the correctly rounded 1/tmp,
    whose ordinal the integer quotient gives exactly (:func:`_quotient_ordinal`, 21 bits)."""

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        t = _upper_word(a)
        n = _quotient_ordinal(t.sign, np.ones(len(a), dtype=np.int64), np.zeros(len(a), dtype=np.int64), t.significand | t.zero, t.exponent, F64_UPPER)
        sign = t.sign.astype(np.uint64) << np.uint64(63)
        fixed = np.where(t.nan, np.uint64(fpa.F64_UPPER_CANONICAL_NAN), np.where(t.infinite, sign, sign | np.uint64(F64_INF)))
        return _upper_word_result(n, ~_finite_nonzero(t), fixed)

    return fast


@batched("rsqrt.approx.ftz.f64")
def _rsqrt_approx_ftz_f64(form: Form) -> FastPath:
    """§9.7.3.17 rsqrt.approx.ftz.f64 (:func:`~ptxspec.semantics.floating_point_approx.rsqrt_approx_ftz_f64`):
    on tmp = a[63:32] in 1.11.20, NaN and negatives -> 0x7fffffff00000000, +inf -> +0, +-0
    (and subnormals) -> +-inf, else the words within 1 ulp of the correctly rounded
    1/sqrt(tmp). ``1 / np.sqrt(tmp)`` errs by two binary64 roundings (within 2^-52 of the
    value), so :data:`ROUNDED_MARGIN` brackets it (:func:`_round_bracket`); the root is never a
    midpoint of 1.11.20 (a 22-bit odd significand M: ``M^2 T`` is odd, never a power of two),
    so only vectors within the margin of one are undecided, about 2^-28 of them."""

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        t = _upper_word(a)
        nan = t.nan | _negative(t)
        with np.errstate(all="ignore"):
            y = 1.0 / np.sqrt(np.where(_finite_nonzero(t) & ~nan, t.x, 1.0))
            n, decided = _round_bracket(*_bracket(y, y, None, ROUNDED_MARGIN), F64_UPPER, None)
        sign = t.sign.astype(np.uint64) << np.uint64(63)
        fixed = np.where(nan, np.uint64(fpa.F64_UPPER_CANONICAL_NAN), np.where(t.infinite, np.uint64(0), sign | np.uint64(F64_INF)))
        done = nan | ~_finite_nonzero(t)
        result = _upper_word_result(n, done, fixed)
        undecided = ~done & ~decided
        return attrs.evolve(result, undecided=undecided if undecided.any() else None)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.4.9 tanh.approx, §9.7.4.10 ex2.approx on .f16/.bf16: the recorded tables (sm_90)
# ---------------------------------------------------------------------------------------------


def _half_format(form: Form) -> FloatFormat:
    return half_precision.element_format(form)


def _tables(opcode: str):
    """The builder of §9.7.4.9-10 for a profile that recorded every 16-bit input
    (``profile.approx16_tables``, :func:`~ptxspec.semantics.half_precision.measured_table`): each
    lane's result is the table entry of its input word, as the scalar function returns it; the
    lanes of an x2 form are looked up alike and packed back, lane 0 the upper half."""

    def build(form: Form) -> FastPath:
        fmt = _half_format(form)
        lanes = half_precision.lane_count(form)
        key = half_precision._table_key(form, fmt)
        spec_path = _half_spec_path(form, opcode)

        def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
            table = half_precision.measured_table(profile, key)
            if table is None:
                return cast(BatchResult, spec_path(a, profile=profile))
            words = a.astype(np.uint32)
            out = np.zeros(len(a), dtype=np.uint32)
            for lane in range(lanes):
                shift = 16 * (lanes - 1 - lane)
                out |= table[(words >> np.uint32(shift)) & np.uint32(0xFFFF)].astype(np.uint32) << np.uint32(shift)
            return BatchResult(out.astype(a.dtype), None, fmt, lanes, 16)

        return fast

    return build


# --- the spec's sets on one 16-bit lane ----------------------------------------------------------


def _half_source(fmt: FloatFormat, a: np.ndarray, ftz: bool) -> _Source:
    """A 16-bit source decoded, and its binary64 value (exact: at most 11 significant bits)."""
    sign, significand, exponent, nan, infinite = batch_rounding.decode(fmt, a, ftz=ftz)
    zero = (significand == 0) & ~nan & ~infinite
    x = np.ldexp(np.where(sign, -1.0, 1.0) * significand.astype(np.float64), exponent.astype(np.int64))
    return _Source(sign, significand, exponent, nan, infinite, zero, x)


def _half_spec_path(form: Form, opcode: str) -> FastPath:
    """The spec's sets of a 16-bit form: one lane's (:func:`_half_tanh`, :func:`_half_ex2`), or
    of both lanes of an x2 form (:func:`_two_lanes`)."""
    fmt = _half_format(form)
    lane = _half_tanh(fmt) if opcode == "tanh" else _half_ex2(fmt, "ftz" in form)
    return lane if half_precision.lane_count(form) == 1 else _two_lanes(form, lane, fmt)


def _two_lanes(form: Form, lane: FastPath, fmt: FloatFormat) -> FastPath:
    """An x2 form (:func:`~ptxspec.semantics.half_precision.per_lane`: the same lane function on
    each half-word, lane 0 the upper one) as two lookups in the table of every lane input
    (:func:`_lane_table`, built once per profile): the lanes' bits are packed and their
    ``any_nan``, :class:`Intervals` and :class:`Members` (ex2's :class:`OneOf` sets reaching +0)
    arrays stacked into ``(n, 2)`` arrays, from which :meth:`BatchResult.result` packs the
    :class:`~ptxspec.semantics.results.Lanes` the scalar function returns. Where a lane's result is
    a set those arrays cannot hold (an input the lane path leaves undecided whose set the readable
    semantics gives), the register's result is the Lanes of both lanes' results, in ``sets``."""
    tables: dict[int, tuple[Profile, _LaneTable]] = {}

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        held = tables.get(id(profile))
        if held is None or held[0] is not profile:
            held = tables[id(profile)] = (profile, _lane_table(form, lane, profile))
        t = held[1]
        words = a.astype(np.int64)
        upper, lower = words >> 16, words & 0xFFFF
        both = np.stack([upper, lower], axis=1)
        bits = ((t.bits[upper].astype(np.uint32) << np.uint32(16)) | t.bits[lower].astype(np.uint32)).astype(a.dtype)
        any_nan = t.any_nan[both]
        iv = t.intervals
        intervals = Intervals(iv.mask[both], iv.low[both], iv.high[both], iv.nan[both], None if iv.flushed is None else iv.flushed[both])
        members = None
        if t.members is not None:
            mask = t.members.mask[both]
            members = Members(mask, t.members.values[both]) if mask.any() else None
        index = np.flatnonzero(t.listed[upper] | t.listed[lower])
        # A listed lane's result is a set (never bits), so pack_lanes would make these Lanes.
        pairs = zip(t.results[upper[index]].tolist(), t.results[lower[index]].tolist())
        sets: dict[int, Allowed] = dict(zip(index.tolist(), [Lanes(pair, 16) for pair in pairs]))
        return BatchResult(bits, any_nan if any_nan.any() else None, fmt, 2, 16, sets, None, intervals, members)

    return fast


@attrs.frozen(eq=False)
class _LaneTable:
    """One lane's result for each of the 2^16 inputs, as a :class:`BatchResult` of one lane holds
    them (``bits``, ``any_nan``, ``intervals``, ``members``: the :class:`OneOf` sets), with
    ``listed`` marking the inputs whose result is another set and ``results`` (an object array)
    each input's result itself."""

    bits: np.ndarray
    any_nan: np.ndarray
    intervals: Intervals
    members: Members | None
    listed: np.ndarray
    results: np.ndarray


def _lane_table(form: Form, lane: FastPath, profile: Profile) -> _LaneTable:
    """The lane path on every 16-bit input; an input it leaves undecided is evaluated by the
    scalar semantics of the x2 ``form`` with that input in both lanes (``per_lane`` gives each
    lane the same function), its lane 0 taken: bits, or else listed with the sets."""
    from ptxspec.semantics.instructions import evaluate

    inputs = np.arange(1 << 16, dtype=np.uint16)
    r = cast(BatchResult, lane(inputs, profile=profile))
    n = len(inputs)
    undecided = r.undecided if r.undecided is not None else np.zeros(n, dtype=bool)
    listed = undecided.copy()
    listed[list(r.sets)] = True
    results = np.empty(n, dtype=object)
    results[:] = [r.result(i) for i in range(n)]
    bits = r.bits.copy()
    for i in np.flatnonzero(undecided).tolist():
        whole = evaluate(form, [(i << 16) | i], profile)[0]
        results[i] = whole >> 16 if isinstance(whole, int) else whole.lanes[0]  # type: ignore[union-attr, attr-defined]
        if isinstance(results[i], int):  # bits after all: not listed (a listed lane is a set)
            bits[i], listed[i] = results[i], False
    any_nan = r.any_nan if r.any_nan is not None else np.zeros(n, dtype=bool)
    assert r.intervals is not None
    intervals = attrs.evolve(r.intervals, mask=r.intervals.mask & ~listed)
    # The OneOf sets (ex2's reaching +0; the lane path's member rows, or listed) as member rows
    # of the table; bits hold the least member.
    one_of = [i for i, result in enumerate(results.tolist()) if isinstance(result, OneOf)]
    members = None
    if one_of:
        k = max(len(results[i].members) for i in one_of)
        values = np.repeat(bits.astype(np.uint16)[:, None], k, axis=1)
        for i in one_of:
            listed_members = sorted(results[i].members)
            values[i] = listed_members + listed_members[-1:] * (k - len(listed_members))
            bits[i] = listed_members[0]
        mask = np.zeros(n, dtype=bool)
        mask[one_of] = True
        listed &= ~mask
        members = Members(mask, values)
        any_nan = any_nan & ~mask
    return _LaneTable(bits, any_nan & ~listed, intervals, members, listed, results)


def _half_tanh(fmt: FloatFormat) -> FastPath:
    """§9.7.4.9 tanh.approx.{f16,bf16} (:func:`~ptxspec.semantics.half_precision.tanh_approx`):
    NaN -> NaN, +-inf -> +-1.0, zeros unchanged, else every encoding within the absolute error
    (2^-10.987 for .f16, 2^-8 for .bf16) of tanh(a), no flushing; odd, so computed on |a| and
    mirrored. The ends ``tanh|a| -+ delta`` are irrational (tanh of a non-zero dyadic is), so
    none is a rounding boundary; with .bf16's dyadic delta they can lie just below the grid
    points ``min(|a|, 1) -+ delta`` (tanh|a| < min(|a|, 1)) or just above ``-+ delta``
    (tanh|a| > 0), which :func:`_within_distance`'s ``below`` and ``above`` decide where those
    sums are exact."""
    delta = _as_float(half_precision.TANH_ABSOLUTE[fmt.name])
    dyadic = half_precision.TANH_ABSOLUTE[fmt.name].exact is not None
    one = int(batch_rounding.round_bits(np.zeros(1, bool), np.ones(1, np.int64), np.zeros(1, np.int64), fmt)[0])

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _half_source(fmt, a, False)
        with np.errstate(all="ignore"):
            magnitude = np.where(_finite_nonzero(x), np.abs(x.x), 1.0)
            below, above = (np.minimum(magnitude, 1.0), np.zeros(len(a))) if dyadic else (None, None)
            bound = _within_distance(np.tanh(magnitude), delta, fmt, below=below, above=above)
            bound = _Bound(np.where(x.sign, -bound.high, bound.low), np.where(x.sign, -bound.low, bound.high), bound.decided)
        fixed = [(x.infinite, one | _signed_zero(x.sign, fmt)), (x.zero, a.astype(np.int64))]
        return _result(fmt, ftz=False, profile=profile, nan=x.nan, fixed=fixed, bound=bound)

    return fast


def _half_ex2(fmt: FloatFormat, ftz: bool) -> FastPath:
    """§9.7.4.10 ex2.approx.{f16,ftz.bf16} (:func:`~ptxspec.semantics.half_precision.ex2_approx`):
    NaN -> NaN, -inf -> +0, +inf -> +inf, zeros (subnormals under .ftz) -> 1.0; else
    :func:`~ptxspec.semantics.half_precision.faithful_to_bound` from RM(y (1 - eps)) to
    RP(y (1 + eps)), y = 2^a, or from the largest finite value to +inf (a >= overflow), or from +0
    to the smallest subnormal (a <= underflow). 2^a is exact for an integer a (margin 0; then the
    ends ``y (1 -+ eps)`` are irrational, eps being 2^-9.9, or dyadic and exact for .bf16's 2^-7);
    otherwise irrational, and for .bf16 strictly above (a > 0) or below (a < 0) the grid points
    ``1 -+ 2^-7`` it nears for tiny a (:func:`_above`, :func:`_below`). A set that reaches +0 is a :class:`OneOf` of its few members, as the
    scalar function lists them."""
    eps = _as_float(half_precision.EX2_RELATIVE[fmt.name])
    overflow, underflow = half_precision.ex2_bounds(fmt)
    max_finite = (fmt.max_finite_fields[0] << fmt.mantissa_bits) | fmt.max_finite_fields[1]
    inf = fmt.exponent_field_max << fmt.mantissa_bits
    one = fmt.bias << fmt.mantissa_bits
    dyadic_eps = half_precision.EX2_RELATIVE[fmt.name].exact is not None

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        x = _half_source(fmt, a, ftz)
        finite = _finite_nonzero(x)
        inside = finite & (x.x < overflow) & (x.x > underflow)
        with np.errstate(all="ignore"):
            arg = np.where(inside, x.x, 0.0)
            integer = np.floor(arg) == arg
            y = np.where(integer, np.ldexp(1.0, arg.astype(np.int64)), np.exp2(arg))
            exact = integer if dyadic_eps else None
            down, up = y * (1.0 - eps), y * (1.0 + eps)
            (d_lo, d_hi), (u_lo, u_hi) = _bracket(down, down, exact), _bracket(up, up, exact)
            if dyadic_eps:  # 2^a lies strictly above 1 for a > 0, below for a < 0
                positive, negative = ~integer & (arg > 0), ~integer & (arg < 0)
                d_lo, u_lo = _above(d_lo, 1.0 - eps, positive), _above(u_lo, 1.0 + eps, positive)
                d_hi, u_hi = _below(d_hi, 1.0 - eps, negative), _below(u_hi, 1.0 + eps, negative)
            first, first_ok = _round_bracket(d_lo, d_hi, fmt, Rounding.RM)
            last, last_ok = _round_bracket(u_lo, u_hi, fmt, Rounding.RP)
        first = np.where(finite & (x.x >= overflow), max_finite, np.where(finite & (x.x <= underflow), 0, first))
        last = np.where(finite & (x.x >= overflow), inf, np.where(finite & (x.x <= underflow), 1, last))
        decided = ~inside | (first_ok & last_ok)
        reaches_zero = finite & decided & (first <= 0)
        fixed = [(x.infinite & x.sign, 0), (x.infinite & ~x.sign, inf), (x.zero, one)]
        if ftz:  # every member of a set below the smallest normal flushes to +0.0
            flushed = reaches_zero & (last < (1 << fmt.mantissa_bits))
            fixed.append((flushed, 0))
            reaches_zero &= ~flushed
        given = _zero_reaching_members(fmt, last, reaches_zero, ftz)
        return _result(fmt, ftz=ftz, profile=profile, nan=x.nan, fixed=fixed, bound=_Bound(first, last, decided), given=given)

    return fast


def _zero_reaching_members(fmt: FloatFormat, last: np.ndarray, mask: np.ndarray, ftz: bool) -> Members:
    """faithful_to_bound's :class:`OneOf` sets from +0 to the ordinal ``last`` (each member
    flushed under .ftz, ``fmt_flush``), as :class:`Members` rows of the vectors in ``mask`` (the
    last member repeated to the widest row). They are few and repeat, so each distinct ``last`` is
    listed once."""
    tops = np.unique(last[mask]).tolist()
    listed = {top: sorted({half_precision.fmt_flush(fmt, n, ftz) for n in range(0, top + 1)}) for top in tops}
    k = max((len(v) for v in listed.values()), default=1)
    values = np.zeros((len(last), k), dtype=np.int64)
    for top, members in listed.items():
        values[mask & (last == top)] = members + members[-1:] * (k - len(members))
    return Members(mask.copy(), values)


batched("tanh.approx.half")(_tables("tanh"))
batched("ex2.approx.half")(_tables("ex2"))


__all__ = ["MARGIN", "NUMPY_ERROR"]
