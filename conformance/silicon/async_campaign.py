"""The asynchronous-copy campaign: cp.async (§9.7.9.25.3), cp.async.bulk, cp.reduce.async.bulk and
cp.async.bulk.prefetch (§9.7.9.25.4), st.async (§9.7.9.12) and red.async (§9.7.13.7) with their
mbarrier complete-tx, and the mbarrier object's transitions (§9.7.13.15), recorded on sm_90
silicon and replayed against the semantic functions::

    python -m ptxspec.conformance.silicon async prepare BUNDLE     # here (ptxas)
    python3 conformance/silicon/async_device.py run BUNDLE OUT     # on the GPU
    python -m ptxspec.conformance.silicon async verify DIR         # here

A copy record is a cluster of two CTAs (see :mod:`async_device`). :func:`replay_form` rebuilds the
state CTA 0 executed in -- its shared memory, the other CTA's (``State.cluster``), the global
region at the address the chip used, and each CTA's mbarrier after ``mbarrier.init`` and the
``arrive.expect_tx`` of the bytes the form sends it -- runs
:func:`~ptxspec.semantics.instructions.execute`, and compares, as integers, every byte of both
shared regions and of the global region, and whether each CTA's phase 0 completed
(``mbarrier.test_wait``: the complete-tx counted exactly the bytes the manual says). The mbarrier
object's own bits are the implementation's ("opaque", §9.7.13.15.1) and are not compared.

An mbarrier program (:func:`programs`) is a sequence of mbarrier instructions on one object; each
step's ``mbarrier.pending_count`` and ``test_wait.parity`` results are replayed through the
registered instructions of :mod:`ptxspec.semantics.mbarrier`. The programs are drawn so that no
step is one the manual makes undefined.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon import async_device
from ptxspec.conformance.silicon.campaign import HEADER, assemble_each, assemble_module, kernel_name, ptxas_version
from ptxspec.semantics import mbarrier
from ptxspec.semantics.state import AddressMap, Segment, State

R = async_device.REGION
PLAN = "async-plan.json"
"""The plan a recording was made from, kept beside it (its forms, seeds, programs and ptxas's
refusals)."""

#: How a copy form's kind places its operands (see :func:`_issue`).
KINDS = ("cp.async", "bulk-g2s", "bulk-multicast", "bulk-s2cluster", "bulk-s2g", "prefetch", "reduce-s2g", "reduce-s2cluster", "st.async", "red.async")
#: The ``.type`` of st.async's forms (its register is of that type).
ST_ASYNC_TYPES = ("b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64")
REDUCTIONS = ("and", "or", "xor", "add", "inc", "dec", "min", "max")


def _width(type_name: str) -> int:
    return 2 if type_name in ("f16", "bf16") else int(type_name[1:]) // 8


@attrs.frozen
class AsyncForm:
    """One recorded form: its instruction text, how the kernel places its operands (``kind``), the
    width of the elements its values are drawn as, and for cp.async its cp-size and variant
    (``plain``, ``src_size``, ``ignore_src``), for st.async its vector count."""

    instruction: str
    kind: str
    element: int = 1
    size: int = 0
    variant: str = "plain"
    count: int = 1

    @property
    def name(self) -> str:
        tail = {"plain": "", "src_size": "-src_size", "ignore_src": "-ignore_src"}[self.variant]
        size = f"-{self.size}" if self.kind == "cp.async" else ""
        return (self.instruction + size + tail).replace("::", "-")

    @property
    def kernel(self) -> str:
        return kernel_name("a_", self.name)

    def plan(self, seed: int) -> dict:
        return {
            "name": self.name,
            "kernel": self.kernel,
            "instruction": self.instruction,
            "kind": self.kind,
            "element": self.element,
            "size": self.size,
            "variant": self.variant,
            "count": self.count,
            "seed": seed,
        }


def forms() -> tuple[AsyncForm, ...]:
    """Every form the round asks ptxas for (those it refuses are listed in the plan)."""
    out = [
        AsyncForm(f"cp.async.{cop}.shared.global", "cp.async", size=size, variant=variant)
        for cop, size in (("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16))
        for variant in ("plain", "src_size", "ignore_src")
    ]
    out += [AsyncForm("cp.async.cg.shared::cta.global.L2::128B", "cp.async", size=16), AsyncForm("cp.async.ca.shared::cta.global.L2::256B", "cp.async", size=8)]
    out += [
        AsyncForm("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "bulk-g2s", 4),
        AsyncForm("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster", "bulk-multicast", 4),
        AsyncForm("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes", "bulk-s2cluster", 4),
        AsyncForm("cp.async.bulk.global.shared::cta.bulk_group", "bulk-s2g", 4),
        AsyncForm("cp.async.bulk.prefetch.L2.global", "prefetch", 4),
    ]
    types = ("b32", "u32", "s32", "b64", "u64", "s64", "f32", "f64", "f16", "bf16")
    out += [AsyncForm(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{op}.{t}", "reduce-s2g", _width(t)) for op in REDUCTIONS for t in types]
    out += [AsyncForm(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.{t}", "reduce-s2g", 2) for t in ("f16", "bf16")]
    out += [
        AsyncForm(f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{op}.{t}", "reduce-s2cluster", _width(t))
        for op in REDUCTIONS
        for t in ("b32", "u32", "s32", "b64", "u64")
    ]
    out += [
        AsyncForm(f"st.async.shared::cluster.mbarrier::complete_tx::bytes{v}.{t}", "st.async", _width(t), count=n)
        for v, n in (("", 1), (".v2", 2), (".v4", 4))
        for t in ST_ASYNC_TYPES
    ]
    red = [("inc", "u32"), ("dec", "u32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")]
    red += [("add", "u32"), ("add", "s32"), ("add", "u64")]
    out += [AsyncForm(f"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{op}.{t}", "red.async", _width(t)) for op, t in red]
    return tuple(out)


def _issue(form: AsyncForm) -> list[str]:
    """CTA 0's lines: the operand addresses (``%dst``, ``%src``, ``%mbar``) and the instruction,
    then the wait for a bulk or cp.async group."""
    local_dst = " add.s64 %dst, %sb, %dofs64;"
    remote_dst = " mapa.shared::cluster.u64 %dst, %sb, 1; add.s64 %dst, %dst, %dofs64; mapa.shared::cluster.u64 %mbar, %mb, 1;"
    kind, text = form.kind, form.instruction
    if kind == "cp.async":
        lines = [local_dst, " add.s64 %src, %g, %sofs64;"]
        tail = {"plain": "", "src_size": ", %extra", "ignore_src": ", %ign"}[form.variant]
        lines += [" setp.ne.u32 %ign, %extra, 0;", f" {text} [%dst], [%src], {form.size}{tail};", " cp.async.commit_group; cp.async.wait_group 0;"]
        return lines
    if kind in ("bulk-g2s", "bulk-multicast"):
        mask = ", %mask" if kind == "bulk-multicast" else ""
        return [local_dst, " add.s64 %src, %g, %sofs64; mov.u64 %mbar, %mb; cvt.u16.u32 %mask, %extra;", f" {text} [%dst], [%src], %size, [%mbar]{mask};"]
    if kind in ("bulk-s2cluster", "reduce-s2cluster"):
        return [remote_dst, " add.s64 %src, %sb, %sofs64;", f" {text} [%dst], [%src], %size, [%mbar];"]
    if kind in ("bulk-s2g", "reduce-s2g"):
        return [
            " add.s64 %dst, %g, %dofs64; add.s64 %src, %sb, %sofs64;",
            f" {text} [%dst], [%src], %size;",
            " cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;",
        ]
    if kind == "prefetch":
        return [" add.s64 %src, %g, %sofs64;", f" {text} [%src], %size;"]
    values = [f"%b{j}" for j in range(form.count)]
    vector = "{" + ", ".join(values) + "}" if form.count > 1 else values[0]
    return [remote_dst, f" {text} [%dst], {vector}, [%mbar];"]


def kernel_ptx(form: AsyncForm) -> str:
    """One record per cluster of two one-thread CTAs (see :mod:`async_device`)."""
    k = form.kernel
    type_name = form.instruction.rsplit(".", 1)[1]
    lines = [
        f".shared .align 128 .b8 sbuf_{k}[{async_device.BUFFER}];",
        f".visible .entry {k}(.param .u64 pg, .param .u64 ps, .param .u64 pp, .param .u64 pv, .param .u64 pout, .param .u32 pn) .reqnctapercluster 2, 1, 1",
        "{",
        " .reg .b64 %g, %s, %p, %v, %o, %t, %x, %sb, %mb, %dst, %src, %mbar, %st, %dofs64, %sofs64;",
        " .reg .b32 %rank, %rec, %n, %row, %dofs, %sofs, %size, %extra, %tx, %i, %done;",
        " .reg .b16 %mask; .reg .pred %q, %ready, %ign;",
    ]
    if form.kind in ("st.async", "red.async"):
        lines.append(f" .reg .{type_name} %b<4>;")
    lines += [
        " ld.param.u64 %g, [pg]; ld.param.u64 %s, [ps]; ld.param.u64 %p, [pp]; ld.param.u64 %v, [pv]; ld.param.u64 %o, [pout]; ld.param.u32 %n, [pn];",
        " cvta.to.global.u64 %g, %g; cvta.to.global.u64 %s, %s; cvta.to.global.u64 %p, %p; cvta.to.global.u64 %v, %v; cvta.to.global.u64 %o, %o;",
        " mov.u32 %rank, %cluster_ctarank; mov.u32 %rec, %clusterid.x;",
        " setp.ge.u32 %q, %rec, %n; @%q bra DONE;",
        f" mul.wide.u32 %t, %rec, {R}; add.s64 %g, %g, %t;",
        f" shl.b32 %row, %rec, 1; add.u32 %row, %row, %rank; mul.wide.u32 %t, %row, {R}; add.s64 %s, %s, %t;",
        f" mul.wide.u32 %t, %row, {async_device.OUT_ROW}; add.s64 %o, %o, %t;",
        f" mul.wide.u32 %t, %rec, {4 * async_device.PARAMS}; add.s64 %p, %p, %t; mul.wide.u32 %t, %rec, {8 * async_device.VALUES}; add.s64 %v, %v, %t;",
        f" mov.u64 %sb, sbuf_{k}; add.s64 %mb, %sb, {async_device.MBAR_OFFSET};",
        " mov.u64 %dst, 0; mov.u64 %src, 0; mov.u64 %mbar, 0;",
    ]
    lines += [f" ld.global.b64 %x, [%s+{8 * j}]; st.shared::cta.b64 [%sb+{8 * j}], %x;" for j in range(R // 8)]
    lines += [
        " ld.global.v4.u32 {%dofs, %sofs, %size, %extra}, [%p]; cvt.u64.u32 %dofs64, %dofs; cvt.u64.u32 %sofs64, %sofs;",
        " mul.wide.u32 %t, %rank, 4; add.s64 %t, %p, %t; ld.global.u32 %tx, [%t+16];",
    ]
    if form.kind in ("st.async", "red.async"):
        lines += [f" ld.global.{type_name} %b{j}, [%v+{8 * j}];" for j in range(form.count)]
    lines += [
        " mbarrier.init.shared::cta.b64 [%mb], 1;",
        " fence.mbarrier_init.release.cluster;",
        " fence.proxy.async.shared::cta;",
        " mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%mb], %tx;",
        " barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;",
        " setp.ne.u32 %q, %rank, 0; @%q bra WAIT;",
        *_issue(form),
        "WAIT:",
        " mov.u32 %i, 0;",
        "LOOP:",
        " mbarrier.try_wait.parity.shared::cta.b64 %ready, [%mb], 0; @%ready bra WAITED;",
        " add.u32 %i, %i, 1; setp.lt.u32 %q, %i, 4096; @%q bra LOOP;",
        "WAITED:",
        " selp.u32 %done, 1, 0, %ready;",
        " fence.proxy.async.shared::cta; fence.proxy.async.global;",
        " barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;",
    ]
    lines += [f" ld.shared::cta.b64 %x, [%sb+{8 * j}]; st.global.b64 [%o+{8 * j}], %x;" for j in range(R // 8)]
    lines += [
        f" st.global.u32 [%o+{R}], %done; st.global.u64 [%o+{R + 8}], %sb; st.global.u64 [%o+{R + 16}], %g;",
        f" st.global.u64 [%o+{R + 24}], %dst; st.global.u64 [%o+{R + 32}], %src; st.global.u64 [%o+{R + 40}], %mbar;",
        "DONE:",
        " ret;",
        "}",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# mbarrier programs
# ---------------------------------------------------------------------------------------------

OPS = async_device.OPERATIONS
#: The PTX of each program operation, on the object at ``[%m]`` (operand ``%arg``, token ``%st``).
PROGRAM_LINES = {
    "arrive": "mbarrier.arrive.shared::cta.b64 %st, [%m], %arg;",
    "arrive.expect_tx": "mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%m], %arg;",
    "expect_tx": "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%m], %arg;",
    "complete_tx": "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%m], %arg;",
    "arrive_drop": "mbarrier.arrive_drop.shared::cta.b64 %st, [%m], %arg;",
    "init": "mbarrier.init.shared::cta.b64 [%m], %arg;",
    "arrive.noComplete": "mbarrier.arrive.noComplete.release.cta.shared::cta.b64 %st, [%m], %arg;",
}
TOKENS = ("arrive", "arrive.expect_tx", "arrive_drop", "arrive.noComplete")
PROGRAMS = 1024


def program_ptx() -> str:
    steps = async_device.STEPS
    lines = [
        ".shared .align 8 .b8 mbp_obj[8];",
        ".visible .entry mbarrier_program(.param .u64 pprog, .param .u64 pout, .param .u32 pn)",
        "{",
        " .reg .b64 %prog, %out, %m, %st, %w, %t;",
        " .reg .b32 %op, %arg, %rec, %n, %pend, %i;",
        " .reg .pred %q, %w0, %w1;",
        " ld.param.u64 %prog, [pprog]; ld.param.u64 %out, [pout]; ld.param.u32 %n, [pn];",
        " cvta.to.global.u64 %prog, %prog; cvta.to.global.u64 %out, %out;",
        " mov.u32 %rec, %ctaid.x; setp.ge.u32 %q, %rec, %n; @%q bra END;",
        f" mul.wide.u32 %t, %rec, {8 * steps}; add.s64 %prog, %prog, %t; add.s64 %out, %out, %t;",
        " mov.u64 %m, mbp_obj; mov.u64 %st, 0; mov.u32 %i, 0;",
        "STEP:",
        f" setp.ge.u32 %q, %i, {steps}; @%q bra END;",
        " ld.global.v2.u32 {%op, %arg}, [%prog];",
        " setp.eq.u32 %q, %op, 0; @%q bra END;",
        f" mov.u32 %pend, {async_device.NO_TOKEN};",
    ]
    labels = {name: "OP_" + name.replace(".", "_") for name in PROGRAM_LINES}
    lines += [f" setp.eq.u32 %q, %op, {OPS[name]}; @%q bra {label};" for name, label in labels.items()]
    lines.append(" bra END;")
    for name, label in labels.items():
        lines += [f"{label}:", f" {PROGRAM_LINES[name]}", f" bra {'TOKEN' if name in TOKENS else 'AFTER'};"]
    lines += [
        "TOKEN:",
        " mbarrier.pending_count.b64 %pend, %st;",
        "AFTER:",
        " mbarrier.test_wait.parity.shared::cta.b64 %w0, [%m], 0;",
        " mbarrier.test_wait.parity.shared::cta.b64 %w1, [%m], 1;",
        " cvt.u64.u32 %w, %pend; selp.b64 %t, 0x100000000, 0, %w0; or.b64 %w, %w, %t; selp.b64 %t, 0x200000000, 0, %w1; or.b64 %w, %w, %t;",
        " st.global.u64 [%out], %w;",
        " add.s64 %prog, %prog, 8; add.s64 %out, %out, 8; add.u32 %i, %i, 1; bra STEP;",
        "END:",
        " ret;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _step(state: mbarrier.MbarrierState | None, name: str, arg: int) -> mbarrier.MbarrierState:
    """The model's transition, used only to keep drawn programs defined."""
    if name == "init":
        return mbarrier.init(arg)
    assert state is not None
    if name == "arrive":
        return mbarrier.arrive(state, arg)[1]
    if name == "arrive.expect_tx":
        return mbarrier.arrive(state, 1, tx_count=arg)[1]
    if name == "arrive.noComplete":
        return mbarrier.arrive(state, arg, no_complete=True)[1]
    if name == "arrive_drop":
        return mbarrier.arrive_drop(state, arg)[1]
    if name == "expect_tx":
        return mbarrier.expect_tx(state, arg)
    return mbarrier.complete_tx(state, arg)


