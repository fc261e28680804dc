"""tcgen05.mma data path layouts (semantics/tcgen05_datapath.py, §9.7.16.10.5), checked against NVIDIA
CUTLASS's SM100 UMMA Tensor Memory fragments and the manual's own text.

The oracle is data transcribed from CUTLASS at commit ``7107b05535f8977f5ecb9d01ee203205b1fd9bc4``:

* ``include/cute/atom/mma_traits_sm100_frag.hpp``: the ``tmem_atom`` (M, N) -> virtual TMEM
  address (lane + 128 * column) of ``UMMA::tmem_frg<ValueType, StorageType, N_SM, TmemAlloc>::make``
  and ``UMMA::tmem_frg_ws<..., 1>::make`` (:data:`CUTLASS_ATOMS`); their ``tmem_restride``
  ``(128,16384):(TMEM::DP<ValueType>, StorageBits/ValueBits)``; the ``TmemAllocMode`` comments
  (``Interleaved`` tiles a second 16-lane atom into the other half sub-partition,
  ``Duplicated`` copies A of ``UMMA_2SM_128xNx16_TS``: :data:`CUTLASS_DUPLICATED`).
* ``include/cute/atom/mma_traits_sm100.hpp``: which fragment each ``MMA_Traits<SM100_MMA_*>`` uses
  (``FrgTypeC``, ``FrgTypeA`` of the ``_TS`` traits) and its ``CLayout`` / ``ALayout``
  ((CTA, value) -> column-major index into the M x N or M x K matrix): :data:`CUTLASS_TRAITS`.
* ``include/cute/arch/tmem_allocator_sm100.hpp``: ``TMEM::DP<T> = (1 << 16) << OffsetShift``;
  ``include/cute/pointer.hpp``: ``tmem_ptr<T>::OffsetShift = log2(32 / sizeof_bits(T))``, an element
  offset ``e`` is word ``e >> OffsetShift`` (lane in bits 31-16, column in bits 15-0), sub-word
  element ``e & (2^OffsetShift - 1)``.

A tiny CuTe evaluator (:func:`cute_eval`, :func:`complement`) turns them into (CTA, lane, column,
bit) of every element, compared with :func:`d_cells` / :func:`a_cells`.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ptxspec.semantics import tcgen05_datapath as dp
from ptxspec.semantics import tcgen05_layout as tl
from ptxspec.spec.errors import OperandError

CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
assert dp.CUTLASS_COMMIT == CUTLASS_COMMIT

#: tmem_atom of mma_traits_sm100_frag.hpp as (shape, stride) for an (M_MMA, N_MMA) fragment (N_MMA
#: is K for A). "virtual tensor memory addressing with DP_STRIDE=1, COL_STRIDE=128".
CUTLASS_ATOMS = {
    # tmem_frg, N_SM == 1, M_MMA == 64: "Half subpartitions layout atom"
    "tmem_frg_1sm/64": lambda n: (((16, 4), n), ((1, 32), 128)),
    # tmem_frg, N_SM == 1, M_MMA == 128: "Full subpartitions layout atom"
    "tmem_frg_1sm/128": lambda n: ((128, n), (1, 128)),
    # tmem_frg, N_SM == 2, M_MMA == 64, Interleaved: "The 2x2 layout atom"
    "tmem_frg_2sm/64": lambda n: ((64, (n // 2, 2)), (1, (128, 64))),
    # tmem_frg, N_SM == 2, M_MMA == 64, Duplicated: "The 2x2 duplicated layout atom"
    "tmem_frg_2sm/64/Duplicated": lambda n: ((128, n), (1, 128)),
    # tmem_frg, N_SM == 2, M_MMA == 128: "The 4x1 layout atom"
    "tmem_frg_2sm/128": lambda n: ((128, n), (1, 128)),
    # tmem_frg_ws, M_MMA == 32: "1x4 datapath"
    "tmem_frg_ws/32": lambda n: ((32, (n // 4, 4)), (1, (128, 32))),
    # tmem_frg_ws, M_MMA == 64: "2x2 datapath"
    "tmem_frg_ws/64": lambda n: ((64, (n // 2, 2)), (1, (128, 64))),
    # tmem_frg_ws, M_MMA == 128
    "tmem_frg_ws/128": lambda n: ((128, n), (1, 128)),
}

#: CLayout / ALayout: (CTA, value) -> column-major index of the M x N (or M x K) matrix.
#: 1SM: (1,(M,N)):(0,(1,M)); 2x1SM: (2,(M/2,N)):(M/2,(1,M)).
CUTLASS_PARTITION = {
    1: lambda m, n: ((1, (m, n)), (0, (1, m))),
    2: lambda m, n: ((2, (m // 2, n)), (m // 2, (1, m))),
}

#: (layout, .ws) -> (MMA_Traits struct whose FrgTypeC it is, atom of CUTLASS_ATOMS), for D.
CUTLASS_TRAITS = {
    ("A", False): ("SM100_MMA_F16BF16_2x1SM_SS, M=256: FrgTypeC = tmem_frg_2sm<c_type>", "tmem_frg_2sm/128"),
    ("B", False): ("SM100_MMA_F16BF16_2x1SM_SS, M=128: FrgTypeC = tmem_frg_2sm<c_type>", "tmem_frg_2sm/64"),
    ("D", False): ("SM100_MMA_F16BF16_SS, M=128: FrgTypeC = tmem_frg_1sm<c_type>", "tmem_frg_1sm/128"),
    ("D", True): ("tmem_frg_ws<.., 1>, M_MMA=128 (no .ws MMA trait uses it)", "tmem_frg_ws/128"),
    ("F", False): ("SM100_MMA_F16BF16_SS, M=64: FrgTypeC = tmem_frg_1sm<c_type>", "tmem_frg_1sm/64"),
    ("G", True): ("tmem_frg_ws<.., 1>, M_MMA=32 (no .ws MMA trait uses it)", "tmem_frg_ws/32"),
}

#: TmemAllocMode::Duplicated comment, UMMA_2SM_128xNx16_TS: (SM, subpartition) -> rows of A.
CUTLASS_DUPLICATED = {
    (0, 0): (0, 32),
    (0, 1): (32, 64),
    (0, 2): (0, 32),
    (0, 3): (32, 64),
    (1, 0): (64, 96),
    (1, 1): (96, 128),
    (1, 2): (64, 96),
    (1, 3): (96, 128),
}

#: Every pinned (M, cta_group, sparse, ws) of the table, and the N tried for each.
PINNED = [
    (256, 2, False, False),
    (256, 2, True, False),
    (128, 2, False, False),
    (128, 1, False, False),
    (128, 1, True, False),
    (128, 1, False, True),
    (128, 1, True, True),
    (64, 1, False, False),
    (64, 1, True, False),
    (32, 1, False, True),
    (32, 1, True, True),
]
NS = (8, 16, 64, 128, 256)


def _flat(x: object) -> list[int]:
    return [y for e in x for y in _flat(e)] if isinstance(x, tuple) else [int(x)]  # type: ignore[arg-type]


def cute_eval(shape: object, stride: object, index: np.ndarray) -> np.ndarray:
    """A CuTe layout (one mode) applied to a 1-D index: split colexicographically over the flattened
    shape (first mode fastest), each coordinate times its stride, summed."""
    index = np.asarray(index, dtype=np.int64)
    offset = np.zeros_like(index)
    for s, d in zip(_flat(shape), _flat(stride), strict=True):
        offset += (index % s) * d
        index = index // s
    return offset


def cute_eval2(layout: tuple, coord0: np.ndarray, coord1: np.ndarray) -> np.ndarray:
    """A rank-2 CuTe layout at the natural coordinate (coord0, coord1): each mode takes its own."""
    (s0, s1), (d0, d1) = layout
    return cute_eval(s0, d0, coord0) + cute_eval(s1, d1, coord1)


def complement(shape: object, stride: object, cotarget: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """CuTe's complement(layout, cotarget) for an injective layout: the modes that fill the gaps
    between its strides, then the rest up to ``cotarget``."""
    modes = sorted((d, s) for s, d in zip(_flat(shape), _flat(stride), strict=True) if s != 1)
    shapes, strides, current = [], [], 1
    for d, s in modes:
        if d // current > 1:
            shapes.append(d // current)
            strides.append(current)
        current = s * d
    shapes.append(-(-cotarget // current))
    strides.append(current)
    return tuple(shapes), tuple(strides)


def tmem_address(virtual: np.ndarray, value_bits: int, storage_bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """tmem_restride ``(128,16384):(TMEM::DP<ValueType>, storage/value)`` and ``tmem_ptr<ValueType>``:
    virtual address -> (lane, column, bit). tmem_ptr gives the word and the sub-word index ``s``;
    that element ``s`` is bits ``s * value_bits ..`` of the word is the little-endian order of the
    32-bit words CUTLASS moves A in with (tcgen05.st of recast registers, tcgen05.cp of shared
    memory), not something tmem_ptr states."""
    shift = {32: 0, 16: 1, 8: 2, 4: 3}[value_bits]
    elements = (virtual % 128) * ((1 << 16) << shift) + (virtual // 128) * (storage_bits // value_bits)
    word, sub = elements >> shift, elements & ((1 << shift) - 1)
    return word >> 16, word & 0xFFFF, sub * value_bits


def cutlass_d(layout: str, ws: bool, m: int, n: int, cta_group: int, value_bits: int = 32, tile: int = 0) -> np.ndarray:
    """(cta, lane, column, bit) of D[i, j] as CUTLASS places it: an int64 array (4, m, n), -1 where
    CUTLASS places nothing. ``tile = 1`` is the second M tile of an Interleaved tiling (its
    offset the complement's first mode)."""
    _, atom_name = CUTLASS_TRAITS[(layout, ws)]
    per_cta = m // cta_group
    atom = CUTLASS_ATOMS[atom_name](n)
    part = CUTLASS_PARTITION[cta_group](m, n)
    v = np.arange(per_cta * n)
    r, j = v % per_cta, v // per_cta
    shift = 0
    if tile:
        cshape, cstride = complement(atom[0], atom[1], 128 * 512)
        shift = int(cute_eval(cshape, cstride, np.int64(tile)))
    lane, column, bit = tmem_address(cute_eval2(atom, r, j) + shift, value_bits, 32)
    out = np.full((4, m, n), -1, dtype=np.int64)
    for t in range(cta_group):
        logical = cute_eval2(part, np.full_like(v, t), v)
        i, c = logical % m, logical // m
        assert (out[0, i, c] == -1).all()  # each element placed once
        out[:, i, c] = np.stack([np.full_like(v, t), lane, column, bit])
    return out


def ours_d(m: int, n: int, cta_group: int, sparse: bool, ws: bool, alignment: int = 0) -> np.ndarray:
    cta, lane, column = dp.d_cells(m, n, cta_group, sparse, ws, alignment)
    return np.stack([cta, lane, column, np.zeros_like(cta)])


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def test_layout_id_table() -> None:
    expected = {
        (32, 1, False, True): "G",
        (32, 1, True, True): "G",
        (64, 1, False, True): "E",
        (64, 1, True, True): "E",
        (64, 1, False, False): "F",
        (64, 1, True, False): "F",
        (128, 1, False, False): "D",
        (128, 1, True, False): "D",
        (128, 1, False, True): "D",
        (128, 1, True, True): "D",
        (128, 2, False, False): "B",
        (128, 2, True, False): "C",
        (256, 2, False, False): "A",
        (256, 2, True, False): "A",
    }
    for m in (16, 32, 64, 128, 256, 512):
        for g in (1, 2):
            for sparse in (False, True):
                for ws in (False, True):
                    key = (m, g, sparse, ws)
                    if key in expected:
                        assert dp.layout_id(*key) == expected[key]
                    else:
                        with pytest.raises(OperandError) as e:
                            dp.layout_id(*key)
                        assert e.value.section == "9.7.16.10.5"
    assert sorted(set(expected.values())) == list(dp.LAYOUTS)
    assert [dp.lane_alignments(x) for x in dp.LAYOUTS] == [(0,), (0,), (0, 16), (0,), (0,), (0, 16), (0,)]
    assert dp.organization("E") == "2x3"  # as the manual prints it


# ---------------------------------------------------------------------------------------------
# CUTLASS
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("layout", "ws"), sorted(CUTLASS_TRAITS))
def test_d_matches_cutlass(layout: str, ws: bool) -> None:
    m, g = next((m, g) for (m, g, s, w) in PINNED if dp.layout_id(m, g, s, w) == layout and w == ws)
    for n in NS:
        if n % (128 // (m // g) if layout != "F" else 1):
            continue
        theirs = cutlass_d(layout, ws, m, n, g)
        assert (theirs >= 0).all()
        for sparse in (False, True):
            if layout == "B" and sparse:
                continue
            assert (ours_d(m, n, g, sparse, ws) == theirs).all(), (layout, ws, n)


def test_f16_accumulator_is_not_packed() -> None:
    """tmem_frg_1sm<half_t> (StorageType uint32_t): one 16-bit D element a column, in its low bits
    (§9.7.16.10.4.1)."""
    for layout, m, g in (("D", 128, 1), ("F", 64, 1), ("A", 256, 2), ("B", 128, 2)):
        for n in (16, 64):
            assert (cutlass_d(layout, False, m, n, g, value_bits=16) == cutlass_d(layout, False, m, n, g)).all()


def test_layout_f_alignment_16_is_cutlass_interleaved_second_tile() -> None:
    """TmemAllocMode::Interleaved: "If a TMEM Atom uses a half-subpartition (16DPs), then multiple
    atoms can be interleaved by using the top-half-subpartition and the bottom-half-subpartition":
    the second M tile of the M_MMA = 64 atom is at the complement's first mode, lane offset 16."""
    assert complement((16, 4), (1, 32), 128)[1][0] == 16
    for n in (8, 64, 256):
        theirs = cutlass_d("F", False, 64, n, 1, tile=1)
        base = np.array([0, 16, 0, 0])[:, None, None]  # [d-tmem] is 16 lanes on
        assert (ours_d(64, n, 1, False, False, 16) + base == theirs).all()
        assert (ours_d(64, n, 1, True, False, 16) + base == theirs).all()


def test_layout_c_disagreement_is_refused() -> None:
    """CUTLASS's SM100_MMA_*_2x1SM_SS_SPARSE (M = 128) use tmem_frg_2sm<c_type> like the dense traits:
    Layout B's 2x2 placement, not the manual's half-datapath 4x1. The module refuses."""
    assert (cutlass_d("B", False, 128, 64, 2) == ours_d(128, 64, 2, False, False)).all()
    for alignment in (0, 16):
        with pytest.raises(OperandError, match="Layout C") as e:
            dp.d_cells(128, 64, 2, True, False, alignment)
        assert e.value.section == "9.7.16.10.5"
    with pytest.raises(OperandError, match="Layout C"):
        dp.a_cells(128, 16, 16, 2, True, False)


def test_layout_e_candidate_is_cutlass_ws_but_refused() -> None:
    """The kept candidate for Layout E is CUTLASS's tmem_frg_ws M_MMA = 64 ("2x2 datapath"); the
    manual says "2x3", so d_cells refuses."""
    for n in (64, 128, 256):
        cta, lane, column = dp._d_cells("E", 64, n, 1)
        atom = CUTLASS_ATOMS["tmem_frg_ws/64"](n)
        i, j = np.indices((64, n))
        ln, col, _ = tmem_address(cute_eval2(atom, i, j), 32, 32)
        assert (lane == ln).all() and (column == col).all() and (cta == 0).all()
        with pytest.raises(OperandError, match="2x3"):
            dp.d_cells(64, n, 1, False, True)


# A from Tensor Memory: (layout, M, cta_group, MMA_Traits struct) of the _TS traits; K = 256 / bits
# ("Logical shape-K is always 256 bits"); F8F6F4_TS has K = 32 (8-bit containers).
TS_TRAITS = [
    ("D", 128, 1, "SM100_MMA_{TF32,F16BF16,S8,F8F6F4}_TS: FrgTypeA = tmem_frg_1sm<a_type, a_type, NonInterleaved>", "tmem_frg_1sm/128"),
    ("F", 64, 1, "SM100_MMA_{TF32,F16BF16,S8,F8F6F4}_TS: FrgTypeA = tmem_frg_1sm<a_type, a_type, NonInterleaved>", "tmem_frg_1sm/64"),
    ("A", 256, 2, "SM100_MMA_{TF32,F16BF16,S8,F8F6F4}_2x1SM_TS: FrgTypeA = tmem_frg_2sm<a_type, a_type, Duplicated>", "tmem_frg_2sm/128"),
    ("B", 128, 2, "SM100_MMA_{TF32,F16BF16,S8,F8F6F4}_2x1SM_TS: FrgTypeA = tmem_frg_2sm<a_type, a_type, Duplicated>", "tmem_frg_2sm/64/Duplicated"),
]


@pytest.mark.parametrize(("layout", "m", "g", "struct", "atom_name"), TS_TRAITS)
@pytest.mark.parametrize("bits", [32, 16, 8])
def test_a_matches_cutlass(layout: str, m: int, g: int, struct: str, atom_name: str, bits: int) -> None:
    k = 256 // bits
    per_cta = m // g
    atom = CUTLASS_ATOMS[atom_name](k)
    part = CUTLASS_PARTITION[g](m, k)
    v = np.arange(per_cta * k)
    r, kk = v % per_cta, v // per_cta
    lane, column, bit = tmem_address(cute_eval2(atom, r, kk), bits, bits)  # StorageType = ValueType
    cta, ours_lane, ours_column, ours_bit = dp.a_cells(m, k, bits, g, False, False)
    for t in range(g):
        logical = cute_eval2(part, np.full_like(v, t), v)
        i, c = logical % m, logical // m
        assert (cta[i, c] == t).all()
        assert (ours_lane[i, c] == lane).all() and (ours_column[i, c] == column).all() and (ours_bit[i, c] == bit).all()
    # the D rows share A's lanes (NonInterleaved: "DP-address equivalence in TMEM-A and TMEM-C")
    _, d_lane, _ = dp.d_cells(m, 64, g, False, False)
    assert (ours_lane == d_lane[:, :1]).all()
    # a second K block continues in the next columns. tiled_product tiles the atom over the
    # complement; the M_MMA = 64 atom with NonInterleaved (tile_stride = 2) skips the complement's
    # first mode (the other half sub-partition), the others take index 1.
    cshape, cstride = complement(atom[0], atom[1], 128 * 512)
    shift = int(cute_eval(cshape, cstride, np.int64(2 if atom_name == "tmem_frg_1sm/64" else 1)))
    ln2, col2, bit2 = tmem_address(cute_eval2(atom, r, kk) + shift, bits, bits)
    _, l2, c2, b2 = dp.a_cells(m, 2 * k, bits, g, False, False)
    i, c = (cute_eval2(part, np.zeros_like(v), v) % m), (cute_eval2(part, np.zeros_like(v), v) // m)
    assert (l2[i, c + k] == ln2).all() and (c2[i, c + k] == col2).all() and (b2[i, c + k] == bit2).all()


def test_layout_b_duplicated_a() -> None:
    """TmemAllocMode::Duplicated (UMMA_2SM_128xNx16_TS): each CTA's 64 rows of A in sub-partitions
    0-1 and again in 2-3; copy c feeds D's column group c (lanes 64c .. 64c + 63)."""
    assert dp.a_copies(128, 2, False, False) == 2
    for bits in (32, 16, 8, 4):
        k = 256 // bits
        copies = [dp.a_cells(128, k, bits, 2, False, False, copy=c) for c in (0, 1)]
        for (sm, sub), (lo, hi) in CUTLASS_DUPLICATED.items():
            c = sub // 2
            cta, lane, _, _ = copies[c]
            assert (cta[lo:hi] == sm).all()
            assert (lane[lo:hi] // 32 == sub).all()
        assert (copies[1][1] == copies[0][1] + 64).all()
        assert (copies[1][2] == copies[0][2]).all() and (copies[1][3] == copies[0][3]).all()
    _, d_lane, _ = dp.d_cells(128, 64, 2, False, False)
    for c in (0, 1):
        assert (dp.a_cells(128, 16, 16, 2, False, False, copy=c)[1] == d_lane[:, 32 * c : 32 * c + 1]).all()
    for layout_key in ((256, 2, False, False), (128, 1, False, False), (64, 1, True, False), (128, 1, True, True)):
        assert dp.a_copies(*layout_key) == 1


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


def _cases():
    for m, g, sparse, ws in PINNED:
        layout = dp.layout_id(m, g, sparse, ws)
        for alignment in dp.lane_alignments(layout):
            for n in NS:
                groups = 1 if layout == "F" else 128 // (m // g)
                if n % groups == 0:
                    yield m, n, g, sparse, ws, alignment, layout


def test_each_d_element_a_distinct_cell() -> None:
    for m, n, g, sparse, ws, alignment, layout in _cases():
        cta, lane, column = dp.d_cells(m, n, g, sparse, ws, alignment)
        assert cta.shape == lane.shape == column.shape == (m, n)
        assert cta.dtype == lane.dtype == column.dtype == np.int64
        assert not lane.flags.writeable
        key = (cta * 128 + lane) * 512 + column
        assert np.unique(key).size == m * n, (m, n, g, layout)
        assert lane.min() >= 0 and lane.max() < 128 and column.min() == 0
        groups = 1 if layout == "F" else 128 // (m // g)
        assert column.max() == n // groups - 1
        # cta_group::2: rows 0 .. M/2 - 1 in the issuing CTA, the rest in its peer
        assert (cta == (np.arange(m)[:, None] // (m // g))).all()
        if layout == "F":  # half datapath: only lanes a .. a+15 of each 32-lane sub-partition
            absolute = alignment + lane  # [d-tmem] is at lane `alignment`
            assert set(np.unique(absolute % 32)) == set(range(alignment, alignment + 16))
            assert np.unique(absolute).size == 64 and absolute.max() < 128
            assert (dp.d_cells(m, n, g, sparse, ws, 0)[1] == lane).all()  # offsets are from [d-tmem]
        else:  # the full layouts use every lane of every CTA
            assert all(np.unique(lane[cta == c]).size == 128 for c in range(g))


def test_the_warp_that_loads_d_is_the_one_of_9_7_16_8_1() -> None:
    """Warp w of a warpgroup, loading .32x32b at taddr lane 32w, reaches lanes 32w .. 32w+31 only
    (§9.7.16.8.1); the four warps' loads together read every D element, each by the warp
    :func:`warp_of_lane` names."""
    assert [dp.warp_of_lane(x) for x in (0, 31, 32, 63, 64, 95, 96, 127)] == [0, 0, 1, 1, 2, 2, 3, 3]
    for m, n, g, sparse, ws, alignment, _ in _cases():
        cta, lane, column = dp.d_cells(m, n, g, sparse, ws, alignment)
        lane = lane + alignment  # absolute lanes: [d-tmem] is at lane `alignment`
        width = int(column.max()) + 1
        num = next((x for x in tl.NUMS if x >= width), 128)
        ld_lane, ld_column = tl.ld_st_cells("32x32b", num)
        assert ld_lane.min() == 0 and ld_lane.max() == 31
        d_key = (cta * 128 + lane) * 512 + column
        for c in range(g):
            for w in range(4):  # .32x32b.x<num> at taddr (32w, 0), (32w, 128), ...
                ld_key = np.concatenate([(c * 128 + 32 * w + ld_lane) * 512 + base + ld_column for base in range(0, width, num)], axis=None)
                mine = (cta == c) & (dp.warp_of_lane(lane) == w)
                assert np.isin(d_key[mine], ld_key).all()
                assert not np.isin(d_key[~mine], ld_key).any()


def test_a_packing() -> None:
    """Along K, 32 / bits elements a column, the lower-numbered one in the lower bits (4-bit: two a
    byte, §9.7.16.10.4.5; 8-bit containers, §9.7.16.10.4.3)."""
    for bits in dp.ELEMENT_BITS:
        k = 1024 // bits
        for m, g, sparse, ws, alignment in ((128, 1, False, False, 0), (64, 1, True, False, 16), (256, 2, False, False, 0)):
            cta, lane, column, bit = dp.a_cells(m, k, bits, g, sparse, ws, alignment)
            kk = np.arange(k)
            assert (column == kk * bits // 32).all() and (bit == kk * bits % 32).all()
            key = ((cta * 128 + lane) * 512 + column) * 32 + bit
            assert np.unique(key).size == m * k
            d_cta, d_lane, _ = dp.d_cells(m, 64, g, sparse, ws, alignment)
            assert (lane == d_lane[:, :1]).all() and (cta == d_cta[:, :1]).all()


def test_refusals() -> None:
    bad = [
        lambda: dp.d_cells(64, 64, 1, False, False, 8),  # alignment not 0/16
        lambda: dp.d_cells(128, 64, 1, False, False, 16),  # Layout D takes alignment 0 only
        lambda: dp.d_cells(128, 25, 2, False, False),  # 2x2 needs N even
        lambda: dp.d_cells(32, 66, 1, False, True),  # 1x4 needs N % 4 == 0
        lambda: dp.d_cells(128, 1024, 1, False, False),  # more than 512 columns
        lambda: dp.d_cells(128, 0, 1, False, False),
        lambda: dp.d_cells(256, 64, 1, False, False),  # not in the table
        lambda: dp.d_cells(128, 64, 2, False, True),  # .ws is N/A with cta_group::2
        lambda: dp.d_cells(128.0, 64, 1, False, False),  # type: ignore[arg-type]
        lambda: dp.a_cells(32, 16, 16, 1, False, True),  # Layout G: no A-from-TMEM trait
        lambda: dp.a_cells(64, 16, 16, 1, False, True),  # Layout E
        lambda: dp.a_cells(128, 16, 6, 1, False, False),  # 6-bit elements sit in 8-bit containers
        lambda: dp.a_cells(128, 3, 16, 1, False, False),  # not whole columns
        lambda: dp.a_cells(128, 16, 16, 1, False, False, copy=1),  # Layout D has one copy
        lambda: dp.a_cells(128, 16, 16, 2, False, False, copy=2),
    ]
    ok = dp.d_cells(128, 24, 2, False, False)  # 24 splits into two groups of 12 columns
    assert ok[2].max() == 11
    for call in bad:
        with pytest.raises(OperandError):
            call()
    with pytest.raises(OperandError, match="no A-from-Tensor-Memory"):
        dp.a_copies(32, 1, False, True)


def test_svg() -> None:
    for key in ((256, 2, False, False, 0), (128, 2, False, False, 0), (128, 1, False, False, 0), (64, 1, False, False, 16), (32, 1, False, True, 0)):
        m, g, sparse, ws, alignment = key
        svg = dp.svg_datapath(m, 64, g, sparse, ws, alignment)
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        assert f"Layout {dp.layout_id(m, g, sparse, ws)}" in svg
        assert svg.count("warp 3") == g
        if g == 2:
            assert "peer CTA" in svg
        if m == 64:
            assert "unused" in svg
    with pytest.raises(OperandError):
        dp.svg_datapath(128, 64, 2, True, False)


def test_fast() -> None:
    dp._d_cells.cache_clear()
    start = time.perf_counter()
    dp.d_cells(256, 256, 2, False, False)
    assert time.perf_counter() - start < 0.5
