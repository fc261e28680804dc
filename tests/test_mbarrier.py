"""The mbarrier object as pure state transitions (semantics/mbarrier.py, §9.7.13.15), checked
against an independent model that counts every phase, and through the litmus dialect."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.memory_model import litmus, lowering
from ptxspec.semantics import mbarrier as mb


class Reference:
    """A straightforward model of §9.7.13.15.2-7: the full phase number, the counts, and the
    completion rule checked after each operation."""

    def __init__(self, count: int):
        self.phase, self.expected, self.pending, self.tx = 0, count, count, 0

    def _complete(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.expected

    def arrive(self, count: int, tx: int | None) -> int:
        before = self.phase
        if tx is not None:
            self.tx += tx
        self.pending -= count
        self._complete()
        return before

    def drop(self, count: int) -> int:
        self.expected -= count
        return self.arrive(count, None)

    def expect(self, tx: int) -> None:
        # a phase completes whichever count reaches zero last (the H100's mbarrier programs)
        self.tx += tx
        self._complete()

    def complete(self, tx: int) -> None:
        self.tx -= tx
        self._complete()


OPERATION = st.one_of(
    st.tuples(st.just("arrive"), st.integers(1, 3), st.none() | st.integers(0, 5)),
    st.tuples(st.just("drop"), st.integers(1, 2), st.none()),
    st.tuples(st.just("expect"), st.integers(0, 5), st.none()),
    st.tuples(st.just("complete"), st.integers(0, 5), st.none()),
)


@given(st.integers(1, 6), st.lists(OPERATION, max_size=30))
def test_transitions_agree_with_a_model_that_counts_every_phase(count, operations):
    state, ref = mb.init(count), Reference(count)
    assert mb.MbarrierState.decode(state.encode()) == state
    for op, n, tx in operations:
        try:
            if op == "arrive":
                token, new = mb.arrive(state, 1 if tx is not None else n, tx_count=tx)
            elif op == "drop":
                token, new = mb.arrive_drop(state, n)
            elif op == "expect":
                token, new = None, mb.expect_tx(state, n)
            else:
                token, new = None, mb.complete_tx(state, n)
        except mb.MbarrierUndefined:
            continue  # undefined (pending count below 0, or expected count below 1): the manual gives no next state
        pending_before = ref.pending
        if op == "arrive":
            assert mb.token_phase_parity(token) == ref.arrive(1 if tx is not None else n, tx) % 2
            assert mb.pending_count(token) == pending_before  # §9.7.13.15.17: "prior to the arrive-on"
        elif op == "drop":
            assert mb.token_phase_parity(token) == ref.drop(n) % 2
            assert mb.pending_count(token) == pending_before
        elif op == "expect":
            ref.expect(n)
        else:
            ref.complete(n)
        state = new
        assert (state.phase_parity, state.pending, state.expected, state.tx_count) == (ref.phase % 2, ref.pending, ref.expected, ref.tx)
        assert mb.MbarrierState.decode(state.encode()) == state
        # waitComplete: True for the phase just completed, False for the current one
        assert mb.test_wait(state, (ref.phase - 1) % 2) and not mb.test_wait(state, ref.phase % 2)


@given(st.integers(0, 1), st.integers(0, mb.COUNT_MAX), st.integers(1, mb.COUNT_MAX), st.integers(-mb.TX_MAX, mb.TX_MAX))
def test_encoding_round_trips_over_the_whole_range(parity, pending, expected, tx):
    state = mb.MbarrierState(parity, pending, expected, tx)
    value = state.encode()
    assert value & 1 and value < 1 << 64 and mb.MbarrierState.decode(value) == state


def test_undefined_uses_are_named():
    with pytest.raises(mb.MbarrierUndefined, match="not initialized"):
        mb.MbarrierState.decode(mb.UNDEFINED)
    with pytest.raises(mb.MbarrierUndefined, match="valid range 1"):
        mb.init(0)
    with pytest.raises(mb.MbarrierUndefined, match="noComplete"):
        mb.arrive(mb.init(1), 1, no_complete=True)
    with pytest.raises(mb.MbarrierUndefined, match="phaseParity is 0 or 1"):
        mb.test_wait(mb.init(1), 2)
    assert mb.arrive(mb.init(2), 1, no_complete=True)[1].pending == 1


def test_expect_tx_holds_the_phase_until_complete_tx():
    """§9.7.13.15.6: the phase completes when the pending count and the tx-count are both zero."""
    token, state = mb.arrive(mb.init(1), tx_count=16)
    assert mb.token_phase_parity(token) == 0 and mb.pending_count(token) == 1
    assert state.phase_parity == 0 and state.pending == 0 and state.tx_count == 16
    state = mb.complete_tx(state, 8)
    assert state.phase_parity == 0
    state = mb.complete_tx(state, 8)
    assert state.phase_parity == 1 and state.pending == 1 and mb.test_wait(state, 0)


def test_the_dialect_lowers_every_instruction_through_the_transitions():
    assert lowering.mbarrier_written("init", 0, (2,)) == (0, mb.init(2).encode(), None)
    arrived = mb.arrive(mb.init(2))[1].encode()
    assert lowering.mbarrier_written("arrive", mb.init(2).encode(), ()) == (mb.state_token(0, 2), arrived, None)
    assert lowering.mbarrier_written("test_wait", arrived, (0,)) == (0, None, None)
    done = mb.arrive(mb.MbarrierState.decode(arrived))[1].encode()
    assert lowering.mbarrier_written("try_wait", done, (0,)) == (1, None, None)
    result, written, undefined = lowering.mbarrier_written("arrive", mb.UNDEFINED, ())
    assert (result, written) == (0, mb.UNDEFINED) and undefined is not None and "not initialized" in undefined
    result, written, undefined = lowering.mbarrier_written("arrive", mb.init(1).encode(), (1,), ("noComplete",))
    assert (result, written) == (0, mb.UNDEFINED) and undefined is not None and ".noComplete" in undefined
    assert lowering.mbarrier_written("arrive", mb.init(1).encode(), (16,), ("expect_tx",))[1] == mb.arrive(mb.init(1), tx_count=16)[1].encode()
    assert lowering.mbarrier_written("init", 0, (0,))[2] is not None  # count 0 is out of range


@pytest.mark.parametrize(
    "text",
    [
        "mbarrier.init.shared::cta.b64 bar, 2",
        "mbarrier.inval.shared::cta.b64 bar",
        "mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 bar, 16",
        "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 bar, 16",
        "mbarrier.arrive.release.cta.shared::cta.b64 r0, bar",
        "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, bar",
        "mbarrier.arrive.release.cta.expect_tx.shared::cta.b64 r0, bar, 16",
        "mbarrier.arrive.release.cta.noComplete.shared.b64 r0, bar, 2",
        "mbarrier.arrive_drop.release.cta.shared::cta.b64 _, bar",
        "mbarrier.test_wait.acquire.cta.parity.shared::cta.b64 r1, bar, 0",
        "mbarrier.try_wait.relaxed.cluster.shared::cta.b64 r1, bar, r0",
    ],
)
def test_mbarrier_instructions_print_as_they_parse(text):
    test = litmus.parse(f"PTX t\n{{\nbar=0;\n}}\n P0@cta 0,gpu 0 ;\n {text} ;\nexists (bar == 0)\n")
    (instruction,) = test.code[0]
    assert isinstance(instruction, litmus.MbarrierOp) and litmus.format_instruction(instruction) == text


def test_defaults_are_the_manuals():
    """§9.7.13.15.13/16: arrive is .release.cta, the waits .acquire.cta by default."""
    test = litmus.parse(
        "PTX t\n{\nbar=0;\n}\n P0@cta 0,gpu 0 ;\n mbarrier.arrive.shared.b64 r0, [bar] ;\n"
        " mbarrier.try_wait.shared.b64 r1, [bar], r0, 1000 ;\n mbarrier.expect_tx.shared.b64 [bar], 4 ;\nexists (bar == 0)\n"
    )
    arrive, wait, expect = test.code[0]
    assert (arrive.order, arrive.scope, wait.order, wait.scope, expect.order, expect.scope) == ("release", "cta", "acquire", "cta", "relaxed", "cta")
    assert wait.operands == (litmus.Register("r0"),)  # suspendTimeHint has no value effect


# ---- undefined behavior reached by a consistent execution is reported (check.undefined_behavior) ----

_ARRIVE_BEFORE_INIT = """PTX t
{{
bar=0;
P1:r1=0;
}}
 P0@cta 0,gpu 0                         | P1@cta 0,gpu 0                            ;
 mbarrier.init.shared::cta.b64 [bar], 1 | {sync}                                    ;
 {sync}                                 | mbarrier.arrive.shared::cta.b64 r1, [bar] ;
exists (P1:r1 == 0)
"""


@pytest.mark.parametrize("engine", ["both", "z3", "explicit"])
def test_an_arrive_that_may_precede_the_init_is_reported_as_undefined(engine):
    from ptxspec.memory_model import check

    racy = check.check(lowering.lower(litmus.parse(_ARRIVE_BEFORE_INIT.format(sync=""))), engine=engine)
    assert racy.undefined is not None and "P1 performs 'mbarrier.arrive" in racy.undefined and "not initialized" in racy.undefined
    assert any(note.startswith("undefined behavior: ") for note in racy.notes)
    synced = check.check(lowering.lower(litmus.parse(_ARRIVE_BEFORE_INIT.format(sync="bar.cta.sync 0"))), engine=engine)
    assert synced.undefined is None and not synced.notes  # the barrier orders the init first: no execution reads 0
    # The traces of the synchronized test still include one whose arrive reads 0 (the lowering runs each thread
    # alone); only the model rules it out.
    assert any(t.registers.get("%undefined") for th in synced.program.threads for t in th.traces)
