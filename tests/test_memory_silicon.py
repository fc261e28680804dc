"""The memory round (conformance/data/sm_90/memory.npz, recorded on an H200 -- and before on an H200
and an H100, kept as digests -- with
``conformance/silicon/memory_device.py``): ld, ld.global.nc, ldu, st, atom and red on global, shared,
local, const and param addresses and through the generic windows -- every scalar type, vectors, .b128, sub-word placement, the integer atomic
operations, cas.b16/.b128, exch.b128, cache operators and hints -- replayed record by record through
``semantics.instructions.execute`` on the memory image the kernel had; the address-map kernel's
cvta, mapa, getctarank and isspacep; and createpolicy's policies. Zero mismatches.

By default each form replays its first 12 records (the edge pairs lead) and the address map and
createpolicy rows in full; every record of every form is a heavy case (``PTXSPEC_HEAVY=all``).
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import numpy as np
import pytest

from ptxspec.conformance.silicon import memory_campaign, memory_device

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
PLAN = json.loads((DATA / memory_campaign.PLAN).read_text())
FORMS = {entry["name"]: entry for entry in PLAN["forms"]}


@pytest.fixture(scope="module")
def recording():
    return memory_campaign.records(DATA)


@pytest.fixture(scope="module")
def addresses(recording):
    return attrs.evolve(memory_campaign.address_map_of(recording["address_map_0"], 0), cluster_ctas=1)


def test_the_plan_is_the_campaign():
    """The recorded plan is what ``memory prepare`` makes today: the same forms in the same order
    with the same seeds, less those ptxas refused (atom/red .add.s64, which ptxas does not take)."""
    names = [f.name for f in memory_campaign.forms()]
    recorded = list(FORMS)
    assert [n for n in names if n in FORMS] == recorded
    assert {r["name"] for r in PLAN["rejected"]} == set(names) - set(recorded)
    assert all(".add.s64" in r["instruction"] for r in PLAN["rejected"])
    assert len(recorded) >= 370
    spaces = {entry["space"] for entry in PLAN["forms"]}
    assert spaces == {"global", "shared", "generic", "generic-shared", "local", "generic-local", "const", "generic-const", "param", "generic-param"}


def test_the_inputs_are_the_generators(recording):
    """Same seed, same bytes: the regions the replay rebuilds are those the chip had (the changed
    bytes lie only where the instruction wrote)."""
    for entry in list(PLAN["forms"])[::17]:
        regions, offsets, _ = memory_device.inputs(entry)
        changed = recording[f"{entry['name']}_changed"]
        assert changed.shape == regions.shape
        if entry["instruction"].startswith(("ld", "ldu")):
            assert not changed.any(), entry["name"]


def test_every_form_replays_its_first_records(recording, addresses):
    """Each form's first 12 records (where the edge pairs lead) -- one test for all forms, to keep
    the default run short; every record of every form is a heavy case."""
    failing = {}
    for name, entry in FORMS.items():
        replay = memory_campaign.replay_form(entry, recording, addresses, slice(0, 12))
        if replay.mismatches:
            failing[name] = replay.mismatches[:3]
    assert failing == {}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_replays_every_record(name, recording, addresses):
    replay = memory_campaign.replay_form(FORMS[name], recording, addresses)
    assert replay.records == len(recording[f"{name}_address"])
    assert replay.mismatches[:3] == ()


def test_the_address_map_is_the_model(recording):
    """cvta, mapa, getctarank and isspacep in a cluster of two CTAs, each row predicted from the
    CTA's window bases: a .shared::cta address is rank << 24 | offset, mapa moves by 1 << 24 a rank,
    the shared window spans 4 GiB, the local one 16 MiB, and the windows do not move between two
    launches (the parameters' may)."""
    assert memory_campaign.verify_address_map(recording["address_map_0"]) == []
    assert memory_campaign.verify_address_map(recording["address_map_1"]) == []
    assert memory_campaign._moved(recording) == []


def test_createpolicy_fractional_is_pinned_and_repeatable(recording):
    assert np.array_equal(recording["createpolicy_0"], recording["createpolicy_1"]) is False  # range policies carry the address
    assert memory_campaign.verify_createpolicy(recording["createpolicy_0"]) == []
    assert memory_campaign.verify_createpolicy(recording["createpolicy_1"]) == []
    assert memory_campaign.verify_createpolicy(recording["createpolicy_0"], profile="spec") == []
    rows = memory_campaign.createpolicy_rows()
    fractional = [i for i, row in enumerate(rows) if ".fractional." in row]
    assert np.array_equal(recording["createpolicy_0"][fractional], recording["createpolicy_1"][fractional])


def test_a_wrong_semantics_would_be_caught(recording, addresses):
    """The replay can fail: the same records against a form that differs (a sign-extending load
    read as zero-extending) give mismatches."""
    entry = dict(FORMS["global-ld.s8"], instruction="ld.global.u8")
    replay = memory_campaign.replay_form(entry, recording, addresses, slice(0, 48))
    assert replay.mismatches


@pytest.mark.parametrize("chip", ["h200", "h100"])
def test_the_other_recordings_gave_the_same_bits(chip):
    """The round's earlier recordings, kept as digests -- an H200 (267 forms) and an H100 (359
    forms) -- and this one, on an H200 (370 forms, the param space added): every destination
    register and every changed byte alike."""
    import hashlib

    digests = json.loads((DATA / f"memory-{chip}-digests.json").read_text())
    assert digests["gpu"].startswith(f"NVIDIA {chip.upper()}")
    assert json.loads((DATA / "meta-memory.json").read_text())["device"]["gpu"].startswith("NVIDIA H200")
    data = memory_campaign.records(DATA)
    mine = {k: hashlib.sha256(np.ascontiguousarray(data[k]).tobytes()).hexdigest() for k in digests["arrays"]}
    assert len(mine) >= {"h200": 534, "h100": 718}[chip]
    assert [k for k in mine if mine[k] != digests["arrays"][k]] == []
