"""The exhaustive silicon spaces on the GPU: run every index, keep one digest per chunk.

This file runs on the device machine with numpy and CuPy only (no ptxspec, attrs or click)::

    python3 conformance/silicon/exhaustive_device.py run BUNDLE OUT [--forms GLOB]
    python3 conformance/silicon/exhaustive_device.py values BUNDLE OUT --form TEXT --chunk C

``BUNDLE`` is what ``python -m ptxspec.conformance.silicon exhaustive prepare BUNDLE`` made here:
``exhaustive.cubin`` (one ``.entry`` per form, assembled by ``ptxas -arch=sm_90a``) and
``exhaustive-plan.json`` (per form: kernel name, instruction text, space, output width).

``run`` launches each form's kernel over all 2^32 indices in batches of 2^28, reduces every batch
to its 256 chunk digests on the GPU, and writes ``OUT/exhaustive-digests.npz`` (one
``uint64[4096]`` array per form, keyed by the instruction text) and ``OUT/meta-exhaustive.json``
(GPU name, driver, CUDA runtime, ptxas version, per-form GPU seconds). ``values`` keeps the raw
results of one chunk of one form (``OUT/exhaustive-values.npz``): the digests say *which* chunk
differs, these values say *which* results.

The digest (the same function is used here, with CuPy, and by the checker, with numpy):
for chunk ``c`` (2^20 consecutive indices), ``digest_c = sum(r_i * w(i)) mod 2^64`` with
``w(i) = splitmix64(i) | 1``, where ``r_i`` is the destination register's bits zero-extended to 64.
Each weight is odd, hence invertible modulo 2^64: a single wrong result, ``r'_i = r_i + delta``
with ``0 < |delta| < 2^32``, changes the digest by ``delta * w(i)``, which is never 0 mod 2^64
(the factor 2 of ``delta`` is at most 2^31, and ``w(i)`` contributes none). Several wrong results
cancel only when a sum of such terms vanishes, which for splitmix64's well-mixed weights happens
with probability about 2^-64. numpy and CuPy both do this in uint64 arrays, whose multiply and
sum wrap modulo 2^64.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

#: The index space of every form: 2^32 indices (all operand pairs of a 16-bit binary form, all
#: f32 bit patterns of a conversion), in 4096 chunks of 2^20.
INDEX_BITS = 32
CHUNK_BITS = 20
CHUNKS = 1 << (INDEX_BITS - CHUNK_BITS)
#: Indices per kernel launch on the device (256 chunks).
BATCH_BITS = 28

PLAN_FILE = "exhaustive-plan.json"
CUBIN_FILE = "exhaustive.cubin"
DIGEST_FILE = "exhaustive-digests.npz"
META_FILE = "meta-exhaustive.json"
VALUES_FILE = "exhaustive-values.npz"

_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def splitmix64(xp, x):
    """splitmix64 of the uint64 array ``x`` (``xp``: numpy or cupy), every step modulo 2^64:
    ``z = x + 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
    z = (z ^ z >> 27) * 0x94D049BB133111EB; return z ^ z >> 31``."""
    u = xp.uint64
    z = x.astype(u) + u(_GOLDEN)
    z = (z ^ (z >> u(30))) * u(_MIX1)
    z = (z ^ (z >> u(27))) * u(_MIX2)
    return z ^ (z >> u(31))


def weights(xp, start: int, count: int):
    """``w(i) = splitmix64(i) | 1`` for ``i`` in ``[start, start + count)``, as uint64."""
    index = xp.arange(start, start + count, dtype=xp.uint64)
    return splitmix64(xp, index) | xp.uint64(1)


def block_digests(xp, values, block: int, unit: str = "values"):
    """One uint64 per ``block`` consecutive items of ``values`` (``[items, ...]``, any unsigned
    dtype): ``sum_i v_i * (splitmix64(i) | 1) mod 2^64`` over the block's values in C order,
    zero-extended, ``i`` counting from 0 within the block -- the digest the mma and movement
    campaigns keep for the results they do not store whole. The block must hold a power of two of
    values; ``unit`` names the items in the refusal."""
    size = block * int(np.prod(values.shape[1:]))
    bits = size.bit_length() - 1
    if size != 1 << bits or values.shape[0] % block:
        raise ValueError(f"{values.shape[0]} {unit} of {values.shape[1:]}: not whole blocks of {block} (a power of two in values)")
    w = xp.tile(weights(xp, 0, size), values.shape[0] // block)
    return chunk_digests(xp, values.reshape(-1), w, bits)


def one_value_changes(expected: np.ndarray, digest: int):
    """The single values of one block's expected outputs ``expected`` whose change alone would give
    the recorded ``digest`` (:func:`block_digests` of the whole block; the digest is all there is
    of it). With one wrong value i the digests differ by ``delta * w_i mod 2^64``, and w_i is odd,
    so invertible: ``delta = diff * w_i^-1``. Yields (index into ``expected``, expected value,
    implied recorded value) for each i whose implied value fits the value's width; nothing where
    the digests agree."""
    diff = (digest - int(block_digests(np, expected, len(expected))[0])) % (1 << 64)
    if diff == 0:
        return
    flat = expected.reshape(-1)
    width = 1 << (8 * expected.dtype.itemsize)
    for i, w in enumerate(weights(np, 0, len(flat)).tolist()):
        value = (int(flat[i]) + diff * pow(w, -1, 1 << 64)) % (1 << 64)
        if value < width:
            yield tuple(int(k) for k in np.unravel_index(i, expected.shape)), int(flat[i]), value


def chunk_digests(xp, results, w, chunk_bits: int = CHUNK_BITS):
    """The digests of consecutive chunks of ``2^chunk_bits`` results: ``sum(r_i * w_i) mod 2^64``
    per chunk. ``results`` (any unsigned dtype) and ``w`` (:func:`weights` of the same indices)
    have the same length, a multiple of the chunk size, and start at a chunk boundary."""
    size = 1 << chunk_bits
    if len(results) != len(w) or len(results) % size:
        raise ValueError(f"{len(results)} results, {len(w)} weights: not whole chunks of {size}")
    products = results.astype(xp.uint64) * w
    return products.reshape(-1, size).sum(axis=1, dtype=xp.uint64)


def digests_of(xp, results, start: int, chunk_bits: int = CHUNK_BITS):
    """:func:`chunk_digests` of ``results`` for the indices ``[start, start + len(results))``."""
    return chunk_digests(xp, results, weights(xp, start, len(results)), chunk_bits)


# ---------------------------------------------------------------------------------------------
# On the device: CuPy
# ---------------------------------------------------------------------------------------------

#: Launch shape of the grid-stride kernels: enough resident threads to fill an H100/H200.
BLOCKS = 132 * 16
THREADS = 256


def _select(plan: dict, pattern: str | None) -> list[dict]:
    forms = plan["forms"]
    if pattern is not None:
        forms = [f for f in forms if fnmatch.fnmatchcase(f["text"], pattern)]
    if not forms:
        raise SystemExit(f"no form of the plan matches {pattern!r}")
    return forms


def _launch(cp, function, buffer, base: int, n: int) -> None:
    function((BLOCKS,), (THREADS,), (buffer, np.uint32(base), np.uint32(n)))


def missing_from_bundle(bundle: Path, *names: str) -> str | None:
    """A device command's refusal of a bundle that lacks one of ``names``: one line naming the
    file (the caller prints it and exits with status 2), or None when every file is there."""
    for name in names:
        if not (bundle / name).is_file():
            return f"error: {bundle / name}: no such file (prepare the bundle first)"
    return None


def save_recording(cp, out: Path, output: str, meta_file: str, campaign: str, plan: dict, arrays: dict) -> None:
    """Write a one-file recording: ``arrays`` into ``OUT/output`` and the meta file (campaign,
    ptxas, form count, device) -- what the memory, atomic and async device scripts end with."""
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / output, **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    meta = {"campaign": campaign, "ptxas": plan.get("ptxas"), "forms": len(plan["forms"]), "device": device_meta(cp)}
    (out / meta_file).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


def run_command(argv: list[str], script: str, plan_file: str, cubin_file: str, run) -> None:
    """The ``SCRIPT run BUNDLE OUT`` command line of a one-file device script: a wrong command or a
    bundle without its plan or cubin is one line on standard error and exit status 2."""
    if len(argv) != 4 or argv[1] != "run":
        print(f"usage: {script} run BUNDLE OUT", file=sys.stderr)
        sys.exit(2)
    refusal = missing_from_bundle(Path(argv[2]), plan_file, cubin_file)
    if refusal:
        print(refusal, file=sys.stderr)
        sys.exit(2)
    run(Path(argv[2]), Path(argv[3]))


def device_meta(cp) -> dict:
    """The GPU, its driver and CUDA runtime, as every campaign's meta file records them."""
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        smi = "nvidia-smi not found"
    return {
        "gpu": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver_version": cp.cuda.runtime.driverGetVersion(),
        "cuda_runtime_version": cp.cuda.runtime.runtimeGetVersion(),
        "nvidia_smi": smi,
    }


