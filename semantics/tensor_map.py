"""The tensor map of §5.5 ("Tensors") and which bytes a tensor copy moves where: the meaning that
``cp.async.bulk.tensor`` (§9.7.9.25.5.2) and ``cp.reduce.async.bulk.tensor`` (§9.7.9.25.5.3) give
their ``[tensorMap, tensorCoords]`` operand. Everything here is a pure function of frozen values;
the instructions themselves (completion, proxies, multicast) are registered elsewhere.

The tensor map (§5.5.8: "a 128-byte opaque object ... describes the tensor properties and the
access properties of the tensor data") is :class:`TensorMap`: the element type (§5.5.1, the
``.elemtype`` values of Table 32, §9.7.9.26), the rank (1-5), the global address, dimensions and
byte strides, the bounding box of the tile mode (§5.5.3.1) or the im2col parameters (§5.5.4.1,
:class:`Im2col`), the traversal strides (§5.5.3.2), the interleave layout (§5.5.6), the swizzling
mode and its atomicity (§5.5.7, Table 14) and the out-of-bound fill (§5.5.3.3). The manual calls
the object opaque and leaves its creation to the CUDA API; the limits it does not state are those
the CUDA driver documents for ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` /
``cuTensorMapEncodeIm2colWide``, and each message says which source a rule is from.

A copy is described in two steps. A *box* (:class:`Box`) lists, in the order the elements sit in
shared memory (the bounding box row-major, dimension 0 fastest), where each element of the box
lies in global memory (or that it lies outside the tensor) and its byte offset in shared memory
before swizzling: :func:`tile_box` (the tile mode, with :func:`tile_box_reference`, the plain
loops it is proven equal to), :func:`gather4_box` (``.tile::gather4`` / ``.tile::scatter4``),
:func:`im2col_box` (``.im2col``, ``.im2col_no_offs``). Then :func:`load` gives the bytes a
global -> shared copy writes (:class:`SharedWrite`: swizzled shared addresses, the bytes, which
are fill) and :func:`store` the bytes a shared -> global copy writes (:class:`GlobalWrite`);
:func:`tile_load` / :func:`tile_store` are the two for the tile mode. The swizzle is
:func:`swizzle_address`.

Readings where the manual's text does not decide (the tests pin each one; silicon may overrule):

* Shared memory holds the box densely: element ``k`` (box order) at byte ``k * size`` from the
  destination, and the swizzle acts on those shared-memory addresses (§5.5.7 gives the patterns
  as 16-byte cells of 128-byte rows whose "starting address is 256/512/1024 bytes aligned"). The
  manual gives no pitch other than the box, nor any padding when the inner box dimension is
  narrower than the swizzle span.
* The swizzle is a function of the shared-memory address itself: the repeating pattern lies on
  256/512/1024-byte boundaries of the address space, and a destination elsewhere starts inside it
  -- which is what §5.5.7's "swizzle base offset" of a destination measures
  (:func:`swizzle_base_offset`). The 16-byte-atomicity patterns are the matrix descriptors'
  (:func:`ptxspec.semantics.wgmma_layout.swizzle_address`, ``Swizzle<B,4,3>``), the 32-byte
  atomicity pattern is tcgen05's "128B_base32B" (``Swizzle<2,5,2>``); 64-byte atomicity and the
  8-byte flip are only the tensor copies'.
* "32B + 8B flip" (§5.5.7: "in each alternate shared memory row, adjacent 8 bytes within 16 bytes
  are flipped"; the CUDA driver: "swap lower 8B with upper 8B within each 16B for every alternate
  row"): the rows are the 128-byte rows of the pattern, and the odd ones flip (Figure 35 is an
  image).
* The OOB-NaN (§5.5.3.3: "a special NaN called OOB-NaN"; the driver's
  ``CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA``): neither names its bits, so an element
  filled with it is any NaN of the element's format (:class:`~ptxspec.semantics.results.AnyNaN`;
  ``.tf32`` elements are 32-bit containers, so any ``.f32`` NaN) -- one unnamed pattern, the same
  for every filled element, is what a chip would use; :meth:`SharedWrite.written_to` takes it
  where a profile knows it.
* The copy moves element bits unchanged for every type; §5.5.1 adds "(rounded to nearest even)"
  after the floating-point types and Table 32 has ``.f32.ftz`` / ``.tf32.ftz``, which matter to
  the reductions; whether a load of ``.tf32`` rounds or a ``.ftz`` type flushes is not said
  (:attr:`SharedWrite.conversion_open` marks such loads).
* im2col (§5.5.4): the tensor is C, W, (H, (D,)) N from dimension 0 up; the corners and offsets
  are in W, H, D order (the instruction's ``{i2cOffW, i2cOffH, i2cOffD}``; the driver's "DHW"
  names the dimensions, NVIDIA CUTLASS passes the corners W first). Along each of W, H, D the
  box holds the filter positions ``lower, lower + stride, ...`` up to ``size - 1 + upper`` (the
  count CUTLASS's convolutions use, ``(size + upper - lower - 1) / stride + 1``); the pixels are
  taken from the instruction's position on, W fastest, wrapping to the lower corner and stepping
  the next dimension, and past the last of D (or H, or W) to the next image of N -- N stepped by
  its traversal stride too, as an H100 does (the tma-more round). A pixel narrower than the
  swizzle span takes a whole span in shared memory, as a tile row does (:func:`shared_row_pitch`). A pixel reads
  its channels at its position plus the im2col offsets; a position outside the tensor, an image
  past N ("Pixels-per-Column exceeds the number of available pixels", §5.5.4.3) or a channel
  past C is filled. The manual's three im2col examples (§5.5.4.1, §5.5.4.2) list the sizes from
  dimension 0 (C) but their coordinates ``(7, 7, 4, 0)`` only fit this box read from the
  outermost dimension (N = 7, H = 7, W = 4, C = 0): read C first, examples 2 and 3 would put the
  filter base past the upper corner; read N first, all three lie in the box and example 3's
  (W = 5, H = 7 with stride 2 from -1) on the traversal lattice. Their figures are images.
* Interleaved layouts (§5.5.6) in the tile mode: :func:`tile_box` uses the same address formula,
  the traversal stride of dimension 0 included; the manual gives none specific to them. An H100
  refutes that reading (the tma-more round moves other bytes and byte counts, and faults where
  it copies), so the copy instructions refuse interleaved maps (:class:`NotModelled`).
* The sub-byte types (§5.5.1.1.1) are moved in units: two 4-bit values (a byte) for ``.b4x16``,
  sixteen values for the others -- 8 (``.b4x16_p64``) or 12 (``.b6x16_p32``) global bytes
  followed by uninitialised padding to 16 bytes in shared memory. ``.b6p2x16`` (the same Table 32
  value 15, for shared -> global) packs the low 6 bits of each of 16 shared bytes into 12 global
  bytes, element ``j`` at bits ``6j..6j+5`` of the little-endian 96-bit chunk (Figure 7 is an
  image).

Not modelled (:class:`NotModelled`): ``.im2col::w`` and ``.im2col::w::128`` (§5.5.5: where the
halo pixels come from and lie, what lies past the box's W corner), im2col with an interleaved
layout, sub-byte types with an interleaved layout, a ``.b4x16`` copy that starts at an odd 4-bit
element. ``l2_promotion`` (the driver's L2 fetch size) changes no byte.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.results import AnyBits, AnyNaN, Result
from ptxspec.semantics.state import Segment
from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import FORMATS

TENSORS = "5.5"
FORMAT = "5.5.1"
SUB_BYTE = "5.5.1.1.1"
BOUNDING_BOX = "5.5.3.1"
TRAVERSAL = "5.5.3.2"
OUT_OF_BOUNDS = "5.5.3.3"
GATHER4 = "5.5.3.4"
GATHER4_BOX = "5.5.3.4.1"
IM2COL = "5.5.4"
IM2COL_BOX = "5.5.4.1"
IM2COL_STRIDE = "5.5.4.2"
IM2COL_OOB = "5.5.4.3"
IM2COL_W = "5.5.5"
INTERLEAVE = "5.5.6"
SWIZZLE = "5.5.7"
TENSOR_MAP = "5.5.8"
RESTRICTIONS = "9.7.9.25.5.1"
CP_TENSOR = "9.7.9.25.5.2"
REDUCE_TENSOR = "9.7.9.25.5.3"
REPLACE = "9.7.9.26"

#: Where a rule comes from when the manual does not state it.
DRIVER = "CUDA driver API, cuTensorMapEncodeTiled/Im2col/Im2colWide"


class NotModelled(OperandError):
    """A tensor copy whose meaning the manual's text does not fix and this model does not guess
    (the message says what is missing)."""


class OutsideImage(OperandError):
    """A tensor copy that reads bytes its memory image does not hold (the state gives no value to
    read)."""


def _refuse(message: str, section: str) -> OperandError:
    return OperandError(f"tensor map: {message}", section=section)


# ---------------------------------------------------------------------------------------------
# §5.5.1 / Table 32: element types
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ElementType:
    """One ``.elemtype`` of a tensor map (§5.5.1; its value in Table 32 of §9.7.9.26), as the unit
    in which a copy moves it: ``values`` tensor elements per unit, ``global_bytes`` of a unit in
    global memory and ``shared_bytes`` in shared memory (they differ for the padded sub-byte types
    of §5.5.1.1.1), and ``nan_format``: the format whose NaN an OOB-NaN fill is (None: the type
    takes no OOB-NaN fill)."""

    name: str
    code: int
    values: int
    global_bytes: int
    shared_bytes: int
    nan_format: str | None = None

    @property
    def sub_byte(self) -> bool:
        """A sub-byte type of §5.5.1.1."""
        return self.code >= 13

    @property
    def padded(self) -> bool:
        """A sub-byte type whose shared-memory unit holds padding (§5.5.1.1.1) or whose global
        unit drops it: ``.b4x16_p64``, ``.b6x16_p32``, ``.b6p2x16``."""
        return self.code >= 14


def _types() -> dict[str, ElementType]:
    # Table 32 (§9.7.9.26), .elemtype: 0 .u8, 1 .u16, 2 .u32 (the Chinese text prints ".add", the
    # English manual .u32), 3 .s32, 4 .u64, 5 .s64, 6 .f16, 7 .f32, 8 .f32.ftz, 9 .f64, 10 .bf16,
    # 11 .tf32, 12 .tf32.ftz, 13 .b4x16, 14 .b4x16_p64, 15 .b6x16_p32 / .b6p2x16.
    plain: list[tuple[str, int, str | None]] = [("u8", 1, None), ("u16", 2, None), ("u32", 4, None), ("s32", 4, None), ("u64", 8, None), ("s64", 8, None)]
    plain += [("f16", 2, "f16"), ("f32", 4, "f32"), ("f32.ftz", 4, "f32"), ("f64", 8, "f64"), ("bf16", 2, "bf16")]
    plain += [("tf32", 4, "f32"), ("tf32.ftz", 4, "f32")]
    out = {name: ElementType(name, code, 1, size, size, nan) for code, (name, size, nan) in enumerate(plain)}
    # §5.5.1.1.1: ".b4x16: no padding, the packed sixteen .b4 elements in a 64-bit container are
    # copied as is"; ".b4x16_p64: sixteen contiguous 4-bit data ... with the append of 64 bits of
    # padding"; ".b6x16_p32: sixteen 6-bit data ... with an append of 32 bits of padding";
    # ".b6p2x16: sixteen elements, each containing 6 bits of data at the LSB and 2 bits of padding
    # at the MSB, are copied from shared memory into global memory by discarding the 2 bits".
    out["b4x16"] = ElementType("b4x16", 13, 2, 1, 1)
    out["b4x16_p64"] = ElementType("b4x16_p64", 14, 16, 8, 16)
    out["b6x16_p32"] = ElementType("b6x16_p32", 15, 16, 12, 16)
    out["b6p2x16"] = ElementType("b6p2x16", 15, 16, 12, 16)
    return out


#: Every element type of a tensor map, by its PTX name without the dot.
ELEMENT_TYPES: dict[str, ElementType] = _types()
#: Table 32, ``.interleave_layout``: "0 no interleave, 1 16B interleave, 2 32B interleave".
INTERLEAVE_CODES = {"none": 0, "16B": 1, "32B": 2}
#: The bytes of one interleaved slice of dimension 0 (§5.5.6).
INTERLEAVE_BYTES = {"16B": 16, "32B": 32}
#: Table 32, ``.swizzle_mode``: "0 no swizzle, 1 32B, 2 64B, 3 128B".
SWIZZLE_CODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
#: Table 32, ``.swizzle_atomicity``: "0 16B, 1 32B, 2 32B + 8B flip, 3 64B".
ATOMICITY_CODES = {"16B": 0, "32B": 1, "32B_flip8B": 2, "64B": 3}
#: Table 32, ``.fill_mode``: "0 zero fill, 1 OOB-NaN fill".
FILL_CODES = {"zero": 0, "nan": 1}
#: The driver's L2 promotion (``CU_TENSOR_MAP_L2_PROMOTION_*``): a fetch size, no byte changes.
L2_PROMOTIONS = ("none", "64B", "128B", "256B")
#: The span within which each swizzling mode moves 16-byte chunks (the driver: "Swizzle 16B chunks
#: within 32B / 64B / 128B span"), and the bytes after which its pattern repeats (§5.5.7: "the
#: starting address is 256 / 512 / 1024 bytes aligned").
SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128}
PATTERN_BYTES = {"32B": 256, "64B": 512, "128B": 1024}
#: Table 14: the valid combinations of swizzling mode and swizzle atomicity.
VALID_ATOMICITY = {"none": ("16B",), "32B": ("16B",), "64B": ("16B",), "128B": ("16B", "32B", "32B_flip8B", "64B")}
#: Shared-memory alignment of the atomicity sub-modes (§5.5.7: "This sub-mode requires 32-byte /
#: 64-byte alignment in shared memory"); the box address itself is 16-byte aligned (§5.5.3.1).
ATOMICITY_ALIGNMENT = {"16B": 16, "32B": 32, "32B_flip8B": 32, "64B": 64}
#: §5.5.4.1: the corners are 16-bit signed values limited to [-2^15, 2^15-1] (3D), [-2^7, 2^7-1]
#: (4D), [-2^4, 2^4-1] (5D); the im2col offsets to [0, 2^16-1], [0, 2^8-1], [0, 2^5-1].
CORNER_BITS = {3: 16, 4: 8, 5: 5}
OFFSET_BITS = {3: 16, 4: 8, 5: 5}
#: §9.7.9.25.5.2: "wHalo ... Im2col::w mode: [0, 512); Im2col::w::128 mode: [0, 32)"; "wOffset
#: ... [0, 32)".
W_HALO_LIMIT = {"w": 512, "w128": 32}
W_OFFSET_LIMIT = 32


def element_type(name: str) -> ElementType:
    """The tensor map element type named ``name`` (§5.5.1, Table 32 of §9.7.9.26), with or without
    the leading dot."""
    key = name.removeprefix(".")
    if key not in ELEMENT_TYPES:
        raise _refuse(f"no element type .{key} (§5.5.1 / Table 32: {', '.join('.' + n for n in ELEMENT_TYPES)})", FORMAT)
    return ELEMENT_TYPES[key]


def element_type_for_code(code: int, direction: str = "load") -> ElementType:
    """The element type whose Table 32 ``.elemtype`` value is ``code`` (§9.7.9.26); value 15 is
    ``.b6x16_p32`` for a global -> shared copy (``direction="load"``) and ``.b6p2x16`` for shared
    -> global (``"store"``): "the two types share the same encoding value in the descriptor (value
    15) as they apply to different tensor copy operations" (§5.5.1.1.1)."""
    if code == 15:
        return ELEMENT_TYPES["b6p2x16" if direction == "store" else "b6x16_p32"]
    for t in ELEMENT_TYPES.values():
        if t.code == code:
            return t
    raise _refuse(f".elemtype value {code} is not in Table 32 (0-15)", REPLACE)


