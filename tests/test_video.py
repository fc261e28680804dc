"""§9.7.18 video instructions against an independent reading of the manual's pseudo-code.

The oracle below is written from §9.7.18.1 alone and on purpose differently from
ptxspec.semantics.video: parts are extracted as bytes (int.from_bytes with signed=...), the
saturation bounds are the manual's S8_MAX ... U32_MIN constants written out, and the merge masks
are the optMerge table copied literally. Every opcode x dtype x atype x btype x .sat x
(no third operand | .add | .min | .max | d.b0 ... d.h1) is compared on seeded random and edge
inputs with random operand selectors; the heavy cases add every asel x bsel pair.
"""

from __future__ import annotations

import itertools
import re
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxspec.conformance.cli import cli
from ptxspec.semantics.instructions import evaluate
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import IllegalForm, OperandError

SELECTORS = (None, "b0", "b1", "b2", "b3", "h0", "h1")
TYPES = ("u32", "s32")
ARITHMETIC = ("vadd", "vsub", "vabsdiff", "vmin", "vmax")
SHIFTS = ("vshl", "vshr")
CMPS = ("eq", "ne", "lt", "le", "gt", "ge")
#: No third operand, a secondary operation, or a destination selector (merge).
THIRD = (None, "add", "min", "max", "d.b0", "d.b1", "d.b2", "d.b3", "d.h0", "d.h1")

EDGES = (
    0,
    1,
    2,
    0x1F,
    0x20,
    0x21,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    0x7FFFFFFF,
    0x80000000,
    0x80000001,
    0xFFFFFFFE,
    0xFFFFFFFF,
    0x7F7F7F7F,
    0x80808080,
    0xFF00FF00,
    0x00FF00FF,
    0x7FFF8000,
    0x80007FFF,
)

# --- the oracle ---------------------------------------------------------------------------

S8_MAX, S8_MIN, U8_MAX, U8_MIN = 127, -128, 255, 0
S16_MAX, S16_MIN, U16_MAX, U16_MIN = 32767, -32768, 65535, 0
S32_MAX, S32_MIN, U32_MAX, U32_MIN = 2**31 - 1, -(2**31), 2**32 - 1, 0

MERGE = {  # optMerge: (shift of tmp's part, mask of tmp's part, mask kept from c)
    "h0": (0, 0xFFFF, 0xFFFF0000),
    "h1": (16, 0xFFFF, 0x0000FFFF),
    "b0": (0, 0xFF, 0xFFFFFF00),
    "b1": (8, 0xFF, 0xFFFF00FF),
    "b2": (16, 0xFF, 0xFF00FFFF),
    "b3": (24, 0xFF, 0x00FFFFFF),
}


def extract(x: int, signed: bool, sel: str | None) -> int:
    raw = x.to_bytes(4, "little")
    if sel is None:
        part = raw
    elif sel[0] == "b":
        part = raw[int(sel[1]) : int(sel[1]) + 1]
    else:
        part = raw[2 * int(sel[1]) : 2 * int(sel[1]) + 2]
    return int.from_bytes(part, "little", signed=signed)


def saturate(tmp: int, signed: bool, dsel: str | None) -> int:
    if dsel in ("b0", "b1", "b2", "b3"):
        hi, lo = (S8_MAX, S8_MIN) if signed else (U8_MAX, U8_MIN)
    elif dsel in ("h0", "h1"):
        hi, lo = (S16_MAX, S16_MIN) if signed else (U16_MAX, U16_MIN)
    else:
        hi, lo = (S32_MAX, S32_MIN) if signed else (U32_MAX, U32_MIN)
    if tmp > hi:
        return hi
    if tmp < lo:
        return lo
    return tmp


