"""Catalogue entries for the mbarrier instructions of §9.7.13.15 (PTX ISA 8.7).

One :class:`~ptxspec.spec.catalogue.Family` per syntax line of §9.7.13.15.9-17. A line with an
optional operand that no qualifier announces (``{, count}`` of mbarrier.arrive and arrive_drop,
``{, suspendTimeHint}`` of try_wait) is two families, with and without it: the catalogue's operands
follow from the qualifiers, and the count changes the target ("Support for count argument without
the modifier .noComplete requires sm_90 or higher"). They share qualifiers, so their
:attr:`~ptxspec.spec.catalogue.Family.operand_syntax` tells them apart: ``parse("mbarrier.arrive.b64
state, [addr], count")`` is ``mbarrier.arrive.count``; without a template the first (no count).

============================================  ============  =================================================================================================
key                                           section       syntax
============================================  ============  =================================================================================================
``mbarrier.init``                             9.7.13.15.9   ``mbarrier.init{.shared{::cta}}.b64 [addr], count``
``mbarrier.inval``                            9.7.13.15.10  ``mbarrier.inval{.shared{::cta}}.b64 [addr]``
``mbarrier.expect_tx``                        9.7.13.15.11  ``mbarrier.expect_tx{.sem}{.scope}{.space}.b64 [addr], txCount``
``mbarrier.complete_tx``                      9.7.13.15.12  ``mbarrier.complete_tx{.sem}{.scope}{.space}.b64 [addr], txCount``
``mbarrier.arrive``                           9.7.13.15.13  ``mbarrier.arrive{.sem}{.scope}{.shared{::cta}}.b64 state, [addr]``
``mbarrier.arrive.count``                     9.7.13.15.13  the same line with ``{, count}``
``mbarrier.arrive.remote``                    9.7.13.15.13  ``mbarrier.arrive{.sem}{.scope}{.shared::cluster}.b64 _, [addr]``
``mbarrier.arrive.remote.count``              9.7.13.15.13  the same line with ``{,count}``
``mbarrier.arrive.expect_tx``                 9.7.13.15.13  ``mbarrier.arrive.expect_tx{.sem}{.scope}{.shared{::cta}}.b64 state, [addr], txCount``
``mbarrier.arrive.expect_tx.remote``          9.7.13.15.13  ``mbarrier.arrive.expect_tx{.sem}{.scope}{.shared::cluster}.b64 _, [addr], txCount``
``mbarrier.arrive.noComplete``                9.7.13.15.13  ``mbarrier.arrive.noComplete{.release}{.cta}{.shared{::cta}}.b64 state, [addr], count``
``mbarrier.arrive_drop...``                   9.7.13.15.14  the five lines of arrive_drop, keyed as arrive's seven (its ``.expect_tx``
                                                            lines write ``{.shared{::cta}}{.sem}{.scope}``, the space first)
``cp.async.mbarrier.arrive``                  9.7.13.15.15  ``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]``
``mbarrier.test_wait``                        9.7.13.15.16  ``mbarrier.test_wait{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], state``
``mbarrier.test_wait.parity``                 9.7.13.15.16  ``mbarrier.test_wait.parity{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], phaseParity``
``mbarrier.try_wait``                         9.7.13.15.16  ``mbarrier.try_wait{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], state``
``mbarrier.try_wait.suspendTimeHint``         9.7.13.15.16  the same line with ``{, suspendTimeHint}``
``mbarrier.try_wait.parity``                  9.7.13.15.16  ``mbarrier.try_wait.parity{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], phaseParity``
``mbarrier.try_wait.parity.suspendTimeHint``  9.7.13.15.16  the same line with ``{, suspendTimeHint}``
``mbarrier.pending_count``                    9.7.13.15.17  ``mbarrier.pending_count.b64 count, state``
============================================  ============  =================================================================================================

Slots: the operation (``init``, ``arrive``, ... a required slot of its own name, as tcgen05's),
``expect_tx``, ``noComplete``, ``parity``, ``noinc``, ``sem``, ``scope``, ``ss`` (the state space as
written: ``shared``, ``shared::cta``, ``shared::cluster``) and ``type`` (``.b64``: "the mbarrier
object is an opaque object with type .b64", §9.7.13.15.1). cp.async.mbarrier.arrive has the opcode
``cp`` and the required slots ``async``, ``mbarrier``, ``arrive``.

Operands: the object's address ``addr`` (``u64``, written ``[addr]``); ``count``, ``txCount``,
``phaseParity`` and ``suspendTimeHint`` (``u32``: "the 32-bit unsigned integer operand ...");
the state token ``state`` (``b64``: "an opaque 64-bit register"); the wait's result
``waitComplete`` (``pred``). The lines whose object is in another CTA's shared memory write the sink
``_`` as their destination ("cannot return a value. Sink symbol '_' must be used for the destination
operand for such cases"): an operand named ``_``, never read and never written. The remote lines'
``{.shared::cluster}`` is optional as the manual writes it, but a text without it is the first
line's (a template cannot tell ``state`` from ``_``): the remote families are reached with
``.shared::cluster``.

The slots list the manual's tokens only (``ptxspec forms mbarrier`` shows the syntax lines); a text
that a line refuses is explained in the manual's words by :func:`explain_refusal` (``.noComplete``
with ``.relaxed`` or ``.cluster``; ``.shared::cluster`` on the operations that §9.7.13.15.8 does not
support there). Where ptxas (CUDA 13.0) differs -- it takes a ``.sem`` only with a ``.scope`` and the
reverse, and ``.relaxed`` only from sm_90 -- the catalogue follows the manual and the difference is
in :data:`ptxspec.conformance.ptxas_agreement.KNOWN`. The semantics are in
:mod:`ptxspec.semantics.mbarrier`.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import SM_INTRODUCED_IN, Catalogue, Family, Form, Operand, Slot, Target

MBARRIER = "9.7.13.15"
SHARED_SUPPORT = "9.7.13.15.8"
INIT = "9.7.13.15.9"
INVAL = "9.7.13.15.10"
EXPECT_TX = "9.7.13.15.11"
COMPLETE_TX = "9.7.13.15.12"
ARRIVE = "9.7.13.15.13"
ARRIVE_DROP = "9.7.13.15.14"
CP_ASYNC_ARRIVE = "9.7.13.15.15"
TEST_WAIT = "9.7.13.15.16"
PENDING_COUNT = "9.7.13.15.17"

#: ".sem = { .release, .relaxed }" (arrive, arrive_drop); ".sem = { .acquire, .relaxed }"
#: (test_wait, try_wait); ".sem = { .relaxed }" (expect_tx, complete_tx).
RELEASE_SEMS = ("release", "relaxed")
ACQUIRE_SEMS = ("acquire", "relaxed")
#: ".scope = { .cta, .cluster }" (every line that has a scope).
SCOPES = ("cta", "cluster")
CTA_SPACES = ("shared", "shared::cta")  # "{.shared{::cta}}"
ALL_SPACES = ("shared", "shared::cta", "shared::cluster")  # ".space = { .shared{::cta}, .shared::cluster }"

B64 = Slot("type", ("b64",), required=True)
ADDR = Operand("addr", "u64")
COUNT = Operand("count", "u32")
TX_COUNT = Operand("txCount", "u32")
STATE = Operand("state", "b64", destination=True)
SINK = Operand("_", "b64", destination=True)
HINT = Operand("suspendTimeHint", "u32")


def _word(word: str) -> Slot:
    """A token that names the operation or the line (``arrive``, ``expect_tx``): a required slot."""
    return Slot(word, (word,), required=True)


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------

Need = tuple[tuple[int, int], int]


def _latest(needs: list[Need]) -> Target:
    """Every requirement at once: the latest PTX ISA version and the highest architecture, the
    version raised to the one that introduced that architecture (§11.1.2)."""
    ptx = max(n[0] for n in needs)
    sm = max(n[1] for n in needs)
    return Target(max(ptx, SM_INTRODUCED_IN.get(sm, (1, 0))), sm)


def _qualifier_needs(form: Form, *, relaxed_since: tuple[int, int] = (8, 6)) -> list[Need]:
    """The notes the sections share: "Support for sub-qualifier ::cta on .shared introduced in PTX
    ISA version 7.8"; "Support for sub-qualifier ::cluster introduced in PTX ISA version 8.0" and
    "Sub-qualifier ::cluster requires sm_90 or higher"; "Support for .scope and .sem qualifiers
    introduced in PTX ISA version 8.0"; "Support for .relaxed qualifier introduced in PTX ISA
    version 8.6"; "Support for .cluster scope requires sm_90 or higher"."""
    needs: list[Need] = []
    ss = form.get("ss")
    if ss == "shared::cta":
        needs.append(((7, 8), 80))
    if ss == "shared::cluster":
        needs.append(((8, 0), 90))
    if form.get("sem") is not None or form.get("scope") is not None:
        needs.append(((8, 0), 80))
    if form.get("sem") == "relaxed":
        needs.append((relaxed_since, 80))
    if form.get("scope") == "cluster":
        needs.append(((8, 0), 90))
    return needs


