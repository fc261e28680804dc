"""The state an instruction reads and writes besides registers (DESIGN.md "State").

An instruction of memory is still a pure function ``(form, state, operands) -> (results, new
state)`` (:mod:`ptxspec.semantics.instructions`): the state is a frozen value, and an instruction
that writes returns a new one that shares what it did not change.

A :class:`State` is one CTA's:

* ``shared``: its ``.shared`` state space (§5.1.5, "shared memory"), as bytes in address order --
  what ``ldmatrix``/``stmatrix`` (§9.7.14.5.15-16), the matrix descriptors of ``wgmma.mma_async``
  (§9.7.15.5.1.2) and of ``tcgen05`` (§9.7.16.4.1) address, and where ``tcgen05.alloc`` writes the
  address it allocated;
* ``tensor_memory``: its Tensor Memory (§9.7.16.1), a :class:`TensorMemory` -- 128 lanes by 512
  columns of 32-bit cells, which cells hold a value, and the allocation record of §9.7.16.1.2;
* ``cta_group``: the ``.cta_group`` that the kernel's tcgen05 instructions use, once one has run
  ("All tcgen05 instructions within a kernel must specify the same value for the .cta_group
  qualifier", §9.7.16.7.1), so that a later instruction with the other value is refused;
* ``peer``: the state of the peer CTA (§9.7.16.5.2) where the instruction runs in a CTA pair
  (§9.7.16.5.1) -- what a ``.cta_group::2`` instruction reads and writes besides its own CTA's;
* ``collectors``: which ``tcgen05.mma`` collector buffers hold a valid fill (§9.7.16.10.9.1).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptxspec.spec.errors import OperandError

TENSOR_MEMORY = "9.7.16.1"
ADDRESSING = "9.7.16.1.1"
ALLOCATION = "9.7.16.1.2"
CTA_PAIR = "9.7.16.5.1"
ALLOCATION_INSTRUCTIONS = "9.7.16.7.1"

#: §9.7.16.1: "512 columns and 128 rows per CTA, with each cell being 32-bits in size"; the rows
#: are the lanes.
LANES = 128
COLUMNS = 512
CELL_BITS = 32
#: §9.7.16.1.2: "The unit of allocation is 32 columns".
ALLOCATION_UNIT = 32


def tensor_memory_address(lane: int, column: int) -> int:
    """§9.7.16.1.1: a Tensor Memory address is 32 bits, the lane index in bits 31-16 and the column
    index in bits 15-0."""
    return (lane << 16) | column


def lane_of(address: int) -> int:
    """The lane index of a Tensor Memory address (its bits 31-16, §9.7.16.1.1)."""
    return (address >> 16) & 0xFFFF


def column_of(address: int) -> int:
    """The column index of a Tensor Memory address (its bits 15-0, §9.7.16.1.1)."""
    return address & 0xFFFF


def _as_bytes(image: object) -> bytes:
    if isinstance(image, np.ndarray):
        return np.ascontiguousarray(image, dtype=np.uint8).tobytes()
    return bytes(image)  # type: ignore[call-overload]


def _cells_bytes(cells: object) -> bytes:
    if isinstance(cells, bytes):
        value = cells
    else:
        array = np.asarray(cells)
        if array.shape != (LANES, COLUMNS):
            raise OperandError(
                f"Tensor Memory is {LANES} lanes by {COLUMNS} columns (§{TENSOR_MEMORY}); got an array of shape {array.shape}", section=TENSOR_MEMORY
            )
        if array.dtype.kind not in "ui" or (array.size and (array.min() < 0 or array.max() >= 1 << CELL_BITS)):
            raise OperandError(f"a Tensor Memory cell holds {CELL_BITS} bits (§{TENSOR_MEMORY})", section=TENSOR_MEMORY)
        value = np.ascontiguousarray(array, dtype="<u4").tobytes()
    if len(value) != LANES * COLUMNS * 4:
        raise OperandError(f"Tensor Memory holds {LANES * COLUMNS * 4} bytes; got {len(value)}", section=TENSOR_MEMORY)
    return value


def _written_bytes(written: object) -> bytes:
    if isinstance(written, bytes):
        value = written
    else:
        array = np.asarray(written)
        if array.shape != (LANES, COLUMNS):
            raise OperandError(f"the written cells of Tensor Memory are a {LANES} x {COLUMNS} mask; got shape {array.shape}", section=TENSOR_MEMORY)
        if array.dtype == bool:
            array = np.where(array, WHOLE, 0)
        if array.size and (array.min() < 0 or array.max() > WHOLE):
            raise OperandError(
                "the written-cells mask holds 0-3 per cell (bit 0: the low 16 bits hold a value; bit 1: the high 16 bits)", section=TENSOR_MEMORY
            )
        value = np.ascontiguousarray(array, dtype=np.uint8).tobytes()
    if len(value) != LANES * COLUMNS:
        raise OperandError(f"the written-cells mask holds {LANES * COLUMNS} bytes; got {len(value)}", section=TENSOR_MEMORY)
    return value


#: The flags of ``TensorMemory.written``: a cell's low 16 bits, high 16 bits, or all 32 hold a
#: value (``.unpack::16b`` writes one half of a cell, §9.7.16.8.2).
LOW_HALF, HIGH_HALF, WHOLE = 1, 2, 3

#: The bits of a cell that each value of its written flags says hold a value.
_HALF_MASKS = np.array([0, 0x0000FFFF, 0xFFFF0000, 0xFFFFFFFF], dtype=np.uint32)

_ZERO_CELLS = bytes(LANES * COLUMNS * 4)
_NONE_WRITTEN = bytes(LANES * COLUMNS)


@attrs.frozen
class Allocation:
    """One live allocation of §9.7.16.1.2: ``columns`` columns from column ``column``, all 128
    lanes (its address is ``column``: lane 0)."""

    column: int
    columns: int

    @property
    def end(self) -> int:
        return self.column + self.columns


def _allocations(value: object) -> tuple[Allocation, ...]:
    items = tuple(sorted(value, key=lambda a: a.column))  # type: ignore[call-overload]
    for a in items:
        if not (isinstance(a, Allocation) and a.column % ALLOCATION_UNIT == 0 and a.columns >= ALLOCATION_UNIT and a.end <= COLUMNS):
            raise OperandError(f"{a!r} is not an allocation of Tensor Memory (32-column units within {COLUMNS} columns, §{ALLOCATION})", section=ALLOCATION)
    for a, b in zip(items, items[1:]):
        if a.end > b.column:
            raise OperandError(f"allocations {a} and {b} overlap", section=ALLOCATION)
    return items


#: (id(cells), id(written)) -> (cells, written) of the last Tensor Memory buffers found normalised
#: (:meth:`TensorMemory.__attrs_post_init__`); the values keep the ids from being reused.
_NORMALISED: dict[tuple[int, int], tuple[bytes, bytes]] = {}


@attrs.frozen
class TensorMemory:
    """One CTA's Tensor Memory (§9.7.16.1) as a value.

    ``cells``: 128 x 512 little-endian 32-bit words, lane-major (cell ``(lane, column)`` is word
    ``lane * 512 + column``); ``written``: one byte per cell, which of its 16-bit halves hold a
    value that an instruction (or the caller) put there (:data:`LOW_HALF`, :data:`HIGH_HALF`,
    :data:`WHOLE`) -- a cell never written is undefined, and a load of it gives the undefined
    marker, and holds 0 in this value (an undefined half's bits are not part of the state); ``allocations``: the live allocations (§9.7.16.1.2);
    ``relinquished``: whether the CTA has executed ``tcgen05.relinquish_alloc_permit``;
    ``last_columns``: the column count of the latest ``tcgen05.alloc`` ("the number of columns
    allocated should not increase between any two allocations", §9.7.16.7.1)."""

    cells: bytes = attrs.field(default=_ZERO_CELLS, converter=_cells_bytes, repr=False)
    written: bytes = attrs.field(default=_NONE_WRITTEN, converter=_written_bytes, repr=False)
    allocations: tuple[Allocation, ...] = attrs.field(default=(), converter=_allocations)
    relinquished: bool = False
    last_columns: int | None = None
    #: Cells whose value the manual leaves open: ``(lane, column, allowed set)`` in (lane, column)
    #: order, each a cell that holds *one of* the set (the spec-level result of a tcgen05.mma
    #: element, :class:`~ptxspec.semantics.results.Allowed`); such a cell is not "written" (its
    #: flag and bits are 0), and :meth:`admits` accepts any member there.
    allowed: tuple[tuple[int, int, object], ...] = ()

    def __attrs_post_init__(self) -> None:
        # One value, one encoding: the bits of a half that holds no value are 0, so that two
        # Tensor Memories that hold the same values are equal whatever was once in a freed cell.
        # (attrs.evolve runs this for every new value; a pair of buffers already seen normalised
        # -- the same bytes objects, kept alive by the memo -- is not looked at again.)
        key = (id(self.cells), id(self.written))
        if self.cells is _ZERO_CELLS or _NORMALISED.get(key, (None, None))[0] is self.cells:
            return
        words = np.frombuffer(self.cells, dtype="<u4").reshape(LANES, COLUMNS)
        kept = words & _HALF_MASKS[np.frombuffer(self.written, dtype=np.uint8).reshape(LANES, COLUMNS)]
        if not np.array_equal(kept, words):
            object.__setattr__(self, "cells", kept.astype("<u4").tobytes())
        _NORMALISED[(id(self.cells), id(self.written))] = (self.cells, self.written)
        if len(_NORMALISED) > 64:
            _NORMALISED.pop(next(iter(_NORMALISED)))

    def words(self) -> np.ndarray:
        """The cells as a read-only (128, 512) uint32 array (no copy)."""
        return np.frombuffer(self.cells, dtype="<u4").reshape(LANES, COLUMNS)

    def defined(self) -> np.ndarray:
        """Which halves of each cell hold a value: a read-only (128, 512) uint8 array of
        :data:`LOW_HALF` | :data:`HIGH_HALF` flags (:data:`WHOLE`: the whole cell)."""
        return np.frombuffer(self.written, dtype=np.uint8).reshape(LANES, COLUMNS)

    def allocated_columns(self) -> np.ndarray:
        """Which of the 512 columns are allocated (a bool array)."""
        mask = np.zeros(COLUMNS, dtype=bool)
        for a in self.allocations:
            mask[a.column : a.end] = True
        return mask

    def allocations_text(self) -> str:
        """The live allocations in words ("columns 0-63, columns 64-95", or "none")."""
        return ", ".join(f"columns {a.column}-{a.end - 1}" for a in self.allocations) or "none"

    def check_reach(self, lanes, columns, what: str, where=None) -> None:
        """Refuse, with :class:`~ptxspec.spec.errors.OperandError` (``what`` names the access, e.g.
        "it loads", "[d-tmem] reaches"), cells outside Tensor Memory (§9.7.16.1) or in a column no
        live allocation holds (§9.7.16.1.2: Tensor Memory is used as allocated)."""
        lanes, columns = np.asarray(lanes), np.asarray(columns)
        if lanes.size == 0:
            return
        if lanes.min() < 0 or lanes.max() >= LANES or columns.min() < 0 or columns.max() >= COLUMNS:
            raise OperandError(
                f"{what} lanes {lanes.min()}-{lanes.max()}, columns {columns.min()}-{columns.max()}: "
                f"Tensor Memory has lanes 0-{LANES - 1} and columns 0-{COLUMNS - 1}",
                where=where,
                section=TENSOR_MEMORY,
            )
        outside = ~self.allocated_columns()[columns]
        if outside.any():
            raise OperandError(
                f"{what} column {int(columns[outside].flat[0])}, which is not allocated (live allocations: {self.allocations_text()})",
                where=where,
                section=ALLOCATION_INSTRUCTIONS,
            )

    def with_cells(self, lanes, columns, values, defined=WHOLE) -> TensorMemory:
        """The same Tensor Memory with cells ``(lanes[i], columns[i])`` holding ``values[i]``
        (arrays of one shape; the later of two writes to one cell wins), their halves ``defined``
        (flags, one for all or an array: :data:`LOW_HALF` for a 16-bit value in the low half)."""
        lanes, columns = np.asarray(lanes, dtype=np.int64).ravel(), np.asarray(columns, dtype=np.int64).ravel()
        words, written = self.words().copy(), self.defined().copy()
        words[lanes, columns] = np.asarray(values, dtype=np.uint64).ravel().astype(np.uint32)
        written[lanes, columns] = np.broadcast_to(np.asarray(defined, dtype=np.uint8), np.shape(values)).ravel()
        return attrs.evolve(self, cells=words.tobytes(), written=written.tobytes(), allowed=self._allowed_without(lanes, columns))

    def _allowed_without(self, lanes: np.ndarray, columns: np.ndarray) -> tuple[tuple[int, int, object], ...]:
        if not self.allowed:
            return ()
        gone = set(zip(lanes.tolist(), columns.tolist()))
        return tuple(entry for entry in self.allowed if (entry[0], entry[1]) not in gone)

    def with_allowed(self, lanes, columns, sets) -> TensorMemory:
        """The same Tensor Memory with cell ``(lanes[i], columns[i])`` holding one of ``sets[i]``
        (an allowed set) -- no single value, so not written."""
        lanes, columns = np.asarray(lanes, dtype=np.int64).ravel(), np.asarray(columns, dtype=np.int64).ravel()
        cleared = self.with_cells(lanes, columns, np.zeros(lanes.size, dtype=np.int64), defined=0)
        entries = {(lane, column): allowed for lane, column, allowed in cleared.allowed}
        entries.update(zip(zip(lanes.tolist(), columns.tolist()), sets))
        return attrs.evolve(cleared, allowed=tuple((lane, column, entries[lane, column]) for lane, column in sorted(entries)))

    def with_rows_shifted(self, lanes, columns) -> TensorMemory:
        """The same Tensor Memory after the one row shift of the manual, "shifting ... downwards
        across all the rows, except the last, by one row" (§9.7.16.9.3 ``tcgen05.shift``; the
        same words for ``tcgen05.mma``'s ``.ashift``, §9.7.16.10.9.1), over the cells of
        ``lanes`` x ``columns`` (1-D): within each sub-partition of 32 lanes, lane ``r`` takes lane
        ``r + 1``'s value and the sub-partition's last lane keeps its own. The direction and the
        per-sub-partition "last" are what NVIDIA observed on B200 for ``.ashift``
        (CUTLASS @7107b055, ``examples/python/CuTeDSL/experimental/primitives/tcgen05/
        1cta_mma_a_from_tmem.py``: "shifted[r] = A[r+1] for r % 32 != 31, else A[r]"); the
        manual's words are the same for both instructions, so one mechanism serves both. A cell
        that holds "one of" a set passes the set on."""
        lanes = np.asarray(lanes, dtype=np.int64).ravel()
        columns = np.asarray(columns, dtype=np.int64).ravel()
        moving = lanes[(lanes % 32 != 31) & np.isin(lanes + 1, lanes)]
        target_lanes, target_columns = (a.ravel() for a in np.meshgrid(moving, columns, indexing="ij"))
        source_lanes = target_lanes + 1
        words, written = self.words()[source_lanes, target_columns], self.defined()[source_lanes, target_columns]
        moved = self.with_cells(target_lanes, target_columns, words, defined=written)
        sets = {(lane, column): allowed for lane, column, allowed in self.allowed}
        carried = [(lane, column, sets[lane + 1, column]) for lane, column in zip(target_lanes.tolist(), target_columns.tolist()) if (lane + 1, column) in sets]
        if not carried:
            return moved
        carried_lanes, carried_columns, carried_sets = zip(*carried)
        return moved.with_allowed(carried_lanes, carried_columns, carried_sets)

    def admits(self, observed: TensorMemory) -> bool:
        """Whether ``observed`` (a Tensor Memory a machine left) is this one, each cell of
        :attr:`allowed` holding a whole value that its set contains."""
        if not self.allowed:
            return self == observed
        from ptxspec.semantics.results import contains

        lanes = np.array([lane for lane, _, _ in self.allowed])
        columns = np.array([column for _, column, _ in self.allowed])
        for lane, column, allowed in self.allowed:
            # a set of 16-bit values (a .f16 D, "a single 16-bit element in its lower 16 bits") needs the low half
            width = getattr(getattr(allowed, "format", None), "width", CELL_BITS)
            need = LOW_HALF if width == 16 else WHOLE
            value = int(observed.words()[lane, column]) & ((1 << width) - 1)
            if observed.defined()[lane, column] & need != need or not contains(allowed, value):  # type: ignore[arg-type]
                return False
        blanked = observed.with_cells(lanes, columns, np.zeros(lanes.size, dtype=np.int64), defined=0)
        return attrs.evolve(blanked, allowed=self.allowed) == self

    def changed_cells(self, before: TensorMemory) -> list[tuple[int, int, int]]:
        """``(lane, column, value)`` of every cell whose value or definedness differs from ``before``."""
        differ = (self.words() != before.words()) | (self.defined() != before.defined())
        lanes, columns = np.nonzero(differ)
        words = self.words()
        return [(int(lane), int(column), int(words[lane, column])) for lane, column in zip(lanes, columns)]


EMPTY_TENSOR_MEMORY = TensorMemory()


def _cta_group(_instance: object, _attribute: attrs.Attribute, value: int | None) -> None:
    if value not in (None, 1, 2):
        raise OperandError(f"cta_group is 1 or 2 (§{CTA_PAIR}), not {value!r}", section=CTA_PAIR)


STATE_SPACES = "5.1"
GENERIC_ADDRESSING = "6.4.1.1"


def _indeterminate(value: object) -> tuple[tuple[int, int], ...]:
    return tuple(sorted((int(a), int(b)) for a, b in value))  # type: ignore[attr-defined]


@attrs.frozen
class Segment:
    """The bytes of one state space (§5.1) that a State holds: ``data[i]`` is the byte at address
    ``base + i`` of that space; an address outside them is not part of the state, and an access to
    it is refused. ``indeterminate``: ``(start, end)`` address ranges whose bytes the manual leaves
    open (what ``discard`` leaves, §9.7.9.17); their bytes in ``data`` are 0."""

    base: int = 0
    data: bytes = attrs.field(default=b"", converter=_as_bytes, repr=False)
    indeterminate: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=_indeterminate)

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def holds(self, address: int, size: int) -> bool:
        """Whether the ``size`` bytes at ``address`` are in this segment."""
        return self.base <= address and address + size <= self.end

    def read(self, address: int, size: int) -> bytes:
        """The ``size`` bytes at ``address`` (the caller has checked :meth:`holds`)."""
        return self.data[address - self.base : address - self.base + size]

    def unknown(self, address: int, size: int) -> list[int]:
        """Which of the ``size`` bytes at ``address`` are indeterminate (their offsets)."""
        return [i for i in range(size) if any(a <= address + i < b for a, b in self.indeterminate)]

    def admits(self, observed: Segment) -> bool:
        """Whether ``observed`` (a segment a machine left) is this one, where a byte this one holds
        indeterminate may hold any value."""
        if (observed.base, len(observed.data)) != (self.base, len(self.data)):
            return False
        if not self.indeterminate:
            return self == observed
        mine, theirs = bytearray(self.data), bytearray(observed.data)
        for start, end in self.indeterminate:
            theirs[start - self.base : end - self.base] = mine[start - self.base : end - self.base]
        inside = lambda r: any(a <= r[0] and r[1] <= b for a, b in self.indeterminate)  # noqa: E731
        return mine == theirs and all(inside(r) for r in observed.indeterminate)

    def written(self, address: int, data: bytes, *, indeterminate: bool = False) -> Segment:
        """The same segment with ``data`` at ``address`` (those bytes now hold a value), or -- with
        ``indeterminate`` -- those bytes indeterminate (and 0)."""
        start = address - self.base
        image = self.data[:start] + (bytes(len(data)) if indeterminate else bytes(data)) + self.data[start + len(data) :]
        ranges = [r for piece in self.indeterminate for r in _minus(piece, (address, address + len(data)))]
        if indeterminate:
            ranges.append((address, address + len(data)))
        return Segment(self.base, image, _merged(ranges))


def _minus(piece: tuple[int, int], cut: tuple[int, int]) -> list[tuple[int, int]]:
    a, b = piece
    c, d = cut
    return [r for r in ((a, min(b, c)), (max(a, d), b)) if r[0] < r[1]]


def _merged(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


@attrs.frozen
class AddressMap:
    """Where each state space lies in the generic address space, and the CTA's place in its cluster
    -- what the manual leaves to the implementation and the address instructions (``cvta``,
    ``isspacep``, ``mapa``, ``getctarank``, generic ``ld``/``st``/``atom``) depend on.

    §6.4.1.1: ".const, .param, .local and .shared are modelled as windows in the generic address
    space. Each window is defined by a window base and a window size ... A generic address maps to
    global memory unless it falls within the window for const, local or shared memory. The kernel
    function parameter (.param) window is contained within the .global window. Within each window,
    a generic address maps to an address in the underlying state space by subtracting the window
    base from the generic address." A ``(base, size)`` pair is each window; a global address is its
    own generic address (the global window's base is 0, our reading of "maps to global memory").

    §5.1.7: "addresses in the .shared::cta window also fall in the .shared::cluster window", and
    ``mapa`` gives "the .shared::cluster address of the corresponding variable in another CTA":
    the ``.shared::cluster`` address of byte ``o`` of the shared memory of the CTA of rank ``r`` is
    ``cluster_base + r * cluster_stride + o``, and the executing CTA (rank ``cta_rank`` of
    ``cluster_ctas``) names its own bytes by the same addresses in ``.shared::cta`` -- its
    ``shared[o]`` is at ``cluster_base + cta_rank * cluster_stride + o``. The shared window of the
    generic space holds the ``.shared::cluster`` space from its base on.

    The defaults are what an H200 showed (the memory round's first recording; an H100 showed the
    same layout at other window bases, ``conformance/data/sm_90/memory.npz``, a cluster of two CTAs): a CTA's shared variable at offset 0x400 has the ``.shared::cta``
    address ``rank << 24 | 0x400`` in the CTA of that rank, ``mapa`` moves it by ``1 << 24`` a
    rank, ``isspacep.shared::cluster`` holds over 4 GiB from the shared window's base and
    ``isspacep.local`` over 16 MiB from the local window's; a global address is its own generic
    address. The window bases are those of one launch (the driver places them; they are the same
    in two launches of one process). The const and param windows were probed at their first byte
    (inside) and 16 MiB - 1 on (outside); their sizes here are §5.1.3's 64 KB of constant memory,
    and the same for the parameters -- an assumption, not a measurement."""

    shared: tuple[int, int] = (0x7FA2_0000_0000, 1 << 32)
    local: tuple[int, int] = (0x7FA1_7500_0000, 1 << 24)
    const: tuple[int, int] = (0x7FA1_68A0_0000, 1 << 16)
    param: tuple[int, int] = (0x7FA1_6A2E_0210, 1 << 16)
    cluster_base: int = 0
    cluster_stride: int = 1 << 24
    cta_rank: int = 0
    cluster_ctas: int = 1

    def window(self, space: str) -> tuple[int, int]:
        """The ``(base, size)`` of ``space``'s generic window (``global``: the whole space)."""
        if space == "global":
            return (0, 1 << 64)
        return {"shared": self.shared, "local": self.local, "const": self.const, "param": self.param}[space]


@attrs.frozen
class State:
    """The state of one CTA that the instructions here read and write: ``shared``, the bytes of its
    shared memory (address 0 first); ``tensor_memory``; the kernel's ``cta_group`` once known; and
    the ``peer`` CTA's state in a CTA pair (see the module's docstring).

    The instructions of memory (§9.7.9.8-24, §9.7.13.5-7) also read and write the other state
    spaces, each a :class:`Segment` (``global_memory``, ``local_memory``, ``const_memory``,
    ``param_memory``), the shared memory of the other CTAs of the cluster (``cluster``: ``(rank,
    bytes)`` pairs), and place them in the generic address space by ``addresses``."""

    shared: bytes = attrs.field(default=b"", converter=_as_bytes)
    tensor_memory: TensorMemory = EMPTY_TENSOR_MEMORY
    cta_group: int | None = attrs.field(default=None, validator=_cta_group)
    peer: State | None = None
    #: The tcgen05.mma collector buffers (``"a"``; ``"b0"`` .. ``"b3"`` of ``.ws``) that hold a
    #: valid fill (§9.7.16.10.9.1, ``.collector::a::fill`` ... ``::discard``).
    collectors: frozenset[str] = frozenset()
    global_memory: Segment = Segment()
    local_memory: Segment = Segment()
    const_memory: Segment = Segment()
    param_memory: Segment = Segment()
    cluster: tuple[tuple[int, bytes], ...] = ()
    addresses: AddressMap = AddressMap()
    #: The memories a multimem address points to (§9.7.9.14: "multimem.* operations operate on
    #: multimem addresses and accesses all of the multiple memory locations which the multimem
    #: address points to"): one :class:`Segment` each, all over the same multimem address range.
    multimem: tuple[Segment, ...] = ()
    #: The tensor maps (§5.5.8) the state holds, by the address of their 128-byte opaque object
    #: (a :class:`~ptxspec.semantics.tensor_map.TensorMap` each): what the tensor copies read and
    #: ``tensormap.replace`` rewrites. The object's bits are the implementation's; its fields are
    #: the value.
    tensor_maps: tuple[tuple[int, object], ...] = ()
    #: ``(start, end)`` offsets of ``shared`` whose bytes are indeterminate (0 in ``shared``): a
    #: value the profile leaves open that an instruction wrote there (:class:`Segment`).
    shared_indeterminate: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=_indeterminate)

    def shared_image(self) -> np.ndarray:
        """``shared`` as a read-only uint8 array (no copy)."""
        return np.frombuffer(self.shared, dtype=np.uint8)

    def with_shared(self, image: object) -> State:
        """The same state with shared memory replaced by ``image`` (bytes or a uint8 array)."""
        return attrs.evolve(self, shared=image)

    def with_tensor_memory(self, tensor_memory: TensorMemory) -> State:
        """The same state with Tensor Memory replaced."""
        return attrs.evolve(self, tensor_memory=tensor_memory)

    def of_cta(self, which: int) -> State:
        """This CTA's state (``which`` 0) or its peer's (1) -- §9.7.16.5.2: a ``.cta_group::2``
        instruction reaches "the Tensor Memory of the current and the peer CTA"."""
        if which == 0:
            return self
        if self.peer is None:
            raise OperandError("the peer CTA's Tensor Memory is reached, and the state has no peer", section=CTA_PAIR)
        return self.peer

    def with_cta_tensor_memory(self, which: int, tensor_memory: TensorMemory) -> State:
        """The same state with CTA ``which``'s Tensor Memory (0: this CTA's, 1: its peer's) replaced."""
        if which == 0:
            return self.with_tensor_memory(tensor_memory)
        return attrs.evolve(self, peer=self.of_cta(1).with_tensor_memory(tensor_memory))

    def tensor_memory_cells(self, address: int, cta, lane, column, what: str, where=None) -> tuple[np.ndarray, np.ndarray]:
        """The 32-bit words and their defined-half flags at the cells ``(cta[i], lane[i],
        column[i])`` -- lane and column offsets from the Tensor Memory ``address``, in this CTA
        (``cta`` 0) or its peer (1) -- after :meth:`TensorMemory.check_reach` has found every cell in
        Tensor Memory and allocated (``what`` names the operand in its error). The one gather of
        Tensor Memory cells that ``tcgen05.mma`` and its operands read."""
        cta, lane, column = np.asarray(cta), np.asarray(lane), np.asarray(column)
        words = np.zeros(lane.shape, dtype=np.uint32)
        flags = np.zeros(lane.shape, dtype=np.uint8)
        for which in np.unique(cta):
            here = cta == which
            tm = self.of_cta(int(which)).tensor_memory
            lanes, columns = lane_of(address) + lane[here], column_of(address) + column[here]
            tm.check_reach(lanes, columns, f"{what} from address {address:#010x} reaches", where=where if where is not None else f"CTA {which}")
            words[here] = tm.words()[lanes, columns]
            flags[here] = tm.defined()[lanes, columns]
        return words, flags

    def admits(self, observed: State) -> bool:
        """Whether ``observed`` is this state, where a cell of Tensor Memory that holds one of a set
        (:attr:`TensorMemory.allowed`) may hold any member (and the same of the peer)."""
        if self.peer is None or observed.peer is None:
            peers = self.peer is None and observed.peer is None
        else:
            peers = self.peer.admits(observed.peer)
        segments = ("global_memory", "local_memory", "const_memory", "param_memory")
        shared = Segment(0, self.shared, self.shared_indeterminate).admits(Segment(0, observed.shared, observed.shared_indeterminate))
        return (
            peers
            and shared
            and self.tensor_memory.admits(observed.tensor_memory)
            and all(getattr(self, name).admits(getattr(observed, name)) for name in segments)
            and attrs.evolve(
                self,
                tensor_memory=observed.tensor_memory,
                peer=observed.peer,
                shared=observed.shared,
                shared_indeterminate=observed.shared_indeterminate,
                **{name: getattr(observed, name) for name in segments},
            )
            == observed
        )