def oracle(op, dtype, atype, btype, sat, third, asel, bsel, a, b, c, *, mode=None, cmp=None) -> int:
    ta = extract(a, atype == "s32", asel)
    tb = extract(b, btype == "s32", bsel)
    if op == "vadd":
        tmp = ta + tb
    elif op == "vsub":
        tmp = ta - tb
    elif op == "vabsdiff":
        tmp = ta - tb if ta >= tb else tb - ta
    elif op == "vmin":
        tmp = ta if ta < tb else tb
    elif op == "vmax":
        tmp = ta if ta > tb else tb
    elif op in ("vshl", "vshr"):
        if mode == "clamp" and tb > 32:
            tb = 32
        if mode == "wrap":
            tb = tb % 32
        tmp = ta * 2**tb if op == "vshl" else ta // 2**tb  # floor division: the sign fill
    elif op == "vset":
        tmp = {"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb, "gt": ta > tb, "ge": ta >= tb}[cmp]
        tmp = 1 if tmp else 0
    # "Perform a scalar arithmetic operation to produce a signed 34-bit result."
    tmp = tmp % 2**34
    if tmp >= 2**33:
        tmp -= 2**34
    dsel = third[2:] if third and third.startswith("d.") else None
    if sat:
        tmp = saturate(tmp, dtype == "s32", dsel)
    tc = extract(c, dtype == "s32", None)
    if third == "add":
        tmp = tmp + tc
    elif third == "min":
        tmp = min(tmp, tc)
    elif third == "max":
        tmp = max(tmp, tc)
    elif dsel is not None:
        shift, part, keep = MERGE[dsel]
        tmp = ((tmp & part) << shift) | (keep & tc)
    return tmp % 2**32


# --- forms --------------------------------------------------------------------------------


def form_text(op, types, sat, third, asel, bsel, extra=()) -> str:
    parts = [op, *types]
    if sat:
        parts.append("sat")
    parts.extend(extra)
    if third is not None and not third.startswith("d."):
        parts.append(third)
    if third is not None and third.startswith("d."):
        parts.append("dsel_" + third[2:])
    if asel:
        parts.append("asel_" + asel)
    if bsel:
        parts.append("bsel_" + bsel)
    return ".".join(parts)


def value(rng: random.Random) -> int:
    return rng.choice(EDGES) if rng.random() < 0.4 else rng.getrandbits(32)


def shift_amount(rng: random.Random) -> int:
    k = rng.random()
    if k < 0.5:
        return rng.randrange(0, 40)  # around the clamp and wrap limits
    return value(rng)


def compare_cases(cases, rng: random.Random, count: int) -> None:
    for op, dtype, atype, btype, sat, third, asel, bsel, extra in cases:
        types = (atype, btype) if op == "vset" else (dtype, atype, btype)
        form = parse(form_text(op, types, sat, third, asel, bsel, extra))
        mode = extra[0] if op in SHIFTS else None
        cmp = extra[0] if op == "vset" else None
        for _ in range(count):
            a = value(rng)
            b = shift_amount(rng) if op in SHIFTS else value(rng)
            c = value(rng)
            sources = [a, b] if third is None else [a, b, c]
            (got,) = evaluate(form, sources)
            want = oracle(op, dtype, atype, btype, sat, third, asel, bsel, a, b, c, mode=mode, cmp=cmp)
            assert got == want, f"{form.text} {[hex(s) for s in sources]}: {got:#x} != {want:#x}"


def arithmetic_cases(op, selectors):
    for dtype, atype, btype, sat, third in itertools.product(TYPES, TYPES, TYPES, (False, True), THIRD):
        for asel, bsel in selectors():
            yield op, dtype, atype, btype, sat, third, asel, bsel, ()


def shift_cases(op, selectors):
    for dtype, atype, sat, third, mode in itertools.product(TYPES, TYPES, (False, True), THIRD, ("clamp", "wrap")):
        for asel, bsel in selectors():
            yield op, dtype, atype, "u32", sat, third, asel, bsel, (mode,)


def vset_cases(selectors):
    for atype, btype, cmp, third in itertools.product(TYPES, TYPES, CMPS, THIRD):
        for asel, bsel in selectors():
            yield "vset", "u32", atype, btype, False, third, asel, bsel, (cmp,)


def random_selectors(rng: random.Random, n: int = 2):
    return lambda: [(rng.choice(SELECTORS), rng.choice(SELECTORS)) for _ in range(n)]


def all_selectors():
    return list(itertools.product(SELECTORS, SELECTORS))


# --- differential tests -------------------------------------------------------------------


@pytest.mark.parametrize("op", ARITHMETIC)
def test_arithmetic_against_oracle(op):
    rng = random.Random(f"video-{op}")
    compare_cases(arithmetic_cases(op, random_selectors(rng)), rng, 12)


@pytest.mark.parametrize("op", SHIFTS)
def test_shifts_against_oracle(op):
    rng = random.Random(f"video-{op}")
    compare_cases(shift_cases(op, random_selectors(rng)), rng, 12)


def test_vset_against_oracle():
    rng = random.Random("video-vset")
    compare_cases(vset_cases(random_selectors(rng)), rng, 12)


@pytest.mark.heavy
@pytest.mark.parametrize("op", ARITHMETIC + SHIFTS + ("vset",))
@pytest.mark.parametrize("chunk", range(4))
def test_every_selector_pair_against_oracle(op, chunk):
    rng = random.Random(f"video-heavy-{op}-{chunk}")
    pairs = all_selectors()[chunk::4]
    if op in ARITHMETIC:
        cases = arithmetic_cases(op, lambda: pairs)
    elif op in SHIFTS:
        cases = shift_cases(op, lambda: pairs)
    else:
        cases = vset_cases(lambda: pairs)
    compare_cases(cases, rng, 8)


# --- saturation edges, worked by hand from the pseudo-code --------------------------------


@pytest.mark.parametrize(
    "text, sources, expected",
    [
        ("vadd.u32.u32.u32.sat", [0xFFFFFFFF, 1], 0xFFFFFFFF),  # U32_MAX
        ("vadd.u32.u32.u32", [0xFFFFFFFF, 1], 0),  # no .sat: low 32 bits of the .s34 sum
        ("vadd.s32.s32.s32.sat", [0x7FFFFFFF, 1], 0x7FFFFFFF),  # S32_MAX
        ("vadd.s32.s32.s32.sat", [0x80000000, 0xFFFFFFFF], 0x80000000),  # S32_MIN
        ("vsub.u32.u32.u32.sat", [0, 1], 0),  # U32_MIN
        ("vsub.u32.s32.s32.sat", [0x7FFFFFFF, 0x80000000], 0xFFFFFFFF),  # 2^32 - 1 fits .u32
        ("vsub.s32.u32.u32.sat", [0, 0xFFFFFFFF], 0x80000000),  # -(2^32 - 1) -> S32_MIN
        ("vabsdiff.u32.s32.s32", [0x80000000, 0x7FFFFFFF], 0xFFFFFFFF),
        ("vabsdiff.s32.s32.s32.sat", [0x80000000, 0x7FFFFFFF], 0x7FFFFFFF),
        ("vmin.u32.s32.u32.sat", [0xFFFFFFFF, 5], 0),  # -1 is the minimum, clamped to U32_MIN
        ("vmax.s32.u32.s32", [0xFFFFFFFF, 0], 0xFFFFFFFF),  # .u32 0xffffffff beats 0
        # .sat before the secondary op; the sum is not clamped again
        ("vadd.u32.u32.u32.sat.add", [0xFFFFFFFF, 1, 1], 0),
        ("vadd.s32.s32.s32.sat.min", [0x7FFFFFFF, 1, 0x80000000], 0x80000000),
        # merge: clamped to the sub-word, truncated and placed into c
        ("vadd.s32.s32.s32.sat.dsel_b1", [0x7F, 1, 0xAABBCCDD], 0xAABB7FDD),
        ("vadd.u32.u32.u32.sat.dsel_h1", [0xFFFF, 1, 0xAABBCCDD], 0xFFFFCCDD),
        ("vadd.u32.u32.u32.dsel_h1", [0xFFFF, 1, 0xAABBCCDD], 0x0000CCDD),
        ("vsub.s32.s32.s32.sat.dsel_b3.asel_b0.bsel_b0", [0x80, 1, 0x11223344], 0x80223344),
        ("vsub.u32.s32.s32.sat.dsel_b0.asel_b0.bsel_b0", [0x80, 1, 0x11223344], 0x11223300),
        # shifts
        ("vshl.u32.u32.u32.clamp", [1, 40], 0),  # clamped to 32: 2^32, low word 0
        ("vshl.u32.u32.u32.wrap", [1, 33], 2),  # 33 & 0x1f = 1
        ("vshl.u32.u32.u32.clamp.sat", [1, 32], 0xFFFFFFFF),  # 2^32 fits the .s34 intermediate
        # 0x8d97c4df << 9 wrapped to .s34 is negative: U32_MIN (as an H200 gives too)
        ("vshl.u32.u32.u32.clamp.sat", [0x8D97C4DF, 9], 0),
        # -14071 << 31 wrapped to .s34 is +2^31: S32_MAX (as an H200 gives too)
        ("vshl.s32.s32.u32.wrap.sat.asel_h1", [0xC9094B7A, 0x7F], 0x7FFFFFFF),
        ("vshr.s32.s32.u32.clamp", [0x80000000, 100], 0xFFFFFFFF),  # sign fill
        ("vshr.u32.u32.u32.clamp", [0x80000000, 100], 0),
        ("vshr.s32.s32.u32.wrap.asel_h1.bsel_b1", [0x80000000, 0x0400], 0xFFFFF800),
        # vset: unsigned 0/1 result, secondary op and merge
        ("vset.s32.u32.lt", [0xFFFFFFFF, 0], 1),
        ("vset.u32.u32.lt", [0xFFFFFFFF, 0], 0),
        ("vset.u32.u32.eq.add", [3, 3, 0xFFFFFFFF], 0),
        ("vset.s32.s32.ge.dsel_b2.asel_b0.bsel_b1", [0x80, 0x8000, 0xFFFFFFFF], 0xFF01FFFF),
    ],
)
def test_worked_examples(text, sources, expected):
    assert evaluate(text, sources) == (expected,)


# --- catalogue and parser -----------------------------------------------------------------


def test_manual_examples_parse():
    # §9.7.18.1.1 / .2 / .4 Examples, selectors moved into the qualifier slots
    for text in (
        "vadd.s32.u32.s32.sat.asel_b0.bsel_h0",
        "vsub.s32.s32.u32.sat.asel_h1.bsel_h1",
        "vabsdiff.s32.s32.s32.sat.dsel_h0.asel_b0.bsel_b2",
        "vmin.s32.s32.s32.sat.add",
        "vshl.s32.u32.u32.clamp",
        "vshr.u32.u32.u32.wrap.bsel_h1",
        "vset.s32.u32.lt",
        "vset.u32.u32.ne.bsel_h1",
    ):
        form = parse(text)
        assert form.text == text
        assert str(form.target) == "PTX ISA 2.0, sm_20"


def test_qualifiers_in_any_order_are_canonical():
    assert parse("vadd.s32.u32.u32.bsel_b3.add.sat.asel_h1").text == "vadd.s32.u32.u32.sat.add.asel_h1.bsel_b3"


def test_operands():
    assert [(o.name, o.type) for o in parse("vadd.s32.u32.u32").operands] == [("d", "s32"), ("a", "u32"), ("b", "u32")]
    assert [(o.name, o.type) for o in parse("vmax.u32.s32.s32.dsel_h1").sources] == [("a", "s32"), ("b", "s32"), ("c", "u32")]
    assert [(o.name, o.type) for o in parse("vset.s32.s32.eq.max").operands][-1] == ("c", "u32")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("vadd.s32.s32.s32.add.dsel_b0", "exclude each other"),
        ("vadd.s32.s32", "missing btype"),
        ("vadd.s32.s32.s32.s32", "repeated"),
        ("vadd.f32.s32.s32", "not allowed"),
        ("vadd.s32.s32.s32.asel_b4", "not allowed"),
        ("vadd.s32.s32.s32.asel_b0.asel_b1", "repeated"),
        ("vadd.s32.s32.s32.b0", "not allowed"),  # a selector must say which operand it belongs to
        ("vadd.s32.s32.s32.rn", "not allowed"),
        ("vshl.s32.s32.u32", "missing mode"),
        ("vshl.s32.s32.s32.clamp", "repeated"),  # b is .u32: a third .s32 has no slot
        ("vshr.s32.s32.u32.clamp.min.dsel_h0", "exclude each other"),
        ("vset.u32.u32.lt.sat", "not allowed"),  # vset has no .sat
        ("vset.u32.u32.u32.lt", "repeated"),  # nor a dtype
        ("vset.u32.u32", "missing cmp"),
    ],
)
def test_illegal_forms(text, reason):
    with pytest.raises(IllegalForm, match=reason):
        parse(text)


