"""Time tcgen05.st + tcgen05.ld through the front door against a straightforward reference.

    python bench/tcgen05.py [--repeat 20] [--seed 0]

For each data-movement shape of tcgen05.ld/st (§9.7.16.2.3) at its largest ``.num`` (128
registers a thread; 4096 cells a warp), it stores seeded registers with ``execute`` on a
:class:`~ptxspec.semantics.state.State` (the numpy cell maps of
:mod:`ptxspec.semantics.tcgen05_layout` over a 256 KiB Tensor Memory image) and loads them back,
and does the same with the baseline: a per-thread, per-register Python loop over a dict of cells
whose (lane, column) comes from the formulas of the layout module's table, written out here. It
prints the round trips per second of each and their ratio, and exits 1 if the two disagree on any
register or cell.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ptxspec.semantics.instructions import execute
from ptxspec.semantics.state import State

LARGEST = {"32x32b": 128, "16x64b": 128, "16x128b": 64, "16x256b": 32, "16x32bx2": 128}
PER_X1 = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}


def cell(shape: str, t: int, r: int, split: int) -> tuple[int, int]:
    """(lane, column) offsets of thread t's register r: the layout module's table, as loops would say it."""
    g, q = t // 4, t % 4
    if shape == "32x32b":
        return t, r
    if shape == "16x64b":
        return g + 8 * (t % 2), 2 * r + (t // 2) % 2
    if shape == "16x128b":
        return g + 8 * (r % 2), 4 * (r // 2) + q
    if shape == "16x256b":
        return g + 8 * ((r % 4) // 2), 8 * (r // 4) + 2 * q + r % 2
    return t % 16, r + split * (t // 16)


def reference_round_trip(shape: str, num: int, split: int, registers: list[list[int]]) -> tuple[dict, list[list[int]]]:
    memory: dict[tuple[int, int], int] = {}
    for t in range(32):
        for r in range(len(registers)):
            memory[cell(shape, t, r, split)] = registers[r][t]
    loaded = [[memory[cell(shape, t, r, split)] for t in range(32)] for r in range(len(registers))]
    return memory, loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    base = execute("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", [0, 512], state=State(bytes(16))).state
    failed = False
    print(f"{'shape':<22}{'execute round trips/s':>24}{'loop round trips/s':>22}{'ratio':>8}  identical")
    for shape, num in LARGEST.items():
        split = num if shape == "16x32bx2" else 0
        registers = [[int(v) for v in rng.integers(0, 2**32, 32)] for _ in range(PER_X1[shape] * num)]
        extra = [split] if shape == "16x32bx2" else []
        store, load = (f"tcgen05.{op}.sync.aligned.{shape}.x{num}.b32" for op in ("st", "ld"))
        start = time.perf_counter()
        for _ in range(args.repeat):
            state = execute(store, [0, *extra, *map(tuple, registers)], state=base).state
            results = execute(load, [0, *extra], state=state).results
        fast = args.repeat / (time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(args.repeat):
            memory, loaded = reference_round_trip(shape, num, split, registers)
        slow = args.repeat / (time.perf_counter() - start)
        words = state.tensor_memory.words()
        same = [list(r.lanes) for r in results] == loaded and all(words[lane, column] == v for (lane, column), v in memory.items())
        same = same and len(state.tensor_memory.changed_cells(base.tensor_memory)) == len(memory)
        failed |= not same
        print(f"{shape + '.x' + str(num):<22}{fast:>24,.0f}{slow:>22,.0f}{fast / slow:>8.2f}  {'yes' if same else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
