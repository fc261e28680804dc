"""An independent oracle for the reference's worked examples.

The examples on the instruction pages are computed by ptxspec at build time and compared with the
values stated here. Nothing in this file uses ptxspec's numerics: an operation's exact result is
worked out with :class:`fractions.Fraction`, and a value is encoded into a format by a separate,
deliberately simple encoder that accepts only values the format represents *exactly* (so no
rounding is ever involved: where ptxspec and this file agree, they agree on arithmetic that has
a single right answer). The only things taken from ptxspec are the data of :mod:`ptxspec.spec.types`
(field widths, bias, which encodings are NaN) -- the format definitions themselves.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from fractions import Fraction

from ptxspec.spec.types import FORMATS, INTEGER_TYPES, FloatFormat, NanEncoding

# ---------------------------------------------------------------------------------------------
# Encoding exact values
# ---------------------------------------------------------------------------------------------


def f32(x: float) -> int:
    """The IEEE binary32 encoding of ``x`` by the host's ``struct`` (exact for the values we use)."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f16(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


def _largest_exponent_field(fmt: FloatFormat) -> int:
    """The largest exponent field that still holds finite values."""
    top = (1 << fmt.exponent_bits) - 1
    return top - 1 if fmt.nan is NanEncoding.IEEE or fmt.has_infinity else top


def encode_float(fmt: FloatFormat, value: Fraction) -> int | None:
    """The encoding of ``value`` in ``fmt`` if ``fmt`` holds it exactly, else None. Zero is +0."""
    if value == 0:
        return None if not fmt.has_subnormals else 0
    sign = 1 if value < 0 else 0
    if sign and not fmt.signed:
        return None
    magnitude = abs(value)
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    m = fmt.mantissa_bits
    # The exponent e with 2^e <= magnitude < 2^(e+1).
    e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** e > magnitude:
        e -= 1
    lowest_normal = 1 - bias if fmt.has_subnormals else -bias
    if e >= lowest_normal:
        exponent_field = e + bias
        scaled = magnitude / Fraction(2) ** (e - m)  # 1.mmm * 2^m
        if scaled.denominator != 1:
            return None
        mantissa = int(scaled) - (1 << m)
    else:
        if not fmt.has_subnormals:
            return None
        exponent_field = 0
        scaled = magnitude / Fraction(2) ** (lowest_normal - m)
        if scaled.denominator != 1:
            return None
        mantissa = int(scaled)
    if exponent_field > _largest_exponent_field(fmt):
        return None
    if fmt.nan is NanEncoding.ALL_ONES and exponent_field == (1 << fmt.exponent_bits) - 1 and mantissa == (1 << m) - 1:
        return None  # that encoding is the NaN
    bits = (exponent_field << m) | mantissa
    if fmt.signed:
        bits |= sign << (fmt.exponent_bits + m)
    return bits << fmt.shift


def is_subnormal_value(fmt: FloatFormat, value: Fraction) -> bool:
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    return value != 0 and fmt.has_subnormals and abs(value) < Fraction(2) ** (1 - bias)


def encode_integer(type_name: str, value: Fraction) -> int | None:
    """Two's complement (s), plain binary (u, b); None if not an integer in range."""
    t = INTEGER_TYPES[type_name]
    if value.denominator != 1:
        return None
    v = int(value)
    low = -(1 << (t.bits - 1)) if t.signed else 0
    high = (1 << (t.bits - 1)) - 1 if t.signed else (1 << t.bits) - 1
    if not low <= v <= high:
        return None
    return v & ((1 << t.bits) - 1)


def encode(kind: str, value: Fraction) -> int | None:
    """Encode into a float format or an integer type named ``kind``."""
    if kind in FORMATS:
        return encode_float(FORMATS[kind], value)
    return encode_integer(kind, value)


def width_of(kind: str) -> int:
    if kind in INTEGER_TYPES:
        return INTEGER_TYPES[kind].bits
    fmt = FORMATS[kind]
    return fmt.width


# ---------------------------------------------------------------------------------------------
# Exact operations, by opcode
# ---------------------------------------------------------------------------------------------


def _exact_sqrt(x: Fraction) -> Fraction | None:
    if x < 0:
        return None
    n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
    return Fraction(n, d) if n * n == x.numerator and d * d == x.denominator else None


def _exact_log2(x: Fraction) -> Fraction | None:
    if x <= 0:
        return None
    if x.numerator == 1 and x.denominator & (x.denominator - 1) == 0:
        return Fraction(-(x.denominator.bit_length() - 1))
    if x.denominator == 1 and x.numerator & (x.numerator - 1) == 0:
        return Fraction(x.numerator.bit_length() - 1)
    return None


