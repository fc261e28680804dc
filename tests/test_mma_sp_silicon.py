"""mma.sp on sm_90 silicon (§9.7.14.6): the campaign's generators, and the replay of the H100
recording (conformance/data/sm_90/mma-sp-*.npz, meta-mma-sp.json) against the sm_90 profile.

The generator tests check, without the recording, that the random metadata holds only the fields
the manual defines, that it is regenerated bit for bit from its counter, that each designed probe
lands on the positions its metadata selects (the 2-bit indices decoded here, not with the
campaign's code), and that the whole path -- plan, device run (emulated with an independent
integer oracle), files, loader, verifier -- gives back what the emulated device computed.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import mma_device as md
from ptxspec.semantics.matrix_layout import ORDERED_FIELDS, expand_sparse, metadata_layout

DATA = Path(__file__).resolve().parent.parent / "conformance" / "data" / "sm_90"
RECORDED = (DATA / "meta-mma-sp.json").exists()
FLOAT = [c for c in mc.SPARSE_COMBINATIONS if c.a not in mc.INTEGER]
INTEGER = [c for c in mc.SPARSE_COMBINATIONS if c.a in mc.INTEGER]


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("combo", mc.SPARSE_COMBINATIONS, ids=lambda c: c.name)
def test_random_metadata_holds_only_defined_fields(combo):
    """§9.7.14.6.1: 0b0000, 0b0101, 0b1010, 0b1111 are invalid; ::ordered_metadata (and the 8-bit
    float types) take only 0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110; .tf32 only 0b1110, 0b0100."""
    fields = combo.fields
    expected = {f for f in range(16) if (f & 3) != (f >> 2)}
    if combo.a == "tf32":
        expected = {0b1110, 0b0100}
    elif combo.ordered or combo.a in ("e4m3", "e5m2"):
        expected = set(ORDERED_FIELDS)
    assert set(fields) == expected
    e = md.random_metadata(fields, 64, 1234)
    assert e.shape == (64, 32) and e.dtype == np.uint32
    nibbles = {(int(w) >> (4 * i)) & 0xF for w in e.ravel() for i in range(8)}
    assert nibbles == expected  # every defined field occurs, no other
    for s in combo.selectors:
        layout = mc.sparse_layout(combo, "a")
        _, undefined = expand_sparse(layout, np.zeros((64, 32, layout.registers), dtype=np.uint64), e, s, ordered=combo.ordered)
        assert not undefined.any()


def test_random_metadata_is_counter_based():
    """mma ``first_mma + i`` gets the same words whether generated alone or in a longer run."""
    fields = sorted(ORDERED_FIELDS)
    whole = md.random_metadata(fields, 20, 99)
    assert np.array_equal(md.random_metadata(fields, 7, 99, first_mma=5), whole[5:12])
    assert not np.array_equal(md.random_metadata(fields, 20, 98), whole)


def _manual_columns(combo, words: np.ndarray, selector: int) -> np.ndarray:
    """Dense column of each stored element ``[mma, M, K/2]`` (§9.7.14.6.1): the field's lane and
    bit from MetadataLayout.field (pinned to silicon below), the indices decoded here -- in block b
    of a row the field ``(idx1 << 2) | idx0`` puts stored element 2b at chunk idx0 and 2b + 1 at
    chunk idx1 (16- and 8-bit types); a .tf32 block holds one element, at column 2b + idx0 // 2."""
    meta = metadata_layout(combo.shape, combo.a)
    m, _, k = combo.mnk
    half = k // 2
    out = np.zeros((words.shape[0], m, half), dtype=np.intp)
    for t in range(words.shape[0]):
        for row in range(m):
            for block in range(meta.blocks):
                lane, bit = meta.field(row, block, selector)
                f = (int(words[t, lane]) >> bit) & 0xF
                if combo.a == "tf32":
                    out[t, row, block] = 2 * block + (f & 3) // 2
                else:
                    out[t, row, 2 * block] = 4 * block + (f & 3)
                    out[t, row, 2 * block + 1] = 4 * block + (f >> 2)
    return out


