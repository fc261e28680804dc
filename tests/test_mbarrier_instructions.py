"""The mbarrier instructions of §9.7.13.15 (spec/mbarrier.py) as catalogue forms, their legality
verdicts against ptxas (CUDA 13.0; skipped without it), and their semantic functions
(semantics/mbarrier.py): state transitions of the object in shared memory, the same transitions
that the litmus model's lowering uses."""

from __future__ import annotations

import random

import attrs
import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.memory_model import lowering
from ptxspec.semantics import mbarrier as mb
from ptxspec.semantics.instructions import SEMANTICS, execute
from ptxspec.semantics.state import AddressMap, Segment, State
from ptxspec.spec import mbarrier
from ptxspec.spec.catalogue import CATALOGUE, parse
from ptxspec.spec.errors import IllegalForm, OperandError

KEYS = [f.key for f in mbarrier.FAMILIES]


# ---------------------------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------------------------


def test_every_family_is_catalogued_with_semantics():
    for key in KEYS:
        family = CATALOGUE.family(key)
        assert family.section.startswith("9.7.13.15.") and family.summary and family.addresses in ((), ("addr",))
        assert key in SEMANTICS, key
    assert len(KEYS) == len(set(KEYS)) == 26


@pytest.mark.parametrize(
    ("text", "key", "template"),
    [
        ("mbarrier.init.shared::cta.b64", "mbarrier.init", "[addr], count"),
        ("mbarrier.inval.b64", "mbarrier.inval", "[addr]"),
        ("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64", "mbarrier.expect_tx", "[addr], txCount"),
        ("mbarrier.complete_tx.shared.b64", "mbarrier.complete_tx", "[addr], txCount"),
        ("mbarrier.arrive.shared.b64", "mbarrier.arrive", "state, [addr]"),
        ("mbarrier.arrive.b64 %r2, [addr], cnt", "mbarrier.arrive.count", "state, [addr], count"),
        ("mbarrier.arrive.release.cta.shared::cluster.b64 _, [remoteAddr32]", "mbarrier.arrive.remote", "_, [addr]"),
        ("mbarrier.arrive.shared::cluster.b64 _, [a], cnt", "mbarrier.arrive.remote.count", "_, [addr], count"),
        ("mbarrier.arrive.expect_tx.release.cluster.b64", "mbarrier.arrive.expect_tx", "state, [addr], txCount"),
        ("mbarrier.arrive.expect_tx.shared::cluster.b64", "mbarrier.arrive.expect_tx.remote", "_, [addr], txCount"),
        ("mbarrier.arrive.noComplete.b64 %r1, [addr], 2", "mbarrier.arrive.noComplete", "state, [addr], count"),
        ("mbarrier.arrive_drop.shared.b64", "mbarrier.arrive_drop", "state, [addr]"),
        ("mbarrier.arrive_drop.shared::cluster.b64 _, [addr]", "mbarrier.arrive_drop.remote", "_, [addr]"),
        ("mbarrier.arrive_drop.expect_tx.shared::cta.relaxed.cluster.b64", "mbarrier.arrive_drop.expect_tx", "state, [addr], txCount"),
        ("mbarrier.arrive_drop.noComplete.shared.b64", "mbarrier.arrive_drop.noComplete", "state, [addr], count"),
        ("cp.async.mbarrier.arrive.noinc.shared::cta.b64", "cp.async.mbarrier.arrive", "[addr]"),
        ("mbarrier.test_wait.shared.b64", "mbarrier.test_wait", "waitComplete, [addr], state"),
        ("mbarrier.test_wait.parity.shared.b64", "mbarrier.test_wait.parity", "waitComplete, [addr], phaseParity"),
        ("mbarrier.try_wait.relaxed.cluster.shared.b64", "mbarrier.try_wait", "waitComplete, [addr], state"),
        ("mbarrier.try_wait.b64 p, [addr], state, 100", "mbarrier.try_wait.suspendTimeHint", "waitComplete, [addr], state, suspendTimeHint"),
        ("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 complete, [shMem], 0", "mbarrier.try_wait.parity", "waitComplete, [addr], phaseParity"),
        ("mbarrier.pending_count.b64", "mbarrier.pending_count", "count, state"),
    ],
)
def test_manual_forms_parse(text, key, template):
    form = parse(text)
    assert form.family.key == key and form.template == template


