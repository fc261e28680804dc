"""The explicit engine: enumerate candidate executions one by one and evaluate the model on each.

A *candidate execution* of a :class:`~ptxspec.memory_model.program.Program` is

1. one trace per thread (traces that stop at a barrier, ``Trace.blocked_at``, are never chosen);
2. one way the barriers are used (``base.barrier_options``: which barrier operations synchronize;
   traces that cannot all finish give none);
3. reads-from: for every event that takes a value (reads, and ``red``), a write to the same
   physical location that wrote the value the event returned (§8.9.7 item 1);
4. coherence order: per physical location a strict total order of its writes, the initial write
   first (§8.2.6, §8.9.6);
5. Fence-SC order: a strict total order of the ``fence.sc`` operations (§8.9.3; the model keeps
   its morally strong pairs).

The model's expressions (``relations.py``) are compiled once into functions over bit-matrices
(one Python integer per row), and each definition is evaluated at the earliest of four *stages*
at which its inputs are known: 0 (traces and barriers), 1 (+ rf), 2 (+ co), 3 (+ sc). An axiom
that fails at an early stage prunes every extension of the partial candidate (No-Thin-Air after
rf; SC-per-location and Atomicity after co). A final state found consistent is not looked for
again. Barrier rules (which operations pair up, quorum, blocked threads) are those of
``base.barrier_options``:

* operations of one use of a barrier (same CTA, same barrier id, same phase) synchronize: every
  member with every waiting member (sync, red) -- never arrive with arrive;
* with a thread count q, arrivals are ordered at run time; the first q complete the barrier and
  synchronize with one another, and a later arrival passes and is synchronized with by every
  earlier one; fewer than q arrivals block;
* an execution in which some thread blocks (deadlock, a count never reached) is not a candidate.

Scaling: the number of candidates is the product over threads of traces, over reads of the
writes they can read from, over locations of (writes - 1)!, and (fence.sc count)!; pruning keeps
the corpus fast, but e.g. four writes to one location by four threads with four readers grows
past 10^5 candidates.
"""

from __future__ import annotations

import itertools
import time
from typing import Callable, Iterable, Iterator, Sequence

from . import relations as rel
from .base import (
    EQUIVALENCE_RELATIONS,
    effective_scope,
    equivalence_key,
    is_strong,
    barrier_options,
    dependency_pairs,
    event_sets,
    static_pair,
)
from .engine import (
    EngineResult,
    Execution,
    State,
    final_values,
    forbidden_outcome,
    judge,
    state_holds,
    state_of,
    undecided,
    wanted,
)
from .program import Event, Program, Trace

ENGINE = "explicit"

Rows = list[int]
"""A relation over the events of one candidate: ``rows[i]`` has bit ``j`` set when i relates to j."""

STAGE_OF_BASE = {"rf": 1, "co": 2, "sc": 3}
"""The stage at which a run-time base relation becomes known (every other base name: stage 0)."""
STAGES = 4


class _Timeout(Exception):
    pass


# ---- bit-matrix operations -------------------------------------------------------------------------


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _seq(left: Rows, right: Rows) -> Rows:
    out = []
    for row in left:
        acc = 0
        while row:
            low = row & -row
            acc |= right[low.bit_length() - 1]
            row ^= low
        out.append(acc)
    return out


def _inverse(rows: Rows) -> Rows:
    out = [0] * len(rows)
    for i, row in enumerate(rows):
        bit = 1 << i
        for j in _bits(row):
            out[j] |= bit
    return out


def _plus(rows: Rows) -> Rows:
    out = list(rows)
    n = len(out)
    for k in range(n):
        bit = 1 << k
        row_k = out[k]
        if not row_k:
            continue
        for i in range(n):
            if out[i] & bit:
                out[i] |= row_k
    return out


def _irreflexive(rows: Rows) -> bool:
    return not any((row >> i) & 1 for i, row in enumerate(rows))


