"""The batched paths of every form of the two exhaustive silicon spaces (issue 6;
/tmp/brief/s4/exhaustive_common.md) against the readable semantics and independent oracles.

* The spaces, enumerated here from the catalogue: "binary16" (add/sub/mul with an explicit
  rounding modifier, and every min/max, on scalar .f16/.bf16) and "cvt32" (cvt from one .f32 to
  .f16/.bf16/.tf32/.s8/.u8/.s16/.u16, and the packed forms from two .f32). Every form has a fast
  path, and under the sm_90 profile every result is fixed bits (no open NaN lane).
* Agreement with the scalar ``evaluate(form, ..., profile)`` (both profiles, open NaN lanes
  included) on (a) the edge classes -- conformance.vectors' edge vectors (ties and thresholds of
  the destination formats) and every sign x exponent field x mantissa-boundary field of .f32
  (conformance.strategies' field tables, plus every exponent for the integer destinations) --
  (b) seeded random inputs, (c) for the 16-bit forms whole slices of the 2^32 space (all b for
  sampled a; heavy).
* Independent oracles on large slices: MPFR for .bf16 add/sub/mul, the binary64 path of
  batch.py (a separate implementation) for .f16 add/sub/mul, numpy / ml_dtypes for the .rn
  conversions to .f16, .bf16, .e4m3, .e5m2; and the H100/H200 recordings in
  conformance/data/sm_90 for every recorded form that has a fast path.
"""

from __future__ import annotations

import functools
import itertools

import gmpy2
import ml_dtypes
import numpy as np
import pytest

from ptxspec.conformance import vectors
from ptxspec.conformance.strategies import _exponent_fields, _float_edges, _mantissa_fields
from ptxspec.semantics import batch
from ptxspec.semantics.batch import BatchResult, evaluate_batch
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.semantics.results import Profile
from ptxspec.spec.catalogue import CATALOGUE
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import FORMATS

PROFILES = ("spec", "sm_90")

# ---------------------------------------------------------------------------------------------
# The spaces
# ---------------------------------------------------------------------------------------------


def _family_forms(key: str, allowed: dict[str, tuple[str, ...]]) -> list[str]:
    """Canonical texts of the forms of family ``key`` (slots limited to ``allowed``) that
    sm_90a admits with PTX ISA 8.7."""
    family = CATALOGUE.family(key)
    options = []
    for slot in family.slots:
        tokens = [t for t in slot.tokens if t in allowed.get(slot.name, slot.tokens)]
        options.append(tokens if slot.required else [None, *tokens])
    out = []
    for combo in itertools.product(*options):
        try:
            form = CATALOGUE.parse(".".join([family.opcode, *(t for t in combo if t)]))
        except PtxSpecError:
            continue
        if form.family.key == key and form.admits((8, 7), "sm_90a") and form.text not in out:
            out.append(form.text)
    return out


@functools.cache
def space(name: str) -> tuple[str, ...]:
    forms: list[str] = []
    if name == "binary16":
        for op in ("add", "sub", "mul"):
            forms += [t for t in _family_forms(f"{op}.h", {"type": ("f16", "bf16")}) if as_form(t).get("rnd")]
        for op in ("min", "max"):
            forms += _family_forms(f"{op}.h", {"type": ("f16", "bf16")})
    else:
        forms += _family_forms("cvt", {"atype": ("f32",), "dtype": ("f16", "bf16", "tf32", "s8", "u8", "s16", "u16")})
        for key in ("cvt.x2.f32", "cvt.f8x2.f32"):
            forms += _family_forms(key, {"atype": ("f32",), "dtype": ("f16x2", "bf16x2", "e4m3x2", "e5m2x2")})
    return tuple(forms)


BINARY16 = space("binary16")
CVT32 = space("cvt32")
ALL_FORMS = BINARY16 + CVT32


