"""Batched paths of §9.7.6 comparison and selection (set, setp, selp, slct) and §9.7.7 half-precision
comparison (set, setp on .f16, .f16x2, .bf16, .bf16x2).

The numpy twins of :mod:`ptxspec.semantics.comparison`, step by step: read both operands as
totally ordered integer keys (:func:`integer_keys`, :func:`float_keys`), apply the comparison
operator with the unordered rule (:func:`compare`), combine with the predicate c
(:func:`combine`), and write the destination. Nothing is rounded: every step is an integer
compare or a bit operation on arrays, so the batched result is the scalar one by construction
(tests/test_batch_comparison.py checks it on every input class).
"""

from __future__ import annotations

import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics.batch import BatchResult, FastPath, _covered, _dtype, _packed_by_qualifier, batched
from ptxspec.semantics.comparison import ONE, UNORDERED, UNSIGNED
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, NanEncoding, register_bits

#: The ordered comparison operators as numpy's elementwise comparisons.
RELATIONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
#: Every comparison operator a floating-point comparison takes (§9.7.6.2 Floating Point Notes).
FLOAT_OPERATORS = frozenset(RELATIONS) | frozenset(UNORDERED) | {"num", "nan"}
#: Every comparison operator an integer comparison takes (§9.7.6.2 Integer Notes).
INTEGER_OPERATORS = frozenset(RELATIONS) | frozenset(UNSIGNED)


# ---------------------------------------------------------------------------------------------
# Reading the operands (comparison.integer_value, comparison.order_key)
# ---------------------------------------------------------------------------------------------


def integer_keys(type_name: str, bits: np.ndarray) -> np.ndarray:
    """The values of integer operands (comparison.integer_value): two's complement for .sN (the
    same bits viewed as the signed dtype of their width), unsigned for .uN and .bN. numpy compares
    two arrays of one integer dtype exactly."""
    t = INTEGER_TYPES[type_name]
    bits = bits.astype(_dtype(t.bits), copy=False)
    return bits.view(np.dtype(f"int{t.bits}")) if t.signed else bits


