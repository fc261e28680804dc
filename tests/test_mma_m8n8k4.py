"""m8n8k4 .f16 under the sm_90 profile: ptxas's binary32 code (profiles/sm_90/mma.py ``M8N8K4_*``).

sm_90 has no tensor-core instruction for this shape; ptxas compiles it into binary32 arithmetic.
Three independent checks of the model:

* ``datapath_matrix`` runs such models in numpy float32 (``binary32_exact``); Hypothesis draws
  models of that family and inputs of every class, and the readable ``datapath_dot`` (exact
  integers, the core's rounding) must give the same bits;
* the readable model alone reproduces the recorded H100 results (conformance/data/sm_90,
  meta-mma-more.json) -- the full replay, digests included, is tests/test_mma_more_silicon.py;
* the recorded SASS of the kernels (``conformance/silicon/sass_device.py``) has no HMMA, and as
  many multiplies, fused multiply-adds, additions and conversions as the model's steps say.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import test_mma_vectorised as tv
from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.semantics import mma, mma_vectorised
from ptxspec.semantics.numerics import Rounding
from ptxspec.profiles.sm_90 import mma as sm90_mma
from ptxspec.semantics.results import SM_90

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "sm_90"
SASS = DATA / "sass"

#: (A, B, C, D, K): the three m8n8k4 .f16 type combinations and other inputs binary32 holds.
COMBINATIONS = [
    ("f16", "f16", "f32", "f32", 4),
    ("f16", "f16", "f16", "f32", 4),
    ("f16", "f16", "f16", "f16", 4),
    ("f16", "f16", "f32", "f32", 16),
    ("e4m3", "e5m2", "f32", "f32", 16),
    ("e5m2", "e5m2", "f16", "f16", 8),
]
IDS = ["{}.{}.{}.{}.k{}".format(*c) for c in COMBINATIONS]


@st.composite
def binary32_chains(draw, k: int, dtype: str) -> mma.Datapath:
    """A model whose every step is one binary32 addition: a chain of one product per step (C
    first, or alone at the end), or pairs of products whose sums are added to C in turn."""
    shape = draw(st.sampled_from(["first", "alone", "tree"]))
    via = mma.BINARY32 if dtype != "f32" else draw(st.sampled_from([None, mma.BINARY32]))
    return mma.Datapath(
        chunk=draw(st.sampled_from([1, 2])) if shape == "tree" else 1,
        c_step=shape,
        tree_sum="chain",
        accumulator=mma.BINARY32,
        accumulator_rounding=Rounding.RN,
        rounding=Rounding.RN if via is None else draw(st.sampled_from(tv.ROUNDINGS)),
        via=via,
        via_rounding=Rounding.RN,
        zero_sign=draw(st.sampled_from(["ieee", "positive"])),
        overflow=draw(st.sampled_from(["rounding", "infinity"])),
        nan=draw(st.sampled_from([None, 0x7E00 if dtype == "f16" else 0x7FC00000])),
        order=draw(st.one_of(st.sampled_from(["ascending", "descending", "pairs"]), st.permutations(range(k)).map(tuple))),
    )


@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_binary32_path_equals_readable(combination, data):
    """datapath_matrix (float32 path) == datapath_dot on every element, any model of the family."""
    model = data.draw(binary32_chains(combination[4], combination[3]))
    A, B, C = data.draw(tv.matrices(combination))
    assert mma_vectorised.binary32_exact(model, *combination[:4], combination[4])
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    tv.assert_same(D, tv.readable(model, combination, A, B, C), model)


@pytest.mark.parametrize(
    "change",
    [
        dict(alignment_bits=25),  # steps cut to a grid: not IEEE addition
        dict(c_step="last"),  # the last step adds three addends
        dict(tree_sum="one step"),  # the partial sums and C in one step
        dict(accumulator_rounding=Rounding.RZ),  # numpy adds to nearest only
        dict(accumulator=(5, 10)),  # the accumulator is not binary32
        dict(flush_inputs=True),
        dict(nan_rule="fma-chain"),
    ],
)
def test_binary32_exact_refuses_what_float32_cannot_compute(change):
    model = attrs.evolve(sm90_mma.M8N8K4_F16, **change)
    assert not mma_vectorised.binary32_exact(model, "f16", "f16", "f16", "f16", 4)


def test_binary32_exact_refuses_inputs_binary32_does_not_hold():
    """A bf16 product can lie below binary32's smallest subnormal (2^-266); a .f64 C has 53 bits."""
    assert mma_vectorised.binary32_exact(sm90_mma.M8N8K4_F32, "f16", "f16", "f32", "f32", 4)
    assert not mma_vectorised.binary32_exact(sm90_mma.M8N8K4_F32, "bf16", "bf16", "f32", "f32", 4)
    assert not mma_vectorised.binary32_exact(sm90_mma.M8N8K4_F32, "f16", "f16", "f64", "f32", 4)


