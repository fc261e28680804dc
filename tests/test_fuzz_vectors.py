"""Fuzzing ``ptxspec eval``, ``vectors`` and ``check-vectors`` (issue 14, item 4): whatever the
input -- a mutated instruction text, operand, option, ``--file`` line, vector line or TestFloat
line -- the command gives a result, or exactly one located error line (``ptxspec: error: WHERE:
...``, WHERE naming the command line, the file and line, standard input or standard output) with
exit status 2; never a traceback, never a hang.

The commands run in-process through :func:`ptxspec.conformance.cli.main` (what the console script
runs) with a time limit per run; a few cases run the real console script in a subprocess: a full
disk (``> /dev/full``), a file with no line break (``/dev/zero``). The seeded mutation and
Hypothesis suites are sampled by default (a few seconds); the ``heavy`` ones run many more
examples (``PTXSPEC_HEAVY=all``).

The first cases are the inputs that gave a traceback or an unlocated message before issue 14.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxspec.conformance.cli as cli_module
from ptxspec.conformance.vectors import jsonl_bytes
from test_fuzz_litmus import guard  # the wall-clock guard the litmus fuzz suite uses (raises Hang)

REPO = Path(__file__).resolve().parent.parent
PREFIX = "ptxspec: error: "
BIG = "9" * 5000


def run(argv: list[str], stdin: bytes = b"", seconds: float = 60) -> tuple[int, str, str]:
    """``ptxspec ARGV`` in-process: (exit status, standard output, standard error). Any exception
    but the exit is a traceback the user would see, and fails the test."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with guard(seconds), redirect_stdout(out), redirect_stderr(err):
            try:
                cli_module.main(argv)
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
            else:  # pragma: no cover - main always exits
                code = 0
    finally:
        sys.stdin = saved
    return code, out.buffer.getvalue().decode("utf-8", "replace"), err.getvalue()


def assert_answer(code: int, out: str, err: str, sources: tuple[str, ...], results: tuple[int, ...] = (0,)) -> None:
    """A result (exit status in ``results``; standard error empty or one warning, or with exit
    status 1 the mismatches ``--json`` describes there), or one located error line and exit
    status 2."""
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(PREFIX), err
        where = lines[0][len(PREFIX) :]
        assert where.startswith(sources + ("<command line>", "<standard output>")), lines[0]
        assert ": " in where
        return
    assert code in results, (code, out, err)
    if code == 1:  # check-vectors --json: the mismatches are described on standard error
        assert PREFIX not in err, err
    else:
        assert err == "" or err == "ptxspec: warning: no vector was checked\n", err


# ---------------------------------------------------------------------------------------------
# The inputs that gave a traceback or an unlocated message before
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, where",
    [
        (["eval", "add.rn.f32", BIG, "0"], "<command line>, operand 1: "),
        (["eval", "add.rn.f32", "0x" + "f" * 5000, "0"], "<command line>, operand 1: "),
        (["eval", "--mask", BIG, "shfl.sync.down.b32", "0", "1", "0x1f"], "<command line>, --mask: "),
        (["eval", "--active", BIG, "shfl.sync.down.b32", "0", "1", "0x1f"], "<command line>, --active: "),
        (["vectors", "fma.rn.f32", "--count", str(10**30)], "<command line>, --count: "),
        (["vectors", "fma.rn.f32", "--count", BIG], "<command line>: "),
        (["vectors", "fma.rn.f32", "--seed", BIG], "<command line>: "),
        (["vectors", "shfl.sync.down.b32", "--mask", BIG], "<command line>, --mask: "),
    ],
)
def test_former_tracebacks_on_the_command_line(argv, where):
    code, out, err = run(argv)
    assert code == 2 and out == "", err
    assert err.startswith(PREFIX + where) and len(err.splitlines()) == 1 and len(err) < 2500


