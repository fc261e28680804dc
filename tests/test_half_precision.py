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
import subprocess
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
    """ "fA[0] = a[0:15]; fA[1] = a[16:31]; ... d[i] = fA[i] op fB[i]": each half-word of d is the
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


# ---------------------------------------------------------------------------------------------
# §9.7.4.10 ex2.approx: the relative bound, plus the correctly rounded 2^a
# ---------------------------------------------------------------------------------------------

EX2_FORMS = {"f16": "ex2.approx.f16", "bf16": "ex2.approx.ftz.bf16"}
#: The maximum relative errors, as exponents of 2: "2^-9.9" (.f16), "2^-7" (.bf16).
EX2_BOUND = {"f16": Fraction(-99, 10), "bf16": Fraction(-7)}
_EX2_CTX = gmpy2.context(precision=320, emin=-(1 << 24), emax=1 << 24)
_EX2_WINDOW = 10


def ex2_oracle(fmt, a: int, ftz: bool):
    """The allowed encodings of ex2 on the encoding ``a`` as a predicate, from MPFR at 320 bits:
    v is allowed iff it is the rounding, down or up, of some real y' in [lo, hi] = [2^a (1 - eps),
    2^a (1 + eps)] -- that is, iff the open interval between v's neighbours meets [lo, hi]
    (``prev(v) < hi`` and ``next(v) > lo``, with +Inf above the largest finite value). Under
    .ftz a subnormal input reads as 0 and each subnormal member is replaced by +0.0. Also returns
    2^a rounded to nearest even (flushed under .ftz), which must be allowed."""
    x = fmt.to_mpfr(fmt.flush(a) if ftz else a)
    e = EX2_BOUND[fmt.name]
    with _EX2_CTX:
        y = gmpy2.exp2(x)
        eps = gmpy2.exp2(gmpy2.mpfr(e.numerator) / e.denominator)
        lo, hi = y * (1 - eps), y * (1 + eps)
    if gmpy2.is_infinite(y):  # 2^a beyond MPFR's exponent range of 2^24: far past +Inf
        return (lambda v: v in (fmt.max_finite(), fmt.inf())), fmt.inf()
    if gmpy2.is_zero(y):  # far below the smallest subnormal
        only = (fmt.zero(),) if ftz else (fmt.zero(), fmt.min_subnormal())
        return (lambda v: v in only), fmt.zero()
    with fmt.context("rn"):
        nearest = fmt.from_mpfr(+y)
    inf = gmpy2.mpfr("inf")

    def raw(v: int) -> bool:
        if fmt.is_nan(v) or v & fmt.sign_bit:  # 2^a > 0: no negative result, nor -0.0
            return False
        if fmt.is_inf(v):
            return hi > fmt.to_mpfr(fmt.max_finite())
        below = fmt.to_mpfr(fmt.next_down(v)) if not fmt.is_zero(v) else -fmt.to_mpfr(fmt.min_subnormal())
        above = fmt.to_mpfr(fmt.next_up(v)) if v != fmt.max_finite() else inf
        return below < hi and above > lo

    if not ftz:
        return raw, nearest

    def flushed(v: int) -> bool:
        if fmt.is_subnormal(v):
            return False
        if v == fmt.zero(0):
            return raw(v) or any(raw(u) for u in range(fmt.min_subnormal(), fmt.max_subnormal() + 1))
        return raw(v)

    return flushed, fmt.flush(nearest)


def check_ex2(type_name: str, a: int, *, window: int = 10) -> None:
    """ptxspec's set against the oracle's. The table's inputs have the table's results: zeros
    (and, under .ftz, subnormals) give exactly +1.0; the infinities are checked in
    test_ex2_approx_tables_and_lanes. Elsewhere every encoding within ``window`` steps of the
    rounded 2^a is compared, and the window's ends must be outside (so the set is inside it)."""
    fmt = HALF[type_name]
    ftz = type_name == "bf16"
    if fmt.is_inf(a):
        return
    if fmt.is_zero(fmt.flush(a) if ftz else a):
        assert run(EX2_FORMS[type_name], a) == fmt.one()  # the table: "-0.0 +1.0", "+subnormal +1.0"
        return
    result = run(EX2_FORMS[type_name], a)
    allowed, nearest = ex2_oracle(fmt, a, ftz)
    assert contains(result, nearest), (hex(a), result, hex(nearest))  # never empty: rn(2^a) is in
    assert not contains(result, fmt.zero(1))
    around = [nearest]
    for _ in range(window):
        if not fmt.is_inf(around[-1]):
            around.append(fmt.next_up(around[-1]))
        if not fmt.is_zero(around[0]):
            around.insert(0, fmt.next_down(around[0]))
    for v in around:
        assert contains(result, v) == allowed(v), (hex(a), hex(v), result)
    # The window is wide enough: its ends are outside (unless it reached 0 or +Inf).
    for end in (around[0], around[-1]):
        if not (fmt.is_zero(end) or fmt.is_inf(end)):
            assert not allowed(end), (hex(a), hex(end))


