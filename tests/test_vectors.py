"""``ptxspec vectors``: determinism, the schema, edge values first, outputs equal to the semantics
(and, for fma.rn.f32, to an independent MPFR oracle), the batched path identical to the
per-vector path, located errors."""

from __future__ import annotations

import io
import json
import re
import shlex
import struct
from fractions import Fraction
from pathlib import Path

import gmpy2
import numpy as np
import pytest
from click.testing import CliRunner

from ptxspec.conformance import cli as cli_module
from ptxspec.conformance.vectors import edge_vectors, generate, jsonl_bytes, npz_bytes, vectors_command
from ptxspec.semantics.instructions import check, evaluate
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import register_bits

FORMS = [
    "fma.rn.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "add.rn.f16x2",
    "mad.wide.s32",
    "addc.cc.u32",
    "setp.lt.f32",
    "ex2.approx.f32",
    "lop3.b32",
    "cvt.rn.f16.f32",
    # results written as sets in bulk (semantics/batch.py's Intervals and Members), or per line
    "sin.approx.ftz.f32",
    "rem.s32",
    "rcp.approx.ftz.f64",
    "tanh.approx.f16x2",
    "fma.rn.oob.f16x2",
    "ex2.approx.f16x2",  # per-lane member sets and intervals
    "ex2.approx.ftz.bf16x2",  # per-lane flushed intervals
]


