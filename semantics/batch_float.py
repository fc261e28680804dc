"""Batched §9.7.3 floating-point instructions (the exact ones, not ``.approx``) and §9.7.5 mixed
precision: the numpy twins of :mod:`ptxspec.semantics.floating_point` and of the mixed-precision
functions of :mod:`ptxspec.semantics.half_precision`.

Every arithmetic path has the scalar functions' inner shape: decode the operands exactly
(:func:`~ptxspec.semantics.batch_rounding.decode`, ``.ftz`` flushing subnormal inputs), apply the
PTX NaN rule, compute the EXACT result as integers, and round it ONCE with
:func:`~ptxspec.semantics.batch_rounding.round_bits` (mode, ``.ftz``, ``.sat``).

The exact results need more than 64 bits: a binary64 product has 106 bits, and an ``fma`` adds a
53-bit addend anywhere along it. They are kept as :class:`Wide` values, ``(-1)^sign * (hi * 2^60
+ lo) * 2^exp`` with two non-negative int64 limbs below 2^60, built by four exact operations:

* :func:`exact_product` -- the 128-bit integer product of two significands
  (:func:`~ptxspec.semantics.batch_rounding.product_128`), regrouped into limbs;
* :func:`wide_sum` -- two Wide values added in a frame of :data:`FRAME` bits below the larger
  one's leading bit, the bits of the smaller one below the frame collapsed into one sticky bit;
* :func:`exact_quotient` -- integer long division, ten quotient bits per int64 step, the
  remainder's non-zero-ness the sticky bit;
* :func:`exact_root` -- the host square root (a starting point only), confirmed or refused by
  exact integer comparisons of squares.

A sticky bit is the standard device: a value known to lie strictly between two consecutive
multiples of ``2^L`` is replaced by their midpoint's neighbour ``... + 2^(L-1)``, which lies in the
same open interval. When at least ``precision + 2`` bits lie above ``2^L``, every rounding boundary
of the result (a representable value, a midpoint, a boundary of the tininess test of ``.ftz``) is a
multiple of ``2^L``; so no boundary separates the two values and every mode rounds them alike. Each
helper says why its sticky bit keeps that many bits.

:func:`narrow` then shortens a Wide value to 59 bits and a sticky bit (the same argument), below
:data:`~ptxspec.semantics.batch_rounding.SIGNIFICAND_LIMIT`, for the one rounding.

NaN results (§9.7.3 introduction): "Single-precision instructions return an unspecified NaN"
(the profile's :meth:`~ptxspec.profiles.record.Profile.unspecified_nan`), "double-precision
instructions support NaN payloads" (:func:`payload_nan`, the batched
:meth:`~ptxspec.profiles.record.Profile.payload_nan`). Where the manual allows several payloads
(two NaN operands with different payloads, under the spec profile) the result is a
:class:`~ptxspec.semantics.results.OneOf` set, kept by element in the result's ``sets`` (rare on
random binary64 operands, NaN with probability 2^-11 each, but common among the edge vectors).

Exact helpers that other chapters could share: :class:`Wide`, :func:`exact_product`,
:func:`wide_sum`, :func:`exact_quotient`, :func:`exact_root`, :func:`narrow`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import batch_rounding
from ptxspec.semantics.batch import BatchResult, FastPath, _dtype, _lanes_result, _open_nan, batched
from ptxspec.semantics.numerics import Rounding, canonical_nan
from ptxspec.semantics.results import Allowed, OneOf
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat, register_bits

F32 = FORMATS["f32"]
F64 = FORMATS["f64"]

#: The limb width of :class:`Wide` values.
LIMB = 60
_MASK = (1 << LIMB) - 1


# ---------------------------------------------------------------------------------------------
# Decoded operands
# ---------------------------------------------------------------------------------------------


class Operand(NamedTuple):
    """One operand array decoded (:func:`decode`): the exact value ``(-1)^sign * sig * 2^exp``
    of each finite element, masks of the NaN and infinite ones, and each NaN made quiet (IEEE 754
    §6.2.3, numerics.quiet) as uint64 bits, for the payload rule of .f64."""

    sign: np.ndarray
    sig: np.ndarray
    exp: np.ndarray
    nan: np.ndarray
    inf: np.ndarray
    quiet: np.ndarray

    @property
    def zero(self) -> np.ndarray:
        """Finite zeros (the decoded significand of a NaN or infinity is not zero)."""
        return (self.sig == 0) & ~self.nan & ~self.inf


def decode(fmt: FloatFormat, bits: np.ndarray, *, ftz: bool = False) -> Operand:
    """:func:`~ptxspec.semantics.batch_rounding.decode`, with each element's quiet NaN (its bits
    with the quiet bit set: a NaN operand's payload, §9.7.3)."""
    bits = bits.astype(np.uint64)
    sign, sig, exp, nan, inf = batch_rounding.decode(fmt, bits, ftz=ftz)
    quiet = bits | np.uint64(1 << (fmt.mantissa_bits - 1))
    return Operand(sign, sig, exp, nan, inf, quiet)


