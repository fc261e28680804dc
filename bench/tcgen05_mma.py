"""Time tcgen05.mma through the front door (``execute`` on a State, profile ``sm_100``) beside
MMA-Sim (microsoft/MMA-Sim, the public Blackwell model the ``sm_100`` profile restates) on the same
logical matrices.

    /work/venv-peers/bin/python bench/tcgen05_mma.py [--repeat 3] [--seed 0] [--profile]

Three instructions, each ``.cta_group::1`` with A and B in shared memory (K-major, no swizzle) and
C = D in Tensor Memory (Layout D: row i in lane i):

* ``m128n256k16 .kind::f16``, f16 x f16 -> f32;
* ``m128n256k32 .kind::f8f6f4``, e4m3 x e4m3 -> f32;
* ``m128n256k64 .kind::mxf4nvf4.block_scale.block16``, e2m1 x e2m1 -> f32 with ue4m3 scale factors.

For each it prints the milliseconds per instruction of ptxspec (the whole ``execute``: descriptor
decoding, shared-memory gathers, the datapath, the new State) and of MMA-Sim (``TCGen05MMA`` /
``TCGen05MMABlockScale`` called on torch tensors, no state), best of ``--repeat``; their ratio
(MMA-Sim's time over ptxspec's: above 1, ptxspec is faster); and whether D is bit-identical. It
exits 1 if any D differs. Without ``mmasim`` (and torch) it says so and times ptxspec alone.
``--profile`` prints cProfile's top functions of one ptxspec instruction of each.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

try:
    import ptxspec  # noqa: F401
except ImportError:  # run from a checkout without the editable install
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics import tcgen05_operands as ops
from ptxspec.semantics.instructions import execute
from ptxspec.semantics.state import State, tensor_memory_address

try:
    import torch
    from mmasim.nv_ptx import TCGen05MMA, TCGen05MMABlockScale
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

ALLOC = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"
M, N = 128, 256
#: name -> (PTX form, MMA-Sim text, kind, A/B type, K, scale type or None)
CASES = {
    "m128n256k16 f16->f32": ("tcgen05.mma.cta_group::1.kind::f16", "m128n256k16.kind::f16.f32.f16.f16", "f16", "f16", 16, None),
    "m128n256k32 f8f6f4 e4m3->f32": ("tcgen05.mma.cta_group::1.kind::f8f6f4", "m128n256k32.kind::f8f6f4.f32.e4m3.e4m3", "f8f6f4", "e4m3", 32, None),
    "m128n256k64 mxf4nvf4 block16 ue4m3": (
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16",
        "m128n256k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3",
        "mxf4nvf4",
        "e2m1",
        64,
        "ue4m3",
    ),
}
TORCH_TYPES = {} if torch is None else {"f16": torch.float16, "e4m3": torch.float8_e4m3fn, "f32": torch.float32}


def elements(t: str, rng: np.random.Generator, shape) -> np.ndarray:
    """Finite element bits of moderate magnitude (exponent near 1), random sign and mantissa."""
    if t == "f16":
        exponent = rng.integers(12, 18, size=shape)
        return ((rng.integers(0, 2, size=shape) << 15) | (exponent << 10) | rng.integers(0, 1 << 10, size=shape)).astype(np.uint64)
    if t == "e4m3":
        exponent = rng.integers(4, 11, size=shape)
        return ((rng.integers(0, 2, size=shape) << 7) | (exponent << 3) | rng.integers(0, 8, size=shape)).astype(np.uint64)
    if t == "e2m1":
        return rng.integers(0, 16, size=shape).astype(np.uint64)
    raise ValueError(t)


def f32_bits(rng: np.random.Generator, shape) -> np.ndarray:
    return (rng.standard_normal(shape).astype(np.float32) * 8).view(np.uint32).astype(np.uint64)


def place(image: np.ndarray, descriptor: td.SmemDescriptor, bits: int, matrix: np.ndarray, operand: str) -> None:
    """Store ``matrix`` (A: M x K, B: K x N element bits) where ``descriptor`` says."""
    r, c = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]), indexing="ij")
    mn, k = (r, c) if operand == "a" else (c, r)
    byte, bit = td.element_address(descriptor, bits, mn, k, "K")
    byte, bit, values = np.asarray(byte).ravel(), np.asarray(bit).ravel(), matrix.ravel().astype(np.uint64)
    for offset in range(max(1, bits // 8)):
        part = (values >> np.uint64(8 * offset)) & np.uint64(0xFF if bits >= 8 else (1 << bits) - 1)
        np.bitwise_or.at(image, byte + offset, (part << bit.astype(np.uint64)).astype(np.uint8))


def build(name: str, rng: np.random.Generator) -> dict:
    """The logical matrices of one case and the State / operands that hold them."""
    text, _, kind, t, k, stype = CASES[name]
    bits = td.TYPE_BITS[t]
    a, b, c = elements(t, rng, (M, k)), elements(t, rng, (k, N)), f32_bits(rng, (M, N))
    row_bytes = k * bits // 8  # one row of K elements; core matrices 16 bytes of K by 8 rows
    a_desc = td.SmemDescriptor(start_address=0, leading_byte_offset=128, stride_byte_offset=128 * (row_bytes // 16))
    b_start = -(-(M * row_bytes) // 1024) * 1024
    b_desc = td.SmemDescriptor(start_address=b_start, leading_byte_offset=128, stride_byte_offset=128 * (row_bytes // 16))
    end = b_start + N * row_bytes
    image = np.zeros(end + 16, dtype=np.uint8)  # tcgen05.alloc writes the address to [end]
    place(image, a_desc, bits, a, "a")
    place(image, b_desc, bits, b, "b")
    state = execute(ALLOC, [end, 512], state=State(image.tobytes())).state
    tm = state.tensor_memory.with_cells(np.repeat(np.arange(M), N), np.tile(np.arange(N), M), c.ravel())
    scale_type = None
    sa = sb = None
    sources_scale: list[int] = []
    if stype is not None:
        scale_type = stype
        vec = 4  # block16 at K = 64
        sa = rng.integers(0x30, 0x40, size=(M, vec)).astype(np.uint64)  # ue4m3 near 1
        sb = rng.integers(0x30, 0x40, size=(vec, N)).astype(np.uint64)
        for operand, factors, column in (("a", sa, 256), ("b", sb.T, 264)):
            cta, lane, col, byte = ops.scale_factor_cells(operand, kind, "block16", factors.shape[0], k, 0)
            words: dict[tuple[int, int], int] = {}
            values = np.repeat(factors[..., None], 4, axis=2)
            for ln, cl, by, v in zip(lane.ravel(), col.ravel(), byte.ravel(), values.ravel()):
                key = (int(ln), column + int(cl))
                words[key] = words.get(key, 0) | (int(v) << (8 * int(by)))
            keys = list(words)
            tm = tm.with_cells([x[0] for x in keys], [x[1] for x in keys], [words[x] for x in keys])
        sources_scale = [tensor_memory_address(0, 256), tensor_memory_address(0, 264)]
    state = state.with_tensor_memory(tm)
    instr = td.InstrDescriptor(kind=kind, m=M, n=N, atype=t, btype=t, dtype="f32", scale_type=scale_type)
    sources = [0, a_desc.encode(), b_desc.encode(), instr.encode(), *sources_scale, 1]
    return {"text": text, "state": state, "sources": sources, "a": a, "b": b, "c": c, "sa": sa, "sb": sb}


def ptxspec_d(case: dict) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    after = execute(case["text"], case["sources"], "sm_100", state=case["state"]).state
    elapsed = time.perf_counter() - start
    return elapsed, after.tensor_memory.words()[:M, :N].astype(np.uint32)


def to_torch(t: str, bits: np.ndarray, packed: bool = False):
    bits = np.asarray(bits, dtype=np.uint64)
    if t == "e2m1":  # two per byte along the last axis, the earlier k in the high half (MMA-Sim's unpack_uint8_to_fp4)
        pairs = bits.reshape(bits.shape[:-1] + (-1, 2))
        return torch.from_numpy(((pairs[..., 0] << np.uint64(4)) | pairs[..., 1]).astype(np.uint8))
    if t == "f32":
        return torch.from_numpy(bits.astype(np.uint32).view(np.int32)).view(torch.float32)
    if t == "f16":
        return torch.from_numpy(bits.astype(np.uint16).view(np.int16)).view(torch.float16)
    return torch.from_numpy(np.ascontiguousarray(bits.astype(np.uint8))).view(TORCH_TYPES[t])


def mmasim_d(name: str, case: dict) -> tuple[float, np.ndarray]:
    _, sim_text, _, t, _, stype = CASES[name]
    a = to_torch(t, case["a"])
    b = to_torch(t, case["b"].T).T if t == "e2m1" else to_torch(t, case["b"])
    c = to_torch("f32", case["c"])
    if stype is None:
        op = TCGen05MMA("Blackwell", sim_text)
        start = time.perf_counter()
        d = op(a, b, c)
    else:
        op = TCGen05MMABlockScale("Blackwell", sim_text)
        sa = torch.from_numpy(case["sa"].astype(np.uint8)).view(torch.float8_e4m3fn)
        sb = torch.from_numpy(case["sb"].astype(np.uint8)).view(torch.float8_e4m3fn)
        start = time.perf_counter()
        d = op(a, b, c, sa, sb)
    elapsed = time.perf_counter() - start
    return elapsed, d.contiguous().view(torch.int32).numpy().view(np.uint32)


def profile_one(case: dict) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    execute(case["text"], case["sources"], "sm_100", state=case["state"])
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions of one ptxspec instruction of each case")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    if torch is None:
        print("note: mmasim (and torch) not importable: timing ptxspec alone (run with /work/venv-peers/bin/python for the comparison)")
    print(f"{'instruction':38s} {'ptxspec ms':>11s} {'MMA-Sim ms':>11s} {'MMA-Sim/ptxspec':>16s}  D bit-identical")
    failed = False
    for name in CASES:
        case = build(name, rng)
        ours = [ptxspec_d(case) for _ in range(args.repeat)]
        ours_ms = 1e3 * min(t for t, _ in ours)
        if torch is None:
            print(f"{name:38s} {ours_ms:11.1f} {'-':>11s} {'-':>16s}  -")
        else:
            theirs = [mmasim_d(name, case) for _ in range(args.repeat)]
            theirs_ms = 1e3 * min(t for t, _ in theirs)
            same = bool((ours[0][1] == theirs[0][1]).all())
            failed |= not same
            print(f"{name:38s} {ours_ms:11.1f} {theirs_ms:11.1f} {theirs_ms / ours_ms:16.2f}  {'yes' if same else 'NO'}")
            if not same:
                diff = np.argwhere(ours[0][1] != theirs[0][1])
                i, j = diff[0]
                print(f"    {len(diff)} element(s) differ; first D[{i}, {j}]: ptxspec {ours[0][1][i, j]:#010x}, MMA-Sim {theirs[0][1][i, j]:#010x}")
        if args.profile:
            print(profile_one(case))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
