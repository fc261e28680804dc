"""The batched §9.7.3 floating-point and §9.7.5 mixed-precision paths (semantics/batch_float.py).

* Agreement with the readable semantics (tests/batch_agreement.py) on the vectors generator's
  inputs, every destination's result equal, under the spec and sm_90 profiles: a fixed set of the
  hardest forms plus a seeded sample of every family by default, every legal form as heavy tests.
* Independent oracles: MPFR (tests/oracle_mpfr.py) for every rounding of add, sub, mul, fma, mad,
  div, rcp, sqrt on .f32, .ftz.f32 and .f64 and for the mixed-precision forms; Python integers for
  the exact helpers; numpy's float operations for the bit-level instructions.
* Every legal form of the covered families has the path.
"""

from __future__ import annotations

import math
import random

import batch_agreement
import gmpy2
import numpy as np
import pytest
from oracle_mpfr import BF16, F16, MODES, NAN, reference, sample_operands
from oracle_mpfr import F32 as MPFR_F32
from oracle_mpfr import F64 as MPFR_F64

from ptxspec.semantics import batch, batch_float
from ptxspec.semantics.batch import evaluate_batch
from ptxspec.semantics.numerics import Rounding

FAMILIES = (
    "add.f",
    "sub.f",
    "mul.f",
    "fma.f",
    "mad.f",
    "div.rnd",
    "rcp.rnd",
    "sqrt.rnd",
    "min.f",
    "max.f",
    "abs.f",
    "neg.f",
    "copysign",
    "testp",
    "add.mixed",
    "sub.mixed",
    "fma.mixed",
)
PROFILES = ("spec", "sm_90")

#: Forms whose exactness argument is the most delicate: wide products and sums in every
#: directed mode, .ftz tininess, .sat, packed lanes, quotients and roots, mixed operands.
HARD = (
    "fma.rm.f64",
    "fma.rp.f64",
    "fma.rz.ftz.sat.f32",
    "fma.rp.ftz.f32x2",
    "mad.rm.f64",
    "add.rm.f64",
    "sub.rm.ftz.f32x2",
    "mul.rz.f64",
    "mul.rn.ftz.sat.f32",
    "div.rp.f64",
    "div.rz.ftz.f32",
    "rcp.rm.f64",
    "sqrt.rp.f64",
    "sqrt.rm.ftz.f32",
    "min.ftz.NaN.xorsign.abs.f32",
    "max.f64",
    "abs.f64",
    "neg.ftz.f32",
    "fma.rm.sat.f32.bf16",
    "sub.rp.f32.f16",
)


def _all_forms() -> list[str]:
    return [text for family in FAMILIES for text in batch_agreement.legal_forms(family)]


# ---------------------------------------------------------------------------------------------
# The path exists, and agrees with the readable semantics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_every_legal_form_has_the_path(profile):
    missing = [text for text in _all_forms() if not batch.has_fast_path(text, profile)]
    assert not missing, missing


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("text", HARD)
def test_hard_forms_agree(text, profile):
    batch_agreement.assert_agrees(text, profile, count=3000, seed=0)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("family", FAMILIES)
def test_sample_agrees(family, profile):
    for text in batch_agreement.sample_forms(family, 2, seed=1):
        batch_agreement.assert_agrees(text, profile, count=1000, seed=1)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("text", _all_forms())
def test_every_form_agrees(text, profile):
    batch_agreement.assert_agrees(text, profile, count=4000, seed=2)


def test_undecided_is_rare_on_random_inputs():
    """Random vectors (past the edge vectors) are decided by the path itself, under both profiles:
    only two NaN operands with different payloads (spec, .f64) are left to the scalar semantics."""
    from ptxspec.conformance import vectors
    from ptxspec.profiles import profile_named
    from ptxspec.semantics.instructions import as_form

    for text in ("fma.rm.f64", "div.rn.f64", "sqrt.rp.f64", "add.rz.f64", "fma.rp.ftz.f32"):
        form = as_form(text)
        sources = [s[-8192:] for s in vectors.inputs(form, 80_000, 3)]
        for profile in PROFILES:
            result = batch.fast_path(form, profile)(*sources, profile=profile_named(profile))
            undecided = 0 if result.undecided is None else int(result.undecided.sum())
            assert undecided <= 8, (text, profile, undecided)