@pytest.mark.parametrize(
    ("text", "section", "words"),
    [
        ("mbarrier.arrive.noComplete.relaxed.b64", "9.7.13.15.13", "{.release}{.cta}"),
        ("mbarrier.arrive_drop.noComplete.cluster.b64", "9.7.13.15.14", "{.release}{.cta}"),
        ("mbarrier.test_wait.shared::cluster.b64", "9.7.13.15.8", "not supported"),
        ("mbarrier.init.shared::cluster.b64", "9.7.13.15.8", "not supported"),
        ("mbarrier.expect_tx.release.cta.b64", None, ".release"),
        ("mbarrier.arrive.shared::cluster.b64 state, [addr], count, txCount", None, "operand"),
    ],
)
def test_refused(text, section, words):
    with pytest.raises(IllegalForm) as error:
        parse(text)
    assert words in str(error.value)
    if section is not None:
        assert error.value.section == section


@pytest.mark.parametrize(
    ("text", "ptx", "arch", "allowed"),
    [
        ("mbarrier.arrive.shared.b64", (7, 0), "sm_80", True),
        ("mbarrier.arrive.shared::cta.b64", (7, 7), "sm_80", False),  # "::cta ... introduced in PTX ISA version 7.8"
        ("mbarrier.arrive.b64 s, [a], c", (8, 7), "sm_86", False),  # count without .noComplete: sm_90
        ("mbarrier.arrive.noComplete.b64", (7, 0), "sm_80", True),
        ("mbarrier.arrive.release.cta.b64", (7, 8), "sm_90", False),  # .sem and .scope: PTX ISA 8.0
        ("mbarrier.arrive.relaxed.cta.b64", (8, 5), "sm_90", False),  # .relaxed: PTX ISA 8.6
        ("mbarrier.arrive.release.cluster.b64", (8, 7), "sm_89", False),  # .cluster: sm_90
        ("mbarrier.expect_tx.relaxed.cta.b64", (8, 0), "sm_90", True),
        ("mbarrier.test_wait.parity.b64", (7, 0), "sm_80", False),  # .parity: PTX ISA 7.1
        ("mbarrier.try_wait.b64", (8, 7), "sm_89", False),  # try_wait: sm_90
        ("cp.async.mbarrier.arrive.noinc.b64", (7, 0), "sm_80", True),
    ],
)
def test_target(text, ptx, arch, allowed):
    assert parse(text).admits(ptx, arch) is allowed


def test_the_sink_is_written_as_itself():
    """A remote line's destination is the sink ``_``: written ``_``, declared as no register."""
    form = parse("mbarrier.arrive.shared::cluster.b64 _, [addr], count")
    line = pa.instruction_line(pa.Case(form.family.key, "legal", f"{form.text} {form.template}", form.operands))
    assert line.endswith("mbarrier.arrive.shared::cluster.b64 _, [%addr], %count; }") and "%_" not in line
    plain = parse("mbarrier.expect_tx.shared.b64")
    assert pa.instruction_line(pa.Case(plain.family.key, "legal", plain.text, plain.operands)).endswith("[%addr], %txCount; }")


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------

TARGETS = ("sm_80", "sm_90", "sm_90a", "sm_100a")


def test_generated_forms_agree_with_ptxas(ptxas):
    """Every family's legal combinations at every target and its illegal variants; every
    disagreement is a documented :data:`~ptxspec.conformance.ptxas_agreement.KNOWN` (ptxas wants
    .sem and .scope together, and .relaxed on sm_90)."""
    cases = pa.generate(200, seed=0, families=mbarrier.FAMILIES)
    assert {c.family for c in cases if c.category == "legal"} == set(KEYS)
    outcomes, skipped = pa.compare(cases, TARGETS, ptxas)
    assert not skipped and len(outcomes) > 3500
    unexplained = [r for r in (pa.record(o) for o in outcomes if not o.agree) if pa.explain(r) is None]
    assert unexplained == []
    assert sum(o.agree for o in outcomes) > 2500


