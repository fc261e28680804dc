"""§9.7.16 The 5th-generation TensorCore instructions (tcgen05): allocation and data movement.

Each instruction is a pure function of the CTA's :class:`~ptxspec.semantics.state.State` (its
Tensor Memory, shared memory, the kernel's ``.cta_group`` and, for ``.cta_group::2``, the peer
CTA's state), returning its results and a new state (DESIGN.md "State"):

===================================  =====================  ============
instruction                          operands               section
===================================  =====================  ============
``tcgen05.alloc``                    a warp                 §9.7.16.7.1
``tcgen05.dealloc``                  a warp                 §9.7.16.7.1
``tcgen05.relinquish_alloc_permit``  a warp                 §9.7.16.7.1
``tcgen05.ld``, ``tcgen05.ld.red``   a warp of a warpgroup  §9.7.16.8.3
``tcgen05.st``                       a warp of a warpgroup  §9.7.16.8.4
``tcgen05.wait``                     a warp                 §9.7.16.8.5
``tcgen05.cp``                       one thread             §9.7.16.9.2
``tcgen05.shift``                    one thread             §9.7.16.9.3
``tcgen05.fence``                    one thread             §9.7.16.11.1
===================================  =====================  ============

The thread/register <-> Tensor Memory maps of ld/st are :mod:`ptxspec.semantics.tcgen05_layout`;
the rows, multicast and decompression of cp are :mod:`ptxspec.semantics.tcgen05_copy`.

What the functional state does not model (the memory-model issue's): asynchrony. ``tcgen05.ld``,
``.st``, ``.cp`` and ``.shift`` "are performed asynchronously"; here each has completed when its
function returns, so ``tcgen05.wait::ld/st`` and ``tcgen05.fence`` leave the state as it is, and
``tcgen05.commit`` (which makes an mbarrier track their completion) has no meaning here yet.

Readings where the manual's text does not decide (each said again where it is applied):

* ``tcgen05.alloc`` does not say which columns it takes. :func:`allocation_columns` lists every
  choice the text allows (a run of free columns starting on a 32-column unit); the new state of
  :func:`alloc` takes the lowest, and :func:`~ptxspec.semantics.instructions.check` accepts any.
* ``tcgen05.dealloc``: "taddr must point to a previous Tensor Memory allocation": ``taddr`` is the
  address (lane 0) of a live allocation and ``nCols`` at most its size; what is deallocated
  becomes undefined.
* ``.unpack::16b``: "a single 32-bit chunk in the register can be unpacked into two 16-bit chunks"
  -- each into the lower 16 bits of its cell (as §9.7.16.10.4.1 stores a 16-bit D element); the
  upper 16 bits are left undefined (a cell is defined per 16-bit half).
* ``tcgen05.ld.red``: the registers ``r`` receive the loaded values; ``redval`` the reduction of
  the thread's values ("across columns in each lane"), of their absolute values with ``.abs``;
  ``.f32`` min/max follow ``min``/``max`` (§9.7.3.11-12: a NaN is ignored unless ``.NaN``, which
  gives the canonical NaN; -0.0 < +0.0).
* ``tcgen05.cp.cta_group::2`` reads the issuing CTA's shared memory and writes both CTAs' Tensor
  Memory ("the data is copied into the Tensor Memory of both the current and the peer CTAs").
* ``tcgen05.shift`` ("shifting of 32-byte elements downwards across all the rows, except the last,
  by one row", shape ``.31x256b``): lanes ``l .. l+30`` of the 8 columns at ``taddr`` move to
  lanes ``l+1 .. l+31``; lane ``l`` keeps its value.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import tcgen05_copy as copy
from ptxspec.semantics import tcgen05_layout as layout
from ptxspec.semantics.floating_point import _less, nan_result
from ptxspec.semantics.instructions import THREAD_MEMORY, WARP_MEMORY, WARP_TENSOR_MEMORY, semantic
from ptxspec.semantics.numerics import NaN, canonical_nan, decode
from ptxspec.semantics.results import Result
from ptxspec.semantics.state import (
    ALLOCATION_UNIT,
    COLUMNS,
    LOW_HALF,
    WHOLE,
    Allocation,
    State,
    TensorMemory,
    column_of,
    lane_of,
    tensor_memory_address,
)
from ptxspec.semantics.warp import FULL_MASK, Undefined, one_value, per_thread
from ptxspec.spec import tcgen05 as tc
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import FORMATS

ACCESS = "9.7.16.8.1"
PACKING = "9.7.16.8.2"
ISSUE = "9.7.16.5"
DECOMPRESSION = "9.7.16.9.1"

#: The warp's lanes of Tensor Memory (§9.7.16.8.1, "ID of the warp within the warpgroup" ->
#: "Accessible Lanes": 0 -> 0-31, 1 -> 32-63, 2 -> 64-95, 3 -> 96-127).
LANES_PER_WARP = 32
F32 = FORMATS["f32"]


# ---------------------------------------------------------------------------------------------
# What every tcgen05 instruction checks
# ---------------------------------------------------------------------------------------------


def _whole_warp(form: Form, active: int) -> None:
    """.sync.aligned: "all threads in the warp must execute the same instruction"; "the behavior
    ... is undefined if ... any thread in the warp has exited"."""
    if active != FULL_MASK:
        raise OperandError(
            f"it is .sync.aligned: every thread of the warp executes it (active lanes {active:#010x}); otherwise the behavior is undefined",
            where=form.text,
            section=form.family.section,
        )


