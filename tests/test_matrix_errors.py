"""The matrix chapter's API as a user meets it when the input is wrong (§9.7.14, §9.7.15).

Every bad input is a :class:`~ptxspec.spec.errors.PtxSpecError` whose message names the offending
qualifier, operand, lane, value or field -- never a traceback from numpy or Python -- or, where the
manual says the result is undefined, the manual's :class:`~ptxspec.semantics.warp.Undefined`
marker. On the command line (``ptxspec eval``) it is one line on standard error and exit code 2.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.conformance.cli import main
from ptxspec.semantics import matrix_data_movement as dm
from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import wgmma as wgm
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.instructions import evaluate
from ptxspec.semantics.mma import mma_fragments
from ptxspec.semantics.results import profile_named
from ptxspec.semantics.warp import Undefined
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError
from ptxspec.spec.catalogue import parse

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"  # a: 4, b: 2, c: 4 registers
MMA_SP = "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"  # a: 2, b: 2, c: 4, e, f
WGMMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
WGMMA_SP = "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16"


def raises(call, *words: str, kind=PtxSpecError) -> PtxSpecError:
    """``call()`` raises ``kind`` and its one-line message holds every one of ``words``."""
    with pytest.raises(kind) as info:
        call()
    text = info.value.one_line()
    assert "\n" not in text
    for word in words:
        assert word in text, (word, text)
    return info.value


# ---------------------------------------------------------------------------------------------
# Illegal shape / type / qualifier combinations (the catalogues)
# ---------------------------------------------------------------------------------------------

ILLEGAL = [
    # ldmatrix (§9.7.14.5.15)
    ("ldmatrix.sync.aligned.m16n16.x1.b8", ".trans is mandatory for the 16x16 matrix"),
    ("ldmatrix.sync.aligned.m16n16.x4.trans.b8", "only .x1 and .x2"),
    ("ldmatrix.sync.aligned.m8n8.x1.b8", ".m8n8 with .b8"),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.b16", ".m16n16 with .b16"),
    ("ldmatrix.sync.aligned.m8n16.x1.trans.b8x16.b6x16_p32", "`.trans` is not allowed with .m8n16"),
    ("ldmatrix.sync.aligned.m8n16.x1.b8", "qualifier .b8"),
    ("ldmatrix.sync.aligned.m8n8.x3.b16", "qualifier .x3"),
    ("ldmatrix.sync.aligned.m8n8.b16", "missing num qualifier"),
    ("ldmatrix.aligned.m8n8.x1.b16", "missing sync qualifier"),
    ("ldmatrix.sync.aligned.m8n8.x1.global.b16", "qualifier .global"),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.b8x16.b5x16_p32", "qualifier .b5x16_p32"),
    # stmatrix (§9.7.14.5.16), movmatrix (§9.7.14.5.17)
    ("stmatrix.sync.aligned.m16n8.x1.b8", ".trans is mandatory for the 16x8 matrix"),
    ("stmatrix.sync.aligned.m16n8.x1.trans.b16", "the .m16n8 shape is valid only for .b8"),
    ("stmatrix.sync.aligned.m8n8.x1.b8", '".m8n8" stores 8x8 matrices of 16-bit elements'),
    ("stmatrix.sync.aligned.m16n16.x1.trans.b8", "qualifier .m16n16"),
    ("movmatrix.sync.aligned.m8n8.b16", "missing trans qualifier"),
    ("movmatrix.sync.aligned.m8n8.trans.b8", "qualifier .b8"),
    # mma, mma.sp (§9.7.14.5.14, §9.7.14.6.3)
    ("mma.sync.aligned.m16n8k17.row.col.f32.f16.f16.f32", "qualifier .m16n8k17"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32", "qualifier .bf16"),
    ("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", "layouts .col.row"),
    ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.popc", "missing bitOp qualifier"),
    ("mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "shape .m16n8k8 is not a shape"),
    ("mma.sp.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32", "layouts .row.row"),
]

ILLEGAL_WGMMA = [
    ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16", "qualifier .m64n12k16"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.bf16", "qualifier .bf16"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.e4m3.e4m3", "shape .m64n8k16 is not a shape of the .e4m3/.e5m2"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.f16.f16", "shape .m64n8k16 is not a shape"),
    ("wgmma.mma_async.sync.m64n8k16.f32.f16.f16", "missing aligned qualifier"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.satfinite.f32.f16.f16", "qualifier .satfinite"),
    ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.xor.popc", "qualifier .xor"),
]


@pytest.mark.parametrize(("text", "words"), ILLEGAL)
def test_illegal_matrix_forms(text, words):
    error = raises(lambda: parse(text), words, kind=IllegalForm)
    assert text in error.one_line()
    # the functions that take a text report the same
    if text.startswith("ldmatrix"):
        raises(lambda: dm.ldmatrix(text, bytes(512), [0] * 32), words, kind=IllegalForm)
    elif text.startswith("mma"):
        raises(lambda: evaluate(text, [0] * 10), words, kind=IllegalForm)


@pytest.mark.parametrize(("text", "words"), ILLEGAL_WGMMA)
def test_illegal_wgmma_forms(text, words):
    raises(lambda: parse(text), words, kind=IllegalForm)
    raises(lambda: wgm.wgmma_mma_async(text, bytes(4096), 0, 0, np.zeros((128, 4), dtype=np.uint64)), words, kind=IllegalForm)


def test_the_functions_refuse_each_others_forms():
    raises(lambda: dm.ldmatrix("stmatrix.sync.aligned.m8n8.x1.b16", bytes(256), [0] * 8), "ldmatrix() evaluates ldmatrix forms, not stmatrix")
    raises(
        lambda: dm.stmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", bytes(256), [0] * 8, np.zeros((32, 1), dtype=np.uint32)), "stmatrix() evaluates stmatrix forms"
    )
    raises(lambda: dm.movmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", [0] * 32), "movmatrix() evaluates movmatrix forms")
    raises(lambda: dm.movement_layout("movmatrix.sync.aligned.m8n8.trans.b16"), "not an ldmatrix or stmatrix form")


# ---------------------------------------------------------------------------------------------
# Register counts and widths
# ---------------------------------------------------------------------------------------------


def test_mma_register_counts():
    raises(lambda: evaluate(MMA, [0] * 9), "takes 10 source operand(s)", "got 9", kind=OperandError)
    raises(lambda: evaluate(MMA_SP, [0] * 9), "takes 10 source operand(s)", "got 9", kind=OperandError)
    raises(lambda: evaluate(MMA, [[0] * 31] + [0] * 9), "operand a.0 needs 32 lane values", "got 31", kind=OperandError)
    raises(lambda: evaluate(MMA, [0] * 4 + [[0] * 33] + [0] * 5), "operand b.0 needs 32 lane values", kind=OperandError)
    raises(lambda: evaluate(MMA, [0] * 10, profile="sm_91"), "unknown profile 'sm_91'")


def test_mma_fragment_shapes():
    form = parse(MMA)
    spec = profile_named("spec")
    z = lambda r: np.zeros((32, r), dtype=np.uint64)  # noqa: E731
    raises(lambda: mma_fragments(form, z(3), z(2), z(4), profile=spec), "A fragment", "takes [..., 32, 4] registers, got shape (32, 3)", kind=OperandError)
    raises(lambda: mma_fragments(form, z(4), z(4), z(4), profile=spec), "B fragment", "takes [..., 32, 2] registers", kind=OperandError)
    raises(lambda: ml.fragment_layout("m16n8k16", "e", "f16"), "no matrix operand 'e'", kind=OperandError)
    layout = ml.fragment_layout("m16n8k16", "a", "f16")
    raises(lambda: layout.from_matrix(np.full((16, 16), 1 << 16, dtype=np.uint64)), "does not fit 16 bits", kind=OperandError)


@pytest.mark.parametrize(
    ("text", "registers", "words"),
    [
        ("stmatrix.sync.aligned.m8n8.x2.b16", np.zeros((32, 1), dtype=np.uint32), "expected shape (32, 2), got (32, 1)"),
        ("stmatrix.sync.aligned.m16n8.x4.trans.b8", np.zeros((32, 2), dtype=np.uint32), "expected shape (32, 4), got (32, 2)"),
        ("stmatrix.sync.aligned.m16n8.x1.trans.b8", np.full((32, 1), 1 << 32, dtype=np.uint64), "does not fit 32 bits"),
        ("stmatrix.sync.aligned.m8n8.x1.b16", np.full((32, 1), -1, dtype=np.int64), "does not fit 32 bits"),
        ("stmatrix.sync.aligned.m8n8.x1.b16", np.full((32, 1), [1 << 70], dtype=object), "does not fit 32 bits"),
        ("stmatrix.sync.aligned.m8n8.x1.b16", np.full((32, 1), 0.5), "integer bit patterns, got float64"),
    ],
)
def test_stmatrix_register_shapes_and_widths(text, registers, words):
    addresses = [16 * k for k in range(32)]
    raises(lambda: dm.stmatrix(text, bytes(1024), addresses, registers), text, words, kind=OperandError)


def test_movmatrix_lanes():
    raises(lambda: dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", [0] * 31), "one source register per lane (32)", kind=OperandError)
    raises(lambda: dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", [1 << 32] * 32), "does not fit 32 bits", kind=OperandError)
    raises(lambda: dm.movmatrix("movmatrix.sync.aligned.m8n8.trans.b16", [-1] * 32), "does not fit 32 bits", kind=OperandError)


def test_wgmma_register_shapes():
    image = np.zeros(4096, dtype=np.uint8)
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(2048, 128, 256)
    raises(
        lambda: wgm.wgmma_mma_async(WGMMA, image, a, b, np.zeros((128, 3), dtype=np.uint64)),
        "C fragment",
        "takes [..., 128, 4] registers, got shape (128, 3)",
        kind=OperandError,
    )
    raises(
        lambda: wgm.wgmma_mma_async(WGMMA, image, np.zeros((128, 4), dtype=np.uint64), b, np.zeros((128, 4), dtype=np.uint64)),
        "takes A's matrix descriptor",
        "got registers",
        kind=OperandError,
    )
    in_registers = parse(f"{WGMMA} {{d0, d1, d2, d3}}, {{a0, a1, a2, a3}}, descB, p, sa, sb, tb")
    raises(
        lambda: wgm.wgmma_mma_async(in_registers, image, a, b, np.zeros((128, 4), dtype=np.uint64)),
        "takes A in registers",
        "got a descriptor",
        kind=OperandError,
    )
    raises(
        lambda: wgm.wgmma_mma_async(in_registers, image, np.zeros((128, 3), dtype=np.uint64), b, np.zeros((128, 4), dtype=np.uint64)),
        "A fragment",
        "got shape (128, 3)",
        kind=OperandError,
    )
    raises(lambda: wgm.wgmma_batch(WGMMA, image, [a.encode()], [b.encode()], np.zeros((1, 128, 4), dtype=np.uint64), scale_d=5), "scale-d", kind=OperandError)


# ---------------------------------------------------------------------------------------------
# ldmatrix/stmatrix addresses (§9.7.14.5.15-16: "naturally aligned", 16-byte rows)
# ---------------------------------------------------------------------------------------------

ADDRESSED = [
    ("ldmatrix.sync.aligned.m8n8.x4.b16", 32),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.b8", 16),
    ("ldmatrix.sync.aligned.m8n16.x2.b8x16.b4x16_p64", 16),
    ("stmatrix.sync.aligned.m16n8.x2.trans.b8", 16),
]


def _apply(text: str, image, addresses):
    if text.startswith("ldmatrix"):
        return dm.ldmatrix(text, image, addresses)
    registers = np.zeros((32, len(parse(text).operands) - 1), dtype=np.uint32)
    return dm.stmatrix(text, image, addresses, registers)


@pytest.mark.parametrize(("text", "rows"), ADDRESSED)
def test_row_addresses(text, rows):
    good = [16 * k for k in range(rows)]
    assert _apply(text, bytes(16 * rows), good) is not None
    for lane in (0, rows - 1):
        bad = list(good)
        bad[lane] += 8
        raises(lambda: _apply(text, bytes(16 * rows + 16), bad), f"lane {lane}: row address {bad[lane]:#x} is not 16-byte aligned", kind=OperandError)
        bad[lane] = -16
        raises(lambda: _apply(text, bytes(16 * rows), bad), f"lane {lane}: negative address -16", kind=OperandError)
        bad[lane] = 16 * rows
        raises(
            lambda: _apply(text, bytes(16 * rows), bad),
            f"lane {lane}: row address {16 * rows:#x} + 16 bytes lies outside the {16 * rows}-byte image",
            kind=OperandError,
        )
        bad[lane] = 16.0
        raises(lambda: _apply(text, bytes(16 * rows), bad), f"lane {lane}: a row address is an integer", kind=OperandError)
    raises(lambda: _apply(text, bytes(16 * rows), good[:-1]), f"reads {rows} row addresses (threads 0-{rows - 1}); got {rows - 1}", kind=OperandError)
    # lanes beyond the ones that supply an address are not read
    if rows < 32:
        assert np.array_equal(_apply(text, bytes(16 * rows), good + [-1] * (32 - rows)), _apply(text, bytes(16 * rows), good))


def test_images():
    raises(
        lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", np.zeros(256, dtype=np.uint16), [0] * 8),
        "a shared-memory image is bytes or a 1-D uint8 array",
        kind=OperandError,
    )
    raises(lambda: dm.ldmatrix("ldmatrix.sync.aligned.m8n8.x1.b16", np.zeros((16, 16), dtype=np.uint8), [0] * 8), "shape (16, 16)", kind=OperandError)


# ---------------------------------------------------------------------------------------------
# Sparsity metadata and selectors (§9.7.14.6.1, §9.7.15.6.1)
# ---------------------------------------------------------------------------------------------

#: The manual's words, written out here: "the values 0b0000, 0b0101, 0b1010, 0b1111 are invalid
#: values for metadata and will result in undefined behavior"; "for mma.sp::ordered_metadata,
#: 0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110 are the meaningful values of indices"; .tf32:
#: "0b1110 and 0b0100 are the only meaningful values of the index".
INVALID = {0b0000, 0b0101, 0b1010, 0b1111}
ORDERED = {0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110}
TF32 = {0b1110, 0b0100}


def _every_field(value: int) -> int:
    return sum(value << (4 * k) for k in range(8))


@pytest.mark.parametrize(
    ("shape", "atype", "ordered", "meaningful"),
    [
        ("m16n8k16", "f16", False, set(range(16)) - INVALID),
        ("m16n8k32", "bf16", True, ORDERED),
        ("m16n8k8", "tf32", False, TF32),
        ("m16n8k32", "s8", False, set(range(16)) - INVALID),
    ],
)
def test_forbidden_metadata_patterns_give_undefined_rows(shape, atype, ordered, meaningful):
    layout = ml.fragment_layout(shape, "a", atype, sparse=True)
    a = np.zeros((32, layout.registers), dtype=np.uint64)
    for field in range(16):
        _, undefined = ml.expand_sparse(layout, a, np.full(32, _every_field(field), dtype=np.uint64), 0, ordered=ordered)
        assert undefined.tolist() == [field not in meaningful] * layout.rows, (field, undefined)
    # one bad field undefines its row only: row 3's first block (lane 4*3 + 0, bits 3:0)
    good = min(meaningful)
    e = np.full(32, _every_field(good), dtype=np.uint64)
    bad = min(set(range(16)) - meaningful)
    e[12] = (e[12] & ~np.uint64(0xF)) | np.uint64(bad)
    _, undefined = ml.expand_sparse(layout, a, e, 0, ordered=ordered)
    assert np.flatnonzero(undefined).tolist() == [3]


def test_mma_sp_with_a_forbidden_pattern_gives_undefined_d_rows():
    """D rows 3 (registers d0, d1 of lanes 12-15) are Undefined; the others are results."""
    e = [_every_field(0b0100)] * 32
    e[12] = _every_field(0b0100) & ~0xF  # block 0 of row 3: 0b0000, "invalid"
    d = evaluate(MMA_SP, [0] * 8 + [e, 0])
    for register in range(4):
        for lane in range(32):
            row = lane // 4 + (8 if register >= 2 else 0)
            assert isinstance(d[register].lanes[lane], Undefined) == (row == 3), (register, lane)


def test_mma_sp_selectors():
    meta = _every_field(0b0100)
    raises(lambda: evaluate(MMA_SP, [0] * 8 + [meta, 4]), "sparsity selector 4", "[0, 1, 2, 3]", "undefined behavior", kind=OperandError)
    raises(lambda: evaluate(MMA_SP, [0] * 8 + [meta, -1]), "operand f, lane 0", "-0x1 does not fit", kind=OperandError)
    raises(lambda: evaluate(MMA_SP, [0] * 8 + [meta, [0] * 31 + [1]]), "the sparsity selector f is a constant", kind=OperandError)
    raises(lambda: evaluate("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", [0] * 8 + [meta, 2]), "sparsity selector 2", "[0, 1]", kind=OperandError)
    layout = ml.fragment_layout("m16n8k16", "a", "f16", sparse=True)
    raises(
        lambda: ml.expand_sparse(layout, np.zeros((32, 2), dtype=np.uint64), np.zeros(31, dtype=np.uint64), 0),
        "expected shape (32,), got (31,)",
        kind=OperandError,
    )
    raises(lambda: ml.metadata_layout("m16n8k8", "f16"), "no mma.sp of shape m16n8k8 with .f16 A", kind=OperandError)


def test_wgmma_sp_metadata_and_selector():
    image = np.zeros(8192, dtype=np.uint8)
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(4096, 128, 256)
    c = np.zeros((128, 4), dtype=np.uint64)
    good = np.full(128, _every_field(0b0100), dtype=np.uint64)
    assert wgm.wgmma_mma_async(WGMMA_SP, image, a, b, c, sp_meta=good).registers.shape == (128, 4)
    raises(lambda: wgm.wgmma_mma_async(WGMMA_SP, image, a, b, c, sp_meta=good, sp_sel=2), "sp-sel = 2", "[0, 1]", kind=OperandError)
    raises(lambda: wgm.wgmma_mma_async(WGMMA_SP, image, a, b, c), "needs the sparsity metadata sp-meta", kind=OperandError)
    for field in sorted(INVALID):
        raises(
            lambda: wgm.wgmma_mma_async(WGMMA_SP, image, a, b, c, sp_meta=np.full(128, _every_field(field), dtype=np.uint64)),
            "sparsity metadata of rows",
            "invalid values",
            "§9.7.15.6.1",
            kind=OperandError,
        )


# ---------------------------------------------------------------------------------------------
# wgmma descriptors, images, immediates (§9.7.15.5.1.2.2, §9.7.15.5.2)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: wl.MatrixDescriptor(8), "the matrix start address 0x8 is not a multiple of 16"),
        (lambda: wl.MatrixDescriptor(0, leading_byte_offset=24), "the leading dimension byte offset 0x18 is not a multiple of 16"),
        (lambda: wl.MatrixDescriptor(0, stride_byte_offset=1 << 18), "the stride dimension byte offset 262144 does not fit"),
        (lambda: wl.MatrixDescriptor(-16), "the matrix start address -16 does not fit"),
        (lambda: wl.MatrixDescriptor(0, base_offset=8), "the base offset 8 is not a 3-bit value"),
        (lambda: wl.MatrixDescriptor(0, swizzle="16B"), "no swizzling mode '16B'"),
        (lambda: wl.MatrixDescriptor("0"), "the matrix start address '0'"),
        (lambda: wl.MatrixDescriptor.decode(1 << 15), "sets bits 0x0000000000008000 outside the fields"),
        (lambda: wl.MatrixDescriptor.decode(1 << 64), "is not a 64-bit value"),
        (lambda: wl.MatrixDescriptor.decode(-1), "is not a 64-bit value"),
    ],
)
def test_descriptor_rules(make, words):
    raises(make, words, "§9.7.15.5.1.2.2", kind=OperandError)


def test_descriptor_operands():
    image = np.zeros(4096, dtype=np.uint8)
    b = wl.MatrixDescriptor(2048, 128, 256)
    c = np.zeros((128, 4), dtype=np.uint64)
    raises(lambda: wgm.wgmma_mma_async(WGMMA, image, 1 << 15, b, c), "sets bits", kind=OperandError)
    differing = np.full(128, wl.MatrixDescriptor(0, 128, 256).encode(), dtype=np.uint64)
    differing[77] = wl.MatrixDescriptor(16, 128, 256).encode()
    raises(lambda: wgm.wgmma_mma_async(WGMMA, image, differing, b, c), "a-desc differs between threads", kind=OperandError)


def test_image_too_small_for_the_descriptor():
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(2048, 128, 256)
    c = np.zeros((128, 4), dtype=np.uint64)
    # B: K=16 rows x N=8, K-major, no swizzle: 2048 + (N/8 - 1) * SBO + (K/8 - 1) * LBO + 8 * 16 bytes
    raises(lambda: wgm.wgmma_mma_async(WGMMA, np.zeros(2048, dtype=np.uint8), a, b, c), "beyond the image of 0x800 bytes", kind=OperandError)
    raises(
        lambda: wl.read_matrix(bytes(1024), a, 64, 16, "f16", "K"),
        "the matrix reaches shared-memory byte 0x7ff, beyond the image of 0x400 bytes",
        kind=OperandError,
    )
    raises(
        lambda: wgm.wgmma_batch(WGMMA, np.zeros((2, 1024), dtype=np.uint8), [a.encode()] * 2, [b.encode()] * 2, np.zeros((2, 128, 4), dtype=np.uint64)),
        "instance 0",
        "beyond the image",
        kind=OperandError,
    )
    raises(lambda: wl.read_matrix(np.zeros(4096), a, 64, 16, "f16", "K"), "a shared-memory image is bytes or a 1-D uint8 array", kind=OperandError)
    raises(lambda: wl.read_matrix(bytes(4096), a, 64, 16, "f16", "X"), "major-ness must be 'K' or 'MN', got 'X'", kind=OperandError)
    raises(lambda: wl.read_matrix(bytes(4096), a, 64, 16, "f8", "K"), "no wgmma multiplicand type .f8", kind=OperandError)


@pytest.mark.parametrize(
    ("text", "keywords", "words"),
    [
        (WGMMA, {"imm_scale_a": 2}, "imm-scale-a must be 1 or -1, got 2"),
        (WGMMA, {"imm_scale_b": 0}, "imm-scale-b must be 1 or -1, got 0"),
        (WGMMA, {"imm_trans_a": 2}, "imm-trans-a = 2"),
        (WGMMA, {"imm_trans_b": -1}, "imm-trans-b = -1"),
        # "imm-trans-a, imm-trans-b ... only valid for .f16/.bf16": the other forms have no such operand
        ("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", {"imm_trans_b": 1}, "has no operand imm-trans-b"),
        ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", {"imm_trans_a": 1}, "has no operand imm-trans-a"),
        ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8", {"imm_trans_b": 1}, "has no operand imm-trans-b"),
        # "imm-scale ... negate": only a floating-point matrix has a sign to flip
        ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8", {"imm_scale_a": -1}, "imm-scale-a = -1 negates a floating-point matrix"),
    ],
)
def test_wgmma_immediates(text, keywords, words):
    image = np.zeros(4096, dtype=np.uint8)
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(2048, 128, 256)
    raises(lambda: wgm.wgmma_mma_async(text, image, a, b, np.zeros((128, 4), dtype=np.uint64), **keywords), words, kind=OperandError)
    raises(lambda: wgm.wgmma_batch(text, image, [a.encode()], [b.encode()], np.zeros((1, 128, 4), dtype=np.uint64), **keywords), words, kind=OperandError)


# ---------------------------------------------------------------------------------------------
# The command line: one line, exit 2
# ---------------------------------------------------------------------------------------------


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["eval", *argv])
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ((MMA,), "takes 10 source operand(s) (a.0, a.1, a.2, a.3, b.0, b.1, c.0, c.1, c.2, c.3), got 0"),
        ((MMA, "0x100000000", *["0"] * 9), "operand a.0"),
        ((MMA, "1,2,3", *["0"] * 9), "32 comma-separated lane values"),
        ((MMA, "zz", *["0"] * 9), "'zz' is not a bit pattern"),
        (("mma.sync.aligned.m16n8k17.row.col.f32.f16.f16.f32", *["0"] * 10), "qualifier .m16n8k17"),
        (("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", "0x10000000000000000", "0", "0", "0"), "does not fit"),
        ((MMA_SP, *["0"] * 8, "0x44444444", "5"), "sparsity selector 5"),
        ((MMA_SP, *["0"] * 8, "0x44444444", ",".join(["0"] * 31 + ["1"])), "the sparsity selector f is a constant"),
        (("ldmatrix.sync.aligned.m8n8.x1.b16", "0"), "ldmatrix.sync.aligned.m8n8.x1.b16"),
        (("ldmatrix.sync.aligned.m16n16.x1.b8", "0"), ".trans is mandatory"),
        ((WGMMA, "0"), "takes register operands only"),
    ],
)
def test_cli_errors_are_one_line_with_exit_2(capsys, argv, words):
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("ptxspec: error: ") and "Traceback" not in err
    assert words in err, err


def test_cli_prints_the_undefined_marker_for_forbidden_metadata(capsys):
    """The manual's "undefined behavior" for invalid metadata is a result, not an error."""
    code, out, err = _cli(capsys, MMA_SP, *["0"] * 8, "0", "0")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines and all(line.startswith("d.") and line.endswith(": undefined in every lane") for line in lines)


