"""An independent oracle for the litmus checker: a sequentially consistent interpreter.

Every sequentially consistent (SC) execution of a litmus test is an execution the PTX memory model
allows: in an interleaving, program order, reads-from, coherence, from-reads and a Fence-SC order
chosen along the interleaving all lie inside one total order, so none of the model's axioms (§8.10:
coherence, Fence-SC, atomicity, no-thin-air, SC-per-location, causality) can reject it. So the final
states this interpreter reaches must be among the model's final states; a state it reaches that
the model misses is a bug of the checker (an unsound "No").

This module shares nothing with ``memory_model/lowering.py`` or the engines: it reads the parsed
AST (:mod:`ptxspec.memory_model.litmus`) and gives every instruction its meaning afresh, from the
manual:

* memory is one 64-bit value per *physical* location (a virtual alias, §8.2.2, names its target's
  memory; under SC the proxy it goes through makes no difference); a location the test does not
  initialise holds 0, as does a register;
* ``ld`` (``tld``, ``suld``, ``cold``, ``ldc``) reads it, ``st`` (``sust``) writes it, whatever
  their order or scope; fences (``fence.sc``, ``fence.acq_rel``, ``membar``, ``fence.proxy``) do
  nothing under SC;
* ``atom``/``red`` (and ``suatom``/``sured``) follow §9.7.13.5 "Semantics"::

      atomic { d = *a; *a = (operation == cas) ? operation(*a, b, c) : operation(*a, b); }
      inc(r, s) = (r >= s) ? 0 : r+1;   dec(r, s) = (r==0 || r > s) ? s : r-1;
      exch(r, s) = s;                   cas(r, s, t) = (r == s) ? t : r;

  with ``add``/``sub`` wrapping, ``and``/``or``/``xor`` bitwise and ``min``/``max`` signed for the
  ``.s`` types, unsigned otherwise; a ``.type`` of ``w`` bits works on the low ``w`` bits of the
  location (the other bytes are not touched) and returns them zero-extended; without a type, 64 bits;
* registers are 64-bit and wrap; branches (``beq`` ... ``bge``) compare signed 64-bit values;
  ``div`` truncates toward zero on signed values and gives all ones for a zero divisor (the
  dialect's choice, as ``div.u`` on NVIDIA GPUs);
* CTA barriers (§9.7.13.1) count arrivals per (GPU, CTA, barrier id): a use completes at its
  ``count``-th arrival (the quorum operand, else every litmus thread of the CTA), then the
  barrier starts afresh; ``bar.sync`` waits for the use it arrived at to complete, ``bar.arrive``
  does not. Cluster barriers (§9.7.13.3): the k-th ``barrier.cluster.wait`` of a thread completes
  once every thread of its cluster has made its k-th ``barrier.cluster.arrive``. ``bar.red`` is
  not supported.

Loops are bounded with the meaning :func:`ptxspec.memory_model.lowering.lower` gives
``unroll_bound``: a thread may take at most ``unroll`` backward jumps (a jump or taken branch to a
label at or before it); an interleaving in which some thread would take one more is dropped. So
every run this interpreter completes is one whose per-thread paths the model enumerates.

The search is a depth-first search over global states (per thread: position, registers, backward
jumps taken, barrier waits; memory; barrier counters), each visited once. A thread's local steps
(labels, jumps, branches, register arithmetic, fences) are run eagerly after each of its shared
steps: they commute with every other thread's steps, so this loses no final state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from ptxspec.memory_model import litmus as L
from ptxspec.memory_model.program import Constant, LocationTerm, RegisterTerm, Term

MASK = (1 << 64) - 1
MAX_GLOBAL_STATES = 2_000_000
"""Most global states one search visits before giving up (:class:`TooBig`)."""

_TYPE = re.compile(r"([bus])(8|16|32|64|128)$")
_FLOAT_TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "pred")


class Unsupported(Exception):
    """The test uses something this interpreter does not model (the reason is the message)."""


class TooBig(Exception):
    """The search visited more than its limit of global states."""


# ---- values ------------------------------------------------------------------------------------------


def to_signed(value: int, width: int = 64) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def type_of(qualifiers: Iterable[str]) -> tuple[int, bool] | None:
    """(width, signed) of the ``.type`` among ``qualifiers``; None when there is none."""
    found = None
    for q in qualifiers:
        if q in _FLOAT_TYPES:
            raise Unsupported(f"type .{q}")
        m = _TYPE.match(q)
        if m:
            if found is not None:
                raise Unsupported("two types")
            found = (int(m.group(2)), m.group(1) == "s")
    return found


def rmw(op: str, r: int, operands: tuple[int, ...], width: int, signed: bool) -> int:
    """The value ``operation(*a, b{, c})`` of §9.7.13.5 on ``width``-bit values (``r`` the old one)."""
    mask = (1 << width) - 1
    r &= mask
    b = operands[0] & mask
    if op == "add":
        return (r + b) & mask
    if op == "sub":  # the Dat3M dialect's addition
        return (r - b) & mask
    if op == "and":
        return r & b
    if op == "or":
        return r | b
    if op == "xor":
        return r ^ b
    if op == "exch":
        return b
    if op == "cas":
        return operands[1] & mask if r == b else r
    if op == "inc":
        return 0 if r >= b else (r + 1) & mask
    if op == "dec":
        return b if (r == 0 or r > b) else r - 1
    if op in ("min", "max"):
        key = (lambda v: to_signed(v, width)) if signed else (lambda v: v)
        smaller = r if key(r) <= key(b) else b
        larger = b if smaller == r else r
        return smaller if op == "min" else larger
    raise Unsupported(f"atomic operation .{op}")


def arith(op: str, a: int, b: int) -> int:
    """Register arithmetic of the dialect, 64-bit wrapping."""
    if op == "add":
        return (a + b) & MASK
    if op == "sub":
        return (a - b) & MASK
    if op == "mul":
        return (a * b) & MASK
    if op == "div":
        x, y = to_signed(a), to_signed(b)
        if y == 0:
            return MASK
        q = abs(x) // abs(y)
        return (q if (x < 0) == (y < 0) else -q) & MASK
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    raise Unsupported(f"register operation {op}")


BRANCHES = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: a < b,
    "bgt": lambda a, b: a > b,
    "ble": lambda a, b: a <= b,
    "bge": lambda a, b: a >= b,
}


# ---- the test, prepared ------------------------------------------------------------------------------


def observed_terms(test: L.LitmusTest) -> tuple[Term, ...]:
    """What a final state shows: the condition's terms, then the ``locations`` line's, in order of
    first appearance, constants left out."""
    seen: dict[Term, None] = {}
    for term in L.condition_terms(test.condition) + tuple(test.locations):
        if not isinstance(term, Constant):
            seen.setdefault(term, None)
    return tuple(seen)


_LOCAL = (L.Label, L.Jump, L.Branch, L.Local, L.Fence, L.ProxyFence)


class _Prepared:
    def __init__(self, test: L.LitmusTest, unroll: int):
        self.test = test
        self.unroll = unroll
        # Physical locations: an alias names its target's memory.
        physical: dict[str, str] = {}
        initial: dict[str, int] = {}
        for entry in test.init:
            if isinstance(entry, L.LocationInit):
                if entry.pointer is not None:
                    raise Unsupported("pointer-valued location")
                physical[entry.name] = entry.name
                initial[entry.name] = entry.value & MASK
            elif isinstance(entry, L.AliasDecl):
                physical[entry.name] = physical[entry.target]
            elif entry.pointer is not None:
                raise Unsupported("pointer-valued register")
        for name in test.locations_used():
            physical.setdefault(name, name)
        for term in observed_terms(test):
            if isinstance(term, LocationTerm):
                physical.setdefault(term.name, term.name)
        cells = sorted(set(physical.values()))
        self.cell = {name: cells.index(p) for name, p in physical.items()}
        self.memory0 = tuple(initial.get(c, 0) for c in cells)
        self.nthreads = len(test.threads)
        # Registers: every name a thread mentions (code, initial values, condition).
        self.regs: list[dict[str, int]] = []
        for t in range(self.nthreads):
            names: dict[str, None] = {}
            for entry in test.init:
                if isinstance(entry, L.RegisterInit) and entry.thread == t:
                    names.setdefault(entry.register, None)
            for ins in test.code[t]:
                for reg in _registers(ins):
                    names.setdefault(reg, None)
            for term in observed_terms(test):
                if isinstance(term, RegisterTerm) and term.thread == t:
                    names.setdefault(term.register, None)
            self.regs.append({name: i for i, name in enumerate(names)})
        self.regs0 = []
        for t in range(self.nthreads):
            values = [0] * len(self.regs[t])
            for entry in test.init:
                if isinstance(entry, L.RegisterInit) and entry.thread == t:
                    values[self.regs[t][entry.register]] = entry.value & MASK
            self.regs0.append(tuple(values))
        self.labels = [{ins.name: i for i, ins in enumerate(code) if isinstance(ins, L.Label)} for code in test.code]
        decl = test.threads
        self.cta_size = {}
        for d in decl:
            self.cta_size[(d.gpu, d.cta)] = self.cta_size.get((d.gpu, d.cta), 0) + 1
        self.cluster_of = [(d.gpu, "cluster", d.cluster) if d.cluster is not None else (d.gpu, "cta", d.cta) for d in decl]
        self.cluster_members = {c: tuple(t for t in range(self.nthreads) if self.cluster_of[t] == c) for c in set(self.cluster_of)}
        self.widths: dict[int, tuple[int, bool]] = {}
        for code in test.code:
            for ins in code:
                self._vet(ins)

    def _vet(self, ins) -> None:
        if isinstance(ins, (L.Load, L.Store)):
            typed = type_of(ins.qualifiers)
            if typed is not None and typed[0] != 64:
                raise Unsupported(f"{typed[0]}-bit {ins.opcode}")
        elif isinstance(ins, L.Atomic):
            typed = type_of(ins.qualifiers)
            if typed is not None and typed[0] not in (32, 64):
                raise Unsupported(f"{typed[0]}-bit {ins.opcode}")
            self.widths[id(ins)] = typed or (64, False)
        elif isinstance(ins, L.BarrierOp) and ins.op == "red":
            raise Unsupported("bar.red")
        elif isinstance(ins, L.Local) and ins.op not in ("mov", "add", "sub", "mul", "div", "and", "or", "xor"):
            raise Unsupported(f"register operation {ins.op}")


def _registers(ins) -> Iterable[str]:
    for field in ("dest", "left", "right", "value", "predicate"):
        op = getattr(ins, field, None)
        if isinstance(op, L.Register):
            yield op.name
    for field in ("sources", "operands"):
        for op in getattr(ins, field, ()) or ():
            if isinstance(op, L.Register):
                yield op.name


# ---- the search --------------------------------------------------------------------------------------

# A thread's state: (pc, registers, backward jumps taken, CTA-barrier wait, cluster arrives, cluster waits).
# The CTA-barrier wait is None or (slot, generation) of the barrier use the thread waits for.
_DEAD = None


@attrs.frozen
class SCResult:
    """What the SC interpreter found."""

    terms: tuple[Term, ...]
    """The observed terms, in order (see :func:`observed_terms`)."""
    states: frozenset[tuple[tuple[Term, int], ...]]
    """Final states of the complete interleavings: ``((term, value), ...)`` in the order of ``terms``,
    values 64-bit unsigned (as :class:`~ptxspec.memory_model.check.Verdict` gives them)."""
    cut: bool
    """Some interleaving was dropped because a thread would exceed the loop bound."""
    deadlocks: bool
    """Some interleaving ended with a thread blocked at a barrier (no final state)."""
    visited: int
    """Global states visited."""


class _Search:
    def __init__(self, prep: _Prepared, max_states: int):
        self.p = prep
        self.max_states = max_states
        self.cut = False
        self.deadlocks = False

    def value(self, t: int, regs: tuple, op) -> int:
        if isinstance(op, L.Immediate):
            return op.value & MASK
        return regs[self.p.regs[t][op.name]]

    def local(self, t: int, ts: tuple):
        """Run thread ``t``'s local steps; its state at its next shared step or at its end, or
        _DEAD when it would exceed the loop bound."""
        pc, regs, jumps, wait, carr, cwait = ts
        if wait is not None:
            return ts
        code = self.p.test.code[t]
        while pc < len(code):
            ins = code[pc]
            if not isinstance(ins, _LOCAL):
                break
            target = None
            if isinstance(ins, L.Jump):
                target = self.p.labels[t][ins.target]
            elif isinstance(ins, L.Branch):
                a = to_signed(self.value(t, regs, ins.left))
                b = to_signed(self.value(t, regs, ins.right))
                if BRANCHES[ins.opcode](a, b):
                    target = self.p.labels[t][ins.target]
            elif isinstance(ins, L.Local):
                vals = [self.value(t, regs, s) for s in ins.sources]
                result = vals[0] if ins.op == "mov" else arith(ins.op, vals[0], vals[1])
                regs = _set(regs, self.p.regs[t][ins.dest.name], result)
            if target is None:
                pc += 1
            else:
                if target <= pc:
                    jumps += 1
                    if jumps > self.p.unroll:
                        self.cut = True
                        return _DEAD
                pc = target
        return (pc, regs, jumps, wait, carr, cwait)

    def moves(self, state):
        """The successor global states of ``state`` (one per thread that can move)."""
        threads, memory, bars = state
        out = []
        for t, ts in enumerate(threads):
            nxt = self.step(t, ts, threads, memory, bars)
            if nxt is not None:
                out.append(nxt)
        return out

    def step(self, t, ts, threads, memory, bars):
        pc, regs, jumps, wait, carr, cwait = ts
        code = self.p.test.code[t]
        if wait is not None or pc >= len(code):
            return None
        ins = code[pc]
        p = self.p
        if isinstance(ins, L.Load):
            regs = _set(regs, p.regs[t][ins.dest.name], memory[p.cell[ins.address]])
        elif isinstance(ins, L.Store):
            memory = _set(memory, p.cell[ins.address], self.value(t, regs, ins.value))
        elif isinstance(ins, L.Atomic):
            width, signed = p.widths[id(ins)]
            mask = (1 << width) - 1
            cell = p.cell[ins.address]
            old = memory[cell]
            operands = tuple(self.value(t, regs, o) for o in ins.operands)
            new = rmw(ins.op, old, operands, width, signed)
            memory = _set(memory, cell, (old & ~mask & MASK) | new)
            if ins.dest is not None:
                regs = _set(regs, p.regs[t][ins.dest.name], old & mask)
        elif isinstance(ins, L.BarrierOp) and ins.level == "cta":
            return self.cta_barrier(t, ts, ins, threads, memory, bars)
        elif isinstance(ins, L.BarrierOp):
            if ins.op == "arrive":
                carr += 1
            else:  # wait: the k-th wait needs the k-th arrive of every thread of the cluster
                members = p.cluster_members[p.cluster_of[t]]
                if any(threads[u][4] < cwait + 1 for u in members):
                    return None
                cwait += 1
        else:  # pragma: no cover - local instructions never stop a thread
            raise AssertionError(ins)
        moved = self.local(t, (pc + 1, regs, jumps, wait, carr, cwait))
        if moved is _DEAD:
            return _DEAD_STATE
        return (_set(threads, t, moved), memory, bars)

    def cta_barrier(self, t, ts, ins, threads, memory, bars):
        pc, regs, jumps, _, carr, cwait = ts
        decl = self.p.test.threads[t]
        slot = (decl.gpu, decl.cta, self.value(t, regs, ins.barrier_id))
        count = self.p.cta_size[(decl.gpu, decl.cta)] if ins.quorum is None else self.value(t, regs, ins.quorum)
        counters = dict(bars)
        generation, arrived = counters.get(slot, (0, 0))
        arrived += 1
        completes = arrived >= count
        if completes:
            counters[slot] = (generation + 1, 0)
        else:
            counters[slot] = (generation, arrived)
        bars = tuple(sorted(counters.items()))
        mine = (pc + 1, regs, jumps, None if (completes or ins.op == "arrive") else (slot, generation), carr, cwait)
        threads = list(_set(threads, t, mine))
        ready = [t] if mine[3] is None else []
        if completes:
            for u, us in enumerate(threads):
                if us[3] == (slot, generation):
                    threads[u] = (us[0], us[1], us[2], None, us[4], us[5])
                    ready.append(u)
        for u in ready:
            moved = self.local(u, threads[u])
            if moved is _DEAD:
                return _DEAD_STATE
            threads[u] = moved
        return (tuple(threads), memory, bars)

    def final(self, state) -> tuple[tuple[Term, int], ...]:
        threads, memory, _ = state
        out = []
        for term in observed_terms(self.p.test):
            if isinstance(term, RegisterTerm):
                value = threads[term.thread][1][self.p.regs[term.thread][term.register]]
            else:
                value = memory[self.p.cell[term.name]]
            out.append((term, value & MASK))
        return tuple(out)

    def run(self) -> SCResult:
        p = self.p
        threads = []
        for t in range(p.nthreads):
            ts = self.local(t, (0, p.regs0[t], 0, None, 0, 0))
            if ts is _DEAD:
                return SCResult(observed_terms(p.test), frozenset(), True, False, 0)
            threads.append(ts)
        start = (tuple(threads), p.memory0, ())
        visited = {start}
        stack = [start]
        finals: set = set()
        while stack:
            state = stack.pop()
            successors = self.moves(state)
            if not successors:
                if all(ts[0] >= len(p.test.code[t]) and ts[3] is None for t, ts in enumerate(state[0])):
                    finals.add(self.final(state))
                else:
                    self.deadlocks = True
                continue
            for nxt in successors:
                if nxt is _DEAD_STATE or nxt in visited:
                    continue
                visited.add(nxt)
                if len(visited) > self.max_states:
                    raise TooBig(f"more than {self.max_states} global states")
                stack.append(nxt)
        return SCResult(observed_terms(p.test), frozenset(finals), self.cut, self.deadlocks, len(visited))


_DEAD_STATE = ("dead",)


def _set(values: tuple, index: int, value) -> tuple:
    return values[:index] + (value,) + values[index + 1 :]


# ---- entry points ------------------------------------------------------------------------------------


def sc_states(test: L.LitmusTest, unroll: int = 2, *, max_states: int = MAX_GLOBAL_STATES) -> SCResult:
    """Every final state of the sequentially consistent interleavings of ``test`` in which no
    thread takes more than ``unroll`` backward jumps. Raises :class:`Unsupported` for a feature
    it does not model and :class:`TooBig` past ``max_states`` global states."""
    return _Search(_Prepared(test, unroll), max_states).run()


def as_dicts(states: Iterable[Iterable[tuple[Term, int]]]) -> set[frozenset]:
    """States as sets of (term, value) pairs, for comparing without regard to term order."""
    return {frozenset((term, value & MASK) for term, value in state) for state in states}


def missing(sc: Iterable, model: Iterable) -> set[frozenset]:
    """The SC states that are not among the model's (empty when the oracle is satisfied)."""
    return as_dicts(sc) - as_dicts(model)


