"""Where ``tcgen05.mma`` keeps D (and A, when A is in Tensor Memory): the data path layouts of
§9.7.16.10.5 ("Data Path Layout Organization").

§9.7.16.10.5 names seven layouts, A to G, by a table of the instruction's M, ``.cta_group``,
sparsity of A and ``.ws`` (:func:`layout_id`). The layouts themselves are figures (205-218), images
that are not in the manual's text; the maps here are pinned against NVIDIA CUTLASS at commit
``7107b05535f8977f5ecb9d01ee203205b1fd9bc4`` (``include/cute/atom/mma_traits_sm100_frag.hpp``,
``include/cute/atom/mma_traits_sm100.hpp``), and ``tests/test_tcgen05_datapath.py`` evaluates the
CuTe layouts for every M and several N:

* each CTA of the instruction holds ``R = M / ctas`` rows of D (``.cta_group::2``: rows
  ``0 .. M/2 - 1`` in the issuing CTA, the rest in its peer; CUTLASS's 2x1SM ``CLayout``
  ``(2,(M/2,N)):(M/2,(1,M))`` with ``ThrID = Layout<_2>``. CUTLASS issues from the even CTA of
  the pair, so there "issuing" and "even" coincide; which CTA holds rows ``0 .. M/2 - 1`` when the
  odd CTA issues is not determined by it);
* a *full* layout ("4x1" for R = 128, "2x2" for R = 64, "1x4" for R = 32) splits N into
  ``G = 128 / R`` equal column groups and stacks them down the 128 lanes: D row ``r`` of the CTA,
  column ``j``, is lane ``r + R * (j // (N/G))``, column ``j % (N/G)`` (``UMMA::tmem_frg``,
  ``tmem_frg_ws``: ``(128,N):(1,128)``, ``(64,(N/2,2)):(1,(128,64))``,
  ``(32,(N/4,4)):(1,(128,32))`` in "virtual" addressing lane + 128 * column);
* a *half* layout ("4x1, 1/2 datapath utilized", R = 64) puts rows ``16q .. 16q + 15`` in lanes
  ``32q + a .. 32q + a + 15`` of each 32-lane sub-partition ``q``, where ``a`` is the lane
  alignment, 0 or 16 (``tmem_frg_1sm`` with M_MMA = 64: ``((16,4),N):((1,32),128)``; its
  interleaved tiling puts a second such tile, an MMA issued at a D address 16 lanes on, in the
  lanes between).

Offsets are from the instruction's ``[d-tmem]`` (``[a-tmem]``) address. Every layout but C and F
fills lanes 0-127 from it, so its lane must be 0; for F it is the lane alignment, 0 or 16: the
rows are at lanes ``a + {0..15, 32..47, 64..79, 96..111}``, and the offsets themselves do not
depend on ``a`` (CUTLASS: the second interleaved tile is the same atom at an address 16 lanes on).

=======  ===  =========  ======  ======  ===============  =============================================
Layout   M    cta_group  sparse  .ws     organization     here
=======  ===  =========  ======  ======  ===============  =============================================
A        256  ::2        either  N/A     4x1              R = 128, full (``tmem_frg_2sm``)
B        128  ::2        dense   N/A     2x2              R = 64, full (``tmem_frg_2sm``)
C        128  ::2        sparse  N/A     4x1, 1/2         refused (see below)
D        128  ::1        either  either  4x1              R = 128, full (``tmem_frg_1sm``, ``_ws``)
E        64   ::1        either  yes     "2x3"            refused (see below)
F        64   ::1        either  no      4x1, 1/2         half, alignment 0 or 16 (``tmem_frg_1sm``)
G        32   ::1        either  yes     1x4              R = 32, full (``tmem_frg_ws``)
=======  ===  =========  ======  ======  ===============  =============================================

Two rows of the table are not pinned and are refused (:data:`UNDETERMINED`) rather than guessed:

* Layout C. The manual says a sparse ``.cta_group::2`` M = 128 MMA uses half the datapath
  (4x1, lane alignment 0 or 16). CUTLASS's ``SM100_MMA_{TF32,F16BF16,S8,F8F6F4}_2x1SM_SS_SPARSE``
  traits (which accept M = 128) give D the same ``UMMA::tmem_frg_2sm<c_type>`` as the dense ones:
  M_MMA = 64 a CTA, the "2x2" atom of Layout B. The two sources disagree.
* Layout E. The manual's organization "2x3" is not an arrangement of the four 32-lane
  sub-partitions. CUTLASS's ``UMMA::tmem_frg_ws`` (M_MMA = 64) says "2x2 datapath", atom
  ``(64,(N/2,2)):(1,(128,64))``, but no MMA trait uses ``tmem_frg_ws`` at that commit (CUTLASS has
  no ``.ws`` MMA traits), so nothing tests it against the manual. The candidate is kept
  (:data:`_ORGANIZATION`) so that lifting the refusal is one line.

Matrix D is 32 bits a cell whatever its type ("The sub-word elements of matrix D are expected not
to be packed", §9.7.16.10.4.1): :func:`d_cells` gives cells, not bits. Matrix A in Tensor Memory
(``[a-tmem]``, :func:`a_cells`) has the same lanes as D's rows (CUTLASS's ``_TS`` traits,
``TmemAllocMode::NonInterleaved`` "for DP-address equivalence in TMEM-A and TMEM-C") and is packed
along K, ``32 / element_bits`` elements a 32-bit column, element ``k`` at bits
``(k * element_bits) % 32`` of column ``k * element_bits // 32`` (``tmem_frg<a_type, a_type>``
addresses A in elements; ``tmem_ptr<T>`` makes ``32 / sizeof_bits(T)`` elements one column). The
4-bit and 6-bit types of ``.kind::mxf8f6f4`` sit in 8-bit containers (§9.7.16.10.4.3:
``element_bits = 8``); the 4-bit elements of ``.kind::mxf4`` / ``.kind::mxf4nvf4`` are packed two
a byte (§9.7.16.10.4.5: ``element_bits = 4``; CUTLASS has no A-from-TMEM trait for these kinds, and
the order of the two nibbles, Figure 204, is taken to be that of every other packing here: the
lower-numbered element in the lower bits).

§9.7.16.8.1: warp ``w`` of a warpgroup (``warp id % 4``) is the one warp that can ``tcgen05.ld`` /
``tcgen05.st`` lanes ``32w .. 32w + 31`` (:func:`warp_of_lane`).
"""

