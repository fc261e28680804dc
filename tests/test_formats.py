"""The format table (spec/types.py) and exact decoding (semantics/numerics.py) against independent
oracles.

* The parameters of every format are written out here from the manual (§5.2.1 and §5.2.3) and
  IEEE 754, not read back from the code.
* Every encoding of f16, bf16 and of the 8-, 6- and 4-bit formats is decoded and compared with
  ml_dtypes (numpy for float16): the exact value as a Fraction, and the NaN/infinity classes.
  ue4m3 has no ml_dtypes type: it is e4m3 with the sign bit removed.
* f32, f64 and tf32 are decoded from seeded random bit patterns and compared with ``struct``.
* NaN payloads moved between formats are compared with the host's conversions (x86 SSE and
  numpy), which follow IEEE 754 §6.2.3.
"""

from __future__ import annotations

import math
import random
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    canonical_nan,
    decode,
    encode_nan,
    fields,
    infinity,
    is_subnormal,
    max_finite,
    min_subnormal,
    pack,
    quiet,
    to_fraction,
    zero,
)
from ptxspec.spec.types import FORMATS, NanEncoding, register_bits

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")

# ---------------------------------------------------------------------------------------------
# §5.2.3 as a table, transcribed from the manual
# ---------------------------------------------------------------------------------------------

#: name: (exponent bits, mantissa bits, signed, has infinity, element bits, register bits)
#: f64/f32/f16: IEEE 754 binary64/32/16 (§5.2.1). bf16: "8 bits of exponent and 7 bits of
#: mantissa", .b16. e4m3: "4 bits of exponent and 3 bits of mantissa ... does not support
#: infinity and NaN values are limited to 0x7f and 0xff". e5m2: "5 bits of exponent and 2 bits of
#: mantissa". tf32: "range same as .f32 with reduced precision (>=10 bits)", .b32; its layout is
#: implementation-defined and ptxspec keeps the f32 layout with the low 13 bits zero. e2m1: "2
#: bits of exponent and 1 bit of mantissa ... does not support infinity and NaN", packed (.b8
#: holds two). e2m3 / e3m2: 6-bit, "no infinity and NaN", each in a .b8 "with 2 MSB bits padded
#: with zeros". ue8m0: "8-bit unsigned ... 8 bits of exponent and 0 bits of mantissa ... does not
#: support infinity. NaN value is limited to 0xff". ue4m3: "7-bit unsigned ... 4 bits of exponent
#: and 3 bits of mantissa ... does not support infinity. NaN value is limited to 0x7f", in a .b8
#: "with MSB padded with zero".
MANUAL = {
    "f64": (11, 52, True, True, 64, 64),
    "f32": (8, 23, True, True, 32, 32),
    "tf32": (8, 10, True, True, 32, 32),
    "f16": (5, 10, True, True, 16, 16),
    "bf16": (8, 7, True, True, 16, 16),
    "e4m3": (4, 3, True, False, 8, 8),
    "e5m2": (5, 2, True, True, 8, 8),
    "e2m3": (2, 3, True, False, 6, 8),
    "e3m2": (3, 2, True, False, 6, 8),
    "e2m1": (2, 1, True, False, 4, 8),
    "ue8m0": (8, 0, False, False, 8, 8),
    "ue4m3": (4, 3, False, False, 7, 8),
}

#: Largest finite value, smallest positive value, canonical NaN (None: the format has no NaN).
EXTREMES = {
    "f64": ((2 - Fraction(1, 2**52)) * 2**1023, Fraction(1, 2**1074), 0x7FFF_FFFF_FFFF_FFFF),
    "f32": ((2 - Fraction(1, 2**23)) * 2**127, Fraction(1, 2**149), 0x7FFF_FFFF),
    "tf32": ((2 - Fraction(1, 2**10)) * 2**127, Fraction(1, 2**136), 0x7FFF_E000),
    "f16": (Fraction(65504), Fraction(1, 2**24), 0x7FFF),
    "bf16": ((2 - Fraction(1, 2**7)) * 2**127, Fraction(1, 2**133), 0x7FFF),
    "e4m3": (Fraction(448), Fraction(1, 2**9), 0x7F),
    "e5m2": (Fraction(57344), Fraction(1, 2**16), 0x7F),
    "e2m3": (Fraction(15, 2), Fraction(1, 8), None),
    "e3m2": (Fraction(28), Fraction(1, 16), None),
    "e2m1": (Fraction(6), Fraction(1, 2), None),
    "ue8m0": (Fraction(2**127), Fraction(1, 2**127), 0xFF),
    "ue4m3": (Fraction(448), Fraction(1, 2**9), 0x7F),
}

