"""Throughput of ``ptxspec vectors`` and ``ptxspec check-vectors``.

    python bench/vectors.py [--n 200000] [--loop-n 5000] [--profile spec|sm_90] [--seed 0]

For each of fma.rn.f32, cvt.rn.satfinite.e4m3x2.f32, add.rn.f16x2 and mad.wide.s32 it prints
vectors/s of

* generation: :func:`ptxspec.conformance.vectors.jsonl_bytes` on ``--n`` vectors (edge values
  first, then seeded random ones; the batched semantics where a fast path exists) against a plain
  per-vector Python loop (:func:`~ptxspec.conformance.vectors.generate` + ``json.dumps``) on
  ``--loop-n`` vectors -- the code of ``python -m ptxspec.conformance.vectors --bench``;
* checking: those ``--n`` vectors written to a JSON Lines file, read back
  (:func:`~ptxspec.conformance.check_vectors.read_vectors`) and checked
  (:func:`~ptxspec.conformance.check_vectors.check_vectors`, batched where a fast path exists),
  the read and the check timed apart, against :func:`~ptxspec.conformance.check_vectors.check_one`
  called once per vector in a plain loop on the first ``--loop-n`` of them;

and the ratio of each pair. Exit status 1 if a generated vector fails its own check.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from ptxspec.conformance.check_vectors import check_one, check_vectors, read_vectors
from ptxspec.conformance.vectors import BENCH_FORMS, generation_rates, jsonl_bytes


def checking_rates(text: str, n: int, loop_n: int, seed: int, profile: str) -> tuple[float, float, float, int]:
    """(read vectors/s, check vectors/s, per-vector loop check vectors/s, mismatches) of ``n``
    generated vectors of ``text``."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "v.jsonl")
        with open(path, "wb") as out:
            out.write(jsonl_bytes(text, n, seed, profile))
        start = time.perf_counter()
        vectors = list(read_vectors(path))
        read = n / (time.perf_counter() - start)
    start = time.perf_counter()
    summary = check_vectors(vectors, profile)
    fast = n / (time.perf_counter() - start)
    start = time.perf_counter()
    loop_bad = sum(check_one(v, profile) is not None for v in vectors[:loop_n])
    slow = min(loop_n, n) / (time.perf_counter() - start)
    return read, fast, slow, summary.mismatched + loop_bad


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python bench/vectors.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="vectors per form, batched (default 200000)")
    parser.add_argument("--loop-n", type=int, default=5_000, help="vectors per form, per-vector loop (default 5000)")
    parser.add_argument("--profile", choices=["spec", "sm_90"], default="spec")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{'form':30} {'generate/s':>12} {'loop/s':>9} {'ratio':>7}   {'read/s':>10} {'check/s':>11} {'loop/s':>9} {'ratio':>7}")
    failed = False
    for text in BENCH_FORMS:
        gen, gen_loop = generation_rates(text, args.n, args.loop_n, args.seed, args.profile)
        read, check, check_loop, bad = checking_rates(text, args.n, args.loop_n, args.seed, args.profile)
        failed |= bad > 0
        print(f"{text:30} {gen:12,.0f} {gen_loop:9,.0f} {gen / gen_loop:6.1f}x   {read:10,.0f} {check:11,.0f} {check_loop:9,.0f} {check / check_loop:6.1f}x"
              + (f"   {bad} MISMATCHED" if bad else ""))
    print(f"(--n {args.n:,}, per-vector loops on {args.loop_n:,}, profile {args.profile}; vectors/s, one process)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
