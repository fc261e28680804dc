"""The tensor map of §5.5 and the bytes a tensor copy moves (semantics/tensor_map.py).

Three ways: Hypothesis properties over random tensor maps (ranks 1-5, strides, traversal strides,
swizzles and atomicities, interleave, coordinates in and out of bounds); independent oracles (a
numpy ``as_strided`` view of the global image indexed with ``np.ix_`` for the tile mode, an
enumeration of the bounding box's filter positions for im2col, the manual's swizzle tables of
§5.5.7 as data, a bit-by-bit packer for ``.b6p2x16``); and the validation errors, each naming its
rule.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from ptxspec.semantics import tensor_map as tm
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.results import AnyNaN
from ptxspec.semantics.state import Segment
from ptxspec.semantics.tensor_map import Im2col, NotModelled, TensorMap
from ptxspec.spec.errors import OperandError

WHOLE_BYTE_TYPES = ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64", "bf16", "tf32", "tf32.ftz"]
MODES = [("none", "16B"), ("32B", "16B"), ("64B", "16B"), ("128B", "16B"), ("128B", "32B"), ("128B", "32B_flip8B"), ("128B", "64B")]


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


@st.composite
def tile_cases(draw, *, swizzled: bool = True, inside: bool = False):
    """A valid tile-mode tensor map, coordinates (anywhere, or with the box inside the tensor), a
    shared-memory address and a seed for the memory images."""
    name = draw(st.sampled_from(WHOLE_BYTE_TYPES))
    size = tm.ELEMENT_TYPES[name].global_bytes
    rank = draw(st.integers(1, 5))
    interleaves = ["none", "none", "16B", "32B"] if swizzled else ["none", "none", "16B"]
    interleave = draw(st.sampled_from(interleaves)) if rank >= 3 else "none"
    if interleave == "32B":
        swizzle, atomicity = "32B", "16B"
    elif swizzled:
        swizzle, atomicity = draw(st.sampled_from(MODES))
    else:
        swizzle, atomicity = "none", "16B"
    if interleave == "none":
        stride0 = 1
        span = tm.SWIZZLE_SPAN.get(swizzle, 128)
        box0 = draw(st.sampled_from([b for b in (16, 32, 48, 64, 96, 128) if b <= span and b % size == 0])) // size
        count0 = box0
    else:
        stride0 = draw(st.integers(1, 2))
        count0 = draw(st.sampled_from([16 // size, 32 // size]))
        box0 = count0 * stride0  # whole 16-byte units: the driver refuses other interleaved boxes too
    outer = 3 if rank <= 3 else 2
    box = [box0] + [draw(st.integers(1, outer)) for _ in range(rank - 1)]
    strides = [stride0] + [draw(st.integers(1, 3)) for _ in range(rank - 1)]
    counts = [count0] + [-(-b // s) for b, s in zip(box[1:], strides[1:])]
    spans = [(n - 1) * s + 1 for n, s in zip(counts, strides)]
    dims = [draw(st.integers(1, spans[0] + 6))] + [draw(st.integers(1, 5)) for _ in range(rank - 1)]
    if inside:
        dims = [max(d, s) for d, s in zip(dims, spans)]
    unit = 32 if interleave == "32B" else 16
    byte_strides = []
    extent = _round_up(dims[0] * size, unit) + unit * draw(st.integers(0, 2))
    for i in range(1, rank):
        byte_strides.append(extent)
        extent = extent * dims[i] + unit * draw(st.integers(0, 1))
    fill = draw(st.sampled_from(["zero", "nan"])) if tm.ELEMENT_TYPES[name].nan_format else "zero"
    tmap = TensorMap(
        name,
        0x10000 + 32 * draw(st.integers(0, 64)),
        dims,
        byte_strides,
        box_dims=box,
        element_strides=strides,
        interleave=interleave,
        swizzle=swizzle,
        swizzle_atomicity=atomicity,
        oob_fill=fill,
    )
    if inside:
        coords = [draw(st.integers(0, d - s)) for d, s in zip(dims, spans)]
    else:
        coords = [draw(st.integers(-s - 1, d + 1)) for d, s in zip(dims, spans)]
    # §5.5.3.1: "The address of the bounding box must also be aligned to 16 bytes": dimension 0's
    # coordinate in whole 16-byte steps (down, or up where that keeps an inside box inside)
    step = 16 * tm.ELEMENT_TYPES[name].values // tm.ELEMENT_TYPES[name].global_bytes
    coords[0] -= coords[0] % step
    align = tm.ATOMICITY_ALIGNMENT[atomicity] if swizzle != "none" else 16
    address = 1024 * draw(st.integers(1, 3)) + align * draw(st.integers(0, 1024 // align - 1))
    return tmap, coords, address, draw(st.integers(0, 2**32 - 1))


def _global_image(tmap: TensorMap, seed: int, zero: bool = False) -> Segment:
    """Random bytes covering the whole tensor (and 32 bytes either side)."""
    size = tmap.type.global_bytes
    reach = (tmap.global_dims[0] - 1) * size + sum((d - 1) * s for d, s in zip(tmap.global_dims[1:], tmap.global_strides)) + size
    length = reach + 64
    data = bytes(length) if zero else np.random.default_rng(seed).integers(0, 256, length, dtype=np.uint8)
    return Segment(tmap.global_address - 32, data)


def _shared_image(tmap: TensorMap, address: int, seed: int | None = None) -> Segment:
    length = _round_up(address + tmap.shared_box_bytes(), 1024) + 1024
    data = bytes(length) if seed is None else np.random.default_rng(seed + 1).integers(0, 256, length, dtype=np.uint8)
    return Segment(0, data)


def _oracle(tmap: TensorMap, coords, image: Segment) -> tuple[np.ndarray, np.ndarray]:
    """The box's elements (rows of bytes, dimension 0 fastest) and which lie inside the tensor, from
    an ``as_strided`` view of the global image indexed with ``np.ix_`` -- no use of the module's
    addresses."""
    size = tmap.type.global_bytes
    buffer = np.frombuffer(image.data, dtype=np.uint8)[tmap.global_address - image.base :]
    shape = tuple(reversed(tmap.global_dims)) + (size,)
    strides = tuple(reversed((size,) + tmap.global_strides)) + (1,)
    tensor = as_strided(buffer, shape=shape, strides=strides, writeable=False)
    positions = [c + np.arange(-(-b // s)) * s for c, b, s in zip(coords, tmap.box_dims, tmap.strides)]
    valid = [(p >= 0) & (p < d) for p, d in zip(positions, tmap.global_dims)]
    clipped = [np.clip(p, 0, d - 1) for p, d in zip(positions, tmap.global_dims)]
    values = tensor[np.ix_(*reversed(clipped), np.arange(size))]
    inside = np.ones(values.shape[:-1], dtype=bool)
    for axis, v in enumerate(reversed(valid)):
        view = [1] * len(valid)
        view[axis] = len(v)
        inside = inside & v.reshape(view)
    return values.reshape(-1, size), inside.reshape(-1)


def _read_units(shared: Segment, write_addresses: np.ndarray) -> np.ndarray:
    image = np.frombuffer(shared.data, dtype=np.uint8)
    return image[write_addresses - shared.base]


# ---------------------------------------------------------------------------------------------
# Properties of the tile mode
# ---------------------------------------------------------------------------------------------


@given(tile_cases())
def test_fast_path_equals_the_reference_loops(case):
    """The numpy box (tile_box) names exactly the units the plain loops over box coordinates do."""
    tmap, coords, _, _ = case
    assert tm.tile_box(tmap, coords).same_as(tm.tile_box_reference(tmap, coords))


@given(tile_cases(swizzled=False))
def test_unswizzled_load_matches_the_strided_view_oracle(case):
    """Without swizzling the box lands densely from the destination, each element the oracle's
    element (as_strided + np.ix_), and every element outside the tensor is the fill."""
    tmap, coords, address, seed = case
    image = _global_image(tmap, seed)
    write = tm.tile_load(tmap, coords, image, address)
    expected, inside = _oracle(tmap, coords, image)
    size = tmap.type.shared_bytes
    assert np.array_equal(write.addresses.reshape(-1), address + np.arange(len(expected) * size))
    assert np.array_equal(write.data[inside], expected[inside])
    assert (write.kinds[inside] == tm.COPIED).all()
    fill = tm.ZERO_FILL if tmap.oob_fill == "zero" else tm.NAN_FILL
    assert (write.kinds[~inside] == fill).all() and (write.data[~inside] == 0).all()


@given(tile_cases(inside=True))
def test_a_box_inside_the_tensor_copies_exactly_the_strided_elements(case):
    """A box inside the tensor: every element is copied, and the element at box position ``k``
    is read back from shared memory at the swizzled address of ``dst + k * size``."""
    tmap, coords, address, seed = case
    image = _global_image(tmap, seed)
    write = tm.tile_load(tmap, coords, image, address)
    assert (write.kinds == tm.COPIED).all()
    shared = write.written_to(_shared_image(tmap, address))
    expected, inside = _oracle(tmap, coords, image)
    assert inside.all()
    size = tmap.type.shared_bytes
    # rows of the box at a pitch of the row's bytes, or of the swizzle span where the row is
    # shorter (what an H100 does: conformance/data/sm_90/tma.npz)
    row = -(-(tmap.box_dims[0] // tmap.type.values) // tmap.strides[0])
    pitch = max(row * size, {"none": 0, "32B": 32, "64B": 64, "128B": 128}[tmap.swizzle])
    k = np.arange(len(expected))
    linear = address + ((k // row) * pitch + (k % row) * size)[:, None] + np.arange(size)[None, :]
    where = tm.swizzle_address(linear, tmap.swizzle, tmap.swizzle_atomicity)
    assert np.array_equal(_read_units(shared, where), expected)
    assert shared.indeterminate == ()


@given(tile_cases())
def test_every_out_of_bound_element_is_the_fill(case):
    """§5.5.3.3: elements outside the tensor are 0 (zero fill) or the OOB-NaN, any NaN of the
    element's format; the others hold the tensor's bits."""
    tmap, coords, address, seed = case
    image = _global_image(tmap, seed)
    box = tm.tile_box(tmap, coords)
    write = tm.load(tmap, box, image, address)
    results = write.element_results()
    _, inside = _oracle(tmap, coords, image)
    assert np.array_equal(box.in_bounds, inside)
    for k, result in enumerate(results):
        if inside[k]:
            assert result == int.from_bytes(image.read(int(box.global_addresses[k]), tmap.type.global_bytes), "little")
        elif tmap.oob_fill == "zero":
            assert result == 0
        else:
            assert result == AnyNaN(tm.FORMATS["f32" if tmap.type.name.startswith("tf32") else tmap.type.name.removesuffix(".ftz")])
    assert write.conversion_open == (tmap.type.name in ("tf32", "tf32.ftz", "f32.ftz"))


@given(tile_cases())
def test_a_store_then_a_load_of_the_same_box_round_trips(case):
    """Storing a box from shared memory and loading the same box back gives the stored bytes for
    every element inside the tensor (at the same swizzled shared addresses), the fill for the
    others, and writes no global byte outside the in-bound elements."""
    tmap, coords, address, seed = case
    shared = _shared_image(tmap, address, seed)
    empty = _global_image(tmap, seed, zero=True)
    written = tm.tile_store(tmap, coords, shared, address, empty)
    back = tm.tile_load(tmap, coords, written, address)
    box = tm.tile_box(tmap, coords)
    inside = box.in_bounds
    original = _read_units(shared, back.addresses)
    assert np.array_equal(back.data[inside], original[inside])
    assert (back.kinds[~inside] == (tm.ZERO_FILL if tmap.oob_fill == "zero" else tm.NAN_FILL)).all()
    size = tmap.type.global_bytes
    touched = np.zeros(len(written.data), dtype=bool)
    footprint = box.global_addresses[inside][:, None] + np.arange(size)[None, :] - written.base
    touched[footprint.reshape(-1)] = True
    assert not np.frombuffer(written.data, dtype=np.uint8)[~touched].any()


@given(st.sampled_from(MODES[1:]), st.integers(0, 1 << 20))
def test_swizzle_permutes_atoms_within_the_span(mode, pattern):
    """§5.5.7: within each repeating pattern the swizzle is a permutation of the bytes that keeps
    each atom (16 bytes; 32 or 64 bytes for the atomicity sub-modes; 8 bytes with the flip) whole
    and in place inside it, and moves it only within its swizzle span (32, 64 or 128 bytes)."""
    swizzle, atomicity = mode
    start = pattern * 1024
    addresses = np.arange(start, start + 1024, dtype=np.int64)
    moved = tm.swizzle_address(addresses, swizzle, atomicity)
    assert np.array_equal(np.sort(moved), addresses)
    atom = {"16B": 16, "32B": 32, "32B_flip8B": 8, "64B": 64}[atomicity]
    rows = moved.reshape(-1, atom)
    assert (rows[:, 0] % atom == 0).all() and (rows == rows[:, :1] + np.arange(atom)).all()
    window = tm.SWIZZLE_SPAN[swizzle]
    assert np.array_equal(moved // window, addresses // window)


def test_the_16B_swizzles_are_the_matrix_descriptors():
    """One mechanism: the 16-byte-atomicity patterns are wgmma's Swizzle<B,4,3> and the 32-byte one
    tcgen05's "128B_base32B" (semantics/wgmma_layout.py)."""
    a = np.arange(0, 1 << 14, dtype=np.int64)
    for swizzle in ("32B", "64B", "128B"):
        assert np.array_equal(tm.swizzle_address(a, swizzle), wl.swizzle_address(a, swizzle))
    assert np.array_equal(tm.swizzle_address(a, "128B", "32B"), wl.swizzle_address(a, "128B_base32B"))
    assert np.array_equal(tm.swizzle_address(a, "none"), a)