def test_operand_errors():
    with pytest.raises(OperandError, match="takes 3 source"):
        evaluate("vadd.s32.s32.s32.add", [1, 2])
    with pytest.raises(OperandError, match="takes 2 source"):
        evaluate("vadd.s32.s32.s32", [1, 2, 3])
    with pytest.raises(OperandError, match="does not fit"):
        evaluate("vadd.s32.s32.s32", [1 << 32, 2])


def test_cli_eval():
    result = CliRunner().invoke(cli, ["eval", "vadd.s32.u32.s32.sat.add.asel_b0.bsel_h1", "0xff", "0x80000000", "0x5"])
    assert result.exit_code == 0, result.output
    # 255 + (-32768) + 5 = -32508
    assert result.output.strip() == f"{(255 - 32768 + 5) % 2**32:#010x}"
    script = shutil.which("ptxspec") or str(Path(sys.executable).with_name("ptxspec"))
    bad = subprocess.run([script, "eval", "vadd.s32.s32.s32.add.dsel_b0", "1", "2", "3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "exclude each other" in bad.stderr and "Traceback" not in bad.stderr


# --- SIMD (§9.7.18.2) ---------------------------------------------------------------------

SIMD_OPS = ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset")
MASKS = {2: ("h0", "h1", "h10"), 4: ("b0", "b1", "b10", "b2", "b20", "b21", "b210", "b3", "b30", "b31", "b310", "b32", "b320", "b321", "b3210")}
DEFAULT = {2: ("h10", "h10", "h32"), 4: ("b3210", "b3210", "b7654")}  # mask, asel, bsel


def simd_oracle(op, lanes, dtype, atype, btype, sat, add, mask, asel, bsel, a, b, c, cmp=None) -> int:
    size = 4 // lanes  # bytes per lane
    pool = a.to_bytes(4, "little") + b.to_bytes(4, "little")
    cbytes = c.to_bytes(4, "little")
    mask = mask or DEFAULT[lanes][0]
    asel = asel or DEFAULT[lanes][1]
    bsel = bsel or DEFAULT[lanes][2]

    def element(sel, i, signed):
        k = int(sel[len(sel) - 1 - i])  # ".h10": lane 1 <- half-word 1, lane 0 <- half-word 0
        return int.from_bytes(pool[k * size : (k + 1) * size], "little", signed=signed)

    out = []
    for i in range(lanes):
        x, y = element(asel, i, atype == "s32"), element(bsel, i, btype == "s32")
        if op == "vadd":
            t = x + y
        elif op == "vsub":
            t = x - y
        elif op == "vavrg":
            t = (x + y + 1) // 2 if x + y >= 0 else (x + y) // 2
        elif op == "vabsdiff":
            t = abs(x - y)
        elif op == "vmin":
            t = min(x, y)
        elif op == "vmax":
            t = max(x, y)
        else:
            t = int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp])
        if sat:
            bits = 8 * size
            lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if dtype == "s32" else (0, 2**bits - 1)
            t = max(lo, min(hi, t))
        out.append(t)
    chosen = [str(i) in mask[1:] for i in range(lanes)]
    if add:
        return (c + sum(t for t, on in zip(out, chosen) if on)) % 2**32
    result = bytearray()
    for i in range(lanes):
        if chosen[i]:
            result += (out[i] % 2 ** (8 * size)).to_bytes(size, "little")
        else:
            result += cbytes[i * size : (i + 1) * size]
    return int.from_bytes(bytes(result), "little")


