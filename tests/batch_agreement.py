"""The one agreement check of the batched paths (semantics/batch*.py) with the readable semantics.

A plain module (tests/ has no package): test files import it as ``import batch_agreement``, which
pytest's default ("prepend") import mode allows by putting tests/ on ``sys.path``.

:func:`assert_agrees` draws the vectors that ``ptxspec vectors`` writes
(:func:`ptxspec.conformance.vectors.inputs`: every operand's edge values -- zeros, infinities, NaN
payloads, subnormals, the rounding boundaries of the formats the form rounds into, integer
extremes and carry boundaries -- alone and crossed, then seeded random vectors), evaluates them
with the form's fast path (:func:`~ptxspec.semantics.batch.evaluate_batch_all`) and one at a time
with :func:`~ptxspec.semantics.instructions.evaluate`, and requires every destination's result to
be equal: the bits, and every allowed set as the same set. It first requires that the form has a
fast path, so that a form falling back to the loop cannot pass by comparing the loop with itself.
"""

from __future__ import annotations

import functools
import random

import numpy as np

from ptxspec.conformance import coverage, vectors
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.spec.catalogue import CATALOGUE


def assert_agrees(form_text: str, profile: str = "spec", *, count: int = 4000, seed: int = 0) -> None:
    """The fast path of ``form_text`` gives what the readable semantics gives, on ``count``
    vectors of the vectors generator (``seed``)."""
    form = as_form(form_text)
    assert batch.has_fast_path(form, profile), f"{form.text} has no fast path under {profile}"
    sources = vectors.inputs(form, count, seed)
    results = batch.evaluate_batch_all(form, sources, profile)
    assert len(results) == len(form.destinations)
    columns = [s.tolist() for s in sources]
    for i in range(len(sources[0]) if sources else 0):
        vector = [c[i] for c in columns]
        want = evaluate(form, vector, profile)
        got = tuple(r.result(i) for r in results)
        assert got == want, f"{form.text} ({profile}) on {[hex(v) for v in vector]}: batched {got!r}, scalar {want!r}"


def _observed_variants(r: batch.BatchResult) -> list[tuple[str, np.ndarray]]:
    """Other results to offer :meth:`BatchResult.contains`, lane by lane: the lane's low bit
    flipped; for a float lane, the lane replaced by a NaN (all exponent and significand bits set)
    and by +0.0 -- members of "any NaN" and of fma.oob's set, not of fixed bits."""
    out = []
    lane_mask = (1 << r.lane_bits) - 1
    for lane in range(r.lanes):
        shift = (r.lanes - 1 - lane) * r.lane_bits
        out.append((f"lane {lane} low bit flipped", r.bits ^ r.bits.dtype.type(1 << shift)))
        if r.format is not None and r.lane_bits <= 32:
            keep = r.bits & r.bits.dtype.type(((1 << (r.lanes * r.lane_bits)) - 1) ^ (lane_mask << shift))
            nan = (((1 << (r.lane_bits - 1)) - 1) if r.format.signed else lane_mask) << shift
            out.append((f"lane {lane} a NaN", keep | r.bits.dtype.type(nan)))
            out.append((f"lane {lane} +0.0", keep))
    return out


def contains_agrees(form_text: str, profile: str = "spec", *, count: int = 2000, seed: int = 0) -> None:
    """:meth:`BatchResult.contains` decides as the scalar check does on each vector's results with
    one destination changed (:func:`_observed_variants`: a flipped low bit, a NaN, +0.0 in each
    lane)."""
    from ptxspec.semantics.instructions import check

    form = as_form(form_text)
    sources = vectors.inputs(form, count, seed)
    results = batch.evaluate_batch_all(form, sources, profile)
    columns = [s.tolist() for s in sources]
    for k, r in enumerate(results):
        for what, changed in _observed_variants(r):
            ok = r.contains(changed)
            for i in range(len(r)):
                vector = [c[i] for c in columns]
                observed = [int(x.bits[i]) for x in results]
                observed[k] = int(changed[i])
                want = check(form, vector, observed, profile)
                assert bool(ok[i]) == want, f"{form.text} ({profile}) on {[hex(v) for v in vector]}, {what}: contains {bool(ok[i])}, check {want}"


@functools.cache
def legal_forms(family_key: str) -> tuple[str, ...]:
    """Every legal form text of the family (a seeded sample of 200 for the video families with
    billions of spellings; :func:`ptxspec.conformance.coverage.legal_forms`). A family that only
    its operands tell apart (mov's pack and unpack forms) is written with its operand template,
    which the parser reads."""
    family = CATALOGUE.family(family_key)
    suffix = f" {family.operand_syntax}" if family.operand_syntax else ""
    return tuple(f.text + suffix for f in coverage.legal_forms(family))


def sample_forms(family_key: str, k: int, seed: int = 0) -> list[str]:
    """A seeded sample of ``k`` legal forms of the family (all of them when it has no more)."""
    forms = list(legal_forms(family_key))
    return forms if len(forms) <= k else random.Random(f"{family_key}/{seed}").sample(forms, k)
