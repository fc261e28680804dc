"""§9.7.16.9 The layout facts of ``tcgen05.cp`` (§9.7.16.9.2): which Tensor Memory lanes receive
each source row (:func:`cp_destinations`), where in shared memory each source row's 16-byte units
are read (:func:`cp_source_addresses`), and the optional decompression of §9.7.16.9.1
(:func:`decompress`), as pure functions on numpy arrays.

The manual gives the shapes (§9.7.16.2.3: ".4x256b, .32x128b, .64x128b, .128x256b, .128x128b" for
``.cp``, a shape being "lane x size" with "lane indicates the number of rows in the Tensor Memory"
and "size indicates the amount of data, in units of bits (b), across the columns"), the legal
multicasts and the warp pairs, but neither the row-to-lane map of each form, nor how the copy reads
the matrix descriptor, nor the bits of the decompression (Figures 194-198 are images). Those are
pinned here against NVIDIA CUTLASS, commit ``7107b05535f8977f5ecb9d01ee203205b1fd9bc4``
(:data:`CUTLASS_COMMIT`); the facts are taken from it, not its code:

* ``include/cute/arch/copy_sm100.hpp``: the atoms ``SM100_UTCCP_128dp256bit_{1,2}cta``
  (``tcgen05.cp.cta_group::N.128x256b``), ``_128dp128bit_`` (``.128x128b``), ``_4dp256bit_``
  (``.4x256b``), ``_4x32dp128bit_`` (``.32x128b.warpx4``), ``_2x64dp128bitlw0213_``
  (``.64x128b.warpx2::02_13``) and ``_2x64dp128bitlw0123_`` (``.64x128b.warpx2::01_23``, with the
  comment "data_row[0:31] -> DP[0:63], data_row[32:63] -> DP[64:127]").
* ``include/cute/atom/copy_traits_sm100.hpp``: their ``Copy_Traits``, whose ``ValID`` maps
  "logical_bit_idx -> tmem_addr_offset" (lane stride ``TMEM::DP_b``), numbered "[core_matrix_strided,
  core_matrix_leading, broadcast, repeat]", with ``SrcLayout`` / ``DstLayout``; the ``_2cta`` traits
  reuse the ``_1cta`` ``ValID`` and give the second thread (the peer CTA) a stride-0 copy, so the
  lane map does not depend on ``.cta_group`` (§9.7.16.9.2: with ``.cta_group::2`` "the data is
  copied into the Tensor Memory of both the current and the peer CTAs").
* ``include/cute/atom/mma_traits_sm100.hpp`` ``get_utccp_smem_desc_tensor``: the source descriptor
  is ``make_umma_desc<UMMA::Major::K>`` (``include/cute/arch/mma_sm100_desc.hpp``) of the tensor of
  shape (core_matrix_strided, core_matrix_leading) = (rows, bits of a row): a K-major canonical
  layout, rows along MN, the row's 16-byte units along K.
* ``examples/python/CuTeDSL/experimental/primitives/tcgen05/cp_narrow_a_to_tmem_mma.py``: "FP4
  UTCCP holder byte: ``00xxxx00`` (payload bits [5:2]). FP6 UTCCP holder byte: ``0xxxxxx0``
  (payload bits [6:1])", and the packed source ``_pack_four_fp6_codes`` (``code | code << 6 | code
  << 12 | code << 18``, bytes least significant first) and ``_make_packed_a`` (``one | one << 4``).

What stays open is said where it applies: the shared memory rows that ``.4x256b`` reads
(:func:`cp_source_addresses` refuses it).
"""

from __future__ import annotations

import numpy as np

from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.spec.errors import OperandError

CP = "9.7.16.9.2"
DECOMPRESSION = "9.7.16.9.1"
SHAPE_SECTION = "9.7.16.2.3"
DESCRIPTOR = "9.7.16.4.1"

#: The NVIDIA CUTLASS commit whose SM100 UTCCP atoms pin the facts that the manual leaves to figures.
CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"

#: §9.7.16.9.2 ".shape = { .128x256b, .4x256b, .128x128b, .64x128b**, .32x128b*** }".
CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")

