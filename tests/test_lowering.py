"""Lowering litmus tests to traces: corpus invariants and hand-made spot checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.memory_model import litmus, lowering
from ptxspec.semantics import atomics
from ptxspec.memory_model.program import MASK, Address, Barrier, Constant, LocationTerm, Program, RegisterTerm
from ptxspec.spec.errors import PtxSpecError

CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m"))
CORPUS_FILES = sorted(CORPUS.rglob("*.litmus")) if CORPUS.is_dir() else []


def _program(
    body: str, init: str = "x=0; y=0;", header: str = "P0@cta 0,gpu 0 | P1@cta 0,gpu 0", condition: str = "exists (x == 0)", bound: int = 2
) -> Program:
    return lowering.lower(litmus.parse(f"PTX t\n{{ {init} }}\n {header} ;\n{body}\n{condition}\n"), unroll_bound=bound)


def _traces(program: Program, thread: int) -> list[list[tuple]]:
    """Each trace as a list of (instruction, read value, write value)."""
    return [[(e.instruction, e.read_value, e.write_value) for e in trace.events] for trace in program.threads[thread].traces]


def _check_invariants(program: Program) -> None:
    eids = [e.eid for e in program.initial] + [e.eid for th in program.threads for tr in th.traces for e in tr.events]
    assert len(eids) == len(set(eids)), "event ids are unique across the program"
    physical = [e.address.physical for e in program.initial]
    assert len(physical) == len(set(physical)) == len({a.physical for a in program.addresses.values()})
    writable: dict[str, set[int]] = {e.address.physical: {e.write_value} for e in program.initial}
    for thread in program.threads:
        keys = set()
        for trace in thread.traces:
            key = tuple((e.instruction, e.read_value, e.write_value, e.barrier) for e in trace.events)
            key += tuple(sorted(trace.registers.items()))
            assert trace.thread == thread.index
            for i, event in enumerate(trace.events):
                assert (event.thread, event.index) == (thread.index, i)
                if event.writes:
                    assert event.write_value is not None
                    writable[event.address.physical].add(event.write_value)
                if event.takes_value:
                    assert event.read_value is not None and 0 <= event.read_value <= MASK
            own = {e.eid for e in trace.events}
            for a, b in trace.data | trace.ctrl:
                assert a in own and b in own and a < b
            keys.add((key, trace.data and tuple(sorted(trace.data)), tuple(sorted(trace.ctrl))))
        assert len(keys) == len(thread.traces), "traces are deduplicated"
    for thread in program.threads:
        for trace in thread.traces:
            for event in trace.events:
                if event.takes_value:
                    assert event.read_value in writable[event.address.physical], "reads return writable values"
    assert not any(isinstance(t, Constant) for t in program.observed)
    assert len(set(program.observed)) == len(program.observed)


@pytest.mark.skipif(not CORPUS_FILES, reason="litmus corpus not present")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file_lowers(path):
    program = lowering.load(path)
    _check_invariants(program)
    assert program.name == litmus.parse_file(path).name
    assert all(th.traces for th in program.threads)
    assert sum(len(th.traces) for th in program.threads) < 400


def test_message_passing_traces():
    program = _program(" st.weak x, 1 | ld.acquire.gpu r0, y ;\n st.release.gpu y, 1 | ld.weak r1, x ;", condition="exists (P1:r0 == 1 /\\ P1:r1 == 0)")
    assert _traces(program, 0) == [[("st.weak x, 1", None, 1), ("st.release.gpu y, 1", None, 1)]]
    reader = sorted(_traces(program, 1))
    assert reader == [[("ld.acquire.gpu r0, y", a, None), ("ld.weak r1, x", b, None)] for a in (0, 1) for b in (0, 1)]
    registers = sorted(tuple(sorted(t.registers.items())) for t in program.threads[1].traces)
    assert registers == [(("r0", a), ("r1", b)) for a in (0, 1) for b in (0, 1)]
    assert program.observed == (RegisterTerm(1, "r0"), RegisterTerm(1, "r1"))
    first = program.threads[1].traces[0].events[0]
    assert (first.reads, first.writes, first.order, first.scope, first.proxy) == (True, False, "acquire", "gpu", "generic")
    assert [e.eid for e in program.initial] == [0, 1]
    assert [(e.write_value, e.thread, e.index, e.order, e.proxy) for e in program.initial] == [(0, None, -1, "weak", "generic")] * 2
    _check_invariants(program)


def test_cas_success_and_failure():
    program = _program(" atom.relaxed.gpu.cas r0, x, 0, 5 | st.weak x, 7 ;\n | ld.weak r1, x ;", header="P0@cta 0,gpu 0 | P1@cta 1,gpu 0")
    events = sorted((e.read_value, e.reads, e.writes, e.atomic, e.write_value, t.registers["r0"]) for t in program.threads[0].traces for e in t.events)
    # x may hold 0 (initial), 7 (the store) and 5 (a successful CAS), but the CAS never reads the 5
    # it writes itself (a value derived through itself, §8.10.4): it succeeds on 0, fails on 7.
    assert events == [(0, True, True, True, 5, 0), (7, True, False, True, None, 7)]
    assert {e.read_value for t in program.threads[1].traces for e in t.events if e.reads} == {0, 5, 7}


def test_red_and_atom_compute_the_written_value():
    program = _program(" red.relaxed.gpu.add x, 3 | atom.relaxed.gpu.exch r1, x, 10 ;")
    reds = sorted((e.read_value, e.write_value, e.reads, e.writes, e.atomic, e.takes_value) for t in program.threads[0].traces for e in t.events)
    # red reads 0 or 10 (never its own 3); exch reads 0 or 3 (never its own 10).
    assert reds == [(0, 3, False, True, True, True), (10, 13, False, True, True, True)]
    exch = sorted((e.read_value, e.write_value) for t in program.threads[1].traces for e in t.events)
    assert exch == [(0, 10), (3, 10)]


def test_two_increments_give_a_finite_domain():
    program = _program(" atom.relaxed.gpu.add r0, x, 1 | atom.relaxed.gpu.add r0, x, 1 ;")
    for thread in program.threads:
        assert sorted(e.read_value for t in thread.traces for e in t.events) == [0, 1]


def test_spin_loop_is_cut_at_the_bound():
    body = " st.weak x, 1 | LC00: ;\n | ld.weak r0, x ;\n | beq r0, 0, LC00 ;"
    for bound in (0, 1, 2, 3):
        program = _program(body, bound=bound)
        assert program.truncated
        assert program.unroll_bound == bound
        # A trace reads 0 k times (k <= bound), then 1.
        assert sorted(len(t.events) for t in program.threads[1].traces) == list(range(1, bound + 2))
        for trace in program.threads[1].traces:
            assert [e.read_value for e in trace.events] == [0] * (len(trace.events) - 1) + [1]
            reads = [e.eid for e in trace.events]
            assert trace.ctrl == {(a, b) for i, a in enumerate(reads) for b in reads[i + 1 :]}


def test_forward_branches_are_not_truncated():
    program = _program(" ld.weak r0, x | st.weak x, 1 ;\n bne r0, 0, LC00 | ;\n st.weak y, 1 | ;\n LC00: | ;\n st.weak y, 2 | ;")
    assert not program.truncated
    shapes = sorted(tuple(e.instruction for e in t.events) for t in program.threads[0].traces)
    assert shapes == [("ld.weak r0, x", "st.weak y, 1", "st.weak y, 2"), ("ld.weak r0, x", "st.weak y, 2")]
    for trace in program.threads[0].traces:
        read = trace.events[0].eid
        assert trace.ctrl == {(read, e.eid) for e in trace.events[1:]}
        assert trace.data == frozenset()


def test_data_dependencies_follow_registers():
    program = _program(
        " ld.weak r0, x | st.weak x, 2 ;\n add r1, r0, 1 | ;\n mov r2, 4 | ;\n st.weak y, r1 | ;\n st.weak y, r2 | ;\n atom.relaxed.gpu.add r3, y, r1 | ;"
    )
    for trace in program.threads[0].traces:
        ld, st1, st2, atom = trace.events
        assert st1.write_value == (ld.read_value + 1) & MASK
        assert trace.data == {(ld.eid, st1.eid), (ld.eid, atom.eid)}
        assert atom.write_value == (atom.read_value + ld.read_value + 1) & MASK


def test_aliases_map_to_one_physical_location():
    program = _program(
        " st.weak x, 1 | sust.weak s, 2 ;\n ld.weak r0, y | tld.weak r1, t ;",
        init="x=3; y @ generic aliases x; s @ surface aliases y; t @ texture aliases x; z = 1;",
    )
    assert program.addresses["x"] == Address("x", "x", "x", "generic")
    assert program.addresses["y"] == Address("y", "x", "y", "generic")
    assert program.addresses["s"] == Address("s", "x", "y", "surface")
    assert program.addresses["t"] == Address("t", "x", "x", "texture")
    assert [(e.address.name, e.write_value) for e in program.initial] == [("x", 3), ("z", 1)]
    reads = {e.read_value for t in program.threads[0].traces for e in t.events if e.reads}
    assert reads == {1, 2, 3}
    proxies = {(e.instruction.split()[0], e.proxy) for th in program.threads for t in th.traces for e in t.events}
    assert proxies == {("st.weak", "generic"), ("ld.weak", "generic"), ("sust.weak", "surface"), ("tld.weak", "texture")}


def test_fences_and_proxy_fences():
    program = _program(" fence.sc.gpu | membar.gl ;\n fence.acq_rel.cta | fence.proxy.alias ;")
    p0 = program.threads[0].traces[0].events
    p1 = program.threads[1].traces[0].events
    assert [(e.fence, e.order, e.scope) for e in p0] == [("sc", "sc", "gpu"), ("acq_rel", "acq_rel", "cta")]
    assert (p1[0].fence, p1[0].scope) == ("sc", "gpu")
    assert (p1[1].proxy_fence, p1[1].fence) == ("alias", None)


def test_barrier_phases_and_operands():
    program = _program(
        " bar.cta.sync 1 | ld.weak r2, x ;\n bar.cta.sync 2 | bar.cta.arrive 1, r2 ;\n"
        " bar.cta.sync 1 | bar.cta.sync 7, 1, 2 ;\n bar.cta.sync 0, 1 | barrier.cluster.arrive ;\n"
        " | barrier.cluster.wait ;",
        header="P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0",
        init="x=0; y=0;",
        condition="exists (y == 0)",
    )
    p0 = [e.barrier for e in program.threads[0].traces[0].events]
    assert p0 == [
        Barrier("cta", "sync", 1, None, 0),
        Barrier("cta", "sync", 2, None, 0),
        Barrier("cta", "sync", 1, None, 1),
        Barrier("cta", "sync", 1, None, 2),
    ]
    assert program.threads[1].placement.cluster == 0
    (trace,) = program.threads[1].traces  # x only ever holds 0
    bars = [e.barrier for e in trace.events[1:]]
    assert bars == [
        Barrier("cta", "arrive", 0, None, 0),
        Barrier("cta", "sync", 1, 2, 0),
        Barrier("cluster", "arrive", 0, None, 0),
        Barrier("cluster", "wait", 0, None, 1),
    ]
    assert trace.data == {(trace.events[0].eid, trace.events[1].eid)}


def test_register_values_and_observed_terms():
    program = _program(
        " ld r0, 7 | ld.weak r1, y ;\n sub r0, r0, 9 | ;", init="x=0; y=0; P1:r5=3;", condition="exists (P0:r0 == -2 /\\ P1:r9 == 0 /\\ x == y /\\ P0:r0 != 1)"
    )
    (trace,) = program.threads[0].traces
    assert trace.events == ()
    assert trace.registers == {"r0": (-2) & MASK}
    assert {tuple(sorted(t.registers.items())) for t in program.threads[1].traces} == {(("r1", 0), ("r5", 3), ("r9", 0))}
    assert program.observed == (RegisterTerm(0, "r0"), RegisterTerm(1, "r9"), LocationTerm("x"), LocationTerm("y"))


def test_locations_line_extends_observed():
    program = lowering.load("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nlocations [x; P0:r0;]\nexists (P0:r0 == 0)\n")
    assert program.observed == (RegisterTerm(0, "r0"), LocationTerm("x"))


def test_undeclared_locations_start_at_zero():
    program = _program(" st.weak q, 4 | ld.weak r0, q ;", init="x=0;")
    assert [(e.address.name, e.write_value) for e in program.initial] == [("x", 0), ("q", 0)]


@pytest.mark.parametrize(
    "op, old, operands, expected",
    [
        ("add", 5, (3,), 8),
        ("sub", 1, (3,), MASK - 1),
        ("and", 6, (3,), 2),
        ("or", 6, (3,), 7),
        ("xor", 6, (3,), 5),
        ("exch", 6, (3,), 3),
        ("cas", 6, (6, 9), 9),
        ("cas", 6, (5, 9), 6),
        ("inc", 5, (5,), 0),
        ("inc", 3, (5,), 4),
        ("inc", 9, (5,), 0),
        ("dec", 0, (5,), 5),
        ("dec", 7, (5,), 5),
        ("dec", 3, (5,), 2),
        ("min", 2, (MASK,), 2),
        ("max", 2, (MASK,), MASK),
    ],
)
def test_atomic_operations_follow_the_manual(op, old, operands, expected):
    """§9.7.13.5: inc(r,s) = r >= s ? 0 : r+1; dec(r,s) = (r == 0 || r > s) ? s : r-1 (unsigned)."""
    assert atomics.atomic_op(op, old, operands) == expected


def test_typed_atomics_work_at_their_width():
    assert atomics.atomic_op("add", 0xFFFFFFFF, (1,), ("u32",)) == 0
    assert atomics.atomic_op("min", 0xFFFFFFFF, (1,), ("s32",)) == 0xFFFFFFFF  # -1 < 1
    assert atomics.atomic_op("min", 0xFFFFFFFF, (1,), ("u32",)) == 1


@pytest.mark.parametrize(
    "op, a, b, expected",
    [
        ("add", MASK, 2, 1),
        ("sub", 0, 1, MASK),
        ("mul", 1 << 63, 2, 0),
        ("div", 7, 2, 3),
        ("div", (-7) & MASK, 2, (-3) & MASK),
        ("div", 5, 0, MASK),
        ("and", 12, 10, 8),
        ("or", 12, 10, 14),
        ("xor", 12, 10, 6),
    ],
)
def test_local_arithmetic_wraps_at_64_bits(op, a, b, expected):
    assert lowering.local_op(op, a, b) == expected


def test_signed_branch_comparison():
    program = _program(" ld r0, -1 | ;\n blt r0, 0, LC00 | ;\n st.weak x, 1 | ;\n LC00: | ;")
    assert _traces(program, 0) == [[]]


def test_domain_limit_is_reported(monkeypatch):
    monkeypatch.setattr(lowering, "MAX_DOMAIN", 3)
    with pytest.raises(PtxSpecError, match="location 'x' can hold more than 3 values"):
        _program(" st.weak x, 1 | st.weak x, 2 ;\n st.weak x, 3 | st.weak x, 4 ;")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("PTX t\n{ x=&y; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 0)\n", "pointer values"),
        ("PTX t\n{ x=0; P0:r1=&x; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 0)\n", "pointer values"),
        (
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n bar.red.and.pred r1, 0, 0, 1, 1 | bar.red.and.pred r1, 0, 0, 1, 0 ;\nexists (x == 0)\n",
            "bar.red with thread count 1 on barrier 0 may be executed by 2 threads",
        ),
    ],
)
def test_unsupported_forms_are_located_errors(text, fragment):
    with pytest.raises(PtxSpecError, match=fragment) as info:
        lowering.load(text)
    assert str(info.value).startswith("<string>:")


def test_long_threads_need_no_recursion():
    rows = "\n".join(f" ld.weak r{i % 5}, x ;" for i in range(3000))
    program = lowering.load(f"PTX long\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{rows}\nexists (x == 0)\n")
    (trace,) = program.threads[0].traces
    assert len(trace.events) == 3000


def test_load_names_a_missing_file():
    with pytest.raises(PtxSpecError, match="cannot read (the )?litmus file"):
        lowering.load("no/such/test.litmus")


def test_negative_bound_is_rejected():
    with pytest.raises(PtxSpecError):
        lowering.lower(litmus.parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n"), unroll_bound=-1)


_registers = st.sampled_from(["r0", "r1"])
_value = st.one_of(_registers, st.integers(0, 3).map(str))
_row = st.one_of(
    st.builds(lambda r, a: f"ld.weak {r}, {a}", _registers, st.sampled_from("xy")),
    st.builds(lambda a, v: f"st.relaxed.gpu {a}, {v}", st.sampled_from("xy"), _value),
    st.builds(lambda r, a, v: f"atom.relaxed.gpu.add {r}, {a}, {v}", _registers, st.sampled_from("xy"), _value),
    st.builds(lambda r, a, v: f"atom.relaxed.gpu.cas {r}, {a}, {v}, 2", _registers, st.sampled_from("xy"), _value),
    st.builds(lambda r, v: f"bne {r}, {v}, LC00", _registers, _value),
    st.just("fence.sc.gpu"),
    st.just("bar.cta.sync 1"),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_row, max_size=4), min_size=1, max_size=2))
def test_generated_programs_lower_consistently(columns):
    height = max(len(c) for c in columns)
    lines = []
    for row in range(height):
        lines.append(" " + " | ".join(c[row] if row < len(c) else "" for c in columns) + " ;")
    lines.append(" " + " | ".join("LC00:" for _ in columns) + " ;")
    header = " | ".join(f"P{i}@cta 0,gpu 0" for i in range(len(columns)))
    text = f"PTX gen\n{{ x=0; y=1; }}\n {header} ;\n" + "\n".join(lines) + "\nexists (x == 0)\n"
    program = lowering.load(text)
    _check_invariants(program)
    assert not program.truncated


# ---- soundness against sequential consistency ----------------------------------------------------------
# Every sequentially consistent execution is a candidate execution of any model, so each thread's run in
# it must be one of the lowering's traces. The interpreter below runs every interleaving directly on
# the parsed test, with its own arithmetic (only the forms the generator produces).


def _sc_runs(test: litmus.LitmusTest, bound: int) -> set[tuple[int, tuple]]:
    labels = [{ins.name: i for i, ins in enumerate(code) if isinstance(ins, litmus.Label)} for code in test.code]
    physical = {e.name: e.target for e in test.init if isinstance(e, litmus.AliasDecl)}
    memory0 = {e.name: e.value for e in test.init if isinstance(e, litmus.LocationInit)}
    runs: set[tuple[int, tuple]] = set()

    def val(regs, op):
        return op.value & MASK if isinstance(op, litmus.Immediate) else regs.get(op.name, 0)

    seen: set = set()

    def explore(pcs, regs, memory, logs, jumps):
        state = (pcs, tuple(tuple(sorted(r.items())) for r in regs), tuple(sorted(memory.items())), logs, jumps)
        if state in seen:  # another interleaving already reached this state
            return
        seen.add(state)
        progressed = False
        for t, code in enumerate(test.code):
            pc = pcs[t]
            if pc >= len(code):
                continue
            progressed = True
            ins = code[pc]
            r, m, log, nxt, j = dict(regs[t]), dict(memory), logs[t], pc + 1, jumps[t]
            if isinstance(ins, litmus.Load):
                r[ins.dest.name] = m.get(physical.get(ins.address, ins.address), 0)
                log += ((ins.text, r[ins.dest.name], None),)
            elif isinstance(ins, litmus.Store):
                m[physical.get(ins.address, ins.address)] = val(r, ins.value)
                log += ((ins.text, None, val(r, ins.value)),)
            elif isinstance(ins, litmus.Atomic):
                loc = physical.get(ins.address, ins.address)
                old = m.get(loc, 0)
                ops = [val(r, o) for o in ins.operands]
                new = {"add": (old + ops[0]) & MASK, "exch": ops[0]}.get(ins.op)
                if ins.op == "cas":
                    new = ops[1] if old == ops[0] else None
                if new is not None:
                    m[loc] = new
                r[ins.dest.name] = old
                log += ((ins.text, old, new),)
            elif isinstance(ins, litmus.Branch):
                a, b = val(r, ins.left), val(r, ins.right)
                if (a != b) if ins.opcode == "bne" else (a == b):
                    nxt = labels[t][ins.target]
                    if nxt <= pc:
                        j += 1
                        if j > bound:
                            continue  # this thread's path is cut: no complete run from here
            elif isinstance(ins, (litmus.Fence, litmus.BarrierOp)):
                log += ((ins.text, None, None),)
            elif isinstance(ins, litmus.Local):
                r[ins.dest.name] = (val(r, ins.sources[0]) + val(r, ins.sources[1])) & MASK
            explore(pcs[:t] + (nxt,) + pcs[t + 1 :], regs[:t] + (r,) + regs[t + 1 :], m, logs[:t] + (log,) + logs[t + 1 :], jumps[:t] + (j,) + jumps[t + 1 :])
        if not progressed:
            for t in range(len(test.code)):
                runs.add((t, logs[t]))

    inits = tuple({e.register: e.value for e in test.init if isinstance(e, litmus.RegisterInit) and e.thread == t} for t in range(len(test.code)))
    n = len(test.code)
    explore((0,) * n, inits, memory0, ((),) * n, (0,) * n)
    return runs


_sc_row = st.one_of(
    st.builds(lambda r, a: f"ld.weak {r}, {a}", _registers, st.sampled_from("xys")),
    st.builds(lambda a, v: f"st.relaxed.gpu {a}, {v}", st.sampled_from("xy"), _value),
    st.builds(lambda r, a, v: f"atom.relaxed.gpu.add {r}, {a}, {v}", _registers, st.sampled_from("xy"), _value),
    st.builds(lambda r, a, v: f"atom.relaxed.gpu.exch {r}, {a}, {v}", _registers, st.sampled_from("xy"), _value),
    st.builds(lambda r, a, v: f"atom.relaxed.gpu.cas {r}, {a}, {v}, 3", _registers, st.sampled_from("xy"), _value),
    st.builds(lambda r, v: f"bne {r}, {v}, LC01", _registers, _value),
    st.builds(lambda r, v: f"beq {r}, {v}, LC00", _registers, _value),
    st.builds(lambda r, v: f"add {r}, {r}, {v}", _registers, _value),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_sc_row, min_size=1, max_size=3), min_size=2, max_size=2) | st.lists(st.lists(_sc_row, min_size=1, max_size=2), min_size=3, max_size=3),
    st.integers(0, 2),
)
def test_every_sequentially_consistent_run_is_a_trace(columns, bound):
    height = max(len(c) for c in columns)
    lines = [" " + " | ".join("LC00:" for _ in columns) + " ;"]
    for row in range(height):
        lines.append(" " + " | ".join(c[row] if row < len(c) else "" for c in columns) + " ;")
    lines.append(" " + " | ".join("LC01:" for _ in columns) + " ;")
    header = " | ".join(f"P{i}@cta 0,gpu 0" for i in range(len(columns)))
    text = f"PTX gen\n{{ x=0; y=1; s @ surface aliases x; }}\n {header} ;\n" + "\n".join(lines) + "\nexists (x == 0)\n"
    test = litmus.parse(text)
    program = lowering.lower(test, unroll_bound=bound)
    traces = {
        (th.index, tuple((e.instruction, e.read_value if e.takes_value else None, e.write_value) for e in tr.events))
        for th in program.threads
        for tr in th.traces
    }
    missing = _sc_runs(test, bound) - traces
    assert not missing
