"""§9.7.1 Integer arithmetic and §9.7.2 extended-precision arithmetic, batched.

The numpy twins of :mod:`ptxspec.semantics.integer`, one builder per instruction family, each
following its scalar function step by step. They share one mechanism: a source register is an
array of unsigned bit patterns (uint16/uint32/uint64), and

* a sum, difference or product *modulo 2^n* is the same for every reading of the bits, so it is
  computed on the unsigned patterns (or on the values sign-extended to uint64 by :func:`_ext`),
  where numpy's integer arithmetic wraps silently: that is "d = t<n-1..0>" of the exact result;
* a comparison, a clamp (``.sat``, ``.relu``) or a division needs the *value*: it reads the
  patterns through the signed dtype of the same width (:func:`_key`), or as int64 where every
  value of the type and every intermediate fits (types of at most 32 bits), or as a sign and a
  uint64 magnitude (:func:`_magnitude`);
* a 64-bit ``.hi`` product needs the 128-bit product: :func:`~ptxspec.semantics.batch_rounding.product_128` builds it from 32-bit
  limbs in uint64.

Where the manual leaves a result open under a profile (div/rem by zero, rem of operands of
opposite signs, fns with base > 31) the result is the same set the scalar function returns: the
set of every n-bit value as one :class:`~ptxspec.semantics.batch.SharedSet` of the vectors it
holds for, both remainders as :class:`~ptxspec.semantics.batch.Members` rows; nothing is left
undecided.

``tests/test_batch_integer.py`` proves every legal form of these families bit-identical to the
readable semantics under the spec and sm_90 profiles, and checks each family against Python
integers.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import batch_rounding, integer
from ptxspec.semantics.batch import BatchResult, FastPath, Members, SharedSet, _dtype, batched
from ptxspec.semantics.integer import AnyValue, integer_type
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import INTEGER_TYPES, IntegerType

U64 = np.uint64
LOW32 = U64(0xFFFFFFFF)

# ---------------------------------------------------------------------------------------------
# Reading and writing bit patterns
# ---------------------------------------------------------------------------------------------


def _signed_dtype(width: int) -> np.dtype:
    return np.dtype(f"int{width}")


def _key(t: IntegerType, x: np.ndarray) -> np.ndarray:
    """The patterns ``x`` as an array whose numpy order is the order of the type's values: the
    same bits viewed as the signed dtype of their width for ``.sN``, else as they are."""
    return x.view(_signed_dtype(x.dtype.itemsize * 8)) if t.signed else x


def _ext(t: IntegerType, x: np.ndarray) -> np.ndarray:
    """The values of the type as uint64 patterns: sign-extended for ``.sN`` (then modulo 2^64),
    zero-extended otherwise. Sums and products of these, wrapping modulo 2^64, have the exact
    result's low 64 bits."""
    return _key(t, x).astype(np.int64).view(U64) if t.signed else x.astype(U64)


def _value(t: IntegerType, x: np.ndarray) -> np.ndarray:
    """The values of a type of at most 32 bits, exactly, as int64."""
    assert t.bits <= 32, "int64 holds the values (and their sums and products) of types up to 32 bits"
    return _key(t, x).astype(np.int64)


def _bits(width: int, x: np.ndarray) -> np.ndarray:
    """The low ``width`` bits of int64 or uint64 values: "d = t<n-1..0>". An unsigned narrowing
    cast keeps the low bits (modulo 2^width)."""
    return (x.view(U64) if x.dtype == np.int64 else x).astype(_dtype(width))


def _saturate(t: IntegerType, x: np.ndarray) -> np.ndarray:
    """:func:`~ptxspec.semantics.integer.saturate` on exact int64 values: clamp to MININT..MAXINT
    of the type, then its bits."""
    return _bits(t.bits, np.clip(x, t.min, t.max))


