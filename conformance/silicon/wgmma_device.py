"""The device side of the wgmma probe campaign (numpy + CuPy only; no ptxspec needed there).

::

    python -m ptxspec.conformance.silicon wgmma prepare BUNDLE [--round ROUND]   # here, with ptxas
    python3 BUNDLE/wgmma_device.py selfcheck BUNDLE OUT       # on the GPU: first
    python3 BUNDLE/wgmma_device.py run BUNDLE OUT             # on the GPU: the round the bundle holds

``BUNDLE`` holds ``wgmma.cubin`` (one kernel per form and N; ``wgmma.ptx.gz`` beside it is
assembled with ptxas on the device when the cubin does not load), ``wgmma-plan.json`` (per kernel:
its instruction, the shared-memory regions of A and B, the element types, the descriptors of every
instance, the number of stored and of regenerated instances, the seed) and ``wgmma-probes.npz``
(the stored instances: shared-memory images, A registers, accumulator registers, metadata,
scale-d; for the self-check kernels also the matrices A, B, C the image was built from and the
accumulator fragment's row/column of every register).

One CTA of 128 threads (one warpgroup) runs one wgmma instance: it copies the instance's
shared-memory image from global memory verbatim into dynamic shared memory (1024-aligned), adds the
shared-memory base address to the start-address fields of the descriptors (which are relative to
the image), loads its accumulator registers (and A registers, metadata), runs one
``wgmma.mma_async`` and stores its D registers. No layout is computed on the device: the random
instances' images are element streams of A's and B's types (regions filled element after element
from :func:`elements`), the descriptors say where the instruction reads them, and the host's
layout model (``semantics/wgmma_layout.py``) must say the same to reproduce D.

Random inputs are regenerated from the kernel's seed by the counter-based generator of
``mma_device`` (SplitMix64 streams; classes bits/unit/spread/short by instance number modulo 4),
here and on the host, bit for bit.

A round's files are named by its plan's ``part``: ``wgmma-<i>.npz`` and ``meta-wgmma.json`` for
the first, ``wgmma-more-<i>.npz`` and ``meta-wgmma-more.json`` for ``"part": "more"`` and so on; a
kernel whose entry has ``full_random`` keeps D in full only for its
stored instances and its first ``full_random`` random ones, and one 64-bit digest per remaining
instance (:func:`instance_digests`, the scheme of ``exhaustive_device.py``, which the bundle
carries).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device, mma_device
except ImportError:  # on the GPU machine, without ptxspec: run as a script next to mma_device.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore
    import mma_device  # type: ignore

#: The ``campaign`` label of each round's meta, by the plan's ``part`` (``wgmma_campaign.PARTS``):
#: what the round records and the code that made it.
CAMPAIGNS = {
    "": "wgmma campaign, round wgmma: layouts, fragments and numerics of wgmma.mma_async{.sp} (conformance/silicon/wgmma_campaign.py, wgmma_device.py)",
    "more": "wgmma campaign, round wgmma-more: every remaining sm_90a wgmma, random D at N = 256 as digests (conformance/silicon/wgmma_campaign.py, wgmma_device.py)",
    "pruned": "wgmma campaign, round wgmma-pruned: wgmma.sp with specials in B where A is pruned (conformance/silicon/wgmma_campaign.py, wgmma_device.py)",
}


def campaign_label(plan: dict) -> str:
    """The meta's ``campaign`` for the part ``plan`` records (:data:`CAMPAIGNS`)."""
    part = plan.get("part") or ""
    if part not in CAMPAIGNS:
        raise ValueError(f"wgmma_device: no campaign label for the part {part!r} (known: {sorted(CAMPAIGNS)})")
    return CAMPAIGNS[part]


#: Stream numbers (the ``operand`` of ``mma_device._stream``) of each random input.
STREAM = {"a_region": 0, "b_region": 1, "a_registers": 2, "d_registers": 3, "metadata": 4}

#: Valid 4-bit metadata fields: two different indices ``i0 < i1`` of a 4-chunk, ``i0 | i1 << 2``
#: (§9.7.15.6.1: "0b0000, 0b0101, 0b1010, 0b1111 ... invalid"); for .tf32 the two that are
#: meaningful ("0b1110 and 0b0100").
NIBBLES = {"pairs": np.array([0x4, 0x8, 0xC, 0x9, 0xD, 0xE], dtype=np.uint64), "tf32": np.array([0x4, 0xE], dtype=np.uint64)}


