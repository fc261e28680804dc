"""Time and peak memory of the two interpreters of the PTX memory model (Z3 and the explicit enumerator).

    python bench/litmus.py [--corpus DIR] [--cap 60] [--sizes 4-12] [--skip-corpus] [--skip-families] [--skip-async]

Every row runs in a fresh process (so that its peak resident memory, ``ru_maxrss``, is its own)
under a per-test cap (``--cap`` seconds, the engines' own ``--timeout``); a run that reaches it
prints ``stopped`` and the larger sizes of that family are not tried with that engine.

1. Over the shared litmus corpus (``../shared/litmus/dat3m``, or PTXSPEC_LITMUS_DIR, or --corpus):
   per engine the total, median and largest time over the tests, the largest peak memory, the
   count of verdicts equal to ``expected.csv``, and, per test, the explicit engine's time against
   Z3's (the tests where the explicit engine is slower than 1 s while Z3 takes at most 1 s are listed).
2. Time against size for three families generated in memory, with the ratio explicit / Z3:

   * ``MP-chain-N``: message passing handed along N threads (thread 0 writes the data and then a
     flag, each next thread waits for the previous flag and raises its own, the last reads the data;
     release/acquire through fence.acq_rel), a chain whose candidates grow as 2^N;
   * ``SB-ring-N``: store buffering around a ring of N threads with fence.sc between each write and
     read, whose Fence-SC orders grow as N! and final states as 2^N;
   * ``k-writers-k``: k threads each write their own value to one location, whose coherence
     orders grow as k!.

3. The asynchronous families of ``ptxspec litmus-gen`` (``MP-mbarrier``, ``TMA-load``,
   ``bulk-copy-source``, ``tcgen05-mma-ld``, ``tcgen05-cp-mma``, ``cp-async``,
   ``mbarrier-init-cluster``, ``MP-sync-restrict``, ``st-async``, ``wgmma``, ``bulk-group``,
   ``red-async``, ``bulk-reduce``, ``cp-async-mbarrier-arrive``, ``bar-red``,
   ``tensor-map-update``: mbarrier, bulk and async copies and reductions, tcgen05, the restricted
   fences, st.async, red.async, wgmma, bar.red, tensor maps; read from ``ASYNC_FAMILIES``, so a new family is picked up), which have no size: one row per family, each engine checking every
   variant in a fresh process of its own: the total and largest time per test, that process's
   peak memory and the count of forbidden (No) answers, with the ratio explicit / Z3.

Targets (issue 14): explicit <= 1 s wherever Z3 is <= 1 s up to N=8 (and on every test of the
asynchronous families); Z3 SB ring N=12 <= 5 s; peak memory <= 1 GB in every row. The script
prints whether each holds.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import os
import statistics
import sys
import time
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


def k_writers(k: int) -> str:
    """``k`` threads each write their own value to one location; exists: the first thread's write is
    last in coherence order (the final value is 1). Coherence orders grow as k!."""
    threads = [[f"st.relaxed.gpu x, {i + 1}"] for i in range(k)]
    return _litmus(f"k-writers-{k}", ["x=0;"], threads, "exists\n(x == 1)")


def _litmus(name: str, init: list[str], threads: list[list[str]], condition: str) -> str:
    rows = max(len(code) for code in threads)
    header = " | ".join(f"P{i}@cta {i},gpu 0".ljust(24) for i in range(len(threads))) + " ;"
    body = [" | ".join((code[row] if row < len(code) else "").ljust(24) for code in threads) + " ;" for row in range(rows)]
    return "\n".join([f"PTX {name}", "{", *init, "}", header, *body, condition, ""])


def load_text(text: str, name: str):
    from ptxspec.memory_model import litmus, lowering

    return lowering.lower(litmus.parse(text, source=f"<{name}>"))


def _run_row(args: tuple[str, str, str, float]) -> dict:
    """One (test, engine) row, in a fresh worker process: its time, answer and peak memory.
    ``kind`` is ``"file"`` (a path) or ``"text"`` (litmus text)."""
    kind, test, engine, cap = args
    import resource

    from ptxspec.conformance.litmus_cli import load
    from ptxspec.memory_model.check import engine_run, model_named

    run, model = engine_run(engine), model_named("ptx-8.7")  # imports outside the timed part
    start = time.perf_counter()
    if kind == "file":
        program = load(Path(test))
    else:
        program = load_text(test, engine)
    result = run(program, model, timeout_s=cap)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "test": test,
        "engine": engine,
        "seconds": seconds,
        "ok": result.ok,
        "peak_mb": peak_mb,
        "states": None if result.states is None else len(result.states),
        "candidates": result.candidates,
    }


def _run_family(args: tuple[str, str, float]) -> dict:
    """Every test of one asynchronous family of ``ptxspec litmus-gen`` with one engine, in a fresh
    worker process: each test's time (loading included, as in :func:`_run_row`) and answer, and the
    process's peak memory."""
    family, engine, cap = args
    import resource

    from ptxspec.conformance.litmus_gen import generate
    from ptxspec.memory_model.check import engine_run, model_named

    run, model = engine_run(engine), model_named("ptx-8.7")  # imports outside the timed part
    tests = list(generate([family]))  # the texts too: only the checking is timed
    results = {}
    for name, text in tests:
        start = time.perf_counter()
        result = run(load_text(text, name), model, timeout_s=cap)
        results[name] = (time.perf_counter() - start, result.ok)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"family": family, "engine": engine, "tests": results, "peak_mb": peak_mb}


