"""tcgen05.ld / tcgen05.st register <-> Tensor Memory maps (semantics/tcgen05_layout.py), checked
against NVIDIA CUTLASS's SM100 TMEM copy traits and the manual's own text (§9.7.16.2.3.1,
§9.7.16.8.2, Table 47).

The oracle is data transcribed from CUTLASS at commit ``7107b05535f8977f5ecb9d01ee203205b1fd9bc4``:

* ``include/cute/atom/copy_traits_sm100.hpp``, ``struct Copy_Traits<SM100_TMEM_LOAD_<name>>``:
  ``ValID`` (reference bit -> TMEM bit address) and ``DstLayout`` ((thread, register bit) ->
  reference bit), as (shape, stride) tuples in :data:`CUTLASS_LOAD_TRAITS`. Every
  ``Copy_Traits<SM100_TMEM_STORE_<name>>`` takes ``ThrID`` and ``ValID`` from ``LOAD_<name>`` and
  has ``SrcLayout = LOAD_<name>::DstLayout``: a store writes the cells the load reads.
* ``include/cute/arch/tmem_allocator_sm100.hpp``: ``TMEM::DP_b = 1 << 21``, the lane (datapath)
  stride in bit addressing; a TMEM bit address is ``lane << 21 | column << 5 | bit``.
* ``include/cute/arch/copy_sm100.hpp``, ``struct SM100_TMEM_LOAD_<name>``: the PTX each op issues
  (``32dp32b`` = ``.32x32b``, ``16dp64b`` = ``.16x64b``, ``16dp128b`` = ``.16x128b``, ``16dp256b``
  = ``.16x256b``, ``16dp32b`` = ``.16x32bx2``; ``<N>x`` = ``.xN``; ``_16b`` = ``.pack::16b``) and
  the ``immHalfSplitoff`` of the ``16dp32b`` ops (:data:`CUTLASS_SPLIT`).

A tiny CuTe layout evaluator (:func:`cute_eval`: colexicographic index -> offset) turns them into
(lane, column, bit) for every thread and register bit, compared with :func:`ld_st_cells` and
:func:`packed_cells`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.semantics import tcgen05_layout as tl
from ptxspec.spec.errors import OperandError

CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
DP_b = 1 << 21  # TMEM::DP_b, tmem_allocator_sm100.hpp

#: name -> (ValID shape, ValID stride, DstLayout shape, DstLayout stride) of
#: Copy_Traits<SM100_TMEM_LOAD_<name>>, copy_traits_sm100.hpp at CUTLASS_COMMIT.
CUTLASS_LOAD_TRAITS: dict[str, tuple] = {
    "16dp256b1x": ((256, 16), (1, DP_b), ((4, 8), (64, 2)), ((64, 256), (1, 2048))),
    "16dp256b1x_16b": (((16, 16), 16), ((1, 32), DP_b), ((4, 8), (64, 2)), ((64, 256), (1, 2048))),
    "16dp256b2x": ((512, 16), (1, DP_b), ((4, 8), (64, 2, 2)), ((64, 512), (1, 4096, 256))),
    "16dp256b2x_16b": (((16, 32), 16), ((1, 32), DP_b), ((4, 8), (64, 2, 2)), ((64, 512), (1, 4096, 256))),
    "16dp256b4x": ((1024, 16), (1, DP_b), ((4, 8), (64, 2, 4)), ((64, 1024), (1, 8192, 256))),
    "16dp256b4x_16b": (((16, 64), 16), ((1, 32), DP_b), ((4, 8), (64, 2, 4)), ((64, 1024), (1, 8192, 256))),
    "16dp256b8x": ((2048, 16), (1, DP_b), ((4, 8), (64, 2, 8)), ((64, 2048), (1, 16384, 256))),
    "16dp256b8x_16b": (((16, 128), 16), ((1, 32), DP_b), ((4, 8), (64, 2, 8)), ((64, 2048), (1, 16384, 256))),
    "16dp256b16x": ((4096, 16), (1, DP_b), ((4, 8), (64, 2, 16)), ((64, 4096), (1, 32768, 256))),
    "16dp256b16x_16b": (((16, 256), 16), ((1, 32), DP_b), ((4, 8), (64, 2, 16)), ((64, 4096), (1, 32768, 256))),
    "16dp256b32x": ((8192, 16), (1, DP_b), ((4, 8), (64, 2, 32)), ((64, 8192), (1, 65536, 256))),
    "16dp256b32x_16b": (((16, 512), 16), ((1, 32), DP_b), ((4, 8), (64, 2, 32)), ((64, 8192), (1, 65536, 256))),
    "16dp128b1x": ((128, 16), (1, DP_b), ((4, 8), (32, 2)), ((32, 128), (1, 1024))),
    "16dp128b1x_16b": (((16, 8), 16), ((1, 32), DP_b), ((4, 8), (32, 2)), ((32, 128), (1, 1024))),
    "16dp128b2x": ((256, 16), (1, DP_b), ((4, 8), (32, 2, 2)), ((32, 256), (1, 2048, 128))),
    "16dp128b2x_16b": (((16, 16), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 2)), ((32, 256), (1, 2048, 128))),
    "16dp128b4x": ((512, 16), (1, DP_b), ((4, 8), (32, 2, 4)), ((32, 512), (1, 4096, 128))),
    "16dp128b4x_16b": (((16, 32), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 4)), ((32, 512), (1, 4096, 128))),
    "16dp128b8x": ((1024, 16), (1, DP_b), ((4, 8), (32, 2, 8)), ((32, 1024), (1, 8192, 128))),
    "16dp128b8x_16b": (((16, 64), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 8)), ((32, 1024), (1, 8192, 128))),
    "16dp128b16x": ((2048, 16), (1, DP_b), ((4, 8), (32, 2, 16)), ((32, 2048), (1, 16384, 128))),
    "16dp128b16x_16b": (((16, 128), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 16)), ((32, 2048), (1, 16384, 128))),
    "16dp128b32x": ((4096, 16), (1, DP_b), ((4, 8), (32, 2, 32)), ((32, 4096), (1, 32768, 128))),
    "16dp128b32x_16b": (((16, 256), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 32)), ((32, 4096), (1, 32768, 128))),
    "16dp128b64x": ((8192, 16), (1, DP_b), ((4, 8), (32, 2, 64)), ((32, 8192), (1, 65536, 128))),
    "16dp128b64x_16b": (((16, 512), 16), ((1, 32), DP_b), ((4, 8), (32, 2, 64)), ((32, 8192), (1, 65536, 128))),
    "16dp64b1x": ((64, 16), (1, DP_b), ((2, 2, 8), 32), ((512, 32, 64), 1)),
    "16dp64b1x_16b": (((16, 4), 16), ((1, 32), DP_b), ((2, 2, 8), 32), ((512, 32, 64), 1)),
    "16dp64b2x": ((128, 16), (1, DP_b), ((2, 2, 8), (32, 2)), ((1024, 32, 128), (1, 64))),
    "16dp64b2x_16b": (((16, 8), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 2)), ((1024, 32, 128), (1, 64))),
    "16dp64b4x": ((256, 16), (1, DP_b), ((2, 2, 8), (32, 4)), ((2048, 32, 256), (1, 64))),
    "16dp64b4x_16b": (((16, 16), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 4)), ((2048, 32, 256), (1, 64))),
    "16dp64b8x": ((512, 16), (1, DP_b), ((2, 2, 8), (32, 8)), ((4096, 32, 512), (1, 64))),
    "16dp64b8x_16b": (((16, 32), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 8)), ((4096, 32, 512), (1, 64))),
    "16dp64b16x": ((1024, 16), (1, DP_b), ((2, 2, 8), (32, 16)), ((8192, 32, 1024), (1, 64))),
    "16dp64b16x_16b": (((16, 64), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 16)), ((8192, 32, 1024), (1, 64))),
    "16dp64b32x": ((2048, 16), (1, DP_b), ((2, 2, 8), (32, 32)), ((16384, 32, 2048), (1, 64))),
    "16dp64b32x_16b": (((16, 128), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 32)), ((16384, 32, 2048), (1, 64))),
    "16dp64b64x": ((4096, 16), (1, DP_b), ((2, 2, 8), (32, 64)), ((32768, 32, 4096), (1, 64))),
    "16dp64b64x_16b": (((16, 256), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 64)), ((32768, 32, 4096), (1, 64))),
    "16dp64b128x": ((8192, 16), (1, DP_b), ((2, 2, 8), (32, 128)), ((65536, 32, 8192), (1, 64))),
    "16dp64b128x_16b": (((16, 512), 16), ((1, 32), DP_b), ((2, 2, 8), (32, 128)), ((65536, 32, 8192), (1, 64))),
    "16dp32b1x": ((64, 16), (1, DP_b), ((16, 2), 32), ((64, 32), 1)),
    "16dp32b1x_16b": (((16, 4), 16), ((1, 32), DP_b), ((16, 2), 32), ((64, 32), 1)),
    "16dp32b2x": ((128, 16), (1, DP_b), ((16, 2), 64), ((128, 64), 1)),
    "16dp32b2x_16b": (((16, 8), 16), ((1, 32), DP_b), ((16, 2), 64), ((128, 64), 1)),
    "16dp32b4x": ((256, 16), (1, DP_b), ((16, 2), 128), ((256, 128), 1)),
    "16dp32b4x_16b": (((16, 16), 16), ((1, 32), DP_b), ((16, 2), 128), ((256, 128), 1)),
    "16dp32b8x": ((512, 16), (1, DP_b), ((16, 2), 256), ((512, 256), 1)),
    "16dp32b8x_16b": (((16, 32), 16), ((1, 32), DP_b), ((16, 2), 256), ((512, 256), 1)),
    "16dp32b16x": ((1024, 16), (1, DP_b), ((16, 2), 512), ((1024, 512), 1)),
    "16dp32b16x_16b": (((16, 64), 16), ((1, 32), DP_b), ((16, 2), 512), ((1024, 512), 1)),
    "16dp32b32x": ((2048, 16), (1, DP_b), ((16, 2), 1024), ((2048, 1024), 1)),
    "16dp32b32x_16b": (((16, 128), 16), ((1, 32), DP_b), ((16, 2), 1024), ((2048, 1024), 1)),
    "16dp32b64x": ((4096, 16), (1, DP_b), ((16, 2), 2048), ((4096, 2048), 1)),
    "16dp32b64x_16b": (((16, 256), 16), ((1, 32), DP_b), ((16, 2), 2048), ((4096, 2048), 1)),
    "16dp32b128x": ((8192, 16), (1, DP_b), ((16, 2), 4096), ((8192, 4096), 1)),
    "16dp32b128x_16b": (((16, 512), 16), ((1, 32), DP_b), ((16, 2), 4096), ((8192, 4096), 1)),
    "32dp32b1x": ((32, 32), (1, DP_b), (32, 32), (32, 1)),
    "32dp32b1x_16b": (((16, 2), 32), ((1, 32), DP_b), (32, 32), (32, 1)),
    "32dp32b2x": ((64, 32), (1, DP_b), (32, 64), (64, 1)),
    "32dp32b2x_16b": (((16, 4), 32), ((1, 32), DP_b), (32, 64), (64, 1)),
    "32dp32b4x": ((128, 32), (1, DP_b), (32, 128), (128, 1)),
    "32dp32b4x_16b": (((16, 8), 32), ((1, 32), DP_b), (32, 128), (128, 1)),
    "32dp32b8x": ((256, 32), (1, DP_b), (32, 256), (256, 1)),
    "32dp32b8x_16b": (((16, 16), 32), ((1, 32), DP_b), (32, 256), (256, 1)),
    "32dp32b16x": ((512, 32), (1, DP_b), (32, 512), (512, 1)),
    "32dp32b16x_16b": (((16, 32), 32), ((1, 32), DP_b), (32, 512), (512, 1)),
    "32dp32b32x": ((1024, 32), (1, DP_b), (32, 1024), (1024, 1)),
    "32dp32b32x_16b": (((16, 64), 32), ((1, 32), DP_b), (32, 1024), (1024, 1)),
    "32dp32b64x": ((2048, 32), (1, DP_b), (32, 2048), (2048, 1)),
    "32dp32b64x_16b": (((16, 128), 32), ((1, 32), DP_b), (32, 2048), (2048, 1)),
    "32dp32b128x": ((4096, 32), (1, DP_b), (32, 4096), (4096, 1)),
    "32dp32b128x_16b": (((16, 256), 32), ((1, 32), DP_b), (32, 4096), (4096, 1)),
}

#: immHalfSplitoff in the PTX of SM100_TMEM_LOAD_16dp32b<N>x{,_16b} (copy_sm100.hpp at
#: CUTLASS_COMMIT): "tcgen05.ld.sync.aligned.16x32bx2.x<N>.b32 {...}, [%k], N" and
#: "....x<N>.pack::16b.b32 {...}, [%k], 2N".
CUTLASS_SPLIT: dict[str, int] = {**{f"16dp32b{n}x": n for n in tl.NUMS}, **{f"16dp32b{n}x_16b": 2 * n for n in tl.NUMS}}

#: The legal (shape, .num) pairs: Table 47 without its NA entries.
LEGAL = [(s, n) for s in tl.SHAPES for n in tl.NUMS if not (s == "16x128b" and n == 128) and not (s == "16x256b" and n >= 64)]

CUTLASS_SHAPE = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b", "16dp32b": "16x32bx2"}


def _flat(x: object) -> list[int]:
    return [y for e in x for y in _flat(e)] if isinstance(x, tuple) else [int(x)]  # type: ignore[arg-type]


def cute_eval(shape: object, stride: object, index: np.ndarray) -> np.ndarray:
    """A CuTe layout applied to a 1-D index: the index split colexicographically over the
    flattened shape (first mode fastest), each coordinate times its stride, summed."""
    index = np.asarray(index, dtype=np.int64)
    offset = np.zeros_like(index)
    for s, d in zip(_flat(shape), _flat(stride), strict=True):
        offset += (index % s) * d
        index = index // s
    return offset


def cutlass_cells(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lane, column, bit) of TMEM for thread t, register bit v: arrays of shape (32, 32 * regs).
    DstLayout is rank 2 (thread mode, value mode); each mode takes its own index."""
    vs, vd, ds, dd = CUTLASS_LOAD_TRAITS[name]
    nbits = int(np.prod(_flat(ds[1])))
    t = np.arange(32)[:, None]
    v = np.arange(nbits)[None, :]
    ref = cute_eval(ds[0], dd[0], t) + cute_eval(ds[1], dd[1], v)
    addr = cute_eval(vs, vd, ref)
    return addr // DP_b, (addr % DP_b) >> 5, addr & 31


