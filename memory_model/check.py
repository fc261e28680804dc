"""Checking a litmus test: run the interpreters of the model, compare them, and produce a verdict.

The model of §8 is written once (``ptx.py``) and read by two independent interpreters: Z3 over
symbolic candidate executions (``z3_engine.py``) and an explicit enumerator over concrete ones
(``explicit.py``). :func:`check` runs one or both on a :class:`~.program.Program`. With both, their
answers must be the same: the same ``Ok`` and the same set of final states. A difference is not a
verdict but a bug in one of them, reported as :class:`EngineDisagreement` with both results (and
an execution from each) so that the culprit can be found.

A verdict is herd7's: ``Ok`` when the test's final condition holds under the model (``exists``:
some consistent execution satisfies the formula; ``~exists``: none does; ``forall``: all do),
``No`` when it does not, and ``Unknown`` when no engine decided within its time limit; an
undecided test is never guessed.
"""

from __future__ import annotations

import importlib
import time
from typing import Mapping

import attrs

from ptxspec.spec.errors import PtxSpecError

from .engine import EngineResult, Execution, State, rests_on_bound
from .program import UNDEFINED_REGISTER, Compare, Condition, Constant, LocationTerm, Or, Program, RegisterTerm, Term

MODELS = {"ptx-8.7": "PTX_8_7", "ptx-6.0": "PTX_6_0"}
"""Model names on the command line -> the :class:`~.relations.Model` objects of ``ptx.py``.
``ptx-6.0`` is the earlier model, without proxies."""

ENGINES = {"z3": "z3_engine", "explicit": "explicit"}
"""Engine names -> their modules in this package; each has ``run(program, model, ...)``."""

ENGINE_CHOICES = ("both", "z3", "explicit")


class EngineDisagreement(PtxSpecError):
    """The two interpreters of the one model gave different answers on a test: a bug, not a verdict."""


def model_named(name: str):
    """The :class:`~.relations.Model` called ``name`` (``ptx-8.7`` or ``ptx-6.0``)."""
    if name not in MODELS:
        raise PtxSpecError(f"unknown model {name!r} (choose one of {', '.join(MODELS)})", where="<command line>, --model")
    module = importlib.import_module(".ptx", __package__)
    return getattr(module, MODELS[name])


def engine_run(name: str):
    """The ``run`` function of the engine called ``name`` (``z3`` or ``explicit``)."""
    if name not in ENGINES:
        raise PtxSpecError(f"unknown engine {name!r} (choose one of {', '.join(ENGINE_CHOICES)})", where="<command line>, --engine")
    return importlib.import_module(f".{ENGINES[name]}", __package__).run


@attrs.frozen
class Verdict:
    """What checking one test gives: herd's verdict, the final states, and each engine's answer."""

    file: str
    name: str
    model: str
    condition: Condition
    ok: bool | None
    """herd's Ok (True), No (False), or Unknown (None: no engine decided in time)."""
    states: tuple[State, ...] | None
    """The distinct final states of the consistent executions, sorted by their values; None when undecided."""
    positive: int | None
    negative: int | None
    witness: Execution | None
    """An execution showing the condition's formula (``exists``) or refuting the condition
    (``~exists``: satisfying it; ``forall``: violating it), when asked and one exists."""
    why: tuple[str, ...] | None
    """When asked and the outcome is forbidden: the axioms that rule it out."""
    results: tuple[EngineResult, ...]
    """Each engine's own answer, in the order they ran."""
    program: Program
    time_s: float
    """Wall-clock time of the whole check (all engines)."""
    bounded: bool = False
    """The answer claims that no execution has some final state, and some path was cut at the
    unrolling bound (:attr:`Program.truncated`): it holds for the executions within the bound only,
    and a larger bound may change it (:func:`~.engine.rests_on_bound`)."""
    notes: tuple[str, ...] = ()
    """What the user should know about how the answer was reached (an engine that did not finish
    within its share of the time, so that the answer was not cross-checked), and undefined
    behavior that a consistent execution reaches."""
    undefined: str | None = None
    """When a consistent execution performs an operation whose behavior the manual makes
    undefined (:attr:`~.program.Event.undefined`): that operation and the rule. Such executions
    are among the states (their waits return 0), but what the program does there is not the
    model's to give: a user should fix the test."""

    @property
    def verdict_word(self) -> str:
        """``Ok``, ``No``, ``Unknown``, with `` (bounded)`` after a bounded answer."""
        word = {True: "Ok", False: "No", None: "Unknown"}[self.ok]
        return f"{word} (bounded)" if self.bounded else word

    @property
    def observation(self) -> str | None:
        """herd's ``Observation``: ``Never`` (no state satisfies the formula), ``Always`` (every state
        does) or ``Sometimes``; None when undecided."""
        return observation(self.positive, self.negative)

    @property
    def engine_times(self) -> Mapping[str, float]:
        return {result.engine: result.time_s for result in self.results}


