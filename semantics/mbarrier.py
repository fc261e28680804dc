"""The mbarrier object and its operations as pure state transitions (§9.7.13.15).

§9.7.13.15.2: an mbarrier object tracks "the current phase", "the pending arrival count of the
current phase", "the expected arrival count of the next phase" and "the tx-count" of the current
phase, with the ranges of :data:`COUNT_MAX` and :data:`TX_MAX`. :class:`MbarrierState` is that
content; each instruction of §9.7.13.15.9-17 is one function from a state (and its operands) to a
new state (and the instruction's result). The memory model's litmus dialect lowers every mbarrier
instruction through these functions (:mod:`ptxspec.memory_model.lowering`): an mbarrier is a
location whose value is :meth:`MbarrierState.encode`, and an arrive-on is a read-modify-write of it.

Only the phase's parity is kept: it is all an instruction can name ("phaseParity ... the parity of
the current phase or the immediately preceding phase", §9.7.13.15.16; the ``state`` an arrive
returns is "the phase ... prior to the arrive-on operation", which :func:`arrive` gives as that
parity), and it keeps a litmus location's values few.

What the manual makes undefined (an operation on an object that is not initialized, counts out of
range, ``.noComplete`` that completes the phase) raises :class:`MbarrierUndefined`, naming the
rule; the litmus lowering turns it into the object's undefined state :data:`UNDEFINED`.
"""

from __future__ import annotations

import attrs

MBARRIER = "9.7.13.15"
CONTENTS = "9.7.13.15.2"
PHASE = "9.7.13.15.4"
TX_COUNT = "9.7.13.15.5"
PHASE_COMPLETION = "9.7.13.15.6"
ARRIVE_ON = "9.7.13.15.7"
INIT = "9.7.13.15.9"
INVAL = "9.7.13.15.10"
EXPECT_TX = "9.7.13.15.11"
COMPLETE_TX = "9.7.13.15.12"
ARRIVE = "9.7.13.15.13"
ARRIVE_DROP = "9.7.13.15.14"
CP_ASYNC_ARRIVE = "9.7.13.15.15"
TEST_WAIT = "9.7.13.15.16"
PENDING_COUNT = "9.7.13.15.17"

#: §9.7.13.15.2: the expected arrival count is 1 .. 2^20 - 1 and the pending arrival count
#: 0 .. 2^20 - 1.
COUNT_MAX = (1 << 20) - 1
#: §9.7.13.15.2: the tx-count is -(2^20 - 1) .. 2^20 - 1.
TX_MAX = (1 << 20) - 1

_COUNT_BITS = 20
_TX_BITS = 21
UNDEFINED = 0
"""The encoding of an object that is not initialized (or whose use was undefined): bit 0 clear."""


class MbarrierUndefined(Exception):
    """The manual says the behavior is undefined; the message names the rule and its section."""


@attrs.frozen
class MbarrierState:
    """§9.7.13.15.2 "Contents of the mbarrier object" (the phase as its parity)."""

    phase_parity: int
    pending: int
    expected: int
    tx_count: int = 0

    def encode(self) -> int:
        """A 64-bit value: bit 0 set (initialized), bit 1 the phase parity, 20 bits each of the
        pending and expected counts, 21 bits of the tx-count in two's complement."""
        tx = self.tx_count & ((1 << _TX_BITS) - 1)
        return 1 | self.phase_parity << 1 | self.pending << 2 | self.expected << (2 + _COUNT_BITS) | tx << (2 + 2 * _COUNT_BITS)

    @staticmethod
    def decode(value: int) -> MbarrierState:
        """The state a value of :meth:`encode` holds; :class:`MbarrierUndefined` for any other."""
        if not value & 1:
            raise MbarrierUndefined(f"§{MBARRIER}: an mbarrier operation other than mbarrier.init on an object that is not initialized is undefined")
        mask = (1 << _COUNT_BITS) - 1
        tx = (value >> (2 + 2 * _COUNT_BITS)) & ((1 << _TX_BITS) - 1)
        if tx >> (_TX_BITS - 1):
            tx -= 1 << _TX_BITS
        return MbarrierState((value >> 1) & 1, (value >> 2) & mask, (value >> (2 + _COUNT_BITS)) & mask, tx)


def init(count: int) -> MbarrierState:
    """§9.7.13.15.9 mbarrier.init: "initializes the mbarrier object ... with the value specified by
    the operand count": "Initializing the current phase to 0. Initializing the expected arrival
    count to count. Initializing the pending arrival count to count. Initializing the tx-count to
    0." The valid range of count is 1 .. 2^20 - 1."""
    if not 1 <= count <= COUNT_MAX:
        raise MbarrierUndefined(f"§{INIT}: count = {count} is outside the valid range 1 .. 2^20 - 1")
    return MbarrierState(0, count, count, 0)


def _completed(state: MbarrierState) -> MbarrierState:
    """§9.7.13.15.6: "the current phase is complete when the pending arrival count reaches zero and
    the tx-count reaches zero"; then, atomically, the object moves to the next phase and "the
    pending arrival count is reinitialized to the expected arrival count"."""
    if state.pending == 0 and state.tx_count == 0:
        return attrs.evolve(state, phase_parity=state.phase_parity ^ 1, pending=state.expected)
    return state


def expect_tx(state: MbarrierState, tx_count: int) -> MbarrierState:
    """§9.7.13.15.5.1 / §9.7.13.15.11 mbarrier.expect_tx: "increases the tx-count of the mbarrier
    object by the value specified by txCount" (a relaxed operation)."""
    new = state.tx_count + tx_count
    if not 0 <= tx_count <= TX_MAX or abs(new) > TX_MAX:
        raise MbarrierUndefined(f"§{TX_COUNT}: tx-count {state.tx_count} + {tx_count} leaves the range -(2^20 - 1) .. 2^20 - 1")
    return attrs.evolve(state, tx_count=new)