#: The NaN and infinity encodings of the small formats, from §5.2.3 and IEEE 754.
SMALL_SPECIALS = {
    "e4m3": ({0x7F, 0xFF}, set()),
    "e5m2": ({0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}, {0x7C, 0xFC}),
    "e2m3": (set(), set()),
    "e3m2": (set(), set()),
    "e2m1": (set(), set()),
    "ue8m0": ({0xFF}, set()),
    "ue4m3": ({0x7F}, set()),
}

#: ml_dtypes (or numpy) types that decode each format independently.
ML_TYPES = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
    "ue8m0": ml_dtypes.float8_e8m0fnu,
}


def value_of(fmt: str, bits: int, **kw):
    """What decode says, as "nan", ("inf", sign) or (Fraction, sign)."""
    v = decode(fmt, bits, **kw)
    if isinstance(v, NaN):
        return "nan"
    if isinstance(v, Infinity):
        return ("inf", v.sign)
    assert isinstance(v, Exact) and not v.sticky
    return (to_fraction(v), v.sign)


def value_of_float(x: float):
    """The same shape, for a host float (exact: Fraction(float) is exact)."""
    if math.isnan(x):
        return "nan"
    sign = int(math.copysign(1.0, x) < 0)
    if math.isinf(x):
        return ("inf", sign)
    return (Fraction(x), sign)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


def test_every_format_of_the_manual_is_present():
    assert set(FORMATS) == set(MANUAL)


@pytest.mark.parametrize("name", sorted(MANUAL))
def test_parameters_match_the_manual(name):
    e, m, signed, has_inf, width, reg = MANUAL[name]
    fmt = FORMATS[name]
    assert (fmt.exponent_bits, fmt.mantissa_bits, fmt.signed, fmt.has_infinity) == (e, m, signed, has_inf)
    assert fmt.name == name and str(fmt) == name
    assert fmt.width == width
    assert fmt.precision == m + 1
    assert register_bits(name) == reg
    # IEEE-style bias 2^(e-1) - 1 for every format, ue8m0 included (2^0 is encoded as 127).
    assert fmt.bias == 2 ** (e - 1) - 1
    # Only tf32 sits above bit 0 of its container.
    assert fmt.shift == (13 if name == "tf32" else 0)
    assert fmt.sign_mask == ((1 << (width - 1)) if signed else 0)
    assert fmt.has_subnormals == (name != "ue8m0")


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_extremes(name):
    largest, smallest, nan_bits = EXTREMES[name]
    fmt = FORMATS[name]
    assert value_of(name, max_finite(name)) == (largest, 0)
    assert value_of(name, min_subnormal(name)) == (smallest, 0)
    if fmt.signed:
        assert value_of(name, max_finite(name, 1)) == (-largest, 1)
        assert value_of(name, min_subnormal(name, 1)) == (-smallest, 1)
        assert value_of(name, zero(name, 1)) == (0, 1)
    if name != "ue8m0":
        assert value_of(name, zero(name)) == (0, 0)
    if nan_bits is None:
        assert fmt.nan is NanEncoding.NONE
        with pytest.raises(AssertionError):
            canonical_nan(name)
    else:
        assert canonical_nan(name) == nan_bits
        assert value_of(name, nan_bits) == "nan"
    if fmt.has_infinity:
        assert value_of(name, infinity(name)) == ("inf", 0)
        assert value_of(name, infinity(name, 1)) == ("inf", 1)
    else:
        with pytest.raises(AssertionError):
            infinity(name)


def test_ue8m0_has_no_zero():
    """ue8m0 encodes 2^(e - 127) for every e except 0xff (§5.2.3: no infinity, NaN is 0xff)."""
    for bits in range(255):
        assert value_of("ue8m0", bits) == (Fraction(2) ** (bits - 127), 0)
    assert zero("ue8m0") == 0 and value_of("ue8m0", 0) == (Fraction(1, 2**127), 0)


