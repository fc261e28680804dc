"""A litmus test as a GPU kernel: the PTX that runs many instances of the test at once, for
``ptxspec litmus-run`` (:mod:`ptxspec.conformance.litmus_run`) and the device script
(``conformance/silicon/litmus_device.py``).

The kernel follows the GPU litmus-testing method of Alglave et al. (ASPLOS'15) and Levine et al.
("MC Mutants", ASPLOS'23): many *instances* of the test run in one launch, each with its own copy
of the test's locations, at places in a shared buffer that the host draws anew for every launch;
*stress* blocks hammer the buffer's other words while the instances run; all blocks meet at a
barrier before they start.

**GPUs.** Threads the test places on different GPUs (``P1@cta 0,gpu 1``) run on different
devices of one host: each device launches the blocks of its roles, all of them reading and
writing the buffer, output and start counter of GPU 0 through peer access.

**Placement.** A thread of the test (``P0``, ``P1`` ...) is a warp, and each of its 32 lanes is a
different instance. The test's threads are grouped by their CTA (``P0@cta 0`` and ``P1@cta 0``
share one): each group is a *role*, played by a block whose first warps are the group's threads.
A launch has ``copies`` blocks per role; the host's role table tells each block which role and
which copy it plays, shuffled every launch, so that the blocks that meet in an instance change
(and with them the SMs). Instance ``copy * 32 + lane`` is played by lane ``lane`` of the warps of
that copy's blocks. A test whose threads name a cluster (``P0@cta 0,cluster 0``) runs with clusters
of one block per role (``.reqnctapercluster``), the roles in a fixed order within a cluster.

**Memory.** Every location of every instance is a word of the buffer at the byte offset the host
gives (the *slot* table: per instance, per location), filled with the test's initial value before
the launch; the host reads the final values from there after it. Registers a test observes are
written to the output table (per instance, per observed register).

**Instructions.** Each of the dialect's instructions becomes the PTX instruction it names
(:func:`instruction_ptx`), its location operand the address register of that location in this
instance. What a kernel cannot express -- other proxies (texture, surface, constant), aliases,
pointers, state-space qualifiers other than ``.global``, mbarriers, asynchronous and tensor
instructions, loops (a backward branch could spin for ever on silicon), a cluster across GPUs -- is refused
with :class:`NotRunnable` and the reason. The dialect's ``red.acq_rel`` (PTX's ``red`` is
``.relaxed`` or ``.release``) runs as ``atom.acq_rel`` with its result discarded: at least as strong
as the model's write-only reading, so an outcome it shows is still evidence for the model's
soundness, but it cannot show the weakest behaviours of such a test. Barriers are allowed only where every thread of a CTA
passes the same barriers in the same order (a mismatch would hang the GPU).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from ptxspec.memory_model import litmus as L
from ptxspec.memory_model.lowering import access_width, observed_terms
from ptxspec.memory_model.program import LocationTerm, RegisterTerm
from ptxspec.spec.errors import PtxSpecError

WARP = 32
#: The kernel's parameters, in order (the device script passes them so).
PARAMETERS = ("mem", "slots", "roles", "out", "sync", "test_blocks", "all_blocks", "stress", "stress_count", "stress_rounds", "seed")
#: The 32-bit ones, with the register each is read into.
U32_PARAMETERS = {"test_blocks": "n", "all_blocks": "all", "stress_count": "stress_count", "stress_rounds": "rounds", "seed": "seed"}
#: How long a block waits at the start barrier before it goes on alone (spins).
START_SPINS = 1 << 22
#: The width of the kernel's registers for the test's registers (the dialect's values are 64-bit).
REGISTER_BITS = 64
HALF_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
SCOPE = {"cta": "cta", "cluster": "cluster", "gpu": "gpu", "sys": "sys"}
BRANCH = {"beq": "eq", "bne": "ne", "blt": "lt", "bgt": "gt", "ble": "le", "bge": "ge"}
LOCAL = {"add": "add.s64", "sub": "sub.s64", "mul": "mul.lo.s64", "and": "and.b64", "or": "or.b64", "xor": "xor.b64"}


#: What a refusal's message says before its reason.
NOT_RUNNABLE = "no kernel form: "


class NotRunnable(PtxSpecError):
    """A litmus test that a kernel cannot express (the message says why)."""


@attrs.frozen
class Location:
    name: str
    bits: int  # the width of every access to it
    initial: int


@attrs.frozen
class Observed:
    """One term of a final state: a register of a thread (``slot`` in the output table) or a
    location (``index`` among the test's locations)."""

    kind: str  # "register" or "location"
    thread: int | None
    name: str
    slot: int


@attrs.frozen
class Kernel:
    """The kernel of one test and what the host needs to run it (:meth:`plan`)."""

    name: str
    test: str
    source: str
    ptx: str
    roles: tuple[tuple[int, ...], ...]
    role_gpus: tuple[int, ...]
    """The GPU (0, 1, ...) of each role: threads the test places on different GPUs run on
    different devices, sharing the buffer of GPU 0 (peer access)."""
    cluster: bool
    locations: tuple[Location, ...]
    observed: tuple[Observed, ...]

    @property
    def warps(self) -> int:
        return max(len(role) for role in self.roles)

    def plan(self) -> dict:
        """The JSON the device script reads."""
        return {
            "kernel": self.name,
            "test": self.test,
            "source": self.source,
            "roles": [list(role) for role in self.roles],
            "cluster": self.cluster,
            "role_gpus": list(self.role_gpus),
            "gpus": max(self.role_gpus) + 1,
            "warps": self.warps,
            "locations": [{"name": loc.name, "bits": loc.bits, "initial": loc.initial} for loc in self.locations],
            "observed": [{"kind": o.kind, "thread": o.thread, "name": o.name, "slot": o.slot} for o in self.observed],
            "registers": sum(1 for o in self.observed if o.kind == "register"),
        }


# ---------------------------------------------------------------------------------------------
# What can run
# ---------------------------------------------------------------------------------------------


def _refuse(test: L.LitmusTest, why: str) -> NotRunnable:
    return NotRunnable(f"{test.name}: {NOT_RUNNABLE}{why}", where=test.source)


def _roles(test: L.LitmusTest) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], bool]:
    """The threads grouped by CTA (and GPU), in order of first appearance; each group's GPU;
    whether they form a cluster."""
    clusters = {d.cluster for d in test.threads}
    if len(clusters - {None}) > 1:
        raise _refuse(test, "its threads are in several clusters")
    if clusters != {None} and len({d.gpu for d in test.threads}) > 1:
        raise _refuse(test, "a cluster is on one GPU")
    groups: dict[tuple[int, int], list[int]] = {}
    for d in test.threads:
        groups.setdefault((d.gpu, d.cta), []).append(d.index)
    gpus = sorted({gpu for gpu, _ in groups})
    return tuple(tuple(g) for g in groups.values()), tuple(gpus.index(gpu) for gpu, _ in groups), clusters != {None}


