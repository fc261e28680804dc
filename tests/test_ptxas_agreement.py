"""The catalogue's legality verdicts against ptxas (CUDA 13.0).

Every disagreement must be one of :data:`ptxspec.conformance.ptxas_agreement.KNOWN`, the documented
allow-list; each entry's example is replayed so that a stale entry fails too. The tests that run
ptxas skip when it is not installed (the ``ptxas`` fixture).
"""

from __future__ import annotations

import json
import random

import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec.catalogue import CATALOGUE, Operand, Target, Targets, on, parse

SAMPLE_TARGETS = ("sm_75", "sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a")


def _unexplained(outcomes):
    return [r for r in (pa.record(o) for o in outcomes if not o.agree) if pa.explain(r) is None]


# ---------------------------------------------------------------------------------------------
# Without ptxas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("need", "req", "allowed"),
    [
        (Target((8, 1), 89), pa.Request("sm_89", (8, 1)), True),
        (Target((8, 1), 89), pa.Request("sm_89", (7, 8)), False),  # version too old
        (Target((8, 1), 89), pa.Request("sm_86", (8, 7)), False),  # architecture too old
        (Target((8, 1), 89), pa.Request("sm_90a", (8, 7)), True),  # "a" targets have everything sm_90 has
        (Target((8, 6), 100, "a"), pa.Request("sm_100a", (8, 6)), True),
        (Target((8, 6), 100, "a"), pa.Request("sm_90a", (8, 7)), False),
        (Target((8, 6), 100, "a"), pa.Request("sm_120a", (8, 7)), False),  # another family
        (Target((8, 6), 100, "a"), pa.Request("sm_101a", (8, 7)), False),  # "a": that architecture only
        (Target((8, 0), 90, "f"), pa.Request("sm_90a", (8, 7)), True),
        (Target((8, 0), 90, "a"), pa.Request("sm_100a", (8, 7)), False),
        # Alternatives (§9.7.9.21): PTX ISA 8.1 on sm_89+, or PTX ISA 7.8 on sm_90+.
        (Target((8, 1), 89) | Target((7, 8), 90), pa.Request("sm_90", (7, 8)), True),
        (Target((8, 1), 89) | Target((7, 8), 90), pa.Request("sm_90a", (8, 0)), True),
        (Target((8, 1), 89) | Target((7, 8), 90), pa.Request("sm_89", (7, 8)), False),
        (Target((8, 1), 89) | Target((7, 8), 90), pa.Request("sm_89", (8, 1)), True),
        (Target((8, 1), 89) | Target((7, 8), 90), pa.Request("sm_86", (8, 7)), False),
        # "supported on the following architectures: sm_100a, sm_101a, sm_120a"
        (on((8, 6), "sm_100a", "sm_101a", "sm_120a"), pa.Request("sm_120a", (8, 7)), True),
        (on((8, 6), "sm_100a", "sm_101a", "sm_120a"), pa.Request("sm_101a", (8, 6)), True),
        (on((8, 6), "sm_100a", "sm_101a", "sm_120a"), pa.Request("sm_120a", (8, 6)), False),  # sm_120a came with 8.7
        (on((8, 6), "sm_100a", "sm_101a", "sm_120a"), pa.Request("sm_120", (8, 7)), False),
        (on((8, 6), "sm_100a", "sm_101a", "sm_120a"), pa.Request("sm_90a", (8, 7)), False),
    ],
)
def test_target_allows(need, req, allowed):
    assert pa.target_allows(need, req) is allowed


def test_targets_keep_the_single_target_api():
    """A form with alternatives still answers ``.target`` (its first alternative) and ``str``;
    ``.targets`` and ``.admits`` see every alternative."""
    form = parse("cvt.rn.satfinite.e4m3x2.f32")
    assert isinstance(form.targets, Targets) and len(form.targets.alternatives) == 2
    assert form.target == Target((8, 1), 89) and (form.targets.ptx, form.targets.sm) == ((8, 1), 89)
    assert form.admits((7, 8), "sm_90") and not form.admits((7, 8), "sm_89")
    assert str(form.targets) == "PTX ISA 8.1, sm_89 or PTX ISA 7.8, sm_90"
    single = parse("add.rn.f32")
    assert single.targets.alternatives == (single.target,)
    blackwell = parse("cvt.rn.satfinite.e2m1x2.f32")
    assert [t.arch for t in blackwell.targets.alternatives] == ["sm_100a", "sm_101a", "sm_120a"]
    assert blackwell.admits((8, 7), "sm_120a") and not blackwell.admits((8, 7), "sm_90a")


def test_operand_text_follows_ptx_syntax():
    ops = (Operand("d", "b32", True), Operand("p", "pred", True), Operand("a", "b32"), Operand("immLut", "b8"), Operand("CC.CF", "pred"))
    assert pa.operand_text("x", ops) == "%d|%p, %a, 0"
    vec = (Operand("d", "b128", True), Operand("a.x", "b64"), Operand("a.y", "b64"))
    assert pa.operand_text("x", vec) == "%d, {%a_x, %a_y}"
    quad = (Operand("d", "b32", True), *(Operand(n, "f32") for n in "abef"), Operand("rbits", "b32"))
    assert pa.operand_text("cvt.rs.x4", quad) == "%d, {%a, %b, %e, %f}, %rbits"
    line = pa.instruction_line(pa.Case("vadd", "legal", "vadd.u32.u32.u32.asel_b1", (Operand("d", "u32", True), Operand("a", "u32"), Operand("b", "u32"))))
    assert "vadd.u32.u32.u32 %d, %a.b1, %b;" in line


