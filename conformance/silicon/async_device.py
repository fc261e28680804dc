"""The device side of the asynchronous-copy recording (numpy + CuPy only; no ptxspec needed
there)::

    python -m ptxspec.conformance.silicon async prepare BUNDLE      # here, with ptxas
    python3 conformance/silicon/async_device.py run BUNDLE OUT      # on the GPU machine

exhaustive_device.py and memory_device.py must lie beside this file (splitmix64, the device meta
and the integer edge values are imported).

**Copies.** ``BUNDLE/async.cubin`` holds one kernel per form (cp.async, cp.async.bulk in each
direction and with multicast, cp.reduce.async.bulk, st.async, red.async, cp.async.bulk.prefetch;
``async-plan.json`` lists them). A record is a cluster of two CTAs of one thread each. Each CTA
fills its :data:`REGION` bytes of shared memory from its input row, initializes its mbarrier
(count 1) and arrives on it with ``expect_tx`` of the bytes the form sends it (:func:`inputs`: 0
when it receives none); after a cluster barrier, CTA 0 performs the one instruction (and, for the
bulk-group and cp.async forms, waits for its group); each CTA then waits (bounded) for phase 0 of
its mbarrier, and after a second cluster barrier writes its shared region, whether the phase
completed, its buffer's address and CTA 0's operand addresses to its output row. The global
region (:data:`REGION` bytes per record) is read back after the launch.

**mbarrier programs.** The ``mbarrier_program`` kernel runs one program per CTA (one thread) on an
mbarrier object in shared memory: a list of ``(operation, operand)`` steps (:data:`OPERATIONS`),
and after each step it records ``mbarrier.pending_count`` of the step's state token (for the
arrive forms), and ``mbarrier.test_wait`` for parity 0 and 1 and for the latest token.

Output ``OUT/async.npz`` (per form ``{name}_out``: uint8 ``(n, 2, OUT_ROW)``, whose regions are
stored as the region after XOR before, so that an unchanged byte is 0; ``{name}_changed``: the
global regions after XOR before; ``mbarrier_program``: uint64 ``(programs, STEPS)``), and
``OUT/meta-async.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device, memory_device
except ImportError:  # on the GPU machine, without ptxspec: run as a script next to its siblings
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore
    import memory_device  # type: ignore

PLAN_FILE = "async-plan.json"
CUBIN_FILE = "async.cubin"
PTX_FILE = "async.ptx"
OUTPUT_FILE = "async.npz"
META_FILE = "meta-async.json"
REGION = 256
"""Bytes of each record's global region and of each CTA's shared region."""
MBAR_OFFSET = 384
"""Where each CTA's mbarrier lies, from the start of its shared buffer (outside the region)."""
BUFFER = 512
OUT_ROW = 304
"""Bytes of a CTA's output row: the region, the phase-completed flag (u32 at 256), the buffer's
shared::cta address (u64 at 264), the global region's address (u64 at 272), and CTA 0's operand
addresses dst, src and mbar (u64 at 280, 288, 296)."""
RECORDS = 192
"""Records per copy form."""
PARAMS = 8
"""u32 parameters of a record: destination offset, source offset, size, extra (src-size,
ignore-src or ctaMask), the expect-tx of CTA 0 and of CTA 1."""
VALUES = 4
"""u64 register operands of a record (st.async's vector, red.async's value)."""

#: The mbarrier program's operations (operand in brackets): what each step of a program does.
OPERATIONS = {
    "end": 0,
    "arrive": 1,  # mbarrier.arrive.shared::cta.b64 state, [m], count
    "arrive.expect_tx": 2,  # mbarrier.arrive.expect_tx.shared::cta.b64 state, [m], txCount
    "expect_tx": 3,  # mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [m], txCount
    "complete_tx": 4,  # mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [m], txCount
    "arrive_drop": 5,  # mbarrier.arrive_drop.shared::cta.b64 state, [m], count
    "init": 6,  # mbarrier.init.shared::cta.b64 [m], count
    "arrive.noComplete": 7,  # mbarrier.arrive.noComplete.shared::cta.b64 state, [m], count
}
STEPS = 24
"""Steps of a program (the last is always ``end``)."""
NO_TOKEN = 0xFFFFFFFF
"""The pending-count field of a step that returned no state token."""

#: Float edge patterns of each element width, beside the integer ones of memory_device: zeros,
#: infinities, NaNs, the smallest and largest subnormals and normals, one.
FLOAT_EDGES = {
    2: [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C00, 0x8001, 0x7F80, 0xFF80, 0x7FC0, 0x0080, 0x007F, 0x7F7F, 0x3F80],
    4: [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000, 0x80000001, 0x807FFFFF],
    8: [
        0x7FF0000000000000,
        0xFFF0000000000000,
        0x7FF8000000000000,
        0x7FF0000000000001,
        1,
        0x000FFFFFFFFFFFFF,
        0x0010000000000000,
        0x7FEFFFFFFFFFFFFF,
        0x3FF0000000000000,
    ],
}


def _edges(width: int) -> np.ndarray:
    values = memory_device.edge_values(8 * width, True) + FLOAT_EDGES.get(width, [])
    return np.array(values, dtype=np.uint64)


