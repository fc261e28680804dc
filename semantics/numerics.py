"""The numerics core: exact decoding of every PTX floating-point format, and ONE rounding routine.

Every floating-point result in ptxspec is computed as an exact value -- an integer significand and a
power of two, never a host float -- and then handed to :func:`round_value`, the single place where
rounding (§6.5.2: .rn, .rna, .rz, .rm, .rp; §9.7.9.21: .rs), flush-to-zero, .sat, .satfinite and
.relu happen, for every format of §5.2.3. This mirrors how Berkeley SoftFloat shares one
round-and-pack routine between all operations.
"""

from __future__ import annotations

import enum

import attrs

from ptxspec.spec.types import FORMATS, FloatFormat, NanEncoding

# ---------------------------------------------------------------------------------------------
# Exact values
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Exact:
    """A finite real number ``(-1)^sign * significand * 2^exponent``, exactly.

    ``sticky`` marks a value known only to lie strictly between ``significand * 2^exponent`` and
    ``(significand + 1) * 2^exponent`` (the quotient or square root whose remainder was not zero).
    A producer of a sticky value keeps at least the target precision + 2 significant bits, so that
    the open interval never straddles a rounding boundary, on the subnormal grid or on the
    unbounded-exponent grid that decides tininess under ``.ftz``.
    """

    sign: int
    significand: int
    exponent: int = 0
    sticky: bool = False

    @property
    def is_zero(self) -> bool:
        return self.significand == 0 and not self.sticky

    def negate(self) -> Exact:
        return attrs.evolve(self, sign=self.sign ^ 1)

    def magnitude(self) -> Exact:
        return attrs.evolve(self, sign=0)


@attrs.frozen
class Infinity:
    sign: int

    def negate(self) -> Infinity:
        return Infinity(self.sign ^ 1)


@attrs.frozen
class NaN:
    """A NaN of some format: its sign and trailing significand field (the payload, quiet bit included)."""

    sign: int
    payload: int
    format: FloatFormat

    @property
    def is_signalling(self) -> bool:
        """IEEE formats: the top trailing-significand bit clear means signalling."""
        quiet_bit = 1 << (self.format.mantissa_bits - 1)
        return self.format.nan is NanEncoding.IEEE and not (self.payload & quiet_bit)

    def negate(self) -> NaN:
        return attrs.evolve(self, sign=self.sign ^ 1)


Value = Exact | Infinity | NaN


def fmt_of(name_or_format: str | FloatFormat) -> FloatFormat:
    return FORMATS[name_or_format] if isinstance(name_or_format, str) else name_or_format


# ---------------------------------------------------------------------------------------------
# Decoding (§5.2.1, §5.2.3)
# ---------------------------------------------------------------------------------------------


def fields(fmt: FloatFormat, bits: int) -> tuple[int, int, int]:
    """Split ``bits`` into (sign, exponent field, mantissa field)."""
    raw = bits >> fmt.shift
    mantissa = raw & ((1 << fmt.mantissa_bits) - 1)
    exponent = (raw >> fmt.mantissa_bits) & fmt.exponent_field_max
    sign = (raw >> (fmt.exponent_bits + fmt.mantissa_bits)) & 1 if fmt.signed else 0
    return sign, exponent, mantissa


def is_nan_fields(fmt: FloatFormat, exponent: int, mantissa: int) -> bool:
    if fmt.nan is NanEncoding.IEEE:
        return exponent == fmt.exponent_field_max and mantissa != 0
    if fmt.nan is NanEncoding.ALL_ONES:
        return exponent == fmt.exponent_field_max and mantissa == (1 << fmt.mantissa_bits) - 1
    return False


