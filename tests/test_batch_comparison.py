"""The batched paths of §9.7.6 comparison and selection and §9.7.7 half-precision comparison
(semantics/batch_comparison.py): setp, set, selp, slct and setp/set on .f16/.bf16 and their x2
types, proved equal to the readable semantics on the vectors generator's inputs (every legal form
of selp and slct, a seeded sample of the others by default, all of them as heavy cases), and
checked against independent references: Python integers for the integer comparisons, the host's
IEEE comparisons (numpy, ml_dtypes for bf16) for the floating-point ones."""

from __future__ import annotations

import batch_agreement
import ml_dtypes
import numpy as np
import pytest

from ptxspec.conformance import vectors
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import as_form
from ptxspec.spec.types import INTEGER_TYPES

PROFILES = ("spec", "sm_90")
FAMILIES = ("setp", "set", "selp", "slct", "setp.half", "set.half")
#: Forms checked in the default run per family (and profile); all of them in the heavy run.
SAMPLE = {"setp": 12, "set": 12, "selp": 11, "slct": 12, "setp.half": 12, "set.half": 16}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("profile", PROFILES)
def test_every_legal_form_has_a_fast_path(family, profile):
    missing = [f for f in batch_agreement.legal_forms(family) if not batch.has_fast_path(f, profile)]
    assert not missing


def _sampled(seed: int) -> list[tuple[str, str]]:
    return [(form, profile) for profile in PROFILES for family in FAMILIES for form in batch_agreement.sample_forms(family, SAMPLE[family], seed)]


@pytest.mark.parametrize(("form", "profile"), _sampled(0))
def test_agrees(form, profile):
    batch_agreement.assert_agrees(form, profile, count=800)


def _every() -> list[tuple[str, str]]:
    return [(form, profile) for profile in PROFILES for family in FAMILIES for form in batch_agreement.legal_forms(family)]


@pytest.mark.heavy
@pytest.mark.parametrize(("form", "profile"), _every())
def test_agrees_every_form(form, profile):
    batch_agreement.assert_agrees(form, profile, count=600, seed=5)


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------

_HOST = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def _host_compare(op: str, type_name: str, a: np.ndarray, b: np.ndarray, ftz: bool) -> np.ndarray:
    """``a op b`` with the host's IEEE 754 comparisons (a NaN compares unordered: False for every
    ordered predicate, numpy's ``!=`` included once NaNs are masked out), on values whose subnormals
    are zeroed first under .ftz."""
    host = _HOST[type_name]
    width = np.dtype(host).itemsize * 8
    dtype = np.dtype(f"uint{width}")
    x, y = a.astype(dtype), b.astype(dtype)
    if ftz:
        exponent = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[type_name]
        sign = dtype.type(1 << (width - 1))
        x, y = (np.where(v & dtype.type(exponent) == 0, v & sign, v) for v in (x, y))
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when it widens a NaN
        fx, fy = x.view(host).astype(np.float64), y.view(host).astype(np.float64)
    unordered = np.isnan(fx) | np.isnan(fy)
    if op == "num":
        return ~unordered
    if op == "nan":
        return unordered
    base = op[:-1] if op.endswith("u") else op
    with np.errstate(invalid="ignore"):
        ordered = _ORDERED[base](fx, fy) & ~unordered
    return ordered | unordered if op.endswith("u") else ordered


