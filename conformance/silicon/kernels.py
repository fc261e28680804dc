"""PTX kernels that apply one instruction form to arrays of raw bit patterns.

Each kernel reads its source operands from 64-bit global arrays (one element per thread; the low
bits hold the operand), applies the instruction once, and stores each destination zero-extended to
64 bits. A predicate destination is stored as 0 or 1 through ``selp``. Operands are declared as
bit-size registers, which §5.2.1 makes compatible with every fundamental type of the same size.
"""

from __future__ import annotations

from ptxspec.conformance.silicon.campaign import KIND_BITS, Entry

HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def _reg(kind: str) -> tuple[str, int]:
    bits = KIND_BITS[kind]
    return {16: "%h", 32: "%r", 64: "%rd"}[bits], bits


def kernel(entry: Entry, name: str) -> str:
    """The PTX text of one ``.entry`` named ``name`` for ``entry``."""
    params = [f".param .u64 in{i}" for i in range(len(entry.src))] + [f".param .u64 out{i}" for i in range(len(entry.dst))] + [".param .u32 n"]
    body = [
        "  .reg .pred %p<4>;", "  .reg .b16 %h<16>;", "  .reg .b32 %r<16>;", "  .reg .b64 %rd<32>;",
        "  mov.u32 %r10, %tid.x;", "  mov.u32 %r11, %ctaid.x;", "  mov.u32 %r12, %ntid.x;",
        "  mad.lo.u32 %r13, %r11, %r12, %r10;", "  ld.param.u32 %r14, [n];",
        "  setp.ge.u32 %p0, %r13, %r14;", "  @%p0 bra DONE;", "  mul.wide.u32 %rd20, %r13, 8;",
    ]
    sources = []
    for i, kind in enumerate(entry.src):
        prefix, bits = _reg(kind)
        body += [f"  ld.param.u64 %rd{21}, [in{i}];", "  cvta.to.global.u64 %rd21, %rd21;",
                 "  add.u64 %rd21, %rd21, %rd20;", f"  ld.global.u64 %rd{i + 1}, [%rd21];"]
        if bits == 64:
            sources.append(f"%rd{i + 1}")
        else:
            body.append(f"  cvt.u{bits}.u64 {prefix}{i + 1}, %rd{i + 1};")
            sources.append(f"{prefix}{i + 1}")
    dests = []
    for j, kind in enumerate(entry.dst):
        if kind == "pred":
            dests.append("%p1")
        else:
            prefix, _ = _reg(kind)
            dests.append(f"{prefix}{8 + j}")
    body.append(f"  {entry.instruction} {', '.join(dests + sources)};")
    for j, kind in enumerate(entry.dst):
        if kind == "pred":
            body.append("  selp.u64 %rd10, 1, 0, %p1;")
        elif KIND_BITS[kind] == 64:
            body.append(f"  mov.b64 %rd10, {dests[j]};")
        else:
            body.append(f"  cvt.u64.u{KIND_BITS[kind]} %rd10, {dests[j]};")
        body += [f"  ld.param.u64 %rd22, [out{j}];", "  cvta.to.global.u64 %rd22, %rd22;",
                 "  add.u64 %rd22, %rd22, %rd20;", "  st.global.u64 [%rd22], %rd10;"]
    body += ["DONE:", "  ret;"]
    return f".visible .entry {name}(\n  " + ",\n  ".join(params) + "\n)\n{\n" + "\n".join(body) + "\n}\n"


def module(entries: list[tuple[str, Entry]]) -> str:
    return HEADER + "\n".join(kernel(e, name) for name, e in entries)
