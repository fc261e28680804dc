"""Catalogue entries for §9.7.6 (comparison and selection: set, setp, selp, slct) and the
half-precision setp of §9.7.7.2.

Which comparison operator goes with which type is said in the "Integer Notes" and "Floating Point
Notes" of §9.7.6.1/§9.7.6.2; each sentence is a :class:`Rule` below. ptxas 13.0 agrees: it rejects
``setp.lt.b32``, ``setp.lo.s32``, ``setp.lo.b32``, ``setp.equ.u32`` and ``setp.lo.f32`` with
"Mismatch between instruction type and comparison qualifier", and ``setp.ftz.lt.s32`` with
"Illegal modifier '.ftz'".

The ``{!}c`` source: the caller gives c's value after any ``!`` (the negation is an operand
modifier of the instruction text, not a qualifier).
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid

ORDERED = ("eq", "ne", "lt", "le", "gt", "ge")
UNSIGNED_ONLY = ("lo", "ls", "hi", "hs")
FLOAT_ONLY = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
CMP = Slot("cmp", ORDERED + UNSIGNED_ONLY + FLOAT_ONLY, required=True)
HALF_CMP = Slot("cmp", ORDERED + FLOAT_ONLY, required=True)
BOOLOP = Slot("boolop", ("and", "or", "xor"))
FTZ = Slot("ftz", ("ftz",))
INTEGER_SOURCES = ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64")
SOURCE_TYPES = (*INTEGER_SOURCES, "f32", "f64")


def _kind(type_name: str) -> str:
    """ "u", "s", "b" for the integer types, "f" for the floating-point ones (bf16 included)."""
    return type_name[0] if type_name in INTEGER_SOURCES else "f"


def _cmp_rules(slot: str, section: str, *, ftz: bool = True) -> tuple[Rule, ...]:
    def kind(form: Form) -> str:
        return _kind(form[slot])

    return (
        forbid(
            "cmp",
            lambda f: f["cmp"] in UNSIGNED_ONLY and kind(f) != "u",
            lambda f: (
                f'`.{f["cmp"]}` needs an unsigned type, not `.{f[slot]}` ("for unsigned values, the comparison operators lo, ls, hi, and hs may be used")'
            ),
            section,
        ),
        forbid(
            "cmp",
            lambda f: f["cmp"] not in ("eq", "ne") and kind(f) == "b",
            lambda f: f'`.{f["cmp"]}` is not allowed with the untyped `.{f[slot]}` ("the untyped, bit-size comparisons are eq and ne")',
            section,
        ),
        forbid(
            "cmp",
            lambda f: f["cmp"] in FLOAT_ONLY and kind(f) != "f",
            lambda f: f"`.{f['cmp']}` is a floating-point comparison; `.{f[slot]}` is not a floating-point type (Floating Point Notes)",
            section,
        ),
    ) + (
        (
            forbid(
                "ftz",
                lambda f: f[slot] != "f32",
                lambda f: f'`.ftz` is not allowed with `.{f[slot]}` ("modifier .ftz applies only to .f32 comparisons")',
                section,
            ),
        )
        if ftz
        else ()
    )


def _f64_target(slot: str):
    """ "set/setp/selp/slct with .f64 source type requires sm_13 or higher" (sm_13 came with PTX ISA 1.2)."""
    return lambda form: Target((1, 2), 13) if form[slot] == "f64" else Target()


def _c_operand(form: Form) -> tuple[Operand, ...]:
    return (Operand("c", "pred"),) if form.get("boolop") else ()


SETP = Family(
    opcode="setp",
    key="setp",
    section="9.7.6.2",
    slots=(CMP, BOOLOP, FTZ, Slot("type", SOURCE_TYPES, required=True)),
    # "setp.CmpOp.BoolOp{.ftz}.type p[|q], a, b, {!}c;" -- q is the optional second destination.
    operands=lambda f: (Operand("p", "pred", True), Operand("q", "pred", True), Operand("a", f["type"]), Operand("b", f["type"]), *_c_operand(f)),
    rules=_cmp_rules("type", "9.7.6.2"),
    target=_f64_target("type"),
    summary="Compare two numeric values with a relational operator, and optionally combine with a predicate.",
)

SET = Family(
    opcode="set",
    key="set",
    section="9.7.6.1",
    slots=(CMP, BOOLOP, FTZ, Slot("dtype", ("u32", "s32", "f32"), required=True), Slot("stype", SOURCE_TYPES, required=True)),
    operands=lambda f: (Operand("d", f["dtype"], True), Operand("a", f["stype"]), Operand("b", f["stype"]), *_c_operand(f)),
    rules=_cmp_rules("stype", "9.7.6.1"),
    target=_f64_target("stype"),
    summary="Compare two numeric values with a relational operator, and optionally combine with a predicate; write a mask or 1.0f.",
)

SELP = Family(
    opcode="selp",
    key="selp",
    section="9.7.6.3",
    slots=(Slot("type", SOURCE_TYPES, required=True),),
    operands=lambda f: (Operand("d", f["type"], True), Operand("a", f["type"]), Operand("b", f["type"]), Operand("c", "pred")),
    target=_f64_target("type"),
    summary="Select between source operands, based on the value of the predicate source operand.",
)

SLCT = Family(
    opcode="slct",
    key="slct",
    section="9.7.6.4",
    # "slct.dtype.s32 d, a, b, c;  slct{.ftz}.dtype.f32 d, a, b, c;"
    slots=(FTZ, Slot("dtype", SOURCE_TYPES, required=True), Slot("ctype", ("s32", "f32"), required=True)),
    operands=lambda f: (Operand("d", f["dtype"], True), Operand("a", f["dtype"]), Operand("b", f["dtype"]), Operand("c", f["ctype"])),
    rules=(
        forbid("ftz", lambda f: f["ctype"] != "f32", '`.ftz` is only in the `.f32` syntax line ("modifier .ftz applies only to .f32 comparisons")', "9.7.6.4"),
    ),
    target=_f64_target("dtype"),
    summary="Select one source operand, based on the sign of the third operand.",
)


def _half_operands(form: Form) -> tuple[Operand, ...]:
    """ "For instruction type .f16, operands a and b have type .b16 or .f16. For instruction type
    .f16x2, operands a and b have type .b32" (likewise .bf16, .bf16x2); .f16x2 writes ``p|q``."""
    packed = form["type"].endswith("x2")
    register = "b32" if packed else "b16"
    destinations = (Operand("p", "pred", True), Operand("q", "pred", True)) if packed else (Operand("p", "pred", True),)
    return (*destinations, Operand("a", register), Operand("b", register), *_c_operand(form))


