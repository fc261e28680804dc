"""The explicit engine on the shared Dat3M corpus: every test's verdict against ``expected.csv``.

The corpus is read from ``../shared/litmus/dat3m`` (``PTXSPEC_LITMUS_DIR`` overrides it) and the
tests skip where it is absent. A test whose expected verdict we believe contradicts the manual is
listed in ``DISAGREEMENTS`` with the sentence that decides; for it the test asserts the manual's
verdict, so that a change either way is noticed.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from ptxspec.memory_model import explicit, ptx

CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m"))

DISAGREEMENTS = {
    "Manual/LB+RMW-a.litmus": (
        "§8.10.6 item 1: 'If a read R precedes an overlapping write W in causality order, then R "
        "cannot read from W.' The atom of P1 is one operation (§8.4 'atomic operation'): it precedes "
        "P2's ld.relaxed in observation order (§8.9.2), which precedes P0's st.weak x in base "
        "causality order (release/acquire on y, §8.9.4), so the atom precedes that store in "
        "causality order (§8.9.5 item 2) and cannot read from it. Dat3M splits the atom into a read "
        "event and a write event and relates only the write half, hence its 1."
    ),
}
"""Tests whose expected verdict contradicts our reading of the manual (test -> the reason)."""

HEAVY = {
    "Manual/Ticketlock-acq2rlx-1.litmus",
    "Manual/Ticketlock-rel2rlx.litmus",
    "Manual/Ticketlock-same-gpu.litmus",
}
"""Corpus tests that take the explicit engine more than a second (loops unrolled twice)."""


def _rows() -> list[tuple[str, bool]]:
    table = CORPUS / "expected.csv"
    if not table.is_file():
        return []
    with table.open() as handle:
        return [(row["test"], row["expected"].strip() == "1") for row in csv.DictReader(handle)]


ROWS = _rows()


def _params():
    if not ROWS:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"no litmus corpus at {CORPUS}"))]
    return [pytest.param(test, expected, id=test, marks=[pytest.mark.heavy] if test in HEAVY else []) for test, expected in ROWS]


def _load(test: str):
    lowering = pytest.importorskip("ptxspec.memory_model.lowering")
    return lowering.load(CORPUS / test)


@pytest.mark.parametrize(("test", "expected"), _params())
def test_corpus_verdict(test, expected):
    program = _load(test)
    result = explicit.run(program, ptx.PTX_8_7, timeout_s=120)
    assert result.ok is not None, f"{test}: undecided after {result.time_s:.1f} s"
    if test in DISAGREEMENTS:
        assert result.ok is (not expected), DISAGREEMENTS[test]
    else:
        assert result.ok is expected
    # herd's Ok from the states, and the state count split.
    assert result.positive + result.negative == len(result.states)


def test_disagreements_are_in_the_corpus():
    if not ROWS:
        pytest.skip(f"no litmus corpus at {CORPUS}")
    names = {test for test, _ in ROWS}
    assert set(DISAGREEMENTS) <= names and HEAVY <= names


def _proxy_free(program) -> bool:
    if any(a.physical != a.name or a.declared_proxy != "generic" for a in program.addresses.values()):
        return False
    return all(e.proxy in (None, "generic") and e.proxy_fence is None for thread in program.threads for trace in thread.traces for e in trace.events)


@pytest.mark.heavy
@pytest.mark.parametrize(("test", "expected"), _params())
def test_proxy_free_tests_agree_under_ptx_6_0(test, expected):
    # Without proxies and aliases the same-proxy condition always holds and proxy-preserved base
    # causality order is base causality order on memory operations: both models give the same states.
    program = _load(test)
    if not _proxy_free(program) or test in HEAVY:
        pytest.skip("uses proxies or aliases (or is slow)")
    new = explicit.run(program, ptx.PTX_8_7, timeout_s=120)
    old = explicit.run(program, ptx.PTX_6_0, timeout_s=120)
    assert new.states == old.states


@pytest.mark.parametrize(
    "test",
    [
        "Manual/SB+sc-sys.litmus",
        "Manual/MP-sys-fence.litmus",
        "Manual/CoRR-acquire-weak.litmus",
    ],
)
def test_why_for_forbidden_outcomes(test):
    if not ROWS:
        pytest.skip(f"no litmus corpus at {CORPUS}")
    program = _load(test)
    # Each of these asks "~exists C" of an outcome C the manual forbids.
    assert program.condition.quantifier == "~exists"
    result = explicit.run(program, ptx.PTX_8_7, want_why=True, want_witness=True)
    assert result.ok is True and result.witness is None
    assert result.why, "a forbidden outcome names the axioms that forbid it"
    assert set(result.why) <= {a.name for a in ptx.PTX_8_7.axioms}
    assert "Causality" in result.why or "SC-per-location" in result.why


@pytest.mark.parametrize(
    "test",
    [
        "Nvidia/proxy/Proxy-MP-Alias+diffProxy-aliasFence+proxyFence-correctOrder.litmus",
        "Manual/SB+sc-cta-outScope.litmus",
        "Memalloy/IRIW_gl_cta.litmus",
        "Manual/MICRO24-Fig4a.litmus",
    ],
)
def test_engine_fast_path_static_relations_agree_with_base(test):
    # The engine groups events by key instead of asking base.static_pair for every pair.
    if not ROWS:
        pytest.skip(f"no litmus corpus at {CORPUS}")
    from ptxspec.memory_model import base

    program = _load(test)
    search = explicit._Search(program, ptx.PTX_8_7, None)
    for count, (frame, _) in enumerate(search.frames()):
        if count >= 20:
            break
        for name in base.STATIC_RELATIONS:
            expect = [sum(1 << j for j, b in enumerate(frame.events) if base.static_pair(name, a, b, program)) for a in frame.events]
            assert frame.base_env[name] == expect, (test, name)


# ---- the lazy environment ------------------------------------------------------------------------


def test_env_computes_a_step_once_and_only_when_read():
    calls = []

    def step(name, value):
        def fn(env):
            calls.append(name)
            return value + (env["base"] if name == "late" else 0)

        return fn

    frame = explicit._Env({"base": (0, step("base", 1))}, {"n": 3})
    env0 = explicit._Env({"early": (0, step("early", 10))}, {}, parent=frame)
    env1 = explicit._Env({"late": (1, step("late", 100)), "late~": (1, step("late~", 1000))}, {}, parent=env0, total=False)
    assert calls == []
    assert env1["late"] == 101 and calls == ["late", "base"]
    assert env1["late"] == 101 and env1["early"] == 10 and env1["early"] == 10
    assert calls == ["late", "base", "early"]
    # Stage-0 values are kept where they belong: a second candidate of the frame reuses them.
    other = explicit._Env({"late": (1, step("late", 100))}, {}, parent=env0)
    assert other["early"] == 10 and calls.count("early") == 1
    # A partial candidate computes an upper bound apart; a total one reads the definition itself.
    assert env1["late~"] == 1000 and calls[-1] == "late~"
    total = explicit._Env({"late": (1, step("late", 100)), "late~": (1, step("late~", 1000))}, {}, parent=env0)
    assert total["late~"] == 101 and "late~" not in calls[calls.index("late~") + 1 :]
    assert total.defines("base") and not total.defines("missing")
    with pytest.raises(KeyError):
        total["missing"]


def test_cheap_axioms_are_checked_first():
    # No-Thin-Air reads rf and the dependencies alone: it comes before every axiom that needs
    # causality order, so a thin-air candidate is ruled out without computing it.
    checks = explicit._compiled(ptx.PTX_8_7).checks
    assert checks[1][0][0] == "No-Thin-Air"
    assert sorted(name for stage in checks for name, _ in stage) == sorted(a.name for a in ptx.PTX_8_7.axioms)