def observation(positive: int | None, negative: int | None) -> str | None:
    """herd's reading of the counts of states satisfying / not satisfying the formula."""
    if positive is None or negative is None:
        return None
    if positive == 0:
        return "Never"
    if negative == 0:
        return "Always"
    return "Sometimes"


def sorted_states(states) -> tuple[State, ...]:
    """Final states in a fixed order (by the values of the observed terms, in order)."""
    return tuple(sorted(states, key=lambda state: tuple(value for _, value in state)))


def check_file(
    path,
    *,
    model: str = "ptx-8.7",
    engine: str = "both",
    timeout_s: float | None = None,
    unroll_bound: int | None = None,
    want_witness: bool = False,
    want_why: bool = False,
) -> Verdict:
    """Parse, lower and :func:`check` one litmus file, all within ``timeout_s``.

    The time limit covers the whole check: building the traces (``lowering.py``) as well as the
    engines; a test whose traces are not built in time is Unknown. Bad input raises
    :class:`~ptxspec.spec.errors.PtxSpecError` (located)."""
    from . import litmus, lowering

    start = time.monotonic()
    deadline = None if timeout_s is None else start + timeout_s
    test = litmus.parse_file(path)
    bound = lowering.DEFAULT_UNROLL if unroll_bound is None else unroll_bound
    try:
        if deadline is not None and time.monotonic() > deadline:
            raise lowering.OutOfTime()
        program = lowering.lower(test, unroll_bound=bound, deadline=deadline)
    except lowering.OutOfTime:
        program = lowering.unlowered(test, unroll_bound=bound)
        return Verdict(
            program.source,
            program.name,
            model,
            program.condition,
            None,
            None,
            None,
            None,
            None,
            None,
            (),
            program,
            time.monotonic() - start,
            notes=("the traces were not all built within the time limit",),
        )
    left = None if deadline is None else max(deadline - time.monotonic(), 1e-3)
    verdict = check(program, model=model, engine=engine, timeout_s=left, want_witness=want_witness, want_why=want_why)
    return attrs.evolve(verdict, time_s=time.monotonic() - start)


CROSS_CHECK_SHARE = 2.0
"""With ``--engine both`` the explicit engine gets this many times Z3's time (at least
:data:`CROSS_CHECK_FLOOR_S`, at most what is left of the time limit) to cross-check Z3's answer."""
CROSS_CHECK_FLOOR_S = 1.0


