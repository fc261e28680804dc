"""The 8-bit forms of ldmatrix/stmatrix (semantics/matrix_data_movement.py, §9.7.14.5.15-16).

Two independent readings of the fragment figures (104, 105, 107) are checked against the module:

* the figures' description in the manual's words, written here lane by lane, register by register,
  byte by byte, reading the bytes of the image (and unpacking the 6-/4-bit source formats with
  Python integers, bit by bit);
* NVIDIA CUTLASS's copy traits for the same instructions (``cute/atom/copy_traits_sm100.hpp``:
  each is a pair of CuTe layouts, (source thread, source bit) -> reference bit and (destination
  thread, destination bit) -> reference bit; their shapes and strides are data, evaluated here by
  a ten-line CuTe layout evaluator). For ``.m16n16`` CUTLASS shuffles the destination bytes after
  the instruction (``cute/arch/copy_sm100.hpp``: ``dst0 = {tmp0.x, tmp0.y, tmp1.x, tmp1.y}``,
  ``dst1 = {tmp0.z, tmp0.w, tmp1.z, tmp1.w}``); the oracle undoes that shuffle.

The 8-bit forms need sm_100a/sm_101a/sm_120a, so no H100 recording can check them; ptxas
(-arch=sm_100a) must accept each form evaluated.
"""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.semantics import matrix_data_movement as dm
from ptxspec.spec.catalogue import parse

NUMS = {"x1": 1, "x2": 2, "x4": 4}
SPACES = ("", ".shared", ".shared::cta")

LD_B8 = [f"ldmatrix.sync.aligned.m16n16.{num}.trans{ss}.b8" for num in ("x1", "x2") for ss in SPACES]
LD_FMT_16 = [f"ldmatrix.sync.aligned.m16n16.{num}.trans{ss}.b8x16.{src}" for num in ("x1", "x2") for ss in SPACES for src in ("b6x16_p32", "b4x16_p64")]
LD_FMT_8 = [f"ldmatrix.sync.aligned.m8n16.{num}{ss}.b8x16.{src}" for num in NUMS for ss in SPACES for src in ("b6x16_p32", "b4x16_p64")]
ST_B8 = [f"stmatrix.sync.aligned.m16n8.{num}.trans{ss}.b8" for num in NUMS for ss in SPACES]
ALL_8BIT = LD_B8 + LD_FMT_16 + LD_FMT_8 + ST_B8
ALL_16BIT = [f"{op}.sync.aligned.m8n8.{num}{trans}{ss}.b16" for op in ("ldmatrix", "stmatrix") for num in NUMS for trans in ("", ".trans") for ss in SPACES]


def _num(text: str) -> int:
    return next(n for q, n in NUMS.items() if f".{q}." in text)


def _src(text: str) -> str | None:
    return next((s for s in ("b6x16_p32", "b4x16_p64") if s in text), None)


