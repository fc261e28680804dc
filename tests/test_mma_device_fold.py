"""The mma device script (conformance/silicon/mma_device.py) without a GPU: its one recording loop
behind the four rounds, run against an emulated CuPy, and its shared SplitMix64.

* Each round, fed a bundle made of committed H100 recordings (a few plan entries of
  ``conformance/data/sm_90/meta-*.json``, their designed probes from the recorded npz) and an
  emulated GPU whose kernels return the H100's D (the recorded D; for the digest rounds the recorded
  kept D and, for the rest, the exact integer model, which the recorded digests confirm), writes
  the committed recording again: the same files, keys in the same order, dtypes, shapes and
  values, and the same meta fields but the device's and the round's label. The replay side
  (mma_campaign.load, with the round) reads what it wrote.
* The random stream is SplitMix64 of a counter, checked against a Python-integer SplitMix64.
* As files on the device machine (no ptxspec there), the script imports exhaustive_device from its
  own folder and writes what the package module writes; with no command it prints its usage and
  exits 2.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import emulated_gpu
import numpy as np
import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import mma_device as md

SILICON = Path(md.__file__).resolve().parent
DATA = SILICON.parent / "data" / "sm_90"
DEVICE_FIELDS = {"gpu", "compute_capability", "driver_version", "cuda_runtime_version", "nvidia_smi"}
M64 = (1 << 64) - 1

#: A numpy-backed stand-in for CuPy (a file, so that a script run as a subprocess imports it
#: too). A kernel stores ``D[kernel]`` where a test set one, else a hash of its input registers.
FAKE_CUPY = """
import types as _types

import numpy as _np

D = {}
LAUNCHES = []


def __getattr__(name):
    return getattr(_np, name)


asarray = asnumpy = _np.asarray


class RawModule:
    def __init__(self, path):
        self.path = path

    def get_function(self, kernel):
        def launch(grid, block, args):
            *inputs, d, n = args
            LAUNCHES.append((kernel, grid, block, [x.dtype.name for x in inputs], d.shape, d.dtype.name, int(n)))
            if kernel in D:
                d[...] = D[kernel]
                return
            h = _np.zeros(d.shape[0], dtype=_np.uint64)
            for x in inputs:
                h = h * _np.uint64(1099511628211) + x.reshape(x.shape[0], -1).astype(_np.uint64).sum(axis=1)
            d[...] = (h[:, None, None] + _np.arange(d[0].size, dtype=_np.uint64).reshape(d.shape[1:])).astype(d.dtype)
        return launch


cuda = _types.SimpleNamespace(runtime=_types.SimpleNamespace(
    deviceSynchronize=lambda: None, getDeviceProperties=lambda i: {"name": b"emulated", "major": 9, "minor": 0},
    driverGetVersion=lambda: 0, runtimeGetVersion=lambda: 0))
"""


def _fake_cupy(tmp_path: Path):
    folder = tmp_path / "fake"
    folder.mkdir(exist_ok=True)
    (folder / "cupy.py").write_text(FAKE_CUPY)
    (folder / "ptxspec.py").write_text("raise ImportError('no ptxspec on the device machine')\n")
    spec = importlib.util.spec_from_file_location("cupy", folder / "cupy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return folder, module


# ---------------------------------------------------------------------------------------------
# The four rounds write the committed recordings again
# ---------------------------------------------------------------------------------------------

#: round -> (bundle stem, recording stem, entries taken from the recording, kept-count field).
#: The entries span both files of round 1, 64-bit registers (f64), both sparsity selectors, the
#: ordered-metadata form (spo) and .satfinite integers.
CASES = {
    "mma": ("mma", "mma", ["m16n8k16-f32-f16-f16-f32", "m8n8k4-f64-f64-f64-f64", "m16n8k32-s32-s8-s8-s32"], None),
    "mma-sp": ("sparse", "mma-sp", ["sp-m16n8k32-f32-f16-f16-f32-f1", "sp-m16n8k64-s32-u8-s8-s32-satfinite-f0", "spo-m16n8k32-f32-f16-f16-f32-f0"], None),
    "mma-more": ("more", "mma-more", ["m16n8k16-s32-s8-u8-s32", "m16n8k32-s32-s8-s8-s32-satfinite"], "full"),
    "mma-sp-more": ("sparse-more", "mma-sp-more", ["sp-m16n8k32-s32-s8-s8-s32-f0", "sp-m16n8k32-s32-s8-s8-s32-f1"], "keep"),
}


def _recorded(stem: str) -> tuple[dict, dict[str, dict[str, np.ndarray]]]:
    """The committed meta and arrays (per file name, in stored order) of one recording."""
    meta = json.loads((DATA / f"meta-{stem}.json").read_text())
    files = {}
    for f in sorted(DATA.glob(f"{stem}-[0-9]*.npz")):
        with np.load(f) as z:
            files[f.name] = {k: z[k] for k in z.files}
    return meta, files


def _silicon_d(command: str, entry: dict, inputs: list[np.ndarray], arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The D the H100 stored for every mma of ``entry``: recorded, or (round 2, past the kept mma)
    the exact integer model, checked here against the recorded digests."""
    d = arrays[f"{entry['name']}_d"]
    if command in ("mma", "mma-sp"):
        return d
    kept = d.shape[0]
    if command == "mma-more":
        rest = mc.more_expected(mc.combination_named(entry["name"]), *(x[kept:] for x in inputs))
    else:
        combo = mc.combination_named(entry["combination"])
        a, b, c, e = inputs
        rec = mc.SparseRecording(combo, entry["selector"], entry["name"], a, b, c, e, None, entry["probes"])
        rest = mc.sparse_model_registers(rec, select=slice(kept, None))
    assert np.array_equal(md.block_digests(np, rest, entry.get("block", md.DIGEST_BLOCK)), arrays[f"{entry['name']}_digests"])
    return np.concatenate([d, rest.astype(d.dtype)])


