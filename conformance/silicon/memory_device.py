"""The device side of the memory-instruction recording (numpy + CuPy only; no ptxspec needed
there)::

    python -m ptxspec.conformance.silicon memory prepare BUNDLE      # here, with ptxas
    python3 conformance/silicon/memory_device.py run BUNDLE OUT      # on the GPU machine

exhaustive_device.py must lie beside this file (its splitmix64 and device meta are imported).

``BUNDLE`` holds ``memory.cubin`` (one kernel per form; its source ``memory.ptx``) and
``memory-plan.json`` (per form: kernel, instruction, operand widths, access size, seed). Each
thread of a form's kernel owns a :data:`REGION`-byte region of the form's state space (global
memory, or its slot of the CTA's shared memory), fills it with its input bytes, performs the one
instruction at ``region + offset`` with its source operands, and stores its destination registers
and the region's bytes afterwards. A local-space form's region is a ``.local`` buffer of the
thread; a const-space form's regions are written into the form's ``.const`` array by the host
before the launch (the kernel only reads them). The inputs (:func:`inputs`: region bytes with an edge or random
old value at the offset, offsets aligned to the access size, operand values) are regenerated
identically here and by the replay from the form's seed.

The address-map kernel (``address_map``, a cluster of two CTAs) records where each state space lies
in the generic address space: the generic address of a shared, local, const, param and global
variable (``cvta``), ``mapa`` and ``getctarank`` of the shared variable for each CTA of the cluster,
and ``isspacep`` of every space at probe addresses around each window.

Output ``OUT/memory.npz`` (per form ``{name}_dst``: the destination registers, little-endian bytes;
``{name}_changed``: the region after XOR before, so that an unchanged byte is 0;
``{name}_address``: the address the instruction used), ``address_map`` rows, and
``OUT/meta-memory.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device
except ImportError:  # on the GPU machine, without ptxspec: run as a script next to exhaustive_device.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore

PLAN_FILE = "memory-plan.json"
CUBIN_FILE = "memory.cubin"
PTX_FILE = "memory.ptx"
OUTPUT_FILE = "memory.npz"
META_FILE = "meta-memory.json"
BLOCK = 128
REGION = 32
"""Bytes of memory each thread owns."""
OPERAND = 16
"""Bytes of each source or destination operand slot (a .b128 register at most)."""
SLOTS = 8
"""Operand slots of each thread, sources and destinations alike (a .v8 vector atom takes eight)."""
RANDOM = 384
"""Pseudo-random records per form, after the edge ones."""
CONST_RECORDS = 640
"""Records a const-space form's bank holds (the kernel's ``cbuf`` array; at least any form's n)."""


def edge_values(bits: int, signed: bool) -> list[int]:
    """Integer edge values of a ``bits``-wide operand: 0, 1, 2, the largest and smallest values
    (unsigned and signed), all ones and its neighbours."""
    top = (1 << bits) - 1
    half = 1 << (bits - 1)
    values = [0, 1, 2, 3, half - 1, half, half + 1, top - 1, top, 0x55 & top, (0xA5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5 & top)]
    return list(dict.fromkeys(values))


