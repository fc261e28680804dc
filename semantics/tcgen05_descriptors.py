"""§9.7.16.4 The matrix descriptors of ``tcgen05.mma`` (sm_100): the shared memory descriptor
(§9.7.16.4.1), the instruction descriptor (§9.7.16.4.2) and the zero-column mask descriptor
(§9.7.16.4.3), as exact encode / decode / validate functions on integers.

Each descriptor is a frozen attrs value whose constructor refuses, with
:class:`~ptxspec.spec.errors.OperandError` naming the manual's reason and section, a field that
does not fit or that the manual forbids; ``encode()`` gives the register's integer and
``decode(value)`` refuses any bit the manual gives no meaning (or a fixed value other than the
manual's), so that ``decode(encode(d)) == d`` and ``encode(decode(v)) == v`` for every accepted
``d`` and ``v``.

* :class:`SmemDescriptor` (§9.7.16.4.1), with :func:`element_address` (the canonical layouts;
  ``padded=True`` for the padded 4-/6-bit formats of ``.kind::f8f6f4``/``.kind::mxf8f6f4``,
  §9.7.16.10.4.4, read with :func:`gather`), :func:`base_offset_for` (Table 41) and
  :func:`matrix_descriptor_encode`;
* the 8-bit Tensor Memory containers of 4-/6-bit A elements (§9.7.16.10.4.3):
  :func:`tmem_a_container`, :func:`tmem_a_payload` (:data:`TMEM_PAYLOAD_LOW_BIT` says which sources
  disagree and which we follow);
* :class:`InstrDescriptor` (§9.7.16.4.2, every ``.kind``: Tables 42-44), with the rules that need
  more than the descriptor: :func:`check_shape` (Table 39 and Table 50 against ``.cta_group`` and
  ``.ws``), :func:`check_operands` (against the A / B shared memory descriptors) and
  :func:`check_target` (the sm_103a features of both descriptors);
* :class:`ZeroColumnMaskDescriptor` (§9.7.16.4.3), with :func:`sub_masks`,
  :func:`zero_column_mask` and :func:`b_column`.

One layout mechanism (DESIGN.md "One mechanism per idea"): the canonical layouts and swizzles of
§9.7.16.3.3 are the ones of wgmma (§9.7.15.5.1.2; the same table of CuTe layouts, the same
``Swizzle<B,4,3>``), so :func:`element_address` asks
:func:`ptxspec.semantics.wgmma_layout.canonical_offset` and
:func:`~ptxspec.semantics.wgmma_layout.swizzle_address`, and :func:`base_offset_for` is wgmma's.
What differs from the sm_90 :class:`~ptxspec.semantics.wgmma_layout.MatrixDescriptor` is the
fields: the fixed version bits 46-48, the leading-dimension mode bit 52 and the 3-bit swizzle code
of bits 61-63 (with "128-Byte with 32B atomic swizzling", "128B_base32B": MN-major 32-bit operands
only, Table 53's 8x4 atom; its canonical layout and ``Swizzle<2,5,2>`` are in the same
wgmma_layout functions, taken from NVIDIA CUTLASS since the manual gives only the atom).

Readings of the manual's text (each also said where it is applied):

* Bits 53-60 of the shared memory descriptor: "Fixed constant value of 0xb00000000" (8 bits): read
  as the 8-bit zero ``0b00000000`` (``0xb...`` is not an 8-bit value; ``0b`` is meant).
* The zero-column mask's spans: the manual's prose and its worked examples disagree; we follow
  the examples (see :class:`ZeroColumnMaskDescriptor`).
* Scale factor IDs of ``.kind::mxf4``/``.kind::mxf4nvf4``: Table 44 says "0 or 2"; §9.7.16.10.7.2.4
  and §9.7.16.10.7.3.4 give IDs 0-3 for block32 with K = 96. We take Table 44 for K = 64/128 and
  the K = 96 sections for K = 96 (see :func:`scale_factor_ids`).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from ptxspec.semantics import wgmma_layout as wl
from ptxspec.spec.errors import OperandError, PtxSpecError

DESCRIPTORS = "9.7.16.4"
SMEM = "9.7.16.4.1"
SMEM_TARGET = "9.7.16.4.1.1"
LEADING_MODE = "9.7.16.3.1"
ABSOLUTE = "9.7.16.3.1.2.1"
CANONICAL = "9.7.16.3.3"
INSTR = "9.7.16.4.2"
MASK = "9.7.16.4.3"
SHAPES = "9.7.16.2.1"
SHAPES_TARGET = "9.7.16.2.1.1"
TRANSPOSE_NEGATE = "9.7.16.10.1"
TYPE_SWIZZLE = "9.7.16.10.3"
SMEM_LAYOUTS = "9.7.16.10.6"
PACKING = "9.7.16.10.4"
SCALE_A_ID = "9.7.16.10.7.2"
SCALE_KINDS = "9.7.16.10.7.1"
SELECTOR = "9.7.16.10.8.4"

#: The target that the two sm_103a features need: "The byte address mode for the leading dimension
#: stride is supported on sm_103a" (§9.7.16.4.1.1); "K = 96 is only supported for target
#: architecture sm_103a" (§9.7.16.2.1.1).
SM_103A = "sm_103a"


def _fits(value: object, width: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and bool(0 <= value < (1 << width))


def pack(fields: Mapping[str, tuple[int, int]], values: Mapping[str, int]) -> int:
    """The integer with ``values[name]`` in bits ``low .. low + width - 1`` of each
    ``fields[name] = (low, width)`` (§9.7.16.4: every descriptor is a table of such bit-fields)."""
    value = 0
    for name, (low, width) in fields.items():
        field = int(values[name])
        if not 0 <= field < 1 << width:
            raise AssertionError(f"{name} = {field} does not fit {width} bits")  # the validators prevent it
        value |= field << low
    return value


def unpack(fields: Mapping[str, tuple[int, int]], value: int) -> dict[str, int]:
    """The inverse of :func:`pack` (§9.7.16.4): each field's bits of ``value``."""
    return {name: (value >> low) & ((1 << width) - 1) for name, (low, width) in fields.items()}


def _covered(fields: Mapping[str, tuple[int, int]]) -> int:
    return sum(((1 << width) - 1) << low for low, width in fields.values())