def _parse(name: str) -> tuple[str, int, bool]:
    m = re.fullmatch(r"(\d+dp\d+b)(\d+)x(_16b)?", name)
    assert m, name
    return CUTLASS_SHAPE[m.group(1)], int(m.group(2)), m.group(3) is not None


# ---------------------------------------------------------------------------------------------
# CUTLASS
# ---------------------------------------------------------------------------------------------


def test_cutlass_covers_every_legal_form() -> None:
    seen = {_parse(k) for k in CUTLASS_LOAD_TRAITS}
    assert seen == {(s, n, p) for s, n in LEGAL for p in (False, True)}
    assert len(CUTLASS_LOAD_TRAITS) == 74


@pytest.mark.parametrize("name", sorted(CUTLASS_LOAD_TRAITS))
def test_cells_match_cutlass(name: str) -> None:
    shape, num, packed = _parse(name)
    lane, column, bit = cutlass_cells(name)
    n = tl.register_count(shape, num)
    assert lane.shape == (32, 32 * n)  # DRegisters = uint32_t[n]
    split = CUTLASS_SPLIT.get(name, 0)
    if not packed:
        ours_lane, ours_column = tl.ld_st_cells(shape, num, split)
        assert (lane == np.repeat(ours_lane, 32, axis=1)).all()
        assert (column == np.repeat(ours_column, 32, axis=1)).all()
        assert (bit == np.arange(32 * n) % 32).all()  # register bit b is bit b of its column
    else:
        ours_lane, low, high = tl.packed_cells(shape, num, split)
        lane3, column3, bit3 = (a.reshape(32, n, 2, 16) for a in (lane, column, bit))
        assert (lane3 == ours_lane[:, :, None, None]).all()
        assert (column3[:, :, 0] == low[:, :, None]).all()  # register bits 0..15
        assert (column3[:, :, 1] == high[:, :, None]).all()  # register bits 16..31
        assert (bit3 == np.arange(16)).all()  # each 16-bit element is bits [15:0] of its column
        # the split stays an address offset under packing: equal to unpacking, then doubling the
        # column within each half
        _, unpacked = tl.ld_st_cells(shape, num, split)
        alt_low, _ = tl.packed_columns(unpacked, split)
        assert (alt_low == low).all()