def run_cli(args: list[str]) -> bytes:
    result = CliRunner().invoke(vectors_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ---------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------


def test_same_arguments_same_bytes(tmp_path):
    args = ["fma.rn.f32", "add.rn.f16x2", "mad.wide.s32", "--count", "3000", "--seed", "7"]
    first, second = run_cli(args), run_cli(args)
    assert first == second and len(first) > 0
    assert run_cli(args[:-1] + ["8"]) != first, "a different seed must give different random vectors"


def test_npz_same_bytes_and_same_content_as_jsonl(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for path in (a, b):
        run_cli(["fma.rn.f32", "mad.wide.s32", "--count", "500", "--seed", "3", "--format", "npz", "-o", str(path)])
    assert a.read_bytes() == b.read_bytes()
    data = np.load(a)
    assert list(data["instr"]) == ["fma.rn.f32", "mad.wide.s32"]
    for k, instr in enumerate(["fma.rn.f32", "mad.wide.s32"]):
        lines = [json.loads(line) for line in jsonl_bytes(instr, 500, 3).splitlines()]
        for i in range(len(parse(instr).sources)):
            assert data[f"{k}.in{i}"].dtype == np.uint64
            assert data[f"{k}.in{i}"].tolist() == [int(v["inputs"][i], 16) for v in lines]
        assert data[f"{k}.out0"].tolist() == [int(v["outputs"][0], 16) for v in lines]
        assert data[f"{k}.open0"].tolist() == [v.get("allowed") is not None for v in lines]


@pytest.mark.parametrize("instr", ["fma.rn.oob.f16x2", "fma.rn.relu.oob.bf16", "rem.s32", "sin.approx.ftz.f32", "tanh.approx.f16x2", "ex2.approx.f16x2"])
def test_npz_sets_as_in_jsonl(tmp_path, instr):
    """A set in bulk (a shared set, member rows, intervals) or per line: ``out`` holds its
    canonical member, 0 where it has none (the JSON line's outputs then hold the set), and
    ``open`` marks it, as the JSON Lines text of the same vectors says."""
    path = tmp_path / "v.npz"
    run_cli([instr, "--count", "3000", "--seed", "5", "--format", "npz", "-o", str(path)])
    data = np.load(path)
    lines = [json.loads(line) for line in jsonl_bytes(instr, 3000, 5).splitlines()]
    assert data["0.out0"].tolist() == [int(v["outputs"][0], 16) if isinstance(v["outputs"][0], str) else 0 for v in lines]
    assert data["0.open0"].tolist() == [v.get("allowed") is not None for v in lines]
    assert any(not isinstance(v["outputs"][0], str) for v in lines) or instr == "tanh.approx.f16x2"


# ---------------------------------------------------------------------------------------------
# Schema
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instr", FORMS)
def test_schema(instr):
    form = parse(instr)
    text = run_cli([instr, "--count", "400", "--seed", "1"]).decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == 400 and text.endswith("\n")
    for line in lines:
        v = json.loads(line)
        assert list(v) in (["instr", "inputs", "outputs", "profile"], ["instr", "inputs", "outputs", "allowed", "profile"])
        assert v["instr"] == form.text and v["profile"] == "spec"
        assert len(v["inputs"]) == len(form.sources) and len(v["outputs"]) == len(form.destinations)
        for value, operand in zip(v["inputs"], form.sources):
            width = register_bits(operand.type)
            assert re.fullmatch(f"0x[0-9a-f]{{{max(1, (width + 3) // 4)}}}", value), (value, operand)
            assert int(value, 16) < 1 << width
        for value, operand in zip(v["outputs"], form.destinations):
            if isinstance(value, str):
                assert re.fullmatch(f"0x[0-9a-f]{{{max(1, (register_bits(operand.type) + 3) // 4)}}}", value)
        if "allowed" in v:
            assert len(v["allowed"]) == len(form.destinations)
            assert any(a is not None for a in v["allowed"])


# ---------------------------------------------------------------------------------------------
# Edge values first, then random values that reach every exponent
# ---------------------------------------------------------------------------------------------


def test_float_edge_values_come_first():
    edges = [int(v["inputs"][0], 16) for v in generate("fma.rn.f32", 60, 0)]
    tiny = np.finfo(np.float32).smallest_subnormal
    expected = [
        0.0,
        -0.0,
        float(tiny),
        float(np.finfo(np.float32).smallest_normal),
        float(np.finfo(np.float32).max),
        -float(np.finfo(np.float32).max),
        float("inf"),
        float("-inf"),
        1.0,
        float(np.nextafter(np.float32(1), np.float32(0))),
        float(np.nextafter(np.float32(1), np.float32(2))),
        float(np.nextafter(np.float32(np.finfo(np.float32).smallest_normal), np.float32(0))),
    ]
    for x in expected:
        assert f32_bits(x) in edges, x
    assert any(b & 0x7FC00000 == 0x7FC00000 for b in edges), "a quiet NaN"
    assert any(b & 0x7FC00000 == 0x7F800000 and b & 0x3FFFFF for b in edges), "a signalling NaN"


def test_halfway_cases_of_the_destination_format():
    """cvt.rn.f16.f32's edge inputs hold f32 values exactly halfway between two f16 values, their
    f32 neighbours, and the overflow threshold 65520 (f16 max + half an ulp)."""
    inputs = [int(v["inputs"][0], 16) for v in generate("cvt.rn.f16.f32", 200, 0)]
    values = [Fraction(float(np.uint32(b).view(np.float32))) for b in inputs if (b >> 23) & 0xFF != 0xFF]
    ties = []
    for x in values:
        # In the f16 normal range, x is a tie when it is an odd multiple of half an f16 ulp.
        if Fraction(2) ** -14 <= abs(x) < 65504:
            exponent = int(np.floor(np.log2(float(abs(x)))))
            half_ulp = Fraction(2) ** (exponent - 11)
            q = abs(x) / half_ulp
            if q.denominator == 1 and q.numerator % 2 == 1:
                ties.append(x)
    assert Fraction(1) + Fraction(1, 2**11) in ties and Fraction(1) + Fraction(3, 2**11) in ties
    assert Fraction(2) ** -25 in values  # half the smallest f16 subnormal
    threshold = Fraction(float(np.finfo(np.float16).max)) + Fraction(16)
    assert threshold in values
    assert f32_bits(float(threshold)) + 1 in inputs and f32_bits(float(threshold)) - 1 in inputs


def test_integer_edges_and_carry_cases():
    vectors = list(generate("mad.wide.s32", 100, 0))
    a = [int(v["inputs"][0], 16) for v in vectors]
    for x in (0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFF, 0x10000):
        assert x in a
    carry = [v["inputs"] for v in generate("addc.cc.u32", 2000, 0)]
    assert ["0xffffffff", "0x00000001", "0x0"] in carry and ["0xffffffff", "0x00000000", "0x1"] in carry


def test_random_part_reaches_every_exponent_and_special():
    edges = len(edge_vectors(parse("cvt.rn.f16.f32"), 10**6))
    lines = [json.loads(line) for line in jsonl_bytes("cvt.rn.f16.f32", 30000, 5).splitlines()]
    random_part = [int(v["inputs"][0], 16) for v in lines[edges:]]
    exponents = {(b >> 23) & 0xFF for b in random_part}
    assert exponents == set(range(256))
    mantissas = [b & 0x7FFFFF for b in random_part if (b >> 23) & 0xFF == 0xFF]
    assert 0 in mantissas and any(m & 0x400000 for m in mantissas) and any(m and not m & 0x400000 for m in mantissas)
    edges = len(edge_vectors(parse("add.rn.f16x2"), 10**6))
    lanes = [int(v["inputs"][0], 16) for v in (json.loads(line) for line in jsonl_bytes("add.rn.f16x2", edges + 4000, 5).splitlines()[edges:])]
    assert {(b >> 26) & 0x1F for b in lanes} == set(range(32)) == {(b >> 10) & 0x1F for b in lanes}


# ---------------------------------------------------------------------------------------------
# Outputs: the semantics, and the batched path identical to the per-vector path
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
@pytest.mark.parametrize("instr", FORMS)
def test_batched_bytes_equal_per_vector_bytes(instr, profile):
    fast = jsonl_bytes(instr, 1500, 11, profile)
    slow = "".join(json.dumps(v) + "\n" for v in generate(instr, 1500, 11, profile)).encode()
    assert fast == slow


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
@pytest.mark.parametrize("instr", FORMS)
def test_every_output_is_what_evaluate_gives(instr, profile):
    form = parse(instr)
    for line in jsonl_bytes(instr, 600, 2, profile).splitlines():
        v = json.loads(line)
        sources = [int(x, 16) for x in v["inputs"]]
        results = evaluate(form, sources, profile)
        allowed = v.get("allowed") or [None] * len(results)
        for r, out, a in zip(results, v["outputs"], allowed):
            if isinstance(r, int):
                assert a is None and int(out, 16) == r
            else:
                assert a == r.to_json()
                if isinstance(out, str):
                    assert int(out, 16) in r
        observed = [int(o, 16) for o in v["outputs"] if isinstance(o, str)]
        if len(observed) == len(results):
            assert check(form, sources, observed, profile)


def _mpfr_fma_f32(a: int, b: int, c: int) -> int | None:
    """fma.rn.f32 by MPFR in binary32 emulation (None for NaN results, whose bits are open)."""
    x, y, z = (float(np.uint32(v).view(np.float32)) for v in (a, b, c))
    with gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True, round=gmpy2.RoundToNearest) as ctx:
        r = gmpy2.fma(gmpy2.mpfr(x), gmpy2.mpfr(y), gmpy2.mpfr(z))
        r = ctx.check_range(r)
        r = gmpy2.mpfr(r)
    if gmpy2.is_nan(r):
        return None
    if gmpy2.is_zero(r):
        exact_zero_sign = 1 if gmpy2.is_signed(r) else 0
        return exact_zero_sign << 31
    return f32_bits(float(r))


def _check_fma_against_mpfr(count: int, seed: int) -> int:
    checked = 0
    for line in jsonl_bytes("fma.rn.f32", count, seed, "sm_90").splitlines():
        v = json.loads(line)
        a, b, c = (int(x, 16) for x in v["inputs"])
        want = _mpfr_fma_f32(a, b, c)
        got = int(v["outputs"][0], 16)
        if want is None:
            assert got == 0x7FFFFFFF, v  # sm_90: the canonical NaN
        else:
            assert got == want, (v, hex(want))
            checked += 1
    return checked


def test_fma_vectors_match_mpfr():
    assert _check_fma_against_mpfr(4000, 0) > 2000  # the edge vectors hold many NaNs


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_fma_vectors_match_mpfr_heavy(chunk):
    assert _check_fma_against_mpfr(60000, 100 + chunk) > 30000


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def main_with_vectors():
    """``ptxspec`` as the lead will register it: ``cli.add_command(vectors_command)``."""
    added = "vectors" not in cli_module.cli.commands
    if added:
        cli_module.cli.add_command(vectors_command)
    yield cli_module.main
    if added:
        del cli_module.cli.commands["vectors"]


def test_unknown_instruction_is_a_located_error_exit_2(main_with_vectors, capsys):
    with pytest.raises(SystemExit) as done:
        main_with_vectors(["vectors", "fma.rn.f32", "frobnicate.f32", "--count", "3"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ptxspec: error: ") and "<command line>, INSTR 2" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, where",
    [
        (["frobnicate.b32", "--count", "3"], "INSTR 1"),
        (["shfl.sync.down.b32", "--active", "0x1ffffffff"], "--active"),
        (["fma.rn.f32", "--count", "-1"], "--count"),
        (["fma.rn.f32", "--seed", "-4"], "--seed"),
        (["fma.rn.f32", "--format", "npz"], "--output"),
    ],
)
def test_bad_arguments_are_located(args, where):
    with pytest.raises(PtxSpecError) as error:
        CliRunner().invoke(vectors_command, args, catch_exceptions=False, standalone_mode=False)
    assert where in error.value.one_line()


def test_output_file(tmp_path):
    path = tmp_path / "v.jsonl"
    run_cli(["add.rn.f16x2", "--count", "50", "-o", str(path)])
    assert path.read_bytes() == jsonl_bytes("add.rn.f16x2", 50, 0)


# ---------------------------------------------------------------------------------------------
# Warp-level forms
# ---------------------------------------------------------------------------------------------

WARP_FORMS = ["shfl.sync.down.b32", "shfl.sync.idx.b32", "vote.sync.ballot.b32", "vote.sync.all.pred", "match.any.sync.b32", "redux.sync.add.u32"]


def _lane_values(value) -> tuple[int, ...] | int:
    return tuple(int(x, 16) for x in value) if isinstance(value, list) else int(value, 16)


@pytest.mark.parametrize("mask, active", [(None, None), ("0x0000ffff", "0x0000ffff"), ("0xffffffff", "0x7fffffff")])
@pytest.mark.parametrize("instr", WARP_FORMS)
def test_warp_vectors_schema_and_semantics(instr, mask, active):
    form = parse(instr)
    args = [instr, "--count", "120", "--seed", "4"]
    args += ["--mask", mask] if mask else []
    args += ["--active", active] if active else []
    text = run_cli(args)
    assert text == run_cli(args)
    want_active = int(active, 16) if active else 0xFFFFFFFF
    for line in text.decode().splitlines():
        v = json.loads(line)
        assert v["instr"] == form.text and v["profile"] == "spec"
        assert ("active" in v) == (want_active != 0xFFFFFFFF)
        sources = [_lane_values(x) for x in v["inputs"]]
        for value, operand in zip(sources, form.sources):
            if operand.name == "membermask":
                assert value == (int(mask, 16) if mask else 0xFFFFFFFF)
            else:
                assert isinstance(value, tuple) and len(value) == 32
                assert all(0 <= lane < 1 << register_bits(operand.type) for lane in value)
        results = evaluate(form, sources, "spec", active=want_active)
        allowed = v.get("allowed") or [None] * len(results)
        for r, out, a in zip(results, v["outputs"], allowed):
            assert isinstance(out, list) and len(out) == 32
            lanes = r.lanes
            for lane_result, lane_out in zip(lanes, out):
                if isinstance(lane_result, int):
                    assert int(lane_out, 16) == lane_result
                else:
                    assert lane_out == lane_result.to_json() or int(lane_out, 16) in lane_result
            assert (a is None) == all(isinstance(x, int) for x in lanes)
            if a is not None:
                assert a == r.to_json()
        if all(all(isinstance(x, str) for x in out) for out in v["outputs"]):
            assert check(form, sources, [tuple(int(x, 16) for x in out) for out in v["outputs"]], "spec", active=want_active)


def test_warp_edges_first():
    vectors = list(generate("vote.sync.all.pred", 4, 0))
    assert [v["inputs"][0] for v in vectors[:2]] == [["0x0"] * 32, ["0x1"] * 32]
    assert [v["outputs"][0] for v in vectors[:2]] == [["0x0"] * 32, ["0x1"] * 32]


def test_warp_options_are_for_warp_forms(tmp_path):
    with pytest.raises(PtxSpecError) as error:
        CliRunner().invoke(vectors_command, ["fma.rn.f32", "--mask", "0xffff"], catch_exceptions=False, standalone_mode=False)
    assert "--mask" in error.value.one_line()
    with pytest.raises(PtxSpecError) as error:
        CliRunner().invoke(
            vectors_command, ["shfl.sync.down.b32", "--format", "npz", "-o", str(tmp_path / "x.npz")], catch_exceptions=False, standalone_mode=False
        )
    assert "INSTR 1" in error.value.one_line()


# ---------------------------------------------------------------------------------------------
# More independent oracles on the generated files: Python integers, numpy's f32 -> f16
# ---------------------------------------------------------------------------------------------


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) else x


def test_integer_vectors_match_python_arithmetic():
    for line in jsonl_bytes("mad.wide.s32", 5000, 9).splitlines():
        v = json.loads(line)
        a, b, c = (int(x, 16) for x in v["inputs"])
        assert int(v["outputs"][0], 16) == (_signed(a, 32) * _signed(b, 32) + c) % (1 << 64), v
    for line in jsonl_bytes("addc.cc.u32", 3000, 9).splitlines():
        v = json.loads(line)
        a, b, cf = (int(x, 16) for x in v["inputs"])
        total = a + b + cf
        assert [int(x, 16) for x in v["outputs"]] == [total % (1 << 32), total >> 32], v


def test_cvt_f16_vectors_match_numpy():
    lines = [json.loads(line) for line in jsonl_bytes("cvt.rn.f16.f32", 20000, 9, "sm_90").splitlines()]
    a = np.array([int(v["inputs"][0], 16) for v in lines], dtype=np.uint32)
    got = np.array([int(v["outputs"][0], 16) for v in lines], dtype=np.uint16)
    with np.errstate(over="ignore"):
        want = a.view(np.float32).astype(np.float16).view(np.uint16)
    finite = (a & 0x7F800000) != 0x7F800000
    assert finite.sum() > 15000
    assert (got[finite] == want[finite]).all()


def test_same_bytes_across_processes_with_different_hash_seeds():
    """Nothing depends on Python's hash(): two interpreters with different PYTHONHASHSEED write the
    same file."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from ptxspec.conformance.vectors import jsonl_bytes; "
        "sys.stdout.buffer.write(b''.join(jsonl_bytes(f, 2000, 5) for f in ('fma.rn.f32', 'add.rn.f16x2', 'vote.sync.ballot.b32')))"
    )
    outs = [
        subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, check=True).stdout for seed in ("1", "2")
    ]
    assert outs[0] == outs[1] and len(outs[0]) > 100000


# ---------------------------------------------------------------------------------------------
# Progress line (standard error, terminals only)
# ---------------------------------------------------------------------------------------------


def test_no_progress_when_stderr_is_not_a_terminal():
    # add.rn.f16x2 goes through the per-vector loop, which reports progress every PROGRESS_STEP.
    result = CliRunner().invoke(vectors_command, ["add.rn.f16x2", "lop3.b32", "--count", "3000"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr_bytes == b""
    assert result.stdout_bytes == jsonl_bytes("add.rn.f16x2", 3000, 0) + jsonl_bytes("lop3.b32", 3000, 0)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_leaves_stdout_alone(monkeypatch):
    import ptxspec.conformance.progress as progress

    terminal = _Terminal()
    monkeypatch.setattr(progress, "_stderr", lambda: terminal)
    result = CliRunner().invoke(vectors_command, ["add.rn.f16x2", "--count", "3000"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout_bytes == jsonl_bytes("add.rn.f16x2", 3000, 0)
    drawn = terminal.getvalue()
    assert "add.rn.f16x2 (1/1): 0/3000 (0%)" in drawn
    assert drawn.endswith("\r" + " " * 60 + "\r"), "the line is cleared at the end"


# ---------------------------------------------------------------------------------------------
# docs/vectors.rst: every console example is the command's real output
# ---------------------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "vectors.rst"


def _doc_sessions() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every ``$ ptxspec ...`` line of the page's console
    blocks."""
    sessions: list[tuple[str, list[str]]] = []
    in_console = False
    for line in DOC.read_text().splitlines():
        if line.strip() == ".. code-block:: console":
            in_console = True
            continue
        if in_console and line.strip() and not line.startswith(" "):
            in_console = False
        if not in_console or not line.strip():
            continue
        text = line.strip()
        if text.startswith("$ "):
            sessions.append((text[2:], []))
        elif text.startswith(".. "):
            in_console = False
        elif sessions:
            sessions[-1][1].append(line.strip())
    return sessions


def test_docs_console_examples_are_real_output(tmp_path, monkeypatch):
    from ptxspec.conformance.check_vectors import check_vectors_command

    text = DOC.read_text()
    bad = text.split("Given this ``bad.jsonl``::\n\n", 1)[1].split("\n\n", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.jsonl").write_text("".join(line.strip() + "\n" for line in bad.splitlines()))
    sessions = _doc_sessions()
    assert len(sessions) >= 10
    commands = {"vectors": vectors_command, "check-vectors": check_vectors_command}
    for command, expected in sessions:
        words, _, pipe = command.partition(" | ")
        argv = shlex.split(words)
        assert argv[0] == "ptxspec", command
        result = CliRunner().invoke(commands[argv[1]], argv[2:])
        assert result.exit_code in (0, 1), (command, result.output)
        got = result.stdout.splitlines()
        if pipe:
            tail = re.fullmatch(r"tail -n (\d+)", pipe)
            assert tail, command
            got = got[-int(tail.group(1)) :]
        assert [g.strip() for g in got] == expected, command


def test_docs_npz_example():
    run_cli(["add.rn.f16x2", "mad.wide.s32", "--count", "1000", "--format", "npz", "-o", "/dev/null"])  # accepted as shown
    text = DOC.read_text()
    files = re.search(r">>> sorted\(z.files\)\n\s+(\[.*\])", text).group(1)
    instr = re.search(r'>>> z\["instr"\]\n\s+(.*)', text).group(1)
    buffer = io.BytesIO(npz_bytes(["add.rn.f16x2", "mad.wide.s32"], 1000, 0))
    data = np.load(buffer)
    assert repr(sorted(data.files)) == files
    assert repr(data["instr"]) == instr


def test_bench_script_runs_and_finds_no_mismatch(capsys):
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "bench" / "vectors.py"
    spec = importlib.util.spec_from_file_location("bench_vectors", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--n", "100", "--loop-n", "20", "--big", "1500"]) == 0
    rows = capsys.readouterr().out.splitlines()
    from ptxspec.conformance.vectors import BENCH_FORMS

    assert [r.split()[0] for r in rows[1:-3]] == list(BENCH_FORMS)
    assert "MISMATCHED" not in "".join(rows) and "EXIT" not in "".join(rows)
    # Peak memory beside throughput, and the large-file rows: the command, its wall time and peak.
    assert all(r.split()[-1].replace(",", "").isdigit() for r in rows[1:-3])
    assert rows[-3].startswith("vectors 3 forms x 500") and rows[-2].startswith("check-vectors 1,500-vector file") and "MiB peak" in rows[-2]


@pytest.mark.parametrize(
    "instr", ["fma.rn.oob.bf16x2", "fma.rn.relu.oob.f16", "add.rn.f16x2", "sin.approx.ftz.f32", "rem.s32", "tanh.approx.f16x2", "ex2.approx.f16x2"]
)
@pytest.mark.parametrize("profile", ["spec", "sm_90"])
def test_destination_result_is_the_readable_result(instr, profile):
    """Destination.result (shared-set and any-NaN lanes, intervals, member rows, sets by index)
    rebuilds what evaluate() returns for every vector."""
    from ptxspec.conformance.vectors import _form, destinations, inputs
    from ptxspec.semantics.instructions import evaluate

    form = _form(instr)
    columns = inputs(form, 2000, 1)
    dests = destinations(form, columns, profile)
    for i in range(2000):
        want = evaluate(form, [int(c[i]) for c in columns], profile)
        assert tuple(d.result(i) for d in dests) == want, (i, [hex(int(c[i])) for c in columns])
