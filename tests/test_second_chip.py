"""Recordings run on a second chip, kept as digests (``python -m ptxspec.conformance.silicon
digest-arrays``): every array of
the second chip's run has the same bytes as the repository's recording from the first chip.

Each ``*-digests.json`` with a ``pattern`` holds the second chip's meta, the SHA-256 of its files
and of every array of the files matching the pattern; the first chip's files are those of
conformance/data/sm_90/ (their meta names the first chip). Any difference in any array -- inputs
regenerated on the device, D registers, digests of D blocks, stored images -- fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptxspec.conformance.silicon import campaign

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
SECOND = sorted(p.name for p in DATA.glob("*-digests.json") if "pattern" in json.loads(p.read_text()))


def test_every_round_2_part_and_the_movement_recording_has_a_second_chip():
    assert {"mma-more-h200-digests.json", "mma-sp-more-h200-digests.json", "wgmma-more-h200-digests.json", "movement-h100-digests.json"} <= set(SECOND)


@pytest.mark.parametrize("name", SECOND)
def test_second_chip_gave_the_same_arrays(name):
    digests = json.loads((DATA / name).read_text())
    first = campaign.chip_meta(json.loads((DATA / digests["meta"]).read_text()))
    assert digests["gpu"] != first["gpu"] and {digests["gpu"][:11], first["gpu"][:11]} == {"NVIDIA H100", "NVIDIA H200"}
    mine = campaign.recorded_array_digests(DATA, digests["pattern"])
    assert mine, f"no recorded files match {digests['pattern']}"
    differing = sorted(k for k in set(mine) | set(digests["arrays"]) if mine.get(k) != digests["arrays"].get(k))
    assert not differing, f"{len(differing)} arrays differ between the chips, first {differing[:5]}"


def test_digest_arrays_notices_one_changed_bit(tmp_path):
    """The comparison can fail: one flipped bit in one array changes that array's digest only."""
    import numpy as np

    a = np.arange(64, dtype=np.uint32)
    np.savez(tmp_path / "part-0.npz", x=a, y=a * 3)
    (tmp_path / "meta-part.json").write_text(json.dumps({"gpu": "NVIDIA H200"}))
    before = campaign.array_digests(tmp_path, "meta-part.json", "part-*.npz")
    a[17] ^= 1 << 9
    np.savez(tmp_path / "part-0.npz", x=a, y=np.arange(64, dtype=np.uint32) * 3)
    after = campaign.array_digests(tmp_path, "meta-part.json", "part-*.npz")
    assert before["arrays"]["y"] == after["arrays"]["y"] and before["arrays"]["x"] != after["arrays"]["x"]
    assert before["files"]["part-0.npz"] != after["files"]["part-0.npz"] and before["gpu"] == "NVIDIA H200"
