"""The Z3 engine (memory_model/z3_engine.py) on hand-built programs and on the shared corpus.

The hand-built programs are the manual's own litmus tests of §8.10 (atomicity, LB, CoRR, MP, SB
with fence.sc against fence.acq_rel); their verdicts are the manual's sentences. The corpus
tests compare with ``expected.csv`` (herd's verdicts from Dat3M) and with the explicit engine.
"""

from __future__ import annotations

import csv
import itertools
import os
import statistics
import time
from pathlib import Path

import pytest

from ptxspec.memory_model import relations as rel
from ptxspec.memory_model import z3_engine
from ptxspec.memory_model.engine import state_holds
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
)

# ---- a tiny builder: straight-line threads, every read value from a given domain ---------------------


def _ld(register, location, order="weak", scope=None):
    return ("ld", register, location, order, scope)


def _st(location, value, order="weak", scope=None):
    return ("st", location, value, order, scope)


def _atom(register, location, op, operand, order="relaxed", scope="gpu"):
    return ("atom", register, location, op, operand, order, scope)


def _fence(kind, scope="sys"):
    return ("fence", kind, scope)


def _proxy_fence(kind):
    return ("proxy_fence", kind)


def _bar(op, barrier_id, count=None, level="cta"):
    return ("bar", op, barrier_id, count, level)


_ATOM_OPS = {"add": lambda old, x: old + x, "inc_unbounded": lambda old, x: old + 1, "exch": lambda old, x: x}


def build(name, initial, threads, condition, domain, placements=None, aliases=None):
    """A :class:`Program` whose threads are straight-line code; each read returns any value of
    ``domain[physical location]`` (one trace per combination), as a front end would enumerate them.
    ``aliases`` maps a virtual address to the location it aliases (§8.2.2, generic proxy)."""
    addresses = {loc: Address(loc, loc, loc) for loc in initial}
    for alias, target in (aliases or {}).items():
        addresses[alias] = Address(alias, target, alias)
    eid = itertools.count()
    initial_events = tuple(
        Event(
            eid=next(eid),
            thread=None,
            index=-1,
            instruction=f"init {loc}",
            writes=True,
            address=addresses[loc],
            proxy="generic",
            order="weak",
            write_value=value,
        )
        for loc, value in initial.items()
    )
    built = []
    for t, code in enumerate(threads):
        reads = [op for op in code if op[0] in ("ld", "atom")]
        traces = []
        for values in itertools.product(*(domain[addresses[op[2]].physical] for op in reads)):
            chosen = iter(values)
            registers: dict[str, int] = {}
            defined_by: dict[str, int] = {}
            data = set()
            events = []
            for index, op in enumerate(code):
                kind = op[0]
                common = dict(eid=next(eid), thread=t, index=index, instruction=" ".join(map(str, op)))
                if kind == "ld":
                    value = next(chosen)
                    registers[op[1]] = value
                    defined_by[op[1]] = common["eid"]
                    events.append(Event(**common, reads=True, address=addresses[op[2]], proxy="generic", order=op[3], scope=op[4], read_value=value))
                elif kind == "st":
                    value = op[2]
                    if isinstance(value, str):  # a register: a data dependency on the load that set it
                        data.add((defined_by[value], common["eid"]))
                        value = registers[value]
                    events.append(Event(**common, writes=True, address=addresses[op[1]], proxy="generic", order=op[3], scope=op[4], write_value=value))
                elif kind == "atom":
                    value = next(chosen)
                    registers[op[1]] = value
                    defined_by[op[1]] = common["eid"]
                    new = _ATOM_OPS[op[3]](value, op[4]) & MASK
                    events.append(
                        Event(
                            **common,
                            reads=True,
                            writes=True,
                            atomic=True,
                            address=addresses[op[2]],
                            proxy="generic",
                            order=op[5],
                            scope=op[6],
                            read_value=value,
                            write_value=new,
                        )
                    )
                elif kind == "fence":
                    events.append(Event(**common, fence=op[1], order=op[1], scope=op[2]))
                elif kind == "proxy_fence":
                    events.append(Event(**common, proxy_fence=op[1]))
                elif kind == "bar":
                    _, bar_op, barrier_id, count, level = op
                    phase = sum(1 for e in events if e.barrier is not None and e.barrier.level == level and e.barrier.barrier_id == barrier_id)
                    events.append(Event(**common, barrier=Barrier(level, bar_op, barrier_id, count, phase)))
            traces.append(Trace(thread=t, events=tuple(events), registers=registers, data=frozenset(data)))
        placement = (placements or {}).get(t, Placement(cta=t))
        built.append(Thread(index=t, name=f"P{t}", placement=placement, traces=tuple(traces)))
    observed = []

    def collect(formula):
        if isinstance(formula, Compare):
            for term in (formula.left, formula.right):
                if not isinstance(term, Constant) and term not in observed:
                    observed.append(term)
        elif isinstance(formula, Not):
            collect(formula.operand)
        elif isinstance(formula, (And, Or)):
            for item in formula.operands:
                collect(item)

    collect(condition.formula)
    return Program(name=name, source="<test>", addresses=addresses, initial=initial_events, threads=tuple(built), condition=condition, observed=tuple(observed))


