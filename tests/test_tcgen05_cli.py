"""``ptxspec eval --state`` and the tcgen05 vectors of ``ptxspec vectors`` / ``check-vectors``.

The expected lane values are read from the example state file itself (its cells), not from
ptxspec; the commands run in-process through :func:`ptxspec.conformance.cli.main` (one test runs
the console script) to keep the file fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ptxspec.conformance.cli import main
from ptxspec.conformance.state_json import SCHEMA, diff, state_from_json, state_to_json
from ptxspec.semantics.state import LOW_HALF, Allocation, State, TensorMemory

REPO = Path(__file__).resolve().parent.parent
STATE = REPO / "examples" / "tcgen05" / "state.json"
PROGRAM = REPO / "examples" / "tcgen05" / "steps.txt"
LD = "tcgen05.ld.sync.aligned.32x32b.x2.b32"
ALLOC = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def example_cells() -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, column) -> (value, halves) of the example file, read with json alone."""
    obj = json.loads(STATE.read_text())
    return {(c[0], c[1]): (int(c[2], 16), c[3] if len(c) > 3 else 3) for c in obj["tensor_memory"]["cells"]}


def assert_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ptxspec: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# ---------------------------------------------------------------------------------------------
# eval --state
# ---------------------------------------------------------------------------------------------


def test_eval_ld_reads_the_state_file(capsys):
    code, out, err = run(capsys, "eval", "--state", str(STATE), LD, "0")
    assert code == 0, err
    cells = example_cells()
    lines = out.splitlines()
    for r in (0, 1):
        want = [f"0x{cells[(t, r)][0]:08x}" if (t, r) in cells and cells[(t, r)][1] == 3 else "undefined" for t in range(32)]
        shown = ",".join(want) if len(set(want)) > 1 else f"{want[0]} in every lane"
        assert lines[r] == f"r.{r}: {shown}"
    assert lines[2:] == ["no change"]


def test_eval_json_gives_results_changes_and_state_after(capsys):
    code, out, err = run(
        capsys, "eval", "--json", "--state", str(STATE), "--warp", "0", "tcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32", "0x2", "0x12345678"
    )
    assert code == 0, err
    obj = json.loads(out)
    assert obj["outputs"] == [] and obj["warp"] == 0 and obj["inputs"] == ["0x00000002", "0x12345678"]
    cells = obj["changes"]["tensor_memory"]["cells"]
    assert [0, 2, None, ["0x00005678", 1]] in cells and [5, 3, None, ["0x00001234", 1]] in cells
    after = state_from_json(obj["state_after"])
    assert after.tensor_memory.defined()[7, 3] == LOW_HALF and int(after.tensor_memory.words()[7, 3]) & 0xFFFF == 0x1234


def test_eval_file_threads_the_state_and_writes_it(capsys, tmp_path):
    out_path = tmp_path / "after.json"
    code, out, err = run(capsys, "eval", "--state", str(STATE), "--file", str(PROGRAM), "--state-out", str(out_path))
    assert code == 0, err
    assert "tcgen05.st.sync.aligned.32x32b.x1.b32 0x00000002 0x40490fdb ->" in out
    assert "  r.1: 0x40490fdb in every lane" in out  # the ld.red after the st reads what it stored
    assert "    column   2, lanes 2-31: undefined -> 0x40490fdb" in out
    final = json.loads(out_path.read_text())
    assert final["tensor_memory"]["allocations"] == [[64, 64]] and final["tensor_memory"]["relinquished"] is True
    assert final["tensor_memory"]["cells"] == []  # the dealloc left the written columns undefined
    assert final["shared"][16:18] == "40"  # the alloc wrote address 64 (lane 0, column 64) at byte 8


