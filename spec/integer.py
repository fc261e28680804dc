"""Catalogue entries for §9.7.1, the integer arithmetic instructions, and §9.7.2, the
extended-precision integer arithmetic instructions.

Each family is one syntax line of the manual. Where a qualifier exists only on some types (".sat
... applies only to .s32", ".wide suffix is supported only for 16- and 32-bit integer types") the
slot admits it and a :class:`Rule` quoting the manual forbids the rest.

The carry flag of §9.7.2 ("the condition code register CC.CF") is modelled as an explicit 1-bit
operand named ``CC.CF``: a destination (after ``d``) of the ``.cc`` forms and a source (after the
register sources) of ``addc``, ``subc`` and ``madc``.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import target_at as _target
from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid

INT_TYPES = ("u16", "u32", "u64", "s16", "s32", "s64")
SAT = Slot("sat", ("sat",))

CARRY = "CC.CF"


def register_type(type_name: str) -> str:
    """Packed .u16x2/.s16x2 operands "have .b32 type" (§9.7.1.1)."""
    return "b32" if type_name in ("u16x2", "s16x2") else type_name


def wide_type(type_name: str) -> str:
    """The type twice as wide, for ``.wide``: "d is twice as wide as a and b" (§9.7.1.3)."""
    return f"{type_name[0]}{2 * int(type_name[1:])}"


def _operands(*names: str) -> Callable[[Form], tuple[Operand, ...]]:
    """``d, a, b, ...``: the first is the destination, all of the instruction type."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = register_type(form["type"])
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def _sat_only_s32(section: str) -> Rule:
    return forbid("sat", lambda f: f["type"] != "s32", lambda f: f'`.sat` is not allowed with `.{f["type"]}`: ".sat ... applies only to .s32 type"', section)


def _wide_only_16_32(section: str) -> Rule:
    return forbid(
        "mode",
        lambda f: f["mode"] == "wide" and f["type"] in ("u64", "s64"),
        lambda f: f'`.wide` is not allowed with `.{f["type"]}`: "the .wide suffix is supported only for 16- and 32-bit integer types"',
        section,
    )


def _packed_target(form: Form) -> Target:
    """ ".u16x2 and .s16x2 introduced in PTX ISA version 8.0", "require sm_90 or higher"."""
    if form["type"] in ("u16x2", "s16x2"):
        return _target((8, 0), 90)
    return _target((1, 0), 10)


# ---------------------------------------------------------------------------------------------
# §9.7.1.1-2 add, sub
# ---------------------------------------------------------------------------------------------

ADD = Family(
    opcode="add",
    key="add.int",
    section="9.7.1.1",
    # "add.type d, a, b;" / "add{.sat}.s32 d, a, b; // .sat applies only to .s32"
    slots=(SAT, Slot("type", (*INT_TYPES, "u16x2", "s16x2"), required=True)),
    operands=_operands("d", "a", "b"),
    rules=(_sat_only_s32("9.7.1.1"),),
    target=_packed_target,
    summary="Add two integer values (wrapping, or saturating on .s32).",
)

