"""Catalogue entries for §9.7.18, the video instructions: the scalar forms of §9.7.18.1 (vadd,
vsub, vabsdiff, vmin, vmax, vshl, vshr, vmad, vset) and the SIMD forms of §9.7.18.2 (vadd2 ...
vset2, vadd4 ... vset4).

"All video instructions operate on 32-bit register operands." The scalar syntax lines are::

    vop.dtype.atype.btype{.sat}        d, a{.asel}, b{.bsel};
    vop.dtype.atype.btype{.sat}.secop  d, a{.asel}, b{.bsel}, c;
    vop.dtype.atype.btype{.sat}        d.dsel, a{.asel}, b{.bsel}, c;

    .dtype = .atype = .btype = { .u32, .s32 };
    .dsel  = .asel  = .bsel  = { .b0, .b1, .b2, .b3, .h0, .h1 };
    .secop = { .add, .min, .max };

**Operand selectors as qualifier slots.** In PTX the selectors are written on the operands
(``d.b1``, ``a.h0``), not on the opcode. A :class:`Form` is the opcode and its qualifiers only, so
the three selectors are modelled as three more optional slots, ``dsel``, ``asel`` and ``bsel``,
whose tokens name the operand they belong to: ``dsel_b1``, ``asel_h0``, ``bsel_b3``. So the PTX
instruction ``vadd.s32.u32.s32.sat.add r1, r2.b0, r3.h1, r4;`` is the form
``vadd.s32.u32.s32.sat.add.asel_b0.bsel_h1`` applied to the bits of r2, r3 and r4. This keeps one
form per distinct meaning (the selector changes the semantics as much as ``.sat`` does), keeps
legality as data (an unknown selector is an unknown qualifier, ``.secop`` with ``dsel_*`` is a
rule), and lets ``ptxspec eval`` take every variant on the command line. A form without an
``asel``/``bsel`` token uses the whole 32-bit word; without ``dsel_*`` there is no merge.

The SIMD forms (§9.7.18.2) write ``d{.mask}, a{.asel}, b{.bsel}, c`` the same way: slots
``mask`` (tokens ``dsel_h10``, ``dsel_b3210``, ...), ``asel`` and ``bsel`` (``asel_h32``,
``bsel_b7654``, ...); an absent token is the manual's default (mask ``.h10``/``.b3210``, asel
``.h10``/``.b3210``, bsel ``.h32``/``.b7654``).

The operand ``c`` exists in the ``.secop`` form and in the merge form (``d.dsel``); "the sign of
the third operand is based on dtype", so c has the destination's type.

**vmad's operand negations as qualifier slots** (§9.7.18.1.3). vmad writes ``{-}a``, ``{-}b`` and
``{-}c`` on its operands; like the selectors they become optional slots whose tokens name their
operand: ``neg_a``, ``neg_b``, ``neg_c``. So ``vmad.s32.s32.u32.sat r0, r1, r2, -r3;`` is the form
``vmad.s32.s32.u32.sat.neg_c`` and ``vmad.u32.u32.u32.shr15 r0, -r1.h0, r2.h0, r3;`` is
``vmad.u32.u32.u32.shr15.neg_a.asel_h0.bsel_h0``. vmad has no ``.secop`` and no ``d.dsel``
(ptxas 13.0: "Video selector is not allowed on destination for instruction 'vmad'").
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target

SECTION = "9.7.18.1"

INTEGER_32 = ("u32", "s32")
SELECTORS = ("b0", "b1", "b2", "b3", "h0", "h1")

SAT = Slot("sat", ("sat",))
SECOP = Slot("secop", ("add", "min", "max"))
DSEL = Slot("dsel", tuple("dsel_" + s for s in SELECTORS))
ASEL = Slot("asel", tuple("asel_" + s for s in SELECTORS))
BSEL = Slot("bsel", tuple("bsel_" + s for s in SELECTORS))


def selector(form: Form, slot: str) -> str | None:
    """The selector (``"b0"`` ... ``"h1"``) of the operand that ``slot`` ("dsel", "asel" or "bsel")
    belongs to, or None when the whole word is used."""
    token = form.get(slot)
    return None if token is None else token.split("_", 1)[1]


def destination_type(form: Form) -> str:
    """dtype; vset has none: "The intermediate result of the comparison is always unsigned, and
    therefore destination d and operand c are also unsigned" (§9.7.18.1.4)."""
    return form.get("dtype") or "u32"


def _operands(form: Form) -> tuple[Operand, ...]:
    """``d, a, b`` and, for the secondary operation or the merge, ``c`` of the destination type."""
    dtype = destination_type(form)
    operands: tuple[Operand, ...] = (Operand("d", dtype, destination=True), Operand("a", form["atype"]), Operand("b", form["btype"]))
    if form.get("secop") is not None or form.get("dsel") is not None:
        operands += (Operand("c", dtype),)
    return operands


