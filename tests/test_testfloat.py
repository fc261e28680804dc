"""The TestFloat layout (conformance/testfloat.py) and IEEE 754 exception flags
(:func:`ptxspec.semantics.numerics.rounding_flags`) against independent oracles.

Oracles, none of which shares code with the core:

* IEEE 754-2019 §7 written out with :class:`fractions.Fraction`: round to p bits with an unbounded
  exponent range (overflow and tininess after rounding are read off that), round again on the
  format's own grid (inexact); underflow = tiny and inexact. The format parameters come from a
  table written here from IEEE 754 §3.3 (p, emax), not from spec/types.py.
* GNU MPFR through gmpy2 with IEEE emulation (precision p, emin/emax, subnormalize) for the
  inexact, overflow, division-by-zero and invalid flags of add, sub, mul, fma, div and sqrt.
  Not its underflow flag: MPFR raises underflow for a result below its emin *before* the
  subnormalize step, exact or not (3 * 2^-149 in f32 is exact and MPFR still flags it), which is
  not IEEE's default handling (§7.5: an exact tiny result raises no flag); the Fraction oracle
  decides underflow instead.
* The example lines of TestFloat's own documentation (``doc/testfloat_gen.html``, "Output
  Format": four ``testfloat_gen f64_add`` cases computed by SoftFloat), byte for byte.
* Hand-derived IEEE 754 cases (§7.2 invalid, §7.3 division by zero, §5.8 conversions to integer).
"""

from __future__ import annotations

import random
import struct
from fractions import Fraction
from pathlib import Path

import gmpy2
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ptxspec.conformance import testfloat as tf
from ptxspec.conformance.vectors import inputs
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.semantics.numerics import Exact, Flags, Rounding, rounding_flags
from ptxspec.spec.errors import PtxSpecError

INEXACT, UNDERFLOW, OVERFLOW, DIVZERO, INVALID = 0x01, 0x02, 0x04, 0x08, 0x10

#: IEEE 754 §3.3 / §3.6: (precision p in bits, emax) of the binary interchange formats; emin = 1 - emax.
IEEE = {"f16": (11, 15), "f32": (24, 127), "f64": (53, 1023), "bf16": (8, 127)}

MODES = [Rounding.RN, Rounding.RZ, Rounding.RM, Rounding.RP]
MODE_TOKEN = {Rounding.RN: "rn", Rounding.RZ: "rz", Rounding.RM: "rm", Rounding.RP: "rp"}


# ---------------------------------------------------------------------------------------------
# The Fraction oracle (IEEE 754-2019 §4.3, §7.4-7.6)
# ---------------------------------------------------------------------------------------------


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def _round_to_multiple(x: Fraction, ulp: Fraction, mode: Rounding) -> Fraction:
    """x rounded to an integer multiple of ulp (signed x, IEEE rounding-direction attributes)."""
    q = x / ulp
    down = q.numerator // q.denominator
    up = down if down == q else down + 1
    if mode is Rounding.RM:
        n = down
    elif mode is Rounding.RP:
        n = up
    elif mode is Rounding.RZ:
        n = down if x > 0 else up
    else:
        diff = q - down
        n = down if diff < Fraction(1, 2) else up if diff > Fraction(1, 2) else (down if down % 2 == 0 else up)
    return n * ulp


def oracle_flags(x: Fraction, fmt: str, mode: Rounding) -> int:
    """IEEE 754-2019's inexact, overflow and underflow (tininess after rounding, default handling)."""
    if x == 0:
        return 0
    p, emax = IEEE[fmt]
    emin = 1 - emax
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    e = _floor_log2(abs(x))
    unbounded = _round_to_multiple(x, Fraction(2) ** (e - p + 1), mode)
    on_grid = _round_to_multiple(x, Fraction(2) ** (max(e, emin) - p + 1), mode)
    overflow = abs(unbounded) > largest
    tiny = unbounded != 0 and abs(unbounded) < Fraction(2) ** emin
    inexact = overflow or on_grid != x
    return (INEXACT if inexact else 0) | (OVERFLOW if overflow else 0) | (UNDERFLOW if tiny and inexact else 0)


def _exact(sign: int, significand: int, exponent: int) -> tuple[Exact, Fraction]:
    value = Fraction(significand) * Fraction(2) ** exponent
    return Exact(sign, significand, exponent), -value if sign else value


