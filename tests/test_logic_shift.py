"""§9.7.8 logic and shift: and, or, xor, not, cnot, lop3 (with and without .BoolOp), shf, shl, shr.

Oracles: Python's integer operators per the manual's "Semantics" lines; for lop3 the truth table
built from the manual's own definition (immLut = F(0xF0, 0xCC, 0xAA)) by evaluating F bit by bit
from the table's rows; for shf a bit-by-bit reading of the pseudo-code on the 64-bit
concatenation [b, a]; numpy's shifts for shr on signed types.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.semantics.instructions import evaluate
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import IllegalForm, OperandError

WIDTH = {"pred": 1, "b16": 16, "b32": 32, "b64": 64}


def one(text: str, *sources: int) -> int:
    (result,) = evaluate(text, list(sources))
    return result


@pytest.mark.parametrize("type_name", WIDTH)
def test_bitwise_on_random_inputs(type_name):
    rng = random.Random(7)
    mask = (1 << WIDTH[type_name]) - 1
    for _ in range(200):
        a, b = rng.getrandbits(WIDTH[type_name]), rng.getrandbits(WIDTH[type_name])
        assert one(f"and.{type_name}", a, b) == a & b
        assert one(f"or.{type_name}", a, b) == a | b
        assert one(f"xor.{type_name}", a, b) == a ^ b
        assert one(f"not.{type_name}", a) == mask ^ a


def test_predicate_truth_tables():
    for p in (0, 1):
        assert one("not.pred", p) == 1 - p
        for q in (0, 1):
            assert one("and.pred", p, q) == (p and q)
            assert one("or.pred", p, q) == (p or q)
            assert one("xor.pred", p, q) == (p != q)


@pytest.mark.parametrize("type_name", ["b16", "b32", "b64"])
def test_cnot(type_name):
    assert one(f"cnot.{type_name}", 0) == 1
    for a in (1, 2, (1 << WIDTH[type_name]) - 1, 1 << (WIDTH[type_name] - 1)):
        assert one(f"cnot.{type_name}", a) == 0


@given(st.sampled_from(["b16", "b32", "b64"]), st.data())
def test_xor_self_is_zero_and_not_is_involution(type_name, data):
    a = data.draw(st.integers(0, (1 << WIDTH[type_name]) - 1))
    assert one(f"xor.{type_name}", a, a) == 0
    assert one(f"not.{type_name}", one(f"not.{type_name}", a)) == a
    b = data.draw(st.integers(0, (1 << WIDTH[type_name]) - 1))
    # De Morgan: ~(a & b) == ~a | ~b
    assert one(f"not.{type_name}", one(f"and.{type_name}", a, b)) == one(f"or.{type_name}", one(f"not.{type_name}", a), one(f"not.{type_name}", b))


def _truth_table(imm_lut: int) -> dict[tuple[int, int, int], int]:
    """The manual's table (§9.7.8.6): row k has ta, tb, tc = bit k of 0xF0, 0xCC, 0xAA, and the
    operation's output in that row is bit k of immLut = F(ta, tb, tc)."""
    return {((0xF0 >> k) & 1, (0xCC >> k) & 1, (0xAA >> k) & 1): (imm_lut >> k) & 1 for k in range(8)}


@pytest.mark.parametrize("chunk", range(4))
def test_lop3_every_immlut_against_truth_table(chunk):
    rng = random.Random(chunk)
    for imm_lut in range(chunk * 64, chunk * 64 + 64):
        table = _truth_table(imm_lut)
        for _ in range(8):
            a, b, c = (rng.getrandbits(32) for _ in range(3))
            expected = sum(table[(a >> i) & 1, (b >> i) & 1, (c >> i) & 1] << i for i in range(32))
            assert one("lop3.b32", a, b, c, imm_lut) == expected


