"""tcgen05's "128-Byte with 32B atomic swizzling" ("128B_base32B", swizzle code 1 of the sm_100
shared memory descriptor, §9.7.16.4.1 Table 40) in the one layout mechanism
(semantics/wgmma_layout.py ``canonical_offset`` / ``swizzle_address``, reached through
semantics/tcgen05_descriptors.py ``element_address``).

The manual gives the mode's swizzle atom only (Table 53, §9.7.16.10.6: "128B Swizzling with 32B
atomicity | M/N | 8x4" in 128-bit elements, K: "–") and which operands take it (Table 52,
§9.7.16.10.3: 32-bit MN-major "Only 128B swizzling with 32B atomicity", 8-/16-bit MN-major "All
except 128B swizzling with 32B atomicity"); neither its swizzle function nor its canonical layout.
The independent oracle is NVIDIA CUTLASS at commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4,
transcribed below as data (no code of it): the shared-memory layout atoms
(``include/cute/atom/mma_traits_sm90_gmma.hpp`` ``GMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom_Bits``,
re-exported as ``UMMA::`` atoms by ``include/cute/atom/mma_traits_sm100.hpp``, and there
``UMMA::Layout_MN_SW128_32B_Atom_Bits``), the swizzle of each atom mapped to the descriptor's
``LayoutType`` (``include/cute/arch/mma_sm100_desc.hpp`` ``UMMA::layout_type``), and how
``make_umma_desc`` reads LBO/SBO off a tensor tiled from the atoms. A small CuTe evaluator here
(``Swizzle<B,M,S>::apply`` of ``include/cute/swizzle.hpp`` on byte addresses, as
``include/cute/pointer_swizzle.hpp``'s ``swizzle_ptr`` applies it; ``upcast`` of a bit atom to
elements; colexicographic coordinates) gives each element's address, which ``element_address``
must reproduce over generated (mn, k, LBO, SBO, start).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.tcgen05_descriptors import InstrDescriptor, SmemDescriptor
from ptxspec.spec.errors import OperandError

CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"

#: (major, ptxspec swizzle name) -> (Swizzle<B,M,S>, atom shape, atom stride), the atoms in bits:
#: ``using Layout_MN_SW128_32B_Atom_Bits = ComposedLayout<Swizzle<2,5,2>, smem_ptr_flag,
#: Layout<Shape< _1024,_4>,Stride<_1, _1024>>>;`` (mma_traits_sm100.hpp) and the GMMA ones
#: (mma_traits_sm90_gmma.hpp), e.g. ``Layout_MN_SW128_Atom_Bits = ComposedLayout<Swizzle<3,4,3>,
#: smem_ptr_flag, Layout<Shape<_1024,_8>,Stride<_1,_1024>>>``.
CUTLASS_ATOMS_BITS = {
    ("MN", "none"): ((0, 4, 3), (128, 8), (1, 128)),  # Layout_MN_INTER_Atom_Bits
    ("MN", "32B"): ((1, 4, 3), (256, 8), (1, 256)),  # Layout_MN_SW32_Atom_Bits
    ("MN", "64B"): ((2, 4, 3), (512, 8), (1, 512)),  # Layout_MN_SW64_Atom_Bits
    ("MN", "128B"): ((3, 4, 3), (1024, 8), (1, 1024)),  # Layout_MN_SW128_Atom_Bits
    ("MN", "128B_base32B"): ((2, 5, 2), (1024, 4), (1, 1024)),  # Layout_MN_SW128_32B_Atom_Bits
    ("K", "none"): ((0, 4, 3), (8, 128), (128, 1)),  # Layout_K_INTER_Atom_Bits
    ("K", "32B"): ((1, 4, 3), (8, 256), (256, 1)),  # Layout_K_SW32_Atom_Bits
    ("K", "64B"): ((2, 4, 3), (8, 512), (512, 1)),  # Layout_K_SW64_Atom_Bits
    ("K", "128B"): ((3, 4, 3), (8, 1024), (1024, 1)),  # Layout_K_SW128_Atom_Bits
}
#: ``UMMA::layout_type``: M == 4 (S == 3): B = 0 SWIZZLE_NONE, 1 SWIZZLE_32B, 2 SWIZZLE_64B,
#: 3 SWIZZLE_128B; M == 5 (B == 2, S == 2): SWIZZLE_128B_BASE32B; and the ``LayoutType`` codes
#: ``SWIZZLE_NONE = 0, SWIZZLE_128B_BASE32B = 1, SWIZZLE_128B = 2, SWIZZLE_64B = 4, SWIZZLE_32B = 6``.
CUTLASS_LAYOUT_TYPE = {(0, 4, 3): ("SWIZZLE_NONE", 0), (1, 4, 3): ("SWIZZLE_32B", 6), (2, 4, 3): ("SWIZZLE_64B", 4), (3, 4, 3): ("SWIZZLE_128B", 2)}
CUTLASS_LAYOUT_TYPE[(2, 5, 2)] = ("SWIZZLE_128B_BASE32B", 1)
#: ``make_umma_desc``, which of the two outer strides of the tensor divided into atoms
#: (``logical_divide`` by ``Tile<SwizzleAtomMNSize, SwizzleAtomKSize>`` (MN) or ``Tile<_8, _2>``
#: (K), in 128-bit units) goes to which field: Major::MN ``desc.stride_byte_offset_ = (SWIZZLE_NONE)
#: ? stride_01 : stride_11; desc.leading_byte_offset_ = (SWIZZLE_NONE) ? stride_11 : stride_01``;
#: Major::K ``desc.stride_byte_offset_ = stride_01; desc.leading_byte_offset_ = stride_10``
#: (asserted 1 -- "assumed 1" -- for the swizzled modes: K stays within one atom row), and
#: ``static_assert(LAYOUT_TYPE != SWIZZLE_128B_BASE32B, "SWIZZLE_128B_BASE32B is invalid for Major-K")``.
#: Here: (outer stride of the MN mode, outer stride of the K mode) as "lbo" / "sbo" / None.
CUTLASS_DESC_STRIDES = {
    ("MN", "none"): ("sbo", "lbo"),
    ("MN", "swizzled"): ("lbo", "sbo"),
    ("K", "none"): ("sbo", "lbo"),
    ("K", "swizzled"): ("sbo", None),
}
#: ``SwizzleAtomMNSize`` (128-bit units; 8 for both 128-byte modes) and ``SwizzleAtomKSize`` (MN:
#: 4 for SWIZZLE_128B_BASE32B, 8 otherwise) of make_umma_desc, with its assertion that the K stride
#: within an MN-major atom is SwizzleAtomMNSize (``expected_stride_10 = SwizzleAtomMNSize``).
CUTLASS_ATOM_MN_UNITS = {"none": 1, "32B": 2, "64B": 4, "128B": 8, "128B_base32B": 8}
CUTLASS_ATOM_K_MN_MAJOR = {"none": 8, "32B": 8, "64B": 8, "128B": 8, "128B_base32B": 4}


# ---------------------------------------------------------------------------------------------
# A small CuTe evaluator (of CUTLASS's definitions, not of ptxspec's)
# ---------------------------------------------------------------------------------------------


def cute_swizzle(b: int, m: int, s: int, offset):
    """``Swizzle<BBits,MBase,SShift>::apply``: ``offset ^ shiftr(offset & yyy_msk, msk_sft)`` with
    ``bit_msk = (1 << B) - 1``, ``yyy_msk = bit_msk << (M + max(0, S))`` (S > 0 here)."""
    yyy = ((1 << b) - 1) << (m + s)
    return offset ^ ((offset & yyy) >> s)


def upcast_atom(shape, stride, bits: int):
    """``upcast<bits>`` of a bit atom: the unit-stride mode's extent divided by ``bits``, the other
    mode's stride divided by ``bits`` (the atoms are compact, one mode of stride 1)."""
    return tuple(e // bits if d == 1 else e for e, d in zip(shape, stride)), tuple(1 if d == 1 else d // bits for d in stride)


def cute_offset(modes, mn, k):
    """Element offset of ``(mn, k)`` in the rank-2 layout ``modes = (((e00, e01), (d00, d01)), ((e10,
    e11), (d10, d11)))``, each mode's 1-D index split colexicographically over its shape."""
    offset = 0
    for (shape, stride), index in zip(modes, (mn, k)):
        for e, d in zip(shape, stride):
            offset = offset + (index % e) * d
            index = index // e
    return offset


def cutlass_address(major: str, swizzle: str, bits: int, mn, k, lbo: int, sbo: int, start: int):
    """The byte address of element ``(mn, k)``: the tensor tiled from CUTLASS's atom with the outer
    strides make_umma_desc reads as LBO / SBO, at ``start``, through the atom's swizzle on the byte
    address (make_umma_desc's base offset is always 0)."""
    swz, shape, stride = CUTLASS_ATOMS_BITS[(major, swizzle)]
    (a0, a1), (d0, d1) = upcast_atom(shape, stride, bits)
    if major == "MN":
        assert a0 * bits == 128 * CUTLASS_ATOM_MN_UNITS[swizzle] and a1 == CUTLASS_ATOM_K_MN_MAJOR[swizzle]
        if swizzle != "none":
            assert d1 * bits == 128 * CUTLASS_ATOM_MN_UNITS[swizzle]  # expected_stride_10 = SwizzleAtomMNSize
    outer = CUTLASS_DESC_STRIDES[(major, "none" if swizzle == "none" else "swizzled")]
    field = {"lbo": lbo, "sbo": sbo, None: 0}
    e0, e1 = (field[o] * 8 // bits for o in outer)
    modes = (((a0, 1 << 20), (d0, e0)), ((a1, 1 << 20), (d1, e1)))
    return cute_swizzle(*swz, start + cute_offset(modes, mn, k) * bits // 8)


# ---------------------------------------------------------------------------------------------
# CUTLASS against ptxspec
# ---------------------------------------------------------------------------------------------


def test_layout_types_are_the_descriptor_codes():
    """Each atom's Swizzle<B,M,S> is the LayoutType whose code the descriptor carries for our name
    (Table 40: "1. 128-Byte with 32B atomic swizzling", ...)."""
    for (_major, name), (swz, _shape, _stride) in CUTLASS_ATOMS_BITS.items():
        assert td.SWIZZLE_CODES[name] == CUTLASS_LAYOUT_TYPE[swz][1]
        if name != "none":
            assert wl.SWIZZLES[name] == swz


def _cases():
    for (major, swizzle), _ in CUTLASS_ATOMS_BITS.items():
        for bits in (8, 16, 32):
            if swizzle == "128B_base32B" and bits != 32:
                continue  # Table 52: refused (test_base32b_refusals)
            yield major, swizzle, bits


@pytest.mark.parametrize("major, swizzle, bits", list(_cases()))
def test_element_address_is_cutlass(major, swizzle, bits):
    """element_address == CUTLASS's atom tiled with make_umma_desc's LBO / SBO, over random LBO,
    SBO, start (16-byte multiples, base offset 0 as make_umma_desc sets it) and two or three atoms
    along each dimension (K-major swizzled: K within one atom row, LBO unused)."""
    rng = np.random.default_rng(zlib.crc32(f"{major} {swizzle} {bits}".encode()))
    swz, shape, stride = CUTLASS_ATOMS_BITS[(major, swizzle)]
    (a0, a1), _ = upcast_atom(shape, stride, bits)
    k_extent = a1 if (major == "K" and swizzle != "none") else 3 * a1
    mn, k = np.meshgrid(np.arange(3 * a0), np.arange(k_extent), indexing="ij")
    for _ in range(12):
        lbo, sbo = (int(x) * 16 for x in rng.integers(1, 1 << 14, size=2))
        start = int(rng.integers(0, 1 << 14)) * 16
        d = SmemDescriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle)
        ours, bit = td.element_address(d, bits, mn, k, major)
        np.testing.assert_array_equal(ours, cutlass_address(major, swizzle, bits, mn, k, lbo, sbo, start), err_msg=f"lbo={lbo} sbo={sbo} start={start}")
        assert not np.any(bit)


def test_base32b_packed_tiles_are_cutlass():
    """Tiles as ``tile_to_shape(Layout_MN_SW128_32B_Atom<tf32>, Shape<MN, K>)`` packs them
    (atoms column-major: along MN first, LBO = 512; SBO = 512 * MN atoms), and the other order,
    at 512-byte-aligned starts: a bijection onto the tile's bytes that CUTLASS's addresses match."""
    for n_mn, n_k in ((1, 1), (4, 2), (2, 8)):
        mn, k = np.meshgrid(np.arange(32 * n_mn), np.arange(4 * n_k), indexing="ij")
        for lbo, sbo in ((512, 512 * n_mn), (512 * n_k, 512)):
            for start in (0, 512 * 7, 1 << 16):
                d = SmemDescriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle="128B_base32B")
                ours, _ = td.element_address(d, 32, mn, k, "MN")
                np.testing.assert_array_equal(ours, cutlass_address("MN", "128B_base32B", 32, mn, k, lbo, sbo, start))
                assert sorted(ours.ravel().tolist()) == list(range(start, start + 512 * n_mn * n_k, 4))


# ---------------------------------------------------------------------------------------------
# The manual's side: Table 53's atom, Table 52's refusals, Table 41's base offset
# ---------------------------------------------------------------------------------------------


def test_base32b_atom_is_table_53():
    """Table 53 "128B Swizzling with 32B atomicity | M/N | 8x4" (128-bit elements; "for smaller
    element sizes ... multiplied along the leading dimension by 128 / sizeof_bits": 32 x 4 tf32):
    at an aligned start each of the 4 K rows is one 128-byte line, holding its 32 elements in
    32-byte units of 8 consecutive MN elements (the "32B atomicity"), the unit ``c`` of row ``r``
    at ``c ^ r``; the atom repeats every 512 bytes."""
    d = SmemDescriptor(start_address=0, leading_byte_offset=512, stride_byte_offset=1024, swizzle="128B_base32B")
    mn, k = np.meshgrid(np.arange(32), np.arange(4), indexing="ij")
    byte, _ = td.element_address(d, 32, mn, k, "MN")
    for r in range(4):
        np.testing.assert_array_equal(byte[:, r] // 128, r)
        for c in range(4):
            unit = byte[8 * c : 8 * c + 8, r]
            np.testing.assert_array_equal(unit, 128 * r + 32 * (c ^ r) + 4 * np.arange(8))


def test_swizzle_functions():
    """Swizzle<2,5,2>: address bits 7-8 XORed into bits 5-6; the three wgmma modes unchanged
    (Swizzle<B,4,3>: bits 7.. into bits 4.., the row counted from the base offset)."""
    a = np.arange(1 << 13) * 4
    np.testing.assert_array_equal(wl.swizzle_address(a, "128B_base32B"), a ^ (((a >> 7) & 3) << 5))
    np.testing.assert_array_equal(wl.swizzle_address(a, "128B_base32B"), cute_swizzle(2, 5, 2, a))
    for name, mask in (("128B", 7), ("64B", 3), ("32B", 1)):
        for base in range(8):
            np.testing.assert_array_equal(wl.swizzle_address(a, name, base), a ^ ((((a >> 7) - base) & mask) << 4))
    for base in range(4):  # only the base offset mod 4 counts: 512- and 1024-byte boundaries agree
        np.testing.assert_array_equal(wl.swizzle_address(a, "128B_base32B", base), wl.swizzle_address(a, "128B_base32B", base + 4))


def test_base32b_base_offset():
    """Table 41 has no row for the mode; we take its 512-byte repetition as the pattern
    (PATTERN_BYTES): base offset 0 on a 512-byte boundary, "(pattern start addr >> 0x7) & 0x7"
    otherwise; described so, a pattern off its boundary is the aligned one moved."""
    assert wl.PATTERN_BYTES["128B_base32B"] == 512
    assert td.base_offset_for(512 * 3, "128B_base32B") == 0 and td.base_offset_for(0x480, "128B_base32B") == 1
    mn, k = np.meshgrid(np.arange(64), np.arange(8), indexing="ij")
    aligned, _ = td.element_address(SmemDescriptor(0, 512, 1024, swizzle="128B_base32B"), 32, mn, k, "MN")
    for start in (128, 384, 896, 1024 + 640):
        d = SmemDescriptor(start, 512, 1024, base_offset=td.base_offset_for(start, "128B_base32B"), swizzle="128B_base32B")
        moved, _ = td.element_address(d, 32, mn, k, "MN")
        np.testing.assert_array_equal(moved - start, aligned)


def test_base32b_refusals():
    """K-major: Table 53 "–", CUTLASS "SWIZZLE_128B_BASE32B is invalid for Major-K"; 4/8/16-bit
    elements: Table 52 ("All except 128B swizzling with 32B atomicity"); wgmma's descriptor has no
    code for the mode, so wgmma cannot reach it."""
    d = SmemDescriptor(0, 512, 1024, swizzle="128B_base32B")
    with pytest.raises(OperandError, match="Major-K") as info:
        td.element_address(d, 32, 0, 0, "K")
    assert info.value.section == "9.7.16.10.6"
    with pytest.raises(OperandError, match="Table 53"):
        wl.canonical_offset("K", "128B_base32B", 32, 0, 0, 16, 1024)
    for bits in (4, 8, 16):
        with pytest.raises(OperandError, match="All except") as info:
            td.element_address(d, bits, 0, 0, "MN")
        assert info.value.section == "9.7.16.10.3"
    with pytest.raises(OperandError):
        wl.MatrixDescriptor(0, swizzle="128B_base32B")
    with pytest.raises(OperandError):
        td.element_address(d, 32, 0, 0, "X")


def test_base32b_agrees_with_check_operands():
    """The operands element_address lays out with the mode are the ones §9.7.16.10.1 lets an
    instruction take: transposed (MN-major) .kind::tf32 (32-bit) A and B."""
    tf32 = InstrDescriptor(kind="tf32", atype="tf32", btype="tf32", dtype="f32", m=128, n=64, transpose_a=True, transpose_b=True)
    d = SmemDescriptor(0, 512, 1024, swizzle="128B_base32B")
    td.check_operands(tf32, d, d)
    td.element_address(d, td.TYPE_BITS[tf32.atype], 0, 0, "MN")
