"""The device side of the tensor-copy (TMA) recording (numpy, CuPy and cuda-python only; no
ptxspec needed there)::

    python -m ptxspec.conformance.silicon tma prepare BUNDLE      # here, with ptxas
    python3 conformance/silicon/tma_device.py run BUNDLE OUT      # on the GPU machine

exhaustive_device.py must lie beside this file (its splitmix64 and device meta are imported).

``BUNDLE`` holds ``tma.cubin`` (a load and a store kernel per rank; source ``tma.ptx``) and
``tma-plan.json``: per case a tensor map's fields (element type, dims, strides, box, traversal
strides, swizzle, out-of-bound fill), the box's coordinates and its bytes in shared memory. For
each case the driver encodes the tensor map (``cuTensorMapEncodeTiled``), which is copied to
the load and store kernels take by value (a ``.param .align 64 .b8 [128]``, the
``__grid_constant__`` way; launched through the driver API); the tensor's bytes are seeded
(:func:`tensor_bytes`). The load kernel fills
:data:`SMEM` bytes of shared memory with :data:`MARK`, runs one
``cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes`` and waits
on its mbarrier (a bounded wait: a box whose byte count the plan got wrong never completes and is
recorded as such), then writes the shared memory out. The store kernel fills shared memory with
seeded bytes, runs ``cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group`` and waits for it;
the tensor's bytes afterwards are recorded.

Output ``OUT/tma.npz``: per case ``{name}_shared`` (the shared memory after the load),
``{name}_done`` (whether the mbarrier phase completed), ``{name}_global`` (the tensor after the
store), ``{name}_address`` (the tensor's global address and the shared box's address), or
``{name}_refused`` with the driver's error code; and ``OUT/meta-tma.json``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device
except ImportError:  # on the GPU machine, without ptxspec: run as a script next to exhaustive_device.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore

CUBIN_FILE = "tma.cubin"
PTX_FILE = "tma.ptx"


def files(round_name: str = "tma") -> dict[str, str]:
    """A round's plan, output and meta files (``tma``: the first round; ``tma-more``: interleaved
    tile maps and im2col loads; ``tma-replace``: a tensormap.replace before each load); each
    round's bundle has its cubin."""
    return {"plan": f"{round_name}-plan.json", "output": f"{round_name}.npz", "meta": f"meta-{round_name}.json"}


SMEM = 8192
"""Bytes of shared memory each kernel gives the box (1024-byte aligned)."""
MARK = 0x5A
"""The byte shared memory holds before a load: what the copy leaves alone stays this."""
THREADS = 128

