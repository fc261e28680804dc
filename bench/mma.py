"""Time the sm_90 mma datapath: a batch of m16n8k16 f16 -> f32 mma, vectorised against the readable
per-element model, on the same seeded inputs (issue 7's speed target is a ratio of 100 or more).

    python bench/mma.py [--batch 1000] [--loop 10] [--seed 0]

The vectorised path is :func:`ptxspec.semantics.mma.datapath_matrix` (numpy integers over the whole
batch); the baseline is :func:`ptxspec.semantics.mma.datapath_dot` called once per element of D, on
the first ``--loop`` mma of the batch only, its time for the whole batch extrapolated linearly (and
labelled so). Both use the datapath the sm_90 profile pins for m16n8k16 f16 -> f32. Exit status 1 if
the two disagree on any looped element.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ptxspec.semantics import mma
from ptxspec.semantics.results import profile_named

TYPES = ("f16", "f16", "f32", "f32")


def inputs(batch: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f16 A [batch, 16, 16] and B [batch, 16, 8] with exponents spread over 2^-8 .. 2^8 and random
    signs; C [batch, 16, 8] f32 of similar magnitudes."""
    rng = np.random.default_rng(seed)

    def f16(shape):
        sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(15)
        exponent = rng.integers(15 - 8, 15 + 9, shape, dtype=np.uint64) << np.uint64(10)
        return sign | exponent | rng.integers(0, 1 << 10, shape, dtype=np.uint64)

    c = (rng.standard_normal((batch, 16, 8)) * 16).astype(np.float32).view(np.uint32).astype(np.uint64)
    return f16((batch, 16, 16)), f16((batch, 16, 8)), c


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--loop", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    model = mma.datapath_for(profile_named("sm_90"), *TYPES, None, "m16n8k16")
    A, B, C = inputs(args.batch, args.seed)
    start = time.perf_counter()
    D = mma.datapath_matrix(model, *TYPES, A, B, C)
    vector_s = time.perf_counter() - start
    start = time.perf_counter()
    looped = np.zeros((args.loop, 16, 8), dtype=np.uint64)
    for n in range(args.loop):
        for i in range(16):
            for j in range(8):
                looped[n, i, j] = mma.datapath_dot(model, *TYPES, [int(x) for x in A[n, i]], [int(y) for y in B[n, :, j]], int(C[n, i, j]))
    loop_s = (time.perf_counter() - start) * args.batch / args.loop
    same = np.array_equal(looped, D[: args.loop])
    print(f"m16n8k16 f16 -> f32 (sm_90 datapath), {args.batch} mma = {args.batch * 128:,} dot products")
    print(f"  vectorised:              {vector_s:8.3f} s")
    print(f"  per element (readable):  {loop_s:8.3f} s  (extrapolated from {args.loop} mma)")
    print(f"  ratio:                   {loop_s / vector_s:8.1f}")
    print(f"  identical on the looped mma: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