def test_eval_console_script(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "ptxspec", "eval", "--state", str(STATE), ALLOC, "0x8", "64"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["allocations: columns 0-63 -> columns 0-63, columns 64-127", "shared memory byte 0x8: 00 -> 40"]


@pytest.mark.parametrize(
    "args, needles",
    [
        ((LD, "0"), ("<command line>, INSTRUCTION", "--state FILE.json")),  # no state
        (("--state", "{STATE}", "--warp", "1", LD, "0"), ("warp 1 of its warpgroup can access lanes 32-63 only", "§9.7.16.8.1")),
        (("--state", "{STATE}", LD, "0x40"), ("column 64, which is not allocated", "columns 0-63")),
        (("--state", "{STATE}", LD, "0x0000003f"), ("column 64, which is not allocated",)),  # columns 63-64: the second is outside
        (("--state", "{STATE}", "tcgen05.ld.sync.aligned.16x256b.x64.b32", "0"), ("<command line>, INSTRUCTION", "NA")),
        (("--state", "{STATE}", "tcgen05.cp.cta_group::1.128x256b", "0", "0xffffffffffffffff"), ("shared memory descriptor", "§9.7.16.4.1")),
        (("--state", "{STATE}", "--warp", "4", LD, "0"), ("<command line>, --warp", "0-3")),
        (("--state", "{STATE}", "--warp", "0", ALLOC, "0", "32"), ("<command line>, --warp",)),
        (("--state", "{STATE}", "add.f32", "0", "0"), ("<command line>, --state", "reads no state")),
        (("--state", "{STATE}", "--active", "0xff", "tcgen05.wait::ld.sync.aligned"), (".sync.aligned",)),
        (("--state", "{STATE}", "tcgen05.shift.cta_group::1.down", "0x10000"), ("aligned to 32",)),
        (("--state-out", "x.json", LD, "0"), ("--state-out needs --state",)),
    ],
)
def test_eval_state_errors_are_located(capsys, args, needles):
    args = tuple(str(STATE) if a == "{STATE}" else a for a in args)
    assert_error(*run(capsys, "eval", *args), *needles)


@pytest.mark.parametrize(
    "text, needles",
    [
        ('{"shared": "00",\n "tensor_memory": {"cells": [[0, 0 "0x1"]]}}', ("bad.json:2:36", "invalid JSON")),
        ('{"tensor_memory": {"cells": [[0, 0, "0x1"], [200, 0, "0x2"]]}}', ("bad.json: tensor_memory.cells[1]", "lane", "0-127")),
        ('{"tensor_memory": {"cells": [[0, 0, "0x1"], [0, 0, "0x2"]]}}', ("tensor_memory.cells[1]", "listed twice")),
        ('{"tensor_memory": {"cells": [[0, 0, "0x12345", 1]]}}', ("tensor_memory.cells[0]", "halves")),
        ('{"tensor_memory": {"cells": [[0, 0, "zz"]]}}', ("tensor_memory.cells[0]", "hex string")),
        ('{"tensor_memory": {"allocations": [[16, 32]]}}', ("bad.json: tensor_memory.allocations", "32-column units")),
        ('{"tensor_memory": {"allocations": [[0, 64], [32, 32]]}}', ("tensor_memory.allocations", "overlap")),
        ('{"shared": "0g"}', ("bad.json: shared", "hex digit")),
        ('{"shared": "000"}', ("bad.json: shared", "odd")),
        ('{"sharde": ""}', ("bad.json: sharde", "unknown field")),
        ('{"cta_group": 3}', ("bad.json: cta_group",)),
        ('{"peer": {"peer": {}}}', ("bad.json: peer.peer",)),
        ("[]", ("bad.json: (the top level)", "expected an object")),
    ],
)
def test_malformed_state_file_is_a_located_error(capsys, tmp_path, monkeypatch, text, needles):
    monkeypatch.chdir(tmp_path)
    Path("bad.json").write_text(text)
    assert_error(*run(capsys, "eval", "--state", "bad.json", "tcgen05.wait::ld.sync.aligned"), *needles)


def test_missing_state_file(capsys, tmp_path):
    assert_error(*run(capsys, "eval", "--state", str(tmp_path / "none.json"), LD, "0"), "none.json", "cannot read")


# ---------------------------------------------------------------------------------------------
# The state schema
# ---------------------------------------------------------------------------------------------


def test_state_json_round_trip_and_diff():
    tm = TensorMemory(allocations=(Allocation(0, 64), Allocation(128, 32)), relinquished=True, last_columns=32)
    tm = tm.with_cells([0, 5, 127], [0, 63, 511], [0xDEADBEEF, 0x12345678, 1], defined=[3, 1, 2])
    peer = State(b"\x01\x02", tm, 2)
    state = State(bytes(range(20)), tm, 2, peer)
    obj = state_to_json(state)
    assert obj["tensor_memory"]["cells"] == [[0, 0, "0xdeadbeef"], [5, 63, "0x00005678", 1], [127, 511, "0x00000000", 2]]
    back = state_from_json(json.loads(json.dumps(obj)))
    assert back == state and state_to_json(back) == obj
    assert state_from_json({}) == State()
    changed = back.with_tensor_memory(back.tensor_memory.with_cells([1], [1], [7]))
    assert diff(back, changed) == {"tensor_memory": {"cells": [[1, 1, None, "0x00000007"]]}}
    assert "tensor_memory" in SCHEMA


# ---------------------------------------------------------------------------------------------
# vectors / check-vectors
# ---------------------------------------------------------------------------------------------

FORMS = (
    ALLOC,
    "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
    "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
    "tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32",
    "tcgen05.ld.red.sync.aligned.32x32b.x4.min.NaN.f32",
    "tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32",
    "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23",
    "tcgen05.shift.cta_group::2.down",
    "tcgen05.fence::before_thread_sync",
)


@pytest.fixture(scope="module")
def everything(tmp_path_factory) -> Path:
    """``ptxspec vectors tcgen05 --count 1``: one vector of every default form."""
    path = tmp_path_factory.mktemp("tc") / "all.jsonl"
    with pytest.raises(SystemExit) as done:
        main(["vectors", "tcgen05", "--count", "1", "--seed", "7", "-o", str(path)])
    assert done.value.code == 0
    return path


def test_vectors_round_trip_every_form(capsys, everything):
    from ptxspec.conformance.tcgen05_vectors import DEFAULT_FORMS

    lines = everything.read_text().splitlines()
    assert [json.loads(line)["instr"] for line in lines] == list(DEFAULT_FORMS)
    first = json.loads(lines[0])
    assert list(first) == ["instr", "state", "inputs", "active", "outputs", "state_after", "profile"]
    ld = json.loads(next(line for line in lines if '"tcgen05.ld.sync.aligned.32x32b.x1.b32"' in line))
    assert list(ld) == ["instr", "state", "inputs", "active", "warp", "outputs", "state_after", "profile"] and len(ld["outputs"][0]) == 32
    # replayed under sm_100: the mma lines' D bit for bit (the spec level's sets: test_tcgen05_mma_vectors.py)
    code, out, err = run(capsys, "check-vectors", "--profile", "sm_100", str(everything))
    assert code == 0, out + err
    assert out.startswith(f"checked {len(DEFAULT_FORMS)} vector(s) under profile sm_100: {len(DEFAULT_FORMS)} matched, 0 mismatched, 0 unsupported")


def test_vectors_are_deterministic(capsys, tmp_path):
    paths = [tmp_path / f"{k}.jsonl" for k in range(3)]
    for path, seed in zip(paths, ("3", "3", "4")):
        with pytest.raises(SystemExit) as done:
            main(["vectors", *FORMS, "--count", "2", "--seed", seed, "-o", str(path)])
        assert done.value.code == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
    code, out, err = run(capsys, "check-vectors", str(paths[0]), str(paths[2]))
    assert code == 0 and "0 mismatched" in out, out + err


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, objs: list[dict]) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))