def decode(fmt: FloatFormat | str, bits: int, *, ftz: bool = False) -> Value:
    """The exact value that ``bits`` encodes in ``fmt``.

    With ``ftz`` a subnormal input is read as a zero of the same sign (the ``.ftz`` input rule of
    §9.7.3: "flush subnormal inputs ... to sign-preserving zero").
    """
    fmt = fmt_of(fmt)
    sign, exponent, mantissa = fields(fmt, bits)
    if is_nan_fields(fmt, exponent, mantissa):
        return NaN(sign, mantissa, fmt)
    if fmt.has_infinity and exponent == fmt.exponent_field_max:
        return Infinity(sign)
    if not fmt.has_subnormals:
        return Exact(sign, 1 << fmt.mantissa_bits | mantissa, exponent - fmt.bias - fmt.mantissa_bits)
    if exponent == 0:
        if ftz:
            return Exact(sign, 0)
        return Exact(sign, mantissa, fmt.min_normal_exponent - fmt.mantissa_bits)
    return Exact(sign, (1 << fmt.mantissa_bits) | mantissa, exponent - fmt.bias - fmt.mantissa_bits)


def is_subnormal(fmt: FloatFormat | str, bits: int) -> bool:
    fmt = fmt_of(fmt)
    _, exponent, mantissa = fields(fmt, bits)
    return fmt.has_subnormals and exponent == 0 and mantissa != 0


# ---------------------------------------------------------------------------------------------
# Encoding the special values
# ---------------------------------------------------------------------------------------------


def pack(fmt: FloatFormat, sign: int, exponent_field: int, mantissa: int) -> int:
    raw = (exponent_field << fmt.mantissa_bits) | mantissa
    if fmt.signed:
        raw |= sign << (fmt.exponent_bits + fmt.mantissa_bits)
    return raw << fmt.shift


def zero(fmt: FloatFormat | str, sign: int = 0) -> int:
    fmt = fmt_of(fmt)
    return pack(fmt, sign if fmt.signed else 0, 0, 0)


def infinity(fmt: FloatFormat | str, sign: int = 0) -> int:
    fmt = fmt_of(fmt)
    assert fmt.has_infinity, f"{fmt} has no infinity"
    return pack(fmt, sign, fmt.exponent_field_max, 0)


def max_finite(fmt: FloatFormat | str, sign: int = 0) -> int:
    fmt = fmt_of(fmt)
    return pack(fmt, sign if fmt.signed else 0, *fmt.max_finite_fields)


def min_subnormal(fmt: FloatFormat | str, sign: int = 0) -> int:
    """The smallest positive magnitude of ``fmt`` (for ue8m0, which has no zero: 2^-127)."""
    fmt = fmt_of(fmt)
    return pack(fmt, sign if fmt.signed else 0, 0, 0 if not fmt.has_subnormals else 1)


def canonical_nan(fmt: FloatFormat | str) -> int:
    """The canonical NaN: positive, every exponent and mantissa bit set (0x7fffffff for f32, 0x7fff
    for f16 and bf16, 0x7f for e4m3, 0xff for ue8m0), the NaN that PTX names canonical."""
    fmt = fmt_of(fmt)
    assert fmt.nan is not NanEncoding.NONE, f"{fmt} has no NaN"
    return pack(fmt, 0, fmt.exponent_field_max, (1 << fmt.mantissa_bits) - 1)


def encode_nan(fmt: FloatFormat | str, nan: NaN) -> int:
    """A NaN's bits in ``fmt``; an IEEE payload keeps its most significant bits and is made quiet.

    Narrowing keeps the top ``fmt.mantissa_bits`` bits of the payload, widening appends zeros
    below it (IEEE 754 §6.2.3: the payload is preserved as far as the format allows); the quiet
    bit is then set, so a signalling NaN whose payload lies only in the dropped bits is still a NaN.
    Formats whose NaN is not IEEE have no payload: a NaN from e4m3, ue4m3 or ue8m0 (§5.2.3: "NaN
    values are restricted to 0x7f and 0xff") becomes the canonical NaN of ``fmt``, as does any
    NaN stored into such a format. Formats without NaN have no encoding for it (see
    :func:`round_value`, which gives +MAX_NORM there).
    """
    fmt = fmt_of(fmt)
    if fmt.nan is not NanEncoding.IEEE or nan.format.nan is not NanEncoding.IEEE:
        return canonical_nan(fmt)
    src_bits = nan.format.mantissa_bits
    if src_bits >= fmt.mantissa_bits:
        payload = nan.payload >> (src_bits - fmt.mantissa_bits)
    else:
        payload = nan.payload << (fmt.mantissa_bits - src_bits)
    payload |= 1 << (fmt.mantissa_bits - 1)
    return pack(fmt, nan.sign, fmt.exponent_field_max, payload)


