"""A GPU stand-in for the device scripts' tests: a numpy module in CuPy's place and a bundle on disk.

A plain module (tests/ has no package): the test files import it as ``import emulated_gpu``. The
device scripts use of CuPy only ``RawModule(path).get_function(name)(grid, block, args)``, array
transfers and the runtime queries of ``exhaustive_device.device_meta``; :func:`emulated_cupy`
gives exactly those, each kernel being the Python function the test passes for its name.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np


def emulated_cupy(kernel: Callable[[str], Callable]) -> types.ModuleType:
    """A module standing in for CuPy: ``RawModule(path).get_function(name)`` is ``kernel(name)``,
    a function ``launch(grid, block, args)`` that writes its output arrays in place."""

    class RawModule:
        def __init__(self, path):
            pass

        def get_function(self, name):
            return kernel(name)

    rt = types.SimpleNamespace(
        deviceSynchronize=lambda: None,
        getDeviceProperties=lambda i: {"name": b"emulated", "major": 9, "minor": 0},
        driverGetVersion=lambda: 0,
        runtimeGetVersion=lambda: 0,
    )
    module = types.ModuleType("cupy")
    module.asarray, module.zeros, module.asnumpy, module.tile, module.arange, module.uint64 = np.asarray, np.zeros, np.asarray, np.tile, np.arange, np.uint64
    module.RawModule = RawModule
    module.cuda = types.SimpleNamespace(runtime=rt)
    return module


def write_bundle(directory: Path, stem: str, plan: list[dict], probes: dict[str, np.ndarray], rejected: dict | None = None) -> Path:
    """An mma-campaign bundle in ``directory/bundle``: ``STEM-plan.json``, ``STEM-probes.npz`` and
    an empty ``STEM.cubin`` (the emulated CuPy never reads it). Returns the bundle folder."""
    bundle = directory / "bundle"
    bundle.mkdir()
    (bundle / f"{stem}-plan.json").write_text(json.dumps({"combinations": plan, "rejected": rejected or {}}))
    np.savez_compressed(bundle / f"{stem}-probes.npz", **probes)
    (bundle / f"{stem}.cubin").write_bytes(b"")
    return bundle


def splitmix64(x: int) -> int:
    """SplitMix64's mix of ``x`` in Python integers (Vigna's published constants): the oracle for
    the device scripts' numpy and CUDA counter generators (known values: tests/test_silicon_exhaustive.py)."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)
