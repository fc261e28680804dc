"""fp8/fp6/fp4 and block-scaled mma (semantics/mma_block_scale.py), spec level.

Independent oracles only:

* element and scale-factor values: ml_dtypes (float4_e2m1fn, float6_e2m3fn, float6_e3m2fn,
  float8_e4m3fn, float8_e5m2, float8_e8m0fnu), every bit pattern;
* fragment and scale-factor layouts: the manual's formulas and sentences (§9.7.14.5.10-11,
  §9.7.14.3) written out again here, from the lanes' side;
* D: the exact dot product in Fraction arithmetic, rounded to f32 by MPFR (tests/oracle_mpfr.py);
  the spec-level set must contain that correctly rounded result and stay within the manual's
  "at least single precision" of it;
* ptxas (sm_120a): accepts every form and selector that the tests evaluate, and refuses the
  selectors that the semantics refuses.

There is no Blackwell GPU: nothing here is checked against silicon.
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction

import gmpy2
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_mpfr import F32
from ptxspec.semantics import mma, mma_block_scale as bs
from ptxspec.semantics.instructions import evaluate
from ptxspec.semantics.matrix_layout import compress_sparse, fragment_layout
from ptxspec.semantics.numerics import Exact, Infinity
from ptxspec.semantics.results import SPEC, AnyNaN, Interval, contains
from ptxspec.semantics.warp import Undefined
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError
from ptxspec.spec.catalogue import parse

# ---------------------------------------------------------------------------------------------
# Values: ml_dtypes is the oracle
# ---------------------------------------------------------------------------------------------

ML = {
    "e2m1": (ml_dtypes.float4_e2m1fn, 4),
    "e2m3": (ml_dtypes.float6_e2m3fn, 6),
    "e3m2": (ml_dtypes.float6_e3m2fn, 6),
    "e4m3": (ml_dtypes.float8_e4m3fn, 8),
    "e5m2": (ml_dtypes.float8_e5m2, 8),
}


@functools.cache
def ml_value(t: str, bits: int):
    """The value of a ``t`` field by ml_dtypes: a Fraction, or the float inf/nan."""
    dtype, _ = ML[t] if t in ML else ({"ue8m0": ml_dtypes.float8_e8m0fnu, "ue4m3": ml_dtypes.float8_e4m3fn}[t], 8)
    x = float(np.array([bits], dtype=np.uint8).view(dtype)[0])
    return x if x != x or x in (float("inf"), float("-inf")) else Fraction(x)


def ours(v):
    if isinstance(v, Exact):
        f = Fraction(v.significand) * Fraction(2) ** v.exponent
        return -f if v.sign else f
    if isinstance(v, Infinity):
        return float("-inf") if v.sign else float("inf")
    return float("nan")


def same(x, y) -> bool:
    if isinstance(x, float) and x != x:
        return isinstance(y, float) and y != y
    return x == y


@pytest.mark.parametrize("t", sorted(ML))
def test_element_values_match_ml_dtypes_for_every_bit_pattern(t):
    width = ML[t][1]
    low = {"e2m1": 2}.get(t, 0)
    for field in range(1 << width):
        expected = ml_value(t, field)
        # in an 8-bit container (kind::f8f6f4, kind::mxf8f6f4): .e2m1 in the central 4 bits, fp6 in the low 6
        assert same(ours(bs.element_value(t, field << low, 8)), expected), (t, field)
        assert bs.element_field(t, field << low, 8) == (field, True)
        if t == "e2m1":  # packed (kind::mxf4, kind::mxf4nvf4): no padding
            assert same(ours(bs.element_value(t, field, 4)), expected)
    # any padding bit set is reported
    for pad in range(256):
        field, ok = bs.element_field(t, pad, 8)
        assert ok == (pad == field << low), (t, pad)


def test_scale_factor_values_match_ml_dtypes_for_every_byte():
    for byte in range(256):
        # ue8m0: 2^(e - 127), 0xff NaN (float8_e8m0fnu)
        assert same(ours(bs.scale_factor_value("ue8m0", byte)), ml_value("ue8m0", byte)), byte
        assert bs.scale_byte_defined("ue8m0", byte)
    for byte in range(128):
        # ue4m3: the non-negative half of e4m3 (float8_e4m3fn), 0x7f NaN
        assert same(ours(bs.scale_factor_value("ue4m3", byte)), ml_value("ue4m3", byte)), byte
        assert bs.scale_byte_defined("ue4m3", byte)
        assert not bs.scale_byte_defined("ue4m3", byte | 0x80)  # "the MSB bit padded with zero"


# ---------------------------------------------------------------------------------------------
# Layouts: the manual's formulas, written from the lanes' side
# ---------------------------------------------------------------------------------------------


def manual_a(shape: str, lane: int, i: int) -> tuple[int, int]:
    """§9.7.14.5.10 (m16n8k32, 8-bit containers) and §9.7.14.5.11 (m16n8k64 .e2m1): (row, col) of ai."""
    g, t = lane >> 2, lane % 4
    if shape == "m16n8k32":
        row = g if (0 <= i < 4 or 8 <= i < 12) else g + 8
        return row, t * 4 + (i & 0x3) + (16 if i >= 8 else 0)
    row = g if (0 <= i < 8 or 16 <= i < 24) else g + 8
    return row, t * 8 + (i & 0x7) + (32 if i >= 16 else 0)


def manual_b(shape: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if shape == "m16n8k32":
        return t * 4 + (i & 0x3) + (16 if i >= 4 else 0), g
    return t * 8 + (i & 0x7) + (32 if i >= 8 else 0), g


def manual_c(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 0x1)


LAYOUT_CASES = [("m16n8k32", t, 8, 4, 2) for t in ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")] + [("m16n8k64", "e2m1", 4, 4, 2)]


@pytest.mark.parametrize("shape,t,bits,a_regs,b_regs", LAYOUT_CASES)
def test_fragment_layouts_of_the_fp6_fp4_shapes_follow_the_manual(shape, t, bits, a_regs, b_regs):
    A, B = fragment_layout(shape, "a", t), fragment_layout(shape, "b", t)
    assert (A.element_bits, A.registers, B.element_bits, B.registers) == (bits, a_regs, bits, b_regs)
    for lane in range(32):
        for i in range(A.registers * A.per_register):
            assert A.element(lane, i // A.per_register, i % A.per_register) == manual_a(shape, lane, i)
        for i in range(B.registers * B.per_register):
            assert B.element(lane, i // B.per_register, i % B.per_register) == manual_b(shape, lane, i)


@pytest.mark.parametrize(
    "text,bits,regs",
    [
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32", 8, (4, 4)),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e2m3.e4m3.f32.ue8m0", 8, (4, 4)),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", 4, (4, 4)),
    ],
)
def test_sparse_fragments_hold_containers_or_packed_elements(text, bits, regs):
    """§9.7.14.6.2.6/.8: sparse m16n8k64 keeps 8-bit containers (4 A and 4 B registers); sparse
    m16n8k128 .e2m1 packs 4-bit elements; the catalogue's operand counts agree."""
    form = parse(text)
    L = bs._layouts(form)
    assert (L["a"].element_bits, L["b"].element_bits) == (bits, bits)
    assert (L["a"].registers, L["b"].registers) == regs
    assert L["a"].stored_cols * 2 == L["a"].cols == L["b"].rows
    names = [o.name for o in form.sources]
    assert sum(n.startswith("a.") for n in names) == regs[0] and sum(n.startswith("b.") for n in names) == regs[1]


