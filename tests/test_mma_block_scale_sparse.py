"""Sparse fp8/fp6/fp4 and block-scaled mma (``mma.sp::ordered_metadata ... .kind::f8f6f4`` and
``.block_scale``, §9.7.14.6.3 with §9.7.14.3): D takes the stored elements of A times the rows of B
they select, each product with its scale factors; B's pruned positions are never read (issue 14,
item 3; the one sparse mechanism of semantics/sparse.py).

A row of the sparse A keeps K/2 of its K positions. Expanding A with zeros and multiplying it with
all of B made 0 * inf = NaN wherever B held an infinity or a NaN at a position the row prunes, and
read the padding of B's containers there ("must be packed ... with padding": non-zero padding
makes the D elements that *read* the container undefined).

The oracles do not call the mechanism under test: the positions each row keeps are chosen here
(and written as metadata by compress_sparse, checked against the manual in test_mma_block_scale.py
and tests/test_matrix_layout*), element and scale values come from ml_dtypes, the scale factor of
each block from the manual's sentences as test_mma_block_scale.manual_scale_sources writes them,
and D is the exact sum of Fractions over the kept products times their scale factors -- or, where a
kept product is an infinity or a NaN, the IEEE answer for it.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_mpfr import F32
from ptxspec.semantics import mma_block_scale as bs
from ptxspec.semantics.instructions import evaluate
from ptxspec.semantics.matrix_layout import compress_sparse
from ptxspec.semantics.results import AnyNaN, Interval, contains
from ptxspec.semantics.warp import Undefined
from ptxspec.spec.catalogue import parse
from test_mma_block_scale import d_results, manual_scale_sources, ml_value, rn_f32

SP = "mma.sp::ordered_metadata.sync.aligned"
#: (form, scale_vec or None for .kind::f8f6f4, scale type)
FORMS = [
    (SP + ".m16n8k64.row.col.kind::f8f6f4.f32.{a}.{b}.f32", None, None),
    (SP + ".m16n8k64.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.{a}.{b}.f32.ue8m0", 1, "ue8m0"),
    (SP + ".m16n8k128.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", 2, "ue8m0"),
    (SP + ".m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", 2, "ue8m0"),
    (SP + ".m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3", 4, "ue4m3"),
]
TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
#: (lowest bit, width) of an element in its 8-bit container (§9.7.14.5.14: .e2m1 "in central 4
#: bits", .e3m2/.e2m3 "in the lower 6 bits"); a packed .e2m1 of mxf4 is its own 4-bit field.
CONTAINER = {"e4m3": (0, 8), "e5m2": (0, 8), "e3m2": (0, 6), "e2m3": (0, 6), "e2m1": (2, 4)}
#: IEEE specials of the 8-bit types (.e4m3 has no infinity, only the NaNs 0x7f / 0xff).
SPECIALS = {"e5m2": (0x7C, 0xFC, 0x7E, 0xFF), "e4m3": (0x7F, 0xFF)}


def place(t: str, packed: bool, field: int) -> int:
    """An element field in its fragment field (container with zero padding, or packed 4 bits)."""
    return field if packed else field << CONTAINER[t][0]


def field_of(t: str, packed: bool, bits: int) -> int:
    return bits if packed else (bits >> CONTAINER[t][0]) & ((1 << CONTAINER[t][1]) - 1)


def normal_fields(t: str) -> list[int]:
    """The fields of ``t`` that are normal non-zero numbers (so the oracle's sums are exact and no
    product is a subnormal input, which the manual lets the hardware read as zero)."""
    width = CONTAINER[t][1]
    tiny = {"e4m3": Fraction(2) ** -6, "e5m2": Fraction(2) ** -14, "e3m2": Fraction(2) ** -2, "e2m3": Fraction(1), "e2m1": Fraction(1)}[t]
    return [f for f in range(1 << width) if isinstance(ml_value(t, f), Fraction) and abs(ml_value(t, f)) >= tiny]


def build(text: str, vec, patterns, A_fields, B_bits, C_bits, sa, sb, selectors):
    """The form and its source registers: the dense A (``patterns[i]``: the K positions row ``i``
    keeps, holding ``A_fields``) compressed with its metadata by compress_sparse, B as given
    (fragment fields), C as f32 bits, the scale data and selectors."""
    form = parse(text)
    L = bs._layouts(form)
    packed = L["a"].element_bits == 4
    k = L["a"].cols
    dense = np.zeros((16, k), dtype=np.uint64)
    for i in range(16):
        for s, kk in enumerate(patterns[i]):
            dense[i, kk] = place(form["atype"], packed, A_fields[i][s])
    a_regs, meta = compress_sparse(L["a"], dense, 0)
    b_regs = L["b"].from_matrix(np.asarray(B_bits, dtype=np.uint64))
    c_regs = L["c"].from_matrix(np.asarray(C_bits, dtype=np.uint64))
    regs = [tuple(int(x) for x in a_regs[:, r]) for r in range(L["a"].registers)]
    regs += [tuple(int(x) for x in b_regs[:, r]) for r in range(L["b"].registers)]
    regs += [tuple(int(x) for x in c_regs[:, r]) for r in range(L["c"].registers)]
    regs += [tuple(int(x) for x in meta), (0,) * 32]
    if vec:
        byte_a, thread_a, byte_b, thread_b = selectors
        regs += [tuple(sa), (byte_a,) * 32, (thread_a,) * 32, tuple(sb), (byte_b,) * 32, (thread_b,) * 32]
    return form, regs


def chunk_pattern(k: int, packed: bool, chunks: list[tuple[int, int]]) -> list[int]:
    """The K positions a row keeps: in each block of four chunks the two chunks ``chunks[block]``
    (a chunk is one element, or a pair of 4-bit elements: "4:8 pair-wise structured sparsity")."""
    per = 2 if packed else 1
    return [block * 4 * per + c * per + e for block, pair in enumerate(chunks) for c in pair for e in range(per)]


def expected(atype: str, btype: str, packed: bool, vec, stype, pattern, A_fields, B_bits, c_bits: int, sa, sb, selectors, i: int, j: int):
    """The oracle for D[i, j]: ("nan",), ("bits", b) for an infinity, or ("value", S, T) with S the
    exact sum over the kept products (times their scale factors) and C, T the sum of magnitudes."""
    k = len(B_bits)
    if vec:
        a_src, b_src = manual_scale_sources(vec, *selectors)
    S = Fraction(0)
    T = Fraction(0)
    special = []
    for s, kk in enumerate(pattern):
        p = ml_value(atype, A_fields[s]) * ml_value(btype, field_of(btype, packed, int(B_bits[kk][j])))
        if vec:
            block = kk // (k // vec)
            (la, ba), (lb, bb) = a_src[i, block], b_src[block, j]
            p = p * ml_value(stype, (sa[la] >> (8 * ba)) & 0xFF) * ml_value(stype, (sb[lb] >> (8 * bb)) & 0xFF)
        if isinstance(p, float):
            special.append(p)
        else:
            S += p
            T += abs(p)
    if special:
        if any(math.isnan(p) for p in special) or (float("inf") in special and float("-inf") in special):
            return ("nan",)
        return ("bits", 0x7F800000 if special[0] > 0 else 0xFF800000)
    c = F32.fraction(c_bits)
    return ("value", S + c, T + abs(c))


def check(got, want, where) -> None:
    if want[0] == "nan":
        assert isinstance(got, AnyNaN), (where, got)
    elif want[0] == "bits":
        assert got == want[1], (where, got)
    else:
        _, S, T = want
        assert isinstance(got, Interval), (where, got)
        assert contains(got, rn_f32(S)), (where, got.describe(), S)
        # "accumulation ... with at least single precision": within ~K ulps of the exact sum.
        for end in (got.low, got.high):
            assert abs(F32.fraction(end) - S) <= T / 2**15 + abs(S) / 2**22 + Fraction(2) ** -100, (where, got.describe())


# ---------------------------------------------------------------------------------------------
# Infinities, NaNs and non-zero padding of B at the pruned positions
# ---------------------------------------------------------------------------------------------

PRUNED_CASES = [
    (FORMS[0], "e2m1", "e5m2", "specials"),
    (FORMS[0], "e4m3", "e4m3", "specials"),
    (FORMS[0], "e5m2", "e2m1", "padding"),
    (FORMS[1], "e3m2", "e5m2", "specials"),
    (FORMS[1], "e2m3", "e4m3", "specials"),
    (FORMS[1], "e4m3", "e3m2", "padding"),
]


@pytest.mark.parametrize("case,atype,btype,what", PRUNED_CASES)
def test_b_at_pruned_positions_does_not_reach_d(case, atype, btype, what):
    """Even rows keep chunks 0 and 1 of every block, odd rows chunks 2 and 3. B holds infinities
    and NaNs (or containers with non-zero padding) in the rows of chunks 2 and 3 of some columns:
    they are pruned for the even rows, whose D is the exact sum of their kept products (not NaN,
    not undefined), and kept for the odd rows, whose D is the IEEE answer (or undefined)."""
    text, vec, stype = case
    text = text.format(a=atype, b=btype)
    rng = np.random.default_rng(14)
    k = 64
    patterns = [chunk_pattern(k, False, [(0, 1) if i % 2 == 0 else (2, 3)] * (k // 4)) for i in range(16)]
    fa, fb = normal_fields(atype), normal_fields(btype)
    A_fields = [[int(rng.choice(fa)) for _ in range(k // 2)] for _ in range(16)]
    B_bits = [[place(btype, False, int(rng.choice(fb))) for _ in range(8)] for _ in range(k)]
    bad = SPECIALS.get(btype, ()) if what == "specials" else (0xFF, 0x81, 0xC3)
    poisoned = {}  # column -> the K rows of B that hold a special or a padded container
    for j in (0, 3, 5, 6):
        rows = [block * 4 + c for block in range(k // 4) for c in (2, 3) if rng.random() < 0.3] or [2]
        for kk in rows:
            B_bits[kk][j] = int(rng.choice(bad))
        poisoned[j] = rows
    C_bits = [[F32.pack(int(rng.integers(2)), int(rng.integers(110, 140)), int(rng.integers(1 << 23))) for _ in range(8)] for _ in range(16)]
    sa = [int(sum(int(rng.integers(120, 135)) << (8 * b) for b in range(4))) for _ in range(32)]
    sb = [int(sum(int(rng.integers(120, 135)) << (8 * b) for b in range(4))) for _ in range(32)]
    selectors = (0, 1, 0, 2)
    form, regs = build(text, vec, patterns, A_fields, B_bits, C_bits, sa, sb, selectors)
    D = d_results(evaluate(form, regs))
    for i in range(16):
        for j in range(8):
            where = (text, i, j)
            if i % 2 == 1 and j in poisoned and what == "padding":
                assert isinstance(D[i, j], Undefined), where  # a kept container with non-zero padding
                continue
            want = expected(atype, btype, False, vec, stype, patterns[i], A_fields[i], B_bits, C_bits[i][j], sa, sb, selectors, i, j)
            if i % 2 == 0:
                assert want[0] == "value", where
            check(D[i, j], want, where)


def test_kept_positions_give_the_exact_sum_for_every_sparse_form():
    """Every sparse form (fp4 pairs of m16n8k128 included), random 2:4 patterns per row and block:
    D is the exact sum over the kept products times their scale factors."""
    rng = np.random.default_rng(7)
    for (text, vec, stype), atype, btype in [(FORMS[0], "e2m3", "e5m2"), (FORMS[1], "e5m2", "e2m1")] + [(f, "e2m1", "e2m1") for f in FORMS[2:]]:
        text = text.format(a=atype, b=btype)
        packed = "m16n8k128" in text
        k = 128 if packed else 64
        pairs = list(itertools.combinations(range(4), 2))
        patterns = [chunk_pattern(k, packed, [pairs[int(rng.integers(6))] for _ in range(16)]) for _ in range(16)]
        fa, fb = normal_fields(atype), normal_fields(btype)
        A_fields = [[int(rng.choice(fa)) for _ in range(k // 2)] for _ in range(16)]
        B_bits = [[place(btype, packed, int(rng.choice(fb))) for _ in range(8)] for _ in range(k)]
        C_bits = [[F32.pack(int(rng.integers(2)), int(rng.integers(110, 140)), int(rng.integers(1 << 23))) for _ in range(8)] for _ in range(16)]
        if stype == "ue4m3":  # normal ue4m3 scales only (a subnormal scale may be read as zero)
            byte = lambda: int(rng.integers(0x08, 0x7F))
        else:
            byte = lambda: int(rng.integers(120, 135))
        sa = [sum(byte() << (8 * b) for b in range(4)) for _ in range(32)]
        sb = [sum(byte() << (8 * b) for b in range(4)) for _ in range(32)]
        selectors = (0, 1, 0, 3) if vec in (None, 1, 4) else (2, 0, 0, 1)
        form, regs = build(text, vec, patterns, A_fields, B_bits, C_bits, sa, sb, selectors)
        D = d_results(evaluate(form, regs))
        for (i, j), got in D.items():
            check(got, expected(atype, btype, packed, vec, stype, patterns[i], A_fields[i], B_bits, C_bits[i][j], sa, sb, selectors, i, j), (text, i, j))


# ---------------------------------------------------------------------------------------------
# The property: B at a row's pruned positions never changes that row of D
# ---------------------------------------------------------------------------------------------

PROPERTY_FORMS = [(FORMS[0], a, b) for a in TYPES for b in TYPES] + [(FORMS[1], a, b) for a in TYPES for b in TYPES] + [(f, "e2m1", "e2m1") for f in FORMS[2:]]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(PROPERTY_FORMS), st.integers(0, 2**32 - 1))
def test_changing_b_at_pruned_positions_never_changes_d(case, seed):
    """Arbitrary A (any non-zero field at the kept positions), B (any container, padding and
    specials included), C and scale data. B' differs from B only in the K rows that row 0 prunes
    (any new bits: infinities, NaNs, non-zero padding); every row of D whose kept positions avoid
    the changed rows of B -- row 0 and the rows that share its pattern at least -- is the same
    under B and B'."""
    (text, vec, stype), atype, btype = case
    text = text.format(a=atype, b=btype)
    rng = np.random.default_rng(seed)
    packed = "m16n8k128" in text
    k = 128 if packed else 64
    bits = 4 if packed else 8
    pairs = list(itertools.combinations(range(4), 2))
    shapes = [chunk_pattern(k, packed, [pairs[int(rng.integers(6))] for _ in range(16)]) for _ in range(3)]
    patterns = [shapes[0]] + [shapes[int(rng.integers(3))] for _ in range(15)]
    width = CONTAINER[atype][1] if not packed else 4
    A_fields = [[int(rng.integers(1, 1 << width)) for _ in range(k // 2)] for _ in range(16)]
    b_width = 4 if packed else CONTAINER[btype][1]
    B_bits = [
        [place(btype, packed, int(rng.integers(0, 1 << b_width))) if rng.random() < 0.99 else int(rng.integers(0, 1 << bits)) for _ in range(8)]
        for _ in range(k)
    ]  # mostly well-formed containers, some with padding set
    C_bits = rng.integers(0, 1 << 32, size=(16, 8)).tolist()
    # scale bytes of every kind (NaN, ue4m3 with its MSB set), mostly defined ones
    msb = 0x80808080 if stype == "ue4m3" and rng.random() < 0.8 else 0
    sa, sb = [int(x) & ~msb for x in rng.integers(0, 1 << 32, size=32)], [int(x) & ~msb for x in rng.integers(0, 1 << 32, size=32)]
    valid = bs.VALID_SELECTORS[vec or 1]
    selectors = tuple(int(rng.choice(v)) for v in (valid[0], valid[1], valid[0], valid[2]))
    pruned = sorted(set(range(k)) - set(patterns[0]))
    changed = [kk for kk in pruned if rng.random() < 0.5] or pruned[:1]
    poison = list(SPECIALS.get(btype, ())) + ([0xFF, 0x03, 0xC0] if btype in ("e2m1", "e3m2", "e2m3") and not packed else [])
    B2 = [list(row) for row in B_bits]
    for kk in changed:
        for j in range(8):
            B2[kk][j] = int(rng.choice(poison)) if poison and rng.random() < 0.5 else int(rng.integers(0, 1 << bits))
    form, regs = build(text, vec, patterns, A_fields, B_bits, C_bits, sa, sb, selectors)
    _, regs2 = build(text, vec, patterns, A_fields, B2, C_bits, sa, sb, selectors)
    D, D2 = d_results(evaluate(form, regs)), d_results(evaluate(form, regs2))
    untouched = [i for i in range(16) if not set(patterns[i]) & set(changed)]
    assert 0 in untouched
    for i in untouched:
        for j in range(8):
            assert D[i, j] == D2[i, j], (text, seed, i, j, D[i, j], D2[i, j])