def _acyclic(rows: Rows) -> bool:
    # Kahn's algorithm on the bit-matrix: repeatedly remove events without predecessors.
    n = len(rows)
    remaining = (1 << n) - 1
    incoming = [0] * n
    for i, row in enumerate(rows):
        for j in _bits(row):
            incoming[j] |= 1 << i
    changed = True
    while remaining and changed:
        changed = False
        for j in _bits(remaining):
            if not (incoming[j] & remaining):
                remaining &= ~(1 << j)
                changed = True
    return remaining == 0


def _pairs(rows: Rows, eids: Sequence[int]) -> frozenset[tuple[int, int]]:
    return frozenset((eids[i], eids[j]) for i, row in enumerate(rows) for j in _bits(row))


# ---- compiling the model ---------------------------------------------------------------------------

Fn = Callable[[dict], object]


class _Compiled:
    """The model as per-stage lists of steps ``(key, function)`` and axiom checks."""

    def __init__(self, model: rel.Model) -> None:
        self.model = model
        self.steps: list[list[tuple[str, Fn]]] = [[] for _ in range(STAGES)]
        self.checks: list[list[tuple[str, Callable[[dict], bool]]]] = [[] for _ in range(STAGES)]
        self.stage_of_ref: dict[str, int] = {}
        self._hoisted = 0
        for definition in model.definitions:
            stage, fn = self._rel(definition.relation)
            self.stage_of_ref[definition.name] = stage
            self.steps[stage].append((definition.name, fn))
        for axiom in model.axioms:
            stage, fn = self._rel(axiom.relation)
            self.checks[stage].append((axiom.name, _check(axiom.kind, fn)))

    def _hoist(self, stage: int, fn: Fn, at: int) -> Fn:
        """A sub-expression known at an earlier stage than its parent is computed once, at its stage."""
        if stage == at:
            return fn
        self._hoisted += 1
        key = f"#{self._hoisted}"
        self.steps[stage].append((key, fn))
        return lambda env: env[key]

    def _set(self, expr: rel.SetExpr) -> tuple[int, Fn]:
        if isinstance(expr, rel.SetBase):
            name = expr.name
            return 0, lambda env: env["sets"].get(name, 0)
        if isinstance(expr, (rel.SetUnion, rel.SetInter, rel.SetDiff)):
            (s1, f1), (s2, f2) = self._set(expr.left), self._set(expr.right)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)
            if isinstance(expr, rel.SetUnion):
                return stage, lambda env: f1(env) | f2(env)
            if isinstance(expr, rel.SetInter):
                return stage, lambda env: f1(env) & f2(env)
            return stage, lambda env: f1(env) & ~f2(env)
        if isinstance(expr, rel.Domain):
            stage, f = self._rel(expr.relation)
            return stage, lambda env: _mask_of(i for i, row in enumerate(f(env)) if row)
        if isinstance(expr, rel.Range):
            stage, f = self._rel(expr.relation)

            def range_of(env: dict) -> int:
                acc = 0
                for row in f(env):
                    acc |= row
                return acc

            return stage, range_of
        raise TypeError(f"not a set expression: {expr!r}")

    def _rel(self, expr: rel.RelExpr) -> tuple[int, Fn]:
        if isinstance(expr, rel.Base):
            name = expr.name
            return STAGE_OF_BASE.get(name, 0), lambda env: env[name]
        if isinstance(expr, rel.Ref):
            name = expr.name
            if name not in self.stage_of_ref:
                raise KeyError(f"definition {name!r} used before it is defined")
            return self.stage_of_ref[name], lambda env: env[name]
        if isinstance(expr, rel.Empty):
            return 0, lambda env: [0] * env["n"]
        if isinstance(expr, rel.Identity):
            stage, f = self._set(expr.over)

            def identity(env: dict) -> Rows:
                mask = f(env)
                return [(1 << i) if (mask >> i) & 1 else 0 for i in range(env["n"])]

            return stage, identity
        if isinstance(expr, rel.Product):
            (s1, f1), (s2, f2) = self._set(expr.left), self._set(expr.right)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)

            def product(env: dict) -> Rows:
                left, right = f1(env), f2(env)
                return [right if (left >> i) & 1 else 0 for i in range(env["n"])]

            return stage, product
        if isinstance(expr, (rel.Inverse, rel.Plus, rel.Optional)):
            stage, f = self._rel(expr.operand)
            if isinstance(expr, rel.Inverse):
                return stage, lambda env: _inverse(f(env))
            if isinstance(expr, rel.Plus):
                return stage, lambda env: _plus(f(env))
            return stage, lambda env: [row | (1 << i) for i, row in enumerate(f(env))]
        if isinstance(expr, (rel.Union, rel.Inter, rel.Diff, rel.Seq)):
            (s1, f1), (s2, f2) = self._rel(expr.left), self._rel(expr.right)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)
            if isinstance(expr, rel.Union):
                return stage, lambda env: [a | b for a, b in zip(f1(env), f2(env))]
            if isinstance(expr, rel.Inter):
                return stage, lambda env: [a & b for a, b in zip(f1(env), f2(env))]
            if isinstance(expr, rel.Diff):
                return stage, lambda env: [a & ~b for a, b in zip(f1(env), f2(env))]
            return stage, lambda env: _seq(f1(env), f2(env))
        raise TypeError(f"not a relation expression: {expr!r}")


