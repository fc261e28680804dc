"""§9.7.9.25 asynchronous copies as functions on memory images (semantics/async_copy.py): the bytes
each copy moves, checked against numpy slices of the images; the zero fill of cp.async; the
element-wise reductions against numpy's wrapping arithmetic; the byte mask; multicast to each CTA of
the mask with its own complete-tx; and the refusals the manual's rules give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import mbarrier as mb
from ptxspec.semantics.instructions import execute
from ptxspec.semantics.state import AddressMap, Segment, State
from ptxspec.spec.errors import OperandError

G = 0x7F10_0000_0000
BARRIER = mb.expect_tx(mb.init(1), 1 << 12).encode().to_bytes(8, "little")


def _state(shared: bytes, global_bytes: bytes, **kw) -> State:
    return State(shared=shared + BARRIER, global_memory=Segment(G, global_bytes), **kw)


def _barrier(image: bytes, at: int) -> mb.MbarrierState:
    return mb.MbarrierState.decode(int.from_bytes(image[at : at + 8], "little"))


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.binary(min_size=64, max_size=64), st.sampled_from([4, 8, 16]), st.data())
def test_cp_async_copies_src_size_bytes_and_zero_fills_the_rest(shared, global_bytes, size, data):
    dst = data.draw(st.integers(0, 64 // size - 1)) * size
    src = data.draw(st.integers(0, 64 // size - 1)) * size
    src_size = data.draw(st.integers(0, size))
    outcome = execute("cp.async.ca.shared.global [d], [s], n, m", [dst, G + src, size, src_size], state=_state(shared, global_bytes))
    expected = bytearray(shared)
    expected[dst : dst + size] = global_bytes[src : src + src_size] + bytes(size - src_size)
    assert outcome.state is not None and outcome.state.shared[:64] == bytes(expected)
    full = execute("cp.async.ca.shared.global", [dst, G + src, size], state=_state(shared, global_bytes))
    assert full.state is not None and full.state.shared[dst : dst + size] == global_bytes[src : src + size]


def test_cp_async_refusals():
    state = _state(bytes(64), bytes(64))
    with pytest.raises(OperandError, match="larger than cp-size"):
        execute("cp.async.ca.shared.global [d], [s], n, m", [0, G, 8, 9], state=state)
    with pytest.raises(OperandError, match="4, 8 and 16"):
        execute("cp.async.ca.shared.global", [0, G, 2], state=state)
    with pytest.raises(OperandError, match="not aligned"):
        execute("cp.async.ca.shared.global", [4, G, 8], state=state)


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.binary(min_size=64, max_size=64), st.sampled_from([16, 32, 48]), st.data())
def test_bulk_copy_moves_the_bytes_and_completes_them_on_the_mbarrier(shared, global_bytes, size, data):
    dst = 16 * data.draw(st.integers(0, (64 - size) // 16))
    src = 16 * data.draw(st.integers(0, (64 - size) // 16))
    outcome = execute("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes", [dst, G + src, size, 64], state=_state(shared, global_bytes))
    assert outcome.state is not None
    assert outcome.state.shared[dst : dst + size] == global_bytes[src : src + size]
    assert _barrier(outcome.state.shared, 64).tx_count == (1 << 12) - size
    back = execute("cp.async.bulk.global.shared::cta.bulk_group", [G + src, dst, size], state=_state(shared, global_bytes))
    assert back.state is not None and back.state.global_memory.data[src : src + size] == shared[dst : dst + size]


def test_bulk_sizes_must_be_multiples_of_16():
    with pytest.raises(OperandError, match="multiple of 16"):
        execute("cp.async.bulk.global.shared::cta.bulk_group", [G, 0, 24], state=_state(bytes(64), bytes(64)))
    with pytest.raises(OperandError, match="aligned to 16"):
        execute("cp.async.bulk.global.shared::cta.bulk_group", [G + 8, 0, 16], state=_state(bytes(64), bytes(64)))


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.binary(min_size=64, max_size=64), st.integers(0, 0xFFFF))
def test_byte_mask_copies_the_bytes_its_bits_name(shared, global_bytes, mask):
    outcome = execute("cp.async.bulk.global.shared::cta.bulk_group.cp_mask", [G, 0, 32, mask], state=_state(shared, global_bytes))
    assert outcome.state is not None
    expected = bytes(shared[i] if mask >> (i % 16) & 1 else global_bytes[i] for i in range(32))
    assert outcome.state.global_memory.data[:32] == expected


@pytest.mark.parametrize(
    ("op", "numpy_op"), [("add", np.add), ("min", np.minimum), ("max", np.maximum), ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)]
)
@settings(max_examples=15, deadline=None)
@given(shared=st.binary(min_size=64, max_size=64), global_bytes=st.binary(min_size=64, max_size=64))
def test_bulk_reduction_is_element_wise(op, numpy_op, shared, global_bytes):
    kind = "b32" if op in ("and", "or", "xor") else "s32"
    outcome = execute(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{op}.{kind}", [G, 0, 64], state=_state(shared, global_bytes))
    dtype = "<u4" if kind == "b32" else "<i4"
    expected = numpy_op(np.frombuffer(global_bytes, dtype=dtype), np.frombuffer(shared, dtype=dtype)).astype(dtype).tobytes()
    assert outcome.state is not None and outcome.state.global_memory.data == expected


def test_f32_bulk_reduction_flushes_subnormals_as_the_manual_says_but_not_on_sm_90():
    """The manual: "the current implementation ... flushes subnormal inputs and results to
    sign-preserving zero"; the H100 keeps them (``Profile.bulk_reduce_add``, the async round)."""
    tiny = (1).to_bytes(4, "little")  # the smallest f32 subnormal
    text = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"
    spec = execute(text, [G, 0, 16], "spec", state=_state(tiny * 4, tiny * 4))
    assert spec.state is not None and spec.state.global_memory.data == bytes(16)
    chip = execute(text, [G, 0, 16], "sm_90", state=_state(tiny * 4, tiny * 4))
    assert chip.state is not None and chip.state.global_memory.data == (2).to_bytes(4, "little") * 4


