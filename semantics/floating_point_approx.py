"""§9.7.3 The approximate floating-point instructions, as the sets of results the manual allows.

Where the manual fixes a result (the special-value tables of §9.7.3.13-22, the IEEE 754 special
cases of division, NaN inputs) a function here returns its bits. Elsewhere the manual gives an
error bound, and the function returns every encoding within it: an
:class:`~ptxspec.semantics.results.Interval` (or :class:`Flushed` under ``.ftz``). The bounds come
in three kinds, each measured against the *exact* mathematical result ``y``:

* **ulps** (div.approx, div.full, rcp.approx.f32, ex2): "the maximum ulp error is k". An ulp error
  is the number of representable steps between the result and the correctly rounded (``.rn``)
  value of ``y`` -- the manual's own words for ex2, "2 ulp from the correctly rounded result"
  (§9.7.3.21), and NVIDIA's definition ("the difference in ulps between the result ... and a
  correctly rounded single-precision result", CUDA C++ Programming Guide, Mathematical Functions).
  So the allowed set is the 2k+1 encodings centred on ``rn(y)`` in the order of their values (-0
  and +0 being one value). ``rn(y)`` is taken with the format's subnormals and an unbounded
  exponent range above (IEEE 754 §7.4: a result whose rounded magnitude exceeds the largest
  finite number overflows); the step after the largest finite number is infinity, and an exact
  result far beyond the range allows infinity only.
* **relative** (sqrt, rsqrt, lg2 outside (0.5, 2), tanh): every encoding ``r`` with
  ``|r - y| <= eps * |y|``.
* **absolute** (sin, cos, lg2 on (0.5, 2)): every encoding ``r`` with ``|r - y| <= delta``.

Subnormals (§9.7.3 introduction): sm_20 and later support subnormal inputs and results by default;
``.ftz`` flushes subnormal inputs to sign-preserving zero before the operation and subnormal
results after it. The bound applies to the unflushed result, so under ``.ftz`` the allowed set is
the bound's set with each subnormal member replaced by a zero of its sign (:class:`Flushed`).

NaN results: "single-precision instructions return an unspecified NaN" (§9.7.3), so an .f32 NaN
result is the profile's unspecified NaN; rsqrt.approx.f64 carries NaN payloads like the other
.f64 instructions; rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 "map input NaNs to a canonical NaN
with encoding 0x7fffffff00000000".

Exact values: division and reciprocal are rational, computed exactly with the integers of
:mod:`~ptxspec.semantics.numerics`. Square roots, 2^(n/10), pi, ln 2, exp, log, sin and tanh are
enclosed rigorously with integer arithmetic (Machin's formula, Taylor and atanh series with their
remainders bounded) in open intervals that shrink as the precision asked for grows; a bound's
endpoint is rounded by refining the enclosure until the rounding of its two ends agrees. Every
rounding is :func:`~ptxspec.semantics.numerics.round_exact`'s, so no rounding logic lives here.

sm_90: these sets were checked against an H200 on every f32 input of every one-operand .f32 form,
every upper word of the two 1.11.20 forms, 2^32 random operand pairs of each division and 2^30
inputs of rsqrt.approx.f64. The chip keeps every bound except cos.approx.f32 on 4698 inputs
(the sm_90 profile's ``sin_cos_near_bound``), which that profile allows and the spec does not.
The .approx scan (``conformance/silicon/approx.py``, docs/silicon-approx.rst) repeated this on an
H100 and an H200 with the same result -- every input of each one-operand .f32 form and of the
upper words, 2^28 hashed pairs of each division, its largest errors recomputed exactly with MPFR --
and keeps the evidence in conformance/data/sm_90/ (``meta-approx-<chip>.json``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import attrs

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics.floating_point import nan_result
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    Value,
    decode,
    exact_quotient,
    fields,
    infinity,
    is_subnormal,
    round_exact,
    to_fraction,
    zero,
)
from ptxspec.profiles import Profile
from ptxspec.semantics.results import Allowed, Interval, OneOf, Result

F32 = FORMATS["f32"]
F64 = FORMATS["f64"]

#: The "1.11.20 IEEE floating-point format" of §9.7.3.14 and §9.7.3.17: the upper word of an .f64
#: value -- sign, the 11-bit exponent and the 20 most significant mantissa bits.
F64_UPPER = FloatFormat("f64[63:32]", 11, 20)

#: "Input NaNs map to a canonical NaN with encoding 0x7fffffff00000000" (§9.7.3.14, §9.7.3.17).
F64_UPPER_CANONICAL_NAN = 0x7FFFFFFF00000000


# =============================================================================================
# Real numbers, exactly or by rigorous enclosures
# =============================================================================================

#: ``(lo, hi, s)``: the open interval ``(lo * 2^-s, hi * 2^-s)``.
Bounds = tuple[int, int, int]


@attrs.frozen
class Real:
    """A real number: ``exact`` when it is rational and known, else ``bounds(p)``, an open
    interval that holds it and whose width is about ``2^-p`` times its magnitude (or ``2^-p`` for
    the functions whose precision is absolute)."""

    exact: Fraction | None = None
    bounds: Callable[[int], Bounds] | None = None

    def enclose(self, p: int) -> Bounds:
        if self.exact is None:
            assert self.bounds is not None
            return self.bounds(p)
        x = self.exact
        s = p - (x.numerator.bit_length() - x.denominator.bit_length())
        low, exact = _floor_scaled(x, s)
        return (low - 1 if exact else low), low + 1, s


def _floor_scaled(x: Fraction, s: int) -> tuple[int, bool]:
    """``floor(x * 2^s)`` and whether it is exact."""
    num, den = x.numerator, x.denominator
    if s >= 0:
        num <<= s
    else:
        den <<= -s
    q, r = divmod(num, den)
    return q, r == 0


def exactly(x: Fraction | int) -> Real:
    return Real(exact=Fraction(x))


def _align(a: Bounds, b: Bounds) -> tuple[int, int, int, int, int]:
    s = max(a[2], b[2])
    return a[0] << (s - a[2]), a[1] << (s - a[2]), b[0] << (s - b[2]), b[1] << (s - b[2]), s


def add(x: Real, y: Real) -> Real:
    """x + y (the sum of two open intervals is the open interval of the sums). An exact addend is
    added exactly where the scale allows, so that a sum whose end is a rounding boundary (1 + 2^-11
    as the upper end of tanh's bound near 1) stays open there."""
    if x.exact is not None and y.exact is not None:
        return exactly(x.exact + y.exact)
    if y.exact is not None:
        x, y = y, x
    if x.exact is not None:
        c = x.exact

        def shifted(p: int) -> Bounds:
            lo, hi, s = y.enclose(p + 2)
            c_low, exact = _floor_scaled(c, s)
            return lo + c_low, hi + c_low + (0 if exact else 1), s

        return Real(bounds=shifted)

    def bounds(p: int) -> Bounds:
        xl, xh, yl, yh, s = _align(x.enclose(p + 2), y.enclose(p + 2))
        return xl + yl, xh + yh, s

    return Real(bounds=bounds)


def negate(x: Real) -> Real:
    if x.exact is not None:
        return exactly(-x.exact)

    def bounds(p: int) -> Bounds:
        lo, hi, s = x.enclose(p)
        return -hi, -lo, s

    return Real(bounds=bounds)


def multiply(x: Real, y: Real) -> Real:
    """x * y: the open hull of the four corner products, kept to about ``p + 8`` significant bits
    (flooring the lower end and raising the upper end keeps the interval open). An exact factor
    scales the other's ends exactly, for the reason given in :func:`add`."""
    if x.exact is not None and y.exact is not None:
        return exactly(x.exact * y.exact)
    if y.exact is not None:
        x, y = y, x
    if x.exact is not None:
        c = x.exact
        if c == 0:
            return exactly(0)

        def scaled(p: int) -> Bounds:
            lo, hi, s = y.enclose(p + 2)
            ends = sorted((lo * c, hi * c))
            return math.floor(ends[0]), math.ceil(ends[1]), s

        return Real(bounds=scaled)

    def bounds(p: int) -> Bounds:
        xl, xh, xs = x.enclose(p + 4)
        yl, yh, ys = y.enclose(p + 4)
        corners = (xl * yl, xl * yh, xh * yl, xh * yh)
        lo, hi, s = min(corners), max(corners), xs + ys
        drop = max(0, max(abs(lo), abs(hi)).bit_length() - (p + 8))
        return lo >> drop, -(-hi >> drop), s - drop

    return Real(bounds=bounds)


def _refine_sign(x: Real) -> Bounds:
    for p in _precisions(32):
        lo, hi, s = x.enclose(p)
        if lo >= 0 or hi <= 0:
            return lo, hi, s
    raise ArithmeticError("the sign of a non-zero real was not decided")  # pragma: no cover


def _precisions(start: int):
    p = start
    while p <= 1 << 16:
        yield p
        p *= 2


# ---------------------------------------------------------------------------------------------
# Rounding a real: the one rounding routine, applied to both ends of an enclosure
# ---------------------------------------------------------------------------------------------


def _exact_value(x: Fraction, fmt: FloatFormat) -> Exact:
    """x as an :class:`Exact` for :func:`round_exact` (sticky when x is not dyadic)."""
    return exact_quotient(Exact(int(x < 0), abs(x.numerator)), Exact(0, x.denominator), fmt.precision)


def _guard_scale(fmt: FloatFormat) -> int:
    """A scale below the last place of every encoding of ``fmt`` by at least two bits (what a
    sticky :class:`Exact` needs, see numerics)."""
    return fmt.mantissa_bits - fmt.min_normal_exponent + 2


def _just_above(n: int, s: int, fmt: FloatFormat) -> Exact:
    """A sticky value standing for the reals just above ``n * 2^-s``."""
    g = max(0, _guard_scale(fmt) - s)
    n, s = n << g, s + g
    return Exact(0, n, -s, sticky=True) if n >= 0 else Exact(1, -n - 1, -s, sticky=True)


def _just_below(n: int, s: int, fmt: FloatFormat) -> Exact:
    """A sticky value standing for the reals just below ``n * 2^-s``."""
    g = max(0, _guard_scale(fmt) - s)
    n, s = n << g, s + g
    return Exact(0, n - 1, -s, sticky=True) if n > 0 else Exact(1, -n, -s, sticky=True)


def round_real(x: Real, fmt: FloatFormat, mode: Rounding) -> int:
    """The bits of ``x`` rounded into ``fmt`` (no flushing).

    An enclosed real is refined until every real of its open enclosure rounds alike; rounding is
    monotone, so it is enough that the reals just inside both ends round alike. This ends for
    every irrational number (none is a rounding boundary); rational reals are always exact here.
    """
    if x.exact is not None:
        return round_exact(_exact_value(x.exact, fmt), fmt, mode)
    for p in _precisions(fmt.precision + 16):
        lo, hi, s = x.enclose(p)
        low = round_exact(_just_above(lo, s, fmt), fmt, mode)
        if low == round_exact(_just_below(hi, s, fmt), fmt, mode):
            return low
    raise ArithmeticError("rounding of an enclosed real was not decided")  # pragma: no cover


def _scale_exponent(x: Real) -> int:
    """An integer e with ``|x|`` roughly 2^e (for scaling x into the normal range)."""
    if x.exact is not None:
        return x.exact.numerator.bit_length() - x.exact.denominator.bit_length()
    lo, hi, s = _refine_sign(x)
    return max(abs(lo), abs(hi)).bit_length() - s


def times_power_of_two(x: Real, n: int) -> Real:
    if x.exact is not None:
        return exactly(x.exact * Fraction(2) ** n)

    def bounds(p: int) -> Bounds:
        lo, hi, s = x.enclose(p)
        return lo, hi, s - n

    return Real(bounds=bounds)


# ---------------------------------------------------------------------------------------------
# Encodings in the order of their values
# ---------------------------------------------------------------------------------------------


def ordinal(fmt: FloatFormat, bits: int) -> int:
    """The position of a non-NaN encoding among the values of ``fmt``: 0 for both zeros, 1 for
    the smallest positive subnormal, ..., ``ordinal(+inf)`` one past the largest finite value,
    and the negatives mirrored below zero."""
    magnitude_bits = bits & ~fmt.sign_mask
    return -magnitude_bits if bits & fmt.sign_mask else magnitude_bits


def from_ordinal(fmt: FloatFormat, n: int) -> int:
    return n if n >= 0 else fmt.sign_mask | -n


def nearest_ordinal(fmt: FloatFormat, y: Real) -> int:
    """The ordinal of the correctly rounded (``.rn``) value of y, with an unbounded exponent range
    above the format: beyond infinity the ordinals go on counting steps of the format's precision.
    Scaling by a power of two moves a normal value's ordinal by a whole number of binades."""
    bits = round_real(y, fmt, Rounding.RN)
    if fields(fmt, bits)[1] != fmt.exponent_field_max:
        return ordinal(fmt, bits)
    e = _scale_exponent(y)
    scaled = round_real(times_power_of_two(y, -e), fmt, Rounding.RN)
    steps = e << fmt.mantissa_bits
    n = ordinal(fmt, scaled)
    return n + steps if n > 0 else n - steps


# =============================================================================================
# The allowed sets
# =============================================================================================


@attrs.frozen
class Flushed(Allowed):
    """The members of ``inner`` after ``.ftz``: each subnormal member becomes a zero of its sign
    (§9.7.3: ".ftz ... flushes subnormal inputs and results to sign-preserving zero"). So no
    subnormal is allowed, and a zero is allowed where ``inner`` holds a zero or a subnormal of that
    sign."""

    inner: Interval

    def __contains__(self, bits: int) -> bool:
        fmt = self.inner.format
        if is_subnormal(fmt, bits):
            return False
        if bits in self.inner:
            return True
        value = decode(fmt, bits)
        return isinstance(value, Exact) and value.is_zero and self.flushes_to_zero(value.sign)

    def flushes_to_zero(self, sign: int) -> bool:
        fmt = self.inner.format
        low, high = ordinal(fmt, self.inner.low), ordinal(fmt, self.inner.high)
        largest = (1 << fmt.mantissa_bits) - 1
        return low <= largest and high >= 1 if sign == 0 else low <= -1 and high >= -largest

    def describe(self) -> str:
        return f"{self.inner.describe()}, subnormals flushed to sign-preserving zero"

    def to_json(self) -> dict:
        return {"kind": "flushed", "inner": self.inner.to_json()}


def between(fmt: FloatFormat, low: int, high: int, *, ftz: bool) -> Result:
    """Every encoding with an ordinal in [low, high], flushed under ``.ftz``; a set of one
    encoding is its bits."""
    largest = (1 << fmt.mantissa_bits) - 1
    if ftz and 1 <= low and high <= largest:  # nothing but positive subnormals: exactly +0
        return zero(fmt, 0)
    if ftz and -largest <= low and high <= -1:
        return zero(fmt, 1)
    if low == high != 0:
        return from_ordinal(fmt, low)
    interval = Interval(fmt, from_ordinal(fmt, low), from_ordinal(fmt, high))
    if not ftz:
        return interval
    flushed = Flushed(interval)
    return flushed if flushed.flushes_to_zero(0) or flushed.flushes_to_zero(1) else interval


def within_ulps(fmt: FloatFormat, y: Real, k: int, *, ftz: bool) -> Result:
    """Every encoding at most ``k`` steps from the correctly rounded value of y (see the module
    docstring for the ulp error and overflow)."""
    n = nearest_ordinal(fmt, y)
    top = ordinal(fmt, infinity(fmt))
    return between(fmt, max(-top, min(n - k, top)), min(top, max(n + k, -top)), ftz=ftz)


def within_distance(fmt: FloatFormat, y: Real, delta: Real, *, ftz: bool) -> Result:
    """Every encoding r with ``|r - y| <= delta``: from the least encoding at or above y - delta
    to the greatest at or below y + delta."""
    low = round_real(add(y, negate(delta)), fmt, Rounding.RP)
    high = round_real(add(y, delta), fmt, Rounding.RM)
    return between(fmt, ordinal(fmt, low), ordinal(fmt, high), ftz=ftz)


def within_relative(fmt: FloatFormat, y: Real, eps: Real, *, ftz: bool) -> Result:
    """Every encoding r with ``|r - y| <= eps * |y|`` (y not zero): between y (1 - eps) and
    y (1 + eps). (Written as products, not as ``y -+ eps |y|``, so that both ends follow y's
    enclosure together.)"""
    one = exactly(1)
    below, above = multiply(y, add(one, negate(eps))), multiply(y, add(one, eps))
    if _refine_sign(y)[0] < 0:
        below, above = above, below
    low = round_real(below, fmt, Rounding.RP)
    high = round_real(above, fmt, Rounding.RM)
    return between(fmt, ordinal(fmt, low), ordinal(fmt, high), ftz=ftz)


def anything(fmt: FloatFormat, *, ftz: bool) -> Result:
    """Every encoding that is not NaN (and not subnormal under ``.ftz``)."""
    top = ordinal(fmt, infinity(fmt))
    return between(fmt, -top, top, ftz=ftz)


# =============================================================================================
# Rigorous enclosures of the elementary functions (integers only)
# =============================================================================================


def _open(lo: int, hi: int, s: int) -> Bounds:
    """The open interval just around the closed interval [lo, hi] * 2^-s."""
    return lo - 1, hi + 1, s


def power_of_two(n: int, d: int) -> Real:
    """2^(n/d): exact when d divides n, else by integer d-th roots (irrational then)."""
    if n % d == 0:
        return exactly(Fraction(2) ** (n // d))

    def bounds(p: int) -> Bounds:
        s = p + 2 - n // d
        root = _iroot(1 << (n + d * s), d)
        return root, root + 1, s

    return Real(bounds=bounds)


def _iroot(x: int, d: int) -> int:
    """floor(x ** (1/d)) by Newton's method from above."""
    if x < 2:
        return x
    r = 1 << -(-x.bit_length() // d)
    while True:
        t = ((d - 1) * r + x // r ** (d - 1)) // d
        if t >= r:
            return r
        r = t


def square_root(x: Fraction) -> Real:
    """sqrt(x) for a dyadic x > 0: exact when x is the square of a dyadic."""
    num, den = x.numerator, x.denominator  # den is a power of two
    e = -(den.bit_length() - 1)
    if e & 1:
        num, e = num << 1, e - 1
    root = math.isqrt(num)
    if root * root == num:
        return exactly(Fraction(root) * Fraction(2) ** (e // 2))

    def bounds(p: int) -> Bounds:
        k = max(0, p + 2 - num.bit_length() // 2)
        r = math.isqrt(num << (2 * k))
        return r, r + 1, k - e // 2

    return Real(bounds=bounds)


def reciprocal(x: Real) -> Real:
    """1/x for x > 0."""
    if x.exact is not None:
        return exactly(1 / x.exact)

    def bounds(p: int) -> Bounds:
        lo, hi, s = x.enclose(p + 4)
        t = p + 4 + max(lo.bit_length(), hi.bit_length()) - s
        # 1/x lies strictly between 2^s/hi and 2^s/lo; written at scale t.
        return (1 << (s + t)) // hi, -(-(1 << (s + t)) // lo), t

    return Real(bounds=bounds)


@functools.lru_cache(maxsize=32)
def _pi(P: int) -> tuple[int, int]:
    """pi * 2^P lies in the closed interval [lo, hi]: Machin's formula
    pi = 16 atan(1/5) - 4 atan(1/239), each alternating series summed with floored terms."""
    g = P + 16
    a, ea = _atan_inverse(5, g)
    b, eb = _atan_inverse(239, g)
    centre, err = 16 * a - 4 * b, 16 * ea + 4 * eb
    return (centre - err) >> 16, -(-(centre + err) >> 16)


def _atan_inverse(n: int, P: int) -> tuple[int, int]:
    """atan(1/n) * 2^P within (S - err, S + err). floor(floor(x)/m) = floor(x/m), so every term
    is the floor of its exact value (error < 1); the alternating tail is below its first term."""
    power, total, k = (1 << P) // n, 0, 0
    while power:
        term = power // (2 * k + 1)
        total += -term if k & 1 else term
        power //= n * n
        k += 1
    return total, k + 1


@functools.lru_cache(maxsize=32)
def _ln2(P: int) -> tuple[int, int]:
    """ln 2 * 2^P in the closed interval [lo, hi]: ln 2 = 2 atanh(1/3) = sum 2/((2k+1) 3^(2k+1)).
    Each floored term errs by less than 1; the tail after the first zero term is below 9/8."""
    power, total, k = (1 << P) // 3, 0, 0
    while power:
        total += power // (2 * k + 1)
        power //= 9
        k += 1
    return 2 * total, 2 * (total + k + 2)


def _exp_closed(t_lo: int, t_hi: int, P: int) -> tuple[int, int]:
    """exp on [t_lo, t_hi] * 2^-P (0 <= t_lo <= t_hi <= 2^P): closed bounds at scale P. The
    lower sum floors every term of the Taylor series at t_lo; the upper one raises every term at
    t_hi and adds the last as the tail (for t <= 1 the tail after term k is below term k)."""
    one = 1 << P
    low = term = one
    k = 1
    while term:
        term = term * t_lo // (k * one)
        low += term
        k += 1
    high = term = one
    k = 1
    while term > 1:
        term = -(-term * t_hi // (k * one))
        high += term
        k += 1
    return low, high + term


def exp2(x: Fraction) -> Real:
    """2^x for a dyadic x: 2^n * exp(f ln 2) with x = n + f, 0 <= f < 1; exact for integer x."""
    n = math.floor(x)
    f = x - n
    if f == 0:
        return exactly(Fraction(2) ** n)

    def bounds(p: int) -> Bounds:
        P = p + 16
        g_lo, g_hi = _ln2(P)
        t_lo, _ = _floor_scaled(f * g_lo, 0)
        t_hi, _ = _floor_scaled(f * g_hi, 0)
        lo, hi = _exp_closed(t_lo, t_hi + 1, P)
        return _open(lo, hi, P - n)

    return Real(bounds=bounds)


def log2(x: Fraction) -> Real:
    """log2(x) for a dyadic x > 0: e + 2 atanh(s) / ln 2 with x = m 2^e, m in [3/4, 3/2),
    s = (m - 1)/(m + 1), ``|s| <= 1/5``; exact when x is a power of two."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    m = x / Fraction(2) ** e
    if m < 1:
        m, e = m * 2, e - 1
    if m >= Fraction(3, 2):
        m, e = m / 2, e + 1
    if m == 1:
        return exactly(e)
    s = (m - 1) / (m + 1)

    def bounds(p: int) -> Bounds:
        P = p + 16
        a_lo, a_hi = _atanh_closed(s, P)
        g_lo, g_hi = _ln2(P)
        # ln m = 2 atanh(s); divide by ln 2 > 0, the ends chosen by the sign of ln m.
        num_lo, num_hi = 2 * a_lo << P, 2 * a_hi << P
        lo = num_lo // (g_hi if num_lo >= 0 else g_lo)
        hi = -(-num_hi // (g_lo if num_hi >= 0 else g_hi))
        return _open(lo + (e << P), hi + (e << P), P)

    return Real(bounds=bounds)


def _atanh_closed(s: Fraction, P: int) -> tuple[int, int]:
    """atanh(s) * 2^P in a closed interval, ``|s| <= 1/5``: sum s^(2k+1)/(2k+1), every term of one
    sign; floored terms err by under 2 each (the floor of s and of each power), the tail after the
    first zero term is below 1."""
    sign = -1 if s < 0 else 1
    S, _ = _floor_scaled(abs(s), P)
    one = 1 << P
    power, total, k = S, 0, 0
    while power:
        total += power // (2 * k + 1)
        power = power * S * S // (one * one)
        k += 1
    lo, hi = total, total + 2 * k + 4
    return (lo, hi) if sign > 0 else (-hi, -lo)


def _sin_cos_closed(R: int, P: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """sin and cos of the dyadic R * 2^-P (``|R| <= 2^P``) in closed intervals at scale P. The
    alternating Taylor series are summed with floored term magnitudes (each off by under 2); the
    tail is below its first term, itself under 2 when the loop stops."""
    one = 1 << P
    r2 = R * R
    results = []
    for first, start in ((abs(R), 1), (one, 0)):
        term, total, k = first, 0, 0
        while term:
            total += -term if k & 1 else term
            term = term * r2 // ((start + 2 * k + 1) * (start + 2 * k + 2) * one * one)
            k += 1
        err = 2 * k + 2
        results.append((total - err, total + err))
    (s_lo, s_hi), cos_bounds = results
    sin_bounds = (s_lo, s_hi) if R >= 0 else (-s_hi, -s_lo)
    return sin_bounds, cos_bounds


def sin_or_cos(x: Fraction, cosine: bool) -> Real:
    """sin(x) or cos(x) for a dyadic x != 0 (irrational then, by Lindemann).

    x = k pi/2 + r with k the nearest integer to x/(pi/2); r is enclosed in [R_lo, R_hi] from the
    enclosure of pi. sin and cos are 1-Lipschitz, so their values at r lie within R_hi - R_lo of
    their values at R_lo; the quadrant k mod 4 picks +-sin(r) or +-cos(r)."""

    def bounds(p: int) -> Bounds:
        # Work at scale Q, where pi/2 is [pi_lo, pi_hi] (pi at scale Q - 1); k pi/2 errs by k units.
        Q = p + 16 + max(0, _scale_exponent(exactly(x)))
        pi_lo, pi_hi = _pi(Q - 1)
        k = round(x * (1 << Q) / pi_lo)
        X_lo, exact = _floor_scaled(x, Q)
        X_hi = X_lo if exact else X_lo + 1
        r_lo = X_lo - (k * pi_hi if k >= 0 else k * pi_lo)
        r_hi = X_hi - (k * pi_lo if k >= 0 else k * pi_hi)
        width = r_hi - r_lo
        (s_lo, s_hi), (c_lo, c_hi) = _sin_cos_closed(r_lo, Q)
        quadrant = (k + (1 if cosine else 0)) % 4
        lo, hi = ((s_lo, s_hi), (c_lo, c_hi), (-s_hi, -s_lo), (-c_hi, -c_lo))[quadrant]
        return _open(lo - width, hi + width, Q)

    return Real(bounds=bounds)


def two_pi_times(n: int) -> Real:
    """n * 2 pi (for the ranges of §9.7.3.18-19)."""

    def bounds(p: int) -> Bounds:
        P = p + 8
        lo, hi = _pi(P)
        return _open(2 * n * lo, 2 * n * hi, P)

    return Real(bounds=bounds)


def compare(x: Fraction, y: Real) -> int:
    """The sign of x - y (y irrational, so never zero)."""
    for p in _precisions(16):
        lo, hi, s = add(exactly(x), negate(y)).enclose(p)
        if lo >= 0:
            return 1
        if hi <= 0:
            return -1
    raise ArithmeticError("comparison not decided")  # pragma: no cover


def tanh(x: Fraction) -> Real:
    """tanh(x) for a dyadic x != 0: (E - 1)/(E + 1) with ``E = exp(2|x|)``, computed from
    ``exp(2|x|/2^j)`` by j squarings; odd in x. Past ``|x| = (p + 3)/2``,
    ``1 - tanh|x| < 2 exp(-2|x|) < 2^-(p + 2)``, which gives the enclosure (1 - 2^-(p + 2), 1)
    without evaluating exp."""
    sign = -1 if x < 0 else 1
    u = 2 * abs(x)

    def bounds(p: int) -> Bounds:
        if u >= p + 3:
            lo, hi, s = (1 << (p + 2)) - 1, 1 << (p + 2), p + 2
        else:
            j = max(0, math.floor(u).bit_length() + 1)
            tiny = max(0, -_scale_exponent(exactly(u)))
            P = p + 16 + j + tiny
            V, exact = _floor_scaled(u / (1 << j), P)
            E_lo, E_hi = _exp_closed(V, V if exact else V + 1, P)
            for _ in range(j):
                E_lo, E_hi = E_lo * E_lo >> P, -(-E_hi * E_hi >> P)
            one = 1 << P
            lo = ((E_lo - one) << P) // (E_lo + one)
            hi = -(-((E_hi - one) << P) // (E_hi + one))
            lo, hi, s = _open(lo, hi, P)
        return (lo, hi, s) if sign > 0 else (-hi, -lo, s)

    return Real(bounds=bounds)


# =============================================================================================
# The instructions
# =============================================================================================


def _source(fmt: FloatFormat, bits: int, form: Form) -> Value:
    return decode(fmt, bits, ftz="ftz" in form)


def _is_zero(v: Value) -> bool:
    return isinstance(v, Exact) and v.is_zero


def _is_negative(v: Value) -> bool:
    """Below zero: -Inf, or a negative number that is not -0.0."""
    return not isinstance(v, NaN) and v.sign == 1 and not _is_zero(v)


F32_ONE = 0x3F800000

# The error bounds of the manual, as reals.
ULPS_DIV = 2
ULPS_RCP = 1
ULPS_EX2 = 2
SQRT_RELATIVE = exactly(Fraction(1, 1 << 23))  # 2^-23
RSQRT_RELATIVE = power_of_two(-229, 10)  # 2^-22.9
LG2_BOUND = exactly(Fraction(1, 1 << 22))  # 2^-22, absolute on (0.5, 2), relative elsewhere
TANH_RELATIVE = exactly(Fraction(1, 1 << 11))  # 2^-11
SIN_COS_NEAR = power_of_two(-41, 2)  # 2^-20.5 on [-2 pi, 2 pi]
SIN_COS_FAR = power_of_two(-147, 10)  # 2^-14.7 on [-100 pi, 100 pi]


def _quotient(x: Exact | Infinity, z: Exact | Infinity, form: Form, profile: Profile) -> Result:
    """a / b within 2 ulps; special operands give IEEE 754's exact quotients: 0/0 and inf/inf are
    invalid (NaN), x/0 and inf/z infinite, 0/z and x/inf zero, each of sign a xor b."""
    sign = x.sign ^ z.sign
    if isinstance(x, Infinity) and isinstance(z, Infinity) or _is_zero(x) and _is_zero(z):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity) or _is_zero(z):
        return infinity(F32, sign)
    if isinstance(z, Infinity) or _is_zero(x):
        return zero(F32, sign)
    return within_ulps(F32, exactly(to_fraction(x) / to_fraction(z)), ULPS_DIV, ftz="ftz" in form)


@semantic("div.approx")
def div_approx(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.8 div.approx{.ftz}.f32: ``d = a / b``, "a fast approximation to divide, computed as
    d = a * (1/b). For ``|b|`` in [2^-126, 2^126], the maximum ulp error is 2. For ``2^126 < |b| < 2^128``,
    if a is infinity, div.approx.f32 returns NaN, otherwise it returns 0."

    * ``2^126 < |b| < 2^128``: NaN for an infinite a, else a zero, of sign a xor b as a * (1/b) gives.
    * Special operands give IEEE 754's exact results, as a * (1/b) does with the reciprocal table
      of §9.7.3.13 (1/+-0 = +-inf, 1/+-inf = +-0). The manual also says "fast, approximate
      division by zero creates a value of infinity (with same sign as a)"; for b = -0 that
      contradicts its own a * (1/b), and sm_90 gives a/-0 = -inf for a > 0: we follow a * (1/b).
    * Otherwise at most 2 ulps from the correctly rounded a/b, subnormal b included: sm_20+
      "supports subnormal numbers by default" and the manual states no other rule for a divisor
      below 2^-126 (sm_90 meets the bound there).
    * ``.ftz`` flushes subnormal inputs and results ("subnormal inputs and results are flushed to
      sign-preserving zero"; without .ftz that sentence is the sm_1x behaviour).
    """
    x, z = _source(F32, a, form), _source(F32, b, form)
    if isinstance(x, NaN) or isinstance(z, NaN):
        return profile.unspecified_nan(F32)
    if isinstance(z, Exact) and to_fraction(z.magnitude()) > 2**126:
        return profile.unspecified_nan(F32) if isinstance(x, Infinity) else zero(F32, x.sign ^ z.sign)
    return _quotient(x, z, form, profile)


@semantic("div.full")
def div_full(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.8 div.full{.ftz}.f32: ``d = a / b``, "a relatively fast, full-range approximation
    that scales operands to achieve better accuracy, but is not fully IEEE 754 compliant and does
    not support rounding modifiers. The maximum ulp error is 2 across the full range of inputs."

    Special operands (zeros, infinities) give IEEE 754's exact quotients; every other quotient is
    at most 2 ulps from the correctly rounded a/b. ``.ftz`` flushes subnormal inputs and results.
    """
    x, z = _source(F32, a, form), _source(F32, b, form)
    if isinstance(x, NaN) or isinstance(z, NaN):
        return profile.unspecified_nan(F32)
    return _quotient(x, z, form, profile)


@semantic("rcp.approx")
def rcp_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.13 rcp.approx{.ftz}.f32: ``d = 1 / a``, "a fast approximation to reciprocal. The
    maximum ulp error is 1 across the full range of inputs."

    Table: -Inf -> -0.0, -0.0 -> -Inf, +0.0 -> +Inf, +Inf -> +0.0, NaN -> NaN. ``.ftz`` flushes
    subnormal inputs and results ("rcp.ftz.f32 flushes subnormal inputs and results to
    sign-preserving zero"), so a subnormal a gives an infinity.
    """
    x = _source(F32, a, form)
    if isinstance(x, NaN):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return zero(F32, x.sign)
    if x.is_zero:
        return infinity(F32, x.sign)
    return within_ulps(F32, exactly(1 / to_fraction(x)), ULPS_RCP, ftz="ftz" in form)


def _upper_word(a: int) -> Value:
    """tmp = a[63:32], "the most significant 32 bits of .f64 operand a in 1.11.20 IEEE
    floating-point format", with subnormals flushed ("subnormal inputs and results are flushed to
    sign-preserving zero")."""
    return decode(F64_UPPER, a >> 32, ftz=True)


#: The error bound we take for the two 1.11.20 forms (see :func:`_upper_word_result`).
ULPS_UPPER_WORD = 1


def _upper_word_result(y: Real) -> Result:
    """d[63:32] approximates y in the 1.11.20 format, d[31:0] = 0.

    The manual gives the exact value (``d[63:32] = 1.0 / tmp``, ``1.0 / sqrt(tmp)``), the
    destination format and the word "approximation", but no error bound. We take the smallest
    bound, in the manual's own measure, that lets the result be an approximation rather than the
    rounded value: at most 1 ulp from the correctly rounded result in 1.11.20 (the bound it gives
    rcp.approx.f32; the 2^-22.9 of rsqrt.approx.f32 is finer than 1.11.20 can express). Subnormal
    members are flushed ("subnormal inputs and results are flushed to sign-preserving zero").
    sm_90 meets this bound and needs all of it: its result is the correctly rounded one or the one
    below, and not always a neighbour of y (rsqrt.approx.ftz.f64 of 0x4f900040c5096831 lies
    1.003 ulp below the exact value).
    """
    n = nearest_ordinal(F64_UPPER, y)
    members = set()
    for m in range(n - ULPS_UPPER_WORD, n + ULPS_UPPER_WORD + 1):
        bits = from_ordinal(F64_UPPER, m)
        if is_subnormal(F64_UPPER, bits):
            bits = zero(F64_UPPER, int(m < 0))
        members.add(bits << 32)
    return members.pop() if len(members) == 1 else OneOf(frozenset(members), 64)


@semantic("rcp.approx.ftz.f64")
def rcp_approx_ftz_f64(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.14 rcp.approx.ftz.f64: "a fast, gross approximation to the reciprocal":

    1. "extract the most-significant 32 bits of .f64 operand a in 1.11.20 IEEE floating-point
       format (i.e., ignore the least-significant 32 bits of a)",
    2. "compute an approximate .f64 reciprocal of this value using the most-significant 20 bits
       of the mantissa of operand a",
    3. "place the resulting 32-bits in 1.11.20 IEEE floating-point format in the most-significant
       32-bits of destination d", and
    4. "zero the least significant 32 mantissa bits of .f64 destination d".

    Table (on a[63:32]): -Inf -> -0.0, -subnormal -> -Inf, -0.0 -> -Inf, +0.0 -> +Inf,
    +subnormal -> +Inf, +Inf -> +0.0, NaN -> NaN; "input NaNs map to a canonical NaN with
    encoding 0x7fffffff00000000". NaN-ness is read from a[63:32] alone, so an .f64 NaN whose
    payload lies only in the low word is an infinity here. Otherwise d[63:32] is within 1 ulp of
    the correctly rounded 1/tmp (see :func:`_upper_word_result`).
    """
    tmp = _upper_word(a)
    if isinstance(tmp, NaN):
        return F64_UPPER_CANONICAL_NAN
    if isinstance(tmp, Infinity):
        return zero(F64, tmp.sign)
    if tmp.is_zero:
        return infinity(F64, tmp.sign)
    return _upper_word_result(exactly(1 / to_fraction(tmp)))


@semantic("sqrt.approx")
def sqrt_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.15 sqrt.approx{.ftz}.f32: ``d = sqrt(a)``, "a fast approximation to square root.
    The maximum relative error over the entire positive finite floating-point range is 2^-23."

    Table: -Inf -> NaN, -normal -> NaN, -0.0 -> -0.0, +0.0 -> +0.0, +Inf -> +Inf, NaN -> NaN.
    A negative subnormal is a negative number (NaN) unless ``.ftz`` flushes it to -0.0.
    """
    x = _source(F32, a, form)
    if isinstance(x, NaN) or _is_negative(x):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return infinity(F32, 0)
    if x.is_zero:
        return zero(F32, x.sign)
    return within_relative(F32, square_root(to_fraction(x)), SQRT_RELATIVE, ftz="ftz" in form)


@semantic("rsqrt.approx")
def rsqrt_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.16 rsqrt.approx{.ftz}.f32: ``d = 1/sqrt(a)``, "an approximation to the reciprocal
    square root". "For rsqrt.f32, the maximum relative error over the entire positive finite
    floating-point range is 2^-22.9."

    Table: -Inf -> NaN, -normal -> NaN, -0.0 -> -Inf, +0.0 -> +Inf, +Inf -> +0.0, NaN -> NaN.
    ``.ftz`` flushes subnormal inputs (a negative subnormal then gives -Inf) and results.
    """
    x = _source(F32, a, form)
    if isinstance(x, NaN) or _is_negative(x):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return zero(F32, 0)
    if x.is_zero:
        return infinity(F32, x.sign)
    return within_relative(F32, reciprocal(square_root(to_fraction(x))), RSQRT_RELATIVE, ftz="ftz" in form)


@semantic("rsqrt.approx.f64")
def rsqrt_approx_f64(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.16 rsqrt.approx.f64: ``d = 1/sqrt(a)``, with the table of rsqrt.approx.f32;
    "rsqrt.approx.f64 is emulated in software and are relatively slow". Subnormal inputs and
    results are supported (§9.7.3: "double-precision instructions support subnormal inputs and
    results"); NaN results carry payloads like the other .f64 instructions.

    The manual states a bound only "for rsqrt.f32" (relative error 2^-22.9) and none for .f64. We
    hold the .f64 form to that same bound: it is the one accuracy the manual gives for rsqrt, any
    tighter bound would be our invention, and sm_90's software sequence is far inside it (its
    results were correctly rounded in every recorded case).
    """
    x = decode(F64, a)
    if isinstance(x, NaN) or _is_negative(x):
        return nan_result(F64, [x], profile)
    if isinstance(x, Infinity):
        return zero(F64, 0)
    if x.is_zero:
        return infinity(F64, x.sign)
    return within_relative(F64, reciprocal(square_root(to_fraction(x))), RSQRT_RELATIVE, ftz=False)


@semantic("rsqrt.approx.ftz.f64")
def rsqrt_approx_ftz_f64(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.17 rsqrt.approx.ftz.f64: "an approximation of the double-precision (.f64) reciprocal
    square root of a value. The least significant 32 bits of the double-precision (.f64)
    destination d are all zeros": ``tmp = a[63:32]; d[63:32] = 1.0 / sqrt(tmp); d[31:0] = 0``.

    Table (on a[63:32]): -Inf -> NaN, -subnormal -> -Inf, -0.0 -> -Inf, +0.0 -> +Inf,
    +subnormal -> +Inf, +Inf -> +0.0, NaN -> NaN; "input NaNs map to a canonical NaN with
    encoding 0x7fffffff00000000". A negative normal tmp has no real root: NaN. For that NaN the
    manual names no encoding; we take the canonical 0x7fffffff00000000 (the only NaN this
    instruction names, and its low word is zero as the description requires; sm_90 agrees).
    Otherwise d[63:32] is within 1 ulp of the correctly rounded 1/sqrt(tmp) (see
    :func:`_upper_word_result`).
    """
    tmp = _upper_word(a)
    if isinstance(tmp, NaN) or _is_negative(tmp):
        return F64_UPPER_CANONICAL_NAN
    if isinstance(tmp, Infinity):
        return zero(F64, 0)
    if tmp.is_zero:
        return infinity(F64, tmp.sign)
    return _upper_word_result(reciprocal(square_root(to_fraction(tmp))))


def _sin_cos(form: Form, a: int, profile: Profile, cosine: bool) -> Result:
    """The common part of §9.7.3.18-19: absolute error 2^-20.5 on [-2 pi, 2 pi], 2^-14.7 on
    [-100 pi, 100 pi], "outside of the range [-100 pi .. +100 pi], only best effort is provided.
    There are no defined error guarantees" -- so there every non-NaN encoding is allowed."""
    x = _source(F32, a, form)
    if isinstance(x, NaN) or isinstance(x, Infinity):
        return profile.unspecified_nan(F32)
    if x.is_zero:
        return F32_ONE if cosine else zero(F32, x.sign)
    value = to_fraction(x.magnitude())
    if compare(value, two_pi_times(1)) <= 0:
        delta = profile.sin_cos_near_bound.get(form.opcode, SIN_COS_NEAR)
    elif compare(value, two_pi_times(50)) <= 0:
        delta = SIN_COS_FAR
    else:
        return anything(F32, ftz="ftz" in form)
    return within_distance(F32, sin_or_cos(to_fraction(x), cosine), delta, ftz="ftz" in form)


@semantic("sin.approx")
def sin_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.18 sin.approx{.ftz}.f32: ``d = sin(a)`` (a in radians), "a fast approximation to
    sine". "The maximum absolute error over input range is as follows: [-2pi .. 2pi]: 2^-20.5;
    [-100pi .. +100pi]: 2^-14.7. Outside of the range [-100pi .. +100pi], only best effort is
    provided. There are no defined error guarantees."

    Table: -Inf -> NaN, -0.0 -> -0.0, +0.0 -> +0.0, +Inf -> NaN, NaN -> NaN. ``.ftz`` flushes
    subnormal inputs (to a zero, whose sine is exact) and results.
    """
    return _sin_cos(form, a, profile, cosine=False)


@semantic("cos.approx")
def cos_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.19 cos.approx{.ftz}.f32: ``d = cos(a)`` (a in radians), "a fast approximation to
    cosine", with the absolute error bounds of sin: [-2pi .. 2pi]: 2^-20.5; [-100pi .. +100pi]:
    2^-14.7; "outside of the range [-100pi .. +100pi], only best effort is provided".

    Table: -Inf -> NaN, -0.0 -> +1.0, +0.0 -> +1.0, +Inf -> NaN, NaN -> NaN.

    sm_90 does not meet the 2^-20.5 bound everywhere (``profile.sin_cos_near_bound``): its
    profile allows 2^-20.4 on [-2pi, 2pi], the spec the manual's bound.
    """
    return _sin_cos(form, a, profile, cosine=True)


@semantic("lg2.approx")
def lg2_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.20 lg2.approx{.ftz}.f32: ``d = log(a) / log(2)``, "a fast approximation to
    log2(a)". "The maximum absolute error is 2^-22 when the input operand is in the range
    (0.5, 2). For positive finite inputs outside of this interval, maximum relative error is
    2^-22."

    Table: -Inf -> NaN, -normal -> NaN, -0.0 -> -Inf, +0.0 -> -Inf, +Inf -> +Inf, NaN -> NaN.
    A negative subnormal is NaN unless ``.ftz`` flushes it to -0.0 (then -Inf).
    """
    x = _source(F32, a, form)
    if isinstance(x, NaN) or _is_negative(x):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return infinity(F32, 0)
    if x.is_zero:
        return infinity(F32, 1)
    value = to_fraction(x)
    y = log2(value)
    if Fraction(1, 2) < value < 2:
        return within_distance(F32, y, LG2_BOUND, ftz="ftz" in form)
    return within_relative(F32, y, LG2_BOUND, ftz="ftz" in form)


#: Beyond these, 2^a is so far past the format that the bound allows one result only: ex2(a)
#: for a >= 129 is at least 2^129, 2^23 steps past the largest finite value; for a < -152 it is
#: below a quarter of the smallest subnormal, whose correctly rounded value is +0.
EX2_OVERFLOW = 129
EX2_UNDERFLOW = -152


@semantic("ex2.approx")
def ex2_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.21 ex2.approx{.ftz}.f32: ``d = 2 ^ a``, "a fast approximation to 2^a". "The maximum
    ulp error is 2 ulp from correctly rounded result across the full range of inputs."

    Table: -Inf -> +0.0, -0.0 -> +1.0, +0.0 -> +1.0, +Inf -> +Inf, NaN -> NaN. ``.ftz``
    flushes subnormal inputs (so 2^a is exactly 1.0) and results.
    """
    x = _source(F32, a, form)
    if isinstance(x, NaN):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return zero(F32, 0) if x.sign else infinity(F32, 0)
    if x.is_zero:
        return F32_ONE
    value = to_fraction(x)
    ftz = "ftz" in form
    if value >= EX2_OVERFLOW:
        return infinity(F32, 0)
    if value < EX2_UNDERFLOW:
        return between(F32, -ULPS_EX2, ULPS_EX2, ftz=ftz)
    return within_ulps(F32, exp2(value), ULPS_EX2, ftz=ftz)


@semantic("tanh.approx")
def tanh_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.22 tanh.approx.f32: ``d = tanh(a)``, "a fast approximation of FP32 hyperbolic
    tangent". "Max relative error across the full range of FP32 inputs is 2^-11. Subnormal numbers
    are supported."

    Table: -Inf -> -1.0, -0.0 -> -0.0, +0.0 -> +0.0, +Inf -> 1.0, NaN -> NaN.
    """
    x = decode(F32, a)
    if isinstance(x, NaN):
        return profile.unspecified_nan(F32)
    if isinstance(x, Infinity):
        return F32_ONE | F32.sign_mask * x.sign
    if x.is_zero:
        return zero(F32, x.sign)
    return within_relative(F32, tanh(to_fraction(x)), TANH_RELATIVE, ftz=False)