def quiet(nan: NaN) -> int:
    """The input NaN with its quiet bit set, in its own format (IEEE 754 payload propagation)."""
    return encode_nan(nan.format, nan)


# ---------------------------------------------------------------------------------------------
# The rounding routine
# ---------------------------------------------------------------------------------------------


class Rounding(enum.Enum):
    """Floating-point rounding modifiers (§6.5.2 Table 16) and stochastic rounding (§9.7.9.21)."""

    RN = "rn"  #: to nearest, ties to even
    RNA = "rna"  #: to nearest, ties away from zero
    RZ = "rz"  #: toward zero
    RM = "rm"  #: toward negative infinity
    RP = "rp"  #: toward positive infinity
    RS = "rs"  #: stochastic: the carry of (discarded bits + random bits) decides


def _round_up(mode: Rounding, sign: int, q: int, rem: int, shift: int, sticky: bool, random: tuple[int, int] | None) -> bool:
    """Whether the truncated magnitude ``q`` (the discarded part being ``rem`` over ``2^shift``, plus
    an infinitesimal when ``sticky``) moves one unit away from zero."""
    if shift == 0:
        inexact, above_half, tie = sticky, False, False
    else:
        half = 1 << (shift - 1)
        inexact = rem != 0 or sticky
        above_half = rem > half or (rem == half and sticky)
        tie = rem == half and not sticky
    if mode is Rounding.RN:
        return above_half or (tie and bool(q & 1))
    if mode is Rounding.RNA:
        return above_half or tie
    if mode is Rounding.RZ:
        return False
    if mode is Rounding.RP:
        return inexact and sign == 0
    if mode is Rounding.RM:
        return inexact and sign == 1
    # .rs: "rounded toward or away from zero by the carry of the integer addition of the supplied
    # random bits with the truncated (discarded) bits of the input mantissa" (§9.7.9.21). The k
    # random bits are added to the k most significant discarded bits.
    assert random is not None, ".rs needs random bits"
    rbits, k = random
    discarded = (rem << k) >> shift if shift else 0
    return discarded + (rbits & ((1 << k) - 1)) >= (1 << k)


def _round_at(x: Exact, lsb: int, mode: Rounding, random: tuple[int, int] | None = None) -> tuple[int, int]:
    """Round the magnitude of ``x`` to a multiple of ``2^lsb``: returns ``(q, lsb)`` with the
    rounded magnitude ``q * 2^lsb`` (q may have carried one bit beyond the caller's precision)."""
    shift = lsb - x.exponent
    if shift <= 0:
        assert not x.sticky, "a sticky value must carry bits below the result's last place"
        return x.significand << -shift, lsb
    q, rem = x.significand >> shift, x.significand & ((1 << shift) - 1)
    return q + int(_round_up(mode, x.sign, q, rem, shift, x.sticky, random)), lsb


def round_to_integer(x: Exact, mode: Rounding) -> int:
    """``x`` rounded to an integer in ``mode`` (the integer rounding of §6.5.2 Table 17: .rni is
    Rounding.RN, .rzi RZ, .rmi RM, .rpi RP), as a signed Python int."""
    q, _ = _round_at(x, 0, mode)
    return -q if x.sign else q


