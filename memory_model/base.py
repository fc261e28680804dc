"""The base vocabulary of the model (``relations.py``), computed from a :class:`Program`.

The model of §8 (``ptx.py``) is written over a few named sets and relations that an engine
provides. This module computes those that do not depend on run-time choices (reads-from,
coherence order, Fence-SC order, the barriers' arrival order), so that both engines read the
same facts from a program:

* :func:`event_sets` -- the base sets an event belongs to (``R``, ``W``, ``M``, ``F_SC``, ...);
* :func:`static_pair` -- whether a static base relation (``po``, ``loc``, ``scope_incl``, ...)
  holds between two events;
* :func:`dependency_pairs` -- the ``data``, ``ctrl`` and ``addr`` dependencies of chosen traces;
* :func:`barrier_options` -- the ``bar_sync`` relations the chosen traces admit (§8.9.4 items 2
  and 3, with the well-formedness rules of barrier use; none when the traces cannot all finish).
"""

from __future__ import annotations

import itertools
from typing import Hashable, Iterable, Iterator, Sequence

from .program import Event, Placement, Program, Trace

SET_NAMES = (
    "R",
    "W",
    "M",
    "A",
    "I",
    "F",
    "F_SC",
    "F_ACQ_REL",
    "PF",
    "PF_ALIAS",
    "PF_TEXTURE",
    "PF_SURFACE",
    "PF_CONSTANT",
    "PF_ASYNC",
    "PF_TO_ASYNC",
    "PF_TO_TENSORMAP",
    "F_RESTRICTED",
    "F_INIT_ONLY",
    "F_CTA_ONLY",
    "F_CLUSTER_ONLY",
    "MB",
    "MB_INIT",
    "SHARED_CTA",
    "SHARED_CLUSTER",
    "B",
    "WEAK",
    "RELAXED",
    "ACQUIRE",
    "RELEASE",
    "ACQ_REL",
    "VOLATILE",
    "MMIO",
    "GEN",
    "TEX",
    "SUR",
    "CON",
    "ASYNC",
    "TMAP",
    "B_RELAXED",
    "F_CLUSTER_WIDE",
    "TC",
    "TC_LD",
    "TC_ST",
    "TC_COMMIT",
    "TCS",
    "TC_BEFORE",
    "TC_AFTER",
    "TC_WAIT_LD",
    "TC_WAIT_ST",
)
"""Every base set name of ``relations.py``."""

STATIC_RELATIONS = (
    "po",
    "loc",
    "vloc",
    "same_thread",
    "same_cta",
    "scope_incl",
    "same_proxy",
    "async_issue",
    "issued_before",
    "tcgen05_pipelined",
    "tcgen05_pipelinable",
    "async_completed",
    "proxy_fence_range",
)
"""Base relations decided by two events and the program alone (:func:`static_pair`)."""

DEPENDENCY_RELATIONS = ("data", "ctrl", "addr")
"""Base relations decided by the chosen traces (:func:`dependency_pairs`)."""

RUNTIME_RELATIONS = ("rf", "co", "sc")
"""Base relations chosen at run time by a candidate execution (the engines enumerate them)."""

_ORDER_SETS = {
    "weak": "WEAK",
    "relaxed": "RELAXED",
    "acquire": "ACQUIRE",
    "release": "RELEASE",
    "acq_rel": "ACQ_REL",
    "volatile": "VOLATILE",
    "mmio": "MMIO",
}
_PROXY_SETS = {"generic": "GEN", "texture": "TEX", "surface": "SUR", "constant": "CON", "async": "ASYNC", "tensormap": "TMAP"}
_PROXY_FENCE_SETS = {
    "alias": "PF_ALIAS",
    "texture": "PF_TEXTURE",
    "surface": "PF_SURFACE",
    "constant": "PF_CONSTANT",
    "async": "PF_ASYNC",
    "async::generic": "PF_TO_ASYNC",
    "tensormap::generic": "PF_TO_TENSORMAP",
}
#: §9.7.13.4 ``.op_restrict`` / ``.sync_restrict``: the set of a restricted fence.
_RESTRICTED_FENCE_SETS = {"mbarrier_init": "F_INIT_ONLY", "shared::cta": "F_CTA_ONLY", "shared::cluster": "F_CLUSTER_ONLY"}
STRONG_ORDERS = frozenset({"relaxed", "acquire", "release", "acq_rel", "volatile", "mmio"})
"""§8.4 "strong operation": a memory operation with one of these qualifiers (or a memory fence)."""


