"""ldmatrix, stmatrix and movmatrix (§9.7.14.5.15-17) as pure functions on a shared-memory byte
image and the 32 lanes' registers.

These are not registered with :func:`~ptxspec.semantics.instructions.semantic`: the registry calls
``fn(form, *sources)`` with one bit pattern (or 32 lane values) per register operand, and these
instructions read and write *memory* through per-lane addresses -- their inputs are a byte image
and addresses, their output (for stmatrix) a new image. They take the parsed form (or its text)
like the registered functions do, so a caller can go from instruction text to result.

Up to sm_90 the manual has ``ldmatrix.sync.aligned.m8n8.num{.trans}{.ss}.b16`` (sm_75),
``stmatrix.sync.aligned.m8n8.num{.trans}{.ss}.b16`` (sm_90) and
``movmatrix.sync.aligned.m8n8.trans.b16`` (sm_75); these are the forms implemented here. The
``.m16n16``/``.m8n16``/``.b8``/``.b6x16_p32``/``.b4x16_p64`` forms of ldmatrix and the ``.m16n8 .b8``
form of stmatrix (sm_100a, sm_101a, sm_120a) are in the catalogue; their fragment layouts are
given only as figures (104, 105, 107) and are not modelled here: the functions raise
:class:`~ptxspec.spec.errors.PtxSpecError` for them.

The 8x8 ``.b16`` fragment (figures 103, 106, 108, which the text describes): "each thread in a warp
loads a fragment of a row of the matrix, with thread 0 receiving the first fragment in its
register r, and so on. A group of four threads loads an entire row of the matrix": lane ``t`` holds
row ``t // 4``, columns ``2 * (t % 4)`` (low half of the register) and ``2 * (t % 4) + 1`` (high
half) -- :func:`m8n8_fragment`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxspec.semantics.matrix_layout import FragmentLayout, WARP
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError, PtxSpecError

#: "When reading 8x8 matrices, a group of four consecutive threads loads 16 bytes. The matrix
#: addresses must be naturally aligned accordingly." (§9.7.14.5.15; stmatrix alike, §9.7.14.5.16)
ROW_BYTES = 16


def m8n8_fragment() -> FragmentLayout:
    """The 8x8 ``.b16`` fragment of ldmatrix/stmatrix/movmatrix: lane ``t`` holds row ``t >> 2``,
    columns ``2 * (t % 4) + index`` (figures 103, 106, 108). It is the quadrant layout of the mma
    ``.f16`` A fragment (§9.7.14.5.7: "row = groupID; col = threadID_in_group * 2 + (i & 0x1)")."""
    return FragmentLayout("x", 8, 8, 16, 32, 1, "m8n8", "b16", formula=lambda lane, i: (lane >> 2, 2 * (lane % 4) + i), section="9.7.14.5.15")


_FRAGMENT = m8n8_fragment()


def _as_form(form: Form | str) -> Form:
    from ptxspec.spec.matrix import CATALOGUE

    return CATALOGUE.parse(form) if isinstance(form, str) else form


def _count(form: Form) -> int:
    """".num: the values .x1, .x2 and .x4 indicate one, two or four matrices"."""
    return {"x1": 1, "x2": 2, "x4": 4}[form["num"]]


def _only_m8n8_b16(form: Form) -> None:
    if form["shape"] != "m8n8" or form["type"] != "b16":
        raise PtxSpecError(
            f"{form.text}: the .{form['shape']} .{form['type']} fragment layout is given only as a figure in the manual "
            "(sm_100a and later); only .m8n8 .b16 is modelled",
            section=form.family.section,
        )


def row_addresses(form: Form, addresses: Sequence[int]) -> list[int]:
    """The row addresses ``addr0 .. addr(8*num - 1)``: "each address corresponds to the start of a
    matrix row. Addresses addr0–addr7 correspond to the rows of the first matrix, addresses
    addr8–addr15 to the rows of the second matrix, and so forth", supplied by threads 0-7 for
    .x1, 0-15 for .x2, 0-31 for .x4. ``addresses`` holds one value per lane (32) or only the
    lanes that supply one (``8 * num``); the others are not read ("for .target sm_75 and below, all
    threads must contain valid addresses" is a rule for programs on those targets, not a value this
    function reads)."""
    wanted = 8 * _count(form)
    if len(addresses) not in (wanted, WARP):
        raise OperandError(f"{form.text} reads {wanted} row addresses (threads 0-{wanted - 1}); got {len(addresses)}", section=form.family.section)
    out = [int(a) for a in addresses[:wanted]]
    for lane, address in enumerate(out):
        if address < 0:
            raise OperandError(f"lane {lane}: negative address {address}", section=form.family.section)
        if address % ROW_BYTES:
            raise OperandError(
                f"lane {lane}: row address {address:#x} is not 16-byte aligned (\"a group of four consecutive threads loads 16 "
                'bytes. The matrix addresses must be naturally aligned accordingly")',
                section=form.family.section,
            )
    return out


def _rows(image: np.ndarray, form: Form, addresses: list[int]) -> np.ndarray:
    """The 8*num rows of eight 16-bit elements (little-endian) at ``addresses``: [num, 8, 8]."""
    for lane, address in enumerate(addresses):
        if address + ROW_BYTES > image.size:
            raise OperandError(f"lane {lane}: row address {address:#x} + 16 bytes lies outside the {image.size}-byte image", section=form.family.section)
    index = np.asarray(addresses)[:, None] + np.arange(ROW_BYTES)[None, :]
    data = image[index].astype(np.uint64)  # [8*num, 16]
    elements = data[:, 0::2] | (data[:, 1::2] << np.uint64(8))  # [8*num, 8]
    return elements.reshape(_count(form), 8, 8)


def _image(image) -> np.ndarray:
    array = np.frombuffer(bytes(image), dtype=np.uint8) if isinstance(image, (bytes, bytearray, memoryview)) else np.asarray(image)
    if array.dtype != np.uint8 or array.ndim != 1:
        raise OperandError(f"a shared-memory image is bytes or a 1-D uint8 array, got {array.dtype} of shape {array.shape}")
    return array


def ldmatrix(form: Form | str, image, addresses: Sequence[int]) -> np.ndarray:
    """§9.7.14.5.15 ldmatrix: "collectively load one or more matrices from shared memory".

    Returns the destination ``r`` of every lane, uint32 ``[32, num]``: "Each component of the vector
    expression holds a fragment from the corresponding matrix" (register ``j`` = matrix ``j``),
    each as :func:`m8n8_fragment` places it. "The optional qualifier .trans indicates that the
    matrix is loaded in column-major format": the fragment is that of the transposed matrix --
    lane ``t`` receives elements ``[2*(t%4)][t//4]`` and ``[2*(t%4)+1][t//4]`` of the rows read.
    """
    form = _as_form(form)
    _only_m8n8_b16(form)
    image = _image(image)
    matrices = _rows(image, form, row_addresses(form, addresses))  # [num, 8, 8]
    if "trans" in form:
        matrices = np.swapaxes(matrices, -1, -2)
    registers = _FRAGMENT.from_matrix(matrices)  # [num, 32, 1]
    return np.ascontiguousarray(registers[..., 0].T).astype(np.uint32)


def stmatrix(form: Form | str, image, addresses: Sequence[int], registers) -> np.ndarray:
    """§9.7.14.5.16 stmatrix: "collectively store one or more matrices to shared memory".

    ``registers``: the source ``r`` of every lane, ``[32, num]``. "Each thread in a warp stores a
    fragment of a row of the matrix, with thread 0 storing the first fragment from its register r,
    and so on"; with ``.trans`` "the matrix is stored in column-major format". Returns a new image
    (uint8) with the 8*num rows of 16 bytes written at their addresses. Rows that overlap are
    written in the order addr0, addr1, ... (the manual does not order the writes of one
    stmatrix; such overlap is the caller's race).
    """
    form = _as_form(form)
    _only_m8n8_b16(form)
    image = _image(image).copy()
    num = _count(form)
    addresses = row_addresses(form, addresses)
    regs = np.asarray(registers, dtype=np.uint64)
    if regs.shape != (WARP, num):
        raise OperandError(f"{form.text} stores from {num} register(s) per lane: expected shape (32, {num}), got {regs.shape}", section=form.family.section)
    if np.any(regs >> np.uint64(32)):
        raise OperandError(f"{form.text}: a source register does not fit 32 bits", section=form.family.section)
    matrices = _FRAGMENT.to_matrix(regs.T[..., None])  # [num, 8, 8]
    if "trans" in form:
        matrices = np.swapaxes(matrices, -1, -2)
    rows = matrices.reshape(8 * num, 8)
    for lane, address in enumerate(addresses):
        if address + ROW_BYTES > image.size:
            raise OperandError(f"lane {lane}: row address {address:#x} + 16 bytes lies outside the {image.size}-byte image", section=form.family.section)
        row = rows[lane]
        image[address : address + ROW_BYTES : 2] = (row & np.uint64(0xFF)).astype(np.uint8)
        image[address + 1 : address + ROW_BYTES : 2] = (row >> np.uint64(8)).astype(np.uint8)
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
    _only_m8n8_b16(form)
    lanes = np.asarray(a, dtype=np.uint64)
    if lanes.shape != (WARP,):
        raise OperandError(f"{form.text} takes one source register per lane (32), got shape {lanes.shape}", section=form.family.section)
    if np.any(lanes >> np.uint64(32)):
        raise OperandError(f"{form.text}: a source register does not fit 32 bits", section=form.family.section)
    matrix = _FRAGMENT.to_matrix(lanes[:, None])
    return _FRAGMENT.from_matrix(matrix.T)[:, 0].astype(np.uint32)