def _check_instruction(test: L.LitmusTest, ins) -> None:
    kind = type(ins).__name__
    if isinstance(ins, (L.Load, L.Store, L.Atomic)):
        if ins.proxy != "generic":
            raise _refuse(test, f"{ins.text!r} uses the {ins.proxy} proxy")
        if ins.order == "mmio":
            raise _refuse(test, f"{ins.text!r} is an .mmio access")
        spaces = [q for q in ins.qualifiers if q in ("shared", "shared::cta", "shared::cluster", "local", "const", "param")]
        if spaces:
            raise _refuse(test, f"{ins.text!r} names the .{spaces[0]} state space (the kernel's locations are global)")
        operands = (ins.value,) if isinstance(ins, L.Store) else getattr(ins, "operands", ())
        if any(q in HALF_TYPES for q in ins.qualifiers) and any(isinstance(o, L.Immediate) for o in operands):
            raise _refuse(test, f"{ins.text!r}: PTX has no immediate of a 16-bit float type (give it in a register)")
    elif isinstance(ins, L.Fence):
        if ins.sem not in ("sc", "acq_rel", "acquire", "release") or ins.restrict is not None:
            raise _refuse(test, f"{ins.text!r} is a restricted fence")
    elif isinstance(ins, L.ProxyFence):
        if ins.kind != "alias":
            raise _refuse(test, f"{ins.text!r} orders another proxy")
    elif isinstance(ins, L.BarrierOp):
        if ins.level != "cta" or ins.op not in ("sync", "arrive") or ins.quorum is not None or ins.instance is not None:
            raise _refuse(test, f"{ins.text!r}: only bar.cta.sync / bar.cta.arrive with a barrier id")
        if not isinstance(ins.barrier_id, L.Immediate) or not 0 <= ins.barrier_id.value < 15:
            raise _refuse(test, f"{ins.text!r}: a barrier id from a register, or above 14 (barrier 0 is the kernel's start)")
    elif isinstance(ins, L.Local):
        if ins.op not in ("mov", *LOCAL):
            raise _refuse(test, f"{ins.text!r}: the register operation {ins.op}")
    elif not isinstance(ins, (L.Label, L.Branch, L.Jump)):
        raise _refuse(test, f"{ins.text!r} ({kind}) has no kernel form yet")


