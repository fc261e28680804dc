"""The documentation's checked examples, run as tests (no Sphinx needed).

The instruction reference (docs/_ext/ptxspec_reference.py) checks its worked examples against an
independent oracle (docs/_ext/ptxspec_oracle.py) while the docs are built. Here the same checks run in
the test suite, the oracle's encoder is itself checked against ml_dtypes and struct, and the
checks are shown to fail when an expectation is wrong.
"""

from __future__ import annotations

import struct
import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptxspec.spec.types import FORMATS

DOCS_EXT = Path(__file__).resolve().parent.parent / "docs" / "_ext"
sys.path.insert(0, str(DOCS_EXT))

import ptxspec_examples as checked_examples  # noqa: E402
import ptxspec_oracle as oracle  # noqa: E402
import ptxspec_reference  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The oracle's encoder, against ml_dtypes and struct
# ---------------------------------------------------------------------------------------------

ML_DTYPES = {
    "e4m3": (ml_dtypes.float8_e4m3fn, 8),
    "e5m2": (ml_dtypes.float8_e5m2, 8),
    "e2m3": (ml_dtypes.float6_e2m3fn, 6),
    "e3m2": (ml_dtypes.float6_e3m2fn, 6),
    "e2m1": (ml_dtypes.float4_e2m1fn, 4),
    "ue8m0": (ml_dtypes.float8_e8m0fnu, 8),
    "bf16": (ml_dtypes.bfloat16, 16),
    "f16": (np.float16, 16),
}


def _values(dtype, bits: int) -> list[tuple[int, float]]:
    raw = np.arange(1 << bits, dtype=np.uint16 if bits > 8 else np.uint8)
    with np.errstate(invalid="ignore"):  # the NaN encodings
        values = raw.view(dtype).astype(np.float64).tolist()
    return list(zip(range(1 << bits), values))


@pytest.mark.parametrize("name", sorted(ML_DTYPES))
def test_encoder_agrees_with_ml_dtypes_on_every_encoding(name):
    dtype, bits = ML_DTYPES[name]
    fmt = FORMATS[name]
    checked = 0
    for pattern, value in _values(dtype, bits):
        if not np.isfinite(value) or value == 0:
            continue
        assert oracle.encode_float(fmt, Fraction(value)) == pattern, (name, hex(pattern), value)
        checked += 1
    assert checked >= (1 << bits) // 2 - 2


def test_encoder_agrees_with_ue4m3_as_positive_e4m3():
    for pattern, value in _values(ml_dtypes.float8_e4m3fn, 8):
        if pattern < 0x7F and value != 0:
            assert oracle.encode_float(FORMATS["ue4m3"], Fraction(value)) == pattern


@pytest.mark.parametrize("name, width, code", [("f32", 32, "f"), ("f64", 64, "d")])
def test_encoder_agrees_with_struct(name, width, code):
    rng = np.random.default_rng(7)
    patterns = rng.integers(0, 1 << min(width, 63), size=4000, dtype=np.uint64).tolist()
    for pattern in patterns:
        pattern = int(pattern) & ((1 << width) - 1)
        value = struct.unpack(f"<{code}", pattern.to_bytes(width // 8, "little"))[0]
        if value != value or value in (float("inf"), float("-inf")) or value == 0:
            continue
        assert oracle.encode_float(FORMATS[name], Fraction(value)) == pattern


def test_encoder_tf32_is_f32_with_low_bits_clear():
    rng = np.random.default_rng(8)
    for pattern in rng.integers(0, 1 << 32, size=2000, dtype=np.uint64).tolist():
        pattern = int(pattern) & ~0x1FFF & 0xFFFFFFFF
        value = struct.unpack("<f", pattern.to_bytes(4, "little"))[0]
        if value != value or abs(value) == float("inf") or value == 0:
            continue
        assert oracle.encode_float(FORMATS["tf32"], Fraction(value)) == pattern


@pytest.mark.parametrize(
    "name, value",
    [("f32", 1 + Fraction(1, 2**24)), ("e4m3", Fraction(480)), ("e2m1", Fraction(5)), ("ue8m0", Fraction(3)), ("ue4m3", Fraction(-1)), ("f16", Fraction(1, 3))],
)
def test_encoder_refuses_what_the_format_cannot_hold_exactly(name, value):
    assert oracle.encode_float(FORMATS[name], value) is None


# ---------------------------------------------------------------------------------------------
# The reference's checks
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built():
    # Builds every reference page and checks every worked example (about two minutes): the
    # documentation build (``.ci/run``'s last step) does the same on every CI run, so here the
    # tests that need it are heavy.
    ptxspec_reference.ORACLE_COUNT[0] = 0
    return ptxspec_reference.build_pages()


@pytest.mark.heavy
def test_reference_has_no_problems(built):
    pages, failures, counts = built
    assert not failures, "\n".join(failures)
    assert counts["stated"] == len(checked_examples.EXAMPLES)
    assert counts["oracle_forms"] > 0


@pytest.mark.heavy
def test_reference_has_a_page_per_opcode(built):
    from ptxspec.spec.catalogue import CATALOGUE

    pages, _, _ = built
    operations = ptxspec_reference.operations()  # tcgen05: a page per operation besides the opcode's
    operation_pages = {f"{ptxspec_reference._slug(o)}.rst" for o in operations.values()}
    assert set(pages) == {"index.rst"} | {f"{ptxspec_reference._slug(o)}.rst" for o in CATALOGUE.opcodes} | operation_pages
    for family in CATALOGUE.families():
        assert family.syntax() in pages[f"{ptxspec_reference._slug(family.opcode)}.rst"]
        if family.key in operations:
            assert family.syntax() in pages[f"{ptxspec_reference._slug(operations[family.key])}.rst"]


def test_a_wrong_stated_example_is_caught():
    wrong = checked_examples.Example("add.rn.f32", (oracle.f32(1.0), oracle.f32(2.0)), (checked_examples.Bits(oracle.f32(4.0)),), "wrong on purpose")
    failures = ptxspec_reference.BuildFailure()
    ptxspec_reference.stated_rows([wrong], failures)
    assert len(failures) == 1 and "0x40800000" in failures[0]


def test_a_wrong_oracle_is_caught(monkeypatch):
    from ptxspec.spec.catalogue import parse

    monkeypatch.setitem(oracle.OPERATIONS, "add", lambda a, b: a + b + 1)
    failures = ptxspec_reference.BuildFailure()
    rows, why_not = ptxspec_reference.oracle_rows(parse("add.rn.f32"), failures)
    assert rows and why_not is None
    assert failures and "exact-value oracle expects" in failures[0]


def test_the_dashboard_counts_from_the_data():
    """docs/dashboard.rst's tables come from the repository: every family it counts as recorded is a
    catalogue family, and the rounds CI replays put the big chapters on it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))
    import ptxspec_dashboard

    recorded = ptxspec_dashboard.recorded_families()
    assert len(recorded) >= 200
    assert {"mma.f16", "wgmma.f16", "ldmatrix", "ld", "atom", "cp.async.bulk.tensor.global_to_shared_cluster", "mbarrier.arrive.count"} <= recorded
