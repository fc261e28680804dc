"""The batched paths of :mod:`ptxspec.semantics.batch` against independent oracles, against the
readable one-at-a-time semantics (bit for bit, and the open NaN lanes too), and against sm_90
silicon.

Oracles: gmpy2/MPFR with IEEE binary32/binary16 emulation (precision, emin, emax, subnormalize)
for fma.rn.f32 and cvt.rn.f16.f32; ml_dtypes ``float8_e4m3fn`` after clamping to +-448 for
cvt.rn.satfinite.e4m3x2.f32; the sm_90 recordings in conformance/data/sm_90/.

Every agreement test covers the input classes: +-0, +-inf, NaNs with payloads (quiet and
signalling, both signs), subnormals, rounding boundaries (exact ties and one ulp either side,
including ties hidden below binary64 precision), overflow, and seeded random bit patterns.
"""

from __future__ import annotations

import functools
import os
import struct
import subprocess
import sys
from pathlib import Path

import gmpy2
import ml_dtypes
import numpy as np
import pytest

from ptxspec.semantics import batch
from ptxspec.semantics.batch import BatchResult, cvt_rn_f16_f32, cvt_rn_satfinite_e4m3x2_f32, evaluate_batch, fma_rn_f32
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.semantics.numerics import canonical_nan
from ptxspec.semantics.results import AnyNaN, Lanes, OneOf
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS

REPO = Path(__file__).resolve().parent.parent
PROFILES = ("spec", "sm_90")

# ---------------------------------------------------------------------------------------------
# Bit helpers
# ---------------------------------------------------------------------------------------------


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_bits(x: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    assert f32(bits) == x or x != x, f"{x!r} is not a binary32 value"
    return bits


def u32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.uint64).astype(np.uint32)


def is_nan32(bits: np.ndarray) -> np.ndarray:
    return (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)


# ---------------------------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------------------------

#: IEEE binary32 in MPFR: 24 bits, smallest subnormal 2^-149 = 0.5 * 2^-148, largest 2^128 (1 - 2^-24).
BINARY32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True, round=gmpy2.RoundToNearest)
#: IEEE binary16: 11 bits, smallest subnormal 2^-24 = 0.5 * 2^-23, largest 65504 = 2^16 (1 - 2^-11).
BINARY16 = gmpy2.context(precision=11, emin=-23, emax=16, subnormalize=True, round=gmpy2.RoundToNearest)


def mpfr_fma_f32(a: int, b: int, c: int) -> int | None:
    """fma rounded once to binary32 by MPFR; None for a NaN result."""
    with gmpy2.context(BINARY32):
        r = gmpy2.fma(gmpy2.mpfr(f32(a)), gmpy2.mpfr(f32(b)), gmpy2.mpfr(f32(c)))
    if gmpy2.is_nan(r):
        return None
    return f32_bits(float(r))


def mpfr_f16(a: int) -> int | None:
    """The binary32 value ``a`` rounded once to binary16 by MPFR (bits); None for NaN."""
    x = f32(a)
    if x != x:
        return None
    with gmpy2.context(BINARY16):
        r = gmpy2.mpfr(x)
    return int(np.float16(float(r)).view(np.uint16))  # r is a binary16 value: this cast is exact


