"""``ptxspec litmus-gen``: enumerate families of litmus tests for the PTX memory model (§8).

Each family is a classic shape (the names of diy7 / herd7: MP, SB, LB, S, R, 2+2W, WRC, RWC, IRIW,
ISA2 and the coherence shapes CoRR, CoRW, CoWR, CoWW) crossed with the axes below, or one of the
asynchronous families (mbarrier, bulk and async copies, tcgen05; see "Asynchronous families") with
its toggles. A classic shape is crossed with

* an **order** for its memory operations (§8.4, §9.7.10 ``ld``/``st``):
  ``weak`` (``ld.weak``/``st.weak``), ``rlx.S`` (every access ``.relaxed.S``), ``rel-acq.S``
  (a write that follows another access in its thread is ``st.release.S``, a read that precedes
  another access is ``ld.acquire.S``; the other accesses ``.relaxed.S``), where ``S`` is the scope
  ``cta``, ``cluster``, ``gpu`` or ``sys``;
* a **separator** between consecutive accesses of a thread: ``po`` (nothing: program order),
  ``fence.sc.S`` or ``fence.acq_rel.S`` (§9.7.13.4, same scope as the accesses), ``bar.cta``
  (``bar.cta.sync 0``, §9.7.13.1; only for two-access-per-thread shapes placed in one CTA), or
  ``bar.cluster`` (``barrier.cluster.arrive`` then ``barrier.cluster.wait``, §9.7.13.3; the same
  shapes placed in one cluster: ``same-cta`` or ``same-cluster``);
* a **placement** of the threads (§2.2): ``same-cta`` (one CTA), ``same-cluster`` (one CTA each,
  all in cluster 0), ``diff-cta`` (one CTA each, launched without clusters), ``diff-gpu`` (one
  GPU each);
* optionally ``rmw``: every write is an ``atom.exch`` (§9.7.13.5) with the write's order
  (``release`` for a released write, ``relaxed`` otherwise; not crossed with ``weak``, atom has no
  ``.weak``).

Three further axes add tests without renaming any of the crossing above:

* **Fence scope** (§8.7, §8.9.3): with ``rlx.S`` and ``rel-acq.S`` (not ``rmw``), a fence may
  carry a scope ``T`` other than the accesses' ``S`` -- each of the three others, narrower or
  wider. The name shows it: ``SB+rlx.gpu+fence.sc.cta+diff-cta`` is ``.relaxed.gpu`` accesses
  separated by ``fence.sc.cta``, in two CTAs. §8.7: two operations are morally strong only if
  "each operation is strong and specifies a scope that includes the thread executing the other
  operation", and §8.9.3 orders only "morally strong fence.sc operations": a fence too narrow for
  the other thread does not take part, whatever the accesses' scope.
* **Mixed orders** (§8.8): the threads of one test take different orders, one token per thread in
  thread order joined by ``_`` and one scope for every non-weak thread:
  ``MP+rel-acq_rlx.gpu+po+diff-cta`` is a releasing writer (P0 ``rel-acq``) with a relaxed reader
  (P1 ``rlx``), ``MP+weak_rel-acq.gpu+po+diff-cta`` a weak writer with an acquiring reader. A
  thread's token is ``weak``, ``rlx`` or ``rel-acq`` (the latter only where it differs from
  ``rlx``: a thread with a write after, or a read before, another access); combinations where
  every thread has the same token are the uniform orders above and are not repeated. Crossed with
  the scope ``gpu``, the separator ``po`` and every placement (§8.8: a release pattern needs a
  release operation or a fence before the write; an acquire pattern an acquire operation or a
  fence after the read -- each side alone does not synchronize).
* **Proxies** (§8.2.2, §8.6): beside ``CoWR-alias`` and ``MP-alias`` (a read through a generic
  alias ``xa`` of ``x``), the shapes ``CoWR-P`` and ``MP-P`` for ``P`` = ``surface``,
  ``texture``, ``constant`` read ``x`` through an alias of that proxy (``xs @ surface aliases x``
  read by ``suld.weak``, ``xt`` by ``tld.weak``, ``xc`` by ``cold.weak``: the opcodes of the
  herd7/Dat3M dialect, which take no order, hence ``.weak``). Their separators are ``po`` and
  each proxy fence ``fence.proxy.K``, ``K`` in ``alias``, ``surface``, ``texture``, ``constant``
  (§9.7.13.4: "The .proxykind qualifier indicates a bi-directional proxy ordering established
  between the memory accesses done between the generic proxy and the proxy specified by
  .proxykind"; §8.6: "Proxy fences are required to synchronize memory operations across
  different proxies"). The kinds ``surface``, ``texture`` and ``constant`` are not in the
  ``.proxykind`` list of PTX ISA 8.7 (which names ``.alias`` and ``.async``); they are those of
  the litmus dialect and of the NVlabs mixed-proxy model, which both engines implement (see
  ``memory_model/ptx.py``, ``proxy_fence_for``). A fence of the wrong kind is a control: it
  must not help.

**Names.** ``SHAPE[+rmw]+ORDER+SEPARATOR+PLACEMENT``, e.g. ``MP+rel-acq.gpu+po+diff-cta`` or
``SB+rlx.sys+fence.sc.sys+diff-gpu``; the characters are ``[A-Za-z0-9.+_-]``, so the name is also
the file name (``NAME.litmus``). ``weak`` has no scope; a fence carries its own
(``MP+weak+po+same-cta``, ``SB+weak+fence.sc.gpu+diff-cta``). ``ORDER`` of a mixed-order test is
``T0_T1[_T2...].S`` (``.S`` omitted when every token is ``weak``, which is then uniform).
Single-thread shapes (``CoWW``, ``CoWR-alias``, ``CoWR-P``) have the one placement ``same-cta``.

**Asynchronous families** (PTX ISA 8.7 §9.7.13.15 mbarrier, §9.7.9.25 cp.async and
cp.async.bulk, §9.7.16.6.4 the canonical tcgen05 patterns). Each is one template -- a producer
that starts or publishes something, a consumer that waits for it and reads -- whose optional or
choosable instructions (*slots*) are toggled, "with and without each fence or wait". Names are
``FAMILY[+CONSUMER]+TOKENS+PLACEMENT``: ``CONSUMER`` is ``one-thread`` (the issuing thread consumes)
or ``two-threads`` (another thread of the same CTA consumes, after ``bar.cta.sync 0``; the
``mbarrier.init`` comes before it), for the families that have both; ``TOKENS`` are the filled
slots in program order, the producer's then the consumer's, each the instruction without its
``mbarrier.``/``tcgen05.``/``cp.async.`` prefix and without state space and type (``po`` when no
slot is filled); ``PLACEMENT`` is ``same-cta`` or (``MP-mbarrier`` only) ``same-cluster``. Token
spellings: ``arrive.SEM.S`` is ``mbarrier.arrive.SEM.S`` on ``bar``, ``arrive.expect_tx.SEM.S``
its ``.expect_tx`` form with txCount the bytes the family moves (16 for a bulk or tensor copy,
whose size is a multiple of 16; 4 for a ``.b32``/``.u32`` st.async or red.async), ``try_wait.SEM.S`` is ``mbarrier.try_wait.parity.SEM.S
r1, bar, 0`` (the wait loop replaced by the condition ``r1 == 1``, as in
``tests/litmus/manual``), ``fence.acq_rel.S`` and ``fence.proxy.K`` the fences,
``before_thread_sync``/``after_thread_sync`` the ``tcgen05.fence::`` forms, ``commit``
``tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 bar``, ``commit_group``,
``wait_group.N`` and ``wait_all`` the ``cp.async`` group instructions. Each family declares, from
the manual, the elements *required* for its stale outcome to be forbidden
(:attr:`AsyncFamily.requirements`); the rule "forbidden iff every required element is present"
is checked against both engines by ``tests/test_litmus_gen.py``.

* ``MP-mbarrier`` (§9.7.13.15.13 arrive, §9.7.13.15.16 test_wait/try_wait and its Examples 1 and
  4): P0 ``st.weak x, 1`` then ``arrive.{release|relaxed}.S``, optionally preceded (relaxed only)
  by ``fence.acq_rel.S``; P1 (which initializes ``bar`` with count 1) ``try_wait.{acquire|
  relaxed}.S``, optionally followed (relaxed only) by ``fence.acq_rel.S``, then ``ld.weak r2, x``;
  ``exists (P1:r1 == 1 /\\ P1:r2 == 0)``. ``S`` is ``cta`` or ``cluster`` for every operation.
  ``same-cta``: both threads in CTA 0, meeting at ``bar.cta.sync 0`` after the init;
  ``same-cluster``: CTAs 0 and 1 of cluster 0, meeting at ``barrier.cluster.arrive`` /
  ``barrier.cluster.wait``, P0 arriving remotely (``.shared::cluster``). Required: *release* (a
  release arrive, or a fence before the relaxed one: §8.8 release pattern; ".relaxed ... does not
  provide any memory ordering semantics and visibility guarantees"), *acquire* (an acquire wait,
  or a fence after the relaxed one: §8.8 acquire pattern), *scope* (``same-cta``, or ``S`` =
  ``cluster``: §8.7, a ``.cta`` operation does not include a thread of another CTA, so it is not
  morally strong with it). 36 variants.
* ``TMA-load`` (§9.7.9.25.4.1 cp.async.bulk, §9.7.13.15.5-6 tx-count and phase completion):
  ``arrive.expect_tx.release.cta`` or plain ``arrive.release.cta`` on ``bar`` (count 1), then
  ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes s, g, 16, bar`` (``g`` = 1);
  the consumer ``try_wait.{acquire|relaxed}.cta`` (the relaxed one optionally followed by
  ``fence.acq_rel.cta``) and ``ld.weak r2, s``: ``exists (r1 == 1 /\\ r2 == 0)``. Required:
  *expect_tx* (without it the arrive completes the phase before the copy's complete-tx) and
  *acquire* (the complete-tx "has .release semantics at .cluster scope"; the wait must acquire).
  12 variants.
* ``bulk-copy-source`` (§9.7.9.25.2 the async proxy, §9.7.13.4 ``fence.proxy.async``, §8.6): the
  producer arrives with ``.expect_tx``, writes ``st.weak src, 1``, then (slot) ``fence.proxy.async``,
  or the controls ``fence.proxy.alias`` (another proxy kind) and ``fence.acq_rel.cta`` (no proxy
  fence), or nothing, then ``cp.async.bulk.shared::cluster.shared::cta...  dst, src, 16, bar``; the
  consumer ``try_wait.{acquire|relaxed}.cta`` and ``ld.weak r2, dst``. Required:
  *fence.proxy.async* ("fence.proxy.async is used to synchronize memory between the generic proxy
  and the async proxy") and *acquire*. 16 variants.
* ``tcgen05-mma-ld`` (§9.7.16.6.4.2 Example 2, §9.7.16.6.4.4): ``tcgen05.mma.cta_group::1.kind::i8
  d, a, b, 0`` (D = 2 * 3), then ``commit`` or not; the consumer ``try_wait.{relaxed|acquire}.cluster``
  (only after a commit) or not, ``after_thread_sync`` or not, then ``tcgen05.ld...  r2, d``;
  ``exists ([r1 == 1 /\\] r2 != 6)``. Required: *commit-wait* (a commit and a wait on its
  mbarrier: "For the completion of the asynchronous tcgen05.mma, tcgen05.commit is used") and
  *after_thread_sync* ("As tcgen05.ld is an asynchronous operation, the instruction
  tcgen05.fence::after_thread_sync is needed"); the wait's ``.acquire`` is not required (the
  manual's pattern waits ``.relaxed.cluster``). 16 variants.
* ``tcgen05-cp-mma`` (§9.7.16.6.4.3): T0 ``tcgen05.cp.cta_group::1.128x256b t, s`` (``s`` = 2),
  ``before_thread_sync`` or not, ``arrive.{relaxed|release}.cluster``; T1
  ``try_wait.{relaxed|acquire}.cluster``, ``after_thread_sync`` or not, ``tcgen05.mma d, t, b, 0``:
  ``exists (P1:r1 == 1 /\\ d != 6)``. Required: *before_thread_sync* and *after_thread_sync*; the
  arrive's and wait's semantics are not. 16 variants.
* ``cp-async`` (§9.7.9.25.3.1-3): ``cp.async.ca.shared.global s, g, 4``, ``commit_group`` or not,
  then ``wait_group.0``, ``wait_group.1``, ``wait_all`` or nothing; the consumer reads ``ld.weak
  r0, s`` (``two-threads``: the issuer ends with ``bar.cta.sync 0``, the reader starts with it):
  ``exists (r0 == 0)``. Required: *completed*: ``wait_all`` ("equivalent to commit_group;
  wait_group 0"), or ``commit_group`` then ``wait_group.0`` (wait_group waits until "only N or
  fewer of the most recent cp.async-groups are pending and all the prior cp.async-groups committed
  by the executing threads are complete": an uncommitted copy is in no group, and with N = 1 the
  one group may stay pending). 16 variants.
* ``mbarrier-init-cluster`` (§9.7.13.4 ``fence.mbarrier_init``, §9.7.13.3): P0 (CTA 0)
  ``mbarrier.init`` of ``bar`` (initially 5), then (slot) ``fence.mbarrier_init.release.cluster``,
  ``fence.acq_rel.cluster``, ``fence.release.sync_restrict::shared::cta.cluster`` (token
  ``fence.release.sync_restrict_shared_cta.cluster``: names spell ``::`` as ``_``), the control
  ``fence.acq_rel.cta``, or nothing, then ``barrier.cluster.arrive.relaxed`` or
  ``barrier.cluster.arrive`` and the wait; P1 (CTA 1 of the cluster) waits at the cluster barrier
  and arrives on ``bar`` through ``.shared::cluster``: ``exists (bar == 4194309)`` (the state right
  after the init: P1's arrive came first). Required: *init-published* (a release cluster arrive,
  or one of the three cluster-scope fences that order the init before a relaxed one). 10 variants.
* ``MP-sync-restrict`` (§9.7.13.4 ``.sync_restrict``, the manual's "Release/Acquire local shared
  memory via generic proxy" examples): P1 (CTA 1) ``st.weak`` of ``x`` (``data.shared``:
  ``.shared::cta``, read back through ``.shared::cluster``; ``data.global``: ``.global``), then
  (slot) ``fence.release.sync_restrict::shared::cta.cluster`` (token
  ``fence.release.sync_restrict_shared_cta.cluster``), ``fence.release.cluster`` or nothing, then
  ``mbarrier.arrive.relaxed.cluster`` on P0's ``bar``; P0 (CTA 0) ``try_wait.relaxed.cluster``,
  then (slot) ``fence.acquire.sync_restrict::shared::cluster.cluster`` (token
  ``fence.acquire.sync_restrict_shared_cluster.cluster``),
  ``fence.acquire.cluster`` or nothing, and reads ``x``. Required: *release* and *acquire* (a
  fence on each side; a restricted one only covers ``data.shared``). 18 variants.
* ``st-async`` (§9.7.9.12, §8.9.1.1): P1 (CTA 1) ``st.weak.shared::cluster y, 1`` then
  ``st.async...mbarrier::complete_tx::bytes.b32 x, 1, bar`` on P0's ``bar`` (CTA 0, initialized
  with ``arrive.expect_tx``); P0 ``try_wait.{acquire|relaxed}.cluster`` (the relaxed one optionally
  followed by ``fence.acq_rel.cluster``) and reads ``x`` (``read.x``) or ``y`` (``read.y``).
  Required: *read.x* (the complete-tx "does not transitively establish ordering with respect to
  prior instructions from the issuing thread") and *acquire*. 6 variants.
* ``wgmma`` (§9.7.15.4, §9.7.15.7): ``st.weak.shared::cta a, 5``, a slot (``fence.proxy.async``,
  the control ``fence.acq_rel.cta``, or nothing), ``wgmma.fence``, ``wgmma.mma_async r1, a, b, 0``
  (``b`` = 3), ``wgmma.commit_group``, a slot (``wait_group.0``, ``wait_group.1``, nothing), then
  ``st.weak a, 7`` and ``wgmma.wait_group 0``: ``exists (P0:r1 != 15)``. Required:
  *fence.proxy.async* and *wait_group.0* (with N = 1 the one group may still be reading). 9
  variants.
* ``bulk-group`` (§9.7.9.25.6): P0 ``cp.async.bulk.global.shared::cta.bulk_group g, s, 16``
  (``s`` = 1), ``cp.async.bulk.commit_group`` or not, ``cp.async.bulk.wait_group 0``,
  ``wait_group.read 0`` or nothing, then ``st.release.gpu f, 1``; P1 (another CTA)
  ``ld.acquire.gpu`` of ``f`` and reads ``g``. Required: *commit* and *wait* (``.read`` waits only
  for the reads of the sources). 6 variants.
* ``red-async`` (§9.7.13.7): the ``.relaxed.cluster`` form (``same-cluster``, as
  ``tests/litmus/manual/red-async.litmus``): P0 (CTA 0)
  ``red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 c, 3, bar`` on
  P1's ``c`` = 5 (CTA 1), P1 initializes
  ``bar`` and arrives ``arrive.expect_tx.release.cta`` (txCount 4) or plain ``arrive.release.cta``,
  then ``try_wait.{acquire|relaxed}.cluster`` (the relaxed one optionally followed by
  ``fence.acq_rel.cluster``) and reads ``c``: ``exists (P1:r1 == 1 /\\ P1:r2 != 8)``; the
  ``.release.gpu`` form (``diff-cta``): P0 ``st.weak x, 1`` then ``red.async.release.gpu.global.add.u32
  f, 1``, P1 ``ld.{acquire|relaxed}.gpu r0, f`` (the relaxed one optionally followed by
  ``fence.acq_rel.gpu``) and ``ld.weak r1, x``. Tokens ``red.async.relaxed.cluster`` /
  ``red.async.release.gpu``, ``ld.SEM.gpu``. Required: *expect_tx* (the ``.relaxed`` form) and
  *acquire* (the complete-tx "has .release semantics at .cluster scope"; the ``.release`` form "is a
  strong memory operation with .release semantics"). 9 variants.
* ``bulk-reduce`` (§9.7.9.25.4.2, §9.7.9.25.2, §9.7.9.25.6): P0 ``st.weak s, 2``, then (slot)
  ``fence.proxy.async`` or nothing, then ``cp.reduce.async.bulk...add.u32`` of ``s`` into a
  destination that holds 5, size 16: token ``reduce.async.bulk.mbarrier``
  (``.shared::cluster.shared::cta.mbarrier::complete_tx::bytes`` into ``d`` of CTA 1 of the
  cluster, whose P1 arrives with ``.expect_tx`` 16, waits ``try_wait.{acquire|relaxed}.cluster``
  or not, and reads ``d``; ``same-cluster``) or ``reduce.async.bulk.bulk_group``
  (``.global.shared::cta.bulk_group`` into ``g``, then ``cp.async.bulk.commit_group``,
  ``wait_group.0``, ``wait_group.read.0`` or nothing, ``st.release.gpu f, 1``; P1 in another CTA
  acquires ``f`` and reads ``g``; ``diff-cta``): ``exists ([r1 == 1 /\\] r2 != 7)``. Required:
  *fence.proxy.async* (the reduction reads its source in the async proxy), *wait* (a wait on the
  phase, or ``wait_group 0``: "must use the async-group or mbarrier-based completion mechanism")
  and *acquire* (a wait on the phase is ``.acquire``). 12 variants.
* ``cp-async-mbarrier-arrive`` (§9.7.13.15.15, §9.7.13.15.16, §8.9.1.1): ``cp.async.ca.shared.global
  s, g, 4`` (token ``ca``) with ``cp.async.mbarrier.arrive.shared::cta.b64 bar`` (token
  ``mbarrier.arrive``) or its ``.noinc`` form before it, after it, or neither; without ``.noinc``
  (and without the instruction) the thread also arrives with ``arrive.release.cta`` and ``bar``
  counts that one arrival (Example 1), with ``.noinc`` the count 1 is the asynchronous arrive-on;
  the consumer ``try_wait.{acquire|relaxed}.cta`` or no wait, then ``ld.weak r2, s``: ``exists
  ([r1 == 1 /\\] r2 == 0)``. ``one-thread`` or ``two-threads``. Required: *arrive-after-copy* (the
  arrive-on is triggered "upon the completion of all prior cp.async operations") and *acquire* (an
  ``.acquire`` wait makes "all cp.async operations requested prior to cp.async.mbarrier.arrive"
  visible). 30 variants.
* ``bar-red`` (§9.7.13.1, §8.9.4): P0 ``st.weak x, 1`` then (slot) ``bar.red.popc.u32 r0, 0, 1``,
  ``bar.red.and.pred``, ``bar.red.or.pred`` (token ``bar.red.OP``) or nothing; P1 the same
  reduction with predicate 0, then ``ld.weak r1, x``; ``same-cta`` or ``diff-cta``. The outcome is
  a disjunction: P1 misses the write, or a thread's result is not the manual's (over the CTA's
  threads: ``.popc`` 1, ``.and`` 0, ``.or`` 1 in one CTA; each thread's own predicate in two):
  ``exists (P0:r0 != E0 \\/ P1:r0 != E1 \\/ P1:r1 == 0)`` (``exists (P1:r1 == 0)`` without the
  barrier). Required: *barrier* ("bar{.cta}.red ... synchronizes with a bar{.cta}.sync or
  bar{.cta}.red operation executed on the same barrier") and *same-cta* (each CTA has its own
  barriers). 8 variants.
* ``tensor-map-update`` (§9.7.9.26, §9.7.13.4, §9.7.9.25.5.2): P0
  ``tensormap.replace.tile.global_address.global.b1024.b64 tmap, y`` (``tmap=&x`` initially), then
  (slot) ``fence.proxy.tensormap::generic.release.{cta|gpu}`` (token ``release.S``); the consumer
  (P0 itself, ``one-thread``/``same-cta``, or P1 of another CTA after P0's ``st.relaxed.gpu f, 1``
  and its ``ld.relaxed.gpu r0, f``, ``two-threads``/``diff-cta``) (slot)
  ``fence.proxy.tensormap::generic.acquire.{cta|gpu} tmap, 128`` or the acquire of another
  tensor map ``omap`` (``acquire.S``, ``acquire.gpu.other``), then a tensor copy of ``tmap`` into
  ``s`` completed on ``bar`` (arrive.expect_tx 16), an acquire wait and ``ld.weak r2, s``:
  ``exists ([r0 == 1 /\\] r1 == 1 /\\ r2 == 1)`` (the old tensor). Required: *release-fence*,
  *acquire-fence* (naming ``tmap``) and *scope* (across CTAs both ``.gpu``). 24 variants.

**Not generated.** ``barrier.cluster`` in threads of different clusters (the model, rightly,
gives a cluster barrier no effect across clusters: each thread would wait only for itself), and
``barrier.cluster.arrive.relaxed`` (§9.7.13.3: ".relaxed ... specifies that no memory ordering
and visibility guarantees are provided for the memory accesses performed prior to
barrier.cluster.arrive"; the model gives it that meaning -- ``barrier_synchronization`` in
``ptxspec.memory_model.ptx`` -- and ``tests/litmus/manual/cluster-barrier-*`` test it, but no
family generates it yet).

**Condition.** Each test asks ``exists`` for the shape's relaxed outcome (diy7's final condition: the
outcome Sequential Consistency forbids), so herd's ``Ok`` reads *allowed* and ``No`` *forbidden*.

Generation is pure and deterministic: the same arguments give the same tests, in the same order,
with the same bytes (the AST of ``memory_model/litmus.py`` printed by its ``format_test``).
"""