# The tables of §5.5.7: row r of 128 bytes holds, at 16-byte position j, the 16-byte chunk table[r][j]
# of the source ("... pattern repeats ...").
SWIZZLE_TABLES = {
    ("32B", "16B"): [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]],
    ("64B", "16B"): [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4]],
    ("128B", "16B"): [
        [0, 1, 2, 3, 4, 5, 6, 7],
        [1, 0, 3, 2, 5, 4, 7, 6],
        [2, 3, 0, 1, 6, 7, 4, 5],
        [3, 2, 1, 0, 7, 6, 5, 4],
        [4, 5, 6, 7, 0, 1, 2, 3],
        [5, 4, 7, 6, 1, 0, 3, 2],
        [6, 7, 4, 5, 2, 3, 0, 1],
    ],
    ("128B", "32B"): [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5], [4, 5, 6, 7, 0, 1, 2, 3], [6, 7, 4, 5, 2, 3, 0, 1]],
    ("128B", "64B"): [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]],
}


@pytest.mark.parametrize("mode", list(SWIZZLE_TABLES))
def test_the_manuals_swizzle_tables(mode):
    """The patterns of §5.5.7 as printed, on their boundary and repeated (at 256/512/1024 bytes
    and the rows after the printed ones)."""
    table = SWIZZLE_TABLES[mode]
    period = {("32B", "16B"): 2, ("64B", "16B"): 4, ("128B", "16B"): 8, ("128B", "32B"): 4, ("128B", "64B"): 2}[mode]
    for repeat in range(3):
        for r in range(8):
            if r % period >= len(table):
                continue  # the eighth row of the 128B table is not printed
            row = table[r % period]
            for j, chunk in enumerate(row):
                source = 1024 * repeat + 128 * r + 16 * chunk + np.arange(16)
                assert np.array_equal(tm.swizzle_address(source, *mode), 1024 * repeat + 128 * r + 16 * j + np.arange(16))


