"""Worked examples stated by hand, for the instruction reference.

Each :class:`Example` names an instruction, its source operands and what the result must be, with
the expectation worked out *here*, independently of ptxspec: exactly representable values through
Python's :mod:`struct`, NaN and rounding cases from the IEEE 754 encodings and the sentence of
the manual quoted in ``why``. The reference generator evaluates each one with ptxspec at build
time and fails the build if they disagree; the opcode's page shows it.

The generic examples (every legal form on a few exactly representable inputs) come from
:mod:`ptxspec_oracle`; the ones here cover what an oracle of exact values cannot: rounding, overflow,
subnormals, NaN.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ptxspec_oracle import f16, f32, f64


@attrs.frozen
class Bits:
    """The result is exactly this bit pattern."""

    bits: int


@attrs.frozen
class Allows:
    """The result is an allowed set (not one bit pattern) that contains each of these."""

    members: tuple[int, ...]


@attrs.frozen
class Example:
    instruction: str
    sources: tuple[int, ...]
    expect: tuple[Bits | Allows, ...]
    why: str
    profile: str = "spec"


F32_MAX = 0x7F7FFFFF
F32_INF = 0x7F800000
F32_MIN_SUBNORMAL = 0x00000001
F32_QNAN = 0x7FC00000
F64_QNAN = 0x7FF8000000000000

EXAMPLES: list[Example] = [
    # §9.7.3.3 add
    Example("add.rn.f32", (f32(1.0), f32(2.0)), (Bits(f32(3.0)),), "1.0 + 2.0 = 3.0, exactly representable."),
    Example(
        "add.rn.f32",
        (f32(1.0), f32(2.0**-24)),
        (Bits(f32(1.0)),),
        "1 + 2^-24 lies halfway between 1.0 and its successor 1 + 2^-23; .rn picks the even significand, 1.0.",
    ),
    Example(
        "add.rp.f32",
        (f32(1.0), f32(2.0**-24)),
        (Bits(f32(1.0) + 1),),
        "The same sum rounded up (.rp) is the successor of 1.0, 0x3f800001.",
    ),
    Example(
        "add.rn.f32",
        (F32_MAX, F32_MAX),
        (Bits(F32_INF),),
        "2 * FLT_MAX overflows; round-to-nearest gives +infinity.",
    ),
    Example(
        "add.rz.f32",
        (F32_MAX, F32_MAX),
        (Bits(F32_MAX),),
        "Rounding towards zero never overflows to infinity: the result is the largest finite value.",
    ),
    Example(
        "add.ftz.f32",
        (F32_MIN_SUBNORMAL, F32_MIN_SUBNORMAL),
        (Bits(0),),
        ".ftz flushes subnormal inputs to sign-preserving zero (§9.7.3.3): 0 + 0 = +0.",
    ),
    Example(
        "add.f32",
        (F32_MIN_SUBNORMAL, F32_MIN_SUBNORMAL),
        (Bits(2),),
        "Without .ftz subnormals are kept: 2^-149 + 2^-149 = 2^-148, exactly.",
    ),
    Example(
        "add.rn.sat.f32",
        (f32(-1.0), f32(-2.0)),
        (Bits(f32(0.0)),),
        ".sat clamps the result to [0.0, 1.0]: -3.0 becomes +0.0.",
    ),
    Example(
        "add.rn.sat.f32",
        (F32_QNAN, f32(1.0)),
        (Bits(f32(0.0)),),
        'With .sat, "NaN results are flushed to +0.0f" (§9.7.3.3).',
    ),
    Example(
        "add.rn.f32",
        (F32_QNAN, f32(1.0)),
        (Allows((F32_QNAN, 0x7FFFFFFF, 0xFFC00000)),),
        '"Single-precision instructions return an unspecified NaN" (§9.7.3): any NaN is allowed.',
    ),
    Example(
        "add.rn.f32",
        (F32_INF, F32_INF | 0x80000000),
        (Allows((F32_QNAN, 0x7FFFFFFF)),),
        "+inf + -inf is an invalid operation: an unspecified NaN.",
    ),
    Example(
        "add.rn.f64",
        (f64(1.5), f64(2.25)),
        (Bits(f64(3.75)),),
        "1.5 + 2.25 = 3.75 in double precision.",
    ),
    Example(
        "add.rn.f64",
        (0x7FF0000000000001, f64(1.0)),
        (Bits(0x7FF8000000000001),),
        "f64 supports NaN payloads (§9.7.3): a signalling NaN operand comes back quiet with its payload.",
    ),
    Example(
        "add.rn.f32x2",
        ((f32(1.0) << 32) | f32(10.0), (f32(2.0) << 32) | f32(20.0)),
        (Bits((f32(3.0) << 32) | f32(30.0)),),
        ".f32x2 adds the two .f32 halves independently.",
    ),
    # §9.7.3.1 testp, §9.7.3.2 copysign
    Example("testp.normal.f32", (f32(-0.0),), (Bits(1),), '"As a special case, positive and negative zero are considered normal numbers" (§9.7.3.1).'),
    Example("testp.subnormal.f32", (F32_MIN_SUBNORMAL,), (Bits(1),), "2^-149 is subnormal."),
    Example("testp.notanumber.f64", (F64_QNAN,), (Bits(1),), "A quiet NaN is not a number."),
    Example("testp.finite.f32", (F32_INF,), (Bits(0),), "+inf is not finite."),
    Example("copysign.f32", (f32(-1.0), f32(2.0)), (Bits(f32(-2.0)),), '"Copies the sign bit of a into the value of b" (§9.7.3.2): -2.0.'),
    # §9.7.3.4-8 sub, mul, fma, div
    Example("sub.rn.f32", (f32(1.0), f32(1.0)), (Bits(f32(0.0)),), "An exact zero difference is +0 in every rounding mode but .rm (IEEE 754 §6.3)."),
    Example("sub.rm.f32", (f32(1.0), f32(1.0)), (Bits(f32(-0.0)),), "... and -0 when rounding towards -infinity."),
    Example("mul.rn.f32", (f32(2.0**-100), f32(2.0**-100)), (Bits(0),), "2^-200 is below half the smallest subnormal: it rounds to +0."),
    Example(
        "mul.rn.f32",
        (f32(2.0**-75), f32(2.0**-75)),
        (Bits(0),),
        "2^-150 is exactly half the smallest subnormal 2^-149: a tie, which goes to the even neighbour, +0.",
    ),
    Example(
        "fma.rn.f32",
        (f32(1.0) + 1, f32(1.0) + 1, f32(-(1.0 + 2.0**-22))),
        (Bits(f32(2.0**-46)),),
        "(1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly: fma rounds once, where a mul then an add would give 0.",
    ),
    Example("div.rn.f32", (f32(1.0), f32(3.0)), (Bits(0x3EAAAAAB),), "1/3 rounded to nearest (checked with MPFR at 24 bits)."),
    Example("div.rz.f32", (f32(1.0), f32(3.0)), (Bits(0x3EAAAAAA),), "1/3 rounded towards zero."),
    Example("sqrt.rn.f32", (f32(2.0),), (Bits(0x3FB504F3),), "sqrt(2) = 1.41421356...; the nearest f32 is 1.41421353816986083984375."),
    Example("sqrt.rp.f32", (f32(2.0),), (Bits(0x3FB504F4),), "sqrt(2) rounded up."),
    Example("rcp.approx.f32", (f32(3.0),), (Allows((0x3EAAAAAB,)),), "The correctly rounded 1/3 lies within the .approx error bound."),
    # §9.7.3.11-12 min, max
    Example("min.f32", (f32(0.0), f32(-0.0)), (Bits(f32(-0.0)),), '"If both inputs are 0.0, +0.0 > -0.0" (§9.7.3.11).'),
    Example("min.f32", (F32_QNAN, f32(2.0)), (Bits(f32(2.0)),), "One NaN input: the other operand is the result (§9.7.3.11 semantics)."),
    Example("min.NaN.f32", (F32_QNAN, f32(2.0)), (Bits(0x7FFFFFFF),), 'With .NaN "the result is the canonical NaN" (§9.7.3.11).'),
    Example("min.xorsign.abs.f32", (f32(-3.0), f32(2.0)), (Bits(f32(-2.0)),), "Magnitude min(|-3|, |2|) = 2, sign 1 xor 0 (§9.7.3.11)."),
    Example("max.xorsign.abs.f32", (f32(-3.0), f32(2.0)), (Bits(f32(-3.0)),), "Magnitude max(3, 2) = 3, sign 1 xor 0 (§9.7.3.12)."),
    # §9.7.9.21 cvt
    Example("cvt.rzi.s32.f32", (f32(-2.5),), (Bits(0xFFFFFFFE),), ".rzi rounds towards zero: -2."),
    Example("cvt.rni.s32.f32", (f32(2.5),), (Bits(2),), '.rni: "if the source is equidistant between two integers, choose the even one": 2.'),
    Example("cvt.rni.s32.f32", (f32(3.5),), (Bits(4),), "... and 3.5 goes to 4."),
    Example("cvt.rzi.s32.f32", (F32_QNAN,), (Bits(0),), '"In float-to-integer conversions, NaN inputs are converted to 0" (§9.7.9.21).'),
    Example(
        "cvt.rzi.s32.f32", (f32(1e10),), (Bits(0x7FFFFFFF),), '"For float-to-integer conversions, the result is clamped to the destination range by default".'
    ),
    Example("cvt.rzi.u32.f32", (f32(-1.0),), (Bits(0),), "... so -1.0 becomes 0 in an unsigned destination."),
    Example("cvt.rn.f16.f32", (f32(1.0 + 2.0**-11),), (Bits(f16(1.0)),), "1 + 2^-11 is halfway between two f16 values; the even one is 1.0."),
    Example("cvt.rn.f16.f32", (f32(65520.0),), (Bits(0x7C00),), "65520 is halfway between the largest f16 (65504) and 2^16: it rounds to +inf."),
    Example("cvt.rn.satfinite.f16.f32", (f32(65520.0),), (Bits(0x7BFF),), ".satfinite clamps to the largest finite f16, 65504."),
    Example("cvt.rn.relu.f16.f32", (f32(-1.0),), (Bits(0),), ".relu clamps negative results to +0."),
    Example("cvt.f32.f16", (0x3C01,), (Bits(f32(1.0 + 2.0**-10)),), "Widening f16 to f32 is exact."),
    Example(
        "cvt.rna.tf32.f32",
        (f32(1.0 + 2.0**-11),),
        (Bits(0x3F802000),),
        ".rna breaks the tie away from zero: 1 + 2^-10, in an f32 layout whose low 13 bits are zero.",
    ),
    Example(
        "cvt.rn.satfinite.e4m3x2.f32",
        (f32(1000.0), f32(1.0)),
        (Bits(0x7E38),),
        "a (1000, saturated to e4m3's largest finite 448 = 0x7e) goes to d[15:8], b (1.0 = 0x38) to d[7:0] (§9.7.9.21).",
    ),
    Example(
        "cvt.rn.satfinite.e2m1x2.f32",
        (f32(6.0), f32(-0.5)),
        (Bits(0x79),),
        "e2m1: 6.0 = 0b0111 in d[7:4], -0.5 (subnormal) = 0b1001 in d[3:0].",
    ),
    # Profiles: sm_90 pins what the manual leaves open (recordings in conformance/data/sm_90/).
    Example(
        "add.rn.f32",
        (F32_QNAN, f32(1.0)),
        (Bits(0x7FFFFFFF),),
        "An H100/H200 returns the canonical NaN 0x7fffffff for f32 arithmetic (measured; see Profiles).",
        profile="sm_90",
    ),
]


# ---------------------------------------------------------------------------------------------
# Worked examples on a state (the tcgen05 instructions)
# ---------------------------------------------------------------------------------------------
#
# An instruction of memory is a function of a State (semantics/state.py). A StateExample runs a
# few instructions one after another through ptxspec.semantics.instructions.execute, from a start
# state; the reference shows what each step computed (registers, changed Tensor Memory cells and
# shared memory bytes, allocations) -- values computed while the page is built, never typed in --
# and ``expect`` states what the manual says must then hold, worked out here from the manual's
# words without ptxspec's semantics: a list of (holds, statement); the build fails on any that
# does not hold, and the page lists the statements as checked.


@attrs.frozen
class Step:
    """One instruction of a :class:`StateExample`: its text, its source operands in the order of
    the form's inputs (an ``int``: the same in every thread; or a tuple of the 32 threads'
    values), ``warp`` (tcgen05.ld/st: the warp's rank in its warpgroup), and ``refused``: the
    manual forbids it, and ptxspec must refuse it (the page shows the refusal)."""

    instruction: str
    sources: tuple = ()
    warp: int | None = None
    refused: bool = False


@attrs.frozen
class Run:
    """What a :class:`StateExample`'s steps did, as ``expect`` reads it: ``states[0]`` the start,
    ``states[i + 1]`` the state after step ``i``; ``registers[i]`` one tuple per destination of
    step ``i``, each the 32 threads' values (None: undefined)."""

    states: list
    registers: list


@attrs.frozen
class StateExample:
    family: str  # the catalogue family on whose page it is shown
    title: str
    start: Callable[[], object]  # -> State
    steps: tuple[Step, ...]
    expect: Callable[[Run], list[tuple[bool, str]]]
    why: str


def _state(shared: bytes = bytes(64)):
    from ptxspec.semantics.state import State

    return State(shared=shared)


def _word(state, address: int) -> int:
    """The 32-bit little-endian word of shared memory at ``address``."""
    return int.from_bytes(state.shared[address : address + 4], "little")


def _cell(state, lane: int, column: int) -> int:
    return int(state.tensor_memory.words()[lane, column])


def _allocations(state) -> list[tuple[int, int]]:
    return [(a.column, a.columns) for a in state.tensor_memory.allocations]


def _checks(*checks: tuple[bool, str]) -> list[tuple[bool, str]]:
    """What ``expect`` gives: each statement it checked, and whether it holds."""
    return list(checks)


ALLOC = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"
DEALLOC = "tcgen05.dealloc.cta_group::1.sync.aligned.b32"
#: Register i of thread t in the store examples: a value that names both.
STORED = tuple(tuple(0xC0000000 | (t << 8) | i for t in range(32)) for i in range(8))


def _tmem_address(lane: int, column: int) -> int:
    """§9.7.16.1.1: "the lane index in bits 31-16 and the column index in bits 15-0"."""
    return lane * 0x10000 + column


def _expect_alloc(run: Run) -> list[tuple[bool, str]]:
    first, second = run.states[1], run.states[2]
    return _checks(
        (_word(first, 0x10) == _tmem_address(0, 0), "the first allocation's address (lane 0, column 0) is written at dst = 0x10"),
        (_allocations(first) == [(0, 64)], "the first allocation takes 64 columns from column 0"),
        (_word(second, 0x20) == _tmem_address(0, 64), "the second takes the next free 32-column unit, column 64"),
        (_allocations(second) == [(0, 64), (64, 32)], "two live allocations, columns 0-63 and 64-95"),
        (second.shared[:0x10] == b"\xff" * 0x10, "no other byte of shared memory is written"),
    )


def _expect_dealloc(run: Run) -> list[tuple[bool, str]]:
    return _checks(
        (_allocations(run.states[2]) == [], "after tcgen05.dealloc no allocation is live"),
        (_word(run.states[3], 0x10) == _tmem_address(0, 0), "the freed columns can be allocated again: column 0"),
    )


def _expect_relinquish(run: Run) -> list[tuple[bool, str]]:
    return _checks((run.states[1].tensor_memory.relinquished, "the CTA has relinquished its permit to allocate"))


def _stored_cells_hold_registers(state, registers: int) -> bool:
    """.32x32b: thread t's registers fill lane t, register i in column i (§9.7.16.2.3.1, the
    .32x32b figure: "32 lanes, 32 bits a lane" per .x1)."""
    return all(_cell(state, t, i) == STORED[i][t] for t in range(32) for i in range(registers))


def _expect_st(run: Run) -> list[tuple[bool, str]]:
    before, after = run.states[1], run.states[2]
    changed = after.tensor_memory.changed_cells(before.tensor_memory)
    return _checks(
        (_stored_cells_hold_registers(after, 2), "thread t's register i is in lane t, column i"),
        (len(changed) == 32 * 2, "exactly 32 lanes x 2 columns change"),
    )


def _expect_ld(run: Run) -> list[tuple[bool, str]]:
    loaded, wider = run.registers[2], run.registers[3]
    return _checks(
        (all(loaded[i] == STORED[i] for i in range(2)), "the load gives every thread the registers it stored"),
        (all(wider[i] == STORED[i] for i in range(2)), "the .x4 load gives the stored columns 0-1 ..."),
        (all(v is None for i in (2, 3) for v in wider[i]), "... and columns 2-3, never written, as undefined"),
    )


#: tcgen05.ld.red: two registers a thread whose minimum is sometimes the first, sometimes the second.
RED_VALUES = (tuple(3 * t for t in range(32)), tuple(60 - t for t in range(32)))


def _expect_ld_red(run: Run) -> list[tuple[bool, str]]:
    registers, redval = run.registers[2][:2], run.registers[2][2]
    return _checks(
        (registers == RED_VALUES, "the registers r receive the loaded values"),
        (redval == tuple(min(a, b) for a, b in zip(*RED_VALUES)), "redval is the minimum, as unsigned integers, of each thread's two values"),
    )


RED_F32 = (tuple(f32(-2.5 - t) for t in range(32)), tuple(f32(float(t)) for t in range(32)))


def _expect_ld_red_f32(run: Run) -> list[tuple[bool, str]]:
    redval = run.registers[2][2]
    want = tuple(f32(max(2.5 + t, float(t))) for t in range(32))
    return _checks((redval == want, "redval is the larger absolute value, |-2.5 - t| = 2.5 + t"))


def _expect_unchanged(run: Run) -> list[tuple[bool, str]]:
    return _checks((run.states[-1] == run.states[-2], "the state is unchanged"))


def _expect_shift(run: Run) -> list[tuple[bool, str]]:
    before, after = run.states[2], run.states[3]
    return _checks(
        (all(_cell(after, lane, c) == _cell(before, lane + 1, c) for lane in range(31) for c in range(8)), "lane l now holds lane l + 1's 8 cells, l = 0..30"),
        (all(_cell(after, 31, c) == _cell(before, 31, c) for c in range(8)), "lane 31, the last, keeps its cells"),
    )


CP_SHARED = bytes(range(256)) * 32


def _cp_descriptor() -> int:
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor

    return SmemDescriptor(start_address=0, leading_byte_offset=128, stride_byte_offset=256).encode()


def _expect_cp(run: Run) -> list[tuple[bool, str]]:
    before, after = run.states[1], run.states[2]
    changed = after.tensor_memory.changed_cells(before.tensor_memory)
    return _checks(
        (
            sorted({(lane, c) for lane, c, _ in changed}) == [(lane, c) for lane in range(128) for c in range(8)],
            ".128x256b fills 128 lanes x 8 columns (256 bits)",
        ),
        (
            all(_cell(after, 0, c) == _word(before, 4 * c) for c in range(4)),
            "lane 0, columns 0-3 hold the 16 bytes at the matrix start address, first byte lowest",
        ),
    )


#: One register a thread, two 16-bit halves that name the thread: 0xb0tt_a0tt.
PACKED = tuple(((0xB000 + t) << 16) | (0xA000 + t) for t in range(32))


def _expect_unpack(run: Run) -> list[tuple[bool, str]]:
    after = run.states[2]
    low_halves = all(_cell(after, t, 0) & 0xFFFF == PACKED[t] & 0xFFFF and _cell(after, t, 1) & 0xFFFF == PACKED[t] >> 16 for t in range(32))
    return _checks(
        (low_halves, "the register's low 16 bits go to column 0, its high 16 bits to column 1, each in the low half of its cell"),
        (run.registers[2][0] == PACKED, ".pack::16b loads the two halves back into one register"),
        (all(v is None for r in run.registers[3] for v in r), "a 32-bit load of those cells is undefined: their upper halves hold no value"),
    )


STATE_EXAMPLES: list[StateExample] = [
    StateExample(
        "tcgen05.alloc",
        "Allocate 64 columns, then 32 more",
        lambda: _state(b"\xff" * 64),
        (Step(ALLOC, (0x10, 64)), Step(ALLOC, (0x20, 32))),
        _expect_alloc,
        "The address of each allocation (lane 0, its first column) is written to shared memory at dst; "
        "the second allocation takes the lowest free run of 32-column units (the manual leaves the choice open; "
        "ptxspec's new state takes the lowest, and check accepts any).",
    ),
    StateExample(
        "tcgen05.dealloc",
        "Allocate, deallocate, allocate again",
        _state,
        (Step(ALLOC, (0x10, 64)), Step(DEALLOC, (0, 64)), Step(ALLOC, (0x10, 32))),
        _expect_dealloc,
        "tcgen05.dealloc of the allocation at taddr frees its columns, which a later tcgen05.alloc can take again.",
    ),
    StateExample(
        "tcgen05.relinquish_alloc_permit",
        "No allocation after relinquishing",
        _state,
        (Step("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"), Step(ALLOC, (0x10, 32), refused=True)),
        _expect_relinquish,
        "Once a thread of the CTA has executed tcgen05.relinquish_alloc_permit, the CTA may not allocate again (§9.7.16.7.1): ptxspec refuses the second step.",
    ),
    StateExample(
        "tcgen05.st",
        "Store a .32x32b.x2",
        _state,
        (Step(ALLOC, (0x10, 64)), Step("tcgen05.st.sync.aligned.32x32b.x2.b32", (0, *STORED[:2]))),
        _expect_st,
        "With .32x32b each thread's registers go to its own lane (thread t: lane t), register i to column taddr + i; "
        "thread t's register i holds 0xc00000tt0i here, so each cell names where it came from.",
    ),
    StateExample(
        "tcgen05.st",
        "Store with .unpack::16b, load with .pack::16b",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32", (0, PACKED)),
            Step("tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32", (0,)),
            Step("tcgen05.ld.sync.aligned.32x32b.x2.b32", (0,)),
        ),
        _expect_unpack,
        '.unpack::16b: "a single 32-bit chunk in the register can be unpacked into two 16-bit chunks" in adjacent columns '
        "(§9.7.16.8.2); each lands in the lower 16 bits of its cell and the upper 16 bits are left undefined (ptxspec's reading).",
    ),
    StateExample(
        "tcgen05.ld",
        "Store a .32x32b.x2, then load it (and a .32x32b.x4)",
        _state,
        (
            Step(ALLOC, (0x10, 64)),
            Step("tcgen05.st.sync.aligned.32x32b.x2.b32", (0, *STORED[:2])),
            Step("tcgen05.ld.sync.aligned.32x32b.x2.b32", (0,)),
            Step("tcgen05.ld.sync.aligned.32x32b.x4.b32", (0,)),
        ),
        _expect_ld,
        "A load of the shape a store used gives every thread back its registers; cells that no instruction wrote (columns 2-3) load as undefined.",
    ),
    StateExample(
        "tcgen05.ld.red.int",
        "Load with a .min reduction",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.32x32b.x2.b32", (0, *RED_VALUES)),
            Step("tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32", (0,)),
        ),
        _expect_ld_red,
        'The reduction "is performed on the data that is loaded across columns in each lane" and written to the '
        "thread's redval: thread t stored 3t and 60 - t, so redval is min(3t, 60 - t).",
    ),
    StateExample(
        "tcgen05.ld.red.f32",
        "Load with a .max.abs reduction",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.32x32b.x2.b32", (0, *RED_F32)),
            Step("tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.f32", (0,)),
        ),
        _expect_ld_red_f32,
        "Thread t stored -2.5 - t and t (.f32); the maximum of the absolute values is 2.5 + t.",
    ),
    StateExample(
        "tcgen05.wait",
        "Wait for a store",
        _state,
        (Step(ALLOC, (0x10, 32)), Step("tcgen05.st.sync.aligned.32x32b.x1.b32", (0, STORED[0])), Step("tcgen05.wait::st.sync.aligned")),
        _expect_unchanged,
        "In ptxspec's functional state every tcgen05.st has completed when it returns, so the wait changes nothing; what it orders is the memory model's.",
    ),
    StateExample(
        "tcgen05.cp",
        "Copy a .128x256b matrix from shared memory",
        lambda: _state(CP_SHARED),
        (Step(ALLOC, (len(CP_SHARED) - 4, 32)), Step("tcgen05.cp.cta_group::1.128x256b", (0, _cp_descriptor()))),
        _expect_cp,
        "Shared memory byte i holds i mod 256; the descriptor (no swizzling, leading byte offset 128, stride byte offset 256) "
        "is encoded by SmemDescriptor. 128 rows of 256 bits fill 8 columns of 128 lanes.",
    ),
    StateExample(
        "tcgen05.shift",
        "Shift rows down by one",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.32x32b.x8.b32", (0, *STORED)),
            Step("tcgen05.shift.cta_group::1.down", (0,)),
        ),
        _expect_shift,
        'The 32-byte rows "downwards across all the rows, except the last, by one row": lane l takes lane l + 1\'s 8 cells and lane 31 '
        "keeps its own (the direction NVIDIA observed for .ashift, described in the same words).",
    ),
    StateExample(
        "tcgen05.fence",
        "A fence changes no state",
        _state,
        (Step(ALLOC, (0x10, 32)), Step("tcgen05.fence::before_thread_sync")),
        _expect_unchanged,
        "tcgen05.fence orders; it reads and writes nothing.",
    ),
]

