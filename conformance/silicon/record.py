"""Record a campaign on a GPU: assemble here with ptxas, execute there, store what came back.

Two steps, one command each::

    python -m ptxspec.conformance.silicon.record prepare BUNDLE   # here: ptxas -arch=sm_90a per form
    python conformance/silicon/record.py run BUNDLE OUT            # on the GPU machine (numpy + CuPy)

and, for the issue-3 campaign of :mod:`ptxspec.conformance.silicon.catalogue_campaign`::

    python -m ptxspec.conformance.silicon.record prepare-plan BUNDLE
    python conformance/silicon/record.py run-plan BUNDLE OUT
    python conformance/silicon/record.py digest OUT DIGEST.json    # a second chip's run, as digests
    python -m ptxspec.conformance.silicon.record digest-arrays OUT/PART META.json 'NAME-*.npz' > DIGESTS.json

and the issue-3 entries recorded apart (:data:`SUBSETS`; today the fma.oob OOB-NaN probes)::

    python -m ptxspec.conformance.silicon.record prepare-plan BUNDLE --only '#oob-probes'
    python conformance/silicon/record.py run-plan BUNDLE OUT issue3-oob

and the whole campaign (every part above, the exhaustive spaces, the ``.approx`` scans and the
mma probes), in one command on each side::

    python -m ptxspec.conformance.silicon.record prepare-all BUNDLE
    python3 conformance/silicon/record.py run-all BUNDLE OUT

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


def assemble(ptx: str, ptxas: str = "ptxas", arch: str = "sm_90a") -> tuple[bool, str, bytes]:
    """``ptxas -arch=ARCH`` on ``ptx``: (accepted, ptxas's message, cubin). Every campaign's
    ``prepare`` assembles through this one function."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "k.ptx"), Path(tmp, "k.cubin")
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            return False, proc.stderr.strip(), b""
        return True, "", out.read_bytes()


def ptxas_version(ptxas: str = "ptxas") -> str:
    """The release line of ``ptxas --version`` (recorded in each campaign's meta file)."""
    lines = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return next((line for line in lines if "release" in line), lines[-1] if lines else "unknown")


def prepare(bundle: Path) -> None:
    from ptxspec.conformance.silicon.kernels import module

    bundle.mkdir(parents=True, exist_ok=True)
    entries = [(kernel_name(i), e) for i, e in enumerate(FORMS)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda ne: assemble(module([ne])), entries))
    accepted = [(n, e) for (n, e), (ok, _, _) in zip(entries, verdicts) if ok]
    rejected = {e.text: msg for (n, e), (ok, msg, _) in zip(entries, verdicts) if not ok}
    ok, msg, cubin = assemble(module(accepted))
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
    texts: list[str] = []
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
        np.savez_compressed(out / f"recording-{part // per_file}.npz", **chunk)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    (out / "rejected.json").write_text((bundle / "rejected.json").read_text())
    print(f"recorded {len(texts)} forms x {SAMPLES} on {meta['gpu']} ({meta['nvidia_smi']})")


# ---------------------------------------------------------------------------------------------
# The issue-3 campaign (catalogue_campaign): a plan, shared input groups, warp forms
# ---------------------------------------------------------------------------------------------

#: File names of the issue-3 campaign inside conformance/data/sm_90/ (beside the issue-2 files).
PLAN_PREFIX = "issue3"


def _dtype_name(bits: int) -> str:
    return {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}[8 if bits <= 8 else bits]


#: Entries recorded apart from the issue-3 files, by name suffix: ``prepare-plan BUNDLE --only
#: SUFFIX`` writes them under the prefix ``issue3-<name>`` (their own inputs, outputs, meta and
#: rejected files), so that the existing recording is left as it is.
SUBSETS = {"#oob-probes": "oob", "#rest": "rest"}