def check(
    program: Program,
    *,
    model: str = "ptx-8.7",
    engine: str = "both",
    timeout_s: float | None = None,
    want_witness: bool = False,
    want_why: bool = False,
    full_cross_check: bool = False,
    report_undefined: bool = True,
) -> Verdict:
    """Check ``program`` under ``model`` with ``engine`` (``both``, ``z3`` or ``explicit``).

    ``timeout_s`` bounds the whole check. With ``both``, Z3 runs first, then the explicit engine
    with its share of the time (:data:`CROSS_CHECK_SHARE` times Z3's, at least
    :data:`CROSS_CHECK_FLOOR_S`, within the limit): where both decide, their ``Ok`` and their sets
    of final states must be equal, else :class:`EngineDisagreement` is raised (naming the test, with
    both answers and an execution from each). Where only one decides in time, its answer is the
    verdict and a note says that it was not cross-checked (each engine is a complete decision
    procedure for the model; an answer from one is not a guess); where neither does, Unknown.
    ``full_cross_check`` gives the explicit engine all the time that is left instead of its share
    (the test suite's setting: every answer cross-checked). With ``report_undefined`` (the
    default) a decided verdict also says whether a consistent execution reaches undefined behavior
    (:func:`undefined_behavior`: one more question to the engine that decided, asked only of
    programs with a trace that does); ``litmus-gen``'s verdict table, which has no place for it,
    turns it off.
    """
    if engine not in ENGINE_CHOICES:
        raise PtxSpecError(f"unknown engine {engine!r} (choose one of {', '.join(ENGINE_CHOICES)})", where="<command line>, --engine")
    the_model = model_named(model)
    start = time.perf_counter()
    deadline = None if timeout_s is None else start + timeout_s

    def run(name: str, budget: float | None) -> EngineResult:
        return engine_run(name)(program, the_model, timeout_s=budget, want_witness=want_witness, want_why=want_why)

    notes: list[str] = []
    if engine != "both":
        results: tuple[EngineResult, ...] = (run(engine, timeout_s),)
    else:
        first = run("z3", timeout_s)
        floor = max(CROSS_CHECK_FLOOR_S, CROSS_CHECK_SHARE * first.time_s)
        share: float | None = floor
        if full_cross_check:
            share = None if deadline is None else deadline - time.perf_counter()
        elif deadline is not None:
            share = min(floor, deadline - time.perf_counter()) if first.ok is not None else deadline - time.perf_counter()
        elif first.ok is None:
            share = None
        if share is not None and share <= 0:
            second = None
        else:
            second = run("explicit", share)
        results = (first,) if second is None else (first, second)
        if first.ok is not None and (second is None or second.ok is None):
            notes.append(
                f"not cross-checked: the explicit engine did not finish within its share of the time ({0.0 if share is None or share < 0 else share:.2f} s)"
            )
        elif first.ok is None and second is not None and second.ok is not None:
            notes.append("not cross-checked: Z3 did not finish in time; the explicit engine decided")
    decided = [result for result in results if result.ok is not None and result.states is not None]
    if len(decided) == 2:
        compare(program, the_model, decided[0], decided[1], timeout_s=timeout_s)
    elapsed = time.perf_counter() - start
    if not decided:
        return Verdict(
            program.source, program.name, model, program.condition, None, None, None, None, None, None, results, program, elapsed, notes=tuple(notes)
        )
    first = decided[0]
    assert first.ok is not None and first.states is not None, "a decided result has an answer and its states"
    left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
    undefined, undecided = undefined_behavior(program, the_model, first.engine, left) if report_undefined else (None, False)
    if undefined is not None:
        notes.append(f"undefined behavior: {undefined}")
    elif undecided:
        notes.append("whether a consistent execution reaches undefined behavior was not decided in time")
    elapsed = time.perf_counter() - start
    return Verdict(
        file=program.source,
        name=program.name,
        model=model,
        condition=program.condition,
        ok=first.ok,
        states=sorted_states(first.states),
        positive=first.positive,
        negative=first.negative,
        witness=next((r.witness for r in decided if r.witness is not None), None),
        why=_why(decided),
        results=results,
        program=program,
        time_s=elapsed,
        bounded=program.truncated and rests_on_bound(program.condition, first.ok),
        notes=tuple(notes),
        undefined=undefined,
    )


