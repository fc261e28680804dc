"""The checker against an independent oracle: every sequentially consistent final state is a model state.

``sc_oracle.py`` runs a litmus test under sequential consistency (all interleavings, loops bounded
as :func:`~ptxspec.memory_model.lowering.lower` bounds them). An SC execution is PTX-consistent
(every relation the axioms of §8.10 constrain lies inside the interleaving's total order), so each
final state the oracle reaches with ``unroll`` backward jumps per thread must be among the states
of ``check(lower(test, unroll_bound=unroll))``; a missing one is an unsound "No" (issue 14 item 1).

Checked on generated tests with spin loops, spin locks, CAS loops and branches (Hypothesis; the
``ci`` profile runs a modest number of examples, ``HYPOTHESIS_PROFILE=dev`` more), on the shared
Dat3M corpus (read in place; skipped when absent) and on the issue's two examples. An engine that
does not decide in time (``Unknown``) is skipped, never counted as a pass.

The issue states the property for tests whose accesses are same-scope morally strong; the argument
above needs no strength, so it is asserted on every test the oracle models (weak accesses, proxies
and barriers included; the heavy property draws weak accesses too). ``test_corpus_coverage``
prints how many corpus tests are morally strong throughout (``pytest -s``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ptxspec.conformance.strategies import looping_litmus_tests
from ptxspec.memory_model.check import check
from ptxspec.memory_model.litmus import parse, parse_file
from ptxspec.memory_model.lowering import lower
from ptxspec.memory_model.program import LocationTerm, RegisterTerm
from ptxspec.spec.errors import PtxSpecError

from sc_oracle import (
    MASK,
    TooBig,
    Unsupported,
    arith,
    format_state,
    missing,
    morally_strong_same_scope,
    rmw,
    sc_states,
)

CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR") or Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m")
ENGINES = ("z3", "explicit")
TIMEOUT_S = 20.0


EXPLICIT_LIMIT = 1_000_000
"""Above this many candidate executions (estimated by :func:`explicit_cost`) the explicit engine is
not asked: it may overrun its timeout on such programs (issue 14 item 2); Z3 answers instead."""


def explicit_cost(program) -> int:
    """A rough count of the explicit engine's candidates: traces per thread times, per location,
    the orders of the most writes the threads' traces make to it."""
    total = 1
    writes: dict[str, int] = {}
    for thread in program.threads:
        total *= max(1, len(thread.traces))
        most: dict[str, int] = {}
        for trace in thread.traces:
            counts: dict[str, int] = {}
            for ev in trace.events:
                if ev.writes and ev.address is not None:
                    counts[ev.address.physical] = counts.get(ev.address.physical, 0) + 1
            for location, n in counts.items():
                most[location] = max(most.get(location, 0), n)
        for location, n in most.items():
            writes[location] = writes.get(location, 0) + n
    for n in writes.values():
        total *= math.factorial(n)
    return total


def model_states(test, unroll: int, engine: str, timeout_s: float = TIMEOUT_S):
    """The model's final states (None when the engine did not decide in time)."""
    program = lower(test, unroll_bound=unroll)
    if engine == "explicit" and explicit_cost(program) > EXPLICIT_LIMIT:
        engine = "z3"
    verdict = check(program, engine=engine, timeout_s=timeout_s)
    return None if verdict.ok is None else verdict.states


def assert_sc_subset(test, unroll: int, engine: str, timeout_s: float = TIMEOUT_S) -> str:
    """Assert the property on one test; returns "checked", or why it was skipped."""
    try:
        sc = sc_states(test, unroll)
    except (Unsupported, TooBig) as exc:
        return f"oracle: {exc}"
    try:
        states = model_states(test, unroll, engine, timeout_s)
    except PtxSpecError as exc:
        return f"lowering: {str(exc).splitlines()[0][:80]}"
    if states is None:
        return "unknown"
    failure = subset_failure(sc.states, states)
    assert failure is None, f"{test.name} ({test.source}), unroll {unroll}, engine {engine}: {failure}"
    return "checked"