def elements(el: dict, count: int, seed: int, stream: int, instance: int) -> np.ndarray:
    """``count`` random elements (bit patterns, uint64) of element description ``el`` for random
    instance ``instance`` of a kernel seeded ``seed``; the class is ``instance % 4``."""
    r = mma_device._stream(seed, stream, count, instance * count)
    cls = np.full(count, instance % len(mma_device.CLASSES), dtype=np.int64)
    if el["kind"] == "float":
        return mma_device._float_elements(r, cls, el)
    return mma_device._int_elements(r, cls, el)


def to_bytes(values: np.ndarray, bits: int) -> np.ndarray:
    """Elements of 8, 16 or 32 bits as little-endian bytes."""
    dtype = {8: "<u1", 16: "<u2", 32: "<u4"}[bits]
    return values.astype(dtype).view(np.uint8)


def to_registers(values: np.ndarray, bits: int) -> np.ndarray:
    """Elements ``[..., registers * per]`` packed into 32-bit registers, element 0 lowest."""
    per = 32 // bits
    v = values.reshape(values.shape[:-1] + (-1, per)).astype(np.uint64)
    out = np.zeros(v.shape[:-1], dtype=np.uint64)
    for i in range(per):
        out |= v[..., i] << np.uint64(i * bits)
    return out.astype(np.uint32)


def random_instance(kern: dict, r: int) -> dict[str, np.ndarray | np.generic]:
    """Inputs of random instance ``r`` of kernel ``kern``: image, A registers, D registers,
    metadata, scale-d."""
    seed = kern["seed"]
    image = np.zeros(kern["image_bytes"], dtype=np.uint8)
    for name in ("a", "b"):
        off, size = kern[f"{name}_region"]
        if size:
            el = kern["fill"][name]
            values = elements(el, size * 8 // el["bits"], seed, STREAM[f"{name}_region"], r)
            image[off : off + size] = to_bytes(values, el["bits"])
    out: dict[str, np.ndarray | np.generic] = {"image": image}
    if kern["a_registers"]:
        el = kern["elements"]["a"]
        per = 32 // el["bits"]
        out["a"] = to_registers(elements(el, 128 * 4 * per, seed, STREAM["a_registers"], r).reshape(128, 4 * per), el["bits"])
    else:
        out["a"] = np.zeros((128, 4), dtype=np.uint32)
    el = kern["elements"]["d"]
    per = 32 // el["bits"]
    nd = kern["d_registers"]
    out["d"] = to_registers(elements(el, 128 * nd * per, seed, STREAM["d_registers"], r).reshape(128, nd * per), el["bits"])
    if kern["metadata"]:
        table = NIBBLES[kern["metadata"]]
        choice = mma_device._stream(seed, STREAM["metadata"], 128 * 8, r * 128 * 8) % np.uint64(table.size)
        out["meta"] = to_registers(table[choice.astype(np.int64)].reshape(128, 8), 4)[:, 0]
    else:
        out["meta"] = np.zeros(128, dtype=np.uint32)
    out["scale"] = np.uint32(0 if r % 5 == 4 else 1)
    return out


def kernel_inputs(kern: dict, probes: dict) -> dict[str, np.ndarray]:
    """Every instance's inputs of ``kern``: the stored ones first, then the regenerated ones."""
    name = kern["name"]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("image", "a", "d", "meta", "scale")}
    if kern["probes"]:
        for k in parts:
            parts[k].append(probes[f"{name}_p{k}"])
    for r in range(kern["random"]):
        inst = random_instance(kern, r)
        for k in parts:
            parts[k].append(np.asarray(inst[k])[None])
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["image"] = out["image"].astype(np.uint8)
    out["desc"] = np.array([[int(x) for x in pair] for pair in kern["descriptors"]], dtype=np.uint64)
    return out


