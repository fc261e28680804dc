"""The memory instructions of §9.7.9.8-24 and §9.7.13.5-6 as functions on memory images: checked
against numpy's reading of little-endian bytes (an independent oracle for placement, extension and
truncation), against Python integers for the atomic operations, and by Hypothesis properties
(a store then a load gives the value back; cvta and cvta.to are inverse; mapa then getctarank
gives the rank)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import atomics
from ptxspec.semantics.instructions import evaluate, execute
from ptxspec.semantics.results import AnyBits, contains
from ptxspec.semantics.state import AddressMap, Segment, State
from ptxspec.spec.errors import OperandError, PtxSpecError

BASE = 0x7F00_0000_1000
NUMPY = {
    "u8": "<u1",
    "s8": "<i1",
    "u16": "<u2",
    "s16": "<i2",
    "b16": "<u2",
    "u32": "<u4",
    "s32": "<i4",
    "b32": "<u4",
    "f32": "<u4",
    "u64": "<u8",
    "s64": "<i8",
    "b64": "<u8",
    "f64": "<u8",
}
REGISTER_BITS = {"u8": 32, "s8": 32, "b8": 32}


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``ptxspec ARGS`` in this process: (exit status, standard output, standard error)."""
    from ptxspec.conformance.cli import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def run(text: str, sources: list[int], profile: str = "spec", *, state: State) -> tuple[tuple, State]:
    """``execute`` as (results, new state)."""
    outcome = execute(text, sources, profile, state=state)
    assert outcome.state is not None
    return outcome.results, outcome.state