def constant_one(like: np.ndarray) -> Operand:
    """The exact 1 (rcp's dividend, floating_point.ONE) for every element of ``like``."""
    zeros = np.zeros(like.shape, dtype=np.int64)
    false = zeros.astype(bool)
    return Operand(false, zeros + 1, zeros, false, false, zeros.astype(np.uint64))


# ---------------------------------------------------------------------------------------------
# Wide exact values: two 60-bit limbs
# ---------------------------------------------------------------------------------------------


class Wide(NamedTuple):
    """``(-1)^sign * (hi * 2^60 + lo) * 2^exp``, exactly: bool sign, int64 limbs in [0, 2^60),
    int64 exponent. A value with at most 60 bits has ``hi = 0``."""

    sign: np.ndarray
    hi: np.ndarray
    lo: np.ndarray
    exp: np.ndarray


def _single(sign: np.ndarray, sig: np.ndarray, exp: np.ndarray) -> Wide:
    return Wide(sign, np.zeros_like(sig), sig, exp)


def wide_integer(sign: np.ndarray, magnitude: np.ndarray) -> Wide:
    """``(-1)^sign * magnitude`` for a uint64 magnitude (an integer source of cvt), as a Wide
    value: its top 4 bits in ``hi``, the low 60 in ``lo``."""
    magnitude = magnitude.astype(np.uint64)
    hi = (magnitude >> np.uint64(LIMB)).astype(np.int64)
    return Wide(sign, hi, (magnitude & np.uint64(_MASK)).astype(np.int64), np.zeros_like(hi))


