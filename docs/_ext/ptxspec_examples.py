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
class Earlier:
    """A source operand that is a result of an earlier step of the same example (thread 0's value
    of destination ``destination`` of step ``step``, counted from 0): an mbarrier state token."""

    step: int
    destination: int = 0


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


# ---------------------------------------------------------------------------------------------
# Families with no silicon recording: examples stated from the manual
# ---------------------------------------------------------------------------------------------
#
# The families below have semantics but nothing in conformance/data/sm_90 records them (sm_100 and
# sm_120 forms, the mbarrier forms the async round's programs do not use, cache hints, multimem).
# Each example's expectation is worked out here from the sentence of the manual it quotes; the
# reference runs the steps through ptxspec and fails the build where a statement does not hold.

#: Where the examples put global memory (a page-aligned base, as a driver places it).
GLOBAL = 0x7F10_0000_0000
GLOBAL_BYTES = bytes((64 + i) % 256 for i in range(256))


def _global_state(data: bytes = GLOBAL_BYTES, shared: bytes = bytes(256)):
    from ptxspec.semantics.state import Segment, State

    return State(shared=shared, global_memory=Segment(GLOBAL, data))


def _u32(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset : offset + 4], "little")


def _register(run: Run, step: int, destination: int = 0, thread: int = 0):
    """Thread ``thread``'s value of destination ``destination`` of step ``step`` (None: undefined)."""
    return run.registers[step][destination][thread]


def _expect_unchanged_memory(run: Run) -> list[tuple[bool, str]]:
    return _checks(
        (run.states[-1] == run.states[0], "no byte of global or shared memory changes, and nothing else in the state"),
    )


#: A cache hint or prefetch (§9.7.9.15-16, §9.7.9.25.4.3, §9.7.9.25.5.4) moves data between levels of
#: the memory hierarchy; none of them writes memory.
HINTS = [
    (
        "prefetch",
        "prefetch.global.L1",
        (GLOBAL,),
        '"prefetch ... brings the line containing a generic address into the specified level of memory hierarchy" (§9.7.9.15): memory is not written.',
    ),
    ("prefetchu", "prefetchu.L1", (GLOBAL,), "prefetchu prefetches into the uniform cache (§9.7.9.15): memory is not written."),
    (
        "prefetch.eviction_priority",
        "prefetch.global.L2::evict_last",
        (GLOBAL,),
        "A prefetch with an eviction priority (§9.7.9.15) changes only what the cache keeps.",
    ),
    ("prefetch.tensormap", "prefetch.tensormap", (GLOBAL,), "prefetch.tensormap brings a tensor map into the cache (§9.7.9.15); it writes nothing."),
    (
        "applypriority",
        "applypriority.global.L2::evict_normal",
        (GLOBAL, 128),
        '"applypriority applies the cache eviction priority ... to the cache line" of 128 bytes at a (§9.7.9.16): the data is unchanged.',
    ),
]


def _hint_example(family: str, text: str, sources: tuple, why: str) -> StateExample:
    return StateExample(family, "A hint changes no memory", _global_state, (Step(text, sources),), _expect_unchanged_memory, why)


def _expect_discard(run: Run) -> list[tuple[bool, str]]:
    after = run.states[1].global_memory
    return _checks(
        (after.unknown(GLOBAL, 128) == list(range(128)), "the 128 bytes from a are indeterminate"),
        (after.read(GLOBAL + 128, 128) == GLOBAL_BYTES[128:], "the bytes after them keep their values"),
        (_register(run, 1) is None, "a load of the discarded bytes gives an undefined value"),
        (_register(run, 2) == _u32(GLOBAL_BYTES, 128), "a load just past them gives the stored word"),
    )


def _expect_nc_load(run: Run) -> list[tuple[bool, str]]:
    return _checks((_register(run, 0) == _u32(GLOBAL_BYTES, 8), f"d is the little-endian word of the 4 bytes at a + 8 ({_u32(GLOBAL_BYTES, 8):#010x})"))


F16_TINY = 0x0001  # 2^-24, the smallest f16 subnormal


def _expect_noftz(run: Run) -> list[tuple[bool, str]]:
    after = run.states[1].global_memory.read(GLOBAL, 2)
    return _checks((int.from_bytes(after, "little") == 2 * F16_TINY, "2^-24 + 2^-24 = 2^-23: the subnormal result 0x0002 is kept, not flushed"))


def _expect_st_bulk(run: Run) -> list[tuple[bool, str]]:
    before, after = run.states[0].shared, run.states[1].shared
    return _checks(
        (after[16:48] == bytes(32), "the 32 bytes from a = 16 are zero"),
        (after[:16] == before[:16] and after[48:] == before[48:], "every other byte of shared memory is unchanged"),
    )


def _expect_async_release_store(run: Run) -> list[tuple[bool, str]]:
    after = run.states[1].global_memory
    return _checks(
        (after.read(GLOBAL + 4, 4) == (0x89ABCDEF).to_bytes(4, "little"), "the 4 bytes at a hold b, least significant byte first"),
        (after.read(GLOBAL, 4) == GLOBAL_BYTES[:4] and after.read(GLOBAL + 8, 248) == GLOBAL_BYTES[8:], "no other byte changes"),
    )


def _expect_async_release_red(run: Run) -> list[tuple[bool, str]]:
    word = (_u32(GLOBAL_BYTES, 0) + 0x7FFFFFFF) & 0xFFFFFFFF
    return _checks((_u32(run.states[1].global_memory.read(GLOBAL, 4), 0) == word, f".add.s32 wraps modulo 2^32: 0x43424140 + 0x7fffffff = {word:#010x}"))


MEMORY_EXAMPLES = [
    *(_hint_example(*hint) for hint in HINTS),
    StateExample(
        "discard",
        "Discard a 128-byte line",
        _global_state,
        (Step("discard.global.L2", (GLOBAL, 128)), Step("ld.global.b32", (GLOBAL,)), Step("ld.global.b32", (GLOBAL + 128,))),
        _expect_discard,
        '"the cache line is invalidated ... the data in the cache line ... is considered to be indeterminate" (§9.7.9.17): '
        "the 128 bytes may hold any value afterwards, and only those.",
    ),
    StateExample(
        "ld.global.nc.eviction_priority",
        "A non-coherent load with an eviction hint",
        _global_state,
        (Step("ld.global.nc.L1::evict_last.b32", (GLOBAL + 8,)),),
        _expect_nc_load,
        "ld.global.nc loads from global memory through the non-coherent cache (§9.7.9.9); the eviction priority is a hint: the value is memory's.",
    ),
    StateExample(
        "red.noftz",
        "red.add.noftz.f16 keeps subnormals",
        lambda: _global_state(F16_TINY.to_bytes(2, "little") + GLOBAL_BYTES[2:]),
        (Step("red.global.add.noftz.f16", (GLOBAL, F16_TINY)),),
        _expect_noftz,
        '"red.add.f16 ... require the .noftz qualifier; it preserves subnormal inputs and results, and does not flush them to zero" (§9.7.13.6).',
    ),
    StateExample(
        "st.bulk",
        "Zero 32 bytes of shared memory",
        lambda: _global_state(shared=bytes(range(1, 65))),
        (Step("st.bulk.weak.shared::cta", (16, 32, 0)),),
        _expect_st_bulk,
        '"st.bulk initializes a region of shared memory starting from the location specified by a"; size (a multiple of 8) bytes; '
        '"the only numeric value allowed for initval is 0" (§9.7.9.13).',
    ),
    StateExample(
        "st.async.release",
        "A release store",
        _global_state,
        (Step("st.async.release.b32", (GLOBAL + 4, 0x89ABCDEF)),),
        _expect_async_release_store,
        "st.async stores b at a (§9.7.9.12); .release orders it, which the memory model checks, not the value.",
    ),
    StateExample(
        "red.async.release",
        "A release reduction that wraps",
        _global_state,
        (Step("red.async.release.gpu.global.add.s32", (GLOBAL, 0x7FFFFFFF)),),
        _expect_async_release_red,
        "red.async performs the reduction on the value at a (§9.7.13.7): two's complement addition, modulo 2^32.",
    ),
]


