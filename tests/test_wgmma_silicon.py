"""The wgmma silicon campaign (conformance/silicon/wgmma_campaign.py, wgmma_device.py) and its
replay against the recording conformance/data/sm_90/{wgmma-*.npz, meta-wgmma.json}.

Without the recording only the campaign's own machinery is tested: the counter-based inputs, the
descriptors of every planned instance (legal, inside the image, no two elements on one byte), the
self-check's expected values (numpy's integer A @ B + C against our layout model), the kernels
(ptxas). With the recording, every recorded instance is replayed through our layout model and
numerics: integers exactly, floating point through the sm_90 datapath of
semantics/wgmma_measured.py; zero mismatches.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from ptxspec.conformance.silicon import wgmma_campaign as wc
from ptxspec.conformance.silicon import wgmma_device as wd
from ptxspec.semantics import mma, wgmma_layout as wl, wgmma_measured
from ptxspec.semantics.matrix_layout import field_defined
from ptxspec.semantics.mma import Datapath
from ptxspec.semantics.results import profile_named


def _entry(combo: wc.Combination, n: int, random: int = 2) -> dict:
    layouts = wc.layout_plan(combo, n, random)
    descs, region = wc.regions(combo, n, layouts)
    return wc.kernel_entry(combo, n, "k", 0, random, layouts, descs, region)


# ---------------------------------------------------------------------------------------------
# The datapath table
# ---------------------------------------------------------------------------------------------


def test_datapath_interface():
    assert isinstance(wgmma_measured.datapath("f16", "f16", "f32", "f32", "m64n256k16", False), Datapath)
    assert wgmma_measured.datapath("e4m3", "e4m3", "f32", "f32", "m64n256k64", True) is wgmma_measured.SM90_WGMMA_FP8_F32
    assert wgmma_measured.datapath("s8", "s8", "s32", "s32", "m64n256k32", False) is None
    assert wgmma_measured.datapath("b1", "b1", "s32", "s32", "m64n256k256", False) is None
    # not recorded: the spec-level sets
    assert wgmma_measured.datapath("e5m2", "e5m2", "f32", "f32", "m64n256k64", True) is None
    assert wgmma_measured.datapath("f16", "f16", "f16", "f16", "m64n256k32", True) is None


def test_every_measured_combination_was_recorded():
    """The table holds nothing the campaign did not record."""
    recorded = {(c.atype, c.btype, c.dtype, c.dtype, c.sparse) for c in wc.COMBINATIONS}
    assert set(wgmma_measured.MEASURED) <= recorded


def test_fp8_datapath_keeps_13_mantissa_bits():
    """Hand-computed: 1 + 2^-13 + 2^-14 (C = 1, products 2^-13 and 2^-14 of e4m3 inputs) keeps 2^-13
    (13 mantissa bits) and drops 2^-14 (cut 13 bits below the largest exponent, 0)."""
    from fractions import Fraction

    from ptxspec.conformance.silicon.mma_campaign import encode

    a = [encode("e4m3", Fraction(1, 2**7)), encode("e4m3", Fraction(1, 2**7))] + [0] * 30
    b = [encode("e4m3", Fraction(1, 2**6)), encode("e4m3", Fraction(1, 2**7))] + [0] * 30
    one = 0x3F800000
    d = mma.datapath_matrix(wgmma_measured.SM90_WGMMA_FP8_F32, "e4m3", "e4m3", "f32", "f32",
                            np.array([[a]], dtype=np.uint64), np.array([b], dtype=np.uint64).T[None], np.array([[[one]]], dtype=np.uint64))
    assert int(d[0, 0, 0]) == one + (1 << 10)  # 1 + 2^-13: bit 23 - 13 = 10


# ---------------------------------------------------------------------------------------------
# The campaign's inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("combo", [wc.Combination("f16", "f16", "f32", a_registers=True), wc.Combination("e4m3", "e5m2", "f16"),
                                   wc.Combination("tf32", "tf32", "f32", sparse=True), wc.Combination("s8", "s8", "s32", sparse=True)])
def test_random_instances_regenerate(combo):
    entry = _entry(combo, 64, 3)
    first, again, other = wd.random_instance(entry, 1), wd.random_instance(entry, 1), wd.random_instance(entry, 2)
    for k in first:
        assert np.array_equal(first[k], again[k])
    assert not np.array_equal(first["image"], other["image"])
    if combo.sparse:  # every 4-bit field of every thread is a defined metadata value
        meta = first["meta"].astype(np.uint64)
        fields = [(int(w) >> (4 * j)) & 15 for w in meta for j in range(8)]
        assert all(field_defined(f, combo.atype, ordered=False) for f in fields)
    # the regions hold elements of the types (tf32: low 13 bits of class "bits" are random)
    off, size = entry["b_region"]
    assert np.any(first["image"][off : off + size])


def test_scale_d_false_every_fifth():
    entry = _entry(wc.Combination("f16", "f16", "f32"), 8, 6)
    assert [int(wd.random_instance(entry, r)["scale"]) for r in range(6)] == [1, 1, 1, 1, 0, 1]


@pytest.mark.parametrize("index", range(len(wc.COMBINATIONS)))
def test_planned_layouts_are_legal(index):
    """Every planned descriptor places its matrix inside the image, on its own bytes, and our
    model reads back what it wrote."""
    combo = wc.COMBINATIONS[index]
    rng = np.random.default_rng(index)
    for n in combo.ns(index):
        count = 12
        layouts = wc.layout_plan(combo, n, count)
        descs, region = wc.regions(combo, n, layouts)
        stored_k = combo.k // 2 if combo.sparse else combo.k
        bits_a, bits_b = wc.type_bits(combo.atype), wc.type_bits(combo.btype)
        for (da, db), lay in zip(descs, layouts):
            image = np.zeros(region["image_bytes"], dtype=np.uint8)
            B = rng.integers(0, 1 << bits_b, (combo.k, n), dtype=np.uint64)
            image = wl.write_matrix(image, db, B, combo.btype, lay["b"]["major"], operand="b")
            assert np.array_equal(wl.read_matrix(image, db, combo.k, n, combo.btype, lay["b"]["major"], operand="b"), B)
            off, size = region["b_region"]
            assert not np.any(image[:off]) and not np.any(image[off + size :])
            if da is not None:
                A = rng.integers(0, 1 << bits_a, (64, stored_k), dtype=np.uint64)
                image = wl.write_matrix(image, da, A, combo.atype, lay["a"]["major"], operand="a")
                assert np.array_equal(wl.read_matrix(image, da, 64, stored_k, combo.atype, lay["a"]["major"], operand="a"), A)
                assert np.array_equal(wl.read_matrix(image, db, combo.k, n, combo.btype, lay["b"]["major"], operand="b"), B)


def test_layouts_cover_every_swizzle_and_major():
    seen = set()
    for combo, n, probe, random in wc.plan_kernels():
        for lay in wc.layout_plan(combo, n, random + probe * wc.probe_instances(combo)):
            for op in ("a", "b"):
                if op == "a" and combo.a_registers:
                    continue
                seen.add((op, lay[op]["major"], lay[op]["swizzle"]))
    for op in ("a", "b"):
        for major in ("K", "MN"):
            for sw in wc.SWIZZLES:
                assert (op, major, sw) in seen


def test_selfcheck_expectation_matches_model():
    """The device's self-check compares D with numpy's A @ B + C; our model of the same image must
    give that too (else the self-check would test something else than the campaign)."""
    for entry, arrays, _ in wc.selfcheck_kernels():
        name = entry["name"]
        x = wd.kernel_inputs(entry, arrays)
        A, B, Cm = (arrays[f"{name}_{k}"].astype(np.int64) for k in "ABC")
        rec = wc.Recording(entry, x["image"], x["desc"], x["a"], x["d"], x["meta"], x["scale"], x["d"], np.zeros(1))
        ma, mb, mc, _ = wc.matrices(rec, 0)
        assert np.array_equal(ma, A & 0xFF) and np.array_equal(mb, B & 0xFF) and np.array_equal(mc, Cm & 0xFFFFFFFF)
        d = wc.model_d(rec, 0)
        expect = (A @ B + Cm) & 0xFFFFFFFF
        assert np.array_equal(d.astype(np.int64), expect)
        rows, cols = arrays[f"{name}_rows"], arrays[f"{name}_cols"]
        regs = wl.fragment_layout("m64n64k32", "d", "s32").from_matrix(expect.astype(np.uint64))
        assert np.array_equal(regs.astype(np.int64), expect[rows, cols])


def test_sparse_probe_pattern_is_2_4():
    for combo in (wc.Combination("f16", "f16", "f32", sparse=True), wc.Combination("s8", "s8", "s32", sparse=True), wc.Combination("tf32", "tf32", "f32", sparse=True)):
        kept = wc._kept_positions(combo)
        assert len(kept) == combo.k // 2
        dense = np.zeros((64, combo.k), dtype=np.uint64)
        dense[:, kept] = 1
        stored, meta = wl.compress_sparse(f"m64n32k{combo.k}", combo.atype, dense, 0)
        back, undefined = wl.expand_sparse(f"m64n32k{combo.k}", combo.atype, stored, meta, 0)
        assert np.array_equal(back, dense) and not np.any(undefined)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("combo", [wc.Combination("f16", "f16", "f32", trans_a=1, trans_b=1), wc.Combination("e4m3", "e4m3", "f32", sparse=True),
                                   wc.Combination("b1", "b1", "s32"), wc.Combination("f16", "f16", "f16", a_registers=True, trans_b=1)])
def test_kernels_assemble(combo):
    from ptxspec.conformance.silicon.record import assemble

    entry = _entry(combo, 24 if combo.atype != "b1" else 16)
    ok, msg, _ = assemble(wc.HEADER + wc.kernel(combo, entry["n"], "k", entry["image_bytes"]))
    assert ok, msg


# ---------------------------------------------------------------------------------------------
# Replay of the recording
# ---------------------------------------------------------------------------------------------

HAVE_DATA = (wc.DATA / "meta-wgmma.json").exists()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="no wgmma recording in conformance/data/sm_90")


@pytest.fixture(scope="module")
def recordings():
    return {r.name: r for r in wc.load()}


def _replay(rec, instances) -> int:
    bad = 0
    for i in instances:
        _, _, _, D = wc.matrices(rec, i)
        bad += int(np.count_nonzero(wc.model_d(rec, i) != D))
    return bad


@needs_data
def test_recording_shared_memory_aligned(recordings):
    for rec in recordings.values():
        assert not np.any(rec.base % 1024), rec.name


@needs_data
def test_integer_replay_exact_first_instance(recordings):
    """Integers are exact: a mismatch is a layout bug (ours or the kernel's)."""
    for rec in recordings.values():
        if rec.entry["dtype"] == "s32":
            assert _replay(rec, [0]) == 0, rec.name


@needs_data
def test_float_replay_first_instance(recordings):
    for rec in recordings.values():
        e = rec.entry
        if e["dtype"] != "s32" and wgmma_measured.datapath(e["atype"], e["btype"], e["dtype"], e["dtype"], None, e["sparse"]) is not None:
            assert _replay(rec, [0]) == 0, rec.name


@needs_data
@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_replay_every_instance(recordings, chunk):
    names = sorted(recordings)[chunk::4]
    for name in names:
        rec = recordings[name]
        e = rec.entry
        if e["dtype"] != "s32" and wgmma_measured.datapath(e["atype"], e["btype"], e["dtype"], e["dtype"], None, e["sparse"]) is None:
            continue
        assert _replay(rec, range(rec.count)) == 0, name


@needs_data
def test_main_combinations_record_enough_dot_products(recordings):
    per = {}
    for rec in recordings.values():
        per[rec.entry["combination"]] = per.get(rec.entry["combination"], 0) + rec.dots
    for combo in wc.COMBINATIONS:
        assert per[combo.name] >= (100_000 if combo.main else 32_768), combo.name


@needs_data
def test_spec_level_sets_hold_except_fp8(recordings):
    """The manual's guarantee (mma.spec_dot: accumulation "with at least single precision") holds
    for the f16/bf16/tf32 recordings and is broken by the fp8 ones (13-bit accumulation)."""
    for name in ("f32-f16-f16-n32", "f16-f16-f16-n32", "f32-bf16-bf16-n32", "f32-tf32-tf32-n32"):
        checked, outside = wc.spec_check(recordings[name], instances=range(4))
        assert checked == 256 and outside == 0, name
    checked, outside = wc.spec_check(recordings["f32-e4m3-e4m3-n256"], instances=[0], per_instance=64)
    assert outside > 0


@needs_data
def test_replay_through_wgmma_semantics(recordings):
    """The semantic function (semantics.wgmma.wgmma_mma_async, profile sm_90) on a recorded instance
    of every small kernel with a determined result gives the recorded registers."""
    from ptxspec.semantics.wgmma import wgmma_mma_async

    for rec in recordings.values():
        e = rec.entry
        if e["n"] > 64:
            continue
        if e["dtype"] != "s32" and wgmma_measured.datapath(e["atype"], e["btype"], e["dtype"], e["dtype"], None, e["sparse"]) is None:
            continue
        i = 0
        a = rec.a[i] if e["a_registers"] else int(rec.desc[i, 0])
        out = wgmma_mma_async(wc.form_of(rec), rec.image[i], a, int(rec.desc[i, 1]), rec.c[i], scale_d=bool(rec.scale[i]),
                              imm_scale_a=e["scale_a"], imm_scale_b=e["scale_b"], imm_trans_a=e["trans_a"], imm_trans_b=e["trans_b"], sp_meta=rec.meta[i] if e["sparse"] else None,
                              sp_sel=e["sp_sel"], profile=profile_named("sm_90"))
        assert np.array_equal(out.registers.astype(np.uint32), rec.d[i]), rec.name


@needs_data
def test_h100_and_h200_agree():
    """The campaign ran on an H200 (the recording) and, with the same bundle, on an H100, whose run
    the repository keeps as SHA-256 digests (``wgmma-h100-digests.json``, written by
    :func:`wgmma_campaign.output_digests` from the H100's files): every kernel's outputs are the
    same bits on both chips."""
    import json

    h100 = json.loads((wc.DATA / "wgmma-h100-digests.json").read_text())
    h200 = wc.output_digests(wc.DATA)
    assert "H100" in h100["gpu"] and "H200" in h200["gpu"]
    assert len(h100["kernels"]) >= 90
    differing = [k for k, sha in h100["kernels"].items() if h200["kernels"].get(k) != sha]
    assert not differing and set(h100["kernels"]) == set(h200["kernels"]), f"H100 and H200 differ on {differing[:10]}"
