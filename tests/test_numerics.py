"""The rounding core (semantics/numerics.py) against independent oracles.

Oracles, none of which shares code with the core:

* the neighbours of a value: for the formats of 16 bits or fewer, a sorted table of every
  representable value decoded by ml_dtypes/numpy; for tf32, f32 and f64, GNU MPFR (gmpy2) with
  IEEE emulation (precision p, emin/emax, subnormalize) rounding down and up;
* the rounding decision, made here from those neighbours with Fraction arithmetic (nearest, ties
  to even or away, directed, stochastic by the carry rule of §9.7.9.21);
* MPFR division, square root, addition and multiplication in all IEEE rounding directions, bit for
  bit, against the core's exact operations rounded once by :func:`round_exact`.

MPFR's exponent convention puts the significand in [0.5, 1): a format of precision p whose
smallest subnormal is 2^s and largest finite value is below 2^E has emin = s + 1 and emax = E.
"""

from __future__ import annotations

import bisect
import functools
import math
import random
import struct
from fractions import Fraction

import gmpy2
import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    canonical_nan,
    decode,
    exact_product,
    exact_quotient,
    exact_sqrt,
    exact_sum,
    max_finite,
    round_exact,
    round_value,
    to_fraction,
    zero,
)
from ptxspec.spec.types import FORMATS

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")

ALL = ["f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3"]
MODES = list(Rounding)
DIRECTED = [Rounding.RN, Rounding.RZ, Rounding.RM, Rounding.RP]

