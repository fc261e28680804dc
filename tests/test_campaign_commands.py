"""The campaign command lines (``python -m ptxspec.conformance.silicon.{mma,wgmma}_campaign``) answer
a missing recording with one line naming the file and exit status 2, and an unknown command with
their usage and exit status 2."""

from __future__ import annotations

import sys

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
