"""The one command line of the silicon campaigns (``python -m ptxspec.conformance.silicon``) and
the device scripts answer a missing recording or bundle file with one line naming the file and
exit status 2, and an unknown command or round with their usage and exit status 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import wgmma_campaign as wc
from ptxspec.conformance.silicon.__main__ import main, silicon

ROOT = Path(__file__).resolve().parents[1]


def _one_line(capsys, name: Path) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(name) in err[0] and "Traceback" not in err[0], err


def test_wgmma_campaign_missing_recording(tmp_path, capsys):
    assert main(["wgmma", "verify", str(tmp_path)]) == 2
    _one_line(capsys, tmp_path / "meta-wgmma.json")


def test_mma_campaign_missing_recording(tmp_path, capsys):
    for command, name in ((["verify", "--round", "mma-more"], "meta-mma-more.json"), (["spec-check"], "meta-mma.json")):
        assert main(["mma", *command, str(tmp_path)]) == 2
        _one_line(capsys, tmp_path / name)


def test_unknown_commands_and_rounds_exit_2(capsys):
    assert main(["mma", "no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
    assert main(["wgmma", "verify", "--round", "wgmma-later"]) == 2
    assert "wgmma-more" in capsys.readouterr().err
    assert main([]) == 2
    assert "mma" in capsys.readouterr().err
    assert main(["mma", "prepare", "/nonexistent", "--round", "mma-more", "--random", "100"]) == 2
    assert "--random" in capsys.readouterr().err


def test_digest_arrays_and_movement_missing_files(tmp_path, capsys):
    """``digest-arrays`` and ``movement verify`` on a directory without the files."""
    for args, name in (
        (["digest-arrays", str(tmp_path), "meta-x.json", "x-*.npz"], "meta-x.json"),
        (["movement", "verify", str(tmp_path)], "meta-movement.json"),
        (["float-cvt", "verify", str(tmp_path)], "meta-float-cvt.json"),
    ):
        assert main(args) == 2
        _one_line(capsys, tmp_path / name)


def test_every_campaign_has_one_command_line():
    """Every campaign is a group of the one command line; the rounds of ``--round`` are the
    campaigns' own (named by the stem of their files); no module keeps a command line of its own."""
    assert set(silicon.commands) >= {"float-cvt", "catalogue", "mma", "wgmma", "movement", "approx", "exhaustive", "all", "digest-arrays"}
    assert set(silicon.commands["mma"].commands) == {"prepare", "prepare-sass", "verify", "fit", "spec-check", "separate"}
    assert set(silicon.commands["wgmma"].commands) == {"prepare", "verify", "fit", "spec-check", "separate", "digests"}
    choices = {o.name: o.type.choices for o in silicon.commands["mma"].commands["verify"].params if o.name == "round_name"}
    assert list(choices["round_name"]) == list(mc.ROUNDS) == ["mma", "mma-sp", "mma-more", "mma-sp-more"]
    assert list(wc.ROUNDS) == ["wgmma", "wgmma-more", "wgmma-pruned"]
    for module in sorted((ROOT / "conformance" / "silicon").glob("*.py")):
        text = module.read_text()
        if module.name.endswith("_device.py") or module.name == "__main__.py":
            continue
        assert "argparse" not in text and "sys.argv" not in text and "def main(" not in text, module.name


def test_documented_commands_exist():
    """Every ``python -m ptxspec.conformance.silicon CAMPAIGN COMMAND`` the docs and the module
    docstrings name is a command of the one command line."""
    texts = [p.read_text() for p in (ROOT / "docs").glob("*.rst")] + [(ROOT / "README.md").read_text(), (ROOT / "CONTRIBUTING.md").read_text()]
    texts += [p.read_text() for p in (ROOT / "conformance" / "silicon").glob("*.py")]
    named = {m for text in texts for m in re.findall(r"python -m ptxspec\.conformance\.silicon\s+([a-z][a-z0-9-]*(?:\s+[a-z][a-z-]*)?)", text)}
    assert named
    for words in named:
        group, *command = words.split()
        assert group in silicon.commands, words
        if command and hasattr(silicon.commands[group], "commands"):
            assert command[0] in silicon.commands[group].commands, words


DEVICE = ROOT / "conformance" / "silicon"


@pytest.mark.parametrize(
    "script, args, name",
    [
        ("mma_device.py", ["mma-more"], "more.cubin"),
        ("mma_device.py", [], "mma.cubin"),
        ("movement_device.py", [], "movement-plan.json"),
        ("wgmma_device.py", [], "wgmma-plan.json"),
        ("scalar_device.py", [], "campaign.cubin"),
        ("scalar_device.py", ["fma-oob-probes"], "fma-oob-probes.cubin"),
        ("exhaustive_device.py", [], "exhaustive-plan.json"),
        ("approx_device.py", [], "approx.cubin"),
    ],
)
def test_device_scripts_refuse_an_empty_bundle(tmp_path, script, args, name):
    """The device scripts check the bundle before CuPy is touched: one line, exit status 2."""
    done = subprocess.run([sys.executable, str(DEVICE / script), "run", str(tmp_path), str(tmp_path / "out"), *args], capture_output=True, text=True)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and str(tmp_path / name) in err[0], done.stderr


@pytest.mark.parametrize("script", ["mma_device.py", "movement_device.py", "wgmma_device.py", "scalar_device.py", "exhaustive_device.py", "approx_device.py"])
def test_device_scripts_print_their_usage(script):
    """An unknown command: the script's usage (its docstring, whose first command is ``run``), exit 2."""
    done = subprocess.run([sys.executable, str(DEVICE / script), "no-such-command"], capture_output=True, text=True)
    assert done.returncode == 2 and f"{script} run BUNDLE OUT" in done.stdout and "Traceback" not in done.stderr, done.stdout