@pytest.mark.parametrize("combo", [mc.SPARSE_COMBINATIONS[0], mc.SPARSE_COMBINATIONS[3], mc.SPARSE_COMBINATIONS[4]], ids=lambda c: c.name)
def test_designed_probes_land_where_claimed(combo):
    """Design ``r`` of each probe mma (rows r and r + 8 of A, column r of B, :func:`mc.designs` of
    the K/2 combination) reaches the dense A and B at the positions the row's metadata selects;
    rows r and r + 8 share their metadata; in every fourth mma the other elements of column r of B
    are an infinity (NaN for .e4m3), elsewhere zero."""
    half = mc.half_probes(combo.half)
    total = half["a"].shape[0]
    count = min(total, mc.SPARSE_PROBE_MMA)
    chosen = (np.arange(count) * total) // count
    probes = mc.sparse_probes(combo)
    assert sorted(probes) == list(combo.selectors)
    m, n, k = combo.mnk
    fill = mc.encode(combo.b, "inf") if combo.b != "e4m3" else mc.encode(combo.b, "nan")
    for s, p in probes.items():
        index = chosen[np.arange(s, count, len(combo.selectors))]
        A_half, B_half, C_half = (half[o][index] for o in "abc")
        dense, undefined = expand_sparse(mc.sparse_layout(combo, "a"), p["a"], p["e"], s, ordered=combo.ordered)
        assert not undefined.any()
        B = mc.sparse_layout(combo, "b").to_matrix(p["b"])
        assert np.array_equal(mc.sparse_layout(combo, "c").to_matrix(p["c"]), C_half)
        cols = _manual_columns(combo, p["e"], s)
        assert np.array_equal(cols[:, :8], cols[:, 8:])
        t = np.arange(len(index))[:, None, None]
        assert np.array_equal(dense[t, np.arange(m)[None, :, None], cols], A_half)
        assert np.count_nonzero(dense) == np.count_nonzero(A_half)
        for r in range(n):
            selected = B[np.arange(len(index))[:, None], cols[:, r], r]
            assert np.array_equal(selected, B_half[:, :, r])
            others = np.ones((len(index), k), dtype=bool)
            others[np.arange(len(index))[:, None], cols[:, r]] = False
            rest = B[:, :, r][others].reshape(len(index), k // 2)
            poisoned = (np.arange(len(index)) % 4 == 3)
            assert (rest[poisoned] == fill).all() and (rest[~poisoned] == 0).all()


def test_sparse_kernels_are_one_per_selector():
    """One kernel per (combination, allowed selector); the selector is the instruction's immediate."""
    plan, arrays, kernels = mc.sparse_plan(INTEGER[:1] + FLOAT[:1], random=4)
    assert [e["selector"] for e in plan] == [0, 0, 1]
    assert plan[0]["instruction"] == "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32"
    assert kernels[2].count(", %e0, 1;") == 1 and kernels[1].count(", %e0, 0;") == 1
    assert set(arrays) == {f"{e['name']}_{o}" for e in plan for o in "abce"}


def _emulated_cupy(plan: list[dict]) -> types.ModuleType:
    """A stand-in for CuPy whose kernels compute integer mma.sp with Python integers on the dense
    A (expand_sparse) -- an oracle independent of the semantics' gather path."""
    by_kernel = {e["kernel"]: e for e in plan}

    def signed(x: int, bits: int, is_signed: bool) -> int:
        return x - (1 << bits) if is_signed and x >> (bits - 1) else x

    class RawModule:
        def __init__(self, path):
            pass

        def get_function(self, name):
            entry = by_kernel[name]
            combo = mc.sparse_combination_named(entry["combination"])

            def launch(grid, block, args):
                a, b, c, e, d, count = args
                dense, _ = expand_sparse(mc.sparse_layout(combo, "a"), a.astype(np.uint64), e.astype(np.uint64), entry["selector"], ordered=combo.ordered)
                B = mc.sparse_layout(combo, "b").to_matrix(b)
                C = mc.sparse_layout(combo, "c").to_matrix(c)
                D = np.zeros(C.shape, dtype=np.uint64)
                ba, sa = mc.INTEGER[combo.a]
                bb, sb = mc.INTEGER[combo.b]
                for t, i, j in np.ndindex(*C.shape):
                    total = sum(signed(int(x), ba, sa) * signed(int(y), bb, sb) for x, y in zip(dense[t, i], B[t, :, j])) + signed(int(C[t, i, j]), 32, True)
                    if combo.qualifier == ".satfinite":
                        total = max(-(1 << 31), min((1 << 31) - 1, total))
                    D[t, i, j] = total & 0xFFFFFFFF
                d[...] = mc.sparse_layout(combo, "d").from_matrix(D)

            return launch

    rt = types.SimpleNamespace(deviceSynchronize=lambda: None, getDeviceProperties=lambda i: {"name": b"emulated", "major": 9, "minor": 0},
                               driverGetVersion=lambda: 0, runtimeGetVersion=lambda: 0)
    module = types.ModuleType("cupy")
    module.asarray, module.zeros, module.asnumpy = np.asarray, np.zeros, np.asarray
    module.RawModule = RawModule
    module.cuda = types.SimpleNamespace(runtime=rt)
    return module


def test_device_run_files_loader_and_verifier_round_trip(tmp_path, monkeypatch):
    """run-sparse (CuPy emulated) -> mma-sp-*.npz + meta-mma-sp.json -> load_sparse regenerates the
    random inputs -> verify_sparse finds the emulated D, every element (0 mismatches); a flipped
    bit of D is found."""
    plan, arrays, _ = mc.sparse_plan(INTEGER, random=6)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "sparse-plan.json").write_text(json.dumps({"combinations": plan, "rejected": {}}))
    np.savez_compressed(bundle / "sparse-probes.npz", **arrays)
    (bundle / "sparse.cubin").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "cupy", _emulated_cupy(plan))
    out = tmp_path / "out"
    md.run_sparse(bundle, out)
    assert sorted(p.name for p in out.iterdir()) == ["meta-mma-sp.json", "mma-sp-0.npz"]
    result = mc.verify_sparse(out)
    assert set(result) == {e["name"] for e in plan}
    for name, r in result.items():
        assert r["mismatches"] == 0, (name, r)
        entry = next(e for e in plan if e["name"] == name)
        assert r["dots"] == (entry["probes"] + entry["random"]) * 128
    with np.load(out / "mma-sp-0.npz") as z:
        changed = {k: z[k] for k in z.files}
    key = f"{plan[0]['name']}_d"
    changed[key] = changed[key].copy()
    changed[key][-1, 5, 2] ^= 1
    np.savez_compressed(out / "mma-sp-0.npz", **changed)
    again = mc.verify_sparse(out)
    assert again[plan[0]["name"]]["mismatches"] == 1