def test_the_spaces_hold_the_forms_of_the_brief():
    """Counts by family, and a few forms named in issue 6, so that a catalogue change shows."""
    assert len(BINARY16) == 39 and len(CVT32) == 126
    assert {"add.rn.f16", "sub.rn.ftz.sat.f16", "mul.rn.bf16", "min.NaN.xorsign.abs.bf16", "max.ftz.NaN.f16"} <= set(BINARY16)
    assert not {"add.f16", "mul.bf16"} & set(BINARY16)
    assert {"cvt.rn.f16.f32", "cvt.rz.bf16.f32", "cvt.rna.satfinite.tf32.f32", "cvt.rmi.ftz.sat.u16.f32"} <= set(CVT32)
    assert {"cvt.rn.satfinite.e4m3x2.f32", "cvt.rz.relu.satfinite.bf16x2.f32", "cvt.rn.satfinite.relu.e5m2x2.f32"} <= set(CVT32)
    assert sum(t.startswith(("cvt.rni", "cvt.rzi", "cvt.rmi", "cvt.rpi")) for t in CVT32) == 4 * 4 * 4


@pytest.mark.parametrize("profile", PROFILES)
def test_every_form_of_both_spaces_has_a_fast_path(profile):
    missing = [t for t in ALL_FORMS if not batch.has_fast_path(t, profile)]
    assert not missing
    assert set(ALL_FORMS) <= set(batch.FAST_PATHS)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@functools.cache
def f32_grid(every_exponent: bool = False) -> np.ndarray:
    """Both signs x exponent fields (the ends of every format's range, or all 256) x mantissa
    fields at every rounding boundary (ties, one either side, odd kept parts), plus the .f32
    edge patterns (NaN payloads, infinities)."""
    f32 = FORMATS["f32"]
    exponents = range(256) if every_exponent else _exponent_fields(f32)
    values = {(s << 31) | (e << 23) | m for s in (0, 1) for e in exponents for m in _mantissa_fields(f32)}
    values |= set(_float_edges(f32))
    return np.array(sorted(values), dtype=np.uint32)


@functools.cache
def half_grid(name: str) -> np.ndarray:
    fmt = FORMATS[name]
    values = {(s << 15) | (e << fmt.mantissa_bits) | m for s in (0, 1) for e in _exponent_fields(fmt) for m in _mantissa_fields(fmt)}
    return np.array(sorted(values | set(_float_edges(fmt))), dtype=np.uint16)


def edge_sources(text: str) -> list[np.ndarray]:
    """(a) The edge classes of the form: conformance.vectors' edge vectors, then the field grid
    (for a binary form: every grid value against the edge values of the other operand, and a
    seeded sample of grid pairs; for a packed cvt: the grid in a, a shuffled grid in b)."""
    form = as_form(text)
    edges = vectors.edge_matrix(form, 1 << 16)
    columns = [edges[:, k] for k in range(edges.shape[1])]
    rng = np.random.default_rng(17)
    if text.startswith("cvt"):
        integer = form["dtype"][0] in "su"
        grid = f32_grid(every_exponent=integer).astype(np.uint64)
        extra = [grid] if len(form.sources) == 1 else [grid, rng.permutation(grid)]
    else:
        name = "bf16" if form["type"].startswith("bf16") else "f16"
        grid = half_grid(name).astype(np.uint64)
        edge = np.array(_float_edges(FORMATS[name]), dtype=np.uint64)
        a1, b1 = (x.ravel() for x in np.meshgrid(grid, edge, indexing="ij"))
        a2, b2 = rng.choice(grid, 4000), rng.choice(grid, 4000)
        extra = [np.concatenate([a1, b1, a2]), np.concatenate([b1, a1, b2])]
        if form["type"].endswith("x2"):  # each pair in the upper lane, a shuffled pair in the lower
            order = rng.permutation(len(extra[0]))
            extra = [(x << np.uint64(16)) | x[order] for x in extra]
    return [np.concatenate([c, e]) for c, e in zip(columns, extra)]


def random_sources(text: str, n: int, seed: int) -> list[np.ndarray]:
    """(b) Seeded random operands, as conformance.vectors draws them for the form."""
    form = as_form(text)
    rng = np.random.default_rng(seed)
    return [vectors.random_operand(rng, form, o, n) for o in form.sources]


