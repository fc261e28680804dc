"""The wgmma silicon campaign (conformance/silicon/wgmma_campaign.py, wgmma_device.py) and its
replay against the recording conformance/data/sm_90/{wgmma-*.npz, meta-wgmma.json}.

Without the recording only the campaign's own machinery is tested: the counter-based inputs, the
descriptors of every planned instance (legal, inside the image, no two elements on one byte), the
self-check's expected values (numpy's integer A @ B + C against our layout model), the kernels
(ptxas). With the recording, every recorded instance is replayed through our layout model and
numerics: integers exactly, floating point through the sm_90 datapath of
profiles/sm_90/wgmma.py; zero mismatches.
"""

from __future__ import annotations

import shutil

import emulated_gpu
import numpy as np
import pytest

from ptxspec.conformance.silicon import wgmma_campaign as wc
from ptxspec.conformance.silicon import wgmma_device as wd
from ptxspec.profiles.sm_90 import SM_90
from ptxspec.profiles.sm_90 import wgmma as sm90_wgmma
from ptxspec.semantics import mma, wgmma_layout as wl
from ptxspec.semantics.matrix_layout import field_defined
from ptxspec.semantics.mma import Datapath
from ptxspec.semantics.results import profile_named
from ptxspec.semantics.wgmma import datapath_for


def _entry(combo: wc.Combination, n: int, random: int = 2) -> dict:
    layouts = wc.layout_plan(combo, n, random)
    descs, region = wc.regions(combo, n, layouts)
    return wc.kernel_entry(combo, n, "k", 0, random, layouts, descs, region)


# ---------------------------------------------------------------------------------------------
# The datapath table
# ---------------------------------------------------------------------------------------------


def test_datapath_interface():
    assert isinstance(datapath_for(SM_90, "f16", "f16", "f32", "f32", sparse=False), Datapath)
    assert datapath_for(SM_90, "e4m3", "e4m3", "f32", "f32", sparse=True) is sm90_wgmma.FP8_F32
    assert datapath_for(SM_90, "s8", "s8", "s32", "s32", sparse=False) is None
    assert datapath_for(SM_90, "b1", "b1", "s32", "s32", sparse=False) is None
    # round 2: every remaining floating-point combination
    assert datapath_for(SM_90, "e5m2", "e5m2", "f32", "f32", sparse=True) is sm90_wgmma.FP8_F32
    assert datapath_for(SM_90, "e4m3", "e5m2", "f16", "f16", sparse=True) is sm90_wgmma.FP8_F16
    assert datapath_for(SM_90, "f16", "f16", "f16", "f16", sparse=True) is sm90_wgmma.FUSED_F16
    # not a legal combination: nothing measured
    assert datapath_for(SM_90, "bf16", "bf16", "f16", "f16", sparse=False) is None


def test_every_measured_combination_was_recorded():
    """The table holds nothing the campaign did not record."""
    recorded = {(c.atype, c.btype, c.dtype, c.dtype, c.sparse) for c in wc.COMBINATIONS + wc.MORE_COMBINATIONS}
    assert {(k.atype, k.btype, k.ctype, k.dtype, k.sparse) for k in SM_90.wgmma_datapaths} <= recorded


def test_fp8_datapath_keeps_13_mantissa_bits():
    """Hand-computed: 1 + 2^-13 + 2^-14 (C = 1, products 2^-13 and 2^-14 of e4m3 inputs) keeps 2^-13
    (13 mantissa bits) and drops 2^-14 (cut 13 bits below the largest exponent, 0)."""
    from fractions import Fraction

    from ptxspec.conformance.silicon.mma_campaign import encode

    a = [encode("e4m3", Fraction(1, 2**7)), encode("e4m3", Fraction(1, 2**7))] + [0] * 30
    b = [encode("e4m3", Fraction(1, 2**6)), encode("e4m3", Fraction(1, 2**7))] + [0] * 30
    one = 0x3F800000
    d = mma.datapath_matrix(
        sm90_wgmma.FP8_F32,
        "e4m3",
        "e4m3",
        "f32",
        "f32",
        np.array([[a]], dtype=np.uint64),
        np.array([b], dtype=np.uint64).T[None],
        np.array([[[one]]], dtype=np.uint64),
    )
    assert int(d[0, 0, 0]) == one + (1 << 10)  # 1 + 2^-13: bit 23 - 13 = 10