def _fresh(args: tuple, worker=_run_row) -> dict:
    # maxtasksperchild=1: each row's peak memory is measured in a process of its own.
    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(worker, (args,))


ENGINES = ("z3", "explicit")


def corpus(folder: Path, cap: float) -> list[str]:
    with (folder / "expected.csv").open(newline="") as stream:
        expected = {str(folder / row["test"]): int(row["expected"]) for row in csv.DictReader(stream)}
    print(f"corpus {folder}: {len(expected)} tests, one process per test and engine, cap {cap:g} s")
    rows = {engine: {path: _fresh(("file", path, engine, cap)) for path in expected} for engine in ENGINES}
    failures = []
    for engine in ENGINES:
        results = list(rows[engine].values())
        times = [r["seconds"] for r in results]
        agree = sum(1 for r in results if r["ok"] is not None and int(r["ok"]) == expected[r["test"]])
        unknown = sum(1 for r in results if r["ok"] is None)
        slowest = max(results, key=lambda r: r["seconds"])
        peak = max(r["peak_mb"] for r in results)
        print(
            f"  {engine:8} sum {sum(times):7.2f} s  median {statistics.median(times):6.3f} s  "
            f"max {slowest['seconds']:6.2f} s ({Path(slowest['test']).name})  peak {peak:6.0f} MB  "
            f"as expected {agree}/{len(expected)}  unknown {unknown}"
        )
        if peak > 1024:
            failures.append(f"corpus {engine}: peak memory {peak:.0f} MB > 1 GB")
    slow = [
        (path, rows["z3"][path]["seconds"], rows["explicit"][path]["seconds"])
        for path in expected
        if rows["z3"][path]["seconds"] <= 1.0 and rows["explicit"][path]["seconds"] > 1.0
    ]
    ratios = [rows["explicit"][p]["seconds"] / max(rows["z3"][p]["seconds"], 1e-9) for p in expected]
    print(f"  explicit / z3 per test: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}")
    for path, z3_s, explicit_s in slow:
        print(f"  explicit > 1 s where z3 <= 1 s: {Path(path).relative_to(folder)}  z3 {z3_s:.2f} s  explicit {explicit_s:.2f} s")
        failures.append(f"corpus {Path(path).name}: explicit {explicit_s:.2f} s where z3 {z3_s:.2f} s")
    sys.stdout.flush()
    return failures


