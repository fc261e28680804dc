"""The Z3 interpreter of the model: every candidate execution of a program at once.

The explicit engine builds candidate executions one by one and evaluates the model on each. This
engine describes all of them with one formula and lets Z3 search it:

* *Trace choice.* Each thread with several traces gets one Boolean per trace, exactly one true.
  Traces that take the same path through the code differ only in the values their reads return,
  so the events of a thread are merged into a tree of *nodes*, one per path prefix: a node exists
  when one of the traces through it is chosen, and its values are those of that trace. Initial
  writes always exist.
* *Reads-from* (§8.9.7 item 1). One Boolean per pair (write ``w``, node ``r`` that takes a value)
  on the same physical location whose values can agree; it implies that both exist and that the
  chosen traces give ``w.write_value == r.read_value``; every existing ``r`` has exactly one source.
* *Coherence order* (§8.9.6): per physical location a strict total order over the existing
  writes, the initial write first (one orientation Boolean per pair of writes, and no 3-cycles).
* *Fence-SC order* (§8.9.3): the same kind of strict total order over the existing ``fence.sc``
  operations; the model keeps its morally strong pairs.
* *Barriers* (§8.9.4 items 2 and 3): ``bar_sync`` and the executions in which no thread blocks,
  by the rules of ``base.barrier_options``, stated with integer arrival times.

The model (``relations.py``) is then interpreted over sparse matrices whose entries are either
absent (false), or a pair ``(guard, term)``: ``guard`` is the set of nodes that must exist for the
two events to exist (the deepest per thread), and ``term`` is ``True`` or a Boolean term over the
run-time choices. Static relations therefore fold to constants, two nodes that no trace holds
together are never related, and terms are built only where a relation depends on reads-from,
coherence, Fence-SC order or barriers. Each axiom is asserted under its own literal, so an
unsatisfiable question ("can this outcome happen?") answers with the axioms that forbid it: an
unsat core, minimised.

Final states are enumerated by solving, reading the observed terms off the model, excluding that
state and solving again. A time limit that runs out, or a Z3 ``unknown``, gives an undecided
result, never a guess.
"""

from __future__ import annotations

import time
from typing import Hashable, Iterable, Mapping

import attrs
import z3
from z3 import z3core

from . import base
from . import relations as rel
from .engine import EngineResult, Execution, forbidden_outcome, judge, state_holds, undecided, wanted
from .program import (
    MASK,
    And,
    Barrier,
    Compare,
    Constant,
    Event,
    Formula,
    LocationTerm,
    Not,
    Or,
    Program,
    RegisterTerm,
    Term,
    TrueFormula,
)

ENGINE = "z3"

NO_GUARD: frozenset[int] = frozenset()
"""The guard of an entry between events that always exist."""


class Undecided(Exception):
    """The time limit ran out (or Z3 answered ``unknown``)."""


# ---- entries: (guard, term) with constant folding ----------------------------------------------------


class _Terms:
    """Boolean terms over Z3 literals, hash-consed in Python and handed to Z3 only when asserted.

    Building a Z3 term through its Python API costs tens of microseconds; most terms of an
    encoding fold away (``True`` absorbs, duplicates merge) before they are ever asserted. A term
    is ``True`` or an integer id; conjunctions and disjunctions are flattened sets of ids.
    """

    def __init__(self) -> None:
        self.table: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.built: dict[int, z3.BoolRef] = {}

    def leaf(self, expr: z3.BoolRef) -> int:
        number = len(self.table)
        self.table.append(("leaf",))
        self.built[number] = expr
        return number

    def _make(self, key: tuple) -> int:
        number = self.index.get(key)
        if number is None:
            number = len(self.table)
            self.table.append(key)
            self.index[key] = number
        return number

    def and_(self, a, b):
        if a is True:
            return b
        if b is True or a == b:
            return a
        return self.all([a, b])

    def all(self, items: Iterable):
        parts: set[int] = set()
        for item in items:
            if item is True:
                continue
            entry = self.table[item]
            if entry[0] == "and":
                parts.update(entry[1])
            else:
                parts.add(item)
        if not parts:
            return True
        if len(parts) == 1:
            return next(iter(parts))
        return self._make(("and", frozenset(parts)))

    def any(self, items: Iterable):
        parts: set[int] = set()
        for item in items:
            if item is True:
                return True
            entry = self.table[item]
            if entry[0] == "or":
                parts.update(entry[1])
            else:
                parts.add(item)
        if not parts:
            raise ValueError("an empty disjunction has no term (absent entries are false)")
        if len(parts) == 1:
            return next(iter(parts))
        return self._make(("or", frozenset(parts)))

    def not_(self, a: int) -> int:
        entry = self.table[a]
        if entry[0] == "not":
            return entry[1]
        return self._make(("not", a))

    def z3(self, term) -> z3.BoolRef:
        """The Z3 term (built once per id)."""
        if term is True:
            return z3.BoolVal(True)
        built = self.built.get(term)
        if built is not None:
            return built
        entry = self.table[term]
        if entry[0] == "not":
            built = _not(self.z3(entry[1]))
        else:
            built = _nary(entry[0], [self.z3(child) for child in sorted(entry[1])])
        self.built[term] = built
        return built


def _nary(kind: str, children: list) -> z3.BoolRef:
    """``z3.And``/``z3.Or`` through the C API (the Python wrappers re-check sorts at every call)."""
    ctx = children[0].ctx
    array = (z3.Ast * len(children))()
    for position, child in enumerate(children):
        array[position] = child.as_ast()
    make = z3core.Z3_mk_and if kind == "and" else z3core.Z3_mk_or
    return z3.BoolRef(make(ctx.ref(), len(children), array), ctx)


