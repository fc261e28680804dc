"""The PTX memory consistency model (chapter 8 of the PTX ISA 8.7), written as a herd ``.cat`` file.

The module reads top to bottom like the manual: the operation types of §8.4 (sets), then each
notion of §8.7-§8.9 as one module-level :class:`~ptxspec.memory_model.relations.Definition` (its
section, and the manual's sentence in ``doc``), then the axioms of §8.10 as module-level
:class:`~ptxspec.memory_model.relations.Axiom` objects, then the models. Both engines
(``explicit.py``, ``z3_engine.py``) interpret exactly these expressions over the base vocabulary
of ``relations.py`` (computed in ``base.py``). Notation: ``a | b`` union, ``a & b`` intersection,
``a - b`` difference, ``a >> b`` sequence, ``~a`` inverse, ``a.plus()`` transitive closure,
``a.opt()`` reflexive closure, ``S.id()`` the identity on a set, ``S * T`` product.

A definition used inside another expression stands for its *name*, resolved in the model being
evaluated (``render.model_text`` prints the same thing in ``.cat`` syntax).

``PTX_8_7``
    §8 of PTX ISA 8.7, with proxies (§8.6) and proxy-preserved base causality order (§8.9.5).
``PTX_6_0``
    the proxy-less model of PTX ISA 6.0, stated as its differences from ``PTX_8_7``.

Readings that are not literally in the manual are said so in the docstring of the definition
concerned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs

from .relations import Axiom, Definition, Model, RelExpr, SetExpr, operands, relations, sets

(R, W, M, A, I, F, F_SC, PF, PF_ALIAS, PF_TEXTURE, PF_SURFACE, PF_CONSTANT, B) = sets(
    "R", "W", "M", "A", "I", "F", "F_SC", "PF", "PF_ALIAS", "PF_TEXTURE", "PF_SURFACE", "PF_CONSTANT", "B"
)
(WEAK, ACQUIRE, RELEASE, ACQ_REL) = sets("WEAK", "ACQUIRE", "RELEASE", "ACQ_REL")
(GEN, TEX, SUR, CON, ASYNC, PF_ASYNC, TMAP, PF_TO_TENSORMAP) = sets("GEN", "TEX", "SUR", "CON", "ASYNC", "PF_ASYNC", "TMAP", "PF_TO_TENSORMAP")
(po, loc, vloc, same_thread, same_cta, scope_incl, same_proxy) = relations("po", "loc", "vloc", "same_thread", "same_cta", "scope_incl", "same_proxy")
(data, ctrl, addr, bar_sync, rf, co, sc) = relations("data", "ctrl", "addr", "bar_sync", "rf", "co", "sc")
(async_issue, issued_before, tcgen05_pipelined, tcgen05_pipelinable, async_completed, proxy_fence_range) = relations(
    "async_issue", "issued_before", "tcgen05_pipelined", "tcgen05_pipelinable", "async_completed", "proxy_fence_range"
)
(B_RELAXED, F_CLUSTER_WIDE) = sets("B_RELAXED", "F_CLUSTER_WIDE")
(F_RESTRICTED, F_INIT_ONLY, F_CTA_ONLY, F_CLUSTER_ONLY, MB, MB_INIT, SHARED_CTA, SHARED_CLUSTER, PF_TO_ASYNC) = sets(
    "F_RESTRICTED", "F_INIT_ONLY", "F_CTA_ONLY", "F_CLUSTER_ONLY", "MB", "MB_INIT", "SHARED_CTA", "SHARED_CLUSTER", "PF_TO_ASYNC"
)
(TC, TC_LD, TC_ST, TC_COMMIT, TCS, TC_BEFORE, TC_AFTER, TC_WAIT_LD, TC_WAIT_ST) = sets(
    "TC", "TC_LD", "TC_ST", "TC_COMMIT", "TCS", "TC_BEFORE", "TC_AFTER", "TC_WAIT_LD", "TC_WAIT_ST"
)

# ---- §8.4 operation types (sets) ----------------------------------------------------------------

NOT_MEMORY = F | PF | B
"""Operations of a trace that are not memory operations: memory fences, proxy fences, barriers."""
EVENTS = M | NOT_MEMORY
STRONG = F | (M - WEAK)
"""§8.4: "A memory fence operation, or a memory operation with a .relaxed, .acquire, .release,
.acq_rel, .volatile, or .mmio qualifier" (an initial write is weak)."""
RELEASE_OPERATION = M & (RELEASE | ACQ_REL)
"""§8.4: "Memory operation with .release or .acq_rel qualifier"."""
ACQUIRE_OPERATION = M & (ACQUIRE | ACQ_REL)
"""§8.4: "Memory operation with .acquire or .acq_rel qualifier"."""
RELEASE_FENCE = F - ACQUIRE - F_RESTRICTED
"""Memory fences that can begin a release pattern: fence.sc, fence.acq_rel, fence.release
(§9.7.13.4: fence.acquire and fence.release are uni-directional); the restricted fences take part
in restricted patterns only (below)."""
ACQUIRE_FENCE = F - RELEASE - F_RESTRICTED
"""Memory fences that can end an acquire pattern: fence.sc, fence.acq_rel, fence.acquire."""

