"""The movement campaign: ldmatrix / stmatrix / movmatrix (§9.7.14.5.15-17) on sm_90 silicon,
recorded, then replayed against :mod:`ptxspec.semantics.matrix_data_movement`.

Two steps, one command each, then the replay (the one command line,
:mod:`ptxspec.conformance.silicon.__main__`; one round, ``movement``)::

    python -m ptxspec.conformance.silicon movement prepare BUNDLE [--executions N]   # here (ptxas)
    python3 conformance/silicon/movement_device.py run BUNDLE OUT                    # on the GPU
    python -m ptxspec.conformance.silicon movement verify DIR                        # here

The forms are every ldmatrix / stmatrix / movmatrix form the catalogue (:mod:`ptxspec.spec.matrix`)
calls legal (:func:`catalogue_forms`); those PTX 8.7 admits on sm_90a are planned (the ``.m8n8``
``.b16`` forms, ``.x1/.x2/.x4``, with and without ``.trans``, without a state space and with
``.shared`` or ``.shared::cta``; ``movmatrix.m8n8.trans.b16``), the others (the 8-bit and packed
forms of sm_100a/sm_101a/sm_120a) are listed as not recordable with the catalogue's target.
``prepare`` asks ptxas (``-arch=sm_90a``) about every one of them, one kernel at a time, and records
its verdict: a planned form ptxas refuses is left out and listed under ``rejected`` with ptxas's
message (:func:`ptxspec.conformance.silicon.campaign.assemble_each`, as every campaign does).

Each form runs ``executions`` warps (default :data:`EXECUTIONS`) on inputs regenerated from its
seed by :mod:`movement_device` (nothing but the plan and the cubin is stored): a random
shared-memory image (:data:`LDMATRIX_IMAGE` / :data:`STMATRIX_IMAGE` bytes), per-lane 16-byte
aligned row addresses (ldmatrix: uniform, distinct, heavily overlapping, at the image's ends;
stmatrix: distinct only, see :func:`movement_device.row_addresses`), random source registers.
The spellings of one form with and without a state space share their seed (their outputs are
stored against each other, losslessly). The outputs of the first :data:`FULL` executions are
stored whole, the others as one digest per :data:`BLOCK` executions.

:func:`verify` compares every recorded output, as integers, with ``ldmatrix`` / ``stmatrix`` /
``movmatrix`` of the semantics, and locates each mismatch (form, execution, lane and register, or
byte of the image; in a digest block, the block and the single values that explain its digest).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon import movement_device
from ptxspec.conformance.silicon.campaign import HEADER, CampaignError, assemble_each, assemble_module, ptxas_version
from ptxspec.semantics.matrix_data_movement import ldmatrix, movmatrix, stmatrix
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.catalogue import parse
from ptxspec.spec.matrix import LDMATRIX_FAMILY, LDMATRIX_FMT, MOVMATRIX_FAMILY, STMATRIX_FAMILY

#: Warp executions per form (at least 2,000): the first :data:`FULL` stored
#: whole, the others as one digest per :data:`BLOCK` executions.
EXECUTIONS = 2048
FULL = 128
BLOCK = 128
#: Shared-memory image per execution: 256 rows for ldmatrix, 128 for stmatrix (the image is
#: returned, so it is kept smaller).
LDMATRIX_IMAGE = 4096
STMATRIX_IMAGE = 2048
#: The target recorded: PTX 8.7 on sm_90a.
ARCH = "sm_90a"
PTX = (8, 7)
FAMILIES = (LDMATRIX_FAMILY, LDMATRIX_FMT, STMATRIX_FAMILY, MOVMATRIX_FAMILY)
#: Located mismatches kept per form (all are counted).
KEEP = 20


# ---------------------------------------------------------------------------------------------
# Forms
# ---------------------------------------------------------------------------------------------


def catalogue_forms() -> list[Form]:
    """Every form of the four families that the catalogue parses (its rules applied; targets not):
    each combination of the slots' tokens, an optional slot also absent."""
    out: dict[str, Form] = {}
    for family in FAMILIES:
        choices = [list(s.tokens) + ([] if s.required else [None]) for s in family.slots]
        for combo in itertools.product(*choices):
            text = ".".join([family.opcode, *[t for t in combo if t is not None]])
            try:
                form = parse(text)
            except PtxSpecError:
                continue
            out.setdefault(form.text, form)
    return list(out.values())


