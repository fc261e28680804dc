"""Catalogue entries for §9.7.8, the logic and shift instructions.

"The logic and shift instructions are fundamentally untyped, performing bit-wise operations on
operands of any type, provided the operands are of the same size ... and, or, xor and not also
operate on predicates" (§9.7.8). Each family is one syntax line of the manual.

lop3's ``immLut`` is an immediate in PTX; here it is an 8-bit source operand (".b8": "an integer
constant that can take values from 0 to 255", §9.7.8.6), given after a, b and c.
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Slot, Target, same_type_operands

_BITWISE_TYPES = ("pred", "b16", "b32", "b64")


def _bitwise(opcode: str, section: str, summary: str) -> Family:
    """``op.type d, a, b;`` with ``.type = { .pred, .b16, .b32, .b64 }`` (§9.7.8.1-3)."""
    return Family(
        opcode=opcode,
        key=opcode,
        section=section,
        slots=(Slot("type", _BITWISE_TYPES, required=True),),
        operands=same_type_operands("d", "a", "b"),
        # "Introduced in PTX ISA version 1.0." "Supported on all target architectures."
        summary=summary,
    )


AND = _bitwise("and", "9.7.8.1", "Bitwise AND.")
OR = _bitwise("or", "9.7.8.2", "Bitwise OR.")
XOR = _bitwise("xor", "9.7.8.3", "Bitwise exclusive-OR (inequality).")

NOT = Family(
    opcode="not",
    key="not",
    section="9.7.8.4",
    slots=(Slot("type", _BITWISE_TYPES, required=True),),
    operands=same_type_operands("d", "a"),
    summary="Bitwise negation; one's complement.",
)

CNOT = Family(
    opcode="cnot",
    key="cnot",
    section="9.7.8.5",
    # "cnot.type d, a; .type = { .b16, .b32, .b64 };" -- no .pred.
    slots=(Slot("type", ("b16", "b32", "b64"), required=True),),
    operands=same_type_operands("d", "a"),
    summary="C/C++ style logical negation.",
)


def _lop3_operands(form: Form) -> tuple[Operand, ...]:
    """``lop3.b32 d, a, b, c, immLut;``"""
    return (Operand("d", "b32", True), Operand("a", "b32"), Operand("b", "b32"), Operand("c", "b32"), Operand("immLut", "b8"))


LOP3 = Family(
    opcode="lop3",
    key="lop3",
    section="9.7.8.6",
    slots=(Slot("type", ("b32",), required=True),),
    operands=_lop3_operands,
    # "Introduced in PTX ISA version 4.3." "Requires sm_50 or higher."
    target=Target((4, 3), 50),
    summary="Arbitrary logical operation on 3 inputs.",
)


def _lop3_boolop_operands(form: Form) -> tuple[Operand, ...]:
    """``lop3.BoolOp.b32 d|p, a, b, c, immLut, q;`` (d may be the sink ``_``)."""
    return (*_lop3_operands(form)[:1], Operand("p", "pred", True), *_lop3_operands(form)[1:], Operand("q", "pred"))


LOP3_BOOLOP = Family(
    opcode="lop3",
    key="lop3.boolop",
    section="9.7.8.6",
    slots=(Slot("boolop", ("or", "and"), required=True), Slot("type", ("b32",), required=True)),
    operands=_lop3_boolop_operands,
    # "Support for .BoolOp qualifier introduced in PTX ISA version 8.2."
    # "Qualifier .BoolOp requires sm_70 or higher."
    target=Target((8, 2), 70),
    summary="Arbitrary logical operation on 3 inputs, and a predicate from the result.",
)

SHF = Family(
    opcode="shf",
    key="shf",
    section="9.7.8.7",
    # "shf.l.mode.b32 d, a, b, c;  shf.r.mode.b32 d, a, b, c;  .mode = { .clamp, .wrap };"
    slots=(Slot("dir", ("l", "r"), required=True), Slot("mode", ("clamp", "wrap"), required=True), Slot("type", ("b32",), required=True)),
    operands=same_type_operands("d", "a", "b", "c"),
    # "Introduced in PTX ISA version 3.1." "Requires sm_32 or higher."
    target=Target((3, 1), 32),
    summary="Funnel shift.",
)


def _shift_operands(form: Form) -> tuple[Operand, ...]:
    """``d, a`` of the instruction type; "the b operand must be a 32-bit value, regardless of the
    instruction type" (§9.7.8.8, §9.7.8.9)."""
    t = form["type"]
    return (Operand("d", t, True), Operand("a", t), Operand("b", "u32"))


SHL = Family(
    opcode="shl",
    key="shl",
    section="9.7.8.8",
    slots=(Slot("type", ("b16", "b32", "b64"), required=True),),
    operands=_shift_operands,
    summary="Shift bits left, zero-fill on right.",
)

SHR = Family(
    opcode="shr",
    key="shr",
    section="9.7.8.9",
    slots=(Slot("type", ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"), required=True),),
    operands=_shift_operands,
    summary="Shift bits right, sign or zero-fill on left.",
)

FAMILIES: list[Family] = [AND, OR, XOR, NOT, CNOT, LOP3, LOP3_BOOLOP, SHF, SHL, SHR]