# ---------------------------------------------------------------------------------------------
# The readable model against the H100 recordings
# ---------------------------------------------------------------------------------------------

needs_recording = pytest.mark.skipif(not (DATA / "meta-mma-more.json").exists(), reason="no round-2 recording")
QUAD_PAIRS = [c.name for c in mc.MORE_COMBINATIONS if c.quad_pairs]


@pytest.fixture(scope="module")
def recording():
    return {r.combination.name: r for r in mc.load(DATA, mc.ROUND_2, QUAD_PAIRS)}


def _readable_replay(rec, elements: slice) -> int:
    """Mismatches of datapath_dot, element by element, against the stored D of ``rec``."""
    combo = rec.combination
    model = mma.datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, shape=combo.shape)
    full = rec.full
    A, B, C, D = mc.more_matrices(combo, rec.a[:full], rec.b[:full], rec.c[:full], rec.d)
    where = np.argwhere(np.ones(D.shape, dtype=bool))[elements]
    bad = 0
    for t, i, j in where:
        got = mma.datapath_dot(model, combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in B[t, :, j]], int(C[t, i, j]))
        bad += got != int(D[t, i, j])
    return bad


@needs_recording
@pytest.mark.parametrize("name", QUAD_PAIRS[1::4])
def test_readable_model_reproduces_the_designed_probes(recording, name):
    """The first 4096 stored results (designed probes: cancellation, spread, subnormal products,
    overflow, NaN, infinities, signed zeros) of one layout of each type combination."""
    assert _readable_replay(recording[name], slice(0, 4096)) == 0


@needs_recording
@pytest.mark.heavy
@pytest.mark.parametrize("name", QUAD_PAIRS)
def test_readable_model_reproduces_every_stored_result(recording, name):
    assert _readable_replay(recording[name], slice(None)) == 0


#: One-part changes of the pinned models that the recordings refute: the .f16 D with the k = 2, 3
#: pair added to C first; the .f32 D with C at the start of the fma chain, or the chain descending.
NEIGHBOURS = [
    ("f16", attrs.evolve(sm90_mma.M8N8K4_F16, order=(2, 3, 0, 1))),
    ("f32", attrs.evolve(sm90_mma.M8N8K4_F32, c_step="first")),
    ("f32", attrs.evolve(sm90_mma.M8N8K4_F32, order="descending")),
]


@needs_recording
@pytest.mark.parametrize("dtype, model", NEIGHBOURS, ids=["f16-pairs-swapped", "f32-c-first", "f32-descending"])
def test_the_recordings_refute_each_neighbour(recording, dtype, model):
    """Each neighbour misses some recorded result (stored or digest block) of the forms with
    that D, over the four layout pairs: the order of the additions is measured, not assumed."""
    missed = 0
    for rec in recording.values():
        if rec.combination.d == dtype:
            r = rec.verify(model)
            missed += r["stored_mismatches"] + len(r["bad_blocks"])
    assert missed > 0


# ---------------------------------------------------------------------------------------------
# The recorded SASS against the model's steps
# ---------------------------------------------------------------------------------------------

#: An instruction line of a cuobjdump listing: ``/*0270*/  [@P0] OPCODE.MODIFIERS operands ;``.
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)", re.M)


def opcodes(listing: str) -> Counter:
    return Counter(m.group(1) for m in INSTRUCTION.finditer(listing))


def _kernels() -> dict[str, str]:
    """kernel -> round-2 combination name of every recorded SASS listing."""
    meta = json.loads((DATA / "meta-mma-more.json").read_text())
    by_kernel = {e["kernel"]: e["name"] for e in meta["combinations"]}
    recorded = json.loads((SASS / "sass-meta.json").read_text())["kernels"] if (SASS / "sass-meta.json").exists() else []
    return {k: by_kernel[k] for k in recorded}