def _boundary_values(fmt: str) -> list[tuple[int, int, int]]:
    """Values at the underflow and overflow thresholds, as (sign, significand, exponent)."""
    p, emax = IEEE[fmt]
    emin = 1 - emax
    out = []
    for extra in (1, 2, 3, 8):
        # just below, at, and just above 2^emin, and the tie just below it, with `extra` more bits
        for k in (-2, -1, 0, 1, 2):
            out.append((0, (1 << (p + extra)) + k, emin - p - extra))
            out.append((0, (1 << (p + extra - 1)) + k, emin - p - extra))
        # the overflow threshold: the largest finite value plus/minus fractions of an ulp
        top = ((1 << p) - 1) << extra
        for k in (-1, 0, 1, (1 << (extra - 1)) - 1, 1 << (extra - 1), (1 << (extra - 1)) + 1, (1 << extra) - 1):
            out.append((0, top + k, emax - p + 1 - extra))
        # the smallest subnormal and halfway below it
        for k in (-1, 0, 1):
            out.append((0, (1 << extra) + k, emin - p + 1 - extra))
            out.append((0, (1 << (extra - 1)) + k, emin - p + 1 - extra))
    return [(s ^ sign, m, e) for s, m, e in out for sign in (0, 1) if m > 0]


@pytest.mark.parametrize("fmt", list(IEEE))
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_rounding_flags_at_the_thresholds_match_the_fraction_oracle(fmt, mode):
    for sign, significand, exponent in _boundary_values(fmt):
        value, exact = _exact(sign, significand, exponent)
        assert int(rounding_flags(value, fmt, mode)) == oracle_flags(exact, fmt, mode), (fmt, mode, sign, significand, exponent)


@given(
    fmt=st.sampled_from(list(IEEE)),
    mode=st.sampled_from(MODES),
    sign=st.integers(0, 1),
    bits=st.integers(1, 80),
    data=st.data(),
)
def test_rounding_flags_match_the_fraction_oracle(fmt, mode, sign, bits, data):
    p, emax = IEEE[fmt]
    significand = data.draw(st.integers(1 << (bits - 1), (1 << bits) - 1))
    # every binade from below the smallest subnormal to beyond the largest finite value
    msb = data.draw(st.integers(-emax - p - 3, emax + 3))
    value, exact = _exact(sign, significand, msb - bits + 1)
    assert int(rounding_flags(value, fmt, mode)) == oracle_flags(exact, fmt, mode)


def test_rounding_flags_of_sticky_quotients_are_inexact():
    """A sticky value (an inexact quotient or root) always raises inexact, and underflow when tiny."""
    from ptxspec.semantics.numerics import exact_quotient

    one, three = Exact(0, 1), Exact(0, 3)
    assert rounding_flags(exact_quotient(one, three, 24), "f32") == Flags.INEXACT
    tiny = exact_quotient(Exact(0, 1, -140), Exact(0, 3, 0), 24)
    assert rounding_flags(tiny, "f32") == Flags.INEXACT | Flags.UNDERFLOW


def test_rounding_flags_refuse_what_ieee_does_not_define():
    with pytest.raises(ValueError):
        rounding_flags(Exact(0, 1), "e4m3")
    with pytest.raises(ValueError):
        rounding_flags(Exact(0, 1), "f32", Rounding.RS)


# ---------------------------------------------------------------------------------------------
# TestFloat's own example
# ---------------------------------------------------------------------------------------------

#: doc/testfloat_gen.html, "Output Format": lines of `testfloat_gen f64_add` (SoftFloat's results).
TESTFLOAT_DOC_F64_ADD = [
    "3F90EB5825D6851E C3E0080080000000 C3E0080080000000 01",
    "41E3C00000000000 C182024F8AE474A8 41E377F6C1D46E2D 01",
    "7FD80FFFFFFFFFFF 7FEFFFFFFFFFFF80 7FF0000000000000 05",
    "3FFFED6A25C534BE 3CA1000000020000 3FFFED6A25C534BF 01",
]


def test_encode_reproduces_testfloat_documentation_example():
    a = np.array([int(line.split()[0], 16) for line in TESTFLOAT_DOC_F64_ADD], dtype=np.uint64)
    b = np.array([int(line.split()[1], 16) for line in TESTFLOAT_DOC_F64_ADD], dtype=np.uint64)
    assert tf.encode("add.rn.f64", [a, b]).decode().splitlines() == TESTFLOAT_DOC_F64_ADD


# ---------------------------------------------------------------------------------------------
# Hand-derived IEEE 754 cases
# ---------------------------------------------------------------------------------------------