# ---------------------------------------------------------------------------------------------
# §5.5.7 Swizzling
# ---------------------------------------------------------------------------------------------


def swizzle_address(address, swizzle: str, atomicity: str = "16B"):
    """The shared-memory address at which a copy puts the byte whose unswizzled address is
    ``address`` (§5.5.7; vectorised). Within the pattern (256, 512 or 1024 bytes, on that boundary
    of the address space) the 128-byte row ``r`` (address bits 7 and up) holds:

    * 16-byte atomicity (the 32B, 64B and 128B modes): its 16-byte chunk ``c`` at ``c ^ (r mod 2,
      4, 8)`` -- the matrix descriptors' ``Swizzle<1|2|3,4,3>``,
      :func:`~ptxspec.semantics.wgmma_layout.swizzle_address`, the same mechanism;
    * 128B with 32-byte atomicity: its 32-byte chunk ``c`` at ``c ^ (r mod 4)`` (tcgen05's
      ``"128B_base32B"``, ``Swizzle<2,5,2>``); with the 8-byte flip besides, the two 8-byte halves
      of each 16 bytes swap in the odd rows;
    * 128B with 64-byte atomicity: its 64-byte half ``c`` at ``c ^ (r mod 2)``.

    "No swizzle" leaves the address as it is.
    """
    address = np.asarray(address, dtype=np.int64)
    if swizzle == "none":
        return address
    if atomicity == "16B":
        return wl.swizzle_address(address, swizzle)
    if swizzle != "128B" or atomicity not in ATOMICITY_CODES:
        raise _refuse(f"swizzle atomicity {atomicity} with the {swizzle} swizzling mode (Table 14: only 128B takes 32B, 32B + 8B flip, 64B)", SWIZZLE)
    if atomicity == "64B":
        return address ^ (((address >> 7) & 1) << 6)
    out = wl.swizzle_address(address, "128B_base32B")
    if atomicity == "32B_flip8B":
        out = out ^ (((address >> 7) & 1) << 3)
    return out