#: The ``.multicast`` each shape takes (None: no ``.multicast``). §9.7.16.9.2: ".64x128b requires
#: .warpx2::02_13 or .warpx2::01_23", ".32x128b requires .warpx4"; the syntax marks the multicasts
#: with the same ``**`` / ``***`` as those two shapes, so the other shapes take none (as CUTLASS's
#: atoms and the CuTeDSL ``tcgen05_cp`` check: "the wider shapes (.128x256b / .4x256b / .128x128b)
#: take no multicast").
CP_MULTICASTS: dict[str, tuple[str | None, ...]] = {
    "128x256b": (None,),
    "4x256b": (None,),
    "128x128b": (None,),
    "64x128b": ("warpx2::02_13", "warpx2::01_23"),
    "32x128b": ("warpx4",),
}

#: The CUTLASS atom (``SM100::TMEM::UTCCP``, without its ``_1cta`` / ``_2cta`` suffix) of each form.
CUTLASS_ATOMS: dict[tuple[str, str | None], str] = {
    ("128x256b", None): "SM100_UTCCP_128dp256bit",
    ("4x256b", None): "SM100_UTCCP_4dp256bit",
    ("128x128b", None): "SM100_UTCCP_128dp128bit",
    ("64x128b", "warpx2::02_13"): "SM100_UTCCP_2x64dp128bitlw0213",
    ("64x128b", "warpx2::01_23"): "SM100_UTCCP_2x64dp128bitlw0123",
    ("32x128b", "warpx4"): "SM100_UTCCP_4x32dp128bit",
}

#: Tensor Memory lanes that one ``tcgen05.cp`` may reach: 4 warps of 32 lanes (§9.7.16.9.2 names
#: "warps 0 and 2", "all 4 warps").
LANES = 128
WARP_LANES = 32

#: §9.7.16.9.2 ".src_fmt = { .b6x16_p32 , .b4x16_p64 }": (bits per element, bytes of packed data
#: before the padding). §9.7.16.9.1.1: "A contiguous set of 16 elements of 4-bits each followed by
#: 8 bytes of padding"; §9.7.16.9.1.2: "16 elements of 6-bits each followed by 4 bytes of padding".
SOURCE_FORMATS: dict[str, tuple[int, int]] = {"b4x16_p64": (4, 8), "b6x16_p32": (6, 12)}

#: Where each element lands in its 8-bit destination container (".dst_fmt = { .b8x16 }"): the left
#: shift of its bits. CUTLASS ``cp_narrow_a_to_tmem_mma.py`` (:data:`CUTLASS_COMMIT`): "FP4 UTCCP
#: holder byte: 00xxxx00 (payload bits [5:2]). FP6 UTCCP holder byte: 0xxxxxx0 (payload bits
#: [6:1])"; that kernel feeds the result to ``tcgen05.mma.kind::mxf8f6f4`` with A in Tensor Memory,
#: whose packing formats are §9.7.16.10.4.3's Figures 199-201. The manual's Figures 195 and 197-198
#: are images and are not transcribed here. The copy does not know the element type
#: (``.b6x16_p32`` is untyped), so E3M2 and E2M3 land alike.
CONTAINER_SHIFT: dict[str, int] = {"b4x16_p64": 2, "b6x16_p32": 1}


