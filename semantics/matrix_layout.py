"""Fragment layouts of the warp-level matrix instructions: which lane, register and bit field hold
which element of A, B, C and D (§9.7.14.5.1-13 for ``mma``, §9.7.14.6.2 for ``mma.sp``).

The manual gives each layout as a pair of formulas in the lane's ``groupID`` and
``threadID_in_group``,

    groupID           = %laneid >> 2
    threadID_in_group = %laneid % 4

and the element number ``i`` of the fragment (``a0, a1, ...``, "from low to high": element ``i``
is field ``i % P`` of register ``i // P``, where ``P`` elements share a register, element 0 in the
least significant bits). :meth:`FragmentLayout.element` evaluates those formulas for one element;
:meth:`FragmentLayout.to_matrix` and :meth:`FragmentLayout.from_matrix` apply the whole layout at
once to numpy arrays of bit patterns (index arrays built once per layout).

Three layouts need more than the common shape:

* ``mma.m8n8k4`` with ``.f16`` (§9.7.14.5.1): "a warp executing mma.m8n8k4 with .f16 computes 4
  MMA operations"; lanes 0-3 and 16-19 take part in computation 1, 4-7 and 20-23 in
  computation 2, and so on. Its layouts have ``computations == 4`` and the four matrices are
  stacked along the rows: rows ``q*R .. q*R+R-1`` of :meth:`to_matrix` belong to computation ``q``
  (``R = rows // 4``), so ``to_matrix(x).reshape(..., 4, R, cols)`` separates them.
* The sparse A operand of ``mma.sp`` (§9.7.14.6): registers hold only the non-zero half of each row.
  ``rows, cols`` are those of the dense M x K matrix, as for every A; ``stored_cols`` is K/2, and
  :meth:`element`, :meth:`to_matrix`, :meth:`from_matrix` work on the *stored* M x K/2 matrix (its
  row ``r`` is the non-zero elements of row ``r`` in order). :class:`MetadataLayout` and
  :func:`expand_sparse` place them in the dense matrix from the metadata operand.
* Sub-byte elements (``.s4``/``.u4``/``.e2m1`` of the 4-bit shapes, ``.b1``): ``element_bits`` is
  4 or 1 and a register holds 8 or 32 of them. In the ``.kind::f8f6f4`` shapes the fp6/fp4 elements
  sit in 8-bit containers ("the individual 4-bit and 6-bit floating point type elements must be
  packed in an 8-bit container", §9.7.14.5.14), so there ``element_bits`` is 8 and the element is
  the container's bit pattern.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs
import numpy as np

from ptxspec.spec.errors import OperandError, PtxSpecError

# ACCUMULATORS, DENSE_AB, SPARSE_AB: which layouts exist (re-exported for the mma semantics).
from ptxspec.spec.matrix import ACCUMULATORS, DENSE_AB, ELEMENT_BITS, SPARSE_AB, element_bits_of, fragment_registers, parse_shape  # noqa: F401

WARP = 32
WARPGROUP = 128  # §9.7.15.1: "a set of four contiguous warps"

Formula = Callable[[int, int], tuple[int, int]]  # (lane or thread, element number i) -> (row, col)


#: Who holds a fragment, by thread count: a warp's lanes (``mma``, ``ldmatrix``, ...) or the 128
#: threads of a warpgroup (``wgmma``, §9.7.15.5.1.1: ``thread = 32 * warp rank + lane``).
HOLDERS = {WARP: ("", "lane"), WARPGROUP: ("wgmma ", "thread")}


@attrs.frozen
class FragmentLayout:
    """One operand's fragment: ``registers`` registers of ``register_bits`` per thread, each holding
    ``register_bits // element_bits`` elements (element 0 in the least significant bits), placed by
    the manual's formula (see the module docstring). ``threads`` is who holds it: the 32 lanes of a
    warp (the default) or the 128 threads of a warpgroup (:mod:`ptxspec.semantics.wgmma_layout`,
    whose formula takes the thread 0..127 where a warp's takes the lane)."""

    operand: str
    rows: int
    cols: int
    element_bits: int
    register_bits: int
    registers: int
    shape: str = ""
    element_type: str = ""
    sparse: bool = False
    computations: int = 1
    formula: Formula = attrs.field(default=None, repr=False, eq=False)
    section: str = ""
    threads: int = attrs.field(default=WARP, kw_only=True, validator=attrs.validators.in_(HOLDERS))

    @property
    def per_register(self) -> int:
        """Elements in one register (``P``)."""
        return self.register_bits // self.element_bits

    @property
    def stored_cols(self) -> int:
        """Columns of the matrix the registers hold: K/2 for a sparse A (its non-zero half), else ``cols``."""
        return self.cols // 2 if self.sparse else self.cols

    def element(self, lane: int, register: int, index: int) -> tuple[int, int]:
        """(row, col) of the ``index``-th element of ``register`` of ``lane`` (0..threads-1; index
        0 = least significant bits): the manual's formula at ``i = register * P + index``."""
        if not (0 <= lane < self.threads and 0 <= register < self.registers and 0 <= index < self.per_register):
            unit = HOLDERS[self.threads][1]
            raise OperandError(f"no element ({unit} {lane}, register {register}, index {index}) in a {self.describe()}", section=self.section or None)
        return self.formula(lane, register * self.per_register + index)

    def describe(self) -> str:
        prefix, unit = HOLDERS[self.threads]
        kind = " sparse" if self.sparse else ""
        return f"{prefix}{self.shape}{kind} {self.operand.upper()} fragment of .{self.element_type} ({self.registers} x {self.register_bits}-bit registers per {unit})"

    # -- vectorised -----------------------------------------------------------------------------

    @functools.cached_property
    def _index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """rows[threads, R, P], cols[threads, R, P] and the shift of each field, built once."""
        rows = np.empty((self.threads, self.registers, self.per_register), dtype=np.intp)
        cols = np.empty_like(rows)
        for lane in range(self.threads):
            for r in range(self.registers):
                for k in range(self.per_register):
                    rows[lane, r, k], cols[lane, r, k] = self.element(lane, r, k)
        shifts = np.arange(self.per_register, dtype=np.uint64) * np.uint64(self.element_bits)
        return rows, cols, shifts

    def to_matrix(self, lanes) -> np.ndarray:
        """The matrix of element bit patterns (uint64 ``[..., rows, stored_cols]``) held by the
        lanes' registers (``[..., threads, registers]``, each a ``register_bits``-bit pattern)."""
        lanes = register_values(lanes, self.register_bits, self.describe())
        if lanes.shape[-2:] != (self.threads, self.registers):
            raise OperandError(
                f"a {self.describe()} takes [..., {self.threads}, {self.registers}] registers, got shape {lanes.shape}", section=self.section or None
            )
        rows, cols, shifts = self._index
        mask = np.uint64((1 << self.element_bits) - 1) if self.element_bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        fields = (lanes[..., None] >> shifts) & mask  # [..., threads, R, P]
        out = np.zeros(lanes.shape[:-2] + (self.rows, self.stored_cols), dtype=np.uint64)
        out[..., rows, cols] = fields
        return out

    def from_matrix(self, matrix) -> np.ndarray:
        """The inverse of :meth:`to_matrix`: registers ``[..., threads, registers]`` (uint64) holding
        the matrix ``[..., rows, stored_cols]`` of element bit patterns (which must fit
        ``element_bits``)."""
        matrix = np.asarray(matrix, dtype=np.uint64)
        if matrix.shape[-2:] != (self.rows, self.stored_cols):
            raise OperandError(f"a {self.describe()} holds a {self.rows} x {self.stored_cols} matrix, got shape {matrix.shape}", section=self.section or None)
        if self.element_bits < 64 and np.any(matrix >> np.uint64(self.element_bits)):
            raise OperandError(f"an element of the {self.describe()} does not fit {self.element_bits} bits", section=self.section or None)
        rows, cols, shifts = self._index
        fields = matrix[..., rows, cols] << shifts  # [..., threads, R, P]
        return np.bitwise_or.reduce(fields, axis=-1)


def register_values(values, bits: int, what: str) -> np.ndarray:
    """Register values as uint64, refusing what a ``bits``-bit register cannot hold (a negative or
    wider integer, a float) instead of silently wrapping or masking it."""
    array = np.asarray(values)
    if array.dtype == object:
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= int(v) < 1 << bits for v in array.ravel()):
            raise OperandError(f"a register of the {what} is not a {bits}-bit integer bit pattern")
        return array.astype(np.uint64)
    if array.dtype.kind not in "ui" and array.size:
        raise OperandError(f"registers of the {what} are integer bit patterns, got {array.dtype}")
    if array.size and (array.dtype.kind == "i" and array.min() < 0):
        raise OperandError(f"a register of the {what} holds a negative value {int(array.min())}")
    array = array.astype(np.uint64)
    if bits < 64 and np.any(array >> np.uint64(bits)):
        raise OperandError(f"a register of the {what} does not fit {bits} bits")
    return array