def _check_control(test: L.LitmusTest, code: tuple) -> None:
    """Forward branches only: a loop could spin for ever on silicon (the model unrolls it)."""
    seen: set[str] = set()
    for ins in code:
        if isinstance(ins, L.Label):
            seen.add(ins.name)
        elif isinstance(ins, (L.Branch, L.Jump)) and ins.target in seen:
            raise _refuse(test, f"{ins.text!r} jumps back (a loop)")


def _check_barriers(test: L.LitmusTest, roles) -> None:
    """Every thread of a CTA passes the same barriers in the same order, none under a branch."""
    for role in roles:
        sequences = []
        for t in role:
            code = test.code[t]
            if any(isinstance(i, L.BarrierOp) for i in code) and any(isinstance(i, (L.Branch, L.Jump)) for i in code):
                raise _refuse(test, f"P{t} has a barrier and a branch")
            sequences.append([(i.op == "sync", _barrier_id(i)) for i in code if isinstance(i, L.BarrierOp)])
        ids = [[b for _, b in s] for s in sequences]
        if any(s != ids[0] for s in ids):
            raise _refuse(test, "the threads of a CTA pass different barriers")
        if ids[0] and not any(all(sync for sync, _ in s) for s in sequences):
            raise _refuse(test, "no thread of the CTA waits at the barriers")


def _barrier_id(ins: L.BarrierOp) -> int:
    """The barrier a CTA barrier names (an immediate: :func:`_check_instruction` refuses others)."""
    barrier = ins.barrier_id
    assert isinstance(barrier, L.Immediate)
    return barrier.value


def _locations(test: L.LitmusTest) -> tuple[Location, ...]:
    initial: dict[str, int] = {}
    for entry in test.init:
        if isinstance(entry, L.AliasDecl):
            raise _refuse(test, f"{entry.name} is an alias of {entry.target}")
        if isinstance(entry, L.LocationInit):
            if entry.pointer is not None:
                raise _refuse(test, f"{entry.name} holds a pointer")
            initial[entry.name] = entry.value or 0
        if isinstance(entry, L.RegisterInit) and entry.pointer is not None:
            raise _refuse(test, f"P{entry.thread}:{entry.register} holds a pointer")
    out = []
    for name in test.locations_used():
        bits = _location_bits(test, name)
        out.append(Location(name, bits, initial.get(name, 0) & ((1 << bits) - 1)))
    return tuple(out)


def _accesses(test: L.LitmusTest, name: str) -> Iterator:
    for code in test.code:
        for ins in code:
            if isinstance(ins, (L.Load, L.Store, L.Atomic)) and ins.address == name:
                yield ins


def _type_of(ins) -> str | None:
    return next((q for q in ins.qualifiers if q in L._TYPES or q in L.FLOAT_ATOMIC_TYPES), None)


def _location_bits(test: L.LitmusTest, name: str) -> int:
    """The width of a location: its accesses' type (one width: mixed sizes are refused by the
    model too), else 32 where an untyped ``atom.inc``/``.dec`` needs ``.u32``, else 64 (the
    dialect's untyped values are 64-bit)."""
    widths = set()
    small = False
    for ins in _accesses(test, name):
        typed = access_width(ins.qualifiers)
        if typed is not None:
            widths.add(typed[0])
        elif isinstance(ins, L.Atomic) and ins.op in ("inc", "dec"):
            small = True
    if len(widths) > 1:
        raise _refuse(test, f"{name} is accessed with several sizes")
    if widths:
        (bits,) = widths
        if bits < 32 or bits > 64:
            raise _refuse(test, f"{name} is accessed as {bits}-bit (the kernel's words are 32 or 64 bits)")
        return bits
    if small:  # a 32-bit word is the dialect's 64-bit value only while every value written fits it
        for ins in _accesses(test, name):
            values = (ins.value,) if isinstance(ins, L.Store) else getattr(ins, "operands", ())
            if any(not isinstance(v, L.Immediate) or not 0 <= v.value < 1 << 32 for v in values):
                raise _refuse(test, f"{name} is a 32-bit word (atom.inc/.dec) but {ins.text!r} may write a value that does not fit 32 bits")
    return 32 if small else 64