def _name(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise OperandError(f"tcgen05.cp {what} must be a string, got {value!r}", section=CP)
    return value.removeprefix(".")


def _shape(shape: str) -> str:
    name = _name(shape, ".shape")
    if name not in CP_SHAPES:
        raise OperandError(f"tcgen05.cp has no shape .{name} (.shape = {{ {', '.join('.' + s for s in CP_SHAPES)} }})", section=CP)
    return name


def cp_rows_and_bits(shape: str) -> tuple[int, int]:
    """(rows, bits per row) of a ``tcgen05.cp`` shape: §9.7.16.2.3 "lane x size", "lane indicates
    the number of rows in the Tensor Memory" and "size indicates the amount of data, in units of
    bits (b), across the columns": ``128x256b`` -> (128, 256), ``4x256b`` -> (4, 256),
    ``128x128b`` -> (128, 128), ``64x128b`` -> (64, 128), ``32x128b`` -> (32, 128).

    The rows are the rows of the *source*: with a multicast each is written to more than one lane
    (:func:`cp_destinations`; CUTLASS's ``SrcLayout`` of ``SM100_UTCCP_4x32dp128bit`` covers 32 rows
    of 128 bits, of ``SM100_UTCCP_2x64dp128bit*`` 64 rows)."""
    rows, bits = _shape(shape).split("x")
    return int(rows), int(bits.removesuffix("b"))


def check_form(shape: str, multicast: str | None = None) -> tuple[str, str | None]:
    """The normalised (shape, multicast) of a legal form (§9.7.16.9.2; leading dots optional);
    refused with :class:`OperandError`: an unknown shape or multicast, ".64x128b requires
    .warpx2::02_13 or .warpx2::01_23", ".32x128b requires .warpx4", and a multicast on the shapes
    that take none (:data:`CP_MULTICASTS`)."""
    name = _shape(shape)
    cast = _name(multicast, ".multicast")
    allowed = CP_MULTICASTS[name]
    if cast not in allowed:
        if cast is not None and cast not in {m for ms in CP_MULTICASTS.values() for m in ms if m}:
            raise OperandError(f"tcgen05.cp has no multicast .{cast} (.multicast = {{ .warpx2::02_13, .warpx2::01_23, .warpx4 }})", section=CP)
        wanted = " or ".join("no .multicast" if m is None else f".{m}" for m in allowed)
        got = "no .multicast" if cast is None else f".{cast}"
        raise OperandError(f"tcgen05.cp.{name} with {got}: .{name} takes {wanted}", section=CP)
    return name, cast


def cp_destinations(shape: str, multicast: str | None = None) -> np.ndarray:
    """The Tensor Memory lanes that receive each source row, as offsets from ``taddr``'s lane: an
    int64 array (rows, copies), ``[r, c]`` the lane of copy ``c`` of source row ``r`` (each row's
    ``bits`` land in the columns from ``taddr``'s column on, in every copy). §9.7.16.9.2, with the
    map of each form from CUTLASS's ``Copy_Traits`` (:data:`CUTLASS_COMMIT`):

    * ``.128x256b``, ``.128x128b`` (``SM100_UTCCP_128dp256bit``, ``_128dp128bit``: ``ValID``
      ``(128, bits):(DP_b, 1)``): row ``r`` -> lane ``r``.
    * ``.4x256b`` (``SM100_UTCCP_4dp256bit``: ``DstLayout`` ``(4, 256):(32, 128)`` into the
      ``ValID`` ``(128, 256):(DP_b, 1)``, "4DP utccp is designed to refresh the last 4 lanes of
      each tmem subpartition"): row ``i`` -> lane ``32 i``, one lane in each warp's 32 (the lane
      that ``tcgen05.shift`` frees: "shifting ... downwards across all the rows, except the last,
      by one row", §9.7.16.9.3, and "tcgen05.shift.cta_group::N -> tcgen05.cp.4x256b" is a
      pipeline, §9.7.16.6.2).
    * ``.64x128b.warpx2::02_13`` (``SM100_UTCCP_2x64dp128bitlw0213``: ``ValID``
      ``(64, 128, 2):(DP_b, 1, 64 DP_b)``): row ``r`` -> lanes ``r`` and ``r + 64`` -- rows 0-31 to
      warps 0 and 2, rows 32-63 to warps 1 and 3 ("warps 0 and 2 form a pair; warps 1 and 3 form a
      pair", "each warp in the warp pair receive half of the data").
    * ``.64x128b.warpx2::01_23`` (``SM100_UTCCP_2x64dp128bitlw0123``: ``ValID``
      ``(32, 128, 2, 2):(DP_b, 1, 64 DP_b, 32 DP_b)`` with ``SrcLayout`` rows ``r + 32 repeat``;
      "data_row[0:31] -> DP[0:63], data_row[32:63] -> DP[64:127]"): row ``r`` -> lanes
      ``64 (r // 32) + r % 32`` and that plus 32 -- rows 0-31 to warps 0 and 1, rows 32-63 to warps
      2 and 3 ("warps 0 and 1 form a pair; warps 2 and 3 form a pair").
    * ``.32x128b.warpx4`` (``SM100_UTCCP_4x32dp128bit``: ``ValID`` ``(32, 128, 4):(DP_b, 1, 32
      DP_b)``): row ``r`` -> lanes ``r + 32 w``, ``w`` = 0..3 ("multicasted into all 4 warps").

    Refused (:func:`check_form`): a shape with a multicast it does not take."""
    name, cast = check_form(shape, multicast)
    rows, _bits = cp_rows_and_bits(name)
    r = np.arange(rows, dtype=np.int64)[:, None]
    if cast is None:
        step = 1 if rows == LANES else WARP_LANES  # .4x256b: one row per warp's 32 lanes
        return r * step
    if cast == "warpx4":
        return r + WARP_LANES * np.arange(4, dtype=np.int64)[None, :]
    if cast == "warpx2::02_13":
        return r + 2 * WARP_LANES * np.arange(2, dtype=np.int64)[None, :]
    first = 2 * WARP_LANES * (r // WARP_LANES) + r % WARP_LANES  # warpx2::01_23
    return first + WARP_LANES * np.arange(2, dtype=np.int64)[None, :]


def cp_source_addresses(descriptor: td.SmemDescriptor | int, shape: str) -> np.ndarray:
    """The byte address in shared memory of each source row's 16-byte units: an int64 array
    (rows, bits // 128), ``[r, u]`` the first byte of unit ``u`` of row ``r`` (its 16 bytes are
    consecutive: every canonical layout keeps 16 bytes of K together, and the swizzles move whole
    16-byte units).

    §9.7.16.9.2 says only that "The 64-bit register operand s-desc is the matrix descriptor which
    represents the source matrix in the shared memory"; how the copy reads it is CUTLASS's (
    :data:`CUTLASS_COMMIT`): ``get_utccp_smem_desc_tensor`` builds the descriptor with
    ``make_umma_desc<UMMA::Major::K>`` on the tensor of shape (core_matrix_strided,
    core_matrix_leading) = (rows, bits of a row). So the source is the K-major canonical layout of
    §9.7.16.3.3 with the rows along M/N and a row's 16-byte units along K, and the address is
    :func:`~ptxspec.semantics.tcgen05_descriptors.element_address` of element (``r``, ``u``) of
    8-bit elements (16 of them to a unit): no swizzle, ``start + (r % 8) 16 + (r // 8) SBO + u LBO``;
    swizzled (32B, 64B, 128B), ``(r % 8) W + (r // 8) SBO + 16 u`` before the swizzle. Rows past the
    first two modes (the ``repeat`` of ``.64x128b.warpx2::01_23``) continue along M/N: its
    ``SrcLayout`` numbers them ``r + 32 repeat`` in the same source tensor.

    Refused (:class:`OperandError`):

    * ``.4x256b``: not determined. CUTLASS models ``SM100_UTCCP_4dp256bit`` as a "TMEM refresh"
      whose ``SrcLayout`` maps the copy's 4 rows onto rows 0, 32, 64, 96 of a 128-row *logical*
      tile, no CUTLASS code builds its descriptor, and ``make_umma_desc<Major::K>`` requires "MN-size
      multiple of 8"; the manual says nothing, so which 4 rows of the canonical layout it reads
      (rows 0-3 of the first core matrix, or rows 32 apart) is open.
    * what :func:`~ptxspec.semantics.tcgen05_descriptors.element_address` refuses: the
      ``128B_base32B`` swizzle (no K-major canonical layout; CUTLASS: "SWIZZLE_128B_BASE32B is
      invalid for Major-K") and the absolute leading-dimension mode.
    """
    name = _shape(shape)
    if name == "4x256b":
        raise OperandError(
            "tcgen05.cp.4x256b: which shared memory rows it reads is not determined (the manual does not say how "
            "tcgen05.cp reads s-desc; CUTLASS's SM100_UTCCP_4dp256bit is a 'TMEM refresh' atom with no descriptor "
            "construction, and make_umma_desc<Major::K> requires an MN size that is a multiple of 8)",
            section=CP,
        )
    rows, bits = cp_rows_and_bits(name)
    r = np.arange(rows, dtype=np.int64)[:, None]
    u = np.arange(bits // 128, dtype=np.int64)[None, :]
    byte, _bit = td.element_address(descriptor, 8, r, 16 * u, "K")
    return np.broadcast_to(np.asarray(byte, dtype=np.int64), (rows, bits // 128)).copy()


def _source_format(source_format: str) -> str:
    name = _name(source_format, ".src_fmt")
    if name not in SOURCE_FORMATS:
        raise OperandError(f"tcgen05.cp has no source format .{name} (.src_fmt = {{ .b6x16_p32, .b4x16_p64 }})", section=CP)
    return name


def decompress(units, source_format: str) -> np.ndarray:
    """§9.7.16.9.1, ``.b8x16`` from ``.b6x16_p32`` or ``.b4x16_p64``: each 16-byte unit of the
    source ("16 elements of 6-bits each followed by 4 bytes of padding", "16 elements of 4-bits
    each followed by 8 bytes of padding") becomes "16 elements of 8-bits each". ``units``: uint8
    (or integers 0-255) of shape (..., 16); returns uint8 (..., 16), byte ``k`` the container of
    element ``k``.

    * Source bits: the elements are "contiguous" (§9.7.16.9.1), packed as in global memory and
      padded by the tensor copy (§5.5.1.1.1: ".b4x16_p64 ... sixteen consecutive 4-bit data ...
      with 64 bits of padding appended", ".b6x16_p32 ... sixteen 6-bit data ... with 32 bits of
      padding"), least significant first: element ``k`` is bits ``w k .. w k + w - 1`` of the
      little-endian integer of the first 8 (``w`` = 4) or 12 (``w`` = 6) bytes -- CUTLASS's
      ``_pack_four_fp6_codes`` (``c0 | c1 << 6 | c2 << 12 | c3 << 18``, then bytes low first) and
      ``_make_packed_a`` (``e0 | e1 << 4``). The padding bytes are ignored.
    * Destination: "payload bits [5:2]" (4-bit) and "payload bits [6:1]" (6-bit), the other bits 0
      (:data:`CONTAINER_SHIFT`, from CUTLASS ``cp_narrow_a_to_tmem_mma.py`` at
      :data:`CUTLASS_COMMIT`; Figures 194-198 are images).
    """
    name = _source_format(source_format)
    raw = np.asarray(units)
    if raw.ndim == 0 or raw.shape[-1] != 16:
        raise OperandError(f"tcgen05.cp decompression works on 16-byte units: shape (..., 16), got {raw.shape}", section=DECOMPRESSION)
    if raw.dtype != np.uint8:
        if raw.dtype.kind not in "iu" or raw.size and (raw.min() < 0 or raw.max() > 0xFF):
            raise OperandError("tcgen05.cp decompression: the source units are bytes (integers 0-255)", section=DECOMPRESSION)
        raw = raw.astype(np.uint8)
    width, nbytes = SOURCE_FORMATS[name]
    data = raw[..., :nbytes].astype(np.uint64)
    packed = np.zeros(raw.shape[:-1], dtype=np.uint64)
    for i in range(nbytes):  # the little-endian integer of the packed bytes (at most 96 bits: two halves)
        if 8 * i < 64:
            packed |= data[..., i] << np.uint64(8 * i)
    high = np.zeros(raw.shape[:-1], dtype=np.uint64)
    for i in range(8, nbytes):
        high |= data[..., i] << np.uint64(8 * (i - 8))
    out = np.empty(raw.shape, dtype=np.uint8)
    mask = np.uint64((1 << width) - 1)
    for k in range(16):
        lo = width * k
        if lo + width <= 64:
            element = (packed >> np.uint64(lo)) & mask
        elif lo >= 64:
            element = (high >> np.uint64(lo - 64)) & mask
        else:  # straddles bit 64
            element = ((packed >> np.uint64(lo)) | (high << np.uint64(64 - lo))) & mask
        out[..., k] = (element << np.uint64(CONTAINER_SHIFT[name])).astype(np.uint8)
    return out


__all__ = [
    "CP_SHAPES",
    "CP_MULTICASTS",
    "CUTLASS_ATOMS",
    "CUTLASS_COMMIT",
    "SOURCE_FORMATS",
    "CONTAINER_SHIFT",
    "cp_rows_and_bits",
    "check_form",
    "cp_destinations",
    "cp_source_addresses",
    "decompress",
]
