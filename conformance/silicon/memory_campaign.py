"""The memory campaign: ``ld``, ``ld.global.nc``, ``ldu``, ``st``, ``atom`` and ``red`` as functions
on memory images (§9.7.9.8-11, §9.7.13.5-6), and the generic address windows (§6.4.1.1: ``cvta``,
``isspacep``, ``mapa``, ``getctarank``), recorded on sm_90 silicon and replayed against the
semantic functions::

    python -m ptxspec.conformance.silicon memory prepare BUNDLE     # here (ptxas)
    python3 conformance/silicon/memory_device.py run BUNDLE OUT     # on the GPU
    python -m ptxspec.conformance.silicon memory verify DIR         # here

Each form's kernel gives every thread a region of its state space (see :mod:`memory_device`):
``global`` and ``shared`` address it there, ``generic`` through a generic address of a global
region, ``generic-shared`` through the generic address of a shared one (``cvta.shared``) -- which
the replay must map back through the recorded address map. :func:`verify` rebuilds each record's
state (the region's bytes at the address the chip used), runs
:func:`~ptxspec.semantics.instructions.execute`, and compares, as integers, the destination
registers and every byte of the region afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon import memory_device
from ptxspec.conformance.silicon.campaign import HEADER, assemble_each, assemble_module, kernel_name, ptxas_version
from ptxspec.semantics.state import AddressMap, Segment, State

R = memory_device.REGION
SLOT = memory_device.OPERAND

#: The register each load type writes and each store type reads: PTX has no 8-bit registers, so
#: the 8-bit types use a 32-bit register of their kind.
REGISTER = {
    "u8": "u32",
    "s8": "s32",
    "b8": "b32",
    **{t: t for t in ("u16", "s16", "b16", "u32", "s32", "b32", "f32", "u64", "s64", "b64", "f64", "b128")},
}
SIZE = {
    "u8": 1,
    "s8": 1,
    "b8": 1,
    "u16": 2,
    "s16": 2,
    "b16": 2,
    "f16x2": 4,
    "u32": 4,
    "s32": 4,
    "b32": 4,
    "f32": 4,
    "u64": 8,
    "s64": 8,
    "b64": 8,
    "f64": 8,
    "b128": 16,
}


def _bits(register: str) -> int:
    return 128 if register == "b128" else int(register[1:])


@attrs.frozen
class MemoryForm:
    """One recorded form: ``instruction`` is its text without the state space, which ``space``
    supplies (``global``, ``shared``; ``generic`` and ``generic-shared`` write none)."""

    instruction: str
    space: str
    destinations: tuple[str, ...]
    sources: tuple[str, ...]
    size: int
    policy: bool = False
    """Whether the form takes a cache policy (``.L2::cache_hint``): made in the kernel by
    ``createpolicy``, recorded in the fourth destination slot."""

    @property
    def text(self) -> str:
        head, _, rest = self.instruction.partition(".")
        opcode = head
        # the state space goes after the opcode and its leading semantic qualifiers
        tokens = rest.split(".")
        lead = []
        while tokens and tokens[0] in ("relaxed", "acquire", "release", "acq_rel", "volatile", "mmio", "cta", "cluster", "gpu", "sys"):
            lead.append(tokens.pop(0))
        space = [] if self.space.startswith("generic") else [self.space]
        return ".".join([opcode, *lead, *space, *tokens])

    @property
    def name(self) -> str:
        return f"{self.space}-{self.instruction}".replace("::", "-")

    @property
    def kernel(self) -> str:
        return kernel_name("m_", self.name)

    def plan(self, seed: int) -> dict:
        return {
            "name": self.name,
            "kernel": self.kernel,
            "instruction": self.text,
            "space": self.space,
            "destinations": [_bits(d) for d in self.destinations],
            "sources": [_bits(s) for s in self.sources],
            "size": self.size,
            "policy": self.policy,
            "seed": seed,
        }


def _load(tokens: str, space: str, type_name: str, count: int = 1, opcode: str = "ld") -> MemoryForm:
    vec = f"v{count}." if count > 1 else ""
    return MemoryForm(f"{opcode}.{tokens}{vec}{type_name}".replace("..", "."), space, (REGISTER[type_name],) * count, (), SIZE[type_name] * count)


def _store(tokens: str, space: str, type_name: str, count: int = 1) -> MemoryForm:
    vec = f"v{count}." if count > 1 else ""
    return MemoryForm(f"st.{tokens}{vec}{type_name}".replace("..", "."), space, (), (REGISTER[type_name],) * count, SIZE[type_name] * count)


def _atomic(opcode: str, tokens: str, space: str, op: str, type_name: str) -> MemoryForm:
    register = "b32" if type_name == "f16x2" else REGISTER[type_name]
    values = (register, register) if op == "cas" else (register,)
    return MemoryForm(f"{opcode}.{tokens}{op}.{type_name}".replace("..", "."), space, (register,) if opcode == "atom" else (), values, SIZE[type_name])


def _vector_atomic(opcode: str, space: str, op: str, count: int, type_name: str) -> MemoryForm:
    """A vector atom/red (§9.7.13.5-6: ".vec_32_bit", ".vec_16_bit" forms): ``count`` elements,
    each its own register."""
    register = {"f32": "f32", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}[type_name]
    noftz = ".noftz" if type_name != "f32" else ""
    size = {"f32": 4, "f16": 2, "bf16": 2, "f16x2": 4, "bf16x2": 4}[type_name]
    destinations = (register,) * count if opcode == "atom" else ()
    return MemoryForm(f"{opcode}.{op}{noftz}.v{count}.{type_name}", space, destinations, (register,) * count, size * count)


SCALARS = ("u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32", "f32", "u64", "s64", "b64", "f64", "b128")
VECTORS = (("s8", 2), ("u8", 4), ("s16", 2), ("b16", 4), ("b32", 2), ("f32", 4), ("u64", 2), ("f64", 2))
SPACES = ("global", "shared", "generic", "generic-shared")
INTEGER_ATOMICS = (
    *((op, t) for op in ("add", "min", "max") for t in ("u32", "s32", "u64", "s64")),
    ("inc", "u32"),
    ("dec", "u32"),
    *((op, t) for op in ("and", "or", "xor") for t in ("b32", "b64")),
    ("exch", "b32"),
    ("exch", "b64"),
    ("cas", "b16"),
    ("cas", "b32"),
    ("cas", "b64"),
)


def forms() -> tuple[MemoryForm, ...]:
    """Every recorded form (see the module docstring)."""
    out: list[MemoryForm] = []
    out += [_load("", space, t) for space in SPACES for t in SCALARS]
    out += [_load("", space, t, n) for space in ("global", "shared") for t, n in VECTORS]
    out += [_load("nc.", "global", t) for t in ("u8", "s16", "b32", "b64", "b128")] + [_load("nc.", "global", "b32", 4)]
    out += [_load("", "global", t, opcode="ldu") for t in ("s8", "b32", "b64")] + [_load("", "global", "b64", 2, opcode="ldu")]
    out += [_load(q + ".", "global", "b32") for q in ("ca", "cg", "cs", "lu", "cv", "L1::evict_last", "L1::no_allocate", "L2::128B", "L2::256B")]
    out += [_load("relaxed.gpu.", "global", "b32"), _load("acquire.sys.", "global", "b64"), _load("volatile.", "global", "s16")]
    out += [_load("relaxed.cta.", "shared", "b32"), _load("mmio.relaxed.sys.", "global", "b32")]
    out += [attrs.evolve(_load("L2::cache_hint.", "global", "b32"), policy=True)]
    out += [_store("", space, t) for space in SPACES for t in ("b8", "u16", "b32", "b64", "f64", "b128")]
    out += [_store("", space, t, n) for space in ("global", "shared") for t, n in (("b8", 4), ("b16", 2), ("b32", 4), ("b64", 2))]
    out += [_store("relaxed.gpu.", "global", "b32"), _store("release.sys.", "global", "b64"), _store("volatile.", "shared", "b32")]
    out += [_store(q + ".", "global", "b32") for q in ("wb", "cg", "cs", "wt", "L1::no_allocate")]
    out += [_store("mmio.relaxed.sys.", "global", "b32"), attrs.evolve(_store("L2::cache_hint.", "global", "b32"), policy=True)]
    for space in ("global", "shared", "generic"):
        out += [_atomic("atom", "", space, op, t) for op, t in INTEGER_ATOMICS]
        out += [_atomic("atom", "", space, op, "b128") for op in ("cas", "exch")]
        out += [_atomic("atom", "", space, "add", "f32"), _atomic("atom", "", space, "add.noftz", "f16x2")]
    out += [_atomic("atom", "acq_rel.gpu.", "global", "add", "u32"), _atomic("atom", "relaxed.cta.", "shared", "cas", "b32")]
    for space in ("global", "shared"):
        out += [_atomic("red", "", space, op, t) for op, t in INTEGER_ATOMICS if op not in ("exch", "cas")]
    # appended after the first recording's forms, so that theirs keep their seeds
    for opcode in ("atom", "red"):
        out += [_vector_atomic(opcode, "global", "add", n, "f32") for n in (2, 4)]
        out += [_vector_atomic(opcode, "global", op, n, t) for op in ("add", "min", "max") for t in ("f16", "bf16") for n in (2, 4, 8)]
        out += [_vector_atomic(opcode, "global", op, n, t) for op in ("add", "min", "max") for t in ("f16x2", "bf16x2") for n in (2, 4)]
    # the local and const state spaces, directly and through their generic windows (third recording)
    out += [_load("", space, t) for space in ("local", "generic-local") for t in ("u8", "s16", "b32", "f64", "b128")]
    out += [_load("", "local", t, n) for t, n in (("b32", 2), ("f32", 4), ("u64", 2))]
    out += [_store("", space, t) for space in ("local", "generic-local") for t in ("b8", "u16", "b32", "b64", "b128")]
    out += [_store("", "local", t, n) for t, n in (("b16", 4), ("b64", 2))]
    out += [_load("", space, t) for space, t in CONST_FORMS]
    # kernel parameters (.param, one launch per record: a parameter is the same for every thread)
    out += [_load("", space, t) for space in ("param", "generic-param") for t in ("u8", "s16", "b32", "f64")]
    out += [_load("", "param", t, n) for t, n in (("b32", 2), ("f32", 4), ("b128", 1))]
    return tuple(out)


#: The const-space loads: few, for all their regions share the module's 64 KB const bank.
CONST_FORMS = (("const", "s8"), ("const", "b64"), ("generic-const", "u16"))


def _operand_address(k: int) -> str:
    return f"[%rops+{SLOT * k}]"


def param_kernel_ptx(form: MemoryForm) -> str:
    """A kernel-parameter load: one launch per record, the record's region as a by-value parameter
    (``.param .align 16 .b8 pregion[32]``), one thread loading at ``pregion + offset`` (through the
    generic window for ``generic-param``) and storing its destination registers and the address."""
    k = form.kernel
    lines = [
        f".visible .entry {k}(.param .align 16 .b8 pregion[{R}], .param .u32 poff, .param .u64 pdst, .param .u64 paddr)",
        "{",
        " .reg .b64 %rdst, %raddr, %ra, %rt, %rlo, %rhi; .reg .b32 %roff, %rtid; .reg .pred %p;",
        *[f" .reg .{t} %d{i};" for i, t in enumerate(form.destinations)],
        " mov.u32 %rtid, %tid.x; setp.ne.u32 %p, %rtid, 0; @%p bra DONE;",
        " ld.param.u32 %roff, [poff]; ld.param.u64 %rdst, [pdst]; ld.param.u64 %raddr, [paddr];",
        " cvta.to.global.u64 %rdst, %rdst; cvta.to.global.u64 %raddr, %raddr;",
        " mov.u64 %ra, pregion; cvt.u64.u32 %rt, %roff; add.s64 %ra, %ra, %rt;",
    ]
    if form.space == "generic-param":
        lines.append(" cvta.param.u64 %ra, %ra;")
    names = [f"%d{i}" for i in range(len(form.destinations))]
    target = "{" + ", ".join(names) + "}" if len(names) > 1 else names[0]
    lines.append(f" {form.text} {target}, [%ra];")
    for i, t in enumerate(form.destinations):
        if t == "b128":
            lines.append(f" mov.b128 {{%rlo, %rhi}}, %d{i}; st.global.v2.b64 [%rdst+{SLOT * i}], {{%rlo, %rhi}};")
        else:
            lines.append(f" st.global.b{_bits(t)} [%rdst+{SLOT * i}], %d{i};")
    lines += [" st.global.u64 [%raddr], %ra;", "DONE:", " ret;", "}"]
    return "\n".join(lines) + "\n"


def kernel_ptx(form: MemoryForm) -> str:
    """One thread per record (see :mod:`memory_device`); a kernel-parameter form one launch per
    record (:func:`param_kernel_ptx`)."""
    k = form.kernel
    if form.space in ("param", "generic-param"):
        return param_kernel_ptx(form)
    lines = [
        f".visible .entry {k}(.param .u64 pmem, .param .u64 poff, .param .u64 pops, .param .u64 pdst, .param .u64 paddr, .param .u32 pn)",
        "{",
        " .reg .b64 %rd<12>; .reg .b64 %rmem, %rops, %rdst, %ra, %rlo, %rhi, %rpol, %rt;",
        " .reg .b32 %r<8>; .reg .pred %p;",
    ]
    for i, t in enumerate(form.sources):
        lines.append(f" .reg .{t} %s{i};")
    for i, t in enumerate(form.destinations):
        lines.append(f" .reg .{t} %d{i};")
    lines += [
        " ld.param.u64 %rd1, [pmem]; ld.param.u64 %rd2, [poff]; ld.param.u64 %rd3, [pops]; ld.param.u64 %rd4, [pdst]; ld.param.u64 %rd5, [paddr];",
        " ld.param.u32 %r5, [pn];",
        " mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x; mad.lo.s32 %r4, %r1, %r2, %r3;",
        " setp.ge.u32 %p, %r4, %r5; @%p bra DONE;",
        " cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3; cvta.to.global.u64 %rd4, %rd4; cvta.to.global.u64 %rd5, %rd5;",
        f" mul.wide.u32 %rd6, %r4, {R}; add.s64 %rmem, %rd1, %rd6;",
        f" mul.wide.u32 %rd6, %r4, {memory_device.SLOTS * SLOT}; add.s64 %rops, %rd3, %rd6; add.s64 %rdst, %rd4, %rd6;",
        " mul.wide.u32 %rd6, %r4, 4; add.s64 %rd7, %rd2, %rd6; ld.global.u32 %r6, [%rd7]; cvt.u64.u32 %rd8, %r6;",
    ]
    shared = form.space in ("shared", "generic-shared")
    local = form.space in ("local", "generic-local")
    const = form.space in ("const", "generic-const")
    if shared:
        lines += [f" mov.u64 %rd9, smem_{k}; mul.wide.u32 %rd6, %r3, {R}; add.s64 %rd9, %rd9, %rd6;"]
        lines += [f" ld.global.b64 %rt, [%rmem+{8 * j}]; st.shared.b64 [%rd9+{8 * j}], %rt;" for j in range(R // 8)]
        region = "%rd9"
        if form.space == "generic-shared":
            lines.append(" cvta.shared.u64 %rd10, %rd9;")
            region = "%rd10"
    elif local:  # the thread's own local buffer, filled from its region and written back after
        lines.insert(2, f" .local .align 16 .b8 lbuf_{k}[{R}];")
        lines += [f" mov.u64 %rd9, lbuf_{k};"]
        lines += [f" ld.global.b64 %rt, [%rmem+{8 * j}]; st.local.b64 [%rd9+{8 * j}], %rt;" for j in range(R // 8)]
        region = "%rd9"
        if form.space == "generic-local":
            lines.append(" cvta.local.u64 %rd10, %rd9;")
            region = "%rd10"
    elif const:  # the host wrote every record's region into the const bank (memory_device)
        lines += [f" mov.u64 %rd9, cbuf_{k}; mul.wide.u32 %rd6, %r4, {R}; add.s64 %rd9, %rd9, %rd6;"]
        region = "%rd9"
        if form.space == "generic-const":
            lines.append(" cvta.const.u64 %rd10, %rd9;")
            region = "%rd10"
    elif form.space == "generic":
        lines.append(" cvta.global.u64 %rd10, %rmem;")
        region = "%rd10"
    else:
        region = "%rmem"
    lines.append(f" add.s64 %ra, {region}, %rd8;")
    for i, t in enumerate(form.sources):
        if t == "b128":
            lines.append(f" ld.global.v2.b64 {{%rlo, %rhi}}, {_operand_address(i)}; mov.b128 %s{i}, {{%rlo, %rhi}};")
        else:
            lines.append(f" ld.global.b{_bits(t)} %s{i}, {_operand_address(i)};")
    operands = []
    if form.destinations:
        names = [f"%d{i}" for i in range(len(form.destinations))]
        operands.append("{" + ", ".join(names) + "}" if len(names) > 1 else names[0])
    operands.append("[%ra]")
    sources = [f"%s{i}" for i in range(len(form.sources))]
    if (form.instruction.startswith("st.") or ".v" in form.instruction) and len(sources) > 1:
        operands.append("{" + ", ".join(sources) + "}")
    else:
        operands += sources
    if form.policy:
        lines.append(" createpolicy.fractional.L2::evict_last.b64 %rpol, 1.0;")
        lines.append(f" st.global.b64 [%rdst+{3 * SLOT}], %rpol;")
        operands.append("%rpol")
    lines.append(f" {form.text} {', '.join(operands)};")
    for i, t in enumerate(form.destinations):
        if t == "b128":
            lines.append(f" mov.b128 {{%rlo, %rhi}}, %d{i}; st.global.v2.b64 [%rdst+{SLOT * i}], {{%rlo, %rhi}};")
        else:
            lines.append(f" st.global.b{_bits(t)} [%rdst+{SLOT * i}], %d{i};")
    if shared or local:
        space = "shared" if shared else "local"
        lines += [f" ld.{space}.b64 %rt, [%rd9+{8 * j}]; st.global.b64 [%rmem+{8 * j}], %rt;" for j in range(R // 8)]
    lines += [" mul.wide.u32 %rd6, %r4, 8; add.s64 %rd11, %rd5, %rd6; st.global.u64 [%rd11], %ra;", "DONE:", " ret;", "}"]
    head = f".shared .align 16 .b8 smem_{k}[{memory_device.BLOCK * R}];\n" if shared else ""
    if const:
        head = f".const .align 16 .b8 cbuf_{k}[{memory_device.CONST_RECORDS * R}];\n"
    return head + "\n".join(lines) + "\n"


#: The address-map kernel's rows (see :mod:`memory_device`), by name.
ADDRESS_ROWS = (
    "rank",
    "shared",
    "cvta.shared::cta",
    "cvta.shared::cluster",
    "mapa.shared::cluster 0",
    "mapa.shared::cluster 1",
    "mapa 0",
    "mapa 1",
    "getctarank.shared::cluster mapa 0",
    "getctarank.shared::cluster mapa 1",
    "getctarank mapa 0",
    "getctarank mapa 1",
    "getctarank.shared::cluster shared",
    "local",
    "cvta.local",
    "const",
    "cvta.const",
    "param",
    "cvta.param",
    "global",
    "cvta.to.global",
    "cvta.global",
    "cvta.to.shared::cta",
    "cvta.to.shared::cluster",
    "cvta.to.local",
    "cvta.to.const",
    "cvta.to.param",
    "cvta.shared::cluster mapa 1",
)
#: The spaces ``isspacep`` is asked about, bit i of each probe row.
ISSPACEP = ("global", "shared::cta", "shared::cluster", "local", "const", "param")
#: Probe offsets around each window's base (row of the generic address, row of the space's own).
PROBE_OFFSETS = (-1, 0, (1 << 24) - 1, 1 << 24, 1 << 25, (1 << 32) - 1, 1 << 32)
PROBE_WINDOWS = (("cvta.shared::cta", "shared"), ("cvta.local", "local"), ("cvta.const", "const"), ("cvta.param", "param"))
PROBE_ADDRESSES = ("cvta.shared::cta", "cvta.shared::cluster mapa 1", "cvta.local", "cvta.const", "cvta.param", "global")


def address_map_ptx() -> str:
    row = {name: i for i, name in enumerate(ADDRESS_ROWS)}
    lines = [
        ".shared .align 16 .b8 am_shared[64];",
        ".const .align 8 .b8 am_const[64];",
        ".visible .entry address_map(.param .u64 pout) .reqnctapercluster 2, 1, 1",
        "{",
        " .reg .b64 %v<64>; .reg .b64 %o, %t, %w, %g; .reg .b32 %rank, %r<4>; .reg .pred %q;",
        " .local .align 8 .b8 am_local[64];",
        " ld.param.u64 %o, [pout]; cvta.to.global.u64 %o, %o;",
        " mov.u32 %rank, %cluster_ctarank; cvt.u64.u32 %v0, %rank;",
        " mov.u64 %v1, am_shared;",
        " cvta.shared::cta.u64 %v2, %v1;",
        " cvta.shared::cluster.u64 %v3, %v1;",
        " mapa.shared::cluster.u64 %v4, %v1, 0;",
        " mapa.shared::cluster.u64 %v5, %v1, 1;",
        " mapa.u64 %v6, %v2, 0;",
        " mapa.u64 %v7, %v2, 1;",
        " getctarank.shared::cluster.u64 %r0, %v4; cvt.u64.u32 %v8, %r0;",
        " getctarank.shared::cluster.u64 %r0, %v5; cvt.u64.u32 %v9, %r0;",
        " getctarank.u64 %r0, %v6; cvt.u64.u32 %v10, %r0;",
        " getctarank.u64 %r0, %v7; cvt.u64.u32 %v11, %r0;",
        " getctarank.shared::cluster.u64 %r0, %v1; cvt.u64.u32 %v12, %r0;",
        " mov.u64 %v13, am_local; cvta.local.u64 %v14, %v13;",
        " mov.u64 %v15, am_const; cvta.const.u64 %v16, %v15;",
        " mov.u64 %v17, pout; cvta.param.u64 %v18, %v17;",
        " ld.param.u64 %v19, [pout]; cvta.to.global.u64 %v20, %v19; cvta.global.u64 %v21, %v20;",
        " cvta.to.shared::cta.u64 %v22, %v2; cvta.to.shared::cluster.u64 %v23, %v2;",
        " cvta.to.local.u64 %v24, %v14; cvta.to.const.u64 %v25, %v16; cvta.to.param.u64 %v26, %v18;",
        " cvta.shared::cluster.u64 %v27, %v5;",
    ]
    assert len(ADDRESS_ROWS) == 28
    asked = probes()
    assert 28 + len(asked) <= 64
    for i, (generic, own, offset) in enumerate(asked):
        base = f"sub.s64 %t, %v{row[generic]}, %v{row[own]}; " if own is not None else f"mov.u64 %t, %v{row[generic]}; "
        lines.append(f" {base}add.s64 %g, %t, {offset}; mov.u64 %w, 0;")
        for bit, space in enumerate(ISSPACEP):
            lines.append(f" isspacep.{space} %q, %g; selp.b64 %t, {1 << bit}, 0, %q; or.b64 %w, %w, %t;")
        lines.append(f" mov.u64 %v{28 + i}, %w;")
    lines.append(" mul.wide.u32 %t, %rank, 512; add.s64 %o, %o, %t;")
    lines += [f" st.global.u64 [%o+{8 * i}], %v{i};" for i in range(28 + len(asked))]
    lines += [" ret;", "}"]
    return "\n".join(lines) + "\n"


#: createpolicy's priorities (§9.7.9.18) and the fractions and range sizes asked of it.
PRIMARY = ("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged")
SECONDARY = (None, "L2::evict_first", "L2::evict_unchanged")
FRACTIONS = (0x3F800000, 0x3F000000, 0x3E800000, 0x3F400000, 0x3E000000, 0x3DCCCCCD, 0x3F666666, 0x3E99999A, 0x33D6BF95, 0x3F7FFFFF)
RANGES = ((0x100000, 0x200000), (0, 0x1000), (0x1000, 0x1000), (0x12345, 0x7654321), ((1 << 32) - 1, (1 << 32) - 1))


def createpolicy_rows() -> list[str]:
    """The createpolicy instructions of the probe kernel, one result row each (``a`` is the
    output buffer's global address)."""
    rows = []
    for primary in PRIMARY:
        for secondary in SECONDARY:
            priorities = primary + ("" if secondary is None else "." + secondary)
            rows += [f"createpolicy.fractional.{priorities}.b64 %w, 0f{f:08X};" for f in FRACTIONS]
            rows.append(f"createpolicy.fractional.{priorities}.b64 %w;")
            rows += [f"createpolicy.range.global.{priorities}.b64 %w, [%o], {p}, {t};" for p, t in RANGES]
    return rows


def createpolicy_ptx() -> str:
    lines = [".visible .entry createpolicy_probe(.param .u64 pout)", "{", " .reg .b64 %o, %w;", " ld.param.u64 %o, [pout]; cvta.to.global.u64 %o, %o;"]
    for i, row in enumerate(createpolicy_rows()):
        lines.append(f" {row} st.global.u64 [%o+{8 * i}], %w;")
    return "\n".join([*lines, " ret;", "}"]) + "\n"


def probes() -> list[tuple[str, str | None, int]]:
    """The ``isspacep`` probes in row order: (generic row, own-space row or None, offset)."""
    out: list[tuple[str, str | None, int]] = [(g, o, off) for g, o in PROBE_WINDOWS for off in PROBE_OFFSETS]
    return out + [(name, None, 0) for name in PROBE_ADDRESSES]


def prepare(bundle: Path, ptxas: str = "ptxas") -> dict:
    """Write the bundle: every form ptxas accepts, one kernel each, and the address-map kernel,
    combined into one cubin."""
    accepted, refused = assemble_each(list(forms()), lambda f: HEADER + kernel_ptx(f), ptxas)
    source = HEADER + address_map_ptx() + createpolicy_ptx() + "\n".join(kernel_ptx(f) for f in accepted)
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / memory_device.PTX_FILE).write_text(source)
    (bundle / memory_device.CUBIN_FILE).write_bytes(assemble_module(source, ptxas))
    plan = {
        "ptxas": ptxas_version(ptxas),
        "forms": [f.plan(2000 + i) for i, f in enumerate(accepted)],
        "createpolicy": len(createpolicy_rows()),
        "rejected": [{"name": f.name, "instruction": f.text, "message": message} for f, message in refused],
    }
    (bundle / memory_device.PLAN_FILE).write_text(json.dumps(plan, indent=1) + "\n")
    return plan