def simd_text(op, lanes, dtype, atype, btype, sat, add, mask, asel, bsel, cmp) -> str:
    parts = [op + str(lanes)] + ([atype, btype, cmp] if op == "vset" else [dtype, atype, btype])
    parts += ["sat"] * sat + ["add"] * add
    parts += [f"{n}sel_{v}" for n, v in (("d", mask), ("a", asel), ("b", bsel)) if v]
    return ".".join(parts)


def random_pick(rng, lanes):
    if rng.random() < 0.2:
        return None
    digits = "0123" if lanes == 2 else "01234567"
    return ("h" if lanes == 2 else "b") + "".join(rng.choice(digits) for _ in range(lanes))


def compare_simd(op, lanes, rng, count, combos):
    for dtype, atype, btype, sat, add, mask, cmp in combos:
        for _ in range(count):
            asel, bsel = random_pick(rng, lanes), random_pick(rng, lanes)
            form = parse(simd_text(op, lanes, dtype, atype, btype, sat, add, mask, asel, bsel, cmp))
            a, b, c = value(rng), value(rng), value(rng)
            (got,) = evaluate(form, [a, b, c])
            want = simd_oracle(op, lanes, dtype, atype, btype, sat, add, mask, asel, bsel, a, b, c, cmp)
            assert got == want, f"{form.text} {[hex(s) for s in (a, b, c)]}: {got:#x} != {want:#x}"


