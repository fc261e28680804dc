"""The instruction reference's worked examples, without a Sphinx build.

Every family that has semantics shows at least one worked example checked at build time
(docs/_ext/ptxspec_reference.py): values recorded on an H100/H200 (docs/_ext/ptxspec_recorded_examples.py)
or statements worked out from the manual (docs/_ext/ptxspec_examples.py). Here a few families'
examples are selected and checked as the build does, the selection is shown to be deterministic,
and a wrong expectation -- a recorded value with a bit flipped, a statement that does not hold, a
family left without examples -- is shown to fail the build.
"""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

DOCS_EXT = Path(__file__).resolve().parent.parent / "docs" / "_ext"
sys.path.insert(0, str(DOCS_EXT))

import ptxspec_examples as stated  # noqa: E402
import ptxspec_recorded_examples as recorded  # noqa: E402
import ptxspec_reference as reference  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Picking recorded vectors
# ---------------------------------------------------------------------------------------------


def test_edge_classes_of_floats_and_integers():
    f32 = np.array([0x7FC00000, 0xFF800000, 0x80000000, 0x00000001, 0x7F7FFFFF, 0x3F800000], dtype=np.uint64)
    nan, inf, zero, subnormal, largest, negative = (list(c) for c in recorded.operand_classes(f32, "f32"))
    assert nan == [True, False, False, False, False, False]
    assert inf == [False, True, False, False, False, False]
    assert zero == [False, False, True, False, False, False]
    assert subnormal == [False, False, False, True, False, False]
    assert largest == [False, False, False, False, True, False]
    assert negative == [False, True, True, False, False, False]  # a NaN's sign is not a class
    u32 = np.array([0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 1, 33, 7], dtype=np.uint64)
    classes = [list(c) for c in recorded.operand_classes(u32, "u32")]
    assert [row.index(True) if True in row else None for row in zip(*classes)] == [0, 1, 2, 3, 4, 5, None]


def test_pick_prefers_new_and_weighty_classes_and_is_deterministic():
    masks = np.array([0b0001, 0b0011, 0b0100, 0b0011], dtype=np.uint64)
    assert recorded.pick(masks, 2) == [1, 2]  # the most classes first; then the one not shown yet
    assert recorded.pick(np.array([0b0011, 0b0100], dtype=np.uint64), 1, weighty=0b0100) == [0]  # a tie: the earliest
    assert recorded.pick(np.array([0b0001, 0b0100], dtype=np.uint64), 1, weighty=0b0100) == [1]  # a weighty class counts twice
    assert recorded.pick(masks, 1, shown=0b0011) == [2]


@pytest.mark.parametrize("family", ["shf", "bfe", "set", "tanh.approx.half", "shfl.sync"])
def test_scalar_and_warp_families_show_checked_recorded_vectors(family):
    rows = recorded.scalar_examples(family)
    assert 1 <= len(rows) <= recorded.ROWS_PER_FAMILY
    assert all(not r.problems for r in rows), [r.problems for r in rows]
    assert all("recorded on an H" in r.why for r in rows)
    assert rows == recorded.scalar_examples(family)  # the same vectors every build


def test_a_departure_from_the_manual_is_explained_by_a_profile_choice():
    rows = recorded.scalar_examples("sub.cc")
    assert all(not r.problems for r in rows)
    assert any("carry_flag_holds_not_borrow" in r.why for r in rows)


def _with_output(text: str, row: int, flip: int):
    """The scalar recording with one recorded output bit flipped."""
    recording = recorded.scalar_recording()
    form = recording.forms[text]
    outputs = [column.copy() for column in form.outputs]
    outputs[0][row] ^= flip
    return attrs.evolve(recording, forms={**recording.forms, text: attrs.evolve(form, outputs=tuple(outputs))})


def test_a_wrong_recorded_value_is_caught(monkeypatch):
    assert not recorded.scalar_row("shf.l.wrap.b32", 9).problems
    changed = _with_output("shf.l.wrap.b32", 9, 1)
    monkeypatch.setattr(recorded, "scalar_recording", lambda: changed)
    problems = recorded.scalar_row("shf.l.wrap.b32", 9).problems
    assert problems and "ptxspec (sm_90) gives" in problems[0]


def test_a_wrong_recorded_warp_is_caught(monkeypatch):
    assert not recorded.warp_row("shfl.sync.bfly.b32", 0).problems
    changed = _with_output("shfl.sync.bfly.b32", 3, 1 << 7)
    monkeypatch.setattr(recorded, "scalar_recording", lambda: changed)
    assert recorded.warp_row("shfl.sync.bfly.b32", 0).problems


