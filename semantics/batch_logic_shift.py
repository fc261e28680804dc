"""Batched paths of §9.7.8 logic and shift: and, or, xor, not, cnot, lop3, lop3.BoolOp, shf, shl,
shr -- the twins of :mod:`ptxspec.semantics.logic_shift`, every form of every family.

"The logic and shift instructions are fundamentally untyped, performing bit-wise operations on
operands of any type, provided the operands are of the same size" (§9.7.8). Each path works on
unsigned numpy arrays of the register's width (uint8 holding 0 or 1 for a ``.pred``), where the
bitwise operators act on every bit independently and a shift drops the bits it moves past the
dtype's width: that is the scalar function's ``& mask`` of the type's width, so every path is
exact on every input and none leaves a vector undecided.

One trap is avoided everywhere: a numpy shift by the dtype's width or more is C's undefined
shift, so a shift amount is clamped below the width first and the "shifted out entirely" case is
selected separately (:func:`_shift_left`, :func:`_shift_right`).
"""

from __future__ import annotations

import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics.batch import BatchResult, FastPath, _dtype, batched
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import INTEGER_TYPES, register_bits


def _bits(form: Form) -> tuple[int, np.dtype]:
    """The instruction type's width (1 for ``.pred``) and the unsigned dtype of its register."""
    width = register_bits(form["type"])
    return width, _dtype(width)


def _result(bits: np.ndarray, width: int) -> BatchResult:
    """An integer destination of one element: fixed bits, no open set."""
    return BatchResult(bits, None, None, 1, width)


def _ones(dtype: np.dtype, width: int) -> np.generic:
    """All ones in ``width`` bits, as a scalar of ``dtype`` (the scalar ``_mask``)."""
    return dtype.type((1 << width) - 1)


# ---------------------------------------------------------------------------------------------
# §9.7.8.1-5 and, or, xor, not, cnot
# ---------------------------------------------------------------------------------------------

#: The bitwise operation of each two-source family (``d = a & b;`` ``d = a | b;`` ``d = a ^ b;``).
_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@batched("and", "or", "xor")
def _bitwise(form: Form) -> FastPath:
    """§9.7.8.1-3 ``{and,or,xor}.{pred,b16,b32,b64} d, a, b``: numpy's bitwise and, or and xor on
    unsigned arrays are the operations on each bit, exact on every input; the result keeps the
    type's width (a ``.pred`` stays 0 or 1, as both sources are)."""
    op = _BITWISE[form.family.key]
    width, dtype = _bits(form)
    ones = _ones(dtype, width)

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(op(a, b) & ones, width)

    return fast


@batched("not")
def _not(form: Form) -> FastPath:
    """§9.7.8.4 ``not.{pred,b16,b32,b64} d, a``: ``d = ~a;`` -- numpy's ``~`` inverts every bit of
    the dtype; masking to the type's width keeps a ``.pred`` (one bit in a uint8) at 0 or 1."""
    width, dtype = _bits(form)
    ones = _ones(dtype, width)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(~a & ones, width)

    return fast


@batched("cnot")
def _cnot(form: Form) -> FastPath:
    """§9.7.8.5 ``cnot.{b16,b32,b64} d, a``: ``d = (a==0) ? 1 : 0;`` -- the boolean comparison,
    cast to the register dtype, is exactly 1 or 0."""
    width, dtype = _bits(form)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result((a == 0).astype(dtype), width)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.8.6 lop3, lop3.BoolOp
# ---------------------------------------------------------------------------------------------

_U32_ONES = np.uint32(0xFFFFFFFF)


def lop3_function(a: np.ndarray, b: np.ndarray, c: np.ndarray, imm_lut: np.ndarray) -> np.ndarray:
    """Batched :func:`~ptxspec.semantics.logic_shift.lop3_function`: ``F(a, b, c)`` for the
    function whose table is ``immLut`` (§9.7.8.6), each vector with its own table.

    Bit i of d is immLut's bit at index ``4*a_i + 2*b_i + c_i``. Written as the sum of minterms:
    for each index k in 0..7, the word whose bit i is set exactly where ``(a_i, b_i, c_i)`` spells
    k is ``(a or ~a) & (b or ~b) & (c or ~c)`` (the literal chosen by bit 2, 1, 0 of k); these 8
    words partition the 32 bit positions, and d is the OR of those whose k is set in immLut (bit
    k of immLut, spread to all ones or zero by multiplying by 0xFFFFFFFF). Pure bitwise uint32
    arithmetic: exact.
    """
    literals = ((~a, a), (~b, b), (~c, c))
    table = imm_lut.astype(np.uint32)
    d = np.zeros(len(a), dtype=np.uint32)
    for k in range(8):
        minterm = literals[0][k >> 2 & 1] & literals[1][k >> 1 & 1] & literals[2][k & 1]
        chosen = ((table >> np.uint32(k)) & np.uint32(1)) * _U32_ONES
        d |= minterm & chosen
    return d


