"""The ldmatrix / stmatrix / movmatrix recording (conformance/silicon/movement_campaign.py and
movement_device.py): the bundle is deterministic and assembles, the device loop writes what the
replay reads (run here with a numpy stand-in for CuPy), and the recorded sm_90 values agree with
the semantics (once conformance/data/sm_90/meta-movement.json exists)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import movement_campaign as mc
from ptxspec.conformance.silicon import movement_device as md
from ptxspec.semantics.matrix_data_movement import ldmatrix, movmatrix, stmatrix

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
HAS_PTXAS = shutil.which("ptxas") is not None


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------


def test_plan_covers_every_sm90a_form():
    """Planned: the 18 ldmatrix and 18 stmatrix .m8n8.b16 spellings and movmatrix; every other
    catalogue form is listed as not recordable."""
    entries, not_recordable = mc.plan(16)
    texts = {e["form"] for e in entries}
    expected = {
        f"{op}.sync.aligned.m8n8.{num}{trans}{ss}.b16"
        for op in ("ldmatrix", "stmatrix")
        for num in ("x1", "x2", "x4")
        for trans in ("", ".trans")
        for ss in ("", ".shared", ".shared::cta")
    }
    assert texts == expected | {"movmatrix.sync.aligned.m8n8.trans.b16"}
    assert len(entries) == 37
    assert all(".b8" in t or ".m16n16" in t or ".m8n16" in t or ".m16n8" in t for t in not_recordable)
    assert set(not_recordable) | texts == {f.text for f in mc.catalogue_forms()}
    # the spellings with a state space share the seed of the one without, stored against it
    by_name = {e["name"]: e for e in entries}
    for e in entries:
        if ".shared" in e["form"]:
            base = by_name[e["xor_with"]]
            assert base["form"] == e["form"].replace(".shared::cta", "").replace(".shared", "") and base["seed"] == e["seed"]
        else:
            assert e["xor_with"] is None
    assert len({e["seed"] for e in entries if e["xor_with"] is None}) == 13


def test_inputs_are_as_documented():
    entries, _ = mc.plan(64)
    ld = next(e for e in entries if e["opcode"] == "ldmatrix")
    st = next(e for e in entries if e["opcode"] == "stmatrix")
    a, b = md.inputs(ld), md.inputs(ld)
    assert all(np.array_equal(a[k], b[k]) for k in a)  # regenerated bit for bit
    rows = a["addresses"].astype(np.int64)
    assert a["image"].shape == (64, mc.LDMATRIX_IMAGE) and rows.shape == (64, 32)
    assert np.all(rows % 16 == 0) and rows.min() >= 0 and rows.max() <= mc.LDMATRIX_IMAGE - 16
    distinct = np.array([len(set(r)) for r in rows])
    assert np.all(distinct[1::4] == 32) and np.all(distinct[2::4] <= 4)  # distinct; heavy overlap
    assert np.any(rows == 0) and np.any(rows == mc.LDMATRIX_IMAGE - 16)
    s = md.inputs(st)
    assert all(len(set(r)) == 32 for r in s["addresses"])  # stmatrix rows never overlap
    assert set(s["addresses"][1].tolist()) == {16 * i for i in (*range(16), *range(112, 128))}
    assert s["registers"].shape == (64, 32, st["registers"]) and s["registers"].dtype == np.uint32
    assert len(np.unique(s["image"])) > 200  # random bytes


@pytest.mark.skipif(not HAS_PTXAS, reason="ptxas not installed")
def test_prepare_is_deterministic_and_ptxas_accepts_every_kernel(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    content = mc.prepare(one, 32)
    mc.prepare(two, 32)
    for name in (md.PLAN_FILE, md.CUBIN_FILE, md.PTX_FILE):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert content["rejected"] == {}
    assert len(content["entries"]) == 37
    # every sm_100a form is refused by ptxas on sm_90a as well
    assert all(v["ptxas_sm_90a"] != "accepted" for v in content["not_recordable"].values())
    assert all("not supported on .target 'sm_90a'" in v["ptxas_sm_90a"] for v in content["not_recordable"].values())


# ---------------------------------------------------------------------------------------------
# A fake device: numpy for CuPy, the semantics for the kernels
# ---------------------------------------------------------------------------------------------


class _Function:
    def __init__(self, form: str, opcode: str, corrupt: bool):
        self.form, self.opcode, self.corrupt = form, opcode, corrupt

    def __call__(self, grid, block, args):
        assert block == (32,)
        *inputs, out, n = args
        assert grid == (int(n),)
        for e in range(int(n)):
            if self.opcode == "ldmatrix":
                out[e] = ldmatrix(self.form, inputs[0][e], inputs[1][e].tolist())
            elif self.opcode == "stmatrix":
                out[e] = stmatrix(self.form, inputs[0][e], inputs[1][e].tolist(), inputs[2][e])
            else:
                out[e] = movmatrix(self.form, inputs[0][e][:, 0])[:, None]
        if self.corrupt:  # one wrong bit: execution 3, lane 5 (or byte 5), register 0, and one in
            # the first digest block: execution FULL + 7, lane 9 (byte 9), register 1 (0 for x1)
            out[(3, 5, 0) if out.ndim == 3 else (3, 5)] ^= 1
            if int(n) > mc.FULL:
                out[(mc.FULL + 7, 9, min(1, out.shape[2] - 1)) if out.ndim == 3 else (mc.FULL + 7, 9)] ^= 1


class _Module:
    def __init__(self, path, plan, corrupt):
        self.plan, self.corrupt = plan, corrupt

    def get_function(self, name):
        entry = next(e for e in self.plan["entries"] if e["kernel"] == name)
        return _Function(entry["form"], entry["opcode"], entry["form"] in self.corrupt)


class FakeCupy:
    """What movement_device.run uses of CuPy, on numpy."""

    uint32, uint8 = np.uint32, np.uint8

    def __init__(self, plan: dict, corrupt=()):
        self._plan, self._corrupt = plan, set(corrupt)

        class runtime:
            @staticmethod
            def deviceSynchronize():
                return None

        class cuda:
            pass

        cuda.runtime = runtime
        self.cuda = cuda

    def RawModule(self, path):
        return _Module(path, self._plan, self._corrupt)

    asarray = staticmethod(np.array)
    asnumpy = staticmethod(np.array)
    zeros = staticmethod(np.zeros)


def _fake_bundle(tmp_path: Path, executions: int) -> tuple[Path, dict]:
    entries, not_recordable = mc.plan(executions)
    plan = {"arch": "sm_90a", "ptxas": "none", "entries": entries, "rejected": {}, "not_recordable": {t: {"reason": r} for t, r in not_recordable.items()}}
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / md.PLAN_FILE).write_text(json.dumps(plan))
    (bundle / md.CUBIN_FILE).write_bytes(b"")
    return bundle, plan


def _fake_meta(cp):
    return {"gpu": "numpy stand-in", "compute_capability": "9.0"}


def test_fake_device_run_and_replay(tmp_path):
    bundle, plan = _fake_bundle(tmp_path, mc.FULL + 2 * mc.BLOCK)
    out = tmp_path / "out"
    meta = md.run(bundle, out, cp=FakeCupy(plan), meta_of=_fake_meta)
    assert sorted(p.name for p in out.iterdir()) == [md.META_FILE, md.OUTPUT_FILE]
    assert meta["executions"] == 37 * (mc.FULL + 2 * mc.BLOCK) and meta["whole_outputs_cut_to"] is None
    with np.load(out / md.OUTPUT_FILE) as stored:
        assert sorted(stored.files) == sorted(f"{e['name']}_{k}" for e in plan["entries"] for k in ("x", "digests"))
        for e in plan["entries"]:  # the stored differences are zero where the semantics agree
            x = stored[f"{e['name']}_x"]
            assert len(x) == mc.FULL and stored[f"{e['name']}_digests"].shape == (2,)
            if e["xor_with"]:
                assert not x.any()
            elif e["opcode"] == "stmatrix":
                written = 16 * 8 * e["registers"]  # bytes a store writes: 8 rows of 16 bytes per matrix
                assert np.all(np.count_nonzero(x, axis=1) <= written) and x.any()
    result = mc.verify(out)
    assert len(result["forms"]) == 37 and result["executions"] == 37 * (mc.FULL + 2 * mc.BLOCK)
    assert result["mismatching_forms"] == []
    # the recorded outputs decode to what the semantics gave
    _, recordings = mc.load(out)
    rec = recordings["stmatrix-m8n8-x4-trans-shared-b16"]
    assert np.array_equal(rec.whole[7], stmatrix(rec.entry["form"], rec.known["image"][7], rec.known["addresses"][7].tolist(), rec.known["registers"][7]))


def test_fake_device_mismatches_are_located(tmp_path):
    bundle, plan = _fake_bundle(tmp_path, mc.FULL + mc.BLOCK)
    bad = {"ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16", "stmatrix.sync.aligned.m8n8.x4.b16", "movmatrix.sync.aligned.m8n8.trans.b16"}
    out = tmp_path / "out"
    md.run(bundle, out, cp=FakeCupy(plan, corrupt=bad), meta_of=_fake_meta)
    result = mc.verify(out)
    # a corrupted base form shows in its own record only (its spellings' outputs are their own)
    assert set(result["mismatching_forms"]) == bad
    ld = result["forms"]["ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16"]
    assert ld["wrong_executions"] == 1 and ld["wrong_values"] == 1 and ld["wrong_blocks"] == 1
    assert {k: ld["located"][0][k] for k in ("execution", "lane", "register")} == {"execution": 3, "lane": 5, "register": 0}
    assert ld["located"][0]["expected"] ^ ld["located"][0]["recorded"] == 1
    # the wrong bit in the digest block is found from the digest alone
    block = ld["located"][1]
    assert block["block"] == 0 and block["executions"] == [mc.FULL, mc.FULL + mc.BLOCK]
    hit = [c for c in block["single_value_explanations"] if c["expected"] ^ c["implied"] == 1]
    assert [(c["execution"], c["lane"], c["register"]) for c in hit] == [(mc.FULL + 7, 9, 1)]
    st = result["forms"]["stmatrix.sync.aligned.m8n8.x4.b16"]
    assert (st["located"][0]["execution"], st["located"][0]["byte"]) == (3, 5) and st["wrong_blocks"] == 1
    assert any(c["execution"] == mc.FULL + 7 and c["byte"] == 9 for c in st["located"][1]["single_value_explanations"])
    from ptxspec.conformance.silicon.__main__ import main

    assert main(["movement", "verify", str(out)]) == 1


# ---------------------------------------------------------------------------------------------
# The recording
# ---------------------------------------------------------------------------------------------

RECORDED = (DATA / md.META_FILE).exists()


@pytest.fixture(scope="module")
def recording():
    return mc.load(DATA)


@pytest.mark.skipif(not RECORDED, reason="no sm_90 recording yet (conformance/data/sm_90/meta-movement.json)")
def test_recording_covers_the_plan(recording):
    meta, recordings = recording
    entries, not_recordable = mc.plan(meta["plan"]["entries"][0]["executions"])
    assert meta["plan"]["entries"] == entries  # the seeds and sizes the replay regenerates from
    assert all(e["executions"] >= 2000 for e in meta["plan"]["entries"])
    assert meta["whole_outputs_cut_to"] is None
    assert all(len(r.whole) == r.entry["full"] and len(r.digests) * r.entry["block"] == r.entry["executions"] - r.entry["full"] for r in recordings.values())
    assert meta["device"]["compute_capability"] == "9.0"
    assert set(meta["plan"]["not_recordable"]) == set(not_recordable)


def _recorded_names():
    if not RECORDED:
        return ["none"]
    return [e["name"] for e in json.loads((DATA / md.META_FILE).read_text())["plan"]["entries"]]


@pytest.mark.skipif(not RECORDED, reason="no sm_90 recording yet (conformance/data/sm_90/meta-movement.json)")
@pytest.mark.parametrize("name", _recorded_names())
def test_recording_sample_agrees(recording, name):
    """The executions stored whole of every recorded form (every address class), and the first
    digest block, against the semantics."""
    _, recordings = recording
    result = mc.compare(recordings[name], blocks=range(1))
    assert result["wrong_executions"] == 0 and result["wrong_blocks"] == 0, result["located"][:5]


@pytest.mark.heavy
@pytest.mark.skipif(not RECORDED, reason="no sm_90 recording yet (conformance/data/sm_90/meta-movement.json)")
@pytest.mark.parametrize("name", _recorded_names())
def test_recording_agrees(recording, name):
    _, recordings = recording
    result = mc.compare(recordings[name])
    assert result["wrong_executions"] == 0 and result["wrong_blocks"] == 0, result["located"][:5]