def reg(thread, name):
    return RegisterTerm(thread, name)


def eq(term, value):
    return Compare("==", term, Constant(value))


# ---- an independent oracle: every candidate execution, the model evaluated on sets of pairs -----------


def _concrete_set(expr, sets, pairs, events):
    if isinstance(expr, rel.SetBase):
        return sets[expr.name]
    if isinstance(expr, rel.SetUnion):
        return _concrete_set(expr.left, sets, pairs, events) | _concrete_set(expr.right, sets, pairs, events)
    if isinstance(expr, rel.SetInter):
        return _concrete_set(expr.left, sets, pairs, events) & _concrete_set(expr.right, sets, pairs, events)
    if isinstance(expr, rel.SetDiff):
        return _concrete_set(expr.left, sets, pairs, events) - _concrete_set(expr.right, sets, pairs, events)
    if isinstance(expr, rel.Domain):
        return {a for a, _ in _concrete(expr.relation, sets, pairs, events)}
    if isinstance(expr, rel.Range):
        return {b for _, b in _concrete(expr.relation, sets, pairs, events)}
    raise TypeError(expr)


def _concrete(expr, sets, pairs, events):
    """The relation ``expr`` as a set of pairs (``pairs`` holds base relations and definitions)."""

    def go(e):
        return _concrete(e, sets, pairs, events)

    if isinstance(expr, (rel.Base, rel.Ref)):
        return pairs[expr.name]
    if isinstance(expr, rel.Union):
        return go(expr.left) | go(expr.right)
    if isinstance(expr, rel.Inter):
        return go(expr.left) & go(expr.right)
    if isinstance(expr, rel.Diff):
        return go(expr.left) - go(expr.right)
    if isinstance(expr, rel.Seq):
        right = go(expr.right)
        return {(a, b) for a, c in go(expr.left) for c2, b in right if c == c2}
    if isinstance(expr, rel.Inverse):
        return {(b, a) for a, b in go(expr.operand)}
    if isinstance(expr, rel.Plus):
        closure = set(go(expr.operand))
        while True:
            more = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
            if not more:
                return closure
            closure |= more
    if isinstance(expr, rel.Optional):
        return go(expr.operand) | {(e, e) for e in events}
    if isinstance(expr, rel.Identity):
        return {(e, e) for e in _concrete_set(expr.over, sets, pairs, events)}
    if isinstance(expr, rel.Product):
        left = _concrete_set(expr.left, sets, pairs, events)
        return {(a, b) for a in left for b in _concrete_set(expr.right, sets, pairs, events)}
    if isinstance(expr, rel.Empty):
        return set()
    raise TypeError(expr)


def _acyclic(pairs):
    closure = set(pairs)
    while True:
        if any(a == b for a, b in closure):
            return False
        more = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not more:
            return True
        closure |= more


def _orders(items):
    """Every strict total order over ``items`` as a set of pairs."""
    for permutation in itertools.permutations(items):
        yield {(permutation[i], permutation[j]) for i in range(len(permutation)) for j in range(i + 1, len(permutation))}


def _vocabulary(program, events):
    """Base sets and static relations of the chosen events, from memory_model/base.py (as eids)."""
    from ptxspec.memory_model import base

    sets = {name: set() for name in base.SET_NAMES}
    for event in events:
        for name in base.event_sets(event):
            sets[name].add(event.eid)
    pairs = {name: {(a.eid, b.eid) for a in events for b in events if base.static_pair(name, a, b, program)} for name in base.STATIC_RELATIONS}
    return sets, pairs