def _not(term: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_not(term.ctx.ref(), term.as_ast()), term.ctx)


def _implies(premise: z3.BoolRef, conclusion: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_implies(premise.ctx.ref(), premise.as_ast(), conclusion.as_ast()), premise.ctx)


class _Encoding:
    """The symbolic candidate executions of one program, and the model interpreted over them."""

    def __init__(self, program: Program, model: rel.Model, deadline: float | None) -> None:
        self.program = program
        self.model = model
        self.deadline = deadline
        self.solver = z3.Solver()
        # Relevancy filtering pays off for quantified problems; these are ground and enumerated by
        # thousands of small incremental checks, which it slows about 2.5x (bench/litmus.py, SB ring).
        self.solver.set("smt.relevancy", 0)
        self.constraints: list = []
        self.t = _Terms()
        self._merged: dict[tuple[frozenset[int], frozenset[int]], frozenset[int] | None] = {}
        self._guard_terms: dict[frozenset[int], object] = {NO_GUARD: True}
        self._memo: dict = {}
        self._by_id: dict[int, tuple] = {}
        self.definitions: dict[str, dict] = {}
        self.axiom_literal: dict[str, z3.BoolRef] = {}
        self._nodes()
        self._choose_traces()
        self._vocabulary()
        self._barriers()
        self._reads_from()
        self.co = self._total_orders(self._writes_by_location(), "co", initial_first=True)
        self.sc = self._total_orders({"sc": [i for i in range(self.n) if self.events[i].fence == "sc"]}, "sc")

    def _nodes(self) -> None:
        """Merge the traces of each thread into a tree of *nodes*: one node per path prefix.

        Traces that take the same path through the code differ only in the values their reads
        return; their events at one position are one node here, which exists when one of those
        traces is chosen and whose values depend on which one. This keeps the encoding as small
        as the code rather than as large as the number of traces.
        """
        program = self.program
        self.events: list[Event] = list(program.initial)
        """A representative event per node (the node's static facts; its values vary)."""
        count = len(self.events)
        self.node_thread: list[int | None] = [None] * count
        self.ancestors: list[frozenset[int]] = [frozenset()] * count
        self.node_traces: list[list[int]] = [[] for _ in range(count)]
        self.node_event: list[dict[int, Event]] = [{} for _ in range(count)]
        self.eid_node: dict[int, int] = {event.eid: i for i, event in enumerate(self.events)}
        self.trace_thread: list[int] = []
        self.trace_of_id: list = []
        self.trace_nodes: list[list[int]] = []
        self.trace_var: dict[int, z3.BoolRef] = {}
        self.trace_leaf: dict[int, int] = {}
        self.thread_traces: list[list[int]] = []
        for thread in program.threads:
            children: dict[tuple, int] = {}
            ids = []
            for number, trace in enumerate(thread.traces):
                tid = len(self.trace_thread)
                ids.append(tid)
                self.trace_thread.append(thread.index)
                self.trace_of_id.append(trace)
                if len(thread.traces) > 1:
                    self.trace_var[tid] = z3.Bool(f"trace_{thread.name}_{number}")
                    self.trace_leaf[tid] = self.t.leaf(self.trace_var[tid])
                chain: list[int] = []
                parent = None
                for event in trace.events:
                    key = (parent, _shape(event))
                    node = children.get(key)
                    if node is None:
                        node = len(self.events)
                        children[key] = node
                        self.events.append(event)
                        self.node_thread.append(thread.index)
                        self.ancestors.append(frozenset(chain))
                        self.node_traces.append([])
                        self.node_event.append({})
                    self.node_traces[node].append(tid)
                    self.node_event[node][tid] = event
                    self.eid_node[event.eid] = node
                    chain.append(node)
                    parent = node
                self.trace_nodes.append(chain)
            self.thread_traces.append(ids)
        self.n = len(self.events)
        # A node on every trace of its thread always exists; the others get a variable.
        self.guard: list[frozenset[int]] = []
        self.node_var: dict[int, z3.BoolRef] = {}
        self.node_leaf: dict[int, int] = {}
        for node in range(self.n):
            owner = self.node_thread[node]
            if owner is None or len(self.node_traces[node]) == len(self.thread_traces[owner]):
                self.guard.append(NO_GUARD)
                continue
            variable = z3.Bool(f"node_{self.events[node].eid}")
            self.node_var[node] = variable
            self.node_leaf[node] = self.t.leaf(variable)
            self.guard.append(frozenset((node,)))
            self.constraints.append(variable == z3.Or([self.trace_var[tid] for tid in self.node_traces[node]]))

    def values(self, node: int, read: bool) -> dict[int | None, object]:
        """value -> when the node (if it exists) reads (or writes) that value (None: a value the
        trace leaves open)."""
        key = ("values", node, read)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        groups: dict[int | None, list[int]] = {}
        for tid, event in self.node_event[node].items() or [(None, self.events[node])]:
            value = event.read_value if read else event.write_value
            value = None if value is None else value & MASK
            tids = groups.setdefault(value, [])
            if tid is not None:  # None: an initial write, on no trace (so in one group, always there)
                tids.append(tid)
        result: dict[int | None, object]
        if len(groups) == 1:
            result = {next(iter(groups)): True}
        else:
            result = {value: self.t.any([self.trace_leaf[tid] for tid in tids]) for value, tids in groups.items()}
        self._memo[key] = result
        return result

    # -- guards --------------------------------------------------------------------------------------

    def merge(self, first: frozenset[int], second: frozenset[int]) -> frozenset[int] | None:
        """The guard of both (the deepest node per thread), or None when they cannot coexist."""
        if not first:
            return second
        if not second or first == second:
            return first
        key = (first, second)
        if key in self._merged:
            return self._merged[key]
        deepest = {self.node_thread[node]: node for node in first}
        result: frozenset[int] | None = None
        for node in second:
            thread = self.node_thread[node]
            other = deepest.get(thread)
            if other is None or other == node or node in self.ancestors[other]:
                deepest.setdefault(thread, node)
            elif other in self.ancestors[node]:
                deepest[thread] = node
            else:
                break
        else:
            result = frozenset(deepest.values())
        self._merged[key] = result
        return result

    def implied(self, node: int, guard: frozenset[int]) -> bool:
        """Does ``guard`` imply that ``node`` exists?"""
        return any(node == other or node in self.ancestors[other] for other in guard)

    def guard_term(self, guard: frozenset[int]):
        term = self._guard_terms.get(guard)
        if term is None:
            term = self.t.all([self.node_leaf[node] for node in guard])
            self._guard_terms[guard] = term
        return term

    def exists(self, i: int):
        return self.guard_term(self.guard[i])

    def exists_z3(self, i: int) -> z3.BoolRef:
        return self.t.z3(self.exists(i))

    def entry_term(self, entry):
        guard, term = entry
        return self.t.and_(self.guard_term(guard), term)

    def entry_z3(self, entry) -> z3.BoolRef:
        return self.t.z3(self.entry_term(entry))

    def conj(self, a, b):
        """The conjunction of two entries (None when it is constantly false)."""
        guard = self.merge(a[0], b[0])
        if guard is None:
            return None
        return (guard, self.t.and_(a[1], b[1]))

    def disj(self, entries: list):
        """The disjunction of entries."""
        if len(entries) == 1:
            return entries[0]
        groups: dict[frozenset[int], list] = {}
        for guard, term in entries:
            groups.setdefault(guard, []).append(term)
        folded = {guard: self.t.any(terms) for guard, terms in groups.items()}
        # A group that holds whenever its guard does absorbs every group with a larger guard.
        sure = [guard for guard, term in folded.items() if term is True]
        if sure:
            folded = {guard: term for guard, term in folded.items() if not any(small <= guard and small != guard for small in sure)}
        if len(folded) == 1:
            return next(iter(folded.items()))
        common = frozenset.intersection(*folded)
        residuals = [self.t.and_(self.guard_term(guard - common), term) for guard, term in folded.items()]
        return (common, self.t.any(residuals))

    def minus(self, a, b):
        """``a`` and not ``b`` (None when constantly false)."""
        if b is None:
            return a
        if self.merge(a[0], b[0]) is None:
            return a
        extra = frozenset(node for node in b[0] if not self.implied(node, a[0]))
        if not extra and b[1] is True:
            return None
        return (a[0], self.t.and_(a[1], self.t.not_(self.t.and_(self.guard_term(extra), b[1]))))

    def check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Undecided

    # -- candidate executions ------------------------------------------------------------------------

    def _choose_traces(self) -> None:
        """Each thread runs exactly one of its traces (a thread without any has no execution)."""
        for ids in self.thread_traces:
            if len(ids) > 1:
                self.constraints.append(z3.PbEq([(self.trace_var[tid], 1) for tid in ids], 1))
            elif not ids:
                self.constraints.append(z3.BoolVal(False))

    def _barriers(self) -> None:
        """``bar_sync`` and the executions where no thread blocks, by the rules that
        ``base.barrier_options`` simulates for one choice of traces, stated here declaratively.

        §8.9.4 items 2 and 3: "bar{.cta}.sync, bar{.cta}.red or bar{.cta}.arrive synchronizes with
        bar{.cta}.sync or bar{.cta}.red executed on the same barrier"; "barrier.cluster.arrive
        synchronizes with barrier.cluster.wait". Operations of one CTA on one logical barrier with
        equal phase form a *group* (one use of the barrier). Arrivals happen at integer times;
        with an expected count q, the first q arrivals complete the barrier together and later
        ones pass at once, synchronizing in one direction only. A thread reaches a barrier
        operation only after its earlier waiting ones have completed. An execution in which a
        waiting operation can never complete (too few arrivals, crossed barriers, a trace that
        stops at a barrier) is not a candidate execution.
        """
        self.bar_sync: dict[int, dict] = {}
        for tid, trace in enumerate(self.trace_of_id):
            if trace.blocked_at is not None:
                self.constraints.append(z3.Not(self.trace_var[tid]) if tid in self.trace_var else z3.BoolVal(False))
        groups: dict[tuple, list[int]] = {}
        grouped: dict[int, Barrier] = {}
        for chain in self.trace_nodes:
            cluster_uses: dict[str, int] = {}
            for i in chain:
                barrier = self.events[i].barrier
                if barrier is None:
                    continue
                thread = self.node_thread[i]
                assert thread is not None, "a node of a trace is on its thread"
                placement = self.program.threads[thread].placement
                key: tuple[Hashable, ...]
                if barrier.level == "cluster":
                    # The k-th arrive of each thread with the k-th wait (§9.7.13.3).
                    k = cluster_uses.get(barrier.op, 0)
                    cluster_uses[barrier.op] = k + 1
                    cluster = ("cluster", placement.cluster) if placement.cluster is not None else ("cta", placement.cta)
                    key = ("cluster", placement.gpu, cluster, k)
                else:
                    key = ("cta", placement.gpu, placement.cta, barrier.barrier_id, barrier.phase)
                if i not in grouped:
                    grouped[i] = barrier
                    groups.setdefault(key, []).append(i)
        self.arrival: dict[int, z3.ArithRef] = {}
        completion: dict[int, tuple[list[int], int | None]] = {}  # op -> (its group, q)
        for members in groups.values():
            self._reduction(members, grouped)
        for key, members in groups.items():
            counts = [grouped[m].count for m in members if grouped[m].count is not None]
            quorum = counts[0] if counts else None
            if key[0] == "cluster":
                senders = [m for m in members if grouped[m].op == "arrive"]
                receivers = [m for m in members if grouped[m].op == "wait"]
            else:
                senders = members
                receivers = [m for m in members if grouped[m].op in ("sync", "red")]
            for m in receivers:
                completion[m] = (members, quorum)
            if quorum is None:
                for x in senders:
                    for y in receivers:
                        guard = self.merge(self.guard[x], self.guard[y])
                        if self.node_thread[x] != self.node_thread[y] and guard is not None:
                            self.bar_sync.setdefault(x, {})[y] = (guard, True)
                continue
            self._quorum(members, senders, receivers, quorum)
        # Progress: an operation after a waiting one starts after that one's barrier completed.
        done: set[tuple[int, int]] = set()
        for chain in self.trace_nodes:
            ops = [i for i in chain if self.events[i].barrier is not None]
            for x, a in enumerate(ops):
                for b in ops[x + 1 :]:
                    if (a, b) in done:
                        continue
                    done.add((a, b))
                    self._when(self.guard[b], self.time(b) > self.time(a))
                    if a not in completion:
                        continue
                    members, quorum = completion[a]
                    if quorum is None:
                        for m in members:
                            guard = self.merge(self.guard[b], self.guard[m])
                            if m != a and guard is not None:
                                self._when(guard, self.time(b) > self.time(m))
                    else:
                        earlier = [
                            (z3.And(self.exists_z3(m), self.time(m) < self.time(b)), 1) for m in members if self.merge(self.guard[b], self.guard[m]) is not None
                        ]
                        self._when(self.guard[b], z3.PbGe(earlier, quorum))

    def _reduction(self, members: list[int], grouped: dict[int, Barrier]) -> None:
        """bar.red (§9.7.13.1): each one's result is the reduction of the predicates of the group's
        bar.red operations that exist (``base.reduction_holds``, stated over the chosen nodes)."""
        reds = [m for m in members if grouped[m].reduction is not None]
        for r in reds:
            barrier = grouped[r]
            assert barrier.reduction is not None and barrier.result is not None, "a bar.red node carries its reduction and result"
            others = [m for m in reds if self.merge(self.guard[r], self.guard[m]) is not None]
            true = [(self.exists_z3(m), 1) for m in others if grouped[m].predicate]
            false = [self.exists_z3(m) for m in others if not grouped[m].predicate]
            if barrier.reduction == "popc":
                holds = z3.PbEq(true, barrier.result) if true else z3.BoolVal(barrier.result == 0)
            elif barrier.reduction == "and":
                holds = z3.Not(z3.Or(false)) if barrier.result else z3.Or(false)
            else:
                holds = z3.Or([e for e, _ in true]) if barrier.result else z3.Not(z3.Or([e for e, _ in true]))
            self._when(self.guard[r], holds)

    def time(self, i: int) -> z3.ArithRef:
        if i not in self.arrival:
            self.arrival[i] = z3.Int(f"arrival_{self.events[i].eid}")
        return self.arrival[i]

    def _when(self, guard: frozenset[int], constraint) -> None:
        """A constraint that holds whenever the nodes of ``guard`` exist."""
        self.constraints.append(z3.Implies(self.t.z3(self.guard_term(guard)), constraint) if guard else constraint)

    def _quorum(self, members: list[int], senders: list[int], receivers: list[int], quorum: int) -> None:
        """A use of the barrier that expects ``quorum`` threads (rule 3): the first ``quorum``
        arrivals synchronize with each other; a later one only receives from those before it."""
        early: dict[int, object] = {}
        for x in members:
            before = []
            for z in members:
                guard = self.merge(self.guard[x], self.guard[z])
                if z == x or guard is None:
                    continue
                if z > x:
                    self._when(guard, self.time(x) != self.time(z))
                before.append((z3.And(self.exists_z3(z), self.time(z) < self.time(x)), 1))
            early[x] = z3.PbLe(before, quorum - 1) if before else z3.BoolVal(quorum >= 1)
        for y in receivers:
            present = [(self.exists_z3(m), 1) for m in members if self.merge(self.guard[y], self.guard[m]) is not None]
            self._when(self.guard[y], z3.PbGe(present, quorum))
            for x in senders:
                guard = self.merge(self.guard[x], self.guard[y])
                if self.node_thread[x] == self.node_thread[y] or guard is None:
                    continue
                term = self.t.leaf(z3.Or(self.time(x) < self.time(y), z3.And(early[x], early[y])))
                self.bar_sync.setdefault(x, {})[y] = (guard, term)

    def _vocabulary(self) -> None:
        """The base sets of every node (``base.event_sets``); static relations come lazily."""
        self.static_sets: dict[str, list[int]] = {name: [] for name in base.SET_NAMES}
        for i, event in enumerate(self.events):
            for name in base.event_sets(event):
                self.static_sets.setdefault(name, []).append(i)
        self._static: dict[str, dict] = {}

    def static_base(self, name: str) -> dict:
        """The static base relation ``name`` over all nodes (pairs that cannot coexist left out)."""
        matrix = self._static.get(name)
        if matrix is not None:
            return matrix
        matrix = {}
        if name in base.STATIC_RELATIONS:
            for i in range(self.n):
                for j in range(self.n):
                    guard = self.merge(self.guard[i], self.guard[j])
                    if guard is not None and base.static_pair(name, self.events[i], self.events[j], self.program):
                        matrix.setdefault(i, {})[j] = (guard, True)
        elif name in base.DEPENDENCY_RELATIONS:
            # A dependency holds in the traces that have it (a path through both nodes).
            having: dict[tuple[int, int], list[int]] = {}
            for tid, trace in enumerate(self.trace_of_id):
                for a, b in base.dependency_pairs([trace])[name]:
                    having.setdefault((self.eid_node[a], self.eid_node[b]), []).append(tid)
            for (a, b), tids in having.items():
                guard = self.merge(self.guard[a], self.guard[b])
                if guard is None:
                    continue
                through = set(self.node_traces[a]) & set(self.node_traces[b])
                term = True if set(tids) >= through else self.t.any([self.trace_leaf[tid] for tid in tids])
                matrix.setdefault(a, {})[b] = (guard, term)
        else:
            raise KeyError(f"not a base relation: {name!r}")
        self._static[name] = matrix
        return matrix

    def _reads_from(self) -> None:
        """One Boolean per (write, reader) pair that may agree on location and value."""
        self.rf: dict[int, dict] = {}
        for r in range(self.n):
            read = self.events[r]
            if not read.takes_value or read.address is None:
                continue
            self.check_time()
            read_values = self.values(r, read=True)
            sources = []
            for w in range(self.n):
                write = self.events[w]
                if w == r or not write.writes or write.address is None:
                    continue
                if write.address.physical != read.address.physical:
                    continue
                guard = self.merge(self.guard[w], self.guard[r])
                if guard is None:
                    continue
                write_values = self.values(w, read=False)
                if None in read_values:  # a reader whose value the trace leaves open
                    agree = [True]
                else:
                    agree = [self.t.and_(read_values[v], write_values[v]) for v in read_values if v in write_values]
                if not agree:
                    continue
                var = z3.Bool(f"rf_{write.eid}_{read.eid}")
                self.constraints.append(z3.Implies(var, self.t.z3(self.t.and_(self.guard_term(guard), self.t.any(agree)))))
                self.rf.setdefault(w, {})[r] = (guard, self.t.leaf(var))
                sources.append(var)
            if not sources:
                self._when(self.guard[r], z3.BoolVal(False))
            else:
                self._when(self.guard[r], z3.PbEq([(var, 1) for var in sources], 1))

    def _writes_by_location(self) -> dict[str, list[int]]:
        by_location: dict[str, list[int]] = {}
        for i, event in enumerate(self.events):
            if event.writes and event.address is not None:
                by_location.setdefault(event.address.physical, []).append(i)
        return by_location

    def _total_orders(self, groups: Mapping[str, list[int]], name: str, initial_first: bool = False) -> dict:
        """A strict total order over the existing nodes of each group (one Boolean per pair)."""
        order: dict[int, dict] = {}
        for members in groups.values():
            for x, a in enumerate(members):
                for b in members[x + 1 :]:
                    guard = self.merge(self.guard[a], self.guard[b])
                    if guard is None:
                        continue
                    if initial_first and self.events[a].is_initial:
                        order.setdefault(a, {})[b] = (guard, True)
                        continue
                    if initial_first and self.events[b].is_initial:
                        order.setdefault(b, {})[a] = (guard, True)
                        continue
                    var = z3.Bool(f"{name}_{self.events[a].eid}_{self.events[b].eid}")
                    leaf = self.t.leaf(var)
                    order.setdefault(a, {})[b] = (guard, leaf)
                    order.setdefault(b, {})[a] = (guard, self.t.not_(leaf))
            # No cycle of three (with totality and antisymmetry by construction: transitivity).
            inner = [m for m in members if not (initial_first and self.events[m].is_initial)]
            for x, a in enumerate(inner):
                for y in range(x + 1, len(inner)):
                    b = inner[y]
                    if b not in order.get(a, {}):
                        continue
                    for c in inner[y + 1 :]:
                        if c not in order.get(a, {}) or c not in order.get(b, {}):
                            continue
                        pair = self.merge(self.guard[a], self.guard[b])
                        assert pair is not None, "a and b are ordered, so they can coexist"
                        guard = self.merge(pair, self.guard[c])
                        if guard is None:
                            continue
                        both = []
                        for p, q, s in ((a, b, c), (a, c, b)):
                            cycle = z3.And([self.t.z3(order[x][y][1]) for x, y in ((p, q), (q, s), (s, p))])
                            both.append(z3.Not(cycle))
                        self._when(guard, z3.And(both))
        return order

    # -- the DSL over entries ------------------------------------------------------------------------

    def static_set(self, members: Iterable[int]) -> dict:
        return {i: (self.guard[i], True) for i in members}

    def set_of(self, expr: rel.SetExpr) -> dict:
        # Keyed by identity (hashing an expression tree is recursive); the expression is kept
        # with its value so that its id cannot be reused by another object meanwhile.
        memo = self._by_id.get(id(expr))
        if memo is not None and memo[0] is expr:
            return memo[1]
        result = self._set_of(expr)
        self._by_id[id(expr)] = (expr, result)
        return result

    def _set_of(self, expr: rel.SetExpr) -> dict:
        if isinstance(expr, rel.SetBase):
            return self.static_set(self.static_sets[expr.name])
        if isinstance(expr, rel.SetUnion):
            left, right = self.set_of(expr.left), self.set_of(expr.right)
            result = dict(left)
            for i, entry in right.items():
                result[i] = self.disj([result[i], entry]) if i in result else entry
            return result
        if isinstance(expr, rel.SetInter):
            left, right = self.set_of(expr.left), self.set_of(expr.right)
            result = {}
            for i, entry in left.items():
                if i in right:
                    both = self.conj(entry, right[i])
                    if both is not None:
                        result[i] = both
            return result
        if isinstance(expr, rel.SetDiff):
            left, right = self.set_of(expr.left), self.set_of(expr.right)
            result = {}
            for i, entry in left.items():
                rest = self.minus(entry, right.get(i))
                if rest is not None:
                    result[i] = rest
            return result
        if isinstance(expr, rel.Domain):
            matrix = self.relation(expr.relation)
            return {a: self.disj(list(row.values())) for a, row in matrix.items() if row}
        if isinstance(expr, rel.Range):
            columns: dict[int, list] = {}
            for row in self.relation(expr.relation).values():
                for b, entry in row.items():
                    columns.setdefault(b, []).append(entry)
            return {b: self.disj(entries) for b, entries in columns.items()}
        raise TypeError(f"not a set expression: {expr!r}")

    def relation(self, expr: rel.RelExpr) -> dict:
        memo = self._by_id.get(id(expr))
        if memo is not None and memo[0] is expr:
            return memo[1]
        self.check_time()
        result = self._relation(expr)
        self._by_id[id(expr)] = (expr, result)
        return result

    def _relation(self, expr: rel.RelExpr) -> dict:
        if isinstance(expr, rel.Base):
            if expr.name == "rf":
                return self.rf
            if expr.name == "co":
                return self.co
            if expr.name == "sc":
                return self.sc
            if expr.name == "bar_sync":
                return self.bar_sync
            return self.static_base(expr.name)
        if isinstance(expr, rel.Ref):
            if expr.name not in self.definitions:
                self.definitions[expr.name] = self.relation(self.model.definition(expr.name).relation)
            return self.definitions[expr.name]
        if isinstance(expr, rel.Union):
            return self._union(self.relation(expr.left), self.relation(expr.right))
        if isinstance(expr, rel.Inter):
            left, right = self.relation(expr.left), self.relation(expr.right)
            result: dict[int, dict] = {}
            for a, row in left.items():
                other = right.get(a)
                if not other:
                    continue
                for b, entry in row.items():
                    if b in other:
                        both = self.conj(entry, other[b])
                        if both is not None:
                            result.setdefault(a, {})[b] = both
            return result
        if isinstance(expr, rel.Diff):
            left, right = self.relation(expr.left), self.relation(expr.right)
            result = {}
            for a, row in left.items():
                other = right.get(a, {})
                for b, entry in row.items():
                    rest = self.minus(entry, other.get(b))
                    if rest is not None:
                        result.setdefault(a, {})[b] = rest
            return result
        if isinstance(expr, rel.Seq):
            return self._sequence(self.relation(expr.left), self.relation(expr.right))
        if isinstance(expr, rel.Inverse):
            result = {}
            for a, row in self.relation(expr.operand).items():
                for b, entry in row.items():
                    result.setdefault(b, {})[a] = entry
            return result
        if isinstance(expr, rel.Plus):
            return self._closure(self.relation(expr.operand))
        if isinstance(expr, rel.Optional):
            identity = {i: {i: (self.guard[i], True)} for i in range(self.n)}
            return self._union(self.relation(expr.operand), identity)
        if isinstance(expr, rel.Identity):
            return {i: {i: entry} for i, entry in self.set_of(expr.over).items()}
        if isinstance(expr, rel.Product):
            left, right = self.set_of(expr.left), self.set_of(expr.right)
            result = {}
            for a, entry_a in left.items():
                for b, entry_b in right.items():
                    both = self.conj(entry_a, entry_b)
                    if both is not None:
                        result.setdefault(a, {})[b] = both
            return result
        if isinstance(expr, rel.Empty):
            return {}
        raise TypeError(f"not a relation expression: {expr!r}")

    def _union(self, left: dict, right: dict) -> dict:
        result = {a: dict(row) for a, row in left.items()}
        for a, row in right.items():
            target = result.setdefault(a, {})
            for b, entry in row.items():
                target[b] = self.disj([target[b], entry]) if b in target else entry
        return result

    def _sequence(self, left: dict, right: dict) -> dict:
        gathered: dict[int, dict[int, list]] = {}
        for a, row in left.items():
            for c, first in row.items():
                second_row = right.get(c)
                if not second_row:
                    continue
                for b, second in second_row.items():
                    both = self.conj(first, second)
                    if both is not None:
                        gathered.setdefault(a, {}).setdefault(b, []).append(both)
        return {a: {b: self.disj(entries) for b, entries in row.items()} for a, row in gathered.items()}

    def _closure(self, matrix: dict) -> dict:
        """Transitive closure (Warshall's algorithm over the sparse entries)."""
        result = {a: dict(row) for a, row in matrix.items() if row}
        predecessors: dict[int, set[int]] = {}
        for a, row in result.items():
            for b in row:
                predecessors.setdefault(b, set()).add(a)
        nodes = sorted(set(result) | set(predecessors))
        for k in nodes:
            into = [a for a in predecessors.get(k, ()) if a != k]
            out = result.get(k)
            if not into or not out:
                continue
            self.check_time()
            out_items = [(b, entry) for b, entry in out.items()]
            for a in into:
                first = result[a][k]
                row = result[a]
                for b, second in out_items:
                    both = self.conj(first, second)
                    if both is None:
                        continue
                    if b in row:
                        old = row[b]
                        if old[1] is True and old[0] <= both[0]:
                            continue
                        row[b] = self.disj([old, both])
                    else:
                        row[b] = both
                        predecessors.setdefault(b, set()).add(a)
        return result

    # -- axioms --------------------------------------------------------------------------------------

    def assert_axioms(self) -> None:
        for axiom in self.model.axioms:
            literal = z3.Bool(f"axiom:{axiom.name}")
            self.axiom_literal[axiom.name] = literal
            for constraint in self._axiom(axiom):
                self.constraints.append(_implies(literal, constraint))

    def _axiom(self, axiom: rel.Axiom) -> list:
        matrix = self.relation(axiom.relation)
        if axiom.kind == "empty":
            return [_not(self.entry_z3(entry)) for row in matrix.values() for entry in row.values()]
        if axiom.kind == "irreflexive":
            return [_not(self.entry_z3(row[a])) for a, row in matrix.items() if a in row]
        return self._acyclic(axiom.name, matrix)

    def _acyclic(self, name: str, matrix: dict) -> list:
        """A rank per event that every edge inside a strongly connected component increases."""
        component = _components(matrix)
        constraints = []
        ranks: dict[int, z3.ArithRef] = {}

        def rank(i: int) -> z3.ArithRef:
            if i not in ranks:
                ranks[i] = z3.Int(f"rank_{name}_{self.events[i].eid}")
            return ranks[i]

        for a, row in matrix.items():
            for b, entry in row.items():
                if a == b:
                    constraints.append(_not(self.entry_z3(entry)))
                elif component[a] == component[b]:
                    constraints.append(_implies(self.entry_z3(entry), rank(a) < rank(b)))
        return constraints

    # -- the final state -----------------------------------------------------------------------------

    def last_write(self, w: int):
        """The write ``w`` exists and is last in coherence order at its location (None: never)."""
        parts = [self.exists(w)]
        for entry in self.co.get(w, {}).values():
            # w is not last if a write after it in coherence order exists.
            later = self.entry_term(entry)
            if later is True:
                return None
            parts.append(self.t.not_(later))
        return self.t.all(parts)

    def term_literals(self, term: Term) -> dict[int, object]:
        """value -> literal that the term has that value (exactly one holds in every model)."""
        memo = self._memo.get(("term", term))
        if memo is not None:
            return memo
        values: dict[int, list] = {}
        result: dict[int, object]
        if isinstance(term, Constant):
            result = {term.value & MASK: True}
        elif isinstance(term, RegisterTerm):
            for tid in self.thread_traces[term.thread]:
                value = self.trace_of_id[tid].registers.get(term.register, 0) & MASK
                values.setdefault(value, []).append(self.trace_leaf.get(tid, True))
            result = {value: self.t.any(lits) for value, lits in values.items()}
        elif isinstance(term, LocationTerm):
            physical = self.program.addresses[term.name].physical
            for w in self._writes_by_location().get(physical, []):
                last = self.last_write(w)
                if last is None:
                    continue
                for value, literal in self.values(w, read=False).items():
                    value = (value or 0) & MASK
                    values.setdefault(value, []).append(self.t.and_(last, literal))
            result = {value: self.t.any(lits) for value, lits in values.items()}
        else:
            raise TypeError(f"not a term: {term!r}")
        self._memo[("term", term)] = result
        return result

    def formula(self, formula: Formula):
        if isinstance(formula, TrueFormula):
            return z3.BoolVal(True)
        if isinstance(formula, Compare):
            left, right = self.term_literals(formula.left), self.term_literals(formula.right)
            same = [self.t.z3(self.t.and_(left[v], right[v])) for v in left if v in right]
            equal = z3.Or(same) if same else z3.BoolVal(False)
            if formula.op == "==":
                return equal
            if formula.op == "!=":
                return z3.Not(equal)
            raise ValueError(f"unknown comparison {formula.op!r}")
        if isinstance(formula, Not):
            return z3.Not(self.formula(formula.operand))
        if isinstance(formula, And):
            return z3.And([self.formula(item) for item in formula.operands])
        if isinstance(formula, Or):
            return z3.Or([self.formula(item) for item in formula.operands])
        raise TypeError(f"not a formula: {formula!r}")