def _observed(test: L.LitmusTest, locations: tuple[Location, ...]) -> tuple[Observed, ...]:
    names = [loc.name for loc in locations]
    terms = observed_terms(test)  # the model's final state shows the same terms, in this order
    out: list[Observed] = []
    registers = 0
    for term in terms:
        if isinstance(term, RegisterTerm):
            out.append(Observed("register", term.thread, term.register, registers))
            registers += 1
        elif isinstance(term, LocationTerm):
            if term.name not in names:
                raise _refuse(test, f"the condition names {term.name}, which no instruction uses")
            out.append(Observed("location", None, term.name, names.index(term.name)))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# PTX
# ---------------------------------------------------------------------------------------------


def _reg(thread: int, name: str) -> str:
    """The kernel's register for a register of the test (the dialect's ``%r`` becomes ``$r``)."""
    return f"%t{thread}_{name.replace('%', '$')}"


def _value(thread: int, operand, bits: int, float_type: bool = False) -> str:
    """A source operand at ``bits``: an immediate (a float type's as its bit pattern, 0f...), or
    the thread's 64-bit register cut to ``bits`` (in %v32 / itself)."""
    if isinstance(operand, L.Immediate):
        value = operand.value & ((1 << bits) - 1)
        if float_type:
            return f"0f{value:08X}" if bits == 32 else f"0d{value:016X}"
        return f"0x{value:x}"
    return _reg(thread, operand.name)