def brute_force_states(program, model):
    """Final states of the consistent executions, by enumerating candidates (straight-line, no barriers)."""
    states = set()
    for traces in itertools.product(*(thread.traces for thread in program.threads)):
        events = list(program.initial) + [event for trace in traces for event in trace.events]
        by_eid = {event.eid: event for event in events}
        sets, base = _vocabulary(program, events)
        for name, dependencies in _dependencies(traces).items():
            base[name] = set(dependencies)
        readers = [e for e in events if e.takes_value]
        sources = [
            [w.eid for w in events if w.writes and w.eid != r.eid and w.address.physical == r.address.physical and w.write_value == r.read_value]
            for r in readers
        ]
        locations = sorted({e.address.physical for e in events if e.writes})
        writes = {loc: [e.eid for e in events if e.writes and e.address.physical == loc and not e.is_initial] for loc in locations}
        initial = {e.address.physical: e.eid for e in program.initial}
        fences = [e.eid for e in events if e.fence == "sc"]
        for choice in itertools.product(*sources):
            rf = {(w, r.eid) for w, r in zip(choice, readers)}
            for co_parts in itertools.product(*(list(_orders(writes[loc])) for loc in locations)):
                co = set()
                for loc, part in zip(locations, co_parts):
                    co |= part | {(initial[loc], w) for w in writes[loc]}
                for sc in _orders(fences):
                    pairs = dict(base, rf=rf, co=co, sc=sc, bar_sync=set())
                    for definition in model.definitions:
                        pairs[definition.name] = _concrete(definition.relation, sets, pairs, list(by_eid))
                    if all(_axiom_holds(axiom, sets, pairs, list(by_eid)) for axiom in model.axioms):
                        states.add(_final_state(program, traces, co, by_eid))
    return states


def _dependencies(traces):
    from ptxspec.memory_model import base

    return base.dependency_pairs(traces)


def _axiom_holds(axiom, sets, pairs, events):
    relation = _concrete(axiom.relation, sets, pairs, events)
    if axiom.kind == "empty":
        return not relation
    if axiom.kind == "irreflexive":
        return not any(a == b for a, b in relation)
    return _acyclic(relation)


def _final_state(program, traces, co, by_eid):
    state = []
    for term in program.observed:
        if isinstance(term, RegisterTerm):
            state.append((term, traces[term.thread].registers.get(term.register, 0) & MASK))
        else:
            physical = program.addresses[term.name].physical
            writes = [e for e in by_eid.values() if e.writes and e.address.physical == physical]
            last = [w for w in writes if not any((w.eid, other.eid) in co for other in writes)]
            state.append((term, last[0].write_value & MASK))
    return tuple(state)


# ---- random models: the Z3 interpretation of every operator against the brute-force one ---------------

_SET_NAMES = ("R", "W", "M", "A", "I", "F_SC")
_RELATION_NAMES = ("po", "rf", "co", "loc", "same_thread", "sc")


def _random_set(rng, depth):
    if depth == 0 or rng.random() < 0.4:
        return rel.SetBase(rng.choice(_SET_NAMES))
    kind = rng.randrange(5)
    if kind == 0:
        return rel.SetUnion(_random_set(rng, depth - 1), _random_set(rng, depth - 1))
    if kind == 1:
        return rel.SetInter(_random_set(rng, depth - 1), _random_set(rng, depth - 1))
    if kind == 2:
        return rel.SetDiff(_random_set(rng, depth - 1), _random_set(rng, depth - 1))
    if kind == 3:
        return rel.Domain(_random_relation(rng, depth - 1))
    return rel.Range(_random_relation(rng, depth - 1))