#: Formats whose every value is tabulated from ml_dtypes/numpy (ue4m3: e4m3 without its sign).
TABLE_TYPES = {
    "f16": (np.float16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "e4m3": (ml_dtypes.float8_e4m3fn, np.uint8),
    "e5m2": (ml_dtypes.float8_e5m2, np.uint8),
    "e2m3": (ml_dtypes.float6_e2m3fn, np.uint8),
    "e3m2": (ml_dtypes.float6_e3m2fn, np.uint8),
    "e2m1": (ml_dtypes.float4_e2m1fn, np.uint8),
    "ue8m0": (ml_dtypes.float8_e8m0fnu, np.uint8),
    "ue4m3": (ml_dtypes.float8_e4m3fn, np.uint8),
}
#: (precision p, MPFR emin, MPFR emax) of the wide formats, from IEEE 754 and §5.2.3.
MPFR_PARAMS = {"f64": (53, -1073, 1024), "f32": (24, -148, 128), "tf32": (11, -135, 128), "f16": (11, -23, 16)}
#: Explicit mantissa bits (§5.2.3), for the spacing just above the largest finite value.
MANTISSA = {"f64": 52, "f32": 23, "tf32": 10, "f16": 10, "bf16": 7, "e4m3": 3, "e5m2": 2, "e2m3": 3, "e3m2": 2, "e2m1": 1, "ue8m0": 0, "ue4m3": 3}
UNSIGNED = {"ue8m0", "ue4m3"}
NO_INFINITY = {"e4m3", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3"}
NO_NAN = {"e2m3", "e3m2", "e2m1"}
RNDS = {Rounding.RN: gmpy2.RoundToNearest, Rounding.RZ: gmpy2.RoundToZero, Rounding.RP: gmpy2.RoundUp, Rounding.RM: gmpy2.RoundDown}


def floor_log2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


# ---------------------------------------------------------------------------------------------
# The neighbour oracles
# ---------------------------------------------------------------------------------------------


@functools.cache
def table(name: str) -> tuple[list[Fraction], list[int]]:
    """The non-negative finite values of ``name`` in increasing order, and the least significant
    bit of each one's encoding (its significand's parity), from ml_dtypes."""
    dtype, container = TABLE_TYPES[name]
    count = 1 << (8 * np.dtype(container).itemsize)
    if name in ("e2m3", "e3m2"):
        count = 64
    elif name == "e2m1":
        count = 16
    elif name == "ue4m3":
        count = 128  # the e4m3 encodings with sign 0
    floats = np.arange(count, dtype=container).view(dtype).astype(np.float64)
    pairs = {}
    for bits, x in enumerate(floats.tolist()):
        if math.isfinite(x) and math.copysign(1.0, x) > 0:
            pairs[Fraction(x)] = bits & 1
    values = sorted(pairs)
    return values, [pairs[v] for v in values]


def largest(name: str) -> Fraction:
    if name in MPFR_PARAMS:
        p, _, emax = MPFR_PARAMS[name]
        return (1 - Fraction(1, 2**p)) * Fraction(2) ** emax
    return table(name)[0][-1]


def smallest_normal(name: str) -> Fraction:
    if name in MPFR_PARAMS:
        p, emin, _ = MPFR_PARAMS[name]
        return Fraction(2) ** (emin + p - 2)
    if name == "ue8m0":  # no subnormals: every value is normal
        return table(name)[0][0]
    return Fraction(2) ** (1 - FORMATS[name].bias)


def beyond(name: str) -> Fraction:
    """The value just above the largest finite one if the exponent range had no top."""
    top = largest(name)
    return top + Fraction(2) ** (floor_log2(top) - MANTISSA[name])


def mpfr_exact(a: Fraction) -> gmpy2.mpfr:
    """``a`` (a dyadic rational) as an mpfr, exactly."""
    num, den = a.numerator, a.denominator
    assert den & (den - 1) == 0
    with gmpy2.context(precision=max(2, num.bit_length()), emin=-(1 << 30) + 1, emax=(1 << 30) - 1):
        return gmpy2.mul_2exp(gmpy2.mpfr(num), -(den.bit_length() - 1))


def mpfr_fraction(r: gmpy2.mpfr) -> Fraction:
    return Fraction(*r.as_integer_ratio())


def neighbours(name: str, a: Fraction) -> tuple[Fraction | None, Fraction | None, Fraction | None]:
    """For a magnitude ``a`` > 0: the largest value <= a and the smallest value >= a of ``name``
    with its exponent range unbounded above (None where there is none), and which of the two
    round-to-nearest-even picks on a tie (None for precision 1, where both are odd)."""
    if name in MPFR_PARAMS:
        p, emin, emax = MPFR_PARAMS[name]
        x = mpfr_exact(a)
        out = []
        for rnd in (gmpy2.RoundDown, gmpy2.RoundUp, gmpy2.RoundToNearest):
            # One more binade on top: the value beyond the largest finite one is representable.
            with gmpy2.context(precision=p, emin=emin, emax=emax + 1, subnormalize=True, round=rnd):
                r = +x
            out.append(None if gmpy2.is_infinite(r) else mpfr_fraction(r))
        return out[0], out[1], out[2]
    values, parity = table(name)
    top = largest(name)
    if a > top:
        after = beyond(name)
        if a > after:
            return after, None, None  # both neighbours overflow
        if MANTISSA[name] == 0:
            return top, after, None
        return top, after, (after if parity[-1] == 1 else top)
    i = bisect.bisect_left(values, a)
    if values[i] == a:
        return a, a, a
    lo = values[i - 1] if i > 0 else None
    hi = values[i]
    if MANTISSA[name] == 0 or lo is None:
        even = None
    else:
        even = lo if parity[i - 1] == 0 else hi
    return lo, hi, even


def expected_rounding(name: str, sign: int, a: Fraction, mode: Rounding, *, ftz: bool = False, satfinite: bool = False, rbits: tuple[int, int] | None = None):
    """What rounding ``(-1)^sign * a`` into ``name`` must give: ("nan", sign), ("inf", sign) or
    (signed Fraction, sign)."""
    top = largest(name)
    if a == 0:
        if name == "ue8m0":  # no zero: the nearest value is the smallest one
            return table(name)[0][0], 0
        return Fraction(0), sign
    lo, hi, even = neighbours(name, a)
    toward_zero = mode is Rounding.RZ or (mode is Rounding.RM and sign == 0) or (mode is Rounding.RP and sign == 1)
    r = pick(a, lo, hi, even, mode, toward_zero, rbits)
    if r is None or r > top:  # overflow; .rs overflows like .rn, whichever way its carry went
        if satfinite or toward_zero:
            return (-top if sign else top), sign
        if name not in NO_INFINITY:
            return "inf", sign
        if name not in NO_NAN:
            return "nan", sign
        return (-top if sign else top), sign
    if ftz and 0 < a < smallest_normal(name) and name != "ue8m0":
        # Tininess after rounding (IEEE 754 §7.5): the value rounded to the format's precision
        # as though the exponent range were unbounded.
        ulp = Fraction(2) ** (floor_log2(a) - MANTISSA[name])
        k = a // ulp
        unbounded = pick(a, k * ulp, (k + 1) * ulp, (k if k % 2 == 0 else k + 1) * ulp, mode, toward_zero, rbits)
        if unbounded < smallest_normal(name):
            r = Fraction(0)
    return (-r if sign else r), sign


def pick(a: Fraction, lo, hi, even, mode: Rounding, toward_zero: bool, rbits):
    """Which of the neighbours ``lo <= a <= hi`` a rounding mode chooses for the magnitude ``a``."""
    if lo == a:
        return a
    if lo is None:  # below the smallest value of a format without zero (ue8m0)
        return hi
    if hi is None:
        return None
    if toward_zero:
        return lo
    if mode in (Rounding.RM, Rounding.RP):
        return hi
    if mode is Rounding.RS:
        bits, k = rbits
        discarded = math.floor((a - lo) / (hi - lo) * 2**k)  # the top k discarded bits
        return hi if discarded + (bits % 2**k) >= 2**k else lo
    below, above = a - lo, hi - a
    if below != above:
        return lo if below < above else hi
    if mode is Rounding.RNA or even is None:
        return hi
    return even


def observed(name: str, bits: int):
    """The core's bits, checked to be a clean encoding, read back as expected_rounding's shape."""
    fmt = FORMATS[name]
    assert 0 <= bits < (1 << fmt.width), hex(bits)
    assert bits & ((1 << fmt.shift) - 1) == 0, f"{name}: low bits set in {bits:#x}"
    v = decode(name, bits)
    if isinstance(v, NaN):
        return "nan", v.sign
    if isinstance(v, Infinity):
        return "inf", v.sign
    return to_fraction(v), v.sign


def same(got, want, name: str) -> bool:
    if name in UNSIGNED:  # no sign bit: compare what is encoded
        return got[0] == want[0]
    return got == want


# ---------------------------------------------------------------------------------------------
# Exact values to round
# ---------------------------------------------------------------------------------------------


@functools.cache
def format_range(name: str) -> tuple[int, int, int, int]:
    """(exponent of the smallest positive value, of the smallest normal, of the largest value,
    precision) of ``name``, from the oracle's tables."""
    if name in MPFR_PARAMS:
        p, emin, emax = MPFR_PARAMS[name]
        return emin - 1, emin + p - 2, emax - 1, p
    values, _ = table(name)
    positive = [v for v in values if v > 0]
    return floor_log2(positive[0]), floor_log2(smallest_normal(name)), floor_log2(values[-1]), MANTISSA[name] + 1


@st.composite
def exact_values(draw, name: str, sticky: bool = True) -> Exact:
    """Exact values around everything that matters to rounding into ``name``: far below the
    smallest subnormal, the subnormal/normal boundary, ties and near-ties, the overflow
    threshold, and far above it; significands up to ~200 bits."""
    lowest, normal, top, p = format_range(name)
    sign = 0 if name in UNSIGNED else draw(st.integers(0, 1))
    kind = draw(st.sampled_from(["random", "tie", "short"]))
    if kind == "random":
        length = draw(st.integers(1, 200))
        significand = draw(st.integers(1 << (length - 1), (1 << length) - 1))
    elif kind == "short":  # fewer bits than the format keeps, or just a few more
        length = draw(st.integers(1, p + 3))
        significand = draw(st.integers(1 << (length - 1), (1 << length) - 1))
    else:  # a kept part and a discarded tail shaped like a tie or a near-tie
        kept = draw(st.integers(1, p + 1))
        head = draw(st.integers(1 << (kept - 1), (1 << kept) - 1))
        t = draw(st.integers(1, 60))
        tail = draw(st.sampled_from([1 << (t - 1), (1 << (t - 1)) - 1, (1 << (t - 1)) + 1, 1, (1 << t) - 1, 0]))
        significand = head << t | tail
    msb = draw(
        st.one_of(
            st.integers(lowest - 4, lowest + 2),
            st.integers(normal - 3, normal + 1),
            st.integers(top - 1, top + 2),
            st.integers(lowest - 40, top + 40),
            st.integers(lowest - 400, top + 400),
        )
    )
    exponent = msb - significand.bit_length() + 1
    is_sticky = sticky and draw(st.booleans())
    if is_sticky:
        # The producers' contract: at least precision + 2 significant bits, i.e. two bits below
        # the last place of the result rounded with an unbounded exponent range.
        last_place = msb - (p - 1)
        deficit = exponent - (last_place - 2)
        if deficit > 0:
            significand, exponent = significand << deficit, exponent - deficit
    return Exact(sign, significand, exponent, sticky=is_sticky)


def magnitude(x: Exact) -> Fraction:
    """|x|; a sticky value is represented by the midpoint of its open interval (no rounding
    boundary lies inside that interval, so any point of it rounds alike)."""
    if x.sticky:
        return Fraction(2 * x.significand + 1) * Fraction(2) ** (x.exponent - 1)
    return Fraction(x.significand) * Fraction(2) ** x.exponent


random_bits = st.integers(1, 24).flatmap(lambda k: st.tuples(st.integers(0, (1 << k) - 1), st.just(k)))


# ---------------------------------------------------------------------------------------------
# Brackets: the result is the right neighbour (the core against the oracles)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_round_exact_picks_the_right_neighbour(name, data):
    """Every mode on each drawn value (.rs only on values without a sticky tail)."""
    x = data.draw(exact_values(name))
    ftz = data.draw(st.booleans())
    satfinite = data.draw(st.booleans())
    rbits = data.draw(random_bits)
    for mode in MODES:
        if mode is Rounding.RS and x.sticky:
            continue
        r = rbits if mode is Rounding.RS else None
        got = observed(name, round_exact(x, name, mode, ftz=ftz, satfinite=satfinite, random=r))
        want = expected_rounding(name, x.sign, magnitude(x), mode, ftz=ftz, satfinite=satfinite, rbits=r)
        assert same(got, want, name), (x, mode, got, want)


def test_neighbour_oracles_agree_on_f16():
    """The two neighbour oracles (ml_dtypes table and MPFR) agree where both apply."""
    rng = random.Random(1616)
    for _ in range(3000):
        a = Fraction(rng.getrandbits(rng.randint(1, 40)) | 1, 1 << rng.randint(0, 70))
        if a == 0:
            continue
        values, _ = table("f16")
        lo, hi, even = neighbours("f16", a)
        p, emin, emax = MPFR_PARAMS["f16"]
        x = mpfr_exact(a)
        with gmpy2.context(precision=p, emin=emin, emax=emax + 1, subnormalize=True, round=gmpy2.RoundDown):
            m_lo = mpfr_fraction(+x)
        with gmpy2.context(precision=p, emin=emin, emax=emax + 1, subnormalize=True, round=gmpy2.RoundUp):
            m_hi = +x
        assert lo == m_lo
        assert hi == (None if gmpy2.is_infinite(m_hi) else mpfr_fraction(m_hi))


def test_mpfr_recipe_matches_host_ieee_arithmetic():
    """The MPFR IEEE emulation used as the oracle is right: it agrees with the host's binary32
    arithmetic (SSE, round to nearest even) on random operands, subnormal results included."""
    rng = np.random.default_rng(2024)
    a = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    a &= np.uint32(0x8FFF_FFFF)  # small exponents: products and quotients near the subnormals
    fa, fb = a.view(np.float32), b.view(np.float32)
    with np.errstate(all="ignore"):
        host = {"mul": fa * fb, "div": fa / fb, "add": fa + fb, "sqrt": np.sqrt(np.abs(fa))}
    p, emin, emax = MPFR_PARAMS["f32"]
    with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=gmpy2.RoundToNearest):
        for i in range(len(a)):
            x, y = gmpy2.mpfr(float(fa[i])), gmpy2.mpfr(float(fb[i]))
            for op, r in (("mul", x * y), ("div", x / y if y else None), ("add", x + y), ("sqrt", gmpy2.sqrt(abs(x)))):
                h = float(host[op][i])
                if r is None or math.isnan(h):
                    continue
                assert struct.pack("<f", float(r)) == struct.pack("<f", h), (op, fa[i], fb[i])


# ---------------------------------------------------------------------------------------------
# Identity, monotonicity, symmetry
# ---------------------------------------------------------------------------------------------


def finite_encodings(name: str) -> list[int]:
    fmt = FORMATS[name]
    return [b for b in range(1 << fmt.field_bits) if isinstance(decode(name, b << fmt.shift), Exact)]


@pytest.mark.parametrize("name", ["f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3"])
def test_representable_values_round_to_themselves(name):
    rng = random.Random(name)
    for bits in finite_encodings(name):
        x = decode(name, bits)
        for mode in MODES:
            rbits = (rng.getrandbits(13), 13) if mode is Rounding.RS else None
            assert round_exact(x, name, mode, random=rbits, satfinite=bool(bits & 2)) == bits, (hex(bits), mode)


@pytest.mark.parametrize("name", ["f32", "f64", "tf32"])
def test_random_representable_values_round_to_themselves(name):
    fmt = FORMATS[name]
    rng = random.Random(name)
    for _ in range(20000):
        bits = rng.getrandbits(fmt.field_bits) << fmt.shift
        x = decode(name, bits)
        if not isinstance(x, Exact):
            continue
        for mode in MODES:
            rbits = (rng.getrandbits(16), 16) if mode is Rounding.RS else None
            assert round_exact(x, name, mode, random=rbits) == bits, (hex(bits), mode)


def order_key(name: str, bits: int) -> Fraction:
    """Position on the real line; an overflow's infinity or NaN sits beyond every finite value."""
    v, s = observed(name, bits)
    if v in ("inf", "nan"):
        return Fraction(-(10**400) if s else 10**400)
    return v


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_rounding_is_monotonic(name, data):
    x = data.draw(exact_values(name))
    y = data.draw(exact_values(name))
    if magnitude(x) * (-1 if x.sign else 1) > magnitude(y) * (-1 if y.sign else 1):
        x, y = y, x
    satfinite = data.draw(st.booleans())
    ftz = data.draw(st.booleans())
    for mode in MODES:
        if mode is Rounding.RS:
            continue
        rx = round_exact(x, name, mode, satfinite=satfinite, ftz=ftz)
        ry = round_exact(y, name, mode, satfinite=satfinite, ftz=ftz)
        assert order_key(name, rx) <= order_key(name, ry), (x, y, mode)


def boundary_grid(name: str, stride: int = 1) -> list[Fraction]:
    """Every representable value, every midpoint, and points just either side of each, from far
    below the smallest value to beyond the overflow threshold, both signs, sorted."""
    values = table(name)[0] + [beyond(name), 2 * beyond(name)]
    tiny = values[1] / 2**20 if values[0] == 0 else values[0] / 2**20
    points = {Fraction(0), values[0] / 2**40}
    for lo, hi in zip(values[:-1:stride], values[1::stride]):
        mid = (lo + hi) / 2
        points.update({lo, lo + tiny, mid - tiny, mid, mid + tiny, hi - tiny})
    if name not in UNSIGNED:
        points |= {-p for p in points}
    return sorted(points)


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3", "f16", "bf16"])
@pytest.mark.parametrize("mode", [m for m in MODES if m is not Rounding.RS], ids=lambda m: m.value)
def test_rounding_is_monotonic_on_the_boundaries(name, mode):
    previous = None
    for v in boundary_grid(name, stride=1 if FORMATS[name].width <= 8 else 37):
        x = ex(abs(v), int(v < 0))
        key = order_key(name, round_exact(x, name, mode))
        assert previous is None or previous <= key, (name, mode, v)
        previous = key


@pytest.mark.parametrize("name", [n for n in ALL if n not in UNSIGNED])
@given(data=st.data())
def test_sign_symmetry(name, data):
    x = data.draw(exact_values(name)).magnitude()
    flip = FORMATS[name].sign_mask
    ftz = data.draw(st.booleans())
    satfinite = data.draw(st.booleans())
    for mode in (Rounding.RN, Rounding.RNA, Rounding.RZ):
        assert round_exact(x.negate(), name, mode, ftz=ftz, satfinite=satfinite) == round_exact(x, name, mode, ftz=ftz, satfinite=satfinite) ^ flip
    assert round_exact(x.negate(), name, Rounding.RM, ftz=ftz, satfinite=satfinite) == round_exact(x, name, Rounding.RP, ftz=ftz, satfinite=satfinite) ^ flip
    assert round_exact(x.negate(), name, Rounding.RP, ftz=ftz, satfinite=satfinite) == round_exact(x, name, Rounding.RM, ftz=ftz, satfinite=satfinite) ^ flip
    if not x.sticky:
        rbits = data.draw(random_bits)
        assert round_exact(x.negate(), name, Rounding.RS, random=rbits) == round_exact(x, name, Rounding.RS, random=rbits) ^ flip


# ---------------------------------------------------------------------------------------------
# Boundaries named in the manual
# ---------------------------------------------------------------------------------------------


def ex(value: Fraction | int, sign: int = 0) -> Exact:
    v = Fraction(value)
    assert v.denominator & (v.denominator - 1) == 0
    return Exact(sign, v.numerator, -(v.denominator.bit_length() - 1))


OVERFLOW_CASES = [
    # name, value, mode, satfinite, expected bits (from §5.2.3 and IEEE 754 §7.4)
    ("f16", 65519, Rounding.RN, False, 0x7BFF),  # below the midpoint 65520
    ("f16", 65520, Rounding.RN, False, 0x7C00),  # midpoint: 65504 is odd, to even is 2^16: inf
    ("f16", 65520, Rounding.RNA, False, 0x7C00),
    ("f16", 65520, Rounding.RZ, False, 0x7BFF),
    ("f16", 10**6, Rounding.RZ, False, 0x7BFF),
    ("f16", 10**6, Rounding.RM, False, 0x7BFF),
    ("f16", 65505, Rounding.RP, False, 0x7C00),
    ("f16", 10**6, Rounding.RN, True, 0x7BFF),
    ("e4m3", 464, Rounding.RN, False, 0x7E),  # midpoint of 448 and 480; 448 (mantissa 110) is even
    ("e4m3", 465, Rounding.RN, False, 0x7F),  # no infinity: the NaN
    ("e4m3", 464, Rounding.RNA, False, 0x7F),
    ("e4m3", 465, Rounding.RN, True, 0x7E),  # .satfinite: MAX_NORM
    ("e4m3", 10**9, Rounding.RZ, False, 0x7E),
    ("e4m3", 449, Rounding.RP, False, 0x7F),
    ("e5m2", 61440, Rounding.RN, False, 0x7C),  # midpoint of 57344 and 65536; 57344 is odd
    ("e5m2", 61439, Rounding.RN, False, 0x7B),
    ("e5m2", 10**6, Rounding.RN, True, 0x7B),
    ("e2m1", 7, Rounding.RN, False, 0x7),  # no infinity, no NaN: MAX_NORM 6
    ("e2m1", 100, Rounding.RP, False, 0x7),
    ("e2m3", 100, Rounding.RN, False, 0x1F),
    ("e3m2", 30, Rounding.RN, False, 0x1F),
    ("e3m2", 29, Rounding.RP, False, 0x1F),
    ("ue8m0", 2**128, Rounding.RP, False, 0xFF),  # above 2^127: NaN
    ("ue8m0", 2**127 + 1, Rounding.RP, False, 0xFF),
    ("ue8m0", 2**127 + 1, Rounding.RP, True, 0xFE),
    ("ue8m0", 2**200, Rounding.RZ, False, 0xFE),
    ("ue4m3", 465, Rounding.RN, False, 0x7F),
    ("ue4m3", 465, Rounding.RN, True, 0x7E),
    ("bf16", 2**128, Rounding.RN, False, 0x7F80),
    ("tf32", 2**128, Rounding.RZ, False, 0x7F7F_E000),
    ("tf32", 2**128, Rounding.RN, False, 0x7F80_0000),
]


@pytest.mark.parametrize("name,value,mode,satfinite,bits", OVERFLOW_CASES)
def test_overflow(name, value, mode, satfinite, bits):
    assert round_exact(ex(value), name, mode, satfinite=satfinite) == bits
    if name not in UNSIGNED:
        sign = FORMATS[name].sign_mask
        mirrored = {Rounding.RM: Rounding.RP, Rounding.RP: Rounding.RM}.get(mode, mode)
        assert round_exact(ex(value, 1), name, mirrored, satfinite=satfinite) == bits | sign


def test_underflow_below_half_the_smallest_subnormal():
    """f32: 2^-150 is half the smallest subnormal 2^-149: a tie that goes to the even zero."""
    for name, lowest in (("f32", -149), ("f16", -24), ("e4m3", -9), ("e2m1", -1), ("bf16", -133)):
        half = Fraction(2) ** (lowest - 1)
        m = FORMATS[name].sign_mask
        assert round_exact(ex(half), name, Rounding.RN) == 0
        assert round_exact(ex(half, 1), name, Rounding.RN) == m
        assert round_exact(ex(half), name, Rounding.RNA) == 1
        assert round_exact(ex(half * Fraction(2**90 + 1, 2**90)), name, Rounding.RN) == 1
        assert round_exact(ex(half / 2**300), name, Rounding.RP) == 1
        assert round_exact(ex(half / 2**300, 1), name, Rounding.RP) == m
        assert round_exact(ex(half / 2**300, 1), name, Rounding.RM) == m | 1
        assert round_exact(ex(half * 3), name, Rounding.RN) == 2  # 1.5 * smallest: tie to even 2
        # Rounding up out of the subnormals carries into the smallest normal.
        top_subnormal = (1 << FORMATS[name].mantissa_bits) - 1
        just_below_normal = Fraction(2) ** lowest * (top_subnormal + Fraction(3, 4))
        assert round_exact(ex(just_below_normal), name, Rounding.RN) == 1 << FORMATS[name].mantissa_bits
        assert round_exact(ex(just_below_normal), name, Rounding.RN, ftz=True) == 1 << FORMATS[name].mantissa_bits
        assert round_exact(ex(just_below_normal), name, Rounding.RZ, ftz=True) == 0


def test_ue8m0_has_no_zero_and_no_subnormals():
    """ue8m0 is 2^(e-127), e in 0..254: a zero or anything below 2^-127 gives 2^-127 (0x00)."""
    for mode in (Rounding.RZ, Rounding.RP, Rounding.RN, Rounding.RM):
        assert round_exact(Exact(0, 0), "ue8m0", mode) == 0x00
        assert round_exact(Exact(1, 0), "ue8m0", mode) == 0x00
        assert round_exact(ex(Fraction(1, 2**300)), "ue8m0", mode) == 0x00
    assert round_exact(ex(3), "ue8m0", Rounding.RZ) == 128
    assert round_exact(ex(3), "ue8m0", Rounding.RP) == 129
    assert round_exact(ex(3), "ue8m0", Rounding.RN) == 129  # a tie: no even candidate, away (as ml_dtypes)
    assert round_exact(ex(Fraction(5, 4)), "ue8m0", Rounding.RP) == 128
    with pytest.raises(ValueError):
        round_exact(ex(1, 1), "ue8m0", Rounding.RZ)


def test_tf32_is_packed_in_the_f32_layout():
    """cvt to tf32 keeps the f32 layout with the low 13 bits zero (§5.2.3; sm_90 agrees)."""
    one_third = exact_quotient(Exact(0, 1), Exact(0, 3), 11)
    assert round_exact(one_third, "tf32", Rounding.RN) == 0x3EAA_A000
    assert round_exact(one_third, "tf32", Rounding.RP) == 0x3EAA_C000
    assert round_exact(one_third, "tf32", Rounding.RNA) == 0x3EAA_A000
    assert round_exact(ex(Fraction(2**11 + 1, 2**11)), "tf32", Rounding.RNA) == 0x3F80_2000  # tie, away
    assert round_exact(ex(Fraction(2**11 + 1, 2**11)), "tf32", Rounding.RN) == 0x3F80_0000  # tie, even
    assert round_exact(ex(Fraction(1, 2**137)), "tf32", Rounding.RP) == 0x2000  # smallest subnormal 2^-136


# ---------------------------------------------------------------------------------------------
# round_value: infinities, NaN, .sat, .relu, .satfinite
# ---------------------------------------------------------------------------------------------


def specials(name: str):
    values = [Infinity(0), Infinity(1), Exact(0, 0), Exact(1, 0)]
    if FORMATS[name].nan.value != "none":
        values.append(decode(name, canonical_nan(name)))
    values.append(NaN(1, 1 << 22 | 5, FORMATS["f32"]))
    return values


@pytest.mark.parametrize("name", ["f64", "f32", "f16", "bf16", "tf32"])
@given(data=st.data())
def test_sat_clamps_to_the_unit_interval(name, data):
    """.sat: "clamps the result to [0.0, 1.0]. NaN results are flushed to positive zero" (§9.7.3,
    §9.7.9.21). -0.0 gives +0.0 (sm_90: add.rn.sat.f32 of -0.0 + -0.0 is +0.0)."""
    mode = data.draw(st.sampled_from(MODES))
    rbits = data.draw(random_bits) if mode is Rounding.RS else None
    value = data.draw(st.one_of(exact_values(name, sticky=mode is not Rounding.RS), st.sampled_from(specials(name))))
    got = observed(name, round_value(value, name, mode, sat=True, random=rbits))
    if isinstance(value, NaN) or value.sign == 1:
        assert got == (0, 0)
    elif isinstance(value, Infinity) or magnitude(value) >= 1:
        assert got == (1, 0)
    else:
        assert got == expected_rounding(name, 0, magnitude(value), mode, rbits=rbits)
        assert 0 <= got[0] <= 1


@pytest.mark.parametrize("name", ["f32", "f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
@given(data=st.data())
def test_relu(name, data):
    """.relu: "if the result is negative, .relu clamps it to 0. NaN results are converted to the
    canonical NaN" (§9.7.9.21); -0.0 gives +0.0 (sm_90: cvt.rn.relu.f16.f32 of -0.0 is +0.0).
    A format without NaN gives +MAX_NORM for a NaN (the .satfinite rule its cvt requires)."""
    mode = data.draw(st.sampled_from([Rounding.RN, Rounding.RZ, Rounding.RS]))
    rbits = data.draw(random_bits) if mode is Rounding.RS else None
    satfinite = data.draw(st.booleans())
    value = data.draw(st.one_of(exact_values(name, sticky=mode is not Rounding.RS), st.sampled_from(specials(name))))
    bits = round_value(value, name, mode, relu=True, satfinite=satfinite, random=rbits)
    if isinstance(value, NaN):
        assert bits == (max_finite(name) if name in NO_NAN else canonical_nan(name))
    elif value.sign == 1:
        assert bits == zero(name)
    elif isinstance(value, Infinity):
        assert bits == round_value(value, name, mode, satfinite=satfinite)
    else:
        assert bits == round_exact(value, name, mode, satfinite=satfinite, random=rbits)


@pytest.mark.parametrize("name", ALL)
def test_infinities_and_nan(name):
    fmt = FORMATS[name]
    for sign in (0, 1):
        s = sign if fmt.signed else 0
        inf = round_value(Infinity(sign), name)
        sat = round_value(Infinity(sign), name, satfinite=True)
        assert sat == max_finite(name, s)
        if fmt.has_infinity:
            assert observed(name, inf) == ("inf", sign)
        elif name in NO_NAN:
            assert inf == max_finite(name, s)
        else:
            assert observed(name, inf)[0] == "nan"
    f32_nan = decode("f32", 0xFFC0_0001)
    if name in NO_NAN:
        # "For .e2m1x2, .e2m3x2, .e3m2x2 ... NaN results are converted to positive MAX_NORM".
        assert round_value(f32_nan, name, satfinite=True) == max_finite(name)
    else:
        assert observed(name, round_value(f32_nan, name, satfinite=True))[0] == "nan"
        assert round_value(f32_nan, name, nan=0x1234) == 0x1234
    assert round_value(f32_nan, name, sat=True) == zero(name)


# ---------------------------------------------------------------------------------------------
# Stochastic rounding (§9.7.9.21 .rs)
# ---------------------------------------------------------------------------------------------


def discarded_top_bits(name: str, a: Fraction, k: int) -> tuple[int, bool]:
    """The top k bits of the part of ``a`` below the result's last place, and whether that part
    has any bit below those k."""
    lo, hi, _ = neighbours(name, a)
    if lo == hi or lo is None or hi is None:
        return 0, False  # exact, or no choice to make (below ue8m0's smallest, beyond overflow)
    scaled = (a - lo) / (hi - lo) * 2**k
    return math.floor(scaled), scaled.denominator != 1


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_stochastic_rounding_extremes(name, data):
    x = data.draw(exact_values(name, sticky=False))
    k = data.draw(st.integers(1, 24))
    # r = 0 never carries: truncation (.satfinite so that overflow reads the same as .rz).
    assert round_exact(x, name, Rounding.RS, random=(0, k), satfinite=True) == round_exact(x, name, Rounding.RZ, satfinite=True)
    # r = 2^k - 1 carries unless the top k discarded bits are all zero.
    top, _ = discarded_top_bits(name, magnitude(x), k)
    away = Rounding.RP if x.sign == 0 else Rounding.RM
    expect = Rounding.RZ if top == 0 else away
    assert round_exact(x, name, Rounding.RS, random=((1 << k) - 1, k), satfinite=True) == round_exact(x, name, expect, satfinite=True)
    # Bits above the k-th random bit are not used.
    r = data.draw(st.integers(0, (1 << k) - 1))
    assert round_exact(x, name, Rounding.RS, random=(r | (0b101 << k), k)) == round_exact(x, name, Rounding.RS, random=(r, k))


@pytest.mark.parametrize("name", ["f16", "bf16", "e4m3", "e2m1", "f32", "ue8m0"])
@given(data=st.data())
def test_stochastic_rounding_is_unbiased(name, data):
    """Over every r in [0, 2^k), the share of results rounded away is the top k discarded bits
    over 2^k, which is the discarded fraction itself when it has at most k bits."""
    x = data.draw(exact_values(name, sticky=False))
    k = data.draw(st.integers(1, 8))
    a = magnitude(x)
    lo, hi, _ = neighbours(name, a)
    # Where rounding away overflows, .satfinite makes both choices MAX_NORM.
    assume(lo is not None and hi is not None and hi <= largest(name))
    truncated = round_exact(x, name, Rounding.RZ, satfinite=True)
    ups = sum(round_exact(x, name, Rounding.RS, random=(r, k), satfinite=True) != truncated for r in range(1 << k))
    top, below = discarded_top_bits(name, a, k)
    assert ups == top
    if not below and lo != hi:
        assert Fraction(ups, 1 << k) == (a - lo) / (hi - lo)


def test_stochastic_rounding_with_fewer_discarded_bits_than_random_bits():
    """f16 from 1 + 2^-11 (one discarded bit, the half): with k = 13 the discarded bits read as
    0b1_0000_0000_0000, so r carries exactly when r >= 2^12."""
    x = ex(1 + Fraction(1, 2**11))
    assert round_exact(x, "f16", Rounding.RS, random=(2**12 - 1, 13)) == 0x3C00
    assert round_exact(x, "f16", Rounding.RS, random=(2**12, 13)) == 0x3C01
    # f32 -> bf16 as cvt.rs.bf16x2.f32 does it: 16 discarded bits, 16 random bits.
    x = decode("f32", 0x3F80_8001)  # 1 + 2^-8 + 2^-23: discarded bits 0x8001
    assert round_exact(x, "bf16", Rounding.RS, random=(0x7FFE, 16)) == 0x3F80
    assert round_exact(x, "bf16", Rounding.RS, random=(0x7FFF, 16)) == 0x3F81


# ---------------------------------------------------------------------------------------------
# Exact operations, rounded once, against MPFR
# ---------------------------------------------------------------------------------------------

HOST = {"f16": ("<e", "<H", 16), "f32": ("<f", "<I", 32), "f64": ("<d", "<Q", 64)}


def host_float(name: str, bits: int) -> float:
    fmt_f, fmt_i, _ = HOST[name]
    return struct.unpack(fmt_f, struct.pack(fmt_i, bits))[0]


def host_bits(name: str, x: float) -> int:
    fmt_f, fmt_i, _ = HOST[name]
    return struct.unpack(fmt_i, struct.pack(fmt_f, x))[0]


def operands(name: str, op: str, rng: random.Random, n: int) -> list[tuple[int, int]]:
    """Finite operand pairs: uniform bit patterns, subnormals, and pairs aimed at results just
    around the subnormal/normal boundary, the smallest subnormal, overflow, and cancellation."""
    fmt = FORMATS[name]
    e_bits, m_bits, width = fmt.exponent_bits, fmt.mantissa_bits, fmt.width
    e_max_field = (1 << e_bits) - 2

    def make(sign, e_field, mantissa):
        return sign << (width - 1) | min(max(e_field, 0), e_max_field) << m_bits | mantissa

    out = []
    while len(out) < n:
        kind = rng.random()
        s1, s2 = rng.getrandbits(1), rng.getrandbits(1)
        m1, m2 = rng.getrandbits(m_bits), rng.getrandbits(m_bits)
        e1 = rng.randint(0, e_max_field)
        if kind < 0.3:
            e2 = rng.randint(0, e_max_field)
        elif kind < 0.4:
            e1, e2 = rng.choice([0, 1]), rng.randint(0, e_max_field)
        else:
            # The result's biased exponent t: near 0 (subnormals), below it, or near the top.
            t = rng.choice([rng.randint(-m_bits - 3, 2), rng.randint(e_max_field - 2, e_max_field + 2), rng.randint(1, e_max_field)])
            bias = fmt.bias
            if op == "div":
                e2 = e1 - t + bias
            elif op == "mul":
                e2 = t + bias - e1
            elif op == "sqrt":
                e1, e2 = 2 * t - bias, 0
            else:  # add: close exponents, often cancelling
                e2 = e1 + rng.randint(-3, 3) if rng.random() < 0.7 else e1 + rng.randint(-m_bits - 4, m_bits + 4)
                if rng.random() < 0.3:
                    s2, e2, m2 = s1 ^ 1, e1, m1 ^ rng.choice([0, 0, 1, 2, 3])
        a, b = make(s1, e1, m1), make(s2, e2, m2)
        if op == "sqrt":
            a &= ~(1 << (width - 1)) if rng.random() < 0.97 else ~0
        out.append((a, b))
    return out


def mpfr_op(op: str, x, y):
    if op == "div":
        return gmpy2.div(x, y)
    if op == "mul":
        return gmpy2.mul(x, y)
    if op == "add":
        return gmpy2.add(x, y)
    return gmpy2.sqrt(x)


def core_op(op: str, name: str, a: Exact, b: Exact, mode: Rounding) -> Exact:
    p = FORMATS[name].precision
    if op == "div":
        return exact_quotient(a, b, p)
    if op == "mul":
        return exact_product(a, b)
    if op == "add":
        return exact_sum(a, b, mode)
    return exact_sqrt(a, p)


def check_against_mpfr(op: str, name: str, seed: int, n: int) -> None:
    rng = random.Random(f"{op}:{name}:{seed}")
    p, emin, emax = MPFR_PARAMS[name]
    failures = []
    for a_bits, b_bits in operands(name, op, rng, n):
        a, b = decode(name, a_bits), decode(name, b_bits)
        if op == "div" and b.significand == 0:
            continue
        if op == "sqrt" and a.sign == 1 and a.significand != 0:
            continue
        for mode in DIRECTED + ([Rounding.RNA] if op != "sqrt" else []):
            got = round_exact(core_op(op, name, a, b, mode), name, mode)
            if mode is Rounding.RNA:
                want = rna_by_mpfr(op, name, a_bits, b_bits)
            else:
                with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=RNDS[mode]):
                    x = gmpy2.mpfr(host_float(name, a_bits))
                    y = gmpy2.mpfr(host_float(name, b_bits))
                    want = host_bits(name, float(mpfr_op(op, x, y)))
            if got != want:
                failures.append((hex(a_bits), hex(b_bits), mode.value, hex(got), hex(want)))
    assert not failures, failures[:10]


def rna_by_mpfr(op: str, name: str, a_bits: int, b_bits: int) -> int:
    """Round to nearest, ties away (MPFR has no such mode): MPFR's result toward zero and away
    from zero, and the exact value as a Fraction to see a tie; otherwise MPFR's nearest."""
    p, emin, emax = MPFR_PARAMS[name]
    fa, fb = host_float(name, a_bits), host_float(name, b_bits)
    results = {}
    for rnd in (gmpy2.RoundToZero, gmpy2.RoundAwayZero, gmpy2.RoundToNearest):
        with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=rnd):
            results[rnd] = mpfr_op(op, gmpy2.mpfr(fa), gmpy2.mpfr(fb))
    toward, away, nearest = results[gmpy2.RoundToZero], results[gmpy2.RoundAwayZero], results[gmpy2.RoundToNearest]
    if toward == away or gmpy2.is_infinite(away):
        return host_bits(name, float(nearest))
    true_value = {"div": lambda x, y: x / y, "mul": lambda x, y: x * y, "add": lambda x, y: x + y}[op](Fraction(fa), Fraction(fb))
    if 2 * true_value == mpfr_fraction(toward) + mpfr_fraction(away):
        return host_bits(name, float(away))
    return host_bits(name, float(nearest))


OPS = ["div", "sqrt", "add", "mul"]
HEAVY_CHUNKS = 10
HEAVY_PER_CHUNK = 10_000


@pytest.mark.parametrize("name", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", OPS)
def test_exact_operation_against_mpfr_smoke(op, name):
    check_against_mpfr(op, name, seed=-1, n=2000)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(HEAVY_CHUNKS))
@pytest.mark.parametrize("name", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", OPS)
def test_exact_operation_against_mpfr(op, name, chunk):
    check_against_mpfr(op, name, seed=chunk, n=HEAVY_PER_CHUNK)


def test_zero_sums_take_the_ieee_sign():
    """§6.3 of IEEE 754 (PTX follows it for add): x + (-x) is +0 except under .rm, where it is
    -0; (-0) + (-0) is -0 in every mode; (+0) + (-0) is +0 except under .rm."""
    x = decode("f32", 0x3FC0_0000)
    for mode in DIRECTED:
        minus = mode is Rounding.RM
        assert round_exact(exact_sum(x, x.negate(), mode), "f32", mode) == (0x8000_0000 if minus else 0)
        assert round_exact(exact_sum(Exact(1, 0), Exact(1, 0), mode), "f32", mode) == 0x8000_0000
        assert round_exact(exact_sum(Exact(0, 0), Exact(1, 0), mode), "f32", mode) == (0x8000_0000 if minus else 0)
        assert round_exact(exact_sum(Exact(0, 0), Exact(0, 0), mode), "f32", mode) == 0


@given(
    a=st.integers(1, 2**80),
    b=st.integers(1, 2**80),
    ea=st.integers(-200, 200),
    eb=st.integers(-200, 200),
    precision=st.sampled_from([2, 4, 11, 24, 53]),
)
def test_quotient_and_root_bracket_the_true_value(a, b, ea, eb, precision):
    """The producers' contract: at least precision + 2 significant bits, and, when sticky, the
    true value lies strictly inside (q, q + 1) * 2^e."""
    true_q = Fraction(a, b) * Fraction(2) ** (ea - eb)
    q = exact_quotient(Exact(0, a, ea), Exact(0, b, eb), precision)
    assert q.significand.bit_length() >= precision + 2
    low, high = Fraction(q.significand) * Fraction(2) ** q.exponent, Fraction(q.significand + 1) * Fraction(2) ** q.exponent
    assert (low < true_q < high) if q.sticky else (low == true_q)
    r = exact_sqrt(Exact(0, a, ea), precision)
    assert r.significand.bit_length() >= precision + 2
    square = Fraction(a) * Fraction(2) ** ea
    low, high = Fraction(r.significand) * Fraction(2) ** r.exponent, Fraction(r.significand + 1) * Fraction(2) ** r.exponent
    assert (low * low < square < high * high) if r.sticky else (low * low == square)


def test_sign_of_zero_quotients_products_and_roots():
    assert exact_quotient(Exact(1, 0), Exact(0, 3), 24) == Exact(1, 0)
    assert exact_quotient(Exact(1, 0), Exact(1, 3), 24) == Exact(0, 0)
    assert exact_product(Exact(1, 0), Exact(0, 5)).sign == 1
    assert exact_sqrt(Exact(1, 0), 24) == Exact(1, 0)
