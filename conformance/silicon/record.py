"""Record a campaign on a GPU: assemble here with ptxas, execute there, store what came back.

Two steps, one command each::

    python -m ptxspec.conformance.silicon.record prepare BUNDLE   # here: ptxas -arch=sm_90a per form
    python conformance/silicon/record.py run BUNDLE OUT            # on the GPU machine (numpy + CuPy)

``prepare`` assembles every campaign form alone (a form ptxas rejects is listed in
``rejected.json`` with ptxas's message and left out), then all accepted forms into one cubin.
``run`` regenerates the seeded inputs, launches each kernel, and writes ``recording-K.npz`` files
(inputs and outputs per form) and ``meta.json`` (GPU name, driver, CUDA runtime). The files are
copied unchanged into ``conformance/data/sm_90/``: recorded data is never edited by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a script on the device machine, without installing ptxspec
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from campaign import FORMS, KIND_BITS, Entry, inputs_for  # type: ignore
else:
    from ptxspec.conformance.silicon.campaign import FORMS, KIND_BITS, Entry, inputs_for

SAMPLES = 4096


def kernel_name(index: int) -> str:
    return f"k{index:04d}"


def _assemble(ptx: str, arch: str = "sm_90a") -> tuple[bool, str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "k.ptx"), Path(tmp, "k.cubin")
        src.write_text(ptx)
        proc = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            return False, proc.stderr.strip(), b""
        return True, "", out.read_bytes()


def prepare(bundle: Path) -> None:
    from ptxspec.conformance.silicon.kernels import module

    bundle.mkdir(parents=True, exist_ok=True)
    entries = [(kernel_name(i), e) for i, e in enumerate(FORMS)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda ne: _assemble(module([ne])), entries))
    accepted = [(n, e) for (n, e), (ok, _, _) in zip(entries, verdicts) if ok]
    rejected = {e.text: msg for (n, e), (ok, msg, _) in zip(entries, verdicts) if not ok}
    ok, msg, cubin = _assemble(module(accepted))
    if not ok:
        raise SystemExit(f"the combined module did not assemble: {msg}")
    (bundle / "campaign.cubin").write_bytes(cubin)
    (bundle / "kernels.json").write_text(json.dumps({n: e.text for n, e in accepted}, indent=0))
    (bundle / "rejected.json").write_text(json.dumps(rejected, indent=1, sort_keys=True))
    print(f"{len(accepted)} forms assembled, {len(rejected)} rejected by ptxas")


def _store_dtype(bits: int):
    import numpy as np

    return {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def run(bundle: Path, out: Path) -> None:
    import cupy as cp
    import numpy as np

    by_text = {e.text: e for e in FORMS}
    kernels = json.loads((bundle / "kernels.json").read_text())
    mod = cp.RawModule(path=str(bundle / "campaign.cubin"))
    arrays: dict[str, np.ndarray] = {}
    texts = []
    for name, text in kernels.items():
        entry: Entry = by_text[text]
        n = entry.count(SAMPLES)
        inputs = inputs_for(entry, SAMPLES)
        d_in = [cp.asarray(col.astype(np.uint64)) for col in inputs]
        d_out = [cp.zeros(n, dtype=cp.uint64) for _ in entry.dst]
        fn = mod.get_function(name)
        fn(((n + 127) // 128,), (128,), (*d_in, *d_out, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        i = len(texts)
        texts.append(text)
        for k, (col, kind) in enumerate(zip(inputs, entry.src)):
            arrays[f"f{i}_in{k}"] = col.astype(_store_dtype(KIND_BITS[kind]))
        for k, (dev, kind) in enumerate(zip(d_out, entry.dst)):
            arrays[f"f{i}_out{k}"] = cp.asnumpy(dev).astype(_store_dtype(KIND_BITS[kind]))
    props = cp.cuda.runtime.getDeviceProperties(0)
    meta = {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver_version": cp.cuda.runtime.driverGetVersion(),
        "cuda_runtime_version": cp.cuda.runtime.runtimeGetVersion(),
        "nvidia_smi": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip(),
        "assembler": "ptxas -arch=sm_90a (CUDA 13.0), see rejected.json for forms ptxas refused",
        "samples_per_form": SAMPLES,
        "forms": texts,
    }
    out.mkdir(parents=True, exist_ok=True)
    # Split into files of at most ~12 MiB so every file comes back from the device machine.
    per_file = max(1, len(texts) // 4 + 1)
    for part in range(0, len(texts), per_file):
        chunk = {k: v for k, v in arrays.items() if part <= int(k[1:].split("_")[0]) < part + per_file}
        np.savez_compressed(out / f"recording-{part // per_file}.npz", **chunk)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    (out / "rejected.json").write_text((bundle / "rejected.json").read_text())
    print(f"recorded {len(texts)} forms x {SAMPLES} on {meta['gpu']} ({meta['nvidia_smi']})")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        prepare(Path(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        print(__doc__)
        sys.exit(2)
