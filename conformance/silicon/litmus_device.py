"""The device side of ``ptxspec litmus-run`` (numpy + CuPy only; no ptxspec needed there)::

    ptxspec litmus-run --prepare BUNDLE TESTS...                  # here: kernels, with ptxas
    python3 conformance/silicon/litmus_device.py run BUNDLE OUT   # on the GPU machine

``BUNDLE`` holds ``litmus.cubin`` (one kernel per test, :mod:`ptxspec.conformance.litmus_kernel`)
and ``litmus-plan.json`` (per test its plan; the iterations, seed, copies and stress of the run).
For every test this runs ``ceil(iterations / (32 * copies))`` launches. Before each launch it draws,
from a generator seeded by ``(seed, test index, launch)``:

* the *slots*: a distinct 8-byte word of the buffer for every location of every instance, out of
  :data:`SPREAD` times as many words as the instances need, so that instances share cache lines in
  a new way each launch;
* the *role table*: which role (CTA of the test) and copy each test block plays, a permutation of
  the blocks (within a cluster the roles keep their order; the clusters are permuted);
* the words the stress blocks hammer: every word no instance uses.

It writes every location's initial value, launches ``roles * copies`` test blocks and
``stress_blocks`` stress blocks, reads each instance's observed registers and final location
values, and counts each distinct outcome. Output ``OUT/litmus.json``: per test its name, source,
iterations, the observed terms and the histogram (outcome values and count), plus the device and
how long each test took. A test whose threads the test places on several GPUs runs on as many
devices of the machine (peer access to GPU 0's buffer), and is listed as skipped where the machine
has fewer.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

PLAN_FILE = "litmus-plan.json"
CUBIN_FILE = "litmus.cubin"
OUTPUT_FILE = "litmus.json"
WARP = 32
SPREAD = 4
"""Words of the buffer per word the instances use."""
WORD = 8


def draw(rng: np.random.Generator, plan: dict, copies: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """(slots, roles, stress) of one launch: uint32 byte offsets ``[instances, locations]``, per
    GPU the uint32 role words ``role << 16 | copy`` of its test blocks, and the byte offsets of the
    unused words."""
    instances = WARP * copies
    locations = max(1, len(plan["locations"]))
    words = SPREAD * instances * locations
    order = rng.permutation(words).astype(np.uint32)
    slots = (order[: instances * locations] * WORD).reshape(instances, locations)
    stress = order[instances * locations :] * WORD
    count = len(plan["roles"])
    if plan["cluster"]:  # a cluster is the blocks k*count .. k*count + count-1, roles in order
        copy = np.repeat(rng.permutation(copies), count)
        role = np.tile(np.arange(count), copies)
        return slots, [(role.astype(np.uint32) << 16) | copy.astype(np.uint32)], stress.astype(np.uint32)
    gpus = plan.get("role_gpus", [0] * count)
    tables = []
    for gpu in range(max(gpus) + 1):
        mine = np.array([r for r in range(count) if gpus[r] == gpu], dtype=np.uint32)
        shuffled = rng.permutation(len(mine) * copies)
        tables.append((mine[shuffled % len(mine)] << 16) | (shuffled // len(mine)).astype(np.uint32))
    return slots, tables, stress.astype(np.uint32)


def initial_image(plan: dict, slots: np.ndarray, words: int) -> np.ndarray:
    """The buffer before a launch: zero, and each location's initial value in its slots."""
    image = np.zeros(words * WORD, dtype=np.uint8)
    for v, location in enumerate(plan["locations"]):
        width = location["bits"] // 8
        value = np.frombuffer(int(location["initial"]).to_bytes(width, "little"), dtype=np.uint8)
        for b in range(width):
            image[slots[:, v] + b] = value[b]
    return image