# --- multimem (§9.7.9.14): one address, several memories -------------------------------------


def _multimem_state(*words: int, width: int = 4):
    from ptxspec.semantics.state import Segment, State

    return State(multimem=tuple(Segment(GLOBAL, w.to_bytes(width, "little") + bytes(16 - width)) for w in words))


def _multimem_words(state, width: int = 4) -> list[int]:
    return [int.from_bytes(s.read(GLOBAL, width), "little") for s in state.multimem]


def _expect_multimem(check: Callable[[Run], tuple[bool, str]]):
    def expect(run: Run) -> list[tuple[bool, str]]:
        return _checks(check(run))

    return expect


MULTIMEM_EXAMPLES = [
    StateExample(
        "multimem.ld_reduce",
        "Load and reduce with .min.s32",
        lambda: _multimem_state(5, 0xFFFFFFF9),
        (Step("multimem.ld_reduce.min.s32", (GLOBAL,)),),
        _expect_multimem(lambda run: (_register(run, 0) == 0xFFFFFFF9, "d = min(5, -7) = -7 (0xfffffff9), the signed minimum of both memories")),
        '"multimem.ld_reduce ... loads from all the multiple memory locations pointed to by the multimem address a" and reduces them with .op (§9.7.9.14).',
    ),
    StateExample(
        "multimem.st",
        "Store to every memory",
        lambda: _multimem_state(5, 7),
        (Step("multimem.st.b32", (GLOBAL, 9)),),
        _expect_multimem(lambda run: (_multimem_words(run.states[1]) == [9, 9], "both memories now hold 9")),
        '"multimem.st performs a store operation of the input operand b to all the memory locations pointed to by the multimem address a" (§9.7.9.14).',
    ),
    StateExample(
        "multimem.red",
        "Reduce into every memory",
        lambda: _multimem_state(5, 0xFFFFFFFF),
        (Step("multimem.red.add.u32", (GLOBAL, 1)),),
        _expect_multimem(lambda run: (_multimem_words(run.states[1]) == [6, 0], "5 + 1 = 6 in one, 0xffffffff + 1 wraps to 0 in the other")),
        '"multimem.red performs a reduction operation on all the memory locations pointed to by the multimem address a, with operand b" (§9.7.9.14).',
    ),
    StateExample(
        "multimem.ld_reduce.float",
        "Load and add .f32",
        lambda: _multimem_state(f32(1.5), f32(2.25)),
        (Step("multimem.ld_reduce.add.f32", (GLOBAL,)),),
        _expect_multimem(lambda run: (_register(run, 0) == f32(3.75), "d = 1.5 + 2.25 = 3.75, exactly")),
        "multimem.ld_reduce.add sums the values of all the memories (§9.7.9.14); 3.75 is exact.",
    ),
    StateExample(
        "multimem.st.float",
        "Store an .f32 to every memory",
        lambda: _multimem_state(f32(1.0), f32(2.0)),
        (Step("multimem.st.f32", (GLOBAL, f32(-0.0))),),
        _expect_multimem(
            lambda run: (_multimem_words(run.states[1]) == [0x80000000, 0x80000000], "both memories hold -0.0 (0x80000000): a store copies the bits")
        ),
        "multimem.st stores b to every memory location of the multimem address (§9.7.9.14).",
    ),
    StateExample(
        "multimem.red.float",
        "Add an .f32 into every memory",
        lambda: _multimem_state(f32(1.0), f32(-0.5)),
        (Step("multimem.red.add.f32", (GLOBAL, f32(0.5))),),
        _expect_multimem(
            lambda run: (
                _multimem_words(run.states[1]) == [f32(1.5), f32(0.0)],
                "1.0 + 0.5 = 1.5 and -0.5 + 0.5 = +0.0 (an exact zero sum is +0 under round-to-nearest)",
            )
        ),
        "multimem.red.add adds b to each memory location (§9.7.9.14).",
    ),
]


# --- mbarrier (§9.7.13.15): the object is opaque, so each example observes it through the
# --- waits and pending counts the manual defines -------------------------------------------

#: The mbarrier object's address in shared memory (8-byte aligned, §9.7.13.15.1); a
#: ``.shared::cluster`` address of the executing CTA's own shared memory is the same number here
#: (rank 0 of the cluster, ptxspec.semantics.state.AddressMap).
MBAR = 8
INIT = "mbarrier.init.shared::cta.b64"
WAIT_PARITY = "mbarrier.test_wait.parity.shared::cta.b64"
ARRIVE = "mbarrier.arrive.shared::cta.b64"
COMPLETE_TX = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64"


def _mbarrier_state():
    from ptxspec.semantics.state import AddressMap, State

    return State(shared=bytes(64), addresses=AddressMap(cta_rank=0, cluster_ctas=1))


def _init(count: int) -> Step:
    return Step(INIT, (MBAR, count))


def _wait(parity: int) -> Step:
    """test_wait.parity: "waitComplete is True when the phase indicated by phaseParity ... has completed" (§9.7.13.15.16)."""
    return Step(WAIT_PARITY, (MBAR, parity))


def _waits(*expected: tuple[int, int, str]) -> Callable[[Run], list[tuple[bool, str]]]:
    """An expectation: step ``i``'s waitComplete is ``value`` (and why), for each ``(i, value, why)``."""

    def expect(run: Run) -> list[tuple[bool, str]]:
        return _checks(*((_register(run, i) == value, f"step {i + 1}: waitComplete = {value}: {why}") for i, value, why in expected))

    return expect


def _mbarrier_example(family: str, title: str, steps: tuple[Step, ...], expect, why: str) -> StateExample:
    return StateExample(
        family,
        title,
        _mbarrier_state,
        steps,
        expect,
        why + " (§9.7.13.15.6: a phase completes when the pending arrival count and the tx-count both reach zero.)",
    )


def _expect_token_waits(run: Run) -> list[tuple[bool, str]]:
    return _checks(
        (_register(run, 2) == 0, "step 3: after one arrive of two expected, test_wait with the first arrive's state is False"),
        (_register(run, 4) == 1, "step 5: after the second arrive, the phase that state names has completed: True"),
    )


