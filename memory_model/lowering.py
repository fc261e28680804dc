"""From a parsed litmus test to a :class:`~ptxspec.memory_model.program.Program`: every concrete trace
of every thread.

A thread's code may branch on the values it reads, loop, and run a compare-and-swap that succeeds
or fails. :func:`lower` runs each thread alone, drawing every read value from a finite *value
domain*, and records each complete run as a :class:`~ptxspec.memory_model.program.Trace`: its
events in program order with the values read and written, the registers it leaves, and its data
and control dependencies. Which traces combine into a consistent execution is for the engines.

Value domains (§8.10.4). "Values may not appear out of thin air: an execution cannot
speculatively produce a value such that the speculation becomes self-satisfying through chains of
instruction dependences and inter-thread communication." So every value a read can return has a
finite, non-circular derivation: an initial value or a constant, written by some instruction
whose operands came from reads of values derived earlier. The domain of a physical location is
the least fixed point of that derivation, computed in rounds. Each derived value carries the set
of write events (``(thread, instruction, occurrence)``) its derivation passed through; an event
never reads a value derived through its own write, which would be a cycle of reads-from and
dependencies in one execution (two ``atom.add`` in two threads then give ``{0, 1, 2}``, not every
natural number), and no write value is recorded whose derivation passes through that write.
Derivations are kept minimal per value. Since the unrolled program has finitely many write
events, the rounds always settle; if a domain still grows past :data:`MAX_DOMAIN` values (or past
:data:`MAX_ROUNDS` rounds), :func:`lower` stops with a :class:`~ptxspec.spec.errors.PtxSpecError`
naming the location rather than hand the engines an explosion of traces.

Loops are unrolled: a path that would take more than ``unroll_bound`` backward jumps is cut, its
executions are not considered, and :attr:`Program.truncated` says so.

Dependencies (§8.10.4's "instruction dependences"): *data* from a read to a later event whose
written value or operand (a store's value, an atomic's operands, a barrier's operands) was
computed from the value the read returned, through registers; *control* from a read to every
event after a conditional branch whose operands were computed from it.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Iterable, Iterator

import attrs

from ptxspec.memory_model import litmus
from ptxspec.memory_model.litmus import (
    AliasDecl,
    AsyncArrive,
    AsyncCopy,
    AsyncGroup,
    AsyncStore,
    Atomic,
    BarrierOp,
    Branch,
    BulkCopy,
    Fence,
    Immediate,
    Instruction,
    Jump,
    Label,
    LitmusTest,
    Load,
    Local,
    LocationInit,
    MbarrierOp,
    ProxyFence,
    Register,
    RegisterInit,
    Store,
    Tcgen05Op,
    TensorCopy,
    TensormapOp,
    WgmmaOp,
    registers_read,
    registers_written,
)
from ptxspec.memory_model.program import (
    MASK,
    UNDEFINED_REGISTER,
    WIDTH,
    Address,
    And,
    Barrier,
    Compare,
    Condition,
    Constant,
    Event,
    Formula,
    LocationTerm,
    Not,
    Or,
    Placement,
    Program,
    RegisterTerm,
    Term,
    Thread,
    Trace,
)
from ptxspec.spec.errors import Location, PtxSpecError

DEFAULT_UNROLL = 2
"""Backward jumps a path may take in each thread unless the user says otherwise (``--unroll``)."""
MAX_ROUNDS = 64
"""Rounds of the value-domain fixed point before the domain is declared unbounded."""
MAX_DOMAIN = 256
"""Most values one location may hold."""
MAX_PATHS = 200_000
"""Most paths one thread may take (a guard against an exploding test)."""


# ---- values -----------------------------------------------------------------------------------------


def _signed(value: int) -> int:
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


def access_width(qualifiers: Iterable[str]) -> tuple[int, bool] | None:
    """Bit width and signedness of a memory access's ``.type`` (§9.7.9.8 ld, §9.7.9.9 st,
    §9.7.13.5 atom: ``.b8`` ... ``.b128``, ``.s``/``.u``/``.f`` types, ``.bf16``, the packed
    ``.f16x2``/``.bf16x2``); None for an untyped access of the dialect (the whole location)."""
    for q in qualifiers:
        if q[:1] in ("b", "s", "u", "f") and q[1:] in ("8", "16", "32", "64", "128"):
            return int(q[1:]), q[0] == "s"
        if q == "bf16":
            return 16, False
        if q in ("f16x2", "bf16x2"):
            return 32, False
    return None


def extended(value: int, qualifiers: Iterable[str]) -> int:
    """The register a typed load (or an atomic's destination) of ``value`` gets, as ``ld`` gives it
    (:func:`ptxspec.semantics.memory_access.to_register`: the access's bytes "sign-extended to the
    destination register width for signed integers, and zero-extended ... for unsigned and
    bit-size types", §9.7.9.8) in the dialect's 64-bit register; one meaning with the semantics.
    An untyped access gives the value as it is."""
    typed = access_width(qualifiers)
    if typed is None or typed[0] >= WIDTH:
        return value & MASK
    from ptxspec.semantics.memory_access import from_register, to_register

    width, signed = typed
    result = to_register(_load_form(width, signed), from_register(value, width // 8), [], "b64")
    assert isinstance(result, int), "a load of known bytes is one value"
    return result


@functools.cache
def _load_form(width: int, signed: bool):
    """``ld.sN`` or ``ld.bN``: the load whose extension a typed access of the dialect takes."""
    from ptxspec.spec.catalogue import parse

    return parse(f"ld.{'s' if signed else 'b'}{width}")


def local_op(op: str, a: int, b: int) -> int:
    """Register arithmetic of the dialect, 64-bit two's complement, wrapping.

    ``div`` truncates toward zero on signed values (the dialect's integers are signed); a division
    by zero gives all ones, as ``div.u`` does on NVIDIA GPUs (PTX leaves it unspecified, §9.7.1.8).
    """
    if op == "add":
        return (a + b) & MASK
    if op == "sub":
        return (a - b) & MASK
    if op == "mul":
        return (a * b) & MASK
    if op == "div":
        sa, sb = _signed(a), _signed(b)
        if sb == 0:
            return MASK
        q = abs(sa) // abs(sb)
        return (q if (sa < 0) == (sb < 0) else -q) & MASK
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    raise ValueError(op)


def _atomics():
    """The semantics of atom and red (§9.7.13.5-6), whose values every atomic of a litmus test
    takes: one meaning. Imported when a test has an atomic, to keep the checker's start quick."""
    from ptxspec.semantics import atomics

    return atomics


def mbarrier_written(op: str, old: int, operands: tuple[int, ...], qualifiers: Iterable[str] = ()) -> tuple[int, int | None, str | None]:
    """``(result, value written, undefined)`` of mbarrier instruction ``op`` on an object that
    holds ``old`` (:meth:`~ptxspec.semantics.mbarrier.MbarrierState.encode`), through
    :mod:`ptxspec.semantics.mbarrier`: an arrive's result is its state token (the phase's parity
    before it), a wait's is waitComplete (1 or 0) and it writes nothing (None). What the manual
    makes undefined leaves the object in :data:`~ptxspec.semantics.mbarrier.UNDEFINED`, on which
    every later operation is undefined and every wait returns 0, and ``undefined`` is the rule
    (None where the operation is defined): the checker reports executions that reach it (the
    litmus outcome of a program with undefined behavior is not the model's to give)."""
    from ptxspec.semantics import mbarrier as mb

    qualifiers = tuple(qualifiers)
    if op == "init":
        try:
            return 0, mb.init(operands[0]).encode(), None
        except mb.MbarrierUndefined as undefined:
            return 0, mb.UNDEFINED, str(undefined)
    if op == "inval":
        return 0, mb.UNDEFINED, None
    try:
        state = mb.MbarrierState.decode(old)
        if op in ("test_wait", "try_wait"):
            parity = operands[0] if "parity" in qualifiers else mb.token_phase_parity(operands[0])
            return int(mb.test_wait(state, parity)), None, None
        if op == "expect_tx":
            return 0, mb.expect_tx(state, operands[0]).encode(), None
        if op == "complete_tx":
            return 0, mb.complete_tx(state, operands[0]).encode(), None
        if op == "increment_pending":
            return 0, mb.pending_incremented(state).encode(), None
        no_complete = "noComplete" in qualifiers
        if op == "arrive_drop":
            token, new = mb.arrive_drop(state, operands[0] if operands else 1, no_complete=no_complete)
        elif "expect_tx" in qualifiers:
            token, new = mb.arrive(state, 1, tx_count=operands[0])
        else:
            token, new = mb.arrive(state, operands[0] if operands else 1, no_complete=no_complete)
        return token, new.encode(), None
    except mb.MbarrierUndefined as undefined:
        return 0, (None if op in ("test_wait", "try_wait") else mb.UNDEFINED), str(undefined)


def _agent(key: Key, k: int = 0) -> str:
    """The :attr:`~ptxspec.memory_model.program.Event.agent` of instruction instance ``key``; its
    ``k``-th destination CTA's for ``k`` > 0 (a multicast: each destination is written and
    completed on its own, §9.7.9.25.4.1)."""
    return f"{key[1]}:{key[2]}" + (f"/{k}" if k else "")


def _undefined(rule: str | None) -> dict:
    """The :attr:`~ptxspec.memory_model.program.Event.undefined` field of an operation, if any."""
    return {} if rule is None else {"undefined": rule}


def mbarrier_pending_count(token: int) -> int:
    """``mbarrier.pending_count`` of a state token (§9.7.13.15.17), through
    :mod:`ptxspec.semantics.mbarrier`."""
    from ptxspec.semantics import mbarrier as mb

    return mb.pending_count(token)


_BRANCH = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: a < b,
    "bgt": lambda a, b: a > b,
    "ble": lambda a, b: a <= b,
    "bge": lambda a, b: a >= b,
}
"""Conditional branches compare signed 64-bit values."""


# ---- one thread, run alone ---------------------------------------------------------------------------

Key = tuple[int, int, int]
"""An event's identity within an execution: (thread, instruction index, occurrence)."""
Domain = dict[str, dict[int, list[frozenset]]]
"""Physical location -> value -> the minimal derivations (sets of writer keys) of that value."""


@attrs.define
class _State:
    pc: int = 0
    regs: dict = attrs.Factory(dict)
    taint: dict = attrs.Factory(dict)
    """register -> indices (in this trace) of the reads its value came from."""
    prov: dict = attrs.Factory(dict)
    """register -> the minimal derivations (sets of writer keys) of its value (for the domain)."""
    ctrl: frozenset = frozenset()
    events: list = attrs.Factory(list)
    data: set = attrs.Factory(set)
    ctrl_deps: set = attrs.Factory(set)
    jumps: int = 0
    occurrences: dict = attrs.Factory(dict)
    barriers: dict = attrs.Factory(dict)
    writes: list = attrs.Factory(list)
    """(physical, value, derivation) of each write, for the domain rounds."""
    groups: dict = attrs.Factory(dict)
    """Per kind of async-group (``cp.async``, ``bulk``, ``wgmma``): how many this thread has
    committed (§9.7.9.25.3.2, §9.7.9.25.6.1, §9.7.15.7.2)."""

    def copy(self) -> _State:
        return _State(
            self.pc,
            dict(self.regs),
            dict(self.taint),
            dict(self.prov),
            self.ctrl,
            list(self.events),
            set(self.data),
            set(self.ctrl_deps),
            self.jumps,
            dict(self.occurrences),
            dict(self.barriers),
            list(self.writes),
            dict(self.groups),
        )


@attrs.frozen
class _Path:
    events: tuple[tuple, ...]
    registers: tuple[tuple[str, int], ...]
    data: frozenset
    ctrl: frozenset
    writes: tuple
    complete: bool = True
    """False for a path cut at the unrolling bound: not a trace, but its writes (made before the
    cut) are values other reads may return, so they enter the value domain."""


class _Runner:
    """Runs one thread's code with reads drawn from a domain; yields every complete path."""

    def __init__(self, lowering: _Lowering, thread: int, tagged: bool):
        self.low = lowering
        self.thread = thread
        self.code = lowering.test.code[thread]
        self.labels = {ins.name: i for i, ins in enumerate(self.code) if isinstance(ins, Label)}
        self.tagged = tagged
        self.truncated = False
        self.paths = 0

    def value(self, state: _State, op: Register | Immediate) -> int:
        if isinstance(op, Immediate):
            return op.value & MASK
        return state.regs.get(op.name, 0)

    def taint(self, state: _State, *ops) -> frozenset:
        out: frozenset = frozenset()
        for op in ops:
            if isinstance(op, Register):
                out |= state.taint.get(op.name, frozenset())
        return out

    def prov(self, state: _State, *ops) -> frozenset:
        """The derivations of a value computed from ``ops``: one derivation of each register's
        value, joined (every combination, minimal ones kept). A constant needs none."""
        family: frozenset = _NO_DERIVATION
        for op in ops:
            if isinstance(op, Register):
                family = _join(family, state.prov.get(op.name, _NO_DERIVATION))
        return family

    def choices(self, physical: str, key: Key) -> list[tuple[int, frozenset]]:
        """Values a read at ``key`` may return, each with its derivations that do not pass through
        ``key`` itself (a read never returns a value derived through its own write)."""
        out: list[tuple[int, frozenset]] = []
        for value, derivations in self.low.domain[physical].items():
            usable = frozenset(d for d in derivations if key not in d)
            if usable:
                out.append((value, usable if self.tagged else _NO_DERIVATION))
        return out

    def emit(self, state: _State, fields: dict, data_from: frozenset) -> int:
        written, address = fields.get("write_value"), fields.get("address")
        if isinstance(written, int) and address is not None:  # a write keeps the bits its location holds
            fields = dict(fields, write_value=written & self.low.mask_of(address.physical))
        index = len(state.events)
        state.events.append(tuple(sorted(fields.items())))
        for r in data_from:
            state.data.add((r, index))
        for r in state.ctrl:
            state.ctrl_deps.add((r, index))
        return index

    def run(self) -> Iterator[_Path]:
        state = _State()
        for entry in self.low.test.init:
            if isinstance(entry, RegisterInit) and entry.thread == self.thread:
                assert entry.value is not None, "pointer values are rejected before lowering a thread"
                state.regs[entry.register] = entry.value & MASK
        # Depth first with an explicit stack (a path may hold many reads; no recursion limit).
        stack = [state]
        while stack:
            path = self.step(stack.pop(), stack)
            if path is not None:
                yield path

    def finish(self, state: _State, complete: bool) -> _Path:
        """The path ``state`` has run: complete (the thread ran to its end) or cut at the bound."""
        self.paths += 1
        if self.paths > MAX_PATHS:
            decl = self.low.test.threads[self.thread]
            raise PtxSpecError(
                f"thread {decl.name} has more than {MAX_PATHS} paths; lower the unrolling bound or simplify the test",
                where=self.low.thread_location(self.thread),
            )
        if self.paths % 256 == 0:
            self.low.check_deadline()
        regs = tuple((r, state.regs.get(r, 0)) for r in self.low.registers[self.thread])
        if any(name == "undefined" for event in state.events for name, _ in event):
            regs += ((UNDEFINED_REGISTER, 1),)
        return _Path(tuple(state.events), regs, frozenset(state.data), frozenset(state.ctrl_deps), tuple(state.writes), complete)

    def step(self, state: _State, stack: list[_State]) -> _Path | None:
        """Run ``state`` straight on: return the path when it ends or is cut at the unrolling bound,
        or None when it splits at a read (its branches are pushed on ``stack``)."""
        code = self.code
        while True:
            if state.pc >= len(code):
                return self.finish(state, complete=True)
            ins = code[state.pc]
            occurrence = state.occurrences.get(state.pc, 0)
            state.occurrences[state.pc] = occurrence + 1
            key = (self.thread, state.pc, occurrence)
            if isinstance(ins, Label):
                state.pc += 1
            elif isinstance(ins, Jump):
                if not self.jump(state, self.labels[ins.target]):
                    return self.finish(state, complete=False)
            elif isinstance(ins, Branch):
                a, b = _signed(self.value(state, ins.left)), _signed(self.value(state, ins.right))
                state.ctrl = state.ctrl | self.taint(state, ins.left, ins.right)
                if _BRANCH[ins.opcode](a, b):
                    if not self.jump(state, self.labels[ins.target]):
                        return self.finish(state, complete=False)
                else:
                    state.pc += 1
            elif isinstance(ins, Local):
                vals = [self.value(state, s) for s in ins.sources]
                if ins.op == "pending_count":
                    result = mbarrier_pending_count(vals[0])
                else:
                    result = vals[0] if ins.op == "mov" else local_op(ins.op, vals[0], vals[1])
                state.taint[ins.dest.name] = self.taint(state, *ins.sources)
                state.prov[ins.dest.name] = self.prov(state, *ins.sources)
                state.regs[ins.dest.name] = result
                state.pc += 1
            elif isinstance(ins, (Load, Atomic)) or (isinstance(ins, MbarrierOp) and ins.op not in ("init", "inval")):
                stack.extend(reversed(self.memory_read(state, ins, key)))
                return None
            elif type(ins) in _AGENTS and getattr(ins, "op", None) not in _SYNCHRONOUS:
                # An asynchronous instruction: its operations are an agent's, one state per value it reads.
                stack.extend(reversed(getattr(self, _AGENTS[type(ins)])(state, ins, key)))
                return None
            elif isinstance(ins, AsyncGroup):
                kind = ins.kind
                # wait_all "is equivalent to: cp.async.commit_group; cp.async.wait_group 0"
                if ins.op in ("commit_group", "wait_all"):
                    state.groups[kind] = state.groups.get(kind, 0) + 1
                if ins.op != "commit_group":
                    waited = (kind, state.groups.get(kind, 0) - (ins.pending or 0))
                    self.emit(state, {"instruction": ins.text, "line": ins.line, "async_wait": waited, "wait_reads_only": ins.read}, frozenset())
                state.pc += 1
            elif isinstance(ins, WgmmaOp):  # wgmma.fence
                # §9.7.15.7.1: an order of register accesses (checked statically by the parser); no memory effect.
                state.pc += 1
            elif isinstance(ins, Tcgen05Op):  # the synchronous ones
                self.emit(state, {"instruction": ins.text, "line": ins.line, "tcgen05": ins.op}, frozenset())
                state.pc += 1
            elif isinstance(ins, MbarrierOp):  # init, inval: weak writes of the whole object
                count = self.value(state, ins.operands[0]) if ins.operands else 0
                _, value, undefined = mbarrier_written(ins.op, 0, (count,))
                assert value is not None, "init and inval write the object"
                fields = self.memory_fields(ins, writes=True, write_value=value, order="weak", scope=None, **_undefined(undefined))
                self.emit(state, fields, self.taint(state, *ins.operands))
                self.record(state, ins.address, value, self.prov(state, *ins.operands), key)
                state.pc += 1
            elif isinstance(ins, Store):
                value = self.value(state, ins.value)
                fields = self.memory_fields(ins, writes=True, write_value=value)
                self.emit(state, fields, self.taint(state, ins.value))
                self.record(state, ins.address, value, self.prov(state, ins.value), key)
                state.pc += 1
            elif isinstance(ins, Fence):
                fields = {"instruction": ins.text, "line": ins.line, "fence": ins.sem, "order": ins.sem, "scope": ins.scope, "fence_restrict": ins.restrict}
                self.emit(state, fields, frozenset())
                state.pc += 1
            elif isinstance(ins, TensormapOp):
                stack.extend(reversed(self.tensormap(state, ins, key)))
                return None
            elif isinstance(ins, ProxyFence):
                fields = {"instruction": ins.text, "line": ins.line, "proxy_fence": ins.kind}
                if ins.kind == "tensormap::generic":
                    # A proxy fence with a .sem and a scope, not a memory fence (ptx.tensormap_fenced).
                    fields.update(order=ins.sem, scope=ins.scope)
                    if ins.address is not None:
                        fields["address"] = self.low.addresses[ins.address]
                elif ins.sem is not None:
                    # The uni-directional async::generic fence is also a (restricted) release or
                    # acquire fence (§9.7.13.4: "A .release proxy fence can form a release sequence").
                    fields.update(fence=ins.sem, order=ins.sem, scope=ins.scope, fence_restrict=ins.restrict)
                self.emit(state, fields, frozenset())
                state.pc += 1
            elif isinstance(ins, BarrierOp):
                branches = self.barrier(state, ins)
                for branch in branches:
                    branch.pc += 1
                if len(branches) > 1:
                    stack.extend(reversed(branches))
                    return None
            else:  # pragma: no cover - the parser builds no other kind
                raise TypeError(ins)

    def jump(self, state: _State, target: int) -> bool:
        """Go to ``target``; False when that is a backward jump past the unrolling bound."""
        if target <= state.pc:
            state.jumps += 1
            if state.jumps > self.low.unroll_bound:
                self.truncated = True
                return False
        state.pc = target
        return True

    def memory_fields(self, ins: Load | Store | Atomic | MbarrierOp, **extra) -> dict:
        fields = {
            "instruction": ins.text,
            "line": ins.line,
            "address": self.low.addresses[ins.address],
            "proxy": ins.proxy,
            "order": ins.order,
            "scope": ins.scope,
            "space": state_space(ins.qualifiers),
        }
        if isinstance(ins, MbarrierOp):
            fields["mbarrier"] = ins.op
        fields.update(extra)
        return fields

    def record(self, state: _State, address: str, value: int, family: frozenset, key: Key) -> None:
        """Note a write for the domain rounds with each derivation of its value that does not pass
        through the write itself (such a value would be self-satisfying, which §8.10.4 forbids)."""
        if not self.tagged:
            return
        physical = self.low.physical(address)
        for derivation in family:
            if key not in derivation:
                state.writes.append((physical, value & self.low.mask_of(physical), derivation | {key}))

    def memory_read(self, state: _State, ins: Load | Atomic | MbarrierOp, key: Key) -> list[_State]:
        """One state per value the read may return."""
        branches = []
        physical = self.low.physical(ins.address)
        for value, family in self.choices(physical, key):
            branch = state.copy()
            index = len(branch.events)
            if isinstance(ins, Load):
                fields = self.memory_fields(ins, reads=True, read_value=value)
                self.emit(branch, fields, frozenset())
                branch.regs[ins.dest.name] = extended(value, ins.qualifiers)
                branch.taint[ins.dest.name] = frozenset({index})
                branch.prov[ins.dest.name] = family
            elif isinstance(ins, MbarrierOp):
                self.mbarrier(branch, ins, key, value, family)
            else:
                operands = tuple(self.value(branch, o) for o in ins.operands)
                failed = ins.op == "cas" and (value & _mask_of(ins)) != (operands[0] & _mask_of(ins))
                # A floating-point add may have two results where the state space is not named (atomic_values).
                for written in (None,) if failed else _atomics().atomic_values(ins.op, value, operands, ins.qualifiers):
                    out = branch.copy()
                    fields = self.memory_fields(ins, reads=ins.returns, writes=not failed, atomic=True, read_value=value, write_value=written)
                    self.emit(out, fields, self.taint(out, *ins.operands))
                    if written is not None:
                        self.record(out, ins.address, written, _join(family, self.prov(out, *ins.operands)), key)
                    if ins.dest is not None:
                        out.regs[ins.dest.name] = extended(value, ins.qualifiers)
                        out.taint[ins.dest.name] = frozenset({index})
                        out.prov[ins.dest.name] = family
                    out.pc += 1
                    branches.append(out)
                continue
            branch.pc += 1
            branches.append(branch)
        return branches

    def mbarrier(self, state: _State, ins: MbarrierOp, key: Key, value: int, family: frozenset) -> None:
        """An mbarrier read-modify-write (expect_tx, complete_tx, arrive, arrive_drop) or wait
        (test_wait, try_wait) that read ``value``: its event, its write, its result."""
        index = len(state.events)
        operands = tuple(self.value(state, o) for o in ins.operands)
        result, written, undefined = mbarrier_written(ins.op, value, operands, ins.qualifiers)
        if written is None:  # a wait: waitComplete; an acquire wait that returns True is an acquire pattern
            order = ins.order if result else "relaxed"
            fields = self.memory_fields(ins, reads=True, read_value=value, order=order, **_undefined(undefined))
            self.emit(state, fields, self.taint(state, *ins.operands))
        else:
            fields = self.memory_fields(ins, reads=ins.returns, writes=True, atomic=True, read_value=value, write_value=written, **_undefined(undefined))
            self.emit(state, fields, self.taint(state, *ins.operands))
            self.record(state, ins.address, written, _join(family, self.prov(state, *ins.operands)), key)
        if ins.dest is not None:
            state.regs[ins.dest.name] = result
            state.taint[ins.dest.name] = frozenset({index})
            state.prov[ins.dest.name] = family

    def agent_branches(self, state: _State, key: Key, locations: tuple[str, ...]) -> Iterator[tuple[_State, tuple[int, ...], tuple[frozenset, ...]]]:
        """For an asynchronous instruction that reads ``locations`` in turn: a copy of ``state`` per
        combination of the values they may return (:meth:`choices`), with those values and their
        derivations."""
        combos: list[list[tuple[int, frozenset]]] = [[]]
        for name in locations:
            combos = [combo + [choice] for combo in combos for choice in self.choices(self.low.physical(name), key)]
        for combo in combos:
            yield state.copy(), tuple(value for value, _ in combo), tuple(family for _, family in combo)

    def bulk_copy(self, state: _State, ins: BulkCopy, key: Key) -> list[_State]:
        """``cp.async.bulk`` (§9.7.9.25.4.1) and ``cp.reduce.async.bulk`` (§9.7.9.25.4.2): the
        operations of :meth:`copy_agent` from ``src`` to ``dst``, completing by a complete-tx of
        ``size`` or in a bulk async-group."""
        dst_space, src_space = ins.qualifiers[:2]
        spaces = (src_space, dst_space)
        size, size_taint = self.value(state, ins.size), self.taint(state, ins.size)
        if size == 0 or size % 16:
            raise PtxSpecError(
                f"{ins.text}: size {size} is not a positive multiple of 16: the behavior is undefined (§9.7.9.25.4.1)",
                where=Location(self.low.test.source, ins.line, ins.column),
            )
        branches = [state]
        for k, (dst, mbar) in enumerate(ins.multicast or ((ins.dst, ins.mbar),)):
            copies = (self.copy_agent(b, ins, key, _agent(key, k), ins.src, dst, mbar, spaces, ins.qualifiers[-1:], size, size_taint) for b in branches)
            branches = [out for outs in copies for out in outs]
        for branch in branches:
            branch.pc += 1
        return branches

    def tensor_copy(self, state: _State, ins: TensorCopy, key: Key) -> list[_State]:
        """``cp.async.bulk.tensor`` (§9.7.9.25.5.2) and ``cp.reduce.async.bulk.tensor``
        (§9.7.9.25.5.3): first a weak read of the tensor map in the tensormap proxy ("tensorMap is
        accessed in the tensormap proxy"), one state per value it may hold; the tensor is the
        location that value points to; then the operations of :meth:`copy_agent` between the tensor
        (global) and the shared-memory location, moving :data:`~ptxspec.memory_model.litmus.TENSOR_BOX_BYTES`."""
        _dim, dst_space, src_space = ins.qualifiers[:3]
        fields: dict = {"instruction": ins.text, "line": ins.line, "agent": _agent(key), "proxy": "tensormap", "order": "weak", "scope": None}
        if ins.mbar is None:
            fields["async_group"] = ("bulk", state.groups.get("bulk", 0))
        done: list[_State] = []
        element = (litmus.TENSOR_REDUCE_TYPES[ins.reduce_op],) if ins.reduce_op else ()
        for first, (value,), _ in self.agent_branches(state, key, (ins.tensor_map,)):
            self.emit(first, dict(fields, address=self.low.addresses[ins.tensor_map], reads=True, read_value=value), frozenset())
            tensor = self.low.tensor_of(value)
            branches = [first]
            for k, (shared, mbar) in enumerate(ins.multicast or ((ins.shared, ins.mbar),)):
                src, dst = (shared, tensor) if ins.to_global else (tensor, shared)
                spaces = (src_space, dst_space)
                copies = (self.copy_agent(b, ins, key, _agent(key, k), src, dst, mbar, spaces, element, litmus.TENSOR_BOX_BYTES, frozenset()) for b in branches)
                branches = [out for outs in copies for out in outs]
            done += branches
        for branch in done:
            branch.pc += 1
        return done

    def copy_agent(
        self,
        state: _State,
        ins: BulkCopy | TensorCopy,
        key: Key,
        agent: str,
        src: str,
        dst: str,
        mbar: str | None,
        spaces: tuple[str, str],
        element: tuple[str, ...],
        size: int,
        size_taint: frozenset,
    ) -> list[_State]:
        """The operations of a bulk or tensor copy (their
        :attr:`~ptxspec.memory_model.program.Event.agent` is this instance), one state per value
        of the locations they read, in the async proxy ("cp{.reduce}.async.bulk operations are
        performed in the asynchronous proxy", §9.7.9.25.2): a weak read of ``src``; for a copy a
        weak write of ``dst`` ("the copy operations ... are treated as weak memory operations"),
        for a reduction (by ``ins.reduce_op`` on values of type ``element``) a read-modify-write of
        ``dst`` ("each reduction operation performed by cp.reduce.async.bulk has individually
        .relaxed.gpu memory ordering semantics"); the implicit generic-async proxy fence that
        follows its completion; then its completion: the complete-tx of ``size`` on ``mbar``,
        which "has .release semantics at .cluster scope", or membership of the bulk async-group
        its thread commits next (:attr:`~ptxspec.memory_model.program.Event.async_group`). With
        ``.multicast::cluster`` each destination CTA's write and complete-tx are a further agent
        of the instruction (``agent``: :func:`_agent`), so each CTA's completion signals its own
        write only. The caller advances the thread."""
        base: dict = {"instruction": ins.text, "line": ins.line, "agent": agent}
        if mbar is None:
            base["async_group"] = ("bulk", state.groups.get("bulk", 0))
        memory = dict(base, proxy="async", order="weak", scope=None)
        src_space, dst_space = spaces
        reads = (src,) + ((dst,) if ins.reduce_op is not None else ()) + ((mbar,) if mbar is not None else ())
        branches = []
        for branch, values, families in self.agent_branches(state, key, reads):
            value, family = values[0], families[0]
            read = len(branch.events)
            self.emit(branch, dict(memory, address=self.low.addresses[src], space=src_space, reads=True, read_value=value), frozenset())
            written = dict(memory, address=self.low.addresses[dst], space=dst_space, writes=True)
            if ins.reduce_op is None:
                self.emit(branch, dict(written, write_value=value), frozenset({read}))
            else:
                old = values[1]
                value = _atomics().reduction_value(ins.reduce_op, old, value, element)
                assert isinstance(value, int), "a reduction has one value under FLOAT_PROFILE"
                family = _join(family, families[1])
                self.emit(branch, dict(written, reads=True, atomic=True, order="relaxed", scope="gpu", read_value=old, write_value=value), frozenset({read}))
            self.record(branch, dst, value, family, key)
            self.emit(branch, dict(base, proxy_fence="async"), frozenset())
            if mbar is not None:
                old, mbar_family = values[-1], families[-1]
                self.arrive_on(branch, key, dict(base, order="release"), mbar, old, mbar_family, "complete_tx", (size,), size_taint)
            branches.append(branch)
        return branches

    def tensormap(self, state: _State, ins: TensormapOp, key: Key) -> list[_State]:
        """``tensormap.replace`` (§9.7.9.26): "treated as a weak memory operation on the entire
        1024-bit opaque tensor-map object", in the generic proxy: a weak write of the tensor map
        with the address of its new tensor. ``tensormap.cp_fenceproxy`` (§9.7.13.16): "copies data
        of size specified by the size argument, in the generic proxy, from the location specified
        by the address operand src in shared memory to the location specified by the address
        operand dst in the global memory" (a weak read and a weak write), then "establishes a
        uni-directional proxy release pattern on the ordering from the copy operation to the
        subsequent access performed in the tensormap proxy on the address dst" (a release
        fence.proxy.tensormap::generic at its scope)."""
        where = {"instruction": ins.text, "line": ins.line, "proxy": "generic", "order": "weak", "scope": None}
        space = state_space(ins.qualifiers)
        if ins.op == "replace":
            value = self.low.tensor_map_value(ins.source)
            self.emit(state, dict(where, address=self.low.addresses[ins.address], space=space, writes=True, write_value=value), frozenset())
            self.record(state, ins.address, value, _NO_DERIVATION, key)
            state.pc += 1
            return [state]
        branches = []
        for value, family in self.choices(self.low.physical(ins.source), key):
            branch = state.copy()
            read = len(branch.events)
            self.emit(branch, dict(where, address=self.low.addresses[ins.source], space="shared::cta", reads=True, read_value=value), frozenset())
            self.emit(branch, dict(where, address=self.low.addresses[ins.address], space="global", writes=True, write_value=value), frozenset({read}))
            self.record(branch, ins.address, value, family, key)
            self.emit(
                branch, {"instruction": ins.text, "line": ins.line, "proxy_fence": "tensormap::generic", "order": "release", "scope": ins.scope}, frozenset()
            )
            branch.pc += 1
            branches.append(branch)
        return branches

    def async_copy(self, state: _State, ins: AsyncCopy, key: Key) -> list[_State]:
        """``cp.async`` (§9.7.9.25.3.1) as the operations of an asynchronous instruction, one state
        per value of ``src``: a weak read of ``src`` and a weak write of ``dst`` ("cp.async
        operations are treated as weak memory operations"), in the group its thread will commit
        next (:attr:`~ptxspec.memory_model.program.Event.async_group`). With ``src-size`` < cp-size
        the bytes past src-size are zero-filled: the write keeps the low src-size bytes of the value
        read (little-endian, §5.4.5), and src-size 0 reads nothing."""
        memory: dict = {"instruction": ins.text, "line": ins.line, "agent": _agent(key), "proxy": "generic", "order": "weak", "scope": None}
        memory["async_group"] = ("cp.async", state.groups.get("cp.async", 0))
        cp_size = self.value(state, ins.size)
        src_size = cp_size if ins.src_size is None else self.value(state, ins.src_size)
        if not 0 <= src_size <= cp_size:
            raise PtxSpecError(
                f"cp.async's src-size ({src_size}) exceeds its cp-size ({cp_size}): the behavior is undefined (§9.7.9.25.3.1)",
                where=Location(self.low.test.source, ins.line, ins.column),
            )
        branches = []
        for branch, values, families in self.agent_branches(state, key, (ins.src,) if src_size else ()):
            value, family = (values[0], families[0]) if src_size else (0, _NO_DERIVATION)
            value &= (1 << (8 * src_size)) - 1
            taken: frozenset[int] = frozenset()
            if src_size:
                taken = frozenset({len(branch.events)})
                self.emit(branch, dict(memory, address=self.low.addresses[ins.src], reads=True, read_value=values[0]), frozenset())
            self.emit(
                branch,
                dict(memory, address=self.low.addresses[ins.dst], writes=True, write_value=value),
                taken | self.taint(branch, *filter(None, (ins.src_size,))),
            )
            self.record(branch, ins.dst, value, _join(family, self.prov(branch, *filter(None, (ins.src_size,)))), key)
            branch.pc += 1
            branches.append(branch)
        return branches

    def async_arrive(self, state: _State, ins: AsyncArrive, key: Key) -> list[_State]:
        """``cp.async.mbarrier.arrive`` (§9.7.13.15.15): without ``.noinc``, the thread first
        increments the pending count by 1 (a relaxed read-modify-write of the object at .cta scope,
        our reading: the manual gives it no .sem); then an asynchronous arrive-on, "ordered with
        respect to the memory operations performed by all prior cp.async operations initiated by
        the same thread, but not to those performed by other instructions issued by the thread"
        (§8.9.1.1): ``async_completed`` orders the copies before it (its ``async_wait`` covers every
        group up to the one still open). It releases at .cta scope, as mbarrier.arrive does by
        default (our reading: a consumer that sees the phase complete reads the copied data, the
        manual's use of it)."""
        where = {"instruction": ins.text, "line": ins.line}
        reads = (ins.mbar,) if ins.noinc else (ins.mbar, ins.mbar)
        branches = []
        for branch, values, families in self.agent_branches(state, key, reads):
            if not ins.noinc:
                old = values[0]
                _, written, undefined = mbarrier_written("increment_pending", old, ())
                assert written is not None, "an increment writes the object"
                fields = dict(where, address=self.low.addresses[ins.mbar], proxy="generic", order="relaxed", scope="cta", space="shared::cta")
                fields.update(_undefined(undefined))
                self.emit(
                    branch, dict(fields, reads=True, writes=True, atomic=True, read_value=old, write_value=written, mbarrier="increment_pending"), frozenset()
                )
                self.record(branch, ins.mbar, written, families[0], key)
            agent = dict(where, agent=_agent(key), order="release", async_wait=("cp.async", branch.groups.get("cp.async", 0) + 1))
            self.arrive_on(branch, key, agent, ins.mbar, values[-1], families[-1], "arrive", (1,), frozenset(), scope="cta")
            branch.pc += 1
            branches.append(branch)
        return branches

    def async_store(self, state: _State, ins: AsyncStore, key: Key) -> list[_State]:
        """``st.async`` (§9.7.9.12) / ``red.async`` (§9.7.13.7) as the operations of an asynchronous
        instruction: the store ("treated as a weak memory operation" for .weak; "a strong memory
        operation with .release semantics at the scope specified by .scope" for .release) or the
        reduction ("a relaxed memory operation", or release), generic; then, with
        ``.mbarrier::complete_tx::bytes``, the complete-tx of the bytes stored, which "has .release
        semantics at .cluster scope"."""
        agent = {"instruction": ins.text, "line": ins.line, "agent": _agent(key)}
        space = state_space(ins.qualifiers)
        memory = dict(agent, address=self.low.addresses[ins.address], proxy="generic", order=ins.order, scope=ins.scope, space=space, writes=True)
        reads = ((ins.address,) if ins.opcode == "red" else ()) + ((ins.mbar,) if ins.mbar is not None else ())
        operand = self.value(state, ins.value)
        branches = []
        for branch, values, families in self.agent_branches(state, key, reads):
            family = self.prov(branch, ins.value)
            if ins.opcode == "red":
                assert ins.reduce_op is not None, "red.async has an operation"
                written = _atomics().atomic_op(ins.reduce_op, values[0], (operand,), ins.qualifiers)
                family = _join(family, families[0])
                self.emit(branch, dict(memory, atomic=True, read_value=values[0], write_value=written), self.taint(branch, ins.value))
            else:
                written = operand
                weak = {"order": "weak", "scope": None} if ins.order == "weak" else {}
                self.emit(branch, dict(memory, write_value=written, **weak), self.taint(branch, ins.value))
            self.record(branch, ins.address, written, family, key)
            if ins.mbar is not None:
                self.arrive_on(branch, key, dict(agent, order="release"), ins.mbar, values[-1], families[-1], "complete_tx", (ins.bytes,), frozenset())
            branch.pc += 1
            branches.append(branch)
        return branches

    def wgmma(self, state: _State, ins: WgmmaOp, key: Key) -> list[_State]:
        """``wgmma.mma_async`` (§9.7.15.5.2) as the operations of an asynchronous instruction, one
        state per pair of values of A and B: weak reads of A and B in the async proxy
        ("wgmma.mma_async operations are performed in the asynchronous proxy", §9.7.15.4), in the
        wgmma-group its thread commits next, and the implicit generic-async proxy fence that
        follows its completion. The accumulator register gets D = A * B + (scale-d ? D : 0),
        wrapping at 64 bits; reading it before the wgmma.wait_group of its group is undefined and
        refused by the parser, so giving it the value at issue changes no defined outcome."""
        assert ins.dest is not None and ins.scale_d is not None, "wgmma.mma_async has an accumulator and scale-d"
        agent = {"instruction": ins.text, "line": ins.line, "agent": _agent(key), "async_group": ("wgmma", state.groups.get("wgmma", 0))}
        memory = dict(agent, proxy="async", order="weak", scope=None, space="shared::cta", reads=True)
        enable = self.value(state, ins.scale_d)
        branches = []
        for branch, values, families in self.agent_branches(state, key, ins.addresses):
            first = len(branch.events)
            for name, value in zip(ins.addresses, values):
                self.emit(branch, dict(memory, address=self.low.addresses[name], read_value=value), frozenset())
            self.emit(branch, dict(agent, proxy_fence="async"), frozenset())
            d = ins.dest.name
            accumulated = branch.regs.get(d, 0) if enable else 0
            branch.regs[d] = (values[0] * values[1] + accumulated) & MASK
            accumulator = (ins.dest,) if enable else ()
            family = _join(_join(families[0], families[1]), self.prov(branch, ins.scale_d, *accumulator))
            branch.taint[d] = frozenset({first, first + 1}) | self.taint(branch, ins.scale_d, *accumulator)
            branch.prov[d] = family
            branch.pc += 1
            branches.append(branch)
        return branches

    def arrive_on(
        self, state: _State, key: Key, base: dict, mbar: str, old: int, family: frozenset, op: str, operands: tuple[int, ...], data_from, scope: str = "cluster"
    ) -> None:
        """The read-modify-write of the mbarrier ``mbar`` that an asynchronous instruction performs
        (at ``.cluster`` scope: the complete-tx of cp.async.bulk, the arrive-on of tcgen05.commit;
        at ``.cta`` scope: cp.async.mbarrier.arrive)."""
        _, written, undefined = mbarrier_written(op, old, operands)
        assert written is not None, "an arrive-on or complete-tx writes the object"
        fields = dict(
            base, address=self.low.addresses[mbar], proxy="generic", scope=scope, writes=True, atomic=True, read_value=old, write_value=written, mbarrier=op
        )
        fields.update(_undefined(undefined))
        self.emit(state, fields, data_from)
        self.record(state, mbar, written, family, key)

    def tcgen05(self, state: _State, ins: Tcgen05Op, key: Key) -> list[_State]:
        """An asynchronous tcgen05 instruction (§9.7.16.6.1: mma, cp, ld, st, and commit's arrive-on)
        as the operations of an agent, one state per combination of values it reads. Tensor
        Memory accesses are weak and generic; the shared memory tcgen05.mma and tcgen05.cp read "are
        performed in the asynchronous proxy" (§9.7.16.6.5). ``mma``: D = A * B + (enable-input-d ?
        D : 0) over one element, wrapping at 64 bits (the dialect's abstraction of a matrix
        multiply); tcgen05.commit: "an arrive-on operation, with the count argument of 1, is
        signaled on the mbarrier object. The scope of the arrive-on operation is the cluster scope"
        (relaxed: the manual gives it no .sem)."""
        physical = self.low.physical
        kind = {
            "mma": f"mma/{ins.cta_group}/{physical(ins.addresses[0]) if ins.addresses else ''}",
            "cp": f"cp/{ins.cta_group}/{next((q for q in ins.qualifiers if q in litmus.TCGEN05_CP_SHAPES), '')}",
            "shift": f"shift/{ins.cta_group}",
            "commit": f"commit/{ins.cta_group}",
        }
        base = {"instruction": ins.text, "line": ins.line, "agent": _agent(key), "tcgen05": kind.get(ins.op, ins.op)}
        weak = dict(base, proxy="generic", order="weak", scope=None)
        enable = self.value(state, ins.values[0]) if ins.op == "mma" else 0
        # What it reads, each with its proxy: Tensor Memory generic, shared memory async (mma's A and
        # B, cp's source); mma reads D only with enable-input-d.
        t = ins.addresses
        if ins.op == "commit":  # one mbarrier, or one per destination CTA of .multicast::cluster
            reading: tuple[tuple[str, str], ...] = tuple((bar, "generic") for bar in t)
        elif ins.op == "ld":
            reading = ((t[0], "generic"),)
        elif ins.op == "cp":
            reading = ((t[1], "async"),)
        elif ins.op == "shift":  # the adjacent row's element, in Tensor Memory
            reading = ((t[1], "generic"),)
        elif ins.op == "mma":
            reading = ((t[1], "async"), (t[2], "async")) + (((t[0], "generic"),) if enable else ())
        else:  # st
            reading = ()
        reads = tuple(name for name, _ in reading)
        branches = []
        for branch, values, families in self.agent_branches(state, key, reads):
            first = len(branch.events)
            taken = frozenset(range(first, first + len(values)))
            if ins.op == "commit":
                for bar, value, family in zip(t, values, families):
                    self.arrive_on(branch, key, dict(base, order="relaxed"), bar, value, family, "arrive", (1,), frozenset())
            elif ins.op == "st":
                value = self.value(branch, ins.values[0])
                self.emit(branch, dict(weak, address=self.low.addresses[ins.addresses[0]], writes=True, write_value=value), self.taint(branch, ins.values[0]))
                self.record(branch, ins.addresses[0], value, self.prov(branch, ins.values[0]), key)
            else:
                for (name, proxy), value in zip(reading, values):
                    self.emit(branch, dict(weak, proxy=proxy, address=self.low.addresses[name], reads=True, read_value=value), frozenset())
                if ins.op == "ld":
                    assert ins.dest is not None, "tcgen05.ld has a destination"
                    branch.regs[ins.dest.name] = values[0]
                    branch.taint[ins.dest.name] = frozenset({first})
                    branch.prov[ins.dest.name] = families[0]
                else:
                    value = values[0] if ins.op in ("cp", "shift") else (values[0] * values[1] + (values[2] if enable else 0)) & MASK
                    family = self.prov(branch, *ins.values)  # enable-input-d's register: a true dependency (§9.7.16.6.4.5)
                    for more in families:
                        family = _join(family, more)
                    self.emit(
                        branch,
                        dict(weak, address=self.low.addresses[ins.addresses[0]], writes=True, write_value=value),
                        taken | self.taint(branch, *ins.values),
                    )
                    self.record(branch, ins.addresses[0], value, family, key)
            branch.pc += 1
            branches.append(branch)
        return branches

    def barrier(self, state: _State, ins: BarrierOp) -> list[_State]:
        """A barrier operation (§9.7.13.1, §9.7.13.3): one event. ``bar.red`` "performs a reduction
        operation across threads": its result depends on the other threads, so the thread takes
        each result it may have (popc: 0 .. the threads of its CTA; and, or: 0 or 1), and the
        engines keep the executions where it is the reduction of the group's predicates."""
        barrier_id = self.value(state, ins.barrier_id)
        count = None if ins.quorum is None else self.value(state, ins.quorum)
        slot = (ins.level, barrier_id)
        phase = state.barriers.get(slot, 0)
        state.barriers[slot] = phase + 1
        fields = {"instruction": ins.text, "line": ins.line}
        if ins.level == "cluster" and "relaxed" in ins.qualifiers:
            fields["order"] = "relaxed"  # §9.7.13.3: "no memory ordering and visibility guarantees"
        if ins.op != "red":
            self.emit(state, dict(fields, barrier=Barrier(ins.level, ins.op, barrier_id, count, phase)), self.taint(state, *ins.operands))
            return [state]
        assert ins.dest is not None and ins.predicate is not None and ins.reduction is not None, "bar.red has a destination, a predicate, a reduction"
        predicate = int(self.value(state, ins.predicate) != 0)
        placement = self.low.test.threads[self.thread]
        same_cta = sum(1 for t in self.low.test.threads if (t.gpu, t.cta) == (placement.gpu, placement.cta))
        results = range(same_cta + 1) if ins.reduction == "popc" else range(2)
        branches = []
        for result in results:
            branch = state.copy()
            barrier = Barrier(ins.level, ins.op, barrier_id, count, phase, ins.reduction, predicate, result)
            self.emit(branch, dict(fields, barrier=barrier), self.taint(branch, *ins.operands, ins.predicate))
            branch.regs[ins.dest.name] = result
            branches.append(branch)
        return branches


_SYNCHRONOUS = frozenset({"fence::before_thread_sync", "fence::after_thread_sync", "wait::ld", "wait::st", "fence"})
"""The synchronous tcgen05 instructions of the dialect (§9.7.16.6.1: events of the thread) and
wgmma.fence; every other tcgen05 and wgmma instruction is asynchronous."""

_AGENTS = {
    BulkCopy: "bulk_copy",
    AsyncCopy: "async_copy",
    AsyncArrive: "async_arrive",
    AsyncStore: "async_store",
    Tcgen05Op: "tcgen05",
    WgmmaOp: "wgmma",
    TensorCopy: "tensor_copy",
}
"""The asynchronous instructions and the :class:`_Runner` method that lowers each (tcgen05 and
wgmma except their :data:`_SYNCHRONOUS` forms)."""

_NO_DERIVATION: frozenset = frozenset({frozenset()})
"""The derivations of a constant: one, through no write."""
MAX_DERIVATIONS = 64
"""Most derivations kept for one register; beyond, they are merged (see :func:`_join`)."""


def state_space(qualifiers: Iterable[str]) -> str | None:
    """The state space an instruction's qualifiers name for its object (§5.1): ``.shared`` is
    ``.shared::cta``; None when they name none (generic addressing)."""
    for q in qualifiers:
        if q in ("global", "shared::cta", "shared::cluster"):
            return q
        if q == "shared":
            return "shared::cta"
    return None


def _join(a: frozenset, b: frozenset) -> frozenset:
    """Derivations of a value computed from two others: every union of one of each, minimal ones
    kept. Past :data:`MAX_DERIVATIONS` the family is replaced by the intersection of its members,
    a smaller derivation that forbids less (still sound, only less precise)."""
    if a == _NO_DERIVATION:
        return b
    if b == _NO_DERIVATION:
        return a
    unions = {x | y for x in a for y in b}
    minimal = frozenset(u for u in unions if not any(v < u for v in unions))
    if len(minimal) > MAX_DERIVATIONS:
        return frozenset({frozenset.intersection(*minimal)})
    return minimal


def _mask_of(ins: Atomic) -> int:
    return (1 << (access_width(ins.qualifiers) or (64, False))[0]) - 1


# ---- the whole test ----------------------------------------------------------------------------------


class OutOfTime(Exception):
    """The deadline passed before every trace was built (the check is then Unknown)."""


class _Lowering:
    def __init__(self, test: LitmusTest, unroll_bound: int, deadline: float | None = None):
        if unroll_bound < 0:
            raise PtxSpecError(f"the unrolling bound must be >= 0, not {unroll_bound}")
        self.test = test
        self.unroll_bound = unroll_bound
        self.deadline = deadline
        self.where = Location(test.source)
        self.tensor_maps = frozenset(litmus.tensor_maps(test))
        self.tensors = tuple(test.locations_used())
        """The locations a tensor map may point to; a tensor map's value is 1 + an index here."""
        self.addresses = self._addresses()
        self.widths = self._widths()
        self.initial_values = self._initial_values()
        self.registers = self._registers()
        self.domain: Domain = {}

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime()

    def thread_location(self, thread: int) -> Location:
        """Where a thread's code starts in the file (its first instruction), or the file."""
        for ins in self.test.code[thread]:
            line = getattr(ins, "line", None)
            if line is not None:
                return Location(self.test.source, line, getattr(ins, "column", None))
        return Location(self.test.source)

    def physical(self, name: str) -> str:
        return self.addresses[name].physical

    def tensor_map_value(self, tensor: str) -> int:
        """The value of a tensor map that describes ``tensor`` (an opaque object, §5.5.8: the
        dialect gives it the one field that decides what a copy reads and writes, the address)."""
        return 1 + self.tensors.index(tensor)

    def tensor_of(self, value: int) -> str:
        """The tensor a tensor map holding ``value`` describes (the parser lets only the tensor
        instructions write tensor maps, so every value they hold is one :meth:`tensor_map_value` made)."""
        assert 1 <= value <= len(self.tensors), "a tensor map holds only tensor-map values"
        return self.tensors[value - 1]

    def value_text(self, physical: str, value: int) -> str:
        """A value as the test writes it: ``&x`` in a tensor map."""
        return f"&{self.tensor_of(value)}" if physical in self.tensor_maps else str(_signed(value))

    def _addresses(self) -> dict[str, Address]:
        out: dict[str, Address] = {}
        for entry in self.test.init:
            if isinstance(entry, LocationInit):
                if entry.pointer is not None and entry.name not in self.tensor_maps:
                    raise PtxSpecError(
                        f"location {entry.name!r} holds the address of {entry.pointer!r}: pointer values are for tensor maps only (the tensorMap of a tensor copy)",
                        where=Location(self.test.source, entry.line, entry.column),
                    )
                out[entry.name] = Address(entry.name, entry.name, entry.name)
            elif isinstance(entry, AliasDecl):
                target = out[entry.target]
                generic = entry.name if entry.proxy == "generic" else target.generic
                out[entry.name] = Address(entry.name, target.physical, generic, entry.proxy)
            elif entry.pointer is not None:
                raise PtxSpecError(
                    f"register P{entry.thread}:{entry.register} holds the address of {entry.pointer!r}: pointer values are not supported",
                    where=Location(self.test.source, entry.line, entry.column),
                )
        for name in self.test.locations_used():
            out.setdefault(name, Address(name, name, name))
        return out

    def _widths(self) -> dict[str, int]:
        """The bits each physical location holds: the width of the typed ld/st/atom/red that access
        it (an access of ``.type`` moves that many bits), 64 where none names a type (the dialect's
        untyped accesses move the whole location). Accesses of two widths to one location
        partially overlap (§8.2.1), and a litmus location here is one value: refused, as is an
        access wider than the dialect's 64-bit registers."""
        seen: dict[str, tuple[int, Load | Store | Atomic]] = {}
        for code in self.test.code:
            for ins in code:
                if not isinstance(ins, (Load, Store, Atomic)):
                    continue
                typed = access_width(ins.qualifiers)
                if typed is None:
                    continue
                where = Location(self.test.source, ins.line, ins.column)
                if typed[0] > WIDTH:
                    raise PtxSpecError(f"{ins.text}: a {typed[0]}-bit access; the dialect's registers hold 64 bits (not supported)", where=where)
                physical = self.physical(ins.address)
                first, by = seen.setdefault(physical, (typed[0], ins))
                if first != typed[0]:
                    raise PtxSpecError(
                        f"{ins.text}: a {typed[0]}-bit access to {physical}, which line {by.line} accesses with {first} bits ({by.text}): "
                        "accesses of different sizes to one location partially overlap (§8.2.1); a litmus location is one value here, "
                        "so mixed-size tests are not supported",
                        where=where,
                    )
        return {physical: width for physical, (width, _) in seen.items()}

    def mask_of(self, physical: str) -> int:
        """All ones in the bits the location holds (:meth:`_widths`)."""
        return (1 << self.widths.get(physical, WIDTH)) - 1

    def _initial_values(self) -> dict[str, int]:
        """One initial value per physical location (§8.2.6); 0 where the test gives none. A
        location of typed accesses holds their width's bits: its initial value must fit them."""
        values: dict[str, int] = {}
        for address in self.addresses.values():
            values.setdefault(address.physical, 0)
        for entry in self.test.init:
            if isinstance(entry, LocationInit):
                if entry.pointer is not None:  # a tensor map (_addresses() rejects the others)
                    values[self.physical(entry.name)] = self.tensor_map_value(entry.pointer)
                    continue
                assert entry.value is not None, "a location's initial value is a number or a pointer"
                width = self.widths.get(self.physical(entry.name), WIDTH)
                if width < WIDTH and not -(1 << (width - 1)) <= entry.value < 1 << width:
                    raise PtxSpecError(
                        f"location {entry.name!r} starts at {entry.value}, which does not fit the {width}-bit accesses the test makes to it",
                        where=Location(self.test.source, entry.line, entry.column),
                    )
                values[self.physical(entry.name)] = entry.value & self.mask_of(self.physical(entry.name))
        return values

    def _registers(self) -> list[tuple[str, ...]]:
        """Every register each thread names: in its code, its initial values, the condition."""
        names: list[dict[str, None]] = [{} for _ in self.test.threads]
        for entry in self.test.init:
            if isinstance(entry, RegisterInit):
                names[entry.thread].setdefault(entry.register, None)
        for t, code in enumerate(self.test.code):
            for ins in code:
                for reg in _registers_of(ins):
                    names[t].setdefault(reg, None)
        for term in observed_terms(self.test):
            if isinstance(term, RegisterTerm):
                names[term.thread].setdefault(term.register, None)
        return [tuple(sorted(n, key=_register_order)) for n in names]

    def compute_domain(self) -> None:
        """The least fixed point of §8.10.4's non-circular derivations (see the module docstring)."""
        domain: Domain = {loc: {value: [frozenset()]} for loc, value in self.initial_values.items()}
        for _ in range(MAX_ROUNDS):
            self.domain = domain
            grown = {loc: {v: list(ds) for v, ds in values.items()} for loc, values in domain.items()}
            changed = False
            for t in range(len(self.test.threads)):
                self.check_deadline()
                runner = _Runner(self, t, tagged=True)
                for path in runner.run():
                    for loc, value, derivation in path.writes:
                        changed |= _add_derivation(grown[loc], value, frozenset(derivation))
            for loc, values in grown.items():
                if len(values) > MAX_DOMAIN:
                    raise PtxSpecError(
                        f"location {loc!r} can hold more than {MAX_DOMAIN} values: the value domain is unbounded (a loop keeps producing new values)",
                        where=self.where,
                    )
            if not changed:
                self.domain = grown
                return
            domain = grown
        big = max(domain, key=lambda loc: len(domain[loc]))
        raise PtxSpecError(
            f"the values of location {big!r} do not settle within {MAX_ROUNDS} rounds: the value domain is unbounded (a loop keeps producing new values)",
            where=self.where,
        )

    def lower(self) -> Program:
        self.compute_domain()
        next_eid = 0
        initial: list[Event] = []
        names_by_physical: dict[str, str] = {}
        for name, address in self.addresses.items():
            if address.physical == name:
                names_by_physical.setdefault(name, name)
        for physical, value in self.initial_values.items():
            address = self.addresses[names_by_physical.get(physical, physical)]
            initial.append(
                Event(
                    next_eid,
                    None,
                    -1,
                    f"init {physical}={self.value_text(physical, value)}",
                    writes=True,
                    address=address,
                    proxy="generic",
                    order="weak",
                    write_value=value,
                )
            )
            next_eid += 1
        threads: list[Thread] = []
        truncated = False
        for t, decl in enumerate(self.test.threads):
            runner = _Runner(self, t, tagged=False)
            seen: dict[tuple, None] = {}
            for path in runner.run():
                if path.complete:
                    seen.setdefault((path.events, path.registers, path.data, path.ctrl), None)
            truncated |= runner.truncated
            traces: list[Trace] = []
            for events, registers, data, ctrl in seen:
                base = next_eid
                built = tuple(Event(base + i, t, i, **dict(fields)) for i, fields in enumerate(events))
                next_eid += len(built)
                traces.append(
                    Trace(t, built, dict(registers), frozenset((base + a, base + b) for a, b in data), frozenset((base + a, base + b) for a, b in ctrl))
                )
            threads.append(Thread(t, decl.name, Placement(decl.cta, decl.gpu, decl.cluster), tuple(traces)))
        self.check_reduction_counts(threads)
        return Program(
            name=self.test.name,
            source=self.test.source,
            addresses=dict(self.addresses),
            initial=tuple(initial),
            threads=tuple(threads),
            condition=self.condition(),
            observed=observed_terms(self.test),
            unroll_bound=self.unroll_bound,
            truncated=truncated,
            comments=self.test.comments,
        )

    def condition(self) -> Condition:
        """The test's condition, a constant compared with a location of typed accesses taken at the
        location's width (``x == -1`` of a 32-bit location is ``x == 0xffffffff``)."""

        def masked(formula: Formula) -> Formula:
            if isinstance(formula, Compare):
                left, right = formula.left, formula.right
                if isinstance(left, LocationTerm) and isinstance(right, Constant):
                    right = Constant(right.value & self.mask_of(self.physical(left.name)))
                if isinstance(right, LocationTerm) and isinstance(left, Constant):
                    left = Constant(left.value & self.mask_of(self.physical(right.name)))
                return Compare(formula.op, left, right)
            if isinstance(formula, Not):
                return Not(masked(formula.operand))
            if isinstance(formula, (And, Or)):
                return type(formula)(tuple(masked(f) for f in formula.operands))
            return formula

        condition = self.test.condition
        return Condition(condition.quantifier, masked(condition.formula), condition.text)

    def check_reduction_counts(self, threads: list[Thread]) -> None:
        """§9.7.13.1: bar.red with a thread count b reduces "across threads" of the barrier's use;
        when more than b threads of the CTA may execute that use, which b of them complete it (and
        whose predicates are reduced) depends on their arrival order, which the dialect does not
        model for bar.red: refused with the reason. With at most b threads, every thread of the use
        takes part, as without a count."""
        users: dict[tuple, set[int]] = {}
        where: dict[tuple, Event] = {}
        for thread in threads:
            for trace in thread.traces:
                for event in trace.events:
                    barrier = event.barrier
                    if barrier is not None and barrier.reduction is not None and barrier.count is not None:
                        key = (thread.placement.gpu, thread.placement.cta, barrier.barrier_id, barrier.phase, barrier.count)
                        users.setdefault(key, set()).add(thread.index)
                        where.setdefault(key, event)
        for key, who in users.items():
            if len(who) > key[-1]:
                event = where[key]
                raise PtxSpecError(
                    f"bar.red with thread count {key[-1]} on barrier {key[2]} may be executed by {len(who)} threads of the CTA: which "
                    f"{key[-1]} of them complete it and have their predicates reduced depends on their arrival order (not supported)",
                    where=Location(self.test.source, event.line, None),
                )


def _add_derivation(values: dict[int, list[frozenset]], value: int, derivation: frozenset) -> bool:
    """Keep only minimal derivations per value; True when something new was added."""
    known = values.setdefault(value, [])
    if any(d <= derivation for d in known):
        return False
    known[:] = [d for d in known if not derivation <= d] + [derivation]
    return True


def _registers_of(ins: Instruction) -> Iterator[str]:
    yield from registers_written(ins)
    yield from registers_read(ins)


def _register_order(name: str) -> tuple:
    """r0, r1, ..., r10 in numeric order (compared as digit strings: no int() of a huge name)."""
    digits = name.lstrip("r%")
    if not (digits.isdigit() and name.startswith("r")):
        return (1, 0, "", name)
    value = digits.lstrip("0") or "0"
    return (0, len(value), value, name)


def observed_terms(test: LitmusTest) -> tuple[Term, ...]:
    """The terms a final state shows: those of the condition, then of ``locations``, in order."""
    seen: dict[Term, None] = {}
    for term in litmus.condition_terms(test.condition) + tuple(test.locations):
        if not isinstance(term, Constant):
            seen.setdefault(term, None)
    return tuple(seen)


# ---- entry points ------------------------------------------------------------------------------------


def lower(test: LitmusTest, *, unroll_bound: int = DEFAULT_UNROLL, deadline: float | None = None) -> Program:
    """Every trace of every thread of ``test``, loops unrolled ``unroll_bound`` times.

    ``deadline`` (a ``time.monotonic()`` value): past it, :class:`OutOfTime` is raised."""
    return _Lowering(test, unroll_bound, deadline).lower()


def unlowered(test: LitmusTest, *, unroll_bound: int = DEFAULT_UNROLL) -> Program:
    """A program with the test's name, condition and observed terms but no threads: what a verdict
    that was not reached (Unknown) refers to."""
    return Program(
        name=test.name,
        source=test.source,
        addresses={},
        initial=(),
        threads=(),
        condition=test.condition,
        observed=observed_terms(test),
        unroll_bound=unroll_bound,
        comments=test.comments,
    )


def load(path_or_text: str | Path, *, unroll_bound: int = DEFAULT_UNROLL) -> Program:
    """Parse and lower a litmus test given as a path or as its text."""
    if isinstance(path_or_text, Path):
        test = litmus.parse_file(path_or_text)
    elif "\n" not in path_or_text and (_is_file(path_or_text) or path_or_text.endswith(".litmus")):
        test = litmus.parse_file(path_or_text)
    else:
        test = litmus.parse(path_or_text)
    return lower(test, unroll_bound=unroll_bound)


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


__all__ = ["lower", "load", "unlowered", "local_op", "OutOfTime"]