def test_corrupted_lines_are_found_with_their_line_numbers(capsys, everything, tmp_path):
    objs = [o for o in _lines(everything) if not o["instr"].startswith("tcgen05.mma")]  # the mma lines: test_tcgen05_mma_vectors.py
    index = {o["instr"]: k for k, o in enumerate(objs)}
    ld = objs[index["tcgen05.ld.sync.aligned.32x32b.x4.b32"]]
    lane = next(i for i, v in enumerate(ld["outputs"][1]) if isinstance(v, str))
    ld["outputs"][1][lane] = f"0x{int(ld['outputs'][1][lane], 16) ^ 0x80:08x}"
    st = objs[index["tcgen05.st.sync.aligned.16x64b.x1.b32"]]
    st["state_after"]["tensor_memory"]["cells"][0][2] = "0xdeadbeef" if st["state_after"]["tensor_memory"]["cells"][0][2] != "0xdeadbeef" else "0x0"
    sh = objs[index["tcgen05.shift.cta_group::1.down"]]
    sh["inputs"][0] = "0x0000ffff"  # column 65535: outside Tensor Memory
    _write(tmp_path / "bad.jsonl", objs)
    code, out, err = run(capsys, "check-vectors", str(tmp_path / "bad.jsonl"))
    assert code == 1, out + err
    assert "3 mismatched" in out.splitlines()[0]
    numbers = {o["instr"]: k + 1 for k, o in enumerate(objs)}
    assert f"bad.jsonl:{numbers['tcgen05.ld.sync.aligned.32x32b.x4.b32']}: tcgen05.ld.sync.aligned.32x32b.x4.b32: r.1, lane {lane}:" in out
    assert f"bad.jsonl:{numbers['tcgen05.st.sync.aligned.16x64b.x1.b32']}: tcgen05.st.sync.aligned.16x64b.x1.b32: state_after is not" in out
    assert "-> 0xdeadbeef" in out or "0xdeadbeef ->" in out or "-> 0x00000000" in out
    assert f"bad.jsonl:{numbers['tcgen05.shift.cta_group::1.down']}: tcgen05.shift.cta_group::1.down: the specification refuses this input" in out


