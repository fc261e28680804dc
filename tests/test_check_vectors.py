"""``ptxspec check-vectors`` (conformance/check_vectors.py).

The fixtures in tests/data/vectors/ are hand-written from the manual and IEEE 754 (each line's
comment in the generator is in the fixture's neighbours here); their arithmetic values are
re-derived below with independent oracles (numpy, gmpy2), never from ptxspec.
"""

from __future__ import annotations

import json
import subprocess
import sys
import random
from pathlib import Path

import gmpy2
import numpy as np
import pytest
from click.testing import CliRunner

from ptxspec.conformance.check_vectors import Block, check_file, check_vectors, check_vectors_command, read_items, read_vectors
from ptxspec.semantics.instructions import check, evaluate

DATA = Path(__file__).resolve().parent / "data" / "vectors"
GOOD, WARP, CORRUPTED, UNKNOWN = (DATA / f"{n}.jsonl" for n in ("good", "warp", "corrupted", "unknown"))


def invoke(*args: str):
    return CliRunner().invoke(check_vectors_command, [str(a) for a in args])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(tmp_path: Path, vectors: list, name: str = "v.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((v if isinstance(v, str) else json.dumps(v)) + "\n" for v in vectors))
    return path


def f32(x) -> float:
    return float(np.uint32(int(x, 16)).view(np.float32))


# ---------------------------------------------------------------------------------------------
# The fixtures are right by independent arithmetic
# ---------------------------------------------------------------------------------------------


def test_fixture_values_by_independent_oracles():
    for v in lines(GOOD):
        ins, out = v["inputs"], v["outputs"]
        if v["instr"] == "fma.rn.f32":
            a, b, c = (f32(x) for x in ins)
            with gmpy2.context(gmpy2.ieee(32)):  # round to nearest even, subnormals, emin/emax
                r = gmpy2.fma(gmpy2.mpfr(a), gmpy2.mpfr(b), gmpy2.mpfr(c))
            if gmpy2.is_nan(r):
                assert np.isnan(f32(out[0]))
            else:
                assert np.float32(float(r)).view(np.uint32) == int(out[0], 16)
        elif v["instr"] == "add.rn.f32":
            assert (np.float32(f32(ins[0])) + np.float32(f32(ins[1]))).view(np.uint32) == int(out[0], 16)
        elif v["instr"] == "cvt.rn.f16.f32":
            assert np.float32(f32(ins[0])).astype(np.float16).view(np.uint16) == int(out[0], 16)
        elif v["instr"] == "mad.wide.s32":
            a, b = (int(x, 16) - (1 << 32) * (int(x, 16) >> 31) for x in ins[:2])
            c = int(ins[2], 16) - (1 << 64) * (int(ins[2], 16) >> 63)
            assert (a * b + c) & 0xFFFFFFFFFFFFFFFF == int(out[0], 16)
        elif v["instr"] == "lop3.b32":
            a, b, c = (int(x, 16) for x in ins[:3])
            assert int(ins[3], 16) == 0x80 and a & b & c == int(out[0], 16)


# ---------------------------------------------------------------------------------------------
# Round trip, corruption, profiles
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
def test_correct_vectors_round_trip(profile):
    result = invoke(GOOD, WARP, "--profile", profile)
    assert result.exit_code == 0, result.output
    assert "16 matched, 0 mismatched, 0 unsupported" in result.stdout
    assert result.stderr == ""  # no progress bar when standard error is not a terminal
    summary = check_file(str(GOOD), profile)
    assert (summary.checked, summary.matched, summary.mismatched) == (14, 14, 0)


def _flip(text: str, width: int) -> str:
    """A different value: the bit below the top one flipped (an exponent bit of a float, so that
    the value leaves any interval or NaN set), or bit 0 of a 1-bit flag."""
    bit = max(width - 2, 0)
    return f"0x{int(text, 16) ^ (1 << bit):0{len(text) - 2}x}"


@pytest.mark.parametrize("index", range(14))
def test_every_corrupted_vector_is_caught(tmp_path, index):
    vectors = lines(GOOD)
    v = vectors[index]
    width = 1 if len(v["outputs"][-1]) == 3 else 4 * (len(v["outputs"][-1]) - 2)
    v["outputs"][-1] = _flip(v["outputs"][-1], width)
    summary = check_file(str(write(tmp_path, vectors)), "spec")
    assert (summary.mismatched, summary.matched) == (1, 13)
    (m,) = summary.mismatches
    assert m.vector.where.line == index + 1 and m.vector.form.text == v["instr"]


def test_corrupted_file_exit_1_names_the_vector_with_decoded_values():
    result = invoke(CORRUPTED)
    assert result.exit_code == 1
    out = result.stdout
    assert f"{CORRUPTED}:2: fma.rn.f32" in out
    assert "0x3f800000 (1.0)" in out and "expected d          = 0x40000000 (2.0)" in out
    assert "observed d          = 0x40000001 (2.000000238418579)" in out
    assert "2 matched, 1 mismatched" in out


def test_max_mismatches_limits_the_details():
    result = invoke(CORRUPTED, "--max-mismatches", "0")
    assert result.exit_code == 1 and "observed" not in result.stdout


def test_warp_lane_corruption_is_caught(tmp_path):
    vectors = lines(WARP)
    vectors[0]["outputs"][0][7] = "0x00000007"  # lane 7 reads lane 8: 8, not 7
    vectors[1]["outputs"][0][31] = "0x55555554"
    summary = check_file(str(write(tmp_path, vectors)), "spec")
    assert summary.mismatched == 2 and summary.matched == 0


def test_uniform_warp_operand_and_omitted_membermask(tmp_path):
    v = {"instr": "vote.sync.ballot.b32", "inputs": ["0x1"], "outputs": ["0xffffffff"]}
    assert check_file(str(write(tmp_path, [v])), "spec").matched == 1


def test_profiles_differ_on_an_unspecified_nan(tmp_path):
    # §9.7.3: "an unspecified NaN"; an H100 returns 0x7fffffff, never 0x7fc00000.
    v = {"instr": "fma.rn.f32", "inputs": ["0x7f800000", "0x00000000", "0x3f800000"], "outputs": ["0x7fc00000"]}
    path = write(tmp_path, [v])
    assert check_file(str(path), "spec").matched == 1
    assert check_file(str(path), "sm_90").mismatched == 1
    assert invoke(path, "--profile", "sm_90").exit_code == 1


def test_approx_interval_membership(tmp_path):
    inside = {"instr": "sin.approx.f32", "inputs": ["0x3f800000"], "outputs": ["0x3f576aa4"]}
    outside = {"instr": "sin.approx.f32", "inputs": ["0x3f800000"], "outputs": ["0x3f577aa4"]}
    result = invoke(write(tmp_path, [inside, outside]))
    assert result.exit_code == 1 and ":2: sin.approx.f32" in result.stdout
    assert "expected d          = [0x" in result.stdout  # the interval, with decoded bounds


# ---------------------------------------------------------------------------------------------
# Allowed sets: eval --json's encoding round-trips, claims are compared
# ---------------------------------------------------------------------------------------------


def test_eval_json_objects_round_trip(tmp_path):
    from ptxspec.conformance.cli import command_line_request, run, to_json

    requests = [
        ("fma.rn.f32", ["0x7f800000", "0x00000000", "0x3f800000"]),
        ("sin.approx.f32", ["0x3f800000"]),
        ("add.rn.f32", ["0x3f800000", "0x40000000"]),
        ("add.cc.u32", ["0xffffffff", "0x1"]),
    ]
    for profile in ("spec", "sm_90"):
        objs = [to_json(run(command_line_request(i, ops), profile), profile) for i, ops in requests]
        assert any(isinstance(o, dict) for obj in objs for o in obj["outputs"])  # sets, not bits, in spec
        summary = check_file(str(write(tmp_path, objs)), profile)
        assert (summary.matched, summary.mismatched) == (4, 0)
        if profile == "spec":
            # The spec's set is not the sm_90 profile's pinned NaN: a mismatch under sm_90.
            assert check_file(str(write(tmp_path, objs[:1], "s.jsonl")), "sm_90").mismatched == 1


def test_allowed_claims(tmp_path):
    base = {"instr": "fma.rn.f32", "inputs": ["0x7f800000", "0x00000000", "0x3f800000"], "outputs": ["0x7fffffff"]}
    right = dict(base, allowed={"any_nan": True})
    wrong = dict(base, allowed={"interval": ["0x00000000", "0x3f800000"]})
    other_profile = dict(wrong, profile="sm_90")  # a claim about sm_90 is not checked under spec
    fixed_claimed_open = {"instr": "add.rn.f32", "inputs": ["0x3f800000", "0x40000000"], "outputs": ["0x40400000"], "allowed": {"any_nan": True}}
    summary = check_file(str(write(tmp_path, [right, wrong, other_profile, fixed_claimed_open])), "spec")
    assert [m.vector.where.line for m in summary.mismatches] == [2, 4]
    sin = evaluate("sin.approx.f32", [0x3F800000], "spec")[0]
    claim = {"interval": [f"0x{sin.low:08x}", f"0x{sin.high:08x}"]}
    v = {"instr": "sin.approx.f32", "inputs": ["0x3f800000"], "outputs": ["0x3f576aa4"], "allowed": claim}
    assert check_file(str(write(tmp_path, [v], "i.jsonl")), "spec").matched == 1


# ---------------------------------------------------------------------------------------------
# Bad input: located, exit 2, never a traceback
# ---------------------------------------------------------------------------------------------

OK_LINE = '{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"], "outputs": ["0x40000000"]}'


@pytest.mark.parametrize(
    "line, column, words",
    [
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000"', 48, "invalid JSON"),
        ("[1, 2]", 1, "expected a JSON object"),
        ('{"instr": "fma.rn.f32", "outputs": ["0x40000000"]}', 1, "missing field 'inputs'"),
        ('{"instr": 7, "inputs": [], "outputs": []}', 2, "field 'instr'"),
        (
            '{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x4000000", "0x00000000"], "outputs": ["0x40000000"]}',
            50,
            "expected 8 hex digit(s) for a 32-bit register, got 7",
        ),
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000"], "outputs": ["0x40000000"]}', 25, "takes 3 source operand(s) (a, b, c), got 2"),
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"], "outputs": []}', 79, "1 destination operand(s) (d), got 0 output(s)"),
        ('{"instr": "fma.rn.f32", "inputs": ["0x3f800000", "1.0", "0x00000000"], "outputs": ["0x40000000"]}', 50, "expected a hex string"),
        ('{"instr": "setp.lt.f32", "inputs": ["0x3f800000", "0x40000000"], "outputs": ["0x1", "0x2"]}', 85, "0x2 does not fit in a 1-bit register"),
        ('{"instr": "vote.sync.ballot.b32", "inputs": [["0x1", "0x0"], "0xffffffff"], "outputs": ["0xffffffff"]}', 46, "list of 32 lane values"),
        ('{"instr": "fma.rn.f32", "inputs": "0x3f800000", "outputs": ["0x40000000"]}', 25, "field 'inputs': expected a list"),
    ],
)
def test_malformed_line_is_located(tmp_path, line, column, words):
    path = write(tmp_path, [OK_LINE, line])
    result = invoke(path)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (message,) = result.stderr.splitlines()
    assert message.startswith(f"ptxspec: error: {path}:2:{column}: ")
    assert words in message and "Traceback" not in result.output


def test_missing_file_is_a_located_error(tmp_path):
    result = invoke(tmp_path / "absent.jsonl")
    assert result.exit_code == 2 and "absent.jsonl: cannot read the file" in result.stderr


# ---------------------------------------------------------------------------------------------
# Unsupported forms, --json
# ---------------------------------------------------------------------------------------------


def test_unknown_forms_are_counted_and_do_not_stop_the_run():
    result = invoke(UNKNOWN)
    assert result.exit_code == 0
    assert "2 matched, 0 mismatched, 2 unsupported" in result.stdout
    assert f"frobnicate.rn.f32: 1 vector(s), first at {UNKNOWN}:2: unknown opcode" in result.stdout
    assert f"add.rn.f99: 1 vector(s), first at {UNKNOWN}:3" in result.stdout


def test_json_summary_schema():
    result = invoke(GOOD, CORRUPTED, UNKNOWN, WARP, "--json")
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert {"checked", "matched", "mismatched", "unsupported", "by_instr"} <= set(summary)
    assert (summary["checked"], summary["matched"], summary["mismatched"], summary["unsupported"]) == (21, 20, 1, 2)
    assert summary["by_instr"]["fma.rn.f32"] == {"checked": 4 + 3 + 1, "matched": 7, "mismatched": 1}
    assert sum(c["checked"] for c in summary["by_instr"].values()) == summary["checked"]
    assert all(set(c) == {"checked", "matched", "mismatched"} for c in summary["by_instr"].values())
    assert summary["unsupported_by_instr"] == {"add.rn.f99": 1, "frobnicate.rn.f32": 1}


# ---------------------------------------------------------------------------------------------
# The batched path decides exactly as the per-vector check()
# ---------------------------------------------------------------------------------------------

EDGE_F32 = [
    0x00000000,
    0x80000000,
    0x00000001,
    0x807FFFFF,
    0x00800000,
    0x3F800000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x7F800001,
    0xFFFFFFFF,
    0x43E00000,
    0x43E80000,
    0x3B000000,
]


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
@pytest.mark.parametrize("instr, arity, width", [("fma.rn.f32", 3, 32), ("cvt.rn.f16.f32", 1, 16), ("cvt.rn.satfinite.e4m3x2.f32", 2, 16)])
def test_batched_check_equals_per_vector_check(tmp_path, profile, instr, arity, width):
    rng = random.Random(f"{instr}-{profile}")
    vectors = []
    for _ in range(600):
        sources = [rng.choice(EDGE_F32) if rng.random() < 0.4 else rng.getrandbits(32) for _ in range(arity)]
        (result,) = evaluate(instr, sources, profile)
        bits = (
            result
            if isinstance(result, int)
            else rng.choice([0x7FFFFFFF, 0x7FC00000, 0xFFC00001, 0x7E7E, 0x7E00, 0x7FFF, 0xFFFF] if width == 32 else [0x7E00, 0x7FFF, 0xFFFF, 0x7F7F, 0x7E7F])
        )
        bits &= (1 << width) - 1
        choice = rng.random()
        observed = bits if choice < 0.5 else bits ^ (1 << rng.randrange(width)) if choice < 0.9 else rng.getrandbits(width)
        vectors.append({"instr": instr, "inputs": [f"0x{s:08x}" for s in sources], "outputs": [f"0x{observed:0{width // 4}x}"]})
    items = list(read_vectors(str(write(tmp_path, vectors))))
    summary = check_vectors(items, profile)
    batched = {m.vector.where.line for m in summary.mismatches}
    one_by_one = {i + 1 for i, v in enumerate(items) if not check(v.form, v.sources, v.outputs, profile)}
    assert batched == one_by_one
    assert 0 < len(batched) < len(items)


def test_fast_path_forms_are_checked_in_batches(tmp_path, monkeypatch):
    import ptxspec.semantics.batch as batch

    calls = []
    original = batch.evaluate_batch_all
    monkeypatch.setattr(batch, "evaluate_batch_all", lambda form, sources, profile: calls.append(len(sources[0])) or original(form, sources, profile))
    summary = check_file(str(GOOD), "spec")
    # one batch per form that has a fast path, holding all of that form's vectors
    expected: dict[str, int] = {}
    for line in GOOD.read_text().splitlines():
        if line.strip():
            instr = json.loads(line)["instr"]
            if batch.has_fast_path(instr):
                expected[instr] = expected.get(instr, 0) + 1
    assert summary.mismatched == 0 and expected.get("fma.rn.f32") == 4
    assert sorted(calls) == sorted(expected.values())


def test_progress_line_only_on_a_terminal():
    import io

    from ptxspec.conformance.progress import Progress

    progress = Progress()
    assert progress.on is False  # pytest's standard error is not a terminal
    progress.stream, progress.on = io.StringIO(), True
    progress("checking", 50, 200)
    progress.close()
    assert "checking: 50/200 (25%)" in progress.stream.getvalue()


# ---------------------------------------------------------------------------------------------
# H100/H200 recordings (conformance/data/sm_90), exported as vectors, check with no mismatch
# ---------------------------------------------------------------------------------------------

SILICON_FORMS = [
    "fma.rn.f32",
    "fma.rn.f32#all-specials",
    "add.rn.f32",
    "div.rn.f64",
    "sin.approx.f32",
    "ex2.approx.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "cvt.rn.f16.f32",
    "add.rn.f16x2",
    "mad.wide.s32",
    "add.cc.u32",
    "shfl.sync.down.b32",
    "vote.sync.ballot.b32",
]


@pytest.fixture(scope="module")
def recording():
    from ptxspec.conformance.silicon import replay

    return replay.load()


@pytest.mark.parametrize("profile", ["sm_90", "spec"])
def test_silicon_recordings_export_and_check(tmp_path, recording, profile):
    from ptxspec.conformance.check_vectors import recorded_vectors
    from ptxspec.conformance.silicon import replay

    vectors = []
    for text in SILICON_FORMS:
        recorded = recording.forms[text]
        vectors += recorded_vectors(recorded, replay.sample_rows(recorded, 8 if recorded.warp else 128, seed=5))
    summary = check_file(str(write(tmp_path, vectors)), profile)
    assert summary.mismatched == 0 and summary.unsupported == [], [m.why for m in summary.mismatches[:3]]
    assert summary.checked == len(vectors) and len(summary.by_instr) == len(SILICON_FORMS) - 1
    # A recorded result changed by one bit is caught.
    vectors[0]["outputs"][0] = _flip(vectors[0]["outputs"][0], 32)
    assert check_file(str(write(tmp_path, vectors, "bad.jsonl")), profile).mismatched == 1


def test_a_shipped_recording_is_found_by_name_from_anywhere(tmp_path, monkeypatch):
    """``--recording sm_90`` names the recording that ships with the package, from any folder; a
    folder is taken as it is; anything else is one located error, exit 2, naming the shipped ones."""
    from ptxspec.conformance.check_vectors import SHIPPED, recording_folder

    monkeypatch.chdir(tmp_path)
    assert recording_folder("sm_90") == SHIPPED / "sm_90" and (SHIPPED / "sm_90" / "meta-float-cvt.json").is_file()
    (tmp_path / "mine").mkdir()
    assert recording_folder("mine") == Path("mine")
    done = subprocess.run([sys.executable, "-m", "ptxspec", "check-vectors", "--recording", "sm_9"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("ptxspec: error: <command line>, --recording: 'sm_9'") and "(sm_90" in done.stderr


@pytest.mark.parametrize("instr", ["sin.approx.f32", "fma.rn.oob.bf16x2", "rem.s32", "ex2.approx.f16x2"])
def test_golden_file_with_claimed_sets_and_tampered_claims(tmp_path, instr):
    """A golden file that ``ptxspec vectors`` wrote, whose lines claim sets (intervals, fma.oob's
    shared set, member sets), checks clean; a claim changed in ``outputs`` or ``allowed`` is a
    mismatch at its line, whatever the line's neighbours are (the batched judgement)."""
    from ptxspec.conformance.vectors import jsonl_lines

    lines = [json.loads(line) for line in jsonl_lines(instr, 3000, 4)]
    claiming = [i for i, v in enumerate(lines) if v.get("allowed")]
    assert len(claiming) > 20
    assert check_file(str(write(tmp_path, lines)), "spec").mismatches == []
    blocks = read_items(str(write(tmp_path, lines)))
    in_bulk = sum(len(b) for b in blocks if isinstance(b, Block) and b.text is not None)
    assert in_bulk == sum(1 for v in lines if not isinstance(v["outputs"][0], str)), "lines with a set in outputs are read in bulk"
    rng = random.Random(instr)
    tampered = sorted(rng.sample(claiming, 9))
    for j, i in enumerate(tampered):
        claim = next(a for a in lines[i]["allowed"] if a is not None)
        changed = (
            {"kind": "one-of", "members": ["0x" + "0" * (len(json.dumps(lines[i]["inputs"][0])) - 4)]}
            if claim.get("kind") != "one-of"
            else dict(claim, members=claim["members"][:1])
        )
        lines[i]["allowed"] = [changed if a is not None else None for a in lines[i]["allowed"]]
        if j % 3 == 0:  # the same change in outputs, where they hold the set: the line keeps a bulk layout
            lines[i]["outputs"] = [changed if isinstance(o, dict) else o for o in lines[i]["outputs"]]
        elif j % 3 == 1 and isinstance(lines[i]["outputs"][0], dict) and "0x" in json.dumps(claim):  # one digit of the claim changed in both
            text = json.dumps(claim)
            k = text.index("0x") + 3
            both = json.loads(text[:k] + ("0" if text[k] != "0" else "1") + text[k + 1 :])
            lines[i]["allowed"], lines[i]["outputs"] = [both], [both]
    summary = check_file(str(write(tmp_path, lines, "t.jsonl")), "spec")
    assert sorted(m.vector.where.line for m in summary.mismatches) == [i + 1 for i in tampered]
    for profile in ("spec", "sm_90"):  # the bulk reading decides as reading every line by json does
        slow = check_vectors(read_items(str(tmp_path / "t.jsonl"), fast=False), profile)
        fast = check_file(str(tmp_path / "t.jsonl"), profile)
        assert sorted(m.vector.where.line for m in fast.mismatches) == sorted(m.vector.where.line for m in slow.mismatches)
        assert [m.why for m in sorted(fast.mismatches, key=lambda m: m.vector.where.line)] == [
            m.why for m in sorted(slow.mismatches, key=lambda m: m.vector.where.line)
        ]


@pytest.mark.parametrize("instr", ["ex2.approx.f16", "ex2.approx.f16x2", "rem.s32", "sin.approx.f32"])
def test_member_in_outputs_with_a_wrong_allowed_claim(tmp_path, instr):
    """A line with a member of its set in outputs but "allowed" claiming a fixed result (null, or
    fixed lanes) is a mismatch, in the bulk reader as in the json one."""
    from ptxspec.conformance.vectors import jsonl_lines

    lines = [json.loads(line) for line in jsonl_lines(instr, 2000, 4)]
    changed = 0
    for v in lines:
        out = v["outputs"][0]
        if isinstance(out, dict):
            member = check_vectors_member(instr, v)
            v["outputs"] = [member]
            v["allowed"] = [None]
            changed += 1
    assert changed > 10
    path = write(tmp_path, lines)
    fast = check_file(str(path), "spec")
    slow = check_vectors(read_items(str(path), fast=False), "spec")
    assert len(fast.mismatches) == len(slow.mismatches) == changed


def check_vectors_member(instr: str, v: dict) -> str:
    """One allowed result of the line's vector, as hex bits."""
    from ptxspec.conformance.vectors import _form
    from ptxspec.semantics import batch

    form = _form(instr)
    sources = [np.array([int(x, 16)], dtype=np.uint64) for x in v["inputs"]]
    r = batch.evaluate_batch_all(form, sources, "spec")[0]
    return f"0x{int(r.bits[0]):0{len(v['inputs'][0]) - 2 if instr != 'rem.s32' else 8}x}"