def programs(count: int = PROGRAMS, seed: int = 90) -> list[list[list[int]]]:
    """``count`` programs of ``(operation, operand)`` steps, each starting with ``init`` and ending
    with ``end``: same seed, same programs. A step the manual makes undefined (an arrive beyond the
    pending count, ``.noComplete`` that would complete the phase, tx-count out of range, dropping
    every expected arrival) is redrawn, and so is a drop of the last expected arrival (nothing
    could arrive after it)."""
    rng = random.Random(seed)
    names = [n for n in PROGRAM_LINES if n != "init"]
    weights = [{"arrive": 5, "arrive.expect_tx": 2, "expect_tx": 2, "complete_tx": 2}.get(n, 1) for n in names]
    out = []
    for _ in range(count):
        state = mbarrier.init(rng.choice((1, 2, 3, 4, 7)))
        steps = [[OPS["init"], state.expected]]
        while len(steps) < async_device.STEPS - 1:
            (name,) = rng.choices(names, weights)
            arg = rng.choice((0, 16, 16, 32, 48, 128, rng.randrange(1, 256))) if name.endswith("tx") else rng.randrange(1, max(state.pending, 1) + 1)
            if name == "complete_tx" and state.tx_count > 0 and rng.random() < 0.5:
                arg = state.tx_count  # often bring the tx-count back to zero: phases then complete
            if name == "expect_tx" and state.tx_count < 0 and rng.random() < 0.5:
                arg = -state.tx_count
            if name == "arrive_drop" and arg >= state.expected:
                continue  # an object with no expected arrivals left takes no more arrive-ons
            try:
                state = _step(state, name, arg)
            except mbarrier.MbarrierUndefined:
                continue
            steps.append([OPS[name], arg])
        steps.append([OPS["end"], 0])
        out.append(steps)
    return out


