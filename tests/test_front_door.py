"""The one registry and its front doors (semantics/instructions.py): every instruction -- scalar,
warp, matrix, and those of memory -- is reached by ``evaluate``/``execute``/``check`` and gives what
its readable function gives; the operand check is the same for the API and the command line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import instructions as ins
from ptxspec.semantics import matrix_data_movement as dm
from ptxspec.semantics.state import State
from ptxspec.semantics.wgmma import wgmma_mma_async
from ptxspec.spec.catalogue import CATALOGUE, parse
from ptxspec.spec.errors import OperandError, PtxSpecError
from test_wgmma import _batch, batches


def _lanes(column) -> tuple[int, ...]:
    return tuple(int(v) for v in column)


# ---------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------


def test_every_registered_key_is_a_catalogue_family_and_every_matrix_family_is_registered():
    ins._load_chapters()
    for key in ins.SEMANTICS:
        CATALOGUE.family(key)
    kinds = {key: entry.operands for key, entry in ins.SEMANTICS.items()}
    for family in CATALOGUE.families():
        if family.opcode == "mma":
            assert kinds[family.key] == ins.WARP_LANES, family.key
        elif family.opcode == "wgmma" and family.key.split(".")[1] not in ("fence", "commit_group", "wait_group"):
            assert kinds[family.key] == ins.WARPGROUP_MEMORY, family.key
        elif family.opcode in ("ldmatrix", "stmatrix"):
            assert kinds[family.key] == ins.WARP_MEMORY, family.key
    assert kinds["movmatrix"] == kinds["shfl.sync"] == ins.WARP_LANES
    assert kinds[parse("fma.rn.f32").family.key] == kinds[parse("add.s32").family.key] == ins.REGISTERS


def test_registering_a_family_twice_or_an_unknown_family_is_refused():
    ins._load_chapters()
    key = next(iter(ins.SEMANTICS))
    with pytest.raises(ValueError, match="two semantic functions"):
        ins.semantic(key)(lambda form: 0)
    with pytest.raises(KeyError):
        ins.semantic("no.such.family")(lambda form: 0)


# ---------------------------------------------------------------------------------------------
# Instructions of memory: the front door gives what the readable functions give
# ---------------------------------------------------------------------------------------------


def _rows(rng) -> tuple[int, ...]:
    """Row addresses, 16-byte aligned, inside a 1 KiB image, one per lane."""
    return tuple(int(a) for a in rng.integers(0, 64, size=32) * 16)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(
        ["ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16"]
    ),
    st.integers(0, 2**32 - 1),
)
def test_ldmatrix_through_the_registry_is_ldmatrix(text, seed):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, size=1024, dtype=np.uint8)
    p = _rows(rng)
    outcome = ins.execute(text, [p], state=State(image))
    direct = dm.ldmatrix(text, image, p)
    assert [r.lanes for r in outcome.results] == [_lanes(direct[:, r]) for r in range(direct.shape[1])]
    assert outcome.state == State(image)  # a load leaves memory as it was


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["stmatrix.sync.aligned.m8n8.x1.shared.b16", "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"]), st.integers(0, 2**32 - 1))
def test_stmatrix_through_the_registry_is_stmatrix_and_a_new_state(text, seed):
    rng = np.random.default_rng(seed)
    before = State(rng.integers(0, 256, size=1024, dtype=np.uint8))
    count = len(parse(text).inputs) - 1
    p = tuple(int(a) for a in rng.permutation(64)[:32] * 16)  # distinct rows: no overlapping stores
    registers = rng.integers(0, 1 << 32, size=(32, count), dtype=np.uint64)
    outcome = ins.execute(text, [p, *(_lanes(registers[:, r]) for r in range(count))], state=before)
    assert outcome.results == ()
    assert outcome.state == State(dm.stmatrix(text, before.shared_image(), p, registers))
    assert before.shared_image().flags.writeable is False  # the old state is a value: nothing changed it
    loaded = ins.evaluate(text.replace("stmatrix", "ldmatrix"), [p], state=outcome.state)
    assert [r.lanes for r in loaded] == [_lanes(registers[:, r]) for r in range(count)]  # what was stored loads back


def test_movmatrix_through_the_registry_is_movmatrix():
    text = "movmatrix.sync.aligned.m8n8.trans.b16"
    a = tuple(range(0x10000, 0x10000 + 32 * 0x10001, 0x10001))
    (d,) = ins.evaluate(text, [a])
    assert d.lanes == _lanes(dm.movmatrix(text, a))
    (undefined,) = ins.evaluate(text, [a], active=0xFFFF)
    assert all(0x12345678 in lane for lane in undefined.lanes)


def _wgmma_inputs(form, d_regs, meta, selector, scale_d, scale_a, scale_b, trans_a, trans_b, a, desc_b):
    """The registry's inputs of one wgmma instance, by the form's operand names."""
    values = {f"d.{r}": _lanes(d_regs[:, r]) for r in range(d_regs.shape[1])}
    if np.ndim(a) == 2:
        values.update({f"a.{r}": _lanes(a[:, r]) for r in range(a.shape[1])})
    else:
        values["a_desc"] = int(a)
    values.update(
        b_desc=int(desc_b),
        scale_d=int(scale_d),
        imm_scale_a=scale_a & 0xFFFFFFFF,
        imm_scale_b=scale_b & 0xFFFFFFFF,
        imm_trans_a=trans_a,
        imm_trans_b=trans_b,
        sp_sel=selector,
    )
    if meta is not None:
        values["sp_meta"] = _lanes(meta)
    return [values[o.name] for o in form.inputs]


@settings(max_examples=15, deadline=None)
@given(batches())
def test_wgmma_through_the_registry_is_wgmma_mma_async(case):
    text, registers, n, _, trans_a, trans_b, selector, scale_d, (scale_a, scale_b), profile, seed = case
    form, images, a, desc_b, c_regs, meta, _ = _batch(text, registers, n, 1, seed, trans_a=trans_a, trans_b=trans_b, selector=selector)
    if "s32" in text:
        scale_a = scale_b = 1
    kw = dict(imm_trans_a=trans_a, imm_trans_b=trans_b, sp_sel=selector, profile=profile)
    if "s32" not in text:
        kw.update(imm_scale_a=scale_a, imm_scale_b=scale_b)
    direct = wgmma_mma_async(form, images[0], a[0], desc_b[0], c_regs[0], scale_d=bool(scale_d[0]), sp_meta=None if meta is None else meta[0], **kw)
    inputs = _wgmma_inputs(form, c_regs[0], None if meta is None else meta[0], selector, scale_d[0], scale_a, scale_b, trans_a, trans_b, a[0], desc_b[0])
    outcome = ins.execute(form, inputs, profile, state=State(images[0]))
    expected = [tuple(int(v) if isinstance(v, (int, np.integer)) else v for v in direct.registers[:, r]) for r in range(direct.registers.shape[1])]
    assert [r.lanes for r in outcome.results] == expected
    assert outcome.state == State(images[0])


def test_wgmma_with_inactive_threads_is_undefined():
    form, images, a, desc_b, c_regs, meta, _ = _batch("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16", False, 8, 1, 5)
    inputs = _wgmma_inputs(form, c_regs[0], None, 0, 1, 1, 1, 0, 0, a[0], desc_b[0])
    results = ins.evaluate(form, inputs, active=(1 << 127) - 1, state=State(images[0]))
    assert all(0xDEADBEEF in lane for r in results for lane in r.lanes)


# ---------------------------------------------------------------------------------------------
# One operand check, located by the command line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sources", "kwargs", "index", "words"),
    [
        ("add.s32", [1], {}, None, "takes 2 source operand(s) (a, b), got 1"),
        ("add.s32", [1, 1 << 32], {}, 1, "operand b of add.s32 is a .s32 register (32 bits); 0x100000000 does not fit"),
        ("add.s32", [1, 2.5], {}, 1, "2.5 does not fit"),
        ("shfl.sync.idx.b32", [(0,) * 31, 0, 0, 0], {}, 0, "operand a needs 32 lane values, got 31"),
        ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", [(1 << 64,) * 32], {"state": State(bytes(256))}, 0, "operand p, lane 0"),
    ],
)
def test_check_sources_names_the_operand(text, sources, kwargs, index, words):
    with pytest.raises(ins.SourceError) as raised:
        ins.evaluate(text, sources, **kwargs)
    assert raised.value.operand == index and words in raised.value.message, raised.value.message


@pytest.mark.parametrize(
    ("text", "sources", "kwargs", "words"),
    [
        ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", [0], {}, "reads memory: give its state"),
        ("add.s32", [1, 2], {"state": State()}, "reads no memory"),
        ("add.s32", [1, 2], {"active": 1}, "not a warp-level instruction"),
        ("shfl.sync.idx.b32", [0, 0, 0, 0], {"active": 1 << 32}, "32-bit mask"),
        ("stmatrix.sync.aligned.m8n8.x1.shared.b16", [0, 0], {"state": State(bytes(256)), "active": 1}, "cannot hold undefined bytes"),
        ("wgmma.fence.sync.aligned", [], {}, "no semantics implemented"),
    ],
)
def test_front_door_refusals_are_errors_not_guesses(text, sources, kwargs, words):
    with pytest.raises(PtxSpecError) as raised:
        ins.evaluate(text, sources, **kwargs)
    assert words in raised.value.message, raised.value.message


def test_command_line_refuses_an_instruction_of_memory_with_exit_2(capsys):
    from ptxspec.conformance.cli import main

    with pytest.raises(SystemExit) as done:
        main(["eval", "ldmatrix.sync.aligned.m8n8.x1.shared.b16", "0"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "register operands only" in err and "Traceback" not in err


def test_check_compares_the_state_too():
    text = "stmatrix.sync.aligned.m8n8.x1.shared.b16"
    p = tuple(16 * (lane % 8) for lane in range(32))
    before = State(bytes(256))
    outcome = ins.execute(text, [p, 0x01020304], state=before)
    assert ins.check(text, [p, 0x01020304], [], state=before, observed_state=outcome.state)
    assert not ins.check(text, [p, 0x01020304], [], state=before, observed_state=before)
    with pytest.raises(OperandError):
        ins.check(text, [p], [], state=before)
