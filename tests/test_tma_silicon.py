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


def test_interleaved_copies_are_refused_as_not_modelled(more_report):
    """The chip refutes the non-interleaved formula for interleaved maps (bytes, byte counts and
    faults differ), and the manual gives no other: the semantics refuse every such copy as not
    modelled, and nothing else."""
    interleaved = {c["name"] for c in MORE_PLAN["cases"] if c["interleave"] != "none"}
    assert {name for name, r in more_report.items() if r.not_modelled} == interleaved
    assert all("interleave" in more_report[name].not_modelled for name in interleaved)


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
        differ = [c["name"] for c in cases if c["replace"]["ord"] >= 1 and tma_campaign.replay_case(c, data).mismatches]
    finally:
        async_copy._replaced = original
    assert len(differ) >= 3


@pytest.mark.parametrize("round_name", sorted(tma_campaign.ROUNDS))
def test_every_kernel_the_device_looks_up_is_in_the_module(round_name):
    """tma_device.py takes each kernel by name from the one module: a load and a store kernel per
    rank, the im2col loads of ranks 3-5, and a replace kernel per case of the replace round."""
    import re

    entries = set(re.findall(r"\.entry (\w+)\(", tma_campaign.module_ptx(round_name)))
    wanted = {f"tma_{kind}_{rank}d" for kind in ("load", "store") for rank in range(1, 6)} | {f"tma_load_im2col_{rank}d" for rank in range(3, 6)}
    if round_name == "tma-replace":
        wanted |= {f"tma_replace_{c['name']}" for c in REPLACE_PLAN["cases"]}
    assert entries == wanted


@pytest.mark.parametrize("round_name", ["tma-more", "tma-replace"])
def test_the_h200_recordings_replay_too(round_name):
    """The same bundles on an H200: every case as on the H100 (im2col and replaced maps replay,
    interleaved maps are refused as not modelled)."""
    assert json.loads((DATA / f"meta-{round_name}-h200.json").read_text())["device"]["gpu"].startswith("NVIDIA H200")
    report = tma_campaign.verify(DATA, round_name=round_name, output=f"{round_name}-h200.npz")
    h100 = tma_campaign.verify(DATA, round_name=round_name)
    assert {name: r.mismatches for name, r in report.items() if r.mismatches} == {}
    assert {name for name, r in report.items() if r.not_modelled} == {name for name, r in h100.items() if r.not_modelled}