def simd_combos(op, lanes):
    if op == "vset":
        return [("u32", a, b, False, add, m, cmp) for a, b, add, m, cmp in itertools.product(TYPES, TYPES, (False, True), (None, *MASKS[lanes]), CMPS)]
    return [
        (d, a, b, sat, add, m, None)
        for d, a, b, sat, add, m in itertools.product(TYPES, TYPES, TYPES, (False, True), (False, True), (None, *MASKS[lanes]))
        if not (sat and add)
    ]


@pytest.mark.parametrize("lanes", (2, 4))
@pytest.mark.parametrize("op", SIMD_OPS)
def test_simd_against_oracle(op, lanes):
    rng = random.Random(f"video-simd-{op}{lanes}")
    compare_simd(op, lanes, rng, 3 if lanes == 2 else 1, simd_combos(op, lanes))


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("lanes", (2, 4))
@pytest.mark.parametrize("op", SIMD_OPS)
def test_simd_against_oracle_heavy(op, lanes, chunk):
    rng = random.Random(f"video-simd-heavy-{op}{lanes}-{chunk}")
    compare_simd(op, lanes, rng, 40, simd_combos(op, lanes)[chunk::4])


@pytest.mark.parametrize(
    "text, sources, expected",
    [
        # defaults: a's half-words against b's; .sat clamps each lane to .s16
        ("vadd2.s32.s32.u32.sat", [0x7FFF0001, 0x00020003, 0], 0x7FFF0004),
        ("vadd2.u32.u32.u32.sat", [0xFFFF0001, 0x00010001, 0], 0xFFFF0002),
        ("vsub2.u32.u32.u32.sat", [0x00000001, 0x00010002, 0], 0x00000000),
        # the mask keeps c's other half-word
        ("vsub2.s32.s32.s32.sat.dsel_h0.asel_h10.bsel_h32", [0x00000005, 0x00000002, 0x12345678], 0x12340003),
        # vavrg rounds halves up for non-negative sums, down (floor) for negative ones
        ("vavrg2.s32.s32.s32", [0xFFFF0001, 0xFFFE0002, 0], 0xFFFE0002),  # (-1-2)>>1 = -2, (1+2+1)>>1 = 2
        ("vavrg4.u32.u32.u32", [0x000000FF, 0x000000FF, 0], 0x000000FF),
        # accumulate: the selected lane results (not truncated) are added to c
        ("vmin2.s32.u32.u32.add.dsel_h10.asel_h00.bsel_h22", [0x5, 0x3, 1], 7),
        ("vabsdiff4.u32.u32.u32.add", [0x00FF00FF, 0xFF00FF00, 0], 4 * 255),
        ("vabsdiff4.s32.s32.s32.add", [0x7F807F80, 0x807F807F, 10], 10 + 4 * 255),
        ("vsub4.s32.s32.s32.sat.dsel_b0.asel_b3210.bsel_b7654", [0x80, 0x01, 0xAABBCCDD], 0xAABBCC80),
        # vset: unsigned 0/1 per lane
        ("vset2.s32.u32.lt", [0xFFFF0000, 0x00000001, 0], 0x00010001),
        ("vset4.u32.u32.ne.add", [0x01020304, 0x01000300, 5], 7),
    ],
)
def test_simd_worked_examples(text, sources, expected):
    assert evaluate(text, sources) == (expected,)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("vadd2.s32.s32.s32.sat.add", "cannot be used"),
        ("vadd2.s32.s32.s32.min", "not allowed"),  # only .add is a SIMD secondary operation
        ("vadd2.s32.s32.s32.dsel_b0", "not allowed"),  # 2-way masks are half-words
        ("vadd4.s32.s32.s32.asel_b3218", "not allowed"),
        ("vadd4.s32.s32.s32.dsel_b01", "not allowed"),  # not in the manual's mask list
        ("vadd2.s32.s32.s32.asel_h4", "not allowed"),
        ("vset4.u32.u32.lt.sat", "not allowed"),
    ],
)
def test_simd_illegal_forms(text, reason):
    with pytest.raises(IllegalForm, match=reason):
        parse(text)