def _target(*base: Need, relaxed_since: tuple[int, int] = (8, 6)) -> Callable[[Form], Target]:
    """The form's target: the line's own notes (``base``) and those of its qualifiers."""

    def target(form: Form) -> Target:
        return _latest([*base, *_qualifier_needs(form, relaxed_since=relaxed_since)])

    return target


#: "Introduced in PTX ISA version 7.0." "Requires sm_80 or higher."
INTRODUCED: Need = ((7, 0), 80)
#: §9.7.13.15.11-12: "Introduced in PTX ISA version 8.0." "Requires sm_90 or higher."
TX: Need = ((8, 0), 90)
#: "Support for count argument without the modifier .noComplete introduced in PTX ISA version 7.8";
#: "Support for count argument without the modifier .noComplete requires sm_90 or higher."
COUNT_WITHOUT_NO_COMPLETE: Need = ((7, 8), 90)
#: §9.7.13.15.13: "Support for sink symbol '_' as the destination operand is introduced in PTX ISA version 7.1."
SINK_NEED: Need = ((7, 1), 80)


# ---------------------------------------------------------------------------------------------
# §9.7.13.15.9-12 init, inval, expect_tx, complete_tx
# ---------------------------------------------------------------------------------------------

MBARRIER_INIT = Family(
    opcode="mbarrier",
    key="mbarrier.init",
    section=INIT,
    slots=(_word("init"), Slot("ss", CTA_SPACES), B64),
    operands=lambda f: (ADDR, COUNT),  # "the unsigned 32-bit integer count"
    target=_target(INTRODUCED),
    summary="Initialize the mbarrier object at [addr]: phase 0, expected and pending arrival counts count, tx-count 0.",
    addresses=("addr",),
)

