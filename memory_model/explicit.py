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
(one Python integer per row), and each definition is evaluated at the earlier of two *stages* at
which its inputs are known: 0 (traces and barriers) or 1 (+ rf, co and sc). An axiom that fails
at stage 0 rules out the choice of traces. Evaluation is lazy (:class:`_Env`): a value is computed
when an axiom first reads it, the cheapest axioms are checked first, and a candidate that one
axiom rules out pays only for what that axiom reads (a thin-air cycle of rf and dependencies never
computes causality order).

Reads-from, coherence and Fence-SC orders are not enumerated as whole products and permutations:
they are chosen one source (one write, one fence) at a time, by a depth-first search that keeps
only the current path of choices in memory and prunes with what is already known, as herd7 does.
A partial choice bounds every completion: its edges are a *lower* bound of the final relation,
and the edges it does not yet exclude an *upper* bound. Every operator of the model is monotone
in its operands except the right side of a difference, so evaluating each definition with the
lower bound where rf, co and sc occur positively and the upper bound where they occur under a
difference gives a lower bound of every axiom's relation in every completion (:class:`_Compiled`'s
*polarity*); an axiom already violated by that lower bound is violated by every completion, and
the branch is cut. When everything is chosen the two bounds coincide and the evaluation is the
model itself. At each node the search first tries the completion that takes the likeliest choice
all the way (a read's own thread's latest write, orders that follow causality and communication);
only if that fails does it branch. For an observed location it first picks the write that is
last in coherence order: that fixes the final state, a state already shown consistent is not
looked for again, and one consistent completion per state is enough. The search checks its
deadline as it goes.

Barrier rules (which operations pair up, quorum, blocked threads) are those of
``base.barrier_options``:

* operations of one use of a barrier (same CTA, same barrier id, same phase) synchronize: every
  member with every waiting member (sync, red) -- never arrive with arrive;
* with a thread count q, arrivals are ordered at run time; the first q complete the barrier and
  synchronize with one another, and a later arrival passes and is synchronized with by every
  earlier one; fewer than q arrivals block;
* an execution in which some thread blocks (deadlock, a count never reached) is not a candidate.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable, Iterable, Iterator, Sequence

import attrs