#: The two syntax lines: "with optional secondary operation" and "with optional data merge".
SECOP_OR_MERGE = Rule(
    lambda f: f.get("secop") is not None and f.get("dsel") is not None,
    "a secondary operation (.add/.min/.max) and a destination selector (d.b0..d.h1) exclude each other: "
    "the syntax has either `.secop d, a, b, c` or `d.dsel, a, b, c`",
    SECTION,
)

#: "Introduced in PTX ISA version 2.0." "... require sm_20 or higher."
SM_20 = Target((2, 0), 20)


def _scalar(opcode: str, section: str, summary: str) -> Family:
    """``vop.dtype.atype.btype{.sat}{.secop}`` with the three selector slots (§9.7.18.1.1)."""
    return Family(
        opcode=opcode,
        key=opcode,
        section=section,
        slots=(
            Slot("dtype", INTEGER_32, required=True),
            Slot("atype", INTEGER_32, required=True),
            Slot("btype", INTEGER_32, required=True),
            SAT,
            SECOP,
            DSEL,
            ASEL,
            BSEL,
        ),
        operands=_operands,
        rules=(SECOP_OR_MERGE,),
        target=SM_20,
        summary=summary,
    )


def _shift(opcode: str, summary: str) -> Family:
    """``vop.dtype.atype.u32{.sat}.mode{.secop}`` (§9.7.18.1.2): b is always .u32, ``.mode`` is
    required."""
    return Family(
        opcode=opcode,
        key=opcode,
        section="9.7.18.1.2",
        slots=(
            Slot("dtype", INTEGER_32, required=True),
            Slot("atype", INTEGER_32, required=True),
            Slot("btype", ("u32",), required=True),
            SAT,
            Slot("mode", ("clamp", "wrap"), required=True),
            SECOP,
            DSEL,
            ASEL,
            BSEL,
        ),
        operands=_operands,
        rules=(SECOP_OR_MERGE,),
        target=SM_20,
        summary=summary,
    )


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.3 vmad
# ---------------------------------------------------------------------------------------------

#: "{-}a", "{-}b", "{-}c": the operand negations, one slot each, tokens named after the operand.
NEG_A = Slot("aneg", ("neg_a",))
NEG_B = Slot("bneg", ("neg_b",))
NEG_C = Slot("cneg", ("neg_c",))


def product_negated(form: Form) -> bool:
    """ "(a*b) is negated if and only if exactly one of a or b is negated" (§9.7.18.1.3)."""
    return ("neg_a" in form) != ("neg_b" in form)


def signed_final(form: Form) -> bool:
    """``signedFinal = isSigned(atype) || isSigned(btype) || (a.negate ^ b.negate) || c.negate``:
    whether the final result (and so c, "Input c has the same sign as the intermediate result") is
    signed. dtype takes no part in it."""
    return form["atype"] == "s32" or form["btype"] == "s32" or product_negated(form) or "neg_c" in form


def _vmad_operands(form: Form) -> tuple[Operand, ...]:
    """``d, a, b, c``; c is .s32 when the final result is signed, else .u32 (the pseudo-code's
    ``c128 = (signedFinal) sext32( c ) : zext ( c )``)."""
    ctype = "s32" if signed_final(form) else "u32"
    return (Operand("d", form["dtype"], destination=True), Operand("a", form["atype"]), Operand("b", form["btype"]), Operand("c", ctype))


VMAD = Family(
    opcode="vmad",
    key="vmad",
    section="9.7.18.1.3",
    # "vmad.dtype.atype.btype{.sat}{.scale}     d, {-}a{.asel}, {-}b{.bsel}, {-}c;"
    # "vmad.dtype.atype.btype.po{.sat}{.scale}  d, a{.asel}, b{.bsel}, c;"
    slots=(
        Slot("dtype", INTEGER_32, required=True),
        Slot("atype", INTEGER_32, required=True),
        Slot("btype", INTEGER_32, required=True),
        Slot("po", ("po",)),
        SAT,
        Slot("scale", ("shr7", "shr15")),
        NEG_A,
        NEG_B,
        NEG_C,
        ASEL,
        BSEL,
    ),
    operands=_vmad_operands,
    rules=(
        Rule(
            lambda f: "po" in f and any(t in f for t in ("neg_a", "neg_b", "neg_c")),
            '"Source operands may not be negated in .po mode" (neg_a/neg_b/neg_c with .po)',
            "9.7.18.1.3",
        ),
        Rule(
            lambda f: product_negated(f) and "neg_c" in f,
            '"PTX allows negation of either (a*b) or c": negating exactly one of a and b (the product) excludes negating c',
            "9.7.18.1.3",
        ),
    ),
    target=SM_20,
    summary="Integer byte/half-word/word multiply-accumulate.",
)