def ex2_inputs(fmt, rng: random.Random, n: int) -> list[int]:
    """Specials, the inputs around the overflow and underflow thresholds, and random encodings."""
    out = [b for b in specials(fmt) if not fmt.is_nan(b)]
    for edge in (16, 17, 15, -14, -24, -25, -26, 127, 128, 129, -126, -127, -133, -134, -135):
        try:
            center = fmt.encode_exact(Fraction(edge), 0)
        except AssertionError:
            continue
        out += [center + k for k in range(-6, 7) if not fmt.is_nan(center + k)]
    out += [b for b in (rng.getrandbits(16) for _ in range(n)) if not fmt.is_nan(b)]
    return out


@pytest.mark.parametrize("type_name", ["f16", "bf16"])
def test_ex2_approx_bound(type_name):
    fmt = HALF[type_name]
    for a in ex2_inputs(fmt, random.Random(f"ex2-{type_name}"), 400):
        check_ex2(type_name, a)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(32))
@pytest.mark.parametrize("type_name", ["f16", "bf16"])
def test_ex2_approx_exhaustive(type_name, chunk):
    """Every one of the 2^16 encodings, in 32 chunks, with a window of 4 steps (the sets span at
    most 3 steps on either side of the rounded value; the window's ends are checked outside)."""
    fmt = HALF[type_name]
    for a in range(chunk * 2048, (chunk + 1) * 2048):
        if fmt.is_nan(a):
            assert isinstance(run(EX2_FORMS[type_name], a), AnyNaN)
        else:
            check_ex2(type_name, a, window=4)


def test_ex2_approx_tables_and_lanes():
    """ "-Inf +0.0, -0.0 +1.0, +0.0 +1.0, +Inf +Inf, NaN NaN"; for ex2.approx.ftz.bf16 also
    "-subnormal +1.0", "+subnormal +1.0"."""
    for text, fmt in (("ex2.approx.f16", F16), ("ex2.approx.ftz.bf16", BF16)):
        assert run(text, fmt.inf(1)) == fmt.zero(0)
        assert run(text, fmt.zero(1)) == run(text, fmt.zero(0)) == fmt.one()
        assert run(text, fmt.inf(0)) == fmt.inf(0)
        assert isinstance(run(text, fmt.quiet_nan()), AnyNaN)
        assert run(text, fmt.quiet_nan(), profile=SM_90) == 0x7FFF
    assert run("ex2.approx.ftz.bf16", BF16.min_subnormal(1)) == run("ex2.approx.ftz.bf16", BF16.max_subnormal(0)) == BF16.one()
    # .f16 keeps subnormal inputs: 2^(2^-24) is just above 1, and the set is the bound's.
    assert contains(run("ex2.approx.f16", F16.min_subnormal()), F16.one())
    # .f16 results may be subnormal: 2^-20 is 16 * 2^-24, and 2^-20 (1 -+ 2^-9.9) lies strictly
    # between 15 and 17 of those steps.
    result = run("ex2.approx.f16", F16.encode_exact(Fraction(-20), 0))
    assert [v for v in range(0, 40) if contains(result, v)] == [15, 16, 17]
    # bf16 .ftz: 2^-128 (1 + 2^-7) is below the smallest normal: every member flushes to +0.0.
    assert run("ex2.approx.ftz.bf16", BF16.encode_exact(Fraction(-128), 0)) == 0
    # Far beyond the range: the largest finite value or +Inf; far below: +0.0 or the smallest
    # subnormal (flushed under .ftz).
    assert [contains(run("ex2.approx.f16", F16.max_finite()), v) for v in (0x7BFE, 0x7BFF, 0x7C00)] == [False, True, True]
    assert [contains(run("ex2.approx.f16", F16.max_finite(1)), v) for v in (0x0000, 0x0001, 0x0002, 0x8000)] == [True, True, False, False]
    assert run("ex2.approx.ftz.bf16", BF16.max_finite(1)) == 0
    # Lanes apart: the lower half-word from the lower half-word.
    packed = run("ex2.approx.f16x2", (F16.inf(1) << 16) | F16.zero(0))
    assert contains(packed, F16.one()) and not contains(packed, F16.one() << 16)
    assert run("ex2.approx.ftz.bf16x2", (BF16.inf(0) << 16) | BF16.inf(1)) == BF16.inf(0) << 16


