"""The raw material of candidate executions: a litmus program's events, one concrete trace per thread.

This module is the contract between the litmus front end (``litmus.py`` parses the text,
``lowering.py`` turns it into a :class:`Program`) and the two interpreters of the model
(``explicit.py`` and ``z3_engine.py``). It holds data only.

A thread of a litmus test may take several paths (branches, loops, a compare-and-swap that
fails or succeeds) and its reads may return several values. The front end enumerates, for each
thread, every *trace* it can produce: a path through the code together with the value each read
returned, unrolled up to a bound. Values come from a finite domain (the least fixed point of what
the program can write, starting from the initial values and constants), so a trace is concrete:
every event knows its location, the value it reads or writes, and every barrier its id. A
candidate execution then picks one trace per thread plus the relations the manual leaves to run
time (reads-from, coherence order, Fence-SC order); the model of §8 decides which candidates are
consistent.

Vocabulary (§8.4, table 19): a *read operation* is any ``ld`` and any ``atom`` (not ``red``); a
*write operation* is any ``st`` and any atomic that writes; an *atomic operation* is ``atom`` or
``red``. One PTX atomic is one event that reads and writes (the manual speaks of "atomic
operation A", not of a read and a write); a failed ``atom.cas`` writes nothing, so it is a read
only (§8.4: "atomic operations, if they result in a write").
"""

from __future__ import annotations

from typing import Mapping

import attrs

SCOPES = ("cta", "cluster", "gpu", "sys")
"""§8.5, table 20, narrowest first."""