def undefined_behavior(program: Program, the_model, engine: str, timeout_s: float | None) -> tuple[str | None, bool]:
    """``(what, undecided)``: whether a consistent execution of ``program`` performs an operation
    whose behavior is undefined -- asked of ``engine`` as the condition "some thread's trace has
    :data:`~.program.UNDEFINED_REGISTER` = 1", over the traces that have one (none: no question).
    ``what`` names the operation of a witness and the manual's rule."""
    threads = sorted({trace.thread for thread in program.threads for trace in thread.traces if trace.registers.get(UNDEFINED_REGISTER)})
    if not threads:
        return None, False
    terms = tuple(RegisterTerm(t, UNDEFINED_REGISTER) for t in threads)
    compares = tuple(Compare("==", term, Constant(1)) for term in terms)
    query = attrs.evolve(program, condition=Condition("exists", compares[0] if len(compares) == 1 else Or(compares)), observed=terms)
    result = engine_run(engine)(query, the_model, timeout_s=timeout_s, want_witness=True)
    if result.ok is None:
        return None, True
    if not result.ok or result.witness is None:
        return None, False
    event = next(e for e in result.witness.events if e.undefined is not None)
    thread = program.threads[event.thread].name if event.thread is not None else "?"
    return f"{thread} performs '{event.instruction}' (line {event.line}) in a consistent execution, where {event.undefined}", False


def _why(results: list[EngineResult]) -> tuple[str, ...] | None:
    """Z3's unsat core when there is one (the smaller answer: axioms that together suffice),
    else the explicit engine's axioms violated by every candidate with the outcome."""
    by_engine = {result.engine: result.why for result in results if result.why is not None}
    return by_engine.get("z3", by_engine.get("explicit"))


def compare(program: Program, the_model, a: EngineResult, b: EngineResult, *, timeout_s: float | None = None) -> None:
    """Raise :class:`EngineDisagreement` unless ``a`` and ``b`` give the same Ok and the same states."""
    if a.ok == b.ok and a.states == b.states:
        return
    # The witnesses, when the first runs did not ask for them: rerun asking (a disagreement is rare
    # and its diagnosis worth the time).
    if a.witness is None or b.witness is None:
        a = engine_run(a.engine)(program, the_model, timeout_s=timeout_s, want_witness=True) if a.witness is None else a
        b = engine_run(b.engine)(program, the_model, timeout_s=timeout_s, want_witness=True) if b.witness is None else b
    lines = [f"the engines disagree on test {program.name} ({program.source}): a bug in one of them, not a verdict"]
    for result in (a, b):
        lines.append(describe_result(program, result))
    only = {result.engine: set(result.states or ()) for result in (a, b)}
    for result, other in ((a, b), (b, a)):
        extra = only[result.engine] - only[other.engine]
        for state in sorted_states(extra):
            lines.append(f"  state only {result.engine} finds: {format_state(program, state)}")
    for result in (a, b):
        lines.append(f"  {result.engine} witness:")
        if result.witness is None:
            lines.append("    (none)")
        else:
            from .render import witness_text

            lines.extend("    " + line for line in witness_text(program, result.witness).splitlines())
    raise EngineDisagreement("\n".join(lines), where=program.source)


def describe_result(program: Program, result: EngineResult) -> str:
    ok = {True: "Ok", False: "No", None: "Unknown"}[result.ok]
    count = "?" if result.states is None else str(len(result.states))
    lines = [f"  {result.engine}: {ok}, {count} states, positive {result.positive} negative {result.negative}, {result.time_s:.2f} s"]
    for state in sorted_states(result.states or ()):
        lines.append(f"    {format_state(program, state)}")
    return "\n".join(lines)


# ---- names of terms, as herd prints them ---------------------------------------------------------


def term_name(program: Program, term: Term) -> str:
    """``P0:r1`` for a register of thread P0, the address for a location, the number for a constant."""
    if isinstance(term, RegisterTerm):
        return f"{program.threads[term.thread].name}:{term.register}"
    if isinstance(term, LocationTerm):
        return term.name
    if isinstance(term, Constant):
        return str(term.value)
    raise TypeError(f"not a term: {term!r}")


def format_state(program: Program, state: State) -> str:
    """herd's line for a final state: ``P0:r0=1; x=2;``."""
    return " ".join(f"{term_name(program, term)}={value};" for term, value in state if not isinstance(term, Constant))