from . import relations as rel
from .base import (
    EQUIVALENCE_RELATIONS,
    STATIC_RELATIONS,
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
from .program import Event, LocationTerm, Program, Trace

ENGINE = "explicit"

Rows = list[int]
"""A relation over the events of one candidate: ``rows[i]`` has bit ``j`` set when i relates to j."""

RUN_TIME = ("rf", "co", "sc")
"""The run-time relations that the search chooses step by step: reads-from (§8.9.7), coherence
order per physical location (§8.9.6), Fence-SC order over the fence.sc operations (§8.9.3)."""
UPPER = "~"
"""Suffix of the environment key holding a relation's upper bound (see the module docstring)."""
STAGE_OF_BASE = {name + suffix: 1 for name in RUN_TIME for suffix in ("", UPPER)}
"""The stage at which a base relation becomes known: 0 (static), 1 (chosen at run time)."""
STAGES = 2


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
    # Repeatedly remove the events with no successor among those left; a cycle never empties.
    remaining = (1 << len(rows)) - 1
    changed = True
    while remaining and changed:
        changed = False
        for j in _bits(remaining):
            if not (rows[j] & remaining):
                remaining ^= 1 << j
                changed = True
    return remaining == 0


def _pairs(rows: Rows, eids: Sequence[int]) -> frozenset[tuple[int, int]]:
    return frozenset((eids[i], eids[j]) for i, row in enumerate(rows) for j in _bits(row))


# ---- compiling the model ---------------------------------------------------------------------------

Fn = Callable[[dict[str, Any]], Any]
"""A compiled step or expression: a function of the environment (a row list, a mask, a dict of sets)."""


class _Compiled:
    """The model as per-stage lists of steps ``(key, function)`` and axiom checks.

    Every expression is compiled with a *polarity*: positive where a larger co or sc can only make
    it larger, negative under the right side of a difference. A definition is computed under the
    key of its name for positive use and under ``name~`` for negative use (only where some
    expression uses it so); a negative occurrence of ``co`` or ``sc`` reads their upper bound,
    ``co~``/``sc~``. Axioms are compiled positively: what they evaluate is a lower bound of their
    relation in every completion of partial orders (exact when the orders are total).
    """

    def __init__(self, model: rel.Model) -> None:
        self.model = model
        self.steps: list[list[tuple[str, Fn]]] = [[] for _ in range(STAGES)]
        self.checks: list[list[tuple[str, Callable[[dict], bool]]]] = [[] for _ in range(STAGES)]
        self.definitions = {definition.name: definition for definition in model.definitions}
        self.stage_of_ref: dict[str, int] = {}
        self._hoisted = 0
        self._hoisted_keys: dict[int, str] = {}
        self._compiled: dict[tuple[object, bool], tuple[int, Fn]] = {}
        for definition in model.definitions:
            self._define(definition.name, negative=False)
        for axiom in model.axioms:
            stage, fn = self._rel(axiom.relation, False)
            self.checks[stage].append((axiom.name, _check(axiom.kind, fn)))
        # Cheapest axioms first: with a lazy environment (_Env) a candidate that fails one never
        # computes the definitions only the others need. The order of checks never changes which
        # axioms fail, only how soon the search knows one does.
        self._used: dict[str, set[str]] = {}
        cost = {axiom.name: len(self._uses(axiom.relation)) for axiom in model.axioms}
        for checks in self.checks:
            checks.sort(key=lambda check: cost[check[0]])
        self.tables: list[dict[str, tuple[int, Fn]]] = [{key: (stage, fn) for key, fn in steps} for stage, steps in enumerate(self.steps)]
        """Per stage, its steps by environment key (what an :class:`_Env` of that stage computes)."""

    def _uses(self, expr: rel.RelExpr | rel.SetExpr) -> set[str]:
        """The definitions ``expr`` reads, directly or through other definitions."""
        if isinstance(expr, rel.Ref):
            used = self._used.get(expr.name)
            if used is None:
                used = self._used[expr.name] = {expr.name} | self._uses(self.definitions[expr.name].relation)
            return used
        if isinstance(expr, (rel.Base, rel.SetBase)):
            return set()
        out: set[str] = set()
        for part in rel.operands(expr).values():
            out |= self._uses(part)
        return out

    def _define(self, name: str, negative: bool) -> str:
        """Compile definition ``name`` with the given polarity (once); its key in the environment.
        A definition that no run-time relation enters has one value whatever the polarity."""
        key = name + UPPER if negative and self._run_time(self.definitions[name].relation) else name
        if key not in self.stage_of_ref:
            stage, fn = self._rel(self.definitions[name].relation, negative)
            self.stage_of_ref[key] = stage
            self.steps[stage].append((key, fn))
        return key

    def _run_time(self, expr: rel.RelExpr | rel.SetExpr) -> bool:
        """Does a run-time relation (rf, co, sc) enter ``expr``, directly or through definitions?"""
        if isinstance(expr, rel.Base):
            return expr.name in RUN_TIME
        if isinstance(expr, rel.Ref):
            return self._run_time(self.definitions[expr.name].relation)
        return any(self._run_time(part) for part in rel.operands(expr).values())

    def _hoist(self, stage: int, fn: Fn, at: int) -> Fn:
        """A sub-expression known at an earlier stage than its parent is computed once, at its stage."""
        if stage == at:
            return fn
        key = self._hoisted_keys.get(id(fn))
        if key is None:
            self._hoisted += 1
            key = self._hoisted_keys[id(fn)] = f"#{self._hoisted}"
            self.steps[stage].append((key, fn))
        return lambda env: env[key]

    def _set(self, expr: rel.SetExpr, negative: bool) -> tuple[int, Fn]:
        return self._once(self._set_of, expr, negative)

    def _rel(self, expr: rel.RelExpr, negative: bool) -> tuple[int, Fn]:
        return self._once(self._rel_of, expr, negative)

    def _once(self, compile_: Callable, expr: rel.RelExpr | rel.SetExpr, negative: bool) -> tuple[int, Fn]:
        """Each expression compiled once per polarity (one function object, so hoisted once);
        polarity only matters where a run-time relation enters the expression."""
        key = (expr, negative and self._run_time(expr))
        if key not in self._compiled:
            self._compiled[key] = compile_(expr, key[1])
        return self._compiled[key]

    def _set_of(self, expr: rel.SetExpr, negative: bool) -> tuple[int, Fn]:
        if isinstance(expr, rel.SetBase):
            name = expr.name
            return 0, lambda env: env["sets"].get(name, 0)
        if isinstance(expr, (rel.SetUnion, rel.SetInter, rel.SetDiff)):
            flip = negative != isinstance(expr, rel.SetDiff)
            (s1, f1), (s2, f2) = self._set(expr.left, negative), self._set(expr.right, flip)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)
            if isinstance(expr, rel.SetUnion):
                return stage, lambda env: f1(env) | f2(env)
            if isinstance(expr, rel.SetInter):
                return stage, lambda env: f1(env) & f2(env)
            return stage, lambda env: f1(env) & ~f2(env)
        if isinstance(expr, rel.Domain):
            stage, f = self._rel(expr.relation, negative)
            return stage, lambda env: _mask_of(i for i, row in enumerate(f(env)) if row)
        if isinstance(expr, rel.Range):
            stage, f = self._rel(expr.relation, negative)

            def range_of(env: dict) -> int:
                acc = 0
                for row in f(env):
                    acc |= row
                return acc

            return stage, range_of
        raise TypeError(f"not a set expression: {expr!r}")

    def _rel_of(self, expr: rel.RelExpr, negative: bool) -> tuple[int, Fn]:
        if isinstance(expr, rel.Base):
            name = expr.name + UPPER if negative and expr.name in RUN_TIME else expr.name
            return STAGE_OF_BASE.get(name, 0), lambda env: env[name]
        if isinstance(expr, rel.Ref):
            if expr.name not in self.stage_of_ref:
                raise KeyError(f"definition {expr.name!r} used before it is defined")
            key = self._define(expr.name, negative)
            return self.stage_of_ref[key], lambda env: env[key]
        if isinstance(expr, rel.Empty):
            return 0, lambda env: [0] * env["n"]
        if isinstance(expr, rel.Identity):
            stage, f = self._set(expr.over, negative)

            def identity(env: dict) -> Rows:
                mask = f(env)
                return [(1 << i) if (mask >> i) & 1 else 0 for i in range(env["n"])]

            return stage, identity
        if isinstance(expr, rel.Product):
            (s1, f1), (s2, f2) = self._set(expr.left, negative), self._set(expr.right, negative)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)

            def product(env: dict) -> Rows:
                left, right = f1(env), f2(env)
                return [right if (left >> i) & 1 else 0 for i in range(env["n"])]

            return stage, product
        if isinstance(expr, (rel.Inverse, rel.Plus, rel.Optional)):
            stage, f = self._rel(expr.operand, negative)
            if isinstance(expr, rel.Inverse):
                return stage, lambda env: _inverse(f(env))
            if isinstance(expr, rel.Plus):
                return stage, lambda env: _plus(f(env))
            return stage, lambda env: [row | (1 << i) for i, row in enumerate(f(env))]
        if isinstance(expr, rel.Seq) and isinstance(expr.left, rel.Identity):
            # [S] ; r keeps the rows of r whose event is in S (no general composition needed).
            (s1, f1), (s2, f2) = self._set(expr.left.over, negative), self._rel(expr.right, negative)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)
            return stage, lambda env: _keep_rows(f2(env), f1(env))
        if isinstance(expr, rel.Seq) and isinstance(expr.right, rel.Identity):
            # r ; [S] keeps the columns of r whose event is in S.
            (s1, f1), (s2, f2) = self._rel(expr.left, negative), self._set(expr.right.over, negative)
            stage = max(s1, s2)
            f1, f2 = self._hoist(s1, f1, stage), self._hoist(s2, f2, stage)
            return stage, lambda env: _keep_columns(f1(env), f2(env))
        if isinstance(expr, (rel.Union, rel.Inter, rel.Diff, rel.Seq)):
            flip = negative != isinstance(expr, rel.Diff)
            (s1, f1), (s2, f2) = self._rel(expr.left, negative), self._rel(expr.right, flip)
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


