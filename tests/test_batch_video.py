"""The batched paths of §9.7.18, the video instructions (semantics/batch_video.py), proved against
the readable semantics (semantics/video.py, profiles/sm_90/video.py) under "spec" and "sm_90".

* :func:`test_agrees`: a seeded sample of legal forms of every family on the vectors generator's
  inputs (tests/batch_agreement.py); the heavy :func:`test_agrees_every_legal_form` takes every
  legal form (the 4-way SIMD families: the catalogue's seeded sample of 200).
* :func:`test_every_qualifier_value`: for every slot of every family, every token (and the slot
  left out) in a seeded legal form, on edge and random words; the 4,096 selectors of a 4-way SIMD
  family are shared out among the seven 4-way families in the default run (each selector is
  tried once), all of them per family when heavy.
* Edge classes that random words rarely reach: every shift amount around the clamp and wrap
  limits (:func:`test_shift_amounts`), vmad's 128-bit and 64-bit extremes (:func:`test_vmad_extremes`).
* Independent oracles: the Python-integer readings of the manual in tests/test_video.py (bytes via
  ``int.from_bytes``, the saturation bounds written out), for the scalar, SIMD and vmad forms.
* The path is used for every legal form (:func:`test_fast_path_for_every_form`), and a profile
  whose video callables have no batched twin is left to the readable semantics
  (:func:`test_unknown_profile_callable_is_undecided`).
"""

from __future__ import annotations

import random

import attrs
import numpy as np
import pytest

import batch_agreement
import test_video
from ptxspec.conformance import coverage
from ptxspec.profiles import profile_named
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.spec.catalogue import CATALOGUE, Form
from ptxspec.spec.video import destination_type, selector

SCALAR = ("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset", "vmad")
SIMD_2 = tuple(op + "2" for op in test_video.SIMD_OPS)
SIMD_4 = tuple(op + "4" for op in test_video.SIMD_OPS)
FAMILIES = SCALAR + SIMD_2 + SIMD_4
PROFILES = ("spec", "sm_90")

#: Words at the byte, half-word and word boundaries of both signs (tests/test_video.py's edges).
EDGES = test_video.EDGES
#: A slot with more tokens than this (the 4-way selectors) is shared out among families by default.
WIDE_SLOT = 64


def words(rng: random.Random, count: int, *, shift: bool = False) -> np.ndarray:
    """``count`` source words: edge words and random ones; for a shift amount, also every amount
    around the clamp (32) and wrap (0x1f) limits."""
    out = []
    for _ in range(count):
        if shift and rng.random() < 0.5:
            out.append(rng.randrange(0, 40))
        else:
            out.append(rng.choice(EDGES) if rng.random() < 0.4 else rng.getrandbits(32))
    return np.array(out, dtype=np.uint64)


def sources_for(form: Form, rng: random.Random, count: int) -> list[np.ndarray]:
    """One array per source operand of ``form`` (b of vshl/vshr is a shift amount)."""
    shifts = form.opcode in ("vshl", "vshr")
    return [words(rng, count, shift=shifts and o.name == "b") for o in form.sources]


def assert_same(form: Form | str, profile: str, sources: list[np.ndarray]) -> None:
    """The batched results of ``form`` on ``sources`` equal the readable semantics', vector by
    vector, and come from the form's fast path."""
    form = as_form(form)
    assert batch.has_fast_path(form, profile), f"{form.text} has no fast path under {profile}"
    (result,) = batch.evaluate_batch_all(form, sources, profile)
    columns = [s.tolist() for s in sources]
    for i in range(len(sources[0])):
        vector = [c[i] for c in columns]
        (want,) = evaluate(form, vector, profile)
        assert result.result(i) == want, f"{form.text} ({profile}) on {[hex(v) for v in vector]}: batched {result.result(i)!r}, scalar {want!r}"


# --- the vectors generator's inputs ------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("family", FAMILIES)
def test_agrees(family, profile):
    for text in batch_agreement.sample_forms(family, 4, seed=0):
        batch_agreement.assert_agrees(text, profile, count=1500, seed=0)


CHUNKS = 16


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("family", FAMILIES)
def test_agrees_every_legal_form(family, chunk):
    """Every legal form on 12 edge or random words per operand: under both profiles for the
    scalar families, alternately for the SIMD ones (no profile departs from the manual there)."""
    rng = random.Random(f"video-every-form/{family}/{chunk}")
    for k, text in enumerate(batch_agreement.legal_forms(family)[chunk::CHUNKS]):
        form = as_form(text)
        sources = sources_for(form, rng, 12)
        for profile in PROFILES if family in SCALAR else PROFILES[k % 2 :][:1]:
            assert_same(form, profile, sources)


