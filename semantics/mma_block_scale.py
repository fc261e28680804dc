"""§9.7.14.3 block scaling and the fp8/fp6/fp4 ``mma`` kinds (§9.7.14.5.14, §9.7.14.6.3), spec level.

The forms (catalogue families of :mod:`ptxspec.spec.matrix`, all "require sm_120a"):

* ``mma.f8f6f4``: ``mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.dtype.f8f6f4type.f8f6f4type.ctype``,
  ``D = A * B + C`` on ``.e4m3/.e5m2/.e3m2/.e2m3/.e2m1`` elements, no scaling;
* ``mma.block_scale``: ``.kind::mxf8f6f4`` (m16n8k32), ``.kind::mxf4`` and ``.kind::mxf4nvf4``
  (m16n8k64) with ``.block_scale``: "D = (A * scale_A) * (B * scale_B) + C" (§9.7.14.3);
* ``mma.sp.f8f6f4`` and ``mma.sp.block_scale``: the same with a 2:4-sparse A
  (``mma.sp::ordered_metadata``, m16n8k64 and m16n8k128; §9.7.14.6.3).

**Sparse A.** §9.7.14.6: "the remaining K/2 non-zero elements are packed in the operand
representing matrix A. The mapping of these K/2 elements to the corresponding K-wide row is
provided explicitly as metadata." Row ``i`` of D is the sum of the K/2 products of its stored
elements with the rows of B they select, each with the scale factors of the block of its (logical)
K position; the one sparse mechanism of mma.sp, wgmma.sp and tcgen05.mma.sp
(:mod:`ptxspec.semantics.sparse`) gives them. B's pruned positions are never read: an infinity, a
NaN or a container with non-zero padding there does not reach D (expanding A with zeros would make
0 * inf = NaN).

**Elements.** "When .kind is .kind::mxf8f6f4 or .kind::f8f6f4, the individual 4-bit and 6-bit
floating point type elements must be packed in an 8-bit container. The matrix element of type
.e2m1 resides in central 4 bits of the 8-bit container with padding in the upper 2 bits and lower
2 bits of the container. When the matrix element is of type .e3m2 or .e2m3, the matrix element
resides in the lower 6 bits of the 8-bit container with padding in the upper 2 bits of the
container. In contrast, note that when using mma with .kind::mxf4 or .kind::mxf4nvf4, no explicit
padding is necessary even when matrix elements are of type .e2m1" (§9.7.14.5.14). The fragment
layouts (:mod:`ptxspec.semantics.matrix_layout`) give the container (or, for mxf4, the 4-bit
element); :func:`element_field` takes the element out of its container. The manual does not say
what non-zero padding means; we read "must be packed ... with padding" as a requirement on the
program, so a D element that reads a container with non-zero padding is undefined.

**Scale factors.** ``.ue8m0`` is "an 8-bit unsigned floating-point format with 8 bits of exponent
and 0 bits of mantissa ... NaN value is limited to 0xff" (value 2^(e-127)); ``.ue4m3`` is "a 7-bit
unsigned floating point format with 4 bits of exponent and 3 bits of mantissa ... NaN value is
limited to 0x7f ... with the MSB bit padded with zero" (§5.2.3). A ue4m3 scale byte with its MSB
set is, like a padded element, undefined for the D elements that use it.

"For a scale_A matrix of shape M x SFA_N, each row of matrix A is divided into SFA_N number of
blocks and each block of a row is multiplied with the corresponding element (SF_A) from the same
row of scale_A. Similarly, for a scale_B matrix of shape SFB_M x N, each column of matrix B is
divided into SFB_M number of blocks and each block of a column is multiplied with the
corresponding element (SF_B) from the same column of scale_B" (§9.7.14.3); SFA_N = SFB_M is 1, 2
or 4 for ``.scale_vec::1X/2X/4X`` (Table 34). So k belongs to block ``k // (K / SFA_N)`` of the
(logical, dense) K -- for the sparse m16n8k128 that is blocks of 64 (2X) or 32 (4X) logical k.

Which lane and byte hold SF_A and SF_B (§9.7.14.3, figures 42-44; :func:`scale_a_source`,
:func:`scale_b_source`):

* "a thread-pair within a quad determined by thread-id-a contributes the SF_A values. The value 0
  selects the lower two threads whereas value 1 selects the upper two threads ... %laneid % 4 ==
  0 or 1 ... %laneid % 4 == 2 or 3". Of the pair, the lower lane holds row ``groupID`` and the
  upper lane row ``groupID + 8`` (figure 42 only; our reading, the same as CUTLASS's SM120 SFA
  layout);
* "one thread within a quad determined by thread-id-b contributes the SF_B values ... each
  thread satisfying %laneid % 4 == thread-id-b": lane ``4 * n + thread-id-b`` holds column ``n``;
* "byte-id-a ... selects which bytes from the scale-a-data contribute": 1X one byte
  (byte-id); 2X "a byte-pair (two bytes) ... value 0 selects the lower two bytes whereas value 2
  selects the upper two bytes"; 4X "all four bytes ... byte-id must be zero". Byte ``byte-id + j``
  is the scale of block ``j`` (figure 44; our reading).

Table 36 lists the valid selector values, "any other value results in undefined behavior": here an
:class:`~ptxspec.spec.errors.OperandError` naming the selector (ptxas rejects such immediates
too). The selectors are registers; the manual says nothing of lanes that disagree, and we require
one value for the warp.

**Numerics.** §9.7.14.5.14 "Precision and rounding" for ".e4m3, .e5m2, .e3m2, .e2m3, .e2m1
floating point operations": "Element-wise multiplication of matrix A and B is performed with
specified precision. Accumulation of the intermediate values is performed with at least single
precision. The accumulation order, rounding and handling of subnormal inputs are unspecified."
The manual says nothing more for the scaled kinds. We read the scaled product
``(a_k * SF_A) * (b_k * SF_B)`` as one exact product (every factor is a short dyadic value; the
product of four is exact), and build the allowed set of ``sum_k product_k + c`` exactly as the
unscaled ``mma`` does (the set builder :func:`ptxspec.semantics.mma.spec_sum` that
:func:`~ptxspec.semantics.mma.spec_dot` uses): any order, every addition rounded to at least 24 bits. A subnormal input (element
or ue4m3 scale) may be read as zero. A NaN scale (ue8m0 0xff, ue4m3 0x7f) makes every product of
its block NaN ("NaN times anything", IEEE 754 §7.2), so D is any NaN.

There is no Blackwell GPU in this project: these semantics are spec level only, checked against
the manual and ptxas, never against silicon. Every profile gives the spec-level sets.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import overload

import numpy as np

from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import FORMATS
from ptxspec.semantics import mma as _mma
from ptxspec.semantics.mma import spec_sum
from ptxspec.semantics.numerics import Value, decode, is_subnormal
from ptxspec.profiles import Profile
from ptxspec.semantics.instructions import WARP_LANES, semantic
from ptxspec.semantics.warp import one_value, per_thread
from ptxspec.semantics.results import Result
from ptxspec.semantics.sparse import row_problems

BLOCK_SCALING = "9.7.14.3"
MMA_SECTION = "9.7.14.5.14"
MMA_SP_SECTION = "9.7.14.6.3"
WARP = 32
FULL = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# Elements: the fp8/fp6/fp4 value in its container
# ---------------------------------------------------------------------------------------------

#: (lowest bit, width) of each element type in an 8-bit container (§9.7.14.5.14): .e2m1 "in
#: central 4 bits", .e3m2/.e2m3 "in the lower 6 bits", the fp8 types the whole byte.
CONTAINER_FIELD = {"e4m3": (0, 8), "e5m2": (0, 8), "e3m2": (0, 6), "e2m3": (0, 6), "e2m1": (2, 4)}


def element_field(element_type: str, bits: int, element_bits: int = 8) -> tuple[int, bool]:
    """The element's own bit pattern in a fragment field of ``element_bits`` (8: a container; 4:
    a packed .e2m1 of mxf4/mxf4nvf4), and whether the container's padding is zero."""
    if element_bits == 4:
        return bits, True
    low, width = CONTAINER_FIELD[element_type]
    field = (bits >> low) & ((1 << width) - 1)
    return field, bits == field << low