# ---------------------------------------------------------------------------------------------
# The campaign's inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "combo",
    [
        wc.Combination("f16", "f16", "f32", a_registers=True),
        wc.Combination("e4m3", "e5m2", "f16"),
        wc.Combination("tf32", "tf32", "f32", sparse=True),
        wc.Combination("s8", "s8", "s32", sparse=True),
    ],
)
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
    for combo in (
        wc.Combination("f16", "f16", "f32", sparse=True),
        wc.Combination("s8", "s8", "s32", sparse=True),
        wc.Combination("tf32", "tf32", "f32", sparse=True),
    ):
        kept = wc._kept_positions(combo)
        assert len(kept) == combo.k // 2
        dense = np.zeros((64, combo.k), dtype=np.uint64)
        dense[:, kept] = 1
        stored, meta = wl.compress_sparse(f"m64n32k{combo.k}", combo.atype, dense, 0)
        back, undefined = wl.expand_sparse(f"m64n32k{combo.k}", combo.atype, stored, meta, 0)
        assert np.array_equal(back, dense) and not np.any(undefined)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize(
    "combo",
    [
        wc.Combination("f16", "f16", "f32", trans_a=1, trans_b=1),
        wc.Combination("e4m3", "e4m3", "f32", sparse=True),
        wc.Combination("b1", "b1", "s32"),
        wc.Combination("f16", "f16", "f16", a_registers=True, trans_b=1),
    ],
)
def test_kernels_assemble(combo):
    from ptxspec.conformance.silicon.campaign import assemble

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
        if e["dtype"] != "s32" and datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"]) is not None:
            assert _replay(rec, [0]) == 0, rec.name


@needs_data
@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_replay_every_instance(recordings, chunk):
    names = sorted(recordings)[chunk::4]
    for name in names:
        rec = recordings[name]
        e = rec.entry
        if e["dtype"] != "s32" and datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"]) is None:
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
        checked, outside = wc.outside_spec(recordings[name], instances=range(4))
        assert checked == 256 and outside == 0, name
    checked, outside = wc.outside_spec(recordings["f32-e4m3-e4m3-n256"], instances=[0], per_instance=64)
    assert outside > 0


@needs_data
def test_replay_through_wgmma_semantics(recordings):
    """The semantic function (semantics.wgmma.wgmma_mma_async, profile sm_90) on a recorded instance
    of every small kernel with a determined result gives the recorded registers."""

    for rec in recordings.values():
        e = rec.entry
        if e["n"] > 64:
            continue
        if e["dtype"] != "s32" and datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"]) is None:
            continue
        i = 0
        out = wc.replay(rec, i, profile_named("sm_90"))
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


# ---------------------------------------------------------------------------------------------
# Round 2: every remaining sm_90a combination (part "more": wgmma-more-*.npz, meta-wgmma-more.json)
# ---------------------------------------------------------------------------------------------


_splitmix64 = emulated_gpu.splitmix64  # the shared Python-integer oracle


def test_more_names_are_new_and_unique():
    """Round 2 records under names round 1 does not use (the seeds come from the names)."""
    names = [c.name for c in wc.COMBINATIONS + wc.MORE_COMBINATIONS]
    assert len(names) == len(set(names))
    kernels = [f"{c.name}-n{n}" for c, n, _, _ in wc.plan_kernels("") + wc.plan_kernels("more")]
    assert len(kernels) == len(set(kernels))


def test_more_covers_what_the_brief_lists():
    more = {(c.atype, c.btype, c.dtype, c.sparse, c.sp_sel, c.a_registers, c.satfinite) for c in wc.MORE_COMBINATIONS}
    for a in ("s8", "u8"):
        for b in ("s8", "u8"):
            assert (a, b, "s32", False, 0, False, True) in more and (a, b, "s32", True, 0, False, True) in more
    for a in ("e4m3", "e5m2"):
        for b in ("e4m3", "e5m2"):
            assert (a, b, "f16", True, 0, False, False) in more and (a, b, "f32", False, 0, True, False) in more
    assert {("bf16", 1), ("tf32", 1), ("f16", 1)} <= {(c.atype, c.sp_sel) for c in wc.MORE_COMBINATIONS if c.sparse}
    assert sum(c.scale_probe for c in wc.MORE_COMBINATIONS) == 3


def test_more_plan_reaches_the_dot_products():
    per: dict[str, int] = {}
    for combo, n, probe, random in wc.plan_kernels("more"):
        instances = (wc.probe_instances(combo) if probe else 0) + random
        per[combo.name] = per.get(combo.name, 0) + instances * 64 * n
    for combo in wc.MORE_COMBINATIONS:
        if combo.main:
            assert per[combo.name] >= wc.DOTS, combo.name