# --- every qualifier value --------------------------------------------------------------------


def form_with(family, slot_index: int, token: str, rng: random.Random) -> Form:
    """A seeded legal form of ``family`` whose slot ``slot_index`` holds ``token`` ("" = absent)."""
    choices = coverage.choices(family)
    for _ in range(1000):
        combo = [rng.choice(c) for c in choices]
        combo[slot_index] = token
        form = coverage.form_of(family, combo)
        if coverage.is_legal(form):
            return form
    raise AssertionError(f"no legal form of {family.key} with {token!r}")


def qualifier_forms(family_key: str, *, share: bool) -> list[Form]:
    """A form for every (slot, token) of the family; with ``share``, a wide slot's tokens are
    dealt round-robin to the seven 4-way families and this family keeps its share."""
    family = CATALOGUE.family(family_key)
    rng = random.Random(f"video-qualifiers/{family_key}")
    forms = []
    for index, tokens in enumerate(coverage.choices(family)):
        for k, token in enumerate(tokens):
            if share and len(tokens) > WIDE_SLOT and k % len(SIMD_4) != SIMD_4.index(family_key):
                continue
            forms.append(form_with(family, index, token, rng))
    return forms


def check_qualifiers(family_key: str, *, share: bool, count: int) -> None:
    rng = random.Random(f"video-qualifier-vectors/{family_key}")
    for k, form in enumerate(qualifier_forms(family_key, share=share)):
        assert_same(form, PROFILES[k % 2], sources_for(form, rng, count))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_qualifier_value(family):
    check_qualifiers(family, share=True, count=24)


@pytest.mark.heavy
@pytest.mark.parametrize("family", SIMD_4)
def test_every_selector_of_a_4_way_family(family):
    check_qualifiers(family, share=False, count=24)


def test_every_4_way_selector_is_dealt():
    """The default run's shares cover every asel and bsel token of the 4-way families."""
    seen = {"asel": set(), "bsel": set()}
    for family in SIMD_4:
        for form in qualifier_forms(family, share=True):
            for slot in seen:
                seen[slot].add(form.get(slot))
    for slot, tokens in seen.items():
        (wanted,) = (s.tokens for s in CATALOGUE.family("vadd4").slots if s.name == slot)
        assert set(wanted) <= tokens


# --- edge classes ------------------------------------------------------------------------------

SHIFT_THIRD = (None, "add", "min", "max", "dsel_b0", "dsel_b3", "dsel_h0", "dsel_h1")
#: Words whose shifts cross the byte, half-word, word and 64-bit limits, of both signs.
SHIFTED = (1, 0x7F, 0x80, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF)
#: Amounts around 0, the half-word, the wrap (0x1f) and the clamp (32) limits.
AMOUNTS = (0, 1, 2, 3, 15, 16, 17, *range(29, 41))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("op", ("vshl", "vshr"))
def test_shift_amounts(op, profile):
    """Every dtype x atype x .sat x mode x third operand on whole words, with the shift amounts
    around each limit against the edge words (the sm_90 min/max of a left shift compares a value
    of up to 64 bits)."""
    a = np.array([x for x in SHIFTED for _ in AMOUNTS], dtype=np.uint64)
    b = np.array(list(AMOUNTS) * len(SHIFTED), dtype=np.uint64)
    c = np.array([EDGES[(i * 7) % len(EDGES)] for i in range(len(a))], dtype=np.uint64)
    for dtype in ("u32", "s32"):
        for atype in ("u32", "s32"):
            for sat in ("", ".sat"):
                for mode in ("clamp", "wrap"):
                    for third in SHIFT_THIRD:
                        text = f"{op}.{dtype}.{atype}.u32{sat}.{mode}" + (f".{third}" if third else "")
                        assert_same(text, profile, [a, b] if third is None else [a, b, c])


VMAD_WORDS = (0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF)
VMAD_C = (0, 0x80000000, 0xFFFFFFFF)