def test_former_tracebacks_in_files(tmp_path):
    (tmp_path / "eval.txt").write_text(f"add.rn.f32 0x1 0x2\nadd.rn.f32 {BIG} 0\n")
    code, _, err = run(["eval", "--file", str(tmp_path / "eval.txt")])
    assert code == 2 and err.startswith(f"{PREFIX}{tmp_path / 'eval.txt'}:2:12: ")
    lines = {
        "bigint": ('{"instr": "add.rn.f32", "inputs": [' + BIG + ', "0x00000000"], "outputs": ["0x00000000"]}', 36, "a number of 5000 digits"),
        "deep": (
            '{"instr": "add.rn.f32", "inputs": [' + "[" * 100_000 + "]" * 100_000 + "]" + ', "outputs": []}',
            36 + 62,
            "nests deeper than 64",
        ),  # the 65th level opens at the 63rd "["
    }
    for name, (line, column, words) in lines.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(jsonl_bytes("fma.rn.f32", 2, 0).decode() + line + "\n")
        code, out, err = run(["check-vectors", str(path)])
        assert code == 2 and out == "", err
        assert err.startswith(f"{PREFIX}{path}:3:{column}: ") and words in err and len(err.splitlines()) == 1


def test_dev_zero_and_stdin(tmp_path):
    for argv in (["check-vectors", "/dev/zero"], ["eval", "--file", "/dev/zero"], ["check-vectors", "--testfloat", "add.rn.f32", "/dev/zero"]):
        code, _, err = run(argv, seconds=30)
        assert code == 2 and err.startswith(f"{PREFIX}/dev/zero:1:") and "no line break" in err, (argv, err)
    code, _, err = run(["check-vectors", "-"], stdin=b"\x00" * (1 << 20) + b"\n{")
    assert code == 2 and err.startswith(f"{PREFIX}<stdin>:1:1: "), err