# ---------------------------------------------------------------------------------------------
# Exhaustive decoding of the narrow formats
# ---------------------------------------------------------------------------------------------


def ml_values(name: str) -> list:
    """Every encoding of ``name`` decoded by ml_dtypes/numpy, in encoding order."""
    width = FORMATS[name].width
    container = np.uint16 if width == 16 else np.uint8
    floats = np.arange(1 << width, dtype=container).view(ML_TYPES[name]).astype(np.float64)
    return [value_of_float(float(x)) for x in floats]


@pytest.mark.parametrize("name", sorted(ML_TYPES))
def test_decode_every_encoding_against_ml_dtypes(name):
    expected = ml_values(name)
    for bits, want in enumerate(expected):
        assert value_of(name, bits) == want, hex(bits)


def test_ue4m3_is_e4m3_without_its_sign():
    expected = ml_values("e4m3")[:128]
    for bits in range(128):
        assert value_of("ue4m3", bits) == expected[bits], hex(bits)
    assert value_of("ue4m3", 0x7F) == "nan"
    # The padding bit (bit 7, "MSB padded with zero") is not part of the value.
    for bits in range(128):
        assert value_of("ue4m3", bits | 0x80) == value_of("ue4m3", bits)


@pytest.mark.parametrize("name", sorted(SMALL_SPECIALS))
def test_special_encodings(name):
    nans, infs = SMALL_SPECIALS[name]
    width = FORMATS[name].width
    got_nans = {b for b in range(1 << width) if value_of(name, b) == "nan"}
    got_infs = {b for b in range(1 << width) if isinstance(decode(name, b), Infinity)}
    assert (got_nans, got_infs) == (nans, infs)


@pytest.mark.parametrize("name", ["f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue4m3"])
def test_subnormals_and_ftz(name):
    """Exponent field 0 with a non-zero mantissa is subnormal; under .ftz it reads as a zero of
    the same sign (§9.7.3: "flush subnormal inputs ... to sign-preserving zero")."""
    fmt = FORMATS[name]
    for bits in range(1 << fmt.width):
        sign, exponent, mantissa = fields(fmt, bits)
        assert pack(fmt, sign, exponent, mantissa) == bits
        expect_sub = exponent == 0 and mantissa != 0
        assert is_subnormal(fmt, bits) == expect_sub
        if expect_sub:
            # Below the smallest normal 2^(1-bias): |value| < 2^(1 - bias).
            v, s = value_of(name, bits)
            assert 0 < abs(v) < Fraction(2) ** (1 - fmt.bias) and s == sign
            assert value_of(name, bits, ftz=True) == (0, sign)
        else:
            assert value_of(name, bits, ftz=True) == value_of(name, bits)


def test_ue8m0_has_no_subnormals():
    assert not any(is_subnormal("ue8m0", b) for b in range(256))
    assert value_of("ue8m0", 0, ftz=True) == (Fraction(1, 2**127), 0)


# ---------------------------------------------------------------------------------------------
# f32, f64, tf32 against struct
# ---------------------------------------------------------------------------------------------


def interesting_bits(rng: random.Random, width: int, exponent_bits: int, n: int) -> list[int]:
    """Random patterns, with a share of zero/all-ones exponents (zeros, subnormals, inf, NaN)."""
    mantissa_bits = width - 1 - exponent_bits
    out = []
    for _ in range(n):
        bits = rng.getrandbits(width)
        r = rng.random()
        if r < 0.15:  # subnormal or zero
            bits &= ~(((1 << exponent_bits) - 1) << mantissa_bits)
        elif r < 0.3:  # inf or NaN
            bits |= ((1 << exponent_bits) - 1) << mantissa_bits
        elif r < 0.35:
            bits &= ~((1 << mantissa_bits) - 1)
        out.append(bits)
    return out


def test_f32_decode_against_struct():
    rng = random.Random(32)
    for bits in interesting_bits(rng, 32, 8, 20000) + [0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0x7FC00000]:
        host = struct.unpack("<f", struct.pack("<I", bits))[0]
        assert value_of("f32", bits) == value_of_float(host), hex(bits)