def _low_mask(k: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Elementwise ``(1 << k) - 1`` in ``dtype`` for ``k`` (int64) in 0..width: all ones shifted
    right by width - k (a shift below the width; k = 0 is the empty mask)."""
    width = dtype.itemsize * 8
    ones = np.array(np.iinfo(dtype).max, dtype=dtype)
    shift = (width - np.clip(k, 1, width)).astype(dtype)
    return np.where(k <= 0, dtype.type(0), ones >> shift)


def _bit_length(x: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of each unsigned element (uint8..uint64) as int64. A 32-bit half is
    exact in binary64, whose ``frexp`` exponent is its bit length (0 for 0)."""
    if x.dtype.itemsize <= 4:
        return np.frexp(x.astype(np.float64))[1].astype(np.int64)
    high, low = _bit_length(_bits(32, x >> U64(32))), _bit_length(_bits(32, x & LOW32))
    return np.where(high != 0, high + 32, low)


def _swar_count(x: np.ndarray) -> np.ndarray:
    """The number of one bits of each element, counted in uint64 fields of 2, 4 and 8 bits (the
    classic SWAR count; numpy before 2.0 has no ``bitwise_count``)."""
    x = x.astype(U64)
    with np.errstate(all="ignore"):
        x = x - ((x >> U64(1)) & U64(0x5555555555555555))
        x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
        x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
        return ((x * U64(0x0101010101010101)) >> U64(56)).astype(np.uint8)


#: The number of one bits of each element of an unsigned array (a small unsigned dtype).
popcount: Callable[[np.ndarray], np.ndarray] = getattr(np, "bitwise_count", _swar_count)


def _result(bits: np.ndarray, *, lanes: int = 1, shared: SharedSet | None = None) -> BatchResult:
    """An integer destination: fixed bits, and the vectors whose result is one shared set."""
    width = bits.dtype.itemsize * 8
    return BatchResult(bits, None, None, lanes, width // lanes, shared=shared)


def _flag(carry: np.ndarray) -> BatchResult:
    """The carry flag CC.CF (a one-bit predicate register) from a boolean array."""
    return BatchResult(carry.astype(np.uint8), None, None, 1, 1)


# ---------------------------------------------------------------------------------------------
# Lanewise families: add, sub, sad, abs, neg, min, max (§9.7.1.1-2, 7, 10-13)
# ---------------------------------------------------------------------------------------------

#: An operation on the elements of one lane: the element type and the lanes' bit arrays (the
#: unsigned dtype of the element width) -> the lane's result bits, same dtype.
LaneOp = Callable[..., np.ndarray]


def _lanewise(form: Form, op: LaneOp) -> FastPath:
    """:func:`~ptxspec.semantics.integer.lanewise`: ``op`` on each element, "iA[0] = a[0:15];
    iA[1] = a[16:31]" for the packed ``.u16x2``/``.s16x2`` types, the whole register otherwise.
    A lane is cut out with a shift and an unsigned narrowing cast, and put back with a shift."""
    t = integer_type(form["type"])
    lanes = 2 if form["type"].endswith("x2") else 1

    def fast(*sources: np.ndarray, profile: Profile) -> BatchResult:
        if lanes == 1:
            return _result(op(t, *sources))
        out = np.zeros(len(sources[0]), dtype=np.uint32)
        for lane in range(lanes):
            shift = np.uint32(lane * t.bits)
            part = op(t, *(_bits(t.bits, s >> shift) for s in sources))
            out |= part.astype(np.uint32) << shift
        return _result(out, lanes=lanes)

    return fast


@batched("add.int", "sub.int")
def add_sub(form: Form) -> FastPath | None:
    """§9.7.1.1-2 add, sub: "d = a + b", "d = a - b". Without ``.sat`` the low n bits of the exact
    sum: unsigned arithmetic in the element's dtype wraps modulo 2^n, which is the two's
    complement sum too. ``.sat`` (only .s32) clamps the exact sum, which int64 holds."""
    subtract = form.family.key == "sub.int"
    sat = "sat" in form

    def op(t: IntegerType, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if sat:
            x, y = _value(t, a), _value(t, b)
            return _saturate(t, x - y if subtract else x + y)
        with np.errstate(all="ignore"):
            return a - b if subtract else a + b

    if sat and integer_type(form["type"]).bits > 32:
        return None
    return _lanewise(form, op)


@batched("sad")
def sad(form: Form) -> FastPath:
    """§9.7.1.7 sad: "d = c + ((a<b) ? b-a : a-b)". The comparison reads the values (the signed
    view for .sN); the difference, non-negative and below 2^n, and the sum wrap modulo 2^n in
    the unsigned dtype, which keeps their low n bits."""

    def op(t: IntegerType, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return c + np.where(_key(t, a) < _key(t, b), b - a, a - b)

    return _lanewise(form, op)


@batched("abs.int", "neg.int")
def abs_neg(form: Form) -> FastPath:
    """§9.7.1.10-11 abs, neg: "d = |a|", "d = -a". Negation is 0 - a modulo 2^n (so |MININT| and
    -MININT wrap to MININT, the exact result's low n bits); abs negates where the signed view is
    negative."""
    absolute = form.family.key == "abs.int"

    def op(t: IntegerType, a: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            negated = a.dtype.type(0) - a
        return np.where(_key(t, a) < 0, negated, a) if absolute else negated

    return _lanewise(form, op)


@batched("min.int", "max.int")
def min_max(form: Form) -> FastPath:
    """§9.7.1.12-13 min, max: "d = (a < b) ? a : b", "d = (a > b) ? a : b", comparing the values
    (the signed view for .sN); ``.relu`` puts 0 where the chosen value is negative."""
    smaller = form.family.key == "min.int"
    relu = "relu" in form

    def op(t: IntegerType, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        x, y = _key(t, a), _key(t, b)
        d = np.where(x < y if smaller else x > y, a, b)
        return np.where(_key(t, d) < 0, d.dtype.type(0), d) if relu else d

    return _lanewise(form, op)


# ---------------------------------------------------------------------------------------------
# Products: mul, mad, mul24, mad24 (§9.7.1.3-6)
# ---------------------------------------------------------------------------------------------


def _halves(t: IntegerType, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The product's "t<2n-1..n>" and "t<n-1..0>" (:func:`~ptxspec.semantics.integer.product_part`)
    as n-bit patterns. Up to 32 bits the exact product of the values fits in 64 bits (|a b| <=
    2^62 signed, < 2^64 unsigned), so the uint64 product of the extended values is its two's
    complement; 64-bit operands go through :func:`~ptxspec.semantics.batch_rounding.product_128`."""
    if t.bits == 64:
        return batch_rounding.product_128(a, b, signed=t.signed)
    with np.errstate(all="ignore"):
        product = _ext(t, a) * _ext(t, b)
    return _bits(t.bits, product >> U64(t.bits)), _bits(t.bits, product)


def _wide_product(t: IntegerType, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The whole product ("d = t" of .wide) of types up to 32 bits, as uint64 (see :func:`_halves`)."""
    assert t.bits <= 32
    with np.errstate(all="ignore"):
        return _ext(t, a) * _ext(t, b)


@batched("mul.int")
def mul(form: Form) -> FastPath:
    """§9.7.1.3 mul: "t = a * b; d = t (.wide); d = t<2n-1..n> (.hi); d = t<n-1..0> (.lo)", the
    halves from :func:`_halves`, the .wide product its 2n bits."""
    t = integer_type(form["type"])
    mode = form["mode"]

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        if mode == "wide":
            return _result(_bits(2 * t.bits, _wide_product(t, a, b)))
        high, low = _halves(t, a, b)
        return _result(high if mode == "hi" else low)

    return fast


@batched("mad.int")
def mad(form: Form) -> FastPath | None:
    """§9.7.1.4 mad: "d = t + c (.wide); d = t<2n-1..n> + c (.hi); d = t<n-1..0> + c (.lo)".
    Without ``.sat`` the low bits of the sum: the unsigned sum of the patterns modulo 2^n (2n for
    .wide, c being the wide type). ``.hi.sat.s32`` clamps the exact sum of the two signed values,
    which int64 holds."""
    t = integer_type(form["type"])
    mode, sat = form["mode"], "sat" in form
    if sat and t.bits > 32:
        return None

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        if mode == "wide":
            with np.errstate(all="ignore"):
                return _result(_bits(2 * t.bits, _wide_product(t, a, b) + c.astype(U64)))
        high, low = _halves(t, a, b)
        part = high if mode == "hi" else low
        if sat:
            return _result(_saturate(t, _value(t, part) + _value(t, c)))
        with np.errstate(all="ignore"):
            return _result(part + c)

    return fast


def _product48(form: Form, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`~ptxspec.semantics.integer.product48`: "t<47..16>" or "t<31..0>" of the 48-bit
    product of the low 24 bits read in the type's sign (as int64: |t| < 2^48); the arithmetic
    shift of int64 is the floor shift of the scalar ``>>``."""
    signed = integer_type(form["type"]).signed

    def low24(x: np.ndarray) -> np.ndarray:
        v = (x & np.uint32(0xFFFFFF)).astype(np.int64)
        return (v ^ 0x800000) - 0x800000 if signed else v

    product = low24(a) * low24(b)
    return _bits(32, product >> 16 if form["mode"] == "hi" else product)


@batched("mul24")
def mul24(form: Form) -> FastPath:
    """§9.7.1.5 mul24: "d = t<47..16> (.hi), t<31..0> (.lo)" of the 24 x 24-bit product
    (:func:`_product48`)."""

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(_product48(form, a, b))

    return fast


@batched("mad24")
def mad24(form: Form) -> FastPath:
    """§9.7.1.6 mad24: "d = t<47..16> + c (.hi), t<31..0> + c (.lo)": the int64 sum of the two
    32-bit values (exact), clamped under ``.sat`` (.hi.s32 only), else its low 32 bits."""
    t = integer_type(form["type"])
    sat = "sat" in form

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        total = _value(t, _product48(form, a, b)) + _value(t, c)
        return _result(_saturate(t, total) if sat else _bits(32, total))

    return fast


# ---------------------------------------------------------------------------------------------
# div, rem (§9.7.1.8-9)
# ---------------------------------------------------------------------------------------------


def _magnitude(t: IntegerType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(negative, |value|) of each element: a bool array and the magnitude in uint64 (|MININT|
    = 2^(n-1) <= 2^63 fits)."""
    v = _ext(t, x)
    negative = _key(t, x) < 0 if t.signed else np.zeros(len(x), dtype=bool)
    with np.errstate(all="ignore"):
        return negative, np.where(negative, U64(0) - v, v)


def _by_zero(t: IntegerType, bits: np.ndarray, zero: np.ndarray, profile: Profile) -> SharedSet | None:
    """Division by zero, as the scalar div and rem decide it: the chip's value
    (``profile.integer_division_by_zero``) written into ``bits``, or (the manual's "unspecified,
    machine-specific value") the set of every n-bit value for those vectors (``bits`` 0, a
    member)."""
    chosen = profile.integer_division_by_zero
    if chosen is not None:
        bits[zero] = chosen(t)
        return None
    bits[zero] = 0
    return SharedSet(zero, AnyValue(t.bits)) if zero.any() else None


@batched("div.int")
def div(form: Form) -> FastPath:
    """§9.7.1.8 div: "d = a / b", rounded toward zero: the quotient of the magnitudes (uint64
    integer division is exact), negated modulo 2^64 where the signs differ, cut to n bits; so
    MININT / -1 wraps to MININT. A zero divisor: :func:`_by_zero` (the division itself divides by
    1 there, and is overwritten)."""
    t = integer_type(form["type"])

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        zero = b == 0
        sign_a, mag_a = _magnitude(t, a)
        sign_b, mag_b = _magnitude(t, b)
        quotient = mag_a // np.where(zero, U64(1), mag_b)
        with np.errstate(all="ignore"):
            bits = _bits(t.bits, np.where(sign_a != sign_b, U64(0) - quotient, quotient))
        return _result(bits, shared=_by_zero(t, bits, zero, profile))

    return fast


@batched("rem")
def rem(form: Form) -> FastPath:
    """§9.7.1.9 rem: "d = a % b". Toward zero: |a| mod |b| (exact in uint64) with a's sign;
    toward minus infinity: that plus b where it is not zero and the signs of a and b differ
    (x - floor(x/y) y = x - (trunc(x/y) - 1) y). The profile picks one
    (``profile.integer_remainder_toward_zero``), else the vectors where the two differ get the
    set of both, as the scalar function returns. A zero divisor: :func:`_by_zero`."""
    t = integer_type(form["type"])

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        zero = b == 0
        sign_a, mag_a = _magnitude(t, a)
        sign_b, mag_b = _magnitude(t, b)
        remainder = mag_a % np.where(zero, U64(1), mag_b)
        differ = (remainder != 0) & (sign_a != sign_b)
        with np.errstate(all="ignore"):
            toward_zero = np.where(sign_a, U64(0) - remainder, remainder)
            toward_minus_infinity = np.where(differ, toward_zero + _ext(t, b), toward_zero)
        rule = profile.integer_remainder_toward_zero
        bits = _bits(t.bits, toward_minus_infinity if rule is False else toward_zero)
        shared = _by_zero(t, bits, zero, profile)
        if rule is None and differ.any():  # both remainders (a zero divisor's set is the shared one)
            pair = np.stack([bits, _bits(t.bits, toward_minus_infinity)], axis=1)
            return attrs.evolve(_result(bits, shared=shared), members=Members(differ & ~zero, pair))
        return _result(bits, shared=shared)

    return fast


# ---------------------------------------------------------------------------------------------
# Bit counts and fields: popc, clz, bfind, fns, brev, bfe, bfi, szext, bmsk (§9.7.1.14-22)
# ---------------------------------------------------------------------------------------------


@batched("popc", "clz")
def popc_clz(form: Form) -> FastPath:
    """§9.7.1.14-15 popc, clz: the number of one bits (:data:`popcount`, exact), and the
    width minus the bit length (:func:`_bit_length`), into a 32-bit destination."""
    count = form.family.key == "popc"
    width = integer.width_of(form)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(_bits(32, popcount(a).astype(np.int64) if count else width - _bit_length(a)))

    return fast


@batched("bfind")
def bfind(form: Form) -> FastPath:
    """§9.7.1.16 bfind: a negative .sN value is complemented first, then the highest one bit is
    its bit length - 1 (:func:`_bit_length`), 0xffffffff where none; ``.shiftamt`` gives msb - d."""
    t = integer_type(form["type"])
    msb = t.bits - 1
    shiftamt = "shiftamt" in form

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        if t.signed:
            a = np.where(_key(t, a) < 0, ~a, a)
        d = _bit_length(a) - 1
        if shiftamt:
            d = msb - d
        return _result(np.where(a == 0, np.uint32(0xFFFFFFFF), _bits(32, d)))

    return fast


def _select_bit(m: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The position (int64) of the ``j``-th one bit (1 = the least significant) of each 32-bit
    ``m`` (uint64 holding 32 bits), where ``j`` <= popc(m): a binary search that halves a window
    known to hold it five times, stepping past the window's low half when that holds fewer than
    ``j`` ones."""
    position = np.zeros(len(m), dtype=np.int64)
    j = j.copy()
    for half in (16, 8, 4, 2, 1):
        below = popcount((m >> position.astype(U64)) & U64((1 << half) - 1)).astype(np.int64)
        up = j > below
        position += up * half
        j -= up * below
    return position


@batched("fns")
def fns(form: Form) -> FastPath:
    """§9.7.1.17 fns: the n-th set bit of mask from base, upward for n > 0, downward for n < 0,
    0xffffffff if there are fewer. Upward it is the n-th one bit of mask with the bits below base
    cleared; downward, the |n|-th from the top of mask with the bits above base cleared, which is
    the (popc - |n| + 1)-th from the bottom (:func:`_select_bit`). n = 0 tests the base bit.
    base > 31 and offset = -2^31 are read from the profile, as the scalar function does."""

    def fast(mask: np.ndarray, base: np.ndarray, offset: np.ndarray, *, profile: Profile) -> BatchResult:
        n = offset.view(np.int32).astype(np.int64)
        beyond = base > 31
        b = np.minimum(base, 31).astype(U64)
        m = mask.astype(U64)
        upward = m & (LOW32 << b) & LOW32
        downward = m & ((U64(2) << b) - U64(1))
        window = np.where(n > 0, upward, downward)
        ones = popcount(window).astype(np.int64)
        k = np.abs(n)
        found = (k >= 1) & (k <= ones)
        j = np.where(found, np.where(n > 0, k, ones - k + 1), 1)
        position = _select_bit(window, j)
        at_base = ((m >> b) & U64(1)) != 0
        d = np.where(n == 0, np.where(at_base, b.astype(np.int64), 0xFFFFFFFF), np.where(found, position, 0xFFFFFFFF))
        bits = _bits(32, d)
        open_ = np.zeros(len(bits), dtype=bool)
        if profile.fns_base_beyond_31 is not None:
            bits[beyond] = profile.fns_base_beyond_31
        else:
            bits[beyond] = 0
            open_ = beyond
        if profile.fns_most_negative_offset is not None:
            most_negative = n == INTEGER_TYPES["s32"].min
            bits[most_negative] = profile.fns_most_negative_offset
            open_ = open_ & ~most_negative
        return _result(bits, shared=SharedSet(open_, AnyValue(32)) if open_.any() else None)

    return fast


#: Each byte with its bits in reverse order.
_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


@batched("brev")
def brev(form: Form) -> FastPath:
    """§9.7.1.18 brev: "d[i] = a[msb-i]". Reversing the order of the bytes and the bits inside
    each byte (a table of 256) moves bit 8k + i to 8(B-1-k) + 7-i = msb - (8k + i)."""

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        swapped = np.ascontiguousarray(a).byteswap()
        return _result(_REVERSED_BYTES[swapped.view(np.uint8)].view(a.dtype))

    return fast


def _field_operands(width: int, b: np.ndarray, c: np.ndarray, profile: Profile) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~ptxspec.semantics.integer.bit_field_operands` on arrays: "pos = b & 0xff; len = c &
    0xff", or the chip's mask (``profile.bit_field_operand_mask``), as int64."""
    mask = profile.bit_field_operand_mask.get(width, 0xFF)
    return b.astype(np.int64) & mask, c.astype(np.int64) & mask


@batched("bfe")
def bfe(form: Form) -> FastPath:
    """§9.7.1.19 bfe: the bits a[pos .. pos+len-1] that lie inside a (``kept`` of them), padded
    with the sign bit: a's bit min(pos+len-1, msb) for .sN when len != 0, else 0. Shift counts and
    mask widths are clamped below the width (:func:`_low_mask`), where the kept field is empty
    anyway."""
    t = integer_type(form["type"])
    n = t.bits

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        pos, length = _field_operands(n, b, c, profile)
        dtype = a.dtype
        kept = np.clip(np.minimum(length, n - pos), 0, n)
        field = (a >> np.minimum(pos, n - 1).astype(dtype)) & _low_mask(kept, dtype)
        if not t.signed:
            return _result(field)
        top = np.clip(pos + length - 1, 0, n - 1).astype(dtype)
        sign = (((a >> top) & dtype.type(1)) != 0) & (length != 0)
        return _result(field | np.where(sign, ~_low_mask(kept, dtype), dtype.type(0)))

    return fast


@batched("bfi")
def bfi(form: Form) -> FastPath:
    """§9.7.1.20 bfi: "f = b; for (i=0; i<len && pos+i<=msb; i++) f[pos+i] = a[i]": the field
    mask of min(len, n - pos) bits at pos replaces those bits of b by a << pos; pos beyond the
    msb leaves b (an empty field at position 0)."""
    n = integer.width_of(form)

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, *, profile: Profile) -> BatchResult:
        pos, length = _field_operands(n, c, d, profile)
        dtype = a.dtype
        inside = pos < n
        shift = np.where(inside, pos, 0).astype(dtype)
        field = _low_mask(np.where(inside, np.minimum(length, n - pos), 0), dtype) << shift
        return _result((b & ~field) | ((a << shift) & field))

    return fast


@batched("szext")
def szext(form: Form) -> FastPath:
    """§9.7.1.21 szext, the pseudo-code on uint32 arrays: "b1 = b & 0x1f; too_large = (b >= 32
    && .mode == .clamp); mask = too_large ? 0 : (~0) << b1", the sign bit a[(b1 - 1) & 0x1f] for
    .s32 when b1 != 0 and not too_large; "d = (a & ~mask) | (sign_bit ? mask : 0)". A uint32
    left shift by less than 32 drops the bits above 31, as the 32-bit ``<<`` does."""
    clamp = form["mode"] == "clamp"
    signed = form["type"] == "s32"

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        b1 = b & np.uint32(0x1F)
        too_large = (b >= 32) & clamp
        mask = np.where(too_large, np.uint32(0), np.uint32(0xFFFFFFFF) << b1)
        sign = np.zeros(len(a), dtype=bool)
        if signed:
            sign = ~too_large & (b1 != 0) & (((a >> ((b1 - np.uint32(1)) & np.uint32(0x1F))) & np.uint32(1)) != 0)
        return _result((a & ~mask) | np.where(sign, mask, np.uint32(0)))

    return fast


@batched("bmsk")
def bmsk(form: Form) -> FastPath:
    """§9.7.1.22 bmsk, the scalar function on uint32 arrays: mask0 = ~0 << a1; mask1 = 0 where
    the mask runs to the msb (a1 + b1 >= 32, or .clamp with b >= 32), ~0 where b1 = 0, else
    ~0 << (a1 + b1); d = mask0 & ~mask1, and 0 for .clamp with a >= 32."""
    clamp = form["mode"] == "clamp"

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        ones = np.uint32(0xFFFFFFFF)
        a1, b1 = a & np.uint32(0x1F), b & np.uint32(0x1F)
        end = a1 + b1
        to_msb = (end >= 32) | ((b >= 32) & clamp)
        mask1 = np.where(to_msb, np.uint32(0), np.where(b1 == 0, ones, ones << np.minimum(end, np.uint32(31))))
        d = (ones << a1) & ~mask1
        return _result(np.where((a >= 32) & clamp, np.uint32(0), d))

    return fast


# ---------------------------------------------------------------------------------------------
# dp4a, dp2a (§9.7.1.23-24)
# ---------------------------------------------------------------------------------------------


def _extract(x: np.ndarray, count: int, width: int, type_name: str) -> list[np.ndarray]:
    """:func:`~ptxspec.semantics.integer.extract`: the ``count`` ``width``-bit fields of the
    uint32 ``x``, least significant first, as int64 values sign- or zero-extended by the type."""
    signed = type_name.startswith("s")
    top = 1 << (width - 1)
    fields = [((x >> np.uint32(width * i)) & np.uint32((1 << width) - 1)).astype(np.int64) for i in range(count)]
    return [(f ^ top) - top for f in fields] if signed else fields


@batched("dp4a", "dp2a")
def dot(form: Form) -> FastPath:
    """§9.7.1.23-24 dp4a, dp2a: "d = c; for (i...) d += Va[i] * Vb[i]" (dp2a with b's bytes from
    b_select = 0 (.lo) or 2 (.hi)), accumulated in int64 -- at most four products below 2^16 in
    magnitude each (2^32 for dp2a) and c -- then cut to 32 bits."""
    four = form.family.key == "dp4a"
    select = 0 if four or form["mode"] == "lo" else 2

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        va = _extract(a, 4, 8, form["atype"]) if four else _extract(a, 2, 16, form["atype"])
        vb = _extract(b, 4, 8, form["btype"])[select:]
        total = c.astype(np.int64)
        for x, y in zip(va, vb):
            total = total + x * y
        return _result(_bits(32, total))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.2 extended precision: add.cc, addc, sub.cc, subc, mad.cc, madc
# ---------------------------------------------------------------------------------------------


def _carry_sum(addends: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~ptxspec.semantics.integer.with_carry`'s total of n-bit unsigned addends: its low
    n bits (the unsigned sum wraps modulo 2^n) and whether it reached 2^n. Each step overflows
    exactly when the wrapped partial sum is below the addend just added; the addends here (two
    n-bit values and a carry of 0 or 1) total below 2^(n+1), so it overflows at most once."""
    total, carry = addends[0], np.zeros(len(addends[0]), dtype=bool)
    with np.errstate(all="ignore"):
        for x in addends[1:]:
            total = total + x
            carry |= total < x
    return total, carry


def _with_carry(form: Form, addends: list[np.ndarray]) -> BatchResult | tuple[BatchResult, BatchResult]:
    """d, and CC.CF under ``.cc``."""
    d, carry = _carry_sum(addends)
    return (_result(d), _flag(carry)) if "cc" in form else _result(d)


def _carry_in(cf: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return cf.astype(dtype)


@batched("add.cc", "addc")
def add_carry(form: Form) -> FastPath:
    """§9.7.2.1-2 add.cc, addc: "d = a + b (+ CC.CF)", carry-out to CC.CF (:func:`_carry_sum`);
    signed and unsigned alike, on the bit patterns."""
    if form.family.key == "add.cc":

        def add(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult | tuple[BatchResult, BatchResult]:
            return _with_carry(form, [a, b])

        return add

    def addc(a: np.ndarray, b: np.ndarray, cf: np.ndarray, *, profile: Profile) -> BatchResult | tuple[BatchResult, BatchResult]:
        return _with_carry(form, [a, b, _carry_in(cf, a.dtype)])

    return addc


def _borrow(form: Form, a: np.ndarray, b: np.ndarray, borrow_in: np.ndarray, profile: Profile):
    """:func:`~ptxspec.semantics.integer.borrow` of a - (b + borrow_in): d wraps modulo 2^n; the
    exact difference is negative when a < b + borrow_in, i.e. a < b, or a = b with a borrow in;
    the flag holds its complement on a chip that keeps the carry (``profile.carry_flag_holds_not_borrow``)."""
    with np.errstate(all="ignore"):
        d = a - b - borrow_in.astype(a.dtype)
    out = (a < b) | ((a == b) & (borrow_in != 0))
    if profile.carry_flag_holds_not_borrow:
        out = ~out
    return (_result(d), _flag(out)) if "cc" in form else _result(d)


@batched("sub.cc", "subc")
def sub_borrow(form: Form) -> FastPath:
    """§9.7.2.3-4 sub.cc, subc: "d = a - b", "d = a - (b + CC.CF)", borrow-out to CC.CF
    (:func:`_borrow`); subc's borrow-in is CC.CF, or 1 - CC.CF under
    ``profile.carry_flag_holds_not_borrow`` (:func:`~ptxspec.semantics.integer.borrow_in`)."""
    if form.family.key == "sub.cc":

        def sub(a: np.ndarray, b: np.ndarray, *, profile: Profile):
            return _borrow(form, a, b, np.zeros(len(a), dtype=np.uint8), profile)

        return sub

    def subc(a: np.ndarray, b: np.ndarray, cf: np.ndarray, *, profile: Profile):
        borrow_in = np.uint8(1) - cf if profile.carry_flag_holds_not_borrow else cf
        return _borrow(form, a, b, borrow_in, profile)

    return subc


@batched("mad.cc", "madc")
def mad_carry(form: Form) -> FastPath:
    """§9.7.2.5-6 mad.cc, madc: "d = t<63..32> + c (+ CC.CF) (.hi), t<31..0> + c (+ CC.CF)
    (.lo)": the product half of :func:`_halves` (n-bit pattern, as the scalar ``product_half``)
    plus c and the carry, with carry-out (:func:`_carry_sum`)."""
    t = integer_type(form["type"])
    high = form["mode"] == "hi"

    def part(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        hi, lo = _halves(t, a, b)
        return hi if high else lo

    if form.family.key == "mad.cc":

        def madcc(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile):
            return _with_carry(form, [part(a, b), c])

        return madcc

    def madc(a: np.ndarray, b: np.ndarray, c: np.ndarray, cf: np.ndarray, *, profile: Profile):
        return _with_carry(form, [part(a, b), c, _carry_in(cf, a.dtype)])

    return madc