from __future__ import annotations

import functools
from html import escape

import numpy as np

from ptxspec.spec.errors import OperandError

SECTION = "9.7.16.10.5"
PACKING_SECTION = "9.7.16.10.4"
ACCESS_SECTION = "9.7.16.8.1"
LANES = 128
COLUMNS = 512
LANES_PER_WARP = 32
CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"

LAYOUTS = "ABCDEFG"
"""The layout IDs of §9.7.16.10.5."""

#: The §9.7.16.10.5 table: layout -> (M, cta_group, sparsity ("dense", "sparse" or "either"),
#: .ws ("yes", "no", "either", or "N/A" -- not available with .cta_group::2), the manual's
#: "Datapath organization", its "Tensor Memory Datapath Lane Alignment").
TABLE: dict[str, tuple[int, int, str, str, str, tuple[int, ...]]] = {
    "G": (32, 1, "either", "yes", "1x4", (0,)),
    "E": (64, 1, "either", "yes", "2x3", (0,)),
    "F": (64, 1, "either", "no", "4x1 (1/2 datapath utilized)", (0, 16)),
    "D": (128, 1, "either", "either", "4x1", (0,)),
    "B": (128, 2, "dense", "N/A", "2x2", (0,)),
    "C": (128, 2, "sparse", "N/A", "4x1 (1/2 datapath utilized)", (0, 16)),
    "A": (256, 2, "either", "N/A", "4x1", (0,)),
}