#: CUtensorMapDataType of each element type, as cuda.h numbers them.
CU_DATA_TYPE = {"u8": 0, "u16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9}
CU_SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
CU_FILL = {"zero": 0, "nan": 1}
CU_INTERLEAVE = {"none": 0, "16B": 1, "32B": 2}


def tensor_bytes(case: dict) -> np.ndarray:
    """The seeded bytes of a case's tensor (and of the shared memory a store writes from)."""
    start = exhaustive_device.splitmix64(np, np.array([case["seed"]], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        words = exhaustive_device.splitmix64(np, np.arange((case["extent"] + 7) // 8, dtype=np.uint64) + start)
    return words.view(np.uint8)[: case["extent"]].copy()


def store_bytes(case: dict) -> np.ndarray:
    start = exhaustive_device.splitmix64(np, np.array([case["seed"] + 1], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        words = exhaustive_device.splitmix64(np, np.arange(SMEM // 8, dtype=np.uint64) + start)
    return words.view(np.uint8).copy()


def _driver():
    try:
        from cuda.bindings import driver  # type: ignore
    except ImportError:  # older cuda-python
        from cuda import cuda as driver  # type: ignore
    return driver


def encode(driver, case: dict, address: int):
    """``cuTensorMapEncodeTiled`` of a case: (error code, the 128 bytes of the map)."""
    rank = len(case["global_dims"])
    size = case["element_bytes"]
    strides = [int(s) for s in case["global_strides"]]
    u32, u64 = driver.cuuint32_t, driver.cuuint64_t
    common = (
        driver.CUtensorMapDataType(CU_DATA_TYPE[case["element_type"]]),
        u32(rank),
        address,
        [u64(int(d)) for d in case["global_dims"]],
        [u64(s) for s in strides] or [u64(16)],  # rank 1: no stride is read, but the array must be there
    )
    layout = (
        [u32(int(e)) for e in case["element_strides"]],
        driver.CUtensorMapInterleave(CU_INTERLEAVE[case.get("interleave", "none")]),
        driver.CUtensorMapSwizzle(CU_SWIZZLE[case["swizzle"]]),
        driver.CUtensorMapL2promotion(0),
        driver.CUtensorMapFloatOOBfill(CU_FILL[case["oob_fill"]]),
    )
    if case.get("mode") == "im2col":
        corners = ([int(c) for c in case["lower_corner"]], [int(c) for c in case["upper_corner"]])
        result = driver.cuTensorMapEncodeIm2col(*common, *corners, u32(case["channels_per_pixel"]), u32(case["pixels_per_column"]), *layout)
    else:
        result = driver.cuTensorMapEncodeTiled(*common, [u32(int(b)) for b in case["box_dims"]], *layout)
    error, tmap = result[0], result[1]
    code = int(error.value) if hasattr(error, "value") else int(error)
    if code:
        return code, None
    del size
    return 0, np.array([int(x) for x in tmap.opaque], dtype=np.uint64).tobytes()  # 16 words, the 128-byte object


def _launch(driver, function, args: list) -> None:
    """cuLaunchKernel of one block of :data:`THREADS` threads; ``args`` are ctypes values, passed
    as the array of pointers to each that the driver reads (a 128-byte tensor map by value)."""
    import ctypes

    pointers = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    (error,) = driver.cuLaunchKernel(function, 1, 1, 1, THREADS, 1, 1, 0, 0, ctypes.addressof(pointers), 0)
    if int(error.value if hasattr(error, "value") else error):
        raise RuntimeError(f"cuLaunchKernel: {error}")


def _work(bundle: Path, parts: Path, round_name: str, names: list[str]) -> None:
    """Run the cases ``names`` in order in this process, each step's result written at once to
    ``parts`` (a step that faults the context ends the process; :func:`run` starts another after
    it)."""
    import ctypes

    import cupy as cp

    driver = _driver()
    plan = {c["name"]: c for c in json.loads((bundle / files(round_name)["plan"]).read_text())["cases"]}
    cp.cuda.runtime.free(cp.cuda.runtime.malloc(1))  # the context cupy and the driver calls share
    error, module = driver.cuModuleLoadData((bundle / CUBIN_FILE).read_bytes())
    functions: dict[tuple[str, int | str], object] = {}
    for rank in range(1, 6):
        for kind in ("load", "store"):
            error, functions[kind, rank] = driver.cuModuleGetFunction(module, f"tma_{kind}_{rank}d".encode())
    for rank in range(3, 6):
        error, functions["load_im2col", rank] = driver.cuModuleGetFunction(module, f"tma_load_im2col_{rank}d".encode())
    for name in names:
        if "replace" in plan[name]:
            error, functions["replace", name] = driver.cuModuleGetFunction(module, f"tma_replace_{name}".encode())

    class TensorMapParameter(ctypes.Structure):
        _fields_ = [("words", ctypes.c_uint64 * 16)]

    for name in names:
        case = plan[name]
        rank = len(case["global_dims"])
        tensor = cp.asarray(tensor_bytes(case))
        code, tmap_bytes = encode(driver, case, int(tensor.data.ptr))
        if code:
            np.savez(parts / f"{name}.npz", refused=np.array([code], dtype=np.int64))
            continue
        tmap = TensorMapParameter()
        tmap.words[:] = [int(w) for w in np.frombuffer(tmap_bytes, dtype=np.uint64)]
        coords = [ctypes.c_int32(int(c)) for c in (list(case["coords"]) + [0] * 5)[:5]]
        result: dict[str, np.ndarray] = {}
        (parts / f"{name}.load").touch()
        shared = cp.zeros(SMEM, dtype=cp.uint8)
        done = cp.zeros(2, dtype=cp.uint64)
        cp.cuda.runtime.deviceSynchronize()
        if "replace" in case:  # the map goes to global memory, where tensormap.replace changes it
            replace = case["replace"]
            held = cp.asarray(np.frombuffer(tmap_bytes, dtype=np.uint8).copy())
            value = int(tensor.data.ptr) + replace["value"] if replace["field"] == "global_address" else replace["value"]
            _launch(
                driver,
                functions["replace", name],
                [
                    ctypes.c_void_p(int(held.data.ptr)),
                    ctypes.c_void_p(int(shared.data.ptr)),
                    ctypes.c_void_p(int(done.data.ptr)),
                    *coords,
                    ctypes.c_uint32(case["box_bytes"]),
                    ctypes.c_uint64(value),
                ],
            )
            cp.cuda.runtime.deviceSynchronize()
            result = {"shared": cp.asnumpy(shared), "done": cp.asnumpy(done)}
            result["address"] = np.array([int(tensor.data.ptr), int(result["done"][1])], dtype=np.uint64)
            np.savez(parts / f"{name}.load.npz", **result)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
            np.savez(parts / f"{name}.store.npz", skipped=np.array([1], dtype=np.uint8))
            continue
        im2col = case.get("mode") == "im2col"
        offsets = [ctypes.c_uint16(int(o)) for o in case.get("offsets", [])]
        _launch(
            driver,
            functions["load_im2col" if im2col else "load", rank],
            [tmap, ctypes.c_void_p(int(shared.data.ptr)), ctypes.c_void_p(int(done.data.ptr)), *coords, ctypes.c_uint32(case["box_bytes"]), *offsets],
        )
        cp.cuda.runtime.deviceSynchronize()
        result["shared"], result["done"] = cp.asnumpy(shared), cp.asnumpy(done)
        result["address"] = np.array([int(tensor.data.ptr), int(result["done"][1])], dtype=np.uint64)
        np.savez(parts / f"{name}.load.npz", **result)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
        if im2col:  # loads only: the store of an im2col map is .im2col_no_offs, beyond sm_90
            np.savez(parts / f"{name}.store.npz", skipped=np.array([1], dtype=np.uint8))
            continue
        (parts / f"{name}.store").touch()
        source = cp.asarray(store_bytes(case))
        cp.cuda.runtime.deviceSynchronize()
        _launch(driver, functions["store", rank], [tmap, ctypes.c_void_p(int(source.data.ptr)), *coords])
        cp.cuda.runtime.deviceSynchronize()
        np.savez(parts / f"{name}.store.npz", glob=cp.asnumpy(tensor), address=np.array([int(tensor.data.ptr), 0], dtype=np.uint64))


WORKERS = int(os.environ.get("TMA_WORKERS", "8"))


def run(bundle: Path, out: Path, round_name: str = "tma") -> None:
    """Every case, in :data:`WORKERS` processes; a step that faults (the chip's "illegal
    instruction") is recorded as ``{name}_load_fault`` / ``{name}_store_fault`` and its process
    replaced by one that goes on from the next case."""
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    import cupy as cp

    plan = json.loads((bundle / files(round_name)["plan"]).read_text())
    names = [c["name"] for c in plan["cases"]][: int(os.environ.get("TMA_LIMIT", "100000"))]
    parts = Path(tempfile.mkdtemp())

    def chunk(todo: list[str]) -> None:
        while todo:
            subprocess.run([sys.executable, __file__, "work", str(bundle), str(parts), round_name, *todo], capture_output=True)
            finished = [n for n in todo if (parts / f"{n}.store.npz").exists() or (parts / f"{n}.npz").exists()]
            started = [n for n in todo if (parts / f"{n}.load").exists()]
            last = started[-1] if started else None
            if last is not None and last not in finished:
                if not (parts / f"{last}.load.npz").exists():
                    (parts / f"{last}.load_fault").touch()
                (parts / f"{last}.store_fault").touch()
                todo = todo[todo.index(last) + 1 :]
            else:
                todo = [n for n in todo if n not in finished and n not in started]

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(chunk, [names[i::WORKERS] for i in range(WORKERS)]))
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        if (parts / f"{name}.npz").exists():  # noqa: SIM102
            arrays[f"{name}_refused"] = np.load(parts / f"{name}.npz")["refused"]
            continue
        if (parts / f"{name}.load.npz").exists():
            load = np.load(parts / f"{name}.load.npz")
            arrays[f"{name}_shared"], arrays[f"{name}_done"], arrays[f"{name}_address"] = load["shared"], load["done"], load["address"]
        else:
            arrays[f"{name}_load_fault"] = np.array([1], dtype=np.uint8)
        if (parts / f"{name}.store.npz").exists():
            store = np.load(parts / f"{name}.store.npz")
            if "skipped" in store:
                continue
            arrays[f"{name}_global"] = store["glob"]
            arrays.setdefault(f"{name}_address", store["address"])
        else:
            arrays[f"{name}_store_fault"] = np.array([1], dtype=np.uint8)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / files(round_name)["output"], **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    meta = {"campaign": round_name, "ptxas": plan.get("ptxas"), "cases": len(plan["cases"]), "device": exhaustive_device.device_meta(cp)}
    (out / files(round_name)["meta"]).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 5 and sys.argv[1] == "work":
        _work(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5:])
        sys.exit(0)
    if len(sys.argv) not in (4, 5) or sys.argv[1] != "run":
        print("usage: tma_device.py run BUNDLE OUT [ROUND]", file=sys.stderr)
        sys.exit(2)
    round_name = sys.argv[4] if len(sys.argv) == 5 else "tma"
    refusal = exhaustive_device.missing_from_bundle(Path(sys.argv[2]), files(round_name)["plan"], CUBIN_FILE)
    if refusal:
        print(refusal, file=sys.stderr)
        sys.exit(2)
    run(Path(sys.argv[2]), Path(sys.argv[3]), round_name)
