"""§9.7.8 Logic and shift instructions.

"The logic and shift instructions are fundamentally untyped, performing bit-wise operations on
operands of any type, provided the operands are of the same size" (§9.7.8): every function here
works on the operands' bit patterns, of the width of the instruction type (1 bit for ``.pred``).
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import INTEGER_TYPES, register_bits
from ptxspec.semantics.instructions import semantic
from ptxspec.profiles import Profile


def _mask(form: Form) -> int:
    """All ones in the instruction type's width (``.pred`` is one bit)."""
    return (1 << register_bits(form["type"])) - 1


@semantic("and")
def and_(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.8.1 and: "Compute the bit-wise and operation for the bits in a and b." ``d = a & b;``"""
    return a & b & _mask(form)


@semantic("or")
def or_(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.8.2 or: "Compute the bit-wise or operation for the bits in a and b." ``d = a | b;``"""
    return (a | b) & _mask(form)


@semantic("xor")
def xor(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.8.3 xor: "Compute the bit-wise exclusive-or operation for the bits in a and b."
    ``d = a ^ b;``"""
    return (a ^ b) & _mask(form)


@semantic("not")
def not_(form: Form, a: int, *, profile: Profile) -> int:
    """§9.7.8.4 not: "Invert the bits in a." ``d = ~a;`` (in the type's width)."""
    return ~a & _mask(form)


@semantic("cnot")
def cnot(form: Form, a: int, *, profile: Profile) -> int:
    """§9.7.8.5 cnot: "Compute the logical negation using C/C++ semantics."
    ``d = (a==0) ? 1 : 0;``"""
    return 1 if a == 0 else 0


def lop3_function(a: int, b: int, c: int, imm_lut: int) -> int:
    """``F(a, b, c)`` for the function whose table is ``immLut`` (§9.7.8.6).

    "immLut = F(ta, tb, tc)" with ta = 0xF0, tb = 0xCC, tc = 0xAA: bit ``4*a_i + 2*b_i + c_i`` of
    immLut is F of the bits ``a_i, b_i, c_i`` (bit k of ta, tb, tc is bit 2, 1, 0 of k). So each
    result bit i is immLut's bit at that index.
    """
    d = 0
    for i in range(32):
        index = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        d |= ((imm_lut >> index) & 1) << i
    return d


@semantic("lop3")
def lop3(form: Form, a: int, b: int, c: int, imm_lut: int, *, profile: Profile) -> int:
    """§9.7.8.6 lop3: "Compute bitwise logical operation on inputs a, b, c and store the result in
    destination d." ``F = GetFunctionFromTable(immLut); d = F(a, b, c);``"""
    return lop3_function(a, b, c, imm_lut)


@semantic("lop3.boolop")
def lop3_boolop(form: Form, a: int, b: int, c: int, imm_lut: int, q: int, *, profile: Profile) -> tuple[int, int]:
    """§9.7.8.6 lop3.BoolOp: "a predicate result p [is computed] by performing a Boolean operation
    on the destination operand d and the predicate q": ``p = (d != 0) BoolOp q;``. Returns
    ``(d, p)``."""
    d = lop3_function(a, b, c, imm_lut)
    t = 1 if d != 0 else 0
    p = (t | q) if form["boolop"] == "or" else (t & q)
    return d, p


@semantic("shf")
def shf(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.8.7 shf: "Shift the 64-bit value formed by concatenating operands a and b left or right
    by the amount specified by the unsigned 32-bit value in c. Operand b holds bits 63:32 and
    operand a holds bits 31:0 of the 64-bit source value ... For shf.l, the most-significant 32-bits
    of the result are written into d; for shf.r, the least-significant 32-bits of the result are
    written into d."

    ``n = (.mode == .clamp) ? min(c, 32) : c & 0x1f;`` The manual's ``a >> (32-n)`` with n = 0 is a
    shift by 32; read on the 64-bit concatenation [b, a] it is 0 (d = b for shf.l, d = a for
    shf.r), which is what the description of the concatenation says.
    """
    n = min(c, 32) if form["mode"] == "clamp" else c & 0x1F
    source = (b << 32) | a
    if form["dir"] == "l":
        return ((source << n) >> 32) & 0xFFFFFFFF
    return (source >> n) & 0xFFFFFFFF


@semantic("shl")
def shl(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.8.8 shl: "Shift a left by the amount specified by unsigned 32-bit value in b."
    ``d = a << b;`` "Shift amounts greater than the register width N are clamped to N." """
    width = register_bits(form["type"])
    return (a << min(b, width)) & ((1 << width) - 1)


@semantic("shr")
def shr(form: Form, a: int, b: int, *, profile: Profile) -> int:
    """§9.7.8.9 shr: "Shift a right by the amount specified by unsigned 32-bit value in b. Signed
    shifts fill with the sign bit, unsigned and untyped shifts fill with 0." ``d = a >> b;``
    "Shift amounts greater than the register width N are clamped to N." """
    width = register_bits(form["type"])
    n = min(b, width)
    if INTEGER_TYPES[form["type"]].signed and a >> (width - 1):
        a -= 1 << width  # the two's-complement value: Python's >> then fills with the sign
    return (a >> n) & ((1 << width) - 1)