def test_cutlass_split_is_contiguous_default() -> None:
    for name, split in CUTLASS_SPLIT.items():
        shape, num, packed = _parse(name)
        assert tl.default_split(shape, num, packed) == split


# ---------------------------------------------------------------------------------------------
# The manual
# ---------------------------------------------------------------------------------------------

#: Table 47 (= Table 48), by row .num: (.16x32bx2 / .16x64b / .32x32b, .16x128b, .16x256b); None = NA.
TABLE_47 = {
    1: (1, 2, 4),
    2: (2, 4, 8),
    4: (4, 8, 16),
    8: (8, 16, 32),
    16: (16, 32, 64),
    32: (32, 64, 128),
    64: (64, 128, None),
    128: (128, None, None),
}
TABLE_COLUMN = {"16x32bx2": 0, "16x64b": 0, "32x32b": 0, "16x128b": 1, "16x256b": 2}
#: §9.7.16.2.3.1.1-5: "will access N lanes ... each of the lane (B * .num)-bits"
MANUAL_LANES_BITS = {"32x32b": (32, 32), "16x64b": (16, 64), "16x128b": (16, 128), "16x256b": (16, 256), "16x32bx2": (16, 32)}


def test_register_count_is_table_47() -> None:
    for num, row in TABLE_47.items():
        for shape in tl.SHAPES:
            expected = row[TABLE_COLUMN[shape]]
            if expected is None:
                with pytest.raises(OperandError) as e:
                    tl.register_count(shape, num)
                assert e.value.section == "9.7.16.8.3"
            else:
                assert tl.register_count(shape, num) == expected


