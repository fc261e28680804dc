"""The spec-level mma set where no addition can round (semantics/mma.py: ``spec_sum``,
``sums_need_no_rounding``, ``error_bound``).

§9.7.14.5.14 "Precision and rounding": "Accumulation of the intermediate values is performed with
at least single precision ... The accumulation order, rounding and handling of subnormal inputs
are unspecified." A rounding of a value the accumulation format holds exactly returns it, so
where every partial sum of every order is representable the set is the exact sum converted into
.dtype; all-zero inputs give zero. Elsewhere the bound is unchanged.

Oracles independent of the code under test: values decoded by numpy / ml_dtypes, Fraction
arithmetic, gmpy2 (MPFR with IEEE emulation) for directed roundings and for sequential IEEE
summations (one allowed implementation per order and rounding direction), brute-force subset sums
for the representability predicate; the sm_90 datapath models (``SM_90.mma_datapaths``, fitted to an
H100) must stay inside the set on random inputs.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import gmpy2
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import mma
from ptxspec.profiles.sm_90 import SM_90
from ptxspec.semantics.results import Interval, contains
from ptxspec.spec.matrix import parse_shape

# ---------------------------------------------------------------------------------------------
# Encodings, decoded by numpy / ml_dtypes
# ---------------------------------------------------------------------------------------------

#: type: (numpy dtype, storage dtype, exponent bits, mantissa bits, low bits ignored)
TYPES = {
    "f16": (np.float16, np.uint16, 5, 10, 0),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 8, 7, 0),
    "tf32": (np.float32, np.uint32, 8, 10, 13),
    "e4m3": (ml_dtypes.float8_e4m3fn, np.uint8, 4, 3, 0),
    "e5m2": (ml_dtypes.float8_e5m2, np.uint8, 5, 2, 0),
    "f32": (np.float32, np.uint32, 8, 23, 0),
    "f64": (np.float64, np.uint64, 11, 52, 0),
}
#: Exponents of the short exact values drawn for each type (well inside its normal range).
EXPONENTS = {"f16": (-10, 10), "bf16": (-30, 30), "tf32": (-30, 30), "e4m3": (-5, 4), "e5m2": (-10, 10), "f32": (-30, 30), "f64": (-60, 60)}
#: Accumulation format by precision: (p, smallest normal exponent, MPFR emin, MPFR emax).
ACCUMULATION = {24: (24, -126, -148, 128), 11: (11, -14, -23, 16), 53: (53, -1022, -1073, 1024)}
DTYPE = {"f32": 24, "f16": 11, "f64": 53}
#: The largest finite value of each accumulation format.
LARGEST = {24: (2 - Fraction(1, 2**23)) * 2**127, 11: Fraction(65504), 53: (2 - Fraction(1, 2**52)) * 2**1023}


def width(t: str) -> int:
    return np.dtype(TYPES[t][1]).itemsize * 8


def value(t: str, bits: int) -> Fraction | None:
    """The element's value, or None for an infinity or NaN."""
    dtype, store, _, _, low = TYPES[t]
    x = np.array([bits & ~((1 << low) - 1)], dtype=store).view(dtype)[0]
    x = float(x)
    return Fraction(x) if np.isfinite(x) else None


def subnormal(t: str, bits: int) -> bool:
    _, _, e, m, low = TYPES[t]
    field = bits >> low
    return (field >> m) & ((1 << e) - 1) == 0 and field & ((1 << m) - 1) != 0


def encode(t: str, v: Fraction) -> int:
    """The bits of ``v`` in ``t`` when it is exact there, else +0."""
    dtype, store, _, _, _ = TYPES[t]
    x = np.array([float(v)], dtype=np.float64).astype(dtype)
    bits = int(x.view(store)[0])
    return bits if value(t, bits) == v else 0


def zero(t: str, negative: bool = False) -> int:
    return (1 << (width(t) - 1)) if negative else 0


def mpfr_round(x: Fraction, fmt: str, mode) -> Fraction | None:
    """x rounded into f32/f16/f64 by MPFR with IEEE emulation (None: an infinity)."""
    p, _, emin, emax = ACCUMULATION[DTYPE[fmt]]
    with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=mode):
        y = gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator))
    return None if gmpy2.is_infinite(y) else Fraction(*y.as_integer_ratio())


