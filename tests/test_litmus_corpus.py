"""Every test of the shared Dat3M corpus gives its expected verdict, with both engines agreeing.

The corpus (../shared/litmus/dat3m, or the folder named by PTXSPEC_LITMUS_DIR) is read in place,
never copied into the repository; these tests skip when it is absent. ``expected.csv`` gives 1
where herd would print ``Ok`` under the PTX model. Where the model's authors conclude that the
manual contradicts an expected verdict, the test is listed in :data:`DISAGREEMENTS` with the
manual's sentence and the verdict the manual gives, and that verdict is asserted instead (the
test stays visible and still fails if the model changes its mind).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from ptxspec.conformance.litmus_cli import load
from ptxspec.memory_model.check import check

CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR") or Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m")

DISAGREEMENTS: dict[str, tuple[int, str]] = {
    # "test path": (the verdict the manual gives, "§section: the manual's sentence, in English"),
    "Manual/LB+RMW-a.litmus": (
        0,
        "§8.9.5: 'An operation X precedes an operation Y in causality order if ... for some operation "
        "Z, X precedes Z in observation order, and Z precedes Y in proxy-preserved base causality "
        "order.' §8.10.6: 'If a read R precedes an overlapping write W in causality order, then R "
        "cannot read from W.' For r1 == 1 the atom.relaxed.gpu.add A of P1 reads x from the "
        "st.weak x, 1 of P0 (W); for r2 == 2 the ld.relaxed.gpu x of P2 reads from A (morally "
        "strong, same CTA: observation order, §8.9.2 item 1); that load precedes W in base "
        "causality order (po to st.release.gpu y, which synchronizes with the ld.acquire.gpu y "
        "of P0 reading it, po to W; same address, generic proxy, same CTA). So A, a read "
        "operation (§8.4), precedes W in causality order and reads from W: forbidden. "
        "expected.csv (Dat3M) says 1.",
    ),
}

HEAVY: frozenset[str] = frozenset(
    # Tests whose check takes more than a few seconds with both engines run under the heavy marker.
    # None does now: the slowest, Manual/Ticketlock-*.litmus (loops unrolled into many traces),
    # take 4-7 s with both engines.
)


def corpus_rows() -> list[tuple[str, int]]:
    table = CORPUS / "expected.csv"
    if not table.is_file():
        return []
    with table.open(newline="") as stream:
        return [(row["test"], int(row["expected"])) for row in csv.DictReader(stream)]


def _params():
    rows = corpus_rows()
    if not rows:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"litmus corpus not found at {CORPUS}"))]
    return [pytest.param(test, expected, id=test, marks=[pytest.mark.heavy] if test in HEAVY else []) for test, expected in rows]


@pytest.mark.parametrize("test,expected", _params())
def test_corpus_verdict(test, expected):
    verdict = check(load(CORPUS / test), engine="both", full_cross_check=True)
    assert [result.engine for result in verdict.results if result.ok is not None] == ["z3", "explicit"], test
    got = None if verdict.ok is None else int(verdict.ok)
    want = DISAGREEMENTS[test][0] if test in DISAGREEMENTS else expected
    assert got == want, f"{test}: expected {want}, got {got} ({len(verdict.states or ())} final states)"


def test_disagreements_are_documented():
    rows = dict(corpus_rows())
    for test, (verdict, sentence) in DISAGREEMENTS.items():
        assert verdict in (0, 1) and sentence.startswith("§"), test
        if rows:
            assert test in rows and rows[test] != verdict, f"{test} is not a disagreement with expected.csv"