#: The layouts that are not pinned, and why (see the module documentation).
UNDETERMINED: dict[str, str] = {
    "C": (
        "Layout C (M = 128, .cta_group::2, sparse A) is not determined: the manual's table says "
        "'4x1 (1/2 datapath utilized)' with lane alignment 0 or 16, but CUTLASS "
        f"{CUTLASS_COMMIT[:12]} (SM100_MMA_*_2x1SM_SS_SPARSE, FrgTypeC = UMMA::tmem_frg_2sm<c_type>) "
        "places its D like the dense Layout B ('2x2', 64 rows a CTA over all 128 lanes); the figures "
        "(209, 210) that would decide it are not in the manual's text"
    ),
    "E": (
        "Layout E (M = 64, .ws) is not determined: the manual's table calls it '2x3', which is no "
        "arrangement of the four 32-lane sub-partitions; CUTLASS "
        f"{CUTLASS_COMMIT[:12]} has a '2x2 datapath' candidate (UMMA::tmem_frg_ws, M_MMA = 64) but no "
        "MMA trait uses it, and the figures (213, 214) are not in the manual's text"
    ),
}

#: How each pinned-or-candidate layout arranges D: ("full", R) -- R rows a CTA, 128 / R column
#: groups stacked down the lanes -- or ("half", 64) -- 16 rows in each 32-lane sub-partition.
_ORGANIZATION: dict[str, tuple[str, int]] = {
    "A": ("full", 128),
    "B": ("full", 64),
    "D": ("full", 128),
    "E": ("full", 64),  # CUTLASS's tmem_frg_ws candidate; refused while in UNDETERMINED
    "F": ("half", 64),
    "G": ("full", 32),
}

#: How many copies of A Tensor Memory holds (CUTLASS TmemAllocMode::Duplicated for
#: UMMA_2SM_128xNx16_TS: "each subpartition holds all columns of the A matrix needed").
_A_COPIES = {"A": 1, "B": 2, "D": 1, "F": 1}

ELEMENT_BITS = (4, 8, 16, 32)
"""The A element widths in Tensor Memory: 32 (``.tf32``), 16 (``.f16``/``.bf16``), 8 (8-bit types and
the 8-bit containers of the 4/6-bit types of ``.kind::f8f6f4``/``.kind::mxf8f6f4``), 4 (the packed
``.e2m1`` of ``.kind::mxf4``/``.kind::mxf4nvf4``)."""


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise OperandError(f"tcgen05.mma datapath: {name} must be an integer, not {value!r}", section=SECTION)
    return int(value)


def layout_id(m: int, cta_group: int, sparse: bool, ws: bool) -> str:
    """The §9.7.16.10.5 layout ID (``"A"`` .. ``"G"``) of a ``tcgen05.mma`` with M = ``m``,
    ``.cta_group::cta_group``, sparse A (``.sp``) or not, ``.ws`` or not. A combination that is
    not a row of the table (M = 256 with ``.cta_group::1``, ``.ws`` with ``.cta_group::2``, M = 32
    or 64 without ``.ws`` ... ) raises :class:`~ptxspec.spec.errors.OperandError`."""
    m, cta_group = _int(m, "M"), _int(cta_group, "cta_group")
    sparsity = "sparse" if sparse else "dense"
    for layout, (tm, tg, tsp, tws, _, _) in TABLE.items():
        if tm != m or tg != cta_group or tsp not in ("either", sparsity):
            continue
        if tws == "either" or tws == ("yes" if ws else "no"):
            return layout
        if tws == "N/A" and not ws:
            return layout
    raise OperandError(
        f"no data path layout for M = {m}, .cta_group::{cta_group}, {sparsity} A{', .ws' if ws else ''}: not a row of the table of §9.7.16.10.5",
        section=SECTION,
    )


def organization(layout: str) -> str:
    """The manual's "Datapath organization" of ``layout`` (§9.7.16.10.5)."""
    return TABLE[layout][4]


def lane_alignments(layout: str) -> tuple[int, ...]:
    """The "Tensor Memory Datapath Lane Alignment" values of ``layout`` (§9.7.16.10.5): ``(0, 16)``
    for the half-datapath Layouts C and F, ``(0,)`` for the others."""
    return TABLE[layout][5]


