"""The sparse operand (§9.7.14.6 mma.sp, §9.7.15.6 wgmma.mma_async.sp): D takes the stored elements
of A times the rows of B they select, and B's pruned positions are never read (issue 14, item 3).

A row of a sparse A keeps K/2 of its K positions; the other K/2 are its pruned positions. Expanding
A with zeros and multiplying it with all of B would make 0 * inf = NaN wherever B holds an infinity
or a NaN at a pruned position; silicon never reads those positions (the recording
conformance/data/sm_90/wgmma-pruned-*.npz, replayed in tests/test_wgmma_silicon.py).

The oracles here do not call the sparse mechanism under test (semantics/sparse.py): the positions a
row keeps are chosen by the test (and written as metadata by compress_sparse, whose layout
tests/test_wgmma_layout.py checks against the manual's figures), element values come from a small
table of exactly known numbers, and the expected D is an exact sum of Fractions over the kept
positions -- or, where a kept product is an infinity or a NaN, the IEEE answer for it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_wgmma_layout import BITS, _form, packed_descriptor

from ptxspec.conformance.silicon import wgmma_campaign as wc
from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import mma
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.results import SM_90, SPEC, contains
from ptxspec.semantics.wgmma import wgmma_batch, wgmma_mma_async
from ptxspec.spec import wgmma as wg
from ptxspec.spec.catalogue import parse

#: (exponent bits, mantissa bits, shift in its container): the formats as §5.2.5 describes them.
LAYOUT = {"f32": (8, 23, 0), "f16": (5, 10, 0), "bf16": (8, 7, 0), "tf32": (8, 10, 13), "e4m3": (4, 3, 0), "e5m2": (5, 2, 0)}
SP = "wgmma.mma_async.sp.sync.aligned"
#: (form, sparsity selector): every wgmma.sp multiplicand type, both selectors where the manual
#: allows them ("the sparsity selector must be 0" for 8-bit types).
FORMS = [
    (SP + ".m64n16k32.f32.f16.f16", 0),
    (SP + ".m64n16k32.f32.f16.f16", 1),
    (SP + ".m64n16k32.f16.f16.f16", 1),
    (SP + ".m64n16k32.f32.bf16.bf16", 0),
    (SP + ".m64n16k32.f32.bf16.bf16", 1),
    (SP + ".m64n16k16.f32.tf32.tf32", 0),
    (SP + ".m64n16k16.f32.tf32.tf32", 1),
    (SP + ".m64n16k64.f32.e4m3.e4m3", 0),
    (SP + ".m64n16k64.f32.e5m2.e5m2", 0),
    (SP + ".m64n16k64.f16.e4m3.e5m2", 0),
]
SMALL = [Fraction(v) for v in (1, 2, 3, -1, -2, -3)] + [Fraction(1, 2), Fraction(-3, 2), Fraction(3, 4)]


def encode(t: str, value: Fraction) -> int:
    """The bits of a normal number ``value`` of format ``t`` (exactly representable)."""
    e_bits, m_bits, shift = LAYOUT[t]
    sign = int(value < 0)
    value = abs(value)
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    mantissa = value / Fraction(2) ** exponent - 1
    assert (mantissa * 2**m_bits).denominator == 1, (t, value)
    return ((sign << (e_bits + m_bits)) | ((exponent + (1 << (e_bits - 1)) - 1) << m_bits) | int(mantissa * 2**m_bits)) << shift


def specials(t: str) -> dict[str, int]:
    """+inf, -inf, a NaN and the largest finite number of ``t`` (.e4m3 has no infinity: NaN twice)."""
    e_bits, m_bits, shift = LAYOUT[t]
    top = (1 << e_bits) - 1
    if t == "e4m3":
        return {"inf": 0x7F, "-inf": 0xFF, "nan": 0x7F, "huge": 0x7E}
    return {
        "inf": top << m_bits << shift,
        "-inf": ((1 << (e_bits + m_bits)) | top << m_bits) << shift,
        "nan": (top << m_bits | 1 << (m_bits - 1)) << shift,
        "huge": ((top - 1) << m_bits | ((1 << m_bits) - 1)) << shift,
    }


def value_of(t: str, bits: int):
    """An element as the test built it: a Fraction, or "inf" / "-inf" / "nan" (never "huge": the
    oracle is only asked about elements whose kept products it knows exactly)."""
    e_bits, m_bits, shift = LAYOUT[t]
    bits >>= shift
    sign, exponent, mantissa = bits >> (e_bits + m_bits), (bits >> m_bits) & ((1 << e_bits) - 1), bits & ((1 << m_bits) - 1)
    if t == "e4m3" and exponent == 15 and mantissa == 7:
        return "nan"
    if t != "e4m3" and exponent == (1 << e_bits) - 1:
        return "nan" if mantissa else ("-inf" if sign else "inf")
    assert exponent, "the test uses normal numbers only"
    v = (1 + Fraction(mantissa, 1 << m_bits)) * Fraction(2) ** (exponent - (1 << (e_bits - 1)) + 1)
    return -v if sign else v


def expected_d(dtype: str, pairs, c: Fraction):
    """IEEE's answer for sum(a * b) + c over the kept pairs: an exact sum (None where it would need
    rounding or holds the largest finite number: not asked), an infinity, or "nan"."""
    infinities = set()
    for a, b in pairs:
        if "nan" in (a, b) or (isinstance(a, str) and b == 0) or (isinstance(b, str) and a == 0):
            return "nan"
        if isinstance(a, str) or isinstance(b, str):
            negative = (a == "-inf" or (not isinstance(a, str) and a < 0)) != (b == "-inf" or (not isinstance(b, str) and b < 0))
            infinities.add("-inf" if negative else "inf")
    if len(infinities) == 2:
        return "nan"
    if infinities:
        return infinities.pop()
    total = sum((a * b for a, b in pairs), c)
    if total == 0:
        return 0  # every zero result is +0 (sm_90); the sets hold it too
    try:
        return encode(dtype, total)
    except AssertionError:
        return None


def _instance(text: str, selector: int, seed: int, registers: bool = False):
    """One wgmma.sp instance: rows 0-47 keep the positions P of every block (chosen per instance),
    rows 48-63 the other positions; A's kept elements and C are small numbers, B is small numbers at
    P and +-inf, NaN or the largest finite number at the other positions -- B's pruned positions
    for rows 0-47, its kept ones for rows 48-63."""
    rng = np.random.default_rng(seed)
    form = _form(text, registers)
    m, n, k = wg.parse_shape(form["shape"])
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    group, keep = (2, 1) if atype == "tf32" else (4, 2)
    kept = np.zeros(k, dtype=bool)
    for start in range(0, k, group):
        kept[start + rng.choice(group, size=keep, replace=False)] = True
    rows_kept = np.array([kept if r < 48 else ~kept for r in range(m)])
    A = np.zeros((m, k), dtype=np.uint64)
    A[rows_kept] = [encode(atype, SMALL[i]) for i in rng.integers(0, len(SMALL), int(rows_kept.sum()))]
    s = specials(btype)
    pool = [s["inf"], s["-inf"], s["nan"], s["huge"]]
    B = np.array(
        [[encode(btype, SMALL[rng.integers(len(SMALL))]) if kept[q] else pool[rng.integers(len(pool))] for _ in range(n)] for q in range(k)], dtype=np.uint64
    )
    C = np.array([[encode(dtype, SMALL[rng.integers(len(SMALL))]) for _ in range(n)] for _ in range(m)], dtype=np.uint64)
    stored, meta = wl.compress_sparse(form["shape"], atype, A, selector)
    desc_a = packed_descriptor(0, "none", "K", BITS[atype], m, k // 2, 0)
    desc_b = packed_descriptor(16384, "none", "K", BITS[btype], n, k, 1)
    image = wl.write_matrix(np.zeros(1 << 15, dtype=np.uint8), desc_a, stored, atype, "K")
    image = wl.write_matrix(image, desc_b, B, btype, "K", operand="b")
    a = wl.fragment_layout(form["shape"], "a", atype, sparse=True).from_matrix(stored) if registers else desc_a.encode()
    return form, image, a, desc_b.encode(), wl.wgmma_result_registers(form, C), meta, (A, B, C, rows_kept)


def _expected(form, A, B, C, rows_kept) -> np.ndarray:
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    out = np.empty(C.shape, dtype=object)
    for i in range(C.shape[0]):
        positions = np.flatnonzero(rows_kept[i])
        for j in range(C.shape[1]):
            if any(int(B[q, j]) == specials(btype)["huge"] for q in positions):
                out[i, j] = None
                continue
            pairs = [(value_of(atype, int(A[i, q])), value_of(btype, int(B[q, j]))) for q in positions]
            out[i, j] = expected_d(dtype, pairs, value_of(dtype, int(C[i, j])))
    return out


def _is_nan(dtype: str, bits: int) -> bool:
    e_bits, m_bits, _ = LAYOUT[dtype]
    return (bits >> m_bits) & ((1 << e_bits) - 1) == (1 << e_bits) - 1 and bits & ((1 << m_bits) - 1) != 0


def _check(dtype: str, got: np.ndarray, expected: np.ndarray, sets: bool) -> int:
    """Every element the oracle knows; returns how many were checked."""
    checked = 0
    nan = 0x7FFFFFFF if dtype == "f32" else 0x7FFF
    for (i, j), want in np.ndenumerate(expected):
        if want is None:
            continue
        result = got[i, j]
        if sets:
            assert contains(result, nan if want == "nan" else int(_bits(dtype, want))), (i, j, want, result)
            if want != "nan":
                assert not contains(result, nan), (i, j, result)
        elif want == "nan":
            assert _is_nan(dtype, int(result)), (i, j, hex(int(result)))
        else:
            assert int(result) == _bits(dtype, want), (i, j, want, hex(int(result)))
        checked += 1
    return checked


def _bits(dtype: str, want) -> int:
    if isinstance(want, str):
        return specials(dtype)[want]
    return int(want)


@pytest.mark.parametrize(("text", "selector"), FORMS)
def test_pruned_positions_of_b_are_never_read(text, selector):
    """Infinities, NaNs and the largest finite number in B where a row of A is pruned: rows 0-47 of
    D are the exact sums of their kept products (finite), rows 48-63 -- which keep those positions
    -- the IEEE answer (an infinity or NaN), at the sm_90 profile (readable and batched, A from
    shared memory and from registers) and in the spec-level sets."""
    form, image, a, desc_b, c_regs, meta, (A, B, C, rows_kept) = _instance(text, selector, seed=len(text) + selector)
    expected = _expected(form, A, B, C, rows_kept)
    finite = sum(1 for i in range(48) for j in range(C.shape[1]) if expected[i, j] not in (None, "nan", "inf", "-inf"))
    assert finite == 48 * C.shape[1]  # every row that prunes the specials has a finite, exactly known D
    one = wgmma_mma_async(form, image, a, desc_b, c_regs, sp_meta=meta, sp_sel=selector, profile="sm_90")
    assert _check(form["dtype"], one.d, expected, sets=False) >= 48 * C.shape[1]
    batch = wgmma_batch(
        form,
        image[None],
        np.array([a], dtype=np.uint64),
        np.array([desc_b], dtype=np.uint64),
        c_regs[None],
        sp_meta=meta[None],
        sp_sel=selector,
        profile="sm_90",
        matrices=True,
    )
    np.testing.assert_array_equal(batch[0], one.d)
    regs_form, rimage, ra, rdesc_b, rc, rmeta, _ = _instance(text, selector, seed=len(text) + selector, registers=True)
    np.testing.assert_array_equal(wgmma_mma_async(regs_form, rimage, ra, rdesc_b, rc, sp_meta=rmeta, sp_sel=selector, profile="sm_90").d, one.d)
    spec = wgmma_mma_async(form, image, a, desc_b, c_regs, sp_meta=meta, sp_sel=selector, profile="spec")
    _check(form["dtype"], spec.d[:, :4], expected[:, :4], sets=True)  # the sets cost a rational sum each: four columns


MMA_SHAPE = {"f16": "m16n8k32", "bf16": "m16n8k32", "tf32": "m16n8k16", "e4m3": "m16n8k64", "e5m2": "m16n8k64"}


@pytest.mark.parametrize(("text", "selector"), [f for f in FORMS if ".f32." in f[0]])
def test_wgmma_sp_equals_mma_sp_on_the_same_stored_elements(text, selector):
    """Warp 0's rows of a wgmma.sp (rows 0-15) and the first 8 columns are an mma.sp of the warp
    shape (§9.7.15.6.2: "each warp in the warpgroup provides sparsity information for 16 rows"):
    the same stored elements, metadata and B give the same D (both measured datapaths sum these
    small numbers exactly) -- and B's pruned positions reach neither."""
    form, image, a, desc_b, c_regs, meta, (A, B, C, rows_kept) = _instance(text, selector, seed=7 * selector + len(text))
    wgmma_d = wgmma_mma_async(form, image, a, desc_b, c_regs, sp_meta=meta, sp_sel=selector, profile="sm_90").d
    atype, btype = form["atype"], form["btype"]
    shape = MMA_SHAPE[atype]
    mma_form = parse(f"mma.sp.sync.aligned.{shape}.row.col.f32.{atype}.{btype}.f32")
    la = ml.fragment_layout(shape, "a", atype, sparse=True)
    a_regs, e = ml.compress_sparse(la, A[:16], selector)
    b_regs = ml.fragment_layout(shape, "b", btype, sparse=True).from_matrix(B[:, :8])
    c_lanes = ml.fragment_layout(shape, "c", "f32").from_matrix(C[:16, :8])
    d = mma.mma_fragments(mma_form, a_regs, b_regs, c_lanes, profile=SM_90, metadata=e, selector=selector)
    mma_d = ml.fragment_layout(shape, "d", "f32").to_matrix(d)
    np.testing.assert_array_equal(mma_d, wgmma_d[:16, :8])
    expected = _expected(form, A[:16, :], B[:, :8], C[:16, :8], rows_kept[:16])
    assert _check("f32", mma_d, expected, sets=False) == 16 * 8