# ---------------------------------------------------------------------------------------------
# The H100 recording
# ---------------------------------------------------------------------------------------------

needs_recording = pytest.mark.skipif(not RECORDED, reason="no mma.sp recording under conformance/data/sm_90")


@pytest.fixture(scope="module")
def recording():
    return {r.name: r for r in mc.load_sparse(DATA)}


def _entries() -> list[str]:
    if not RECORDED:
        return []
    return [e["name"] for e in json.loads((DATA / "meta-mma-sp.json").read_text())["combinations"]]


@needs_recording
def test_recording_covers_every_combination(recording):
    """>= 10^5 recorded dot products per combination (its selectors pooled); ptxas's refusals kept.

    The H100 recording: .f32.f16.f16.f32 (mma.sp and ::ordered_metadata), .f16.f16.f16.f16,
    .f32.bf16.bf16.f32 (m16n8k32) and .f32.tf32.tf32.f32 (m16n8k16): 204,800 each (selectors 0
    and 1); m16n8k64 .f32.e4m3.e4m3.f32 184,192, .f32.e5m2.e4m3.f32 204,800, .s32.s8.s8.s32 and
    .satfinite .s32.u8.s8.s32 128,896 each -- 1,670,784 dot products; every one replays with no
    mismatch (test_replay_everything)."""
    meta = json.loads((DATA / "meta-mma-sp.json").read_text())
    assert meta["compute_capability"] == "9.0"
    dots: dict[str, int] = {}
    for rec in recording.values():
        dots[rec.combination.name] = dots.get(rec.combination.name, 0) + rec.d.shape[0] * 128
    assert set(dots) == {c.name for c in mc.SPARSE_COMBINATIONS if c.instruction() not in meta["rejected"]}
    assert min(dots.values()) >= 10**5, dots