def _token_wait_example(family: str, text: str, extra: tuple = ()) -> StateExample:
    return _mbarrier_example(
        family,
        "Wait on the state an arrive returned",
        (_init(2), Step(ARRIVE, (MBAR,)), Step(text, (MBAR, Earlier(1), *extra)), Step(ARRIVE, (MBAR,)), Step(text, (MBAR, Earlier(1), *extra))),
        _expect_token_waits,
        "init(2); arrive returns the state of the current phase; a wait with that state is True once that phase completes (§9.7.13.15.16).",
    )


def _parity_wait_example(family: str, text: str, extra: tuple = ()) -> StateExample:
    return _mbarrier_example(
        family,
        "Wait on a phase's parity",
        (_init(1), Step(text, (MBAR, 0, *extra)), Step(ARRIVE, (MBAR,)), Step(text, (MBAR, 0, *extra)), Step(text, (MBAR, 1, *extra))),
        _waits((1, 0, "phase 0 has not completed"), (3, 1, "one arrive of one expected completes phase 0"), (4, 0, "phase 1, the current one, has not")),
        "With .parity the operand phaseParity names the phase: 0 for even phases, 1 for odd (§9.7.13.15.16).",
    )


MBARRIER_EXAMPLES = [
    _mbarrier_example(
        "mbarrier.arrive",
        "Two arrivals complete a phase of two",
        (_init(2), Step(ARRIVE, (MBAR,)), _wait(0), Step(ARRIVE, (MBAR,)), _wait(0)),
        _waits((2, 0, "one arrival of two: the pending count is 1"), (4, 1, "the second arrival brings it to 0: phase 0 completes")),
        "An arrive-on operation without count decrements the pending arrival count by 1 (§9.7.13.15.7).",
    ),
    _mbarrier_example(
        "mbarrier.arrive.remote",
        "Arrive through a .shared::cluster address",
        (
            _init(2),
            Step("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr]", (MBAR,)),
            _wait(0),
            Step("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr]", (MBAR,)),
            _wait(0),
        ),
        _waits((2, 0, "one of two arrivals"), (4, 1, "two of two: phase 0 completes")),
        "A .shared::cluster address may name the executing CTA's own object (§5.1.7: the .shared::cta window lies in the .shared::cluster one); the sink _ takes no state.",
    ),
    _mbarrier_example(
        "mbarrier.arrive.remote.count",
        "One arrival with count 3",
        (
            _init(3),
            Step("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr], count", (MBAR, 2)),
            _wait(0),
            Step("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr], count", (MBAR, 1)),
            _wait(0),
        ),
        _waits((2, 0, "count 2 of 3 expected"), (4, 1, "the third arrival completes phase 0")),
        "count is the arrive-on operation's count argument: the pending count drops by it (§9.7.13.15.7).",
    ),
    _mbarrier_example(
        "mbarrier.arrive.expect_tx.remote",
        "Arrive and expect 16 bytes",
        (
            _init(1),
            Step("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [addr], txCount", (MBAR, 16)),
            _wait(0),
            Step(COMPLETE_TX, (MBAR, 16)),
            _wait(0),
        ),
        _waits((2, 0, "the arrival is counted, but the tx-count is 16"), (4, 1, "complete-tx of 16 brings the tx-count to 0: phase 0 completes")),
        '"The expect-tx operation ... increases the tx-count of the mbarrier object by expectCount" and is performed before the arrive-on operation (§9.7.13.15.5.1, §9.7.13.15.13).',
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop",
        "Drop an expected arrival",
        (_init(2), Step("mbarrier.arrive_drop.shared::cta.b64", (MBAR,)), _wait(0), Step(ARRIVE, (MBAR,)), _wait(0), Step(ARRIVE, (MBAR,)), _wait(1)),
        _waits(
            (2, 0, "one of two arrivals"),
            (4, 1, "two of two: phase 0 completes"),
            (6, 1, "phase 1 expects one arrival only: the drop applies to all later phases"),
        ),
        '"The expected arrival count of the mbarrier object is decremented by ... count" and it "applies to all the subsequent phases" (§9.7.13.15.14).',
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop.remote",
        "Drop through a .shared::cluster address",
        (
            _init(2),
            Step("mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [addr]", (MBAR,)),
            Step(ARRIVE, (MBAR,)),
            _wait(0),
            Step(ARRIVE, (MBAR,)),
            _wait(1),
        ),
        _waits((3, 1, "two arrivals of two complete phase 0"), (5, 1, "phase 1 expects one arrival")),
        "arrive_drop on the own object through its .shared::cluster address (§9.7.13.15.14).",
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop.remote.count",
        "Drop two expected arrivals at once",
        (
            _init(3),
            Step("mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [addr], count", (MBAR, 2)),
            _wait(0),
            Step(ARRIVE, (MBAR,)),
            _wait(0),
            Step(ARRIVE, (MBAR,)),
            _wait(1),
        ),
        _waits((2, 0, "two of three arrivals"), (4, 1, "the third completes phase 0"), (6, 1, "phase 1 expects 3 - 2 = 1 arrival")),
        "count is both the drop of the expected count and the arrive-on's count (§9.7.13.15.14).",
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop.expect_tx",
        "Drop, expecting 32 bytes",
        (
            _init(1),
            Step("mbarrier.arrive_drop.expect_tx.shared::cta.b64 state, [addr], txCount", (MBAR, 32)),
            _wait(0),
            Step(COMPLETE_TX, (MBAR, 32)),
            _wait(0),
        ),
        _waits((2, 0, "the tx-count is 32"), (4, 1, "complete-tx of 32: phase 0 completes")),
        '".expect_tx specifies that an expect-tx operation is performed prior to the arrive-on operation" (§9.7.13.15.14).',
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop.expect_tx.remote",
        "Drop, expecting 16 bytes, through .shared::cluster",
        (
            _init(1),
            Step("mbarrier.arrive_drop.expect_tx.shared::cluster.b64 _, [addr], txCount", (MBAR, 16)),
            _wait(0),
            Step(COMPLETE_TX, (MBAR, 16)),
            _wait(0),
        ),
        _waits((2, 0, "the tx-count is 16"), (4, 1, "complete-tx of 16: phase 0 completes")),
        "As arrive_drop.expect_tx, on the own object through its .shared::cluster address (§9.7.13.15.14).",
    ),
    _mbarrier_example(
        "mbarrier.arrive_drop.noComplete",
        "A drop that must not complete the phase",
        (
            _init(3),
            Step("mbarrier.arrive_drop.noComplete.shared::cta.b64 state, [addr], count", (MBAR, 1)),
            _wait(0),
            Step("mbarrier.arrive.shared::cta.b64 state, [addr], count", (MBAR, 2)),
            _wait(0),
        ),
        _waits((2, 0, "one of three arrivals (.noComplete: this one may not complete the phase)"), (4, 1, "the other two complete phase 0")),
        "With .noComplete the arrive-on must not cause the phase to complete (§9.7.13.15.14).",
    ),
    _mbarrier_example(
        "mbarrier.inval",
        "Invalidate, then initialize again",
        (_init(1), Step("mbarrier.inval.shared::cta.b64", (MBAR,)), Step(ARRIVE, (MBAR,), refused=True), _init(1), Step(ARRIVE, (MBAR,)), _wait(0)),
        lambda run: _checks(
            (run.registers[2] == (), "step 3: the arrive on the invalidated object is refused"),
            (_register(run, 5) == 1, "step 6: a new object initialized there works: one arrival completes phase 0"),
        ),
        '"Performing any mbarrier operation except mbarrier.init on a memory location that does not contain a valid mbarrier object results in undefined behavior" (§9.7.13.15.10): ptxspec refuses it.',
    ),
    _token_wait_example("mbarrier.test_wait", "mbarrier.test_wait.shared::cta.b64"),
    _token_wait_example("mbarrier.try_wait", "mbarrier.try_wait.shared::cta.b64"),
    _token_wait_example("mbarrier.try_wait.suspendTimeHint", "mbarrier.try_wait.shared::cta.b64 waitComplete, [addr], state, suspendTimeHint", (1000,)),
    _parity_wait_example("mbarrier.try_wait.parity", "mbarrier.try_wait.parity.shared::cta.b64"),
    _parity_wait_example(
        "mbarrier.try_wait.parity.suspendTimeHint", "mbarrier.try_wait.parity.shared::cta.b64 waitComplete, [addr], phaseParity, suspendTimeHint", (1000,)
    ),
    _mbarrier_example(
        "cp.async.mbarrier.arrive",
        "Track prior cp.async, with and without .noinc",
        (
            _init(1),
            Step("cp.async.mbarrier.arrive.shared::cta.b64", (MBAR,)),
            _wait(0),
            Step(ARRIVE, (MBAR,)),
            _wait(0),
            Step("cp.async.mbarrier.arrive.noinc.shared::cta.b64", (MBAR,)),
            _wait(1),
        ),
        _waits(
            (2, 0, "without .noinc the pending count is first incremented: a net change of zero"),
            (4, 1, "the thread's own arrive completes phase 0"),
            (6, 1, "with .noinc the asynchronous arrive-on counts against phase 1's one expected arrival: it completes"),
        ),
        'No cp.async is pending here, so the arrive-on happens at once. "When .noinc is not specified, the pending count ... is incremented by 1 prior to the asynchronous arrive-on operation" (§9.7.13.15.15).',
    ),
]


