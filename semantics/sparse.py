"""The sparse operand A of ``mma.sp`` (§9.7.14.6), ``wgmma.mma_async.sp`` (§9.7.15.6) and
``tcgen05.mma.sp``: its stored elements, and for each of them the row of B it multiplies.

§9.7.14.6: "For each K-wide row of matrix A, 50% elements are zeros and the remaining K/2 non-zero
elements are packed in the operand representing matrix A. The mapping of these K/2 elements to the
corresponding K-wide row is provided explicitly as metadata." §9.7.15.6 repeats the sentences for
wgmma ("For an MxNxK sparse wgmma.mma_async.sp operation, the MxK matrix A is packed into MxK/2
elements"; §9.7.15.6.1: "Only the two non-zero elements are stored in matrix A and their positions
in the four-wide chunk in Matrix A are indicated by two 2-bits indices in the metadata operand").
So row i of D is a dot product of K/2 products::

    D[i, j] = sum over s < K/2 of  stored[i, s] * B[k_index[i, s], j]   (+ C[i, j])

where ``k_index[i, s]`` is the K position (the row of B) that the metadata gives the stored element
``s`` of row ``i``. The K/2 rows of B that a row of A does not select -- its *pruned positions* --
are never read: an infinity or a NaN there does not reach D, as it would if A were expanded with
zeros and multiplied with all of B (0 * inf is NaN). H100/H200 silicon agrees
(``conformance/data/sm_90/wgmma-pruned-*``, docs/wgmma-silicon.rst "Pruned positions of B").

This module is the one place that says so, for every sparse instruction: where each stored element
goes is the layout's (``matrix_layout.expand_sparse`` for a warp's ``mma.sp``,
``wgmma_layout.expand_sparse`` for a warpgroup, each reading the metadata fields once), asked here
with the stored elements *numbered* (:func:`selected_k`), so that no second reading of the
metadata exists; the arithmetic is an ``mma`` of K/2 products per row (:func:`sparse_mma`), given
the dense arithmetic of the instruction (exact integers, a measured datapath, or the spec-level
sets), which therefore holds for the sparse form unchanged. :meth:`SparseOperand.dense` expands A
with zeros for display and layout checks only; nothing multiplies it.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from ptxspec.spec.errors import OperandError

SECTION = "9.7.14.6"
WGMMA_SECTION = "9.7.15.6"

#: The layout's expansion of a stored A ``[..., M, K/2]`` (element bits) into the dense
#: ``[..., M, K]`` and the rows whose metadata is undefined ``[..., M]``.
Placement = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: The dense arithmetic of the instruction on per-row problems: A ``[R, 1, K/2]``, B ``[R, K/2,
#: N]``, C ``[R, 1, N]`` -> D ``[R, 1, N]`` (uint64 bits, or an object array of spec-level sets).
DenseMma = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@attrs.frozen(eq=False)
class SparseOperand:
    """A sparse A (§9.7.14.6, §9.7.15.6): ``stored`` ``[..., M, K/2]`` element bits, ``k_index``
    ``[..., M, K/2]`` the K position (row of B) of each stored element, ``undefined`` ``[..., M]``
    the rows whose metadata the manual leaves undefined, ``k`` the dense K."""

    stored: np.ndarray
    k_index: np.ndarray
    undefined: np.ndarray
    k: int

    def with_stored(self, stored: np.ndarray) -> SparseOperand:
        """The same positions holding other stored elements (imm-scale-a's negation, §9.7.15.5.2)."""
        return attrs.evolve(self, stored=np.asarray(stored, dtype=np.uint64))

    def dense(self) -> np.ndarray:
        """A as the dense ``[..., M, K]`` matrix §9.7.14.6 / §9.7.15.6 describe (zeros at the
        pruned positions), for display and layout checks: the arithmetic never multiplies it."""
        out = np.zeros(self.stored.shape[:-1] + (self.k,), dtype=np.uint64)
        np.put_along_axis(out, self.k_index, self.stored, axis=-1)
        return out


def selected_k(place: Placement, stored_shape: tuple[int, ...], blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """§9.7.14.6.1 / §9.7.15.6.1: the K position of every stored element (``[..., M, K/2]``) and
    the undefined rows (``[..., M]``), read from the layout's expansion ``place`` of the stored
    elements numbered 1, 2, ... within each of the ``blocks`` metadata blocks of a row (each
    4-chunk block has its own two indices; a number that restarts per block fits even a 4-bit
    element). A number lands where its stored element would: its dense column is its K position."""
    m, half = stored_shape[-2:]
    if half % blocks:
        raise OperandError(f"a sparse row of {half} stored elements does not split into {blocks} metadata blocks", section=SECTION)
    per_stored = half // blocks
    numbers = np.broadcast_to(np.arange(half, dtype=np.uint64) % np.uint64(per_stored) + np.uint64(1), tuple(stored_shape))
    dense, undefined = place(np.ascontiguousarray(numbers))
    flat = np.asarray(dense).reshape(-1, m, dense.shape[-1])
    per_dense = flat.shape[-1] // blocks
    k_index = np.zeros((flat.shape[0], m, half), dtype=np.intp)
    t, row, col = np.nonzero(flat)
    k_index[t, row, (col // per_dense) * per_stored + flat[t, row, col].astype(np.intp) - 1] = col
    return k_index.reshape(tuple(stored_shape)), np.asarray(undefined, dtype=bool)


def sparse_operand(stored: np.ndarray, place: Placement, blocks: int, k: int) -> SparseOperand:
    """§9.7.14.6 / §9.7.15.6: the :class:`SparseOperand` of the stored elements ``stored``
    (``[..., M, K/2]``), their positions read from the layout's expansion ``place``
    (:func:`selected_k`)."""
    stored = np.asarray(stored, dtype=np.uint64)
    k_index, undefined = selected_k(place, stored.shape, blocks)
    return SparseOperand(stored, k_index, undefined, k)


def selected_b(B: np.ndarray, k_index: np.ndarray) -> np.ndarray:
    """§9.7.14.6 / §9.7.15.6: ``[..., M, K/2, N]``, for each row of A the rows of B
    (``[..., K, N]``) that its stored elements select -- and no other row of B."""
    B = np.asarray(B, dtype=np.uint64)
    return np.take_along_axis(B[..., None, :, :], np.asarray(k_index)[..., None], axis=-2)


def row_problems(stored: np.ndarray, k_index: np.ndarray, B: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """§9.7.14.6 / §9.7.15.6: the sparse ``D = A*B + C`` as one dense problem per row of A, of K/2
    products each: A ``[R, 1, K/2]`` (the stored elements), B ``[R, K/2, N]``
    (:func:`selected_b`), C ``[R, 1, N]``, ``R`` the rows of every instance."""
    stored, C = np.asarray(stored, dtype=np.uint64), np.asarray(C, dtype=np.uint64)
    half, n = stored.shape[-1], C.shape[-1]
    return stored.reshape(-1, 1, half), selected_b(B, k_index).reshape(-1, half, n), C.reshape(-1, 1, n)


def sparse_mma(stored: np.ndarray, k_index: np.ndarray, B: np.ndarray, C: np.ndarray, dense_mma: DenseMma) -> np.ndarray:
    """§9.7.14.6 / §9.7.15.6: D ``[..., M, N]`` of a sparse A (``stored`` and ``k_index``,
    ``[..., M, K/2]``), B ``[..., K, N]`` and C ``[..., M, N]``: ``D[i, j]`` is the instruction's
    dense arithmetic ``dense_mma`` on the K/2 products ``stored[i, s] * B[k_index[i, s], j]`` and
    ``C[i, j]`` (:func:`row_problems`); the pruned positions of B are never read."""
    A1, G1, C1 = row_problems(stored, k_index, B, C)
    return np.asarray(dense_mma(A1, G1, C1)).reshape(np.shape(C))


__all__ = ["DenseMma", "Placement", "SparseOperand", "row_problems", "selected_b", "selected_k", "sparse_mma", "sparse_operand"]
