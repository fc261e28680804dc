"""The batched paths of §9.7.9.21 cvt and §9.7.9.22 cvt.pack (semantics/batch_cvt.py, with the
.f32 forms of semantics/batch.py): every legal form of the cvt families has a fast path; it agrees
with the readable semantics on the vectors generator's inputs under both batched profiles (one
form of every source/destination type pair by default, every form under ``heavy``); and it agrees
with oracles that do not use ptxspec's numerics: Python integers (integer conversions, cvt.pack,
float to integer through exact fractions), MPFR (integer to float, narrowing float to float,
stochastic rounding), numpy and ml_dtypes (widenings, the narrow formats to .f16, roundToIntegral,
.ue8m0 to .bf16)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import gmpy2
import ml_dtypes
import numpy as np
import pytest

import batch_agreement
import oracle_mpfr
from ptxspec.conformance import vectors
from ptxspec.semantics import batch
from ptxspec.profiles import profile_named
from ptxspec.semantics.instructions import as_form

FAMILIES = (
    "cvt",
    "cvt.x2.f32",
    "cvt.f8x2.f32",
    "cvt.f16x2.f8x2",
    "cvt.f8x2.f16x2",
    "cvt.rs.x2.f32",
    "cvt.rs.x4",
    "cvt.ue8m0x2",
    "cvt.bf16x2.ue8m0x2",
    "cvt.pack",
    "cvt.pack.c",
)
FORMS = [text for family in FAMILIES for text in batch_agreement.legal_forms(family)]
PROFILES = ("spec", "sm_90")


def _type_pair(text: str) -> tuple[str, str, str]:
    form = as_form(text)
    return form.family.key, form.get("atype", ""), form.get("dtype", "")


def _one_per_type_pair() -> list[str]:
    """A seeded choice of one form per (family, source type, destination type): every branch of
    every builder, every register width and format."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for text in FORMS:
        groups.setdefault(_type_pair(text), []).append(text)
    rng = random.Random("batch_cvt")
    return [rng.choice(texts) for _, texts in sorted(groups.items())]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_form_has_a_fast_path(profile: str) -> None:
    missing = [text for text in FORMS if not batch.has_fast_path(text, profile)]
    assert not missing
    assert len(FORMS) == 905


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", _one_per_type_pair())
def test_agrees_with_the_readable_semantics(form_text: str, profile: str) -> None:
    batch_agreement.assert_agrees(form_text, profile, count=600, seed=0)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", FORMS)
def test_every_form_agrees(form_text: str, profile: str) -> None:
    batch_agreement.assert_agrees(form_text, profile, count=3000, seed=1)


def test_undecided_only_for_wide_nans_under_a_chip_profile() -> None:
    """The one undecided class: an .f32/.f64 NaN into .f32/.f64, or an .f64 NaN into a narrower
    format, where the profile pins the NaN (sm_90: payloads kept) -- rare in random bits. Under
    the manual nothing is undecided; under sm_90 exactly the NaN inputs are."""
    rng = np.random.default_rng(5)
    for text, width in (("cvt.f64.f32", 32), ("cvt.rni.f32.f32", 32), ("cvt.rn.f32.f64", 64), ("cvt.rni.f64.f64", 64), ("cvt.rn.f16.f64", 64)):
        form = as_form(text)
        udtype, fdtype = (np.uint32, np.float32) if width == 32 else (np.uint64, np.float64)
        a = rng.integers(0, 1 << 62, 4000, dtype=np.uint64).astype(udtype)
        a[:8] = 0x7FC0_0001 if width == 32 else 0x7FF8_0000_0000_0001
        nan = np.isnan(a.view(fdtype))
        assert batch.fast_path(form, "spec")(a, profile=profile_named("spec")).undecided is None
        undecided = batch.fast_path(form, "sm_90")(a, profile=profile_named("sm_90")).undecided
        assert undecided is not None and (undecided == nan).all(), text


# ---------------------------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------------------------