# ---- §8.7 morally strong ------------------------------------------------------------------------

morally_strong = Definition(
    "morally_strong",
    (
        (same_thread | scope_incl)  # condition 1
        & (vloc | (NOT_MEMORY * EVENTS) | (EVENTS * NOT_MEMORY))  # 3: "if both are memory operations"
        & same_proxy  # 2
    )
    - EVENTS.id(),  # "two operations": none is morally strong with itself
    "8.7",
    "'Two operations are said to be morally strong relative to each other if they satisfy all of the "
    "following conditions: 1. The operations are related in program order (i.e, they are both executed by "
    "the same thread), or each operation is strong and specifies a scope that includes the thread executing "
    "the other operation. 2. Both operations are performed via the same proxy. 3. If both are memory "
    "operations, then they overlap completely.' Overlap completely = the same virtual address (§8.2.1: 'two "
    "memory operations are said to overlap when they specify the same virtual address and the corresponding "
    "memory locations overlap'); memory fences use the generic proxy (§8.6).",
)

# ---- §8.8 release and acquire patterns ----------------------------------------------------------

release_pattern = Definition(
    "release_pattern",
    (W & RELEASE_OPERATION).id() | (RELEASE_OPERATION.id() >> (po & vloc) >> (W & STRONG).id()) | (RELEASE_FENCE.id() >> po >> (W & STRONG).id()),
    "8.8",
    "Pairs (first operation, write) of a release pattern on a location M: 'a release operation on M; or a "
    "release operation on M followed by a strong write on M in program order; or a memory fence followed by "
    "a strong write on M in program order.' 'On M' is read as the same virtual address (aliases behave as "
    "different proxies, §8.6).",
)
acquire_pattern = Definition(
    "acquire_pattern",
    (R & ACQUIRE_OPERATION).id() | ((R & STRONG).id() >> (po & vloc) >> ACQUIRE_OPERATION.id()) | ((R & STRONG).id() >> po >> ACQUIRE_FENCE.id()),
    "8.8",
    "Pairs (read, last operation) of an acquire pattern on a location M: 'an acquire operation on M; or a "
    "strong read on M followed by an acquire operation on M in program order; or a strong read on M followed "
    "by a memory fence in program order.' 'On M' is read as the same virtual address, as for release patterns; "
    "the fence is one that acquires (ACQUIRE_FENCE: not fence.release).",
)

# ---- §8.9.2 observation order, §8.9.3 Fence-SC order, §8.9.4 memory synchronization ------------

observation_order = Definition(
    "observation_order",
    (morally_strong & rf) | (((morally_strong & rf) >> A.id()).plus() >> (morally_strong & rf)),
    "8.9.2",
    "'A write W precedes a read R in observation order if: 1. R and W are morally strong and R reads the "
    "value written by W, or 2. For some atomic operation Z, W precedes Z and Z precedes R in observation order.'",
)
fence_sc_order = Definition(
    "fence_sc_order",
    sc & morally_strong,
    "8.9.3",
    "'Fence-SC order is an acyclic partial order, determined at runtime, that relates every pair of morally "
    "strong fence.sc operations.' (sc is a run-time total order on fence.sc operations; its morally strong "
    "pairs are kept.)",
)
barrier_synchronization = Definition(
    "barrier_synchronization",
    (bar_sync - (B_RELAXED.id() >> bar_sync)) | ((F_CLUSTER_WIDE & RELEASE_FENCE).id() >> po >> B_RELAXED.id() >> bar_sync),
    "8.9.4",
    "Items 2 and 3: 'A bar{.cta}.sync or bar{.cta}.red or bar{.cta}.arrive operation synchronizes with a "
    "bar{.cta}.sync or bar{.cta}.red operation executed on the same barrier.' 'A barrier.cluster.arrive "
    "operation synchronizes with a barrier.cluster.wait operation.' Which operations are 'on the same "
    "barrier' (one use of it) and when threads block: base.barrier_options (rules in explicit.py's module "
    "docstring). §9.7.13.3: 'The optional .relaxed qualifier on barrier.cluster.arrive specifies that there "
    "are no memory ordering and visibility guarantees provided for the memory accesses performed prior to "
    "barrier.cluster.arrive': a relaxed arrive synchronizes with nothing, and a memory fence of cluster scope "
    "or wider before it synchronizes with the wait in its place (the manual's 'fence.cluster.acq_rel; "
    "barrier.cluster.arrive.relaxed.aligned'; our reading).",
)
release_acquire_synchronization = Definition(
    "release_acquire_synchronization",
    morally_strong & (release_pattern >> observation_order >> acquire_pattern),
    "8.9.4",
    "Item 4: 'A release pattern X synchronizes with an acquire pattern Y, if a write operation in X precedes "
    "a read operation in Y in observation order, and the first operation in X and the last operation in Y "
    "are morally strong.'",
)
synchronizes_with = Definition(
    "synchronizes_with",
    fence_sc_order | barrier_synchronization | release_acquire_synchronization,
    "8.9.4",
    "Item 1: 'A fence.sc operation X synchronizes with a fence.sc operation Y if X precedes Y in Fence-SC order', with items 2-4 above.",
)

