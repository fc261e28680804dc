"""The batched rounding routine (:mod:`ptxspec.semantics.batch_rounding`) against MPFR and against
the scalar numerics core, bit for bit.

Oracles:

* MPFR (gmpy2) with IEEE emulation -- ``precision = p``, ``emin`` at the smallest subnormal,
  ``subnormalize=True`` -- for .rn, .rz, .rm, .rp; .rna (which MPFR lacks) as the nearer of
  MPFR's round-down and round-up results, ties to the larger magnitude. Overflow is decided on
  MPFR's result rounded with an unbounded exponent range above (IEEE 754 §7.4), and .ftz's
  tininess on MPFR's result rounded with an unbounded range below (§7.5, "after rounding").
  Results are encoded from the exact rational MPFR returns, by integer arithmetic here.
* The scalar core: :func:`ptxspec.semantics.numerics.round_value` (with .sat, .satfinite, .relu,
  infinities and NaNs), :func:`~ptxspec.semantics.numerics.decode` and
  :func:`~ptxspec.semantics.numerics.round_to_integer`.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

from ptxspec.semantics import batch_rounding as br
from ptxspec.semantics.numerics import Exact, Infinity, NaN, Rounding, decode, round_to_integer, round_value
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import FORMATS, FloatFormat, NanEncoding

#: The signed formats with subnormals (the MPFR oracle's); the routine also covers the unsigned
#: ones, ue8m0 without subnormals (:data:`UNSIGNED_NAMES`, against the scalar core).
FORMAT_NAMES = ("f32", "f16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
UNSIGNED_NAMES = ("ue8m0", "ue4m3")
MODES = (Rounding.RN, Rounding.RNA, Rounding.RZ, Rounding.RM, Rounding.RP)
MPFR_MODES = {Rounding.RN: gmpy2.RoundToNearest, Rounding.RZ: gmpy2.RoundToZero, Rounding.RM: gmpy2.RoundDown, Rounding.RP: gmpy2.RoundUp}


# ---------------------------------------------------------------------------------------------
# Random exact values that reach every rounding case of a format
# ---------------------------------------------------------------------------------------------


def random_exact(fmt: FloatFormat, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sign, significand, exponent): significands of 1 to 60 bits (some zero, some with a
    single set bit or an exact tie pattern), placed so that the leading bit falls anywhere from
    far below the smallest subnormal to above the largest finite value."""
    bits = rng.integers(1, 61, n)
    significand = rng.integers(0, 1 << 62, n, dtype=np.int64) >> (62 - bits)
    significand |= np.int64(1) << (bits - 1)  # the leading bit where bits says
    # Exact ties and one-bit values: the part below the target precision is 100..0.
    tie = rng.random(n) < 0.2
    keep = np.maximum(bits - fmt.precision - 1, 0)
    significand = np.where(tie, (significand >> keep | 1) << keep, significand)
    significand = np.where(rng.random(n) < 0.03, 0, significand)
    low = fmt.min_normal_exponent - fmt.mantissa_bits - 4
    high = fmt.max_exponent + 3
    msb = rng.integers(low, high + 1, n)
    exponent = msb - (bits - 1)
    sign = rng.random(n) < 0.5
    return sign, significand.astype(np.int64), exponent.astype(np.int64)


# ---------------------------------------------------------------------------------------------
# The MPFR oracle
# ---------------------------------------------------------------------------------------------


def encode(fmt: FloatFormat, sign: int, value: Fraction) -> int:
    """The bits of the representable non-negative ``value`` with ``sign`` (integer arithmetic)."""
    mb = fmt.mantissa_bits
    sign_bit = sign << (fmt.exponent_bits + mb)
    if value == 0:
        return sign_bit << fmt.shift
    emin = fmt.min_normal_exponent
    if value < Fraction(2) ** emin:
        units = value / Fraction(2) ** (emin - mb)
        assert units.denominator == 1
        return (sign_bit | int(units)) << fmt.shift
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    units = value / Fraction(2) ** (e - mb)
    assert units.denominator == 1 and (1 << mb) <= units < (1 << (mb + 1)), (value, e)
    field = e + fmt.bias
    return (sign_bit | (field << mb) | (int(units) - (1 << mb))) << fmt.shift


def _mpfr_round(x: Fraction, fmt: FloatFormat, mode: Rounding, *, bounded_below: bool) -> Fraction:
    """|x| rounded to ``fmt``'s precision by MPFR, with the subnormal range (or an unbounded
    exponent range below), and an unbounded range above; the sign is applied by the caller's
    choice of mode. .rna: the nearer of the down and up results, ties to the larger."""
    p = fmt.precision
    emin = fmt.min_normal_exponent - fmt.mantissa_bits + 1 if bounded_below else -(1 << 20)
    if mode is Rounding.RNA:
        down = _mpfr_round(x, fmt, Rounding.RZ, bounded_below=bounded_below)
        up = _mpfr_round(x, fmt, Rounding.RP, bounded_below=bounded_below)
        return up if (up - x) <= (x - down) else down
    with gmpy2.context(precision=p, emin=emin, emax=1 << 20, subnormalize=bounded_below, round=MPFR_MODES[mode]):
        r = gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator))
    return Fraction(*r.as_integer_ratio())


