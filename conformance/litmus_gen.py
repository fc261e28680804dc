"""``ptxspec litmus-gen``: enumerate families of litmus tests for the PTX memory model (§8).

Each family is a classic shape (the names of diy7 / herd7: MP, SB, LB, S, R, 2+2W, WRC, RWC, IRIW,
ISA2 and the coherence shapes CoRR, CoRW, CoWR, CoWW) crossed with

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
from typing import Iterable, Iterator

import attrs
import click

from ptxspec.memory_model.litmus import (
    AliasDecl,
    Atomic,
    BarrierOp,
    Fence,
    Immediate,
    Instruction,
    Load,
    LocationInit,
    LitmusTest,
    ProxyFence,
    Register,
    RegisterInit,
    Store,
    ThreadDecl,
    format_test,
)
from ptxspec.memory_model.program import And, Compare, Condition, Constant, LocationTerm, RegisterTerm
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


def build(shape: Shape, v: Variant) -> LitmusTest:
    """The litmus test of ``shape`` under variant ``v`` (as an AST)."""
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


def variants(shape: Shape) -> Iterator[Variant]:
    """Every variant of ``shape``, in a fixed order (see the module docstring for the crossing):
    first the base crossing, then the fence-scope axis, the mixed orders and ``bar.cluster``."""
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


ALL_SHAPES = tuple(SHAPES) + tuple(ALIAS_SHAPES)


def _shape_named(name: str) -> Shape:
    if name in SHAPES:
        return SHAPES[name]
    if name in ALIAS_SHAPES:
        return ALIAS_SHAPES[name]
    raise PtxSpecError(f"unknown shape {name!r} (choose among {', '.join(ALL_SHAPES)})", where="<command line>, --shapes")


def generate(shapes: Iterable[str] = ALL_SHAPES, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> Iterator[tuple[str, str]]:
    """``(name, text)`` of every generated test of ``shapes``, in a fixed order.

    ``limit``: stop after that many tests. ``sample``: a seeded random choice of that many tests
    from the whole crossing (kept in generation order), drawn with ``random.Random(seed)``.
    """
    for v, text in generate_variants(shapes, limit=limit, sample=sample, seed=seed):
        yield v.name, text


def generate_variants(
    shapes: Iterable[str] = ALL_SHAPES, *, limit: int | None = None, sample: int | None = None, seed: int = 0
) -> Iterator[tuple[Variant, str]]:
    """As :func:`generate`, with each test's :class:`Variant` in place of its name."""
    chosen = [_shape_named(s) for s in shapes]
    pairs = ((shape, v) for shape in chosen for v in variants(shape))
    if sample is not None:
        everything = list(pairs)
        keep = sorted(random.Random(seed).sample(range(len(everything)), min(sample, len(everything))))
        pairs = (everything[i] for i in keep)
    for count, (shape, v) in enumerate(pairs):
        if limit is not None and count >= limit:
            return
        yield v, format_test(build(shape, v))


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


def check_text(v: Variant, text: str, *, timeout_s: float | None = None) -> Row:
    """Check one generated test with both engines (``memory_model.check``: they must agree, else
    :class:`~ptxspec.memory_model.check.EngineDisagreement`)."""
    from ptxspec.memory_model.check import check
    from ptxspec.memory_model.litmus import parse
    from ptxspec.memory_model.lowering import lower

    program = lower(parse(text, f"{v.name}.litmus"))
    verdict = check(program, engine="both", timeout_s=timeout_s, full_cross_check=True)
    word = {True: "allowed", False: "forbidden", None: "unknown"}[verdict.ok]
    return Row(v.name, v.family, v.variant, word, verdict.time_s)


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
@click.option("--limit", type=click.IntRange(min=0), default=None, metavar="N", help="At most N tests.")
@click.option("--sample", type=click.IntRange(min=0), default=None, metavar="N", help="A seeded random sample of N tests of the crossing (see --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--check", "do_check", is_flag=True, help="Check every test with both engines (they must agree).")
@click.option(
    "--summary", "summary_path", default=None, metavar="FILE.csv|FILE.md", help="With --check: write the table family x variant -> allowed/forbidden, time."
)
@click.option(
    "--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S", help="Seconds per engine and test (with --check)."
)
def litmus_gen_command(
    directory: str, shapes: str, limit: int | None, sample: int | None, seed: int, do_check: bool, summary_path: str | None, timeout_s: float | None
) -> None:
    """Generate litmus test families into DIR (one NAME.litmus per test).

    Shapes MP, SB, LB, S, R, 2+2W, WRC, RWC, IRIW, ISA2, CoRR, CoRW, CoWR, CoWW (and the proxy
    shapes CoWR-alias, MP-alias, CoWR-surface, MP-surface, CoWR-texture, MP-texture,
    CoWR-constant, MP-constant) crossed with orders (weak, relaxed, release/acquire, and mixed
    per thread), scopes, fences (fence.sc, fence.acq_rel, at the accesses' scope or another),
    bar.cta.sync, barrier.cluster.arrive/wait, proxy fences, placements and atom.exch writes.
    Names: SHAPE[+rmw]+ORDER+SEPARATOR+PLACEMENT, e.g. MP+rel-acq.gpu+po+diff-cta,
    SB+rlx.gpu+fence.sc.cta+diff-cta, MP+rel-acq_rlx.gpu+po+diff-cta.

    \b
    Examples:
      ptxspec litmus-gen out --shapes MP,SB
      ptxspec litmus-gen out --shapes MP --check --summary mp.md

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
    from ptxspec.memory_model.check import EngineDisagreement

    rows: list[Row] = []
    disagreements = 0
    start = time.perf_counter()
    for v, text in tests:
        try:
            rows.append(check_text(v, text, timeout_s=timeout_s))
        except EngineDisagreement as error:
            click.echo(f"ptxspec: error: {error.one_line()}", err=True)
            disagreements += 1
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