#: tcgen05.mma examples: A all 1.0 and B all 2.0 (.f16, so that no layout or rounding question
#: arises: D = 2K exactly), at shared memory 0x000 (A) and 0x2000 (B), K-major without swizzle.
MMA_SHARED = bytes.fromhex("003c") * 0x1000 + bytes.fromhex("0040") * 0x1000
F16_ONES = 0x3C00


def _mma_descriptor(start: int) -> int:
    from ptxspec.semantics.tcgen05_descriptors import SmemDescriptor

    return SmemDescriptor(start_address=start, leading_byte_offset=2048, stride_byte_offset=256).encode()


def _mma_idesc(m: int, n: int, sparse: bool = False) -> int:
    from ptxspec.semantics.tcgen05_descriptors import InstrDescriptor

    return InstrDescriptor(kind="f16", m=m, n=n, atype="f16", btype="f16", dtype="f32", sparse=sparse).encode()


def _mma_state_with_metadata():
    """Shared memory as above and every 4-bit metadata field 0b0100 (elements 0 and 1 of each
    group of 4 stored, §9.7.16.10.8.2) in Tensor Memory column 64, lanes 0-127."""
    import numpy as np

    state = _state(MMA_SHARED)
    tm = state.tensor_memory.with_cells(np.arange(128), np.full(128, 64), np.full(128, 0x44444444))
    return state.with_tensor_memory(tm)