def swizzle_base_offset(address: int, swizzle: str) -> int:
    """§5.5.7: the swizzle base offset of a destination ``address``: 0 when it lies on the
    pattern's boundary (1024, 512, 256 bytes), otherwise "128B: (dstMem / 128) % 8; 64B:
    (dstMem / 64) % 4; 32B: (dstMem / 32) % 2" -- the manual's formulas as printed (the 64B and 32B
    ones count 64- and 32-byte units, where the pattern's rows are 128 bytes)."""
    if swizzle == "none":
        return 0
    unit, rows = {"128B": (128, 8), "64B": (64, 4), "32B": (32, 2)}[swizzle]
    return (address // unit) % rows


# ---------------------------------------------------------------------------------------------
# §5.5.8 The tensor map
# ---------------------------------------------------------------------------------------------


def _ints(value: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(v) for v in value)


def _int_tuple(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in value)


@attrs.frozen
class Im2col:
    """The im2col access properties of a tensor map (§5.5.4.1): the bounding box's lower and upper
    corners in the W, H, D dimensions (W first; two fewer than the rank; the W corner only for the
    ``wide`` modes of §5.5.5), the Channels-per-Pixel and the Pixels-per-Column. ``wide``: None
    for ``.im2col``, ``"w"`` / ``"w128"`` for a map made for ``.im2col::w`` / ``.im2col::w::128``
    (the driver's ``cuTensorMapEncodeIm2colWide`` mode; Pixels-per-Column "is ignored in
    im2col::w::128 mode", §5.5.5.1)."""

    lower_corner: tuple[int, ...] = attrs.field(converter=_int_tuple)
    upper_corner: tuple[int, ...] = attrs.field(converter=_int_tuple)
    channels_per_pixel: int
    pixels_per_column: int
    wide: str | None = None


@attrs.frozen
class TensorMap:
    """A tensor map (§5.5.8) as a value; construction checks every rule the manual states and
    those the CUDA driver states for creating one, raising :class:`OperandError` that names the
    rule.

    ``element_type``: a name of :data:`ELEMENT_TYPES`; ``global_address``: the tensor's start;
    ``global_dims``: the size of each dimension in elements (dimension 0 innermost);
    ``global_strides``: the byte stride of dimensions 1 .. rank-1 (dimension 0 is packed);
    ``box_dims``: the bounding box of the tile mode (§5.5.3.1), or ``im2col``
    (:class:`Im2col`) for the im2col modes (§5.5.4), exactly one of the two;
    ``element_strides``: the traversal strides (§5.5.3.2; default all 1); ``interleave``
    (:data:`INTERLEAVE_CODES`), ``swizzle`` (:data:`SWIZZLE_CODES`), ``swizzle_atomicity``
    (:data:`ATOMICITY_CODES`), ``oob_fill`` ("zero" or "nan", §5.5.3.3), ``l2_promotion``."""

    element_type: str
    global_address: int
    global_dims: tuple[int, ...] = attrs.field(converter=_int_tuple)
    global_strides: tuple[int, ...] = attrs.field(converter=_int_tuple)
    box_dims: tuple[int, ...] | None = attrs.field(default=None, converter=_ints)
    im2col: Im2col | None = None
    element_strides: tuple[int, ...] | None = attrs.field(default=None, converter=_ints)
    interleave: str = "none"
    swizzle: str = "none"
    swizzle_atomicity: str = "16B"
    oob_fill: str = "zero"
    l2_promotion: str = "none"

    def __attrs_post_init__(self) -> None:
        if self.element_strides is None:
            object.__setattr__(self, "element_strides", (1,) * len(self.global_dims))
        _validate(self)

    @property
    def rank(self) -> int:
        """The tensor's dimensionality, 1-5 (§5.5.1); ``tensormap.replace .rank`` holds it less
        one."""
        return len(self.global_dims)

    @property
    def type(self) -> ElementType:
        """The :class:`ElementType` of the map (§5.5.1)."""
        return ELEMENT_TYPES[self.element_type.removeprefix(".")]

    @property
    def strides(self) -> tuple[int, ...]:
        """The traversal strides, one per dimension (§5.5.3.2)."""
        assert self.element_strides is not None
        return self.element_strides

    def shared_box_bytes(self) -> int:
        """The bytes the bounding box occupies in shared memory (§5.5.3.1, §5.5.4.1; tile mode: the elements loaded
        along each dimension, "ceil(boxDim[i] / elementStrides[i])" in the driver's words;
        im2col: Pixels-per-Column pixels of Channels-per-Pixel elements)."""
        t = self.type
        if self.box_dims is not None:
            return math.prod(_box_counts(self)) * t.shared_bytes
        assert self.im2col is not None
        pixels = 128 if self.im2col.wide == "w128" else self.im2col.pixels_per_column
        return pixels * (self.im2col.channels_per_pixel // t.values) * t.shared_bytes

    def codes(self) -> dict[str, int]:
        """The Table 32 values of the map's ``.field3`` fields (§9.7.9.26) and its ``.rank`` field
        (the rank less one: "this field uses zero-based numbering")."""
        return {
            "elemtype": self.type.code,
            "interleave_layout": INTERLEAVE_CODES[self.interleave],
            "swizzle_mode": SWIZZLE_CODES[self.swizzle],
            "swizzle_atomicity": ATOMICITY_CODES[self.swizzle_atomicity],
            "fill_mode": FILL_CODES[self.oob_fill],
            "rank": self.rank - 1,
        }


def _box_counts(tmap: TensorMap) -> tuple[int, ...]:
    """Units loaded along each dimension of the tile-mode box (dimension 0 in units of the type)."""
    assert tmap.box_dims is not None
    t = tmap.type
    counts = [-(-b // s) for b, s in zip(tmap.box_dims, tmap.strides)]
    counts[0] = -(-(tmap.box_dims[0] // t.values) // tmap.strides[0])
    return tuple(counts)


def _validate(m: TensorMap) -> None:
    """The rules of §5.5 (and, where the manual is silent, the CUDA driver's) on a tensor map."""
    name = m.element_type.removeprefix(".")
    if name not in ELEMENT_TYPES:
        raise _refuse(f"no element type .{name} (§5.5.1 / Table 32: {', '.join('.' + n for n in ELEMENT_TYPES)})", FORMAT)
    t = ELEMENT_TYPES[name]
    rank = len(m.global_dims)
    if not 1 <= rank <= 5:
        raise _refuse(f'rank {rank}: "a tensor can have the dimensions 1D, 2D, 3D, 4D or 5D"', FORMAT)
    for label, value, allowed in (
        ("interleave layout", m.interleave, INTERLEAVE_CODES),
        ("swizzling mode", m.swizzle, SWIZZLE_CODES),
        ("swizzle atomicity", m.swizzle_atomicity, ATOMICITY_CODES),
        ("fill mode", m.oob_fill, FILL_CODES),
    ):
        if value not in allowed:
            raise _refuse(f"no {label} {value!r} (Table 32: {', '.join(allowed)})", REPLACE)
    if m.l2_promotion not in L2_PROMOTIONS:
        raise _refuse(f"no L2 promotion {m.l2_promotion!r} ({DRIVER}: {', '.join(L2_PROMOTIONS)})", TENSOR_MAP)
    if (m.box_dims is None) == (m.im2col is None):
        raise _refuse("give exactly one of the tile mode's bounding box (box_dims) and the im2col parameters (§5.5.2: tiled mode or im2col mode)", TENSORS)
    if len(m.global_strides) != rank - 1:
        raise _refuse(f"a rank-{rank} tensor has {rank - 1} global strides (dimensions 1..{rank - 1}); got {len(m.global_strides)}", FORMAT)
    assert m.element_strides is not None
    if len(m.element_strides) != rank:
        raise _refuse(f"a rank-{rank} tensor has {rank} traversal strides; got {len(m.element_strides)}", TRAVERSAL)
    interleaved = m.interleave != "none"
    if interleaved and rank < 3:
        raise _refuse(
            f'rank {rank} with {m.interleave} interleave: "interleaved layouts are supported only for the dimensionalities 3D, 4D and 5D"', INTERLEAVE
        )
    # The global address and the dimensions.
    if not 0 <= m.global_address < 1 << 64:
        raise _refuse(f"global address {m.global_address:#x} is not a 64-bit address", TENSOR_MAP)
    if m.global_address % 16:
        raise _refuse(f"global address {m.global_address:#x} is not 16-byte aligned ({DRIVER}: globalAddress must be 16 byte aligned)", TENSOR_MAP)
    if m.interleave == "32B" and m.global_address % 32:
        raise _refuse(f"global address {m.global_address:#x} is not 32-byte aligned, as 32B interleave needs ({DRIVER})", INTERLEAVE)
    if t.padded and m.global_address % 32:
        raise _refuse(f'global address {m.global_address:#x} of .{t.name}: "the global memory address must be 32B aligned"', RESTRICTIONS)
    for i, d in enumerate(m.global_dims):
        if not 1 <= d <= 1 << 32:
            raise _refuse(f"global dimension {i} is {d}; it must be non-zero and at most 2^32 ({DRIVER})", FORMAT)
    if t.padded and m.global_dims[0] % 128:
        raise _refuse(
            f"dimension 0 of .{t.name} is {m.global_dims[0]}: "
            '"Tensor-Size[0] must be a multiple of 96B (.b6x16_p32, .b6p2x16) / 64B (.b4x16_p64)", 128 elements',
            RESTRICTIONS,
        )
    if t.name == "b4x16" and m.global_dims[0] % 2:
        raise _refuse(f"dimension 0 of .b4x16 is {m.global_dims[0]}; it must be a multiple of 2 ({DRIVER})", SUB_BYTE)
    stride_unit = 32 if m.interleave == "32B" or t.padded else 16
    for i, s in enumerate(m.global_strides, start=1):
        if not 0 <= s < 1 << 40:
            raise _refuse(f"the global stride of dimension {i} is {s}; it must be less than 2^40 ({DRIVER})", FORMAT)
        if s % stride_unit:
            why = "a multiple of 16" if stride_unit == 16 else "a multiple of 32 (32B interleave, or a padded sub-byte type)"
            raise _refuse(f"the global stride of dimension {i} is {s}; it must be {why} ({DRIVER})", FORMAT)
    for i, s in enumerate(m.element_strides):
        if not 1 <= s <= 8:
            raise _refuse(f"the traversal stride of dimension {i} is {s}; it must be non-zero and at most 8 ({DRIVER})", TRAVERSAL)
    if not interleaved and m.element_strides[0] != 1:
        raise _refuse(
            f'traversal stride {m.element_strides[0]} in dimension 0: "for non-interleaved layout, the traversal stride in dimension 0 must always be 1"',
            TRAVERSAL,
        )
    # Swizzling.
    if m.swizzle_atomicity not in VALID_ATOMICITY[m.swizzle]:
        raise _refuse(f"{m.swizzle_atomicity} swizzle atomicity with {m.swizzle} swizzling is not a valid combination (Table 14)", SWIZZLE)
    if m.interleave == "32B" and m.swizzle != "32B":
        raise _refuse(f"32B interleave needs the 32B swizzling mode, not {m.swizzle} ({DRIVER})", INTERLEAVE)
    if t.padded and m.swizzle not in ("none", "128B"):
        raise _refuse(f'.{t.name} with {m.swizzle} swizzling: "support the following swizzle modes: none, 128B"', RESTRICTIONS)
    if t.padded and (m.swizzle_atomicity == "32B_flip8B" or (t.name == "b4x16_p64" and m.swizzle_atomicity == "64B")):
        raise _refuse(
            f".{t.name} with {m.swizzle_atomicity} atomicity ({DRIVER}: .b4x16_p64 takes 128B and 128B_ATOM_32B, .b6x16 also 128B_ATOM_64B)", RESTRICTIONS
        )
    # The fill.
    if m.oob_fill == "nan" and t.sub_byte:
        raise _refuse(f'OOB-NaN fill with .{t.name}: "the OOB-NaN fill mode does not support the types .b4x16, .b4x16_p64, .b6x16_p32, .b6p2x16"', RESTRICTIONS)
    if m.oob_fill == "nan" and t.nan_format is None:
        raise _refuse(f"OOB-NaN fill with the integer type .{t.name} ({DRIVER}: only when tensorDataType represents a floating-point data type)", OUT_OF_BOUNDS)
    if m.box_dims is not None:
        _validate_box(m, t)
    else:
        assert m.im2col is not None
        _validate_im2col(m, t, m.im2col)


def _validate_box(m: TensorMap, t: ElementType) -> None:
    """The tile mode's bounding box (§5.5.3.1, §9.7.9.25.5.1, the driver's boxDim rules)."""
    assert m.box_dims is not None
    rank = len(m.global_dims)
    if len(m.box_dims) != rank:
        raise _refuse(f"a rank-{rank} tensor has a {rank}-dimensional bounding box; got {len(m.box_dims)} sizes", BOUNDING_BOX)
    for i, b in enumerate(m.box_dims):
        if not 1 <= b <= 256:
            raise _refuse(f"bounding box dimension {i} is {b}; it must be non-zero and at most 256 ({DRIVER})", BOUNDING_BOX)
    if t.padded and m.box_dims[0] != 128:
        raise _refuse(
            f'box dimension 0 of .{t.name} is {m.box_dims[0]}: "Box-Size[0] must be exactly 96B (.b6x16_p32, .b6p2x16) / 64B (.b4x16_p64)", 128 elements',
            RESTRICTIONS,
        )
    if m.box_dims[0] % t.values:
        raise _refuse(f"box dimension 0 of .{t.name} is {m.box_dims[0]}; it must hold whole {t.values}-element units", SUB_BYTE)
    inner = (m.box_dims[0] // t.values) * t.global_bytes
    # The driver states this for non-interleaved maps only, but refuses interleaved ones too: all
    # 124 maps of a first tma-interleave recording (on an H200; re-recorded without such maps once
    # this rule drew no more of them, so not kept) whose inner box was not 16-byte whole, and no other.
    if inner % 16:
        raise _refuse(
            f"the inner box dimension is {inner} bytes, not a multiple of 16 (§5.5.3.1: the bounding box size must be a multiple of 16 bytes)", BOUNDING_BOX
        )
    total = m.shared_box_bytes()
    if total % 16:
        raise _refuse(f'the bounding box holds {total} bytes: "the size of each bounding box must be a multiple of 16 bytes"', BOUNDING_BOX)
    shared_inner = _box_counts(m)[0] * t.shared_bytes
    if m.interleave == "none" and m.swizzle != "none" and shared_inner > SWIZZLE_SPAN[m.swizzle]:
        raise _refuse(f"the inner box dimension is {shared_inner} bytes, more than the {m.swizzle} swizzle span ({DRIVER})", SWIZZLE)


def _validate_im2col(m: TensorMap, t: ElementType, p: Im2col) -> None:
    """The im2col parameters (§5.5.4.1, §5.5.5, the driver's Im2col/Im2colWide rules)."""
    rank = len(m.global_dims)
    if not 3 <= rank <= 5:
        raise _refuse(f'rank {rank} in im2col mode: "im2col mode supports the tensor dimensions 3D, 4D and 5D"', IM2COL)
    spatial = rank - 2
    if p.wide is not None:
        if p.wide not in W_HALO_LIMIT:
            raise _refuse(f"no im2col wide mode {p.wide!r} (w, w128)", IM2COL_W)
        if m.interleave != "none":
            raise _refuse('an interleaved layout with im2col::w: "the interleave layout is not supported for .im2col::w and .im2col::w::128 modes"', INTERLEAVE)
        if (m.swizzle, m.swizzle_atomicity) not in (("64B", "16B"), ("128B", "16B"), ("128B", "32B")):
            raise _refuse(f"{m.swizzle} swizzling with {m.swizzle_atomicity} atomicity in im2col::w ({DRIVER}: only 64B, 128B, 128B_ATOM_32B)", IM2COL_W)
        corners, limit = 1, 1 << 15
    else:
        corners, limit = spatial, 1 << (CORNER_BITS[rank] - 1)
    for label, corner in (("lower", p.lower_corner), ("upper", p.upper_corner)):
        if len(corner) != corners:
            raise _refuse(
                f"the {label} corner has {corners} coordinate(s) (W{', H' if corners > 1 else ''}{', D' if corners > 2 else ''}); got {len(corner)}", IM2COL_BOX
            )
        for j, v in enumerate(corner):
            if not -limit <= v < limit:
                raise _refuse(f"the {label} corner {v} in {'WHD'[j]} of a {rank}D tensor is outside [-{limit}, {limit - 1}]", IM2COL_BOX)
    for j in range(corners):
        if m.global_dims[1 + j] + p.upper_corner[j] - p.lower_corner[j] < 1:
            raise _refuse(f"the bounding box has no position in {'WHD'[j]} ({DRIVER}: the box must have non-zero area)", IM2COL_BOX)
    if not 1 <= p.channels_per_pixel <= 256:
        raise _refuse(f"Channels-per-Pixel {p.channels_per_pixel}; it must be non-zero and at most 256 ({DRIVER})", IM2COL_BOX)
    if t.padded and p.channels_per_pixel != 128:
        raise _refuse(f"Channels-per-Pixel {p.channels_per_pixel} with .{t.name}; it must be 128 ({DRIVER})", IM2COL_BOX)
    if p.channels_per_pixel % t.values:
        raise _refuse(f"Channels-per-Pixel {p.channels_per_pixel} of .{t.name}: not whole {t.values}-element units", SUB_BYTE)
    if not 1 <= p.pixels_per_column <= 1024:
        raise _refuse(f"Pixels-per-Column {p.pixels_per_column}; it must be non-zero and at most 1024 ({DRIVER})", IM2COL_BOX)
    inner = (p.channels_per_pixel // t.values) * t.shared_bytes
    if m.interleave == "none" and m.swizzle != "none" and inner > SWIZZLE_SPAN[m.swizzle]:
        raise _refuse(f"Channels-per-Pixel make {inner} bytes, more than the {m.swizzle} swizzle span ({DRIVER})", SWIZZLE)


# ---------------------------------------------------------------------------------------------
# Boxes: which global element each shared-memory element is
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class Box:
    """The elements one tensor copy moves, in the order they lie in shared memory: unit ``i`` (an
    element, or the sub-byte unit of :class:`ElementType`) is at ``shared_offsets[i]`` bytes from
    the shared-memory address before swizzling, and at global address ``global_addresses[i]``,
    -1 where it lies outside the tensor (§5.5.3.3)."""

    element: ElementType
    shared_offsets: np.ndarray
    global_addresses: np.ndarray

    @property
    def in_bounds(self) -> np.ndarray:
        """Which units lie inside the tensor (the others are out of bounds, §5.5.3.3)."""
        return self.global_addresses >= 0

    @property
    def shared_bytes(self) -> int:
        """The bytes the box occupies in shared memory (§5.5.3.1)."""
        return len(self.shared_offsets) * self.element.shared_bytes

    def same_as(self, other: Box) -> bool:
        """Whether two boxes name the same units (§5.5.3: the fast and the reference paths agree)."""
        return (
            self.element == other.element
            and np.array_equal(self.shared_offsets, other.shared_offsets)
            and np.array_equal(self.global_addresses, other.global_addresses)
        )


def _s32(coords: Sequence[int], what: str, section: str) -> tuple[int, ...]:
    out = tuple(int(c) for c in coords)
    for c in out:
        if not -(1 << 31) <= c < 1 << 31:
            raise OperandError(f"tensor coordinate {c} of {what} is not an .s32 value", section=section)
    return out


def _first_unit(t: ElementType, coordinate: int) -> int:
    """Coordinate 0 (in elements) as a unit index of the element type (§5.5.1.1.1, §9.7.9.25.5.1)."""
    if t.padded and coordinate % 128:
        raise OperandError(
            f'tensor coordinate 0 is {coordinate} with .{t.name}: "the first coordinate in the tensorCoords vector must be a multiple of 128"',
            section=RESTRICTIONS,
        )
    if coordinate % t.values == 0:
        return coordinate // t.values
    raise NotModelled(f"a .b4x16 copy from the odd 4-bit element {coordinate}: the manual does not say how a copy splits a byte", section=SUB_BYTE)


def _check_tile(tmap: TensorMap, what: str) -> None:
    if tmap.box_dims is None:
        raise OperandError(f"{what} needs a tensor map of the tile mode (bounding box); this one is for im2col", section=TENSORS)
    if tmap.type.sub_byte and tmap.interleave != "none":
        raise NotModelled(f"{tmap.type.name} with {tmap.interleave} interleave: the manual does not say how sub-byte units interleave", section=INTERLEAVE)


def _check_box_alignment(t: ElementType, coordinate: int, unit: int) -> None:
    """§5.5.3.1: "The address of the bounding box must also be aligned to 16 bytes" -- the box's
    start in global memory (the other dimensions' strides are multiples of 16). An H100 and an H200
    fault ("illegal instruction") on every tile-mode load and store that breaks it (the TMA round),
    and an H100 on every im2col load whose channel coordinate does (the tma-more round)."""
    if (unit * t.global_bytes) % 16:
        raise OperandError(
            f"tensor coordinate {coordinate} of dimension 0 puts the bounding box at byte {unit * t.global_bytes} of its row, "
            '"The address of the bounding box must also be aligned to 16 bytes"',
            section=BOUNDING_BOX,
        )


def _tile_setup(tmap: TensorMap, coords: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    _check_tile(tmap, "the tile mode")
    coords = _s32(coords, "the tile mode", CP_TENSOR)
    if len(coords) != tmap.rank:
        raise OperandError(f"a .{tmap.rank}d tensor copy takes {tmap.rank} tensor coordinates; got {len(coords)}", section=CP_TENSOR)
    t = tmap.type
    start = (_first_unit(t, coords[0]),) + coords[1:]
    _check_box_alignment(t, coords[0], start[0])
    dims = (tmap.global_dims[0] // t.values,) + tmap.global_dims[1:]
    byte_strides = (t.global_bytes,) + tmap.global_strides
    return start, dims, byte_strides, _box_counts(tmap)


def shared_row_pitch(tmap: TensorMap, counts: Sequence[int]) -> int:
    """The bytes between two rows of a tile-mode box in shared memory: the row's own bytes, or,
    with a swizzle, a whole row of the swizzle pattern -- an H100 and an H200 lay a box whose inner
    dimension holds fewer bytes than the span (16 bytes under ``32B``, 48 under ``64B`` or
    ``128B``) one row per span, the bytes past the row left as they were (the TMA round,
    ``conformance/data/sm_90/tma.npz``). The manual's figures of §5.5.7 only show rows that fill
    the span."""
    row = counts[0] * tmap.type.shared_bytes
    span = SWIZZLE_SPAN.get(tmap.swizzle, 0)
    return max(row, span) if span else row


def _tile_offset(tmap: TensorMap, counts: Sequence[int], k: Sequence[int]) -> int:
    """The shared-memory offset of box unit ``k`` (dimension 0 fastest), rows at :func:`shared_row_pitch`."""
    row = 0
    for ki, n in zip(reversed(k[1:]), reversed(counts[1:])):
        row = row * n + ki
    return row * shared_row_pitch(tmap, counts) + k[0] * tmap.type.shared_bytes


def tile_box_reference(tmap: TensorMap, coords: Sequence[int]) -> Box:
    """The tile-mode box (§5.5.3) at tensor coordinates ``coords`` ("the tensor coordinates
    specify the starting offset of the bounding box"), by plain loops: box element ``(k_0, ...,
    k_{r-1})`` (dimension 0 fastest) is tensor element ``coords[i] + k_i * traversal_stride[i]``
    ("the traversal stride specifies the exact number of elements to be skipped", §5.5.3.2), with
    ``ceil(box[i] / stride[i])`` of them along dimension ``i``; an element outside ``[0, size)`` in
    any dimension is out of bounds (§5.5.3.3)."""
    start, dims, byte_strides, counts = _tile_setup(tmap, coords)
    offsets: list[int] = []
    addresses: list[int] = []
    for index in itertools.product(*(range(n) for n in reversed(counts))):
        k = index[::-1]
        x = [c + ki * s for c, ki, s in zip(start, k, tmap.strides)]
        inside = all(0 <= xi < d for xi, d in zip(x, dims))
        offsets.append(_tile_offset(tmap, counts, k))
        addresses.append(tmap.global_address + sum(xi * b for xi, b in zip(x, byte_strides)) if inside else -1)
    return Box(tmap.type, np.array(offsets, dtype=np.int64), np.array(addresses, dtype=np.int64))


def tile_box(tmap: TensorMap, coords: Sequence[int]) -> Box:
    """:func:`tile_box_reference` computed with numpy (§5.5.3; the tests prove the two equal)."""
    start, dims, byte_strides, counts = _tile_setup(tmap, coords)
    # Addresses beyond 2^62 would overflow the int64 arithmetic: the loops have Python integers.
    reach = sum(max(0, min(d - 1, c + (n - 1) * s)) * b for c, d, n, s, b in zip(start, dims, counts, tmap.strides, byte_strides))
    if tmap.global_address + reach >= 1 << 62:
        return tile_box_reference(tmap, coords)
    k = np.indices(tuple(reversed(counts)), dtype=np.int64).reshape(len(counts), -1)[::-1]
    x = np.asarray(start, dtype=np.int64)[:, None] + k * np.asarray(tmap.strides, dtype=np.int64)[:, None]
    inside = np.all((x >= 0) & (x < np.asarray(dims, dtype=np.int64)[:, None]), axis=0)
    addresses = tmap.global_address + (x * np.asarray(byte_strides, dtype=np.int64)[:, None]).sum(axis=0)
    addresses = np.where(inside, addresses, -1)
    rows = np.arange(k.shape[1], dtype=np.int64) // counts[0]
    offsets = rows * shared_row_pitch(tmap, counts) + k[0] * tmap.type.shared_bytes
    return Box(tmap.type, offsets, addresses.astype(np.int64))


def interleaved_box(tmap: TensorMap, coords: Sequence[int]) -> Box:
    """The tile-mode box of an interleaved map (§5.5.6: "NC/8HWC8 where C8 utilizes 16 bytes in
    memory ... NC/16HWC16 where C16 uses 32 bytes") as an sm_90 chip reads it. The manual gives
    no element address for these layouts; this reading is what an H100 and an H200 do (the
    tma-more and tma-interleave rounds, ``conformance/data/sm_90``), with ``I`` the interleave's
    bytes and ``r`` the rank:

    - dimension 0 is counted in ``I``-byte slices: ``coords[0]``, ``box_dims[0]`` and
      ``global_dims[0]`` are slice numbers and counts, slice ``x0`` starting at byte ``x0 * I``
      of its row (the element size does not enter), and ``elementStrides[0]`` steps it as the
      traversal stride steps any dimension: ``x0 = coords[0] + j * elementStrides[0]`` for
      ``ceil(box_dims[0] / elementStrides[0])`` slices;
    - dimension ``r - 2`` is not stepped: only ``x[r-2] = coords[r-2]`` is loaded;
    - the other dimensions step as in the tile mode (§5.5.3.2), ``x[i] = coords[i] + k[i] *
      elementStrides[i]``, dimension 1 fastest;
    - row ``p`` of the box is its slices, each at byte ``x0 * I + sum(x[i] * globalStrides[i-1])``
      of global memory (a row may run on into the next), dense in shared memory: slice ``j`` of
      row ``p`` at offset ``(p * slices + j) * I`` (§5.5.7's swizzle applies to those offsets);
    - a slice is out of bounds (§5.5.3.3, filled whole) when its ``x0`` or any ``x[i]`` lies
      outside the tensor's counts.

    Units are elements, ``I / size`` of them a slice."""
    _check_tile(tmap, "the tile mode")
    assert tmap.box_dims is not None and tmap.interleave != "none"
    coords = _s32(coords, "the tile mode", CP_TENSOR)
    if len(coords) != tmap.rank:
        raise OperandError(f"a .{tmap.rank}d tensor copy takes {tmap.rank} tensor coordinates; got {len(coords)}", section=CP_TENSOR)
    t, rank = tmap.type, tmap.rank
    slice_bytes = INTERLEAVE_BYTES[tmap.interleave]
    stepped = [i for i in range(1, rank) if i != rank - 2]
    counts = [-(-tmap.box_dims[i] // tmap.strides[i]) for i in stepped]
    slices = -(-tmap.box_dims[0] // tmap.strides[0])
    offsets: list[int] = []
    addresses: list[int] = []
    elements = range(0, slice_bytes, t.global_bytes)
    for p, index in enumerate(itertools.product(*(range(n) for n in reversed(counts)))):
        x = list(coords)
        for i, k in zip(stepped, reversed(index)):
            x[i] = coords[i] + k * tmap.strides[i]
        row_inside = all(0 <= x[i] < tmap.global_dims[i] for i in range(1, rank))
        row = tmap.global_address + sum(x[i] * tmap.global_strides[i - 1] for i in range(1, rank))
        for j in range(slices):
            x0 = coords[0] + j * tmap.strides[0]
            inside = row_inside and 0 <= x0 < tmap.global_dims[0]
            for e in elements:
                offsets.append((p * slices + j) * slice_bytes + e)
                addresses.append(row + x0 * slice_bytes + e if inside else -1)
    return Box(t, np.array(offsets, dtype=np.int64), np.array(addresses, dtype=np.int64))


def gather4_box(tmap: TensorMap, coords: Sequence[int]) -> Box:
    """The box of ``.tile::gather4`` / ``.tile::scatter4`` (§5.5.3.4) at ``coords = {col_idx,
    row_idx0, row_idx1, row_idx2, row_idx3}`` (§9.7.9.25.5.2): "four request coordinates will form
    four Bounding Boxes in the tensor space", each a row of ``box[0]`` elements from ``col_idx`` in
    row ``row_idxN`` ("the size of the bounding box in dimension 1 must be one"), the four rows one
    after another in shared memory ("four rows in the source 2D tensor are combined to form a
    single 2D destination tensor"). The modes are "only for 2D tensor data" and take no interleaved
    layout."""
    _check_tile(tmap, ".tile::gather4/.tile::scatter4")
    assert tmap.box_dims is not None
    if tmap.rank != 2:
        raise OperandError(f'.tile::gather4/.tile::scatter4 on a {tmap.rank}D tensor: "these modes work only on 2D tensor data"', section=GATHER4)
    if tmap.interleave != "none":
        raise OperandError('.tile::gather4/.tile::scatter4 with an interleaved layout: "the interleave layout is not supported"', section=GATHER4)
    if tmap.box_dims[1] != 1:
        raise OperandError(
            f'a .tile::gather4/.tile::scatter4 box of {tmap.box_dims[1]} rows: "the size of the bounding box in the dimension 1 must be one"',
            section=GATHER4_BOX,
        )
    coords = _s32(coords, ".tile::gather4/.tile::scatter4", CP_TENSOR)
    if len(coords) != 5:
        raise OperandError(f".tile::gather4/.tile::scatter4 takes 5 tensor coordinates {{col_idx, row_idx0..3}}; got {len(coords)}", section=CP_TENSOR)
    t = tmap.type
    col = _first_unit(t, coords[0])
    width = tmap.box_dims[0] // t.values
    x0 = col + np.arange(width, dtype=np.int64)
    columns_inside = (x0 >= 0) & (x0 < tmap.global_dims[0] // t.values)
    addresses = []
    for row in coords[1:]:
        inside = columns_inside & (0 <= row < tmap.global_dims[1])
        addresses.append(np.where(inside, tmap.global_address + x0 * t.global_bytes + row * tmap.global_strides[0], -1))
    offsets = np.arange(4 * width, dtype=np.int64) * t.shared_bytes
    return Box(t, offsets, np.concatenate(addresses).astype(np.int64))


def im2col_box(tmap: TensorMap, coords: Sequence[int], offsets: Sequence[int] | None = None) -> Box:
    """The box of ``.im2col`` (with ``offsets``, the ``im2colInfo`` vector ``{i2cOffW, i2cOffH,
    i2cOffD}``) or ``.im2col_no_offs`` (``offsets`` None) (§5.5.4). The tensor is C, W, (H, (D,)) N
    from dimension 0; ``coords`` = ``{c, w, (h, (d,)) n}``: "across N and C dimensions: the starting
    offsets along the dimension, similar to the tiled mode; across DHW dimensions: the location of
    the convolution filter base ... The filter corner location must be within the bounding box"
    (§5.5.4.1). Pixels-per-Column pixels are taken in NDHW order from that position, W fastest,
    the filter base stepping by the traversal stride of each of D, H, W ("the number of elements
    traversed along the D, H and W dimensions is strided by the traversal stride", §5.5.4.2) over
    the box's positions ``lower .. size - 1 + upper`` (our reading; module notes), then to the next
    image; each pixel reads Channels-per-Pixel elements from ``c`` at its filter base plus the
    im2col offsets ("added to the filter base coordinates to determine the starting location").
    Elements outside the tensor, and pixels past the last image, are out of bounds (§5.5.4.3).
    In shared memory pixel ``p``'s channels follow pixel ``p - 1``'s, at the row pitch of
    :func:`shared_row_pitch` (a pixel narrower than the swizzle span takes the whole span)."""
    p = tmap.im2col
    if p is None:
        raise OperandError("an im2col copy needs a tensor map of the im2col mode; this one is for the tile mode", section=IM2COL)
    if p.wide is not None:
        raise OperandError(f"this tensor map is for .im2col::{p.wide.replace('w128', 'w::128')}, not .im2col", section=IM2COL_W)
    if tmap.interleave != "none":
        raise NotModelled("im2col with an interleaved layout: the manual does not say how the C slices of §5.5.6 meet the pixel columns", section=INTERLEAVE)
    rank = tmap.rank
    spatial = rank - 2
    coords = _s32(coords, "the im2col mode", CP_TENSOR)
    if len(coords) != rank:
        raise OperandError(f"a .{rank}d tensor copy takes {rank} tensor coordinates; got {len(coords)}", section=CP_TENSOR)
    offs = tuple(int(o) for o in offsets) if offsets is not None else (0,) * spatial
    if len(offs) != spatial:
        raise OperandError(f'a .{rank}d .im2col copy takes {spatial} im2col offsets: "a vector size two less than the number of dimensions"', section=CP_TENSOR)
    limit = 1 << OFFSET_BITS[rank]
    for o in offs:
        if not 0 <= o < limit:
            raise OperandError(f"im2col offset {o} of a {rank}D tensor is outside [0, {limit - 1}]", section=IM2COL_BOX)
    t = tmap.type
    lower, upper = p.lower_corner, p.upper_corner
    sizes = tmap.global_dims[1 : rank - 1]
    high = [s - 1 + u for s, u in zip(sizes, upper)]
    position = list(coords[1 : rank - 1])
    for j in range(spatial):
        if not lower[j] <= position[j] <= high[j]:
            raise OperandError(
                f"the filter base {position[j]} in {'WHD'[j]} is outside the bounding box [{lower[j]}, {high[j]}]: "
                '"the filter corner location must be within the bounding box"',
                section=IM2COL_BOX,
            )
    image = coords[rank - 1]
    _check_box_alignment(t, coords[0], _first_unit(t, coords[0]))
    channels = _first_unit(t, coords[0]) + np.arange(p.channels_per_pixel // t.values, dtype=np.int64)
    channels_inside = (channels >= 0) & (channels < tmap.global_dims[0] // t.values)
    steps = tmap.strides[1 : rank - 1]
    image_stride = tmap.global_strides[rank - 2]
    addresses = []
    for _ in range(p.pixels_per_column):
        x = [position[j] + offs[j] for j in range(spatial)]
        inside = 0 <= image < tmap.global_dims[rank - 1] and all(0 <= x[j] < sizes[j] for j in range(spatial))
        pixel = tmap.global_address + image * image_stride + sum(x[j] * tmap.global_strides[j] for j in range(spatial))
        addresses.append(np.where(channels_inside & inside, pixel + channels * t.global_bytes, -1))
        for j in range(spatial):
            position[j] += steps[j]
            if position[j] <= high[j]:
                break
            position[j] = lower[j]
        else:
            # the next image by N's traversal stride too: the H100 strides N as it strides D, H
            # and W (the tma-more round), where §5.5.4.2 names only "the D, H and W dimensions"
            image += tmap.strides[rank - 1]
    # a pixel is a row of the box: with a swizzle, one per span (shared_row_pitch), as in the
    # tile mode -- an H100 lays 32-byte pixels 64 bytes apart under 64B (the tma-more round)
    pitch = shared_row_pitch(tmap, (len(channels),))
    shared = (np.arange(p.pixels_per_column, dtype=np.int64)[:, None] * pitch + np.arange(len(channels), dtype=np.int64) * t.shared_bytes).reshape(-1)
    return Box(t, shared, np.concatenate(addresses).astype(np.int64))


def im2col_w_box(tmap: TensorMap, coords: Sequence[int], w_halo: int, w_offset: int = 0) -> Box:
    """``.im2col::w`` / ``.im2col::w::128`` (§5.5.5): the operands are checked (``wHalo`` in [0,
    512) or [0, 32), ``wOffset`` in [0, 32), §9.7.9.25.5.2), then the copy is refused as
    :class:`NotModelled`: §5.5.5 fixes that D and H stay at the coordinates, that the W corners
    and W move by ``wOffset`` (§5.5.5.4) and how many pixels are loaded, but shows only in figures
    (16-24) which pixels the halo elements are, where they sit in shared memory between the groups
    of 32 of ``::w::128``, what happens past the box's W corner, and how the traversal stride and
    the halo combine."""
    p = tmap.im2col
    if p is None or p.wide is None:
        raise OperandError("an .im2col::w copy needs a tensor map made for it (im2col wide)", section=IM2COL_W)
    coords = _s32(coords, ".im2col::w", CP_TENSOR)
    if len(coords) != tmap.rank:
        raise OperandError(f"a .{tmap.rank}d tensor copy takes {tmap.rank} tensor coordinates; got {len(coords)}", section=CP_TENSOR)
    if not 0 <= w_halo < W_HALO_LIMIT[p.wide]:
        raise OperandError(f"wHalo {w_halo} is outside [0, {W_HALO_LIMIT[p.wide]}) for .im2col::{p.wide.replace('w128', 'w::128')}", section=CP_TENSOR)
    if not 0 <= w_offset < W_OFFSET_LIMIT:
        raise OperandError(f"wOffset {w_offset} is outside [0, {W_OFFSET_LIMIT})", section=CP_TENSOR)
    raise NotModelled(
        ".im2col::w / .im2col::w::128: the manual shows only in figures which pixels the wHalo halo elements are and where they lie "
        "in shared memory, and what the copy does past the bounding box's W corner",
        section=IM2COL_W,
    )


# ---------------------------------------------------------------------------------------------
# Loads (global -> shared) and stores (shared -> global)
# ---------------------------------------------------------------------------------------------

#: What a byte a load writes is (:attr:`SharedWrite.kinds`).
COPIED, ZERO_FILL, NAN_FILL, UNDEFINED = 0, 1, 2, 3


def _shared_alignment(tmap: TensorMap) -> int:
    return ATOMICITY_ALIGNMENT[tmap.swizzle_atomicity] if tmap.swizzle != "none" else 16


def _check_shared_address(tmap: TensorMap, address: int) -> None:
    align = _shared_alignment(tmap)
    if address < 0 or address % align:
        why = (
            '"the address of the bounding box must be aligned to 16 bytes"'
            if align == 16
            else f"{tmap.swizzle_atomicity} atomicity needs {align}-byte alignment"
        )
        raise OperandError(f"shared memory address {address:#x} is not {align}-byte aligned: {why}", section=BOUNDING_BOX if align == 16 else SWIZZLE)


def shared_byte_addresses(tmap: TensorMap, box: Box, address: int) -> np.ndarray:
    """The swizzled shared-memory address (§5.5.7) of every byte of the box, shape ``(units,
    shared_bytes)``, box order: byte ``j`` of unit ``i`` is at
    ``swizzle(address + shared_offsets[i] + j)``."""
    linear = address + box.shared_offsets[:, None] + np.arange(box.element.shared_bytes, dtype=np.int64)[None, :]
    return swizzle_address(linear, tmap.swizzle, tmap.swizzle_atomicity)


def _indeterminate_mask(segment: Segment) -> np.ndarray:
    mask = np.zeros(len(segment.data), dtype=bool)
    for a, b in segment.indeterminate:
        mask[max(a - segment.base, 0) : max(b - segment.base, 0)] = True
    return mask


def _gather(segment: Segment, addresses: np.ndarray, size: int, space: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``size`` bytes at each address (rows), and which of them are indeterminate."""
    if addresses.size and (addresses.min() < segment.base or addresses.max() + size > segment.end):
        bad = addresses[(addresses < segment.base) | (addresses + size > segment.end)][0]
        raise OutsideImage(f"the {space} memory image [{segment.base:#x}, {segment.end:#x}) does not hold the {size} bytes at {int(bad):#x} the copy reads")
    index = addresses[:, None] - segment.base + np.arange(size, dtype=np.int64)[None, :]
    image = np.frombuffer(segment.data, dtype=np.uint8)
    return image[index], _indeterminate_mask(segment)[index]


def _ranges(addresses: np.ndarray) -> list[tuple[int, int]]:
    """Sorted unique addresses as half-open ranges."""
    out: list[tuple[int, int]] = []
    for a in np.unique(addresses).tolist():
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], a + 1)
        else:
            out.append((a, a + 1))
    return out


def _written(segment: Segment, addresses: np.ndarray, data: np.ndarray, undefined: np.ndarray, space: str) -> Segment:
    """``segment`` with ``data`` at the scattered byte ``addresses``, those flagged ``undefined``
    left indeterminate (and 0), the others now holding a value."""
    addresses = addresses.reshape(-1)
    if addresses.size and (addresses.min() < segment.base or addresses.max() >= segment.end):
        bad = addresses[(addresses < segment.base) | (addresses >= segment.end)][0]
        raise OperandError(f"the {space} memory image [{segment.base:#x}, {segment.end:#x}) does not hold byte {int(bad):#x} that the copy writes")
    image = np.frombuffer(segment.data, dtype=np.uint8).copy()
    undefined = undefined.reshape(-1)
    image[addresses - segment.base] = np.where(undefined, 0, data.reshape(-1))
    mask = _indeterminate_mask(segment)
    mask[addresses - segment.base] = undefined
    open_bytes = np.flatnonzero(mask) + segment.base
    return Segment(segment.base, image.tobytes(), tuple(_ranges(open_bytes)))


@attrs.frozen(eq=False)
class SharedWrite:
    """What a global -> shared tensor copy writes: ``addresses`` (the swizzled shared-memory
    address of each byte), ``data`` (its value) and ``kinds`` (:data:`COPIED`, :data:`ZERO_FILL`,
    :data:`NAN_FILL`, :data:`UNDEFINED`: padding of a sub-byte unit, "the padded region is
    un-initialized", or an indeterminate source byte), each of shape ``(units, shared_bytes)`` in
    box order. A NaN-filled element's bytes in ``data`` are 0: its value is any member of ``nan``.
    ``conversion_open``: the element type is ``.tf32`` or a ``.ftz`` one, whose loads the manual
    may round or flush (module notes); the bytes here are the source's."""

    element: ElementType
    addresses: np.ndarray
    data: np.ndarray
    kinds: np.ndarray
    nan: AnyNaN | None
    conversion_open: bool

    def element_results(self) -> list[Result]:
        """Each element's bits in box order (little-endian), the :class:`AnyNaN` an OOB-NaN element (§5.5.3.3)
        may be, or :class:`AnyBits` where a byte is undefined; sub-byte units give their bytes as
        one integer."""
        out: list[Result] = []
        for row, kind in zip(self.data, self.kinds):
            if kind[0] == NAN_FILL:
                assert self.nan is not None
                out.append(self.nan)
            elif (kind == UNDEFINED).any():
                out.append(AnyBits(8 * len(row)))
            else:
                out.append(int.from_bytes(bytes(row.tolist()), "little"))
        return out

    def written_to(self, shared: Segment, nan_bits: int | None = None) -> Segment:
        """``shared`` after the copy (§9.7.9.25.5.2). ``nan_bits``: the OOB-NaN's pattern where a profile knows it;
        without it the NaN-filled bytes are left indeterminate (a :class:`Segment` cannot say "any
        NaN", so this is the safe superset)."""
        data = self.data.copy()
        undefined = self.kinds == UNDEFINED
        nans = self.kinds == NAN_FILL
        if nans.any():
            if nan_bits is None:
                undefined = undefined | nans
            else:
                assert self.nan is not None
                if nan_bits not in self.nan:
                    raise OperandError(f"{nan_bits:#x} is not a {self.nan.format.name} NaN", section=OUT_OF_BOUNDS)
                pattern = np.frombuffer(int(nan_bits).to_bytes(self.element.shared_bytes, "little"), dtype=np.uint8)
                data = np.where(nans, pattern[None, :], data)
        return _written(shared, self.addresses, data, undefined, "shared")


def load(tmap: TensorMap, box: Box, global_memory: Segment, address: int) -> SharedWrite:
    """The bytes a global -> shared tensor copy of ``box`` writes at the shared-memory
    ``address`` (§9.7.9.25.5.2): an element inside the tensor is its global bytes, one outside is
    filled -- "set to 0" in zero fill mode, "set to a special NaN called OOB-NaN" in OOB-NaN fill
    mode (§5.5.3.3) -- and the padding of ``.b4x16_p64`` / ``.b6x16_p32`` units is uninitialised
    (§5.5.1.1.1). The bytes land at their swizzled addresses (§5.5.7)."""
    t = box.element
    if t.name == "b6p2x16":
        t = ELEMENT_TYPES["b6x16_p32"]
    if t.name == "b6x16_p32" and tmap.swizzle_atomicity == "64B":
        raise OperandError(f".b6x16_p32 loaded with 128B swizzling of 64B atomicity ({DRIVER}: 128B_ATOM_64B is for stores only)", section=RESTRICTIONS)
    _check_shared_address(tmap, address)
    units = len(box.shared_offsets)
    inside = box.in_bounds
    data = np.zeros((units, t.shared_bytes), dtype=np.uint8)
    kinds = np.full((units, t.shared_bytes), ZERO_FILL if tmap.oob_fill == "zero" else NAN_FILL, dtype=np.uint8)
    values, unknown = _gather(global_memory, box.global_addresses[inside], t.global_bytes, "global")
    data[inside, : t.global_bytes] = values
    kinds[inside, : t.global_bytes] = np.where(unknown, UNDEFINED, COPIED)
    if t.shared_bytes > t.global_bytes:
        kinds[:, t.global_bytes :] = UNDEFINED
    nan = AnyNaN(FORMATS[t.nan_format]) if t.nan_format is not None and tmap.oob_fill == "nan" else None
    conversion = t.name in ("tf32", "tf32.ftz", "f32.ftz")
    return SharedWrite(t, shared_byte_addresses(tmap, box, address), data, kinds, nan, conversion)


@attrs.frozen(eq=False)
class GlobalWrite:
    """What a shared -> global tensor copy writes: for each unit of the box inside the tensor (box
    order) its global ``addresses`` and ``data`` (shape ``(units, global_bytes)``), and which of
    those bytes are ``undefined`` (read from indeterminate shared bytes, or written by two
    elements with different values: ``overlapping``). Out-of-bound elements are not written. The reductions (§9.7.9.25.5.3) combine ``data`` with the bytes there."""

    element: ElementType
    addresses: np.ndarray
    data: np.ndarray
    undefined: np.ndarray
    overlapping: bool = False

    def written_to(self, global_memory: Segment) -> Segment:
        """``global_memory`` after a plain copy, no reduction (§9.7.9.25.5.2)."""
        full = self.addresses[:, None] + np.arange(self.element.global_bytes, dtype=np.int64)[None, :]
        return _written(global_memory, full, self.data, self.undefined, "global")


def _pack6(rows: np.ndarray) -> np.ndarray:
    """``.b6p2x16``: the low 6 bits of each of 16 bytes packed into 12 bytes, element ``j`` at
    bits ``6j..6j+5`` of the little-endian 96-bit chunk (our reading of Figure 7)."""
    values = rows.astype(np.uint64) & 0x3F
    out = np.zeros((rows.shape[0], 12), dtype=np.uint8)
    for j in range(16):
        bit = 6 * j
        byte, shift = divmod(bit, 8)
        out[:, byte] |= ((values[:, j] << np.uint64(shift)) & np.uint64(0xFF)).astype(np.uint8)
        if shift > 2:
            out[:, byte + 1] |= (values[:, j] >> np.uint64(8 - shift)).astype(np.uint8)
    return out


def _pack6_undefined(rows: np.ndarray) -> np.ndarray:
    """Which packed bytes take bits of an indeterminate shared byte."""
    out = np.zeros((rows.shape[0], 12), dtype=bool)
    for j in range(16):
        first, last = (6 * j) // 8, (6 * j + 5) // 8
        out[:, first] |= rows[:, j]
        out[:, last] |= rows[:, j]
    return out


def store(tmap: TensorMap, box: Box, shared: Segment, address: int) -> GlobalWrite:
    """The bytes a shared -> global tensor copy of ``box`` from the shared-memory ``address``
    writes (§9.7.9.25.5.2, ``.global.shared::cta``): each element inside the tensor, read at its
    swizzled shared address (§5.5.7); elements outside the tensor are not written. ``.b6p2x16``
    drops the 2 padding bits of each byte (§5.5.1.1.1); ``.b4x16_p64`` "is not supported" in this
    direction (§9.7.9.25.5.1). Where two elements of the box name the same global byte with
    different values (strides that overlap, an interleaved row that runs on into the next) the
    manual does not order their writes: the byte is left indeterminate, the superset of either
    value, and :attr:`GlobalWrite.overlapping` says so."""
    t = box.element
    if t.name == "b6x16_p32":
        t = ELEMENT_TYPES["b6p2x16"]
    if t.name == "b4x16_p64":
        raise OperandError(
            '.b4x16_p64 from shared to global: "cp.async.bulk.tensor with the direction .global.shared::cta does not support the type .b4x16_p64"',
            section=RESTRICTIONS,
        )
    _check_shared_address(tmap, address)
    inside = box.in_bounds
    # The source is the whole box in shared memory, its out-of-bound elements too: an H100 and an
    # H200 fault on a store whose box runs past the CTA's shared memory even where no element of
    # it lies inside the tensor (the tma-more round).
    every = shared_byte_addresses(tmap, box, address)
    _gather(shared, every.reshape(-1), 1, "shared")
    where = every[inside]
    values, unknown = _gather(shared, where.reshape(-1), 1, "shared")
    values = values.reshape(where.shape)
    unknown = unknown.reshape(where.shape)
    if t.name == "b6p2x16":
        values, unknown = _pack6(values), _pack6_undefined(unknown)
    addresses = box.global_addresses[inside]
    footprint = (addresses[:, None] + np.arange(t.global_bytes, dtype=np.int64)[None, :]).reshape(-1)
    overlapping = len(np.unique(footprint)) != len(footprint)
    if overlapping:
        unknown = unknown | _unordered(footprint, values.reshape(-1)).reshape(unknown.shape)
    return GlobalWrite(t, addresses, values, unknown, overlapping)


def _unordered(footprint: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Which written bytes share their address with a write of another value (their order open)."""
    order = np.lexsort((values, footprint))
    same_place = footprint[order][1:] == footprint[order][:-1]
    clash = same_place & (values[order][1:] != values[order][:-1])
    clashing = np.unique(footprint[order][1:][clash])
    return np.isin(footprint, clashing)


def tile_load(tmap: TensorMap, coords: Sequence[int], global_memory: Segment, address: int) -> SharedWrite:
    """``cp.async.bulk.tensor`` global -> shared in the tile mode (§5.5.3, §9.7.9.25.5.2): the
    box at ``coords`` loaded to the shared-memory ``address``."""
    return load(tmap, tile_box(tmap, coords), global_memory, address)


def tile_store(tmap: TensorMap, coords: Sequence[int], shared: Segment, address: int, global_memory: Segment) -> Segment:
    """``cp.async.bulk.tensor`` shared -> global in the tile mode (§5.5.3, §9.7.9.25.5.2): the box
    at ``coords`` stored from the shared-memory ``address``; the new global memory."""
    return store(tmap, tile_box(tmap, coords), shared, address).written_to(global_memory)


def im2col_store_box(tmap: TensorMap, coords: Sequence[int]) -> Box:
    """The box of a shared -> global ``.im2col_no_offs`` copy (§9.7.9.25.5.2/.3): the im2col box
    without offsets, for which "the bounding box along the D, W and H dimensions must stay within
    the tensor boundaries: the lower corner must be non-negative and the upper corner
    non-positive" (§9.7.9.25.5.1)."""
    p = tmap.im2col
    if p is not None and (any(v < 0 for v in p.lower_corner) or any(v > 0 for v in p.upper_corner)):
        raise OperandError(
            f"im2col corners {p.lower_corner} / {p.upper_corner} for a store: "
            '"the lower corner of the bounding box must be non-negative; the upper corner must be non-positive"',
            section=RESTRICTIONS,
        )
    return im2col_box(tmap, coords, None)