# ---------------------------------------------------------------------------------------------
# The property: B at a position a row prunes never changes that row of D
# ---------------------------------------------------------------------------------------------

NIBBLES = {"pairs": [0x4, 0x8, 0xC, 0x9, 0xD, 0xE], "tf32": [0x4, 0xE]}  # two different indices (§9.7.14.6.1)
PROPERTY_FORMS = [
    (SP + ".m64n8k32.f32.f16.f16", (0, 1)),
    (SP + ".m64n8k32.f16.f16.f16", (0, 1)),
    (SP + ".m64n8k32.f32.bf16.bf16", (0, 1)),
    (SP + ".m64n8k16.f32.tf32.tf32", (0, 1)),
    (SP + ".m64n8k64.f32.e4m3.e5m2", (0,)),
    (SP + ".m64n8k64.f16.e5m2.e4m3", (0,)),
    (SP + ".m64n8k64.s32.s8.u8", (0,)),
]


@st.composite
def sparse_cases(draw, forms):
    text, selectors = draw(st.sampled_from(forms))
    selector = draw(st.sampled_from(selectors))
    seed = draw(st.integers(0, 2**32 - 1))
    uniform = draw(st.booleans())  # one pattern for every row (then B changes at every position A prunes)
    return text, selector, seed, uniform