def _keep_rows(rows: Rows, mask: int) -> Rows:
    return [row if (mask >> i) & 1 else 0 for i, row in enumerate(rows)]


def _keep_columns(rows: Rows, mask: int) -> Rows:
    return [row & mask for row in rows]


def _mask_of_union(masks: Iterable[int]) -> int:
    out = 0
    for mask in masks:
        out |= mask
    return out


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
        self.statics = statics
        # The base relations are computed when the model first reads one: a choice of traces that
        # an axiom on rf and the dependencies alone rules out never builds the rest.
        table: dict[str, tuple[int, Fn]] = {
            "sets": (0, lambda env: self._sets()),
            "po": (0, lambda env: self._po()),
            "scope_incl": (0, lambda env: self._scope_incl()),
        }
        for name in STATIC_RELATIONS:
            table.setdefault(name, (0, self._static_step(name)))
        for position, name in enumerate(EQUIVALENCE_RELATIONS):
            table[name] = (0, self._equivalence_step(position))
        for name in ("data", "ctrl", "addr"):
            table[name] = (0, self._dependency_step(name))
        self.base_env = _Env(table, {"n": n})
        self.takers = [i for i, e in enumerate(self.events) if e.takes_value]
        self.writes = [i for i, e in enumerate(self.events) if e.writes]
        self.fences_sc = [i for i, e in enumerate(self.events) if e.fence == "sc"]
        # Writes per physical location, the initial write first.
        self.locations: dict[str, list[int]] = {}
        for i in self.writes:
            event = self.events[i]
            self.locations.setdefault(event.physical, []).append(i)
        for writes in self.locations.values():
            writes.sort(key=lambda i: (not self.events[i].is_initial, i))

    def _sets(self) -> dict[str, int]:
        """Per set of §8.4 (``base.event_sets``), the mask of its events."""
        sets: dict[str, int] = {}
        for i, event in enumerate(self.events):
            for name in self.statics.sets[event.eid]:
                sets[name] = sets.get(name, 0) | (1 << i)
        return sets

    def _equivalence(self, position: int) -> Rows:
        """The equivalence relation ``EQUIVALENCE_RELATIONS[position]``: events with one key."""
        keys = [self.statics.keys[e.eid][position] for e in self.events]
        groups: dict[object, int] = {}
        for i, key in enumerate(keys):
            if key is not None:
                groups[key] = groups.get(key, 0) | (1 << i)
        return [groups[key] if key is not None else 0 for key in keys]

    def _equivalence_step(self, position: int) -> Fn:
        return lambda env: self._equivalence(position)

    def _dependency_step(self, name: str) -> Fn:
        return lambda env: self._dependencies()[name]

    def _po(self) -> Rows:
        # The events of one trace are contiguous here, in program order.
        same_thread = self.base_env["same_thread"]
        return [same_thread[i] & ~((2 << i) - 1) if event.thread is not None else 0 for i, event in enumerate(self.events)]

    def _static_step(self, name: str) -> Fn:
        """A static relation without a fast path here (``async_issue``, ``issued_before``,
        ``async_completed``, ``tcgen05_pipelined``, ``tcgen05_pipelinable``: of operations of threads, the asynchronous
        tcgen05 ones for the last), pair by pair from ``base.static_pair``."""

        def rows(env) -> Rows:
            out = [0] * self.n
            events = [(i, e) for i, e in enumerate(self.events) if e.thread is not None]
            if name == "tcgen05_pipelinable":
                events = [(i, e) for i, e in events if e.tcgen05 is not None]
            for i, a in events:
                for j, b in events:
                    if (b.thread == a.thread or name == "tcgen05_pipelinable") and static_pair(name, a, b, self.program):
                        out[i] |= 1 << j
            return out

        return rows

    def _scope_incl(self) -> Rows:
        statics = self.statics
        scope_keys = [statics.scope_key[e.eid] for e in self.events]
        by_key: dict[tuple, int] = {}
        for j, kb in enumerate(scope_keys):
            if kb is not None:
                by_key[kb] = by_key.get(kb, 0) | (1 << j)
        included = {ka: _mask_of_union(mask for kb, mask in by_key.items() if statics.scope_incl(ka, kb)) for ka in by_key}
        return [0 if ka is None else included[ka] & ~(1 << i) for i, ka in enumerate(scope_keys)]

    def _dependencies(self) -> dict[str, Rows]:
        rows = self.__dict__.get("_dependency_rows")
        if rows is None:
            rows = self._dependency_rows = {name: self._rows(pairs) for name, pairs in dependency_pairs(self.traces).items()}
        return rows

    def co_last(self, chosen: dict[str, int]) -> dict[str, int]:
        """The co-last write per physical location: ``chosen`` where given, else the only write."""
        return {physical: chosen.get(physical, writes[-1]) for physical, writes in self.locations.items()}

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
            physical = event.physical
            sources = [w for w in self.locations.get(physical, []) if w != r and (event.read_value is None or self.events[w].write_value == event.read_value)]
            if not sources:
                return None
            choices.append(sources)
        return choices

    def slots(self) -> list[_Slot]:
        """The orders a candidate must choose: co per physical location (initial write first), sc."""
        slots = [
            _Slot("co", physical, tuple(writes), writes[0] if self.events[writes[0]].is_initial else None)
            for physical, writes in self.locations.items()
            if len(writes) > 1
        ]
        if len(self.fences_sc) > 1:
            slots.append(_Slot("sc", None, tuple(self.fences_sc), None))
        return slots


