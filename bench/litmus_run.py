"""Litmus tests on the GPU: tests x iterations per second (``ptxspec litmus-run``).

    python bench/litmus_run.py [--tests 40] [--iterations 200000]       # on a GPU machine (CuPy)
    python bench/litmus_run.py --recorded                               # anywhere: the H100 recording

On a GPU machine it prepares a bundle of the manual's runnable tests and a seeded litmus-gen sample
(``--tests`` in all), runs it twice in the same process -- with the recording's stress, and, as
the baseline, with no stress blocks -- and prints the iterations per second of each, their ratio,
and the outcomes found per million iterations. ``--recorded`` prints the same rate from the
seconds each test took in ``conformance/data/sm_90/litmus-h100.json`` (labelled as recorded).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # a clone's ptxspec/ where the package is not installed (the GPU machine)
RECORDING = REPO / "conformance" / "data" / "sm_90" / "litmus-h100.json"


def recorded() -> None:
    record = json.loads(RECORDING.read_text())
    tests = record["tests"]
    iterations = sum(t["iterations"] for t in tests)
    seconds = sum(t["seconds"] for t in tests)
    print(f"recorded on {record['meta']['device']}: {len(tests)} tests, {iterations:,} iterations in {seconds:.1f} s of launches")
    print(f"  {iterations / seconds:,.0f} iterations/s ({len(tests) / seconds:.2f} tests/s at {iterations // len(tests):,} iterations each)")
    slowest = sorted(tests, key=lambda t: t["seconds"] / t["iterations"])[-5:]
    for t in reversed(slowest):
        print(f"  slowest: {t['test']}: {t['iterations'] / t['seconds']:,.0f} iterations/s")


def live(count: int, iterations: int) -> None:
    import cupy as cp

    from ptxspec.conformance import litmus_run
    from ptxspec.conformance.silicon import litmus_device

    from ptxspec.conformance import litmus_kernel

    def runnable(source) -> bool:
        try:
            litmus_kernel.kernel(source.parse(), "k")
        except litmus_kernel.NotRunnable:
            return False
        return True

    manual = [s for s in litmus_run.file_sources([str(REPO / "tests" / "litmus" / "manual")]) if runnable(s)]
    sources = (manual + litmus_run.generated_sources(count, 0))[:count]
    rows = []
    for label, stress in (("no stress (baseline)", 0), ("stress", litmus_run.Settings().stress_blocks)):
        bundle = Path(tempfile.mkdtemp(prefix="ptxspec-bench-"))
        settings = litmus_run.Settings(iterations=iterations, stress_blocks=stress)
        kept, _ = litmus_run.prepare(sources, bundle, settings)
        plan = json.loads((bundle / litmus_device.PLAN_FILE).read_text())
        modules = [cp.RawModule(path=str(bundle / litmus_device.CUBIN_FILE))]
        start = time.perf_counter()
        results = [litmus_device.run_test(cp, modules, test, i, plan["run"]) for i, test in enumerate(plan["tests"]) if test["gpus"] == 1]
        seconds = time.perf_counter() - start
        done = sum(r["iterations"] for r in results)
        outcomes = sum(len(r["outcomes"]) for r in results)
        rows.append((label, len(kept), done, seconds, outcomes))
    base = rows[0][2] / rows[0][3]
    for label, tests, done, seconds, outcomes in rows:
        rate = done / seconds
        print(f"{label:22} {tests} tests {done:>12,} iterations {seconds:7.1f} s {rate:>12,.0f} it/s  x{rate / base:.2f}  {outcomes} distinct outcomes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--recorded", action="store_true")
    args = parser.parse_args()
    if args.recorded:
        recorded()
    else:
        live(args.tests, args.iterations)


if __name__ == "__main__":
    main()
