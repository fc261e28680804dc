"""§9.7.3 Floating-point instructions on .f32, .f32x2 and .f64 (the exact forms).

Every arithmetic function here has the same inner shape: decode the operands exactly (flushing
subnormal inputs under ``.ftz``), apply the PTX NaN rule, compute the exact result, and hand it to
the one rounding routine :func:`~ptxspec.semantics.numerics.round_value` with the instruction's
rounding, ``.ftz`` and ``.sat``. The exact operations (:func:`exact_add`, :func:`exact_mul`,
:func:`exact_fma`, :func:`exact_div`, :func:`exact_root`) give IEEE 754's special cases and then
defer to the integer arithmetic of :mod:`~ptxspec.semantics.numerics`, so that every result is
rounded exactly once -- ``fma`` included: "computes the product of a and b to infinite precision
and then adds c to this product, again in infinite precision" (§9.7.3.6).

NaN results (§9.7.3 introduction): "Double-precision instructions support NaN payloads ...
Single-precision instructions return an unspecified NaN." So at spec level an f32 NaN result is
any NaN (:class:`~ptxspec.semantics.results.AnyNaN`), an f64 result from NaN operands carries one
of their payloads, made quiet; a profile pins the choice a chip makes.

Subnormals (§9.7.3 introduction): "single-precision instructions support subnormal inputs and
results by default for sm_20 and later targets"; ".ftz ... flushes subnormal inputs and results to
sign-preserving zero regardless of the target architecture". These functions give the sm_20+
meaning; the sm_1x default (flushing without .ftz) is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    Value,
    canonical_nan,
    decode,
    exact_product,
    exact_quotient,
    exact_sqrt,
    exact_sum,
    fields,
    quiet,
    round_value,
)
from ptxspec.profiles import Profile
from ptxspec.semantics.results import Result, pack_lanes

F32 = FORMATS["f32"]
F64 = FORMATS["f64"]


def element_format(form: Form) -> FloatFormat:
    """The format of one element: .f32x2 is two .f32 (§5.2.4.1)."""
    return F32 if form["type"] in ("f32", "f32x2") else F64


def rounding(form: Form, default: Rounding = Rounding.RN) -> Rounding:
    """The rounding modifier; "the default value of the rounding modifier is .rn" (§9.7.3.3)."""
    token = form.get("rnd")
    return Rounding(token) if token else default


def nan_result(fmt: FloatFormat, operands: list[Value], profile: Profile, opcode: str | None = None) -> Result:
    """The NaN that an operation returns (§9.7.3 introduction).

    f64 supports NaN payloads: the result is one of the input NaNs made quiet (IEEE 754 §6.2.3);
    with no NaN input (an invalid operation such as inf - inf) it is a default NaN. f32 returns
    an unspecified NaN. ``opcode`` lets a profile say which NaN operand a chip propagates.
    """
    if fmt is F64:
        return profile.payload_nan(fmt, [quiet(v) if isinstance(v, NaN) else None for v in operands], opcode)
    return profile.unspecified_nan(fmt)


def elementwise(form: Form, profile: Profile, sources: tuple[int, ...], op: Callable[..., Value], *, default_rounding: Rounding = Rounding.RN) -> Result:
    """Apply the exact operation ``op`` to each element of the sources and round each result.

    ``op`` receives the rounding mode (for the sign of an exact zero sum) and the decoded
    operands, and returns the exact result, an infinity, or a NaN for an invalid operation.
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
        results.append(round_element(fmt, profile, operands, value, mode, ftz=ftz, sat=sat, opcode=form.opcode))
    return pack_lanes(results, width)


def round_element(
    fmt: FloatFormat, profile: Profile, operands: list[Value], value: Value, mode: Rounding, *, ftz: bool, sat: bool, opcode: str | None = None
) -> Result:
    """Round one element's exact result, applying the NaN rule; ``.sat`` turns NaN into +0.0.

    ".sat clamps the result to [0.0, 1.0]. NaN results are flushed to +0.0f" (§9.7.3.3); the
    core's clamp makes -0.0 (from -0.0 + -0.0, say) +0.0 too, as sm_90 does. Under ``.ftz`` a
    result that is tiny after rounding (see :func:`~ptxspec.semantics.numerics.round_exact`)
    becomes a zero of its sign.
    """
    if isinstance(value, NaN) or any(isinstance(v, NaN) for v in operands):
        if sat:
            return round_value(Exact(0, 0), fmt)
        return nan_result(fmt, operands, profile, opcode)
    return round_value(value, fmt, mode, ftz=ftz, sat=sat)


