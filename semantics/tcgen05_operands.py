"""Where ``tcgen05.mma`` finds its scale factors (§9.7.16.10.7) and its sparsity metadata
(§9.7.16.10.8) in Tensor Memory, and the sparse A that the metadata makes.

The manual gives these layouts as figures only (Figures 231-258 and 262-267, images, not text), so
every map here is pinned to NVIDIA CUTLASS (commit :data:`CUTLASS_COMMIT`):
``include/cute/atom/mma_traits_sm100_frag.hpp`` (``UMMA::tmem_sf_frg``, ``UMMA::tmem_e_frg``),
``include/cute/atom/mma_traits_sm100.hpp`` (which trait uses which fragment, how the sub-word of a
scale-factor address and bit 0 of a metadata column become the IDs of the instruction descriptor)
and ``include/cute/arch/mma_sm100_desc.hpp`` (the descriptor bits). ``tests/test_tcgen05_operands.py``
transcribes those CuTe layouts as data and evaluates them against the functions here. Where neither
the text nor CUTLASS decides a case we raise :class:`~ptxspec.spec.errors.OperandError` saying why.

**Scale factors** (:func:`scale_factor_cells`, :func:`read_scale_factors`). §9.7.16.10.7: "(A *
scale_A) * (B * scale_B) + D where scale_A and scale_B are matrices residing in Tensor Memory";
scale_A is M x SFA_N, scale_B is SFB_M x N, with SFA_N = SFB_M = 1, 2, 4 for ``.scale_vec::1X/2X/4X``
(Table 54; ``.block32`` is 1X for ``.kind::mxf8f6f4`` and 2X for ``.kind::mxf4/mxf4nvf4``,
``.block16`` is 4X); each row of A (column of B) is cut into that many blocks of K
(:func:`ptxspec.semantics.mma_block_scale.block_of`, shared with ``mma.block_scale``). The cell:

* one scale factor is one byte; the factors of one row are consecutive bytes of one 32-bit cell
  (§9.7.16.10.7.2.1-3: "1-byte aligned sub-column", "2-byte aligned", "4-byte aligned"), block
  ``j`` in byte ``ID + j``: "SFA_ID specifies the byte offset in the Tensor Memory word" (1X), "the
  half word offset" (2X, IDs 0 and 2), "The SFA_ID value must be 0" (4X). CUTLASS: the ID is the
  sub-word index of the ``tmem_ptr<uint8>`` address (``a_sf_id_ = (tmem_sfa_addr & 0xC0000000) >>
  30``; ``tmem_ptr::operator+`` rotates the byte index into bits 30-31), and ``tmem_sf_frg`` puts
  block ``j`` at byte stride 1;
* row ``r`` (M for A, N for B) in lane ``r % 32`` and column ``r // 32``: ``tmem_sf_frg``'s atom
  ``((32, MN/32), 4) : ((1, 512), 32)`` in (lane + 128 x byte) addressing;
* "Scale factors for A and B matrices need to be duplicated to all 32 lane partitions of tensor
  memory" (§9.7.16.10.7; CUTLASS's ``REP = _4`` mode of stride 32 lanes): every factor has four
  cells, lanes ``r % 32 + 32 p`` for ``p = 0..3``. :func:`read_scale_factors` requires the four to
  hold the same byte (the manual makes the copies the program's duty and says nothing of which one
  the hardware reads).

With ``.cta_group::2`` (the manual's figures are for one CTA; CUTLASS @7107b055's 2x1SM
block-scaled traits, ``TmemAllocMode::ScaleFactorDuplicated4by1`` for M = 256 and ``2by2`` for
M = 128, its collective ``sm100_blockscaled_mma_warpspecialized.hpp`` and its example
``2cta_mma_blockscale_m128.py``):

* scale_A follows A, split by M: CTA ``i // (M/2)`` holds row ``i``'s factors in the one-CTA
  layout above over its M/2 rows ("Each CTA reads SFA from its local TMEM at the same column
  offset");
* scale_B is not split like B: every CTA holds the factors of all N columns ("B data is N-split
  across CTAs, SFB stays full per CTA"), in the layout above for M = 256 and in the "2x2" layout
  of :func:`_pair_b_2x2` for M = 128; the two CTAs' copies must be equal, as the four
  sub-partitions' copies must.

K = 96 (§9.7.16.10.7.2.4-5, 7.3.4-5) is figures only and CUTLASS implements it only for SM103:
refused.

**Sparsity metadata** (:func:`metadata_cells`, :func:`read_metadata`). Each chunk of a row of A
(2 elements for ``.kind::tf32`` 1:2, 4 for ``.kind::f16/f8f6f4/mxf8f6f4/i8`` 2:4, 8 for
``.kind::mxf4/mxf4nvf4`` 4:8 in pairs; §9.7.16.10.8.1-3) has one 4-bit field (two 2-bit indices).
From ``tmem_e_frg`` (the ``SM100_MMA_*_SS_SPARSE`` traits):

* 16- and 32-bit A (tf32, f16): one column of 128 lanes per MMA; row ``i`` and field ``g`` (of 8)
  in lane ``i % 8 + 16 (i // 16) + 8 (g // 4)``, bits ``16 ((i // 8) % 2) + 4 (g % 4)`` -- atoms
  ``((8,2,8),(16,2)) : ((1,2048,16),(128,8))`` (f16, 1 bit per element) and
  ``((8,2,8),(8,2)) : ((1,1024,16),(128,8))`` (tf32, 2 bits per element);
* 8-bit and 4-bit A (f8f6f4, mxf8f6f4, i8, mxf4, mxf4nvf4): two columns per MMA; row ``i`` in lane
  ``i``, field ``g`` (of 16) in column ``g // 8``, bits ``4 (g % 8)`` -- atoms ``(128,64):(1,128)``
  (1 bit per element) and ``(128,128):(1,128)`` (half a bit per element);
* the sparsity selector (§9.7.16.10.8.4; Table 42 bits 0-1): CUTLASS passes the metadata column
  with bit 0 cleared and that bit as the selector (``id2 = tmem_e & 1; tmem_e &= ~1``) for tf32 and
  f16, and 0 for the others ("must be 0 for .kind::i8 and .kind::f8f6f4", "is assumed to be 0 for
  .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4"): selector ``s`` reads column ``s``. Selectors
  2 and 3 appear in no CUTLASS path and the figures are not text: refused.

Determined for M = 128 with ``.cta_group::1`` (also ``.ws``, whose ``tmem_e_frg_ws`` M = 128 atoms
are the same) and M = 256 with ``.cta_group::2`` (the ``2x1SM`` traits give each CTA of the pair
its 128 rows of A in ``tmem_e_frg`` with ``M_MMA == 128``: CTA ``i // 128``). M = 64 (Figures 262,
264, 266; and the §9.7.16.10.8.5 lane alignment of layouts C and F that only M = 64 needs), M = 128
with ``.cta_group::2`` (64 rows a CTA) and ``.ws`` M = 32 / 64 are figures only, and CUTLASS's
``tmem_e_frg`` says "Only 128 implemented right now": refused.

**The sparse A** (:func:`sparse_a`): the stored K/2 elements of each row and the K position (row
of B) of each, through the one sparse mechanism (:func:`ptxspec.semantics.sparse.sparse_operand`),
so B's pruned positions are never read. In a 2:4 field index ``w`` (bits ``2w .. 2w+1``) is the
position of stored element ``w`` of the chunk; in 4:8 it is the position of the two-wide
sub-chunk of stored elements ``2w, 2w+1``; in 1:2 the field is 0b0100 (position 0) or 0b1110
(position 1). "The only meaningful values of the index are" the lists of §9.7.16.10.8.1-3
(:data:`MEANINGFUL`); "Rest of the values result in undefined behavior": the row is undefined
(``SparseOperand.undefined``), as for ``mma.sp`` and ``wgmma.mma_async.sp``.
"""

