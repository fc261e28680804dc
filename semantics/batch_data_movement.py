"""Batched paths of the register forms of §9.7.9 data movement: mov (§9.7.9.3), its vector pack
and unpack forms (§9.7.9.4) and prmt (§9.7.9.7) -- the twins of the functions of
:mod:`ptxspec.semantics.data_movement` (cvt and cvt.pack are :mod:`ptxspec.semantics.batch_cvt`'s).

Each moves bit patterns without reading them as numbers: shifts, masks and ORs on unsigned numpy
arrays, which place and extract bits exactly (a shift never reaches the dtype's width). A
``.b128`` register has no numpy integer dtype; it travels as an object array of Python ints
(:func:`ptxspec.semantics.batch._dtype`), on which the same operators are Python's unbounded
integer ones, equally exact. No path leaves a vector undecided.
"""

from __future__ import annotations

import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics.batch import BatchResult, FastPath, _dtype, batched
from ptxspec.semantics.data_movement import PRMT_TABLE
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import register_bits


def _result(bits: np.ndarray, width: int) -> BatchResult:
    """An integer destination of one element: fixed bits, no open set."""
    return BatchResult(bits, None, None, 1, width)


def _scalar(dtype: np.dtype, value: int):
    """``value`` as an operand of arrays of ``dtype`` (a Python int for the object dtype)."""
    return value if dtype == object else dtype.type(value)


# ---------------------------------------------------------------------------------------------
# §9.7.9.3 mov d, a
# ---------------------------------------------------------------------------------------------


@batched("mov")
def _mov(form: Form) -> FastPath:
    """§9.7.9.3 ``mov.type d, a``: ``d = a;`` -- every type's bit pattern unchanged (a NaN keeps
    its payload, a ``.pred`` its bit). A copy, so that the result does not alias the sources."""
    width = register_bits(form["type"])

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        return _result(a.copy(), width)

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.9.4 mov with vector operands: pack and unpack
# ---------------------------------------------------------------------------------------------


def pack(elements: tuple[np.ndarray, ...], width: int) -> np.ndarray:
    """Batched :func:`~ptxspec.semantics.data_movement.pack`: ``d = a.x | (a.y << n) | (a.z << 2n)
    | (a.w << 3n)`` with n = width / count -- the first element the least significant. Each
    element (n bits) is widened to the destination dtype before it is shifted, so the shifted
    fields lie inside the width and do not overlap: the ORs place them exactly."""
    dtype = _dtype(width)
    n = width // len(elements)
    d = elements[0].astype(dtype)
    for i, element in enumerate(elements[1:], start=1):
        d = d | (element.astype(dtype) << _scalar(dtype, i * n))
    return d


def unpack(a: np.ndarray, width: int, count: int) -> tuple[np.ndarray, ...]:
    """Batched :func:`~ptxspec.semantics.data_movement.unpack`: ``{d.x, d.y, ...} = {a[0..n-1],
    a[n..2n-1], ...}`` -- field i is ``(a >> i*n) & (2^n - 1)``, which fits the element dtype it
    is cast to."""
    n = width // count
    mask = _scalar(a.dtype, (1 << n) - 1)
    element = _dtype(n)
    return tuple(((a >> _scalar(a.dtype, i * n)) & mask).astype(element) for i in range(count))


@batched("mov.pack.x2", "mov.pack.x4")
def _mov_pack(form: Form) -> FastPath:
    """§9.7.9.4 ``mov.type d, {a.x, a.y}`` and ``mov.type d, {a.x, a.y, a.z, a.w}``: "Write scalar
    register d with the packed value of vector register a" (:func:`pack`)."""
    width = register_bits(form["type"])

    def fast(*elements: np.ndarray, profile: Profile) -> BatchResult:
        return _result(pack(elements, width), width)

    return fast


@batched("mov.unpack.x2", "mov.unpack.x4")
def _mov_unpack(form: Form) -> FastPath:
    """§9.7.9.4 ``mov.type {d.x, d.y}, a`` and ``mov.type {d.x, d.y, d.z, d.w}, a``: "write vector
    register d with the unpacked values from scalar register a" (:func:`unpack`), one destination
    per element in the vector's order."""
    width = register_bits(form["type"])
    count = len(form.destinations)

    def fast(a: np.ndarray, *, profile: Profile) -> tuple[BatchResult, ...]:
        return tuple(_result(x, width // count) for x in unpack(a, width, count))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.9.7 prmt
# ---------------------------------------------------------------------------------------------

_U64 = np.uint64


def _byte(tmp64: np.ndarray, source: np.ndarray) -> np.ndarray:
    """Byte ``source`` (0..7, an array) of the 64-bit ``{b, a}``: a shift by at most 56 bits."""
    return (tmp64 >> (source.astype(_U64) << _U64(3))) & _U64(0xFF)


def read_byte(mode: str | None, ctl: np.ndarray, tmp64: np.ndarray, position: int) -> np.ndarray:
    """Batched :func:`~ptxspec.semantics.data_movement.read_byte` for destination byte
    ``position``: the generic form reads byte ``ctl & 7`` and, where ``ctl``'s msb is set,
    replicates that byte's sign over 8 bits (``(byte >> 7) * 0xFF``: 0xFF or 0x00); a mode reads the
    byte its table (the scalar :data:`PRMT_TABLE`) names for the row ``ctl`` in that position."""
    if mode is None:
        byte = _byte(tmp64, ctl & _U64(0b111))
        sign = (byte >> _U64(7)) * _U64(0xFF)
        return np.where((ctl & _U64(0b1000)) != 0, sign, byte)
    column = np.array([row[3 - position] for row in PRMT_TABLE[mode]], dtype=_U64)
    return _byte(tmp64, column[ctl])


@batched("prmt")
def _prmt(form: Form) -> FastPath:
    """§9.7.9.7 ``prmt.b32{.mode} d, a, b, c``: "Pick four arbitrary bytes from two 32-bit
    registers, and reassemble them into a 32-bit destination register" -- ``tmp64 = (b<<32) | a``;
    without a mode ``ctl[i] = (c >> 4i) & 0xf``, with one ``ctl[i] = c & 0x3``; d's byte i is
    :func:`read_byte` of ``ctl[i]``. uint64 shifts by multiples of 8 below 64 and byte masks are
    exact; each byte is ORed into its own 8 bits of d."""
    mode = form.get("mode")

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        tmp64 = (b.astype(_U64) << _U64(32)) | a.astype(_U64)
        c64 = c.astype(_U64)
        d = np.zeros(len(a), dtype=_U64)
        for i in range(4):
            ctl = (c64 >> _U64(4 * i)) & _U64(0xF) if mode is None else c64 & _U64(0x3)
            d |= read_byte(mode, ctl, tmp64, i) << _U64(8 * i)
        return _result(d.astype(np.uint32), 32)

    return fast