def _sample(sources: list[np.ndarray], n: int, seed: int) -> list[np.ndarray]:
    if len(sources[0]) <= n:
        return sources
    pick = np.sort(np.random.default_rng(seed).choice(len(sources[0]), n, replace=False))
    return [s[pick] for s in sources]


# ---------------------------------------------------------------------------------------------
# Agreement with the scalar semantics
# ---------------------------------------------------------------------------------------------


def assert_agrees_with_scalar(text: str, sources: list[np.ndarray], profile: str) -> None:
    """Element by element the batched result is the scalar result: the same bits, or the same
    open set (AnyNaN, Lanes of AnyNaN) where the scalar result is one."""
    form = as_form(text)
    assert batch.has_fast_path(form, profile)
    got = evaluate_batch(form, sources, profile)
    assert isinstance(got, BatchResult) and len(got) == len(sources[0]) and not got.sets
    columns = [s.tolist() for s in sources]
    bad = []
    for i in range(len(got)):
        (want,) = evaluate(form, [c[i] for c in columns], profile)
        if got.result(i) != want:
            bad.append(f"{text} {[hex(c[i]) for c in columns]}: batched {got.result(i)!r}, scalar {want!r}")
            if len(bad) >= 5:
                break
    assert not bad, "\n".join(bad)


def _seed(text: str) -> int:
    return ALL_FORMS.index(text)


@pytest.mark.parametrize("text", ALL_FORMS)
def test_agrees_with_scalar_on_edges_and_random(text):
    """A seeded sample of the edge classes and random inputs, under both profiles."""
    seed = _seed(text)
    edges = _sample(edge_sources(text), 160, seed)
    randoms = random_sources(text, 60, seed)
    sources = [np.concatenate([e, r]) for e, r in zip(edges, randoms)]
    for profile in PROFILES:
        assert_agrees_with_scalar(text, sources, profile)


@pytest.mark.heavy
@pytest.mark.parametrize("text", ALL_FORMS)
def test_agrees_with_scalar_on_every_edge_heavy(text):
    """Every edge vector and grid input, and 3000 random vectors; the profile alternates."""
    seed = _seed(text)
    sources = [np.concatenate([e, r]) for e, r in zip(edge_sources(text), random_sources(text, 3000, 1000 + seed))]
    assert_agrees_with_scalar(text, sources, PROFILES[seed % 2])


#: The other forms with a path on the batched rounding routine: the packed 16-bit forms, the
#: default-rounding spellings, cvt to 32- and 64-bit integers, .tf32 with .satfinite.
OTHER_FORMS = tuple(sorted(set(batch.FAST_PATHS) - set(ALL_FORMS) - set(batch._EXPLICIT)))


def test_the_other_paths_are_the_packed_and_wider_relatives():
    assert len(OTHER_FORMS) >= 90
    assert {"add.rn.bf16x2", "min.NaN.xorsign.abs.f16x2", "cvt.rni.s64.f32", "cvt.rzi.ftz.sat.u32.f32"} <= set(OTHER_FORMS)


@pytest.mark.parametrize("text", OTHER_FORMS)
def test_other_paths_agree_with_scalar(text):
    seed = 500 + OTHER_FORMS.index(text)
    sources = [np.concatenate([e, r]) for e, r in zip(_sample(edge_sources(text), 120, seed), random_sources(text, 40, seed))]
    for profile in PROFILES:
        assert_agrees_with_scalar(text, sources, profile)


@pytest.mark.heavy
@pytest.mark.parametrize("text", OTHER_FORMS)
def test_other_paths_agree_with_scalar_on_every_edge_heavy(text):
    seed = 500 + OTHER_FORMS.index(text)
    sources = [np.concatenate([e, r]) for e, r in zip(_sample(edge_sources(text), 20000, seed), random_sources(text, 2000, seed))]
    assert_agrees_with_scalar(text, sources, PROFILES[seed % 2])


