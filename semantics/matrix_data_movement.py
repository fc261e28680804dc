"""ldmatrix, stmatrix and movmatrix (§9.7.14.5.15-17) as pure functions on a shared-memory byte
image and the 32 lanes' registers.

ldmatrix and stmatrix read and write *memory* through per-lane addresses: their inputs are a byte
image and addresses, their output (for stmatrix) a new image. They take the parsed form (or its
text), so a caller can go from instruction text to result. The registry
(:mod:`ptxspec.semantics.instructions`) reaches them through :func:`ldmatrix_warp`,
:func:`stmatrix_warp` and :func:`movmatrix_warp`: the same functions in its calling convention
(the state's shared memory, each operand the 32 lanes' values, one result per lane).

Every form the catalogue (:mod:`ptxspec.spec.matrix`) accepts is modelled:

=====================================================  ==========  =======  ======================
form                                                   memory      rows     fragment (per matrix)
=====================================================  ==========  =======  ======================
``ldmatrix/stmatrix .m8n8 .x1/.x2/.x4 {.trans} .b16``  8 x 8 b16   8        8x8, 1 register
``ldmatrix .m16n16 .x1/.x2 .trans .b8``                16 x 16 b8  16       16x16, 2 registers
``ldmatrix .m16n16 .x1/.x2 .trans .b8x16.{src_fmt}``   16 x 16     16       16x16, 2 registers
``ldmatrix .m8n16 .x1/.x2/.x4 .b8x16.{src_fmt}``       8 x 16      8        8x16, 1 register
``stmatrix .m16n8 .x1/.x2/.x4 .trans .b8``             8 x 16 b8   8        16x8, 1 register
``movmatrix .m8n8 .trans .b16``                        --          --       8x8, 1 register
=====================================================  ==========  =======  ======================

*memory* is the matrix as the rows at the lanes' addresses hold it (every row is 16 bytes: eight
16-bit elements, sixteen 8-bit ones, or sixteen packed 6-/4-bit ones with their padding); the
*fragment* is the matrix the registers hold -- the memory matrix itself, or with ``.trans`` its
transpose ("the optional qualifier .trans indicates that the matrix is loaded in column-major
format"). :func:`movement_layout` gives both for a form.

The 8x8 ``.b16`` fragment (figures 103, 106, 108, which the text describes): "each thread in a warp
loads a fragment of a row of the matrix, with thread 0 receiving the first fragment in its
register r, and so on. A group of four threads loads an entire row of the matrix": lane ``t`` holds
row ``t // 4``, columns ``2 * (t % 4)`` (low half of the register) and ``2 * (t % 4) + 1`` (high
half) -- :func:`m8n8_fragment`.

The 8-bit fragments are given as figures 104, 105 and 107, which the text describes only in part
("each thread in a warp loads 4 consecutive columns across 2 rows", "each thread loads 4
consecutive columns", "each of the 32 threads provides four data elements per matrix"); the byte
order within those words is our reading of the figures, which NVIDIA's CUTLASS copy traits for the
same instructions (``SM100_U8x8_LDSM_T``, ``SM100_U8x16_LDSM_T``, ``SM100_SU{4,6}_DU8x16_x*_LDSM_N``,
``SM100_U8x{4,8,16}_STSM_T``) corroborate element for element -- for .m16n16 once the byte shuffle
with which CUTLASS wraps that instruction is undone (tests/test_matrix_data_movement.py checks
both readings). These forms need sm_100a/sm_101a/sm_120a: no H100 recording can confirm them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics.instructions import WARP_LANES, WARP_MEMORY, semantic
from ptxspec.semantics.matrix_layout import WARP, FragmentLayout, group_id, thread_id_in_group
from ptxspec.semantics.results import Result
from ptxspec.semantics.state import State
from ptxspec.semantics.warp import FULL_MASK, WarpResult, lanes_of, per_thread, undefined_warp
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError

#: "When reading 8x8 matrices, a group of four consecutive threads loads 16 bytes. The matrix
#: addresses must be naturally aligned accordingly." (§9.7.14.5.15; stmatrix alike, §9.7.14.5.16).
#: Every row of every shape is 16 bytes ("an entire row of the matrix can be loaded by a group of
#: four consecutive and aligned threads", four bytes each for the 8-bit shapes).
ROW_BYTES = 16

#: The packed source formats of ldmatrix (§9.7.14.5.15 table): element bits, and the bytes of the
#: 16-byte row that hold the sixteen elements ("16 6-bit elements, 32 bits of padding"; "16 4-bit
#: elements, 64 bits of padding").
SOURCE_FORMATS = {"b6x16_p32": (6, 12), "b4x16_p64": (4, 8)}


# ---------------------------------------------------------------------------------------------
# Fragments
# ---------------------------------------------------------------------------------------------


def m8n8_fragment() -> FragmentLayout:
    """The 8x8 ``.b16`` fragment of ldmatrix/stmatrix/movmatrix: lane ``t`` holds row ``t >> 2``,
    columns ``2 * (t % 4) + index`` (figures 103, 106, 108). It is the quadrant layout of the mma
    ``.f16`` A fragment (§9.7.14.5.7: "row = groupID; col = threadID_in_group * 2 + (i & 0x1)")."""
    return FragmentLayout("x", 8, 8, 16, 32, 1, "m8n8", "b16", formula=lambda lane, i: (lane >> 2, 2 * (lane % 4) + i), section="9.7.14.5.15")


def m16n16_fragment() -> FragmentLayout:
    """§9.7.14.5.15, figure 104, the 16x16 matrix of 8-bit elements (loaded with ``.trans``): "two
    destination registers r0 and r1 of type .b32 must be specified and in each register four 8-bit
    elements are loaded"; "each thread in a warp loads 4 consecutive columns across 2 rows".

    Lane ``t`` holds rows ``groupID`` (register r0) and ``groupID + 8`` (r1), columns
    ``4 * threadID_in_group + j`` in byte ``j`` (byte 0 least significant) -- the mma m16n8k16
    8-bit A fragment (§9.7.14.5.9, figure 83: "row = groupID for ai where i < 4, groupID + 8 for ai
    where i >= 4; col = (threadID_in_group * 4) + (i & 0x3)").

    The figure is the only statement of the byte order. NVIDIA's CUTLASS (``SM100_U8x8_LDSM_T``)
    wraps this instruction with a byte shuffle before its copy-traits layout, whose inverse gives
    exactly this fragment (tests/test_matrix_data_movement.py checks it)."""

    def formula(lane: int, i: int) -> tuple[int, int]:
        register, j = divmod(i, 4)
        return group_id(lane) + 8 * register, 4 * thread_id_in_group(lane) + j

    return FragmentLayout("x", 16, 16, 8, 32, 2, "m16n16", "b8", formula=formula, section="9.7.14.5.15")


def m8n16_fragment() -> FragmentLayout:
    """§9.7.14.5.15, figure 105, the 8x16 matrix of 8-bit containers of 6-/4-bit data: "one
    destination register r0 of type .b32 must be specified where four 8-bit elements are loaded in
    the register"; "each thread in a warp loads 4 consecutive columns": lane ``t`` holds row
    ``groupID``, columns ``4 * threadID_in_group + j`` in its byte ``j``."""
    return FragmentLayout(
        "x", 8, 16, 8, 32, 1, "m8n16", "b8", formula=lambda lane, j: (group_id(lane), 4 * thread_id_in_group(lane) + j), section="9.7.14.5.15"
    )


def m16n8_fragment() -> FragmentLayout:
    """§9.7.14.5.16, figure 107, the 16x8 matrix of 8-bit elements (stored with ``.trans``): "each
    of the 32 threads in a warp provides four data elements per matrix"; "each element in the source
    operand r is of type .b32 and contains four 8-bit elements e0, e1, e2, e3 with e0 and e3
    containing the LSB and MSB of r". Element ``e_j`` of lane ``t`` is row ``groupID + 8 * (j >> 1)``,
    column ``2 * threadID_in_group + (j & 1)`` -- the shape of the mma m16n8 C/D fragment
    (§9.7.14.5.8: "row = groupID for ci where i < 2, groupID + 8 for ci where i >= 2; col =
    (threadID_in_group * 2) + (i & 0x1)")."""

    def formula(lane: int, j: int) -> tuple[int, int]:
        return group_id(lane) + 8 * (j >> 1), 2 * thread_id_in_group(lane) + (j & 1)

    return FragmentLayout("x", 16, 8, 8, 32, 1, "m16n8", "b8", formula=formula, section="9.7.14.5.16")


@attrs.frozen
class MovementLayout:
    """What one ldmatrix/stmatrix form moves, per matrix.

    ``fragment``: the matrix the registers hold and where (``fragment.registers`` registers per
    matrix; register ``m * fragment.registers + r`` of a lane is register ``r`` of matrix ``m``:
    "each component of the vector expression holds a fragment from the corresponding matrix").
    ``trans``: the memory matrix is the fragment's transpose. ``rows``: rows (= addresses) per
    matrix in memory. ``source_format``: the packed ``.src_fmt`` or None.
    """

    fragment: FragmentLayout
    trans: bool
    source_format: str | None = None

    @property
    def rows(self) -> int:
        return self.fragment.cols if self.trans else self.fragment.rows

    @property
    def columns(self) -> int:
        """Elements per memory row."""
        return self.fragment.rows if self.trans else self.fragment.cols


@functools.cache
def _fragment(shape: str) -> FragmentLayout:
    return {"m8n8": m8n8_fragment, "m16n16": m16n16_fragment, "m8n16": m8n16_fragment, "m16n8": m16n8_fragment}[shape]()


def movement_layout(form: Form | str) -> MovementLayout:
    """The :class:`MovementLayout` of an ldmatrix/stmatrix form: the shape names the fragment (the
    ldmatrix table ".m8n8: 8x8, 16-bit; .m16n16: 16x16, 8-bit, 6-bit or 4-bit; .m8n16: 8x16, 6-bit
    or 4-bit"; stmatrix ".m16n8" for ".b8"), ``.trans`` the transpose."""
    form = _as_form(form)
    if form.opcode not in ("ldmatrix", "stmatrix"):
        raise PtxSpecError(f"{form.text}: not an ldmatrix or stmatrix form", section=form.family.section)
    return MovementLayout(_fragment(form["shape"]), "trans" in form, form.get("src_fmt"))


_FRAGMENT = m8n8_fragment()


def _as_form(form: Form | str) -> Form:
    from ptxspec.spec.catalogue import parse

    if isinstance(form, str):
        return parse(form)
    if not isinstance(form, Form):
        raise PtxSpecError(f"an instruction form is its text or a parsed Form, got {type(form).__name__}")
    return form


def _count(form: Form) -> int:
    """ ".num: the values .x1, .x2 and .x4 indicate one, two or four matrices"."""
    return {"x1": 1, "x2": 2, "x4": 4}[form["num"]]


# ---------------------------------------------------------------------------------------------
# Addresses and rows
# ---------------------------------------------------------------------------------------------


def row_addresses(form: Form, addresses: Sequence[int]) -> list[int]:
    """The row addresses ``addr0 .. addr(rows*num - 1)``: "each address corresponds to the start of a
    matrix row. Addresses addr0–addr7 correspond to the rows of the first matrix, addresses
    addr8–addr15 to the rows of the second matrix, and so forth", supplied by threads 0-7 for
    .x1, 0-15 for .x2, 0-31 for .x4. A 16x16 matrix (ldmatrix .m16n16) has sixteen 16-byte rows,
    so its .x1 takes addr0-addr15 (threads 0-15) and .x2 addr0-addr31; the 16x8 matrix of stmatrix
    is stored transposed, as eight rows of 16 bytes.

    ``addresses`` holds one value per lane (32) or only the lanes that supply one; the others are
    not read ("for .target sm_75 and below, all threads must contain valid addresses" is a rule for
    programs on those targets, not a value this function reads)."""
    form = _as_form(form)
    wanted = movement_layout(form).rows * _count(form)
    try:
        addresses = list(addresses)
    except TypeError:
        raise OperandError(f"{form.text}: the row addresses are a sequence of integers, got {type(addresses).__name__}", section=form.family.section) from None
    if len(addresses) not in (wanted, WARP):
        raise OperandError(f"{form.text} reads {wanted} row addresses (threads 0-{wanted - 1}); got {len(addresses)}", section=form.family.section)
    out = []
    for lane, address in enumerate(addresses[:wanted]):
        if isinstance(address, bool) or not isinstance(address, (int, np.integer)):
            raise OperandError(f"lane {lane}: a row address is an integer, got {address!r}", section=form.family.section)
        address = int(address)
        if address < 0:
            raise OperandError(f"lane {lane}: negative address {address}", section=form.family.section)
        if address % ROW_BYTES:
            raise OperandError(
                f'lane {lane}: row address {address:#x} is not 16-byte aligned ("a group of four consecutive threads loads 16 '
                'bytes. The matrix addresses must be naturally aligned accordingly")',
                section=form.family.section,
            )
        out.append(address)
    return out


def _image(image) -> np.ndarray:
    """Shared memory as a 1-D uint8 array (byte 0 = address 0), from bytes or such an array."""
    try:
        array = np.frombuffer(bytes(image), dtype=np.uint8) if isinstance(image, (bytes, bytearray, memoryview)) else np.asarray(image)
    except ValueError:  # a ragged nesting of lists
        raise OperandError("a shared-memory image is bytes or a 1-D uint8 array") from None
    if array.dtype != np.uint8 or array.ndim != 1:
        raise OperandError(f"a shared-memory image is bytes or a 1-D uint8 array, got {array.dtype} of shape {array.shape}")
    return array


def _inside(image: np.ndarray, form: Form, addresses: list[int]) -> None:
    for lane, address in enumerate(addresses):
        if address + ROW_BYTES > image.size:
            raise OperandError(f"lane {lane}: row address {address:#x} + 16 bytes lies outside the {image.size}-byte image", section=form.family.section)


def unpack_row(row: np.ndarray, source_format: str) -> np.ndarray:
    """The sixteen 8-bit containers of one packed 16-byte row (``[..., 16]`` uint8 -> uint64).

    §9.7.14.5.15: "for the .b6x16_p32 format the source data is 16 unsigned 6-bit elements with 32
    bits of padding; for the .b4x16_p64 format, 16 unsigned 4-bit elements with 64 bits of
    padding", and "for 4-bit or 6-bit data, the 8-bit element will have 4 bits or 2 bits of padding
    respectively". The sixteen elements are packed contiguously from the row's first byte (§5.5.1.1.1,
    "sixteen consecutive 4-bit data ... with 64 bits of padding appended"; element ``k`` in bits
    ``[bits*k, bits*k + bits)`` of the little-endian word, as packed types place element 0 in the
    least significant bits), the padding bytes (12-15, or 8-15) are not read. Where each element
    lands in its container is the one the mma ``.kind::f8f6f4`` operands require, since ldmatrix
    loads "matrices for mma": "the .e2m1 matrix element is in the middle 4 bits of the 8-bit
    container, with padding in the upper 2 and lower 2 bits; .e3m2 and .e2m3 elements are in the
    lower 6 bits, with padding in the upper 2 bits" (§9.7.14.5.14). The padding bits are zero (the
    manual does not give their value; a loaded container then equals the element's mma encoding).
    """
    bits, _ = SOURCE_FORMATS[source_format]
    data = np.asarray(row, dtype=np.uint64)
    mask = np.uint64((1 << bits) - 1)
    fields = []
    for k in range(16):
        # element k starts at bit bits*k: in byte b at shift s, and ends at most in byte b + 1
        b, s = divmod(bits * k, 8)
        pair = data[..., b] | (data[..., b + 1] << np.uint64(8))
        fields.append((pair >> np.uint64(s)) & mask)
    elements = np.stack(fields, axis=-1)
    return elements << np.uint64(2) if bits == 4 else elements


def _read_rows(image: np.ndarray, layout: MovementLayout, addresses: list[int]) -> np.ndarray:
    """The rows at ``addresses`` as elements, uint64 ``[len(addresses), columns]``: 16-bit elements
    little-endian, 8-bit elements byte by byte, packed ones through :func:`unpack_row`."""
    index = np.asarray(addresses, dtype=np.intp)[:, None] + np.arange(ROW_BYTES)[None, :]
    data = image[index]  # [rows, 16] uint8
    if layout.source_format is not None:
        return unpack_row(data, layout.source_format)
    data = data.astype(np.uint64)
    if layout.fragment.element_bits == 16:
        return data[:, 0::2] | (data[:, 1::2] << np.uint64(8))
    return data


def _write_rows(image: np.ndarray, layout: MovementLayout, addresses: list[int], rows: np.ndarray) -> None:
    """Write ``rows`` (uint64 ``[len(addresses), columns]``) at ``addresses``, in the order addr0,
    addr1, ... (a later row wins where rows overlap)."""
    for address, row in zip(addresses, rows):
        if layout.fragment.element_bits == 16:
            image[address : address + ROW_BYTES : 2] = (row & np.uint64(0xFF)).astype(np.uint8)
            image[address + 1 : address + ROW_BYTES : 2] = (row >> np.uint64(8)).astype(np.uint8)
        else:
            image[address : address + ROW_BYTES] = row.astype(np.uint8)


def _registers(form: Form, registers, count: int) -> np.ndarray:
    """The lanes' source registers ``[32, count]`` as uint64, each a .b32 bit pattern."""
    try:
        regs = np.asarray(registers)
    except ValueError:  # a ragged nesting of lists
        raise OperandError(f"{form.text}: the source registers are a [32, {count}] array of integers", section=form.family.section) from None
    if regs.shape != (WARP, count):
        raise OperandError(f"{form.text} stores from {count} register(s) per lane: expected shape (32, {count}), got {regs.shape}", section=form.family.section)
    if regs.dtype.kind not in "iu" and regs.dtype != object:
        raise OperandError(f"{form.text}: registers are integer bit patterns, got {regs.dtype}", section=form.family.section)
    if regs.dtype == object and not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in regs.ravel()):
        raise OperandError(f"{form.text}: registers are integer bit patterns", section=form.family.section)
    if regs.dtype == object or regs.dtype.kind == "i":
        if any(int(v) < 0 or int(v) >> 32 for v in regs.ravel()):
            raise OperandError(f"{form.text}: a source register does not fit 32 bits (a .b32 value is 0 .. 2**32-1)", section=form.family.section)
        return regs.astype(np.uint64)
    regs = regs.astype(np.uint64)
    if np.any(regs >> np.uint64(32)):
        raise OperandError(f"{form.text}: a source register does not fit 32 bits (a .b32 value is 0 .. 2**32-1)", section=form.family.section)
    return regs


# ---------------------------------------------------------------------------------------------
# The instructions
# ---------------------------------------------------------------------------------------------


def _opcode(form: Form, opcode: str) -> None:
    if form.opcode != opcode:
        raise PtxSpecError(f"{form.text}: {opcode}() evaluates {opcode} forms, not {form.opcode}", section=form.family.section)


def ldmatrix(form: Form | str, image, addresses: Sequence[int]) -> np.ndarray:
    """§9.7.14.5.15 ldmatrix: "collectively load one or more matrices from shared memory".

    Returns the destination ``r`` of every lane, uint32 ``[32, registers]``: "Each component of the
    vector expression holds a fragment from the corresponding matrix" (matrix ``m`` fills registers
    ``m * R .. m * R + R - 1``, ``R`` = 2 for .m16n16, else 1), each as :func:`movement_layout`'s
    fragment places it. "The optional qualifier .trans indicates that the matrix is loaded in
    column-major format": the fragment is that of the transposed matrix -- for .m8n8 lane ``t``
    receives elements ``[2*(t%4)][t//4]`` and ``[2*(t%4)+1][t//4]`` of the rows read; ".trans is
    mandatory for the 16x16 matrix" (the catalogue enforces it). With ``.dst_fmt.src_fmt`` each
    row is unpacked (:func:`unpack_row`) before it is placed.
    """
    form = _as_form(form)
    _opcode(form, "ldmatrix")
    layout = movement_layout(form)
    image = _image(image)
    addresses = row_addresses(form, addresses)
    _inside(image, form, addresses)
    num = _count(form)
    matrices = _read_rows(image, layout, addresses).reshape(num, layout.rows, layout.columns)
    if layout.trans:
        matrices = np.swapaxes(matrices, -1, -2)
    registers = layout.fragment.from_matrix(matrices)  # [num, 32, R]
    return np.ascontiguousarray(np.moveaxis(registers, 0, 1).reshape(WARP, num * layout.fragment.registers)).astype(np.uint32)


def stmatrix(form: Form | str, image, addresses: Sequence[int], registers) -> np.ndarray:
    """§9.7.14.5.16 stmatrix: "collectively store one or more matrices to shared memory".

    ``registers``: the source ``r`` of every lane, ``[32, num]``. "Each thread in a warp stores a
    fragment of a row of the matrix, with thread 0 storing the first fragment from its register r,
    and so on"; with ``.trans`` "the matrix is stored in column-major format" (mandatory for the
    16x8 matrix of .b8: its sixteen rows become eight 16-byte rows in memory). Returns a new image
    (uint8) with the rows written at their addresses. Rows that overlap are written in the order
    addr0, addr1, ... (the manual does not order the writes of one stmatrix; such overlap is the
    caller's race).
    """
    form = _as_form(form)
    _opcode(form, "stmatrix")
    layout = movement_layout(form)
    image = _image(image).copy()
    num = _count(form)
    addresses = row_addresses(form, addresses)
    regs = _registers(form, registers, num * layout.fragment.registers)
    _inside(image, form, addresses)
    matrices = layout.fragment.to_matrix(np.moveaxis(regs.reshape(WARP, num, layout.fragment.registers), 1, 0))  # [num, rows, cols]
    if layout.trans:
        matrices = np.swapaxes(matrices, -1, -2)
    _write_rows(image, layout, addresses, matrices.reshape(num * layout.rows, layout.columns))
    return image


def movmatrix(form: Form | str, a) -> np.ndarray:
    """§9.7.14.5.17 movmatrix: "move a row-major matrix across all threads in a warp, reading
    elements from source a, and writing the transposed elements to destination d".

    ``a``: the 32 lanes' source registers. "Each thread in a warp holds a fragment of a row of
    the input matrix" (figure 108) and "each thread holds a fragment of a column of the result
    matrix, with thread 0 holding the first fragment in its register d" (figure 109): lane ``t``
    of ``d`` holds the transpose's row ``t // 4``, columns ``2*(t%4)`` and ``2*(t%4)+1``. Returns
    uint32 ``[32]``.
    """
    form = _as_form(form)
    _opcode(form, "movmatrix")
    try:
        lanes = np.asarray(a)
    except ValueError:  # a ragged nesting of lists
        raise OperandError(f"{form.text} takes one source register per lane (32)", section=form.family.section) from None
    if lanes.shape != (WARP,):
        raise OperandError(f"{form.text} takes one source register per lane (32), got shape {lanes.shape}", section=form.family.section)
    lanes = _registers(form, lanes[:, None], 1)[:, 0]
    matrix = _FRAGMENT.to_matrix(lanes[:, None])
    return _FRAGMENT.from_matrix(matrix.T)[:, 0].astype(np.uint32)


# ---------------------------------------------------------------------------------------------
# The same instructions in the registry's calling convention
# ---------------------------------------------------------------------------------------------

#: "The mandatory .aligned qualifier indicates that all threads in the warp must execute the same
#: <instruction> ... otherwise the behavior is undefined" (§9.7.14.5.15-17).
ALIGNED = "all threads in the warp must execute the same instruction (.aligned); otherwise the behavior is undefined"


@semantic("ldmatrix", "ldmatrix.fmt", operands=WARP_MEMORY)
def ldmatrix_warp(form: Form, state: State, p, *, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.14.5.15 :func:`ldmatrix` from ``state``'s shared memory at the lanes' row addresses
    ``p``: the registers ``r`` of every lane, and the state unchanged. A warp with inactive lanes
    gives undefined registers (:data:`ALIGNED`)."""
    del profile  # no choice of the chip: the manual fixes every bit
    if active != FULL_MASK:
        return tuple(undefined_warp(32) for _ in form.destinations), state
    return per_thread(ldmatrix(form, state.shared_image(), lanes_of(p, "p")), 32), state


@semantic("stmatrix", operands=WARP_MEMORY)
def stmatrix_warp(form: Form, state: State, p, *r, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.14.5.16 :func:`stmatrix` of the lanes' registers ``r`` to ``state``'s shared memory at
    their row addresses ``p``: no register result, and the new state. With inactive lanes the
    stores are undefined (:data:`ALIGNED`), which a byte image cannot hold: refused."""
    del profile
    if active != FULL_MASK:
        raise OperandError(f"{form.text}: {ALIGNED}, and a memory image cannot hold undefined bytes; active lanes {active:#010x}", section=form.family.section)
    registers = np.array([lanes_of(v, f"r.{i}") for i, v in enumerate(r)], dtype=np.uint64).T
    return (), state.with_shared(stmatrix(form, state.shared_image(), lanes_of(p, "p"), registers))


@semantic("movmatrix", operands=WARP_LANES)
def movmatrix_warp(form: Form, a, *, profile: Profile, active: int) -> WarpResult:
    """§9.7.14.5.17 :func:`movmatrix` of the lanes' registers ``a``. A warp with inactive lanes
    gives an undefined ``d`` (:data:`ALIGNED`)."""
    del profile
    if active != FULL_MASK:
        return undefined_warp(32)
    return per_thread(movmatrix(form, lanes_of(a, "a"))[:, None], 32)[0]
