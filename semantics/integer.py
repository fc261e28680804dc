"""§9.7.1 Integer arithmetic instructions.

Every function has the same inner shape: read the operands as the mathematical integers that
their type says (two's complement for ``.sN``), compute the manual's expression exactly with
Python integers, and write the result back as a bit pattern of the destination's width -- keeping
the low bits ("d = t<n-1..0>") unless ``.sat`` clamps to "the MININT..MAXINT range (no overflow)
of the operation size". Packed ``.u16x2``/``.s16x2`` forms apply the same function to each
half-word: "iA[0] = a[0:15]; iA[1] = a[16:31]" (§9.7.1.1).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import INTEGER_TYPES, IntegerType
from ptxspec.semantics.instructions import semantic
from ptxspec.profiles import SPEC, Profile
from ptxspec.semantics.results import Allowed, OneOf, Result


def integer_type(name: str) -> IntegerType:
    """The element type: .u16x2 and .s16x2 hold two .u16 or .s16 (§5.2.4.2)."""
    return INTEGER_TYPES[name[:3] if name.endswith("x2") else name]


def value(t: IntegerType, bits: int) -> int:
    """The integer that ``bits`` encodes in type ``t`` (two's complement when signed)."""
    bits &= (1 << t.bits) - 1
    if t.signed and bits >> (t.bits - 1):
        return bits - (1 << t.bits)
    return bits


def wrap(width: int, x: int) -> int:
    """The low ``width`` bits of the exact result: "d = t<n-1..0>"."""
    return x & ((1 << width) - 1)


def saturate(t: IntegerType, x: int) -> int:
    """ ".sat limits result to MININT..MAXINT (no overflow) for the size of the operation"."""
    return wrap(t.bits, min(max(x, t.min), t.max))


def lanewise(form: Form, sources: tuple[int, ...], op: Callable[..., int]) -> int:
    """Apply ``op`` (on element integers, returning the exact result's bits) to each element."""
    t = integer_type(form["type"])
    lanes = 2 if form["type"].endswith("x2") else 1
    out = 0
    for lane in range(lanes):
        shift = lane * t.bits
        elements = [value(t, s >> shift) for s in sources]
        out |= wrap(t.bits, op(t, *elements)) << shift
    return out


# ---------------------------------------------------------------------------------------------
# §9.7.1.1-2 add, sub
# ---------------------------------------------------------------------------------------------


@semantic("add.int")
def add(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.1 add: "d = a + b"; for .u16x2/.s16x2 "d[i] = iA[i] + iB[i]" on each half-word.

    ".sat limits result to MININT..MAXINT (no overflow) for the size of the operation. Applies
    only to .s32 type."; without it the sum wraps to the register's width.
    """
    sat = "sat" in form
    return lanewise(form, (a, b), lambda t, x, y: saturate(t, x + y) if sat else x + y)


@semantic("sub.int")
def sub(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.2 sub: "d = a - b"; ".sat" as for add (only .s32)."""
    sat = "sat" in form
    return lanewise(form, (a, b), lambda t, x, y: saturate(t, x - y) if sat else x - y)


# ---------------------------------------------------------------------------------------------
# §9.7.1.3-6 mul, mad, mul24, mad24
# ---------------------------------------------------------------------------------------------


def product_part(mode: str, n: int, t: int) -> int:
    """The part of the exact product ``t`` that .mode keeps: "d = t; // for .wide",
    "d = t<2n-1..n>; // for .hi", "d = t<n-1..0>; // for .lo" (§9.7.1.3), as a signed or
    unsigned integer of its width (the bits of the 2n-bit product, read in the type's sign)."""
    if mode == "wide":
        return t
    if mode == "hi":
        return t >> n  # arithmetic shift: the upper n bits of the 2n-bit two's complement product
    return wrap(n, t)


@semantic("mul.int")
def mul(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.3 mul: "t = a * b; n = bitwidth of type; d = t (.wide); d = t<2n-1..n> (.hi);
    d = t<n-1..0> (.lo)". "If .wide is specified, then d is twice as wide as a and b to receive
    the full result of the multiplication."
    """
    t = integer_type(form["type"])
    product = value(t, a) * value(t, b)
    width = 2 * t.bits if form["mode"] == "wide" else t.bits
    return wrap(width, product_part(form["mode"], t.bits, product))


@semantic("mad.int")
def mad(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.4 mad: "t = a * b; d = t + c (.wide); d = t<2n-1..n> + c (.hi);
    d = t<n-1..0> + c (.lo)". ".sat limits result to MININT..MAXINT (no overflow) for the size of
    the operation. Applies only to .s32 type in .hi mode": the sum of the high half and c is
    clamped, computed without overflow.
    """
    t = integer_type(form["type"])
    mode = form["mode"]
    if mode == "wide":
        wide = INTEGER_TYPES[f"{form['type'][0]}{2 * t.bits}"]
        return wrap(wide.bits, value(t, a) * value(t, b) + value(wide, c))
    part = product_part(mode, t.bits, value(t, a) * value(t, b))
    total = value(t, part) + value(t, c)
    return saturate(t, total) if "sat" in form else wrap(t.bits, total)


def low24(t: IntegerType, x: int) -> int:
    """ "the 24-bit integer values held in 32-bit source registers": the low 24 bits, read in the
    type's sign (mul24.s32 is a signed 24x24-bit multiply)."""
    return value(IntegerType(t.name, 24, t.signed), x)


def product48(form: Form, a: int, b: int) -> int:
    """ "t<47..16> (.hi)" or "t<31..0> (.lo)" of the 48-bit product t = a * b (§9.7.1.5)."""
    t = integer_type(form["type"])
    product = low24(t, a) * low24(t, b)
    return wrap(32, product >> 16) if form["mode"] == "hi" else wrap(32, product)


@semantic("mul24")
def mul24(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.5 mul24: "Compute the product of two 24-bit integer values held in 32-bit source
    registers, and return either the high or low 32-bits of the 48-bit result": "d = t<47..16>"
    (.hi), "d = t<31..0>" (.lo)."""
    return product48(form, a, b)


@semantic("mad24")
def mad24(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.6 mad24: "d = t<47..16> + c" (.hi), "d = t<31..0> + c" (.lo). ".sat limits result
    of 32-bit signed addition to MININT..MAXINT (no overflow). Applies only to .s32 type in .hi
    mode." """
    t = integer_type(form["type"])
    total = value(t, product48(form, a, b)) + value(t, c)
    return saturate(t, total) if "sat" in form else wrap(32, total)


# ---------------------------------------------------------------------------------------------
# §9.7.1.7-13 sad, div, rem, abs, neg, min, max
# ---------------------------------------------------------------------------------------------


@semantic("sad")
def sad(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.7 sad: "d = c + ((a<b) ? b-a : a-b)", wrapping to the type's width."""
    return lanewise(form, (a, b, c), lambda t, x, y, z: z + (y - x if x < y else x - y))


@attrs.frozen
class AnyValue(Allowed):
    """Every bit pattern of ``width`` bits: a result the manual leaves unspecified."""

    width: int

    def __contains__(self, bits: int) -> bool:
        return 0 <= bits < (1 << self.width)

    def describe(self) -> str:
        return f"any {self.width}-bit value"

    def to_json(self) -> dict:
        return {"kind": "any-value", "width": self.width}


def truncating_quotient(x: int, y: int) -> int:
    """x / y rounded toward zero, as C's integer division."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


@semantic("div.int")
def div(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.8 div: "d = a / b". "Division by zero yields an unspecified, machine-specific
    value": any bit pattern of the type, or the chip's (``profile.integer_division_by_zero``).
    The quotient rounds toward zero (C's "/", which the pseudo-code uses); MININT / -1 wraps to
    MININT (the exact quotient's low n bits).
    """
    t = integer_type(form["type"])
    x, y = value(t, a), value(t, b)
    if y == 0:
        chosen = profile.integer_division_by_zero
        return chosen(t) if chosen else AnyValue(t.bits)
    return wrap(t.bits, truncating_quotient(x, y))


@semantic("rem")
def rem(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.9 rem: "d = a % b". "The behavior for negative numbers is machine-dependent and
    depends on whether divide rounds towards zero or negative infinity": for signed operands
    either remainder is allowed, or the chip's (``profile.integer_remainder_toward_zero``). A
    zero divisor is not specified for rem; as div's "division by zero yields an unspecified,
    machine-specific value", any bit pattern is allowed (or ``profile.integer_division_by_zero``).
    """
    t = integer_type(form["type"])
    x, y = value(t, a), value(t, b)
    if y == 0:
        chosen = profile.integer_division_by_zero
        return chosen(t) if chosen else AnyValue(t.bits)
    toward_zero = x - truncating_quotient(x, y) * y
    toward_minus_infinity = x - (x // y) * y
    if profile.integer_remainder_toward_zero is not None:
        return wrap(t.bits, toward_zero if profile.integer_remainder_toward_zero else toward_minus_infinity)
    members = frozenset({wrap(t.bits, toward_zero), wrap(t.bits, toward_minus_infinity)})
    return next(iter(members)) if len(members) == 1 else OneOf(members, t.bits)


@semantic("abs.int")
def abs_(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.10 abs: "d = ``|a|``", on signed integers only; ``|MININT|`` wraps to MININT (the low n
    bits of the exact result)."""
    return lanewise(form, (a,), lambda t, x: abs(x))


@semantic("neg.int")
def neg(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.11 neg: "d = -a"; -MININT wraps to MININT."""
    return lanewise(form, (a,), lambda t, x: -x)


def relu(form: Form, x: int) -> int:
    """ "min.relu.{s16x2, s32} clamps the result to 0 if negative" (§9.7.1.12)."""
    return max(x, 0) if "relu" in form else x


@semantic("min.int")
def min_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.12 min: "d = (a < b) ? a : b; // Integer (signed and unsigned)", per half-word for
    .u16x2/.s16x2; .relu clamps a negative result to 0."""
    return lanewise(form, (a, b), lambda t, x, y: relu(form, x if x < y else y))


@semantic("max.int")
def max_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.13 max: "d = (a > b) ? a : b", per half-word for .u16x2/.s16x2; .relu clamps a
    negative result to 0."""
    return lanewise(form, (a, b), lambda t, x, y: relu(form, x if x > y else y))


# ---------------------------------------------------------------------------------------------
# §9.7.1.14-22 popc, clz, bfind, fns, brev, bfe, bfi, szext, bmsk
# ---------------------------------------------------------------------------------------------


def width_of(form: Form) -> int:
    return integer_type(form["type"]).bits


@semantic("popc")
def popc(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.14 popc: "Count the number of one bits in a and place the resulting population count
    in 32-bit destination register d"."""
    return a.bit_count()


@semantic("clz")
def clz(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.15 clz: "Count the number of leading zeros in a starting with the most-significant
    bit"; the count is between 0 and the type's width, inclusive."""
    return width_of(form) - a.bit_length()


@semantic("bfind")
def bfind(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.16 bfind: "Find the bit position of the most significant non-sign bit in a". The
    pseudo-code: "if ((.type==.s32 || .type==.s64) && (a & (1<<msb))) a = ~a;" then the highest
    one bit, or 0xffffffff if none; ".shiftamt": "d = msb - d" unless no bit was found.
    """
    t = integer_type(form["type"])
    msb = t.bits - 1
    if t.signed and a >> msb:
        a = wrap(t.bits, ~a)
    if a == 0:
        return 0xFFFFFFFF
    d = a.bit_length() - 1
    return msb - d if "shiftamt" in form else d


@semantic("fns")
def fns(form: Form, mask: int, base: int, offset: int, *, profile: Profile) -> Result:
    """§9.7.1.17 fns: "find the n-th (given by offset) set bit in mask starting from the base bit,
    and store the bit position in d. If not found, store 0xffffffff in d." "Operand base must be
    <= 31, otherwise behavior is undefined": any 32-bit value then. A negative offset searches
    downward: "inc = (offset > 0) ? 1 : -1; count = ``|offset|`` - 1".

    A chip may pin base > 31 (``profile.fns_base_beyond_31``; sm_90: 0xffffffff) and depart for
    offset = -2^31 (``profile.fns_most_negative_offset``; sm_90: 0).
    """
    n = value(INTEGER_TYPES["s32"], offset)
    if profile.fns_most_negative_offset is not None and n == INTEGER_TYPES["s32"].min:
        return profile.fns_most_negative_offset  # whatever base is
    if base > 31:
        return profile.fns_base_beyond_31 if profile.fns_base_beyond_31 is not None else AnyValue(32)
    if n == 0:
        return base if (mask >> base) & 1 else 0xFFFFFFFF
    positions = range(base, 32) if n > 0 else range(base, -1, -1)
    found = [p for p in positions if (mask >> p) & 1]
    return found[abs(n) - 1] if abs(n) <= len(found) else 0xFFFFFFFF


@semantic("brev")
def brev(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.1.18 brev: "d[i] = a[msb-i]" for i in 0..msb."""
    n = width_of(form)
    return int(format(a, f"0{n}b")[::-1], 2)


def bit_field_operands(width: int, pos: int, length: int, profile: Profile = SPEC) -> tuple[int, int]:
    """bfe's and bfi's "pos = b & 0xff; len = c & 0xff" ("restricted to 8-bit value range
    0..255"), or the chip's measured reading (``profile.bit_field_operand_mask``)."""
    mask = profile.bit_field_operand_mask.get(width, 0xFF)
    return pos & mask, length & mask


@semantic("bfe")
def bfe(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.19 bfe: "pos = b & 0xff; len = c & 0xff"; the field is a[pos .. pos+len-1], cut
    at the msb. "The sign bit of the extracted field is defined as: .u32, .u64: zero; .s32, .s64:
    msb of input a if the extracted field extends beyond the msb of a, msb of extracted field
    otherwise. If the bit field length is zero, the result is zero." The destination is "padded
    with the sign bit of the extracted field".

    sm_90 departs for .u64/.s64: position and length are not masked to 8 bits
    (``profile.bit_field_operand_mask``).
    """
    t = integer_type(form["type"])
    msb = t.bits - 1
    pos, length = bit_field_operands(t.bits, b, c, profile)
    sbit = 0 if not t.signed or length == 0 else (a >> min(pos + length - 1, msb)) & 1
    kept = max(0, min(length, msb + 1 - pos))  # field bits that lie inside a
    field = (a >> pos) & ((1 << kept) - 1) if kept else 0
    fill = (((1 << t.bits) - 1) ^ ((1 << kept) - 1)) if sbit else 0
    return field | fill


@semantic("bfi")
def bfi(form: Form, a: int, b: int, c: int, d: int, *, profile: Profile) -> Result:
    """§9.7.1.20 bfi: "Align and insert a bit field from a into b". "pos = c & 0xff; len = d &
    0xff; f = b; for (i=0; i<len && pos+i<=msb; i++) f[pos+i] = a[i];" -- "If the bit field length
    is zero, the result is b. If the start position is beyond the msb of the input, the result is
    b."

    sm_90 departs for .b64: position and length are not masked to 8 bits
    (``profile.bit_field_operand_mask``).
    """
    n = width_of(form)
    pos, length = bit_field_operands(n, c, d, profile)
    if pos >= n:
        return b
    field = ((1 << min(length, n - pos)) - 1) << pos
    return (b & ~field) | ((a << pos) & field)


@semantic("szext")
def szext(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.21 szext: "Sign-extends or zero-extends an N-bit value from operand a where N is
    specified in operand b". The pseudo-code: "b1 = b & 0x1f; too_large = (b >= 32 && .mode ==
    .clamp); mask = too_large ? 0 : (~0) << b1; sign_pos = (b1 - 1) & 0x1f; sign_bit = ... (a >>
    sign_pos) & 1 for .s32 when b1 != 0 and not too_large; d = (a & ~mask) | (sign_bit ? mask : 0)".
    """
    b1 = b & 0x1F
    too_large = b >= 32 and form["mode"] == "clamp"
    mask = 0 if too_large else wrap(32, ~0 << b1)
    sign_bit = 0 if (b1 == 0 or too_large or form["type"] != "s32") else (a >> ((b1 - 1) & 0x1F)) & 1
    return (a & ~mask & 0xFFFFFFFF) | (mask if sign_bit else 0)


@semantic("bmsk")
def bmsk(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.1.22 bmsk: "Generates a 32-bit mask starting from the bit position specified in
    operand a, and of the width specified in operand b". The mask is 0 "when the value of a is
    greater than or equal to 32 and .mode is .clamp" and "when the value of b specified or the
    wrapped value of b (when .mode is .wrap) is 0"; ".clamp" limits the width to 0..32, ".wrap"
    to 0..31 (the pseudo-code's mask0 & ~mask1).
    """
    clamp = form["mode"] == "clamp"
    a1, b1 = a & 0x1F, b & 0x1F
    if clamp and a >= 32:
        return 0
    mask0 = wrap(32, ~0 << a1)
    if a1 + b1 >= 32 or (clamp and b >= 32):
        mask1 = 0  # the mask runs to the msb
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    else:
        mask1 = wrap(32, ~0 << (a1 + b1))
    return mask0 & ~mask1 & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# §9.7.1.23-24 dp4a, dp2a
# ---------------------------------------------------------------------------------------------


def extract(bits: int, count: int, width: int, type_name: str) -> list[int]:
    """ "extractAndSignOrZeroExt": the ``count`` ``width``-bit fields of ``bits``, least
    significant first, sign- or zero-extended by ``type_name``."""
    t = IntegerType(type_name, width, type_name.startswith("s"))
    return [value(t, bits >> (width * i)) for i in range(count)]


@semantic("dp4a")
def dp4a(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.23 dp4a: "d = c; Va = extractAndSignOrZeroExt_4(a, .atype); Vb = ...(b, .btype);
    for (i = 0; i < 4; ++i) d += Va[i] * Vb[i];", accumulated in 32 bits."""
    va = extract(a, 4, 8, form["atype"])
    vb = extract(b, 4, 8, form["btype"])
    return wrap(32, c + sum(x * y for x, y in zip(va, vb)))


@semantic("dp2a")
def dp2a(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.1.24 dp2a: "Va = extractAndSignOrZeroExt_2(a, .atype); Vb = ...4(b, .btype);
    b_select = (.mode == .lo) ? 0 : 2; for (i = 0; i < 2; ++i) d += Va[i] * Vb[b_select + i];"."""
    va = extract(a, 2, 16, form["atype"])
    vb = extract(b, 4, 8, form["btype"])
    select = 0 if form["mode"] == "lo" else 2
    return wrap(32, c + va[0] * vb[select] + va[1] * vb[select + 1])


# ---------------------------------------------------------------------------------------------
# §9.7.2 Extended-precision integer arithmetic: the carry flag CC.CF
# ---------------------------------------------------------------------------------------------


def with_carry(form: Form, total: int) -> Result | tuple[Result, Result]:
    """``d`` -- the low n bits of the exact unsigned ``total`` -- and, under ``.cc``, the carry-out
    CC.CF: bit n of the total ("Unsigned and signed integers behave the same": the adder works on
    bit patterns). A borrow is a negative total, whose bit n (of the two's complement) is set too.
    """
    n = width_of(form)
    d = wrap(n, total)
    return (d, 1 if total >> n else 0) if "cc" in form else d


def borrow(form: Form, total: int, profile: Profile = SPEC) -> Result | tuple[Result, Result]:
    """``d`` and, under ``.cc``, the borrow-out: 1 when the unsigned difference is negative (on a
    chip whose flag holds the carry instead, ``profile.carry_flag_holds_not_borrow``, 0 then)."""
    d = wrap(width_of(form), total)
    out = 1 if total < 0 else 0
    if profile.carry_flag_holds_not_borrow:
        out = 1 - out
    return (d, out) if "cc" in form else d


def borrow_in(cf: int, profile: Profile = SPEC) -> int:
    """The borrow that subc subtracts: CC.CF (the manual), or 1 - CC.CF on a chip whose flag
    holds the carry of a + ~b + 1 (``profile.carry_flag_holds_not_borrow``)."""
    return 1 - cf if profile.carry_flag_holds_not_borrow else cf


@semantic("add.cc")
def add_cc(form: Form, a: int, b: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.1 add.cc: "d = a + b; carry-out written to CC.CF". Returns (d, CC.CF)."""
    return with_carry(form, a + b)


@semantic("addc")
def addc(form: Form, a: int, b: int, cf: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.2 addc: "d = a + b + CC.CF; if .cc specified, carry-out written to CC.CF"."""
    return with_carry(form, a + b + cf)


@semantic("sub.cc")
def sub_cc(form: Form, a: int, b: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.3 sub.cc: "d = a - b; borrow-out written to CC.CF". Returns (d, CC.CF); on sm_90
    the flag holds 1 - borrow (``profile.carry_flag_holds_not_borrow``)."""
    return borrow(form, a - b, profile)


@semantic("subc")
def subc(form: Form, a: int, b: int, cf: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.4 subc: "d = a - (b + CC.CF); if .cc specified, borrow-out written to CC.CF"."""
    return borrow(form, a - (b + borrow_in(cf, profile)), profile)


def product_half(form: Form, a: int, b: int) -> int:
    """ "t = a * b; d = t<63..32> + c (.hi); d = t<31..0> + c (.lo)" (§9.7.2.5, written for 32
    bits): the bits of the n-bit half, as an unsigned addend."""
    t = integer_type(form["type"])
    product = value(t, a) * value(t, b)
    return wrap(t.bits, product_part(form["mode"], t.bits, product))


@semantic("mad.cc")
def mad_cc(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.5 mad.cc: "d = t<63..32> + c (.hi), t<31..0> + c (.lo); carry-out from addition is
    written to CC.CF"."""
    return with_carry(form, product_half(form, a, b) + c)


@semantic("madc")
def madc(form: Form, a: int, b: int, c: int, cf: int, *, profile: Profile) -> Result | tuple[Result, Result]:
    """§9.7.2.6 madc: "d = t<63..32> + c + CC.CF (.hi), t<31..0> + c + CC.CF (.lo); if .cc
    specified, carry-out from addition is written to CC.CF"."""
    return with_carry(form, product_half(form, a, b) + c + cf)