def binary16_slice(a: int) -> list[np.ndarray]:
    """Indices a * 2^16 .. a * 2^16 + 65535 of the binary16 space: fixed a, every b."""
    return [np.full(1 << 16, a, dtype=np.uint16), np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)]


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("text", BINARY16)
def test_binary16_slices_against_scalar_heavy(text, chunk):
    """(c) Whole slices of the 2^32 space: for a seeded a (a normal number, a subnormal, a
    special, a random pattern, by chunk), all 65536 b, against the scalar semantics."""
    rng = np.random.default_rng(100 * _seed(text) + chunk)
    mantissa = 10 if text.endswith(".f16") else 7
    a = [
        int(rng.integers(0x3800, 0x4400)),
        int(rng.integers(1, 1 << mantissa)) | 0x8000 * (chunk & 1),
        int(rng.choice([0x7C00, 0x7E01, 0x8000, 0x7F80, 0xFFC1, 0x0000])),
        int(rng.integers(0, 1 << 16)),
    ][chunk]
    assert_agrees_with_scalar(text, binary16_slice(a), PROFILES[chunk % 2])


def test_sm90_leaves_no_result_open():
    """Under sm_90 every result of both spaces is fixed bits, NaN inputs and invalid operations
    included (the profile pins each NaN); the spec profile does leave some open."""
    opened = []
    for text in ALL_FORMS:
        sources = edge_sources(text)
        result = evaluate_batch(text, sources, "sm_90")
        assert result.any_nan is None and not result.sets, text
        if evaluate_batch(text, sources, "spec").any_nan is not None:
            opened.append(text)
    assert "cvt.rn.f16.f32" in opened and "add.rn.bf16" in opened and "min.f16" in opened
    assert not {"cvt.rn.sat.f16.f32", "cvt.rn.relu.f16.f32", "add.rn.sat.f16", "min.NaN.f16", "cvt.rni.s8.f32"} & set(opened)


# ---------------------------------------------------------------------------------------------
# Independent oracles on large slices
# ---------------------------------------------------------------------------------------------

#: IEEE binary16 and bfloat16 in MPFR: precision, smallest subnormal exponent, overflow threshold.
BFLOAT16 = gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True, round=gmpy2.RoundToNearest)


def mpfr_bf16(op: str, a: int, b: int) -> int | None:
    """bf16 ``a op b`` rounded once by MPFR; None for NaN."""
    x, y = (float(np.array([v], dtype=np.uint16).view(ml_dtypes.bfloat16)[0]) for v in (a, b))
    with gmpy2.context(BFLOAT16):
        r = {"add": gmpy2.add, "sub": gmpy2.sub, "mul": gmpy2.mul}[op](gmpy2.mpfr(x), gmpy2.mpfr(y))
    if gmpy2.is_nan(r):
        return None
    # r is a bf16 value (or an infinity): float32 holds it exactly, and its top half is the bf16.
    return int(np.array([float(r)], dtype=np.float32).view(np.uint32)[0] >> 16)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_bf16_arithmetic_against_mpfr_on_a_slice(op):
    """All b for one a near 1 (cancellation, every exponent difference, ties) and a sample of b
    for a subnormal and a large a, against MPFR."""
    rng = np.random.default_rng(23)
    a_values = [0x3F81, 0x0003, 0x7E5A]
    a = np.concatenate([np.full(1 << 16, a_values[0]), np.full(4000, a_values[1]), np.full(4000, a_values[2])]).astype(np.uint16)
    b = np.concatenate([np.arange(1 << 16), rng.integers(0, 1 << 16, 8000)]).astype(np.uint16)
    got = evaluate_batch(f"{op}.rn.bf16", [a, b], "sm_90").bits
    bad = []
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        want = mpfr_bf16(op, x, y)
        want = 0x7FFF if want is None else want  # sm_90: the canonical NaN
        if int(got[i]) != want:
            bad.append((hex(x), hex(y), hex(int(got[i])), hex(want)))
    assert not bad, bad[:5]