from __future__ import annotations

import csv
import io
import itertools
import random
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import attrs
import click

from ptxspec.conformance import campaign_engine
from ptxspec.memory_model.litmus import (
    AliasDecl,
    AsyncArrive,
    AsyncCopy,
    AsyncGroup,
    AsyncStore,
    Atomic,
    BarrierOp,
    BulkCopy,
    Fence,
    Immediate,
    Instruction,
    Load,
    LocationInit,
    LitmusTest,
    MbarrierOp,
    ProxyFence,
    Register,
    RegisterInit,
    Store,
    TensorCopy,
    TensormapOp,
    Tcgen05Op,
    ThreadDecl,
    WgmmaOp,
    format_test,
)
from ptxspec.memory_model.program import And, Compare, Condition, Constant, LocationTerm, Or, RegisterTerm
from ptxspec.spec.errors import Location, PtxSpecError

# ---- shapes ---------------------------------------------------------------------------------------------


@attrs.frozen
class W:
    """A write of ``value`` to ``loc``."""

    loc: str
    value: int


@attrs.frozen
class R:
    """A read of ``loc`` into register ``reg`` (``via``: read through this alias of ``loc``, an
    alias of proxy ``proxy``, §8.2.2/§8.6)."""

    loc: str
    reg: str
    via: str | None = None
    proxy: str = "generic"


@attrs.frozen
class Shape:
    name: str
    threads: tuple[tuple[W | R, ...], ...]
    outcome: tuple[tuple[str, int], ...]
    """The relaxed outcome: ``("P1:r0", 1)`` for a register, ``("x", 2)`` for a final location value."""
    comment: str