# ---- §9.7.13.4 restricted fences ----------------------------------------------------------------
# "The qualifiers .op_restrict and .sync_restrict restrict the class of memory operations for which
# the fence instruction provides the memory ordering guarantees." A restricted fence orders only the
# operations of its class: those before a releasing one, those after an acquiring one. Its ordering
# therefore does not compose with program order on its restricted side (an operation before the
# class's operations is not ordered), and we add its pairs to base causality order beside the
# closure of po and synchronizes-with instead of inside it (our reading; weaker than any reading
# that orders more, hence never forbids what the manual allows).

restricted_prior = Definition(
    "restricted_prior",
    (MB_INIT.id() >> po >> F_INIT_ONLY.id()) | ((M & SHARED_CTA).id() >> po >> F_CTA_ONLY.id()),
    "9.7.13.4",
    "Pairs (X, F) of a releasing restricted fence F and an operation X before it that it orders: '.op_restrict "
    "is .mbarrier_init, the synchronizing effect of the fence only applies to the prior mbarrier.init "
    "operations executed by the same thread on mbarrier objects in .shared::cta state space'; "
    "'.sync_restrict::shared::cta ... the effect of the fence only applies to operations performed on objects "
    "in .shared::cta state space' (the state space the instruction names; generic addressing is not counted).",
)
restricted_later = Definition(
    "restricted_later",
    F_CLUSTER_ONLY.id() >> po >> (M & SHARED_CLUSTER).id(),
    "9.7.13.4",
    "Pairs (F, Y) of an acquiring restricted fence and an operation after it that it orders: "
    "'.sync_restrict::shared::cluster, .sem must be .acquire, and the effect of the fence only applies to "
    "operations performed on objects in .shared::cluster state space' (objects in .shared::cta included).",
)
restricted_synchronization = Definition(
    "restricted_synchronization",
    morally_strong
    & (
        (
            (F_RESTRICTED & RELEASE).id()
            >> po
            >> (W & STRONG).id()
            >> observation_order
            >> (acquire_pattern | ((R & STRONG).id() >> po >> (F_RESTRICTED & ACQUIRE).id()))
        )
        | (release_pattern >> observation_order >> (R & STRONG).id() >> po >> (F_RESTRICTED & ACQUIRE).id())
    )
    | ((F_RESTRICTED & RELEASE & F_CLUSTER_WIDE).id() >> po >> B_RELAXED.id() >> bar_sync),
    "9.7.13.4",
    "§8.9.4 item 4 with a restricted fence at either end: a releasing restricted fence followed in program "
    "order by a strong write (fence.mbarrier_init.release.cluster, fence.release.sync_restrict::shared::cta"
    ".cluster), an acquiring one after a strong read (fence.acquire.sync_restrict::shared::cluster.cluster); "
    "and a releasing one before barrier.cluster.arrive.relaxed (the manual's 'mbarrier.init; "
    "fence.mbarrier_init.release.cluster; ... barrier.cluster.arrive.relaxed').",
)
causality_step = Definition(
    "causality_step",
    po | synchronizes_with | async_completed,
    "8.9.5",
    "One step of base causality order: program order (item 1), synchronizes-with (item 2), and a "
    "cp.async / bulk / wgmma wait after the operations of the groups it waits for (async_completed, "
    "§9.7.9.25.3.3: 'writes being made visible to the executing thread' once it completes).",
)
restricted_entry = Definition(
    "restricted_entry",
    restricted_prior >> (restricted_synchronization - (EVENTS * (F_RESTRICTED & ACQUIRE))),
    "9.7.13.4",
    "From an operation a releasing restricted fence orders to the end of the acquire pattern (or the barrier wait) it synchronizes with.",
)
restricted_exit = Definition(
    "restricted_exit",
    (restricted_synchronization - ((F_RESTRICTED & RELEASE) * EVENTS)) >> restricted_later,
    "9.7.13.4",
    "From the first operation of a release pattern, through an acquiring restricted fence, to an operation that fence orders.",
)
restricted_order = Definition(
    "restricted_order",
    (restricted_entry >> causality_step.plus().opt()).plus()
    | ((restricted_entry >> causality_step.plus().opt()).plus().opt() >> causality_step.plus().opt() >> restricted_exit)
    | (restricted_prior >> (F_RESTRICTED & RELEASE).id() >> restricted_synchronization >> (F_RESTRICTED & ACQUIRE).id() >> restricted_later),
    "9.7.13.4",
    "What restricted fences order, as base causality order: from an operation a releasing restricted fence "
    "orders, through the synchronization, to the operations after the acquire end and on along causality "
    "steps; to an operation an acquiring restricted fence orders, from the operations before the release "
    "(or before another restricted release); between the two restricted classes when both ends are "
    "restricted.",
)