MBARRIER_INVAL = Family(
    opcode="mbarrier",
    key="mbarrier.inval",
    section=INVAL,
    slots=(_word("inval"), Slot("ss", CTA_SPACES), B64),
    operands=lambda f: (ADDR,),
    target=_target(INTRODUCED),
    summary="Invalidate the mbarrier object at [addr], so that its memory may be used for another purpose.",
    addresses=("addr",),
)


def _tx_family(operation: str, section: str, summary: str) -> Family:
    """``mbarrier.{expect_tx,complete_tx}{.sem}{.scope}{.space}.b64 [addr], txCount``: ".sem = {
    .relaxed }", ".scope = { .cta, .cluster }", ".space = { .shared{::cta}, .shared::cluster }"
    ("the 32-bit unsigned integer operand txCount"). Their .relaxed came with the instructions
    (PTX ISA 8.0)."""
    return Family(
        opcode="mbarrier",
        key=f"mbarrier.{operation}",
        section=section,
        slots=(_word(operation), Slot("sem", ("relaxed",)), Slot("scope", SCOPES), Slot("ss", ALL_SPACES), B64),
        operands=lambda f: (ADDR, TX_COUNT),
        target=_target(TX, relaxed_since=(8, 0)),
        summary=summary,
        addresses=("addr",),
    )


MBARRIER_EXPECT_TX = _tx_family("expect_tx", EXPECT_TX, "Expect-tx: increase the tx-count of the mbarrier object at [addr] by txCount.")
MBARRIER_COMPLETE_TX = _tx_family(
    "complete_tx", COMPLETE_TX, "Complete-tx: decrease the tx-count of the mbarrier object at [addr] by txCount (the phase may complete)."
)


# ---------------------------------------------------------------------------------------------
# §9.7.13.15.13-14 arrive, arrive_drop
# ---------------------------------------------------------------------------------------------


