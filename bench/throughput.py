"""Throughput of every scalar form: its batched path against the readable semantics.

    python bench/throughput.py [--forms PATTERN] [--per-family K] [--n 65536] [--profile spec|sm_90]

The forms are every legal form of every family whose semantics takes one thread's registers
(:func:`ptxspec.conformance.coverage.scalar_forms`): all of them with ``--per-family 0``, else at
most K of each family (a seeded sample where a family has more: the video families have up to
55,488 listed spellings, and the SIMD ones 10^10); ``--forms`` keeps those whose text matches a
shell pattern. For each form it prints one line:

* ``rate``: results/s of :func:`~ptxspec.semantics.batch.evaluate_batch_all` on ``--n`` input
  vectors of the vectors generator (edge values first, then seeded random: the inputs
  ``ptxspec vectors`` writes; random bit patterns for mov's .b128 forms, which it does not write), per second of this process's CPU time, best of ``--repeat`` runs
  (numpy's elementwise loops use one thread, so this is the rate of one core, not slowed by other
  jobs on a shared machine). A form without a batched path gets the rate of the loop below.
* ``check``: results/s of checking observed results, as ``ptxspec check-vectors`` does for bit
  outputs: the batched evaluation and :meth:`~ptxspec.semantics.batch.BatchResult.contains` of
  every destination, on each result's canonical bits (CPU time, best of ``--repeat``);
* ``loop``: results/s of the readable semantics, ``evaluate()`` once per vector in a plain Python
  loop, measured on the first ``--loop-n`` vectors (the baseline, in the same run);
* ``x``: the ratio of the two;
* ``same``: whether the batched results equal the one-at-a-time results on those vectors and
  on ``--loop-n`` more drawn from the whole batch (every destination, open sets included).

Then a summary: how many forms have a batched path, how many reach ``--target`` (default 10^6)
results/s in evaluation and in checking, and the ten slowest forms of each. Exit status 1 if any batched result differed.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time

import numpy as np

from ptxspec.conformance import coverage, vectors
from ptxspec.profiles import NAMES as PROFILE_NAMES
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import evaluate
from ptxspec.spec.types import register_bits


def cpu_best(fn, repeat: int) -> float:
    """The least CPU time (seconds, this process) of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-9)


def inputs(form, n: int, seed: int) -> list[np.ndarray]:
    """The vectors generator's inputs; for the forms with a 128-bit register, which it does not
    write (mov's .b128 pack and unpack), seeded random bit patterns (Python integers beyond 64
    bits, as the batched paths take them)."""
    if all(register_bits(o.type) <= 64 for o in (*form.sources, *form.destinations)):
        return vectors.inputs(form, n, seed)
    rng = np.random.default_rng(seed)
    columns = []
    for operand in form.sources:
        width = register_bits(operand.type)
        if width <= 64:
            columns.append(rng.integers(0, 1 << width, n, dtype=np.uint64, endpoint=False))
            continue
        value = np.zeros(n, dtype=object)
        for _ in range(width // 64):
            value = (value << 64) | rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False).astype(object)
        columns.append(value)
    return columns


def measure(form, n: int, loop_n: int, profile: str, repeat: int, seed: int) -> dict:
    """One form's line: its rates and whether the batched results equal the scalar ones."""
    sources = inputs(form, n, seed)
    rows = np.unique(np.concatenate([np.arange(min(loop_n, n)), np.random.default_rng(seed).integers(0, n, loop_n)]))
    columns = [s[rows].tolist() for s in sources]
    start = time.process_time()
    scalar = [evaluate(form, [c[j] for c in columns], profile) for j in range(len(rows))]
    loop_rate = len(rows) / max(time.process_time() - start, 1e-9)
    fast = batch.has_fast_path(form, profile)
    # Forms that only their operands tell apart (mov's pack and unpack) are named with them.
    label = f"{form.text} {form.family.operand_syntax}" if form.family.operand_syntax else form.text
    line = {"form": label, "fast": fast, "loop": loop_rate, "rate": loop_rate, "check": loop_rate, "same": None}
    if fast:
        results = batch.evaluate_batch_all(form, sources, profile)
        line["same"] = all(tuple(r.result(int(i)) for r in results) == want for i, want in zip(rows, scalar))
        line["rate"] = n / cpu_best(lambda: batch.evaluate_batch_all(form, sources, profile), repeat)
        observed = [r.bits.copy() for r in results]

        def check() -> None:
            for r, bits in zip(batch.evaluate_batch_all(form, sources, profile), observed):
                ok = r.contains(bits)
                ok[list(r.sets)] = True  # a set by index: its bits are no particular member
                assert ok.all(), f"{form.text}: canonical bits outside their set"

        line["check"] = n / cpu_best(check, repeat)
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", default="*", help="shell pattern on the form text (default: every form)")
    parser.add_argument("--per-family", type=int, default=200, help="at most K forms of each family, a seeded sample (0: all; default 200)")
    parser.add_argument("--n", type=int, default=1 << 16, help="vectors per form (default 65536)")
    parser.add_argument("--loop-n", type=int, default=64, help="vectors evaluated one at a time (default 64)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="spec")
    parser.add_argument("--repeat", type=int, default=2, help="batched runs; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=1e6, help="results/s a form should reach (default 10^6)")
    args = parser.parse_args(argv)

    forms = [f for f in coverage.scalar_forms(per_family=args.per_family or None, seed=args.seed) if fnmatch.fnmatchcase(f.text, args.forms)]
    if not forms:
        print(f"no scalar form matches {args.forms!r}", file=sys.stderr)
        return 2
    print(f"{len(forms)} forms, {args.n:,} vectors each, profile {args.profile}; rates in results/s of CPU time")
    print(f"{'form':48} {'rate':>14} {'check':>14} {'loop':>10} {'x':>8}  same")
    lines = []
    for form in forms:
        line = measure(form, args.n, args.loop_n, args.profile, args.repeat, args.seed)
        lines.append(line)
        same = {None: "no batched path", True: "yes", False: "NO"}[line["same"]]
        print(f"{line['form']:48} {line['rate']:14,.0f} {line['check']:14,.0f} {line['loop']:10,.0f} {line['rate'] / line['loop']:8,.0f}  {same}", flush=True)

    fast = [x for x in lines if x["fast"]]
    print()
    print(f"forms: {len(lines)}; with a batched path: {len(fast)}")
    for key, what in (("rate", "evaluated"), ("check", "checked")):
        enough = [x for x in lines if x[key] >= args.target]
        print(f"{what} at or above {args.target:,.0f}/s: {len(enough)}; median {np.median([x[key] for x in lines]):,.0f}/s; the ten slowest:")
        for x in sorted(lines, key=lambda x: x[key])[:10]:
            print(f"  {x['form']:48} {x[key]:14,.0f}{'' if x['fast'] else '  (no batched path)'}")
    differ = [x["form"] for x in fast if not x["same"]]
    if differ:
        print(f"batched results differ from the semantics for: {', '.join(differ)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