# ---- §8.9.5 causality order ---------------------------------------------------------------------

base_causality_order = Definition(
    "base_causality_order",
    (causality_step.plus() | restricted_order)
    | ((causality_step.plus() | restricted_order).opt() >> async_issue >> po.opt())
    | ((causality_step.plus() | restricted_order).opt() >> async_issue >> (RELEASE_OPERATION - MB).id() >> causality_step.plus()),
    "8.9.5",
    "'An operation X precedes an operation Y in base causality order if: 1. X precedes Y in program order, "
    "or 2. X synchronizes with Y, or 3. For some operation Z, X precedes Z in program order and Z precedes Y "
    "in base causality order, or X precedes Z in base causality order and Z precedes Y in program order, or "
    "X precedes Z in base causality order and Z precedes Y in base causality order.' (the transitive closure "
    "of po and synchronizes-with). The operations of an asynchronous instruction (§8.9.1.1: cp.async.bulk) "
    "'are ordered after prior instructions in the same thread ... but they are not part of the program "
    "order of that thread', and its implicit complete-tx 'is only ordered with respect to the memory "
    "operations performed by the same asynchronous instruction, and in particular it does not transitively "
    "establish ordering with respect to prior instructions from the issuing thread': so a path may enter "
    "an asynchronous instruction from its thread's earlier operations (async_issue) only as its last step "
    "(then along the instruction's own operations), and what the instruction synchronizes with is ordered "
    "after its own operations alone. A cp.async.wait_group / wait_all orders the cp.async operations of the "
    "groups it waits for before itself (async_completed; §9.7.9.25.3.3: 'writes being made visible to the "
    "executing thread' once it completes). Restricted fences add restricted_order beside the closure. An "
    "asynchronous release operation (st.async.release, red.async.release: 'a strong memory operation with "
    ".release semantics', §9.7.9.12, §9.7.13.7) does order its thread's prior instructions before what it "
    "synchronizes with (unlike an mbarrier complete-tx, MB).",
)
proxy_fence_for = Definition(
    "proxy_fence_for",
    (SUR.id() >> same_cta >> PF_SURFACE.id())
    | (TEX.id() >> same_cta >> PF_TEXTURE.id())
    | (CON.id() >> same_cta >> PF_CONSTANT.id())
    | (ASYNC.id() >> same_cta >> PF_ASYNC.id()),
    "9.7.13.4",
    "Pairs (memory operation X through a non-generic proxy P, proxy fence fence.proxy.P in X's CTA). 'The "
    ".proxykind qualifier indicates a bi-directional proxy ordering established between the memory accesses "
    "done between the generic proxy and the proxy specified by .proxykind.' Reading (the mixed-proxy model "
    "of NVlabs/mixedproxy, also Dat3M's ptx-v7.5.cat): the fence converts for accesses of its CTA, like "
    "condition 2 of §8.9.5 (same thread block). The async proxy likewise: 'fence.proxy.async is used to "
    "synchronize memory between the generic proxy and the async proxy', and the completion of a "
    "cp{.reduce}.async.bulk operation 'is followed by an implicit generic-async proxy fence' (§9.7.9.25.2).",
)
generic_from = Definition(
    "generic_from",
    GEN.id() | (base_causality_order & proxy_fence_for),
    "8.9.5",
    "Where a base causality path leaves memory operation X with X's effect in the generic proxy: X itself if "
    "X is generic, or a proxy fence for X's proxy that X precedes in base causality order (§9.7.13.4).",
)
proxy_fence_into = Definition(
    "proxy_fence_into",
    ((ASYNC & SHARED_CTA).id() >> same_cta >> (PF_TO_ASYNC & F_CTA_ONLY).id())
    | ((ASYNC & SHARED_CLUSTER).id() >> same_cta >> (PF_TO_ASYNC & F_CLUSTER_ONLY).id()),
    "9.7.13.4",
    "Pairs (memory operation Y through the async proxy, uni-directional proxy fence "
    "fence.proxy.async::generic in Y's CTA): 'A uni-directional proxy ordering from the from-proxykind to the "
    "to-proxykind establishes ordering between a prior memory access performed via the from-proxykind and a "
    "subsequent memory access performed via the to-proxykind' -- it converts towards Y only (generic_to), "
    "never away from an async operation (generic_from). The fence's .sync_restrict limits it to Y on an object "
    "of that state space.",
)
generic_to = Definition(
    "generic_to",
    GEN.id() | (base_causality_order & ~(proxy_fence_for | proxy_fence_into)),
    "8.9.5",
    "Where a base causality path reaches memory operation Y through the generic proxy: Y itself if Y is "
    "generic, or a proxy fence for Y's proxy (bi-directional, or uni-directional towards it) that precedes Y "
    "in base causality order.",
)
tensormap_proxy_synchronization = Definition(
    "tensormap_proxy_synchronization",
    base_causality_order
    | (scope_incl & (PF_TO_TENSORMAP.id() >> po >> (W & STRONG).id() >> observation_order >> (R & STRONG).id() >> po >> PF_TO_TENSORMAP.id())),
    "9.7.13.4",
    "Between a release and an acquire fence.proxy.tensormap::generic: 'The .release proxy fence can form a "
    "release sequence that synchronizes with an acquire sequence that contains the .acquire proxy fence' "
    "(a release pattern begun by the release proxy fence, an acquire pattern ended by the acquire one, §8.8, "
    "with scopes that include each other's thread), or base causality order between them. Reading: it serves "
    "the proxy ordering only (tensormap_fenced); it is not a release or acquire fence for other operations.",
)
tensormap_fenced = Definition(
    "tensormap_fenced",
    (generic_from >> base_causality_order >> (PF_TO_TENSORMAP & RELEASE).id())
    >> tensormap_proxy_synchronization
    >> (PF_TO_TENSORMAP & ACQUIRE).id()
    >> (base_causality_order & proxy_fence_range)
    >> TMAP.id(),
    "9.7.13.4",
    "Pairs (X, Y) of an operation X whose effect is in the generic proxy and a read Y of a tensor map in the "
    "tensormap proxy, ordered across the two proxies: 'A uni-directional proxy ordering from the "
    "from-proxykind to the to-proxykind establishes ordering between a prior memory access performed via the "
    "from-proxykind and a subsequent memory access performed via the to-proxykind'. X precedes a "
    "fence.proxy.tensormap::generic.release (or the one tensormap.cp_fenceproxy performs, §9.7.13.16), which "
    "synchronizes with a fence.proxy.tensormap::generic.acquire that precedes Y and names Y's tensor map "
    "('the memory range [addr, addr+size-1] on which the ordering guarantees on the memory accesses across "
    "the proxies is to be provided'). Reading: both halves are needed, as in every example of the manual.",
)
proxy_preserved_base_causality_order = Definition(
    "proxy_preserved_base_causality_order",
    (M.id() >> (base_causality_order & vloc & same_proxy & same_cta) >> M.id())
    | (vloc & (generic_from >> base_causality_order.opt() >> generic_to) & (M * M) & base_causality_order)
    | (
        (loc - vloc)
        & (generic_from >> base_causality_order.opt() >> PF_ALIAS.id() >> base_causality_order.opt() >> generic_to)
        & (M * M)
        & base_causality_order
    )
    | (vloc & tensormap_fenced & (M * M)),
    "8.9.5",
    "'A memory operation X precedes a memory operation Y in proxy-preserved base causality order if X "
    "precedes Y in base causality order, and: 1. X and Y are performed to the same address, using the "
    "generic proxy, or 2. X and Y are performed to the same address, using the same proxy, and by the same "
    "thread block, or 3. X and Y are aliases and there is an alias proxy fence along the base causality path "
    "from X to Y.' Item 1 is extended by §9.7.13.4: a path through a proxy fence of X's (or Y's) proxy in "
    "its CTA counts as generic at that end (generic_from, generic_to); item 3 likewise needs generic (or "
    "converted) ends, as in the mixed-proxy model; a tensor map read in the tensormap proxy is ordered after "
    "a generic write through the release and acquire tensormap proxy fences (tensormap_fenced).",
)
causality_order = Definition(
    "causality_order",
    proxy_preserved_base_causality_order | (observation_order >> proxy_preserved_base_causality_order) | (F_SC.id() >> base_causality_order >> F_SC.id()),
    "8.9.5",
    "'An operation X precedes an operation Y in causality order if: 1. X precedes Y in proxy-preserved base "
    "causality order, or 2. For some operation Z, X precedes Z in observation order, and Z precedes Y in "
    "proxy-preserved base causality order.' Reading: proxy preservation is defined for memory operations "
    "only; between fence.sc operations (which the Fence-SC axiom compares) causality order is base causality "
    "order.",
)