def test_lop3_manual_examples():
    # The manual's worked examples: F = a&b&c is 0x80, a|b|c is 0xFE, a&b&~c is 0x40, (a&b|c)^a is 0x1A.
    rng = random.Random(3)
    for _ in range(50):
        a, b, c = (rng.getrandbits(32) for _ in range(3))
        assert one("lop3.b32", a, b, c, 0x80) == a & b & c
        assert one("lop3.b32", a, b, c, 0xFE) == a | b | c
        assert one("lop3.b32", a, b, c, 0x40) == a & b & ~c & 0xFFFFFFFF
        assert one("lop3.b32", a, b, c, 0x1A) == ((a & b | c) ^ a)
        assert one("lop3.b32", a, b, c, 0x00) == 0
        assert one("lop3.b32", a, b, c, 0xFF) == 0xFFFFFFFF
    # Applying F to the manual's constants gives immLut back, for every immLut.
    for imm_lut in range(256):
        assert one("lop3.b32", 0xF0, 0xCC, 0xAA, imm_lut) & 0xFF == imm_lut


@pytest.mark.parametrize("boolop", ["or", "and"])
def test_lop3_boolop(boolop):
    rng = random.Random(11)
    for _ in range(300):
        a, b, c = (rng.getrandbits(32) for _ in range(3))
        imm_lut, q = rng.randrange(256), rng.randrange(2)
        d = one("lop3.b32", a, b, c, imm_lut)
        got = evaluate(f"lop3.{boolop}.b32", [a, b, c, imm_lut, q])
        expected_p = (d != 0) or bool(q) if boolop == "or" else (d != 0) and bool(q)
        assert got == (d, int(expected_p))


def test_lop3_forms():
    assert parse("lop3.or.b32").target.sm == 70 and parse("lop3.or.b32").target.ptx == (8, 2)
    assert parse("lop3.b32").target.sm == 50
    with pytest.raises(IllegalForm, match="b64"):
        parse("lop3.b64")
    with pytest.raises(IllegalForm, match="xor"):
        parse("lop3.xor.b32")
    with pytest.raises(OperandError):
        evaluate("lop3.b32", [1, 2, 3, 256])


def _shf_reference(direction: str, mode: str, a: int, b: int, c: int) -> int:
    """Bit by bit: source bit i is a's bit i (i < 32) or b's bit i-32. shf.l takes the 32 msbs of
    the left-shifted 64-bit value (result bit j = source bit j + 32 - n), shf.r the 32 lsbs of the
    right-shifted one (result bit j = source bit j + n); bits shifted in are 0."""
    n = min(c, 32) if mode == "clamp" else c & 0x1F
    source = [(a >> i) & 1 for i in range(32)] + [(b >> i) & 1 for i in range(32)]
    d = 0
    for j in range(32):
        k = j + 32 - n if direction == "l" else j + n
        bit = source[k] if 0 <= k < 64 else 0
        d |= bit << j
    return d


@pytest.mark.parametrize("direction", ["l", "r"])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_shf_bit_by_bit(direction, mode):
    rng = random.Random(f"{direction}.{mode}")
    amounts = list(range(0, 70)) + [0xFFFFFFFF, 0x80000000, 0x20, 0x3F, 0x40]
    for c in amounts + [rng.getrandbits(32) for _ in range(100)]:
        a, b = rng.getrandbits(32), rng.getrandbits(32)
        assert one(f"shf.{direction}.{mode}.b32", a, b, c) == _shf_reference(direction, mode, a, b, c), (a, b, c)


def test_shf_rotates_when_a_equals_b():
    # "Use funnel shifts ... to perform 32-bit left or right rotate by supplying the same value for
    # source arguments a and b."
    rng = random.Random(5)
    for _ in range(100):
        x, n = rng.getrandbits(32), rng.randrange(32)
        assert one("shf.l.wrap.b32", x, x, n) == ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF
        assert one("shf.r.wrap.b32", x, x, n) == ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