def element_bytes(seed: int, rows: int, width: int) -> np.ndarray:
    """``rows`` regions of :data:`REGION` bytes whose ``width``-byte elements are, half of them,
    edge values (integer and float patterns of that width) and the rest pseudo-random."""
    data = memory_device.random_bytes(seed, rows * REGION)
    count = rows * REGION // width
    pick = memory_device.seeded_words(seed + 7, count)
    edges = _edges(width)
    use = (pick & np.uint64(1)) == 1
    chosen = edges[((pick >> np.uint64(1)) % np.uint64(len(edges))).astype(np.int64)]
    as_bytes = chosen.astype("<u8").view(np.uint8).reshape(count, 8)[:, :width]
    elements = data.reshape(count, width)
    elements[use] = as_bytes[use]
    return elements.reshape(rows, REGION)


def inputs(entry: dict) -> dict[str, np.ndarray]:
    """A copy form's inputs, regenerated from its seed: ``global`` (n, REGION) and ``shared``
    (n, 2, REGION) bytes, ``params`` (n, PARAMS) u32 and ``values`` (n, VALUES) u64."""
    n, seed, kind, width = RECORDS, entry["seed"], entry["kind"], entry["element"]
    global_bytes = element_bytes(seed, n, width)
    shared = element_bytes(seed + 1, 2 * n, width).reshape(n, 2, REGION)
    words = memory_device.seeded_words(seed + 2, n * 8).reshape(n, 8)
    values = memory_device.seeded_words(seed + 3, n * VALUES).reshape(n, VALUES)
    edges = _edges(width)
    pick = memory_device.seeded_words(seed + 4, n * VALUES).reshape(n, VALUES)
    use = (pick & np.uint64(3)) != 0
    values = np.where(use, edges[((pick >> np.uint64(2)) % np.uint64(len(edges))).astype(np.int64)], values)
    if width < 8:
        values &= np.uint64((1 << (8 * width)) - 1)
    params = np.zeros((n, PARAMS), dtype=np.uint32)
    if kind == "cp.async":
        size = entry["size"]
        slots = np.uint64(REGION // size)
        params[:, 0] = (words[:, 0] % slots) * np.uint64(size)
        params[:, 1] = (words[:, 1] % slots) * np.uint64(size)
        params[:, 2] = size
        params[:, 3] = words[:, 3] % np.uint64(size + 1) if entry["variant"] == "src_size" else (words[:, 3] & np.uint64(1))
    elif kind in ("st.async", "red.async"):
        access = width * entry["count"]
        params[:, 0] = (words[:, 0] % np.uint64(REGION // access)) * np.uint64(access)
        params[:, 2] = access
        params[:, 5] = access
    else:
        chunks = REGION // 16
        size = words[:, 2] % np.uint64(chunks) + np.uint64(1)  # 1 .. 16 chunks of 16 bytes
        room = np.uint64(chunks + 1) - size
        params[:, 0] = (words[:, 0] % room) * np.uint64(16)
        params[:, 1] = (words[:, 1] % room) * np.uint64(16)
        params[:, 2] = size * np.uint64(16)
        if kind == "bulk-multicast":
            params[:, 3] = words[:, 3] % np.uint64(3) + np.uint64(1)  # ctaMask 1, 2 or 3
            params[:, 4] = np.where(params[:, 3] & 1, params[:, 2], 0)
            params[:, 5] = np.where(params[:, 3] & 2, params[:, 2], 0)
        elif kind == "bulk-g2s":
            params[:, 4] = params[:, 2]
        elif kind in ("bulk-s2cluster", "reduce-s2cluster"):
            params[:, 5] = params[:, 2]
    return {"global": global_bytes, "shared": shared, "params": params, "values": values}


def run_copies(cp, module, plan: dict, arrays: dict) -> None:
    for entry in plan["forms"]:
        data = inputs(entry)
        n = RECORDS
        memory = cp.asarray(data["global"].reshape(-1))
        out = cp.zeros(n * 2 * OUT_ROW, dtype=cp.uint8)
        kernel = module.get_function(entry["kernel"])
        args = (
            memory,
            cp.asarray(data["shared"].reshape(-1)),
            cp.asarray(data["params"].reshape(-1)),
            cp.asarray(data["values"].reshape(-1)),
            out,
            np.uint32(n),
        )
        kernel((2 * n,), (1,), args)
        cp.cuda.runtime.deviceSynchronize()
        rows = cp.asnumpy(out).reshape(n, 2, OUT_ROW)
        rows[:, :, :REGION] ^= data["shared"]  # stored as changes: an unchanged byte is 0
        arrays[f"{entry['name']}_out"] = rows
        arrays[f"{entry['name']}_changed"] = cp.asnumpy(memory).reshape(n, REGION) ^ data["global"]


def run_programs(cp, module, programs: np.ndarray, arrays: dict) -> None:
    count = programs.shape[0]
    out = cp.zeros(count * STEPS, dtype=cp.uint64)
    module.get_function("mbarrier_program")((count,), (1,), (cp.asarray(programs.reshape(-1)), out, np.uint32(count)))
    cp.cuda.runtime.deviceSynchronize()
    arrays["mbarrier_program"] = cp.asnumpy(out).reshape(count, STEPS)


def run(bundle: Path, out: Path) -> None:
    import cupy as cp

    plan = json.loads((bundle / PLAN_FILE).read_text())
    module = cp.RawModule(path=str(bundle / CUBIN_FILE))
    arrays: dict[str, np.ndarray] = {}
    run_copies(cp, module, plan, arrays)
    run_programs(cp, module, np.array(plan["programs"], dtype=np.uint32), arrays)
    exhaustive_device.save_recording(cp, out, OUTPUT_FILE, META_FILE, "async", plan, arrays)


if __name__ == "__main__":
    exhaustive_device.run_command(sys.argv, "async_device.py", PLAN_FILE, CUBIN_FILE, run)