# ---------------------------------------------------------------------------------------------
# prepare, replay
# ---------------------------------------------------------------------------------------------


def prepare(bundle: Path, ptxas: str = "ptxas") -> dict:
    """Write the bundle: every form ptxas accepts, one kernel each, and the mbarrier-program
    kernel, combined into one cubin."""
    accepted, refused = assemble_each(list(forms()), lambda f: HEADER + kernel_ptx(f), ptxas)
    source = HEADER + program_ptx() + "\n".join(kernel_ptx(f) for f in accepted)
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / async_device.PTX_FILE).write_text(source)
    (bundle / async_device.CUBIN_FILE).write_bytes(assemble_module(source, ptxas))
    plan = {
        "ptxas": ptxas_version(ptxas),
        "forms": [f.plan(5000 + 16 * i) for i, f in enumerate(accepted)],
        "programs": programs(),
        "rejected": [{"name": f.name, "instruction": f.instruction, "message": message} for f, message in refused],
    }
    (bundle / async_device.PLAN_FILE).write_text(json.dumps(plan, separators=(",", ":")) + "\n")
    return plan


def records(directory: Path, output: str = async_device.OUTPUT_FILE) -> np.lib.npyio.NpzFile:
    """A recording's arrays (``async.npz``, or a second chip's, ``async-h200.npz``)."""
    return np.load(directory / output)