def test_simd_targets_and_operands():
    form = parse("vsub4.s32.s32.s32.sat.dsel_b0.asel_b3210.bsel_b7654")
    assert str(form.target) == "PTX ISA 3.0, sm_30"
    assert [o.name for o in form.sources] == ["a", "b", "c"]
    with pytest.raises(OperandError, match="takes 3 source"):
        evaluate("vadd2.s32.s32.s32", [1, 2])


# --- vmad (§9.7.18.1.3) -------------------------------------------------------------------
#
# The oracle is a bit-level reading of the pseudo-code on fixed-width registers: tmp is a 128-bit
# two's-complement word (masked after every step), ~ is the bitwise complement within that width,
# sext32/zext build c128 from the sign bit, the .shr7/.shr15 shift is the 128-bit arithmetic or
# logical shift chosen by signedFinal, and the 64-bit result is read back through its top bit.

from hypothesis import given, strategies as st  # noqa: E402

M128 = (1 << 128) - 1
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def vmad_oracle(atype, btype, asel, bsel, neg_a, neg_b, neg_c, po, scale, sat, a, b, c, *, sm90=False) -> int:
    """The manual's pseudo-code; with ``sm90``, what an H200 computes instead (measured on 672
    forms x 4096 vectors): a whole-word source is a signed 32-bit value whatever its type, c is
    always sign-extended, and an unscaled sum is read as signed."""
    ta = extract(a, atype == "s32" or (sm90 and asel is None), asel) & M128
    tb = extract(b, btype == "s32" or (sm90 and bsel is None), bsel) & M128
    signed_final = atype == "s32" or btype == "s32" or (neg_a ^ neg_b) or neg_c
    tmp = (ta * tb) & M128  # the low 128 bits of the product of the 128-bit extensions
    lsb = 0
    if po:
        lsb = 1
    elif neg_a ^ neg_b:
        tmp, lsb = tmp ^ M128, 1
    elif neg_c:
        c, lsb = c ^ M32, 1
    if (signed_final or sm90) and c >> 31:
        c128 = c | (M128 ^ M32)  # sext32
    else:
        c128 = c  # zext
    tmp = (tmp + c128 + lsb) & M128
    # sm_90 reads an unscaled sum as signed even for an unsigned final result (so .sat raises a
    # negative one to 0); a scaled one is shifted without sign there, as the manual says.
    negative = (signed_final or (sm90 and not scale)) and tmp >> 127
    if scale:
        shift = 7 if scale == "shr7" else 15
        shifted = tmp >> shift
        if negative:  # arithmetic shift fills with ones
            shifted |= M128 ^ (M128 >> shift)
        result = shifted & M64
        value = result - (1 << 64) if signed_final and result >> 63 else result
    else:
        value = tmp - (1 << 128) if negative else tmp
    if sat:
        hi, lo = (S32_MAX, S32_MIN) if signed_final else (U32_MAX, U32_MIN)
        value = hi if value > hi else lo if value < lo else value
    return value & M32


#: The negations PTX allows: none, -(a*b) by a or b, both (no negation of the product), or -c;
#: "Source operands may not be negated in .po mode".
NEGATIONS = ((), ("neg_a",), ("neg_b",), ("neg_a", "neg_b"), ("neg_c",), ("neg_a", "neg_b", "neg_c"))


def vmad_text(dtype, atype, btype, po, sat, scale, negs, asel, bsel) -> str:
    parts = ["vmad", dtype, atype, btype] + ["po"] * po + ["sat"] * sat + ([scale] if scale else []) + list(negs)
    parts += [f"asel_{asel}"] * bool(asel) + [f"bsel_{bsel}"] * bool(bsel)
    return ".".join(parts)


def vmad_forms():
    for dtype, atype, btype, po, sat, scale, negs in itertools.product(TYPES, TYPES, TYPES, (False, True), (False, True), (None, "shr7", "shr15"), NEGATIONS):
        if po and negs:
            continue
        yield dtype, atype, btype, po, sat, scale, negs


def compare_vmad(rng: random.Random, count: int, selectors, profile: str = "spec") -> int:
    checked = 0
    for dtype, atype, btype, po, sat, scale, negs in vmad_forms():
        for asel, bsel in selectors():
            form = parse(vmad_text(dtype, atype, btype, po, sat, scale, negs, asel, bsel))
            for _ in range(count):
                a, b, c = value(rng), value(rng), value(rng)
                (got,) = evaluate(form, [a, b, c], profile)
                want = vmad_oracle(
                    atype, btype, asel, bsel, "neg_a" in negs, "neg_b" in negs, "neg_c" in negs, po, scale, sat, a, b, c, sm90=profile == "sm_90"
                )
                assert got == want, f"{profile} {form.text} {[hex(s) for s in (a, b, c)]}: {got:#x} != {want:#x}"
                checked += 1
    return checked