def _shape(name: str, threads, outcome, comment: str) -> Shape:
    return Shape(name, tuple(tuple(t) for t in threads), tuple(outcome), comment)


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        _shape(
            "MP",
            [[W("x", 1), W("y", 1)], [R("y", "r0"), R("x", "r1")]],
            [("P1:r0", 1), ("P1:r1", 0)],
            "Message passing: the reader sees the flag y but not the data x.",
        ),
        _shape(
            "SB",
            [[W("x", 1), R("y", "r0")], [W("y", 1), R("x", "r0")]],
            [("P0:r0", 0), ("P1:r0", 0)],
            "Store buffering: both reads miss the other thread's write.",
        ),
        _shape(
            "LB",
            [[R("x", "r0"), W("y", 1)], [R("y", "r0"), W("x", 1)]],
            [("P0:r0", 1), ("P1:r0", 1)],
            "Load buffering: each read sees the write program-ordered after the other read.",
        ),
        _shape(
            "S",
            [[W("x", 2), W("y", 1)], [R("y", "r0"), W("x", 1)]],
            [("P1:r0", 1), ("x", 2)],
            "S: the reader sees y but its write of x is coherence-before P0's earlier write.",
        ),
        _shape(
            "R",
            [[W("x", 1), W("y", 1)], [W("y", 2), R("x", "r0")]],
            [("y", 2), ("P1:r0", 0)],
            "R: P1's write of y is coherence-after P0's, yet P1 misses P0's earlier write of x.",
        ),
        _shape(
            "2+2W",
            [[W("x", 1), W("y", 2)], [W("y", 1), W("x", 2)]],
            [("x", 1), ("y", 1)],
            "2+2W: both second writes are coherence-before the other thread's first write.",
        ),
        _shape(
            "WRC",
            [[W("x", 1)], [R("x", "r0"), W("y", 1)], [R("y", "r0"), R("x", "r1")]],
            [("P1:r0", 1), ("P2:r0", 1), ("P2:r1", 0)],
            "Write-to-read causality: P2 sees y (written after P1 saw x) but not x.",
        ),
        _shape(
            "RWC",
            [[W("x", 1)], [R("x", "r0"), R("y", "r1")], [W("y", 1), R("x", "r0")]],
            [("P1:r0", 1), ("P1:r1", 0), ("P2:r0", 0)],
            "Read-to-write causality: P1 sees x then misses y; P2 writes y then misses x.",
        ),
        _shape(
            "IRIW",
            [[W("x", 1)], [R("x", "r0"), R("y", "r1")], [R("y", "r0"), R("x", "r1")], [W("y", 1)]],
            [("P1:r0", 1), ("P1:r1", 0), ("P2:r0", 1), ("P2:r1", 0)],
            "Independent reads of independent writes: the two readers see the writes in opposite orders.",
        ),
        _shape(
            "ISA2",
            [[W("x", 1), W("y", 1)], [R("y", "r0"), W("z", 1)], [R("z", "r0"), R("x", "r1")]],
            [("P1:r0", 1), ("P2:r0", 1), ("P2:r1", 0)],
            "ISA2: message passing through a chain of two flags y and z.",
        ),
        _shape(
            "CoRR",
            [[W("x", 1)], [R("x", "r0"), R("x", "r1")]],
            [("P1:r0", 1), ("P1:r1", 0)],
            "Coherence of read-read: the second read sees an older value than the first.",
        ),
        _shape(
            "CoRW",
            [[R("x", "r0"), W("x", 1)], [W("x", 2)]],
            [("P0:r0", 2), ("x", 2)],
            "Coherence of read-write: the read sees a write coherence-after the thread's later write.",
        ),
        _shape(
            "CoWR",
            [[W("x", 1), R("x", "r0")], [W("x", 2)]],
            [("P0:r0", 2), ("x", 1)],
            "Coherence of write-read: the read sees a write coherence-before the thread's earlier write.",
        ),
        _shape("CoWW", [[W("x", 1), W("x", 2)]], [("x", 1)], "Coherence of write-write: the later write of the thread is coherence-before the earlier one."),
    )
}
"""The classic shapes, in the order they are generated."""

PROXY_ALIASES = {"surface": "xs", "texture": "xt", "constant": "xc"}
"""The non-generic proxies of the litmus dialect and the name of the alias of ``x`` through each."""
LOAD_OPCODE = {"generic": "ld", "surface": "suld", "texture": "tld", "constant": "cold"}
"""The load of each proxy in the litmus dialect (``memory_model/litmus.py``)."""

ALIAS_SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        _shape(
            "CoWR-alias",
            [[W("x", 1), R("x", "r0", via="xa")]],
            [("P0:r0", 0)],
            "A write of x, then a read of the same memory through the generic alias xa (§8.2.2).",
        ),
        _shape(
            "MP-alias",
            [[W("x", 1), W("y", 1)], [R("y", "r0"), R("x", "r1", via="xa")]],
            [("P1:r0", 1), ("P1:r1", 0)],
            "MP whose reader reads the data through the generic alias xa of x (§8.2.2).",
        ),
        *(
            _shape(
                f"CoWR-{proxy}",
                [[W("x", 1), R("x", "r0", via=alias, proxy=proxy)]],
                [("P0:r0", 0)],
                f"A write of x, then a read of the same memory through the {proxy} alias {alias} ({LOAD_OPCODE[proxy]}, §8.6).",
            )
            for proxy, alias in PROXY_ALIASES.items()
        ),
        *(
            _shape(
                f"MP-{proxy}",
                [[W("x", 1), W("y", 1)], [R("y", "r0"), R("x", "r1", via=alias, proxy=proxy)]],
                [("P1:r0", 1), ("P1:r1", 0)],
                f"MP whose reader reads the data through the {proxy} alias {alias} of x ({LOAD_OPCODE[proxy]}, §8.6).",
            )
            for proxy, alias in PROXY_ALIASES.items()
        ),
    )
}
"""Shapes with a read through a virtual alias (§8.2.2) or another proxy (§8.6)."""

SCOPES = ("cta", "cluster", "gpu", "sys")
ORDERS = ("weak", "rlx", "rel-acq")
SEPARATORS = ("po", "fence.sc", "fence.acq_rel", "bar.cta")
PROXY_FENCES = ("fence.proxy.alias", "fence.proxy.surface", "fence.proxy.texture", "fence.proxy.constant")
PLACEMENTS = ("same-cta", "same-cluster", "diff-cta", "diff-gpu")

# ---- one test -------------------------------------------------------------------------------------------


@attrs.frozen
class Variant:
    """One point of the crossing (see the module docstring).

    ``order`` is one order for every thread (``weak``, ``rlx``, ``rel-acq``) or, for a mixed-order
    test, one token per thread joined by ``_`` (``rel-acq_rlx``). ``scope`` is the accesses' scope
    (for ``weak``: the fences'). ``fence_scope``: the fences' scope where it differs from ``scope``
    (None: the same).
    """

    shape: str
    order: str
    scope: str | None
    separator: str
    placement: str
    rmw: bool = False
    fence_scope: str | None = None

    @property
    def name(self) -> str:
        order = self.order if all(t == "weak" for t in self.order.split("_")) else f"{self.order}.{self.scope}"
        sep = self.separator
        if sep in ("fence.sc", "fence.acq_rel"):
            sep = f"{sep}.{self.fence_scope or self.scope}"
        parts = [self.shape] + (["rmw"] if self.rmw else []) + [order, sep, self.placement]
        return "+".join(parts)

    @property
    def family(self) -> str:
        return self.shape + ("+rmw" if self.rmw else "")

    @property
    def variant(self) -> str:
        return self.name[len(self.family) + 1 :]

    def thread_order(self, index: int) -> str:
        """The order token of thread ``index``."""
        tokens = self.order.split("_")
        return tokens[index] if len(tokens) > 1 else tokens[0]


def _placement(placement: str, index: int) -> ThreadDecl:
    if placement == "same-cta":
        return ThreadDecl(index, f"P{index}", 0, 0)
    if placement == "same-cluster":
        return ThreadDecl(index, f"P{index}", index, 0, 0)
    if placement == "diff-cta":
        return ThreadDecl(index, f"P{index}", index, 0)
    return ThreadDecl(index, f"P{index}", 0, index)


def _access(access: W | R, position: int, length: int, v: Variant, order_token: str, next_reg: list[int]):
    """One access as an instruction, with the order its thread's token gives it at its place in the
    thread (§8.8: a write after another access releases, a read before another access acquires)."""
    released = isinstance(access, W) and position > 0
    acquiring = isinstance(access, R) and position < length - 1
    if order_token == "weak":
        order, scope = "weak", None
    elif order_token == "rel-acq" and released:
        order, scope = "release", v.scope
    elif order_token == "rel-acq" and acquiring:
        order, scope = "acquire", v.scope
    else:
        order, scope = "relaxed", v.scope
    if isinstance(access, R):
        if access.proxy != "generic":
            # suld/tld/cold take no memory order in the dialect: weak (§8.4 "weak" by default).
            order, scope = "weak", None
        return Load(LOAD_OPCODE[access.proxy], access.proxy, order, scope, Register(access.reg), access.via or access.loc)
    if v.rmw:
        assert scope is not None, "an atom.exch write is never weak (generate_variants skips rmw+weak)"
        reg = f"r{next_reg[0]}"
        next_reg[0] += 1
        return Atomic("atom", "generic", order, scope, "exch", Register(reg), access.loc, (Immediate(access.value),))
    return Store("st", "generic", order, scope, access.loc, Immediate(access.value))


def _separator(v: Variant) -> tuple:
    """The instructions between two consecutive accesses of a thread."""
    if v.separator in ("fence.sc", "fence.acq_rel"):
        fence_scope = v.fence_scope or v.scope
        assert fence_scope is not None, "a fence separator always has a scope (generate_variants gives one)"
        return (Fence(v.separator.split(".", 1)[1], fence_scope),)
    if v.separator == "bar.cta":
        return (BarrierOp("cta", "sync", (Immediate(0),)),)
    if v.separator == "bar.cluster":
        # §9.7.13.3: "barrier.cluster.wait guarantees that when it completes, memory accesses
        # (except async operations) requested, in program order, prior to the preceding
        # barrier.cluster.arrive by all threads in the cluster are complete and visible to the
        # executing thread." Default semantics: arrive .release, wait .acquire.
        return (BarrierOp("cluster", "arrive", ()), BarrierOp("cluster", "wait", ()))
    if v.separator.startswith("fence.proxy."):
        return (ProxyFence(v.separator.rsplit(".", 1)[1]),)
    return ()


def _term(text: str):
    if ":" in text:
        thread, reg = text.split(":")
        return RegisterTerm(int(thread[1:]), reg)
    return LocationTerm(text)


def build(shape: Shape | AsyncFamily, v: Variant | AsyncVariant) -> LitmusTest:
    """The litmus test of ``shape`` under variant ``v`` (as an AST)."""
    if isinstance(shape, AsyncFamily):
        assert isinstance(v, AsyncVariant), "an asynchronous family's variants are AsyncVariant"
        return build_async(shape, v)
    assert isinstance(v, Variant), "a shape's variants are Variant"
    locations = sorted({a.loc for t in shape.threads for a in t})
    init: list = [LocationInit(loc, 0) for loc in locations]
    init += sorted({AliasDecl(a.via, a.proxy, a.loc) for t in shape.threads for a in t if isinstance(a, R) and a.via}, key=lambda d: d.name)
    code = []
    for index, accesses in enumerate(shape.threads):
        regs = sorted({a.reg for a in accesses if isinstance(a, R)}, key=lambda r: int(r[1:]))
        next_reg = [1 + max((int(r[1:]) for r in regs), default=-1)]
        instructions: list[Instruction] = []
        for position, access in enumerate(accesses):
            if position > 0:
                instructions.extend(_separator(v))
            instructions.append(_access(access, position, len(accesses), v, v.thread_order(index), next_reg))
        regs += [f"r{n}" for n in range(1 + max((int(r[1:]) for r in regs), default=-1), next_reg[0])]
        init += [RegisterInit(index, reg, 0) for reg in regs]
        code.append(tuple(instructions))
    compares = tuple(Compare("==", _term(t), Constant(value)) for t, value in shape.outcome)
    formula = compares[0] if len(compares) == 1 else And(compares)
    threads = tuple(_placement(v.placement, i) for i in range(len(shape.threads)))
    comments = (shape.comment, f"Generated by ptxspec litmus-gen: family {v.family}, variant {v.variant}.")
    return LitmusTest("PTX", v.name, comments, tuple(init), threads, tuple(code), Condition("exists", formula))


# ---- the asynchronous families (§9.7.13.15, §9.7.9.25, §9.7.16.6.4) --------------------------------------


@attrs.frozen
class AsyncVariant:
    """One variant of an asynchronous family (see the module docstring, "Asynchronous families").

    ``slots`` are the template's optional or choosable instructions in program order (first the
    producer's, then the consumer's), each ``(slot, token)``; an empty token leaves the slot out.
    ``consumer``: ``one-thread`` (the issuing thread consumes), ``two-threads`` (another thread of
    the CTA does), or empty for a family with one fixed arrangement.
    """

    shape: str
    slots: tuple[tuple[str, str], ...]
    placement: str
    consumer: str = ""

    def __getitem__(self, slot: str) -> str:
        return dict(self.slots)[slot]

    @property
    def tokens(self) -> tuple[str, ...]:
        """The tokens of the filled slots, in program order (``po`` when none is filled)."""
        return tuple(token for _, token in self.slots if token) or ("po",)

    @property
    def name(self) -> str:
        return "+".join((self.shape,) + ((self.consumer,) if self.consumer else ()) + self.tokens + (self.placement,))

    @property
    def family(self) -> str:
        return self.shape

    @property
    def variant(self) -> str:
        return self.name[len(self.family) + 1 :]

    @property
    def threads(self) -> int:
        return 1 if self.consumer == "one-thread" else 2


@attrs.frozen
class Requirement:
    """An element that the manual requires for a family's stale outcome to be forbidden."""

    name: str
    section: str
    why: str
    """The manual's reason, in its words where it has them."""
    holds: Callable[[AsyncVariant], bool] = attrs.field(eq=False, repr=False)


@attrs.frozen
class AsyncFamily:
    """A template with toggles (a family of :class:`AsyncVariant`) and the manual's rule for it: the
    stale outcome is forbidden iff every one of ``requirements`` holds."""

    name: str
    comment: str
    requirements: tuple[Requirement, ...]
    enumerate: Callable[[], Iterator[AsyncVariant]] = attrs.field(eq=False, repr=False)
    template: Callable[[AsyncVariant], tuple] = attrs.field(eq=False, repr=False)
    """``(locations, code, outcome)``: initial values ``{name: value}``, the instructions per
    thread, and the stale outcome as ``(term, op, value)`` triples (all of them: a conjunction) or
    an :class:`AnyOf` of triples (any of them)."""

    def missing(self, v: AsyncVariant) -> tuple[str, ...]:
        """The requirements that ``v`` lacks (empty: the rule says forbidden)."""
        return tuple(r.name for r in self.requirements if not r.holds(v))

    def expected(self, v: AsyncVariant) -> str:
        """The verdict the manual's rule gives ``v``: ``forbidden`` iff every requirement holds."""
        return "allowed" if self.missing(v) else "forbidden"