def _bits(form_text: str, *sources, profile: str = "spec") -> list[int]:
    form = as_form(form_text)
    (result,) = batch.evaluate_batch_all(form, [np.asarray(s, dtype=np.uint64) for s in sources], profile)
    return [int(x) for x in result.bits]


def _signed(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) else value


def _words(width: int, count: int, seed: int) -> list[int]:
    """Integer edge patterns of ``width`` bits, then seeded random ones (of random bit lengths)."""
    rng = random.Random(seed)
    top = (1 << width) - 1
    edges = [0, 1, 2, top, top - 1, 1 << (width - 1), (1 << (width - 1)) - 1, (1 << (width - 1)) + 1]
    edges += [((1 << k) + d) & top for k in range(width) for d in (-1, 0, 1)]
    edges += [(-(1 << k) + d) & top for k in range(width) for d in (-1, 0, 1)]
    return edges + [rng.getrandbits(rng.randint(1, width)) for _ in range(count)]


INTEGERS = {f"{k}{w}": (w, k == "s") for k in "su" for w in (8, 16, 32, 64)}
#: How many legal forms each oracle below meets (so that none passes by skipping them all):
#: cvt.sat between integers where the destination cannot hold every source value; integer to
#: float per rounding mode (.sat on .f16/.f32/.f64 only); narrowings per rounding mode.
INT_INT_SAT, INT_FLOAT, NARROWINGS = 38, 56, 7


@pytest.mark.parametrize("sat", [False, True])
def test_integer_to_integer_against_python_integers(sat: bool) -> None:
    """Table 15: the source value (two's complement for .sN), .sat clamps it to the destination's
    range, then its low bits."""
    checked = []
    for atype, (aw, asigned) in INTEGERS.items():
        a = _words(aw, 300, aw)
        values = [_signed(x, aw) if asigned else x for x in a]
        for dtype, (dw, dsigned) in INTEGERS.items():
            text = f"cvt{'.sat' if sat else ''}.{dtype}.{atype}"
            if text not in FORMS:
                continue
            low, high = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsigned else (0, (1 << dw) - 1)
            want = [(max(low, min(high, v)) if sat else v) & ((1 << dw) - 1) for v in values]
            assert _bits(text, a) == want, text
            checked.append(text)
    assert len(checked) == (INT_INT_SAT if sat else 64)


def _clamp_field(x: int, size: int, signed: bool) -> int:
    """The .s32 ``x`` clamped to a ``size``-bit integer of that signedness, as its bits."""
    low, high = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if signed else (0, (1 << size) - 1)
    return max(low, min(high, _signed(x, 32))) & ((1 << size) - 1)


@pytest.mark.parametrize("kind", ["u", "s"])
@pytest.mark.parametrize("size", [2, 4, 8, 16])
def test_cvt_pack_against_python_integers(size: int, kind: str) -> None:
    """§9.7.9.22: a, b as .s32 clamped to the convert type, a above b, the rest from c's low bits."""
    a, b, c = _words(32, 400, 1), _words(32, 400, 2), _words(32, 400, 3)
    random.Random(4).shuffle(b)
    signed = kind == "s"
    fields = [(_clamp_field(x, size, signed) << size) | _clamp_field(y, size, signed) for x, y in zip(a, b)]
    if size == 16:
        assert _bits(f"cvt.pack.sat.{kind}16.s32", a, b) == fields
    else:
        want = [((z << (2 * size)) | f) & 0xFFFF_FFFF for f, z in zip(fields, c)]
        assert _bits(f"cvt.pack.sat.{kind}{size}.s32.b32", a, b, c) == want


MPFR_FORMATS = oracle_mpfr.FORMATS


def _mpfr_round(value, fmt: oracle_mpfr.IeeeFormat, mode: str, *, sat: bool) -> int:
    """``value`` (an exact mpfr) correctly rounded into ``fmt`` by MPFR (x * 1 keeps the sign of a
    zero), with .sat."""
    with fmt.context(mode):
        out = fmt.from_mpfr(value * 1)
    return oracle_mpfr.saturate(fmt, out) if sat else out