def _addresses(rng, count: int, size: int) -> list[int]:
    """``count`` distinct 16-byte aligned row addresses in any order ("consecutive instances of rows
    need not be stored contiguously in memory")."""
    return [16 * int(s) for s in rng.choice(size // 16, count, replace=False)]


# ---------------------------------------------------------------------------------------------
# Reading 1: the manual's words, lane by lane
# ---------------------------------------------------------------------------------------------


def element_of_row(image, address: int, k: int, src: str | None) -> int:
    """Element ``k`` of the 16-byte row at ``address`` as an 8-bit container. Packed formats
    (§9.7.14.5.15 table, §5.5.1.1.1): sixteen ``bits``-bit elements contiguous from bit 0 of the
    row (little-endian), then padding; the container puts .e2m1 "in the middle 4 bits" and 6-bit
    elements "in the lower 6 bits" (§9.7.14.5.14), padding bits 0."""
    if src is None:
        return int(image[address + k])
    bits = 6 if src == "b6x16_p32" else 4
    word = int.from_bytes(bytes(image[address : address + 16]), "little")
    value = (word >> (bits * k)) % (1 << bits)
    return value << 2 if bits == 4 else value


def manual_ldmatrix(text: str, image, addresses) -> np.ndarray:
    """Figure 104 (.m16n16, .trans): "each thread loads 4 consecutive columns across 2 rows" of the
    transposed 16x16 matrix: register 2m+r of lane t, byte j = row t//4 + 8r, column 4(t%4)+j of
    matrix m's transpose, i.e. byte t//4 + 8r of the row at addr[16m + 4(t%4) + j].
    Figure 105 (.m8n16): "each thread loads 4 consecutive columns": register m of lane t, byte j =
    column 4(t%4)+j of row t//4 of matrix m, the row at addr[8m + t//4]."""
    num, src = _num(text), _src(text)
    m16n16 = ".m16n16." in text
    registers = num * (2 if m16n16 else 1)
    out = np.zeros((32, registers), dtype=np.uint32)
    for lane, reg, j in itertools.product(range(32), range(registers), range(4)):
        g, q = lane // 4, lane % 4
        if m16n16:
            m, r = divmod(reg, 2)
            value = element_of_row(image, addresses[16 * m + 4 * q + j], g + 8 * r, src)
        else:
            value = element_of_row(image, addresses[8 * reg + g], 4 * q + j, src)
        out[lane, reg] |= value << (8 * j)
    return out


def manual_stmatrix(text: str, image, addresses, registers) -> np.ndarray:
    """Figure 107 (.m16n8, .trans): lane t's register m holds e0..e3 of matrix m (e0 the LSB), e_j at
    row t//4 + 8(j>>1), column 2(t%4) + (j&1) of the 16x8 matrix; stored transposed, element (r, c)
    goes to byte r of the row at addr[8m + c]."""
    image = np.array(image, dtype=np.uint8)
    for lane, m, j in itertools.product(range(32), range(_num(text)), range(4)):
        row, col = lane // 4 + 8 * (j >> 1), 2 * (lane % 4) + (j & 1)
        image[addresses[8 * m + col] + row] = (int(registers[lane][m]) >> (8 * j)) & 0xFF
    return image


@pytest.mark.parametrize("text", LD_B8 + LD_FMT_16 + LD_FMT_8)
def test_ldmatrix_8bit_lane_by_lane(text):
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, 2048, dtype=np.uint8)
    addresses = _addresses(rng, 32, 2048)
    got = dm.ldmatrix(text, image, addresses)
    expected = manual_ldmatrix(text, image, addresses)
    assert got.dtype == np.uint32 and got.shape == expected.shape
    assert np.array_equal(got, expected)
    # only the first rows*num addresses are read
    wanted = (16 if ".m16n16." in text else 8) * _num(text)
    assert np.array_equal(dm.ldmatrix(text, bytes(image), addresses[:wanted]), got)


@pytest.mark.parametrize("text", ST_B8)
def test_stmatrix_8bit_lane_by_lane(text):
    rng = np.random.default_rng(8)
    image = rng.integers(0, 256, 1024, dtype=np.uint8)
    addresses = _addresses(rng, 32, 1024)
    registers = rng.integers(0, 2**32, size=(32, _num(text)), dtype=np.uint64)
    got = dm.stmatrix(text, image, addresses, registers)
    assert np.array_equal(got, manual_stmatrix(text, image, addresses, registers))
    # bytes outside the written rows are untouched; the input image is not modified
    written = np.zeros(image.size, dtype=bool)
    for a in addresses[: 8 * _num(text)]:
        written[a : a + 16] = True
    assert np.array_equal(got[~written], image[~written])
    assert not np.array_equal(got[written], image[written])


# ---------------------------------------------------------------------------------------------
# Reading 2: CUTLASS's copy traits (CuTe layouts), an independent third-party statement
# ---------------------------------------------------------------------------------------------


def cute(shape, stride, index: int) -> int:
    """A CuTe layout at a 1-D index: the index is split colexicographically over the (nested)
    shape and dotted with the stride."""
    if isinstance(shape, int):
        return (index % shape) * stride
    total = 0
    for s, d in zip(shape, stride):
        size = int(np.prod(_flat(s)))
        total += cute(s, d, index % size)
        index //= size
    return total


def _flat(shape):
    return [shape] if isinstance(shape, int) else [x for s in shape for x in _flat(s)]


def _size(shape) -> int:
    return int(np.prod(_flat(shape)))


# (instruction, (src shape, src stride), (dst shape, dst stride)) from copy_traits_sm100.hpp
CUTLASS = {
    "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8": (
        (((2, 2, 4, 2), 128), ((128, 1024, 256, 0), 1)),
        (((4, 8), (8, 2, 2, 2)), ((256, 8), (1, 128, 64, 1024))),
    ),
    "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8": (
        (((2, 2, 4, 2), 128), ((128, 1024, 256, 2048), 1)),
        (((4, 8), (8, 2, 2, 4)), ((256, 8), (1, 128, 64, 1024))),
    ),
    "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64": ((((8, 4), 128), ((128, 0), 1)), ((32, 32), (32, 1))),
    "ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b4x16_p64": ((((16, 2), 128), ((128, 0), 1)), ((32, (32, 2)), (32, (1, 1024)))),
    "ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b4x16_p64": (((32, 128), (128, 1)), ((32, (32, 4)), (32, (1, 1024)))),
    "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32": ((((8, 4), 128), ((128, 0), 1)), ((32, 32), (32, 1))),
    "ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b6x16_p32": ((((16, 2), 128), ((128, 0), 1)), ((32, (32, 2)), (32, (1, 1024)))),
    "ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b6x16_p32": (((32, 128), (128, 1)), ((32, (32, 4)), (32, (1, 1024)))),
    # stmatrix: source = registers, destination = memory rows
    "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8": ((((4, 8), (8, 2, 2)), ((256, 8), (1, 128, 64))), (((8, 4), 128), ((128, 0), 1))),
    "stmatrix.sync.aligned.m16n8.x2.trans.shared.b8": ((((4, 8), (8, 2, 2, 2)), ((256, 8), (1, 128, 64, 1024))), (((16, 2), 128), ((128, 0), 1))),
    "stmatrix.sync.aligned.m16n8.x4.trans.shared.b8": ((((4, 8), (8, 2, 2, 4)), ((256, 8), (1, 128, 64, 1024))), (((32, 128), (128, 1)))),
}


def _bit_map(layout) -> dict[int, tuple[int, int]]:
    """reference bit -> (thread, value bit), the lowest thread where several hold the same bit
    (CuTe's stride-0 thread modes: threads whose address is not read)."""
    (tshape, vshape), (tstride, vstride) = layout
    out: dict[int, tuple[int, int]] = {}
    for t in range(_size(tshape)):
        for v in range(_size(vshape)):
            out.setdefault(cute(tshape, tstride, t) + cute(vshape, vstride, v), (t, v))
    return out


def _undo_cutlass_shuffle(registers: np.ndarray) -> np.ndarray:
    """CUTLASS's SM100_U8x{8,16}_LDSM_T returns, per pair of instruction registers (tmp0, tmp1),
    dst0 = {tmp0.x, tmp0.y, tmp1.x, tmp1.y}, dst1 = {tmp0.z, tmp0.w, tmp1.z, tmp1.w}. Given its
    dst registers, give the instruction's."""
    out = np.zeros_like(registers)
    b = lambda w, k: (w >> (8 * k)) & 0xFF  # noqa: E731
    for p in range(0, registers.shape[1], 2):
        d0, d1 = registers[:, p], registers[:, p + 1]
        out[:, p] = b(d0, 0) | b(d0, 1) << 8 | b(d1, 0) << 16 | b(d1, 1) << 24
        out[:, p + 1] = b(d0, 2) | b(d0, 3) << 8 | b(d1, 2) << 16 | b(d1, 3) << 24
    return out


@pytest.mark.parametrize("text", [t for t in CUTLASS if t.startswith("ldmatrix")])
def test_ldmatrix_agrees_with_cutlass_copy_traits(text):
    """Source (thread s, bit w) is bit w of the (unpacked) row at the address of thread s;
    destination (lane t, bit v) is bit v % 32 of register v // 32. Both map to the same
    reference bit: byte for byte, the register byte holds that row byte."""
    src, dst = CUTLASS[text]
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, 2048, dtype=np.uint8)
    addresses = _addresses(rng, 32, 2048)
    source = _bit_map(src)
    (tshape, vshape), (tstride, vstride) = dst
    registers = np.zeros((32, _size(vshape) // 32), dtype=np.uint32)
    for t in range(32):
        for v in range(0, _size(vshape), 8):
            s, w = source[cute(tshape, tstride, t) + cute(vshape, vstride, v)]
            assert w % 8 == 0
            registers[t, v // 32] |= element_of_row(image, addresses[s], w // 8, _src(text)) << (v % 32)
    if ".m16n16." in text:
        registers = _undo_cutlass_shuffle(registers)
    assert np.array_equal(dm.ldmatrix(text, image, addresses), registers)


@pytest.mark.parametrize("text", [t for t in CUTLASS if t.startswith("stmatrix")])
def test_stmatrix_agrees_with_cutlass_copy_traits(text):
    src, dst = CUTLASS[text]
    rng = np.random.default_rng(4)
    image = np.zeros(1024, dtype=np.uint8)
    addresses = _addresses(rng, 32, 1024)
    registers = rng.integers(0, 2**32, size=(32, _num(text)), dtype=np.uint64)
    target = _bit_map(dst)
    (tshape, vshape), (tstride, vstride) = src
    expected = image.copy()
    for t in range(32):
        for v in range(0, _size(vshape), 8):
            s, w = target[cute(tshape, tstride, t) + cute(vshape, vstride, v)]
            expected[addresses[s] + w // 8] = (int(registers[t, v // 32]) >> (v % 32)) & 0xFF
    assert np.array_equal(dm.stmatrix(text, image, addresses, registers), expected)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


def _unpacked_image(image: np.ndarray, src: str) -> np.ndarray:
    """Every 16-byte row of ``image`` replaced by its sixteen 8-bit containers."""
    out = image.copy()
    for row in range(image.size // 16):
        out[16 * row : 16 * row + 16] = [element_of_row(image, 16 * row, k, src) for k in range(16)]
    return out


@given(st.binary(min_size=512, max_size=512), st.permutations(range(32)), st.sampled_from(["x1", "x2"]), st.sampled_from(["b6x16_p32", "b4x16_p64"]))
def test_unpacking_load_is_the_8bit_load_of_the_unpacked_rows(data, order, num, src):
    image = np.frombuffer(data, dtype=np.uint8)
    addresses = [16 * k for k in order]
    packed = dm.ldmatrix(f"ldmatrix.sync.aligned.m16n16.{num}.trans.b8x16.{src}", image, addresses)
    assert np.array_equal(packed, dm.ldmatrix(f"ldmatrix.sync.aligned.m16n16.{num}.trans.b8", _unpacked_image(image, src), addresses))


@given(st.binary(min_size=16, max_size=16))
def test_padding_bits_of_the_source_row_are_not_read(row):
    """ "16 6-bit elements, 32 bits of padding"; "16 4-bit elements, 64 bits of padding": bytes 12-15
    (6-bit) and 8-15 (4-bit) of a row do not change the result; containers keep their padding 0."""
    data = np.frombuffer(row, dtype=np.uint8)
    for src, used, mask in (("b6x16_p32", 12, 0b00111111), ("b4x16_p64", 8, 0b00111100)):
        elements = dm.unpack_row(data, src)
        other = data.copy()
        other[used:] ^= 0xFF
        assert np.array_equal(dm.unpack_row(other, src), elements)
        assert not np.any(elements & np.uint64(~mask & 0xFF))
        # the elements, concatenated in order, are the row's first bits
        bits = 6 if src == "b6x16_p32" else 4
        shift = 2 if bits == 4 else 0
        word = sum(int(e) >> shift << (bits * k) for k, e in enumerate(elements))
        assert word == int.from_bytes(row[:used], "little")


@given(st.binary(min_size=512, max_size=512), st.permutations(range(32)), st.sampled_from(["x1", "x2"]))
def test_m16n16_trans_is_the_row_reading_of_the_transposed_matrix(data, order, num):
    """ ".trans indicates that the matrix is loaded in column-major format": the registers hold the
    matrix whose row r is column r of the rows in memory, each lane "4 consecutive columns across
    2 rows" of it -- read here from an image where every matrix has been transposed in place."""
    image = np.frombuffer(data, dtype=np.uint8)
    addresses = [16 * k for k in order]
    transposed = image.copy()
    for m in range(NUMS[num]):
        rows = addresses[16 * m : 16 * m + 16]
        for r, c in itertools.product(range(16), range(16)):
            transposed[rows[r] + c] = image[rows[c] + r]
    got = dm.ldmatrix(f"ldmatrix.sync.aligned.m16n16.{num}.trans.b8", image, addresses)
    for lane, reg, j in itertools.product(range(32), range(2 * NUMS[num]), range(4)):
        m, r = divmod(reg, 2)
        row, col = lane // 4 + 8 * r, 4 * (lane % 4) + j
        assert (int(got[lane, reg]) >> (8 * j)) & 0xFF == transposed[addresses[16 * m + row] + col]


def _st_registers_from_ld(loaded: np.ndarray) -> np.ndarray:
    """The m16n8 (C-fragment-shaped) registers that hold what an m16n16 load gave: the byte shuffle
    of CUTLASS's LDSM_T wrapper (see the module docstring), made from the two figures: ld register
    r byte j is (row g+8r, column 4q+j); st register m byte j is (row g+8(j>>1), column 2q+(j&1))
    of the 16x8 half m."""
    out = np.zeros_like(loaded)
    b = lambda w, k: (w >> (8 * k)) & 0xFF  # noqa: E731
    for p in range(0, loaded.shape[1], 2):
        t0, t1 = loaded[:, p], loaded[:, p + 1]
        out[:, p] = b(t0, 0) | b(t0, 1) << 8 | b(t1, 0) << 16 | b(t1, 1) << 24
        out[:, p + 1] = b(t0, 2) | b(t0, 3) << 8 | b(t1, 2) << 16 | b(t1, 3) << 24
    return out


@given(st.binary(min_size=1024, max_size=1024), st.integers(0, 2**32 - 1), st.sampled_from(["x1", "x2"]))
def test_stmatrix_of_ldmatrix_round_trips(data, seed, num):
    """ldmatrix.m16n16.trans then stmatrix.m16n8.trans (twice as many matrices) writes the rows
    back. Column 4q+j of the loaded (transposed) matrix is memory row 4q+j; in the stored 16x8
    matrix m column 2q'+b is memory row 8m + 2q'+b: register bytes move with the shuffle above and
    st row 8h + 2q' + b (h = 2M + r) takes the address of row 4q' + 2r + b of loaded matrix M."""
    rng = np.random.default_rng(seed)
    image = np.frombuffer(data, dtype=np.uint8)
    n = NUMS[num]
    ld_addresses = _addresses(rng, 16 * n, 1024)
    loaded = dm.ldmatrix(f"ldmatrix.sync.aligned.m16n16.{num}.trans.b8", image, ld_addresses)
    st_addresses = []
    for h in range(2 * n):  # stored matrix h = 2M + r: register r' of the pair of loaded matrix M
        big, r = divmod(h, 2)
        for q2, b in itertools.product(range(4), range(2)):
            st_addresses.append(ld_addresses[16 * big + 4 * q2 + 2 * r + b])
    st_num = {1: "x2", 2: "x4"}[n]
    stored = dm.stmatrix(
        f"stmatrix.sync.aligned.m16n8.{st_num}.trans.b8", np.zeros(1024, dtype=np.uint8), st_addresses, _st_registers_from_ld(loaded.astype(np.uint64))
    )
    for a in ld_addresses:
        assert np.array_equal(stored[a : a + 16], image[a : a + 16])


@given(st.lists(st.integers(0, 2**32 - 1), min_size=128, max_size=128), st.integers(0, 2**32 - 1), st.sampled_from(["x1", "x2", "x4"]))
def test_stmatrix_8bit_writes_every_register_byte_once(words, seed, num):
    """The 16x8 .b8 stmatrix is a bijection between the 4*num register bytes of the 32 lanes and
    the 16*8*num bytes of its rows: storing then reading the rows back (through the figure-107
    reading) gives the registers back."""
    n = NUMS[num]
    registers = np.asarray(words[: 32 * n], dtype=np.uint64).reshape(32, n)
    addresses = _addresses(np.random.default_rng(seed), 8 * n, 1024)
    image = dm.stmatrix(f"stmatrix.sync.aligned.m16n8.{num}.trans.b8", np.zeros(1024, dtype=np.uint8), addresses, registers)
    back = np.zeros_like(registers)
    for lane, m, j in itertools.product(range(32), range(n), range(4)):
        row, col = lane // 4 + 8 * (j >> 1), 2 * (lane % 4) + (j & 1)
        back[lane, m] |= np.uint64(int(image[addresses[8 * m + col] + row]) << (8 * j))
    assert np.array_equal(back, registers)


def test_movement_layout_describes_each_form():
    cases = {
        "ldmatrix.sync.aligned.m8n8.x4.b16": (8, 8, False, 1),
        "ldmatrix.sync.aligned.m16n16.x2.trans.b8": (16, 16, True, 2),
        "ldmatrix.sync.aligned.m8n16.x1.b8x16.b6x16_p32": (8, 16, False, 1),
        "stmatrix.sync.aligned.m16n8.x4.trans.b8": (8, 16, True, 1),
    }
    for text, (rows, columns, trans, registers) in cases.items():
        layout = dm.movement_layout(text)
        assert (layout.rows, layout.columns, layout.trans, layout.fragment.registers) == (rows, columns, trans, registers)


# ---------------------------------------------------------------------------------------------
# ptxas accepts every form evaluated here
# ---------------------------------------------------------------------------------------------


def _operands(text: str) -> str:
    form = parse(text)
    regs = [o for o in form.operands if o.name != "p"]
    vector = "{" + ", ".join(f"%r{k}" for k in range(len(regs))) + "}"
    address = "[%rd0]" if ".shared" not in text else "[%s0]"
    return f"{vector}, {address}" if text.startswith("ldmatrix") else f"{address}, {vector}"


def _module(texts, target: str) -> str:
    body = "\n".join(f"  {text} {_operands(text)};" for text in texts)
    return (
        textwrap.dedent(
            f"""\
        .version 8.7
        .target {target}
        .address_size 64
        .visible .entry k(.param .u64 p)
        {{
          .reg .b64 %rd<1>; .reg .b32 %s<1>; .reg .b32 %r<4>;
          ld.param.u64 %rd0, [p];
          cvt.u32.u64 %s0, %rd0;
        """
        )
        + body
        + "\n  st.global.u32 [%rd0], %r0;\n}\n"
    )


def test_ptxas_accepts_every_form(ptxas):
    """Every form these functions evaluate assembles for sm_100a (the .b16 ones for sm_90a too)."""
    from ptxspec.conformance.silicon.campaign import assemble

    ok, message, _ = assemble(_module(ALL_8BIT + ALL_16BIT, "sm_100a"), ptxas, arch="sm_100a")
    assert ok, message
    ok, message, _ = assemble(_module(ALL_16BIT, "sm_90a"), ptxas, arch="sm_90a")
    assert ok, message
    # and each form is legal in the catalogue, and evaluates
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, 1024, dtype=np.uint8)
    for text in ALL_8BIT + ALL_16BIT:
        addresses = _addresses(rng, 32, 1024)
        if text.startswith("ldmatrix"):
            assert dm.ldmatrix(text, image, addresses).shape[0] == 32
        else:
            assert dm.stmatrix(text, image, addresses, np.zeros((32, _num(text)), dtype=np.uint64)).shape == image.shape


def test_ptxas_rejects_the_8bit_forms_before_sm_100a(ptxas):
    """The catalogue's targets say sm_100a, sm_101a, sm_120a; ptxas agrees for sm_90a."""
    from ptxspec.conformance.silicon.campaign import assemble

    for text in (LD_B8[0], LD_FMT_8[0], ST_B8[0]):
        ptx = (
            ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            "  .reg .b64 %rd<1>; .reg .b32 %s<1>; .reg .b32 %r<4>;\n  ld.param.u64 %rd0, [p];\n"
            f"  {text} {_operands(text)};\n}}\n"
        )
        ok, _, _ = assemble(ptx, ptxas, arch="sm_90a")
        assert not ok, text


def test_m16n16_trans_load_gives_the_8bit_mma_a_fragment():
    """ldmatrix feeds mma: the .m16n16 .trans .b8 load of a 16x16 matrix M holds, in its two
    registers, the m16n8k16 .s8 A fragment (§9.7.14.5.9) of M's transpose -- checked against the
    mma fragment layout of semantics/matrix_layout.py, which is written from the mma formulas."""
    from ptxspec.semantics import matrix_layout as ml

    rng = np.random.default_rng(12)
    m = rng.integers(0, 256, size=(16, 16), dtype=np.uint64)
    image = m.astype(np.uint8).reshape(-1)
    registers = dm.ldmatrix("ldmatrix.sync.aligned.m16n16.x1.trans.b8", image, [16 * r for r in range(16)])
    assert np.array_equal(registers.astype(np.uint64), ml.fragment_layout("m16n8k16", "a", "s8").from_matrix(m.T))


def test_m16n8_store_fragment_is_the_mma_c_fragment_shape():
    """Figure 107's e0..e3 sit where the m16n8 C/D fragment puts c0..c3 (§9.7.14.5.8)."""
    from ptxspec.semantics import matrix_layout as ml

    formula = ml.c_formula(1)
    layout = dm.movement_layout("stmatrix.sync.aligned.m16n8.x1.trans.b8").fragment
    for lane, j in itertools.product(range(32), range(4)):
        assert layout.element(lane, 0, j) == formula(lane, j)