@attrs.frozen
class AnyOf:
    """A stale outcome that is the disjunction of its ``(term, op, value)`` triples (``bar-red``:
    the reader missed the write, or some thread's reduction result is wrong)."""

    terms: tuple[tuple[str, str, int], ...]


_SHARED = ("shared::cta", "b64")
_BAR_SYNC = BarrierOp("cta", "sync", (Immediate(0),))
_CLUSTER_SYNC = (BarrierOp("cluster", "arrive", ()), BarrierOp("cluster", "wait", ()))
CONSUMERS = ("one-thread", "two-threads")


def _mb_init(count: int = 1) -> MbarrierOp:
    return MbarrierOp("init", None, None, None, "bar", (Immediate(count),), _SHARED)


def _mb_arrive(token: str, space: str = "shared::cta", count: int = 4) -> MbarrierOp:
    """``arrive[.expect_tx].SEM.S`` (a token) as ``mbarrier.arrive...`` on ``bar`` (txCount ``count``)."""
    parts = token.split(".")
    expect = parts[1] == "expect_tx"
    sem, scope = parts[-2:]
    operands = (Immediate(count),) if expect else ()
    return MbarrierOp("arrive", sem, scope, None, "bar", operands, (("expect_tx",) if expect else ()) + (space, "b64"))


def _mb_wait(token: str, reg: str = "r1") -> MbarrierOp:
    """``try_wait.SEM.S`` (a token) as ``mbarrier.try_wait.parity.SEM.S`` on phase 0 of ``bar``."""
    _, sem, scope = token.split(".")
    return MbarrierOp("try_wait", sem, scope, Register(reg), "bar", (Immediate(0),), ("parity",) + _SHARED)


def _fence_token(token: str) -> tuple:
    """The instruction of a fence token (``fence.acq_rel.S``, ``fence.proxy.K``), none for ``""``."""
    if not token:
        return ()
    if token.startswith("fence.proxy."):
        return (ProxyFence(token.rsplit(".", 1)[1]),)
    _, sem, scope = token.split(".")
    return (Fence(sem, scope),)


def _tc(op: str, dest: str | None = None, addresses: tuple[str, ...] = (), values: tuple = (), quals: tuple[str, ...] = ()) -> Tcgen05Op:
    return Tcgen05Op(op, Register(dest) if dest else None, addresses, values, quals)


_TC_LD_QUALS = ("sync", "aligned", "32x32b", "x1", "b32")
_MMA_QUALS = ("cta_group::1", "kind::i8")
_COMMIT_QUALS = ("cta_group::1", "mbarrier::arrive::one", "b64")


def _consumer_split(v: AsyncVariant, producer: list, consumer: list) -> list[list]:
    """One thread (the producer's code, then the consumer's) or two threads that meet at
    ``bar.cta.sync 0`` after the producer's ``mbarrier.init`` (its first instruction)."""
    if v.threads == 1:
        return [producer + consumer]
    return [producer[:1] + [_BAR_SYNC] + producer[1:], [_BAR_SYNC] + consumer]


# MP-mbarrier (§9.7.13.15.16 Examples 1, 4; §8.7; §8.8)


def _mp_mbarrier_variants() -> Iterator[AsyncVariant]:
    for scope in ("cta", "cluster"):
        for release in ("release", "relaxed", "fence"):
            for acquire in ("acquire", "relaxed", "fence"):
                for placement in ("same-cta", "same-cluster"):
                    fence = f"fence.acq_rel.{scope}"
                    yield AsyncVariant(
                        "MP-mbarrier",
                        (
                            ("release-fence", fence if release == "fence" else ""),
                            ("arrive", f"arrive.{'release' if release == 'release' else 'relaxed'}.{scope}"),
                            ("wait", f"try_wait.{'acquire' if acquire == 'acquire' else 'relaxed'}.{scope}"),
                            ("acquire-fence", fence if acquire == "fence" else ""),
                        ),
                        placement,
                    )


def _mp_mbarrier(v: AsyncVariant):
    remote = v.placement == "same-cluster"
    meet = list(_CLUSTER_SYNC) if remote else [_BAR_SYNC]
    producer: list[Instruction] = [*meet, Store("st", "generic", "weak", None, "x", Immediate(1))]
    producer += [*_fence_token(v["release-fence"]), _mb_arrive(v["arrive"], "shared::cluster" if remote else "shared::cta")]
    consumer = [_mb_init(), *meet, _mb_wait(v["wait"]), *_fence_token(v["acquire-fence"])]
    consumer.append(Load("ld", "generic", "weak", None, Register("r2"), "x"))
    return {"x": 0, "bar": 0}, [producer, consumer], [("P1:r1", "==", 1), ("P1:r2", "==", 0)]


def _release_side(v: AsyncVariant) -> bool:
    return v["arrive"].startswith("arrive.release") or bool(v["release-fence"])


def _acquire_side(v: AsyncVariant) -> bool:
    return v["wait"].startswith("try_wait.acquire") or bool(dict(v.slots).get("acquire-fence"))


def _scope_covers(v: AsyncVariant) -> bool:
    return v.placement == "same-cta" or v["arrive"].endswith(".cluster")


# TMA-load (§9.7.9.25.4.1, §9.7.13.15.5, §9.7.13.15.16)


def _tma_load_variants() -> Iterator[AsyncVariant]:
    for consumer in CONSUMERS:
        for arrive in ("arrive.expect_tx.release.cta", "arrive.release.cta"):
            for wait, fence in (("try_wait.acquire.cta", ""), ("try_wait.relaxed.cta", ""), ("try_wait.relaxed.cta", "fence.acq_rel.cta")):
                yield AsyncVariant("TMA-load", (("arrive", arrive), ("wait", wait), ("acquire-fence", fence)), "same-cta", consumer)


def _tma_load(v: AsyncVariant):
    copy = BulkCopy("s", "g", Immediate(16), "bar", ("shared::cluster", "global", "mbarrier::complete_tx::bytes"))
    producer = [_mb_init(), _mb_arrive(v["arrive"], count=16), copy]
    consumer = [_mb_wait(v["wait"]), *_fence_token(v["acquire-fence"]), Load("ld", "generic", "weak", None, Register("r2"), "s")]
    who = f"P{v.threads - 1}"
    return {"g": 1, "s": 0, "bar": 0}, _consumer_split(v, producer, consumer), [(f"{who}:r1", "==", 1), (f"{who}:r2", "==", 0)]


# bulk-copy-source (§9.7.9.25.2, §9.7.13.4 fence.proxy.async, §8.6)


def _bulk_copy_source_variants() -> Iterator[AsyncVariant]:
    for consumer in CONSUMERS:
        for fence in ("", "fence.proxy.async", "fence.proxy.alias", "fence.acq_rel.cta"):
            for wait in ("try_wait.acquire.cta", "try_wait.relaxed.cta"):
                yield AsyncVariant("bulk-copy-source", (("proxy-fence", fence), ("wait", wait)), "same-cta", consumer)


def _bulk_copy_source(v: AsyncVariant):
    copy = BulkCopy("dst", "src", Immediate(16), "bar", ("shared::cluster", "shared::cta", "mbarrier::complete_tx::bytes"))
    producer = [_mb_init(), _mb_arrive("arrive.expect_tx.release.cta", count=16), Store("st", "generic", "weak", None, "src", Immediate(1))]
    producer += [*_fence_token(v["proxy-fence"]), copy]
    consumer = [_mb_wait(v["wait"]), Load("ld", "generic", "weak", None, Register("r2"), "dst")]
    who = f"P{v.threads - 1}"
    return {"src": 0, "dst": 0, "bar": 0}, _consumer_split(v, producer, consumer), [(f"{who}:r1", "==", 1), (f"{who}:r2", "==", 0)]


# tcgen05-mma-ld (§9.7.16.6.4.2 Example 2, §9.7.16.6.4.4 the second Example 1)


def _tcgen05_mma_ld_variants() -> Iterator[AsyncVariant]:
    for consumer in CONSUMERS:
        for commit, wait in (("", ""), ("commit", ""), ("commit", "try_wait.relaxed.cluster"), ("commit", "try_wait.acquire.cluster")):
            for after in ("", "after_thread_sync"):
                yield AsyncVariant("tcgen05-mma-ld", (("commit", commit), ("wait", wait), ("after", after)), "same-cta", consumer)


def _tcgen05_mma_ld(v: AsyncVariant):
    producer: list[Instruction] = [_mb_init(), _tc("mma", None, ("d", "a", "b"), (Immediate(0),), _MMA_QUALS)]
    if v["commit"]:
        producer.append(_tc("commit", None, ("bar",), (), _COMMIT_QUALS))
    consumer: list[Instruction] = [_mb_wait(v["wait"])] if v["wait"] else []
    consumer += [_tc("fence::after_thread_sync")] if v["after"] else []
    consumer.append(_tc("ld", "r2", ("d",), (), _TC_LD_QUALS))
    who = f"P{v.threads - 1}"
    outcome = ([(f"{who}:r1", "==", 1)] if v["wait"] else []) + [(f"{who}:r2", "!=", 6)]
    return {"a": 2, "b": 3, "d": 0, "bar": 0}, _consumer_split(v, producer, consumer), outcome


# tcgen05-cp-mma (§9.7.16.6.4.3)


def _tcgen05_cp_mma_variants() -> Iterator[AsyncVariant]:
    for arrive in ("arrive.relaxed.cluster", "arrive.release.cluster"):
        for wait in ("try_wait.relaxed.cluster", "try_wait.acquire.cluster"):
            for before in ("", "before_thread_sync"):
                for after in ("", "after_thread_sync"):
                    slots = (("before", before), ("arrive", arrive), ("wait", wait), ("after", after))
                    yield AsyncVariant("tcgen05-cp-mma", slots, "same-cta")


def _tcgen05_cp_mma(v: AsyncVariant):
    producer = [_mb_init(), _tc("cp", None, ("t", "s"), (), ("cta_group::1", "128x256b"))]
    producer += [_tc("fence::before_thread_sync")] if v["before"] else []
    producer.append(_mb_arrive(v["arrive"]))
    consumer = [_mb_wait(v["wait"])] + ([_tc("fence::after_thread_sync")] if v["after"] else [])
    consumer.append(_tc("mma", None, ("d", "t", "b"), (Immediate(0),), _MMA_QUALS))
    return {"s": 2, "t": 0, "b": 3, "d": 0, "bar": 0}, _consumer_split(v, producer, consumer), [("P1:r1", "==", 1), ("d", "!=", 6)]


# cp-async (§9.7.9.25.3.1-3)


def _cp_async_variants() -> Iterator[AsyncVariant]:
    for consumer in CONSUMERS:
        for commit in ("", "commit_group"):
            for wait in ("", "wait_group.0", "wait_group.1", "wait_all"):
                yield AsyncVariant("cp-async", (("commit", commit), ("wait", wait)), "same-cta", consumer)


def _cp_async(v: AsyncVariant):
    producer: list = [AsyncCopy("s", "g", Immediate(4), ("ca", "shared", "global"))]
    producer += [AsyncGroup("commit_group")] if v["commit"] else []
    if v["wait"] == "wait_all":
        producer.append(AsyncGroup("wait_all"))
    elif v["wait"]:
        producer.append(AsyncGroup("wait_group", int(v["wait"].split(".")[1])))
    read = Load("ld", "generic", "weak", None, Register("r0"), "s")
    code = [producer + [read]] if v.threads == 1 else [producer + [_BAR_SYNC], [_BAR_SYNC, read]]
    return {"g": 1, "s": 0}, code, [(f"P{v.threads - 1}:r0", "==", 0)]


# mbarrier-init-cluster (§9.7.13.4 fence.mbarrier_init, §9.7.13.3 barrier.cluster.arrive.relaxed)

#: 4194309: the state of bar right after mbarrier.init with count 1 (semantics/mbarrier.py).
_INIT_STATE = 4194309


def _mbarrier_init_cluster_variants() -> Iterator[AsyncVariant]:
    fences = ("", "fence.mbarrier_init.release.cluster", "fence.acq_rel.cluster", "fence.release.sync_restrict_shared_cta.cluster", "fence.acq_rel.cta")
    for fence in fences:
        for arrive in ("barrier.cluster.arrive.relaxed", "barrier.cluster.arrive"):
            yield AsyncVariant("mbarrier-init-cluster", (("fence", fence), ("cluster-arrive", arrive)), "same-cluster")


#: The fence tokens of the restricted families (names keep to [A-Za-z0-9.+_-], so ``::`` is spelled
#: ``_``) and their instructions.
_RESTRICTED_FENCES = {
    "fence.mbarrier_init.release.cluster": Fence("release", "cluster", restrict="mbarrier_init"),
    "fence.release.sync_restrict_shared_cta.cluster": Fence("release", "cluster", restrict="shared::cta"),
    "fence.acquire.sync_restrict_shared_cluster.cluster": Fence("acquire", "cluster", restrict="shared::cluster"),
    "fence.acq_rel.cluster": Fence("acq_rel", "cluster"),
    "fence.acq_rel.cta": Fence("acq_rel", "cta"),
    "fence.release.cluster": Fence("release", "cluster"),
    "fence.acquire.cluster": Fence("acquire", "cluster"),
}


def _restricted_fence(token: str) -> tuple:
    """A fence token of the restricted families as its instruction (none for ``""``)."""
    return (_RESTRICTED_FENCES[token],) if token else ()