def _same_in_every_thread(form: Form, name: str, value: int | Sequence[int]) -> int:
    """An operand that "all the threads in the warp must specify the same value" of; otherwise
    "the behavior ... is undefined"."""
    one = one_value(value)
    if one is None:
        raise OperandError(f"operand {name} differs between the threads of the warp: the behavior is undefined", where=form.text, section=form.family.section)
    return one


def _cta_group(form: Form, state: State) -> tuple[int, State]:
    """The form's ``.cta_group`` and the state that records it: "All tcgen05 instructions within a
    kernel must specify the same value for the .cta_group qualifier" (§9.7.16.7.1, .cp, .shift);
    with ``::2`` the peer CTA "should be active" (Table 46), so the state must hold it."""
    group = int(form["cta_group"].split("::")[1])
    if state.cta_group not in (None, group):
        raise OperandError(
            f"this kernel's tcgen05 instructions use .cta_group::{state.cta_group}; all of them must specify the same value",
            where=form.text,
            section=tc.ALLOC,
        )
    if group == 2 and state.peer is None:
        raise OperandError(
            "it acts on the CTA pair: give the peer CTA's state (State.peer); the peer CTA should be active and should not have exited",
            where=form.text,
            section=ISSUE,
        )
    return group, attrs.evolve(state, cta_group=group)


def _in_pair(state: State, group: int, change) -> State:
    """``change`` (State -> State) applied to this CTA and, with ``.cta_group::2``, to its peer."""
    new = change(state)
    if group == 2:
        assert state.peer is not None
        new = attrs.evolve(new, peer=change(attrs.evolve(state.peer, cta_group=2)))
    return new


def _allocated(form: Form, tm: TensorMemory, lanes: np.ndarray, columns: np.ndarray, what: str) -> None:
    """Every cell that ``form`` reaches is in Tensor Memory and in a live allocation."""
    tm.check_reach(lanes, columns, f"it {what}", where=form.text)


def _allocations_text(tm: TensorMemory) -> str:
    return tm.allocations_text()


# ---------------------------------------------------------------------------------------------
# §9.7.16.7.1 tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit
# ---------------------------------------------------------------------------------------------


def _columns_operand(form: Form, ncols: int) -> int:
    if ncols not in tc.NCOLS:
        raise OperandError(f"nCols = {ncols}: the number of columns must be a power of 2 within [32, 512]", where=form.text, section=tc.ALLOC)
    return ncols


