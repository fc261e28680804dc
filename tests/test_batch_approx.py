"""The batched .approx paths (semantics/batch_approx.py) against the readable semantics and MPFR.

* Every legal form of the covered families agrees with :func:`evaluate` on the vectors generator's
  inputs (edge values crossed, then seeded random), under the spec and sm_90 profiles, every
  allowed set (Interval, Flushed, OneOf, AnyNaN) equal.
* The hard classes of the filter are decided exactly: exact square roots, log2 of powers of two,
  2^a of integers, tanh near 1, the f32 numbers beside 2 pi and 100 pi.
* The margin's assumption (numpy's binary64 sin, cos, exp2, log2, tanh within 2^-42 of the
  result) is checked against MPFR on the arguments the paths feed them, and the ends of the
  division and square-root sets against MPFR's correctly rounded results.
"""

from __future__ import annotations

import batch_agreement
import gmpy2
import numpy as np
import oracle_mpfr
import pytest

from ptxspec.conformance import vectors
from ptxspec.semantics import batch, batch_approx
from ptxspec.semantics import floating_point_approx as fpa
from ptxspec.semantics.instructions import as_form, evaluate

F32_FAMILIES = (
    "div.approx",
    "div.full",
    "rcp.approx",
    "sqrt.approx",
    "rsqrt.approx",
    "sin.approx",
    "cos.approx",
    "lg2.approx",
    "ex2.approx",
    "tanh.approx",
)
HALF_FAMILIES = ("tanh.approx.half", "ex2.approx.half")
#: The .f64 forms: the two on the 1.11.20 upper word (OneOf results) and rsqrt.approx.f64.
F64_FORMS = ("rcp.approx.ftz.f64", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64")
PROFILES = ("spec", "sm_90")

F32_FORMS = [f for family in F32_FAMILIES for f in batch_agreement.legal_forms(family)]
HALF_FORMS = [f for family in HALF_FAMILIES for f in batch_agreement.legal_forms(family)]
#: Every 16-bit form has its spec-level sets (the x2 forms lane by lane); under sm_90 each is a
#: table lookup.
HALF_SPEC_FORMS = HALF_FORMS


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", F32_FORMS)
def test_f32_forms_agree(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=2500, seed=0)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", F64_FORMS)
def test_f64_forms_agree(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=2500, seed=0)


@pytest.mark.parametrize("form", HALF_FORMS)
def test_half_tables_agree(form: str) -> None:
    batch_agreement.assert_agrees(form, "sm_90", count=3000, seed=0)


@pytest.mark.parametrize("form", HALF_SPEC_FORMS)
def test_half_spec_sets_agree(form: str) -> None:
    batch_agreement.assert_agrees(form, "spec", count=800, seed=0)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", F32_FORMS)
def test_f32_forms_agree_more(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=30000, seed=7)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", F64_FORMS)
def test_f64_forms_agree_more(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=30000, seed=7)


@pytest.mark.heavy
@pytest.mark.parametrize("form", HALF_SPEC_FORMS)
def test_half_spec_every_input(form: str) -> None:
    """Every one of the 2^16 inputs of a one-lane 16-bit form under the spec."""
    _agree_on(form, "spec", [np.arange(1 << 16, dtype=np.uint64)])


@pytest.mark.parametrize("profile", PROFILES)
def test_every_claimed_form_has_a_path(profile: str) -> None:
    for form in F32_FORMS + list(F64_FORMS) + HALF_FORMS:
        assert batch.has_fast_path(form, profile), form


def _agree_on(form_text: str, profile: str, sources: list[np.ndarray]) -> None:
    """The batched results of ``sources`` equal the scalar ones, vector by vector."""
    form = as_form(form_text)
    (result,) = batch.evaluate_batch_all(form, sources, profile)
    for i, vector in enumerate(zip(*(s.tolist() for s in sources))):
        assert result.result(i) == evaluate(form, list(vector), profile)[0], f"{form_text} on {[hex(v) for v in vector]}"


def _path(form_text: str):
    return batch.fast_path(as_form(form_text), "spec")


def _f32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).view(np.uint32)


# --- the hard classes are decided, and exactly -------------------------------------------------


def test_exact_roots_logs_and_powers_are_decided() -> None:
    """Perfect squares (sqrt), powers of two (lg2, both bounds) and integers (ex2) are the inputs
    whose ends could be rounding boundaries: the paths decide them exactly, without the scalar."""
    squares = _f32([(k * k) * 2.0**e for k in (1, 3, 5, 4095) for e in (-148, -60, -2, 0, 2, 60, 100)])
    powers = _f32([2.0**e for e in range(-149, 128, 3)] + [1.0])
    integers = _f32(list(range(-152, 129)))
    for form, a in (
        ("sqrt.approx.f32", squares),
        ("sqrt.approx.ftz.f32", squares),
        ("lg2.approx.f32", powers),
        ("ex2.approx.f32", integers),
        ("ex2.approx.ftz.f32", integers),
    ):
        result = _path(form)(a, profile=batch.profile_named("spec"))
        assert result.undecided is None or not result.undecided.any(), form
        _agree_on(form, "spec", [a.astype(np.uint64)])


