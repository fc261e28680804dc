"""Golden vectors of the instructions that read and write a state (tcgen05: §9.7.16.7-9, 11), in
JSON Lines: each line a state in, the operands, and the results and state out.

``ptxspec vectors FORM...`` sends a tcgen05 form here (``ptxspec vectors tcgen05`` writes every
form of :data:`DEFAULT_FORMS`), and ``ptxspec check-vectors`` replays such lines (small hooks in
``vectors.py`` and ``check_vectors.py``). Nothing here decides a result: the cases are chosen here,
the results and the new state come from :func:`ptxspec.semantics.instructions.execute`.

One vector per line, keys in this order (the scalar schema's ``instr`` / ``inputs`` /
``outputs`` / ``allowed`` / ``profile``, with the states around them)::

    {"instr": "tcgen05.ld.sync.aligned.32x32b.x2.b32",
     "state": STATE,
     "inputs": ["0x00200000"],
     "active": "0xffffffff",
     "warp": 1,
     "outputs": [[32 lanes], [32 lanes]],
     "state_after": STATE,
     "profile": "spec"}

* ``state`` / ``state_after``: the CTA's state before and after, in the schema of
  :mod:`ptxspec.conformance.state_json` (shared memory in hex, the defined Tensor Memory cells,
  the allocations, the ``.cta_group``, the peer CTA's state for ``.cta_group::2``).
* ``inputs``: the form's source operands in the manual's order, hex of the register's width; for
  a warp form (alloc, dealloc, relinquish_alloc_permit, ld, ld.red, st, wait) an operand is one
  hex string (the same in every lane: taddr, nCols, dst, immHalfSplitoff) or a list of 32 (lane 0
  first: the registers of st).
* ``active``: the executing lanes of a warp form (always ``0xffffffff`` here: the tcgen05 forms
  are ``.sync.aligned``); absent for the one-thread forms (cp, shift, fence).
* ``warp``: for ld / ld.red / st, the warp's rank in its warpgroup (``%warpid % 4``), which
  decides the Tensor Memory lanes it may access (§9.7.16.8.1); ``null``: the warp whose lanes
  taddr names. Absent for the other forms.
* ``outputs``: one entry per destination register (ld: ``r.0``, ``r.1``, ...; ld.red: then
  ``redval``), each the 32 lanes' values: a hex string, or where the manual leaves the value open
  the set's JSON form -- ``{"kind": "undefined", "width": 32}`` for a lane that loads a cell
  holding no value (never written, deallocated, or only one half written). Forms without
  destinations have ``[]``. Where a lane's result is a set with a canonical member (the "any NaN"
  of ``.f32`` min/max), ``outputs`` holds the member and ``allowed`` (one entry per destination,
  ``null`` where every lane is fixed) the ``eval --json`` form of the destination's sets.
* ``profile``: the profile that computed the line.

A replay (``ptxspec check-vectors``) reads ``state``, ``inputs``, ``active`` and ``warp``,
recomputes, and compares: every output lane must be in its allowed set (a set written as an
output must be the specification's), and ``state_after`` must be the new state, compared as the
state schema writes it (the bits of an undefined cell do not count). Where the manual allows
several new states (which columns ``tcgen05.alloc`` takes), any of them is accepted; the writer
writes the lowest columns. A vector whose input the specification refuses (an address outside
the allocations, a lane the warp may not access) is a mismatch that names the refusal.

tcgen05.mma (one thread, no destinations: ``outputs`` is ``[]``, D is in ``state_after``): each
case draws the instruction descriptor (the kind's 8-bit-and-wider types, D type, negate,
transpose, saturate, scale type and IDs, sparsity selector), an M the data-path layouts determine
and a small N, A and B in shared memory in a canonical layout with a random swizzle (the most
compact LBO/SBO under which no two elements share bits), or A in Tensor Memory, C (with holes),
metadata and scale factors in Tensor Memory, enable-input-d, disable-output-lane, scale-input-d,
a zero-column mask and the collector buffers (:func:`_mma_case`). A line asked at the spec level
is computed by ``sm_100`` where it has a datapath (:func:`line_profile`). Families that share
their text carry an operand template in ``instr`` (:func:`line_text`). Every tcgen05.mma form
gets vectors; the 4-/6-bit formats of f8f6f4/mxf8f6f4 are not drawn (:data:`MMA_TYPES`).

The cases are seeded and deterministic (numpy PCG64 seeded with ``(seed, crc32(form text))``, as
every vector writer here): same arguments, same bytes. Each form's cases vary the warp (and
whether it is named), taddr's lane and column within a live allocation, the other allocations,
the values (``.f32`` min/max: zeros of both signs, infinities, NaNs), cells left undefined or
half-defined, ``immHalfSplitoff``, and, for alloc/dealloc, the allocations present, ``nCols``,
``last_columns`` and ``dst``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import numpy as np

from ptxspec.conformance.state_json import diff_lines, state_from_json, state_to_json
from ptxspec.semantics.state import COLUMNS, LANES, LOW_HALF, WHOLE, Allocation, State, TensorMemory, tensor_memory_address
from ptxspec.spec.errors import Location, OperandError, PtxSpecError

if TYPE_CHECKING:
    from ptxspec.spec.catalogue import Form

FULL_MASK = 0xFFFFFFFF

#: The tcgen05.mma forms of :data:`DEFAULT_FORMS`: every kind, both ``.cta_group``, ``.sp`` and
#: ``.ws``, A from shared memory -- the families whose text alone names them.
MMA_FORMS: tuple[str, ...] = (
    "tcgen05.mma.cta_group::1.kind::f16",
    "tcgen05.mma.cta_group::2.kind::f16",
    "tcgen05.mma.cta_group::1.kind::tf32",
    "tcgen05.mma.cta_group::1.kind::f8f6f4",
    "tcgen05.mma.cta_group::2.kind::i8",
    "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32",
    "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32",
    "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16",
    "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32",
    "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.block32",
    "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16",
    "tcgen05.mma.sp.cta_group::1.kind::f16",
    "tcgen05.mma.sp.cta_group::2.kind::i8",
    "tcgen05.mma.ws.cta_group::1.kind::f16",
    "tcgen05.mma.ws.cta_group::1.kind::tf32",
    "tcgen05.mma.cta_group::1.kind::f16.ashift",
    "tcgen05.mma.cta_group::2.kind::i8.ashift",
)

#: tcgen05.mma forms of the families that share their text with another (A in Tensor Memory,
#: disable-output-lane, scale-input-d, zero-column-mask-desc), written with the operand template
#: that names the family (their lines' ``instr``, :func:`line_text`). Not in :data:`DEFAULT_FORMS`:
#: ``ptxspec vectors`` hands each form on by its bare text (conformance/vectors.py,
#: ``jsonl_chunks(f.text, ...)``), which names the other family; write them with
#: :func:`jsonl_chunks` of the parsed template.
MMA_TEMPLATE_FORMS: tuple[str, ...] = (
    "tcgen05.mma.cta_group::2.kind::f16 [d_tmem], [a_tmem], b_desc, idesc, enable_input_d",
    "tcgen05.mma.cta_group::2.kind::f16 [d_tmem], a_desc, b_desc, idesc, {m0, m1, m2, m3, m4, m5, m6, m7}, enable_input_d",
    "tcgen05.mma.cta_group::1.kind::tf32 [d_tmem], a_desc, b_desc, idesc, enable_input_d, scale_input_d",
    "tcgen05.mma.cta_group::1.kind::f8f6f4 [d_tmem], a_desc, b_desc, idesc, {m0, m1, m2, m3}, enable_input_d",
    "tcgen05.mma.cta_group::1.kind::f8f6f4 [d_tmem], [a_tmem], b_desc, idesc, enable_input_d",
    "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32 [d_tmem], [a_tmem], b_desc, idesc, [scale_A_tmem], [scale_B_tmem], enable_input_d",
    "tcgen05.mma.ws.cta_group::1.kind::f16 [d_tmem], a_desc, b_desc, idesc, enable_input_d, zero_column_mask_desc",
    "tcgen05.mma.ws.cta_group::1.kind::tf32 [d_tmem], [a_tmem], b_desc, idesc, enable_input_d",
)

#: The forms ``ptxspec vectors tcgen05`` writes: every data-movement family, every shape of
#: ld/st with and without (un)packing, some ``.num``, ld.red of each type, both ``.cta_group``;
#: and the tcgen05.mma forms of :data:`MMA_FORMS`.
DEFAULT_FORMS: tuple[str, ...] = (
    "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
    "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
    "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
    "tcgen05.dealloc.cta_group::2.sync.aligned.b32",
    "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
    "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned",
    *(
        f"tcgen05.{op}.sync.aligned.{shape}.{num}{pack}.b32"
        for op, packing in (("ld", ".pack::16b"), ("st", ".unpack::16b"))
        for shape in ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
        for num in ("x1", "x4")
        for pack in ("", packing)
    ),
    "tcgen05.ld.sync.aligned.32x32b.x16.b32",
    "tcgen05.st.sync.aligned.16x256b.x8.b32",
    "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32",
    "tcgen05.ld.red.sync.aligned.32x32b.x4.max.s32",
    "tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.s32",
    "tcgen05.ld.red.sync.aligned.32x32b.x4.min.f32",
    "tcgen05.ld.red.sync.aligned.32x32b.x4.max.abs.f32",
    "tcgen05.ld.red.sync.aligned.32x32b.x2.max.NaN.f32",
    "tcgen05.ld.red.sync.aligned.16x32bx2.x4.min.abs.NaN.f32",
    "tcgen05.wait::ld.sync.aligned",
    "tcgen05.wait::st.sync.aligned",
    "tcgen05.cp.cta_group::1.128x256b",
    "tcgen05.cp.cta_group::1.128x128b",
    "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13",
    "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23",
    "tcgen05.cp.cta_group::1.32x128b.warpx4",
    "tcgen05.cp.cta_group::2.128x128b",
    "tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32",
    "tcgen05.cp.cta_group::1.128x128b.b8x16.b4x16_p64",
    "tcgen05.shift.cta_group::1.down",
    "tcgen05.shift.cta_group::2.down",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
    *MMA_FORMS,
)

#: What ``ptxspec vectors`` takes for every form of :data:`DEFAULT_FORMS`.
ALL = "tcgen05"

#: The families whose cases this module draws.
_FAMILIES = ("alloc", "dealloc", "relinquish_alloc_permit", "ld", "ld.red", "st", "wait", "cp", "shift", "fence", "mma")


def family_of(form: Form) -> str | None:
    """Which of :data:`_FAMILIES` ``form`` is ("memory": a memory instruction, whose cases
    :mod:`ptxspec.conformance.memory_vectors` draws; None: not a form of state with vectors)."""
    from ptxspec.conformance import memory_vectors

    key = form.family.key
    if memory_vectors.covers(form):
        return "memory"
    if not key.startswith("tcgen05."):
        return None
    rest = key[len("tcgen05.") :]
    for name in sorted(_FAMILIES, key=len, reverse=True):
        if rest == name or rest.startswith(name + "."):
            return name
    return None


def operands_kind(form: Form):
    from ptxspec.semantics.instructions import operands_of

    return operands_of(form)


def writes_vectors(form: Form) -> bool:
    """Whether this module writes the vectors of ``form`` (a tcgen05 form of state with semantics)."""
    kind = operands_kind(form)
    return kind is not None and kind.state and family_of(form) is not None


def replays(form: Form) -> bool:
    """Whether this module replays vectors of ``form``: any form whose semantics takes a state."""
    kind = operands_kind(form)
    return kind is not None and kind.state


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One input: the state, the source operands (ints, or 32-lane tuples), the active lanes (None
    for a one-thread form) and the warp rank (None: unnamed)."""

    state: State
    sources: tuple
    active: int | None
    warp: int | None