F32_ONE, F32_TWO, F32_INF, F32_QNAN, F32_SNAN = 0x3F800000, 0x40000000, 0x7F800000, 0x7FC00000, 0x7F800001
NEG = 0x80000000

CASES = [
    # §7.2 (a): a signalling NaN operand is invalid, a quiet one is not
    ("add.rn.f32", (F32_SNAN, F32_ONE), INVALID),
    ("add.rn.f32", (F32_QNAN, F32_ONE), 0),
    ("mul.rz.f32", (F32_ONE, F32_SNAN), INVALID),
    ("sqrt.rn.f64", (0x7FF0000000000001,), INVALID),
    ("sqrt.rn.f64", (0x7FF8000000000000,), 0),
    ("fma.rn.f32", (F32_ONE, F32_ONE, F32_SNAN), INVALID),
    ("add.rn.f16", (0x7C01, 0x3C00), INVALID),
    ("add.rn.f16", (0x7E00, 0x3C00), 0),
    # §7.2 (b), (c), (d), (e), (f)
    ("mul.rn.f32", (0, F32_INF), INVALID),
    ("fma.rn.f32", (F32_INF, NEG, F32_ONE), INVALID),
    ("fma.rn.f32", (0, F32_INF, F32_QNAN), INVALID),  # implementation-defined: signalled, as SoftFloat
    ("fma.rn.f32", (F32_INF, F32_ONE, NEG | F32_INF), INVALID),
    ("add.rn.f32", (F32_INF, NEG | F32_INF), INVALID),
    ("sub.rn.f32", (F32_INF, F32_INF), INVALID),
    ("add.rn.f32", (F32_INF, F32_INF), 0),
    ("div.rn.f32", (0, NEG), INVALID),
    ("div.rn.f32", (F32_INF, F32_INF), INVALID),
    ("sqrt.rn.f32", (NEG | F32_ONE,), INVALID),
    ("sqrt.rn.f32", (NEG | F32_INF,), INVALID),
    ("sqrt.rn.f32", (NEG,), 0),  # sqrt(-0) = -0
    # §7.3: a finite nonzero dividend over zero; not inf / 0
    ("div.rn.f32", (F32_ONE, 0), DIVZERO),
    ("div.rz.f64", (0x8000000000000001, 0x8000000000000000), DIVZERO),
    ("div.rn.f32", (F32_INF, 0), 0),
    ("div.rn.f32", (F32_ONE, F32_INF), 0),
    # exact results raise nothing; 1/3 is inexact; the largest finite times two overflows
    ("div.rn.f32", (F32_ONE, F32_TWO), 0),
    ("div.rn.f32", (F32_ONE, 0x40400000), INEXACT),
    ("mul.rz.f32", (0x7F7FFFFF, F32_TWO), OVERFLOW | INEXACT),
    ("mul.rn.f32", (0x00800000, 0x3F000000), 0),  # 2^-127 exactly: tiny but exact, no underflow
    ("mul.rn.f32", (0x00000001, 0x3F000000), UNDERFLOW | INEXACT),  # 2^-150: a tie, to +0
    # conversions between formats (§5.4.2)
    ("cvt.f32.f16", (0x7C01,), INVALID),
    ("cvt.f32.f16", (0x7E00,), 0),
    ("cvt.f64.f32", (0x00000001,), 0),
    ("cvt.rn.f16.f32", (0x33000000,), UNDERFLOW | INEXACT),  # 2^-25: half the smallest subnormal
    ("cvt.rn.f16.f32", (0x33800000,), 0),  # 2^-24 exactly
    ("cvt.rn.f16.f32", (0x477FF000,), OVERFLOW | INEXACT),  # 65520 rounds past 65504
    ("cvt.rz.f16.f32", (0x477FF000,), INEXACT),  # toward zero: 65504, not beyond it
    ("cvt.rn.f32.f64", (0x7FF4000000000000,), INVALID),
    # float to integer (§5.8): NaN, infinity and out-of-range are invalid; inexact is not raised
    ("cvt.rni.s32.f32", (F32_QNAN,), INVALID),
    ("cvt.rzi.u64.f64", (0xFFF0000000000000,), INVALID),
    ("cvt.rni.s32.f32", (0x4F000000,), INVALID),  # 2^31
    ("cvt.rni.s32.f32", (0xCF000000,), 0),  # -2^31 fits
    ("cvt.rni.u32.f32", (NEG | F32_ONE,), INVALID),
    ("cvt.rzi.u32.f32", (0xBF000000,), 0),  # -0.5 toward zero is 0
    ("cvt.rmi.u32.f32", (0xBF000000,), INVALID),  # -0.5 down is -1
    ("cvt.rni.s32.f64", (0x41DFFFFFFFE00000,), INVALID),  # 2147483647.5 to nearest even: 2^31
    ("cvt.rzi.s32.f64", (0x41DFFFFFFFE00000,), 0),
    ("cvt.rni.s32.f32", (0x3FC00000,), 0),  # 1.5: rounded, but convertToInteger is not Exact
    # integer to float (§5.4.1 convertFromInt)
    ("cvt.rn.f32.s32", (0x01000001,), INEXACT),  # 2^24 + 1
    ("cvt.rn.f32.s32", (0x01000000,), 0),
    ("cvt.rn.f16.u32", (0x0000FFF0,), OVERFLOW | INEXACT),  # 65520
    ("cvt.rn.f16.u32", (0x0000FFEF,), INEXACT),  # 65519 rounds to 65504
    ("cvt.rz.f16.u32", (0xFFFFFFFF,), OVERFLOW | INEXACT),
    ("cvt.rn.f64.s64", (0x8000000000000000,), 0),  # -2^63
    # roundToIntegral: invalid for a signalling NaN only
    ("cvt.rni.f32.f32", (F32_SNAN,), INVALID),
    ("cvt.rni.f32.f32", (0x3FC00000,), 0),
]