def _overflow(fmt: FloatFormat, sign: int, mode: Rounding, satfinite: bool) -> int:
    """The result of a magnitude beyond the largest finite value of ``fmt`` (IEEE 754 §7.4 for the
    directed modes; formats without infinity give NaN where they have one, else saturate)."""
    toward_zero = mode is Rounding.RZ or (mode is Rounding.RP and sign) or (mode is Rounding.RM and not sign)
    if satfinite or toward_zero:
        return max_finite(fmt, sign)
    if fmt.has_infinity:
        return infinity(fmt, sign)
    return _no_infinity(fmt, sign)


def _no_infinity(fmt: FloatFormat, sign: int) -> int:
    """What an infinite result becomes in a format without infinities and without .satfinite:
    the NaN of that sign where the format has one, else its largest finite value."""
    if fmt.nan is NanEncoding.NONE:
        return max_finite(fmt, sign)
    return pack(fmt, sign if fmt.signed else 0, fmt.exponent_field_max, (1 << fmt.mantissa_bits) - 1)


def round_exact(
    x: Exact,
    fmt: FloatFormat | str,
    mode: Rounding = Rounding.RN,
    *,
    ftz: bool = False,
    satfinite: bool = False,
    random: tuple[int, int] | None = None,
) -> int:
    """Round the finite value ``x`` into ``fmt`` and return the bits.

    The value is rounded once, at ``fmt``'s precision with its subnormal range and an unbounded
    exponent range above (IEEE 754 §4.3, §7.4); a rounded magnitude beyond the largest finite value
    is an overflow:

    * ``.rz``, and ``.rm``/``.rp`` toward zero, give the largest finite value of the sign;
    * ``.rn``, ``.rna``, ``.rs`` and the directed modes away from zero give infinity; a format
      without infinity gives its NaN of that sign (e4m3, ue4m3, ue8m0), or its largest finite value
      when it has no NaN either (e2m1, e2m3, e3m2);
    * ``satfinite`` turns every overflow into the largest finite value of the same sign.

    ``ftz`` flushes a tiny result to a zero of the same sign: one that, rounded to ``fmt``'s
    precision with an unbounded exponent range, lies below the smallest normal (IEEE 754 §7.5
    tininess after rounding).

    ``random`` is ``(bits, k)``: k random bits for ``Rounding.RS``. They are added to the k most
    significant bits of the discarded fraction (zeros where fewer than k bits are discarded; bits
    below the k-th are not looked at), and a carry out of those k bits rounds away from zero
    (§9.7.9.21: "rounded toward or away from zero by the carry of the integer addition of the
    supplied random bits with the truncated (discarded) bits of the input mantissa").

    Formats of precision 1 (ue8m0): every significand is odd, so ``.rn`` ties have no even
    candidate and go away from zero. ue8m0 has no zero: a zero or a value below 2^-127 gives 2^-127,
    the representable value nearest to it.
    """
    fmt = fmt_of(fmt)
    sign = x.sign if fmt.signed else 0
    if x.is_zero:
        return zero(fmt, sign) if fmt.has_subnormals else min_subnormal(fmt)
    if not fmt.signed and x.sign:
        # Unsigned formats hold no negative value; the callers that allow one (cvt to ue8m0)
        # decide what it becomes before coming here.
        raise ValueError(f"negative value for unsigned format {fmt}")
    msb = x.exponent + x.significand.bit_length() - 1
    if ftz and fmt.has_subnormals:
        # IEEE 754 §7.5 tininess "after rounding": round to the format's precision as though the
        # exponent range were unbounded, and flush when that lies below the smallest normal. sm_90
        # decides so (docs/profiles.rst): mul.rn.ftz.f32 of 0x3f21e58f and 0x00ca6691 (exactly
        # 2^-126 - 2^-173) keeps 0x00800000, while 0x3f7fffff * 0x00800000 (2^-126 - 2^-150, a tie
        # that the subnormal grid would round up) flushes to +0.
        # Only a value in the binade just below the smallest normal can round up out of tininess.
        if msb < fmt.min_normal_exponent - 1:
            return zero(fmt, sign)
        if msb < fmt.min_normal_exponent:
            q, lsb = _round_at(x, msb - fmt.mantissa_bits, mode, random)
            if q.bit_length() - 1 + lsb < fmt.min_normal_exponent:
                return zero(fmt, sign)
    q, lsb = _round_at(x, max(msb, fmt.min_normal_exponent) - fmt.mantissa_bits, mode, random)
    if q >> fmt.precision:  # carried into a new binade
        q >>= 1
        lsb += 1
    if q == 0:
        return zero(fmt, sign) if fmt.has_subnormals else min_subnormal(fmt)
    if q < (1 << fmt.mantissa_bits):  # subnormal after rounding
        return pack(fmt, sign, 0, q) if fmt.has_subnormals else min_subnormal(fmt)
    exponent_field = lsb + fmt.mantissa_bits + fmt.bias
    mantissa = q - (1 << fmt.mantissa_bits)
    max_e, max_m = fmt.max_finite_fields
    if exponent_field > max_e or (exponent_field == max_e and mantissa > max_m):
        return _overflow(fmt, x.sign, mode, satfinite)
    return pack(fmt, sign, exponent_field, mantissa)


