"""The campaign engine's speed-up: exhaustive-check chunks on 1..N Dask workers.

    python bench/scale.py [--forms 'add.rn.f16'] [--chunks 16] [--workers 1,2]

Recomputes the same chunk digests of the exhaustive silicon spaces (``ptxspec exhaustive-check``)
in this process (the baseline: no cluster) and on an in-process LocalCluster of each number of
workers given (processes, one thread each), checks that every run gives the same digests, and
prints the wall time, the speed-up over one worker and its ratio to the ideal (the target is
>= 0.8 N for N up to the number of cores). The cluster's start is timed apart and left out.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import time

from ptxspec.conformance import campaign_engine
from ptxspec.conformance.silicon import exhaustive as ex


def chunk_tasks(pattern: str, chunks: int) -> list[campaign_engine.Task]:
    texts = [t for t in ex.plan_by_text() if fnmatch.fnmatchcase(t, pattern)]
    if not texts:
        raise SystemExit(f"no exhaustive form matches {pattern!r}")
    forms = tuple((t, ex.plan_by_text()[t].space) for t in texts)
    return [campaign_engine.Task(f"c{c}", f"{ex.__name__}:chunk_task", (c, forms)) for c in range(chunks)]


def timed_on_cluster(tasks, workers: int) -> tuple[float, float, dict]:
    """(seconds to start the cluster, seconds to run the tasks, results)."""
    from distributed import Client, as_completed

    began = time.perf_counter()
    with campaign_engine.local_cluster(workers) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("ptxspec.conformance.silicon.exhaustive"))  # every worker imports the numerics first
        started = time.perf_counter()
        futures = {client.submit(campaign_engine.call, t.function, t.arguments, pure=False): t.key for t in tasks}
        results = {futures[f]: f.result() for f in as_completed(futures)}
        return started - began, time.perf_counter() - started, results


def digests(results: dict) -> dict:
    return {key: [(text, digest) for text, _, digest, _, _ in group] for key, group in sorted(results.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forms", default="add.rn.f16")
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--workers", default=",".join(str(n) for n in range(1, (os.cpu_count() or 1) + 1)))
    args = parser.parse_args()
    tasks = chunk_tasks(args.forms, args.chunks)
    began = time.perf_counter()
    baseline = campaign_engine.run(tasks)
    here = time.perf_counter() - began
    print(f"{len(tasks)} chunks of 2^20 results ({args.forms}); {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    print(f"{'here (no cluster)':22} {here:8.2f} s")
    one_worker = None
    for n in (int(x) for x in args.workers.split(",")):
        start, seconds, results = timed_on_cluster(tasks, n)
        assert digests(results) == digests(baseline), f"{n} workers gave other digests"
        one_worker = seconds if n == 1 else one_worker
        speedup = (one_worker or seconds * n) / seconds
        print(f"{f'{n} worker(s)':22} {seconds:8.2f} s  speed-up x{speedup:.2f}  ({speedup / n:.2f} of ideal)  [cluster start {start:.1f} s]")
    print("every run gave the same digests")


if __name__ == "__main__":
    main()