class _Thread:
    """The PTX lines of one thread of the test."""

    def __init__(self, kernel: _Builder, thread: int) -> None:
        self.k = kernel
        self.t = thread
        self.lines: list[str] = []
        self.temps = 0

    def emit(self, line: str) -> None:
        self.lines.append("\t" + line)

    def temp(self, bits: int) -> str:
        self.temps += 1
        name = f"%t{self.t}_tmp{self.temps}"
        self.k.declare(name, f".b{bits}")
        return name

    def address(self, name: str) -> str:
        return f"%addr_{self.k.location_index[name]}"

    def source(self, operand, bits: int, float_type: bool = False) -> str:
        """An operand ready for a ``bits``-wide instruction: a narrower copy of a register."""
        text = _value(self.t, operand, bits, float_type)
        if isinstance(operand, L.Register) and bits < REGISTER_BITS:
            narrow = self.temp(bits)
            self.emit(f"cvt.u{bits}.u64 {narrow}, {text};")
            return narrow
        return text

    def result(self, dest: L.Register | None, bits: int) -> str:
        """Where a ``bits``-wide result goes: the register itself at 64 bits, else a temporary
        widened into it afterwards (:meth:`widen`)."""
        if dest is None:
            return self.temp(bits)
        return _reg(self.t, dest.name) if bits == REGISTER_BITS else self.temp(bits)

    def widen(self, dest: L.Register | None, value: str, bits: int, signed: bool) -> None:
        if dest is not None and bits < REGISTER_BITS:
            self.emit(f"cvt.{'s' if signed else 'u'}64.{'s' if signed else 'u'}{bits} {_reg(self.t, dest.name)}, {value};")

    # -- one instruction of the dialect ------------------------------------------------------------

    def instruction(self, ins) -> None:
        method = getattr(self, "_" + type(ins).__name__.lower())
        method(ins)

    def _sem(self, order: str, scope: str | None) -> str:
        if order == "weak":
            return ".weak"
        if order == "volatile":
            return ".volatile"
        return f".{order}.{SCOPE[scope or 'gpu']}"

    def _load(self, ins: L.Load) -> None:
        loc = self.k.locations[self.k.location_index[ins.address]]
        t = _type_of(ins) or f"u{loc.bits}"
        signed = t.startswith("s")
        dest = self.result(ins.dest, loc.bits)
        self.emit(f"ld{self._sem(ins.order, ins.scope)}.global.{t} {dest}, [{self.address(ins.address)}];")
        self.widen(ins.dest, dest, loc.bits, signed)

    def _store(self, ins: L.Store) -> None:
        loc = self.k.locations[self.k.location_index[ins.address]]
        t = _type_of(ins) or f"u{loc.bits}"
        value = self.source(ins.value, loc.bits, t in ("f32", "f64"))
        self.emit(f"st{self._sem(ins.order, ins.scope)}.global.{t} [{self.address(ins.address)}], {value};")

    def _atomic(self, ins: L.Atomic) -> None:
        loc = self.k.locations[self.k.location_index[ins.address]]
        t = _type_of(ins) or (f"u{loc.bits}" if ins.op not in ("and", "or", "xor", "exch", "cas") else f"b{loc.bits}")
        is_float = t in ("f32", "f64")
        op, operands = ins.op, list(ins.operands)
        if op == "sub":  # the dialect's sub: an add of the negation (two's complement at the width)
            op = "add"
            b = operands[0]
            if isinstance(b, L.Immediate):
                operands[0] = L.Immediate((-b.value) & ((1 << loc.bits) - 1))
            else:
                negated = self.temp(REGISTER_BITS)
                self.emit(f"neg.s64 {negated}, {_reg(self.t, b.name)};")
                operands[0] = L.Register(negated.removeprefix(f"%t{self.t}_"))
        sources = ", ".join(self.source(o, loc.bits, is_float) for o in operands)
        noftz = ".noftz" if "noftz" in ins.qualifiers else ""
        if (ins.opcode == "red" or not ins.returns) and ins.order in ("relaxed", "release"):
            self.emit(f"red.{ins.order}.{SCOPE[ins.scope]}.global.{op}{noftz}.{t} [{self.address(ins.address)}], {sources};")
            return
        signed = t.startswith("s")
        dest = self.result(ins.dest, loc.bits)
        self.emit(f"atom.{ins.order}.{SCOPE[ins.scope]}.global.{op}{noftz}.{t} {dest}, [{self.address(ins.address)}], {sources};")
        self.widen(ins.dest, dest, loc.bits, signed)

    def _fence(self, ins: L.Fence) -> None:
        self.emit(f"fence.{ins.sem}.{SCOPE[ins.scope]};")

    def _proxyfence(self, ins: L.ProxyFence) -> None:
        self.emit("fence.proxy.alias;")

    def _barrierop(self, ins: L.BarrierOp) -> None:
        # The barrier counts the threads of the test in this CTA: a warp each (%cta_threads).
        # Barrier 0 is the kernel's start: the test's barrier b is b + 1.
        self.emit(f"barrier.cta.{ins.op}.aligned {_barrier_id(ins) + 1}, %cta_threads;")

    def _local(self, ins: L.Local) -> None:
        dest = _reg(self.t, ins.dest.name)
        if ins.op == "mov":
            self.emit(f"mov.b64 {dest}, {_value(self.t, ins.sources[0], REGISTER_BITS)};")
        else:
            a, b = (_value(self.t, s, REGISTER_BITS) for s in ins.sources)
            self.emit(f"{LOCAL[ins.op]} {dest}, {a}, {b};")

    def _label(self, ins: L.Label) -> None:
        self.lines.append(f"T{self.t}_{ins.name}:")

    def _jump(self, ins: L.Jump) -> None:
        self.emit(f"bra.uni T{self.t}_{ins.target};")

    def _branch(self, ins: L.Branch) -> None:
        a, b = (_value(self.t, s, REGISTER_BITS) for s in (ins.left, ins.right))
        if isinstance(ins.left, L.Immediate):  # setp takes a register first
            a, b = b, a
            cmp = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(BRANCH[ins.opcode], BRANCH[ins.opcode])
        else:
            cmp = BRANCH[ins.opcode]
        self.emit(f"setp.{cmp}.s64 %p_branch, {a}, {b};")
        self.emit(f"@%p_branch bra T{self.t}_{ins.target};")