def test_the_8_byte_flip_swaps_halves_in_odd_rows():
    """§5.5.7 "32B atomicity with 8B flip": the 32-byte-atomicity pattern, and in every other
    128-byte row the two 8-byte halves of each 16 bytes swapped (our reading: the odd rows)."""
    a = np.arange(0, 1024, dtype=np.int64)
    base = tm.swizzle_address(a, "128B", "32B")
    flipped = tm.swizzle_address(a, "128B", "32B_flip8B")
    odd = (a >> 7) & 1 == 1
    assert np.array_equal(flipped[~odd], base[~odd])
    assert np.array_equal(flipped[odd], base[odd] ^ 8)


def test_swizzle_base_offset():
    """§5.5.7: 0 on the pattern's boundary, else (dstMem/128)%8, (dstMem/64)%4, (dstMem/32)%2."""
    assert [tm.swizzle_base_offset(a, "128B") for a in (0, 1024, 1024 + 384, 896)] == [0, 0, 3, 7]
    assert [tm.swizzle_base_offset(a, "64B") for a in (512, 640, 512 + 192)] == [0, 2, 3]
    assert [tm.swizzle_base_offset(a, "32B") for a in (256, 288, 320)] == [0, 1, 0]
    assert tm.swizzle_base_offset(1040, "none") == 0


# ---------------------------------------------------------------------------------------------
# Concrete cases: a worked tile, gather4/scatter4, sub-byte types
# ---------------------------------------------------------------------------------------------