def warp_of_lane(lane: np.ndarray | int) -> np.ndarray | int:
    """The warp of a warpgroup (``warp id % 4``) that can ``tcgen05.ld`` / ``tcgen05.st`` Tensor
    Memory ``lane`` (§9.7.16.8.1: warp 0 lanes 0-31, 1 lanes 32-63, 2 lanes 64-95, 3 lanes
    96-127)."""
    return lane // LANES_PER_WARP


def _pinned(m: int, cta_group: int, sparse: bool, ws: bool, lane_alignment: object) -> tuple[str, int]:
    layout = layout_id(m, cta_group, sparse, ws)
    if layout in UNDETERMINED:
        raise OperandError(UNDETERMINED[layout], section=SECTION)
    alignment = _int(lane_alignment, "lane_alignment")
    if alignment not in lane_alignments(layout):
        allowed = " or ".join(str(a) for a in lane_alignments(layout))
        raise OperandError(f"Layout {layout} takes Tensor Memory datapath lane alignment {allowed}, not {alignment}", section=SECTION)
    return layout, alignment


def _rows(layout: str, m: int, cta_group: int, row: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cta, lane offset) of D row ``row`` in column group ``group`` of ``layout``."""
    kind, per_cta = _ORGANIZATION[layout]
    cta, r = row // per_cta, row % per_cta
    if kind == "half":
        lane = LANES_PER_WARP * (r // 16) + r % 16
    else:
        lane = r + per_cta * group
    return cta, lane


def _groups(layout: str) -> int:
    kind, per_cta = _ORGANIZATION[layout]
    return 1 if kind == "half" else LANES // per_cta


@functools.cache
def _d_cells(layout: str, m: int, n: int, cta_group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    groups = _groups(layout)
    width = n // groups
    i = np.arange(m, dtype=np.int64)[:, None]
    j = np.arange(n, dtype=np.int64)[None, :]
    cta, lane = _rows(layout, m, cta_group, i, j // width)
    column = j % width + 0 * i
    cta, lane = cta + 0 * j, lane + 0 * j
    for a in (cta, lane, column):
        a.setflags(write=False)
    return cta, lane, column


def d_cells(m: int, n: int, cta_group: int, sparse: bool, ws: bool, lane_alignment: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where element ``D[i, j]`` of a ``tcgen05.mma`` with shape M x N = ``m`` x ``n`` lives
    (§9.7.16.10.5): ``(cta, lane_offset, column_offset)``, read-only int64 arrays of shape
    ``(m, n)``. The element is the 32-bit cell (sub-word D types unpacked, §9.7.16.10.4.1) of the
    Tensor Memory of CTA ``cta`` (0: the issuing CTA; 1: its peer, ``.cta_group::2``) at lane
    ``d-tmem lane + lane_offset`` and column ``d-tmem column + column_offset``.

    ``lane_alignment`` is the "Tensor Memory Datapath Lane Alignment": 0 or 16 for the
    half-datapath layout F (rows in the low or high 16 lanes of each sub-partition), 0 for the
    others. It is the lane of ``[d-tmem]``, so it is checked but does not change the offsets, which
    are from ``[d-tmem]``: Layout F's rows are at lanes ``lane_alignment + lane_offset``. The
    layouts are in the module documentation; Layouts C and E are refused (:data:`UNDETERMINED`)."""
    m, n = _int(m, "M"), _int(n, "N")
    layout, _ = _pinned(m, cta_group, sparse, ws, lane_alignment)
    groups = _groups(layout)
    if n < 1 or n % groups:
        raise OperandError(f"Layout {layout} ({organization(layout)}) splits N into {groups} column groups; N = {n} does not", section=SECTION)
    if n // groups > COLUMNS:
        raise OperandError(f"N = {n} needs {n // groups} Tensor Memory columns, more than the {COLUMNS} there are", section=SECTION)
    return _d_cells(layout, m, n, int(cta_group))


