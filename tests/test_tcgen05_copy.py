"""tcgen05.cp layout facts (ptxspec.semantics.tcgen05_copy) against NVIDIA CUTLASS's SM100 UTCCP
copy atoms, transcribed below as data (shape, stride) from commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4:

* include/cute/atom/copy_traits_sm100.hpp: Copy_Traits<SM100_UTCCP_*> (ValID, SrcLayout, DstLayout);
* include/cute/arch/tmem_allocator_sm100.hpp: ``using DP_b = cute::constant<int32_t, (1 << 21)>``;
* include/cute/arch/mma_sm100_desc.hpp: make_umma_desc<Major::K>'s canonical forms (uint128_t units);
* examples/python/CuTeDSL/experimental/primitives/tcgen05/cp_narrow_a_to_tmem_mma.py: the packed
  FP4 / FP6 source and the holder bytes.

The layouts are evaluated by a small CuTe evaluator written here (colexicographic coordinates,
offset = sum of coordinate * stride)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import tcgen05_copy as tc
from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.spec.errors import OperandError

COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
DP_b = 1 << 21  # tmem_allocator_sm100.hpp: TMEM::DP_b, the lane stride of a bit-addressed TMEM offset


# ---------------------------------------------------------------------------------------------
# A tiny CuTe layout evaluator
# ---------------------------------------------------------------------------------------------


def _flatten(shape, stride):
    if isinstance(shape, tuple):
        assert isinstance(stride, tuple) and len(shape) == len(stride)
        return [leaf for s, d in zip(shape, stride) for leaf in _flatten(s, d)]
    return [(shape, stride)]


def cute_size(shape) -> int:
    return int(np.prod([s for s, _ in _flatten(shape, shape)]))


def cute_eval(layout, index):
    """Layout (shape, stride) at the 1-D index (or array of indices): the colexicographic coordinate
    of ``index`` in ``shape``, dotted with ``stride``."""
    shape, stride = layout
    index = np.asarray(index, dtype=np.int64)
    offset = np.zeros_like(index)
    for size, step in _flatten(shape, stride):
        offset = offset + (index % size) * step
        index = index // size
    return offset


def cute_coords(shape, index):
    """The colexicographic coordinate of ``index`` in the flat ``shape``."""
    coords = []
    index = np.asarray(index, dtype=np.int64)
    for size in shape:
        coords.append(index % size)
        index = index // size
    return coords


# ---------------------------------------------------------------------------------------------
# Copy_Traits<SM100_UTCCP_*> transcribed (copy_traits_sm100.hpp @ COMMIT)
# ---------------------------------------------------------------------------------------------

#: name -> (ValID, SrcLayout of the 1cta form, DstLayout of the 1cta form, source decode)
#: The source decode turns a SrcLayout value (a logical bit index, numbered "[core_matrix_strided,
#: core_matrix_leading, broadcast, repeat]") into (source row, bit): the ValID's shape gives the
#: coordinates; ``rows_modes`` names the modes (with their row multiplier) that count rows.
UTCCP = {
    "SM100_UTCCP_128dp256bit": dict(
        form=("128x256b", None),
        val_id=((128, 256), (DP_b, 1)),
        src=((1, 32768), (0, 1)),
        dst=((1, 32768), (0, 1)),
        rows=((0, 1),),
        bit_mode=1,
    ),
    "SM100_UTCCP_128dp128bit": dict(
        form=("128x128b", None),
        val_id=((128, 128), (DP_b, 1)),
        src=((1, 16384), (0, 1)),
        dst=((1, 16384), (0, 1)),
        rows=((0, 1),),
        bit_mode=1,
    ),
    "SM100_UTCCP_4dp256bit": dict(
        form=("4x256b", None),
        val_id=((128, 256), (DP_b, 1)),
        src=((1, (4, 256)), (0, (32, 128))),
        dst=((1, (4, 256)), (0, (32, 128))),
        rows=None,  # a "TMEM refresh": the copy's rows are its own value coordinates (4, 256)
        bit_mode=1,
    ),
    "SM100_UTCCP_4x32dp128bit": dict(
        form=("32x128b", "warpx4"),
        val_id=((32, 128, 4), (DP_b, 1, DP_b * 32)),
        src=((1, (32, 128, 4)), (0, (1, 32, 0))),
        dst=((1, 16384), (0, 1)),
        rows=((0, 1),),
        bit_mode=1,
    ),
    "SM100_UTCCP_2x64dp128bitlw0213": dict(
        form=("64x128b", "warpx2::02_13"),
        val_id=((64, 128, 2), (DP_b, 1, DP_b * 64)),
        src=((1, (64, 128, 2)), (0, (1, 64, 0))),
        dst=((1, 16384), (0, 1)),
        rows=((0, 1),),
        bit_mode=1,
    ),
    "SM100_UTCCP_2x64dp128bitlw0123": dict(
        form=("64x128b", "warpx2::01_23"),
        val_id=((32, 128, 2, 2), (DP_b, 1, DP_b * 64, DP_b * 32)),
        src=((1, (32, 128, 2, 2)), (0, (1, 32, 4096, 0))),
        dst=((1, 16384), (0, 1)),
        rows=((0, 1), (2, 32)),  # [core_matrix_strided, core_matrix_leading, repeat, broadcast]
        bit_mode=1,
    ),
}

#: The _2cta forms: ThrID = Layout<_2>, ValID "typename Copy_Traits<..._1cta>::ValID", and the
#: Src/Dst layouts with a thread mode of 2 at stride 0.
UTCCP_2CTA_SRC = {
    "SM100_UTCCP_128dp256bit": ((2, 32768), (0, 1)),
    "SM100_UTCCP_128dp128bit": ((2, 16384), (0, 1)),
    "SM100_UTCCP_4dp256bit": ((2, (4, 256)), (0, (32, 128))),
    "SM100_UTCCP_4x32dp128bit": ((2, (32, 128, 4)), (0, (1, 32, 0))),
    "SM100_UTCCP_2x64dp128bitlw0213": ((2, (64, 128, 2)), (0, (1, 64, 0))),
    "SM100_UTCCP_2x64dp128bitlw0123": ((2, (32, 128, 2, 2)), (0, (1, 32, 4096, 0))),
}


def _thread_mode(layout, thread: int):
    """The value mode of a (thread, value) layout, for thread ``thread``: (shape, stride, offset)."""
    (threads, values), (thread_stride, value_stride) = layout
    assert 0 <= thread < threads
    return (values, value_stride), thread * thread_stride


def cutlass_map(atom: str, thread: int = 0, src=None, dst=None) -> dict[int, set[int]]:
    """Source row -> the set of TMEM lane offsets that CUTLASS's traits send it to (with the given
    Src/Dst layouts, by default the 1cta ones), checking that every bit of a row lands in the same
    bit column as it has in the row."""
    spec = UTCCP[atom]
    dst_mode, dst_off = _thread_mode(dst or spec["dst"], thread)
    src_mode, src_off = _thread_mode(src or spec["src"], thread)
    v = np.arange(cute_size(dst_mode[0]))
    assert cute_size(src_mode[0]) == v.size
    tmem = cute_eval(spec["val_id"], cute_eval(dst_mode, v) + dst_off)
    lane, column = tmem // DP_b, tmem % DP_b
    val_shape = [s for s, _ in _flatten(*spec["val_id"])]
    if spec["rows"] is None:  # 4dp: the copy's own (4, 256) coordinates
        row, bit = cute_coords((4, 256), v)
    else:
        coords = cute_coords(val_shape, cute_eval(src_mode, v) + src_off)
        row = sum(coords[m] * k for m, k in spec["rows"])
        bit = coords[spec["bit_mode"]]
    assert np.array_equal(bit, column), atom
    out: dict[int, set[int]] = {}
    for r, lanes in zip(row.tolist(), lane.tolist()):
        out.setdefault(r, set()).add(lanes)
    return out


FORMS = [spec["form"] for spec in UTCCP.values()]


@pytest.mark.parametrize("atom", sorted(UTCCP))
def test_destinations_match_cutlass(atom):
    shape, multicast = UTCCP[atom]["form"]
    expected = cutlass_map(atom)
    got = tc.cp_destinations(shape, multicast)
    rows, bits = tc.cp_rows_and_bits(shape)
    assert got.dtype == np.int64 and got.shape[0] == rows == len(expected)
    assert tc.CUTLASS_ATOMS[(shape, multicast)] == atom
    for r in range(rows):
        assert set(got[r].tolist()) == expected[r], (atom, r)
        assert len(set(got[r].tolist())) == got.shape[1]


@pytest.mark.parametrize("atom", sorted(UTCCP))
def test_two_cta_forms_copy_the_same_layout(atom):
    # §9.7.16.9.2 .cta_group::2: "copied into the Tensor Memory of both the current and the peer
    # CTAs"; CUTLASS's _2cta traits: the same ValID, the thread mode at stride 0.
    spec = UTCCP[atom]
    src = UTCCP_2CTA_SRC[atom]
    dst = src if atom == "SM100_UTCCP_4dp256bit" else ((2, spec["dst"][0][1]), (0, 1))
    expected = {r: set(x) for r, x in enumerate(tc.cp_destinations(*spec["form"]).tolist())}
    assert cutlass_map(atom, 0, src, dst) == cutlass_map(atom, 1, src, dst) == expected


@pytest.mark.parametrize("atom", sorted(UTCCP))
def test_rows_and_bits_match_cutlass(atom):
    shape, _ = UTCCP[atom]["form"]
    rows, bits = tc.cp_rows_and_bits(shape)
    val_shape = [s for s, _ in _flatten(*UTCCP[atom]["val_id"])]
    assert bits == val_shape[1]  # core_matrix_leading: the bits of a row
    assert rows == len(cutlass_map(atom))
    assert shape == f"{rows}x{bits}b"


# ---------------------------------------------------------------------------------------------
# Properties of the lane maps (§9.7.16.9.2)
# ---------------------------------------------------------------------------------------------

PAIRS = {"warpx2::02_13": [{0, 2}, {1, 3}], "warpx2::01_23": [{0, 1}, {2, 3}], "warpx4": [{0, 1, 2, 3}]}


@given(st.sampled_from(FORMS), st.booleans())
@settings(max_examples=40, deadline=None)
def test_lane_map_properties(form, dotted):
    shape, multicast = form
    if dotted:
        shape, multicast = "." + shape, multicast and "." + multicast
    dest = tc.cp_destinations(shape, multicast)
    rows, _ = tc.cp_rows_and_bits(shape)
    copies = {None: 1, "warpx4": 4}.get(form[1], 2)
    assert dest.shape == (rows, copies)
    assert dest.min() >= 0 and dest.max() < 128
    flat = dest.ravel().tolist()
    assert len(flat) == len(set(flat))  # no lane receives two rows (or one row twice)
    if form[0] != "4x256b":
        assert sorted(flat) == list(range(128))  # every lane receives exactly one row
    else:
        assert sorted(lane // 32 for lane in flat) == [0, 1, 2, 3]  # one lane per warp's chunk
    if form[1] is not None:
        for r in range(rows):
            warps = set((dest[r] // 32).tolist())
            assert len(warps) == copies and warps in PAIRS[form[1]]  # distinct warps of one pair
        for warp in range(4):  # "each warp in the warp pair receive half of the data"
            received = {r for r in range(rows) if warp in set((dest[r] // 32).tolist())}
            assert len(received) == 32


def test_lane_map_examples():
    assert tc.cp_destinations("64x128b", "warpx2::02_13")[[0, 31, 32, 63]].tolist() == [[0, 64], [31, 95], [32, 96], [63, 127]]
    assert tc.cp_destinations("64x128b", "warpx2::01_23")[[0, 31, 32, 63]].tolist() == [[0, 32], [31, 63], [64, 96], [95, 127]]
    assert tc.cp_destinations("32x128b", "warpx4")[5].tolist() == [5, 37, 69, 101]
    assert tc.cp_destinations("4x256b").ravel().tolist() == [0, 32, 64, 96]
    assert tc.cp_destinations("128x128b").ravel().tolist() == list(range(128))


# ---------------------------------------------------------------------------------------------
# Source addresses against make_umma_desc<Major::K>'s canonical forms (mma_sm100_desc.hpp @ COMMIT)
# ---------------------------------------------------------------------------------------------

#: "In units of uint128_t, each UmmaDescriptor Major-K describes a canonical layout of the form
#: INTERLEAVE: Swizzle<0,4,3> o smem_ptr o ((8,n),2):((1,SBO),LBO); B32: Swizzle<1,4,3> o ...
#: ((8,n),2):((2,SBO),1); B64: Swizzle<2,4,3> ... ((4,SBO),1); B128: Swizzle<3,4,3> ... ((8,SBO),1)".
#: swizzle name -> (B of Swizzle<B,4,3>, the core-matrix row stride in uint128_t, LBO used)
K_MAJOR = {"none": (0, 1, True), "32B": (1, 2, False), "64B": (2, 4, False), "128B": (3, 8, False)}


def cute_swizzle(b: int, m: int, s: int, offset):
    """CuTe's Swizzle<B,M,S>: offset ^ ((offset & (((1 << B) - 1) << (M + S))) >> S)."""
    mask = ((1 << b) - 1) << (m + s)
    return offset ^ ((offset & mask) >> s)