def _mbarrier_init_cluster(v: AsyncVariant):
    arrive = BarrierOp("cluster", "arrive", (), qualifiers=("relaxed",) if v["cluster-arrive"].endswith(".relaxed") else ())
    wait = BarrierOp("cluster", "wait", ())
    owner = [_mb_init(), *_restricted_fence(v["fence"]), arrive, wait]
    remote = [BarrierOp("cluster", "arrive", ()), wait, MbarrierOp("arrive", "release", "cluster", None, "bar", (), ("shared::cluster", "b64"))]
    return {"bar": 5}, [owner, remote], [("bar", "==", _INIT_STATE)]


def _init_published(v: AsyncVariant) -> bool:
    publishing = ("fence.mbarrier_init.release.cluster", "fence.acq_rel.cluster", "fence.release.sync_restrict_shared_cta.cluster")
    return v["cluster-arrive"] == "barrier.cluster.arrive" or v["fence"] in publishing


# MP-sync-restrict (§9.7.13.4 .sync_restrict, its examples "Release/Acquire local shared memory via generic proxy")


def _mp_sync_restrict_variants() -> Iterator[AsyncVariant]:
    releases = ("", "fence.release.sync_restrict_shared_cta.cluster", "fence.release.cluster")
    acquires = ("", "fence.acquire.sync_restrict_shared_cluster.cluster", "fence.acquire.cluster")
    for space in ("shared", "global"):
        for release in releases:
            for acquire in acquires:
                yield AsyncVariant("MP-sync-restrict", (("data", f"data.{space}"), ("release-fence", release), ("acquire-fence", acquire)), "same-cluster")


def _mp_sync_restrict(v: AsyncVariant):
    shared = v["data"] == "data.shared"
    writer_space, reader_space = ("shared::cta", "shared::cluster") if shared else ("global", "global")
    meet = list(_CLUSTER_SYNC)
    writer = [*meet, Store("st", "generic", "weak", None, "x", Immediate(1), (writer_space,)), *_restricted_fence(v["release-fence"])]
    writer.append(MbarrierOp("arrive", "relaxed", "cluster", None, "bar", (), ("shared::cluster", "b64")))
    owner = [_mb_init(), *meet, _mb_wait("try_wait.relaxed.cluster"), *_restricted_fence(v["acquire-fence"])]
    owner.append(Load("ld", "generic", "weak", None, Register("r2"), "x", (reader_space,)))
    return {"x": 0, "bar": 0}, [owner, writer], [("P0:r1", "==", 1), ("P0:r2", "==", 0)]


def _restricted_covers(fence: str, v: AsyncVariant) -> bool:
    return bool(fence) and ("sync_restrict" not in fence or v["data"] == "data.shared")


# st-async (§9.7.9.12, §8.9.1.1)


def _st_async_variants() -> Iterator[AsyncVariant]:
    for read in ("read.x", "read.y"):
        for wait, fence in (("try_wait.acquire.cluster", ""), ("try_wait.relaxed.cluster", ""), ("try_wait.relaxed.cluster", "fence.acq_rel.cluster")):
            yield AsyncVariant("st-async", (("wait", wait), ("acquire-fence", fence), ("read", read)), "same-cluster")


def _st_async(v: AsyncVariant):
    meet = list(_CLUSTER_SYNC)
    store = AsyncStore("st", "weak", "cluster", "x", Immediate(1), "bar", None, ("shared::cluster", "mbarrier::complete_tx::bytes", "b32"))
    writer = [*meet, Store("st", "generic", "weak", None, "y", Immediate(1), ("shared::cluster",)), store]
    owner = [_mb_init(), _mb_arrive("arrive.expect_tx.release.cta"), *meet, _mb_wait(v["wait"]), *_fence_token(v["acquire-fence"])]
    owner.append(Load("ld", "generic", "weak", None, Register("r2"), v["read"].split(".")[1]))
    return {"x": 0, "y": 0, "bar": 0}, [owner, writer], [("P0:r1", "==", 1), ("P0:r2", "==", 0)]


# wgmma (§9.7.15.4, §9.7.15.7)


_WGMMA_QUALS = ("sync", "aligned", "m64n8k16", "f32", "f16", "f16")


def _wgmma_variants() -> Iterator[AsyncVariant]:
    for fence in ("", "fence.proxy.async", "fence.acq_rel.cta"):
        for wait in ("", "wait_group.0", "wait_group.1"):
            yield AsyncVariant("wgmma", (("proxy-fence", fence), ("wait", wait)), "same-cta")


def _wgmma(v: AsyncVariant):
    """A generic write of A (a = 5), a fence or not, the MMA of A by B (b = 3), committed; a wait or
    not, then A overwritten with 7. The accumulator is 15 only if the MMA read the first write and
    not the later one."""
    code: list[Instruction] = [Store("st", "generic", "weak", None, "a", Immediate(5), ("shared::cta",)), *_fence_token(v["proxy-fence"])]
    code += [WgmmaOp("fence"), WgmmaOp("mma_async", Register("r1"), ("a", "b"), Immediate(0), _WGMMA_QUALS), AsyncGroup("commit_group", kind="wgmma")]
    if v["wait"]:
        code.append(AsyncGroup("wait_group", int(v["wait"].split(".")[1]), kind="wgmma"))
    code.append(Store("st", "generic", "weak", None, "a", Immediate(7), ("shared::cta",)))
    code.append(AsyncGroup("wait_group", 0, kind="wgmma"))
    return {"a": 0, "b": 3}, [code], [("P0:r1", "!=", 15)]


# bulk-group (§9.7.9.25.6)


def _bulk_group_variants() -> Iterator[AsyncVariant]:
    for commit in ("", "commit_group"):
        for wait in ("", "wait_group.0", "wait_group.read.0"):
            yield AsyncVariant("bulk-group", (("commit", commit), ("wait", wait)), "diff-cta")


def _bulk_group(v: AsyncVariant):
    copy = BulkCopy("g", "s", Immediate(16), None, ("global", "shared::cta", "bulk_group"))
    writer: list[Instruction] = [copy]
    if v["commit"]:
        writer.append(AsyncGroup("commit_group", kind="bulk"))
    if v["wait"]:
        writer.append(AsyncGroup("wait_group", 0, kind="bulk", read=".read." in v["wait"]))
    writer.append(Store("st", "generic", "release", "gpu", "f", Immediate(1)))
    reader = [Load("ld", "generic", "acquire", "gpu", Register("r0"), "f"), Load("ld", "generic", "weak", None, Register("r1"), "g")]
    return {"s": 1, "g": 0, "f": 0}, [writer, reader], [("P1:r0", "==", 1), ("P1:r1", "==", 0)]


# red-async (§9.7.13.7)


def _red_async_variants() -> Iterator[AsyncVariant]:
    waits = (("try_wait.acquire.cluster", ""), ("try_wait.relaxed.cluster", ""), ("try_wait.relaxed.cluster", "fence.acq_rel.cluster"))
    for arrive in ("arrive.expect_tx.release.cta", "arrive.release.cta"):
        for wait, fence in waits:
            slots = (("red", "red.async.relaxed.cluster"), ("arrive", arrive), ("wait", wait), ("acquire-fence", fence))
            yield AsyncVariant("red-async", slots, "same-cluster")
    for wait, fence in (("ld.acquire.gpu", ""), ("ld.relaxed.gpu", ""), ("ld.relaxed.gpu", "fence.acq_rel.gpu")):
        yield AsyncVariant("red-async", (("red", "red.async.release.gpu"), ("arrive", ""), ("wait", wait), ("acquire-fence", fence)), "diff-cta")


def _red_async(v: AsyncVariant):
    """``.relaxed.cluster`` form: P0 (CTA 0) adds 3 to P1's c = 5 (CTA 1) with red.async completing
    4 bytes on P1's bar, P1 waits for the phase and reads c (8 once the reduction is seen).
    ``.release.gpu`` form: P0 writes x and adds 1 to the flag f with red.async.release; P1 reads f
    and then x."""
    fence = list(_fence_token(v["acquire-fence"]))
    if v["red"] == "red.async.release.gpu":
        red = AsyncStore("red", "release", "gpu", "f", Immediate(1), None, "add", ("global", "u32"))
        writer = [Store("st", "generic", "weak", None, "x", Immediate(1)), red]
        order, scope = v["wait"].split(".")[1:]
        reader = [Load("ld", "generic", order, scope, Register("r0"), "f"), *fence, Load("ld", "generic", "weak", None, Register("r1"), "x")]
        return {"x": 0, "f": 0}, [writer, reader], [("P1:r0", "==", 1), ("P1:r1", "==", 0)]
    meet = list(_CLUSTER_SYNC)
    red = AsyncStore("red", "relaxed", "cluster", "c", Immediate(3), "bar", "add", ("shared::cluster", "mbarrier::complete_tx::bytes", "u32"))
    owner = [_mb_init(), _mb_arrive(v["arrive"]), *meet, _mb_wait(v["wait"]), *fence, Load("ld", "generic", "weak", None, Register("r2"), "c")]
    return {"c": 5, "bar": 0}, [[*meet, red], owner], [("P1:r1", "==", 1), ("P1:r2", "!=", 8)]


def _wait_acquires(v: AsyncVariant) -> bool:
    """The consumer's wait (an mbarrier wait or a load of the flag) is ``.acquire`` or is followed by a fence."""
    return ".acquire." in f".{v['wait']}." or bool(v["acquire-fence"])


# bulk-reduce (§9.7.9.25.4.2, §9.7.9.25.2, §9.7.9.25.6)


def _bulk_reduce_variants() -> Iterator[AsyncVariant]:
    for fence in ("", "fence.proxy.async"):
        for wait in ("try_wait.acquire.cluster", "try_wait.relaxed.cluster", ""):
            yield AsyncVariant("bulk-reduce", (("proxy-fence", fence), ("reduce", "reduce.async.bulk.mbarrier"), ("wait", wait)), "same-cluster")
    for fence in ("", "fence.proxy.async"):
        for wait in ("wait_group.0", "wait_group.read.0", ""):
            yield AsyncVariant("bulk-reduce", (("proxy-fence", fence), ("reduce", "reduce.async.bulk.bulk_group"), ("wait", wait)), "diff-cta")


def _bulk_reduce(v: AsyncVariant):
    """P0 writes the source s = 2 with a generic st, then adds it into d = 5 (or g = 5) with
    cp.reduce.async.bulk (async proxy). ``.mbarrier::complete_tx::bytes`` form: d in CTA 1 of the
    cluster, whose P1 expects the 16 bytes on bar, waits and reads d; ``.bulk_group`` form: g in
    global memory, P0 commits the group, waits and releases a flag f that P1 acquires before
    reading g. The result is 7 once the reduction read the written source and is seen."""
    source = [Store("st", "generic", "weak", None, "s", Immediate(2)), *_fence_token(v["proxy-fence"])]
    if v["reduce"] == "reduce.async.bulk.bulk_group":
        reduce = BulkCopy("g", "s", Immediate(16), None, ("global", "shared::cta", "bulk_group", "add", "u32"), reduce_op="add")
        writer: list[Instruction] = [*source, reduce, AsyncGroup("commit_group", kind="bulk")]
        if v["wait"]:
            writer.append(AsyncGroup("wait_group", 0, kind="bulk", read=".read." in v["wait"]))
        writer.append(Store("st", "generic", "release", "gpu", "f", Immediate(1)))
        reader = [Load("ld", "generic", "acquire", "gpu", Register("r0"), "f"), Load("ld", "generic", "weak", None, Register("r1"), "g")]
        return {"s": 0, "g": 5, "f": 0}, [writer, reader], [("P1:r0", "==", 1), ("P1:r1", "!=", 7)]
    meet = list(_CLUSTER_SYNC)
    reduce = BulkCopy("d", "s", Immediate(16), "bar", ("shared::cluster", "shared::cta", "mbarrier::complete_tx::bytes", "add", "u32"), reduce_op="add")
    owner: list[Instruction] = [_mb_init(), _mb_arrive("arrive.expect_tx.release.cta", count=16), *meet]
    owner += [_mb_wait(v["wait"])] if v["wait"] else []
    owner.append(Load("ld", "generic", "weak", None, Register("r2"), "d"))
    outcome = ([("P1:r1", "==", 1)] if v["wait"] else []) + [("P1:r2", "!=", 7)]
    return {"s": 0, "d": 5, "bar": 0}, [[*meet, *source, reduce], owner], outcome


def _bulk_reduce_waited(v: AsyncVariant) -> bool:
    return v["wait"].startswith("try_wait.") or v["wait"] == "wait_group.0"


# cp-async-mbarrier-arrive (§9.7.13.15.15, §9.7.13.15.16, §8.9.1.1)

#: Where the cp.async.mbarrier.arrive is (``""``: none) and whether it is ``.noinc``. Without
#: ``.noinc`` (and without the instruction) the thread also arrives with ``mbarrier.arrive`` and the
#: object counts that one arrival (Example 1: "mbarrier.init must only account for arrive-on from
#: mbarrier.arrive"); with ``.noinc`` the object counts the asynchronous arrive-on, the only one.
_CP_ASYNC_ARRIVES = (
    ("", ""),
    ("after", "mbarrier.arrive"),
    ("before", "mbarrier.arrive"),
    ("after", "mbarrier.arrive.noinc"),
    ("before", "mbarrier.arrive.noinc"),
)