def records(directory: Path) -> np.lib.npyio.NpzFile:
    return np.load(directory / memory_device.OUTPUT_FILE)


PLAN = "memory-plan.json"
"""The plan a recording was made from, kept beside it (its forms, seeds and ptxas's refusals)."""


def address_map_of(rows: np.ndarray, rank: int) -> AddressMap:
    """The address map a recorded CTA saw: each window's base is the generic address ``cvta`` gave
    minus the address it converted; the sizes and the cluster layout are the model's
    (:class:`~ptxspec.semantics.state.AddressMap`)."""
    row = {name: int(rows[rank][i]) for i, name in enumerate(ADDRESS_ROWS)}
    default = AddressMap()
    return attrs.evolve(
        default,
        shared=(row["cvta.shared::cta"] - row["shared"], default.shared[1]),
        local=(row["cvta.local"] - row["local"], default.local[1]),
        const=(row["cvta.const"] - row["const"], default.const[1]),
        param=(row["cvta.param"] - row["param"], default.param[1]),
        cta_rank=rank,
        cluster_ctas=2,
    )


def verify_address_map(rows: np.ndarray) -> list[str]:
    """Every row of the address-map kernel, predicted by the semantics of cvta, mapa, getctarank
    and isspacep from the CTA's address map: the mismatches, in words."""
    from ptxspec.semantics.instructions import evaluate

    out = []
    for rank in range(rows.shape[0]):
        row = {name: int(rows[rank][i]) for i, name in enumerate(ADDRESS_ROWS)}
        state = State(shared=bytes(0x440), addresses=address_map_of(rows, rank))
        predicted: dict[str, int | tuple] = {
            "rank": rank,
            "shared": (rank << 24) | 0x400,
            "cvta.shared::cluster": ("cvta.shared::cluster.u64", row["shared"]),
            "mapa.shared::cluster 0": ("mapa.shared::cluster.u64", row["shared"], 0),
            "mapa.shared::cluster 1": ("mapa.shared::cluster.u64", row["shared"], 1),
            "mapa 0": ("mapa.u64", row["cvta.shared::cta"], 0),
            "mapa 1": ("mapa.u64", row["cvta.shared::cta"], 1),
            "getctarank.shared::cluster mapa 0": ("getctarank.shared::cluster.u64", row["mapa.shared::cluster 0"]),
            "getctarank.shared::cluster mapa 1": ("getctarank.shared::cluster.u64", row["mapa.shared::cluster 1"]),
            "getctarank mapa 0": ("getctarank.u64", row["mapa 0"]),
            "getctarank mapa 1": ("getctarank.u64", row["mapa 1"]),
            "getctarank.shared::cluster shared": ("getctarank.shared::cluster.u64", row["shared"]),
            "cvta.to.global": ("cvta.to.global.u64", row["global"]),
            "cvta.global": ("cvta.global.u64", row["cvta.to.global"]),
            "cvta.to.shared::cta": ("cvta.to.shared::cta.u64", row["cvta.shared::cta"]),
            "cvta.to.shared::cluster": ("cvta.to.shared::cluster.u64", row["cvta.shared::cta"]),
            "cvta.to.local": ("cvta.to.local.u64", row["cvta.local"]),
            "cvta.to.const": ("cvta.to.const.u64", row["cvta.const"]),
            "cvta.to.param": ("cvta.to.param.u64", row["cvta.param"]),
            "cvta.shared::cluster mapa 1": ("cvta.shared::cluster.u64", row["mapa.shared::cluster 1"]),
        }
        for name, how in predicted.items():
            want = how if isinstance(how, int) else evaluate(how[0], list(how[1:]), state=state)[0]
            if want != row[name]:
                out.append(f"CTA {rank}: {name} is {row[name]:#x}, the semantics give {want!r}")
        for i, (generic, own, offset) in enumerate(probes()):
            address = row[generic] - (row[own] if own is not None else 0) + offset
            got = int(rows[rank][len(ADDRESS_ROWS) + i])
            want = 0
            for bit, space in enumerate(ISSPACEP):
                (p,) = evaluate(f"isspacep.{space}", [address], state=state)
                assert isinstance(p, int), "isspacep's result is one bit"
                want |= p << bit
            if got != want:
                out.append(f"CTA {rank}: isspacep of {address:#x} ({generic} {offset:+#x}) is {got:06b}, the semantics give {want:06b}")
    return out


