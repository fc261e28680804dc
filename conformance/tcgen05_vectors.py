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

The cases are seeded and deterministic (numpy PCG64 seeded with ``(seed, crc32(form text))``, as
every vector writer here): same arguments, same bytes. Each form's cases vary the warp (and
whether it is named), taddr's lane and column within a live allocation, the other allocations,
the values (``.f32`` min/max: zeros of both signs, infinities, NaNs), cells left undefined or
half-defined, ``immHalfSplitoff``, and, for alloc/dealloc, the allocations present, ``nCols``,
``last_columns`` and ``dst``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import numpy as np

from ptxspec.conformance.state_json import diff_lines, state_from_json, state_to_json
from ptxspec.semantics.state import COLUMNS, LANES, LOW_HALF, WHOLE, Allocation, State, TensorMemory, tensor_memory_address
from ptxspec.spec.errors import Location, OperandError, PtxSpecError

if TYPE_CHECKING:
    from ptxspec.spec.catalogue import Form

FULL_MASK = 0xFFFFFFFF

#: The forms ``ptxspec vectors tcgen05`` writes: every data-movement family, every shape of
#: ld/st with and without (un)packing, some ``.num``, ld.red of each type, both ``.cta_group``.
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
)

#: What ``ptxspec vectors`` takes for every form of :data:`DEFAULT_FORMS`.
ALL = "tcgen05"

#: The families whose cases this module draws.
_FAMILIES = ("alloc", "dealloc", "relinquish_alloc_permit", "ld", "ld.red", "st", "wait", "cp", "shift", "fence")


def family_of(form: Form) -> str | None:
    """Which of :data:`_FAMILIES` ``form`` is (None: not a tcgen05 form of state)."""
    key = form.family.key
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


def draw_case(form: Form, rng: np.random.Generator) -> Case:
    """One seeded case of ``form`` (a form of :func:`writes_vectors`)."""
    family = family_of(form)
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
    for result, operand in zip(results, form.destinations):
        width = register_bits(operand.type)
        lanes = getattr(result, "lanes", None) if not isinstance(result, int) else None
        if lanes is None:  # one value for every lane (not written by the tcgen05 functions)
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


def vector_dict(form: Form, case: Case, profile: str = "spec") -> dict:
    """One line of ``case``: the schema of this module, the results by
    :func:`~ptxspec.semantics.instructions.execute`."""
    from ptxspec.semantics.instructions import execute

    kind = operands_kind(form)
    outcome = execute(form, case.sources, profile, active=case.active, state=case.state, warp=case.warp)
    obj: dict = {"instr": form.text, "state": state_to_json(case.state), "inputs": inputs_json(form, case.sources)}
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
        if not isinstance(value, list) or len(value) != info.threads:
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
    from ptxspec.semantics.instructions import check_sources, execute, semantic_of
    from ptxspec.semantics.results import contains

    form, case = vector.form, vector.case
    try:
        outcome = execute(form, case.sources, profile, active=case.active, state=case.state, warp=case.warp)
    except PtxSpecError as error:
        return StateMismatch(vector, "the specification refuses this input", (error.one_line(),))
    for result, lanes, operand in zip(outcome.results, vector.observed, form.destinations):
        expected_lanes = getattr(result, "lanes", None)
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
    if vector.state_after != outcome.state:
        meaning = semantic_of(form)
        if meaning.allowed_states is not None:
            choices = cast("Collection[State]", meaning.allowed_states(form, case.state, *check_sources(form, case.sources, meaning.operands)))
            if vector.state_after in choices:
                return None
        differences = diff_lines(outcome.state, vector.state_after)
        shown = differences[:12] + ([f"... {len(differences) - 12} more line(s)"] if len(differences) > 12 else [])
        return StateMismatch(vector, "state_after is not the state the instruction leaves; from the expected state to the observed one:", tuple(shown))
    return None


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
    "parse_vector",
    "vector_dict",
]