def manual_scale_sources(vec: int, byte_a: int, thread_a: int, byte_b: int, thread_b: int):
    """§9.7.14.3 read from the lanes' side: which (lane, byte) gives SF_A[row][block] and
    SF_B[block][col].

    thread-id-a: "%laneid % 4 == 0 or 1" (value 0) or "== 2 or 3" (value 1) contribute; of the pair
    the first holds row groupID, the second row groupID + 8 (figure 42). thread-id-b: "each thread
    satisfying %laneid % 4 == thread-id-b" contributes, for column groupID (figure 43). Bytes: 1X
    "each byte" byte-id; 2X "a byte-pair", 0 the lower two bytes, 2 the upper two; 4X "all four
    bytes"; the lower byte first (figure 44)."""
    chosen = {1: [byte_a], 2: [byte_a, byte_a + 1], 4: [0, 1, 2, 3]}[vec]
    chosen_b = {1: [byte_b], 2: [byte_b, byte_b + 1], 4: [0, 1, 2, 3]}[vec]
    a, b = {}, {}
    for lane in range(32):
        quad_position, group = lane % 4, lane // 4
        if quad_position in ((0, 1) if thread_a == 0 else (2, 3)):
            row = group if quad_position % 2 == 0 else group + 8
            for block, byte in enumerate(chosen):
                a[row, block] = (lane, byte)
        if quad_position == thread_b:
            for block, byte in enumerate(chosen_b):
                b[block, group] = (lane, byte)
    return a, b


SELECTOR_CASES = [
    (vec, s)
    for vec, valid in bs.VALID_SELECTORS.items()
    for s in [(ba, ta, bb, tb) for ba in valid[0] for ta in valid[1] for bb in valid[0] for tb in valid[2]]
]


@pytest.mark.parametrize("vec,selectors", SELECTOR_CASES)
def test_scale_factor_selection_follows_the_manual(vec, selectors):
    # every (lane, byte) gets a distinct code: the selected bytes name where they came from
    data = [sum(((lane * 4 + byte) & 0xFF) << (8 * byte) for byte in range(4)) for lane in range(32)]
    SA, SB = bs.scale_matrices(data, data, vec, selectors)
    a, b = manual_scale_sources(vec, *selectors)
    assert {(r, j): divmod(SA[r][j], 4) for r in range(16) for j in range(vec)} == a
    assert {(j, c): divmod(SB[j][c], 4) for j in range(vec) for c in range(8)} == b


