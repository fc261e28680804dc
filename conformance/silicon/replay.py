"""Replay a recording from real silicon against the semantics.

A recording (``conformance/data/sm_90/``) holds, per instruction form, the inputs the kernel read
and the outputs the GPU wrote, as the register values its kernel stored (zero-extended to the
stored width). :func:`load` reads the scalar rounds: ``float-cvt``
(:mod:`ptxspec.conformance.silicon.float_cvt_campaign`: ``meta-float-cvt.json``,
``float-cvt-<i>.npz``) and every round of :mod:`ptxspec.conformance.silicon.catalogue_campaign`
(``meta-ROUND.json`` with its input groups). :func:`replay_form` asks, for every recorded vector,
whether the observed destination is an allowed result of the form under a profile: for ``sm_90``
the exact forms must match bit for bit, the ``.approx`` forms must lie in the manual's bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import attrs
import numpy as np

from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import register_bits

DATA = Path(__file__).resolve().parent.parent / "data"
#: The float-cvt round's name: the stem of its files.
FLOAT_CVT = "float-cvt"


@attrs.frozen
class RecordedForm:
    """One recorded form. ``inputs`` holds one column per source operand of the catalogue form, in
    its order (an immediate as a constant column); a warp form (``warp``) has one row per lane,
    32 consecutive rows per warp, and a last input column: the lanes that executed it."""

    text: str
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]
    #: The round that recorded it (the stem of its files: ``float-cvt``, ``fma-oob-probes``, ...).
    campaign: str = "float-cvt"
    warp: bool = False


@attrs.frozen
class Recording:
    #: The meta file of the float-cvt round (meta-float-cvt.json); ``campaigns`` holds every round's, by name.
    meta: dict
    rejected: dict
    forms: dict[str, RecordedForm]
    campaigns: dict[str, dict] = attrs.field(factory=dict)


def _load_plan_campaign(directory: Path, meta_path: Path, forms: dict[str, RecordedForm], rejected: dict) -> tuple[str, dict]:
    """A round of :mod:`ptxspec.conformance.silicon.catalogue_campaign`: inputs stored once per
    input group, outputs per form, immediates in the meta file."""
    from ptxspec.conformance.silicon.campaign import load_arrays
    from ptxspec.semantics.instructions import as_form

    meta = json.loads(meta_path.read_text())
    name = meta_path.stem.removeprefix("meta-")
    arrays = load_arrays(directory / file for file in meta["files"])
    for i, text in enumerate(meta["forms"]):
        group, n_in, imm = meta["groups"][i], meta["inputs_per_form"][i], meta["immediates"][i]
        stored = iter(arrays[f"g{group}_in{k}"] for k in range(n_in))
        outputs = tuple(arrays[f"f{i}_out{k}"] for k in range(8) if f"f{i}_out{k}" in arrays)
        n = len(outputs[0])
        columns = [np.full(n, imm[o.name], dtype=np.uint8) if o.name in imm else next(stored) for o in as_form(text.split("#")[0]).sources]
        columns += list(stored)  # a warp form's active lanes
        forms[text] = RecordedForm(text, tuple(columns), outputs, name, bool(meta["warp"][i]))
    path = directory / f"rejected-{name}.json"
    if path.exists():
        rejected.update(json.loads(path.read_text()))
    return name, meta


def load(directory: Path | str = DATA / "sm_90") -> Recording:
    """Every scalar round recorded under ``directory``: the float-cvt round (inputs and outputs
    per form) and each catalogue round (a ``meta-*.json`` with input groups)."""
    from ptxspec.conformance.silicon.campaign import load_arrays

    directory = Path(directory)
    meta = json.loads((directory / f"meta-{FLOAT_CVT}.json").read_text())
    rejected_path = directory / f"rejected-{FLOAT_CVT}.json"
    rejected = json.loads(rejected_path.read_text()) if rejected_path.exists() else {}
    arrays = load_arrays(sorted(directory.glob(f"{FLOAT_CVT}-[0-9]*.npz")))
    forms = {}
    for i, text in enumerate(meta["forms"]):
        inputs = tuple(arrays[f"f{i}_in{k}"] for k in range(8) if f"f{i}_in{k}" in arrays)
        outputs = tuple(arrays[f"f{i}_out{k}"] for k in range(8) if f"f{i}_out{k}" in arrays)
        forms[text] = RecordedForm(text, inputs, outputs)
    campaigns = {FLOAT_CVT: meta}
    for path in sorted(directory.glob("meta-*.json")):
        if "groups" not in json.loads(path.read_text()):
            continue  # not a plan campaign of vectors (exhaustive digests, approx scans: their own modules)
        name, extra = _load_plan_campaign(directory, path, forms, rejected)
        campaigns[name] = extra
    return Recording(meta, rejected, forms, campaigns)


@attrs.frozen
class Mismatch:
    index: int
    inputs: tuple[int, ...]
    observed: tuple[int, ...]
    expected: str


def _extension_ok(observed: int, value: int, bits: int, stored_bits: int, signed: bool) -> bool:
    """A narrow result in a wider register is extended by the destination format's signedness
    (§6.5.1 note 1: "the result is extended to the destination register width after chopping")."""
    if stored_bits <= bits:
        return True
    if signed and value >> (bits - 1) & 1:
        return observed >> bits == (1 << (stored_bits - bits)) - 1
    return observed >> bits == 0


def output_digest(recorded: RecordedForm) -> str:
    """SHA-256 of one form's outputs (each output array's bytes, in order): what the repository
    keeps of a second chip's run instead of its data (see ``scalar_device.py digest``, which
    computes the same digest on the device from the raw files)."""
    import hashlib

    h = hashlib.sha256()
    for out in recorded.outputs:
        h.update(np.ascontiguousarray(out).tobytes())
    return h.hexdigest()


def second_chip_digests(directory: Path) -> dict:
    """The digest record of a float-cvt recording directory (``meta-float-cvt.json``,
    ``float-cvt-*.npz``): the chip's meta, per form :func:`output_digest`, and the SHA-256 of each
    recorded file. ``float-cvt-h100-digests.json`` replaced the H100's copy of the recording, whose
    files were byte-identical to the H200's (the ``files`` digests show it)."""
    from ptxspec.conformance.silicon.campaign import chip_fields, file_digests

    meta = json.loads((directory / f"meta-{FLOAT_CVT}.json").read_text())
    recording = load(directory)
    return {**chip_fields(meta), "files": file_digests(directory), "forms": {t: output_digest(f) for t, f in sorted(recording.forms.items())}}