def test_manual_examples() -> None:
    # §9.7.16.8.3 / §9.7.16.8.4 examples: the vector lengths they write
    assert tl.register_count("32x32b", 2) == 2  # {r0, r1}
    assert tl.register_count("16x128b", 4) == 8  # {r0, ..., r7}
    assert tl.register_count("16x32bx2", 8) == 8  # ld.red ... {r0, ..., r7}, redVal, [taddr3], 16
    assert tl.register_count("16x64b", 4) == 4  # st ... {r0, r1, r2, r3}
    assert tl.register_count("16x128b", 1) == 2  # st ... .unpack::16b.b32 [taddr1], {r0, r1}


@pytest.mark.parametrize("shape", tl.SHAPES)
def test_manual_lanes_and_bits_per_lane(shape: str) -> None:
    lanes, bits = MANUAL_LANES_BITS[shape]
    assert tl.lanes_accessed(shape) == lanes
    for num in tl.NUMS:
        try:
            n = tl.register_count(shape, num)
        except OperandError:
            continue
        split = tl.default_split(shape, num)
        lane, column = tl.ld_st_cells(shape, num, split)
        # .16x32bx2 is "two accesses ... of the shape .16x32b": count per access (threads 0-15, 16-31)
        halves = [slice(0, 16), slice(16, 32)] if shape == "16x32bx2" else [slice(0, 32)]
        for h in halves:
            per_lane = np.bincount(lane[h].ravel(), minlength=lanes)
            assert len(per_lane) == lanes
            assert (per_lane * 32 == bits * num).all(), (shape, num)
        assert n * 32 * 32 == lanes * bits * num * len(halves)


