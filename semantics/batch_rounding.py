"""The batched twin of the numerics core: decode and round whole numpy arrays at once.

:mod:`ptxspec.semantics.numerics` decodes one bit pattern into an exact value and rounds one exact
value with :func:`~ptxspec.semantics.numerics.round_value`. The batched fast paths
(:mod:`ptxspec.semantics.batch`) need the same two steps on millions of elements, so this module
transcribes them onto numpy arrays of integers:

* :func:`decode` is :func:`~ptxspec.semantics.numerics.decode` for an array of bit patterns: the
  exact value ``(-1)^sign * significand * 2^exponent`` of each element, and masks of the NaN and
  infinite elements;
* :func:`round_bits` is :func:`~ptxspec.semantics.numerics.round_value` (with
  :func:`~ptxspec.semantics.numerics.round_exact` inside it): sign, integer significand and
  exponent arrays rounded ONCE to the bits of a :class:`~ptxspec.spec.types.FloatFormat`, under
  .rn/.rna/.rz/.rm/.rp, with .ftz (tininess after rounding), .sat, .satfinite and .relu, and the
  caller's NaN rule;
* :func:`round_integer` is :func:`~ptxspec.semantics.numerics.round_to_integer` (Table 17 of
  §6.5.2: .rni, .rzi, .rmi, .rpi), and :func:`saturate_integer` the clamp of the float-to-integer
  conversions (§9.7.9.21).

Every step is integer arithmetic on int64 arrays (uint64 for 64-bit integer results): numpy's
elementwise shifts, masks, adds and compares are exact on integers, so nothing is rounded except
where the routine decides to round. The one host-float operation, in :func:`bit_length`, only locates the leading bit of a
significand and is corrected to be exact (see there). ``tests/test_batch_rounding.py`` checks the
routine against MPFR on random exact values for every mode and format, and against the scalar
core bit for bit.
"""

from __future__ import annotations

import numpy as np

from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import FloatFormat, NanEncoding
from ptxspec.semantics.numerics import Rounding, canonical_nan, infinity, max_finite

#: Significands must lie below this: then a shift by 62 places (the most :func:`_shift_right`
#: shifts by) leaves nothing of them and a discarded part below one half, as any larger shift
#: would, and ``2 * rem`` and ``2^62`` stay within int64.
SIGNIFICAND_LIMIT = 1 << 61


# ---------------------------------------------------------------------------------------------
# Decoding (numerics.decode, §5.2.1, §5.2.3)
# ---------------------------------------------------------------------------------------------