class _Builder:
    def __init__(
        self, test: L.LitmusTest, name: str, roles, role_gpus: tuple[int, ...], cluster: bool, locations: tuple[Location, ...], observed: tuple[Observed, ...]
    ) -> None:
        self.test = test
        self.name = name
        self.roles = roles
        self.cluster = cluster
        self.locations = locations
        self.location_index = {loc.name: i for i, loc in enumerate(locations)}
        #: The start counter is GPU 0's: other GPUs reach it through peer access, at .sys scope.
        self.start_scope = "sys" if len(set(role_gpus)) > 1 else "gpu"
        self.observed = observed
        self.declared: dict[str, str] = {}

    def declare(self, name: str, kind: str) -> None:
        self.declared[name] = kind

    def registers(self, t: int) -> list[str]:
        names: dict[str, None] = {}
        for entry in self.test.init:
            if isinstance(entry, L.RegisterInit) and entry.thread == t:
                names.setdefault(entry.register, None)
        for ins in self.test.code[t]:
            for field in ("dest", "value", "left", "right"):
                operand = getattr(ins, field, None)
                if isinstance(operand, L.Register):
                    names.setdefault(operand.name, None)
            for operand in (*getattr(ins, "operands", ()), *getattr(ins, "sources", ())):
                if isinstance(operand, L.Register):
                    names.setdefault(operand.name, None)
        for o in self.observed:
            if o.kind == "register" and o.thread == t:
                names.setdefault(o.name, None)
        return list(names)

    def thread_body(self, t: int) -> list[str]:
        body = _Thread(self, t)
        for name in self.registers(t):
            self.declare(_reg(t, name), ".b64")
            initial = next((e.value for e in self.test.init if isinstance(e, L.RegisterInit) and e.thread == t and e.register == name), 0)
            body.emit(f"mov.b64 {_reg(t, name)}, 0x{(initial or 0) & ((1 << 64) - 1):x};")
        for ins in self.test.code[t]:
            body.instruction(ins)
        body.lines.append(f"T{t}$END:")  # '$' keeps it apart from the test's own labels
        for o in self.observed:
            if o.kind == "register" and o.thread == t:
                body.emit(f"st.global.u64 [%out_row+{8 * o.slot}], {_reg(t, o.name)};")
        body.emit("bra.uni DONE;")
        return body.lines

    def ptx(self) -> str:
        """The kernel: entry and registers, the start, the dispatch of a block's warps to the
        threads of the test, each thread's code, and the stress loop."""
        bodies = [line for t in range(len(self.test.threads)) for line in [f"THREAD{t}:", *self.thread_body(t)]]
        declarations = [f"\t.reg {kind} {name};" for name, kind in self.declared.items()]  # filled by the bodies
        lines = self._entry() + declarations + self._start() + self._dispatch() + bodies + STRESS + ["DONE:", "\tret;", "}"]
        return "\n".join(lines) + "\n"

    def _entry(self) -> list[str]:
        cluster = f".reqnctapercluster {len(self.roles)}, 1, 1\n" if len(self.roles) > 1 and self.cluster else ""
        parameters = ",\n".join(f"\t.param .{'u32' if p in U32_PARAMETERS else 'u64'} p_{p}" for p in PARAMETERS)
        return [
            f".visible .entry {self.name}(\n{parameters}\n)",
            f".maxntid {WARP * max(len(r) for r in self.roles)}, 1, 1\n{cluster}{{",
            "\t.reg .b64 %mem, %slots, %roles, %out, %sync, %stress, %out_row, %a, %b;",
            "\t.reg .b32 %blk, %thr, %wrp, %lane, %role, %copy, %word, %n, %all, %count, %i, %spins, %x, %s, %stress_count, %rounds, %cta_threads, %seed, %instance;",
            "\t.reg .pred %p, %p_branch;",
            *(f"\t.reg .b64 %addr_{i};" for i in range(len(self.locations))),
        ]

    def _start(self) -> list[str]:
        """Parameters, then the start: every block's thread 0 arrives at the counter and waits for
        all blocks (a bounded wait: blocks that are not resident cannot hold the others for ever)."""
        lines = [f"\tld.param.u64 %{p}, [p_{p}];" for p in PARAMETERS if p not in U32_PARAMETERS]
        lines += [f"\tld.param.u32 %{register}, [p_{p}];" for p, register in U32_PARAMETERS.items()]
        return lines + [
            "\tcvta.to.global.u64 %mem, %mem;",
            "\tmov.u32 %blk, %ctaid.x;",
            "\tmov.u32 %thr, %tid.x;",
            "\tshr.u32 %wrp, %thr, 5;",
            "\tand.b32 %lane, %thr, 31;",
            "\tsetp.ne.u32 %p, %thr, 0;",
            "\t@%p bra START_WAIT;",
            f"\tatom.add.release.{self.start_scope}.global.u32 %x, [%sync], 1;",
            "\tmov.u32 %spins, 0;",
            "SPIN:",
            f"\tld.acquire.{self.start_scope}.global.u32 %count, [%sync];",
            "\tadd.u32 %spins, %spins, 1;",
            "\tsetp.lt.u32 %p, %count, %all;",
            f"\tsetp.lt.and.u32 %p, %spins, {START_SPINS}, %p;",
            "\t@%p bra SPIN;",
            "START_WAIT:",
            "\tbar.sync 0;",
        ]

    def _dispatch(self) -> list[str]:
        """A test block reads its role and copy, its instance's location addresses and output row,
        and sends each warp to its thread of the test (a warp beyond the role's threads is done)."""
        registers = sum(1 for o in self.observed if o.kind == "register")
        lines = [
            "\tsetp.ge.u32 %p, %blk, %n;",
            "\t@%p bra STRESS;",
            "\tmul.wide.u32 %a, %blk, 4;",
            "\tadd.u64 %a, %roles, %a;",
            "\tld.global.u32 %word, [%a];",
            "\tshr.u32 %role, %word, 16;",
            "\tand.b32 %copy, %word, 65535;",
            "\tmad.lo.u32 %instance, %copy, 32, %lane;",
            f"\tmul.wide.u32 %a, %instance, {4 * len(self.locations)};",
            "\tadd.u64 %a, %slots, %a;",
        ]
        for i in range(len(self.locations)):
            lines += [f"\tld.global.u32 %word, [%a+{4 * i}];", "\tcvt.u64.u32 %b, %word;", f"\tadd.u64 %addr_{i}, %mem, %b;"]
        lines += [f"\tmul.wide.u32 %out_row, %instance, {8 * max(1, registers)};", "\tadd.u64 %out_row, %out, %out_row;"]
        for r in range(len(self.roles)):
            lines += [f"\tsetp.eq.u32 %p, %role, {r};", f"\t@%p bra ROLE{r};"]
        lines.append("\tbra.uni DONE;")
        for r, role in enumerate(self.roles):
            lines += [f"ROLE{r}:", f"\tmov.u32 %cta_threads, {WARP * len(role)};"]
            for w, t in enumerate(role):
                lines += [f"\tsetp.eq.u32 %p, %wrp, {w};", f"\t@%p bra THREAD{t};"]
            lines.append("\tbra.uni DONE;")
        return lines


