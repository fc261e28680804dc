"""The wgmma operand layouts (semantics/wgmma_layout.py): the matrix descriptor, the canonical
shared-memory layouts and swizzles, the register fragments of the warpgroup, the sparse A, and
their composition into the operands of a wgmma form.

Independent oracles: the manual's own worked examples and its table of canonical layouts,
evaluated here by a small evaluator of the CuTe notation the manual writes them in; the CuTe
``Swizzle<B, M, S>`` definition the manual names; the 128-byte swizzle's 8 x 8 pattern written
out; the warp-level layouts of semantics/matrix_layout.py for each warp's 16 rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.spec import wgmma as wg
from ptxspec.spec.catalogue import CATALOGUE, Form, parse
from ptxspec.spec.errors import OperandError

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}

# ---------------------------------------------------------------------------------------------
# The descriptor (§9.7.15.5.1.2.2)
# ---------------------------------------------------------------------------------------------


def test_descriptor_fields_sit_where_the_table_puts_them():
    """ "13-0: start address; 29-16: leading dimension byte offset; 45-32: stride dimension byte
    offset; 51-49: base offset; 63-62: swizzle (0 none, 1 128B, 2 64B, 3 32B)", each address
    encoded as "(x & 0x3FFFF) >> 4"."""
    D = wl.MatrixDescriptor
    assert D(16, 0, 0).encode() == 1
    assert D(0x3FFF0, 0, 0).encode() == 0x3FFF
    assert D(0, 16, 0).encode() == 1 << 16
    assert D(0, 0, 16).encode() == 1 << 32
    assert D(0, 0, 0, base_offset=5).encode() == 5 << 49
    assert [D(0, 0, 0, swizzle=s).encode() >> 62 for s in ("none", "128B", "64B", "32B")] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("lbo", "sbo", "lbo_code", "sbo_code"),
    # §9.7.15.5.1.2.1.3's examples: "encoding of LBO in the descriptor: (LBO) >> 4 = 16", ...
    [(64 * 4, 32 * 4, 16, 8), (128 * 2, 64 * 2, 16, 8), (128 * 2, 256 * 2, 16, 32), (256 * 2, 512 * 2, 32, 64)],
)
def test_descriptor_encodes_the_manual_examples(lbo, sbo, lbo_code, sbo_code):
    value = wl.MatrixDescriptor(0, lbo, sbo).encode()
    assert (value >> 16) & 0x3FFF == lbo_code and (value >> 32) & 0x3FFF == sbo_code


@given(
    start=st.integers(0, (1 << 14) - 1),
    lbo=st.integers(0, (1 << 14) - 1),
    sbo=st.integers(0, (1 << 14) - 1),
    base=st.integers(0, 7),
    swizzle=st.sampled_from(["none", "128B", "64B", "32B"]),
)
def test_descriptor_round_trips(start, lbo, sbo, base, swizzle):
    d = wl.MatrixDescriptor(start << 4, lbo << 4, sbo << 4, base, swizzle)
    value = d.encode()
    assert 0 <= value < 1 << 64
    assert wl.MatrixDescriptor.decode(value) == d
    assert wl.MatrixDescriptor.decode(value).encode() == value


@pytest.mark.parametrize("field", ["start_address", "leading_byte_offset", "stride_byte_offset"])
def test_descriptor_byte_fields_have_the_manual_limits(field):
    ok = {"start_address": 0, "leading_byte_offset": 0, "stride_byte_offset": 0}
    for good in (0, 16, (1 << 18) - 16):
        wl.MatrixDescriptor(**dict(ok, **{field: good}))
    for bad, words in (((1 << 18), "14-bit field"), (-16, "14-bit field"), (8, "multiple of 16"), (0x1234, "multiple of 16")):
        with pytest.raises(OperandError, match=words):
            wl.MatrixDescriptor(**dict(ok, **{field: bad}))


def test_descriptor_small_fields_have_their_limits():
    wl.MatrixDescriptor(0, base_offset=7)
    with pytest.raises(OperandError, match="3-bit"):
        wl.MatrixDescriptor(0, base_offset=8)
    with pytest.raises(OperandError, match="swizzling mode"):
        wl.MatrixDescriptor(0, swizzle="16B")
    with pytest.raises(OperandError, match="outside the fields"):
        wl.MatrixDescriptor.decode(1 << 14)
    with pytest.raises(OperandError, match="outside the fields"):
        wl.MatrixDescriptor.decode(1 << 55)
    with pytest.raises(OperandError, match="64-bit"):
        wl.MatrixDescriptor.decode(1 << 64)


def test_base_offset_follows_the_formula():
    """ "The base offset is 0 when the pattern starts at a 1024/512/256-byte boundary; otherwise
    base offset = (pattern start addr >> 0x7) & 0x7"."""
    assert wl.base_offset_for(4096, "128B") == 0 and wl.base_offset_for(4096 + 384, "128B") == 3
    assert wl.base_offset_for(512 * 3, "64B") == 0 and wl.base_offset_for(512 + 128, "64B") == 5
    assert wl.base_offset_for(256 * 7, "32B") == 0 and wl.base_offset_for(128, "32B") == 1