# ---------------------------------------------------------------------------------------------
# The manual's formulas
# ---------------------------------------------------------------------------------------------


def group_id(lane: int) -> int:
    """``groupID = %laneid >> 2``."""
    return lane >> 2


def thread_id_in_group(lane: int) -> int:
    """``threadID_in_group = %laneid % 4``."""
    return lane % 4


def a_formula(P: int) -> Formula:
    """A (M x K, row-major), every shape but m8n8k4.f16, ``P`` elements per register. The manual
    writes one formula per shape and type; all are this one:

    - §9.7.14.5.8 .f16/.bf16 m16n8k16: "row = groupID for ai where 0 <= i < 2 || 4 <= i < 6,
      groupID + 8 otherwise; col = (threadID_in_group * 2) + (i & 0x1) for ai where i < 4,
      (threadID_in_group * 2) + (i & 0x1) + 8 for ai where i >= 4";
    - §9.7.14.5.10 .s8/.u8/fp8 m16n8k32: "row = groupID for ai where 0 <= i < 4 || 8 <= i < 12 ...;
      col = (threadID_in_group * 4) + (i & 0x3) for i < 8, ... + 16 for i >= 8";
    - §9.7.14.5.7 .tf32/.f64 m16n8k8: "row = groupID for a0 and a2, groupID + 8 for a1 and a3;
      col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2 and a3";
    - §9.7.14.5.3-5 m8n8k16/k32/k128 (one register): "row = groupID; col = (threadID_in_group * P) + i".

    That is: register ``r`` of the lane covers row ``groupID + 8 * (r & 1)`` and the columns
    ``threadID_in_group * P + 4P * (r >> 1) ..`` of the next ``P``.

    §9.7.14.5.13 (.b1 m16n8k256) prints "col = (threadID_in_group * 32) + i for ai where i < 64";
    read literally, lanes 0 and 3 of a group would both hold row groupID+8, columns 128-159 (a0..a63
    of lane 3 and a96..a127 of lane 0). We read it as ``(i & 0x1F)``, like the i >= 64 half and the
    m16n8k128 formula ("(threadID_in_group * 32) + (i & 0x1F)").
    """

    def formula(lane: int, i: int) -> tuple[int, int]:
        r, k = divmod(i, P)
        return group_id(lane) + 8 * (r & 1), thread_id_in_group(lane) * P + k + 4 * P * (r >> 1)

    return formula