def is_memory(event: Event) -> bool:
    """§8.4: a memory operation is a read or a write (initial writes included, §8.2.6)."""
    return event.reads or event.writes


def event_sets(event: Event) -> frozenset[str]:
    """The base sets (``SET_NAMES``) that ``event`` belongs to.

    Memory operations carry their order (an initial write is weak) and their proxy (an initial
    write is generic); a memory fence carries ``F`` and ``F_SC``/``F_ACQ_REL`` and, for
    ``fence.acq_rel``, the order set ``ACQ_REL``; proxy fences carry ``PF`` and their kind.
    """
    names: set[str] = set()
    if event.reads:
        names.add("R")
    if event.writes:
        names.add("W")
    if is_memory(event):
        names.add("M")
        names.add(_PROXY_SETS[event.proxy or "generic"])
    if event.atomic:
        names.add("A")
    if event.is_initial:
        names.update(("I", "WEAK"))
    elif event.order in _ORDER_SETS and (is_memory(event) or event.fence is not None or event.proxy_fence is not None):
        names.add(_ORDER_SETS[event.order])
    elif is_memory(event) and event.order is None:
        names.add("WEAK")
    if event.fence is not None:
        names.add("F")
        names.add({"sc": "F_SC", "acq_rel": "F_ACQ_REL"}.get(event.fence, "F"))
        if event.fence_restrict is not None:
            names.update(("F_RESTRICTED", _RESTRICTED_FENCE_SETS[event.fence_restrict]))
    if event.mbarrier is not None:
        names.add("MB")
    if event.mbarrier == "init":
        names.add("MB_INIT")
    if is_memory(event) and event.space in ("shared::cta", "shared::cluster"):
        # §9.7.13.4: "objects in .shared::cta" are also in the .shared::cluster window (§5.1.4).
        names.add("SHARED_CLUSTER")
        if event.space == "shared::cta":
            names.add("SHARED_CTA")
    if event.proxy_fence is not None:
        names.add("PF")
        names.add(_PROXY_FENCE_SETS[event.proxy_fence])
    if event.barrier is not None:
        names.add("B")
        if event.order == "relaxed":  # barrier.cluster.arrive.relaxed (§9.7.13.3)
            names.add("B_RELAXED")
    if event.fence is not None and event.scope in ("cluster", "gpu", "sys"):
        names.add("F_CLUSTER_WIDE")
    if event.tcgen05 is not None:
        names.update(_TCGEN05_SETS.get(event.tcgen05.split("/")[0], ("TC",)))
    return frozenset(names)


#: §9.7.16.6.1: the asynchronous tcgen05 operations (an agent's: ``TC``) and the synchronous ones
#: of the thread that order them (``TCS``).
_TCGEN05_SETS = {
    "ld": ("TC", "TC_LD"),
    "st": ("TC", "TC_ST"),
    "commit": ("TC", "TC_COMMIT"),
    "fence::before_thread_sync": ("TCS", "TC_BEFORE"),
    "fence::after_thread_sync": ("TCS", "TC_AFTER"),
    "wait::ld": ("TCS", "TC_WAIT_LD"),
    "wait::st": ("TCS", "TC_WAIT_ST"),
}


def tcgen05_pipelined(first: str, second: str) -> bool:
    """§9.7.16.6.2: whether asynchronous tcgen05 operations of kinds ``first`` then ``second``
    (:attr:`Event.tcgen05`) form a tcgen05 pipeline -- "guaranteed to execute in the same order as
    the instructions that issued them": ``mma -> mma`` (same N and accumulator; the dialect has no
    shape), ``cp -> mma``, ``shift -> mma``, ``shift -> cp.4x256b``, ``mma -> shift`` (same N),
    and the implicitly pipelined ``mma``/``cp``/``shift`` -> ``commit`` (same N, §9.7.16.6.2.1)."""
    a, b = first.split("/"), second.split("/")
    if a[0] == "mma" and b[0] == "mma":
        return a[1:] == b[1:]
    pairs = {("cp", "mma"), ("shift", "mma"), ("mma", "shift"), ("mma", "commit"), ("cp", "commit"), ("shift", "commit")}
    if (a[0], b[0]) in pairs or (a[0], b[0], b[2:3]) == ("shift", "cp", ["4x256b"]):
        return a[1] == b[1]
    return False


