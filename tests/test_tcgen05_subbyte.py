"""The 4-bit and 6-bit elements of ``tcgen05.mma`` ``.kind::f8f6f4`` / ``.kind::mxf8f6f4``
(semantics/tcgen05_descriptors.py): the padded shared memory formats (§9.7.16.10.4.4,
``element_address(..., padded=True)``, :func:`gather`) and the 8-bit containers of A in Tensor
Memory (§9.7.16.10.4.3, :func:`tmem_a_container`), checked three ways:

* transcribed facts of the sources, each with its file (and line) and commit: the PTX manual (the
  seeds ``000_...`` English §9.7.16, ``001_...`` the whole manual in Chinese), NVIDIA CUTLASS at
  commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, MMA-Sim 2.1.1;
* round trips: a matrix written into a shared memory image by an independent formula (the units
  built as Python integers, the canonical layouts written out by hand), read back through
  ``element_address`` + ``gather``; and the agreement with ``tcgen05_copy.decompress``'s reading of
  the same units;
* refusals: MN-major sub-byte operands, the padded formats' sizes, the swizzle rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptxspec.semantics import tcgen05_copy as cp
from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor
from ptxspec.spec.errors import OperandError

CUTLASS = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"

# ---------------------------------------------------------------------------------------------
# Transcribed facts
# ---------------------------------------------------------------------------------------------

#: CUTLASS include/cute/arch/copy_sm90_desc.hpp (lines 224-233 at the commit),
#: ``to_CUtensorMapDataType``: the TMA data type of each sub-byte element type. The MMA operand
#: types of f8f6f4 (``*_unpacksmem_t``) are the 16-byte-aligned (padded) formats; the packed
#: ``float_e2m1_t`` of mxf4 is the 8-byte one.
CUTLASS_TMA_TYPES = {
    "float_e2m1_t": "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B",
    "float_e2m3_t": "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B",
    "float_e3m2_t": "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B",
    "detail::float_e2m1_unpacksmem_t": "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B",
    "detail::float_e2m3_unpacksmem_t": "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B",
    "detail::float_e3m2_unpacksmem_t": "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B",
}
#: CUTLASS include/cutlass/float_subbyte.h: ``sizeof_bits<detail::float_e2m1_unpacksmem_t>::value =
#: 4``, ``..._e2m3_unpacksmem_t`` 6, ``..._e3m2_unpacksmem_t`` 6: the element keeps its width; the
#: padding is the unit's, not the element's.
CUTLASS_UNPACKSMEM_BITS = {"e2m1": 4, "e2m3": 6, "e3m2": 6}
#: CUTLASS include/cutlass/gemm/collective/builders/sm100_blockscaled_umma_builder.inl line 176:
#: ``using ElementAMma_SmemAllocType = cute::conditional_t<UseMxf8f6f4, uint8_t, ElementAMma>;`` --
#: the shared memory layout atoms of mxf8f6f4 operands are ``uint8_t``'s: one byte per element slot.
CUTLASS_SMEM_ALLOC_BITS = 8
#: CUTLASS examples/python/CuTeDSL/experimental/primitives/tcgen05/cp_narrow_a_to_tmem_mma.py:
#: ``_K_TILE = 128``, ``_FP4_A_ROW_BYTES = _K_TILE // 2``, ``_FP6_A_ROW_BYTES = _K_TILE * 3 // 4``
#: (packed, in global memory), ``_A_PADDED_ROW_BYTES = _K_TILE`` (in shared memory, after the
#: ``B4X16_P64`` / ``B6X16_P32`` TMA), ``_A_UTCCP_KBLOCK_BYTES = 32`` (the descriptor advances 32
#: bytes per MMA K-block of 32 elements), ``_FP4_E2M1_ONE = 0x2``, ``_FP6_E3M2_ONE = 0x0C``.
CP_NARROW = {"K_TILE": 128, "FP4_ROW": 64, "FP6_ROW": 96, "PADDED_ROW": 128, "KBLOCK_BYTES": 32, "FP4_ONE": 0x2, "FP6_ONE": 0x0C}
#: The same file's holders: "FP4 UTCCP holder byte: ``00xxxx00`` (payload bits [5:2])", "FP6 UTCCP
#: holder byte: ``0xxxxxx0`` (payload bits [6:1])" -- the container ``tcgen05.cp`` writes.
CP_NARROW_HOLDER_LOW_BIT = {4: 2, 6: 1}
#: CUTLASS include/cute/atom/mma_traits_sm120.hpp: "ld.matrix b4x16_p64 places FP4 data at the
#: first four bits in each eight-bit container, whereas MMA F8F6F4 expects the four-bit data to be in
#: the middle of the eight-bit container ... 0b0000ABCD --> 0b00ABCD00 // NOTE: Same transformation
#: is NOT needed for FP6 and FP8." -- the (warp-level) MMA's container: e2m1 bits 5-2, fp6 bits 5-0.
SM120_MMA_LOW_BIT = {"e2m1": 2, "e3m2": 0, "e2m3": 0}
#: MMA-Sim 2.1.1 mmasim/arithmetic/helper.py ``decode_uint8_to_fp6_fp4``: ``x = (x.int() & 0x3F) >>
#: (5 - E - M)  # fp6 sits in bits 5:0, fp4 in bits 5:2``, with ``fp6_fp4_bits = {"e3m2": (3, 2),
#: "e2m3": (2, 3), "e2m1": (2, 1)}``.
MMASIM_BITS = {"e3m2": (3, 2), "e2m3": (2, 3), "e2m1": (2, 1)}


def mmasim_decode(container: int, t: str) -> int:
    e, m = MMASIM_BITS[t]
    return (container & 0x3F) >> (5 - e - m)


#: The PTX manual, seed 001 (Chinese, PTX ISA 8.7): §5.5.1.1.1 lines 2094-2112 (.b4x16_p64:
#: "sixteen consecutive 4-bit data" + "64 bits of padding"; .b6x16_p32: "sixteen 6-bit data" + "32
#: bits of padding"); §9.7.9.25.5.1 lines 14809-14819 (Box-Size[0] and Tensor-Size[0]: 96B for
#: b6x16_p32, 64B for b4x16_p64 -- 128 elements); seed 000 §9.7.16.9.1 ("16 elements of 4-bits each
#: followed by 8 bytes of padding", "16 elements of 6-bits each followed by 4 bytes of padding").
MANUAL_UNIT = {4: (16, 64), 6: (16, 32)}  # element bits -> (elements, padding bits)
MANUAL_BOX_BYTES = {4: 64, 6: 96}


def _seed(prefix: str) -> str:
    import pathlib

    for root in (pathlib.Path("/work/shared/seeds"), pathlib.Path(__file__).resolve().parents[1] / "shared" / "seeds"):
        found = sorted(root.glob(f"{prefix}_*.txt")) if root.is_dir() else []
        if found:
            return found[0].read_text(encoding="utf-8")
    pytest.skip("the PTX manual seeds are not here")


def test_manual_sentences():
    """The sentences the padded formats and containers rest on, as the seeds have them."""
    english = _seed("000")
    assert "The 4-bit and 6-bit floating point elements in shared memory must be contiguously packed along with padding as follows." in english
    assert "The 8-bit containers must be contiguously packed in a 32-bit Tensor Memory word." in english
    assert "A contiguous set of 16 elements of 6-bits each followed by 4 bytes of padding" in english
    assert "A contiguous set of 16 elements of 4-bits each followed by 8 bytes of padding" in english
    assert "pack two 4-bit elements in a 8-bit container, with no padding" in english
    chinese = _seed("001")
    # §9.7.14.5.14 (mma .kind::f8f6f4): e2m1 in the central 4 bits, e3m2/e2m3 in the lower 6 bits.
    assert ".e2m1 类型的矩阵元素位于 8 比特容器的中心 4 比特中,并在容器的上 2 比特和下 2 比特中填充" in chinese
    assert "当矩阵元素为 .e3m2.e2m3 类型时,矩阵元素位于 8 比特容器的下 6 比特中,并在容器的上 2 比特中填充" in chinese
    # §5.5.1.1.1 .b6p2x16: 6 bits of data at the LSB, 2 bits of padding at the MSB.
    assert "每个元素在 LSB 处包含 6 位数据,在 MSB 处包含 2 位填充" in chinese
    # §9.7.9.25.5.1: Box-Size[0] 96B (b6x16_p32) / 64B (b4x16_p64).
    assert "对于 b6x16_p32.b6p2x16,为 96B" in chinese and "对于 b4x16_p64,为 64B" in chinese


def test_padded_formats_are_the_sources():
    """PADDED_FORMATS: 16 elements of w bits + padding fill exactly 16 bytes (the manual's units),
    the same formats as tcgen05.cp's sources; 128 elements (one TMA box) are 64 / 96 packed bytes
    and 128 bytes in shared memory (CUTLASS's cp_narrow rows); the unit is 16 one-byte slots
    (CUTLASS's uint8_t layout atoms and "ALIGN16B" TMA types)."""
    assert td.CUTLASS_COMMIT == cp.CUTLASS_COMMIT == CUTLASS
    for bits, (name, nbytes) in td.PADDED_FORMATS.items():
        elements, padding = MANUAL_UNIT[bits]
        assert elements == td.UNIT_ELEMENTS
        assert elements * bits + padding == 128 and nbytes * 8 == elements * bits
        assert cp.SOURCE_FORMATS[name] == (bits, nbytes)
        assert MANUAL_BOX_BYTES[bits] == 128 * bits // 8
        assert 16 // td.UNIT_ELEMENTS * 8 == CUTLASS_SMEM_ALLOC_BITS
    assert CP_NARROW["FP4_ROW"] == MANUAL_BOX_BYTES[4] and CP_NARROW["FP6_ROW"] == MANUAL_BOX_BYTES[6]
    assert CP_NARROW["PADDED_ROW"] == CP_NARROW["K_TILE"] * 16 // td.UNIT_ELEMENTS
    # "ALIGN16B" for every f8f6f4 operand type; the packed mxf4 type "ALIGN8B".
    for t, bits in CUTLASS_UNPACKSMEM_BITS.items():
        assert CUTLASS_TMA_TYPES[f"detail::float_{t}_unpacksmem_t"] == f"CU_TENSOR_MAP_DATA_TYPE_16U{bits}_ALIGN16B"
        assert td.TYPE_BITS[t] == bits
    assert CUTLASS_TMA_TYPES["float_e2m1_t"].endswith("ALIGN8B")


# ---------------------------------------------------------------------------------------------
# Round trips through an independent writer
# ---------------------------------------------------------------------------------------------

W = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
B = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def unit_address(swizzle: str, start: int, lbo: int, sbo: int, mn: int, u: int) -> int:
    """The address of 16-byte unit ``u`` (K elements 16u .. 16u+15) of row ``mn``, K-major, written
    from §9.7.16.3.3 by hand: no swizzle ``((8,m),(T,2k)):((1T,SBO),(1,LBO))`` -- 8 rows of 16 bytes,
    the next unit of K at LBO, the next 8 rows at SBO; swizzled: rows of W bytes holding W/16 units,
    the next 8 rows at SBO, then the 16-byte chunk XORed with the 128-byte row (Swizzle<B,4,3>)."""
    if swizzle == "none":
        return start + (mn % 8) * 16 + (mn // 8) * sbo + u * lbo
    address = start + (mn % 8) * W[swizzle] + (mn // 8) * sbo + u * 16
    return address ^ (((address >> 7) & ((1 << B[swizzle]) - 1)) << 4)


def write_padded(image: bytearray, codes: np.ndarray, bits: int, swizzle: str, start: int, lbo: int, sbo: int) -> None:
    """``codes`` (rows x K, K a multiple of 16) into ``image``: each unit the little-endian bytes of
    ``sum(code_j << bits*j)``, its padding left as it was."""
    nbytes = 16 * bits // 8
    for mn in range(codes.shape[0]):
        for u in range(codes.shape[1] // 16):
            packed = sum(int(c) << (bits * j) for j, c in enumerate(codes[mn, 16 * u : 16 * u + 16]))
            a = unit_address(swizzle, start, lbo, sbo, mn, u)
            image[a : a + nbytes] = packed.to_bytes(nbytes, "little")


CASES = [
    # swizzle, start, LBO, SBO, rows, K
    ("none", 0x100, 0x800, 0x100, 16, 64),
    ("none", 0x40, 0x80 * 2, 0x1000, 24, 32),
    ("32B", 0x400, 16, 0x100, 16, 32),
    ("64B", 0x800, 16, 0x200, 16, 64),
    ("128B", 0x1000, 16, 0x400, 32, 128),
]


@pytest.mark.parametrize("bits", [4, 6])
@pytest.mark.parametrize("swizzle, start, lbo, sbo, rows, k", CASES)
def test_round_trip(bits, swizzle, start, lbo, sbo, rows, k):
    """Written by :func:`write_padded`, read by element_address(padded=True) + gather: the same
    matrix, for random codes over garbage (0xA5) padding; every element's bits are distinct and
    lie in the first 8 / 12 bytes of their unit."""
    rng = np.random.default_rng(bits * 1000 + len(swizzle) + k)
    codes = rng.integers(0, 1 << bits, size=(rows, k))
    image = bytearray(b"\xa5" * (1 << 15))
    write_padded(image, codes, bits, swizzle, start, lbo, sbo)
    d = SmemDescriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle)
    mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    byte, bit = td.element_address(d, bits, mn, kk, "K", padded=True)
    img = np.frombuffer(bytes(image), dtype=np.uint8)
    np.testing.assert_array_equal(td.gather(img, byte, bit, bits), codes.astype(np.uint64))
    where = np.asarray(byte) * 8 + np.asarray(bit)
    assert np.unique(where).size == where.size
    assert ((np.asarray(byte) & 15) * 8 + np.asarray(bit) + bits <= 16 * bits).all()  # in the packed part of the unit
    # The same descriptor as an integer register.
    again, again_bit = td.element_address(d.encode(), bits, mn, kk, "K", padded=True)
    np.testing.assert_array_equal(again, byte)
    np.testing.assert_array_equal(again_bit, bit)
    # Two images at once (gather's [n, bytes] form).
    two = np.stack([img, img])
    np.testing.assert_array_equal(td.gather(two, byte, bit, bits)[1], codes.astype(np.uint64))


@pytest.mark.parametrize("bits", [4, 6])
def test_unit_is_an_8bit_unit(bits):
    """The unit of element (mn, k) sits where the 8-bit element (mn, 16*(k//16)) does: the padded
    layout is the 8-bit canonical layout of 16-element units."""
    for swizzle, start, lbo, sbo, rows, k in CASES:
        d = SmemDescriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle)
        mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
        byte, _ = td.element_address(d, bits, mn, kk, "K", padded=True)
        unit, _ = td.element_address(d, 8, mn, 16 * (kk // 16), "K")
        np.testing.assert_array_equal(np.asarray(byte) & ~15, unit)


def test_unit_offsets():
    """Element j of a unit: bits 4j (b4x16_p64) / 6j (b6x16_p32) of its packed bytes."""
    j = np.arange(16)
    byte, bit = td.padded_unit_offset(4, j)
    assert list(zip(byte.tolist(), bit.tolist()))[:3] == [(0, 0), (0, 4), (1, 0)]
    byte, bit = td.padded_unit_offset(6, j)
    assert list(zip(byte.tolist(), bit.tolist()))[:5] == [(0, 0), (0, 6), (1, 4), (2, 2), (3, 0)]
    assert (int(byte[-1]), int(bit[-1])) == (11, 2)  # the last element ends at bit 95: 12 bytes
    with pytest.raises(OperandError):
        td.padded_unit_offset(6, 16)
    with pytest.raises(OperandError):
        td.padded_unit_offset(8, 0)


@pytest.mark.parametrize("fmt", ["b4x16_p64", "b6x16_p32"])
def test_same_units_as_tcgen05_cp(fmt):
    """tcgen05_copy.decompress reads the same units (its source bits) as element_address: its
    container k, shifted back by CUTLASS's holder shift, is element k of the unit."""
    bits, _ = cp.SOURCE_FORMATS[fmt]
    rng = np.random.default_rng(7)
    units = rng.integers(0, 256, size=(8, 16), dtype=np.uint8)
    d = SmemDescriptor(start_address=0, leading_byte_offset=16 * 8, stride_byte_offset=16, swizzle="none")
    # Rows 0..7 at 16-byte pitch: unit r is row r's first unit.
    image = units.reshape(-1)
    mn, kk = np.meshgrid(np.arange(8), np.arange(16), indexing="ij")
    byte, bit = td.element_address(d, bits, mn, kk, "K", padded=True)
    ours = td.gather(image, byte, bit, bits)
    theirs = cp.decompress(units, fmt).astype(np.uint64) >> np.uint64(cp.CONTAINER_SHIFT[fmt])
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("bits, one", [(4, CP_NARROW["FP4_ONE"]), (6, CP_NARROW["FP6_ONE"])])
def test_cutlass_cp_narrow_tile(bits, one):
    """CUTLASS's cp_narrow tile: a 128 x 128 matrix of 1.0 packed in global memory (``_make_packed_a``
    / ``_pack_four_fp6_codes``), padded by the TMA (each 8 / 12 packed bytes + 8 / 4 bytes of
    padding: 128 bytes a row), read as the K-major MMA operand in 8 core-matrix rows per SBO: every
    element is 1.0's code; the 32-element K-blocks are 32 bytes apart (``_A_UTCCP_KBLOCK_BYTES``)."""
    k_tile = CP_NARROW["K_TILE"]
    if bits == 4:
        row = bytes([one | one << 4]) * (k_tile // 2)
    else:
        packed = one | one << 6 | one << 12 | one << 18
        row = bytes((packed >> (8 * i)) & 0xFF for i in range(3)) * (k_tile // 4)
    assert len(row) == MANUAL_BOX_BYTES[bits]
    nbytes = td.PADDED_FORMATS[bits][1]
    padded_row = b"".join(row[i : i + nbytes] + b"\xff" * (16 - nbytes) for i in range(0, len(row), nbytes))
    assert len(padded_row) == CP_NARROW["PADDED_ROW"]
    # Each row's padded units placed as the K-major, no-swizzle canonical layout puts them.
    m = 16
    image = bytearray(b"\xee" * (m * 128 + 4096))
    lbo, sbo = 128, 1024
    for mn in range(m):
        for u in range(k_tile // 16):
            a = unit_address("none", 0, lbo, sbo, mn, u)
            image[a : a + 16] = padded_row[16 * u : 16 * u + 16]
    d = SmemDescriptor(start_address=0, leading_byte_offset=lbo, stride_byte_offset=sbo)
    mn, kk = np.meshgrid(np.arange(m), np.arange(k_tile), indexing="ij")
    byte, bit = td.element_address(d, bits, mn, kk, "K", padded=True)
    assert (td.gather(np.frombuffer(bytes(image), np.uint8), byte, bit, bits) == one).all()
    # One MMA K-block (K = 32) is two units: 32 bytes of a 128B-swizzled row.
    d128 = SmemDescriptor(start_address=0, stride_byte_offset=1024, swizzle="128B")
    first, _ = td.element_address(d128, bits, 0, 0, "K", padded=True)
    second, _ = td.element_address(d128, bits, 0, 32, "K", padded=True)
    assert int(second) - int(first) == CP_NARROW["KBLOCK_BYTES"]


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def test_refusals():
    d = SmemDescriptor(0x400, 16, 0x400, swizzle="128B")
    # MN-major sub-byte operands: Table 52 names 4-/6-bit types only in the K-major rows.
    for bits, padded in ((4, True), (6, True), (4, False)):
        with pytest.raises(OperandError, match="Table 52") as info:
            td.element_address(d, bits, 0, 0, "MN", padded=padded)
        assert info.value.section == "9.7.16.10.3"
    # 6-bit elements exist in shared memory only padded.
    with pytest.raises(OperandError, match="padded=True") as info:
        td.element_address(d, 6, 0, 0, "K")
    assert info.value.section == "9.7.16.10.4"
    # padded is for the 4-/6-bit formats only.
    for bits in (8, 16, 32, 2):
        with pytest.raises(OperandError, match="no padded"):
            td.element_address(d, bits, 0, 0, "K", padded=True)
    # 128B_base32B: K-major refused (Table 53), and sub-byte MN-major refused (Table 52).
    base32 = SmemDescriptor(0, 512, 1024, swizzle="128B_base32B")
    with pytest.raises(OperandError, match="Major-K"):
        td.element_address(base32, 6, 0, 0, "K", padded=True)
    with pytest.raises(OperandError, match="All except"):
        td.element_address(base32, 4, 0, 0, "MN", padded=True)
    # The absolute leading dimension mode, as for every element size.
    with pytest.raises(OperandError, match="absolute"):
        td.element_address(SmemDescriptor(0, leading_mode="absolute", swizzle="128B"), 6, 0, 0, "K", padded=True)


def test_every_k_major_swizzle_is_accepted():
    """Table 52: "4-bit, 6-bit, 8-bit, 16-bit, 32-bit | Row | A / Column | B | All swizzling modes"
    (the K-major ones: 128B_base32B has no K-major layout, Table 53)."""
    for swizzle in ("none", "32B", "64B", "128B"):
        for bits in (4, 6):
            td.element_address(SmemDescriptor(0, 16, 256, swizzle=swizzle), bits, 7, 31, "K", padded=True)


# ---------------------------------------------------------------------------------------------
# A in Tensor Memory: the 8-bit containers
# ---------------------------------------------------------------------------------------------


def test_tmem_containers():
    """(container, low bit, payload) per kind and type: the 4-/6-bit types of f8f6f4 / mxf8f6f4 in
    8-bit containers (§9.7.16.10.4.3), mxf4's e2m1 packed two a byte (§9.7.16.10.4.5), the rest
    their own width."""
    for kind in ("f8f6f4", "mxf8f6f4"):
        assert td.tmem_a_container(kind, "e2m1") == (8, 2, 4)
        assert td.tmem_a_container(kind, "e3m2") == (8, 0, 6)
        assert td.tmem_a_container(kind, "e2m3") == (8, 0, 6)
        assert td.tmem_a_container(kind, "e4m3") == (8, 0, 8)
    for kind in ("mxf4", "mxf4nvf4"):
        assert td.tmem_a_container(kind, "e2m1") == (4, 0, 4)
    assert td.tmem_a_container("f16", "bf16") == (16, 0, 16)
    assert td.tmem_a_container("tf32", "tf32") == (32, 0, 32)
    with pytest.raises(OperandError):
        td.tmem_a_container("mxf4", "e3m2")
    with pytest.raises(OperandError):
        td.tmem_a_container("f8f6f4", "f16")
    with pytest.raises(OperandError):
        td.tmem_a_container("kind::f8f6f4", "e2m1")


@pytest.mark.parametrize("t", ["e2m1", "e3m2", "e2m3"])
def test_tmem_payload_is_the_mma_sources(t):
    """Every container byte: our payload == MMA-Sim's (``decode_uint8_to_fp6_fp4``) and the
    manual's / CUTLASS sm_120's MMA container (e2m1 bits 5-2, fp6 bits 5-0); the padding bits are
    not read; container_value inverts payload."""
    containers = np.arange(256, dtype=np.uint64)
    ours = td.tmem_a_payload(containers, "mxf8f6f4", t)
    assert ours.tolist() == [mmasim_decode(c, t) for c in range(256)]
    bits = td.TYPE_BITS[t]
    assert ours.tolist() == [(c >> SM120_MMA_LOW_BIT[t]) & ((1 << bits) - 1) for c in range(256)]
    codes = np.arange(1 << bits, dtype=np.uint64)
    values = td.tmem_a_container_value(codes, "f8f6f4", t)
    np.testing.assert_array_equal(td.tmem_a_payload(values, "f8f6f4", t), codes)
    assert int(values.max()) < 0x40  # bits 7-6 padding, zero
    with pytest.raises(OperandError):
        td.tmem_a_container_value(1 << bits, "f8f6f4", t)


def test_tmem_against_tcgen05_cp():
    """The known disagreement, pinned: tcgen05.cp's holder (CUTLASS cp_narrow, semantics/tcgen05_copy)
    is the MMA's container for .b4x16_p64 (e2m1, bits 5-2) but one bit higher for .b6x16_p32 (bits
    6-1 against the MMA's 5-0). Composed, our cp + mma read E3M2 1.0 (0x0C) as 0x18 (8.0); CUTLASS's
    example, whose reference is K = 128 for all-ones, would then fail -- one of the two readings is
    wrong, and only an sm_100 run decides (see TMEM_PAYLOAD_LOW_BIT)."""
    assert cp.CONTAINER_SHIFT == {"b4x16_p64": CP_NARROW_HOLDER_LOW_BIT[4], "b6x16_p32": CP_NARROW_HOLDER_LOW_BIT[6]}
    assert td.TMEM_PAYLOAD_LOW_BIT["e2m1"] == cp.CONTAINER_SHIFT["b4x16_p64"]
    assert td.TMEM_PAYLOAD_LOW_BIT["e3m2"] == td.TMEM_PAYLOAD_LOW_BIT["e2m3"] == cp.CONTAINER_SHIFT["b6x16_p32"] - 1
    unit = np.zeros(16, dtype=np.uint8)
    packed = sum(CP_NARROW["FP6_ONE"] << (6 * j) for j in range(16))
    unit[:12] = np.frombuffer(packed.to_bytes(12, "little"), dtype=np.uint8)
    holders = cp.decompress(unit, "b6x16_p32")
    assert set(td.tmem_a_payload(holders, "mxf8f6f4", "e3m2").tolist()) == {0x18}