def verify_createpolicy(values: np.ndarray, profile: str = "sm_90") -> list[str]:
    """The recorded fractional policies against createpolicy's semantics under ``profile``; the
    range policies (their bits depend on the address) must only be 64-bit values."""
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains
    from ptxspec.spec.catalogue import parse

    out = []
    for row, got in zip(createpolicy_rows(), values.tolist()):
        text = row.split(" %w")[0]
        if ".fractional." not in text:
            continue
        fraction = row.split("0f")[1].rstrip(";") if "0f" in row else None
        sources = [int(fraction, 16)] if fraction else []
        if not sources and parse(text).inputs:
            sources = [0x3F800000]  # the form written without a fraction: "it defaults to 1.0"
        (want,) = evaluate(text, sources, profile, state=State())
        if not contains(want, got):
            out.append(f"{row}: the chip wrote {got:#x}, the semantics give {want!r}")
    return out


@attrs.frozen
class Replay:
    """One recorded form replayed: how many records, and the mismatches in words."""

    name: str
    records: int
    mismatches: tuple[str, ...]


#: The State segment of each recorded space (shared memory is State.shared).
_SEGMENT = {"global": "global_memory", "generic": "global_memory", "local": "local_memory", "const": "const_memory", "param": "param_memory"}


def _space(entry: dict) -> str:
    return entry["space"].removeprefix("generic-")


