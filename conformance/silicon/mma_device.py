"""The device side of the mma campaign (numpy + CuPy only; no ptxspec needed there).

::

    python -m ptxspec.conformance.silicon mma prepare BUNDLE [--round ROUND]   # here, with ptxas
    python3 conformance/silicon/mma_device.py run BUNDLE OUT [ROUND]          # on the GPU machine

``ROUND`` is one of :data:`ROUNDS` (default ``mma``): ``mma`` and ``mma-sp`` store every D,
``mma-more`` and ``mma-sp-more`` the D of the designed probes and the first random mma and one
digest per block of random mma after those. exhaustive_device.py must lie beside this file (its
splitmix64, digest and device meta are imported, not copied).

A round's bundle holds ``STEM.cubin`` (one kernel per combination; mma.sp: per combination and
sparsity selector), ``STEM-plan.json`` (the combinations: kernel, instruction, per operand its
registers and element type, the number of designed probes and of random mma, the seed) and
``STEM-probes.npz`` (the designed probe registers, made on the host with the fragment layouts),
``STEM`` being the round's bundle stem (``mma``, ``sparse``, ``more``, ``sparse-more``). ``run``
appends the random inputs -- regenerated here by :func:`random_registers`, a counter-based
generator written with numpy integer operations only, so that the replay on any machine
regenerates the same bits -- launches one warp per mma, and writes ``ROUND-<i>.npz`` (per
combination: the probe inputs and D) and ``meta-ROUND.json``.

Register arrays are ``[mma, lane, register]``: uint32, or uint64 where the register is 64 bits
(f64). Each lane loads its own registers, executes the one ``mma.sync.aligned`` of the combination
and stores its D registers: no layout is computed on the device.

Every round is one loop, :func:`record`, over a :class:`Campaign` (which bundle files, which
inputs, whether the random D is kept whole or as block digests, what the meta says).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

try:
    from ptxspec.conformance.silicon import exhaustive_device
except ImportError:  # on the GPU machine, without ptxspec: run as a script next to exhaustive_device.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import exhaustive_device  # type: ignore

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)

#: Random input classes, by mma index modulo 4 (see :func:`_float_elements`).
CLASSES = ("bits", "unit", "spread", "short")


def _stream(seed: int, operand: int, count: int, offset: int = 0) -> np.ndarray:
    """``count`` pseudo-random uint64 for ``operand`` (0..3; 4: mma.sp metadata) of a combination
    seeded ``seed``: SplitMix64 (exhaustive_device's) of a counter, offset by SplitMix64 of the key."""
    key = (np.uint64(seed) << np.uint64(8)) | np.uint64(operand)
    with np.errstate(over="ignore"):
        base = exhaustive_device.splitmix64(np, np.array([key], dtype=np.uint64))[0]
        return exhaustive_device.splitmix64(np, np.arange(offset, offset + count, dtype=np.uint64) + base)


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


# ---------------------------------------------------------------------------------------------
# The digest rounds (mma-more, mma-sp-more): the bulk of the random D as per-block digests
# ---------------------------------------------------------------------------------------------

#: Random mma per digest block, and random mma (after the probes) whose D is kept in full.
DIGEST_BLOCK = 64
FULL_RANDOM = 64


def block_digests(xp, d, block: int = DIGEST_BLOCK):
    """One uint64 per ``block`` consecutive mma of the D registers ``d`` ``[mma, 32, registers]``:
    ``sum_i r_i * (splitmix64(i) | 1) mod 2^64`` over the block's registers in ``[mma, lane,
    register]`` order, zero-extended to 64 bits, ``i`` counting from 0 within the block
    (exhaustive_device's digest; ``xp``: numpy or cupy)."""
    return exhaustive_device.block_digests(xp, d, block, "mma")


# ---------------------------------------------------------------------------------------------
# The one recording loop, and the four rounds it runs
# ---------------------------------------------------------------------------------------------

#: Threads of a launch block: one warp per mma.
WARPS_PER_BLOCK = 4

ASSEMBLER = "ptxas -arch=sm_90a; see rejected in this file for forms ptxas refused"


@dataclass(frozen=True)
class Campaign:
    """What distinguishes one mma campaign's recording from another's.

    ``bundle``: the stem of the bundle's files (``<bundle>.cubin``, ``<bundle>-plan.json``,
    ``<bundle>-probes.npz``); ``out``: the stem of the recording (``<out>-<file>.npz`` per plan
    ``file``, ``meta-<out>.json``); ``inputs``: the registers of every mma of a plan entry
    (:func:`combination_inputs`: A, B, C; :func:`sparse_inputs`: A, B, C, E); ``kept``: None to
    store every D, else the plan field that counts the random mma whose D is stored in full, the
    other random mma being stored as :func:`block_digests` (per the entry's ``block``, else
    :data:`DIGEST_BLOCK`); the rest is written into the meta as it stands."""

    bundle: str
    out: str
    inputs: Callable[[dict, dict], list]
    kept: str | None
    campaign: str
    generator: str
    assembler: str = ASSEMBLER
    digest: str | None = None


def _launch(cp, function, inputs: list[np.ndarray], d_operand: dict) -> np.ndarray:
    """One warp per mma: every lane loads its input registers, executes the kernel's one mma and
    stores its D registers, ``[mma, 32, registers]`` (uint64 where a register is 64 bits), returned
    to the host."""
    n = inputs[0].shape[0]
    dtype = np.uint64 if d_operand["register_bits"] == 64 else np.uint32
    dev = [cp.asarray(x) for x in inputs]
    d = cp.zeros((n, 32, d_operand["registers"]), dtype=dtype)
    blocks = (n + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK
    function((blocks,), (32 * WARPS_PER_BLOCK,), (*dev, d, np.uint32(n)))
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(d)


def _stored(campaign: Campaign, entry: dict, inputs: list[np.ndarray], d: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays one plan entry adds to its file: the designed probes' inputs (the random ones
    are regenerated by the replay), then D (all of it, or the probes' and the first kept random
    mma's, with the digests of the rest)."""
    name, probes = entry["name"], entry["probes"]
    arrays = {f"{name}_{operand}": x[:probes] for operand, x in zip("abce", inputs)}
    if campaign.kept is None:
        arrays[f"{name}_d"] = d
    else:
        kept = probes + entry[campaign.kept]
        arrays[f"{name}_d"] = d[:kept]
        arrays[f"{name}_digests"] = block_digests(np, d[kept:], entry.get("block", DIGEST_BLOCK))
    return arrays


def _meta(cp, plan: dict, campaign: Campaign) -> dict:
    meta = {
        **exhaustive_device.device_meta(cp),
        "assembler": campaign.assembler,
        "campaign": campaign.campaign,
        "generator": f"{campaign.generator} (SplitMix64 counter stream; classes " + ", ".join(CLASSES) + ")",
        "combinations": plan["combinations"],
        "rejected": plan["rejected"],
    }
    if campaign.digest is not None:
        meta["digest"] = campaign.digest
    return meta


def record(campaign: Campaign, bundle: Path, out: Path, cp=None) -> dict:
    """Run every entry of ``campaign``'s plan in ``bundle`` and write its recording into ``out``
    (``cp``: the array module, CuPy unless a test passes a stand-in). Returns the meta."""
    if cp is None:
        import cupy

        cp = cupy

    plan = json.loads((bundle / f"{campaign.bundle}-plan.json").read_text())
    with np.load(bundle / f"{campaign.bundle}-probes.npz") as z:
        probes = {k: z[k] for k in z.files}
    module = cp.RawModule(path=str(bundle / f"{campaign.bundle}.cubin"))
    files: dict[int, dict[str, np.ndarray]] = {}
    for entry in plan["combinations"]:
        inputs = campaign.inputs(entry, probes)
        d = _launch(cp, module.get_function(entry["kernel"]), inputs, entry["operands"]["d"])
        stored = _stored(campaign, entry, inputs, d)
        files.setdefault(entry["file"], {}).update(stored)
        name = entry["name"]
        kept = f"; {len(stored[f'{name}_d'])} kept, {len(stored[f'{name}_digests'])} digests" if campaign.kept else ""
        print(f"{name}: {len(d)} mma ({entry['probes']} designed, {entry['random']} random{kept})", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    for index, arrays in sorted(files.items()):
        np.savez_compressed(out / f"{campaign.out}-{index}.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    meta = _meta(cp, plan, campaign)
    (out / f"meta-{campaign.out}.json").write_text(json.dumps(meta, indent=1))
    print(f"recorded {len(plan['combinations'])} plan entries into {campaign.out}-*.npz on {meta['gpu']} ({meta['nvidia_smi']})")
    return meta


DENSE = Campaign(
    "mma",
    "mma",
    combination_inputs,
    None,
    campaign="mma campaign, round mma: dense mma.sync, every D stored (conformance/silicon/mma_campaign.py, mma_device.py)",
    generator="mma_device.random_registers",
    assembler="ptxas -arch=sm_90a (CUDA 13.0); see rejected in this file for forms ptxas refused",
)
SPARSE = Campaign(
    "sparse",
    "mma-sp",
    sparse_inputs,
    None,
    campaign="mma campaign, round mma-sp: mma.sp, every D stored (conformance/silicon/mma_campaign.py, mma_device.py)",
    generator="mma_device.random_registers, mma_device.random_metadata",
)
MORE = Campaign(
    "more",
    "mma-more",
    combination_inputs,
    "full",
    campaign="mma campaign, round mma-more: every remaining dense mma, random D as block digests (conformance/silicon/mma_campaign.py, mma_device.py)",
    # random_metadata is named although the dense round draws none: the recorded meta says so.
    generator="mma_device.random_registers, mma_device.random_metadata",
    digest=f"per block of {DIGEST_BLOCK} random mma after the first {FULL_RANDOM}: sum_i r_i * (splitmix64(i) | 1) mod 2^64 (exhaustive_device)",
)
SPARSE_MORE = Campaign(
    "sparse-more",
    "mma-sp-more",
    sparse_inputs,
    "keep",
    campaign="mma campaign, round mma-sp-more: every remaining mma.sp, random D as block digests (conformance/silicon/mma_campaign.py, mma_device.py)",
    generator="mma_device.random_registers, mma_device.random_metadata",
    digest=f"mma_device.block_digests: one uint64 per block of {DIGEST_BLOCK} random mma after the first kept ones",
)

#: The rounds, by the stem of their recording (``meta-<name>.json``, ``<name>-<i>.npz``).
ROUNDS = {c.out: c for c in (DENSE, SPARSE, MORE, SPARSE_MORE)}


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT [ROUND]`` (see the module docstring); ``argv`` without the program name."""
    if len(argv) in (3, 4) and argv[0] == "run" and (len(argv) == 3 or argv[3] in ROUNDS):
        campaign, bundle = ROUNDS[argv[3] if len(argv) == 4 else "mma"], Path(argv[1])
        stem = campaign.bundle
        refusal = exhaustive_device.missing_from_bundle(bundle, *(f"{stem}{suffix}" for suffix in (".cubin", "-plan.json", "-probes.npz")))
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
        record(campaign, bundle, Path(argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
