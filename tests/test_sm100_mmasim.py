"""The ``sm_100`` profile (a public model, MMA-Sim, not yet silicon) against the vectors MMA-Sim
wrote: conformance/data/sm_100/mmasim/ (``conformance/peers/mmasim_vectors.py``; MMA-Sim and torch
are not needed here). Every element of D is recomputed by ptxspec's one accumulation mechanism
(:func:`ptxspec.semantics.mma.datapath_matrix`) under the profile's tcgen05.mma datapath and
compared bit for bit: zero mismatches, as the sm_90 silicon recordings are replayed."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import attrs
import numpy as np
import pytest

from ptxspec.profiles import NAMES, profile_named
from ptxspec.profiles.sm_100 import SM_100, tcgen05
from ptxspec.semantics.mma import datapath_matrix

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "conformance" / "data"
VECTORS = DATA / "sm_100" / "mmasim"
META = json.loads((VECTORS / "meta.json").read_text())
KINDS = ("tf32", "f16", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4")


def split(combination: str) -> tuple[str, str, str, str, str | None]:
    """``kind/atype.btype.dtype[.stype.blockN]`` -> (kind, atype, btype, dtype, stype)."""
    kind, name = combination.split("/")
    atype, btype, dtype, *scale = name.split(".")
    return kind, atype, btype, dtype, scale[0] if scale else None


@cache
def arrays(kind: str) -> dict[str, np.ndarray]:
    with np.load(VECTORS / f"{kind}.npz") as z:
        return {key: z[key] for key in z.files}


def replay(combination: str, part: str, model=None) -> tuple[int, int, list]:
    """(elements, mismatches, the first few mismatches) of one part of one combination."""
    kind, atype, btype, dtype, stype = split(combination)
    if model is None:
        model = SM_100.tcgen05_datapaths[tcgen05.key(kind, atype, btype, dtype)]
    name = combination.split("/")[1]
    z = arrays(kind)
    A, B, C, D = (z[f"{name}/{part}.{x}"] for x in "ABCD")
    scales = (stype, z[f"{name}/{part}.SA"], z[f"{name}/{part}.SB"]) if stype else None
    got = datapath_matrix(model, atype, btype, dtype, dtype, A, B, C, scales=scales)
    bad = np.argwhere(got != D)
    first = [(tuple(int(i) for i in at), hex(int(got[tuple(at)])), hex(int(D[tuple(at)]))) for at in bad[:3]]
    return int(D.size), len(bad), first


def test_labelled_public_model_not_silicon():
    assert "sm_100" in NAMES and profile_named("sm_100") is SM_100
    assert tcgen05.LABEL == META["label"] == "public model (MMA-Sim), not yet silicon"
    assert tcgen05.LABEL in SM_100.description
    assert META["mmasim"] == tcgen05.MMASIM_VERSION


def test_every_choice_names_its_vectors():
    assert set(SM_100.choices()) == {"tcgen05_datapaths"} <= set(SM_100.evidence)
    for files in SM_100.evidence.values():
        for name in files:
            assert (DATA / name).exists(), name


def test_every_combination_has_vectors_and_a_datapath():
    """MMA-Sim's Blackwell combinations (meta.json, from its own tables) are the profile's keys."""
    keys = {tcgen05.key(*split(c)[:4]) for c in META["combinations"]}
    assert keys == set(SM_100.tcgen05_datapaths)
    assert len(META["combinations"]) == 1 + 3 + 50 + 25 + 1 + 3


@pytest.mark.parametrize("kind", KINDS)
def test_replay_every_vector(kind):
    """Zero mismatches: every element of D that MMA-Sim wrote, whole instructions and single
    adversarial dot products."""
    total, failures = 0, []
    for combination in META["combinations"]:
        if not combination.startswith(kind + "/"):
            continue
        for part in ("mat", "dot"):
            count, bad, first = replay(combination, part)
            assert count == META["combinations"][combination][part]
            total += count
            if bad:
                failures.append((combination, part, bad, first))
    assert total > 0
    assert not failures, failures


def test_the_dot_products_cover_every_class():
    for combination in META["combinations"]:
        kind, *_ = split(combination)
        cases = set(np.unique(arrays(kind)[f"{combination.split('/')[1]}/dot.case"]).tolist())
        assert cases == set(range(len(META["cases"]))), combination


def test_the_vectors_reach_specials_and_extremes():
    """The data exercises what the datapath decides: NaN and infinite results, zeros (every one
    +0), subnormal results."""
    seen = {"nan": 0, "inf": 0, "zero": 0, "subnormal": 0}
    for combination in META["combinations"]:
        kind, _, _, dtype, _ = split(combination)
        name = combination.split("/")[1]
        exponent_bits, mantissa_bits = (8, 23) if dtype == "f32" else (5, 10)
        for part in ("mat", "dot"):
            d = arrays(kind)[f"{name}/{part}.D"].astype(np.int64)
            exp, man = (d >> mantissa_bits) & ((1 << exponent_bits) - 1), d & ((1 << mantissa_bits) - 1)
            full = exp == (1 << exponent_bits) - 1
            seen["nan"] += int((full & (man != 0)).sum())
            seen["inf"] += int((full & (man == 0)).sum())
            seen["zero"] += int(((exp == 0) & (man == 0)).sum())
            seen["subnormal"] += int(((exp == 0) & (man != 0)).sum())
            assert not (d == 1 << (exponent_bits + mantissa_bits)).any(), combination  # no -0
    assert all(seen.values()), seen


#: Combinations whose vectors tell MMA-Sim's e_zero apart (conformance/peers/mmasim_vectors.py's
#: "zero-grid" class): a tie of .f16 next to 2^-48, and products just below e_zero next to far
#: smaller ones of the other sign.
ZERO_REFERENCE_EVIDENCE = ("f16/f16.f16.f16", "tf32/tf32.tf32.f32", "mxf8f6f4/e4m3.e4m3.f32.ue8m0.block32", "mxf4nvf4/e2m1.e2m1.f32.ue8m0.block16")


@pytest.mark.parametrize("combination", ZERO_REFERENCE_EVIDENCE)
def test_zero_reference_is_evidenced(combination):
    """MMA-Sim's ``e_zero`` is visible in the vectors: without the zero's reference exponent
    (``zero_reference=None``, sm_90's fused datapath as measured) the replay misses elements."""
    kind, atype, btype, dtype, _ = split(combination)
    model = SM_100.tcgen05_datapaths[tcgen05.key(kind, atype, btype, dtype)]
    _, bad, _ = replay(combination, "dot", attrs.evolve(model, zero_reference=None))
    assert bad > 0


def test_readable_model_agrees_on_a_sample():
    """The replay above runs the vectorised float64 path; the readable datapath_dot gives the same
    bits on a sample of every kind's dot products (block-scaled ones with ``scales``)."""
    from ptxspec.semantics.mma import datapath_dot, per_k_scales

    for combination in META["combinations"]:
        kind, atype, btype, dtype, stype = split(combination)
        if not combination.endswith(("e4m3.e5m2.f16", "e2m1.e3m2.f32.ue8m0.block32", "bf16.bf16.f32", "tf32.tf32.f32")) and kind not in ("mxf4", "mxf4nvf4"):
            continue
        model = SM_100.tcgen05_datapaths[tcgen05.key(kind, atype, btype, dtype)]
        name = combination.split("/")[1]
        z = arrays(kind)
        A, B, C, D = (z[f"{name}/dot.{x}"] for x in "ABCD")
        rows = np.random.default_rng(1).choice(len(A), size=24, replace=False)
        for r in rows:
            scales = None
            if stype:
                sa, sb = per_k_scales(A.shape[-1], z[f"{name}/dot.SA"][r], z[f"{name}/dot.SB"][r])
                scales = (stype, sa[0].tolist(), sb[:, 0].tolist())
            got = datapath_dot(model, atype, btype, dtype, dtype, A[r, 0].tolist(), B[r, :, 0].tolist(), int(C[r, 0, 0]), scales=scales)
            assert got == int(D[r, 0, 0]), (combination, int(r))