def run(
    bundle: Path, out: Path, pattern: str | None = None, batch_bits: int = BATCH_BITS, index_bits: int = INDEX_BITS, chunk_bits: int = CHUNK_BITS, cp=None
) -> dict:
    """Every form of the plan (those matching ``pattern``) over all ``2^index_bits`` indices; see
    the module docstring (``cp``: the array module, CuPy unless a test passes a stand-in). The
    batch loop is outermost so that each batch's weights are computed once and shared by every
    form. Returns the meta."""
    if cp is None:
        import cupy

        cp = cupy

    plan = json.loads((bundle / PLAN_FILE).read_text())
    forms = _select(plan, pattern)
    module = cp.RawModule(path=str(bundle / CUBIN_FILE))
    functions = {f["text"]: module.get_function(f["kernel"]) for f in forms}
    batch_bits = min(batch_bits, index_bits)
    batch, batches = 1 << batch_bits, 1 << (index_bits - batch_bits)
    buffers = {16: cp.empty(batch, dtype=cp.uint16), 32: cp.empty(batch, dtype=cp.uint32)}
    digests = {f["text"]: cp.zeros(1 << (index_bits - chunk_bits), dtype=cp.uint64) for f in forms}
    seconds = {f["text"]: 0.0 for f in forms}
    per_batch = batch >> chunk_bits
    began = time.perf_counter()
    print(f"{len(forms)} forms x 2^{index_bits} indices in {batches} batches of 2^{batch_bits}", flush=True)
    for b in range(batches):
        base = b * batch
        w = weights(cp, base, batch)
        for f in forms:
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            buffer = buffers[f["width"]]
            _launch(cp, functions[f["text"]], buffer, base, batch)
            digests[f["text"]][b * per_batch : (b + 1) * per_batch] = chunk_digests(cp, buffer, w, chunk_bits)
            end.record()
            end.synchronize()
            seconds[f["text"]] += cp.cuda.get_elapsed_time(start, end) / 1000
        del w
        print(f"batch {b + 1}/{batches}: indices [{base:#x}, {base + batch:#x}), {time.perf_counter() - began:.1f} s", flush=True)
    host = {text: cp.asnumpy(d) for text, d in digests.items()}
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / DIGEST_FILE, **host)
    meta = {
        **device_meta(cp),
        "assembler": f"ptxas -arch=sm_90a ({plan['ptxas']})",
        "ptxas_version": plan["ptxas"],
        "campaign": "exhaustive campaign, round exhaustive: every input of the small forms as chunk digests (conformance/silicon/exhaustive.py, exhaustive_device.py)",
        "digest": "chunk c of 2^20 indices: sum(r_i * (splitmix64(i) | 1)) mod 2^64",
        "index_bits": index_bits,
        "chunk_bits": chunk_bits,
        "forms": [f["text"] for f in forms],
        "spaces": {f["text"]: f["space"] for f in forms},
        "widths": {f["text"]: f["width"] for f in forms},
        "gpu_seconds": {text: round(s, 4) for text, s in seconds.items()},
        "wall_seconds": round(time.perf_counter() - began, 2),
        "rejected": plan.get("rejected", {}),
    }
    meta["self_check"] = _self_check(plan, host, chunk_bits)
    (out / META_FILE).write_text(json.dumps(meta, indent=1))
    print(
        f"{len(forms)} forms x 2^{index_bits} indices on {meta['gpu']} ({meta['nvidia_smi']}): "
        f"{sum(seconds.values()):.1f} GPU seconds, {meta['wall_seconds']} s wall",
        flush=True,
    )
    return meta