def subset_failure(sc, states) -> str | None:
    """None when every SC state is among ``states``; else a message naming the missing ones."""
    lost = missing(sc, states)
    if not lost:
        return None
    return (
        "the model misses SC state(s)\n"
        + "\n".join("  " + format_state(state) for state in lost)
        + "\nmodel states:\n"
        + "\n".join("  " + format_state(state) for state in states)
    )


# ---- the oracle on its own ---------------------------------------------------------------------------

LOOPS = Path(__file__).resolve().parent / "litmus" / "loops"
SPIN = (LOOPS / "spin.litmus").read_text()

EXCH_LOCK = """PTX exch-spin-lock
{ x=0; y=0; }
P0@cta 0,gpu 0                   | P1@cta 1,gpu 0 ;
L0:                              | L1: ;
atom.acquire.gpu.exch r0, x, 1   | atom.acquire.gpu.exch r0, x, 1 ;
bne r0, 0, L0                    | bne r0, 0, L1 ;
ld.relaxed.gpu r1, y             | ld.relaxed.gpu r1, y ;
add r2, r1, 1                    | add r2, r1, 1 ;
st.relaxed.gpu y, r2             | st.relaxed.gpu y, r2 ;
st.release.gpu x, 0              | st.release.gpu x, 0 ;
exists (y == 2)"""

EXCH_LOCK_GOTO = (LOOPS / "exch-spin.litmus").read_text()
"""The issue's second example: the thread spins until its exch returns a value it wrote itself."""


def _state(**values):
    out = {}
    for key, value in values.items():
        if "_" in key:
            thread, register = key.split("_")
            out[RegisterTerm(int(thread[1:]), register)] = value & MASK
        else:
            out[LocationTerm(key)] = value & MASK
    return out


def _sc(text: str, unroll: int = 2) -> list[dict]:
    return sorted((dict(s) for s in sc_states(parse(text), unroll).states), key=lambda d: sorted(d.values()))


def test_oracle_spin_loop():
    # P0 stores 1 before spinning: the first load sees it, no backward jump is needed.
    for unroll in (0, 1, 2):
        assert _sc(SPIN, unroll) == [_state(P0_r1=1)]


def test_oracle_spin_on_partner_needs_the_bound():
    text = """PTX spin-partner
{ x=0; }
P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
L:             | st.relaxed.gpu x, 1 ;
ld.relaxed.gpu r1, x | ;
beq r1, 0, L | ;
exists (P0:r1 == 1)"""
    result = sc_states(parse(text), 0)
    assert [dict(s) for s in result.states] == [_state(P0_r1=1)]
    assert result.cut  # P0 read 0 first in some interleavings: more than 0 backward jumps
    result = sc_states(parse(text), 3)
    assert [dict(s) for s in result.states] == [_state(P0_r1=1)]


def test_oracle_store_buffering_is_sc():
    text = """PTX SB
{ x=0; y=0; }
P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
st.weak x, 1   | st.weak y, 1 ;
ld.weak r0, y  | ld.weak r1, x ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)"""
    got = {(d[RegisterTerm(0, "r0")], d[RegisterTerm(1, "r1")]) for d in _sc(text)}
    assert got == {(0, 1), (1, 0), (1, 1)}  # (0, 0) is not SC


def test_oracle_lock_is_mutually_exclusive():
    assert _sc(EXCH_LOCK, 2) == [_state(y=2)]
    # With no backward jump allowed, only the interleavings where each thread gets the lock at
    # its first try complete: still y == 2.
    assert _sc(EXCH_LOCK, 0) == [_state(y=2)]


