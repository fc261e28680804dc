"""mov (§9.7.9.3, §9.7.9.4) and prmt (§9.7.9.7).

The oracles here are written separately from ptxspec's semantics:

* prmt: :func:`prmt_oracle` builds the result one destination BIT at a time from the manual's prose
  ("The 3 lsbs of the selection value specify which of the 8 source bytes ...; msb=1 means
  replicate the sign"), and the specialised modes from closed formulas for the manual's table
  (f4e: byte s+i, b4e: byte s-i mod 8, rc8: s, ecl: max(s, i), ecr: min(s, i), rc16:
  2*(s&1) + (i&1)), not from ptxspec's table. A further test reads the table out of the manual's
  text itself, when the manual is checked out beside the repository.
* mov: lane order is checked against numpy's little-endian views and ``struct`` (the manual's
  ``mov.b64 {lo,hi}, %x; // %x is a double``), and pack/unpack are checked as inverses.
"""

from __future__ import annotations

import random
import re
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.semantics.instructions import evaluate
from ptxspec.spec.catalogue import parse
from ptxspec.spec.data_movement import MOV_TYPES, PRMT_MODES, vector_mov
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError
from ptxspec.spec.types import register_bits

from conftest import SHARED

U32 = st.integers(0, 0xFFFF_FFFF)

# ---------------------------------------------------------------------------------------------
# The independent prmt oracle
# ---------------------------------------------------------------------------------------------


def source_bit(a: int, b: int, k: int) -> int:
    """Bit k (0..63) of the pair {b, a}: bytes b0..b3 are a's, b4..b7 are b's."""
    return (a >> k) & 1 if k < 32 else (b >> (k - 32)) & 1


def mode_source_byte(mode: str, s: int, i: int) -> int:
    """Which source byte lands in destination byte i for selector s, as closed formulas."""
    return {
        "f4e": lambda: s + i,
        "b4e": lambda: (s - i) % 8,
        "rc8": lambda: s,
        "ecl": lambda: max(s, i),
        "ecr": lambda: min(s, i),
        "rc16": lambda: 2 * (s & 1) + (i & 1),
    }[mode]()


def prmt_oracle(mode: str | None, a: int, b: int, c: int) -> int:
    d = 0
    for j in range(32):
        i, bit_in_byte = divmod(j, 8)
        if mode is None:
            selector = (c >> (4 * i)) & 0xF
            byte, replicate = selector & 7, selector >> 3
            k = 8 * byte + (7 if replicate else bit_in_byte)
        else:
            k = 8 * mode_source_byte(mode, c & 3, i) + bit_in_byte
        d |= source_bit(a, b, k) << j
    return d


def prmt(mode: str | None, a: int, b: int, c: int) -> int:
    text = "prmt.b32" + ("" if mode is None else "." + mode)
    (d,) = evaluate(text, [a, b, c])
    return d


