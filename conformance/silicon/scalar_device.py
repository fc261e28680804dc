"""The scalar campaigns on the GPU machine (numpy and CuPy only; ptxspec is not imported here),
and the whole campaign in one command.

::

    python3 conformance/silicon/scalar_device.py run BUNDLE OUT [ROUND]      # one scalar round
    python3 conformance/silicon/scalar_device.py digest OUT ROUND > DIGESTS.json   # a second chip's run
    python3 conformance/silicon/scalar_device.py run-all BUNDLE OUT          # every prepared part

``ROUND`` is ``float-cvt`` (the default; the bundle of ``python -m ptxspec.conformance.silicon
float-cvt prepare BUNDLE``: ``campaign.cubin``, ``kernels.json``, ``rejected.json``) or a round of
the catalogue campaign (``catalogue prepare BUNDLE --round ROUND``: ``ROUND.cubin``,
``ROUND-plan.json``, ``ROUND-inputs.npz``, ``rejected-ROUND.json``). ``run`` launches every kernel
on its inputs and writes the recording under the names ``conformance/data/sm_90/`` uses:

* float-cvt: the seeded inputs are regenerated here (``float_cvt_campaign.inputs_for``, beside this
  file); ``float-cvt-<i>.npz`` holds the inputs and outputs of every form (``f<i>_in<k>``,
  ``f<i>_out<k>``), ``meta-float-cvt.json`` the GPU, driver, CUDA runtime and the forms;
* a catalogue round: the inputs are stored once per input group (``g<j>_in<k>``, copied from the
  bundle), the outputs per form (``f<i>_out<k>``) in the plan's number of files
  (``ROUND-outputs-<p>.npz``, or ``ROUND-outputs.npz``), the meta in ``meta-ROUND.json``.

``digest`` prints, for a round recorded on a second chip, the SHA-256 of each form's outputs with
the chip's meta: the repository keeps that instead of a second copy of the data (the replay
compares it with the first chip's outputs).

``run-all`` runs every part that ``python -m ptxspec.conformance.silicon all prepare BUNDLE``
prepared into ``BUNDLE/PART/``, in the order of ``BUNDLE/parts.json`` (per part its device
script and command), each into ``OUT/PART/``. exhaustive_device.py and float_cvt_campaign.py
must lie beside this file.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device
    from ptxspec.conformance.silicon.float_cvt_campaign import FORMS, KIND_BITS, NAME, SAMPLES, Entry, inputs_for
except ImportError:  # on the GPU machine, without ptxspec: run as a script beside its siblings
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore
    from float_cvt_campaign import FORMS, KIND_BITS, NAME, SAMPLES, Entry, inputs_for  # type: ignore

#: The assembler line of every scalar recording's meta.
ASSEMBLER = "ptxas -arch=sm_90a (CUDA 13.0), see {rejected} for forms ptxas refused"


def _dtype(bits: int) -> str:
    return {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}[8 if bits <= 8 else bits]


def _cupy(cp):
    if cp is None:
        import cupy

        return cupy
    return cp


def run_float_cvt(bundle: Path, out: Path, cp=None) -> dict:
    """The float-cvt round: regenerate each form's inputs, launch its kernel (one thread per
    vector) and write ``float-cvt-<i>.npz`` (at most ~12 MiB each), ``meta-float-cvt.json`` and
    ``rejected-float-cvt.json``."""
    cp = _cupy(cp)
    by_text = {e.text: e for e in FORMS}
    kernels = json.loads((bundle / "kernels.json").read_text())
    module = cp.RawModule(path=str(bundle / "campaign.cubin"))
    arrays: dict[str, np.ndarray] = {}
    texts: list[str] = []
    for name, text in kernels.items():
        entry: Entry = by_text[text]
        n = entry.count(SAMPLES)
        inputs = inputs_for(entry, SAMPLES)
        d_in = [cp.asarray(col.astype(np.uint64)) for col in inputs]
        d_out = [cp.zeros(n, dtype=cp.uint64) for _ in entry.dst]
        module.get_function(name)(((n + 127) // 128,), (128,), (*d_in, *d_out, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        i = len(texts)
        texts.append(text)
        for k, (col, kind) in enumerate(zip(inputs, entry.src)):
            arrays[f"f{i}_in{k}"] = col.astype(_dtype(KIND_BITS[kind]))
        for k, (dev, kind) in enumerate(zip(d_out, entry.dst)):
            arrays[f"f{i}_out{k}"] = cp.asnumpy(dev).astype(_dtype(KIND_BITS[kind]))
    meta = {**exhaustive_device.device_meta(cp), "assembler": ASSEMBLER.format(rejected=f"rejected-{NAME}.json"), "samples_per_form": SAMPLES, "forms": texts}
    out.mkdir(parents=True, exist_ok=True)
    per_file = max(1, len(texts) // 4 + 1)  # four files: each comes back from the device machine
    for part in range(0, len(texts), per_file):
        chunk = {k: v for k, v in arrays.items() if part <= int(k[1:].split("_")[0]) < part + per_file}
        np.savez_compressed(out / f"{NAME}-{part // per_file}.npz", **chunk)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    (out / f"meta-{NAME}.json").write_text(json.dumps(meta, indent=1))
    (out / f"rejected-{NAME}.json").write_text((bundle / "rejected.json").read_text())
    print(f"recorded {len(texts)} forms x {SAMPLES} on {meta['gpu']} ({meta['nvidia_smi']})")
    return meta


def run_plan(bundle: Path, out: Path, name: str, cp=None) -> dict:
    """A catalogue round ``name``: run every kernel of its plan on its input group (a warp form:
    its own inputs, the active lanes last) and write the outputs, the inputs and the meta."""
    cp = _cupy(cp)
    plan = json.loads((bundle / f"{name}-plan.json").read_text())
    with np.load(bundle / f"{name}-inputs.npz") as z:
        inputs = {k: z[k] for k in z.files}
    module = cp.RawModule(path=str(bundle / f"{name}.cubin"))
    device: dict[str, object] = {}
    outputs: dict[str, np.ndarray] = {}
    for i, e in enumerate(plan["forms"]):
        keys = [f"g{e['group']}_in{k}" for k in range(e["n_in"])]
        for k in keys:
            if k not in device:
                device[k] = cp.asarray(inputs[k].astype(np.uint64))
        n = e["n"]
        d_out = [cp.zeros(n, dtype=cp.uint64) for _ in e["dst_bits"]]
        module.get_function(e["kernel"])(((n + 127) // 128,), (128,), (*[device[k] for k in keys], *d_out, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        for j, (dev, bits) in enumerate(zip(d_out, e["dst_bits"])):
            outputs[f"f{i}_out{j}"] = cp.asnumpy(dev).astype(_dtype(bits))
    forms = plan["forms"]
    meta = {
        **exhaustive_device.device_meta(cp),
        "assembler": ASSEMBLER.format(rejected=f"rejected-{name}.json"),
        "campaign": plan["campaign"],
        "samples_per_form": max(e["n"] for e in forms if not e["warp"]),
        "forms": [e["text"] for e in forms],
        "chapters": [e["chapter"] for e in forms],
        "groups": [e["group"] for e in forms],
        "inputs_per_form": [e["n_in"] for e in forms],
        "immediates": [e["immediates"] for e in forms],
        "warp": [e["warp"] for e in forms],
        "files": [f"{name}-inputs.npz"],
    }
    out.mkdir(parents=True, exist_ok=True)
    parts = plan["output_files"]
    per_file = len(forms) // parts + 1
    for p in range(parts):
        chunk = {k: v for k, v in outputs.items() if p * per_file <= int(k[1:].split("_")[0]) < (p + 1) * per_file}
        file = f"{name}-outputs-{p}.npz" if parts > 1 else f"{name}-outputs.npz"
        np.savez_compressed(out / file, **chunk)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
        meta["files"].append(file)
    (out / f"{name}-inputs.npz").write_bytes((bundle / f"{name}-inputs.npz").read_bytes())
    (out / f"meta-{name}.json").write_text(json.dumps(meta, indent=0))
    (out / f"rejected-{name}.json").write_text((bundle / f"rejected-{name}.json").read_text())
    print(f"recorded {len(forms)} forms on {meta['gpu']} ({meta['nvidia_smi']})")
    return meta


#: The fields of a recording's meta that name the chip and its software (what a second chip's
#: digest record keeps of its run).
CHIP_FIELDS = ("gpu", "compute_capability", "driver_version", "cuda_runtime_version", "nvidia_smi", "assembler")


def output_digests(directory: Path, name: str) -> dict:
    """A round recorded on another chip, as a small record: per form, the SHA-256 of its outputs
    (each output array's bytes in order), with the chip's meta fields."""
    meta = json.loads((directory / f"meta-{name}.json").read_text())
    arrays: dict[str, np.ndarray] = {}
    for file in meta["files"]:
        if "outputs" in file:
            with np.load(directory / file) as z:
                arrays.update({k: z[k] for k in z.files})
    forms = {}
    for i, text in enumerate(meta["forms"]):
        h = hashlib.sha256()
        for k in range(8):
            if f"f{i}_out{k}" in arrays:
                h.update(np.ascontiguousarray(arrays[f"f{i}_out{k}"]).tobytes())
        forms[text] = h.hexdigest()
    return {**{k: meta.get(k) for k in CHIP_FIELDS}, "forms": forms}


def run_all(bundle: Path, out: Path) -> None:
    """Every part listed in ``BUNDLE/parts.json`` (``[part, script, command]``), one after the
    other: ``python3 SCRIPT COMMAND BUNDLE/PART OUT/PART [ARGS]``; a part not prepared is skipped."""
    here = Path(__file__).resolve().parent
    for part, script, command, *args in json.loads((bundle / "parts.json").read_text()):
        if not (bundle / part).exists():
            print(f"{part}: not prepared, skipped")
            continue
        start = time.time()
        subprocess.run([sys.executable, str(here / script), command, str(bundle / part), str(out / part), *args], check=True)
        print(f"{part}: {time.time() - start:.1f} s", flush=True)


def _bundle_files(name: str) -> tuple[str, ...]:
    if name == NAME:
        return ("campaign.cubin", "kernels.json", "rejected.json")
    return (f"{name}.cubin", f"{name}-plan.json", f"{name}-inputs.npz", f"rejected-{name}.json")


def main(argv: list[str]) -> int:
    """The command line (see the module docstring); ``argv`` without the program name."""
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command == "run" and len(args) in (2, 3):
        bundle, out, name = Path(args[0]), Path(args[1]), args[2] if len(args) == 3 else NAME
        refusal = exhaustive_device.missing_from_bundle(bundle, *_bundle_files(name))
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
        if name == NAME:
            run_float_cvt(bundle, out)
        else:
            run_plan(bundle, out, name)
        return 0
    if command == "digest" and len(args) == 2:
        refusal = exhaustive_device.missing_from_bundle(Path(args[0]), f"meta-{args[1]}.json")
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
        print(json.dumps(output_digests(Path(args[0]), args[1]), indent=0, sort_keys=True))
        return 0
    if command == "run-all" and len(args) == 2:
        refusal = exhaustive_device.missing_from_bundle(Path(args[0]), "parts.json")
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
        run_all(Path(args[0]), Path(args[1]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