def decode(fmt: FloatFormat, bits: np.ndarray, *, ftz: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The elements of ``bits`` (any unsigned dtype) as exact values of ``fmt``, like
    :func:`~ptxspec.semantics.numerics.decode`: returns ``(sign, significand, exponent, nan,
    infinite)`` -- bool, int64, int64, bool, bool arrays.

    A finite element is ``(-1)^sign * significand * 2^exponent``: the hidden bit is set where the
    exponent field is not zero, and a zero exponent field (zero or subnormal) has the exponent of
    the smallest normal's last place -- the same pair decode() returns. With ``ftz`` a subnormal
    reads as a zero of its sign ("flush subnormal inputs ... to sign-preserving zero", §9.7.3).
    For NaN and infinite elements the significand and exponent arrays hold meaningless values;
    the caller looks at the masks first.

    An unsigned format (ue8m0, ue4m3) has no sign bit: every sign is False. A format without
    subnormals (ue8m0, whose exponent field 0 is the value 2^-127) has the hidden bit in every
    encoding and each field its own exponent.
    """
    mb = fmt.mantissa_bits
    raw = bits.astype(np.int64)
    if fmt.shift:
        raw = raw >> fmt.shift
    top_bit = 1 << (fmt.exponent_bits + mb)
    # The sign bit read by shifting: a 64-bit pattern with it set is a negative int64 here.
    sign = ((raw >> (fmt.exponent_bits + mb)) & 1).astype(bool) if fmt.signed else np.zeros(raw.shape, dtype=bool)
    magnitude = raw & (top_bit - 1)
    mantissa = raw & ((1 << mb) - 1)
    field = magnitude >> mb
    if not fmt.has_subnormals:
        return sign, mantissa | (1 << mb), field - (fmt.bias + mb), _nan_mask(fmt, magnitude), _infinite_mask(fmt, magnitude)
    normal = field != 0
    hidden = normal.astype(np.int64) << mb
    significand = (mantissa | hidden) * normal if ftz else mantissa | hidden
    # max(field, 1): a zero field has the smallest normal's exponent (subnormals are 0.m * 2^emin).
    exponent = np.maximum(field, 1) - (fmt.bias + mb)
    return sign, significand, exponent, _nan_mask(fmt, magnitude), _infinite_mask(fmt, magnitude)


def _nan_mask(fmt: FloatFormat, magnitude: np.ndarray) -> np.ndarray:
    """Which encodings (without the sign bit) are NaN: §5.2.1's IEEE NaNs (exponent field all
    ones, a non-zero mantissa), the one all-ones encoding of e4m3, ue4m3 and ue8m0, none for the
    formats without NaN."""
    mb = fmt.mantissa_bits
    top = fmt.exponent_field_max << mb
    if fmt.nan is NanEncoding.IEEE:
        return magnitude > top
    if fmt.nan is NanEncoding.ALL_ONES:
        return magnitude == top | ((1 << mb) - 1)
    return np.zeros(magnitude.shape, dtype=bool)


def _infinite_mask(fmt: FloatFormat, magnitude: np.ndarray) -> np.ndarray:
    """Which encodings (without the sign bit) are infinities: exponent field all ones and a zero
    mantissa, in the formats that have them."""
    if not fmt.has_infinity:
        return np.zeros(magnitude.shape, dtype=bool)
    return magnitude == fmt.exponent_field_max << fmt.mantissa_bits


# ---------------------------------------------------------------------------------------------
# Exact helpers
# ---------------------------------------------------------------------------------------------


def bit_length(x: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of each element of the non-negative int64 array ``x`` (0 for 0).

    The leading bit is read from the exponent field of ``float64(x)``. That conversion is exact
    below 2^53; above, it rounds to nearest and can only carry into the next power of two (never
    move the leading bit down), so the estimate is too large by one exactly when
    ``x >> (estimate - 1)`` is zero, which is tested and corrected.
    """
    biased = x.astype(np.float64).view(np.int64) >> 52
    estimate = np.maximum(biased - 1022, 0)  # float64(0) has the biased exponent 0
    if x.size and int(x.max()) >= 1 << 53:
        too_big = (x >> np.maximum(estimate - 1, 0)) == 0
        estimate = estimate - (too_big & (x != 0))
    return estimate