def _placement_measured(row: int, block: int) -> tuple[int, int]:
    """m16n8k64 8-bit, as the H100 reads it: lane ``4*groupID + 2*(block // 8) + half`` (half 1
    for row groupID + 8), bits ``4*(block % 8)`` up -- each lane's word is 8 blocks of one row."""
    return 4 * (row % 8) + 2 * (block // 8) + row // 8, 4 * (block % 8)


def _placement_pairs_of_rows(row: int, block: int) -> tuple[int, int]:
    """The reading that fits the two-lane shapes, extended to four lanes: lane ``4*groupID +
    block // 4``, row groupID in bits 0-15 and row groupID + 8 in bits 16-31."""
    return 4 * (row % 8) + block // 4, 16 * (row // 8) + 4 * (block % 4)


def _integer_oracle(rec, placement) -> np.ndarray:
    """D of an integer mma.sp entry with numpy int64 arithmetic, the metadata decoded by ``placement``."""
    combo = rec.combination
    stored = mc.sparse_layout(combo, "a").to_matrix(rec.a).astype(np.int64)
    B = mc.sparse_layout(combo, "b").to_matrix(rec.b).astype(np.int64)
    C = mc.sparse_layout(combo, "c").to_matrix(rec.c).astype(np.int64)
    ba, sa = mc.INTEGER[combo.a]
    bb, sb = mc.INTEGER[combo.b]
    stored = np.where(sa & (stored >= 1 << (ba - 1)), stored - (1 << ba), stored)
    B = np.where(sb & (B >= 1 << (bb - 1)), B - (1 << bb), B)
    C = np.where(C >= 1 << 31, C - (1 << 32), C)
    e = rec.e.astype(np.int64)
    total = C.copy()
    for row in range(16):
        for block in range(16):
            lane, bit = placement(row, block)
            f = (e[:, lane] >> bit) & 0xF
            for which, index in ((0, f & 3), (1, f >> 2)):
                rows_of_b = B[np.arange(len(e)), 4 * block + index, :]  # [mma, N]
                total[:, row, :] += stored[:, row, 2 * block + which][:, None] * rows_of_b
    if combo.qualifier == ".satfinite":
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return (total & 0xFFFFFFFF).astype(np.uint64)


@needs_recording
@pytest.mark.parametrize("name", [n for n in _entries() if "m16n8k64-s32" in n])
def test_measured_metadata_placement_of_four_lane_shapes(recording, name):
    """The finding of the first H100 run: in m16n8k64 with 8-bit A (all four lanes hold metadata,
    §9.7.14.6.1) each lane's word holds 8 blocks of one row. That placement explains every recorded
    integer D (exact, numpy int64); the two-row-per-lane reading that fits the m16n8k32/m16n8k16
    shapes explains almost none."""
    rec = recording[name]
    D = mc.sparse_layout(rec.combination, "d").to_matrix(rec.d)
    assert np.array_equal(_integer_oracle(rec, _placement_measured), D)
    assert (_integer_oracle(rec, _placement_pairs_of_rows) != D).mean() > 0.9


@pytest.mark.parametrize("element_type", ["s8", "u8", "e4m3", "e5m2"])
def test_semantics_place_four_lane_metadata_as_measured(element_type):
    """matrix_layout's placement for m16n8k64 8-bit is the measured one, every row and block."""
    meta = metadata_layout("m16n8k64", element_type)
    assert all(meta.field(row, block, 0) == _placement_measured(row, block) for row in range(16) for block in range(16))


def _replay(rec, select) -> int:
    combo = rec.combination
    D = mc.sparse_layout(combo, "d").to_matrix(rec.d[select])
    expected = mc.sparse_expected(rec, select=select)
    assert expected.dtype != object, f"{rec.name}: no sm_90 datapath for mma.sp"
    bad = np.argwhere(expected != D)
    return len(bad)


@needs_recording
@pytest.mark.parametrize("name", _entries())
def test_replay_probes_and_first_random(recording, name):
    """Designed probes and the first 64 random mma of every entry: the sm_90 profile reproduces
    every recorded D bit for bit."""
    rec = recording[name]
    assert _replay(rec, slice(0, rec.probes + 64)) == 0


@needs_recording
@pytest.mark.heavy
@pytest.mark.parametrize("name", _entries())
def test_replay_everything(recording, name):
    """Every recorded mma of every entry (PTXSPEC_HEAVY=all)."""
    rec = recording[name]
    assert _replay(rec, slice(None)) == 0


# ---------------------------------------------------------------------------------------------
# The semantic function on mma.sp fragments
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
def test_sparse_f16_m16n8k32_sums_the_selected_products(profile):
    """mma.sp.m16n8k32 .f16 (B's fragment is the mma.sp table of §9.7.14.6.2): A's stored
    elements 1.0, B = 1.0 on the rows the metadata selects and +inf elsewhere, C = 0.5: every
    element of D may be 16.5 (exact, representable); the infinities meet only A's zeros."""
    from ptxspec.semantics.mma import evaluate_mma
    from ptxspec.semantics.results import contains

    combo = mc.SPARSE_COMBINATIONS[0]
    rng = np.random.default_rng(5)
    for selector in combo.selectors:
        e = md.random_metadata(combo.fields, 1, int(rng.integers(1 << 30)))[0]
        la, lb, lc = (mc.sparse_layout(combo, o) for o in "abc")
        a = la.from_matrix(np.full((16, 16), 0x3C00, dtype=np.uint64))
        # Every row must select the same rows of B (one B for all rows): give each row row 0's fields.
        e_same = e.copy()
        meta = metadata_layout(combo.shape, combo.a)
        for row in range(16):
            for block in range(meta.blocks):
                lane0, bit0 = meta.field(0, block, selector)
                lane, bit = meta.field(row, block, selector)
                f = (int(e[lane0]) >> bit0) & 0xF
                e_same[lane] = (int(e_same[lane]) & ~(0xF << bit)) | (f << bit)
        cols0 = _manual_columns(combo, e_same[None], selector)[0]
        assert (cols0 == cols0[0]).all()
        B = np.full((32, 8), 0x7C00, dtype=np.uint64)  # +inf
        B[cols0[0], :] = 0x3C00
        b = lb.from_matrix(B)
        c = lc.from_matrix(np.full((16, 8), 0x3F000000, dtype=np.uint64))
        sources = [tuple(int(x) for x in r[:, j]) for r in (a, b, c) for j in range(r.shape[1])] + [tuple(int(x) for x in e_same), selector]
        out = evaluate_mma(combo.instruction(), sources, profile)
        for reg in out:
            for lane_value in reg.lanes:
                assert contains(lane_value, 0x41840000) if not isinstance(lane_value, int) else lane_value == 0x41840000


@needs_recording
@pytest.mark.parametrize("name", [n for n in _entries() if "-s32-" not in n])
def test_recorded_probes_lie_in_the_spec_level_sets(recording, name):
    """The manual's guarantee holds on silicon: each recorded float result of 8 designed probe mma
    (strided over the families) is in the spec-level set of its K/2 products (spec_dot)."""
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    rec = recording[name]
    combo = rec.combination
    select = (np.arange(8) * rec.probes) // 8
    A, G, C, D = mc.sparse_matrices(rec, select)
    for t, i, j in np.ndindex(*D.shape):
        allowed = spec_dot(combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in G[t, i, :, j]], int(C[t, i, j]))
        assert contains(allowed, int(D[t, i, j])), (name, int(select[t]), i, j, hex(int(D[t, i, j])))