def _global(data: bytes) -> State:
    return State(global_memory=Segment(BASE, data))


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.sampled_from(sorted(NUMPY)), st.data())
def test_ld_reads_little_endian_and_extends_as_numpy_does(image, type_name, data):
    size = np.dtype(NUMPY[type_name]).itemsize
    offset = data.draw(st.integers(0, 64 // size - 1)) * size
    (got,), state = run(f"ld.global.{type_name}", [BASE + offset], state=_global(image))
    width = REGISTER_BITS.get(type_name, size * 8)
    expected = int(np.frombuffer(image, dtype=NUMPY[type_name], count=1, offset=offset)[0]) & ((1 << width) - 1)
    assert got == expected
    assert state == _global(image)  # a load changes nothing


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.sampled_from([("b32", 2), ("b32", 4), ("u16", 4), ("f64", 2), ("s8", 4)]), st.data())
def test_vector_ld_takes_consecutive_elements(image, shape, data):
    type_name, count = shape
    size = np.dtype(NUMPY[type_name]).itemsize
    offset = data.draw(st.integers(0, 64 // (size * count) - 1)) * size * count
    results = evaluate(f"ld.global.v{count}.{type_name}", [BASE + offset], state=_global(image))
    width = REGISTER_BITS.get(type_name, size * 8)
    expected = [int(v) & ((1 << width) - 1) for v in np.frombuffer(image, dtype=NUMPY[type_name], count=count, offset=offset)]
    assert list(results) == expected


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.sampled_from(["b8", "b16", "b32", "b64", "b128"]), st.integers(0, (1 << 128) - 1), st.data())
def test_st_writes_the_low_bytes_and_nothing_else(image, type_name, value, data):
    size = 16 if type_name == "b128" else int(type_name[1:]) // 8
    register = 32 if type_name == "b8" else size * 8
    value &= (1 << register) - 1
    offset = data.draw(st.integers(0, 32 // size - 1)) * size
    outcome = execute(f"st.global.{type_name}", [BASE + offset, value], state=_global(image))
    expected = bytearray(image)
    expected[offset : offset + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    assert outcome.results == ()
    assert outcome.state is not None and outcome.state.global_memory.data == bytes(expected)
    # and a load of the same type gives the stored bits back
    (back,) = evaluate(f"ld.global.{type_name}", [BASE + offset], state=outcome.state)
    assert back == value & ((1 << (8 * size)) - 1)


def test_shared_and_generic_addressing_reach_the_same_bytes():
    addresses = AddressMap()
    state = State(shared=bytes(range(64)), global_memory=Segment(BASE, bytes(64)), addresses=addresses)
    (direct,) = evaluate("ld.shared.b32", [8], state=state)
    (generic,) = evaluate("ld.b32", [addresses.shared[0] + 8], state=state)
    (converted,) = evaluate("cvta.shared.u64", [8], state=state)
    assert direct == generic == 0x0B0A0908 and converted == addresses.shared[0] + 8
    (global_generic,) = evaluate("ld.b32", [BASE + 4], state=state)  # a global address is its own generic address
    assert global_generic == 0


def test_misaligned_and_outside_accesses_are_refused():
    state = _global(bytes(16))
    with pytest.raises(OperandError, match="not aligned"):
        evaluate("ld.global.b32", [BASE + 2], state=state)
    with pytest.raises(OperandError, match="not in the state"):
        evaluate("ld.global.b64", [BASE + 16], state=state)


def test_discard_leaves_any_value_until_a_store():
    state = State(global_memory=Segment(BASE, bytes(range(256))))
    _, after = run("discard.global.L2", [BASE + 128, 128], state=state)
    assert after is not None
    (loaded,) = evaluate("ld.global.b32", [BASE + 128], state=after)
    assert not isinstance(loaded, int) and contains(loaded, 0xDEADBEEF)
    (untouched,) = evaluate("ld.global.b32", [BASE + 124], state=after)
    assert untouched == int.from_bytes(bytes(range(124, 128)), "little")
    _, stored = run("st.global.b32", [BASE + 128, 7], state=after)
    assert evaluate("ld.global.b32", [BASE + 128], state=stored) == (7,)
    with pytest.raises(OperandError):
        evaluate("discard.global.L2", [BASE + 64, 128], state=state)  # not 128-byte aligned


@pytest.mark.parametrize("op", ["add", "and", "or", "xor", "exch", "min", "max", "inc", "dec"])
@settings(max_examples=25, deadline=None)
@given(old=st.integers(0, (1 << 32) - 1), b=st.integers(0, (1 << 32) - 1))
def test_atom_u32_against_python_integers(op, old, b):
    type_name = {"and": "b32", "or": "b32", "xor": "b32", "exch": "b32"}.get(op, "u32")
    state = _global(old.to_bytes(4, "little") + bytes(4))
    (returned,), after = run(f"atom.global.{op}.{type_name}", [BASE, b], state=state)
    expected = {
        "add": (old + b) % (1 << 32),
        "and": old & b,
        "or": old | b,
        "xor": old ^ b,
        "exch": b,
        "min": min(old, b),
        "max": max(old, b),
        "inc": 0 if old >= b else old + 1,
        "dec": b if old == 0 or old > b else old - 1,
    }[op]
    assert returned == old
    assert after is not None and int.from_bytes(after.global_memory.data[:4], "little") == expected


@settings(max_examples=40, deadline=None)
@given(old=st.integers(-(1 << 63), (1 << 63) - 1), b=st.integers(-(1 << 63), (1 << 63) - 1))
def test_signed_min_max_compare_as_signed(old, b):
    state = _global((old % (1 << 64)).to_bytes(8, "little"))
    for op, pick in (("min", min), ("max", max)):
        _, after = run(f"atom.global.{op}.s64", [BASE, b % (1 << 64)], state=state)
        assert after is not None and int.from_bytes(after.global_memory.data, "little", signed=True) == pick(old, b)


@settings(max_examples=40, deadline=None)
@given(old=st.integers(0, (1 << 128) - 1), compare=st.integers(0, (1 << 128) - 1), new=st.integers(0, (1 << 128) - 1), hit=st.booleans())
def test_cas_b128_swaps_exactly_when_equal(old, compare, new, hit):
    compare = old if hit else compare
    state = _global(old.to_bytes(16, "little"))
    (returned,), after = run("atom.global.cas.b128", [BASE, compare, new], state=state)
    assert returned == old
    assert after is not None and int.from_bytes(after.global_memory.data, "little") == (new if old == compare else old)


def test_float_atom_add_flushes_on_global_and_keeps_on_shared():
    tiny = 0x00000001  # the smallest f32 subnormal
    on_global = execute("atom.global.add.f32", [BASE, tiny], "sm_90", state=_global(tiny.to_bytes(4, "little")))
    on_shared = execute("atom.shared.add.f32", [0, tiny], "sm_90", state=State(shared=tiny.to_bytes(4, "little")))
    assert on_global.state is not None and on_shared.state is not None
    assert int.from_bytes(on_global.state.global_memory.data, "little") == 0  # "flushes subnormal inputs and results"
    assert int.from_bytes(on_shared.state.shared, "little") == 2  # "supports subnormal inputs and results"
    assert atomics.atomic_values("add", tiny, (tiny,), ("global", "f32")) == (0,)


def test_red_writes_what_atom_writes_and_returns_nothing():
    state = _global((5).to_bytes(4, "little"))
    atom = execute("atom.global.add.u32", [BASE, 7], state=state)
    red = execute("red.global.add.u32", [BASE, 7], state=state)
    assert red.results == () and atom.state == red.state


ADDRESSES = AddressMap(cta_rank=1, cluster_ctas=4)


@settings(max_examples=60, deadline=None)
@given(offset=st.integers(0, (1 << 24) - 1), rank=st.integers(0, 3))
def test_mapa_then_getctarank_gives_the_rank_and_keeps_the_offset(offset, rank):
    state = State(addresses=ADDRESSES)
    own = ADDRESSES.cluster_base + ADDRESSES.cta_rank * ADDRESSES.cluster_stride + offset
    (mapped,) = evaluate("mapa.shared::cluster.u64", [own, rank], state=state)
    assert evaluate("getctarank.shared::cluster.u64", [mapped], state=state) == (rank,)
    assert (mapped - ADDRESSES.cluster_base) % ADDRESSES.cluster_stride == offset
    (generic,) = evaluate("cvta.shared::cluster.u64", [mapped], state=state)
    assert evaluate("isspacep.shared::cluster", [generic], state=state) == (1,)
    assert evaluate("isspacep.shared::cta", [generic], state=state) == (int(rank == ADDRESSES.cta_rank),)
    assert evaluate("cvta.to.shared::cluster.u64", [generic], state=state) == (mapped,)


@settings(max_examples=60, deadline=None)
@given(space=st.sampled_from(["local", "const", "param"]), offset=st.integers(0, (1 << 16) - 1))
def test_cvta_and_cvta_to_are_inverse_within_each_window(space, offset):
    state = State()
    (generic,) = evaluate(f"cvta.{space}.u64", [offset], state=state)
    assert evaluate(f"isspacep.{space}", [generic], state=state) == (1,)
    assert evaluate(f"cvta.to.{space}.u64", [generic], state=state) == (offset,)
    # "isspacep.global returns 1 for Kernel Function Parameters as .param window is contained within the .global window"
    assert evaluate("isspacep.global", [generic], state=state) == (int(space == "param"),)


def test_cvta_to_outside_the_window_is_undefined():
    (result,) = evaluate("cvta.to.local.u64", [0x1234], state=State())
    assert isinstance(result, AnyBits)


def test_createpolicy_is_opaque_in_the_manual_and_pinned_on_sm_90():
    (spec,) = evaluate("createpolicy.fractional.L2::evict_last.b64", [0x3F000000], state=State())
    (sm90,) = evaluate("createpolicy.fractional.L2::evict_last.b64", [0x3F000000], "sm_90", state=State())
    assert isinstance(spec, AnyBits) and contains(spec, sm90)
    assert sm90 == 0x1470000000000000
    with pytest.raises(OperandError, match=r"not in \(0.0, 1.0\]"):
        evaluate("createpolicy.fractional.L2::evict_last.b64", [0x3F800001], state=State())


def test_cache_hints_change_no_value():
    image = bytes(range(32))
    plain = execute("ld.global.b64", [BASE + 8], state=_global(image))
    for text in (
        "ld.global.ca.b64",
        "ld.global.L1::evict_last.b64",
        "ld.global.L2::128B.b64",
        "ld.relaxed.gpu.global.b64",
        "ld.global.nc.b64",
        "ldu.global.b64",
    ):
        assert execute(text, [BASE + 8], state=_global(image)) == plain, text
    assert execute("ld.global.L2::cache_hint.b64", [BASE + 8, 0x1234], state=_global(image)) == plain


def test_cli_evaluates_a_load_from_a_state_file(tmp_path, capsys):
    import json

    path = tmp_path / "state.json"
    path.write_text(json.dumps({"global": {"base": hex(BASE), "bytes": "0102030405060708"}}))
    code, out, err = cli(capsys, "eval", "ld.global.v2.b16", hex(BASE + 4), "--state", str(path))
    assert code == 0, err
    assert "0x0605" in out and "0x0807" in out
    code, out, err = cli(capsys, "eval", "ld.global.b32", hex(BASE + 2), "--state", str(path))
    assert code == 2 and "aligned" in err and "Traceback" not in err


_MAP = {"element_type": "f16", "global_dims": [16, 4, 2], "global_strides": [32, 128], "box_dims": [16, 2, 1]}
_WRONG = (5, "x", [1, "a"], {"a": 1}, None, [], 1.5, [-1, 2, 2])


@pytest.mark.parametrize("field", [*_MAP, "element_strides", "interleave", "swizzle", "oob_fill", "global_address", "im2col"])
def test_a_bad_tensor_map_field_is_a_located_error(tmp_path, capsys, field):
    """Every field of a state file's tensor map given a value of the wrong kind: exit status 2 and
    a message naming the file and the field's path, never a traceback."""
    import json

    path = tmp_path / "state.json"
    for wrong in _WRONG:
        path.write_text(json.dumps({"tensor_maps": [["0x1000", {**_MAP, field: wrong}]]}))
        code, _, err = cli(capsys, "eval", "cp.async.bulk.prefetch.tensor.3d.L2.global.tile", "0x1000", "0", "0", "0", "--state", str(path))
        assert code in (0, 2) and "Traceback" not in err, (field, wrong, err)
        if code == 2:
            assert str(path) in err and "tensor_maps[0]" in err, err


def test_refusals_are_ptxspec_errors():
    with pytest.raises(PtxSpecError):
        evaluate("mapa.shared::cluster.u64", [0x400, 5], state=State())


def test_docs_eval_examples_are_real_output(capsys, monkeypatch):
    """Every ``$ ptxspec eval`` session of docs/memory.rst, run: the output is the page's."""
    import re
    import shlex
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    text = (repo / "docs" / "memory.rst").read_text()
    sessions: list[tuple[str, list[str]]] = []
    for block in re.findall(r"\.\. code-block:: text\n\n((?:   .*\n|\n)+)", text):
        for line in block.splitlines():
            if line[3:].startswith("$ "):
                sessions.append((line[5:], []))
            elif line.strip():
                sessions[-1][1].append(line[3:])
    assert len(sessions) >= 10
    monkeypatch.chdir(repo)
    for command, expected in sessions:
        argv = shlex.split(command)
        code, out, err = cli(capsys, *argv[1:])
        assert (out + err).splitlines() == expected, command
        assert code == (2 if expected[0].startswith("ptxspec: error") else 0), command


def _cluster_with_barrier(expected_tx: int) -> State:
    from ptxspec.semantics import mbarrier

    remote = bytes(16) + mbarrier.expect_tx(mbarrier.init(1), expected_tx).encode().to_bytes(8, "little")
    return State(shared=bytes(32), addresses=AddressMap(cta_rank=0, cluster_ctas=2), cluster=((1, remote),))


def test_st_async_stores_to_the_other_cta_and_completes_its_bytes():
    from ptxspec.semantics import mbarrier

    state = _cluster_with_barrier(8)
    other = 1 << 24  # the .shared::cluster address of byte 0 of the CTA of rank 1
    _, after = run("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32", [other, 5, 6, other + 16], state=state)
    image = dict(after.cluster)[1]
    assert image[:8] == (5).to_bytes(4, "little") + (6).to_bytes(4, "little")
    # 8 bytes stored: the tx-count the object expected is met and the phase (pending 1) still waits for its arrive
    assert mbarrier.MbarrierState.decode(int.from_bytes(image[16:], "little")) == mbarrier.init(1)
    with pytest.raises(OperandError, match="one CTA"):
        run("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32", [other, 5, 16], state=state)  # mbar in this CTA


def test_red_async_reduces_in_another_cta_only():
    state = _cluster_with_barrier(4)
    other = 1 << 24
    _, after = run("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32", [other, 7, other + 16], state=state)
    assert dict(after.cluster)[1][:4] == (7).to_bytes(4, "little")
    with pytest.raises(OperandError, match="another CTA"):
        run(
            "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32",
            [0, 7, 16],
            state=State(shared=dict(state.cluster)[1], addresses=state.addresses),
        )


VECTOR_FORMS = (
    "ld.global.v4.b32",
    "ld.s8",
    "ld.shared::cluster.b128",
    "st.shared.v2.b64",
    "st.b8",
    "atom.global.cas.b128",
    "atom.add.f32",
    "atom.shared.inc.u32",
    "red.global.max.s64",
    "atom.global.v4.add.f32",
    "cvta.to.shared::cluster.u64",
    "isspacep.param",
    "mapa.u64",
    "getctarank.shared::cluster.u32",
    "createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64",
    "discard.global.L2",
    "st.bulk.shared::cta",
    "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32",
    "red.async.relaxed.cluster.mbarrier::complete_tx::bytes.inc.u32",
    "cp.async.ca.shared.global",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
    "cp.async.bulk.global.shared::cta.bulk_group.cp_mask",
    "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.s32",
    "cp.async.bulk.wait_group.read",
)


@pytest.mark.parametrize("profile", ["spec", "sm_90"])
def test_vectors_replay_with_no_mismatch(profile, tmp_path, capsys):
    """``ptxspec vectors`` then ``ptxspec check-vectors`` on memory forms: the same lines twice
    (same seed, same bytes), and every line replays; a tampered line is caught."""
    import json

    path = tmp_path / "v.jsonl"
    command = ("vectors", *VECTOR_FORMS, "--count", "12", "--seed", "5", "--profile", profile, "-o", str(path))
    assert cli(capsys, *command)[0] == 0
    first = path.read_bytes()
    assert cli(capsys, *command)[0] == 0
    assert path.read_bytes() == first
    code, out, err = cli(capsys, "check-vectors", str(path))
    assert code == 0, out + err
    assert "mismatched        0" in out and out.count("checked       12") == len(VECTOR_FORMS)
    obj = json.loads(first.decode().splitlines()[0])
    obj["outputs"][0] = "0x00000000" if obj["outputs"][0] != "0x00000000" else "0x00000001"
    (tmp_path / "bad.jsonl").write_text(json.dumps(obj) + "\n")
    code, out, _ = cli(capsys, "check-vectors", str(tmp_path / "bad.jsonl"))
    assert code == 1 and "mismatched        1" in out


MULTIMEM = 0x7F20_0000_0000


def _multimem(*images: bytes) -> State:
    return State(multimem=tuple(Segment(MULTIMEM, image) for image in images))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, (1 << 32) - 1), min_size=2, max_size=4), st.sampled_from(["add", "min", "max", "and", "or", "xor"]))
def test_multimem_ld_reduce_integers(values, op):
    kind = {"add": "u32", "min": "s32", "max": "s32"}.get(op, "b32")
    (got,) = evaluate(f"multimem.ld_reduce.global.{op}.{kind}", [MULTIMEM], state=_multimem(*(v.to_bytes(4, "little") for v in values)))
    signed = [v - (1 << 32) if v >> 31 else v for v in values]
    expected = {
        "add": sum(values) % (1 << 32),
        "min": min(signed) % (1 << 32),
        "max": max(signed) % (1 << 32),
        "and": np.bitwise_and.reduce(values),
        "or": np.bitwise_or.reduce(values),
        "xor": np.bitwise_xor.reduce(values),
    }[op]
    assert got == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=2, max_size=4))
