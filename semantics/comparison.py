"""§9.7.6 Comparison and selection instructions (set, setp, selp, slct) and §9.7.7.2 setp on
half-precision values.

Every comparison has the same shape: read both operands exactly (integers as their unsigned or
two's-complement value; floating-point values through :func:`~ptxspec.semantics.numerics.decode`,
flushing subnormal inputs under ``.ftz``), apply the comparison operator (:func:`compare`), then
combine with the predicate c (:func:`combine`). No host float is involved: finite values compare
as exact rationals.

Subnormals: "set, setp, and slct instructions support subnormal numbers for sm_20 and higher
targets ... The optional .ftz modifier ... flush[es] subnormal inputs and results to
sign-preserving zero regardless of the target architecture" (§9.7.6). The sm_1x default is not
modelled.
"""

from __future__ import annotations

from fractions import Fraction

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, register_bits
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import Exact, Infinity, NaN, Value, decode, to_fraction
from ptxspec.profiles import Profile

#: "The unordered versions are included: equ, neu, ltu, leu, gtu, geu" -- each with its ordered twin.
UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}
#: lo, ls, hi, hs "may be used instead of lt, le, gt, ge" for unsigned values.
UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def relation(op: str, x, y) -> bool:
    """``x op y`` for one of eq ne lt le gt ge on totally ordered values."""
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def integer_value(type_name: str, bits: int) -> int:
    """The value of an integer operand: two's complement for .sN, unsigned for .uN and .bN."""
    t = INTEGER_TYPES[type_name]
    return bits - (1 << t.bits) if t.signed and bits >> (t.bits - 1) else bits


def order_key(value: Exact | Infinity) -> tuple[int, Fraction]:
    """A key whose order is the real order of non-NaN values: -inf < finite < +inf, -0 == +0."""
    if isinstance(value, Infinity):
        return (-1 if value.sign else 1, Fraction(0))
    return (0, to_fraction(value))


def compare_floats(op: str, a: Value, b: Value) -> bool:
    """§9.7.6.2 Floating Point Notes: "The ordered comparisons are eq, ne, lt, le, gt, ge. If either
    operand is NaN, the result is False." The unordered versions: "If both operands are numeric
    values (not NaN), then the comparison has the same result as its ordered counterpart. If either
    operand is NaN, then the result of these comparisons is True." "num returns True if both
    operands are numeric values (not NaN), and nan returns True if either operand is NaN." """
    unordered = isinstance(a, NaN) or isinstance(b, NaN)
    if op == "num":
        return not unordered
    if op == "nan":
        return unordered
    if isinstance(a, NaN) or isinstance(b, NaN):  # unordered (spelled out: the types narrow)
        return op in UNORDERED
    return relation(UNORDERED.get(op, op), order_key(a), order_key(b))


def compare(op: str, type_name: str, a: int, b: int, *, ftz: bool = False) -> bool:
    """``a CmpOp b`` for operands of ``type_name`` (§9.7.6.2 Integer and Floating Point Notes)."""
    if type_name in INTEGER_TYPES:
        return relation(UNSIGNED.get(op, op), integer_value(type_name, a), integer_value(type_name, b))
    fmt = FORMATS[type_name]
    return compare_floats(op, decode(fmt, a, ftz=ftz), decode(fmt, b, ftz=ftz))


def combine(form: Form, t: bool, c: tuple[int, ...]) -> int:
    """``BoolOp(t, c)``: t alone without a BoolOp, else t and/or/xor the predicate c."""
    boolop = form.get("boolop")
    if boolop is None:
        return int(t)
    (pred,) = c
    return {"and": int(t) & pred, "or": int(t) | pred, "xor": int(t) ^ pred}[boolop]


@semantic("setp")
def setp(form: Form, a: int, b: int, *c: int, profile: Profile) -> tuple[int, int]:
    """§9.7.6.2 setp: "Compares two values and combines the result with another predicate value by
    applying a Boolean operator. This result is written to the first destination operand. A related
    value computed using the complement of the compare result is written to the second destination
    operand." ``t = (a CmpOp b) ? 1 : 0; p = BoolOp(t, c); q = BoolOp(!t, c);`` Returns ``(p, q)``.
    """
    t = compare(form["cmp"], form["type"], a, b, ftz="ftz" in form)
    return combine(form, t, c), combine(form, not t, c)


