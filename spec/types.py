"""PTX types and floating-point formats as data (§5.2).

§5.2.1 lists the fundamental types; §5.2.3 the alternate floating-point formats (bf16, tf32, e4m3,
e5m2, e2m3, e3m2, e2m1, ue8m0, ue4m3) that exist only as sources and destinations of some
instructions; §5.2.4 the packed types that hold two or four elements in one register.

A :class:`FloatFormat` records exactly what the numerics core needs to decode and encode a format:
its field widths, whether it has a sign bit, infinities, subnormals, and which encodings are NaN.
"""

from __future__ import annotations

import enum

import attrs


class NanEncoding(enum.Enum):
    """Which encodings of a format are NaN."""

    #: IEEE 754: exponent field all ones and a non-zero trailing significand (f64, f32, f16, bf16, e5m2).
    IEEE = "ieee"
    #: Only the encoding(s) with every exponent and significand bit set: e4m3 (0x7f, 0xff),
    #: ue4m3 (0x7f) and ue8m0 (0xff) (§5.2.3).
    ALL_ONES = "all-ones"
    #: No NaN at all: e2m3, e3m2, e2m1 (§5.2.3).
    NONE = "none"


@attrs.frozen
class FloatFormat:
    """A binary floating-point format: ``(-1)^s * 2^(e - bias) * 1.m`` and its special encodings.

    ``width`` is the number of bits the element occupies; ``shift`` is how far the element's fields
    sit above bit 0 of that width (tf32 keeps an f32 layout whose low 13 bits are zero).
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    signed: bool = True
    has_infinity: bool = True
    nan: NanEncoding = NanEncoding.IEEE
    #: False only for ue8m0, whose exponent field 0 is the normal value 2^-127 (it has no zero).
    has_subnormals: bool = True
    width: int = attrs.field(default=0)
    shift: int = 0

    def __attrs_post_init__(self) -> None:
        if self.width == 0:
            object.__setattr__(self, "width", self.field_bits + self.shift)

    @property
    def field_bits(self) -> int:
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def precision(self) -> int:
        """Significand bits including the hidden bit."""
        return self.mantissa_bits + 1

    @property
    def min_normal_exponent(self) -> int:
        """Unbiased exponent of the smallest normal number."""
        return (1 - self.bias) if self.has_subnormals else -self.bias

    @property
    def exponent_field_max(self) -> int:
        return (1 << self.exponent_bits) - 1

    @property
    def max_finite_fields(self) -> tuple[int, int]:
        """(exponent field, mantissa field) of the largest finite value."""
        all_ones_mantissa = (1 << self.mantissa_bits) - 1
        if self.nan is NanEncoding.IEEE:
            return self.exponent_field_max - 1, all_ones_mantissa
        if self.nan is NanEncoding.ALL_ONES:
            if self.mantissa_bits == 0:
                return self.exponent_field_max - 1, 0
            return self.exponent_field_max, all_ones_mantissa - 1
        return self.exponent_field_max, all_ones_mantissa

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of the largest finite value."""
        return self.max_finite_fields[0] - self.bias

    @property
    def sign_mask(self) -> int:
        return (1 << (self.field_bits - 1 + self.shift)) if self.signed else 0

    def __str__(self) -> str:
        return self.name


def _ieee(name: str, e: int, m: int, **kw) -> FloatFormat:
    return FloatFormat(name, e, m, **kw)


#: Every floating-point format of PTX 8.7, by the name the manual uses (§5.2.1, §5.2.3).
FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        _ieee("f64", 11, 52),
        _ieee("f32", 8, 23),
        # tf32: f32 range, 10 explicit mantissa bits; PTX keeps it in a .b32 register with the f32
        # layout, so the element sits 13 bits up and the low 13 bits are zero (§5.2.3).
        _ieee("tf32", 8, 10, shift=13),
        _ieee("f16", 5, 10),
        _ieee("bf16", 8, 7),
        FloatFormat("e4m3", 4, 3, has_infinity=False, nan=NanEncoding.ALL_ONES),
        _ieee("e5m2", 5, 2),
        FloatFormat("e2m3", 2, 3, has_infinity=False, nan=NanEncoding.NONE),
        FloatFormat("e3m2", 3, 2, has_infinity=False, nan=NanEncoding.NONE),
        FloatFormat("e2m1", 2, 1, has_infinity=False, nan=NanEncoding.NONE),
        FloatFormat("ue8m0", 8, 0, signed=False, has_infinity=False, nan=NanEncoding.ALL_ONES, has_subnormals=False),
        FloatFormat("ue4m3", 4, 3, signed=False, has_infinity=False, nan=NanEncoding.ALL_ONES),
    )
}


@attrs.frozen
class PackedType:
    """A packed type of §5.2.4: ``count`` elements of ``element`` in a register of ``register_bits``.

    Element 0 is the one in the most significant position (the manual packs the first source
    operand into the upper half).
    """

    name: str
    element: str
    count: int
    register_bits: int

    @property
    def lane_bits(self) -> int:
        return self.register_bits // self.count


#: Table 9 of §5.2.4.1 and §5.2.4.2.
PACKED_TYPES: dict[str, PackedType] = {
    p.name: p
    for p in (
        PackedType("f16x2", "f16", 2, 32),
        PackedType("f32x2", "f32", 2, 64),
        PackedType("bf16x2", "bf16", 2, 32),
        PackedType("e4m3x2", "e4m3", 2, 16),
        PackedType("e5m2x2", "e5m2", 2, 16),
        PackedType("e2m3x2", "e2m3", 2, 16),
        PackedType("e3m2x2", "e3m2", 2, 16),
        PackedType("ue8m0x2", "ue8m0", 2, 16),
        PackedType("e2m1x2", "e2m1", 2, 8),
        PackedType("e4m3x4", "e4m3", 4, 32),
        PackedType("e5m2x4", "e5m2", 4, 32),
        PackedType("e2m3x4", "e2m3", 4, 32),
        PackedType("e3m2x4", "e3m2", 4, 32),
        PackedType("e2m1x4", "e2m1", 4, 16),
        PackedType("u16x2", "u16", 2, 32),
        PackedType("s16x2", "s16", 2, 32),
    )
}


@attrs.frozen
class IntegerType:
    """A fundamental integer or bit-size type of §5.2.1."""

    name: str
    bits: int
    signed: bool

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1


#: Table 8 of §5.2.1: signed, unsigned and bit-size types.
INTEGER_TYPES: dict[str, IntegerType] = {
    t.name: t
    for t in (
        *(IntegerType(f"s{n}", n, True) for n in (8, 16, 32, 64)),
        *(IntegerType(f"u{n}", n, False) for n in (8, 16, 32, 64)),
        *(IntegerType(f"b{n}", n, False) for n in (8, 16, 32, 64, 128)),
    )
}


def register_bits(type_name: str) -> int:
    """Width in bits of the register that holds a value of ``type_name`` (§5.2, Table 9)."""
    if type_name in INTEGER_TYPES:
        return INTEGER_TYPES[type_name].bits
    if type_name in PACKED_TYPES:
        return PACKED_TYPES[type_name].register_bits
    if type_name == "pred":
        return 1
    fmt = FORMATS[type_name]
    if fmt.name in ("e2m3", "e3m2", "e2m1", "ue4m3"):
        return 8
    return fmt.width
