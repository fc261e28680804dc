"""The device side of the ldmatrix / stmatrix / movmatrix recording (numpy + CuPy only; no ptxspec
needed there)::

    python -m ptxspec.conformance.silicon movement prepare BUNDLE     # here, with ptxas
    python3 conformance/silicon/movement_device.py run BUNDLE OUT     # on the GPU machine

exhaustive_device.py must lie beside this file (its splitmix64 and device meta are imported).

``BUNDLE`` holds ``movement.cubin`` (one kernel per form; its source ``movement.ptx``, loaded should
the cubin not load) and ``movement-plan.json`` (per form:
kernel, instruction text, opcode, registers per lane, image size, seed, executions, how many of
them are stored whole and the digest block, and the form whose outputs its own are stored against). Every input is regenerated from the seed by the
counter-based generators below (numpy integer operations only), here and by the replay, bit for bit.

One warp (one block of 32 threads) per execution. Each lane copies its share of the execution's
shared-memory image from global memory into ``.shared``, then loads its own row address and
registers, executes the one instruction, and stores its result registers (stmatrix: the warp
copies the image back). No layout is computed on the device.

Output ``OUT/movement.npz`` and ``OUT/meta-movement.json``. Per form, the outputs of the first
``entry["full"]`` executions are stored whole (``{name}_x``), those of the others as one 64-bit
digest per block of ``entry["block"]`` executions (``{name}_digests``, :func:`block_digests`): the
replay recomputes each block with the semantics and compares digests. To keep the file small the
whole outputs are stored XORed with what the replay already knows, losslessly: a stmatrix image
with the image before the store (so only the written rows are non-zero), and a form spelled with a
state space (``.shared``, ``.shared::cta``) -- which runs on the same inputs as the form without
one -- with that form's output (all zeros where the spellings agree). ``entry["xor_with"]`` names
the base form; :func:`decode` undoes it.
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

PLAN_FILE = "movement-plan.json"
CUBIN_FILE = "movement.cubin"
PTX_FILE = "movement.ptx"
OUTPUT_FILE = "movement.npz"
META_FILE = "meta-movement.json"
ROW_BYTES = 16
WARP = 32

#: The whole outputs stored are cut (halved, and so on) should the file exceed this: outputs far
#: from what the encoding expects do not compress.
FILE_LIMIT = 3 << 20

#: Input streams of one seed.
IMAGE, ADDRESSES, REGISTERS, CHOICE = range(4)


def stream(seed: int, key: int, count: int) -> np.ndarray:
    """``count`` pseudo-random uint64 of stream ``key`` of ``seed``: splitmix64 of a counter offset
    by splitmix64 of ``(seed << 8) | key``."""
    base = np.array([(int(seed) << 8) | key], dtype=np.uint64)
    with np.errstate(over="ignore"):
        start = exhaustive_device.splitmix64(np, base)[0]
        return exhaustive_device.splitmix64(np, np.arange(count, dtype=np.uint64) + start)


def image(seed: int, executions: int, size: int) -> np.ndarray:
    """The shared-memory image of every execution, uint8 ``[executions, size]``: random bytes (for
    stmatrix, the image before the store: random, so that a stray write shows)."""
    words = stream(seed, IMAGE, executions * size // 8)
    return words.astype("<u8").view(np.uint8).reshape(executions, size).copy()


def _distinct(keys: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The first 32 of ``pool`` (row indices) ordered by ``keys`` ``[executions, len(pool)]``: 32
    distinct rows per execution in a random order."""
    order = np.argsort(keys, axis=1, kind="stable")[:, :WARP]
    return pool[order]