@pytest.mark.parametrize("mode", oracle_mpfr.MODES)
def test_integer_to_float_against_mpfr(mode: str) -> None:
    """Every integer source into .f16/.bf16/.f32/.f64: the integer rounded once (64-bit sources
    need all 64 bits: the sticky significand)."""
    checked = []
    for atype, (aw, signed) in INTEGERS.items():
        a = _words(aw, 200, aw + 1)
        for dtype in ("f16", "bf16", "f32", "f64"):
            for sat in ("", ".sat"):
                text = f"cvt.{mode}{sat}.{dtype}.{atype}"
                if text not in FORMS:
                    continue
                with oracle_mpfr._EXACT:
                    exact = [gmpy2.mpfr(_signed(x, aw) if signed else x) for x in a]
                want = [_mpfr_round(x, MPFR_FORMATS[dtype], mode, sat=bool(sat)) for x in exact]
                assert _bits(text, a) == want, text
                checked.append(text)
    assert len(checked) == INT_FLOAT


def _float_words(fmt: oracle_mpfr.IeeeFormat, count: int, seed: int) -> list[int]:
    """The special values of ``fmt``, and random encodings of every exponent field."""
    rng = random.Random(seed)
    return oracle_mpfr.specials(fmt) + [rng.getrandbits(fmt.width) for _ in range(count)]


def _midpoints(dst: oracle_mpfr.IeeeFormat, count: int, seed: int) -> list[int]:
    """.f64 encodings of the midpoints between ``count`` random finite ``dst`` values and their
    upper neighbours (exact in .f64: at most 25 significant bits, far from .f64's subnormals),
    with the .f64 values one ulp below and above each."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        x = rng.getrandbits(dst.width - 1) | (rng.getrandbits(1) << (dst.width - 1))
        if dst.is_nan(x) or dst.is_inf(x) or dst.is_inf(dst.next_up(x)):
            continue
        mid = (dst.fraction(x) + dst.fraction(dst.next_up(x))) / 2
        bits = int(np.float64(mid.numerator / mid.denominator).view(np.uint64))
        assert oracle_mpfr.F64.fraction(bits) == mid
        out += [bits - 1, bits, bits + 1] if mid else []
    return out


@pytest.mark.parametrize("mode", oracle_mpfr.MODES)
def test_narrowing_against_mpfr(mode: str) -> None:
    """.f64 into .f32/.f16/.bf16 and .f16 <-> .bf16: one correct rounding (NaN results only
    checked to be NaN: their bits are the profile's), on random encodings and, from .f64, on the
    destination's midpoints and their neighbours (ties, and one .f64 ulp either side)."""
    checked = []
    for atype, dtype in (("f64", "f32"), ("f64", "f16"), ("f64", "bf16"), ("f16", "bf16"), ("bf16", "f16")):
        src, dst = MPFR_FORMATS[atype], MPFR_FORMATS[dtype]
        a = _float_words(src, 1500, src.width) + (_midpoints(dst, 500, 17) if atype == "f64" else [])
        for sat in ("", ".sat"):
            text = f"cvt.{mode}{sat}.{dtype}.{atype}"
            if text not in FORMS:
                continue
            checked.append(text)
            got = _bits(text, a)
            for x, g in zip(a, got):
                if src.is_nan(x):
                    assert g == 0 if sat else dst.is_nan(g), (text, hex(x))
                    continue
                assert g == _mpfr_round(src.to_mpfr(x), dst, mode, sat=bool(sat)), (text, hex(x))
    assert len(checked) == NARROWINGS


@np.errstate(invalid="ignore", over="ignore")  # NaN and overflowing casts in the oracles
def test_widening_against_numpy() -> None:
    """.f16/.bf16/.f32 into .f32/.f64 is exact: numpy's and ml_dtypes' conversions."""
    rng = np.random.default_rng(7)
    h = np.concatenate([np.arange(1 << 16), rng.integers(0, 1 << 16, 100)]).astype(np.uint16)
    f = rng.integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32)
    cases = [
        ("cvt.f32.f16", h, h.view(np.float16).astype(np.float32)),
        ("cvt.f64.f16", h, h.view(np.float16).astype(np.float64)),
        ("cvt.f32.bf16", h, h.view(ml_dtypes.bfloat16).astype(np.float32)),
        ("cvt.f64.bf16", h, h.view(ml_dtypes.bfloat16).astype(np.float64)),
        ("cvt.f64.f32", f, f.view(np.float32).astype(np.float64)),
    ]
    for text, a, want in cases:
        form = as_form(text)
        (result,) = batch.evaluate_batch_all(form, [a], "spec")
        nan = np.isnan(want)
        got = result.bits.view(want.dtype)
        assert (result.bits[~nan] == want.view(result.bits.dtype)[~nan]).all(), text
        assert np.isnan(got[nan]).all() and result.any_nan[nan].all(), text