from __future__ import annotations

import numpy as np

from ptxspec.spec.errors import OperandError
from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics.mma_block_scale import SCALE_VEC, block_of
from ptxspec.semantics.sparse import SparseOperand, sparse_operand
from ptxspec.semantics.state import HIGH_HALF, LANES, LOW_HALF, State, column_of, lane_of

BLOCK_SCALING = "9.7.16.10.7"
SCALE_KINDS = "9.7.16.10.7.1"
SCALE_A_ID = "9.7.16.10.7.2"
SCALE_B_ID = "9.7.16.10.7.3"
SPARSE = "9.7.16.10.8"
SELECTOR = "9.7.16.10.8.4"
ALLOCATION = "9.7.16.7.1"

#: The CUTLASS commit the figures are pinned to (``github:NVIDIA/cutlass``).
CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"

#: "all 32 lane partitions": four sub-partitions of 32 lanes (§9.7.16.10.7; CUTLASS ``REP = _4``).
SUBPARTITION = 32
REPLICAS = LANES // SUBPARTITION

#: Table 55: the scale vector sizes of each block-scaled kind (1X, 2X, 4X).
SCALE_VECTORS = {"mxf8f6f4": (1,), "mxf4": (2,), "mxf4nvf4": (2, 4)}


def _refuse(message: str, section: str) -> OperandError:
    return OperandError(message, section=section)


