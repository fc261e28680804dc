"""The atomic round (conformance/data/sm_90/atomic.npz, recorded on an H200 with
``conformance/silicon/atomic_device.py``): every floating-point atom/red .add of the dialect, on
global and shared memory, replayed against ``semantics.atomics.atomic_values`` under the sm_90 profile with
zero mismatches; and the manual's words on .f32 subnormals, checked on the recording itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import atomic_campaign, atomic_device
from ptxspec.profiles import profile_named

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"


@pytest.fixture(scope="module")
def recording():
    return np.load(DATA / atomic_device.OUTPUT_FILE)


@pytest.mark.parametrize("sample", [pytest.param(2048, id="edges"), pytest.param(None, id="every-pair", marks=pytest.mark.heavy)])
def test_the_recording_replays_with_no_mismatch(sample):
    """Every recorded atomic (a heavy case; by default the first 2048 pairs of each form, where
    every pair of edge values lies) against the semantics."""
    report = atomic_campaign.verify(DATA, sample)
    assert set(report) == {form.name for form in atomic_campaign.FORMS}
    assert {name: entry["mismatches"][:3] for name, entry in report.items() if entry["mismatches"]} == {}
    assert sum(entry["pairs"] for entry in report.values()) >= 24 * (sample or 4096)


def test_the_inputs_are_the_generators(recording):
    """The recorded inputs are what atomic_device.inputs makes from each form's seed (same seed,
    same bytes), so the round can be recorded again identically."""
    for i, form in enumerate(atomic_campaign.FORMS):
        a, b = atomic_device.inputs(form.element, form.bytes * 8, 1000 + i)
        assert np.array_equal(recording[f"{form.name}_a"], a.astype(recording[f"{form.name}_a"].dtype))
        assert np.array_equal(recording[f"{form.name}_b"], b.astype(recording[f"{form.name}_b"].dtype))


def test_f32_subnormals_flush_on_global_and_stay_on_shared(recording):
    """§9.7.13.5: "atom.add.f32 on global memory flushes subnormal inputs and results to
    sign-preserving zero; whereas atom.add.f32 on shared memory supports subnormal inputs and
    results": 1 + 1 (the smallest subnormals) is +0 on global memory, 2 on shared memory."""
    for space, expected in (("global", 0), ("shared", 2)):
        for opcode in ("atom", "red"):
            name = f"{opcode}-{space}-f32"
            a, b, memory = (recording[f"{name}_{part}"] for part in ("a", "b", "memory"))
            (at,) = np.nonzero((a == 1) & (b == 1))
            assert memory[at[0]] == expected, name


def test_the_atomic_nan_rule_is_pinned_with_its_evidence():
    sm_90 = profile_named("sm_90")
    assert set(sm_90.atomic_add_nan) == {("global", "f64"), ("shared", "f64"), ("bulk", "f64")}
    assert "sm_90/atomic.npz" in sm_90.evidence["atomic_add_nan"]
    assert "sm_90/async.npz" in sm_90.evidence["atomic_add_nan"]  # the bulk reduction's rule
    assert profile_named("spec").atomic_add_nan == {}