def b_formula(P: int) -> Formula:
    """B (K x N, column-major), every shape but m8n8k4.f16:

    - §9.7.14.5.8 .f16/.bf16 m16n8k16: "row = (threadID_in_group * 2) + (i & 0x1) for bi where i < 2,
      (threadID_in_group * 2) + (i & 0x1) + 8 for bi where i >= 2; col = groupID";
    - §9.7.14.5.10 .s8/.u8/fp8 m16n8k32: "row = (threadID_in_group * 4) + (i & 0x3) for i < 4,
      ... + 16 for i >= 4; col = groupID";
    - §9.7.14.5.7 .tf32/.f64 m16n8k8: "row = threadID_in_group for b0, threadID_in_group + 4 for b1";
      §9.7.14.5.8 .f64 m16n8k16: "row = threadID_in_group + (i * 4)".

    That is: register ``r`` covers the rows ``threadID_in_group * P + 4P * r ..`` of column
    ``groupID``. The sparse shapes whose B the dense mma does not have (m16n8k32 .f16/.bf16,
    m16n8k16 .tf32, m16n8k64 8-bit, m16n8k128 4-bit) are given only as figures (§9.7.14.6.2,
    figures 120, 123, 131-134, 141-144); the figures' row ranges per register are this formula.
    """

    def formula(lane: int, i: int) -> tuple[int, int]:
        r, k = divmod(i, P)
        return thread_id_in_group(lane) * P + k + 4 * P * r, group_id(lane)

    return formula


def c_formula(P: int) -> Formula:
    """C and D (M x N): §9.7.14.5.6-13 "row = groupID for ci where i < 2, groupID + 8 for ci where
    i >= 2; col = (threadID_in_group * 2) + (i & 0x1)", and for the m8n8 shapes (two registers,
    §9.7.14.5.2-5) "row = groupID; col = (threadID_in_group * 2) + i". ``P`` is 2 for .f16
    accumulators (two per .f16x2 register), else 1."""

    def formula(lane: int, i: int) -> tuple[int, int]:
        return group_id(lane) + 8 * (i >= 2), thread_id_in_group(lane) * 2 + (i & 1)

    return formula


def m8n8k4_computation(lane: int) -> int:
    """§9.7.14.5.1: "MMA computation 1: threads with %laneid 0-3 (low group) and 16-19 (high group);
    computation 2: 4-7 and 20-23; 3: 8-11 and 24-27; 4: 12-15 and 28-31" (0-based here)."""
    return (lane >> 2) & 3


def _stacked(rows_per: int, formula: Formula) -> Formula:
    """The m8n8k4.f16 formula of one computation, its rows offset by the computation's block."""

    def stacked(lane: int, i: int) -> tuple[int, int]:
        row, col = formula(lane, i)
        return m8n8k4_computation(lane) * rows_per + row, col

    return stacked


def m8n8k4_f16_formula(operand: str, layout: str, element_type: str) -> Formula:
    """§9.7.14.5.1, the formulas within one computation (``high`` is "%laneid >= 16"):

    - A row-major: "row = %laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise; col = i";
    - A column-major: "row = i % 4 if %laneid < 16, (i % 4) + 4 otherwise; col = %laneid % 4";
    - B row-major: "row = %laneid % 4; col = i if %laneid < 16, i + 4 otherwise";
    - B column-major: "row = i; col = %laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise";
    - C/D .f16: "row = %laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise; col = i";
    - C/D .f32: "row = X if %laneid < 16, X + 4 otherwise, where X = (%laneid & 0b1) + (i & 0b10);
      col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)".

    (Column-major A is 8 x 4 with "row = i % 4 (+4)": the four elements of a lane run down a
    column of its half.)
    """

    def high(lane: int) -> int:
        return 4 if lane >= 16 else 0

    if operand == "a" and layout == "row":
        return lambda lane, i: (lane % 4 + high(lane), i)
    if operand == "a":
        return lambda lane, i: (i % 4 + high(lane), lane % 4)
    if operand == "b" and layout == "row":
        return lambda lane, i: (lane % 4, i + high(lane))
    if operand == "b":
        return lambda lane, i: (i, lane % 4 + high(lane))
    if element_type == "f16":
        return lambda lane, i: (lane % 4 + high(lane), i)
    return lambda lane, i: ((lane & 0b1) + (i & 0b10) + high(lane), (i & 0b100) + (lane & 0b10) + (i & 0b1))