@functools.cache
def _recording():
    """The sm_90 recordings (conformance/data/sm_90/, written by the silicon harness)."""
    from ptxspec.conformance.silicon import replay

    return replay.load()


def _recorded(text: str):
    return _recording().forms[text]


#: Inputs whose .f16 subnormal results sm_90 rounds one step below the correctly rounded value
#: (seen while this rule was chosen); the results are looked up in the recorded exhaustive table.
EX2_SUBNORMAL_INPUTS = [0xCB16, 0xCB1C, 0xCB2C, 0xCB2F]


@pytest.mark.parametrize("a", EX2_SUBNORMAL_INPUTS, ids=hex)
def test_ex2_recorded_on_sm90_is_allowed(a):
    """The recorded result (``ex2.approx.f16#all-inputs``: row a is input a) lies in the spec's
    allowed set and the manual's bound, and is not the correctly rounded value: the bound, not
    rounding to nearest, is what allows it."""
    recorded = _recorded("ex2.approx.f16#all-inputs")
    assert int(recorded.inputs[0][a]) == a
    observed = int(recorded.outputs[0][a])
    assert contains(run("ex2.approx.f16", a), observed)
    assert contains(run("ex2.approx.f16", a, profile=SM_90), observed)
    allowed, nearest = ex2_oracle(F16, a, False)
    assert allowed(observed) and observed != nearest


@pytest.mark.parametrize(
    "text,ptx,sm",
    [("ex2.approx.f16", (7, 0), 75), ("ex2.approx.f16x2", (7, 0), 75), ("ex2.approx.ftz.bf16", (7, 8), 90), ("ex2.approx.ftz.bf16x2", (7, 8), 90)],
)
def test_ex2_targets(text, ptx, sm):
    form = parse(text)
    assert (form.target.ptx, form.target.sm, form.family.key) == (ptx, sm, "ex2.approx.half")


@pytest.mark.parametrize(
    "text,reason",
    [
        ("ex2.approx.bf16", "`.ftz` is required with `.bf16`"),
        ("ex2.approx.bf16x2", "`.ftz` is required with `.bf16x2`"),
        ("ex2.approx.ftz.f16", "`.ftz` is not allowed with `.f16`"),
        ("ex2.approx.ftz.f16x2", "`.ftz` is not allowed with `.f16x2`"),
    ],
)
def test_ex2_illegal(text, reason):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert reason in str(info.value)


# ---------------------------------------------------------------------------------------------
# §9.7.4.4 fma.oob
# ---------------------------------------------------------------------------------------------

OOB_CASES = [("f16", ""), ("f16", ".relu"), ("bf16", ""), ("bf16", ".relu")]


@pytest.mark.parametrize("type_name,variant", OOB_CASES)
def test_fma_oob(type_name, variant):
    """No NaN operand: exactly fma.rn{.relu} (MPFR). A NaN operand (which may be the OOB-NaN):
    +0.0 or the NaN result of fma.rn{.relu} -- never -0.0, never a number."""
    fmt = HALF[type_name]
    text = f"fma.rn.oob{variant}.{type_name}"
    relu_ = variant == ".relu"
    for operands in sample_operands("fma", fmt, 11, 400):
        out = reference("fma", fmt, "rn", operands)
        if any(fmt.is_nan(x) for x in operands):
            result = run(text, *operands)
            assert contains(result, fmt.zero(0)) and not contains(result, fmt.zero(1))
            assert not contains(result, fmt.one()) and not contains(result, fmt.min_subnormal())
            assert contains(result, 0x7FFF)
            if relu_:
                assert not contains(result, fmt.quiet_nan(1)), result  # only the canonical NaN
            else:
                assert contains(result, fmt.quiet_nan(1)) and contains(result, fmt.signalling_nan())
            # sm_90 pins one member: +0.0 for its OOB-NaN in a or b, else the canonical NaN.
            pinned = run(text, *operands, profile=SM_90)
            assert pinned in (fmt.zero(0), 0x7FFF) and contains(result, pinned)
            assert (pinned == 0) == (operands[0] & 0x7FFF == 0x7FF7 or operands[1] & 0x7FFF == 0x7FF7)
        else:
            expect(run(text, *operands), relu(fmt, out) if relu_ else out, fmt, canonical=relu_)
            assert run(text, *operands, profile=SM_90) == run(text.replace(".oob", ""), *operands, profile=SM_90)