# ---------------------------------------------------------------------------------------------
# Scale factors (§9.7.16.10.7)
# ---------------------------------------------------------------------------------------------


def scale_vector(kind: str, scale_vec: str, k: int) -> int:
    """SFA_N = SFB_M, the scale factors per row of A (column of B), of ``.kind::{kind}`` with
    ``.{scale_vec}`` (``scale_vec::1X/2X/4X``, ``block32``, ``block16``) and dense or sparse K
    (Tables 54, 55; ".block32 is alias for .scale_vec::1X or .scale_vec::2X based on .kind and K
    dimension", ".block16 is alias for .scale_vec::4X")."""
    kind = kind.removeprefix("kind::")
    if kind not in SCALE_VECTORS:
        raise _refuse(f".kind::{kind} has no block scaling (§{BLOCK_SCALING}: .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4)", BLOCK_SCALING)
    if k == 96:
        raise _refuse(
            "K = 96 (block32 as 3X, block16 as 6X): its scale-factor layouts are figures only (Figures 234-239, 243-258) "
            "and CUTLASS implements K = 96 only for SM103; undetermined",
            SCALE_A_ID,
        )
    if k not in td.K_VALUES[kind]:
        raise _refuse(f".kind::{kind} has K {td.K_VALUES[kind][0]} (dense) or {td.K_VALUES[kind][1]} (sparse), not {k}", SCALE_KINDS)
    name = scale_vec.lstrip(".")
    if name == "block32":
        vec = 1 if kind == "mxf8f6f4" else 2
    elif name == "block16":
        vec = 4
    elif name in SCALE_VEC:
        vec = SCALE_VEC[name]
    else:
        raise _refuse(f".scale_vectorsize is scale_vec::1X/2X/4X, block32 or block16, not {scale_vec!r}", SCALE_KINDS)
    if vec not in SCALE_VECTORS[kind]:
        raise _refuse(f".{name} is not valid with .kind::{kind} (Table 55: {[f'scale_vec::{v}X' for v in SCALE_VECTORS[kind]]})", SCALE_KINDS)
    return vec


def scale_ids(kind: str, vec: int) -> frozenset[int]:
    """The scale factor IDs valid with ``vec`` factors a row: the descriptor's IDs
    (:func:`~ptxspec.semantics.tcgen05_descriptors.scale_factor_ids`, K = 64/128) whose ``vec``
    bytes fit the 32-bit cell -- 1X 0-3, 2X 0 and 2 ("half word offset"), 4X 0 ("must be 0")."""
    return frozenset(i for i in td.scale_factor_ids(kind, "ue8m0", False) if i + vec <= 4)