def product_128(a: np.ndarray, b: np.ndarray, *, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The exact 128-bit product of two uint64 arrays of 64-bit patterns, as (high, low) uint64
    words; two's complement when ``signed``.

    Schoolbook on 32-bit limbs: each limb product is below 2^64, so uint64 holds it exactly; the
    middle column ``(p00 >> 32) + lo(p01) + lo(p10)`` is below 3 * 2^32, and the high word
    ``p11 + hi(p01) + hi(p10) + hi(mid)`` is the true high word of the unsigned product, below
    2^64. For two's complement operands A = a - 2^64 sa (sa the sign bit), A B = a b - 2^64 (sa b
    + sb a) + 2^128 sa sb, so the signed high word is the unsigned one minus ``b`` where ``a`` is
    negative and minus ``a`` where ``b`` is, modulo 2^64; the low word is the same.
    """
    s, low32 = np.uint64(32), np.uint64(0xFFFFFFFF)
    with np.errstate(all="ignore"):
        a0, a1, b0, b1 = a & low32, a >> s, b & low32, b >> s
        p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
        mid = (p00 >> s) + (p01 & low32) + (p10 & low32)
        high = p11 + (p01 >> s) + (p10 >> s) + (mid >> s)
        low = (mid << s) | (p00 & low32)
        if signed:
            zero, top = np.uint64(0), np.uint64(63)
            high = high - np.where((a >> top) != 0, b, zero) - np.where((b >> top) != 0, a, zero)
    return high, low


def _shift_right(significand: np.ndarray, shift: np.ndarray, sign: np.ndarray, mode: Rounding) -> np.ndarray:
    """``significand / 2^shift`` rounded to an integer in ``mode`` (away from zero being up in
    magnitude; ``sign`` decides the directed modes): the batched ``numerics._round_at`` and
    ``_round_up``. Lanes with ``shift <= 0`` are returned shifted left, exactly.

    With ``q`` the kept part, ``rem`` the discarded part and ``unit = 2^shift``: the discarded
    part is above one half when ``2 rem > unit`` and a tie when ``2 rem == unit`` (never for a
    zero shift, where unit = 1 and rem = 0). Round to nearest even goes up when
    ``2 rem + (q & 1) > unit``: that is the above-half case, or the tie with q odd (2 rem is
    even, so below a unit of at least 2 it is at most unit - 2).

    The shift is clamped to [0, 62]: significands are below 2^61 (:data:`SIGNIFICAND_LIMIT`), so
    shifting by 62 already leaves q = 0 with a discarded part below one half, which is what any
    larger shift gives too.
    """
    s = np.minimum(np.maximum(shift, 0), 62)
    q = significand >> s
    rem = significand - (q << s)
    if mode is Rounding.RN:
        up = (rem << 1) + (q & 1) > (1 << s)
    elif mode is Rounding.RNA:
        up = (rem << 1) >= (1 << s)
        up &= s != 0
    elif mode is Rounding.RZ:
        up = None
    elif mode is Rounding.RP:
        up = (rem != 0) & ~sign
    elif mode is Rounding.RM:
        up = (rem != 0) & sign
    else:
        raise PtxSpecError(f"the batched rounding routine does not cover .{mode.value}")
    if up is not None:
        q = q + up
    left = shift < 0
    if left.any():
        q = np.where(left, significand << np.minimum(-shift, 62), q)
    return q


# ---------------------------------------------------------------------------------------------
# An exact sum with a sticky unit (numerics.exact_sum, for significands of up to 30 bits; the
# .f32/.f64 arithmetic adds wider values as two words, batch_float.wide_sum)
# ---------------------------------------------------------------------------------------------

#: The exact sum keeps this many places below the leading bit of the larger addend (see
#: :func:`exact_sum`).
WINDOW = 58


def exact_sum(sa, ma, ea, sb, mb, eb, *, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(-1)^sa ma 2^ea + (-1)^sb mb 2^eb`` for finite operands whose significands have at most
    ``span`` bits (``span <= 30``), as ``(sign, significand, exponent)`` with the significand below
    2^60, which :func:`~ptxspec.semantics.batch_rounding.round_bits` rounds, in any mode and with
    .ftz's tininess test, exactly as it would round the true sum into a format of precision
    ``p <= span - 2``. Zero sums take IEEE 754 §6.3's sign under round to nearest.

    The operands need not be normalised (a product of two 11-bit significands has anywhere from 1
    to 22 bits), so they are ordered by their leading bits ``l = e + bit_length(m) - 1`` (a zero takes no part). With ``top`` the
    larger leading bit, both are aligned on ``base = top -`` :data:`WINDOW` by integer shifts:

    * the operand holding ``top`` (``big``) has all its bits at or above ``top - span + 1 >=
      base``, so it is kept exactly;
    * the other one (``small``), if it has bits below ``base``, has its leading bit below
      ``base + span - 1``, so ``|small| < 2^(top - WINDOW + span - 1) <= 2^(top - span + 1)``
      (``WINDOW >= 2 span - 2``), and it is replaced by one unit ``2^base`` of its sign. That
      changes the value, never its rounding: ``big`` is a multiple of ``g = 2^(top - span + 1)``,
      and so is every rounding boundary of the sum (a grid point or a midpoint of precision ``p``,
      also on the unbounded grid of the .ftz test, lies on multiples of ``2^(msb - p)`` with the
      sum's ``msb >= top - 1``); the true sum and the replaced one both lie strictly between
      ``big`` and ``big +- g`` on the side of ``small``'s sign, where no boundary lies.

    The aligned magnitudes are below ``2^(WINDOW + 1)`` each, so their signed sum is exact in
    int64 and below 2^60 (< SIGNIFICAND_LIMIT). An exact zero sum is +0 unless both addends are
    zeros of the negative sign (IEEE 754 §6.3 under round to nearest, as numerics.exact_sum).
    """
    assert span <= 30 and WINDOW >= 2 * span - 2
    none = np.int64(-(1 << 40))  # the leading bit of a zero: below every real one
    la = np.where(ma == 0, none, ea + bit_length(ma) - 1)
    lb = np.where(mb == 0, none, eb + bit_length(mb) - 1)
    base = np.maximum(la, lb) - WINDOW

    def aligned(s, m, e):
        shift = e - base
        kept = shift >= 0
        # A zero keeps 0 whatever its shift; a dropped operand becomes one unit (m >= 1).
        m = np.minimum(m, 1 + kept * (1 << 62))
        return (m << np.minimum(shift * kept, 62)) * (1 - 2 * s.astype(np.int64))

    total = aligned(sa, ma, ea) + aligned(sb, mb, eb)
    sign = (total < 0) | (sa & sb & (ma == 0) & (mb == 0))
    return sign, np.abs(total), base