# ---- static relations ----------------------------------------------------------------------------


def is_strong(event: Event) -> bool:
    """§8.4: "a memory fence operation, or a memory operation with a .relaxed, .acquire, .release,
    .acq_rel, .volatile or .mmio qualifier"."""
    if event.is_initial:
        return False
    if event.fence is not None or (event.proxy_fence is not None and event.scope is not None):
        return True  # a proxy fence with .sem and .scope (fence.proxy.tensormap::generic) has a scope too
    return is_memory(event) and event.order in STRONG_ORDERS


def effective_scope(event: Event) -> str:
    """The scope a strong operation specifies.

    §8.4.2: a volatile operation is "a relaxed memory operation with system scope"; an operation
    the test gives no scope (only possible for volatile and for ``membar``-style fences the
    front end did not map) is read as ``.sys``.
    """
    if event.order == "volatile" or event.scope is None:
        return "sys"
    return event.scope


def proxy_of(event: Event) -> str | None:
    """§8.6: the proxy an operation is performed through.

    Memory operations carry theirs; memory fences and barriers are among the operations of §8.4,
    which "use the generic memory access method"; proxy fences are not performed through a proxy.
    """
    if is_memory(event):
        return event.proxy or "generic"
    if event.fence is not None or event.barrier is not None:
        return "generic"
    return None


def _placement(program: Program, event: Event) -> Placement:
    if event.thread is None:
        raise ValueError(f"an initial write ({event.instruction!r}) is executed by no thread")
    return program.threads[event.thread].placement


def _tcgen05_pipeline(a: Event, b: Event) -> bool:
    """Both asynchronous tcgen05 operations, of kinds that form a pipeline in this order."""
    return a.agent is not None and b.agent is not None and a.tcgen05 is not None and b.tcgen05 is not None and tcgen05_pipelined(a.tcgen05, b.tcgen05)