#: Stress: each thread of a stress block stores and loads words of the buffer that no instance
#: uses (the host's list), in a pseudo-random order of its own (a linear congruential generator).
STRESS = [
    "STRESS:",
    "\tsetp.eq.u32 %p, %stress_count, 0;",
    "\t@%p bra DONE;",
    "\tmad.lo.u32 %x, %blk, 1024, %thr;",
    "\txor.b32 %x, %x, %seed;",
    "\tmov.u32 %i, 0;",
    "STRESS_LOOP:",
    "\tmad.lo.u32 %x, %x, 1664525, 1013904223;",
    "\trem.u32 %s, %x, %stress_count;",
    "\tmul.wide.u32 %a, %s, 4;",
    "\tadd.u64 %a, %stress, %a;",
    "\tld.global.u32 %word, [%a];",
    "\tcvt.u64.u32 %b, %word;",
    "\tadd.u64 %b, %mem, %b;",
    "\tst.global.u32 [%b], %x;",
    "\tld.global.u32 %word, [%b];",
    "\tadd.u32 %i, %i, 1;",
    "\tsetp.lt.u32 %p, %i, %rounds;",
    "\t@%p bra STRESS_LOOP;",
]


def kernel(test: L.LitmusTest, name: str) -> Kernel:
    """The kernel of ``test`` (named ``name`` in the PTX), or :class:`NotRunnable`."""
    roles, role_gpus, cluster = _roles(test)
    for code in test.code:
        for ins in code:
            _check_instruction(test, ins)
        _check_control(test, code)
    _check_barriers(test, roles)
    locations = _locations(test)
    observed = _observed(test, locations)
    builder = _Builder(test, name, roles, role_gpus, cluster, locations, observed)
    return Kernel(name, test.name, test.source, builder.ptx(), roles, role_gpus, cluster, locations, observed)