def test_multimem_f32_add_allows_every_order_numpy_sums(values):
    """Every left-to-right order of numpy float32 sums is an allowed result (numpy rounds each add
    to nearest even, as the accumulation at .f32 does)."""
    import itertools

    images = [np.float32(v).tobytes() for v in values]
    (got,) = evaluate("multimem.ld_reduce.global.add.f32", [MULTIMEM], state=_multimem(*images))
    for order in itertools.permutations(values):
        total = np.float32(order[0])
        for v in order[1:]:
            total = np.float32(total + np.float32(v))
        assert contains(got, int(total.view(np.uint32)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=2, max_size=3), st.sampled_from(["e4m3", "e5m2"]))
def test_multimem_fp8_add_is_every_order_of_ml_dtypes_sums(values, kind):
    """.e4m3/.e5m2 add "at the default precision ... same as the specified type": every order of
    pairwise sums, each rounded to the type by ml_dtypes (an independent implementation of the OCP
    formats), is an allowed result; a NaN or an .e4m3 overflow is a NaN."""
    import itertools

    import ml_dtypes

    dtype = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}[kind]
    images = [bytes([v, 0, 0, 0]) for v in values]
    (got,) = evaluate(f"multimem.ld_reduce.global.add.{kind}x4", [MULTIMEM], state=_multimem(*images))
    lane0 = got if isinstance(got, int) else got.lanes[-1]  # lane 0 is the least significant
    for order in itertools.permutations(values):
        total = np.array([order[0]], dtype=np.uint8).view(dtype)[0]
        for v in order[1:]:
            total = dtype(np.float32(total) + np.float32(np.array([v], dtype=np.uint8).view(dtype)[0]))
        if np.isnan(np.float32(total)):
            assert not isinstance(lane0, int) or (lane0 & 0x7F) in ((0x7F,) if kind == "e4m3" else range(0x7D, 0x80))
        else:
            bits = int(np.array([total], dtype=dtype).view(np.uint8)[0])
            assert contains(lane0, bits) or (bits & 0x7F == 0 and isinstance(lane0, int) and lane0 & 0x7F == 0)