#: fma.oob inputs probed while sm_90's OOB-NaN rule was chosen, as (form, one SIMD lane's a, b,
#: c): 0x7ff7 of either sign in a and b, in c, a neighbouring NaN, a canonical NaN. Their results
#: are looked up in the recorded ``#oob-probes`` entries (every row, and every half-word of the
#: x2 forms, whose lane holds these operands).
OOB_PROBED = [
    ("fma.rn.oob.f16", (0x7FF7, 0x3C00, 0x3C00)),
    ("fma.rn.oob.f16", (0x3C00, 0xFFF7, 0x3C00)),
    ("fma.rn.oob.f16", (0x3C00, 0x3C00, 0x7FF7)),
    ("fma.rn.oob.f16", (0x7FF6, 0x3C00, 0x3C00)),
    ("fma.rn.relu.oob.f16", (0x7FF7, 0x7E00, 0xFC00)),
    ("fma.rn.oob.bf16", (0x3F80, 0x7FF7, 0x3F80)),
    ("fma.rn.oob.bf16", (0x7FC0, 0x3F80, 0x3F80)),
    ("fma.rn.relu.oob.bf16x2", (0xFFF7, 0x3F80, 0x3F80)),
    ("fma.rn.oob.f16x2", (0x7FF7, 0x3C00, 0x3C00)),
    ("fma.rn.oob.f16x2", (0x3C00, 0x3C00, 0x7FF7)),
]


def _recorded_lanes(text: str, lane: tuple[int, int, int]) -> list[tuple[tuple[int, ...], int]]:
    """The recorded rows of ``text#oob-probes`` in which some 16-bit lane holds ``lane``: the
    row's sources and its recorded result."""
    recorded = _recorded(text + "#oob-probes")
    cols = [col.astype(np.uint64) for col in recorded.inputs]
    hit = np.zeros(len(cols[0]), dtype=bool)
    for h in range(2 if text.endswith("x2") else 1):
        shift = np.uint64(16 * h)
        hit |= np.logical_and.reduce([(col >> shift) & np.uint64(0xFFFF) == v for col, v in zip(cols, lane)])
    return [(tuple(int(col[i]) for col in cols), int(recorded.outputs[0][i])) for i in np.flatnonzero(hit)]


@pytest.mark.parametrize("text,lane", OOB_PROBED)
def test_fma_oob_recorded_on_sm90(text, lane):
    """sm_90's recorded results for these operands: the sm_90 profile gives exactly them, and the
    spec's verdict (+0.0 or the NaN result, a NaN operand possibly being the OOB-NaN) allows them."""
    rows = _recorded_lanes(text, lane)
    assert rows, "the recording holds these operands"
    for sources, observed in rows:
        assert run(text, *sources, profile=SM_90) == observed, ([hex(x) for x in sources], hex(observed))
        assert contains(run(text, *sources), observed), ([hex(x) for x in sources], hex(observed))


@pytest.mark.parametrize("text", [f"fma.rn{r}.oob.{t}" for r in ("", ".relu") for t in ("f16", "f16x2", "bf16", "bf16x2")])
def test_fma_oob_recording_shows_the_measured_oob_nan(text):
    """SM_90.fma_oob_nan from the recording alone (no semantics): in every recorded lane with a NaN
    operand, sm_90 wrote +0.0 exactly when a or b is 0x7ff7 or 0xfff7, else the canonical NaN; and
    the recording holds +0.0 from a candidate in a and in b, and a NaN from one in c."""
    encodings, positions = SM_90.fma_oob_nan
    fmt = HALF[text.split(".")[-1].removesuffix("x2")]
    recorded = _recorded(text + "#oob-probes")
    seen = set()
    for h in range(2 if text.endswith("x2") else 1):
        for i in range(len(recorded.outputs[0])):
            lane = [int(col[i]) >> 16 * h & 0xFFFF for col in recorded.inputs]
            if not any(fmt.is_nan(x) for x in lane):
                continue
            out = int(recorded.outputs[0][i]) >> 16 * h & 0xFFFF
            oob = any(lane[k] in encodings for k in positions)
            assert out == (0 if oob else 0x7FFF), (i, h, [hex(x) for x in lane], hex(out))
            seen.update((k, out) for k in range(3) if lane[k] in encodings)
    assert {(0, 0), (1, 0), (2, 0x7FFF)} <= seen, seen