def test_oracle_rmw_semantics():
    # §9.7.13.5: inc(r, s) = (r >= s) ? 0 : r+1; dec(r, s) = (r==0 || r > s) ? s : r-1.
    assert rmw("inc", 3, (3,), 32, False) == 0 and rmw("inc", 2, (3,), 32, False) == 3
    assert rmw("dec", 0, (5,), 32, False) == 5 and rmw("dec", 7, (5,), 32, False) == 5
    assert rmw("dec", 4, (5,), 32, False) == 3
    assert rmw("cas", 1, (1, 9), 64, False) == 9 and rmw("cas", 2, (1, 9), 64, False) == 2
    assert rmw("exch", 1, (7,), 64, False) == 7
    assert rmw("sub", 0, (1,), 32, False) == 0xFFFFFFFF
    assert rmw("add", MASK, (1,), 64, False) == 0
    assert rmw("min", 0xFFFFFFFF, (1,), 32, True) == 0xFFFFFFFF  # -1 < 1 as .s32
    assert rmw("min", 0xFFFFFFFF, (1,), 32, False) == 1  # as .u32
    assert rmw("max", 0xFFFFFFFF, (1,), 32, True) == 1
    assert rmw("and", 6, (3,), 64, False) == 2 and rmw("or", 6, (3,), 64, False) == 7
    assert rmw("xor", 6, (3,), 64, False) == 5
    assert arith("div", (-7) & MASK, 2) == (-3) & MASK and arith("div", 1, 0) == MASK


def test_oracle_typed_atomics_and_branches():
    text = """PTX typed
{ x=0; }
P0@cta 0,gpu 0 ;
atom.relaxed.gpu.sub.u32 r0, x, 1 ;
ld.relaxed.gpu r1, x ;
atom.relaxed.gpu.max.s32 r2, x, 5 ;
ld.relaxed.gpu r3, x ;
blt r1, 0, N ;
mov r4, 1 ;
N: ;
locations [P0:r3; P0:r4;]
exists (P0:r1 == 0)"""
    (state,) = _sc(text)
    assert state[RegisterTerm(0, "r1")] == 0xFFFFFFFF  # zero-extended: not negative as 64 bits
    assert state[RegisterTerm(0, "r3")] == 5  # max(-1, 5) as .s32
    assert state[RegisterTerm(0, "r4")] == 1


def test_oracle_barriers():
    inscope = """PTX bar
{ x=0; }
P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
st.weak x, 1   | bar.cta.sync 1 ;
bar.cta.sync 1 | ld.weak r0, x ;
exists (P1:r0 == 0)"""
    assert _sc(inscope) == [_state(P1_r0=1)]
    # Different CTAs: each barrier waits for its own CTA (one thread each).
    assert {d[RegisterTerm(1, "r0")] for d in _sc(inscope.replace("P1@cta 0", "P1@cta 1"))} == {0, 1}
    # A quorum of 3 that two threads never reach: no interleaving completes.
    hang = inscope.replace("bar.cta.sync 1 ", "bar.cta.sync 0, 1, 3").replace("bar.cta.sync 1", "bar.cta.sync 0, 1, 3")
    result = sc_states(parse(hang))
    assert not result.states and result.deadlocks
    # Cluster barrier (§9.7.13.3): P1's wait completes only after P0's arrive, so after its store.
    cluster = """PTX cluster-bar
{ x=0; }
P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
st.weak x, 1             | barrier.cluster.arrive ;
barrier.cluster.arrive   | barrier.cluster.wait ;
barrier.cluster.wait     | ld.weak r0, x ;
exists (P1:r0 == 0)"""
    assert _sc(cluster) == [_state(P1_r0=1)]
    for engine in ENGINES:
        assert assert_sc_subset(parse(cluster), 2, engine) == "checked"


def test_oracle_rejects_what_it_does_not_model():
    text = """PTX red
{ x=0; }
P0@cta 0,gpu 0 ;
bar.cta.red.popc.u32 r0, 0, 1 ;
exists (P0:r0 == 1)"""
    with pytest.raises(Unsupported):
        sc_states(parse(text))


