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

The instructions themselves (the end of this module, registered with
:func:`~ptxspec.semantics.instructions.semantic`) are these transitions on a
:class:`~ptxspec.semantics.state.State`: the object is the 8 bytes at its 8-byte aligned address in
shared memory (§9.7.13.15.1: ".b64", alignment 8, ".shared"), this CTA's or -- for the lines that
reach ``.shared::cluster`` -- another CTA's of the cluster. "The contents of the mbarrier object are
opaque", so the model stores :meth:`MbarrierState.encode` there, little-endian: the value the
litmus model's location holds. What the manual makes undefined is refused with a located
:class:`~ptxspec.spec.errors.OperandError` naming the rule.
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


def _tx_increased(state: MbarrierState, tx_count: int) -> MbarrierState:
    new = state.tx_count + tx_count
    if not 0 <= tx_count <= TX_MAX or abs(new) > TX_MAX:
        raise MbarrierUndefined(f"§{TX_COUNT}: tx-count {state.tx_count} + {tx_count} leaves the range -(2^20 - 1) .. 2^20 - 1")
    return attrs.evolve(state, tx_count=new)


def expect_tx(state: MbarrierState, tx_count: int) -> MbarrierState:
    """§9.7.13.15.5.1 / §9.7.13.15.11 mbarrier.expect_tx: "increases the tx-count of the mbarrier
    object by the value specified by txCount" (a relaxed operation). An increase that brings a
    negative tx-count (complete-tx before its expect-tx) to zero while no arrival is pending
    completes the phase: "the current phase is complete when the pending arrival count reaches zero
    and the tx-count reaches zero" (§9.7.13.15.6), whichever reaches zero last -- as the H100
    shows (``conformance/data/sm_90/async.npz``, the mbarrier programs)."""
    return _completed(_tx_increased(state, tx_count))


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
    if tx_count is not None:  # the expect-tx and the arrive-on are one operation: no phase completes between them
        state = _tx_increased(state, tx_count)
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


# ---------------------------------------------------------------------------------------------
# The instructions of §9.7.13.15.9-17 on a State: the object in shared memory
# ---------------------------------------------------------------------------------------------
#
# Imported here, below the transitions: the memory model's lowering uses the functions above, and
# these registrations (the catalogue, the front doors) only matter to the instruction semantics.

import re  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402

from ptxspec.profiles import Profile  # noqa: E402
from ptxspec.semantics.instructions import THREAD_ADDRESSES, THREAD_MEMORY, semantic  # noqa: E402
from ptxspec.semantics.memory_access import Place, locate, read, write  # noqa: E402
from ptxspec.semantics.state import State  # noqa: E402
from ptxspec.spec.catalogue import Form  # noqa: E402
from ptxspec.spec.errors import OperandError  # noqa: E402

SIZE_AND_ALIGNMENT = "9.7.13.15.1"
#: §9.7.13.15.1: "The mbarrier object is an opaque object with the following type and alignment
#: requirements: .b64, 8 bytes, .shared".
OBJECT_BYTES = 8

ARRIVE_KEYS = tuple(f"mbarrier.arrive{tail}" for tail in ("", ".count", ".remote", ".remote.count", ".expect_tx", ".expect_tx.remote", ".noComplete"))
ARRIVE_DROP_KEYS = tuple(key.replace("mbarrier.arrive", "mbarrier.arrive_drop") for key in ARRIVE_KEYS)


@contextmanager
def _defined(form: Form) -> Iterator[None]:
    """What the manual makes undefined (:class:`MbarrierUndefined`) as a located
    :class:`~ptxspec.spec.errors.OperandError` that names the rule and its section."""
    try:
        yield
    except MbarrierUndefined as undefined:
        rule = str(undefined)
        section = re.match(r"§([\d.]+)", rule)
        if "undefined" not in rule:
            rule += " (the behavior is undefined)"
        raise OperandError(rule, where=form.text, section=section.group(1) if section else form.family.section) from None


