"""Fragment layouts (semantics/matrix_layout.py) and ldmatrix/stmatrix/movmatrix
(semantics/matrix_data_movement.py).

The oracles here are a second reading of the manual: the formulas of §9.7.14.5.1-13 written out
as the manual prints them, case by case (``for ai where 0 <= i < 2 || 4 <= i < 6`` ...), not the
implementation's general formula; and ldmatrix read lane by lane from the bytes of the image.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.semantics import matrix_data_movement as dm
from ptxspec.semantics import matrix_layout as ml
from ptxspec.spec import matrix as mx
from ptxspec.spec.errors import OperandError, PtxSpecError

# ---------------------------------------------------------------------------------------------
# Every layout
# ---------------------------------------------------------------------------------------------


def _all_layouts():
    out = []
    for shape, t in mx.DENSE_AB:
        out += [("a", shape, t, False, None), ("b", shape, t, False, None)]
    for shape, ts in mx.ACCUMULATORS.items():
        out += [("c", shape, t, False, None) for t in ts]
    for operand in "ab":
        out += [(operand, "m8n8k4", "f16", False, layout) for layout in ("row", "col")]
    for shape, t in mx.SPARSE_AB:
        out += [("a", shape, t, True, None), ("b", shape, t, True, None)]
    return out


LAYOUTS = _all_layouts()


def _layout(operand, shape, t, sparse, layout):
    return ml.fragment_layout(shape, operand, t, sparse=sparse, layout=layout)


@pytest.mark.parametrize("case", LAYOUTS, ids=lambda c: "-".join(str(x) for x in c if x not in (None, False)) + ("-sp" if c[3] else ""))
def test_layout_is_a_bijection_onto_the_matrix(case):
    """Each (lane, register, index) names a distinct cell, and every cell is named."""
    layout = _layout(*case)
    cells = [layout.element(lane, r, k) for lane in range(32) for r in range(layout.registers) for k in range(layout.per_register)]
    assert len(set(cells)) == len(cells) == layout.rows * layout.stored_cols
    assert all(0 <= row < layout.rows and 0 <= col < layout.stored_cols for row, col in cells)
    # the element count the manual's register tables give: registers x (register bits / element bits)
    assert layout.registers == mx.fragment_registers(case[1], case[0], case[2], sparse=case[3])[0]


@pytest.mark.parametrize("case", LAYOUTS[::3], ids=str)
def test_vectorised_conversion_matches_element(case):
    """to_matrix/from_matrix (index arrays) agree with element() one field at a time, and invert each other."""
    layout = _layout(*case)
    rng = np.random.default_rng(len(str(case)))
    bits = layout.register_bits
    lanes = rng.integers(0, 2**63, size=(3, 32, layout.registers), dtype=np.uint64)
    if bits == 32:
        lanes &= np.uint64(0xFFFFFFFF)
    else:
        lanes |= rng.integers(0, 2, size=lanes.shape, dtype=np.uint64) << np.uint64(63)
    matrix = layout.to_matrix(lanes)
    assert matrix.shape == (3, layout.rows, layout.stored_cols)
    width = layout.element_bits
    for b in range(3):
        for lane in range(0, 32, 5):
            for r in range(layout.registers):
                for k in range(layout.per_register):
                    row, col = layout.element(lane, r, k)
                    assert int(matrix[b, row, col]) == (int(lanes[b, lane, r]) >> (k * width)) & ((1 << width) - 1)
    assert np.array_equal(layout.from_matrix(matrix), lanes)


# ---------------------------------------------------------------------------------------------
# The manual's formulas, a second reading (groupID = lane >> 2, threadID_in_group = lane % 4)
# ---------------------------------------------------------------------------------------------


def g(lane):
    return lane >> 2


def t(lane):
    return lane % 4


def _m16n8k16_f16_a(lane, i):
    # §9.7.14.5.8: row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, groupID + 8 otherwise;
    # col = (threadID_in_group * 2) + (i & 0x1) for i < 4, ... + 8 for i >= 4
    row = g(lane) if (0 <= i < 2 or 4 <= i < 6) else g(lane) + 8
    col = t(lane) * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def _m16n8k16_f64_a(lane, i):
    # §9.7.14.5.8 .f64: row = groupID for i % 2 = 0, groupID + 8 otherwise;
    # col = (i * 2) + threadID_in_group for i % 2 = 0, (i * 2) - 2 + threadID_in_group otherwise
    return (g(lane), i * 2 + t(lane)) if i % 2 == 0 else (g(lane) + 8, i * 2 - 2 + t(lane))


def _m16n8k8_tf32_a(lane, i):
    # §9.7.14.5.7: row = groupID for a0 and a2, groupID + 8 for a1 and a3;
    # col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2 and a3
    return (g(lane) if i in (0, 2) else g(lane) + 8), (t(lane) if i in (0, 1) else t(lane) + 4)


def _m16n8k32_i8_a(lane, i):
    # §9.7.14.5.10: row = groupID for 0 <= i < 4 || 8 <= i < 12, groupID + 8 otherwise;
    # col = (threadID_in_group * 4) + (i & 0x3) for i < 8, ... + 16 for i >= 8
    row = g(lane) if (0 <= i < 4 or 8 <= i < 12) else g(lane) + 8
    return row, t(lane) * 4 + (i & 3) + (16 if i >= 8 else 0)


def _m16n8k32_i4_a(lane, i):
    # §9.7.14.5.10 .s4/.u4: row = groupID for i < 8, groupID + 8 for i >= 8; col = (tig * 8) + (i & 0x7)
    return (g(lane) if i < 8 else g(lane) + 8), t(lane) * 8 + (i & 7)


def _m16n8k64_a(lane, i):
    # §9.7.14.5.11: row = groupID for 0 <= i < 8 || 16 <= i < 24, + 8 otherwise;
    # col = (tig * 8) + (i & 0x7) for i < 16, ... + 32 for i >= 16
    row = g(lane) if (0 <= i < 8 or 16 <= i < 24) else g(lane) + 8
    return row, t(lane) * 8 + (i & 7) + (32 if i >= 16 else 0)


def _m16n8k256_a(lane, i):
    # §9.7.14.5.13 as we read it: (threadID_in_group * 32) + (i & 0x1F) for i < 64 (the manual prints "+ i")
    row = g(lane) if (0 <= i < 32 or 64 <= i < 96) else g(lane) + 8
    return row, t(lane) * 32 + (i & 0x1F) + (128 if i >= 64 else 0)


def _m16n8_c(lane, i):
    # "row = groupID for ci where i < 2, groupID + 8 for i >= 2; col = (threadID_in_group * 2) + (i & 0x1)"
    return (g(lane) if i < 2 else g(lane) + 8), t(lane) * 2 + (i & 1)


def _m8n8_c(lane, i):
    # §9.7.14.5.3: "row = groupID; col = (threadID_in_group * 2) + i for ci where i = {0, 1}"
    return g(lane), t(lane) * 2 + i


def _m8n8k4_f32_c(lane, i):
    # §9.7.14.5.1, one computation: X = (%laneid & 0b1) + (i & 0b10); row = X (+4 for lanes >= 16);
    # col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1); computations stacked by ((lane >> 2) & 3)
    x = (lane & 1) + (i & 2)
    return x + (4 if lane >= 16 else 0) + 8 * ((lane >> 2) & 3), (i & 4) + (lane & 2) + (i & 1)


MANUAL = {
    ("m16n8k16", "a", "f16"): _m16n8k16_f16_a,
    ("m16n8k16", "a", "bf16"): _m16n8k16_f16_a,
    ("m16n8k16", "a", "f64"): _m16n8k16_f64_a,
    ("m16n8k8", "a", "tf32"): _m16n8k8_tf32_a,
    ("m16n8k8", "a", "f64"): _m16n8k8_tf32_a,
    # §9.7.14.5.7 .f16: row = groupID for a0 and a1, groupID + 8 for a2 and a3; col = tig * 2 + (i & 0x1)
    ("m16n8k8", "a", "f16"): lambda lane, i: (g(lane) + (8 if i >= 2 else 0), t(lane) * 2 + (i & 1)),
    # §9.7.14.5.6: row = groupID for a0, groupID + 8 for a1; col = threadID_in_group
    ("m16n8k4", "a", "tf32"): lambda lane, i: (g(lane) + 8 * i, t(lane)),
    # §9.7.14.5.9: row = groupID for i < 4, + 8 for i >= 4; col = (tig * 4) + (i & 0x3)
    ("m16n8k16", "a", "s8"): lambda lane, i: (g(lane) + (8 if i >= 4 else 0), t(lane) * 4 + (i & 3)),
    ("m16n8k16", "a", "e4m3"): lambda lane, i: (g(lane) + (8 if i >= 4 else 0), t(lane) * 4 + (i & 3)),
    ("m16n8k32", "a", "u8"): _m16n8k32_i8_a,
    ("m16n8k32", "a", "e2m1"): _m16n8k32_i8_a,
    ("m16n8k32", "a", "s4"): _m16n8k32_i4_a,
    ("m16n8k64", "a", "u4"): _m16n8k64_a,
    ("m16n8k64", "a", "e2m1"): _m16n8k64_a,
    # §9.7.14.5.12: row = groupID for i < 32, + 8 for i >= 32; col = (tig * 32) + (i & 0x1F)
    ("m16n8k128", "a", "b1"): lambda lane, i: (g(lane) + (8 if i >= 32 else 0), t(lane) * 32 + (i & 0x1F)),
    ("m16n8k256", "a", "b1"): _m16n8k256_a,
    # §9.7.14.5.2-5 (one register): row = groupID; col = (tig * P) + i
    ("m8n8k4", "a", "f64"): lambda lane, i: (lane >> 2, lane % 4),
    ("m8n8k16", "a", "s8"): lambda lane, i: (g(lane), t(lane) * 4 + i),
    ("m8n8k32", "a", "u4"): lambda lane, i: (g(lane), t(lane) * 8 + i),
    ("m8n8k128", "a", "b1"): lambda lane, i: (g(lane), t(lane) * 32 + i),
    # B
    # §9.7.14.5.8: row = (tig * 2) + (i & 0x1) for i < 2, ... + 8 for i >= 2; col = groupID
    ("m16n8k16", "b", "f16"): lambda lane, i: (t(lane) * 2 + (i & 1) + (8 if i >= 2 else 0), g(lane)),
    # §9.7.14.5.8 .f64: row = threadID_in_group + (i * 4); col = groupID
    ("m16n8k16", "b", "f64"): lambda lane, i: (t(lane) + i * 4, g(lane)),
    # §9.7.14.5.7: .f16 row = (tig * 2) + i; .tf32 row = tig for b0, tig + 4 for b1
    ("m16n8k8", "b", "bf16"): lambda lane, i: (t(lane) * 2 + i, g(lane)),
    ("m16n8k8", "b", "tf32"): lambda lane, i: (t(lane) + (4 if i == 1 else 0), g(lane)),
    ("m16n8k4", "b", "f64"): lambda lane, i: (t(lane), g(lane)),
    # §9.7.14.5.9: row = (tig * 4) + i
    ("m16n8k16", "b", "u8"): lambda lane, i: (t(lane) * 4 + i, g(lane)),
    # §9.7.14.5.10: 8-bit row = (tig * 4) + (i & 0x3) for i < 4, ... + 16 for i >= 4; 4-bit row = (tig * 8) + (i & 0x7)
    ("m16n8k32", "b", "e5m2"): lambda lane, i: (t(lane) * 4 + (i & 3) + (16 if i >= 4 else 0), g(lane)),
    ("m16n8k32", "b", "s4"): lambda lane, i: (t(lane) * 8 + (i & 7), g(lane)),
    # §9.7.14.5.11: row = (tig * 8) + (i & 0x7) for i < 8, ... + 32 for i >= 8
    ("m16n8k64", "b", "s4"): lambda lane, i: (t(lane) * 8 + (i & 7) + (32 if i >= 8 else 0), g(lane)),
    # §9.7.14.5.12-13
    ("m16n8k128", "b", "b1"): lambda lane, i: (t(lane) * 32 + i, g(lane)),
    ("m16n8k256", "b", "b1"): lambda lane, i: (t(lane) * 32 + (i & 0x1F) + (128 if i >= 32 else 0), g(lane)),
    ("m8n8k16", "b", "u8"): lambda lane, i: (t(lane) * 4 + i, g(lane)),
    ("m8n8k4", "b", "f64"): lambda lane, i: (lane % 4, lane >> 2),
    # C/D
    ("m16n8k16", "c", "f32"): _m16n8_c,
    ("m16n8k16", "c", "f16"): _m16n8_c,
    ("m16n8k8", "c", "f64"): _m16n8_c,
    ("m16n8k4", "c", "f32"): _m16n8_c,
    ("m16n8k256", "c", "s32"): _m16n8_c,
    ("m8n8k16", "c", "s32"): _m8n8_c,
    ("m8n8k4", "c", "f64"): _m8n8_c,
    ("m8n8k4", "c", "f32"): _m8n8k4_f32_c,
    # §9.7.14.5.1 .f16 C: row = %laneid % 4 (+4 for lanes >= 16), col = i
    ("m8n8k4", "c", "f16"): lambda lane, i: (lane % 4 + (4 if lane >= 16 else 0) + 8 * ((lane >> 2) & 3), i),
}


@pytest.mark.parametrize("key", sorted(MANUAL), ids=lambda k: "-".join(k))
def test_layout_follows_the_manual_formula(key):
    shape, operand, element_type = key
    layout = ml.fragment_layout(shape, operand, element_type)
    formula = MANUAL[key]
    for lane in range(32):
        for r in range(layout.registers):
            for k in range(layout.per_register):
                assert layout.element(lane, r, k) == formula(lane, r * layout.per_register + k), (lane, r, k)


@pytest.mark.parametrize("layout_name", ["row", "col"])
def test_m8n8k4_f16_a_and_b_follow_the_manual(layout_name):
    """§9.7.14.5.1, per computation q = (lane >> 2) & 3 (rows stacked by q), h = 4 for lanes >= 16."""
    a = ml.fragment_layout("m8n8k4", "a", "f16", layout=layout_name)
    b = ml.fragment_layout("m8n8k4", "b", "f16", layout=layout_name)
    for lane in range(32):
        q, h = (lane >> 2) & 3, 4 if lane >= 16 else 0
        for i in range(4):
            ra = (lane % 4 + h, i) if layout_name == "row" else (i % 4 + h, lane % 4)
            rb = (lane % 4, i + h) if layout_name == "row" else (i, lane % 4 + h)
            assert a.element(lane, i // 2, i % 2) == (ra[0] + 8 * q, ra[1])
            assert b.element(lane, i // 2, i % 2) == (rb[0] + 4 * q, rb[1])
    assert a.computations == 4 and (a.rows, a.cols) == (32, 4) and (b.rows, b.cols) == (16, 8)


def test_literal_m16n8k256_a_formula_is_not_a_bijection():
    """The printed "(threadID_in_group * 32) + i for ai where i < 64" puts two lanes on one cell:
    the reason the implementation reads it as (i & 0x1F)."""

    def literal(lane, i):
        row = g(lane) if (0 <= i < 32 or 64 <= i < 96) else g(lane) + 8
        return row, (t(lane) * 32 + i) if i < 64 else (t(lane) * 32 + (i & 0x1F) + 128)

    cells = [literal(lane, i) for lane in range(32) for i in range(128)]
    assert len(set(cells)) < len(cells)


def test_element_widths_and_registers():
    assert ml.fragment_layout("m16n8k32", "a", "e2m1").element_bits == 8  # 8-bit containers (.kind::f8f6f4)
    assert ml.fragment_layout("m16n8k64", "a", "e2m1").element_bits == 4  # .kind::mxf4: packed
    f64 = ml.fragment_layout("m16n8k16", "a", "f64")
    assert (f64.register_bits, f64.registers, f64.per_register) == (64, 8, 1)
    b1 = ml.fragment_layout("m16n8k128", "a", "b1")
    assert (b1.element_bits, b1.per_register) == (1, 32)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("m16n8k4", "a", "f16"), {}),
        (("m16n8k16", "c", "s8"), {}),
        (("m16n8k16", "e", "f16"), {}),
        (("m16n8k8", "a", "f16"), {"sparse": True}),
        (("m16n8k16", "a", "f16"), {"layout": "col"}),
        (("m16x8k16", "a", "f16"), {}),
    ],
)
def test_unknown_layouts_raise(args, kwargs):
    with pytest.raises(PtxSpecError):
        ml.fragment_layout(*args, **kwargs)


def test_to_matrix_checks_shapes_and_widths():
    layout = ml.fragment_layout("m16n8k16", "b", "f16")
    with pytest.raises(OperandError):
        layout.to_matrix(np.zeros((32, 3), dtype=np.uint64))
    with pytest.raises(OperandError):
        layout.from_matrix(np.full((16, 8), 1 << 16, dtype=np.uint64))
    with pytest.raises(OperandError):
        layout.element(32, 0, 0)


# ---------------------------------------------------------------------------------------------
# Sparse A and metadata (§9.7.14.6)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "element_type", "lanes", "selectors"),
    [
        # §9.7.14.6.1: "m16n8k16: one thread ... indicated by a value in {0, 1, 2, 3}"; "m16n8k32:
        # ... the sparsity selector must be 0 (threads T0, T1) or 1 (threads T2, T3)"; "m16n8k64
        # .u8/.s8 and m16n8k128 .u4/.s4: all threads ... must be 0".
        ("m16n8k16", "f16", 1, (0, 1, 2, 3)),
        ("m16n8k32", "bf16", 2, (0, 1)),
        ("m16n8k8", "tf32", 1, (0, 1, 2, 3)),
        ("m16n8k16", "tf32", 2, (0, 1)),
        ("m16n8k32", "s8", 2, (0, 1)),
        ("m16n8k64", "u4", 2, (0, 1)),
        ("m16n8k64", "u8", 4, (0,)),
        ("m16n8k64", "e4m3", 4, (0,)),
        ("m16n8k128", "s4", 4, (0,)),
        ("m16n8k128", "e2m1", 4, (0,)),
    ],
)
def test_metadata_threads_follow_the_sparsity_selector(shape, element_type, lanes, selectors):
    meta = ml.metadata_layout(shape, element_type)
    assert meta.lanes == lanes and meta.selectors == selectors
    for s in selectors:
        assert meta.contributing(s) == tuple(range(s * lanes, (s + 1) * lanes))
    with pytest.raises(OperandError, match="undefined"):
        meta.contributing(len(selectors))


def _random_sparse(layout, rng, batch=2):
    """A dense A that follows the manual's pattern, drawn independently of the implementation."""
    m, k, bits = layout.rows, layout.cols, layout.element_bits
    dense = np.zeros((batch, m, k), dtype=np.uint64)
    for b in range(batch):
        for row in range(m):
            if layout.element_type == "tf32":  # 1:2
                for block in range(k // 2):
                    dense[b, row, 2 * block + rng.integers(0, 2)] = rng.integers(1, 1 << 32)
            elif bits == 4:  # 4:8 pair-wise: two of the four 2-element chunks of each 8-wide block
                for block in range(k // 8):
                    for c in rng.choice(4, 2, replace=False):
                        dense[b, row, 8 * block + 2 * c : 8 * block + 2 * c + 2] = rng.integers(1, 16, size=2)
            else:  # 2:4
                for block in range(k // 4):
                    for c in rng.choice(4, 2, replace=False):
                        dense[b, row, 4 * block + c] = rng.integers(1, 1 << bits)
    return dense


@pytest.mark.parametrize(("shape", "element_type"), sorted(mx.SPARSE_AB), ids=lambda x: str(x))
def test_sparse_a_round_trips_through_registers_and_metadata(shape, element_type):
    layout = ml.fragment_layout(shape, "a", element_type, sparse=True)
    assert layout.stored_cols * 2 == layout.cols
    rng = np.random.default_rng(3)
    dense = _random_sparse(layout, rng)
    meta = ml.metadata_layout(shape, element_type)
    for selector in meta.selectors:
        a, e = ml.compress_sparse(layout, dense, selector)
        back, undefined = ml.expand_sparse(layout, a, e, selector, ordered=True)
        assert np.array_equal(back, dense) and not undefined.any()
        # only the selected lanes carry metadata
        others = [lane for lane in range(32) if lane % 4 not in meta.contributing(selector)]
        assert not e[..., others].any()


def test_sparse_f16_metadata_bits_by_hand():
    """m16n8k16 .f16, selector 1: lane 4g+1 holds row g in bits 0-15 and row g+8 in bits 16-31,
    each 4-wide block as two 2-bit indices, the low one first. Row 3 keeps columns 1 and 2 of block
    0 and 0 and 3 of block 2; everything else keeps columns 0 and 1 (0b0100)."""
    layout = ml.fragment_layout("m16n8k16", "a", "f16", sparse=True)
    stored = np.arange(1, 16 * 8 + 1, dtype=np.uint64).reshape(16, 8)
    e = np.zeros(32, dtype=np.uint64)
    for group in range(8):
        word = 0
        for half in range(2):
            for block in range(4):
                field = 0b0100
                if group == 3 and half == 0 and block == 0:
                    field = 0b1001  # indices 1, 2
                if group == 3 and half == 0 and block == 2:
                    field = 0b1100  # indices 0, 3
                word |= field << (16 * half + 4 * block)
        e[4 * group + 1] = word
    dense, undefined = ml.expand_sparse(layout, layout.from_matrix(stored), e, 1, ordered=True)
    assert not undefined.any()
    assert dense[3, 1] == stored[3, 0] and dense[3, 2] == stored[3, 1] and dense[3, 0] == 0 and dense[3, 3] == 0
    assert dense[3, 8] == stored[3, 4] and dense[3, 11] == stored[3, 5]
    assert dense[11, 0] == stored[11, 0] and dense[11, 1] == stored[11, 1] and dense[11, 2] == 0


@pytest.mark.parametrize(
    ("element_type", "field", "ordered", "defined"),
    [
        ("f16", 0b0000, False, False),  # "0b0000, 0b0101, 0b1010, 0b1111 are invalid values"
        ("f16", 0b0101, False, False),
        ("f16", 0b0001, False, True),  # unordered, allowed for plain mma.sp
        ("f16", 0b0001, True, False),  # ::ordered_metadata: "sorted in increasing order"
        ("f16", 0b1110, True, True),
        ("tf32", 0b0100, False, True),  # "0b1110 and 0b0100 are the only meaningful index values"
        ("tf32", 0b1110, True, True),
        ("tf32", 0b1000, False, False),
    ],
)
def test_metadata_field_validity(element_type, field, ordered, defined):
    assert ml.field_defined(field, element_type, ordered) is defined


def test_invalid_metadata_marks_the_row_undefined():
    layout = ml.fragment_layout("m16n8k16", "a", "f16", sparse=True)
    a = np.zeros((32, 2), dtype=np.uint64)
    e = np.full(32, 0x44444444, dtype=np.uint64)
    e[4 * 5] = 0x44444445  # row 5, block 0: 0b0101
    _, undefined = ml.expand_sparse(layout, a, e, 0)
    assert undefined.tolist() == [r == 5 for r in range(16)]


# ---------------------------------------------------------------------------------------------
# ldmatrix, stmatrix, movmatrix (§9.7.14.5.15-17)
# ---------------------------------------------------------------------------------------------


def _u16(image: np.ndarray, address: int) -> int:
    return int(image[address]) | int(image[address + 1]) << 8


def _expected_ldmatrix(image, addresses, num, trans):
    """Lane by lane, from the bytes: lane t, register j, half h reads matrix j at
    (row t//4, col 2*(t%4)+h), or (row 2*(t%4)+h, col t//4) with .trans; row r starts at addresses[8j + r]."""
    out = np.zeros((32, num), dtype=np.uint32)
    for lane in range(32):
        for j in range(num):
            word = 0
            for h in range(2):
                row, col = (lane // 4, 2 * (lane % 4) + h) if not trans else (2 * (lane % 4) + h, lane // 4)
                word |= _u16(image, addresses[8 * j + row] + 2 * col) << (16 * h)
            out[lane, j] = word
    return out


def _scattered_addresses(rng, num, size=4096):
    """8*num distinct, 16-byte aligned, non-overlapping row addresses ("rows need not be stored contiguously")."""
    slots = rng.choice(size // 16, 32, replace=False)
    return [int(s) * 16 for s in slots]


@pytest.mark.parametrize("num", ["x1", "x2", "x4"])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_reads_rows_by_lane(num, trans):
    rng = np.random.default_rng(11)
    image = rng.integers(0, 256, 4096, dtype=np.uint8)
    addresses = _scattered_addresses(rng, 4)
    text = f"ldmatrix.sync.aligned.m8n8.{num}{'.trans' if trans else ''}.shared.b16"
    n = {"x1": 1, "x2": 2, "x4": 4}[num]
    got = dm.ldmatrix(text, image, addresses)
    assert got.dtype == np.uint32 and got.shape == (32, n)
    assert np.array_equal(got, _expected_ldmatrix(image, addresses, n, trans))
    # only the first 8*num addresses are read
    assert np.array_equal(dm.ldmatrix(text, bytes(image), addresses[: 8 * n]), got)


@given(st.binary(min_size=512, max_size=512), st.permutations(range(32)), st.sampled_from(["x1", "x2", "x4"]))
def test_ldmatrix_trans_is_ldmatrix_of_the_transposed_image(data, order, num):
    """ldmatrix.trans of an image == ldmatrix of the image with every 8x8 matrix transposed."""
    image = np.frombuffer(data, dtype=np.uint8)
    addresses = [16 * k for k in order]
    n = {"x1": 1, "x2": 2, "x4": 4}[num]
    transposed = image.copy()
    for j in range(n):
        rows = [addresses[8 * j + r] for r in range(8)]
        for r in range(8):
            for c in range(8):
                v = _u16(image, rows[c] + 2 * r)
                transposed[rows[r] + 2 * c] = v & 0xFF
                transposed[rows[r] + 2 * c + 1] = v >> 8
    a = dm.ldmatrix(f"ldmatrix.sync.aligned.m8n8.{num}.trans.b16", image, addresses)
    b = dm.ldmatrix(f"ldmatrix.sync.aligned.m8n8.{num}.b16", transposed, addresses)
    assert np.array_equal(a, b)


@given(st.binary(min_size=1024, max_size=1024), st.integers(0, 2**32 - 1), st.sampled_from(["x1", "x2", "x4"]), st.booleans())
def test_stmatrix_then_ldmatrix_round_trips(data, seed, num, trans):
    rng = np.random.default_rng(seed)
    image = np.frombuffer(data, dtype=np.uint8)
    addresses = _scattered_addresses(rng, 4, size=1024)
    n = {"x1": 1, "x2": 2, "x4": 4}[num]
    registers = rng.integers(0, 2**32, size=(32, n), dtype=np.uint64)
    suffix = ".trans" if trans else ""
    stored = dm.stmatrix(f"stmatrix.sync.aligned.m8n8.{num}{suffix}.b16", image, addresses, registers)
    assert np.array_equal(dm.ldmatrix(f"ldmatrix.sync.aligned.m8n8.{num}{suffix}.b16", stored, addresses), registers.astype(np.uint32))
    # bytes outside the rows written are untouched
    written = np.zeros(image.size, dtype=bool)
    for address in addresses[: 8 * n]:
        written[address : address + 16] = True
    assert np.array_equal(stored[~written], image[~written])
    # and ldmatrix then stmatrix gives the image back
    loaded = dm.ldmatrix(f"ldmatrix.sync.aligned.m8n8.{num}{suffix}.b16", image, addresses)
    assert np.array_equal(dm.stmatrix(f"stmatrix.sync.aligned.m8n8.{num}{suffix}.b16", image, addresses, loaded), image)


@given(st.lists(st.integers(0, 2**32 - 1), min_size=32, max_size=32))
def test_movmatrix_is_the_transpose_of_the_fragment(a):
    """Lane t of d holds (2*(t%4), t//4) and (2*(t%4)+1, t//4) of the matrix that a holds by rows."""
    source = {}
    for lane, word in enumerate(a):
        source[(lane // 4, 2 * (lane % 4))] = word & 0xFFFF
        source[(lane // 4, 2 * (lane % 4) + 1)] = word >> 16
    d = dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", a)
    for lane in range(32):
        row, col = lane // 4, 2 * (lane % 4)
        assert int(d[lane]) == source[(col, row)] | source[(col + 1, row)] << 16
    assert np.array_equal(dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", d), np.asarray(a, dtype=np.uint32))


def test_movmatrix_equals_stmatrix_then_ldmatrix_trans():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**32, 32, dtype=np.uint64)
    addresses = [16 * r for r in range(8)]
    image = dm.stmatrix("stmatrix.sync.aligned.m8n8.x1.b16", np.zeros(128, dtype=np.uint8), addresses, a[:, None])
    assert np.array_equal(
        dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.trans.b16", image, addresses)[:, 0], dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", a)
    )


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", bytes(256), [8] + [16 * k for k in range(1, 8)]), "not 16-byte aligned"),
        (lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x2.b16", bytes(256), [0] * 8), "reads 16 row addresses"),
        (lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", bytes(64), [16 * k for k in range(8)]), "outside"),
        (lambda: dm.stmatrix("stmatrix.sync.aligned.m8n8.x1.b16", bytes(256), [4] * 8, np.zeros((32, 1))), "not 16-byte aligned"),
        (lambda: dm.stmatrix("stmatrix.sync.aligned.m8n8.x2.b16", bytes(256), [0] * 16, np.zeros((32, 1))), "expected shape (32, 2)"),
        (lambda: dm.ldmatrix("ldmatrix.sync.aligned.m16n16.x1.trans.b8", bytes(256), [0] * 8), "reads 16 row addresses"),
        (lambda: dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", [1 << 32] * 32), "32 bits"),
        (lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.b8", bytes(256), [0] * 8), ".m8n8 with .b8"),
    ],
)
def test_data_movement_errors(call, words):
    with pytest.raises(PtxSpecError) as info:
        call()
    assert words in str(info.value)


def test_ldmatrix_fragment_is_the_mma_f16_a_quadrant():
    """An x4 ldmatrix of A's four 8x8 quadrants (row-major order: (0,0), (8,0), (0,8), (8,8)) gives
    the registers of the m16n8k16 .f16 A fragment -- the way ldmatrix feeds mma."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 1 << 16, size=(16, 16), dtype=np.uint64)
    image = np.zeros(16 * 16 * 2, dtype=np.uint8)
    for r in range(16):
        for c in range(16):
            image[2 * (16 * r + c)] = a[r, c] & 0xFF
            image[2 * (16 * r + c) + 1] = a[r, c] >> 8
    addresses = [32 * r for r in range(8)] + [32 * (8 + r) for r in range(8)] + [32 * r + 16 for r in range(8)] + [32 * (8 + r) + 16 for r in range(8)]
    registers = dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x4.b16", image, addresses)
    layout = ml.fragment_layout("m16n8k16", "a", "f16")
    assert np.array_equal(layout.to_matrix(registers.astype(np.uint64)), a)


# §9.7.14.6.2.1-8, a second reading: (row, firstcol, lastcol) of a_i of the sparse A fragments.
def _sp(row_low, first, width):
    return lambda lane, i: ((g(lane) if row_low(i) else g(lane) + 8), first(lane, i), first(lane, i) + width - 1)


SPARSE_MANUAL = {
    # "row = groupID for a0 and a1, groupID + 8 for a2 and a3; firstcol = threadID_in_group * 4; lastcol = firstcol + 3"
    ("m16n8k16", "f16"): _sp(lambda i: i < 2, lambda lane, i: t(lane) * 4, 4),
    # "row = groupID for 0 <= i < 2 || 4 <= i < 6; firstcol = tig * 4 for i < 4, (tig * 4) + 16 for i >= 4"
    ("m16n8k32", "bf16"): _sp(lambda i: i < 2 or 4 <= i < 6, lambda lane, i: t(lane) * 4 + (16 if i >= 4 else 0), 4),
    # "row = groupID for a0 and a2; firstcol = tig * 2 for a0 and a1, (tig * 2) + 8 for a2 and a3; lastcol = firstcol + 1"
    ("m16n8k16", "tf32"): _sp(lambda i: i in (0, 2), lambda lane, i: t(lane) * 2 + (8 if i >= 2 else 0), 2),
    # "row = groupID for a0, groupID + 8 for a1; firstcol = threadID_in_group * 2"
    ("m16n8k8", "tf32"): _sp(lambda i: i == 0, lambda lane, i: t(lane) * 2, 2),
    # "row = groupID for 0 <= i < 4; firstcol = threadID_in_group * 8; lastcol = firstcol + 7"
    ("m16n8k32", "s8"): _sp(lambda i: i < 4, lambda lane, i: t(lane) * 8, 8),
    # "row = groupID for 0 <= i < 4 || 8 <= i < 12; firstcol = tig * 8 for i < 8, (tig * 8) + 32 for i >= 8"
    ("m16n8k64", "e5m2"): _sp(lambda i: i < 4 or 8 <= i < 12, lambda lane, i: t(lane) * 8 + (32 if i >= 8 else 0), 8),
    ("m16n8k64", "u8"): _sp(lambda i: i < 4 or 8 <= i < 12, lambda lane, i: t(lane) * 8 + (32 if i >= 8 else 0), 8),
    # "row = groupID for 0 <= i < 8; firstcol = threadID_in_group * 16; lastcol = firstcol + 15"
    ("m16n8k64", "s4"): _sp(lambda i: i < 8, lambda lane, i: t(lane) * 16, 16),
    # "row = groupID for 0 <= i < 8 || 16 <= i < 24; firstcol = tig * 16 for i < 16, (tig * 16) + 64 for i >= 16"
    ("m16n8k128", "e2m1"): _sp(lambda i: i < 8 or 16 <= i < 24, lambda lane, i: t(lane) * 16 + (64 if i >= 16 else 0), 16),
}


@pytest.mark.parametrize("key", sorted(SPARSE_MANUAL), ids=lambda k: "-".join(k))
def test_sparse_a_elements_land_where_the_manual_says(key):
    """Each stored a_i, expanded with random valid metadata, lands in the manual's row and within
    [firstcol, lastcol] -- one element at a time (a batch with one non-zero element each)."""
    shape, element_type = key
    layout = ml.fragment_layout(shape, "a", element_type, sparse=True)
    meta = ml.metadata_layout(shape, element_type)
    rng = np.random.default_rng(21)
    positions = [(lane, i) for lane in range(32) for i in range(layout.registers * layout.per_register)]
    batch = len(positions)
    a = np.zeros((batch, 32, layout.registers), dtype=np.uint64)
    for b, (lane, i) in enumerate(positions):
        a[b, lane, i // layout.per_register] = np.uint64(1) << np.uint64((i % layout.per_register) * layout.element_bits)
    ordered = [0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110] if element_type != "tf32" else [0b0100, 0b1110]
    e = np.zeros(32, dtype=np.uint64)
    for lane in range(32):
        if lane % 4 in meta.contributing(0):
            e[lane] = sum(int(rng.choice(ordered)) << (4 * f) for f in range(8))
    dense, undefined = ml.expand_sparse(layout, a, np.broadcast_to(e, (batch, 32)), 0, ordered=True)
    assert not undefined.any()
    formula = SPARSE_MANUAL[key]
    for b, (lane, i) in enumerate(positions):
        (rows,), (cols,) = np.nonzero(dense[b])[0:1], np.nonzero(dense[b])[1:2]
        assert len(rows) == 1
        row, first, last = formula(lane, i)
        assert rows[0] == row and first <= cols[0] <= last, (lane, i, rows[0], cols[0], (row, first, last))