def static_pair(name: str, a: Event, b: Event, program: Program) -> bool:
    """Does the static base relation ``name`` (one of ``STATIC_RELATIONS``) relate ``a`` to ``b``?

    ``po``: same thread and the same agent (both the thread's own, or both of one asynchronous
    instruction, :attr:`Event.agent`), ``a`` earlier in the trace (§8.9.1; initial writes are in
    no thread).
    ``async_issue``: ``a`` the thread's own, ``b`` an operation of an asynchronous instruction it
    issued later (§8.9.1.1 "ordered after prior instructions in the same thread").
    ``issued_before``: ``a`` an operation of an asynchronous instruction, ``b`` an operation its
    thread issues later (no order by itself: the tcgen05 waits and fences use it).
    ``async_completed``: an operation of a ``cp.async`` before the ``cp.async.wait_group`` /
    ``wait_all`` of its thread that waits for its group, or before the arrive-on of a later
    ``cp.async.mbarrier.arrive`` (which tracks every prior cp.async); an operation of a bulk copy
    before the ``cp.async.bulk.wait_group`` that waits for its bulk async-group (with ``.read``:
    only its read of the source).
    ``proxy_fence_range``: a proxy fence that names an address range (the acquire
    ``fence.proxy.tensormap::generic``) and a memory operation its thread issues later on that
    location.
    ``tcgen05_pipelined``: asynchronous tcgen05 operations of one thread whose instructions form a
    tcgen05 pipeline (:func:`tcgen05_pipelined`), in issue order; ``tcgen05_pipelinable``: of any
    threads, whose kinds would.
    ``loc``: both memory operations on the same physical location (§8.2).
    ``vloc``: both memory operations on the same virtual address (§8.2.1 "specify the same
    virtual address"; a proxy alias such as ``s @ surface aliases x`` names ``x``'s address).
    ``same_thread``, ``same_cta``: by the threads' placement (initial writes: never); an
    asynchronous instruction's operations are not the thread's ("not part of the program order of
    that thread"): ``same_thread`` needs the same agent too.
    ``scope_incl``: §8.7 condition 1, second half: ``a != b``, both strong, and each one's scope
    includes the thread executing the other.
    ``same_proxy``: §8.7 condition 2: both performed through the same proxy (:func:`proxy_of`).
    """
    earlier = a.thread is not None and a.thread == b.thread and a.index < b.index  # issued first by one thread
    if name == "po":
        return earlier and a.agent == b.agent
    if name == "async_issue":
        return earlier and a.agent is None and b.agent is not None
    if name == "issued_before":
        return earlier and a.agent is not None and b.agent is None
    if name == "async_completed":
        if a.async_group is None or b.async_wait is None or a.async_group[0] != b.async_wait[0]:
            return False
        # .read: "until all the bulk async operations ... have completed reading from their source locations"
        return earlier and a.async_group[1] < b.async_wait[1] and (not b.wait_reads_only or (a.reads and not a.writes))
    if name == "proxy_fence_range":
        # §9.7.13.4: "The address operand addr and the operand size together specify the memory range
        # [addr, addr+size-1] on which the ordering guarantees on the memory accesses across the proxies
        # is to be provided" -- for a later access of the thread (or of an instruction it issues later).
        return (
            earlier
            and a.proxy_fence is not None
            and a.address is not None
            and is_memory(b)
            and b.address is not None
            and a.address.physical == b.address.physical
        )
    if name == "tcgen05_pipelinable":
        return _tcgen05_pipeline(a, b)
    if name == "tcgen05_pipelined":
        return earlier and a.agent != b.agent and _tcgen05_pipeline(a, b)
    if name == "loc":
        return is_memory(a) and is_memory(b) and a.address is not None and b.address is not None and a.address.physical == b.address.physical
    if name == "vloc":
        return is_memory(a) and is_memory(b) and a.address is not None and b.address is not None and a.address.generic == b.address.generic
    if name == "same_thread":
        return a.thread is not None and a.thread == b.thread and a.agent == b.agent
    if name == "same_cta":
        if a.thread is None or b.thread is None:
            return False
        return _placement(program, a).same_cta(_placement(program, b))
    if name == "scope_incl":
        if a.eid == b.eid or not (is_strong(a) and is_strong(b)):
            return False
        pa, pb = _placement(program, a), _placement(program, b)
        return pa.includes(effective_scope(a), pb) and pb.includes(effective_scope(b), pa)
    if name == "same_proxy":
        proxy_a, proxy_b = proxy_of(a), proxy_of(b)
        return proxy_a is not None and proxy_a == proxy_b
    raise KeyError(f"not a static base relation: {name!r}")


EQUIVALENCE_RELATIONS = ("loc", "vloc", "same_thread", "same_cta", "same_proxy")
"""Static relations that are "same key" relations (:func:`equivalence_key`)."""


def equivalence_key(name: str, event: Event, program: Program) -> object:
    """For ``name`` in ``EQUIVALENCE_RELATIONS``: a key such that ``static_pair(name, a, b)`` holds
    exactly when both keys are equal and not None (a fast path for engines; tested against
    :func:`static_pair`)."""
    if name in ("loc", "vloc"):
        if not is_memory(event) or event.address is None:
            return None
        return event.address.physical if name == "loc" else event.address.generic
    if name == "same_thread":
        return None if event.thread is None else (event.thread, event.agent)
    if name == "same_cta":
        if event.thread is None:
            return None
        placement = _placement(program, event)
        return (placement.gpu, placement.cta)
    if name == "same_proxy":
        return proxy_of(event)
    raise KeyError(f"not an equivalence relation: {name!r}")


