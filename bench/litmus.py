"""Time of the two interpreters of the PTX memory model (Z3 and the explicit enumerator).

    python bench/litmus.py [--corpus DIR] [--jobs 2] [--cap 60] [--sizes 2-10] [--skip-corpus] [--skip-families]

1. Over the shared litmus corpus (``../shared/litmus/dat3m``, or PTXSPEC_LITMUS_DIR, or --corpus):
   for each engine, the total wall time, the sum and the median of the per-test times, and the
   count of verdicts equal to ``expected.csv``. With ``--jobs N`` the tests run in N processes.
2. Time against size for two families generated in memory:

   * ``MP-chain-N``: message passing handed along N threads (thread 0 writes the data and then a
     flag, each next thread waits for the previous flag and raises its own, the last reads the data;
     release/acquire through fence.acq_rel), a chain whose candidates grow as 2^N;
   * ``SB-ring-N``: store buffering around a ring of N threads with fence.sc between each write and
     read, whose Fence-SC orders grow as N!.

   Each engine runs with a per-test cap (``--cap`` seconds); a run that hits it prints
   ``stopped``, and the larger sizes of that family are not tried with that engine.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "litmus" / "dat3m"


def mp_chain(n: int) -> str:
    """Message passing along ``n`` threads (n >= 2); ~exists: the last thread sees every flag and stale data."""
    threads: list[list[str]] = []
    for i in range(n):
        code: list[str] = []
        if i == 0:
            code += ["st.weak d, 1", "fence.acq_rel.gpu", "st.relaxed.gpu f1, 1"]
        else:
            code += [f"ld.relaxed.gpu r0, f{i}", "fence.acq_rel.gpu"]
            code += [f"st.relaxed.gpu f{i + 1}, 1"] if i < n - 1 else ["ld.weak r1, d"]
        threads.append(code)
    locations = ["d=0;"] + [f"f{i}=0;" for i in range(1, n)]
    registers = [f"P{i}:r0=0;" for i in range(1, n)] + [f"P{n - 1}:r1=0;"]
    seen = [f"P{i}:r0 == 1" for i in range(1, n)]
    condition = "~exists\n(" + " /\\ ".join(seen + [f"P{n - 1}:r1 == 0"]) + ")"
    return _litmus(f"MP-chain-{n}", locations + registers, threads, condition)


def sb_ring(n: int) -> str:
    """Store buffering around a ring of ``n`` threads with fence.sc; ~exists: every read sees 0."""
    threads = [[f"st.weak x{i}, 1", "fence.sc.gpu", f"ld.weak r0, x{(i + 1) % n}"] for i in range(n)]
    locations = [f"x{i}=0;" for i in range(n)]
    registers = [f"P{i}:r0=0;" for i in range(n)]
    condition = "~exists\n(" + " /\\ ".join(f"P{i}:r0 == 0" for i in range(n)) + ")"
    return _litmus(f"SB-ring-{n}", locations + registers, threads, condition)


def _litmus(name: str, init: list[str], threads: list[list[str]], condition: str) -> str:
    rows = max(len(code) for code in threads)
    header = " | ".join(f"P{i}@cta {i},gpu 0".ljust(24) for i in range(len(threads))) + " ;"
    body = [" | ".join((code[row] if row < len(code) else "").ljust(24) for code in threads) + " ;" for row in range(rows)]
    return "\n".join([f"PTX {name}", "{", *init, "}", header, *body, condition, ""])


def load_text(text: str, name: str):
    from ptxspec.conformance.litmus_cli import load

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.litmus"
        path.write_text(text)
        return load(path)


def _time_one(args: tuple[str, str, float | None]) -> tuple[str, float, bool | None]:
    """(test, seconds, ok) for one corpus test and one engine, in a worker process."""
    path, engine, cap = args
    from ptxspec.conformance.litmus_cli import load
    from ptxspec.memory_model.check import check

    start = time.perf_counter()
    verdict = check(load(Path(path)), engine=engine, timeout_s=cap)
    return path, time.perf_counter() - start, verdict.ok


def corpus(folder: Path, jobs: int, cap: float | None) -> None:
    with (folder / "expected.csv").open(newline="") as stream:
        expected = {str(folder / row["test"]): int(row["expected"]) for row in csv.DictReader(stream)}
    print(f"corpus {folder}: {len(expected)} tests, {jobs} process(es)")
    for engine in ("z3", "explicit"):
        start = time.perf_counter()
        work = [(path, engine, cap) for path in expected]
        if jobs > 1:
            with ProcessPoolExecutor(jobs) as pool:
                results = list(pool.map(_time_one, work))
        else:
            results = [_time_one(item) for item in work]
        wall = time.perf_counter() - start
        times = [t for _, t, _ in results]
        agree = sum(1 for path, _, ok in results if ok is not None and int(ok) == expected[path])
        unknown = sum(1 for _, _, ok in results if ok is None)
        slowest = max(results, key=lambda r: r[1])
        print(f"  {engine:8} wall {wall:7.2f} s  sum {sum(times):7.2f} s  median {statistics.median(times):6.3f} s  "
              f"max {slowest[1]:6.2f} s ({Path(slowest[0]).name})  as expected {agree}/{len(expected)}  unknown {unknown}")
    sys.stdout.flush()


def families(sizes: range, cap: float) -> None:
    from ptxspec.memory_model.check import engine_run, model_named

    model = model_named("ptx-8.7")
    for family in (mp_chain, sb_ring):
        print(f"{family.__name__}: seconds per engine (cap {cap:g} s)")
        stopped: dict[str, int] = {}
        for n in sizes:
            program = load_text(family(n), f"{family.__name__}-{n}")
            cells = []
            for engine in ("z3", "explicit"):
                if engine in stopped:
                    cells.append(f"{engine} stopped")
                    continue
                start = time.perf_counter()
                result = engine_run(engine)(program, model, timeout_s=cap)
                seconds = time.perf_counter() - start
                if result.ok is None or seconds >= cap:
                    stopped[engine] = n
                    cells.append(f"{engine} stopped (> {cap:g} s)")
                else:
                    extra = f", {result.candidates} candidates" if result.candidates is not None else ""
                    cells.append(f"{engine} {seconds:8.3f} s ({'Ok' if result.ok else 'No'}{extra})")
            print(f"  N={n:2}  " + "   ".join(cells))
            sys.stdout.flush()
        for engine, n in stopped.items():
            print(f"  {engine} stops scaling at N={n} ({family.__name__})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("PTXSPEC_LITMUS_DIR") or DEFAULT_CORPUS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per engine and test")
    parser.add_argument("--sizes", default="2-10", help="thread counts of the families, e.g. 2-10")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-families", action="store_true")
    args = parser.parse_args()
    low, _, high = args.sizes.partition("-")
    if not args.skip_corpus:
        if (args.corpus / "expected.csv").is_file():
            corpus(args.corpus, args.jobs, args.cap)
        else:
            print(f"corpus not found at {args.corpus}; skipped")
    if not args.skip_families:
        families(range(int(low), int(high or low) + 1), args.cap)


if __name__ == "__main__":
    main()