def mpfr_bits(fmt: FloatFormat, mode: Rounding, sign: int, significand: int, exponent: int, *, ftz: bool, satfinite: bool) -> int:
    """The oracle: ``(-1)^sign * significand * 2^exponent`` rounded once into ``fmt``."""
    magnitude = Fraction(significand) * Fraction(2) ** exponent
    # The magnitude's mode: toward +inf rounds a positive magnitude up and a negative one toward
    # zero; toward -inf the other way round (RP below stands for "magnitude up").
    m = {Rounding.RP: Rounding.RZ if sign else Rounding.RP, Rounding.RM: Rounding.RP if sign else Rounding.RZ}.get(mode, mode)
    if magnitude == 0:
        return encode(fmt, sign, Fraction(0))
    if ftz and _mpfr_round(magnitude, fmt, m, bounded_below=False) < Fraction(2) ** fmt.min_normal_exponent:
        return encode(fmt, sign, Fraction(0))
    r = _mpfr_round(magnitude, fmt, m, bounded_below=True)
    max_e, max_m = fmt.max_finite_fields
    largest = Fraction((1 << fmt.mantissa_bits) + max_m) * Fraction(2) ** (max_e - fmt.bias - fmt.mantissa_bits)
    if r > largest:
        toward_zero = m is Rounding.RZ
        if satfinite or toward_zero or (not fmt.has_infinity and fmt.nan is NanEncoding.NONE):
            return encode(fmt, sign, largest)
        if fmt.has_infinity:
            return (sign << (fmt.exponent_bits + fmt.mantissa_bits) | fmt.exponent_field_max << fmt.mantissa_bits) << fmt.shift
        return (sign << (fmt.exponent_bits + fmt.mantissa_bits) | (1 << (fmt.exponent_bits + fmt.mantissa_bits)) - 1) << fmt.shift
    return encode(fmt, sign, r)


def test_oracle_knows_ieee_754():
    """The oracle on cases worked out by hand."""
    f16, e4m3 = FORMATS["f16"], FORMATS["e4m3"]
    assert mpfr_bits(f16, Rounding.RN, 0, 1, -25, ftz=False, satfinite=False) == 0  # 2^-25: tie to even 0
    assert mpfr_bits(f16, Rounding.RNA, 0, 1, -25, ftz=False, satfinite=False) == 1  # tie away: 2^-24
    assert mpfr_bits(f16, Rounding.RP, 1, 1, -30, ftz=False, satfinite=False) == 0x8000  # -tiny toward +inf
    assert mpfr_bits(f16, Rounding.RM, 1, 1, -30, ftz=False, satfinite=False) == 0x8001
    assert mpfr_bits(f16, Rounding.RN, 0, 65520, 0, ftz=False, satfinite=False) == 0x7C00  # overflow
    assert mpfr_bits(f16, Rounding.RZ, 0, 65520, 0, ftz=False, satfinite=False) == 0x7BFF
    assert mpfr_bits(f16, Rounding.RN, 0, (1 << 12) - 1, -26, ftz=True, satfinite=False) == 0x0400  # rounds up out of tininess
    assert mpfr_bits(f16, Rounding.RN, 0, (1 << 11) - 1, -25, ftz=True, satfinite=False) == 0  # tiny after rounding
    assert mpfr_bits(e4m3, Rounding.RN, 0, 464, 0, ftz=False, satfinite=False) == 0x7E  # a tie between 448 and 480: even 448
    assert mpfr_bits(e4m3, Rounding.RN, 0, 465, 0, ftz=False, satfinite=False) == 0x7F  # rounds to 480: overflow, NaN
    assert mpfr_bits(e4m3, Rounding.RN, 1, 465, 0, ftz=False, satfinite=True) == 0xFE


def _oracle_case(name: str, mode: Rounding, ftz: bool, satfinite: bool, seed: int, n: int) -> None:
    fmt = FORMATS[name]
    rng = np.random.default_rng(seed)
    sign, significand, exponent = random_exact(fmt, rng, n)
    got = br.round_bits(sign, significand, exponent, fmt, mode, ftz=ftz, satfinite=satfinite)
    bad = []
    for i in range(n):
        want = mpfr_bits(fmt, mode, int(sign[i]), int(significand[i]), int(exponent[i]), ftz=ftz, satfinite=satfinite)
        if int(got[i]) != want:
            bad.append((int(sign[i]), int(significand[i]), int(exponent[i]), hex(int(got[i])), hex(want)))
    assert not bad, bad[:5]