# --- asynchronous copies (§9.7.9.25): in ptxspec's functional state a copy has completed when its
# --- function returns; the commits and waits then change nothing, and the copied bytes are there

CP_DST, CP_SRC = 0x40, GLOBAL + 0x20


def _expect_copied(size: int):
    """The copy's bytes are at dst once the group is waited for; the commit and the waits (steps 2
    on) change nothing."""

    def expect(run: Run) -> list[tuple[bool, str]]:
        after = run.states[-1].shared
        checks = [(after[CP_DST : CP_DST + size] == GLOBAL_BYTES[0x20 : 0x20 + size], f"shared memory at dst holds the {size} bytes at src")]
        checks += [(run.states[i + 1] == run.states[i], f"step {i + 1} changes nothing in the state") for i in range(1, len(run.states) - 1)]
        return _checks(*checks)

    return expect


def _group_example(family: str, steps: tuple[Step, ...], why: str) -> StateExample:
    copy = Step("cp.async.ca.shared.global", (CP_DST, CP_SRC, 16))
    return StateExample(family, "Copy 16 bytes, then commit and wait", _global_state, (copy, *steps), _expect_copied(16), why)


def _tensor_map_state(shared: bytes = bytes(256)):
    """A one-dimensional .u32 tensor of 16 elements at GLOBAL (GLOBAL_BYTES), its tile-mode map
    (box of 8 elements, §5.5) at address 0x100."""
    import attrs as _attrs

    from ptxspec.semantics.tensor_map import TensorMap

    tensor_map = TensorMap(element_type="u32", global_address=GLOBAL, global_dims=(16,), global_strides=(), box_dims=(8,))
    return _attrs.evolve(_global_state(shared=shared), tensor_maps=((0x100, tensor_map),))


def _expect_tensor_load(run: Run) -> list[tuple[bool, str]]:
    after = run.states[-2].shared
    return _checks(
        (after[0:32] == GLOBAL_BYTES[16:48], "the box of 8 elements from coordinate 4 (bytes 16-47 of the tensor) lands at dstMem, element 4 first"),
        (_register(run, len(run.registers) - 1) == 1, "the complete-tx of the box's 32 bytes completes the mbarrier's phase 0"),
    )


def _expect_tensor_reduce(run: Run) -> list[tuple[bool, str]]:
    after = run.states[1].global_memory.read(GLOBAL, 64)
    want = bytearray(GLOBAL_BYTES[:64])
    for i in range(4, 12):  # elements 4..11: each gains the shared value 1
        want[4 * i : 4 * i + 4] = ((_u32(GLOBAL_BYTES, 4 * i) + 1) & 0xFFFFFFFF).to_bytes(4, "little")
    return _checks(
        (after == bytes(want), "each of the box's 8 .u32 elements (coordinates 4-11) gains 1, the value in shared memory; the others are unchanged"),
    )


