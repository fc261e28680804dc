"""Round ``mma-more`` of the mma campaign: every remaining sm_90a dense combination.

The machinery (conformance/silicon/mma_campaign.py ``prepare`` of round ``mma-more``,
mma_device.py ``run BUNDLE OUT mma-more``)
is tested without a GPU: the operand descriptions against round 1's, the digest against its
definition written here with Python integers, and the device run with CuPy emulated by exact
integer arithmetic written here (so a wrong layout, generator, digest or loader shows). The
recording (conformance/data/sm_90/mma-more-0.npz, meta-mma-more.json; skipped where absent) is
replayed through the sm_90 profile: D stored in full (designed probes and the first 64 random mma)
element by element, the other random mma by their per-block digests (heavy: every block).
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import emulated_gpu
import numpy as np
import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import mma_device as md

DATA = Path(__file__).resolve().parent.parent / "conformance" / "data" / "sm_90"
RECORDED = (DATA / "meta-mma-more.json").exists() and any(DATA.glob("mma-more-*.npz"))
M64 = (1 << 64) - 1
#: The planned forms that the catalogue and ptxas refuse (.dtype must equal .ctype for m16n8k8).
REFUSED = {"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f16", "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f32"}


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------


def test_combinations_are_legal_new_and_distinct():
    """Every round-2 form is legal in the catalogue (spec/matrix.py), none repeats round 1, and the
    names (file keys) are distinct."""
    from ptxspec.spec.errors import PtxSpecError
    from ptxspec.spec.catalogue import parse

    old = {c.instruction for c in mc.COMBINATIONS}
    names = [c.name for c in mc.MORE_COMBINATIONS]
    assert len(set(names)) == len(names)
    refused = set()
    for combo in mc.MORE_COMBINATIONS:
        assert combo.instruction not in old, combo.instruction
        try:
            parse(combo.instruction)
        except PtxSpecError:
            refused.add(combo.instruction)
    # planned on purpose, to ask ptxas too (it refuses them as well: see the recording's meta)
    assert refused == REFUSED
    # the families the brief lists are all there
    shapes = {(c.shape, c.a) for c in mc.MORE_COMBINATIONS}
    for key in [
        ("m16n8k8", "f16"),
        ("m8n8k4", "f16"),
        ("m16n8k8", "bf16"),
        ("m16n8k4", "tf32"),
        ("m16n8k4", "f64"),
        ("m16n8k16", "f64"),
        ("m16n8k16", "e4m3"),
        ("m16n8k16", "e5m2"),
        ("m16n8k32", "e5m2"),
        ("m8n8k16", "u8"),
        ("m8n8k32", "s4"),
        ("m16n8k64", "u4"),
        ("m16n8k256", "b1"),
        ("m8n8k128", "b1"),
    ]:
        assert key in shapes, key
    assert {(c.alayout, c.blayout) for c in mc.MORE_COMBINATIONS if c.quad_pairs} == {(a, b) for a in ("row", "col") for b in ("row", "col")}


@pytest.mark.parametrize("combo", [c for c in mc.MORE_COMBINATIONS if not c.quad_pairs and c.a not in ("s4", "u4", "b1")][::3], ids=lambda c: c.name)
def test_descriptions_agree_with_round_one(combo):
    """Where round 1's formula applies (one computation per warp, bytes or wider), the
    descriptions from the fragment layouts are the same."""
    for o in "abcd":
        assert mc.more_description(combo, o) == mc.operand_description(combo, o)


@pytest.mark.parametrize(
    "combo", [c for c in mc.MORE_COMBINATIONS if c.quad_pairs][:4] + [c for c in mc.MORE_COMBINATIONS if c.a == "s4"][:1], ids=lambda c: c.name
)
def test_register_counts_per_lane(combo):
    """§9.7.14.5.1: m8n8k4.f16 lanes hold 4 f16 of A and of B (2 registers), 8 of C/D (4 f16x2 or
    8 f32 registers); §9.7.14.5.14 (.s4 m16n8k32 / m8n8k32): 8 elements of A per register."""
    regs = {o: mc.more_description(combo, o)["registers"] for o in "abcd"}
    if combo.quad_pairs:
        assert regs["a"] == regs["b"] == 2
        assert regs["d"] == (4 if combo.d == "f16" else 8)
    else:
        m, n, k = combo.mnk
        assert regs["a"] * 32 * 32 == m * k * 4


# ---------------------------------------------------------------------------------------------
# The digest: its definition, written here with Python integers
# ---------------------------------------------------------------------------------------------


_splitmix64 = emulated_gpu.splitmix64  # the shared Python-integer oracle


@pytest.mark.parametrize("dtype,registers", [(np.uint32, 4), (np.uint32, 2), (np.uint64, 4), (np.uint32, 8)])
def test_block_digests_match_definition(dtype, registers):
    rng = np.random.default_rng(registers)
    d = rng.integers(0, np.iinfo(dtype).max, size=(128, 32, registers), dtype=dtype, endpoint=True)
    got = md.block_digests(np, d, 64)
    flat = d.reshape(2, -1)
    want = [sum(int(r) * (_splitmix64(i) | 1) for i, r in enumerate(block)) & M64 for block in flat]
    assert [int(x) for x in got] == want
    d[70, 3, 1] ^= dtype(1 << 7)
    again = md.block_digests(np, d, 64)
    assert again[0] == got[0] and again[1] != got[1]


def test_block_digests_refuse_partial_blocks():
    with pytest.raises(ValueError):
        md.block_digests(np, np.zeros((65, 32, 4), dtype=np.uint32), 64)


# ---------------------------------------------------------------------------------------------
# The device run, CuPy emulated with exact integer arithmetic written here
# ---------------------------------------------------------------------------------------------

EMULATED = [
    c
    for c in mc.MORE_COMBINATIONS
    if c.name in ("m16n8k16-s32-s8-u8-s32-satfinite", "m8n8k32-s32-u4-s4-s32", "m16n8k128-s32-b1-b1-s32-and-popc", "m8n8k128-s32-b1-b1-s32-xor-popc")
]


def _signed(x: np.ndarray, t: str) -> np.ndarray:
    bits, signed = mc.INTEGER[t]
    x = x.astype(np.int64)
    return np.where(signed & (x >= 1 << (bits - 1)), x - (1 << bits), x) if signed else x


def _integer_d(combo, A, B, C) -> np.ndarray:
    """D of an integer mma from the manual's words: products (or .and/.xor then popc, §9.7.14.5.14)
    summed with C exactly, then clamped (.satfinite) or wrapped to 32 bits."""
    A, B, C = _signed(A, combo.a), _signed(B, combo.b), _signed(C, "s32")
    if combo.bit_op == "xor":
        total = A.sum(-1)[..., :, None] + B.sum(-2)[..., None, :] - 2 * (A @ B)
    else:
        total = A @ B  # .and of single bits is their product
    total = total + C
    if combo.qualifier == ".satfinite":
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return (total & 0xFFFFFFFF).astype(np.uint64)


def _emulated_cupy(plan) -> types.ModuleType:
    kernels = {e["kernel"]: mc.combination_named(e["name"]) for e in plan}

    def kernel(name):
        combo = kernels[name]

        def launch(grid, block, args):
            a, b, c, d, n = args
            A, B, C = mc.more_matrices(combo, a, b, c)
            d[...] = mc.more_layout(combo, "d").from_matrix(_integer_d(combo, A, B, C))

        return launch

    return emulated_gpu.emulated_cupy(kernel)


def test_device_run_loader_replay_and_diagnosis(tmp_path, monkeypatch):
    """mma_device.py run (CuPy emulated) -> mma-more-0.npz + meta-mma-more.json -> load regenerates the
    random inputs -> verify: 0 mismatches, no bad block. Then one register of one digest
    block is changed: the block is reported by index and the record's diagnose names the register and
    the changed value from the digest alone; a changed stored D element is counted."""
    plan, arrays, _ = mc.ROUND_2.plan([(f"k{i}", c) for i, c in enumerate(EMULATED)], 192)
    bundle = emulated_gpu.write_bundle(tmp_path, "more", plan, arrays)
    monkeypatch.setitem(sys.modules, "cupy", _emulated_cupy(plan))
    out = tmp_path / "out"
    md.record(md.MORE, bundle, out)
    assert sorted(p.name for p in out.iterdir()) == ["meta-mma-more.json", "mma-more-0.npz"]
    result = mc.verify(out, mc.ROUND_2)
    assert set(result) == {c.name for c in EMULATED}
    for combo in EMULATED:
        r = result[combo.name]
        m, n, _ = combo.mnk
        entry = next(e for e in plan if e["name"] == combo.name)
        assert r["stored_mismatches"] == 0 and r["bad_blocks"] == [], r
        assert r["dots"] == (entry["probes"] + entry["random"]) * m * n
    recs = {r.combination.name: r for r in mc.load(out, mc.ROUND_2)}
    rec = recs[EMULATED[0].name]
    assert len(rec.digests) == 2 and rec.full == rec.probes + 64
    # silicon "changed" register: rebuild block 1's digest with one register off by 3
    lo = rec.full + 64
    d = mc.more_expected(rec.combination, rec.a[lo : lo + 64], rec.b[lo : lo + 64], rec.c[lo : lo + 64])
    d[9, 17, 3] += np.uint32(3)
    with np.load(out / "mma-more-0.npz") as z:
        changed = {k: z[k] for k in z.files}
    key = f"{rec.combination.name}_digests"
    changed[key] = changed[key].copy()
    changed[key][1] = md.block_digests(np, d, 64)[0]
    changed[f"{rec.combination.name}_d"] = changed[f"{rec.combination.name}_d"].copy()
    changed[f"{rec.combination.name}_d"][-1, 4, 0] ^= np.uint32(1 << 20)
    np.savez_compressed(out / "mma-more-0.npz", **changed)
    again = {r.combination.name: r for r in mc.load(out, mc.ROUND_2)}[rec.combination.name]
    r = again.verify()
    assert r["bad_blocks"] == [1] and r["stored_mismatches"] == 1
    found = again.diagnose(1)
    assert found == [{"mma": lo + 9, "lane": 17, "register": 3, "model": int(d[9, 17, 3]) - 3, "silicon": int(d[9, 17, 3])}]
    assert again.diagnose(0) == []


# ---------------------------------------------------------------------------------------------
# The sm_90 recording
# ---------------------------------------------------------------------------------------------

needs_recording = pytest.mark.skipif(not RECORDED, reason="no round-2 dense mma recording under conformance/data/sm_90")


@pytest.fixture(scope="module")
def recording():
    return {r.combination.name: r for r in mc.load(DATA, mc.ROUND_2)}


def _names(kind=None) -> list[str]:
    if not RECORDED:
        return []
    names = [e["name"] for e in json.loads((DATA / "meta-mma-more.json").read_text())["combinations"]]
    if kind == "int":
        return [n for n in names if mc.combination_named(n).a in mc.INTEGER]
    if kind == "float":
        return [n for n in names if mc.combination_named(n).a not in mc.INTEGER]
    return names


@needs_recording
def test_recording_covers_every_combination(recording):
    """Every planned combination is recorded or refused by ptxas (with its message), each with at
    least 10^5 random dot products besides the designed probes."""
    meta = json.loads((DATA / "meta-mma-more.json").read_text())
    recorded = set(recording)
    refused = set(meta["rejected"])
    assert refused == REFUSED
    assert all("ptxas" in msg for msg in meta["rejected"].values())
    assert {c.name for c in mc.MORE_COMBINATIONS if c.instruction not in refused} == recorded
    assert len(recorded) + len(refused) == len(mc.MORE_COMBINATIONS)
    for name, rec in recording.items():
        assert rec.dots >= 10**5, (name, rec.dots)
        assert rec.probes > 0 and len(rec.digests) * rec.block + rec.full - rec.probes == rec.a.shape[0] - rec.probes


#: The digest blocks that the pinned model does not reproduce: one D register each, one ulp away
#: (:func:`test_residue_is_one_ulp_and_the_subnormal_reference`).
RESIDUE = {"m16n8k16-f32-e4m3-e5m2-f32": [1, 7, 9, 10], "m16n8k16-f32-e5m2-e4m3-f32": [0, 2]}


def _residue(name: str) -> list[int]:
    """:data:`RESIDUE` while the pinned datapath aligns a subnormal input on its exponent field;
    none once it takes the normalised exponent (the change proposed in docs/mma.rst)."""
    model = mc.measured_datapath(mc.combination_named(name))
    return RESIDUE.get(name, []) if getattr(model, "subnormal_reference", "field") == "field" else []


def _pinned(name: str) -> bool:
    combo = mc.combination_named(name)
    return combo.a in mc.INTEGER or mc.measured_datapath(combo) is not None


def test_every_combination_is_pinned():
    """Every legal round-2 combination has a measured sm_90 datapath (m8n8k4 .f16 included: the
    binary32 chains of tests/test_mma_m8n8k4.py)."""
    legal = [c for c in mc.MORE_COMBINATIONS if c.instruction not in REFUSED]
    assert [c.name for c in legal if not _pinned(c.name)] == []


def _fast(names):
    """The .f64 replays take seconds each (the fma chain): heavy-marked in the default test."""
    return [pytest.param(n, marks=pytest.mark.heavy) if "-f64-" in n else n for n in names]


@needs_recording
@pytest.mark.parametrize("name", _fast(_names()))
def test_replay_stored_and_first_blocks(recording, name):
    """The sm_90 profile reproduces every stored D (designed probes, first 64 random mma) and the
    digests of the first two blocks of 64 random mma (but the known residue)."""
    r = recording[name].verify(blocks=range(2))
    assert (r["stored_mismatches"], r["bad_blocks"]) == (0, [b for b in _residue(name) if b < 2]), r


@needs_recording
@pytest.mark.heavy
@pytest.mark.parametrize("name", _names())
def test_replay_every_block(recording, name):
    r = recording[name].verify()
    assert (r["stored_mismatches"], r["bad_blocks"]) == (0, _residue(name)), r


@needs_recording
@pytest.mark.parametrize("name", sorted(RESIDUE))
def test_residue_is_one_ulp_and_the_subnormal_reference(recording, name, monkeypatch):
    """Each residue block differs in one register by one ulp (found from the digest alone), and
    aligning the products on the normalised exponent of a subnormal fp8 input (instead of the
    smallest normal exponent) reproduces every block: the evidence for the change to Datapath
    this campaign proposes (docs/mma.rst)."""
    import ptxspec.semantics.mma_vectorised as mv

    rec = recording[name]
    for block in _residue(name):
        (found,) = rec.diagnose(block)
        assert abs(found["silicon"] - found["model"]) == 1
    monkeypatch.setattr(mv, "_input_addends", lambda fmt, bits, ftz, *_: mv._float_addends(fmt, bits, ftz, "msb"))
    assert rec.verify()["bad_blocks"] == []


@needs_recording
@pytest.mark.parametrize("name", _names("int"))
def test_integers_equal_the_manuals_sum(recording, name):
    """The recorded integer D (stored part) equals the exact sum written in this file."""
    rec = recording[name]
    full = rec.full
    A, B, C, D = mc.more_matrices(rec.combination, rec.a[:full], rec.b[:full], rec.c[:full], rec.d)
    assert np.array_equal(_integer_d(rec.combination, A, B, C), D)


def _spec_names() -> list[str]:
    """Float combinations whose recorded results the spec-level sets are checked against. Left
    out: fp8 with an .f16 accumulator, where silicon rounds the products' sum into .f16 before C
    cancels it (e.g. -256*128 + -112*0.5 + 32768 gives -64, not the exact -56), where the manual
    promises "at least single precision" and :func:`spec_dot` allows only the exact sum: a
    departure from the manual that docs/profiles.rst lists, and that tests/test_mma.py
    (``KNOWN_DEVIATIONS``) shows the spec-level sets reject."""
    return [n for n in _names("float") if not (mc.combination_named(n).d == "f16" and mc.combination_named(n).a in ("e4m3", "e5m2"))]


@needs_recording
@pytest.mark.parametrize("name", _spec_names()[::4])
def test_recorded_probes_lie_in_the_spec_level_sets(recording, name):
    """A sample of recorded float results (two probe mma of every fourth combination; the heavy
    run checks more) lies in the spec-level set of :func:`spec_dot`."""
    _spec_check(recording[name], range(0, recording[name].probes, max(1, recording[name].probes // 2)))


@needs_recording
@pytest.mark.heavy
@pytest.mark.parametrize("name", _spec_names())
def test_recorded_probes_lie_in_the_spec_level_sets_heavy(recording, name):
    _spec_check(recording[name], range(0, recording[name].probes, max(1, recording[name].probes // 24)))


def _spec_check(rec, select):
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    combo = rec.combination
    idx = list(select)
    A, B, C, D = mc.more_matrices(combo, rec.a[idx], rec.b[idx], rec.c[idx], rec.d[idx])
    outside = []
    for t, i, j in np.ndindex(*D.shape):
        allowed = spec_dot(combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in B[t, :, j]], int(C[t, i, j]))
        if not contains(allowed, int(D[t, i, j])):
            outside.append((t, i, j))
    assert outside == []