def forbidden_example(verdict: Verdict, *, budget_s: float = 5.0):
    """A candidate execution with the forbidden outcome that the model rejects, for the picture of
    why the outcome cannot happen: ``(execution, axiom name, edges, labels)`` or None.

    The explicit engine enumerates the candidates (rejected ones included) and evaluates the model
    on them; the relation of the first axiom of ``verdict.why`` is added to the model as an extra
    definition so that the engine's own interpreter computes it. For an ``irreflexive`` axiom over
    a sequence ``a ; b`` the edges are the two steps ``e -a-> m -b-> e``; for ``acyclic``, a cycle
    of the relation; for ``empty``, one of its pairs. Gives up (None) after ``budget_s`` seconds.
    """
    if verdict.ok is None or not verdict.why:
        return None
    from . import relations as rel
    from .engine import forbidden_outcome, state_holds

    explicit = importlib.import_module(".explicit", __package__)
    base_model = model_named(verdict.model)
    axiom = next((a for a in base_model.axioms if a.name == verdict.why[0]), None)
    if axiom is None:
        return None
    extra = [rel.Definition(f"why:{axiom.name}", axiom.relation, axiom.section)]
    split = axiom.kind == "irreflexive" and isinstance(axiom.relation, rel.Seq)
    if split:
        extra += [
            rel.Definition(f"why:{axiom.name}:left", axiom.relation.left, axiom.section),
            rel.Definition(f"why:{axiom.name}:right", axiom.relation.right, axiom.section),
        ]
    the_model = attrs.evolve(base_model, definitions=tuple(base_model.definitions) + tuple(extra))
    program = verdict.program
    condition = program.condition
    outcome = forbidden_outcome(condition)
    allowed = set(verdict.why)
    out_of_time = getattr(explicit, "_Timeout", TimeoutError)
    try:
        search = explicit._Search(program, the_model, time.monotonic() + budget_s)
        fallback = None
        for frame, option in search.frames():
            for env, failed, last in search.candidates_of(frame, option, all_axioms=True):
                if last is None or axiom.name not in failed:
                    continue
                if state_holds(condition.formula, explicit._state(program, frame, last)) != outcome:
                    continue
                if set(failed) <= allowed:
                    return _example(explicit._execution(the_model, frame, env, last), axiom, split)
                if fallback is None:
                    fallback = explicit._execution(the_model, frame, env, last)
        return None if fallback is None else _example(fallback, axiom, split)
    except (out_of_time, AttributeError, TypeError, KeyError):
        # Out of time, or an explicit engine without these internals: no picture of the cycle.
        return None


def _example(execution: Execution, axiom, split: bool):
    """(execution, axiom name, edges, labels) for the relation of ``axiom`` evaluated on ``execution``."""

    pairs = execution.relations[f"why:{axiom.name}"]
    if split:
        left = execution.relations[f"why:{axiom.name}:left"]
        right = execution.relations[f"why:{axiom.name}:right"]
        for e, e2 in sorted(pairs):
            if e != e2:
                continue
            middle = next((m for (a, m) in sorted(left) if a == e and (m, e) in right), None)
            if middle is not None:
                edges = ((e, middle), (middle, e))
                labels = (_label(axiom.relation.left, edges[0], execution), _label(axiom.relation.right, edges[1], execution))
                return execution, axiom.name, edges, labels
    if axiom.kind == "acyclic":
        from .render import find_cycle

        cycle = find_cycle(pairs)
        return (execution, axiom.name, cycle, tuple(axiom.name for _ in cycle)) if cycle else None
    reflexive = sorted((a, b) for a, b in pairs if a == b) if axiom.kind == "irreflexive" else sorted(pairs)
    return (execution, axiom.name, (reflexive[0],), (axiom.name,)) if reflexive else None


def _label(expr, edge: tuple[int, int], execution: Execution) -> str:
    """The name of the part of ``expr`` (a union of named relations, typically) that holds ``edge``."""
    from . import relations as rel
    from .render import expression_text

    if isinstance(expr, (rel.Base, rel.Ref)):
        return expr.name
    if isinstance(expr, rel.Union):
        for side in (expr.left, expr.right):
            names = [side.name] if isinstance(side, (rel.Base, rel.Ref)) else []
            if names and edge in execution.relations.get(names[0], ()):
                return names[0]
            if isinstance(side, rel.Union):
                found = _label(side, edge, execution)
                if found in execution.relations and edge in execution.relations[found]:
                    return found
    return _short(expression_text(expr))


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