ASYNC_EXAMPLES = [
    _group_example(
        "cp.async.commit_group",
        (Step("cp.async.commit_group"), Step("cp.async.wait_group", (0,))),
        '"cp.async.commit_group ... commits all prior initiated but uncommitted cp.async instructions into a cp.async-group" (§9.7.9.25.3.2); it writes no memory.',
    ),
    _group_example(
        "cp.async.wait_group",
        (Step("cp.async.commit_group"), Step("cp.async.wait_group", (0,))),
        '"cp.async.wait_group ... wait[s] till only N or fewer of the most recent cp.async-groups are pending"; with N = 0 every prior cp.async has completed (§9.7.9.25.3.3).',
    ),
    _group_example(
        "cp.async.wait_all",
        (Step("cp.async.wait_all"),),
        '"cp.async.wait_all is equivalent to cp.async.commit_group; cp.async.wait_group 0" (§9.7.9.25.3.3).',
    ),
    StateExample(
        "cp.async.bulk.commit_group",
        "Copy to global, commit, wait",
        lambda: _global_state(shared=bytes(range(0x80, 0x80 + 64)) + bytes(192)),
        (
            Step("cp.async.bulk.global.shared::cta.bulk_group", (GLOBAL + 0x40, 0, 32)),
            Step("cp.async.bulk.commit_group"),
            Step("cp.async.bulk.wait_group", (0,)),
        ),
        lambda run: _checks(
            (run.states[1].global_memory.read(GLOBAL + 0x40, 32) == bytes(range(0x80, 0xA0)), "global memory at dstMem holds the 32 shared bytes"),
            (run.states[2] == run.states[1] and run.states[3] == run.states[2], "the commit and the wait change nothing"),
        ),
        '"cp.async.bulk.commit_group ... commits all prior initiated but uncommitted bulk async-group operations"; wait_group 0 waits for all of them (§9.7.9.25.4.4-5).',
    ),
    StateExample(
        "cp.async.bulk.wait_group",
        "Wait for a bulk group",
        lambda: _global_state(shared=bytes(range(0x80, 0x80 + 64)) + bytes(192)),
        (Step("cp.async.bulk.global.shared::cta.bulk_group", (GLOBAL, 0, 16)), Step("cp.async.bulk.commit_group"), Step("cp.async.bulk.wait_group.read", (0,))),
        lambda run: _checks(
            (run.states[1].global_memory.read(GLOBAL, 16) == bytes(range(0x80, 0x90)), "the 16 bytes are in global memory"),
            (run.states[3] == run.states[2], "the wait changes nothing"),
        ),
        '"cp.async.bulk.wait_group ... waits until only N or fewer of the most recent bulk async-groups are pending"; .read: until their reads of the source have completed (§9.7.9.25.4.5).',
    ),
    StateExample(
        "cp.async.bulk.global_to_shared_cta",
        "Copy 32 bytes, complete-tx on an mbarrier",
        lambda: _global_state(),
        (
            _init(1),
            Step("mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], txCount", (MBAR, 32)),
            Step("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes", (CP_DST, CP_SRC, 32, MBAR)),
            _wait(0),
        ),
        lambda run: _checks(
            (run.states[-1].shared[CP_DST : CP_DST + 32] == GLOBAL_BYTES[0x20:0x40], "the 32 bytes at srcMem are at dstMem"),
            (_register(run, 1) is not None and _register(run, 3) == 1, "the complete-tx of 32 bytes brings the tx-count of 32 to zero: phase 0 completes"),
        ),
        '"the complete-tx operation ... with completeCount equal to the amount of data copied in bytes" is performed on the mbarrier (§9.7.9.25.4.1).',
    ),
    StateExample(
        "cp.async.bulk.tensor.global_to_shared_cta",
        "Load a box of a one-dimensional tensor",
        _tensor_map_state,
        (
            Step(INIT, (0x80, 1)),
            Step("mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], txCount", (0x80, 32)),
            Step("cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes", (0, 0x100, 4, 0x80)),
            Step(WAIT_PARITY, (0x80, 0)),
        ),
        _expect_tensor_load,
        "A .u32 tensor of 16 elements; the map's box is 8 elements; tensorCoords = 4: the box holds elements 4-11, all inside the tensor (§5.5.3.1), "
        "copied in order to dstMem (no swizzle); the complete-tx counts its 32 bytes (§9.7.9.25.5.2).",
    ),
    StateExample(
        "cp.reduce.async.bulk.tensor.shared_to_global",
        "Add a box into a tensor",
        lambda: _tensor_map_state(shared=(1).to_bytes(4, "little") * 64),
        (Step("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.bulk_group", (0x100, 4, 0)),),
        _expect_tensor_reduce,
        "Shared memory holds the .u32 value 1 in every element; .add reduces the box at coordinate 4 into the tensor element by element (§9.7.9.25.5.3).",
    ),
    StateExample(
        "cp.async.bulk.prefetch.tensor",
        "Prefetch a box",
        _tensor_map_state,
        (Step("cp.async.bulk.prefetch.tensor.1d.L2.global", (0x100, 4)),),
        _expect_unchanged_memory,
        '"cp.async.bulk.prefetch.tensor ... prefetch[es] tensor data from global memory to L2 cache" (§9.7.9.25.5.4): memory is not written.',
    ),
]


# --- tcgen05.mma, every variant (§9.7.16.10): constant matrices, so that no layout, order or
# --- rounding question arises -- every element of D is the same exact sum -------------------------
#
# A holds 1.0 everywhere and B 2.0 (.f16; .e4m3 for the block-scaled kind), in shared memory or, for
# the [a-tmem] forms, in Tensor Memory columns 64-79 of lanes 0-127. Each element of D is then
# 2.0 times the number of products: K for a dense MMA, K/2 for a sparse one (metadata 0b0100 in
# every field: elements 0 and 1 of each group of four stored), times the scale factors.

#: Tensor Memory columns of the variants' operands (D from column 0).
A_TMEM_COLUMN, META_COLUMN, SCALE_A_COLUMN, SCALE_B_COLUMN = 64, 80, 96, 112
E4M3_ONE, E4M3_TWO = 0x38, 0x40
#: The manual's Example 2 of the zero-column mask descriptor (§9.7.16.4.3, M = 128): non-zero
#: mask 1, skip span 2, use span 3, start count and first span 0: "mask0: 0b ... 111 0000 111 0000".
ZERO_COLUMN_EXAMPLE = (1 << 39) | (2 << 40) | (3 << 48)


def _zero_column(column: int) -> bool:
    """Whether the manual's Example 2 mask zeroes B's column ``column``: from the least significant
    bit, 4 columns used, 3 zeroed, again and again."""
    return column % 7 >= 4


@attrs.frozen
class MmaVariant:
    """Which operand forms and options a tcgen05.mma family has (its catalogue key's parts)."""

    family: str

    def has(self, part: str) -> bool:
        return part in self.family.split(".")

    @property
    def block_scale(self) -> bool:
        return self.has("block_scale")

    @property
    def n(self) -> int:
        """The narrowest N of the form's shape (§9.7.16.10.1.1): 8 for M = 128; 64 for .ws."""
        return 64 if self.has("ws") else 8

    @property
    def k(self) -> int:
        """K of the kind, (§9.7.16.10.1): .kind::f16 16, .kind::mxf8f6f4 32; twice that with .sp."""
        return (32 if self.block_scale else 16) * (2 if self.has("sp") else 1)

    @property
    def value(self) -> float:
        """Each element of D: K/2 (sparse) or K products of 1.0 x 2.0, the A scale 2^1 (block-scaled)."""
        products = self.k // 2 if self.has("sp") else self.k
        return products * 2.0 * (2.0 if self.block_scale else 1.0)


def _variant_text(variant: MmaVariant) -> str:
    from ptxspec.spec.catalogue import CATALOGUE

    kind = ".kind::mxf8f6f4.block_scale.block32" if variant.block_scale else ".kind::f16"
    base = "tcgen05.mma" + (".ws" if variant.has("ws") else "") + (".sp" if variant.has("sp") else "") + ".cta_group::1" + kind
    template = CATALOGUE.family(variant.family).operand_syntax
    return f"{base} " + template.replace("{ disable-output-lane }", "{lane_mask0, lane_mask1, lane_mask2, lane_mask3}").replace("-", "_")


def _variant_state(variant: MmaVariant):
    import numpy as np

    one, two = (
        (bytes([E4M3_ONE]) * 0x2000, bytes([E4M3_TWO]) * 0x2000) if variant.block_scale else (bytes.fromhex("003c") * 0x1000, bytes.fromhex("0040") * 0x1000)
    )
    state = _state(one + two)
    lanes = np.arange(128)
    tm = state.tensor_memory
    columns = {
        A_TMEM_COLUMN: (0x38383838 if variant.block_scale else 0x3C003C00, 16),
        META_COLUMN: (0x44444444, 8),
        SCALE_A_COLUMN: (0x80808080, 16),  # ue8m0 0x80: 2^1
        SCALE_B_COLUMN: (0x7F7F7F7F, 16),  # ue8m0 0x7f: 2^0
    }
    for first, (word, count) in columns.items():
        for column in range(first, first + count):
            tm = tm.with_cells(lanes, np.full(128, column), np.full(128, word))
    return state.with_tensor_memory(tm)


