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
from ptxspec.spec.catalogue import CATALOGUE, Operand, Target, parse

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
        (Target((8, 6), 100, "a"), pa.Request("sm_101a", (8, 7)), True),
        (Target((8, 0), 90, "f"), pa.Request("sm_90a", (8, 7)), True),
        (Target((8, 0), 90, "a"), pa.Request("sm_100a", (8, 7)), False),
    ],
)
def test_target_allows(need, req, allowed):
    assert pa.target_allows(need, req) is allowed


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