F16_ARITHMETIC = [t for t in BINARY16 if t.endswith(".f16") and t.split(".")[0] in ("add", "sub", "mul")]


@pytest.mark.parametrize("text", F16_ARITHMETIC)
def test_f16_integer_path_agrees_with_the_binary64_path(text):
    """Two implementations of .f16 add/sub/mul (the binary64 one that evaluate_batch uses, the
    integer-rounding one the bf16 forms use) on 16 whole slices: every b for 16 seeded a."""
    form = as_form(text)
    binary64 = batch.FAST_PATHS[text]
    integer = batch.half_arithmetic_exact(form)
    rng = np.random.default_rng(_seed(text))
    a_values = rng.integers(0, 1 << 16, 16)
    a = np.repeat(a_values, 1 << 16).astype(np.uint16)
    b = np.tile(np.arange(1 << 16, dtype=np.uint32), 16).astype(np.uint16)
    for profile in PROFILES:
        x, y = binary64(a, b, profile=profile), integer(a, b, profile=profile)
        assert np.array_equal(x.bits, y.bits), text
        assert (x.any_nan is None) == (y.any_nan is None) and (x.any_nan is None or np.array_equal(x.any_nan, y.any_nan))


def f32_sample(n: int, seed: int) -> np.ndarray:
    """n seeded .f32 patterns: uniform, and concentrated on the narrow formats' ranges."""
    rng = np.random.default_rng(seed)
    uniform = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near = (rng.integers(127 - 30, 127 + 20, n, dtype=np.uint64).astype(np.uint32) << np.uint32(23)) | (uniform & np.uint32(0x807FFFFF))
    return np.where(rng.random(n) < 0.5, uniform, near)


def test_rn_conversions_against_numpy_and_ml_dtypes():
    """cvt.rn to .f16 (numpy's binary32 -> binary16), .bf16 (ml_dtypes), and .rn.satfinite to
    .e4m3/.e5m2 (ml_dtypes after clamping to +-MAX_NORM), on 2^20 seeded inputs, NaNs excluded."""
    x = f32_sample(1 << 20, 29)
    x = x[(x & np.uint32(0x7FFFFFFF)) <= np.uint32(0x7F800000)]
    with np.errstate(all="ignore"):
        value = x.view(np.float32)
        assert np.array_equal(evaluate_batch("cvt.rn.f16.f32", [x], "sm_90").bits, value.astype(np.float16).view(np.uint16))
        assert np.array_equal(evaluate_batch("cvt.rn.bf16.f32", [x], "sm_90").bits, value.astype(ml_dtypes.bfloat16).view(np.uint16))
        for name, dtype, limit in (("e4m3", ml_dtypes.float8_e4m3fn, 448.0), ("e5m2", ml_dtypes.float8_e5m2, 57344.0)):
            got = evaluate_batch(f"cvt.rn.satfinite.{name}x2.f32", [x, x], "sm_90").bits
            want = np.clip(value, -limit, limit).astype(dtype).view(np.uint8).astype(np.uint16)
            assert np.array_equal(got, want << np.uint16(8) | want), name


# ---------------------------------------------------------------------------------------------
# Silicon: every recorded form that has a fast path
# ---------------------------------------------------------------------------------------------