def sample_rows(recorded: RecordedForm, count: int, seed: int = 0) -> list[int]:
    """A seeded sample of ``count`` vectors of ``recorded``: the first half from the start (the
    edge classes come first), the rest drawn at random; for a warp form, warp indices (half from
    the full-mask warps, half from the partial-mask ones, which make up the second half)."""
    total = len(recorded.inputs[-1]) // 32 if recorded.warp else len(recorded.outputs[0])
    if count >= total:
        return list(range(total))
    rng = np.random.default_rng(seed)
    if recorded.warp:
        first = list(range(count // 4)) + list(range(total // 2, total // 2 + count // 4))
    else:
        first = list(range(count // 2))
    rest = sorted(set(rng.choice(total, size=count, replace=False).tolist()) - set(first))
    return sorted(first + rest[: count - len(first)])


def replay_form(recorded: RecordedForm, profile: str = "sm_90", rows: list[int] | None = None) -> Iterator[Mismatch]:
    """Yield every recorded vector whose observed outputs the semantics does not allow (only the
    vectors ``rows``, when given: row indices, or warp indices for a warp form)."""
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.semantics.results import Allowed, contains

    if recorded.warp:
        yield from replay_warp_form(recorded, profile, rows)
        return
    form = as_form(recorded.text.split("#")[0])
    widths = [register_bits(d.type) for d in form.destinations]
    in_widths = [register_bits(s.type) for s in form.sources]
    signed = [d.type.startswith("s") for d in form.destinations]
    n = len(recorded.inputs[0]) if recorded.inputs else 0
    for i in range(n) if rows is None else rows:
        sources = tuple(int(col[i]) & ((1 << w) - 1) for col, w in zip(recorded.inputs, in_widths))
        stored = tuple(int(col[i]) for col in recorded.outputs)
        results = evaluate(form, sources, profile)
        observed = tuple(s & ((1 << w) - 1) for s, w in zip(stored, widths))
        ok = all(contains(r, o) for r, o in zip(results, observed)) and all(
            _extension_ok(s, o, w, col.dtype.itemsize * 8, sg) for s, o, w, col, sg in zip(stored, observed, widths, recorded.outputs, signed)
        )
        if not ok:
            expected = "; ".join(f"{r:#x}" if isinstance(r, int) else r.describe() for r in results if isinstance(r, (int, Allowed)))
            yield Mismatch(i, sources, stored, expected)


def supported(text: str) -> bool:
    """Whether the catalogue and semantics know this form."""
    from ptxspec.semantics.instructions import as_form, semantic_function

    try:
        semantic_function(as_form(text.split("#")[0]))
    except PtxSpecError:
        return False
    return True


def replay_warp_form(recorded: RecordedForm, profile: str = "sm_90", warps: list[int] | None = None) -> Iterator[Mismatch]:
    """Each recorded warp (32 consecutive rows) against the warp semantics: per-lane operands as
    32-tuples, membermask as one value, ``active`` the lanes that executed the instruction. A
    mismatch names the warp's first row; ``inputs`` holds (lane, value...) of the first lane
    whose output is not allowed, ``observed`` that lane's outputs."""
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.semantics.results import contains
    from ptxspec.semantics.warp import WarpResult

    form = as_form(recorded.text.split("#")[0])
    widths = [register_bits(d.type) for d in form.destinations]
    *sources, active = recorded.inputs
    for w in range(len(active) // 32) if warps is None else warps:
        rows = slice(32 * w, 32 * w + 32)
        operands = []
        for operand, col in zip(form.sources, sources):
            lanes = tuple(int(x) & ((1 << register_bits(operand.type)) - 1) for x in col[rows])
            operands.append(lanes[0] if operand.name == "membermask" else lanes)
        executing = int(active[32 * w])
        results: list[WarpResult] = []
        for r in evaluate(form, tuple(operands), profile, active=executing):
            assert isinstance(r, WarpResult), f"{recorded.text}: a warp form's result is not a WarpResult"
            results.append(r)
        observed = [tuple(int(x) & ((1 << wd) - 1) for x in col[rows]) for col, wd in zip(recorded.outputs, widths)]
        if all(o in r for r, o in zip(results, observed)):
            continue
        bad = next(lane for lane in range(32) if not all(contains(r.lanes[lane], o[lane]) for r, o in zip(results, observed)))
        lane_texts = []
        for r in results:
            lane = r.lanes[bad]
            lane_texts.append(lane if isinstance(lane, str) else (f"{lane:#x}" if isinstance(lane, int) else lane.describe()))
        expected = "; ".join(lane_texts)
        yield Mismatch(
            32 * w, (bad, *(op if isinstance(op, int) else op[bad] for op in operands), executing), tuple(o[bad] for o in observed), f"lane {bad}: {expected}"
        )


def verify(
    directory: Path | str = DATA / "sm_90", rounds: list[str] | None = None, forms: list[str] | None = None, profile: str = "sm_90", log=print
) -> dict[str, int]:
    """Every recorded vector of the scalar rounds ``rounds`` (default all; only the forms ``forms``
    when given) against the semantics under ``profile``: per form, the mismatching vectors (the
    first few logged). ``ptxspec check-vectors --recording DIR`` checks the same, faster."""
    recording = load(directory)
    out = {}
    for text, recorded in recording.forms.items():
        if (rounds and recorded.campaign not in rounds) or (forms and text not in forms):
            continue
        mismatches = list(replay_form(recorded, profile))
        out[text] = len(mismatches)
        for m in mismatches[:3]:
            log(f"{text} #{m.index}: inputs {[hex(x) for x in m.inputs]} observed {[hex(x) for x in m.observed]} expected {m.expected}")
    log(f"{len(out)} forms replayed, {sum(1 for n in out.values() if n)} with mismatches")
    return out