def allocation_columns(tensor_memory: TensorMemory, ncols: int) -> tuple[int, ...]:
    """Every first column that ``tcgen05.alloc`` of ``ncols`` columns may take (§9.7.16.1.2): "The
    unit of allocation is 32 columns", so a run of ``ncols`` unallocated columns that starts on a
    32-column unit. The manual says no more; which one a chip takes is its choice."""
    free = ~tensor_memory.allocated_columns()
    return tuple(c for c in range(0, COLUMNS - ncols + 1, ALLOCATION_UNIT) if free[c : c + ncols].all())


def _alloc_states(form: Form, state: State, dst, ncols) -> list[State]:
    """The states ``tcgen05.alloc`` may leave: one per choice of columns that both CTAs of the
    group have free, in order of column."""
    group, state = _cta_group(form, state)
    dst, ncols = _same_in_every_thread(form, "dst", dst), _columns_operand(form, _same_in_every_thread(form, "nCols", ncols))
    ctas = [state] if group == 1 else [state, state.peer]
    for cta in ctas:
        assert cta is not None
        tm = cta.tensor_memory
        if tm.relinquished:
            raise OperandError(
                "it is illegal for a CTA to perform tcgen05.alloc after any of its threads executed tcgen05.relinquish_alloc_permit",
                where=form.text,
                section=tc.ALLOC,
            )
        if tm.last_columns is not None and ncols > tm.last_columns:
            raise OperandError(
                f"it allocates {ncols} columns after an allocation of {tm.last_columns}: "
                "the number of columns allocated should not increase between any two allocations",
                where=form.text,
                section=tc.ALLOC,
            )
        if not 0 <= dst <= len(cta.shared) - 4:
            raise OperandError(
                f"dst = {dst:#x} is not within the CTA's shared memory ({len(cta.shared)} bytes): the behavior is undefined",
                where=form.text,
                section=tc.ALLOC,
            )
    choices = [c for c in allocation_columns(state.tensor_memory, ncols) if all(c in allocation_columns(cta.tensor_memory, ncols) for cta in ctas if cta)]
    if not choices:
        raise OperandError(
            f"{ncols} free columns are not available (live allocations: {_allocations_text(state.tensor_memory)}); "
            "tcgen05.alloc blocks until they are, which needs a tcgen05.dealloc by another warp",
            where=form.text,
            section=tc.ALLOC,
        )

    def allocated(column: int):
        def change(cta: State) -> State:
            tm = cta.tensor_memory
            tm = attrs.evolve(tm, allocations=(*tm.allocations, Allocation(column, ncols)), last_columns=ncols)
            image = cta.shared_image().copy()
            image[dst : dst + 4] = np.frombuffer(tensor_memory_address(0, column).to_bytes(4, "little"), dtype=np.uint8)
            return attrs.evolve(cta, tensor_memory=tm, shared=image)

        return change

    return [_in_pair(state, group, allocated(c)) for c in choices]


def _alloc_allowed(form: Form, state: State, dst, ncols) -> list[State]:
    return _alloc_states(form, state, dst, ncols)