def test_tanh_near_one_is_decided() -> None:
    """For |a| large, tanh(a) rounds to 1.0 in binary64 while its ends lie just below the grid
    points 1 -+ 2^-11: decided by the clamp, and equal to the scalar sets."""
    a = _f32([s * v for s in (1, -1) for v in (9.0, 14.0, 17.5, 20.0, 40.0, 1e3, 3.4e38)])
    result = _path("tanh.approx.f32")(a, profile=batch.profile_named("spec"))
    assert result.undecided is None or not result.undecided.any()
    _agree_on("tanh.approx.f32", "spec", [a.astype(np.uint64)])


def test_sin_cos_range_edges() -> None:
    """The f32 numbers beside 2 pi and 100 pi fall on the same side of the binary64 constants as
    of the reals (the scalar compare())."""
    edges = []
    for c in (batch_approx.TWO_PI, batch_approx.HUNDRED_PI):
        bits = int(np.float32(c).view(np.uint32))
        edges += [bits + d for d in (-2, -1, 0, 1, 2)] + [(bits + d) | 0x80000000 for d in (-1, 0, 1)]
    a = np.array(edges, dtype=np.uint64)
    for form in ("sin.approx.f32", "cos.approx.ftz.f32"):
        for profile in PROFILES:
            _agree_on(form, profile, [a])


def test_undecided_vectors_are_rare() -> None:
    """On the generator's random vectors the filter leaves almost nothing to the scalar path (the
    rate rests on it)."""
    profile = batch.profile_named("spec")
    for form in (
        "sin.approx.ftz.f32",
        "cos.approx.f32",
        "lg2.approx.f32",
        "ex2.approx.f32",
        "tanh.approx.f32",
        "rsqrt.approx.f32",
        "tanh.approx.bf16",
        "ex2.approx.ftz.bf16",
        "rsqrt.approx.f64",
        "rsqrt.approx.ftz.f64",
    ):
        sources = vectors.inputs(as_form(form), 20000, 3)
        result = _path(form)(*(s.astype({"f32": np.uint32, "f64": np.uint64}.get(form[-3:], np.uint16)) for s in sources), profile=profile)
        assert result.undecided is None or result.undecided.mean() < 1e-3, form


# --- flushed intervals and per-lane intervals ---------------------------------------------------