@attrs.frozen
class _Slot:
    """One run-time strict total order to choose: co of one location, or sc."""

    relation: str
    """``"co"`` or ``"sc"``."""
    location: str | None
    """The physical location of a co slot."""
    members: tuple[int, ...]
    """Frame indices of the events it orders."""
    first: int | None
    """A member that is first in every order (the initial write, §8.2.6)."""

    @property
    def mask(self) -> int:
        return _mask_of(self.members)

    @property
    def physical(self) -> str:
        """The location of a co slot."""
        assert self.location is not None, "an sc slot has no location"
        return self.location


Sources = tuple[int | None, ...]
"""Per event that takes a value (:attr:`_Frame.takers`): the write it reads from, or None (not chosen)."""
Orders = tuple[tuple[tuple[int, ...], int | None], ...]
"""Per order slot: the members placed first, in order, and the member fixed last (or None)."""
Partial = tuple[Sources, Orders]


class _Choices:
    """The run-time choices of one frame, made one at a time: a source per read, then each order.

    A partial choice bounds every completion (see the module docstring): the chosen rf edges, the
    order prefixes, and what they force are lower bounds; every edge not yet excluded, an upper one.
    """

    def __init__(self, frame: _Frame, sources: list[list[int]], slots: Sequence[_Slot]) -> None:
        self.frame = frame
        self.sources = [_likely_sources(frame, r, options) for r, options in zip(frame.takers, sources)]
        self.slots = tuple(slots)

    def start(self, lasts: dict[int, int]) -> Partial:
        """Nothing chosen but the initial writes (first), ``lasts`` (slot -> member fixed last), and
        the sources of reads that have only one."""
        rf = tuple(options[0] if len(options) == 1 else None for options in self.sources)
        orders = tuple((() if slot.first is None else (slot.first,), lasts.get(k)) for k, slot in enumerate(self.slots))
        return rf, self._forced(orders)

    def _remaining(self, k: int, orders: Orders) -> list[int]:
        prefix, last = orders[k]
        return [i for i in self.slots[k].members if i not in prefix and i != last]

    def open(self, partial: Partial) -> tuple[str, int, list[int]] | None:
        """The next choice to make: ``("rf", taker position, sources)`` or ``("order", slot,
        members still to place)``; None when everything is chosen."""
        rf, orders = partial
        for position, source in enumerate(rf):
            if source is None:
                return "rf", position, self.sources[position]
        for k in range(len(self.slots)):
            remaining = self._remaining(k, orders)
            if remaining:
                return "order", k, remaining
        return None

    def place(self, partial: Partial, kind: str, position: int, member: int) -> Partial:
        rf, orders = partial
        if kind == "rf":
            return rf[:position] + (member,) + rf[position + 1 :], orders
        prefix, last = orders[position]
        return rf, self._forced(orders[:position] + (((*prefix, member), last),) + orders[position + 1 :])

    def _forced(self, orders: Orders) -> Orders:
        """Every slot with one member left completed: a forced move needs no search."""
        out = list(orders)
        for k, (prefix, last) in enumerate(orders):
            remaining = self._remaining(k, orders)
            if len(remaining) == 1:
                out[k] = ((*prefix, remaining[0]), last)
        return tuple(out)

    def greedy(self, env: _Env, partial: Partial) -> Partial:
        """``partial`` completed by taking, again and again, the first of the likely choices."""
        while (choice := self.open(partial)) is not None:
            kind, position, options = choice
            first = options[0] if kind == "rf" else _likely_first(env, options)[0]
            partial = self.place(partial, kind, position, first)
        return partial

    def likely(self, env: _Env, partial: Partial) -> list[Partial]:
        """The children of ``partial`` for its next choice, the likeliest first."""
        choice = self.open(partial)
        assert choice is not None, "likely() is asked only of a partial choice"
        kind, position, options = choice
        ordered = options if kind == "rf" else _likely_first(env, options)
        return [self.place(partial, kind, position, member) for member in ordered]

    def bounds(self, partial: Partial) -> dict[str, Rows]:
        """Lower and upper bounds of rf, co and sc for a partial choice.

        rf: the chosen sources; the upper bound adds every source still possible. Orders: the
        prefix in its order, the prefix before every other member, every other member before the
        fixed last one; the upper bound, every pair of members except those the lower one reverses."""
        n = self.frame.n
        rows = {name + suffix: [0] * n for name in RUN_TIME for suffix in ("", UPPER)}
        rf, orders = partial
        lower, upper = rows["rf"], rows["rf" + UPPER]
        for r, source, options in zip(self.frame.takers, rf, self.sources):
            if source is not None:
                lower[source] |= 1 << r
                upper[source] |= 1 << r
            else:
                for w in options:
                    upper[w] |= 1 << r
        for slot, (prefix, last) in zip(self.slots, orders):
            lower, upper = rows[slot.relation], rows[slot.relation + UPPER]
            everyone = slot.mask
            last_bit = 0 if last is None else 1 << last
            placed = _mask_of(prefix)
            rest = everyone & ~placed & ~last_bit
            before = 0
            for i in prefix:
                before |= 1 << i
                lower[i] |= (placed & ~before) | rest | last_bit
                upper[i] |= everyone & ~before
            for i in _bits(rest):
                lower[i] |= last_bit
                upper[i] |= everyone & ~placed & ~(1 << i)
        return rows

    def co_last(self, partial: Partial) -> dict[str, int]:
        """The co-last write of each location, for total coherence orders."""
        chosen: dict[str, int] = {}
        for slot, (prefix, last) in zip(self.slots, partial[1]):
            if slot.location is not None:
                chosen[slot.location] = last if last is not None else prefix[-1]
        return self.frame.co_last(chosen)