SUB = Family(
    opcode="sub",
    key="sub.int",
    section="9.7.1.2",
    slots=(SAT, Slot("type", INT_TYPES, required=True)),
    operands=_operands("d", "a", "b"),
    rules=(_sat_only_s32("9.7.1.2"),),
    target=_target((1, 0), 10),
    summary="Subtract one integer value from another.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.1.3-6 mul, mad, mul24, mad24
# ---------------------------------------------------------------------------------------------


def _mul_operands(form: Form) -> tuple[Operand, ...]:
    """ "If .wide is specified, then d is twice as wide as a and b" (§9.7.1.3)."""
    t = form["type"]
    d = wide_type(t) if form["mode"] == "wide" else t
    return (Operand("d", d, destination=True), Operand("a", t), Operand("b", t))


def _mad_operands(form: Form) -> tuple[Operand, ...]:
    """ "If .wide is specified, then d and c are twice as wide as a and b" (§9.7.1.4)."""
    t = form["type"]
    w = wide_type(t) if form["mode"] == "wide" else t
    return (Operand("d", w, destination=True), Operand("a", t), Operand("b", t), Operand("c", w))


def _sat_only_hi_s32(section: str) -> Rule:
    return forbid(
        "sat",
        lambda f: not (f["type"] == "s32" and f["mode"] == "hi"),
        '`.sat` applies only to .s32 type in .hi mode ("mad.hi.sat.s32 d, a, b, c;")',
        section,
    )


MUL = Family(
    opcode="mul",
    key="mul.int",
    section="9.7.1.3",
    slots=(Slot("mode", ("hi", "lo", "wide"), required=True), Slot("type", INT_TYPES, required=True)),
    operands=_mul_operands,
    rules=(_wide_only_16_32("9.7.1.3"),),
    target=_target((1, 0), 10),
    summary="Multiply two integers, keeping the low half, the high half, or the whole product.",
)

MAD = Family(
    opcode="mad",
    key="mad.int",
    section="9.7.1.4",
    slots=(Slot("mode", ("hi", "lo", "wide"), required=True), SAT, Slot("type", INT_TYPES, required=True)),
    operands=_mad_operands,
    rules=(_wide_only_16_32("9.7.1.4"), _sat_only_hi_s32("9.7.1.4")),
    target=_target((1, 0), 10),
    summary="Multiply two integers, take the low or high half (or all), and add a third.",
)

MUL24 = Family(
    opcode="mul24",
    key="mul24",
    section="9.7.1.5",
    slots=(Slot("mode", ("hi", "lo"), required=True), Slot("type", ("u32", "s32"), required=True)),
    operands=_operands("d", "a", "b"),
    target=_target((1, 0), 10),
    summary="Multiply two 24-bit integer values.",
)

MAD24 = Family(
    opcode="mad24",
    key="mad24",
    section="9.7.1.6",
    slots=(Slot("mode", ("hi", "lo"), required=True), SAT, Slot("type", ("u32", "s32"), required=True)),
    operands=_operands("d", "a", "b", "c"),
    rules=(_sat_only_hi_s32("9.7.1.6"),),
    target=_target((1, 0), 10),
    summary="Multiply two 24-bit integer values and add a third value.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.1.7-13 sad, div, rem, abs, neg, min, max
# ---------------------------------------------------------------------------------------------


def _simple(opcode: str, section: str, types: tuple[str, ...], names: tuple[str, ...], summary: str, key: str | None = None) -> Family:
    return Family(
        opcode=opcode,
        key=key or opcode,
        section=section,
        slots=(Slot("type", types, required=True),),
        operands=_operands(*names),
        target=_target((1, 0), 10),
        summary=summary,
    )


SAD = _simple("sad", "9.7.1.7", INT_TYPES, ("d", "a", "b", "c"), "Sum of absolute differences.")
DIV = _simple("div", "9.7.1.8", INT_TYPES, ("d", "a", "b"), "Divide one integer by another.", key="div.int")
REM = _simple("rem", "9.7.1.9", INT_TYPES, ("d", "a", "b"), "The remainder of integer division.")
ABS = _simple("abs", "9.7.1.10", ("s16", "s32", "s64"), ("d", "a"), "Absolute value of a signed integer.", key="abs.int")
NEG = _simple("neg", "9.7.1.11", ("s16", "s32", "s64"), ("d", "a"), "Arithmetic negation of a signed integer.", key="neg.int")


def _min_max_target(form: Form) -> Target:
    """ "min.u16x2, min{.relu}.s16x2 and min.relu.s32 introduced in PTX ISA version 8.0",
    "require sm_90 or higher" (§9.7.1.12, likewise §9.7.1.13)."""
    if form["type"] in ("u16x2", "s16x2") or "relu" in form:
        return _target((8, 0), 90)
    return _target((1, 0), 10)


def _min_max(opcode: str, section: str, summary: str) -> Family:
    """``op.atype d, a, b;`` and ``op{.relu}.btype d, a, b;`` with .atype = { .u16, .u32, .u64,
    .u16x2, .s16, .s64 } and .btype = { .s16x2, .s32 }."""
    return Family(
        opcode=opcode,
        key=f"{opcode}.int",
        section=section,
        slots=(Slot("relu", ("relu",)), Slot("type", ("u16", "u32", "u64", "u16x2", "s16", "s64", "s16x2", "s32"), required=True)),
        operands=_operands("d", "a", "b"),
        rules=(
            forbid(
                "relu",
                lambda f: f["type"] not in ("s16x2", "s32"),
                lambda f: f"`.relu` is not allowed with `.{f['type']}`: only `{opcode}{{.relu}}.btype` with .btype = {{ .s16x2, .s32 }} has it",
                section,
            ),
        ),
        target=_min_max_target,
        summary=summary,
    )


MIN = _min_max("min", "9.7.1.12", "The minimum of two integers.")
MAX = _min_max("max", "9.7.1.13", "The maximum of two integers.")


# ---------------------------------------------------------------------------------------------
# §9.7.1.14-22 popc, clz, bfind, fns, brev, bfe, bfi, szext, bmsk
# ---------------------------------------------------------------------------------------------


def _count_operands(form: Form) -> tuple[Operand, ...]:
    """ "Operand a has the instruction type and destination d has type .u32" (§9.7.1.14-16)."""
    return (Operand("d", "u32", destination=True), Operand("a", form["type"]))


def _counting(opcode: str, section: str, types: tuple[str, ...], summary: str, slots: tuple[Slot, ...] = ()) -> Family:
    # "Introduced in PTX ISA version 2.0." "requires sm_20 or higher."
    return Family(
        opcode=opcode,
        key=opcode,
        section=section,
        slots=(*slots, Slot("type", types, required=True)),
        operands=_count_operands,
        target=_target((2, 0), 20),
        summary=summary,
    )


POPC = _counting("popc", "9.7.1.14", ("b32", "b64"), "Population count.")
CLZ = _counting("clz", "9.7.1.15", ("b32", "b64"), "Count leading zeros.")
BFIND = _counting("bfind", "9.7.1.16", ("u32", "u64", "s32", "s64"), "Find the most significant non-sign bit.", (Slot("shiftamt", ("shiftamt",)),))

FNS = Family(
    opcode="fns",
    key="fns",
    section="9.7.1.17",
    slots=(Slot("type", ("b32",), required=True),),
    # "fns.b32 d, mask, base, offset;" "Operand offset has .s32 type."
    operands=lambda form: (Operand("d", "b32", destination=True), Operand("mask", "b32"), Operand("base", "b32"), Operand("offset", "s32")),
    # "Introduced in PTX ISA version 6.0." "fns requires sm_30 or higher."
    target=_target((6, 0), 30),
    summary="Find the n-th set bit.",
)

BREV = Family(
    opcode="brev",
    key="brev",
    section="9.7.1.18",
    slots=(Slot("type", ("b32", "b64"), required=True),),
    operands=_operands("d", "a"),
    target=_target((2, 0), 20),
    summary="Bit reverse.",
)

BFE = Family(
    opcode="bfe",
    key="bfe",
    section="9.7.1.19",
    slots=(Slot("type", ("u32", "u64", "s32", "s64"), required=True),),
    # "Operands a and d have the same type as the instruction type. Operands b and c are type .u32"
    operands=lambda form: (Operand("d", form["type"], destination=True), Operand("a", form["type"]), Operand("b", "u32"), Operand("c", "u32")),
    target=_target((2, 0), 20),
    summary="Bit field extract.",
)

BFI = Family(
    opcode="bfi",
    key="bfi",
    section="9.7.1.20",
    slots=(Slot("type", ("b32", "b64"), required=True),),
    # "bfi.type f, a, b, c, d;" "Operands a, b and f have the same type as the instruction type.
    # Operands c and d are type .u32"
    operands=lambda form: (
        Operand("f", form["type"], destination=True),
        Operand("a", form["type"]),
        Operand("b", form["type"]),
        Operand("c", "u32"),
        Operand("d", "u32"),
    ),
    target=_target((2, 0), 20),
    summary="Bit field insert.",
)

SZEXT = Family(
    opcode="szext",
    key="szext",
    section="9.7.1.21",
    slots=(Slot("mode", ("clamp", "wrap"), required=True), Slot("type", ("u32", "s32"), required=True)),
    operands=lambda form: (Operand("d", form["type"], destination=True), Operand("a", form["type"]), Operand("b", "u32")),
    # "Introduced in PTX ISA version 7.6." "szext requires sm_70 or higher."
    target=_target((7, 6), 70),
    summary="Sign-extend or zero-extend an N-bit value.",
)

BMSK = Family(
    opcode="bmsk",
    key="bmsk",
    section="9.7.1.22",
    slots=(Slot("mode", ("clamp", "wrap"), required=True), Slot("type", ("b32",), required=True)),
    operands=_operands("d", "a", "b"),
    target=_target((7, 6), 70),
    summary="Bit field mask.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.1.23-24 dp4a, dp2a
# ---------------------------------------------------------------------------------------------


def _dp_operands(form: Form) -> tuple[Operand, ...]:
    """ "If .atype and .btype are both .u32, operand c has type .u32; otherwise .s32"; d likewise."""
    c = "u32" if form["atype"] == form["btype"] == "u32" else "s32"
    return (Operand("d", c, destination=True), Operand("a", form["atype"]), Operand("b", form["btype"]), Operand("c", c))


DP4A = Family(
    opcode="dp4a",
    key="dp4a",
    section="9.7.1.23",
    slots=(Slot("atype", ("u32", "s32"), required=True), Slot("btype", ("u32", "s32"), required=True)),
    operands=_dp_operands,
    # "Introduced in PTX ISA version 5.0." "Requires sm_61 or higher."
    target=_target((5, 0), 61),
    summary="Four-way byte dot product, accumulated in 32 bits.",
)

DP2A = Family(
    opcode="dp2a",
    key="dp2a",
    section="9.7.1.24",
    slots=(Slot("mode", ("lo", "hi"), required=True), Slot("atype", ("u32", "s32"), required=True), Slot("btype", ("u32", "s32"), required=True)),
    operands=_dp_operands,
    target=_target((5, 0), 61),
    summary="Two-way 16-bit by 8-bit dot product, accumulated in 32 bits.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.2 extended precision: add.cc, addc, sub.cc, subc, mad.cc, madc
# ---------------------------------------------------------------------------------------------

CC_TYPES = ("u32", "s32", "u64", "s64")


def _carry_operands(names: tuple[str, ...], carry_in: bool):
    """The register operands, then the carry flag: an extra destination after ``d`` when ``.cc``
    is given ("the carry-out value is written to CC.CF"), an extra source after the registers for
    the carry-in forms ("d = a + b + CC.CF")."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = form["type"]
        out = [Operand(names[0], t, destination=True)]
        if "cc" in form:
            out.append(Operand(CARRY, "pred", destination=True))
        out.extend(Operand(n, t) for n in names[1:])
        if carry_in:
            out.append(Operand(CARRY, "pred"))
        return tuple(out)

    return operands


def _cc_target(ptx32: tuple[int, int], sm32: int):
    """ "32-bit <op> introduced in PTX ISA version <ptx32>", "64-bit ... in PTX ISA version 4.3";
    "64-bit ... requires sm_20 or higher"."""

    def target(form: Form) -> Target:
        if form["type"] in ("u64", "s64"):
            return _target((4, 3), 20)
        return _target(ptx32, sm32)

    return target


def _extended(opcode: str, key: str, section: str, cc_required: bool, carry_in: bool, summary: str, mode: bool = False) -> Family:
    slots = (Slot("mode", ("hi", "lo"), required=True),) if mode else ()
    names = ("d", "a", "b", "c") if mode else ("d", "a", "b")
    ptx32, sm32 = ((3, 0), 20) if mode else ((1, 2), 10)
    return Family(
        opcode=opcode,
        key=key,
        section=section,
        slots=(*slots, Slot("cc", ("cc",), required=cc_required), Slot("type", CC_TYPES, required=True)),
        operands=_carry_operands(names, carry_in),
        target=_cc_target(ptx32, sm32),
        summary=summary,
    )


ADD_CC = _extended("add", "add.cc", "9.7.2.1", True, False, "Add two values with carry-out.")
ADDC = _extended("addc", "addc", "9.7.2.2", False, True, "Add two values with carry-in and optional carry-out.")
SUB_CC = _extended("sub", "sub.cc", "9.7.2.3", True, False, "Subtract one value from another, with borrow-out.")
SUBC = _extended("subc", "subc", "9.7.2.4", False, True, "Subtract one value from another, with borrow-in and optional borrow-out.")
MAD_CC = _extended("mad", "mad.cc", "9.7.2.5", True, False, "Multiply, take the high or low half, and add a third value with carry-out.", mode=True)
MADC = _extended(
    "madc", "madc", "9.7.2.6", False, True, "Multiply, take the high or low half, and add a third value with carry-in and optional carry-out.", mode=True
)


FAMILIES: list[Family] = [
    ADD, SUB, MUL, MAD, MUL24, MAD24, SAD, DIV, REM, ABS, NEG, MIN, MAX,
    POPC, CLZ, BFIND, FNS, BREV, BFE, BFI, SZEXT, BMSK, DP4A, DP2A,
    ADD_CC, ADDC, SUB_CC, SUBC, MAD_CC, MADC,
]  # fmt: skip