VSET = Family(
    opcode="vset",
    key="vset",
    section="9.7.18.1.4",
    # "vset.atype.btype.cmp{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}": no dtype, no .sat.
    slots=(
        Slot("atype", INTEGER_32, required=True),
        Slot("btype", INTEGER_32, required=True),
        Slot("cmp", ("eq", "ne", "lt", "le", "gt", "ge"), required=True),
        SECOP,
        DSEL,
        ASEL,
        BSEL,
    ),
    operands=_operands,
    rules=(SECOP_OR_MERGE,),
    target=SM_20,
    summary="Integer byte/half-word/word comparison.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.18.2 SIMD video instructions
# ---------------------------------------------------------------------------------------------

#: "Saturation cannot be used with the secondary accumulate operation."
SAT_OR_ADD = Rule(
    lambda f: f.get("sat") is not None and f.get("secop") is not None,
    "`.sat` cannot be used with the secondary accumulate operation `.add`",
    "9.7.18.2",
)

#: "Introduced in PTX ISA version 3.0." "... require sm_30 or higher."
SM_30 = Target((3, 0), 30)


def simd_selectors(lanes: int) -> tuple[Slot, Slot, Slot]:
    """The mask of d and the selectors of a and b of the 2-way (``.h10``, ``.hxy``) or 4-way
    (``.b3210``, ``.bxyzw``) forms, as ``mask``, ``asel`` and ``bsel`` slots whose tokens name
    their operand (``dsel_h10``, ``asel_h32``, ``bsel_b7654``)."""
    masks: tuple[str, ...]
    if lanes == 2:
        masks = ("h0", "h1", "h10")
        picks = tuple("h" + x + y for x in "0123" for y in "0123")
    else:
        masks = ("b0", "b1", "b10", "b2", "b20", "b21", "b210", "b3", "b30", "b31", "b310", "b32", "b320", "b321", "b3210")
        picks = tuple("b" + x + y + z + w for x in "01234567" for y in "01234567" for z in "01234567" for w in "01234567")
    return (
        Slot("mask", tuple("dsel_" + m for m in masks)),
        Slot("asel", tuple("asel_" + p for p in picks)),
        Slot("bsel", tuple("bsel_" + p for p in picks)),
    )


def _simd_operands(form: Form) -> tuple[Operand, ...]:
    """``d, a, b, c``: c is always there (the merge source or the accumulator)."""
    dtype = destination_type(form)
    return (Operand("d", dtype, destination=True), Operand("a", form["atype"]), Operand("b", form["btype"]), Operand("c", dtype))


def _simd(opcode: str, lanes: int, summary: str) -> Family:
    """``vop2/vop4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c``."""
    return Family(
        opcode=opcode,
        key=opcode,
        section="9.7.18.2.1" if lanes == 2 else "9.7.18.2.3",
        slots=(
            Slot("dtype", INTEGER_32, required=True),
            Slot("atype", INTEGER_32, required=True),
            Slot("btype", INTEGER_32, required=True),
            SAT,
            Slot("secop", ("add",)),
            *simd_selectors(lanes),
        ),
        operands=_simd_operands,
        rules=(SAT_OR_ADD,),
        target=SM_30,
        summary=summary,
    )


#: The SIMD arithmetic opcodes' stems and what they compute.
SIMD_OPERATIONS = (
    ("vadd", "addition"),
    ("vsub", "subtraction"),
    ("vavrg", "average"),
    ("vabsdiff", "absolute value of difference"),
    ("vmin", "minimum"),
    ("vmax", "maximum"),
)


def _simd_set(opcode: str, lanes: int) -> Family:
    """``vset2/vset4.atype.btype.cmp{.add} d{.mask}, a{.asel}, b{.bsel}, c``."""
    return Family(
        opcode=opcode,
        key=opcode,
        section="9.7.18.2.2" if lanes == 2 else "9.7.18.2.4",
        slots=(
            Slot("atype", INTEGER_32, required=True),
            Slot("btype", INTEGER_32, required=True),
            Slot("cmp", ("eq", "ne", "lt", "le", "gt", "ge"), required=True),
            Slot("secop", ("add",)),
            *simd_selectors(lanes),
        ),
        operands=_simd_operands,
        target=SM_30,
        summary=f"Integer {'dual half-word' if lanes == 2 else 'quad byte'} SIMD comparison.",
    )


FAMILIES: list[Family] = [
    _scalar("vadd", "9.7.18.1.1", "Integer byte/half-word/word addition."),
    _scalar("vsub", "9.7.18.1.1", "Integer byte/half-word/word subtraction."),
    _scalar("vabsdiff", "9.7.18.1.1", "Integer byte/half-word/word absolute value of difference."),
    _scalar("vmin", "9.7.18.1.1", "Integer byte/half-word/word minimum."),
    _scalar("vmax", "9.7.18.1.1", "Integer byte/half-word/word maximum."),
    _shift("vshl", "Integer byte/half-word/word left shift."),
    _shift("vshr", "Integer byte/half-word/word right shift."),
    VMAD,
    VSET,
    *(_simd(op + "2", 2, f"Integer dual half-word SIMD {what}.") for op, what in SIMD_OPERATIONS),
    _simd_set("vset2", 2),
    *(_simd(op + "4", 4, f"Integer quad byte SIMD {what}.") for op, what in SIMD_OPERATIONS),
    _simd_set("vset4", 4),
]
