"""wgmma.mma_async as a whole (semantics/wgmma.py): operands from a shared-memory image and the
warpgroup's registers, D = A*B + D, D back into the accumulator registers.

The expected D is computed independently of the package's layouts: the matrices are chosen first,
written into the image and the registers (write_matrix / from_matrix, which
tests/test_wgmma_layout.py checks against the manual), and D is numpy's integer matrix product or,
for floating point, exact small-integer products whose sum every allowed accumulation order gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_wgmma_layout import _form, packed_descriptor

from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.wgmma import wgmma_mma_async
from ptxspec.spec import wgmma as wg
from ptxspec.spec.errors import OperandError


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
