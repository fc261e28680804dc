"""tcgen05 allocation and data movement on the Tensor Memory state (§9.7.16.7-9, semantics/tcgen05.py).

Checked three ways where the manual allows: Hypothesis properties through the one front door
(``execute``/``check``), an independent reference for each instruction written here with plain
Python loops over a dict of cells (not the numpy paths of the module), and the manual's rules as
refusals. The thread <-> cell maps themselves are pinned against CUTLASS in test_tcgen05_layout.py.
"""

from __future__ import annotations

import struct

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import tcgen05_layout as layout
from ptxspec.semantics.instructions import check, execute
from ptxspec.semantics.state import COLUMNS, Allocation, State, TensorMemory, tensor_memory_address
from ptxspec.semantics.warp import Undefined
from ptxspec.spec.errors import OperandError

ALLOC = "tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32"
DEALLOC = "tcgen05.dealloc.cta_group::{g}.sync.aligned.b32"
RELINQUISH = "tcgen05.relinquish_alloc_permit.cta_group::{g}.sync.aligned"
LARGEST = {"32x32b": 128, "16x64b": 128, "16x128b": 64, "16x256b": 32, "16x32bx2": 128}


def allocated(columns: int = 512, shared: int = 64) -> State:
    return execute(ALLOC.format(g=1), [0, columns], state=State(bytes(shared))).state


def ld_text(shape: str, num: int, pack: bool) -> str:
    return f"tcgen05.ld.sync.aligned.{shape}.x{num}{'.pack::16b' if pack else ''}.b32"


def st_text(shape: str, num: int, pack: bool) -> str:
    return f"tcgen05.st.sync.aligned.{shape}.x{num}{'.unpack::16b' if pack else ''}.b32"


