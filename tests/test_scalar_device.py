"""The scalar rounds' device script (conformance/silicon/scalar_device.py) without a GPU.

Fed a bundle made from a committed recording and an emulated CuPy whose kernels return the
recorded outputs, ``run`` writes the committed recording again, under the names the repository
uses (``meta-ROUND.json``, ``ROUND-*.npz``): the float-cvt round regenerates every input from its
seed (so the device draws the recorded inputs), a catalogue round copies its input groups; the
replay (:func:`ptxspec.conformance.silicon.replay.load`) reads what it wrote. ``digest`` gives the
per-form output digests the repository keeps of a second chip's run.
"""

from __future__ import annotations

import json
from pathlib import Path

import emulated_gpu
import numpy as np
import pytest

from ptxspec.conformance.silicon import catalogue_campaign, float_cvt_campaign, replay, scalar_device
from ptxspec.conformance.silicon.campaign import load_arrays

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
#: Meta fields the device fills in (the chip) or that name the code that made the recording.
DEVICE_FIELDS = {"gpu", "compute_capability", "driver_version", "cuda_runtime_version", "nvidia_smi", "campaign"}


def _cupy(outputs: dict[str, list[np.ndarray]]):
    """An emulated CuPy whose kernel ``name`` writes ``outputs[name]`` (one array per destination)."""

    def kernel(name):
        def launch(grid, block, args):
            *_, n = args
            for dev, recorded in zip(args[len(args) - 1 - len(outputs[name]) : -1], outputs[name]):
                dev[...] = recorded.astype(np.uint64)
            assert grid == ((int(n) + 127) // 128,) and block == (128,)

        return launch

    module = emulated_gpu.emulated_cupy(kernel)
    module.uint64 = np.uint64
    return module


def _same_files(out: Path, names: list[str]) -> None:
    for name in names:
        with np.load(out / name) as there, np.load(DATA / name) as here:
            assert list(there.files) == list(here.files), name
            for k in here.files:
                assert there[k].dtype == here[k].dtype and np.array_equal(there[k], here[k]), (name, k)


def test_float_cvt_run_writes_the_recording_again(tmp_path):
    meta = json.loads((DATA / "meta-float-cvt.json").read_text())
    arrays = load_arrays(sorted(DATA.glob("float-cvt-[0-9]*.npz")))
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    kernels = {float_cvt_campaign.kernel_name(i): text for i, text in enumerate(meta["forms"])}
    (bundle / "kernels.json").write_text(json.dumps(kernels))
    (bundle / "rejected.json").write_text((DATA / "rejected-float-cvt.json").read_text())
    (bundle / "campaign.cubin").write_bytes(b"")
    outputs = {name: [arrays[f"f{i}_out{k}"] for k in range(8) if f"f{i}_out{k}" in arrays] for i, name in enumerate(kernels)}
    out = tmp_path / "out"
    scalar_device.run_float_cvt(bundle, out, cp=_cupy(outputs))
    files = sorted(p.name for p in DATA.glob("float-cvt-[0-9]*.npz"))
    assert sorted(p.name for p in out.iterdir()) == sorted([*files, "meta-float-cvt.json", "rejected-float-cvt.json"])
    _same_files(out, files)  # the inputs regenerated here are the recorded ones, bit for bit
    written = json.loads((out / "meta-float-cvt.json").read_text())
    assert {k: v for k, v in written.items() if k not in DEVICE_FIELDS} == {k: v for k, v in meta.items() if k not in DEVICE_FIELDS}
    assert (out / "rejected-float-cvt.json").read_text() == (DATA / "rejected-float-cvt.json").read_text()
    again = replay.load(out)
    assert list(again.campaigns) == ["float-cvt"] and len(again.forms) == len(set(meta["forms"]))


@pytest.mark.parametrize("name", ["fma-oob-probes"])
def test_catalogue_round_run_writes_the_recording_again(tmp_path, name):
    meta = json.loads((DATA / f"meta-{name}.json").read_text())
    arrays = load_arrays(DATA / f for f in meta["files"])
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    forms = []
    for i, text in enumerate(meta["forms"]):
        outs = [arrays[f"f{i}_out{k}"] for k in range(8) if f"f{i}_out{k}" in arrays]
        forms.append(
            {
                "kernel": f"k{i:04d}",
                "text": text,
                "chapter": meta["chapters"][i],
                "group": meta["groups"][i],
                "n": len(outs[0]),
                "warp": meta["warp"][i],
                "n_in": meta["inputs_per_form"][i],
                "immediates": meta["immediates"][i],
                "dst_bits": [o.dtype.itemsize * 8 for o in outs],
            }
        )
    round_ = catalogue_campaign.ROUNDS[name]
    plan = {"round": name, "campaign": round_.label, "output_files": round_.output_files, "forms": forms}
    (bundle / f"{name}-plan.json").write_text(json.dumps(plan))
    (bundle / f"{name}-inputs.npz").write_bytes((DATA / f"{name}-inputs.npz").read_bytes())
    (bundle / f"rejected-{name}.json").write_text((DATA / f"rejected-{name}.json").read_text())
    (bundle / f"{name}.cubin").write_bytes(b"")
    outputs = {f["kernel"]: [arrays[f"f{i}_out{k}"] for k in range(len(f["dst_bits"]))] for i, f in enumerate(forms)}
    out = tmp_path / "out"
    written = scalar_device.run_plan(bundle, out, name, cp=_cupy(outputs))
    assert sorted(p.name for p in out.iterdir()) == sorted([*meta["files"], f"meta-{name}.json", f"rejected-{name}.json"])
    _same_files(out, meta["files"])
    assert {k: v for k, v in written.items() if k not in DEVICE_FIELDS} == {k: v for k, v in meta.items() if k not in DEVICE_FIELDS}
    assert written["campaign"] == round_.label
    digests = scalar_device.output_digests(out, name)
    recording = replay.load(DATA)
    assert digests["forms"] == {t: replay.output_digest(recording.forms[t]) for t in meta["forms"]}