def _state_for(entry: dict, region: bytes, base: int, addresses: AddressMap) -> State:
    if _space(entry) == "shared":
        return State(shared=bytes(base) + region, addresses=addresses)
    segment = Segment(base, region)
    if _space(entry) == "local":
        return State(local_memory=segment, addresses=addresses)
    if _space(entry) == "const":
        return State(const_memory=segment, addresses=addresses)
    if _space(entry) == "param":
        return State(param_memory=segment, addresses=addresses)
    return State(global_memory=segment, addresses=addresses)


def _region_after(entry: dict, state: State, base: int) -> bytes:
    if _space(entry) == "shared":
        return state.shared[base : base + R]
    return getattr(state, _SEGMENT[_space(entry)]).read(base, R)


def replay_form(entry: dict, data, addresses: AddressMap, records: slice | np.ndarray | None = None, profile: str = "sm_90") -> Replay:
    """Replay the records of one form (all, or those ``records`` selects) through
    :func:`~ptxspec.semantics.instructions.execute`, comparing the destination registers and every
    byte of the region afterwards."""
    from ptxspec.semantics.instructions import execute
    from ptxspec.semantics.results import contains
    from ptxspec.spec.errors import PtxSpecError

    name = entry["name"]
    regions, offsets, operands = memory_device.inputs(entry)
    dst, changed, address = data[f"{name}_dst"], data[f"{name}_changed"], data[f"{name}_address"]
    indices = np.arange(len(offsets))[records] if records is not None else np.arange(len(offsets))
    mismatches = []
    for i in indices.tolist():
        at = int(address[i])
        if entry["space"] == "generic-param":
            # a launch's parameters lie at their own place in the param window (the generic address
            # of pregion, at param offset 0, moves from launch to launch): this launch's window
            addresses = attrs.evolve(addresses, param=(at - int(offsets[i]), addresses.param[1]))
        if entry["space"] in ("generic-shared", "generic-local", "generic-const", "generic-param"):
            at -= addresses.window(_space(entry))[0]  # the generic address back to the space's own
        base = at - int(offsets[i])
        state = _state_for(entry, regions[i].tobytes(), base, addresses)
        sources = [int(address[i])]
        sources += [int.from_bytes(operands[i, k, : (bits + 7) // 8].tobytes(), "little") for k, bits in enumerate(entry["sources"])]
        if entry["policy"]:
            sources.append(int.from_bytes(dst[i, 3, :8].tobytes(), "little"))
        try:
            outcome = execute(entry["instruction"], sources, profile, state=state)
        except PtxSpecError as error:
            mismatches.append(f"record {i}: refused: {error}")
            continue
        for k, bits in enumerate(entry["destinations"]):
            got = int.from_bytes(dst[i, k, : bits // 8].tobytes(), "little")
            if not contains(outcome.results[k], got):
                mismatches.append(f"record {i}: destination {k} is {got:#x}, the semantics give {outcome.results[k]!r}")
        after = (regions[i] ^ changed[i]).tobytes()
        assert outcome.state is not None
        if _region_after(entry, outcome.state, base) != after:
            mismatches.append(f"record {i}: memory after is {after.hex()}, the semantics leave {_region_after(entry, outcome.state, base).hex()}")
    return Replay(name, len(indices), tuple(mismatches))


def verify(directory: Path, sample: int | None = None) -> dict:
    """Replay a recording: every form (every record, or the first ``sample`` of each), the address
    map and the createpolicy rows. Returns ``{"forms": {name: Replay}, "address_map": [...],
    "createpolicy": [...]}``."""
    plan = json.loads((directory / PLAN).read_text())
    data = records(directory)
    rows = data["address_map_0"]
    addresses = address_map_of(rows, 0)
    addresses = attrs.evolve(addresses, cluster_ctas=1)
    replays = {entry["name"]: replay_form(entry, data, addresses, slice(0, sample) if sample else None) for entry in plan["forms"]}
    return {
        "forms": replays,
        "address_map": verify_address_map(rows) + [f"the windows moved between launches: {m}" for m in _moved(data)],
        "createpolicy": verify_createpolicy(data["createpolicy_0"]),
    }


def _moved(data) -> list[str]:
    first, second = data["address_map_0"], data["address_map_1"]
    keep = [i for i, name in enumerate(ADDRESS_ROWS) if name not in ("global", "cvta.to.global", "cvta.global", "param", "cvta.param", "cvta.to.param")]
    return [f"row {ADDRESS_ROWS[i]}" for i in keep if not np.array_equal(first[:, i], second[:, i])]