def _cp_async_mbarrier_arrive_variants() -> Iterator[AsyncVariant]:
    for consumer in CONSUMERS:
        for where, arrive in _CP_ASYNC_ARRIVES:
            plain = "" if arrive.endswith(".noinc") else "arrive.release.cta"
            for wait in ("try_wait.acquire.cta", "try_wait.relaxed.cta", ""):
                slots = (
                    ("arrive-before", arrive if where == "before" else ""),
                    ("copy", "ca"),
                    ("arrive-after", arrive if where == "after" else ""),
                    ("arrive", plain),
                    ("wait", wait),
                )
                yield AsyncVariant("cp-async-mbarrier-arrive", slots, "same-cta", consumer)


def _cp_async_arrive(token: str) -> list[Instruction]:
    if not token:
        return []
    noinc = token.endswith(".noinc")
    return [AsyncArrive("bar", noinc, (("noinc",) if noinc else ()) + _SHARED)]


def _cp_async_mbarrier_arrive(v: AsyncVariant):
    producer: list[Instruction] = [_mb_init(), *_cp_async_arrive(v["arrive-before"]), AsyncCopy("s", "g", Immediate(4), ("ca", "shared", "global"))]
    producer += _cp_async_arrive(v["arrive-after"])
    producer += [_mb_arrive(v["arrive"])] if v["arrive"] else []
    consumer: list[Instruction] = [_mb_wait(v["wait"])] if v["wait"] else []
    consumer.append(Load("ld", "generic", "weak", None, Register("r2"), "s"))
    who = f"P{v.threads - 1}"
    outcome = ([(f"{who}:r1", "==", 1)] if v["wait"] else []) + [(f"{who}:r2", "==", 0)]
    return {"g": 1, "s": 0, "bar": 0}, _consumer_split(v, producer, consumer), outcome


# bar-red (§9.7.13.1, §8.9.4)

#: The predicates (P0 true, P1 false) and each reduction's result over both threads of one CTA and,
#: in two CTAs, over each thread alone (a CTA's barrier counts only its own threads).
_BAR_RED_PREDICATES = (1, 0)
_BAR_RED_RESULTS = {
    "popc": {"same-cta": (1, 1), "diff-cta": (1, 0)},
    "and": {"same-cta": (0, 0), "diff-cta": (1, 0)},
    "or": {"same-cta": (1, 1), "diff-cta": (1, 0)},
}


def _bar_red_variants() -> Iterator[AsyncVariant]:
    for placement in ("same-cta", "diff-cta"):
        for barrier in ("", "bar.red.popc", "bar.red.and", "bar.red.or"):
            yield AsyncVariant("bar-red", (("barrier", barrier),), placement)


def _bar_red(v: AsyncVariant):
    """P0 writes x, P1 reads it, each after (before) ``bar.red.OP`` on barrier 0 or with no barrier
    at all. The outcome: P1 misses the write, or a thread's reduction result is not the manual's."""
    write, read = Store("st", "generic", "weak", None, "x", Immediate(1)), Load("ld", "generic", "weak", None, Register("r1"), "x")
    if not v["barrier"]:
        return {"x": 0}, [[write], [read]], [("P1:r1", "==", 0)]
    op = v["barrier"].rsplit(".", 1)[1]
    quals = (op, "u32" if op == "popc" else "pred")
    reds = [BarrierOp("cta", "red", (Immediate(0),), Register("r0"), Immediate(p), op, quals) for p in _BAR_RED_PREDICATES]
    results = _BAR_RED_RESULTS[op][v.placement]
    outcome = AnyOf((("P0:r0", "!=", results[0]), ("P1:r0", "!=", results[1]), ("P1:r1", "==", 0)))
    return {"x": 0}, [[write, reds[0]], [reds[1], read]], outcome


# tensor-map-update (§9.7.9.26, §9.7.13.4 fence.proxy.tensormap::generic, §9.7.9.25.5.2)

_TENSOR_MAP_FENCES = {
    "release.cta": ProxyFence("tensormap::generic", sem="release", scope="cta"),
    "release.gpu": ProxyFence("tensormap::generic", sem="release", scope="gpu"),
    "acquire.cta": ProxyFence("tensormap::generic", sem="acquire", scope="cta", address="tmap"),
    "acquire.gpu": ProxyFence("tensormap::generic", sem="acquire", scope="gpu", address="tmap"),
    "acquire.gpu.other": ProxyFence("tensormap::generic", sem="acquire", scope="gpu", address="omap"),
}


def _tensor_map_update_variants() -> Iterator[AsyncVariant]:
    for consumer, placement in (("one-thread", "same-cta"), ("two-threads", "diff-cta")):
        for release in ("", "release.cta", "release.gpu"):
            for acquire in ("", "acquire.cta", "acquire.gpu", "acquire.gpu.other"):
                yield AsyncVariant("tensor-map-update", (("release-fence", release), ("acquire-fence", acquire)), placement, consumer)


def _tensor_map_update(v: AsyncVariant):
    replace = TensormapOp("replace", "tmap", "y", ("tile", "global_address", "global", "b1024", "b64"))
    copy = TensorCopy("tmap", (Immediate(0),), "s", "bar", ("1d", "shared::cluster", "global", "tile", "mbarrier::complete_tx::bytes"))
    release = [_TENSOR_MAP_FENCES[v["release-fence"]]] if v["release-fence"] else []
    acquire = [_TENSOR_MAP_FENCES[v["acquire-fence"]]] if v["acquire-fence"] else []
    use = [*acquire, _mb_init(), _mb_arrive("arrive.expect_tx.release.cta", count=16), copy, _mb_wait("try_wait.acquire.cta")]
    use.append(Load("ld", "generic", "weak", None, Register("r2"), "s"))
    locations = {"tmap": "&x", **({"omap": "&x"} if v["acquire-fence"].endswith(".other") else {}), "x": 1, "y": 2, "s": 0, "bar": 0}
    if v.threads == 2:
        locations["f"] = 0
    if v.threads == 1:
        return locations, [[replace, *release, *use]], [("P0:r1", "==", 1), ("P0:r2", "==", 1)]
    flag = Store("st", "generic", "relaxed", "gpu", "f", Immediate(1))
    seen = Load("ld", "generic", "relaxed", "gpu", Register("r0"), "f")
    return locations, [[replace, *release, flag], [seen, *use]], [("P1:r0", "==", 1), ("P1:r1", "==", 1), ("P1:r2", "==", 1)]


def _tensor_map_scopes_cover(v: AsyncVariant) -> bool:
    return v.threads == 1 or (v["release-fence"].endswith(".gpu") and v["acquire-fence"].startswith("acquire.gpu"))