MEMORY_ORDERS = ("weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "mmio")
"""§8.4: the qualifiers that say how a memory operation orders (``sc`` exists on fences only)."""

PROXIES = ("generic", "texture", "surface", "constant", "async", "tensormap")
"""§8.6: the memory access methods a litmus test can use; ``async`` is the asynchronous proxy in
which "cp{.reduce}.async.bulk operations are performed" (§9.7.9.25.2); ``tensormap`` the proxy in
which a tensor copy accesses its tensor map ("tensorMap is accessed in the tensormap proxy",
§9.7.9.25.5.2)."""

FENCE_KINDS = ("sc", "acq_rel", "acquire", "release")
"""§8.4 "memory fence operations": fence.sc (and membar, its synonym), fence.acq_rel, and the
uni-directional fence.acquire and fence.release of §9.7.13.4 (PTX ISA 8.6)."""

PROXY_FENCE_KINDS = ("alias", "texture", "surface", "constant", "async", "async::generic", "tensormap::generic")
"""§8.4 "proxy fence operations": fence.proxy.<kind> and membar.proxy.<kind> (bi-directional), and
the uni-directional fence.proxy.async::generic and fence.proxy.tensormap::generic (§9.7.13.4: from
the generic proxy to the async, or the tensormap, one)."""


@attrs.frozen
class Placement:
    """Where a thread runs (§2.2): its CTA, the cluster of CTAs it belongs to, and its GPU.

    A test that names no cluster launches without clusters; each CTA is then a cluster of one CTA
    (a launch without clusters behaves as 1x1x1 clusters), so ``cluster`` is ``None`` and
    :meth:`same_cluster` falls back to :meth:`same_cta`.
    """

    cta: int
    gpu: int = 0
    cluster: int | None = None

    def same_cta(self, other: Placement) -> bool:
        return self.gpu == other.gpu and self.cta == other.cta

    def same_cluster(self, other: Placement) -> bool:
        if self.same_cta(other):
            return True
        return self.gpu == other.gpu and self.cluster is not None and self.cluster == other.cluster

    def same_gpu(self, other: Placement) -> bool:
        return self.gpu == other.gpu

    def includes(self, scope: str, other: Placement) -> bool:
        """§8.5: does ``scope``, seen from a thread placed here, include a thread placed at ``other``?"""
        if scope == "cta":
            return self.same_cta(other)
        if scope == "cluster":
            return self.same_cluster(other)
        if scope == "gpu":
            return self.same_gpu(other)
        if scope == "sys":
            return True
        raise ValueError(f"unknown scope {scope!r}")


@attrs.frozen
class Address:
    """A virtual address a litmus test names (§8.2).

    ``physical`` is the memory location it maps to (itself, unless declared as an alias; §8.2.2).
    ``generic`` is the generic virtual address it stands for: itself for an ordinary location or a
    ``generic`` alias, the aliased name for a ``surface``/``texture``/``constant`` alias, which is a
    handle onto that generic address through another proxy. Two accesses are to the *same virtual
    address* (overlap in the manual's sense, §8.2.1) when their ``generic`` names are equal.
    """

    name: str
    physical: str
    generic: str
    declared_proxy: str = "generic"


@attrs.frozen
class Barrier:
    """One barrier operation, with its operands evaluated in the trace (§9.7.13.1, §9.7.13.2).

    ``level`` is ``"cta"`` for bar/barrier{.cta} and ``"cluster"`` for barrier.cluster.
    ``op`` is ``"sync"``, ``"arrive"`` or ``"red"`` (cta level) and ``"arrive"`` or ``"wait"``
    (cluster level). ``barrier_id`` is the logical barrier; ``count`` the expected number of
    threads when the instruction gives one. ``phase`` is how many earlier operations on the same
    logical barrier this thread's trace performed before this one (0 for the first), which pairs
    up the operations of one use of the barrier across threads.
    """

    level: str
    op: str
    barrier_id: int
    count: int | None = None
    phase: int = 0
    reduction: str | None = None
    """bar.red's ``.popc``, ``.and`` or ``.or``; None for the other operations."""
    predicate: int | None = None
    """bar.red's predicate operand in this trace (0 or 1)."""
    result: int | None = None
    """The result this trace takes bar.red to return (the engines keep only the traces whose
    result is the reduction of the group's predicates, :func:`ptxspec.memory_model.base.reduction_holds`)."""


@attrs.frozen
class Event:
    """One operation of a trace (or the initial write of a location, §8.2.6)."""

    eid: int
    """Unique within the :class:`Program`, over every trace of every thread."""
    thread: int | None
    """Index into :attr:`Program.threads`; ``None`` for an initial write."""
    index: int
    """Position in the trace (program order, §8.9.1); ``-1`` for an initial write."""
    instruction: str
    """The instruction as written in the test (for pictures and messages)."""
    line: int | None = None
    reads: bool = False
    """A read operation (§8.4): ld and its proxy variants (tld, suld, ldc), atom."""
    writes: bool = False
    """A write operation (§8.4): st (sust), an atom or red that writes, an initial write."""
    atomic: bool = False
    """An atomic operation (§8.4): atom or red (red has ``reads`` False but still takes a value)."""
    address: Address | None = None
    proxy: str | None = None
    """The proxy of a memory operation (§8.6): from the instruction (ld: generic, tld: texture...)."""
    order: str | None = None
    """One of MEMORY_ORDERS for memory operations; for fences ``"sc"``, ``"acq_rel"``, ``"acquire"``
    or ``"release"``."""
    scope: str | None = None
    fence: str | None = None
    """One of FENCE_KINDS for a memory fence, else None."""
    fence_restrict: str | None = None
    """For a fence whose effect is restricted to a class of operations (§9.7.13.4): ``"mbarrier_init"``
    (``.op_restrict``: prior mbarrier.init of the thread), ``"shared::cta"`` / ``"shared::cluster"``
    (``.sync_restrict``: operations on objects in that state space)."""
    space: str | None = None
    """The state space of the object a memory operation accesses, as its instruction names it
    (``"global"``, ``"shared::cta"``, ``"shared::cluster"``); None where it names none (generic
    addressing)."""
    mbarrier: str | None = None
    """For an operation on an mbarrier object (§9.7.13.15): the mbarrier operation (``init``,
    ``arrive``, ``complete_tx`` ...)."""
    proxy_fence: str | None = None
    """One of PROXY_FENCE_KINDS for a proxy fence, else None. A fence.proxy.tensormap::generic
    carries its ``.sem`` in ``order`` and its ``scope`` (it is a proxy fence only, not a memory
    fence), and the acquire form the tensor map it names in ``address``."""
    barrier: Barrier | None = None
    read_value: int | None = None
    """The value a read (or the read half of an atomic) returns in this trace."""
    write_value: int | None = None
    """The value a write stores in this trace (for red/atom: computed from ``read_value``)."""
    agent: str | None = None
    """For an operation of an asynchronous instruction (§8.9.1.1: cp.async.bulk ...), the instance
    of that instruction in its thread (``"pc:occurrence"``); None for the thread's own operations.
    "These asynchronous operations are ordered after prior instructions in the same thread ...
    but they are not part of the program order of that thread": an agent's operations are in
    program order among themselves, and ``async_issue`` orders the thread's earlier operations
    before them (:func:`ptxspec.memory_model.base.static_pair`)."""

    async_group: tuple[str, int] | None = None
    """For an operation of an asynchronous instruction tracked by an async-group mechanism: the
    kind of groups (``"cp.async"``, §9.7.9.25.3.2; ``"bulk"``, §9.7.9.25.6.1; ``"wgmma"``,
    §9.7.15.7.2) and the index of the group it belongs to in its thread (the groups of that kind
    committed before it)."""
    async_wait: tuple[str, int] | None = None
    """For a wait on async-groups (``cp.async.wait_group`` / ``wait_all``,
    ``cp.async.bulk.wait_group``, ``wgmma.wait_group``; and the arrive-on of
    ``cp.async.mbarrier.arrive``): the kind of groups and how many of them are complete when it
    completes (those with a lower index)."""
    wait_reads_only: bool = False
    """``cp.async.bulk.wait_group.read``: waits only for the reads of the sources (§9.7.9.25.6.2)."""
    undefined: str | None = None
    """For an operation whose behavior the manual makes undefined in this trace (an mbarrier
    operation on an object that is not initialized, counts out of range, ...): the rule, with its
    section. Its trace's registers then hold :data:`UNDEFINED_REGISTER` = 1."""
    tcgen05: str | None = None
    """For a tcgen05 operation (§9.7.16.6): its kind. An asynchronous one (an agent's operation):
    ``mma/N/d`` (``.cta_group::N``, accumulator ``d``), ``cp/N``, ``commit/N``, ``ld``, ``st``; a
    synchronous one of the thread: ``fence::before_thread_sync``, ``fence::after_thread_sync``,
    ``wait::ld``, ``wait::st``."""

    @property
    def is_initial(self) -> bool:
        return self.thread is None

    @property
    def physical(self) -> str:
        """The physical location (§8.2.1) of a memory operation."""
        if self.address is None:
            raise ValueError(f"{self.instruction!r} is not a memory operation")
        return self.address.physical

    @property
    def takes_value(self) -> bool:
        """Needs a reads-from source: reads, and red (which modifies what it finds)."""
        return self.reads or (self.atomic and self.writes)


@attrs.frozen
class Trace:
    """One way a thread can run: its events in program order and what it leaves behind."""

    thread: int
    events: tuple[Event, ...]
    registers: Mapping[str, int]
    """Final value of every register the thread names (initial values included)."""
    data: frozenset[tuple[int, int]] = frozenset()
    """Data dependencies (§8.10.4): (read eid, event eid) where the event's written value or
    operand was computed from the value the read returned."""
    ctrl: frozenset[tuple[int, int]] = frozenset()
    """Control dependencies: (read eid, event eid) for events after a branch that the read decided."""
    addr: frozenset[tuple[int, int]] = frozenset()
    """Address dependencies (kept for completeness; the litmus format has no computed addresses)."""
    blocked_at: int | None = None
    """eid of a barrier operation at which this trace stops, waiting for a use of the barrier that
    must never complete; None when the thread runs to its end."""


@attrs.frozen
class Thread:
    index: int
    name: str
    """As in the test, e.g. ``"P0"``."""
    placement: Placement
    traces: tuple[Trace, ...]


# ---- the final condition (herd's exists / ~exists / forall) -----------------------------------------


@attrs.frozen
class RegisterTerm:
    thread: int
    register: str


@attrs.frozen
class LocationTerm:
    name: str
    """A virtual address; its value is the final value of the physical location."""


@attrs.frozen
class Constant:
    value: int


Term = RegisterTerm | LocationTerm | Constant


@attrs.frozen
class Compare:
    op: str
    """``"=="`` or ``"!="``."""
    left: Term
    right: Term


@attrs.frozen
class Not:
    operand: Formula


@attrs.frozen
class And:
    operands: tuple[Formula, ...]


@attrs.frozen
class Or:
    operands: tuple[Formula, ...]


@attrs.frozen
class TrueFormula:
    pass


Formula = Compare | Not | And | Or | TrueFormula


@attrs.frozen
class Condition:
    quantifier: str
    """``"exists"``, ``"~exists"`` or ``"forall"``."""
    formula: Formula
    text: str = attrs.field(default="", eq=False)
    """As written, for herd's ``Condition`` line (not part of equality: printing and parsing again
    may add parentheses)."""


@attrs.frozen
class Program:
    """A litmus test ready for the engines."""

    name: str
    source: str
    """File the test came from (or ``<string>``)."""
    addresses: Mapping[str, Address]
    initial: tuple[Event, ...]
    """One initial write per physical location (§8.2.6), first in coherence order."""
    threads: tuple[Thread, ...]
    condition: Condition
    observed: tuple[Term, ...]
    """What a final state shows: the terms of the condition (and of a ``locations`` line), in order."""
    unroll_bound: int = 2
    truncated: bool = False
    """True when some path was cut at the unrolling bound (its executions are not considered)."""
    comments: tuple[str, ...] = ()


UNDEFINED_REGISTER = "%undefined"
"""A register no litmus test can name (``%`` is not a register of the dialect): 1 in a trace that
performs an operation whose behavior is undefined (:attr:`Event.undefined`), so that an engine can
be asked whether a consistent execution reaches undefined behavior."""

WIDTH = 64
"""Register and memory values are 64-bit, wrapping (the litmus format has no types)."""
MASK = (1 << WIDTH) - 1
