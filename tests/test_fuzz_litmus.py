"""Fuzzing ``ptxspec litmus``: whatever the file holds, a verdict or one located error line, exit 2.

Each case runs the command in-process, as the console script does (``conformance.cli.main``), on a
mutant of a real litmus test: the manual's examples in tests/litmus/manual/ and, when present, the
Dat3M corpus in ../shared/litmus/dat3m/ (read in place). A mutant is made by a seeded sequence of
byte flips, truncations, duplications, deletions and insertions of huge numbers, odd tokens,
control characters, bytes that are not UTF-8 and deep nesting; :func:`mutant` rebuilds any of them
from its source and seed. Hypothesis adds generated text.

For every case the run must (see :func:`assert_sound_run`):

* end within a wall-clock guard (:data:`GUARD_S`, far above ``--timeout``) -- no hang;
* exit 0 with herd's verdict on stdout, or exit 2 with exactly one error line on stderr,
  ``ptxspec: error: FILE:LINE:COL: ...`` (or ``FILE: ...``), printable, never a traceback and never
  an "internal error".

The large part is ``heavy`` (tests/conftest.py samples it); ``PTXSPEC_FUZZ_MUTANTS`` sets how many
mutants each heavy case checks (default 3), so ``PTXSPEC_HEAVY=all PTXSPEC_FUZZ_MUTANTS=50`` is a
long fuzzing run.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxspec.conformance import cli as cli_module
from ptxspec.conformance import litmus_cli
from ptxspec.conformance.litmus_cli import litmus_command
from ptxspec.spec.errors import printable

MANUAL = Path(__file__).resolve().parent / "litmus" / "manual"
CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m"))
SOURCES = sorted(MANUAL.glob("*.litmus")) + (sorted(CORPUS.rglob("*.litmus")) if CORPUS.is_dir() else [])
TIMEOUT_S = 2
"""``--timeout`` of every run (seconds per engine)."""
UNROLL = 2
GUARD_S = 30
"""Wall-clock limit of one run: two engines' timeouts, parsing and lowering, and a loaded machine."""
MUTANTS_PER_CASE = int(os.environ.get("PTXSPEC_FUZZ_MUTANTS", "3"))
HEAVY_CASES = 40


# ---- running the command ---------------------------------------------------------------------------------


class Hang(BaseException):
    """The wall-clock guard fired (a BaseException, so that no ``except Exception`` swallows it)."""


@contextlib.contextmanager
def guard(seconds: float):
    """Raise :class:`Hang` in the running code after ``seconds`` of wall-clock time."""

    def fire(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


HANG = -1
"""The exit status :func:`run_litmus` gives when the guard fired."""


def run_litmus(*args: str, guard_s: float = GUARD_S) -> tuple[int, str, str, float]:
    """``ptxspec litmus ARGS`` in-process: exit status (:data:`HANG` when the guard fired), stdout,
    stderr, seconds taken."""
    if "litmus" not in cli_module.cli.commands:  # the console script registers it; make sure
        cli_module.cli.add_command(litmus_command)
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), guard(guard_s):
        try:
            cli_module.main(["litmus", *map(str, args)])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        except Hang:
            code = HANG
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


def check_file(path: Path) -> tuple[int, str, str, float]:
    return run_litmus("--timeout", TIMEOUT_S, "--unroll", UNROLL, path)


ERROR_LINE = re.compile(r"ptxspec: error: (?P<where>.+?)(?::(?P<line>\d+):(?P<column>\d+))?: (?P<message>.+)")
"""One error line: the file, its line and column when the problem has a place in the text, the message."""


