"""Where the registers of ``tcgen05.ld`` and ``tcgen05.st`` live in Tensor Memory (§9.7.16.2.3,
§9.7.16.8).

A warp executing ``tcgen05.ld`` / ``tcgen05.st`` with a data-movement shape (``.32x32b``,
``.16x64b``, ``.16x128b``, ``.16x256b``, ``.16x32bx2``) and a repeat factor ``.num`` moves
:func:`register_count` 32-bit registers per thread (Table 47, Table 48). Thread ``t`` of the warp
(its lane id, 0..31) and its register ``r`` (the ``r``-th register of the brace-enclosed vector)
name one 32-bit cell of Tensor Memory: lane ``taddr.lane + lane_offset[t, r]``, column
``taddr.column + column_offset[t, r]`` (:func:`ld_st_cells`). ``tcgen05.st`` writes the cell that
``tcgen05.ld`` of the same shape and ``.num`` reads.

The manual gives the maps only as figures (Figures 183-187, images that are not in its text); the
maps here are pinned against NVIDIA CUTLASS's SM100 TMEM copy traits
(``include/cute/atom/copy_traits_sm100.hpp``, ``Copy_Traits<SM100_TMEM_LOAD_{32dp32b,16dp64b,
16dp128b,16dp256b,16dp32b}{N}x{,_16b}>``; the stores reuse the loads' layouts), and
``tests/test_tcgen05_layout.py`` evaluates those CuTe layouts for every shape and ``.num``.
With ``g = t // 4`` and ``q = t % 4``:

=============  ============================================  ==========================================
shape          TMEM lane offset of (t, r)                    TMEM column offset of (t, r)
=============  ============================================  ==========================================
``.32x32b``    ``t``                                         ``r``
``.16x64b``    ``g + 8 * (t % 2)``                           ``2 * r + (t // 2) % 2``
``.16x128b``   ``g + 8 * (r % 2)``                           ``4 * (r // 2) + q``
``.16x256b``   ``g + 8 * ((r % 4) // 2)``                    ``8 * (r // 4) + 2 * q + r % 2``
``.16x32bx2``  ``t % 16``                                    ``r + immHalfSplitoff * (t // 16)``
=============  ============================================  ==========================================

``.16x64b`` is *not* "two threads per lane": thread ``4g + q`` takes lane ``g`` (q even) or
``g + 8`` (q odd), column ``q // 2`` -- the register pattern of the ``.16x128b`` and ``.16x256b``
shapes (lanes ``g`` and ``g + 8``, as the m16n8 accumulator fragment of ``mma``), with one cell a
thread. CUTLASS (``SM100_TMEM_LOAD_16dp64b1x``: ``((2,2,8),32):((512,32,64),1)``) and Triton's
``getTileLayout`` (``I16x64b``: lane bases ``{8,0},{0,1},{1,0},{2,0},{4,0}``) agree on it.

Packing (§9.7.16.8.2). With ``.pack::16b`` (ld) or ``.unpack::16b`` (st) a register holds two 16-bit
elements "from adjacent columns": its low 16 bits are bits [15:0] of column ``2c`` and its high 16
bits are bits [15:0] of column ``2c + 1``, where ``c`` is the register's column in the unpacked map
(:func:`packed_columns`). CUTLASS's ``_16b`` variants say the same (their ``ValID`` places 16-bit
element ``k`` of a lane at bits ``32k .. 32k + 15``, the low half of column ``k``). The split of
``.16x32bx2`` is a TMEM address offset and is *not* doubled: CUTLASS issues
``16x32bx2.xN.b32 ..., N`` and ``16x32bx2.xN.pack::16b.b32 ..., 2N``, the second half beginning
right after the first in both.

``.16x32bx2`` with ``immHalfSplitoff`` smaller than the width of one half makes the two halves
overlap; the manual does not forbid it, and the maps here then name a cell twice.
"""

from __future__ import annotations

import functools
from html import escape

import numpy as np

from ptxspec.spec.errors import OperandError

SHAPES: tuple[str, ...] = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
"""The data-movement shapes of ``tcgen05.ld`` / ``tcgen05.st`` (§9.7.16.2.3), without the dot."""

NUMS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
"""The repeat factors ``.x1`` .. ``.x128`` (§9.7.16.8.3), as integers."""

#: Registers per thread of ``.x1`` (Table 47): the other ``.num`` multiply it.
_REGISTERS_X1 = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}

#: Columns (32 bits each) of one repeat (§9.7.16.2.3: "size ... in units of bits ... across the
#: columns"): 32, 64, 128, 256 bits; ``.16x32bx2`` is two 32-bit accesses, one column each.
COLUMNS_X1: dict[str, int] = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8, "16x32bx2": 1}