def test_generation_is_seeded_and_covers_every_category():
    families = CATALOGUE.families()[:12] + CATALOGUE.families("cvt")
    a = pa.generate(20, seed=3, families=families)
    b = pa.generate(20, seed=3, families=families)
    assert a == b
    assert {c.category for c in a} >= {"legal", "rule", "wrong_type", "missing", "duplicate", "foreign"}
    # A "legal" case is one the catalogue parses, as that family's form.
    for case in a:
        if case.category == "legal":
            assert parse(case.text).family.key == case.family


def test_persisted_summary_is_consistent():
    data = json.loads(pa.DATA.read_text())
    assert data["total"] == data["agree"] + data["disagree"] == sum(sum(v.values()) for v in data["by_family"].values())
    assert data["disagree"] == len(data["disagreements"])
    assert "unexplained" not in data["disagree_known"], [d for d in data["disagreements"] if d["known"] is None][:5]


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("known", pa.KNOWN, ids=lambda k: k.name)
def test_known_disagreement_is_real(ptxas, known):
    """Each allow-list entry still describes a real disagreement that it covers."""
    outcome = pa.example_outcome(known, ptxas)
    if known.kind == "catalogue" and outcome.agree:
        pytest.skip(f"{known.name}: the reported catalogue error is fixed; drop the entry")
    assert not outcome.agree, f"{known.name}: ptxas and the catalogue now agree on {known.example[0]}; drop the entry"
    assert known.covers(pa.record(outcome))


def test_unsupported_targets_are_skipped(ptxas):
    assert pa.supported(ptxas, "sm_90") is None
    assert pa.supported(ptxas, "sm_100a") is None


def test_seeded_sample_agrees(ptxas):
    """60 forms drawn (seeded) from every family's cases, at every supported sample target."""
    cases = pa.generate(12, seed=0)
    sample = random.Random(0).sample(cases, 60)
    outcomes, skipped = pa.compare(sample, SAMPLE_TARGETS, ptxas)
    assert not skipped
    assert len(outcomes) >= 60
    assert _unexplained(outcomes) == []


def test_detects_a_wrong_verdict(ptxas):
    """The harness can fail: a form ptxas rejects, presented as legal, is a disagreement."""
    bad = pa.Case("add.f", "legal", "add.rn.f32", (Operand("d", "f64", True), Operand("a", "f32"), Operand("b", "f32")))
    outcomes, _ = pa.compare([bad], ("sm_90",), ptxas)
    assert len(outcomes) == 2  # sm_90 at PTX 7.8 and at 8.7
    assert all(o.ours and not o.theirs and "add" in o.message for o in outcomes)
    assert len(_unexplained(outcomes)) == 2


_FAMILIES = CATALOGUE.families()
_CHUNKS = 4


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_full_generated_set_agrees(ptxas, chunk):
    families = _FAMILIES[chunk::_CHUNKS]
    outcomes, _ = pa.compare(pa.generate(200, seed=0, families=families), pa.DEFAULT_TARGETS, ptxas)
    assert _unexplained(outcomes) == []


# ---------------------------------------------------------------------------------------------
# Vector mov (§9.7.9.4): the generator writes the operand templates
# ---------------------------------------------------------------------------------------------

_MOV_FAMILIES = CATALOGUE.families("mov")


def test_generator_emits_vector_mov_forms_and_shapes():
    cases = pa.generate(50, seed=0, families=_MOV_FAMILIES)
    legal = {c.family for c in cases if c.category == "legal"}
    assert legal == {"mov", "mov.pack.x2", "mov.pack.x4", "mov.unpack.x2", "mov.unpack.x4"}
    for case in cases:
        if case.category == "legal":
            assert parse(case.text).family.key == case.family
    lines = {c.text: pa.instruction_line(c) for c in cases}
    assert "mov.b64 %d, {%a_x, %a_y};" in lines["mov.b64 d, {a.x, a.y}"]
    assert "mov.b32 {%d_x, %d_y, %d_z, %d_w}, %a;" in lines["mov.b32 {d.x, d.y, d.z, d.w}, a"]
    assert "mov.b64 {%a, _}, %d;" in lines["mov.b64 {a, _}, d"]
    # Elements declared with the other types of their size (§5.4.2).
    lane = [c for c in cases if c.category == "lane_type"]
    assert lane and all(any(o.type[0] in "usf" for o in c.operands if "." in o.name) for c in lane)
    # Shapes: only the two with sinks in a destination vector are legal.
    shapes = {c.text: pa.catalogue_verdict(c.text, pa.Request("sm_90", (8, 7)))[0] for c in cases if c.category == "shape"}
    assert {t for t, ok in shapes.items() if ok} == {"mov.b64 {a, _}, d", "mov.b128 {_, a, _, b}, d"}
    assert len(shapes) == len(pa.MOV_SHAPES)


def test_vector_mov_b128_needs_ptx_8_3_and_sm_70():
    """ "Support for .b128 type introduced in PTX ISA version 8.3"; "requires sm_70 or higher"."""
    assert pa.catalogue_verdict("mov.b128 d, {a, b}", pa.Request("sm_75", (8, 3)))[0]
    assert not pa.catalogue_verdict("mov.b128 d, {a, b}", pa.Request("sm_75", (8, 2)))[0]
    assert pa.catalogue_verdict("mov.b64 d, {a, b}", pa.Request("sm_50", (4, 0)))[0]


def test_vector_mov_agrees(ptxas):
    outcomes, _ = pa.compare(pa.generate(50, seed=0, families=_MOV_FAMILIES), ("sm_75", "sm_90"), ptxas)
    assert len(outcomes) > 100
    assert _unexplained(outcomes) == []