@functools.cache
def element_value(element_type: str, bits: int, element_bits: int = 8) -> Value:
    """The exact value of a matrix element (the numerics core's decode of its field)."""
    return decode(FORMATS[element_type], element_field(element_type, bits, element_bits)[0])


@functools.cache
def padding_zero(element_type: str, element_bits: int = 8) -> np.ndarray:
    """§9.7.14.5.14: for every fragment field ``0 .. 2**element_bits - 1`` of ``element_type``,
    whether its container's padding is zero (:func:`element_field`), as a read-only table."""
    table = np.array([element_field(element_type, x, element_bits)[1] for x in range(1 << element_bits)], dtype=bool)
    table.flags.writeable = False
    return table


@functools.cache
def scale_factor_value(stype: str, byte: int) -> Value:
    """The exact value of a scale factor byte: .ue8m0 2^(byte-127) (0xff NaN); .ue4m3 the unsigned
    e4m3 of the low 7 bits (0x7f NaN); the MSB is padding (:func:`scale_byte_defined`)."""
    if stype == "ue4m3":
        byte &= 0x7F
    return decode(FORMATS[stype], byte)


def scale_byte_defined(stype: str, byte: int) -> bool:
    """§5.2.3 ue4m3: "the MSB bit padded with zero"; every ue8m0 byte is a value or the NaN."""
    return stype != "ue4m3" or byte < 0x80


