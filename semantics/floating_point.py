"""§9.7.3 Floating-point instructions on .f32, .f32x2 and .f64.

Every function here has the same inner shape: decode the operands exactly (flushing subnormal
inputs under ``.ftz``), apply the PTX NaN rule, compute the exact result, and hand it to the one
rounding routine :func:`~ptxspec.semantics.numerics.round_value` with the instruction's
rounding, ``.ftz`` and ``.sat``.

NaN results (§9.7.3 introduction): "Double-precision instructions support NaN payloads ...
Single-precision instructions return an unspecified NaN." So at spec level an f32 NaN result is
any NaN (:class:`~ptxspec.semantics.results.AnyNaN`), an f64 result from NaN operands carries one
of their payloads, made quiet; a profile pins the choice a chip makes.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import NaN, Rounding, Value, decode, exact_sum, quiet, round_value, Exact, Infinity
from ptxspec.semantics.results import Profile, Result, pack_lanes

F32 = FORMATS["f32"]
F64 = FORMATS["f64"]


def element_format(form: Form) -> FloatFormat:
    """The format of one element: .f32x2 is two .f32 (§5.2.4.1)."""
    return F32 if form["type"] in ("f32", "f32x2") else F64


def rounding(form: Form, default: Rounding = Rounding.RN) -> Rounding:
    """The rounding modifier; "the default value of the rounding modifier is .rn" (§9.7.3.3)."""
    token = form.get("rnd")
    return Rounding(token) if token else default


def nan_result(fmt: FloatFormat, operands: list[Value], profile: Profile) -> Result:
    """The NaN that an operation returns (§9.7.3 introduction).

    f64 supports NaN payloads: the result is one of the input NaNs made quiet (IEEE 754 §6.2.3);
    with no NaN input (an invalid operation such as inf - inf) it is a default NaN. f32 returns
    an unspecified NaN.
    """
    if fmt is F64:
        return profile.payload_nan(fmt, [quiet(v) for v in operands if isinstance(v, NaN)])
    return profile.unspecified_nan(fmt)


def elementwise(form: Form, profile: Profile, sources: tuple[int, ...], op: Callable[..., Value], *, default_rounding: Rounding = Rounding.RN) -> Result:
    """Apply the exact operation ``op`` to each element of the sources and round each result.

    ``op`` receives the decoded operands and the rounding mode (for the sign of an exact zero
    sum) and returns the exact result, an infinity, or a NaN for an invalid operation.
    """
    fmt = element_format(form)
    ftz = "ftz" in form
    sat = "sat" in form
    mode = rounding(form, default_rounding)
    lanes = 2 if form["type"] == "f32x2" else 1
    width = fmt.width
    results: list[Result] = []
    # f32x2 element i sits in bits [32i, 32i+31] (§9.7.3.3 semantics); lane order does not matter
    # to an elementwise operation, so lanes are taken from the top here and put back the same way.
    for lane in range(lanes):
        shift = (lanes - 1 - lane) * width
        operands = [decode(fmt, (s >> shift) & ((1 << width) - 1), ftz=ftz) for s in sources]
        value = invalid() if any(isinstance(v, NaN) for v in operands) else op(mode, *operands)
        results.append(round_element(fmt, profile, operands, value, mode, ftz=ftz, sat=sat))
    return pack_lanes(results, width)


def round_element(fmt: FloatFormat, profile: Profile, operands: list[Value], value: Value, mode: Rounding, *, ftz: bool, sat: bool) -> Result:
    """Round one element's exact result, applying the NaN rule; ``.sat`` turns NaN into +0.0."""
    if isinstance(value, NaN) or any(isinstance(v, NaN) for v in operands):
        if sat:
            return round_value(Exact(0, 0), fmt)
        return nan_result(fmt, operands, profile)
    return round_value(value, fmt, mode, ftz=ftz, sat=sat)


def invalid(fmt: FloatFormat = F32) -> NaN:
    """The marker for an invalid operation (its NaN is then chosen by :func:`nan_result`)."""
    return NaN(0, 0, fmt)


def exact_add(mode: Rounding, a: Value, b: Value) -> Value:
    """a + b, exactly, with IEEE 754 special cases: inf + -inf is invalid."""
    if isinstance(a, Infinity) and isinstance(b, Infinity):
        return a if a.sign == b.sign else invalid()
    if isinstance(a, Infinity):
        return a
    if isinstance(b, Infinity):
        return b
    return exact_sum(a, b, mode)


@semantic("add.f")
def add(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.3 add: ``d = a + b``, rounded by ``.rnd`` (default ``.rn``); ``.ftz`` flushes
    subnormal inputs and results to sign-preserving zero; ``.sat`` clamps the result to
    [0.0, 1.0] with NaN results flushed to +0.0f. ``.f32x2`` adds the two .f32 elements in parallel.
    """
    return elementwise(form, profile, (a, b), exact_add)