LD_ST_SECTION = "9.7.16.8.3"
LAYOUT_SECTION = "9.7.16.2.3.1"
PACK_SECTION = "9.7.16.8.2"


def _check_shape(shape: str) -> None:
    if shape not in SHAPES:
        raise OperandError(f"unknown tcgen05.ld/st shape {shape!r}; expected one of {', '.join(SHAPES)}", section="9.7.16.2.3")


def register_count(shape: str, num: int) -> int:
    """The number of 32-bit registers each thread gives ``tcgen05.ld`` / ``tcgen05.st`` of ``shape``
    and ``.num`` (§9.7.16.8.3 Table 47, §9.7.16.8.4 Table 48): ``num`` for ``.16x32bx2``,
    ``.16x64b`` and ``.32x32b``, ``2 * num`` for ``.16x128b``, ``4 * num`` for ``.16x256b``.
    The combinations the table marks NA (``.16x128b.x128``, ``.16x256b.x64``, ``.16x256b.x128``)
    raise :class:`~ptxspec.spec.errors.OperandError`."""
    _check_shape(shape)
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num not in NUMS:
        raise OperandError(f"tcgen05.ld/st .num must be one of {', '.join(f'.x{n}' for n in NUMS)}, not {num!r}", section=LD_ST_SECTION)
    count = _REGISTERS_X1[shape] * num
    if count > 128:
        raise OperandError(f"tcgen05.ld/st .{shape}.x{num} is NA in Table 47 ({count} registers)", section=LD_ST_SECTION)
    return count


def lanes_accessed(shape: str) -> int:
    """How many Tensor Memory lanes a warp touches with ``shape`` (§9.7.16.2.3.1.1-5): "will access
    32 lanes" for ``.32x32b``, "16 lanes" for the other shapes."""
    _check_shape(shape)
    return 32 if shape == "32x32b" else 16