def _metadata(rng, kind: str, words: int, uniform: bool) -> np.ndarray:
    table = np.array(NIBBLES[kind], dtype=np.uint64)
    if uniform:
        return np.full(words, int(table[rng.integers(len(table))]) * 0x11111111, dtype=np.uint64)
    nibbles = table[rng.integers(0, len(table), (words, 8))]
    return np.bitwise_or.reduce(nibbles << (np.arange(8, dtype=np.uint64) * np.uint64(4)), axis=-1)


def _any_bits(rng, t: str, shape) -> np.ndarray:
    """Any element bit patterns: zeros, subnormals, infinities and NaNs included."""
    if t in ("s8", "u8"):
        return rng.integers(0, 256, shape, dtype=np.uint64)
    e_bits, m_bits, shift = LAYOUT[t]
    return rng.integers(0, 1 << (1 + e_bits + m_bits), shape, dtype=np.uint64) << np.uint64(shift)


def _change_pruned(rng, t: str, B: np.ndarray, kept: np.ndarray, uniform: bool) -> tuple[np.ndarray, np.ndarray]:
    """B with other values (infinities, NaNs, anything) at random positions, mostly (``uniform``:
    only) ones no row keeps, and which D elements may change: ``[M, N]`` true where row i keeps a
    changed (k, j)."""
    pruned_by_all = ~kept.any(axis=0)  # [K]
    chance = np.where(pruned_by_all[:, None], 0.9, 0.0 if uniform else 0.03)
    changed = rng.random(B.shape) < chance
    if t not in ("s8", "u8"):
        s = specials(t)
        pool = np.array([s["inf"], s["-inf"], s["nan"], s["huge"]], dtype=np.uint64)
        replacement = np.where(rng.random(B.shape) < 0.7, pool[rng.integers(0, 4, B.shape)], _any_bits(rng, t, B.shape))
    else:
        replacement = _any_bits(rng, t, B.shape)
    new = np.where(changed, replacement, B)
    changed &= new != B
    reaches = (kept[:, :, None] & changed[None, :, :]).any(axis=1)  # [M, N]
    return new, reaches


