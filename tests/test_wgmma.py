"""wgmma.mma_async as a whole (semantics/wgmma.py): operands from a shared-memory image and the
warpgroup's registers, D = A*B + D, D back into the accumulator registers.

The expected D is computed independently of the package's layouts: the matrices are chosen first,
written into the image and the registers (write_matrix / from_matrix, which
tests/test_wgmma_layout.py checks against the manual), and D is numpy's integer matrix product or,
for floating point, exact small-integer products whose sum every allowed accumulation order gives.

The batch API (wgmma_batch) is checked against one instruction at a time (Hypothesis, every
multiplicand block, both A sources, .sp, all swizzles, both majors, several descriptors per batch,
per-instance scale-d), integer batches against numpy's matrix product of the written matrices, the
sm_90 profile against the readable per-element datapath and the spec-level sets, and the whole
sm_90 wgmma recording (conformance/data/sm_90) against the batch API.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from test_wgmma_layout import BITS, _form, packed_descriptor, sparse_dense

from ptxspec.profiles.sm_90 import SM_90
from ptxspec.profiles.sm_90 import mma as sm90_mma
from ptxspec.semantics import mma
from ptxspec.semantics import wgmma as wgmma_module
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.wgmma import batch_operands, wgmma_batch, wgmma_mma_async
from ptxspec.spec.catalogue import parse
from ptxspec.spec import wgmma as wg
from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import FORMATS


def _setup(text, a, b, c, abits, bbits, registers=False):
    form = _form(text, registers=registers)
    m, n, k = wg.parse_shape(form["shape"])
    desc_a = packed_descriptor(0, "none", "K", abits, m, k, 0)
    desc_b = packed_descriptor(16384, "128B", "K", bbits, n, k, 1)
    image = wl.write_matrix(np.zeros(1 << 15, dtype=np.uint8), desc_a, a, form["atype"], "K")
    image = wl.write_matrix(image, desc_b, b, form["btype"], "K", operand="b")
    a_operand = wl.fragment_layout(form["shape"], "a", form["atype"]).from_matrix(a) if registers else desc_a.encode()
    return form, image, a_operand, desc_b, wl.wgmma_result_registers(form, c)


@pytest.mark.parametrize("scale_d", [True, False])
def test_integer_wgmma_is_the_exact_matrix_product(scale_d):
    rng = np.random.default_rng(11)
    text = "wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.u8"
    a = rng.integers(0, 256, size=(64, 32), dtype=np.uint64)
    b = rng.integers(0, 256, size=(32, 48), dtype=np.uint64)
    c = rng.integers(0, 1 << 32, size=(64, 48), dtype=np.uint64)
    form, image, a_op, desc_b, c_regs = _setup(text, a, b, c, 8, 8)
    got = wgmma_mma_async(form, image, a_op, desc_b, c_regs, scale_d=scale_d)
    signed_a = a.astype(np.int64) - ((a >= 128) * 256).astype(np.int64)
    exact = signed_a @ b.astype(np.int64) + (c.astype(np.int64) - ((c >= 1 << 31) * (1 << 32)).astype(np.int64) if scale_d else 0)
    expected = (exact % (1 << 32)).astype(np.uint64)  # no .satfinite: the sum wraps (it cannot overflow here)
    np.testing.assert_array_equal(got.d, expected)
    np.testing.assert_array_equal(got.registers, wl.wgmma_result_registers(form, expected))


def _f16(values):
    return np.asarray(values, dtype=np.float16).view(np.uint16).astype(np.uint64)


@pytest.mark.parametrize("registers", [False, True])
@pytest.mark.parametrize("scale_a, scale_d", [(1, True), (-1, True), (1, False)])
def test_f16_wgmma_allows_the_exact_sum(registers, scale_a, scale_d):
    """Small integers: every product and partial sum is exact in f32, so the spec-level set of each
    D element holds the exact value of A*B + D (A negated for imm-scale-a = -1)."""
    rng = np.random.default_rng(3)
    text = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
    av = rng.integers(-8, 9, size=(64, 16))
    bv = rng.integers(-8, 9, size=(16, 8))
    cv = rng.integers(-100, 101, size=(64, 8)).astype(np.float32)
    form, image, a_op, desc_b, c_regs = _setup(text, _f16(av), _f16(bv), cv.view(np.uint32).astype(np.uint64), 16, 16, registers)
    got = wgmma_mma_async(form, image, a_op, desc_b, c_regs, scale_d=scale_d, imm_scale_a=scale_a)
    exact = (scale_a * av) @ bv + (cv if scale_d else 0)
    for i in range(64):
        for j in range(8):
            bits = int(np.float32(exact[i, j]).view(np.uint32))
            element = got.d[i, j]
            assert (bits in element) if got.d.dtype == object else int(element) == bits, (i, j, exact[i, j])


def test_imm_scale_refuses_integers_and_other_values():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, size=(64, 32), dtype=np.uint64)
    b = rng.integers(0, 256, size=(32, 48), dtype=np.uint64)
    form, image, a_op, desc_b, c_regs = _setup("wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.u8", a, b, np.zeros((64, 48), np.uint64), 8, 8)
    with pytest.raises(OperandError, match="floating-point"):
        wgmma_mma_async(form, image, a_op, desc_b, c_regs, imm_scale_a=-1)
    with pytest.raises(OperandError, match="1 or -1"):
        wgmma_mma_async(form, image, a_op, desc_b, c_regs, imm_scale_b=2)


# ---------------------------------------------------------------------------------------------
# The batch API (wgmma_batch) against one instruction at a time, and against numpy
# ---------------------------------------------------------------------------------------------

DENSE = "wgmma.mma_async.sync.aligned"
SPARSE = "wgmma.mma_async.sp.sync.aligned"
#: (form text with N left open, A in registers): every multiplicand block, both A sources, sparse.
CASES = [
    (DENSE + ".m64n{n}k16.f32.f16.f16", False),
    (DENSE + ".m64n{n}k16.f16.f16.f16", False),
    (DENSE + ".m64n{n}k16.f32.bf16.bf16", False),
    (DENSE + ".m64n{n}k8.f32.tf32.tf32", False),
    (DENSE + ".m64n{n}k32.f32.e4m3.e5m2", False),
    (DENSE + ".m64n{n}k32.f16.e5m2.e4m3", False),
    (DENSE + ".m64n{n}k32.s32.s8.u8", False),
    (DENSE + ".m64n{n}k32.satfinite.s32.s8.s8", False),
    (DENSE + ".m64n{n}k256.s32.b1.b1.and.popc", False),
    (DENSE + ".m64n{n}k16.f32.f16.f16", True),
    (DENSE + ".m64n{n}k32.f32.e4m3.e4m3", True),
    (DENSE + ".m64n{n}k32.s32.u8.u8", True),
    (SPARSE + ".m64n{n}k32.f32.f16.f16", False),
    (SPARSE + ".m64n{n}k32.f32.bf16.bf16", True),
    (SPARSE + ".m64n{n}k16.f32.tf32.tf32", False),
    (SPARSE + ".m64n{n}k64.f32.e4m3.e4m3", False),
    (SPARSE + ".m64n{n}k64.s32.s8.s8", True),
]


def _values(rng, type_name: str, shape) -> np.ndarray:
    """Element bits of ``type_name``: integers uniform; floating point mostly of moderate magnitude
    (exponent within 4 of the bias, random sign and mantissa) and one in 32 any bit pattern at all
    (zeros, subnormals, infinities, NaNs)."""
    if type_name in ("s8", "u8", "s32", "b1"):
        return rng.integers(0, 1 << BITS.get(type_name, 32), size=shape, dtype=np.uint64)
    fmt = FORMATS[type_name]
    e, m = fmt.exponent_bits, fmt.mantissa_bits
    sign = rng.integers(0, 2, size=shape, dtype=np.uint64) << np.uint64(e + m)
    exponent = rng.integers(max(1, fmt.bias - 4), fmt.bias + 5, size=shape, dtype=np.uint64) << np.uint64(m)
    fields = sign | exponent | rng.integers(0, 1 << m, size=shape, dtype=np.uint64)
    wild = rng.integers(0, 1 << (1 + e + m), size=shape, dtype=np.uint64)
    fields = np.where(rng.integers(0, 32, size=shape) == 0, wild, fields)
    return fields << np.uint64(fmt.shift)


def _pool_descriptor(rng, operand: str, major: str, bits: int, mn: int, k: int, region: int) -> wl.MatrixDescriptor:
    """A descriptor of a random swizzle and stride order whose matrix starts in ``region`` (16 KiB
    regions of a 64 KiB image: A in 0 or 1, B in 2 or 3)."""
    swizzle = str(rng.choice(["none", "32B", "64B", "128B"]))
    if major == "K" and swizzle != "none" and k * bits > 8 * wl.SWIZZLE_BYTES[swizzle]:
        swizzle = "128B"
    return packed_descriptor(16384 * region, swizzle, major, bits, mn, k, int(rng.integers(0, 2)))


def _batch(text: str, registers: bool, n: int, count: int, seed: int, *, trans_a: int = 0, trans_b: int = 0, selector: int = 0):
    """``count`` instances of the form: the matrices A (dense), B, C chosen first, then written into
    per-instance images (each instance takes one of two descriptors per operand, so instances share
    address maps) and registers. Returns the operands and the matrices."""
    rng = np.random.default_rng(seed)
    form = _form(text.format(n=n), registers)
    m, n, k = wg.parse_shape(form["shape"])
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    sparse = wg.is_sparse(form)
    stored_k = k // 2 if sparse else k
    major_a, major_b = ("MN" if trans_a else "K"), ("MN" if trans_b else "K")
    pool_a = [_pool_descriptor(rng, "a", major_a, BITS[atype], m, stored_k, r) for r in (0, 1)]
    pool_b = [_pool_descriptor(rng, "b", major_b, BITS[btype], n, k, r) for r in (2, 3)]
    images = np.zeros((count, 1 << 16), dtype=np.uint8)
    A = sparse_dense(rng, atype, k, batch=count) if sparse else _values(rng, atype, (count, m, k))
    if sparse and atype not in ("s8", "u8"):
        A = np.where(A != 0, _values(rng, atype, A.shape), 0).astype(np.uint64)
    B, C = _values(rng, btype, (count, k, n)), _values(rng, dtype, (count, m, n))
    stored, meta = wl.compress_sparse(form["shape"], atype, A, selector) if sparse else (A, None)
    a_desc, b_desc = [], []
    for i in range(count):
        da, db = pool_a[int(rng.integers(0, 2))], pool_b[int(rng.integers(0, 2))]
        if not registers:
            images[i] = wl.write_matrix(images[i], da, stored[i], atype, major_a)
        images[i] = wl.write_matrix(images[i], db, B[i], btype, major_b, operand="b")
        a_desc.append(da.encode())
        b_desc.append(db.encode())
        # The two matrices do not overlap: each reads back as written (set-up check).
        if not registers:
            assert np.array_equal(wl.read_matrix(images[i], da, m, stored_k, atype, major_a), stored[i])
        assert np.array_equal(wl.read_matrix(images[i], db, k, n, btype, major_b, operand="b"), B[i])
    a_operand = wl.fragment_layout(form["shape"], "a", atype, sparse=sparse).from_matrix(stored) if registers else np.array(a_desc, dtype=np.uint64)
    c_regs = wl.wgmma_result_registers(form, C)
    return form, images, a_operand, np.array(b_desc, dtype=np.uint64), c_regs, meta, (A, B, C)


@st.composite
def batches(draw):
    text, registers = draw(st.sampled_from(CASES))
    floating = "s32" not in text
    profile = draw(st.sampled_from(["spec", "sm_90"])) if floating else "spec"
    # The spec-level sets cost a rational dot product per element: keep those batches small.
    form = parse(text.format(n=8))
    sets = floating and wgmma_module.measured_datapath(wgmma_module.profile_named(profile), form) is None
    n = draw(st.sampled_from([8] if sets else [8, 16, 24, 32]))
    count = draw(st.integers(1, 2 if sets else 4))
    transposable = ("f16.f16" in text or "bf16" in text) and SPARSE not in text
    trans_a = draw(st.integers(0, 1)) if transposable and not registers else 0
    trans_b = draw(st.integers(0, 1)) if transposable else 0
    selector = draw(st.integers(0, 1)) if SPARSE in text and ("f16" in text or "tf32" in text) else 0
    scale_d = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    scales = (draw(st.sampled_from([1, -1])), draw(st.sampled_from([1, -1]))) if floating else (1, 1)
    seed = draw(st.integers(0, 2**32 - 1))
    return text, registers, n, count, trans_a, trans_b, selector, np.array(scale_d), scales, profile, seed


def _same(batch: np.ndarray, single: np.ndarray) -> bool:
    if batch.dtype != object and single.dtype != object:
        return np.array_equal(batch, single)
    return batch.shape == single.shape and all(x == y for x, y in zip(batch.ravel().tolist(), single.ravel().tolist()))


def _check_batch(case):
    text, registers, n, count, trans_a, trans_b, selector, scale_d, (scale_a, scale_b), profile, seed = case
    form, images, a, desc_b, c_regs, meta, _ = _batch(text, registers, n, count, seed, trans_a=trans_a, trans_b=trans_b, selector=selector)
    kw = dict(imm_scale_a=scale_a, imm_scale_b=scale_b, imm_trans_a=trans_a, imm_trans_b=trans_b, sp_sel=selector, profile=profile)
    if "s32" in text:
        kw.pop("imm_scale_a"), kw.pop("imm_scale_b")
    got_d = wgmma_batch(form, images, a, desc_b, c_regs, scale_d=scale_d, sp_meta=meta, matrices=True, **kw)
    # The registers once more where that is cheap (spec-level sets cost a rational dot product each).
    got = wgmma_batch(form, images, a, desc_b, c_regs, scale_d=scale_d, sp_meta=meta, **kw) if got_d.dtype != object else None
    for i in range(count):
        one = wgmma_mma_async(form, images[i], a[i], desc_b[i], c_regs[i], scale_d=bool(scale_d[i]), sp_meta=None if meta is None else meta[i], **kw)
        assert _same(got_d[i], one.d), (i, text)
        if got is not None:
            assert _same(got[i], one.registers), (i, text)


@settings(max_examples=25, deadline=None)
@given(batches())
def test_batch_equals_one_instruction_at_a_time(case):
    _check_batch(case)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_batch_equals_one_instruction_at_a_time_many(chunk):
    """The same property over many more drawn batches (4 chunks of 100)."""
    run = given(batches())(_check_batch)
    seed(chunk)(settings(max_examples=100, deadline=None, derandomize=False, database=None)(run))()


def test_spec_level_registers_pack_the_sets():
    """A set-valued D (spec level) reaches the registers as packed per-element results."""
    form, images, a, desc_b, c_regs, _, _ = _batch(DENSE + ".m64n{n}k16.f16.f16.f16", False, 8, 1, 31)
    got = wgmma_batch(form, images, a, desc_b, c_regs)
    one = wgmma_mma_async(form, images[0], a[0], desc_b[0], c_regs[0])
    assert got.dtype == object and got.shape == (1, 128, 2) and _same(got[0], one.registers)
    layout = wl.fragment_layout(form["shape"], "d", "f16")
    low, high = layout.element(5, 1, 0), layout.element(5, 1, 1)  # thread 5, register 1: two f16
    register, high_d, low_d = got[0, 5, 1], one.d[high], one.d[low]
    if isinstance(high_d, int) and isinstance(low_d, int):
        assert register == (high_d << 16) | low_d
    else:  # pack_lanes: lane 0 (the element in the high half) first
        assert register.lanes == (high_d, low_d)


def _signed(bits: np.ndarray, width: int) -> np.ndarray:
    x = bits.astype(np.int64)
    return np.where(x >= 1 << (width - 1), x - (1 << width), x)


@pytest.mark.parametrize(("text", "registers"), [c for c in CASES if "s32" in c[0]])
def test_integer_batch_is_numpy_matmul_of_the_written_matrices(text, registers):
    """The oracle never reads shared memory: numpy's integer matrix product of the matrices that
    were written into the images (A dense, also for .sp), plus C where scale-d is true; .b1 .and:
    AND then popc, i.e. the product of 0/1 matrices."""
    count = 6
    form, images, a, desc_b, c_regs, meta, (A, B, C) = _batch(text, registers, 48, count, 17)
    scale_d = np.arange(count) % 3 != 1
    got = wgmma_batch(form, images, a, desc_b, c_regs, scale_d=scale_d, sp_meta=meta, matrices=True)
    signed = {"s8": (8, True), "u8": (8, False), "b1": (1, False)}
    wa, sa = signed[form["atype"]]
    wb, sb = signed[form["btype"]]
    av = _signed(A, wa) if sa else A.astype(np.int64)
    bv = _signed(B, wb) if sb else B.astype(np.int64)
    exact = av @ bv + np.where(scale_d[:, None, None], _signed(C, 32), 0)
    if form.get("satfinite") is not None:
        exact = np.clip(exact, -(1 << 31), (1 << 31) - 1)
    expected = (exact % (1 << 32)).astype(np.uint64)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(wgmma_batch(form, images, a, desc_b, c_regs, scale_d=scale_d, sp_meta=meta), wl.wgmma_result_registers(form, expected))


def test_batch_operands_are_the_written_matrices():
    """Per-thread descriptors ([n, 128]) and one shared image are accepted; the gathered matrices
    are the ones written."""
    form, images, a, desc_b, c_regs, _, (A, B, C) = _batch(DENSE + ".m64n{n}k16.f32.bf16.bf16", False, 24, 3, 4, trans_a=1, trans_b=1)
    got_a, got_b, got_c = batch_operands(form, images, np.repeat(a[:, None], 128, axis=1), desc_b, c_regs, trans_a=1, trans_b=1)
    np.testing.assert_array_equal(got_a, A)
    np.testing.assert_array_equal(got_b, B)
    np.testing.assert_array_equal(got_c, C)
    one_a, one_b, _ = batch_operands(form, images[1], a[1:2], desc_b[1:2], c_regs[1:2], trans_a=1, trans_b=1)
    np.testing.assert_array_equal(one_a[0], A[1])
    np.testing.assert_array_equal(one_b[0], B[1])


# ---------------------------------------------------------------------------------------------
# The sm_90 profile
# ---------------------------------------------------------------------------------------------

F16 = DENSE + ".m64n{n}k16.f32.f16.f16"


def test_sm90_is_the_measured_datapath_on_the_written_matrices():
    """Under sm_90 an f16 -> f32 wgmma is the profile's wgmma datapath, element by element
    (the readable mma.datapath_dot on the matrices written into the image), and every such result
    lies in the spec-level set of the same element."""
    model = wgmma_module.datapath_for(SM_90, "f16", "f16", "f32", "f32")
    assert model is not None
    form, images, a, desc_b, c_regs, _, (A, B, C) = _batch(F16, False, 16, 2, 23)
    got = wgmma_batch(form, images, a, desc_b, c_regs, profile="sm_90", matrices=True)
    spec = wgmma_mma_async(form, images[0], a[0], desc_b[0], c_regs[0]).d
    for i in range(2):
        for r in range(64):
            for c in range(16):
                expected = mma.datapath_dot(model, "f16", "f16", "f32", "f32", [int(x) for x in A[i, r]], [int(y) for y in B[i, :, c]], int(C[i, r, c]))
                assert int(got[i, r, c]) == expected, (i, r, c)
                if i == 0:
                    assert expected in spec[r, c], (r, c, spec[r, c])


def test_sm90_without_a_measurement_is_the_spec_level_set():
    unmeasured = attrs.evolve(SM_90, wgmma_datapaths={})
    form, images, a, desc_b, c_regs, _, _ = _batch(F16, False, 8, 1, 5)
    sm90 = wgmma_batch(form, images, a, desc_b, c_regs, profile=unmeasured)
    spec = wgmma_batch(form, images, a, desc_b, c_regs, profile="spec")
    assert sm90.dtype == object and _same(sm90, spec)


def test_integers_are_exact_under_sm90_too():
    form, images, a, desc_b, c_regs, _, _ = _batch(DENSE + ".m64n{n}k32.s32.s8.u8", False, 16, 2, 6)
    np.testing.assert_array_equal(wgmma_batch(form, images, a, desc_b, c_regs, profile="sm_90"), wgmma_batch(form, images, a, desc_b, c_regs))


def _negative_zero_products(count: int):
    """A = -0 everywhere, B moderate: every product is -0 (or +0 for a negative b)."""
    form, images, a, desc_b, c_regs, _, (A, B, C) = _batch(F16, False, 8, count, 8)
    m, n, k = wg.parse_shape(form["shape"])
    da = wl.MatrixDescriptor.decode(int(a[0]))
    db = wl.MatrixDescriptor.decode(int(desc_b[0]))
    B = B & np.uint64(0x7FFF)  # b >= 0, so (-0) * b = -0
    for i in range(count):
        images[i] = wl.write_matrix(images[i], da, np.full((m, k), 0x8000, dtype=np.uint64), "f16", "K")
        images[i] = wl.write_matrix(images[i], db, B[i], "f16", "K", operand="b")
    return form, images, np.full(count, da.encode(), dtype=np.uint64), np.full(count, db.encode(), dtype=np.uint64), c_regs


@pytest.mark.parametrize("reading, expected", [("-0", 0x80000000), ("+0", 0)])
def test_scale_d_false_reading_is_a_parameter_of_the_profile(reading, expected):
    """scale-d = false: D = A*B + C0, C0 the zero the profile's wgmma_scale_d_false_c names. With a
    datapath that keeps IEEE zero signs, A*B = sum of -0 products gives -0 + C0: the reading decides
    the sign."""
    sm_90 = attrs.evolve(SM_90, wgmma_scale_d_false_c=reading)
    form, images, a, desc_b, c_regs = _negative_zero_products(2)
    ieee = attrs.evolve(sm90_mma.FUSED, zero_sign="ieee")
    got = wgmma_batch(form, images, a, desc_b, c_regs, scale_d=np.array([False, True]), profile=sm_90, datapath=ieee, matrices=True)
    assert np.all(got[0] == expected)
    one = wgmma_mma_async(form, images[0], a[0], desc_b[0], c_regs[0], scale_d=False, profile=sm_90, datapath=ieee)
    assert np.all(one.d == expected)


def test_scale_d_false_readings_agree_for_the_sm90_datapath():
    """For the measured f16 datapath (a zero addend takes no part in the alignment; every zero
    result is +0) C0 = -0 and C0 = +0 give the same bits: the recording cannot tell them apart."""
    form, images, a, desc_b, c_regs, _, _ = _batch(F16, False, 16, 3, 12)
    results = []
    for reading in ("-0", "+0"):
        sm_90 = attrs.evolve(SM_90, wgmma_scale_d_false_c=reading)
        results.append(wgmma_batch(form, images, a, desc_b, c_regs, scale_d=False, profile=sm_90))
    np.testing.assert_array_equal(*results)
    zero_form, zimages, za, zb, zc = _negative_zero_products(1)
    assert np.all(wgmma_batch(zero_form, zimages, za, zb, zc, scale_d=False, profile=sm_90, matrices=True) == 0)


def test_spec_level_scale_d_false_adds_negative_zero():
    assert wgmma_module.zero_accumulator(wgmma_module.profile_named("spec"), "f32") == 0x80000000
    assert wgmma_module.zero_accumulator(wgmma_module.profile_named("spec"), "f16") == 0x8000
    assert wgmma_module.zero_accumulator(wgmma_module.profile_named("spec"), "s32") == 0


# ---------------------------------------------------------------------------------------------
# Errors name the instance
# ---------------------------------------------------------------------------------------------


def test_a_bad_descriptor_names_its_instance():
    form, images, a, desc_b, c_regs, _, _ = _batch(F16, False, 8, 4, 3)
    bad = desc_b.copy()
    bad[2] |= np.uint64(1 << 15)  # bit 15 is in no field of the descriptor
    with pytest.raises(OperandError, match=r"instance 2: matrix descriptor .* outside the fields"):
        wgmma_batch(form, images, a, bad, c_regs)
    far = a.copy()
    far[3] = wl.MatrixDescriptor(0x3FF00, 16, 1024, 0, "128B").encode()
    with pytest.raises(OperandError, match=r"instance 3: the matrix reaches .* beyond the image"):
        wgmma_batch(form, images, far, desc_b, c_regs)
    per_thread = np.repeat(desc_b[:, None], 128, axis=1)
    per_thread[1, 100] += np.uint64(1)
    with pytest.raises(OperandError, match=r"instance 1: the matrix descriptor b-desc differs between threads"):
        wgmma_batch(form, images, a, per_thread, c_regs)


def test_invalid_metadata_names_its_instance():
    form, images, a, desc_b, c_regs, meta, _ = _batch(SPARSE + ".m64n{n}k64.s32.s8.s8", False, 8, 3, 2)
    meta = meta.copy()
    meta[1, :] = 0  # "0b0000 ... invalid values for metadata"
    with pytest.raises(OperandError, match=r"instance 1: sparsity metadata .* invalid"):
        wgmma_batch(form, images, a, desc_b, c_regs, sp_meta=meta)
    with pytest.raises(OperandError, match="sp-meta"):
        wgmma_batch(form, images, a, desc_b, c_regs)


def test_batch_refuses_operands_of_the_wrong_shape():
    form, images, a, desc_b, c_regs, _, _ = _batch(F16, False, 8, 2, 3)
    with pytest.raises(OperandError, match=r"accumulator registers \[n, 128, 4\]"):
        wgmma_batch(form, images, a, desc_b, c_regs[:, :, :2])
    with pytest.raises(OperandError, match=r"\[2\] descriptors"):
        wgmma_batch(form, images, a[:1], desc_b, c_regs)
    with pytest.raises(OperandError, match="64-bit unsigned"):
        wgmma_batch(form, images, a.astype(np.int64) * 0 - 1, desc_b, c_regs)
    objects = np.array([wl.MatrixDescriptor.decode(int(x)) for x in a] + [None], dtype=object)[:2]
    np.testing.assert_array_equal(
        wgmma_batch(form, images, objects, desc_b, c_regs, matrices=True, profile="sm_90"),
        wgmma_batch(form, images, a, desc_b, c_regs, matrices=True, profile="sm_90"),
    )
    with pytest.raises(OperandError, match="images"):
        wgmma_batch(form, images[:1], a, desc_b, c_regs)
    with pytest.raises(OperandError, match="scale-d"):
        wgmma_batch(form, images, a, desc_b, c_regs, scale_d=np.array([True, False, True]))
    with pytest.raises(OperandError, match="got registers"):
        wgmma_batch(form, images, np.zeros((2, 128, 4), dtype=np.uint64), desc_b, c_regs)
    with pytest.raises(OperandError, match="imm-trans-a"):
        wgmma_batch(_form(DENSE + ".m64n8k8.f32.tf32.tf32"), images, a, desc_b, c_regs, imm_trans_a=1)
    with pytest.raises(OperandError, match="1 or -1"):
        wgmma_batch(form, images, a, desc_b, c_regs, imm_scale_a=0)


# ---------------------------------------------------------------------------------------------
# The recording (conformance/data/sm_90/wgmma-*.npz, helper W1's campaign) through the batch API
# ---------------------------------------------------------------------------------------------


def test_batch_api_replays_the_sm90_recording():
    """Every recorded wgmma kernel (images, descriptors, registers, scale-d as the GPU had them)
    through wgmma_batch at the sm_90 profile: D's registers equal the recorded ones bit for bit --
    the layouts (descriptors, swizzles, fragments, metadata) and the numerics together."""
    from ptxspec.conformance.silicon import wgmma_campaign as wc

    if not (wc.DATA / "meta-wgmma.json").exists():
        pytest.skip("no wgmma recording in conformance/data/sm_90")
    recordings = wc.load()
    assert recordings
    dots = 0
    for rec in recordings:
        e = rec.entry
        kw = dict(imm_trans_a=e["trans_a"], imm_trans_b=e["trans_b"], sp_meta=rec.meta if e["sparse"] else None, sp_sel=e["sp_sel"], profile="sm_90")
        if e["dtype"] != "s32":
            kw.update(imm_scale_a=e["scale_a"], imm_scale_b=e["scale_b"])
        a = rec.a if e["a_registers"] else rec.desc[:, 0]
        got = wgmma_batch(wc.form_of(rec), rec.image, a, rec.desc[:, 1], rec.c, scale_d=rec.scale.astype(bool), **kw)
        assert got.dtype != object, f"{rec.name}: no sm_90 datapath"
        mismatches = int((got != rec.d.astype(np.uint64)).sum())
        assert mismatches == 0, f"{rec.name}: {mismatches} registers differ from the recording"
        dots += rec.dots
    assert dots > 10**6