@attrs.frozen
class Replay:
    """One recorded form replayed: how many records, and the mismatches in words."""

    name: str
    records: int
    mismatches: tuple[str, ...]


def _u64(row: np.ndarray, at: int) -> int:
    return int.from_bytes(row[at : at + 8].tobytes(), "little")


def _shared(offset: int, region: bytes, tx: int) -> bytes:
    """A CTA's shared memory up to its buffer's end: the region at ``offset`` and, at
    :data:`~async_device.MBAR_OFFSET` past it, the mbarrier after init(1) and arrive.expect_tx."""
    _, barrier = mbarrier.arrive(mbarrier.init(1), 1, tx_count=tx)
    gap = bytes(async_device.MBAR_OFFSET - R)
    tail = bytes(async_device.BUFFER - async_device.MBAR_OFFSET - 8)
    return bytes(offset) + region + gap + barrier.encode().to_bytes(8, "little") + tail


def _sources(entry: dict, out: np.ndarray, params: np.ndarray, values: np.ndarray) -> list[int]:
    dst, src, mbar = (_u64(out, R + 24 + 8 * j) for j in range(3))
    kind, size, extra = entry["kind"], int(params[2]), int(params[3])
    if kind == "cp.async":
        return [dst, src, entry["size"]] + ([] if entry["variant"] == "plain" else [extra])
    if kind == "bulk-multicast":
        return [dst, src, size, mbar, extra]
    if kind in ("bulk-g2s", "bulk-s2cluster", "reduce-s2cluster"):
        return [dst, src, size, mbar]
    if kind in ("bulk-s2g", "reduce-s2g"):
        return [dst, src, size]
    if kind == "prefetch":
        return [src, size]
    return [dst, *(int(v) for v in values[: entry["count"]]), mbar]