def _likely_sources(frame: _Frame, r: int, options: list[int]) -> list[int]:
    """The writes event ``r`` may read from, the likeliest first (the search order only): the
    latest of its own thread's earlier writes, then other threads' writes, the initial write last."""
    reader = frame.events[r]

    def rank(w: int) -> tuple:
        write = frame.events[w]
        if write.thread == reader.thread and write.index < reader.index:
            return (0, -write.index)
        return (2, 0) if write.is_initial else (1, w)

    return sorted(options, key=rank)


class _Env(dict):
    """Values by name, each computed from ``table`` the first time something reads it (a check,
    or a step that needs it); a name not in ``table`` is read from ``parent``.

    Three levels: a frame's base relations (:class:`_Frame`), the stage-0 steps of one choice of
    traces and barrier use, and the stage-1 steps of one choice of rf, co and sc. A candidate that
    one axiom rules out computes only what that axiom reads, and stage-0 values are computed once
    for every choice of rf, co and sc. With ``total`` orders a definition's upper bound is the
    definition itself and is not computed twice.
    """

    __slots__ = ("table", "parent", "total")

    def __init__(self, table: dict[str, tuple[int, Fn]], values: dict, parent: _Env | None = None, total: bool = True) -> None:
        super().__init__(values)
        self.table = table
        self.parent = parent
        self.total = total

    def __missing__(self, key: str) -> object:
        step = self.table.get(key)
        if step is None:
            if self.parent is None:
                raise KeyError(key)
            value = self.parent[key]
        elif self.total and key[-1] == UPPER:
            value = self[key[:-1]]
        else:
            value = step[1](self)
        self[key] = value
        return value

    def defines(self, key: str) -> bool:
        """Is ``key`` a value of this environment (computed or not yet)?"""
        return key in self or key in self.table or (self.parent is not None and self.parent.defines(key))


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
        self.observed_locations = observed_locations(program)

    def tick(self) -> None:
        self.candidates += 1
        self.ticks += 1
        if self.deadline is not None and self.ticks >= 16:
            self.ticks = 0
            if time.monotonic() > self.deadline:
                raise _Timeout()

    def stage(self, env: _Env, stage: int, all_axioms: bool = False) -> list[str]:
        """The names of the stage's failing axioms (only the first one found unless
        ``all_axioms``); the environment computes what each check reads."""
        failed = []
        for name, check in self.compiled.checks[stage]:
            if not check(env):
                failed.append(name)
                if not all_axioms:
                    break
        return failed

    def frames(self, skip: Callable[[Sequence[Trace]], bool] | None = None) -> Iterator[tuple[_Frame, frozenset[tuple[int, int]]]]:
        """Every choice of one trace per thread (and barrier use) that may be consistent;
        ``skip(traces)`` is asked first whether to look no further at a choice."""
        if self.statics is None:
            self.statics = _Statics(self.program)
        choices = [[t for t in thread.traces if t.blocked_at is None] for thread in self.program.threads]
        initial = {(e.physical, e.write_value) for e in self.program.initial}
        written = {id(t): {(e.physical, e.write_value) for e in t.events if e.writes} for c in choices for t in c}
        for traces in itertools.product(*choices):
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise _Timeout()
            if not _values_available(traces, initial, written) or (skip is not None and skip(traces)):
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
    ) -> Iterator[tuple[_Env, list[str], dict[str, int]]]:
        """Yield ``(env, failed axioms, co-last writes)`` per candidate reached.

        Without ``all_axioms`` the search prunes and yields only consistent candidates (failed
        empty), at most one per final state: the first completion of rf and the orders that
        satisfies every axiom. With ``all_axioms`` every candidate is yielded with every axiom
        it violates. ``skip`` is asked once the co-last writes of the observed locations are chosen
        (the final state is then known) whether to look no further.
        """
        prune = not all_axioms
        env0 = _Env(self.compiled.tables[0], {"bar_sync": frame._rows(option)}, parent=frame.base_env)
        failed0 = self.stage(env0, 0, all_axioms)
        if failed0 and prune:
            self.tick()
            return
        sources = frame.rf_choices()
        if sources is None:
            return
        choices = _Choices(frame, sources, frame.slots())
        slots = choices.slots
        fixed = [k for k, slot in enumerate(slots) if slot.relation == "co" and slot.location in self.observed_locations]
        lasts_choices = [[w for w in slots[k].members if w != slots[k].first] for k in fixed]
        for lasts in itertools.product(*lasts_choices):
            chosen = dict(zip(fixed, lasts))
            if skip is not None and skip(frame.co_last({slots[k].physical: w for k, w in chosen.items()})):
                continue
            for env, failed, partial in self._complete(env0, choices, choices.start(chosen), prune, all_axioms):
                yield env, failed0 + failed, choices.co_last(partial)

    def _complete(self, env0: _Env, choices: _Choices, start: Partial, prune: bool, all_axioms: bool) -> Iterator[tuple[_Env, list[str], Partial]]:
        """Total choices extending ``start``, depth first, each with its environment and failing
        axioms. With ``prune``: the first consistent one only, and a node whose bounds already
        violate an axiom cuts its subtree; without: every total choice."""

        def evaluate(partial: Partial) -> tuple[_Env, list[str]]:
            self.tick()
            env = _Env(self.compiled.tables[1], choices.bounds(partial), parent=env0, total=choices.open(partial) is None)
            return env, self.stage(env, 1, all_axioms)

        if not prune:
            stack: list[Partial] = [start]
            while stack:
                partial = stack.pop()
                choice = choices.open(partial)
                if choice is None:
                    yield (*evaluate(partial), partial)
                else:
                    kind, position, options = choice
                    stack.extend(choices.place(partial, kind, position, member) for member in reversed(options))
            return
        pending = [start]
        while pending:
            partial = pending.pop()
            env, failed = evaluate(partial)
            if failed:
                continue
            if choices.open(partial) is None:
                yield env, failed, partial
                return
            # First the completion that takes the likeliest choice all the way (one evaluation, and
            # in most consistent candidates the answer); only if it fails, one choice at a time.
            guess = choices.greedy(env, partial)
            guess_env, guess_failed = evaluate(guess)
            if not guess_failed:
                yield guess_env, guess_failed, guess
                return
            pending.extend(reversed(choices.likely(env, partial)))