# ---------------------------------------------------------------------------------------------
# The rounding routine (numerics.round_value / round_exact)
# ---------------------------------------------------------------------------------------------


def round_bits(
    sign: np.ndarray,
    significand: np.ndarray,
    exponent: np.ndarray,
    fmt: FloatFormat,
    mode: Rounding = Rounding.RN,
    *,
    ftz: bool = False,
    sat: bool = False,
    satfinite: bool = False,
    relu: bool = False,
    infinite: np.ndarray | None = None,
    nan: np.ndarray | None = None,
    nan_bits: int | np.ndarray | None = None,
) -> np.ndarray:
    """Round ``(-1)^sign * significand * 2^exponent`` elementwise into ``fmt``; returns the bits
    as int64 (non-negative below 2^fmt.width; a 64-bit format's patterns with the sign bit set are
    the negative int64 of those bits, which ``astype(np.uint64)`` turns back into them). The rounding modifiers are those of §6.5.2 Table 16;
    .sat, .satfinite and .relu those of §9.7.3 and §9.7.9.21 as round_value reads them.

    The batched :func:`~ptxspec.semantics.numerics.round_value`: ``infinite`` marks elements that
    are infinities of their sign and ``nan`` elements that are NaN (significand and exponent are
    then ignored); ``nan_bits`` is the caller's NaN rule (round_value's ``nan``). Inputs: ``sign``
    bool, ``significand`` int64 in [0, 2^61), ``exponent`` int64.

    Step by step, each as round_exact does it and why it is exact:

    1. ``msb = exponent + bit_length(significand) - 1`` (exact, :func:`bit_length`), and the last
       place of the result ``lsb = max(msb, emin) - mantissa_bits``: ``fmt``'s precision with its
       subnormal range below ``emin`` and an unbounded exponent range above (IEEE 754 §4.3, §7.4).
    2. ``q``: the significand shifted right by ``lsb - exponent`` places and rounded in ``mode``
       (:func:`_shift_right`, integer shifts and compares only).
    3. Encoding without cases: with ``E = lsb + mantissa_bits + bias`` (1 for every subnormal-range
       element), the element's code ``((E - 1) << mantissa_bits) + q`` is the exponent and
       mantissa fields at once. For ``q < 2^mantissa_bits`` (subnormal, E = 1) it is ``q``; for a
       normal ``q`` it is ``E << mantissa_bits | (q - 2^mantissa_bits)``; a carry out of the
       precision (``q = 2^precision``) gives ``(E + 1) << mantissa_bits``, the next binade; a
       subnormal that rounds up to ``2^mantissa_bits`` gives exponent field 1 -- each exactly
       the case analysis of round_exact. An exact zero (or a value rounded to zero) gives code 0.
       A format without subnormals (ue8m0: precision 1, field 0 the value 2^emin, no zero) has
       E = 0 at emin, so a normal q gives its field; one rounded below the grid's first point
       (q < 2^mantissa_bits), or a zero, gives code 0, the smallest value, as round_exact does.
    4. Overflow: a code above the largest finite value's (or a leading bit above its binade) is
       round_exact's ``_overflow`` for this
       ``mode`` and sign. Its code is the largest finite value's (toward zero, or .satfinite) or
       the next one up: infinity (IEEE formats), the NaN 0x7f of e4m3 (all-ones formats), so a
       minimum with that limit applies it; formats without NaN or infinity saturate.
    5. ``ftz`` (IEEE 754 §7.5 tininess after rounding): a value whose leading bit lies below
       ``emin - 1`` is tiny; one in the binade just below the smallest normal is rounded once more
       at its own precision with an unbounded exponent range and is tiny unless that carries up to
       ``2^emin``. Tiny elements become zeros of their sign.
    6. The sign bit, then round_value's special cases: infinities (.satfinite: the largest finite
       value), ``.sat`` (anything with the sign bit -> +0.0, anything above 1.0 -> 1.0: rounding
       is monotone and 0 and 1 are representable, so clamping the rounded value is clamping the
       exact one, as round_value does), ``.relu`` (the sign bit set -> +0.0; rounding keeps the
       sign, so this is round_value's test of the exact value's sign), and NaN (.sat -> +0.0; a
       format without NaN -> +MAX_NORM; .relu -> the canonical NaN; else ``nan_bits``).
    """
    if not fmt.signed and sign.any():
        # round_exact holds no negative value in an unsigned format; the callers (cvt to ue8m0)
        # decide what one becomes and pass the magnitude.
        raise PtxSpecError(f"a negative value for the unsigned format .{fmt.name}")
    mb, emin = fmt.mantissa_bits, fmt.min_normal_exponent
    msb = exponent + bit_length(significand) - 1
    lsb = np.maximum(msb, emin) - mb
    q = _shift_right(significand, lsb - exponent, sign, mode)
    code = ((lsb + (mb + fmt.bias - 1)) << mb) + q
    if not fmt.has_subnormals:
        # No subnormal (ue8m0): a value rounded below 2^emin's grid gives the smallest value, code
        # 0 (round_exact's min_subnormal); there is no zero either, so an exact zero gives it too.
        code = np.where(q < (1 << mb), 0, code)
    max_code = (fmt.max_finite_fields[0] << mb) | fmt.max_finite_fields[1]
    # A leading bit above the largest finite value's overflows in every mode; its code (which
    # for .f64 would not fit int64) is the next one up, which step 4 turns into the mode's result.
    code = np.where(msb > fmt.max_finite_fields[0] - fmt.bias, max_code + 1, code)
    code = np.where(significand == 0, 0, code)

    limit_pos, limit_neg = (_overflow_code(fmt, s, mode, satfinite) for s in (0, 1))
    assert max_code <= min(limit_pos, limit_neg) and max(limit_pos, limit_neg) <= max_code + 1
    code = np.minimum(code, limit_pos if limit_pos == limit_neg else limit_pos + sign * (limit_neg - limit_pos))

    if ftz and fmt.has_subnormals:
        # Only the binade just below 2^emin can round up out of tininess (round_exact).
        just_below = msb == emin - 1
        tiny = msb < emin - 1
        if just_below.any():
            unbounded = _shift_right(significand, (msb - mb) - exponent, sign, mode)
            tiny = tiny | (just_below & (unbounded < (1 << fmt.precision)))
        code = np.where(tiny, 0, code)

    if infinite is not None and infinite.any():
        inf_pos, inf_neg = (_infinity_code(fmt, s, satfinite) for s in (0, 1))
        code = np.where(infinite, np.where(sign, inf_neg, inf_pos), code)
    bits = code | (sign.astype(np.int64) << (fmt.exponent_bits + mb)) if fmt.signed else code
    if sat:
        one = fmt.bias << mb
        bits = np.minimum(bits, one) * np.logical_not(sign)
    if relu:
        bits = bits * np.logical_not(sign)
    if nan is not None:
        bits = np.where(nan, _nan_code(fmt, sat=sat, relu=relu, nan_bits=nan_bits), bits)
    return bits << fmt.shift if fmt.shift else bits