def interval_values(r: Interval) -> tuple[Fraction | None, Fraction | None]:
    t = r.format.name
    return value(t, r.low), value(t, r.high)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def short_value(draw, t: str, base: int) -> int:
    """A short exact value near 2^base: up to 3 significant bits, sign random."""
    m = draw(st.integers(1, 7))
    e = base + draw(st.integers(0, 2))
    sign = -1 if draw(st.booleans()) else 1
    return encode(t, sign * m * Fraction(2) ** e)


def element(draw, t: str, mode: str, base: int) -> int:
    if mode == "zeros":
        return zero(t, draw(st.booleans()))
    if mode == "random":
        return draw(st.integers(0, (1 << width(t)) - 1))
    kind = draw(st.sampled_from(("zero", "short", "short", "short") if mode == "short" else ("zero", "short", "random")))
    if kind == "zero":
        return zero(t, draw(st.booleans()))
    if kind == "random":
        return draw(st.integers(0, (1 << width(t)) - 1))
    return short_value(draw, t, base)


@st.composite
def dot_case(draw, atype: str, btype: str, ctype: str, k: int):
    """(a, b, c) of one element of D: all zeros (signed), one non-zero product, short exact values
    on a narrow exponent range (where the exact path applies), a mix, or random encodings."""
    mode = draw(st.sampled_from(("zeros", "one", "short", "mixed", "random")))
    base = {t: draw(st.integers(*EXPONENTS[t])) for t in {atype, btype, ctype}}
    if mode == "one":
        a = [zero(atype, draw(st.booleans())) for _ in range(k)]
        b = [draw(st.sampled_from((zero(btype), short_value(draw, btype, base[btype])))) for _ in range(k)]
        i = draw(st.integers(0, k - 1))
        a[i], b[i] = short_value(draw, atype, base[atype]), short_value(draw, btype, base[btype])
        c = draw(st.sampled_from((zero(ctype), zero(ctype, True), short_value(draw, ctype, base[ctype]))))
        return a, b, c
    a = [element(draw, atype, mode, base[atype]) for _ in range(k)]
    b = [element(draw, btype, mode, base[btype]) for _ in range(k)]
    return a, b, element(draw, ctype, mode, base[ctype])


def addends(atype: str, btype: str, ctype: str, a, b, c) -> tuple[list[Fraction], list[bool]] | None:
    """The exact products and c, and whether each involves a subnormal input (None: a NaN or infinity)."""
    av, bv, cv = [value(atype, x) for x in a], [value(btype, y) for y in b], value(ctype, c)
    if None in av or None in bv or cv is None:
        return None
    values = [x * y for x, y in zip(av, bv)] + [cv]
    sub = [subnormal(atype, x) or subnormal(btype, y) for x, y in zip(a, b)] + [subnormal(ctype, c)]
    return values, sub


# ---------------------------------------------------------------------------------------------
# The bound, re-typed from the docstrings
# ---------------------------------------------------------------------------------------------


def no_rounding(values: list[Fraction], p: int, emin: int) -> bool:
    """Every non-zero addend a multiple of 2^G, G >= emin, and the magnitudes' sum below 2^(G + p)."""
    live = [v for v in values if v]
    if not live:
        return True
    G = min(n - d for v in live for n, d in [(_twos(v.numerator), _twos(v.denominator))])
    return G >= emin and sum(abs(v) for v in live) < Fraction(2) ** (G + p)


def _twos(n: int) -> int:
    n, count = abs(n), 0
    while n % 2 == 0:
        n, count = n // 2, count + 1
    return count


def expected_bound(values: list[Fraction], sub: list[bool], p: int, emin: int) -> Fraction:
    """0 where no addition can round (and no addend involves a subnormal input); else
    gamma_m * T + m * 2^emin + T_sub with gamma_m bounded by m*u*(1 + 2*m*u), u = 2^(1-p)."""
    T = sum(abs(v) for v in values)
    T_sub = sum(abs(v) for v, s in zip(values, sub) if s and v)
    if T == 0 or (T_sub == 0 and no_rounding(values, p, emin)):
        return Fraction(0)
    m = len(values) - 1
    mu = Fraction(m, 2 ** (p - 1))
    return mu * (1 + 2 * mu) * T + m * Fraction(2) ** emin + T_sub