def mldtypes_e4m3(x: np.ndarray) -> np.ndarray:
    """ml_dtypes' float8_e4m3fn conversion (rn) after clamping to +-MAX_NORM, which is .satfinite;
    NaN lanes are whatever ml_dtypes makes of them (the callers mask them)."""
    with np.errstate(all="ignore"):
        return np.clip(x.view(np.float32), -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


def test_oracles_know_ieee_754():
    """The oracles themselves on values whose answers follow from IEEE 754 by hand."""
    one, two = f32_bits(1.0), f32_bits(2.0)
    assert mpfr_fma_f32(one, two, 0) == f32_bits(2.0)
    assert mpfr_fma_f32(one, one, 0xBF800000) == 0  # 1*1 - 1 = +0 under rn
    assert mpfr_fma_f32(0x80000000, one, 0x80000000) == 0x80000000  # -0 + -0 = -0
    assert mpfr_fma_f32(1, 0x3F000000, 0) == 0  # 2^-150: a tie between 0 and 2^-149, to even 0
    assert mpfr_fma_f32(1, 0x3F400000, 0) == 1  # 0.75 * 2^-149 -> 2^-149
    assert mpfr_fma_f32(0x7F7FFFFF, two, 0) == 0x7F800000  # overflow
    assert mpfr_fma_f32(0x7F800000, 0, one) is None  # inf * 0
    assert mpfr_f16(f32_bits(65504.0)) == 0x7BFF and mpfr_f16(f32_bits(65520.0)) == 0x7C00
    assert mpfr_f16(f32_bits(2.0**-25)) == 0 and mpfr_f16(f32_bits(3 * 2.0**-26)) == 1
    assert mpfr_f16(f32_bits(1.0 + 2.0**-11)) == 0x3C00 and mpfr_f16(f32_bits(1.0 + 3 * 2.0**-11)) == 0x3C02
    e = mldtypes_e4m3(u32([f32_bits(v) for v in (1.0, 448.0, 460.0, 1e9, -1e9, 2.0**-10, 3 * 2.0**-11, 2.0**-9 * 1.5)]))
    assert e.tolist() == [0x38, 0x7E, 0x7E, 0x7E, 0xFE, 0x00, 0x01, 0x02]


# ---------------------------------------------------------------------------------------------
# Inputs by class
# ---------------------------------------------------------------------------------------------

ZEROS = [0x00000000, 0x80000000]
INFINITIES = [0x7F800000, 0xFF800000]
#: Quiet and signalling NaNs of both signs, with and without payload.
NANS = [0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFD54321, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0xFFFFFFFF]
SUBNORMALS = [0x00000001, 0x80000001, 0x00000002, 0x007FFFFF, 0x807FFFFF, 0x00400000]
NORMALS = [
    0x00800000,
    0x80800000,  # smallest normal
    0x3F800000,
    0xBF800000,
    0x3F800001,
    0x3F7FFFFF,
    0xBF7FFFFF,  # 1 and its neighbours
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x7F000000,  # largest finite, 2^127
    0x33800000,
    0x34000000,
    0x1F800000,
    0x5F800000,  # 2^-24, 2^-23, 2^-64, 2^64
    0x40400000,
    0x3EAAAAAB,
    0xC0490FDB,  # 3, 1/3, -pi
]
SPECIAL_F32 = ZEROS + INFINITIES + NANS[:4] + NANS[4:6] + SUBNORMALS[:4] + NORMALS


def random_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Half uniform bit patterns, half with exponents near 1 so that products and sums interact."""
    uniform = rng.integers(0, 1 << 32, n - n // 2, dtype=np.uint64).astype(np.uint32)
    exponent = rng.integers(127 - 30, 127 + 30, n // 2, dtype=np.uint64).astype(np.uint32)
    near = (
        (rng.integers(0, 2, n // 2, dtype=np.uint64).astype(np.uint32) << np.uint32(31))
        | (exponent << np.uint32(23))
        | rng.integers(0, 1 << 23, n // 2, dtype=np.uint64).astype(np.uint32)
    )
    out = np.concatenate([uniform, near])
    rng.shuffle(out)
    return out


def special_triples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every triple of SPECIAL_F32 (31^3 = 29791): zeros, infinities, NaNs, subnormals, extremes."""
    s = u32(SPECIAL_F32)
    a, b, c = np.meshgrid(s, s, s, indexing="ij")
    return a.ravel(), b.ravel(), c.ravel()


def _f32_of_int_scaled(m: int, e: int) -> int:
    """Bits of m * 2^e, which must be an exact binary32 value."""
    import math

    return f32_bits(math.ldexp(m, e))


def fma_tie_triples(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """c = x, a * b = +-(half an ulp of x), +-(1 - 2^-24) or (1 + 2^-23) times it: exact ties of
    both parities and one hair either side, over the whole exponent range (subnormal x, and x the
    largest finite value, whose upper tie overflows)."""
    a_out, b_out, c_out = [], [], []
    for _ in range(n):
        field = int(rng.integers(0, 255))
        x = (int(rng.integers(0, 2)) << 31) | (field << 23) | int(rng.integers(0, 1 << 23))
        if rng.random() < 0.05:
            x = 0x7F7FFFFF | (x & 0x80000000)
        k = max(field, 1) - 127 - 24  # half an ulp of x is 2^k
        scale, factor = [(1, 0), (0xFFFFFF, -24), (0x800001, -23)][int(rng.integers(0, 3))]
        i = k // 2
        a = _f32_of_int_scaled(1, i) | (int(rng.integers(0, 2)) << 31)
        b = _f32_of_int_scaled(scale, k - i + factor) | (int(rng.integers(0, 2)) << 31)
        a_out.append(a), b_out.append(b), c_out.append(x)
    return u32(a_out), u32(b_out), u32(c_out)


def fma_hidden_tie_triples(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ties hidden below binary64 precision: a * b = (2^47 + k) 2^(h - 47) with 0 < |k| < 2^18 and
    2^h half an ulp of c. p + c lies within 2^-29 ulp of a binary32 midpoint, so rounding p + c to
    binary64 first lands exactly on the midpoint and a second rounding picks the wrong side half
    of the time (see test_hidden_ties_defeat_naive_double_rounding)."""
    a_out, b_out, c_out = [], [], []
    while len(a_out) < n:
        u = int(rng.integers(1 << 23, 1 << 24))
        v = ((1 << 47) + u // 2) // u
        k = u * v - (1 << 47)
        if not (0 < abs(k) < (1 << 18)) or v >= (1 << 24):
            continue
        field = int(rng.integers(1, 254)) if rng.random() < 0.8 else int(rng.integers(0, 2))
        sign = int(rng.integers(0, 2)) << 31
        x = sign | (field << 23) | int(rng.integers(0, 1 << 23))
        h = max(field, 1) - 127 - 24
        # Split 2^(h - 47) between a = u 2^sa and b = v 2^sb so that both stay normal.
        sa = (h - 47) // 2
        sb = h - 47 - sa
        a = _f32_of_int_scaled(u, sa)
        b = _f32_of_int_scaled(v, sb)
        # p has the sign of c: the tie lies on the far side of c from zero.
        a_out.append(a | sign), b_out.append(b), c_out.append(x)
    return u32(a_out), u32(b_out), u32(c_out)


def fma_cancellation_triples(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """c = -(a * b rounded to binary32) give or take a few ulps: the result is the tail of the
    exact product, which only an fma keeps."""
    a = random_f32(rng, n)
    b = random_f32(rng, n)
    with np.errstate(all="ignore"):
        p = (a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)).astype(np.float32)
    c = (-p).view(np.uint32) + rng.integers(-2, 3, n).astype(np.int64).astype(np.uint32)
    return a, b, c


def f16_boundaries() -> np.ndarray:
    """For every pair of neighbouring binary16 values (and 65504 with 65536, the overflow
    threshold), their midpoint and the binary32 values one ulp either side, both signs; plus the
    binary32 subnormals' neighbourhood and every input class."""
    h = np.arange(0, 0x7C00, dtype=np.uint16)
    low = h.view(np.float16).astype(np.float64)
    high = np.append(low[1:], 65536.0)
    mid = ((low + high) / 2).astype(np.float32).view(np.uint32)  # exact: 12 bits suffice
    points = np.concatenate([mid, mid - np.uint32(1), mid + np.uint32(1), low.astype(np.float32).view(np.uint32)])
    points = np.concatenate([points, points | np.uint32(0x80000000)])
    return np.concatenate([points, u32(ZEROS + INFINITIES + NANS + SUBNORMALS + NORMALS)])


def e4m3_boundaries() -> np.ndarray:
    """Midpoints of neighbouring e4m3 values (0 .. 448, and 448 with 480) and one binary32 ulp
    either side, both signs; values beyond 448 and every input class."""
    e = np.arange(0, 0x7F, dtype=np.uint8)
    low = e.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    high = np.append(low[1:], 480.0)
    mid = ((low + high) / 2).astype(np.float32).view(np.uint32)
    beyond = u32([f32_bits(v) for v in (449.0, 464.0, 480.0, 2.0**100)] + [0x43E7FFFF, 0x43E80001, 0x43DFFFFF, 0x43E00001])
    points = np.concatenate([mid, mid - np.uint32(1), mid + np.uint32(1), low.astype(np.float32).view(np.uint32), beyond])
    points = np.concatenate([points, points | np.uint32(0x80000000)])
    return np.concatenate([points, u32(ZEROS + INFINITIES + NANS + SUBNORMALS + NORMALS)])


# ---------------------------------------------------------------------------------------------
# fma.rn.f32 against MPFR
# ---------------------------------------------------------------------------------------------


def assert_fma_matches_mpfr(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    got = fma_rn_f32(a, b, c, "spec")
    open_ = got.any_nan if got.any_nan is not None else np.zeros(len(got), dtype=bool)
    bad = []
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        want = mpfr_fma_f32(x, y, z)
        ok = bool(open_[i]) if want is None else (int(got.bits[i]) == want and not open_[i])
        if not ok:
            bad.append(f"fma({x:#010x}, {y:#010x}, {z:#010x}) = {int(got.bits[i]):#010x}, MPFR {want if want is None else hex(want)}")
            if len(bad) >= 5:
                break
    assert not bad, "\n".join(bad)


def test_fma_specials_against_mpfr():
    assert_fma_matches_mpfr(*special_triples())


def test_fma_ties_against_mpfr():
    rng = np.random.default_rng(11)
    assert_fma_matches_mpfr(*fma_tie_triples(rng, 6000))
    assert_fma_matches_mpfr(*fma_hidden_tie_triples(rng, 3000))


def test_fma_random_against_mpfr():
    rng = np.random.default_rng(12)
    assert_fma_matches_mpfr(random_f32(rng, 20000), random_f32(rng, 20000), random_f32(rng, 20000))
    assert_fma_matches_mpfr(*fma_cancellation_triples(rng, 10000))


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(8))
def test_fma_random_against_mpfr_heavy(chunk):
    rng = np.random.default_rng(1000 + chunk)
    n = 125_000
    assert_fma_matches_mpfr(random_f32(rng, n), random_f32(rng, n), random_f32(rng, n))
    assert_fma_matches_mpfr(*fma_cancellation_triples(rng, n // 5))
    assert_fma_matches_mpfr(*fma_hidden_tie_triples(rng, n // 10))


def test_hidden_ties_defeat_naive_double_rounding():
    """The hidden-tie inputs do discriminate: p + c rounded to binary64 and then to binary32 (two
    roundings) is wrong on many of them; the batched path (round-to-odd) is right on all."""
    a, b, c = fma_hidden_tie_triples(np.random.default_rng(13), 400)
    naive = (
        (a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64) + c.view(np.float32).astype(np.float64))
        .astype(np.float32)
        .view(np.uint32)
    )
    want = np.array([mpfr_fma_f32(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())], dtype=np.uint32)
    assert np.count_nonzero(naive != want) > 100
    assert np.array_equal(fma_rn_f32(a, b, c).bits, want)


# ---------------------------------------------------------------------------------------------
# cvt.rn.f16.f32 against MPFR (and, exhaustively per binade, numpy's binary64 -> binary16)
# ---------------------------------------------------------------------------------------------


def assert_f16_matches_mpfr(a: np.ndarray) -> None:
    got = cvt_rn_f16_f32(a, "sm_90")
    nan = is_nan32(a)
    assert np.all(got.bits[nan] == 0x7FFF)
    want = np.array([mpfr_f16(x) or 0 for x in a[~nan].tolist()], dtype=np.uint16)
    bad = np.flatnonzero(got.bits[~nan] != want)
    assert not bad.size, [(hex(int(a[~nan][i])), hex(int(got.bits[~nan][i])), hex(int(want[i]))) for i in bad[:5]]


def test_f16_boundaries_against_mpfr():
    assert_f16_matches_mpfr(f16_boundaries())


def test_f16_random_against_mpfr():
    assert_f16_matches_mpfr(random_f32(np.random.default_rng(21), 50000))


#: Binary32 exponent fields whose values round to something other than 0 or infinity in binary16.
F16_BINADES = list(range(127 - 26, 127 + 17))


@pytest.mark.heavy
@pytest.mark.parametrize("field", F16_BINADES)
def test_f16_exhaustive_binade(field):
    """Every binary32 of this binade, both signs, against numpy's binary64 -> binary16 conversion
    (a separate routine from the binary32 one the batched path uses; binary32 -> binary64 is
    exact)."""
    for start in range(0, 1 << 23, 1 << 21):
        mantissa = np.arange(start, start + (1 << 21), dtype=np.uint32)
        a = np.concatenate([(np.uint32(field) << np.uint32(23)) | mantissa, (np.uint32(256 + field) << np.uint32(23)) | mantissa])
        with np.errstate(all="ignore"):
            want = a.view(np.float32).astype(np.float64).astype(np.float16).view(np.uint16)
        got = cvt_rn_f16_f32(a, "spec")
        assert got.any_nan is None
        assert np.array_equal(got.bits, want)


# ---------------------------------------------------------------------------------------------
# cvt.rn.satfinite.e4m3x2.f32 against ml_dtypes
# ---------------------------------------------------------------------------------------------


def assert_e4m3x2_matches_mldtypes(a: np.ndarray, b: np.ndarray) -> None:
    got = cvt_rn_satfinite_e4m3x2_f32(a, b, "sm_90")
    for lane, x in ((0, a), (1, b)):
        byte = (got.bits >> np.uint16(8 * (1 - lane))).astype(np.uint8)
        nan = is_nan32(x)
        # "If the input value is NaN, the result is a NaN of the specified destination format";
        # sm_90 writes 0x7f whatever the sign.
        assert np.all(byte[nan] == 0x7F)
        want = mldtypes_e4m3(x)
        bad = np.flatnonzero((byte != want) & ~nan)
        assert not bad.size, [(lane, hex(int(x[i])), hex(int(byte[i])), hex(int(want[i]))) for i in bad[:5]]


def test_e4m3x2_boundaries_against_mldtypes():
    x = e4m3_boundaries()
    assert_e4m3x2_matches_mldtypes(x, x[::-1].copy())


def test_e4m3x2_random_against_mldtypes():
    rng = np.random.default_rng(31)
    assert_e4m3x2_matches_mldtypes(random_f32(rng, 400_000), random_f32(rng, 400_000))


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(64))
def test_e4m3_exhaustive(chunk):
    """All 2^32 binary32 inputs over the 64 chunks, 2^26 per chunk, one half in each lane."""
    for start in range(chunk << 26, (chunk + 1) << 26, 1 << 22):
        x = np.arange(start, start + (1 << 22), dtype=np.uint64).astype(np.uint32)
        assert_e4m3x2_matches_mldtypes(x[: 1 << 21], x[1 << 21 :])


def test_e4m3x2_packs_a_high_b_low():
    """d[15:8] = convert(a); d[7:0] = convert(b) (§9.7.9.21)."""
    r = cvt_rn_satfinite_e4m3x2_f32(u32([f32_bits(1.0)]), u32([f32_bits(-2.0)]), "spec")
    assert int(r.bits[0]) == 0x38C0 and r.any_nan is None


# ---------------------------------------------------------------------------------------------
# Agreement with the readable one-at-a-time semantics
# ---------------------------------------------------------------------------------------------


def assert_agrees_with_scalar(form_text: str, sources: list[np.ndarray], profile: str) -> None:
    """Element by element, the batched result equals the scalar one: the same bits, and the same
    open set (AnyNaN, or Lanes holding AnyNaN) where the scalar result is a set."""
    form = as_form(form_text)
    assert batch.has_fast_path(form), "the agreement would be trivial: evaluate_batch would loop the scalar semantics"
    got = evaluate_batch(form, sources, profile)
    assert isinstance(got, BatchResult) and len(got) == len(sources[0])
    columns = [s.tolist() for s in sources]
    bad = []
    for i in range(len(got)):
        (want,) = evaluate(form, [col[i] for col in columns], profile)
        if got.result(i) != want:
            bad.append(f"{form_text} {[hex(col[i]) for col in columns]}: batched {got.result(i)!r}, scalar {want!r}")
            if len(bad) >= 5:
                break
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("profile", PROFILES)
def test_fma_agrees_with_scalar_on_specials(profile):
    assert_agrees_with_scalar("fma.rn.f32", list(special_triples()), profile)


@pytest.mark.parametrize("profile", PROFILES)
def test_fma_agrees_with_scalar_on_ties_and_random(profile):
    rng = np.random.default_rng(41)
    parts = [fma_tie_triples(rng, 1500), fma_hidden_tie_triples(rng, 700), fma_cancellation_triples(rng, 1500)]
    parts.append((random_f32(rng, 3000), random_f32(rng, 3000), random_f32(rng, 3000)))
    sources = [np.concatenate([p[k] for p in parts]) for k in range(3)]
    assert_agrees_with_scalar("fma.rn.f32", sources, profile)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(10))
def test_fma_agrees_with_scalar_heavy(chunk):
    rng = np.random.default_rng(2000 + chunk)
    parts = [
        (random_f32(rng, 12000), random_f32(rng, 12000), random_f32(rng, 12000)),
        fma_tie_triples(rng, 2000),
        fma_hidden_tie_triples(rng, 1000),
        fma_cancellation_triples(rng, 3000),
    ]
    sources = [np.concatenate([p[k] for p in parts]) for k in range(3)]
    assert_agrees_with_scalar("fma.rn.f32", sources, PROFILES[chunk % 2])


@pytest.mark.parametrize("profile", PROFILES)
def test_cvt_f16_agrees_with_scalar(profile):
    rng = np.random.default_rng(51)
    boundaries = f16_boundaries()
    picked = np.concatenate([boundaries[-60:], rng.choice(boundaries, 4000, replace=False), random_f32(rng, 4000)])
    assert_agrees_with_scalar("cvt.rn.f16.f32", [picked], profile)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(10))
def test_cvt_f16_agrees_with_scalar_heavy(chunk):
    rng = np.random.default_rng(3000 + chunk)
    boundaries = f16_boundaries()
    picked = np.concatenate([boundaries[chunk::10], random_f32(rng, 20000)])
    assert_agrees_with_scalar("cvt.rn.f16.f32", [picked], PROFILES[chunk % 2])


@pytest.mark.parametrize("profile", PROFILES)
def test_cvt_e4m3x2_agrees_with_scalar(profile):
    rng = np.random.default_rng(61)
    x = e4m3_boundaries()
    a = np.concatenate([x, random_f32(rng, 3000)])
    b = np.concatenate([rng.permutation(x), random_f32(rng, 3000)])
    assert_agrees_with_scalar("cvt.rn.satfinite.e4m3x2.f32", [a, b], profile)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(10))
def test_cvt_e4m3x2_agrees_with_scalar_heavy(chunk):
    rng = np.random.default_rng(4000 + chunk)
    a, b = random_f32(rng, 20000), random_f32(rng, 20000)
    assert_agrees_with_scalar("cvt.rn.satfinite.e4m3x2.f32", [a, b], PROFILES[chunk % 2])


# ---------------------------------------------------------------------------------------------
# add, sub, mul .rn{.ftz}{.sat}.{f16, f16x2}
# ---------------------------------------------------------------------------------------------


def mpfr_f16_of_f64(x: float) -> int | None:
    """The binary64 value ``x`` rounded once to binary16 by MPFR (bits); None for NaN."""
    if x != x:
        return None
    with gmpy2.context(BINARY16):
        r = gmpy2.mpfr(x)
    return int(np.float16(float(r)).view(np.uint16))  # r is a binary16 value: this cast is exact


def f64_around_f16_midpoints() -> np.ndarray:
    """Every midpoint of neighbouring binary16 values (subnormal, normal, and 65504 with 65536,
    the overflow threshold), the binary64 values one and two ulps either side, the binary16
    values themselves, and halfway between 0 and the smallest subnormal; both signs."""
    h = np.arange(0, 0x7C00, dtype=np.uint16)
    low = h.view(np.float16).astype(np.float64)
    high = np.append(low[1:], 65536.0)
    mid = ((low + high) / 2).view(np.uint64)  # exact
    points = [mid + np.uint64(k) for k in (0, 1, 2)] + [mid[1:] - np.uint64(k) for k in (1, 2)] + [low.view(np.uint64)]
    extra = np.array([2.0**-25, 2.0**-26, 3 * 2.0**-26, 2.0**-1074, 65519.99999999999, 65520.0, 1e300], dtype=np.float64).view(np.uint64)
    points = np.concatenate(points + [extra])
    return np.concatenate([points, points | np.uint64(1 << 63)]).view(np.float64)


def test_numpy_f64_to_f16_is_correctly_rounded_at_every_midpoint():
    """The single rounding of the batched f16 arithmetic is numpy's binary64 -> binary16
    conversion. Exhaustively over its decision points (every f16 midpoint, exact ties to even,
    and the binary64 neighbours either side, subnormal range and overflow threshold included) it
    equals MPFR's correctly rounded binary16."""
    x = f64_around_f16_midpoints()
    with np.errstate(all="ignore"):
        got = x.astype(np.float16).view(np.uint16)
    want = np.array([mpfr_f16_of_f64(v) for v in x.tolist()], dtype=np.uint16)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(float(x[i]).hex(), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]


def test_numpy_f64_to_f16_is_correctly_rounded_on_random_values():
    """Random binary64 values with exponents over and around binary16's range (sums and products
    of f16 values lie there), against MPFR."""
    rng = np.random.default_rng(91)
    n = 100_000
    exponent = rng.integers(1023 - 40, 1023 + 18, n, dtype=np.uint64)
    bits = (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)) | (exponent << np.uint64(52)) | rng.integers(0, 1 << 52, n, dtype=np.uint64)
    x = bits.view(np.float64)
    with np.errstate(all="ignore"):
        got = x.astype(np.float16).view(np.uint16)
    want = np.array([mpfr_f16_of_f64(v) for v in x.tolist()], dtype=np.uint16)
    assert np.array_equal(got, want)


#: .f16 input classes: zeros, infinities, NaNs (quiet, signalling, payloads, both signs),
#: subnormals (smallest, largest, middle), smallest normal and neighbours, 1 and neighbours,
#: largest finite, powers that make sums overflow or products underflow, 1/3.
F16_SPECIALS = [
    0x0000,
    0x8000,
    0x7C00,
    0xFC00,
    0x7E00,
    0xFE00,
    0x7E55,
    0x7C01,
    0xFDFF,
    0x0001,
    0x8001,
    0x03FF,
    0x83FF,
    0x0200,
    0x0155,
    0x0400,
    0x8400,
    0x0401,
    0x3C00,
    0xBC00,
    0x3C01,
    0x3BFF,
    0xBBFF,
    0x7BFF,
    0xFBFF,
    0x7800,
    0x5BFF,
    0x2000,
    0x1800,
    0x3555,
    0xC248,
]


def random_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    """1/2 uniform bit patterns, 1/4 with exponents near 1 (operands interact, sums cancel),
    1/4 tiny (subnormal results, .ftz boundaries)."""
    uniform = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16)
    near = (rng.integers(15 - 6, 15 + 6, n, dtype=np.uint64).astype(np.uint16) << np.uint16(10)) | (uniform & np.uint16(0x83FF))
    tiny = uniform & np.uint16(0x87FF)
    pick = rng.random(n)
    return np.where(pick < 0.5, uniform, np.where(pick < 0.75, near, tiny))


