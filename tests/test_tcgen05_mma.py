"""tcgen05.mma on the Tensor Memory state (§9.7.16.10, semantics/tcgen05_mma.py).

The oracle here is exact arithmetic: inputs whose products and sums are small integers (exactly
representable in every format involved), so that every conforming implementation must give the
exact D, computed with numpy's int64 matmul from matrices laid out in shared memory by a formula
written here (K-major, no swizzle: ``start + 16 (r % 8) + SBO (r // 8) + LBO (k // T)``), not by
ptxspec's layout functions. The spec level's sets must hold the sm_100 profile's value, and the
sm_100 profile must give exactly the exact D.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics.instructions import check, execute
from ptxspec.semantics.state import State, tensor_memory_address
from ptxspec.semantics.tcgen05_descriptors import InstrDescriptor, SmemDescriptor
from ptxspec.spec.errors import OperandError

ALLOC = "tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32"
LBO, SBO = 4096, 256  # K-direction core matrices 4096 bytes apart, 8-row groups 256 bytes apart (128 rows fit between)
A_START, B_START = 0x1000, 0x9000
F16_ONE_BITS = {0: 0x0000, 1: 0x3C00, 2: 0x4000, 3: 0x4200, -1: 0xBC00, -2: 0xC000, -3: 0xC200}
I8 = {v: v & 0xFF for v in range(-3, 4)}


def place(image: np.ndarray, start: int, matrix_bits: np.ndarray, element_bytes: int, mn_major_rows: bool) -> None:
    """Store an (MN x K) matrix K-major without swizzle: 8 rows x 16 bytes core matrices."""
    per_unit = 16 // element_bytes
    rows, ks = matrix_bits.shape
    for r in range(rows):
        for k in range(ks):
            address = start + 16 * (r % 8) + SBO * (r // 8) + LBO * (k // per_unit) + element_bytes * (k % per_unit)
            image[address : address + element_bytes] = np.frombuffer(int(matrix_bits[r, k]).to_bytes(element_bytes, "little"), dtype=np.uint8)


def setup(kind: str, m: int, n: int, a: np.ndarray, b: np.ndarray, cta_group: int = 1):
    encode = (lambda v: F16_ONE_BITS[v]) if kind == "f16" else (lambda v: I8[v])
    size = 2 if kind == "f16" else 1
    ctas = []
    for c in range(cta_group):
        image = np.zeros(1 << 17, dtype=np.uint8)
        rows = slice(c * m // cta_group, (c + 1) * m // cta_group)
        cols = slice(c * n // cta_group, (c + 1) * n // cta_group)
        place(image, A_START, np.vectorize(encode)(a[rows]), size, False)
        place(image, B_START, np.vectorize(encode)(b.T[cols]), size, False)  # B is N x K K-major
        ctas.append(image)
    state = State(ctas[0], peer=State(ctas[1]) if cta_group == 2 else None)
    state = execute(ALLOC.format(g=cta_group), [0, 256], state=state).state
    a_desc = SmemDescriptor(start_address=A_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    b_desc = SmemDescriptor(start_address=B_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    return state, a_desc, b_desc


def d_of(state: State, m: int, n: int, cta_group: int, dtype: str) -> np.ndarray:
    """D read back as the layouts of §9.7.16.10.5 say for M = 128 (lane = row, column = col) and
    M = 256 with ``.cta_group::2`` (rows 0-127 in this CTA, 128-255 in the peer), as int64 values."""
    out = np.zeros((m, n), dtype=np.int64)
    ctas = [state] if cta_group == 1 else [state, state.peer]
    for c, cta in enumerate(ctas):
        words = cta.tensor_memory.words()[: m // cta_group, :n].astype(np.int64)
        out[c * m // cta_group : (c + 1) * m // cta_group] = words
    if dtype == "f32":
        return np.round(out.astype(np.uint32).view(np.float32)).astype(np.int64)
    return out.astype(np.uint32).view(np.int32).astype(np.int64)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([("f16", 16), ("i8", 32)]), st.sampled_from([(128, 1), (256, 2)]), st.sampled_from([32, 64]), st.integers(0, 2**31))
def test_dense_mma_gives_the_exact_product_of_small_integers(kind_k, m_group, n, seed):
    kind, k = kind_k
    m, cta_group = m_group
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n))
    state, a_desc, b_desc = setup(kind, m, n, a, b, cta_group)
    atype, dtype = ("f16", "f32") if kind == "f16" else ("s8", "s32")
    idesc = InstrDescriptor(kind=kind, m=m, n=n, atype=atype, btype=atype, dtype=dtype).encode()
    text = f"tcgen05.mma.cta_group::{cta_group}.kind::{kind}"
    after = execute(text, [0, a_desc, b_desc, idesc, 0], "sm_100", state=state).state
    assert (d_of(after, m, n, cta_group, dtype) == a @ b).all()
    # accumulate: D = A*B + D gives twice the product
    again = execute(text, [0, a_desc, b_desc, idesc, 1], "sm_100", state=after).state
    assert (d_of(again, m, n, cta_group, dtype) == 2 * (a @ b)).all()
    if kind == "f16" and m == 128 and n == 32:  # the spec level's sets hold the exact D (and nothing else here)
        assert check(text, [0, a_desc, b_desc, idesc, 0], [], state=state, observed_state=after)
        off = after.with_tensor_memory(after.tensor_memory.with_cells([5], [3], [int(after.tensor_memory.words()[5, 3]) ^ 1]))
        assert not check(text, [0, a_desc, b_desc, idesc, 0], [], state=state, observed_state=off)


def test_disable_output_lane_keeps_those_lanes():
    rng = np.random.default_rng(1)
    a, b = rng.integers(-2, 3, (128, 16)), rng.integers(-2, 3, (16, 32))
    state, a_desc, b_desc = setup("f16", 128, 32, a, b)
    idesc = InstrDescriptor(kind="f16", m=128, n=32, atype="f16", btype="f16", dtype="f32").encode()
    mask = [0x0000_00FF, 0, 0, 0x8000_0000]  # lanes 0-7 and 127 keep their cells
    text = "tcgen05.mma.cta_group::1.kind::f16 d, a, b, idesc, {m0, m1, m2, m3}, p"  # the form with disable-output-lane
    after = execute(text, [0, a_desc, b_desc, idesc, *mask, 0], "sm_100", state=state).state
    defined = after.tensor_memory.defined()
    assert not defined[:8, :32].any() and not defined[127, :32].any()
    assert (defined[8:127, :32] == 3).all()
    assert (d_of(after, 128, 32, 1, "f32")[8:127] == (a @ b)[8:127]).all()


def test_enable_input_d_false_ignores_what_d_held():
    rng = np.random.default_rng(2)
    a, b = rng.integers(-2, 3, (128, 16)), rng.integers(-2, 3, (16, 16))
    state, a_desc, b_desc = setup("f16", 128, 16, a, b)
    state = state.with_tensor_memory(state.tensor_memory.with_cells(np.arange(128), np.zeros(128, dtype=int), np.full(128, 0x42000000)))
    idesc = InstrDescriptor(kind="f16", m=128, n=16, atype="f16", btype="f16", dtype="f32").encode()
    after = execute("tcgen05.mma.cta_group::1.kind::f16", [0, a_desc, b_desc, idesc, 0], "sm_100", state=state).state
    assert (d_of(after, 128, 16, 1, "f32") == a @ b).all()
    # with enable-input-d, C is D: column 0 holds 32.0, columns 1-15 were never written, so D is undefined there
    accumulated = execute("tcgen05.mma.cta_group::1.kind::f16", [0, a_desc, b_desc, idesc, 1], "sm_100", state=state).state
    assert (accumulated.tensor_memory.defined()[:128, 0] == 3).all() and not accumulated.tensor_memory.defined()[:128, 1:16].any()


def test_negate_flips_the_sign_of_a():
    rng = np.random.default_rng(3)
    a, b = rng.integers(-2, 3, (128, 16)), rng.integers(-2, 3, (16, 16))
    state, a_desc, b_desc = setup("f16", 128, 16, a, b)
    idesc = InstrDescriptor(kind="f16", m=128, n=16, atype="f16", btype="f16", dtype="f32", negate_a=True).encode()
    after = execute("tcgen05.mma.cta_group::1.kind::f16", [0, a_desc, b_desc, idesc, 0], "sm_100", state=state).state
    assert (d_of(after, 128, 16, 1, "f32") == -(a @ b)).all()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda i: i | (1 << 23), "reserved"),
        (lambda i: i | (1 << 2), "Sparsity bit"),
        (lambda i: i & ~(0x3F << 17), "N"),
    ],
)
def test_bad_instruction_descriptors_are_refused(change, message):
    state, a_desc, b_desc = setup("f16", 128, 16, np.zeros((128, 16), dtype=int), np.zeros((16, 16), dtype=int))
    idesc = InstrDescriptor(kind="f16", m=128, n=16, atype="f16", btype="f16", dtype="f32").encode()
    with pytest.raises(OperandError, match=message):
        execute("tcgen05.mma.cta_group::1.kind::f16", [0, a_desc, b_desc, change(idesc), 0], "sm_100", state=state)


def test_outside_the_allocation_and_collector_rules_are_refused():
    state, a_desc, b_desc = setup("f16", 128, 16, np.zeros((128, 16), dtype=int), np.zeros((16, 16), dtype=int))
    idesc = InstrDescriptor(kind="f16", m=128, n=256, atype="f16", btype="f16", dtype="f32").encode()
    with pytest.raises(OperandError, match="not allocated"):
        execute("tcgen05.mma.cta_group::1.kind::f16", [tensor_memory_address(0, 128), a_desc, b_desc, idesc, 0], "sm_100", state=state)
    idesc = InstrDescriptor(kind="f16", m=128, n=16, atype="f16", btype="f16", dtype="f32").encode()
    with pytest.raises(OperandError, match="requires a previous fill"):
        execute("tcgen05.mma.cta_group::1.kind::f16.collector::a::use", [0, a_desc, b_desc, idesc, 0], "sm_100", state=state)
    filled = execute("tcgen05.mma.cta_group::1.kind::f16.collector::a::fill", [0, a_desc, b_desc, idesc, 0], "sm_100", state=state).state
    assert filled.collectors == frozenset({"a"})
    used = execute("tcgen05.mma.cta_group::1.kind::f16.collector::a::lastuse", [0, a_desc, b_desc, idesc, 0], "sm_100", state=filled).state
    assert used.collectors == frozenset()


def put(state: State, address: int, cells, values, bits_at=None) -> State:
    """Write ``values`` into the cells (cta, lane offset, column offset[, bit]) from ``address``,
    OR-ing sub-word fields into their cells (test helper; CTA 1 is the peer)."""
    cta, lane, column = (np.ravel(x) for x in cells[:3])
    shifts = np.zeros(lane.size, dtype=np.int64) if bits_at is None else np.ravel(bits_at)
    values = np.ravel(np.broadcast_to(values, np.shape(cells[0])))
    for which in np.unique(cta):
        here = cta == which
        words: dict[tuple[int, int], int] = {}
        for lane_, column_, shift, value in zip((address >> 16) + lane[here], (address & 0xFFFF) + column[here], shifts[here], values[here]):
            words[lane_, column_] = words.get((lane_, column_), 0) | (int(value) << int(shift))
        tm = state.of_cta(int(which)).tensor_memory.with_cells([k[0] for k in words], [k[1] for k in words], list(words.values()))
        state = state.with_cta_tensor_memory(int(which), tm)
    return state


def test_sparse_f16_mma_multiplies_the_stored_half_as_the_metadata_places_it():
    from ptxspec.semantics import tcgen05_operands as ops

    rng = np.random.default_rng(4)
    m, n, k = 128, 32, 32
    dense = rng.integers(-2, 3, (m, k))
    for chunk in range(0, k, 4):  # 2:4: keep two of every four
        drop = np.array([rng.permutation(4)[:2] for _ in range(m)])
        dense[np.arange(m)[:, None], chunk + drop] = 0
    b = rng.integers(-2, 3, (k, n))
    stored_bits, fields = ops.compress_a("f16", np.vectorize(lambda v: F16_ONE_BITS[v])(dense))
    stored = np.vectorize(lambda bits: {v: key for key, v in F16_ONE_BITS.items()}[int(bits)])(stored_bits)
    state, a_desc, b_desc = setup("f16", m, n, np.zeros((m, k), dtype=int), b)
    image = state.shared_image().copy()
    place(image, A_START, np.vectorize(lambda v: F16_ONE_BITS[v])(stored), 2, False)
    state = state.with_shared(image)
    meta = 0x0000_00C0  # sp-meta-tmem: lane 0, column 192
    cta, lane, column, bit = ops.metadata_cells("f16", m, k)
    state = put(state, meta, (cta, lane, column), fields, bit)
    idesc = InstrDescriptor(kind="f16", m=m, n=n, atype="f16", btype="f16", dtype="f32", sparse=True).encode()
    after = execute("tcgen05.mma.sp.cta_group::1.kind::f16", [0, a_desc, b_desc, meta, idesc, 0], "spec", state=state).state
    observed = after.tensor_memory.with_cells(np.repeat(np.arange(m), n), np.tile(np.arange(n), m), np.float32(dense @ b).view(np.uint32).ravel())
    assert check(
        "tcgen05.mma.sp.cta_group::1.kind::f16", [0, a_desc, b_desc, meta, idesc, 0], [], state=state, observed_state=after.with_tensor_memory(observed)
    )
    wrong = observed.with_cells([0], [0], [int(np.float32((dense @ b)[0, 0] + 1).view(np.uint32))])
    assert not check(
        "tcgen05.mma.sp.cta_group::1.kind::f16", [0, a_desc, b_desc, meta, idesc, 0], [], state=state, observed_state=after.with_tensor_memory(wrong)
    )


E4M3 = {0: 0x00, 1: 0x38, 2: 0x40, 3: 0x44, -1: 0xB8, -2: 0xC0, -3: 0xC4}


@pytest.mark.parametrize("profile", ["sm_100", "spec"])
def test_block_scaled_mxf8f6f4_scales_each_row_and_column_by_its_factor(profile):
    from ptxspec.semantics import tcgen05_operands as ops

    rng = np.random.default_rng(5)
    m, n, k = 128, 16 if profile == "spec" else 64, 32
    a, b = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n))
    ea, eb = rng.integers(0, 3, m), rng.integers(0, 3, n)  # scale factors 2^ea, 2^eb (ue8m0: 127 + e)
    state = State(np.zeros(1 << 17, dtype=np.uint8))
    state = execute(ALLOC.format(g=1), [0, 256], state=state).state
    image = state.shared_image().copy()
    place(image, A_START, np.vectorize(lambda v: E4M3[v])(a), 1, False)
    place(image, B_START, np.vectorize(lambda v: E4M3[v])(b.T), 1, False)
    state = state.with_shared(image)
    scale_a, scale_b = 0x0000_0080, 0x0000_0090  # columns 128 and 144
    state = put(
        state,
        scale_a,
        ops.scale_factor_cells("a", "mxf8f6f4", "block32", m, k, 0)[:3],
        np.repeat((127 + ea)[:, None, None], 4, axis=2),
        8 * ops.scale_factor_cells("a", "mxf8f6f4", "block32", m, k, 0)[3],
    )
    state = put(
        state,
        scale_b,
        ops.scale_factor_cells("b", "mxf8f6f4", "block32", n, k, 0)[:3],
        np.repeat((127 + eb)[:, None, None], 4, axis=2),
        8 * ops.scale_factor_cells("b", "mxf8f6f4", "block32", n, k, 0)[3],
    )
    a_desc = SmemDescriptor(start_address=A_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    b_desc = SmemDescriptor(start_address=B_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    idesc = InstrDescriptor(kind="mxf8f6f4", m=m, n=n, atype="e4m3", btype="e4m3", dtype="f32", scale_type="ue8m0").encode()
    text = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"
    after = execute(text, [0, a_desc, b_desc, idesc, scale_a, scale_b, 0], profile, state=state).state
    exact = (a @ b) * (2.0 ** ea[:, None]) * (2.0 ** eb[None, :])
    expected = after.tensor_memory.with_cells(np.repeat(np.arange(m), n), np.tile(np.arange(n), m), exact.astype(np.float32).view(np.uint32).ravel())
    if profile == "sm_100":
        assert after.tensor_memory == expected
    assert check(text, [0, a_desc, b_desc, idesc, scale_a, scale_b, 0], [], profile, state=state, observed_state=after.with_tensor_memory(expected))


@pytest.mark.parametrize("m, n", [(256, 64), (128, 128)])
def test_block_scaled_mma_on_a_cta_pair_scales_each_row_by_its_ctas_factor_and_each_column_by_both(m, n):
    """.cta_group::2: A's rows and their scale factors split by M between the CTAs, B's columns
    split by N but its scale factors in both CTAs (M = 256: "4x1"; M = 128: "2x2"), against exact
    arithmetic; B's factors that differ between the CTAs are refused."""
    from ptxspec.semantics import tcgen05_datapath as dp
    from ptxspec.semantics import tcgen05_mma as tm
    from ptxspec.semantics import tcgen05_operands as ops

    rng = np.random.default_rng(6)
    k = 32
    a, b = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n))
    ea, eb = rng.integers(0, 3, m), rng.integers(0, 3, n)
    images = []
    for c in range(2):
        image = np.zeros(1 << 17, dtype=np.uint8)
        place(image, A_START, np.vectorize(lambda v: E4M3[v])(a[c * m // 2 : (c + 1) * m // 2]), 1, False)
        place(image, B_START, np.vectorize(lambda v: E4M3[v])(b.T[c * n // 2 : (c + 1) * n // 2]), 1, False)
        images.append(image)
    state = execute(ALLOC.format(g=2), [0, 512], state=State(images[0], peer=State(images[1]))).state
    scale_a, scale_b = 0x0000_0100, 0x0000_0110  # columns 256 and 272
    for address, operand, rows, e in ((scale_a, "a", m, ea), (scale_b, "b", n, eb)):
        cells = ops.scale_factor_cells(operand, "mxf8f6f4", "block32", rows, k, 0, 2, m)
        state = put(state, address, cells[:3], (127 + e)[:, None, None], 8 * cells[3])
    a_desc = SmemDescriptor(start_address=A_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    b_desc = SmemDescriptor(start_address=B_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    idesc = InstrDescriptor(kind="mxf8f6f4", m=m, n=n, atype="e4m3", btype="e4m3", dtype="f32", scale_type="ue8m0").encode()
    text = "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.block32"
    operands = [0, a_desc, b_desc, idesc, scale_a, scale_b, 0]
    after = execute(text, operands, "sm_100", state=state).state
    words, known = tm.read_d(after, 0, dp.d_cells(m, n, 2, False, False), "f32")
    exact = (a @ b) * (2.0 ** ea[:, None]) * (2.0 ** eb[None, :])
    assert known.all() and (words.astype(np.uint32) == exact.astype(np.float32).view(np.uint32)).all()
    cells = ops.scale_factor_cells("b", "mxf8f6f4", "block32", n, k, 0, 2, m)
    one_copy = tuple(x[:, :, -1:] for x in cells)  # the last copy is in the peer
    assert (one_copy[0] == 1).all()
    with pytest.raises(OperandError, match="differs between its copies"):
        execute(text, operands, "sm_100", state=put(state, scale_b, one_copy[:3], 0x7F ^ 0x01, 8 * one_copy[3]))


def test_pair_scale_factors_of_b_with_m_128_need_n_128_or_256():
    from ptxspec.semantics import tcgen05_operands as ops

    with pytest.raises(OperandError, match="round_up"):
        ops.scale_factor_cells("b", "mxf8f6f4", "block32", 64, 32, 0, 2, 128)


# ---------------------------------------------------------------------------------------------
# Every catalogued tcgen05.mma form evaluates (a seeded sample by default; all with PTXSPEC_HEAVY=all)
# ---------------------------------------------------------------------------------------------

#: Per kind: (A type, B type, D type, scale type) with 8-bit or wider shared-memory elements.
KIND_TYPES = {
    "f16": ("f16", "f16", "f32", None),
    "tf32": ("tf32", "tf32", "f32", None),
    "f8f6f4": ("e4m3", "e5m2", "f32", None),
    "i8": ("s8", "u8", "s32", None),
    "mxf8f6f4": ("e4m3", "e4m3", "f32", "ue8m0"),
    "mxf4": ("e2m1", "e2m1", "f32", "ue8m0"),
    "mxf4nvf4": ("e2m1", "e2m1", "f32", "ue4m3"),
}


def _mma_forms():
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from ptxas_batch import legal_forms

    from ptxspec.spec import tcgen05 as tc

    return [f for family in tc.FAMILIES if family.key.startswith("tcgen05.mma") for f in legal_forms(family)]


def _mma_case(form, rng):
    """A state and operands for ``form``: random bit patterns in A and B (8-bit elements limited
    to small exponents so that no NaN or infinity arises), the smallest N the form allows, A in
    Tensor Memory where the form reads it there, metadata, scale factors and collector fills."""
    from ptxspec.semantics import tcgen05_datapath as dp
    from ptxspec.semantics import tcgen05_descriptors as td
    from ptxspec.semantics import tcgen05_operands as ops

    kind = form["kind"].split("::")[1]
    group = int(form["cta_group"].split("::")[1])
    sparse, ws = ".sp" in form.family.key, ".ws" in form.family.key
    atype, btype, dtype, stype = KIND_TYPES[kind]
    ms, ns = td.SHAPE_TABLE[kind][(ws, group, sparse)]
    m = 128 if 128 in ms and not (group == 2 and sparse) else max(ms)
    if group == 2 and m == 128 and (sparse or form.get("ashift") or stype is not None):
        m = 256  # .ashift with M = 128 on the pair reads A in two copies (refused); block scaling's "2x2" B needs N = 128 or 256
    n = min(ns)
    k = td.InstrDescriptor(kind=kind, m=m, n=n, atype=atype, btype=btype, dtype=dtype, sparse=sparse, scale_type=stype).k
    stored_k = k // 2 if sparse else k
    ctas = []
    for _ in range(group):
        image = rng.integers(0, 256, 1 << 16, dtype=np.uint8) & 0x37  # small exponents, positive and negative via bit 7 off: finite values
        ctas.append(image)
    state = State(ctas[0], peer=State(ctas[1]) if group == 2 else None)
    state = execute(ALLOC.format(g=group), [0xFFF0, 512], state=state).state
    a_desc = SmemDescriptor(start_address=0, leading_byte_offset=8192, stride_byte_offset=256, swizzle="none").encode()
    b_desc = SmemDescriptor(start_address=0x8000, leading_byte_offset=4096, stride_byte_offset=256, swizzle="none").encode()
    idesc = td.InstrDescriptor(kind=kind, m=m, n=n, atype=atype, btype=btype, dtype=dtype, sparse=sparse, scale_type=stype).encode()
    named = {"d_tmem": 0, "a_desc": a_desc, "b_desc": b_desc, "idesc": idesc, "enable_input_d": 0, "scale_input_d": 0, "zero_column_mask_desc": 0}
    bits = td.TYPE_BITS[atype]
    if any(o.name == "a_tmem" for o in form.inputs):
        named["a_tmem"] = 256  # column 256
        for copy in range(dp.a_copies(m, group, sparse, ws)):
            cta, lane, column, _ = dp.a_cells(m, stored_k, bits, group, sparse, ws, copy=copy)
            for which in range(group):
                here = cta == which
                words = rng.integers(0, 1 << 32, int(here.sum()), dtype=np.uint64) & 0x37373737
                tm = state.of_cta(which).tensor_memory.with_cells(lane[here], 256 + column[here], words)
                state = state.with_cta_tensor_memory(which, tm)
    if sparse:
        named["sp_meta_tmem"] = 448
        cta, lane, column, bit = ops.metadata_cells(kind, m, k, group, ws)
        for which in range(group):
            here = cta == which
            words = np.zeros((128, 512), dtype=np.int64)
            np.bitwise_or.at(words, (lane[here], 448 + column[here]), 0x4 << bit[here])
            touched = np.unique(np.stack([lane[here], 448 + column[here]]), axis=1)
            tm = state.of_cta(which).tensor_memory.with_cells(touched[0], touched[1], words[touched[0], touched[1]])
            state = state.with_cta_tensor_memory(which, tm)
    if stype is not None:
        vector = form.get("scale_vectorsize") or "block32"
        for operand, rows, column in (("a", m, 480), ("b", n, 496)):
            named[f"scale_{operand}_tmem"] = column
            cta, lane, col, byte = ops.scale_factor_cells(operand, kind, vector, rows, k, 0, group, m)
            for which in range(group):
                words: dict[tuple[int, int], int] = {}
                here = cta == which
                for l_, cc, b in zip(lane[here], col[here], byte[here]):
                    key = (int(l_), column + int(cc))
                    words[key] = words.get(key, 0) | ((0x7F if stype == "ue8m0" else 0x38) << (8 * int(b)))
                tm = state.of_cta(which).tensor_memory.with_cells([x[0] for x in words], [x[1] for x in words], list(words.values()))
                state = state.with_cta_tensor_memory(which, tm)
    usage = form.get("collector_usage")
    if usage and usage.split("::")[2] in ("use", "lastuse"):
        state = state.__class__(state.shared, state.tensor_memory, state.cta_group, state.peer, frozenset({usage.split("::")[1]}))
    sources = []
    for operand in form.inputs:
        name = operand.name.lower()
        sources.append(0 if name.startswith("disable_output_lane") else named[name])
    return state, sources, (m, n, group)


def _sample(forms, seed, count):
    rng = np.random.default_rng(seed)
    return [forms[i] for i in sorted(rng.choice(len(forms), size=min(count, len(forms)), replace=False))]


def _check_every(forms) -> int:
    rng = np.random.default_rng(7)
    for form in forms:
        state, sources, (m, n, group) = _mma_case(form, rng)
        after = execute(form, sources, "sm_100", state=state).state
        changed = len(after.tensor_memory.changed_cells(state.tensor_memory)) + (
            len(after.peer.tensor_memory.changed_cells(state.peer.tensor_memory)) if group == 2 else 0
        )
        held = len(after.tensor_memory.allowed) + (len(after.peer.tensor_memory.allowed) if group == 2 else 0)
        assert changed + held >= m * n, form.text  # every element of D is written (a value, or one of a set)
    return len(forms)


def _mma_family_keys() -> list[str]:
    from ptxspec.spec import tcgen05 as tc

    return [f.key for f in tc.FAMILIES if f.key.startswith("tcgen05.mma")]


ASHIFT_FORMS = (
    "tcgen05.mma.cta_group::1.kind::f16.ashift [d_tmem], [a_tmem], b_desc, idesc, enable_input_d",
    "tcgen05.mma.cta_group::2.kind::tf32.ashift.collector::a::discard [d_tmem], [a_tmem], b_desc, idesc, enable_input_d",
    "tcgen05.mma.sp.cta_group::1.kind::i8.ashift [d_tmem], [a_tmem], b_desc, [sp_meta_tmem], idesc, enable_input_d",
)


@pytest.mark.parametrize("text", ASHIFT_FORMS)
def test_ashift_multiplies_a_as_it_was_then_shifts_its_rows_within_each_sub_partition(text):
    from ptxspec.semantics import tcgen05_datapath as dp
    from ptxspec.semantics import tcgen05_descriptors as td
    from ptxspec.spec.tcgen05 import parse

    form, plain = parse(text), parse(text.replace(".ashift", ""))
    state, sources, (m, n, group) = _mma_case(form, np.random.default_rng(3))
    after = execute(form, sources, "sm_100", state=state).state
    unshifted = execute(plain, sources, "sm_100", state=state).state  # D as the MMA without .ashift gives it
    instr = InstrDescriptor.decode(sources[[o.name for o in form.inputs].index("idesc")], form["kind"].split("::")[1])
    sparse = ".sp" in form.family.key
    a_tmem = sources[[o.name for o in form.inputs].index("a_tmem")]
    container = td.tmem_a_container(instr.kind, instr.atype)[0]
    cta, lane, column, _ = dp.a_cells(m, instr.k // 2 if sparse else instr.k, container, group, sparse, False, copy=0)
    for which in range(group):
        got = (after if which == 0 else after.peer).tensor_memory
        want = (unshifted if which == 0 else unshifted.peer).tensor_memory
        words, defined = want.words().copy(), want.defined().copy()
        columns = sorted(set((a_tmem + column[cta == which]).tolist()))
        for row in sorted(set(lane[cta == which].tolist())):  # a loop: row r takes row r + 1, the last of 32 keeps its own
            if row % 32 != 31:
                words[row, columns], defined[row, columns] = want.words()[row + 1, columns], want.defined()[row + 1, columns]
        assert (got.words() == words).all() and (got.defined() == defined).all()
        assert got.changed_cells(want)  # the shift moved something (A's rows differ)


def test_ashift_where_a_does_not_fill_whole_sub_partitions_is_refused():
    from ptxspec.spec.tcgen05 import parse

    form = parse(ASHIFT_FORMS[1])
    rng = np.random.default_rng(3)
    state, sources, _ = _mma_case(parse(ASHIFT_FORMS[1].replace(".ashift", "")), rng)  # M = 128 on the pair: Layout B
    with pytest.raises(OperandError, match="two copies"):
        execute(form, sources, "sm_100", state=state)


def test_the_mma_catalogue_has_1568_forms_in_28_families():
    assert len(_mma_forms()) == 1568 and len(_mma_family_keys()) == 28


@pytest.mark.heavy
@pytest.mark.parametrize("family", _mma_family_keys())
def test_every_tcgen05_mma_form_of_a_family_evaluates(family):
    forms = [f for f in _mma_forms() if f.family.key == family]
    assert _check_every(forms) == len(forms) > 0


def test_a_seeded_sample_of_tcgen05_mma_forms_evaluates():
    from ptxspec.spec import tcgen05 as tc

    forms = _mma_forms()
    # one form of each family and kind, plus a seeded sample of the rest
    chosen = {(f.family.key, f["kind"]): f for f in forms if ".sp" not in f.family.key or f["kind"] in ("kind::i8", "kind::f8f6f4")}
    assert _check_every(list(chosen.values())[:: max(1, len(chosen) // 8)] + _sample(forms, 1, 2)) > 0 and len(tc.FAMILIES) > 40


E2M1 = {0: 0b0000, 1: 0b0010, 2: 0b0100, -1: 0b1010, -2: 0b1100}
E3M2 = {0: 0x00, 1: 0x0C, 2: 0x10, -1: 0x2C, -2: 0x30}


def place_padded(image: np.ndarray, start: int, matrix_bits: np.ndarray, width: int) -> None:
    """Store an (MN x K) matrix of 4- or 6-bit elements in the padded units of §9.7.16.10.4.4, K-major
    without swizzle: each 16 elements of K one 16-byte unit (packed, least significant first, then
    padding), units placed as core-matrix rows of 16 bytes."""
    rows, ks = matrix_bits.shape
    for r in range(rows):
        for u in range(ks // 16):
            packed = sum(int(matrix_bits[r, 16 * u + j]) << (width * j) for j in range(16))
            address = start + 16 * (r % 8) + SBO * (r // 8) + LBO * u
            image[address : address + 16] = np.frombuffer(packed.to_bytes(16, "little"), dtype=np.uint8)


def test_f8f6f4_with_4_and_6_bit_operands_reads_the_padded_units():
    rng = np.random.default_rng(6)
    m, n, k = 128, 32, 32
    a, b = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n))
    state = execute(ALLOC.format(g=1), [0, 256], state=State(np.zeros(1 << 17, dtype=np.uint8))).state
    image = state.shared_image().copy()
    place_padded(image, A_START, np.vectorize(E2M1.get)(a), 4)
    place_padded(image, B_START, np.vectorize(E3M2.get)(b.T), 6)
    state = state.with_shared(image)
    a_desc = SmemDescriptor(start_address=A_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    b_desc = SmemDescriptor(start_address=B_START, leading_byte_offset=LBO, stride_byte_offset=SBO, swizzle="none").encode()
    idesc = InstrDescriptor(kind="f8f6f4", m=m, n=n, atype="e2m1", btype="e3m2", dtype="f32").encode()
    after = execute("tcgen05.mma.cta_group::1.kind::f8f6f4", [0, a_desc, b_desc, idesc, 0], "sm_100", state=state).state
    assert (d_of(after, m, n, 1, "f32") == a @ b).all()