def float_keys(fmt: FloatFormat, bits: np.ndarray, *, ftz: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(key, nan)`` for floating-point operands: ``nan`` marks the NaNs; for the others, int64
    keys whose order is the real order (comparison.order_key): the magnitude's bits (exponent
    and mantissa fields, which grow with the value, up to infinity) negated under a set sign
    bit, so that -0.0 and +0.0 are both 0 and compare equal. Under ``.ftz`` a zero exponent field
    (a subnormal) reads as a zero of its sign ("flush subnormal inputs to sign-preserving zero",
    §9.7.6): its key is 0. The magnitude of an f64 is below 2^63, so int64 holds every key."""
    width, mb = fmt.width, fmt.mantissa_bits
    x = bits.astype(np.uint64)
    negative = (x >> np.uint64(width - 1)) != 0
    magnitude = (x & np.uint64((1 << (width - 1)) - 1)).astype(np.int64)
    if ftz:
        magnitude = np.where(magnitude < (1 << mb), 0, magnitude)
    nan = magnitude > (fmt.exponent_field_max << mb)
    return np.where(negative, -magnitude, magnitude), nan


def _comparable(type_name: str) -> bool:
    """Types :func:`compare` reads: the integers, and the IEEE binary formats (f16, bf16, f32, f64:
    signed, no shift, IEEE NaNs)."""
    if type_name in INTEGER_TYPES:
        return True
    fmt = FORMATS.get(type_name)
    return fmt is not None and fmt.signed and not fmt.shift and fmt.nan is NanEncoding.IEEE and fmt.has_infinity


# ---------------------------------------------------------------------------------------------
# The comparison and the Boolean operator
# ---------------------------------------------------------------------------------------------


def compare(op: str, type_name: str, a: np.ndarray, b: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """``a CmpOp b`` elementwise (comparison.compare), a bool array.

    Integers: lo, ls, hi, hs are lt, le, gt, ge (§9.7.6.2 Integer Notes) on the values.
    Floating point (§9.7.6.2 Floating Point Notes): "If either operand is NaN, the result is
    False" for eq ne lt le gt ge; the unordered equ neu ltu leu gtu geu are their ordered twins
    on numbers and True if either operand is NaN; "num returns True if both operands are
    numeric values (not NaN), and nan returns True if either operand is NaN".
    """
    if type_name in INTEGER_TYPES:
        return RELATIONS[UNSIGNED.get(op, op)](integer_keys(type_name, a), integer_keys(type_name, b))
    fmt = FORMATS[type_name]
    key_a, nan_a = float_keys(fmt, a, ftz=ftz)
    key_b, nan_b = float_keys(fmt, b, ftz=ftz)
    unordered = nan_a | nan_b
    if op == "num":
        return ~unordered
    if op == "nan":
        return unordered
    ordered = RELATIONS[UNORDERED.get(op, op)](key_a, key_b)
    return ordered | unordered if op in UNORDERED else ordered & ~unordered


def combine(form: Form, t: np.ndarray, c: tuple[np.ndarray, ...]) -> np.ndarray:
    """``BoolOp(t, c)`` (comparison.combine): t alone (0 or 1) without a BoolOp, else t and/or/xor
    the predicate c, as uint8 (the predicate's bits are 0 or 1)."""
    t = t.astype(np.uint8)
    boolop = form.get("boolop")
    if boolop is None:
        return t
    (pred,) = c
    pred = pred.astype(np.uint8, copy=False)
    return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[boolop](t, pred)


def _lanes_of(form: Form, index: int = 0) -> tuple[int, int]:
    """How a destination register splits, as the fallback's bookkeeping reads it (a packed type,
    or a packed type qualifier of the register's width): ``(lanes, lane_bits)``."""
    destination = form.destinations[index]
    width = register_bits(destination.type)
    packed = PACKED_TYPES.get(destination.type) or _packed_by_qualifier(form, width)
    return (packed.count, packed.lane_bits) if packed else (1, width)


def _predicate(bits: np.ndarray) -> BatchResult:
    return BatchResult(bits, None, None, 1, 1)


def _value(form: Form, bits: np.ndarray, index: int = 0) -> BatchResult:
    """An integer destination's result (no NaN and no set: every value is fixed bits)."""
    lanes, lane_bits = _lanes_of(form, index)
    return BatchResult(bits.astype(_dtype(lanes * lane_bits)), None, None, lanes, lane_bits)


# ---------------------------------------------------------------------------------------------
# §9.7.6.1 set, §9.7.6.2 setp
# ---------------------------------------------------------------------------------------------


@batched("setp")
def setp(form: Form) -> FastPath | None:
    """§9.7.6.2 ``setp.CmpOp{.ftz}{.BoolOp}.type p[|q], a, b{, c}``: ``t = (a CmpOp b) ? 1 : 0;
    p = BoolOp(t, c); q = BoolOp(!t, c);`` on every integer type and .f32/.f64, every comparison
    operator. Exact: integer compares and bit operations only (:func:`compare`, :func:`combine`)."""
    op, type_name = form["cmp"], form["type"]
    if not _comparable(type_name) or op not in (INTEGER_OPERATORS if type_name in INTEGER_TYPES else FLOAT_OPERATORS):
        return None
    ftz = "ftz" in form

    def fast(a: np.ndarray, b: np.ndarray, *c: np.ndarray, profile: Profile) -> tuple[BatchResult, ...]:
        _covered(profile)
        t = compare(op, type_name, a, b, ftz=ftz)
        return _predicate(combine(form, t, c)), _predicate(combine(form, ~t, c))

    return fast


@batched("set")
def set_(form: Form) -> FastPath | None:
    """§9.7.6.1 ``set.CmpOp{.ftz}{.BoolOp}.dtype.stype d, a, b{, c}``: ``d = BoolOp(t, c) ? (1.0f
    or 0xffffffff) : 0x00000000`` -- 1.0f (0x3f800000) for an .f32 destination, all ones for
    .u32/.s32. Exact as :func:`setp`."""
    op, stype = form["cmp"], form["stype"]
    if not _comparable(stype) or op not in (INTEGER_OPERATORS if stype in INTEGER_TYPES else FLOAT_OPERATORS):
        return None
    ftz = "ftz" in form
    true_value = np.uint32(0x3F800000 if form["dtype"] == "f32" else 0xFFFFFFFF)

    def fast(a: np.ndarray, b: np.ndarray, *c: np.ndarray, profile: Profile) -> BatchResult:
        _covered(profile)
        d = combine(form, compare(op, stype, a, b, ftz=ftz), c)
        return _value(form, np.where(d != 0, true_value, np.uint32(0)))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.6.3 selp, §9.7.6.4 slct
# ---------------------------------------------------------------------------------------------


@batched("selp")
def selp(form: Form) -> FastPath:
    """§9.7.6.3 ``selp.type d, a, b, c``: ``d = (c == 1) ? a : b;`` -- a selection of bits, exact."""

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        _covered(profile)
        return _value(form, np.where(c == 1, a, b))

    return fast


@batched("slct")
def slct(form: Form) -> FastPath | None:
    """§9.7.6.4 ``slct{.ftz}.dtype.ctype d, a, b, c``: ``d = (c >= 0) ? a : b;`` with c compared
    as :func:`compare` reads it ("for .f32 comparisons, negative zero equals zero"; a NaN c is
    unordered, so b; ``.ftz`` flushes a subnormal c to a zero of its sign, so a). The selected
    input is copied unchanged: exact."""
    ctype = form["ctype"]
    if not _comparable(ctype):
        return None
    ftz = "ftz" in form

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        _covered(profile)
        non_negative = compare("ge", ctype, c, np.zeros_like(c), ftz=ftz)
        return _value(form, np.where(non_negative, a, b))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.7.1 set, §9.7.7.2 setp on half-precision values
# ---------------------------------------------------------------------------------------------


def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low (fA[0] = a[0:15]) and high (fA[1] = a[16:31]) half-words of packed operands."""
    x = x.astype(np.uint32, copy=False)
    return x & np.uint32(0xFFFF), x >> np.uint32(16)


@batched("setp.half")
def setp_half(form: Form) -> FastPath | None:
    """§9.7.7.2 ``setp.CmpOp{.ftz}{.BoolOp}.{f16,f16x2,bf16,bf16x2}``: ``p = BoolOp(t, c)``; for the
    packed types ``p = BoolOp(t[0], c); q = BoolOp(t[1], c);`` with t[0] from the low half-words
    and t[1] from the high ones. Exact as :func:`setp`."""
    op, type_name = form["cmp"], form["type"]
    element = type_name.removesuffix("x2")
    if op not in FLOAT_OPERATORS or not _comparable(element):
        return None
    ftz = "ftz" in form

    def fast(a: np.ndarray, b: np.ndarray, *c: np.ndarray, profile: Profile) -> BatchResult | tuple[BatchResult, ...]:
        _covered(profile)
        if element == type_name:
            return _predicate(combine(form, compare(op, element, a, b, ftz=ftz), c))
        return tuple(_predicate(combine(form, compare(op, element, x, y, ftz=ftz), c)) for x, y in zip(_halves(a), _halves(b)))

    return fast


@batched("set.half")
def set_half(form: Form) -> FastPath | None:
    """§9.7.7.1 ``set.CmpOp{.ftz}{.BoolOp}.dtype.stype d, a, b{, c}`` with a half-precision source
    or destination: a true result writes 1.0 of an .f16/.bf16 destination (element), 0xffff for
    .u16/.s16 and the lanes of a packed source, 0xffffffff for .u32/.s32; false writes 0. A packed
    source packs the lane results, low half-words' into the low half (comparison.set_half). Exact
    as :func:`setp`."""
    op, dtype, stype = form["cmp"], form["dtype"], form["stype"]
    element = stype.removesuffix("x2")
    if not _comparable(element) or op not in (INTEGER_OPERATORS if element in INTEGER_TYPES else FLOAT_OPERATORS):
        return None
    ftz = "ftz" in form
    width = register_bits(form.destinations[0].type)
    if element != stype:
        true_lane = np.uint32(ONE.get(dtype.removesuffix("x2"), 0xFFFF))

        def packed(a: np.ndarray, b: np.ndarray, *c: np.ndarray, profile: Profile) -> BatchResult:
            _covered(profile)
            low, high = (combine(form, compare(op, element, x, y, ftz=ftz), c) for x, y in zip(_halves(a), _halves(b)))
            d = (np.where(high != 0, true_lane, np.uint32(0)) << np.uint32(16)) | np.where(low != 0, true_lane, np.uint32(0))
            return _value(form, d)

        return packed
    true_value = np.uint64(ONE.get(dtype) or (1 << register_bits(dtype)) - 1)

    def fast(a: np.ndarray, b: np.ndarray, *c: np.ndarray, profile: Profile) -> BatchResult:
        _covered(profile)
        d = combine(form, compare(op, stype, a, b, ftz=ftz), c)
        return _value(form, np.where(d != 0, true_value, np.uint64(0)).astype(_dtype(width)))

    return fast


__all__ = ["combine", "compare", "float_keys", "integer_keys", "selp", "set_", "set_half", "setp", "setp_half", "slct"]