@pytest.mark.parametrize("form, sources, flags", CASES, ids=[f"{c[0]}-{'-'.join(hex(s) for s in c[1])}" for c in CASES])
def test_exceptions_of_hand_derived_ieee_cases(form, sources, flags):
    assert int(tf.exceptions(form, sources)) == flags


# ---------------------------------------------------------------------------------------------
# MPFR (gmpy2) for the operations' inexact, overflow, division-by-zero and invalid flags
# ---------------------------------------------------------------------------------------------

GMPY_ROUND = {Rounding.RN: gmpy2.RoundToNearest, Rounding.RZ: gmpy2.RoundToZero, Rounding.RM: gmpy2.RoundDown, Rounding.RP: gmpy2.RoundUp}
WIDE = gmpy2.context(precision=200, emin=-100000, emax=100000)


def _to_mpfr(fmt: str, bits: int):
    """The operand as an mpfr, exactly (via the host float, which holds f32 and f64 exactly)."""
    value = struct.unpack("<f", struct.pack("<I", bits))[0] if fmt == "f32" else struct.unpack("<d", struct.pack("<Q", bits))[0]
    with WIDE:
        return gmpy2.mpfr(value)


def _mpfr_context(fmt: str, mode: Rounding):
    """IEEE emulation: a format of precision p, smallest subnormal 2^s, largest finite below 2^E
    has emin = s + 1, emax = E in MPFR's convention (significand in [0.5, 1))."""
    p, emax = IEEE[fmt]
    emin = 1 - emax
    return gmpy2.context(precision=p, emin=emin - p + 2, emax=emax + 1, subnormalize=True, round=GMPY_ROUND[mode])


def mpfr_flags(op: str, fmt: str, mode: Rounding, sources: tuple[int, ...]) -> int:
    """The inexact, overflow, divzero and invalid flags MPFR raises (not underflow: see above)."""
    args = [_to_mpfr(fmt, s) for s in sources]
    ctx = _mpfr_context(fmt, mode)
    with ctx:
        ctx.clear_flags()
        {"add": ctx.add, "sub": ctx.sub, "mul": ctx.mul, "div": ctx.div, "fma": ctx.fma, "sqrt": ctx.sqrt}[op](*args)
        return (INEXACT * ctx.inexact) | (OVERFLOW * ctx.overflow) | (DIVZERO * ctx.divzero) | (INVALID * ctx.invalid)


def _random_non_nan(rng: random.Random, fmt: str) -> int:
    """A random encoding that is not a NaN: every exponent field (zeros, subnormals, infinity)
    about equally likely, mantissas often all zeros or all ones."""
    p, emax = IEEE[fmt]
    mant_bits, exp_bits = p - 1, {"f32": 8, "f64": 11}[fmt]
    exponent = rng.randrange(1 << exp_bits)
    mantissa = rng.choice([0, (1 << mant_bits) - 1, rng.getrandbits(mant_bits), 1 << rng.randrange(mant_bits)])
    if exponent == (1 << exp_bits) - 1:
        mantissa = 0
    return (rng.getrandbits(1) << (exp_bits + mant_bits)) | (exponent << mant_bits) | mantissa