# ---------------------------------------------------------------------------------------------
# MPFR
# ---------------------------------------------------------------------------------------------


def _check_against(text: str, expected: list, sources: list[np.ndarray], mpfr_fmt) -> None:
    """The batched result (sm_90: every NaN is concrete bits) against MPFR's encodings; a NaN
    expected means any NaN."""
    result = evaluate_batch(text, sources, "sm_90")
    bits = [int(x) for x in result.bits]
    bad = [
        (i, [hex(int(s[i])) for s in sources], expected[i], hex(bits[i]))
        for i in range(len(bits))
        if not (mpfr_fmt.is_nan(bits[i]) if expected[i] == NAN else bits[i] == expected[i])
    ]
    assert not bad, bad[:5]


ARITHMETIC = ("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt")
VARIANTS = ("f32", "ftz.f32", "f64")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ARITHMETIC)
def test_mpfr(op, mode, variant):
    _mpfr(op, mode, variant, seed=5, n=400)


@pytest.mark.heavy
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ARITHMETIC)
def test_mpfr_heavy(op, mode, variant):
    _mpfr(op, mode, variant, seed=50, n=20_000)


def _mpfr(op: str, mode: str, variant: str, *, seed: int, n: int) -> None:
    """MPFR's IEEE 754 result (oracle_mpfr.reference, with .ftz) on operands around every
    rounding boundary (oracle_mpfr.sample_operands)."""
    fmt = MPFR_F64 if variant == "f64" else MPFR_F32
    ftz = variant.startswith("ftz")
    text = ".".join([op, mode, *(["ftz"] if ftz else []), variant.split(".")[-1]])
    tuples = sample_operands(op, fmt, seed, n)
    expected = [reference(op, fmt, mode, t, ftz=ftz) for t in tuples]
    dtype = np.uint64 if variant == "f64" else np.uint32
    _check_against(text, expected, [np.array(column, dtype=dtype) for column in zip(*tuples)], fmt)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma"))
def test_mpfr_sat(op, mode):
    tuples = sample_operands(op, MPFR_F32, 6, 300)
    expected = [reference(op, MPFR_F32, mode, t, sat=True) for t in tuples]
    _check_against(f"{op}.{mode}.sat.f32", expected, [np.array(c, dtype=np.uint32) for c in zip(*tuples)], MPFR_F32)


@pytest.mark.parametrize("narrow", ("f16", "bf16"))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ("add", "sub", "fma"))
def test_mpfr_mixed(op, mode, narrow):
    """§9.7.5: convert(a) [* convert(b)] +- c rounded once to .f32, by MPFR on the exact values."""
    fmt = F16 if narrow == "f16" else BF16
    rng = random.Random(f"{op}{mode}{narrow}")
    arity = 2 if op == "fma" else 1
    rows = []
    for _ in range(400):
        narrow_ops = [rng.getrandbits(16) for _ in range(arity)]
        c = rng.getrandbits(32) if rng.random() < 0.5 else _near(rng, fmt, narrow_ops, op)
        rows.append((*narrow_ops, c))
    expected = []
    for *narrow_ops, c in rows:
        xs = [fmt.to_mpfr(x) for x in narrow_ops]
        with MPFR_F32.context(mode):
            z = MPFR_F32.to_mpfr(c)
            value = gmpy2.fma(xs[0], xs[1], z) if op == "fma" else (xs[0] + z if op == "add" else xs[0] - z)
        expected.append(MPFR_F32.from_mpfr(value))
    dtypes = [np.uint16] * arity + [np.uint32]
    sources = [np.array(column, dtype=dtype) for column, dtype in zip(zip(*rows), dtypes)]
    _check_against(f"{op}.{mode}.f32.{narrow}", expected, sources, MPFR_F32)