def test_blocks_divide_the_logical_k():
    """ "each row of matrix A is divided into SFA_N number of blocks" (Table 34: 1X, 2X, 4X)."""
    assert [bs.block_of(k, 32, 1) for k in (0, 31)] == [0, 0]
    assert [bs.block_of(k, 64, 2) for k in (0, 31, 32, 63)] == [0, 0, 1, 1]
    assert [bs.block_of(k, 64, 4) for k in (0, 15, 16, 47, 48, 63)] == [0, 0, 1, 2, 3, 3]
    assert [bs.block_of(k, 128, 2) for k in (63, 64)] == [0, 1]  # sparse m16n8k128: the dense K


# ---------------------------------------------------------------------------------------------
# Building registers with the manual's layouts, and the Fraction oracle
# ---------------------------------------------------------------------------------------------

FORMS = {
    "f8f6f4": "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.{a}.{b}.f32",
    "mxf8f6f4": "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.{a}.{b}.f32.ue8m0",
    "mxf4": "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0",
    "nvf4-2x": "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
    "nvf4-4x": "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
}
TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


def finite_fields(t: str) -> list[int]:
    width = ML[t][1]
    return [f for f in range(1 << width) if isinstance(ml_value(t, f), Fraction)]


def pack_registers(matrix, position, registers: int, per: int, bits: int) -> list[tuple[int, ...]]:
    """Registers (one tuple of 32 lanes each) holding ``matrix`` by the manual's ``position(lane, i)``."""
    out = []
    for r in range(registers):
        lanes = []
        for lane in range(32):
            word = 0
            for f in range(per):
                row, col = position(lane, r * per + f)
                word |= int(matrix[row][col]) << (bits * f)
            lanes.append(word)
        out.append(tuple(lanes))
    return out


def random_case(kind: str, atype: str, btype: str, rng: random.Random):
    """Random A, B (finite fields), C (finite f32 of moderate exponent), scale bytes."""
    shape = "m16n8k32" if kind in ("f8f6f4", "mxf8f6f4") else "m16n8k64"
    k = 32 if shape == "m16n8k32" else 64
    fa, fb = finite_fields(atype), finite_fields(btype)
    A = [[rng.choice(fa) for _ in range(k)] for _ in range(16)]
    B = [[rng.choice(fb) for _ in range(8)] for _ in range(k)]
    C = [[0 if rng.random() < 0.2 else F32.pack(rng.getrandbits(1), rng.randint(100, 150), rng.getrandbits(23)) for _ in range(8)] for _ in range(16)]
    if kind == "nvf4-4x":
        scale = lambda: rng.choice([0] + list(range(1, 0x7F)))  # ue4m3: zero, subnormals, normals
    else:
        scale = lambda: rng.randint(127 - 24, 127 + 24)  # ue8m0 2^-24 .. 2^24
    sa = [sum(scale() << (8 * b) for b in range(4)) for _ in range(32)]
    sb = [sum(scale() << (8 * b) for b in range(4)) for _ in range(32)]
    return shape, k, A, B, C, sa, sb


def sources(form, shape: str, A, B, C, sa, sb, selectors, atype: str, raw: bool = False):
    """The form's source operands, in order, from the matrices (manual layouts) and scale data.
    A and B hold element fields, put into their 8-bit containers here (``raw``: already containers)."""
    low = {"e2m1": 2}.get(atype, 0) if shape == "m16n8k32" and not raw else 0
    bits = 8 if shape == "m16n8k32" else 4
    contain = lambda M, lw: [[x << lw for x in row] for row in M]
    blow = {"e2m1": 2}.get(form["btype"], 0) if shape == "m16n8k32" and not raw else 0
    regs = pack_registers(contain(A, low), lambda lane, i: manual_a(shape, lane, i), 4, 32 // bits, bits)
    regs += pack_registers(contain(B, blow), lambda lane, i: manual_b(shape, lane, i), 2, 32 // bits, bits)
    regs += pack_registers(C, manual_c, 4, 1, 32)
    if "block_scale" in form:
        byte_a, thread_a, byte_b, thread_b = selectors
        regs += [tuple(sa), (byte_a,) * 32, (thread_a,) * 32, tuple(sb), (byte_b,) * 32, (thread_b,) * 32]
    return regs


def oracle(kind, atype, btype, k, A, B, C, sa, sb, selectors):
    """Per D element: (S exact, T = sum of |addends|, T_sub = |products| with a subnormal input)."""
    vec = {"f8f6f4": None, "mxf8f6f4": 1, "mxf4": 2, "nvf4-2x": 2, "nvf4-4x": 4}[kind]
    stype = "ue4m3" if kind == "nvf4-4x" else "ue8m0"
    if vec:
        a_src, b_src = manual_scale_sources(vec, *selectors)
        SA = {key: ml_value(stype, (sa[lane] >> (8 * byte)) & 0xFF) for key, (lane, byte) in a_src.items()}
        SB = {key: ml_value(stype, (sb[lane] >> (8 * byte)) & 0xFF) for key, (lane, byte) in b_src.items()}
    tiny = {t: Fraction(2) ** (1 - (2 ** (e - 1) - 1)) for t, e in (("e4m3", 4), ("e5m2", 5), ("e3m2", 3), ("e2m3", 2), ("e2m1", 2))}
    tiny["ue4m3"] = Fraction(2) ** -6
    out = {}
    for i in range(16):
        for j in range(8):
            S = T = Tsub = Fraction(0)
            for kk in range(k):
                a, b = ml_value(atype, A[i][kk]), ml_value(btype, B[kk][j])
                p = a * b
                sub = 0 < abs(a) < tiny[atype] or 0 < abs(b) < tiny[btype]
                if vec:
                    block = kk * (vec or 1) // k
                    x, y = SA[i, block], SB[block, j]
                    p *= x * y
                    sub = sub or (stype == "ue4m3" and (0 < x < tiny["ue4m3"] or 0 < y < tiny["ue4m3"]))
                S += p
                T += abs(p)
                if sub:
                    Tsub += abs(p)
            c = F32.fraction(C[i][j])
            out[i, j] = (S + c, T + abs(c), Tsub)
    return out


def rn_f32(x: Fraction) -> int:
    with F32.context("rn"):
        return F32.from_mpfr(gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator)))


