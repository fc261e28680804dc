"""An IEEE 754 reference built on gmpy2/MPFR, independent of ptxspec's numerics core.

MPFR computes every operation correctly rounded to a chosen precision; with the exponent range of a
binary format set (``emin``/``emax``) and ``subnormalize=True`` it is that format's IEEE 754
arithmetic, signed zeros and the zero-sign rules of IEEE 754 §6.3 included. Values enter and leave
through this module's own encoder and decoder (integer fields and exact rationals), never through
ptxspec, so agreement between the two is evidence, not an echo.

PTX specifics that MPFR does not know are added here explicitly and only here:

* ``.ftz`` (§9.7.3): subnormal inputs read as zeros of the same sign; a result that is tiny
  *after rounding* (IEEE 754 §7.5: rounded to the format's precision as though the exponent range
  were unbounded, it lies below the smallest normal) becomes a zero of its sign. That definition is
  the one sm_90 follows (conformance/data/sm_90 and a probe on an H200).
* ``.sat`` (§9.7.3.3): clamp to [0.0, 1.0]; NaN and -0.0 become +0.0.

Reusable: :class:`IeeeFormat` describes any IEEE binary format (f64, f32, f16, bf16, ...),
:func:`reference` evaluates add/sub/mul/fma/div/rcp/sqrt, and :func:`sample_operands` draws
operand tuples that reach every exponent, the subnormals, the special values and the operands whose
exact result lies on or one ulp beside a rounding boundary.
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction

import attrs
import gmpy2

#: The marker a reference returns for "some NaN" (which NaN is a separate, PTX-specific question).
NAN = "NaN"

MODES = ("rn", "rz", "rm", "rp")
_MPFR_ROUND = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}


@attrs.frozen(slots=False)
class IeeeFormat:
    """An IEEE 754 binary interchange format: ``ebits`` exponent bits and ``mbits`` trailing
    significand bits behind a sign bit."""

    name: str
    ebits: int
    mbits: int

    @functools.cached_property
    def width(self) -> int:
        return 1 + self.ebits + self.mbits

    @functools.cached_property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @functools.cached_property
    def precision(self) -> int:
        return self.mbits + 1

    @functools.cached_property
    def emin(self) -> int:
        """Exponent of the smallest normal, 2^emin."""
        return 1 - self.bias

    @functools.cached_property
    def emax(self) -> int:
        return self.bias

    @functools.cached_property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @functools.cached_property
    def exp_all_ones(self) -> int:
        return (1 << self.ebits) - 1

    # -- encodings ----------------------------------------------------------------------------

    def pack(self, sign: int, exponent_field: int, mantissa: int) -> int:
        return (sign << (self.width - 1)) | (exponent_field << self.mbits) | mantissa

    def unpack(self, bits: int) -> tuple[int, int, int]:
        return bits >> (self.width - 1), (bits >> self.mbits) & self.exp_all_ones, bits & ((1 << self.mbits) - 1)

    def is_nan(self, bits: int) -> bool:
        _, e, m = self.unpack(bits)
        return e == self.exp_all_ones and m != 0

    def is_inf(self, bits: int) -> bool:
        _, e, m = self.unpack(bits)
        return e == self.exp_all_ones and m == 0

    def is_subnormal(self, bits: int) -> bool:
        _, e, m = self.unpack(bits)
        return e == 0 and m != 0

    def is_zero(self, bits: int) -> bool:
        return bits & ~self.sign_bit == 0

    def zero(self, sign: int = 0) -> int:
        return sign << (self.width - 1)

    def inf(self, sign: int = 0) -> int:
        return self.pack(sign, self.exp_all_ones, 0)

    def max_finite(self, sign: int = 0) -> int:
        return self.pack(sign, self.exp_all_ones - 1, (1 << self.mbits) - 1)

    def min_normal(self, sign: int = 0) -> int:
        return self.pack(sign, 1, 0)

    def min_subnormal(self, sign: int = 0) -> int:
        return self.pack(sign, 0, 1)

    def max_subnormal(self, sign: int = 0) -> int:
        return self.pack(sign, 0, (1 << self.mbits) - 1)

    def one(self, sign: int = 0) -> int:
        return self.pack(sign, self.bias, 0)

    def quiet_nan(self, sign: int = 0, payload: int = 0) -> int:
        return self.pack(sign, self.exp_all_ones, (1 << (self.mbits - 1)) | payload)

    def signalling_nan(self, sign: int = 0, payload: int = 1) -> int:
        assert 0 < payload < (1 << (self.mbits - 1))
        return self.pack(sign, self.exp_all_ones, payload)

    def quieted(self, nan_bits: int) -> int:
        return nan_bits | (1 << (self.mbits - 1))

    def fraction(self, bits: int) -> Fraction:
        """The exact value of a finite encoding."""
        s, e, m = self.unpack(bits)
        assert e != self.exp_all_ones
        v = Fraction(m, 1 << (self.mbits - self.emin)) if e == 0 else Fraction((1 << self.mbits) | m) * Fraction(2) ** (e - self.bias - self.mbits)
        return -v if s else v

    def encode_exact(self, value: Fraction, sign: int) -> int:
        """The encoding of ``value`` (which must be representable; zero takes ``sign``)."""
        if value == 0:
            return self.zero(sign)
        s = int(value < 0)
        mag = abs(value)
        e = mag.numerator.bit_length() - mag.denominator.bit_length()
        if Fraction(2) ** e > mag:
            e -= 1
        if e < self.emin:
            mantissa = mag * Fraction(2) ** (self.mbits - self.emin)
            assert mantissa.denominator == 1, f"{value} is not a {self.name} subnormal"
            return self.pack(s, 0, int(mantissa))
        scaled = mag * Fraction(2) ** (self.mbits - e)
        assert scaled.denominator == 1 and scaled < (2 << self.mbits), f"{value} is not representable in {self.name}"
        assert e <= self.emax
        return self.pack(s, e + self.bias, int(scaled) - (1 << self.mbits))

    def next_up(self, bits: int) -> int:
        """The next encoding toward +inf (finite, non-NaN inputs)."""
        if bits == self.zero(1):
            return self.min_subnormal(0)
        return bits + 1 if not bits & self.sign_bit else bits - 1

    def next_down(self, bits: int) -> int:
        if bits == self.zero(0):
            return self.min_subnormal(1)
        return bits - 1 if not bits & self.sign_bit else bits + 1

    # -- MPFR ----------------------------------------------------------------------------------

    def context(self, mode: str) -> gmpy2.context:
        """This format's IEEE arithmetic: MPFR's exponent is that of 0.5 <= m < 1, so the smallest
        subnormal 2^(emin - mbits) has MPFR exponent emin - mbits + 1."""
        return _context(self.precision, self.emin - self.mbits + 1, self.emax + 1, True, mode)

    def unbounded_context(self, mode: str) -> gmpy2.context:
        """This format's precision with a (practically) unbounded exponent range: for tininess."""
        return _context(self.precision, -(1 << 20), 1 << 20, False, mode)

    def to_mpfr(self, bits: int) -> gmpy2.mpfr:
        """The exact value of ``bits`` (an MPFR number of this format's precision)."""
        s, e, m = self.unpack(bits)
        if e == self.exp_all_ones:
            return gmpy2.mpfr("nan") if m else gmpy2.mpfr("-inf" if s else "inf")
        if e == 0 and m == 0:
            return gmpy2.mpfr("-0.0" if s else "0.0")
        significand, exponent = (m, self.emin - self.mbits) if e == 0 else ((1 << self.mbits) | m, e - self.bias - self.mbits)
        with _EXACT:
            x = gmpy2.mul_2exp(gmpy2.mpfr(significand), exponent)
        return -x if s else x

    def from_mpfr(self, x: gmpy2.mpfr) -> int | str:
        """The encoding of an MPFR value already rounded into this format (:data:`NAN` for NaN)."""
        if gmpy2.is_nan(x):
            return NAN
        sign = int(gmpy2.is_signed(x))
        if gmpy2.is_infinite(x):
            return self.inf(sign)
        if gmpy2.is_zero(x):
            return self.zero(sign)
        m, e = x.as_mantissa_exp()
        m, e = abs(int(m)), int(e)
        top = m.bit_length() - 1 + e  # x = 2^top * 1.f
        if top < self.emin:  # subnormal: m * 2^e = mantissa * 2^(emin - mbits)
            shift = e - (self.emin - self.mbits)
            mantissa = m << shift if shift >= 0 else m >> -shift
            assert mantissa << max(0, -shift) == m << max(0, shift) or shift >= 0, f"{x} is not a {self.name} subnormal"
            return self.pack(sign, 0, mantissa)
        assert top <= self.emax, f"{x} overflows {self.name}"
        shift = e - (top - self.mbits)
        significand = m << shift if shift >= 0 else m >> -shift
        assert (significand << -shift if shift < 0 else significand) == (m if shift < 0 else m << shift), f"{x} is not representable in {self.name}"
        return self.pack(sign, top + self.bias, significand - (1 << self.mbits))

    def flush(self, bits: int) -> int:
        """.ftz on an input: a subnormal reads as a zero of the same sign."""
        return self.zero(bits >> (self.width - 1)) if self.is_subnormal(bits) else bits