def round_value(
    value: Value,
    fmt: FloatFormat | str,
    mode: Rounding = Rounding.RN,
    *,
    ftz: bool = False,
    sat: bool = False,
    satfinite: bool = False,
    relu: bool = False,
    random: tuple[int, int] | None = None,
    nan: int | None = None,
) -> int:
    """The one rounding routine: ``value`` (exact, infinite or NaN) to the bits of ``fmt``.

    * ``mode``/``random``: the rounding of :func:`round_exact`.
    * ``ftz``: flush a subnormal result to a zero of the same sign.
    * ``sat``: clamp to [+0.0, 1.0], NaN to +0.0 (§9.7.3: "saturates the result to [0.0, 1.0], with
      NaNs being flushed to positive zero"). -0.0 also becomes +0.0: the lower end of the range is
      +0.0 (sm_90 agrees: ``add.rn.sat.f32`` of -0.0 + -0.0 and ``cvt.rn.sat.f16.f32`` of -0.0
      give +0.0).
    * ``satfinite``: infinities and overflow become the largest finite value of the same sign; a
      NaN stays NaN (§9.7.9.21).
    * ``relu``: "if the result is negative, .relu clamps it to 0. NaN results are converted to the
      canonical NaN" (§9.7.9.21). A result whose sign is negative, -0.0 and results that round to
      -0.0 included, becomes +0.0 (sm_90 agrees: ``cvt.rn.relu.f16.f32`` of -0.0 gives +0.0).
    * ``nan``: the bits to return for a NaN value (the caller's NaN rule); by default the value's
      payload carried over, made quiet.

    A format without NaN (e2m1, e2m3, e3m2) turns a NaN into +MAX_NORM: "for .e2m1x2, .e2m3x2,
    .e3m2x2, ... NaN results are converted to positive MAX_NORM" (§9.7.9.21 .satfinite; those
    destinations require .satfinite).
    """
    fmt = fmt_of(fmt)
    if isinstance(value, NaN):
        if sat:
            return zero(fmt, 0)
        if fmt.nan is NanEncoding.NONE:
            return max_finite(fmt, 0)
        if relu:
            return canonical_nan(fmt)
        return nan if nan is not None else encode_nan(fmt, value)
    if sat:
        value = _clamp_unit(value)
    if relu and value.sign == 1:
        return zero(fmt, 0) if fmt.has_subnormals else min_subnormal(fmt)
    if isinstance(value, Infinity):
        if satfinite:
            return max_finite(fmt, value.sign)
        if fmt.has_infinity:
            return infinity(fmt, value.sign)
        return _no_infinity(fmt, value.sign)
    return round_exact(value, fmt, mode, ftz=ftz, satfinite=satfinite, random=random)


