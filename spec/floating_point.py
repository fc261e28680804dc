"""Catalogue entries for §9.7.3, the floating-point instructions on .f32, .f32x2 and .f64."""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid, same_type_operands

RND = Slot("rnd", ("rn", "rz", "rm", "rp"))
FTZ = Slot("ftz", ("ftz",))
SAT = Slot("sat", ("sat",))


def _is(type_name: str):
    return lambda form: form.get("type") == type_name


def _register_type(form: Form) -> str:
    """.f32x2 operands are .b64 registers (§9.7.3.3)."""
    return "b64" if form["type"] == "f32x2" else form["type"]


def _operands(*names: str):
    def operands(form: Form) -> tuple[Operand, ...]:
        t = _register_type(form)
        return tuple(Operand(n, t, destination=(i == 0)) for i, n in enumerate(names))

    return operands


def _add_sub_mul_target(form: Form) -> Target:
    """Target ISA notes of §9.7.3.3-5: .f64 needs sm_13; .rm/.rp on .f32 need sm_20; .f32x2 needs
    sm_100 and PTX ISA 8.6."""
    if form["type"] == "f32x2":
        return Target((8, 6), 100)
    if form["type"] == "f64":
        return Target((1, 0), 13)
    if form.get("rnd") in ("rm", "rp"):
        return Target((1, 0), 20)
    return Target((1, 0), 10)


def _add_sub_mul(opcode: str, section: str, summary: str) -> Family:
    return Family(
        opcode=opcode,
        key=f"{opcode}.f",
        section=section,
        slots=(RND, FTZ, SAT, Slot("type", ("f32", "f32x2", "f64"), required=True)),
        operands=_operands("d", "a", "b"),
        rules=(
            forbid("ftz", _is("f64"), "`.ftz` is not allowed with `.f64`", section),
            forbid("sat", lambda f: f["type"] != "f32", lambda f: f"`.sat` is not allowed with `.{f['type']}`", section),
        ),
        target=_add_sub_mul_target,
        summary=summary,
    )


FAMILIES: list[Family] = [
    _add_sub_mul("add", "9.7.3.3", "Add two values."),
]