#: (text, target, PTX ISA versions): version gates between the versions that introduced the targets.
GATES = [
    ("mbarrier.init.shared::cta.b64", "sm_80", [(7, 7), (7, 8)]),
    ("mbarrier.test_wait.parity.b64", "sm_80", [(7, 0), (7, 1)]),
    ("mbarrier.arrive.release.cta.b64", "sm_90", [(7, 8), (8, 0)]),
    ("mbarrier.arrive.relaxed.cta.b64", "sm_90", [(8, 5), (8, 6)]),
    ("mbarrier.arrive.expect_tx.release.cta.b64", "sm_90", [(7, 8), (8, 0)]),
    ("mbarrier.arrive.release.cta.shared::cluster.b64 _, [addr]", "sm_90", [(7, 8), (8, 0)]),
    ("mbarrier.expect_tx.b64", "sm_90", [(7, 8), (8, 0)]),
]


def test_version_gates_agree_with_ptxas(ptxas):
    for text, arch, versions in GATES:
        form = parse(text)
        case = pa.Case(form.family.key, "legal", f"{form.text} {form.template}" if form.family.operand_syntax else form.text, form.operands)
        for version in versions:
            request = pa.Request(arch, version)
            ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [pa.instruction_line(case)])
            ours, why = pa.catalogue_verdict(case.text, request)
            assert ours == theirs, f"{text} @ {request}: catalogue {ours} ({why}); ptxas {theirs} ({message})"


# ---------------------------------------------------------------------------------------------
# The semantics: the object in shared memory
# ---------------------------------------------------------------------------------------------

A = 8  # the object's offset (and .shared::cta address) in the CTA's shared memory


def _object(state: State, offset: int = A) -> mb.MbarrierState:
    return mb.MbarrierState.decode(int.from_bytes(state.shared[offset : offset + 8], "little"))


def run(text: str, *sources: int, state: State) -> tuple[tuple, State]:
    outcome = execute(text, list(sources), state=state)
    assert outcome.state is not None
    return outcome.results, outcome.state


def initialized(count: int) -> State:
    _, state = run("mbarrier.init.shared::cta.b64", A, count, state=State(shared=bytes(32)))
    return state


def test_init_writes_the_encoded_object_little_endian():
    state = initialized(3)
    assert state.shared[A : A + 8] == mb.init(3).encode().to_bytes(8, "little")
    assert _object(state) == mb.MbarrierState(0, 3, 3, 0)
    assert state.shared[:A] == bytes(A) and state.shared[A + 8 :] == bytes(16)


def test_arrives_complete_a_phase_and_flip_the_parity():
    state = initialized(2)
    (token,), state = run("mbarrier.arrive.shared.b64", A, state=state)
    assert mb.token_phase_parity(token) == 0 and mb.pending_count(token) == 2
    assert run("mbarrier.test_wait.parity.shared.b64", A, 0, state=state)[0] == (0,)
    assert run("mbarrier.test_wait.shared.b64", A, token, state=state)[0] == (0,)
    (_,), state = run("mbarrier.arrive.release.cta.shared.b64", A, state=state)
    assert _object(state) == mb.MbarrierState(1, 2, 2, 0)  # the phase completed: pending reset to expected
    assert run("mbarrier.test_wait.parity.shared.b64", A, 0, state=state)[0] == (1,)
    assert run("mbarrier.test_wait.parity.shared.b64", A, 1, state=state)[0] == (0,)
    assert run("mbarrier.test_wait.shared.b64", A, token, state=state)[0] == (1,)
    # try_wait is test_wait at the instant it is evaluated; suspendTimeHint changes nothing.
    assert run("mbarrier.try_wait.parity.shared.b64 p, [a], q, hint", A, 0, 1000, state=state)[0] == (1,)
    assert run("mbarrier.try_wait.shared.b64", A, token, state=state)[0] == (1,)
    # a count: the phase of 2 expected arrivals completes at once.
    (token,), state = run("mbarrier.arrive.shared.b64 s, [a], c", A, 2, state=state)
    assert mb.token_phase_parity(token) == 1 and _object(state).phase_parity == 0