def invalid(fmt: FloatFormat = F32) -> NaN:
    """The marker for an invalid operation (its NaN is then chosen by :func:`nan_result`)."""
    return NaN(0, 0, fmt)


# ---------------------------------------------------------------------------------------------
# Exact operations with IEEE 754's special cases (§7.2 invalid operation, §7.3 division by zero)
# ---------------------------------------------------------------------------------------------
# Their operands are never NaNs: every caller decides a NaN operand's result before (elementwise).


def exact_add(mode: Rounding, a: Exact | Infinity, b: Exact | Infinity) -> Value:
    """a + b, exactly, with IEEE 754 special cases: inf + -inf is invalid."""
    if isinstance(a, Infinity) and isinstance(b, Infinity):
        return a if a.sign == b.sign else invalid()
    if isinstance(a, Infinity):
        return a
    if isinstance(b, Infinity):
        return b
    return exact_sum(a, b, mode)


def exact_sub(mode: Rounding, a: Exact | Infinity, b: Exact | Infinity) -> Value:
    """a - b = a + (-b) (IEEE 754 §5.4.1); an exact zero difference takes the sum's sign rule."""
    return exact_add(mode, a, b.negate())


def exact_mul(mode: Rounding, a: Exact | Infinity, b: Exact | Infinity) -> Value:
    """a * b, exactly: 0 * inf is invalid; otherwise the sign is the exclusive or of the signs."""
    if isinstance(a, Infinity) or isinstance(b, Infinity):
        if _is_zero(a) or _is_zero(b):
            return invalid()
        return Infinity(a.sign ^ b.sign)
    return exact_product(a, b)


def exact_fma(mode: Rounding, a: Exact | Infinity, b: Exact | Infinity, c: Exact | Infinity) -> Value:
    """a * b + c with no rounding in between: the exact product (or its infinity, or invalid for
    0 * inf) added exactly to c, so that the zero-sign rule of the sum sees the product's sign."""
    product = exact_mul(mode, a, b)
    if isinstance(product, NaN):
        return product
    return exact_add(mode, product, c)


def exact_div(fmt: FloatFormat) -> Callable[[Rounding, Exact | Infinity, Exact | Infinity], Value]:
    """a / b to the precision rounding into ``fmt`` needs: 0/0 and inf/inf are invalid, x/0 is an
    infinity and x/inf a zero, each with the exclusive or of the signs."""

    def divide(mode: Rounding, a: Exact | Infinity, b: Exact | Infinity) -> Value:
        sign = a.sign ^ b.sign
        if isinstance(a, Infinity):
            return invalid() if isinstance(b, Infinity) else Infinity(sign)
        if isinstance(b, Infinity):
            return Exact(sign, 0)
        if _is_zero(b):
            return invalid() if _is_zero(a) else Infinity(sign)
        return exact_quotient(a, b, fmt.precision)

    return divide


def exact_root(fmt: FloatFormat) -> Callable[[Rounding, Exact | Infinity], Value]:
    """sqrt(a) to the precision rounding into ``fmt`` needs: sqrt(-0) = -0, sqrt(+inf) = +inf, and
    the root of anything below zero (-inf included) is invalid (IEEE 754 §5.4.1, §7.2)."""

    def root(mode: Rounding, a: Exact | Infinity) -> Value:
        if _is_zero(a):
            return a
        if a.sign == 1:
            return invalid()
        if isinstance(a, Infinity):
            return a
        return exact_sqrt(a, fmt.precision)

    return root


def _is_zero(v: Value) -> bool:
    return isinstance(v, Exact) and v.is_zero


ONE = Exact(0, 1)