def bit_length2(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of ``hi * 2^60 + lo`` (batch_rounding.bit_length of the top limb)."""
    return np.where(hi != 0, batch_rounding.bit_length(hi) + LIMB, batch_rounding.bit_length(lo))


def _shift_left_limb(hi: np.ndarray, lo: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo) << k`` for ``0 <= k <= 60``, the caller knowing the result fits two limbs. The
    bits of ``lo`` above its limb move into ``hi``; int64 shifts wrap, but only bits that the mask
    or the caller's bound discard are lost."""
    return (hi << k) | (lo >> (LIMB - k)), (lo << k) & _MASK


def shift_left2(hi: np.ndarray, lo: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo) << s`` for ``0 <= s <= 120`` where the result fits two limbs (two steps of at
    most a limb each)."""
    first = np.minimum(s, LIMB)
    hi, lo = _shift_left_limb(hi, lo, first)
    return _shift_left_limb(hi, lo, np.minimum(s - first, LIMB))


def _shift_right_limb(hi: np.ndarray, lo: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hi, lo) >> k`` for ``0 <= k <= 60``, with whether a non-zero bit was shifted out."""
    sticky = (lo & ((np.int64(1) << k) - 1)) != 0
    return hi >> k, (lo >> k) | ((hi << (LIMB - k)) & _MASK), sticky


def shift_right2(hi: np.ndarray, lo: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hi, lo) >> s`` (any ``s >= 0``) and the sticky bit: whether any bit shifted out was
    set. A shift of 120 or more leaves zero (the value is below 2^120), so ``s`` is clamped there."""
    s = np.minimum(s, 2 * LIMB)
    first = np.minimum(s, LIMB)
    hi, lo, sticky_first = _shift_right_limb(hi, lo, first)
    hi, lo, sticky_second = _shift_right_limb(hi, lo, s - first)
    return hi, lo, sticky_first | sticky_second


def exact_product(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x * y`` for non-negative int64 ``x, y < 2^56``, exactly, as two limbs ``(hi, lo)``: the
    128-bit product (:func:`~ptxspec.semantics.batch_rounding.product_128`, two 64-bit words)
    regrouped into 60-bit limbs. The product is below 2^112, so ``hi`` is below 2^52."""
    high, low = batch_rounding.product_128(x.astype(np.uint64), y.astype(np.uint64), signed=False)
    hi = (high << np.uint64(64 - LIMB)) | (low >> np.uint64(LIMB))
    return hi.astype(np.int64), (low & np.uint64(_MASK)).astype(np.int64)


def _compare2(ah: np.ndarray, al: np.ndarray, bh: np.ndarray, bl: np.ndarray) -> np.ndarray:
    """The sign (-1, 0, 1) of ``a - b`` for two-limb magnitudes."""
    greater = (ah > bh) | ((ah == bh) & (al > bl))
    less = (ah < bh) | ((ah == bh) & (al < bl))
    return greater.astype(np.int64) - less.astype(np.int64)


#: How many bits below the larger addend's leading bit :func:`wide_sum` keeps exactly.
FRAME = 116

#: The "leading bit" of a zero addend: below every other, so that it never sets the frame.
_NO_BIT = -(1 << 40)


def wide_sum(x: Wide, y: Wide, x_zero: np.ndarray, y_zero: np.ndarray, mode: Rounding) -> Wide:
    """``x + y`` (numerics.wide_sum): exact, or with a sticky bit that no rounding can tell apart.

    Both addends have at most 106 bits (a binary64 product). With ``top`` the larger leading-bit
    position, the frame holds the bits from ``L = max(min(x.exp, y.exp), top - FRAME + 1)`` up to
    ``top``; each addend is placed in units of ``2^(L-1)`` (:func:`_align`): shifted left exactly,
    or, where it reaches below ``L``, shifted right with one sticky unit for the bits shifted out.

    * The larger addend keeps all its bits: at most 106 of them sit below ``top``, within the
      ``FRAME = 116`` bits of the frame. So only the smaller addend ever loses bits, and the bits
      lost (``D``, with ``0 < |D| < 2^L``) have its sign: the sticky unit carries that sign.
    * It loses bits only when its lowest bit lies below ``L = top - 115``, so (having at most 106
      bits) its leading bit lies at ``top - 10`` or lower: the sum's magnitude exceeds
      ``2^top - 2^(top-1)``, its leading bit is at ``top - 1`` or above, and 114 bits lie between
      it and ``2^L``: at least precision + 2 for every format, so the sticky unit decides every
      rounding as the lost bits would (see the module docstring).
    * Magnitudes: the frame's 116 bits and the sticky unit make 117 bits, the sum 118: two limbs.

    A zero sum takes IEEE 754 §6.3's sign: +0, or -0 when both addends are zeros of sign -, or
    when the rounding is .rm (``x_zero``/``y_zero`` mark the zero addends; a sum with a sticky
    unit is never zero).
    """
    nx, ny = bit_length2(x.hi, x.lo), bit_length2(y.hi, y.lo)
    top = np.maximum(np.where(nx > 0, x.exp + nx - 1, _NO_BIT), np.where(ny > 0, y.exp + ny - 1, _NO_BIT))
    frame = np.maximum(np.minimum(x.exp, y.exp), top - (FRAME - 1))
    xh, xl = _align(x, frame)
    yh, yl = _align(y, frame)
    # Signed limbs: lo in (-2^61, 2^61), then one carry makes lo a limb again and hi signed.
    hi = np.where(x.sign, -xh, xh) + np.where(y.sign, -yh, yh)
    lo = np.where(x.sign, -xl, xl) + np.where(y.sign, -yl, yl)
    hi, lo = hi + (lo >> LIMB), lo & _MASK
    negative = hi < 0
    # -(hi * 2^60 + lo) = (-hi - 1) * 2^60 + (2^60 - lo) for lo > 0, (-hi) * 2^60 for lo = 0.
    borrow = (lo != 0).astype(np.int64)
    hi = np.where(negative, -hi - borrow, hi)
    lo = np.where(negative, ((1 << LIMB) - lo) & _MASK, lo)
    zero = (hi == 0) & (lo == 0)
    zero_sign = np.where(x_zero & y_zero & (x.sign == y.sign), x.sign, mode is Rounding.RM)
    sign = np.where(zero, zero_sign, negative)
    return Wide(sign, hi, lo, frame - 1)


def _align(x: Wide, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``|x|`` in units of ``2^(frame - 1)``: exact where ``x.exp >= frame``; else its bits
    below ``2^frame`` are replaced by one unit when any was set (the sticky bit)."""
    d = x.exp - frame
    hi, lo, sticky = shift_right2(x.hi, x.lo, np.maximum(-d, 0))
    hi, lo = shift_left2(hi, lo, np.minimum(np.maximum(d, 0) + 1, 2 * LIMB))
    return hi, lo | sticky


def narrow(x: Wide, fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Wide value as ``(sign, significand, exponent)`` for :func:`batch_rounding.round_bits`:
    its leading 59 bits and a sticky bit (below 2^60). 59 bits are at least precision + 2 for
    every format, so the sticky bit decides every rounding as the dropped bits would; a value of
    at most 59 bits is kept exactly (shifted left by one, the sticky bit zero).

    A value of at least ``2^(emax + 1)`` lies beyond the largest finite value and overflows in
    every mode, to a result that depends only on its sign and the mode; it is replaced by exactly
    ``2^(emax + 1)``, which keeps round_bits' integer encoding of the exponent inside int64
    (binary64 products and quotients reach 2^2150, whose exponent field would not fit).
    """
    n = bit_length2(x.hi, x.lo)
    shift = np.maximum(n - 59, 0)
    _, lo, sticky = shift_right2(x.hi, x.lo, shift)
    sig, exp = (lo << 1) | sticky, x.exp + shift - 1
    huge = (x.exp + n - 1 > fmt.max_exponent) & (n > 0)
    return x.sign, np.where(huge, 1, sig), np.where(huge, fmt.max_exponent + 1, exp)


# ---------------------------------------------------------------------------------------------
# Quotients and roots
# ---------------------------------------------------------------------------------------------


def _normalise(sig: np.ndarray, exp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A non-zero significand below 2^53 shifted up to exactly 53 bits (the value unchanged);
    a zero one becomes 2^52 (the caller has decided zero operands already)."""
    shift = 53 - batch_rounding.bit_length(sig)
    return np.where(sig == 0, 1 << 52, sig << shift), exp - shift


#: The quotient bits of each step of :func:`exact_quotient`: 56 in all.
_QUOTIENT_STEPS = (10, 10, 10, 10, 10, 6)


def exact_quotient(a: Operand, b: Operand) -> Wide:
    """``|a| / |b|`` for non-zero finite significands below 2^53 (numerics.exact_quotient), with
    the sign ``a.sign ^ b.sign``: integer long division.

    Both significands are normalised to 53 bits, so ``A / B`` lies in (1/2, 2). The quotient
    ``q = floor(A * 2^56 / B)`` is built ten bits at a time: the remainder ``r < B < 2^53``
    shifted by ten stays below 2^63, and ``r // B`` is one quotient digit (numpy's int64 floor
    division is exact). ``q`` lies in [2^55, 2^57): at least 56 bits, precision + 2 for .f64;
    the remainder's non-zero-ness is the sticky bit, in one more place below.
    """
    sa, ea = _normalise(a.sig, a.exp)
    sb, eb = _normalise(b.sig, b.exp)
    q, r = sa // sb, sa % sb
    for bits in _QUOTIENT_STEPS:
        r = r << bits
        digit = r // sb
        q, r = (q << bits) | digit, r - digit * sb
    sig = (q << 1) | (r != 0)
    return _single(a.sign ^ b.sign, sig, ea - eb - sum(_QUOTIENT_STEPS) - 1)


def exact_root(a: Operand) -> tuple[Wide, np.ndarray]:
    """``sqrt(a)`` for finite ``a > 0`` with a significand below 2^53 (numerics.exact_sqrt), and
    the mask of elements it cannot confirm (none on an IEEE 754 host).

    With ``M`` the significand normalised to 53 bits, ``a = (N / 2^52) * 2^(2g)`` where ``N`` is
    ``M`` or ``2M`` (making the exponent even) and ``m = N / 2^52`` lies in [1, 4) -- a binary64
    value, exactly. The host's ``y = sqrt(m)`` lies in [1, 2]; ``Y = y * 2^52`` is an integer.
    Two exact comparisons of integers (squares by :func:`exact_product`) confirm that
    ``sqrt(N * 2^52)`` lies within half a unit of ``Y`` -- i.e. that y is sqrt(m) rounded to
    nearest, which IEEE 754 requires of the host (elements where it fails are left undecided) --
    and a third gives the side. Then the root lies between ``Y`` and the midpoint next to it,
    which no rounding boundary of a precision up to 53 separates from ``Y +- 1/4``: the result is
    ``4Y + side`` in units of ``2^(g - 54)`` (``side`` 0 when the root is exact). A root is never
    a 53-bit midpoint (its square would have 107 significant bits), nor tiny or overflowing.
    """
    sig, exp = _normalise(a.sig, a.exp)
    odd = ((exp + 52) & 1).astype(np.int64)
    n = sig << odd
    half = (exp + 52 - odd) >> 1
    with np.errstate(all="ignore"):
        y = np.sqrt(n.astype(np.float64) * 2.0**-52)  # n < 2^54 is exact: it has 53 significant bits
    big_y = (y * 2.0**52).astype(np.int64)
    radicand_hi, radicand_lo = (n << 2) >> 8, ((n << 2) & 0xFF) << 52  # 4 N 2^52 = (2Y)^2 scale
    below = _compare2(*exact_product(2 * big_y - 1, 2 * big_y - 1), radicand_hi, radicand_lo) < 0
    above = _compare2(*exact_product(2 * big_y + 1, 2 * big_y + 1), radicand_hi, radicand_lo) > 0
    side = _compare2(radicand_hi, radicand_lo, *exact_product(2 * big_y, 2 * big_y))
    root = _single(a.sign, 4 * big_y + side, half - 54)
    return root, ~(below & above)


# ---------------------------------------------------------------------------------------------
# The exact operations with IEEE 754's special cases (floating_point.exact_*)
# ---------------------------------------------------------------------------------------------


class Exactly(NamedTuple):
    """An operation's exact result: the finite value (:class:`Wide`; its sign is also the sign of
    an infinite result), which elements are infinite, which are invalid (a NaN operand included:
    their NaN comes from the NaN rule), and which this path leaves undecided."""

    value: Wide
    infinite: np.ndarray
    invalid: np.ndarray
    undecided: np.ndarray | None = None


def _any_nan(*operands: Operand) -> np.ndarray:
    return np.logical_or.reduce([x.nan for x in operands])


def add(mode: Rounding, a: Operand, b: Operand) -> Exactly:
    """floating_point.exact_add: inf + -inf is invalid, an infinity wins, else the exact sum."""
    value = wide_sum(_single(a.sign, a.sig, a.exp), _single(b.sign, b.sig, b.exp), a.zero, b.zero, mode)
    return _sum_specials(value, a.sign, a.inf, b, _any_nan(a, b))


def _sum_specials(value: Wide, x_sign: np.ndarray, x_inf: np.ndarray, b: Operand, invalid: np.ndarray) -> Exactly:
    """The special cases of ``x + b`` (x an operand or an exact product, of sign ``x_sign``,
    infinite where ``x_inf``): an infinite addend gives that infinity; two infinities of opposite
    signs are invalid."""
    invalid = invalid | (x_inf & b.inf & (x_sign != b.sign))
    sign = np.where(x_inf, x_sign, np.where(b.inf, b.sign, value.sign))
    return Exactly(value._replace(sign=sign), x_inf | b.inf, invalid)


def sub(mode: Rounding, a: Operand, b: Operand) -> Exactly:
    """floating_point.exact_sub: a + (-b)."""
    return add(mode, a, b._replace(sign=~b.sign))


def mul(mode: Rounding, a: Operand, b: Operand) -> Exactly:
    """floating_point.exact_mul: 0 * inf is invalid; the sign is the exclusive or of the signs;
    the exact product of the significands (:func:`exact_product`, below 2^106)."""
    hi, lo = exact_product(a.sig, b.sig)
    invalid = _any_nan(a, b) | (a.inf & b.zero) | (b.inf & a.zero)
    return Exactly(Wide(a.sign ^ b.sign, hi, lo, a.exp + b.exp), a.inf | b.inf, invalid)


def fma(mode: Rounding, a: Operand, b: Operand, c: Operand) -> Exactly:
    """floating_point.exact_fma: the exact product (or its infinity, or invalid), added exactly to
    c, the zero-sum sign rule seeing the product's sign."""
    product = mul(mode, a, b)
    value = wide_sum(product.value, _single(c.sign, c.sig, c.exp), a.zero | b.zero, c.zero, mode)
    return _sum_specials(value, product.value.sign, product.infinite, c, product.invalid | c.nan)


def div(mode: Rounding, a: Operand, b: Operand) -> Exactly:
    """floating_point.exact_div: inf / inf and 0 / 0 are invalid; inf / x and x / 0 are
    infinities, x / inf a zero, each with the exclusive or of the signs; else the quotient."""
    quotient = exact_quotient(a, b)
    zero_result = (b.inf & ~a.inf) | (a.zero & ~b.zero)
    value = quotient._replace(lo=np.where(zero_result, 0, quotient.lo))
    invalid = _any_nan(a, b) | (a.inf & b.inf) | (a.zero & b.zero)
    infinite = (a.inf & ~b.inf) | (b.zero & ~a.zero & ~a.inf)
    return Exactly(value, infinite, invalid)


def rcp(mode: Rounding, a: Operand) -> Exactly:
    """§9.7.3.13: 1 / a (floating_point.rcp)."""
    return div(mode, constant_one(a.sig), a)


def sqrt(mode: Rounding, a: Operand) -> Exactly:
    """floating_point.exact_root: sqrt(+-0) = +-0, sqrt(+inf) = +inf, anything below zero (-inf
    included) is invalid, else :func:`exact_root`."""
    root, unconfirmed = exact_root(a)
    positive = ~a.sign & ~a.zero & ~a.inf & ~a.nan
    value = root._replace(lo=np.where(a.zero, 0, root.lo))
    invalid = a.nan | (a.sign & ~a.zero)
    return Exactly(value, a.inf & ~a.sign, invalid, unconfirmed & positive)


# ---------------------------------------------------------------------------------------------
# The NaN rule and the one rounding (floating_point.round_element)
# ---------------------------------------------------------------------------------------------


class NanRule(NamedTuple):
    """What a NaN result becomes: bits (an int, or an int64 array of bit patterns), the elements
    where it is any NaN (:class:`~ptxspec.semantics.results.AnyNaN`), those it cannot hold, and
    by element the sets of several payloads (:class:`~ptxspec.semantics.results.OneOf`)."""

    bits: int | np.ndarray
    open: np.ndarray | None
    undecided: np.ndarray | None
    sets: dict[int, Allowed] | None = None


def payload_nan(fmt: FloatFormat, operands: list[Operand], profile: Profile, opcode: str) -> NanRule:
    """:meth:`Profile.payload_nan` (floating_point.nan_result for .f64) on arrays: the NaN operands
    made quiet, in operand order.

    * ``payload_nan_rule == "ordered"``: the quiet NaN operand that ``nan_operand_priority``
      ranks first (default: the last operand first), ``default_nan`` (else the canonical NaN)
      when no operand is a NaN (an invalid operation);
    * ``"any"`` (the manual): the set of the NaN operands' quiet encodings -- one encoding when
      they agree, a :class:`~ptxspec.semantics.results.OneOf` when they differ,
      any NaN when no operand is a NaN.

    Any other rule: every NaN result is left undecided.
    """
    n = len(operands[0].sig)
    if profile.payload_nan_rule == "ordered":
        bits = np.full(n, profile.default_nan.get(fmt.name, canonical_nan(fmt)), dtype=np.uint64)
        priority = profile.nan_operand_priority.get(opcode, tuple(reversed(range(len(operands)))))
        chosen = np.zeros(n, dtype=bool)
        for i in (i for i in priority if i < len(operands)):
            bits = np.where(operands[i].nan & ~chosen, operands[i].quiet, bits)
            chosen |= operands[i].nan
        return NanRule(bits.view(np.int64), None, None)
    if profile.payload_nan_rule == "any":
        some = _any_nan(*operands)
        first = np.full(n, canonical_nan(fmt), dtype=np.uint64)
        for x in reversed(operands):
            first = np.where(x.nan, x.quiet, first)
        differ = np.flatnonzero(np.logical_or.reduce([x.nan & (x.quiet != first) for x in operands]))
        # Several NaN operands with other payloads (rare but for the edge vectors): their set.
        quiet = [np.where(x.nan, x.quiet, np.uint64(0))[differ].tolist() for x in operands]
        sets: dict[int, Allowed] = {int(i): OneOf(frozenset(q for q in column if q), fmt.width) for i, column in zip(differ, zip(*quiet))}
        return NanRule(first.view(np.int64), ~some, None, sets)
    return NanRule(canonical_nan(fmt), None, np.ones(n, dtype=bool))


def nan_rule(fmt: FloatFormat, operands: list[Operand], profile: Profile, opcode: str) -> NanRule:
    """floating_point.nan_result: .f64 carries payloads (:func:`payload_nan`); every other result
    format (.f32, the mixed-precision results) returns the profile's unspecified NaN."""
    if fmt is F64:
        return payload_nan(fmt, operands, profile, opcode)
    bits, open_ = _open_nan(fmt, profile)
    n = len(operands[0].sig)
    return NanRule(bits, np.ones(n, dtype=bool) if open_ else None, None)


def round_element(
    fmt: FloatFormat, exact: Exactly, rule: NanRule, mode: Rounding, *, ftz: bool, sat: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """floating_point.round_element on arrays: :func:`narrow`, then the one rounding
    (:func:`batch_rounding.round_bits`: mode, .ftz, .sat -- which also turns NaN into +0.0) with
    the NaN rule. Returns the bits (the format's unsigned dtype), the open-NaN mask and the
    undecided mask."""
    sign, sig, exp = narrow(exact.value, fmt)
    bits = batch_rounding.round_bits(sign, sig, exp, fmt, mode, ftz=ftz, sat=sat, infinite=exact.infinite, nan=exact.invalid, nan_bits=rule.bits)
    bits = bits.astype(np.uint64).astype(_dtype(fmt.width))  # int64 -> the register's bits (f64's sign bit wraps)
    nan = exact.invalid & (not sat)
    open_ = nan & rule.open if rule.open is not None else None
    undecided = [m for m in (exact.undecided, nan & rule.undecided if rule.undecided is not None else None) if m is not None]
    return bits, open_, np.logical_or.reduce(undecided) if undecided else None


# ---------------------------------------------------------------------------------------------
# Forms: lanes, and the builders
# ---------------------------------------------------------------------------------------------

Operation = Callable[..., Exactly]

_OPERATIONS: dict[str, Operation] = {"add": add, "sub": sub, "mul": mul, "fma": fma, "mad": fma, "div": div, "rcp": rcp, "sqrt": sqrt}


def _lanes(x: np.ndarray, lanes: int, width: int) -> list[np.ndarray]:
    """The elements of a packed register, lane 0 (the most significant) first (.f32x2: element i
    in bits [32i, 32i+31], "elementwise", so the order only has to be put back the same way)."""
    x = x.astype(np.uint64)
    mask = np.uint64((1 << width) - 1)
    return [(x >> np.uint64((lanes - 1 - i) * width)) & mask for i in range(lanes)]


def _result(parts: list[tuple[np.ndarray, np.ndarray | None, np.ndarray | None]], fmt: FloatFormat) -> BatchResult:
    """Pack the lanes (batch._lanes_result) and join their undecided masks."""
    result = _lanes_result([(bits, open_) for bits, open_, _ in parts], fmt, fmt.width)
    undecided = [u for _, _, u in parts if u is not None]
    return attrs.evolve(result, undecided=np.logical_or.reduce(undecided)) if undecided else result


def elementwise(form: Form, op: Operation) -> FastPath:
    """floating_point.elementwise: per element (.f32x2: per lane), decode (``.ftz`` flushes
    subnormal inputs), compute the exact result, round once by ``.rnd`` (default .rn) with
    ``.ftz`` and ``.sat``, NaN results by the chapter's rule."""
    fmt = F32 if form["type"] in ("f32", "f32x2") else F64
    lanes = 2 if form["type"] == "f32x2" else 1
    mode = Rounding(form.get("rnd") or "rn")
    ftz, sat = "ftz" in form, "sat" in form

    def fast(*sources: np.ndarray, profile: Profile) -> BatchResult:
        parts, sets = [], {}
        for lane in zip(*(_lanes(s, lanes, fmt.width) for s in sources)):
            operands = [decode(fmt, x, ftz=ftz) for x in lane]
            exact = op(mode, *operands)
            rule = nan_rule(fmt, operands, profile, form.opcode)
            parts.append(round_element(fmt, exact, rule, mode, ftz=ftz, sat=sat))
            sets.update(rule.sets or {})  # .f64 only, which has one lane
        return attrs.evolve(_result(parts, fmt), sets=sets) if sets else _result(parts, fmt)

    return fast


@batched("add.f", "sub.f", "mul.f", "fma.f", "mad.f", "div.rnd", "rcp.rnd", "sqrt.rnd")
def _arithmetic(form: Form) -> FastPath | None:
    """§9.7.3.3 add, §9.7.3.4 sub, §9.7.3.5 mul, §9.7.3.6 fma, §9.7.3.7 mad, §9.7.3.8 div.rnd,
    §9.7.3.13 rcp.rnd, §9.7.3.15 sqrt.rnd on .f32, .f32x2 and .f64, every rounding, .ftz, .sat.

    Exact: the operation is computed on integers (:func:`wide_sum`, :func:`exact_product`,
    :func:`exact_quotient`, :func:`exact_root`), exactly or with a sticky bit kept at least
    precision + 2 bits below the leading bit, and rounded once by batch_rounding.round_bits.
    mad (sm_20 and later) "is the same as fma" (§9.7.3.7).
    """
    if form["type"] not in ("f32", "f32x2", "f64"):
        return None
    return elementwise(form, _OPERATIONS[form.opcode])


# --- §9.7.5 mixed precision ----------------------------------------------------------------


@batched("add.mixed", "sub.mixed", "fma.mixed")
def _mixed(form: Form) -> FastPath | None:
    """§9.7.5.1 add, §9.7.5.2 sub, §9.7.5.3 fma with an .f32 result: ``convert(a) [* convert(b)]
    +- c`` rounded once to .f32 by .rnd (default .rn), .sat (half_precision.mixed).

    "convert(a)" from .f16/.bf16 to .f32 is exact (every such value is an .f32 value), so the
    narrow operands are decoded in their own format and enter the same exact operations as .f32
    ones; a NaN result is single precision's unspecified NaN. No .ftz: subnormals are kept.
    """
    narrow_fmt = FORMATS[form["atype"]]
    op = _OPERATIONS[form.opcode]
    mode = Rounding(form.get("rnd") or "rn")
    sat = "sat" in form
    count = 2 if form.opcode == "fma" else 1

    def fast(*sources: np.ndarray, profile: Profile) -> BatchResult:
        operands = [decode(narrow_fmt, x) for x in sources[:count]] + [decode(F32, sources[count])]
        exact = op(mode, *operands)
        return _result([round_element(F32, exact, nan_rule(F32, operands, profile, form.opcode), mode, ftz=False, sat=sat)], F32)

    return fast


# --- §9.7.3.9 abs, §9.7.3.10 neg ------------------------------------------------------------


@batched("abs.f", "neg.f")
def _sign_operations(form: Form) -> FastPath | None:
    """§9.7.3.9 abs and §9.7.3.10 neg on .f32 and .f64 (floating_point.abs_, neg): the sign bit
    cleared or flipped. The scalar function rounds the exact |a| or -a, which is representable,
    so rounding re-encodes it unchanged: the result is the operand's bits with the new sign. Under
    ``.ftz`` a subnormal input reads as a zero of its sign first. A NaN input gives the chapter's
    NaN (.f32: unspecified; .f64: the payload rule, the input made quiet).
    """
    if form["type"] not in ("f32", "f64"):
        return None
    fmt = F32 if form["type"] == "f32" else F64
    ftz = "ftz" in form
    sign_bit = np.uint64(1 << (fmt.width - 1))

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        operand = decode(fmt, a, ftz=ftz)
        bits = a.astype(np.uint64)
        if ftz:
            bits = np.where(operand.zero, bits & sign_bit, bits)
        bits = bits & ~sign_bit if form.opcode == "abs" else bits ^ sign_bit
        rule = nan_rule(fmt, [operand], profile, form.opcode)
        bits = np.where(operand.nan, np.asarray(rule.bits).astype(np.uint64), bits)
        open_ = operand.nan & rule.open if rule.open is not None else None
        undecided = operand.nan & rule.undecided if rule.undecided is not None else None
        return _result([(bits.astype(_dtype(fmt.width)), open_, undecided)], fmt)

    return fast


# --- §9.7.3.11 min, §9.7.3.12 max ---------------------------------------------------------


@batched("min.f", "max.f")
def _min_max(form: Form) -> FastPath | None:
    """§9.7.3.11 min and §9.7.3.12 max on .f32 and .f64 with .ftz, .NaN, .xorsign.abs: the
    pseudo-code of floating_point._min_max, on bit patterns (no rounding happens: d is one of the
    .ftz-flushed operands, which the scalar function re-encodes unchanged)::

        if (.xorsign) { xorsign = getSignBit(a) ^ getSignBit(b); if (.abs) { a = |a|; b = |b|; } }
        if (.NaN && (isNaN(a) || isNaN(b)))    d = canonical NaN;
        else if (isNaN(a) && isNaN(b))         d = NaN;       // the chapter's NaN rule
        else if (isNaN(a))                     d = b;
        else if (isNaN(b))                     d = a;
        else                                   d = (a < b) ? a : b;     // max: (a > b)
        if (.xorsign && !isNaN(d)) { setSignBit(d, xorsign); }

    The value order with "+0.0 > -0.0" is, on the bits, the key ``m`` for a magnitude ``m`` with
    the sign clear and ``-m - 1`` with it set (int64 arithmetic: magnitudes are below 2^63).
    """
    if form["type"] not in ("f32", "f64"):
        return None
    fmt = F32 if form["type"] == "f32" else F64
    sign_bit = np.uint64(1 << (fmt.width - 1))
    magnitude = ~sign_bit & np.uint64((1 << fmt.width) - 1)
    pick_less = form.opcode == "min"

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        x, y = decode(fmt, a, ftz="ftz" in form), decode(fmt, b, ftz="ftz" in form)
        rule = nan_rule(fmt, [x, y], profile, form.opcode)
        a_bits, b_bits = a.astype(np.uint64), b.astype(np.uint64)
        if "ftz" in form:  # a subnormal reads as a zero of its sign
            a_bits = np.where(x.zero, a_bits & sign_bit, a_bits)
            b_bits = np.where(y.zero, b_bits & sign_bit, b_bits)
        xorsign = (a_bits ^ b_bits) & sign_bit
        if "abs" in form:
            a_bits, b_bits = a_bits & magnitude, b_bits & magnitude

        def key(bits: np.ndarray) -> np.ndarray:
            negative = ((bits >> np.uint64(fmt.width - 1)) != 0).astype(np.int64)
            return (bits & magnitude).astype(np.int64) ^ -negative

        key_a, key_b = key(a_bits), key(b_bits)
        pick_a = key_a < key_b if pick_less else key_b < key_a
        d = np.where(x.nan, b_bits, np.where(y.nan | pick_a, a_bits, b_bits))
        if "xorsign" in form:
            d = (d & magnitude) | xorsign
        both = x.nan & y.nan
        open_ = undecided = None
        if "NaN" in form:
            d = np.where(x.nan | y.nan, np.uint64(canonical_nan(fmt)), d)
        else:
            d = np.where(both, np.asarray(rule.bits).astype(np.uint64), d)
            open_ = both & rule.open if rule.open is not None else None
            undecided = both & rule.undecided if rule.undecided is not None else None
        result = _result([(d.astype(_dtype(fmt.width)), open_, undecided)], fmt)
        return attrs.evolve(result, sets=rule.sets) if "NaN" not in form and rule.sets else result

    return fast


# --- §9.7.3.1 testp, §9.7.3.2 copysign ----------------------------------------------------


@batched("testp")
def _testp(form: Form) -> FastPath | None:
    """§9.7.3.1 testp.op.{f32,f64} (floating_point.testp): a predicate from the exponent and
    mantissa fields alone -- NaN (exponent all ones, mantissa non-zero), infinite (all ones, zero
    mantissa), subnormal (exponent zero, mantissa non-zero; no .ftz), and their combinations.
    Zeros are normal ("As a special case, positive and negative zero are considered normal")."""
    if form["type"] not in ("f32", "f64"):
        return None
    fmt = F32 if form["type"] == "f32" else F64
    width = register_bits(form.destinations[0].type)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        bits = a.astype(np.uint64)
        exponent = (bits >> np.uint64(fmt.mantissa_bits)) & np.uint64(fmt.exponent_field_max)
        mantissa = bits & np.uint64((1 << fmt.mantissa_bits) - 1)
        all_ones = exponent == np.uint64(fmt.exponent_field_max)
        nan, infinite = all_ones & (mantissa != 0), all_ones & (mantissa == 0)
        subnormal = (exponent == 0) & (mantissa != 0)
        verdict = {
            "finite": ~(nan | infinite),
            "infinite": infinite,
            "number": ~nan,
            "notanumber": nan,
            "normal": ~(nan | infinite | subnormal),
            "subnormal": subnormal,
        }[form["op"]]
        return BatchResult(verdict.astype(_dtype(width)), None, None, 1, width)

    return fast


@batched("copysign")
def _copysign(form: Form) -> FastPath | None:
    """§9.7.3.2 copysign.{f32,f64} (floating_point.copysign): ``(a & sign) | (b & ~sign)``, a
    bit operation on the register (a NaN's payload and signalling bit kept)."""
    if form["type"] not in ("f32", "f64"):
        return None
    width = 32 if form["type"] == "f32" else 64
    dtype = _dtype(width)
    sign = dtype.type(1 << (width - 1))

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return BatchResult((a & sign) | (b & ~sign), None, None, 1, width)

    return fast


__all__ = [
    "Operand",
    "Wide",
    "bit_length2",
    "wide_integer",
    "decode",
    "exact_product",
    "exact_quotient",
    "exact_root",
    "wide_sum",
    "narrow",
    "payload_nan",
    "shift_left2",
    "shift_right2",
]
