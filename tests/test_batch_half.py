"""The batched paths of §9.7.4 half precision (semantics/batch_half.py): fma, neg, abs on .f16,
.f16x2, .bf16, .bf16x2, proved equal to the readable semantics on the vectors generator's inputs
for every legal form under both batched profiles, and checked against independent references
(MPFR for fma's single rounding, numpy/ml_dtypes for neg and abs)."""

from __future__ import annotations

from fractions import Fraction

import batch_agreement
import ml_dtypes
import numpy as np
import oracle_mpfr
import pytest

from ptxspec.semantics import batch
from ptxspec.semantics.batch_rounding import exact_sum
from ptxspec.semantics.instructions import evaluate
from ptxspec.semantics.numerics import canonical_nan
from ptxspec.spec.types import FORMATS

PROFILES = ("spec", "sm_90")
FMA = batch_agreement.legal_forms("fma.h")
SIGN = batch_agreement.legal_forms("neg.h") + batch_agreement.legal_forms("abs.h")
#: The families whose every legal form this chapter (batch.py or batch_half.py) covers.
FAMILIES = ("fma.h", "neg.h", "abs.h", "add.h", "sub.h", "mul.h", "min.h", "max.h")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("profile", PROFILES)
def test_every_legal_form_has_a_fast_path(family, profile):
    missing = [f for f in batch_agreement.legal_forms(family) if not batch.has_fast_path(f, profile)]
    assert not missing


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", FMA)
def test_fma_agrees(form, profile):
    batch_agreement.assert_agrees(form, profile, count=2000)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", SIGN)
def test_neg_abs_agree(form, profile):
    batch_agreement.assert_agrees(form, profile, count=1000)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", FMA + SIGN)
def test_agrees_long(form, profile):
    batch_agreement.assert_agrees(form, profile, count=30000, seed=7)


@pytest.mark.parametrize("form", ["fma.rn.oob.f16x2", "fma.rn.relu.oob.bf16", "fma.rn.f16x2", "neg.bf16x2"])
def test_contains_agrees(form):
    """BatchResult.contains (the any-NaN masks and the sets of .oob) agrees with the scalar check."""
    batch_agreement.contains_agrees(form, "spec", count=1000)


# ---------------------------------------------------------------------------------------------
# fma against MPFR
# ---------------------------------------------------------------------------------------------

_MPFR = {"f16": oracle_mpfr.F16, "bf16": oracle_mpfr.BF16}


def _relu(fmt, out):
    """.relu after the rounding: a NaN becomes the canonical NaN, anything with the sign bit +0.0."""
    if out == oracle_mpfr.NAN:
        return canonical_nan(FORMATS[fmt.name])
    return 0 if out & fmt.sign_bit else out


@pytest.mark.parametrize(
    "form", ["fma.rn.f16", "fma.rn.bf16", "fma.rn.ftz.f16", "fma.rn.sat.f16", "fma.rn.ftz.sat.f16", "fma.rn.relu.bf16", "fma.rn.ftz.relu.f16"]
)
def test_fma_matches_mpfr(form):
    """Each element is MPFR's correctly rounded a*b + c (binary16/bfloat16 with subnormals and the
    exponent range of the format), with .ftz, .sat and .relu applied as tests/oracle_mpfr.py
    reads them: operands on and beside every rounding boundary, subnormal results, overflow."""
    type_name = form.rsplit(".", 1)[1]
    fmt = _MPFR[type_name]
    ftz, sat, relu = ".ftz" in form, ".sat" in form, ".relu" in form
    operands = oracle_mpfr.sample_operands("fma", fmt, seed=1, n=3000)
    a, b, c = (np.array(column, dtype=np.uint16) for column in zip(*operands))
    (result,) = batch.evaluate_batch_all(form, [a, b, c], "spec")
    for i, ops in enumerate(operands):
        want = oracle_mpfr.reference("fma", fmt, "rn", ops, ftz=ftz, sat=sat)
        if relu:
            want = _relu(fmt, want)
        if want == oracle_mpfr.NAN:
            assert result.any_nan is not None and result.any_nan[i], (form, [hex(x) for x in ops])
        else:
            assert int(result.bits[i]) == want, (form, [hex(x) for x in ops], hex(int(result.bits[i])), hex(want))