# ---- §9.7.16.6 the ordering of tcgen05 operations ------------------------------------------------

tcgen05_completed = Definition(
    "tcgen05_completed",
    (TC_LD.id() >> issued_before >> TC_WAIT_LD.id()) | (TC_ST.id() >> issued_before >> TC_WAIT_ST.id()),
    "9.7.16.8.5",
    "'tcgen05.wait::st causes the executing thread to block until all prior tcgen05.st operations issued by "
    "the executing thread have completed' (and ::ld of tcgen05.ld): pairs (asynchronous ld or st, a later "
    "wait of its kind in its thread).",
)
tcgen05_same_thread = Definition(
    "tcgen05_same_thread",
    tcgen05_pipelined | (tcgen05_completed >> po.opt() >> TCS.id() >> async_issue >> TC.id()),
    "9.7.16.6.4",
    "§9.7.16.6.4.1 'no explicit ordering mechanism is needed and the ordering guarantee is provided by the "
    "pipelined instruction pairing' (tcgen05_pipelined: §9.7.16.6.2's pairs, base.tcgen05_pipelined); "
    "§9.7.16.6.4.2 'explicit waiting mechanisms are used to wait for the completion of the asynchronous "
    "tcgen05 operations': an operation completed by a wait precedes the asynchronous operations issued after "
    "that wait, or after a later synchronous tcgen05 instruction ('Synchronous instructions: These tcgen05 "
    "operations are inherently ordered with respect to other tcgen05 operations', §9.7.16.6.1).",
)
tcgen05_across_threads = Definition(
    "tcgen05_across_threads",
    (
        ((tcgen05_completed >> po.opt() >> TC_BEFORE.id()) | (tcgen05_pipelined >> TC_COMMIT.id()))
        >> (po | observation_order | synchronizes_with).plus()
        >> TC_AFTER.id()
        >> async_issue
        >> TC.id()
    )
    | (
        (TC.id() >> issued_before >> TC_BEFORE.id() >> (po | observation_order | synchronizes_with).plus() >> TC_AFTER.id() >> async_issue >> TC.id())
        & tcgen05_pipelinable
    ),
    "9.7.16.6.3",
    "'The tcgen05.fence::before_thread_sync and tcgen05.fence::after_thread_sync composes with execution "
    "ordering instructions, like morally strong ld/st/atom instructions, mbarrier instruction, barrier "
    "instructions and so on, to establish an ordering between the tcgen05 operations across threads. The "
    "asynchronous tcgen05 instructions that are ordered across threads also form a tcgen05 pipeline.' "
    "Execution ordering is read as program order, observation order (§8.9.2: morally strong reads-from, "
    "relaxed included, through atomics) and synchronizes-with. From the producer: an operation completed by a "
    "wait before a before_thread_sync (§9.7.16.6.4.4: 'the producer threads that issue the asynchronous "
    "tcgen05 instructions must explicitly wait for the instructions' completion before synchronizing with "
    "the consumer threads'), the operations a tcgen05.commit tracks ('No explicit "
    "tcgen05.fence::before_thread_sync is needed as this is implicitly performed by tcgen05.commit'), or "
    "any operation before a before_thread_sync whose kind forms a pipeline with the consumer's "
    "(§9.7.16.6.4.3, tcgen05_pipelinable); at the consumer, the asynchronous operations issued after an "
    "after_thread_sync.",
)
tcgen05_order = Definition(
    "tcgen05_order",
    (tcgen05_same_thread | tcgen05_across_threads).plus(),
    "9.7.16.6",
    "The order of asynchronous tcgen05 operations that §9.7.16.6 guarantees, within a thread and across "
    "threads, closed transitively ('ordered across threads also form a tcgen05 pipeline').",
)