def dependency_pairs(traces: Iterable[Trace]) -> dict[str, frozenset[tuple[int, int]]]:
    """``data``, ``ctrl``, ``addr`` of the chosen traces, as eid pairs.

    A pair of an event with itself is dropped: one PTX atomic is one event (program.py), and the
    value it writes being computed from the value it read is not a dependency between operations.
    """
    result: dict[str, set[tuple[int, int]]] = {name: set() for name in DEPENDENCY_RELATIONS}
    for trace in traces:
        for name in DEPENDENCY_RELATIONS:
            result[name].update(pair for pair in getattr(trace, name) if pair[0] != pair[1])
    return {name: frozenset(pairs) for name, pairs in result.items()}


# ---- barriers (§8.9.4 items 2 and 3; rules in /tmp/brief/barrier_rules.md) --------------------------

WAITING_OPS = frozenset({"sync", "red", "wait"})
"""Barrier operations that make the executing thread wait for the barrier to complete (§9.7.13.1:
"bar.red and bar.sync ... cause the executing thread to wait"; barrier.cluster.wait)."""


def barrier_groups(program: Program, traces: Sequence[Trace]) -> list[list[Event]]:
    """The uses of barriers in the chosen traces: lists of barrier operations that complete together.

    CTA level (§9.7.13.1): same CTA, same logical barrier, same ``phase`` (the k-th use of that
    barrier by each thread). Cluster level (§9.7.13.3): same cluster; the k-th
    ``barrier.cluster.arrive`` of each thread with the k-th ``barrier.cluster.wait``.
    Operations of one group are listed in thread order, then program order.
    """
    groups: dict[tuple, list[Event]] = {}
    for trace in traces:
        placement = program.threads[trace.thread].placement
        cluster_uses = {"arrive": 0, "wait": 0}
        for event in trace.events:
            barrier = event.barrier
            if barrier is None:
                continue
            key: tuple[Hashable, ...]
            if barrier.level == "cluster":
                use = cluster_uses.get(barrier.op, 0)
                cluster_uses[barrier.op] = use + 1
                cluster = placement.cluster if placement.cluster is not None else ("cta", placement.cta)
                key = ("cluster", placement.gpu, cluster, use)
            else:
                key = ("cta", placement.gpu, placement.cta, barrier.barrier_id, barrier.phase)
            groups.setdefault(key, []).append(event)
    return list(groups.values())


def _group_count(group: Sequence[Event]) -> int | None:
    for event in group:
        if event.barrier is not None and event.barrier.count is not None:
            return event.barrier.count
    return None


def _waits(event: Event) -> bool:
    return event.barrier is not None and event.barrier.op in WAITING_OPS


def _synchronizes(source: Event, target: Event) -> bool:
    """§8.9.4: "bar{.cta}.sync or bar{.cta}.red or bar{.cta}.arrive synchronizes with bar{.cta}.sync
    or bar{.cta}.red executed on the same barrier"; "barrier.cluster.arrive synchronizes with
    barrier.cluster.wait"."""
    if source.eid == target.eid or source.thread == target.thread:
        return False
    if target.barrier is None:
        raise ValueError(f"{target.instruction!r} is not a barrier operation")
    if target.barrier.level == "cluster":
        if source.barrier is None:
            raise ValueError(f"{source.instruction!r} is not a barrier operation")
        return source.barrier.op == "arrive" and target.barrier.op == "wait"
    return target.barrier.op in ("sync", "red")