# ---------------------------------------------------------------------------------------------
# Scale factors: which lane and byte hold SF_A and SF_B (§9.7.14.3)
# ---------------------------------------------------------------------------------------------

#: Table 34: the columns of scale_A and the rows of scale_B.
SCALE_VEC = {"scale_vec::1X": 1, "scale_vec::2X": 2, "scale_vec::4X": 4}

#: Table 36, "valid values for various selector components": (byte-id, thread-id-a, thread-id-b).
VALID_SELECTORS = {
    1: ((0, 1, 2, 3), (0, 1), (0, 1, 2, 3)),
    2: ((0, 2), (0, 1), (0, 1, 2, 3)),
    4: ((0,), (0, 1), (0, 1, 2, 3)),
}


def check_selectors(vec: int, byte_id_a: int, thread_id_a: int, byte_id_b: int, thread_id_b: int) -> None:
    """Table 36: "Any other value results in undefined behavior" -- refused here."""
    bytes_ok, thread_a_ok, thread_b_ok = VALID_SELECTORS[vec]
    for name, value, valid in (
        ("byte-id-a", byte_id_a, bytes_ok),
        ("thread-id-a", thread_id_a, thread_a_ok),
        ("byte-id-b", byte_id_b, bytes_ok),
        ("thread-id-b", thread_id_b, thread_b_ok),
    ):
        if value not in valid:
            raise OperandError(
                f'{name} = {value} is not valid with .scale_vec::{vec}X (Table 36: {list(valid)}; "any other value results in undefined behavior")',
                section=BLOCK_SCALING,
            )


def scale_a_source(row: int, block: int, byte_id_a: int, thread_id_a: int) -> tuple[int, int]:
    """(lane, byte) of scale-a-data that holds SF_A of ``row`` and K block ``block``: the quad of
    ``groupID = row % 8``, the pair chosen by thread-id-a, its lower lane for rows 0-7 and upper
    lane for rows 8-15; byte ``byte-id-a + block``."""
    return 4 * (row % 8) + 2 * thread_id_a + row // 8, byte_id_a + block


def scale_b_source(col: int, block: int, byte_id_b: int, thread_id_b: int) -> tuple[int, int]:
    """(lane, byte) of scale-b-data that holds SF_B of column ``col`` and K block ``block``: lane
    ``%laneid % 4 == thread-id-b`` of the quad ``groupID = col``; byte ``byte-id-b + block``."""
    return 4 * col + thread_id_b, byte_id_b + block