COMBOS = [
    ("f16", "f16", "f32", "f32", 16),
    ("f16", "f16", "f16", "f16", 16),
    ("f16", "f16", "f32", "f16", 16),
    ("bf16", "bf16", "f32", "f32", 16),
    ("tf32", "tf32", "f32", "f32", 8),
    ("e4m3", "e5m2", "f32", "f32", 32),
    ("e5m2", "e5m2", "f16", "f16", 32),
    ("f64", "f64", "f64", "f64", 4),
]


# ---------------------------------------------------------------------------------------------
# All-zero inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("atype,btype,ctype,dtype,k", COMBOS, ids=lambda x: str(x))
@pytest.mark.parametrize("signs", ["positive", "negative", "mixed", "subnormal-times-zero"])
def test_all_zero_inputs_give_exactly_zero(atype, btype, ctype, dtype, k, signs):
    """sum_k 0 * 0 + 0 = 0 with no rounding: the set is the zero (either sign; the manual leaves
    the rounding unspecified, and sm_90 gives +0 for a sum of negative zeros, docs/mma.rst) and
    nothing else -- not the +-m * 2^emin the underflow term gave."""
    neg = {"positive": [False] * (k + 1), "negative": [True] * (k + 1), "mixed": [i % 3 == 0 for i in range(k + 1)]}.get(signs, [False] * (k + 1))
    a = [zero(atype, s) for s in neg[:k]]
    b = [zero(btype, not s) for s in neg[:k]]
    if signs == "subnormal-times-zero":
        a = [1] * k  # the smallest subnormal: read as itself or as zero, its product with 0 is 0
    c = zero(ctype, neg[k])
    got = mma.spec_dot(atype, btype, ctype, dtype, a, b, c)
    assert isinstance(got, Interval) and interval_values(got) == (0, 0)
    w = width(dtype)
    assert contains(got, 0) and contains(got, 1 << (w - 1))
    for bits in (1, (1 << (w - 1)) | 1, encode(dtype, Fraction(2) ** -14)):
        assert not contains(got, bits)
    if atype == "f64":
        assert mma.spec_dot_f64(a, b, c) == got


def test_one_representable_product_is_exact_and_one_unrepresentable_is_not():
    """1.5 * 1.25 alone (f16, f32 accumulation) needs no rounding: the set is {1.875}. In an .f16
    accumulation (11 bits) (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 must be rounded: both neighbours."""
    one = [0] * 15
    got = mma.spec_dot("f16", "f16", "f32", "f32", [encode("f16", Fraction(3, 2))] + one, [encode("f16", Fraction(5, 4))] + one, 0)
    assert interval_values(got) == (Fraction(15, 8), Fraction(15, 8))
    x = encode("f16", 1 + Fraction(1, 1024))
    got = mma.spec_dot("f16", "f16", "f16", "f16", [x] + one, [x] + one, 0)
    low, high = interval_values(got)
    assert low <= 1 + Fraction(1, 512) and high >= 1 + Fraction(1, 512) + Fraction(1, 1024)


def test_a_subnormal_input_keeps_its_slack():
    """ "handling of subnormal inputs [is] unspecified": a product with a subnormal input may be
    read as zero, even when it is the only addend."""
    tiny = 1  # f16 2^-24
    row = [tiny] + [0] * 15
    got = mma.spec_dot("f16", "f16", "f32", "f32", row, [encode("f16", Fraction(1))] + [0] * 15, 0)
    assert contains(got, 0) and contains(got, int(np.array([2.0**-24], dtype=np.float32).view(np.uint32)[0]))


# ---------------------------------------------------------------------------------------------
# The set against the re-typed bound, the predicate against brute force
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("atype,btype,ctype,dtype,k", COMBOS, ids=lambda x: str(x))
@settings(max_examples=60)
@given(data=st.data())
def test_set_is_the_exact_sum_or_the_unchanged_bound(atype, btype, ctype, dtype, k, data):
    a, b, c = data.draw(dot_case(atype, btype, ctype, k))
    got = mma.spec_dot(atype, btype, ctype, dtype, a, b, c)
    found = addends(atype, btype, ctype, a, b, c)
    if found is None:
        return  # NaN and infinity rules: tests/test_mma.py
    values, sub = found
    p = mma.accumulation_precision(atype, ctype, dtype)
    _, emin, _, _ = ACCUMULATION[p]
    T = sum(abs(v) for v in values)
    if T > LARGEST[p]:
        assert got.nan  # a partial sum may overflow: everything is allowed
        return
    bound = expected_bound(values, sub, p, emin)
    T_sub = sum(abs(v) for v, s in zip(values, sub) if s)
    assert mma.error_bound(p, len(values), T, T_sub, emin, addends=values) == bound
    S = sum(values)
    low, high = mpfr_round(S - bound, dtype, gmpy2.RoundDown), mpfr_round(S + bound, dtype, gmpy2.RoundUp)
    assert interval_values(got) == (low, high)