def edge_words(rng: random.Random, n: int) -> list[int]:
    """Words whose bytes have both signs: random, plus all-0x80 / all-0x7f patterns."""
    fixed = [0, 0xFFFF_FFFF, 0x8080_8080, 0x7F7F_7F7F, 0x80FF_007F, 0x0123_4567, 0x89AB_CDEF]
    return fixed + [rng.getrandbits(32) for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# prmt
# ---------------------------------------------------------------------------------------------


def test_prmt_manual_byte_numbering():
    """ "{b, a} = {{b7, b6, b5, b4}, {b3, b2, b1, b0}}": selector 0x3210 gives a, 0x7654 gives b."""
    a, b = 0x3322_1100, 0x7766_5544
    assert prmt(None, a, b, 0x3210) == a
    assert prmt(None, a, b, 0x7654) == b
    assert prmt(None, a, b, 0x0123) == 0x0011_2233
    # msb=1: the sign of the selected byte fills the target byte.
    assert prmt(None, 0x0000_80_7F, 0, 0x9999) == 0xFFFF_FFFF
    assert prmt(None, 0x0000_80_7F, 0, 0x0098) == 0x7F7F_FF00
    assert prmt(None, 0x0000_80_7F, 0, 0x8888) == 0x0000_0000


@pytest.mark.parametrize("position", range(4))
def test_prmt_default_every_selector_each_byte(position):
    """Each destination byte's 4-bit selector, all 16 values, against random other selectors."""
    rng = random.Random(700 + position)
    for a in edge_words(rng, 6):
        for b in edge_words(rng, 2):
            for value in range(16):
                c = rng.getrandbits(32) & ~(0xF << (4 * position)) | (value << (4 * position))
                assert prmt(None, a, b, c) == prmt_oracle(None, a, b, c), (hex(a), hex(b), hex(c))


@pytest.mark.parametrize("mode", PRMT_MODES)
def test_prmt_modes_all_selectors(mode):
    """Every mode, every c[1:0], with random upper bits of c (which the modes do not read)."""
    rng = random.Random(710 + PRMT_MODES.index(mode))
    for a in edge_words(rng, 10):
        b = rng.getrandbits(32)
        for s in range(4):
            for _ in range(4):
                c = (rng.getrandbits(30) << 2) | s
                assert prmt(mode, a, b, c) == prmt_oracle(mode, a, b, c), (mode, hex(a), hex(b), hex(c))


@pytest.mark.parametrize("mode", PRMT_MODES)
def test_prmt_mode_rows_are_byte_moves(mode):
    """With distinct byte values 0..7 the result spells out the table row directly."""
    a, b = 0x0302_0100, 0x0706_0504
    for s in range(4):
        d = prmt(mode, a, b, s)
        assert [(d >> (8 * i)) & 0xFF for i in range(4)] == [mode_source_byte(mode, s, i) for i in range(4)]


def _manual_prmt_table() -> dict[str, list[list[int]]] | None:
    seeds = sorted((SHARED / "seeds").glob("001_*.txt"))
    if not seeds:
        return None
    text = seeds[0].read_text(encoding="utf-8")
    start = text.index("9.7.9.7. 数据移动和转换指令:prmt\n\nprmt\n")
    body = text[start : text.index("语义", start)]
    names = {"f4e": "f4e (", "b4e": "b4e (", "rc8": "rc8 (", "ecl": "ecl (", "ecr": "ecr (", "rc16": "rc16 ("}
    table: dict[str, list[list[int]]] = {}
    for mode, marker in names.items():
        after = body[body.index(marker) :].split(")", 1)[1]
        numbers = [int(n) for n in re.findall(r"\d+", after)[:20]]
        # Rows of: selector, d.b3, d.b2, d.b1, d.b0.
        rows = [numbers[5 * r : 5 * r + 5] for r in range(4)]
        assert [row[0] for row in rows] == [0, 1, 2, 3]
        table[mode] = [row[1:] for row in rows]
    return table


def test_prmt_modes_match_manual_table_text():
    """The table as printed in the manual (columns d.b3, d.b2, d.b1, d.b0)."""
    table = _manual_prmt_table()
    if table is None:
        pytest.skip("the manual is not checked out beside the repository")
    a, b = 0x0302_0100, 0x0706_0504
    for mode in PRMT_MODES:
        for s in range(4):
            d = prmt(mode, a, b, s)
            assert [(d >> (8 * i)) & 0xFF for i in (3, 2, 1, 0)] == table[mode][s], (mode, s)


@given(a=U32, b=U32, c=U32, mode=st.sampled_from((None, *PRMT_MODES)))
def test_prmt_property_matches_oracle(a, b, c, mode):
    assert prmt(mode, a, b, c) == prmt_oracle(mode, a, b, c)


@given(a=U32, b=U32, c=U32)
def test_prmt_swapping_sources_flips_selector_bit2(a, b, c):
    """Swapping a and b is the same as toggling bit 2 of every generic selector (byte k <-> k^4)."""
    assert prmt(None, b, a, c) == prmt(None, a, b, c ^ 0x4444)


@given(a=U32, b=U32, c=U32, mode=st.sampled_from(PRMT_MODES))
def test_prmt_modes_read_only_c_low_bits(a, b, c, mode):
    assert prmt(mode, a, b, c) == prmt(mode, a, b, c & 3)


@pytest.mark.heavy
@pytest.mark.parametrize("top", range(16))
def test_prmt_default_exhaustive_selectors(top):
    """All 2**16 generic selectors (split by the top nibble), on one pair with signed bytes."""
    a, b = 0x80FF_017F, 0xC040_00A5
    for low in range(1 << 12):
        c = (top << 12) | low
        assert prmt(None, a, b, c) == prmt_oracle(None, a, b, c), hex(c)


# ---------------------------------------------------------------------------------------------
# mov
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_name", MOV_TYPES)
def test_mov_scalar_is_identity(type_name):
    """ "d = a;": every type moves its bit pattern unchanged (NaN payloads included)."""
    rng = random.Random(type_name)
    width = register_bits(type_name)
    values = {0, (1 << width) - 1, 1 << (width - 1)} | {rng.getrandbits(width) for _ in range(50)}
    for a in values:
        assert evaluate(f"mov.{type_name}", [a]) == (a,)
    with pytest.raises(OperandError):
        evaluate(f"mov.{type_name}", [1 << width])


def test_mov_manual_example_double_to_lo_hi():
    """``mov.b64 {lo,hi}, %x; // %x is a double; lo,hi are .u32``: lo is the low word."""
    x = struct.unpack("<Q", struct.pack("<d", -1.5))[0]
    lo, hi = struct.unpack("<II", struct.pack("<d", -1.5))
    assert evaluate(vector_mov("mov.b64", "unpack", 2), [x]) == (lo, hi)
    assert hi == 0xBFF8_0000 and lo == 0
    assert evaluate(vector_mov("mov.b64", "pack", 2), [lo, hi]) == (x,)


@pytest.mark.parametrize(
    "type_name,count,dtype,element",
    [
        ("b16", 2, "<u2", "<u1"),
        ("b32", 2, "<u4", "<u2"),
        ("b32", 4, "<u4", "<u1"),
        ("b64", 2, "<u8", "<u4"),
        ("b64", 4, "<u8", "<u2"),
    ],
)
def test_mov_lane_order_matches_little_endian_view(type_name, count, dtype, element):
    """Element x is the least significant: the order of a little-endian memory view."""
    rng = np.random.default_rng(count * 100 + len(type_name))
    width = register_bits(type_name)
    for _ in range(100):
        scalar = int(rng.integers(0, 1 << min(width, 63))) | (int(rng.integers(0, 2)) << (width - 1))
        lanes = tuple(int(v) for v in np.array([scalar], dtype=dtype).view(element))
        assert len(lanes) == count
        assert evaluate(vector_mov(f"mov.{type_name}", "unpack", count), [scalar]) == lanes
        assert evaluate(vector_mov(f"mov.{type_name}", "pack", count), list(lanes)) == (scalar,)


@pytest.mark.parametrize("count", (2, 4))
def test_mov_b128_lanes(count):
    """``mov.b128 {%b1, %b2}, %y``: b1 = y[0..63], b2 = y[64..127] (and 32-bit quarters likewise)."""
    rng = random.Random(128 + count)
    n = 128 // count
    for _ in range(50):
        y = rng.getrandbits(128)
        lanes = tuple(int(f"{y:0128b}"[128 - n * (i + 1) : 128 - n * i], 2) for i in range(count))
        assert evaluate(vector_mov("mov.b128", "unpack", count), [y]) == lanes
        assert evaluate(vector_mov("mov.b128", "pack", count), list(lanes)) == (y,)


VECTOR_SHAPES = [("b16", 2), ("b32", 2), ("b32", 4), ("b64", 2), ("b64", 4), ("b128", 2), ("b128", 4)]


@given(data=st.data(), shape=st.sampled_from(VECTOR_SHAPES))
def test_mov_pack_unpack_round_trip(data, shape):
    type_name, count = shape
    width = register_bits(type_name)
    scalar = data.draw(st.integers(0, (1 << width) - 1))
    lanes = evaluate(vector_mov(f"mov.{type_name}", "unpack", count), [scalar])
    assert all(0 <= lane < 1 << (width // count) for lane in lanes)
    assert evaluate(vector_mov(f"mov.{type_name}", "pack", count), list(lanes)) == (scalar,)
    elements = data.draw(st.lists(st.integers(0, (1 << (width // count)) - 1), min_size=count, max_size=count))
    packed = evaluate(vector_mov(f"mov.{type_name}", "pack", count), elements)
    assert evaluate(vector_mov(f"mov.{type_name}", "unpack", count), list(packed)) == tuple(elements)


@given(a=U32, b=U32)
def test_mov_unpack_agrees_with_prmt(a, b):
    """Two instructions that must agree: prmt with 0x5410 gathers the low halves of a and b, and
    pack of the unpacked low halves is the same word."""
    (alo, _) = evaluate(vector_mov("mov.b32", "unpack", 2), [a])
    (blo, _) = evaluate(vector_mov("mov.b32", "unpack", 2), [b])
    assert evaluate(vector_mov("mov.b32", "pack", 2), [alo, blo]) == (prmt(None, a, b, 0x5410),)


def test_mov_vector_operands_and_targets():
    form = vector_mov("mov.b64", "pack", 2)
    assert [(o.name, o.type, o.destination) for o in form.operands] == [("d", "b64", True), ("a.x", "b32", False), ("a.y", "b32", False)]
    form = vector_mov("mov.b32", "unpack", 4)
    assert [(o.name, o.type) for o in form.destinations] == [("d.x", "b8"), ("d.y", "b8"), ("d.z", "b8"), ("d.w", "b8")]
    assert vector_mov("mov.b128", "unpack", 2).target.ptx == (8, 3)
    assert vector_mov("mov.b128", "unpack", 2).target.sm == 70
    assert parse("mov.f64").target.sm == 13
    assert parse("mov.f32").target.sm == 10
    assert parse("prmt.b32.f4e").target.ptx == (2, 0) and parse("prmt.b32").target.sm == 20


# ---------------------------------------------------------------------------------------------
# Legality
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,reason",
    [
        ("prmt.b64", "qualifier .b64 is not allowed with prmt"),
        ("prmt.u32", "qualifier .u32 is not allowed with prmt"),
        ("prmt.b32.f8e", "qualifier .f8e is not allowed with prmt"),
        ("prmt.b32.f4e.rc8", "only one mode qualifier"),
        ("prmt.f4e", "missing type qualifier"),
        ("mov.b8", "qualifier .b8 is not allowed with mov"),
        ("mov.f16", "qualifier .f16 is not allowed with mov"),
        ("mov.b32.b32", "is repeated"),
        ("mov", "missing type qualifier"),
    ],
)
def test_illegal_forms_have_reasons(text, reason):
    with pytest.raises(IllegalForm, match=re.escape(reason)):
        parse(text)


def test_legal_forms_any_qualifier_order():
    assert parse("prmt.rc16.b32").text == "prmt.b32.rc16"
    for mode in PRMT_MODES:
        assert parse(f"prmt.b32.{mode}").get("mode") == mode
    assert parse("prmt.b32").get("mode") is None
    for type_name in MOV_TYPES:
        assert parse(f"mov.{type_name}").family.key == "mov"


def test_vector_mov_legality():
    with pytest.raises(IllegalForm, match="two 8-bit elements, not four"):
        vector_mov("mov.b16", "pack", 4)
    with pytest.raises(IllegalForm, match="not allowed with mov"):
        vector_mov("mov.u32", "pack", 2)
    with pytest.raises(IllegalForm, match="'pack' or 'unpack'"):
        vector_mov("mov.b32", "pack", 3)


def test_operand_errors():
    with pytest.raises(OperandError):
        evaluate("prmt.b32", [1 << 32, 0, 0])
    with pytest.raises(OperandError):
        evaluate("prmt.b32", [0, 0])
    with pytest.raises(OperandError):
        evaluate(vector_mov("mov.b32", "pack", 2), [0x1_0000, 0])
    with pytest.raises(PtxSpecError):
        evaluate(vector_mov("mov.b64", "unpack", 2), [1 << 64])


# ---------------------------------------------------------------------------------------------
# Vector mov reached by text: an operand template after the qualifiers
# ---------------------------------------------------------------------------------------------

from ptxspec.spec.catalogue import CATALOGUE, TemplateItem, parse_template  # noqa: E402
from ptxspec.spec.data_movement import MOV_VECTOR  # noqa: E402
from ptxspec.spec.errors import Location  # noqa: E402


def _braced(names) -> str:
    return "{" + ", ".join(names) + "}"


@pytest.mark.parametrize("type_name,count", VECTOR_SHAPES)
@pytest.mark.parametrize("direction", ["pack", "unpack"])
def test_template_reaches_the_vector_family(type_name, count, direction):
    """Braces mark the vector operand; the names are ignored (``%r1``, ``lo``, ``_``)."""
    lanes = _braced([f"%r{i}" for i in range(count)])
    text = f"mov.{type_name} %d, {lanes}" if direction == "pack" else f"mov.{type_name} {lanes}, %d"
    form = parse(text)
    assert form == vector_mov(f"mov.{type_name}", direction, count)
    assert form.family.key == f"mov.{direction}.x{count}"
    # The canonical template parses back to the same form.
    assert parse(f"{form.text} {form.template}") == form


def test_template_scalar_and_bare_text_are_the_scalar_mov():
    assert parse("mov.b64").family.key == "mov"
    assert parse("mov.b64 d, a").family.key == "mov"
    assert parse("mov.f32 %f1, %f2").family.key == "mov"
    assert parse("mov.b64 d, a").template == "d, a"


@given(data=st.data(), shape=st.sampled_from(VECTOR_SHAPES))
def test_template_evaluation_matches_little_endian_bytes(data, shape):
    """``mov.bN d, {a, b, ...}`` against an independent oracle: the scalar's little-endian bytes,
    cut into the elements in order (element x first, §9.7.9.4's ``d = a.x | (a.y << n) ...``)."""
    type_name, count = shape
    width = register_bits(type_name)
    scalar = data.draw(st.integers(0, (1 << width) - 1))
    raw = scalar.to_bytes(width // 8, "little")
    step = width // 8 // count
    lanes = tuple(int.from_bytes(raw[i * step : (i + 1) * step], "little") for i in range(count))
    names = _braced("xyzw"[:count])
    assert evaluate(f"mov.{type_name} {names}, s", [scalar]) == lanes
    assert evaluate(f"mov.{type_name} s, {names}", list(lanes)) == (scalar,)


def test_template_manual_examples():
    """§9.7.9.4's examples, as written there."""
    x = struct.unpack("<Q", struct.pack("<d", -1.5))[0]
    assert evaluate("mov.b64 {lo,hi}, %x", [x]) == struct.unpack("<II", struct.pack("<d", -1.5))
    assert evaluate("mov.b32 %r1,{a,b}", [0x1111, 0x2222]) == (0x2222_1111,)
    assert evaluate("mov.b32 %r1,{x,y,z,w}", [1, 2, 3, 4]) == (0x0403_0201,)
    assert evaluate("mov.b32 {r,g,b,a},%r1", [0x0403_0201]) == (1, 2, 3, 4)
    assert evaluate("mov.b64 {%r1, _}, %x", [x])[0] == struct.unpack("<II", struct.pack("<d", -1.5))[0]
    y = (0x0123_4567_89AB_CDEF << 64) | 0xFEDC_BA98_7654_3210
    assert evaluate("mov.b128 {%b1, %b2}, %y", [y]) == (0xFEDC_BA98_7654_3210, 0x0123_4567_89AB_CDEF)
    assert evaluate("mov.b128 %y, {%b1, %b2}", [0xFEDC_BA98_7654_3210, 0x0123_4567_89AB_CDEF]) == (y,)


@pytest.mark.parametrize(
    "text,reason,column",
    [
        ("mov.b16 d, {a, b, c, e}", "two 8-bit elements, not four", None),  # a rule of the .x4 family
        ("mov.b32 d, {a, b, c}", "no form of mov.b32 takes operands shaped", 12),  # §5.4.2: length 2 and 4
        ("mov.b64 d, {a, b, c, e, f, g, h, i}", "no form of mov.b64", 12),
        ("mov.b32 d, {a}", "no form of mov.b32", 12),
        ("mov.b32 {a, b}, {c, e}", "no form of mov.b32", 9),
        ("mov.u32 d, {a, b}", "mov.u32 takes a register (a) at operand 2", 12),  # vectors are .bN only
        ("mov.f64 {a, b}, d", "mov.f64 takes a register (d) at operand 1", 9),
        ("mov.b64 d, {a, _}", "a sink '_' is not allowed in a source operand", 12),
        ("mov.b64 {_, _}, d", "at least one register besides the sinks", 9),
        ("mov.b32 d, {a, b", "closed by '}'", 17),
        ("mov.b32 d, {a b}", "unexpected 'b'", 15),
        ("mov.b32 d,, a", "expected a register name", 11),
        ("mov.b32 d a", "expected ','", 11),
        ("mov.b32 d, a, b", "no form of mov.b32 takes operands shaped 'd, a, b'", 15),
        ("prmt.b32 d, a, b", "prmt.b32 takes 4 operand(s) (d, a, b, c), the template has 3", 17),
    ],
)
def test_template_errors_are_located(text, reason, column):
    with pytest.raises(IllegalForm, match=re.escape(reason)) as caught:
        parse(text, where=Location("f.txt", 3, 1))
    where = caught.value.where
    assert isinstance(where, Location) and where.line == 3
    if column is not None:
        assert where.column == column, (text, where)


def test_template_error_on_the_command_line_names_the_character():
    with pytest.raises(IllegalForm) as caught:
        parse("mov.b32 d, {a, b, c}", where="<command line>, INSTRUCTION")
    assert caught.value.where == "<command line>, INSTRUCTION, character 12"


def test_parse_template_items():
    assert parse_template("d|p, {a, _}, %r1") == (
        TemplateItem(("d", "p"), False, 0),
        TemplateItem(("a", "_"), True, 5),
        TemplateItem(("%r1",), False, 13),
    )


def test_vector_families_know_their_shapes():
    """Every vector family's forms: the template shape is the family's, and the element type is
    the instruction type's size over the count ("The overall size of the vector and the size of
    the scalar must match the size of the instruction type")."""
    for (direction, count), family in MOV_VECTOR.items():
        assert family in CATALOGUE.families("mov")
        for type_name in ("b16", "b32", "b64", "b128"):
            if type_name == "b16" and count == 4:
                continue
            form = parse(f"mov.{type_name} {family.operand_syntax}")
            assert form.family is family
            elements = [o for o in form.operands if "." in o.name]
            assert len(elements) == count
            assert all(register_bits(o.type) * count == register_bits(type_name) for o in elements)
            assert all(o.destination == (direction == "unpack") for o in elements)