def scale_matrices(
    scale_a_data: Sequence[int], scale_b_data: Sequence[int], vec: int, selectors: tuple[int, int, int, int], m: int = 16, n: int = 8
) -> tuple[list[list[int]], list[list[int]]]:
    """The bytes of scale_A (M x vec) and scale_B (vec x N) from the lanes' scale-a-data and
    scale-b-data registers (32 values each) and the selectors (byte-id-a, thread-id-a, byte-id-b,
    thread-id-b)."""
    check_selectors(vec, *selectors)
    byte_a, thread_a, byte_b, thread_b = selectors

    def byte(word: int, which: int) -> int:
        return (word >> (8 * which)) & 0xFF

    sa = [[byte(scale_a_data[lane], b) for lane, b in (scale_a_source(i, j, byte_a, thread_a) for j in range(vec))] for i in range(m)]
    sb = [[byte(scale_b_data[lane], b) for lane, b in (scale_b_source(col, j, byte_b, thread_b) for col in range(n))] for j in range(vec)]
    return sa, sb


@overload
def block_of(k: int, depth: int, vec: int) -> int: ...
@overload
def block_of(k: np.ndarray, depth: int, vec: int) -> np.ndarray: ...
def block_of(k: int | np.ndarray, depth: int, vec: int) -> int | np.ndarray:
    """The block of column ``k`` of a row of A (row ``k`` of B), or of each of an array of K
    positions: "each row of matrix A is divided into SFA_N number of blocks" of the logical K."""
    return k // (depth // vec)


# ---------------------------------------------------------------------------------------------
# One element of D
# ---------------------------------------------------------------------------------------------


def scaled_product(a: Value, b: Value, sa: Value | None, sb: Value | None) -> Value:
    """``(a * SF_A) * (b * SF_B)`` exactly (IEEE 754 for NaN, infinity and 0 * infinity)."""
    left = a if sa is None else _mma._product(a, sa)
    right = b if sb is None else _mma._product(b, sb)
    return _mma._product(left, right)


@functools.cache
def _subnormal(t: str | None, bits: int | None) -> bool:
    """Whether an element field or a scale byte (the ue4m3 MSB is padding) is subnormal."""
    if t is None or bits is None:
        return False
    return is_subnormal(FORMATS[t], bits & 0x7F if t == "ue4m3" else bits)


def block_scaled_dot(
    atype: str,
    btype: str,
    ctype: str,
    dtype: str,
    a: Sequence[int],
    b: Sequence[int],
    c: int,
    *,
    stype: str | None = None,
    sa: Sequence[int] | None = None,
    sb: Sequence[int] | None = None,
    element_bits: int = 8,
) -> Result:
    """The spec-level result of one element of D: ``sum_k (a_k * sa_k) * (b_k * sb_k) + c``.

    ``a``, ``b``: the row of A and column of B as fragment fields (8-bit containers, or 4-bit
    .e2m1 when ``element_bits`` is 4); ``c``: C's bits; ``sa``, ``sb``: the scale factor byte that
    applies to each k (None: no scaling, ``.kind::f8f6f4``). Module docstring: the numerics."""
    fa_bits = [element_field(atype, x, element_bits)[0] for x in a]
    fb_bits = [element_field(btype, y, element_bits)[0] for y in b]
    av = [element_value(atype, x, element_bits) for x in a]
    bv = [element_value(btype, y, element_bits) for y in b]
    sav = [None] * len(a) if sa is None else [scale_factor_value(stype, s) for s in sa]
    sbv = [None] * len(b) if sb is None else [scale_factor_value(stype, s) for s in sb]
    products = [scaled_product(x, y, s, t) for x, y, s, t in zip(av, bv, sav, sbv)]
    # "handling of subnormal inputs [is] unspecified": a product with a subnormal element or
    # ue4m3 scale may be read as zero.
    no_scale = [None] * len(a)
    subnormal = [
        _subnormal(atype, x) or _subnormal(btype, y) or _subnormal(stype, s) or _subnormal(stype, t)
        for x, y, s, t in zip(fa_bits, fb_bits, sa or no_scale, sb or no_scale)
    ]
    cv = decode(FORMATS[ctype], c)
    p = _mma.accumulation_precision(atype, ctype, dtype)
    return spec_sum(products, cv, subnormal, is_subnormal(FORMATS[ctype], c), p, FORMATS[dtype])