#: .ftz forms whose generator vectors include Flushed sets (tiny sines, deep quotients, ex2 near
#: the bottom of .bf16), and x2 forms whose lanes are intervals.
FLUSHED_FORMS = ("sin.approx.ftz.f32", "div.full.ftz.f32", "rcp.approx.ftz.f32", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2")
X2_FORMS = ("tanh.approx.f16x2", "tanh.approx.bf16x2", "ex2.approx.f16x2", "ex2.approx.ftz.bf16x2")


def _sources(form_text: str, count: int = 3000, seed: int = 0) -> list[np.ndarray]:
    """The generator's vectors; for a 16-bit .ftz form every input of a lane instead (one input
    of .bf16 has a Flushed set: too rare for the generator's sample)."""
    if "bf16" not in form_text:
        return vectors.inputs(as_form(form_text), count, seed)
    k = np.arange(1 << 16, dtype=np.uint64)
    return [(k << np.uint64(16)) | ((k * np.uint64(40503)) & np.uint64(0xFFFF)) if form_text.endswith("x2") else k]


def _spec_result(form_text: str, sources: list[np.ndarray]) -> batch.BatchResult:
    (result,) = batch.evaluate_batch_all(form_text, sources, "spec")
    return result


@pytest.mark.parametrize("form", FLUSHED_FORMS)
def test_flushed_sets_are_intervals(form: str) -> None:
    """The Flushed sets of .ftz are Intervals lanes with ``flushed`` set (no per-vector sets),
    and each rebuilds the scalar Flushed set."""
    sources = _sources(form)
    result = _spec_result(form, sources)
    iv = result.intervals
    assert iv is not None and iv.flushed is not None
    flushed = iv.mask & iv.flushed
    assert flushed.any(), form
    assert all(not isinstance(v, fpa.Flushed) for v in result.sets.values())
    rows = np.flatnonzero(flushed.any(axis=1) if flushed.ndim == 2 else flushed)[:200]
    for i in rows.tolist():
        assert result.result(i) == evaluate(form, [int(s[i]) for s in sources], "spec")[0], form


@pytest.mark.parametrize("form", X2_FORMS)
def test_x2_lanes_are_intervals(form: str) -> None:
    """An x2 form's sets are per-lane Intervals of shape (n, 2): registers with both lanes
    intervals, and with one lane an interval beside fixed bits, rebuild the scalar Lanes."""
    result = _spec_result(form, vectors.inputs(as_form(form), 3000, 0))
    iv = result.intervals
    assert iv is not None and iv.mask.shape == (len(result), 2)
    both, one = iv.mask.all(axis=1), iv.mask.any(axis=1) & ~iv.mask.all(axis=1)
    assert both.any() and one.any(), form
    # Only the OneOf lanes of ex2 reaching +0 go to sets; tanh has none.
    if form.startswith("tanh"):
        assert not result.sets


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", ["sin.approx.ftz.f32", "ex2.approx.ftz.bf16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16x2", "tanh.approx.bf16x2", *F64_FORMS])
def test_contains_agrees(form: str, profile: str) -> None:
    """BatchResult.contains (flushed lanes, per-lane intervals, OneOf lanes) answers as the
    scalar check."""
    batch_agreement.contains_agrees(form, profile, count=1500, seed=0)


@pytest.mark.heavy
@pytest.mark.parametrize("form", X2_FORMS)
def test_x2_every_lane_input(form: str) -> None:
    """Every 16-bit input in each lane of an x2 form under the spec (the upper lane k, the lower a
    permutation of k)."""
    k = np.arange(1 << 16, dtype=np.uint64)
    _agree_on(form, "spec", [(k << np.uint64(16)) | ((k * np.uint64(40503)) & np.uint64(0xFFFF))])


# --- independent oracles (MPFR) -------------------------------------------------------------------

_HIGH = gmpy2.context(precision=200, emin=-(1 << 20), emax=1 << 20)


def _mpfr_of(x: float) -> gmpy2.mpfr:
    return gmpy2.mpfr(x, 200)


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [("sin", -100 * np.pi, 100 * np.pi), ("cos", -100 * np.pi, 100 * np.pi), ("exp2", -152.0, 129.0), ("log2", 2.0**-149, 3.4e38), ("tanh", 2.0**-149, 90.0)],
)
def test_numpy_functions_within_assumed_error(name: str, low: float, high: float) -> None:
    """numpy's binary64 function on .f32 arguments of the paths' range (random, plus the f32
    numbers nearest multiples of pi/2 for sin and cos, where the result is smallest) is within
    NUMPY_ERROR of the result, relative."""
    rng = np.random.default_rng(11)
    if name in ("log2", "tanh"):
        x = np.exp2(rng.uniform(np.log2(low), np.log2(high), 3000))
    else:
        x = rng.uniform(low, high, 3000)
    if name in ("sin", "cos"):
        k = np.arange(-200, 201)
        near = (k * (np.pi / 2)).astype(np.float32).astype(np.float64)
        x = np.concatenate([x, near, np.nextafter(near.astype(np.float32), np.float32(np.inf)).astype(np.float64)])
    x = x.astype(np.float32).astype(np.float64)
    got = getattr(np, name)(x)
    with _HIGH:
        for xi, gi in zip(x.tolist(), got.tolist()):
            exact = getattr(gmpy2, name)(_mpfr_of(xi))
            if exact == 0:
                assert gi == 0
                continue
            assert abs((_mpfr_of(gi) - exact) / exact) <= batch_approx.NUMPY_ERROR, (name, xi)


def _ordinal(bits: int) -> int:
    return -(bits & 0x7FFFFFFF) if bits >> 31 else bits


@pytest.mark.parametrize("form", ["div.full.f32", "div.approx.f32", "rcp.approx.f32"])
def test_quotient_sets_centre_on_mpfr(form: str) -> None:
    """Where the set is an interval inside the finite range, its centre is MPFR's correctly
    rounded quotient (k ulps either side)."""
    f = as_form(form)
    k = 1 if form.startswith("rcp") else 2
    sources = [s.astype(np.uint32) for s in vectors.inputs(f, 3000, 5)]
    result = _path(form)(*sources, profile=batch.profile_named("spec"))
    assert result.intervals is not None
    checked = 0
    for i in np.flatnonzero(result.intervals.mask).tolist():
        low, high = _ordinal(int(result.intervals.low[i])), _ordinal(int(result.intervals.high[i]))
        if high - low != 2 * k:
            continue  # clipped at an infinity
        operands = tuple(int(s[i]) for s in sources)
        want = oracle_mpfr.reference("rcp" if len(operands) == 1 else "div", oracle_mpfr.F32, "rn", operands)
        assert low + k == _ordinal(want), (form, [hex(o) for o in operands])
        checked += 1
    assert checked > 500