def _bundle(command: str, tmp_path: Path, fake) -> tuple[Path, dict, dict[str, dict[str, np.ndarray]]]:
    """A bundle of the chosen entries of a committed recording; the fake GPU primed with their D.
    Returns the bundle, the committed meta and the committed arrays of those entries, per file."""
    stem, out_stem, names, _ = CASES[command]
    meta, files = _recorded(out_stem)
    entries = [e for e in meta["combinations"] if e["name"] in names]
    assert len(entries) == len(names)
    inputs = md.sparse_inputs if "-sp" in command else md.combination_inputs
    probes, wanted = {}, {}
    for entry in entries:
        file = f"{out_stem}-{entry['file']}.npz"
        arrays = files[file]
        mine = {k: v for k, v in arrays.items() if k.rsplit("_", 1)[0] == entry["name"]}
        wanted.setdefault(file, {}).update(mine)
        probes.update({k: v for k, v in mine.items() if k.rsplit("_", 1)[1] in {"a", "b", "c", "e"}})
        fake.D[entry["kernel"]] = _silicon_d(command, entry, inputs(entry, mine), arrays)
    bundle = emulated_gpu.write_bundle(tmp_path, stem, entries, probes, meta["rejected"])
    # the committed order of keys within each file, restricted to these entries
    ordered = {f: {k: files[f][k] for k in files[f] if k in keys} for f, keys in wanted.items()}
    return bundle, meta, ordered


needs_data = pytest.mark.skipif(not (DATA / "meta-mma-sp-more.json").exists(), reason="no committed mma recordings")


