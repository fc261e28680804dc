"""Throughput and peak memory of ``ptxspec vectors`` and ``ptxspec check-vectors``, end to end.

    python bench/vectors.py [--n 400000] [--loop-n 5000] [--profile spec|sm_90] [--seed 0] [--repeat 2]
                            [--big 3000000] [--recording DIR]

For each of fma.rn.f32, cvt.rn.satfinite.e4m3x2.f32, add.rn.f16x2 and mad.wide.s32 it prints
vectors/s of

* generate: from the arguments to the JSON Lines file on disk --
  :func:`ptxspec.conformance.vectors.jsonl_chunks` (edge values, seeded random inputs, the batched
  semantics, the text in bulk, a chunk at a time) and the write -- for ``--n`` vectors, against the
  plain per-vector loop (:func:`~ptxspec.conformance.vectors.generate`, ``json.dumps`` of each
  vector, the write) on ``--loop-n`` vectors;
* check: from that file to the summary -- :func:`~ptxspec.conformance.check_vectors.check_file`
  (the file read a chunk at a time, the canonical lines in bulk, checked as they are read) --
  against the plain per-vector loop on a file of the first ``--loop-n`` lines (every line read by
  ``json``, ``read_items(fast=False)``, then :func:`~ptxspec.conformance.check_vectors.check_one`
  per vector);

and the ratio of each pair; the bulk paths are timed ``--repeat`` times and the best run counts
(the loops once). Rates are per CPU second of this process (``time.process_time``), so that they
are per core and do not count time the process waited for a core on a loaded machine.

Beside them, the **peak memory** (the maximum resident set size, ``ru_maxrss`` of ``wait4``) and
wall-clock seconds of the command itself, run as a user runs it in a fresh process
(``python -m ptxspec vectors FORM --count N -o FILE``, ``python -m ptxspec check-vectors FILE``),
and two more rows: ``check-vectors`` on one file of ``--big`` vectors (three forms; 0 skips it),
and, with ``--recording DIR``, ``check-vectors --recording DIR --profile sm_90``. The wall-clock
seconds of the whole run are printed at the end. Exit status 1 if a generated vector fails its own
check or a command fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from ptxspec.conformance.check_vectors import check_file, check_one, read_items
from ptxspec.conformance.vectors import BENCH_FORMS, generate, jsonl_bytes
from ptxspec.profiles import NAMES as PROFILE_NAMES

#: The forms of the large file (a third of ``--big`` each).
BIG_FORMS = ("fma.rn.f32", "add.rn.f16x2", "mad.wide.s32")


def _rate(n: int, seconds: float) -> float:
    return n / max(seconds, 1e-9)


#: Runs the command given as its arguments and prints its peak memory: a small process of its own
#: starts it, because a child's ``ru_maxrss`` starts from its parent's at fork (the bench, grown by
#: its own runs, would be measured too).
_LAUNCHER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
print(json.dumps([time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, status]))
"""