_F32_SPECIALS = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F7FFFFF, 0x00000001, 0x3F800000, 0xBF800000)
_INT_SPECIALS = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE)


def _power_of_two_at_least(n: int) -> int:
    p = 32
    while p < n:
        p *= 2
    return p


def _random_allocations(rng: np.random.Generator, keep_free: int = 0) -> list[Allocation]:
    """Some non-overlapping allocations (powers of two, aligned to their size), leaving a run of
    at least ``keep_free`` free columns somewhere (so that an alloc can succeed)."""
    out: list[Allocation] = []
    used = np.zeros(COLUMNS, bool)
    for _ in range(int(rng.integers(0, 4))):
        size = int(32 << rng.integers(0, 3))
        column = int(rng.integers(0, COLUMNS // size)) * size
        if used[column : column + size].any():
            continue
        trial = used.copy()
        trial[column : column + size] = True
        if keep_free and not any(not trial[c : c + keep_free].any() for c in range(0, COLUMNS - keep_free + 1, 32)):
            continue
        used = trial
        out.append(Allocation(column, size))
    return sorted(out, key=lambda a: a.column)


def _place(rng: np.random.Generator, width: int, others: list[Allocation]) -> tuple[Allocation, int]:
    """An allocation (not overlapping ``others``) holding ``width`` columns, and a column in it
    from which they fit."""
    size = _power_of_two_at_least(width)
    if size < COLUMNS and rng.integers(0, 3) == 0:
        size *= 2
    used = np.zeros(COLUMNS, bool)
    for a in others:
        used[a.column : a.end] = True
    choices = [c for c in range(0, COLUMNS - size + 1, size) if not used[c : c + size].any()]
    column = int(rng.choice(choices))
    return Allocation(column, size), column + int(rng.integers(0, size - width + 1))


def _with_others(rng: np.random.Generator, width: int) -> tuple[list[Allocation], int]:
    """Allocations: one holding ``width`` columns, maybe others; and the first column of the
    ``width`` columns."""
    size = _power_of_two_at_least(width)
    others = [a for a in _random_allocations(rng) if a.columns <= COLUMNS - size]
    while True:
        used = np.zeros(COLUMNS, bool)
        for a in others:
            used[a.column : a.end] = True
        if any(not used[c : c + size].any() for c in range(0, COLUMNS - size + 1, size)):
            break
        others.pop()
    target, column = _place(rng, width, others)
    return sorted([*others, target], key=lambda a: a.column), column


def _fill(rng: np.random.Generator, tm: TensorMemory, lanes: np.ndarray, columns: np.ndarray, values: np.ndarray | None = None, *, holes: bool) -> TensorMemory:
    """``tm`` with cells (lanes, columns) holding random values (or ``values``); with ``holes``,
    some left undefined and some with only the low half defined."""
    lanes, columns = np.asarray(lanes).ravel(), np.asarray(columns).ravel()
    if values is None:
        values = rng.integers(0, 1 << 32, size=lanes.size, dtype=np.uint64)
    values = np.asarray(values, dtype=np.uint64).ravel()
    defined = np.full(lanes.size, WHOLE, np.uint8)
    if holes:
        kind = rng.integers(0, 16, size=lanes.size)
        defined[kind == 0] = 0
        defined[kind == 1] = LOW_HALF
    values = np.where(defined == LOW_HALF, values & 0xFFFF, values)
    keep = defined != 0
    tm = tm.with_cells(lanes[keep], columns[keep], values[keep], defined=defined[keep])
    return tm


def _noise(rng: np.random.Generator, tm: TensorMemory, n: int) -> TensorMemory:
    """``tm`` with ``n`` more random cells defined (anywhere)."""
    if not n:
        return tm
    lanes = rng.integers(0, LANES, size=n)
    columns = rng.integers(0, COLUMNS, size=n)
    return tm.with_cells(lanes, columns, rng.integers(0, 1 << 32, size=n, dtype=np.uint64))


def _shared(rng: np.random.Generator, size: int) -> bytes:
    return rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()


def _ld_st_case(form: Form, rng: np.random.Generator, family: str) -> Case:
    from ptxspec.semantics import tcgen05_layout as layout
    from ptxspec.spec import tcgen05 as tc

    shape, num = form["shape"], tc.repeat(form)
    packed = bool(form.get("pack") or form.get("unpack"))
    split = layout.default_split(shape, num, packed)
    if shape == "16x32bx2" and rng.integers(0, 2):
        split += int(rng.integers(1, 9))
    if packed:
        lane_offset, low, high = layout.packed_cells(shape, num, split)
        column_offset = np.stack([low, high], axis=-1)
        lane_offset = np.stack([lane_offset, lane_offset], axis=-1)
    else:
        lane_offset, column_offset = layout.ld_st_cells(shape, num, split)
    width = int(column_offset.max()) + 1
    warp = int(rng.integers(0, 4))
    lane = 32 * warp + (16 * int(rng.integers(0, 2)) if layout.lanes_accessed(shape) == 16 else 0)
    allocations, column = _with_others(rng, width)
    taddr = tensor_memory_address(lane, column)
    tm = TensorMemory(allocations=tuple(allocations), last_columns=max(a.columns for a in allocations))
    lanes, columns = lane + lane_offset, column + column_offset
    n = lanes.size
    if family in ("ld", "ld.red"):
        values = None
        if family == "ld.red" and form["type"] == "f32":
            values = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
            special = rng.integers(0, 3, size=n) == 0
            values[special] = rng.choice(np.array(_F32_SPECIALS, np.uint64), size=int(special.sum()))
            if rng.integers(0, 3) == 0:  # some threads load only NaNs (min/max of NaNs: the chapter's NaN)
                rows = values.reshape(32, -1)
                nan_threads = rng.integers(0, 4, size=32) == 0
                rows[nan_threads] = rng.choice(
                    np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FFFFFFF], np.uint64), size=(int(nan_threads.sum()), rows.shape[1])
                )
        elif family == "ld.red":
            values = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
            special = rng.integers(0, 4, size=n) == 0
            values[special] = rng.choice(np.array(_INT_SPECIALS, np.uint64), size=int(special.sum()))
        tm = _fill(rng, tm, lanes, columns, values, holes=rng.integers(0, 4) == 0)
    else:  # st: some cells already hold values
        keep = rng.integers(0, 2, size=n).astype(bool)
        tm = _fill(rng, tm, lanes.ravel()[keep.ravel()], columns.ravel()[keep.ravel()], holes=True)
    tm = _noise(rng, tm, int(rng.integers(0, 4)))
    sources: list[Any] = [taddr]
    if form.family.key.endswith("16x32bx2"):
        sources.append(split)
    if family == "st":
        registers = layout.register_count(shape, num)
        sources += [tuple(int(v) for v in rng.integers(0, 1 << 32, size=32, dtype=np.uint64)) for _ in range(registers)]
    named = warp if rng.integers(0, 2) else None
    state = State(b"", tm, None if rng.integers(0, 2) else 1)
    return Case(state, tuple(sources), FULL_MASK, named)


