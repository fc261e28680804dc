"""The TMA round (conformance/data/sm_90/tma.npz, recorded on an H100 with
``conformance/silicon/tma_device.py``): 320 tensor maps made by the CUDA driver (ranks 1-5, element
types of 1-8 bytes, every swizzle, traversal strides, zero and NaN fill), each loaded
(``cp.async.bulk.tensor...shared::cluster.global.tile.mbarrier::complete_tx::bytes``) and stored
(``...global.shared::cta.tile.bulk_group``) at a box inside, across and outside the tensor, and
replayed through the semantics (semantics/tensor_map.py, semantics/async_copy.py) under sm_90.

What the round showed: every load whose bounding box starts 16-byte aligned (§5.5.3.1) writes
exactly the bytes the model gives -- its rows at the swizzle span's pitch where they are shorter,
the OOB-NaN 0x7ff7 in every 16 bits -- and completes its mbarrier phase with the box's bytes; every
load and store that breaks the alignment faults, as do stores with a negative coordinate; a store
of rank 2 or more writes dimension 0 up to its row's bytes rounded up to 16 (the last three pinned
in the sm_90 profile). Every case replays.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import tma_campaign, tma_device

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
PLAN = json.loads((DATA / tma_campaign.PLAN).read_text())


@pytest.fixture(scope="module")
def report():
    return tma_campaign.verify(DATA)


def test_the_plan_is_the_campaign():
    """Same seed, same cases: the recorded plan is what ``tma prepare`` makes."""
    assert PLAN["cases"] == tma_campaign.cases()


def test_every_load_replays(report):
    loads = {name: [m for m in r.mismatches if m.startswith("load")] for name, r in report.items()}
    assert {name: m for name, m in loads.items() if m} == {}
    data = np.load(DATA / tma_device.files()["output"])
    completed = [c["name"] for c in PLAN["cases"] if f"{c['name']}_done" in data]
    assert len(completed) >= 100 and all(int(data[f"{n}_done"][0]) == 1 for n in completed)
    assert sum(1 for c in PLAN["cases"] if c["oob_fill"] == "nan" and c["name"] in completed) >= 20


def test_faults_are_the_predicted_refusals(report):
    """Every fault the chip showed is a refusal of the semantics (the §5.5.3.1 alignment, the
    profile's negative store coordinate) and every refusal a fault."""
    assert not [m for r in report.values() for m in r.mismatches if "faulted" in m or "refuse" in m]
    data = np.load(DATA / tma_device.files()["output"])
    assert sum(k.endswith("_load_fault") for k in data) >= 200 and sum(k.endswith("_store_fault") for k in data) >= 250


def test_every_store_replays(report):
    assert {name: r.mismatches for name, r in report.items() if r.mismatches} == {}


@pytest.mark.heavy
def test_the_pins_are_needed():
    """Under the manual alone (the spec profile) the stores with a negative coordinate or past a
    row end differ from the chip; the OOB-NaN is any NaN there, so the loads still replay."""
    spec = tma_campaign.verify(DATA, profile="spec")
    assert all(not any(m.startswith("load") for m in r.mismatches) for r in spec.values())
    assert sum(1 for r in spec.values() if any(m.startswith("store") for m in r.mismatches)) >= 60


def test_a_wrong_model_would_be_caught():
    """The replay can fail: the same records against a map with another swizzle differ."""
    data = np.load(DATA / tma_device.files()["output"])
    case = next(c for c in PLAN["cases"] if c["swizzle"] == "128B" and f"{c['name']}_done" in data and c["box_bytes"] >= 256)
    wrong = dict(case, swizzle="none")
    assert tma_campaign.replay_case(wrong, data).mismatches


# ---------------------------------------------------------------------------------------------
# The tma-more round (conformance/data/sm_90/tma-more.npz, an H100): 87 im2col loads of ranks 3-5
# (every swizzle, traversal strides, corners and offsets, zero and NaN fill) and 105 interleaved
# (16B and 32B) tile-mode maps, each loaded and stored.
# ---------------------------------------------------------------------------------------------

MORE_PLAN = json.loads((DATA / tma_device.files("tma-more")["plan"]).read_text())


@pytest.fixture(scope="module")
def more_report():
    return tma_campaign.verify(DATA, round_name="tma-more")


def test_the_more_plan_is_the_campaign():
    assert MORE_PLAN["cases"] == tma_campaign.cases(192, round_name="tma-more")
    modes = [(c.get("mode", "tile"), c["interleave"]) for c in MORE_PLAN["cases"]]
    assert modes.count(("im2col", "none")) == 87 and all(m in (("im2col", "none"), ("tile", "16B"), ("tile", "32B")) for m in modes)


def test_every_im2col_load_replays(more_report):
    """Every im2col load -- its bytes, its faults (a channel start off a 16-byte boundary) and its
    mbarrier completion -- as the semantics give it: N stepped by its traversal stride, pixels
    narrower than the swizzle span one per span."""
    im2col = [c["name"] for c in MORE_PLAN["cases"] if c.get("mode") == "im2col"]
    assert {name: more_report[name].mismatches for name in im2col if more_report[name].mismatches or more_report[name].not_modelled} == {}
    data = np.load(DATA / tma_device.files("tma-more")["output"])
    faults = [name for name in im2col if f"{name}_load_fault" in data]
    swizzled = [name for name in im2col if MORE_PLAN["cases"][int(name[4:])]["swizzle"] != "none" and f"{name}_shared" in data]
    n_strided = [name for name in im2col if MORE_PLAN["cases"][int(name[4:])]["element_strides"][-1] > 1 and f"{name}_shared" in data]
    assert len(faults) >= 20 and len(swizzled) >= 30 and len(n_strided) >= 10  # the readings the round taught are exercised


def test_interleaved_copies_replay_under_the_sm_90_reading(more_report):
    """The 105 interleaved maps of the round replay under the sm_90 reading
    (tensor_map.interleaved_box): every load's bytes and fault, every store. The kernel armed its
    mbarrier with the non-interleaved box's bytes, fewer than the chip sends for 87 of them: their
    phase completion (and the bytes still in flight when it completed) is not compared. Three
    loads read past the recorded buffer and are not compared either."""
    interleaved = {c["name"] for c in MORE_PLAN["cases"] if c["interleave"] != "none"}
    assert {name: more_report[name].mismatches for name in interleaved if more_report[name].mismatches} == {}
    assert not any(more_report[name].not_modelled for name in interleaved)
    assert sum(more_report[name].completion_open for name in interleaved) == 87
    assert {name for name in interleaved if more_report[name].unrecorded} == {"case124", "case133", "case166"}


def test_interleaved_copies_are_not_modelled_by_the_manual():
    """Under the manual alone (the spec profile) an interleaved copy is refused as not modelled:
    §5.5.6 gives no element address."""
    data = np.load(DATA / tma_device.files("tma-more")["output"])
    interleaved = [c for c in MORE_PLAN["cases"] if c["interleave"] != "none"]
    replays = [tma_campaign.replay_case(c, data, "spec") for c in interleaved[:10]]
    assert all(r.not_modelled and "interleave" in r.not_modelled for r in replays)


# ---------------------------------------------------------------------------------------------
# The tma-replace round (conformance/data/sm_90/tma-replace.npz, an H100): 160 driver-made tile maps,
# each changed in global memory by one tensormap.replace (global_address, box_dim, global_dim,
# global_stride, element_stride, swizzle_mode, fill_mode), made visible to the tensor-map proxy,
# and loaded through.
# ---------------------------------------------------------------------------------------------

REPLACE_PLAN = json.loads((DATA / tma_device.files("tma-replace")["plan"]).read_text())


def test_the_replace_plan_is_the_campaign():
    """Same seed, same cases; every drawn change moves other bytes or puts them elsewhere."""
    assert REPLACE_PLAN["cases"] == tma_campaign.cases(160, round_name="tma-replace")
    fields = {c["replace"]["field"] for c in REPLACE_PLAN["cases"]}
    assert fields >= {"global_address", "box_dim", "global_dim", "global_stride", "element_stride", "swizzle_mode", "fill_mode"}


def test_every_replaced_map_loads_as_the_semantics_say():
    """tensormap.replace (§9.7.9.26) then the load, through the semantics: all 160 replay --
    bytes, mbarrier completion, and the one fault (a box whose swizzled rows pass the CTA's shared
    memory) as a refusal."""
    report = tma_campaign.verify(DATA, round_name="tma-replace")
    assert {name: r.mismatches for name, r in report.items() if r.mismatches or r.not_modelled} == {}


def test_global_stride_ord_is_the_ordinal_among_the_strides():
    """The replace round's global_stride cases follow "ord k is the stride of dimension k + 1": under
    the other reading (ord names the dimension) the same recording does not replay."""
    import attrs

    from ptxspec.semantics import async_copy

    cases = [c for c in REPLACE_PLAN["cases"] if c["replace"]["field"] == "global_stride"]
    assert len(cases) >= 10
    original = async_copy._replaced

    def dimension_reading(tmap, field, ord_, value):
        if field == "global_stride" and 1 <= ord_ < tmap.rank:
            strides = list(tmap.global_strides)
            strides[ord_ - 1] = value
            return attrs.evolve(tmap, global_strides=tuple(strides))
        return original(tmap, field, ord_, value)

    data = np.load(DATA / tma_device.files("tma-replace")["output"])
    try:
        async_copy._replaced = dimension_reading
        replays = {c["name"]: tma_campaign.replay_case(c, data) for c in cases if c["replace"]["ord"] >= 1}
        differ = [name for name, r in replays.items() if r.mismatches or r.unrecorded]
    finally:
        async_copy._replaced = original
    assert len(differ) >= 3


@pytest.mark.parametrize("round_name", sorted(tma_campaign.ROUNDS))
def test_every_kernel_the_device_looks_up_is_in_the_module(round_name):
    """tma_device.py takes each kernel by name from the one module: a load and a store kernel per
    rank, the im2col loads of ranks 3-5, and a replace kernel per case of the replace rounds."""
    import re

    entries = set(re.findall(r"\.entry (\w+)\(", tma_campaign.module_ptx(round_name)))
    wanted = {f"tma_{kind}_{rank}d" for kind in ("load", "store") for rank in range(1, 6)} | {f"tma_load_im2col_{rank}d" for rank in range(3, 6)}
    plan = json.loads((DATA / tma_device.files(round_name)["plan"]).read_text())
    wanted |= {f"tma_replace_{c['name']}" for c in plan["cases"] if "replace" in c}
    assert entries == wanted


@pytest.mark.parametrize("round_name", ["tma-more", "tma-replace"])
def test_the_h200_recordings_replay_too(round_name):
    """The same bundles on an H200: every case as on the H100 (im2col, interleaved and replaced
    maps replay; the same loads read past the recorded buffer)."""
    assert json.loads((DATA / f"meta-{round_name}-h200.json").read_text())["device"]["gpu"].startswith("NVIDIA H200")
    report = tma_campaign.verify(DATA, round_name=round_name, output=f"{round_name}-h200.npz")
    h100 = tma_campaign.verify(DATA, round_name=round_name)
    assert {name: r.mismatches for name, r in report.items() if r.mismatches} == {}
    for field in ("not_modelled", "unrecorded"):
        assert {name for name, r in report.items() if getattr(r, field)} == {name for name, r in h100.items() if getattr(r, field)}


# ---------------------------------------------------------------------------------------------
# The tma-interleave round (conformance/data/sm_90/tma-interleave.npz, an H200, run twice with the
# same bytes): 192 interleaved tile maps drawn to test the sm_90 reading -- dimension 0's box,
# coordinate and traversal stride free, boxes along dimension rank-2 of several elements, strides
# that make rows run on into the next -- each load armed with the bytes that reading sends.
# ---------------------------------------------------------------------------------------------

INTERLEAVE_PLAN = json.loads((DATA / tma_device.files("tma-interleave")["plan"]).read_text())


@pytest.fixture(scope="module")
def interleave_report():
    return tma_campaign.verify(DATA, round_name="tma-interleave")


def test_the_interleave_plan_is_the_campaign():
    assert INTERLEAVE_PLAN["cases"] == tma_campaign.cases(192, round_name="tma-interleave")


def test_the_h100_recording_of_the_interleave_round_is_the_same():
    """The same bundle on an H100: every byte and fault as on the H200."""
    assert json.loads((DATA / "meta-tma-interleave-h100.json").read_text())["device"]["gpu"].startswith("NVIDIA H100")
    h200 = np.load(DATA / tma_device.files("tma-interleave")["output"])
    h100 = np.load(DATA / "tma-interleave-h100.npz")
    assert set(h100) == set(h200)
    assert [k for k in h200 if not k.endswith("_address") and not np.array_equal(h100[k], h200[k])] == []


def test_every_interleaved_copy_replays_exactly(interleave_report):
    """Every load's bytes and its mbarrier phase (armed with the reading's byte count, so a wrong
    count would leave it incomplete), every fault and every store, with nothing left uncompared."""
    assert {name: r for name, r in interleave_report.items() if r.mismatches or r.not_modelled or r.unrecorded or r.completion_open} == {}
    data = np.load(DATA / tma_device.files("tma-interleave")["output"])
    cases = INTERLEAVE_PLAN["cases"]
    loaded = [c for c in cases if f"{c['name']}_done" in data]
    assert len(loaded) >= 180 and all(int(data[f"{c['name']}_done"][0]) == 1 for c in loaded)
    assert sum(f"{c['name']}_global" in data for c in cases) >= 20
    # the reading's parts are exercised: dimension 0 strided, dimension rank-2 boxes of several elements
    assert sum(c["element_strides"][0] > 1 for c in loaded) >= 60
    assert sum(c["box_dims"][len(c["box_dims"]) - 2] > 1 for c in loaded) >= 120


@pytest.mark.parametrize(
    "change",
    [
        {"element_strides": "dimension 0 not strided"},
        {"box_dims": "dimension rank-2 stepped"},
    ],
)
def test_another_interleaved_reading_would_be_caught(change, monkeypatch):
    """The round tells the readings apart: the same records under a reading that ignores the
    traversal stride of dimension 0, or that steps dimension rank-2, do not replay exactly (bytes
    differ, or the copy sends more than the phase expects)."""
    import attrs

    from ptxspec.semantics import tensor_map as tm

    original = tm.interleaved_box

    def other(tmap, coords):
        if "element_strides" in change:
            return original(attrs.evolve(tmap, element_strides=(1, *tmap.strides[1:])), coords)
        stepped = tmap.box_dims[tmap.rank - 2]
        box = original(tmap, coords)
        if stepped == 1:
            return box
        # a second copy of every row at the next index of dimension rank-2
        shift = tmap.strides[tmap.rank - 2] * tmap.global_strides[tmap.rank - 3]
        moved = np.where(box.global_addresses >= 0, box.global_addresses + shift, -1)
        offsets = np.concatenate([box.shared_offsets, box.shared_offsets + box.shared_bytes])
        return tm.Box(box.element, offsets, np.concatenate([box.global_addresses, moved]))

    monkeypatch.setattr(tm, "interleaved_box", other)
    data = np.load(DATA / tma_device.files("tma-interleave")["output"])
    replays = [tma_campaign.replay_case(c, data) for c in INTERLEAVE_PLAN["cases"][:60]]
    assert sum(bool(r.mismatches or r.completion_open or r.unrecorded) for r in replays) >= 10  # what the round's test refuses


# ---------------------------------------------------------------------------------------------
# The tma-replace-interleave round (conformance/data/sm_90/tma-replace-interleave.npz, an H100): 64
# driver-made maps of rank 3-5 whose interleave layout one tensormap.replace.interleave_layout
# changes (none to 16B or 32B, 16B or 32B to none or the other), then a load through the changed
# map armed with the bytes the semantics say it sends.
# ---------------------------------------------------------------------------------------------

REPLACE_INTERLEAVE_PLAN = json.loads((DATA / tma_device.files("tma-replace-interleave")["plan"]).read_text())


def test_every_interleave_layout_replacement_replays():
    assert REPLACE_INTERLEAVE_PLAN["cases"] == tma_campaign.cases(64, round_name="tma-replace-interleave")
    report = tma_campaign.verify(DATA, round_name="tma-replace-interleave")
    assert {name: r for name, r in report.items() if r.mismatches or r.not_modelled or r.unrecorded or r.completion_open} == {}
    changes = {(c["interleave"], c["replace"]["value"]) for c in REPLACE_INTERLEAVE_PLAN["cases"]}
    assert changes >= {("none", 1), ("none", 2), ("16B", 0), ("32B", 0), ("32B", 1)}
    data = np.load(DATA / tma_device.files("tma-replace-interleave")["output"])
    assert sum(int(data[f"{c['name']}_done"][0]) for c in REPLACE_INTERLEAVE_PLAN["cases"] if f"{c['name']}_done" in data) >= 60


# ---------------------------------------------------------------------------------------------
# The tma-replace-rank round (conformance/data/sm_90/tma-replace-rank.npz, an H100): 64 driver-made
# tile maps whose rank one tensormap.replace.rank changes, then a load of the new rank.
# ---------------------------------------------------------------------------------------------

RANK_PLAN = json.loads((DATA / tma_device.files("tma-replace-rank")["plan"]).read_text())


def test_a_lowered_rank_reads_as_the_first_dimensions():
    """Every load through a map whose rank was lowered replays under the semantics (the first
    dimensions' fields kept); a raised rank is not evaluated, and only those cases are refused."""
    assert RANK_PLAN["cases"] == tma_campaign.cases(64, round_name="tma-replace-rank")
    report = tma_campaign.verify(DATA, round_name="tma-replace-rank")
    raised = {c["name"] for c in RANK_PLAN["cases"] if c["replace"]["value"] + 1 > len(c["global_dims"])}
    assert {name: r.mismatches for name, r in report.items() if r.mismatches} == {}
    assert {name for name, r in report.items() if r.not_modelled} == raised
    assert len(raised) >= 15 and len(report) - len(raised) >= 40
    lowered_to = {c["replace"]["value"] + 1 for c in RANK_PLAN["cases"] if c["name"] not in raised}
    assert lowered_to == {1, 2, 3, 4}