def f16_operand_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of F16_SPECIALS, n random pairs, and n/4 each of b = -a (a +0 sum), b = a
    (a -0 difference for -0, doubling to overflow), b = -a one ulp off (cancellation) and
    a * b next to the smallest normal (.ftz's tininess boundary)."""
    s = np.array(F16_SPECIALS, dtype=np.uint16)
    a0, b0 = (x.ravel() for x in np.meshgrid(s, s, indexing="ij"))
    a1, b1 = random_f16(rng, n), random_f16(rng, n)
    a2 = random_f16(rng, n // 4)
    a3 = random_f16(rng, n // 4)
    a4 = random_f16(rng, n // 4)
    b4 = (a4 ^ np.uint16(0x8000)) + rng.integers(-1, 2, len(a4)).astype(np.int64).astype(np.uint16)
    # Products next to 2^-14, the smallest normal: a in [0.5, 1), b = 2^-14 / a rounded, give or
    # take two ulps. Some land in [2^-14 - 2^-26, 2^-14), where .ftz's tininess after rounding
    # (not before) keeps 2^-14.
    a5 = np.uint16(14 << 10) | rng.integers(0, 1 << 10, n // 4, dtype=np.uint64).astype(np.uint16)
    b5 = (2.0**-14 / a5.view(np.float16).astype(np.float64)).astype(np.float16).view(np.uint16)
    b5 = b5 + rng.integers(-2, 3, len(b5)).astype(np.int64).astype(np.uint16)
    signs = rng.integers(0, 2, (2, len(a5)), dtype=np.uint64).astype(np.uint16) << np.uint16(15)
    a = np.concatenate([a0, a1, a2, a3, a4, a5 | signs[0]])
    b = np.concatenate([b0, b1, a2 ^ np.uint16(0x8000), a3, b4, b5 | signs[1]])
    return a, b


def packed_f16(rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of .f16 operands as .f16x2 registers: each pair lands in both lanes (the other lane
    a shuffled pair), so that every class is seen in the upper and the lower half-word."""
    order = rng.permutation(len(a))
    hi_a = np.concatenate([a, a[order]]).astype(np.uint32)
    lo_a = np.concatenate([a[order], a]).astype(np.uint32)
    hi_b = np.concatenate([b, b[order]]).astype(np.uint32)
    lo_b = np.concatenate([b[order], b]).astype(np.uint32)
    return (hi_a << np.uint32(16)) | lo_a, (hi_b << np.uint32(16)) | lo_b


HALF_FORMS = sorted(t for t in batch.FAST_PATHS if t.split(".")[0] in ("add", "sub", "mul") and t.endswith(("f16", "f16x2")) and "bf16" not in t)


def half_sources(text: str, seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = f16_operand_pairs(rng, n)
    return list(packed_f16(rng, a, b)) if text.endswith("x2") else [a, b]


def test_half_forms_cover_the_brief():
    """add, sub, mul; .f16 and .f16x2; with and without .ftz and .sat; .rn spelt or default."""
    assert len(HALF_FORMS) == 3 * 2 * 2 * 2 * 2
    assert {"add.rn.f16x2", "sub.rn.f16x2", "mul.rn.f16x2", "add.rn.ftz.sat.f16", "mul.ftz.f16x2"} <= set(HALF_FORMS)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", HALF_FORMS)
def test_half_agrees_with_scalar(form_text, profile):
    assert_agrees_with_scalar(form_text, half_sources(form_text, 101, 300), profile)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(2))
@pytest.mark.parametrize("form_text", HALF_FORMS)
def test_half_agrees_with_scalar_heavy(form_text, chunk):
    assert_agrees_with_scalar(form_text, half_sources(form_text, 5000 + chunk, 3000), PROFILES[chunk % 2])


def test_half_spec_profile_leaves_nan_lanes_open_per_lane():
    """inf - inf in one lane, a number in the other: the spec profile marks only that lane."""
    r = batch.FAST_PATHS["add.rn.f16x2"](u32([0x7C003C00]), u32([0xFC003C00]), "spec")
    assert r.any_nan.tolist() == [[True, False]] and r.result(0) == Lanes((AnyNaN(FORMATS["f16"]), 0x4000), 16)
    assert batch.FAST_PATHS["add.rn.f16x2"](u32([0x7C003C00]), u32([0xFC003C00]), "sm_90").bits.tolist() == [0x7FFF4000]


def test_half_ieee_cases_by_hand():
    """Answers that follow from IEEE 754 by hand: x + (-x) = +0, -0 + -0 = -0, overflow to inf,
    a subnormal tie to even, .ftz flushing, .sat's -0 -> +0 and NaN -> +0."""
    f = batch.FAST_PATHS
    h = lambda *v: np.array(v, dtype=np.uint16)  # noqa: E731
    assert f["add.rn.f16"](h(0x3C00, 0x8000, 0x7BFF, 0x0001), h(0xBC00, 0x8000, 0x7BFF, 0x0000)).bits.tolist() == [0x0000, 0x8000, 0x7C00, 0x0001]
    assert f["sub.rn.f16"](h(0x8000, 0x3C00), h(0x8000, 0x3C00)).bits.tolist() == [0x0000, 0x0000]
    # 2^-24 * 0.5 is a tie between 0 and 2^-24: even 0; 2^-24 * 1.5 -> 2^-23 (even).
    assert f["mul.rn.f16"](h(0x0001, 0x0001, 0x8001), h(0x3800, 0x3E00, 0x3E00)).bits.tolist() == [0x0000, 0x0002, 0x8002]
    assert f["add.rn.ftz.f16"](h(0x0001, 0x0400, 0x8400), h(0x0000, 0x0000, 0x0001)).bits.tolist() == [0x0000, 0x0400, 0x8400]
    assert f["mul.rn.ftz.f16"](h(0x0400, 0x8400), h(0x3800, 0x3800)).bits.tolist() == [0x0000, 0x8000]
    assert f["add.rn.sat.f16"](h(0x8000, 0x7E00, 0x3C00, 0xBC00), h(0x8000, 0x3C00, 0x3C00, 0x3800)).bits.tolist() == [0x0000, 0x0000, 0x3C00, 0x0000]


# ---------------------------------------------------------------------------------------------
# mul.wide and mad.wide .{s32, u32}
# ---------------------------------------------------------------------------------------------

WIDE_FORMS = ["mad.wide.s32", "mad.wide.u32", "mul.wide.s32", "mul.wide.u32"]
I32_SPECIALS = [0, 1, 2, 0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 0x0000FFFF, 0x00010000, 0x12345678, 0xDEADBEEF]
I64_SPECIALS = [0, 1, (1 << 64) - 1, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, 0xFFFFFFFF, 1 << 32, 0x3FFFFFFF00000001, 0xC000000080000000]


def wide_sources(text: str, seed: int, n: int) -> list[np.ndarray]:
    """Every combination of the special values, then n seeded random vectors."""
    rng = np.random.default_rng(seed)
    s32 = np.array(I32_SPECIALS, dtype=np.uint32)
    s64 = np.array(I64_SPECIALS, dtype=np.uint64)
    mad = text.startswith("mad")
    grids = np.meshgrid(s32, s32, *([s64] if mad else []), indexing="ij")
    sources = [g.ravel() for g in grids]
    random = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)]
    if mad:
        random.append(rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True))
    return [np.concatenate([x, y]).astype(x.dtype) for x, y in zip(sources, random)]


def python_wide(text: str, sources: list[np.ndarray]) -> list[int]:
    """Python integers: the exact (signed or unsigned) product plus c, modulo 2^64."""
    signed = text.endswith("s32")
    val = lambda x, w: x - (1 << w) if signed and x >> (w - 1) else x  # noqa: E731
    cols = [s.tolist() for s in sources]
    out = []
    for i in range(len(cols[0])):
        t = val(cols[0][i], 32) * val(cols[1][i], 32)
        if len(cols) == 3:
            t += val(cols[2][i], 64)
        out.append(t % (1 << 64))
    return out


@pytest.mark.parametrize("form_text", WIDE_FORMS)
def test_wide_against_python_integers(form_text):
    sources = wide_sources(form_text, 111, 20_000)
    got = batch.FAST_PATHS[form_text](*sources)
    assert got.bits.dtype == np.uint64 and got.any_nan is None and got.format is None
    assert got.bits.tolist() == python_wide(form_text, sources)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", WIDE_FORMS)
def test_wide_agrees_with_scalar(form_text, profile):
    assert_agrees_with_scalar(form_text, wide_sources(form_text, 121, 3000), profile)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("form_text", WIDE_FORMS)
def test_wide_agrees_with_scalar_heavy(form_text, chunk):
    assert_agrees_with_scalar(form_text, wide_sources(form_text, 6000 + chunk, 100_000), PROFILES[chunk % 2])


# ---------------------------------------------------------------------------------------------
# sm_90 silicon
# ---------------------------------------------------------------------------------------------


@functools.cache
def _recordings():
    from ptxspec.conformance.silicon import replay

    return replay.load()


#: The paths written for one form each (tests/test_batch_exhaustive.py checks every recorded form
#: that has any fast path).
SINGLE_FORM_PATHS = sorted(set(batch._EXPLICIT) | {"cvt.rn.f16.f32", "cvt.rn.satfinite.e4m3x2.f32"})


@pytest.mark.parametrize("form_text", SINGLE_FORM_PATHS)
def test_fast_paths_match_sm90_recording(form_text):
    """Every vector recorded on an H100/H200 for the form: the sm_90 profile gives the observed
    bits exactly, the spec profile allows them."""
    recorded = _recordings().forms[form_text]
    fn = batch.FAST_PATHS[form_text]
    observed = recorded.outputs[0]
    assert len(observed) >= 1024
    pinned = fn(*recorded.inputs, profile="sm_90")
    assert pinned.any_nan is None
    mismatch = np.flatnonzero(pinned.bits != observed)
    assert not mismatch.size, [(*(hex(int(x[i])) for x in recorded.inputs), hex(int(observed[i])), hex(int(pinned.bits[i]))) for i in mismatch[:5]]
    assert fn(*recorded.inputs, profile="spec").contains(observed).all()


# ---------------------------------------------------------------------------------------------
# The API: BatchResult, evaluate_batch, the fallback loop
# ---------------------------------------------------------------------------------------------


def test_spec_profile_marks_nan_lanes_and_contains_accepts_any_nan():
    a = u32([0x7FC00000, 0x7F800000, 0x3F800000, 0x3F800000])
    b = u32([0x3F800000, 0x00000000, 0x3F800000, 0x40000000])
    c = u32([0x00000000, 0x3F800000, 0xFF800000, 0x00000000])
    r = fma_rn_f32(a, b, c, "spec")
    assert r.any_nan.tolist() == [True, True, False, False]
    assert r.bits.tolist()[2:] == [0xFF800000, 0x40000000]
    assert r.result(0) == AnyNaN(FORMATS["f32"]) and r.result(3) == 0x40000000
    assert r.contains(u32([0xFFC00001, 0x7F800001, 0xFF800000, 0x40000000])).tolist() == [True] * 4
    assert r.contains(u32([0x7F800000, 0x7FFFFFFF, 0x7FFFFFFF, 0x40000001])).tolist() == [False, True, False, False]
    pinned = fma_rn_f32(a, b, c, "sm_90")
    assert pinned.any_nan is None and pinned.bits.tolist()[:2] == [0x7FFFFFFF, 0x7FFFFFFF]
    assert not pinned.contains(u32([0xFFC00001, 0x7FFFFFFF, 0xFF800000, 0x40000000]))[0]


def test_packed_nan_lanes_are_per_lane():
    r = cvt_rn_satfinite_e4m3x2_f32(u32([0x7FC00000, f32_bits(1.0)]), u32([f32_bits(-1.0), 0xFFC00000]), "spec")
    assert r.any_nan.tolist() == [[True, False], [False, True]]
    e4m3 = FORMATS["e4m3"]
    assert r.result(0) == Lanes((AnyNaN(e4m3), 0xB8), 8)
    assert r.result(1) == Lanes((0x38, AnyNaN(e4m3)), 8)
    assert r.contains(u32([0xFFB8, 0x387F])).tolist() == [True, True]
    assert r.contains(u32([0x7EB8, 0x3838])).tolist() == [False, False]


def test_evaluate_batch_uses_the_fast_path_and_checks_operands():
    x = u32([0x3F800000, 0x40000000])
    assert evaluate_batch("fma.rn.f32", [x, x, x]).bits.tolist() == [0x40000000, 0x40C00000]
    assert evaluate_batch("fma.rn.f32", [[0x3F800000], [0x3F800000], [0]]).bits.tolist() == [0x3F800000]
    with pytest.raises(OperandError, match="takes 3 source operand"):
        evaluate_batch("fma.rn.f32", [x, x])
    with pytest.raises(OperandError, match="do not fit in 32 bits"):
        evaluate_batch("fma.rn.f32", [x, x, np.array([1 << 32, 0], dtype=np.uint64)])
    with pytest.raises(OperandError, match="do not fit in 32 bits"):
        evaluate_batch("fma.rn.f32", [x, x, np.array([-1, 0])])
    with pytest.raises(OperandError, match="differ in length"):
        evaluate_batch("fma.rn.f32", [x, x, x[:1]])
    with pytest.raises(OperandError, match="1-D"):
        evaluate_batch("fma.rn.f32", [x, x, x.reshape(2, 1)])
    with pytest.raises(OperandError, match="integer bit patterns"):
        evaluate_batch("fma.rn.f32", [x, x, np.array([1.0, 2.0])])
    with pytest.raises(PtxSpecError):
        evaluate_batch("fma.rn.q32", [x, x, x])
    with pytest.raises(OperandError, match="observed"):
        evaluate_batch("fma.rn.f32", [x, x, x]).contains(x[:1])


#: Per register width: a "1" pattern, a NaN pattern, and how to draw random patterns.
_ONE = {16: 0x3C00, 32: 0x3F800000, 64: 1}
_NAN = {16: 0x7E00, 32: 0x7FC00000, 64: 1 << 63}


def _block_sources(text: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    from ptxspec.spec.types import register_bits

    widths = [register_bits(o.type) for o in as_form(text).sources]
    sources = [np.full(n, _ONE[w], dtype=batch._dtype(w)) for w in widths]
    sources[-1][batch.BLOCK + 7] = _NAN[widths[-1]]
    sources[0][-1] = _NAN[widths[0]] | 1
    for x, w in zip(sources, widths):
        x[rng.integers(0, n, 50)] = rng.integers(0, 1 << min(w, 63), 50, dtype=np.uint64).astype(x.dtype)
    return sources


@pytest.mark.parametrize("profile", PROFILES)
def test_blocks_join_like_one_call(profile):
    """evaluate_batch runs a fast path block by block; the joined result equals one call on the
    whole arrays, with NaN lanes in some blocks only (so some blocks have no mask)."""
    n = 3 * batch.BLOCK + 123
    rng = np.random.default_rng(81)
    texts = [
        "fma.rn.f32",
        "cvt.rn.f16.f32",
        "cvt.rn.satfinite.e4m3x2.f32",
        "add.rn.f16x2",
        "mul.rn.ftz.f16",
        "add.rn.sat.f16x2",
        "mad.wide.s32",
        "mul.wide.u32",
    ]
    for text in texts:
        fn = batch.FAST_PATHS[text]
        sources = _block_sources(text, n, rng)
        joined, whole = evaluate_batch(text, sources, profile), fn(*sources, profile=profile)
        assert np.array_equal(joined.bits, whole.bits)
        # Integer results and .sat (NaN flushed to +0) never leave a NaN open.
        can_be_open = whole.format is not None and ".sat." not in text
        assert (joined.any_nan is None) == (whole.any_nan is None) == (profile == "sm_90" or not can_be_open), text
        if whole.any_nan is not None:
            assert joined.any_nan.shape == whole.any_nan.shape and np.array_equal(joined.any_nan, whole.any_nan)
            assert joined.results() == whole.results()


@pytest.mark.parametrize("form_text", ["add.rn.f32", "add.rz.ftz.f32", "add.rn.f64"])
@pytest.mark.parametrize("profile", PROFILES)
def test_fallback_loops_the_scalar_semantics(form_text, profile, monkeypatch):
    """Where a form has no fast path, the batch is the scalar semantics looped; its open results
    survive (every scalar form has a path now, so the paths are taken away here)."""
    monkeypatch.setattr(batch, "fast_path", lambda form, profile="spec": None)
    form = as_form(form_text)
    assert not batch.has_fast_path(form)
    rng = np.random.default_rng(71)
    if form["type"] == "f64":
        specials = np.array([0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001, 0xFFF4000000000000, 0x3FF0000000000000], dtype=np.uint64)
        a = np.concatenate([np.repeat(specials, len(specials)), rng.integers(0, 1 << 63, 300, dtype=np.uint64)])
        b = np.concatenate([np.tile(specials, len(specials)), rng.integers(0, 1 << 63, 300, dtype=np.uint64)])
    else:
        s = u32(SPECIAL_F32)
        a = np.concatenate([np.repeat(s, len(s)), random_f32(rng, 300)])
        b = np.concatenate([np.tile(s, len(s)), random_f32(rng, 300)])
    got = evaluate_batch(form, [a, b], profile)
    observed = []
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        (want,) = evaluate(form, [x, y], profile)
        assert got.result(i) == want, (form_text, hex(x), hex(y))
        observed.append(want if isinstance(want, int) else min(want.members) if isinstance(want, OneOf) else canonical_nan(want.format))
    assert got.contains(np.array(observed, dtype=got.bits.dtype)).all()
    if profile == "spec":
        assert got.any_nan is not None and got.any_nan.any()
    if form["type"] == "f64" and profile == "spec":
        assert got.sets  # several NaN operands: one of their payloads


# ---------------------------------------------------------------------------------------------
# The front door's bookkeeping: undecided vectors, intervals, several destinations, blocks
# ---------------------------------------------------------------------------------------------


def _with_path(monkeypatch, text: str, path) -> None:
    """Make ``path`` the fast path of ``text`` for this test only."""
    original = batch.fast_path
    monkeypatch.setattr(batch, "fast_path", lambda form, profile="spec": path if form.text == text else original(form, profile))


def test_undecided_vectors_are_evaluated_by_the_semantics(monkeypatch):
    """A path that leaves every third vector undecided (and writes garbage there) still gives
    the scalar results, across blocks, with the open NaN lanes and the sets of the scalar ones."""

    def wrong_thirds(a, b, *, profile):
        bits = np.full(len(a), 0x1234, dtype=np.uint64)
        undecided = a % np.uint64(3) == 0
        nan = a % np.uint64(3) == 1  # an open NaN the path claims, in a decided vector: kept
        return BatchResult(bits, nan, FORMATS["f64"], 1, 64, undecided=undecided)

    text = "add.rn.f64"
    _with_path(monkeypatch, text, wrong_thirds)
    n = batch.BLOCK + 40
    rng = np.random.default_rng(5)
    nan_payloads = np.array([0x7FF8000000000003, 0xFFF4000000000000], dtype=np.uint64)  # the first a multiple of 3: undecided
    a = rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)
    a[::7], b[::7] = nan_payloads[0], nan_payloads[1]  # two NaN operands: a set of payloads
    got = evaluate_batch(text, [a, b], "spec")
    third = (a % np.uint64(3)).tolist()
    for i in list(range(0, 200)) + list(range(n - 200, n)):
        if third[i] == 0:
            assert got.result(i) == evaluate(text, [int(a[i]), int(b[i])], "spec")[0], i
        elif third[i] == 1:
            assert got.result(i) == AnyNaN(FORMATS["f64"])
        else:
            assert got.result(i) == 0x1234
    assert got.undecided is None and got.sets and all(third[i] == 0 for i in got.sets)


def test_interval_lanes_rebuild_the_interval_and_contain_by_value(monkeypatch):
    """Intervals kept as arrays give results.Interval back, join across blocks, and contains()
    orders the encodings by value (a negative low end, both zeros, NaN only where allowed)."""
    from ptxspec.semantics.results import Interval

    f32f = FORMATS["f32"]
    low = np.array([0xBF800000, 0x80000000, 0x3F800000, 0x3F800000], dtype=np.uint32)  # -1, -0, 1, 1
    high = np.array([0x3F800000, 0x00000000, 0x3F800002, 0x3F800000], dtype=np.uint32)  # 1, +0, 1+2ulp, 1
    nan = np.array([False, False, True, False])

    def intervals(a, *, profile):
        k = np.arange(len(a)) % 4
        mask = k != 3
        return BatchResult(low[k].copy(), None, f32f, 1, 32, intervals=batch.Intervals(mask, low[k], high[k], nan[k]))

    text = "sqrt.approx.f32"
    _with_path(monkeypatch, text, intervals)
    n = batch.BLOCK + 8
    got = evaluate_batch(text, [np.zeros(n, np.uint32)], "spec")
    for i in (0, 1, 2, 3, n - 4, n - 3, n - 2, n - 1):
        k = i % 4
        assert got.result(i) == (Interval(f32f, int(low[k]), int(high[k]), bool(nan[k])) if k != 3 else int(low[k]))
    observed = {
        0: [0x00000000, 0x80000001, 0xBF800000, 0xBF800001, 0x3F800001, 0x7FC00000],
        1: [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x7FC00000],
        2: [0x3F800000, 0x3F800002, 0x3F800003, 0x7FC00000, 0xFFC00001, 0x3F7FFFFF],
    }
    for k, values in observed.items():
        rows = np.array([k + 4 * j for j in range(len(values))])
        obs = np.zeros(n, np.uint32)
        obs[rows] = values
        ok = got.contains(obs)[rows]
        assert ok.tolist() == [v in Interval(f32f, int(low[k]), int(high[k]), bool(nan[k])) for v in values], k


def test_every_destination_of_a_form_with_two(monkeypatch):
    """evaluate_batch_all gives setp's p and q (and the fallback loops both); evaluate_batch
    refuses a form with two destinations."""
    monkeypatch.setattr(batch, "fast_path", lambda form, profile="spec": None)
    a = np.array([1, 2, 0xFFFFFFFF], dtype=np.uint32)
    b = np.array([2, 2, 0], dtype=np.uint32)
    p, q = batch.evaluate_batch_all("setp.lt.s32", [a, b])
    assert p.bits.tolist() == [1, 0, 1] and q.bits.tolist() == [0, 1, 0]
    with pytest.raises(PtxSpecError, match="evaluate_batch_all"):
        evaluate_batch("setp.lt.s32", [a, b])


# ---------------------------------------------------------------------------------------------
# The benchmark runs and verifies itself
# ---------------------------------------------------------------------------------------------


def test_benchmark_smoke():
    """bench/throughput.py runs, checks its batched results against the semantics, and lists the
    slowest forms."""
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / "throughput.py"), "--forms", "*.f16", "--per-family", "3", "--n", "4096", "--loop-n", "16"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the ten slowest:" in out.stdout and " NO" not in out.stdout
    assert out.stdout.count(" yes") >= 3


def test_fallback_reads_the_lanes_of_a_packed_half_destination():
    """add.rn.f16x2 declares its registers .b32 (§9.7.4.1); the per-vector fallback must still see
    two f16 lanes, so that a lane whose NaN is open is marked per lane (it raised IndexError)."""
    rng = np.random.default_rng(7)
    halves = np.array([0x7E00, 0xFC00, 0x7C00, 0x3C00, 0x8000, 0x0001, 0x7BFF, 0x7D00], dtype=np.uint64)
    a = (halves[rng.integers(0, 8, 400)] << np.uint64(16)) | halves[rng.integers(0, 8, 400)]
    b = (halves[rng.integers(0, 8, 400)] << np.uint64(16)) | halves[rng.integers(0, 8, 400)]
    result = evaluate_batch("add.rn.f16x2", [a, b])
    assert result.lanes == 2 and result.lane_bits == 16 and result.any_nan is not None
    for i in range(400):
        (expected,) = evaluate("add.rn.f16x2", [int(a[i]), int(b[i])])
        if isinstance(expected, int):
            assert int(result.bits[i]) == expected and not result.any_nan[i].any()
        else:
            assert isinstance(expected, Lanes)
            for lane, value in enumerate(expected.lanes):
                shift = 16 * (1 - lane)
                if isinstance(value, AnyNaN):
                    assert result.any_nan[i, lane]
                else:
                    assert (int(result.bits[i]) >> shift) & 0xFFFF == value and not result.any_nan[i, lane]


def test_per_lane_and_flushed_intervals_rebuild_their_sets(monkeypatch):
    """Intervals of a packed destination are kept per lane and packed like the scalar result
    (results.pack_lanes); a flushed lane is floating_point_approx.Flushed; contains() agrees with
    each set's own membership on every lane, zeros and subnormals included."""
    from ptxspec.semantics.floating_point_approx import Flushed
    from ptxspec.semantics.results import Interval, pack_lanes

    f16 = FORMATS["f16"]

    # lane 0: [-2^-24, 2^-23] flushed; lane 1: fixed 0x3c00 in even rows, [1, 1+2ulp] in odd rows
    def path(a, *, profile):
        n = len(a)
        odd = np.arange(n) % 2 == 1
        mask = np.stack([np.ones(n, bool), odd], axis=1)
        low = np.stack([np.full(n, 0x8001, np.uint32), np.full(n, 0x3C00, np.uint32)], axis=1)
        high = np.stack([np.full(n, 0x0002, np.uint32), np.full(n, 0x3C02, np.uint32)], axis=1)
        nan = np.zeros((n, 2), bool)
        flushed = np.stack([np.ones(n, bool), np.zeros(n, bool)], axis=1)
        bits = np.full(n, 0x80013C00, np.uint32)
        return BatchResult(bits, None, f16, 2, 16, intervals=batch.Intervals(mask, low, high, nan, flushed))

    text = "ex2.approx.f16x2"
    _with_path(monkeypatch, text, path)
    n = batch.BLOCK + 4
    got = evaluate_batch(text, [np.zeros(n, np.uint32)], "spec")
    first, second = Flushed(Interval(f16, 0x8001, 0x0002)), Interval(f16, 0x3C00, 0x3C02)
    for i in (0, 1, n - 2, n - 1):
        assert got.result(i) == pack_lanes([first, second if i % 2 else 0x3C00], 16)
    lanes0 = [0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x3C00, 0x7E00]
    lanes1 = [0x3C00, 0x3C01, 0x3C02, 0x3C03, 0x3BFF]
    rows = np.array([(i, (x << 16) | y) for x in lanes0 for y in lanes1 for i in (0, 1)])
    observed = np.zeros(n, np.uint32)
    observed[rows[:, 0] + 2 * np.arange(len(rows))] = rows[:, 1]
    picked = rows[:, 0] + 2 * np.arange(len(rows))
    ok = got.contains(observed)[picked]
    for k, (i, value) in enumerate(rows.tolist()):
        x, y = value >> 16, value & 0xFFFF
        want = x in first and (y in second if i % 2 else y == 0x3C00)
        assert bool(ok[k]) == want, (i, hex(x), hex(y))


def test_member_rows_rebuild_one_of_sets_across_blocks(monkeypatch):
    """Members keeps small sets as rows (a repeated value is one member); they join across
    blocks with rows of other widths, give OneOf back, and contains() takes exactly the members."""
    from ptxspec.semantics.results import OneOf

    def path(a, b, *, profile):
        k = 2 if int(a[0]) % 2 else 3  # the blocks differ in how many members a row holds
        values = np.stack([a + np.uint32(j % 2) for j in range(k)], axis=1)
        return BatchResult(a.copy(), None, None, 1, 32, members=batch.Members(a % np.uint32(3) == 0, values))

    text = "rem.s32"
    _with_path(monkeypatch, text, path)
    n = 2 * batch.BLOCK + 6
    a = np.arange(n, dtype=np.uint32)
    a[batch.BLOCK] = 1  # the second block starts odd
    got = evaluate_batch(text, [a, np.ones(n, np.uint32)], "spec")
    for i in (0, 1, 3, batch.BLOCK, batch.BLOCK + 2, n - 1):
        x = int(a[i])
        assert got.result(i) == (OneOf(frozenset({x, x + 1}), 32) if x % 3 == 0 else x), i
    for shift in (0, 1, 2):
        observed = a + np.uint32(shift)
        want = np.where(a % 3 == 0, shift <= 1, shift == 0)
        assert np.array_equal(got.contains(observed), want), shift


@pytest.mark.parametrize("profile", PROFILES)
def test_every_scalar_form_has_a_batched_path(profile):
    """Issue 22: every legal form whose semantics takes one thread's registers has a batched path
    (a seeded sample of 40 forms per family; the chapters' tests and bench/throughput.py go
    through every form), so none falls back to the per-vector loop."""
    from ptxspec.conformance import coverage

    forms = coverage.scalar_forms(per_family=40)
    missing = [f.text for f in forms if not batch.fast_path(f, profile)]
    assert len(forms) > 1500 and not missing, missing[:20]


@pytest.mark.parametrize("profile", PROFILES)
def test_uniform_bit_patterns_across_a_block_boundary(profile):
    """One form of every scalar family (seeded) on uniformly random bit patterns of each
    register's full width, more than a block of them: the vectors on both sides of the block
    boundary and a random sample agree with the readable semantics (the block join and the
    undecided merge of every chapter, on inputs unlike the generator's)."""
    from ptxspec.conformance import coverage
    from ptxspec.spec.types import register_bits

    rng = np.random.default_rng(22)
    n = batch.BLOCK + 64
    rows = np.unique(np.concatenate([np.arange(batch.BLOCK - 40, batch.BLOCK + 40), rng.integers(0, n, 60)]))
    for form in coverage.scalar_forms(per_family=1, seed=3):
        widths = [register_bits(o.type) for o in form.sources]
        if max(widths + [register_bits(d.type) for d in form.destinations]) > 64:
            continue  # mov's .b128 forms: tests/test_batch_data_movement.py
        sources = [rng.integers(0, 1 << w, n, dtype=np.uint64) for w in widths]
        results = batch.evaluate_batch_all(form, sources, profile)
        for i in rows.tolist():
            want = evaluate(form, [int(s[i]) for s in sources], profile)
            assert tuple(r.result(i) for r in results) == want, (form.text, [hex(int(s[i])) for s in sources])


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_hold_a_member_of_every_set(profile):
    """BatchResult's contract: where a result is a set (any NaN, an interval -- a flushed one
    included --, member rows, a shared set), ``bits`` holds one member of it, so the canonical
    bits are always an allowed result (``contains``), for a seeded sample of forms of every scalar
    family (20 each; 200 under ``PTXSPEC_HEAVY=all``, as bench/throughput.py) on the generator's inputs. The sets
    by index are the documented exception."""
    from ptxspec.conformance import coverage, vectors
    from ptxspec.spec.types import register_bits

    every = os.environ.get("PTXSPEC_HEAVY") == "all"
    forms = [f for f in coverage.scalar_forms(per_family=200 if every else 20) if all(register_bits(o.type) <= 64 for o in (*f.sources, *f.destinations))]
    outside = []
    for form in forms:
        sources = vectors.inputs(form, 1500, 0)
        for r in batch.evaluate_batch_all(form, sources, profile):
            ok = r.contains(r.bits.copy())
            if r.sets:
                ok[list(r.sets)] = True
            outside += [(form.text, int(i)) for i in np.flatnonzero(~ok)[:1]]
    assert len(forms) > 900 and not outside, outside[:10]