def _sink(form: Form) -> bool:
    """Whether the form's destination is the sink ``_``: the lines whose object may be in another
    CTA's shared memory, where the arrive "cannot return a value" (§9.7.13.15.13)."""
    return any(o.name == "_" for o in form.destinations)


def _place(form: Form, state: State, addr: int, *, cluster: bool, slot: str = "ss") -> Place:
    """The 8 bytes of the object at ``addr``: the form's state space (``.shared{::cta}``,
    ``.shared::cluster``) or generic addressing, aligned to 8 bytes (§9.7.13.15.1; :func:`locate`
    checks "The address must be naturally aligned to a multiple of the access size" and that the
    bytes are in the state). The object must be in shared memory -- this CTA's, unless the line
    reaches ``.shared::cluster`` (``cluster``) -- for "If no state space is specified then Generic
    Addressing is used. If the address specified by addr does not fall within the address window of
    .shared::cta state space then the behavior is undefined" (".shared::cta or .shared::cluster"
    for the lines that reach it)."""
    place = locate(form, state, addr, OBJECT_BYTES, slot=slot)
    if place.space != "shared":
        raise OperandError(
            f"address {addr:#x} is in .{place.space} memory, not shared memory: an mbarrier object is in .shared (§{SIZE_AND_ALIGNMENT}), "
            '"If the address specified by addr does not fall within the address window of .shared::cta state space then the behavior is undefined"',
            where=form.text,
            section=form.family.section,
        )
    if not cluster and place.rank != state.addresses.cta_rank:
        why = (
            "an arrive-on there \"cannot return a value. Sink symbol '_' must be used for the destination operand\" (the line with .shared::cluster and _)"
            if form.family.section in (ARRIVE, ARRIVE_DROP)
            else '§9.7.13.15.8: on an object in .shared::cluster, "Other mbarrier operations" are "not supported"'
        )
        raise OperandError(
            f"the object at {addr:#x} is in the shared memory of the CTA of rank {place.rank}, not of this CTA (rank "
            f'{state.addresses.cta_rank}): "If the address specified by addr does not fall within the address window of .shared::cta state space '
            f'then the behavior is undefined"; {why}',
            where=form.text,
            section=form.family.section,
        )
    return place


def _load(form: Form, state: State, place: Place) -> MbarrierState:
    """The object's state: its 8 bytes as :meth:`MbarrierState.decode` reads them (little-endian),
    an object that is not initialized being undefined (§9.7.13.15: "Performing any mbarrier
    operation except mbarrier.init on an uninitialized mbarrier object results in undefined
    behavior")."""
    data, unknown = read(state, place, OBJECT_BYTES)
    if unknown:
        raise OperandError(
            "the mbarrier object's bytes are indeterminate, so it is not an initialized object "
            '("Performing any mbarrier operation except mbarrier.init on an uninitialized mbarrier object results in undefined behavior")',
            where=form.text,
            section=MBARRIER,
        )
    with _defined(form):
        return MbarrierState.decode(int.from_bytes(data, "little"))


def _store(state: State, place: Place, value: int) -> State:
    """The state with the object's 8 bytes holding ``value`` (little-endian)."""
    return write(state, place, value.to_bytes(OBJECT_BYTES, "little"))


