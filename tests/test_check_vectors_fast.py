"""The bulk paths of ``ptxspec vectors`` and ``ptxspec check-vectors`` against the per-vector ones.

* writing: :func:`jsonl_bytes` (line templates, hex digits written column by column) is byte for
  byte ``json.dumps`` of each vector of :func:`generate` -- at chunk boundaries too, for forms
  with ``"allowed"`` (any-NaN, packed lanes, intervals), several destinations, warp forms;
* reading: :func:`read_items` (canonical lines in bulk) gives exactly what the ``json`` reader
  (``fast=False``) gives: the same vectors, the same summary, the same located error; foreign but
  valid JSON is still accepted; every single corrupted byte of a line gives what the ``json``
  reader gives -- a malformed-line error or a mismatch, except in the text nothing judges (the
  instruction name: then an unsupported vector; the "profile" field; the key "allowed") and an
  input digit changed to another digit (another vector, whose result may be the same), or an
  output NaN to another NaN where any NaN is allowed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ptxspec.conformance.vectors as vectors
from ptxspec.conformance.check_vectors import Block, check_vectors, check_vectors_command, read_items, read_vectors
from ptxspec.conformance.vectors import generate, hex_digits, jsonl_bytes
from ptxspec.spec.errors import PtxSpecError

# The four benchmark forms, forms whose results include sets (intervals, per-row), two
# destinations, a predicate destination, and a warp-level form (its slow writer).
WRITER_FORMS = [
    "fma.rn.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "add.rn.f16x2",
    "mad.wide.s32",
    "cvt.rn.f16.f32",
    "mul.rn.ftz.f16",
    "sin.approx.f32",
    "add.cc.u32",
    "setp.lt.f32",
    "shfl.sync.down.b32",
]


def slow_bytes(instr: str, count: int, seed: int, profile: str) -> bytes:
    return "".join(json.dumps(v) + "\n" for v in generate(instr, count, seed, profile)).encode("utf-8")


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
@pytest.mark.parametrize("instr", WRITER_FORMS)
def test_writer_bytes_equal_json_dumps_across_chunks(monkeypatch, instr, profile):
    monkeypatch.setattr(vectors, "CHUNK", 97)  # many chunk boundaries, some inside the edge values
    count = 200 if instr.startswith("shfl") else 700
    assert jsonl_bytes(instr, count, 5, profile) == slow_bytes(instr, count, 5, profile)


@pytest.mark.parametrize("digits", range(1, 17))
def test_hex_digits_equal_python_formatting(digits):
    rng = np.random.default_rng(digits)
    top = (1 << (4 * digits)) - 1
    values = [0, 1, top, top >> 1, 1 << (4 * digits - 1)] + [int(x) & top for x in rng.integers(0, 1 << 63, 2000, dtype=np.uint64) * 3]
    got = hex_digits(np.array(values, dtype=np.uint64), digits)
    assert [bytes(row).decode("ascii") for row in got] == [f"{v:0{digits}x}" for v in values]


# ---------------------------------------------------------------------------------------------
# Reading in bulk equals reading by json
# ---------------------------------------------------------------------------------------------


def as_tuples(items) -> list[tuple]:
    out = []
    for item in items:
        for v in item.vectors() if isinstance(item, Block) else [item]:
            if hasattr(v, "sources"):
                out.append((v.where.line, v.form.text, v.sources, v.outputs, v.allowed, v.active))
            else:
                out.append((v.where.line, "unsupported", v.instr, v.reason))
    return sorted(out)


def outcome(path: Path, profile: str, fast: bool):
    """What check-vectors concludes: the summary and the mismatches, or the error."""
    try:
        summary = check_vectors(read_items(str(path), fast=fast), profile)
    except PtxSpecError as error:
        return ("error", error.one_line())
    return ("summary", summary.to_json(), [(m.vector.where.line, m.why) for m in summary.mismatches])


READER_FORMS = [
    "fma.rn.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "add.rn.f16x2",
    "mad.wide.s32",
    "sin.approx.f32",
    "add.cc.u32",
    "cvt.rn.f16.f32",
    "ex2.approx.f16x2",
]


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
@pytest.mark.parametrize("instr", READER_FORMS)
def test_bulk_reader_equals_json_reader_on_written_files(tmp_path, instr, profile):
    path = tmp_path / "v.jsonl"
    path.write_bytes(jsonl_bytes(instr, 1200, 3, profile))
    fast = read_items(str(path))
    # Every canonical line is read in bulk: with bits in outputs, or a set written there (an
    # interval with no canonical member), whose lines are then judged as text.
    set_lines = sum(not all(isinstance(o, str) for o in json.loads(line)["outputs"]) for line in path.read_text().splitlines())
    assert sum(len(item) for item in fast if isinstance(item, Block)) == 1200
    assert sum(len(item) for item in fast if isinstance(item, Block) and item.text is not None) == set_lines
    assert as_tuples(fast) == as_tuples(read_items(str(path), fast=False))
    assert outcome(path, profile, True) == outcome(path, profile, False)
    assert outcome(path, profile, True)[1]["matched"] == 1200


def foreign(line: str, how: int) -> str:
    """The same vector in other valid JSON: no spaces, keys reordered, upper-case hex, no profile
    and an extra field, one upper-case operand, CRLF."""
    obj = json.loads(line)
    if how == 0:
        return json.dumps(obj, separators=(",", ":"))
    if how == 1:
        return json.dumps(dict(reversed(list(obj.items()))))
    if how == 2:
        obj["inputs"] = [s.upper().replace("0X", "0x") for s in obj["inputs"]]
        return json.dumps(obj)
    if how == 3:
        obj.pop("profile", None)
        obj["where"] = "recorded somewhere"
        return json.dumps(obj)
    if how == 4:  # one operand upper-case: the other hex strings must not take its place
        obj["inputs"][0] = "0x" + obj["inputs"][0][2:].upper()
        return json.dumps(obj)
    return line + "\r"


def test_foreign_but_valid_json_is_accepted_and_mixed_files_agree(tmp_path):
    rng = random.Random(7)
    lines = []
    for instr in ("fma.rn.f32", "add.rn.f16x2", "cvt.rn.satfinite.e4m3x2.f32", "mad.wide.s32", "add.cc.u32"):
        lines += jsonl_bytes(instr, 400, 1).decode().splitlines()
    rng.shuffle(lines)
    mixed = [foreign(line, rng.randrange(6)) if rng.random() < 0.3 else line for line in lines]
    mixed.insert(17, "")
    mixed.insert(40, '{"instr": "frobnicate.b32", "inputs": ["0x1"], "outputs": ["0x2"]}')
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(mixed) + "\n")
    fast = outcome(path, "spec", True)
    assert fast == outcome(path, "spec", False)
    assert fast[1]["matched"] == len(lines) and fast[1]["unsupported"] == 1
    assert as_tuples(read_items(str(path))) == as_tuples(read_items(str(path), fast=False))
    # read_vectors: one Vector per line, in file order
    assert [v.where.line for v in read_vectors(str(path))] == [i + 1 for i, t in enumerate(mixed) if t]


@pytest.mark.parametrize(
    "bad, words",
    [
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x3f800000"], "outputs": ["0x3f800000"]}', "takes 3 source operand"),
        (
            '{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x3f80000g", "0x00000000"], "outputs": ["0x3f800000"], "profile": "spec"}',
            "expected a hex string",
        ),
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x3f800000", "0x00000000"], "outputs": ["0x3f800000"], "profile": "spec"', "invalid JSON"),
        ('{"instr": "add.cc.u32", "inputs": ["0x00000001", "0x00000002"], "outputs": ["0x00000003", "0x2"], "profile": "spec"}', "does not fit"),
    ],
)
def test_malformed_line_among_canonical_ones_gives_the_json_readers_located_error(tmp_path, bad, words):
    good = jsonl_bytes("fma.rn.f32", 50, 0).decode().splitlines()
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(good[:30] + [bad] + good[30:]) + "\n")
    fast, slow = outcome(path, "spec", True), outcome(path, "spec", False)
    assert fast == slow and fast[0] == "error"
    assert f"{path}:31:" in fast[1] and words in fast[1]
    result = CliRunner().invoke(check_vectors_command, [str(path)])
    assert result.exit_code == 2 and f"{path}:31:" in result.stderr


# ---------------------------------------------------------------------------------------------
# Every single corrupted byte
# ---------------------------------------------------------------------------------------------

CORRUPTED_LINES = [
    ("fma.rn.f32", "spec", 0, None),  # plain result
    ("add.rn.f16x2", "spec", 0, b'"lanes"'),  # a packed result with one NaN lane and a fixed one
    ("add.cc.u32", "spec", 0, None),  # a 1-bit carry-out: "0x0"/"0x1"
    pytest.param("fma.rn.f32", "spec", 0, b"allowed", marks=pytest.mark.heavy),  # any-NaN with "allowed"
    pytest.param("cvt.rn.satfinite.e4m3x2.f32", "sm_90", 2, None, marks=pytest.mark.heavy),
    pytest.param("mad.wide.s32", "spec", 1, None, marks=pytest.mark.heavy),
]


def pick_line(instr: str, profile: str, seed: int, marker: bytes | None) -> tuple[list[bytes], int]:
    lines = jsonl_bytes(instr, 3000, seed, profile).splitlines(keepends=True)
    rng = random.Random(f"{instr}{marker}")
    candidates = [i for i, line in enumerate(lines) if (marker is None and b"allowed" not in line) or (marker is not None and marker in line)]
    if marker == b'"lanes"':
        candidates = [i for i in candidates if b'"0x' in lines[i].split(b'"lanes"')[-1]]
    return lines, rng.choice(candidates[100:] or candidates)


@pytest.mark.parametrize("instr, profile, seed, marker", CORRUPTED_LINES)
def test_every_single_corrupted_byte_is_judged_as_the_json_reader_judges_it(tmp_path, instr, profile, seed, marker):
    lines, k = pick_line(instr, profile, seed, marker)
    context = lines[k - 3 : k + 3]  # canonical neighbours, so the corrupted line's layout is in play
    target = 3
    line = context[target]
    operand_digits = set()
    at = 0
    for _ in range(len(json.loads(line)["inputs"]) + len(json.loads(line)["outputs"])):
        at = line.index(b'"0x', at) + 3
        end = line.index(b'"', at)
        operand_digits.update(range(at, end))
        at = end
    outputs_start = line.index(b'"outputs"')
    # Text that check-vectors does not judge: the instruction name (a corrupted one is reported
    # as unsupported), the informational "profile" field, and the key "allowed" (a renamed key is
    # an unknown, ignored field). An input digit changed to another digit is another vector, which
    # may have the same result; an output digit of a NaN where any NaN is allowed may give another
    # NaN. A byte anywhere else is a malformed line or a mismatch.
    instr_text = range(len(b'{"instr": "'), line.index(b'"', len(b'{"instr": "')))
    informational = set(range(line.index(b'"profile"'), len(line) - 2))
    if b'"allowed"' in line:
        informational |= set(range(line.index(b'"allowed"') + 1, line.index(b'"allowed"') + 8))
    path = tmp_path / "c.jsonl"
    kinds = {"error": 0, "mismatch": 0, "other": 0}
    for position in range(len(line) - 1):  # every byte but the newline
        original = line[position]
        replacements = {ord("g"), ord('"'), ord(" ")} - {original}
        if chr(original) in "0123456789abcdef":
            replacements.add(ord("0") if original != ord("0") else ord("1"))
        for byte in sorted(replacements):
            corrupted = line[:position] + bytes([byte]) + line[position + 1 :]
            path.write_bytes(b"".join(context[:target] + [corrupted] + context[target + 1 :]))
            fast, slow = outcome(path, profile, True), outcome(path, profile, False)
            assert fast == slow, (position, chr(byte))
            if fast[0] == "error":
                kinds["error"] += 1
            elif fast[1]["mismatched"]:
                kinds["mismatch"] += 1
                assert [m[0] for m in fast[2]] == [target + 1]
            else:
                kinds["other"] += 1
                if position in instr_text:
                    assert fast[1]["unsupported"] == 1, position
                elif position in operand_digits and (position < outputs_start or marker is not None):
                    # another valid input: a different vector, which may have the same result;
                    # another NaN where any NaN is allowed
                    assert chr(byte) in "0123456789abcdef", (position, chr(byte))
                else:
                    assert position in informational, (position, chr(byte))
            if position in operand_digits and not chr(byte) in "0123456789abcdef":
                assert fast[0] == "error", (position, chr(byte))  # a hex string that is not hex
            if position in operand_digits and position > outputs_start and chr(byte) in "0123456789abcdef" and marker is None:
                assert fast[0] == "summary" and fast[1]["mismatched"] == 1, position  # another fixed result
    assert kinds["error"] > 0 and kinds["mismatch"] > 0


def test_odd_width_operand_out_of_range_is_left_to_the_json_reader(tmp_path):
    lines = jsonl_bytes("add.cc.u32", 40, 0).decode().splitlines()
    obj = json.loads(lines[20])
    obj["outputs"][1] = "0xf"  # a carry flag of one hex digit that does not fit in 1 bit
    lines[20] = json.dumps(obj)
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(lines) + "\n")
    fast = outcome(path, "spec", True)
    assert fast == outcome(path, "spec", False)
    assert fast[0] == "error" and ":21:" in fast[1] and "does not fit" in fast[1]


def test_json_summary_unchanged_on_the_fixture_files():
    data = Path(__file__).resolve().parent / "data" / "vectors"
    for name in ("good", "corrupted", "unknown"):
        path = data / f"{name}.jsonl"
        assert outcome(path, "spec", True) == outcome(path, "spec", False)


def test_stdin_is_read_in_bulk_too():
    text = jsonl_bytes("fma.rn.f32", 300, 2)
    result = CliRunner().invoke(check_vectors_command, ["-", "--json"], input=text)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["matched"] == 300


def test_no_click_stream_helpers():
    # click's get_text_stream/get_binary_stream warn as deprecated in recent Click releases.
    root = Path(__file__).resolve().parent.parent / "conformance"
    for name in ("vectors.py", "check_vectors.py"):
        text = (root / name).read_text()
        assert "get_text_stream" not in text and "get_binary_stream" not in text