def _arrive_families(operation: str, section: str) -> list[Family]:
    """The five lines of ``mbarrier.{operation}`` (arrive or arrive_drop), the two with ``{, count}``
    split in two."""
    drop = operation == "arrive_drop"
    what = "Decrement the expected arrival count by count, then arrive-on" if drop else "Arrive-on"
    sem, scope = Slot("sem", RELEASE_SEMS), Slot("scope", SCOPES)
    cta, cluster = Slot("ss", CTA_SPACES), Slot("ss", ("shared::cluster",))
    sink_need = [] if drop else [SINK_NEED]  # arrive_drop's notes have no sink note: its sink is as old as it

    def family(key: str, slots: tuple[Slot, ...], operands: tuple[Operand, ...], needs: list[Need], summary: str, syntax: str = "") -> Family:
        return Family(
            opcode="mbarrier",
            key=key,
            section=section,
            slots=(_word(operation), *slots, B64),
            operands=lambda f: operands,
            target=_target(*needs),
            summary=summary,
            operand_syntax=syntax,
            addresses=("addr",),
        )

    # "mbarrier.arrive_drop.expect_tx{.shared{::cta}}{.sem}{.scope}.b64": the space first.
    tx_order = (lambda s: (s, sem, scope)) if drop else (lambda s: (sem, scope, s))
    base = f"mbarrier.{operation}"
    return [
        family(
            base,
            (sem, scope, cta),
            (STATE, ADDR),
            [INTRODUCED],
            f"{what} (count 1) on the mbarrier object at [addr], returning its phase as state.",
            "state, [addr]",
        ),
        family(
            f"{base}.count",
            (sem, scope, cta),
            (STATE, ADDR, COUNT),
            [INTRODUCED, COUNT_WITHOUT_NO_COMPLETE],
            f"{what} with count on the mbarrier object at [addr], returning its phase as state.",
            "state, [addr], count",
        ),
        family(
            f"{base}.remote",
            (sem, scope, cluster),
            (SINK, ADDR),
            [INTRODUCED, *sink_need],
            f"{what} (count 1) on an mbarrier object in the cluster's shared memory; no result (the sink _).",
            "_, [addr]",
        ),
        family(
            f"{base}.remote.count",
            (sem, scope, cluster),
            (SINK, ADDR, COUNT),
            [INTRODUCED, *sink_need, COUNT_WITHOUT_NO_COMPLETE],
            f"{what} with count on an mbarrier object in the cluster's shared memory; no result (the sink _).",
            "_, [addr], count",
        ),
        family(
            f"{base}.expect_tx",
            (_word("expect_tx"), *tx_order(cta)),
            (STATE, ADDR, TX_COUNT),
            [TX],
            f"Expect-tx of txCount, then {what.lower()} (count 1) on the mbarrier object at [addr], returning its phase as state.",
        ),
        family(
            f"{base}.expect_tx.remote",
            (_word("expect_tx"), *tx_order(cluster)),
            (SINK, ADDR, TX_COUNT),
            [TX],
            f"Expect-tx of txCount, then {what.lower()} (count 1) on an mbarrier object in the cluster's shared memory; no result.",
        ),
        family(
            f"{base}.noComplete",
            (_word("noComplete"), Slot("sem", ("release",)), Slot("scope", ("cta",)), cta),
            (STATE, ADDR, COUNT),
            [INTRODUCED],
            f"{what} with count that must not complete the phase, returning the phase and pending count as state.",
        ),
    ]


ARRIVE_FAMILIES = _arrive_families("arrive", ARRIVE)
ARRIVE_DROP_FAMILIES = _arrive_families("arrive_drop", ARRIVE_DROP)


# ---------------------------------------------------------------------------------------------
# §9.7.13.15.15 cp.async.mbarrier.arrive
# ---------------------------------------------------------------------------------------------

