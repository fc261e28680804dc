"""Big inputs in bounded memory (issue 14, item 5) and hex in either case (item 4).

* ``check-vectors`` reads a file a chunk of lines at a time and checks each chunk before it reads
  the next: a file of any size is checked in bounded memory (a subprocess's peak resident memory
  is measured), and the report, the ``--json`` summary and the exit status are the same whatever
  the chunk size;
* ``ptxspec vectors`` writes as it generates: the same bytes as before the change (pinned
  digests, computed by the code before it) for any chunk size, and its memory does not grow with
  ``--count``;
* hex in a vector file is read in either case everywhere: operands, outputs, and the bounds
  inside a claimed allowed set (an equal claim written ``"0x7E800000"`` is not a mismatch).
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ptxspec.conformance.check_vectors as cv
import ptxspec.conformance.progress as progress
import ptxspec.conformance.matrix_vectors as mv
import ptxspec.conformance.vectors as vectors
from ptxspec.conformance.check_vectors import check_batches, check_file, check_vectors_command, file_batches
from ptxspec.conformance.vectors import jsonl_bytes, jsonl_chunks
from ptxspec.spec.catalogue import parse

REPO = Path(__file__).resolve().parent.parent


def invoke(*args):
    return CliRunner().invoke(check_vectors_command, [str(a) for a in args])


def upper_hex(text: str) -> str:
    """Every hex string of a JSON line with its digits in upper case."""
    import re

    return re.sub(r'"0x([0-9a-f]+)"', lambda m: f'"0x{m.group(1).upper()}"', text)


# ---------------------------------------------------------------------------------------------
# Hex in either case
# ---------------------------------------------------------------------------------------------


def test_upper_case_hex_claim_is_not_a_mismatch(tmp_path):
    lines = [line for line in jsonl_bytes("ex2.approx.ftz.f32", 40, 0).decode().splitlines() if '"interval"' in line][:5]
    assert lines
    lines += [line for line in jsonl_bytes("add.rn.f32", 400, 0).decode().splitlines() if '"any-nan"' in line][:5]
    path = tmp_path / "upper.jsonl"
    path.write_text("".join(upper_hex(line) + "\n" for line in lines))
    assert "0x3F7FFFFE" in path.read_text()
    result = invoke(path)
    assert result.exit_code == 0, result.output
    assert f"{len(lines)} matched, 0 mismatched" in result.stdout
    # A claim that differs is still caught, in either case.
    wrong = json.loads(lines[0])
    wrong["allowed"][0]["low"] = "0x3F7FFFFD"
    path.write_text(json.dumps(wrong) + "\n")
    assert invoke(path).exit_code == 1


def test_upper_case_prefix_and_digits_in_operands(tmp_path):
    line = jsonl_bytes("fma.rn.f32", 1, 0).decode().strip()
    obj = json.loads(line)
    obj["inputs"] = ["0X" + x[2:].upper() for x in obj["inputs"]]
    obj["outputs"] = ["0X" + x[2:].upper() for x in obj["outputs"]]
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    result = invoke(path)
    assert result.exit_code == 0 and "1 matched" in result.stdout, result.output


def test_upper_case_hex_in_a_matrix_claim(tmp_path):
    text = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    lines = [line for line in jsonl_bytes(text, 4, 1, "spec").decode().splitlines() if '"allowed"' in line]
    assert lines
    path = tmp_path / "mma.jsonl"
    path.write_text("".join(upper_hex(line) + "\n" for line in lines))
    assert '"low": "0xDA75BF70"' in path.read_text()  # a bound of an interval claim
    result = invoke(path)
    assert result.exit_code == 0 and f"{len(lines)} matched" in result.stdout, result.output


# ---------------------------------------------------------------------------------------------
# check-vectors: the same answer for any chunk size, checked as it is read
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_file(tmp_path_factory) -> Path:
    """Canonical lines of several forms (a few corrupted), json-only lines (other spacing, upper
    case, warp, matrix), an unsupported form twice, and blank lines."""
    parts = [jsonl_bytes(f, 600, 3).decode() for f in ("fma.rn.f32", "add.rn.f16x2", "ex2.approx.ftz.f32")]
    lines = [line for part in parts for line in part.splitlines()]
    for i in range(5, len(lines), 97):  # a mismatch every 97 lines
        obj = json.loads(lines[i])
        out = obj["outputs"][0]
        if isinstance(out, str):
            obj["outputs"][0] = out[:-1] + ("0" if out[-1] != "0" else "1")
            lines[i] = json.dumps(obj)
    lines[10] = upper_hex(lines[10]).replace(", ", ",")
    lines += jsonl_bytes("shfl.sync.down.b32", 5, 0).decode().splitlines()
    lines += jsonl_bytes("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 3, 0, "spec").decode().splitlines()
    lines.insert(7, '{"instr": "frob.f32", "inputs": [], "outputs": []}')
    lines.insert(400, "")
    lines.append('{"instr": "frob.f32", "inputs": [], "outputs": []}')
    path = tmp_path_factory.mktemp("mixed") / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _outcome(path: Path, *extra) -> tuple:
    text, js = invoke(*extra, path), invoke("--json", *extra, path)
    return text.exit_code, text.stdout, text.stderr, js.exit_code, js.stdout, js.stderr


def test_report_is_the_same_for_any_chunk_size(monkeypatch, mixed_file):
    whole = _outcome(mixed_file, "--max-mismatches", "7")
    assert whole[0] == 1 and "first 7 of " in whole[1] and "frob.f32: 2 vector(s), first at" in whole[1]
    assert json.loads(whole[4])["unsupported"] == 2
    monkeypatch.setattr(cv, "READ_SIZE", 4096)  # many chunks, lines cut across reads
    monkeypatch.setattr(cv, "SLOW_BATCH", 1000)
    assert _outcome(mixed_file, "--max-mismatches", "7") == whole


def test_malformed_line_at_the_end_wins_over_everything_checked_before(monkeypatch, tmp_path):
    good = jsonl_bytes("fma.rn.f32", 3000, 0)
    path = tmp_path / "v.jsonl"
    path.write_bytes(good + b'{"instr": "fma.rn.f32", "inputs": [}\n')
    monkeypatch.setattr(cv, "READ_SIZE", 10_000)
    result = invoke(path)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"ptxspec: error: {path}:3001:36: invalid JSON")


def test_each_batch_is_checked_before_the_next_is_read(monkeypatch, tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_bytes(jsonl_bytes("fma.rn.f32", 4000, 0) + jsonl_bytes("add.rn.f32", 4000, 0))
    monkeypatch.setattr(cv, "READ_SIZE", 50_000)
    checked = []
    original = cv.check_batch
    monkeypatch.setattr(cv, "check_batch", lambda batch, summary: (original(batch, summary), checked.append(summary.checked)))
    read = []

    def batches():
        for batch in file_batches(str(path)):
            read.append(len(checked))
            yield batch

    summary = check_batches(batches())
    assert summary.checked == 8000 and summary.mismatched == 0
    assert len(read) > 10
    # When batch k is read, the k batches before it are already checked.
    assert read == list(range(len(read)))


def test_only_the_mismatches_printed_are_kept(tmp_path):
    lines = jsonl_bytes("add.rn.f32", 2000, 1).decode().splitlines()
    bad = []
    for i in range(0, 2000, 3):
        obj = json.loads(lines[i])
        if "allowed" not in obj:
            obj["outputs"][0] = "0x" + f"{int(obj['outputs'][0], 16) ^ 1:08x}"
            lines[i] = json.dumps(obj)
            bad.append(i + 1)
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(lines) + "\n")
    summary = check_file(str(path), keep=4)
    assert summary.mismatched == len(bad)
    assert [m.vector.where.line for m in summary.mismatches] == bad[:4]
    assert [m.vector.where.line for m in check_file(str(path)).mismatches] == bad


def test_dev_zero_is_refused_at_once(tmp_path):
    start = time.monotonic()
    result = invoke("/dev/zero")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"ptxspec: error: /dev/zero:1:{cv.MAX_LINE + 1}: no line break") and len(result.stderr.splitlines()) == 1
    assert time.monotonic() - start < 30


def _bench():
    """bench/vectors.py, whose ``command`` measures a command's peak memory in a process of its own."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_vectors", REPO / "bench" / "vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _peak_mib(args: list[str]) -> tuple[float, int]:
    """Peak resident memory (MiB) and exit status of ``python -m ptxspec ARGS``."""
    _, peak, status, _ = _bench().command(*args, cwd=str(REPO))
    return peak, status