def _python_compare(op: str, type_name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a op b`` on Python integers: two's complement values for .sN, unsigned for .uN/.bN."""
    t = INTEGER_TYPES[type_name]

    def value(bits: int) -> int:
        return bits - (1 << t.bits) if t.signed and bits >> (t.bits - 1) else bits

    relation = {"eq": int.__eq__, "ne": int.__ne__, "lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__}
    rel = relation[_UNSIGNED.get(op, op)]
    return np.array([rel(value(x), value(y)) for x, y in zip(a.tolist(), b.tolist())], dtype=bool)


_FLOAT_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


@pytest.mark.parametrize("op", _FLOAT_OPS)
@pytest.mark.parametrize("spelling", ["setp.{op}.f32", "setp.{op}.ftz.f32", "setp.{op}.f64", "setp.{op}.f16", "setp.{op}.ftz.f16x2", "setp.{op}.bf16x2"])
def test_float_comparisons_match_host(op, spelling):
    """p (and the packed q) against the host's IEEE comparison of the same encodings."""
    form = as_form(spelling.format(op=op))
    type_name = form["type"]
    a, b = vectors.inputs(form, 3000, 0)
    results = batch.evaluate_batch_all(form, [a, b], "spec")
    ftz = "ftz" in form
    if type_name.endswith("x2"):
        element = type_name[:-2]
        low = _host_compare(op, element, a & 0xFFFF, b & 0xFFFF, ftz)
        high = _host_compare(op, element, a >> 16, b >> 16, ftz)
        assert np.array_equal(results[0].bits, low) and np.array_equal(results[1].bits, high)
    else:
        want = _host_compare(op, type_name, a, b, ftz)
        assert np.array_equal(results[0].bits, want)
        if len(results) == 2:
            assert np.array_equal(results[1].bits, ~want)


_INTEGER_FORMS = [
    f"setp.{op}.{t}"
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
    for t in ("s16", "u16", "b32", "s32", "u64", "s64")
    if f"setp.{op}.{t}" in batch_agreement.legal_forms("setp")
]


@pytest.mark.parametrize("form_text", _INTEGER_FORMS)
def test_integer_comparisons_match_python(form_text):
    form = as_form(form_text)
    a, b = vectors.inputs(form, 2000, 0)
    p, q = batch.evaluate_batch_all(form, [a, b], "spec")
    want = _python_compare(form["cmp"], form["type"], a, b)
    assert np.array_equal(p.bits, want) and np.array_equal(q.bits, ~want)


@pytest.mark.parametrize("boolop", ["and", "or", "xor"])
def test_boolop_with_c(boolop):
    """p = t BoolOp c and q = !t BoolOp c, against Python's operators on the reference t."""
    form = as_form(f"setp.ltu.{boolop}.f32")
    a, b, c = vectors.inputs(form, 2000, 0)
    p, q = batch.evaluate_batch_all(form, [a, b, c], "spec")
    t = _host_compare("ltu", "f32", a, b, False).astype(int).tolist()
    op = {"and": int.__and__, "or": int.__or__, "xor": int.__xor__}[boolop]
    assert p.bits.tolist() == [op(x, int(y)) for x, y in zip(t, c.tolist())]
    assert q.bits.tolist() == [op(1 - x, int(y)) for x, y in zip(t, c.tolist())]


def test_set_half_packs_lanes():
    """set.lt.f16x2.f16x2: the low half-words' result in the low half, 1.0 (0x3c00) for true."""
    a = np.array([0x3C00_0000, 0x0000_3C00], dtype=np.uint32)
    b = np.array([0x0000_3C00, 0x3C00_0000], dtype=np.uint32)
    (d,) = batch.evaluate_batch_all("set.lt.f16x2.f16x2", [a, b], "spec")
    assert d.bits.tolist() == [0x0000_3C00, 0x3C00_0000]


def test_slct_reads_c_as_the_manual_says():
    """-0.0 selects a, a NaN c selects b, a negative subnormal c selects b, and a under .ftz."""
    c = np.array([0x80000000, 0x7FC00000, 0x80000001, 0xBF800000], dtype=np.uint32)
    a, b = np.full(4, 1, dtype=np.uint32), np.full(4, 2, dtype=np.uint32)
    (d,) = batch.evaluate_batch_all("slct.u32.f32", [a, b, c], "spec")
    (d_ftz,) = batch.evaluate_batch_all("slct.ftz.u32.f32", [a, b, c], "spec")
    assert d.bits.tolist() == [1, 2, 2, 2] and d_ftz.bits.tolist() == [1, 2, 1, 2]
