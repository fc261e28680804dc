"""Catalogue entries for §9.7.3, the floating-point instructions on .f32, .f32x2 and .f64.

Only the exact forms live here: testp, copysign, add, sub, mul, fma, mad, div.rnd, abs, neg, min,
max, rcp.rnd and sqrt.rnd. The approximate forms (``.approx``, ``div.full``) are families of their
own in :mod:`ptxspec.spec.floating_point_approx`; the keys ``div.rnd``, ``rcp.rnd`` and
``sqrt.rnd`` keep the two apart.

Table 28 (§9.7.3) is the qualifier matrix: ``.rnd`` and ``.ftz`` and ``.sat`` exist on the
single-precision add/sub/mul/mad/fma; on ``.f64`` "``.ftz`` and ``.sat``: not applicable"; div, rcp
and sqrt take ``.rnd`` and ``.ftz`` but no ``.sat``; abs, neg, min and max take only ``.ftz``, and only
on ``.f32``. Each family's slots are the manual's syntax line; what the syntax line alone does not
say is a :class:`Rule` quoting the manual.

Targets: the "PTX ISA notes" and "Target ISA notes" of each section. A form that needs a target
also needs the PTX ISA version that introduced that target string (§11.1.2: "sm_12 and sm_13 were
introduced in PTX ISA version 1.2", "sm_20 in PTX ISA version 2.0"), so
:func:`_target` raises the version to that one.
"""

from __future__ import annotations

from ptxspec.spec.catalogue import target_at as _target
from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid

RND = Slot("rnd", ("rn", "rz", "rm", "rp"))
RND_REQUIRED = Slot("rnd", ("rn", "rz", "rm", "rp"), required=True)
FTZ = Slot("ftz", ("ftz",))
SAT = Slot("sat", ("sat",))


def _is(type_name: str):
    return lambda form: form.get("type") == type_name


def _register_type(form: Form) -> str:
    """.f32x2 operands are .b64 registers: "for the .f32x2 instruction type, operands d, a and b
    have .b64 type" (§9.7.3.3)."""
    return "b64" if form["type"] == "f32x2" else form["type"]


def _operands(*names: str):
    """``d, a, b, ...``: the first is the destination, all of the instruction type."""

    def operands(form: Form) -> tuple[Operand, ...]:
        t = _register_type(form)
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def _no_ftz_on_f64(section: str) -> Rule:
    return forbid("ftz", _is("f64"), "`.ftz` is not allowed with `.f64` (Table 28: not applicable; double precision keeps subnormals)", section)


def _sat_only_on_f32(section: str) -> Rule:
    return forbid("sat", lambda f: f["type"] != "f32", lambda f: f"`.sat` is not allowed with `.{f['type']}` (only the .f32 syntax line has {{.sat}})", section)


# ---------------------------------------------------------------------------------------------
# §9.7.3.1 testp, §9.7.3.2 copysign
# ---------------------------------------------------------------------------------------------

TESTP = Family(
    opcode="testp",
    key="testp",
    section="9.7.3.1",
    slots=(
        Slot("op", ("finite", "infinite", "number", "notanumber", "normal", "subnormal"), required=True),
        Slot("type", ("f32", "f64"), required=True),
    ),
    # "testp.op.type p, a; // result is .pred"
    operands=lambda form: (Operand("p", "pred", destination=True), Operand("a", form["type"])),
    # "Introduced in PTX ISA version 2.0." "Requires sm_20 or higher."
    target=_target((2, 0), 20),
    summary="Test a floating-point property.",
)