@pytest.mark.parametrize("profile", PROFILES)
def test_vmad_extremes(profile):
    """Every vmad form on whole words (the 128-bit sums of the manual, beyond +-2^64 for
    -(u32 * u32) + c; the 64-bit ones of sm_90), crossing the extreme words."""
    grid = np.array([(a, b, c) for a in VMAD_WORDS for b in VMAD_WORDS for c in VMAD_C], dtype=np.uint64).T
    for dtype, atype, btype, po, sat, scale, negs in test_video.vmad_forms():
        assert_same(test_video.vmad_text(dtype, atype, btype, po, sat, scale, negs, None, None), profile, list(grid))


# --- independent oracles -----------------------------------------------------------------------


def scalar_oracle(form: Form, a: int, b: int, c: int) -> int:
    third = form.get("secop") or (f"d.{selector(form, 'dsel')}" if form.get("dsel") else None)
    return test_video.oracle(
        form.opcode,
        destination_type(form),
        form["atype"],
        form["btype"],
        "sat" in form,
        third,
        selector(form, "asel"),
        selector(form, "bsel"),
        a,
        b,
        c,
        mode=form.get("mode"),
        cmp=form.get("cmp"),
    )


def simd_oracle(form: Form, a: int, b: int, c: int) -> int:
    lanes = int(form.opcode[-1])
    return test_video.simd_oracle(
        form.opcode[:-1],
        lanes,
        destination_type(form),
        form["atype"],
        form["btype"],
        "sat" in form,
        form.get("secop") == "add",
        selector(form, "mask"),
        selector(form, "asel"),
        selector(form, "bsel"),
        a,
        b,
        c,
        form.get("cmp"),
    )


def vmad_oracle(form: Form, a: int, b: int, c: int, *, sm90: bool) -> int:
    return test_video.vmad_oracle(
        form["atype"],
        form["btype"],
        selector(form, "asel"),
        selector(form, "bsel"),
        "neg_a" in form,
        "neg_b" in form,
        "neg_c" in form,
        "po" in form,
        form.get("scale"),
        "sat" in form,
        a,
        b,
        c,
        sm90=sm90,
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_against_oracle(family):
    """The batched bits against tests/test_video.py's oracles (the manual's reading; for vmad the
    sm_90 reading too): 12 seeded forms x 96 vectors."""
    rng = random.Random(f"video-oracle/{family}")
    for text in batch_agreement.sample_forms(family, 12, seed=1):
        form = as_form(text)
        sources = sources_for(form, rng, 96)
        cases = [("spec", False), ("sm_90", True)] if family == "vmad" else [("spec", False)]
        for profile, sm90 in cases:
            (result,) = batch.evaluate_batch_all(form, sources, profile)
            for i, vector in enumerate(zip(*(s.tolist() for s in sources))):
                a, b, c = (*vector, 0)[:3]
                if family == "vmad":
                    want = vmad_oracle(form, a, b, c, sm90=sm90)
                elif family in SCALAR:
                    want = scalar_oracle(form, a, b, c)
                else:
                    want = simd_oracle(form, a, b, c)
                assert int(result.bits[i]) == want, f"{form.text} ({profile}) on {[hex(v) for v in vector]}"


# --- the path is used ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_for_every_form(family):
    """A seeded sample of 300 legal forms per family (all of them: the heavy test below)."""
    for text in batch_agreement.sample_forms(family, 300, seed=2):
        for profile in PROFILES:
            assert batch.has_fast_path(text, profile), text


@pytest.mark.heavy
@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_for_every_legal_form(family):
    for text in batch_agreement.legal_forms(family):
        for profile in PROFILES:
            assert batch.has_fast_path(text, profile), text


@pytest.mark.parametrize("text", ["vadd.s32.u32.s32.sat.max.asel_b1", "vmad.u32.u32.u32.sat.shr7.neg_c"])
def test_unknown_profile_callable_is_undecided(text):
    """A profile whose scalar_video/vmad departure has no batched twin gets the readable
    semantics' results (every vector undecided), never another chip's rules."""
    sm_90 = profile_named("sm_90")
    other = attrs.evolve(
        sm_90,
        name="other",
        scalar_video=lambda form, tmp, c: sm_90.scalar_video(form, tmp, c) ^ 1,
        vmad=lambda form, a, b, c: sm_90.vmad(form, a, b, c) ^ 1,
        scalar_video_batch=None,
        vmad_batch=None,
    )
    form = as_form(text)
    sources = sources_for(form, random.Random(text), 64)
    (result,) = batch.evaluate_batch_all(form, sources, other)
    columns = [s.tolist() for s in sources]
    for i in range(64):
        assert result.result(i) == evaluate(form, [c[i] for c in columns], other)[0]