def test_exact_sum_sticky_far_apart():
    """A product far below c (bf16's wide exponent range) changes the rounding of c only through
    its sign: c +- tiny rounds like c +- one unit at the sticky position."""
    fmt = oracle_mpfr.BF16
    one, half_ulp = 0x3F80, 0x3B80  # 1.0 and 2^-8 (half an ulp of 1.0 is 2^-8)
    cases = [
        (0x0001, 0x0001, one),  # 2^-266 + 1.0
        (0x8001, 0x0001, one),  # 1.0 - 2^-266: rounds to 1.0
        (half_ulp, 0x3F80, one),  # 1.0 + 2^-8: a tie, to even (1.0)
        (half_ulp, 0x3F81, one),  # just above the tie: up
        (0x8001, 0x0001, 0x3F81),  # just below 1 + 2^-7: stays
    ]
    a, b, c = (np.array(column, dtype=np.uint16) for column in zip(*cases))
    (result,) = batch.evaluate_batch_all("fma.rn.bf16", [a, b, c], "spec")
    for i, ops in enumerate(cases):
        assert int(result.bits[i]) == oracle_mpfr.reference("fma", fmt, "rn", ops)


def test_exact_sum_sticky_is_exact_when_close():
    """Addends within the window are summed exactly: the value is (-1)^s m 2^e of the true sum."""
    sa, sb = np.array([False, True]), np.array([True, True])
    ma, mb = np.array([(1 << 22) - 1, 3], dtype=np.int64), np.array([1, 0], dtype=np.int64)
    ea, eb = np.array([-40, 7], dtype=np.int64), np.array([-30, -133], dtype=np.int64)
    sign, m, e = exact_sum(sa, ma, ea, sb, mb, eb, span=22)
    for i in range(2):
        want = (-1) ** int(sa[i]) * Fraction(int(ma[i])) * Fraction(2) ** int(ea[i])
        want += (-1) ** int(sb[i]) * Fraction(int(mb[i])) * Fraction(2) ** int(eb[i])
        got = (-1) ** int(sign[i]) * Fraction(int(m[i])) * Fraction(2) ** int(e[i])
        assert got == want


# ---------------------------------------------------------------------------------------------
# neg and abs against numpy / ml_dtypes
# ---------------------------------------------------------------------------------------------

_NUMPY = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("form", ["neg.f16", "abs.f16", "neg.bf16", "abs.bf16"])
def test_neg_abs_match_numpy(form):
    """Every 16-bit input: numpy's (ml_dtypes') negation and absolute value on the host type, bit
    for bit, and any NaN for a NaN input (spec)."""
    opcode, type_name = form.split(".")
    every = np.arange(1 << 16, dtype=np.uint16)
    (result,) = batch.evaluate_batch_all(form, [every], "spec")
    host = every.view(_NUMPY[type_name])
    want = (np.negative(host) if opcode == "neg" else np.abs(host)).view(np.uint16)
    nan = np.isnan(host.astype(np.float32))
    assert np.array_equal(result.any_nan, nan)
    assert np.array_equal(result.bits[~nan], want[~nan])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", ["fma.rn.oob.f16x2", "fma.rn.relu.oob.bf16x2", "fma.rn.oob.f16"])
def test_oob_lanes_with_every_other_lane(form, profile):
    """An .oob lane with a NaN operand beside a lane of each kind -- fixed bits, an invalid
    0 * inf (any NaN at spec level), another NaN operand, the sm_90 OOB-NaN 0x7ff7 -- is what the
    scalar semantics gives (a set, or Lanes of a set and the other lane's result)."""
    fmt = FORMATS[form.rsplit(".", 1)[1].removesuffix("x2")]
    nan, inf, one = canonical_nan(fmt), fmt.exponent_field_max << fmt.mantissa_bits, (fmt.bias << fmt.mantissa_bits)
    lanes = [(nan, one, 0), (0, inf, one), (one, one, one), (0x7FF7, one, 0), (one, 0x7FF7, nan), (one, one, 0xFFF7)]
    packed = form.endswith("x2")
    triples = [(x, y) for x in lanes for y in lanes] if packed else [(x,) for x in lanes]
    sources = [np.array([sum(t[k][j] << (16 * (len(t) - 1 - k)) for k in range(len(t))) for t in triples], dtype=np.uint64) for j in range(3)]
    (result,) = batch.evaluate_batch_all(form, sources, profile)
    for i in range(len(triples)):
        want = evaluate(form, [int(s[i]) for s in sources], profile)
        assert (result.result(i),) == want, (form, profile, triples[i])