ASYNC_FAMILIES: dict[str, AsyncFamily] = {
    f.name: f
    for f in (
        AsyncFamily(
            "MP-mbarrier",
            "Message passing through an mbarrier: P0 writes x and arrives on bar, P1 waits for phase 0 and reads x.",
            (
                Requirement(
                    "release",
                    "9.7.13.15.13, 8.8",
                    "a release arrive, or a fence before a relaxed arrive (a release pattern); .relaxed "
                    "'does not provide any memory ordering semantics and visibility guarantees'",
                    _release_side,
                ),
                Requirement(
                    "acquire",
                    "9.7.13.15.16, 8.8",
                    "an acquire wait, or a fence after a relaxed wait (an acquire pattern): 'when a test_wait or "
                    "try_wait operation with .acquire semantics returns True' the accesses before the release arrives are visible",
                    _acquire_side,
                ),
                Requirement(
                    "scope",
                    "8.7, 9.7.13.15.16 Example 4",
                    "morally strong: 'each operation is strong and specifies a scope that includes the thread executing "
                    "the other operation' (.cta does not include a thread of another CTA)",
                    _scope_covers,
                ),
            ),
            _mp_mbarrier_variants,
            _mp_mbarrier,
        ),
        AsyncFamily(
            "TMA-load",
            "A bulk copy g -> s whose completion is a complete-tx on bar; the consumer waits for phase 0 and reads s.",
            (
                Requirement(
                    "expect_tx",
                    "9.7.13.15.5, 9.7.13.15.6",
                    "the phase completes when 'the pending arrival count reaches zero' and 'the tx-count reaches zero': "
                    "without .expect_tx the arrive completes the phase before the copy",
                    lambda v: ".expect_tx." in v["arrive"],
                ),
                Requirement(
                    "acquire",
                    "9.7.9.25.4.1, 9.7.13.15.16, 8.8",
                    "the complete-tx 'has .release semantics at .cluster scope'; the wait must be .acquire or be followed by a fence",
                    _acquire_side,
                ),
            ),
            _tma_load_variants,
            _tma_load,
        ),
        AsyncFamily(
            "bulk-copy-source",
            "A generic write of src, then a bulk copy src -> dst (async proxy) completed on bar; the consumer waits and reads dst.",
            (
                Requirement(
                    "fence.proxy.async",
                    "9.7.13.4, 9.7.9.25.2, 8.6",
                    "'fence.proxy.async is used to synchronize memory between the generic proxy and the async proxy' "
                    "(a generic fence or a proxy fence of another kind does not)",
                    lambda v: v["proxy-fence"] == "fence.proxy.async",
                ),
                Requirement(
                    "acquire",
                    "9.7.13.15.16",
                    "an .acquire wait ('the .relaxed qualifier does not provide any memory ordering semantics and visibility guarantees')",
                    _acquire_side,
                ),
            ),
            _bulk_copy_source_variants,
            _bulk_copy_source,
        ),
        AsyncFamily(
            "tcgen05-mma-ld",
            "tcgen05.mma writes D = A * B = 6; tcgen05.commit arrives on bar when it completes; the consumer waits and reads D with tcgen05.ld.",
            (
                Requirement(
                    "commit-wait",
                    "9.7.16.6.4.2, 9.7.16.6.4.4, 9.7.16.12.1",
                    "'For the completion of the asynchronous tcgen05.mma, tcgen05.commit is used', and the consumer waits on "
                    "the mbarrier it arrives on (a wait is generated only after a commit: without one the phase never completes)",
                    lambda v: bool(v["commit"]) and bool(v["wait"]),
                ),
                Requirement(
                    "after_thread_sync",
                    "9.7.16.6.4.2",
                    "'As tcgen05.ld is an asynchronous operation, the instruction tcgen05.fence::after_thread_sync is needed'",
                    lambda v: bool(v["after"]),
                ),
            ),
            _tcgen05_mma_ld_variants,
            _tcgen05_mma_ld,
        ),
        AsyncFamily(
            "tcgen05-cp-mma",
            "T0 copies s = 2 into Tensor Memory t and arrives on bar; T1 waits and runs tcgen05.mma reading t: D = 6 once T1 saw the phase.",
            (
                Requirement(
                    "before_thread_sync",
                    "9.7.16.6.4.3",
                    "T0: tcgen05.cp; tcgen05.fence::before_thread_sync; mbarrier.arrive.relaxed.cluster ('proper synchronization between threads is needed')",
                    lambda v: bool(v["before"]),
                ),
                Requirement(
                    "after_thread_sync",
                    "9.7.16.6.4.3",
                    "T1: mbarrier.try_wait.relaxed.cluster; tcgen05.fence::after_thread_sync; tcgen05.mma",
                    lambda v: bool(v["after"]),
                ),
            ),
            _tcgen05_cp_mma_variants,
            _tcgen05_cp_mma,
        ),
        AsyncFamily(
            "cp-async",
            "cp.async copies g = 1 to s; the issuing thread (or another, after bar.cta.sync) reads s.",
            (
                Requirement(
                    "completed",
                    "9.7.9.25.3.3",
                    "cp.async.wait_all, or cp.async.commit_group then cp.async.wait_group 0: wait_group waits 'till only N or "
                    "fewer of the most recent cp.async-groups are pending and all the prior cp.async-groups committed ... are complete'",
                    lambda v: v["wait"] == "wait_all" or (v["commit"] == "commit_group" and v["wait"] == "wait_group.0"),
                ),
            ),
            _cp_async_variants,
            _cp_async,
        ),
        AsyncFamily(
            "mbarrier-init-cluster",
            "P0 (CTA 0) initializes bar and arrives at the cluster barrier; P1 (CTA 1) waits at it and arrives on P0's bar: bar ends at "
            "its initial state only if P1's arrive came first.",
            (
                Requirement(
                    "init-published",
                    "9.7.13.4, 9.7.13.3",
                    "a release cluster arrive, or before a relaxed one a fence that orders the init at cluster scope: "
                    "fence.mbarrier_init.release.cluster ('the synchronizing effect of the fence only applies to the prior "
                    "mbarrier.init operations'), fence.release.sync_restrict::shared::cta.cluster (the init is an operation "
                    "on a .shared::cta object) or a cluster fence; not a .cta fence",
                    _init_published,
                ),
            ),
            _mbarrier_init_cluster_variants,
            _mbarrier_init_cluster,
        ),
        AsyncFamily(
            "MP-sync-restrict",
            "P1 (CTA 1) writes x and arrives relaxed on P0's bar (CTA 0); P0 waits relaxed and reads x, each side with or without "
            "a release (acquire) fence, restricted to shared memory or not.",
            (
                Requirement(
                    "release",
                    "9.7.13.4, 8.8",
                    "a release fence before the relaxed arrive; '.sync_restrict::shared::cta ... the effect of the fence only "
                    "applies to operations performed on objects in .shared::cta state space'",
                    lambda v: _restricted_covers(v["release-fence"], v),
                ),
                Requirement(
                    "acquire",
                    "9.7.13.4, 8.8",
                    "an acquire fence after the relaxed wait; '.sync_restrict::shared::cluster ... only applies to operations "
                    "performed on objects in .shared::cluster state space'",
                    lambda v: _restricted_covers(v["acquire-fence"], v),
                ),
            ),
            _mp_sync_restrict_variants,
            _mp_sync_restrict,
        ),
        AsyncFamily(
            "st-async",
            "P1 (CTA 1) writes y with a weak st, then x with st.async completing on P0's bar (CTA 0); P0 waits for the phase and reads x or y.",
            (
                Requirement(
                    "read.x",
                    "8.9.1.1, 9.7.9.12",
                    "the complete-tx 'is only ordered with respect to the memory operations performed by the same asynchronous "
                    "instruction, and in particular it does not transitively establish ordering with respect to prior "
                    "instructions from the issuing thread': only the st.async's own write x is published",
                    lambda v: v["read"] == "read.x",
                ),
                Requirement(
                    "acquire",
                    "9.7.9.12, 9.7.13.15.16",
                    "the complete-tx 'has .release semantics at .cluster scope'; the wait must be .acquire or be followed by a fence",
                    _acquire_side,
                ),
            ),
            _st_async_variants,
            _st_async,
        ),
        AsyncFamily(
            "wgmma",
            "A generic write of A, wgmma.mma_async reading A and B in the async proxy, then A overwritten; the accumulator shows which A the MMA read.",
            (
                Requirement(
                    "fence.proxy.async",
                    "9.7.15, 9.7.15.4",
                    "'fence.proxy.async operation to make the generic proxy operations visible to the async proxy' before the MMA",
                    lambda v: v["proxy-fence"] == "fence.proxy.async",
                ),
                Requirement(
                    "wait_group.0",
                    "9.7.15.7.3",
                    "wgmma.wait_group waits 'until only N or fewer of the most recent wgmma-groups are pending': with N = 0 "
                    "before the overwrite the MMA has read A",
                    lambda v: v["wait"] == "wait_group.0",
                ),
            ),
            _wgmma_variants,
            _wgmma,
        ),
        AsyncFamily(
            "bulk-group",
            "P0 copies s = 1 to global g with cp.async.bulk (bulk async-group completion) and releases a flag; P1 acquires the flag and reads g.",
            (
                Requirement(
                    "commit",
                    "9.7.9.25.6.1",
                    "cp.async.bulk.commit_group batches the prior bulk copies into a bulk async-group (an uncommitted copy is in no group)",
                    lambda v: bool(v["commit"]),
                ),
                Requirement(
                    "wait",
                    "9.7.9.25.6.2",
                    "cp.async.bulk.wait_group 0 waits for the writes 'being made visible to the executing thread'; .read only for the reads of the sources",
                    lambda v: v["wait"] == "wait_group.0",
                ),
            ),
            _bulk_group_variants,
            _bulk_group,
        ),
        AsyncFamily(
            "red-async",
            "red.async: .relaxed.cluster into another CTA's shared memory, completed on its mbarrier (the owner waits and reads the "
            "counter), or .release.gpu to a global flag after a weak write of x (the reader reads the flag, then x).",
            (
                Requirement(
                    "expect_tx",
                    "9.7.13.7, 9.7.13.15.5, 9.7.13.15.6",
                    "the complete-tx is performed 'with completeCount equal to the amount of data stored in bytes'; the phase "
                    "completes when 'the pending arrival count reaches zero' and 'the tx-count reaches zero': without .expect_tx "
                    "the owner's arrive completes the phase before the reduction (the .release form has no mbarrier)",
                    lambda v: not v["arrive"].startswith("arrive.") or ".expect_tx." in v["arrive"],
                ),
                Requirement(
                    "acquire",
                    "9.7.13.7, 9.7.13.15.16, 8.8",
                    "'the complete-tx operation on the mbarrier has .release semantics at .cluster scope' (.relaxed form) and "
                    "'the reduction is a strong memory operation with .release semantics at the scope specified by .scope' "
                    "(.release form): the consumer's wait or load must be .acquire or be followed by a fence (an acquire pattern)",
                    _wait_acquires,
                ),
            ),
            _red_async_variants,
            _red_async,
        ),
        AsyncFamily(
            "bulk-reduce",
            "A generic write of the source s, then cp.reduce.async.bulk adding it into d (another CTA's shared memory, completed "
            "on its mbarrier) or g (global memory, a bulk async-group, then a release flag); the consumer waits and reads the sum.",
            (
                Requirement(
                    "fence.proxy.async",
                    "9.7.9.25.2, 9.7.13.4, 8.6",
                    "'cp{.reduce}.async.bulk operations are performed in the async proxy'; 'accessing the same memory location "
                    "across multiple proxies requires a cross-proxy fence. For the async proxy, fence.proxy.async should be used'",
                    lambda v: v["proxy-fence"] == "fence.proxy.async",
                ),
                Requirement(
                    "wait",
                    "9.7.9.25.2, 9.7.9.25.6.2",
                    "'the async-group or mbarrier-based completion mechanism must be used to wait for the cp{.reduce}.async.bulk "
                    "instructions to complete': a wait on the mbarrier phase, or cp.async.bulk.wait_group 0 ('.read' waits only "
                    "for the reads of the source)",
                    _bulk_reduce_waited,
                ),
                Requirement(
                    "acquire",
                    "9.7.9.25.4.2, 9.7.13.15.16",
                    "'the complete-tx operation on the mbarrier has .release semantics at .cluster scope'; a wait on it must be "
                    ".acquire ('the .relaxed qualifier does not provide any memory ordering semantics and visibility guarantees')",
                    lambda v: not v["wait"].startswith("try_wait.relaxed"),
                ),
            ),
            _bulk_reduce_variants,
            _bulk_reduce,
        ),
        AsyncFamily(
            "cp-async-mbarrier-arrive",
            "cp.async copies g = 1 to s, tracked (or not) by cp.async.mbarrier.arrive{.noinc} on bar; the issuing thread (or "
            "another, after bar.cta.sync) waits for phase 0 and reads s.",
            (
                Requirement(
                    "arrive-after-copy",
                    "9.7.13.15.15, 8.9.1.1",
                    "the arrive-on is triggered 'upon the completion of all prior cp.async operations initiated by the executing "
                    "thread': only a cp.async.mbarrier.arrive{.noinc} after the copy holds the phase until the copy completes",
                    lambda v: bool(v["arrive-after"]),
                ),
                Requirement(
                    "acquire",
                    "9.7.13.15.16",
                    "when a wait 'with acquire semantics returns True ... all cp.async operations requested prior to "
                    "cp.async.mbarrier.arrive ... are performed and made visible to the executing thread'; a .relaxed wait "
                    "gives no such guarantee, and without a wait nothing is observed",
                    lambda v: v["wait"].startswith("try_wait.acquire"),
                ),
            ),
            _cp_async_mbarrier_arrive_variants,
            _cp_async_mbarrier_arrive,
        ),
        AsyncFamily(
            "bar-red",
            "P0 writes x and reduces a true predicate with bar.red on barrier 0, P1 reduces a false one and reads x (or neither "
            "reduces): P1 misses the write, or a reduction result is not the manual's.",
            (
                Requirement(
                    "barrier",
                    "8.9.4, 9.7.13.1",
                    "'bar{.cta}.sync or bar{.cta}.red or bar{.cta}.arrive operation synchronizes with a bar{.cta}.sync or "
                    "bar{.cta}.red operation executed on the same barrier'; bar.red 'guarantees that when the barrier completes, "
                    "prior memory accesses requested by this thread are performed relative to all threads participating'",
                    lambda v: bool(v["barrier"]),
                ),
                Requirement(
                    "same-cta",
                    "9.7.13.1",
                    "'each CTA instance has sixteen barriers': threads of different CTAs do not take part in the same barrier "
                    "(each thread's reduction combines only its own CTA's predicates)",
                    lambda v: v.placement == "same-cta",
                ),
            ),
            _bar_red_variants,
            _bar_red,
        ),
        AsyncFamily(
            "tensor-map-update",
            "P0 points the tensor map tmap from x to y with tensormap.replace; the consumer (P0 itself, or P1 of another CTA after "
            "seeing P0's relaxed flag) copies the tensor tmap describes into s with cp.async.bulk.tensor and reads s: it copied the "
            "old tensor x.",
            (
                Requirement(
                    "release-fence",
                    "9.7.13.4, 9.7.9.26",
                    "tensormap.replace is 'a weak memory operation ... in the generic proxy' and the copy reads the map 'in the tensormap "
                    "proxy': the uni-directional proxy ordering 'establishes ordering between a prior memory access performed via the "
                    "from-proxykind and a subsequent memory access performed via the to-proxykind' (the manual's examples pair a "
                    "fence.proxy.tensormap::generic.release with the acquire one)",
                    lambda v: bool(v["release-fence"]),
                ),
                Requirement(
                    "acquire-fence",
                    "9.7.13.4",
                    "fence.proxy.tensormap::generic.acquire [addr], 128 'specify the memory range [addr, addr+size-1] on which the "
                    "ordering guarantees on the memory accesses across the proxies is to be provided': it must name tmap",
                    lambda v: v["acquire-fence"] in ("acquire.cta", "acquire.gpu"),
                ),
                Requirement(
                    "scope",
                    "9.7.13.4, 8.7",
                    "'The .release proxy fence can form a release sequence that synchronizes with an acquire sequence that contains "
                    "the .acquire proxy fence'; across CTAs each fence's scope must include the other thread (.gpu, not .cta)",
                    _tensor_map_scopes_cover,
                ),
            ),
            _tensor_map_update_variants,
            _tensor_map_update,
        ),
    )
}
"""The asynchronous families, in the order they are generated (after the classic and proxy shapes)."""


def _registers(code: list[Instruction]) -> list[str]:
    """The registers a thread's instructions write, in numbered order."""
    dests = (getattr(ins, "dest", None) for ins in code)
    regs = {dest.name for dest in dests if isinstance(dest, Register)}
    return sorted(regs, key=lambda r: int(r[1:]))


def build_async(family: AsyncFamily, v: AsyncVariant) -> LitmusTest:
    """The litmus test of the asynchronous family ``family`` under variant ``v`` (as an AST)."""
    locations, code, outcome = family.template(v)
    # A value "&x" is a tensor map that describes x (the dialect's pointer syntax).
    init: list = [LocationInit(name, None, value[1:]) if isinstance(value, str) else LocationInit(name, value) for name, value in locations.items()]
    for index, instructions in enumerate(code):
        init += [RegisterInit(index, reg, 0) for reg in _registers(instructions)]
    triples = outcome.terms if isinstance(outcome, AnyOf) else outcome
    compares = tuple(Compare(op, _term(t), Constant(value)) for t, op, value in triples)
    formula = compares[0] if len(compares) == 1 else (Or if isinstance(outcome, AnyOf) else And)(compares)
    threads = tuple(_placement(v.placement, i) for i in range(len(code)))
    comments = (family.comment, f"Generated by ptxspec litmus-gen: family {v.family}, variant {v.variant}.")
    return LitmusTest("PTX", v.name, comments, tuple(init), threads, tuple(tuple(c) for c in code), Condition("exists", formula))


# ---- the crossing ---------------------------------------------------------------------------------------


def _thread_tokens(accesses: tuple[W | R, ...]) -> tuple[str, ...]:
    """The order tokens that give a thread distinct instructions: ``rel-acq`` only where the thread
    has a write after another access or a read before one (else it is ``rlx``)."""
    releases = any(isinstance(a, W) and i > 0 for i, a in enumerate(accesses))
    acquires = any(isinstance(a, R) and i < len(accesses) - 1 for i, a in enumerate(accesses))
    return ("weak", "rlx", "rel-acq") if releases or acquires else ("weak", "rlx")


def mixed_orders(shape: Shape) -> Iterator[str]:
    """The mixed per-thread orders of ``shape`` (``_``-joined tokens), in a fixed order: every
    combination of the threads' distinct tokens except the three uniform orders."""
    per_thread = [_thread_tokens(t) for t in shape.threads]
    uniform = {tuple("weak" for _ in per_thread), tuple("rlx" for _ in per_thread), tuple("rel-acq" if "rel-acq" in tokens else "rlx" for tokens in per_thread)}
    for combination in itertools.product(*per_thread):
        if combination not in uniform:
            yield "_".join(combination)


def variants(shape: Shape | AsyncFamily) -> Iterator[Variant | AsyncVariant]:
    """Every variant of ``shape``, in a fixed order (see the module docstring for the crossing):
    first the base crossing, then the fence-scope axis, the mixed orders and ``bar.cluster``; an
    asynchronous family's toggles in the order its ``enumerate`` gives."""
    if isinstance(shape, AsyncFamily):
        yield from shape.enumerate()
        return
    threads = len(shape.threads)
    placements = PLACEMENTS if threads > 1 else ("same-cta",)
    two_each = all(len(t) == 2 for t in shape.threads)
    if shape.name in ALIAS_SHAPES:
        order, scope = ("rel-acq", "gpu") if threads > 1 else ("weak", None)
        separators = ("po", "fence.proxy.alias") if shape.name.endswith("-alias") else ("po",) + PROXY_FENCES
        for separator in separators:
            for placement in placements:
                yield Variant(shape.name, order, scope, separator, placement)
        if shape.name.endswith("-alias"):  # the other proxy fences, added after the original names
            for separator in PROXY_FENCES[1:]:
                for placement in placements:
                    yield Variant(shape.name, order, scope, separator, placement)
        return
    has_write = any(isinstance(a, W) for t in shape.threads for a in t)
    barriers = two_each and threads > 1
    for rmw in (False, True):
        if rmw and not has_write:
            continue
        for order in ORDERS:
            if rmw and order == "weak":
                continue
            for separator in SEPARATORS:
                if separator == "bar.cta" and not barriers:
                    continue
                scoped = order != "weak" or separator.startswith("fence.")
                for scope in SCOPES if scoped else (None,):
                    for placement in placements:
                        if separator == "bar.cta" and placement != "same-cta":
                            continue
                        yield Variant(shape.name, order, scope, separator, placement, rmw)
    # Fence scope other than the accesses' (§8.7 condition 1, §8.9.3).
    for order in ("rlx", "rel-acq"):
        for separator in ("fence.sc", "fence.acq_rel"):
            for scope in SCOPES:
                for fence_scope in SCOPES:
                    if fence_scope == scope:
                        continue
                    for placement in placements:
                        yield Variant(shape.name, order, scope, separator, placement, fence_scope=fence_scope)
    # Mixed per-thread orders (§8.8).
    for order in mixed_orders(shape):
        for placement in placements:
            yield Variant(shape.name, order, "gpu", "po", placement)
    # Cluster barriers (§9.7.13.3), for threads of one cluster.
    if barriers:
        for rmw in (False, True) if has_write else (False,):
            for order in ORDERS:
                if rmw and order == "weak":
                    continue
                for scope in SCOPES if order != "weak" else (None,):
                    for placement in ("same-cta", "same-cluster"):
                        yield Variant(shape.name, order, scope, "bar.cluster", placement, rmw)