@functools.lru_cache(maxsize=None)
def _context(precision: int, emin: int, emax: int, subnormalize: bool, mode: str) -> gmpy2.context:
    return gmpy2.context(precision=precision, emin=emin, emax=emax, subnormalize=subnormalize, round=_MPFR_ROUND[mode])


#: Wide enough that scaling a significand by a power of two is exact for every format here.
_EXACT = gmpy2.context(precision=128, emin=-(1 << 20), emax=1 << 20)

F32 = IeeeFormat("f32", 8, 23)
F64 = IeeeFormat("f64", 11, 52)
F16 = IeeeFormat("f16", 5, 10)
BF16 = IeeeFormat("bf16", 8, 7)
FORMATS = {f.name: f for f in (F32, F64, F16, BF16)}


# ---------------------------------------------------------------------------------------------
# The reference operations
# ---------------------------------------------------------------------------------------------

ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "rcp": 1, "sqrt": 1}


def _apply(op: str, xs: list[gmpy2.mpfr]) -> gmpy2.mpfr:
    if op == "add":
        return xs[0] + xs[1]
    if op == "sub":
        return xs[0] - xs[1]
    if op == "mul":
        return xs[0] * xs[1]
    if op in ("fma", "mad"):
        return gmpy2.fma(xs[0], xs[1], xs[2])
    if op == "div":
        return xs[0] / xs[1]
    if op == "rcp":
        return gmpy2.mpfr(1) / xs[0]
    if op == "sqrt":
        return gmpy2.sqrt(xs[0])
    raise ValueError(op)