def recordable(form: Form) -> bool:
    """Whether PTX 8.7 admits ``form`` on sm_90a (the catalogue's target)."""
    return form.admits(PTX, ARCH)


def registers_of(form: Form) -> int:
    """The .b32 registers per lane of the vector operand (r, or d of movmatrix)."""
    return sum(1 for o in form.operands if o.name != "p" and not (form.opcode == "movmatrix" and o.name == "a"))


def entry_name(form: Form) -> str:
    """A file-safe name: the text without ``.sync.aligned``, dots as dashes (``::`` as ``_``)."""
    return form.text.replace(".sync.aligned", "").replace("::", "_").replace(".", "-")


def group_of(form: Form) -> tuple:
    """The form without its state space: the spellings that share a seed."""
    return (form.opcode, *[(k, v) for k, v in form.choices if k != "ss"])


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def _copy(lines: list[str], size: int, to_shared: bool) -> None:
    """The warp copies the image between global (%q4: the lane's first 16-byte chunk) and shared
    (%q5) memory, lane L moving chunks L, L + 32, ...; ends with bar.sync (one warp per block)."""
    for j in range(size // (movement_device.ROW_BYTES * movement_device.WARP)):
        off = j * movement_device.ROW_BYTES * movement_device.WARP
        if to_shared:
            lines += [f"  ld.global.v4.u32 {{%v0, %v1, %v2, %v3}}, [%q4+{off}];", f"  st.shared.v4.u32 [%q5+{off}], {{%v0, %v1, %v2, %v3}};"]
        else:
            lines += [f"  ld.shared.v4.u32 {{%v0, %v1, %v2, %v3}}, [%q5+{off}];", f"  st.global.v4.u32 [%q4+{off}], {{%v0, %v1, %v2, %v3}};"]
    lines.append("  bar.sync 0;")


def _pointer(lines: list[str], q: int, param: str, stride: int, per_lane: int | None) -> None:
    """%q{q} = the global address of this execution's (and, with ``per_lane``, this lane's) slice
    of parameter ``param``: ``base + execution * stride (+ lane * per_lane)``."""
    lines += [
        f"  ld.param.u64 %q{q}, [{param}];",
        f"  cvta.to.global.u64 %q{q}, %q{q};",
        f"  mul.wide.u32 %q9, %t1, {stride};",
        f"  add.u64 %q{q}, %q{q}, %q9;",
    ]
    if per_lane is not None:
        lines += [f"  mul.wide.u32 %q9, %t0, {per_lane};", f"  add.u64 %q{q}, %q{q}, %q9;"]


def kernel(form: Form, name: str) -> str:
    """One block of one warp per execution (``%ctaid.x``): the lanes copy the execution's image to
    ``.shared``, each loads its row address (a byte offset into the image) and registers, executes
    ``form`` once and stores its result registers; stmatrix copies the image back. The address is
    the shared-window address for ``.shared{::cta}``, its generic address (cvta.shared) otherwise."""
    op = form.opcode
    regs = registers_of(form)
    size = image_bytes(form)
    vector = "{" + ", ".join(f"%r{i}" for i in range(regs)) + "}"
    params = {"ldmatrix": ("image", "addr", "out"), "stmatrix": ("image", "addr", "regs", "out"), "movmatrix": ("regs", "out")}[op]
    lines = ["  .reg .pred %p;", "  .reg .b32 %t<4>;", "  .reg .b32 %v<4>;", f"  .reg .b32 %r<{max(regs, 2)}>;", "  .reg .b64 %q<12>;"]
    if size:
        lines.append(f"  .shared .align 16 .b8 img[{size}];")
    lines += ["  mov.u32 %t0, %tid.x;", "  mov.u32 %t1, %ctaid.x;", "  ld.param.u32 %t2, [n];", "  setp.ge.u32 %p, %t1, %t2;", "  @%p bra DONE;"]
    if size:
        _pointer(lines, 4, "image", size, movement_device.ROW_BYTES)
        lines += ["  mul.wide.u32 %q9, %t0, 16;", "  mov.u64 %q5, img;", "  add.u64 %q5, %q5, %q9;"]
        _copy(lines, size, to_shared=True)
        _pointer(lines, 6, "addr", 4 * movement_device.WARP, 4)
        lines += ["  ld.global.u32 %t3, [%q6];", "  cvt.u64.u32 %q7, %t3;", "  mov.u64 %q8, img;", "  add.u64 %q8, %q8, %q7;"]
        if form.get("ss") is None:
            lines.append("  cvta.shared.u64 %q8, %q8;")
    if op in ("stmatrix", "movmatrix"):
        _pointer(lines, 3, "regs", 4 * movement_device.WARP * regs, 4 * regs)
        source = range(regs) if op == "stmatrix" else [1]
        lines += [f"  ld.global.u32 %r{i}, [%q3+{4 * k}];" for k, i in enumerate(source)]
    if op == "ldmatrix":
        lines.append(f"  {form.text} {vector}, [%q8];")
    elif op == "stmatrix":
        lines.append(f"  {form.text} [%q8], {vector};")
        lines.append("  bar.sync 0;")
        _pointer(lines, 4, "out", size, movement_device.ROW_BYTES)
        _copy(lines, size, to_shared=False)
    else:
        lines.append(f"  {form.text} %r0, %r1;")
    if op != "stmatrix":
        _pointer(lines, 10, "out", 4 * movement_device.WARP * regs, 4 * regs)
        lines += [f"  st.global.u32 [%q10+{4 * i}], %r{i};" for i in range(regs)]
    head = ",\n  ".join([f".param .u64 {p}" for p in params] + [".param .u32 n"])
    return f".visible .entry {name}(\n  {head}\n)\n{{\n" + "\n".join(lines + ["DONE:", "  ret;"]) + "\n}\n"


def image_bytes(form: Form) -> int:
    return {"ldmatrix": LDMATRIX_IMAGE, "stmatrix": STMATRIX_IMAGE}.get(form.opcode, 0)


# ---------------------------------------------------------------------------------------------
# The plan and the bundle
# ---------------------------------------------------------------------------------------------


def plan(executions: int = EXECUTIONS) -> tuple[list[dict], dict[str, str]]:
    """The plan entries of every recordable form (kernel ``mv00``, ``mv01``, ... in catalogue order,
    each spelling without a state space before those with one) and the not-recordable forms with
    the reason. ``executions``: at most :data:`FULL`, or :data:`FULL` plus whole digest blocks."""
    if executions > FULL and (executions - FULL) % BLOCK:
        raise CampaignError(f"{executions} executions: not {FULL} plus whole blocks of {BLOCK}", where="--executions")
    forms = catalogue_forms()
    planned = [f for f in forms if recordable(f)]
    groups = sorted({group_of(f) for f in planned}, key=repr)
    seeds = {g: 0x4D560000 + i for i, g in enumerate(groups)}
    planned.sort(key=lambda f: (repr(group_of(f)), f.get("ss") or ""))
    entries = []
    base: dict[tuple, str] = {}
    for i, f in enumerate(planned):
        g = group_of(f)
        name = entry_name(f)
        entries.append(
            {
                "name": name,
                "kernel": f"mv{i:02d}",
                "form": f.text,
                "opcode": f.opcode,
                "registers": registers_of(f),
                "image_bytes": image_bytes(f),
                "seed": seeds[g],
                "executions": executions,
                "full": min(FULL, executions),
                "block": BLOCK,
                "xor_with": base.get(g),
            }
        )
        base.setdefault(g, name)
    not_recordable = {
        f.text: f"the catalogue's target is {f.targets} (PTX 8.7 on sm_90a does not admit it): Hopper cannot run it" for f in forms if not recordable(f)
    }
    return entries, dict(sorted(not_recordable.items()))


def prepare(bundle: Path, executions: int = EXECUTIONS, ptxas: str = "ptxas") -> dict:
    """Write ``movement.cubin`` (and its ``movement.ptx``) and ``movement-plan.json`` into ``bundle``: every planned form's
    kernel asked of ptxas alone (refused ones left out, under ``rejected`` with ptxas's message),
    and the not-recordable forms' kernels too (ptxas's verdict recorded under ``not_recordable``)."""
    bundle.mkdir(parents=True, exist_ok=True)
    entries, not_recordable = plan(executions)
    by_text = {f.text: f for f in catalogue_forms()}
    trials = [(e["kernel"], by_text[e["form"]]) for e in entries] + [(f"nr{i:02d}", by_text[t]) for i, t in enumerate(not_recordable)]
    _, refused = assemble_each(trials, lambda nf: HEADER + kernel(nf[1], nf[0]), ptxas)
    messages = {f.text: message for (_, f), message in refused}
    rejected = {e["form"]: messages[e["form"]] for e in entries if e["form"] in messages}
    entries = [e for e in entries if e["form"] not in rejected]
    for e in entries:  # a base refused by ptxas: store against nothing
        if e["xor_with"] and e["xor_with"] not in {x["name"] for x in entries}:
            e["xor_with"] = None
    nr = {t: {"reason": why, "ptxas_sm_90a": _first_error(messages[t]) if t in messages else "accepted"} for t, why in not_recordable.items()}
    source = HEADER + "\n".join(kernel(by_text[e["form"]], e["kernel"]) for e in entries)
    cubin = assemble_module(source, ptxas)
    content = {"arch": ARCH, "ptxas": ptxas_version(ptxas), "entries": entries, "rejected": rejected, "not_recordable": nr}
    (bundle / movement_device.CUBIN_FILE).write_bytes(cubin)
    (bundle / movement_device.PTX_FILE).write_text(source)
    (bundle / movement_device.PLAN_FILE).write_text(json.dumps(content, indent=1))
    return content


def _first_error(message: str) -> str:
    """ptxas's first error line (its messages name a temporary file; that is dropped)."""
    line = next((x for x in message.splitlines() if "error" in x), message.splitlines()[0] if message else "")
    return line.split("error   : ", 1)[-1].strip()


# ---------------------------------------------------------------------------------------------
# Load and replay
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Recording:
    """One recorded form: its plan entry, its inputs (regenerated, every execution), the outputs of
    the first ``len(whole)`` executions and the digests of the blocks after ``entry["full"]``."""

    entry: dict
    known: dict
    whole: np.ndarray
    digests: np.ndarray

    def block(self, i: int) -> range:
        lo = self.entry["full"] + i * self.entry["block"]
        return range(lo, lo + self.entry["block"])


def load(directory: Path) -> tuple[dict, dict[str, Recording]]:
    """The meta and, per entry name, the :class:`Recording` in ``directory``
    (:data:`movement_device.META_FILE`, :data:`movement_device.OUTPUT_FILE`)."""
    meta = json.loads((directory / movement_device.META_FILE).read_text())
    outputs: dict[str, np.ndarray] = {}
    out = {}
    with np.load(directory / movement_device.OUTPUT_FILE) as stored:
        for entry in meta["plan"]["entries"]:
            name = entry["name"]
            known = movement_device.inputs(entry)
            x = stored[f"{name}_x"]  # fewer than entry["full"] where the run had to cut them
            outputs[name] = movement_device.decode(entry, x, {k: v[: len(x)] for k, v in known.items()}, {k: v[: len(x)] for k, v in outputs.items()})
            out[name] = Recording(entry, known, outputs[name], stored[f"{name}_digests"])
    return meta, out


def expected(entry: dict, known: dict, execution: int) -> np.ndarray:
    """What the semantics give for one execution: registers ``[32, R]`` or the image after the store."""
    form = _form(entry["form"])
    if entry["opcode"] == "ldmatrix":
        return ldmatrix(form, known["image"][execution], known["addresses"][execution].tolist())
    if entry["opcode"] == "stmatrix":
        return stmatrix(form, known["image"][execution], known["addresses"][execution].tolist(), known["registers"][execution])
    return movmatrix(form, known["registers"][execution][:, 0])[:, None]


_FORMS: dict[str, Form] = {}


def _form(text: str) -> Form:
    if text not in _FORMS:
        _FORMS[text] = parse(text)
    return _FORMS[text]


def compare(rec: Recording, executions=None, blocks=None) -> dict:
    """Mismatches of one form: counts, and the first :data:`KEEP` located. ``executions`` (default
    all stored whole) are compared value by value: execution, then lane and register, or byte of
    the image, with the expected and recorded values. Digest ``blocks`` (default all) are compared
    by digest: the block, and the values whose change alone would give the recorded digest
    (:func:`one_value_changes`)."""
    entry, known = rec.entry, rec.known
    located: list[dict[str, object]] = []
    wrong_executions, wrong_values, wrong_blocks = 0, 0, 0
    executions = range(len(rec.whole)) if executions is None else executions
    blocks = range(len(rec.digests)) if blocks is None else blocks
    for e in executions:
        want = np.asarray(expected(entry, known, e)).astype(np.uint64)
        got = rec.whole[e].astype(np.uint64)
        bad = np.argwhere(want != got)
        if not len(bad):
            continue
        wrong_executions += 1
        wrong_values += len(bad)
        for where in bad[: max(0, KEEP - len(located))]:
            located.append(
                {
                    "form": entry["form"],
                    "execution": e,
                    **_where(entry, tuple(int(i) for i in where)),
                    "expected": int(want[tuple(where)]),
                    "recorded": int(got[tuple(where)]),
                }
            )
    for i in blocks:
        span = rec.block(i)
        want = np.stack([np.asarray(expected(entry, known, e)) for e in span]).astype(np.uint8 if entry["opcode"] == "stmatrix" else np.uint32)
        digest = int(movement_device.block_digests(np, want, entry["block"])[0])
        if digest == int(rec.digests[i]):
            continue
        wrong_blocks += 1
        if len(located) < KEEP:
            candidates = [
                {"execution": span[0] + where[0], **_where(entry, where[1:]), "expected": old, "implied": new}
                for where, old, new in one_value_changes(want, int(rec.digests[i]))
            ]
            located.append({"form": entry["form"], "block": i, "executions": [span[0], span[-1] + 1], "single_value_explanations": candidates[:KEEP]})
    return {
        "executions": len(executions) + len(blocks) * entry["block"],
        "wrong_executions": wrong_executions,
        "wrong_values": wrong_values,
        "wrong_blocks": wrong_blocks,
        "located": located,
    }


def _where(entry: dict, index: tuple) -> dict:
    return {"byte": int(index[0])} if entry["opcode"] == "stmatrix" else {"lane": int(index[0]), "register": int(index[1])}


#: The values whose change alone explains a block's digest (the digest's inverse, shared).
one_value_changes = movement_device.exhaustive_device.one_value_changes


def verify(directory: Path, names=None, executions=None) -> dict:
    """Every recorded form (those in ``names``) compared with the semantics: the executions stored
    whole (``executions``, a range, limits them) and every digest block."""
    meta, recordings = load(directory)
    forms = {}
    for name, rec in recordings.items():
        if names is None or name in names:
            forms[rec.entry["form"]] = compare(rec, executions)
    return {
        "device": meta["device"],
        "forms": forms,
        "executions": sum(f["executions"] for f in forms.values()),
        "mismatching_forms": sorted(t for t, f in forms.items() if f["wrong_executions"] or f["wrong_blocks"]),
        "not_recordable": meta["plan"]["not_recordable"],
        "rejected": meta["plan"]["rejected"],
    }