def umma_k_addresses(start: int, lbo: int, sbo: int, swizzle: str, rows: int, units: int) -> np.ndarray:
    b, row_stride, uses_lbo = K_MAJOR[swizzle]
    n = rows // 8 if rows >= 8 else 1
    shape = ((8, n), units)
    stride = ((row_stride, sbo // 16), (lbo // 16) if uses_lbo else 1)
    r = np.arange(rows)[:, None]
    u = np.arange(units)[None, :]
    linear = r + rows * u  # colexicographic index of (r, u) in (rows, units)
    offset = cute_eval((shape, stride), linear) * 16  # uint128_t -> bytes
    return cute_swizzle(b, 4, 3, start + offset)


@given(
    shape=st.sampled_from(["128x256b", "128x128b", "64x128b", "32x128b"]),
    swizzle=st.sampled_from(sorted(K_MAJOR)),
    start=st.integers(0, (1 << 14) - 1),
    lbo=st.integers(1, 255),
    sbo=st.integers(1, 255),
    encoded=st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_source_addresses_follow_umma_k_major(shape, swizzle, start, lbo, sbo, encoded):
    desc = td.SmemDescriptor(start_address=16 * start, leading_byte_offset=16 * lbo, stride_byte_offset=16 * sbo, swizzle=swizzle)
    rows, bits = tc.cp_rows_and_bits(shape)
    got = tc.cp_source_addresses(desc.encode() if encoded else desc, shape)
    assert got.dtype == np.int64 and got.shape == (rows, bits // 128)
    assert np.array_equal(got, umma_k_addresses(16 * start, 16 * lbo, 16 * sbo, swizzle, rows, bits // 128))


def test_source_addresses_example():
    # 8 rows of 16 bytes, then the next 16 bytes of K at LBO, the next 8 rows at SBO
    desc = td.SmemDescriptor(start_address=0x400, leading_byte_offset=128, stride_byte_offset=256)
    got = tc.cp_source_addresses(desc, "128x256b")
    assert got[:9].tolist() == [[0x400 + 16 * r, 0x480 + 16 * r] for r in range(8)] + [[0x500, 0x580]]


# ---------------------------------------------------------------------------------------------
# Decompression (§9.7.16.9.1)
# ---------------------------------------------------------------------------------------------


def pack_bitwise(elements: list[int], width: int, padding: list[int]) -> np.ndarray:
    """16 elements of ``width`` bits written bit by bit (element k's bit j at bit w k + j of the
    byte string, least significant bit of each byte first), then padding bytes."""
    out = [0] * (16 * width // 8)
    for k, e in enumerate(elements):
        for j in range(width):
            p = width * k + j
            out[p // 8] |= ((e >> j) & 1) << (p % 8)
    return np.array(out + padding, dtype=np.uint8)


@given(st.sampled_from(["b4x16_p64", "b6x16_p32"]), st.data())
@settings(max_examples=60, deadline=None)
def test_decompress_round_trip(fmt, data):
    width, nbytes = tc.SOURCE_FORMATS[fmt]
    elements = data.draw(st.lists(st.integers(0, (1 << width) - 1), min_size=16, max_size=16))
    padding = data.draw(st.lists(st.integers(0, 255), min_size=16 - nbytes, max_size=16 - nbytes))
    unit = pack_bitwise(elements, width, padding)
    got = tc.decompress(unit, fmt)
    # holder bytes: 4-bit "00xxxx00" (payload bits [5:2]), 6-bit "0xxxxxx0" (payload bits [6:1])
    holder = {"b4x16_p64": lambda e: e * 4, "b6x16_p32": lambda e: e * 2}[fmt]
    assert got.dtype == np.uint8 and got.tolist() == [holder(e) for e in elements]


def test_decompress_cutlass_example_and_batch():
    # cp_narrow_a_to_tmem_mma.py: _FP4_E2M1_ONE = 0x2 packed as one | one << 4; _FP6_E3M2_ONE = 0x0C
    # packed by _pack_four_fp6_codes (code | code << 6 | code << 12 | code << 18, low byte first).
    fp4 = np.array([0x22] * 8 + [0xAB] * 8, dtype=np.uint8)
    assert tc.decompress(fp4, "b4x16_p64").tolist() == [0b00001000] * 16
    packed = 0x0C | 0x0C << 6 | 0x0C << 12 | 0x0C << 18
    group = [(packed >> (8 * i)) & 0xFF for i in range(3)]
    fp6 = np.array(group * 4 + [0xFF] * 4, dtype=np.uint8)
    assert tc.decompress(fp6, ".b6x16_p32").tolist() == [0b00011000] * 16
    batch = np.stack([fp4, fp6, fp4]).reshape(3, 1, 16)
    assert tc.decompress(batch, "b4x16_p64").shape == (3, 1, 16)
    assert tc.decompress(list(fp4.tolist()), "b4x16_p64").tolist() == [8] * 16


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, multicast",
    [
        ("64x128b", None),
        ("32x128b", None),
        ("32x128b", "warpx2::02_13"),
        ("64x128b", "warpx4"),
        ("128x256b", "warpx4"),
        ("4x256b", "warpx2::01_23"),
        ("128x128b", "warpx2::02_13"),
        ("64x128b", "warpx8"),
        ("16x256b", None),
        ("32x32b", None),
    ],
)
def test_illegal_forms_refused(shape, multicast):
    with pytest.raises(OperandError) as info:
        tc.cp_destinations(shape, multicast)
    assert info.value.section == "9.7.16.9.2"


def test_source_address_refusals():
    desc = td.SmemDescriptor(start_address=0, leading_byte_offset=16, stride_byte_offset=128)
    with pytest.raises(OperandError, match="not determined") as info:
        tc.cp_source_addresses(desc, "4x256b")
    assert info.value.section == "9.7.16.9.2"
    with pytest.raises(OperandError):
        tc.cp_source_addresses(td.SmemDescriptor(start_address=0, leading_byte_offset=16, stride_byte_offset=1024, swizzle="128B_base32B"), "128x256b")
    with pytest.raises(OperandError):
        tc.cp_source_addresses(
            td.SmemDescriptor(start_address=0, leading_byte_offset=16, stride_byte_offset=1024, swizzle="128B", leading_mode="absolute"), "128x128b"
        )
    with pytest.raises(OperandError):
        tc.cp_source_addresses(desc, "256x128b")


def test_decompress_refusals():
    unit = np.zeros(16, dtype=np.uint8)
    for bad in ("b8x16", "b4x16", "e2m1"):
        with pytest.raises(OperandError):
            tc.decompress(unit, bad)
    with pytest.raises(OperandError):
        tc.decompress(np.zeros(12, dtype=np.uint8), "b6x16_p32")
    with pytest.raises(OperandError):
        tc.decompress(np.full(16, 256), "b4x16_p64")
    with pytest.raises(OperandError):
        tc.decompress(np.full(16, -1), "b4x16_p64")
    with pytest.raises(OperandError):
        tc.decompress(np.zeros(16, dtype=np.float32), "b4x16_p64")