def _likely_first(env: _Env, remaining: list[int]) -> list[int]:
    """``remaining`` reordered: members with no predecessor among the others in :func:`_hints` first.
    Only the order of the search depends on it, never its answer."""
    hints = _hints(env)
    among = _mask_of(remaining)
    free = [i for i in remaining if not any((hints[j] >> i) & 1 for j in _bits(among & ~(1 << i)))]
    return free + [i for i in remaining if i not in free]


def _hints(env: _Env) -> Rows:
    """Pairs (x, y) that a coherence or Fence-SC order usually puts x first in: program order,
    causality order, and po ; communication order ; po (from x's thread a value flows to y's: a
    Fence-SC order with y first would close a cycle of causality and communication, which §8.10.6
    forbids). Computed once per environment."""
    hints = env.get("#hints")
    if hints is None:
        po = env["po"]
        hints = list(po)
        if env.defines("causality_order"):
            hints = [a | b for a, b in zip(hints, env["causality_order"])]
        if env.defines("communication_order"):
            hints = [a | b for a, b in zip(hints, _seq(po, _seq(env["communication_order"], po)))]
        env["#hints"] = hints
    return hints


def observed_locations(program: Program) -> frozenset[str]:
    """The physical locations whose final value the condition (or ``locations``) shows."""
    out = set()
    for term in program.observed:
        if isinstance(term, LocationTerm):
            address = program.addresses.get(term.name)
            out.add(address.physical if address is not None else term.name)
    return frozenset(out)