def _near_vectors(rng: random.Random, fmt: str, arity: int, op: str) -> tuple[int, ...]:
    """Operands whose result lands near the overflow or underflow threshold more often than
    independent random draws do."""
    vector = [_random_non_nan(rng, fmt) for _ in range(arity)]
    if op in ("mul", "div", "fma") and rng.random() < 0.5:
        p, emax = IEEE[fmt]
        exp_bits = {"f32": 8, "f64": 11}[fmt]
        bias = emax
        target = rng.choice([1, (1 << exp_bits) - 2])  # the smallest or the largest normal exponent
        e0 = rng.randrange(1, (1 << exp_bits) - 1)
        e1 = (target - e0 + bias) if op != "div" else (e0 - target + bias)
        if 0 < e1 < (1 << exp_bits) - 1:
            mant = p - 1
            vector[0] = (vector[0] & ~(((1 << exp_bits) - 1) << mant)) | (e0 << mant)
            vector[1] = (vector[1] & ~(((1 << exp_bits) - 1) << mant)) | (e1 << mant)
    return tuple(vector)


ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1}
NON_UNDERFLOW = INEXACT | OVERFLOW | DIVZERO | INVALID


def _compare_with_mpfr(op: str, fmt: str, mode: Rounding, n: int, seed: int) -> None:
    rng = random.Random(f"{op}.{fmt}.{mode.value}.{seed}")
    form = f"{op}.{MODE_TOKEN[mode]}.{fmt}"
    for _ in range(n):
        sources = _near_vectors(rng, fmt, ARITY[op], op)
        ours = int(tf.exceptions(form, sources))
        assert ours & NON_UNDERFLOW == mpfr_flags(op, fmt, mode, sources), (form, [hex(s) for s in sources], hex(ours))


@pytest.mark.parametrize("op", list(ARITY))
@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_operation_flags_match_mpfr(op, fmt, mode):
    _compare_with_mpfr(op, fmt, mode, 60, 0)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(8))
@pytest.mark.parametrize("op", list(ARITY))
@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_operation_flags_match_mpfr_heavy(op, fmt, chunk):
    for mode in MODES:
        _compare_with_mpfr(op, fmt, mode, 1500, 1 + chunk)


# ---------------------------------------------------------------------------------------------
# The operations' flags against the Fraction oracle (underflow included)
# ---------------------------------------------------------------------------------------------

NUMPY_FLOAT = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32), "f64": (np.float64, np.uint64)}


def _value(fmt: str, bits: int) -> Fraction | str:
    """The value of an encoding read through numpy: a Fraction, or "inf"/"-inf"/"nan"."""
    dtype, utype = NUMPY_FLOAT[fmt]
    v = np.array([bits], dtype=utype).view(dtype)[0]
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    return Fraction(float(v))


EXACT_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "fma": lambda a, b, c: a * b + c,
    "div": lambda a, b: a / b,
}


def _fraction_case(form: str, sources: tuple[int, ...]) -> int | None:
    """The flags by the Fraction oracle where every operand is finite and the operation is not a
    division by zero (None otherwise: the hand-derived cases and MPFR cover those)."""
    f = as_form(form)
    fmt = f["type"] if "type" in dict(f.choices) else None
    if f.opcode in EXACT_OPS:
        values = [_value(fmt, s) for s in sources]
        if any(isinstance(v, str) for v in values) or (f.opcode == "div" and values[1] == 0):
            return None
        return oracle_flags(EXACT_OPS[f.opcode](*values), fmt, Rounding(f["rnd"]))
    dtype, atype = f["dtype"], f["atype"]
    if atype in NUMPY_FLOAT:
        value = _value(atype, sources[0])
        if isinstance(value, str):
            return None
    else:
        bits = {"s32": 32, "u32": 32, "s64": 64, "u64": 64}[atype]
        n = sources[0]
        value = Fraction(n - (1 << bits) if atype.startswith("s") and n >> (bits - 1) else n)
    if dtype in NUMPY_FLOAT:
        return oracle_flags(value, dtype, Rounding(f["rnd"]) if f.get("rnd") else Rounding.RN)
    # float to integer: invalid when the rounded value does not fit, no inexact (§5.8)
    rounded = _round_to_multiple(value, Fraction(1), {"rni": Rounding.RN, "rzi": Rounding.RZ, "rmi": Rounding.RM, "rpi": Rounding.RP}[f["rnd"]])
    bits = {"s32": 32, "u32": 32, "s64": 64, "u64": 64}[dtype]
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dtype.startswith("s") else (0, (1 << bits) - 1)
    return 0 if low <= rounded <= high else INVALID