def scale_factor_cells(
    operand: str, kind: str, scale_vec: str, m_or_n: int, k: int, scale_id: int, cta_group: int = 1, m: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """§9.7.16.10.7.2 (A) / §9.7.16.10.7.3 (B): ``(cta, lane_offset, column_offset, byte)`` of scale
    factor ``[row, block]`` -- row of A (``m_or_n`` = M) or column of B (``m_or_n`` = N), block of K
    -- relative to the scale-A / scale-B Tensor Memory address, each an int array
    ``[m_or_n, SFA_N, copies]``: the last axis is the copies the program must keep equal (the four
    lane sub-partitions; with ``.cta_group::2`` B's in both CTAs). ``m`` is the instruction's M
    (for A ``m_or_n``; for B 128 with ``.cta_group::1``, and needed with ``.cta_group::2``, where it
    picks the pair's data path). Module docstring: the layouts and
    their sources."""
    vec = scale_vector(kind, scale_vec, k)
    kind = kind.removeprefix("kind::")
    section = {"a": SCALE_A_ID, "b": SCALE_B_ID}.get(operand)
    if section is None:
        raise _refuse(f"the scaled operands are 'a' and 'b', not {operand!r}", BLOCK_SCALING)
    if m is None and operand == "b" and cta_group == 2:
        raise _refuse("scale factors of B on a CTA pair: their layout depends on the instruction's M", SCALE_B_ID)
    m = (m_or_n if operand == "a" else 128) if m is None else m
    if m not in ((128,) if cta_group == 1 else (128, 256)):
        raise _refuse(f"block-scaled .cta_group::{cta_group} has M = {'128' if cta_group == 1 else '128 or 256'} (Table 39), not {m}", td.SHAPES)
    if operand == "b" and m_or_n not in td.N_VALUES[kind]:
        raise _refuse(f"N = {m_or_n} is not an N of .kind::{kind} (Table 39: 8 to 256 in steps of 8)", td.SHAPES)
    valid = scale_ids(kind, vec)
    if scale_id not in valid:
        raise _refuse(f"scale factor {operand.upper()} ID {scale_id} with {vec} factor(s) a row: valid IDs {sorted(valid)}", section)
    row = np.arange(m_or_n)[:, None, None]
    block = np.arange(vec)[None, :, None]
    if cta_group == 1:
        cta, local, lanes = np.zeros_like(row), row, np.arange(REPLICAS) * SUBPARTITION
    elif operand == "a":  # CTA i // (M/2) holds A's row i (A is split by M across the pair), "4x1"
        cta, local, lanes = row // (m // 2), row % (m // 2), np.arange(REPLICAS) * SUBPARTITION
    elif m == 256:  # "4x1": every CTA holds all of N
        cta, local, lanes = np.repeat([0, 1], REPLICAS), row, np.tile(np.arange(REPLICAS) * SUBPARTITION, 2)
    else:
        return _pair_b_2x2(m_or_n, vec, scale_id, block)
    shape = (m_or_n, vec, np.size(lanes))
    lane = np.broadcast_to(local % SUBPARTITION + np.asarray(lanes)[None, None, :], shape)
    column = np.broadcast_to(local // SUBPARTITION, shape)
    byte = np.broadcast_to(scale_id + block, shape)
    return np.broadcast_to(cta, shape).astype(np.intp), lane.astype(np.intp), column.astype(np.intp), byte.astype(np.intp)


def _pair_b_2x2(n: int, vec: int, scale_id: int, block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scale factors of B for ``.cta_group::2`` with M = 128 (64 rows of D a CTA, the "2x2" data
    path of Layout B): column ``n = n0 + 32 n1 + (N/2) h`` of B in lanes ``n0 + 64 h`` and
    ``n0 + 64 h + 32`` (the two sub-partitions of its half of D's columns), column ``n1``, in both
    CTAs (CUTLASS's ``tmem_sf_frg`` 2x2 atom ``((32, MN/2/32), 2, 2) : ((1, 512), 64, 32)``; its
    ``64x128b.warpx2::01_23`` copy "data_row[0:31] -> DP[0:63] / data_row[32:63] -> DP[64:127]").
    CUTLASS sizes the atom with N rounded up to 128 where D's halves split at N/2, so N must be
    128 or 256 for the two to agree."""
    if n % 128:
        raise _refuse(
            f"N = {n} with M = 128 and .cta_group::2: CUTLASS splits scale factor B's halves at round_up(N, 128) / 2, D's Layout B at N / 2; "
            "they agree only for N = 128 and 256, and nothing decides between them",
            SCALE_B_ID,
        )
    row = np.arange(n)[:, None, None]
    half, within = row // (n // 2), row % (n // 2)
    copy = np.arange(4)[None, None, :]  # CTA (copy // 2), sub-partition of the half (copy % 2)
    shape = (n, vec, 4)
    lane = np.broadcast_to(within % SUBPARTITION + 64 * half + SUBPARTITION * (copy % 2), shape)
    column = np.broadcast_to(within // SUBPARTITION, shape)
    byte = np.broadcast_to(scale_id + block, shape)
    return np.broadcast_to(copy // 2, shape).astype(np.intp), lane.astype(np.intp), column.astype(np.intp), byte.astype(np.intp)


def read_scale_factors(
    state: State, address: int, operand: str, kind: str, scale_vec: str, m_or_n: int, k: int, scale_id: int, cta_group: int = 1, m: int | None = None
) -> np.ndarray:
    """scale_A ``[M, SFA_N]`` or scale_B transposed ``[N, SFB_M]`` (uint8 bytes) from the Tensor
    Memory of ``state`` at ``address`` (scale-A-tmem / scale-B-tmem), laid out as
    :func:`scale_factor_cells` says. Refused, naming the factor and its cell: a cell outside
    Tensor Memory or in an unallocated column, a byte no instruction wrote, and copies in the four
    sub-partitions that differ ("need to be duplicated to all 32 lane partitions")."""
    cta, lane, column, byte = scale_factor_cells(operand, kind, scale_vec, m_or_n, k, scale_id, cta_group, m)
    what = f"scale_{operand.upper()}"
    words, flags = state.tensor_memory_cells(address, cta, lane, column, what)
    values = ((words >> (8 * byte).astype(np.uint32)) & 0xFF).astype(np.uint8)
    need = np.where(byte < 2, LOW_HALF, HIGH_HALF)
    missing = (flags & need) != need
    if missing.any():
        r, j, p = (int(x[0]) for x in np.nonzero(missing))
        raise OperandError(
            f"{what}[{r}, {j}] is byte {byte[r, j, p]} of lane {lane_of(address) + lane[r, j, p]}, column {column_of(address) + column[r, j, p]}, "
            "which holds no value",
            where=f"{what} at {address:#010x}",
            section=SCALE_A_ID if operand == "a" else SCALE_B_ID,
        )
    differ = (values != values[..., :1]).any(axis=-1)
    if differ.any():
        r, j = (int(x[0]) for x in np.nonzero(differ))
        raise OperandError(
            f"{what}[{r}, {j}] differs between its copies in (CTA, lane) {[(int(c), int(x) + lane_of(address)) for c, x in zip(cta[r, j], lane[r, j])]} "
            f"({[int(x) for x in values[r, j]]}): "
            '"Scale factors for A and B matrices need to be duplicated to all 32 lane partitions of tensor memory" (with .cta_group::2, '
            "B's in both CTAs)",
            where=f"{what} at {address:#010x}",
            section=BLOCK_SCALING,
        )
    return values[..., 0]


def scale_of_k(scale: np.ndarray, k: int) -> np.ndarray:
    """``[rows, K]``: the scale factor that multiplies each (logical) K position of each row of A
    (column of B), from ``scale`` ``[rows, SFA_N]``: "each row of matrix A is divided into SFA_N
    number of chunks" (:func:`~ptxspec.semantics.mma_block_scale.block_of`)."""
    scale = np.asarray(scale)
    return scale[:, block_of(np.arange(k), k, scale.shape[1])]


# ---------------------------------------------------------------------------------------------
# Sparsity metadata (§9.7.16.10.8)
# ---------------------------------------------------------------------------------------------

#: The logical elements of A that one 4-bit metadata field covers (§9.7.16.10.8.1-3): 1:2 chunks
#: of two (tf32), 2:4 chunks of four, 4:8 chunks of eight in pairs (mxf4, mxf4nvf4).
CHUNK = {"tf32": 2, "f16": 4, "f8f6f4": 4, "mxf8f6f4": 4, "i8": 4, "mxf4": 8, "mxf4nvf4": 8}
#: "The only meaningful values of the index are" (§9.7.16.10.8.1-3; the 2:4 and 4:8 lists are the
#: same seven values, 0b0110 among them).
_TWO_OF_FOUR = frozenset({0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110})
MEANINGFUL = {kind: frozenset({0b1110, 0b0100}) if kind == "tf32" else _TWO_OF_FOUR for kind in CHUNK}


def _sparse_k(kind: str, k: int | None) -> tuple[str, int]:
    """The kind without ``kind::`` and its sparse K (``k``, if given, must be it)."""
    kind = kind.removeprefix("kind::")
    if kind not in CHUNK:
        raise _refuse(f".kind::{kind} has no sparse form (§{SPARSE})", SPARSE)
    sparse_k = td.K_VALUES[kind][1]
    if k is not None and k != sparse_k:
        raise _refuse(f"sparse .kind::{kind} has K = {sparse_k} (Table 39), not {k}", td.SHAPES)
    return kind, sparse_k


def metadata_cells(kind: str, m: int, k: int, cta_group: int = 1, ws: bool = False, selector: int = 0) -> tuple[np.ndarray, ...]:
    """§9.7.16.10.8.4: ``(cta, lane_offset, column_offset, bit)`` of the 4-bit metadata field of
    row ``i`` and chunk ``g`` of A (``[M, K / chunk]`` int arrays), relative to the sp-meta-tmem
    address: the field is bits ``bit .. bit + 3`` of that cell. ``k`` is the kind's (logical)
    sparse K (Table 39). Module docstring: the layout, its sources and what is refused."""
    kind, sparse_k = _sparse_k(kind, k)
    groups = sparse_k // CHUNK[kind]
    if ws and cta_group != 1:
        raise _refuse(".ws has .cta_group::1 only", td.SHAPES)
    if (cta_group, m) not in ((1, 128), (2, 256)):
        raise _refuse(
            f"M = {m} with .cta_group::{cta_group}{' .ws' if ws else ''}: the metadata layout is determined for M = 128 (.cta_group::1) and "
            "M = 256 (.cta_group::2, 128 rows a CTA) only; the others are figures (262, 264, 266) that CUTLASS does not implement "
            '("Only 128 implemented right now")',
            SELECTOR,
        )
    wide = kind in ("tf32", "f16")
    if selector not in ((0, 1) if wide else (0,)):
        why = (
            "selectors 2 and 3 appear in no CUTLASS path and the figures are not text; undetermined"
            if wide and selector in (2, 3)
            else '"must be 0 for .kind::i8 and .kind::f8f6f4", "is assumed to be 0 for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4"'
        )
        raise _refuse(f"sparsity selector {selector} with .kind::{kind}: {why}", SELECTOR)
    i = np.arange(m)[:, None] % 128
    g = np.arange(groups)[None, :]
    shape = (m, groups)
    cta = np.broadcast_to(np.arange(m)[:, None] // 128, shape)
    if wide:
        lane = i % 8 + 16 * (i // 16) + 8 * (g // 4)
        column = np.full(shape, selector)
        bit = 16 * ((i // 8) % 2) + 4 * (g % 4)
    else:
        lane = np.broadcast_to(i, shape)
        column = np.broadcast_to(g // 8, shape)
        bit = np.broadcast_to(4 * (g % 8), shape)
    return tuple(np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.intp) for x in (cta, lane, column, bit))


def read_metadata(state: State, address: int, kind: str, m: int, k: int, cta_group: int = 1, ws: bool = False, selector: int = 0) -> np.ndarray:
    """The 4-bit metadata fields ``[M, K / chunk]`` (uint8) of ``tcgen05.mma.sp`` from the Tensor
    Memory at ``address`` (sp-meta-tmem) of ``state`` (and its ``peer`` for CTA 1), laid out as
    :func:`metadata_cells` says. A cell outside Tensor Memory or in an unallocated column, or a
    field whose half of a cell holds no value, is refused with its row, chunk and cell."""
    cta, lane, column, bit = metadata_cells(kind, m, k, cta_group, ws, selector)
    words, flags = state.tensor_memory_cells(address, cta, lane, column, "sparsity metadata")
    need = np.where(bit < 16, LOW_HALF, HIGH_HALF)
    missing = (flags & need) != need
    if missing.any():
        i, g = (int(x[0]) for x in np.nonzero(missing))
        raise OperandError(
            f"metadata of row {i}, chunk {g} is bits {bit[i, g]}-{bit[i, g] + 3} of lane {lane_of(address) + lane[i, g]}, column "
            f"{column_of(address) + column[i, g]} (CTA {cta[i, g]}), which hold no value",
            where=f"sp-meta-tmem {address:#010x}",
            section=SELECTOR,
        )
    return ((words >> bit.astype(np.uint32)) & 0xF).astype(np.uint8)


def _place(kind: str, fields: np.ndarray, k: int):
    """The layout's expansion (a :data:`~ptxspec.semantics.sparse.Placement`): stored ``[M, K/2]``
    to dense ``[M, K]`` by the metadata ``fields`` ``[M, K / chunk]``, and the undefined rows."""
    chunk = CHUNK[kind]
    m, groups = fields.shape
    f = fields.astype(np.intp)
    index = np.stack([f & 3, (f >> 2) & 3], axis=-1)  # [M, G, 2]: the two 2-bit indices
    g = np.arange(groups)[None, :, None]
    if chunk == 2:  # 1:2, one stored element a chunk: 0b0100 -> position 0, 0b1110 -> position 1
        column = (2 * g + index[..., :1] // 2).reshape(m, groups)
    elif chunk == 4:  # 2:4: stored element w of the chunk at index w
        column = (4 * g + index).reshape(m, 2 * groups)
    else:  # 4:8 in pairs: stored elements 2w, 2w + 1 at sub-chunk index w
        column = (8 * g[..., None] + 2 * index[..., None] + np.arange(2)).reshape(m, 4 * groups)
    meaningful = np.zeros(16, dtype=bool)
    meaningful[list(MEANINGFUL[kind])] = True
    undefined = ~meaningful[f].all(axis=-1)

    def place(stored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dense = np.zeros(stored.shape[:-1] + (k,), dtype=np.uint64)
        np.put_along_axis(dense, np.broadcast_to(column, stored.shape), stored, axis=-1)
        return dense, np.broadcast_to(undefined, stored.shape[:-1])

    return place


def sparse_a(kind: str, stored: np.ndarray, fields: np.ndarray) -> SparseOperand:
    """§9.7.16.10.8: the sparse A of ``tcgen05.mma.sp`` -- ``stored`` ``[M, K/2]`` element bits and
    the metadata ``fields`` ``[M, K / chunk]`` (:func:`read_metadata`, the selector already applied)
    -- as the one sparse mechanism takes it (:func:`ptxspec.semantics.sparse.sparse_operand`): each
    stored element with its K position; a row with a field outside :data:`MEANINGFUL` is undefined
    ("Rest of the values result in undefined behavior")."""
    kind, k = _sparse_k(kind, None)
    stored, fields = np.asarray(stored, dtype=np.uint64), np.asarray(fields)
    m = fields.shape[0] if fields.ndim == 2 else -1
    if fields.ndim != 2 or fields.shape[1] != k // CHUNK[kind] or stored.shape != (m, k // 2):
        raise _refuse(
            f"sparse .kind::{kind} (K = {k}) takes stored [M, {k // 2}] and metadata fields [M, {k // CHUNK[kind]}], got {stored.shape} and {fields.shape}",
            SPARSE,
        )
    if fields.size and (fields.min() < 0 or fields.max() > 15):
        raise _refuse("a metadata field is 4 bits (0-15)", SPARSE)
    return sparse_operand(stored, _place(kind, fields, k), k // CHUNK[kind], k)


def compress_a(kind: str, dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`sparse_a` for a dense ``[M, K]`` A that follows the kind's pattern:
    ``(stored [M, K/2], fields [M, K / chunk])`` with the indices in increasing order (a chunk with
    fewer non-zero elements than it stores takes the lowest free positions). A chunk with more
    non-zero elements (or, for 4:8, non-zero pairs) than the pattern allows is refused."""
    kind, k = _sparse_k(kind, None)
    dense = np.asarray(dense, dtype=np.uint64)
    if dense.ndim != 2 or dense.shape[1] != k:
        raise _refuse(f"sparse .kind::{kind} has K = {k}: a dense A is [M, {k}], got {dense.shape}", SPARSE)
    chunk = CHUNK[kind]
    unit = 2 if chunk == 8 else 1  # 4:8 selects pairs
    m = dense.shape[0]
    units = dense.reshape(m, k // chunk, chunk // unit, unit)
    keep = 1 if chunk == 2 else 2
    nonzero = (units != 0).any(axis=-1)  # [M, G, units]
    if (nonzero.sum(axis=-1) > keep).any():
        i, g = (int(x[0]) for x in np.nonzero(nonzero.sum(axis=-1) > keep))
        raise _refuse(f"row {i}, chunk {g} of A has more than {keep} non-zero {'pairs' if unit == 2 else 'elements'} of {chunk // unit}", SPARSE)
    # the positions kept: the non-zero ones, then the lowest zero ones, in increasing order
    order = np.argsort(~nonzero, axis=-1, kind="stable")[..., :keep]
    order = np.sort(order, axis=-1)
    stored = np.take_along_axis(units, order[..., None], axis=2).reshape(m, k // 2)
    if chunk == 2:
        fields = np.where(order[..., 0] == 0, 0b0100, 0b1110)
    else:
        fields = order[..., 0] | (order[..., 1] << 2)
    return stored, fields.astype(np.uint8)


__all__ = [
    "CHUNK",
    "CUTLASS_COMMIT",
    "MEANINGFUL",
    "compress_a",
    "metadata_cells",
    "read_metadata",
    "read_scale_factors",
    "scale_factor_cells",
    "scale_ids",
    "scale_of_k",
    "scale_vector",
    "sparse_a",
]
