"""``ptxspec vectors --format testfloat`` and ``ptxspec check-vectors --testfloat FORM``: the wiring
to :mod:`ptxspec.conformance.testfloat` (whose own tests check the layout and the flags)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

testfloat = pytest.importorskip("ptxspec.conformance.testfloat", reason="conformance/testfloat.py (engineer H1) is not there yet")

from ptxspec.conformance import cli as cli_module  # noqa: E402
from ptxspec.conformance.check_vectors import check_vectors_command  # noqa: E402
from ptxspec.conformance.vectors import inputs, jsonl_bytes, encode_testfloat, vectors_command  # noqa: E402
from ptxspec.semantics.instructions import check  # noqa: E402
from ptxspec.spec.catalogue import parse  # noqa: E402

FORMS = ["add.rn.f32", "fma.rn.f32", "cvt.rn.f16.f32"]


@pytest.fixture
def main():
    """``ptxspec`` with both commands registered, as the lead registers them."""
    added = [c for c in (vectors_command, check_vectors_command) if c.name not in cli_module.cli.commands]
    for c in added:
        cli_module.cli.add_command(c)
    yield cli_module.main
    for c in added:
        del cli_module.cli.commands[c.name]


def run(main, args, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("instr", FORMS)
def test_testfloat_file_holds_the_jsonl_vectors_and_round_trips(tmp_path, main, capsys, instr):
    path = tmp_path / "v.tf"
    code, _, err = run(main, ["vectors", instr, "--count", "800", "--seed", "4", "--format", "testfloat", "-o", str(path)], capsys)
    assert code == 0, err
    data = path.read_bytes()
    form = parse(instr)
    assert data == testfloat.encode(form, inputs(form, 800, 4), "spec") == encode_testfloat(instr, 800, 4)
    # the same inputs as the JSON Lines file, and results the specification allows
    sources, outputs, _ = testfloat.read(data, form)
    lines = [json.loads(t) for t in jsonl_bytes(instr, 800, 4).splitlines()]
    assert [[int(x, 16) for x in v["inputs"]] for v in lines] == [[int(s[i]) for s in sources] for i in range(800)]
    assert all(check(form, [int(s[i]) for s in sources], [int(outputs[i])], "spec") for i in range(0, 800, 7))
    code, out, _ = run(main, ["check-vectors", "--testfloat", instr, str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["by_instr"] == {form.text: {"checked": 800, "matched": 800, "mismatched": 0}}


def test_corrupted_result_is_a_mismatch_on_its_line(tmp_path, main, capsys):
    form = parse("add.rn.f32")
    lines = encode_testfloat("add.rn.f32", 300, 1).decode().splitlines()
    fields = lines[200].split(" ")
    fields[2] = f"{int(fields[2], 16) ^ 0x1:08X}"
    lines[200] = " ".join(fields)
    path = tmp_path / "bad.tf"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(main, ["check-vectors", "--testfloat", form.text, str(path)], capsys)
    assert code == 1 and f"{path}:201: add.rn.f32" in out


@pytest.mark.parametrize("flip", [0x01, 0x02, 0x04, 0x08, 0x10])
def test_wrong_flags_are_a_mismatch_on_their_line(tmp_path, main, capsys, flip):
    """The flags column is judged: a line with the right result but one flag bit changed (each
    of TestFloat's five) is a mismatch that names the line and the IEEE flags."""
    lines = encode_testfloat("div.rn.f32", 300, 2).decode().splitlines()
    fields = lines[123].split(" ")
    fields[3] = f"{int(fields[3], 16) ^ flip:02X}"
    lines[123] = " ".join(fields)
    path = tmp_path / "flags.tf"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(main, ["check-vectors", "--testfloat", "div.rn.f32", str(path), "--json"], capsys)
    assert code == 1 and json.loads(out)["mismatched"] == 1
    code, out, _ = run(main, ["check-vectors", "--testfloat", "div.rn.f32", str(path)], capsys)
    assert code == 1 and f"{path}:124: div.rn.f32: result matches, but flags" in out


def test_malformed_testfloat_line_is_located_exit_2(tmp_path, main, capsys):
    lines = encode_testfloat("add.rn.f32", 50, 1).decode().splitlines()
    lines[9] = lines[9][:3] + "Z" + lines[9][4:]
    path = tmp_path / "bad.tf"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(main, ["check-vectors", "--testfloat", "add.rn.f32", str(path)], capsys)
    assert code == 2 and err.startswith("ptxspec: error: ") and f"{path}:10:" in err


@pytest.mark.parametrize(
    "args, words",
    [
        (["vectors", "add.rn.f16x2", "--format", "testfloat"], "no TestFloat counterpart"),
        (["vectors", "add.rn.ftz.f32", "--format", "testfloat"], "no TestFloat counterpart"),
        (["vectors", "add.rn.f32", "mul.rn.f32", "--format", "testfloat", "-o", "x.tf"], "one form per file"),
        (["vectors", "add.rn.f32", "mul.rn.f32", "--format", "testfloat"], "one form per file"),
        (["check-vectors", "--testfloat", "add.rn.ftz.f32", "x.tf"], "no TestFloat counterpart"),
        (["check-vectors", "--testfloat", "frobnicate.f32", "x.tf"], "--testfloat"),
    ],
)
def test_refusals_are_one_line_exit_2(tmp_path, monkeypatch, main, capsys, args, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.tf").write_text("")
    code, out, err = run(main, args, capsys)
    assert code == 2 and out == ""
    assert err.startswith("ptxspec: error: ") and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.tf").read_text()


def test_testfloat_from_standard_input(main, capsys, monkeypatch):
    import io
    import sys

    data = encode_testfloat("mul.rn.f32", 120, 2)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(main, ["check-vectors", "--testfloat", "mul.rn.f32", "-", "--json"], capsys)
    assert code == 0 and json.loads(out)["matched"] == 120
    assert np.array_equal(testfloat.read(data, parse("mul.rn.f32"))[1], testfloat.read(data, "mul.rn.f32")[1])


def test_vectors_testfloat_to_standard_output():
    result = CliRunner().invoke(vectors_command, ["add.rn.f32", "--count", "40", "--format", "testfloat"], catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout_bytes == encode_testfloat("add.rn.f32", 40, 0)