def _expect_mma(k: int, n: int):
    def expect(run: Run) -> list[tuple[bool, str]]:
        after = run.states[-1]
        value = 0x42000000 if 2 * k == 32 else None  # 32.0
        return _checks(
            (
                all(_cell(after, lane, c) == value for lane in range(128) for c in range(n)),
                f"every element of D (lanes 0-127 = rows, columns 0-{n - 1}) is {2 * k} x 1.0 x 2.0 = 32.0 (0x42000000)",
            ),
            (not after.tensor_memory.allowed, "the sum is exact, so the spec level leaves no choice"),
        )

    return expect


MMA_EXAMPLES = [
    StateExample(
        "tcgen05.mma",
        "D = A*B, M = 128, N = 8, K = 16",
        lambda: _state(MMA_SHARED),
        (Step(ALLOC, (0x3FFC, 32)), Step("tcgen05.mma.cta_group::1.kind::f16", (0, _mma_descriptor(0), _mma_descriptor(0x2000), _mma_idesc(128, 8), 0))),
        _expect_mma(16, 8),
        "A (128 x 16) all 1.0 and B (16 x 8) all 2.0, .f16 into .f32; enable-input-d false: D = A*B. "
        "D is Layout D (§9.7.16.10.5): row i in lane i, column j in column j.",
    ),
    StateExample(
        "tcgen05.mma.ws",
        "Weight-stationary D = A*B, M = 128, N = 64",
        lambda: _state(MMA_SHARED),
        (Step(ALLOC, (0x3FFC, 64)), Step("tcgen05.mma.ws.cta_group::1.kind::f16", (0, _mma_descriptor(0), _mma_descriptor(0x2000), _mma_idesc(128, 64), 0))),
        _expect_mma(16, 64),
        "As tcgen05.mma; .ws uses the collector buffers of B (the default .collector::b0::discard).",
    ),
    StateExample(
        "tcgen05.mma.sp",
        "Sparse A (2:4), M = 128, N = 8, K = 32",
        _mma_state_with_metadata,
        (
            Step(ALLOC, (0x3FFC, 128)),
            Step("tcgen05.mma.sp.cta_group::1.kind::f16", (0, _mma_descriptor(0), _mma_descriptor(0x2000), 64, _mma_idesc(128, 8, sparse=True), 0)),
        ),
        _expect_mma(16, 8),
        "A stores 16 of its 32 elements a row (all 1.0); the metadata (0b0100 in every field) places them at "
        "elements 0 and 1 of each group of 4; 16 products 1.0 x 2.0.",
    ),
    StateExample(
        "tcgen05.mma.ws.sp",
        "Weight-stationary sparse A, M = 128, N = 64, K = 32",
        _mma_state_with_metadata,
        (
            Step(ALLOC, (0x3FFC, 128)),
            Step("tcgen05.mma.ws.sp.cta_group::1.kind::f16", (0, _mma_descriptor(0), _mma_descriptor(0x2000), 64, _mma_idesc(128, 64, sparse=True), 0)),
        ),
        _expect_mma(16, 64),
        "As tcgen05.mma.sp, weight-stationary.",
    ),
]
STATE_EXAMPLES.extend(MMA_EXAMPLES)

#: Families that have no semantic function by design, and why (shown on their page).
WITHOUT_SEMANTICS = {
    "tcgen05.commit": (
        "tcgen05.commit has no semantic function: it only orders. It makes an mbarrier track the completion of the "
        "executing thread's prior asynchronous tcgen05 operations; in ptxspec's functional state each of those has "
        "completed when its function returns, so there is no value or state for it to compute. Its meaning is the "
        "memory model's (§9.7.16.6)."
    ),
}