@semantic("set")
def set_(form: Form, a: int, b: int, *c: int, profile: Profile) -> int:
    """§9.7.6.1 set: "If this result is True, 1.0f is written for floating-point destination types,
    and 0xffffffff is written for integer destination types. Otherwise, 0x00000000 is written."
    ``t = (a CmpOp b) ? 1 : 0; d = BoolOp(t, c) ? (1.0f or 0xffffffff) : 0x00000000;``"""
    t = compare(form["cmp"], form["stype"], a, b, ftz="ftz" in form)
    true_value = 0x3F800000 if form["dtype"] == "f32" else 0xFFFFFFFF  # 1.0f is 0x3f800000
    return true_value if combine(form, t, c) else 0


@semantic("selp")
def selp(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.6.3 selp: "Conditional selection. If c is True, a is stored in d, b otherwise."
    ``d = (c == 1) ? a : b;``"""
    return a if c == 1 else b


@semantic("slct")
def slct(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.6.4 slct: "If c >= 0, a is stored in d, otherwise b is stored in d ... The selected input
    is copied to the output without modification." "For .f32 comparisons, negative zero equals
    zero." "slct.ftz.dtype.f32 flushes subnormal values of operand c to sign-preserving zero, and
    operand a is selected." "If operand c is NaN, the comparison is unordered and operand b is
    selected." ``d = (c >= 0) ? a : b;``

    Without .ftz a negative subnormal c is below zero, so b is selected (sm_20+ keeps subnormals).
    """
    c_is_non_negative = compare("ge", form["ctype"], c, 0, ftz="ftz" in form)
    return a if c_is_non_negative else b


@semantic("setp.half")
def setp_half(form: Form, a: int, b: int, *c: int, profile: Profile) -> int | tuple[int, int]:
    """§9.7.7.2 setp on .f16, .f16x2, .bf16, .bf16x2. ``t = (a CmpOp b) ? 1 : 0; p = BoolOp(t, c);``
    and for the packed types "fA[0] = a[0:15]; fA[1] = a[16:31]; ... p = BoolOp(t[0], c);
    q = BoolOp(t[1], c);" -- p from the low halves, q from the high halves. "setp.ftz.{f16,f16x2}
    flushes subnormal inputs to sign-preserving zero."
    """
    element = form["type"].removesuffix("x2")
    ftz = "ftz" in form
    if element == form["type"]:
        return combine(form, compare(form["cmp"], element, a, b, ftz=ftz), c)
    lanes = [compare(form["cmp"], element, (a >> s) & 0xFFFF, (b >> s) & 0xFFFF, ftz=ftz) for s in (0, 16)]
    return combine(form, lanes[0], c), combine(form, lanes[1], c)


#: "1.0 in the destination's precision" (§9.7.7.1): 1.0 in f16 and in bf16.
ONE = {"f16": 0x3C00, "bf16": 0x3F80}


@semantic("set.half")
def set_half(form: Form, a: int, b: int, *c: int, profile: Profile) -> int:
    """§9.7.7.1 set with a half-precision source or destination. "If the result is True, 0xffffffff
    is written for destination types .u32/.s32, 0xffff for .u16/.s16, 1.0 in the target precision
    floating point format for .f16/.bf16. If the result is False, 0x0 is written for all integer
    destination types, 0.0 in the target precision floating point format for .f16/.bf16. If the
    source type is .f16x2 or .bf16x2, then the results of the individual operations are packed into
    the 32-bit destination operand": ``fA[0] = a[0:15]; fA[1] = a[16:31]; ... d[i] = BoolOp(t[i],
    c) ? 1.0 : 0.0`` for an .f16x2/.bf16x2 destination, ``? 0xffff : 0`` for .u32/.s32.

    The manual's pseudo-code tests ``dtype == .f16x2 || stype == .bf16x2`` and ``dtype == .f16 ||
    stype == .bf16``; read with the description above, the value written depends on the
    destination type only (set.u32.bf16x2 writes 0xffff lanes, not 1.0).
    """
    dtype, stype = form["dtype"], form["stype"]
    ftz = "ftz" in form
    if stype.endswith("x2"):
        element = stype.removesuffix("x2")
        true_lane = ONE.get(dtype.removesuffix("x2"), 0xFFFF)
        lanes = [combine(form, compare(form["cmp"], element, (a >> s) & 0xFFFF, (b >> s) & 0xFFFF, ftz=ftz), c) for s in (0, 16)]
        return (true_lane if lanes[1] else 0) << 16 | (true_lane if lanes[0] else 0)
    true_value = ONE.get(dtype) or (1 << register_bits(dtype)) - 1
    return true_value if combine(form, compare(form["cmp"], stype, a, b, ftz=ftz), c) else 0