def reference(op: str, fmt: IeeeFormat, mode: str, operands: tuple[int, ...], *, ftz: bool = False, sat: bool = False) -> int | str:
    """The IEEE 754 result of ``op`` on the encodings ``operands``, with PTX's .ftz and .sat.

    Returns the result's encoding, or :data:`NAN` when it is a NaN (without .sat).
    """
    if ftz:
        operands = tuple(fmt.flush(b) for b in operands)
    xs = [fmt.to_mpfr(b) for b in operands]
    with fmt.context(mode):
        r = _apply(op, xs)
    out = fmt.from_mpfr(r)
    if ftz and out != NAN and not fmt.is_inf(out) and not fmt.is_zero(out):
        with fmt.unbounded_context(mode):
            wide = _apply(op, xs)
        if abs(wide) < gmpy2.mpfr(2) ** fmt.emin:
            out = fmt.zero(int(gmpy2.is_signed(wide)))
    if sat:
        out = saturate(fmt, out)
    return out


def saturate(fmt: IeeeFormat, out: int | str) -> int:
    """.sat: "clamps the result to [0.0, 1.0]. NaN results are flushed to +0.0f" (-0.0 to +0.0 too)."""
    if out == NAN or out & fmt.sign_bit:
        return fmt.zero(0)
    if fmt.is_inf(out) or fmt.fraction(out) > 1:
        return fmt.one()
    return out


# ---------------------------------------------------------------------------------------------
# Operand sampling
# ---------------------------------------------------------------------------------------------


def specials(fmt: IeeeFormat) -> list[int]:
    """Signed zeros, infinities, quiet and signalling NaNs with payloads, the subnormal and normal
    extremes, one and its neighbours."""
    values = []
    for s in (0, 1):
        values += [
            fmt.zero(s),
            fmt.inf(s),
            fmt.min_subnormal(s),
            fmt.max_subnormal(s),
            fmt.min_normal(s),
            fmt.next_up(fmt.min_normal(0)) | (s * fmt.sign_bit),
            fmt.max_finite(s),
            fmt.one(s),
            fmt.next_up(fmt.one(0)) | (s * fmt.sign_bit),
            fmt.next_down(fmt.one(0)) | (s * fmt.sign_bit),
            fmt.pack(s, fmt.bias + 1, 0),
            fmt.pack(s, fmt.bias - 1, 0),
            fmt.quiet_nan(s),
            fmt.quiet_nan(s, 0x12345 & ((1 << (fmt.mbits - 1)) - 1)),
            fmt.signalling_nan(s, 1),
            fmt.signalling_nan(s, (1 << (fmt.mbits - 1)) - 1),
        ]
    return values