@functools.cache
def _cells(shape: str, num: int, split: int) -> tuple[np.ndarray, np.ndarray]:
    n = register_count(shape, num)
    t = np.arange(32, dtype=np.int64)[:, None]
    r = np.arange(n, dtype=np.int64)[None, :]
    g, q = t // 4, t % 4
    if shape == "32x32b":
        lane, column = t + 0 * r, r + 0 * t
    elif shape == "16x64b":
        lane, column = g + 8 * (t % 2) + 0 * r, 2 * r + (t // 2) % 2
    elif shape == "16x128b":
        lane, column = g + 8 * (r % 2), 4 * (r // 2) + q
    elif shape == "16x256b":
        lane, column = g + 8 * ((r % 4) // 2), 8 * (r // 4) + 2 * q + r % 2
    else:  # 16x32bx2
        lane, column = t % 16 + 0 * r, r + split * (t // 16)
    lane.setflags(write=False)
    column.setflags(write=False)
    return lane, column


def ld_st_cells(shape: str, num: int, split: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The Tensor Memory cells of ``tcgen05{.ld,.st}.shape.num`` (§9.7.16.2.3.1, Figures 183-187):
    ``(lane_offset, column_offset)``, two read-only int64 arrays of shape
    ``(32, register_count(shape, num))``. Register ``r`` of thread ``t`` (its lane in the warp) is
    the 32-bit cell at lane ``taddr.lane + lane_offset[t, r]``, column
    ``taddr.column + column_offset[t, r]``. The formulas are in the module documentation; they are
    CUTLASS's SM100 TMEM copy traits.

    ``split`` is ``immHalfSplitoff`` of ``.16x32bx2`` (§9.7.16.8.3: "the base address of the
    second access is specified by taddr+immHalfSplitoff"): threads 16..31 make the second access,
    their columns offset by ``split``. It must be 0 for the other shapes, which take no such
    operand. This is the unpacked view (no ``.pack::16b`` / ``.unpack::16b``): see
    :func:`packed_columns`."""
    register_count(shape, num)
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)):
        raise OperandError(f"immHalfSplitoff must be an integer, not {split!r}", section=LD_ST_SECTION)
    if split and shape != "16x32bx2":
        raise OperandError(f"immHalfSplitoff is an operand of .16x32bx2 only, not of .{shape}", section=LD_ST_SECTION)
    return _cells(shape, num, int(split))


def packed_columns(column_offset: np.ndarray, split: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The columns of the two 16-bit halves of each register under ``.pack::16b`` (``tcgen05.ld``)
    or ``.unpack::16b`` (``tcgen05.st``) (§9.7.16.8.2: "two 16-bit chunks can be packed into a
    single 32-bit chunk", "from adjacent columns", §9.7.16.8.3/4): ``(low_half_column_offset,
    high_half_column_offset)``. A register whose unpacked column (from :func:`ld_st_cells`) is
    ``c`` holds in its low 16 bits bits [15:0] of column ``2c`` and in its high 16 bits bits
    [15:0] of column ``2c + 1``; the lane is the unpacked one. (CUTLASS's
    ``SM100_TMEM_LOAD_*_16b`` traits: the same lanes and threads, 16-bit element ``k`` of a lane
    at the low half of column ``k``.)

    For ``.16x32bx2`` give the same ``split`` (``immHalfSplitoff``) that ``column_offset`` was made
    with: the split is an address offset and is kept as it is, not doubled (the second half's
    columns are ``2c' + split`` and ``2c' + split + 1``, ``c' = c - split``). With ``split != 0``
    ``column_offset`` must be a (32, n) map of the warp's threads."""
    column = np.asarray(column_offset, dtype=np.int64)
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)):
        raise OperandError(f"immHalfSplitoff must be an integer, not {split!r}", section=LD_ST_SECTION)
    shift = np.zeros_like(column)
    if split:
        if column.ndim != 2 or column.shape[0] != 32:
            raise OperandError(f"a split map must be (32, registers), not {column.shape}", section=PACK_SECTION)
        shift[16:] = split
    low = 2 * (column - shift) + shift
    high = low + 1
    low.setflags(write=False)
    high.setflags(write=False)
    return low, high


def packed_cells(shape: str, num: int, split: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lane_offset, low_half_column_offset, high_half_column_offset)`` of
    ``tcgen05{.ld.pack::16b,.st.unpack::16b}.shape.num``: :func:`ld_st_cells` followed by
    :func:`packed_columns` (§9.7.16.2.3.1, §9.7.16.8.2)."""
    lane, column = ld_st_cells(shape, num, split)
    low, high = packed_columns(column, split)
    return lane, low, high


def default_split(shape: str, num: int, packed: bool = False) -> int:
    """The ``immHalfSplitoff`` that puts the second half of ``.16x32bx2`` right after the first:
    ``num`` columns, ``2 * num`` packed (what CUTLASS's ``SM100_TMEM_LOAD_16dp32b{N}x{,_16b}``
    issue); 0 for the other shapes (§9.7.16.8.3)."""
    register_count(shape, num)
    if shape != "16x32bx2":
        return 0
    return 2 * num if packed else num


def svg_map(shape: str, num: int = 1, packed: bool = False, split: int | None = None) -> str:
    """An SVG picture of ``tcgen05{.ld,.st}.shape.num`` (§9.7.16.2.3.1): the Tensor Memory cells the
    warp touches, lanes down and columns across (offsets from ``taddr``), each labelled with the
    thread ``T`` and register ``r`` that holds it (``r.lo`` / ``r.hi`` for the halves of a packed
    register). Computed from :func:`ld_st_cells` / :func:`packed_cells`; ``split`` defaults to
    :func:`default_split`."""
    if split is None:
        split = default_split(shape, num, packed)
    if packed:
        lane, low, high = packed_cells(shape, num, split)
        entries = [(lane, low, ".lo"), (lane, high, ".hi")]
    else:
        lane, column = ld_st_cells(shape, num, split)
        entries = [(lane, column, "")]
    labels: dict[tuple[int, int], tuple[int, str]] = {}
    for lanes, columns, suffix in entries:
        for t in range(32):
            for r in range(lanes.shape[1]):
                labels[(int(lanes[t, r]), int(columns[t, r]))] = (t, f"r{r}{suffix}")
    rows = max(k[0] for k in labels) + 1
    cols = max(k[1] for k in labels) + 1
    cw, ch, left, top = 46, 26, 34, 20
    width, height = left + cols * cw + 2, top + rows * ch + 2
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="monospace" font-size="9" role="img">',
        f"<title>{escape(f'tcgen05.ld/st .{shape}.x{num}' + ('.pack::16b' if packed else ''))}: TMEM lane (down) x column (across)</title>",
    ]
    for c in range(cols):
        out.append(f'<text x="{left + c * cw + cw / 2}" y="{top - 6}" text-anchor="middle">c{c}</text>')
    for row in range(rows):
        out.append(f'<text x="{left - 4}" y="{top + row * ch + ch / 2 + 3}" text-anchor="end">l{row}</text>')
        for c in range(cols):
            x, y = left + c * cw, top + row * ch
            if (row, c) not in labels:
                out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="#fff" stroke="#ccc"/>')
                continue
            t, reg = labels[(row, c)]
            hue = (t * 360 // 32 * 7) % 360
            out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="hsl({hue},70%,85%)" stroke="#555"/>')
            out.append(f'<text x="{x + cw / 2}" y="{y + 11}" text-anchor="middle">T{t}</text>')
            out.append(f'<text x="{x + cw / 2}" y="{y + 22}" text-anchor="middle">{reg}</text>')
    out.append("</svg>")
    return "\n".join(out)
