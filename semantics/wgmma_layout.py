"""Where the operands of ``wgmma.mma_async`` and ``wgmma.mma_async.sp`` live (§9.7.15.5.1,
§9.7.15.6): the matrix descriptor, the canonical shared-memory layouts with their swizzles, the
register fragments of the 128 threads of a warpgroup, and the sparse A with its metadata.

Shared memory (§9.7.15.5.1.2)
    A matrix in shared memory is given by a 64-bit :class:`MatrixDescriptor` (start address,
    leading dimension byte offset LBO, stride dimension byte offset SBO, base offset, swizzle mode)
    and is either K-major ("if imm-trans-a / imm-trans-b is 0, matrix A / B uses the K-major
    layout") or MN-major ("if imm-trans-a is 1, A uses the M-major layout; if imm-trans-b is 1, B
    uses the N-major layout"). :func:`element_address` gives the byte (and bit) of each element,
    :func:`read_matrix` / :func:`write_matrix` apply it to a byte image of shared memory.

Registers (§9.7.15.5.1.1, §9.7.15.6.2)
    :func:`fragment_layout` gives a :class:`~ptxspec.semantics.matrix_layout.FragmentLayout` held
    by the 128 threads of the warpgroup (``thread = 32 * warp + lane``, the warp being
    the warp's rank in the warpgroup, "%warpid % 4"). The manual gives these layouts as figures
    only (figures 147-154, 175, 177, 179); our reading, which the figures show and the text of
    §9.7.15.6.2 states for the sparse A ("each warp in the warpgroup provides sparsity information
    for 16 rows of matrix A: %warpid % 4 = 0: rows 0-15, ..., = 3: rows 48-63"), is that warp ``w``
    holds rows ``16w .. 16w+15`` laid out as the warp-level ``mma`` of §9.7.14.5 lays out its 16
    rows: A as the ``m16n8k{K}`` A fragment, D as the m16n8 C fragment repeated over the N/8
    column blocks.

The composition that the numerics (``semantics/mma.py``) needs is :func:`wgmma_operands` (a
form, a shared-memory image, descriptors or registers -> the A, B, C matrices of element bit
patterns) and :func:`wgmma_result_registers` (D -> the 128 threads' registers).

Notes (readings where the manual's text does not decide; silicon does):

* Swizzling acts on byte addresses: the manual names "Swizzle<3,4,3>" (128B), "<2,4,3>" (64B),
  "<1,4,3>" (32B) next to layouts in units of elements, but its swizzle atoms are given "in units
  of 128b elements" (Table 37) and ``M = 4`` is one 16-byte (128-bit) unit only in bytes.
* The base offset: we read "base offset = (pattern start addr >> 0x7) & 0x7" as naming the
  128-byte line of the address bits at which the pattern starts, and count the pattern's rows from
  there (:func:`swizzle_address`). With the pattern on its 1024/512/256-byte boundary (base offset
  0) this is the plain address-bit XOR; other cases are for silicon to confirm.
* K-major swizzled layouts hold ``W`` bytes of K per row; the manual's own example "K-Major, 32B
  swizzling and tf32: ((8,2),(4,4)):((8,64),(1,4))" would put K = 8..15 of a row on the next row's
  K = 0..7, so we define (and the tests check) the layouts only for K within one row -- one
  wgmma's K (32 bytes) always is.
* ``.b1`` elements in shared memory: bit ``i % 8`` of the byte, least significant first.
* tcgen05 (sm_100) uses these layouts too (``semantics/tcgen05_descriptors.py``), with one more
  swizzle that wgmma's descriptor cannot encode, "128B_base32B" ("128-Byte with 32B atomic
  swizzling"): MN-major only, ``Swizzle<2,5,2>`` over atoms of 128 bytes of MN by 4 K. The manual
  gives its atom (Table 53) but neither its swizzle function nor its canonical layout; both are
  NVIDIA CUTLASS's (see :func:`canonical_offset`, :data:`SWIZZLES`).
* The fragment figures (147-154, 175-181) are images: see "Registers" above.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs
import numpy as np

from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import sparse as sparse_mechanism
from ptxspec.semantics.sparse import SparseOperand
from ptxspec.spec import wgmma as wg
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.matrix import ELEMENT_BITS

DESCRIPTOR = "9.7.15.5.1.2.2"
LAYOUTS = "9.7.15.5.1.2"
FRAGMENTS = "9.7.15.5.1.1"
SPARSE = "9.7.15.6"
WGMMA_SECTION = "9.7.15.5.2"

THREADS = ml.WARPGROUP
WARP = ml.WARP
#: "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4": addresses and offsets of 18 bits, in units
#: of 16 bytes.
ADDRESS_BITS = 18

# ---------------------------------------------------------------------------------------------
# §9.7.15.5.1.2.2 The matrix descriptor
# ---------------------------------------------------------------------------------------------

#: "Bits 63-62: the swizzling mode: 0: no swizzle, 1: 128-byte swizzle, 2: 64-byte swizzle,
#: 3: 32-byte swizzle."
SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_NAMES = {code: name for name, code in SWIZZLE_CODES.items()}
#: The width in bytes of one row of the swizzle atom (Table 37: 128B swizzle, K-major: 8x8
#: 128-bit elements; 64B: 8x4; 32B: 8x2; none: 8x1). ``"128B_base32B"`` is the sm_100 mode
#: "128-Byte with 32B atomic swizzling" (§9.7.16.4.1 Table 40, code 1), which wgmma's descriptor
#: cannot name: Table 53 (§9.7.16.10.6) "128B Swizzling with 32B atomicity | M/N | 8x4", rows of
#: 8 128-bit elements (128 bytes) of MN, MN-major only (K-major: "–").
SWIZZLE_BYTES = {"none": 16, "128B": 128, "64B": 64, "32B": 32, "128B_base32B": 128}
#: "The base offset is 0 when the repeating pattern of the swizzling mode starts at: 128-byte
#: swizzle: a 1024-byte boundary; 64-byte: 512-byte; 32-byte: 256-byte." The manual's tables
#: (Table 41 of §9.7.16.4.1 too) give no row for "128B_base32B"; its swizzle, ``Swizzle<2,5,2>``
#: (:data:`SWIZZLES`), repeats every 4 rows of 128 bytes, 512 bytes, which we take as its pattern
#: (our reading; see :func:`swizzle_address` for why 512 and 1024 give the same addresses).
PATTERN_BYTES = {"128B": 1024, "64B": 512, "32B": 256, "128B_base32B": 512}
#: The ``Swizzle<B,M,S>`` of each swizzled mode, acting on byte addresses (CuTe's functor: the B
#: bits from bit M + S up XORed into the B bits from bit M up). §9.7.15.5.1.2.1.3 names
#: "Swizzle<3,4,3>" (128B), "<2,4,3>" (64B), "<1,4,3>" (32B); the manual names none for
#: "128B_base32B", whose atom of 32-byte units (Table 53: 8x4, "32B atomicity") is NVIDIA CUTLASS's
#: ``Swizzle<2,5,2>`` (``UMMA::Layout_MN_SW128_32B_Atom``, and ``UMMA::layout_type`` maps M = 5,
#: B = S = 2 to ``SWIZZLE_128B_BASE32B``): the 32-byte chunk (address bits 5-6) XORed with the
#: 128-byte row (bits 7-8).
SWIZZLES = {"128B": (3, 4, 3), "64B": (2, 4, 3), "32B": (1, 4, 3), "128B_base32B": (2, 5, 2)}
#: K rows (columns of the MN-major matrix) in one MN-major swizzle atom: 8 (Table 37; Table 53 "M/N
#: 8x8, 4x8, 2x8, 1x8"), but 4 for "128B_base32B" (Table 53 "M/N | 8x4").
MN_ATOM_K = {"none": 8, "32B": 8, "64B": 8, "128B": 8, "128B_base32B": 4}
#: The section of the sm_100 swizzle atoms (Table 53), for "128B_base32B" refusals.
TCGEN05_ATOMS = "9.7.16.10.6"

#: (lowest bit, width) of each field: "13-0: matrix-descriptor-encode(matrix start address);
#: 29-16: ...(leading dimension byte offset); 45-32: ...(stride dimension byte offset); 51-49:
#: matrix base offset; 63-62: the swizzling mode".
FIELDS = {"start_address": (0, 14), "leading_byte_offset": (16, 14), "stride_byte_offset": (32, 14), "base_offset": (49, 3), "swizzle": (62, 2)}
DEFINED_BITS = sum(((1 << width) - 1) << low for low, width in FIELDS.values())


def _byte_field(name: str) -> Callable[[object, attrs.Attribute, int], None]:
    def check(instance: object, _attribute: attrs.Attribute, value: int) -> None:
        if not isinstance(value, (int, np.integer)) or not 0 <= value < (1 << ADDRESS_BITS):
            raise OperandError(
                f"matrix descriptor: the {name} {value!r} does not fit the descriptor's 14-bit field "
                f'("matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4": 0 <= x < 2**18)',
                section=DESCRIPTOR,
            )
        if value % 16:
            raise OperandError(
                f"matrix descriptor: the {name} {value:#x} is not a multiple of 16 (the descriptor keeps x >> 4; "
                '"when matrices are in shared memory, their start address must be 16-byte aligned")',
                section=DESCRIPTOR,
            )

    return check


def _base_offset(instance: object, _attribute: attrs.Attribute, value: int) -> None:
    if not isinstance(value, (int, np.integer)) or not 0 <= value < 8:
        raise OperandError(f"matrix descriptor: the base offset {value!r} is not a 3-bit value (bits 51-49)", section=DESCRIPTOR)


def _swizzle(instance: object, _attribute: attrs.Attribute, value: str) -> None:
    if value not in SWIZZLE_CODES:
        raise OperandError(f"matrix descriptor: no swizzling mode {value!r} (the modes are {', '.join(SWIZZLE_CODES)})", section=DESCRIPTOR)


@attrs.frozen
class MatrixDescriptor:
    """§9.7.15.5.1.2.2: "the matrix descriptor specifies the properties of a matrix in shared
    memory that is a multiplicand in the matrix multiply and accumulate operation. It is a 64-bit
    value contained in a register". Fields in bytes (the descriptor stores them ``>> 4``); the
    constructor raises :class:`~ptxspec.spec.errors.OperandError` for a value the descriptor cannot
    hold (an address or offset not a multiple of 16 or not below 2**18, a base offset above 7, an
    unknown swizzle)."""

    start_address: int = attrs.field(validator=_byte_field("matrix start address"))
    leading_byte_offset: int = attrs.field(default=16, validator=_byte_field("leading dimension byte offset"))
    stride_byte_offset: int = attrs.field(default=16, validator=_byte_field("stride dimension byte offset"))
    base_offset: int = attrs.field(default=0, validator=_base_offset)
    swizzle: str = attrs.field(default="none", validator=_swizzle)

    def encode(self) -> int:
        """The 64-bit value: each byte field as "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4"."""
        value = 0
        for name, (low, _width) in FIELDS.items():
            field = getattr(self, name)
            if name == "swizzle":
                field = SWIZZLE_CODES[field]
            elif name != "base_offset":
                field = (field & 0x3FFFF) >> 4
            value |= field << low
        return value

    @classmethod
    def decode(cls, value: int) -> MatrixDescriptor:
        """The descriptor held in a 64-bit register. The manual defines no bits but those of
        :data:`FIELDS`; a value with any other bit set is refused rather than given a meaning."""
        value = int(value)
        if not 0 <= value < 1 << 64:
            raise OperandError(f"matrix descriptor {value!r} is not a 64-bit value", section=DESCRIPTOR)
        if value & ~DEFINED_BITS:
            raise OperandError(
                f"matrix descriptor {value:#018x} sets bits {value & ~DEFINED_BITS:#018x} outside the fields of §{DESCRIPTOR} "
                "(13-0, 29-16, 45-32, 51-49, 63-62)",
                section=DESCRIPTOR,
            )
        fields = {name: (value >> low) & ((1 << width) - 1) for name, (low, width) in FIELDS.items()}
        return cls(
            start_address=fields["start_address"] << 4,
            leading_byte_offset=fields["leading_byte_offset"] << 4,
            stride_byte_offset=fields["stride_byte_offset"] << 4,
            base_offset=fields["base_offset"],
            swizzle=SWIZZLE_NAMES[fields["swizzle"]],
        )


def base_offset_for(pattern_start: int, swizzle: str) -> int:
    """The base offset of a swizzled matrix whose repeating pattern starts at ``pattern_start``:
    "0 when the repeating pattern starts at the boundary (1024, 512, 256 bytes); otherwise the
    base offset must be non-zero, computed as: base offset = (pattern start addr >> 0x7) & 0x7"."""
    if swizzle == "none":
        return 0
    if pattern_start % PATTERN_BYTES[swizzle] == 0:
        return 0
    return (pattern_start >> 7) & 7