@settings(max_examples=300)
@given(
    p=st.sampled_from((11, 24, 53)),
    values=st.lists(st.builds(lambda m, e: m * Fraction(2) ** e, st.integers(-40, 40), st.integers(-30, 10)), min_size=1, max_size=6),
    emin=st.integers(-40, 0),
)
def test_no_rounding_means_every_subset_sum_is_representable(p, values, emin):
    """sums_need_no_rounding: then every partial sum of every order (a subset sum) is a normal
    p-bit number from 2^emin on, or zero -- checked by MPFR over every subset."""
    claim = mma.sums_need_no_rounding(values, p, emin)
    assert claim == no_rounding(values, p, emin)
    if not claim:
        return
    for r in range(1, len(values) + 1):
        for subset in itertools.combinations(values, r):
            s = sum(subset)
            with gmpy2.context(precision=p, emin=-(10**6), emax=10**6):
                assert Fraction(*gmpy2.mpfr(gmpy2.mpq(s.numerator, s.denominator)).as_integer_ratio()) == s
            assert s == 0 or abs(s) >= Fraction(2) ** emin


# ---------------------------------------------------------------------------------------------
# Implementations the manual allows, and the sm_90 models, lie in the set
# ---------------------------------------------------------------------------------------------

MODES = (gmpy2.RoundToNearest, gmpy2.RoundToZero, gmpy2.RoundUp, gmpy2.RoundDown)


def sequential(values: list[Fraction], p: int, dtype: str, mode) -> Fraction | None:
    """An IEEE accumulator of p bits: one rounding per addition, then the conversion into dtype."""
    acc = {24: "f32", 11: "f16", 53: "f64"}[p]
    s = Fraction(0)
    for v in values:
        s = mpfr_round(s + v, acc, mode)
        if s is None:
            return None
    return mpfr_round(s, dtype, mode)


@pytest.mark.parametrize("atype,btype,ctype,dtype,k", COMBOS, ids=lambda x: str(x))
@settings(max_examples=40)
@given(data=st.data())
def test_sequential_ieee_sums_lie_in_the_set(atype, btype, ctype, dtype, k, data):
    a, b, c = data.draw(dot_case(atype, btype, ctype, k))
    found = addends(atype, btype, ctype, a, b, c)
    if found is None:
        return
    values, _ = found
    got = mma.spec_dot(atype, btype, ctype, dtype, a, b, c)
    p = mma.accumulation_precision(atype, ctype, dtype)
    for order in (values, values[::-1], values[-1:] + values[:-1]):
        for mode in MODES:
            r = sequential(order, p, dtype, mode)
            if r is not None:  # an overflowing partial sum (T beyond range): every result is allowed
                assert contains(got, encode(dtype, r)), (mode, r, got.describe())


def _within_guarantee(key) -> bool:
    """Not fp8 with an .f16 accumulator: sm_90 accumulates those in about f16 precision, a
    recorded deviation from "at least single precision" (tests/test_mma.py KNOWN_DEVIATIONS)."""
    return not (key.atype in ("e4m3", "e5m2") and key.dtype == "f16")


@pytest.mark.parametrize("key", [k for k in SM_90.mma_datapaths if _within_guarantee(k)], ids=lambda k: "-".join(k.parts()))
@settings(max_examples=50)
@given(data=st.data())
def test_measured_models_lie_in_the_set(key, data):
    atype, btype, ctype, dtype = key.types
    model = SM_90.mma_datapaths[key]
    # A sparse key: mma.sp sums the K/2 products of the stored half of A's row.
    sparse = key.sparse
    k = parse_shape(key.shape)[2] // (2 if sparse else 1)
    a, b, c = data.draw(dot_case(atype, btype, ctype, k))
    got = mma.datapath_dot(model, atype, btype, ctype, dtype, a, b, c)
    assert contains(mma.spec_dot(atype, btype, ctype, dtype, a, b, c), got), (model.describe(), hex(got))