def d_results(result) -> dict:
    """D element (row, col) -> result, by the manual's C/D layout."""
    out = {}
    for r, reg in enumerate(result):
        for lane in range(32):
            out[manual_c(lane, r)] = reg.lanes[lane]
    return out


def check_case(kind: str, atype: str, btype: str, seed: int, selectors=(0, 0, 0, 0)):
    rng = random.Random(seed)
    form = parse(FORMS[kind].format(a=atype, b=btype))
    shape, k, A, B, C, sa, sb = random_case(kind, atype, btype, rng)
    result = evaluate(form, sources(form, shape, A, B, C, sa, sb, selectors, atype))
    D = d_results(result)
    for (i, j), (S, T, Tsub) in oracle(kind, atype, btype, k, A, B, C, sa, sb, selectors).items():
        got = D[i, j]
        assert isinstance(got, Interval), (i, j, got)
        assert contains(got, rn_f32(S)), (kind, atype, btype, seed, i, j, got.describe())
        # "accumulation ... with at least single precision": the set stays within ~K ulps of S
        # (2^-15 T covers gamma_{K} = K * 2^-23 for K <= 128), the subnormal products, underflow.
        slack = T / 2**15 + Tsub + Fraction(2) ** -100
        for end in (got.low, got.high):
            assert abs(F32.fraction(end) - S) <= slack + abs(S) / 2**22, (i, j, got.describe())


KIND_TYPES = (
    [("f8f6f4", a, b) for a in TYPES for b in TYPES]
    + [("mxf8f6f4", a, b) for a in TYPES for b in TYPES]
    + [(kind, "e2m1", "e2m1") for kind in ("mxf4", "nvf4-2x", "nvf4-4x")]
)


def valid_selectors(kind: str):
    vec = {"f8f6f4": 1, "mxf8f6f4": 1, "mxf4": 2, "nvf4-2x": 2, "nvf4-4x": 4}[kind]
    bytes_, ta, tb = bs.VALID_SELECTORS[vec]
    return st.tuples(st.sampled_from(bytes_), st.sampled_from(ta), st.sampled_from(bytes_), st.sampled_from(tb))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(KIND_TYPES).flatmap(lambda c: st.tuples(st.just(c), valid_selectors(c[0]), st.integers(0, 2**32 - 1))))
def test_results_contain_the_exact_dot_product(case):
    (kind, atype, btype), selectors, seed = case
    check_case(kind, atype, btype, seed, selectors)


HEAVY_CHUNKS = 12


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(HEAVY_CHUNKS))
def test_results_contain_the_exact_dot_product_every_type_pair(chunk):
    """Every kind and type pair, several seeds and selectors each (PTXSPEC_HEAVY=all)."""
    for n, (kind, atype, btype) in enumerate(KIND_TYPES):
        if n % HEAVY_CHUNKS != chunk:
            continue
        vec = {"f8f6f4": 1, "mxf8f6f4": 1, "mxf4": 2, "nvf4-2x": 2, "nvf4-4x": 4}[kind]
        rng = random.Random(n)
        for seed in range(3):
            bytes_, ta, tb = bs.VALID_SELECTORS[vec]
            check_case(kind, atype, btype, 1000 * n + seed, (rng.choice(bytes_), rng.choice(ta), rng.choice(bytes_), rng.choice(tb)))