INTEGER_MODES = {"rni": lambda q: round(q), "rzi": lambda q: math.trunc(q), "rmi": math.floor, "rpi": math.ceil}


@pytest.mark.parametrize("rnd", sorted(INTEGER_MODES))
def test_float_to_integer_against_fractions(rnd: str) -> None:
    """.f64/.f16/.bf16 into every integer type: the exact value (a Fraction) rounded by .irnd
    (Python's round is ties-to-even), clamped; infinities clamp; NaN gives 0 (the manual)."""
    for atype in ("f64", "f16", "bf16"):
        src = MPFR_FORMATS[atype]
        a = _float_words(src, 400, src.width + 3)
        for dtype, (dw, signed) in INTEGERS.items():
            low, high = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if signed else (0, (1 << dw) - 1)
            want = []
            for x in a:
                if src.is_nan(x):
                    want.append(0)
                elif src.is_inf(x):
                    want.append((low if x >> (src.width - 1) else high) & ((1 << dw) - 1))
                else:
                    want.append(max(low, min(high, INTEGER_MODES[rnd](src.fraction(x)))) & ((1 << dw) - 1))
            assert _bits(f"cvt.{rnd}.{dtype}.{atype}", a) == want, (rnd, dtype, atype)


NUMPY_INTEGRAL = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


@pytest.mark.parametrize("rnd", sorted(NUMPY_INTEGRAL))
@np.errstate(invalid="ignore", over="ignore")  # NaN and overflowing casts in the oracles
def test_round_to_integral_against_numpy(rnd: str) -> None:
    """``cvt.rni.f32.f32`` and its relatives: IEEE 754 roundToIntegral (numpy's rint, trunc,
    floor, ceil keep the sign of a zero result); .bf16 through float32, where it is exact."""
    rng = np.random.default_rng(11)
    for ftype, dtype in (("f16", np.float16), ("bf16", ml_dtypes.bfloat16), ("f32", np.float32), ("f64", np.float64)):
        width = np.dtype(dtype).itemsize * 8
        udtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
        a = rng.integers(0, 1 << width, 40_000, dtype=np.uint64).astype(udtype) if width < 64 else rng.integers(0, 1 << 63, 40_000, dtype=np.uint64) * 2 + 1
        # Many values near the integers: small exponents.
        small = np.asarray(rng.uniform(-40, 40, 20_000), dtype=dtype).view(udtype)
        a = np.concatenate([a.astype(udtype), small])
        with np.errstate(all="ignore"):
            want = NUMPY_INTEGRAL[rnd](a.view(dtype).astype(np.float64)).astype(dtype).view(udtype)
        (result,) = batch.evaluate_batch_all(as_form(f"cvt.{rnd}.{ftype}.{ftype}"), [a], "spec")
        finite = ~np.isnan(a.view(dtype).astype(np.float64))
        assert (result.bits[finite] == want[finite]).all(), ftype