def _variant_sources(variant: MmaVariant, text: str, enable: int) -> tuple:
    from ptxspec.semantics.tcgen05_descriptors import InstrDescriptor
    from ptxspec.spec.catalogue import parse

    if variant.block_scale:
        idesc = InstrDescriptor(
            kind="mxf8f6f4", m=128, n=variant.n, atype="e4m3", btype="e4m3", dtype="f32", scale_type="ue8m0", sparse=variant.has("sp")
        ).encode()
    else:
        idesc = InstrDescriptor(kind="f16", m=128, n=variant.n, atype="f16", btype="f16", dtype="f32", sparse=variant.has("sp")).encode()
    values = {
        "d_tmem": 0,
        "a_desc": _mma_descriptor(0),
        "b_desc": _mma_descriptor(0x2000),
        "a_tmem": _tmem_address(0, A_TMEM_COLUMN),
        "sp_meta_tmem": _tmem_address(0, META_COLUMN),
        "idesc": idesc,
        "disable_output_lane.0": 0xFFFFFFFF,  # lanes 0-31 (bit i of the first element: lane i)
        "disable_output_lane.1": 0,
        "disable_output_lane.2": 0,
        "disable_output_lane.3": 0,
        "enable_input_d": enable,
        "scale_input_d": 1,
        "scale_A_tmem": _tmem_address(0, SCALE_A_COLUMN),
        "scale_B_tmem": _tmem_address(0, SCALE_B_COLUMN),
        "zero_column_mask_desc": ZERO_COLUMN_EXAMPLE,
    }
    return tuple(values[o.name] for o in parse(text).sources)


def _cell_sets(tm) -> dict:
    """The sets of Tensor Memory's cells that hold a set, by (lane, column)."""
    return {(lane, column): allowed for lane, column, allowed in tm.allowed}


def _cell_value(tm, sets: dict, lane: int, column: int) -> int | None:
    """A Tensor Memory cell's value: its word where it holds one, the one member of the set it holds
    where that set has a single member (a D element the spec level fixes, stored as a set), else None."""
    from ptxspec.semantics.results import only_member

    if tm.defined()[lane, column]:
        return int(tm.words()[lane, column])
    return only_member(sets[lane, column]) if (lane, column) in sets else None


def _cell_is_zero(tm, sets: dict, lane: int, column: int) -> bool:
    """Whether a cell holds a zero: +0.0 or -0.0, or a set of nothing else."""
    from ptxspec.semantics.results import contains

    if tm.defined()[lane, column]:
        return int(tm.words()[lane, column]) in (0, 0x80000000)
    zero_set = sets.get((lane, column))
    return zero_set is not None and contains(zero_set, 0) and not contains(zero_set, 1) and not contains(zero_set, 0x80000001)


def _expect_variant(variant: MmaVariant):
    def expect(run: Run) -> list[tuple[bool, str]]:
        after = run.states[-1].tensor_memory
        defined, sets = after.defined(), _cell_sets(after)
        value = variant.value * (1.5 if variant.has("scale_input_d") else 1.0)
        kept = range(32) if variant.has("disable_output_lane") else range(0)

        def holds(lane: int, column: int) -> bool:
            if variant.has("zero_column_mask") and _zero_column(column):
                return _cell_is_zero(after, sets, lane, column)
            return _cell_value(after, sets, lane, column) == f32(value)

        written = [lane for lane in range(128) if lane not in kept]
        checks = [
            (
                all(holds(lane, c) for lane in written for c in range(variant.n)),
                f"every element of D in lanes {written[0]}-127 (rows), columns 0-{variant.n - 1} is exactly {value:g}, the only value the spec level allows"
                + (
                    " (and +0.0 or -0.0 in the columns the mask zeroes, j mod 7 = 4, 5, 6: the sign of an exact zero sum is left open)"
                    if variant.has("zero_column_mask")
                    else ""
                ),
            ),
        ]
        if kept:
            checks.append((not defined[:32, : variant.n].any(), "lanes 0-31, disabled, are not updated: they still hold no value"))
        return _checks(*checks)

    return expect


def _variant_why(variant: MmaVariant) -> str:
    parts = [f"A (128 x {variant.k}) all 1.0" + (" in Tensor Memory" if variant.has("a_tmem") else "") + f", B ({variant.k} x {variant.n}) all 2.0"]
    if variant.has("sp"):
        parts.append("sparse A: the metadata stores 2 of each 4 elements, so K/2 products")
    if variant.block_scale:
        parts.append("every scale factor of A is 2^1, of B 2^0 (ue8m0 0x80, 0x7f): D = 2 x (A*B) (§9.7.16.10.7)")
    if variant.has("disable_output_lane"):
        parts.append(
            'disable-output-lane {0xffffffff, 0, 0, 0}: "if the bit in the mask is 1, then the corresponding lane ... will not be updated"; bit 0 of the first element is lane 0'
        )
    if variant.has("scale_input_d"):
        parts.append('first D = A*B, then with enable-input-d and scale-input-d = 1: "D = A*B+D * (2 ^ - scale-input-d)" = 1.5 x A*B')
    if variant.has("zero_column_mask"):
        parts.append("the zero-column mask descriptor of the manual's Example 2 (§9.7.16.4.3): from column 0, 4 columns of B used, then 3 zeroed, repeatedly")
    return "; ".join(parts) + " (§9.7.16.10.9)."


def tcgen05_mma_variant(family: str) -> StateExample:
    """The worked example of one tcgen05.mma family, from its catalogue key's parts."""
    variant = MmaVariant(family)
    text = _variant_text(variant)
    steps = [Step(ALLOC, (0x3FF0, 128))]
    if variant.has("scale_input_d"):
        steps.append(Step(text, _variant_sources(variant, text, 0)))
    steps.append(Step(text, _variant_sources(variant, text, 1 if variant.has("scale_input_d") else 0)))
    title = f"M = 128, N = {variant.n}, K = {variant.k}" + ("" if len(steps) == 2 else ", twice")
    return StateExample(family, title, lambda: _variant_state(variant), tuple(steps), _expect_variant(variant), _variant_why(variant))


TCGEN05_MMA_VARIANTS = (
    "tcgen05.mma.disable_output_lane",
    "tcgen05.mma.scale_input_d",
    "tcgen05.mma.disable_output_lane.scale_input_d",
    "tcgen05.mma.a_tmem",
    "tcgen05.mma.a_tmem.disable_output_lane",
    "tcgen05.mma.a_tmem.scale_input_d",
    "tcgen05.mma.a_tmem.disable_output_lane.scale_input_d",
    "tcgen05.mma.block_scale",
    "tcgen05.mma.block_scale.a_tmem",
    "tcgen05.mma.sp.disable_output_lane",
    "tcgen05.mma.sp.scale_input_d",
    "tcgen05.mma.sp.disable_output_lane.scale_input_d",
    "tcgen05.mma.sp.a_tmem",
    "tcgen05.mma.sp.a_tmem.disable_output_lane",
    "tcgen05.mma.sp.a_tmem.scale_input_d",
    "tcgen05.mma.sp.a_tmem.disable_output_lane.scale_input_d",
    "tcgen05.mma.sp.block_scale",
    "tcgen05.mma.sp.block_scale.a_tmem",
    "tcgen05.mma.ws.zero_column_mask",
    "tcgen05.mma.ws.a_tmem",
    "tcgen05.mma.ws.a_tmem.zero_column_mask",
    "tcgen05.mma.ws.sp.zero_column_mask",
    "tcgen05.mma.ws.sp.a_tmem",
    "tcgen05.mma.ws.sp.a_tmem.zero_column_mask",
)
MMA_VARIANT_EXAMPLES = [tcgen05_mma_variant(family) for family in TCGEN05_MMA_VARIANTS]