def test_lane_within_warp_chunk() -> None:
    # §9.7.16.8.1: a warp reaches its own 32 lanes; every offset stays below 32
    for shape in tl.SHAPES:
        lane, _ = tl.ld_st_cells(shape, 1)
        assert 0 <= lane.min() and lane.max() < 32


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@given(st.sampled_from(LEGAL), st.integers(0, 512), st.booleans())
def test_every_cell_once(form: tuple[str, int], extra: int, packed: bool) -> None:
    shape, num = form
    n = tl.register_count(shape, num)
    width = tl.COLUMNS_X1[shape] * num * (2 if packed else 1)  # columns of one access
    split = width + extra if shape == "16x32bx2" else 0  # halves apart: no overlap
    if packed:
        lane, low, high = tl.packed_cells(shape, num, split)
        lanes = np.concatenate([lane.ravel(), lane.ravel()])
        columns = np.concatenate([low.ravel(), high.ravel()])
    else:
        lane, column = tl.ld_st_cells(shape, num, split)
        lanes, columns = lane.ravel(), column.ravel()
    assert lane.shape == (32, n)
    cells = set(zip(lanes.tolist(), columns.tolist(), strict=True))
    assert len(cells) == len(lanes)  # each cell once
    assert lanes.min() == 0 and lanes.max() == tl.lanes_accessed(shape) - 1
    assert len(set(lanes.tolist())) == tl.lanes_accessed(shape)
    if shape == "16x32bx2":
        first = columns[(np.arange(len(columns)) // n) % 32 < 16]
        assert set(columns.tolist()) == set(range(width)) | set(range(split, split + width))
        assert first.max() < width
    else:
        assert set(columns.tolist()) == set(range(width))  # a dense lanes x width block


def test_expected_formulas_spot_check() -> None:
    # a few cells by hand from the CUTLASS layouts (see test_cells_match_cutlass for all)
    lane, column = tl.ld_st_cells("16x64b", 1)
    assert [(int(lane[t, 0]), int(column[t, 0])) for t in range(4)] == [(0, 0), (8, 0), (0, 1), (8, 1)]
    lane, column = tl.ld_st_cells("16x256b", 2)
    assert (int(lane[5, 6]), int(column[5, 6])) == (9, 8 + 2 * 1 + 0)
    lane, column = tl.ld_st_cells("16x32bx2", 2, split=7)
    assert (int(lane[17, 1]), int(column[17, 1])) == (1, 8)
    lane, low, high = tl.packed_cells("16x32bx2", 2, split=4)
    assert (int(low[17, 1]), int(high[17, 1])) == (6, 7)


# ---------------------------------------------------------------------------------------------
# Errors and purity
# ---------------------------------------------------------------------------------------------


def test_errors() -> None:
    with pytest.raises(OperandError):
        tl.ld_st_cells("16x32b", 1)
    with pytest.raises(OperandError):
        tl.lanes_accessed("32x64b")
    for bad in (0, 3, 256, True, 2.0):
        with pytest.raises(OperandError):
            tl.register_count("32x32b", bad)  # type: ignore[arg-type]
    with pytest.raises(OperandError) as e:
        tl.ld_st_cells("16x64b", 1, split=1)
    assert e.value.section == "9.7.16.8.3"
    with pytest.raises(OperandError):
        tl.ld_st_cells("16x32bx2", 1, split=1.5)  # type: ignore[arg-type]
    with pytest.raises(OperandError):
        tl.packed_columns(np.zeros((16, 2), dtype=np.int64), split=2)


def test_results_are_read_only() -> None:
    lane, column = tl.ld_st_cells("16x128b", 2)
    with pytest.raises(ValueError):
        column[0, 0] = 5
    assert tl.ld_st_cells("16x128b", 2)[1][0, 0] == 0


# ---------------------------------------------------------------------------------------------
# Pictures
# ---------------------------------------------------------------------------------------------


def tl_svg_x(column: int) -> float:
    return 34 + column * 46 + 46 / 2  # svg_map's geometry: left margin 34, cells 46 x 26, top 20


def tl_svg_y(lane: int) -> float:
    return 20 + lane * 26 + 11


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("shape", tl.SHAPES)
def test_svg_map(shape: str, packed: bool) -> None:
    svg = tl.svg_map(shape, 2, packed=packed)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(f"{ns}text")]
    n = tl.register_count(shape, 2)
    threads = [t for t in texts if t and t.startswith("T")]
    assert len(threads) == 32 * n * (2 if packed else 1)
    split = tl.default_split(shape, 2, packed)
    lane, column = tl.ld_st_cells(shape, 2, split)
    # each cell's (thread, register) label sits at the column and lane the map gives
    labels = [t for t in root.iter(f"{ns}text") if t.text and t.text[0] in "Tr"]
    pairs = {(a.text, b.text): (float(a.get("x")), float(a.get("y"))) for a, b in zip(labels[0::2], labels[1::2], strict=True)}
    t, r = 5, n - 1
    x, y = pairs[(f"T{t}", f"r{r}.lo" if packed else f"r{r}")]
    col = int(column[t, r]) if not packed else int(tl.packed_columns(column, split)[0][t, r])
    assert x == tl_svg_x(col) and y == tl_svg_y(int(lane[t, r]))