def _exact_exp2(x: Fraction) -> Fraction | None:
    return Fraction(2) ** int(x) if x.denominator == 1 and abs(x) < 64 else None


def _rsqrt(x: Fraction) -> Fraction | None:
    root = _exact_sqrt(x)
    return None if not root else 1 / root


#: opcode -> the exact operation on the source values (None where the result is not exact).
OPERATIONS: dict[str, Callable[..., Fraction | None]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "fma": lambda a, b, c: a * b + c,
    "mad": lambda a, b, c: a * b + c,
    "div": lambda a, b: a / b if b else None,
    "min": lambda a, b: min(a, b),
    "max": lambda a, b: max(a, b),
    "neg": lambda a: -a,
    "abs": lambda a: abs(a),
    "sqrt": _exact_sqrt,
    "rsqrt": _rsqrt,
    "rcp": lambda a: 1 / a if a else None,
    "ex2": _exact_exp2,
    "lg2": _exact_log2,
    "cvt": lambda a: a,
}

#: Source values to try, by opcode, in order; the first that give exact results are used.
_BINARY = [(1, 2), (Fraction(3, 2), Fraction(1, 4)), (-3, Fraction(1, 2)), (6, 4), (Fraction(1, 2), -2), (2, 2), (1, 1)]
_TERNARY = [(1, 2, 3), (Fraction(3, 2), 2, Fraction(-1, 2)), (-2, Fraction(1, 4), 4), (2, 2, 2), (1, 1, 1)]
_UNARY = [Fraction(3, 2), 2, Fraction(-1, 2), 4, 1, 6, Fraction(1, 2), 3, Fraction(1, 4)]
CANDIDATES: dict[str, list[tuple]] = {
    "add": _BINARY,
    "sub": [(3, 1), (Fraction(1, 4), Fraction(3, 2)), (-3, Fraction(1, 2)), (6, 2), (2, 4)],
    "mul": _BINARY,
    "div": [(3, 2), (1, 4), (-3, Fraction(1, 2)), (6, 4), (1, 2), (4, 2)],
    "fma": _TERNARY,
    "mad": _TERNARY,
    "min": [(1, 2), (Fraction(-3, 2), Fraction(1, 4)), (6, -4), (3, 2)],
    "max": [(1, 2), (Fraction(-3, 2), Fraction(1, 4)), (6, -4), (3, 2)],
    "neg": [(v,) for v in _UNARY],
    "abs": [(Fraction(-3, 2),), (2,), (-4,), (Fraction(1, 2),), (-1,), (3,)],
    "sqrt": [(4,), (Fraction(9, 4),), (Fraction(1, 4),), (16,), (1,)],
    "rsqrt": [(4,), (Fraction(1, 4),), (16,), (1,)],
    "rcp": [(2,), (Fraction(1, 4),), (-4,), (Fraction(1, 2),), (1,)],
    "ex2": [(1,), (-2,), (3,), (0,), (2,)],
    "lg2": [(4,), (Fraction(1, 2),), (8,), (2,)],
    "cvt": [(v,) for v in (3, Fraction(3, 2), -2, Fraction(1, 2), 6, 1, 2, 4, -1)],
}

#: Qualifiers whose effect the oracle knows for exactly representable, normal, non-zero values:
#: rounding modes do nothing to an exact result; .ftz nothing to a normal value; .approx/.full
#: give an allowed set that must contain the exact result; .sat, .relu are applied below.
KNOWN_QUALIFIERS = frozenset({"rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "satfinite", "relu", "approx", "full", "NaN"})

#: The integer-rounding modifiers of cvt (§9.7.9.21): the result is an integral value.
INTEGER_ROUNDING = frozenset({"rni", "rzi", "rmi", "rpi"})


def apply_modifiers(value: Fraction, qualifiers: set[str], destination: str) -> Fraction | None:
    """.relu clamps negative results to zero and .sat clamps float results to [0.0, 1.0]
    (§9.7.3, §9.7.9.21); an integer rounding modifier needs an integral value to stay exact."""
    if qualifiers & INTEGER_ROUNDING and value.denominator != 1:
        return None
    if "relu" in qualifiers and value < 0:
        value = Fraction(0)
    if "sat" in qualifiers and destination in FORMATS:
        value = min(max(value, Fraction(0)), Fraction(1))
    return value


def describe_value(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