# ---- §8.9.6 coherence order, §8.9.7 communication order ----------------------------------------

coherence_order = Definition(
    "coherence_order",
    (co & ((I * W) | morally_strong | causality_order | tcgen05_order)).plus(),
    "8.9.6",
    "'There exists a partial transitive order that relates overlapping write operations, determined at "
    "runtime, called the coherence order. Two overlapping write operations are related in coherence order if "
    "they are morally strong or if they are related in causality order. Two overlapping write operations are "
    "unrelated in coherence order if they are in a data-race, which gives rise to the partial nature of "
    "coherence order.' The base relation co is a run-time total order per physical location (initial write "
    "first); coherence order keeps of it the pairs with the initial write (§8.2.6: W0 is performed before any "
    "thread starts), the morally strong pairs and the pairs in causality order, closed transitively. Every "
    "such partial order arises from some total co (a linear extension), and the final value of a location is "
    "the last write of co, a maximal write of coherence order. (Causality pairs against co are rejected by "
    "the Coherence axiom.) Writes in the order of tcgen05 operations (§9.7.16.6) are related too, as "
    "writes in causality order are.",
)
fr = Definition(
    "fr",
    (~rf >> coherence_order) - M.id(),
    "8.9.7",
    "Communication order, item 3: 'A read R precedes an overlapping write W in communication order if R "
    "returns the value of any byte that was written by a write W' that precedes W in coherence order.' "
    "(from-read; an atomic is one event and is not in fr with itself)",
)
communication_order = Definition(
    "communication_order",
    rf | coherence_order | fr,
    "8.9.7",
    "'Communication order is a non-transitive order, determined at runtime, that relates write operations to "
    "other overlapping memory operations': rf (item 1), coherence order (item 2), fr (item 3).",
)