def _text(entry: dict) -> str:
    """The instruction as the replay names it: cp.async's src-size and ignore-src variants are told
    apart by their operands (§9.7.9.25.3.1)."""
    if entry["kind"] == "cp.async" and entry["variant"] != "plain":
        return f"{entry['instruction']} [dstMem], [srcMem], cp_size, {entry['variant']}"
    return entry["instruction"]


def replay_form(entry: dict, data, records: slice | None = None, profile: str = "sm_90") -> Replay:
    """Replay the records of one copy form (all, or those ``records`` selects) through
    :func:`~ptxspec.semantics.instructions.execute`: both CTAs' shared regions, the global region
    and whether each CTA's phase 0 completed."""
    from ptxspec.semantics.instructions import execute
    from ptxspec.spec.errors import PtxSpecError

    name = entry["name"]
    given = async_device.inputs(entry)
    out, after = data[f"{name}_out"], data[f"{name}_changed"] ^ given["global"]
    indices = np.arange(len(out))[records] if records is not None else np.arange(len(out))
    mismatches = []
    for i in indices.tolist():
        offsets = [_u64(out[i, r], R + 8) & 0xFFFFFF for r in range(2)]
        base = _u64(out[i, 0], R + 16)
        tx = given["params"][i, 4:6]
        shared = [_shared(offsets[r], given["shared"][i, r].tobytes(), int(tx[r])) for r in range(2)]
        state = State(
            shared=shared[0],
            global_memory=Segment(base, given["global"][i].tobytes()),
            cluster=((1, shared[1]),),
            addresses=AddressMap(cta_rank=0, cluster_ctas=2),
        )
        try:
            outcome = execute(_text(entry), _sources(entry, out[i, 0], given["params"][i], given["values"][i]), profile, state=state)
        except PtxSpecError as error:
            mismatches.append(f"record {i}: refused: {error.one_line()}")
            continue
        new = outcome.state
        assert new is not None
        images = [new.shared, dict(new.cluster)[1]]
        for r in range(2):
            got = (out[i, r, :R] ^ given["shared"][i, r]).tobytes()
            if images[r][offsets[r] : offsets[r] + R] != got:
                mismatches.append(f"record {i}: CTA {r}'s shared region is {got.hex()}, the semantics leave {images[r][offsets[r] : offsets[r] + R].hex()}")
            at = offsets[r] + async_device.MBAR_OFFSET
            completed = mbarrier.test_wait(mbarrier.MbarrierState.decode(int.from_bytes(images[r][at : at + 8], "little")), 0)
            chip = bool(out[i, r, R])
            if completed != chip:
                mismatches.append(
                    f"record {i}: CTA {r}'s phase 0 {'completed' if chip else 'did not complete'} on the chip, the semantics say it {'did' if completed else 'did not'}"
                )
        if new.global_memory.read(base, R) != after[i].tobytes():
            mismatches.append(f"record {i}: the global region is {after[i].tobytes().hex()}, the semantics leave {new.global_memory.read(base, R).hex()}")
    return Replay(name, len(indices), tuple(mismatches))