def test_a_bulk_reduction_nan_the_manual_leaves_open_is_indeterminate():
    """Under the spec profile an f32 NaN result is "unspecified": its bytes are indeterminate; on
    sm_90 the canonical NaN."""
    nan = (0x7FC00001).to_bytes(4, "little")
    text = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"
    spec = execute(text, [G, 0, 16], "spec", state=_state(nan * 4, bytes(16)))
    assert spec.state is not None and spec.state.global_memory.indeterminate == ((G, G + 16),)
    chip = execute(text, [G, 0, 16], "sm_90", state=_state(nan * 4, bytes(16)))
    assert chip.state is not None and chip.state.global_memory.data == (0x7FFFFFFF).to_bytes(4, "little") * 4


def test_multicast_writes_each_cta_of_the_mask_and_signals_each_mbarrier():
    state = State(
        shared=bytes(64) + BARRIER,
        global_memory=Segment(G, bytes(range(64))),
        addresses=AddressMap(cluster_ctas=3),
        cluster=((1, bytes(64) + BARRIER), (2, bytes(64) + BARRIER)),
    )
    outcome = execute("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster", [16, G, 32, 64, 0b101], state=state)
    assert outcome.state is not None
    cluster = dict(outcome.state.cluster)
    assert outcome.state.shared[16:48] == bytes(range(32)) and cluster[2][16:48] == bytes(range(32))
    assert cluster[1] == bytes(64) + BARRIER  # not in the mask
    assert _barrier(outcome.state.shared, 64).tx_count == _barrier(cluster[2], 64).tx_count == (1 << 12) - 32
    with pytest.raises(OperandError, match="ctaMask"):
        execute("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster", [16, G, 32, 64, 0b1000], state=state)


def test_group_instructions_change_no_state():
    state = _state(bytes(64), bytes(64))
    for text, sources in (("cp.async.commit_group", []), ("cp.async.wait_group", [0]), ("cp.async.wait_all", []), ("cp.async.bulk.wait_group.read", [1])):
        assert execute(text, sources, state=state).state == state