def format_state(state: Iterable[tuple[Term, int]]) -> str:
    parts = []
    for term, value in sorted(state, key=lambda tv: _term_text(tv[0])):
        parts.append(f"{_term_text(term)}={to_signed(value)}")
    return "; ".join(parts)


# Printing a term is not semantics: the oracle uses the parser's own spelling.
from ptxspec.memory_model.litmus import _term_text  # noqa: E402


def morally_strong_same_scope(test: L.LitmusTest) -> bool:
    """True when every memory operation is strong (not weak) through the generic proxy, no alias is
    declared, and each operation's scope includes every thread that accesses its location: the
    tests for which the issue states the property (SC states are model states on every test,
    but these are the ones where the model promises SC-like behaviour per location)."""
    if any(isinstance(e, L.AliasDecl) for e in test.init):
        return False
    accessors: dict[str, set[int]] = {}
    ops = []
    for t, code in enumerate(test.code):
        for ins in code:
            if isinstance(ins, (L.Load, L.Store, L.Atomic)):
                accessors.setdefault(ins.address, set()).add(t)
                ops.append((t, ins))
    for t, ins in ops:
        if ins.order in ("weak", "mmio") or ins.proxy != "generic":
            return False
        scope = "sys" if ins.order == "volatile" else ins.scope
        me = test.threads[t]
        for u in accessors[ins.address]:
            other = test.threads[u]
            if scope == "cta" and (me.gpu, me.cta) != (other.gpu, other.cta):
                return False
            if scope == "cluster" and (me.gpu != other.gpu or ((me.cta != other.cta) and (me.cluster is None or me.cluster != other.cluster))):
                return False
            if scope == "gpu" and me.gpu != other.gpu:
                return False
    return True


__all__ = [
    "SCResult",
    "TooBig",
    "Unsupported",
    "arith",
    "as_dicts",
    "format_state",
    "missing",
    "morally_strong_same_scope",
    "observed_terms",
    "rmw",
    "sc_states",
]