def _mask_of(indices: Iterable[int]) -> int:
    mask = 0
    for i in indices:
        mask |= 1 << i
    return mask


def _check(kind: str, fn: Fn) -> Callable[[dict], bool]:
    if kind == "acyclic":
        return lambda env: _acyclic(fn(env))
    if kind == "irreflexive":
        return lambda env: _irreflexive(fn(env))
    if kind == "empty":
        return lambda env: not any(fn(env))
    raise ValueError(kind)


_COMPILED: dict[int, _Compiled] = {}


def _compiled(model: rel.Model) -> _Compiled:
    # Models are module-level constants; keep their compiled form (keyed by identity).
    key = id(model)
    entry = _COMPILED.get(key)
    if entry is None or entry.model is not model:
        entry = _Compiled(model)
        _COMPILED[key] = entry
    return entry


# ---- candidate executions --------------------------------------------------------------------------


class _Statics:
    """Per-event facts of a whole program, computed once and shared by every choice of traces."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.sets: dict[int, frozenset[str]] = {}
        self.keys: dict[int, tuple] = {}
        self.scope_key: dict[int, tuple | None] = {}
        self.scope_cache: dict[tuple, bool] = {}
        self.representative: dict[tuple, Event] = {}
        for event in list(program.initial) + [e for th in program.threads for t in th.traces for e in t.events]:
            self.sets[event.eid] = event_sets(event)
            self.keys[event.eid] = tuple(equivalence_key(name, event, program) for name in EQUIVALENCE_RELATIONS)
            if is_strong(event):
                key = (event.thread, effective_scope(event))
                self.scope_key[event.eid] = key
                self.representative.setdefault(key, event)
            else:
                self.scope_key[event.eid] = None

    def scope_incl(self, a: tuple, b: tuple) -> bool:
        """``scope_incl`` between two strong events with these (thread, scope) keys."""
        result = self.scope_cache.get((a, b))
        if result is None:
            first, second = self.representative[a], self.representative[b]
            if first.eid == second.eid:
                # Same thread and scope: include each other; distinct events are checked by index.
                result = True
            else:
                result = static_pair("scope_incl", first, second, self.program)
            self.scope_cache[(a, b)] = result
        return result


class _Frame:
    """The events of one choice of traces, indexed 0..n-1, and the stage-0 environment."""

    def __init__(self, program: Program, traces: Sequence[Trace], statics: _Statics) -> None:
        self.program = program
        self.traces = tuple(traces)
        self.events: list[Event] = list(program.initial) + [e for t in traces for e in t.events]
        self.eids = [e.eid for e in self.events]
        self.index = {eid: i for i, eid in enumerate(self.eids)}
        n = self.n = len(self.events)
        sets: dict[str, int] = {}
        for i, event in enumerate(self.events):
            for name in statics.sets[event.eid]:
                sets[name] = sets.get(name, 0) | (1 << i)
        env: dict = {"n": n, "sets": sets}
        for position, name in enumerate(EQUIVALENCE_RELATIONS):
            keys = [statics.keys[e.eid][position] for e in self.events]
            groups: dict[object, int] = {}
            for i, key in enumerate(keys):
                if key is not None:
                    groups[key] = groups.get(key, 0) | (1 << i)
            env[name] = [groups[key] if key is not None else 0 for key in keys]
        # po: the events of one trace are contiguous here, in program order.
        po = [0] * n
        for i, event in enumerate(self.events):
            if event.thread is not None:
                po[i] = env["same_thread"][i] & ~((2 << i) - 1)
        env["po"] = po
        scope_keys = [statics.scope_key[e.eid] for e in self.events]
        env["scope_incl"] = [
            0
            if ka is None
            else _mask_of(j for j, kb in enumerate(scope_keys) if kb is not None and j != i and statics.scope_incl(ka, kb))
            for i, ka in enumerate(scope_keys)
        ]
        for name, pairs in dependency_pairs(traces).items():
            env[name] = self._rows(pairs)
        self.base_env = env
        self.takers = [i for i, e in enumerate(self.events) if e.takes_value]
        self.writes = [i for i, e in enumerate(self.events) if e.writes]
        self.fences_sc = [i for i, e in enumerate(self.events) if e.fence == "sc"]
        # Writes per physical location, the initial write first.
        self.locations: dict[str, list[int]] = {}
        for i in self.writes:
            event = self.events[i]
            self.locations.setdefault(event.address.physical, []).append(i)
        for physical, writes in self.locations.items():
            writes.sort(key=lambda i: (not self.events[i].is_initial, i))

    def _rows(self, pairs: Iterable[tuple[int, int]]) -> Rows:
        rows = [0] * self.n
        for a, b in pairs:
            if a in self.index and b in self.index:
                rows[self.index[a]] |= 1 << self.index[b]
        return rows

    def rf_choices(self) -> list[list[int]] | None:
        """Per value-taking event, the writes it can read from (same location, same value)."""
        choices = []
        for r in self.takers:
            event = self.events[r]
            physical = event.address.physical
            sources = [
                w
                for w in self.locations.get(physical, [])
                if w != r and (event.read_value is None or self.events[w].write_value == event.read_value)
            ]
            if not sources:
                return None
            choices.append(sources)
        return choices

    def co_orders(self) -> Iterator[tuple[Rows, dict[str, int]]]:
        """Every coherence order: rows, and the co-last write per physical location."""
        per_location = []
        for physical, writes in self.locations.items():
            first, rest = writes[0], writes[1:]
            per_location.append((physical, [(first, *order) for order in itertools.permutations(rest)]))
        names = [physical for physical, _ in per_location]
        for combination in itertools.product(*(orders for _, orders in per_location)):
            rows = [0] * self.n
            last: dict[str, int] = {}
            for physical, order in zip(names, combination):
                later = 0
                for i in reversed(order):
                    rows[i] |= later
                    later |= 1 << i
                last[physical] = order[-1]
            yield rows, last

    def sc_orders(self) -> Iterator[Rows]:
        for order in itertools.permutations(self.fences_sc):
            rows = [0] * self.n
            later = 0
            for i in reversed(order):
                rows[i] |= later
                later |= 1 << i
            yield rows


class _Search:
    """One run of the engine over a program."""

    def __init__(self, program: Program, model: rel.Model, deadline: float | None) -> None:
        self.program = program
        self.model = model
        self.compiled = _compiled(model)
        self.deadline = deadline
        self.candidates = 0
        self.ticks = 0
        self.statics: _Statics | None = None

    def tick(self) -> None:
        self.candidates += 1
        self.ticks += 1
        if self.deadline is not None and self.ticks >= 64:
            self.ticks = 0
            if time.monotonic() > self.deadline:
                raise _Timeout()

    def stage(self, env: dict, stage: int, all_axioms: bool = False) -> list[str]:
        """Evaluate the stage's steps into ``env``; the names of the stage's failing axioms
        (only the first one unless ``all_axioms``)."""
        for key, fn in self.compiled.steps[stage]:
            env[key] = fn(env)
        failed = []
        for name, check in self.compiled.checks[stage]:
            if not check(env):
                failed.append(name)
                if not all_axioms:
                    break
        return failed

    def frames(self) -> Iterator[tuple[_Frame, frozenset[tuple[int, int]]]]:
        if self.statics is None:
            self.statics = _Statics(self.program)
        choices = [[t for t in thread.traces if t.blocked_at is None] for thread in self.program.threads]
        initial = {(e.address.physical, e.write_value) for e in self.program.initial}
        written = {id(t): {(e.address.physical, e.write_value) for e in t.events if e.writes} for c in choices for t in c}
        for traces in itertools.product(*choices):
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise _Timeout()
            if not _values_available(traces, initial, written):
                continue
            options = barrier_options(self.program, traces)
            if not options:
                continue
            frame = _Frame(self.program, traces, self.statics)
            for option in options:
                yield frame, option

    def candidates_of(
        self,
        frame: _Frame,
        option: frozenset[tuple[int, int]],
        all_axioms: bool,
        skip: Callable[[dict[str, int]], bool] | None = None,
    ) -> Iterator[tuple[dict, list[str], dict[str, int] | None]]:
        """Yield ``(env, failed axioms, co-last writes)`` per candidate reached.

        Without ``all_axioms`` a failing axiom prunes: the partial candidate is yielded once with
        its failure and ``None`` for the co-last writes when co is not chosen yet. ``skip`` is
        asked once co is chosen (the final state is then known) whether to look no further.
        """
        env0 = dict(frame.base_env)
        env0["bar_sync"] = frame._rows(option)
        failed0 = self.stage(env0, 0, all_axioms)
        if failed0 and not all_axioms:
            self.tick()
            yield env0, failed0, None
            return
        rf_choices = frame.rf_choices()
        if rf_choices is None:
            return
        for sources in itertools.product(*rf_choices):
            env1 = dict(env0)
            rows = [0] * frame.n
            for r, w in zip(frame.takers, sources):
                rows[w] |= 1 << r
            env1["rf"] = rows
            failed1 = failed0 + self.stage(env1, 1, all_axioms)
            if failed1 and not all_axioms:
                self.tick()
                yield env1, failed1, None
                continue
            for co_rows, last in frame.co_orders():
                env2 = dict(env1)
                env2["co"] = co_rows
                failed2 = failed1 + self.stage(env2, 2, all_axioms)
                if failed2 and not all_axioms:
                    self.tick()
                    yield env2, failed2, last
                    continue
                if skip is not None and skip(last):
                    continue
                for sc_rows in frame.sc_orders():
                    env3 = dict(env2)
                    env3["sc"] = sc_rows
                    failed3 = failed2 + self.stage(env3, 3, all_axioms)
                    self.tick()
                    yield env3, failed3, last
                    if not failed3 and not all_axioms:
                        break


def _values_available(
    traces: Sequence[Trace], initial: set[tuple[str, int]], written: dict[int, set[tuple[str, int]]]
) -> bool:
    """A quick necessary condition: every value a trace reads is written by someone (or initial)."""
    available = set(initial)
    for trace in traces:
        available |= written[id(trace)]
    for trace in traces:
        for event in trace.events:
            if event.takes_value and event.read_value is not None:
                if (event.address.physical, event.read_value) not in available:
                    return False
    return True


def _state(program: Program, frame: _Frame, last: dict[str, int]) -> State:
    writes = {physical: frame.events[i] for physical, i in last.items()}
    return state_of(program, final_values(program, frame.traces, writes))


def _execution(model: rel.Model, frame: _Frame, env: dict, last: dict[str, int]) -> Execution:
    names = ["po", "rf", "co", "sc", "bar_sync"] + [d.name for d in model.definitions]
    relations = {name: _pairs(env[name], frame.eids) for name in names if name in env}
    writes = {physical: frame.events[i] for physical, i in last.items()}
    return Execution(
        traces=frame.traces,
        events=tuple(frame.events),
        relations=relations,
        final=final_values(frame.program, frame.traces, writes),
    )


def run(
    program: Program,
    model: rel.Model,
    *,
    timeout_s: float | None = None,
    want_witness: bool = False,
    want_why: bool = False,
) -> EngineResult:
    """Enumerate the candidate executions of ``program`` and judge its condition under ``model``."""
    start = time.monotonic()
    deadline = None if timeout_s is None else start + timeout_s
    search = _Search(program, model, deadline)
    condition = program.condition
    target = wanted(condition)
    states: set[State] = set()
    witness: Execution | None = None
    def known(frame: _Frame) -> Callable[[dict[str, int]], bool]:
        # A final state already shown consistent need not be shown again (unless it is the
        # first one the witness wants).
        def skip(last: dict[str, int]) -> bool:
            state = _state(program, frame, last)
            if state not in states:
                return False
            return not (want_witness and witness is None and state_holds(condition.formula, state) == target)

        return skip

    try:
        for frame, option in search.frames():
            for env, failed, last in search.candidates_of(frame, option, all_axioms=False, skip=known(frame)):
                if failed:
                    continue
                state = _state(program, frame, last)
                if want_witness and witness is None and state_holds(condition.formula, state) == target:
                    witness = _execution(model, frame, env, last)
                states.add(state)
        ok, positive, negative = judge(condition, states)
        why = None
        if want_why:
            why = _why(search, program, states)
    except _Timeout:
        return undecided(ENGINE, time.monotonic() - start, search.candidates)
    return EngineResult(
        engine=ENGINE,
        states=frozenset(states),
        ok=ok,
        positive=positive,
        negative=negative,
        witness=witness,
        why=why,
        candidates=search.candidates,
        time_s=time.monotonic() - start,
    )


def _why(search: _Search, program: Program, states: set[State]) -> tuple[str, ...] | None:
    """The axioms that rule out the condition's outcome, when no consistent execution shows it.

    Every candidate whose final state shows the outcome is evaluated on every axiom; the answer
    is the axioms violated by all of them (in the model's order). Where no single axiom is
    violated by all, a small set that together covers every candidate is chosen greedily.
    Returns None when the outcome is allowed, () when no candidate shows it at all.
    """
    condition = program.condition
    outcome = forbidden_outcome(condition)
    if any(state_holds(condition.formula, state) == outcome for state in states):
        return None
    violations: list[frozenset[str]] = []

    def other_outcome(frame: _Frame) -> Callable[[dict[str, int]], bool]:
        return lambda last: state_holds(condition.formula, _state(program, frame, last)) != outcome

    for frame, option in search.frames():
        skip = other_outcome(frame)
        for env, failed, last in search.candidates_of(frame, option, all_axioms=True, skip=skip):
            if not skip(last):
                violations.append(frozenset(failed))
    order = [axiom.name for axiom in search.model.axioms]
    if not violations:
        return ()
    common = frozenset.intersection(*violations)
    if common:
        return tuple(name for name in order if name in common)
    chosen: list[str] = []
    left = list(violations)
    while left:
        best = max(order, key=lambda name: sum(name in v for v in left))
        chosen.append(best)
        left = [v for v in left if best not in v]
    return tuple(name for name in order if name in chosen)