def _overflow_code(fmt: FloatFormat, sign: int, mode: Rounding, satfinite: bool) -> int:
    """numerics._overflow, without the sign bit and the shift (the caller adds both)."""
    toward_zero = mode is Rounding.RZ or (mode is Rounding.RP and sign) or (mode is Rounding.RM and not sign)
    if satfinite or toward_zero:
        return _field_code(fmt, max_finite(fmt, 0))
    return _infinity_code(fmt, sign, False)


def _infinity_code(fmt: FloatFormat, sign: int, satfinite: bool) -> int:
    """An infinity of ``sign``: round_value's Infinity branch (.satfinite: MAX_NORM; no infinity
    in the format: its NaN, else MAX_NORM, as numerics._no_infinity)."""
    if satfinite or (not fmt.has_infinity and fmt.nan is NanEncoding.NONE):
        return _field_code(fmt, max_finite(fmt, 0))
    if fmt.has_infinity:
        return _field_code(fmt, infinity(fmt, 0))
    return _field_code(fmt, canonical_nan(fmt))


def _nan_code(fmt: FloatFormat, *, sat: bool, relu: bool, nan_bits: int | np.ndarray | None) -> int | np.ndarray:
    """round_value's NaN branch, as codes without the shift: .sat -> +0.0, no NaN in the format
    -> +MAX_NORM, .relu -> the canonical NaN, else the caller's ``nan_bits``."""
    if sat:
        return 0
    if fmt.nan is NanEncoding.NONE:
        return _field_code(fmt, max_finite(fmt, 0))
    if relu:
        return _field_code(fmt, canonical_nan(fmt))
    if nan_bits is None:
        raise PtxSpecError("a NaN element needs the caller's NaN rule (nan_bits)")
    if isinstance(nan_bits, np.ndarray):
        return nan_bits.astype(np.int64) >> fmt.shift
    # A 64-bit pattern with the sign bit set: the int64 of those bits (as the codes are held).
    return (nan_bits >> fmt.shift) - (1 << 64 if nan_bits >> 63 else 0)