def test_sqrt_ends_against_mpfr() -> None:
    """sqrt.approx's interval: its low end is the least f32 at or above sqrt(a)(1 - 2^-23) and its
    high end the greatest at or below sqrt(a)(1 + 2^-23), the reals taken with MPFR."""
    form = as_form("sqrt.approx.f32")
    a = vectors.inputs(form, 3000, 9)[0].astype(np.uint32)
    result = _path("sqrt.approx.f32")(a, profile=batch.profile_named("spec"))
    assert result.intervals is not None
    index = np.flatnonzero(result.intervals.mask)
    assert len(index) > 1000
    eps = gmpy2.mpfr(2) ** -23
    with _HIGH:
        for i in index.tolist():
            y = gmpy2.sqrt(_mpfr_of(float(a[i : i + 1].view(np.float32)[0])))
            low = np.uint32(result.intervals.low[i])
            high = np.uint32(result.intervals.high[i])
            value = lambda bits: _mpfr_of(float(np.array([bits], np.uint32).view(np.float32)[0]))  # noqa: E731
            assert value(low) >= y * (1 - eps) > value(low - np.uint32(1))
            assert value(high) <= y * (1 + eps) < value(high + np.uint32(1))


def _f64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).view(np.uint64)


def test_f64_edges_agree() -> None:
    """Exact roots (powers of 4), odd powers of 2, subnormals, the largest finite value, and the
    upper-word forms' edges: a subnormal or NaN upper word, a NaN payload in the low word only."""
    values = (
        [4.0**e for e in range(-537, 512, 37)] + [2.0**e for e in range(-1073, 1024, 61)] + [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1.0, 3.0]
    )
    a = np.concatenate([_f64(values), _f64([-v for v in values[:5]])])
    words = [0x000FFFFF_00000000, 0x80000001_12345678, 0x7FF00000_00000001, 0x7FF80000_00000000, 0x00100000_FFFFFFFF, 0x7FEFFFFF_FFFFFFFF]
    a = np.concatenate([a, np.array(words, dtype=np.uint64)])
    for form in F64_FORMS:
        for profile in PROFILES:
            _agree_on(form, profile, [a])


def test_rsqrt_f64_ends_against_mpfr() -> None:
    """rsqrt.approx.f64's interval: its low end is the least .f64 at or above y (1 - 2^-22.9) and
    its high end the greatest at or below y (1 + 2^-22.9), y = 1/sqrt(a), the reals with MPFR."""
    a = vectors.inputs(as_form("rsqrt.approx.f64"), 3000, 4)[0].astype(np.uint64)
    result = _path("rsqrt.approx.f64")(a, profile=batch.profile_named("spec"))
    assert result.intervals is not None
    index = np.flatnonzero(result.intervals.mask)
    assert len(index) > 1000
    with _HIGH:
        eps = gmpy2.exp2(gmpy2.mpfr(-229) / 10)
        for i in index.tolist():
            y = 1 / gmpy2.sqrt(_mpfr_of(float(a[i : i + 1].view(np.float64)[0])))
            low, high = (result.intervals.low[i : i + 1].view(np.float64)[0], result.intervals.high[i : i + 1].view(np.float64)[0])
            assert _mpfr_of(low) >= y * (1 - eps) > _mpfr_of(np.nextafter(low, -np.inf))
            assert _mpfr_of(high) <= y * (1 + eps) < _mpfr_of(np.nextafter(high, np.inf))


@pytest.mark.parametrize("form", ["rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64"])
def test_upper_word_sets_centre_on_mpfr(form: str) -> None:
    """The upper-word forms' three members: the middle one is MPFR's 21-bit rounding of 1/tmp
    (1/sqrt(tmp)), tmp = a[63:32] as 1.11.20, the others its neighbours."""
    a = vectors.inputs(as_form(form), 3000, 6)[0].astype(np.uint64)
    result = _path(form)(a, profile=batch.profile_named("spec"))
    checked = 0
    assert result.members is not None and not result.sets
    for i in np.flatnonzero(result.members.mask).tolist():
        allowed = result.result(i)
        members = sorted(float(np.array([w], np.uint64).view(np.float64)[0]) for w in allowed.members)
        if len(members) != 3 or min(members) <= 2.2250738585072014e-308:
            continue
        tmp = float(np.array([int(a[i]) & 0xFFFFFFFF00000000], np.uint64).view(np.float64)[0])
        with gmpy2.context(precision=21, emin=-2000, emax=2000):
            want = gmpy2.div(1, _mpfr_of(tmp)) if form.startswith("rcp") else gmpy2.rec_sqrt(_mpfr_of(tmp))
        assert float(want) == members[1], (form, hex(int(a[i])))
        checked += 1
    assert checked > 500
