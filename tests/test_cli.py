"""The ``ptxspec`` console script, run as a user runs it: in a subprocess.

Expected bit patterns come from the host's IEEE arithmetic through :mod:`struct` and numpy
(exactly representable sums, or numpy's float32/float64 addition, which rounds to nearest even),
never from ptxspec itself.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxspec import PTX_ISA_VERSION, __version__
from ptxspec.conformance.cli import cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _script() -> list[str]:
    """The installed console script: beside this interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name("ptxspec")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ptxspec")
    if found is None:  # pragma: no cover - an install without the script is itself a failure
        pytest.fail("the ptxspec console script is not installed (pip install -e .)")
    return [found]


SCRIPT = _script()


def ptxspec(*args: str, stdin: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([*SCRIPT, *args], capture_output=True, text=True, input=stdin, cwd=cwd, timeout=120)


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def hex32(bits: int) -> str:
    return f"0x{bits:08x}"


def hex64(bits: int) -> str:
    return f"0x{bits:016x}"


def np_f32_bits(x: np.float32) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def np_f64_bits(x: np.float64) -> int:
    return int(np.array([x], dtype=np.float64).view(np.uint64)[0])


# ---------------------------------------------------------------------------------------------
# --version and --help
# ---------------------------------------------------------------------------------------------


def test_version():
    done = ptxspec("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ptxspec {__version__} (PTX ISA {PTX_ISA_VERSION})"


def test_module_entry_point_matches_script():
    done = subprocess.run([sys.executable, "-m", "ptxspec", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ptxspec("--version").stdout


def test_top_level_help_lists_every_subcommand():
    """Each command with its whole summary (none cut with '...', at 80 columns)."""
    done = ptxspec("--help")  # the subprocess has no terminal: click formats at 80 columns
    assert done.returncode == 0, done.stderr
    for name in cli.commands:
        line = re.search(rf"^\s+{re.escape(name)}\b.*$", done.stdout, re.M)
        assert line, f"{name} missing from --help"
        assert not line.group().endswith("...") and line.group().endswith("."), line.group()


SUBCOMMANDS = sorted(cli.commands)


@pytest.mark.parametrize("name", SUBCOMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_has_help(name, flag):
    done = ptxspec(name, flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: ptxspec {name}")
    assert done.stderr == ""


def test_there_are_subcommands_to_check():
    assert {"eval", "forms"} <= set(SUBCOMMANDS)


# ---------------------------------------------------------------------------------------------
# eval: hex output
# ---------------------------------------------------------------------------------------------

# (instruction, operands, expected destination line) with expectations from struct/numpy.
HEX_CASES = [
    ("add.rn.f32", (hex32(f32(1.0)), hex32(f32(2.0))), hex32(f32(3.0))),
    ("add.f32", (hex32(f32(0.5)), hex32(f32(0.25))), hex32(f32(0.75))),
    ("add.rn.f32", (hex32(f32(-1.5)), hex32(f32(1.5))), hex32(f32(0.0))),
    # numpy's float32 addition rounds to nearest even: 1 + 2^-24 is a tie that goes to 1.0.
    ("add.rn.f32", (hex32(f32(1.0)), hex32(f32(2.0**-24))), hex32(np_f32_bits(np.float32(1.0) + np.float32(2.0**-24)))),
    ("add.rn.f32", (hex32(f32(1.0)), hex32(f32(3 * 2.0**-25))), hex32(np_f32_bits(np.float32(1.0) + np.float32(3 * 2.0**-25)))),
    ("add.f64", (hex64(f64(1.5)), hex64(f64(2.25))), hex64(f64(3.75))),
    ("add.rn.f64", (hex64(f64(0.1)), hex64(f64(0.2))), hex64(np_f64_bits(np.float64(0.1) + np.float64(0.2)))),
    # Operand syntaxes: PTX hex float literals (§4.5.2), decimal, binary.
    ("add.rn.f32", ("0f3F800000", "0f40000000"), hex32(f32(3.0))),
    ("add.rn.f64", ("0d3FF0000000000000", "0d4000000000000000"), hex64(f64(3.0))),
    ("add.rn.f32", (str(f32(1.0)), str(f32(2.0))), hex32(f32(3.0))),
    ("add.rn.f32", (bin(f32(1.0)), bin(f32(2.0))), hex32(f32(3.0))),
    # .sat clamps to [0, 1] (§9.7.3.3).
    ("add.rn.sat.f32", (hex32(f32(1.0)), hex32(f32(2.0))), hex32(f32(1.0))),
    ("add.rn.sat.f32", (hex32(f32(-1.0)), hex32(f32(-2.0))), hex32(f32(0.0))),
    # .rz truncates: the largest finite f32 doubled stays the largest finite (no overflow to inf).
    ("add.rz.f32", (hex32(f32(3.4028234663852886e38)),) * 2, hex32(f32(3.4028234663852886e38))),
    ("add.rn.f32", (hex32(f32(3.4028234663852886e38)),) * 2, hex32(f32(math.inf))),
    # A negative decimal is its two's complement at the operand's width (-1 of .s32: 0xffffffff).
    ("add.s32", ("-1", "1"), "0x00000000"),
    ("add.s16", ("-32768", "-1"), "0x7fff"),
    ("add.s64", ("-5", "3"), "0xfffffffffffffffe"),
]


@pytest.mark.parametrize("instruction, operands, expected", HEX_CASES)
def test_eval_prints_hex(instruction, operands, expected):
    done = ptxspec("eval", instruction, *operands)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected + "\n"
    assert done.stderr == ""


def test_eval_f32x2_packs_two_lanes():
    a = (f32(1.0) << 32) | f32(10.0)
    b = (f32(2.0) << 32) | f32(20.0)
    done = ptxspec("eval", "add.rn.f32x2", hex64(a), hex64(b))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == hex64((f32(3.0) << 32) | f32(30.0))


# ---------------------------------------------------------------------------------------------
# eval --json and --profile
# ---------------------------------------------------------------------------------------------


def test_json_schema():
    done = ptxspec("eval", "--json", "add.rn.f32", hex32(f32(1.0)), hex32(f32(2.0)))
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)
    assert obj == {
        "instr": "add.rn.f32",
        "inputs": [hex32(f32(1.0)), hex32(f32(2.0))],
        "outputs": [hex32(f32(3.0))],
        "profile": "spec",
    }


def test_json_normalises_instruction_and_operands():
    done = ptxspec("eval", "--json", "--profile", "sm_90", "add.f64", "0d3FF0000000000000", "1")
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)
    assert obj["instr"] == "add.f64"
    assert obj["inputs"] == [hex64(f64(1.0)), hex64(1)]
    assert obj["profile"] == "sm_90"
    assert obj["outputs"] == [hex64(f64(1.0))]  # 1.0 + the smallest subnormal rounds to 1.0


def _is_f32_nan(bits: int) -> bool:
    return math.isnan(struct.unpack("<f", struct.pack("<I", bits))[0])


def test_spec_profile_leaves_an_f32_nan_open():
    """§9.7.3: "single-precision instructions return an unspecified NaN"."""
    done = ptxspec("eval", "--json", "add.rn.f32", hex32(0x7FC00001), hex32(f32(1.0)))
    assert done.returncode == 0, done.stderr
    (out,) = json.loads(done.stdout)["outputs"]
    assert isinstance(out, dict) and out["kind"] == "any-nan" and out["format"] == "f32"
    text = ptxspec("eval", "add.rn.f32", hex32(0x7FC00001), hex32(f32(1.0)))
    assert text.returncode == 0 and not text.stdout.startswith("0x")
    assert "NaN" in text.stdout


@pytest.mark.parametrize("profile_flag", [[], ["--profile", "spec"], ["--profile", "sm_90"]])
def test_profiles_agree_where_the_manual_fixes_the_result(profile_flag):
    done = ptxspec("eval", *profile_flag, "add.rn.f32", hex32(f32(1.0)), hex32(f32(2.0)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == hex32(f32(3.0))


def test_sm90_profile_pins_one_nan():
    done = ptxspec("eval", "--profile", "sm_90", "add.rn.f32", hex32(0x7FC00001), hex32(f32(1.0)))
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert re.fullmatch(r"0x[0-9a-f]{8}", line), line
    assert _is_f32_nan(int(line, 16))


def test_unknown_profile_is_rejected():
    done = ptxspec("eval", "--profile", "sm_1000", "add.f32", "0", "0")
    _assert_clean_error(done, "--profile")


# ---------------------------------------------------------------------------------------------
# eval --file
# ---------------------------------------------------------------------------------------------


def test_file_mode(tmp_path):
    path = tmp_path / "batch.txt"
    path.write_text(
        f"# a comment line\nadd.rn.f32 {hex32(f32(1.0))} {hex32(f32(2.0))}   # trailing comment\n\nadd.f64, {hex64(f64(1.5))}, {hex64(f64(2.25))}\n"
    )
    done = ptxspec("eval", "--file", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"add.rn.f32 {hex32(f32(1.0))} {hex32(f32(2.0))} -> {hex32(f32(3.0))}",
        f"add.f64 {hex64(f64(1.5))} {hex64(f64(2.25))} -> {hex64(f64(3.75))}",
    ]
    as_json = ptxspec("eval", "--json", "--file", str(path))
    assert as_json.returncode == 0, as_json.stderr
    objects = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [o["outputs"] for o in objects] == [[hex32(f32(3.0))], [hex64(f64(3.75))]]
    assert [o["where"] for o in objects] == [f"{path}:2", f"{path}:4"]
    assert all(set(o) == {"instr", "inputs", "outputs", "profile", "where"} for o in objects)


def test_file_from_stdin():
    done = ptxspec("eval", "--file", "-", stdin=f"add.f32 {hex32(f32(2.0))} {hex32(f32(2.0))}\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("-> " + hex32(f32(4.0)))


def _bundled_examples() -> list[Path]:
    return sorted(EXAMPLES.glob("*.txt"))


def test_there_is_a_bundled_example():
    assert _bundled_examples(), "examples/*.txt is missing"


@pytest.mark.parametrize("path", _bundled_examples(), ids=lambda p: p.name)
def test_bundled_example_matches_its_stated_expectations(path):
    """Each example line may end in a comment ``... expect HEX [HEX...]`` (values worked out
    independently; see the file's header). Every such expectation must hold."""
    done = ptxspec("eval", "--file", str(path.relative_to(REPO)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    expectations = []
    for raw in path.read_text().splitlines():
        code = raw.split("#", 1)[0].strip()
        if not code:
            continue
        stated = re.search(r"#.*\bexpect\s+(.+)$", raw)
        expectations.append(stated.group(1).split() if stated else None)
    assert len(lines) == len(expectations)
    assert sum(e is not None for e in expectations) >= len(expectations) // 2, "most example lines should state their expected result"
    for line, expected in zip(lines, expectations):
        if expected is not None:
            assert line.split(" -> ")[1].split("; ") == expected, line


# ---------------------------------------------------------------------------------------------
# Bad inputs: exit 2, one located line on stderr, no traceback, nothing on stdout
# ---------------------------------------------------------------------------------------------


def _assert_clean_error(done: subprocess.CompletedProcess, *needles: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip("\n").splitlines()
    assert len(lines) == 1, done.stderr
    message = lines[0]
    assert message.startswith("ptxspec: error: ")
    for needle in needles:
        assert needle in message, message
    return message


BAD_COMMAND_LINES = [
    # (arguments, substrings the message must hold: the location, then what is wrong)
    (["eval", "frobnicate.f32", "0", "0"], ["<command line>, INSTRUCTION", "unknown opcode 'frobnicate'"]),
    (["eval", "add.rn.sat.f64", "0", "0"], ["<command line>, INSTRUCTION", ".sat", "§9.7.3.3"]),
    (["eval", "add.ftz.f64", "0", "0"], ["<command line>, INSTRUCTION", ".ftz", "§9.7.3.3"]),
    (["eval", "add.rn.rz.f32", "0", "0"], ["<command line>, INSTRUCTION", ".rz"]),
    (["eval", "add.rn.f16x8", "0", "0"], ["<command line>, INSTRUCTION", "f16x8"]),
    (["eval", "add.rn", "0", "0"], ["<command line>, INSTRUCTION", "missing type"]),
    (["eval", "add..f32", "0", "0"], ["<command line>, INSTRUCTION", "empty qualifier"]),
    (["eval", "add.rn.f32", "0"], ["<command line>, operand 2", "takes 2 source operand(s)", "got 1"]),
    (["eval", "add.rn.f32", "0", "0", "0"], ["<command line>, operand 3", "takes 2 source operand(s)", "got 3"]),
    (["eval", "add.rn.f32"], ["<command line>, operand 1", "got 0"]),
    (["eval", "add.rn.f32", "0x3f80000g", "0"], ["<command line>, operand 1", "'0x3f80000g' is not a bit pattern"]),
    (["eval", "add.rn.f32", "0", "1.5"], ["<command line>, operand 2", "'1.5'"]),
    (["eval", "add.rn.f32", "0", "0x"], ["<command line>, operand 2", "'0x'"]),
    (["eval", "add.rn.f32", "0", "0x-1"], ["<command line>, operand 2", "'0x-1'"]),
    (["eval", "add.rn.f32", "0", "\u0661"], ["<command line>, operand 2", "not a bit pattern"]),
    (["eval", "add.rn.f32", "0x100000000", "0"], ["<command line>, operand 1", "32 bits", "0x100000000 does not fit"]),
    (["eval", "add.rn.f64", "0", "0x10000000000000000"], ["<command line>, operand 2", "64 bits"]),
    (["eval"], ["<command line>", "missing INSTRUCTION"]),
    (["eval", "--bogus"], ["<command line>", "--bogus"]),
    (["eval", "add.s32", "--jsn", "1"], ["<command line>, operand 1", "neither an option of this command nor a bit pattern"]),
    (["eval", "add.s32", "-2147483649", "1"], ["<command line>, operand 1", "32 bits", "does not fit"]),
    (["eval", "add.s32", "-0x10", "1"], ["<command line>, operand 1", "'-0x10'"]),
    (["frobnicate"], ["<command line>", "frobnicate"]),
    (["forms", "frobnicate"], ["<command line>, OPCODE", "unknown opcode 'frobnicate'"]),
    # Operand templates (§9.7.9.4's vector mov): the shape, the sinks, the syntax, the values.
    (["eval", "mov.b32 d, {a, b, c}", "1", "2", "3"], ["<command line>, INSTRUCTION, character 12", "no form of mov.b32"]),
    (["eval", "mov.b16 d, {a, b, c, e}", "1", "2", "3", "4"], ["<command line>, INSTRUCTION", "two 8-bit elements, not four"]),
    (["eval", "mov.u64 d, {a, b}", "1", "2"], ["<command line>, INSTRUCTION, character 12", "takes a register"]),
    (["eval", "mov.b64 {_, _}, d", "1"], ["<command line>, INSTRUCTION, character 9", "sinks"]),
    (["eval", "mov.b32 d, {a, b", "1", "2"], ["<command line>, INSTRUCTION, character 17", "closed by '}'"]),
    (["eval", "add.rn.f32 d, a", "1", "2"], ["<command line>, INSTRUCTION, character 16", "takes 3 operand(s) (d, a, b)"]),
    (["eval", "mov.b32 d, {a, b}", "1"], ["<command line>, operand 2", "takes 2 source operand(s) (a.x, a.y), got 1"]),
    (["eval", "mov.b32 d, {a, b}", "0x10000", "1"], ["<command line>, operand 1", "16 bits"]),
]


@pytest.mark.parametrize("args, needles", BAD_COMMAND_LINES, ids=[" ".join(a) or "(none)" for a, _ in BAD_COMMAND_LINES])
def test_bad_command_line(args, needles):
    _assert_clean_error(ptxspec(*args), *needles)


GOOD = f"add.rn.f32 {hex32(f32(1.0))} {hex32(f32(2.0))}"


# ---------------------------------------------------------------------------------------------
# Operand templates: the vector mov of §9.7.9.4 by text
# ---------------------------------------------------------------------------------------------


def test_eval_vector_mov_pack_and_unpack():
    """Expected values from struct's little-endian packing (element x is the low one)."""
    packed = struct.unpack("<Q", struct.pack("<II", 0x1, 0x2))[0]
    done = ptxspec("eval", "mov.b64 d, {a, b}", "0x1", "0x2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [hex64(packed)]
    done = ptxspec("eval", "mov.b64 {a, b}, d", hex64(packed))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0x00000001", "0x00000002"]
    rgba = struct.unpack("<I", bytes([0x11, 0x22, 0x33, 0x44]))[0]
    done = ptxspec("eval", "--json", "mov.b32 {r,g,b,a},%r1", hex32(rgba))
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)
    assert obj["instr"] == "mov.b32 {d.x, d.y, d.z, d.w}, a"
    assert obj["outputs"] == ["0x11", "0x22", "0x33", "0x44"]


def test_file_with_operand_templates(tmp_path):
    x = f64(-1.5)
    lo, hi = struct.unpack("<II", struct.pack("<d", -1.5))
    path = tmp_path / "vec.txt"
    path.write_text(
        f"mov.b64 {{lo,hi}}, %x {hex64(x)}   # the manual's example\n"
        f"mov.b64 %x, {{lo, hi}}, {hex32(lo)}, {hex32(hi)}\n"
        f"mov.b64 {{%r1, _}}, %x {hex64(x)}\n"
        f"add.rn.f32 d, a, b {hex32(f32(1.0))} {hex32(f32(2.0))}\n"
        f"{GOOD}\n"
    )
    done = ptxspec("eval", "--file", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"mov.b64 {{d.x, d.y}}, a {hex64(x)} -> {hex32(lo)}; {hex32(hi)}",
        f"mov.b64 d, {{a.x, a.y}} {hex32(lo)} {hex32(hi)} -> {hex64(x)}",
        f"mov.b64 {{d.x, d.y}}, a {hex64(x)} -> {hex32(lo)}; {hex32(hi)}",
        f"add.rn.f32 d, a, b {hex32(f32(1.0))} {hex32(f32(2.0))} -> {hex32(f32(3.0))}",
        f"add.rn.f32 {hex32(f32(1.0))} {hex32(f32(2.0))} -> {hex32(f32(3.0))}",
    ]


@pytest.mark.parametrize(
    "line, column, needle",
    [
        ("mov.b32 d, {a, b, c} 1 2 3", 12, "no form of mov.b32"),
        ("  mov.b32 d, {a, b c} 1 2", 20, "unexpected 'c'"),
        ("mov.b64 d, {a, _} 1", 12, "sink"),
        ("mov.b32 d, {a, b} 1 0x10000", 21, "does not fit"),
        ("add.rn.f32 d, a, b 1", 22, "got 1"),
    ],
)
def test_bad_template_line_is_located(tmp_path, line, column, needle):
    path = tmp_path / "bad.txt"
    path.write_text(f"{GOOD}\n{line}\n")
    message = _assert_clean_error(ptxspec("eval", "--file", str(path)), needle)
    assert f"{path}:2:{column}:" in message


def test_forms_lists_the_vector_mov_templates():
    done = ptxspec("forms", "mov")
    assert done.returncode == 0, done.stderr
    assert "mov(.b16|.b32|.b64|.b128) {d.x, d.y}, a" in done.stdout
    assert "mov(.b16|.b32|.b64|.b128) d, {a.x, a.y, a.z, a.w}" in done.stdout


BAD_FILE_LINES = [
    # (second line of the file, column the message must name, substring of the message)
    ("frobnicate.f32 0 0", 1, "unknown opcode"),
    ("  add.rn.sat.f64 0 0", 3, ".sat"),
    ("add.rn.f32 0 0x1234567z", 14, "not a bit pattern"),
    ("add.rn.f32 0 0x100000000", 14, "does not fit"),
    ("add.rn.f32 0", 14, "got 1"),
    ("add.rn.f32 0 0 7", 16, "got 3"),
    ("add.rn.f32, 0, 0, 7  # trailing comment", 19, "got 3"),
]


@pytest.mark.parametrize("line, column, needle", BAD_FILE_LINES)
def test_bad_file_line_is_located(tmp_path, line, column, needle):
    path = tmp_path / "bad.txt"
    path.write_text(f"# header\n{line}\n{GOOD}\n")
    message = _assert_clean_error(ptxspec("eval", "--file", str(path)), needle)
    assert f"{path}:2:{column}:" in message


def test_bad_file_line_evaluates_nothing(tmp_path):
    """Every line is checked before any is evaluated: no half-printed output."""
    path = tmp_path / "bad.txt"
    path.write_text(f"{GOOD}\n{GOOD}\nadd.rn.f32 0\n")
    _assert_clean_error(ptxspec("eval", "--file", str(path)), f"{path}:3:")


@pytest.mark.parametrize(
    "content, needle",
    [(b"", "holds no instruction"), (b"# only a comment\n\n", "holds no instruction"), (b"add.f32 0 0\n\xff\xfe\n", ":2:1:")],
    ids=["empty", "comments-only", "not-utf8"],
)
def test_bad_file(tmp_path, content, needle):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    _assert_clean_error(ptxspec("eval", "--file", str(path)), str(path), needle)


def test_missing_file(tmp_path):
    _assert_clean_error(ptxspec("eval", "--file", str(tmp_path / "absent.txt")), "absent.txt")


def test_file_and_instruction_together_is_an_error(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text(GOOD + "\n")
    _assert_clean_error(ptxspec("eval", "--file", str(path), "add.f32", "0", "0"), "<command line>", "not both")


def test_a_warp_result_prints_as_a_labelled_table():
    """mma's destinations: one line per register where every lane holds the same value, else a
    table (a lane a row, a register a column); a one-encoding set prints as that encoding."""
    form = "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"
    same = ptxspec("eval", form, "0x3c003c00", "0x3c003c00", "0x3c003c00", "0", "0", "0", "0")
    assert same.returncode == 0 and same.stdout.splitlines() == [f"d.{i}: 0x41000000 in every lane" for i in range(4)]
    lanes = ",".join(str(i) for i in range(32))
    table = ptxspec("eval", form, "0x3c003c00", "0x3c003c00", "0x3c003c00", lanes, "0", "0", "0").stdout.splitlines()
    assert table[0].split() == ["lane", "d.0", "d.1", "d.2", "d.3"] and len(table) == 33
    assert table[1].split() == ["0", "0x41000000", "0x41000000", "0x41000000", "0x41000000"]
    assert table[2].split()[0] == "1" and table[2].split()[1].startswith("[")  # 8 + a tiny C: a set of encodings


def test_the_wgmma_example_of_the_docs_runs_as_printed():
    """docs/wgmma.rst's ``ptxspec eval --state`` session: wgmma from the command line, its shared
    memory from examples/wgmma/state.json, the output as the page shows it."""
    import shlex

    text = (REPO / "docs" / "wgmma.rst").read_text()
    block = text[text.index("   $ ptxspec eval --state examples/wgmma/state.json") :].split("\n\n")[0].splitlines()
    done = ptxspec(*shlex.split(block[0].strip()[2:])[1:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [line.strip() for line in block[1:]]


def test_matrix_view_places_each_element_as_the_manual_does():
    """``eval --matrix``: with A = B = 0, D = C; C's lane L, register i holds the manual's
    element (§9.7.14.5.14 m16n8k16 .f32 C/D: row groupID (+8 for c2, c3), column
    threadID_in_group * 2 + (i & 1)), so each D cell shows the value its lane and register put there."""
    lanes = [[0x40000000 | (lane << 4 | i) << 8 for lane in range(32)] for i in range(4)]  # distinct normal f32 values: D = C + 0 exactly
    done = ptxspec("eval", "--matrix", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", *["0"] * 6, *(",".join(str(v) for v in c) for c in lanes))
    assert done.returncode == 0, done.stderr
    rows = [line.split()[1:] for line in done.stdout.splitlines()[1:]]
    assert len(rows) == 16 and all(len(r) == 8 for r in rows)
    for lane in range(32):
        for i in range(4):
            row, col = lane // 4 + 8 * (i >= 2), (lane % 4) * 2 + (i & 1)
            assert int(rows[row][col], 16) == lanes[i][lane]
    bad = ptxspec("eval", "--matrix", "add.s32", "1", "2")
    assert bad.returncode == 2 and "--matrix shows the D matrix of mma" in bad.stderr


def test_a_scalar_eval_loads_one_chapter_and_not_numpy():
    """Start-up: ``ptxspec eval add.s32`` imports the integer chapter's semantics only, and neither
    numpy nor the state (bench/startup.py measures the time)."""
    code = (
        "import sys\n"
        "from ptxspec.conformance.cli import main\n"
        "sys.argv = ['ptxspec', 'eval', 'add.s32', '1', '2']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('ptxspec.semantics.'))\n"
        "print(loaded, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "0x00000003"
    assert (
        done.stdout.splitlines()[1]
        == "['ptxspec.semantics.instructions', 'ptxspec.semantics.integer', 'ptxspec.semantics.numerics', 'ptxspec.semantics.results'] False"
    )