def _near(rng: random.Random, fmt, narrow_ops: list[int], op: str) -> int:
    """An .f32 c close to -(the narrow part), so that the sum cancels."""
    xs = [fmt.to_mpfr(x) for x in narrow_ops]
    with gmpy2.context(precision=64):
        part = xs[0] * xs[1] if op == "fma" else xs[0]
    if not gmpy2.is_finite(part):
        return rng.getrandbits(32)
    with MPFR_F32.context("rn"):
        c = MPFR_F32.from_mpfr(+part if op == "sub" else -part)
    return c if c == NAN else c ^ rng.choice([0, 0, 1, 2, 0x80])


# ---------------------------------------------------------------------------------------------
# The exact helpers, against Python integers
# ---------------------------------------------------------------------------------------------


def _value(hi, lo) -> list[int]:
    return [(int(h) << batch_float.LIMB) + int(low) for h, low in zip(hi, lo)]


def test_exact_product():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 57, (2, 20000))
    x, y = (rng.integers(0, 1 << 62, 20000) >> (62 - b) for b in bits)
    assert _value(*batch_float.exact_product(x, y)) == [int(a) * int(b) for a, b in zip(x, y)]


def _wide(rng, n):
    width = rng.integers(0, 107, n)
    hi = rng.integers(0, 1 << 46, n) >> np.maximum(46 - np.maximum(width - 60, 0), 0)
    lo = rng.integers(0, 1 << 60, n) >> np.maximum(60 - width, 0)
    lo = np.where(rng.random(n) < 0.1, 0, lo)
    sign = rng.random(n) < 0.5
    exp = rng.integers(-300, 300, n) // np.where(rng.random(n) < 0.5, 1, 40)
    return batch_float.Wide(sign, np.where(width > 60, hi, 0), lo, exp)


@pytest.mark.parametrize("mode", list(Rounding)[:5])
def test_exact_sum_is_exact_or_sticky(mode):
    """The sum is exact, or (sticky) lies strictly between the same two multiples of its last
    unit's double as the exact sum, with at least 114 bits above that unit."""
    rng = np.random.default_rng(2)
    x, y = _wide(rng, 5000), _wide(rng, 5000)
    zero_x, zero_y = (x.hi == 0) & (x.lo == 0), (y.hi == 0) & (y.lo == 0)
    s = batch_float.wide_sum(x, y, zero_x, zero_y, mode)
    for i in range(5000):
        e = min(int(x.exp[i]), int(y.exp[i]), int(s.exp[i]))
        exact = sum((-1 if w.sign[i] else 1) * (((int(w.hi[i]) << 60) + int(w.lo[i])) << (int(w.exp[i]) - e)) for w in (x, y))
        got_magnitude = (int(s.hi[i]) << 60) + int(s.lo[i])
        got = (-1 if s.sign[i] else 1) * (got_magnitude << (int(s.exp[i]) - e))
        if got == exact:
            if exact == 0:  # IEEE 754 §6.3
                want = bool(x.sign[i] and y.sign[i]) if zero_x[i] and zero_y[i] and x.sign[i] == y.sign[i] else mode is Rounding.RM
                assert bool(s.sign[i]) == want
            continue
        unit = 1 << (int(s.exp[i]) + 1 - e)  # the sticky bit is half of this unit
        assert got_magnitude & 1 and got_magnitude.bit_length() >= 116
        assert exact // unit == got // unit and exact % unit != 0