# ---------------------------------------------------------------------------------------------
# End to end: which scale factor each D element uses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind,selectors",
    [
        (kind, s)
        for kind, vec in (("mxf8f6f4", 1), ("mxf4", 2), ("nvf4-2x", 2), ("nvf4-4x", 4))
        for s in [(0, 0, 0, 0), (bs.VALID_SELECTORS[vec][0][-1], 1, bs.VALID_SELECTORS[vec][0][-1], 3), (0, 1, 0, 2)]
    ],
)
@pytest.mark.parametrize("operand", ["a", "b"])
def test_each_d_element_uses_the_manuals_scale_factor(kind, selectors, operand):
    """A one-hot A and B (1.0 at the first k of one block) make D[i, j] = SF_A[i][block] *
    SF_B[block][j]. The selected bytes of one operand carry distinct values and every other byte a
    poison value; the other operand's scales are 1.0. A wrong lane, byte or block shows."""
    atype = btype = "e2m1" if kind != "mxf8f6f4" else "e4m3"
    form = parse(FORMS[kind].format(a=atype, b=btype))
    shape = "m16n8k32" if kind == "mxf8f6f4" else "m16n8k64"
    k = 32 if kind == "mxf8f6f4" else 64
    vec = {"mxf8f6f4": 1, "mxf4": 2, "nvf4-2x": 2, "nvf4-4x": 4}[kind]
    stype = "ue4m3" if kind == "nvf4-4x" else "ue8m0"
    one = {"ue8m0": 127, "ue4m3": 0x38}[stype]
    poison = {"ue8m0": 0, "ue4m3": 0}[stype]  # 2^-127 or 0: far below every distinct value
    distinct = iter(range(100, 230) if stype == "ue8m0" else range(0x20, 0x7E))
    a_src, b_src = manual_scale_sources(vec, *selectors)
    src = a_src if operand == "a" else b_src
    chosen = {pos: next(distinct) for pos in sorted(set(src.values()))}
    data = [sum(chosen.get((lane, byte), poison) << (8 * byte) for byte in range(4)) for lane in range(32)]
    ones = [one * 0x01010101] * 32
    sa, sb = (data, ones) if operand == "a" else (ones, data)
    one_a = {"e2m1": 0b0010, "e4m3": 0x38}[atype]  # 1.0
    for block in range(vec):
        k0 = block * (k // vec)
        A = [[one_a if kk == k0 else 0 for kk in range(k)] for _ in range(16)]
        B = [[one_a if kk == k0 else 0 for _ in range(8)] for kk in range(k)]
        C = [[0] * 8 for _ in range(16)]
        D = d_results(evaluate(form, sources(form, shape, A, B, C, sa, sb, selectors, atype)))
        for (i, j), got in D.items():
            lane, byte = src[(i, block) if operand == "a" else (block, j)]
            expected = ml_value(stype, (data[lane] >> (8 * byte)) & 0xFF)
            assert contains(got, rn_f32(expected)), (operand, block, i, j, got.describe())
            assert not contains(got, rn_f32(expected * 2)) and not contains(got, rn_f32(expected / 2))


# ---------------------------------------------------------------------------------------------
# Agreement with the unscaled mma and with the shared set builder
# ---------------------------------------------------------------------------------------------


def test_shared_set_builder_agrees_with_spec_dot():
    """block_scaled_dot without scales is mma.spec_dot (whose builder it shares)."""
    rng = random.Random(7)
    for n in range(300):
        atype, btype = rng.choice(("e4m3", "e5m2")), rng.choice(("e4m3", "e5m2"))
        ctype = dtype = rng.choice(("f32", "f16"))
        a = [rng.getrandbits(8) for _ in range(32)]
        b = [rng.getrandbits(8) for _ in range(32)]
        c = rng.getrandbits(32 if ctype == "f32" else 16)
        assert bs.block_scaled_dot(atype, btype, ctype, dtype, a, b, c) == mma.spec_dot(atype, btype, ctype, dtype, a, b, c), n


@pytest.mark.parametrize("atype,btype,cd", [("e4m3", "e5m2", "f32"), ("e5m2", "e5m2", "f16"), ("e4m3", "e4m3", "f16")])
def test_kind_f8f6f4_on_fp8_equals_the_fp8_mma(atype, btype, cd):
    """kind::f8f6f4 with .e4m3/.e5m2 is the m16n8k32 fp8 mma (same layouts, same precision
    statement): the two forms give the same sets on the same registers, NaN and inf included."""
    rng = random.Random(3)
    scaled = parse(f"mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.{cd}.{atype}.{btype}.{cd}")
    plain = f"mma.sync.aligned.m16n8k32.row.col.{cd}.{atype}.{btype}.{cd}"
    c_regs = 4 if cd == "f32" else 2
    regs = [tuple(rng.getrandbits(32) for _ in range(32)) for _ in range(6)]
    regs += [tuple(rng.getrandbits(32) & (0x7FFFFFFF if cd == "f32" else 0x7FFF7FFF) for _ in range(32)) for _ in range(c_regs)]
    assert evaluate(scaled, regs) == evaluate(plain, regs)


def test_sparse_forms_use_the_dense_a_and_the_logical_k_blocks():
    """mma.sp::ordered_metadata m16n8k128 .kind::mxf4 (2X: blocks of 64 logical k) and m16n8k64
    .kind::mxf8f6f4 (1X): A given compressed with its metadata gives the result of the exact dot
    product over the dense A."""
    rng = random.Random(11)
    for text, t, k, vec in [
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", "e2m1", 128, 2),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e3m2.e2m1.f32.ue8m0", "e3m2", 64, 1),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e2m1.e5m2.f32", "e2m1", 64, None),
    ]:
        form = parse(text)
        L = bs._layouts(form)
        packed = L["a"].element_bits == 4
        chunk = 2 if packed else 1  # 4:8 pair-wise for 4-bit elements, 2:4 otherwise
        dense = np.zeros((16, k), dtype=np.uint64)
        fa = [f for f in finite_fields(t) if f]
        for i in range(16):
            for g in range(k // (4 * chunk)):
                for c in rng.sample(range(4), 2):
                    for e in range(chunk):
                        dense[i, g * 4 * chunk + c * chunk + e] = rng.choice(fa) << (0 if packed or t != "e2m1" else 2)
        a_regs, meta = compress_sparse(L["a"], dense, 0)
        btype = form["btype"]
        fb = finite_fields(btype)
        blow = 0 if packed or btype != "e2m1" else 2
        B = np.array([[rng.choice(fb) << blow for _ in range(8)] for _ in range(k)], dtype=np.uint64)
        b_regs = L["b"].from_matrix(B)
        sa = [sum(rng.randint(120, 134) << (8 * b) for b in range(4)) for _ in range(32)]
        sb = [sum(rng.randint(120, 134) << (8 * b) for b in range(4)) for _ in range(32)]
        regs = [tuple(int(x) for x in a_regs[:, r]) for r in range(4)] + [tuple(int(x) for x in b_regs[:, r]) for r in range(4)]
        regs += [(0,) * 32] * 4 + [tuple(int(x) for x in meta), (0,) * 32]
        if vec:
            regs += [tuple(sa), (0,) * 32, (1,) * 32, tuple(sb), (0,) * 32, (2,) * 32]
        D = d_results(evaluate(form, regs))
        a_src, b_src = manual_scale_sources(vec or 1, 0, 1, 0, 2)
        if vec is None:  # .kind::f8f6f4: no scaling (every factor 1.0 = ue8m0 127)
            sa = sb = [0x7F7F7F7F] * 32
        low = 0 if packed or t != "e2m1" else 2
        for (i, j), got in D.items():
            S = Fraction(0)
            for kk in range(k):
                block = kk * (vec or 1) // k
                la, ba = a_src[i, block]
                lb, bb = b_src[block, j]
                S += (
                    ml_value(t, int(dense[i, kk]) >> low)
                    * ml_value(btype, int(B[kk, j]) >> blow)
                    * ml_value("ue8m0", (sa[la] >> (8 * ba)) & 0xFF)
                    * ml_value("ue8m0", (sb[lb] >> (8 * bb)) & 0xFF)
                )
            assert contains(got, rn_f32(S)), (text, i, j, got.describe())


# ---------------------------------------------------------------------------------------------
# Special values, undefined inputs, errors
# ---------------------------------------------------------------------------------------------


def _zero_case(kind: str, atype: str = "e2m1"):
    form = parse(FORMS[kind].format(a=atype, b=atype))
    shape = "m16n8k32" if kind in ("f8f6f4", "mxf8f6f4") else "m16n8k64"
    k = 32 if shape == "m16n8k32" else 64
    A = [[0] * k for _ in range(16)]
    B = [[0] * 8 for _ in range(k)]
    C = [[0] * 8 for _ in range(16)]
    return form, shape, A, B, C


def test_nan_scale_gives_any_nan_and_zero_elements_give_zero():
    form, shape, A, B, C = _zero_case("mxf4")
    ones = [0x7F7F7F7F] * 32
    nan_a = list(ones)
    nan_a[0] = 0x7F7F7FFF  # lane 0, byte 0: SF_A of row 0, block 0 (thread-id-a 0, byte-id-a 0)
    D = d_results(evaluate(form, sources(form, shape, A, B, C, nan_a, ones, (0, 0, 0, 0), "e2m1")))
    assert all(isinstance(D[0, j], AnyNaN) for j in range(8))  # NaN * 0 is NaN
    assert all(contains(D[i, j], 0) and not contains(D[i, j], 0x3F800000) for i in range(1, 16) for j in range(8))


def test_infinite_e5m2_element_gives_infinity():
    form, shape, A, B, C = _zero_case("mxf8f6f4", "e5m2")
    A[3][5] = 0x7C  # +inf
    B[5][2] = 0x3C  # 1.0
    D = d_results(evaluate(form, sources(form, shape, A, B, C, [0x7F7F7F7F] * 32, [0x7F7F7F7F] * 32, (0, 0, 0, 0), "e5m2")))
    assert D[3, 2] == 0x7F800000
    assert isinstance(D[3, 0], AnyNaN)  # inf * 0


def test_nonzero_padding_and_ue4m3_msb_make_their_rows_and_columns_undefined():
    form, shape, A, B, C = _zero_case("f8f6f4")
    A[2][0] = 0b00000001  # .e2m1 sits in bits 5..2: bit 0 is padding
    B[7][6] = 0b11000000
    D = d_results(evaluate(form, sources(form, shape, A, B, C, None, None, None, "e2m1", raw=True)))
    assert all(isinstance(D[2, j], Undefined) for j in range(8)) and all(isinstance(D[i, 6], Undefined) for i in range(16))
    assert contains(D[0, 0], 0)
    form, shape, A, B, C = _zero_case("nvf4-4x")
    sa = [0x38383838] * 32
    sa[4 * 5 + 2 * 1 + 1] = 0x38B83838  # row 13 (groupID 5, upper lane of pair 1), byte 2: MSB set
    D = d_results(evaluate(form, sources(form, shape, A, B, C, sa, [0x38383838] * 32, (0, 1, 0, 0), "e2m1")))
    assert all(isinstance(D[13, j], Undefined) for j in range(8)) and contains(D[12, 0], 0)


def test_inactive_lanes_give_undefined_registers():
    form, shape, A, B, C = _zero_case("mxf4")
    regs = sources(form, shape, A, B, C, [0x7F7F7F7F] * 32, [0x7F7F7F7F] * 32, (0, 0, 0, 0), "e2m1")
    out = evaluate(form, regs, active=0xFFFF)
    assert all(isinstance(x, Undefined) for reg in out for x in reg.lanes)


@pytest.mark.parametrize(
    "kind,selectors,name",
    [
        ("mxf4", (1, 0, 0, 0), "byte-id-a"),
        ("mxf4", (0, 2, 0, 0), "thread-id-a"),
        ("mxf4", (0, 0, 3, 0), "byte-id-b"),
        ("mxf8f6f4", (0, 0, 0, 4), "thread-id-b"),
        ("mxf8f6f4", (4, 0, 0, 0), "byte-id-a"),
        ("nvf4-4x", (0, 0, 2, 0), "byte-id-b"),
    ],
)
def test_a_selector_out_of_range_is_an_operand_error_naming_it(kind, selectors, name):
    form, shape, A, B, C = _zero_case(kind, "e2m1")
    with pytest.raises(OperandError, match=name):
        evaluate(form, sources(form, shape, A, B, C, [0] * 32, [0] * 32, selectors, "e2m1"))


def test_selectors_that_differ_between_lanes_and_wrong_counts_are_errors():
    form, shape, A, B, C = _zero_case("mxf4")
    regs = sources(form, shape, A, B, C, [0] * 32, [0] * 32, (0, 0, 0, 0), "e2m1")
    regs[-1] = (0,) * 31 + (1,)
    with pytest.raises(OperandError, match="thread-id-b"):
        evaluate(form, regs)
    with pytest.raises(PtxSpecError):
        bs.mma_block_scale(form, *regs[:-1], profile=SPEC)


@pytest.mark.parametrize(
    "text,words",
    [
        ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e4m3.e2m1.f32.ue8m0", "Table 35"),
        ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue4m3", "scale_vec_size must be provided"),
        ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::2X.f32.e4m3.e4m3.f32.ue8m0", "scale_vec::2X"),
        ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue4m3", "ue4m3"),
        ("mma.sync.aligned.m16n8k32.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", "m16n8k64"),
    ],
)
def test_illegal_kind_type_scale_combinations_come_from_the_catalogue(text, words):
    with pytest.raises(IllegalForm, match=words.replace(".", r"\.")):
        parse(text)


# ---------------------------------------------------------------------------------------------
# ptxas (sm_120a) accepts what the tests evaluate and refuses what the semantics refuses
# ---------------------------------------------------------------------------------------------


def _line(text: str, selectors) -> str:
    form = parse(text)
    regs = {o.name: o.type for o in form.operands if not o.name.startswith("id_")}
    decl = " ".join(f".reg .{t} %{n.replace('.', '_')};" for n, t in regs.items())
    groups = []
    for prefix in ("d", "a", "b", "c"):
        groups.append("{" + ", ".join(f"%{n.replace('.', '_')}" for n in regs if n.startswith(prefix + ".")) + "}")
    if "e" in regs:
        groups += ["%e", "0"]
    if selectors is not None:
        ba, ta, bb, tb = selectors
        groups += ["%scale_a_data", f"{{{ba}, {ta}}}", "%scale_b_data", f"{{{bb}, {tb}}}"]
    return f"{{ {decl} {text} {', '.join(groups)}; }}"


EVALUATED = [
    (FORMS[kind].format(a=a, b=b), s)
    for kind, a, b in KIND_TYPES
    if kind in ("f8f6f4", "mxf8f6f4") and a == b
    for s in ([None] if kind == "f8f6f4" else [(3, 1, 2, 3)])
]
EVALUATED += [
    (FORMS[kind].format(a="e2m1", b="e2m1"), s)
    for kind, vec in (("mxf4", 2), ("nvf4-2x", 2), ("nvf4-4x", 4))
    for s in ((0, 0, 0, 0), (bs.VALID_SELECTORS[vec][0][-1], 1, bs.VALID_SELECTORS[vec][0][-1], 3))
]
EVALUATED += [
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", (0, 1, 0, 2)),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e3m2.e2m1.f32.ue8m0", (0, 1, 0, 2)),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e2m1.e5m2.f32", None),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.e4m3.e5m2.f16", None),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.e5m2.e5m2.f16", None),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.e4m3.e4m3.f16", None),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e5m2.f32", None),
]


