"""The device side of the floating-point atom/red recording (numpy + CuPy only; no ptxspec needed
there)::

    python -m ptxspec.conformance.silicon atomic prepare BUNDLE      # here, with ptxas
    python3 conformance/silicon/atomic_device.py run BUNDLE OUT      # on the GPU machine

exhaustive_device.py must lie beside this file (its splitmix64 and device meta are imported).

``BUNDLE`` holds ``atomic.cubin`` (one kernel per form; its source ``atomic.ptx``) and
``atomic-plan.json`` (per form: kernel, instruction, element bytes, seed). Each thread of a form's
kernel places its own old value ``a[i]`` in the form's state space (global memory, or its slot of
the CTA's shared memory), performs the one atomic with ``b[i]``, and stores what the atomic returned
(``atom``; ``red`` returns nothing and stores ``a[i]``) and the value it left in memory. The inputs
are every pair of a list of edge values (zeros, subnormals, the smallest normals, ones, the largest
finite values, infinities, NaNs; per half of a packed pair) followed by pseudo-random bit patterns
(:func:`inputs`, splitmix64 of the form's seed), regenerated identically here and by the replay.

Output ``OUT/atomic.npz`` (per form ``{name}_a``, ``{name}_b``, ``{name}_returned``,
``{name}_memory``, all unsigned integers of the element's width) and ``OUT/meta-atomic.json``.
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

PLAN_FILE = "atomic-plan.json"
CUBIN_FILE = "atomic.cubin"
PTX_FILE = "atomic.ptx"
OUTPUT_FILE = "atomic.npz"
META_FILE = "meta-atomic.json"
BLOCK = 256
RANDOM = 4096
"""Pseudo-random pairs per form, after the edge pairs."""

#: Edge values per element format (bits): signed zeros, the smallest and largest subnormals, the
#: smallest normals, one, the largest finite values, infinities, a quiet and a signalling NaN.
EDGES = {
    16: (0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x8400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01),
    "bf16": (0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81),
    32: (
        0,
        0x80000000,
        1,
        0x80000001,
        0x007FFFFF,
        0x00800000,
        0x80800000,
        0x3F800000,
        0xBF800000,
        0x7F7FFFFF,
        0xFF7FFFFF,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0x7F800001,
    ),
    64: (
        0,
        1 << 63,
        1,
        (1 << 63) | 1,
        (1 << 52) - 1,
        1 << 52,
        (1 << 63) | (1 << 52),
        0x3FF0000000000000,
        0xBFF0000000000000,
        0x7FEFFFFFFFFFFFFF,
        0xFFEFFFFFFFFFFFFF,
        0x7FF0000000000000,
        0xFFF0000000000000,
        0x7FF8000000000000,
        0x7FF0000000000001,
    ),
}


def edge_values(element: str) -> list[int]:
    """The edge values of an element type (``f16``, ``bf16``, ``f16x2``, ``bf16x2``, ``f32``,
    ``f64``); a packed pair takes each edge in both halves and in one half with one in the other."""
    if element in ("f16x2", "bf16x2"):
        half = EDGES["bf16" if element.startswith("bf") else 16]
        one = 0x3F80 if element.startswith("bf") else 0x3C00
        return [h << 16 | h for h in half] + [h << 16 | one for h in half] + [one << 16 | h for h in half]
    return list(EDGES["bf16" if element == "bf16" else {"f16": 16, "f32": 32, "f64": 64}[element]])


def inputs(element: str, bits: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)``: every pair of edge values, then :data:`RANDOM` pseudo-random pairs (uint64 of
    the element's low ``bits``)."""
    edges = np.array(edge_values(element), dtype=np.uint64)
    a_edge, b_edge = (x.ravel() for x in np.meshgrid(edges, edges, indexing="ij"))
    base = np.array([seed], dtype=np.uint64)
    with np.errstate(over="ignore"):
        start = exhaustive_device.splitmix64(np, base)[0]
        words = exhaustive_device.splitmix64(np, np.arange(2 * RANDOM, dtype=np.uint64) + start)
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    a = np.concatenate([a_edge, words[:RANDOM] & mask])
    b = np.concatenate([b_edge, words[RANDOM:] & mask])
    return a, b


def dtype_of(bits: int):
    return {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def run(bundle: Path, out: Path) -> None:
    import cupy as cp

    plan = json.loads((bundle / PLAN_FILE).read_text())
    try:
        module = cp.RawModule(path=str(bundle / CUBIN_FILE))
    except Exception:  # noqa: BLE001 - fall back to the PTX source
        module = cp.RawModule(code=(bundle / PTX_FILE).read_text(), backend="nvcc")
    arrays: dict[str, np.ndarray] = {}
    for entry in plan["forms"]:
        bits = entry["bytes"] * 8
        dtype = dtype_of(bits)
        a, b = inputs(entry["element"], bits, entry["seed"])
        n = len(a)
        a_dev, b_dev = cp.asarray(a.astype(dtype)), cp.asarray(b.astype(dtype))
        returned, memory = cp.zeros(n, dtype=dtype), cp.zeros(n, dtype=dtype)
        kernel = module.get_function(entry["kernel"])
        kernel(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (a_dev, b_dev, returned, memory, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        name = entry["name"]
        arrays[f"{name}_a"], arrays[f"{name}_b"] = a.astype(dtype), b.astype(dtype)
        arrays[f"{name}_returned"], arrays[f"{name}_memory"] = cp.asnumpy(returned), cp.asnumpy(memory)
    exhaustive_device.save_recording(cp, out, OUTPUT_FILE, META_FILE, "atomic", plan, arrays)


if __name__ == "__main__":
    exhaustive_device.run_command(sys.argv, "atomic_device.py", PLAN_FILE, CUBIN_FILE, run)