def test_expect_tx_and_complete_tx_hold_the_phase():
    state = initialized(1)
    _, state = run("mbarrier.expect_tx.relaxed.cta.shared::cta.b64", A, 64, state=state)
    (_,), state = run("mbarrier.arrive.shared.b64", A, state=state)
    assert _object(state) == mb.MbarrierState(0, 0, 1, 64)  # arrived, but 64 bytes are pending
    assert run("mbarrier.test_wait.parity.shared.b64", A, 0, state=state)[0] == (0,)
    _, state = run("mbarrier.complete_tx.shared.b64", A, 48, state=state)
    assert _object(state).phase_parity == 0
    _, state = run("mbarrier.complete_tx.shared.b64", A, 16, state=state)
    assert _object(state) == mb.MbarrierState(1, 1, 1, 0)
    # .expect_tx on the arrive: an expect-tx before an arrive-on of count 1.
    (token,), state = run("mbarrier.arrive.expect_tx.shared.b64", A, 32, state=state)
    assert mb.token_phase_parity(token) == 1 and _object(state) == mb.MbarrierState(1, 0, 1, 32)


def test_arrive_drop_lowers_the_expected_count():
    state = initialized(3)
    (token,), state = run("mbarrier.arrive_drop.shared.b64", A, state=state)
    assert mb.pending_count(token) == 3 and _object(state) == mb.MbarrierState(0, 2, 2, 0)
    (_,), state = run("mbarrier.arrive.shared.b64", A, state=state)
    (_,), state = run("mbarrier.arrive.shared.b64", A, state=state)
    assert _object(state) == mb.MbarrierState(1, 2, 2, 0)  # two arrivals completed it: "for all the subsequent phases"
    (_,), state = run("mbarrier.arrive_drop.shared.b64 s, [a], c", A, 2, state=state)
    assert _object(state) == mb.MbarrierState(0, 0, 0, 0)
    state = initialized(2)
    (_,), state = run("mbarrier.arrive_drop.expect_tx.shared.b64", A, 8, state=state)
    assert _object(state) == mb.MbarrierState(0, 1, 1, 8)


def test_pending_count_of_a_no_complete_token():
    state = initialized(5)
    (token,), state = run("mbarrier.arrive.noComplete.shared.b64", A, 2, state=state)
    assert run("mbarrier.pending_count.b64", token, state=state) == ((5,), state)
    (token,), state = run("mbarrier.arrive_drop.noComplete.shared.b64", A, 1, state=state)
    assert run("mbarrier.pending_count.b64", token, state=state)[0] == (3,)


def test_cp_async_mbarrier_arrive():
    state = initialized(1)
    _, state = run("cp.async.mbarrier.arrive.shared.b64", A, state=state)
    assert _object(state) == mb.MbarrierState(0, 1, 1, 0)  # "zero-net change for the pending count"
    _, state = run("cp.async.mbarrier.arrive.noinc.shared.b64", A, state=state)
    assert _object(state) == mb.MbarrierState(1, 1, 1, 0)  # the arrive-on completed the phase


def test_inval_then_init_again():
    state = initialized(2)
    _, state = run("mbarrier.inval.shared.b64", A, state=state)
    assert state.shared[A : A + 8] == bytes(8)
    with pytest.raises(OperandError, match="not initialized"):
        run("mbarrier.arrive.shared.b64", A, state=state)
    _, state = run("mbarrier.init.b64", State().addresses.shared[0] + A, 4, state=state)  # generic addressing
    assert _object(state) == mb.init(4)


@pytest.mark.parametrize(
    ("text", "sources", "section", "words"),
    [
        ("mbarrier.arrive.shared.b64", (A,), "9.7.13.15", "not initialized"),
        ("mbarrier.test_wait.parity.shared.b64", (A, 0), "9.7.13.15", "not initialized"),
        ("mbarrier.inval.shared.b64", (A,), "9.7.13.15", "not initialized"),
    ],
)
def test_an_uninitialized_object_is_refused(text, sources, section, words):
    with pytest.raises(OperandError) as error:
        run(text, *sources, state=State(shared=bytes(32)))
    assert error.value.section == section and words in str(error.value)


