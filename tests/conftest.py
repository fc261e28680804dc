"""Shared test configuration.

Heavy cases (``@pytest.mark.heavy``) are the long differential runs. By default a seeded sample of
them runs (``PTXSPEC_HEAVY_FRACTION``, default 0.04, chosen by a hash of the test id and
``PTXSPEC_SEED``, default 0), so the default run stays within 12 minutes on 2 cores while every case
can still be run: ``PTXSPEC_HEAVY=all pytest`` runs every heavy case, ``PTXSPEC_HEAVY=none`` none.
A different ``PTXSPEC_SEED`` samples different cases.

Hypothesis runs 100 examples per property (the ``ci`` profile, deterministic);
``HYPOTHESIS_PROFILE=dev`` runs 1000 with fresh randomness.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def _heavy_selected(nodeid: str) -> bool:
    mode = os.environ.get("PTXSPEC_HEAVY", "sample")
    if mode == "all":
        return True
    if mode == "none":
        return False
    fraction = float(os.environ.get("PTXSPEC_HEAVY_FRACTION", "0.04"))
    seed = os.environ.get("PTXSPEC_SEED", "0")
    h = int.from_bytes(hashlib.sha256(f"{seed}:{nodeid}".encode()).digest()[:8], "big")
    return h / 2**64 < fraction


def pytest_collection_modifyitems(config, items):
    deselected = [item for item in items if item.get_closest_marker("heavy") and not _heavy_selected(item.nodeid)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


@pytest.fixture(scope="session")
def ptxas() -> str:
    """Path of ptxas, or skip when it is not installed."""
    path = shutil.which("ptxas")
    if path is None:
        pytest.skip("ptxas is not on PATH")
    return path