def _shape(event: Event) -> tuple:
    """Everything about an event but its identity and its values: two traces of a thread with the
    same shapes up to a position are on one path there, and share that node."""
    return tuple(getattr(event, name) for name in _SHAPE_FIELDS)


_SHAPE_FIELDS = tuple(field.name for field in attrs.fields(Event) if field.name not in ("eid", "read_value", "write_value"))


def _components(matrix: dict) -> dict[int, int]:
    """Strongly connected components (Tarjan, iterative) of the graph of possible edges."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    component: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    counter = 0
    nodes = set(matrix)
    for row in matrix.values():
        nodes.update(row)
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(matrix.get(root, {})))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(matrix.get(succ, {}))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = node
                    if member == node:
                        break
    return component


# ---- solving -----------------------------------------------------------------------------------------


def _check(solver: z3.Solver, assumptions: list, deadline: float | None):
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Undecided
        solver.set("timeout", max(1, int(left * 1000)))
    answer = solver.check(*assumptions)
    if answer == z3.unknown:
        raise Undecided
    return answer


def _holds_in(model: z3.ModelRef, term) -> bool:
    return term is True or z3.is_true(model.eval(term, model_completion=True))


def _true_in(model: z3.ModelRef, term: z3.BoolRef) -> bool:
    """:func:`_holds_in` for a Z3 term, through the C API (the Python wrapper's sort checks and
    reference objects cost more than Z3's evaluation when thousands of states are read)."""
    out = (z3.Ast * 1)()
    ctx = model.ctx.ref()
    if not z3core.Z3_model_eval(ctx, model.model, term.as_ast(), True, out):
        raise z3.Z3Exception("failed to evaluate a term in the model")
    return z3core.Z3_get_bool_value(ctx, out[0]) == z3.Z3_L_TRUE


def run(
    program: Program,
    model: rel.Model,
    *,
    timeout_s: float | None = None,
    want_witness: bool = False,
    want_why: bool = False,
) -> EngineResult:
    """The final states of the consistent executions of ``program`` under ``model``, found by Z3.

    The states are enumerated one by one: solve, read the observed terms off the model, forbid
    that state, solve again, until unsatisfiable. A time limit that runs out (or a Z3 ``unknown``)
    gives an undecided result, never a guess.
    """
    start = time.monotonic()
    deadline = None if timeout_s is None else start + timeout_s
    try:
        encoding = _Encoding(program, model, deadline)
        encoding.assert_axioms()
        solver = encoding.solver
        solver.add(encoding.constraints)
        assumptions = list(encoding.axiom_literal.values())
        tables = [
            {value: literal if literal is True else encoding.t.z3(literal) for value, literal in encoding.term_literals(term).items()}
            for term in program.observed
        ]
        found: dict = {}
        solver.push()
        # The axioms hold throughout the enumeration: asserted, not assumed (assumptions cost each
        # check a fresh search; asserted literals let Z3 keep what it learnt between states).
        solver.add(assumptions)
        while True:
            if _check(solver, [], deadline) == z3.unsat:
                break
            solution = solver.model()
            state = []
            chosen = []
            for term, table in zip(program.observed, tables):
                value = next(v for v, literal in table.items() if literal is True or _true_in(solution, literal))
                state.append((term, value))
                if table[value] is not True:
                    chosen.append(table[value])
            found[tuple(state)] = solution
            if not chosen:
                break
            solver.add(_not(_nary("and", chosen)) if len(chosen) > 1 else _not(chosen[0]))
        solver.pop()
        condition = program.condition
        ok, positive, negative = judge(condition, found)
        witness = None
        if want_witness:
            for state, solution in found.items():
                if state_holds(condition.formula, state) == wanted(condition):
                    witness = _execution(encoding, solution, state)
                    break
    except Undecided:
        return undecided(ENGINE, time.monotonic() - start)
    why = None
    if want_why and not any(state_holds(condition.formula, state) == forbidden_outcome(condition) for state in found):
        try:
            why = _why(encoding, deadline)
        except Undecided:
            # The verdict stands without the explanation; not found in time is None, not a guess.
            why = None
    return EngineResult(
        engine=ENGINE,
        states=frozenset(found),
        ok=ok,
        positive=positive,
        negative=negative,
        witness=witness,
        why=why,
        candidates=None,
        time_s=time.monotonic() - start,
    )


def _why(encoding: _Encoding, deadline: float | None) -> tuple[str, ...]:
    """The axioms that rule out the condition's outcome: a minimal unsat core over the axiom literals.

    Z3's own core need not be minimal, and of several minimal ones it picks any; the core is found
    by deletion instead, trying the model's later axioms first, so that of two axioms that each
    suffice the earlier, more specific one stays (CoRR: SC-per-location, as §8.10.5 says, rather
    than Causality, which forbids it too).
    """
    condition = encoding.program.condition
    outcome = encoding.formula(condition.formula)
    if not forbidden_outcome(condition):
        outcome = z3.Not(outcome)
    solver = encoding.solver
    solver.push()
    solver.add(outcome)
    names = list(encoding.axiom_literal)
    literals = encoding.axiom_literal
    if _check(solver, [literals[name] for name in names], deadline) == z3.sat:
        solver.pop()
        raise AssertionError("the forbidden outcome is satisfiable")
    needed = names
    for name in reversed(names):
        rest = [other for other in needed if other != name]
        if _check(solver, [literals[other] for other in rest], deadline) == z3.unsat:
            needed = rest
    solver.pop()
    return tuple(needed)


def _execution(encoding: _Encoding, solution: z3.ModelRef, state) -> Execution:
    """Decode a Z3 model into a concrete execution, with every relation of the model evaluated."""
    traces = []
    existing: set[int] = set()
    chosen: dict[int, int] = {}  # thread -> trace id
    for thread, ids in enumerate(encoding.thread_traces):
        for tid in ids:
            variable = encoding.trace_var.get(tid)
            if variable is None or _holds_in(solution, variable):
                chosen[thread] = tid
                traces.append(encoding.trace_of_id[tid])
                existing.update(encoding.trace_nodes[tid])
                break
    events = tuple(encoding.program.initial) + tuple(event for trace in traces for event in trace.events)

    def eid(node: int) -> int:
        thread = encoding.node_thread[node]
        if thread is None:
            return encoding.events[node].eid
        return encoding.node_event[node][chosen[thread]].eid

    def concrete(matrix: dict) -> frozenset[tuple[int, int]]:
        pairs = set()
        for a, row in matrix.items():
            if a not in existing and encoding.node_thread[a] is not None:
                continue
            for b, (guard, term) in row.items():
                if b not in existing and encoding.node_thread[b] is not None:
                    continue
                if guard <= existing and _holds_in(solution, term if term is True else encoding.t.z3(term)):
                    pairs.add((eid(a), eid(b)))
        return frozenset(pairs)

    relations = {
        "po": concrete(encoding.relation(rel.Base("po"))),
        "rf": concrete(encoding.rf),
        "co": concrete(encoding.co),
        "sc": concrete(encoding.sc),
    }
    for definition in encoding.model.definitions:
        relations[definition.name] = concrete(encoding.relation(rel.Ref(definition.name)))
    return Execution(traces=tuple(traces), events=events, relations=relations, final=dict(state))