def _random_relation(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        return rel.Base(rng.choice(_RELATION_NAMES))
    kind = rng.randrange(11)
    sub = lambda: _random_relation(rng, depth - 1)  # noqa: E731
    return [
        lambda: rel.Union(sub(), sub()),
        lambda: rel.Inter(sub(), sub()),
        lambda: rel.Diff(sub(), sub()),
        lambda: rel.Seq(sub(), sub()),
        lambda: rel.Inverse(sub()),
        lambda: rel.Plus(sub()),
        lambda: rel.Optional(sub()),
        lambda: rel.Identity(_random_set(rng, depth - 1)),
        lambda: rel.Product(_random_set(rng, depth - 1), _random_set(rng, depth - 1)),
        lambda: rel.Seq(sub(), rel.Identity(_random_set(rng, depth - 1))),
        lambda: rel.Empty(),
    ][kind]()


_THIN = (
    rel.Base("rf"),
    rel.Base("co"),
    rel.Seq(rel.Inverse(rel.Base("rf")), rel.Base("co")),
    rel.Union(rel.Base("po"), rel.Base("rf")),
    rel.Seq(rel.Base("rf"), rel.Base("po")),
    rel.Union(rel.Base("sc"), rel.Seq(rel.Base("po"), rel.Base("rf"))),
)


def random_model(seed):
    """A model of two definitions and three axioms drawn from every operator of the DSL."""
    import random

    rng = random.Random(seed)
    first = _random_relation(rng, 3)
    second = rel.Union(rel.Ref("d0"), _random_relation(rng, 2)) if rng.random() < 0.5 else _random_relation(rng, 3)
    definitions = [rel.Definition("d0", first, "test"), rel.Definition("d1", second, "test")]
    axioms = []
    for number in range(3):
        relation = rng.choice([rel.Ref("d0"), rel.Ref("d1"), _random_relation(rng, 3)])
        # Thin the relation with a run-time one so that axioms rule out some executions, not all.
        relation = rel.Inter(relation, rng.choice(_THIN))
        kind = rng.choice(("acyclic", "acyclic", "irreflexive", "empty"))
        axioms.append(rel.Axiom(f"axiom{number}", kind, relation, "test"))
    return rel.Model(f"random{seed}", definitions, axioms)


# ---- the manual's litmus tests (§8.10), under the model of ptx.py ------------------------------------

SYS = "sys"


def _models():
    from ptxspec.memory_model import ptx

    return {"ptx-8.7": ptx.PTX_8_7, "ptx-6.0": ptx.PTX_6_0}


def _manual_tests():
    """(program, expected ok) for the litmus tests of §8.10, with the verdict the manual's text gives."""
    x, y = LocationTerm("x"), LocationTerm("y")
    tests = []
    # §8.10.3 litmus 1: "atomicity is guaranteed when the operations are morally strong".
    tests.append(
        (
            build(
                "atomicity-1",
                {"x": 0},
                [[_atom("r0", "x", "add", 1, scope=SYS)], [_atom("r0", "x", "add", 1, scope=SYS)]],
                Condition("forall", eq(x, 2)),
                {"x": [0, 1, 2]},
            ),
            True,
        )
    )
    # §8.10.3 litmus 2: "atomicity is not guaranteed if the operations are not morally strong"
    # (atom.cta and atom.gpu in different CTAs): FINAL STATE x == 1 OR x == 2.
    two = [[_atom("r0", "x", "add", 1, scope="cta")], [_atom("r0", "x", "add", 1, scope="gpu")]]
    tests.append((build("atomicity-2", {"x": 0}, two, Condition("exists", eq(x, 1)), {"x": [0, 1, 2]}), True))
    tests.append((build("atomicity-2-forall", {"x": 0}, two, Condition("forall", Or((eq(x, 1), eq(x, 2)))), {"x": [0, 1, 2]}), True))
    # §8.10.4 LB: each thread copies what it read; "if each variable is initially zero, the final
    # result should also be zero" (the domain offers 1 to tempt a self-satisfying speculation).
    lb = [[_ld("r0", "x"), _st("y", "r0")], [_ld("r1", "y"), _st("x", "r1")]]
    tests.append((build("LB", {"x": 0, "y": 0}, lb, Condition("forall", And((eq(x, 0), eq(y, 0)))), {"x": [0, 1], "y": [0, 1]}), True))
    # §8.10.5 CoRR: "R2 cannot read the initial value of x in such an execution".
    corr = [[_st("x", 1, "relaxed", SYS)], [_ld("r0", "x", "relaxed", SYS), _ld("r1", "x", "relaxed", SYS)]]
    tests.append((build("CoRR", {"x": 0}, corr, Condition("exists", And((eq(reg(1, "r0"), 1), eq(reg(1, "r1"), 0)))), {"x": [0, 1]}), False))
    # §8.10.6 MP: "IF %r0 == 1 THEN %r1 == 1" (fence.sys read as fence.sc.sys; a fence.acq_rel
    # makes the same release and acquire patterns).
    for kind in ("sc", "acq_rel"):
        mp = [[_st("x", 1), _fence(kind), _st("y", 1, "relaxed", SYS)], [_ld("r0", "y", "relaxed", SYS), _fence(kind), _ld("r1", "x")]]
        tests.append(
            (
                build(
                    f"MP-{kind}",
                    {"x": 0, "y": 0},
                    mp,
                    Condition("forall", Or((Compare("!=", reg(1, "r0"), Constant(1)), eq(reg(1, "r1"), 1)))),
                    {"x": [0, 1], "y": [0, 1]},
                ),
                True,
            )
        )
    # MP without fences and with weak flag accesses: nothing synchronizes.
    mp = [[_st("x", 1), _st("y", 1)], [_ld("r0", "y"), _ld("r1", "x")]]
    tests.append(
        (build("MP-weak", {"x": 0, "y": 0}, mp, Condition("exists", And((eq(reg(1, "r0"), 1), eq(reg(1, "r1"), 0)))), {"x": [0, 1], "y": [0, 1]}), True)
    )
    # §8.10.6 SB: with fence.sc "%r0 == 1 OR %r1 == 1"; "if each fence.sc were replaced by
    # fence.acq_rel ... both R1 and R2 may return the initial value 0".
    for kind, quantifier, expected in (("sc", "forall", True), ("acq_rel", "exists", True)):
        sb = [[_st("x", 1), _fence(kind), _ld("r0", "y")], [_st("y", 1), _fence(kind), _ld("r1", "x")]]
        formula = Or((eq(reg(0, "r0"), 1), eq(reg(1, "r1"), 1)))
        if quantifier == "exists":
            formula = And((eq(reg(0, "r0"), 0), eq(reg(1, "r1"), 0)))
        tests.append(
            (
                build(
                    f"SB-{kind}",
                    {"x": 0, "y": 0},
                    sb,
                    Condition(quantifier, formula),
                    {"x": [0, 1], "y": [0, 1]},
                    placements={0: Placement(cta=0), 1: Placement(cta=0)},
                ),
                expected,
            )
        )
    # §8.10.6 CoWR: "virtual aliases require an alias proxy fence along the synchronization path".
    cowr = [[_st("a", 1), _proxy_fence("alias"), _ld("r1", "b")]]
    tests.append((build("CoWR-alias-fence", {"a": 0}, cowr, Condition("forall", eq(reg(0, "r1"), 1)), {"a": [0, 1]}, aliases={"b": "a"}), True))
    cowr = [[_st("a", 1), _ld("r1", "b")]]
    tests.append((build("CoWR-alias-no-fence", {"a": 0}, cowr, Condition("exists", eq(reg(0, "r1"), 0)), {"a": [0, 1]}, aliases={"b": "a"}), True))
    return tests


MANUAL_TESTS = _manual_tests()


@pytest.mark.parametrize("program,expected", MANUAL_TESTS, ids=[p.name for p, _ in MANUAL_TESTS])
def test_manual_litmus(program, expected):
    model = _models()["ptx-8.7"]
    result = z3_engine.run(program, model, want_witness=True, want_why=True)
    assert result.engine == "z3"
    assert result.ok is expected
    assert result.states == frozenset(brute_force_states(program, model))
    assert result.positive + result.negative == len(result.states)
    _check_witness_and_why(program, model, result)


def _check_witness_and_why(program, model, result):
    """The witness shows the outcome the condition asks about; ``why`` names axioms that suffice."""
    condition = program.condition
    outcome = condition.quantifier != "forall"
    interesting = [s for s in result.states if state_holds(condition.formula, s) == outcome]
    if interesting:
        assert result.witness is not None
        assert state_holds(condition.formula, tuple(result.witness.final.items())) == outcome
        assert tuple(result.witness.final.items()) in result.states
        assert result.why is None
        return
    assert result.witness is None
    assert result.why is not None
    # The named axioms alone forbid the outcome, and each of them is needed.
    names = set(result.why)
    assert names <= {axiom.name for axiom in model.axioms}

    def outcomes(kept):
        reduced = rel.Model("reduced", model.definitions, [a for a in model.axioms if a.name in kept])
        states = z3_engine.run(program, reduced).states
        return [s for s in states if state_holds(condition.formula, s) == outcome]

    assert not outcomes(names)
    for name in names:
        assert outcomes(names - {name}), f"{name} is not needed"


MANUAL_WHY = {
    # §8.10.3: "Atomicity is guaranteed when the operations are morally strong."
    "atomicity-1": ("Atomicity-RMW",),
    # §8.10.4: "... such speculation would become self-fulfilling, and hence is forbidden."
    "LB": ("No-Thin-Air",),
    # §8.10.5: CoRR "demonstrates one consequence of this guarantee" (SC per location).
    "CoRR": ("SC-per-location",),
    # §8.10.6: "The causality axiom then guarantees that R2 cannot read from any write that
    # precedes W1 in coherence order" (MP); "The causality axiom ensures that R2 cannot read ..." (SB).
    "MP-sc": ("Causality",),
    "MP-acq_rel": ("Causality",),
    "SB-sc": ("Causality",),
    # §8.10.6, CoWR: "Virtual aliases require an alias proxy fence along the synchronization path."
    "CoWR-alias-fence": ("Causality",),
}


@pytest.mark.parametrize("name,axioms", sorted(MANUAL_WHY.items()))
def test_manual_why_names_the_axiom_the_manual_gives(name, axioms):
    program = next(p for p, _ in MANUAL_TESTS if p.name == name)
    assert z3_engine.run(program, _models()["ptx-8.7"], want_why=True).why == axioms


@pytest.mark.parametrize("model_name", ["ptx-8.7", "ptx-6.0"])
@pytest.mark.parametrize("program", [p for p, _ in MANUAL_TESTS], ids=[p.name for p, _ in MANUAL_TESTS])
def test_states_agree_with_brute_force(program, model_name):
    model = _models()[model_name]
    assert z3_engine.run(program, model).states == frozenset(brute_force_states(program, model))


def _random_programs():
    mp = [[_st("x", 1), _fence("sc"), _st("y", 1, "relaxed", SYS)], [_ld("r0", "y", "relaxed", SYS), _fence("sc"), _ld("r1", "x")]]
    atoms = [[_atom("r0", "x", "add", 1), _st("x", 5)], [_atom("r1", "x", "add", 1)]]
    return [
        build("MP+sc", {"x": 0, "y": 0}, mp, Condition("exists", And((eq(reg(1, "r0"), 1), eq(reg(1, "r1"), 0)))), {"x": [0, 1], "y": [0, 1]}),
        build("atoms", {"x": 0}, atoms, Condition("exists", eq(LocationTerm("x"), 2)), {"x": [0, 1, 2, 5, 6]}),
    ]


@pytest.mark.parametrize("chunk", range(2))
def test_random_models_agree_with_brute_force(chunk):
    """Every operator of the DSL: random definitions and axioms, Z3 against sets of pairs."""
    _random_models(chunk)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(2, 8))