@pytest.mark.parametrize("registers", [4, 8, 32, 128])
def test_instance_digests_against_python_integers(registers):
    rng = np.random.default_rng(registers)
    d = rng.integers(0, 1 << 32, (3, 128, registers), dtype=np.uint64).astype(np.uint32)
    bits = (128 * registers).bit_length() - 1
    got = wd.instance_digests(d, bits)
    for i in range(3):
        flat = [int(x) for x in d[i].reshape(-1)]
        expect = sum(r * (_splitmix64(j) | 1) for j, r in enumerate(flat)) % (1 << 64)
        assert int(got[i]) == expect


def test_split_outputs_keeps_probes_and_first_random():
    kern = {"name": "k", "probes": 2, "full_random": 1, "random": 3, "digest_bits": 9}
    d = np.arange(5 * 128 * 4, dtype=np.uint32).reshape(5, 128, 4)
    out = wd.split_outputs(kern, d)
    assert np.array_equal(out["k_out"], d[:3])
    assert np.array_equal(out["k_digest"], wd.instance_digests(d[3:], 9))
    assert set(wd.split_outputs({"name": "r1", "probes": 0, "random": 5}, d)) == {"r1_out"}  # round 1: all in full
    with pytest.raises(ValueError):
        wd.instance_digests(d[:, :, :3], 9)


def _digest_recording(combo, n, random, stored):
    """A recording of ``combo`` whose D is OUR model (stored in full for the first ``stored``
    instances, digests for the rest)."""
    entry = _entry(combo, n, random)
    entry["full_random"], entry["digest_bits"] = stored, wc.digest_bits(entry)
    x = wd.kernel_inputs(entry, {})
    rec = wc.Recording(entry, x["image"], x["desc"], x["a"], x["d"], x["meta"], x["scale"], x["d"][:stored], np.zeros(random))
    regs = np.stack([wc.model_registers(rec, i) for i in range(random)])
    return wc.Recording(
        entry,
        x["image"],
        x["desc"],
        x["a"],
        x["d"],
        x["meta"],
        x["scale"],
        regs[:stored],
        np.zeros(random),
        wd.instance_digests(regs[stored:], entry["digest_bits"]),
    )


def test_digest_replay_names_the_wrong_block():
    """A digest instance that differs in one bit of one register is found, by instance number."""
    rec = _digest_recording(wc.Combination("u8", "s8", "s32", sparse=True, satfinite=True), 64, 4, 1)
    assert rec.stored == 1 and len(rec.digests) == 3 and wc.digest_mismatches(rec) == []
    assert wc.diagnose(rec) == []
    spoiled = rec.digests.copy()
    spoiled[1] += np.uint64(1 << 7)  # as if one register of instance 2 had bit 7 flipped
    bad = attrs_evolve(rec, digests=spoiled)
    assert wc.digest_mismatches(bad) == [2]
    [report] = wc.diagnose(bad)
    assert report["instance"] == 2 and report["digest_block"] == 1


def attrs_evolve(rec, **kw):
    """A copy of the (frozen) recording with some fields replaced."""
    import attrs

    return attrs.evolve(rec, **kw)


def test_scale_d_probe_design():
    """The scale-d probe's matrices, read back through our layout model, are what its docstring
    says: zero sums of -0 products, of +0 products, tiny sums of either sign; scale-d 0, 1, 1."""
    from ptxspec.semantics.numerics import decode

    for combo in [c for c in wc.MORE_COMBINATIONS if c.scale_probe]:
        entry, arrays, _ = wc._make(combo, wc.PROBE_N, 1, 0, "k")
        x = wd.kernel_inputs(entry, arrays)
        rec = wc.Recording(entry, x["image"], x["desc"], x["a"], x["d"], x["meta"], x["scale"], x["d"], np.zeros(3))
        assert rec.scale.tolist() == [0, 1, 1]
        fa = wc.FORMATS[combo.atype]
        A, B, Cm, _ = wc.matrices(rec, 0)
        assert np.all(A[:16] == fa.sign_mask) and np.all(A[16:32] == 0)
        for r in (32, 48):
            nonzero = A[r][A[r] & np.uint64(~fa.sign_mask & 0xFF_FFFF) != 0]
            assert len(nonzero) == 1 and int(nonzero[0]) & ~fa.sign_mask == 1
        fb = wc.FORMATS[combo.btype]
        positive = [decode(fb, int(b)) for b in B[:, :16].reshape(-1)]
        negative = [decode(fb, int(b)) for b in B[:, 24:].reshape(-1)]
        assert all(v.sign == 0 and not v.is_zero for v in positive) and all(v.sign == 1 and not v.is_zero for v in negative)
        assert np.all(B[:, 16:24] == 0)
        _, _, Cp, _ = wc.matrices(rec, 1)
        _, _, Cn, _ = wc.matrices(rec, 2)
        assert np.all(Cp == 0) and np.all(Cn == wc.FORMATS[combo.dtype].sign_mask)
        kinds = {type(decode(wc.FORMATS[combo.dtype], int(c))).__name__ for c in Cm.reshape(-1)}
        assert {"NaN", "Infinity"} <= kinds  # C that must not matter when scale-d is false