@pytest.mark.parametrize(
    ("text", "sources", "section", "words"),
    [
        ("mbarrier.init.shared.b64", (A, 0), "9.7.13.15.9", "count = 0"),
        ("mbarrier.init.shared.b64", (A, 1 << 20), "9.7.13.15.9", "2^20 - 1"),
        ("mbarrier.arrive.noComplete.shared.b64", (A, 2), "9.7.13.15.13", ".noComplete must not"),
        ("mbarrier.arrive.shared.b64 s, [a], c", (A, 3), "9.7.13.15.13", "3 with 2 pending"),
        ("mbarrier.arrive_drop.shared.b64 s, [a], c", (A, 3), "9.7.13.15.14", "dropping 3 of 2"),
        ("mbarrier.complete_tx.shared.b64", (A, 1 << 20), "9.7.13.15.5", "tx-count"),
        ("mbarrier.test_wait.parity.shared.b64", (A, 2), "9.7.13.15.16", "phaseParity is 0 or 1"),
        ("mbarrier.arrive.shared.b64", (A + 4,), "6.4.1", "aligned"),
        ("mbarrier.arrive.b64", (0x1000,), "9.7.13.15.13", ".global memory"),  # generic: not shared memory
    ],
)
def test_undefined_operations_are_refused_with_the_rule(text, sources, section, words):
    state = attrs.evolve(initialized(2), global_memory=Segment(0, bytes(0x2000)))
    with pytest.raises(OperandError) as error:
        run(text, *sources, state=state)
    assert error.value.section == section and words in str(error.value), str(error.value)
    assert error.value.where is not None


# ---------------------------------------------------------------------------------------------
# Another CTA's object (.shared::cluster)
# ---------------------------------------------------------------------------------------------

CLUSTER = AddressMap(cta_rank=0, cluster_ctas=2)
REMOTE = CLUSTER.cluster_base + 1 * CLUSTER.cluster_stride + A  # CTA 1's object, as a .shared::cluster address


def _cluster_state(count: int = 2) -> State:
    remote = bytes(A) + mb.init(count).encode().to_bytes(8, "little") + bytes(16)
    return State(shared=bytes(32), addresses=CLUSTER, cluster=((1, remote),))


def _remote_object(state: State) -> mb.MbarrierState:
    ((rank, data),) = state.cluster
    assert rank == 1
    return mb.MbarrierState.decode(int.from_bytes(data[A : A + 8], "little"))


def test_a_remote_arrive_reaches_another_ctas_object():
    state = _cluster_state(2)
    results, state = run("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a]", REMOTE, state=state)
    assert results == () and _remote_object(state) == mb.MbarrierState(0, 1, 2, 0)
    assert state.shared == bytes(32)  # this CTA's shared memory is untouched
    results, state = run("mbarrier.arrive.expect_tx.shared::cluster.b64", REMOTE, 16, state=state)
    assert results == () and _remote_object(state) == mb.MbarrierState(0, 0, 2, 16)
    _, state = run("mbarrier.complete_tx.shared::cluster.b64", REMOTE, 16, state=state)
    assert _remote_object(state) == mb.MbarrierState(1, 2, 2, 0)
    results, state = run("mbarrier.arrive_drop.shared::cluster.b64 _, [a], c", REMOTE, 1, state=state)
    assert results == () and _remote_object(state) == mb.MbarrierState(1, 1, 1, 0)
    # expect_tx with generic addressing: the shared window holds the .shared::cluster space.
    _, state = run("mbarrier.expect_tx.b64", CLUSTER.shared[0] + REMOTE, 4, state=state)
    assert _remote_object(state).tx_count == 4