def complete_tx(state: MbarrierState, tx_count: int) -> MbarrierState:
    """§9.7.13.15.5.2 / §9.7.13.15.12 mbarrier.complete_tx: "the tx-count of the mbarrier object is
    decremented by completeCount", after which the phase may complete (§9.7.13.15.6)."""
    new = state.tx_count - tx_count
    if not 0 <= tx_count <= TX_MAX or abs(new) > TX_MAX:
        raise MbarrierUndefined(f"§{TX_COUNT}: tx-count {state.tx_count} - {tx_count} leaves the range -(2^20 - 1) .. 2^20 - 1")
    return _completed(attrs.evolve(state, tx_count=new))


def pending_incremented(state: MbarrierState) -> MbarrierState:
    """§9.7.13.15.15 cp.async.mbarrier.arrive without .noinc: "the pending count of the mbarrier
    object is incremented by 1 prior to the asynchronous arrive-on operation ... The pending count
    of the mbarrier object after the increment should not exceed the limit as mentioned in Contents
    of the mbarrier object. Otherwise, the behavior is undefined." """
    if state.pending + 1 > COUNT_MAX:
        raise MbarrierUndefined(f"§{CP_ASYNC_ARRIVE}: incrementing the pending count {state.pending} exceeds 2^20 - 1")
    return attrs.evolve(state, pending=state.pending + 1)


def arrive(state: MbarrierState, count: int = 1, *, tx_count: int | None = None, no_complete: bool = False) -> tuple[int, MbarrierState]:
    """§9.7.13.15.13 mbarrier.arrive (an arrive-on, §9.7.13.15.7: "the pending arrival count is
    decremented by count"), then the phase may complete (§9.7.13.15.6). ``.expect_tx``: "an
    expect-tx operation ... prior to the arrive-on operation" with txCount (and count 1).
    ``.noComplete``: "must not cause the mbarrier to complete its current phase, otherwise the
    behavior is undefined." Returns ``(state token, new state)``: the token (:func:`state_token`)
    is the phase before the arrive-on, as its parity, with the pending count before it."""
    if tx_count is not None:
        state = expect_tx(state, tx_count)
    if not 1 <= count <= COUNT_MAX or count > state.pending:
        raise MbarrierUndefined(f"§{ARRIVE}: an arrive-on of count {count} with {state.pending} pending arrivals leaves the valid range")
    new = _completed(attrs.evolve(state, pending=state.pending - count))
    if no_complete and new.phase_parity != state.phase_parity:
        raise MbarrierUndefined(f"§{ARRIVE}: .noComplete must not cause the mbarrier to complete its current phase")
    return state_token(state.phase_parity, state.pending), new


def state_token(phase_parity: int, pending: int) -> int:
    """The opaque ``state`` an arrive returns (§9.7.13.15.13: "the phase of the mbarrier object
    prior to the arrive-on operation"), carrying what the instructions that take it read: the
    phase's parity (bit 0, for test_wait / try_wait) and "the pending count of the mbarrier object
    prior to the arrive-on operation from which the state register was obtained" (above it, for
    pending_count, §9.7.13.15.17)."""
    return phase_parity | pending << 1


def token_phase_parity(token: int) -> int:
    """The parity of the phase a ``state`` token of :func:`state_token` names."""
    return token & 1


def pending_count(token: int) -> int:
    """§9.7.13.15.17 mbarrier.pending_count: "the pending count of the mbarrier object prior to the
    arrive-on operation from which the state register was obtained" (the state of an
    arrive.noComplete or arrive_drop.noComplete: the caller checks where it came from)."""
    return (token >> 1) & COUNT_MAX


def arrive_drop(state: MbarrierState, count: int = 1, *, no_complete: bool = False) -> tuple[int, MbarrierState]:
    """§9.7.13.15.14 mbarrier.arrive_drop: "decrements the expected arrival count of the mbarrier
    object by the value specified by count and then performs an arrive-on operation" (with count);
    the decrement "applies to all the subsequent phases"."""
    if not 1 <= count <= state.expected:
        raise MbarrierUndefined(f"§{ARRIVE_DROP}: dropping {count} of {state.expected} expected arrivals leaves the valid range")
    return arrive(attrs.evolve(state, expected=state.expected - count), count, no_complete=no_complete)


def test_wait(state: MbarrierState, phase_parity: int) -> bool:
    """§9.7.13.15.16 mbarrier.test_wait / try_wait: waitComplete is True for "the immediately
    preceding phase", which has completed, and False for "the current, incomplete phase" --
    the phase named by its parity (``.parity``; a ``state`` token names the phase by the parity
    :func:`arrive` returned). The object has moved on from a phase of that parity exactly when
    its current phase has the other parity."""
    if phase_parity not in (0, 1):
        raise MbarrierUndefined(f"§{TEST_WAIT}: phaseParity is 0 or 1, not {phase_parity}")
    return state.phase_parity != phase_parity


__all__ = [
    "state_token",
    "pending_incremented",
    "token_phase_parity",
    "pending_count",
    "COUNT_MAX",
    "TX_MAX",
    "UNDEFINED",
    "MbarrierState",
    "MbarrierUndefined",
    "arrive",
    "arrive_drop",
    "complete_tx",
    "expect_tx",
    "init",
    "test_wait",
]