class Flags(enum.IntFlag):
    """The five exceptions of IEEE 754-2019 §7, as bits in the order Berkeley SoftFloat and
    TestFloat number them (TestFloat's ``testfloat_gen`` writes them as two hex digits).

    PTX has no status flags; these are what an IEEE 754 implementation of the operation would
    raise (see :func:`rounding_flags` and :mod:`ptxspec.conformance.testfloat`).
    """

    INEXACT = 0x01  #: §7.6
    UNDERFLOW = 0x02  #: §7.5
    OVERFLOW = 0x04  #: §7.4
    DIVIDE_BY_ZERO = 0x08  #: §7.3 (TestFloat: "infinite")
    INVALID = 0x10  #: §7.2


def rounding_flags(value: Value, fmt: FloatFormat | str, mode: Rounding = Rounding.RN) -> Flags:
    """The exceptions that rounding the exact result ``value`` once into ``fmt`` raises, under
    IEEE 754-2019 default exception handling (no .ftz, .sat, .satfinite or .relu).

    * inexact (§7.6): the rounded result differs from ``value`` (or it overflowed);
    * overflow (§7.4): ``value`` rounded to ``fmt``'s precision as though the exponent range were
      unbounded exceeds the largest finite value in magnitude (whatever the rounding then
      delivers: infinity, or the largest finite value under .rz and the directed modes toward zero);
    * underflow (§7.5): the result is tiny -- nonzero and, rounded to ``fmt``'s precision with an
      unbounded exponent range, below the smallest normal in magnitude (tininess detected *after*
      rounding, SoftFloat's default and TestFloat's ``-tininessafter``) -- *and* inexact: under
      default handling an exact tiny result raises no underflow flag (§7.5).

    An infinity or a NaN passes through rounding unchanged and raises nothing here; invalid
    operation and division by zero are raised by the operation, not by the rounding (callers
    such as :func:`ptxspec.conformance.testfloat.exceptions` add them). The rounding itself is
    :func:`round_exact`'s and :func:`_round_at`'s, the same routine every result goes through.
    """

    def compare(a_sig: int, a_exp: int, b_sig: int, b_exp: int) -> int:
        """The sign of ``a_sig * 2^a_exp - b_sig * 2^b_exp`` (non-negative significands)."""
        e = min(a_exp, b_exp)
        a, b = a_sig << (a_exp - e), b_sig << (b_exp - e)
        return (a > b) - (a < b)

    fmt = fmt_of(fmt)
    if not (fmt.signed and fmt.has_infinity and fmt.has_subnormals and fmt.nan is NanEncoding.IEEE):
        raise ValueError(f"IEEE 754 exceptions are defined for IEEE-style formats, not {fmt.name}")
    if mode is Rounding.RS:
        raise ValueError("IEEE 754 defines no exceptions for stochastic rounding")
    if not isinstance(value, Exact) or value.is_zero:
        return Flags(0)
    # The value rounded to fmt's precision with an unbounded exponent range decides both
    # overflow and tininess.
    msb = value.exponent + value.significand.bit_length() - 1
    q, lsb = _round_at(value, msb - fmt.mantissa_bits, mode)
    largest = decode(fmt, max_finite(fmt))
    assert isinstance(largest, Exact), "the largest finite value is finite"
    overflow = compare(q, lsb, largest.significand, largest.exponent) > 0
    tiny = q.bit_length() - 1 + lsb < fmt.min_normal_exponent
    delivered = decode(fmt, round_exact(value, fmt, mode))
    inexact = (
        overflow
        or value.sticky
        or not isinstance(delivered, Exact)
        or compare(delivered.significand, delivered.exponent, value.significand, value.exponent) != 0
    )
    flags = Flags(0)
    if inexact:
        flags |= Flags.INEXACT
    if overflow:
        flags |= Flags.OVERFLOW
    if tiny and inexact:
        flags |= Flags.UNDERFLOW
    return flags


