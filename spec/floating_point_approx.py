"""Catalogue entries for the approximate forms of §9.7.3 (``.approx`` and ``div.full``).

Table 28 of §9.7.3 gives the qualifier matrix: ``{div,rcp,sqrt}.approx.f32``, ``div.full.f32``,
``rsqrt.approx.f32`` and ``{sin,cos,lg2,ex2}.approx.f32`` take ``.ftz`` and no rounding modifier;
``rcp.approx.ftz.f64`` and ``rsqrt.approx.ftz.f64`` exist only with ``.ftz``; ``rsqrt.approx.f64``
and ``tanh.approx.f32`` take no modifier at all.

``.approx`` (or ``.full`` for div) is a required slot: "for PTX ISA version 1.4 and later, the
.approx modifier is required" (§9.7.3.16-21; §9.7.3.8, §9.7.3.13 and §9.7.3.15 require one of
``.approx``/``.full``/``.rnd``, whose ``.rnd`` forms are the exact families of
:mod:`ptxspec.spec.floating_point`). The PTX ISA 1.0-1.3 defaults (``sin.f32`` meaning
``sin.approx.ftz.f32``) are not forms of PTX ISA 8.7.

Families of one opcode are kept syntactically disjoint (``rsqrt.approx{.ftz}.f32``,
``rsqrt.approx.f64`` and ``rsqrt.approx.ftz.f64`` are three families), because the parser
takes the first family whose slots match.
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Slot, Target

APPROX = Slot("approx", ("approx",), required=True)
FTZ = Slot("ftz", ("ftz",))
FTZ_REQUIRED = Slot("ftz", ("ftz",), required=True)
F32 = Slot("type", ("f32",), required=True)
F64 = Slot("type", ("f64",), required=True)

#: ".approx" and ".ftz" were introduced in PTX ISA 1.4 (the PTX ISA notes of §9.7.3.8-21).
PTX_1_4 = Target((1, 4), 10)


def _operands(*names: str):
    def operands(form: Form) -> tuple[Operand, ...]:
        t = form["type"]
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


UNARY = _operands("d", "a")
BINARY = _operands("d", "a", "b")


def _f32_approx(opcode: str, section: str, summary: str, *, target: Target = PTX_1_4) -> Family:
    """``opcode.approx{.ftz}.f32 d, a`` (Table 28: .ftz allowed, no rounding modifier)."""
    return Family(
        opcode=opcode,
        key=f"{opcode}.approx",
        section=section,
        slots=(APPROX, FTZ, F32),
        operands=UNARY,
        target=target,
        summary=summary,
    )


FAMILIES: list[Family] = [
    # §9.7.3.8 div: "div.approx{.ftz}.f32 d, a, b; // fast, approximate divide" and
    # "div.full{.ftz}.f32 d, a, b; // full-range approximate divide". Target ISA notes:
    # "div.approx.f32 and div.full.f32 supported on all target architectures"; PTX ISA notes:
    # "explicit modifiers .approx, .full, .ftz, and rounding introduced in PTX ISA version 1.4".
    Family(
        opcode="div",
        key="div.approx",
        section="9.7.3.8",
        slots=(APPROX, FTZ, F32),
        operands=BINARY,
        target=PTX_1_4,
        summary="Fast, approximate divide, computed as a * (1/b).",
    ),
    Family(
        opcode="div",
        key="div.full",
        section="9.7.3.8",
        slots=(Slot("full", ("full",), required=True), FTZ, F32),
        operands=BINARY,
        target=PTX_1_4,
        summary="Full-range approximate divide.",
    ),
    # §9.7.3.13 rcp: "rcp.approx{.ftz}.f32 d, a; // fast, approximate reciprocal"; "rcp.approx.f32
    # supported on all target architectures".
    _f32_approx("rcp", "9.7.3.13", "Fast, approximate reciprocal."),
    # §9.7.3.14: "rcp.approx.ftz.f64 d, a;" -- "introduced in PTX ISA version 2.1", "requires
    # sm_20 or higher".
    Family(
        opcode="rcp",
        key="rcp.approx.ftz.f64",
        section="9.7.3.14",
        slots=(APPROX, FTZ_REQUIRED, F64),
        operands=UNARY,
        target=Target((2, 1), 20),
        summary="Fast, gross approximation of the reciprocal of the upper word of a .f64 value.",
    ),
    # §9.7.3.15 sqrt: "sqrt.approx{.ftz}.f32 d, a; // fast, approximate square root";
    # "sqrt.approx.f32 supported on all target architectures".
    _f32_approx("sqrt", "9.7.3.15", "Fast, approximate square root."),
    # §9.7.3.16 rsqrt: "rsqrt.approx{.ftz}.f32 d, a; rsqrt.approx.f64 d, a;"; "rsqrt.f32 supported
    # on all target architectures. rsqrt.f64 requires sm_13 or higher."
    _f32_approx("rsqrt", "9.7.3.16", "Approximate reciprocal of the square root."),
    Family(
        opcode="rsqrt",
        key="rsqrt.approx.f64",
        section="9.7.3.16",
        slots=(APPROX, F64),
        operands=UNARY,
        target=Target((1, 4), 13),
        summary="Approximate reciprocal of the square root (emulated in software).",
    ),
    # §9.7.3.17: "rsqrt.approx.ftz.f64 d, a;" -- "introduced in PTX ISA version 4.0", "requires
    # sm_20 or higher".
    Family(
        opcode="rsqrt",
        key="rsqrt.approx.ftz.f64",
        section="9.7.3.17",
        slots=(APPROX, FTZ_REQUIRED, F64),
        operands=UNARY,
        target=Target((4, 0), 20),
        summary="Fast approximation of the reciprocal square root of the upper word of a .f64 value.",
    ),
    # §9.7.3.18-21: "sin.approx{.ftz}.f32 d, a;" and likewise cos, lg2, ex2; "supported on all
    # target architectures".
    _f32_approx("sin", "9.7.3.18", "Fast approximation of the sine (radians)."),
    _f32_approx("cos", "9.7.3.19", "Fast approximation of the cosine (radians)."),
    _f32_approx("lg2", "9.7.3.20", "Fast approximation of the base-2 logarithm."),
    _f32_approx("ex2", "9.7.3.21", "Fast approximation of 2 raised to a power."),
    # §9.7.3.22 tanh: "tanh.approx.f32 d, a;" (no .ftz: Table 28) -- "introduced in PTX ISA
    # version 7.0", "requires sm_75 or higher".
    Family(
        opcode="tanh",
        key="tanh.approx",
        section="9.7.3.22",
        slots=(APPROX, F32),
        operands=UNARY,
        target=Target((7, 0), 75),
        summary="Fast approximation of the hyperbolic tangent.",
    ),
]