def test_multimem_fp8_min_max_and_acc_f16():
    """min/max pick one of the values (-0 below +0); .acc::f16 sums in .f16 then rounds once."""
    image = lambda *b: bytes(b)  # noqa: E731
    (low,) = evaluate("multimem.ld_reduce.global.min.e5m2x4", [MULTIMEM], state=_multimem(image(0x3C, 0x80, 1, 0x7B), image(0xBC, 0x00, 3, 0x7A)))
    assert low == int.from_bytes(bytes([0xBC, 0x80, 1, 0x7A]), "little")
    # 0x01 (2^-9) six times: .e4m3 accumulation keeps each 2^-9 (exact), .acc::f16 too: 6 * 2^-9 = 0x06
    (acc,) = evaluate("multimem.ld_reduce.global.add.acc::f16.e4m3x4", [MULTIMEM], state=_multimem(*[image(1, 0, 0, 0)] * 6))
    assert acc == 0x06
    # 448 + 448 overflows .e4m3, which has no infinity: a NaN (its bits open)
    (big,) = evaluate("multimem.ld_reduce.global.add.e4m3x4", [MULTIMEM], state=_multimem(image(0x7E, 0, 0, 0), image(0x7E, 0, 0, 0)))
    assert not isinstance(big, int)


def test_multimem_st_and_red_reach_every_memory():
    state = _multimem((1).to_bytes(4, "little"), (5).to_bytes(4, "little"), (9).to_bytes(4, "little"))
    _, stored = run("multimem.st.global.b32", [MULTIMEM, 7], state=state)
    assert all(m.data == (7).to_bytes(4, "little") for m in stored.multimem)
    _, reduced = run("multimem.red.global.add.u32", [MULTIMEM, 10], state=state)
    assert [int.from_bytes(m.data, "little") for m in reduced.multimem] == [11, 15, 19]
    with pytest.raises(OperandError, match="not a multimem address"):
        run("multimem.st.global.b32", [MULTIMEM + 4, 7], state=state)


def test_coverage_counts_the_names_that_evaluate():
    """``python -m ptxspec.conformance.coverage``: the share of §9.7's instruction names with
    semantics; the memory chapters are what moved it."""
    from ptxspec.conformance import coverage

    table = coverage.evaluable()
    before = coverage.evaluable(("memory_access", "atomics", "mbarrier", "async_copy"))
    assert len(table) == len(before) >= 190
    for name in ("ld", "st", "atom", "red", "cvta", "mapa", "createpolicy", "cp.async.bulk.tensor", "mbarrier.arrive", "multimem.ld_reduce"):
        assert table[name] and not before[name], name
    assert not table["tex"] and not table["bra"]  # no semantics (yet)
    assert sum(table.values()) > sum(before.values()) + 40