def test_ptxas_accepts_the_evaluated_forms_and_refuses_bad_selectors(ptxas):
    from ptxspec.conformance import ptxas_agreement as pa

    if pa.supported(ptxas, "sm_120a") is not None:
        pytest.skip("this ptxas has no sm_120a")
    request = pa.Request("sm_120a", (8, 7))
    good = [_line(text, s) for text, s in EVALUATED]
    verdicts = pa.ptxas_verdicts(ptxas, request, good)
    assert [v for v in verdicts if not v[0]] == [], [(t, v) for (t, _), v in zip(EVALUATED, verdicts) if not v[0]]
    bad = [
        (FORMS["mxf4"], 2, (1, 0, 0, 0)),
        (FORMS["mxf4"], 2, (0, 2, 0, 0)),
        (FORMS["nvf4-4x"], 4, (0, 0, 2, 0)),
        (FORMS["mxf8f6f4"].format(a="e4m3", b="e4m3"), 1, (0, 0, 0, 4)),
        (FORMS["mxf8f6f4"].format(a="e4m3", b="e4m3"), 1, (4, 0, 0, 0)),
    ]
    assert all(not ok for ok, _ in pa.ptxas_verdicts(ptxas, request, [_line(text, s) for text, _, s in bad]))
    for _, vec, s in bad:
        with pytest.raises(OperandError):
            bs.check_selectors(vec, *s)


