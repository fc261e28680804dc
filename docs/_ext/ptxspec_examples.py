"""Worked examples stated by hand, for the instruction reference.

Each :class:`Example` names an instruction, its source operands and what the result must be, with
the expectation worked out *here*, independently of ptxspec: exactly representable values through
Python's :mod:`struct`, NaN and rounding cases from the IEEE 754 encodings and the sentence of
the manual quoted in ``why``. The reference generator evaluates each one with ptxspec at build
time and fails the build if they disagree; the opcode's page shows it.

The generic examples (every legal form on a few exactly representable inputs) come from
:mod:`ptxspec_oracle`; the ones here cover what an oracle of exact values cannot: rounding, overflow,
subnormals, NaN.
"""

from __future__ import annotations

import attrs

from ptxspec_oracle import f16, f32, f64


@attrs.frozen
class Bits:
    """The result is exactly this bit pattern."""

    bits: int


@attrs.frozen
class Allows:
    """The result is an allowed set (not one bit pattern) that contains each of these."""

    members: tuple[int, ...]


@attrs.frozen
class Example:
    instruction: str
    sources: tuple[int, ...]
    expect: tuple[Bits | Allows, ...]
    why: str
    profile: str = "spec"


F32_MAX = 0x7F7FFFFF
F32_INF = 0x7F800000
F32_MIN_SUBNORMAL = 0x00000001
F32_QNAN = 0x7FC00000
F64_QNAN = 0x7FF8000000000000