def _field_code(fmt: FloatFormat, bits: int) -> int:
    return bits >> fmt.shift


# ---------------------------------------------------------------------------------------------
# Rounding to an integer (numerics.round_to_integer, §6.5.2 Table 17)
# ---------------------------------------------------------------------------------------------


def round_integer(sign: np.ndarray, significand: np.ndarray, exponent: np.ndarray, mode: Rounding) -> tuple[np.ndarray, np.ndarray]:
    """The magnitude of ``(-1)^sign * significand * 2^exponent`` rounded to an integer in ``mode``
    (.rni = RN, .rzi = RZ, .rmi = RM, .rpi = RP): :func:`~ptxspec.semantics.numerics.round_to_integer`.

    Returns ``(magnitude, huge)``: uint64 magnitudes, and a mask of the elements whose magnitude is
    at least 2^64 (their magnitude is not computed; every integer destination saturates them).
    Exact: a right shift by ``-exponent`` with the mode's rounding (:func:`_shift_right`), or a
    left shift that stays below 2^63; a leading bit at 2^63 (only a value with exponent >= 2, so
    an integer already) is shifted in uint64, where it still fits.
    """
    msb = exponent + bit_length(significand) - 1
    huge = (msb >= 64) & (significand != 0)
    top = (msb == 63) & (significand != 0)
    magnitude = _shift_right(significand, np.where(huge | top, 0, -exponent), sign, mode).astype(np.uint64)
    if top.any():
        shifted = significand.astype(np.uint64) << np.clip(exponent, 0, 63).astype(np.uint64)
        magnitude = np.where(top, shifted, magnitude)
    return magnitude, huge


def saturate_integer(sign: np.ndarray, magnitude: np.ndarray, huge: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """``±magnitude`` clamped to the range of a ``bits``-wide integer (MININT..MAXINT, the
    float-to-integer rule of §9.7.9.21), as that integer's two's-complement bits in a uint64
    (the low ``bits`` bits; "chop" of Table 15). ``magnitude`` is uint64; ``huge`` marks
    magnitudes of 2^64 and more (and infinities)."""
    mask = np.uint64((1 << bits) - 1)
    if signed:
        top = np.uint64(1 << (bits - 1))
        positive = np.where(huge | (magnitude >= top), top - np.uint64(1), magnitude)
        negative_magnitude = np.where(huge | (magnitude > top), top, magnitude)
        negative = (np.uint64(0) - negative_magnitude) & mask
        return np.where(sign, negative, positive)
    positive = np.where(huge | (magnitude > mask), mask, magnitude)
    return np.where(sign, np.uint64(0), positive)


__all__ = ["bit_length", "decode", "exact_sum", "round_bits", "round_integer", "saturate_integer", "SIGNIFICAND_LIMIT"]