@pytest.mark.parametrize("index", range(len(wc.MORE_COMBINATIONS)))
def test_more_planned_layouts_are_legal(index):
    combo = wc.MORE_COMBINATIONS[index]
    rng = np.random.default_rng(1000 + index)
    for _combo, n, _, _ in [k for k in wc.plan_kernels("more") if k[0] == combo]:
        layouts = wc.layout_plan(combo, n, 4)
        descs, region = wc.regions(combo, n, layouts)
        stored_k = combo.k // 2 if combo.sparse else combo.k
        for (da, db), lay in zip(descs, layouts):
            image = np.zeros(region["image_bytes"], dtype=np.uint8)
            B = rng.integers(0, 1 << wc.type_bits(combo.btype), (combo.k, n), dtype=np.uint64)
            image = wl.write_matrix(image, db, B, combo.btype, lay["b"]["major"], operand="b")
            if da is not None:
                A = rng.integers(0, 1 << wc.type_bits(combo.atype), (64, stored_k), dtype=np.uint64)
                image = wl.write_matrix(image, da, A, combo.atype, lay["a"]["major"], operand="a")
                assert np.array_equal(wl.read_matrix(image, da, 64, stored_k, combo.atype, lay["a"]["major"], operand="a"), A)
            assert np.array_equal(wl.read_matrix(image, db, combo.k, n, combo.btype, lay["b"]["major"], operand="b"), B)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize(
    "combo",
    [
        wc.Combination("e5m2", "e4m3", "f32", a_registers=True),
        wc.Combination("u8", "u8", "s32", sparse=True, satfinite=True),
        wc.Combination("tf32", "tf32", "f32", sparse=True, a_registers=True, sp_sel=1),
        wc.Combination("bf16", "bf16", "f32", scale_a=-1, scale_b=-1),
    ],
)
def test_more_kernels_assemble(combo):
    from ptxspec.conformance.silicon.campaign import assemble

    entry = _entry(combo, 64)
    ok, msg, _ = assemble(wc.HEADER + wc.kernel(combo, 64, "k", entry["image_bytes"]))
    assert ok, msg


def test_more_files_round_trip(tmp_path):
    """What the device writes for round 2 (file names, _out/_digest arrays, meta) loads back and
    replays; round 1's loader does not pick round 2's files up."""
    import json

    combos = [wc.Combination("u8", "u8", "s32", satfinite=True), wc.Combination("s8", "u8", "s32", sparse=True)]
    kernels, arrays = [], {}
    for j, (combo, n, probe, random) in enumerate([(combos[0], 64, 0, 2), (combos[1], 32, 1, 0), (combos[1], 128, 0, 2)]):
        entry, stored, _ = wc._make(combo, n, probe, random, f"wm{j}")
        entry["full_random"] = entry["random"] if n <= wc.FULL_N else 0
        if entry["random"] > entry["full_random"]:
            entry["digest_bits"] = wc.digest_bits(entry)
        entry["file"] = 0
        x = wd.kernel_inputs(entry, stored)
        rec = wc.Recording(entry, x["image"], x["desc"], x["a"], x["d"], x["meta"], x["scale"], x["d"], np.zeros(len(x["scale"])))
        d = np.stack([wc.model_registers(rec, i) for i in range(rec.count)])
        arrays.update(wd.split_outputs(entry, d))
        arrays[f"{entry['name']}_base"] = np.zeros(rec.count, dtype=np.uint32)
        arrays.update(stored)
        kernels.append(entry)
    np.savez_compressed(tmp_path / "wgmma-more-0.npz", **arrays)
    (tmp_path / "meta-wgmma-more.json").write_text(json.dumps({"kernels": kernels}))
    recs = wc.load(tmp_path, "more")
    assert [r.stored for r in recs] == [2, kernels[1]["probes"], 0] and recs[2].digests.shape == (2,)
    report = wc.verify(tmp_path, part="more", log=lambda *_: None)
    assert all(r["mismatches"] == 0 for r in report.values()) and len(report) == 3
    (tmp_path / "meta-wgmma.json").write_text(json.dumps({"kernels": []}))
    assert wc.load(tmp_path) == [] and len(wc.load_all(tmp_path)) == 3