NARROW = {
    "e4m3x2": ml_dtypes.float8_e4m3fn,
    "e5m2x2": ml_dtypes.float8_e5m2,
    "e2m3x2": ml_dtypes.float6_e2m3fn,
    "e3m2x2": ml_dtypes.float6_e3m2fn,
    "e2m1x2": ml_dtypes.float4_e2m1fn,
}


@pytest.mark.parametrize("atype", sorted(NARROW))
def test_narrow_pairs_to_f16x2_against_ml_dtypes(atype: str) -> None:
    """``cvt.rn.f16x2.{e4m3x2,...} d, a``: each element is an .f16 value (ml_dtypes' widening),
    the upper part of a into the upper half of d; 6-bit elements from the low 6 bits of a byte.
    NaN elements (e4m3, e5m2) only checked to be NaN: their bits are the profile's."""
    lane_bits = 4 if atype == "e2m1x2" else 8
    value_bits = 6 if atype in ("e2m3x2", "e3m2x2") else lane_bits
    register = np.arange(1 << (2 * lane_bits), dtype=np.uint64)
    got = np.asarray(_bits(f"cvt.rn.f16x2.{atype}", register), dtype=np.uint64)
    for shift in (lane_bits, 0):
        codes = ((register >> np.uint64(shift)) & np.uint64((1 << value_bits) - 1)).astype(np.uint8)
        want = codes.view(NARROW[atype]).astype(np.float16)
        lane = ((got >> np.uint64(16 if shift else 0)) & np.uint64(0xFFFF)).astype(np.uint16)
        nan = np.isnan(want)
        assert (lane[~nan] == want.view(np.uint16)[~nan]).all()
        assert np.isnan(lane[nan].view(np.float16)).all()


def _rs_oracle(x: int, r: int, k: int, dst: oracle_mpfr.IeeeFormat, *, relu: bool, satfinite: bool) -> int | None:
    """.rs of the .f32 ``x`` with k random bits ``r``: round toward zero, by MPFR, the magnitude
    plus r units of 2^(lsb - k), where 2^lsb is the destination's last place at |x| -- the
    carry of r added to the top k discarded bits -- and overflow away from zero (infinity or,
    with .satfinite, MAX_NORM). None for NaN."""
    f32 = MPFR_FORMATS["f32"]
    if f32.is_nan(x):
        return None
    sign = x >> 31
    if f32.is_inf(x):
        out = dst.max_finite(sign) if satfinite else dst.inf(sign)
    else:
        magnitude = abs(f32.fraction(x))
        if magnitude == 0:
            out = dst.zero(sign)
        else:
            e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
            e = e - 1 if Fraction(2) ** e > magnitude else e
            lsb = max(e, dst.emin) - dst.mbits
            y = magnitude + r * Fraction(2) ** (lsb - k)
            with oracle_mpfr._EXACT:
                big = gmpy2.mpfr(y.numerator) / y.denominator
            if y >= Fraction(2) ** (dst.emax + 1):
                out = dst.max_finite(sign) if satfinite else dst.inf(sign)
            else:
                with dst.context("rz"):
                    out = dst.from_mpfr(big * 1) | (sign << (dst.width - 1))
    if relu and out >> (dst.width - 1):
        return 0
    return out


@pytest.mark.parametrize("dtype", ["f16x2", "bf16x2"])
def test_stochastic_rounding_against_mpfr(dtype: str) -> None:
    """``cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32``: a takes rbits[28:16] (.f16x2, 13 bits) or
    rbits[31:16] (.bf16x2), b rbits[12:0] or rbits[15:0]."""
    dst = MPFR_FORMATS[dtype[:-2]]
    k = 13 if dtype == "f16x2" else 16
    rng = random.Random(dtype)
    f32 = MPFR_FORMATS["f32"]
    a = _float_words(f32, 1500, 21)
    b = list(reversed(a))
    rbits = [rng.choice([0, 0xFFFF_FFFF, 0x1000_1000, rng.getrandbits(32)]) for _ in a]
    for modifiers in ("", ".relu", ".satfinite", ".relu.satfinite"):
        got = _bits(f"cvt.rs{modifiers}.{dtype}.f32", a, b, rbits)
        for x, y, r, g in zip(a, b, rbits, got):
            ra, rb = (r >> 16) & ((1 << k) - 1), r & ((1 << k) - 1)
            for value, rand, lane in ((x, ra, g >> 16), (y, rb, g & 0xFFFF)):
                want = _rs_oracle(value, rand, k, dst, relu="relu" in modifiers, satfinite="satfinite" in modifiers)
                assert lane == want if want is not None else dst.is_nan(lane), (modifiers, hex(value), hex(rand))