# ---------------------------------------------------------------------------------------------
# Whatever a caller passes, ldmatrix/stmatrix/movmatrix answer or raise PtxSpecError
# ---------------------------------------------------------------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(1 << 70), 1 << 70),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.lists(st.integers(-(1 << 40), 1 << 40), max_size=40),
    st.binary(max_size=600),
    st.lists(st.one_of(st.integers(0, 4096), st.floats(), st.none(), st.lists(st.integers(0, 9), max_size=3)), max_size=34),
)
FORMS = st.sampled_from(
    [
        "ldmatrix.sync.aligned.m8n8.x2.trans.b16",
        "ldmatrix.sync.aligned.m16n16.x1.trans.b8",
        "ldmatrix.sync.aligned.m8n16.x1.b8x16.b6x16_p32",
        "stmatrix.sync.aligned.m16n8.x1.trans.b8",
        "stmatrix.sync.aligned.m8n8.x1.b16",
        "movmatrix.sync.aligned.m8n8.trans.b16",
        "ldmatrix.sync.aligned.m16n16.x2.b8",
        "stmatrix.sync.aligned.m8n8.x5.b16",
        "nonsense",
    ]
)


@given(
    FORMS,
    st.one_of(JUNK, st.just(bytes(512))),
    st.one_of(JUNK, st.just([16 * k for k in range(32)])),
    st.one_of(JUNK, st.just(np.zeros((32, 1), dtype=np.uint32))),
)
def test_data_movement_never_raises_anything_but_ptxspec_errors(text, image, addresses, registers):
    try:
        if text.startswith("movmatrix"):
            dm.movmatrix(text, registers)
        elif text.startswith("stmatrix"):
            dm.stmatrix(text, image, addresses, registers)
        else:
            dm.ldmatrix(text, image, addresses)
    except PtxSpecError as error:
        assert error.one_line() and "\n" not in error.one_line()