ALL_SHAPES = tuple(SHAPES) + tuple(ALIAS_SHAPES) + tuple(ASYNC_FAMILIES)


def shape_of(name: str) -> str | None:
    """The shape (or asynchronous family) of a generated test's name, ``2+2W`` for
    ``2+2W+rlx.gpu+po+diff-cta``; None for a name litmus-gen does not make."""
    found = [shape for shape in ALL_SHAPES if name == shape or name.startswith(shape + "+")]
    return max(found, key=len) if found else None


def _shape_named(name: str) -> Shape | AsyncFamily:
    if name in SHAPES:
        return SHAPES[name]
    if name in ALIAS_SHAPES:
        return ALIAS_SHAPES[name]
    if name in ASYNC_FAMILIES:
        return ASYNC_FAMILIES[name]
    raise PtxSpecError(f"unknown shape {name!r} (choose among {', '.join(ALL_SHAPES)})", where="<command line>, --shapes")


def generate(shapes: Iterable[str] = ALL_SHAPES, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> Iterator[tuple[str, str]]:
    """``(name, text)`` of every generated test of ``shapes``, in a fixed order.

    ``limit``: stop after that many tests, taken in turn from each shape (``--shapes MP,SB
    --limit 20``: ten of each). ``sample``: a seeded random choice of that many tests from the whole
    crossing (kept in generation order), drawn with ``random.Random(seed)``.
    """
    for v, text in generate_variants(shapes, limit=limit, sample=sample, seed=seed):
        yield v.name, text


def generate_variants(
    shapes: Iterable[str] = ALL_SHAPES, *, limit: int | None = None, sample: int | None = None, seed: int = 0
) -> Iterator[tuple[Variant | AsyncVariant, str]]:
    """As :func:`generate`, with each test's :class:`Variant` in place of its name."""
    chosen = [_shape_named(s) for s in shapes]
    pairs: Iterator = ((shape, v) for shape in chosen for v in variants(shape))
    if limit is not None and sample is None:  # a few of every shape, not the first shape's first few
        pairs = _in_turn([((shape, v) for v in variants(shape)) for shape in chosen])
    if sample is not None:
        everything = list(pairs)
        keep = sorted(random.Random(seed).sample(range(len(everything)), min(sample, len(everything))))
        pairs = (everything[i] for i in keep)
    for count, (shape, v) in enumerate(pairs):
        if limit is not None and count >= limit:
            return
        yield v, format_test(build(shape, v))


def _in_turn(streams: list[Iterator]) -> Iterator:
    """One item of each stream in turn, until all run dry."""
    live = [iter(s) for s in streams]
    while live:
        for stream in list(live):
            item = next(stream, _DONE)
            if item is _DONE:
                live.remove(stream)
            else:
                yield item


_DONE = object()


def enumeration_size(shapes: Iterable[str] = ALL_SHAPES) -> int:
    return sum(1 for s in shapes for _ in variants(_shape_named(s)))


# ---- checking and the summary ---------------------------------------------------------------------------


@attrs.frozen
class Row:
    name: str
    family: str
    variant: str
    verdict: str
    """``allowed`` (herd's Ok: the relaxed outcome is observable), ``forbidden`` (No) or ``unknown``."""
    time_s: float


def check_text(v: Variant | AsyncVariant, text: str, *, timeout_s: float | None = None) -> Row:
    """Check one generated test with both engines (``memory_model.check``: they must agree, else
    :class:`~ptxspec.memory_model.check.EngineDisagreement`)."""
    return check_named(v.name, v.family, v.variant, text, timeout_s=timeout_s)


def check_named(name: str, family: str, variant: str, text: str, *, timeout_s: float | None = None) -> Row:
    """:func:`check_text` of the test ``name`` of ``family``'s ``variant`` (what a worker process
    has of a variant: its names)."""
    from ptxspec.memory_model.check import check
    from ptxspec.memory_model.litmus import parse
    from ptxspec.memory_model.lowering import lower

    program = lower(parse(text, f"{name}.litmus"))
    verdict = check(program, engine="both", timeout_s=timeout_s, full_cross_check=True, report_undefined=False)
    word = {True: "allowed", False: "forbidden", None: "unknown"}[verdict.ok]
    return Row(name, family, variant, word, verdict.time_s)


def check_task(name: str, family: str, variant: str, text: str, timeout_s: float | None) -> list:
    """:func:`check_named` as a task of the campaign engine (a worker process runs it): the row as
    a list, or ``["disagreement", message]`` where the two engines disagree."""
    from ptxspec.memory_model.check import EngineDisagreement

    try:
        row = check_named(name, family, variant, text, timeout_s=timeout_s)
    except EngineDisagreement as error:
        return ["disagreement", error.one_line()]
    return [row.name, row.family, row.variant, row.verdict, row.time_s]


def summary_text(rows: list[Row], fmt: str) -> str:
    """The summary table family x variant -> verdict.

    ``csv``: one row per test (``family,variant,verdict,time_s``), for tools. ``md``: a Markdown
    grid for the docs: one row per variant, one column per family, each cell ``allowed``,
    ``forbidden`` (or ``unknown``; blank where the family has no such variant), and a last row with
    each family's total checking time.
    """
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["family", "variant", "verdict", "time_s"])
        for r in rows:
            writer.writerow([r.family, r.variant, r.verdict, f"{r.time_s:.3f}"])
        return out.getvalue()
    families = list(dict.fromkeys(r.family for r in rows))
    variants_ = list(dict.fromkeys(r.variant for r in rows))
    cell = {(r.family, r.variant): r.verdict for r in rows}
    lines = ["| variant | " + " | ".join(families) + " |", "|---" * (len(families) + 1) + "|"]
    for v in variants_:
        lines.append(f"| {v} | " + " | ".join(cell.get((f, v), "") for f in families) + " |")
    totals = [f"{sum(r.time_s for r in rows if r.family == f):.2f}" for f in families]
    lines.append("| time (s) | " + " | ".join(totals) + " |")
    return "\n".join(lines) + "\n"


# ---- the command ----------------------------------------------------------------------------------------


@click.command("litmus-gen")
@click.argument("directory", metavar="DIR")
@click.option("--shapes", default=",".join(ALL_SHAPES), show_default=True, metavar="MP,SB,...", help="Comma-separated shapes to generate.")
@click.option("--limit", type=click.IntRange(min=0), default=None, metavar="N", help="At most N tests, taken in turn from each shape.")
@click.option("--sample", type=click.IntRange(min=0), default=None, metavar="N", help="A seeded random sample of N tests of the crossing (see --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--check", "do_check", is_flag=True, help="Check every test with both engines (they must agree).")
@click.option(
    "--summary", "summary_path", default=None, metavar="FILE.csv|FILE.md", help="With --check: write the table family x variant -> allowed/forbidden, time."
)
@click.option(
    "--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S", help="Seconds per engine and test (with --check)."
)
@campaign_engine.options
def litmus_gen_command(
    directory: str,
    shapes: str,
    limit: int | None,
    sample: int | None,
    seed: int,
    do_check: bool,
    summary_path: str | None,
    timeout_s: float | None,
    workers: int | None,
    scheduler: str | None,
    store: Path | None,
) -> None:
    """Generate litmus test families into DIR (one NAME.litmus per test).

    Shapes MP, SB, LB, S, R, 2+2W, WRC, RWC, IRIW, ISA2, CoRR, CoRW, CoWR, CoWW (and the proxy
    shapes CoWR-alias, MP-alias, CoWR-surface, MP-surface, CoWR-texture, MP-texture,
    CoWR-constant, MP-constant) crossed with orders (weak, relaxed, release/acquire, and mixed
    per thread), scopes, fences (fence.sc, fence.acq_rel, at the accesses' scope or another),
    bar.cta.sync, barrier.cluster.arrive/wait, proxy fences, placements and atom.exch writes.
    Names: SHAPE[+rmw]+ORDER+SEPARATOR+PLACEMENT, e.g. MP+rel-acq.gpu+po+diff-cta,
    SB+rlx.gpu+fence.sc.cta+diff-cta, MP+rel-acq_rlx.gpu+po+diff-cta.

    Asynchronous families, each a template with and without each fence or wait: MP-mbarrier
    (mbarrier arrive/try_wait), TMA-load (cp.async.bulk completed on an mbarrier), bulk-copy-source
    (fence.proxy.async before a bulk copy), tcgen05-mma-ld and tcgen05-cp-mma (tcgen05 commit,
    before/after_thread_sync), cp-async (commit_group, wait_group, wait_all), mbarrier-init-cluster
    (fence.mbarrier_init before a relaxed cluster arrive), MP-sync-restrict (fence.release/acquire
    with and without .sync_restrict), st-async, wgmma (proxy fence, wait_group), bulk-group
    (cp.async.bulk commit_group / wait_group{.read}), red-async (expect_tx, acquire), bulk-reduce
    (cp.reduce.async.bulk: fence.proxy.async, the mbarrier or bulk-group wait), cp-async-mbarrier-arrive
    (cp.async.mbarrier.arrive{.noinc} after or before the copy, the wait), bar-red (bar.red.popc/and/or
    as a barrier, the reduction's result). Names:
    FAMILY[+one-thread|+two-threads]+TOKENS+PLACEMENT, the tokens being the toggled instructions
    in program order, e.g. MP-mbarrier+fence.acq_rel.cta+arrive.relaxed.cta+try_wait.acquire.cta+same-cta,
    cp-async+two-threads+commit_group+wait_group.0+same-cta.

    \b
    Examples:
      ptxspec litmus-gen out --shapes MP,SB
      ptxspec litmus-gen out --shapes MP --check --summary mp.md
      ptxspec litmus-gen out --shapes MP-mbarrier,TMA-load,cp-async --check

    Exit status: 0 done; 2 bad input; 3 the two engines disagree on some test.
    """
    names = [s.strip() for s in shapes.split(",") if s.strip()]
    if not names:
        raise PtxSpecError("no shape named", where="<command line>, --shapes")
    fmt = None
    if summary_path is not None:
        if not do_check:
            raise PtxSpecError("--summary needs --check", where="<command line>, --summary")
        suffix = Path(summary_path).suffix.lower()
        if suffix not in (".csv", ".md"):
            raise PtxSpecError("the summary file must end in .csv or .md", where=Location(summary_path))
        fmt = suffix[1:]
    tests = list(generate_variants(names, limit=limit, sample=sample, seed=seed))
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for v, text in tests:
            (out / f"{v.name}.litmus").write_text(text, encoding="utf-8", newline="\n")
    except OSError as error:
        raise PtxSpecError(f"cannot write the tests: {error.strerror or error}", where=Location(directory)) from None
    click.echo(f"ptxspec: wrote {len(tests)} test(s) to {directory}", err=True)
    if not do_check:
        return
    from ptxspec.conformance.progress import Progress

    rows: list[Row] = []
    disagreements = 0
    start = time.perf_counter()
    bar = Progress()
    tasks = [campaign_engine.Task(v.name, f"{__name__}:check_task", (v.name, v.family, v.variant, text, timeout_s)) for v, text in tests]
    results = campaign_engine.run(
        tasks, **campaign_engine.settings(workers, scheduler, store), progress=lambda done, total: bar("checking", done, total, "tests")
    )
    bar.close()
    for result in results.values():
        if result[0] == "disagreement":  # type: ignore[index]
            click.echo(f"ptxspec: error: {result[1]}", err=True)  # type: ignore[index]
            disagreements += 1
        else:
            rows.append(Row(*result))  # type: ignore[misc]
    elapsed = time.perf_counter() - start
    counts = {w: sum(r.verdict == w for r in rows) for w in ("allowed", "forbidden", "unknown")}
    click.echo(
        f"ptxspec: checked {len(rows)} test(s) with both engines in {elapsed:.1f} s: "
        f"{counts['allowed']} allowed, {counts['forbidden']} forbidden, {counts['unknown']} unknown, "
        f"{disagreements} disagreement(s)",
        err=True,
    )
    if summary_path is not None:
        assert fmt is not None, "fmt is set whenever --summary is given"
        try:
            Path(summary_path).write_text(summary_text(rows, fmt), encoding="utf-8", newline="\n")
        except OSError as error:
            raise PtxSpecError(f"cannot write the summary: {error.strerror or error}", where=Location(summary_path)) from None
    if disagreements:
        sys.exit(3)