def instance_digests(d: np.ndarray, bits: int) -> np.ndarray:
    """The digest rounds' record of random D: one digest per instance of ``d`` (``[instances, 128,
    registers]``, ``2 ** bits`` registers each), :func:`exhaustive_device.chunk_digests` with the
    weights of the indices 0 .. 2^bits - 1 (the register's index within its instance, thread-major:
    thread t's register j is index ``t * registers + j``), numpy."""
    flat = np.ascontiguousarray(d, dtype=np.uint32).reshape(-1)
    if flat.size != d.shape[0] << bits:
        raise ValueError(f"{d.shape}: not 2^{bits} registers per instance")
    w = np.tile(exhaustive_device.weights(np, 0, 1 << bits), d.shape[0])
    return exhaustive_device.chunk_digests(np, flat, w, bits)


def split_outputs(kern: dict, d: np.ndarray) -> dict[str, np.ndarray]:
    """What a kernel's D becomes in the recording: ``<name>_out`` (every instance; with
    ``full_random``: the probes and the first ``full_random`` random instances) and then
    ``<name>_digest`` (one uint64 per remaining instance)."""
    name = kern["name"]
    if "full_random" not in kern:
        return {f"{name}_out": d}
    stored = kern["probes"] + kern["full_random"]
    out = {f"{name}_out": d[:stored]}
    if stored < d.shape[0]:
        out[f"{name}_digest"] = instance_digests(d[stored:], kern["digest_bits"])
    return out


def _load_module(bundle: Path):
    import cupy as cp

    try:
        return cp.RawModule(path=str(bundle / "wgmma.cubin"))
    except Exception as error:  # the cubin did not load: assemble the PTX here
        print(f"cubin did not load ({error}); assembling wgmma.ptx.gz with ptxas -arch=sm_90a", flush=True)
        tmp = Path(tempfile.mkdtemp())
        (tmp / "w.ptx").write_bytes(gzip.decompress((bundle / "wgmma.ptx.gz").read_bytes()))
        subprocess.run(["ptxas", "-arch=sm_90a", str(tmp / "w.ptx"), "-o", str(tmp / "w.cubin")], check=True)
        return cp.RawModule(path=str(tmp / "w.cubin"))


def launch(mod, kern: dict, inputs: dict) -> tuple[np.ndarray, np.ndarray]:
    """One CTA per instance; returns (D registers ``[instances, 128, d_registers]``, the
    shared-memory base address each CTA saw)."""
    import cupy as cp

    n = inputs["image"].shape[0]
    fn = mod.get_function(kern["kernel"])
    smem = kern["image_bytes"]
    if smem > 48 * 1024:  # above the default limit of dynamic shared memory: raise it
        try:
            fn.max_dynamic_shared_size_bytes = smem
        except Exception:
            cp.cuda.driver.funcSetAttribute(fn.ptr, 8, smem)  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    dev = {k: cp.asarray(np.ascontiguousarray(v)) for k, v in inputs.items()}
    out = cp.zeros((n, 128, kern["d_registers"]), dtype=cp.uint32)
    base = cp.zeros(n, dtype=cp.uint32)
    fn((n,), (128,), (dev["image"], dev["desc"], dev["a"], dev["d"], dev["scale"].astype(cp.uint32), dev["meta"].astype(cp.uint32), out, base), shared_mem=smem)
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(out), cp.asnumpy(base)


def _device_meta() -> dict:
    import cupy as cp

    return exhaustive_device.device_meta(cp)