@pytest.mark.parametrize("ftz", [False, True])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_round_bits_against_mpfr(name, mode, ftz):
    _oracle_case(name, mode, ftz, False, 1000 + FORMAT_NAMES.index(name) * 10 + MODES.index(mode) * 2 + ftz, 300)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", ("f16", "bf16", "e4m3", "e5m2", "tf32"))
def test_round_bits_satfinite_against_mpfr(name, mode):
    _oracle_case(name, mode, False, True, 3000 + MODES.index(mode), 200)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_round_bits_against_mpfr_heavy(name, chunk):
    for k, (mode, ftz) in enumerate(itertools.product(MODES, (False, True))):
        _oracle_case(name, mode, ftz, chunk == 3, 50_000 + 100 * chunk + k, 2000)


# ---------------------------------------------------------------------------------------------
# Against the scalar core, flags and special values included
# ---------------------------------------------------------------------------------------------

FLAGS = [dict(zip(("ftz", "sat", "satfinite", "relu"), v)) for v in itertools.product((False, True), repeat=4) if not (v[1] and v[2])]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", FORMAT_NAMES + UNSIGNED_NAMES)
def test_round_bits_agrees_with_round_value(name, mode):
    """Every flag combination, with infinities and NaNs among the inputs; the NaN rule given as
    round_value's ``nan`` argument (a made-up NaN pattern, so a forgotten override shows)."""
    fmt = FORMATS[name]
    rng = np.random.default_rng(7 + (FORMAT_NAMES + UNSIGNED_NAMES).index(name) * 5 + MODES.index(mode))
    n = 150
    sign, significand, exponent = random_exact(fmt, rng, n)
    if not fmt.signed:  # magnitudes only (cvt to ue8m0 converts the magnitude)
        sign[:] = False
    kind = rng.integers(0, 12, n)  # 0: infinity, 1: NaN, else finite
    infinite, nan = kind == 0, kind == 1
    nan_bits = ((1 << (fmt.exponent_bits + fmt.mantissa_bits)) - 2) << fmt.shift if fmt.nan is NanEncoding.IEEE else None
    for flags in FLAGS:
        if nan_bits is None and fmt.nan is not NanEncoding.NONE and not (flags["sat"] or flags["relu"]):
            rule = (1 << (fmt.exponent_bits + fmt.mantissa_bits)) - 1  # the one NaN of e4m3
        else:
            rule = nan_bits
        got = br.round_bits(sign, significand, exponent, fmt, mode, infinite=infinite, nan=nan, nan_bits=rule, **flags)
        for i in range(n):
            s = int(sign[i])
            value = Infinity(s) if infinite[i] else NaN(s, 1, fmt) if nan[i] else Exact(s, int(significand[i]), int(exponent[i]))
            want = round_value(value, fmt, mode, nan=rule, **flags)
            assert int(got[i]) == want, (name, mode, flags, value, hex(int(got[i])), hex(want))


def test_nan_needs_a_rule_and_bad_input_says_so():
    f16 = FORMATS["f16"]
    one = np.array([1], dtype=np.int64)
    with pytest.raises(PtxSpecError, match="NaN rule"):
        br.round_bits(np.array([False]), one, one, f16, nan=np.array([True]))
    with pytest.raises(PtxSpecError, match="negative value for the unsigned format .ue8m0"):
        br.round_bits(np.array([True]), one, one, FORMATS["ue8m0"])
    with pytest.raises(PtxSpecError, match="rs"):
        br.round_bits(np.array([False]), one, one, f16, Rounding.RS)


@pytest.mark.parametrize("signed", [False, True])
def test_product_128(signed: bool) -> None:
    """The 128-bit product from 32-bit limbs equals Python's, on extremes and random words."""
    rng = random.Random(7)
    edges = [0, 1, 2, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 64) - 2]
    words = edges + [rng.getrandbits(rng.randint(1, 64)) for _ in range(4000)]
    a = [x for x in words for _ in edges] + words
    b = [y for _ in words for y in edges] + words[::-1]
    high, low = br.product_128(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64), signed=signed)

    def value(x: int) -> int:
        return x - (1 << 64) if signed and x >> 63 else x

    want = [(value(x) * value(y)) % (1 << 128) for x, y in zip(a, b)]
    got = [(int(h) << 64) | int(lo) for h, lo in zip(high.tolist(), low.tolist())]
    assert got == want