def test_another_allowed_alloc_choice_matches(capsys, tmp_path):
    state = State(bytes(16), TensorMemory(allocations=(Allocation(0, 32),)))
    from ptxspec.conformance.tcgen05_vectors import Case, vector_dict
    from ptxspec.spec.catalogue import parse

    obj = vector_dict(parse(ALLOC), Case(state, (4, 64), 0xFFFFFFFF, None))
    assert obj["state_after"]["tensor_memory"]["allocations"] == [[0, 32], [32, 64]]  # the lowest choice
    other = json.loads(json.dumps(obj))
    other["state_after"]["tensor_memory"]["allocations"] = [[0, 32], [256, 64]]
    other["state_after"]["shared"] = "00000000" + "00010000" + "00" * 8  # address 256 at byte 4
    unaligned = json.loads(json.dumps(other))  # columns 288-351: free, on a 32-column unit, so allowed too
    unaligned["state_after"]["tensor_memory"]["allocations"] = [[0, 32], [288, 64]]
    unaligned["state_after"]["shared"] = "00000000" + "20010000" + "00" * 8
    wrong = json.loads(json.dumps(other))
    wrong["state_after"]["shared"] = "00000000" + "20000000" + "00" * 8  # the address of column 32, the allocation at 256
    _write(tmp_path / "a.jsonl", [obj, other, unaligned, wrong])
    code, out, err = run(capsys, "check-vectors", str(tmp_path / "a.jsonl"))
    assert code == 1, out + err
    assert "3 matched, 1 mismatched" in out.splitlines()[0]
    assert "a.jsonl:4:" in out and "allocations: columns 0-31, columns 32-95 -> columns 0-31, columns 256-319" in out