def families(sizes: range, cap: float) -> list[str]:
    failures = []
    for family in (sb_ring, mp_chain, k_writers):
        print(f"{family.__name__}: seconds (peak memory) per engine, cap {cap:g} s")
        stopped: dict[str, int] = {}
        for n in sizes:
            text = family(n)
            cells, seconds = [], {}
            for engine in ENGINES:
                if engine in stopped:
                    cells.append(f"{engine} stopped")
                    continue
                row = _fresh(("text", text, engine, cap))
                if row["ok"] is None:
                    stopped[engine] = n
                    cells.append(f"{engine} stopped (> {cap:g} s, {row['peak_mb']:.0f} MB)")
                    continue
                seconds[engine] = row["seconds"]
                cells.append(f"{engine} {row['seconds']:8.3f} s ({row['peak_mb']:4.0f} MB, {'Ok' if row['ok'] else 'No'}, {row['states']} states)")
                if row["peak_mb"] > 1024:
                    failures.append(f"{family.__name__} N={n} {engine}: peak memory {row['peak_mb']:.0f} MB > 1 GB")
            ratio = f"ratio {seconds['explicit'] / seconds['z3']:6.2f}" if len(seconds) == 2 else "ratio   -"
            print(f"  N={n:2}  " + "   ".join(cells) + f"   {ratio}")
            if n <= 8 and seconds.get("z3", 2.0) <= 1.0 and seconds.get("explicit", cap) > 1.0:
                failures.append(f"{family.__name__} N={n}: explicit {seconds.get('explicit', cap):.2f} s where z3 {seconds['z3']:.2f} s")
            if family is sb_ring and n == 12 and seconds.get("z3", cap) > 5.0:
                failures.append(f"sb_ring N=12: z3 {seconds.get('z3', cap):.2f} s > 5 s")
            sys.stdout.flush()
        for engine, n in stopped.items():
            print(f"  {engine} stops scaling at N={n} ({family.__name__})")
    return failures


def async_families(cap: float) -> list[str]:
    from ptxspec.conformance.litmus_gen import ASYNC_FAMILIES

    print(f"async families: seconds over every variant (largest per test, peak memory, No answers) per engine, cap {cap:g} s")
    failures = []
    for family in ASYNC_FAMILIES:
        rows = {engine: _fresh((family, engine, cap), _run_family) for engine in ENGINES}
        cells = []
        for engine in ENGINES:
            tests = rows[engine]["tests"]
            times = [seconds for seconds, _ in tests.values()]
            no = sum(1 for _, ok in tests.values() if ok is False)
            stopped = sum(1 for _, ok in tests.values() if ok is None)
            cells.append(
                f"{engine} {sum(times):7.3f} s (max {max(times):6.3f} s, {rows[engine]['peak_mb']:4.0f} MB, {no} No"
                + (f", {stopped} stopped" if stopped else "")
                + ")"
            )
            if rows[engine]["peak_mb"] > 1024:
                failures.append(f"{family} {engine}: peak memory {rows[engine]['peak_mb']:.0f} MB > 1 GB")
        z3, explicit = rows["z3"]["tests"], rows["explicit"]["tests"]
        for name in z3:
            if z3[name][0] <= 1.0 and explicit[name][0] > 1.0:
                failures.append(f"{name}: explicit {explicit[name][0]:.2f} s where z3 {z3[name][0]:.2f} s")
            if z3[name][1] is not None and explicit[name][1] is not None and z3[name][1] != explicit[name][1]:
                failures.append(f"{name}: the engines disagree (z3 {z3[name][1]}, explicit {explicit[name][1]})")
        ratio = sum(t for t, _ in explicit.values()) / max(sum(t for t, _ in z3.values()), 1e-9)
        print(f"  {family:17} {len(z3):3} tests  " + "   ".join(cells) + f"   ratio {ratio:6.2f}")
        sys.stdout.flush()
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("PTXSPEC_LITMUS_DIR") or DEFAULT_CORPUS))
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per engine and test")
    parser.add_argument("--sizes", default="4-12", help="thread counts of the families, e.g. 4-12")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-families", action="store_true")
    parser.add_argument("--skip-async", action="store_true", help="skip the asynchronous families of ptxspec litmus-gen")
    args = parser.parse_args()
    low, _, high = args.sizes.partition("-")
    failures: list[str] = []
    if not args.skip_corpus:
        if (args.corpus / "expected.csv").is_file():
            failures += corpus(args.corpus, args.cap)
        else:
            print(f"corpus not found at {args.corpus}; skipped")
    if not args.skip_families:
        failures += families(range(int(low), int(high or low) + 1), args.cap)
    if not args.skip_async:
        failures += async_families(args.cap)
    print("targets: " + ("all met" if not failures else "missed:"))
    for line in failures:
        print(f"  {line}")


if __name__ == "__main__":
    main()