def _register(value: object, bits: int, what: str, section: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < 1 << bits:
        raise OperandError(f"{what} {value!r} is not a {bits}-bit value", section=section)
    return int(value)


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.1 The shared memory descriptor
# ---------------------------------------------------------------------------------------------

#: Table 40: "61-63: Specifies the swizzling mode to be used: 0. No swizzling 1. 128-Byte with 32B
#: atomic swizzling 2. 128-Byte swizzling 4. 64-Byte swizzling 6. 32-Byte swizzling. Note: Values
#: 3, 5 and 7 are invalid". The names of the modes that wgmma also has are wgmma_layout's.
SWIZZLE_CODES = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
SWIZZLE_NAMES = {code: name for name, code in SWIZZLE_CODES.items()}
#: Table 40 bit 52: "Leading dimension stride mode: - 0: byte offset relative - 1: byte address
#: absolute".
LEADING_MODES = {"relative": 0, "absolute": 1}
#: Table 40 bits 46-48: "Fixed constant value of 0b001".
VERSION = 0b001

#: Table 40, (lowest bit, width) of each field: "0-13 (14) matrix-descriptor-encode (Matrix start
#: address); 16-29 (14) matrix-descriptor-encode (Leading dimension byte offset relative) OR
#: matrix-descriptor-encode (Leading dimension byte address absolute); 32-45 (14)
#: matrix-descriptor-encode (Stride dimension byte offset); 46-48 (3) Fixed constant value of
#: 0b001; 49-51 (3) Matrix base offset; 52 (1) Leading dimension stride mode; 53-60 (8) Fixed
#: constant value of 0xb00000000; 61-63 (3) swizzling mode". Bits 14-15 and 30-31 are in no row.
SMEM_FIELDS = {
    "start_address": (0, 14),
    "leading_byte_offset": (16, 14),
    "stride_byte_offset": (32, 14),
    "version": (46, 3),
    "base_offset": (49, 3),
    "leading_mode": (52, 1),
    "fixed_zero": (53, 8),
    "swizzle": (61, 3),
}
SMEM_DEFINED_BITS = _covered(SMEM_FIELDS)


def matrix_descriptor_encode(x: int) -> int:
    """§9.7.16.4.1: "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4"."""
    return (x & 0x3FFFF) >> 4


def _smem_bytes(name: str):
    def check(_instance: object, _attribute: attrs.Attribute, value: int) -> None:
        if not _fits(value, wl.ADDRESS_BITS):
            raise OperandError(
                f"shared memory descriptor: the {name} {value!r} does not fit its 14-bit field "
                f'("matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4": 0 <= x < 2**18)',
                section=SMEM,
            )
        if value % 16:
            raise OperandError(
                f'shared memory descriptor: the {name} {value:#x} is not 16-byte aligned ("The following must be '
                f'16-byte aligned: Matrix start address, Leading dimension byte offset, Stride dimension byte offset")',
                section=SMEM,
            )

    return check


def _smem_base_offset(_instance: object, _attribute: attrs.Attribute, value: int) -> None:
    if not _fits(value, 3):
        raise OperandError(f"shared memory descriptor: the matrix base offset {value!r} is not a 3-bit value (bits 49-51)", section=SMEM)


def _smem_swizzle(_instance: object, _attribute: attrs.Attribute, value: str) -> None:
    if value not in SWIZZLE_CODES:
        raise OperandError(f"shared memory descriptor: no swizzling mode {value!r} (Table 40: {', '.join(SWIZZLE_CODES)})", section=SMEM)


def _smem_mode(_instance: object, _attribute: attrs.Attribute, value: str) -> None:
    if value not in LEADING_MODES:
        raise OperandError(f"shared memory descriptor: the leading dimension stride mode is 'relative' or 'absolute', got {value!r}", section=LEADING_MODE)


@attrs.frozen
class SmemDescriptor:
    """§9.7.16.4.1: "The shared memory descriptor describes the properties of multiplicand matrix
    in shared memory including its location in the shared memory of the current CTA. It is a
    64-bit value contained in a register" (Table 40, :data:`SMEM_FIELDS`).

    Fields in bytes, as :class:`~ptxspec.semantics.wgmma_layout.MatrixDescriptor` holds them (the
    descriptor stores ``matrix-descriptor-encode(x)``): ``start_address``,
    ``leading_byte_offset`` (with ``leading_mode="absolute"`` the byte *address* of the second
    chunk, §9.7.16.3.1.2: "The leading dimension absolute address can point to the second data
    chunk in the shared memory"), ``stride_byte_offset``, ``base_offset`` (bits 49-51),
    ``leading_mode`` ("relative" or "absolute", bit 52), ``swizzle`` (:data:`SWIZZLE_CODES`).

    Refused (OperandError): a byte field not 16-byte aligned or not below 2**18; an absolute
    leading dimension with other than "128B" swizzling or a non-zero base offset
    (§9.7.16.3.1.2.1: "Only 128B swizzle (with 16B atomicity) is supported", "The matrix base
    offset must be 0"). The third restriction there (transpose bits 0) is the instruction
    descriptor's: :func:`check_operands`; the target (sm_103a) is :func:`check_target`'s.
    """

    start_address: int = attrs.field(validator=_smem_bytes("matrix start address"))
    leading_byte_offset: int = attrs.field(default=16, validator=_smem_bytes("leading dimension byte offset"))
    stride_byte_offset: int = attrs.field(default=16, validator=_smem_bytes("stride dimension byte offset"))
    base_offset: int = attrs.field(default=0, validator=_smem_base_offset)
    leading_mode: str = attrs.field(default="relative", validator=_smem_mode)
    swizzle: str = attrs.field(default="none", validator=_smem_swizzle)

    def __attrs_post_init__(self) -> None:
        if self.leading_mode == "absolute":
            if self.swizzle != "128B":
                raise OperandError(
                    f"shared memory descriptor: the absolute leading dimension address with {self.swizzle} swizzling "
                    '("Only 128B swizzle (with 16B atomicity) is supported")',
                    section=ABSOLUTE,
                )
            if self.base_offset:
                raise OperandError(
                    f"shared memory descriptor: the absolute leading dimension address with base offset {self.base_offset} "
                    '("The matrix base offset must be 0")',
                    section=ABSOLUTE,
                )

    def fields(self) -> dict[str, int]:
        """The value of each bit-field of Table 40 (:data:`SMEM_FIELDS`) (§9.7.16.4.1)."""
        return {
            "start_address": matrix_descriptor_encode(self.start_address),
            "leading_byte_offset": matrix_descriptor_encode(self.leading_byte_offset),
            "stride_byte_offset": matrix_descriptor_encode(self.stride_byte_offset),
            "version": VERSION,
            "base_offset": self.base_offset,
            "leading_mode": LEADING_MODES[self.leading_mode],
            "fixed_zero": 0,
            "swizzle": SWIZZLE_CODES[self.swizzle],
        }

    def encode(self) -> int:
        """The 64-bit register value (§9.7.16.4.1, Table 40)."""
        return pack(SMEM_FIELDS, self.fields())

    @classmethod
    def decode(cls, value: int) -> SmemDescriptor:
        """The descriptor in a 64-bit register (§9.7.16.4.1). Refused: bits 14-15 or 30-31 set
        (in no row of Table 40), bits 46-48 other than "Fixed constant value of 0b001", bits 53-60
        other than the fixed zero, a swizzle code 3, 5 or 7 ("Values 3, 5 and 7 are invalid"), and
        what the constructor refuses."""
        value = _register(value, 64, "shared memory descriptor", SMEM)
        if value & ~SMEM_DEFINED_BITS:
            raise OperandError(
                f"shared memory descriptor {value:#018x} sets bits {value & ~SMEM_DEFINED_BITS:#x} that Table 40 does not define (14-15, 30-31)", section=SMEM
            )
        f = unpack(SMEM_FIELDS, value)
        if f["version"] != VERSION:
            raise OperandError(
                f'shared memory descriptor {value:#018x}: bits 46-48 are {f["version"]:#05b}, not the "Fixed constant value of 0b001"', section=SMEM
            )
        if f["fixed_zero"]:
            raise OperandError(f"shared memory descriptor {value:#018x}: bits 53-60 are {f['fixed_zero']:#x}, not the fixed constant 0", section=SMEM)
        if f["swizzle"] not in SWIZZLE_NAMES:
            raise OperandError(f'shared memory descriptor {value:#018x}: swizzling mode {f["swizzle"]} ("Values 3, 5 and 7 are invalid")', section=SMEM)
        return cls(
            start_address=f["start_address"] << 4,
            leading_byte_offset=f["leading_byte_offset"] << 4,
            stride_byte_offset=f["stride_byte_offset"] << 4,
            base_offset=f["base_offset"],
            leading_mode="absolute" if f["leading_mode"] else "relative",
            swizzle=SWIZZLE_NAMES[f["swizzle"]],
        )


#: §9.7.16.4.1 / Table 41, "the base offset ... = (pattern start addr >> 0x7) & 0x7": the same rule
#: as wgmma's, so the same function.
base_offset_for = wl.base_offset_for


#: The padded shared memory formats of the 4-bit and 6-bit elements of ``.kind::f8f6f4`` /
#: ``.kind::mxf8f6f4`` (§9.7.16.10.4.4: "contiguously packed along with padding", Figures 202-203):
#: element bits -> (the tensor format, the bytes of packed elements in one 16-byte unit). §5.5.1.1.1
#: (the tensor copy that writes them): ".b4x16_p64: sixteen consecutive 4-bit data ... with 64 bits
#: of padding appended", ".b6x16_p32: sixteen 6-bit data ... with 32 bits of padding";
#: §9.7.16.9.1 (``tcgen05.cp``, which reads them): "16 elements of 4-bits each followed by 8 bytes of
#: padding", "16 elements of 6-bits each followed by 4 bytes of padding". NVIDIA CUTLASS
#: (:data:`CUTLASS_COMMIT`) uses the same unit for the MMA's operands: the element types
#: ``float_e2m1_unpacksmem_t`` / ``float_e2m3_unpacksmem_t`` / ``float_e3m2_unpacksmem_t``
#: (``include/cutlass/float_subbyte.h``, ``sizeof_bits`` 4 / 6 / 6) are loaded by TMA as
#: ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`` / ``16U6_ALIGN16B`` (``include/cute/arch/copy_sm90_desc.hpp``;
#: the packed ``float_e2m1_t`` of mxf4 is ``16U4_ALIGN8B``) and laid out in shared memory with the
#: canonical layout atoms of ``uint8_t`` (``sm100_blockscaled_umma_builder.inl``:
#: ``ElementAMma_SmemAllocType = cute::conditional_t<UseMxf8f6f4, uint8_t, ElementAMma>``;
#: ``sm100_umma_builder.inl``: ``sizeof_bits_v<ElementAMma> < 8 ? uint8_t``).
PADDED_FORMATS: dict[int, tuple[str, int]] = {4: ("b4x16_p64", 8), 6: ("b6x16_p32", 12)}
#: Elements in one 16-byte unit of a padded format ("x16").
UNIT_ELEMENTS = 16
#: The NVIDIA CUTLASS commit that the padded formats and the Tensor Memory containers are checked
#: against (the commit ``semantics/tcgen05_copy.py`` pins).
CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"


def padded_unit_offset(element_bits: int, j):
    """(byte, bit) of element ``j`` (0..15) of a 16-byte unit of a padded format
    (:data:`PADDED_FORMATS`): the sixteen elements are "contiguous", least significant first --
    bits ``w j .. w j + w - 1`` of the little-endian integer of the unit's first 8 (``w`` = 4) or 12
    (``w`` = 6) bytes; the rest of the unit is padding. This is the reading that
    ``semantics/tcgen05_copy.py``'s :func:`~ptxspec.semantics.tcgen05_copy.decompress` makes of the
    same units (CUTLASS ``cp_narrow_a_to_tmem_mma.py``: ``_pack_four_fp6_codes`` = ``c0 | c1 << 6 |
    c2 << 12 | c3 << 18``, bytes least significant first; ``_make_packed_a`` = ``e0 | e1 << 4``). A
    6-bit element may straddle two bytes of its unit (never two units): read it with
    :func:`gather`."""
    if element_bits not in PADDED_FORMATS:
        raise OperandError(f"no padded shared memory format of {element_bits}-bit elements (4: .b4x16_p64, 6: .b6x16_p32)", section=PACKING)
    j = np.asarray(j, dtype=np.int64)
    if j.size and (j.min() < 0 or j.max() >= UNIT_ELEMENTS):
        raise OperandError(f"a padded unit holds {UNIT_ELEMENTS} elements (0..15)", section=PACKING)
    position = element_bits * j
    return position // 8, position % 8


def element_address(descriptor: SmemDescriptor | int, element_bits: int, mn, k, major: str, *, padded: bool = False):
    """(byte address, bit) in shared memory of element ``(mn, k)`` (``mn`` along M for A or N for
    B, ``k`` along K) of the matrix that ``descriptor`` describes, with elements of
    ``element_bits`` bits, ``major`` "K" or "MN" (§9.7.16.3.3's canonical layouts, which are
    §9.7.15.5.1.2's: computed by :func:`~ptxspec.semantics.wgmma_layout.canonical_offset` and
    :func:`~ptxspec.semantics.wgmma_layout.swizzle_address`; vectorised over ``mn`` and ``k``).

    "128B_base32B" ("128-Byte with 32B atomic swizzling") is MN-major only: Table 53 (§9.7.16.10.6)
    "128B Swizzling with 32B atomicity | M/N | 8x4" in 128-bit elements, K-major "–". §9.7.16.3.3
    gives it no canonical layout and the manual names no swizzle function for it; both are NVIDIA
    CUTLASS's (``Layout_MN_SW128_32B_Atom``, ``make_umma_desc<Major::MN>``):
    ``Swizzle<2,5,2> o ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO))`` -- 128 bytes of MN by 4 K, the next
    128 bytes of MN at LBO, the next 4 K at SBO, the 32-byte chunks (address bits 5-6) XORed with
    the 128-byte row (bits 7-8). See :func:`~ptxspec.semantics.wgmma_layout.canonical_offset`.

    Refused: "128B_base32B" K-major (Table 53: "–"; CUTLASS: "SWIZZLE_128B_BASE32B is invalid for
    Major-K"; Table 52's K-major rows, "All swizzling modes", would allow it but give it no
    layout) and with elements of other than 32 bits (Table 52, §9.7.16.10.3: MN-major ("transpose")
    8-bit and 16-bit A/B take "All except 128B swizzling with 32B atomicity"; only the 32-bit row
    names it); the absolute leading dimension mode (§9.7.16.3.1.2 says the data is broken "into two
    chunks" without saying where the split is). Table 52's other rule, that 32-bit MN-major
    operands take "Only 128B swizzling with 32B atomicity", is not refused here (the layouts of the
    other modes are defined for 32-bit elements, and wgmma uses them); it is
    :func:`check_operands`'s ".kind::tf32 ... supported only with 128B swizzling mode with 32B
    swizzle-atomicity" (§9.7.16.10.1), where the instruction descriptor is known.

    ``element_bits``: 8, 16, 32, or 4 for the ``.e2m1`` elements of ``.kind::mxf4``/``.kind::mxf4nvf4``,
    which shared memory holds "two 4-bit elements in a 8-bit container, with no padding"
    (§9.7.16.10.4.6; the lower K index in the less significant half, our reading as wgmma_layout's
    for ``.b1``).

    ``padded=True``: the 4-bit (``.e2m1``) and 6-bit (``.e2m3``, ``.e3m2``) elements of
    ``.kind::f8f6f4`` / ``.kind::mxf8f6f4``, "contiguously packed along with padding"
    (§9.7.16.10.4.4, Figures 202-203): every 16 consecutive K elements of a row are one 16-byte unit
    of :data:`PADDED_FORMATS` (``.b4x16_p64``: 8 bytes of elements + 8 of padding; ``.b6x16_p32``:
    12 + 4). For the canonical layout the unit is 16 8-bit elements -- the address of element ``(mn,
    k)`` is that of the 8-bit element ``(mn, 16 * (k // 16))`` (its unit) plus
    :func:`padded_unit_offset` of ``k % 16`` (CUTLASS lays these operands out with ``uint8_t``
    layout atoms and TMA formats of "16U4/16U6 ... ALIGN16B"; see :data:`PADDED_FORMATS`). A 6-bit
    element can straddle two bytes of its unit: read it with :func:`gather`, not
    :func:`ptxspec.semantics.wgmma_layout.gather`. Every K-major swizzling mode (Table 52: "4-bit,
    6-bit, 8-bit, 16-bit, 32-bit | Row | A ... Column | B | All swizzling modes"), the swizzle acting
    on the unit's address as on any 16-byte unit (it moves bits 4 and up only).

    Refused for sub-byte elements (4, 6): MN-major -- Table 52 names 4-bit and 6-bit only in the
    K-major rows ("Row | A", "Column | B"); its transposed rows are "8-bit, 16-bit" and "32-bit"
    (as :class:`InstrDescriptor` refuses a transposed 4- or 6-bit type); 6-bit elements without
    ``padded`` (shared memory has no other 6-bit format); ``padded`` with other than 4 or 6 bits.
    """
    d = descriptor if isinstance(descriptor, SmemDescriptor) else SmemDescriptor.decode(descriptor)
    if d.leading_mode == "absolute":
        raise OperandError("the manual does not say where the absolute leading dimension address splits the matrix", section=ABSOLUTE)
    if padded and element_bits not in PADDED_FORMATS:
        raise OperandError(
            f"no padded shared memory format of {element_bits}-bit elements (§9.7.16.10.4.4: the 4-bit and 6-bit elements of "
            ".kind::f8f6f4/.kind::mxf8f6f4, .b4x16_p64 and .b6x16_p32)",
            section=PACKING,
        )
    if not padded and element_bits not in (4, 8, 16, 32):
        hint = "; 6-bit elements are only in the padded format: padded=True" if element_bits == 6 else ""
        raise OperandError(
            f"no canonical layout of {element_bits}-bit elements here (4: the packed .e2m1 of .kind::mxf4/mxf4nvf4, "
            f"8, 16, 32; padded=True: the 4-/6-bit elements of .kind::f8f6f4/mxf8f6f4){hint}",
            section=PACKING,
        )
    if d.swizzle == "128B_base32B":
        if major == "K":
            raise OperandError(
                'K-major 128B swizzling with 32B atomicity (Table 53: "128B Swizzling with 32B atomicity | M/N | 8x4", K: "–"; '
                'CUTLASS: "SWIZZLE_128B_BASE32B is invalid for Major-K")',
                section=SMEM_LAYOUTS,
            )
        if element_bits != 32:
            raise OperandError(
                f'{element_bits}-bit elements with 128B swizzling of 32B atomicity (Table 52: only the 32-bit MN-major ("transpose") '
                'operands take it; 8-bit and 16-bit: "All except 128B swizzling with 32B atomicity")',
                section=TYPE_SWIZZLE,
            )
    if element_bits < 8 and major == "MN":
        raise OperandError(
            f'MN-major ("transposed") {element_bits}-bit elements (Table 52: 4-bit and 6-bit types only "Row | A", "Column | B"; '
            'the transposed rows are "8-bit, 16-bit" and "32-bit"; CUTLASS\'s mma_sm100_desc.hpp agrees: "Major value of 1 is only valid for '
            'E4M3, E5M2, INT8 (signed and unsigned), F16, BF16 and TF32 source formats")',
            section=TYPE_SWIZZLE,
        )
    if not padded:
        byte, bit = wl.canonical_offset(major, d.swizzle, element_bits, mn, k, d.leading_byte_offset, d.stride_byte_offset)
        return wl.swizzle_address(d.start_address + byte, d.swizzle, d.base_offset), bit
    k = np.asarray(k, dtype=np.int64)
    unit, _ = wl.canonical_offset(major, d.swizzle, 8, mn, UNIT_ELEMENTS * (k // UNIT_ELEMENTS), d.leading_byte_offset, d.stride_byte_offset)
    inner, bit = padded_unit_offset(element_bits, k % UNIT_ELEMENTS)
    return wl.swizzle_address(d.start_address + unit + inner, d.swizzle, d.base_offset), bit


#: The one read of elements out of shared memory (6-bit elements that straddle two bytes included).
gather = wl.gather


# ---------------------------------------------------------------------------------------------
# §9.7.16.10.4.3 / §9.7.16.10.4.5 The 4-bit and 6-bit elements of A in Tensor Memory
# ---------------------------------------------------------------------------------------------

#: Where ``tcgen05.mma`` reads a 4-bit or 6-bit A element of ``.kind::f8f6f4`` / ``.kind::mxf8f6f4``
#: in its 8-bit Tensor Memory container (§9.7.16.10.4.3: "The individual 4-bit and the 6-bit
#: floating point type elements must be packed in an 8-bit container in Tensor memory as shown
#: below. The 8-bit containers must be contiguously packed in a 32-bit Tensor Memory word ... 4
#: consecutive A elements should be packed in one 32-bit Tensor Memory word"; the bits are Figures
#: 199-201, images): the lowest bit of the payload. ``.e2m1`` in bits 5-2 ("00xxxx00"), ``.e3m2``
#: and ``.e2m3`` in bits 5-0 ("00xxxxxx"), the other bits padding.
#:
#: The sources (see :func:`tmem_a_container`):
#:
#: * ``.e2m1`` bits 5-2: all agree -- the manual for the warp-level ``mma`` of the same kinds
#:   (§9.7.14.5.14, PTX ISA 8.7; the seed ``001_...txt`` line 22916, our translation of its Chinese:
#:   the .e2m1 element sits in the central 4 bits of the 8-bit container, padded in its upper 2 and
#:   lower 2 bits); CUTLASS
#:   ``include/cute/atom/mma_traits_sm120.hpp`` ("MMA F8F6F4 expects the four-bit data to be in the
#:   middle of the eight-bit container ... 0b0000ABCD --> 0b00ABCD00"); CUTLASS
#:   ``cp_narrow_a_to_tmem_mma.py`` ("FP4 UTCCP holder byte: 00xxxx00 (payload bits [5:2])", the
#:   container ``tcgen05.cp`` writes and ``tcgen05.mma`` reads); MMA-Sim 2.1.1
#:   (``mmasim/arithmetic/helper.py`` ``decode_uint8_to_fp6_fp4``: "fp6 sits in bits 5:0, fp4 in bits
#:   5:2").
#: * ``.e3m2`` / ``.e2m3`` bits 5-0: the manual's warp-level ``mma`` (the same line: an .e3m2 or
#:   .e2m3 element sits in the lower 6 bits of the container, padded in its upper 2 bits), its
#:   ``.e3m2x2`` / ``.e2m3x2`` data (§5.2.3, line 1399, and ``cvt``, §9.7.9.21, line 13671: each
#:   ``.b8`` holds the 6-bit value with its 2 MSBs zero) and its ``.b6p2x16`` tensor format
#:   (§5.5.1.1.1, line 2112: 6 bits of data at the LSB, 2 bits of padding at the MSB); CUTLASS sm_120 ("Same transformation is NOT needed for FP6": ``ldmatrix
#:   .b6x16_p32`` output, 6 bits at the bottom, is ``mma.sync``'s operand as it is); MMA-Sim
#:   (bits 5:0). Against them: CUTLASS ``cp_narrow_a_to_tmem_mma.py`` says ``tcgen05.cp``
#:   ``.b6x16_p32`` writes "FP6 UTCCP holder byte: 0xxxxxx0 (payload bits [6:1])" and feeds that
#:   to ``tcgen05.mma.kind::mxf8f6f4`` -- which, if both are right, would make the MMA read bits
#:   6-1. We take the MMA's operand from the sources that describe the MMA's operand (bits 5-0);
#:   ``semantics/tcgen05_copy.py`` keeps CUTLASS's copy (bits 6-1). The two disagree: composed,
#:   our ``tcgen05.cp`` + ``tcgen05.mma`` read a 6-bit code ``c`` as ``(c << 1) & 0x3f``; an sm_100
#:   run (``tcgen05.cp .b6x16_p32`` then ``tcgen05.ld`` of the container) decides.
TMEM_PAYLOAD_LOW_BIT: dict[str, int] = {"e2m1": 2, "e3m2": 0, "e2m3": 0}
#: The kinds whose A in Tensor Memory holds 4-/6-bit elements in 8-bit containers (§9.7.16.10.4.3
#: names ``.kind::mxf8f6f4``; ``.kind::f8f6f4`` has the same types and CUTLASS's
#: ``SM100_MMA_F8F6F4_TS`` the same operand, our reading).
CONTAINER_KINDS = ("f8f6f4", "mxf8f6f4")


def tmem_a_container(kind: str, element_type: str) -> tuple[int, int, int]:
    """(container bits, payload's lowest bit, payload bits) of an A element of ``element_type`` in
    Tensor Memory for ``.kind::{kind}``: the container is what :func:`~ptxspec.semantics.tcgen05_datapath.a_cells`
    packs along K ("contiguously packed in a 32-bit Tensor Memory word"), the payload the element's
    bits in it.

    * ``.kind::f8f6f4`` / ``.kind::mxf8f6f4``, ``.e2m1`` / ``.e3m2`` / ``.e2m3``: an 8-bit container
      (§9.7.16.10.4.3), the payload at :data:`TMEM_PAYLOAD_LOW_BIT` -- (8, 2, 4), (8, 0, 6);
    * ``.kind::mxf4`` / ``.kind::mxf4nvf4`` ``.e2m1``: "Two 4-bit floating point type elements must be
      packed in an 8-bit container" (§9.7.16.10.4.5, Figure 204): no padding -- (4, 0, 4);
    * every other element: its own bits, (w, 0, w) (§9.7.16.10.4.1 is D's rule; A's 8-, 16-, 32-bit
      elements are packed along K as ``a_cells`` says).
    """
    if kind not in KINDS:
        raise OperandError(f"no .kind::{kind} (the kinds are {', '.join(KINDS)})", section=INSTR)
    if element_type not in TYPE_CODES[kind]:
        raise OperandError(f".kind::{kind} has no element type .{element_type} ({', '.join(TYPE_CODES[kind])})", section=INSTR)
    bits = TYPE_BITS[element_type]
    if kind in CONTAINER_KINDS and bits < 8:
        return 8, TMEM_PAYLOAD_LOW_BIT[element_type], bits
    return bits, 0, bits


def tmem_a_payload(container, kind: str, element_type: str) -> np.ndarray:
    """The element's bits (uint64) out of the value of its Tensor Memory container (the container's
    bits, :func:`tmem_a_container`, vectorised): ``(container >> low) & (2**bits - 1)``; the padding
    bits are not read (the manual says nothing of their values)."""
    _width, low, bits = tmem_a_container(kind, element_type)
    return (np.asarray(container, dtype=np.uint64) >> np.uint64(low)) & np.uint64((1 << bits) - 1)


def tmem_a_container_value(element, kind: str, element_type: str) -> np.ndarray:
    """The container (uint64) that holds ``element`` (its bits) with zero padding: the inverse of
    :func:`tmem_a_payload` on ``0 .. 2**bits - 1``."""
    _width, low, bits = tmem_a_container(kind, element_type)
    element = np.asarray(element, dtype=np.uint64)
    if element.size and int(element.max()) >> bits:
        raise OperandError(f"a .{element_type} element has {bits} bits", section=PACKING)
    return element << np.uint64(low)


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.2 The instruction descriptor
# ---------------------------------------------------------------------------------------------

KINDS = ("tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED = ("mxf8f6f4", "mxf4", "mxf4nvf4")

#: Table 42 (``.kind::tf32``, ``.kind::f16``, ``.kind::f8f6f4``, ``.kind::i8``): "0-1 Sparsity
#: selector, if Sparsity is enabled; 2 Sparsity; 3 Saturate for integer types; 4-5 dtype; 6
#: Reserved; 7-9 atype; 10-12 btype; 13 Negate A; 14 Negate B; 15 Transpose A; 16 Transpose B;
#: 17-22 N >> 3; 23 Reserved; 24-28 M >> 4; 29 Reserved; 30-31 Maximum shift while attempting B
#: matrix -reuse in .ws".
TABLE_42 = {
    "sparsity_selector": (0, 2),
    "sparse": (2, 1),
    "saturate": (3, 1),
    "dtype": (4, 2),
    "reserved_6": (6, 1),
    "atype": (7, 3),
    "btype": (10, 3),
    "negate_a": (13, 1),
    "negate_b": (14, 1),
    "transpose_a": (15, 1),
    "transpose_b": (16, 1),
    "n": (17, 6),
    "reserved_23": (23, 1),
    "m": (24, 5),
    "reserved_29": (29, 1),
    "max_shift": (30, 2),
}
#: Table 43 (``.kind::mxf8f6f4``): "0-1 Reserved; 2 Sparsity; 3 Reserved; 4-5 Matrix B Scale
#: Factor Data ID; 6 Reserved; 7-9 atype; 10-12 btype; 13-16 negate / transpose A, B; 17-22 N >> 3;
#: 23 Scale Matrix Type, for both scale_A / scale_B; 24-26 Reserved; 27-28 M >> 7; 29-30 Matrix A
#: Scale Factor Data ID; 31 Reserved".
TABLE_43 = {
    "reserved_0": (0, 2),
    "sparse": (2, 1),
    "reserved_3": (3, 1),
    "scale_b_id": (4, 2),
    "reserved_6": (6, 1),
    "atype": (7, 3),
    "btype": (10, 3),
    "negate_a": (13, 1),
    "negate_b": (14, 1),
    "transpose_a": (15, 1),
    "transpose_b": (16, 1),
    "n": (17, 6),
    "scale_type": (23, 1),
    "reserved_24": (24, 3),
    "m": (27, 2),
    "scale_a_id": (29, 2),
    "reserved_31": (31, 1),
}
#: Table 44 (``.kind::mxf4``, ``.kind::mxf4nvf4``): as Table 43 but "10-11 btype; 12 Reserved" and
#: "31 K Dimension: (Dense K=64 / Sparse K=128) = 0, (Dense K=96) = 1".
TABLE_44 = {
    "reserved_0": (0, 2),
    "sparse": (2, 1),
    "reserved_3": (3, 1),
    "scale_b_id": (4, 2),
    "reserved_6": (6, 1),
    "atype": (7, 3),
    "btype": (10, 2),
    "reserved_12": (12, 1),
    "negate_a": (13, 1),
    "negate_b": (14, 1),
    "transpose_a": (15, 1),
    "transpose_b": (16, 1),
    "n": (17, 6),
    "scale_type": (23, 1),
    "reserved_24": (24, 3),
    "m": (27, 2),
    "scale_a_id": (29, 2),
    "k96": (31, 1),
}
INSTR_FIELDS = {kind: TABLE_42 for kind in ("tf32", "f16", "f8f6f4", "i8")} | {"mxf8f6f4": TABLE_43, "mxf4": TABLE_44, "mxf4nvf4": TABLE_44}

_F8F6F4 = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}
#: The atype/btype codes of each kind (Tables 42-44): "TF32 = 2"; "F16 = 0, BF16 = 1"; "E4M3 = 0
#: E5M2 = 1 E2M3 = 3 E3M2 = 4 E2M1 = 5"; "Unsigned 8b = 0, Signed 8b = 1"; mxf4/mxf4nvf4 "E2M1 = 1".
TYPE_CODES: dict[str, dict[str, int]] = {
    "tf32": {"tf32": 2},
    "f16": {"f16": 0, "bf16": 1},
    "f8f6f4": _F8F6F4,
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": _F8F6F4,
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
#: dtype (Table 42 bits 4-5): tf32 "F32 = 1"; f16 and f8f6f4 "F16 = 0 F32 = 1"; i8 "S32 = 2". The
#: block-scaled kinds have no dtype field; their D is .f32 (Table 39), held as ``dtype="f32"``.
DTYPE_CODES: dict[str, dict[str, int]] = {
    "tf32": {"f32": 1},
    "f16": {"f16": 0, "f32": 1},
    "f8f6f4": {"f16": 0, "f32": 1},
    "i8": {"s32": 2},
    "mxf8f6f4": {"f32": 0},
    "mxf4": {"f32": 0},
    "mxf4nvf4": {"f32": 0},
}
#: Bit 23 of Tables 43-44, "Scale Matrix Type, for both scale_A / scale_B": mxf8f6f4 and mxf4
#: "UE8M0 = 1"; mxf4nvf4 "UE4M3 = 0" and (Table 55: ".kind::mxf4nvf4 | E2M1 | UE8M0 | .scale_vec::2X
#: / .block32, .scale_vec::4X / .block16") UE8M0 = 1.
SCALE_CODES: dict[str, dict[str, int]] = {"mxf8f6f4": {"ue8m0": 1}, "mxf4": {"ue8m0": 1}, "mxf4nvf4": {"ue8m0": 1, "ue4m3": 0}}
#: Table 42 bits 30-31: "no shift = 0 maximum shift of 8 = 1 maximum shift of 16 = 2 maximum shift
#: of 32 = 3".
MAX_SHIFT_CODES = {0: 0, 8: 1, 16: 2, 32: 3}
#: Element widths (Table 52 distinguishes 4-, 6-, 8-, 16- and 32-bit types).
TYPE_BITS = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}

#: M and N that some form of the kind takes (Table 39, the union over .ws / cta_group / sparsity):
#: M "32xNxK" (.ws), "64xNxK", "128xNxK", "256xNxK"; the block-scaled kinds "128xNxK", "256xNxK";
#: N "{8, 16, 24, ... 256} steps of 8", .kind::i8 "{8, 16, 24, 32, 48, ... 256} steps of 16 after
#: N > 32" (and "{32, 64, ... 256} steps of 32", a subset).
_N8 = frozenset(range(8, 257, 8))
M_VALUES = {kind: frozenset({128, 256} if kind in BLOCK_SCALED else {32, 64, 128, 256}) for kind in KINDS}
N_VALUES = {kind: (frozenset({8, 16, 24} | set(range(32, 257, 16))) if kind == "i8" else _N8) for kind in KINDS}
#: K "is implicitly determined by the MMA-kind and the sparsity" (§9.7.16.2.2, Table 39): (dense,
#: sparse); "K1 = 96" for mxf4 / mxf4nvf4 with the K Dimension bit.
K_VALUES = {"f16": (16, 32), "tf32": (8, 16), "f8f6f4": (32, 64), "i8": (32, 64), "mxf8f6f4": (32, 64), "mxf4": (64, 128), "mxf4nvf4": (64, 128)}


def scale_factor_ids(kind: str, scale_type: str, k96: bool) -> frozenset[int]:
    """The scale factor A / B IDs a block-scaled descriptor may hold (§9.7.16.4.2, §9.7.16.10.7.2-3).

    * mxf8f6f4: Table 43 "0-3".
    * mxf4 / mxf4nvf4 with K = 64 / 128: Table 44 "0 or 2"; with ``.ue4m3`` scales, which only
      ".scale_vec::4X / .block16" takes (Table 55), "The SFA_ID value must be 0" / "The SFB_ID
      value must be 0" (§9.7.16.10.7.2.3, §9.7.16.10.7.3.3): {0}.
    * K = 96 (the K Dimension bit): block32 (``.ue8m0``) "SFA_ID values of 1, 2 and 3 would
      select the blue, yellow, and red columns" (§9.7.16.10.7.2.4, §9.7.16.10.7.3.4): 0-3;
      block16 (``.ue4m3``) figures "SFA_ID=00" and "SFA_ID=10" only (§9.7.16.10.7.2.5,
      §9.7.16.10.7.3.5): 0 or 2. Table 44's "0 or 2" is read as the K = 64/128 rule, since the
      K = 96 sections are the specific ones.

    With ``.ue8m0`` the scale vector size (2X or 4X for mxf4nvf4) is the instruction's qualifier,
    not the descriptor's; 4X further needs 0 (§9.7.16.10.7.2.3), which only the form can check.
    """
    if kind == "mxf8f6f4":
        return frozenset(range(4))
    if k96:
        return frozenset(range(4)) if scale_type == "ue8m0" else frozenset({0, 2})
    return frozenset({0}) if scale_type == "ue4m3" else frozenset({0, 2})


def _refuse(kind: str, message: str, section: str = INSTR) -> OperandError:
    return OperandError(f"instruction descriptor (.kind::{kind}): {message}", section=section)


def _flag(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if not isinstance(value, bool):
        raise OperandError(f"descriptor field {attribute.name} is a bool, got {value!r}", section=DESCRIPTORS)


def _whole(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise OperandError(f"instruction descriptor: {attribute.name} is an integer, got {value!r}", section=INSTR)


@attrs.frozen
class InstrDescriptor:
    """§9.7.16.4.2: "The instruction descriptor describes the shapes, types and other details of
    all the matrices and the matrix-multiplication-and-accumulation operation. It is a 32-bit value
    in registers and the exact layout is dependent on the MMA-Kind" (Tables 42, 43, 44:
    :data:`INSTR_FIELDS`).

    ``kind`` (:data:`KINDS`), ``m``, ``n`` (the dimensions; the descriptor holds "N >> 3" and
    "M >> 4", or "M >> 7" for the block-scaled kinds), ``atype``, ``btype``, ``dtype`` (type names
    without the dot; "f32" for the block-scaled kinds, which have no dtype field), ``sparse``,
    ``sparsity_selector``, ``saturate``, ``negate_a``/``negate_b``, ``transpose_a``/``transpose_b``
    (1: MN-major, §9.7.16.10.2), ``max_shift`` (0, 8, 16, 32), and for the block-scaled kinds
    ``scale_type`` ("ue8m0"/"ue4m3"), ``scale_a_id``, ``scale_b_id`` and (mxf4, mxf4nvf4) ``k96``.
    A field the kind's table does not have must be left at its default (it encodes as the table's
    reserved 0); the constructor refuses what the tables and the sections they rest on forbid
    (each refusal quotes its sentence).
    """

    kind: str
    m: int = attrs.field(validator=_whole)
    n: int = attrs.field(validator=_whole)
    atype: str
    btype: str
    dtype: str = "f32"
    sparse: bool = attrs.field(default=False, validator=_flag)
    sparsity_selector: int = attrs.field(default=0, validator=_whole)
    saturate: bool = attrs.field(default=False, validator=_flag)
    negate_a: bool = attrs.field(default=False, validator=_flag)
    negate_b: bool = attrs.field(default=False, validator=_flag)
    transpose_a: bool = attrs.field(default=False, validator=_flag)
    transpose_b: bool = attrs.field(default=False, validator=_flag)
    max_shift: int = attrs.field(default=0, validator=_whole)
    scale_type: str | None = None
    scale_a_id: int = attrs.field(default=0, validator=_whole)
    scale_b_id: int = attrs.field(default=0, validator=_whole)
    k96: bool = attrs.field(default=False, validator=_flag)

    def __attrs_post_init__(self) -> None:
        _check_instr(self)

    @property
    def k(self) -> int:
        """K, "implicitly determined by the MMA-kind and the sparsity, as shown in the Table 39"
        (§9.7.16.2.2); 96 with the K Dimension bit ("(Dense K=96) = 1", Table 44)."""
        return 96 if self.k96 else K_VALUES[self.kind][self.sparse]

    def fields(self) -> dict[str, int]:
        """The value of each bit-field of the kind's table (:data:`INSTR_FIELDS`; §9.7.16.4.2)."""
        block = self.kind in BLOCK_SCALED
        values = {name: 0 for name in INSTR_FIELDS[self.kind]}
        values.update(
            sparse=int(self.sparse),
            atype=TYPE_CODES[self.kind][self.atype],
            btype=TYPE_CODES[self.kind][self.btype],
            negate_a=int(self.negate_a),
            negate_b=int(self.negate_b),
            transpose_a=int(self.transpose_a),
            transpose_b=int(self.transpose_b),
            n=self.n >> 3,
            m=self.m >> (7 if block else 4),
        )
        if block:
            assert self.scale_type is not None  # _check_instr
            values.update(scale_type=SCALE_CODES[self.kind][self.scale_type], scale_a_id=self.scale_a_id, scale_b_id=self.scale_b_id)
            if "k96" in values:
                values["k96"] = int(self.k96)
        else:
            values.update(
                sparsity_selector=self.sparsity_selector,
                saturate=int(self.saturate),
                dtype=DTYPE_CODES[self.kind][self.dtype],
                max_shift=MAX_SHIFT_CODES[self.max_shift],
            )
        return values

    def encode(self) -> int:
        """The 32-bit register value (§9.7.16.4.2, the kind's table)."""
        return pack(INSTR_FIELDS[self.kind], self.fields())

    @classmethod
    def decode(cls, value: int, kind: str) -> InstrDescriptor:
        """The descriptor in a 32-bit register for ``tcgen05.mma`` of ``.kind::{kind}``
        (§9.7.16.4.2: the layout "is dependent on the MMA-Kind"). Refused: a reserved bit set
        ("Reserved | 0"), a code the kind's table does not list, and what the constructor
        refuses."""
        kind = _check_kind(kind)
        value = _register(value, 32, "instruction descriptor", INSTR)
        table = INSTR_FIELDS[kind]
        f = unpack(table, value)
        reserved = [name for name in table if name.startswith("reserved") and f[name]]
        if reserved:
            bits = ", ".join(_bits(table[name]) for name in reserved)
            raise _refuse(kind, f'{value:#010x} sets reserved bits {bits} ("Reserved | 0")')

        def name_of(codes: Mapping[str, int], code: int, what: str) -> str:
            for name, c in codes.items():
                if c == code:
                    return name
            raise _refuse(kind, f"{value:#010x}: {what} code {code} is not in the table ({', '.join(f'{n} = {c}' for n, c in codes.items())})")

        block = kind in BLOCK_SCALED
        args: dict[str, object] = dict(
            kind=kind,
            m=f["m"] << (7 if block else 4),
            n=f["n"] << 3,
            atype=name_of(TYPE_CODES[kind], f["atype"], "atype"),
            btype=name_of(TYPE_CODES[kind], f["btype"], "btype"),
            sparse=bool(f["sparse"]),
            negate_a=bool(f["negate_a"]),
            negate_b=bool(f["negate_b"]),
            transpose_a=bool(f["transpose_a"]),
            transpose_b=bool(f["transpose_b"]),
        )
        if block:
            args.update(
                scale_type=name_of(SCALE_CODES[kind], f["scale_type"], "scale matrix type"),
                scale_a_id=f["scale_a_id"],
                scale_b_id=f["scale_b_id"],
                k96=bool(f.get("k96", 0)),
            )
        else:
            shifts = {code: shift for shift, code in MAX_SHIFT_CODES.items()}
            args.update(
                dtype=name_of(DTYPE_CODES[kind], f["dtype"], "dtype"),
                sparsity_selector=f["sparsity_selector"],
                saturate=bool(f["saturate"]),
                max_shift=shifts[f["max_shift"]],
            )
        return cls(**args)  # type: ignore[arg-type]


def _bits(field: tuple[int, int]) -> str:
    low, width = field
    return str(low) if width == 1 else f"{low}-{low + width - 1}"


def _check_kind(kind: str) -> str:
    kind = str(kind).removeprefix(".").removeprefix("kind::")
    if kind not in KINDS:
        raise OperandError(f"instruction descriptor: no .kind::{kind} (the kinds of Tables 42-44 are {', '.join(KINDS)})", section=INSTR)
    return kind


def _check_instr(d: InstrDescriptor) -> None:
    """The rules of §9.7.16.4.2's tables and of the sections they point to, for one descriptor."""
    kind = _check_kind(d.kind)
    if kind != d.kind:
        raise OperandError(f"instruction descriptor: write the kind as {kind!r}, not {d.kind!r}", section=INSTR)
    block = kind in BLOCK_SCALED
    table = "Table 44" if kind in ("mxf4", "mxf4nvf4") else "Table 43" if block else "Table 42"
    for operand, name in (("A", d.atype), ("B", d.btype)):
        if name not in TYPE_CODES[kind]:
            raise _refuse(kind, f"no {operand} type .{name} ({table}: {', '.join(TYPE_CODES[kind])})")
    if d.dtype not in DTYPE_CODES[kind]:
        raise _refuse(kind, f"no D type .{d.dtype} ({table}: {', '.join(DTYPE_CODES[kind])})")
    if kind == "f16" and d.dtype == "f16" and (d.atype, d.btype) != ("f16", "f16"):
        raise _refuse(kind, f'.f16 D with .{d.atype}/.{d.btype} (Table 39: dtype ".f16" takes atype/btype ".f16"; ".f32" takes ".f16, .bf16")', SHAPES)
    if d.m not in M_VALUES[kind]:
        raise _refuse(kind, f"M = {d.m} (Table 39: M is one of {sorted(M_VALUES[kind])})", SHAPES)
    if d.n not in N_VALUES[kind]:
        rule = '"N = {8, 16, 24, 32, 48, ... 256} steps of 16 after N > 32"' if kind == "i8" else '"N = {8, 16, 24, ... 256} steps of 8"'
        raise _refuse(kind, f"N = {d.n} (Table 39: {rule})", SHAPES)
    if d.sparsity_selector not in range(4):
        raise _refuse(kind, f"sparsity selector {d.sparsity_selector} (bits 0-1: 0-3)")
    if d.sparsity_selector and not d.sparse:
        raise _refuse(kind, f'sparsity selector {d.sparsity_selector} of a dense MMA ("Sparsity selector, if Sparsity is enabled")')
    if d.sparsity_selector and kind in ("i8", "f8f6f4"):
        raise _refuse(kind, f'sparsity selector {d.sparsity_selector} ("must be 0 for .kind::i8 and .kind::f8f6f4")', SELECTOR)
    if d.sparsity_selector and block:
        raise _refuse(
            kind,
            f'sparsity selector {d.sparsity_selector}: bits 0-1 are "Reserved | 0" in {table} ("is assumed to be 0 for '
            '.kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4")',
        )
    if d.saturate and kind != "i8":
        raise _refuse(kind, 'saturate ("Saturate for integer types": "0 (NA)" but for .kind::i8)')
    if (d.negate_a or d.negate_b) and kind == "i8":
        raise _refuse(kind, 'negate (Table 42: .kind::i8 "No Negate = 0"; Table 49: "Is Negate A/B supported: No")', TRANSPOSE_NEGATE)
    if d.transpose_a or d.transpose_b:
        if kind in ("mxf4", "mxf4nvf4"):
            raise _refuse(kind, 'transpose (Table 44: "No Transpose = 0"; Table 49: "Is Transpose A/B supported: No")', TRANSPOSE_NEGATE)
        for flag, operand, name in ((d.transpose_a, "A", d.atype), (d.transpose_b, "B", d.btype)):
            if flag and TYPE_BITS[name] < 8:
                raise _refuse(kind, f'transposed {operand} of .{name} (Table 52: 4-bit and 6-bit types only "Row | A", "Column | B")', TYPE_SWIZZLE)
    if d.max_shift not in MAX_SHIFT_CODES:
        raise _refuse(kind, f"maximum shift {d.max_shift} (Table 42 bits 30-31: 0, 8, 16 or 32)")
    if block:
        if d.max_shift:
            raise _refuse(kind, f"maximum shift {d.max_shift}: {table} has no such field (only Table 42 does)")
        if d.scale_type not in SCALE_CODES[kind]:
            raise _refuse(kind, f"scale matrix type {d.scale_type!r} ({table} bit 23 and Table 55: {', '.join(SCALE_CODES[kind])})", SCALE_KINDS)
        if d.k96 and kind == "mxf8f6f4":
            raise _refuse(kind, 'the K Dimension bit: bit 31 is "Reserved | 0" in Table 43')
        if d.k96 and d.sparse:
            raise _refuse(kind, 'K = 96 with sparsity (Table 44 bit 31: "(Dense K=96) = 1")')
        if d.k96 and d.m != 256:
            raise _refuse(kind, f'K = 96 with M = {d.m} (Table 39: "256xNxK1", "K1 = 96")', SHAPES)
        allowed = scale_factor_ids(kind, d.scale_type, d.k96)
        for operand, ident in (("A", d.scale_a_id), ("B", d.scale_b_id)):
            if ident not in allowed:
                raise _refuse(kind, f"scale factor {operand} ID {ident} (with .{d.scale_type}, K = {d.k}: {sorted(allowed)})", SCALE_A_ID)
    else:
        if d.scale_type is not None or d.scale_a_id or d.scale_b_id:
            raise _refuse(kind, "scale factors: Table 42 has no scale fields (only the block-scaled kinds do)")
        if d.k96:
            raise _refuse(kind, "the K Dimension bit: Table 42 has none (K = 96 is .kind::mxf4 / .kind::mxf4nvf4 only)")


_N16 = frozenset(range(16, 257, 16))
_N32 = frozenset(range(32, 257, 32))
#: Table 39 ("Various combinations of .kind and shapes"), per kind group, .ws, cta_group and
#: sparsity: (the M values, the N values); a missing entry is the table's "Invalid". The .ws rows:
#: "32xNxK 64xNxK 128xNxK", "N = {64, 128, 256}" dense, "N = {64, 128}" sparse; .kind::i8 with
#: cta_group::2: "N = {32, 64, ... 256} steps of 32"; .kind::mxf8f6f4 with cta_group::2, sparse:
#: "256xNxK"; .kind::mxf4/mxf4nvf4 with cta_group::2: "128xNxK 256xNxK 256xNxK1" dense, "256xNxK"
#: sparse.
_DENSE_SHAPES = {
    (False, 1, False): (frozenset({64, 128}), _N8),
    (False, 1, True): (frozenset({64, 128}), _N8),
    (False, 2, False): (frozenset({128, 256}), _N16),
    (False, 2, True): (frozenset({128, 256}), _N16),
    (True, 1, False): (frozenset({32, 64, 128}), frozenset({64, 128, 256})),
    (True, 1, True): (frozenset({32, 64, 128}), frozenset({64, 128})),
}
SHAPE_TABLE: dict[str, dict[tuple[bool, int, bool], tuple[frozenset[int], frozenset[int]]]] = {
    "f16": _DENSE_SHAPES,
    "tf32": _DENSE_SHAPES,
    "f8f6f4": _DENSE_SHAPES,
    "i8": _DENSE_SHAPES
    | {(False, 1, s): (frozenset({64, 128}), N_VALUES["i8"]) for s in (False, True)}
    | {(False, 2, s): (frozenset({128, 256}), _N32) for s in (False, True)},
}
for _kind in BLOCK_SCALED:
    SHAPE_TABLE[_kind] = {
        (False, 1, False): (frozenset({128}), _N8),
        (False, 1, True): (frozenset({128}), _N8),
        (False, 2, False): (frozenset({128, 256}), _N16),
        (False, 2, True): (frozenset({256}), _N16),
    }
#: Table 50 ("Various combinations of N shape with .cta_group qualifier for 8bit transpose B"):
#: cta_group::1 "16 <= N <= 256, step 16", cta_group::2 "32 <= N <= 256, step 32".
TRANSPOSE_B8_N = {1: _N16, 2: _N32}


def check_shape(instr: InstrDescriptor, *, cta_group: int, ws: bool = False) -> None:
    """The M and N of ``instr`` against the form it is used with (``.cta_group::{cta_group}``,
    ``.ws`` or not): Table 39 (§9.7.16.2.1), Table 50 (§9.7.16.10.1, 8-bit transposed B), and the
    maximum shift, "Maximum shift while attempting B matrix -reuse in .ws" (Table 42), which we
    read as meaningful, and so allowed to be non-zero, only with ``.ws``."""
    kind = instr.kind
    if cta_group not in (1, 2):
        raise OperandError(f"cta_group is 1 or 2, got {cta_group!r}", section=SHAPES)
    where = f".kind::{kind}{' .ws' if ws else ''} .cta_group::{cta_group} {'sparse' if instr.sparse else 'dense'}"
    entry = SHAPE_TABLE[kind].get((ws, cta_group, instr.sparse))
    if entry is None:
        raise OperandError(f'{where}: Table 39 says "Invalid"', section=SHAPES)
    ms, ns = entry
    if instr.m not in ms or instr.n not in ns:
        raise OperandError(
            f"{where}: M = {instr.m}, N = {instr.n} is not a shape of Table 39 (M in {sorted(ms)}, N from {min(ns)} to {max(ns)}, {len(ns)} values)",
            section=SHAPES,
        )
    if instr.transpose_b and TYPE_BITS[instr.btype] == 8 and instr.n not in TRANSPOSE_B8_N[cta_group]:
        raise OperandError(
            f'{where}: 8-bit transposed B with N = {instr.n} (Table 50: cta_group::1 "16 <= N <= 256, step 16", cta_group::2 "32 <= N <= 256, step 32")',
            section=TRANSPOSE_NEGATE,
        )
    if instr.max_shift and not ws:
        raise OperandError(f'{where}: maximum shift {instr.max_shift} without .ws ("Maximum shift while attempting B matrix -reuse in .ws")', section=INSTR)


def check_operands(instr: InstrDescriptor, a: SmemDescriptor | None = None, b: SmemDescriptor | None = None) -> None:
    """The rules that tie the instruction descriptor to the shared memory descriptors of A
    (``a``; None when A is in Tensor Memory) and B:

    * §9.7.16.3.1.2.1 (absolute leading dimension): "Only K-Major mode is supported. That is, the
      transpose bits(bits #15 and #16) in Instruction descriptor must be 0."
    * §9.7.16.10.1: "For .kind::tf32, the transpose operations on matrices A and B are supported
      only with 128B swizzling mode with 32B swizzle-atomicity. For all other MMA-Kinds, the
      transpose operations on matrices A and B are not supported on 128B swizzling mode with 32B
      swizzle-atomicity."
    """
    for operand, desc, transpose in (("A", a, instr.transpose_a), ("B", b, instr.transpose_b)):
        if desc is None:
            continue
        if desc.leading_mode == "absolute" and (instr.transpose_a or instr.transpose_b):
            raise OperandError(
                f"{operand}'s absolute leading dimension address with a transpose bit set "
                '("the transpose bits(bits #15 and #16) in Instruction descriptor must be 0")',
                section=ABSOLUTE,
            )
        if transpose and instr.kind == "tf32" and desc.swizzle != "128B_base32B":
            raise OperandError(
                f'transposed .kind::tf32 {operand} with {desc.swizzle} swizzling ("supported only with 128B swizzling mode with 32B swizzle-atomicity")',
                section=TRANSPOSE_NEGATE,
            )
        if transpose and instr.kind != "tf32" and desc.swizzle == "128B_base32B":
            raise OperandError(
                f'transposed .kind::{instr.kind} {operand} with 128B_base32B swizzling ("not supported on 128B swizzling mode with 32B swizzle-atomicity")',
                section=TRANSPOSE_NEGATE,
            )


def check_target(descriptor: SmemDescriptor | InstrDescriptor, target: str) -> None:
    """The sm_103a features: "The byte address mode for the leading dimension stride is supported
    on sm_103a" (§9.7.16.4.1.1) and "K = 96 is only supported for target architecture sm_103a"
    (§9.7.16.2.1.1). Other descriptors are for every tcgen05 target."""
    if isinstance(descriptor, SmemDescriptor) and descriptor.leading_mode == "absolute" and target != SM_103A:
        raise OperandError(f'the absolute leading dimension address on {target} ("supported on sm_103a")', section=SMEM_TARGET)
    if isinstance(descriptor, InstrDescriptor) and descriptor.k96 and target != SM_103A:
        raise OperandError(f'K = 96 on {target} ("only supported for target architecture sm_103a")', section=SHAPES_TARGET)


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.3 The zero-column mask descriptor
# ---------------------------------------------------------------------------------------------

#: Table 45: "0-7, 8-15, 16-23, 24-31: Start Count 0-3 (sc0-sc3); 32-35: First Span 0-3 (fs0-fs3);
#: 36-38: Reserved; 39: Non-Zero Mask; 40-47: Skip Span; 48-55: Use Span; 56-61: Column Shift".
#: Bits 62-63 are in no row.
MASK_FIELDS = {
    "sc0": (0, 8),
    "sc1": (8, 8),
    "sc2": (16, 8),
    "sc3": (24, 8),
    "fs0": (32, 1),
    "fs1": (33, 1),
    "fs2": (34, 1),
    "fs3": (35, 1),
    "reserved_36": (36, 3),
    "non_zero_mask": (39, 1),
    "skip_span": (40, 8),
    "use_span": (48, 8),
    "column_shift": (56, 6),
}
MASK_DEFINED_BITS = _covered(MASK_FIELDS)
#: "M | Zero-Column Mask breakup: 128 Single sub-mask of size N-bits; 64 Two sub-masks, each with
#: size of N/2 bits; 32 Four sub-masks, each with size of N/4 bits".
SUB_MASKS = {128: 1, 64: 2, 32: 4}


def _four(width: int, name: str):
    def check(_instance: object, _attribute: attrs.Attribute, value: object) -> None:
        if not isinstance(value, tuple) or len(value) != 4 or not all(_fits(v, width) for v in value):
            raise OperandError(f"zero-column mask descriptor: {name} are four {width}-bit values, got {value!r}", section=MASK)

    return check


def _mask_field(width: int):
    def check(_instance: object, attribute: attrs.Attribute, value: object) -> None:
        if not _fits(value, width):
            raise OperandError(f"zero-column mask descriptor: {attribute.name} {value!r} is not a {width}-bit value", section=MASK)

    return check


@attrs.frozen
class ZeroColumnMaskDescriptor:
    """§9.7.16.4.3: "The zero-column mask descriptor is used to generate a mask that specifies
    which columns of B matrix will have zero value for the MMA operation regardless of the values
    present in the shared memory. The total size of the generated mask is N-bits. A 0-bit in the
    mask specifies that values of the corresponding column in matrix B should be used for the MMA
    operation. A 1-bit in the mask specifies 0s must be used for the entire column". A 64-bit value
    (Table 45, :data:`MASK_FIELDS`). The fields hold the encoded values: ``start_counts``
    (sc0..sc3), ``first_spans`` (fs0..fs3), ``non_zero_mask``, ``skip_span`` and ``use_span``
    ("count - 1"), ``column_shift``.

    **Which span is which: we follow the worked examples.** Table 45 says "Skip Span: (Count of
    consecutive columns where B matrix is used) - 1" and "Use Span: (Count of consecutive columns
    where 0s ar used) - 1". Its Example 2 ("M = 128 ... Start count {-, -, -, 0}, First span {-, -,
    -, 0}, Non-Zero Mask 1, Skip Span 2, Use Span 3, Shift 0 ... Output mask0: 0b … 111 0000 111
    0000") has runs of four 0-bits (columns used: Use Span + 1) and three 1-bits (columns zeroed:
    Skip Span + 1) -- the opposite of the prose; Examples 3 and 4 agree with Example 2. We take
    Skip Span + 1 as the count of *zeroed* (skipped) columns and Use Span + 1 as the count of
    *used* columns because (1) all three examples with a mask say so and an example is a checkable
    encoding where a table cell is easy to swap, (2) the fields' own names say so (a column whose
    B values are skipped is a 0 column), and (3) CUTLASS's ``MaskAndShiftB``
    (cute/arch/mma_sm100_desc.hpp) documents the same: "``skip_span_`` ... consecutive columns where 0
    value is used", "``use_span_`` ... consecutive columns where B matrix data is used".

    The rest, as the examples show it (:func:`sub_masks`): First Span ("Specifies the starting
    value for sub-mask mask-i") is the value of the first run (0: used columns first); Start Count
    ("Specifies the LSBs that must be skipped for sub-mask mask-i") drops that many bits from the
    start of the periodic pattern (Example 4, sc1 = 1: "0b … 0000 111 0000 11"); a sub-mask's
    bit 0 is its first column. Column Shift does not move the mask: it selects B's columns ("If N
    = 128 then B Matrix with columns from 2 to 129 will be used for the MMA operation, due to the
    shift of 2"; the example's masks are unshifted): :func:`b_column`.
    """

    start_counts: tuple[int, int, int, int] = attrs.field(default=(0, 0, 0, 0), validator=_four(8, "start counts"))
    first_spans: tuple[int, int, int, int] = attrs.field(default=(0, 0, 0, 0), validator=_four(1, "first spans"))
    non_zero_mask: bool = attrs.field(default=False, validator=_flag)
    skip_span: int = attrs.field(default=0, validator=_mask_field(8))
    use_span: int = attrs.field(default=0, validator=_mask_field(8))
    column_shift: int = attrs.field(default=0, validator=_mask_field(6))

    def fields(self) -> dict[str, int]:
        """The value of each bit-field of Table 45 (:data:`MASK_FIELDS`; §9.7.16.4.3)."""
        values = {f"sc{i}": c for i, c in enumerate(self.start_counts)} | {f"fs{i}": s for i, s in enumerate(self.first_spans)}
        return values | {
            "reserved_36": 0,
            "non_zero_mask": int(self.non_zero_mask),
            "skip_span": self.skip_span,
            "use_span": self.use_span,
            "column_shift": self.column_shift,
        }

    def encode(self) -> int:
        """The 64-bit register value (§9.7.16.4.3, Table 45)."""
        return pack(MASK_FIELDS, self.fields())

    @classmethod
    def decode(cls, value: int) -> ZeroColumnMaskDescriptor:
        """The descriptor in a 64-bit register (§9.7.16.4.3). Refused: the reserved bits 36-38 and
        bits 62-63 (in no row of Table 45)."""
        value = _register(value, 64, "zero-column mask descriptor", MASK)
        if value & ~MASK_DEFINED_BITS or unpack(MASK_FIELDS, value)["reserved_36"]:
            raise OperandError(f"zero-column mask descriptor {value:#018x} sets reserved or undefined bits (36-38, 62-63)", section=MASK)
        f = unpack(MASK_FIELDS, value)
        return cls(
            start_counts=(f["sc0"], f["sc1"], f["sc2"], f["sc3"]),
            first_spans=(f["fs0"], f["fs1"], f["fs2"], f["fs3"]),
            non_zero_mask=bool(f["non_zero_mask"]),
            skip_span=f["skip_span"],
            use_span=f["use_span"],
            column_shift=f["column_shift"],
        )


def _sub_mask_count(descriptor: ZeroColumnMaskDescriptor, m: int) -> int:
    """The number of sub-masks for M (§9.7.16.4.3's table), with the shift's limit for M: "Max
    shift amount = 16 for M=32 Max shift amount = 32 otherwise"."""
    if m not in SUB_MASKS:
        raise OperandError(f"zero-column mask for M = {m} (the table gives M = 128, 64, 32)", section=MASK)
    limit = 16 if m == 32 else 32
    if descriptor.column_shift > limit:
        raise OperandError(
            f'column shift {descriptor.column_shift} for M = {m} ("Max shift amount = 16 for M=32 Max shift amount = 32 otherwise")', section=MASK
        )
    return SUB_MASKS[m]


def _mask_shape(descriptor: ZeroColumnMaskDescriptor, m: int, n: int) -> int:
    parts = _sub_mask_count(descriptor, m)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n % parts:
        raise OperandError(f"zero-column mask of N = {n!r} columns for M = {m} ({parts} sub-masks of N/{parts} bits)", section=MASK)
    return parts


def sub_masks(descriptor: ZeroColumnMaskDescriptor, m: int, n: int) -> tuple[int, ...]:
    """The sub-masks mask0.. of an MMA of M rows and N columns (§9.7.16.4.3; one for M = 128, two
    of N/2 bits for 64, four of N/4 bits for 32), bit ``j`` of ``mask_i`` for column ``j`` of its
    range. "Value 0 indicates generated mask will have all 0s"; otherwise the pattern of
    :class:`ZeroColumnMaskDescriptor` (our reading of the spans: Use Span + 1 used columns, bit 0;
    Skip Span + 1 zeroed columns, bit 1): bit ``j`` of ``mask_i`` is bit ``j + sc_i`` of the
    periodic pattern that starts with a run of ``fs_i``."""
    parts = _mask_shape(descriptor, m, n)
    width = n // parts
    if not descriptor.non_zero_mask:
        return (0,) * parts
    runs = {0: descriptor.use_span + 1, 1: descriptor.skip_span + 1}
    period = runs[0] + runs[1]
    masks = []
    for i in range(parts):
        first = descriptor.first_spans[i]
        mask = 0
        for j in range(width):
            phase = (j + descriptor.start_counts[i]) % period
            bit = first if phase < runs[first] else 1 - first
            mask |= bit << j
        masks.append(mask)
    return tuple(masks)


def zero_column_mask(descriptor: ZeroColumnMaskDescriptor, m: int, n: int) -> int:
    """The N-bit mask (§9.7.16.4.3): the sub-masks side by side, "mask0: Columns [0, N/2-1],
    mask1: Columns [N/2, N-1]" (M = 64) and so on; bit ``j`` set: column ``j`` is zero."""
    masks = sub_masks(descriptor, m, n)
    width = n // len(masks)
    return sum(mask << (i * width) for i, mask in enumerate(masks))


def b_column(descriptor: ZeroColumnMaskDescriptor, column, m: int = 128):
    """The column of B that column ``column`` of the MMA reads: "Shifts column by specified
    amount. Thus allows MMA on non-0 starting column" -- "If N = 128 then B Matrix with columns
    from 2 to 129 will be used for the MMA operation, due to the shift of 2" (§9.7.16.4.3)."""
    _sub_mask_count(descriptor, m)
    if isinstance(column, int):
        return column + descriptor.column_shift
    return np.asarray(column) + descriptor.column_shift


__all__ = [
    "SmemDescriptor",
    "InstrDescriptor",
    "ZeroColumnMaskDescriptor",
    "element_address",
    "padded_unit_offset",
    "gather",
    "tmem_a_container",
    "tmem_a_payload",
    "tmem_a_container_value",
    "PADDED_FORMATS",
    "TMEM_PAYLOAD_LOW_BIT",
    "base_offset_for",
    "matrix_descriptor_encode",
    "check_shape",
    "check_operands",
    "check_target",
    "scale_factor_ids",
    "sub_masks",
    "zero_column_mask",
    "b_column",
    "pack",
    "unpack",
    "PtxSpecError",
]