# ---------------------------------------------------------------------------------------------
# §9.7.3.1 testp, §9.7.3.2 copysign
# ---------------------------------------------------------------------------------------------


@semantic("testp")
def testp(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.1 testp: "tests common properties of floating-point numbers and returns a predicate
    value of 1 if True and 0 if False".

    * .finite: "True if the input is not infinite or NaN"; .infinite: "True if the input is
      positive or negative infinity"; .number: "True if the input is not NaN"; .notanumber: "True
      if the input is NaN";
    * .normal: "True if the input is a normal number (not NaN, not infinity)"; .subnormal: "True
      if the input is a subnormal number (not NaN, not infinity)"; "As a special case, positive and
      negative zero are considered normal numbers."

    testp has no .ftz: a subnormal input is tested as it is.
    """
    fmt = element_format(form)
    value = decode(fmt, a)
    _, exponent, mantissa = fields(fmt, a)
    nan = isinstance(value, NaN)
    infinite = isinstance(value, Infinity)
    subnormal = exponent == 0 and mantissa != 0
    verdict = {
        "finite": not (nan or infinite),
        "infinite": infinite,
        "number": not nan,
        "notanumber": nan,
        "normal": not (nan or infinite or subnormal),
        "subnormal": subnormal,
    }[form["op"]]
    return int(verdict)


@semantic("copysign")
def copysign(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.2 copysign: "Copies the sign bit of a into the value of b, and returns the result as d."

    A sign-bit operation (IEEE 754 §5.5.1 copySign): every other bit of b -- a NaN's payload and
    its signalling bit included -- is kept, which is what sm_90 does for .f32 and .f64 alike.
    """
    sign = element_format(form).sign_mask
    return (a & sign) | (b & ~sign)


# ---------------------------------------------------------------------------------------------
# §9.7.3.3-8 add, sub, mul, fma, mad, div
# ---------------------------------------------------------------------------------------------


@semantic("add.f")
def add(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.3 add: ``d = a + b``, rounded by ``.rnd`` (default ``.rn``); ``.ftz`` flushes
    subnormal inputs and results to sign-preserving zero; ``.sat`` clamps the result to
    [0.0, 1.0] with NaN results flushed to +0.0f. ``.f32x2`` adds the two .f32 elements in parallel.

    "An add instruction with no rounding modifier ... may be optimized aggressively by the code
    optimizer. In particular, mul/add sequences with no rounding modifiers may be optimized to use
    fused-multiply-add instructions": a licence over instruction sequences, for the compiler. One
    add without ``.rnd`` means add.rn (the same holds for sub and mul).
    """
    return elementwise(form, profile, (a, b), exact_add)


@semantic("sub.f")
def sub(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.4 sub: ``d = a - b``, "performs subtraction and writes the resulting value into a
    destination register"; ``.rnd`` (default ``.rn``), ``.ftz``, ``.sat`` and ``.f32x2`` as for add.

    An exact zero difference is +0.0, or -0.0 under .rm (IEEE 754 §6.3), so ``x - x`` is -0.0
    under .rm.
    """
    return elementwise(form, profile, (a, b), exact_sub)


@semantic("mul.f")
def mul(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.5 mul: ``d = a * b``, "compute the product of two values"; ``.rnd`` (default
    ``.rn``), ``.ftz``, ``.sat`` and ``.f32x2`` as for add. 0 * inf is invalid (a NaN)."""
    return elementwise(form, profile, (a, b), exact_mul)


@semantic("fma.f")
def fma(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.3.6 fma: ``d = a*b + c``, "fused multiply-add ... without loss of precision in the
    intermediate product and addition": "fma.f32 computes the product of a and b to infinite
    precision and then adds c to this product, again in infinite precision. The resulting value is
    then rounded to single precision using the rounding mode specified by .rnd" (.f64 alike).
    The rounding modifier has no default; ``.ftz``, ``.sat`` (.f32) and ``.f32x2`` as for add.
    """
    return elementwise(form, profile, (a, b, c), exact_fma)


@semantic("mad.f")
def mad(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.3.7 mad: ``d = a*b + c``. "For .target sm_20 and higher: mad.f32 computes the product of
    a and b to infinite precision and then adds c to this product, again in infinite precision.
    The resulting value is then rounded to single precision using the rounding mode specified by
    .rnd ... mad.{f32,f64} is the same as fma.{f32,f64}."

    The form without ``.rnd`` is the sm_1x one (a product truncated to 24 bits); the catalogue
    refuses it, so every form that reaches here has a rounding modifier.
    """
    return elementwise(form, profile, (a, b, c), exact_fma)


@semantic("div.rnd")
def div(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.8 div.rnd: ``d = a / b``, "divide with IEEE 754 compliant rounding"; the rounding
    modifier has no default; "div.ftz.f32 flushes subnormal inputs and results to sign-preserving
    zero". x/0 is an infinity, 0/0 and inf/inf are invalid (IEEE 754 §7.2, §7.3)."""
    return elementwise(form, profile, (a, b), exact_div(element_format(form)))


# ---------------------------------------------------------------------------------------------
# §9.7.3.9 abs, §9.7.3.10 neg
# ---------------------------------------------------------------------------------------------


@semantic("abs.f")
def abs_(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.9 abs: ``d = |a|``, "take the absolute value of a"; "abs.ftz.f32 flushes subnormal
    inputs and results to sign-preserving zero" (so a subnormal gives +0.0).

    NaN: "For abs.f32, NaN input yields unspecified NaN. For abs.f64, NaN input is passed through
    unchanged." The f64 reading here is the chapter's payload rule: the input NaN, sign and
    payload kept, made quiet -- a signalling NaN comes back quiet on sm_90 (conformance/data/sm_90,
    abs.f64 of 0x7ff0000000000001 gives 0x7ff8000000000001).
    """
    return elementwise(form, profile, (a,), lambda mode, x: x.magnitude() if isinstance(x, Exact) else Infinity(0))


@semantic("neg.f")
def neg(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.10 neg: ``d = -a``, "negate the sign of a"; "neg.ftz.f32 flushes subnormal inputs
    and results to sign-preserving zero" (so a subnormal gives a zero of the opposite sign).

    NaN: "NaN inputs yield an unspecified NaN. Future implementations may comply with the IEEE 754
    standard by preserving payload and modifying only the sign bit." For .f32 that is any NaN; for
    .f64 the chapter's rule "double-precision instructions support NaN payloads" (its only
    exceptions are rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64) applies: the input NaN made quiet,
    its sign unchanged -- as sm_90 does.
    """
    return elementwise(form, profile, (a,), lambda mode, x: x.negate())


# ---------------------------------------------------------------------------------------------
# §9.7.3.11 min, §9.7.3.12 max
# ---------------------------------------------------------------------------------------------


def _less(a: Exact | Infinity, b: Exact | Infinity) -> bool:
    """a < b on non-NaN values, with "+0.0 > -0.0" when both are zero (§9.7.3.11)."""
    if isinstance(a, Infinity) or isinstance(b, Infinity):
        key_a = (1 - 2 * a.sign) if isinstance(a, Infinity) else 0
        key_b = (1 - 2 * b.sign) if isinstance(b, Infinity) else 0
        return key_a < key_b
    if a.is_zero and b.is_zero:
        return a.sign > b.sign
    e = min(a.exponent, b.exponent)
    signed_a = (a.significand << (a.exponent - e)) * (-1 if a.sign else 1)
    signed_b = (b.significand << (b.exponent - e)) * (-1 if b.sign else 1)
    return signed_a < signed_b


def _min_max(form: Form, a_bits: int, b_bits: int, profile: Profile, pick_a: Callable[[Exact | Infinity, Exact | Infinity], bool]) -> Result:
    """The pseudo-code shared by §9.7.3.11 and §9.7.3.12::

        if (.xorsign) { xorsign = getSignBit(a) ^ getSignBit(b); if (.abs) { a = |a|; b = |b|; } }
        if (isNaN(a) && isNaN(b))                 d = NaN;
        else if (.NaN && (isNaN(a) || isNaN(b)))  d = NaN;
        else if (isNaN(a))                        d = b;
        else if (isNaN(b))                        d = a;
        else                                      d = (a < b) ? a : b;   // max: (a > b)
        if (.xorsign && !isNaN(d)) { setSignBit(d, xorsign); }

    "If .NaN modifier is specified, the result is canonical NaN if either of the inputs is NaN";
    without it the NaN of two NaN inputs is the chapter's (unspecified for .f32, a payload for .f64).
    """
    fmt = element_format(form)
    ftz = "ftz" in form
    a, b = decode(fmt, a_bits, ftz=ftz), decode(fmt, b_bits, ftz=ftz)
    return min_max_element(form, fmt, a, b, pick_a, lambda: nan_result(fmt, [a, b], profile, form.opcode))


def min_max_element(
    form: Form,
    fmt: FloatFormat,
    a: Value,
    b: Value,
    pick_a: Callable[[Exact | Infinity, Exact | Infinity], bool],
    both_nan: Callable[[], Result],
) -> Result:
    """One element of min/max (the pseudo-code above) on decoded operands, for every format that
    has the instruction (§9.7.3.11-12, §9.7.4.7-8); ``both_nan`` is the chapter's NaN rule."""
    xorsign = a.sign ^ b.sign
    if "abs" in form:
        a, b = attrs.evolve(a, sign=0), attrs.evolve(b, sign=0)
    a_nan, b_nan = isinstance(a, NaN), isinstance(b, NaN)
    if "NaN" in form and (a_nan or b_nan):
        return canonical_nan(fmt)
    if a_nan and b_nan:
        return both_nan()
    if isinstance(a, NaN) or isinstance(b, NaN):  # a_nan or b_nan (spelled out: the types narrow)
        d = b if a_nan else a
    else:
        d = a if pick_a(a, b) else b
    if "xorsign" in form:
        d = attrs.evolve(d, sign=xorsign)
    return round_value(d, fmt, ftz="ftz" in form)


@semantic("min.f")
def min_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.11 min: "store the minimum of a and b in d" (pseudo-code in :func:`_min_max`); "if
    one input is NaN the result is the other" by that pseudo-code; "if both inputs are 0.0, +0.0 >
    -0.0", so min(-0.0, +0.0) is -0.0. ".xorsign.abs": "the magnitude of d is the minimum of the
    absolute values of both inputs", "the sign bit of d is the XOR of the sign bits of both inputs",
    ignored when the result is NaN. "min.ftz.f32 flushes subnormal inputs and results to
    sign-preserving zero."
    """
    return _min_max(form, a, b, profile, lambda x, y: _less(x, y))


@semantic("max.f")
def max_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.3.12 max: "store the maximum of a and b in d"; the pseudo-code, NaN rules, .NaN,
    .xorsign.abs and .ftz of min with (a > b); max(-0.0, +0.0) is +0.0."""
    return _min_max(form, a, b, profile, lambda x, y: _less(y, x))


# ---------------------------------------------------------------------------------------------
# §9.7.3.13 rcp.rnd, §9.7.3.15 sqrt.rnd
# ---------------------------------------------------------------------------------------------


@semantic("rcp.rnd")
def rcp(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.13 rcp.rnd: ``d = 1 / a``, "reciprocal with IEEE 754 compliant rounding"; no default
    rounding; "rcp.ftz.f32 flushes subnormal inputs and results to sign-preserving zero".
    1/±0 = ±inf, 1/±inf = ±0 (IEEE 754 division)."""
    divide = exact_div(element_format(form))
    return elementwise(form, profile, (a,), lambda mode, x: divide(mode, ONE, x))


@semantic("sqrt.rnd")
def sqrt(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.3.15 sqrt.rnd: ``d = sqrt(a)``, "square root with IEEE 754 compliant rounding"; no
    default rounding; "sqrt.ftz.f32 flushes subnormal inputs and results to sign-preserving zero".
    The special cases of the section's table: sqrt(-inf) and sqrt(-normal) are NaN, sqrt(-0.0) is
    -0.0, sqrt(+0.0) is +0.0, sqrt(+inf) is +inf, sqrt(NaN) is NaN."""
    return elementwise(form, profile, (a,), exact_root(element_format(form)))