# ---- §8.10 axioms -------------------------------------------------------------------------------

Coherence = Axiom(
    "Coherence",
    "empty",
    ((W.id() >> causality_order >> W.id()) & loc) - coherence_order,
    "8.10.1",
    "'If a write W precedes an overlapping write W' in causality order, then W must precede W' in coherence order.'",
)
Fence_SC = Axiom(
    "Fence-SC",
    "empty",
    ((F_SC.id() >> causality_order >> F_SC.id()) & morally_strong) - sc,
    "8.10.2",
    "'Fence-SC order cannot contradict causality order. For a pair of morally strong fence.sc operations F1 "
    "and F2, if F1 precedes F2 in causality order, then F1 must precede F2 in Fence-SC order.'",
)
Atomicity_single_copy = Axiom(
    "Atomicity-single-copy",
    "irreflexive",
    (morally_strong & rf) >> (morally_strong & fr),
    "8.10.3",
    "'When a read R and a write W are morally strong, then the following two communications cannot both "
    "exist in the same execution, for the set of bytes accessed by both R and W: R reads any byte from W; R "
    "reads any byte from any write W' which precedes W in coherence order.' (A read returns one write's "
    "value here, so this never fails; kept for the reader.)",
)
Atomicity_RMW = Axiom(
    "Atomicity-RMW",
    "irreflexive",
    A.id() >> (morally_strong & fr) >> (morally_strong & coherence_order),
    "8.10.3",
    "'When an atomic operation A and a write W overlap and are morally strong, then the following two "
    "communications cannot both exist in the same execution, for the set of bytes accessed by both A and W: "
    "A reads any byte from a write W' that precedes W in coherence order; A follows W in coherence order.'",
)
No_Thin_Air = Axiom(
    "No-Thin-Air",
    "acyclic",
    rf | (data | ctrl | addr),
    "8.10.4",
    "'Values may not appear out of thin air: an execution cannot speculatively produce a value in such a way "
    "that the speculation becomes self-satisfying through chains of instruction dependencies and inter-thread "
    "communication.'",
)
SC_per_location = Axiom(
    "SC-per-location",
    "acyclic",
    # morally_strong & coherence_order = morally_strong & co: morally strong writes keep co's orientation.
    M.id() >> (morally_strong & (po | rf | co | fr)) >> M.id(),
    "8.10.5",
    "'Within any set of overlapping memory operations that are pairwise morally strong, communication order "
    "cannot contradict program order, i.e., a concatenation of program order between overlapping operations "
    "and morally strong relations in communication order cannot result in a cycle.' (Read as: a cycle of "
    "memory operations each morally strong with the next.)",
)
Causality = Axiom(
    "Causality",
    "irreflexive",
    (rf | fr) >> causality_order,
    "8.10.6",
    "'Relations in communication order cannot contradict causality order: 1. If a read R precedes an "
    "overlapping write W in causality order, then R cannot read from W. 2. If a write W precedes an "
    "overlapping read R in causality order, then for any byte accessed by both R and W, R cannot read from "
    "any write W' that precedes W in coherence order.'",
)

Tcgen05_Causality = Axiom(
    "Tcgen05-Causality",
    "irreflexive",
    (rf | fr) >> tcgen05_order,
    "9.7.16.6",
    "The Causality axiom (§8.10.6) for the order of tcgen05 operations: an asynchronous tcgen05 operation "
    "ordered after a write cannot read a value that write overwrote, and one ordered before a write cannot "
    "read from it (Tensor Memory and the shared memory tcgen05 operations access).",
)
Tcgen05_Coherence = Axiom(
    "Tcgen05-Coherence",
    "empty",
    ((W.id() >> tcgen05_order >> W.id()) & loc) - coherence_order,
    "9.7.16.6",
    "The Coherence axiom (§8.10.1) for the order of tcgen05 operations: of two overlapping writes so ordered, "
    "the first precedes the second in coherence order.",
)

# ---- the models ---------------------------------------------------------------------------------