@batched("lop3")
def _lop3(form: Form) -> FastPath:
    """§9.7.8.6 ``lop3.b32 d, a, b, c, immLut``: ``d = F(a, b, c)`` (:func:`lop3_function`)."""

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, imm_lut: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(lop3_function(a, b, c, imm_lut), 32)

    return fast


@batched("lop3.boolop")
def _lop3_boolop(form: Form) -> FastPath:
    """§9.7.8.6 ``lop3.BoolOp.b32 d|p, a, b, c, immLut, q``: d as lop3, and ``p = (d != 0) BoolOp
    q;`` -- the boolean ``d != 0`` as a uint8 0/1, or-ed or and-ed with the 0/1 predicate q."""
    combine = np.bitwise_or if form["boolop"] == "or" else np.bitwise_and

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, imm_lut: np.ndarray, q: np.ndarray, *, profile: Profile) -> tuple[BatchResult, BatchResult]:
        d = lop3_function(a, b, c, imm_lut)
        p = combine((d != 0).astype(np.uint8), q)
        return _result(d, 32), _result(p, 1)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.8.7-9 shf, shl, shr
# ---------------------------------------------------------------------------------------------


def _shift_left(a: np.ndarray, n: np.ndarray, width: int) -> np.ndarray:
    """``(a << n) & mask`` for shift amounts ``n`` in 0..width (uint32): numpy's ``<<`` on the
    register dtype drops the bits moved past ``width``; ``n == width`` (all moved out) gives 0,
    selected apart because a C shift by the full width is undefined."""
    dtype = a.dtype
    moved = a << np.minimum(n, width - 1).astype(dtype)
    return np.where(n < width, moved, dtype.type(0))


def _shift_right(a: np.ndarray, n: np.ndarray, width: int, *, signed: bool) -> np.ndarray:
    """``a >> n`` for shift amounts ``n`` in 0..width, filling with zeros, or (``signed``) with
    copies of the sign bit. The signed shift is numpy's arithmetic ``>>`` on the same bits viewed
    as two's-complement integers; there a shift by ``width`` (every bit the sign) equals one by
    ``width - 1``, so the amount is clamped to ``width - 1``."""
    dtype = a.dtype
    if signed:
        shifted = a.view(_signed(dtype)) >> np.minimum(n, width - 1).astype(_signed(dtype))
        return shifted.view(dtype)
    moved = a >> np.minimum(n, width - 1).astype(dtype)
    return np.where(n < width, moved, dtype.type(0))


def _signed(dtype: np.dtype) -> np.dtype:
    """The signed dtype of the same size (to read bit patterns as two's complement)."""
    return np.dtype(f"i{dtype.itemsize}")


@batched("shl")
def _shl(form: Form) -> FastPath:
    """§9.7.8.8 ``shl.{b16,b32,b64} d, a, b``: ``d = a << b;`` "Shift amounts greater than the
    register width N are clamped to N" (:func:`_shift_left`; b is the unsigned 32-bit amount)."""
    width, _ = _bits(form)

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(_shift_left(a, np.minimum(b, np.uint32(width)), width), width)

    return fast


@batched("shr")
def _shr(form: Form) -> FastPath:
    """§9.7.8.9 ``shr.type d, a, b``: ``d = a >> b;`` "Signed shifts fill with the sign bit,
    unsigned and untyped shifts fill with 0"; amounts above the width N are clamped to N
    (:func:`_shift_right`)."""
    width, _ = _bits(form)
    signed = INTEGER_TYPES[form["type"]].signed

    def fast(a: np.ndarray, b: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(_shift_right(a, np.minimum(b, np.uint32(width)), width, signed=signed), width)

    return fast


@batched("shf")
def _shf(form: Form) -> FastPath:
    """§9.7.8.7 ``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c``: the 64-bit ``[b, a]`` shifted by
    ``n = (.mode == .clamp) ? min(c, 32) : c & 0x1f;`` -- shf.l keeps its 32 most significant bits,
    shf.r its 32 least significant ones (the scalar :func:`~ptxspec.semantics.logic_shift.shf`).

    On uint64 the concatenation is exact, n <= 32 is a defined shift, and ``<<`` drops only bits
    above 63, which shf.l's ``>> 32`` then leaves out anyway (d is bits 63:32 of the unbounded
    shift); casting to uint32 keeps the low 32 bits."""
    clamp = form["mode"] == "clamp"
    left = form["dir"] == "l"

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        n = (np.minimum(c, np.uint32(32)) if clamp else c & np.uint32(0x1F)).astype(np.uint64)
        source = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
        shifted = (source << n) >> np.uint64(32) if left else source >> n
        return _result(shifted.astype(np.uint32), 32)

    return fast