# ---------------------------------------------------------------------------------------------
# Canonical layouts (§9.7.15.5.1.2.1.3), evaluated from the manual's CuTe notation
# ---------------------------------------------------------------------------------------------


def cute(layout, *coords) -> int:
    """Evaluate a CuTe layout ``(shape, stride)`` of two modes at one (flat) index per mode:
    within a mode the first sub-mode runs fastest."""
    shape, stride = layout
    offset = 0
    for index, sub_shape, sub_stride in zip(coords, shape, stride):
        sub_shape = sub_shape if isinstance(sub_shape, tuple) else (sub_shape,)
        sub_stride = sub_stride if isinstance(sub_stride, tuple) else (sub_stride,)
        for j, (s, d) in enumerate(zip(sub_shape, sub_stride)):
            last = j == len(sub_shape) - 1
            offset += (index if last else index % s) * d
            index //= s
    return offset


def cute_swizzle(B: int, M: int, S: int, x: int) -> int:
    """CuTe's ``Swizzle<B, M, S>``: XOR the B bits at [M, M+B) with the bits at [M+S, M+S+B)."""
    mask = ((1 << B) - 1) << (M + S)
    return x ^ ((x & mask) >> S)


SWIZZLE_B = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def canonical(major: str, swizzle: str, T: int, m: int, k: int, LBO: int, SBO: int):
    """§9.7.15.5.1.2.1.3's table, as written (units: elements)."""
    if major == "MN":
        if swizzle == "none":
            return ((T, 1, m), (8, k)), ((1, T, SBO), (1 * T, LBO))
        r = {"32B": 2, "64B": 4, "128B": 8}[swizzle]
        return ((T, r, m), (8, k)), ((1, T, LBO), (r * T, SBO))
    if swizzle == "none":
        return ((8, m), (T, 2 * k)), ((1 * T, SBO), (1, LBO))
    r = {"32B": 2, "64B": 4, "128B": 8}[swizzle]
    return ((8, m), (T, 2 * k)), ((r * T, SBO), (1, T))