EXAMPLES: list[Example] = [
    # §9.7.3.3 add
    Example("add.rn.f32", (f32(1.0), f32(2.0)), (Bits(f32(3.0)),), "1.0 + 2.0 = 3.0, exactly representable."),
    Example(
        "add.rn.f32",
        (f32(1.0), f32(2.0**-24)),
        (Bits(f32(1.0)),),
        "1 + 2^-24 lies halfway between 1.0 and its successor 1 + 2^-23; .rn picks the even significand, 1.0.",
    ),
    Example(
        "add.rp.f32",
        (f32(1.0), f32(2.0**-24)),
        (Bits(f32(1.0) + 1),),
        "The same sum rounded up (.rp) is the successor of 1.0, 0x3f800001.",
    ),
    Example(
        "add.rn.f32",
        (F32_MAX, F32_MAX),
        (Bits(F32_INF),),
        "2 * FLT_MAX overflows; round-to-nearest gives +infinity.",
    ),
    Example(
        "add.rz.f32",
        (F32_MAX, F32_MAX),
        (Bits(F32_MAX),),
        "Rounding towards zero never overflows to infinity: the result is the largest finite value.",
    ),
    Example(
        "add.ftz.f32",
        (F32_MIN_SUBNORMAL, F32_MIN_SUBNORMAL),
        (Bits(0),),
        ".ftz flushes subnormal inputs to sign-preserving zero (§9.7.3.3): 0 + 0 = +0.",
    ),
    Example(
        "add.f32",
        (F32_MIN_SUBNORMAL, F32_MIN_SUBNORMAL),
        (Bits(2),),
        "Without .ftz subnormals are kept: 2^-149 + 2^-149 = 2^-148, exactly.",
    ),
    Example(
        "add.rn.sat.f32",
        (f32(-1.0), f32(-2.0)),
        (Bits(f32(0.0)),),
        ".sat clamps the result to [0.0, 1.0]: -3.0 becomes +0.0.",
    ),
    Example(
        "add.rn.sat.f32",
        (F32_QNAN, f32(1.0)),
        (Bits(f32(0.0)),),
        'With .sat, "NaN results are flushed to +0.0f" (§9.7.3.3).',
    ),
    Example(
        "add.rn.f32",
        (F32_QNAN, f32(1.0)),
        (Allows((F32_QNAN, 0x7FFFFFFF, 0xFFC00000)),),
        '"Single-precision instructions return an unspecified NaN" (§9.7.3): any NaN is allowed.',
    ),
    Example(
        "add.rn.f32",
        (F32_INF, F32_INF | 0x80000000),
        (Allows((F32_QNAN, 0x7FFFFFFF)),),
        "+inf + -inf is an invalid operation: an unspecified NaN.",
    ),
    Example(
        "add.rn.f64",
        (f64(1.5), f64(2.25)),
        (Bits(f64(3.75)),),
        "1.5 + 2.25 = 3.75 in double precision.",
    ),
    Example(
        "add.rn.f64",
        (0x7FF0000000000001, f64(1.0)),
        (Bits(0x7FF8000000000001),),
        "f64 supports NaN payloads (§9.7.3): a signalling NaN operand comes back quiet with its payload.",
    ),
    Example(
        "add.rn.f32x2",
        ((f32(1.0) << 32) | f32(10.0), (f32(2.0) << 32) | f32(20.0)),
        (Bits((f32(3.0) << 32) | f32(30.0)),),
        ".f32x2 adds the two .f32 halves independently.",
    ),
    # §9.7.3.1 testp, §9.7.3.2 copysign
    Example("testp.normal.f32", (f32(-0.0),), (Bits(1),), '"As a special case, positive and negative zero are considered normal numbers" (§9.7.3.1).'),
    Example("testp.subnormal.f32", (F32_MIN_SUBNORMAL,), (Bits(1),), "2^-149 is subnormal."),
    Example("testp.notanumber.f64", (F64_QNAN,), (Bits(1),), "A quiet NaN is not a number."),
    Example("testp.finite.f32", (F32_INF,), (Bits(0),), "+inf is not finite."),
    Example("copysign.f32", (f32(-1.0), f32(2.0)), (Bits(f32(-2.0)),), '"Copies the sign bit of a into the value of b" (§9.7.3.2): -2.0.'),
    # §9.7.3.4-8 sub, mul, fma, div
    Example("sub.rn.f32", (f32(1.0), f32(1.0)), (Bits(f32(0.0)),), "An exact zero difference is +0 in every rounding mode but .rm (IEEE 754 §6.3)."),
    Example("sub.rm.f32", (f32(1.0), f32(1.0)), (Bits(f32(-0.0)),), "... and -0 when rounding towards -infinity."),
    Example("mul.rn.f32", (f32(2.0**-100), f32(2.0**-100)), (Bits(0),), "2^-200 is below half the smallest subnormal: it rounds to +0."),
    Example(
        "mul.rn.f32",
        (f32(2.0**-75), f32(2.0**-75)),
        (Bits(0),),
        "2^-150 is exactly half the smallest subnormal 2^-149: a tie, which goes to the even neighbour, +0.",
    ),
    Example(
        "fma.rn.f32",
        (f32(1.0) + 1, f32(1.0) + 1, f32(-(1.0 + 2.0**-22))),
        (Bits(f32(2.0**-46)),),
        "(1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly: fma rounds once, where a mul then an add would give 0.",
    ),
    Example("div.rn.f32", (f32(1.0), f32(3.0)), (Bits(0x3EAAAAAB),), "1/3 rounded to nearest (checked with MPFR at 24 bits)."),
    Example("div.rz.f32", (f32(1.0), f32(3.0)), (Bits(0x3EAAAAAA),), "1/3 rounded towards zero."),
    Example("sqrt.rn.f32", (f32(2.0),), (Bits(0x3FB504F3),), "sqrt(2) = 1.41421356...; the nearest f32 is 1.41421353816986083984375."),
    Example("sqrt.rp.f32", (f32(2.0),), (Bits(0x3FB504F4),), "sqrt(2) rounded up."),
    Example("rcp.approx.f32", (f32(3.0),), (Allows((0x3EAAAAAB,)),), "The correctly rounded 1/3 lies within the .approx error bound."),
    # §9.7.3.11-12 min, max
    Example("min.f32", (f32(0.0), f32(-0.0)), (Bits(f32(-0.0)),), '"If both inputs are 0.0, +0.0 > -0.0" (§9.7.3.11).'),
    Example("min.f32", (F32_QNAN, f32(2.0)), (Bits(f32(2.0)),), "One NaN input: the other operand is the result (§9.7.3.11 semantics)."),
    Example("min.NaN.f32", (F32_QNAN, f32(2.0)), (Bits(0x7FFFFFFF),), 'With .NaN "the result is the canonical NaN" (§9.7.3.11).'),
    Example("min.xorsign.abs.f32", (f32(-3.0), f32(2.0)), (Bits(f32(-2.0)),), "Magnitude min(|-3|, |2|) = 2, sign 1 xor 0 (§9.7.3.11)."),
    Example("max.xorsign.abs.f32", (f32(-3.0), f32(2.0)), (Bits(f32(-3.0)),), "Magnitude max(3, 2) = 3, sign 1 xor 0 (§9.7.3.12)."),
    # §9.7.9.21 cvt
    Example("cvt.rzi.s32.f32", (f32(-2.5),), (Bits(0xFFFFFFFE),), ".rzi rounds towards zero: -2."),
    Example("cvt.rni.s32.f32", (f32(2.5),), (Bits(2),), '.rni: "if the source is equidistant between two integers, choose the even one": 2.'),
    Example("cvt.rni.s32.f32", (f32(3.5),), (Bits(4),), "... and 3.5 goes to 4."),
    Example("cvt.rzi.s32.f32", (F32_QNAN,), (Bits(0),), '"In float-to-integer conversions, NaN inputs are converted to 0" (§9.7.9.21).'),
    Example(
        "cvt.rzi.s32.f32", (f32(1e10),), (Bits(0x7FFFFFFF),), '"For float-to-integer conversions, the result is clamped to the destination range by default".'
    ),
    Example("cvt.rzi.u32.f32", (f32(-1.0),), (Bits(0),), "... so -1.0 becomes 0 in an unsigned destination."),
    Example("cvt.rn.f16.f32", (f32(1.0 + 2.0**-11),), (Bits(f16(1.0)),), "1 + 2^-11 is halfway between two f16 values; the even one is 1.0."),
    Example("cvt.rn.f16.f32", (f32(65520.0),), (Bits(0x7C00),), "65520 is halfway between the largest f16 (65504) and 2^16: it rounds to +inf."),
    Example("cvt.rn.satfinite.f16.f32", (f32(65520.0),), (Bits(0x7BFF),), ".satfinite clamps to the largest finite f16, 65504."),
    Example("cvt.rn.relu.f16.f32", (f32(-1.0),), (Bits(0),), ".relu clamps negative results to +0."),
    Example("cvt.f32.f16", (0x3C01,), (Bits(f32(1.0 + 2.0**-10)),), "Widening f16 to f32 is exact."),
    Example(
        "cvt.rna.tf32.f32",
        (f32(1.0 + 2.0**-11),),
        (Bits(0x3F802000),),
        ".rna breaks the tie away from zero: 1 + 2^-10, in an f32 layout whose low 13 bits are zero.",
    ),
    Example(
        "cvt.rn.satfinite.e4m3x2.f32",
        (f32(1000.0), f32(1.0)),
        (Bits(0x7E38),),
        "a (1000, saturated to e4m3's largest finite 448 = 0x7e) goes to d[15:8], b (1.0 = 0x38) to d[7:0] (§9.7.9.21).",
    ),
    Example(
        "cvt.rn.satfinite.e2m1x2.f32",
        (f32(6.0), f32(-0.5)),
        (Bits(0x79),),
        "e2m1: 6.0 = 0b0111 in d[7:4], -0.5 (subnormal) = 0b1001 in d[3:0].",
    ),
    # Profiles: sm_90 pins what the manual leaves open (recordings in conformance/data/sm_90/).
    Example(
        "add.rn.f32",
        (F32_QNAN, f32(1.0)),
        (Bits(0x7FFFFFFF),),
        "An H100/H200 returns the canonical NaN 0x7fffffff for f32 arithmetic (measured; see Profiles).",
        profile="sm_90",
    ),
]