def test_exact_quotient():
    rng = np.random.default_rng(3)
    a_sig, b_sig = (rng.integers(1, 1 << 53, 20000) >> rng.integers(0, 53, 20000) for _ in range(2))
    a_sig, b_sig = np.maximum(a_sig, 1), np.maximum(b_sig, 1)  # zero operands are decided before
    exp = np.zeros(20000, dtype=np.int64)
    false = np.zeros(20000, dtype=bool)
    a = batch_float.Operand(false, a_sig, exp, false, false, exp.astype(np.uint64))
    b = batch_float.Operand(false, b_sig, exp, false, false, exp.astype(np.uint64))
    q = batch_float.exact_quotient(a, b)
    for i in range(20000):
        sig, e = int(q.lo[i]), int(q.exp[i])
        assert sig.bit_length() >= 57 and e < 0
        whole, rem = divmod(int(a_sig[i]) << -(e + 1), int(b_sig[i]))  # a / b in units of 2^(e+1)
        assert sig >> 1 == whole and sig & 1 == (rem != 0)


def test_exact_root():
    rng = np.random.default_rng(4)
    sig = np.maximum(rng.integers(1, 1 << 53, 20000) >> rng.integers(0, 53, 20000), 1)
    exp = rng.integers(-1100, 1000, 20000)
    false = np.zeros(20000, dtype=bool)
    root, unconfirmed = batch_float.exact_root(batch_float.Operand(false, sig, exp, false, false, exp.astype(np.uint64)))
    assert not unconfirmed.any()
    for i in range(20000):
        r, e = int(root.lo[i]), int(root.exp[i])
        # x = sig 2^exp, root r 2^e: compare x with r^2 2^(2e) and with (r -+ 1)^2 2^(2e).
        shift = int(exp[i]) - 2 * e
        x = int(sig[i]) << shift
        assert r.bit_length() >= 55
        floor_root = math.isqrt(x)
        if floor_root * floor_root == x:
            assert r == floor_root
        else:  # the sticky unit: r is odd and the root lies in (r - 1, r + 1)
            assert r & 1 and (r - 1) ** 2 < x < (r + 1) ** 2


# ---------------------------------------------------------------------------------------------
# Bit-level instructions against numpy
# ---------------------------------------------------------------------------------------------


def _random_bits(width: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.uint64 if width == 64 else np.uint32
    return rng.integers(0, 1 << 62, n, dtype=np.uint64).astype(dtype) * dtype(3) + rng.integers(0, 3, n).astype(dtype)


@pytest.mark.parametrize("width", (32, 64))
def test_bit_level_against_numpy(width):
    t = f"f{width}"
    float_type = np.float64 if width == 64 else np.float32
    a, b = _random_bits(width, 5000, 1), _random_bits(width, 5000, 2)
    fa, fb = a.view(float_type), b.view(float_type)
    number = ~np.isnan(fa)
    assert np.array_equal(evaluate_batch(f"copysign.{t}", [a, b]).bits, np.copysign(fb, fa).view(a.dtype))
    assert np.array_equal(evaluate_batch(f"abs.{t}", [a]).bits[number], np.abs(fa).view(a.dtype)[number])
    assert np.array_equal(evaluate_batch(f"neg.{t}", [a]).bits[number], np.negative(fa).view(a.dtype)[number])
    tiny = np.finfo(float_type).tiny
    subnormal = (np.abs(fa) < tiny) & (fa != 0)
    for op, want in {"finite": np.isfinite(fa), "infinite": np.isinf(fa), "notanumber": np.isnan(fa), "subnormal": subnormal}.items():
        assert np.array_equal(evaluate_batch(f"testp.{op}.{t}", [a]).bits.astype(bool), want)
    # min/max of non-NaN values that are not both zeros (numpy leaves the zero order open).
    both = number & ~np.isnan(fb) & ~((fa == 0) & (fb == 0))
    assert np.array_equal(evaluate_batch(f"min.{t}", [a, b]).bits[both], np.minimum(fa, fb).view(a.dtype)[both])
    assert np.array_equal(evaluate_batch(f"max.{t}", [a, b]).bits[both], np.maximum(fa, fb).view(a.dtype)[both])
