"""The TMA round (conformance/data/sm_90/tma.npz, recorded on an H100 with
``conformance/silicon/tma_device.py``): 320 tensor maps made by the CUDA driver (ranks 1-5, element
types of 1-8 bytes, every swizzle, traversal strides, zero and NaN fill), each loaded
(``cp.async.bulk.tensor...shared::cluster.global.tile.mbarrier::complete_tx::bytes``) and stored
(``...global.shared::cta.tile.bulk_group``) at a box inside, across and outside the tensor, and
replayed through the semantics (semantics/tensor_map.py, semantics/async_copy.py) under sm_90.

What the round showed: every load whose bounding box starts 16-byte aligned (§5.5.3.1) writes
exactly the bytes the model gives -- its rows at the swizzle span's pitch where they are shorter --
and completes its mbarrier phase with the box's bytes; every load and store that breaks the
alignment faults, as do stores with a negative coordinate (pinned in the sm_90 profile). Ten
stores write bytes the model does not explain (:data:`KNOWN_STORE_DIFFERENCES`): an open problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import tma_campaign, tma_device

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
PLAN = json.loads((DATA / tma_campaign.PLAN).read_text())

#: The stores whose bytes the model does not give (nine with traversal strides above 1, one
#: .u8 box of 96-byte rows under the 128B swizzle): open, reported in the notes of issue 19.
KNOWN_STORE_DIFFERENCES = frozenset({"case011", "case022", "case060", "case071", "case121", "case192", "case214", "case218", "case301", "case303"})


@pytest.fixture(scope="module")
def report():
    return tma_campaign.verify(DATA)


def test_the_plan_is_the_campaign():
    """Same seed, same cases: the recorded plan is what ``tma prepare`` makes."""
    assert PLAN["cases"] == tma_campaign.cases()


def test_every_load_replays(report):
    loads = {name: [m for m in r.mismatches if m.startswith("load")] for name, r in report.items()}
    assert {name: m for name, m in loads.items() if m} == {}
    data = np.load(DATA / tma_device.OUTPUT_FILE)
    completed = [c["name"] for c in PLAN["cases"] if f"{c['name']}_done" in data]
    assert len(completed) >= 100 and all(int(data[f"{n}_done"][0]) == 1 for n in completed)


def test_faults_are_the_predicted_refusals(report):
    """Every fault the chip showed is a refusal of the semantics (the §5.5.3.1 alignment, the
    profile's negative store coordinate) and every refusal a fault."""
    assert not [m for r in report.values() for m in r.mismatches if "faulted" in m or "refuse" in m]
    data = np.load(DATA / tma_device.OUTPUT_FILE)
    assert sum(k.endswith("_load_fault") for k in data) >= 200 and sum(k.endswith("_store_fault") for k in data) >= 250


def test_stores_replay_except_the_known_open_ones(report):
    differing = {name for name, r in report.items() if any(m.startswith("store") for m in r.mismatches)}
    assert differing == KNOWN_STORE_DIFFERENCES


def test_a_wrong_model_would_be_caught():
    """The replay can fail: the same records against a map with another swizzle differ."""
    data = np.load(DATA / tma_device.OUTPUT_FILE)
    case = next(c for c in PLAN["cases"] if c["swizzle"] == "128B" and f"{c['name']}_done" in data and c["box_bytes"] >= 256)
    wrong = dict(case, swizzle="none")
    assert tma_campaign.replay_case(wrong, data).mismatches