# --- tcgen05.ld/st .16x32bx2 (§9.7.16.8.3-4): two .16x32b accesses, at taddr and at
# --- taddr + immHalfSplitoff ------------------------------------------------------------------

SPLIT = 16  # immHalfSplitoff: the second access 16 columns on


def _expect_split_store(run: Run) -> list[tuple[bool, str]]:
    before, after = run.states[1], run.states[2]
    changed = after.tensor_memory.changed_cells(before.tensor_memory)
    lanes = sorted({lane for lane, _, _ in changed})
    columns = sorted({column for _, column, _ in changed})
    return _checks(
        (len(lanes) == 16, "the warp's store reaches 16 lanes of Tensor Memory"),
        (
            columns == [0, SPLIT],
            f"one column at taddr (column 0) and one at taddr + immHalfSplitoff (column {SPLIT}): 32 threads x 32 bits = 16 lanes x 2 cells",
        ),
        (run.registers[2][0] == STORED[0], "a load of the same shape and offset gives every thread back its register"),
    )


#: .16x32bx2.x2 ld.red examples: each thread's two registers.
SPLIT_S32 = (tuple((t - 16) & 0xFFFFFFFF for t in range(32)), tuple((16 - t) & 0xFFFFFFFF for t in range(32)))
SPLIT_F32 = (tuple(f32(-2.5 - t) for t in range(32)), tuple(F32_QNAN if t == 5 else f32(float(t)) for t in range(32)))


def _signed(word: int) -> int:
    return word - (1 << 32) if word >> 31 else word


def _expect_split_red_int(run: Run) -> list[tuple[bool, str]]:
    redval = run.registers[2][2]
    want = tuple(min(_signed(a), _signed(b)) & 0xFFFFFFFF for a, b in zip(*SPLIT_S32))
    return _checks(
        (run.registers[2][:2] == SPLIT_S32, "the registers receive the stored values"),
        (redval == want, "redval is the signed minimum of each thread's two values: min(t - 16, 16 - t), negative for every thread but 16"),
    )


def _expect_split_red_nan(run: Run) -> list[tuple[bool, str]]:
    redval = run.registers[2][2]
    want = tuple(0x7FFFFFFF if t == 5 else f32(-2.5 - t) for t in range(32))
    return _checks(
        (
            redval == want,
            'redval = min(-2.5 - t, t) = -2.5 - t, except thread 5, whose second value is a NaN: ".NaN ... the result is the canonical NaN" (0x7fffffff)',
        ),
    )


SPLIT_EXAMPLES = [
    StateExample(
        "tcgen05.st.16x32bx2",
        "Store and load a .16x32bx2.x1",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.16x32bx2.x1.b32", (0, SPLIT, STORED[0])),
            Step("tcgen05.ld.sync.aligned.16x32bx2.x1.b32", (0, SPLIT)),
        ),
        _expect_split_store,
        '".16x32bx2 performs two tensor memory accesses of shape .16x32b. The base address of the first access is specified by taddr and the base '
        'address of the second access is specified by taddr+immHalfSplitoff" (§9.7.16.8.4); "the warp ... accesses 16 lanes of Tensor Memory" (§9.7.16.2.3.1.5).',
    ),
    StateExample(
        "tcgen05.ld.16x32bx2",
        "Load back a .16x32bx2.x2",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.16x32bx2.x2.b32", (0, SPLIT, *STORED[:2])),
            Step("tcgen05.ld.sync.aligned.16x32bx2.x2.b32", (0, SPLIT)),
        ),
        lambda run: _checks((run.registers[2] == STORED[:2], "every thread gets back both registers it stored with the same shape, taddr and immHalfSplitoff")),
        "A load of the shape and offsets a store used reads the cells that store wrote (§9.7.16.8.3).",
    ),
    StateExample(
        "tcgen05.ld.red.int.16x32bx2",
        "Load with a signed .min reduction",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.16x32bx2.x2.b32", (0, SPLIT, *SPLIT_S32)),
            Step("tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.s32", (0, SPLIT)),
        ),
        _expect_split_red_int,
        "The reduction is performed across the values each thread loads and written to its redval (§9.7.16.8.3); .s32 compares as signed integers.",
    ),
    StateExample(
        "tcgen05.ld.red.f32.16x32bx2",
        "Load with .min.NaN, one thread holding a NaN",
        _state,
        (
            Step(ALLOC, (0x10, 32)),
            Step("tcgen05.st.sync.aligned.16x32bx2.x2.b32", (0, SPLIT, *SPLIT_F32)),
            Step("tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.NaN.f32", (0, SPLIT)),
        ),
        _expect_split_red_nan,
        "Thread t stored -2.5 - t and t (.f32), thread 5 a NaN instead of 5.0; .min.NaN propagates a NaN operand as the canonical NaN (§9.7.16.8.3).",
    ),
]


# --- ldmatrix with a source format (§9.7.14.5.15), mma of sm_120 (§9.7.14.5.14) ------------------


def _expect_unpacked(run: Run) -> list[tuple[bool, str]]:
    (registers,) = run.registers[0]
    containers = [(word >> (8 * i)) & 0xFF for word in registers for i in range(4)]
    return _checks(
        (
            all(((c >> 2) & 0xF) == 0x5 for c in containers),
            "every 8-bit container of every thread's register holds the 4-bit element 0x5 in its middle 4 bits (bits 5-2)",
        ),
    )


def _warp_d(value: int, registers: int = 4):
    """An expectation: every thread's D registers (of step 0) are ``value``."""

    def expect(run: Run) -> list[tuple[bool, str]]:
        return _checks(
            (
                all(v == value for d in run.registers[0][:registers] for v in d),
                f"every D register of the 32 threads is {value:#010x}, the one value the manual allows",
            )
        )

    return expect


E4M3_WORD_ONE, E4M3_WORD_TWO = 0x38383838, 0x40404040
MMA120 = "mma.sync.aligned.m16n8k32.row.col.kind::{kind}.f32.e4m3.e4m3.f32{scale}"
MMA120_SP = "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::{kind}.f32.e4m3.e4m3.f32{scale}"
#: scale_a_data / scale_b_data of the block-scaled forms: every ue8m0 byte 2^1 (A), 2^0 (B); the
#: selectors id-a, id-b 0 (§9.7.14.5.14: "scale_A ... scale_B ... ue8m0").
SCALES = (0x80808080, 0, 0, 0x7F7F7F7F, 0, 0)