def final_values(plan: dict, image: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """uint64 ``[instances, locations]``: each location's final value, from its slots."""
    out = np.zeros(slots.shape, dtype=np.uint64)
    for v, location in enumerate(plan["locations"]):
        for b in range(location["bits"] // 8):
            out[:, v] |= image[slots[:, v] + b].astype(np.uint64) << np.uint64(8 * b)
    return out


def outcomes(plan: dict, registers: np.ndarray, locations: np.ndarray) -> np.ndarray:
    """uint64 ``[instances, observed]`` in the plan's order of observed terms."""
    columns = [registers[:, o["slot"]] if o["kind"] == "register" else locations[:, o["slot"]] for o in plan["observed"]]
    return np.stack(columns, axis=1) if columns else np.zeros((len(registers), 0), dtype=np.uint64)


def _on(cp, plan: dict, gpu: int):
    """The device context of ``gpu`` for a test on several GPUs (none for one)."""
    import contextlib

    return cp.cuda.Device(gpu) if plan.get("gpus", 1) > 1 else contextlib.nullcontext()


def run_test(cp, modules: list, plan: dict, index: int, run: dict) -> dict:
    """Every launch of one test; ``modules[g]`` is the bundle's module loaded on GPU ``g``. The
    buffer, output and start counter live on GPU 0; the other GPUs reach them by peer access."""
    copies, seed = run["copies"], run["seed"]
    instances = WARP * copies
    launches = -(-run["iterations"] // instances)
    roles, gpus = len(plan["roles"]), plan.get("gpus", 1)
    role_gpus = plan.get("role_gpus", [0] * roles)
    stress_blocks = run["stress_blocks"] - run["stress_blocks"] % roles if plan["cluster"] else run["stress_blocks"]
    test_blocks = [role_gpus.count(g) * copies for g in range(gpus)]
    all_blocks = sum(test_blocks) + gpus * stress_blocks
    words = SPREAD * instances * max(1, len(plan["locations"]))
    registers = max(1, plan["registers"])
    functions = [modules[g].get_function(plan["kernel"]) for g in range(gpus)]
    histogram: dict[tuple[int, ...], int] = {}
    with _on(cp, plan, 0):
        mem = cp.zeros(words * WORD, dtype=np.uint8)
        out = cp.zeros(instances * registers, dtype=np.uint64)
        sync = cp.zeros(1, dtype=np.uint32)
    start = time.perf_counter()
    for launch in range(launches):
        rng = np.random.default_rng([seed, index, launch])
        slots, role_words, stress = draw(rng, plan, copies)
        with _on(cp, plan, 0):
            mem[:] = cp.asarray(initial_image(plan, slots, words))
            out.fill(0)
            sync.fill(0)
            cp.cuda.runtime.deviceSynchronize()
        for g in range(gpus):  # every GPU's kernel starts before any is waited for
            with _on(cp, plan, g):
                arguments = (
                    mem,
                    cp.asarray(slots.reshape(-1)),
                    cp.asarray(role_words[g]),
                    out,
                    sync,
                    np.uint32(test_blocks[g]),
                    np.uint32(all_blocks),
                    cp.asarray(stress),
                    np.uint32(len(stress)),
                    np.uint32(run["stress_rounds"]),
                    np.uint32(rng.integers(1 << 32)),
                )
                functions[g]((test_blocks[g] + stress_blocks,), (WARP * plan["warps"],), arguments)
        for g in range(gpus):
            with _on(cp, plan, g):
                cp.cuda.runtime.deviceSynchronize()
        with _on(cp, plan, 0):
            rows = outcomes(plan, cp.asnumpy(out).reshape(instances, registers), final_values(plan, cp.asnumpy(mem), slots))
        values, counts = np.unique(rows, axis=0, return_counts=True)
        for value, count in zip(values.tolist(), counts.tolist()):
            histogram[tuple(value)] = histogram.get(tuple(value), 0) + count
    return {
        "kernel": plan["kernel"],
        "test": plan["test"],
        "source": plan["source"],
        "iterations": launches * instances,
        "observed": [(f"P{o['thread']}:{o['name']}" if o["kind"] == "register" else o["name"]) for o in plan["observed"]],
        "outcomes": [[*map(str, key), count] for key, count in sorted(histogram.items())],
        "seconds": round(time.perf_counter() - start, 3),
    }


def load_modules(cp, cubin: Path, gpus: int) -> list:
    """The module on each of the first ``gpus`` devices, each device given peer access to GPU 0's
    memory (and GPU 0 to theirs)."""
    modules = []
    for g in range(gpus):
        with cp.cuda.Device(g):
            modules.append(cp.RawModule(path=str(cubin)))
            for peer in range(gpus):
                if peer != g and (g == 0 or peer == 0):
                    cp.cuda.runtime.deviceEnablePeerAccess(peer)
    return modules


def device_meta(cp) -> dict:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.runtime.getDevice())
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {
        "device": name,
        "sm": f"{props['major']}{props['minor']}",
        "multiprocessors": props["multiProcessorCount"],
        "driver": cp.cuda.runtime.driverGetVersion(),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "run":
        print("usage: litmus_device.py run BUNDLE OUT", file=sys.stderr)
        return 2
    import cupy as cp

    bundle, out_dir = Path(argv[1]), Path(argv[2])
    write(out_dir, run_bundle(cp, bundle, lambda record: write(out_dir, record), print))
    return 0


def run_bundle(cp, bundle: Path, keep=None, say=None) -> dict:
    """Every test of the bundle that this machine has the GPUs for (the others listed as skipped);
    ``keep(record)`` after each test (a run cut short keeps what it did), ``say(line)`` its line."""
    plan = json.loads((bundle / PLAN_FILE).read_text())
    available = cp.cuda.runtime.getDeviceCount()
    gpus = min(available, max((test.get("gpus", 1) for test in plan["tests"]), default=1))
    modules = load_modules(cp, bundle / CUBIN_FILE, gpus) if gpus > 1 else [cp.RawModule(path=str(bundle / CUBIN_FILE))]
    results: list[dict] = []
    skipped: list[dict] = []
    started = time.perf_counter()

    def record() -> dict:
        meta = device_meta(cp) | {"gpus": available, "seconds": round(time.perf_counter() - started, 1)}
        return {"run": plan["run"], "meta": meta, "tests": results, "skipped": skipped}

    for index, test in enumerate(plan["tests"]):
        if test.get("gpus", 1) > available:
            skipped.append({"kernel": test["kernel"], "test": test["test"], "why": f"needs {test['gpus']} GPUs; this machine has {available}"})
            continue
        results.append(run_test(cp, modules, test, index, plan["run"]))
        if say is not None:
            say(f"{index + 1}/{len(plan['tests'])} {test['test']}: {len(results[-1]['outcomes'])} outcomes, {results[-1]['seconds']} s")
        if keep is not None:
            keep(record())
    return record()


def write(out_dir: Path, record: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / OUTPUT_FILE).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