# ---------------------------------------------------------------------------------------------
# The semantic function: fragments in, fragments out
# ---------------------------------------------------------------------------------------------


def _layouts(form) -> dict:
    """The fragment layouts of the form's operands. For mma.sp both A and B come from the sparse
    tables (§9.7.14.6.2: the B of sparse m16n8k64 .e4m3 or m16n8k128 .e2m1 is a fragment that the
    dense mma does not have); A is the stored non-zero half."""
    from ptxspec.semantics.matrix_layout import fragment_layout

    sparse = form.get("spvariant") is not None
    return {
        operand: fragment_layout(form["shape"], operand, form[slot], sparse=sparse and operand in "ab")
        for operand, slot in (("a", "atype"), ("b", "btype"), ("c", "ctype"), ("d", "dtype"))
    }


def _uniform(value, name: str, section: str) -> int:
    """A selector operand: one value for the whole warp (our reading, module docstring)."""
    lanes = _mma._lanes(value, name)
    chosen = one_value(lanes)
    if chosen is None:
        raise OperandError(f"the block-scale selector {name} must have one value in every lane of the warp, got {sorted(set(lanes))}", section=section)
    return chosen


#: The families :func:`mma_block_scale` is the meaning of.
FAMILIES = ("mma.f8f6f4", "mma.block_scale", "mma.sp.f8f6f4", "mma.sp.block_scale")