def test_check_vectors_memory_does_not_grow_with_the_file(tmp_path):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(jsonl_bytes("fma.rn.f32", 200, 0))
    with open(big, "wb") as out:
        for chunk in jsonl_chunks("fma.rn.f32", 450_000, 0):
            out.write(chunk)
    assert big.stat().st_size > 50 * 2**20
    baseline, status = _peak_mib(["check-vectors", str(small)])
    assert status == 0 and baseline < 150
    peak, status = _peak_mib(["check-vectors", str(big)])
    assert status == 0
    # Reading the whole file first needs about four times its size (the old reader: +240 MiB).
    assert peak < baseline + 120, (baseline, peak)


def test_vectors_output_streams_in_bounded_memory(tmp_path):
    baseline, _ = _peak_mib(["vectors", "fma.rn.f32", "--count", "10"])
    peak, status = _peak_mib(["vectors", "fma.rn.f32", "--count", "1500000", "-o", str(tmp_path / "v.jsonl")])
    assert status == 0 and (tmp_path / "v.jsonl").stat().st_size > 1_500_000 * 100
    # Everything computed before the first line is written: +450 MiB.
    assert peak < baseline + 120, (baseline, peak)


@pytest.mark.heavy
def test_vectors_count_1e8_streams_under_a_1_gib_address_space():
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    process = subprocess.Popen(
        [sys.executable, "-m", "ptxspec", "vectors", "not.b32", "--count", str(10**8)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit,
        cwd=REPO,
    )
    out = process.stdout.read(1 << 20)
    process.kill()
    process.stdout.close()
    process.wait()
    assert len(out) == 1 << 20, process.stderr.read().decode()[-500:]
    process.stderr.close()


# ---------------------------------------------------------------------------------------------
# ptxspec vectors: the same bytes as before the streaming writer, for any chunk size
# ---------------------------------------------------------------------------------------------

#: SHA-256 of the output of the writer before it streamed (every output held in memory).
BEFORE = {
    ("add.rn.f32", 6000, 3, "spec"): "db040977a1bebe17899d38e3f847fc7c36025c01e92d007d33c538000f94f687",
    ("fma.rn.f32", 42000, 1, "sm_90"): "588024500573ad747c2862dd82a008211a8ffe6f13fa9d5ebffb7dc08956b088",
    ("add.rn.f16x2", 12000, 2, "spec"): "b6b922d9a1c0e9ec03f21d81e4d84b6f9615d27a432c38b631c543ef1e8a3092",
    ("ex2.approx.ftz.f32", 2000, 0, "spec"): "a439ee1107b6fb3d40f2567fff0b5005db392c94e1298868fa0470473240756c",
    ("mad.wide.s32", 3000, 5, "spec"): "efc8840e9902107f94b83e0c51f584a4f78d968ee471813fe6e89bfaf1a07d8a",
    ("shfl.sync.down.b32", 90, 0, "spec"): "d9c6c75286114372233211e6edd444320f54039cf65bcc586ec8cf6961f8693a",
}
BEFORE_TESTFLOAT = "4c5c6a723aacb176c858da42fabfd6d8417ac85b2cb59aa53b98c8e1adf113eb"  # add.rn.f32, 6000, seed 0
BEFORE_NPZ = "0bf109fe8be1ad83816d34bb4887b12136462f53c2d03d2615e028c1d002a4db"  # add.rn.f32 mad.wide.s32, 6000, seed 4


@pytest.mark.parametrize("chunk", [None, 511])
def test_vectors_bytes_are_those_of_the_writer_before(monkeypatch, chunk):
    if chunk:
        monkeypatch.setattr(vectors, "CHUNK", chunk)
        monkeypatch.setattr(vectors, "WARP_CHUNK", 7)
    for (instr, count, seed, profile), digest in BEFORE.items():
        assert count > len(vectors.edge_matrix(parse(instr), vectors.EDGE_CAP)) or instr.startswith("shfl")  # random part reached
        assert hashlib.sha256(jsonl_bytes(instr, count, seed, profile)).hexdigest() == digest, instr
    assert hashlib.sha256(vectors.encode_testfloat("add.rn.f32", 6000, 0)).hexdigest() == BEFORE_TESTFLOAT
    assert hashlib.sha256(vectors.npz_bytes(["add.rn.f32", "mad.wide.s32"], 6000, 4)).hexdigest() == BEFORE_NPZ


@pytest.mark.parametrize("text", ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"])
def test_mma_inputs_in_chunks_are_the_inputs_at_once(text):
    form = parse(text)
    whole = mv.mma_inputs(form, 61, 4)
    parts = list(mv.mma_input_chunks(form, 61, 4, chunk=8))
    assert len(parts) == 8
    for name in ("a", "b", "c", "e", "f"):
        if getattr(whole, name) is not None:
            assert np.array_equal(np.concatenate([getattr(p, name) for p in parts]), getattr(whole, name)), name


def test_chunked_draws_equal_one_draw_for_every_kind_of_call():
    def draw(rng, start, stop):
        n = stop - start
        return [
            rng.integers(0, 2, n, dtype=np.uint64),
            rng.integers(3, 1000, (n, 3)),
            rng.random(n),
            rng.integers(0, 1 << 63, n, dtype=np.uint64),
            rng.integers(0, 1 << 64, n, dtype=np.uint64),
            rng.integers(0, 7, 2 * n, dtype=np.uint64),
        ]

    whole = draw(np.random.default_rng(5), 0, 1000)
    for linear in (False, True):
        parts = list(vectors.chunked_draws(np.random.default_rng(5), draw, 1000, 37, linear=linear))
        for k, array in enumerate(whole):
            assert np.array_equal(np.concatenate([p[k] for p in parts]), array), k


def test_count_beyond_the_limit_is_refused():
    from ptxspec.spec.errors import PtxSpecError

    with pytest.raises(PtxSpecError, match="--count must be at most") as error:
        next(jsonl_chunks("fma.rn.f32", 10**30, 0))
    assert error.value.where == "<command line>, --count"


# ---------------------------------------------------------------------------------------------
# The recording, a form at a time
# ---------------------------------------------------------------------------------------------


def test_recording_is_made_a_form_at_a_time():
    from ptxspec.conformance.silicon import replay

    recording = replay.load()
    chosen = {"fma.rn.f32", "div.rn.f64", "shfl.sync.down.b32", "ex2.approx.f32"}
    batches = cv.recording_batches(recording, select=chosen.__contains__)
    sources = []
    for batch in batches:
        assert len({item.where.source if hasattr(item, "where") else item.source for item in batch}) == 1
        assert sum(len(i) if isinstance(i, cv.Block) else 1 for i in batch) <= max(cv.RECORDED_BATCH, max(len(r.outputs[0]) for r in recording.forms.values()))
        sources.append(batch[0].where.source if hasattr(batch[0], "where") else batch[0].source)
    assert {s.rsplit(":", 1)[1] for s in sources} == chosen
    summary = check_batches(cv.recording_batches(recording, select=chosen.__contains__), "sm_90", keep=0)
    assert summary.mismatched == 0 and summary.checked > 0 and summary.mismatches == []


# ---------------------------------------------------------------------------------------------
# The progress bar: on a terminal only
# ---------------------------------------------------------------------------------------------


def test_progress_bar_on_a_terminal_and_nothing_elsewhere(monkeypatch, tmp_path):
    import io

    path = tmp_path / "v.jsonl"
    path.write_bytes(jsonl_bytes("fma.rn.f32", 2000, 0))
    plain = invoke(path)
    assert plain.stderr == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(progress, "_stderr", lambda: screen)
    monkeypatch.setattr(cv, "READ_SIZE", 20_000)
    monkeypatch.setattr(time, "monotonic", iter(range(0, 10**6, 1)).__next__)
    result = invoke(path)
    assert result.stdout == plain.stdout and result.exit_code == plain.exit_code == 0
    drawn = screen.getvalue()
    assert f"{path}: " in drawn and "MiB (" in drawn and "[#" in drawn and drawn.endswith("\r")


# ---------------------------------------------------------------------------------------------
# The recording as a campaign on the engine
# ---------------------------------------------------------------------------------------------


def test_recording_campaign_gives_the_summary_of_one_pass_and_reports_a_forged_output(monkeypatch, tmp_path):
    """check_recording (chunks of recorded forms on the campaign engine) counts what one pass of
    check_batches counts, finds a flipped output bit with its description and place, and a run
    resumed from its store recomputes nothing."""
    import attrs

    from ptxspec.conformance import campaign_engine
    from ptxspec.conformance.silicon import replay

    whole = replay.load()
    chosen = ["fma.rn.f32", "div.rn.f64", "add.rn.bf16", "setp.lt.s32", "ex2.approx.f32", "vadd.u32.u32.u32.add", "cvt.rn.f16.f32"]
    forms = {t: whole.forms[t] for t in chosen if t in whole.forms}
    assert len(forms) >= 5
    first, last = next(iter(forms)), list(forms)[-1]
    for text in (first, last):  # one flipped bit in the first chunk, one in the last
        outputs = list(forms[text].outputs)
        outputs[0] = np.array(outputs[0], copy=True)
        outputs[0][3] ^= 1
        forms[text] = attrs.evolve(forms[text], outputs=tuple(outputs))
    monkeypatch.setattr(replay, "load", lambda folder=None: attrs.evolve(whole, forms=forms))
    monkeypatch.setattr(cv, "RECORDING_CHUNK", 2)
    engine = {"workers": 0, "scheduler": None, "store": tmp_path / "store"}
    summary = cv.check_recording("conformance/data/sm_90", "sm_90", keep=5, engine=engine)
    one_pass = check_batches(cv.recording_batches(replay.load(), root="conformance/data/sm_90"), "sm_90", keep=5)
    assert summary.to_json() == one_pass.to_json() and summary.mismatched == 2
    assert [cv.describe_mismatch(m) for m in summary.mismatches] == [cv.describe_mismatch(m) for m in one_pass.mismatches]
    assert any(f":{first}:4" in cv.describe_mismatch(m)[0] for m in summary.mismatches)
    assert any(f":{last}:4" in cv.describe_mismatch(m)[0] for m in summary.mismatches)
    # keep=1 across chunks: the first in place order, as one pass keeps it
    kept = cv.check_recording("conformance/data/sm_90", "sm_90", keep=1, engine={**engine, "store": None})
    one = check_batches(cv.recording_batches(replay.load(), root="conformance/data/sm_90"), "sm_90", keep=1).finish()
    assert kept.mismatched == 2 and len(kept.mismatches) == 1
    assert cv.describe_mismatch(kept.mismatches[0]) == cv.describe_mismatch(one.mismatches[0])
    calls = []
    monkeypatch.setattr(campaign_engine, "call", lambda *a: calls.append(a))
    again = cv.check_recording("conformance/data/sm_90", "sm_90", keep=5, engine=engine)
    assert not calls and again.to_json() == summary.to_json()