@needs_data
@pytest.mark.parametrize("command", sorted(CASES))
def test_command_writes_the_committed_recording_again(command, tmp_path, monkeypatch):
    _, fake = _fake_cupy(tmp_path)
    bundle, meta, wanted = _bundle(command, tmp_path, fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    out = tmp_path / "out"
    md.record(md.ROUNDS[command], bundle, out)
    out_stem = CASES[command][1]
    assert sorted(p.name for p in out.iterdir()) == sorted([*wanted, f"meta-{out_stem}.json"])
    for name, arrays in wanted.items():
        with np.load(out / name) as z:
            assert list(z.files) == list(arrays)
            for k, want in arrays.items():
                got = z[k]
                assert (got.dtype, got.shape) == (want.dtype, want.shape), k
                assert np.array_equal(got, want), k
    written = json.loads((out / f"meta-{out_stem}.json").read_text())
    assert list(written) == list(meta)
    chosen = [e for e in meta["combinations"] if e["name"] in CASES[command][2]]
    # the label says which round made it: the recorded one predates the round names
    assert written["campaign"] == md.ROUNDS[command].campaign and f"round {command}:" in written["campaign"]
    mine = DEVICE_FIELDS | {"campaign"}
    assert {k: v for k, v in written.items() if k not in mine} == {**{k: v for k, v in meta.items() if k not in mine}, "combinations": chosen}
    # one warp per mma, four warps a block; the registers of every input as the plan describes them
    for kernel, grid, block, dtypes, d_shape, d_dtype, n in fake.LAUNCHES:
        entry = next(e for e in chosen if e["kernel"] == kernel)
        ops = entry["operands"]
        assert n == entry["probes"] + entry["random"] == d_shape[0] and grid == ((n + 3) // 4,) and block == (128,)
        assert dtypes[:3] == ["uint64" if ops[o]["register_bits"] == 64 else "uint32" for o in "abc"] and dtypes[3:] == (["uint32"] if "-sp" in command else [])
        assert d_shape[1:] == (32, ops["d"]["registers"]) and d_dtype == ("uint64" if ops["d"]["register_bits"] == 64 else "uint32")


@needs_data
@pytest.mark.parametrize("command", sorted(CASES))
def test_replay_reads_what_the_command_wrote(command, tmp_path, monkeypatch):
    """The loaders of mma_campaign regenerate every mma's inputs from the written meta and probes,
    and find D (and the digests) where the command put them."""
    _, fake = _fake_cupy(tmp_path)
    bundle, meta, _ = _bundle(command, tmp_path, fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    out = tmp_path / "out"
    md.record(md.ROUNDS[command], bundle, out)
    entries = {e["name"]: e for e in meta["combinations"] if e["name"] in CASES[command][2]}
    kernels = {e["name"]: e["kernel"] for e in entries.values()}
    loaded = mc.load(out, mc.ROUNDS[command])
    if command == "mma-sp-more":
        recs = {r.name: (r.recording, r) for r in loaded}
    else:
        recs = {r.name: (r, r) for r in loaded}
    assert set(recs) == set(entries)
    for name, (rec, whole) in recs.items():
        entry, silicon = entries[name], fake.D[kernels[name]]
        n = entry["probes"] + entry["random"]
        assert rec.a.shape[0] == rec.b.shape[0] == rec.c.shape[0] == n and rec.probes == entry["probes"]
        kept = n if CASES[command][3] is None else entry["probes"] + entry[CASES[command][3]]
        assert np.array_equal(rec.d, silicon[:kept])
        if kept < n:
            assert np.array_equal(whole.digests, md.block_digests(np, silicon[kept:], entry.get("block", md.DIGEST_BLOCK)))


# ---------------------------------------------------------------------------------------------
# One SplitMix64
# ---------------------------------------------------------------------------------------------


_splitmix64 = emulated_gpu.splitmix64  # the shared Python-integer oracle


@pytest.mark.parametrize("seed, operand, count, offset", [(0, 0, 5, 0), (0x2F6A91C3, 3, 7, 123456), ((1 << 32) - 1, 4, 4, (1 << 40) + 5)])
def test_stream_is_splitmix64_of_a_counter(seed, operand, count, offset):
    """``_stream``: SplitMix64 (exhaustive_device's, the one copy) of ``offset + i`` plus the
    SplitMix64 of the key ``seed << 8 | operand``, modulo 2^64."""
    base = _splitmix64((seed << 8) | operand)
    want = [_splitmix64((offset + i + base) & M64) for i in range(count)]
    assert md._stream(seed, operand, count, offset).tolist() == want
    assert md.exhaustive_device.splitmix64 is not None and not hasattr(md, "splitmix64")


# ---------------------------------------------------------------------------------------------
# The command line, as on the device machine
# ---------------------------------------------------------------------------------------------


def _device_folder(tmp_path: Path) -> Path:
    """The device scripts side by side, as a prepare command copies them into a bundle."""
    folder = tmp_path / "side"
    folder.mkdir()
    for name in ("mma_device.py", "exhaustive_device.py", "wgmma_device.py"):
        shutil.copy(SILICON / name, folder / name)
    return folder


def _script(args: list[str], fake_folder: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if fake_folder is not None:  # the stand-in cupy, and a ptxspec that cannot be imported
        env["PYTHONPATH"] = str(fake_folder)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)


def test_usage_without_a_command():
    for args in ([], ["run-bogus", "b", "o"], ["run", "b"], ["run", "b", "o", "mma-later"]):
        done = _script([str(SILICON / "mma_device.py"), *args])
        assert done.returncode == 2, done.stderr
        assert "run BUNDLE OUT [ROUND]" in done.stdout and "exhaustive_device.py" in done.stdout


def test_script_beside_exhaustive_device_without_ptxspec(tmp_path):
    """``python3 mma_device.py run BUNDLE OUT mma-more`` in a folder with exhaustive_device.py and no
    ptxspec importable writes what the package's module writes (same fake GPU); wgmma_device.py,
    which imports both, still starts there."""
    fake_folder, fake = _fake_cupy(tmp_path)
    side = _device_folder(tmp_path)
    combos = [c for c in mc.MORE_COMBINATIONS if c.a == "s8"][:2]
    plan, arrays, _ = mc.ROUND_2.plan([(f"k{i}", c) for i, c in enumerate(combos)], md.FULL_RANDOM + 2 * md.DIGEST_BLOCK)
    bundle = emulated_gpu.write_bundle(tmp_path, "more", plan, arrays)
    done = _script([str(side / "mma_device.py"), "run", str(bundle), str(tmp_path / "there"), "mma-more"], fake_folder)
    assert done.returncode == 0, done.stderr
    md.record(md.MORE, bundle, tmp_path / "here", cp=fake)
    for name in ("mma-more-0.npz",):
        with np.load(tmp_path / "there" / name) as there, np.load(tmp_path / "here" / name) as here:
            assert list(there.files) == list(here.files) == [f"{c.name}_{k}" for c in combos for k in ("a", "b", "c", "d", "digests")]
            for k in here.files:
                assert there[k].dtype == here[k].dtype and np.array_equal(there[k], here[k]), k
            assert all(here[f"{c.name}_digests"].shape == (2,) for c in combos)
    there, here = (json.loads((tmp_path / d / "meta-mma-more.json").read_text()) for d in ("there", "here"))
    assert there == here and there["combinations"] == plan
    done = _script([str(side / "wgmma_device.py")], fake_folder)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
