"""The §8 model (``ptx.py``) on hand-built programs: the manual's own litmus tests and variants.

Programs are built here directly (not parsed), so these tests check the model and the explicit
engine on their own. Each verdict is the one the manual's text gives (quoted per test).
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.memory_model import base, explicit, ptx
from ptxspec.memory_model import relations as rel
from ptxspec.memory_model.engine import final_values, holds, judge, ok_of, state_of
from ptxspec.memory_model.program import (
    MASK,
    Address,
    And,
    Barrier,
    Compare,
    Condition,
    Constant,
    Event,
    LocationTerm,
    Not,
    Or,
    Placement,
    Program,
    RegisterTerm,
    Thread,
    Trace,
    TrueFormula,
)

# ---- a small builder of straight-line programs -----------------------------------------------------
#
# A thread is a list of instructions (tuples); every read returns each value of ``domain`` in some
# trace, so a thread of k reads has |domain|^k traces. Writes take a constant or a register.


def st_(loc, value, order="weak", scope=None, proxy="generic"):
    return ("st", loc, value, order, scope, proxy)


def ld(reg, loc, order="weak", scope=None, proxy="generic"):
    return ("ld", reg, loc, order, scope, proxy)


def inc(reg, loc, order="relaxed", scope="sys"):
    return ("atom", reg, loc, order, scope)


def fence(kind, scope="sys"):
    return ("fence", kind, scope)


def proxy_fence(kind):
    return ("pfence", kind)


def bar(barrier_id, count=None, op="sync"):
    return ("bar", barrier_id, count, op)


ALWAYS = TrueFormula()


def build(threads, *, locations, aliases=(), domain=(0, 1), quantifier="exists", formula=ALWAYS, observed=()):
    """``threads``: list of (Placement, [instruction...]); ``aliases``: (name, of, proxy)."""
    addresses = {name: Address(name, name, name) for name in locations}
    for name, of, proxy in aliases:
        generic = name if proxy == "generic" else addresses[of].generic
        addresses[name] = Address(name, addresses[of].physical, generic, proxy)
    eid = itertools.count()
    initial = tuple(
        Event(next(eid), None, -1, f"init {name}", writes=True, address=addresses[name], proxy="generic", order="weak", write_value=value)
        for name, value in locations.items()
    )
    built = []
    for number, (placement, code) in enumerate(threads):
        reads = sum(1 for ins in code if ins[0] in ("ld", "atom"))
        traces = []
        for values in itertools.product(domain, repeat=reads):
            source = iter(values)
            registers: dict[str, int] = {}
            origin: dict[str, int] = {}
            events, data = [], set()
            for index, ins in enumerate(code):
                e = next(eid)
                kind = ins[0]
                if kind == "st":
                    _, loc, value, order, scope, proxy = ins
                    if isinstance(value, str):
                        data.add((origin[value], e))
                        value = registers[value]
                    events.append(Event(e, number, index, "st", writes=True, address=addresses[loc], proxy=proxy, order=order, scope=scope, write_value=value))
                elif kind == "ld":
                    _, reg, loc, order, scope, proxy = ins
                    value = next(source)
                    registers[reg], origin[reg] = value, e
                    events.append(Event(e, number, index, "ld", reads=True, address=addresses[loc], proxy=proxy, order=order, scope=scope, read_value=value))
                elif kind == "atom":
                    _, reg, loc, order, scope = ins
                    value = next(source)
                    registers[reg], origin[reg] = value, e
                    events.append(
                        Event(
                            e,
                            number,
                            index,
                            "atom.inc",
                            reads=True,
                            writes=True,
                            atomic=True,
                            address=addresses[loc],
                            proxy="generic",
                            order=order,
                            scope=scope,
                            read_value=value,
                            write_value=(value + 1) & MASK,
                        )
                    )
                elif kind == "fence":
                    _, fkind, scope = ins
                    events.append(Event(e, number, index, f"fence.{fkind}", fence=fkind, order=fkind, scope=scope))
                elif kind == "pfence":
                    events.append(Event(e, number, index, f"fence.proxy.{ins[1]}", proxy_fence=ins[1]))
                elif kind == "bar":
                    _, barrier_id, count, op = ins
                    phase = sum(1 for x in events if x.barrier is not None and x.barrier.barrier_id == barrier_id)
                    events.append(Event(e, number, index, f"bar.{op}", barrier=Barrier("cta", op, barrier_id, count, phase)))
            traces.append(Trace(number, tuple(events), dict(registers), data=frozenset(data)))
        built.append(Thread(number, f"P{number}", placement, tuple(traces)))
    return Program(
        name="hand-built",
        source="<test>",
        addresses=addresses,
        initial=initial,
        threads=tuple(built),
        condition=Condition(quantifier, formula),
        observed=tuple(observed),
    )


def reg(thread, name):
    return RegisterTerm(thread, name)


def eq(term, value):
    return Compare("==", term, Constant(value))


def outcome(*pairs):
    """A conjunction ``term == value`` and the observed terms, for ``build``."""
    return dict(formula=And(tuple(eq(t, v) for t, v in pairs)), observed=tuple(t for t, _ in pairs))


def allowed(program, model=ptx.PTX_8_7) -> bool:
    """Is the ``exists`` outcome of ``program`` reachable under ``model``?"""
    result = explicit.run(program, model)
    assert program.condition.quantifier == "exists"
    return result.ok


CTA0 = Placement(cta=0)
CTA1 = Placement(cta=1)
GPU1 = Placement(cta=0, gpu=1)

# ---- §8.10.6 message passing -----------------------------------------------------------------------


def message_passing(writer_fence, reader_fence, flag_order=("relaxed", "relaxed"), placements=(CTA0, CTA1)):
    writer = [st_("data", 1)] + ([fence(writer_fence)] if writer_fence else []) + [st_("flag", 1, flag_order[0], "sys")]
    reader = [ld("r0", "flag", flag_order[1], "sys")] + ([fence(reader_fence)] if reader_fence else []) + [ld("r1", "data")]
    return build(
        [(placements[0], writer), (placements[1], reader)],
        locations={"data": 0, "flag": 0},
        **outcome((reg(1, "r0"), 1), (reg(1, "r1"), 0)),
    )


def test_mp_with_fences_is_forbidden():
    # §8.10.6: "If R1 observes W2, then the release pattern "F1; W2" synchronizes with the acquire
    # pattern "R1; F2" ... In the absence of any other writes in this example, R2 must read from W1."
    assert not allowed(message_passing("acq_rel", "acq_rel"))
    assert not allowed(message_passing("sc", "sc"))


def test_mp_without_fences_is_allowed():
    assert allowed(message_passing(None, None))
    assert allowed(message_passing("acq_rel", None))
    assert allowed(message_passing(None, "acq_rel"))


def test_mp_release_acquire_and_scopes():
    # §8.8 release/acquire operations; §8.7: a .cta scope does not include a thread of another CTA.
    assert not allowed(message_passing(None, None, ("release", "acquire")))
    assert allowed(message_passing(None, None, ("relaxed", "acquire")))
    writer = [st_("data", 1), st_("flag", 1, "release", "cta")]
    reader = [ld("r0", "flag", "acquire", "cta"), ld("r1", "data")]
    for placement, expect in ((CTA0, False), (CTA1, True)):
        program = build([(CTA0, writer), (placement, reader)], locations={"data": 0, "flag": 0}, **outcome((reg(1, "r0"), 1), (reg(1, "r1"), 0)))
        assert allowed(program) is expect


def test_mp_cumulativity_through_a_third_thread():
    # Base causality order is transitive (§8.9.5, footnote: "the transitivity of base causality
    # order accounts for the cumulativity of synchronizing operations").
    p0 = [st_("data", 1), st_("f1", 1, "release", "gpu")]
    p1 = [ld("r0", "f1", "acquire", "gpu"), st_("f2", 1, "release", "gpu")]
    p2 = [ld("r1", "f2", "acquire", "gpu"), ld("r2", "data")]
    program = build(
        [(CTA0, p0), (CTA1, p1), (Placement(cta=2), p2)],
        locations={"data": 0, "f1": 0, "f2": 0},
        **outcome((reg(1, "r0"), 1), (reg(2, "r1"), 1), (reg(2, "r2"), 0)),
    )
    assert not allowed(program)


# ---- §8.10.6 store buffering -------------------------------------------------------------------------


def store_buffering(kind, placements=(CTA0, CTA1), scope="sys"):
    p0 = [st_("x", 1), fence(kind, scope), ld("r0", "y")]
    p1 = [st_("y", 1), fence(kind, scope), ld("r1", "x")]
    return build([(placements[0], p0), (placements[1], p1)], locations={"x": 0, "y": 0}, **outcome((reg(0, "r0"), 0), (reg(1, "r1"), 0)))


def test_sb_fence_sc_forbids_and_fence_acq_rel_allows():
    # §8.10.6 SB: "In any execution, either F1 precedes F2 in Fence-SC order, or vice versa ...
    # If each fence.sc in this example were replaced by a fence.acq_rel instruction, then this
    # outcome is not guaranteed."
    assert not allowed(store_buffering("sc"))
    assert allowed(store_buffering("acq_rel"))


def test_sb_fence_sc_out_of_scope_is_allowed():
    # §8.9.3: Fence-SC order relates morally strong fence.sc only; .cta fences in two CTAs are not.
    assert allowed(store_buffering("sc", scope="cta"))
    assert not allowed(store_buffering("sc", placements=(CTA0, CTA0), scope="cta"))


def test_why_names_causality_for_sb():
    result = explicit.run(store_buffering("sc"), ptx.PTX_8_7, want_why=True, want_witness=True)
    assert result.ok is False and result.witness is None
    assert result.why == ("Causality",)


def test_witness_of_allowed_sb():
    result = explicit.run(store_buffering("acq_rel"), ptx.PTX_8_7, want_witness=True, want_why=True)
    assert result.ok and result.why is None
    witness = result.witness
    assert holds(store_buffering("acq_rel").condition.formula, witness.final)
    # Both reads read the initial writes (thread None).
    by_eid = {e.eid: e for e in witness.events}
    reads = [e for e in witness.events if e.reads]
    sources = {r: w for w, r in witness.relations["rf"]}
    assert all(by_eid[sources[r.eid]].is_initial for r in reads)
    assert {"po", "rf", "co", "sc", "causality_order", "coherence_order"} <= set(witness.relations)


# ---- §8.10.4 load buffering --------------------------------------------------------------------------


def test_lb_out_of_thin_air_is_forbidden():
    # §8.10.4: "If any of the memory operations in this example were to speculatively associate a
    # different value with the corresponding memory location, then such a speculation would become
    # self-fulfilling, and hence forbidden."
    p0 = [ld("r0", "x"), st_("y", "r0")]
    p1 = [ld("r1", "y"), st_("x", "r1")]
    program = build([(CTA0, p0), (CTA1, p1)], locations={"x": 0, "y": 0}, **outcome((reg(0, "r0"), 1), (reg(1, "r1"), 1)))
    result = explicit.run(program, ptx.PTX_8_7, want_why=True)
    assert result.ok is False
    assert result.why == ("No-Thin-Air",)


def test_lb_with_constant_stores_is_allowed():
    p0 = [ld("r0", "x"), st_("y", 1)]
    p1 = [ld("r1", "y"), st_("x", 1)]
    program = build([(CTA0, p0), (CTA1, p1)], locations={"x": 0, "y": 0}, **outcome((reg(0, "r0"), 1), (reg(1, "r1"), 1)))
    assert allowed(program)


# ---- §8.10.5 CoRR --------------------------------------------------------------------------------------


def corr(read_order):
    p0 = [st_("x", 1, "relaxed", "sys")]
    p1 = [ld("r0", "x", read_order, "sys" if read_order != "weak" else None), ld("r1", "x", read_order, "sys" if read_order != "weak" else None)]
    return build([(CTA0, p0), (CTA1, p1)], locations={"x": 0}, **outcome((reg(1, "r0"), 1), (reg(1, "r1"), 0)))


def test_corr():
    # §8.10.5: "If R2 observed the initial value of x, then this would form a sequence of
    # morally-strong relations R2->W1->R1 in communication order that contradicts the program order
    # R1->R2 in thread T2. Hence R2 cannot read the initial value of x in such an execution."
    result = explicit.run(corr("relaxed"), ptx.PTX_8_7, want_why=True)
    assert result.ok is False and "SC-per-location" in result.why
    # Weak reads are not morally strong with the write: nothing forbids it (Manual/CoRR-weak-weak).
    assert allowed(corr("weak"))


# ---- §8.10.3 atomicity ---------------------------------------------------------------------------------


def test_atomicity_litmus_1():
    # "FINAL STATE: x == 2 ... atomicity is guaranteed when the operations are morally strong."
    program = build(
        [(CTA0, [inc("r0", "x", scope="sys")]), (CTA1, [inc("r0", "x", scope="sys")])],
        locations={"x": 0},
        domain=(0, 1, 2),
        quantifier="forall",
        formula=eq(LocationTerm("x"), 2),
        observed=(LocationTerm("x"),),
    )
    result = explicit.run(program, ptx.PTX_8_7)
    assert result.ok is True
    assert result.states == frozenset({((LocationTerm("x"), 2),)})


def test_atomicity_litmus_2():
    # "T2 (In a different CTA) ... FINAL STATE: x == 1 OR x == 2 ... atomicity is not guaranteed if
    # the operations are not morally strong."
    program = build(
        [(CTA0, [inc("r0", "x", scope="cta")]), (CTA1, [inc("r0", "x", scope="gpu")])], locations={"x": 0}, domain=(0, 1, 2), **outcome((LocationTerm("x"), 1))
    )
    result = explicit.run(program, ptx.PTX_8_7, want_why=True)
    assert result.ok is True
    assert {value for ((_, value),) in result.states} == {1, 2}
    # In one CTA the same operations are morally strong: only x == 2.
    same = build(
        [(CTA0, [inc("r0", "x", scope="cta")]), (CTA0, [inc("r0", "x", scope="gpu")])], locations={"x": 0}, domain=(0, 1, 2), **outcome((LocationTerm("x"), 1))
    )
    result = explicit.run(same, ptx.PTX_8_7, want_why=True)
    assert result.ok is False and "Atomicity-RMW" in result.why


# ---- §8.6 proxies and aliases (CoWR with aliases) ---------------------------------------------------


def cowr_alias(with_fence, proxy="generic", reader_proxy="generic", fence_kind="alias"):
    code = [st_("x", 1, proxy="generic")]
    if with_fence:
        code.append(proxy_fence(fence_kind))
    code.append(ld("r1", "y", proxy=reader_proxy))
    return build([(CTA0, code)], locations={"x": 0}, aliases=(("y", "x", proxy),), **outcome((reg(0, "r1"), 0)))


def test_cowr_alias_needs_the_alias_proxy_fence():
    # §8.9.5 CoWR: "Virtual aliases require an alias proxy fence along the synchronization path."
    assert not allowed(cowr_alias(True))
    assert allowed(cowr_alias(False))
    # The proxy-less model of PTX 6.0 has no such distinction (aliases overlap physically).
    assert not allowed(cowr_alias(False), ptx.PTX_6_0)


def test_surface_alias_needs_the_surface_proxy_fence():
    # §9.7.13.4: fence.proxy.<kind> orders generic accesses with accesses through <kind>.
    assert allowed(cowr_alias(False, proxy="surface", reader_proxy="surface"))
    assert not allowed(cowr_alias(True, proxy="surface", reader_proxy="surface", fence_kind="surface"))
    assert allowed(cowr_alias(True, proxy="surface", reader_proxy="surface", fence_kind="texture"))


# ---- §8.9.4 barriers ------------------------------------------------------------------------------------


def sb_barriers(ids, placements=(CTA0, CTA0), counts=(None, None)):
    p0 = [st_("x", 1), bar(ids[0], counts[0]), ld("r0", "y")]
    p1 = [st_("y", 1), bar(ids[1], counts[1]), ld("r1", "x")]
    return build([(placements[0], p0), (placements[1], p1)], locations={"x": 0, "y": 0}, **outcome((reg(0, "r0"), 0), (reg(1, "r1"), 0)))


def test_barrier_synchronizes_on_the_same_barrier_in_one_cta():
    # §8.9.4 item 2: "bar{.cta}.sync ... synchronizes with a bar{.cta}.sync ... executed on the same barrier."
    assert not allowed(sb_barriers((1, 1)))
    assert allowed(sb_barriers((0, 1)))
    assert allowed(sb_barriers((1, 1), placements=(CTA0, CTA1)))


def test_barrier_quorum():
    # barrier_rules.md rule 3: three threads at a barrier for two.
    def quorum(count):
        p0 = [st_("x", 1), bar(1, count)]
        p1 = [bar(1, count), ld("r0", "x")]
        p2 = [bar(1, count)]
        return build([(CTA0, p0), (CTA0, p1), (CTA0, p2)], locations={"x": 0}, **outcome((reg(1, "r0"), 0)))

    assert allowed(quorum(2))
    assert not allowed(quorum(4))  # nobody ever passes: no execution at all
    assert explicit.run(quorum(4), ptx.PTX_8_7).states == frozenset()


def test_barrier_deadlock_has_no_execution():
    p0 = [bar(0), bar(1)]
    p1 = [bar(1), bar(0)]
    program = build([(CTA0, p0), (CTA0, p1)], locations={"x": 0})
    assert base.barrier_options(program, [t.traces[0] for t in program.threads]) == []
    swapped = build([(CTA0, [bar(0), bar(1)]), (CTA0, [bar(0), bar(1)])], locations={"x": 0})
    (option,) = base.barrier_options(swapped, [t.traces[0] for t in swapped.threads])
    assert len(option) == 4  # both uses, both directions


# ---- the engine's pieces against independent oracles ------------------------------------------------


def _relation(n, seed):
    rng = random.Random(seed)
    return {(i, j) for i in range(n) for j in range(n) if rng.random() < 0.2}


def _rows(pairs, n):
    rows = [0] * n
    for i, j in pairs:
        rows[i] |= 1 << j
    return rows


def _closure(pairs):
    closure = set(pairs)
    while True:
        extra = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not extra:
            return closure
        closure |= extra


@given(st.integers(1, 9), st.integers(0, 10**6), st.integers(0, 10**6))
def test_bit_matrix_operations(n, seed1, seed2):
    a, b = _relation(n, seed1), _relation(n, seed2)
    ra, rb = _rows(a, n), _rows(b, n)
    assert explicit._seq(ra, rb) == _rows({(i, k) for i, j in a for j2, k in b if j == j2}, n)
    assert explicit._inverse(ra) == _rows({(j, i) for i, j in a}, n)
    closure = _closure(a)
    assert explicit._plus(ra) == _rows(closure, n)
    assert explicit._acyclic(ra) == all((i, i) not in closure for i in range(n))
    assert explicit._irreflexive(ra) == all((i, i) not in a for i in range(n))


def test_frame_static_relations_agree_with_base():
    programs = [message_passing("sc", "acq_rel"), cowr_alias(True, proxy="surface"), store_buffering("sc", scope="cta")]
    for program in programs:
        search = explicit._Search(program, ptx.PTX_8_7, None)
        for frame, _ in search.frames():
            for name in base.STATIC_RELATIONS:
                expect = _rows(
                    {(i, j) for i, a in enumerate(frame.events) for j, b in enumerate(frame.events) if base.static_pair(name, a, b, program)},
                    frame.n,
                )
                assert frame.base_env[name] == expect, name


def test_final_condition_helpers():
    x, r = LocationTerm("x"), RegisterTerm(0, "r0")
    formula = Or((And((eq(x, 1), Not(eq(r, 0)))), Compare("!=", x, Constant(MASK))))
    assert holds(formula, {x: 1, r: 5})
    assert not holds(formula, {x: MASK, r: 0})
    states = [((x, 1),), ((x, 2),)]
    assert judge(Condition("exists", eq(x, 1)), states) == (True, 1, 1)
    assert judge(Condition("~exists", eq(x, 1)), states) == (False, 1, 1)
    assert judge(Condition("forall", eq(x, 1)), states) == (False, 1, 1)
    assert ok_of(Condition("forall", eq(x, 1)), 0, 0) is True


def test_timeout_gives_unknown():
    result = explicit.run(store_buffering("sc"), ptx.PTX_8_7, timeout_s=0.0)
    assert result.ok is None and result.states is None


def test_models_are_well_formed():
    for model in (ptx.PTX_8_7, ptx.PTX_6_0):
        names = [d.name for d in model.definitions]
        assert len(names) == len(set(names))
        assert {a.name for a in model.axioms} == set(ptx.AXIOM_TEXT)
        for definition in model.definitions:
            assert definition.section and definition.doc


# ---- §8.9.6 coherence order is partial --------------------------------------------------------------


def two_writers(order):
    scope = None if order == "weak" else "sys"
    p0 = [st_("x", 1, order, scope), st_("f1", 1, "release", "sys")]
    p1 = [st_("x", 2, order, scope), st_("f2", 1, "release", "sys")]
    p2 = [ld("r0", "f1", "acquire", "sys"), ld("r1", "f2", "acquire", "sys"), ld("r2", "x"), ld("r3", "x")]
    return build(
        [(CTA0, p0), (CTA0, p1), (CTA0, p2)],
        locations={"x": 0, "f1": 0, "f2": 0},
        domain=(0, 1, 2),
        **outcome((reg(2, "r0"), 1), (reg(2, "r1"), 1), (reg(2, "r2"), 1), (reg(2, "r3"), 2)),
    )


def test_writes_in_a_data_race_are_unrelated_in_coherence_order():
    # §8.9.6: "Two overlapping write operations are unrelated in coherence order if they are in a
    # data-race, which gives rise to the partial nature of coherence order." Both weak writes
    # precede both reads in causality order; with the writes unordered, neither read is in fr
    # with the other write (Manual/Co-Total-3-threads-scope-same).
    assert allowed(two_writers("weak"))
    # "Two overlapping write operations are related in coherence order if they are morally strong":
    # then one of the reads reads a write that precedes, in coherence order, a write that precedes
    # the read in causality order (§8.10.6 item 2).
    result = explicit.run(two_writers("relaxed"), ptx.PTX_8_7, want_why=True)
    assert result.ok is False and result.why == ("Causality",)


# ---- the explicit engine against a naive interpreter of the same model -----------------------------
#
# An independent, slow reading of relations.py over sets of eid pairs, with no staging, hoisting
# or pruning: every candidate (traces, barrier option, rf, co, sc) is built and every axiom checked.


def _naive(expr, ctx):
    events = ctx["events"]
    if isinstance(expr, rel.SetBase):
        return {e.eid for e in events if expr.name in base.event_sets(e)}
    if isinstance(expr, rel.SetUnion):
        return _naive(expr.left, ctx) | _naive(expr.right, ctx)
    if isinstance(expr, rel.SetInter):
        return _naive(expr.left, ctx) & _naive(expr.right, ctx)
    if isinstance(expr, rel.SetDiff):
        return _naive(expr.left, ctx) - _naive(expr.right, ctx)
    if isinstance(expr, rel.Domain):
        return {a for a, _ in _naive(expr.relation, ctx)}
    if isinstance(expr, rel.Range):
        return {b for _, b in _naive(expr.relation, ctx)}
    if isinstance(expr, rel.Base):
        return ctx["base"][expr.name]
    if isinstance(expr, rel.Ref):
        return ctx["defs"][expr.name]
    if isinstance(expr, rel.Union):
        return _naive(expr.left, ctx) | _naive(expr.right, ctx)
    if isinstance(expr, rel.Inter):
        return _naive(expr.left, ctx) & _naive(expr.right, ctx)
    if isinstance(expr, rel.Diff):
        return _naive(expr.left, ctx) - _naive(expr.right, ctx)
    if isinstance(expr, rel.Seq):
        left, right = _naive(expr.left, ctx), _naive(expr.right, ctx)
        return {(a, c) for a, b in left for b2, c in right if b == b2}
    if isinstance(expr, rel.Inverse):
        return {(b, a) for a, b in _naive(expr.operand, ctx)}
    if isinstance(expr, rel.Plus):
        return _closure(_naive(expr.operand, ctx))
    if isinstance(expr, rel.Optional):
        return _naive(expr.operand, ctx) | {(e.eid, e.eid) for e in events}
    if isinstance(expr, rel.Identity):
        return {(a, a) for a in _naive(expr.over, ctx)}
    if isinstance(expr, rel.Product):
        return {(a, b) for a in _naive(expr.left, ctx) for b in _naive(expr.right, ctx)}
    if isinstance(expr, rel.Empty):
        return set()
    raise TypeError(expr)


def _total_orders(items):
    for order in itertools.permutations(items):
        yield {(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))}, order


def naive_states(program, model):
    states = set()
    for traces in itertools.product(*(thread.traces for thread in program.threads)):
        events = list(program.initial) + [e for t in traces for e in t.events]
        statics = {name: {(a.eid, b.eid) for a in events for b in events if base.static_pair(name, a, b, program)} for name in base.STATIC_RELATIONS}
        statics.update({k: set(v) for k, v in base.dependency_pairs(traces).items()})
        takers = [e for e in events if e.takes_value]
        writes = [e for e in events if e.writes]
        sources = [[w for w in writes if w.address.physical == r.address.physical and w.eid != r.eid and w.write_value == r.read_value] for r in takers]
        locations = sorted({w.address.physical for w in writes})
        per_location = []
        for physical in locations:
            initial = [w for w in writes if w.is_initial and w.address.physical == physical]
            others = [w.eid for w in writes if not w.is_initial and w.address.physical == physical]
            per_location.append([({(initial[0].eid, o) for o in others} | pairs, (initial[0].eid,) + order) for pairs, order in _total_orders(others)])
        fences = [e.eid for e in events if e.fence == "sc"]
        for option in base.barrier_options(program, traces):
            for chosen in itertools.product(*sources):
                rf = {(w.eid, r.eid) for w, r in zip(chosen, takers)}
                for co_choice in itertools.product(*per_location):
                    co = set().union(*(pairs for pairs, _ in co_choice))
                    last = {physical: order[-1] for physical, (_, order) in zip(locations, co_choice)}
                    for sc, _ in _total_orders(fences):
                        ctx = {"events": events, "defs": {}, "base": dict(statics, rf=rf, co=co, sc=sc, bar_sync=set(option))}
                        for definition in model.definitions:
                            ctx["defs"][definition.name] = _naive(definition.relation, ctx)
                        consistent = True
                        for axiom in model.axioms:
                            value = _naive(axiom.relation, ctx)
                            if axiom.kind == "empty":
                                consistent &= not value
                            elif axiom.kind == "irreflexive":
                                consistent &= all(a != b for a, b in value)
                            else:
                                consistent &= all(a != b for a, b in _closure(value))
                        if consistent:
                            by_eid = {e.eid: e for e in events}
                            final = final_values(program, traces, {p: by_eid[w] for p, w in last.items()})
                            states.add(state_of(program, final))
    return states


_MENU = [
    st_("x", 1),
    st_("x", 2, "relaxed", "gpu"),
    st_("y", 1, "release", "cta"),
    st_("y", 2, "relaxed", "sys"),
    ld("a", "x"),
    ld("b", "y", "acquire", "gpu"),
    ld("c", "x", "relaxed", "cta"),
    ld("d", "y"),
    fence("sc", "gpu"),
    fence("acq_rel", "cta"),
    fence("sc", "cta"),
    inc("e", "x", "relaxed", "gpu"),
    bar(1),
    proxy_fence("alias"),
]


@st.composite
def _programs(draw, chunk=0):
    threads = []
    menu = _MENU[chunk % len(_MENU) :] + _MENU[: chunk % len(_MENU)]
    for _ in range(draw(st.integers(2, 3))):
        code = draw(st.lists(st.sampled_from(menu), min_size=1, max_size=3))
        threads.append((Placement(cta=draw(st.integers(0, 1))), code))
    reads = sum(1 for _, code in threads for ins in code if ins[0] in ("ld", "atom"))
    if reads > 3:
        threads = [(p, [ins for ins in code if ins[0] not in ("ld", "atom")] or [fence("sc")]) for p, code in threads]
    observed = [reg(n, ins[1]) for n, (_, code) in enumerate(threads) for ins in code if ins[0] in ("ld", "atom")]
    observed = list(dict.fromkeys(observed)) + [LocationTerm("x"), LocationTerm("y")]
    return build(threads, locations={"x": 0, "y": 0}, domain=(0, 1, 2), formula=TrueFormula(), observed=observed)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@settings(max_examples=50)
@given(data=st.data())
def test_explicit_engine_agrees_with_a_naive_interpreter(chunk, data):
    # Four chunks (the menu of instructions rotated) of 50 random programs each.
    program = data.draw(_programs(chunk))
    for model in (ptx.PTX_8_7, ptx.PTX_6_0):
        assert explicit.run(program, model).states == naive_states(program, model)


def test_naive_interpreter_on_the_manual_examples():
    # The same comparison on fixed programs, always run.
    for program in (store_buffering("sc"), message_passing("acq_rel", "acq_rel"), corr("relaxed"), two_writers("weak")):
        assert explicit.run(program, ptx.PTX_8_7).states == naive_states(program, ptx.PTX_8_7)