def row_addresses(seed: int, executions: int, size: int, distinct_only: bool) -> np.ndarray:
    """Every lane's row address (a byte offset into the image, 16-byte aligned), uint32
    ``[executions, 32]``. By execution index modulo 4:

    * ldmatrix (``distinct_only`` False): 0 uniform rows (overlaps by chance), 1 distinct rows,
      2 rows drawn from four (the first, the last and two random rows: heavy overlap, the image's
      ends), 3 rows drawn from the four first and four last rows;
    * stmatrix (``distinct_only`` True): distinct rows always; odd executions take exactly the 16
      first and 16 last rows (the ends). §9.7.14.5.16 says only "consecutive instances of rows need
      not be stored contiguously in memory" and "each address corresponds to the start of a matrix
      row": it orders no two lanes' stores, so the image after rows that overlap is not defined by
      the manual (the semantics' "a later row wins" is a choice) and is not recorded.

    The addresses of threads 8-31 (.x1) and 16-31 (.x2) are random valid rows as well: "for target
    architecture sm_75 or lower, all threads must contain valid addresses" (§9.7.14.5.15) does not
    bind sm_90, and the recording shows they are not read.
    """
    rows = size // ROW_BYTES
    r = stream(seed, ADDRESSES, executions * rows).reshape(executions, rows)
    e = np.arange(executions)[:, None]
    everything = _distinct(r, np.arange(rows))
    ends = np.concatenate([np.arange(16), np.arange(rows - 16, rows)])
    ends_distinct = _distinct(r[:, :WARP], ends)
    if distinct_only:
        chosen = np.where(e % 2 == 0, everything, ends_distinct)
    else:
        c = stream(seed, CHOICE, executions * WARP * 2).reshape(executions, WARP, 2)
        uniform = (c[..., 0] % np.uint64(rows)).astype(np.int64)
        two_random = (c[:, :2, 1] % np.uint64(rows)).astype(np.int64)  # per execution
        four = np.concatenate([np.zeros((executions, 1), np.int64), np.full((executions, 1), rows - 1), two_random], axis=1)
        pick = (c[..., 1] >> np.uint64(32)) % np.uint64(4)
        few = np.take_along_axis(four, pick.astype(np.int64), axis=1)
        corner = np.concatenate([np.arange(4), np.arange(rows - 4, rows)])[((c[..., 1] >> np.uint64(40)) % np.uint64(8)).astype(np.int64)]
        chosen = np.select([e % 4 == 0, e % 4 == 1, e % 4 == 2], [uniform, everything, few], corner)
    return (chosen * ROW_BYTES).astype(np.uint32)


def registers(seed: int, executions: int, count: int) -> np.ndarray:
    """Random source registers, uint32 ``[executions, 32, count]``."""
    return (stream(seed, REGISTERS, executions * WARP * count) >> np.uint64(32)).astype(np.uint32).reshape(executions, WARP, count)


def inputs(entry: dict) -> dict[str, np.ndarray]:
    """The inputs of one plan entry (the kernel's arguments before its output): ``image`` and
    ``addresses`` (ldmatrix, stmatrix), ``registers`` (stmatrix, movmatrix)."""
    seed, n, op = entry["seed"], entry["executions"], entry["opcode"]
    out = {}
    if op in ("ldmatrix", "stmatrix"):
        out["image"] = image(seed, n, entry["image_bytes"])
        out["addresses"] = row_addresses(seed, n, entry["image_bytes"], op == "stmatrix")
    if op in ("stmatrix", "movmatrix"):
        out["registers"] = registers(seed, n, entry["registers"])
    return out


def output_shape(entry: dict) -> tuple[int, ...]:
    n = entry["executions"]
    return (n, entry["image_bytes"]) if entry["opcode"] == "stmatrix" else (n, WARP, entry["registers"])