SETP_HALF = Family(
    opcode="setp",
    key="setp.half",
    section="9.7.7.2",
    slots=(HALF_CMP, BOOLOP, FTZ, Slot("type", ("f16", "f16x2", "bf16", "bf16x2"), required=True)),
    operands=_half_operands,
    rules=(
        forbid(
            "ftz",
            lambda f: f["type"].startswith("bf16"),
            lambda f: f"`.ftz` is not allowed with `.{f['type']}` (the bf16 syntax lines have no {{.ftz}})",
            "9.7.7.2",
        ),
    ),
    # "Introduced in PTX ISA version 4.2." "setp.{bf16/bf16x2} introduced in PTX ISA version 7.8."
    # "Requires sm_53 or higher." "setp.{bf16/bf16x2} requires sm_90 or higher."
    target=lambda f: Target((7, 8), 90) if f["type"].startswith("bf16") else Target((4, 2), 53),
    summary="Half-precision comparison, lane-wise for the packed types.",
)

#: §9.7.7.1's syntax lines: the destination types that go with each source type. ptxas 13.0 also
#: accepts ``set.CmpOp.bf16.bf16``, which no syntax line lists; it is admitted here as ptxas does.
HALF_SET_DTYPES: dict[str, tuple[str, ...]] = {
    **{t: ("f16", "bf16") for t in (*INTEGER_SOURCES, "f32", "f64")},
    "f16": ("f16", "bf16", "u16", "s16", "u32", "s32"),
    "bf16": ("bf16", "u16", "s16", "u32", "s32"),
    "f16x2": ("f16x2", "u32", "s32"),
    "bf16x2": ("bf16x2", "u32", "s32"),
}


def _half_set_target(form: Form) -> Target:
    """§9.7.7.1: "Introduced in PTX ISA version 4.2"; "set.{u16, u32, s16, s32}.f16 and
    set.{u32, s32}.f16x2 are introduced in PTX ISA version 6.5"; the bf16 forms "introduced in PTX
    ISA version 7.8" and "require sm_90 or higher"; otherwise "requires sm_53 or higher"."""
    if "bf16" in form["dtype"] or "bf16" in form["stype"]:
        return Target((7, 8), 90)
    if form["dtype"] in ("u16", "s16", "u32", "s32"):
        return Target((6, 5), 53)
    return Target((4, 2), 53)


def _half_register(type_name: str) -> str:
    return "b32" if type_name.endswith("x2") else "b16" if type_name in ("f16", "bf16") else type_name


SET_HALF = Family(
    opcode="set",
    key="set.half",
    section="9.7.7.1",
    slots=(
        CMP,
        BOOLOP,
        FTZ,
        Slot("dtype", ("f16", "bf16", "u16", "s16", "u32", "s32", "f16x2", "bf16x2"), required=True),
        Slot("stype", (*SOURCE_TYPES, "f16", "bf16", "f16x2", "bf16x2"), required=True),
    ),
    operands=lambda f: (
        Operand("d", _half_register(f["dtype"]), True),
        Operand("a", _half_register(f["stype"])),
        Operand("b", _half_register(f["stype"])),
        *_c_operand(f),
    ),
    rules=(
        Rule(
            lambda f: f["dtype"] not in HALF_SET_DTYPES[f["stype"]],
            lambda f: (
                f"`.{f['dtype']}` results are not produced from `.{f['stype']}` sources (§9.7.7.1 syntax: .{f['stype']} goes with "
                + ", ".join("." + t for t in HALF_SET_DTYPES[f["stype"]])
                + ")"
            ),
            "9.7.7.1",
        ),
        *_cmp_rules("stype", "9.7.7.1", ftz=False),
        forbid(
            "ftz",
            lambda f: f["stype"] not in ("f16", "f16x2", "f32") or "bf16" in f["dtype"],
            lambda f: f"`.ftz` is not allowed with `.{f['dtype']}.{f['stype']}` (only the f16 syntax lines have {{.ftz}}; it flushes subnormal f16/f32 inputs)",
            "9.7.7.1",
        ),
    ),
    target=_half_set_target,
    summary="Half-precision comparison that writes a mask or 1.0 in half precision, lane-wise for the packed types.",
)

FAMILIES: list[Family] = [SET, SETP, SELP, SLCT, SET_HALF, SETP_HALF]
