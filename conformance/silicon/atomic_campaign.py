"""The atomic campaign: the floating-point ``atom`` and ``red`` of §9.7.13.5-6 on sm_90 silicon,
recorded, then replayed against the values the litmus engines give them
(:func:`ptxspec.semantics.atomics.atomic_values`, the numerics core)::

    python -m ptxspec.conformance.silicon atomic prepare BUNDLE     # here (ptxas)
    python3 conformance/silicon/atomic_device.py run BUNDLE OUT     # on the GPU
    python -m ptxspec.conformance.silicon atomic verify DIR         # here

The forms are ``atom`` and ``red`` with ``.add.f32``, ``.add.f64`` and ``.add.noftz`` on ``.f16``,
``.bf16``, ``.f16x2``, ``.bf16x2`` (the scalar floating-point forms ptxas accepts), each on
``.global`` and on ``.shared`` memory. The manual's words under test (§9.7.13.5): ".add is a
rounding to nearest even. The current implementation of atom.add.f32 on global memory flushes
subnormal inputs and results to sign-preserving zero; whereas atom.add.f32 on shared memory
supports subnormal inputs and results and doesn't flush them to zero"; the half types "preserve
subnormal inputs and results". :func:`verify` checks, as integers, that ``atom`` returned the old
value and that the value left in memory is the one the semantics gives for that state space.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon import atomic_device
from ptxspec.conformance.silicon.campaign import HEADER, assemble_each, assemble_module, ptxas_version

ELEMENTS = {"f32": ("", 4), "f64": ("", 8), "f16": (".noftz", 2), "bf16": (".noftz", 2), "f16x2": (".noftz", 4), "bf16x2": (".noftz", 4)}
"""Element type -> (the .noftz it requires, its bytes)."""


@attrs.frozen
class AtomicForm:
    opcode: str
    """``atom`` or ``red``."""
    space: str
    """``global`` or ``shared``."""
    element: str

    @property
    def name(self) -> str:
        return f"{self.opcode}-{self.space}-{self.element}"

    @property
    def kernel(self) -> str:
        return self.name.replace("-", "_")

    @property
    def bytes(self) -> int:
        return ELEMENTS[self.element][1]

    @property
    def instruction(self) -> str:
        return f"{self.opcode}.{self.space}.add{ELEMENTS[self.element][0]}.{self.element}"


FORMS = tuple(AtomicForm(o, s, e) for o in ("atom", "red") for s in ("global", "shared") for e in ELEMENTS)


def kernel_ptx(form: AtomicForm) -> str:
    """One thread per input pair: the old value placed in the form's state space, the atomic, and
    what it returned and left (see :mod:`atomic_device`)."""
    w = form.bytes * 8
    k = form.kernel
    where = "[%rd8]"
    place = f"st.global.b{w} [%rd8], %v1;"
    after = ""
    if form.space == "shared":
        where = "[%rd12]"
        place = f"mov.u64 %rd10, smem_{k};\n mul.wide.u32 %rd11, %r3, {form.bytes};\n add.s64 %rd12, %rd10, %rd11;\n st.shared.b{w} [%rd12], %v1;"
        after = f"ld.shared.b{w} %v4, [%rd12];\n st.global.b{w} [%rd8], %v4;"
    atomic = f"{form.instruction} %v3, {where}, %v2;" if form.opcode == "atom" else f"{form.instruction} {where}, %v2;\n mov.b{w} %v3, %v1;"
    shared = f".shared .align 8 .b8 smem_{k}[{atomic_device.BLOCK * form.bytes}];\n" if form.space == "shared" else ""
    return (
        f"{shared}.visible .entry {k}(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u64 pm, .param .u32 pn)\n{{\n"
        f" .reg .b64 %rd<13>;\n .reg .b32 %r<6>;\n .reg .pred %p;\n .reg .b{w} %v<5>;\n"
        " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n ld.param.u64 %rd3, [pd];\n ld.param.u64 %rd4, [pm];\n ld.param.u32 %r5, [pn];\n"
        " mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %tid.x;\n mad.lo.s32 %r4, %r1, %r2, %r3;\n"
        " setp.ge.u32 %p, %r4, %r5;\n @%p bra DONE;\n"
        f" mul.wide.u32 %rd5, %r4, {form.bytes};\n add.s64 %rd6, %rd1, %rd5;\n add.s64 %rd7, %rd2, %rd5;\n add.s64 %rd8, %rd4, %rd5;\n add.s64 %rd9, %rd3, %rd5;\n"
        f" ld.global.b{w} %v1, [%rd6];\n ld.global.b{w} %v2, [%rd7];\n {place}\n {atomic}\n {after}\n st.global.b{w} [%rd9], %v3;\n"
        "DONE:\n ret;\n}\n"
    )


def prepare(bundle: Path, ptxas: str = "ptxas") -> dict:
    """Write the bundle: every form ptxas accepts, one kernel each, combined into one cubin."""
    accepted, refused = assemble_each(list(FORMS), lambda f: HEADER + kernel_ptx(f), ptxas)
    source = HEADER + "\n".join(kernel_ptx(f) for f in accepted)
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / atomic_device.PTX_FILE).write_text(source)
    (bundle / atomic_device.CUBIN_FILE).write_bytes(assemble_module(source, ptxas))
    plan = {
        "ptxas": ptxas_version(ptxas),
        "forms": [
            {"name": f.name, "kernel": f.kernel, "instruction": f.instruction, "element": f.element, "bytes": f.bytes, "seed": 1000 + i}
            for i, f in enumerate(accepted)
        ],
        "rejected": [{"name": f.name, "message": message} for f, message in refused],
    }
    (bundle / atomic_device.PLAN_FILE).write_text(json.dumps(plan, indent=1) + "\n")
    return plan


def verify(directory: Path, sample: int | None = None) -> dict[str, dict]:
    """Per recorded form: how many pairs, and the mismatches (pair index, a, b, what the chip
    returned and left, what the semantics allows), where ``atom`` did not return the old value or
    the memory does not hold :func:`~ptxspec.semantics.atomics.atomic_values`'s result for the
    form's state space. ``sample``: only the first pairs of each form (the edge pairs lead)."""
    from ptxspec.semantics.atomics import atomic_values

    data = np.load(directory / atomic_device.OUTPUT_FILE)
    report: dict[str, dict] = {}
    for form in FORMS:
        if f"{form.name}_a" not in data:
            continue
        a, b, returned, memory = (data[f"{form.name}_{part}"][:sample] for part in ("a", "b", "returned", "memory"))
        qualifiers = (form.space, "noftz", form.element) if ELEMENTS[form.element][0] else (form.space, form.element)
        mismatches = []
        for i, (x, y, r, m) in enumerate(zip(a.tolist(), b.tolist(), returned.tolist(), memory.tolist())):
            allowed = atomic_values("add", x, (y,), qualifiers)
            if r != x or m not in allowed:
                mismatches.append(
                    {
                        "pair": i,
                        "a": hex(x),
                        "b": hex(y),
                        "returned": hex(r),
                        "memory": hex(m),
                        "allowed": [hex(v) if isinstance(v, int) else v.describe() for v in allowed],
                    }
                )
        report[form.name] = {"pairs": len(a), "mismatches": mismatches}
    return report
