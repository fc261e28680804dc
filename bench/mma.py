"""Time the sm_90 mma datapath: batches of mma, vectorised against the readable per-element model,
on the same seeded inputs (issue 7's speed target: a ratio of 100 or more for m16n8k16 f16 -> f32).

    python bench/mma.py [--batch 1000] [--loop 10] [--seed 0] [--repeat 3] [--clock wall|cpu] [--table-batch 200]

The vectorised path is :func:`ptxspec.semantics.mma.datapath_matrix`, which runs
:mod:`ptxspec.semantics.mma_vectorised` (float64 numpy where that is exact, float32 numpy for the
binary32 chains of m8n8k4 .f16, else int64 numpy); the baseline is :func:`ptxspec.semantics.mma.datapath_dot` called once
per element of D, on the first ``--loop`` mma of the batch only, its time for the whole batch
extrapolated linearly (and labelled so). Both use the datapath the sm_90 profile pins for the
combination. Each time is the best of ``--repeat`` runs (the machine may be shared); ``--clock
cpu`` measures the process's CPU time instead of the wall clock. The first line is the issue's
(m16n8k16 f16 -> f32, ``--batch`` mma); the table below it times the other measured combinations
on ``--table-batch`` mma (.s8: :func:`ptxspec.semantics.mma.integer_matrix` against a Python
integer dot product per element). Exit status 1 if the two disagree on any looped element.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ptxspec.semantics import mma
from ptxspec.semantics.results import profile_named
from ptxspec.spec.types import FORMATS

#: (label, A, B, C, D types, .f64 rounding modifier, shape): the issue's line first.
COMBINATIONS = [
    ("m16n8k16 f16 -> f32", ("f16", "f16", "f32", "f32"), None, "m16n8k16"),
    ("m16n8k16 bf16 -> f32", ("bf16", "bf16", "f32", "f32"), None, "m16n8k16"),
    ("m16n8k8 tf32 -> f32", ("tf32", "tf32", "f32", "f32"), None, "m16n8k8"),
    ("m16n8k16 f16 -> f16", ("f16", "f16", "f16", "f16"), None, "m16n8k16"),
    ("m16n8k32 e4m3 -> f32", ("e4m3", "e4m3", "f32", "f32"), None, "m16n8k32"),
    ("m16n8k32 e5m2.e4m3 -> f16", ("e5m2", "e4m3", "f16", "f16"), None, "m16n8k32"),
    ("m8n8k4 f64 .rn", ("f64", "f64", "f64", "f64"), "rn", "m8n8k4"),
    ("m8n8k4 f16 -> f32 (binary32)", ("f16", "f16", "f32", "f32"), None, "m8n8k4"),
    ("m8n8k4 f16 -> f16 (binary32)", ("f16", "f16", "f16", "f16"), None, "m8n8k4"),
    ("m16n8k32 s8 -> s32", ("s8", "s8", "s32", "s32"), None, "m16n8k32"),
]


def _mnk(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def elements(t: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Bits of finite ``t`` elements with random signs and mantissas and exponents within 2^+-8 of
    1 (inside the format's normal range); integers: uniform bits."""
    if t in mma.INTEGER_TYPES:
        width, _ = mma.INTEGER_TYPES[t]
        return rng.integers(0, 1 << width, shape, dtype=np.uint64)
    f = FORMATS[t]
    low, high = max(1, f.bias - 8), min(f.exponent_field_max - 1, f.bias + 8)
    sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(f.exponent_bits + f.mantissa_bits)
    exponent = rng.integers(low, high + 1, shape, dtype=np.uint64) << np.uint64(f.mantissa_bits)
    bits = sign | exponent | rng.integers(0, 1 << f.mantissa_bits, shape, dtype=np.uint64)
    return bits << np.uint64(f.shift)


def inputs(types: tuple[str, ...], shape: str, batch: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A [batch, M, K], B [batch, K, N], C [batch, M, N] element bits, seeded."""
    m, n, k = _mnk(shape)
    rng = np.random.default_rng(seed)
    return elements(types[0], (batch, m, k), rng), elements(types[1], (batch, k, n), rng), elements(types[2], (batch, m, n), rng)


def _clock(kind: str):
    return time.process_time if kind == "cpu" else time.perf_counter


def _best(run, repeat: int, clock) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = clock()
        out = run()
        best = min(best, clock() - start)
    return best, out


def measure(types, rounding, shape: str, batch: int, loop: int, seed: int, repeat: int, clock) -> tuple[float, float, bool]:
    """(vectorised s, per-element s extrapolated to ``batch``, identical on the looped mma)."""
    A, B, C = inputs(types, shape, batch, seed)
    loop = min(loop, batch)
    m, n, _ = _mnk(shape)
    if types[0] in mma.INTEGER_TYPES:
        vector_s, D = _best(lambda: mma.integer_matrix(types[0], types[1], A, B, C), repeat, clock)

        def element(t, i, j) -> int:
            total = sum(mma.integer_value(types[0], int(x)) * mma.integer_value(types[1], int(y)) for x, y in zip(A[t, i], B[t, :, j]))
            return (total + mma.integer_value("s32", int(C[t, i, j]))) & 0xFFFFFFFF
    else:
        from ptxspec.semantics.numerics import Rounding

        model = mma.datapath_for(profile_named("sm_90"), *types, Rounding(rounding) if rounding else None, shape)
        vector_s, D = _best(lambda: mma.datapath_matrix(model, *types, A, B, C), repeat, clock)

        def element(t, i, j) -> int:
            return mma.datapath_dot(model, *types, [int(x) for x in A[t, i]], [int(y) for y in B[t, :, j]], int(C[t, i, j]))

    def looped() -> np.ndarray:
        out = np.zeros((loop, m, n), dtype=np.uint64)
        for t in range(loop):
            for i in range(m):
                for j in range(n):
                    out[t, i, j] = element(t, i, j)
        return out

    loop_s, L = _best(looped, repeat, clock)
    return vector_s, loop_s * batch / loop, bool(np.array_equal(L, D[:loop]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--loop", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--table-batch", type=int, default=200, help="mma per row of the table (0: no table)")
    args = parser.parse_args(argv)
    clock = _clock(args.clock)
    label, types, rounding, shape = COMBINATIONS[0]
    vector_s, loop_s, same = measure(types, rounding, shape, args.batch, args.loop, args.seed, args.repeat, clock)
    m, n, _ = _mnk(shape)
    print(f"{label} (sm_90 datapath), {args.batch} mma = {args.batch * m * n:,} dot products ({args.clock} clock, best of {args.repeat})")
    print(f"  vectorised:              {vector_s:8.3f} s")
    print(f"  per element (readable):  {loop_s:8.3f} s  (extrapolated from {min(args.loop, args.batch)} mma)")
    print(f"  ratio:                   {loop_s / vector_s:8.1f}")
    print(f"  identical on the looped mma: {'yes' if same else 'NO'}")
    ok = same
    if args.table_batch:
        print(f"\nother measured combinations, {args.table_batch} mma each (per element: extrapolated from {min(args.loop, args.table_batch)} mma)")
        print(f"  {'combination':28s} {'vectorised s':>12s} {'per element s':>14s} {'ratio':>8s}  same")
        for label, types, rounding, shape in COMBINATIONS[1:]:
            vector_s, loop_s, same = measure(types, rounding, shape, args.table_batch, args.loop, args.seed, args.repeat, clock)
            print(f"  {label:28s} {vector_s:12.4f} {loop_s:14.3f} {loop_s / vector_s:8.1f}  {'yes' if same else 'NO'}")
            ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