def test_fast_paths_match_every_sm90_recording():
    """Every vector recorded on an H100/H200 for a form with a fast path (every destination): sm_90
    gives the observed register exactly where it pins the result, and a set holding it elsewhere (a narrow integer in a wider register compared on its own bits).
    (The spec profile need not allow them: sm_90 departs from the manual in places, e.g. .ftz
    does not flush the .f32 input of cvt.ftz.f16.f32 -- SM_90.cvt_ftz_flushes_input.)"""
    from ptxspec.conformance.silicon import replay
    from ptxspec.spec.types import register_bits

    recordings = replay.load()
    checked = []
    for text, recorded in sorted(recordings.forms.items()):
        if recorded.warp or "#" in text or not batch.has_fast_path(text, "sm_90"):
            continue
        form = as_form(text)
        widths = [register_bits(o.type) for o in form.sources]
        inputs = [np.asarray(col).astype(np.uint64) & np.uint64((1 << w) - 1) for col, w in zip(recorded.inputs, widths)]
        results = batch.evaluate_batch_all(form, inputs, "sm_90")
        assert len(recorded.outputs) <= len(results), text
        for k, (pinned, column) in enumerate(zip(results, recorded.outputs)):
            bits = register_bits(form.destinations[k].type)
            observed = np.asarray(column).astype(np.uint64) & np.uint64((1 << bits) - 1)
            # Fixed bits must be the observed ones; where sm_90 leaves a set (an .approx bound),
            # the observed result must lie in it.
            mismatch = np.flatnonzero(~pinned.contains(observed.astype(pinned.bits.dtype)))
            assert not mismatch.size, (text, k, [(*(hex(int(c[i])) for c in inputs), hex(int(observed[i])), hex(int(pinned.bits[i]))) for i in mismatch[:5]])
        checked.append(text)
    in_spaces = set(checked) & set(ALL_FORMS)
    assert len(checked) >= 6400 and len(in_spaces) >= 100, (len(checked), len(in_spaces))


# ---------------------------------------------------------------------------------------------
# The table, the shared-source shortcut, the profiles
# ---------------------------------------------------------------------------------------------


def test_a_shared_source_array_gives_the_same_results_as_a_copy():
    """The packed cvt forms convert an array passed as both sources once; the result must be
    the one of two separate arrays, across block boundaries."""
    x = f32_sample(3 * batch.BLOCK + 5, 31)
    x[7] = 0x7FC00001
    for text in ("cvt.rn.f16x2.f32", "cvt.rz.relu.satfinite.bf16x2.f32", "cvt.rn.satfinite.relu.e4m3x2.f32"):
        for profile in PROFILES:
            shared, copied = evaluate_batch(text, [x, x], profile), evaluate_batch(text, [x, x.copy()], profile)
            assert np.array_equal(shared.bits, copied.bits)
            assert (shared.any_nan is None) == (copied.any_nan is None)
            assert shared.any_nan is None or np.array_equal(shared.any_nan, copied.any_nan)
    high = evaluate_batch("cvt.rn.f16x2.f32", [x, x], "sm_90").bits >> np.uint32(16)
    assert np.array_equal(high, evaluate_batch("cvt.rn.f16.f32", [x], "sm_90").bits.astype(np.uint32))


def test_fast_path_table_lookup():
    table = batch.FAST_PATHS
    assert "cvt.rmi.ftz.sat.u16.f32" in table and "max.NaN.xorsign.abs.bf16" in table and "fma.rn.f32" in table
    assert "cvt.rn.f16.f64" in table and "add.rn.f32" in table  # the chapters' paths, found by lookup
    assert "not a form" not in table and "wgmma.fence.sync.aligned" not in table
    assert "cvt.ftz.rmi.u16.f32" not in table  # only the canonical spelling is a key
    assert len(table) == len(list(table)) >= len(ALL_FORMS)


def test_other_profiles_fall_back_to_the_scalar_semantics():
    """A profile whose decisions the batched paths do not know is looped through the scalar
    semantics by evaluate_batch; calling such a path directly says so."""
    other = Profile("other", canonical_nan=True)
    x = np.array([0x7FC00000, 0x3F800001, 0x00000001, 0xC3000000], dtype=np.uint32)
    assert not batch.has_fast_path("cvt.rn.relu.f16.f32", other) and batch.has_fast_path("cvt.rn.relu.f16.f32", "sm_90")
    got = evaluate_batch("cvt.rni.s8.f32", [x], other)
    assert got.bits.tolist() == [evaluate("cvt.rni.s8.f32", [int(v)], other)[0] for v in x.tolist()]
    with pytest.raises(PtxSpecError, match="other"):
        batch.FAST_PATHS["cvt.rn.relu.f16.f32"](x, profile=other)