# ---- the issue's examples, and an oracle that can fail ------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text", [SPIN, EXCH_LOCK, EXCH_LOCK_GOTO], ids=["spin", "exch-lock", "exch-goto-lock"])
def test_issue_examples_answer_ok(text, engine):
    test = parse(text)
    for unroll in (1, 2):
        verdict = check(lower(test, unroll_bound=unroll), engine=engine, timeout_s=TIMEOUT_S)
        assert verdict.ok is True, f"{test.name}, unroll {unroll}: {verdict.ok}"
        assert assert_sc_subset(test, unroll, engine) == "checked"


def test_the_subset_check_catches_a_missing_state():
    test = parse(EXCH_LOCK.replace("exists (y == 2)", "locations [P0:r1; P1:r1;]\nexists (y == 2)"))
    sc = sc_states(test, 1)
    assert len(sc.states) == 2  # P0 takes the lock first (P0:r1=0, P1:r1=1), or P1 does
    states = model_states(test, 1, "z3")
    assert states is not None and subset_failure(sc.states, states) is None
    for dropped in sc.states:
        crippled = tuple(s for s in states if dict(s) != dict(dropped))
        assert missing(sc.states, crippled) == {frozenset(dropped)}
        message = subset_failure(sc.states, crippled)
        assert message is not None and format_state(dropped) in message


# ---- generated tests -----------------------------------------------------------------------------------

_CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"


@settings(max_examples=40 if _CI else settings.default.max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(test=looping_litmus_tests(blocks=(1, 2)), unroll=st.integers(0, 2), engine=st.sampled_from(ENGINES))
def test_sc_states_are_model_states(test, unroll, engine):
    outcome = assert_sc_subset(test, unroll, engine, timeout_s=3.0)
    event(outcome)


@pytest.mark.heavy
@settings(max_examples=50 if _CI else settings.default.max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(test=looping_litmus_tests(threads=(2, 3), blocks=(2, 3), weak=True), unroll=st.integers(1, 2), engine=st.sampled_from(ENGINES))
def test_sc_states_are_model_states_bigger(test, unroll, engine):
    outcome = assert_sc_subset(test, unroll, engine, timeout_s=5.0)
    event(outcome)


# ---- the shared corpus ----------------------------------------------------------------------------------


def _corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.litmus")) if CORPUS.is_dir() else []


def _corpus_params():
    files = _corpus_files()
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"litmus corpus not found at {CORPUS}"))]
    return [pytest.param(f, id=str(f.relative_to(CORPUS))) for f in files]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", _corpus_params())
def test_corpus_sc_states_are_model_states(path, engine):
    test = parse_file(path)
    outcome = assert_sc_subset(test, 2, engine)
    if outcome != "checked":
        pytest.skip(outcome)


@pytest.mark.heavy
@pytest.mark.parametrize("unroll", [1, 3])
def test_corpus_other_bounds(unroll):
    files = _corpus_files()
    if not files:
        pytest.skip(f"litmus corpus not found at {CORPUS}")
    for path in files:
        for engine in ENGINES:
            assert_sc_subset(parse_file(path), unroll, engine)


def test_corpus_coverage():
    """Which corpus tests the oracle covers (printed with ``-s``); all of them parse and it models
    all of them today, so a test it stops covering is noticed."""
    files = _corpus_files()
    if not files:
        pytest.skip(f"litmus corpus not found at {CORPUS}")
    covered = strong = with_states = 0
    skipped = []
    for path in files:
        test = parse_file(path)
        try:
            result = sc_states(test, 2)
        except (Unsupported, TooBig) as exc:
            skipped.append(f"{path.relative_to(CORPUS)}: {exc}")
            continue
        covered += 1
        strong += morally_strong_same_scope(test)
        with_states += bool(result.states)
    print(
        f"\nSC oracle covers {covered}/{len(files)} corpus tests ({strong} with same-scope morally strong "
        f"accesses only; {with_states} reach a final state under SC)"
    )
    for line in skipped:
        print("  not covered:", line)
    assert covered == len(files), skipped
