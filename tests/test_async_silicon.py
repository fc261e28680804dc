"""The async round (conformance/data/sm_90/async.npz, recorded on an H100 with
``conformance/silicon/async_device.py``): cp.async, cp.async.bulk in each direction and with
multicast, cp.reduce.async.bulk (every operation and type ptxas takes), cp.async.bulk.prefetch,
st.async and red.async, each record a cluster of two CTAs replayed through
``semantics.instructions.execute`` -- both CTAs' shared regions, the global region and whether each
CTA's mbarrier phase completed -- and 1,024 mbarrier programs replayed step by step through the
registered mbarrier instructions. Zero mismatches.

By default each form replays its first 8 records and the first 128 programs; every record and
every program is a heavy case (``PTXSPEC_HEAVY=all``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import async_campaign, async_device
from ptxspec.conformance.silicon.__main__ import main
from ptxspec.semantics import mbarrier
from ptxspec.semantics.atomics import BULK_FLOAT_REDUCTIONS, reduction_value
from ptxspec.semantics.instructions import evaluate

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
PLAN = json.loads((DATA / async_campaign.PLAN).read_text())
FORMS = {entry["name"]: entry for entry in PLAN["forms"]}
F32_ADD = "cp.reduce.async.bulk.global.shared-cta.bulk_group.add.f32"
F64_ADD = "cp.reduce.async.bulk.global.shared-cta.bulk_group.add.f64"


@pytest.fixture(scope="module")
def recording():
    return async_campaign.records(DATA)


def test_the_plan_is_the_campaign():
    """The recorded plan is what ``async prepare`` makes today: the same forms in the same order with
    the same seeds, less those ptxas refused (operation/type pairs the manual does not list, .v4 of
    64-bit st.async), and the same mbarrier programs."""
    names = [f.name for f in async_campaign.forms()]
    assert [n for n in names if n in FORMS] == list(FORMS)
    assert {r["name"] for r in PLAN["rejected"]} == set(names) - set(FORMS)
    assert len(FORMS) == 90
    assert {entry["kind"] for entry in FORMS.values()} == set(async_campaign.KINDS)
    assert PLAN["programs"] == async_campaign.programs()


def test_the_inputs_are_the_generators(recording):
    """Same seed, same bytes: the recorded changes lie only where each form writes (a prefetch and
    a copy into the other CTA leave CTA 0's region as it was)."""
    for name, entry in FORMS.items():
        out, changed = recording[f"{name}_out"], recording[f"{name}_changed"]
        assert out.shape == (async_device.RECORDS, 2, async_device.OUT_ROW)
        if entry["kind"] in ("prefetch", "bulk-s2cluster", "reduce-s2cluster", "st.async", "red.async", "bulk-s2g", "reduce-s2g"):
            assert not out[:, 0, : async_device.REGION].any(), name
        if entry["kind"] not in ("bulk-s2g", "reduce-s2g"):
            assert not changed.any(), name
        assert out[:, :, async_device.REGION].all(), f"{name}: a phase did not complete"


def test_every_form_replays_its_first_records(recording):
    failing = {}
    for name, entry in FORMS.items():
        replay = async_campaign.replay_form(entry, recording, slice(0, 8))
        if replay.mismatches:
            failing[name] = replay.mismatches[:3]
    assert failing == {}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_replays_every_record(name, recording):
    replay = async_campaign.replay_form(FORMS[name], recording)
    assert replay.records == async_device.RECORDS
    assert replay.mismatches[:3] == ()


def _replay_programs(recording, indices) -> dict:
    programs = recording["mbarrier_program"]
    failing = {}
    for index in indices:
        wrong = async_campaign.replay_program(PLAN["programs"][index], programs[index])
        if wrong:
            failing[index] = wrong[:2]
    return failing


def test_the_first_mbarrier_programs_replay(recording):
    assert _replay_programs(recording, range(128)) == {}


@pytest.mark.heavy
@pytest.mark.parametrize("start", range(0, async_campaign.PROGRAMS, 128))
def test_every_mbarrier_program_replays(recording, start):
    assert _replay_programs(recording, range(start, start + 128)) == {}


def test_the_programs_reach_what_they_test(recording):
    """The programs are not idle: phases complete (both parities are seen waiting), arrive-ons
    return tokens with pending counts above one, and some phase completes by an expect-tx that
    brings a negative tx-count back to zero -- the step that separates the chip's rule from a model
    where only arrive-on and complete-tx complete a phase."""
    recorded = recording["mbarrier_program"]
    steps = [(p, k, code, arg) for p, program in enumerate(PLAN["programs"]) for k, (code, arg) in enumerate(program) if code]
    waits = {int(recorded[p][k]) >> 32 & 3 for p, k, _, _ in steps}
    assert waits == {1, 2}
    pending = [int(recorded[p][k]) & 0xFFFFFFFF for p, k, _, _ in steps]
    assert max(v for v in pending if v != async_device.NO_TOKEN) >= 3
    flips = [
        (p, k) for p, k, code, _ in steps if code == async_device.OPERATIONS["expect_tx"] and k and (int(recorded[p][k]) ^ int(recorded[p][k - 1])) >> 32 & 3
    ]
    assert len(flips) >= 10


def test_expect_tx_to_zero_completes_the_phase():
    """§9.7.13.15.6 as the chip shows it: complete-tx first (tx-count -16), the one arrival, then the
    expect-tx of 16 completes the phase; inside arrive.expect_tx no phase completes between the two."""
    state = mbarrier.complete_tx(mbarrier.init(1), 16)
    _, state = mbarrier.arrive(state)
    assert (state.phase_parity, state.tx_count) == (0, -16)
    assert mbarrier.expect_tx(state, 16).phase_parity == 1
    _, after = mbarrier.arrive(mbarrier.complete_tx(mbarrier.init(2), 16), 1, tx_count=16)
    assert (after.phase_parity, after.pending, after.tx_count) == (0, 1, 0)


def _element_pairs(recording, name: str, width: int):
    entry = FORMS[name]
    given = async_device.inputs(entry)
    after = recording[f"{name}_changed"] ^ given["global"]
    for i in range(async_device.RECORDS):
        dst, src, size = (int(v) for v in given["params"][i, :3])
        for k in range(0, size, width):
            old = int.from_bytes(given["global"][i, dst + k : dst + k + width].tobytes(), "little")
            value = int.from_bytes(given["shared"][i, 0, src + k : src + k + width].tobytes(), "little")
            yield old, value, int.from_bytes(after[i, dst + k : dst + k + width].tobytes(), "little")


def test_bulk_f32_add_keeps_subnormals_unlike_the_manuals_sentence(recording):
    """The manual: "the current implementation of cp.reduce.async.bulk.add.f32 flushes subnormal
    inputs and results to sign-preserving zero". The H100 does not: the pin
    (``Profile.bulk_reduce_add``) is what the recording needs, and the manual's instruction would
    miss elements of it."""
    pairs = list(_element_pairs(recording, F32_ADD, 4))
    manual = BULK_FLOAT_REDUCTIONS[("add", "f32")]
    assert manual == "add.rn.ftz.f32"
    missed = [(a, b, got) for a, b, got in pairs if evaluate(manual, [a, b], "sm_90")[0] != got]
    assert len(missed) >= 50
    assert all(reduction_value("add", a, b, ("f32",)) == got for a, b, got in pairs)
    assert any(got & 0x7F800000 == 0 and got & 0x7FFFFF for _, _, got in pairs)  # subnormal results were written


def test_bulk_f64_add_passes_the_sources_nan_unquieted(recording):
    """Every NaN element of the f64 bulk add: the source element's NaN if it is one, else the
    destination's, a signalling NaN left as it is (``atomic_add_nan[("bulk", "f64")]``)."""

    def is_nan(v: int) -> bool:
        return (v >> 52) & 0x7FF == 0x7FF and bool(v & ((1 << 52) - 1))

    nans = [(a, b, got) for a, b, got in _element_pairs(recording, F64_ADD, 8) if is_nan(a) or is_nan(b)]
    assert len(nans) >= 500
    assert all(got == (b if is_nan(b) else a) for a, b, got in nans)
    assert any(not (b >> 51) & 1 and is_nan(b) for _, b, _ in nans)  # signalling ones among them


def test_the_command_line_verifies_the_recording(capsys):
    assert main(["async", "verify", str(DATA), "--sample", "2"]) == 0
    out = capsys.readouterr().out
    assert "90 forms, 180 records replayed, 0 form(s) with mismatches" in out
    assert "mbarrier programs: 0 mismatching" in out


def test_a_tampered_record_is_caught(recording):
    """The replay can fail: one flipped byte of a shared region, of the global region and of a
    phase flag are each reported."""
    name = "cp.async.bulk.global.shared-cta.bulk_group"
    data = {key: np.array(recording[key]) for key in (f"{name}_out", f"{name}_changed")}
    data[f"{name}_changed"][0, int(async_device.inputs(FORMS[name])["params"][0, 0])] ^= 1
    data[f"{name}_out"][1, 1, 3] ^= 0x80
    data[f"{name}_out"][2, 0, async_device.REGION] = 0
    replay = async_campaign.replay_form(FORMS[name], data, slice(0, 3))
    assert [m.split(":")[0] for m in replay.mismatches] == ["record 0", "record 1", "record 2"]
    assert "global region" in replay.mismatches[0] and "CTA 1's shared region" in replay.mismatches[1] and "phase 0" in replay.mismatches[2]


def test_an_h200_recording_replays_too():
    """The same bundle on an H200 (async-h200.npz): the first records of every form and the first
    programs replay with zero mismatches."""
    meta = json.loads((DATA / "meta-async-h200.json").read_text())
    assert meta["device"]["gpu"].startswith("NVIDIA H200")
    report = async_campaign.verify(DATA, sample=8, output="async-h200.npz")
    assert {name: r.mismatches[:2] for name, r in report["forms"].items() if r.mismatches} == {}
    assert report["programs"] == {}