@semantic("mbarrier.init", operands=THREAD_MEMORY)
def mbarrier_init(form: Form, state: State, addr: int, count: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.9 mbarrier.init: "initializes the mbarrier object at the location specified by the
    address operand addr with the unsigned 32-bit integer count" -- :func:`init`: "Initializing the
    current phase to 0. Initializing the expected arrival count to count. Initializing the pending
    arrival count to count. Initializing the tx-count to 0." (count outside 1 .. 2^20 - 1 is
    refused: "The value of operand count must be in the range as specified in Contents of the
    mbarrier object").

    The object is opaque ("The contents of the mbarrier object are opaque"); the model stores the
    8 bytes of :meth:`MbarrierState.encode`, little-endian, as the litmus model's location holds
    that value. "Performing a mbarrier.init operation on a memory location containing a valid
    mbarrier object is undefined" is not checked: bytes cannot tell an object from data that
    looks like one."""
    place = _place(form, state, addr, cluster=False)
    with _defined(form):
        new = init(count)
    return (), _store(state, place, new.encode())


@semantic("mbarrier.inval", operands=THREAD_MEMORY)
def mbarrier_inval(form: Form, state: State, addr: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.10 mbarrier.inval: "invalidates the mbarrier object at the location specified by
    the address operand addr" ("An mbarrier object must be invalidated before using its memory
    location for any other purpose"). The object must be valid ("Performing any mbarrier
    operation except mbarrier.init on a memory location that does not contain a valid mbarrier
    object, results in undefined behaviour"); it then holds :data:`UNDEFINED` (8 zero bytes), on
    which every operation but init is refused, as in the litmus model."""
    place = _place(form, state, addr, cluster=False)
    _load(form, state, place)
    return (), _store(state, place, UNDEFINED)


@semantic("mbarrier.expect_tx", operands=THREAD_MEMORY)
def mbarrier_expect_tx(form: Form, state: State, addr: int, tx: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.11 mbarrier.expect_tx: "A thread executing mbarrier.expect_tx performs an
    expect-tx operation on the mbarrier object at the location specified by the address operand
    addr. The 32-bit unsigned integer operand txCount specifies the expectCount argument to the
    expect-tx operation" -- :func:`expect_tx`, which "increases the tx-count of an mbarrier object
    by the value specified by expectCount" (§9.7.13.15.5.1). The object may be in another CTA's
    shared memory (``.shared::cluster``, or a generic address in that window)."""
    place = _place(form, state, addr, cluster=True)
    old = _load(form, state, place)
    with _defined(form):
        new = expect_tx(old, tx)
    return (), _store(state, place, new.encode())


def complete_tx_on(form: Form, state: State, addr: int, count: int, *, slot: str = "ss") -> State:
    """The complete-tx operation with completeCount ``count`` on the object at ``addr``
    (§9.7.13.15.5.2): "the tx-count of the mbarrier object is decremented by completeCount", and
    "If the current phase has been completed then the mbarrier transitions to the next phase". The
    object may be in another CTA's shared memory. The one signal of ``mbarrier.complete_tx`` and of
    the asynchronous operations that complete on an mbarrier (``st.async``, ``red.async``, the
    bulk copies, whose ``slot`` naming the object's state space is ``dst_ss``)."""
    place = _place(form, state, addr, cluster=True, slot=slot)
    old = _load(form, state, place)
    with _defined(form):
        new = complete_tx(old, count)
    return _store(state, place, new.encode())


@semantic("mbarrier.complete_tx", operands=THREAD_MEMORY)
def mbarrier_complete_tx(form: Form, state: State, addr: int, tx: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.12 mbarrier.complete_tx: "A thread executing mbarrier.complete_tx performs a
    complete-tx operation on the mbarrier object at the location specified by the address operand
    addr. The 32-bit unsigned integer operand txCount specifies the completeCount argument to the
    complete-tx operation" -- :func:`complete_tx_on`. "mbarrier.complete_tx does not involve any
    asynchronous memory operations and only simulates the completion of an asynchronous memory
    operation and its side effect of signaling to the mbarrier object."
    """
    return (), complete_tx_on(form, state, addr, tx)


@semantic(*ARRIVE_KEYS, operands=THREAD_MEMORY)
def mbarrier_arrive(form: Form, state: State, addr: int, *counts: int, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.13 mbarrier.arrive: "A thread executing mbarrier.arrive performs an arrive-on
    operation on the mbarrier object at the location specified by the address operand addr. The
    32-bit unsigned integer operand count specifies the count argument to the arrive-on
    operation" (1 without it) -- :func:`arrive`: "the pending arrival count is decremented by
    count", then the phase may complete (§9.7.13.15.7). ``.expect_tx``: "an expect-tx operation
    prior to the arrive-on operation ... the count argument to the arrive-on operation is assumed
    to be 1", with txCount. ``.noComplete``: "must not cause the mbarrier to complete its current
    phase, otherwise the behavior is undefined" (refused).

    The result: "mbarrier.arrive operation on an mbarrier object located in .shared::cta returns
    an opaque 64-bit register capturing the phase of the mbarrier object prior to the arrive-on
    operation in the destination operand state" -- :func:`state_token` (the phase's parity and the
    pending count before it). The lines with ``.shared::cluster`` write the sink ``_`` and give no
    result ("cannot return a value"); their object may be in another CTA's shared memory. A line
    that returns a state refuses an object outside this CTA's shared memory."""
    sink = _sink(form)
    place = _place(form, state, addr, cluster=sink)
    old = _load(form, state, place)
    with _defined(form):
        if "expect_tx" in form:
            token, new = arrive(old, 1, tx_count=counts[0])
        else:
            token, new = arrive(old, counts[0] if counts else 1, no_complete="noComplete" in form)
    return (() if sink else (token,)), _store(state, place, new.encode())


@semantic(*ARRIVE_DROP_KEYS, operands=THREAD_MEMORY)
def mbarrier_arrive_drop(form: Form, state: State, addr: int, *counts: int, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.14 mbarrier.arrive_drop: "Decrements the expected arrival count of the mbarrier
    object by the value specified by the 32-bit integer operand count. If count operand is not
    specified, it defaults to 1. Performs an arrive-on operation on the mbarrier object. The operand
    count specifies the count argument to the arrive-on operation" -- :func:`arrive_drop`; "The
    decrement done in the expected arrivals count of the mbarrier object will be for all the
    subsequent phases of the mbarrier object." ``.expect_tx``: "an expect-tx operation prior to the
    arrive-on operation" with txCount, the count 1 (:func:`expect_tx`, then :func:`arrive_drop`:
    neither the expect-tx nor the decrement completes a phase, so their order does not matter).
    ``.noComplete``: "must not complete the mbarrier, otherwise the behavior is undefined".

    The result is the state, as :func:`mbarrier_arrive`'s ("returns an opaque 64-bit register
    capturing the phase of the mbarrier object prior to the arrive-on operation"), or none with
    the sink ``_`` of the ``.shared::cluster`` lines."""
    sink = _sink(form)
    place = _place(form, state, addr, cluster=sink)
    old = _load(form, state, place)
    with _defined(form):
        if "expect_tx" in form:
            token, new = arrive_drop(expect_tx(old, counts[0]), 1)
        else:
            token, new = arrive_drop(old, counts[0] if counts else 1, no_complete="noComplete" in form)
    return (() if sink else (token,)), _store(state, place, new.encode())


@semantic("cp.async.mbarrier.arrive", operands=THREAD_MEMORY)
def cp_async_mbarrier_arrive(form: Form, state: State, addr: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.15 cp.async.mbarrier.arrive: "Causes an arrive-on operation to be triggered by
    the system on the mbarrier object upon the completion of all prior cp.async operations
    initiated by the executing thread." "When the .noinc modifier is not specified, the pending
    count of the mbarrier object is incremented by 1 prior to the asynchronous arrive-on operation"
    (:func:`pending_incremented`: "should not exceed the limit ... Otherwise, the behavior is
    undefined"), "resulting in a zero-net change for the pending count from the asynchronous
    arrive-on operation during the current phase"; with ``.noinc`` there is no increment.

    A State holds no cp.async operation in flight: every prior one has completed, so the
    triggered arrive-on (:func:`arrive`, count 1) is applied here, after the increment. (The litmus
    model keeps the two apart, the arrive-on an asynchronous event after the thread's copies.)"""
    place = _place(form, state, addr, cluster=False)
    old = _load(form, state, place)
    with _defined(form):
        if "noinc" not in form:
            old = pending_incremented(old)
        _, new = arrive(old, 1)
    return (), _store(state, place, new.encode())


def _wait(form: Form, state: State, addr: int, phase: int) -> tuple[tuple[int, ...], State]:
    """waitComplete of test_wait and try_wait: :func:`test_wait` of the phase that ``.parity``'s
    phaseParity names, or a state token names (its parity, :func:`token_phase_parity`). The state
    is unchanged."""
    place = _place(form, state, addr, cluster=False)
    old = _load(form, state, place)
    parity = phase if "parity" in form else token_phase_parity(phase)
    with _defined(form):
        complete = test_wait(old, parity)
    return (int(complete),), state


@semantic("mbarrier.test_wait", "mbarrier.test_wait.parity", operands=THREAD_MEMORY)
def mbarrier_test_wait(form: Form, state: State, addr: int, phase: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.16 mbarrier.test_wait: "The test_wait and try_wait operations test for the
    completion of the current or the immediately preceding phase of an mbarrier object at the
    location specified by the operand addr. mbarrier.test_wait is a non-blocking instruction which
    tests for the completion of the phase." The phase is "indicated by the operand state, which was
    returned by an mbarrier.arrive instruction on the same mbarrier object during the current or
    the immediately preceding phase", or with ``.parity`` "by the operand phaseParity, which is the
    integer parity of either the current phase or the immediately preceding phase" ("the valid
    values of phaseParity operand are 0 and 1"). waitComplete (1 or 0) is "True" for "The
    immediately preceding phase" and "False" for "The current, incomplete phase" (:func:`test_wait`).

    Only the phase's parity is kept (see the module's docstring), so a state token from an older
    phase is not told apart ("test_wait and try_wait operations are valid only for" those two)."""
    return _wait(form, state, addr, phase)


@semantic(
    "mbarrier.try_wait",
    "mbarrier.try_wait.suspendTimeHint",
    "mbarrier.try_wait.parity",
    "mbarrier.try_wait.parity.suspendTimeHint",
    operands=THREAD_MEMORY,
)
def mbarrier_try_wait(form: Form, state: State, addr: int, phase: int, *hint: int, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.16 mbarrier.try_wait: "mbarrier.try_wait is a potentially blocking instruction
    which tests for the completion of the phase. If the phase is not complete, the executing thread
    may be suspended. Suspended thread resumes execution when the specified phase completes OR
    before the phase completes following a system-dependent time limit. The optional 32-bit
    unsigned integer operand suspendTimeHint specifies the time limit, in nanoseconds, that may be
    used for the time limit instead of the system-dependent limit."

    One thread's instruction on a State sees no other thread arrive while it is suspended, so its
    waitComplete is :func:`mbarrier_test_wait`'s at the instant it is evaluated: the same test of
    the phase that state or phaseParity names. suspendTimeHint only bounds the wait; it changes no
    value."""
    return _wait(form, state, addr, phase)


@semantic("mbarrier.pending_count", operands=THREAD_ADDRESSES)
def mbarrier_pending_count(form: Form, state: State, token: int, *, profile: Profile) -> tuple[tuple[int, ...], State]:
    """§9.7.13.15.17 mbarrier.pending_count: "The pending count can be queried from the opaque
    mbarrier state using mbarrier.pending_count." "The destination register count is a 32-bit
    unsigned integer representing the pending count of the mbarrier object prior to the arrive-on
    operation from which the state register was obtained" -- :func:`pending_count`. It reads a
    register, not the object: the state is unchanged. "The state operand ... must be a result of
    a preceding mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete instruction.
    Otherwise, the behavior is undefined" is not checked: a token does not say which arrive made
    it (this model's tokens carry the pending count whichever it was)."""
    return (pending_count(token),), state