def test_exact_product_limbs() -> None:
    """batch_float.exact_product: the product of two values below 2^56 in 60-bit limbs, as
    Python's integers give it (the edges of both factors' ranges and random values)."""
    from ptxspec.semantics.batch_float import exact_product

    rng = random.Random(9)
    edges = [0, 1, (1 << 26) - 1, 1 << 26, (1 << 53) - 1, 1 << 53, (1 << 56) - 1]
    values = edges + [rng.getrandbits(rng.randint(1, 56)) for _ in range(3000)]
    a = [x for x in values for _ in edges] + values
    b = [y for _ in values for y in edges] + values[::-1]
    hi, lo = exact_product(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    assert [(h << 60) | x for h, x in zip(hi.tolist(), lo.tolist())] == [x * y for x, y in zip(a, b)]
    assert int(lo.max()) < 1 << 60


# ---------------------------------------------------------------------------------------------
# decode, bit_length, round_integer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ("f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3", "f32", "tf32"))
@pytest.mark.parametrize("ftz", [False, True])
def test_decode_agrees_with_scalar_decode(name, ftz):
    """Every pattern of the 16-bit and narrower formats; edge and random patterns of f32/tf32."""
    fmt = FORMATS[name]
    if fmt.width <= 8:
        bits = np.arange(1 << fmt.width, dtype=np.uint32)
    elif fmt.width == 16:
        # Every zero, subnormal, infinity and NaN pattern, and every 5th of the others.
        all_bits = np.arange(1 << 16, dtype=np.uint32)
        field = (all_bits >> np.uint32(fmt.mantissa_bits)) & np.uint32(fmt.exponent_field_max)
        bits = all_bits[(field == 0) | (field == fmt.exponent_field_max) | (all_bits % 5 == 0)]
    else:
        rng = np.random.default_rng(5)
        fields = np.array([0, 1, 2, 126, 127, 128, 253, 254, 255], dtype=np.uint32) << np.uint32(23)
        bits = np.concatenate(
            [rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32), fields, fields | np.uint32(1), fields | np.uint32(0x807FFFFF)]
        )
        if fmt.shift:
            bits &= np.uint32(~((1 << fmt.shift) - 1) & 0xFFFFFFFF)
    sign, significand, exponent, nan, infinite = br.decode(fmt, bits, ftz=ftz)
    for i, b in enumerate(bits.tolist()):
        want = decode(fmt, b, ftz=ftz)
        if isinstance(want, NaN):
            assert nan[i] and not infinite[i] and sign[i] == want.sign, hex(b)
        elif isinstance(want, Infinity):
            assert infinite[i] and not nan[i] and sign[i] == want.sign, hex(b)
        else:
            assert not nan[i] and not infinite[i] and sign[i] == want.sign, hex(b)
            value = Fraction(int(significand[i])) * Fraction(2) ** int(exponent[i])
            assert value == Fraction(want.significand) * Fraction(2) ** want.exponent, hex(b)


def test_bit_length_is_exact_across_the_float64_rounding():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 61, 5000, dtype=np.int64) >> rng.integers(0, 61, 5000)
    around = [0, 1, 2, 3, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 54) - 1, (1 << 60) - 1, 1 << 60, (1 << 61) - 1]
    x = np.concatenate([x, np.array(around, dtype=np.int64)])
    assert br.bit_length(x).tolist() == [v.bit_length() for v in x.tolist()]


INTEGER_MODES = (Rounding.RN, Rounding.RZ, Rounding.RM, Rounding.RP)


@pytest.mark.parametrize("mode", INTEGER_MODES, ids=lambda m: m.value)
def test_round_integer_and_saturation_agree_with_the_scalar_core(mode):
    """round_to_integer of exact values from far below 1 to far beyond 2^64 (ties included),
    then the clamp to every integer width, against Python integers."""
    rng = np.random.default_rng(11 + INTEGER_MODES.index(mode))
    n = 3000
    bits = rng.integers(1, 40, n)
    significand = (rng.integers(0, 1 << 40, n, dtype=np.int64) >> (40 - bits)) | (np.int64(1) << (bits - 1))
    significand = np.where(rng.random(n) < 0.05, 0, significand)
    exponent = rng.integers(-45, 70, n) - (bits - 1) // 2
    exponent = np.where(rng.random(n) < 0.2, -1, exponent)  # halves: ties
    sign = rng.random(n) < 0.5
    magnitude, huge = br.round_integer(sign, significand, exponent, mode)
    for width, signed in itertools.product((8, 16, 32, 64), (False, True)):
        got = br.saturate_integer(sign, magnitude, huge, width, signed)
        low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        for i in range(n):
            value = round_to_integer(Exact(int(sign[i]), int(significand[i]), int(exponent[i])), mode)
            want = max(low, min(high, value)) & ((1 << width) - 1)
            assert int(got[i]) == want, (mode, width, signed, int(sign[i]), int(significand[i]), int(exponent[i]))