def seeded_words(seed: int, count: int) -> np.ndarray:
    """``count`` splitmix64 words from ``seed`` (the same here and on the device)."""
    start = exhaustive_device.splitmix64(np, np.array([seed], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        return exhaustive_device.splitmix64(np, np.arange(count, dtype=np.uint64) + start)


def random_bytes(seed: int, count: int) -> np.ndarray:
    """``count`` bytes of :func:`seeded_words`."""
    return seeded_words(seed, (count + 7) // 8).view(np.uint8)[:count].copy()


def inputs(entry: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(regions, offsets, operands)`` of a form: uint8 ``(n, REGION)``, uint32 ``(n,)`` and
    uint8 ``(n, sources, OPERAND)``. The first records pair the edge values of the old value in
    memory (at the offset) with those of the first source operand; the rest are pseudo-random."""
    size, seed = entry["size"], entry["seed"]
    sources = entry["sources"]
    old_bits = min(size * 8, 64)
    edges = edge_values(old_bits, True)
    first = edge_values(min(sources[0], 64), True) if sources else [0]
    pairs = [(o, b) for o in edges for b in first]
    n = len(pairs) + RANDOM
    regions = random_bytes(seed, n * REGION).reshape(n, REGION)
    slots = REGION // size
    offsets = ((seeded_words(seed + 1, n) % np.uint64(slots)) * np.uint64(size)).astype(np.uint32)
    operands = random_bytes(seed + 2, n * max(1, len(sources)) * OPERAND).reshape(n, max(1, len(sources)), OPERAND)
    for k, bits in enumerate(sources):  # keep each operand to its register's width
        operands[:, k, (bits + 7) // 8 :] = 0
    for i, (old, b) in enumerate(pairs):
        at = int(offsets[i])
        regions[i, at : at + old_bits // 8] = np.frombuffer(old.to_bytes(old_bits // 8, "little"), dtype=np.uint8)
        if sources:
            width = (min(sources[0], 64) + 7) // 8
            operands[i, 0, :width] = np.frombuffer(b.to_bytes(width, "little"), dtype=np.uint8)
    return regions, offsets, operands[:, : len(sources)]


def run_forms(cp, module, plan: dict, arrays: dict) -> None:
    for entry in plan["forms"]:
        regions, offsets, operands = inputs(entry)
        n = len(offsets)
        mem = cp.asarray(regions.reshape(-1))
        ops = cp.asarray(np.ascontiguousarray(np.pad(operands, ((0, 0), (0, SLOTS - operands.shape[1]), (0, 0)))).reshape(-1))
        dst = cp.zeros(n * SLOTS * OPERAND, dtype=cp.uint8)
        address = cp.zeros(n, dtype=cp.uint64)
        kernel = module.get_function(entry["kernel"])
        if entry["space"] in ("param", "generic-param"):
            run_param_form(cp, kernel, entry, regions, offsets, arrays)
            continue
        if entry["space"] in ("const", "generic-const"):  # the regions go to the const bank; the kernel only reads them
            bank = module.get_global(f"cbuf_{entry['kernel']}")
            cp.ndarray((n * REGION,), dtype=cp.uint8, memptr=bank).set(regions.reshape(-1))
        kernel(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (mem, cp.asarray(offsets), ops, dst, address, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        name = entry["name"]
        after = cp.asnumpy(mem).reshape(n, REGION)
        keep = 4 if entry["policy"] else len(entry["destinations"])  # the policy is recorded in slot 3
        arrays[f"{name}_dst"] = cp.asnumpy(dst).reshape(n, SLOTS, OPERAND)[:, :keep]
        arrays[f"{name}_changed"] = after ^ regions
        arrays[f"{name}_address"] = cp.asnumpy(address)


def run_param_form(cp, kernel, entry: dict, regions: np.ndarray, offsets: np.ndarray, arrays: dict) -> None:
    """A kernel-parameter form: one launch per record, its region passed by value (a 32-byte
    structured scalar)."""
    n = len(offsets)
    dst = cp.zeros(n * SLOTS * OPERAND, dtype=cp.uint8)
    address = cp.zeros(n, dtype=cp.uint64)
    region_type = np.dtype({"names": ["bytes"], "formats": [(np.uint8, REGION)], "itemsize": REGION, "aligned": True})
    for i in range(n):
        region = np.frombuffer(regions[i].tobytes(), dtype=region_type)[0]
        kernel((1,), (32,), (region, np.uint32(offsets[i]), dst[i * SLOTS * OPERAND :], address[i:]))
    cp.cuda.runtime.deviceSynchronize()
    name = entry["name"]
    arrays[f"{name}_dst"] = cp.asnumpy(dst).reshape(n, SLOTS, OPERAND)[:, : len(entry["destinations"])]
    arrays[f"{name}_changed"] = np.zeros_like(regions)  # a parameter is read only
    arrays[f"{name}_address"] = cp.asnumpy(address)


def run_address_map(cp, module, arrays: dict) -> None:
    rows = 2 * 64
    out = cp.zeros(rows, dtype=cp.uint64)
    for launch in range(2):  # twice: the windows must not move between launches
        out[:] = 0
        module.get_function("address_map")((2,), (1,), (out,))
        cp.cuda.runtime.deviceSynchronize()
        arrays[f"address_map_{launch}"] = cp.asnumpy(out).reshape(2, 64)


def run_createpolicy(cp, module, rows: int, arrays: dict) -> None:
    for launch in range(2):  # twice: the same request must give the same policy
        out = cp.zeros(rows, dtype=cp.uint64)
        module.get_function("createpolicy_probe")((1,), (1,), (out,))
        cp.cuda.runtime.deviceSynchronize()
        arrays[f"createpolicy_{launch}"] = cp.asnumpy(out)


def run(bundle: Path, out: Path) -> None:
    import cupy as cp

    plan = json.loads((bundle / PLAN_FILE).read_text())
    try:
        module = cp.RawModule(path=str(bundle / CUBIN_FILE))
    except Exception:  # noqa: BLE001 - fall back to the PTX source
        module = cp.RawModule(code=(bundle / PTX_FILE).read_text(), backend="nvcc")
    arrays: dict[str, np.ndarray] = {}
    run_forms(cp, module, plan, arrays)
    run_address_map(cp, module, arrays)
    run_createpolicy(cp, module, plan["createpolicy"], arrays)
    exhaustive_device.save_recording(cp, out, OUTPUT_FILE, META_FILE, "memory", plan, arrays)


if __name__ == "__main__":
    exhaustive_device.run_command(sys.argv, "memory_device.py", PLAN_FILE, CUBIN_FILE, run)