FRACTION_FORMS = (
    [f"{op}.{r}.{t}" for op in ("add", "sub", "mul", "fma", "div") for r in ("rn", "rz", "rm", "rp") for t in ("f32", "f64")]
    + ["add.rn.f16", "sub.rn.f16", "mul.rn.f16", "fma.rn.f16"]
    + [f"cvt.{r}.{d}.{a}" for r in ("rn", "rz", "rm", "rp") for d, a in (("f16", "f32"), ("f16", "f64"), ("f32", "f64"))]
    + ["cvt.f32.f16", "cvt.f64.f16", "cvt.f64.f32"]
    + [f"cvt.{r}.{i}.{a}" for r in ("rni", "rzi", "rmi", "rpi") for i in ("s32", "u32", "s64", "u64") for a in ("f32", "f64")]
    + [f"cvt.{r}.{d}.{i}" for r in ("rn", "rz", "rm", "rp") for i in ("s32", "u32", "s64", "u64") for d in ("f16", "f32", "f64")]
)


def _compare_with_fractions(form: str, count: int, seed: int) -> int:
    f = as_form(form)
    arrays = inputs(f, count, seed)
    compared = 0
    for i in range(count):
        sources = tuple(int(a[i]) for a in arrays)
        expected = _fraction_case(form, sources)
        if expected is None:
            continue
        compared += 1
        assert int(tf.exceptions(f, sources)) == expected, (form, [hex(s) for s in sources])
    return compared


@pytest.mark.parametrize("form", FRACTION_FORMS)
def test_operation_flags_match_the_fraction_oracle(form):
    """Edge values first, then seeded random ones (the generator of ``ptxspec vectors``)."""
    assert _compare_with_fractions(form, 150, 0) > 0


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("form", FRACTION_FORMS)
def test_operation_flags_match_the_fraction_oracle_heavy(form, chunk):
    _compare_with_fractions(form, 3000, 100 + chunk)


# ---------------------------------------------------------------------------------------------
# Properties: flags agree with PTX's result; batch and scalar paths agree
# ---------------------------------------------------------------------------------------------


def _fraction(fmt: str, bits: int) -> Fraction | None:
    """The value of a finite f32/f64/f16 encoding through numpy (None for inf and NaN)."""
    dtype, utype = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32), "f64": (np.float64, np.uint64)}[fmt]
    value = np.array([bits], dtype=utype).view(dtype)[0]
    return Fraction(float(value)) if np.isfinite(value) else None


ARITHMETIC_FORMS = [f"{op}.{r}.{t}" for op in ("add", "sub", "mul", "fma") for r in ("rn", "rz", "rm", "rp") for t in ("f32", "f64")] + [
    "add.rn.f16",
    "mul.rn.f16",
    "fma.rn.f16",
]


@given(form=st.sampled_from(ARITHMETIC_FORMS), seed=st.integers(0, 2**32 - 1))
def test_inexact_iff_the_ptx_result_differs_from_the_exact_value(form, seed):
    """For add/sub/mul/fma on finite operands with a finite result: inexact is raised exactly when
    the PTX result (the semantics) is not the exact value (Fraction arithmetic on numpy's decoding);
    overflow and underflow each imply inexact."""
    f = as_form(form)
    fmt = f["type"]
    rng = np.random.default_rng(seed)
    arrays = inputs(f, 1, int(rng.integers(1 << 31)))  # an edge vector first
    rows = [tuple(int(a[0]) for a in arrays)]
    width = {"f16": 16, "f32": 32, "f64": 64}[fmt]
    rows.append(tuple(int(x) for x in rng.integers(0, 1 << width, size=len(f.sources), dtype=np.uint64)))
    for sources in rows:
        values = [_fraction(fmt, s) for s in sources]
        flags = int(tf.exceptions(form, sources))
        if flags & OVERFLOW or flags & UNDERFLOW:
            assert flags & INEXACT
        assume(all(v is not None for v in values))
        (result,) = evaluate(form, list(sources))
        got = _fraction(fmt, result)
        if got is None:  # an overflow to infinity
            assert flags & OVERFLOW
            continue
        exact = {
            "add": lambda a, b: a + b,
            "sub": lambda a, b: a - b,
            "mul": lambda a, b: a * b,
            "fma": lambda a, b, c: a * b + c,
        }[f.opcode](*values)
        assert bool(flags & INEXACT) == (got != exact), (form, [hex(s) for s in sources], hex(result), flags)