MATRIX_EXAMPLES = [
    StateExample(
        "ldmatrix.fmt",
        "Unpack 4-bit elements into 8-bit containers",
        lambda: _state((bytes([0x55]) * 8 + bytes([0xFF]) * 8) * 8),
        (Step("ldmatrix.sync.aligned.m8n16.x1.shared::cta.b8x16.b4x16_p64", (tuple(16 * (t % 8) for t in range(32)),)),),
        _expect_unpacked,
        'Eight rows of ".b4x16_p64: 16 unsigned 4-bit elements with 64 bits of padding", every element 0x5; "for 4-bit ... data, the 8-bit element will '
        'have 4 bits ... of padding", and an .e2m1 element "is in the middle 4 bits of the 8-bit container" (§9.7.14.5.15, §9.7.14.5.14); the padding bytes (0xff) are not read.',
    ),
    StateExample(
        "mma.f8f6f4",
        "A all 1.0, B all 2.0: D = 2K",
        _state,
        (Step(MMA120.format(kind="f8f6f4", scale=""), (*[E4M3_WORD_ONE] * 4, *[E4M3_WORD_TWO] * 2, *[0] * 4)),),
        _warp_d(f32(64.0)),
        "Every .e4m3 element of A is 1.0 (0x38), of B 2.0 (0x40), C = 0: each element of D is the sum of K = 32 products 2.0, exactly 64.0, whatever the fragment layouts and the accumulation order.",
    ),
    StateExample(
        "mma.block_scale",
        "Block-scaled: every scale of A 2, of B 1",
        _state,
        (Step(MMA120.format(kind="mxf8f6f4.block_scale.scale_vec::1X", scale=".ue8m0"), (*[E4M3_WORD_ONE] * 4, *[E4M3_WORD_TWO] * 2, *[0] * 4, *SCALES)),),
        _warp_d(f32(128.0)),
        "As above, with every scale factor of A 2^1 and of B 2^0 (ue8m0 0x80, 0x7f): D = (A x scale_A)(B x scale_B) = 2 x 64 = 128.0 (§9.7.14.5.14, block scaling).",
    ),
    StateExample(
        "mma.sp.f8f6f4",
        "Sparse A (2:4): D = 2 x K/2",
        _state,
        (Step(MMA120_SP.format(kind="f8f6f4", scale=""), (*[E4M3_WORD_ONE] * 4, *[E4M3_WORD_TWO] * 4, *[0] * 4, 0x44444444, 0)),),
        _warp_d(f32(64.0)),
        "A stores 32 of its K = 64 elements a row (all 1.0), the metadata 0b0100 in every field placing them at elements 0 and 1 of each group of four (§9.7.14.6.1); B all 2.0: 32 products, 64.0.",
    ),
    StateExample(
        "mma.sp.block_scale",
        "Sparse and block-scaled",
        _state,
        (
            Step(
                MMA120_SP.format(kind="mxf8f6f4.block_scale.scale_vec::1X", scale=".ue8m0"),
                (*[E4M3_WORD_ONE] * 4, *[E4M3_WORD_TWO] * 4, *[0] * 4, 0x44444444, 0, *SCALES),
            ),
        ),
        _warp_d(f32(128.0)),
        "The sparse example with the scale factors of the block-scaled one: 2 x 64 = 128.0.",
    ),
]


# --- scalar forms without a recording --------------------------------------------------------

F32_HALF_F16_ULP = f32(1.0 + 2.0**-11)  # 0x3f801000: its 13 bits below f16's mantissa are 0x1000
F32_HALF_BF16_ULP = f32(1.0 + 2.0**-8)  # 0x3f808000: its 16 bits below bf16's mantissa are 0x8000

EXAMPLES.extend(
    [
        # §9.7.9.21 cvt with .rs: "rounded towards zero or away from zero based on the carry out of the
        # integer addition of the supplied random bits (rbits) to the truncated bits (discarded bits)
        # from the input mantissa".
        Example(
            "cvt.rs.f16x2.f32",
            (F32_HALF_F16_ULP, F32_HALF_F16_ULP, 0x10000FFF),
            (Bits(0x3C013C00),),
            "1 + 2^-11 is halfway between two f16 values; its 13 discarded bits are 0x1000. For a (d[31:16]) rbits[28:16] = 0x1000: "
            "0x1000 + 0x1000 carries, away from zero: 0x3c01. For b (d[15:0]) rbits[12:0] = 0x0fff: no carry, towards zero: 0x3c00.",
        ),
        Example(
            "cvt.rs.bf16x2.f32",
            (F32_HALF_BF16_ULP | 0x80000000, F32_HALF_BF16_ULP, 0x80007FFF),
            (Bits(0xBF813F80),),
            "bf16: the upper 16 bits of rbits serve a, the lower b. -(1 + 2^-8): 0x8000 + 0x8000 carries, away from zero: -(1 + 2^-7) = 0xbf81; "
            "1 + 2^-8 with 0x7fff: no carry, 0x3f80.",
        ),
        Example(
            "cvt.rs.satfinite.e2m1x4.f32",
            (f32(100.0), f32(2.5), f32(-2.5), f32(0.5), 0),
            (Bits(0x74C1),),
            "rbits = 0 never carries: .rs truncates. 100 becomes 6.0, e2m1's largest finite (.satfinite), 0b0111 in d[15:12]; 2.5 becomes 2.0 (0b0100, d[11:8]); "
            "-2.5 becomes -2.0 (0b1100, d[7:4]); 0.5 (subnormal, 0b0001) is exact (d[3:0]).",
        ),
        # §9.7.9.4 mov: packing and unpacking.
        Example("mov.b16 d, {a.x, a.y}", (0x12, 0x34), (Bits(0x3412),), '"d = a.x | (a.y << 8)" (§9.7.9.4): a.x is the low byte.'),
        Example(
            "mov.b32 d, {a.x, a.y, a.z, a.w}", (0x11, 0x22, 0x33, 0x44), (Bits(0x44332211),), '"d = a.x | (a.y << 8) | (a.z << 16) | (a.w << 24)" (§9.7.9.4).'
        ),
        Example("mov.b16 {d.x, d.y}, a", (0xBEEF,), (Bits(0xEF), Bits(0xBE)), '"{ d.x, d.y } = { a[0..7], a[8..15] }" (§9.7.9.4).'),
        Example(
            "mov.b32 {d.x, d.y, d.z, d.w}, a",
            (0x80FF017F,),
            (Bits(0x7F), Bits(0x01), Bits(0xFF), Bits(0x80)),
            '"{ d.x, d.y, d.z, d.w } = { a[0..7], a[8..15], a[16..23], a[24..31] }" (§9.7.9.4): bytes, no sign extension.',
        ),
        # §9.7.9.18 createpolicy: "an opaque 64-bit cache policy" -- any bits.
        Example(
            "createpolicy.range.L2::evict_last.b64",
            (GLOBAL, 0x1000, 0x2000),
            (Allows((0, 0xFFFFFFFFFFFFFFFF)),),
            '"createpolicy ... creates a cache eviction policy ... and writes it into the 64-bit opaque cache-policy" (§9.7.9.18): the manual gives no bits, so every 64-bit value is allowed.',
        ),
        Example(
            "createpolicy.cvt.L2.b64",
            (0x1234,),
            (Allows((0, 0xFFFFFFFFFFFFFFFF)),),
            "createpolicy.cvt converts an access property into an opaque cache-policy (§9.7.9.18): any 64 bits.",
        ),
    ]
)

STATE_EXAMPLES.extend([*MEMORY_EXAMPLES, *MULTIMEM_EXAMPLES, *MBARRIER_EXAMPLES, *ASYNC_EXAMPLES, *MMA_VARIANT_EXAMPLES, *SPLIT_EXAMPLES, *MATRIX_EXAMPLES])