# ---------------------------------------------------------------------------------------------
# The layout of each operand (which ones exist: spec/matrix.py's DENSE_AB, SPARSE_AB, ACCUMULATORS)
# ---------------------------------------------------------------------------------------------


@functools.cache
def fragment_layout(shape: str, operand: str, element_type: str, *, sparse: bool = False, layout: str | None = None) -> FragmentLayout:
    """The fragment of ``operand`` ("a", "b", "c" or "d") of ``mma`` (or ``mma.sp`` when ``sparse``)
    with shape ``shape`` ("m16n8k16") and element type ``element_type`` ("f16", "s32", ...).

    ``layout`` ("row"/"col") matters only for A and B of ``m8n8k4.f16``, the one shape whose
    ``.alayout``/``.blayout`` may be other than ``.row.col`` (default: row-major A, column-major B).
    Raises :class:`~ptxspec.spec.errors.OperandError` for a combination that the manual does not
    list.
    """
    shape = shape.removeprefix(".")
    element_type = element_type.removeprefix(".")
    m, n, k = parse_shape(shape)
    if operand not in ("a", "b", "c", "d"):
        raise OperandError(f"no matrix operand {operand!r} (expected 'a', 'b', 'c' or 'd')", section="9.7.14.5")
    # The register counts are the catalogue's (they size the operand vectors); this raises for a
    # combination that no fragment table lists.
    registers, register_bits = fragment_registers(shape, operand, element_type, sparse=sparse)
    if operand in ("c", "d"):
        bits = ELEMENT_BITS[element_type]
        if shape == "m8n8k4" and element_type != "f64":
            formula = _stacked(8, m8n8k4_f16_formula("c", "row", element_type))
            return FragmentLayout(operand, 32, n, bits, 32, registers, shape, element_type, False, 4, formula, "9.7.14.5.1")
        return FragmentLayout(operand, m, n, bits, register_bits, registers, shape, element_type, False, 1, c_formula(register_bits // bits), "9.7.14.5")
    if shape == "m8n8k4" and element_type == "f16" and not sparse:
        default = "row" if operand == "a" else "col"
        chosen = layout or default
        if chosen not in ("row", "col"):
            raise OperandError(f"layout must be 'row' or 'col', got {layout!r}", section="9.7.14.5.1")
        base = m8n8k4_f16_formula(operand, chosen, element_type)
        rows_per = 8 if operand == "a" else 4
        rows, cols = (4 * 8, 4) if operand == "a" else (4 * 4, 8)
        return FragmentLayout(operand, rows, cols, 16, 32, 2, shape, element_type, False, 4, _stacked(rows_per, base), "9.7.14.5.1")
    if layout not in (None, "row" if operand == "a" else "col"):
        raise OperandError(f"{shape} takes only .row.col layouts (§9.7.14.5.14 syntax); got {layout!r} for {operand.upper()}", section="9.7.14.5.14")
    section = (SPARSE_AB if sparse else DENSE_AB)[(shape, element_type)][2]
    bits = element_bits_of(shape, element_type, sparse)
    P = register_bits // bits
    if operand == "a":
        # §9.7.14.6.2: the stored non-zero half of a sparse A is laid out as the dense A of half
        # the K (e.g. .f16 m16n8k16: "row = groupID for a0 and a1, groupID + 8 for a2 and a3;
        # col = [firstcol ... lastcol], firstcol = threadID_in_group * 4": the two non-zero
        # elements of the lane's 4-wide block are a0, a1).
        return FragmentLayout("a", m, k, bits, register_bits, registers, shape, element_type, sparse, 1, a_formula(P), section)
    return FragmentLayout("b", k, n, bits, register_bits, registers, shape, element_type, False, 1, b_formula(P), section)


# ---------------------------------------------------------------------------------------------
# Sparsity metadata (§9.7.14.6.1, §9.7.14.6.2)
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class MetadataLayout:
    """Where the metadata operand ``e`` of ``mma.sp`` keeps the positions of A's non-zero elements.

    §9.7.14.6.1: "Within a group of four consecutive threads, one or more threads store the
    metadata for the whole group depending upon the matrix shape. These threads are specified
    using an additional sparsity selector operand." Each 4-wide block of *chunks* of a row of A
    has two 2-bit indices, the low one for the first stored element: a chunk is one element of a
    16-bit or 8-bit type, half a ``.tf32`` element ("the 4-bit index ... 0b1110 and 0b0100 are the
    only meaningful values", i.e. the pairs (0, 1) and (2, 3) of 16-bit halves), and a pair of
    4-bit elements ("4:8 pair-wise structured sparsity ... each two-element chunk must be all
    zeros or all non-zeros").

    Bit layout (figures 118, 121, 124, 126, 128, 135-136, 138, 145-146; only figures in the
    manual, our reading): a group's rows ``groupID`` and ``groupID + 8`` need ``lanes * 32`` bits;
    contributing lane ``j`` (of ``lanes``) holds the 4 blocks ``4j .. 4j+3`` of each row: bits
    ``[4b+3 : 4b]`` for row ``groupID``, ``[16+4b+3 : 16+4b]`` for row ``groupID + 8`` (block
    ``4j + b``). For 8-bit chunks (8-bit and 4-bit types: m16n8k32/m16n8k64 8-bit,
    m16n8k64/m16n8k128 4-bit) the H100 recordings decided otherwise: each contributing lane holds
    8 blocks of one row (:meth:`field`).
    """

    shape: str
    element_type: str
    element_bits: int
    chunk_bits: int
    lanes: int  # contributing lanes per group of four
    blocks: int  # 4-chunk blocks per row of A

    @property
    def selectors(self) -> tuple[int, ...]:
        """§9.7.14.6.1: "m16n8k16 (16-bit): ... indicated by a value in {0, 1, 2, 3}"; "the
        sparsity selector must be 0 (threads T0, T1) or 1 (threads T2, T3)"; "all threads ... the
        sparsity selector must be 0"."""
        return tuple(range(4 // self.lanes))

    def contributing(self, selector: int) -> tuple[int, ...]:
        """The lanes of group 0 whose ``e`` is read (add ``4 * groupID`` for the others)."""
        self.check_selector(selector)
        return tuple(range(selector * self.lanes, (selector + 1) * self.lanes))

    def check_selector(self, selector: int) -> None:
        if selector not in self.selectors:
            raise OperandError(
                f"sparsity selector {selector} of mma.sp {self.shape} .{self.element_type}: the manual allows {list(self.selectors)} "
                '("any other value results in undefined behavior")',
                section="9.7.14.6.1",
            )

    def field(self, row: int, block: int, selector: int) -> tuple[int, int]:
        """(lane, lowest bit) of the 4-bit field with the two indices of ``block`` of ``row``.

        For 8-bit chunks (8-bit types, pairs of 4-bit elements) sm_90 silicon reads each
        contributing lane's word as 8 blocks of one row: lane ``4*groupID + selector*lanes +
        2*(block // 8) + half`` (half = 0 for row groupID, 1 for row groupID + 8), bits
        ``[4*(block % 8) + 3 : 4*(block % 8)]`` -- measured where all four lanes contribute
        (m16n8k64 8-bit, m16n8k128 4-bit: meta-mma-sp.json, meta-mma-sp-more.json) and where a
        pair does (m16n8k32 8-bit, m16n8k64 4-bit, selectors 0 and 1: meta-mma-sp-more.json; the
        reading below gives about 96 % mismatches there). 16-bit and .tf32 chunks follow the
        reading below (m16n8k32/m16n8k16 and m16n8k16/m16n8k8, every selector: 0 mismatches)."""
        self.check_selector(selector)
        group, half = row % 8, row // 8
        if self.chunk_bits == 8:
            return 4 * group + selector * self.lanes + 2 * (block // 8) + half, 4 * (block % 8)
        j, b = divmod(block, 4)
        return 4 * group + selector * self.lanes + j, 16 * half + 4 * b


@functools.cache
def metadata_layout(shape: str, element_type: str) -> MetadataLayout:
    """The :class:`MetadataLayout` of ``mma.sp`` ``shape`` with A of ``element_type``."""
    shape = shape.removeprefix(".")
    element_type = element_type.removeprefix(".")
    if (shape, element_type) not in SPARSE_AB:
        raise OperandError(f"no mma.sp of shape {shape} with .{element_type} A", section="9.7.14.6")
    m, n, k = parse_shape(shape)
    bits = element_bits_of(shape, element_type, sparse=True)
    chunk = {32: 16, 16: 16, 8: 8, 4: 8}[bits]
    blocks = k * bits // chunk // 4
    lanes = max(1, (2 * blocks * 4) // 32)
    return MetadataLayout(shape, element_type, bits, chunk, lanes, blocks)


#: §9.7.14.6.1: "the values 0b0000, 0b0101, 0b1010, 0b1111 are invalid values for metadata and
#: will result in undefined behavior"; for mma.sp::ordered_metadata "0b0100, 0b1000, 0b1001,
#: 0b1100, 0b1101, 0b1110 are the meaningful values of the indices".
ORDERED_FIELDS = frozenset({0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110})
TF32_FIELDS = frozenset({0b0100, 0b1110})


def field_defined(field: int, element_type: str, ordered: bool) -> bool:
    """Whether a 4-bit metadata field has a defined meaning (§9.7.14.6.1)."""
    if element_type == "tf32":
        return field in TF32_FIELDS
    if ordered:
        return field in ORDERED_FIELDS
    return (field & 3) != (field >> 2)


def expand_sparse(layout: FragmentLayout, a_lanes, e_lanes, selector: int, *, ordered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The dense M x K matrix A of ``mma.sp`` and which of its rows are undefined.

    ``a_lanes``: A's registers ``[..., 32, registers]``; ``e_lanes``: the metadata operand of each
    lane ``[..., 32]``; ``selector``: the sparsity selector ``f``. Returns ``(dense, undefined)``:
    element bit patterns ``[..., M, K]`` (zero where A is zero), and a boolean ``[..., M]`` that is
    true for a row with a metadata field the manual leaves undefined ("will result in undefined
    behavior"; §9.7.14.6.3: "mma.sp::ordered_metadata requires the indices in the sparsity metadata
    to be sorted in increasing order starting from LSB, otherwise behavior is undefined").
    """
    if not layout.sparse or layout.operand != "a":
        raise PtxSpecError(f"expand_sparse takes a sparse A layout, got a {layout.describe()}")
    meta = metadata_layout(layout.shape, layout.element_type)
    meta.check_selector(selector)
    stored = layout.to_matrix(a_lanes)  # [..., M, K/2]
    e = register_values(e_lanes, 32, "mma.sp metadata operand e (a .b32 register)")
    if e.shape != stored.shape[:-2] + (WARP,):
        raise OperandError(f"the metadata operand is one register per lane: expected shape {stored.shape[:-2] + (WARP,)}, got {e.shape}")
    rows, cols = layout.rows, layout.cols
    dense = np.zeros(stored.shape[:-2] + (rows, cols), dtype=np.uint64)
    undefined = np.zeros(stored.shape[:-2] + (rows,), dtype=bool)
    per_chunk = meta.chunk_bits // meta.element_bits  # elements per chunk: 2 (4-bit), 1, 0 (tf32)
    defined = np.array([field_defined(f, layout.element_type, ordered) for f in range(16)])
    for row in range(rows):
        for block in range(meta.blocks):
            lane, bit = meta.field(row, block, selector)
            field = (e[..., lane] >> np.uint64(bit)) & np.uint64(0xF)
            undefined[..., row] |= ~defined[field.astype(np.intp)]
            for which in (0, 1):
                index = ((field >> np.uint64(2 * which)) & np.uint64(3)).astype(np.intp)
                if per_chunk == 0:  # tf32: one element per 2-wide block, chunks (0,1) or (2,3)
                    if which == 1:
                        continue
                    col = 2 * block + index // 2
                    _scatter(dense, row, col, stored[..., row, block])
                else:
                    for t in range(per_chunk):
                        s = block * 2 * per_chunk + which * per_chunk + t
                        col = block * 4 * per_chunk + index * per_chunk + t
                        _scatter(dense, row, col, stored[..., row, s])
    return dense, undefined


def _scatter(dense: np.ndarray, row: int, col, values) -> None:
    """dense[..., row, col[...]] = values[...] with a per-batch column."""
    col = np.asarray(col)
    if col.ndim == 0:
        dense[..., row, int(col)] = values
        return
    flat = dense.reshape(-1, dense.shape[-2], dense.shape[-1])
    flat[np.arange(flat.shape[0]), row, col.reshape(-1)] = np.asarray(values).reshape(-1)


def compress_sparse(layout: FragmentLayout, dense, selector: int) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`expand_sparse` for a dense A that follows the sparsity pattern: A's
    registers ``[..., 32, registers]`` and the metadata ``[..., 32]`` (ordered indices; zero in the
    lanes that the selector does not name). Raises :class:`~ptxspec.spec.errors.OperandError` when a
    block has more non-zero chunks than the pattern allows."""
    meta = metadata_layout(layout.shape, layout.element_type)
    meta.check_selector(selector)
    dense = np.asarray(dense, dtype=np.uint64)
    batch = dense.shape[:-2]
    flat = dense.reshape((-1, layout.rows, layout.cols))
    stored = np.zeros((flat.shape[0], layout.rows, layout.stored_cols), dtype=np.uint64)
    e = np.zeros((flat.shape[0], WARP), dtype=np.uint64)
    per_chunk = meta.chunk_bits // meta.element_bits
    for x in range(flat.shape[0]):
        for row in range(layout.rows):
            for block in range(meta.blocks):
                if per_chunk == 0:
                    values = flat[x, row, 2 * block : 2 * block + 2]
                    nz = [p for p in range(2) if values[p]]
                    if len(nz) > 1:
                        raise OperandError(f"row {row} of A has two non-zero .tf32 elements in block {block} (1:2 sparsity)", section="9.7.14.6.1")
                    p = nz[0] if nz else 0
                    indices = (2 * p, 2 * p + 1)
                    stored[x, row, block] = values[p]
                else:
                    chunks = flat[x, row, block * 4 * per_chunk : (block + 1) * 4 * per_chunk].reshape(4, per_chunk)
                    nz = [c for c in range(4) if chunks[c].any()]
                    if len(nz) > 2:
                        raise OperandError(f"row {row} of A has {len(nz)} non-zero chunks in block {block} (2:4 sparsity)", section="9.7.14.6.1")
                    indices = _fill(nz)
                    for which, c in enumerate(indices):
                        stored[x, row, block * 2 * per_chunk + which * per_chunk : block * 2 * per_chunk + (which + 1) * per_chunk] = chunks[c]
                lane, bit = meta.field(row, block, selector)
                e[x, lane] |= np.uint64((indices[1] << 2 | indices[0]) << bit)
    return layout.from_matrix(stored.reshape(batch + stored.shape[1:])), e.reshape(batch + (WARP,))


def _fill(nonzero: list[int]) -> tuple[int, int]:
    """Two increasing chunk indices that include the non-zero ones (padding with zero chunks)."""
    chosen = list(nonzero)
    for c in range(4):
        if len(chosen) == 2:
            break
        if c not in chosen:
            chosen.append(c)
    return tuple(sorted(chosen))  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# Pictures of a fragment (docs/mma-layouts.rst)
# ---------------------------------------------------------------------------------------------

#: Drawing metrics of :func:`svg_fragment` (pixels): the label font (monospace, so a character is
#: 0.6 of the font size wide), its line height, the height two label lines need, the room kept
#: beside a label, and the smallest pitch of a matrix element along either axis.
FONT_SIZE = 9
CHAR_WIDTH = 0.6 * FONT_SIZE
LINE_HEIGHT = 10
BOX_MIN_HEIGHT = 2 * LINE_HEIGHT + 3
LABEL_ROOM = 6
MIN_PITCH = 2


@attrs.frozen
class Run:
    """Elements ``first .. last`` of ``register`` of ``thread`` that lie side by side in one row
    (or down one column) of the matrix the registers hold: one box of the picture, ``rows`` x
    ``cols`` elements from ``(row, col)``. The manual's figures draw the same thing, one cell per
    element labelled "T0: a0" or one cell per register labelled "T0: {a0, a1}"."""

    thread: int
    register: int
    first: int
    last: int
    row: int
    col: int
    rows: int
    cols: int


def _next_to(a: tuple[int, int], b: tuple[int, int], step: tuple[int, int] | None) -> tuple[int, int] | None:
    """The direction from cell ``a`` to ``b`` when ``b`` is the next cell along a row or down a
    column (and along ``step`` when a run has one already); None otherwise."""
    delta = (b[0] - a[0], b[1] - a[1])
    if delta not in ((0, 1), (1, 0)) or (step is not None and delta != step):
        return None
    return delta


def fragment_runs(layout: FragmentLayout) -> list[Run]:
    """The boxes of :func:`svg_fragment`: each register's elements (0 = least significant) split
    into maximal runs of neighbouring cells, by :meth:`FragmentLayout.element` (the manual's
    formula), ordered by row, then column."""
    runs = []
    for thread in range(layout.threads):
        for register in range(layout.registers):
            cells = [layout.element(thread, register, index) for index in range(layout.per_register)]
            start, step = 0, None
            for index in range(1, len(cells) + 1):
                if index < len(cells):
                    step_now = _next_to(cells[index - 1], cells[index], step)
                    if step_now is not None:
                        step = step_now
                        continue
                (row0, col0), (row1, col1) = cells[start], cells[index - 1]
                runs.append(Run(thread, register, start, index - 1, row0, col0, row1 - row0 + 1, col1 - col0 + 1))
                start, step = index, None
    return sorted(runs, key=lambda run: (run.row, run.col))


def run_label(layout: FragmentLayout, run: Run) -> str:
    """What a box says beside its thread: the elements in the manual's words (``a0``, ``a0,a1``,
    ``a0..a7``: element ``i`` is field ``i % P`` of register ``i // P``); for the register-only
    fragments of ldmatrix/stmatrix/movmatrix (operand ``"x"``) the register ``r0``, or its fields
    ``r0.2-3`` (field 0 in the least significant bits) when the box holds only some of them."""
    if layout.operand == "x":
        if run.first == 0 and run.last == layout.per_register - 1:
            return f"r{run.register}"
        fields = f"{run.first}" if run.first == run.last else f"{run.first}-{run.last}"
        return f"r{run.register}.{fields}"
    first = run.register * layout.per_register + run.first
    last = run.register * layout.per_register + run.last
    name = layout.operand
    if first == last:
        return f"{name}{first}"
    return f"{name}{first},{name}{last}" if last == first + 1 else f"{name}{first}..{name}{last}"


def _text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


def _pitches(layout: FragmentLayout, runs: list[Run]) -> tuple[int, int]:
    """(x, y) pixels per element: the smallest that give every box room for its two lines."""
    pitch_x = pitch_y = MIN_PITCH
    for run in runs:
        need = max(_text_width(f"T{run.thread}"), _text_width(run_label(layout, run))) + LABEL_ROOM
        pitch_x = max(pitch_x, -(-int(need + 0.999) // run.cols))
        pitch_y = max(pitch_y, -(-BOX_MIN_HEIGHT // run.rows))
    return pitch_x, pitch_y


def _axis_step(pitch: float, widest: float) -> int:
    """Label every ``step``-th row or column, ``step`` a power of two, so that labels do not touch."""
    step = 1
    while step * pitch < widest + 2:
        step *= 2
    return step


def lane_colour(thread: int) -> str:
    """A light colour per lane (``thread % 32``), neighbouring lanes far apart on the colour wheel."""
    return f"hsl({(thread % WARP) * 7 % WARP * 360 // WARP},70%,85%)"


def block_rows(layout: FragmentLayout) -> int:
    """Rows between the heavy lines of a picture: a warp's 16 rows in a warpgroup's fragment
    (§9.7.15.5.1.1), one computation's rows of ``mma.m8n8k4`` .f16 (§9.7.14.5.1); else none (0)."""
    if layout.threads == WARPGROUP:
        return 16
    if layout.computations > 1:
        return layout.rows // layout.computations
    return 0


def svg_fragment(layout: FragmentLayout, title: str | None = None) -> str:
    """An SVG picture of ``layout``: the matrix its registers hold (rows down, columns across; for
    a sparse A, the stored M x K/2 matrix), each box of :func:`fragment_runs` coloured by lane and
    labelled with the thread ``T<n>`` and :func:`run_label` -- as the manual's fragment figures
    (§9.7.14.5, §9.7.15.5.1.1) are. Heavy lines separate the warps of a warpgroup and the four
    computations of ``mma.m8n8k4`` .f16.

    The root carries ``data-left``, ``data-top``, ``data-pitch-x``, ``data-pitch-y`` (where element
    (0, 0) is, and the pixels per element), and the boxes (``<g class="cells">``) and their labels
    (``<g class="labels">``, two ``<text>`` per box in the same order) can be read back to compare
    with the layout (tests/test_pictures.py)."""
    runs = fragment_runs(layout)
    pitch_x, pitch_y = _pitches(layout, runs)
    rows, cols = layout.rows, layout.stored_cols
    left = int(_text_width(str(rows - 1)) + 10)
    top = 16
    width, height = left + cols * pitch_x + 2, top + rows * pitch_y + 2
    name = title or layout.describe()
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="fragment-layout" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="monospace" font-size="{FONT_SIZE}" text-anchor="middle" role="img" '
        f'data-left="{left}" data-top="{top}" data-pitch-x="{pitch_x}" data-pitch-y="{pitch_y}">',
        f"<title>{_escape(name)}: row (down) x column (across), each element's thread and register</title>",
        '<g class="axis" fill="#555">',
    ]
    col_step = _axis_step(pitch_x, _text_width(str(cols - 1)))
    for col in range(0, cols, col_step):
        out.append(f'<text x="{_number(left + (col + 0.5) * pitch_x)}" y="{top - 5}">{col}</text>')
    row_step = _axis_step(pitch_y, LINE_HEIGHT)
    for row in range(0, rows, row_step):
        out.append(f'<text x="{left - 4}" y="{_number(top + (row + 0.5) * pitch_y + 3)}" text-anchor="end">{row}</text>')
    out.append("</g>")
    out.append('<g class="cells" stroke="#555" stroke-width="0.5">')
    for run in runs:
        x, y = left + run.col * pitch_x, top + run.row * pitch_y
        out.append(f'<rect x="{x}" y="{y}" width="{run.cols * pitch_x}" height="{run.rows * pitch_y}" fill="{lane_colour(run.thread)}"/>')
    out.append("</g>")
    out.append('<g class="labels">')
    for run in runs:
        centre_x = left + run.col * pitch_x + run.cols * pitch_x / 2
        middle = top + run.row * pitch_y + run.rows * pitch_y / 2
        out.append(f'<text x="{_number(centre_x)}" y="{_number(middle - 1)}">T{run.thread}</text>')
        out.append(f'<text x="{_number(centre_x)}" y="{_number(middle + LINE_HEIGHT - 1)}">{run_label(layout, run)}</text>')
    out.append("</g>")
    out.extend(_block_lines(layout, left, top, cols * pitch_x, pitch_y))
    out.append(f'<rect x="{left}" y="{top}" width="{cols * pitch_x}" height="{rows * pitch_y}" fill="none" stroke="#000"/>')
    out.append("</svg>")
    return "\n".join(out)


def _block_lines(layout: FragmentLayout, left: int, top: int, width: int, pitch_y: int) -> list[str]:
    """Heavy lines between the blocks of :func:`block_rows`."""
    block = block_rows(layout)
    if not block:
        return []
    return [
        f'<line x1="{left}" y1="{top + row * pitch_y}" x2="{left + width}" y2="{top + row * pitch_y}" stroke="#000" stroke-width="2"/>'
        for row in range(block, layout.rows, block)
    ]


def _number(value: float) -> str:
    """A coordinate without a needless ``.0``, so the same picture is always the same bytes."""
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