def replay_program(steps: list[list[int]], recorded: np.ndarray, profile: str = "sm_90") -> list[str]:
    """One mbarrier program through the registered mbarrier instructions (§9.7.13.15.9-17): each
    step's pending count (of its state token) and test_wait.parity 0 and 1 against the chip's."""
    from ptxspec.semantics.instructions import execute

    names = {code: name for name, code in OPS.items()}
    address = 8
    state = State(shared=bytes(16))
    out = []
    for k, (code, arg) in enumerate(steps):
        name = names[code]
        if name == "end":
            break
        text = PROGRAM_LINES[name].rstrip(";")
        outcome = execute(text, [address, arg], profile, state=state)
        assert outcome.state is not None
        state = outcome.state
        pending = async_device.NO_TOKEN
        if name in TOKENS:
            (count,) = execute("mbarrier.pending_count.b64 %pend, %st", [outcome.results[0]], profile, state=state).results
            assert isinstance(count, int), "a pending count is one value"
            pending = count
        waits = [
            execute("mbarrier.test_wait.parity.shared::cta.b64 %w, [%m], %parity", [address, parity], profile, state=state).results[0] for parity in (0, 1)
        ]
        assert all(isinstance(w, int) for w in waits), "waitComplete is one bit"
        want = pending | int(waits[0]) << 32 | int(waits[1]) << 33  # type: ignore[arg-type]  # ints, asserted above
        got = int(recorded[k])
        if got != want:
            out.append(
                f"step {k} ({name} {arg}): the chip gave pending {got & 0xFFFFFFFF:#x}, waits {got >> 32 & 3:02b}; the semantics {want & 0xFFFFFFFF:#x}, {want >> 32 & 3:02b}"
            )
    return out


def verify(directory: Path, sample: int | None = None, output: str = async_device.OUTPUT_FILE) -> dict:
    """Replay a recording (``output``: ``async.npz`` or a second chip's file): every copy form (every
    record, or the first ``sample`` of each) and every mbarrier program (or the first ``sample``). Returns ``{"forms": {name: Replay}, "programs": {index: [...]}}``."""
    plan = json.loads((directory / PLAN).read_text())
    data = records(directory, output)
    replays = {entry["name"]: replay_form(entry, data, slice(0, sample) if sample else None) for entry in plan["forms"]}
    recorded = data["mbarrier_program"]
    failing = {}
    for index, steps in enumerate(plan["programs"][:sample] if sample else plan["programs"]):
        wrong = replay_program(steps, recorded[index])
        if wrong:
            failing[index] = wrong
    return {"forms": replays, "programs": failing}