def test_tanh_bf16_measured_beyond_the_bound():
    """The silicon campaign's one departure: tanh.approx.bf16 of 0.74609375 (0x3f3f) gave
    0.62890625 (0x3f21) on sm_90, 2^-7.99991 from tanh -- the sm_90 profile allows it, the spec
    (2^-8) does not."""
    assert contains(run("tanh.approx.bf16", 0x3F3F, profile=SM_90), 0x3F21)
    assert not contains(run("tanh.approx.bf16", 0x3F3F), 0x3F21)
    assert contains(run("tanh.approx.bf16", 0xBF3F, profile=SM_90), 0xBF21)


def test_fma_oob_lanes_and_catalogue():
    """ "The test for the special NaN value and forcing the result to +0.0 are performed
    independently for each SIMD operation"."""
    one, nan = 0x3C00, 0x7E00
    result = run("fma.rn.oob.f16x2", (nan << 16) | one, (one << 16) | one, 0)
    assert contains(result, one) and contains(result, (nan << 16) | one) and not contains(result, one | (one << 16))
    assert not contains(result, 0x8000 << 16 | one)
    result = run("fma.rn.oob.relu.bf16x2", 0x3F80_7FC0, 0x3F80_3F80, 0xC000_0000)
    assert contains(result, 0x0000_0000) and contains(result, 0x0000_7FFF) and not contains(result, 0xBF80_0000)
    assert not contains(result, 0x0000_7FC0)  # .relu: the canonical NaN only
    for text in ("fma.rn.oob.f16", "fma.rn.oob.relu.bf16x2"):
        assert (parse(text).target.ptx, parse(text).target.sm) == ((8, 1), 90)
    for text, reason in (
        ("fma.rn.oob.ftz.f16", "`.ftz` is not allowed with `.oob`"),
        ("fma.rn.oob.sat.f16", "`.sat` is not allowed with `.oob`"),
        ("fma.oob.f16", "missing rnd"),
    ):
        with pytest.raises(IllegalForm) as info:
            parse(text)
        assert reason in str(info.value)


def test_new_half_forms_agree_with_ptxas(ptxas, tmp_path):
    """Every ex2.approx and fma.oob form registered here assembles with ptxas at its own target,
    is refused one PTX version or one architecture below it, and the illegal variants are refused."""

    def assemble(version: str, arch: str, line: str) -> bool:
        src = f".version {version}\n.target {arch}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b16 %h<4>; .reg .b32 %r<4>;\n{line}\nret;\n}}\n"
        (tmp_path / "k.ptx").write_text(src)
        return subprocess.run([ptxas, f"-arch={arch}", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")], capture_output=True).returncode == 0

    def line(text: str) -> str:
        packed = text.endswith("x2")
        reg = "%r" if packed else "%h"
        n = 3 if text.startswith("fma") else 1
        return f"{text} {reg}0, " + ", ".join(f"{reg}{i + 1}" for i in range(n)) + ";"

    legal = ["ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2"]
    legal += [f"fma.rn.oob{v}.{t}" for v in ("", ".relu") for t in ("f16", "f16x2", "bf16", "bf16x2")]
    below = {75: "sm_70", 90: "sm_89"}
    for text in legal:
        target = parse(text).target
        version = f"{target.ptx[0]}.{target.ptx[1]}"
        older = f"{target.ptx[0]}.{target.ptx[1] - 1}"
        assert assemble(version, f"sm_{target.sm}", line(text)), text
        assert not assemble(older, f"sm_{target.sm}", line(text)), text
        assert not assemble("8.7", below[target.sm], line(text)), text
    for text in ("ex2.approx.bf16", "ex2.approx.ftz.f16", "fma.rn.oob.ftz.f16"):
        with pytest.raises(IllegalForm):
            parse(text)
        assert not assemble("8.7", "sm_90", line(text)), text