def test_f64_decode_against_struct():
    rng = random.Random(64)
    for bits in interesting_bits(rng, 64, 11, 20000) + [0, 1 << 63, 1, 0x7FEF_FFFF_FFFF_FFFF, 0x7FF0 << 48]:
        host = struct.unpack("<d", struct.pack("<Q", bits))[0]
        assert value_of("f64", bits) == value_of_float(host), hex(bits)


def test_tf32_decode_is_f32_with_the_low_13_bits_ignored():
    """tf32 in a .b32: the f32 layout with a 10-bit mantissa; the low 13 bits carry nothing."""
    rng = random.Random(19)
    for bits in interesting_bits(rng, 32, 8, 20000):
        host = struct.unpack("<f", struct.pack("<I", bits & ~0x1FFF))[0]
        assert value_of("tf32", bits) == value_of_float(host), hex(bits)


def test_tf32_fields_and_pack():
    fmt = FORMATS["tf32"]
    assert fields(fmt, 0xBF80_2000) == (1, 127, 1)
    assert pack(fmt, 1, 127, 1) == 0xBF80_2000
    assert min_subnormal(fmt) == 0x2000
    assert max_finite(fmt) == 0x7F7F_E000


# ---------------------------------------------------------------------------------------------
# NaN payloads (IEEE 754 §6.2.3)
# ---------------------------------------------------------------------------------------------


def test_nan_narrowing_f64_to_f32_matches_the_host():
    """x86 cvtsd2ss keeps the top 23 payload bits and sets the quiet bit, as IEEE 754 §6.2.3 asks."""
    rng = random.Random(6432)
    for _ in range(5000):
        bits = (rng.getrandbits(1) << 63) | (0x7FF << 52) | (rng.getrandbits(52) or 1)
        host = np.array([bits], dtype=np.uint64).view(np.float64).astype(np.float32).view(np.uint32)[0]
        nan = decode("f64", bits)
        assert encode_nan("f32", nan) == int(host), hex(bits)


def test_nan_widening_f32_to_f64_matches_the_host():
    rng = random.Random(3264)
    for _ in range(5000):
        bits = (rng.getrandbits(1) << 31) | (0xFF << 23) | (rng.getrandbits(23) or 1)
        host = np.array([bits], dtype=np.uint32).view(np.float32).astype(np.float64).view(np.uint64)[0]
        assert encode_nan("f64", decode("f32", bits)) == int(host), hex(bits)


def test_nan_f32_to_f16_and_back():
    """numpy's float16 conversion keeps the top payload bits but does not quiet; for a quiet NaN
    it therefore agrees with IEEE 754, and for a signalling one differs by the quiet bit only."""
    rng = random.Random(1632)
    for _ in range(5000):
        bits = (rng.getrandbits(1) << 31) | (0xFF << 23) | (rng.getrandbits(23) or 1)
        host = int(np.array([bits], dtype=np.uint32).view(np.float32).astype(np.float16).view(np.uint16)[0])
        got = encode_nan("f16", decode("f32", bits))
        quiet_bit = 0x200
        if bits & (1 << 22):
            assert got == host, hex(bits)
        elif (bits >> 13) & 0x3FF:
            assert got == host | quiet_bit, hex(bits)
        else:  # numpy makes such a payload 1 to keep a NaN; IEEE 754 sets the quiet bit instead
            assert host & 0x7FFF == 0x7C01 and got == (host & 0x8000) | 0x7E00, hex(bits)
        back = encode_nan("f32", decode("f16", got))
        want = int(np.array([got], dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)[0])
        assert back == want, hex(got)


def test_nan_payload_rules():
    f32_nan = decode("f32", 0xFFA0_0005)  # signalling, negative
    assert quiet(f32_nan) == 0xFFE0_0005
    assert encode_nan("bf16", f32_nan) == 0xFFE0  # top 7 payload bits, quiet
    assert encode_nan("tf32", f32_nan) == 0xFFE0_0000  # top 10 payload bits, quiet, low 13 zero
    assert encode_nan("f16", decode("f32", 0x7F80_0001)) == 0x7E00  # payload only in dropped bits
    # Formats with no IEEE NaN have no payload: the canonical NaN either way.
    assert encode_nan("e4m3", f32_nan) == 0x7F
    assert encode_nan("ue8m0", f32_nan) == 0xFF
    assert encode_nan("f16", decode("e4m3", 0xFF)) == 0x7FFF
    assert quiet(decode("e4m3", 0xFF)) == 0x7F