def prepare_plan(bundle: Path, only: str | None = None) -> None:
    """Here (with ptxas and ptxspec): the issue-3 plan, its inputs, and one cubin of every form
    that ptxas assembles alone for sm_90a (``only``: the entries whose text ends so, under the
    prefix of :data:`SUBSETS`)."""
    import numpy as np

    from ptxspec.conformance.silicon import catalogue_campaign as cc
    from ptxspec.semantics.instructions import as_form

    bundle.mkdir(parents=True, exist_ok=True)
    entries = cc.plan()
    prefix = PLAN_PREFIX
    if only == "#rest":  # every other sm_90a form: catalogue_campaign.rest_plan
        entries = cc.rest_plan()
        prefix = f"{PLAN_PREFIX}-{SUBSETS[only]}"
    elif only is not None:
        entries = [e for e in entries if e.text.endswith(only)]
        prefix = f"{PLAN_PREFIX}-{SUBSETS[only]}"
    named = [(kernel_name(i), e) for i, e in enumerate(entries)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda ne: assemble(cc.module([ne])), named))
    accepted = [(n, e) for (n, e), (ok, _, _) in zip(named, verdicts) if ok]
    rejected = {e.text: msg for (n, e), (ok, msg, _) in zip(named, verdicts) if not ok}
    ok, msg, cubin = assemble(cc.module(accepted))
    if not ok:
        raise SystemExit(f"the combined module did not assemble: {msg}")
    groups: dict[str, int] = {}
    arrays: dict[str, np.ndarray] = {}
    forms = []
    for name, e in accepted:
        form = as_form(e.instruction)
        key = e.text if e.warp else e.group
        if key not in groups:
            gi = groups[key] = len(groups)
            if e.warp:
                cols = cc.warp_inputs(e, form)
                bits = [cc.store_bits(o) for o in form.sources] + [32]
            else:
                kinds = tuple(k for k, o in zip(e.kinds, form.sources) if not o.name.startswith("imm"))
                cols = cc.plan_group_inputs(e, kinds)
                bits = [cc.store_bits(o) for o in form.sources if not o.name.startswith("imm")]
            for k, (col, b) in enumerate(zip(cols, bits)):
                arrays[f"g{gi}_in{k}"] = col.astype(_dtype_name(b))
        forms.append({
            "kernel": name, "text": e.text, "chapter": e.chapter, "group": groups[key], "n": e.n, "warp": e.warp,
            "n_in": sum(1 for o in form.sources if not o.name.startswith("imm")) + (1 if e.warp else 0),
            "immediates": e.immediates, "dst_bits": [cc.store_bits(o) for o in form.destinations],
        })
    (bundle / f"{prefix}.cubin").write_bytes(cubin)
    (bundle / f"{prefix}-plan.json").write_text(json.dumps({"forms": forms}, indent=0))
    np.savez_compressed(bundle / f"{prefix}-inputs.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    (bundle / f"rejected-{prefix}.json").write_text(json.dumps(rejected, indent=1, sort_keys=True))
    print(f"{len(accepted)} forms assembled ({len(groups)} input groups), {len(rejected)} rejected by ptxas")


def run_plan(bundle: Path, out: Path, prefix: str = PLAN_PREFIX) -> None:
    """On the GPU machine (numpy + CuPy only): run every kernel of the plan on its inputs and write
    the outputs, the inputs, and the meta file of the recording (``prefix``: a subset's, see
    :data:`SUBSETS`; its outputs go into one file)."""
    import cupy as cp
    import numpy as np

    plan = json.loads((bundle / f"{prefix}-plan.json").read_text())
    with np.load(bundle / f"{prefix}-inputs.npz") as z:
        inputs = {k: z[k] for k in z.files}
    mod = cp.RawModule(path=str(bundle / f"{prefix}.cubin"))
    device: dict[str, object] = {}
    outputs: dict[str, np.ndarray] = {}
    for i, e in enumerate(plan["forms"]):
        keys = [f"g{e['group']}_in{k}" for k in range(e["n_in"])]
        for k in keys:
            if k not in device:
                device[k] = cp.asarray(inputs[k].astype(np.uint64))
        n = e["n"]
        d_out = [cp.zeros(n, dtype=cp.uint64) for _ in e["dst_bits"]]
        mod.get_function(e["kernel"])(((n + 127) // 128,), (128,), (*[device[k] for k in keys], *d_out, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        for j, (dev, bits) in enumerate(zip(d_out, e["dst_bits"])):
            outputs[f"f{i}_out{j}"] = cp.asnumpy(dev).astype(_dtype_name(bits))
    props = cp.cuda.runtime.getDeviceProperties(0)
    meta = {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver_version": cp.cuda.runtime.driverGetVersion(),
        "cuda_runtime_version": cp.cuda.runtime.runtimeGetVersion(),
        "nvidia_smi": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip(),
        "assembler": f"ptxas -arch=sm_90a (CUDA 13.0), see rejected-{prefix}.json for forms ptxas refused",
        "campaign": "issue 3: conformance/silicon/catalogue_campaign.py",
        "samples_per_form": max(e["n"] for e in plan["forms"] if not e["warp"]),
        "forms": [e["text"] for e in plan["forms"]],
        "chapters": [e["chapter"] for e in plan["forms"]],
        "groups": [e["group"] for e in plan["forms"]],
        "inputs_per_form": [e["n_in"] for e in plan["forms"]],
        "immediates": [e["immediates"] for e in plan["forms"]],
        "warp": [e["warp"] for e in plan["forms"]],
        "files": [f"{prefix}-inputs.npz"],
    }
    out.mkdir(parents=True, exist_ok=True)
    parts = 3 if prefix in (PLAN_PREFIX, f"{PLAN_PREFIX}-rest") else 1
    per_file = len(plan["forms"]) // parts + 1
    for p in range(parts):
        chunk = {k: v for k, v in outputs.items() if p * per_file <= int(k[1:].split("_")[0]) < (p + 1) * per_file}
        name = f"{prefix}-outputs-{p}.npz" if parts > 1 else f"{prefix}-outputs.npz"
        np.savez_compressed(out / name, **chunk)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
        meta["files"].append(name)
    (out / f"{prefix}-inputs.npz").write_bytes((bundle / f"{prefix}-inputs.npz").read_bytes())
    (out / f"meta-{prefix}.json").write_text(json.dumps(meta, indent=0))
    (out / f"rejected-{prefix}.json").write_text((bundle / f"rejected-{prefix}.json").read_text())
    print(f"recorded {len(plan['forms'])} forms on {meta['gpu']} ({meta['nvidia_smi']})")


#: The fields of a recording's meta that name the chip and its software: what a second chip's
#: digest record keeps of its run.
CHIP_FIELDS = ("gpu", "compute_capability", "driver_version", "cuda_runtime_version", "nvidia_smi", "assembler")


def chip_fields(meta: dict) -> dict:
    """:data:`CHIP_FIELDS` of a recording's meta (at its top level, or under ``device``)."""
    meta = chip_meta(meta)
    return {k: meta.get(k) for k in CHIP_FIELDS}


def output_digests(directory: Path) -> dict:
    """A small record of a plan recording made on another chip: per form, the SHA-256 of its
    outputs (each output array's bytes in order), with the chip's meta. The repository keeps the
    digests of a second chip's run instead of its data; the replay test compares them."""
    import hashlib

    import numpy as np

    meta = json.loads((directory / f"meta-{PLAN_PREFIX}.json").read_text())
    arrays: dict = {}
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
    return {**chip_fields(meta), "forms": forms}


def array_digests(directory: Path, meta_name: str, pattern: str) -> dict:
    """A second chip's run of a campaign part, kept as digests instead of data: the chip's meta
    (from ``meta_name``), the SHA-256 of every file, and of every array (its bytes in order) of
    the files matching ``pattern``. Compare ``arrays`` with :func:`recorded_array_digests` of the
    first chip's files (tests/test_second_chip.py)."""
    import hashlib

    meta = json.loads((directory / meta_name).read_text())
    files = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(directory.iterdir()) if f.suffix in (".npz", ".json")}
    return {**chip_fields(meta), "meta": meta_name, "pattern": pattern, "files": files,
            "arrays": recorded_array_digests(directory, pattern)}


def chip_meta(meta: dict) -> dict:
    """The chip's fields of a recording's meta: at its top level, or under ``device``."""
    return {**meta, **meta.get("device", {})}


def recorded_array_digests(directory: Path, pattern: str) -> dict[str, str]:
    """Array name -> SHA-256 of its bytes, over the ``.npz`` files of ``directory`` matching ``pattern``."""
    import hashlib

    import numpy as np

    out = {}
    for f in sorted(directory.glob(pattern)):
        with np.load(f) as z:
            out.update({k: hashlib.sha256(np.ascontiguousarray(z[k]).tobytes()).hexdigest() for k in z.files})
    return dict(sorted(out.items()))


#: The m8n8k4 .f16 kernels of the round-2 mma bundle: sm_90 runs them as binary32 code, whose
#: SASS is recorded (``sass`` part; docs/mma.rst "m8n8k4 .f16 on sm_90").
SASS_SHAPE = "m8n8k4"


def prepare_sass(bundle: Path) -> None:
    """Here (ptxas): the round-2 mma module (``mma_campaign.prepare_more``) into ``BUNDLE`` and
    ``sass-plan.json`` naming its cubin and the kernels whose SASS ``sass_device.py run`` records."""
    from ptxspec.conformance.silicon import mma_campaign

    mma_campaign.prepare_more(bundle)
    (bundle / "sass-plan.json").write_text(json.dumps(sass_plan(json.loads((bundle / "more-plan.json").read_text())), indent=1) + "\n")


def sass_plan(more_plan: dict) -> dict:
    """The SASS plan of a round-2 mma plan: its cubin and the kernels of the m8n8k4 .f16 forms."""
    from ptxspec.conformance.silicon import mma_campaign

    kernels = [e["kernel"] for e in more_plan["combinations"] if mma_campaign.more_combination_named(e["name"]).quad_pairs]
    return {"cubin": "more.cubin", "kernels": kernels}


# ---------------------------------------------------------------------------------------------
# A whole campaign: every part, prepared here in one command and run there in one command
# ---------------------------------------------------------------------------------------------


def command_line(command, *args) -> int:
    """Run a campaign command (``python -m ...``) and turn a missing or unreadable recording or
    bundle into one line naming the file, and exit status 2, instead of a traceback."""
    refused: tuple[type[Exception], ...]
    try:  # on the GPU machine, where ptxspec is not installed, only missing files are refused
        from ptxspec.spec.errors import PtxSpecError

        refused = (OSError, PtxSpecError)
    except ImportError:
        refused = (OSError,)

    try:
        status = command(*args)
    except refused as error:
        where = getattr(error, "filename", None) or getattr(error, "where", None) or ""
        reason = getattr(error, "strerror", None) or getattr(error, "message", None) or str(error)
        print(f"error: {where}: {reason}" if where else f"error: {reason}", file=sys.stderr)
        return 2
    return status if isinstance(status, int) else 0

#: The parts of a whole campaign, in the order they run: name -> (how it is prepared here, as
#: ``python -m MODULE ARGS BUNDLE``; the device script and its command that run it there, as
#: ``SCRIPT COMMAND BUNDLE OUT``, or None for this module's own ``run``/``run-plan``). Each part's
#: files go to ``OUT/PART/`` under the names ``conformance/data/sm_90/`` uses (see
#: docs/silicon.rst for which of them a second chip keeps).
PARTS = {
    "issue2": (None, None),
    "issue3": (None, None),
    "issue3-oob": (None, None),
    "issue3-rest": (None, None),
    "exhaustive": ("ptxspec.conformance.silicon.exhaustive prepare", "exhaustive_device.py run"),
    "approx": ("ptxspec.conformance.silicon.approx prepare", "approx_device.py run"),
    "mma": ("ptxspec.conformance.silicon.mma_campaign prepare", "mma_device.py run"),
    "mma-sp": ("ptxspec.conformance.silicon.mma_campaign prepare-sparse", "mma_device.py run-sparse"),
    "wgmma": ("ptxspec.conformance.silicon.wgmma_campaign prepare", "wgmma_device.py run"),
    "mma-more": ("ptxspec.conformance.silicon.mma_campaign prepare-more", "mma_device.py run-more"),
    "mma-sp-more": ("ptxspec.conformance.silicon.mma_campaign prepare-sparse-more", "mma_device.py run-sparse-more"),
    "wgmma-more": ("ptxspec.conformance.silicon.wgmma_campaign prepare BUNDLE more", "wgmma_device.py run"),
    "sass": ("ptxspec.conformance.silicon.record prepare-sass", "sass_device.py run"),
    "movement": ("ptxspec.conformance.silicon.movement_campaign prepare", "movement_device.py run"),
}


def prepare_all(bundle: Path) -> None:
    """Here (ptxas, ptxspec): assemble every part of the campaign into ``BUNDLE/PART/``."""
    prepare(bundle / "issue2")
    prepare_plan(bundle / "issue3")
    prepare_plan(bundle / "issue3-oob", "#oob-probes")
    prepare_plan(bundle / "issue3-rest", "#rest")
    for part, (module, _) in PARTS.items():
        if module is not None:
            args = module.split()
            args = [str(bundle / part) if a == "BUNDLE" else a for a in args] + ([] if "BUNDLE" in args else [str(bundle / part)])
            subprocess.run([sys.executable, "-m", *args], check=True)
    print(f"campaign prepared in {bundle}: {', '.join(PARTS)}")


def run_all(bundle: Path, out: Path) -> None:
    """There (numpy + CuPy): run every prepared part, one after the other, into ``OUT/PART/``."""
    import time

    here = Path(__file__).resolve().parent
    for part, (_, script) in PARTS.items():
        if not (bundle / part).exists():
            print(f"{part}: not prepared, skipped")
            continue
        start = time.time()
        if part == "issue2":
            run(bundle / part, out / part)
        elif part.startswith("issue3"):
            run_plan(bundle / part, out / part, part)
        else:
            assert script is not None, f"{part}: every part but issue2 and issue3* has a device script"
            name, command = script.split()
            subprocess.run([sys.executable, str(here / name), command, str(bundle / part), str(out / part)], check=True)
        print(f"{part}: {time.time() - start:.1f} s", flush=True)


def main(argv: list[str]) -> int:
    """The command line (see the module docstring); ``argv`` without the program name."""
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    paths = [Path(a) for a in args]
    if command == "prepare" and args:
        prepare(paths[0])
    elif command == "prepare-plan" and args:
        prepare_plan(paths[0], args[2] if len(args) >= 3 and args[1] == "--only" else None)
    elif command == "run-plan" and len(args) >= 2:
        run_plan(paths[0], paths[1], args[2] if len(args) >= 3 else PLAN_PREFIX)
    elif command == "digest" and len(args) >= 2:
        paths[1].write_text(json.dumps(output_digests(paths[0]), indent=0, sort_keys=True))
    elif command == "digest-arrays" and len(args) >= 3:
        print(json.dumps(array_digests(paths[0], args[1], args[2]), indent=0, sort_keys=True))
    elif command == "prepare-sass" and args:
        prepare_sass(paths[0])
    elif command == "prepare-all" and args:
        prepare_all(paths[0])
    elif command == "run-all" and len(args) >= 2:
        run_all(paths[0], paths[1])
    elif command == "run" and len(args) >= 2:
        run(paths[0], paths[1])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
