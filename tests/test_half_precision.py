"""Tests for §9.7.4 (half-precision add, sub, mul, fma, neg, abs, min, max) and §9.7.5 (mixed
precision add, sub, fma).

Oracles, all independent of ptxspec's numerics core:

* gmpy2/MPFR with IEEE emulation (tests/oracle_mpfr.py: f16 is precision 11, bf16 precision 8,
  with their exponent ranges and subnormalize) for add/sub/mul/fma in round to nearest, with the
  PTX .ftz/.sat added there and .relu added here from the manual's sentence;
* MPFR at f32 precision for the mixed-precision forms, the narrow inputs converted exactly by
  numpy (f16) and by the bit layout of bf16 (the upper half of an f32);
* sign-bit arithmetic for neg/abs and the manual's pseudo-code over exact Fractions for min/max.

Packed x2 forms are checked lane by lane: each half-word of the result against the oracle on the
same half-words of the sources.
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction

import numpy as np
import pytest

from oracle_mpfr import BF16, F16, F32, MODES, NAN, reference, sample_operands, specials
from ptxspec.semantics.instructions import evaluate, semantic_function
from ptxspec.semantics.results import SM_90, SPEC, AnyNaN, contains
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import IllegalForm

HALF = {"f16": F16, "bf16": BF16}


@functools.cache
def _form(text: str):
    return parse(text)


def run(text: str, *sources: int, profile=SPEC):
    form = _form(text)
    return semantic_function(form)(form, *sources, profile=profile)


def expect(result, out, fmt, canonical: bool = False):
    """Assert that ``result`` (ptxspec) is the oracle's ``out``: a NaN oracle result allows any NaN
    at spec level (the manual's "unspecified NaN"), or exactly the canonical NaN where the manual
    or the sm_90 profile names it."""
    if out == NAN:
        if canonical:
            assert result == 0x7FFF if fmt.width == 16 else result == 0x7FFFFFFF, hex(result) if isinstance(result, int) else result
        else:
            assert isinstance(result, AnyNaN) or (isinstance(result, int) and fmt.is_nan(result)), result
            for nan in (fmt.quiet_nan(0), fmt.quiet_nan(1), fmt.signalling_nan(0)):
                assert contains(result, nan)
    else:
        assert result == out, f"{result!r} != {out:#x}"


def relu(fmt, out):
    """.relu: "clamps the result to 0 if negative. NaN results are converted to canonical NaN"."""
    if out == NAN:
        return 0x7FFF
    return fmt.zero(0) if out & fmt.sign_bit else out


def form_text(op: str, type_name: str, variant: str) -> str:
    rnd = ".rn" if op == "fma" or variant else ""
    return f"{op}{rnd}{variant}.{type_name}"


VARIANTS = {
    "f16": ["", ".ftz", ".sat", ".ftz.sat", ".relu", ".ftz.relu"],
    "bf16": ["", ".relu"],
}


def differential(op: str, type_name: str, variant: str, seed: int, n: int) -> None:
    fmt = HALF[type_name]
    ftz, sat, has_relu = ".ftz" in variant, ".sat" in variant, ".relu" in variant
    text = form_text(op, type_name, variant)
    for operands in sample_operands(op, fmt, seed, n):
        out = reference(op, fmt, "rn", operands, ftz=ftz, sat=sat)
        if has_relu:
            out = relu(fmt, out)
        expect(run(text, *operands), out, fmt, canonical=has_relu)
        # sm_90 pins the unspecified NaN to the canonical one.
        expect(run(text, *operands, profile=SM_90), out, fmt, canonical=out == NAN and not sat)


CASES = [(op, t, v) for op in ("add", "sub", "mul", "fma") for t in ("f16", "bf16") for v in VARIANTS[t] if op == "fma" or ".relu" not in v]


@pytest.mark.parametrize("op,type_name,variant", CASES)
def test_mpfr_smoke(op, type_name, variant):
    differential(op, type_name, variant, seed=0, n=300)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("op,type_name,variant", CASES)
def test_mpfr_heavy(op, type_name, variant, chunk):
    differential(op, type_name, variant, seed=1000 + chunk, n=5000)


@pytest.mark.heavy
@pytest.mark.parametrize("type_name", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["add", "mul"])
@pytest.mark.parametrize("chunk", range(8))
def test_exhaustive_against_one(op, type_name, chunk):
    """Every encoding combined with a few partners: one, a negative value just past -1, the
    smallest subnormal, the largest finite value, -inf and a quiet NaN."""
    fmt = HALF[type_name]
    partners = [fmt.one(), fmt.next_down(fmt.one(1)), fmt.min_subnormal(), fmt.max_finite(), fmt.inf(1), fmt.quiet_nan()]
    text = form_text(op, type_name, "")
    for a in range(chunk * 8192, (chunk + 1) * 8192):
        for b in partners:
            expect(run(text, a, b), reference(op, fmt, "rn", (a, b)), fmt)


# ---------------------------------------------------------------------------------------------
# Packed x2 lanes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_name", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma"])
def test_x2_lanes(op, type_name):
    """"fA[0] = a[0:15]; fA[1] = a[16:31]; ... d[i] = fA[i] op fB[i]": each half-word of d is the
    operation on the same half-words of the sources, the other half-word playing no part."""
    fmt = HALF[type_name]
    lo = sample_operands(op, fmt, 7, 200)
    hi = sample_operands(op, fmt, 8, 200)
    text = form_text(op, type_name + "x2", "")
    for x, y in zip(lo, hi):
        packed = [(h << 16) | l for h, l in zip(y, x)]
        out = run(text, *packed, profile=SM_90)
        assert isinstance(out, int)
        for half, operands in ((out & 0xFFFF, x), (out >> 16, y)):
            ref = reference(op, fmt, "rn", operands)
            expect(half, 0x7FFF if ref == NAN else ref, fmt)
        # At spec level a NaN lane is any NaN while the other lane stays exact.
        spec = run(text, *packed)
        assert contains(spec, out)


def test_x2_lane_positions():
    """The lower half-word of d comes from the lower half-words of a and b."""
    one, two, three = 0x3C00, 0x4000, 0x4200
    assert run("add.f16x2", (one << 16) | two, (two << 16) | one) == (three << 16) | three
    assert run("sub.f16x2", (two << 16) | one, 0) == (two << 16) | one
    assert run("mul.f16x2", (two << 16) | one, (three << 16) | two) == (0x4600 << 16) | two
    # NaN in one lane only: the other lane is exact, at spec level too.
    spec = run("add.f16x2", (0x7E00 << 16) | one, (one << 16) | one)
    assert contains(spec, (0x7C01 << 16) | two) and not contains(spec, (0x7C01 << 16) | three)
    assert run("add.bf16x2", (0x3F80 << 16) | 0x4000, (0x3F80 << 16) | 0x3F80) == (0x4000 << 16) | 0x4040


# ---------------------------------------------------------------------------------------------
# .sat, .relu, .ftz special cases
# ---------------------------------------------------------------------------------------------


def test_saturation_and_relu_special_cases():
    inf, ninf, nan = 0x7C00, 0xFC00, 0x7E00
    assert run("add.sat.f16", inf, ninf) == 0  # NaN result flushed to +0.0
    assert run("add.sat.f16", 0x8000, 0x8000) == 0  # -0.0 clamps to +0.0
    assert run("mul.sat.f16", 0x4000, 0x4000) == 0x3C00  # 4 clamps to 1.0
    assert run("fma.rn.relu.f16", nan, 0x3C00, 0x3C00) == 0x7FFF  # canonical NaN
    assert run("fma.rn.relu.f16", 0x3C00, 0xBC00, 0x0000) == 0  # -1 -> 0
    assert run("fma.rn.relu.bf16", 0x3F80, 0xBF80, 0x3F80) == 0  # exact zero
    assert run("fma.rn.relu.bf16x2", 0x3F80BF80, 0x40004000, 0) == 0x40000000
    # .ftz: the smallest subnormal reads as zero; a subnormal result flushes to a signed zero.
    assert run("add.ftz.f16", 0x0001, 0x0000) == 0x0000
    assert run("add.f16", 0x0001, 0x0000) == 0x0001
    assert run("mul.ftz.f16", 0x8400, 0x3800) == 0x8000
    assert run("mul.f16", 0x8400, 0x3800) == 0x8200


# ---------------------------------------------------------------------------------------------
# neg, abs
# ---------------------------------------------------------------------------------------------


def sign_op_reference(op: str, fmt, bits: int, ftz: bool):
    if fmt.is_nan(bits):
        return NAN
    if ftz:
        bits = fmt.flush(bits)
    return bits ^ fmt.sign_bit if op == "neg" else bits & ~fmt.sign_bit


SIGN_CASES = [("neg", "f16", ""), ("neg", "f16", ".ftz"), ("neg", "bf16", ""), ("abs", "f16", ""), ("abs", "f16", ".ftz"), ("abs", "bf16", "")]


@pytest.mark.parametrize("op,type_name,variant", SIGN_CASES)
def test_neg_abs_sampled(op, type_name, variant):
    fmt = HALF[type_name]
    for bits in list(range(0, 1 << 16, 61)) + specials(fmt):
        expect(run(f"{op}{variant}.{type_name}", bits), sign_op_reference(op, fmt, bits, bool(variant)), fmt)


@pytest.mark.heavy
@pytest.mark.parametrize("op,type_name,variant", SIGN_CASES)
def test_neg_abs_exhaustive(op, type_name, variant):
    fmt = HALF[type_name]
    for bits in range(1 << 16):
        expect(run(f"{op}{variant}.{type_name}", bits), sign_op_reference(op, fmt, bits, bool(variant)), fmt)


def test_neg_abs_x2():
    assert run("neg.f16x2", 0x3C00BC00) == 0xBC003C00
    assert run("abs.bf16x2", 0xBF80BF80) == 0x3F803F80
    assert run("neg.bf16x2", 0x7FC03F80, profile=SM_90) == 0x7FFFBF80
    assert run("neg.ftz.f16x2", 0x00013C00) == 0x8000BC00


# ---------------------------------------------------------------------------------------------
# min, max
# ---------------------------------------------------------------------------------------------


def _key(fmt, bits: int):
    """A total order on non-NaN encodings: value first, then -0.0 < +0.0 ("+0.0 > -0.0")."""
    if fmt.is_inf(bits):
        return (Fraction(-(10**60)) if bits & fmt.sign_bit else Fraction(10**60), 0)
    return (fmt.fraction(bits), 0 if bits & fmt.sign_bit else 1)


def min_max_reference(op: str, fmt, a: int, b: int, *, ftz: bool, nan_mod: bool, xorsign: bool):
    """The pseudo-code of §9.7.4.7-8 over exact values; NAN marks "some NaN", "canonical" the
    canonical NaN of .NaN."""
    if ftz:
        a, b = fmt.flush(a), fmt.flush(b)
    sign = ((a ^ b) & fmt.sign_bit) if xorsign else None
    if xorsign:
        a, b = a & ~fmt.sign_bit, b & ~fmt.sign_bit
    a_nan, b_nan = fmt.is_nan(a), fmt.is_nan(b)
    if nan_mod and (a_nan or b_nan):
        return "canonical"
    if a_nan and b_nan:
        return NAN
    if a_nan or b_nan:
        d = b if a_nan else a
    else:
        pick_a = _key(fmt, a) < _key(fmt, b) if op == "min" else _key(fmt, a) > _key(fmt, b)
        d = a if pick_a else b
    if sign is not None:
        d = (d & ~fmt.sign_bit) | sign
    return d


MIN_MAX_VARIANTS = {"f16": ["", ".ftz", ".NaN", ".xorsign.abs", ".ftz.NaN.xorsign.abs"], "bf16": ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"]}
MIN_MAX_CASES = [(op, t, v) for op in ("min", "max") for t in ("f16", "bf16") for v in MIN_MAX_VARIANTS[t]]


@pytest.mark.parametrize("op,type_name,variant", MIN_MAX_CASES)
def test_min_max(op, type_name, variant):
    fmt = HALF[type_name]
    rng = random.Random(f"{op}{type_name}{variant}")
    sp = specials(fmt)
    pairs = [(a, b) for a in sp for b in sp] + [(rng.getrandbits(16), rng.getrandbits(16)) for _ in range(500)]
    text = f"{op}{variant}.{type_name}"
    for a, b in pairs:
        ref = min_max_reference(op, fmt, a, b, ftz=".ftz" in variant, nan_mod=".NaN" in variant, xorsign=".xorsign" in variant)
        if ref == "canonical":
            assert run(text, a, b) == 0x7FFF
        else:
            expect(run(text, a, b), ref, fmt)
            expect(run(text, a, b, profile=SM_90), ref, fmt, canonical=ref == NAN)


def test_min_max_zeros_and_x2():
    assert run("min.f16", 0x0000, 0x8000) == 0x8000
    assert run("max.f16", 0x8000, 0x0000) == 0x0000
    assert run("min.bf16", 0x7FC0, 0x3F80) == 0x3F80  # one NaN: the other operand
    assert run("min.NaN.bf16", 0x7FC0, 0x3F80) == 0x7FFF
    assert run("max.xorsign.abs.f16", 0xC000, 0x3C00) == 0xC000  # |-2| > |1|, sign -(+)= -
    assert run("min.f16x2", 0x3C00C000, 0x40003C00) == 0x3C00C000
    assert run("max.NaN.f16x2", 0x7E003C00, 0x00004000) == 0x7FFF4000


# ---------------------------------------------------------------------------------------------
# §9.7.5 mixed precision
# ---------------------------------------------------------------------------------------------


def to_f32(type_name: str, bits: int) -> int:
    """The exact .f32 encoding of a .f16 (numpy) or .bf16 (the upper half of an f32) value."""
    if type_name == "bf16":
        return bits << 16
    return int(np.array([bits], dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)[0])


MIXED = [(op, t, mode, variant) for op in ("add", "sub", "fma") for t in ("f16", "bf16") for mode in MODES for variant in ("", ".sat")]


@pytest.mark.parametrize("op,type_name,mode,variant", MIXED)
def test_mixed_precision(op, type_name, mode, variant):
    """``d = convert(a) op c`` computed by MPFR at f32 precision on the exactly converted inputs."""
    narrow = HALF[type_name]
    rng = random.Random(f"{op}{type_name}{mode}{variant}")
    text = f"{op}.{mode}{variant}.f32.{type_name}"
    arity = 2 if op == "fma" else 1
    wide = sample_operands("fma" if op == "fma" else "add", F32, 5, 200)
    for i, narrow_ops in enumerate(sample_operands("fma" if op == "fma" else "add", narrow, 6, 200)):
        xs = list(narrow_ops[:arity])
        converted = [to_f32(type_name, x) for x in xs]
        c = wide[i][-1]
        if rng.random() < 0.4:
            # c close to the converted product or operand, so the sum cancels or rounds at a boundary.
            c = (converted[0] ^ F32.sign_bit) + rng.randrange(-3, 4) if op != "sub" else converted[0] + rng.randrange(-3, 4)
            c &= 0xFFFFFFFF
        out = reference(op, F32, mode, (*converted, c), sat=".sat" in variant)
        expect(run(text, *xs, c), out, F32)
        expect(run(text, *xs, c, profile=SM_90), out, F32, canonical=out == NAN)


def test_mixed_examples():
    assert evaluate("add.f32.bf16", [0x3F80, 0x3F800000]) == (0x40000000,)
    assert evaluate("sub.rz.sat.f32.f16", [0x3C00, 0x40000000]) == (0,)
    assert evaluate("fma.rn.f32.f16", [0x0001, 0x0001, 0]) == (0x27800000,)  # 2^-24 * 2^-24 = 2^-48, exact in f32
    assert evaluate("fma.rn.f32.f16", [0x0001, 0x0001, 0x3F800000]) == (0x3F800000,)  # 1 + 2^-48 rounds to 1
    assert evaluate("fma.rp.f32.f16", [0x0001, 0x0001, 0x3F800000]) == (0x3F800001,)
    # A bf16 subnormal is an f32 subnormal, kept ("subnormal numbers are supported by default").
    assert evaluate("fma.rn.f32.bf16", [0x0001, 0x3F80, 0]) == (0x00010000,)
    assert evaluate("fma.rn.f32.f16", [0x0001, 0x3C00, 0]) == (0x33800000,)


# ---------------------------------------------------------------------------------------------
# Catalogue: legality with reasons, targets
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,reason",
    [
        ("add.ftz.bf16", "`.ftz` is not allowed with `.bf16`"),
        ("mul.sat.bf16x2", "`.sat` is not allowed with `.bf16x2`"),
        ("fma.rn.ftz.bf16", "`.ftz` is not allowed"),
        ("fma.f16", "missing rnd qualifier"),
        ("fma.rn.sat.relu.f16", "not allowed together"),
        ("add.rz.f16", "`.rz` is not allowed with `.f16`"),
        ("fma.rm.bf16x2", "`.rm` is not allowed with `.bf16x2`"),
        ("min.xorsign.f16", "must be specified together"),
        ("max.abs.bf16", "must be specified together"),
        ("min.ftz.bf16", "`.ftz` is not allowed"),
        ("neg.ftz.bf16", "`.ftz` is not allowed"),
        ("add.relu.f16", "not allowed"),
        ("fma.f32.f16", "missing rnd qualifier"),
        ("add.ftz.f32.f16", "not allowed"),
        ("fma.rn.ftz.f32.bf16", "ptxas rejects it"),
    ],
)
def test_illegal_forms(text, reason):
    with pytest.raises(IllegalForm, match=None) as info:
        parse(text)
    assert reason in str(info.value)


@pytest.mark.parametrize(
    "text,ptx,sm",
    [
        ("add.f16", (4, 2), 53),
        ("add.rn.bf16x2", (7, 8), 90),
        ("fma.rn.ftz.sat.f16x2", (4, 2), 53),
        ("fma.rn.relu.f16", (7, 0), 80),
        ("fma.rn.bf16", (7, 0), 80),
        ("neg.f16", (6, 0), 53),
        ("abs.f16x2", (6, 5), 53),
        ("abs.bf16", (7, 0), 80),
        ("min.NaN.f16", (7, 0), 80),
        ("max.xorsign.abs.bf16x2", (7, 2), 86),
        ("add.rz.sat.f32.bf16", (8, 6), 100),
        ("fma.rm.sat.f32.f16", (8, 6), 100),
    ],
)
def test_targets(text, ptx, sm):
    target = parse(text).target
    assert (target.ptx, target.sm) == (ptx, sm)


def test_operand_types():
    assert [o.type for o in parse("add.f16").operands] == ["f16"] * 3
    assert [o.type for o in parse("add.bf16").operands] == ["b16"] * 3
    assert [o.type for o in parse("fma.rn.bf16x2").operands] == ["b32"] * 4
    assert [(o.name, o.type) for o in parse("fma.rn.f32.bf16").operands] == [("d", "f32"), ("a", "b16"), ("b", "b16"), ("c", "f32")]
    # The f32 families are untouched by the half-precision ones.
    assert parse("add.rz.f32").family.key == "add.f"


# ---------------------------------------------------------------------------------------------
# §9.7.4.9 tanh.approx: the allowed set is exactly the encodings within the absolute error
# ---------------------------------------------------------------------------------------------

import gmpy2  # noqa: E402

TANH_BOUND = {"f16": Fraction(-10987, 1000), "bf16": Fraction(-8)}


@pytest.mark.parametrize("type_name", ["f16", "bf16"])
def test_tanh_approx_bound(type_name):
    """An encoding v is allowed iff ``|v - tanh(a)| <= 2^-10.987`` (.f16) or ``2^-8`` (.bf16),
    checked with MPFR at 200 bits on the 13 encodings around the correctly rounded tanh(a)."""
    fmt = HALF[type_name]
    rng = random.Random(type_name)
    samples = [b for b in specials(fmt) if not fmt.is_nan(b) and not fmt.is_inf(b) and not fmt.is_zero(b)]
    samples += [rng.getrandbits(16) for _ in range(150)]
    ctx = gmpy2.context(precision=200, emin=-(1 << 20), emax=1 << 20)
    with ctx:
        e = TANH_BOUND[type_name]
        delta = gmpy2.exp2(gmpy2.mpfr(e.numerator) / e.denominator)
    for a in samples:
        if fmt.is_nan(a) or fmt.is_inf(a) or fmt.is_zero(a):
            continue
        result = run(f"tanh.approx.{type_name}", a)
        with ctx:
            y = gmpy2.tanh(fmt.to_mpfr(a))
        with fmt.context("rn"):
            nearest = fmt.from_mpfr(+y)
        around = [nearest]
        for _ in range(6):
            around = [fmt.next_down(around[0]), *around, fmt.next_up(around[-1])]
        for v in around:
            if fmt.is_inf(v) or fmt.is_nan(v):
                continue
            with ctx:
                inside = abs(fmt.to_mpfr(v) - y) <= delta
            assert contains(result, v) == inside, (hex(a), hex(v))


def test_tanh_approx_table_and_lanes():
    """-Inf -> -1.0, -0.0 -> -0.0, +0.0 -> +0.0, +Inf -> 1.0, NaN -> NaN; x2 lanes apart."""
    assert run("tanh.approx.f16", 0xFC00) == 0xBC00
    assert run("tanh.approx.f16", 0x7C00) == 0x3C00
    assert run("tanh.approx.bf16", 0x8000) == 0x8000
    assert run("tanh.approx.bf16", 0x0000) == 0x0000
    assert run("tanh.approx.f16", 0x7E01, profile=SM_90) == 0x7FFF
    assert isinstance(run("tanh.approx.bf16", 0x7FC1), AnyNaN)
    packed = run("tanh.approx.f16x2", 0x7C003C00)
    assert contains(packed, (0x3C00 << 16) | 0x3A17) and not contains(packed, (0x3C00 << 16) | 0x3A16)
    assert not contains(packed, (0x3BFF << 16) | 0x3A17)
    assert parse("tanh.approx.bf16x2").target.sm == 90 and parse("tanh.approx.f16").target.sm == 75