def assert_sound_run(result: tuple[int, str, str, float], path: Path, what: str) -> None:
    """A verdict (exit 0) or exactly one located, printable error line naming ``path`` (exit 2)."""
    code, out, err, seconds = result
    assert code != HANG, f"{what}: no answer within {GUARD_S} s"
    assert "Traceback" not in out + err, f"{what}: a traceback\n{err[-2000:]}"
    assert code in (0, 2), f"{what}: exit {code}\n{err[-2000:]}"
    if code == 0:
        assert out.startswith("Test ") and "\nObservation " in out and not err, f"{what}: no verdict\n{out}\n{err}"
        return
    lines = err.splitlines()
    assert len(lines) == 1, f"{what}: expected one error line, got {len(lines)}\n{err[:2000]}"
    (line,) = lines
    assert line.isprintable(), f"{what}: unprintable error line {line!r}"
    m = ERROR_LINE.fullmatch(line)
    assert m and m["where"] == printable(str(path)), f"{what}: not 'ptxspec: error: FILE[:LINE:COL]: ...'\n{line}"
    assert "internal error" not in line, f"{what}: {line}"


# ---- mutations -------------------------------------------------------------------------------------------

BIG_NUMBERS = (
    "9" * 5000,
    "0x" + "f" * 5000,
    "-" + "1" * 4400,
    "18446744073709551616",
    "-9223372036854775809",
    "0x10000000000000000",
    "99999999999999999999",
    "0x",
    "-0",
    "+1",
)
ODD_TOKENS = (
    "(*",
    "*)",
    '"',
    "//",
    "~",
    "!",
    "/\\",
    "\\/",
    "==",
    "!=",
    "::",
    "P99:",
    "0x1:",
    "1:",
    "P0:r0",
    "r0",
    "x",
    "&x",
    "[x]",
    "{",
    "}",
    ";",
    "|",
    ",",
    ":",
    "=",
    "@",
    "goto LC00",
    "LC00:",
    "bne r0, 0, LC00",
    "exists",
    "~exists",
    "forall",
    "locations [x;]",
    "filter",
    "true",
    "false",
    "atom.cas.gpu r0, x, 0, 1",
    "bar.cta.sync 0",
    "fence.sc.sys",
    "fence.proxy.alias",
    "membar.gl",
    "ld.acquire.gpu",
    "st.release.sys",
    "red.add",
    "@ generic aliases",
    "cta 0,gpu 0",
    "cluster 1",
    "PTX",
    "%r",
    "r" + "1" * 30,
    "P" + "9" * 30,
)
CONTROL = tuple(bytes([c]) for c in (*range(32), 127)) + (b"\x1b[31m", b"\r\n", "\u2028".encode(), "\u202e".encode(), "\x85".encode(), "\ufeff".encode())
NOT_UTF8 = (b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xc0\xaf", b"\xe2\x82")
NESTING = (b"(" * 150, b"~" * 150, b"~(" * 120, b")" * 50)


def _flip(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return data, "flip (empty)"
    at = rng.randrange(len(data))
    bit = 1 << rng.randrange(8)
    return data[:at] + bytes([data[at] ^ bit]) + data[at + 1 :], f"flip bit {bit:#x} at {at}"


def _truncate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    return data[:at], f"truncate at {at}"


def _duplicate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    start = rng.randrange(len(data) + 1)
    piece = data[start : start + rng.randrange(1, 200)]
    at = rng.randrange(len(data) + 1)
    copies = rng.randrange(1, 4)
    return data[:at] + piece * copies + data[at:], f"duplicate {len(piece)} bytes x{copies} at {at}"


def _delete(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    n = rng.randrange(1, 40)
    return data[:at] + data[at + n :], f"delete {n} bytes at {at}"


def _inserter(name: str, pieces: tuple[bytes | str, ...]):
    def insert(rng: random.Random, data: bytes) -> tuple[bytes, str]:
        piece = rng.choice(pieces)
        piece = piece.encode() if isinstance(piece, str) else piece
        at = rng.randrange(len(data) + 1)
        return data[:at] + piece + data[at:], f"insert {name} {piece[:12]!r} at {at}"

    return insert


KINDRED = (
    ("weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile"),
    ("cta", "cluster", "gpu", "sys"),
    ("add", "exch", "cas", "inc", "dec", "min", "max", "and", "or"),
    ("0", "1", "2", "-1"),
    ("exists", "forall", "~exists"),
    ("==", "!="),
    ("/\\", "\\/"),
    ("beq", "bne", "blt", "bge"),
    ("x", "y", "z"),
    ("r0", "r1", "r2"),
    ("ld", "st", "atom", "red"),
)
"""Words that can stand for one another: swapping them keeps most mutants parseable, so that they
reach the engines."""


def _swap_word(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    group = rng.choice(KINDRED)
    old, new = rng.choice(group).encode(), rng.choice(group).encode()
    places = [m.start() for m in re.finditer(rb"(?<![A-Za-z0-9_])" + re.escape(old) + rb"(?![A-Za-z0-9_])", data)]
    if not places:
        return data, f"swap {old!r} (absent)"
    at = rng.choice(places)
    return data[:at] + new + data[at + len(old) :], f"swap {old!r} -> {new!r} at {at}"


def _repeat_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data, "repeat line (empty)"
    k = rng.randrange(len(lines))
    copies = rng.randrange(1, 4)
    return b"".join(lines[: k + 1] + [lines[k]] * copies + lines[k + 1 :]), f"repeat line {k + 1} x{copies}"


BREAKING = (
    _flip,
    _truncate,
    _duplicate,
    _delete,
    _inserter("number", BIG_NUMBERS),
    _inserter("token", ODD_TOKENS),
    _inserter("control", CONTROL),
    _inserter("non-UTF-8", NOT_UTF8),
    _inserter("nesting", NESTING),
)
KEEPING = (_swap_word, _swap_word, _swap_word, _repeat_line)
"""Mutations that mostly break the syntax, and those that mostly keep it (half the mutants)."""


def mutant(source: Path, seed: int) -> tuple[bytes, list[str]]:
    """The mutant ``seed`` of ``source`` (the same bytes on every machine) and what was done."""
    rng = random.Random(f"{source.name}:{seed}")
    data = source.read_bytes()
    done = []
    mutations = KEEPING if rng.random() < 0.5 else BREAKING + KEEPING
    for _ in range(rng.randrange(1, 4)):
        data, what = rng.choice(mutations)(rng, data)
        done.append(what)
    return data, done


def check_mutant(tmp: Path, source: Path, seed: int) -> None:
    data, done = mutant(source, seed)
    path = tmp / f"{source.stem}.{seed}.litmus"
    path.write_bytes(data)
    assert_sound_run(check_file(path), path, f"mutant {seed} of {source} ({'; '.join(done)})")


# ---- the cases ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", sorted(MANUAL.glob("*.litmus")), ids=lambda p: p.stem)
def test_manual_mutant(source, tmp_path):
    check_mutant(tmp_path, source, 0)


@pytest.mark.heavy
@pytest.mark.parametrize("case", range(HEAVY_CASES))
def test_mutants(case, tmp_path):
    rng = random.Random(case)
    for k in range(MUTANTS_PER_CASE):
        check_mutant(tmp_path, rng.choice(SOURCES), case * 1000 + k)


_PIECES = (
    "PTX t\n",
    "{",
    "}",
    ";",
    "|",
    ",",
    ":",
    "=",
    "@",
    "&",
    "(",
    ")",
    "[",
    "]",
    ".",
    "~",
    "-",
    '"',
    "\n",
    " ",
    "/\\",
    "\\/",
    "==",
    "!=",
    "(*",
    "*)",
    "P0",
    "P1",
    "0:",
    "r0",
    "x",
    "y",
    "LC00",
    "exists",
    "forall",
    "cta",
    "gpu",
    "0",
    "1",
    "0x1",
    "9" * 30,
    "ld",
    "st",
    "atom",
    ".relaxed",
    ".gpu",
    ".cas",
    ".add",
    "bar.cta.sync",
    "fence.sc.gpu",
    "goto",
    "bne",
    "aliases",
    "surface",
    "\x1b",
    "\r",
    "\x00",
)
_HEADER = "PTX gen\n{ x=0; y=0; P0:r0=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n"


@settings(max_examples=int(os.environ.get("PTXSPEC_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=40), header=st.booleans())
def test_generated_text(body, header, tmp_path_factory):
    """Text built from litmus pieces and arbitrary characters, with or without a valid head."""
    path = tmp_path_factory.mktemp("generated") / "gen.litmus"
    path.write_text((_HEADER if header else "") + "".join(body), encoding="utf-8", errors="surrogatepass")
    assert_sound_run(check_file(path), path, f"generated text {path.read_bytes()[:300]!r}")


@settings(max_examples=int(os.environ.get("PTXSPEC_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=200), at=st.integers(0, 10_000), source=st.sampled_from(SOURCES))
def test_generated_bytes_in_a_test(data, at, source, tmp_path_factory):
    """Arbitrary bytes spliced into a real test."""
    text = source.read_bytes()
    at %= len(text) + 1
    path = tmp_path_factory.mktemp("spliced") / f"{source.stem}.litmus"
    path.write_bytes(text[:at] + data + text[at:])
    assert_sound_run(check_file(path), path, f"{data!r} at {at} of {source}")


# ---- the faults fuzzing found, one test each --------------------------------------------------------------

HEAD = "PTX t\n{ x=0; P0:r0=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu r0, x ;\n"
GOOD = HEAD + "exists (P0:r0 == 0)\n"


def _one_error(tmp_path: Path, data: bytes, name: str = "t.litmus") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    result = check_file(path)
    assert_sound_run(result, path, name)
    assert result[0] == 2
    return result[2].strip()


FINDINGS = {
    "huge init value": (GOOD.replace("x=0", "x=" + "1" * 5000), ":2:5:", "does not fit in 64 bits"),
    "hex thread in init": (GOOD.replace("P0:r0=0", "0x1:r0=0"), ":2:8:", "a thread index is decimal"),
    "hex thread in condition": (GOOD.replace("P0:r0 == 0", "0x0:r0 == 0"), ":5:9:", "a thread index is decimal"),
    "huge constant": (GOOD.replace("P0:r0 == 0", "P0:r0 == " + "9" * 5000), ":5:18:", "does not fit in 64 bits"),
    "deep parentheses": (HEAD + "exists " + "(" * 5000 + "P0:r0 == 0" + ")" * 5000, ":5:108:", "nests more than 100 deep"),
    "long negation chain": (HEAD + "exists " + "~" * 100_000 + "P0:r0 == 0", ":5:108:", "nests more than 100 deep"),
}


@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_fuzz_finding_is_one_located_line(tmp_path, finding):
    text, where, fragment = FINDINGS[finding]
    line = _one_error(tmp_path, text.encode())
    assert f"t.litmus{where} " in line and fragment in line, line


def test_not_utf8_is_located_at_the_byte(tmp_path):
    data = GOOD.replace(" ld.relaxed", " ld.relaxed.gpu r0, x ; (* é *)\n ld.relaxed").encode()
    data = data.replace(b"\xc3\xa9", b"\xc3\xa9 \xff")
    line = _one_error(tmp_path, data)
    assert re.search(r"t\.litmus:4:30: the file is not UTF-8: byte 0xff", line), line


def test_control_characters_are_escaped(tmp_path):
    line = _one_error(tmp_path, GOOD.replace(" ld.relaxed.gpu r0", " ld.relaxed.gpu (* \x1b[2J\r *) r0 r0").encode(), name="a\x07b.litmus")
    assert line.isprintable() and "a\\x07b.litmus:4:" in line, line


@pytest.mark.parametrize("value,fits", [("nan", False), ("-inf", False), ("0", False), ("inf", True), ("0.5", True)])
def test_timeout_option(tmp_path, value, fits):
    path = tmp_path / "t.litmus"
    path.write_text(GOOD)
    code, out, err, _ = run_litmus("--timeout", value, path)
    if fits:
        assert code == 0 and "Observation t Always" in out, err
    else:
        assert code == 2 and len(err.splitlines()) == 1 and "'--timeout'" in err and "Traceback" not in err, err


def test_inf_timeout_means_no_limit(monkeypatch, tmp_path):
    seen = []
    check_file = litmus_cli.check_file
    monkeypatch.setattr(litmus_cli, "check_file", lambda path, **options: seen.append(options["timeout_s"]) or check_file(path, **options))
    path = tmp_path / "t.litmus"
    path.write_text(GOOD)
    assert run_litmus("--timeout", "inf", path)[0] == 0
    assert seen == [None]


@pytest.mark.parametrize(
    "failure,fragment",
    [
        (RecursionError("maximum recursion depth exceeded"), "nests too deeply"),
        (MemoryError(), "out of memory"),
        (PermissionError(13, "Permission denied"), "cannot read the file: Permission denied"),
        (IsADirectoryError(21, "Is a directory"), "cannot read the file: Is a directory"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "cannot decode"),
        (ValueError("a bug"), "internal error"),
    ],
    ids=["recursion", "memory", "permission", "directory", "decode", "bug"],
)
def test_one_failing_file_does_not_stop_the_others(monkeypatch, tmp_path, failure, fragment):
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.litmus").write_text(GOOD.replace("PTX t", f"PTX {name}"))
    check_file = litmus_cli.check_file

    def failing_check_file(path, **options):
        if path.name == "b.litmus":
            raise failure
        return check_file(path, **options)

    monkeypatch.setattr(litmus_cli, "check_file", failing_check_file)
    code, out, err, _ = run_litmus("--timeout", TIMEOUT_S, tmp_path)
    assert code == 2
    assert "Test a Allowed" in out and "Test c Allowed" in out
    (line,) = err.splitlines()
    assert line.startswith(f"ptxspec: error: {tmp_path / 'b.litmus'}: ") and fragment in line, line


def test_the_guard_stops_a_hang(monkeypatch, tmp_path):
    monkeypatch.setattr(litmus_cli, "check_file", lambda path, **options: time.sleep(20))
    path = tmp_path / "t.litmus"
    path.write_text(GOOD)
    code, _, _, seconds = run_litmus(path, guard_s=0.5)
    assert code == HANG and seconds < 5


def test_real_bad_files_in_a_directory(tmp_path):
    bad = {
        "big.litmus": GOOD.replace("x=0", "x=" + "1" * 5000).encode(),
        "hex.litmus": GOOD.replace("P0:r0=0", "0x1:r0=0").encode(),
        "latin1.litmus": GOOD.replace("x=0", "x=\xe90").encode("latin-1"),
        "deep.litmus": (HEAD + "exists " + "~(" * 3000 + "P0:r0 == 0" + ")" * 3000).encode(),
    }
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.litmus").write_text(GOOD)
    (tmp_path / "folder.litmus").mkdir()
    code, out, err, _ = run_litmus("--timeout", TIMEOUT_S, tmp_path)
    assert code == 2 and "Test t Allowed" in out
    lines = err.splitlines()
    assert sorted(re.match(rf"ptxspec: error: {re.escape(str(tmp_path))}/(\S+?):\d+:\d+: ", line).group(1) for line in lines) == sorted(bad), err


@pytest.mark.heavy
def test_megabyte_condition_through_the_command(tmp_path):
    path = tmp_path / "big.litmus"
    path.write_text(HEAD + "(* " + "padding " * 20_000 + "*)\nexists (" + " /\\\n ".join(["P0:r0 == 0"] * 60_000) + ")\n")
    assert path.stat().st_size > 1_000_000
    result = check_file(path)
    assert_sound_run(result, path, "a 1 MB condition")
    assert result[3] < 20, f"{result[3]:.1f} s"