@pytest.mark.parametrize("text", [
    "mma.sp.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.s4.s32",
    "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32",
    "mma.sp.sync.aligned.m16n8k64.row.col.s32.u8.s8.s32",
])
def test_integer_sparse_mma_equals_dense_numpy_product(text):
    """mma.sp of an A that follows the sparsity pattern equals numpy's product of the dense A (the
    4-bit forms once refused every input: their K/2 stored elements were numbered in 4-bit fields)."""
    from ptxspec.semantics import mma as mma_module
    from ptxspec.semantics.matrix_layout import compress_sparse, fragment_layout
    from ptxspec.semantics.results import profile_named
    from ptxspec.spec.matrix import parse

    form = parse(text)
    shape, atype, btype = form["shape"], form["atype"], form["btype"]
    k = int(shape.split("k")[1])
    bits = 4 if atype in ("s4", "u4") else 8
    rng = np.random.default_rng(k)
    chunk = 2 if bits == 4 else 1  # 4:8 pair-wise (4-bit) or 2:4 sparsity: two chunks of four kept
    dense = np.zeros((16, k), dtype=np.uint64)
    for row in range(16):
        for block in range(k // (4 * chunk)):
            for c in rng.choice(4, 2, replace=False):
                start = (block * 4 + c) * chunk
                dense[row, start:start + chunk] = rng.integers(0, 1 << bits, chunk, dtype=np.uint64)
    b = rng.integers(0, 1 << bits, (k, 8), dtype=np.uint64)
    c = rng.integers(-(1 << 20), 1 << 20, (16, 8)).astype(np.int64)
    la = fragment_layout(shape, "a", atype, sparse=True)
    a_regs, e = compress_sparse(la, dense, 0)
    layouts = mma_module._layouts(form)
    b_regs = layouts["b"].from_matrix(b)
    c_regs = layouts["c"].from_matrix(c.astype(np.uint64) & np.uint64(0xFFFFFFFF))
    d_regs = mma_module.mma_fragments(form, a_regs, b_regs, c_regs, profile=profile_named("sm_90"), metadata=e, selector=0)
    got = layouts["d"].to_matrix(np.asarray(d_regs, dtype=np.uint64)).astype(np.int64)
    got = np.where(got >= 1 << 31, got - (1 << 32), got)

    def signed(x, t):
        x = x.astype(np.int64)
        return np.where((x >= 1 << (bits - 1)) & t.startswith("s"), x - (1 << bits), x)

    want = signed(dense, atype) @ signed(b, btype) + c
    if form.get("satfinite") is not None:
        want = np.clip(want, -(1 << 31), (1 << 31) - 1)
    assert np.array_equal(got, want)