@semantic("tcgen05.alloc", operands=WARP_MEMORY, allowed_states=_alloc_allowed)
def alloc(form: Form, state: State, dst, ncols, *, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.7.1 tcgen05.alloc: "dynamically allocates the specified number of columns in the
    Tensor Memory and writes the address of the allocated Tensor Memory into shared memory at the
    location specified by address operand dst" (32 bits, little-endian; lane 0 and the first
    column, §9.7.16.1.1). With ``.cta_group::2`` "one warp from each of the peer CTAs must
    collectively perform the allocation": the same columns in both CTAs, each writing its own
    shared memory (at the same ``dst`` -- the peer warp's operands are taken to be this warp's).

    Refused, with the manual's rule: nCols not a power of 2 in [32, 512]; an allocation after
    ``tcgen05.relinquish_alloc_permit``; more columns than the previous allocation ("should not
    increase"); a ``.cta_group`` other than the kernel's; ``dst`` outside shared memory ("the
    behavior is undefined"); threads that differ in nCols or have exited (undefined); no free
    columns (the instruction "blocks", which no other warp of this state can end).

    Which columns: :func:`allocation_columns` (the manual leaves it open); the new state takes the
    lowest, and :func:`~ptxspec.semantics.instructions.check` accepts every choice."""
    _whole_warp(form, active)
    return (), _alloc_states(form, state, dst, ncols)[0]


@semantic("tcgen05.dealloc", operands=WARP_MEMORY)
def dealloc(form: Form, state: State, taddr, ncols, *, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.7.1 tcgen05.dealloc: "deallocates the Tensor Memory specified by the Tensor Memory
    address taddr. The operand taddr must point to a previous Tensor Memory allocation"; nCols as
    for alloc. Our reading: taddr is the address (lane 0, first column) of a live allocation and
    nCols at most its size; the first nCols of its columns are freed, and their cells become
    undefined. With ``.cta_group::2``, in both CTAs of the pair."""
    _whole_warp(form, active)
    group, state = _cta_group(form, state)
    taddr, ncols = _same_in_every_thread(form, "taddr", taddr), _columns_operand(form, _same_in_every_thread(form, "nCols", ncols))

    def change(cta: State) -> State:
        tm = cta.tensor_memory
        found = [a for a in tm.allocations if taddr == tensor_memory_address(0, a.column)]
        if not found or ncols > found[0].columns:
            raise OperandError(
                f"taddr = {taddr:#x}, nCols = {ncols} does not point to a previous Tensor Memory allocation (live allocations: {_allocations_text(tm)})",
                where=form.text,
                section=tc.ALLOC,
            )
        a = found[0]
        rest = (Allocation(a.column + ncols, a.columns - ncols),) if ncols < a.columns else ()
        written = tm.defined().copy()
        written[:, a.column : a.column + ncols] = 0
        kept = tuple(b for b in tm.allocations if b != a) + rest
        return attrs.evolve(cta, tensor_memory=attrs.evolve(tm, allocations=kept, written=written.tobytes()))

    return (), _in_pair(state, group, change)


@semantic("tcgen05.relinquish_alloc_permit", operands=WARP_MEMORY)
def relinquish_alloc_permit(form: Form, state: State, *, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.7.1 tcgen05.relinquish_alloc_permit: "the CTA of the executing thread is
    relinquishing the right to allocate Tensor Memory. So, it is illegal for a CTA to perform
    tcgen05.alloc after any of its constituent threads execute tcgen05.relinquish_alloc_permit"
    (both CTAs with ``.cta_group::2``)."""
    _whole_warp(form, active)
    group, state = _cta_group(form, state)
    return (), _in_pair(state, group, lambda cta: cta.with_tensor_memory(attrs.evolve(cta.tensor_memory, relinquished=True)))


def check_kernel_exit(state: State) -> None:
    """§9.7.16.7.1: "All of the Tensor Memory that was allocated using tcgen05.alloc instruction in
    a kernel, must be explicitly deallocated using tcgen05.dealloc before the kernel exits": refuse
    a state (of a CTA and its peer) that still holds an allocation."""
    for name, cta in (("this CTA", state), ("the peer CTA", state.peer)):
        if cta is not None and cta.tensor_memory.allocations:
            raise OperandError(
                f"the kernel exits with Tensor Memory of {name} still allocated ({_allocations_text(cta.tensor_memory)}): "
                "all of it must be explicitly deallocated using tcgen05.dealloc before the kernel exits",
                section=tc.ALLOC,
            )


# ---------------------------------------------------------------------------------------------
# §9.7.16.8 tcgen05.ld, tcgen05.st
# ---------------------------------------------------------------------------------------------


def _warp_lanes(form: Form, taddr: int, lanes: np.ndarray, warp: int | None) -> None:
    """§9.7.16.8.1: "A lane of the Tensor Memory can be accessed by a single warp in the
    warpgroup": warp ``w`` reaches lanes ``32w .. 32w+31``. Without ``warp``, the warp is the one
    whose lanes ``taddr`` names."""
    rank = lane_of(taddr) // LANES_PER_WARP if warp is None else warp
    low, high = LANES_PER_WARP * rank, LANES_PER_WARP * rank + LANES_PER_WARP - 1
    if lanes.min() < low or lanes.max() > high:
        raise OperandError(
            f"at taddr = {taddr:#x} reaches lanes {lanes.min()}-{lanes.max()}; warp {rank} of its warpgroup can access lanes {low}-{high} only",
            where=form.text,
            section=ACCESS,
        )


def _cells(form: Form, taddr: int, split: int, warp: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The (lane, column) of each thread's registers, [32, R] each (with .pack::16b/.unpack::16b
    a third axis of two: the low and high 16-bit halves)."""
    if form.get("pack") or form.get("unpack"):
        lane_offset, low, high = layout.packed_cells(form["shape"], tc.repeat(form), split)
        lanes = lane_of(taddr) + np.stack([lane_offset, lane_offset], axis=-1)
        columns = column_of(taddr) + np.stack([low, high], axis=-1)
    else:
        lane_offset, column_offset = layout.ld_st_cells(form["shape"], tc.repeat(form), split)
        lanes, columns = lane_of(taddr) + lane_offset, column_of(taddr) + column_offset
    _warp_lanes(form, taddr, lanes, warp)
    return lanes, columns


def _split(form: Form, split) -> int:
    return _same_in_every_thread(form, "immHalfSplitoff", split) if split is not None else 0


def _loaded(form: Form, state: State, taddr, split, warp: int | None) -> np.ndarray:
    """The registers a tcgen05.ld reads: an object array [32, R] of bits or Undefined."""
    taddr = _same_in_every_thread(form, "taddr", taddr)
    tm = state.tensor_memory
    lanes, columns = _cells(form, taddr, _split(form, split), warp)
    _allocated(form, tm, lanes, columns, "loads")
    words, defined = tm.words()[lanes, columns].astype(np.int64), tm.defined()[lanes, columns]
    if lanes.ndim == 3:  # .pack::16b: "two 16-bit elements from adjacent columns into a single 32-bit element"
        values = (words[..., 0] & 0xFFFF) | ((words[..., 1] & 0xFFFF) << 16)
        whole = ((defined[..., 0] & 1) != 0) & ((defined[..., 1] & 1) != 0)
    else:
        values, whole = words, defined == 3
    if whole.all():
        return values
    out = values.astype(object)
    out[~whole] = Undefined(32)
    if tm.allowed and lanes.ndim == 2:  # a cell that holds one of a set loads as that set
        sets = {(lane, column): allowed for lane, column, allowed in tm.allowed}
        for index in zip(*np.nonzero(~whole)):
            out[index] = sets.get((int(lanes[index]), int(columns[index])), out[index])
    return out


@semantic("tcgen05.ld", "tcgen05.ld.16x32bx2", operands=WARP_TENSOR_MEMORY)
def ld(form: Form, state: State, taddr, split=None, *, profile: Profile, active: int, warp: int | None) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.8.3 tcgen05.ld: "loads data from the Tensor Memory at the location specified by the
    32-bit address operand taddr into the destination register r, collectively across all threads
    of the warps"; ".shape ... and .num together determines the total dimension of the data";
    ".16x32bx2 performs two accesses ... The base address of the first access is specified by
    taddr and the base address of the second access is specified by taddr+immHalfSplitoff".
    Which thread's register holds which cell: :func:`ptxspec.semantics.tcgen05_layout.ld_st_cells`
    (the figures of §9.7.16.2.3.1); ``.pack::16b`` "pack[s] two 16-bit elements from adjacent
    columns into a single 32-bit element" (§9.7.16.8.2, the lower column in the low half).

    Refused: threads that differ in taddr or have exited (undefined), lanes the warp may not
    access (§9.7.16.8.1), cells outside the live allocations. A cell never written loads as
    undefined."""
    _whole_warp(form, active)
    return per_thread(_loaded(form, state, taddr, split, warp), 32), state


def _reduce_int(form: Form, values: list[int]) -> int:
    if form["type"] == "s32":
        signed = [v - (1 << 32) if v >> 31 else v for v in values]
        pick = min(signed) if form["redOp"] == "min" else max(signed)
        return pick & 0xFFFFFFFF
    return min(values) if form["redOp"] == "min" else max(values)


def _reduce_f32(form: Form, values: list[int], profile: Profile) -> Result:
    """min/max over one thread's .f32 values, as §9.7.3.11-12 define them for two (a NaN is
    ignored unless .NaN, which gives the canonical NaN; all NaN: the chapter's NaN; -0.0 < +0.0),
    of the absolute values with .abs."""
    if "abs" in form:
        values = [v & 0x7FFFFFFF for v in values]
    decoded = [decode(F32, v) for v in values]
    nans = [isinstance(d, NaN) for d in decoded]
    if "NaN" in form and any(nans):
        return canonical_nan(F32)
    numbers = [(d, v) for d, v, nan in zip(decoded, values, nans) if not nan]
    if not numbers:
        return nan_result(F32, decoded, profile, "min" if form["redOp"] == "min" else "max")
    best_value, best_bits = numbers[0]
    for value, bits in numbers[1:]:
        better = _less(value, best_value) if form["redOp"] == "min" else _less(best_value, value)  # type: ignore[arg-type]
        if better:
            best_value, best_bits = value, bits
    return best_bits


@semantic("tcgen05.ld.red.f32", "tcgen05.ld.red.f32.16x32bx2", "tcgen05.ld.red.int", "tcgen05.ld.red.int.16x32bx2", operands=WARP_TENSOR_MEMORY)
def ld_red(form: Form, state: State, taddr, split=None, *, profile: Profile, active: int, warp: int | None) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.8.3 tcgen05.ld.red: the load of :func:`ld`, and "the reduction operation specified
    by .redOp is performed on the data that is loaded across columns in each lane. The result of
    the reduction operation is written into the corresponding thread's 32-bit destination register
    operand redVal" -- every register of a thread of .32x32b and .16x32bx2 lies in one lane, so the
    reduction is over the thread's registers. Integer ``.u32``/``.s32``: min/max as unsigned or
    two's-complement values. ``.f32``: see :func:`_reduce_f32`. The registers ``r`` receive the
    values as loaded (``.abs`` is taken to apply to the reduction only). An undefined cell makes
    ``redval`` undefined."""
    _whole_warp(form, active)
    registers = _loaded(form, state, taddr, split, warp).astype(object)
    reduced = np.empty((32, 1), dtype=object)
    for thread in range(32):
        row = list(registers[thread])
        if any(isinstance(v, Undefined) for v in row):
            reduced[thread, 0] = Undefined(32)
        elif form["type"] == "f32":
            reduced[thread, 0] = _reduce_f32(form, [int(v) for v in row], profile)
        else:
            reduced[thread, 0] = _reduce_int(form, [int(v) for v in row])
    return per_thread(registers, 32) + per_thread(reduced, 32), state


@semantic("tcgen05.st", "tcgen05.st.16x32bx2", operands=WARP_TENSOR_MEMORY)
def st(form: Form, state: State, taddr, *operands, profile: Profile, active: int, warp: int | None) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.8.4 tcgen05.st: "stores data from the source register r into the Tensor Memory at
    the location specified by the 32-bit address operand taddr, collectively across all threads of
    the warps" (shapes, .num and .16x32bx2 as for :func:`ld`). ``.unpack::16b``: "a single 32-bit
    chunk in the register can be unpacked into two 16-bit chunks" (§9.7.16.8.2), the low half to
    the lower column; each lands in the lower 16 bits of its cell, whose upper 16 bits are then
    undefined (our reading; §9.7.16.10.4.1 stores 16-bit elements so). Two threads storing different
    values to one cell (overlapping ``.16x32bx2`` halves) leave it undefined.

    Refused: as for :func:`ld`."""
    _whole_warp(form, active)
    split, registers = (operands[0], operands[1:]) if form.family.key.endswith("16x32bx2") else (None, operands)
    taddr = _same_in_every_thread(form, "taddr", taddr)
    lanes, columns = _cells(form, taddr, _split(form, split), warp)
    tm = state.tensor_memory
    _allocated(form, tm, lanes, columns, "stores to")
    values = np.array([(r,) * 32 if isinstance(r, int) else r for r in registers], dtype=np.int64).T  # [thread, register]
    if lanes.ndim == 3:
        values, flag = np.stack([values & 0xFFFF, (values >> 16) & 0xFFFF], axis=-1), LOW_HALF
    else:
        flag = WHOLE
    return (), state.with_tensor_memory(tm.with_cells(lanes, columns, values, defined=_conflicts_undefined(lanes, columns, values, flag)))


def _conflicts_undefined(lanes: np.ndarray, columns: np.ndarray, values: np.ndarray, flag: int) -> np.ndarray:
    """The defined-flags of a store's cells: ``flag``, except 0 (undefined) for a cell that two
    threads store different values to -- ``.16x32bx2`` with an immHalfSplitoff smaller than a
    half makes the halves overlap, which the manual does not forbid and gives no order for."""
    cell = (lanes * COLUMNS + columns).ravel()
    order = np.argsort(cell, kind="stable")
    sorted_cells, sorted_values = cell[order], values.ravel()[order]
    first = np.searchsorted(sorted_cells, sorted_cells)  # each cell's first write in sorted order
    differs = sorted_values != sorted_values[first]
    conflicted = np.isin(cell, sorted_cells[differs])
    return np.where(conflicted, 0, flag).reshape(values.shape)


@semantic("tcgen05.wait", operands=WARP_MEMORY)
def wait(form: Form, state: State, *, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.8.5 tcgen05.wait::ld / ::st: "causes the executing thread to block until all prior
    tcgen05.ld / tcgen05.st operations issued by the executing thread have completed". In this
    functional state every ld/st has completed when its function returns, so the state is
    unchanged; what the wait orders is the memory model's (§9.7.16.6)."""
    _whole_warp(form, active)
    return (), state


# ---------------------------------------------------------------------------------------------
# §9.7.16.9 tcgen05.cp, tcgen05.shift
# ---------------------------------------------------------------------------------------------


@semantic("tcgen05.cp", operands=THREAD_MEMORY)
def cp(form: Form, state: State, taddr: int, s_desc: int, *, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.9.2 tcgen05.cp: "initiates an asynchronous copy operation from shared memory to the
    location specified by the address operand taddr in the Tensor Memory. The 64-bit register
    operand s-desc is the matrix descriptor which represents the source matrix in the shared
    memory"; ".shape ... indicates the dimension of data to be copied"; with ``.warpx2::02_13`` /
    ``.warpx2::01_23`` / ``.warpx4`` the data "is multicasted" into warp pairs / all four warps
    (:func:`ptxspec.semantics.tcgen05_copy.cp_destinations`); with ``.dst_fmt.src_fmt`` it "is
    decompressed from the source format .src_fmt in the shared memory to the destination format
    .dst_fmt" (§9.7.16.9.1, :func:`ptxspec.semantics.tcgen05_copy.decompress`). Each 128-bit unit
    of a row fills four 32-bit cells, the first byte lowest. ``.cta_group::2``: "copied into the
    Tensor Memory of both the current and the peer CTAs", from the issuing CTA's shared memory.

    Refused: a descriptor the layout cannot place (see tcgen05_copy), source bytes outside shared
    memory, destination cells outside Tensor Memory or the live allocations."""
    group, state = _cta_group(form, state)
    shape, multicast = form["shape"], form.get("multicast")
    rows, bits = copy.cp_rows_and_bits(shape)
    addresses = copy.cp_source_addresses(s_desc, shape)  # [rows, units]
    image = state.shared_image()
    if addresses.min() < 0 or addresses.max() + 16 > image.size:
        raise OperandError(
            f"s-desc {s_desc:#x} reads shared memory bytes {addresses.min():#x}-{addresses.max() + 15:#x}, outside the CTA's {image.size} bytes",
            where=form.text,
            section=tc.CP,
        )
    units = image[addresses[..., None] + np.arange(16)]  # [rows, units, 16]
    if form.get("src_fmt") is not None:
        units = copy.decompress(units, form["src_fmt"])
    words = units.reshape(rows, -1).view("<u4").astype(np.int64)  # [rows, bits // 32]
    targets = copy.cp_destinations(shape, multicast)  # [rows, copies]
    lanes = lane_of(taddr) + np.repeat(targets[:, :, None], words.shape[1], axis=2)
    columns = column_of(taddr) + np.broadcast_to(np.arange(words.shape[1]), lanes.shape)
    values = np.broadcast_to(words[:, None, :], lanes.shape)

    def change(cta: State) -> State:
        _allocated(form, cta.tensor_memory, lanes, columns, "copies to")
        return cta.with_tensor_memory(cta.tensor_memory.with_cells(lanes, columns, values))

    return (), _in_pair(state, group, change)


#: §9.7.16.2.3: ".31x256b (implicit)" -- 31 rows of 256 bits (8 cells) take the next row's value.
SHIFT_LANES, SHIFT_COLUMNS = 32, 8


@semantic("tcgen05.shift", operands=THREAD_MEMORY)
def shift(form: Form, state: State, taddr: int, *, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.9.3 tcgen05.shift.down: "initiates the shifting of 32-byte elements downwards across
    all the rows, except the last, by one row. The address operand taddr specifies the base
    address of the matrix in the Tensor Memory whose rows must be down shifted. The lane of the
    address operand taddr must be aligned to 32." Shape ``.31x256b``: over the 32 lanes from
    taddr's and 8 cells from its column, lane ``l + i`` takes lane ``l + i + 1``'s 32 bytes for
    ``i < 31`` and lane ``l + 31`` keeps its own (:meth:`TensorMemory.with_rows_shifted`, the
    direction NVIDIA observed for the same words in ``.ashift``). With ``.cta_group::2`` in both
    CTAs of the pair."""
    group, state = _cta_group(form, state)
    lane, column = lane_of(taddr), column_of(taddr)
    if lane % 32:
        raise OperandError(f"the lane of taddr ({lane}) must be aligned to 32", where=form.text, section=tc.SHIFT)
    lanes, columns = lane + np.arange(SHIFT_LANES), column + np.arange(SHIFT_COLUMNS)

    def change(cta: State) -> State:
        tm = cta.tensor_memory
        _allocated(form, tm, *np.meshgrid(lanes, columns, indexing="ij"), "shifts")
        return cta.with_tensor_memory(tm.with_rows_shifted(lanes, columns))

    return (), _in_pair(state, group, change)


# ---------------------------------------------------------------------------------------------
# §9.7.16.11 tcgen05.fence
# ---------------------------------------------------------------------------------------------


@semantic("tcgen05.fence", operands=THREAD_MEMORY)
def fence(form: Form, state: State, *, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.16.11.1 tcgen05.fence::before_thread_sync / ::after_thread_sync: orders the thread's
    asynchronous tcgen05 operations with respect to its synchronisation; it reads and writes no
    state, so the state is unchanged (its ordering meaning is the memory model's, §9.7.16.6.3)."""
    return (), state


# §9.7.16.10 tcgen05.mma: its own module (the data paths, operands and arithmetic), registered here
# with the chapter's other instructions.
from ptxspec.semantics import tcgen05_mma as _mma  # noqa: E402, F401