def a_copies(m: int, cta_group: int, sparse: bool, ws: bool) -> int:
    """How many copies of A a ``tcgen05.mma`` with A in Tensor Memory reads: 2 for Layout B (each
    half of the lanes feeds one half of D's columns, so A is duplicated; CUTLASS
    ``TmemAllocMode::Duplicated``), 1 for Layouts A, D and F. Layouts whose A placement CUTLASS
    does not give (C, E, G) raise :class:`~ptxspec.spec.errors.OperandError`."""
    layout = layout_id(m, cta_group, sparse, ws)
    if layout in UNDETERMINED:
        raise OperandError(UNDETERMINED[layout], section=SECTION)
    if layout not in _A_COPIES:
        raise OperandError(
            f"Layout {layout} ({organization(layout)}): where A lives in Tensor Memory is not determined; CUTLASS "
            f"{CUTLASS_COMMIT[:12]} has no A-from-Tensor-Memory (_TS) MMA for it and the manual's figures are not in its text",
            section=SECTION,
        )
    return _A_COPIES[layout]


@functools.cache
def _a_cells(layout: str, m: int, k: int, bits: int, cta_group: int, copy: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    i = np.arange(m, dtype=np.int64)[:, None]
    kk = np.arange(k, dtype=np.int64)[None, :]
    cta, lane = _rows(layout, m, cta_group, i, np.full((1, 1), copy, dtype=np.int64))
    position = kk * bits
    column = position // 32 + 0 * i
    bit = position % 32 + 0 * i
    cta, lane = cta + 0 * kk, lane + 0 * kk
    for a in (cta, lane, column, bit):
        a.setflags(write=False)
    return cta, lane, column, bit


def a_cells(
    m: int, k: int, element_bits: int, cta_group: int, sparse: bool, ws: bool, lane_alignment: int = 0, copy: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where element ``A[i, kk]`` (``element_bits`` bits) of a ``tcgen05.mma`` with A in Tensor Memory
    (``[a-tmem]``) lives: ``(cta, lane_offset, column_offset, bit_offset)``, read-only int64 arrays
    of shape ``(m, k)`` -- bits ``bit_offset .. bit_offset + element_bits - 1`` of the cell at lane
    ``a-tmem lane + lane_offset``, column ``a-tmem column + column_offset`` of CTA ``cta``.

    Row ``i`` has the lane offset of D's row ``i`` (and Layouts C and F "must use the same Tensor
    Memory lane alignment across matrices A, D", §9.7.16.10.5); along K the elements are packed contiguously, ``32 /
    element_bits`` a 32-bit column, lowest bits first (module documentation). For sparse A, ``k``
    counts the stored (compressed) elements. ``copy`` selects the copy of Layout B's duplicated A
    (:func:`a_copies`): copy ``c`` is in the lanes of D's column group ``c``, the one that computes
    ``D[:, c * N/2 .. (c+1) * N/2 - 1]``."""
    m, k, bits, copy = _int(m, "M"), _int(k, "K"), _int(element_bits, "element_bits"), _int(copy, "copy")
    copies = a_copies(m, cta_group, sparse, ws)
    layout, _ = _pinned(m, cta_group, sparse, ws, lane_alignment)
    if bits not in ELEMENT_BITS:
        raise OperandError(f"A elements in Tensor Memory are {', '.join(map(str, ELEMENT_BITS))} bits wide, not {bits}", section=PACKING_SECTION)
    if not 0 <= copy < copies:
        raise OperandError(f"Layout {layout} holds {copies} cop{'ies' if copies > 1 else 'y'} of A; copy {copy} is not one", section=SECTION)
    if k < 1 or (k * bits) % 32:
        raise OperandError(f"K = {k} elements of {bits} bits do not fill whole 32-bit Tensor Memory columns", section=PACKING_SECTION)
    if k * bits // 32 > COLUMNS:
        raise OperandError(f"K = {k} elements of {bits} bits need more than the {COLUMNS} Tensor Memory columns", section=SECTION)
    return _a_cells(layout, m, k, bits, int(cta_group), copy)


# ---------------------------------------------------------------------------------------------
# Pictures
# ---------------------------------------------------------------------------------------------


def _bands(cta: np.ndarray, lane: np.ndarray, column: np.ndarray, ctas: int) -> dict[tuple[int, int], tuple[int, int, int, int, int, int]]:
    """For each (cta, 16-lane band) that holds D: (first row, last row, first D column, last D
    column, first TMEM column, last TMEM column)."""
    rows, cols = (np.asarray(axis) for axis in np.indices(lane.shape))
    out = {}
    for c in range(ctas):
        for band in range(LANES // 16):
            sel = (cta == c) & (lane // 16 == band)
            if sel.any():
                r, j, t = rows[sel], cols[sel], column[sel]
                out[(c, band)] = (int(r.min()), int(r.max()), int(j.min()), int(j.max()), int(t.min()), int(t.max()))
    return out


def svg_datapath(m: int, n: int, cta_group: int, sparse: bool, ws: bool, lane_alignment: int = 0) -> str:
    """An SVG picture of where D of a ``tcgen05.mma`` lands (§9.7.16.10.5): for each CTA, the 128
    Tensor Memory lanes (down, in 16-lane bands, with the warp of §9.7.16.8.1 that can
    ``tcgen05.ld`` them) by the columns from ``d-tmem`` (across), each band labelled with the rows
    and columns of D it holds. Drawn from :func:`d_cells`, with ``[d-tmem]`` at lane
    ``lane_alignment``."""
    cta, lane, column = d_cells(m, n, cta_group, sparse, ws, lane_alignment)
    lane = lane + int(lane_alignment)
    layout = layout_id(m, cta_group, sparse, ws)
    ctas = int(cta_group)
    bands = _bands(cta, lane, column, ctas)
    used = int(column.max()) + 1
    bh, left, top, gap, width = 22, 118, 34, 28, 420
    panel = LANES // 16 * bh
    height = top + ctas * (panel + gap) + 4
    total = left + width + 12
    title = f"tcgen05.mma M={m} N={n} .cta_group::{ctas}{' .sp' if sparse else ''}{' .ws' if ws else ''}: Layout {layout} ({organization(layout)})"
    if lane_alignment:
        title += f", lane alignment {lane_alignment}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{height}" viewBox="0 0 {total} {height}" font-family="monospace" font-size="10" role="img">',
        f"<title>{escape(title)}</title>",
        f'<text x="4" y="12">{escape(title)}</text>',
    ]
    for c in range(ctas):
        y0 = top + c * (panel + gap)
        name = "issuing CTA" if c == 0 else "peer CTA"
        out.append(f'<text x="{left}" y="{y0 - 6}">{name}: columns d-tmem+0 .. d-tmem+{used - 1}</text>')
        for w in range(LANES // LANES_PER_WARP):
            y = y0 + w * 2 * bh
            out.append(f'<rect x="2" y="{y}" width="{left - 6}" height="{2 * bh}" fill="#f4f4f4" stroke="#999"/>')
            out.append(f'<text x="6" y="{y + bh + 3}">warp {w}: l{32 * w}-{32 * w + 31}</text>')
        for band in range(LANES // 16):
            y = y0 + band * bh
            cell = bands.get((c, band))
            if cell is None:
                out.append(f'<rect x="{left}" y="{y}" width="{width}" height="{bh}" fill="#fff" stroke="#ccc"/>')
                out.append(f'<text x="{left + width / 2}" y="{y + bh / 2 + 3}" text-anchor="middle" fill="#aaa">unused</text>')
                continue
            r0, r1, j0, j1, t0, t1 = cell
            x = left + width * t0 / used
            w_px = width * (t1 - t0 + 1) / used
            hue = (r0 * 3 + j0 * 97 // max(n, 1)) % 360
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w_px:.1f}" height="{bh}" fill="hsl({hue},65%,82%)" stroke="#555"/>')
            label = f"D[{r0}:{r1 + 1}, {j0}:{j1 + 1}]"
            out.append(f'<text x="{x + w_px / 2:.1f}" y="{y + bh / 2 + 3}" text-anchor="middle">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)