BATCH_FORMS = ["fma.rn.f32", "cvt.rn.f16.f32", "add.rn.f16", "sub.rn.f16", "mul.rn.f16", "div.rm.f64", "cvt.rzi.s64.f32", "cvt.rn.f16.u32"]


@pytest.mark.parametrize("form", BATCH_FORMS)
@pytest.mark.parametrize("profile", ["spec", "sm_90"])
def test_encode_agrees_with_the_scalar_path(form, profile):
    """encode (batched results) equals lines built from the readable semantics one vector at a
    time, flags included."""
    f = as_form(form)
    arrays = inputs(f, 400, 3)
    assert tf.encode(f, arrays, profile).decode().splitlines() == _scalar_lines(f, arrays, profile)


def _scalar_lines(f, arrays, profile: str) -> list[str]:
    from ptxspec.conformance.vectors import representative

    out = []
    for i in range(len(arrays[0])):
        sources = [int(a[i]) for a in arrays]
        (result,) = evaluate(f, sources, profile)
        rep = representative(result)
        if rep is None:  # a set of f64 payloads: its smallest member
            rep = min(result.members)
        out.append(tf.line(f, sources, rep, tf.exceptions(f, sources)))
    return out


@given(form=st.sampled_from(BATCH_FORMS), profile=st.sampled_from(["spec", "sm_90"]), data=st.data())
def test_encode_agrees_with_the_scalar_path_on_any_bits(form, profile, data):
    f = as_form(form)
    widths = [{"f16": 16, "f32": 32, "f64": 64, "s32": 32, "u32": 32, "s64": 64, "u64": 64}[o.type] for o in f.sources]
    n = data.draw(st.integers(1, 8))
    arrays = [np.array(data.draw(st.lists(st.integers(0, (1 << w) - 1), min_size=n, max_size=n)), dtype=np.uint64) for w in widths]
    assert tf.encode(f, arrays, profile).decode().splitlines() == _scalar_lines(f, arrays, profile)


# ---------------------------------------------------------------------------------------------
# The function table, layout, round trip, errors, determinism
# ---------------------------------------------------------------------------------------------

FUNCTIONS = {
    "add.rn.f32": "f32_add",
    "sub.rz.f64": "f64_sub",
    "mul.rm.f32": "f32_mul",
    "fma.rp.f64": "f64_mulAdd",
    "mad.rn.f32": "f32_mulAdd",
    "div.rz.f32": "f32_div",
    "sqrt.rm.f64": "f64_sqrt",
    "add.rn.f16": "f16_add",
    "fma.rn.f16": "f16_mulAdd",
    "cvt.rn.f16.f32": "f32_to_f16",
    "cvt.f32.f16": "f16_to_f32",
    "cvt.f64.f16": "f16_to_f64",
    "cvt.rz.f32.f64": "f64_to_f32",
    "cvt.f64.f32": "f32_to_f64",
    "cvt.rni.s32.f32": "f32_to_i32",
    "cvt.rzi.u32.f64": "f64_to_ui32",
    "cvt.rmi.s64.f64": "f64_to_i64",
    "cvt.rpi.u64.f32": "f32_to_ui64",
    "cvt.rn.f32.s32": "i32_to_f32",
    "cvt.rz.f64.u64": "ui64_to_f64",
    "cvt.rn.f16.s64": "i64_to_f16",
    "cvt.rni.f64.f64": "f64_roundToInt",
    # not IEEE 754 operations, or types TestFloat does not have
    "add.f32": None,
    "add.rn.ftz.f32": None,
    "add.rn.sat.f32": None,
    "fma.rn.relu.f16": None,
    "add.rn.bf16": None,
    "add.rn.f16x2": None,
    "add.rn.f32x2": None,
    "sqrt.approx.f32": None,
    "div.full.f32": None,
    "cvt.rn.satfinite.f16.f32": None,
    "cvt.rn.bf16.f32": None,
    "cvt.rni.s16.f32": None,
    "cvt.rn.f32.u8": None,
    "cvt.s32.s64": None,
    "cvt.sat.f32.f32": None,
    "cvt.rn.ftz.f16.f32": None,
    "cvt.rz.sat.f32.s32": None,
}


@pytest.mark.parametrize("form, name", FUNCTIONS.items())
def test_testfloat_function(form, name):
    assert tf.testfloat_function(form) == name