def test_vmad_against_oracle():
    rng = random.Random("video-vmad")
    assert compare_vmad(rng, 6, random_selectors(rng)) == 4032  # 336 forms x 2 selector pairs x 6


def test_vmad_sm90_against_oracle():
    """The sm_90 profile against the oracle's reading of what an H200 computes."""
    rng = random.Random("video-vmad-sm90")
    assert compare_vmad(rng, 4, random_selectors(rng), "sm_90") == 336 * 2 * 4


@pytest.mark.parametrize(
    "text, sources, observed",
    [
        # measured on an H200 (ptxas 13.0): the manual gives 0x01000000, 0x80000000, 0x80000000
        ("vmad.u32.u32.u32.shr7", [0, 0, 0x80000000], 0xFF000000),  # c sign-extended
        ("vmad.u32.u32.u32.sat.neg_a", [1, 0x80000000, 0], 0x7FFFFFFF),  # a .u32 word read as signed
        ("vmad.u32.u32.u32.sat.neg_c", [1, 0x80000000, 0], 0x80000000),
        ("vmad.u32.u32.u32.sat.shr7", [0, 0, 0x80000000], 0xFFFFFFFF),
    ],
)
def test_vmad_measured_on_h200(text, sources, observed):
    assert evaluate(text, sources, "sm_90") == (observed,)
    assert evaluate(text, sources) != (observed,)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_vmad_every_selector_pair(chunk):
    rng = random.Random(f"video-vmad-heavy-{chunk}")
    pairs = all_selectors()[chunk::4]
    compare_vmad(rng, 2, lambda: pairs)


WORDS = st.integers(0, M32)


@given(WORDS, WORDS, WORDS)
def test_vmad_identities(a, b, c):
    """Algebra that must hold bit-exactly: the unsigned word form is a*b + c modulo 2^32; .po adds
    one; negating a or b negates the product; negating both negates nothing; -c subtracts c read
    as .s32 (the pseudo-code's sext32(~c) + 1); .shr15 of the unsigned form is the floor of the
    exact sum over 2^15."""
    (plain,) = evaluate("vmad.u32.u32.u32", [a, b, c])
    assert plain == (a * b + c) % 2**32
    assert evaluate("vmad.u32.u32.u32.po", [a, b, c]) == ((a * b + c + 1) % 2**32,)
    assert evaluate("vmad.s32.u32.u32.neg_a", [a, b, c]) == evaluate("vmad.s32.u32.u32.neg_b", [a, b, c]) == ((-a * b + c) % 2**32,)
    assert evaluate("vmad.u32.u32.u32.neg_a.neg_b", [a, b, c]) == (plain,)
    sc = c - 2**32 if c >> 31 else c
    assert evaluate("vmad.s32.u32.u32.neg_c", [a, b, c]) == ((a * b - sc) % 2**32,)
    assert evaluate("vmad.u32.u32.u32.shr15", [a, b, c]) == (((a * b + c) >> 15) % 2**32,)
    # .sat: the exact value clamped; dtype takes no part in it.
    sa, sb = (a - 2**32 if a >> 31 else a), (b - 2**32 if b >> 31 else b)
    exact = sa * sb + sc
    assert evaluate("vmad.u32.s32.s32.sat", [a, b, c]) == (max(-(2**31), min(2**31 - 1, exact)) % 2**32,)
    assert evaluate("vmad.s32.u32.u32.sat", [a, b, c]) == (min(2**32 - 1, a * b + c),)