def command(*args: str, cwd: str | None = None) -> tuple[float, float, int, str]:
    """``python -m ptxspec ARGS`` in a fresh process: (wall seconds, peak resident memory in MiB,
    exit status, standard error). Standard output goes to the null device."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "ptxspec", *args], capture_output=True, text=True, cwd=cwd)
    wall, peak, status = json.loads(done.stdout)
    return wall, peak, status, done.stderr


def rates(text: str, n: int, loop_n: int, seed: int, profile: str, folder: str, repeat: int = 2) -> dict:
    """The rates of ``text`` (generate/s, per-vector generate loop/s, check/s, per-vector check
    loop/s, every rate from the arguments or file bytes to the file or the summary; the bulk paths
    best of ``repeat`` runs), the peak memory of the two commands, and the vectors that failed."""
    path, loop_path = os.path.join(folder, "v.jsonl"), os.path.join(folder, "loop.jsonl")
    with open(path, "wb") as out:  # warm-up: imports and the catalogue's first look-ups
        out.write(jsonl_bytes(text, 64, seed, profile))
    check_file(path, profile)
    row = {"generate": 0.0, "check": 0.0}
    for _ in range(repeat):
        start = time.process_time()
        with open(path, "wb") as out:
            out.write(jsonl_bytes(text, n, seed, profile))
        row["generate"] = max(row["generate"], _rate(n, time.process_time() - start))

    start = time.process_time()
    with open(loop_path, "w", encoding="utf-8") as out:
        for v in generate(text, loop_n, seed, profile):
            out.write(json.dumps(v) + "\n")
    row["generate_loop"] = _rate(loop_n, time.process_time() - start)

    for _ in range(repeat):
        start = time.process_time()
        summary = check_file(path, profile)
        row["check"] = max(row["check"], _rate(n, time.process_time() - start))

    start = time.process_time()
    loop_bad = sum(check_one(v, profile) is not None for v in read_items(loop_path, fast=False))
    row["check_loop"] = _rate(loop_n, time.process_time() - start)
    row["bad"] = summary.mismatched + summary.unsupported_count + loop_bad

    _, row["generate_mb"], status, _ = command("vectors", text, "--count", str(n), "--seed", str(seed), "--profile", profile, "-o", path)
    _, row["check_mb"], check_status, _ = command("check-vectors", "--profile", profile, path)
    row["bad"] += (status != 0) + (check_status != 0)
    return row


def large_rows(big: int, recording: str | None, seed: int, profile: str, folder: str) -> list[tuple[str, float, float, int, str]]:
    """(what, wall seconds, peak MiB, exit status, first line of standard error) of generating and
    checking a file of ``big`` vectors, and of checking ``recording``."""
    rows = []
    if big:
        path = os.path.join(folder, "big.jsonl")
        each = big // len(BIG_FORMS)
        wall, peak, status, err = command("vectors", *BIG_FORMS, "--count", str(each), "--seed", str(seed), "--profile", profile, "-o", path)
        rows.append((f"vectors {len(BIG_FORMS)} forms x {each:,} ({os.path.getsize(path) / 2**20:,.0f} MiB)", wall, peak, status, err))
        wall, peak, status, err = command("check-vectors", "--profile", profile, path)
        rows.append((f"check-vectors {each * len(BIG_FORMS):,}-vector file", wall, peak, status, err))
    if recording is not None:
        wall, peak, status, err = command("check-vectors", "--recording", recording, "--profile", "sm_90")
        rows.append((f"check-vectors --recording {recording} --profile sm_90", wall, peak, status, err))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python bench/vectors.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400_000, help="vectors per form (default 400000)")
    parser.add_argument("--loop-n", type=int, default=5_000, help="vectors per form in the per-vector loops (default 5000)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="spec")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each bulk path; the best counts (default 2)")
    parser.add_argument("--big", type=int, default=3_000_000, help="vectors of the large file checked in one command (default 3000000; 0: none)")
    parser.add_argument("--recording", metavar="DIR", default=None, help="also time check-vectors --recording DIR --profile sm_90 (minutes)")
    args = parser.parse_args(argv)
    wall = time.perf_counter()
    print(f"{'form':30} {'generate/s':>12} {'loop/s':>9} {'ratio':>7} {'peak MiB':>9}   {'check/s':>12} {'loop/s':>9} {'ratio':>7} {'peak MiB':>9}")
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for text in BENCH_FORMS:
            r = rates(text, args.n, args.loop_n, args.seed, args.profile, folder, max(1, args.repeat))
            failed |= r["bad"] > 0
            print(
                f"{text:30} {r['generate']:12,.0f} {r['generate_loop']:9,.0f} {r['generate'] / r['generate_loop']:6.0f}x {r['generate_mb']:9,.0f}   "
                f"{r['check']:12,.0f} {r['check_loop']:9,.0f} {r['check'] / r['check_loop']:6.0f}x {r['check_mb']:9,.0f}"
                + (f"   {r['bad']} MISMATCHED" if r["bad"] else "")
            )
        for what, seconds, peak, status, err in large_rows(args.big, args.recording, args.seed, args.profile, folder):
            failed |= status != 0
            print(f"{what:60} {seconds:8.1f} s wall {peak:9,.0f} MiB peak" + ("" if status == 0 else f"   EXIT {status}: {err.strip()[:200]}"))
    print(
        f"(--n {args.n:,}, per-vector loops on {args.loop_n:,}, profile {args.profile}; vectors per CPU second, one process; peak MiB: "
        f"maximum resident set of the command in a fresh process; {time.perf_counter() - wall:.1f} s wall clock)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