CP_ASYNC_MBARRIER_ARRIVE = Family(
    opcode="cp",
    key="cp.async.mbarrier.arrive",
    section=CP_ASYNC_ARRIVE,
    slots=(_word("async"), _word("mbarrier"), _word("arrive"), Slot("noinc", ("noinc",)), Slot("ss", CTA_SPACES), B64),
    operands=lambda f: (ADDR,),
    target=_target(INTRODUCED),
    summary="Arrive-on the mbarrier object at [addr] when the thread's prior cp.async operations complete (first incrementing the pending count, unless .noinc).",
    addresses=("addr",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.13.15.16 test_wait, try_wait; §9.7.13.15.17 pending_count
# ---------------------------------------------------------------------------------------------

#: "mbarrier.test_wait requires sm_80 or higher"; "Modifier .parity is introduced in PTX ISA version 7.1".
PARITY: Need = ((7, 1), 80)
#: "mbarrier.try_wait introduced in PTX ISA version 7.8"; "mbarrier.try_wait requires sm_90 or higher".
TRY_WAIT: Need = ((7, 8), 90)


def _wait_family(operation: str, parity: bool, hint: bool) -> Family:
    """``mbarrier.{test_wait,try_wait}{.parity}{.sem}{.scope}{.shared{::cta}}.b64 waitComplete,
    [addr], state|phaseParity{, suspendTimeHint}``: ".sem = { .acquire, .relaxed }", ".scope = {
    .cta, .cluster }"."""
    phase = Operand("phaseParity", "u32") if parity else Operand("state", "b64")
    operands = (Operand("waitComplete", "pred", destination=True), ADDR, phase, *((HINT,) if hint else ()))
    key = f"mbarrier.{operation}" + (".parity" if parity else "") + (".suspendTimeHint" if hint else "")
    needs = [INTRODUCED, *([PARITY] if parity else []), *([TRY_WAIT] if operation == "try_wait" else [])]
    syntax = ""
    if operation == "try_wait":
        syntax = f"waitComplete, [addr], {phase.name}" + (", suspendTimeHint" if hint else "")
    test = "the phase whose parity is phaseParity" if parity else "the phase of state"
    blocking = ", suspending the thread a while if it is not (at most suspendTimeHint ns)" if hint else ""
    if operation == "try_wait" and not hint:
        blocking = ", possibly suspending the thread a while if it is not"
    return Family(
        opcode="mbarrier",
        key=key,
        section=TEST_WAIT,
        slots=(_word(operation), *((_word("parity"),) if parity else ()), Slot("sem", ACQUIRE_SEMS), Slot("scope", SCOPES), Slot("ss", CTA_SPACES), B64),
        operands=lambda f: operands,
        target=_target(*needs),
        summary=f"waitComplete = whether {test} of the mbarrier object at [addr] has completed{blocking}.",
        operand_syntax=syntax,
        addresses=("addr",),
    )


WAIT_FAMILIES = [
    _wait_family("test_wait", False, False),
    _wait_family("test_wait", True, False),
    _wait_family("try_wait", False, False),
    _wait_family("try_wait", False, True),
    _wait_family("try_wait", True, False),
    _wait_family("try_wait", True, True),
]

MBARRIER_PENDING_COUNT = Family(
    opcode="mbarrier",
    key="mbarrier.pending_count",
    section=PENDING_COUNT,
    slots=(_word("pending_count"), B64),
    # "The destination register count is a 32-bit unsigned integer"; "The state operand is a 64-bit register".
    operands=lambda f: (Operand("count", "u32", destination=True), Operand("state", "b64")),
    target=_target(INTRODUCED),
    summary="count = the pending arrival count before the arrive-on (.noComplete) whose state this is.",
)


FAMILIES: list[Family] = [
    MBARRIER_INIT,
    MBARRIER_INVAL,
    MBARRIER_EXPECT_TX,
    MBARRIER_COMPLETE_TX,
    *ARRIVE_FAMILIES,
    *ARRIVE_DROP_FAMILIES,
    CP_ASYNC_MBARRIER_ARRIVE,
    *WAIT_FAMILIES,
    MBARRIER_PENDING_COUNT,
]


#: §9.7.13.15.8: the operations supported on an object in ``.shared::cluster`` ("mbarrier.arrive:
#: supported, cannot return result"; "mbarrier.expect_tx", "mbarrier.complete_tx": supported; "Other
#: mbarrier operations": not supported).
CLUSTER_OPERATIONS = ("arrive", "arrive_drop", "expect_tx", "complete_tx")


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` for mbarrier, in the manual's
    words where the nearest line would only say which qualifier it does not take:

    * ``.shared::cluster`` on an operation that §9.7.13.15.8 does not support there (init, inval,
      test_wait, try_wait, pending_count);
    * ``.noComplete`` with ``.relaxed``, ``.cluster``, ``.shared::cluster`` or ``.expect_tx``: its
      line is ``mbarrier.arrive.noComplete{.release}{.cta}{.shared{::cta}}.b64 state, [addr], count``.

    Texts of other opcodes (``cp``) get None: this chapter explains nothing of them."""
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    opcode, *tokens = head.split(".")
    if opcode != "mbarrier" or not tokens:
        return None
    operation = tokens[0]
    if "shared::cluster" in tokens and operation not in CLUSTER_OPERATIONS:
        return (
            f"mbarrier.{operation} does not take .shared::cluster: §{SHARED_SUPPORT} supports only mbarrier.arrive, "
            '.arrive_drop, .expect_tx and .complete_tx on an object in .shared::cluster ("Other mbarrier operations": "not supported")',
            SHARED_SUPPORT,
        )
    if operation in ("arrive", "arrive_drop") and "noComplete" in tokens:
        section = ARRIVE if operation == "arrive" else ARRIVE_DROP
        line = f"mbarrier.{operation}.noComplete{{.release}}{{.cta}}{{.shared{{::cta}}}}.b64 state, [addr], count"
        bad = [t for t in tokens if t in ("relaxed", "cluster", "shared::cluster", "expect_tx")]
        if bad:
            return f'.{bad[0]} is not allowed with .noComplete: its syntax line is "{line}"', section
    return None