@pytest.mark.parametrize(
    "change, needles",
    [
        (lambda o: o["state"]["tensor_memory"]["cells"].append([0, 0, "0x1", 7]), ("v.jsonl:1: state.tensor_memory.cells[", "halves")),
        (lambda o: o["state_after"].update(shared="xyz"), ("v.jsonl:1: state_after.shared",)),
        (lambda o: o.update(warp=9), ("v.jsonl:1:", "'warp'", "0-3")),
        (lambda o: o.pop("state_after"), ("v.jsonl:1:", "state_after")),
        (lambda o: o["outputs"].pop(), ("v.jsonl:1:", "'outputs'")),
        (lambda o: o.update(inputs=["0x1"]), ("v.jsonl:1:", "inputs[0]", "8 hex digit")),
    ],
)
def test_malformed_vector_lines_are_located(capsys, tmp_path, change, needles):
    from ptxspec.conformance.tcgen05_vectors import Case, vector_dict
    from ptxspec.spec.catalogue import parse

    state = State(b"", TensorMemory(allocations=(Allocation(0, 32),)).with_cells(range(32), [0] * 32, range(32)))
    obj = vector_dict(parse("tcgen05.ld.sync.aligned.32x32b.x1.b32"), Case(state, (0,), 0xFFFFFFFF, 0))
    change(obj)
    _write(tmp_path / "v.jsonl", [obj])
    assert_error(*run(capsys, "check-vectors", str(tmp_path / "v.jsonl")), *needles)


def test_vectors_refuse_other_formats(capsys, tmp_path):
    assert_error(*run(capsys, "vectors", "add.f32", LD, "--format", "npz", "-o", str(tmp_path / "x.npz")), "<command line>, INSTR 2", "jsonl")


def test_docs_eval_examples_are_real_output(capsys, monkeypatch):
    """The ``$ ptxspec eval --state ...`` examples of docs/vectors.rst ("``ptxspec eval --state``")."""
    import re
    import shlex

    text = (REPO / "docs" / "vectors.rst").read_text().split("``ptxspec eval --state``\n", 1)[1]
    sessions: list[tuple[str, list[str]]] = []
    for block in re.findall(r"\.\. code-block:: text\n\n((?:   .*\n|\n)+)", text):
        for line in block.splitlines():
            if line[3:].startswith("$ "):
                sessions.append((line[5:], []))
            elif line.strip():
                sessions[-1][1].append(line[3:])
    assert len(sessions) >= 6
    monkeypatch.chdir(REPO)
    for command, expected in sessions:
        argv = shlex.split(command)
        assert argv[0] == "ptxspec"
        code, out, err = run(capsys, *argv[1:])
        assert (out + err).splitlines() == expected, command


# ---------------------------------------------------------------------------------------------
# tcgen05.mma lines (tests/test_tcgen05_mma_vectors.py has the rest)
# ---------------------------------------------------------------------------------------------


def test_mma_vectors_through_the_command_line(capsys, tmp_path):
    forms = ("tcgen05.mma.cta_group::1.kind::f8f6f4", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16")
    path = tmp_path / "mma.jsonl"
    with pytest.raises(SystemExit) as done:
        main(["vectors", *forms, "--count", "2", "--seed", "1", "-o", str(path)])
    assert done.value.code == 0
    lines = _lines(path)
    assert [o["instr"] for o in lines] == [forms[0]] * 2 + [forms[1]] * 2 and {o["profile"] for o in lines} == {"sm_100"}
    code, out, err = run(capsys, "check-vectors", "--profile", "sm_100", str(path))
    assert code == 0 and out.startswith("checked 4 vector(s) under profile sm_100: 4 matched, 0 mismatched"), out + err
    cells = lines[0]["state_after"]["tensor_memory"]["cells"]
    before = {(c[0], c[1]): c for c in lines[0]["state"]["tensor_memory"]["cells"]}
    k = next(i for i, c in enumerate(cells) if before.get((c[0], c[1])) != c)
    cells[k][2] = f"0x{int(cells[k][2], 16) ^ 1:08x}"
    _write(tmp_path / "bad.jsonl", lines[:1])
    code, out, err = run(capsys, "check-vectors", "--profile", "sm_100", str(tmp_path / "bad.jsonl"))
    assert code == 1 and "bad.jsonl:1" in out and "state_after is not the state the instruction leaves" in out, out + err
