"""Time wgmma at the sm_90 datapath: a batch of m64n256k16 f16 -> f32 ``wgmma.mma_async`` (A and B
through matrix descriptors in 128B-swizzled shared-memory images), the batch API against the
readable per-element model, on the same seeded inputs (issue 7's speed target is a ratio of 100 or
more).

    python bench/wgmma.py [--batch 100] [--loop 2] [--seed 0]

The vectorised path is :func:`ptxspec.semantics.wgmma.wgmma_batch` (descriptors grouped, operands
gathered with numpy, :func:`ptxspec.semantics.mma.datapath_matrix` over the whole batch, D put
back into the 128 threads' registers). The baseline reads A and B with
:func:`~ptxspec.semantics.wgmma_layout.read_matrix`, C from the accumulator fragment, and calls
:func:`ptxspec.semantics.mma.datapath_dot` once per element of D, on the first ``--loop`` wgmma of
the batch only, its time for the whole batch extrapolated linearly (and labelled so). Both use
the sm_90 profile's wgmma datapath (:mod:`ptxspec.profiles.sm_90.wgmma`); where it has none, the
mma datapath measured for m16n8k16 f16 -> f32 stands in (the output says which). Exit status 1 if
the two disagree on any looped element. The spec-level path (the allowed set of every element) is
timed on one wgmma.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ptxspec.semantics import mma
from ptxspec.semantics import wgmma
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.results import profile_named
from ptxspec.spec.catalogue import parse

FORM = "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"
TYPES = ("f16", "f16", "f32", "f32")
M, N, K = 64, 256, 16
#: K-major, 128-byte swizzle: rows of 128 bytes (K = 16 f16 fill the first 32), 8-row groups
#: 1024 bytes apart (SBO); A at 0, B at 8192, both on 1024-byte pattern boundaries (base offset 0).
DESC_A = wl.MatrixDescriptor(0, 16, 1024, 0, "128B")
DESC_B = wl.MatrixDescriptor(8192, 16, 1024, 0, "128B")
IMAGE_BYTES = 8192 + (N // 8) * 1024


def datapath() -> tuple[mma.Datapath, str]:
    """The sm_90 datapath of the form, and where it comes from."""
    form = parse(FORM)
    model = wgmma.measured_datapath(profile_named("sm_90"), form)
    if model is not None:
        return model, "sm_90 wgmma datapath (profiles/sm_90/wgmma.py)"
    stand_in = mma.datapath_for(profile_named("sm_90"), *TYPES, None, "m16n8k16")
    return stand_in, "STAND-IN: the sm_90 mma m16n8k16 datapath (the profile has no wgmma datapath for it)"


def inputs(batch: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shared-memory images [batch, bytes] holding A (64 x 16 f16) and B (16 x 256 f16) with
    exponents spread over 2^-8 .. 2^8 and random signs, and the accumulator registers
    [batch, 128, 128] holding C (f32 of similar magnitudes)."""
    rng = np.random.default_rng(seed)
    form = parse(FORM)

    def f16(shape):
        sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(15)
        exponent = rng.integers(15 - 8, 15 + 9, shape, dtype=np.uint64) << np.uint64(10)
        return sign | exponent | rng.integers(0, 1 << 10, shape, dtype=np.uint64)

    A, B = f16((batch, M, K)), f16((batch, K, N))
    C = (rng.standard_normal((batch, M, N)) * 16).astype(np.float32).view(np.uint32).astype(np.uint64)
    images = np.zeros((batch, IMAGE_BYTES), dtype=np.uint8)
    for i in range(batch):
        images[i] = wl.write_matrix(images[i], DESC_A, A[i], "f16", "K")
        images[i] = wl.write_matrix(images[i], DESC_B, B[i], "f16", "K", operand="b")
    return images, wl.wgmma_result_registers(form, C), C


def per_element(model: mma.Datapath, image: np.ndarray, c_registers: np.ndarray) -> np.ndarray:
    """One wgmma the readable way: read the matrices, one datapath_dot per element of D."""
    form = parse(FORM)
    A = wl.read_matrix(image, DESC_A, M, K, "f16", "K")
    B = wl.read_matrix(image, DESC_B, K, N, "f16", "K", operand="b")
    C = wl.fragment_layout(form["shape"], "c", "f32").to_matrix(c_registers)
    D = np.zeros((M, N), dtype=np.uint64)
    for i in range(M):
        row = [int(x) for x in A[i]]
        for j in range(N):
            D[i, j] = mma.datapath_dot(model, *TYPES, row, [int(y) for y in B[:, j]], int(C[i, j]))
    return wl.wgmma_result_registers(form, D)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--loop", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    model, origin = datapath()
    images, c_regs, _ = inputs(args.batch, args.seed)
    n = args.batch
    desc_a = np.full(n, DESC_A.encode(), dtype=np.uint64)
    desc_b = np.full(n, DESC_B.encode(), dtype=np.uint64)
    start = time.perf_counter()
    D = wgmma.wgmma_batch(FORM, images, desc_a, desc_b, c_regs, profile="sm_90", datapath=model)
    vector_s = time.perf_counter() - start
    start = time.perf_counter()
    looped = np.stack([per_element(model, images[i], c_regs[i]) for i in range(args.loop)])
    loop_s = (time.perf_counter() - start) * n / args.loop
    same = np.array_equal(looped, D[: args.loop])
    start = time.perf_counter()
    spec = wgmma.wgmma_mma_async(FORM, images[0], DESC_A, DESC_B, c_regs[0], profile="spec")
    spec_s = time.perf_counter() - start
    d0 = wl.fragment_layout("m64n256k16", "d", "f32").to_matrix(D[0])
    inside = sum(int(x) in s for x, s in zip(d0.ravel().tolist(), spec.d.ravel().tolist()))
    print(f"{FORM}, {n} wgmma = {n * M * N:,} dot products of K = {K}")
    print(f"  datapath: {origin}: {model.describe()}")
    print(f"  batch API (wgmma_batch):   {vector_s:8.3f} s")
    print(f"  per element (readable):    {loop_s:8.3f} s  (extrapolated from {args.loop} wgmma)")
    print(f"  ratio:                     {loop_s / vector_s:8.1f}")
    print(f"  identical on the looped wgmma: {'yes' if same else 'NO'}")
    print(f"  spec level (allowed sets), one wgmma: {spec_s:8.3f} s; the datapath's D of wgmma 0 lies in them for {inside} of {M * N} elements")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
