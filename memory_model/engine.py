"""What an engine returns, and the final condition evaluated on a final state.

Both interpreters of the model (``explicit.py``, ``z3_engine.py``) implement one function::

    def run(program: Program, model: Model, *, timeout_s: float | None = None,
            want_witness: bool = False, want_why: bool = False) -> EngineResult

and return an :class:`EngineResult`. The helpers below decide herd's ``Ok`` from the final states
of the consistent executions, so that both engines (and the command line) read a condition the
same way.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import attrs

from .program import (
    MASK,
    And,
    Compare,
    Condition,
    Constant,
    Event,
    Formula,
    LocationTerm,
    Not,
    Or,
    Program,
    RegisterTerm,
    Term,
    Trace,
    TrueFormula,
)

State = tuple[tuple[Term, int], ...]
"""A final state: the value of each observed term, in the order of :attr:`Program.observed`."""


@attrs.frozen
class Execution:
    """One consistent candidate execution, concrete."""

    traces: tuple[Trace, ...]
    """The chosen trace per thread."""
    events: tuple[Event, ...]
    """Initial writes and the events of the chosen traces."""
    relations: Mapping[str, frozenset[tuple[int, int]]]
    """At least ``po``, ``rf``, ``co``, ``sc`` and every Definition of the model, by name (eid pairs)."""
    final: Mapping[Term, int]
    """Value of each observed term (:attr:`Program.observed`)."""


@attrs.frozen
class EngineResult:
    engine: str
    """``"explicit"`` or ``"z3"``."""
    states: frozenset[State] | None
    """Distinct final states of consistent executions; None when undecided (timeout)."""
    ok: bool | None
    """herd's Ok: exists -> some state satisfies; ~exists -> none does; forall -> all do. None = Unknown."""
    positive: int | None
    """Number of states satisfying the formula."""
    negative: int | None
    """Number of states not satisfying the formula."""
    witness: Execution | None
    """When asked: one consistent execution satisfying the formula (for ~exists / forall: one violating it)."""
    why: tuple[str, ...] | None
    """When asked and the condition's outcome is forbidden: names of axioms that rule it out."""
    candidates: int | None
    """How many candidate executions were examined (explicit engine)."""
    time_s: float


# ---- the final condition -------------------------------------------------------------------------


def term_value(term: Term, final: Mapping[Term, int]) -> int:
    """The value of a term in a final state (constants stand for themselves, 64-bit wrapping)."""
    if isinstance(term, Constant):
        return term.value & MASK
    return final[term] & MASK


def holds(formula: Formula, final: Mapping[Term, int]) -> bool:
    """Does ``formula`` hold in the final state ``final`` (a value for every observed term)?"""
    if isinstance(formula, TrueFormula):
        return True
    if isinstance(formula, Compare):
        left = term_value(formula.left, final)
        right = term_value(formula.right, final)
        if formula.op == "==":
            return left == right
        if formula.op == "!=":
            return left != right
        raise ValueError(f"unknown comparison {formula.op!r}")
    if isinstance(formula, Not):
        return not holds(formula.operand, final)
    if isinstance(formula, And):
        return all(holds(item, final) for item in formula.operands)
    if isinstance(formula, Or):
        return any(holds(item, final) for item in formula.operands)
    raise TypeError(f"not a formula: {formula!r}")


def state_holds(formula: Formula, state: State) -> bool:
    """:func:`holds` on a state given as ``((term, value), ...)``."""
    return holds(formula, dict(state))


def wanted(condition: Condition) -> bool:
    """The truth value of the formula that the witness must show.

    For ``exists`` the witness satisfies the formula; for ``~exists`` and ``forall`` it is a
    counter-example, so it violates (``forall``) or satisfies (``~exists``) it: ``~exists`` is
    refuted by a state satisfying the formula, ``forall`` by one violating it.
    """
    return condition.quantifier != "forall"


def forbidden_outcome(condition: Condition) -> bool:
    """The truth value of the formula whose states the condition asks about being absent.

    ``exists P``: the interesting outcome is P (why it cannot happen, when it cannot);
    ``~exists P``: P; ``forall P``: not P.
    """
    return condition.quantifier != "forall"


def count(formula: Formula, states: Iterable[State]) -> tuple[int, int]:
    """(positive, negative): how many states satisfy / do not satisfy ``formula``."""
    positive = negative = 0
    for state in states:
        if state_holds(formula, state):
            positive += 1
        else:
            negative += 1
    return positive, negative


def ok_of(condition: Condition, positive: int, negative: int) -> bool:
    """herd's ``Ok``: exists -> some state satisfies; ~exists -> none does; forall -> all do."""
    if condition.quantifier == "exists":
        return positive > 0
    if condition.quantifier == "~exists":
        return positive == 0
    if condition.quantifier == "forall":
        return negative == 0
    raise ValueError(f"unknown quantifier {condition.quantifier!r}")


def judge(condition: Condition, states: Iterable[State]) -> tuple[bool, int, int]:
    """(ok, positive, negative) for the final states of the consistent executions."""
    positive, negative = count(condition.formula, states)
    return ok_of(condition, positive, negative), positive, negative


def rests_on_bound(condition: Condition, ok: bool) -> bool:
    """Could a larger unrolling bound change this answer (when some path was cut)?

    The states found are those of executions within the bound; more may exist beyond it. An answer
    that a found state proves stands (exists: Ok; ~exists and forall: No); an answer that claims no
    state has some property (exists: No; ~exists and forall: Ok) holds only within the bound."""
    return ok == (condition.quantifier != "exists")


def undecided(engine: str, time_s: float, candidates: int | None = None) -> EngineResult:
    """The result of a run that ran out of time: Unknown, never a guess."""
    return EngineResult(
        engine=engine,
        states=None,
        ok=None,
        positive=None,
        negative=None,
        witness=None,
        why=None,
        candidates=candidates,
        time_s=time_s,
    )


def final_values(
    program: Program,
    traces: Iterable[Trace],
    last_write: Mapping[str, Event],
) -> dict[Term, int]:
    """The value of each observed term: registers from the chosen traces, locations from the
    co-last write to their physical location (``last_write`` maps physical location -> event)."""
    registers: dict[tuple[int, str], int] = {}
    for trace in traces:
        for name, value in trace.registers.items():
            registers[(trace.thread, name)] = value
    final: dict[Term, int] = {}
    for term in program.observed:
        if isinstance(term, RegisterTerm):
            final[term] = registers.get((term.thread, term.register), 0) & MASK
        elif isinstance(term, LocationTerm):
            address = program.addresses.get(term.name)
            physical = address.physical if address is not None else term.name
            write = last_write.get(physical)
            # A location nobody writes and the test does not initialise holds 0 (§8.2.6: "an
            # unknown but constant value"; herd and the front end take 0).
            final[term] = (write.write_value or 0) & MASK if write is not None else 0
        elif isinstance(term, Constant):
            final[term] = term.value & MASK
    return final


def state_of(program: Program, final: Mapping[Term, int]) -> State:
    """The final state as a tuple in the order of :attr:`Program.observed`."""
    return tuple((term, final[term]) for term in program.observed)
