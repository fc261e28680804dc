"""tcgen05.mma scale-factor and sparsity-metadata layouts (semantics/tcgen05_operands.py), pinned
to NVIDIA CUTLASS: the CuTe layouts below are transcribed as data (shape, stride, file, struct,
commit) and evaluated by a tiny CuTe evaluator, then compared with the functions; plus Hypothesis
properties of the maps and of the sparse operand."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.spec.errors import OperandError
from ptxspec.semantics import tcgen05_operands as ops
from ptxspec.semantics.sparse import selected_b
from ptxspec.semantics.state import Allocation, State, TensorMemory, LOW_HALF

COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
FRAG = "include/cute/atom/mma_traits_sm100_frag.hpp"
TRAITS = "include/cute/atom/mma_traits_sm100.hpp"
#: The sparse K of each kind (Table 39).
K = {kind: ops.td.K_VALUES[kind][1] for kind in ops.CHUNK}


# ---------------------------------------------------------------------------------------------
# A tiny CuTe evaluator: a layout maps a coordinate (an int per top mode, split colexicographically
# over the mode's sub-shape) to the inner product with the strides.
# ---------------------------------------------------------------------------------------------


def _size(shape) -> int:
    return int(np.prod([_size(s) for s in shape])) if isinstance(shape, tuple) else shape


def _eval(shape, stride, coord):
    """One mode at an int (or an int array) coordinate."""
    if not isinstance(shape, tuple):
        assert np.all((0 <= coord) & (coord < shape))
        return coord * stride
    out = 0
    for s, d in zip(shape, stride):
        out = out + _eval(s, d, coord % _size(s))
        coord = coord // _size(s)
    return out


def layout(shape, stride, *coords):
    """``Layout<shape, stride>`` at one int (array) coordinate per top-level mode."""
    return sum(_eval(s, d, np.asarray(c, dtype=np.int64)) for s, d, c in zip(shape, stride, coords))


def rotr32(x, s: int):
    x = np.asarray(x, dtype=np.int64)
    return ((x >> s) | (x << (32 - s))) & 0xFFFFFFFF if s else x


def tmem_element(offset, bits: Fraction, base: int = 0):
    """``tmem_ptr<T>(base) + offset`` (include/cute/pointer.hpp: ``addr_ + rotr(i, OffsetShift)``,
    ``OffsetShift = log2(32 / sizeof_bits<T>)``): (lane, column, sub-word index); the sub-word
    starts at bit ``index * sizeof_bits<T>`` of the cell. TMEM addresses: lane in bits 16-23 (active
    mask 0x007F), column in bits 0-15."""
    s = int(32 / bits).bit_length() - 1
    addr = (base + rotr32(offset, s)) & 0xFFFFFFFF
    return (addr >> 16) & 0x7F, addr & 0xFFFF, (addr >> (32 - s)) if s else 0 * addr


def restride(layout_shape, layout_stride, v):
    """``composition(tmem_restride, atom)``: the atom's (lane + 128 x unit) virtual address ``v``
    through ``tmem_restride = Layout<Shape<_128, X>, Stride<DP, _1>>``."""
    return layout(layout_shape, layout_stride, v % 128, v // 128)


# UMMA::tmem_e_frg<ValueType>::make, M_MMA == 128 (FRAG, commit COMMIT). sizeof_bits of the element
# type: sparse_elem<S, uint8_t> is 8 / S bits (include/cute/pointer_sparse.hpp). The tf32 branch
# composes with upcast<2>(tmem_restride), i.e. (128, 8192):(2^20, 1) (cute::upcast divides the
# strides by 2 and the unit-stride mode's shape by 2).
TMEM_E_FRG = {
    "tf32": dict(
        struct="tmem_e_frg<tfloat32_t> (sizeof_bits 32): sparse_elem<4,uint8_t>",
        atom=(((8, 2, 8), (8, 2)), ((1, 1024, 16), (128, 8))),
        restride=((128, 8192), (1 << 20, 1)),
        bits=Fraction(2),
        k=16,
    ),
    "f16": dict(
        struct="tmem_e_frg<half_t> (sizeof_bits 16): sparse_elem<8,uint8_t>",
        atom=(((8, 2, 8), (16, 2)), ((1, 2048, 16), (128, 8))),
        restride=((128, 16384), (1 << 21, 1)),
        bits=Fraction(1),
        k=32,
    ),
    "i8": dict(
        struct="tmem_e_frg<uint8_t> (sizeof_bits 8): sparse_elem<8,uint8_t>",
        atom=((128, 64), (1, 128)),
        restride=((128, 16384), (1 << 21, 1)),
        bits=Fraction(1),
        k=64,
    ),
    "mxf4": dict(
        struct="tmem_e_frg<float_e2m1_t> (sizeof_bits 4): sparse_elem<16,uint8_t>, tmem_restride1",
        atom=((128, 128), (1, 128)),
        restride=((128, 32768), (1 << 22, 1)),
        bits=Fraction(1, 2),
        k=128,
    ),
}
#: Which kinds use which branch (TRAITS: SM100_MMA_TF32_SS_SPARSE, F16BF16_SS_SPARSE, S8_SS_SPARSE,
#: F8F6F4_SS_SPARSE and MXF8F6F4_SS_SPARSE with tmem_e_frg<uint8_t>, MXF4NVF4_SS_SPARSE with a 4-bit a_type).
E_BRANCH = {"tf32": "tf32", "f16": "f16", "i8": "i8", "f8f6f4": "i8", "mxf8f6f4": "i8", "mxf4": "mxf4", "mxf4nvf4": "mxf4"}


@pytest.mark.parametrize("kind", sorted(ops.CHUNK))
def test_metadata_matches_cute(kind):
    e = TMEM_E_FRG[E_BRANCH[kind]]
    assert e["k"] == K[kind]
    cta, lane, column, bit = ops.metadata_cells(kind, 128, e["k"])
    chunk = ops.CHUNK[kind]
    groups = e["k"] // chunk
    assert lane.shape == (128, groups) and not cta.any()
    i, g, t = np.meshgrid(np.arange(128), np.arange(groups), np.arange(chunk), indexing="ij")
    v = layout(*e["atom"], i, g * chunk + t)  # every element of every chunk
    cl, cc, sub = tmem_element(restride(*e["restride"], v), e["bits"])
    assert (cl == lane[..., None]).all() and (cc == column[..., None]).all()
    # the chunk's elements fill exactly bits bit .. bit + 3 of the cell (in half-bit units)
    half = sub * int(2 * e["bits"])
    assert (half.min(axis=-1) == 2 * bit).all() and (half.max(axis=-1) + int(2 * e["bits"]) == 2 * (bit + 4)).all()


@pytest.mark.parametrize("kind", ["tf32", "f16"])
def test_selector_is_cutlass_column_bit0(kind):
    """TRAITS SM100_MMA_{TF32,F16BF16}_SS_SPARSE::mma_unpack: ``id2 = tmem_e & 1; tmem_e &= ~1``;
    the E tensor of the K-block at column c (COL-4 aligned base + kb)."""
    for c in range(4):
        address, selector = c & ~1, c & 1
        _, lane, column, _ = ops.metadata_cells(kind, 128, K[kind], selector=selector)
        assert (address + column == c).all()


def test_metadata_cta_pair_and_refusals():
    cta, lane, column, bit = ops.metadata_cells("f16", 256, 32, cta_group=2)
    one = ops.metadata_cells("f16", 128, 32)
    assert (cta == np.arange(256)[:, None] // 128).all()
    assert (lane[128:] == one[1]).all() and (bit[:128] == one[3]).all()
    assert (ops.metadata_cells("i8", 128, 64, ws=True)[1] == ops.metadata_cells("i8", 128, 64)[1]).all()
    for args in [("f16", 64, 32), ("f16", 128, 32, 2), ("tf32", 64, 16, 1, True)]:
        with pytest.raises(OperandError, match="determined for M = 128"):
            ops.metadata_cells(*args)
    with pytest.raises(OperandError, match="no CUTLASS path"):
        ops.metadata_cells("f16", 128, 32, selector=2)
    with pytest.raises(OperandError, match="must be 0"):
        ops.metadata_cells("i8", 128, 64, selector=1)
    with pytest.raises(OperandError, match="K = 32"):
        ops.metadata_cells("f16", 128, 16)


# UMMA::tmem_sf_frg<ValueType, SFVecSize, N_SM=1, Is_SFA, ScaleFactorDuplicated4by1>::make (FRAG):
# atom Shape<Shape<Shape<_32, MN/32>, _4>, Shape<VS, NSF>>, Stride<Stride<Stride<_1, _512>, _32>,
# Stride<_0, _128>>>; tmem_restride Layout<Shape<_128,_16384>, Stride<TMEM::DP<uint8>, _1>> with
# DP<uint8> = (1 << 16) << 2 (include/cute/arch/tmem_allocator_sm100.hpp).
def sf_atom(mn: int, vs: int, nsf: int):
    return (((32, mn // 32), 4), (vs, nsf)), (((1, 512), 32), (0, 128))


SF_RESTRIDE = ((128, 16384), (1 << 18, 1))

#: (struct in TRAITS, kind, scale_vec, K, SFVecSize): NSF = K / SFVecSize.
SF_TRAITS = [
    ("SM100_MMA_MXF8F6F4_SS", "mxf8f6f4", "scale_vec::1X", 32, 32),
    ("SM100_MMA_MXF8F6F4_SS_SPARSE", "mxf8f6f4", "scale_vec::1X", 64, 64),
    ("SM100_MMA_MXF4_SS<..., VS=32>", "mxf4", "scale_vec::2X", 64, 32),
    ("SM100_MMA_MXF4_SS<..., VS=16>", "mxf4nvf4", "scale_vec::4X", 64, 16),
    ("SM100_MMA_MXF4NVF4_SS_SPARSE<..., VS=64>", "mxf4nvf4", "scale_vec::2X", 128, 64),
    ("SM100_MMA_MXF4NVF4_SS_SPARSE<..., VS=32>", "mxf4nvf4", "block16", 128, 32),
]


@pytest.mark.parametrize("struct,kind,vec,k,vs", SF_TRAITS)
@pytest.mark.parametrize("operand,mn", [("a", 128), ("b", 256), ("b", 128), ("b", 64)])
def test_scale_factors_match_cute(struct, kind, vec, k, vs, operand, mn):
    nsf = ops.scale_vector(kind, vec, k)
    assert nsf == k // vs, struct
    shape, stride = sf_atom(mn, vs, nsf)
    r, j, p, t = np.meshgrid(np.arange(mn), np.arange(nsf), np.arange(4), np.array([0, vs - 1]), indexing="ij")
    v = layout(shape, stride, r + mn * p, j * vs + t)  # every K of the block: stride 0
    for sf_id in sorted(ops.scale_ids(kind, nsf)):
        # the SF tensor's pointer carries the ID in its sub-word bits (mma_sm100_desc.hpp:
        # a_sf_id_ = (tmem_sfa_addr & 0xC0000000) >> 30)
        base = int(rotr32(sf_id, 2))
        assert (base & 0xC0000000) >> 30 == sf_id
        cta, lane, column, byte = ops.scale_factor_cells(operand, kind, vec, mn, k, sf_id)
        assert lane.shape == (mn, nsf, 4) and not cta.any()
        cl, cc, sub = tmem_element(restride(*SF_RESTRIDE, v), Fraction(8), base)
        assert (cl == lane[..., None]).all() and (cc == column[..., None]).all() and (sub == byte[..., None]).all()


def sf_atom_2x2(mn: int, vs: int, nsf: int):
    """tmem_sf_frg's SFB atom for the "2x2 datapath" (ScaleFactorDuplicated2by2)."""
    return (((32, mn // 2 // 32), 2, 2), (vs, nsf)), (((1, 512), 64, 32), (0, 128))


@pytest.mark.parametrize("struct,kind,vec,k,vs", SF_TRAITS)
@pytest.mark.parametrize("m", [128, 256])
def test_pair_scale_factors_match_cute(struct, kind, vec, k, vs, m):
    """.cta_group::2: A's factors in CTA row // (M/2) in the one-CTA atom over its M/2 rows; B's in
    every CTA, the 4x1 atom over N rounded up to 128 (M = 256) or the 2x2 atom (M = 128)."""
    nsf = k // vs
    half = m // 2
    cta, lane, column, byte = ops.scale_factor_cells("a", kind, vec, m, k, 0, 2)
    r, j, p, t = np.meshgrid(np.arange(m), np.arange(nsf), np.arange(4), np.array([0, vs - 1]), indexing="ij")
    cl, cc, sub = tmem_element(restride(*SF_RESTRIDE, layout(*sf_atom(half, vs, nsf), r % half + half * p, j * vs + t)), Fraction(8), 0)
    assert (cta == np.arange(m)[:, None, None] // half).all()
    assert (cl == lane[..., None]).all() and (cc == column[..., None]).all() and (sub == byte[..., None]).all()
    for n in (128, 256) if m == 128 else (16, 136, 256):
        cta, lane, column, byte = ops.scale_factor_cells("b", kind, vec, n, k, 0, 2, m)
        copies = 2 if m == 128 else 4  # per CTA
        assert (cta == np.repeat([0, 1], copies)).all()
        r, j, p, t = np.meshgrid(np.arange(n), np.arange(nsf), np.arange(copies), np.array([0, vs - 1]), indexing="ij")
        mn = n if m == 128 else -(-n // 128) * 128
        atom = sf_atom_2x2(mn, vs, nsf) if m == 128 else sf_atom(mn, vs, nsf)
        cl, cc, sub = tmem_element(restride(*SF_RESTRIDE, layout(*atom, r + mn * p, j * vs + t)), Fraction(8), 0)
        for which in (0, 1):
            mine = slice(which * copies, (which + 1) * copies)
            assert (cl == lane[:, :, mine, None]).all() and (cc == column[:, :, mine, None]).all() and (sub == byte[:, :, mine, None]).all()


def test_scale_refusals():
    with pytest.raises(OperandError, match="K = 96"):
        ops.scale_factor_cells("a", "mxf4", "block32", 128, 96, 0)
    with pytest.raises(OperandError, match="instruction's M"):
        ops.scale_factor_cells("b", "mxf8f6f4", "block32", 256, 32, 0, cta_group=2)
    with pytest.raises(OperandError, match="round_up"):
        ops.scale_factor_cells("b", "mxf8f6f4", "block32", 192, 32, 0, 2, 128)
    with pytest.raises(OperandError, match="Table 55"):
        ops.scale_factor_cells("a", "mxf4", "block16", 128, 64, 0)
    with pytest.raises(OperandError, match="valid IDs"):
        ops.scale_factor_cells("b", "mxf4nvf4", "scale_vec::4X", 128, 64, 2)
    with pytest.raises(OperandError, match="valid IDs"):
        ops.scale_factor_cells("b", "mxf4", "scale_vec::2X", 128, 64, 1)
    with pytest.raises(OperandError, match="no block scaling"):
        ops.scale_vector("f16", "block32", 16)
    assert ops.scale_vector("mxf8f6f4", "block32", 64) == 1 and ops.scale_vector("mxf4nvf4", "block32", 128) == 2


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

SCALED = [(kind, vec) for kind, vecs in ops.SCALE_VECTORS.items() for vec in vecs]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SCALED), st.sampled_from(["a", "b"]), st.integers(1, 32), st.booleans())
def test_scale_factor_cells_distinct(kv, operand, n8, sparse):
    kind, vec = kv
    k = ops.td.K_VALUES[kind][sparse]
    mn = 128 if operand == "a" else 8 * n8
    taken: dict[int, set] = {}
    for sf_id in sorted(ops.scale_ids(kind, vec)):
        cta, lane, column, byte = ops.scale_factor_cells(operand, kind, f"scale_vec::{vec}X", mn, k, sf_id)
        cells = set(zip(lane.ravel().tolist(), column.ravel().tolist(), byte.ravel().tolist()))
        assert len(cells) == lane.size  # each factor and copy its own byte
        assert ((byte >= 0) & (byte < 4)).all() and (lane // 32 == np.arange(4)).all()
        taken[sf_id] = {b for b in byte.ravel().tolist()}
    ids = sorted(taken)
    for a in ids:  # IDs select distinct bytes
        for b in ids:
            assert a == b or not (taken[a] & taken[b])


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(ops.CHUNK)), st.sampled_from([(1, 128), (2, 256)]))
def test_metadata_fields_distinct(kind, shape):
    cta_group, m = shape
    selectors = (0, 1) if kind in ("tf32", "f16") else (0,)
    seen = set()
    for s in selectors:
        cta, lane, column, bit = ops.metadata_cells(kind, m, K[kind], cta_group, selector=s)
        assert ((bit % 4 == 0) & (bit + 4 <= 32)).all()
        for cell in zip(cta.ravel().tolist(), lane.ravel().tolist(), column.ravel().tolist(), bit.ravel().tolist()):
            assert cell not in seen
            seen.add(cell)


def dense_conforming(kind: str, m: int, seed: int) -> np.ndarray:
    """A dense ``[m, K]`` A of the kind's pattern: in each chunk at most the allowed number of
    non-zero elements (pairs for 4:8), at random positions, non-zero random values."""
    rng = np.random.default_rng(seed)
    k, chunk = K[kind], ops.CHUNK[kind]
    unit = 2 if chunk == 8 else 1
    units, keep = chunk // unit, (1 if chunk == 2 else 2)
    count = rng.integers(0, keep + 1, size=(m, k // chunk))
    rank = np.argsort(rng.random((m, k // chunk, units)), axis=-1).argsort(axis=-1)
    alive = rank < count[..., None]  # [m, G, units]
    values = rng.integers(1, 256, size=(m, k // chunk, units, unit), dtype=np.uint64)
    return (values * alive[..., None]).reshape(m, k)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(ops.CHUNK)), st.integers(1, 8), st.integers(0, 2**32))
def test_sparse_round_trip(kind, m, seed):
    dense = dense_conforming(kind, m, seed)
    stored, fields = ops.compress_a(kind, dense)
    assert set(np.unique(fields).tolist()) <= ops.MEANINGFUL[kind]
    a = ops.sparse_a(kind, stored, fields)
    assert not a.undefined.any()
    assert (a.dense() == dense).all()
    # each stored element selects the row of B at its K position, and only those rows
    k = dense.shape[1]
    B = np.arange(k, dtype=np.uint64)[:, None] * np.ones((1, 2), dtype=np.uint64)
    rows = selected_b(B, a.k_index)[..., 0]
    assert (rows == a.k_index).all() and len(np.unique(a.k_index[0])) == k // 2


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(ops.CHUNK)), st.data())
def test_invalid_metadata_rows_are_undefined(kind, data):
    k = ops.td.K_VALUES[kind][1]
    groups = k // ops.CHUNK[kind]
    fields = np.array(data.draw(st.lists(st.lists(st.integers(0, 15), min_size=groups, max_size=groups), min_size=4, max_size=4)), dtype=np.uint8)
    stored = np.arange(1, 4 * k // 2 + 1, dtype=np.uint64).reshape(4, k // 2)
    a = ops.sparse_a(kind, stored, fields)
    expect = (~np.isin(fields, sorted(ops.MEANINGFUL[kind]))).any(axis=1)
    assert (a.undefined == expect).all()
    # a defined row places every stored element in its chunk, at the field's positions
    for i in np.nonzero(~a.undefined)[0]:
        chunk = ops.CHUNK[kind]
        per = chunk // 2
        assert (a.k_index[i] // chunk == np.arange(k // 2) // per).all()


def test_sparse_patterns_by_hand():
    # 2:4 0b0110: stored element 0 at position 2, element 1 at position 1 (the manual's list)
    a = ops.sparse_a("f16", np.array([[7, 9] * 8], dtype=np.uint64), np.array([[0b0110] + [0b0100] * 7]))
    assert a.k_index[0, :2].tolist() == [2, 1] and not a.undefined.any()
    # 1:2 tf32: 0b1110 is position 1
    a = ops.sparse_a("tf32", np.ones((1, 8), dtype=np.uint64), np.array([[0b1110] * 8]))
    assert a.k_index[0].tolist() == list(range(1, 16, 2))
    # 4:8 pairs: 0b1100 -> pairs 0 and 3 (positions 0, 1, 6, 7)
    a = ops.sparse_a("mxf4", np.ones((1, 64), dtype=np.uint64), np.array([[0b1100] * 16]))
    assert a.k_index[0, :4].tolist() == [0, 1, 6, 7]
    with pytest.raises(OperandError, match="more than 2"):
        ops.compress_a("f16", np.array([[1, 1, 1, 0] * 8], dtype=np.uint64))
    with pytest.raises(OperandError, match="pairs"):
        ops.compress_a("mxf4", np.array([[1, 0, 1, 0, 1, 0, 0, 0] * 16], dtype=np.uint64))


# ---------------------------------------------------------------------------------------------
# Reading Tensor Memory
# ---------------------------------------------------------------------------------------------


def _state_with_bytes(cells, values, address) -> State:
    _, lane, column, byte = cells
    words = np.zeros((128, 512), dtype=np.uint32)
    written = np.zeros((128, 512), dtype=np.uint8)
    lanes, cols = (lane + (address >> 16)).ravel(), (column + (address & 0xFFFF)).ravel()
    np.bitwise_or.at(words, (lanes, cols), (np.asarray(values, dtype=np.uint32).ravel() << (8 * byte.ravel()).astype(np.uint32)))
    written[lanes, cols] = 3
    return State(tensor_memory=TensorMemory(cells=words, written=written, allocations=(Allocation(0, 64),)))


def test_read_scale_factors_and_errors():
    rng = np.random.default_rng(1)
    cells = ops.scale_factor_cells("b", "mxf4nvf4", "scale_vec::2X", 96, 64, 2)
    sf = rng.integers(0, 256, size=(96, 2), dtype=np.uint8)
    address = 32
    state = _state_with_bytes(cells, np.broadcast_to(sf[..., None], cells[1].shape), address)
    got = ops.read_scale_factors(state, address, "b", "mxf4nvf4", "scale_vec::2X", 96, 64, 2)
    assert (got == sf).all()
    assert ops.scale_of_k(got, 64)[5, 40] == sf[5, 1]
    with pytest.raises(OperandError, match="not allocated"):
        ops.read_scale_factors(state, 62, "b", "mxf4nvf4", "scale_vec::2X", 96, 64, 2)
    with pytest.raises(OperandError, match="holds no value"):  # ID 0: bytes 0-1, never written
        tm = state.tensor_memory
        half = State(tensor_memory=TensorMemory(cells=tm.words() & 0xFFFF0000, written=np.full((128, 512), 2, np.uint8), allocations=tm.allocations))
        ops.read_scale_factors(half, address, "b", "mxf4nvf4", "scale_vec::2X", 96, 64, 0)
    bad = np.broadcast_to(sf[..., None], cells[1].shape).copy()
    bad[3, 1, 2] ^= 1
    with pytest.raises(OperandError, match="duplicated"):
        ops.read_scale_factors(_state_with_bytes(cells, bad, address), address, "b", "mxf4nvf4", "scale_vec::2X", 96, 64, 2)


def test_read_metadata_round_trip():
    rng = np.random.default_rng(2)
    for kind, selector in [("f16", 1), ("tf32", 0), ("mxf8f6f4", 0), ("mxf4nvf4", 0)]:
        cta, lane, column, bit = ops.metadata_cells(kind, 128, K[kind], selector=selector)
        fields = rng.integers(0, 16, size=lane.shape, dtype=np.uint8)
        words = np.zeros((128, 512), dtype=np.uint32)
        np.bitwise_or.at(words, (lane.ravel(), (column + 64).ravel()), (fields.astype(np.uint32) << bit.astype(np.uint32)).ravel())
        state = State(tensor_memory=TensorMemory(cells=words, written=np.full((128, 512), 3, np.uint8), allocations=(Allocation(64, 32),)))
        assert (ops.read_metadata(state, 64, kind, 128, K[kind], selector=selector) == fields).all()
    low = State(tensor_memory=TensorMemory(written=np.full((128, 512), LOW_HALF, np.uint8), allocations=(Allocation(0, 32),)))
    with pytest.raises(OperandError, match="hold no value"):
        ops.read_metadata(low, 0, "f16", 128, 32)
    with pytest.raises(OperandError, match="peer"):
        ops.read_metadata(low, 0, "f16", 256, 32, cta_group=2)


def test_metadata_rows_in_the_cta_of_their_d_rows():
    """Row i of the metadata is in the CTA that holds row i of D (semantics/tcgen05_datapath.py),
    and for 8- and 4-bit A in D's lane of that row."""
    from ptxspec.semantics import tcgen05_datapath

    for m, cta_group in ((128, 1), (256, 2)):
        d_cta, d_lane, _ = tcgen05_datapath.d_cells(m, 64, cta_group, True, False)
        for kind in ("f16", "i8", "mxf4"):
            cta, lane, _, _ = ops.metadata_cells(kind, m, K[kind], cta_group)
            assert (cta == d_cta[:, :1]).all()
            if kind != "f16":
                assert (lane == d_lane[:, :1]).all()