def _check_against(layout, swizzle: str, bits: int, start: int, descriptor, element_type, major, mn_extent, k_extent):
    mn, k = np.meshgrid(np.arange(mn_extent), np.arange(k_extent), indexing="ij")
    byte, bit = wl.element_address(descriptor, element_type, mn, k, major)
    for a in range(mn_extent):
        for b in range(k_extent):
            offset_bits = cute(layout, a, b) * bits
            expected = start + cute_swizzle(SWIZZLE_B[swizzle], 4, 3, offset_bits // 8)
            assert (int(byte[a, b]), int(bit[a, b])) == (expected, offset_bits % 8), (a, b)


@pytest.mark.parametrize(
    ("major", "swizzle", "element_type", "exact", "lbo", "sbo", "extent"),
    [
        # "K-Major, no swizzling and tf32 type: Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
        # "LBO encoded (LBO) >> 4 = 16", "SBO encoded (SBO) >> 4 = 8".
        ("K", "none", "tf32", (((8, 2), (4, 4)), ((4, 32), (1, 64))), 256, 128, (16, 16)),
        # "K-Major, 32B swizzling and tf32 type: Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
        # "SBO encoded 16"; only K < 8 (32 bytes: one row of the swizzle atom, see the notes).
        ("K", "32B", "tf32", (((8, 2), (4, 4)), ((8, 64), (1, 4))), 16, 256, (16, 8)),
        # "MN-Major, no swizzling and bf16 type: Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))".
        ("MN", "none", "bf16", (((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128))), 256, 128, (16, 16)),
        # "MN-Major, 32B swizzling and bf16 type: Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))".
        ("MN", "32B", "bf16", (((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256))), 256, 512, (32, 16)),
        # "MN-Major, 64B swizzling and bf16 type: Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))".
        ("MN", "64B", "bf16", (((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512))), 512, 1024, (64, 16)),
    ],
)
def test_the_manual_examples(major, swizzle, element_type, exact, lbo, sbo, extent):
    for start in (0, 8192):
        d = wl.MatrixDescriptor(start, lbo, sbo, 0, swizzle)
        _check_against(exact, swizzle, BITS[element_type], start, d, element_type, major, *extent)


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("element_type", ["f16", "tf32", "e4m3", "b1"])
def test_the_canonical_layout_table(major, swizzle, element_type):
    bits = BITS[element_type]
    T = 128 // bits
    width = wl.SWIZZLE_BYTES[swizzle]
    m = 2
    k = 1 if major == "K" and swizzle != "none" else 2
    if major == "K":
        lbo, sbo = (128 * 2 * m, 128) if swizzle == "none" else (16, 8 * width * 2)
        extent = (8 * m, T * 2 * k)
        if swizzle != "none":
            extent = (8 * m, min(T * 2 * k, width * 8 // bits))
    else:
        per = T * (width // 16)
        lbo, sbo = (128 * 2, 128 * 8) if swizzle == "none" else (8 * width * 2, 8 * width * 4)
        extent = (per * m, 8 * k)
    layout = canonical(major, swizzle, T, m, k, lbo * 8 // bits, sbo * 8 // bits)
    start = 1024 * 3
    d = wl.MatrixDescriptor(start, lbo, sbo, 0, swizzle)
    _check_against(layout, swizzle, bits, start, d, element_type, major, *extent)


#: The 128-byte swizzle as figure 156 draws one 1024-byte pattern: row r (128 bytes) stores its
#: 16-byte chunk c at position PATTERN_128B[r][c].
PATTERN_128B = (
    (0, 1, 2, 3, 4, 5, 6, 7),
    (1, 0, 3, 2, 5, 4, 7, 6),
    (2, 3, 0, 1, 6, 7, 4, 5),
    (3, 2, 1, 0, 7, 6, 5, 4),
    (4, 5, 6, 7, 0, 1, 2, 3),
    (5, 4, 7, 6, 1, 0, 3, 2),
    (6, 7, 4, 5, 2, 3, 0, 1),
    (7, 6, 5, 4, 3, 2, 1, 0),
)


def test_128B_swizzle_is_the_figure_pattern():
    d = wl.MatrixDescriptor(2048, 16, 1024, 0, "128B")
    for row in range(16):
        for col in range(64):  # 64 .f16 = one 128-byte row
            byte, _ = wl.element_address(d, "f16", row, col, "K")
            chunk, within = divmod(2 * col, 16)
            assert int(byte) == 2048 + (row // 8) * 1024 + (row % 8) * 128 + PATTERN_128B[row % 8][chunk] * 16 + within


@pytest.mark.parametrize(("swizzle", "rows_per_phase", "chunks"), [("64B", 2, 4), ("32B", 4, 2)])
def test_narrow_swizzles_repeat_at_their_boundary(swizzle, rows_per_phase, chunks):
    """64B: rows of 64 bytes, the pattern repeats every 512 bytes (8 rows); 32B: 32-byte rows,
    every 256 bytes. Within a pattern, the 16-byte chunk c of row r is at c XOR (the pattern's
    128-byte line of the row)."""
    width = wl.SWIZZLE_BYTES[swizzle]
    d = wl.MatrixDescriptor(4096, 16, 8 * width, 0, swizzle)
    for row in range(16):
        for col in range(width // 2):
            byte, _ = wl.element_address(d, "bf16", row, col, "K")
            chunk, within = divmod(2 * col, 16)
            line = (row % 8) // rows_per_phase
            assert chunk < chunks
            assert int(byte) == 4096 + (row // 8) * 8 * width + (row % 8) * width + (chunk ^ line) * 16 + within


@pytest.mark.parametrize("swizzle", ["128B", "64B", "32B"])
def test_base_offset_moves_the_pattern_with_its_start(swizzle):
    """A pattern that starts off its boundary, described with the manual's base offset, is the
    aligned pattern moved: address(start P) - P == address(start 0)."""
    mn, k = np.meshgrid(np.arange(16), np.arange(wl.SWIZZLE_BYTES[swizzle] // 2), indexing="ij")
    aligned, _ = wl.element_address(wl.MatrixDescriptor(0, 16, 8 * wl.SWIZZLE_BYTES[swizzle], 0, swizzle), "f16", mn, k, "K")
    for start in (128, 384, 896, 1024 + 640):
        d = wl.MatrixDescriptor(start, 16, 8 * wl.SWIZZLE_BYTES[swizzle], wl.base_offset_for(start, swizzle), swizzle)
        moved, _ = wl.element_address(d, "f16", mn, k, "K")
        np.testing.assert_array_equal(moved - start, aligned)


def test_k_major_swizzled_rows_hold_at_most_the_swizzle_width():
    d = wl.MatrixDescriptor(0, 16, 256, 0, "32B")
    with pytest.raises(OperandError, match="at most 32 bytes"):
        wl.read_matrix(bytes(4096), d, 64, 32, "f16", "K")


# ---------------------------------------------------------------------------------------------
# read_matrix / write_matrix
# ---------------------------------------------------------------------------------------------


def packed_descriptor(start: int, swizzle: str, major: str, bits: int, mn: int, k: int, order: int):
    """LBO/SBO of a matrix with no two elements in one place (``order`` picks which of the two
    strides is the outer one)."""
    width = wl.SWIZZLE_BYTES[swizzle]
    base = wl.base_offset_for(start, swizzle)
    if major == "K":
        if swizzle == "none":
            groups, chunks = -(-mn // 8), -(-k * bits // 128)
            lbo, sbo = (128 * groups, 128) if order else (128, 128 * chunks)
        else:
            lbo, sbo = 16, 8 * width * (1 + order)
    else:
        if swizzle == "none":
            groups, kgroups = -(-mn * bits // 128), -(-k // 8)
            lbo, sbo = (128 * groups, 128) if order else (128, 128 * kgroups)
        else:
            atoms, kgroups = -(-mn * bits // (8 * width)), -(-k // 8)
            lbo, sbo = (8 * width, 8 * width * atoms) if order else (8 * width * kgroups, 8 * width)
    return wl.MatrixDescriptor(start, lbo, sbo, base, swizzle)


@st.composite
def matrices(draw):
    element_type = draw(st.sampled_from(sorted(BITS)))
    bits = BITS[element_type]
    operand = draw(st.sampled_from(["a", "b"]))
    swizzle = draw(st.sampled_from(["none", "32B", "64B", "128B"]))
    major = draw(st.sampled_from(["K", "MN"]))
    k = 256 // bits  # one wgmma's K: 32 bytes
    mn = 64 if operand == "a" else draw(st.sampled_from([8, 16, 24, 64, 256]))
    start = draw(st.integers(0, 1024)) * 16
    d = packed_descriptor(start, swizzle, major, bits, mn, k, draw(st.integers(0, 1)))
    rows, cols = (mn, k) if operand == "a" else (k, mn)
    seed = draw(st.integers(0, 2**32 - 1))
    matrix = np.random.default_rng(seed).integers(0, 1 << bits, size=(rows, cols), dtype=np.uint64)
    return element_type, operand, major, d, matrix, seed


@settings(max_examples=60, deadline=None)
@given(matrices())
def test_write_then_read_round_trips(case):
    element_type, operand, major, d, matrix, seed = case
    image = np.random.default_rng(seed + 1).integers(0, 256, size=1 << 16, dtype=np.uint8)
    written = wl.write_matrix(image, d, matrix, element_type, major, operand=operand)
    np.testing.assert_array_equal(wl.read_matrix(written, d, *matrix.shape, element_type, major, operand=operand), matrix)
    np.testing.assert_array_equal(wl.read_matrix(bytes(written), d.encode(), *matrix.shape, element_type, major, operand=operand), matrix)
    # Only the matrix's bytes change, and it takes exactly its size in bits.
    byte, bit = wl.element_address(d, element_type, *_mn_k(matrix.shape, operand), major)
    places = set((byte.astype(np.int64) * 8 + bit).ravel().tolist())
    assert len(places) == matrix.size
    touched = np.unique(byte.ravel())
    if BITS[element_type] >= 8:
        touched = np.unique(np.concatenate([touched + i for i in range(BITS[element_type] // 8)]))
    outside = np.ones(image.size, dtype=bool)
    outside[touched] = False
    np.testing.assert_array_equal(written[outside], image[outside])


def _mn_k(shape, operand):
    r, c = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    return (r, c) if operand == "a" else (c, r)


def _read_by_hand(image: np.ndarray, d: wl.MatrixDescriptor, rows: int, cols: int, element_type: str, major: str, operand: str) -> np.ndarray:
    """Oracle for read_matrix: each element from its element_address (checked above against the
    manual's canonical layouts), assembled with Python's int.from_bytes (little-endian) or, for
    ``.b1``, one bit of its byte."""
    bits = BITS[element_type]
    byte, bit = wl.element_address(d, element_type, *_mn_k((rows, cols), operand), major)
    bit = np.broadcast_to(bit, byte.shape)
    raw = bytes(image)
    out = np.zeros((rows, cols), dtype=np.uint64)
    for r in range(rows):
        for c in range(cols):
            at = int(byte[r, c])
            out[r, c] = (raw[at] >> int(bit[r, c])) & 1 if bits == 1 else int.from_bytes(raw[at : at + bits // 8], "little")
    return out


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(sorted(BITS)),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["none", "32B", "64B", "128B"]),
    st.sampled_from(["K", "MN"]),
    st.integers(0, 2**32 - 1),
)
def test_read_matrix_reads_a_batch(element_type, operand, swizzle, major, seed):
    """A batch (leading axes of images and of descriptors, broadcast) reads what each instance's
    descriptor describes in its image, element for element as the hand-assembled oracle."""
    rng = np.random.default_rng(seed)
    bits = BITS[element_type]
    k = 256 // bits
    mn = 64 if operand == "a" else 8
    rows, cols = (mn, k) if operand == "a" else (k, mn)
    pool = [packed_descriptor(int(rng.integers(0, 256)) * 16, swizzle, major, bits, mn, k, order) for order in (0, 1)]
    size = 1 << 15
    images = rng.integers(0, 256, size=(2, 3, size), dtype=np.uint8)
    choice = rng.integers(0, 2, size=3)
    codes = np.array([pool[c].encode() for c in choice], dtype=np.uint64)
    oracle = {(i, j): _read_by_hand(images[i, j], pool[choice[j]], rows, cols, element_type, major, operand) for i in range(2) for j in range(3)}
    # [2, 3] images x [3] descriptors; MatrixDescriptor objects read as their values
    for descriptors in (codes, [pool[c] for c in choice]):
        got = wl.read_matrix(images, descriptors, rows, cols, element_type, major, operand=operand)
        assert got.shape == (2, 3, rows, cols)
        for (i, j), want in oracle.items():
            np.testing.assert_array_equal(got[i, j], want)
    # one image for the batch, one descriptor for the batch, and the single-image call
    got = wl.read_matrix(images[1, 2], codes, rows, cols, element_type, major, operand=operand)
    assert got.shape == (3, rows, cols)
    for j in range(3):
        np.testing.assert_array_equal(got[j], _read_by_hand(images[1, 2], pool[choice[j]], rows, cols, element_type, major, operand))
    got = wl.read_matrix(images[:, :1], pool[choice[0]], rows, cols, element_type, major, operand=operand)
    assert got.shape == (2, 1, rows, cols)
    np.testing.assert_array_equal(got[1, 0], oracle[1, 0])
    np.testing.assert_array_equal(wl.read_matrix(images[0, 1], pool[choice[1]], rows, cols, element_type, major, operand=operand), oracle[0, 1])


def test_read_matrix_batch_errors_name_the_instance():
    good, far = wl.MatrixDescriptor(0, 128, 256), wl.MatrixDescriptor(0x3FF00, 128, 256)
    images = np.zeros((2, 2, 4096), dtype=np.uint8)
    codes = np.array([[good.encode(), good.encode()], [far.encode(), good.encode() | (1 << 15)]], dtype=np.uint64)
    with pytest.raises(OperandError, match=r"^instance \(1, 0\): the matrix reaches .* beyond the image"):
        wl.read_matrix(images, codes, 64, 16, "f16", "K")
    codes[1, 0] = good.encode()
    with pytest.raises(OperandError, match=r"^instance \(1, 1\): matrix descriptor .* outside the fields"):
        wl.read_matrix(images, codes, 64, 16, "f16", "K")
    with pytest.raises(OperandError, match=r"^instance 2: the matrix reaches"):
        wl.read_matrix(images[0, 0], [good, good, far], 64, 16, "f16", "K")
    with pytest.raises(OperandError, match=r"^instance 0: the matrix reaches"):
        wl.read_matrix(np.zeros((3, 1024), dtype=np.uint8), good, 64, 16, "f16", "K")
    # the single-image call keeps its unnamed errors
    with pytest.raises(OperandError, match=r"^the matrix reaches shared-memory byte 0x7ff"):
        wl.read_matrix(bytes(1024), good, 64, 16, "f16", "K")
    with pytest.raises(OperandError, match=r"^matrix descriptor .* outside the fields"):
        wl.read_matrix(bytes(4096), 1 << 15, 64, 16, "f16", "K")
    with pytest.raises(OperandError, match="do not broadcast"):
        wl.read_matrix(images, np.full(3, good.encode(), dtype=np.uint64), 64, 16, "f16", "K")
    with pytest.raises(OperandError, match="64-bit unsigned values"):
        wl.read_matrix(images[0, 0], np.array([-16, 0]), 64, 16, "f16", "K")
    with pytest.raises(OperandError, match="64-bit values or MatrixDescriptor objects"):
        wl.read_matrix(images[0, 0], [good, "x"], 64, 16, "f16", "K")
    with pytest.raises(OperandError, match="a shared-memory image is bytes or a 1-D uint8 array"):
        wl.read_matrix(np.uint8(0), good, 64, 16, "f16", "K")
    with pytest.raises(OperandError, match="a shared-memory image is bytes or a 1-D uint8 array"):
        wl.write_matrix(images, good, np.zeros((64, 16), dtype=np.uint64), "f16", "K")  # writing takes one image


def test_read_refuses_an_image_too_small_and_overlaps():
    d = wl.MatrixDescriptor(0, 128, 256, 0, "none")
    with pytest.raises(OperandError, match="beyond the image"):
        wl.read_matrix(bytes(1024), d, 64, 16, "f16", "K")
    overlapping = wl.MatrixDescriptor(0, 16, 16, 0, "none")
    with pytest.raises(OperandError, match="same address"):
        wl.write_matrix(bytes(1 << 14), overlapping, np.zeros((64, 16), dtype=np.uint64), "f16", "K")
    with pytest.raises(OperandError, match="major-ness"):
        wl.element_address(d, "f16", 0, 0, "row")
    with pytest.raises(OperandError, match="multiplicand type"):
        wl.element_address(d, "f64", 0, 0, "K")


# ---------------------------------------------------------------------------------------------
# Register fragments
# ---------------------------------------------------------------------------------------------

A_CASES = [("m64n8k16", "f16"), ("m64n8k16", "bf16"), ("m64n8k8", "tf32"), ("m64n8k32", "e4m3"), ("m64n8k32", "s8"), ("m64n8k256", "b1")]
SPARSE_A_CASES = [("m64n8k32", "f16"), ("m64n8k32", "bf16"), ("m64n8k16", "tf32"), ("m64n8k64", "e5m2"), ("m64n8k64", "u8")]


def _assert_bijection(layout: wl.WarpgroupFragmentLayout) -> None:
    seen = {}
    for t in range(128):
        for r in range(layout.registers):
            for i in range(layout.per_register):
                place = layout.element(t, r, i)
                assert 0 <= place[0] < layout.rows and 0 <= place[1] < layout.stored_cols, place
                assert place not in seen, (t, r, i, seen.get(place))
                seen[place] = (t, r, i)
    assert len(seen) == layout.rows * layout.stored_cols


@pytest.mark.parametrize(("shape", "element_type"), A_CASES)
def test_a_fragments_are_bijections_and_follow_the_warp_level_layout(shape, element_type):
    """§9.7.15.5.1.1: "a vector expression containing four .f16x2 registers" (a0..a7), "four .b32
    registers" (.tf32 a0..a3, 8-bit a0..a15, .b1 a0..a127); each warp's 16 rows as §9.7.14.5's A."""
    layout = wl.fragment_layout(shape, "a", element_type)
    assert layout.registers == 4 and layout.rows == 64
    assert layout.per_register * layout.registers * 128 == 64 * wg.parse_shape(shape)[2]
    _assert_bijection(layout)
    warp = ml.fragment_layout("m16n8k" + shape.split("k")[1], "a", element_type)
    for t in range(0, 128, 5):
        for r in range(4):
            row, col = warp.element(t % 32, r, 0)
            assert layout.element(t, r, 0) == (16 * (t // 32) + row, col)


@pytest.mark.parametrize(("shape", "element_type"), SPARSE_A_CASES)
def test_sparse_a_fragments_are_bijections(shape, element_type):
    """§9.7.15.6.2: four .b32 registers of non-zero elements: .f16/.bf16 "two non-zero elements out
    of 4 consecutive" per register, .tf32 "four non-zero elements out of eight" in all, 8-bit "four
    non-zero elements out of eight consecutive" per register."""
    layout = wl.fragment_layout(shape, "a", element_type, sparse=True)
    assert layout.registers == 4 and layout.stored_cols == wg.parse_shape(shape)[2] // 2
    _assert_bijection(layout)


@pytest.mark.parametrize("dtype", ["f16", "f32", "s32"])
@pytest.mark.parametrize("n", (8, 24, 64, 256))
def test_d_fragments_are_bijections(dtype, n):
    """ "N/4 .f16x2 registers" (.f16), "N/2 .f32/.s32 registers"."""
    layout = wl.fragment_layout(f"m64n{n}k16", "d", dtype)
    assert layout.registers == (n // 4 if dtype == "f16" else n // 2)
    _assert_bijection(layout)


@pytest.mark.heavy
@pytest.mark.parametrize("dtype", ["f16", "f32", "s32"])
def test_every_d_fragment_is_a_bijection(dtype):
    for n in wg.N_ALL:
        _assert_bijection(wl.fragment_layout(f"m64n{n}k16", "d", dtype))


def test_d_fragment_is_the_m16n8_accumulator_per_warp_and_column_block():
    """Each warp's 16 rows and each block of 8 columns follow §9.7.14.5's m16n8 C layout."""
    c = ml.fragment_layout("m16n8k16", "c", "f32")
    d = wl.fragment_layout("m64n32k16", "d", "f32")
    for t in range(128):
        for r in range(16):
            row, col = c.element(t % 32, r % 4, 0)
            assert d.element(t, r, 0) == (16 * (t // 32) + row, 8 * (r // 4) + col)
    d16 = wl.fragment_layout("m64n32k16", "d", "f16")
    for t in range(0, 128, 3):
        for r in range(8):
            for i in range(2):
                assert d16.element(t, r, i) == d.element(t, 2 * r + i, 0)


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(A_CASES + [(s, t, True) for s, t in SPARSE_A_CASES] + [("m64n40k16", "f16", "d"), ("m64n48k8", "f32", "d"), ("m64n16k32", "s32", "c")]),
    st.integers(0, 2**32 - 1),
)
def test_fragments_round_trip(case, seed):
    shape, element_type, *extra = case
    if extra and extra[0] in ("c", "d"):
        layout = wl.fragment_layout(shape, extra[0], element_type)
    else:
        layout = wl.fragment_layout(shape, "a", element_type, sparse=bool(extra))
    rng = np.random.default_rng(seed)
    regs = rng.integers(0, 1 << 32, size=(3, 128, layout.registers), dtype=np.uint64)
    matrix = layout.to_matrix(regs)
    assert matrix.shape == (3, layout.rows, layout.stored_cols)
    np.testing.assert_array_equal(layout.from_matrix(matrix), regs)


def test_warpgroup_fragments_are_fragment_layouts_of_128_threads():
    """One FragmentLayout serves the warp (32 lanes) and the warpgroup (128 threads): the
    warpgroup's A is, warp by warp, the warp-level A of its 16 rows (§9.7.15.5.1.1), through the
    vectorised to_matrix as well as element()."""
    layout = wl.fragment_layout("m64n8k16", "a", "f16")
    assert wl.WarpgroupFragmentLayout is ml.FragmentLayout and isinstance(layout, ml.FragmentLayout)
    assert (layout.threads, layout.register_bits, layout.per_register) == (128, 32, 2)
    assert layout.describe() == "wgmma m64n8k16 A fragment of .f16 (4 x 32-bit registers per thread)"
    warp = ml.fragment_layout("m16n8k16", "a", "f16")
    assert warp.threads == 32 and warp.describe() == "m16n8k16 A fragment of .f16 (4 x 32-bit registers per lane)"
    regs = np.random.default_rng(7).integers(0, 1 << 32, size=(2, 128, 4), dtype=np.uint64)
    by_warp = np.concatenate([warp.to_matrix(regs[:, 32 * w : 32 * (w + 1)]) for w in range(4)], axis=-2)
    np.testing.assert_array_equal(layout.to_matrix(regs), by_warp)
    with pytest.raises(OperandError, match=r"no element \(thread 128, register 0, index 0\)"):
        layout.element(128, 0, 0)
    with pytest.raises(OperandError, match=r"no element \(lane 32, register 0, index 0\)"):
        warp.element(32, 0, 0)
    with pytest.raises(OperandError, match=r"takes \[\.\.\., 32, 4\] registers"):
        warp.to_matrix(regs)
    with pytest.raises(ValueError):
        ml.FragmentLayout("a", 16, 16, 16, 32, 4, threads=64)


def test_fragment_errors():
    with pytest.raises(OperandError, match="no wgmma.mma_async with shape .m64n8k16 and .atype .tf32"):
        wl.fragment_layout("m64n8k16", "a", "tf32")
    with pytest.raises(OperandError, match="'b'|B is always"):
        wl.fragment_layout("m64n8k16", "b", "f16")
    with pytest.raises(OperandError, match="accumulator"):
        wl.fragment_layout("m64n8k16", "d", "bf16")
    with pytest.raises(OperandError, match="accumulator of .s32 with shape .m64n40k32"):
        wl.fragment_layout("m64n40k32", "d", "s32")
    layout = wl.fragment_layout("m64n8k16", "d", "f32")
    with pytest.raises(OperandError, match="128"):
        layout.to_matrix(np.zeros((32, 4), dtype=np.uint64))
    with pytest.raises(OperandError, match="no element"):
        layout.element(128, 0, 0)


# ---------------------------------------------------------------------------------------------
# The sparse A (§9.7.15.6)
# ---------------------------------------------------------------------------------------------


def sparse_dense(rng, element_type: str, k: int, batch: int = 2) -> np.ndarray:
    """A random dense 64 x K A with the structure of §9.7.15.6.1: 2:4 (1:2 for .tf32)."""
    bits = BITS[element_type]
    dense = np.zeros((batch, 64, k), dtype=np.uint64)
    group, keep = (2, 1) if element_type == "tf32" else (4, 2)
    for b in range(batch):
        for row in range(64):
            for start in range(0, k, group):
                for c in rng.choice(group, size=keep, replace=False):
                    dense[b, row, start + c] = rng.integers(1, 1 << bits)
    return dense


@pytest.mark.parametrize(("shape", "element_type"), SPARSE_A_CASES)
def test_sparse_storage_round_trips(shape, element_type):
    rng = np.random.default_rng(11)
    k = wg.parse_shape(shape)[2]
    for selector in (0, 1) if element_type in ("f16", "bf16", "tf32") else (0,):
        dense = sparse_dense(rng, element_type, k)
        stored, meta = wl.compress_sparse(shape, element_type, dense, selector)
        assert stored.shape == (2, 64, k // 2) and meta.shape == (2, 128)
        back, undefined = wl.expand_sparse(shape, element_type, stored, meta, selector)
        np.testing.assert_array_equal(back, dense)
        assert not undefined.any()
        # Each warp's threads hold the metadata of its 16 rows: "%warpid % 4 = w: rows 16w..16w+15".
        for row in (0, 17, 40, 63):
            thread, _ = wl.metadata_field(shape, element_type, row, 0, selector)
            assert thread // 32 == row // 16


def test_sparse_selectors_and_invalid_metadata():
    with pytest.raises(OperandError, match="sparsity selector 2"):
        wl.metadata_field("m64n8k32", "f16", 0, 0, 2)
    with pytest.raises(OperandError, match="sparsity selector 1"):
        wl.metadata_field("m64n8k64", "s8", 0, 0, 1)
    stored = np.ones((64, 16), dtype=np.uint64)
    # "0b0000, 0b0101, 0b1010, 0b1111 are invalid values for metadata": all-zero metadata is invalid.
    _, undefined = wl.expand_sparse("m64n8k32", "f16", stored, np.zeros(128, dtype=np.uint64), 0)
    assert undefined.all()
    meta = np.full(128, 0x44444444, dtype=np.uint64)  # 0b0100 everywhere: indices 0 and 1
    dense, undefined = wl.expand_sparse("m64n8k32", "f16", stored, meta, 0)
    assert not undefined.any() and (dense[:, 0::4] == 1).all() and (dense[:, 2::4] == 0).all()
    with pytest.raises(OperandError, match="2:4"):
        wl.compress_sparse("m64n8k32", "f16", np.ones((64, 32), dtype=np.uint64), 0)


# ---------------------------------------------------------------------------------------------
# The composition
# ---------------------------------------------------------------------------------------------


def _form(text: str, registers: bool = False) -> Form:
    form = parse(text)
    return Form(CATALOGUE.family(form.family.key + ".a"), form.choices) if registers else form


@pytest.mark.parametrize(
    ("text", "trans_a", "trans_b", "swizzle_a", "swizzle_b"),
    [
        ("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16", 0, 0, "128B", "64B"),
        ("wgmma.mma_async.sync.aligned.m64n24k16.f16.bf16.bf16".replace("f16.bf16", "f32.bf16"), 1, 1, "64B", "none"),
        ("wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32", 0, 0, "32B", "128B"),
        ("wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.u8", 0, 0, "none", "32B"),
        ("wgmma.mma_async.sync.aligned.m64n16k256.s32.b1.b1.and.popc", 0, 0, "128B", "none"),
    ],
)
def test_operands_from_shared_memory_and_registers(text, trans_a, trans_b, swizzle_a, swizzle_b):
    rng = np.random.default_rng(5)
    form = _form(text)
    m, n, k = wg.parse_shape(form["shape"])
    abits, bbits = BITS[form["atype"]], BITS[form["btype"]]
    a = rng.integers(0, 1 << abits, size=(m, k), dtype=np.uint64)
    b = rng.integers(0, 1 << bbits, size=(k, n), dtype=np.uint64)
    major_a, major_b = ("MN" if trans_a else "K"), ("MN" if trans_b else "K")
    desc_a = packed_descriptor(0, swizzle_a, major_a, abits, m, k, 0)
    desc_b = packed_descriptor(16384, swizzle_b, major_b, bbits, n, k, 1)
    image = wl.write_matrix(np.zeros(1 << 15, dtype=np.uint8), desc_a, a, form["atype"], major_a)
    image = wl.write_matrix(image, desc_b, b, form["btype"], major_b, operand="b")
    d_layout = wl.fragment_layout(form["shape"], "d", form["dtype"])
    c = rng.integers(0, 1 << d_layout.element_bits, size=(m, n), dtype=np.uint64)
    c_regs = wl.wgmma_result_registers(form, c)
    got = wl.wgmma_operands(form, image, desc_a.encode(), desc_b, c_regs, trans_a=trans_a, trans_b=trans_b)
    for x, y in zip(got, (a, b, c)):
        np.testing.assert_array_equal(x, y)
    # The same A from registers.
    regs_form = _form(form.text, registers=True)
    a_regs = wl.fragment_layout(form["shape"], "a", form["atype"]).from_matrix(a)
    got = wl.wgmma_operands(regs_form, image, a_regs, desc_b, c_regs, trans_b=trans_b)
    np.testing.assert_array_equal(got[0], a)
    with pytest.raises(OperandError, match="registers"):
        wl.wgmma_operands(form, image, a_regs, desc_b, c_regs)
    with pytest.raises(OperandError, match="descriptor"):
        wl.wgmma_operands(regs_form, image, desc_a, desc_b, c_regs)


@pytest.mark.parametrize("registers", [False, True])
@pytest.mark.parametrize(
    ("text", "selector"),
    [
        ("wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16", 1),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.u8", 0),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32", 0),
    ],
)
def test_sparse_operands(text, selector, registers):
    rng = np.random.default_rng(9)
    form = _form(text, registers)
    m, n, k = wg.parse_shape(form["shape"])
    bits = BITS[form["atype"]]
    dense = sparse_dense(rng, form["atype"], k, batch=1)[0]
    stored, meta = wl.compress_sparse(form["shape"], form["atype"], dense, selector)
    b = rng.integers(0, 1 << bits, size=(k, n), dtype=np.uint64)
    desc_a = packed_descriptor(0, "none", "K", bits, m, k // 2, 0)
    desc_b = packed_descriptor(8192, "none", "K", bits, n, k, 0)
    image = wl.write_matrix(np.zeros(1 << 14, dtype=np.uint8), desc_a, stored, form["atype"], "K")
    image = wl.write_matrix(image, desc_b, b, form["btype"], "K", operand="b")
    a = wl.fragment_layout(form["shape"], "a", form["atype"], sparse=True).from_matrix(stored) if registers else desc_a
    c_regs = np.zeros((128, wg.d_registers(form["shape"], form["dtype"])), dtype=np.uint64)
    got_a, got_b, got_c = wl.wgmma_operands(form, image, a, desc_b, c_regs, sp_meta=meta, sp_sel=selector)
    np.testing.assert_array_equal(got_a.stored, stored)  # the arithmetic's A: stored elements and their K positions
    np.testing.assert_array_equal(got_a.dense(), dense)  # shown as the manual's 64 x K matrix
    np.testing.assert_array_equal(np.take_along_axis(dense, got_a.k_index, axis=-1), stored)
    np.testing.assert_array_equal(got_b, b)
    assert not got_c.any()
    with pytest.raises(OperandError, match="invalid values"):
        wl.wgmma_operands(form, image, a, desc_b, c_regs, sp_meta=np.zeros(128, dtype=np.uint64), sp_sel=selector)


def test_operands_refuse_what_the_form_does_not_take():
    tf32 = _form("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32")
    d = wl.MatrixDescriptor(0, 128, 256)
    c = np.zeros((128, 4), dtype=np.uint64)
    with pytest.raises(OperandError, match="imm-trans-a"):
        wl.wgmma_operands(tf32, bytes(8192), d, d, c, trans_a=1)
    per_thread = np.full(128, d.encode(), dtype=np.uint64)
    wl.wgmma_operands(tf32, bytes(8192), per_thread, per_thread, c)
    per_thread[77] += 16
    with pytest.raises(OperandError, match="differs between threads"):
        wl.wgmma_operands(tf32, bytes(8192), per_thread, d, c)
    sp = _form("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8")
    with pytest.raises(OperandError, match="sp-sel = 1"):
        wl.wgmma_operands(sp, bytes(8192), d, d, c, sp_meta=np.zeros(128, dtype=np.uint64), sp_sel=1)
