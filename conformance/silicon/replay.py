"""Replay a recording from real silicon against the semantics.

A recording (``conformance/data/sm_90/``) holds, per instruction form, the inputs the kernel read
and the outputs the GPU wrote, as the register values stored by
:mod:`ptxspec.conformance.silicon.kernels`. :func:`replay_form` asks, for every recorded vector,
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


@attrs.frozen
class RecordedForm:
    text: str
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]


@attrs.frozen
class Recording:
    meta: dict
    rejected: dict
    forms: dict[str, RecordedForm]


def load(directory: Path | str = DATA / "sm_90") -> Recording:
    directory = Path(directory)
    meta = json.loads((directory / "meta.json").read_text())
    rejected = json.loads((directory / "rejected.json").read_text()) if (directory / "rejected.json").exists() else {}
    arrays: dict[str, np.ndarray] = {}
    for path in sorted(directory.glob("recording-*.npz")):
        with np.load(path) as z:
            arrays.update({k: z[k] for k in z.files})
    forms = {}
    for i, text in enumerate(meta["forms"]):
        inputs = tuple(arrays[f"f{i}_in{k}"] for k in range(8) if f"f{i}_in{k}" in arrays)
        outputs = tuple(arrays[f"f{i}_out{k}"] for k in range(8) if f"f{i}_out{k}" in arrays)
        forms[text] = RecordedForm(text, inputs, outputs)
    return Recording(meta, rejected, forms)


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


def replay_form(recorded: RecordedForm, profile: str = "sm_90") -> Iterator[Mismatch]:
    """Yield every recorded vector whose observed outputs the semantics does not allow."""
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.semantics.results import Allowed, contains

    form = as_form(recorded.text.split("#")[0])
    widths = [register_bits(d.type) for d in form.destinations]
    in_widths = [register_bits(s.type) for s in form.sources]
    signed = [d.type.startswith("s") for d in form.destinations]
    n = len(recorded.inputs[0]) if recorded.inputs else 0
    for i in range(n):
        sources = tuple(int(col[i]) & ((1 << w) - 1) for col, w in zip(recorded.inputs, in_widths))
        stored = tuple(int(col[i]) for col in recorded.outputs)
        results = evaluate(form, sources, profile)
        observed = tuple(s & ((1 << w) - 1) for s, w in zip(stored, widths))
        ok = all(contains(r, o) for r, o in zip(results, observed)) and all(
            _extension_ok(s, o, w, col.dtype.itemsize * 8, sg)
            for s, o, w, col, sg in zip(stored, observed, widths, recorded.outputs, signed)
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