def _random_finite(fmt: IeeeFormat, rng: random.Random, exponent_field: int | None = None, sign: int | None = None) -> int:
    e = rng.randrange(0, fmt.exp_all_ones) if exponent_field is None else exponent_field
    s = rng.getrandbits(1) if sign is None else sign
    return fmt.pack(s, e, rng.getrandbits(fmt.mbits))


def _clamp_field(fmt: IeeeFormat, e: int) -> int:
    return min(max(e, 0), fmt.exp_all_ones - 1)


def _few_bits(fmt: IeeeFormat, rng: random.Random, e: int, k: int | None = None) -> int:
    """A value whose significand ends ``k`` bits below the binary point (its last set bit there):
    products and sums of such values land exactly on and beside rounding boundaries."""
    k = rng.randrange(1, fmt.mbits + 1) if k is None else min(max(k, 1), fmt.mbits)
    mantissa = ((rng.getrandbits(k - 1) << 1) | 1) << (fmt.mbits - k)
    return fmt.pack(rng.getrandbits(1), _clamp_field(fmt, e), mantissa)


def _nudge(fmt: IeeeFormat, rng: random.Random, bits: int) -> int:
    """``bits`` or one of its neighbours (one ulp either side)."""
    if fmt.is_nan(bits) or fmt.is_inf(bits):
        return bits
    r = rng.random()
    if r < 1 / 3:
        return bits
    nb = fmt.next_up(bits) if r < 2 / 3 else fmt.next_down(bits)
    return bits if fmt.is_inf(nb) or fmt.is_nan(nb) else nb


def _round_to(fmt: IeeeFormat, value: gmpy2.mpfr) -> int:
    with fmt.context("rn"):
        out = fmt.from_mpfr(+value)
    return out