def _values_available(traces: Sequence[Trace], initial: set[tuple[str, int | None]], written: dict[int, set[tuple[str, int | None]]]) -> bool:
    """A quick necessary condition: every value a trace reads is written by someone (or initial)."""
    available = set(initial)
    for trace in traces:
        available |= written[id(trace)]
    for trace in traces:
        for event in trace.events:
            if event.takes_value and event.read_value is not None:
                if (event.physical, event.read_value) not in available:
                    return False
    return True


def _state(program: Program, frame: _Frame, last: dict[str, int]) -> State:
    writes = {physical: frame.events[i] for physical, i in last.items()}
    return state_of(program, final_values(program, frame.traces, writes))


def _execution(model: rel.Model, frame: _Frame, env: _Env, last: dict[str, int]) -> Execution:
    names = ["po", "rf", "co", "sc", "bar_sync"] + [d.name for d in model.definitions]
    relations = {name: _pairs(env[name], frame.eids) for name in names if env.defines(name)}
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

    def known_traces(traces: Sequence[Trace]) -> bool:
        # Where no location is observed, the traces alone fix the final state.
        if search.observed_locations:
            return False
        state = state_of(program, final_values(program, traces, {}))
        return state in states and not (want_witness and witness is None and state_holds(condition.formula, state) == target)

    try:
        for frame, option in search.frames(skip=known_traces):
            for env, failed, last in search.candidates_of(frame, option, all_axioms=False, skip=known(frame)):
                if failed:
                    continue
                state = _state(program, frame, last)
                if want_witness and witness is None and state_holds(condition.formula, state) == target:
                    witness = _execution(model, frame, env, last)
                states.add(state)
        ok, positive, negative = judge(condition, states)
    except _Timeout:
        return undecided(ENGINE, time.monotonic() - start, search.candidates)
    why = None
    if want_why:
        # Best effort within what is left of the time (WHY_BUDGET_S without a limit): the verdict
        # stands without it, and an explanation not found in time is None, never a guess.
        left = WHY_BUDGET_S if deadline is None else deadline - time.monotonic()
        search.deadline = time.monotonic() + max(0.0, left)
        try:
            why = _why(search, program, states)
        except _Timeout:
            why = None
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


WHY_BUDGET_S = 10.0
"""Seconds the explicit engine spends looking for the axioms that forbid an outcome when the check
has no time limit."""


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
        for _env, failed, last in search.candidates_of(frame, option, all_axioms=True, skip=skip):
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