def test_memory_atomic_and_address_rounds_are_replayed():
    for family in ("atom", "ld", "st", "cvta", "isspacep", "createpolicy.fractional"):
        rows = recorded.recorded_examples(family)
        assert rows and all(not r.problems for r in rows), (family, [r.problems for r in rows])


def test_a_wrong_recorded_memory_value_is_caught(monkeypatch):
    (entry,) = [e for e in recorded.memory_entries_by_family()["atom"] if e["name"] == "global-atom.inc.u32"]
    assert not recorded.memory_row(entry, 48).problems
    plan, data, addresses = recorded.memory_round()
    changed = dict(data)
    changed["global-atom.inc.u32_changed"] = data["global-atom.inc.u32_changed"].copy()
    changed["global-atom.inc.u32_changed"][48, 0] ^= 1
    monkeypatch.setattr(recorded, "memory_round", lambda: (plan, changed, addresses))
    problems = recorded.memory_row(entry, 48).problems
    assert problems and "memory after" in problems[0]


def test_a_recorded_mma_is_checked_and_a_wrong_d_is_caught():
    from ptxspec.semantics.instructions import as_form, evaluate

    (row,) = recorded.mma_examples("mma.i8")
    assert not row.problems and "32 threads x 4 D registers" in row.why
    round_, record = recorded.mma_records_by_family()["mma.i8"]
    form = as_form(round_.instruction(record.combination))
    sources = tuple(tuple(int(v) for v in x[0][:, k]) for x in (record.a, record.b, record.c) for k in range(x.shape[2]))
    wrong = record.d[0].copy()
    wrong[5, 2] ^= 1
    checked = recorded.matrix_row(form, sources, wrong, "test", "H100", "mma 1", lambda profile: evaluate(form, sources, profile))
    assert checked.problems and "thread 5" in checked.problems[0]


# ---------------------------------------------------------------------------------------------
# Statements from the manual
# ---------------------------------------------------------------------------------------------


def _state_example(family: str):
    return next(e for e in stated.STATE_EXAMPLES if e.family == family)


@pytest.mark.parametrize("family", ["discard", "mbarrier.arrive_drop", "cp.async.bulk.tensor.global_to_shared_cta", "tcgen05.mma.a_tmem", "mma.sp.f8f6f4"])
def test_stated_examples_hold(family):
    failures = reference.BuildFailure()
    page = reference.state_example_block(_state_example(family), failures)
    assert not failures, failures
    assert "Checked when this page was built" in page


def test_a_statement_that_does_not_hold_is_caught():
    example = _state_example("mbarrier.arrive")
    wrong = attrs.evolve(example, expect=stated._waits((2, 1, "wrong on purpose: one arrival of two does not complete the phase")))
    failures = reference.BuildFailure()
    reference.state_example_block(wrong, failures)
    assert len(failures) == 1 and "wrong on purpose" in failures[0]


def test_a_form_told_apart_by_its_operands_is_shown_on_its_family():
    example = next(e for e in stated.EXAMPLES if e.instruction.startswith("mov.b16 d, {"))
    failures = reference.BuildFailure()
    (row,) = reference.stated_rows([example], failures)
    assert not failures and row.family == "mov.pack.x2" and "{a.x, a.y}" in row.form


def test_a_family_with_semantics_and_no_example_fails_the_build(monkeypatch):
    from ptxspec.semantics import instructions
    from ptxspec.spec.catalogue import CATALOGUE

    instructions._load_chapters()
    semantics = {key: entry.function for key, entry in instructions.SEMANTICS.items()}
    family = CATALOGUE.family("mbarrier.inval")
    monkeypatch.setattr(reference, "STATE_EXAMPLES", [])
    monkeypatch.setattr(reference, "recorded_examples", lambda key: [])
    failures = reference.BuildFailure()
    facts = reference.study(family, failures)
    page = reference.family_section(family, facts, semantics, set(semantics.values()), [], failures)
    assert "No checked example for this family yet." in page
    assert any("mbarrier.inval: the family has semantics but no checked worked example" in f for f in failures)


def test_every_state_example_is_shown_on_a_family_its_steps_reach():
    for example in stated.STATE_EXAMPLES:
        assert example.family in {reference._family_of(step.instruction) for step in example.steps}, example.title