@semantic(*FAMILIES, operands=WARP_LANES)
def mma_block_scale(form, *registers, profile: Profile, active: int = FULL):
    """§9.7.14.5.14 ``mma.sync.aligned ... .kind::f8f6f4`` and ``.kind::{mxf8f6f4,mxf4,mxf4nvf4}
    .block_scale`` (and their ``mma.sp::ordered_metadata`` forms, §9.7.14.6.3):
    ``D = (A * scale_A) * (B * scale_B) + C`` (§9.7.14.3), at the spec level for every profile.

    ``registers``: the form's source operands in order -- ``a.*, b.*, c.*``, for mma.sp ``e, f``,
    and with ``.block_scale`` ``scale-a-data, byte-id-a, thread-id-a, scale-b-data, byte-id-b,
    thread-id-b`` -- each 32 lane values (or one int for every lane). Returns one
    :class:`~ptxspec.semantics.warp.WarpResult` per register of D. A warp with inactive lanes
    gives undefined registers ("all threads in the warp must execute the same mma instruction").

    For mma.sp (§9.7.14.6) row ``i`` of D takes its K/2 stored elements times the rows of B they
    select (:func:`ptxspec.semantics.sparse.row_problems`, positions from
    :func:`ptxspec.semantics.mma.sparse_rows`), each product with the scale factors of its K
    position's block; the pruned positions of B are never read, neither their values nor their
    padding. A dense A is the same with every K position stored.
    """
    from ptxspec.semantics.warp import undefined_warp

    L = _layouts(form)
    sparse = form.get("spvariant") is not None
    scaled = "block_scale" in form
    section = MMA_SP_SECTION if sparse else MMA_SECTION
    counts = [L[o].registers for o in "abc"]
    extra = (2 if sparse else 0) + (6 if scaled else 0)
    if len(registers) != sum(counts) + extra:
        raise OperandError(f"{form.text} takes {sum(counts) + extra} source registers, got {len(registers)}", section=section)
    ld = L["d"]
    if active != FULL:
        return tuple(undefined_warp(ld.register_bits) for _ in range(ld.registers))
    arrays, at = [], 0
    for o, count in zip("abc", counts):
        regs = [_mma._lanes(registers[at + r], f"{o}.{r}") for r in range(count)]
        arrays.append(np.array(regs, dtype=np.uint64).T.reshape(32, count))
        at += count
    if sparse:
        selector = _uniform(registers[at + 1], "f", MMA_SP_SECTION)
        stored, k_index, undefined_rows = _mma.sparse_rows(
            L["a"], arrays[0], _mma._lanes(registers[at], "e"), selector, ordered=form["spvariant"] == "sp::ordered_metadata"
        )
        at += 2
    else:  # a dense A stores every K position
        stored = L["a"].to_matrix(arrays[0])
        k_index = np.broadcast_to(np.arange(stored.shape[-1]), stored.shape)
        undefined_rows = np.zeros(stored.shape[0], dtype=bool)
    undefined_rows = np.array(undefined_rows, dtype=bool)
    C = L["c"].to_matrix(arrays[2])
    # §9.7.14.6: row i of D multiplies its stored elements with the rows of B they select, and
    # nothing else -- B's pruned positions (their values and their padding) are never read.
    A1, G, C1 = row_problems(stored, k_index, L["b"].to_matrix(arrays[1]), C)
    m, n, k = stored.shape[0], C.shape[1], L["a"].cols
    bits = L["a"].element_bits
    atype, btype = form["atype"], form["btype"]
    # "must be packed in an 8-bit container ... with padding": a D element that reads a container
    # with non-zero padding is undefined.
    undefined_rows |= ~padding_zero(atype, bits)[A1[:, 0, :]].all(axis=-1)
    undefined = ~padding_zero(btype, bits)[G].all(axis=1)  # [M, N]
    stype, SA, SB = None, None, None
    if scaled:
        from ptxspec.spec.matrix import scale_vec_size

        size = scale_vec_size(form)
        assert size is not None, "a valid form has a .scale_vec_size (given, or the kind's default)"
        stype, vec = form["stype"], SCALE_VEC[size]
        sa_data = _mma._lanes(registers[at], "scale-a-data")
        sb_data = _mma._lanes(registers[at + 3], "scale-b-data")
        selectors = (
            _uniform(registers[at + 1], "byte-id-a", BLOCK_SCALING),
            _uniform(registers[at + 2], "thread-id-a", BLOCK_SCALING),
            _uniform(registers[at + 4], "byte-id-b", BLOCK_SCALING),
            _uniform(registers[at + 5], "thread-id-b", BLOCK_SCALING),
        )
        scale_a, scale_b = (np.asarray(x, dtype=np.intp) for x in scale_matrices(sa_data, sb_data, vec, selectors, m, n))
        # The scale factors of each product: those of the block of its K position.
        blocks = block_of(np.asarray(k_index, dtype=np.intp), k, vec)  # [M, K'] (K' = K/2 for mma.sp)
        SA, SB = np.take_along_axis(scale_a, blocks, axis=-1), scale_b[blocks]  # [M, K'], [M, K', N]
        defined = np.array([scale_byte_defined(stype, b) for b in range(256)])
        undefined_rows |= ~defined[SA].all(axis=-1)
        undefined |= ~defined[SB].all(axis=1)
    D = np.empty((m, n), dtype=object)
    from ptxspec.semantics.warp import Undefined

    for i in range(m):
        row = [int(x) for x in A1[i, 0]]
        sa = None if SA is None else [int(s) for s in SA[i]]
        for j in range(n):
            if undefined_rows[i] or undefined[i, j]:
                D[i, j] = Undefined(ld.element_bits)
                continue
            sb = None if SB is None else [int(s) for s in SB[i, :, j]]
            D[i, j] = block_scaled_dot(
                atype, btype, form["ctype"], form["dtype"], row, [int(y) for y in G[i, :, j]], int(C1[i, 0, j]), stype=stype, sa=sa, sb=sb, element_bits=bits
            )
    return per_thread(_pack(ld, D), ld.register_bits)


def _pack(ld, D: np.ndarray) -> np.ndarray:
    """D's per-element results packed into the lanes' registers ``[32, registers]`` (element 0 in
    the low bits, as :func:`ptxspec.semantics.mma.mma_fragments` packs them)."""
    from ptxspec.semantics.results import pack_lanes

    rows, cols, _ = ld._index
    out = np.empty((WARP, ld.registers), dtype=object)
    for lane in range(WARP):
        for r in range(ld.registers):
            elements = [D[rows[lane, r, i], cols[lane, r, i]] for i in range(ld.per_register)]
            out[lane, r] = pack_lanes(list(reversed(elements)), ld.element_bits)
    return out