def test_random_models_agree_with_brute_force_more(chunk):
    _random_models(chunk)


def _random_models(chunk):
    programs = _random_programs()
    for seed in range(chunk * 40, chunk * 40 + 40):
        model = random_model(seed)
        for program in programs:
            expected = frozenset(brute_force_states(program, model))
            assert z3_engine.run(program, model).states == expected, (seed, program.name)


def test_random_models_are_not_trivial():
    """The random models above forbid some states but not all, for a good share of seeds."""
    strict = 0
    for program in _random_programs():
        everything = z3_engine.run(program, rel.Model("none", [], [])).states
        strict += sum(1 for seed in range(60) if 0 < len(z3_engine.run(program, random_model(seed)).states) < len(everything))
    assert strict >= 8


def test_timeout_is_unknown_not_a_guess():
    program = MANUAL_TESTS[0][0]
    result = z3_engine.run(program, _models()["ptx-8.7"], timeout_s=0.0)
    assert result.ok is None and result.states is None and result.positive is None and result.negative is None
    assert result.engine == "z3"


# ---- the shared corpus ----------------------------------------------------------------------------------


def _corpus_dir() -> Path:
    override = os.environ.get("PTXSPEC_LITMUS_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m"


def _corpus() -> list[tuple[str, bool]]:
    table = _corpus_dir() / "expected.csv"
    if not table.exists():
        return []
    with open(table, newline="") as handle:
        return [(row["test"], row["expected"] == "1") for row in csv.DictReader(handle)]


CORPUS = _corpus()
corpus = pytest.mark.skipif(not CORPUS, reason="the shared litmus corpus is absent")

DISAGREEMENTS = {
    "Manual/LB+RMW-a.litmus": (
        "Forbidden by Causality (§8.10.6 item 1, 'If a read R precedes an overlapping write W in "
        "causality order, then R cannot read from W'): P1's atom reads P0's st.weak x; the atom is "
        "observed (morally strong rf) by P2's ld x, po-before P2's st.release y, which P0's "
        "ld.acquire y reads, po-before the st.weak: the atom precedes the store it reads from. "
        "Dat3M (verdict 1) splits an atomic into a read and a write event and its observation "
        "order is not transitive, so the read half is never causally before anything here; with "
        "one event per atomic (mm.md) the manual's sentence forbids it. Both engines agree."
    ),
}
"""Tests whose expected verdict the model of ptx.py does not give, with the reason (both engines agree)."""


def _load(name):
    from ptxspec.memory_model import lowering

    return lowering.load(_corpus_dir() / name)


def _chunks(count):
    return [CORPUS[i::count] for i in range(count)] if CORPUS else [[]]


def _corpus_chunk(model_name, chunk, compare_verdicts):
    """z3 on each test of the chunk: the expected verdict (8.7) and the explicit engine's states."""
    from ptxspec.memory_model import explicit

    model = _models()[model_name]
    times = []
    mismatches = []
    for name, expected in chunk:
        program = _load(name)
        start = time.perf_counter()
        ours = z3_engine.run(program, model)
        times.append(time.perf_counter() - start)
        if compare_verdicts:
            if name in DISAGREEMENTS:
                assert ours.ok is (not expected), f"{name} now gives the expected verdict: drop it from DISAGREEMENTS"
            elif ours.ok is not expected:
                mismatches.append((name, ours.ok, expected))
        theirs = explicit.run(program, model)
        assert ours.states == theirs.states, (name, sorted(map(str, ours.states ^ theirs.states)))
        assert (ours.ok, ours.positive, ours.negative) == (theirs.ok, theirs.positive, theirs.negative), name
    print(
        f"z3 ({model_name}) on {len(times)} corpus tests: total {sum(times):.2f} s,"
        f" median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.0f} ms"
    )
    assert not mismatches


@corpus
@pytest.mark.parametrize("chunk", _chunks(6), ids=lambda chunk: f"{len(chunk)}-tests-from-{chunk[0][0] if chunk else ''}")
def test_corpus_verdicts_and_agreement(chunk):
    """Every corpus test gives the verdict of expected.csv (documented disagreements aside), and
    both interpreters of the one model give the same final states."""
    _corpus_chunk("ptx-8.7", chunk, compare_verdicts=True)


@pytest.mark.heavy
@corpus
@pytest.mark.parametrize("chunk", _chunks(4), ids=lambda chunk: f"{len(chunk)}-tests-from-{chunk[0][0] if chunk else ''}")
def test_corpus_agreement_ptx60(chunk):
    _corpus_chunk("ptx-6.0", chunk, compare_verdicts=False)


def check_witness(program, model, execution):
    """The witness is a consistent execution: its relations are those the model defines from its
    own rf, co, sc and barrier synchronization, every axiom holds on them, and its final state is
    what its traces and coherence order leave."""
    events = list(execution.events)
    eids = [event.eid for event in events]
    assert sorted(eids) == sorted([event.eid for event in program.initial] + [event.eid for trace in execution.traces for event in trace.events])
    sets, base = _vocabulary(program, events)
    base.update({name: set(pairs) for name, pairs in _dependencies(execution.traces).items()})
    relations = execution.relations
    by_eid = {event.eid: event for event in events}
    # rf: each reader reads exactly one write of its location and value.
    for reader in (e for e in events if e.takes_value):
        sources = [w for w, r in relations["rf"] if r == reader.eid]
        assert len(sources) == 1
        write = by_eid[sources[0]]
        assert write.address.physical == reader.address.physical and write.write_value == reader.read_value
    pairs = dict(base, rf=set(relations["rf"]), co=set(relations["co"]), sc=set(relations["sc"]))
    pairs["bar_sync"] = set(relations.get("barrier_synchronization", set()))
    assert pairs["po"] == set(relations["po"])
    for definition in model.definitions:
        pairs[definition.name] = _concrete(definition.relation, sets, pairs, eids)
        assert pairs[definition.name] == set(relations[definition.name]), definition.name
    for axiom in model.axioms:
        assert _axiom_holds(axiom, sets, pairs, eids), axiom.name
    assert tuple(execution.final.items()) == _final_state(program, execution.traces, pairs["co"], by_eid)


@pytest.mark.parametrize("program,expected", MANUAL_TESTS, ids=[p.name for p, _ in MANUAL_TESTS])
def test_manual_witness_is_consistent(program, expected):
    model = _models()["ptx-8.7"]
    result = z3_engine.run(program, model, want_witness=True)
    if result.witness is not None:
        check_witness(program, model, result.witness)


def _corpus_why_and_witness(names):
    model = _models()["ptx-8.7"]
    for name in names:
        program = _load(name)
        result = z3_engine.run(program, model, want_witness=True, want_why=True)
        if result.witness is not None:
            check_witness(program, model, result.witness)
        _check_witness_and_why(program, model, result)


@corpus
def test_corpus_why_and_witness_sample():
    """Witnesses and unsat cores on a few corpus tests of each kind (all of them: heavy below)."""
    _corpus_why_and_witness([name for name, _ in CORPUS][::15])


@pytest.mark.heavy
@corpus
@pytest.mark.parametrize("chunk", _chunks(6), ids=lambda chunk: f"{len(chunk)}-tests-from-{chunk[0][0] if chunk else ''}")
def test_corpus_why_and_witness(chunk):
    _corpus_why_and_witness([name for name, _ in chunk])


# ---- barriers: the declarative encoding against the explicit simulation of base.barrier_options --------


def random_barrier_program(seed):
    """Two or three threads of one CTA (or two CTAs) mixing weak stores and loads with CTA barriers
    (sync, arrive, red; with and without a thread count) or cluster arrive/wait."""
    import random

    rng = random.Random(seed)
    threads = []
    count = rng.choice([None, None, 1, 2, 3])
    level = "cluster" if rng.random() < 0.2 else "cta"
    for t in range(rng.choice([2, 3])):
        code = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.3:
                code.append(_st(rng.choice("xy"), t + 1))
            elif roll < 0.55:
                code.append(_ld(f"r{len(code)}", rng.choice("xy")))
            elif level == "cluster":
                code.append(_bar(rng.choice(["arrive", "wait"]), 0, None, "cluster"))
            else:
                code.append(_bar(rng.choice(["sync", "sync", "arrive", "red"]), rng.choice([0, 0, 1]), count))
        threads.append(code)
    placements = {t: Placement(cta=rng.choice([0, 0, 1]) if t else 0, cluster=0) for t in range(len(threads))}
    loads = [reg(t, op[1]) for t, code in enumerate(threads) for op in code if op[0] == "ld"]
    formula = And(tuple(eq(term, 0) for term in loads)) if loads else Compare("==", LocationTerm("x"), Constant(0))
    values = {"x": [0] + [t + 1 for t in range(len(threads))], "y": [0] + [t + 1 for t in range(len(threads))]}
    return build(f"bar{seed}", {"x": 0, "y": 0}, threads, Condition("exists", formula), values, placements=placements)


@pytest.mark.parametrize("chunk", [0, 1, pytest.param(2, marks=pytest.mark.heavy), pytest.param(3, marks=pytest.mark.heavy)])
def test_random_barrier_programs_agree_with_explicit(chunk):
    from ptxspec.memory_model import explicit

    model = _models()["ptx-8.7"]
    for seed in range(chunk * 40, chunk * 40 + 40):
        program = random_barrier_program(seed)
        ours = z3_engine.run(program, model)
        theirs = explicit.run(program, model)
        assert ours.states == theirs.states, (seed, sorted(map(str, ours.states ^ theirs.states)))


# ---- mutants of the corpus: orders, scopes, fences, placements and barriers changed one at a time -------

_SWAPS = (
    ("relaxed", "acquire"),
    ("relaxed", "release"),
    ("weak", "relaxed.gpu"),
    ("cta", "gpu"),
    ("gpu", "cta"),
    ("acquire", "relaxed"),
    ("release", "relaxed"),
    ("sys", "cta"),
    ("fence.sc", "fence.acq_rel"),
    ("acq_rel", "sc"),
    ("cta 1", "cta 0"),
    ("cta 0", "cta 1"),
    ("sync", "arrive"),
    ("arrive", "sync"),
)


def _mutants(seed, per_test):
    """Litmus texts made from the corpus by one substitution each (those the front end accepts)."""
    import random
    import re

    from ptxspec.memory_model import lowering

    rng = random.Random(seed)
    for name, _ in CORPUS:
        text = (_corpus_dir() / name).read_text()
        for _ in range(per_test):
            old, new = rng.choice(_SWAPS)
            spots = [match.start() for match in re.finditer(re.escape(old), text)]
            if not spots:
                continue
            at = rng.choice(spots)
            try:
                program = lowering.load(text[:at] + new + text[at + len(old) :])
            except Exception:  # noqa: BLE001 - a mutant the front end rejects is simply skipped
                continue
            if sum(len(thread.traces) for thread in program.threads) <= 40:
                yield f"{name}: {old} -> {new}", program


def _mutant_agreement(seed, per_test, stride=1):
    from ptxspec.memory_model import explicit

    model = _models()["ptx-8.7"]
    checked = 0
    for number, (label, program) in enumerate(_mutants(seed, per_test)):
        if number % stride:
            continue
        ours = z3_engine.run(program, model)
        theirs = explicit.run(program, model)
        assert ours.states == theirs.states, (label, sorted(map(str, ours.states ^ theirs.states)))
        checked += 1
    assert checked > 0


@corpus
def test_corpus_mutants_agree_with_explicit_sample():
    _mutant_agreement(seed=0, per_test=1, stride=4)


@pytest.mark.heavy
@corpus
@pytest.mark.parametrize("seed", range(1, 5))
def test_corpus_mutants_agree_with_explicit(seed):
    _mutant_agreement(seed=seed, per_test=3)