def _boundary_operands(op: str, fmt: IeeeFormat, rng: random.Random) -> tuple[int, ...]:
    """Operands whose exact result lies on a rounding boundary (a tie, or the boundary between
    subnormals and normals, or the overflow threshold) or one ulp of an operand beside it."""
    p = fmt.precision
    a = _random_finite(fmt, rng, exponent_field=rng.randrange(1, fmt.exp_all_ones))
    _, ea, _ = fmt.unpack(a)
    if op in ("add", "sub"):
        # b = half an ulp of a (a tie), or a little more or less, at a random distance below.
        gap = rng.choice([p, p + 1, p - 1, p + 2, rng.randrange(0, p + 4)])
        b = fmt.pack(rng.getrandbits(1), _clamp_field(fmt, ea - gap), rng.choice([0, 0, rng.getrandbits(fmt.mbits)]))
        return (_nudge(fmt, rng, a), _nudge(fmt, rng, b))
    if op == "mul":
        # Significands of about p/2 + 1 bits each: the exact product has p+1 or p+2 bits.
        target = rng.randrange(fmt.emin - p - 2, fmt.emax + 3)
        ea = rng.randrange(max(1, target + fmt.bias - fmt.emax), min(fmt.exp_all_ones - 1, target + fmt.bias - fmt.emin) + 1) if rng.random() < 0.9 else ea
        k = rng.randrange(1, fmt.mbits + 1)
        x = _few_bits(fmt, rng, ea, k)
        eb = _clamp_field(fmt, target - (ea - fmt.bias) + fmt.bias)
        # Together the two significands have p - 1 .. p + 1 fraction bits: the product has one or
        # two bits more than fit, the last of them set -- a tie, or a quarter or three quarters.
        y = _few_bits(fmt, rng, eb, p - k + rng.randrange(-2, 1) if rng.random() < 0.7 else None)
        # Leave the tie alone half the time; otherwise move one operand by one ulp.
        if rng.random() < 0.5:
            return (x, y)
        return (_nudge(fmt, rng, x), y) if rng.random() < 0.5 else (x, _nudge(fmt, rng, y))
    if op in ("fma", "mad"):
        x, y = _boundary_operands("mul", fmt, rng)
        xs = [fmt.to_mpfr(x), fmt.to_mpfr(y)]
        if gmpy2.is_finite(xs[0] * xs[1]) and rng.random() < 0.7:
            # c cancels most of a*b (so the low product bits decide), or sits half an ulp below it.
            prod = _round_to(fmt, xs[0] * xs[1])
            if prod != NAN and not fmt.is_inf(prod):
                c = prod ^ fmt.sign_bit if rng.random() < 0.5 else _random_finite(fmt, rng, _clamp_field(fmt, fmt.unpack(prod)[1] - p + rng.randrange(-2, 3)))
                return (x, y, _nudge(fmt, rng, c))
        return (x, y, _random_finite(fmt, rng, exponent_field=_clamp_field(fmt, ea + rng.randrange(-p - 3, p + 3))))
    if op in ("div", "rcp"):
        # a = b * q rounded, with q a (p+1)-bit odd significand: a / b lies next to a tie.
        b = _random_finite(fmt, rng, exponent_field=rng.randrange(1, fmt.exp_all_ones))
        q_sig = rng.getrandbits(p) | (1 << p) | 1
        target = rng.randrange(fmt.emin - p - 2, fmt.emax + 2)
        with gmpy2.context(precision=4 * p, emin=-(1 << 20), emax=1 << 20):
            q = gmpy2.mpfr(q_sig) * gmpy2.mpfr(2) ** (target - p)
        if op == "rcp":
            # 1 / a near a tie: a = 1 / q rounded.
            with gmpy2.context(precision=4 * p, emin=-(1 << 20), emax=1 << 20):
                inv = 1 / q
            a = _round_to(fmt, inv)
            return (_nudge(fmt, rng, a),) if a != NAN and not fmt.is_inf(a) else (b,)
        with gmpy2.context(precision=4 * p, emin=-(1 << 20), emax=1 << 20):
            prod = fmt.to_mpfr(b) * q
        a = _round_to(fmt, prod)
        if a == NAN or fmt.is_inf(a) or fmt.is_zero(a):
            return (_random_finite(fmt, rng), b)
        return (_nudge(fmt, rng, a), b)
    if op == "sqrt":
        # a = r * r rounded, with r a (p+1)-bit odd significand: sqrt(a) lies next to a tie.
        r_sig = rng.getrandbits(p) | (1 << p) | 1
        e = rng.randrange((fmt.emin - p) // 2, fmt.emax // 2)
        with gmpy2.context(precision=4 * p, emin=-(1 << 20), emax=1 << 20):
            r = gmpy2.mpfr(r_sig) * gmpy2.mpfr(2) ** (e - p)
            sq = r * r
        a = _round_to(fmt, sq)
        if a == NAN or fmt.is_inf(a):
            a = _random_finite(fmt, rng, sign=0)
        return (_nudge(fmt, rng, a),)
    raise ValueError(op)


def sample_operands(op: str, fmt: IeeeFormat, seed: int, n: int) -> list[tuple[int, ...]]:
    """``n`` seeded operand tuples for ``op``: a mix of uniformly random encodings (every exponent
    field, subnormals and NaNs included), special values, operands with close exponents (so sums
    and products are not trivially dominated), operands built to put the exact result on or one ulp
    beside a rounding boundary, and results in the subnormal range."""
    rng = random.Random(f"{op}:{fmt.name}:{seed}")
    arity = ARITY[op]
    sp = specials(fmt)
    out: list[tuple[int, ...]] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.25:
            t = tuple(rng.getrandbits(fmt.width) for _ in range(arity))
        elif r < 0.35:
            t = tuple(rng.choice(sp) if rng.random() < 0.6 else _random_finite(fmt, rng) for _ in range(arity))
        elif r < 0.55:
            # Close exponents around a random (subnormal included) exponent field.
            e = rng.randrange(0, fmt.exp_all_ones)
            t = tuple(_random_finite(fmt, rng, exponent_field=_clamp_field(fmt, e + rng.randrange(-4, 5))) for _ in range(arity))
            if op in ("mul", "div", "fma", "mad") and rng.random() < 0.5:
                # Bring the result near the subnormal range or the overflow threshold.
                lo, hi = (fmt.emin - fmt.precision - 2, fmt.emin + 2) if rng.random() < 0.6 else (fmt.emax - 2, fmt.emax + 2)
                target = rng.randrange(lo, hi)
                ea = rng.randrange(1, fmt.exp_all_ones)
                eb = ea - fmt.bias - target + fmt.bias if op == "div" else target - (ea - fmt.bias) + fmt.bias
                t = (_random_finite(fmt, rng, ea), _random_finite(fmt, rng, _clamp_field(fmt, eb)), *t[2:])
        else:
            t = _boundary_operands(op, fmt, rng)
        out.append(t)
    return out