def expected_opcodes(model: mma.Datapath, k: int, dtype: str, elements: int = 8) -> dict[str, int]:
    """The binary32 instructions a thread runs for its ``elements`` of D under ``model``: each
    product enters once, by FMUL (the first of a pair) or FFMA (a chain from +0 starts with FFMA on
    the zero register); each step without a product is an FADD; an .f16 D is packed two elements
    per F2FP."""
    if model.c_step == "tree":
        groups = -(-k // model.chunk)
        fmul, ffma, fadd = groups, k - groups, groups
    else:
        fmul, ffma, fadd = 0, k, 1 if model.c_step == "alone" else 0
    return {"HMMA": 0, "FMUL": fmul * elements, "FFMA": ffma * elements, "FADD": fadd * elements, "F2FP": elements // 2 if dtype == "f16" else 0}


@pytest.mark.skipif(not (SASS / "sass-meta.json").exists(), reason="no recorded SASS")
def test_recorded_sass_has_the_models_steps():
    """For every recorded m8n8k4 .f16 kernel: no tensor-core instruction, and the counts of
    FMUL/FFMA/FADD/F2FP the sm_90 model's steps give (8 elements of D per thread)."""
    kernels = _kernels()
    assert {mc.combination_named(n).quad_pairs for n in kernels.values()} == {True} and len(kernels) == len(QUAD_PAIRS)
    for kernel, name in kernels.items():
        combo = mc.combination_named(name)
        model = mma.datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, shape=combo.shape)
        counts = opcodes((SASS / f"sass-{kernel}.txt").read_text())
        want = expected_opcodes(model, combo.mnk[2], combo.d)
        assert {op: counts[op] for op in want} == want, (kernel, name)


def test_opcode_reader_on_a_listing_line():
    line = (
        "        /*0380*/                   FMUL R11, R21, R12 ;                     /* 0x0000000c150b7220 */\n"
        "        /*0850*/              @!P0 FFMA.FTZ R24, R24, R25, R27 ;\n        /*0860*/  F2FP.F16.F32.PACK_AB R0, R1, R2 ;"
    )
    assert opcodes(line) == Counter({"FMUL": 1, "FFMA": 1, "F2FP": 1})


# ---------------------------------------------------------------------------------------------
# The SASS recorder (conformance/silicon/sass_device.py; ``mma prepare-sass``)
# ---------------------------------------------------------------------------------------------

SASS_DEVICE = Path(__file__).resolve().parents[1] / "conformance" / "silicon" / "sass_device.py"


@needs_recording
def test_sass_plan_names_the_m8n8k4_kernels():
    plan = mc.sass_plan(json.loads((DATA / "meta-mma-more.json").read_text()))
    names = {e["kernel"]: e["name"] for e in json.loads((DATA / "meta-mma-more.json").read_text())["combinations"]}
    assert plan["cubin"] == "more.cubin" and sorted(names[k] for k in plan["kernels"]) == sorted(QUAD_PAIRS)


def test_sass_device_writes_one_listing_per_kernel(tmp_path, monkeypatch):
    """With a stand-in cuobjdump on PATH: one unchanged listing per planned kernel, and the meta."""
    import subprocess
    import sys

    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "cuobjdump"
    fake.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "cuobjdump: stand-in"; exit 0; fi\n'
        'echo "code for sm_90a"; echo "\t\tFunction : $3"; echo "        /*0000*/   FFMA R1, R2, R3, RZ ;"\n'
    )
    fake.chmod(0o755)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "more.cubin").write_bytes(b"\x7fELF stand-in")
    (bundle / "sass-plan.json").write_text(json.dumps({"cubin": "more.cubin", "kernels": ["mmx05", "mmx09"]}))
    env = {"PATH": f"{tools}:/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(SASS_DEVICE), "run", str(bundle), str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "out" / "sass-meta.json").read_text())
    assert meta["kernels"] == ["mmx05", "mmx09"] and meta["cuobjdump"] == "cuobjdump: stand-in"
    assert opcodes((tmp_path / "out" / "sass-mmx09.txt").read_text()) == Counter({"FFMA": 1})


@pytest.mark.parametrize("args, message", [([], "usage"), (["run", "/nonexistent", "/tmp/x"], "no such plan")])
def test_sass_device_refuses_in_one_line(args, message):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(SASS_DEVICE), *args], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