def reference_cells(shape: str, num: int, split: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(thread, register) -> (lane offset, column offset), by the formulas of the module's table
    written out as loops (the layout test pins those formulas to CUTLASS)."""
    cells = {}
    registers = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}[shape] * num
    for t in range(32):
        g, q = t // 4, t % 4
        for r in range(registers):
            if shape == "32x32b":
                cells[t, r] = (t, r)
            elif shape == "16x64b":
                cells[t, r] = (g + 8 * (t % 2), 2 * r + (t // 2) % 2)
            elif shape == "16x128b":
                cells[t, r] = (g + 8 * (r % 2), 4 * (r // 2) + q)
            elif shape == "16x256b":
                cells[t, r] = (g + 8 * ((r % 4) // 2), 8 * (r // 4) + 2 * q + r % 2)
            else:
                cells[t, r] = (t % 16, r + split * (t // 16))
    return cells


@st.composite
def movements(draw):
    shape = draw(st.sampled_from(layout.SHAPES))
    num = draw(st.sampled_from([n for n in layout.NUMS if n <= min(LARGEST[shape], 16)]))
    pack = draw(st.booleans())
    registers = layout.register_count(shape, num)
    width = max(c for _, c in reference_cells(shape, num, 0).values()) + 1
    split = draw(st.integers((2 if pack else 1) * width, 4 * width)) if shape == "16x32bx2" else 0
    span = (2 if pack else 1) * width + split
    warp = draw(st.integers(0, 3))
    lanes = 32 if shape == "32x32b" else 16
    lane = 32 * warp + draw(st.integers(0, 32 - lanes))
    column = draw(st.integers(0, COLUMNS - span))
    values = draw(st.lists(st.integers(0, 2**32 - 1), min_size=32 * registers, max_size=32 * registers))
    return shape, num, pack, split, warp, tensor_memory_address(lane, column), [tuple(values[r::registers]) for r in range(registers)]


def operands(shape: str, taddr: int, split: int, registers=()):
    return [taddr, *([split] if shape == "16x32bx2" else []), *registers]


@settings(max_examples=60, deadline=None)
@given(movements())
def test_st_then_ld_gives_the_registers_back_and_writes_exactly_the_shape_cells(case):
    shape, num, pack, split, warp, taddr, registers = case
    before = allocated()
    after = execute(st_text(shape, num, pack), operands(shape, taddr, split, registers), state=before, warp=warp).state
    loaded = execute(ld_text(shape, num, pack), operands(shape, taddr, split), state=after, warp=warp).results
    assert [r.lanes for r in loaded] == registers
    # The cells written are the reference map's (two per register with .unpack::16b).
    lane0, column0 = taddr >> 16, taddr & 0xFFFF
    expected = {}
    for (t, r), (lo, co) in reference_cells(shape, num, split).items():
        value = registers[r][t]
        if pack:
            c = co - split * (t // 16) if shape == "16x32bx2" else co
            base = column0 + 2 * c + (split * (t // 16) if shape == "16x32bx2" else 0)
            expected[lane0 + lo, base] = value & 0xFFFF
            expected[lane0 + lo, base + 1] = value >> 16
        else:
            expected[lane0 + lo, column0 + co] = value
    changed = after.tensor_memory.changed_cells(before.tensor_memory)
    assert {(lane, column): v for lane, column, v in changed} == expected
    flags = after.tensor_memory.defined()
    assert all(flags[cell] == (1 if pack else 3) for cell in expected)


@settings(max_examples=40, deadline=None)
@given(movements(), st.sampled_from(["min", "max"]), st.sampled_from(["u32", "s32", "f32"]), st.booleans(), st.booleans())
def test_ld_red_is_the_per_thread_reduction(case, op, type_, absolute, nan):
    shape, num, _, split, warp, taddr, registers = case
    if shape not in ("32x32b", "16x32bx2") or num == 1:
        return
    state = execute(st_text(shape, num, False), operands(shape, taddr, split, registers), state=allocated(), warp=warp).state
    floating = type_ == "f32"
    text = f"tcgen05.ld.red.sync.aligned.{shape}.x{num}.{op}{'.abs' if floating and absolute else ''}{'.NaN' if floating and nan else ''}.{type_}"
    results = execute(text, operands(shape, taddr, split), state=state, warp=warp).results
    assert [r.lanes for r in results[:-1]] == registers
    for t in range(32):
        mine = [registers[r][t] for r in range(len(registers))]
        got = results[-1].lanes[t]
        if type_ == "u32":
            assert got == (min(mine) if op == "min" else max(mine))
        elif type_ == "s32":
            signed = [struct.unpack("<i", struct.pack("<I", v))[0] for v in mine]
            assert got == (min(signed) if op == "min" else max(signed)) & 0xFFFFFFFF
        else:
            assert got in reference_f32_reduction(mine, op, floating and absolute, floating and nan)


def reference_f32_reduction(bits: list[int], op: str, absolute: bool, nan: bool):
    """An independent reference: numpy float32 values, NaN skipped (or canonical with .NaN),
    -0.0 below +0.0; returns the set of allowed bit patterns."""
    if absolute:
        bits = [b & 0x7FFFFFFF for b in bits]
    values = np.array(bits, dtype=np.uint32).view(np.float32)
    is_nan = np.isnan(values)
    if nan and is_nan.any():
        return {0x7FFFFFFF}
    if is_nan.all():
        return AnyNaNBits()
    key = [(float(v), -1 if (b >> 31) else 0) for v, b in zip(values, bits)]
    candidates = [(k, b) for k, b, n in zip(key, bits, is_nan) if not n]
    best = min(candidates) if op == "min" else max(candidates)
    return {best[1]}


class AnyNaNBits:
    def __contains__(self, bits) -> bool:
        return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0


def test_a_cell_never_written_loads_as_undefined_and_dealloc_makes_cells_undefined():
    state = allocated(64)
    stored = execute(st_text("32x32b", 2, False), [0, 5, 6], state=state).state
    loaded = execute(ld_text("32x32b", 4, False), [0], state=stored).results
    assert loaded[0].lanes == (5,) * 32 and loaded[2].lanes == (Undefined(32),) * 32
    freed = execute(DEALLOC.format(g=1), [0, 64], state=stored).state
    again = execute(ALLOC.format(g=1), [4, 64], state=freed).state
    assert execute(ld_text("32x32b", 2, False), [0], state=again).results[0].lanes == (Undefined(32),) * 32


def test_a_16_bit_half_written_by_unpack_leaves_the_other_half_undefined():
    state = execute(st_text("32x32b", 1, True), [0, 0xABCD1234], state=allocated()).state
    assert execute(ld_text("32x32b", 1, True), [0], state=state).results[0].lanes == (0xABCD1234,) * 32
    assert execute(ld_text("32x32b", 2, False), [0], state=state).results[0].lanes == (Undefined(32),) * 32


# ---------------------------------------------------------------------------------------------
# Allocation: a model of live columns, and the manual's rules
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), min_size=1, max_size=12))
def test_alloc_and_dealloc_against_a_model_of_live_columns(steps):
    state, live, last = State(bytes(64)), {}, None  # live: first column -> columns
    for is_alloc, k in steps:
        if is_alloc:
            ncols = 32 << k
            free = [c for c in range(0, 512 - ncols + 1, 32) if all(not (a <= x < a + n) for a, n in live.items() for x in range(c, c + ncols))]
            if (last is not None and ncols > last) or not free:
                with pytest.raises(OperandError):
                    execute(ALLOC.format(g=1), [8, ncols], state=state)
                continue
            outcome = execute(ALLOC.format(g=1), [8, ncols], state=state)
            column = int.from_bytes(outcome.state.shared[8:12], "little")
            assert column == free[0] and column >> 16 == 0  # lane 0; the lowest choice
            # every choice the manual allows is accepted by check, and nothing else (every column
            # for a first allocation; the lowest and highest free and the lowest taken after)
            taken = sorted(set(range(0, 512, 32)) - set(free))
            for c in range(0, 512, 32) if not live else sorted({free[0], free[-1], *taken[:1]}):
                alternative = attrs.evolve(
                    outcome.state,
                    shared=outcome.state.shared[:8] + c.to_bytes(4, "little") + outcome.state.shared[12:],
                    tensor_memory=attrs.evolve(outcome.state.tensor_memory, allocations=(*state.tensor_memory.allocations, Allocation(c, ncols)))
                    if c in free
                    else outcome.state.tensor_memory,
                )
                assert check(ALLOC.format(g=1), [8, ncols], [], state=state, observed_state=alternative) == (c in free)
            state, live[column], last = outcome.state, ncols, ncols
        elif live:
            first = sorted(live)[k % len(live)]
            state = execute(DEALLOC.format(g=1), [first, live.pop(first)], state=state).state
        assert {(a.column, a.columns) for a in state.tensor_memory.allocations} == set(live.items())


@pytest.mark.parametrize(
    "steps, message",
    [
        ([(ALLOC, [0, 48])], "power of 2"),
        ([(ALLOC, [0, 1024])], "power of 2"),
        ([(ALLOC, [0, 64]), (ALLOC, [4, 128])], "should not increase"),
        ([(RELINQUISH, []), (ALLOC, [0, 32])], "illegal for a CTA to perform tcgen05.alloc"),
        ([(ALLOC, [0, 512]), (ALLOC, [4, 32])], "not available"),
        ([(ALLOC, [62, 32])], "not within the CTA's shared memory"),
        ([(ALLOC, [0, 32]), (DEALLOC, [32, 32])], "does not point to a previous Tensor Memory allocation"),
        ([(ALLOC, [0, 32]), (DEALLOC, [0, 64])], "does not point to a previous Tensor Memory allocation"),
        ([(ALLOC, [0, (32,) * 31 + (64,)])], "differs between the threads"),
    ],
)
def test_allocation_rules_are_refused_with_the_manuals_reason(steps, message):
    state = State(bytes(64))
    with pytest.raises(OperandError, match=message):
        for text, sources in steps:
            state = execute(text.format(g=1), sources, state=state).state


def test_one_cta_group_per_kernel_and_the_pair():
    state = allocated(32)
    with pytest.raises(OperandError, match="must specify the same value"):
        execute(RELINQUISH.format(g=2), [], state=attrs.evolve(state, peer=State(bytes(64))))
    with pytest.raises(OperandError, match="peer CTA"):
        execute(ALLOC.format(g=2), [0, 32], state=State(bytes(64)))
    pair = State(bytes(64), peer=State(bytes(64)))
    both = execute(ALLOC.format(g=2), [0, 64], state=pair).state
    assert both.peer is not None and both.tensor_memory.allocations == both.peer.tensor_memory.allocations == (Allocation(0, 64),)
    assert both.cta_group == both.peer.cta_group == 2
    freed = execute(DEALLOC.format(g=2), [0, 64], state=both).state
    assert freed.tensor_memory.allocations == freed.peer.tensor_memory.allocations == ()  # type: ignore[union-attr]


def test_alloc_needs_the_whole_warp():
    with pytest.raises(OperandError, match="undefined"):
        execute(ALLOC.format(g=1), [0, 32], state=State(bytes(64)), active=0xFFFF)


# ---------------------------------------------------------------------------------------------
# Access restrictions and addresses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("warp", range(4))
def test_warp_w_reaches_lanes_32w_to_32w_plus_31_only(warp):
    state = allocated()
    for lane in (0, 16, 32, 48, 64, 80, 96, 112):
        taddr = tensor_memory_address(lane, 0)
        ok = 32 * warp <= lane and lane + 15 <= 32 * warp + 31
        if ok:
            execute(ld_text("16x64b", 1, False), [taddr], state=state, warp=warp)
        else:
            with pytest.raises(OperandError, match=f"warp {warp} of its warpgroup can access lanes {32 * warp}-{32 * warp + 31} only"):
                execute(ld_text("16x64b", 1, False), [taddr], state=state, warp=warp)
    with pytest.raises(OperandError, match="can access lanes"):
        execute(ld_text("32x32b", 1, False), [tensor_memory_address(16, 0)], state=state)


def test_an_address_outside_the_allocation_is_refused():
    state = allocated(64)
    with pytest.raises(OperandError, match="column 64, which is not allocated"):
        execute(st_text("32x32b", 2, False), [63, 1, 2], state=state)
    with pytest.raises(OperandError, match="not allocated"):
        execute(ld_text("32x32b", 1, False), [0], state=State(bytes(64)))


def test_the_state_before_is_not_changed():
    before = allocated()
    copy = State(before.shared, before.tensor_memory)
    execute(st_text("16x256b", 4, False), [0, *range(16)], state=before)
    assert before == attrs.evolve(copy, cta_group=1)


# ---------------------------------------------------------------------------------------------
# tcgen05.shift, wait, fence
# ---------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.integers(0, 512 - 8), st.lists(st.integers(0, 2**32 - 1), min_size=32 * 8, max_size=32 * 8))
def test_shift_down_gives_lanes_l_to_l_plus_30_the_next_lane_against_a_loop(chunk, column, values):
    lanes = [32 * chunk + i for i in range(32)]
    state = allocated()
    tm = state.tensor_memory.with_cells([lane for lane in lanes for _ in range(8)], [column + c for _ in lanes for c in range(8)], values)
    state = state.with_tensor_memory(tm)
    after = execute("tcgen05.shift.cta_group::1.down", [tensor_memory_address(lanes[0], column)], state=state).state
    expect = {(lane, column + c): values[8 * i + c] for i, lane in enumerate(lanes) for c in range(8)}
    for i in range(31):  # lane l + 31, the sub-partition's last, keeps its value
        for c in range(8):
            expect[lanes[i], column + c] = expect[lanes[i + 1], column + c]
    words = after.tensor_memory.words()
    assert all(words[cell] == v for cell, v in expect.items())
    assert after.tensor_memory.changed_cells(state.tensor_memory) == [
        (lane, col, v) for (lane, col), v in sorted(expect.items()) if words[lane, col] != tm.words()[lane, col]
    ]


def test_shift_needs_a_lane_aligned_to_32():
    with pytest.raises(OperandError, match="aligned to 32"):
        execute("tcgen05.shift.cta_group::1.down", [tensor_memory_address(16, 0)], state=allocated())


@pytest.mark.parametrize(
    "text", ["tcgen05.wait::ld.sync.aligned", "tcgen05.wait::st.sync.aligned", "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync"]
)
def test_wait_and_fence_leave_the_state(text):
    state = allocated()
    assert execute(text, [], state=state).state == state


def test_tensor_memory_refuses_malformed_images():
    with pytest.raises(OperandError, match="128 lanes by 512 columns"):
        TensorMemory(cells=np.zeros((4, 4), dtype=np.uint32))
    with pytest.raises(OperandError, match="overlap"):
        TensorMemory(allocations=(Allocation(0, 64), Allocation(32, 32)))


# ---------------------------------------------------------------------------------------------
# tcgen05.cp
# ---------------------------------------------------------------------------------------------

#: The lanes (from taddr's) that receive source row r, from the manual's words for each form
#: (§9.7.16.9.2: "warps 0 and 2 form a pair; warps 1 and 3 form a pair", "each warp in the warp
#: pair receive half of the data", ".warpx4 ... multicasted into all 4 warps").
CP_FORMS = {
    "128x256b": lambda r: [r],
    "128x128b": lambda r: [r],
    "64x128b.warpx2::02_13": lambda r: [r % 32 + 32 * w for w in ((0, 2) if r < 32 else (1, 3))],
    "64x128b.warpx2::01_23": lambda r: [r % 32 + 32 * w for w in ((0, 1) if r < 32 else (2, 3))],
    "32x128b.warpx4": lambda r: [r + 32 * w for w in range(4)],
}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(CP_FORMS)), st.integers(0, 15), st.integers(1, 8), st.integers(2, 16), st.integers(0, 64 - 8), st.booleans())
def test_cp_copies_the_k_major_rows_into_the_lanes_the_manual_names(form, start, lbo, sbo, column, pair):
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor

    shape = form.split(".")[0]
    rows, bits = (int(x) for x in shape.rstrip("b").split("x"))
    image = np.random.default_rng(start).integers(0, 256, size=1 << 17, dtype=np.uint8)
    descriptor = SmemDescriptor(start_address=16 * start, leading_byte_offset=16 * 16 * lbo, stride_byte_offset=16 * 16 * sbo, swizzle="none")
    group = 2 if pair else 1
    state = State(image, peer=State(bytes(64)) if pair else None)
    state = execute(ALLOC.format(g=group), [0, 64], state=state).state
    after = execute(f"tcgen05.cp.cta_group::{group}.{form}", [column, descriptor.encode()], state=state).state
    image = state.shared_image()  # as tcgen05.alloc left it
    expect = {}
    for r in range(rows):
        for u in range(bits // 128):
            address = 16 * start + 16 * (r % 8) + (r // 8) * 256 * sbo + u * 256 * lbo  # the K-major, no-swizzle core matrices
            words = struct.unpack("<4I", image[address : address + 16].tobytes())
            for lane in CP_FORMS[form](r):
                for w in range(4):
                    expect[lane, column + 4 * u + w] = words[w]
    for cta, before in ((after, state), (after.peer, state.peer)) if pair else ((after, state),):
        assert {(lane, col): v for lane, col, v in cta.tensor_memory.changed_cells(before.tensor_memory)} == {
            cell: v for cell, v in expect.items() if before.tensor_memory.words()[cell] != v or not before.tensor_memory.defined()[cell]
        }
        assert all(cta.tensor_memory.words()[cell] == v for cell, v in expect.items())


def test_cp_decompresses_4_and_6_bit_elements_into_byte_containers():
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor

    elements4 = list(range(16))
    elements6 = [(7 * k + 3) % 64 for k in range(16)]
    unit4 = sum(e << (4 * k) for k, e in enumerate(elements4)).to_bytes(8, "little") + bytes(8)
    unit6 = sum(e << (6 * k) for k, e in enumerate(elements6)).to_bytes(12, "little") + bytes(4)
    for fmt, unit, containers in (("b4x16_p64", unit4, [e << 2 for e in elements4]), ("b6x16_p32", unit6, [e << 1 for e in elements6])):
        image = np.frombuffer(unit * 64, dtype=np.uint8)
        state = execute(ALLOC.format(g=1), [len(image) - 4, 32], state=State(image)).state  # the address goes to the last unit's padding
        descriptor = SmemDescriptor(start_address=0, leading_byte_offset=16, stride_byte_offset=128, swizzle="none").encode()
        after = execute(f"tcgen05.cp.cta_group::1.32x128b.warpx4.b8x16.{fmt}", [0, descriptor], state=state).state
        assert list(after.tensor_memory.words()[0, :4].astype("<u4").tobytes()) == containers


def test_cp_refusals():
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor

    descriptor = SmemDescriptor(start_address=0, leading_byte_offset=128, stride_byte_offset=256, swizzle="none").encode()
    with pytest.raises(OperandError, match="outside the CTA's 256 bytes"):
        execute("tcgen05.cp.cta_group::1.128x256b", [0, descriptor], state=allocated(32, shared=256))
    with pytest.raises(OperandError, match="column 32, which is not allocated"):
        execute("tcgen05.cp.cta_group::1.128x128b", [30, descriptor], state=allocated(32, shared=1 << 16))
    with pytest.raises(OperandError, match="not determined"):
        execute("tcgen05.cp.cta_group::1.4x256b", [0, descriptor], state=allocated(32, shared=1 << 16))
    with pytest.raises(OperandError, match="Fixed constant value"):
        execute("tcgen05.cp.cta_group::1.128x128b", [0, 0x10], state=allocated(32, shared=1 << 16))


def test_overlapping_halves_that_store_different_values_leave_the_cell_undefined():
    text = "tcgen05.st.sync.aligned.16x32bx2.x2.b32"
    registers = [tuple(range(32)), tuple(range(100, 132))]
    state = execute(text, [0, 1, *registers], state=allocated()).state  # the second half starts one column in
    loaded = execute("tcgen05.ld.sync.aligned.16x32bx2.x2.b32", [0, 1], state=state).results
    assert loaded[0].lanes[:16] == tuple(range(16))  # column 0: the first half only
    assert loaded[1].lanes[:16] == (Undefined(32),) * 16  # column 1: 100+t from the first half, 16+t from the second
    assert loaded[1].lanes[16:] == tuple(range(116, 132))


# ---------------------------------------------------------------------------------------------
# Every catalogued form evaluates on a state
# ---------------------------------------------------------------------------------------------


def _every_form():
    from ptxas_batch import legal_forms

    from ptxspec.spec import tcgen05 as tc

    return [f for family in tc.FAMILIES if not family.key.startswith("tcgen05.mma") for f in legal_forms(family)]  # tcgen05.mma: test_tcgen05_mma.py


def test_every_tcgen05_data_movement_form_evaluates_on_a_state():
    """Each of the 374 catalogued forms runs through execute on a state with its operands (360 do), except
    the two the module names as not given a meaning: tcgen05.commit (ordering only, the memory
    model's) and tcgen05.cp.4x256b (its source rows are not determined)."""
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor
    from ptxspec.semantics.instructions import PtxSpecError, operands_of
    from ptxspec.spec import tcgen05 as tc

    descriptor = SmemDescriptor(start_address=0, leading_byte_offset=128, stride_byte_offset=256, swizzle="none").encode()
    ran, refused = 0, []
    for form in _every_form():
        group = int(form["cta_group"].split("::")[1]) if form.get("cta_group") else 1
        pair = State(bytes(1 << 13), peer=State(bytes(1 << 13))) if group == 2 else State(bytes(1 << 13))
        state = execute(ALLOC.format(g=group), [1 << 12, 512], state=pair).state
        key, sources = form.family.key, []
        if key == "tcgen05.alloc":
            state, sources = State(bytes(64), peer=State(bytes(64)) if group == 2 else None), [0, 32]
        elif key == "tcgen05.dealloc":
            sources = [0, 512]
        elif key.startswith(("tcgen05.ld", "tcgen05.st")):
            split = [2 * tc.registers(form) if form.get("pack") or form.get("unpack") else tc.registers(form)] if "16x32bx2" in form.text else []
            registers = [1] * (tc.registers(form) if key.startswith("tcgen05.st") else 0)
            if key.startswith("tcgen05.ld"):  # something to load
                state = execute(st_text(form["shape"], tc.repeat(form), False), [0, *split, *([7] * tc.registers(form))], state=state).state
            sources = [0, *split, *registers]
        elif key == "tcgen05.cp":
            sources = [0, descriptor]
        elif key == "tcgen05.shift":
            sources = [0]
        if operands_of(form) is None:
            refused.append(form.text)
            continue
        try:
            outcome = execute(form, sources, state=state)
        except PtxSpecError as error:
            refused.append(f"{form.text}: {error}")
            continue
        assert isinstance(outcome.state, State)
        ran += 1
    assert all("tcgen05.commit" in r or ".4x256b" in r for r in refused), refused
    assert ran == len(_every_form()) - len(refused) and len(refused) == 8 + 6  # commit: 8 forms; cp.4x256b: 6


def test_a_kernel_may_not_exit_with_tensor_memory_allocated():
    from ptxspec.semantics.tcgen05 import check_kernel_exit

    state = allocated(64)
    with pytest.raises(OperandError, match="still allocated"):
        check_kernel_exit(state)
    check_kernel_exit(execute(DEALLOC.format(g=1), [0, 64], state=state).state)