def test_a_worked_2d_tile_with_negative_coordinates_and_128B_swizzle():
    """A 2D f16 tensor 40 x 10 (row pitch 128 bytes), box 64 x 8 at (-8, 4), 128B swizzle at
    1024: row y of the box is tensor row 4 + y (rows 10, 11 outside), columns -8..-1 and 40..55
    outside; the chunk c of box row y lands at chunk c ^ y."""
    tmap = TensorMap("f16", 0x2000, (40, 10), (128,), box_dims=(64, 8), swizzle="128B")
    values = (np.arange(64 * 10, dtype=np.uint32) * 7 + 1).astype("<u2")
    image = Segment(0x2000, values.tobytes())
    write = tm.tile_load(tmap, (-8, 4), image, 1024)
    shared = np.frombuffer(write.written_to(Segment(0, bytes(4096))).data, dtype="<u2")
    for y in range(8):
        for x in range(64):
            chunk, within = divmod(x * 2, 16)
            got = shared[(1024 + 128 * y + 16 * (chunk ^ y) + within) // 2]
            tx, ty = x - 8, 4 + y
            assert got == (values[ty * 64 + tx] if 0 <= tx < 40 and ty < 10 else 0), (x, y)


def test_gather4_and_scatter4_rows():
    """§5.5.3.4: four boxes of box[0] elements at (col, row_k), one after another in shared
    memory; a row outside the tensor is filled on load and not written on store."""
    tmap = TensorMap("f32", 0x4000, (16, 12), (64,), box_dims=(8, 1))
    values = np.arange(16 * 12, dtype="<u4")
    image = Segment(0x4000, values.tobytes())
    box = tm.gather4_box(tmap, (4, 2, 5, 0, 13))
    write = tm.load(tmap, box, image, 512)
    got = np.frombuffer(write.data.tobytes(), dtype="<u4").reshape(4, 8)
    for k, row in enumerate((2, 5, 0)):
        assert list(got[k]) == list(values[row * 16 + 4 : row * 16 + 12])
    assert not got[3].any() and (write.kinds[24:] == tm.ZERO_FILL).all()
    stored = tm.store(tmap, box, write.written_to(Segment(0, bytes(2048))), 512).written_to(Segment(0x4000, bytes(len(image.data))))
    back = np.frombuffer(stored.data, dtype="<u4").reshape(12, 16).copy()
    assert np.array_equal(back[[2, 5, 0], 4:12], values.reshape(12, 16)[[2, 5, 0], 4:12])
    back[[2, 5, 0], 4:12] = 0
    assert not back.any()


def test_gather4_rules():
    """§5.5.3.4: 2D tensors only, a box of one row, no interleave, five coordinates."""
    with pytest.raises(OperandError, match="only on 2D tensor data"):
        tm.gather4_box(TensorMap("f32", 0x4000, (16, 12, 2), (64, 768), box_dims=(8, 1, 1)), (0, 0, 0, 0, 0))
    with pytest.raises(OperandError, match="must be one"):
        tm.gather4_box(TensorMap("f32", 0x4000, (16, 12), (64,), box_dims=(8, 2)), (0, 0, 0, 0, 0))
    with pytest.raises(OperandError, match="takes 5 tensor coordinates"):
        tm.gather4_box(TensorMap("f32", 0x4000, (16, 12), (64,), box_dims=(8, 1)), (0, 0))


def _padded_map(name: str, **kw) -> TensorMap:
    return TensorMap(name, 0x8000, (256, 3), (256,), box_dims=(128, 2), **kw)


def test_b4x16_p64_and_b6x16_p32_loads_append_uninitialised_padding():
    """§5.5.1.1.1: sixteen 4-bit (6-bit) values, 8 (12) global bytes, land in 16 shared bytes whose
    last 8 (4) are "un-initialized"; a unit outside the tensor is zero with the same padding."""
    for name, data_bytes in (("b4x16_p64", 8), ("b6x16_p32", 12)):
        tmap = _padded_map(name)
        image = Segment(0x8000, np.random.default_rng(3).integers(0, 256, 768, dtype=np.uint8))
        write = tm.tile_load(tmap, (128, 2), image, 2048)
        assert write.data.shape == (16, 16)
        row_bytes = 256 * data_bytes // 16
        for k in range(16):
            y, u = divmod(k, 8)
            if y == 0:
                start = 2 * 256 + row_bytes // 2 + u * data_bytes
                assert bytes(write.data[k, :data_bytes].tolist()) == image.read(0x8000 + start, data_bytes)
                assert (write.kinds[k, :data_bytes] == tm.COPIED).all()
            else:
                assert (write.kinds[k, :data_bytes] == tm.ZERO_FILL).all() and not write.data[k].any()
            assert (write.kinds[k, data_bytes:] == tm.UNDEFINED).all()
        shared = write.written_to(Segment(2048, bytes(256)))
        assert shared.unknown(2048 + data_bytes, 16 - data_bytes) == list(range(16 - data_bytes))
        assert shared.unknown(2048, data_bytes) == []


def test_b6p2x16_store_packs_the_low_six_bits():
    """§5.5.1.1.1 ".b6p2x16": 16 shared bytes, 6 data bits at the LSB each, packed into 12 global
    bytes (element j at bits 6j..6j+5, little-endian: our reading of Figure 7)."""
    tmap = _padded_map("b6p2x16")
    raw = np.random.default_rng(5).integers(0, 256, 4096, dtype=np.uint8)
    shared = Segment(0, raw)
    write = tm.store(tmap, tm.tile_box(tmap, (0, 1)), shared, 1024)
    assert write.data.shape == (16, 12)
    for k in range(16):
        unit = raw[1024 + 16 * k : 1024 + 16 * k + 16]
        packed = sum((int(v) & 0x3F) << (6 * j) for j, v in enumerate(unit)).to_bytes(12, "little")
        assert bytes(write.data[k].tolist()) == packed
        y, u = divmod(k, 8)
        assert write.addresses[k] == 0x8000 + 256 * (1 + y) + 12 * u
    assert tm.element_type_for_code(15, "store").name == "b6p2x16"
    assert tm.element_type_for_code(15).name == "b6x16_p32"


def test_b4x16_moves_packed_bytes_as_is():
    """ ".b4x16: no padding ... copied as is": a box of 32 values is 16 bytes of the packed row."""
    tmap = TensorMap("b4x16", 0x100, (64, 2), (32,), box_dims=(32, 2))
    image = Segment(0x100, bytes(range(64)))
    write = tm.tile_load(tmap, (32, 0), image, 0)
    assert bytes(write.data.reshape(-1).tolist()) == bytes(range(16, 32)) + bytes(range(48, 64))
    with pytest.raises(OperandError, match="aligned to 16 bytes"):
        tm.tile_load(tmap, (16, 0), image, 0)  # 8 bytes into the row (§5.5.3.1)


def test_sub_byte_restrictions_of_the_copies():
    """§9.7.9.25.5.1: no .b4x16_p64 from shared to global; the first coordinate a multiple of
    128; the driver's 128B_ATOM_64B for .b6x16 stores only."""
    tmap = _padded_map("b4x16_p64")
    with pytest.raises(OperandError, match="does not support the type .b4x16_p64"):
        tm.tile_store(tmap, (0, 0), Segment(0, bytes(4096)), 1024, Segment(0x8000, bytes(768)))
    with pytest.raises(OperandError, match="multiple of 128"):
        tm.tile_box(tmap, (64, 0))
    atom64 = _padded_map("b6x16_p32", swizzle="128B", swizzle_atomicity="64B")
    with pytest.raises(OperandError, match="stores only"):
        tm.tile_load(atom64, (0, 0), Segment(0x8000, bytes(768)), 1024)
    tm.store(atom64, tm.tile_box(atom64, (0, 0)), Segment(0, bytes(4096)), 1024)


# ---------------------------------------------------------------------------------------------
# im2col
# ---------------------------------------------------------------------------------------------


def _lattice(low: int, high: int, step: int) -> list[int]:
    return list(range(low, high + 1, step))


def _im2col_oracle(tmap: TensorMap, coords, offsets) -> np.ndarray:
    """Every filter base of the bounding box listed in NDHW order (W fastest) from the starting
    image on, Pixels-per-Column of them from the instruction's position; each pixel's channels
    addressed by plain arithmetic (-1 outside the tensor)."""
    p = tmap.im2col
    rank = tmap.rank
    sizes = tmap.global_dims[1 : rank - 1]
    lattices = [_lattice(lo, s - 1 + up, t) for lo, up, s, t in zip(p.lower_corner, p.upper_corner, sizes, tmap.strides[1 : rank - 1])]
    start = tuple(coords[1 : rank - 1])
    per_image = math.prod(len(axis) for axis in lattices)
    images = p.pixels_per_column // per_image + 2
    step_n = tmap.strides[-1]  # the next image by N's traversal stride (as an H100 does)
    positions = [
        (tuple(reversed(spatial)), n) for n in range(coords[-1], coords[-1] + images * step_n, step_n) for spatial in itertools.product(*reversed(lattices))
    ]
    first = positions.index((start, coords[-1]))
    size = tmap.type.global_bytes
    out = []
    for spatial, n in positions[first : first + p.pixels_per_column]:
        x = [a + o for a, o in zip(spatial, offsets)]
        pixel_inside = 0 <= n < tmap.global_dims[-1] and all(0 <= xi < s for xi, s in zip(x, sizes))
        for k in range(p.channels_per_pixel):
            c = coords[0] + k
            if pixel_inside and 0 <= c < tmap.global_dims[0]:
                out.append(tmap.global_address + c * size + sum(xi * s for xi, s in zip(x, tmap.global_strides)) + n * tmap.global_strides[-1])
            else:
                out.append(-1)
    return np.array(out, dtype=np.int64)


@st.composite
def im2col_cases(draw):
    name = draw(st.sampled_from(["u8", "f16", "f32"]))
    size = tm.ELEMENT_TYPES[name].global_bytes
    rank = draw(st.integers(3, 5))
    spatial = rank - 2
    cpp = draw(st.integers(1, 128 // size))
    sizes = [draw(st.integers(1, 5)) for _ in range(spatial)]
    limit = 1 << (tm.CORNER_BITS[rank] - 1)
    lower = [draw(st.integers(max(-2, -limit), 1)) for _ in range(spatial)]
    upper = [draw(st.integers(max(-2, lo - s + 1), 1)) for lo, s in zip(lower, sizes)]
    steps = [draw(st.integers(1, 3)) for _ in range(spatial)]
    dims = [draw(st.integers(1, cpp + 4))] + sizes + [draw(st.integers(1, 3))]
    unit = 16
    byte_strides, extent = [], _round_up(dims[0] * size, unit)
    for d in dims[1:]:
        byte_strides.append(extent)
        extent = extent * d + unit * draw(st.integers(0, 1))
    tmap = TensorMap(
        name,
        0x20000,
        dims,
        byte_strides,
        im2col=Im2col(lower, upper, cpp, draw(st.integers(1, 40))),
        element_strides=[1] + steps + [draw(st.integers(1, 2))],
        oob_fill=draw(st.sampled_from(["zero", "nan"])) if name != "u8" else "zero",
    )
    start = [lo + t * draw(st.integers(0, (s - 1 + up - lo) // t)) for lo, up, s, t in zip(lower, upper, sizes, steps)]
    channel_step = 16 // size  # §5.5.3.1: the box starts on a 16-byte boundary of its row
    coords = [channel_step * draw(st.integers(-1, dims[0] // channel_step + 1))] + start + [draw(st.integers(-1, dims[-1]))]
    offsets = [draw(st.integers(0, 3)) for _ in range(spatial)]
    return tmap, coords, offsets


@given(im2col_cases())
def test_im2col_box_matches_the_enumerated_filter_positions(case):
    """§5.5.4: the pixel column is the bounding box's filter positions in NDHW order from the
    instruction's position, each read at position + im2col offsets, C channels from c, the images
    stepped by N's traversal stride; anything outside the tensor (or past the last image) is out of
    bounds. Unswizzled, the pixels lie one after another in shared memory."""
    tmap, coords, offsets = case
    box = tm.im2col_box(tmap, coords, offsets)
    assert np.array_equal(box.global_addresses, _im2col_oracle(tmap, coords, offsets))
    assert np.array_equal(box.shared_offsets, np.arange(len(box.shared_offsets)) * tmap.type.shared_bytes)


def _example_map(c: int, w: int, h: int, n: int, lower: int, upper: int, step: int, ppc: int, cpp: int) -> TensorMap:
    dims = (c, w, h, n)
    strides = (2 * c, 2 * c * w, 2 * c * w * h)
    return TensorMap("f16", 0, dims, strides, im2col=Im2col((lower, lower), (upper, upper), cpp, ppc), element_strides=(1, step, step, 1))


def _pixels(tmap: TensorMap, box: tm.Box) -> list[tuple[int, int, int] | None]:
    """(w, h, n) of each pixel's first channel, from its address (None outside the tensor)."""
    cpp = tmap.im2col.channels_per_pixel
    out: list[tuple[int, int, int] | None] = []
    for a in box.global_addresses[::cpp].tolist():
        if a < 0:
            out.append(None)
            continue
        n, rest = divmod(a, tmap.global_strides[2])
        h, rest = divmod(rest, tmap.global_strides[1])
        out.append((rest // tmap.global_strides[0], h, n))
    return out


def test_the_manuals_im2col_example_1():
    """§5.5.4.1 example 1: C 64, W 9, H 14, N 64, corners -1 / -1, Pixels-per-Column 64,
    Channels-per-Pixel 8, coordinates (7, 7, 4, 0) read outermost first (N 7, H 7, W 4, C 0):
    the box in W is -1..7, so the column runs W 4..7 of row H 7, then W -1..7 of H 8 (W -1
    outside the tensor), ..."""
    tmap = _example_map(64, 9, 14, 64, -1, -1, 1, 64, 8)
    pixels = _pixels(tmap, tm.im2col_box(tmap, (0, 4, 7, 7), (0, 0)))
    assert pixels[:4] == [(4, 7, 7), (5, 7, 7), (6, 7, 7), (7, 7, 7)]
    assert pixels[4] is None and pixels[5:14] == [(w, 8, 7) for w in range(0, 8)] + [None]
    assert len(pixels) == 64


def test_the_manuals_im2col_traversal_stride_example():
    """§5.5.4.2: W 8, H 14, traversal stride 2, corners -1 / -1, offsets (1, 1), Pixels-per-
    Column 32, coordinates (7, 7, 5, 0) read outermost first (N 7, H 7, W 5): filter bases W 5 of
    H 7, then W -1, 1, 3, 5 of H 9, 11, then H -1 of image 8 ...; each read at +1, +1."""
    tmap = _example_map(64, 8, 14, 64, -1, -1, 2, 32, 16)
    pixels = _pixels(tmap, tm.im2col_box(tmap, (0, 5, 7, 7), (1, 1)))
    bases = [(5, 7, 7)] + [(w, h, 7) for h in (9, 11) for w in (-1, 1, 3, 5)] + [(w, -1, 8) for w in (-1, 1, 3, 5)]
    assert pixels[: len(bases)] == [(w + 1, h + 1, n) if 0 <= h + 1 < 14 else None for w, h, n in bases]


def test_im2col_start_off_the_traversal_lattice():
    """A filter base between the lattice points: W steps by the stride from it (0, 2, 4, 6) up to
    the box's W end (8 - 1 - 1 = 6), then wraps to the lower corner in the next H -- past the
    box's H end, so to the next image, here past N (out of bounds)."""
    tmap = _example_map(8, 8, 3, 1, -1, -1, 2, 8, 8)
    pixels = _pixels(tmap, tm.im2col_box(tmap, (0, 0, 1, 0), (0, 0)))
    assert pixels == [(0, 1, 0), (2, 1, 0), (4, 1, 0), (6, 1, 0)] + [None] * 4


def test_im2col_rules():
    """The filter base inside the bounding box (§5.5.4.1), the offsets' ranges, the store's
    corners (§9.7.9.25.5.1), and what is not modelled."""
    tmap = _example_map(64, 9, 14, 64, -1, -1, 1, 64, 8)
    with pytest.raises(OperandError, match="must be within the bounding box"):
        tm.im2col_box(tmap, (0, 8, 7, 7), (0, 0))
    with pytest.raises(OperandError, match=r"outside \[0, 255\]"):
        tm.im2col_box(tmap, (0, 4, 7, 7), (256, 0))
    with pytest.raises(OperandError, match="two less than"):
        tm.im2col_box(tmap, (0, 4, 7, 7), (0,))
    with pytest.raises(OperandError, match="non-negative"):
        tm.im2col_store_box(tmap, (0, 4, 7, 7))
    plain = _example_map(64, 9, 14, 64, 0, 0, 1, 64, 8)
    assert tm.im2col_store_box(plain, (0, 4, 7, 7)).same_as(tm.im2col_box(plain, (0, 4, 7, 7), (0, 0)))
    wide = TensorMap("f16", 0, (64, 9, 14, 2), (128, 1152, 16128), im2col=Im2col((0,), (0,), 64, 128, wide="w"), swizzle="128B")
    with pytest.raises(OperandError, match=r"wHalo 600 is outside \[0, 512\)"):
        tm.im2col_w_box(wide, (0, 0, 0, 0), 600)
    with pytest.raises(NotModelled, match="halo"):
        tm.im2col_w_box(wide, (0, 0, 0, 0), 2, 1)
    with pytest.raises(OperandError, match="not .im2col"):
        tm.im2col_box(wide, (0, 0, 0, 0), (0, 0))


# ---------------------------------------------------------------------------------------------
# Validation of the tensor map and of the operands
# ---------------------------------------------------------------------------------------------

BASE = dict(element_type="f16", global_address=0x1000, global_dims=(64, 8, 4), global_strides=(128, 1024), box_dims=(64, 4, 2))
PADDED = dict(element_type="b6x16_p32", global_address=0x1000, global_dims=(256, 3), global_strides=(256,), box_dims=(128, 2))
IM2COL = dict(element_type="f16", global_address=0x1000, global_dims=(16, 8, 8, 2), global_strides=(32, 256, 2048), im2col=Im2col((0, 0), (0, 0), 16, 64))

INVALID = [
    (BASE, dict(element_type="e4m3"), "no element type .e4m3"),
    (BASE, dict(global_dims=(8,) * 6, global_strides=(16,) * 5, box_dims=(8,) * 6), "rank 6"),
    (BASE, dict(global_address=0x1008), "not 16-byte aligned"),
    (BASE, dict(global_address=0x1010, interleave="32B", swizzle="32B"), "32-byte aligned"),
    (BASE, dict(global_strides=(120, 1024)), "multiple of 16"),
    (BASE, dict(global_strides=(128, 1 << 40)), r"less than 2\^40"),
    (BASE, dict(global_strides=(128,)), "has 2 global strides"),
    (BASE, dict(global_dims=(64, 0, 4)), "non-zero and at most 2\\^32"),
    (BASE, dict(box_dims=(64, 257, 2)), "at most 256"),
    (BASE, dict(box_dims=(4, 4, 2)), "not a multiple of 16"),
    (BASE, dict(box_dims=(64, 4)), "3-dimensional bounding box"),
    (BASE, dict(element_strides=(2, 1, 1)), "dimension 0 must always be 1"),
    (BASE, dict(element_strides=(1, 9, 1)), "at most 8"),
    (BASE, dict(swizzle="32B"), "more than the 32B swizzle span"),
    (BASE, dict(swizzle="64B", swizzle_atomicity="32B"), "Table 14"),
    (BASE, dict(swizzle="96B"), "no swizzling mode"),
    (BASE, dict(interleave="32B", global_address=0x1020, global_strides=(128, 1024), swizzle="64B", box_dims=(16, 4, 2)), "needs the 32B swizzling"),
    (BASE, dict(interleave="16B", global_dims=(64, 8), global_strides=(128,), box_dims=(64, 4)), "3D, 4D and 5D"),
    (BASE, dict(element_type="u16", oob_fill="nan"), "floating-point"),
    (BASE, dict(oob_fill="inf"), "no fill mode"),
    (BASE, dict(l2_promotion="512B"), "no L2 promotion"),
    (BASE, dict(im2col=Im2col((0,), (0,), 8, 8)), "exactly one"),
    (BASE, dict(box_dims=(8, 2, 2), interleave="16B", element_strides=(3, 1, 1)), "multiple of 16 bytes"),
    (PADDED, dict(box_dims=(64, 2)), r"Box-Size\[0\]"),
    (PADDED, dict(global_dims=(192, 3)), r"Tensor-Size\[0\]"),
    (PADDED, dict(global_address=0x1010), "must be 32B aligned"),
    (PADDED, dict(global_strides=(272,)), "multiple of 32"),
    (PADDED, dict(swizzle="64B"), "none, 128B"),
    (PADDED, dict(swizzle="128B", swizzle_atomicity="32B_flip8B"), "atomicity"),
    (PADDED, dict(oob_fill="nan"), "does not support the types .b4x16"),
    (PADDED, dict(element_type="b4x16", global_dims=(255, 3)), "multiple of 2"),
    (IM2COL, dict(global_dims=(16, 8), global_strides=(32,)), "3D, 4D and 5D"),
    (IM2COL, dict(im2col=Im2col((-129, 0), (0, 0), 16, 64)), r"outside \[-128, 127\]"),
    (IM2COL, dict(im2col=Im2col((0,), (0, 0), 16, 64)), "corner has 2 coordinate"),
    (IM2COL, dict(im2col=Im2col((0, 5), (0, -4), 16, 64)), "no position in H"),
    (IM2COL, dict(im2col=Im2col((0, 0), (0, 0), 257, 64)), "Channels-per-Pixel 257"),
    (IM2COL, dict(im2col=Im2col((0, 0), (0, 0), 16, 1025)), "Pixels-per-Column 1025"),
    (IM2COL, dict(im2col=Im2col((0, 0), (0, 0), 128, 64), swizzle="64B"), "more than the 64B swizzle span"),
    (IM2COL, dict(im2col=Im2col((0,), (0,), 16, 64, wide="w"), swizzle="32B"), "only 64B, 128B, 128B_ATOM_32B"),
    (IM2COL, dict(im2col=Im2col((0,), (0,), 16, 64, wide="w"), swizzle="128B", interleave="16B"), "not supported for .im2col::w"),
]


@pytest.mark.parametrize("base, change, message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_tensor_maps_name_the_rule(base, change, message):
    with pytest.raises(OperandError, match=message):
        TensorMap(**{**base, **change})


def test_valid_maps_and_their_table_32_codes():
    """The bases are valid, and the map's fields give Table 32's values (§9.7.9.26)."""
    for base in (BASE, PADDED, IM2COL):
        TensorMap(**base)
    codes = TensorMap(**{**BASE, "swizzle": "128B", "swizzle_atomicity": "32B_flip8B", "oob_fill": "nan"}).codes()
    assert codes == {"elemtype": 6, "interleave_layout": 0, "swizzle_mode": 3, "swizzle_atomicity": 2, "fill_mode": 1, "rank": 2}
    assert [tm.ELEMENT_TYPES[n].code for n in ("u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64", "bf16", "tf32", "tf32.ftz")] == list(
        range(13)
    )
    assert tm.element_type(".b4x16_p64").code == 14 and tm.element_type_for_code(2).name == "u32"
    with pytest.raises(OperandError, match="not in Table 32"):
        tm.element_type_for_code(16)


def test_operand_errors():
    """Coordinates (count, .s32), shared-memory alignment (§5.5.3.1 16 bytes; §5.5.7 32/64 for the
    atomicity sub-modes), memory images that do not hold the box, and overlapping stores."""
    tmap = TensorMap(**BASE)
    image = Segment(0x1000, bytes(4096))
    with pytest.raises(OperandError, match="takes 3 tensor coordinates"):
        tm.tile_box(tmap, (0, 0))
    with pytest.raises(OperandError, match=".s32"):
        tm.tile_box(tmap, (1 << 31, 0, 0))
    with pytest.raises(OperandError, match="16-byte aligned"):
        tm.tile_load(tmap, (0, 0, 0), image, 0x408)
    atom = TensorMap(**{**BASE, "swizzle": "128B", "swizzle_atomicity": "64B"})
    with pytest.raises(OperandError, match="64-byte aligned"):
        tm.tile_load(atom, (0, 0, 0), image, 0x420)
    with pytest.raises(OperandError, match="does not hold"):
        tm.tile_load(tmap, (0, 0, 0), Segment(0x1000, bytes(100)), 0)
    with pytest.raises(OperandError, match="does not hold"):
        tm.tile_load(tmap, (0, 0, 0), image, 0).written_to(Segment(0, bytes(100)))
    with pytest.raises(OperandError, match="tile mode"):
        tm.tile_box(TensorMap(**IM2COL), (0, 0, 0, 0))


def test_overlapping_store_leaves_clashing_bytes_open():
    """Strides that overlap name a global byte twice: where the two writes agree the byte holds
    their value, where they differ it is indeterminate (the manual orders neither write)."""
    tmap = TensorMap("u8", 0x1000, (16, 2), (16,), box_dims=(16, 2))
    shared = Segment(0, bytes(range(16)) * 2 + bytes(range(100, 116)) * 2)
    same = tm.store(tmap, tm.tile_box(tmap, (0, 0)), shared, 0)
    assert not same.overlapping and not same.undefined.any()
    overlapping = TensorMap("u8", 0x1000, (32, 2), (16,), box_dims=(32, 2))  # row 1 starts 16 bytes into row 0
    image = bytes(range(32)) + bytes(range(16, 48))  # row 1's first 16 bytes repeat row 0's last 16
    write = tm.store(overlapping, tm.tile_box(overlapping, (0, 0)), Segment(0, image), 0)
    after = write.written_to(Segment(0x1000, bytes(48)))
    assert write.overlapping and after.unknown(0x1000, 48) == [] and after.data == bytes(range(48))
    clash = bytes(range(32)) + bytes(range(200, 232))
    after = tm.store(overlapping, tm.tile_box(overlapping, (0, 0)), Segment(0, clash), 0).written_to(Segment(0x1000, bytes(48)))
    assert after.unknown(0x1000, 48) == list(range(16, 32)) and after.data[:16] == bytes(range(16)) and after.data[32:] == bytes(range(216, 232))


def test_interleaved_box_counts_slices():
    """The sm_90 reading of an interleaved map (tensor_map.interleaved_box): dimension 0 in
    16-byte slices stepped by its traversal stride, dimension rank-2 not stepped, rows dense in
    shared memory, whole slices out of bounds."""
    tmap = TensorMap("f16", 0x1000, (4, 3, 5, 2), (64, 192, 960), box_dims=(8, 2, 3, 2), element_strides=(2, 1, 1, 1), interleave="16B")
    box = tm.interleaved_box(tmap, (1, 1, 4, 0))
    assert box.shared_bytes == 4 * 16 * 2 * 2  # ceil(8 / 2) slices x dimension 1 x dimension 3; dimension 2 not stepped
    assert np.array_equal(box.shared_offsets, np.arange(0, box.shared_bytes, 2))
    row = 0x1000 + 1 * 64 + 4 * 192
    first = [row + x0 * 16 + e for x0 in (1, 3) for e in range(0, 16, 2)]  # slices 1 and 3; 5 and 7 are past the 4 slices
    assert box.global_addresses[:16].tolist() == first and (box.global_addresses[16:32] == -1).all()
    assert box.global_addresses[32:48].tolist() == [a + 64 for a in first]  # dimension 1 next
    assert box.global_addresses[64:80].tolist() == [a + 960 for a in first]  # then dimension 3


def test_oob_nan_written_with_a_known_pattern_or_left_open():
    """An OOB-NaN element is any NaN of its format: a profile's pattern is written where given (and
    must be a NaN), otherwise its bytes stay indeterminate in the shared image."""
    tmap = TensorMap("f32", 0x1000, (4, 2), (16,), box_dims=(8, 1), oob_fill="nan")
    image = Segment(0x1000, np.arange(32, dtype=np.uint8))
    write = tm.tile_load(tmap, (0, 0), image, 0)
    open_image = write.written_to(Segment(0, bytes(64)))
    assert open_image.unknown(16, 16) == list(range(16)) and open_image.unknown(0, 16) == []
    pinned = write.written_to(Segment(0, bytes(64)), nan_bits=0x7FFFFFFF)
    assert pinned.read(16, 16) == bytes.fromhex("ffffff7f") * 4 and pinned.indeterminate == ()
    with pytest.raises(OperandError, match="not a f32 NaN"):
        write.written_to(Segment(0, bytes(64)), nan_bits=0x3F800000)


def test_the_bounding_box_address_is_16_byte_aligned():
    """§5.5.3.1: "The address of the bounding box must also be aligned to 16 bytes" -- refused
    (an H100 faults on such a copy: every unaligned case of the TMA round)."""
    tmap = TensorMap("u32", 0x1000, (64, 4), (256,), box_dims=(8, 2))
    tm.tile_box(tmap, (4, 0))  # 16 bytes in
    with pytest.raises(OperandError, match="aligned to 16 bytes"):
        tm.tile_box(tmap, (2, 1))


def test_replacing_the_rank():
    """tensormap.replace.rank (§9.7.9.26, zero-based): a lower rank keeps the first dimensions'
    fields (im2col corners included); a higher one is not evaluated; a rank past 5 is refused."""
    from ptxspec.semantics.instructions import execute
    from ptxspec.semantics.state import State

    replace = "tensormap.replace.tile.rank.global.b1024.b32 [a], v"
    tile = TensorMap(**BASE)
    lowered = execute(replace, [0x100, 1], state=State(tensor_maps=((0x100, tile),))).state.tensor_maps[0][1]
    assert (lowered.global_dims, lowered.global_strides, lowered.box_dims, lowered.strides) == ((64, 8), (128,), (64, 4), (1, 1))
    image = TensorMap(**{**IM2COL, "global_dims": (16, 8, 8, 8, 2), "global_strides": (32, 256, 2048, 16384), "im2col": Im2col((0, -1, 0), (0, 1, 0), 16, 64)})
    cut = execute(replace, [0x100, 3], state=State(tensor_maps=((0x100, image),))).state.tensor_maps[0][1]
    assert cut.im2col.lower_corner == (0, -1) and cut.global_dims == (16, 8, 8, 8)
    with pytest.raises(NotModelled, match="raises the rank"):
        execute(replace, [0x100, 3], state=State(tensor_maps=((0x100, tile),)))
    with pytest.raises(OperandError, match="1 to 5"):
        execute(replace, [0x100, 7], state=State(tensor_maps=((0x100, tile),)))