COPYSIGN = Family(
    opcode="copysign",
    key="copysign",
    section="9.7.3.2",
    slots=(Slot("type", ("f32", "f64"), required=True),),
    operands=_operands("d", "a", "b"),
    # "Introduced in PTX ISA version 2.0." "Requires sm_20 or higher."
    target=_target((2, 0), 20),
    summary="Copy the sign of one input to another.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.3.3-5 add, sub, mul
# ---------------------------------------------------------------------------------------------


def _add_sub_mul_target(form: Form) -> Target:
    """Target ISA notes of §9.7.3.3-5: ".f64 requires sm_13 or higher"; ".rm, .rp: for .f32 require
    sm_20 or higher"; ".f32x2 requires sm_100 or higher", introduced in PTX ISA version 8.6."""
    if form["type"] == "f32x2":
        return _target((8, 6), 100)
    if form["type"] == "f64":
        return _target((1, 0), 13)
    if form.get("rnd") in ("rm", "rp"):
        return _target((1, 0), 20)
    return _target((1, 0), 10)


def _add_sub_mul(opcode: str, section: str, summary: str) -> Family:
    """``op{.rnd}{.ftz}{.sat}.f32``, ``op{.rnd}{.ftz}.f32x2``, ``op{.rnd}.f64``; "the default value
    of the rounding modifier is .rn"."""
    return Family(
        opcode=opcode,
        key=f"{opcode}.f",
        section=section,
        slots=(RND, FTZ, SAT, Slot("type", ("f32", "f32x2", "f64"), required=True)),
        operands=_operands("d", "a", "b"),
        rules=(_no_ftz_on_f64(section), _sat_only_on_f32(section)),
        target=_add_sub_mul_target,
        summary=summary,
    )


# ---------------------------------------------------------------------------------------------
# §9.7.3.6 fma, §9.7.3.7 mad
# ---------------------------------------------------------------------------------------------


def _fma_target(form: Form) -> Target:
    """§9.7.3.6: "fma.f64 introduced in PTX ISA version 1.4", "fma.f32 in 2.0", "fma.f32x2 in
    8.6"; "fma.f32 requires sm_20 or higher. fma.f64 requires sm_13 or higher. fma.f32x2 requires
    sm_100 or higher"."""
    return {"f32": _target((2, 0), 20), "f64": _target((1, 4), 13), "f32x2": _target((8, 6), 100)}[form["type"]]


FMA = Family(
    opcode="fma",
    key="fma.f",
    section="9.7.3.6",
    # "fma.rnd{.ftz}{.sat}.f32", "fma.rnd{.ftz}.f32x2", "fma.rnd.f64": "rounding modifiers (no default)".
    slots=(RND_REQUIRED, FTZ, SAT, Slot("type", ("f32", "f32x2", "f64"), required=True)),
    operands=_operands("d", "a", "b", "c"),
    rules=(_no_ftz_on_f64("9.7.3.6"), _sat_only_on_f32("9.7.3.6")),
    target=_fma_target,
    summary="Fused multiply-add.",
)


def _mad_without_rounding(form: Form) -> str:
    if form["type"] == "f64":
        return 'mad.f64 requires a rounding modifier (.rn, .rz, .rm, .rp) from PTX ISA version 1.4 ("the legacy mad.f64 without one maps to mad.rn.f64" only before that)'
    return (
        'mad.f32 without a rounding modifier is the legacy `.target sm_1x` form; "in PTX ISA version 2.0 and '
        'later, mad.f32 requires a rounding modifier for sm_20 and higher targets" (the erratum: ptxas enforces it '
        "from PTX ISA 3.2); use mad.rn.f32, which is fma.rn.f32"
    )


def _mad_target(form: Form) -> Target:
    """§9.7.3.7 Target ISA notes: ".rn, .rz, .rm, .rp for mad.f64 require sm_13 or higher"
    (rounding required from PTX ISA 1.4); "for mad.f32 require sm_20 or higher" (rounding
    modifiers added to mad.f32 in PTX ISA 2.0, Appendix "Floating-point extensions")."""
    return _target((1, 4), 13) if form["type"] == "f64" else _target((2, 0), 20)


MAD = Family(
    opcode="mad",
    key="mad.f",
    section="9.7.3.7",
    # "mad{.ftz}{.sat}.f32 // .target sm_1x", "mad.rnd{.ftz}{.sat}.f32 // .target sm_20",
    # "mad.rnd.f64 // .target sm_13 and higher". The .rnd slot is optional so that the legacy form is
    # recognised and refused with the manual's reason (the catalogue describes sm_20 and later; a
    # Target has no upper bound to say "sm_1x only").
    slots=(RND, FTZ, SAT, Slot("type", ("f32", "f64"), required=True)),
    operands=_operands("d", "a", "b", "c"),
    rules=(
        Rule(lambda f: f.get("rnd") is None, _mad_without_rounding, "9.7.3.7"),
        _no_ftz_on_f64("9.7.3.7"),
        _sat_only_on_f32("9.7.3.7"),
    ),
    target=_mad_target,
    summary="Multiply two values and add a third (the same as fma for sm_20 and later).",
)


# ---------------------------------------------------------------------------------------------
# §9.7.3.8 div.rnd, §9.7.3.13 rcp.rnd, §9.7.3.15 sqrt.rnd
# ---------------------------------------------------------------------------------------------


def _ieee_target(f64_rn_ptx: tuple[int, int]):
    """The Target ISA notes shared by div, rcp and sqrt: ".rnd.f32 requires sm_20 or higher";
    ".rn.f64 requires sm_13 or higher"; ".{rz,rm,rp}.f64 require sm_20 or higher"."""

    def target(form: Form) -> Target:
        if form["type"] == "f64" and form["rnd"] == "rn":
            return _target(f64_rn_ptx, 13)
        return _target(f64_rn_ptx, 20)

    return target


def _ieee_family(opcode: str, section: str, operands: tuple[str, ...], f64_rn_ptx: tuple[int, int], summary: str) -> Family:
    """``op.rnd{.ftz}.f32`` and ``op.rnd.f64``: "IEEE 754 compliant rounding", "rounding modifiers
    (no default)"; the ``.approx``/``.full`` syntax lines are other families."""
    return Family(
        opcode=opcode,
        key=f"{opcode}.rnd",
        section=section,
        slots=(RND_REQUIRED, FTZ, Slot("type", ("f32", "f64"), required=True)),
        operands=_operands(*operands),
        rules=(_no_ftz_on_f64(section),),
        target=_ieee_target(f64_rn_ptx),
        summary=summary,
    )


# §9.7.3.8: "explicit modifiers .approx, .full, .ftz and rounding introduced in PTX ISA version 1.4".
DIV = _ieee_family("div", "9.7.3.8", ("d", "a", "b"), (1, 4), "Divide one value by another, IEEE 754 rounding.")
# §9.7.3.13 / §9.7.3.15: "rcp.rn.f64 (sqrt.rn.f64) and explicit modifiers .approx and .ftz were introduced
# in PTX ISA version 1.4. General rounding modifiers were added in PTX ISA version 2.0" -- every form but
# .rn.f64 needs sm_20, which itself needs PTX ISA 2.0.
RCP = _ieee_family("rcp", "9.7.3.13", ("d", "a"), (1, 4), "Reciprocal, IEEE 754 rounding.")
SQRT = _ieee_family("sqrt", "9.7.3.15", ("d", "a"), (1, 4), "Square root, IEEE 754 rounding.")


# ---------------------------------------------------------------------------------------------
# §9.7.3.9 abs, §9.7.3.10 neg, §9.7.3.11 min, §9.7.3.12 max
# ---------------------------------------------------------------------------------------------


def _f32_all_targets_f64_sm13(form: Form) -> Target:
    """ "op.f32 supported on all target architectures. op.f64 requires sm_13 or higher"."""
    return _target((1, 0), 13) if form["type"] == "f64" else _target((1, 0), 10)


def _sign_family(opcode: str, section: str, summary: str) -> Family:
    """``op{.ftz}.f32 d, a;`` and ``op.f64 d, a;``."""
    return Family(
        opcode=opcode,
        key=f"{opcode}.f",
        section=section,
        slots=(FTZ, Slot("type", ("f32", "f64"), required=True)),
        operands=_operands("d", "a"),
        rules=(_no_ftz_on_f64(section),),
        target=_f32_all_targets_f64_sm13,
        summary=summary,
    )


def _min_max_target(form: Form) -> Target:
    """§9.7.3.11-12: ".NaN introduced in PTX ISA version 7.0, requires sm_80"; ".xorsign.abs
    introduced in PTX ISA version 7.2, requires sm_86"; ".f64 requires sm_13"."""
    if "xorsign" in form:
        return _target((7, 2), 86)
    if "NaN" in form:
        return _target((7, 0), 80)
    return _f32_all_targets_f64_sm13(form)


def _min_max(opcode: str, section: str, summary: str) -> Family:
    """``op{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b;`` and ``op.f64 d, a, b;`` (the three-source form
    is not in PTX ISA 8.7)."""
    f64_only_plain = lambda slot: forbid(  # noqa: E731
        slot, _is("f64"), f"`.{slot}` is not allowed with `.f64` (the syntax is `{opcode}.f64 d, a, b;`)", section
    )
    return Family(
        opcode=opcode,
        key=f"{opcode}.f",
        section=section,
        slots=(FTZ, Slot("NaN", ("NaN",)), Slot("xorsign", ("xorsign",)), Slot("abs", ("abs",)), Slot("type", ("f32", "f64"), required=True)),
        operands=_operands("d", "a", "b"),
        rules=(
            Rule(
                lambda f: ("xorsign" in f) != ("abs" in f),
                '"the modifiers .abs and .xorsign must be specified together"',
                section,
            ),
            f64_only_plain("ftz"),
            f64_only_plain("NaN"),
            f64_only_plain("xorsign"),
        ),
        target=_min_max_target,
        summary=summary,
    )


FAMILIES: list[Family] = [
    TESTP,
    COPYSIGN,
    _add_sub_mul("add", "9.7.3.3", "Add two values."),
    _add_sub_mul("sub", "9.7.3.4", "Subtract one value from another."),
    _add_sub_mul("mul", "9.7.3.5", "Multiply two values."),
    FMA,
    MAD,
    DIV,
    _sign_family("abs", "9.7.3.9", "Absolute value."),
    _sign_family("neg", "9.7.3.10", "Arithmetic negation."),
    _min_max("min", "9.7.3.11", "The minimum of two values."),
    _min_max("max", "9.7.3.12", "The maximum of two values."),
    RCP,
    SQRT,
]
