"""``ptxspec eval --inputs FILE.json``: operands from a file, mma matrices as matrices
(conformance/inputs_json.py). The D printed is compared with the exact product A*B + C computed
here with fractions, on values every format holds exactly."""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from pathlib import Path

import pytest

from tests.test_cli import REPO, ptxspec

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
SPARSE = "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32"


def f32_hex(x: Fraction) -> str:
    value = float(x)
    assert Fraction(value) == x and Fraction(struct.unpack("<f", struct.pack("<f", value))[0]) == x
    return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08x}"


def matrix_cells(stdout: str) -> list[list[str]]:
    """The cells of ``eval --matrix``'s table (a cell may be 'X or Y')."""
    lines = stdout.splitlines()[1:]
    return [[c.strip() for c in line.split(None, 1)[1].replace(" or ", "_or_").split()] for line in lines]


def expected_cell(a, b, c, i: int, j: int) -> str:
    d = sum(Fraction(a[i][k]) * Fraction(b[k][j]) for k in range(len(b))) + Fraction(c[i][j])
    return "0x00000000_or_0x80000000" if d == 0 else f32_hex(d)


def check_product(stdout: str, a, b, c) -> None:
    cells = matrix_cells(stdout)
    assert len(cells) == len(a) and all(len(row) == len(b[0]) for row in cells)
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            assert cell == expected_cell(a, b, c, i, j), (i, j)


def test_the_bundled_example_is_the_exact_product():
    data = json.loads((REPO / "examples/mma/inputs.json").read_text())
    done = ptxspec("eval", "--matrix", "--inputs", "examples/mma/inputs.json", MMA)
    assert done.returncode == 0, done.stderr
    check_product(done.stdout, data["A"], data["B"], data["C"])


def test_bit_patterns_and_numbers_name_the_same_elements(tmp_path: Path):
    """A as f16 bit patterns, B as numbers, C as f32 bit patterns: one product, as in numbers."""
    a = [[(i * 3 + k) % 7 - 3 for k in range(16)] for i in range(16)]
    b = [[((k + 2 * n) % 5 - 2) / 2 for n in range(8)] for k in range(16)]
    c = [[float(i - n) for n in range(8)] for i in range(16)]
    f16 = {v: f"0x{struct.unpack('<H', struct.pack('<e', v))[0]:04x}" for row in a for v in row}
    inputs = {"A": [[f16[v] for v in row] for row in a], "B": b, "C": [[f32_hex(Fraction(v)) for v in row] for row in c]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(inputs))
    done = ptxspec("eval", "--matrix", "--inputs", str(path), MMA)
    assert done.returncode == 0, done.stderr
    check_product(done.stdout, a, b, c)


@pytest.mark.parametrize("selector", [{"f": 0}, {}])
def test_a_whole_sparse_a_is_compressed_with_its_metadata(tmp_path: Path, selector: dict):
    """mma.sp from the whole 2:4-sparse A: D is the dense product (the metadata e is computed; the
    selector f is 0 unless given)."""
    a = [[((i + k) % 3 - 1) if (k % 4) in ((i + k // 4) % 4, (i + k // 4 + 1) % 4) else 0 for k in range(32)] for i in range(16)]
    b = [[(k * 5 + n) % 4 - 1.5 for n in range(8)] for k in range(32)]
    c = [[0.5] * 8 for _ in range(16)]
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"A": a, "B": b, "C": c} | selector))
    done = ptxspec("eval", "--matrix", "--inputs", str(path), SPARSE)
    assert done.returncode == 0, done.stderr
    check_product(done.stdout, a, b, c)


def test_register_operands_and_warp_lanes(tmp_path: Path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"a": "0x7fffffff", "b": 1}))
    done = ptxspec("eval", "--inputs", str(path), "add.s32")
    assert done.returncode == 0 and done.stdout.strip() == "0x80000000"
    path.write_text(json.dumps({"a": list(range(32)), "b": 1, "c": "0x1f"}))
    done = ptxspec("eval", "--inputs", str(path), "shfl.sync.down.b32")
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines()[1:3]] == ["0x00000001", "0x00000002"]


@pytest.mark.parametrize(
    "inputs, instruction, message",
    [
        ({"a": 1, "q": 2}, "add.s32", "add.s32 has no source operand 'q'; it takes a, b"),
        ({"a": 1}, "add.s32", "add.s32 needs the source operand b"),
        ({"a": [1] * 32, "b": 1}, "add.s32", "a list gives the 32 lanes of a warp-level operand"),
        ({"A": [[0.1] * 16] * 16, "B": [[0] * 8] * 16, "C": [[0] * 8] * 16}, MMA, "0.1 is not exactly a .f16 value"),
        ({"A": [[0] * 15] * 16, "B": [[0] * 8] * 16, "C": [[0] * 8] * 16}, MMA, "this matrix is 16 rows of 16 .f16 elements"),
        ({"A": [[0] * 16] * 16, "B": [[0] * 8] * 16, "C": [[0] * 8] * 16, "a.0": 1}, MMA, "a.0 is given twice"),
        ({"A": [[1] * 16] * 16}, "add.s32", "matrices ('A', 'B', 'C') are the operands of mma"),
        ({"A": [[1] * 32] * 16, "B": [[0] * 8] * 32, "C": [[0] * 8] * 16}, SPARSE, "non-zero chunks in block 0 (2:4 sparsity)"),
        ([1, 2], "add.s32", "an inputs file is one JSON object"),
        ({"A": [[float("nan")] * 16] * 16, "B": [[0] * 8] * 16, "C": [[0] * 8] * 16}, MMA, "is not a number a matrix element takes"),
    ],
)
def test_bad_inputs_are_located_errors(tmp_path: Path, inputs, instruction: str, message: str):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(inputs))
    done = ptxspec("eval", "--inputs", str(path), instruction)
    assert done.returncode == 2 and message in done.stderr and str(path) in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_not_json_and_misuse(tmp_path: Path):
    path = tmp_path / "in.json"
    path.write_text('{"a": 1,\n "b": }')
    done = ptxspec("eval", "--inputs", str(path), "add.s32")
    assert done.returncode == 2 and f"{path}:2:" in done.stderr and "invalid JSON" in done.stderr
    path.write_text('{"a": 1, "b": 2}')
    both = ptxspec("eval", "--inputs", str(path), "add.s32", "1", "2")
    assert both.returncode == 2 and "not both" in both.stderr
    with_file = ptxspec("eval", "--inputs", str(path), "--file", "examples/golden.txt")
    assert with_file.returncode == 2 and "not with --file" in with_file.stderr