# ---------------------------------------------------------------------------------------------
# Round 2: replay of conformance/data/sm_90/{wgmma-more-*.npz, meta-wgmma-more.json}
# ---------------------------------------------------------------------------------------------

HAVE_MORE = (wc.DATA / "meta-wgmma-more.json").exists()
needs_more = pytest.mark.skipif(not HAVE_MORE, reason="no round-2 wgmma recording in conformance/data/sm_90")


@pytest.fixture(scope="module")
def more():
    return {r.name: r for r in wc.load(wc.DATA, "more")}


def _datapath_of(rec):
    e = rec.entry
    return datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"])


def _more_replay(rec, full=True, digests=True) -> tuple[int, list[int]]:
    """(mismatching elements of the instances in full, mismatching digest instances)."""
    elements = _replay(rec, range(rec.stored)) if full else 0
    return elements, (wc.digest_mismatches(rec) if digests else [])


@needs_more
def test_more_recorded_every_planned_kernel(more):
    import json

    meta = json.loads((wc.DATA / "meta-wgmma-more.json").read_text())
    assert not meta["failed"] and not meta["rejected"]
    assert len(more) == len(wc.plan_kernels("more")) == len(meta["kernels"])
    for rec in more.values():
        assert not np.any(rec.base % 1024), rec.name
        assert rec.stored + (0 if rec.digests is None else len(rec.digests)) == rec.count, rec.name


@needs_more
def test_more_every_combination_has_a_sm90_model(more):
    """Integers are exact; every floating-point kernel of round 2 has a pinned datapath."""
    missing = sorted({r.entry["combination"] for r in more.values() if r.entry["dtype"] != "s32" and _datapath_of(r) is None})
    assert not missing


@needs_more
def test_more_main_combinations_record_enough_dot_products(more):
    per: dict[str, int] = {}
    for rec in more.values():
        per[rec.entry["combination"]] = per.get(rec.entry["combination"], 0) + rec.dots
    for combo in wc.MORE_COMBINATIONS:
        assert per[combo.name] >= (wc.DOTS if combo.main else 6144), combo.name


@needs_more
def test_more_replay_first_and_last_stored_instance(more):
    """Every kernel's first and last instance in full (a designed probe or a random one): 0
    mismatching elements (the heavy replay takes every instance)."""
    for rec in more.values():
        if rec.stored:
            assert _replay(rec, sorted({0, rec.stored - 1})) == 0, rec.name


@needs_more
def test_more_replay_one_digest_per_combination(more):
    """The first digest-only instance of one N = 256 kernel per floating-point combination matches
    (the default suite's sample; the heavy replay takes every instance)."""
    seen = set()
    for name in sorted(more):
        rec = more[name]
        if rec.digests is not None and rec.entry["combination"] not in seen and rec.entry["dtype"] != "s32":
            seen.add(rec.entry["combination"])
            rec_one = attrs_evolve(rec, image=rec.image[: rec.stored + 1], digests=rec.digests[:1])
            assert wc.digest_mismatches(rec_one) == [], name


@needs_more
@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(8))
def test_more_replay_every_instance(more, chunk):
    """Every instance of every round-2 kernel: elements of those in full, digests of the rest."""
    for name in sorted(more)[chunk::8]:
        assert _more_replay(more[name]) == (0, []), name


@needs_more
def test_scale_d_probe_cannot_separate_the_readings(more):
    """Round 2's scale-d probe: D with scale-d false (C registers holding NaN, infinities and
    numbers) is bit-identical to D with C = +0 and to D with C = -0, and no result is -0 -- so
    the profile's wgmma_scale_d_false_c stays the spec-level reading (-0), and the replay (C = that
    zero) is exact."""
    for combo in [c for c in wc.MORE_COMBINATIONS if c.scale_probe]:
        rec = more[f"{combo.name}-n{wc.PROBE_N}"]
        assert rec.scale.tolist() == [0, 1, 1]
        d = [wc.matrices(rec, i)[3] for i in range(3)]
        assert np.array_equal(d[0], d[1]) and np.array_equal(d[0], d[2]), rec.name
        negative_zero = wc.FORMATS[combo.dtype].sign_mask
        assert not np.any(d[0] == negative_zero) and np.any(d[0] == 0), rec.name
        assert _replay(rec, range(3)) == 0
    assert SM_90.wgmma_scale_d_false_c == "-0"
