"""Replay the H100/H200 (sm_90) recordings in conformance/data/sm_90/ against the semantics.

The recordings are ground truth made by conformance/silicon/record.py on a real GPU; every form
the catalogue knows must agree with them under the sm_90 profile: bit for bit for the exact forms,
within the manual's bound for the .approx forms.
"""

from __future__ import annotations

import pytest

from ptxspec.conformance.silicon import replay

RECORDING = replay.load()
FORMS = sorted(RECORDING.forms)


def test_recording_names_its_hardware():
    meta = RECORDING.meta
    assert meta["compute_capability"] == "9.0"
    assert "H100" in meta["gpu"] or "H200" in meta["gpu"]
    assert meta["driver_version"] > 0 and meta["samples_per_form"] >= 1024


def test_every_recorded_form_is_known():
    unknown = [t for t in FORMS if not replay.supported(t)]
    assert not unknown, f"{len(unknown)} recorded forms have no semantics: {unknown[:20]}"


@pytest.mark.parametrize("text", FORMS)
def test_sm90_agrees(text):
    if not replay.supported(text):
        pytest.fail(f"{text}: recorded on sm_90 but unknown to the catalogue/semantics")
    mismatches = []
    for m in replay.replay_form(RECORDING.forms[text]):
        mismatches.append(m)
        if len(mismatches) >= 5:
            break
    assert not mismatches, "\n".join(
        f"{text} #{m.index}: inputs {[hex(x) for x in m.inputs]} observed {[hex(x) for x in m.observed]} expected {m.expected}"
        for m in mismatches
    )


def test_rejected_forms_are_not_available_on_sm90():
    """Forms ptxas refused for sm_90a when the campaign was assembled must be illegal here too, or
    legal only on a later target."""
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.errors import PtxSpecError

    available = []
    for text in RECORDING.rejected:
        try:
            form = parse(text)
        except PtxSpecError:
            continue
        if form.target.sm <= 90:
            available.append(f"{text} ({form.target})")
    assert not available, f"ptxas rejected these for sm_90a but the catalogue allows them there: {available}"


def test_h100_and_h200_agree():
    """Both sm_90 chips were recorded with the same campaign; every output must be the same bits."""
    h100 = replay.load(replay.DATA / "sm_90_h100")
    assert "H100" in h100.meta["gpu"] and "H200" in RECORDING.meta["gpu"]
    assert sorted(h100.forms) == FORMS
    differing = [
        text
        for text in FORMS
        if any((x != y).any() for x, y in zip(h100.forms[text].inputs + h100.forms[text].outputs, RECORDING.forms[text].inputs + RECORDING.forms[text].outputs))
    ]
    assert not differing, f"H100 and H200 differ on {differing[:10]}"