@pytest.mark.parametrize("mode", ["rz", "rp"])
@np.errstate(invalid="ignore", over="ignore")  # NaN and overflowing casts in the oracles
def test_ue8m0x2_against_powers_of_two(mode: str) -> None:
    """``cvt.{rz,rp}{.satfinite}.ue8m0x2.f32``: the largest power of two at most |x| (.rz) or the
    smallest at least |x| (.rp), within 2^-127..2^127; beyond: 2^127 toward zero or with
    .satfinite, else the NaN 0xff; NaN gives 0xff."""
    rng = np.random.default_rng(13)
    a = np.concatenate(
        [
            rng.integers(0, 1 << 32, 20_000, dtype=np.uint64),
            np.array([0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 1, 0x7F7F_FFFF, 0x7F00_0000, 0x7F00_0001, 0x0040_0000], np.uint64),
        ]
    )
    values = a.astype(np.uint32).view(np.float32).astype(np.float64)
    for satfinite in (False, True):
        want = []
        for v in np.abs(values):
            if np.isnan(v):
                want.append(0xFF)
                continue
            if np.isinf(v):
                want.append(0xFE if satfinite else 0xFF)
                continue
            mantissa, e = math.frexp(v) if v else (0.5, -1000)  # v = mantissa * 2^e, 0.5 <= m < 1
            power = e - 1 if mode == "rz" or mantissa == 0.5 else e
            if power > 127:
                want.append(0xFE if satfinite or mode == "rz" else 0xFF)
            else:
                want.append(max(power, -127) + 127)
        b = a[::-1].copy()
        got = _bits(f"cvt.{mode}{'.satfinite' if satfinite else ''}.ue8m0x2.f32", a, b)
        assert got == [(x << 8) | y for x, y in zip(want, want[::-1])]


@np.errstate(invalid="ignore", over="ignore")  # NaN and overflowing casts in the oracles
def test_ue8m0x2_to_bf16x2_against_ml_dtypes() -> None:
    """``cvt.rn.bf16x2.ue8m0x2``: each byte e is 2^(e-127), a .bf16 value (2^-127 a subnormal)."""
    register = np.arange(1 << 16, dtype=np.uint64)
    got = np.asarray(_bits("cvt.rn.bf16x2.ue8m0x2", register), dtype=np.uint64)
    for shift in (8, 0):
        e = ((register >> np.uint64(shift)) & np.uint64(0xFF)).astype(np.int64)
        want = np.ldexp(1.0, e - 127).astype(ml_dtypes.bfloat16).view(np.uint16)
        lane = (got >> np.uint64(2 * shift)) & np.uint64(0xFFFF)
        assert (lane[e != 0xFF] == want[e != 0xFF]).all()


def test_agreement_inputs_reach_nan_and_infinity() -> None:
    """The agreement vectors hold NaN and infinite sources for the float source formats, so the
    NaN rule and the overflow branches are compared, not only finite values."""
    for text, fdtype in (("cvt.rn.f16.f64", np.float64), ("cvt.rni.f16.f16", np.float16), ("cvt.rs.satfinite.e4m3x4.f32", np.float32)):
        form = as_form(text)
        first = vectors.inputs(form, 600, 0)[0].astype(np.dtype(fdtype).str.replace("f", "u"))
        values = first.view(fdtype)
        assert np.isnan(values).any() and np.isinf(values).any(), text