def test_testfloat_options():
    assert tf.testfloat_options("add.rz.f32") == ["-rminMag", "-tininessafter"]
    assert tf.testfloat_options("cvt.rmi.s32.f64") == ["-rmin"]
    assert tf.testfloat_options("cvt.rp.f32.u32") == ["-rmax", "-tininessafter"]
    with pytest.raises(PtxSpecError):
        tf.testfloat_options("add.rn.ftz.f32")


def test_encode_refuses_a_form_without_counterpart():
    with pytest.raises(PtxSpecError, match="no TestFloat counterpart"):
        tf.encode("add.rn.ftz.f32", [np.zeros(1, np.uint32), np.zeros(1, np.uint32)])


@pytest.mark.parametrize("form", ["fma.rm.f64", "cvt.rn.f16.f64", "cvt.rni.u64.f32", "cvt.rn.f16.s32", "sqrt.rp.f32"])
def test_layout_round_trip_and_determinism(form, tmp_path):
    f = as_form(form)
    arrays = inputs(f, 500, 7)
    data = tf.encode(f, arrays, "sm_90")
    assert data == tf.encode(f, inputs(f, 500, 7), "sm_90"), "same arguments, same bytes"
    width = {"f16": 4, "f32": 8, "f64": 16, "s32": 8, "u32": 8, "s64": 16, "u64": 16}
    digits = [width[o.type] for o in f.sources] + [width[f.destinations[0].type], 2]
    for text in data.decode("ascii").splitlines():
        fields = text.split(" ")
        assert [len(x) for x in fields] == digits
        assert all(x == x.upper() for x in fields) and len(fields[-1]) == 2
    path = tmp_path / "v.tf"
    path.write_bytes(data)
    for source in (data, path, str(path)):
        sources, outputs, flags = tf.read(source, f)
        assert [list(s) for s in sources] == [list(np.asarray(a, dtype=np.uint64)) for a in arrays]
        assert len(outputs) == len(flags) == 500
        lines = [tf.line(f, [int(s[i]) for s in sources], int(outputs[i]), int(flags[i])) for i in range(500)]
        assert "".join(x + "\n" for x in lines).encode() == data


CORRUPTIONS = [
    (lambda t: " ".join([t.split(" ")[0], "3F8000G0", *t.split(" ")[2:]]), 10, "hex digits"),  # a non-hex digit in b
    (lambda t: t.replace(" ", "  ", 1), 1, "fields"),  # a doubled space
    (lambda t: t.rsplit(" ", 1)[0], 1, "fields"),  # flags missing
    (lambda t: t.rsplit(" ", 1)[0] + " 20", 28, "bits 0-4"),  # not a flag bit
    (lambda t: t.rsplit(" ", 1)[0] + " 1", 28, "hex digits"),  # one flag digit
    (lambda t: "0" + t, 1, "hex digits"),  # a 9-digit operand
]


@pytest.mark.parametrize("corrupt, column, message", CORRUPTIONS)
def test_a_corrupted_line_gives_a_located_error(corrupt, column, message, tmp_path):
    f = as_form("add.rn.f32")
    lines = tf.encode(f, inputs(f, 5, 0)).decode().splitlines()
    lines[2] = corrupt(lines[2])
    path = tmp_path / "bad.tf"
    path.write_text("".join(x + "\n" for x in lines))
    with pytest.raises(PtxSpecError, match=message) as info:
        tf.read(path, f)
    assert str(info.value.where) == f"{path}:3:{column}"
    with pytest.raises(PtxSpecError) as info:
        tf.read(path.read_bytes(), f)
    assert str(info.value.where) == f"<bytes>:3:{column}"


def test_read_of_a_missing_file_is_a_ptxspec_error(tmp_path):
    with pytest.raises(PtxSpecError, match="cannot read"):
        tf.read(tmp_path / "none.tf", "add.rn.f32")


# ---------------------------------------------------------------------------------------------
# docs/vectors.rst: the TestFloat example is real output
# ---------------------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "vectors.rst"


def test_docs_testfloat_example_is_real_output():
    text = DOC.read_text()
    section = text.split("The TestFloat layout\n", 1)[1]
    block = section.split(".. code-block:: text\n\n", 1)[1].split("\n\n", 1)[0]
    shown = [x.strip() for x in block.splitlines()]
    f = as_form("div.rn.f32")
    got = tf.encode(f, inputs(f, 2000, 0)).decode().splitlines()
    assert shown and all(x in got for x in shown), shown