def _self_check(plan: dict, digests: dict, chunk_bits: int) -> dict:
    """Compare the few chunk digests that ``prepare`` computed from the semantics (the plan's
    ``expected``) with this run's, and print the verdict: a quick sign that kernels, operands and
    digests line up, before anyone runs the checker."""
    verdicts: dict[str, bool] = {}
    if chunk_bits != CHUNK_BITS:
        return verdicts
    for text, chunks in plan.get("expected", {}).items():
        if text in digests:
            verdicts[text] = all(int(digests[text][int(c)]) == int(d) for c, d in chunks.items())
    if verdicts:
        bad = [t for t, ok in verdicts.items() if not ok]
        print(f"self-check against the semantics: {len(verdicts) - len(bad)}/{len(verdicts)} forms agree" + (f"; DIFFER: {bad}" if bad else ""), flush=True)
    return verdicts


def values(bundle: Path, out: Path, text: str, chunk: int, cp=None) -> None:
    """The raw results of chunk ``chunk`` of form ``text`` (2^20 values) and that chunk's digest,
    for the checker's ``--values`` option: it then names every differing index."""
    if cp is None:
        import cupy

        cp = cupy

    plan = json.loads((bundle / PLAN_FILE).read_text())
    (form,) = [f for f in plan["forms"] if f["text"] == text] or [None]
    if form is None or not 0 <= chunk < CHUNKS:
        raise SystemExit(f"no form {text!r} in the plan, or chunk {chunk} outside [0, {CHUNKS})")
    size = 1 << CHUNK_BITS
    buffer = cp.empty(size, dtype=cp.uint16 if form["width"] == 16 else cp.uint32)
    function = cp.RawModule(path=str(bundle / CUBIN_FILE)).get_function(form["kernel"])
    _launch(cp, function, buffer, chunk * size, size)
    digest = int(digests_of(cp, buffer, chunk * size)[0])
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out / VALUES_FILE,
        results=cp.asnumpy(buffer),
        form=np.array(text),
        chunk=np.array(chunk),
        digest=np.array(digest, dtype=np.uint64),
        gpu=np.array(device_meta(cp)["gpu"]),
    )
    print(f"{text} chunk {chunk}: digest {digest:#018x}, values in {out / VALUES_FILE}", flush=True)


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT [--forms GLOB]`` or ``values BUNDLE OUT --form TEXT --chunk C`` (see the
    module docstring); ``argv`` without the program name."""
    args = list(argv)
    options: dict[str, str] = {}
    for name in ("--forms", "--form", "--chunk"):
        if name in args:
            k = args.index(name)
            if k + 1 == len(args):
                args = []  # an option without its value: the usage below
                break
            options[name] = args.pop(k + 1)
            del args[k]
    chunk = options.get("--chunk", "")
    run_ok = len(args) == 3 and args[0] == "run"
    values_ok = len(args) == 3 and args[0] == "values" and "--form" in options and chunk.isdigit()
    if not (run_ok or values_ok):
        print(__doc__)
        return 2
    bundle, out = Path(args[1]), Path(args[2])
    refusal = missing_from_bundle(bundle, PLAN_FILE, CUBIN_FILE)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    if run_ok:
        run(bundle, out, options.get("--forms"))
    else:
        values(bundle, out, options["--form"], int(chunk))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