def _same_elements(x: np.ndarray, y: np.ndarray, where: np.ndarray) -> None:
    for (i, j), unaffected in np.ndenumerate(~where):
        if unaffected:
            assert x[i, j] == y[i, j], (i, j, x[i, j], y[i, j])


def _wgmma_case(case, profile: str) -> None:
    text, selector, seed, uniform = case
    rng = np.random.default_rng(seed)
    form = _form(text)
    m, n, k = wg.parse_shape(form["shape"])
    atype, btype = form["atype"], form["btype"]
    stored = _any_bits(rng, atype, (m, k // 2))
    meta = _metadata(rng, "tf32" if atype == "tf32" else "pairs", 128, uniform)
    # Which positions each row keeps: the layout's expansion of non-zero markers (tests/test_wgmma_layout.py).
    marker, _ = wl.expand_sparse(form["shape"], atype, np.ones((m, k // 2), dtype=np.uint64), meta, selector)
    kept = marker != 0
    B = _any_bits(rng, btype, (k, n))
    C = _any_bits(rng, form["dtype"], (m, n)) if form["dtype"] != "s32" else rng.integers(0, 1 << 32, (m, n), dtype=np.uint64)
    desc_a = packed_descriptor(0, "none", "K", BITS[atype], m, k // 2, 0)
    desc_b = packed_descriptor(16384, "none", "K", BITS[btype], n, k, 1)
    B2, reaches = _change_pruned(rng, btype, B, kept, uniform)
    images = []
    for b in (B, B2):
        image = wl.write_matrix(np.zeros(1 << 15, dtype=np.uint8), desc_a, stored, atype, "K")
        images.append(wl.write_matrix(image, desc_b, b, btype, "K", operand="b"))
    c_regs = wl.wgmma_result_registers(form, C)
    kw = {"sp_sel": selector, "profile": profile, "matrices": True}
    d = wgmma_batch(
        form,
        np.stack(images),
        np.full(2, desc_a.encode(), dtype=np.uint64),
        np.full(2, desc_b.encode(), dtype=np.uint64),
        np.stack([c_regs, c_regs]),
        sp_meta=np.stack([meta, meta]),
        **kw,
    )
    _same_elements(d[0], d[1], reaches)
    if uniform:
        assert not reaches.any()  # only positions every row prunes changed
    one = wgmma_mma_async(form, images[1], desc_a.encode(), desc_b.encode(), c_regs, sp_meta=meta, sp_sel=selector, profile=profile)
    _same_elements(one.d, d[1], np.zeros_like(reaches))


@settings(max_examples=30, deadline=None)
@given(sparse_cases(PROPERTY_FORMS))
def test_wgmma_sp_d_does_not_depend_on_pruned_b(case):
    _wgmma_case(case, "sm_90")


@settings(max_examples=4, deadline=None)
@given(sparse_cases([f for f in PROPERTY_FORMS if ".f32.f16" in f[0] or ".e4m3.e5m2" in f[0]]))
def test_wgmma_sp_spec_sets_do_not_depend_on_pruned_b(case):
    """The spec-level sets too (a rational sum per element: few examples)."""
    _wgmma_case(case, "spec")


MMA_SP_FORMS = [
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", (0, 1)),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", (0, 1, 2, 3)),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", (0, 1)),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", (0, 1)),
    ("mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32", (0,)),
    ("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.u8.s32", (0,)),
]


def _mma_case(case, profile) -> None:
    text, selector, seed, uniform = case
    rng = np.random.default_rng(seed)
    form = parse(text)
    shape, atype, btype, dtype = form["shape"], form["atype"], form["btype"], form["dtype"]
    la = ml.fragment_layout(shape, "a", atype, sparse=True)
    lb, lc = ml.fragment_layout(shape, "b", btype, sparse=True), ml.fragment_layout(shape, "c", form["ctype"])
    stored = _any_bits(rng, atype, (la.rows, la.stored_cols))
    e = _metadata(rng, "tf32" if atype == "tf32" else "pairs", 32, uniform)
    if form["spvariant"] == "sp::ordered_metadata":  # "the indices ... sorted in increasing order"
        e = np.full(32, 0xEEEEEEEE if uniform else 0x8C48D9E4, dtype=np.uint64)
    marker, _ = ml.expand_sparse(la, la.from_matrix(np.ones(stored.shape, dtype=np.uint64)), e, selector, ordered=form["spvariant"] != "sp")
    kept = marker != 0
    B = _any_bits(rng, btype, (la.cols, lb.cols))
    C = _any_bits(rng, dtype, (la.rows, lb.cols)) if dtype != "s32" else rng.integers(0, 1 << 32, (la.rows, lb.cols), dtype=np.uint64)
    B2, reaches = _change_pruned(rng, btype, B, kept, uniform)
    a = la.from_matrix(stored)
    if profile is SM_90:
        ld = ml.fragment_layout(shape, "d", dtype)
        d = [ld.to_matrix(mma.mma_fragments(form, a, lb.from_matrix(b), lc.from_matrix(C), profile=SM_90, metadata=e, selector=selector)) for b in (B, B2)]
    else:  # the sets, element by element: the functions mma_fragments composes
        s, cols, _ = mma.sparse_rows(la, a, e, selector, ordered=form["spvariant"] != "sp")
        d = [mma.sparse_matrix(shape, atype, btype, form["ctype"], dtype, s, cols, b, C, profile=SPEC) for b in (B, B2)]
    _same_elements(d[0], d[1], reaches)


@settings(max_examples=30, deadline=None)
@given(sparse_cases(MMA_SP_FORMS))
def test_mma_sp_d_does_not_depend_on_pruned_b(case):
    _mma_case(case, SM_90)


@settings(max_examples=4, deadline=None)
@given(sparse_cases(MMA_SP_FORMS[:1]))
def test_mma_sp_spec_sets_do_not_depend_on_pruned_b(case):
    _mma_case(case, SPEC)


# ---------------------------------------------------------------------------------------------
# Round 3 on silicon: conformance/data/sm_90/{wgmma-pruned-0.npz, meta-wgmma-pruned.json}
# ---------------------------------------------------------------------------------------------

HAVE_PRUNED = (wc.DATA / "meta-wgmma-pruned.json").exists()
needs_pruned = pytest.mark.skipif(not HAVE_PRUNED, reason="no pruned-position wgmma recording in conformance/data/sm_90")


@pytest.fixture(scope="module")
def pruned():
    return {r.name: r for r in wc.load(wc.DATA, "pruned")}


@needs_pruned
def test_pruned_recording_is_the_planned_design(pruned):
    """Every planned kernel was recorded, with the inputs pruned_matrices designs (regenerated here
    from the seed, bit for bit): so the designs the docs describe are what the GPU ran."""
    import json

    meta = json.loads((wc.DATA / "meta-wgmma-pruned.json").read_text())
    assert not meta["failed"] and not meta["rejected"] and meta["gpu"].startswith("NVIDIA H")
    plan = wc.plan_kernels("pruned")
    assert len(pruned) == len(plan) == len(meta["kernels"]) == 2 * len(wc.PRUNED_COMBINATIONS)
    for i, (combo, n, probe, random) in enumerate(plan):
        entry, arrays, _ = wc._make(combo, n, probe, random, f"wm{i:03d}")
        rec = pruned[entry["name"]]
        assert rec.count == rec.stored == wc.PRUNED_INSTANCES and not np.any(rec.base % 1024)
        for key, field in (("image", rec.image), ("a", rec.a), ("d", rec.c), ("meta", rec.meta), ("scale", rec.scale)):
            np.testing.assert_array_equal(field, arrays[f"{entry['name']}_p{key}"], err_msg=f"{entry['name']} {key}")


@needs_pruned
def test_pruned_recording_replays_bit_exactly(pruned):
    """Every recorded D register of round 3 (26 kernels, 208 instances, 372,736 dot products; B's
    pruned positions holding infinities, NaNs and the largest finite numbers) equals the sm_90
    profile's, compared as integers: wgmma_batch for every instance, the readable wgmma_mma_async
    for the first of each kernel."""
    registers = mismatches = 0
    for rec in pruned.values():
        e = rec.entry
        kw = {"sp_meta": rec.meta, "sp_sel": e["sp_sel"], "imm_scale_a": e["scale_a"], "imm_scale_b": e["scale_b"], "profile": "sm_90"}
        a = rec.a if e["a_registers"] else rec.desc[:, 0]
        got = wgmma_batch(wc.form_of(rec), rec.image, a, rec.desc[:, 1], rec.c, scale_d=rec.scale.astype(bool), **kw)
        assert got.dtype == np.uint64, rec.name
        bad = int(np.count_nonzero(got != rec.d.astype(np.uint64)))
        assert bad == 0, f"{rec.name}: {bad} registers differ from the recording"
        registers += got.size
        kw["sp_meta"] = rec.meta[0]
        one = wgmma_mma_async(wc.form_of(rec), rec.image[0], a[0], int(rec.desc[0, 1]), rec.c[0], scale_d=bool(rec.scale[0]), **kw)
        mismatches += int(np.count_nonzero(one.registers != rec.d[0].astype(np.uint64)))
    assert mismatches == 0 and registers == sum(r.d.size for r in pruned.values())
    assert sum(r.dots for r in pruned.values()) == 372_736


def _zero_expanded_d(rec, i: int) -> np.ndarray:
    """The reading issue 14 refutes: A expanded with zeros, multiplied with ALL of B (numpy
    broadcasting over the dense K here, not the sparse mechanism), through the same datapath."""
    from ptxspec.profiles.sm_90 import SM_90
    from ptxspec.semantics.wgmma import datapath_for

    e = rec.entry
    A, B, Cm, _ = wc.matrices(rec, i)
    A, B, Cm = wc.effective(rec, i, A, B, Cm)
    model = datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=True)
    return mma.datapath_matrix(model, e["atype"], e["btype"], e["dtype"], e["dtype"], A.dense(), B, Cm)


@needs_pruned
def test_pruned_recording_refutes_multiplying_pruned_positions(pruned):
    """Silicon does not read B where A is pruned: in design 0 (B's pruned positions all infinities,
    NaNs or the largest finite numbers, A and C ordinary) every recorded D element is finite, where
    multiplying the zero-expanded A with all of B gives NaN almost everywhere; over the recording
    that reading misses almost every instance."""
    differing = total = 0
    for rec in pruned.values():
        fd = wc.FORMATS[rec.entry["dtype"]]
        top = np.uint64((1 << fd.exponent_bits) - 1)
        for i in range(rec.count):
            D = wc.matrices(rec, i)[3]
            zero_expanded = _zero_expanded_d(rec, i)
            differing += bool(np.any(zero_expanded != D))
            total += 1
            if rec.entry["designs"][i] == 0:
                assert not np.any((D >> np.uint64(fd.mantissa_bits)) & top == top), (rec.name, i)  # finite
                # NaN wherever a pruned infinity or NaN meets the column (a column of pruned +-huge only stays finite)
                assert np.mean((zero_expanded >> np.uint64(fd.mantissa_bits)) & top == top) > 0.9, (rec.name, i)
    assert total == 208 and differing >= 200


@needs_pruned
def test_pruned_recording_lies_in_the_spec_level_sets(pruned):
    """The spec-level sets (the manual's guarantee over the K/2 stored products) hold the recorded
    f16/bf16/tf32 results -- a random sample of elements of each instance."""
    for rec in pruned.values():
        if rec.entry["atype"] in ("f16", "bf16", "tf32") and rec.entry["n"] == 16:
            checked, outside = wc.outside_spec(rec, per_instance=12)
            assert checked == 12 * wc.PRUNED_INSTANCES and outside == 0, rec.name
