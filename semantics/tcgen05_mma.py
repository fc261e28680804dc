"""§9.7.16.10 tcgen05.mma: ``D = A*B + D`` on the Tensor Memory state.

One thread issues it ("tcgen05.mma has single thread semantics", §9.7.16.10.9.1): the function
takes the CTA's :class:`~ptxspec.semantics.state.State` and the instruction's operands and returns
the state with D written. The pieces, each from the module that owns it:

* the instruction descriptor ``idesc`` -- :class:`~ptxspec.semantics.tcgen05_descriptors.InstrDescriptor`
  (§9.7.16.4.2: M, N, the types, negate, transpose, saturate, sparsity), checked against the
  shapes of the kind, ``.cta_group`` and ``.ws`` (:func:`~ptxspec.semantics.tcgen05_descriptors.check_shape`)
  and against the shared memory descriptors (:func:`~ptxspec.semantics.tcgen05_descriptors.check_operands`);
* A and B in shared memory -- the canonical layouts of the shared memory descriptor
  (:func:`~ptxspec.semantics.tcgen05_descriptors.element_address`, the one layout mechanism of
  wgmma and tcgen05), read by :func:`ptxspec.semantics.wgmma_layout.gather`;
* A and D in Tensor Memory -- the data-path layouts A-G of §9.7.16.10.5
  (:mod:`ptxspec.semantics.tcgen05_datapath`);
* the arithmetic -- the one accumulation mechanism of mma and wgmma (:mod:`ptxspec.semantics.mma`):
  the datapath a profile records for the types (``Profile.tcgen05_datapaths``), else the spec-level
  sets. §9.7.16 says nothing of the precision of tcgen05.mma; the spec level carries over wgmma's
  paragraph (§9.7.15.5.2 and the mma chapter it refers to, §9.7.14.5.14): the products exact, the
  accumulation "with at least single precision", so every element of D is a set of allowed values
  computed exactly as for wgmma.

Readings (each also said where it is applied):

* ``enable-input-d`` false gives ``D = A*B``: C is taken as the zero the profile reads it as
  (wgmma's ``scale-d`` false; -0 at the spec level, the identity of IEEE addition).
* A ``.f16`` D is one 16-bit element in the lower 16 bits of its 32-bit cell (§9.7.16.10.4.1); the
  upper 16 bits are left undefined.
* An element of C in a cell that holds no value makes that element of D undefined.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptxspec.profiles import SPEC, MatrixKey, Profile
from ptxspec.semantics import mma
from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics import tcgen05_operands as ops
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.numerics import fmt_of
from ptxspec.semantics.results import only_member
from ptxspec.semantics.state import LANES, LOW_HALF, WHOLE, State, column_of, lane_of
from ptxspec.semantics.instructions import THREAD_MEMORY, semantic
from ptxspec.semantics.mma_block_scale import block_of, block_scaled_dot
from ptxspec.semantics.sparse import SparseOperand, sparse_mma
from ptxspec.semantics.warp import Undefined
from ptxspec.spec import tcgen05 as tc
from ptxspec.spec.errors import OperandError

SECTION = "9.7.16.10.9.1"
OPERATION = "9.7.16.10"
PACKING_D = "9.7.16.10.4.1"
TRANSPOSE_NEGATE = "9.7.16.10.1"

#: The element types of each kind that are integers (``.kind::i8``: "Unsigned 8b", "Signed 8b").
INTEGER_TYPES = ("u8", "s8")
TYPE_BITS = td.TYPE_BITS


def instruction_descriptor(kind: str, idesc: int, *, cta_group: int, ws: bool = False) -> td.InstrDescriptor:
    """``idesc`` decoded for ``.kind`` (§9.7.16.4.2; reserved bits and codes the kind lacks are
    refused) and checked against the shapes of Table 39 for ``.cta_group`` and ``.ws``."""
    instr = td.InstrDescriptor.decode(idesc, kind)
    td.check_shape(instr, cta_group=cta_group, ws=ws)
    return instr


def smem_matrix(state: State, descriptor: int, rows: int, cols: int, element_type: str, major: str, operand: str, kind: str) -> np.ndarray:
    """The ``rows x cols`` matrix of element bits (uint64) that the shared memory descriptor
    ``descriptor`` (§9.7.16.4.1) describes in ``state``'s shared memory: ``operand`` "a" is M x K,
    "b" is K x N; ``major`` "K" or "MN" (§9.7.16.10.6: "If the bit Transpose A Matrix / Transpose
    B Matrix in the Instruction descriptor is 0, then K-major is used"). The 4- and 6-bit elements
    of ``.kind::f8f6f4``/``mxf8f6f4`` are in the padded 16-element units of §9.7.16.10.4.4; those of
    ``.kind::mxf4``/``mxf4nvf4`` packed two to a byte (§9.7.16.10.4.6)."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    mn, k = (r, c) if operand == "a" else (c, r)
    bits = TYPE_BITS[element_type]
    padded = kind in td.CONTAINER_KINDS and bits < 8
    byte, bit = td.element_address(descriptor, bits, mn, k, major, padded=padded)
    return wl.gather(state.shared_image(), np.asarray(byte), np.asarray(bit), bits)


def negated(matrix: np.ndarray, element_type: str) -> np.ndarray:
    """§9.7.16.10.1 "The elements of the matrices A and B can be negated by specifying the Negate A
    Matrix and Negate B Matrix bits": every element's sign bit flipped (exact negation)."""
    return np.asarray(matrix, dtype=np.uint64) ^ np.uint64(1 << (TYPE_BITS[element_type] - 1))


def product(
    instr: td.InstrDescriptor,
    A: np.ndarray | SparseOperand,
    B: np.ndarray,
    C: np.ndarray,
    profile: Profile,
    scales: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """``A*B + C`` (M x K -- or a sparse A --, K x N, M x N element bits), with ``scales`` (scale_A
    ``[M, V]``, scale_B ``[V, N]`` bytes) for a block-scaled kind: ``(A * scale_A) * (B * scale_B)
    + D`` (§9.7.16.10.7), in the arithmetic ``profile`` gives the kind's types: integers exactly
    (``.s32`` accumulators; Saturate, Table 42 bit 3, clamps, else wraps: mma's rule,
    §9.7.14.5.14); floating point through the profile's datapath for the kind and types, or,
    without one, the spec-level sets (an object array). A sparse A multiplies its stored elements
    with the rows of B they select (:func:`ptxspec.semantics.sparse.sparse_mma`, the mechanism of
    mma.sp and wgmma.sp). The arithmetic is :mod:`ptxspec.semantics.mma`'s (mma's and wgmma's);
    the block-scaled spec level :func:`ptxspec.semantics.mma_block_scale.block_scaled_dot`'s."""
    if instr.atype in INTEGER_TYPES:
        dense_int = lambda a, b, c: mma.integer_matrix(instr.atype, instr.btype, a, b, c, satfinite=instr.saturate)  # noqa: E731
        return sparse_mma(A.stored, A.k_index, B, C, dense_int) if isinstance(A, SparseOperand) else dense_int(A, B, C)
    model = datapath_for(profile, instr)
    if scales is None:

        def dense(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
            if model is not None:
                return mma.datapath_matrix(model, instr.atype, instr.btype, instr.dtype, instr.dtype, a, b, c)
            return mma.mma_matrix(instr.atype, instr.btype, instr.dtype, instr.dtype, a, b, c, profile=SPEC)

        return sparse_mma(A.stored, A.k_index, B, C, dense) if isinstance(A, SparseOperand) else dense(A, B, C)
    if model is not None and not isinstance(A, SparseOperand):
        assert instr.scale_type is not None, "a block-scaled kind has a scale type"
        return mma.datapath_matrix(model, instr.atype, instr.btype, instr.dtype, instr.dtype, A, B, C, scales=(instr.scale_type, *scales))
    # The spec level (or a sparse A, which no datapath has), one element at a time: each k's
    # product with the scale factors of its block.
    stored, k_index = (A.stored, A.k_index) if isinstance(A, SparseOperand) else (A, np.broadcast_to(np.arange(A.shape[1]), A.shape))
    k, vec = B.shape[0], scales[0].shape[1]
    out = np.empty(C.shape, dtype=object)
    for i, j in np.ndindex(*C.shape):
        ks = [int(x) for x in k_index[i]]
        sa = [int(scales[0][i, block_of(x, k, vec)]) for x in ks]
        sb = [int(scales[1][block_of(x, k, vec), j]) for x in ks]
        out[i, j] = block_scaled_dot(
            instr.atype,
            instr.btype,
            instr.dtype,
            instr.dtype,
            [int(v) for v in stored[i]],
            [int(B[x, j]) for x in ks],
            int(C[i, j]),
            stype=instr.scale_type,
            sa=sa,
            sb=sb,
            element_bits=TYPE_BITS[instr.atype] if TYPE_BITS[instr.atype] == 4 else 8,
        )
    return out


def datapath_for(profile: Profile, instr: td.InstrDescriptor) -> mma.Datapath | None:
    """The datapath ``profile`` records for tcgen05.mma of ``instr``'s kind and types, or None
    (then the spec-level sets are the profile's answer)."""
    table = profile.tcgen05_datapaths
    for shape in (f"k{instr.k}", None):  # a datapath for the K, else for every K of the kind
        key = MatrixKey(instr.atype, instr.btype, instr.dtype, instr.dtype, shape=shape, sparse=instr.sparse, kind=instr.kind)
        if key in table:
            return table[key]
    return None


def zero_c(dtype: str, profile: Profile) -> int:
    """The C of ``enable-input-d`` false ("The operation of the form D = A*B is issued when the
    input predicate argument enable-input-d is false"): 0 for ``.s32``; for a floating-point D the
    zero that the profile reads "D = A*B" with (as wgmma's scale-d, ``Profile.wgmma_scale_d_false_c``)."""
    if dtype == "s32":
        return 0
    return fmt_of(dtype).sign_mask if profile.wgmma_scale_d_false_c == "-0" else 0


def d_width(dtype: str) -> tuple[int, int]:
    """(bits of a D element, the written flag of its cell): ``.f16`` in the lower 16 bits of its cell
    (§9.7.16.10.4.1 "a Tensor Memory word would contain a single 16-bit element in its lower 16
    bits"), ``.f32``/``.s32`` the whole cell."""
    return (16, LOW_HALF) if dtype == "f16" else (32, WHOLE)


def read_d(state: State, d_tmem: int, cells, dtype: str, where=None) -> tuple[np.ndarray, np.ndarray]:
    """C = the current D from Tensor Memory: ``(bits, known)``, uint64 and bool arrays [M, N]; an
    element is not known where its cell holds no value (or one of a set). ``cells``: (cta, lane
    offset, column offset) arrays [M, N], CTA 0 this one and 1 its peer."""
    bits, flag = d_width(dtype)
    cta, lane, column = cells
    words, flags = state.tensor_memory_cells(d_tmem, cta, lane, column, "[d-tmem]", where=where)
    return words.astype(np.uint64) & np.uint64((1 << bits) - 1), (flags & flag) == flag


def check_cells(form_text: str, state: State, address: int, cells, what: str) -> None:
    """Every cell of ``cells`` (from ``address``) is in Tensor Memory and allocated, in its CTA."""
    cta, lane, column = cells
    state.tensor_memory_cells(address, cta, lane, column, what, where=form_text)


def write_d(state: State, d_tmem: int, cells, D: np.ndarray, dtype: str, disabled_lanes: np.ndarray) -> State:
    """``state`` (and its peer) with D written at ``cells``, except in the lanes ``disabled_lanes``
    (a bool array per Tensor Memory lane of each CTA, [ctas, 128]) marks: "If a bit in the mask is 1,
    then the corresponding lane in the Tensor Memory for the resultant matrix D will not be
    updated". D: uint64 bits, or an object array where an element is a set (spec level: its cell
    holds one of the set, :meth:`~ptxspec.semantics.state.TensorMemory.with_allowed`) or undefined
    (its cell is left undefined)."""
    cta, lane, column = cells
    _bits, flag = d_width(dtype)
    new = state
    for which in np.unique(cta):
        here = cta == which
        lanes, columns = lane_of(d_tmem) + lane[here], column_of(d_tmem) + column[here]
        keep = ~disabled_lanes[int(which)][lanes]
        target = new.of_cta(int(which))
        if D.dtype != object:  # every element bits
            tm = target.tensor_memory.with_cells(lanes[keep], columns[keep], D[here][keep], defined=flag)
        else:
            values = np.array([v if isinstance(v, Undefined) or only_member(v) is None else only_member(v) for v in D[here]], dtype=object)
            known = np.array([isinstance(v, (int, np.integer)) for v in values], dtype=bool)
            sets = np.array([not k and not isinstance(v, Undefined) for v, k in zip(values, known)], dtype=bool)
            words = np.array([int(v) if k else 0 for v, k in zip(values, known)], dtype=np.int64)
            tm = target.tensor_memory.with_cells(lanes[keep], columns[keep], words[keep], defined=np.where(known, flag, 0)[keep])
            chosen = keep & sets
            if chosen.any():
                tm = tm.with_allowed(lanes[chosen], columns[chosen], list(values[chosen]))
        new = new.with_cta_tensor_memory(int(which), tm)
    return new


def a_shifted(form, state: State, instr: td.InstrDescriptor, named: dict, cta_group: int, sparse: bool, stored_k: int) -> State:
    """§9.7.16.10.9.1 ``.ashift``: "shifts the rows of the A matrix down by one row, except for the
    last row in the Tensor Memory. Qualifier .ashift is only allowed with M = 128 or M = 256." The
    cells of A (``[a-tmem]``, the only form with ``.ashift``) in each CTA take the row shift of
    :meth:`~ptxspec.semantics.state.TensorMemory.with_rows_shifted` once the MMA has read them:
    NVIDIA's CUTLASS @7107b055 (``nvvm_wrapper.tcgen05_mma``, ``a_shift``) observed on B200 that
    "the shift is a post-MMA operation: the current MMA reads unshifted A and produces A @ B, then
    the A TMEM region is shifted for subsequent reads", within each 32-lane sub-partition."""
    from ptxspec.semantics import tcgen05_datapath as dp

    if instr.m not in (128, 256):
        raise OperandError(f"M = {instr.m}: Qualifier .ashift is only allowed with M = 128 or M = 256", where=form.text, section=SECTION)
    if dp.a_copies(instr.m, cta_group, sparse, False) != 1:
        raise OperandError(
            f".ashift with M = {instr.m} and .cta_group::{cta_group}: A is read in two copies (Layout B), and which copy's rows shift is not determined",
            where=form.text,
            section=SECTION,
        )
    a_tmem = int(named["a_tmem"])
    container = td.tmem_a_container(instr.kind, instr.atype)[0]
    cta, lane, column, _bit = dp.a_cells(instr.m, stored_k, container, cta_group, sparse, False, lane_alignment=lane_of(a_tmem) % 32, copy=0)
    for which in np.unique(cta):
        here = cta == which
        lanes, columns = lane_of(a_tmem) + np.unique(lane[here]), column_of(a_tmem) + np.unique(column[here])
        if lanes.size % 32 or np.any(lanes[::32] % 32) or np.any(np.diff(lanes) != 1):
            raise OperandError(
                f".ashift with M = {instr.m} and .cta_group::{cta_group}: A's rows fill only part of each 32-lane sub-partition, so which row is "
                "the last is not determined (NVIDIA's observation covers A filling whole sub-partitions)",
                where=form.text,
                section=SECTION,
            )
        state = state.with_cta_tensor_memory(int(which), state.of_cta(int(which)).tensor_memory.with_rows_shifted(lanes, columns))
    return state


def _named(form, inputs) -> dict:
    """The instruction's operands by the manual's names, ``-`` read as ``_`` and in lower case."""
    return {o.name.lower().replace("-", "_"): v for o, v in zip(form.inputs, inputs)}


def disabled_lanes(form_text: str, named: dict, cta_group: int) -> np.ndarray:
    """``disable-output-lane`` as a bool mask per CTA and Tensor Memory lane ([ctas, 128]): "each
    bit corresponds to a lane of the Tensor Memory, with least significant bit of the first element
    of the vector ... corresponding to the lane 0"; the vector has 4 elements with
    ``.cta_group::1``, 8 with ``::2`` (the second four: the peer CTA's lanes, our reading)."""
    words = [named[name] for name in sorted((n for n in named if n.startswith("disable_output_lane")), key=lambda n: int(n.rsplit(".", 1)[-1]))]
    mask = np.zeros((cta_group, LANES), dtype=bool)
    if not words:
        return mask
    if len(words) != 4 * cta_group:
        raise OperandError(f"disable-output-lane has {4 * cta_group} elements with .cta_group::{cta_group}, got {len(words)}", where=form_text, section=SECTION)
    bits = np.array([(int(words[w]) >> b) & 1 for w in range(len(words)) for b in range(32)], dtype=bool)
    return bits.reshape(cta_group, LANES)


# ---------------------------------------------------------------------------------------------
# The instruction
# ---------------------------------------------------------------------------------------------


def a_matrix(form, state: State, instr: td.InstrDescriptor, named: dict, cta_group: int, sparse: bool, ws: bool, stored_k: int) -> list[np.ndarray]:
    """A (M x K element bits), once per copy that the data-path layout keeps (Layout B keeps two,
    each feeding half of D's columns; :func:`ptxspec.semantics.tcgen05_datapath.a_copies`). From
    shared memory (``a-desc``): with ``.cta_group::2`` each CTA's shared memory holds its own rows
    of A at the descriptor's address (CUTLASS's 2x1SM traits: ``ALayout`` split by M across the
    pair, our reading of "the B matrix ... in Shared Memory of the current CTA and optionally in
    peer CTA" for A as well). From Tensor Memory (``[a-tmem]``): the lanes of D's rows
    (§9.7.16.10.5), packed along K."""
    from ptxspec.semantics import tcgen05_datapath as dp

    m = instr.m
    if "a_desc" in named:
        rows = m // cta_group
        parts = [
            smem_matrix(state.of_cta(c), int(named["a_desc"]), rows, stored_k, instr.atype, "MN" if instr.transpose_a else "K", "a", instr.kind)
            for c in range(cta_group)
        ]
        return [np.concatenate(parts, axis=0)]
    if instr.transpose_a:
        raise OperandError(
            "A in Tensor Memory has no transpose: Transpose A applies to a matrix in shared memory (§9.7.16.10.2)", where=form.text, section=TRANSPOSE_NEGATE
        )
    a_tmem = int(named["a_tmem"])
    # §9.7.16.10.4.3: .kind::mxf8f6f4's 4- and 6-bit elements in 8-bit containers (the payload's
    # bits: tcgen05_descriptors.tmem_a_container); the other kinds' elements as they are.
    container = td.tmem_a_container(instr.kind, instr.atype)[0]
    copies = []
    for copy in range(dp.a_copies(m, cta_group, sparse, ws)):
        cta, lane, column, bit = dp.a_cells(m, stored_k, container, cta_group, sparse, ws, lane_alignment=lane_of(a_tmem) % 32, copy=copy)
        words, flags = state.tensor_memory_cells(a_tmem, cta, lane, column, "[a-tmem]", where=form.text)
        if (flags != WHOLE).any():
            raise OperandError("[a-tmem]: A reads a Tensor Memory cell that holds no value", where=form.text, section=SECTION)
        word = (words.astype(np.uint64) >> bit.astype(np.uint64)) & np.uint64((1 << container) - 1)
        out = td.tmem_a_payload(word, instr.kind, instr.atype)
        copies.append(out)
    return copies


def ws_mask(form, instr: td.InstrDescriptor, named: dict) -> td.ZeroColumnMaskDescriptor | None:
    """``.ws``'s optional ``zero-column-mask-desc`` decoded (§9.7.16.4.3)."""
    if "zero_column_mask_desc" not in named:
        return None
    return td.ZeroColumnMaskDescriptor.decode(int(named["zero_column_mask_desc"]))


def b_matrix(form, state: State, instr: td.InstrDescriptor, named: dict, cta_group: int, k: int, mask: td.ZeroColumnMaskDescriptor | None = None) -> np.ndarray:
    """B (K x N element bits) from shared memory (``b-desc``); with ``.cta_group::2`` "in Shared
    Memory of the current CTA and optionally in peer CTA": columns ``0 .. N/2 - 1`` in the issuing
    CTA's, the rest in its peer's, at the descriptor's address (CUTLASS's 2x1SM ``BLayout``, our
    reading). ``.ws`` with a zero-column mask (§9.7.16.4.3, tcgen05.mma.ws: "which columns of B
    matrix will have zero value ... regardless of the values present in the shared memory"):
    column ``j`` of the MMA reads column ``j + shift`` of B, and a masked column is zero."""
    cols = instr.n // cta_group
    shift = 0 if mask is None else int(td.b_column(mask, 0, instr.m))
    parts = [
        smem_matrix(state.of_cta(c), int(named["b_desc"]), k, cols + shift, instr.btype, "MN" if instr.transpose_b else "K", "b", instr.kind)[:, shift:]
        for c in range(cta_group)
    ]
    B = np.concatenate(parts, axis=1)
    if mask is not None:
        zero = td.zero_column_mask(mask, instr.m, instr.n)
        B[:, [(zero >> j) & 1 == 1 for j in range(instr.n)]] = 0
    return B


def collector_state(form, state: State) -> State:
    """§9.7.16.10.9.1 ``.collector::a::fill/use/lastuse/discard``: the collector buffer of A as
    explicit state (``State.collectors``: the buffers holding a valid fill). ``use`` and
    ``lastuse`` "require a previous fill to the collector buffer to be still valid": refused
    otherwise. Reuse "is opportunistic": the A the instruction multiplies is always the one in
    memory ("the source memory of an A or B matrix must not be modified while the MMA instruction
    using those matrices has not completed - regardless of collector qualifier permissions"), so
    the buffer changes no result; only the rules are checked. No qualifier is ``discard``."""
    usage = form.get("collector_usage") or ("collector::b0::discard" if ".ws" in form.family.key else "collector::a::discard")
    _, buffer, op = usage.split("::")
    held = set(state.collectors)
    if op in ("use", "lastuse") and buffer not in held:
        raise OperandError(f".{usage} requires a previous fill to the collector buffer {buffer} to be still valid", where=form.text, section=SECTION)
    if op == "fill":
        held.add(buffer)
    elif op in ("lastuse", "discard"):
        held.discard(buffer)
    return attrs.evolve(state, collectors=frozenset(held))


def scaled_c(C: np.ndarray, known: np.ndarray, shift: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """§9.7.16.10.9.1 ``scale-input-d``: "D = A*B+D * (2 ^ - scale-input-d)", "valid range of values
    ... [0, 15]", "only valid for .kind::tf32 and .kind::f16". The scaled C is exact only while it
    stays normal; where 2^-s would take an element of C below the normal range the manual does not
    say how the scaling rounds, so that element is not known and its element of D undefined (our
    reading: the scaling is exact, an exponent decrement). Zeros, infinities and NaNs are kept."""
    if shift == 0:
        return C, known
    fmt = fmt_of(dtype)
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    exponent = (C >> np.uint64(m)) & np.uint64((1 << e) - 1)
    zero = (exponent == 0) & (C & np.uint64((1 << m) - 1) == 0)
    special = exponent == (1 << e) - 1
    stays = exponent.astype(np.int64) - shift >= 1
    scaled = np.where(zero | special, C, np.where(stays, C - np.uint64(shift << m), C))
    return scaled, known & (zero | special | stays)


def multiply_accumulate(instr: td.InstrDescriptor, A, B: np.ndarray, C: np.ndarray, known: np.ndarray, profile: Profile, scales=None) -> np.ndarray:
    """:func:`product` of C's bits; an element of C that is not ``known`` makes its element of D
    undefined (an object array then)."""
    D = product(instr, A, B, np.where(known, C, 0).astype(np.uint64), profile, scales)
    if known.all():
        return D
    D = D.astype(object)
    D[~known] = Undefined(d_width(instr.dtype)[0])
    return D


@semantic(*(f.key for f in tc.FAMILIES if f.key.startswith("tcgen05.mma")), operands=THREAD_MEMORY)
def tcgen05_mma(form, state: State, *inputs, profile: Profile) -> tuple[tuple, State]:
    """§9.7.16.10.9.1 tcgen05.mma (dense A, no block scaling): "initiates an MxNxK matrix multiply
    and accumulate operation, D = A*B+D where the A matrix is MxK, the B matrix is KxN, and the D
    matrix is MxN"; "The operation of the form D = A*B is issued when the input predicate argument
    enable-input-d is false"; ``idesc`` "specifies the shapes, exact types, sparsity and other
    details". A from ``a-desc`` (shared memory) or ``[a-tmem]``; B from ``b-desc``; D at
    ``[d-tmem]`` in the data-path layout of §9.7.16.10.5; ``disable-output-lane`` lanes keep their
    cells; negate (§9.7.16.10.1) flips the sign of A's or B's elements; ``.cta_group::2`` works on
    the pair (D's rows split between the CTAs as the layout says).

    Refused with the manual's reason: an ``idesc`` with reserved bits set, a code or shape the kind
    does not have (§9.7.16.4.2, Table 39); ``idesc``'s sparsity bit on a dense form (or off on
    ``.sp``); a shared memory descriptor the kind does not allow (§9.7.16.10.3); cells outside the
    allocation; ``.ashift`` with an M other than 128 or 256 (:func:`a_shifted`); ``.collector`` rules; threads' issue rules as every tcgen05 instruction
    (:func:`ptxspec.semantics.tcgen05._cta_group`)."""
    from ptxspec.semantics import tcgen05_datapath as dp
    from ptxspec.semantics.tcgen05 import _cta_group

    named = _named(form, inputs)
    cta_group, state = _cta_group(form, state)
    kind = form["kind"].split("::")[1]
    ws = ".ws" in form.family.key
    sparse = ".sp" in form.family.key
    instr = instruction_descriptor(kind, int(named["idesc"]), cta_group=cta_group, ws=ws)
    if instr.sparse != sparse:
        raise OperandError(f"idesc's Sparsity bit is {int(instr.sparse)} on a {'sparse' if sparse else 'dense'} form", where=form.text, section=td.INSTR)
    if "a_desc" in named:
        td.check_operands(instr, td.SmemDescriptor.decode(int(named["a_desc"])), td.SmemDescriptor.decode(int(named["b_desc"])))
    else:
        td.check_operands(instr, None, td.SmemDescriptor.decode(int(named["b_desc"])))
    state = collector_state(form, state)
    shift = int(named.get("scale_input_d", 0))
    if not 0 <= shift <= 15:
        raise OperandError(f"scale-input-d = {shift}: the valid range of values is [0, 15]", where=form.text, section=SECTION)
    if shift and kind not in ("tf32", "f16"):
        raise OperandError("scale-input-d is only valid for .kind::tf32 and .kind::f16", where=form.text, section=SECTION)

    k = instr.k
    copies = a_matrix(form, state, instr, named, cta_group, sparse, ws, k // 2 if sparse else k)
    B = b_matrix(form, state, instr, named, cta_group, k, ws_mask(form, instr, named))
    if instr.negate_a:
        copies = [negated(a, instr.atype) for a in copies]
    if instr.negate_b:
        B = negated(B, instr.btype)
    if sparse:  # §9.7.16.10.8: the stored half of A and the metadata that places it
        fields = ops.read_metadata(state, int(named["sp_meta_tmem"]), kind, instr.m, k, cta_group, ws, instr.sparsity_selector)
        operands: list[np.ndarray | SparseOperand] = [ops.sparse_a(kind, a, fields) for a in copies]
    else:
        operands = list(copies)
    scales = None
    if form.get("block_scale"):  # §9.7.16.10.7: scale_A [M, V] and scale_B [V, N] from Tensor Memory
        vector = form.get("scale_vectorsize") or "block32"  # ".kind::mxf4 ... defaults to .block32" (the catalogue requires it for mxf4nvf4)
        scale_a = ops.read_scale_factors(state, int(named["scale_a_tmem"]), "a", kind, vector, instr.m, k, instr.scale_a_id, cta_group)
        scale_b = ops.read_scale_factors(state, int(named["scale_b_tmem"]), "b", kind, vector, instr.n, k, instr.scale_b_id, cta_group, instr.m)
        scales = (scale_a, scale_b.T)
    d_tmem = int(named["d_tmem"])
    cells = dp.d_cells(instr.m, instr.n, cta_group, sparse, ws, lane_alignment=lane_of(d_tmem) % 32)
    check_cells(form.text, state, d_tmem, cells, "[d-tmem]")
    if int(named["enable_input_d"]):
        C, known = scaled_c(*read_d(state, d_tmem, cells, instr.dtype, where=form.text), shift, instr.dtype)
    else:
        C, known = np.full((instr.m, instr.n), zero_c(instr.dtype, profile), dtype=np.uint64), np.ones((instr.m, instr.n), dtype=bool)
    width = instr.n // len(operands)
    parts = []
    for copy, A in enumerate(operands):
        columns = slice(copy * width, (copy + 1) * width)
        part = (scales[0], scales[1][:, columns]) if scales is not None else None
        parts.append(multiply_accumulate(instr, A, B[:, columns], C[:, columns], known[:, columns], profile, part))
    D = np.concatenate(parts, axis=1) if all(p.dtype != object for p in parts) else np.concatenate([p.astype(object) for p in parts], axis=1)
    state = write_d(state, d_tmem, cells, D, instr.dtype, disabled_lanes(form.text, named, cta_group))
    if form.get("ashift"):
        state = a_shifted(form, state, instr, named, cta_group, sparse, k // 2 if sparse else k)
    return (), state