def _load_bundle(bundle: Path) -> tuple[dict, dict]:
    plan = json.loads((bundle / "wgmma-plan.json").read_text())
    with np.load(bundle / "wgmma-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    return plan, probes


def selfcheck(bundle: Path, out: Path) -> int:
    """One s8 wgmma per swizzle mode, compared here with numpy's integer A @ B + C of the matrices
    the image was built from (``D[t, i]`` is element ``(rows[t, i], cols[t, i])``)."""
    plan, probes = _load_bundle(bundle)
    mod = _load_module(bundle)
    failures = 0
    out.mkdir(parents=True, exist_ok=True)
    saved = {}
    for kern in plan["selfcheck"]:
        name = kern["name"]
        try:
            d, base = launch(mod, kern, kernel_inputs(kern, probes))
            A, B, C = (probes[f"{name}_{x}"].astype(np.int64) for x in ("A", "B", "C"))
            expect = (A @ B + C) & 0xFFFFFFFF
            rows, cols = probes[f"{name}_rows"], probes[f"{name}_cols"]
            got = d[0].astype(np.int64)
            bad = int(np.count_nonzero(got != expect[rows, cols]))
            status = "OK" if bad == 0 else f"MISMATCH in {bad} of {got.size} elements"
            failures += bad != 0
            print(f"selfcheck {name} ({kern['instruction']}; {kern['layout']}; smem base {int(base[0]):#x}): {status}", flush=True)
            saved[f"{name}_out"], saved[f"{name}_base"] = d, base
        except Exception:
            failures += 1
            print(f"selfcheck {name}: FAILED\n{traceback.format_exc()}", flush=True)
    np.savez_compressed(out / "selfcheck.npz", **saved)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    print(f"selfcheck: {len(plan['selfcheck']) - failures} of {len(plan['selfcheck'])} OK")
    return failures


def run(bundle: Path, out: Path) -> None:
    """Every kernel of the plan; outputs in ``wgmma{-part}-<file>.npz`` and ``meta-wgmma{-part}.json``
    (``wgmma``: no part; ``wgmma-more``: part ``more``, random D of N > 64 as :func:`instance_digests`;
    ``wgmma-pruned``: part ``pruned``), the meta's ``campaign`` that of the part (:func:`campaign_label`)."""
    plan, probes = _load_bundle(bundle)
    campaign = campaign_label(plan)  # before any kernel runs
    mod = _load_module(bundle)
    files: dict[int, dict[str, np.ndarray]] = {}
    failed = {}
    for kern in plan["kernels"]:
        name = kern["name"]
        try:
            inputs = kernel_inputs(kern, probes)
            d, base = launch(mod, kern, inputs)
        except Exception as error:
            failed[name] = f"{type(error).__name__}: {error}"
            print(f"{name}: FAILED {failed[name]}", flush=True)
            continue
        arrays = files.setdefault(kern["file"], {})
        arrays.update(split_outputs(kern, d))
        arrays[f"{name}_base"] = base
        for k in ("image", "a", "d", "meta", "scale"):
            if kern["probes"]:
                arrays[f"{name}_p{k}"] = probes[f"{name}_p{k}"]
        aligned = "1024-aligned" if not np.any(base % 1024) else f"NOT 1024-aligned ({sorted(set((base % 1024).tolist()))})"
        print(
            f"{name}: {kern['instruction']}: {kern['probes']} stored + {kern['random']} random instances"
            f"{'' if 'full_random' not in kern else ' (%d in full)' % kern['full_random']}, "
            f"{(kern['probes'] + kern['random']) * 64 * kern['n']} dot products; smem {aligned}",
            flush=True,
        )
    out.mkdir(parents=True, exist_ok=True)
    prefix = "wgmma" + (f"-{plan['part']}" if plan.get("part") else "")
    for index, arrays in sorted(files.items()):
        np.savez_compressed(out / f"{prefix}-{index}.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    meta = {
        **_device_meta(),
        "assembler": plan["assembler"],
        "campaign": campaign,
        "generator": "wgmma_device.random_instance (mma_device SplitMix64 streams; classes " + ", ".join(mma_device.CLASSES) + ")",
        "kernels": plan["kernels"],
        "rejected": plan["rejected"],
        "failed": failed,
    }
    # the meta of a round after the first is written compactly (the repository is already large)
    (out / f"meta-{prefix}.json").write_text(json.dumps(meta, indent=None if plan.get("part") else 1, separators=(",", ":") if plan.get("part") else None))
    print(f"recorded {len(plan['kernels']) - len(failed)} of {len(plan['kernels'])} kernels on {meta['gpu']}; failed: {sorted(failed) or 'none'}")


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT`` or ``selfcheck BUNDLE OUT`` (see the module docstring); ``argv`` without
    the program name."""
    if len(argv) != 3 or argv[0] not in ("run", "selfcheck"):
        print(__doc__)
        return 2
    bundle, out = Path(argv[1]), Path(argv[2])
    refusal = exhaustive_device.missing_from_bundle(bundle, "wgmma-plan.json")
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    if argv[0] == "run":
        run(bundle, out)
        return 0
    return 1 if selfcheck(bundle, out) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