@given(JUNK)
def test_a_form_is_text_or_a_form(thing):
    if not isinstance(thing, str):
        raises(lambda: dm.ldmatrix(thing, bytes(256), [0] * 8), "an instruction form is its text or a parsed Form")


# ---------------------------------------------------------------------------------------------
# Register values wider than their register (with the fixes to mma._lanes, FragmentLayout /
# WarpgroupFragmentLayout.to_matrix, one_descriptor, wgmma_mma_async's scale-d)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("registers", "words"),
    [
        ([1 << 32] + [0] * 9, "operand a.0, lane 0: 0x100000000 does not fit its 32-bit register"),
        ([0] * 4 + [[0] * 31 + [-1]] + [0] * 5, "operand b.0, lane 31"),
        ([0] * 9 + [1 << 64], "operand c.3, lane 0"),
        ([1.5] + [0] * 9, "operand a.0 is one integer or 32 lane values, got 1.5"),
        ([[0] * 31 + ["x"]] + [0] * 9, "operand a.0, lane 31: a register holds an integer bit pattern, got 'x'"),
    ],
)
def test_mma_lane_values_must_fit_their_registers(registers, words):
    raises(lambda: evaluate(MMA, registers), words, kind=OperandError)


def test_mma_f64_and_metadata_widths():
    raises(lambda: evaluate("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", [1 << 64, 0, 0, 0]), "operand a.0, lane 0", "64-bit register", kind=OperandError)
    raises(lambda: evaluate(MMA_SP, [0] * 8 + [1 << 32, 0]), "operand e, lane 0", "32-bit register", kind=OperandError)
    layout = ml.fragment_layout("m16n8k16", "a", "f16", sparse=True)
    raises(
        lambda: ml.expand_sparse(layout, np.zeros((32, 2), dtype=np.uint64), np.full(32, 1 << 40, dtype=np.uint64), 0),
        "metadata operand e",
        "does not fit 32 bits",
        kind=OperandError,
    )
    raises(lambda: ml.fragment_layout("m16n8k16", "a", "f16").to_matrix(np.full((32, 4), 1 << 33, dtype=np.uint64)), "does not fit 32 bits", kind=OperandError)


@pytest.mark.parametrize(
    ("c", "words"),
    [
        (np.full((128, 4), 1 << 32, dtype=np.uint64), "does not fit 32 bits"),
        (np.full((128, 4), -1, dtype=np.int64), "negative value -1"),
        (np.full((128, 4), 0.5), "integer bit patterns, got float64"),
    ],
)
def test_wgmma_accumulators_must_fit_their_registers(c, words):
    image = np.zeros(4096, dtype=np.uint8)
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(2048, 128, 256)
    raises(lambda: wgm.wgmma_mma_async(WGMMA, image, a, b, c), "C fragment", words, kind=OperandError)


def test_wgmma_descriptor_value_and_scale_d():
    image = np.zeros(4096, dtype=np.uint8)
    a, b = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(2048, 128, 256)
    c = np.zeros((128, 4), dtype=np.uint64)
    raises(lambda: wgm.wgmma_mma_async(WGMMA, image, 1 << 64, b, c), "is not a 64-bit value", kind=OperandError)
    raises(lambda: wgm.wgmma_mma_async(WGMMA, image, a, b, c, scale_d=5), "scale-d is a predicate", kind=OperandError)