def _clamp_unit(value: Exact | Infinity) -> Exact:
    """Clamp to [+0.0, 1.0]: anything with the sign bit set, -0.0 included, becomes +0.0."""
    if value.sign == 1:
        return Exact(0, 0)
    if isinstance(value, Infinity) or _greater_than_one(value):
        return Exact(0, 1)
    return value


def _greater_than_one(x: Exact) -> bool:
    if x.exponent >= 0:
        return x.significand << x.exponent > 1 or (x.significand << x.exponent == 1 and x.sticky)
    whole = x.significand >> -x.exponent
    frac = x.significand & ((1 << -x.exponent) - 1)
    return whole > 1 or (whole == 1 and (frac != 0 or x.sticky))


# ---------------------------------------------------------------------------------------------
# Exact arithmetic on decoded values
# ---------------------------------------------------------------------------------------------


def exact_sum(a: Exact, b: Exact, mode: Rounding = Rounding.RN) -> Exact:
    """``a + b`` exactly. An exact zero sum takes IEEE 754's sign rule (§6.3): +0 unless both
    addends are -0, or the rounding is toward negative infinity."""
    assert not (a.sticky or b.sticky)
    e = min(a.exponent, b.exponent)
    sa = (a.significand << (a.exponent - e)) * (-1 if a.sign else 1)
    sb = (b.significand << (b.exponent - e)) * (-1 if b.sign else 1)
    total = sa + sb
    if total == 0:
        if a.significand == 0 and b.significand == 0 and a.sign == b.sign:
            return Exact(a.sign, 0)
        return Exact(1 if mode is Rounding.RM else 0, 0)
    return Exact(int(total < 0), abs(total), e)


def exact_product(a: Exact, b: Exact) -> Exact:
    """``a * b`` exactly (the sign of a zero product is the exclusive or of the signs)."""
    return Exact(a.sign ^ b.sign, a.significand * b.significand, a.exponent + b.exponent)


def exact_quotient(a: Exact, b: Exact, precision: int) -> Exact:
    """``a / b`` (b non-zero) to at least ``precision + 2`` significant bits, sticky if inexact."""
    assert b.significand != 0
    if a.significand == 0:
        return Exact(a.sign ^ b.sign, 0)
    # Scale the dividend so the integer quotient has at least precision + 2 bits.
    k = max(0, precision + 2 + b.significand.bit_length() - a.significand.bit_length() + 1)
    q, r = divmod(a.significand << k, b.significand)
    return Exact(a.sign ^ b.sign, q, a.exponent - b.exponent - k, sticky=r != 0)


def exact_sqrt(a: Exact, precision: int) -> Exact:
    """``sqrt(a)`` for a >= 0 to at least ``precision + 2`` significant bits, sticky if inexact."""
    import math

    assert a.sign == 0 or a.significand == 0
    if a.significand == 0:
        return Exact(a.sign, 0)
    sig, exp = a.significand, a.exponent
    if exp & 1:
        sig, exp = sig << 1, exp - 1
    # Make the radicand wide enough that its root has precision + 2 bits (even shift keeps exp even).
    need = 2 * (precision + 2) - sig.bit_length() + 2
    if need > 0:
        need += need & 1
        sig, exp = sig << need, exp - need
    root = math.isqrt(sig)
    return Exact(0, root, exp // 2, sticky=root * root != sig)


def to_fraction(x: Exact):
    """The exact rational value (for oracles and documentation; sticky values are not exact)."""
    from fractions import Fraction

    assert not x.sticky
    v = Fraction(x.significand) * (Fraction(2) ** x.exponent)
    return -v if x.sign else v