def _group(form: Form) -> int:
    return int(form["cta_group"].split("::")[1])


def _pair(form: Form, rng: np.random.Generator, make) -> State:
    """A state made by ``make(rng)`` (a State), with a peer made alike for ``.cta_group::2``."""
    state = make(rng)
    group = _group(form)
    state = attrs.evolve(state, cta_group=None if rng.integers(0, 2) else group)
    if group == 2:
        state = attrs.evolve(state, peer=attrs.evolve(make(rng), cta_group=state.cta_group))
    return state


def _alloc_case(form: Form, rng: np.random.Generator) -> Case:
    ncols = int(32 << rng.integers(0, 5))
    size = 16 * int(rng.integers(1, 5))
    dst = 4 * int(rng.integers(0, size // 4))

    def make(rng) -> State:
        allocations = [a for a in _random_allocations(rng, keep_free=ncols)]
        last = None if not allocations or rng.integers(0, 3) == 0 else ncols * int(rng.choice([1, 1, 2])) if ncols < COLUMNS else ncols
        tm = TensorMemory(allocations=tuple(allocations), last_columns=last)
        for a in allocations:
            if rng.integers(0, 2):
                tm = tm.with_cells([int(rng.integers(0, LANES))], [a.column], [int(rng.integers(0, 1 << 32))])
        return State(_shared(rng, size), tm)

    from ptxspec.semantics.tcgen05 import allocation_columns

    state = _pair(form, rng, make)
    if state.peer is not None and not set(allocation_columns(state.tensor_memory, ncols)) & set(allocation_columns(state.peer.tensor_memory, ncols)):
        # no columns free in both CTAs: the peer's allocations are this CTA's
        state = attrs.evolve(
            state, peer=attrs.evolve(state.peer, tensor_memory=attrs.evolve(state.peer.tensor_memory, allocations=state.tensor_memory.allocations))
        )
    return Case(state, (dst, ncols), FULL_MASK, None)


def _dealloc_case(form: Form, rng: np.random.Generator) -> Case:
    size = int(32 << rng.integers(0, 4))
    column = int(rng.integers(0, COLUMNS // size)) * size
    ncols = int(32 << rng.integers(0, size.bit_length() - 5))

    def make(rng) -> State:
        target = Allocation(column, size)
        others = [a for a in _random_allocations(rng) if a.end <= column or a.column >= target.end]
        tm = TensorMemory(allocations=tuple(sorted([*others, target], key=lambda a: a.column)), last_columns=size)
        n = int(rng.integers(1, 40))
        tm = tm.with_cells(rng.integers(0, LANES, size=n), column + rng.integers(0, size, size=n), rng.integers(0, 1 << 32, size=n, dtype=np.uint64))
        return State(_shared(rng, 16), _noise(rng, tm, int(rng.integers(0, 4))))

    return Case(_pair(form, rng, make), (tensor_memory_address(0, column), ncols), FULL_MASK, None)


def _plain_state(rng: np.random.Generator) -> State:
    allocations, _column = _with_others(rng, 32)
    tm = TensorMemory(allocations=tuple(allocations), last_columns=max(a.columns for a in allocations), relinquished=bool(rng.integers(0, 4) == 0))
    return State(_shared(rng, 16), _noise(rng, tm, int(rng.integers(0, 8))))


def _shift_case(form: Form, rng: np.random.Generator) -> Case:
    from ptxspec.semantics.tcgen05 import SHIFT_COLUMNS

    lane = 32 * int(rng.integers(0, 4))
    allocations, column = _with_others(rng, SHIFT_COLUMNS)

    def make(rng) -> State:
        tm = TensorMemory(allocations=tuple(allocations), last_columns=max(a.columns for a in allocations))
        lanes = lane + np.repeat(np.arange(32), SHIFT_COLUMNS)
        columns = column + np.tile(np.arange(SHIFT_COLUMNS), 32)
        tm = _fill(rng, tm, lanes, columns, holes=rng.integers(0, 3) == 0)
        return State(b"", _noise(rng, tm, int(rng.integers(0, 4))))

    return Case(_pair(form, rng, make), (tensor_memory_address(lane, column),), None, None)


def _cp_case(form: Form, rng: np.random.Generator) -> Case:
    from ptxspec.semantics import tcgen05_copy as copy
    from ptxspec.semantics import tcgen05_descriptors as td

    shape, multicast = form["shape"], form.get("multicast")
    rows, bits = copy.cp_rows_and_bits(shape)
    swizzle = str(rng.choice(["none", "none", "32B", "64B", "128B"]))
    if swizzle == "none":
        descriptor = td.SmemDescriptor(
            start_address=16 * int(rng.integers(0, 8)),
            leading_byte_offset=128 * int(rng.integers(1, 3)),
            stride_byte_offset=256 * int(rng.integers(1, 3)),
        )
    else:
        atom = {"32B": 32, "64B": 64, "128B": 128}[swizzle]
        descriptor = td.SmemDescriptor(
            start_address=1024 * int(rng.integers(0, 2)), leading_byte_offset=16, stride_byte_offset=8 * atom * int(rng.integers(1, 3)), swizzle=swizzle
        )
    addresses = copy.cp_source_addresses(descriptor, shape)
    size = -(-(int(addresses.max()) + 16) // 16) * 16
    targets = copy.cp_destinations(shape, multicast)
    del targets
    allocations, column = _with_others(rng, bits // 32)

    def make(rng) -> State:
        tm = TensorMemory(allocations=tuple(allocations), last_columns=max(a.columns for a in allocations))
        return State(_shared(rng, size), _noise(rng, tm, int(rng.integers(0, 6))))

    return Case(_pair(form, rng, make), (tensor_memory_address(0, column), descriptor.encode()), None, None)


# ---------------------------------------------------------------------------------------------
# tcgen05.mma cases
# ---------------------------------------------------------------------------------------------

#: The element types each kind's cases draw (A, B alike or mixed): the 8-bit and wider formats
#: whose shared-memory layout is text. The 4-bit and 6-bit formats of ``.kind::f8f6f4`` and
#: ``.kind::mxf8f6f4`` (``e2m1``, ``e2m3``, ``e3m2``) are "contiguously packed along with padding"
#: (§9.7.16.10.4.4), a figure only, and the layout refuses them: not drawn.
MMA_TYPES = {
    "f16": ("f16", "bf16"),
    "tf32": ("tf32",),
    "f8f6f4": ("e4m3", "e5m2"),
    "i8": ("s8", "u8"),
    "mxf8f6f4": ("e4m3", "e5m2"),
    "mxf4": ("e2m1",),
    "mxf4nvf4": ("e2m1",),
}

#: Why a tcgen05.mma form gets no vectors (the semantics refuses every input of it).
_LAYOUT_STEPS = tuple(16 << i for i in range(11))  # 16 .. 16384 bytes


def _mma_shapes(form: Form, rng: np.random.Generator, kind: str, group: int, sparse: bool, ws: bool, a_tmem: bool) -> tuple[int, int]:
    """An M the layouts determine and a small N (Table 39) for the form."""
    from ptxspec.semantics import tcgen05_descriptors as td

    allowed_m, ns = td.SHAPE_TABLE[kind][(ws, group, sparse)]
    ms = set(allowed_m)
    if ws:
        ms -= {64}  # Layout E is undetermined
        if sparse or a_tmem:
            ms &= {128}  # the metadata / the A of Layout G: M = 128 only
    elif group == 1:
        if sparse or kind in td.BLOCK_SCALED:
            ms &= {128}
    elif sparse:
        ms &= {256}  # Layout C is undetermined
    if form.get("ashift"):
        ms &= {128 * group}  # A in whole sub-partitions, one copy (semantics.tcgen05_mma.a_shifted)
    m = int(rng.choice(sorted(ms)))
    small = sorted(ns)
    if group == 2 and m == 128 and kind in td.BLOCK_SCALED:
        return m, 128  # scale factor B's "2x2" layout: N = 128 or 256 (tcgen05_operands._pair_b_2x2)
    return m, small[0] if rng.integers(0, 4) or small[1] > 32 else small[1]


@functools.cache
def _smem_layouts(swizzle: str, major: str, bits: int, rows: int, k: int) -> tuple[tuple[int, int, int], ...]:
    """The (LBO, SBO, span) pairs of :data:`_LAYOUT_STEPS` under which the ``rows x k`` matrix of
    ``bits``-bit elements is stored without two elements sharing bits, the most compact first."""
    from ptxspec.semantics import tcgen05_descriptors as td

    mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    out = []
    for lbo in _LAYOUT_STEPS:
        for sbo in _LAYOUT_STEPS:
            byte, bit = td.element_address(
                td.SmemDescriptor(start_address=0, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle), bits, mn, kk, major
            )
            where = np.asarray(byte, np.int64) * 8 + np.asarray(bit, np.int64)
            if np.unique(where).size == where.size:
                out.append((lbo, sbo, int(np.asarray(byte).max()) + 1))
    return tuple(sorted(out, key=lambda t: (t[2], t[0], t[1])))


def _smem_operand(rng: np.random.Generator, start: int, swizzle: str, major: str, bits: int, rows: int, k: int):
    """A shared memory descriptor for a ``rows x k`` operand from ``start`` (a compact layout,
    chosen at random among the near-most compact), its element addresses and its end."""
    from ptxspec.semantics import tcgen05_descriptors as td

    layouts = _smem_layouts(swizzle, major, bits, rows, k)
    if not layouts:  # the operand's K does not fit this swizzle's atom: the next wider mode
        wider = {"32B": "64B", "64B": "128B", "128B": "none"}.get(swizzle)
        if wider is None:  # pragma: no cover - every operand here fits "none" and 128B_base32B
            raise PtxSpecError(f"no {swizzle} {major}-major layout of {rows} x {k} {bits}-bit elements without overlaps")
        return _smem_operand(rng, start, wider, major, bits, rows, k)
    best = layouts[0][2]
    near = [t for t in layouts if t[2] <= best * 3 // 2]
    lbo, sbo, span = near[int(rng.integers(0, len(near)))]
    if swizzle != "none":
        start = -(-start // 1024) * 1024
    descriptor = td.SmemDescriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle)
    mn, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    byte, bit = td.element_address(descriptor, bits, mn, kk, major)
    return descriptor, (np.asarray(byte, np.int64), np.asarray(bit, np.int64)), int(np.asarray(byte).max()) + 1


def _tame(image: np.ndarray, byte: np.ndarray, bit: np.ndarray, bits: int) -> None:
    """Clear the top exponent bit of every element at (byte, bit): finite, moderate values."""
    position = byte.ravel() * 8 + bit.ravel() + bits - 2
    np.bitwise_and.at(image, position // 8, ~(np.uint8(1) << (position % 8).astype(np.uint8)))


def _tm_cells(state: State, which: int, lanes, columns, words, defined=None) -> State:
    """``state`` with cells of CTA ``which`` (0 or the peer) written."""
    target = state if which == 0 else state.peer
    assert target is not None
    kwargs = {} if defined is None else {"defined": defined}
    tm = target.tensor_memory.with_cells(np.asarray(lanes).ravel(), np.asarray(columns).ravel(), np.asarray(words, dtype=np.uint64).ravel(), **kwargs)
    target = target.with_tensor_memory(tm)
    return target if which == 0 else attrs.evolve(state, peer=target)


def _or_fields(cta, lane, column, shift, values, base_lane: int, base_column: int) -> dict[tuple[int, int, int], int]:
    """Sub-word fields OR-ed into their 32-bit cells: {(cta, lane, column): word}."""
    words: dict[tuple[int, int, int], int] = {}
    for c, l_, col, s, v in zip(*(np.asarray(x).ravel() for x in (cta, lane, column, shift, values))):
        key = (int(c), base_lane + int(l_), base_column + int(col))
        words[key] = words.get(key, 0) | (int(v) << int(s))
    return words


def _put_words(state: State, words: dict[tuple[int, int, int], int]) -> State:
    for which in sorted({key[0] for key in words}):
        keys = [key for key in words if key[0] == which]
        state = _tm_cells(state, which, [k[1] for k in keys], [k[2] for k in keys], [words[k] for k in keys])
    return state


def _mma_case(form: Form, rng: np.random.Generator) -> Case:
    from ptxspec.semantics import tcgen05_datapath as dp
    from ptxspec.semantics import tcgen05_descriptors as td
    from ptxspec.semantics import tcgen05_operands as ops

    key = form.family.key
    kind = form["kind"].split("::")[1]
    group = _group(form)
    sparse, ws = ".sp" in key, ".ws" in key
    names = [o.name.lower() for o in form.inputs]
    a_tmem = "a_tmem" in names
    m, n = _mma_shapes(form, rng, kind, group, sparse, ws, a_tmem)

    # the instruction descriptor
    types = MMA_TYPES[kind]
    atype = str(rng.choice(types))
    btype = atype if kind in ("f16", "tf32") else str(rng.choice(types))
    fields: dict[str, Any] = {}
    scale_type = None
    vector = None
    if kind in td.BLOCK_SCALED:
        vector = form.get("scale_vectorsize") or "block32"
        scale_type = "ue4m3" if kind == "mxf4nvf4" and vector.lstrip(".") in ("block16", "scale_vec::4X") and rng.integers(0, 2) else "ue8m0"
        k_dense = td.K_VALUES[kind][1 if sparse else 0]
        vec = ops.scale_vector(kind, vector, k_dense)
        ids = sorted(ops.scale_ids(kind, vec) & td.scale_factor_ids(kind, scale_type, False))
        fields.update(scale_type=scale_type, scale_a_id=int(rng.choice(ids)), scale_b_id=int(rng.choice(ids)))
        dtype = "f32"
    elif kind == "i8":
        dtype = "s32"
        fields.update(saturate=bool(rng.integers(0, 2)))
    elif kind == "tf32":
        dtype = "f32"
    else:
        dtype = "f16" if (kind == "f8f6f4" or atype == "f16") and rng.integers(0, 3) == 0 else "f32"
    if kind != "i8":
        fields.update(negate_a=bool(rng.integers(0, 4) == 0), negate_b=bool(rng.integers(0, 4) == 0))
    transposable = kind not in ("mxf4", "mxf4nvf4")
    transpose_a = transposable and not a_tmem and bool(rng.integers(0, 3) == 0)
    transpose_b = transposable and bool(rng.integers(0, 3) == 0)
    if transpose_b and td.TYPE_BITS[btype] == 8 and n not in td.TRANSPOSE_B8_N[group]:
        transpose_b = False
    selector = int(rng.integers(0, 2)) if sparse and kind in ("tf32", "f16") else 0
    instr = td.InstrDescriptor(
        kind=kind,
        m=m,
        n=n,
        atype=atype,
        btype=btype,
        dtype=dtype,
        sparse=sparse,
        sparsity_selector=selector,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        **fields,
    )
    k = instr.k
    stored_k = k // 2 if sparse else k

    def swizzle_for(transposed: bool, bits: int) -> str:
        if kind == "tf32" and transposed:
            return "128B_base32B"
        return str(rng.choice(["none", "none", "32B", "64B", "128B"]))

    # shared memory: A (unless in Tensor Memory), then B; each CTA its rows of A, its columns of B
    abits, bbits = td.TYPE_BITS[atype], td.TYPE_BITS[btype]
    start = 128 * int(rng.integers(0, 4))
    a_desc = None
    a_where = None
    if not a_tmem:
        a_desc, a_where, start = _smem_operand(rng, start, swizzle_for(transpose_a, abits), "MN" if transpose_a else "K", abits, m // group, stored_k)
        start = -(-start // 128) * 128 + 128 * int(rng.integers(0, 3))
    b_desc, b_where, end = _smem_operand(rng, start, swizzle_for(transpose_b, bbits), "MN" if transpose_b else "K", bbits, n // group, k)
    size = -(-end // 16) * 16
    tame = kind != "i8" and rng.integers(0, 4) != 0  # mostly finite, moderate values; sometimes raw bits (NaN, infinity)
    images = []
    for _ in range(group):
        image = rng.integers(0, 256, size=size, dtype=np.uint8)
        if tame:
            for where, bits in ((a_where, abits), (b_where, bbits)):
                if where is not None and bits > 4:
                    _tame(image, where[0], where[1], bits)
        images.append(image.tobytes())

    # Tensor Memory: one allocation of every column (or of the first 256), the operands in it
    needed = 1 + a_tmem + sparse + 2 * (vector is not None)
    columns = 512 if needed > 4 or rng.integers(0, 2) else 256
    allocation = Allocation(0, columns)
    tm = TensorMemory(allocations=(allocation,), last_columns=columns)
    state = State(images[0], tm, None if rng.integers(0, 2) else group)
    if group == 2:
        state = attrs.evolve(state, peer=State(images[1], tm, state.cta_group))
    slots = iter(64 * int(c) for c in rng.permutation(columns // 64))  # 64-column slots: D, then A, metadata, scale A, scale B as needed
    layout = dp.layout_id(m, group, sparse, ws)
    alignment = int(rng.choice(dp.lane_alignments(layout)))
    d_column = next(slots)
    d_tmem = tensor_memory_address(alignment, d_column)
    enable = int(rng.integers(0, 3) != 0)
    cta, lane, column = dp.d_cells(m, n, group, sparse, ws, lane_alignment=alignment)
    if enable or rng.integers(0, 2):  # D (C) holds values, some cells undefined or half defined
        for which in range(group):
            here = cta == which
            cells = lane[here].size
            values = rng.integers(0, 1 << 32, size=cells, dtype=np.uint64)
            if dtype == "f32" and rng.integers(0, 4) != 0:
                values &= np.uint64(0xBFFFFFFF)
            if dtype == "f16":
                values &= np.uint64(0xFFFF if rng.integers(0, 4) == 0 else 0xBFFF)
            kinds = rng.integers(0, 24, size=cells)
            defined = np.full(cells, WHOLE, np.uint8)
            defined[kinds == 0] = 0
            defined[kinds == 1] = LOW_HALF
            keep = defined != 0
            state = _tm_cells(
                state,
                which,
                alignment + lane[here][keep],
                d_column + column[here][keep],
                np.where(defined == LOW_HALF, values & 0xFFFF, values)[keep],
                defined[keep],
            )

    named: dict[str, int] = {"d_tmem": d_tmem, "b_desc": b_desc.encode(), "idesc": instr.encode(), "enable_input_d": enable}
    if a_desc is not None:
        named["a_desc"] = a_desc.encode()
    else:  # A in Tensor Memory, in the lanes of D's rows, packed along K (every copy of Layout B)
        base = next(slots)
        named["a_tmem"] = tensor_memory_address(alignment, base)
        for copy in range(dp.a_copies(m, group, sparse, ws)):
            acta, alane, acol, abit = dp.a_cells(m, stored_k, abits, group, sparse, ws, lane_alignment=alignment, copy=copy)
            values = rng.integers(0, 1 << abits, size=acta.shape, dtype=np.uint64)
            if tame and abits > 4:
                values &= np.uint64(~(1 << (abits - 2)) & ((1 << abits) - 1))
            state = _put_words(state, _or_fields(acta, alane, acol, abit, values, alignment, base))
    if sparse:  # metadata: meaningful fields, now and then one that is not (an undefined row)
        base = next(slots)
        named["sp_meta_tmem"] = tensor_memory_address(0, base)
        mcta, mlane, mcol, mbit = ops.metadata_cells(kind, m, k, group, ws, selector)
        choices = np.array(sorted(ops.MEANINGFUL[kind]), np.uint64)
        values = rng.choice(choices, size=mcta.shape)
        if rng.integers(0, 4) == 0:
            bad = rng.integers(0, 64, size=mcta.shape) == 0
            values[bad] = rng.integers(0, 16, size=int(bad.sum()), dtype=np.uint64)
        state = _put_words(state, _or_fields(mcta, mlane, mcol, mbit, values, 0, base))
    if vector is not None:  # scale factors, duplicated to the four sub-partitions (and B's to both CTAs)
        for operand, rows, ident in (("a", m, instr.scale_a_id), ("b", n, instr.scale_b_id)):
            slot = next(slots)
            named[f"scale_{operand}_tmem"] = tensor_memory_address(0, slot)
            scta, slane, scol, sbyte = ops.scale_factor_cells(operand, kind, vector, rows, k, ident, group, m)
            if scale_type == "ue8m0":
                factor = rng.integers(120, 135, size=scta.shape[:2], dtype=np.uint64)
            else:
                factor = rng.integers(0x28, 0x48, size=scta.shape[:2], dtype=np.uint64)
            values = np.repeat(factor[..., None], scta.shape[2], axis=2)
            state = _put_words(state, _or_fields(scta, slane, scol, 8 * sbyte, values, 0, slot))
    usage = form.get("collector_usage")
    if usage and usage.split("::")[2] in ("use", "lastuse"):
        state = attrs.evolve(state, collectors=frozenset({usage.split("::")[1]}))
    elif rng.integers(0, 4) == 0:
        state = attrs.evolve(state, collectors=frozenset({"a"} if not ws else {"b0"}))
    if "scale_input_d" in names:
        named["scale_input_d"] = int(rng.integers(0, 16)) if rng.integers(0, 2) else 0
    if "zero_column_mask_desc" in names:
        named["zero_column_mask_desc"] = _zero_column_mask(rng, m, n)
    disable = [name for name in names if name.startswith("disable_output_lane")]
    sources = []
    for name in names:
        if name in disable:
            word = 0 if rng.integers(0, 3) == 0 else int(rng.integers(0, 1 << 32, dtype=np.uint64)) & int(rng.integers(0, 1 << 32, dtype=np.uint64))
            sources.append(word)
        else:
            sources.append(named[name])
    return Case(state, tuple(sources), None, None)


def _zero_column_mask(rng: np.random.Generator, m: int, n: int) -> int:
    """A zero-column mask descriptor: none (0), or a mask of runs of zeroed and used columns."""
    from ptxspec.semantics import tcgen05_descriptors as td

    if rng.integers(0, 3) == 0:
        return 0
    try:
        descriptor = td.ZeroColumnMaskDescriptor(
            start_counts=cast("tuple[int, int, int, int]", tuple(int(x) for x in rng.integers(0, 4, size=4))),
            first_spans=cast("tuple[int, int, int, int]", tuple(int(x) for x in rng.integers(0, 2, size=4))),
            non_zero_mask=True,
            skip_span=int(rng.integers(0, 4)),
            use_span=int(rng.integers(0, 4)),
        )
        td.zero_column_mask(descriptor, m, n)
    except PtxSpecError:
        return 0
    return descriptor.encode()


def line_text(form: Form) -> str:
    """The ``instr`` of ``form``'s lines: its text, or, where several families share the text (A
    from shared memory or Tensor Memory, with or without disable-output-lane ...), the text with
    an operand template that names the family (``[d], [a], b, idesc, p``)."""
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.tcgen05 import addresses

    if parse(form.text).family.key == form.family.key:
        return form.text
    if form.family.addresses:  # a memory form: its template, with brackets where its syntax has them
        return f"{form.text} {form.template}"
    bracketed = addresses(form)
    parts: list[str] = []
    vector: list[str] = []
    for operand in form.inputs:
        if "." in operand.name:
            vector.append(f"m{len(vector)}")
            continue
        if vector:
            parts.append("{" + ", ".join(vector) + "}")
            vector = []
        name = operand.name.replace("-", "_")
        parts.append(f"[{name}]" if operand.name in bracketed else name)
    if vector:
        parts.append("{" + ", ".join(vector) + "}")
    text = f"{form.text} {', '.join(parts)}"
    assert parse(text).family.key == form.family.key, text
    return text


def draw_case(form: Form, rng: np.random.Generator) -> Case:
    """One seeded case of ``form`` (a form of :func:`writes_vectors`)."""
    family = family_of(form)
    if family == "memory":
        from ptxspec.conformance import memory_vectors

        return memory_vectors.draw_case(form, rng)
    if family in ("ld", "ld.red", "st"):
        return _ld_st_case(form, rng, family)
    if family == "alloc":
        return _alloc_case(form, rng)
    if family == "dealloc":
        return _dealloc_case(form, rng)
    if family == "relinquish_alloc_permit":
        return Case(_pair(form, rng, _plain_state), (), FULL_MASK, None)
    if family == "wait":
        return Case(_plain_state(rng), (), FULL_MASK, None)
    if family == "fence":
        return Case(_plain_state(rng), (), None, None)
    if family == "shift":
        return _shift_case(form, rng)
    if family == "cp":
        return _cp_case(form, rng)
    if family == "mma":
        return _mma_case(form, rng)
    raise PtxSpecError(f"{form.text}: no vectors for this form", section=form.family.section)  # pragma: no cover


def cases(form: Form, count: int, seed: int) -> Iterator[Case]:
    """``count`` seeded cases of ``form``."""
    from ptxspec.conformance.vectors import check_count_seed, rng_for

    check_count_seed(count, seed)
    rng = rng_for(form.text, seed)
    for _ in range(count):
        yield draw_case(form, rng)


# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------


def _hex(bits: int, width: int) -> str:
    return f"0x{int(bits):0{max(1, (width + 3) // 4)}x}"


def inputs_json(form: Form, sources: Sequence) -> list:
    """The source operands as the schema writes them (one hex string, or 32 for a per-lane one)."""
    from ptxspec.spec.types import register_bits

    out: list = []
    for value, operand in zip(sources, form.inputs):
        width = register_bits(operand.type)
        out.append([_hex(v, width) for v in value] if isinstance(value, tuple) else _hex(value, width))
    return out


def outputs_json(form: Form, results: Sequence) -> tuple[list, list | None]:
    """``(outputs, allowed)``: each destination's 32 lanes (hex; a set's canonical member, or its
    JSON form where it has none), and the ``allowed`` claims (None where every lane is fixed)."""
    from ptxspec.conformance.vectors import representative
    from ptxspec.spec.types import register_bits

    outputs: list = []
    allowed: list = []
    one_thread = operands_kind(form).threads == 1
    for result, operand in zip(results, form.destinations):
        width = register_bits(operand.type)
        lanes = getattr(result, "lanes", None) if not (isinstance(result, int) or one_thread) else None
        if lanes is None:  # one thread's register (or one value for every lane)
            rep = representative(result)
            outputs.append(_hex(rep, width) if rep is not None else result.to_json())
            allowed.append(None if isinstance(result, int) else result.to_json())
            continue
        texts: list = []
        for lane in lanes:
            rep = representative(lane)
            texts.append(_hex(rep, width) if rep is not None else lane.to_json())
        outputs.append(texts)
        open_with_member = any(not isinstance(lane, int) and representative(lane) is not None for lane in lanes)
        allowed.append(result.to_json() if open_with_member else None)
    return outputs, (allowed if any(a is not None for a in allowed) else None)


def line_profile(form: Form, case: Case, profile: str) -> str:
    """The profile that computes a line: ``profile``, except that a tcgen05.mma line asked at the
    spec level is computed by ``sm_100`` (MMA-Sim's public Blackwell model) when that profile
    has a datapath for the kind and types of the case's ``idesc`` (the line's ``profile`` says
    which); the spec level's sets (sparse A, ``.kind::i8``) otherwise."""
    if profile != "spec" or family_of(form) != "mma":
        return profile
    from ptxspec.profiles import PROFILES
    from ptxspec.semantics.tcgen05_mma import datapath_for, instruction_descriptor

    named = {o.name.lower(): v for o, v in zip(form.inputs, case.sources)}
    try:
        instr = instruction_descriptor(form["kind"].split("::")[1], int(named["idesc"]), cta_group=_group(form), ws=".ws" in form.family.key)
    except PtxSpecError:
        return profile
    return "sm_100" if datapath_for(PROFILES["sm_100"], instr) is not None else profile


def vector_dict(form: Form, case: Case, profile: str = "spec") -> dict:
    """One line of ``case``: the schema of this module, the results by
    :func:`~ptxspec.semantics.instructions.execute`."""
    from ptxspec.semantics.instructions import execute

    kind = operands_kind(form)
    profile = line_profile(form, case, profile)
    outcome = execute(form, case.sources, profile, active=case.active, state=case.state, warp=case.warp)
    obj: dict = {"instr": line_text(form), "state": state_to_json(case.state), "inputs": inputs_json(form, case.sources)}
    if kind.threads > 1:
        obj["active"] = _hex(FULL_MASK if case.active is None else case.active, kind.threads)
    if kind.warp_rank:
        obj["warp"] = case.warp
    outputs, allowed = outputs_json(form, outcome.results)
    obj["outputs"] = outputs
    if allowed is not None:
        obj["allowed"] = allowed
    assert outcome.state is not None, "a form of state leaves a state"
    obj["state_after"] = state_to_json(outcome.state)
    obj["profile"] = profile
    return obj


def generate(form: Form, count: int, seed: int, profile: str = "spec") -> Iterator[dict]:
    """The ``count`` vectors of ``form`` as dicts."""
    for case in cases(form, count, seed):
        yield vector_dict(form, case, profile)


def jsonl_chunks(form: Form, count: int, seed: int, profile: str = "spec", progress=None) -> Iterator[bytes]:
    """The JSON Lines text of :func:`generate`, a few lines at a time."""
    lines: list[str] = []
    for i, obj in enumerate(generate(form, count, seed, profile)):
        lines.append(json.dumps(obj) + "\n")
        if len(lines) >= 64:
            yield "".join(lines).encode("utf-8")
            lines = []
            if progress is not None:
                progress(form.text, i + 1, count)
    if lines:
        yield "".join(lines).encode("utf-8")
    if progress is not None:
        progress(form.text, count, count)


def expand(instrs: Sequence[str]) -> list[str]:
    """``instrs`` with :data:`ALL` (``tcgen05``) replaced by :data:`DEFAULT_FORMS`."""
    out: list[str] = []
    for text in instrs:
        out += DEFAULT_FORMS if text.strip() == ALL else [text]
    return out


# ---------------------------------------------------------------------------------------------
# Replay (check-vectors)
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class StateVector:
    """One parsed line: the case, the observed outputs (per destination, 32 lane values or set
    claims), the ``allowed`` claims, the observed new state, and where it is."""

    info: StateInfo
    case: Case
    observed: tuple
    allowed: list | None
    state_after: State
    vector_profile: str
    where: Location

    @property
    def form(self):
        return self.info.form


@attrs.frozen(eq=False)
class StateMismatch:
    vector: StateVector
    why: str
    details: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        return [f"{self.vector.where}: {self.vector.form.text}: {self.why}", *(f"    {d}" for d in self.details)]


@attrs.define(eq=False)
class StateInfo:
    """check-vectors' view of a form of state (``warp`` and ``matrix`` are the attributes that
    check_vectors.py tests to send its lines here)."""

    form: Form
    threads: int
    warp_rank: bool
    warp: bool = True
    matrix: bool = True

    def parse_vector(self, raw: str, obj: dict, source: str, number: int) -> StateVector:
        return parse_vector(self, raw, obj, source, number)

    def check(self, vectors: Sequence[StateVector], profile: str) -> list[StateMismatch]:
        return [m for v in vectors if (m := judge(v, profile)) is not None]


def form_info(instr: str) -> StateInfo | None:
    """The :class:`StateInfo` of ``instr`` if it is a form whose semantics takes a state, else None."""
    from ptxspec.spec.catalogue import parse

    try:
        form = parse(instr)
    except PtxSpecError:
        return None
    if not replays(form):
        return None
    kind = operands_kind(form)
    return StateInfo(form, kind.threads, kind.warp_rank)


_KEYS = ("instr", "state", "inputs", "active", "warp", "outputs", "allowed", "state_after", "profile", "where")


def parse_vector(info: StateInfo, raw: str, obj: dict, source: str, number: int) -> StateVector:
    """A line of a form of state, every problem a located error (``file:line:column``, or the JSON
    path inside ``state`` / ``state_after``)."""
    from ptxspec.conformance.check_vectors import _bits, _column, _lanes, show_value
    from ptxspec.profiles import NAMES as PROFILE_NAMES
    from ptxspec.spec.types import register_bits

    form = info.form

    def at(key: str, index: int | None = None):
        return lambda *_: Location(source, number, _column(raw, key, index))

    for key in obj:
        if key not in _KEYS:
            raise OperandError(f"unknown field {key!r} in a vector of {form.text} (the fields are {', '.join(_KEYS)})", where=at(key)())
    for key in ("state", "state_after"):
        if key not in obj:
            raise OperandError(f"missing field {key!r}: a vector of {form.text} gives the state before and after", where=Location(source, number, 1))
    line = f"{source}:{number}"
    state = state_from_json(obj["state"], line, "state")
    state_after = state_from_json(obj["state_after"], line, "state_after")
    inputs = obj["inputs"]
    if not isinstance(inputs, list) or len(inputs) != len(form.inputs):
        names = ", ".join(o.name for o in form.inputs) or "none"
        raise OperandError(f"field 'inputs': {form.text} takes {len(form.inputs)} source operand(s) ({names}), got {show_value(inputs)}", where=at("inputs")())
    sources = []
    for k, (value, operand) in enumerate(zip(inputs, form.inputs)):
        width = register_bits(operand.type)
        what = f"inputs[{k}] ({operand.name})"
        sources.append(_lanes(value, width, what, at("inputs", k)) if info.threads > 1 else _bits(value, width, what, at("inputs", k)))
    active = None
    if info.threads > 1:
        active = _bits(obj.get("active", _hex(FULL_MASK, 32)), 32, "field 'active'", at("active"))
    elif "active" in obj:
        raise OperandError(f"{form.text} is executed by one thread: it takes no 'active'", where=at("active")())
    warp = obj.get("warp")
    if "warp" in obj and not info.warp_rank:
        raise OperandError(f"{form.text} does not depend on the warp's rank in its warpgroup: it takes no 'warp'", where=at("warp")())
    if warp is not None and (isinstance(warp, bool) or not isinstance(warp, int) or warp not in range(4)):
        raise OperandError(f"field 'warp': the warp's rank in its warpgroup is 0-3 or null, got {show_value(warp)}", where=at("warp")())
    outputs = obj["outputs"]
    destinations = form.destinations
    if not isinstance(outputs, list) or len(outputs) != len(destinations):
        raise OperandError(f"field 'outputs': {form.text} has {len(destinations)} destination(s), got {show_value(outputs)}", where=at("outputs")())
    observed = []
    for k, (value, operand) in enumerate(zip(outputs, destinations)):
        width = register_bits(operand.type)
        where = at("outputs", k)
        if info.threads == 1:  # one thread's register: a value, or a set's JSON form
            value = [value]
        elif not isinstance(value, list) or len(value) != info.threads:
            raise OperandError(f"outputs[{k}] ({operand.name}): expected a list of {info.threads} lane values, got {show_value(value)}", where=where())
        lanes = tuple(v if isinstance(v, dict) else _bits(v, width, f"outputs[{k}] ({operand.name}), lane {i}", where) for i, v in enumerate(value))
        observed.append(lanes)
    allowed = obj.get("allowed")
    if allowed is not None and not (isinstance(allowed, list) and len(allowed) == len(destinations) and all(a is None or isinstance(a, dict) for a in allowed)):
        raise OperandError(f"field 'allowed': one entry (null or a set) per destination, got {show_value(allowed)}", where=at("allowed")())
    profile = obj.get("profile", "spec")
    if profile not in PROFILE_NAMES:
        raise OperandError(f"field 'profile': one of {', '.join(PROFILE_NAMES)}, got {show_value(profile)}", where=at("profile")())
    return StateVector(info, Case(state, tuple(sources), active, warp), tuple(observed), allowed, state_after, profile, Location(source, number))


def _lane_text(value) -> str:
    return json.dumps(value) if isinstance(value, dict) else f"{value:#010x}"


def judge(vector: StateVector, profile: str) -> StateMismatch | None:
    """The first disagreement of ``vector`` with the specification under ``profile`` (None: none)."""
    from ptxspec.conformance.check_vectors import hex_lower
    from ptxspec.semantics.instructions import execute, state_allowed
    from ptxspec.semantics.results import contains

    form, case = vector.form, vector.case
    try:
        outcome = execute(form, case.sources, profile, active=case.active, state=case.state, warp=case.warp)
    except PtxSpecError as error:
        return StateMismatch(vector, "the specification refuses this input", (error.one_line(),))
    for result, lanes, operand in zip(outcome.results, vector.observed, form.destinations):
        expected_lanes = getattr(result, "lanes", None) if vector.info.threads > 1 else None
        if expected_lanes is None:
            expected_lanes = (result,) * len(lanes)
        for lane, (e, o) in enumerate(zip(expected_lanes, lanes)):
            if isinstance(o, dict):
                good = not isinstance(e, int) and hex_lower(o) == e.to_json()
            else:
                good = contains(e, o)
            if not good:
                shown = e if isinstance(e, int) else e.describe()
                return StateMismatch(
                    vector,
                    f"{operand.name}, lane {lane}: {_lane_text(o)} is not allowed",
                    (f"expected {operand.name} = {_lane_text(shown) if isinstance(shown, int) else shown}", f"observed {operand.name} = {_lane_text(o)}"),
                )
    if vector.allowed is not None and vector.vector_profile == profile:
        _, claims = outputs_json(form, outcome.results)
        expected_claims = claims or [None] * len(form.destinations)
        for k, (claim, expected) in enumerate(zip(vector.allowed, expected_claims)):
            if (claim is None) != (expected is None) or (claim is not None and hex_lower(claim) != expected):
                return StateMismatch(vector, f"'allowed' for {form.destinations[k].name} is not the {profile} profile's", (f"expected {json.dumps(expected)}",))
    assert outcome.state is not None, "a form of state leaves a state"
    if (
        vector.state_after != outcome.state
        and not _states_agree(outcome.state, vector.state_after, vector.vector_profile == profile)
        and not state_allowed(form, case.sources, case.state, None, vector.state_after)
    ):
        differences = diff_lines(outcome.state, vector.state_after)
        shown = differences[:12] + ([f"... {len(differences) - 12} more line(s)"] if len(differences) > 12 else [])
        return StateMismatch(vector, "state_after is not the state the instruction leaves; from the expected state to the observed one:", tuple(shown))
    return None


def _states_agree(expected: State, observed: State, same_profile: bool) -> bool:
    """Whether the observed new state is the expected one where the expected holds sets in some
    cells (the spec level's D of tcgen05.mma): each such cell of the observed state holds a
    member (a line of sm_100 checked at the spec level), or the same sets (as the schema writes
    them). A line of another profile whose cells hold sets is accepted where those sets hold
    what this profile gives (``check-vectors --profile sm_100`` of a spec-level line)."""
    if expected.admits(observed) or state_to_json(expected) == state_to_json(observed):
        return True
    return not same_profile and observed.admits(expected)


def load_line(line: str, where: str = "<vector>") -> StateVector:
    """One line of this schema parsed (for tests and the Python API)."""
    obj = json.loads(line)
    info = form_info(obj["instr"])
    if info is None:
        raise PtxSpecError(f"{obj['instr']!r} is not a form of state", where=where)
    return parse_vector(info, line, obj, where, 1)


__all__ = [
    "ALL",
    "DEFAULT_FORMS",
    "MMA_FORMS",
    "MMA_TEMPLATE_FORMS",
    "Case",
    "StateInfo",
    "StateMismatch",
    "StateVector",
    "cases",
    "expand",
    "form_info",
    "generate",
    "judge",
    "jsonl_chunks",
    "line_profile",
    "line_text",
    "parse_vector",
    "vector_dict",
]