@pytest.mark.parametrize(
    "text",
    ["mbarrier.arrive.b64", "mbarrier.test_wait.parity.b64"],  # a line that returns a value, or waits
)
def test_a_generic_address_in_another_cta_is_refused_where_the_line_needs_this_ctas(text):
    form = parse(text)
    sources = [CLUSTER.shared[0] + REMOTE] + [0] * (len(form.inputs) - 1)
    with pytest.raises(OperandError, match="rank 1") as error:
        run(text, *sources, state=_cluster_state())
    assert error.value.section == form.family.section


def test_shared_cta_does_not_reach_another_cta():
    with pytest.raises(OperandError, match="shared::cta window"):
        run("mbarrier.arrive.shared::cta.b64", REMOTE, state=_cluster_state())


# ---------------------------------------------------------------------------------------------
# The litmus model's lowering and these functions agree
# ---------------------------------------------------------------------------------------------

#: (instruction text, its sources after addr, the litmus op, its qualifiers): the same operation.
OPERATIONS = [
    ("mbarrier.init.shared.b64", lambda r, token: [r.randint(0, 3)], "init", ()),
    ("mbarrier.arrive.shared.b64", lambda r, token: [], "arrive", ()),
    ("mbarrier.arrive.shared.b64 s, [a], c", lambda r, token: [r.randint(1, 3)], "arrive", ()),
    ("mbarrier.arrive.expect_tx.shared.b64", lambda r, token: [r.randint(0, 4)], "arrive", ("expect_tx",)),
    ("mbarrier.arrive.noComplete.shared.b64", lambda r, token: [r.randint(1, 2)], "arrive", ("noComplete",)),
    ("mbarrier.arrive_drop.shared.b64 s, [a], c", lambda r, token: [r.randint(1, 2)], "arrive_drop", ()),
    ("mbarrier.arrive_drop.noComplete.shared.b64", lambda r, token: [1], "arrive_drop", ("noComplete",)),
    ("mbarrier.expect_tx.shared.b64", lambda r, token: [r.randint(0, 4)], "expect_tx", ()),
    ("mbarrier.complete_tx.shared.b64", lambda r, token: [r.randint(0, 4)], "complete_tx", ()),
    ("mbarrier.test_wait.parity.shared.b64", lambda r, token: [r.randint(0, 1)], "test_wait", ("parity",)),
    ("mbarrier.try_wait.shared.b64", lambda r, token: [token], "try_wait", ()),
]


@pytest.mark.parametrize("seed", range(4))
def test_lowering_and_instructions_agree(seed):
    """Random sequences of mbarrier instructions: each gives the result and leaves the encoded
    object that :func:`~ptxspec.memory_model.lowering.mbarrier_written` gives for the same
    operation, and each that the lowering finds undefined is refused."""
    r = random.Random(seed)
    state, token, steps = State(shared=bytes(24)), 0, 0
    for _ in range(150):
        text, make, op, qualifiers = r.choice(OPERATIONS)
        operands = make(r, token)
        old = int.from_bytes(state.shared[A : A + 8], "little")
        result, written, undefined = lowering.mbarrier_written(op, old, tuple(operands), qualifiers)
        if undefined is not None:
            with pytest.raises(OperandError):
                run(text, A, *operands, state=state)
            continue
        results, state = run(text, A, *operands, state=state)
        steps += 1
        new = int.from_bytes(state.shared[A : A + 8], "little")
        assert new == (old if written is None else written), text
        if results:
            assert results == (result,), text
            token = result if op.startswith("arrive") else token
    assert steps > 30


def test_cp_async_arrive_is_the_lowerings_increment_and_arrive_on():
    state = initialized(2)
    old = int.from_bytes(state.shared[A : A + 8], "little")
    _, incremented, _ = lowering.mbarrier_written("increment_pending", old, ())
    assert incremented is not None
    _, arrived, _ = lowering.mbarrier_written("arrive", incremented, (1,))
    _, state = run("cp.async.mbarrier.arrive.shared.b64", A, state=state)
    assert int.from_bytes(state.shared[A : A + 8], "little") == arrived
    _, noinc, _ = lowering.mbarrier_written("arrive", arrived, (1,))
    _, state = run("cp.async.mbarrier.arrive.noinc.shared.b64", A, state=state)
    assert int.from_bytes(state.shared[A : A + 8], "little") == noinc
