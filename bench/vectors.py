"""Throughput of ``ptxspec vectors`` and ``ptxspec check-vectors``, end to end.

    python bench/vectors.py [--n 400000] [--loop-n 5000] [--profile spec|sm_90] [--seed 0] [--repeat 2]

For each of fma.rn.f32, cvt.rn.satfinite.e4m3x2.f32, add.rn.f16x2 and mad.wide.s32 it prints
vectors/s of

* generate: from the arguments to the JSON Lines file on disk --
  :func:`ptxspec.conformance.vectors.jsonl_bytes` (edge values, seeded random inputs, the batched
  semantics, the text in bulk) and the write -- for ``--n`` vectors, against the plain per-vector
  loop (:func:`~ptxspec.conformance.vectors.generate`, ``json.dumps`` of each vector, the write)
  on ``--loop-n`` vectors;
* check: from that file to the summary -- :func:`~ptxspec.conformance.check_vectors.read_items`
  (the canonical lines in bulk) and :func:`~ptxspec.conformance.check_vectors.check_vectors` --
  against the plain per-vector loop on a file of the first ``--loop-n`` lines (every line read by
  ``json``, ``read_items(fast=False)``, then :func:`~ptxspec.conformance.check_vectors.check_one`
  per vector);

and the ratio of each pair; the bulk paths are timed ``--repeat`` times and the best run counts
(the loops once). Rates are per CPU second of this process (``time.process_time``), so
that they are per core and do not count time the process waited for a core on a loaded machine;
the wall-clock seconds of the whole run are printed at the end. Exit status 1 if a generated
vector fails its own check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from ptxspec.conformance.check_vectors import check_one, check_vectors, read_items
from ptxspec.conformance.vectors import BENCH_FORMS, generate, jsonl_bytes


def _rate(n: int, seconds: float) -> float:
    return n / max(seconds, 1e-9)


def rates(text: str, n: int, loop_n: int, seed: int, profile: str, folder: str, repeat: int = 2) -> tuple[float, float, float, float, int]:
    """(generate/s, per-vector generate loop/s, check/s, per-vector check loop/s, mismatches) of
    ``text``, every rate from the arguments or file bytes to the file or the summary; the bulk
    paths best of ``repeat`` runs."""
    path, loop_path = os.path.join(folder, "v.jsonl"), os.path.join(folder, "loop.jsonl")
    with open(path, "wb") as out:  # warm-up: imports and the catalogue's first look-ups
        out.write(jsonl_bytes(text, 64, seed, profile))
    check_vectors(read_items(path), profile)
    generate_rate = 0.0
    for _ in range(repeat):
        start = time.process_time()
        with open(path, "wb") as out:
            out.write(jsonl_bytes(text, n, seed, profile))
        generate_rate = max(generate_rate, _rate(n, time.process_time() - start))

    start = time.process_time()
    with open(loop_path, "w", encoding="utf-8") as out:
        for v in generate(text, loop_n, seed, profile):
            out.write(json.dumps(v) + "\n")
    generate_loop = _rate(loop_n, time.process_time() - start)

    check_rate = 0.0
    for _ in range(repeat):
        start = time.process_time()
        summary = check_vectors(read_items(path), profile)
        check_rate = max(check_rate, _rate(n, time.process_time() - start))

    start = time.process_time()
    loop_bad = sum(check_one(v, profile) is not None for v in read_items(loop_path, fast=False))
    check_loop = _rate(loop_n, time.process_time() - start)
    return generate_rate, generate_loop, check_rate, check_loop, summary.mismatched + len(summary.unsupported) + loop_bad


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python bench/vectors.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400_000, help="vectors per form (default 400000)")
    parser.add_argument("--loop-n", type=int, default=5_000, help="vectors per form in the per-vector loops (default 5000)")
    parser.add_argument("--profile", choices=["spec", "sm_90"], default="spec")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each bulk path; the best counts (default 2)")
    args = parser.parse_args(argv)
    wall = time.perf_counter()
    print(f"{'form':30} {'generate/s':>12} {'loop/s':>9} {'ratio':>7}   {'check/s':>12} {'loop/s':>9} {'ratio':>7}")
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for text in BENCH_FORMS:
            gen, gen_loop, check, check_loop, bad = rates(text, args.n, args.loop_n, args.seed, args.profile, folder, max(1, args.repeat))
            failed |= bad > 0
            print(f"{text:30} {gen:12,.0f} {gen_loop:9,.0f} {gen / gen_loop:6.0f}x   {check:12,.0f} {check_loop:9,.0f} {check / check_loop:6.0f}x"
                  + (f"   {bad} MISMATCHED" if bad else ""))
    print(f"(--n {args.n:,}, per-vector loops on {args.loop_n:,}, profile {args.profile}; vectors per CPU second, one process; "
          f"{time.perf_counter() - wall:.1f} s wall clock)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