def as_descriptor(descriptor: MatrixDescriptor | int | np.integer) -> MatrixDescriptor:
    return descriptor if isinstance(descriptor, MatrixDescriptor) else MatrixDescriptor.decode(int(descriptor))


# ---------------------------------------------------------------------------------------------
# §9.7.15.5.1.2 Canonical layouts and swizzles
# ---------------------------------------------------------------------------------------------


def element_bits(element_type: str) -> int:
    """The element width of a wgmma multiplicand: "8-bit data elements when .atype/.btype is
    .e4m3/.e5m2", "16-bit ... .bf16", "32-bit ... .tf32" (§9.7.15.5.2); .f16 16, .s8/.u8 8,
    .b1 1."""
    element_type = element_type.removeprefix(".")
    if element_type not in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"):
        raise OperandError(f"no wgmma multiplicand type .{element_type}", section="9.7.15.3")
    return ELEMENT_BITS[element_type]


def canonical_offset(major: str, swizzle: str, bits: int, mn, k, lbo: int, sbo: int):
    """The offset in bytes (before swizzling) of the element ``(mn, k)`` -- ``mn`` its index along M
    (for A) or N (for B), ``k`` along K -- and its bit within that byte (0 but for ``.b1``),
    following §9.7.15.5.1.2.1.3's canonical layouts, written in units of elements with "T = 128 /
    sizeof-elements-in-bits" elements per 16 bytes:

    ==========  ============  =====================================================
    major-ness  swizzling     canonical layout
    ==========  ============  =====================================================
    MN          none          ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``
    MN          32B           ``((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))``
    MN          64B           ``((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))``
    MN          128B          ``((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))``
    K           none          ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``
    K           32B           ``((8,m),(T,2k)):((2T,SBO),(1,T))``
    K           64B           ``((8,m),(T,2k)):((4T,SBO),(1,T))``
    K           128B          ``((8,m),(T,2k)):((8T,SBO),(1,T))``
    MN          128B_base32B  ``((T,8,m),(4,k)):((1,T,LBO),(8T,SBO))`` (sm_100 only)
    ==========  ============  =====================================================

    (the first mode of each layout is the MN index, the second the K index). In bytes, with ``W``
    the swizzle width (:data:`SWIZZLE_BYTES`): K-major, no swizzle: 8 rows of 16 bytes, the next 16
    bytes of K at LBO, the next 8 rows at SBO; K-major swizzled: rows of ``W`` bytes, K contiguous
    within the row ("LBO: not used for swizzled layouts, assumed 1"), the next 8 rows at SBO;
    MN-major, no swizzle: 16 bytes of MN by 8 K, the next 16 bytes of MN at SBO, the next 8 K at
    LBO; MN-major swizzled: ``W`` bytes of MN by 8 K, the next ``W`` bytes of MN at LBO, the next
    8 K at SBO (§9.7.15.5.1.2.1.1-2: "MN-major, swizzled: LBO is the offset from the first
    (swizzle-byte-size/16) rows to the next (swizzle-byte-size/16) rows", "SBO: the offset from the
    first 8 columns to the next 8 columns").

    "128B_base32B" (tcgen05's "128-Byte with 32B atomic swizzling"; wgmma's descriptor has no code
    for it): MN-major only, Table 53 (§9.7.16.10.6) "128B Swizzling with 32B atomicity | M/N |
    8x4" -- 128 bytes of MN by 4 K, the next 128 bytes of MN at LBO, the next **4** K at SBO. The
    manual gives no canonical-layout row for it (§9.7.16.3.3) and its SBO text (§9.7.16.3.2,
    "Swizzled layout: offset from the first 8 columns to the next 8 columns") is the 8-K atoms';
    the row above is NVIDIA CUTLASS's (``make_umma_desc<Major::MN>``: the tensor divided into atoms
    of 8 x 4 128-bit units, ``SwizzleAtomKSize = 4``, the K stride within the atom asserted to be
    ``SwizzleAtomMNSize`` = 8 units -- its comment's "(?T,SBO)" -- LBO = the stride between MN
    atoms, SBO = the stride between 4-K groups; ``Layout_MN_SW128_32B_Atom_Bits = Swizzle<2,5,2> o
    (1024,4):(1,1024)`` in bits). K-major "128B_base32B" is refused (Table 53: "–";
    CUTLASS: "SWIZZLE_128B_BASE32B is invalid for Major-K").
    """
    mn = np.asarray(mn, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    T = 128 // bits
    width = SWIZZLE_BYTES[swizzle]
    if major == "K":
        if swizzle == "128B_base32B":
            raise OperandError(
                'no K-major layout with 128B swizzling of 32B atomicity (Table 53: "128B Swizzling with 32B atomicity | M/N | 8x4", K: "–")',
                section=TCGEN05_ATOMS,
            )
        if swizzle == "none":
            bit = (k % T) * bits
            byte = (mn % 8) * 16 + (mn // 8) * sbo + (k // T) * lbo
        else:
            bit = k * bits
            byte = (mn % 8) * width + (mn // 8) * sbo
    elif major == "MN":
        per_row = T * (width // 16)  # MN elements in one row of the atom
        bit = (mn % per_row) * bits
        if swizzle == "none":
            byte = (k % 8) * 16 + (k // 8) * lbo + (mn // T) * sbo
        else:
            rows = MN_ATOM_K[swizzle]
            byte = (k % rows) * width + (k // rows) * sbo + (mn // per_row) * lbo
    else:
        raise OperandError(f"major-ness must be 'K' or 'MN', got {major!r}", section=LAYOUTS)
    return byte + bit // 8, bit % 8


def swizzle_address(address, swizzle: str, base_offset: int = 0):
    """The swizzled byte address: "Swizzle<3,4,3>" (128B), "Swizzle<2,4,3>" (64B), "Swizzle<1,4,3>"
    (32B) of §9.7.15.5.1.2.1.3 -- the 16-byte unit (bits 4 and up, "M = 4") XORed with the address
    bits 7 and up ("S = 3" above it), B = 3, 2, 1 bits of them -- so that within the repeating
    pattern (1024, 512, 256 bytes) the 16-byte chunk ``c`` of 128-byte row ``r`` is stored at chunk
    ``c ^ (r mod 2**B)``. tcgen05's "128B_base32B" is ``Swizzle<2,5,2>`` (:data:`SWIZZLES`): the
    32-byte chunk ``c`` (bits 5-6) of 128-byte row ``r`` of its 512-byte pattern at chunk
    ``c ^ (r mod 4)`` -- the rows are again the address bits 7 and up (M + S = 7 for every mode).

    The pattern's rows are counted from the pattern's start: the manual's base offset
    "(pattern start addr >> 0x7) & 0x7" names the row of the address bits at which it starts, so
    the row is ``(address >> 7) - base offset`` (this is our reading: with base offset 0 and
    patterns on their boundary, it is the address bits 7-9 themselves; see the module's notes).
    Only the base offset modulo ``2**B`` counts, so for "128B_base32B" (B = 2) a 512-byte and a
    1024-byte pattern boundary (:data:`PATTERN_BYTES`; Table 41 has no row for the mode) give the
    same addresses. "No swizzle" leaves the address as it is ("the base offset ... is valid for all
    swizzling modes except no-swizzle mode").
    """
    address = np.asarray(address, dtype=np.int64)
    if swizzle == "none":
        return address
    bits, base, shift = SWIZZLES[swizzle]
    row = ((address >> (base + shift)) - base_offset) & ((1 << bits) - 1)
    return address ^ (row << base)


def element_address(descriptor: MatrixDescriptor | int, element_type: str, mn, k, major: str):
    """(byte address, bit) in shared memory of element ``(mn, k)`` of the matrix that
    ``descriptor`` describes: start address + :func:`canonical_offset`, then
    :func:`swizzle_address` (vectorised over ``mn`` and ``k``)."""
    d = as_descriptor(descriptor)
    bits = element_bits(element_type)
    byte, bit = canonical_offset(major, d.swizzle, bits, mn, k, d.leading_byte_offset, d.stride_byte_offset)
    return swizzle_address(d.start_address + byte, d.swizzle, d.base_offset), bit


def _check_extent(d: MatrixDescriptor, bits: int, k_extent: int, major: str) -> None:
    """A K-major swizzled row holds ``W`` bytes of K: "((8,m),(T,2k)):((W/16 T,SBO),(1,T))" maps a
    longer K onto the next rows, so the layout is defined for K up to ``W`` bytes only (one
    wgmma's K is always 32 bytes: k16 .f16, k8 .tf32, k32 8-bit, k256 .b1)."""
    if major == "K" and d.swizzle != "none" and k_extent * bits > SWIZZLE_BYTES[d.swizzle] * 8:
        raise OperandError(
            f"a K-major {d.swizzle}-swizzled matrix holds at most {SWIZZLE_BYTES[d.swizzle]} bytes of K per row; {k_extent} elements of {bits} bits do not fit",
            section=LAYOUTS,
        )


@functools.lru_cache(maxsize=512)
def _addresses(d: MatrixDescriptor, element_type: str, rows: int, cols: int, major: str, operand: str) -> tuple[np.ndarray, np.ndarray]:
    """Byte address and bit of every element of the [rows, cols] matrix (built once)."""
    if operand not in ("a", "b"):
        raise OperandError(f"a shared-memory multiplicand is 'a' (M x K) or 'b' (K x N), got {operand!r}", section=LAYOUTS)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    mn, k = (r, c) if operand == "a" else (c, r)
    _check_extent(d, element_bits(element_type), cols if operand == "a" else rows, major)
    byte, bit = element_address(d, element_type, mn, k, major)
    byte.setflags(write=False)
    bit = np.asarray(bit)
    bit.setflags(write=False)
    return byte, bit


def _image(image, *, batch: bool = False) -> np.ndarray:
    """Shared memory's bytes: ``bytes`` or a uint8 array ``[bytes]`` (with ``batch``, also
    ``[..., bytes]``: one image per instance)."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(image), dtype=np.uint8)
    array = np.asarray(image)
    if array.dtype != np.uint8 or array.ndim < 1 or (array.ndim > 1 and not batch):
        also = " ([..., bytes] for a batch)" if batch else ""
        raise OperandError(f"a shared-memory image is bytes or a 1-D uint8 array{also}, got {array.dtype} of shape {array.shape}", section=LAYOUTS)
    return array


def _check_image(byte: np.ndarray, nbytes: int, size: int) -> None:
    top = int(byte.max()) + nbytes
    if int(byte.min()) < 0 or top > size:
        raise OperandError(f"the matrix reaches shared-memory byte {top - 1:#x}, beyond the image of {size:#x} bytes", section=LAYOUTS)


def descriptor_array(value, name: str = "matrix descriptor") -> np.ndarray:
    """Descriptor values (uint64, any shape) from 64-bit integers or :class:`MatrixDescriptor`
    objects; ``name`` names the operand in the error."""
    array = np.asarray(value)
    if array.dtype == object:
        try:
            array = np.array([v.encode() if isinstance(v, MatrixDescriptor) else int(v) for v in array.ravel()], dtype=np.uint64).reshape(array.shape)
        except (TypeError, ValueError, OverflowError):
            raise OperandError(f"{name}: descriptors are 64-bit values or MatrixDescriptor objects", section=DESCRIPTOR) from None
    if array.dtype.kind not in "iu" or (array.dtype.kind == "i" and np.any(array < 0)):
        raise OperandError(f"{name}: descriptors are 64-bit unsigned values, got {array.dtype}", section=DESCRIPTOR)
    return array.astype(np.uint64)


def _in_instance(index: int, batch: tuple[int, ...], error: PtxSpecError) -> OperandError:
    """The error of instance ``index`` (flat, in batch order) of a batch of shape ``batch``, named so."""
    where = index if len(batch) == 1 else tuple(int(i) for i in np.unravel_index(index, batch))
    return OperandError(f"instance {where}: {error.message}", where=error.where, section=error.section)


def gather(image: np.ndarray, byte: np.ndarray, bit: np.ndarray, bits: int) -> np.ndarray:
    """The elements of ``bits`` bits at ``(byte, bit)`` (arrays of one shape) of a shared-memory
    image (uint8 ``[bytes]``, or ``[n, bytes]`` for n images: the result gains that axis):
    little-endian bytes from ``byte``; an element narrower than a byte at bit ``bit`` of its byte
    (and of the next, read only when ``bit + bits > 8``: the 6-bit elements of tcgen05's padded
    ``.b6x16_p32`` units, :func:`ptxspec.semantics.tcgen05_descriptors.element_address`).
    The one read of elements out of shared memory, for every layout that gives addresses."""
    image = np.asarray(image, dtype=np.uint8)
    byte = np.asarray(byte, dtype=np.int64)
    index = (slice(None),) + (None,) * byte.ndim if image.ndim == 2 else ()
    rows = np.arange(image.shape[0])[index] if image.ndim == 2 else None

    def at(address: np.ndarray) -> np.ndarray:
        return (image[rows, address] if rows is not None else image[address]).astype(np.uint64)

    if bits < 8:  # within its byte, or (a 6-bit element of tcgen05's padded units) across two
        bit = np.asarray(bit, dtype=np.int64)
        straddles = bit + bits > 8
        window = at(byte) | (np.where(straddles, at(np.where(straddles, byte + 1, byte)), 0).astype(np.uint64) << np.uint64(8))
        return (window >> bit.astype(np.uint64)) & np.uint64((1 << bits) - 1)
    out = np.zeros(image.shape[:-1] + byte.shape, dtype=np.uint64)
    for i in range(bits // 8):
        out |= at(byte + i) << np.uint64(8 * i)
    return out


def read_matrix(
    image, descriptor: MatrixDescriptor | int | np.ndarray, rows: int, cols: int, element_type: str, major: str, *, operand: str = "a"
) -> np.ndarray:
    """The [rows, cols] matrix of element bit patterns (uint64) that ``descriptor`` describes in
    the shared-memory byte image ``image`` (``bytes`` or a 1-D uint8 array, byte 0 = shared-memory
    address 0). ``operand`` "a": an M x K matrix (row = M, col = K); "b": K x N (row = K, col = N).
    ``major``: "K" or "MN". Elements are little-endian; ``.b1`` elements are bits, the element of
    the lower K index in the less significant bit of the byte (our reading; the manual gives no
    bit order for shared memory).

    A batch: ``image`` ``[..., bytes]`` (one image per instance) and/or ``descriptor`` an array
    ``[...]`` of descriptor values (64-bit integers or :class:`MatrixDescriptor` objects); the
    leading axes broadcast and the result is ``[..., rows, cols]``. Instances with one descriptor
    value share one address map (computed once) and one gather; an error names the first instance
    (in batch order) whose descriptor is at fault."""
    element_type = element_type.removeprefix(".")
    bits = element_bits(element_type)
    nbytes = max(1, bits // 8)
    data = _image(image, batch=True)
    one = descriptor if isinstance(descriptor, (MatrixDescriptor, int, np.integer)) else None  # one value for all
    values = np.zeros((), dtype=np.uint64) if one is not None else descriptor_array(descriptor)
    try:
        batch = np.broadcast_shapes(data.shape[:-1], values.shape)
    except ValueError:
        raise OperandError(f"a batch of images {data.shape[:-1]} and of descriptors {values.shape} do not broadcast", section=LAYOUTS) from None
    size = data.shape[-1]
    images = data.reshape(-1, size)
    image_of = np.broadcast_to(np.arange(images.shape[0]).reshape(data.shape[:-1]), batch).reshape(-1)
    codes, first, inverse = np.unique(np.broadcast_to(values, batch).reshape(-1), return_index=True, return_inverse=True)
    out = np.zeros((image_of.size, rows, cols), dtype=np.uint64)
    for group in np.argsort(first, kind="stable"):
        try:
            d = as_descriptor(one if one is not None else int(codes[group]))
            byte, bit = _addresses(d, element_type, rows, cols, major, operand)
            _check_image(byte, nbytes, size)
        except PtxSpecError as error:
            raise (_in_instance(int(first[group]), batch, error) if batch else error) from None
        members = np.flatnonzero(inverse.reshape(-1) == group)
        # one image for the whole batch: gather it once, the assignment broadcasts it
        chosen = image_of[members] if data.ndim > 1 else np.zeros(1, dtype=np.intp)
        out[members] = gather(images[chosen], byte, bit, bits)
    return out.reshape(batch + (rows, cols))


def write_matrix(image, descriptor: MatrixDescriptor | int, matrix, element_type: str, major: str, *, operand: str = "a") -> np.ndarray:
    """The inverse of :func:`read_matrix`: a copy of ``image`` (uint8) with ``matrix`` (element bit
    patterns [rows, cols]) stored where ``descriptor`` places it. Raises
    :class:`~ptxspec.spec.errors.OperandError` when two elements would share a place (the
    descriptor's offsets overlap) or an element does not fit its width."""
    d = as_descriptor(descriptor)
    data = _image(image).copy()
    matrix = np.asarray(matrix, dtype=np.uint64)
    rows, cols = matrix.shape
    byte, bit = _addresses(d, element_type.removeprefix("."), rows, cols, major, operand)
    bits = element_bits(element_type)
    nbytes = max(1, bits // 8)
    _check_image(byte, nbytes, data.size)
    if bits < 64 and np.any(matrix >> np.uint64(bits)):
        raise OperandError(f"an element does not fit {bits} bits", section=LAYOUTS)
    place = byte.astype(np.int64) * 8 + bit
    if np.unique(place).size != place.size:
        raise OperandError(f"the descriptor {d} places two elements of the {rows} x {cols} matrix at the same address", section=LAYOUTS)
    if bits < 8:
        flat_byte, flat_bit, flat = byte.ravel(), bit.ravel().astype(np.uint8), matrix.ravel().astype(np.uint8)
        clear = np.full(data.size, 0xFF, dtype=np.uint8)
        np.bitwise_and.at(clear, flat_byte, ~(np.uint8(1) << flat_bit))
        data &= clear
        np.bitwise_or.at(data, flat_byte, flat << flat_bit)
        return data
    for i in range(nbytes):
        data[byte + i] = ((matrix >> np.uint64(8 * i)) & np.uint64(0xFF)).astype(np.uint8)
    return data


# ---------------------------------------------------------------------------------------------
# §9.7.15.5.1.1 and §9.7.15.6.2 Register fragments over the warpgroup
# ---------------------------------------------------------------------------------------------

Formula = ml.Formula  # (thread 0..127, element number i) -> (row, col)

#: A warpgroup's register fragment is a :class:`~ptxspec.semantics.matrix_layout.FragmentLayout`
#: held by 128 threads (``threads=128``): 32-bit registers, each holding ``32 // element_bits``
#: elements (element 0 in the least significant bits; "elements (from low to high)"), placed by
#: a formula of the thread; for a sparse A, ``rows x cols`` is the dense M x K matrix and the
#: registers hold the stored M x K/2 one (``stored_cols``).
WarpgroupFragmentLayout = ml.FragmentLayout


def warp_of(thread: int) -> int:
    """The warp's rank in the warpgroup ("%warpid % 4"): the warpgroup is "a set of four
    contiguous warps such that the warp-rank of the first warp is a multiple of 4" (§9.7.15.1)."""
    return thread // WARP


#: The warp-level mma shape whose A fragment each warp's 16 rows follow, by wgmma K and A type:
#: .f16/.bf16 k16 as m16n8k16 (four .f16x2 registers, a0..a7), .tf32 k8 as m16n8k8 (a0..a3),
#: 8-bit k32 as m16n8k32 (a0..a15), .b1 k256 as m16n8k256 (a0..a127); the sparse ones as mma.sp
#: m16n8k32 .f16/.bf16, m16n8k16 .tf32 and m16n8k64 8-bit (four registers each).
def warp_shape(k: int) -> str:
    return f"m16n8k{k}"


@functools.cache
def warp_a_layout(shape: str, element_type: str, sparse: bool = False) -> ml.FragmentLayout:
    """The warp-level A layout (§9.7.14.5 / §9.7.14.6.2) that each warp of the warpgroup follows
    for its 16 rows of A."""
    _, _, k = wg.parse_shape(shape)
    return ml.fragment_layout(warp_shape(k), "a", element_type, sparse=sparse)


def _a_formula(warp_layout: ml.FragmentLayout) -> Formula:
    def formula(thread: int, i: int) -> tuple[int, int]:
        row, col = warp_layout.formula(thread % WARP, i)
        return 16 * warp_of(thread) + row, col

    return formula


def d_formula(thread: int, i: int) -> tuple[int, int]:
    """Accumulator D (figures 148, 150, 152, 154: "d0, d1, d2, d3, ..., dX, dY, dZ, dW"): warp
    ``w``'s rows ``16w..16w+15`` as the m16n8 C fragment of §9.7.14.5 ("row = groupID for ci where
    i < 2, groupID + 8 for ci where i >= 2; col = (threadID_in_group * 2) + (i & 0x1)"), the
    elements ``d4..d7`` in the next 8 columns, and so on: row = 16 * warp + groupID + 8 * ((i >> 1)
    & 1), col = 8 * (i >> 2) + threadID_in_group * 2 + (i & 1)."""
    lane = thread % WARP
    return 16 * warp_of(thread) + ml.group_id(lane) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * ml.thread_id_in_group(lane) + (i & 1)


@functools.cache
def fragment_layout(shape: str, operand: str, element_type: str, *, sparse: bool = False) -> ml.FragmentLayout:
    """The register fragment of ``operand`` ("a" for A in registers, "c"/"d" for the
    accumulator) of ``wgmma.mma_async`` (``.sp`` when ``sparse``) of ``shape`` ("m64n128k16")
    with elements of ``element_type``. Raises :class:`~ptxspec.spec.errors.OperandError` for a
    combination the manual does not list."""
    shape, element_type = shape.removeprefix("."), element_type.removeprefix(".")
    m, n, k = wg.parse_shape(shape)
    section = SPARSE + ".2" if sparse else FRAGMENTS
    if operand in ("c", "d"):
        if element_type not in ("f16", "f32", "s32"):
            raise OperandError(f"no wgmma accumulator of .{element_type} (.dtype is .f16, .f32 or .s32)", section="9.7.15.3")
        # "N = 8*i where i = {1, 2, ... , 32}"; .s32: "N = 8*i where i = {1, 2, 3, 4}, = 16*i where
        # i = {3, 4, ..., 15, 16}".
        if m != 64 or n not in (wg.N_INTEGER if element_type == "s32" else wg.N_ALL):
            raise OperandError(f"no wgmma accumulator of .{element_type} with shape .{shape}", section=FRAGMENTS)
        bits = ELEMENT_BITS[element_type]
        registers = wg.d_registers(shape, element_type)
        return ml.FragmentLayout(operand, m, n, bits, 32, registers, shape, element_type, formula=d_formula, section=section, threads=THREADS)
    if operand != "a":
        raise OperandError(f"wgmma register fragments are 'a', 'c' and 'd' (B is always in shared memory), got {operand!r}", section=FRAGMENTS)
    _check_a(shape, element_type, sparse)
    warp = warp_a_layout(shape, element_type, sparse)
    if warp.registers != wg.A_REGISTERS:
        raise AssertionError(f"{warp.describe()} is not four registers")  # the tables say four
    return ml.FragmentLayout(
        "a", m, k, warp.element_bits, 32, warp.registers, shape, element_type, sparse, formula=_a_formula(warp), section=section, threads=THREADS
    )


def _check_a(shape: str, element_type: str, sparse: bool) -> None:
    """A shape and A type that some wgmma syntax block lists."""
    if shape not in wg.block_shapes(element_type, sparse):
        kind = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
        raise OperandError(f"no {kind} with shape .{shape} and .atype .{element_type}", section="9.7.15.2")


# ---------------------------------------------------------------------------------------------
# §9.7.15.6 The sparse A
# ---------------------------------------------------------------------------------------------


@functools.cache
def warp_metadata_layout(shape: str, element_type: str) -> ml.MetadataLayout:
    """The metadata layout of each warp's 16 rows: §9.7.15.6.2 "each warp in the warpgroup provides
    sparsity information for 16 rows of matrix A"; the counts match the warp-level mma.sp of the
    same K (§9.7.14.6.1): .f16/.bf16 m64nNk32 "16 2-bit vectors" per thread, selector 0 (threads
    T0, T1) or 1 (T2, T3); .tf32 m64nNk16 "eight 4-bit vectors", selector 0 or 1; 8-bit m64nNk64
    "16 4-bit vectors", "all threads contribute the sparsity metadata and the sparsity selector
    must be 0". The bit positions are figures 176, 178, 180-181 only; we read them as the
    warp-level figures (:class:`~ptxspec.semantics.matrix_layout.MetadataLayout`)."""
    _, _, k = wg.parse_shape(shape)
    return ml.metadata_layout(warp_shape(k), element_type)


def metadata_field(shape: str, element_type: str, row: int, chunk_block: int, selector: int) -> tuple[int, int]:
    """(thread, lowest bit) of the 4-bit metadata field of ``row`` and its 4-chunk ``block``."""
    lane, bit = warp_metadata_layout(shape, element_type).field(row % 16, chunk_block, selector)
    return 32 * (row // 16) + lane, bit


def expand_sparse(shape: str, element_type: str, stored, sp_meta, selector: int) -> tuple[np.ndarray, np.ndarray]:
    """The dense 64 x K matrix A of ``wgmma.mma_async.sp`` from the stored 64 x K/2 matrix of its
    non-zero elements ``stored`` (element bit patterns; from registers or shared memory), the
    metadata ``sp_meta`` of the 128 threads (``[..., 128]``) and the sparsity selector. Returns
    ``(dense, undefined)``: ``undefined[..., row]`` is true where a metadata field of the row is one
    the manual leaves undefined ("values 0b0000, 0b0101, 0b1010, 0b1111 are invalid values for
    metadata and will result in undefined behavior"; .tf32: "0b1110 and 0b0100 are the only
    meaningful values"). Each warp's 16 rows go through the warp-level
    :func:`~ptxspec.semantics.matrix_layout.expand_sparse`. This is the layout (where each stored
    element sits); the arithmetic never multiplies the zeros it adds: it takes the stored elements
    and the rows of B they select (:func:`sparse_operand`)."""
    warp = warp_a_layout(shape, element_type, True)
    stored = np.asarray(stored, dtype=np.uint64)
    meta = np.asarray(sp_meta, dtype=np.uint64)
    if stored.shape[-2:] != (64, warp.stored_cols) or meta.shape[-1:] != (THREADS,) or meta.shape[:-1] != stored.shape[:-2]:
        raise OperandError(
            f"expand_sparse takes a [..., 64, {warp.stored_cols}] stored A and [..., 128] metadata, got {stored.shape} and {meta.shape}", section=SPARSE
        )
    dense, undefined = [], []
    for w in range(4):
        regs = warp.from_matrix(stored[..., 16 * w : 16 * (w + 1), :])
        d, u = ml.expand_sparse(warp, regs, meta[..., 32 * w : 32 * (w + 1)], selector, ordered=False)
        dense.append(d)
        undefined.append(u)
    return np.concatenate(dense, axis=-2), np.concatenate(undefined, axis=-1)


def sparse_operand(shape: str, element_type: str, stored: np.ndarray, sp_meta: np.ndarray, selector: int) -> SparseOperand:
    """§9.7.15.6 The sparse A of ``wgmma.mma_async.sp`` as the arithmetic takes it: the stored
    64 x K/2 elements and the K position (row of B) of each
    (:class:`~ptxspec.semantics.sparse.SparseOperand`), the positions placed by
    :func:`expand_sparse` -- the one reading of the metadata, asked through
    :func:`ptxspec.semantics.sparse.selected_k` -- and the undefined rows. B's pruned positions
    are never read (§9.7.15.6: "the remaining K/2 non-zero elements are packed in the operand
    representing matrix A")."""
    _, _, k = wg.parse_shape(shape)

    def place(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return expand_sparse(shape, element_type, numbers, sp_meta, selector)

    return sparse_mechanism.sparse_operand(stored, place, warp_metadata_layout(shape, element_type).blocks, k)


def check_sparse_metadata(operand: SparseOperand, batch: bool = False) -> None:
    """§9.7.15.6.1: "Values 0b0000, 0b0101, 0b1010, 0b1111 are invalid values for metadata and will
    result in undefined behavior": refuse a sparse A with such a row (naming the instance of a
    batch ``[n, 64, K/2]``)."""
    undefined = operand.undefined.reshape(-1, operand.undefined.shape[-1])
    bad = np.flatnonzero(undefined.any(axis=-1))
    if bad.size:
        rows = np.flatnonzero(undefined[bad[0]]).tolist()[:8]
        where = f"instance {bad[0]}: " if batch else ""
        raise OperandError(f"{where}sparsity metadata of rows {rows} of A holds invalid values (undefined behavior, §9.7.15.6.1)", section=SPARSE + ".1")


def compress_sparse(shape: str, element_type: str, dense, selector: int) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`expand_sparse` for a dense 64 x K A that follows the sparsity pattern:
    ``(stored [..., 64, K/2], sp_meta [..., 128])`` (threads the selector does not name hold 0)."""
    warp = warp_a_layout(shape, element_type, True)
    dense = np.asarray(dense, dtype=np.uint64)
    stored, meta = [], []
    for w in range(4):
        regs, e = ml.compress_sparse(warp, dense[..., 16 * w : 16 * (w + 1), :], selector)
        stored.append(warp.to_matrix(regs))
        meta.append(e)
    return np.concatenate(stored, axis=-2), np.concatenate(meta, axis=-1)


# ---------------------------------------------------------------------------------------------
# The composition: operands of a wgmma form
# ---------------------------------------------------------------------------------------------


def _is_descriptor(value) -> bool:
    """A descriptor operand: a :class:`MatrixDescriptor`, one 64-bit value, or the 128 threads'
    values (``[128]``), as opposed to A's registers (``[..., 128, 4]``)."""
    if isinstance(value, (MatrixDescriptor, int, np.integer)):
        return True
    array = np.asarray(value)
    return array.shape == (THREADS,)


def one_descriptor(value, name: str) -> MatrixDescriptor:
    """The descriptor of a descriptor operand. Given the 128 threads' values: "the contents of a
    matrix descriptor must be same across all the warps in the warpgroup" (§9.7.15.5.2); we ask
    the same of every thread."""
    if isinstance(value, MatrixDescriptor):
        return value
    if isinstance(value, (int, np.integer)):
        return MatrixDescriptor.decode(int(value))
    array = ml.register_values(value, 64, f"matrix descriptor {name}")
    if array.ndim == 1:
        if np.any(array != array[0]):
            raise OperandError(
                f'the matrix descriptor {name} differs between threads of the warpgroup ("the contents of a matrix descriptor must be same across all the warps")',
                section=WGMMA_SECTION,
            )
        array = array[0]
    return MatrixDescriptor.decode(int(array))


def _major(trans: int) -> str:
    """ "If imm-trans-a / imm-trans-b is 0, matrix A / B uses the K-major layout. If imm-trans-a is
    1, A uses the M-major layout; if imm-trans-b is 1, B uses the N-major layout"."""
    return "MN" if trans else "K"


def wgmma_operands(
    form: Form,
    image,
    a,
    desc_b: MatrixDescriptor | int,
    c_registers,
    *,
    trans_a: int = 0,
    trans_b: int = 0,
    sp_meta=None,
    sp_sel: int = 0,
) -> tuple[np.ndarray | SparseOperand, np.ndarray, np.ndarray]:
    """(A, B, C) of a ``wgmma.mma_async{.sp}`` ``form`` as matrices of element bit patterns
    (uint64): A 64 x K (for ``.sp`` a :class:`~ptxspec.semantics.sparse.SparseOperand`: the
    stored 64 x K/2 elements and the row of B each selects; ``.dense()`` shows it as the manual's
    64 x K matrix), B K x N, C 64 x N.

    ``image``: the shared-memory bytes; ``a``: A's descriptor (:class:`MatrixDescriptor`, the
    64-bit value, or the 128 threads' values, which must agree) for the ``a-desc`` forms, or its registers ``[128, 4]`` for the ``a`` forms;
    ``desc_b``: B's descriptor; ``c_registers``: the accumulator registers ``[128, N/2]``
    (``[128, N/4]`` for .f16). ``trans_a``/``trans_b``: the imm-trans operands (checked as the
    form allows); ``sp_meta`` (``[128]``) and ``sp_sel``: the sparse forms' metadata and
    selector. Raises :class:`~ptxspec.spec.errors.OperandError` for an operand the form does not
    take or the manual leaves undefined (invalid metadata: "will result in undefined behavior").
    """
    sparse = wg.is_sparse(form)
    immediates = {}
    if trans_a:
        immediates["imm_trans_a"] = trans_a
    if trans_b:
        immediates["imm_trans_b"] = trans_b
    if sparse:
        immediates["sp_sel"] = sp_sel
    wg.check_immediates(form, **immediates)
    m, n, k = wg.parse_shape(form["shape"])
    atype, btype = form["atype"], form["btype"]
    stored_k = k // 2 if sparse else k
    a_matrix: np.ndarray | SparseOperand
    if wg.a_in_registers(form):
        if _is_descriptor(a):
            raise OperandError(f"{form.text} takes A in registers ({form.template}), got a descriptor", section=form.family.section)
        a_matrix = fragment_layout(form["shape"], "a", atype, sparse=sparse).to_matrix(a)
    else:
        if not _is_descriptor(a):
            raise OperandError(f"{form.text} takes A's matrix descriptor ({form.template}), got registers", section=form.family.section)
        a_matrix = read_matrix(image, one_descriptor(a, "a-desc"), m, stored_k, atype, _major(trans_a), operand="a")
    if sparse:
        if sp_meta is None:
            raise OperandError(f"{form.text} needs the sparsity metadata sp-meta of the 128 threads", section=SPARSE)
        a_matrix = sparse_operand(form["shape"], atype, a_matrix, sp_meta, sp_sel)
        check_sparse_metadata(a_matrix)
    b_matrix = read_matrix(image, one_descriptor(desc_b, "b-desc"), k, n, btype, _major(trans_b), operand="b")
    c_matrix = fragment_layout(form["shape"], "c", form["dtype"]).to_matrix(c_registers)
    return a_matrix, b_matrix, c_matrix


def wgmma_result_registers(form: Form, d_matrix) -> np.ndarray:
    """The registers ``[..., 128, N/2]`` (``N/4`` for .f16) of the 128 threads holding D (element
    bit patterns ``[..., 64, N]``): §9.7.15.5.1.1's accumulator fragment."""
    return fragment_layout(form["shape"], "d", form["dtype"]).from_matrix(d_matrix)


__all__ = [
    "MatrixDescriptor",
    "base_offset_for",
    "canonical_offset",
    "swizzle_address",
    "element_address",
    "read_matrix",
    "write_matrix",
    "descriptor_array",
    "WarpgroupFragmentLayout",
    "fragment_layout",
    "expand_sparse",
    "sparse_operand",
    "check_sparse_metadata",
    "compress_sparse",
    "metadata_field",
    "wgmma_operands",
    "wgmma_result_registers",
    "PtxSpecError",
]


# ---------------------------------------------------------------------------------------------
# Pictures of the swizzle patterns (docs/wgmma.rst)
# ---------------------------------------------------------------------------------------------

#: The rows drawn by :func:`svg_swizzle`: eight 128-byte rows, the 1024 bytes of the longest
#: repeating pattern (128B); the shorter patterns repeat within them.
SWIZZLE_PICTURE_ROWS = 8
ROW_BYTES = 128


def swizzle_unit(swizzle: str) -> int:
    """The bytes that move together: ``2**M`` of ``Swizzle<B,M,S>`` -- 16 (one 128-bit element of
    Table 37) for the 32B, 64B and 128B modes, 32 for "128B_base32B" (Table 53, "32B atomicity")."""
    return 1 << SWIZZLES[swizzle][1]


def swizzle_chunks(swizzle: str) -> np.ndarray:
    """``[row, position] -> chunk``: which chunk of each 128-byte row (``swizzle_unit`` bytes each,
    counted before swizzling) :func:`swizzle_address` puts at each position of the row, for the
    :data:`SWIZZLE_PICTURE_ROWS` rows from a pattern boundary (base offset 0). The manual's §5.5.7
    tables draw the same grid for the tensor copies ("each element (numbered cell) is 16 bytes")."""
    unit = swizzle_unit(swizzle)
    per_row = ROW_BYTES // unit
    rows = np.arange(SWIZZLE_PICTURE_ROWS)[:, None]
    chunks = np.arange(per_row)[None, :]
    moved = swizzle_address(rows * ROW_BYTES + chunks * unit, swizzle)
    if np.any(moved // ROW_BYTES != rows):
        raise AssertionError(f"the {swizzle} swizzle moves a chunk out of its 128-byte row")  # Swizzle<B,M,S> with M + S = 7 never does
    grid = np.full((SWIZZLE_PICTURE_ROWS, per_row), -1, dtype=np.int64)
    grid[rows, (moved % ROW_BYTES) // unit] = np.broadcast_to(chunks, moved.shape)
    return grid


def svg_swizzle(swizzle: str) -> str:
    """An SVG picture of a swizzle mode (§9.7.15.5.1.2.1.3; §5.5.7 for the tensor copies): eight
    128-byte rows of shared memory, each cell a position of ``swizzle_unit`` bytes labelled with the
    chunk of the unswizzled row that lands there (:func:`swizzle_chunks`), coloured by that chunk;
    a heavy line where the pattern (:data:`PATTERN_BYTES`) repeats. Each cell is a ``<g
    data-row=... data-position=... data-chunk=...>`` so that tests can read the picture back."""
    grid = swizzle_chunks(swizzle)
    unit = swizzle_unit(swizzle)
    per_row = grid.shape[1]
    cell_w, cell_h, left, top = 512 // per_row, 26, 92, 34
    width, height = left + per_row * cell_w + 2, top + SWIZZLE_PICTURE_ROWS * cell_h + 2
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="swizzle" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="monospace" font-size="11" text-anchor="middle" role="img">',
        f"<title>{swizzle} swizzle: which {unit}-byte chunk of each 128-byte row lands at each position</title>",
        f'<text x="{left + per_row * cell_w // 2}" y="12" fill="#555">byte offset in the 128-byte row (chunks of {unit} bytes)</text>',
    ]
    for position in range(per_row):
        out.append(f'<text x="{left + position * cell_w + cell_w // 2}" y="{top - 6}" fill="#555">{position * unit}</text>')
    for row in range(SWIZZLE_PICTURE_ROWS):
        y = top + row * cell_h
        out.append(f'<text x="{left - 6}" y="{y + cell_h // 2 + 4}" text-anchor="end" fill="#555">row {row} (+{row * ROW_BYTES})</text>')
        for position in range(per_row):
            chunk = int(grid[row, position])
            x = left + position * cell_w
            hue = chunk * 360 // per_row
            out.append(
                f'<g data-row="{row}" data-position="{position}" data-chunk="{chunk}">'
                f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" fill="hsl({hue},70%,85%)" stroke="#555"/>'
                f'<text x="{x + cell_w // 2}" y="{y + cell_h // 2 + 4}">{chunk}</text></g>'
            )
    pattern_rows = PATTERN_BYTES[swizzle] // ROW_BYTES
    for row in range(pattern_rows, SWIZZLE_PICTURE_ROWS, pattern_rows):
        y = top + row * cell_h
        out.append(f'<line x1="{left}" y1="{y}" x2="{left + per_row * cell_w}" y2="{y}" stroke="#000" stroke-width="3"/>')
    out.append("</svg>")
    return "\n".join(out)