def _arrival_orders(program: Program, traces: Sequence[Trace], groups: list[list[Event]]) -> Iterator[dict[int, tuple[int, ...]]]:
    """Every way the threads can arrive at their barriers (rule 4): per group, the eids in order.

    A thread reaches a barrier operation only once each earlier waiting operation of its trace has
    completed; a group completes at its ``count``-th arrival, or, without a count, when all its
    members have arrived. Yields nothing when some thread can never finish (deadlock or a count
    that is never reached). Interleavings that give the same arrival order per group are yielded once.
    """
    group_of: dict[int, int] = {}
    for number, group in enumerate(groups):
        for event in group:
            group_of[event.eid] = number
    needed = []
    for group in groups:
        count = _group_count(group)
        needed.append(len(group) if count is None else count)
    sequences = [[e for e in trace.events if e.barrier is not None] for trace in traces]
    ordered = [_group_count(group) is not None for group in groups]
    seen: set[tuple] = set()
    visited: set[tuple] = set()

    def normal(arrivals: list[list[int]]) -> tuple:
        # Without a count the order of arrival does not matter (rule 2): forget it.
        return tuple(tuple(order) if ordered[n] else tuple(sorted(order)) for n, order in enumerate(arrivals))

    def completed(arrivals: list[list[int]], number: int) -> bool:
        return len(arrivals[number]) >= needed[number]

    def explore(positions: tuple[int, ...], arrivals: list[list[int]]) -> Iterator[dict[int, tuple[int, ...]]]:
        state = (positions, normal(arrivals))
        if state in visited:
            return
        visited.add(state)
        moved = False
        for thread, sequence in enumerate(sequences):
            position = positions[thread]
            if position >= len(sequence):
                continue
            if position > 0:
                previous = sequence[position - 1]
                if _waits(previous) and not completed(arrivals, group_of[previous.eid]):
                    continue
            event = sequence[position]
            moved = True
            arrivals[group_of[event.eid]].append(event.eid)
            yield from explore(positions[:thread] + (position + 1,) + positions[thread + 1 :], arrivals)
            arrivals[group_of[event.eid]].pop()
        if moved:
            return
        # Nobody can arrive anywhere: finished if every thread passed its last barrier.
        for thread, sequence in enumerate(sequences):
            if positions[thread] < len(sequence):
                return
            if sequence and _waits(sequence[-1]) and not completed(arrivals, group_of[sequence[-1].eid]):
                return
        key = normal(arrivals)
        if key not in seen:
            seen.add(key)
            yield {groups[number][0].eid: key[number] for number in range(len(groups))}

    yield from explore(tuple(0 for _ in sequences), [[] for _ in groups])


def reduce_predicates(reduction: str, predicates: Iterable[int]) -> int:
    """§9.7.13.1 bar.red: ".popc ... the number of threads that have a true predicate", ".and"
    "true if all threads have a true predicate", ".or" "true if any thread has a true predicate"."""
    values = list(predicates)
    if reduction == "popc":
        return sum(values)
    if reduction == "and":
        return int(all(values))
    return int(any(values))


def reduction_holds(group: Sequence[Event]) -> bool:
    """Every bar.red of one use of a barrier returns the reduction of the predicates of the
    group's bar.red operations (the threads that take part)."""
    reds = [e.barrier for e in group if e.barrier is not None and e.barrier.reduction is not None]
    return all(b.result == reduce_predicates(b.reduction, (r.predicate or 0 for r in reds)) for b in reds if b.reduction is not None)


def barrier_options(program: Program, traces: Sequence[Trace]) -> list[frozenset[tuple[int, int]]]:
    """The ``bar_sync`` relations (eid pairs, X synchronizes with Y) the chosen traces admit.

    An empty list means that no execution of these traces lets every thread finish (rule 5 of
    barrier_rules.md: such executions are not candidates). Without barriers: ``[frozenset()]``.
    Rules (barrier_rules.md): a group without a count synchronizes every member with every
    waiting member; with a count q, X synchronizes with a waiting Y iff X arrived before Y or
    both are among the first q arrivals.
    """
    if any(trace.blocked_at is not None for trace in traces):
        return []
    groups = barrier_groups(program, traces)
    if not groups:
        return [frozenset()]
    if not all(reduction_holds(group) for group in groups):
        return []
    by_eid = {event.eid: event for group in groups for event in group}
    options: set[frozenset[tuple[int, int]]] = set()
    for orders in _arrival_orders(program, traces, groups):
        pairs: set[tuple[int, int]] = set()
        for group in groups:
            order = orders[group[0].eid]
            rank = {eid: position for position, eid in enumerate(order)}
            count = _group_count(group)
            for x, y in itertools.permutations(order, 2):
                source, target = by_eid[x], by_eid[y]
                if not _synchronizes(source, target):
                    continue
                if count is not None and not (rank[x] < rank[y] or (rank[x] < count and rank[y] < count)):
                    continue
                pairs.add((x, y))
        options.add(frozenset(pairs))
    return sorted(options, key=lambda option: sorted(option))