def encode(entry: dict, output: np.ndarray, known: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> np.ndarray:
    """The stored form of ``output`` (see the module docstring); :func:`decode` inverts it."""
    base = outputs[entry["xor_with"]] if entry["xor_with"] else None
    if base is not None:
        return output ^ base
    if entry["opcode"] == "stmatrix":
        return output ^ known["image"]
    return output


def decode(entry: dict, stored: np.ndarray, known: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> np.ndarray:
    """The recorded output of ``entry`` from its stored array, the inputs ``known`` and the already
    decoded ``outputs`` of the other forms (its base first)."""
    if entry["xor_with"]:
        return stored ^ outputs[entry["xor_with"]]
    if entry["opcode"] == "stmatrix":
        return stored ^ known["image"]
    return stored


def launch(cp, function, entry: dict, known: dict[str, np.ndarray]) -> np.ndarray:
    """One block of one warp per execution; returns the output (uint32 registers, or the uint8
    image for stmatrix) on the host."""
    n = entry["executions"]
    args = [cp.asarray(known[k]) for k in ("image", "addresses", "registers") if k in known]
    out = cp.zeros(output_shape(entry), dtype=np.uint8 if entry["opcode"] == "stmatrix" else np.uint32)
    function((n,), (WARP,), (*args, out, np.uint32(n)))
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(out)


def block_digests(xp, out, block: int):
    """One uint64 per ``block`` consecutive executions of ``out`` (``[executions, ...]``: uint32
    registers, or the uint8 bytes of a stmatrix image): ``sum_i v_i * (splitmix64(i) | 1) mod
    2^64`` over the block's values in C order, zero-extended, ``i`` counting from 0 within the
    block (exhaustive_device's digest; ``xp``: numpy or cupy)."""
    return exhaustive_device.block_digests(xp, out, block, "executions")


def save(path: Path, stored: dict[str, np.ndarray], limit: int = FILE_LIMIT) -> int | None:
    """Write ``stored`` (compressed); should the file exceed ``limit`` bytes, keep the first half
    of every form's whole outputs, and so on (the digests stay). Returns the whole executions kept
    per form where some were cut, else None."""
    kept = None
    while True:
        np.savez_compressed(path, **{k: v if k.endswith("_digests") else v[:kept] for k, v in stored.items()})  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
        full = max((len(v) for k, v in stored.items() if k.endswith("_x")), default=0)
        if path.stat().st_size <= limit or (kept or full) <= 1:
            return kept
        kept = (kept or full) // 2


def run(bundle: Path, out: Path, cp=None, meta_of=None) -> dict:
    """Every plan entry, in plan order (a base form before the forms stored against it). ``cp``: the
    array module (CuPy unless a test passes a stand-in); ``meta_of``: the device meta function
    (default exhaustive_device.device_meta). Writes :data:`OUTPUT_FILE` and :data:`META_FILE`
    into ``out``; returns the meta."""
    import time

    if cp is None:
        import cupy

        cp = cupy
    meta_of = meta_of or exhaustive_device.device_meta
    plan = json.loads((bundle / PLAN_FILE).read_text())
    try:
        module = cp.RawModule(path=str(bundle / CUBIN_FILE))
    except Exception as error:  # a driver that cannot load the cubin: let it compile the PTX
        print(f"{CUBIN_FILE} did not load ({error}); loading {PTX_FILE}")
        module = cp.RawModule(path=str(bundle / PTX_FILE))
    outputs: dict[str, np.ndarray] = {}
    stored: dict[str, np.ndarray] = {}
    cache: dict[tuple, dict] = {}
    start = time.time()
    for entry in plan["entries"]:
        key = (entry["seed"], entry["opcode"], entry["executions"], entry["image_bytes"], entry["registers"])
        if key not in cache:
            cache = {key: inputs(entry)}  # ss spellings share their inputs, and follow each other
        known = cache[key]
        output = launch(cp, module.get_function(entry["kernel"]), entry, known)
        full = entry["full"]
        outputs[entry["name"]] = output[:full]
        stored[f"{entry['name']}_x"] = encode(entry, output[:full], {k: v[:full] for k, v in known.items()}, outputs)
        stored[f"{entry['name']}_digests"] = block_digests(np, output[full:], entry["block"])
    out.mkdir(parents=True, exist_ok=True)
    kept = save(out / OUTPUT_FILE, stored)
    meta = {
        "campaign": "movement",
        "device": meta_of(cp),
        "plan": plan,
        "seconds": round(time.time() - start, 3),
        "executions": int(sum(e["executions"] for e in plan["entries"])),
        "whole_outputs_cut_to": kept,
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT`` (see the module docstring); ``argv`` without the program name."""
    if len(argv) != 3 or argv[0] != "run":
        print(__doc__)
        return 2
    refusal = exhaustive_device.missing_from_bundle(Path(argv[1]), PLAN_FILE, CUBIN_FILE)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    meta = run(Path(argv[1]), Path(argv[2]))
    print(f"{len(meta['plan']['entries'])} forms, {meta['executions']} warp executions in {meta['seconds']} s on {meta['device'].get('gpu')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
