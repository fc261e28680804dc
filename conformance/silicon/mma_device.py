"""The device side of the mma probe campaign (numpy + CuPy only; no ptxspec needed there).

::

    python -m ptxspec.conformance.silicon.mma_campaign prepare BUNDLE   # here, with ptxas
    python3 conformance/silicon/mma_device.py run BUNDLE OUT            # on the GPU machine
    python -m ptxspec.conformance.silicon.mma_campaign prepare-sparse BUNDLE   # mma.sp, here
    python3 conformance/silicon/mma_device.py run-sparse BUNDLE OUT     # mma.sp, on the GPU

``BUNDLE`` holds ``mma.cubin`` (one kernel per combination), ``mma-plan.json`` (the combinations:
kernel, instruction, per operand its registers and element type, the number of designed probes and
of random mma, the seed) and ``mma-probes.npz`` (the designed probe registers, made on the host with
the fragment layouts). ``run`` appends the random inputs -- regenerated here by :func:`random_registers`,
a counter-based generator written with numpy integer operations only, so that the replay on any
machine regenerates the same bits -- launches one warp per mma, and writes ``mma-<i>.npz`` (per
combination: the probe inputs and every D register) and ``meta-mma.json``.

Register arrays are ``[mma, lane, register]``: uint32, or uint64 where the register is 64 bits
(f64). Each lane loads its own registers, executes the one ``mma.sync.aligned`` of the combination
and stores its D registers: no layout is computed on the device.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)

#: Random input classes, by mma index modulo 4 (see :func:`_float_elements`).
CLASSES = ("bits", "unit", "spread", "short")


def splitmix64(counter: np.ndarray) -> np.ndarray:
    """SplitMix64 of each uint64 in ``counter`` (wrapping arithmetic; identical on every machine)."""
    with np.errstate(over="ignore"):
        z = counter.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _stream(seed: int, operand: int, count: int, offset: int = 0) -> np.ndarray:
    """``count`` pseudo-random uint64 for ``operand`` (0..3) of a combination seeded ``seed``."""
    key = (np.uint64(seed) << np.uint64(8)) | np.uint64(operand)
    with np.errstate(over="ignore"):
        base = splitmix64(np.array([key], dtype=np.uint64))[0]
        return splitmix64(np.arange(offset, offset + count, dtype=np.uint64) + base)


def _u(x: np.ndarray, lo: int, bits: int) -> np.ndarray:
    """Bits ``lo .. lo+bits-1`` of each word, as int64."""
    return ((x >> np.uint64(lo)) & np.uint64((1 << bits) - 1)).astype(np.int64)


def _float_elements(r: np.ndarray, cls: np.ndarray, el: dict) -> np.ndarray:
    """Element bit patterns of a float format from random words ``r`` and class indices ``cls``.

    * ``bits``: uniformly random encodings, the exponent field redrawn where it would encode an
      infinity or NaN (the designed probes cover those);
    * ``unit``: magnitudes in [1/4, 4): typical data, long carries and ties at the last place;
    * ``spread``: exponents within +-10 of the bias (partial cancellation, alignment shifts);
    * ``short``: significands with two random leading bits, exponents within +-4, a quarter zeros
      (exact sums, signed zeros, exact ties).
    """
    e_bits, m_bits, shift = el["exponent_bits"], el["mantissa_bits"], el["shift"]
    bias, emax = (1 << (e_bits - 1)) - 1, (1 << e_bits) - 1
    sign = _u(r, 63, 1)
    mant = _u(r, 0, m_bits)
    low = _u(r, 32, shift) if shift else np.zeros_like(mant)
    raw_exp = _u(r, 40, e_bits)
    # "bits": keep the exponent unless it is all ones (inf/NaN in IEEE formats; for e4m3 only
    # mantissa all ones is NaN, but the top binade is redrawn too, for a uniform rule).
    exp_bits = np.where(raw_exp == emax, _u(r, 48, e_bits) % emax, raw_exp)
    span = lambda w: np.clip(bias - w + _u(r, 48, 8) % (2 * w + 1), 1, emax - 1)
    exp_unit = bias - 2 + _u(r, 48, 2)
    exp_spread = span(10)
    exp_short = span(4)
    mant_short = (_u(r, 0, 2) << max(0, m_bits - 2)) & ((1 << m_bits) - 1)
    zero_short = _u(r, 56, 2) == 0
    exp = np.select([cls == 0, cls == 1, cls == 2], [exp_bits, exp_unit, exp_spread], exp_short)
    mant = np.where(cls == 3, mant_short, mant)
    low = np.where(cls == 0, low, 0)
    bits = (sign << (e_bits + m_bits)) | (exp << m_bits) | mant
    bits = np.where((cls == 3) & zero_short, sign << (e_bits + m_bits), bits)
    return ((bits << shift) | low).astype(np.uint64)


def _int_elements(r: np.ndarray, cls: np.ndarray, el: dict) -> np.ndarray:
    """Integer elements: uniformly random bits (class 0 and 2), small magnitudes (1 and 3)."""
    bits = el["bits"]
    mask = (1 << bits) - 1
    small = (_u(r, 20, 5) - 16) & mask if el["signed"] else _u(r, 20, 4)
    uniform = _u(r, 0, min(bits, 62)) if bits < 64 else r.astype(np.int64)
    if bits == 32:
        uniform = _u(r, 0, 32)
    return np.where(cls % 2 == 1, small, uniform).astype(np.uint64) & np.uint64(mask)


def random_registers(operand: dict, count: int, seed: int, operand_index: int, first_mma: int = 0) -> np.ndarray:
    """The random registers ``[count, 32, registers]`` of one operand (mma ``first_mma`` onward)."""
    el = operand["element"]
    per = operand["register_bits"] // el["bits"]
    regs = operand["registers"]
    n = count * 32 * regs * per
    r = _stream(seed, operand_index, n, first_mma * 32 * regs * per)
    mma = np.repeat(np.arange(first_mma, first_mma + count, dtype=np.int64), 32 * regs * per)
    cls = mma % len(CLASSES)
    elements = _float_elements(r, cls, el) if el["kind"] == "float" else _int_elements(r, cls, el)
    elements = elements.reshape(count, 32, regs, per)
    out = np.zeros((count, 32, regs), dtype=np.uint64)
    for i in range(per):  # element 0 in the least significant bits of its register
        out |= elements[..., i] << np.uint64(i * el["bits"])
    return out.astype(np.uint64 if operand["register_bits"] == 64 else np.uint32)


def combination_inputs(combo: dict, probes: dict) -> list[np.ndarray]:
    """A, B, C registers of every mma of ``combo``: the designed probes first, then the random ones."""
    out = []
    for k, name in enumerate("abc"):
        operand = combo["operands"][name]
        dtype = np.uint64 if operand["register_bits"] == 64 else np.uint32
        designed = probes[f"{combo['name']}_{name}"].astype(dtype)
        rand = random_registers(operand, combo["random"], combo["seed"], k)
        out.append(np.concatenate([designed, rand]))
    return out


def random_metadata(fields: list[int], count: int, seed: int, first_mma: int = 0) -> np.ndarray:
    """The random metadata operand ``e`` ``[count, 32]`` (uint32) of mma.sp: each of the 8 nibbles of
    every lane's word is one of ``fields`` (the 4-bit index pairs the manual defines), drawn from
    the counter stream of operand 4. Every nibble of every lane is valid, so the metadata is valid
    whichever lanes the selector names and however the fields are placed."""
    table = np.asarray(fields, dtype=np.uint64)
    r = _stream(seed, 4, count * 32 * 8, first_mma * 32 * 8)
    nibbles = table[((r >> np.uint64(32)) % np.uint64(len(table))).astype(np.intp)].reshape(count, 32, 8)
    out = np.zeros((count, 32), dtype=np.uint64)
    for i in range(8):
        out |= nibbles[..., i] << np.uint64(4 * i)
    return out.astype(np.uint32)


def sparse_inputs(entry: dict, probes: dict) -> list[np.ndarray]:
    """A, B, C registers and the metadata E ``[mma, 32]`` of every mma of one mma.sp plan entry:
    the designed probes first, then the random ones."""
    a, b, c = combination_inputs(entry, probes)
    designed = probes[f"{entry['name']}_e"].astype(np.uint32)
    e = np.concatenate([designed, random_metadata(entry["fields"], entry["random"], entry["seed"])])
    return [a, b, c, e]


def _device_meta(cp, plan: dict, campaign: str) -> dict:
    return {
        **_exhaustive_device().device_meta(cp),
        "assembler": "ptxas -arch=sm_90a; see rejected in this file for forms ptxas refused",
        "campaign": campaign,
        "generator": "mma_device.random_registers, mma_device.random_metadata (SplitMix64 counter stream; classes " + ", ".join(CLASSES) + ")",
        "combinations": plan["combinations"],
        "rejected": plan["rejected"],
    }


def run_sparse(bundle: Path, out: Path) -> None:
    """The mma.sp campaign: ``sparse.cubin``, ``sparse-plan.json``, ``sparse-probes.npz`` in
    ``bundle``; writes ``mma-sp-<i>.npz`` (per entry: probe A, B, C, E and every D) and
    ``meta-mma-sp.json``. One kernel per (combination, sparsity selector): the selector is an
    immediate."""
    import cupy as cp

    plan = json.loads((bundle / "sparse-plan.json").read_text())
    with np.load(bundle / "sparse-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    mod = cp.RawModule(path=str(bundle / "sparse.cubin"))
    files: dict[int, dict[str, np.ndarray]] = {}
    for entry in plan["combinations"]:
        a, b, c, e = sparse_inputs(entry, probes)
        n = a.shape[0]
        d_op = entry["operands"]["d"]
        dev = [cp.asarray(x) for x in (a, b, c, e)]
        d = cp.zeros((n, 32, d_op["registers"]), dtype=np.uint32)
        warps_per_block = 4
        mod.get_function(entry["kernel"])(((n + warps_per_block - 1) // warps_per_block,), (32 * warps_per_block,), (*dev, d, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        arrays = files.setdefault(entry["file"], {})
        for name, x in zip("abce", (a, b, c, e)):
            arrays[f"{entry['name']}_{name}"] = x[: entry["probes"]]
        arrays[f"{entry['name']}_d"] = cp.asnumpy(d)
        print(f"{entry['name']}: {n} mma ({entry['probes']} designed, {entry['random']} random)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    for index, arrays in sorted(files.items()):
        np.savez_compressed(out / f"mma-sp-{index}.npz", **arrays)
    meta = _device_meta(cp, plan, "issue 7 mma.sp: conformance/silicon/mma_campaign.py (prepare-sparse), conformance/silicon/mma_device.py (run-sparse)")
    (out / "meta-mma-sp.json").write_text(json.dumps(meta, indent=1))
    print(f"recorded {len(plan['combinations'])} mma.sp entries on {meta['gpu']} ({meta['nvidia_smi']})")


def run_sparse_more(bundle: Path, out: Path) -> None:
    """mma.sp round 2: ``sparse-more.cubin``, ``sparse-more-plan.json``, ``sparse-more-probes.npz``
    in ``bundle``; writes ``mma-sp-more-<i>.npz`` (per entry: probe A, B, C, E; D of the probes and
    the first ``keep`` random mma; the digests of the other random mma, one per block of
    :data:`DIGEST_BLOCK`: :func:`block_digests`, the dense round 2's) and ``meta-mma-sp-more.json``."""
    import cupy as cp

    plan = json.loads((bundle / "sparse-more-plan.json").read_text())
    with np.load(bundle / "sparse-more-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    mod = cp.RawModule(path=str(bundle / "sparse-more.cubin"))
    files: dict[int, dict[str, np.ndarray]] = {}
    for entry in plan["combinations"]:
        a, b, c, e = sparse_inputs(entry, probes)
        n = a.shape[0]
        dev = [cp.asarray(x) for x in (a, b, c, e)]
        d = cp.zeros((n, 32, entry["operands"]["d"]["registers"]), dtype=np.uint32)
        warps_per_block = 4
        mod.get_function(entry["kernel"])(((n + warps_per_block - 1) // warps_per_block,), (32 * warps_per_block,), (*dev, d, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        d = cp.asnumpy(d)
        kept = entry["probes"] + entry["keep"]
        arrays = files.setdefault(entry["file"], {})
        for name, x in zip("abce", (a, b, c, e)):
            arrays[f"{entry['name']}_{name}"] = x[: entry["probes"]]
        arrays[f"{entry['name']}_d"] = d[:kept]
        arrays[f"{entry['name']}_digests"] = block_digests(np, d[kept:], DIGEST_BLOCK)
        print(f"{entry['name']}: {n} mma ({entry['probes']} designed, {entry['random']} random; {kept} kept, "
              f"{(n - kept) // DIGEST_BLOCK} digests)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    for index, arrays in sorted(files.items()):
        np.savez_compressed(out / f"mma-sp-more-{index}.npz", **arrays)
    meta = _device_meta(cp, plan, "issue 7 mma.sp round 2: conformance/silicon/mma_campaign.py (prepare-sparse-more), "
                                  "conformance/silicon/mma_device.py (run-sparse-more)")
    meta["digest"] = f"mma_device.block_digests: one uint64 per block of {DIGEST_BLOCK} random mma after the first kept ones"
    (out / "meta-mma-sp-more.json").write_text(json.dumps(meta, indent=1))
    print(f"recorded {len(plan['combinations'])} mma.sp entries (round 2) on {meta['gpu']} ({meta['nvidia_smi']})")


def run(bundle: Path, out: Path) -> None:
    import cupy as cp

    plan = json.loads((bundle / "mma-plan.json").read_text())
    with np.load(bundle / "mma-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    mod = cp.RawModule(path=str(bundle / "mma.cubin"))
    files: dict[int, dict[str, np.ndarray]] = {}
    for combo in plan["combinations"]:
        a, b, c = combination_inputs(combo, probes)
        n = a.shape[0]
        d_op = combo["operands"]["d"]
        d_dtype = np.uint64 if d_op["register_bits"] == 64 else np.uint32
        dev = [cp.asarray(x) for x in (a, b, c)]
        d = cp.zeros((n, 32, d_op["registers"]), dtype=d_dtype)
        warps_per_block = 4
        mod.get_function(combo["kernel"])(((n + warps_per_block - 1) // warps_per_block,), (32 * warps_per_block,), (*dev, d, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        arrays = files.setdefault(combo["file"], {})
        for name, x in zip("abc", (a, b, c)):
            arrays[f"{combo['name']}_{name}"] = x[: combo["probes"]]
        arrays[f"{combo['name']}_d"] = cp.asnumpy(d)
        print(f"{combo['name']}: {n} mma ({combo['probes']} designed, {combo['random']} random)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    for index, arrays in sorted(files.items()):
        np.savez_compressed(out / f"mma-{index}.npz", **arrays)
    meta = {
        **_exhaustive_device().device_meta(cp),
        "assembler": "ptxas -arch=sm_90a (CUDA 13.0); see rejected in this file for forms ptxas refused",
        "campaign": "issue 7: conformance/silicon/mma_campaign.py, conformance/silicon/mma_device.py",
        "generator": "mma_device.random_registers (SplitMix64 counter stream; classes " + ", ".join(CLASSES) + ")",
        "combinations": plan["combinations"],
        "rejected": plan["rejected"],
    }
    (out / "meta-mma.json").write_text(json.dumps(meta, indent=1))
    print(f"recorded {len(plan['combinations'])} combinations on {meta['gpu']} ({meta['nvidia_smi']})")


# ---------------------------------------------------------------------------------------------
# Round 2 (``run-more``): every remaining dense combination, random D as per-block digests
# ---------------------------------------------------------------------------------------------

#: Random mma per digest block, and random mma (after the probes) whose D is kept in full.
DIGEST_BLOCK = 64
FULL_RANDOM = 64


def _exhaustive_device():
    """exhaustive_device (its digest and device meta are shared, not copied): from the package
    here, from the script's folder on the device machine."""
    try:
        from ptxspec.conformance.silicon import exhaustive_device
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import exhaustive_device  # type: ignore
    return exhaustive_device


def _digest_functions():
    """``weights`` and ``chunk_digests`` of exhaustive_device."""
    module = _exhaustive_device()
    return module.weights, module.chunk_digests


def block_digests(xp, d, block: int = DIGEST_BLOCK):
    """One uint64 per ``block`` consecutive mma of the D registers ``d`` ``[mma, 32, registers]``:
    ``sum_i r_i * (splitmix64(i) | 1) mod 2^64`` over the block's registers in ``[mma, lane,
    register]`` order, zero-extended to 64 bits, ``i`` counting from 0 within the block
    (exhaustive_device's digest; ``xp``: numpy or cupy)."""
    weights, chunk_digests = _digest_functions()
    size = block * d.shape[1] * d.shape[2]
    bits = size.bit_length() - 1
    if size != 1 << bits or d.shape[0] % block:
        raise ValueError(f"{d.shape[0]} mma of {d.shape[1:]} registers: not whole blocks of {block} (a power of two in registers)")
    w = xp.tile(weights(xp, 0, size), d.shape[0] // block)
    return chunk_digests(xp, d.reshape(-1), w, bits)


def run_more(bundle: Path, out: Path) -> None:
    """Round 2: ``more.cubin``, ``more-plan.json``, ``more-probes.npz`` in ``bundle``; writes
    ``mma-more-0.npz`` (per combination: probe A, B, C; D of the probes and of the first
    ``full`` random mma; the digests of the other random mma, one per block) and
    ``meta-mma-more.json``."""
    import cupy as cp

    plan = json.loads((bundle / "more-plan.json").read_text())
    with np.load(bundle / "more-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    mod = cp.RawModule(path=str(bundle / "more.cubin"))
    arrays: dict[str, np.ndarray] = {}
    for entry in plan["combinations"]:
        a, b, c = combination_inputs(entry, probes)
        n = a.shape[0]
        d_op = entry["operands"]["d"]
        d_dtype = np.uint64 if d_op["register_bits"] == 64 else np.uint32
        dev = [cp.asarray(x) for x in (a, b, c)]
        d = cp.zeros((n, 32, d_op["registers"]), dtype=d_dtype)
        warps_per_block = 4
        mod.get_function(entry["kernel"])(((n + warps_per_block - 1) // warps_per_block,), (32 * warps_per_block,), (*dev, d, np.uint32(n)))
        cp.cuda.runtime.deviceSynchronize()
        full = entry["probes"] + entry["full"]
        for name, x in zip("abc", (a, b, c)):
            arrays[f"{entry['name']}_{name}"] = x[: entry["probes"]]
        arrays[f"{entry['name']}_d"] = cp.asnumpy(d[:full])
        arrays[f"{entry['name']}_digests"] = cp.asnumpy(block_digests(cp, d[full:], entry["block"]))
        print(f"{entry['name']}: {n} mma ({entry['probes']} designed, {entry['random']} random)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "mma-more-0.npz", **arrays)
    meta = _device_meta(cp, plan, "issue 7 round 2, every remaining dense mma: conformance/silicon/mma_campaign.py (prepare-more), conformance/silicon/mma_device.py (run-more)")
    meta["digest"] = f"per block of {DIGEST_BLOCK} random mma after the first {FULL_RANDOM}: sum_i r_i * (splitmix64(i) | 1) mod 2^64 (exhaustive_device)"
    (out / "meta-mma-more.json").write_text(json.dumps(meta, indent=1))
    print(f"recorded {len(plan['combinations'])} combinations on {meta['gpu']} ({meta['nvidia_smi']})")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "run-more":
        run_more(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "run-sparse":
        run_sparse(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "run-sparse-more":
        run_sparse_more(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        print(__doc__)
        sys.exit(2)
