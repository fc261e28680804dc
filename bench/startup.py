"""Start-up time of the ``ptxspec`` command against the Python interpreter it runs on.

    python bench/startup.py [--runs 20]

Each command is run ``--runs`` times in a fresh process (after one run that writes the bytecode
caches, as an installed package has them); the median wall time is printed with its ratio to
``python -c pass`` and to ``python -c "import click, attrs"`` (what any click/attrs program pays)
measured in the same run. A scalar ``eval`` loads one chapter of the semantics and not numpy
(tests/test_cli.py checks the second).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = str(Path(__file__).resolve().parent.parent / "examples" / "mma" / "inputs.json")
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import click, attrs'": [sys.executable, "-c", "import click, attrs"],
    "ptxspec --version": [sys.executable, "-m", "ptxspec", "--version"],
    "ptxspec eval add.s32 1 2": [sys.executable, "-m", "ptxspec", "eval", "add.s32", "1", "2"],
    "ptxspec eval fma.rn.f32 ...": [sys.executable, "-m", "ptxspec", "eval", "fma.rn.f32", "0x3f800000", "0x40000000", "0x3f800000"],
    "ptxspec eval mma (--inputs)": [
        sys.executable,
        "-m",
        "ptxspec",
        "eval",
        "--inputs",
        EXAMPLE,
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    ],
}


def median_seconds(argv: list[str], runs: int, env: dict) -> float:
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)  # bytecode caches written
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installed package has its .pyc files
    rows = [(name, median_seconds(argv, args.runs, env)) for name, argv in COMMANDS.items()]
    bare, libraries = rows[0][1], rows[1][1]
    print(f"{'command':34} {'median ms':>10} {'/ python':>9} {'/ click+attrs':>14}")
    for name, seconds in rows:
        print(f"{name:34} {seconds * 1000:10.0f} {seconds / bare:9.2f} {seconds / libraries:14.2f}")
    print(f"({args.runs} runs each; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}; ptxspec at {shutil.which('ptxspec')})")


if __name__ == "__main__":
    main()