PTX_8_7 = Model(
    name="ptx-8.7",
    definitions=(
        morally_strong,
        release_pattern,
        acquire_pattern,
        observation_order,
        fence_sc_order,
        barrier_synchronization,
        release_acquire_synchronization,
        synchronizes_with,
        restricted_prior,
        restricted_later,
        restricted_synchronization,
        causality_step,
        restricted_entry,
        restricted_exit,
        restricted_order,
        base_causality_order,
        proxy_fence_for,
        proxy_fence_into,
        generic_from,
        generic_to,
        tensormap_proxy_synchronization,
        tensormap_fenced,
        proxy_preserved_base_causality_order,
        causality_order,
        tcgen05_completed,
        tcgen05_same_thread,
        tcgen05_across_threads,
        tcgen05_order,
        coherence_order,
        fr,
        communication_order,
    ),
    axioms=(Coherence, Fence_SC, Atomicity_single_copy, Atomicity_RMW, No_Thin_Air, SC_per_location, Causality, Tcgen05_Causality, Tcgen05_Coherence),
)
"""§8 of PTX ISA 8.7."""

AXIOM_TEXT = {axiom.name: f"§{axiom.section}: {axiom.doc}" for axiom in PTX_8_7.axioms}
"""The manual's sentence for each axiom (``--why`` prints it)."""


# ---- PTX ISA 6.0: the differences ------------------------------------------------------------------
# A name inside an expression is resolved in the model being evaluated, so replacing a definition
# changes every definition that uses it: PTX 6.0's observation order, synchronization and coherence
# order are PTX 8.7's, over PTX 6.0's morally strong, patterns and causality order.


def _substituted(expr: RelExpr | SetExpr, replacements: Mapping[RelExpr, RelExpr]) -> RelExpr | SetExpr:
    """``expr`` with every sub-expression that is a key of ``replacements`` replaced by its value."""
    if isinstance(expr, RelExpr) and expr in replacements:
        return replacements[expr]
    parts = {name: _substituted(part, replacements) for name, part in operands(expr).items()}
    # operands() has checked that expr's class is an attrs class; mypy's attrs plugin wants one it
    # can see statically, and RelExpr and SetExpr are plain bases (whose subclasses are attrs classes).
    substituted: RelExpr | SetExpr = attrs.evolve(cast(Any, expr), **parts)
    return substituted


def _before_proxies(definition: Definition, words: str, words_6_0: str) -> Definition:
    """``definition`` as PTX 6.0, which has no proxies (§8.6), reads it: a location is a physical
    location (a virtual alias is the same location), and base causality order between memory
    operations needs no proxy preservation. Its doc says ``words_6_0`` where PTX 8.7's says ``words``."""
    assert words in definition.doc, f"{words!r} is not in the doc of {definition.name}"
    without_proxies = {
        vloc: loc,
        proxy_preserved_base_causality_order.ref: M.id() >> base_causality_order >> M.id(),
    }
    relation = _substituted(definition.relation, without_proxies)
    assert isinstance(relation, RelExpr), "a relation with relations substituted for relations is a relation"
    return attrs.evolve(definition, relation=relation, doc=definition.doc.replace(words, words_6_0))


def _differing(model: Model, name: str, *, replace: Sequence[Definition], drop: Sequence[Definition]) -> Model:
    """``model`` with each definition of ``replace`` in place of the one of the same name, and
    without those of ``drop``."""
    new = {definition.name: definition for definition in replace}
    dropped = {definition.name for definition in drop}
    definitions = tuple(new.pop(d.name, d) for d in model.definitions if d.name not in dropped)
    assert not new, f"{name} replaces definitions that {model.name} does not have: {sorted(new)}"
    return Model(name=name, definitions=definitions, axioms=model.axioms)


PTX_6_0 = _differing(
    PTX_8_7,
    "ptx-6.0",
    replace=(
        Definition(
            "morally_strong",
            ((same_thread | scope_incl) & (loc | (NOT_MEMORY * EVENTS) | (EVENTS * NOT_MEMORY))) - EVENTS.id(),
            "8.7",
            "'Two operations are said to be morally strong relative to each other if they satisfy all of the "
            "following conditions: 1. The operations are related in program order (i.e, they are both executed "
            "by the same thread), or each operation is strong and specifies a scope that includes the thread "
            "executing the other operation. 3. If both are memory operations, then they overlap completely.' "
            "PTX 6.0 has no proxies (no condition 2): overlap is on the physical location.",
        ),
        _before_proxies(release_pattern, "virtual address (aliases behave as different proxies, §8.6)", "physical location"),
        _before_proxies(acquire_pattern, "virtual address", "physical location"),
        _before_proxies(causality_order, "proxy-preserved base", "base"),
    ),
    drop=(proxy_fence_for, proxy_fence_into, generic_from, generic_to, tensormap_proxy_synchronization, tensormap_fenced, proxy_preserved_base_causality_order),
)
"""The proxy-less model of PTX ISA 6.0: ``PTX_8_7`` with morally strong without the same-proxy
condition and with overlap on the physical location, release and acquire patterns on a physical
location, causality order built on base causality order directly, and no proxy definitions."""
