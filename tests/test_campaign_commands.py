"""The campaign command lines (``python -m ptxspec.conformance.silicon.{mma,wgmma,movement}_campaign``,
``record``, and the device scripts) answer a missing recording or bundle file with one line naming
the file and exit status 2, and an unknown command with their usage and exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import wgmma_campaign as wc
from ptxspec.conformance.silicon.record import command_line


def test_wgmma_campaign_missing_recording(tmp_path, capsys):
    assert command_line(wc.main, ["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(tmp_path / "meta-wgmma.json") in err[0] and "Traceback" not in err[0]


def test_mma_campaign_missing_recording(tmp_path, capsys, monkeypatch):
    for command, name in (("verify-more", "meta-mma-more.json"), ("spec-check", "meta-mma.json")):
        monkeypatch.setattr(sys, "argv", ["mma_campaign", command, str(tmp_path)])
        assert command_line(mc.main) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(tmp_path / name) in err[0], err


def test_unknown_commands_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["mma_campaign", "no-such-command"])
    assert command_line(mc.main) == 2
    assert command_line(wc.main, ["no-such-command"]) == 2
    assert "prepare" in capsys.readouterr().out


def test_record_and_movement_missing_files(tmp_path, capsys):
    """``record digest-arrays`` and ``movement_campaign replay`` on a directory without the files."""
    from ptxspec.conformance.silicon import movement_campaign, record

    for main, args, name in ((record.main, ["digest-arrays", str(tmp_path), "meta-x.json", "x-*.npz"], "meta-x.json"),
                             (movement_campaign.main, ["replay", str(tmp_path)], "meta-movement.json")):
        assert command_line(main, args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(tmp_path / name) in err[0], err
    assert command_line(record.main, ["no-such-command"]) == 2


DEVICE = Path(__file__).resolve().parents[1] / "conformance" / "silicon"


@pytest.mark.parametrize("script, command, name", [("mma_device.py", "run-more", "more.cubin"), ("mma_device.py", "run", "mma.cubin"),
                                                  ("movement_device.py", "run", "movement-plan.json"), ("wgmma_device.py", "run", "wgmma-plan.json")])
def test_device_scripts_refuse_an_empty_bundle(tmp_path, script, command, name):
    """The device scripts check the bundle before CuPy is touched: one line, exit status 2."""
    done = subprocess.run([sys.executable, str(DEVICE / script), command, str(tmp_path), str(tmp_path / "out")], capture_output=True, text=True)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and str(tmp_path / name) in err[0], done.stderr