@pytest.mark.parametrize("type_name", ["b16", "b32", "b64"])
def test_shl(type_name):
    width = int(type_name[1:])
    rng = random.Random(width)
    for b in list(range(width + 3)) + [0xFFFFFFFF, 1000]:
        a = rng.getrandbits(width)
        # "Shift amounts greater than the register width N are clamped to N": everything shifts out.
        expected = (a << b) % (1 << width) if b < width else 0
        assert one(f"shl.{type_name}", a, b) == expected


@pytest.mark.parametrize("type_name", ["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"])
def test_shr(type_name):
    width = int(type_name[1:])
    signed = type_name[0] == "s"
    np_type = {16: np.int16, 32: np.int32, 64: np.int64}[width] if signed else {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    rng = random.Random(width * 3 + signed)
    for b in list(range(width + 3)) + [0xFFFFFFFF, 0x80000000]:
        for a in (rng.getrandbits(width), 1 << (width - 1), (1 << width) - 1, 0, 1):
            value = (
                np.array([a], dtype=np.uint64).astype(np_type)
                if not signed
                else np.array([a], dtype=np.uint64).view(np.int64).astype(np_type)
                if width == 64
                else np.array([a - (a >> (width - 1) << width)], dtype=np_type)
            )
            shifted = value >> np_type(min(b, width - 1))
            if b >= width and not signed:
                shifted = np.zeros(1, dtype=np_type)
            expected = int(shifted.astype(np.int64 if signed else np.uint64)[0]) % (1 << width)
            assert one(f"shr.{type_name}", a, b) == expected, (a, b)


def test_shift_amount_is_u32_and_forms():
    assert [o.type for o in parse("shl.b64").operands] == ["b64", "b64", "u32"]
    with pytest.raises(OperandError):
        evaluate("shr.u16", [1, 1 << 32])
    with pytest.raises(IllegalForm, match="s32"):
        parse("shl.s32")  # shl has only the .bN types
    with pytest.raises(IllegalForm, match="b32"):
        parse("shf.l.b32")  # .mode is required
    with pytest.raises(IllegalForm, match="b64"):
        parse("shf.l.clamp.b64")  # shf requires .b32
    with pytest.raises(IllegalForm, match="pred"):
        parse("cnot.pred")
    assert parse("shf.r.wrap.b32").target.sm == 32


def test_ptxas_agrees_on_forms(ptxas, tmp_path):
    """Every form of these families is accepted by ptxas for sm_90, and a few illegal ones are not."""
    import subprocess

    legal = [
        "and.pred p, p, p",
        "or.b16 h, h, h",
        "xor.b64 l, l, l",
        "not.b32 r, r",
        "cnot.b16 h, h",
        "lop3.b32 r, r, r, r, 0x1a",
        "lop3.or.b32 r|p, r, r, r, 0x3f, p",
        "lop3.and.b32 _|p, r, r, r, 0x3f, p",
        "shf.l.clamp.b32 r, r, r, r",
        "shf.r.wrap.b32 r, r, r, r",
        "shl.b64 l, l, r",
        "shr.s16 h, h, r",
        "shr.u64 l, l, r",
    ]
    illegal = ["shf.l.clamp.b64 l, l, l, r", "cnot.pred p, p", "shl.s32 r, r, r", "lop3.b64 l, l, l, l, 1"]

    def assemble(line: str) -> bool:
        src = tmp_path / "t.ptx"
        src.write_text(".version 8.7\n.target sm_90\n.entry k() {\n.reg .b32 r; .reg .b64 l; .reg .b16 h; .reg .pred p;\n" + line + ";\nret;\n}\n")
        return subprocess.run([ptxas, "-arch=sm_90", str(src), "-o", str(tmp_path / "t.o")], capture_output=True).returncode == 0

    for line in legal:
        parse(line.split()[0])
        assert assemble(line), line
    for line in illegal:
        with pytest.raises(IllegalForm):
            parse(line.split()[0])
        assert not assemble(line), line