def test_the_docs_example_runs():
    """docs/mma-block-scale.rst's example is executed as written."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "mma-block-scale.rst").read_text()
    block = text.split(".. code-block:: python\n", 1)[1].split("\nEvidence\n", 1)[0]
    code = "\n".join(line[3:] for line in block.splitlines())
    assert "assert all(contains(element, 0x43800000)" in code
    exec(compile(code, "mma-block-scale.rst", "exec"), {})


def test_every_profile_gives_the_spec_level_sets():
    """No chip was measured for these forms: the sm_90 profile (which cannot run them) gives the
    spec-level sets too."""
    rng = random.Random(5)
    form = parse(FORMS["nvf4-4x"])
    shape, k, A, B, C, sa, sb = random_case("nvf4-4x", "e2m1", "e2m1", rng)
    regs = sources(form, shape, A, B, C, sa, sb, (0, 1, 0, 3), "e2m1")
    assert evaluate(form, regs, "sm_90") == evaluate(form, regs, "spec")


@pytest.mark.parametrize(
    "kind,atype,btype,selectors",
    [
        ("mxf4", "e2m1", "e2m1", (2, 1, 2, 3)),  # §9.7.14.5.14 examples: "scaleAData, {2, 1}, scaleBData, {2, 3}"
        ("nvf4-4x", "e2m1", "e2m1", (0, 1, 0, 2)),  # "{bidA, tidA}, ... {bidB, tidB}" (registers)
        ("mxf8f6f4", "e3m2", "e2m1", (0, 1, 0, 1)),  # "scaleAData, {0, 1}, scaleBData, {0, 1}"
        ("mxf8f6f4", "e4m3", "e5m2", (0, 1, 0, 0)),  # "scaleAData, {0, 1}, scaleBData, {0, 0}"
    ],
)
def test_the_manuals_examples(kind, atype, btype, selectors):
    check_case(kind, atype, btype, 2024, selectors)


@pytest.mark.parametrize("what", ["scale", "element"])
def test_a_subnormal_input_may_be_read_as_zero(what):
    """ "handling of subnormal inputs [is] unspecified": a product with a subnormal ue4m3 scale or
    a subnormal element (.e2m1 0.5) may count as zero, so both the exact sum and the sum without
    it are allowed -- and nothing far from either."""
    form, shape, A, B, C = _zero_case("nvf4-4x")
    A[0][0] = 0b0010 if what == "scale" else 0b0001  # 1.0, or the subnormal 0.5
    A[0][1] = 0b0010
    B[0][0] = B[1][0] = 0b0010
    scale = 0x01 if what == "scale" else 0x38  # ue4m3 2^-9 (subnormal), or 1.0
    sa = [scale * 0x01010101] * 32
    sb = [0x38383838] * 32
    D = d_results(evaluate(form, sources(form, shape, A, B, C, sa, sb, (0, 0, 0, 0), "e2m1")))
    exact = Fraction(2) ** -8 if what == "scale" else Fraction(3, 2)  # 2 * 2^-9, or 0.5 + 1
    flushed = Fraction(0) if what == "scale" else Fraction(1)  # every product of row 0 uses the tiny scale
    assert contains(D[0, 0], rn_f32(exact)) and contains(D[0, 0], rn_f32(flushed))
    assert not contains(D[0, 0], rn_f32(exact * 4 + 1))