@pytest.mark.parametrize(
    "text, sources, expected",
    [
        # §9.7.18.1.3 Examples: "vmad.s32.s32.u32.sat r0, r1, r2, -r3;" and the .shr15 average form
        ("vmad.s32.s32.u32.sat.neg_c", [0xFFFFFFFF, 0xFFFFFFFF, 1], 0x80000000),  # -1 * (2^32-1) - 1 = -2^32 -> S32_MIN
        ("vmad.u32.u32.u32.shr15.asel_h0.bsel_h0", [0x1234FFFF, 0xABCDFFFF, 0x8000], 0x1FFFD),  # (65535^2 + 2^15) >> 15 = 131069
        ("vmad.u32.u32.u32.sat", [0xFFFFFFFF, 0xFFFFFFFF, 0], 0xFFFFFFFF),
        ("vmad.u32.u32.u32", [0xFFFFFFFF, 0xFFFFFFFF, 0], 1),  # (2^32-1)^2 = 2^64 - 2^33 + 1
        # -(u32 * u32) + s32 is signed: -(2^64 - 2^33 + 1) - 1 clamps to S32_MIN (exact, no 64-bit wrap)
        ("vmad.u32.u32.u32.sat.neg_b", [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], 0x80000000),
        # .shr7 of a negative signed sum: arithmetic shift (-256 >> 7 = -2), then the low word
        ("vmad.s32.s32.s32.shr7", [0xFFFFFFFF, 0x100, 0], 0xFFFFFFFE),
        # .shr7 floors: -1 >> 7 = -1
        ("vmad.s32.s32.s32.shr7.neg_a", [1, 1, 0], 0xFFFFFFFF),
        # -c with c = 0x80000000 reads c as .s32 -2^31: 0 - (-2^31) = 2^31, saturated signed -> S32_MAX
        ("vmad.u32.u32.u32.sat.neg_c", [0, 0, 0x80000000], 0x7FFFFFFF),
        # .po: (a*b) + c + 1 (the rounding average of a and c when b = 1, then .shr... by hand)
        ("vmad.u32.u32.u32.po.shr7", [0x7F, 1, 0], 1),
        ("vmad.s32.s32.s32.po.sat", [0x7FFFFFFF, 1, 0], 0x7FFFFFFF),
        # selectors: a.b3 signed = -1, b.h1 unsigned = 0xFFFF
        ("vmad.s32.s32.u32.asel_b3.bsel_h1", [0xFF000000, 0xFFFF0000, 0], (-0xFFFF) % 2**32),
    ],
)
def test_vmad_worked_examples(text, sources, expected):
    assert evaluate(text, sources) == (expected,)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("vmad.u32.u32.u32.po.neg_a", "may not be negated in .po mode"),
        ("vmad.u32.u32.u32.po.neg_c", "may not be negated in .po mode"),
        ("vmad.u32.u32.u32.neg_b.neg_c", "either (a*b) or c"),
        ("vmad.u32.u32.u32.shr7.shr15", "repeated"),
        ("vmad.u32.u32.u32.add", "not allowed"),  # no secondary operation
        ("vmad.u32.u32.u32.dsel_b0", "not allowed"),  # no destination selector
        ("vmad.u32.u32.u32.shr8", "not allowed"),
        ("vmad.u32.u32", "missing btype"),
        ("vmad.u32.u32.u32.neg_d", "not allowed"),
    ],
)
def test_vmad_illegal_forms(text, reason):
    with pytest.raises(IllegalForm, match=re.escape(reason)):
        parse(text)


def test_vmad_catalogue():
    form = parse("vmad.u32.u32.u32.neg_c.sat.bsel_h1.shr7")
    assert form.text == "vmad.u32.u32.u32.sat.shr7.neg_c.bsel_h1"
    assert str(form.target) == "PTX ISA 2.0, sm_20"
    # c takes the sign of the final result: unsigned only for (u32 * u32) + u32
    assert [o.type for o in parse("vmad.u32.u32.u32").sources] == ["u32", "u32", "u32"]
    assert [o.type for o in form.sources] == ["u32", "u32", "s32"]
    assert [o.type for o in parse("vmad.u32.s32.u32.po").operands] == ["u32", "s32", "u32", "s32"]
    with pytest.raises(OperandError, match="takes 3 source"):
        evaluate("vmad.u32.u32.u32", [1, 2])
    result = CliRunner().invoke(cli, ["eval", "vmad.s32.s32.u32.sat.neg_c", "0xffffffff", "0xffffffff", "1"])
    assert result.exit_code == 0 and result.output.strip() == "0x80000000", result.output


def _ptxas_line(text: str) -> str:
    """The PTX of a catalogue vmad form: selectors and negations back on their operands."""
    op, *tokens = text.split(".")
    sel = {t[0]: "." + t.split("_")[1] for t in tokens if "sel_" in t}
    neg = {t[-1]: "-" for t in tokens if t.startswith("neg_")}
    kept = [t for t in tokens if "sel_" not in t and not t.startswith("neg_")]
    ops = ", ".join(f"{neg.get(n, '')}%{n}{sel.get(n, '')}" for n in "abc")
    return f"{'.'.join([op, *kept])} %d, {ops};"


def test_vmad_forms_agree_with_ptxas(ptxas, tmp_path):
    """Every registered vmad form (selectors sampled) assembles for sm_20-era PTX 2.0 semantics at
    PTX 8.7/sm_90, and the forms the catalogue refuses are refused by ptxas too."""
    rng = random.Random("vmad-ptxas")
    legal = []
    for dtype, atype, btype, po, sat, scale, negs in vmad_forms():
        asel, bsel = rng.choice(SELECTORS), rng.choice(SELECTORS)
        legal.append(parse(vmad_text(dtype, atype, btype, po, sat, scale, negs, asel, bsel)).text)
    illegal = ["vmad.u32.u32.u32.po.neg_a", "vmad.s32.u32.u32.po.neg_c", "vmad.u32.s32.u32.neg_a.neg_c", "vmad.u32.u32.u32.neg_b.neg_c"]
    for text in illegal:
        with pytest.raises(IllegalForm):
            parse(text)

    def assemble(lines):
        body = "\n".join(lines)
        src = f".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .u32 %d, %a, %b, %c;\n{body}\nret;\n}}\n"
        (tmp_path / "k.ptx").write_text(src)
        return subprocess.run([ptxas, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)

    run = assemble([_ptxas_line(t) for t in legal])
    assert run.returncode == 0, run.stderr[:2000]
    for text in illegal:
        assert assemble([_ptxas_line(text)]).returncode != 0, text