def _script() -> str:
    beside = Path(sys.executable).with_name("ptxspec")
    return str(beside) if beside.exists() else "ptxspec"


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "add.rn.f32", "0x3f800000", "0x40000000"],
        ["eval", "--file", "examples/golden.txt"],
        ["vectors", "add.rn.f32", "--count", "100000"],
        ["vectors", "add.rn.f32", "--count", "10", "--format", "testfloat"],
        ["vectors", "shfl.sync.down.b32", "--count", "3"],
        ["check-vectors", "tests/data/vectors/good.jsonl"],
        ["forms", "add"],
    ],
)
def test_full_disk_is_one_located_line_exit_2(args):
    """Standard output on a full disk: the real console script, its real exit path."""
    if not Path("/dev/full").exists():  # pragma: no cover - Linux has it
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        done = subprocess.run([_script(), *args], stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"{PREFIX}<standard output>: cannot write the output: No space left on device\n"


def test_closed_pipe_stays_quiet():
    process = subprocess.Popen([_script(), "vectors", "fma.rn.f32", "--count", "300000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert process.stdout.read(1000)
    process.stdout.close()
    assert process.wait(timeout=300) == 1
    assert process.stderr.read() == b""
    process.stderr.close()


# ---------------------------------------------------------------------------------------------
# Seeded mutation
# ---------------------------------------------------------------------------------------------

FORMS = [
    "add.rn.f32",
    "fma.rn.ftz.sat.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "add.rn.f16x2",
    "mad.wide.s32",
    "shfl.sync.down.b32",
    "vote.sync.ballot.b32",
    "mov.b64 d, {a, b}",
    "ex2.approx.ftz.f32",
    "setp.lt.f32",
    "add.cc.u32",
    "div.rn.f64",
    "lop3.b32",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "testp.finite.f32",
    "cvt.rn.f16.f32",
]
CHARS = list(".,_{}[]()\"'\\ 0123456789abcdefxABCDEFX%$|#/-+") + ["\n", "\r", "\t", "\x00", "\x1b", "é", "\u2028", "\ud800", "\uffff"]
OPERANDS = [
    "0x3f800000",
    "0",
    "1",
    "0x0",
    "0xffffffff",
    "0f3F800000",
    "0d3FF0000000000000",
    "0b101",
    "1_000",
    "_",
    "",
    " ",
    "-1",
    "0x",
    "0x1_",
    "0xg",
    BIG,
    "0x" + "f" * 5000,
    "0b" + "1" * 5000,
    ",".join(["1"] * 32),
    ",".join(["1"] * 31),
    "nan",
    "1e3",
    "\x00",
]


def mutate(rng: random.Random, text: str, steps: int) -> str:
    for _ in range(steps):
        k = rng.randrange(len(text) + 1)
        op = rng.randrange(5)
        if op == 0:
            text = text[:k] + rng.choice(CHARS) + text[k:]
        elif op == 1 and text:
            text = text[:k] + text[k + 1 :]
        elif op == 2 and text:
            j = rng.randrange(len(text))
            text = text[:k] + text[j : j + rng.randrange(1, 12)] + text[k:]
        elif op == 3:
            text = text[:k]
        else:
            text = text[:k] + rng.choice(CHARS) * rng.choice([1, 2, 70, 5000]) + text[k:]
    return text


#: Forms with operands they accept, mutated now and then.
EVAL = {
    "add.rn.f32": ["0x3f800000", "0x40000000"],
    "fma.rn.ftz.sat.f32": ["0f3F800000", "1", "0x7fc00000"],
    "mad.wide.s32": ["7", "-1", "0x5"],
    "cvt.rn.satfinite.e4m3x2.f32": ["0x3f800000", "0x43e00000"],
    "add.rn.f16x2": ["0x3c003c00", "0x7e00bc00"],
    "setp.lt.f32": ["0", "1"],
    "mov.b64 d, {a, b}": ["0x1", "0x2"],
    "ex2.approx.ftz.f32": ["0x3f800000"],
    "add.cc.u32": ["0xffffffff", "1"],
    "div.rn.f64": ["0d3FF0000000000000", "3"],
    "shfl.sync.down.b32": [",".join(str(i) for i in range(32)), "1", "0x1f"],
    "vote.sync.ballot.b32": ["1"],
    "lop3.b32": ["1", "2", "3", "0x96"],
}


def eval_case(rng: random.Random, tmp_path: Path) -> list[str]:
    argv = ["eval"]
    for option, values in (
        ("--json", None),
        ("--profile", ["spec", "sm_90", "sm_90", "sm_91"]),
        ("--mask", ["0xffff"] + OPERANDS),
        ("--active", ["0xffff"] + OPERANDS),
    ):
        if rng.random() < 0.15:
            argv += [option] if values is None else [option, rng.choice(values)]

    def request() -> list[str]:
        instr = rng.choice(list(EVAL))
        operands = list(EVAL[instr])
        if rng.random() < 0.3:
            instr = mutate(rng, instr, rng.choice([1, 2, 4]))
        if rng.random() < 0.4:
            i = rng.randrange(len(operands) + 1)
            operands[i : i + 1] = [rng.choice(OPERANDS) if rng.random() < 0.5 else mutate(rng, rng.choice(operands), 1)] * rng.randrange(2)
        return [instr, *operands]

    if rng.random() < 0.3:
        lines = [" ".join(request()) for _ in range(rng.randrange(1, 5))]
        path = tmp_path / "eval.txt"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + rng.choice([b"", b"\n", b"\n# done\n", b"\xff\n"]))
        return argv + ["--file", str(path)]
    return argv + request()


def vectors_case(rng: random.Random, tmp_path: Path) -> list[str]:
    forms = [mutate(rng, f, rng.choice([1, 3])) if rng.random() < 0.2 else f for f in rng.sample(FORMS, rng.choice([1, 1, 2]))]
    argv = ["vectors", *forms, "--count", rng.choice(["0", "1", "3", "17", "40", "-1", str(2**32 + 1), str(10**30), BIG, "x"]) if rng.random() < 0.3 else "25"]
    if rng.random() < 0.5:
        argv += ["--seed", rng.choice(["0", "5", "-3", str(10**40), BIG]) if rng.random() < 0.4 else str(rng.randrange(100))]
    if rng.random() < 0.3:
        argv += ["--format", rng.choice(["jsonl", "npz", "testfloat", "csv"])]
    if rng.random() < 0.4:
        argv += ["-o", str(tmp_path / rng.choice(["v.out", "v.out", "missing/v.out"]))]
    for option in ("--mask", "--active", "--profile"):
        if rng.random() < 0.1:
            argv += [option, rng.choice(["0xffff", "sm_90"] + OPERANDS)]
    if any(f.startswith("mma") for f in forms):  # keep matrix runs short
        argv[argv.index("--count") + 1] = rng.choice(["0", "2"])
    return argv


@pytest.fixture(scope="module")
def vector_lines() -> list[str]:
    lines = []
    for instr, count, profile in (
        ("fma.rn.f32", 30, "spec"),
        ("add.rn.f32", 300, "spec"),
        ("ex2.approx.ftz.f32", 40, "spec"),
        ("add.rn.f16x2", 30, "sm_90"),
        ("shfl.sync.down.b32", 3, "spec"),
        ("setp.lt.f32", 10, "spec"),
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, "spec"),
    ):
        lines += jsonl_bytes(instr, count, 1, profile).decode().splitlines()
    return lines


JSON_VALUES = [
    None,
    True,
    0,
    -1,
    1.5,
    1e400,
    "",
    "0x",
    "0x3F800000",
    "0X3f800000",
    "0x" + "f" * 5000,
    [],
    {},
    [[[]]],
    {"kind": "interval"},
    {"kind": "any-nan", "format": "f32"},
    {"interval": ["0x0", "0x1"]},
    {"any_nan": True},
    ["0x1"] * 32,
    "\u0000\n",
]


def upper_hex(line: str) -> str:
    return re.sub(r'"0x([0-9a-f]+)"', lambda m: f'"0x{m.group(1).upper()}"', line)


def json_mutate(rng: random.Random, obj):
    """Replace one value somewhere in ``obj`` by a strange one."""
    if isinstance(obj, dict) and obj and rng.random() < 0.8:
        key = rng.choice(list(obj) + ["active", "allowed", "profile", "extra"])
        obj[key] = json_mutate(rng, obj[key]) if key in obj and rng.random() < 0.6 else rng.choice(JSON_VALUES)
        if rng.random() < 0.1:
            del obj[rng.choice(list(obj))]
        return obj
    if isinstance(obj, list) and obj and rng.random() < 0.8:
        i = rng.randrange(len(obj))
        obj[i] = json_mutate(rng, obj[i])
        if rng.random() < 0.2:
            obj.append(rng.choice(JSON_VALUES))
        return obj
    return rng.choice(JSON_VALUES)


def check_case(rng: random.Random, tmp_path: Path, vector_lines: list[str]) -> tuple[list[str], bytes]:
    lines = rng.sample(vector_lines, rng.randrange(1, 8))
    for i in range(len(lines)):
        r = rng.random()
        if r < 0.1:
            lines[i] = json.dumps(json_mutate(rng, json.loads(lines[i])))
        elif r < 0.15:
            lines[i] = upper_hex(lines[i])
        elif r < 0.25:
            lines[i] = mutate(rng, lines[i], rng.choice([1, 2, 4]))
        elif r < 0.27:
            lines[i] = "[" * rng.choice([63, 65, 1000, 100_000]) + "]" * rng.choice([0, 65])
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + rng.choice([b"", b"\n", b"\n\n", b"\xff\xfe", b"\r\n"])
    argv = ["check-vectors"]
    for option, values in (("--json", None), ("--profile", ["spec", "sm_90"]), ("--max-mismatches", ["0", "1", "1", "-1", BIG])):
        if rng.random() < 0.15:
            argv += [option] if values is None else [option, rng.choice(values)]
    if rng.random() < 0.15:
        return argv + ["-"], data
    path = tmp_path / "v.jsonl"
    path.write_bytes(data)
    return argv + [str(path)], b""


def tf_case(rng: random.Random, tmp_path: Path) -> list[str]:
    from ptxspec.conformance.vectors import encode_testfloat

    text = encode_testfloat("add.rn.f32", 20, rng.randrange(4)).decode()
    lines = [mutate(rng, line, rng.choice([1, 3])) if rng.random() < 0.05 else line for line in text.splitlines()]
    path = tmp_path / "v.tf"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    form = rng.choice(["fma.rn.f32", "add.f32", "frob", BIG]) if rng.random() < 0.2 else "add.rn.f32"
    return ["check-vectors", "--testfloat", form, str(path)]


def random_run(rng: random.Random, folder: Path, vector_lines: list[str], kind: int) -> None:
    """One random command line of ``kind`` (eval, vectors, check-vectors, check-vectors
    --testfloat), run and judged."""
    stdin = b""
    if kind == 0:
        argv = eval_case(rng, folder)
    elif kind == 1:
        argv = vectors_case(rng, folder)
    elif kind == 2:
        argv, stdin = check_case(rng, folder, vector_lines)
    else:
        argv = tf_case(rng, folder)
    code, out, err = run(argv, stdin)
    assert_answer(code, out, err, (str(folder), "<stdin>"), (0, 1) if argv[0] == "check-vectors" else (0,))


def _seeded(n: int, seed: int, tmp_path: Path, vector_lines: list[str]) -> None:
    rng = random.Random(seed)
    for i in range(n):
        random_run(rng, tmp_path, vector_lines, i % 4)


def test_seeded_mutations(tmp_path, vector_lines):
    _seeded(40, 0, tmp_path, vector_lines)


@pytest.mark.heavy
@pytest.mark.parametrize("seed", range(1, 9))
def test_seeded_mutations_heavy(tmp_path, vector_lines, seed):
    _seeded(400, seed, tmp_path, vector_lines)


# ---------------------------------------------------------------------------------------------
# Hypothesis: instruction texts, operands, vector lines, argument lists
# ---------------------------------------------------------------------------------------------

text = st.text(st.sampled_from(CHARS) | st.characters(codec="utf-8"), max_size=40)
operand = st.sampled_from(OPERANDS) | text | st.integers(-(10**50), 10**50).map(str) | st.integers(0, 2**70).map(hex)
fuzz = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@fuzz
@given(
    instr=st.sampled_from(FORMS) | text | st.tuples(st.sampled_from(FORMS), text).map("".join),
    operands=st.lists(operand, max_size=5),
    options=st.lists(st.sampled_from([["--json"], ["--profile", "sm_90"], ["--mask", "0xffff"], ["--active", BIG], ["--frob"]]), max_size=2),
)
def test_eval_anything(instr, operands, options):
    code, out, err = run(["eval", *sum(options, []), instr, *operands])
    assert_answer(code, out, err, ())


@fuzz
@given(
    instrs=st.lists(st.sampled_from(FORMS[:-2]) | text, min_size=1, max_size=2),
    count=st.integers(-5, 40) | st.sampled_from([2**32 + 1, 10**30]),
    seed=st.integers(-3, 10**30),
    fmt=st.sampled_from(["jsonl", "testfloat", "npz"]),
)
def test_vectors_anything(tmp_path_factory, instrs, count, seed, fmt):
    out_path = tmp_path_factory.mktemp("v") / "v.out"
    code, out, err = run(["vectors", *instrs, "--count", str(count), "--seed", str(seed), "--format", fmt, "-o", str(out_path)])
    assert_answer(code, out, err, ())


@fuzz
@given(data=st.data())
def test_check_vectors_any_line(tmp_path_factory, vector_lines, data):
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    base = json.loads(data.draw(st.sampled_from(vector_lines)))
    obj = json_mutate(rng, base) if data.draw(st.booleans()) else base
    line = json.dumps(obj) if data.draw(st.booleans()) else data.draw(st.sampled_from(vector_lines)) + data.draw(text)
    path = tmp_path_factory.mktemp("c") / "v.jsonl"
    path.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n")
    code, out, err = run(["check-vectors", str(path)])
    assert_answer(code, out, err, (str(path),), (0, 1))


@pytest.mark.heavy
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_command_anything_heavy(tmp_path_factory, vector_lines, data):
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    random_run(rng, tmp_path_factory.mktemp("h"), vector_lines, data.draw(st.integers(0, 3)))
