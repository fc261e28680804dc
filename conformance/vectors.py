"""Golden vectors: ``ptxspec vectors INSTR... --count N --seed S``.

For each instruction form this writes ``N`` input vectors with the results the semantics gives
them (:func:`ptxspec.semantics.instructions.evaluate`, or its batched transcription in
:mod:`ptxspec.semantics.batch` where one exists; the two give the same bytes, which
``tests/test_vectors.py`` checks). It adds no meaning of its own: the values are chosen here, the
results come from ``semantics/``.

The vectors come in a fixed order:

1. the edge values of every source operand's type -- for a floating-point format (§5.2.1,
   §5.2.3) +-0, the smallest and largest subnormal, the smallest normal, the largest finite value,
   +-infinity, quiet and signalling NaNs, 1 and its neighbours, and the halfway cases of every
   format the form rounds into; for an integer type 0, 1, -1, the extremes, the sign boundary and
   the half-width carry boundaries; for a predicate (and the carry flag CC.CF) 0 and 1 -- first
   each alone (the other operands at a plain value), then crossed pairwise, then triple-wise,
   until ``N`` vectors are reached;
2. seeded random vectors: a floating-point operand draws its sign, exponent field and mantissa
   separately (every exponent, the subnormal and special encodings included, is equally likely,
   and the mantissa is often all zeros, all ones or a single bit, so that ties and NaN payloads
   occur), an integer operand draws a random bit length, sign and pattern.

Same arguments, same bytes, on any machine: the random generator is numpy's PCG64 seeded with
``(seed, crc32(form text))``; nothing depends on Python's ``hash()``, the platform or the clock.

JSON Lines schema (one vector per line)::

    {"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"],
     "outputs": ["0x40000000"], "profile": "spec"}

``inputs`` and ``outputs`` are hex bit patterns of the register width, in the form's operand
order (the carry flag CC.CF after the register sources and after the destination). Where the
semantics returns an allowed set (an unspecified NaN, an ``.approx`` error bound under
``--profile spec``), the vector has an ``"allowed"`` list with, per destination, the set's JSON
form (:meth:`ptxspec.semantics.results.Allowed.to_json`, as ``ptxspec eval --json`` prints it) or
``null`` for a fixed result, and ``outputs`` holds the set's canonical member where there is one
(the canonical NaN, :func:`~ptxspec.semantics.numerics.canonical_nan`, for "any NaN", lane by lane
in a packed register); else the set's JSON form itself.

npz format: for instruction ``k`` (in command-line order) the arrays ``{k}.in{i}`` and
``{k}.out{j}`` (uint64 bit patterns, the ``outputs`` above) and ``{k}.open{j}`` (bool: the result
is a set; the JSON Lines file describes it), and ``instr`` (the form texts). The zip members carry
a fixed timestamp, so that the file, too, is the same bytes on every run.

Warp-level forms (shfl.sync, vote.sync, match.sync, redux.sync, activemask, elect.sync) are
written one vector per warp execution: each per-lane operand is a list of 32 lane hex strings
(lane 0 first), the membermask operand one hex string (``--mask``, default 0xffffffff), each
destination a list of 32 lanes (a lane whose result is a set -- "undefined" -- holds the set's JSON
form), ``"allowed"`` the destination's warp set where a lane is open, and ``"active"`` the
executing lanes where ``--active`` is not the full warp. They go through the readable semantics
only, and only as JSON Lines.

``--format testfloat`` writes one form's vectors (the same inputs) in the line layout of Berkeley
TestFloat's ``testfloat_gen`` (:mod:`ptxspec.conformance.testfloat`; one form per file, IEEE 754
operations only); ``ptxspec check-vectors --testfloat FORM`` reads them back.

The output streams: inputs, results and text are made :data:`CHUNK` vectors at a time (warp
forms :data:`WARP_CHUNK`, matrix forms their own chunk) and written as they are made, so memory does
not grow with ``--count`` (at most :data:`MAX_COUNT`). The bytes are the same whatever the chunk
size: :func:`chunked_draws` gives every random draw of a chunk the values a single draw of all the
vectors gives them. While ``ptxspec vectors`` computes, it draws a progress bar on standard error
when standard error is a terminal (check-vectors' own; nothing is written there otherwise). The
schema with examples is docs/vectors.rst.
"""

from __future__ import annotations

import copy
import hashlib
import io
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, cast

import attrs
import click
import numpy as np

from ptxspec.conformance import campaign_engine
from ptxspec.profiles import NAMES as PROFILE_NAMES
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, IntegerType, NanEncoding, PackedType, register_bits

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from ptxspec.semantics.batch import BatchResult, Intervals, Members, SharedSet

#: The most edge vectors crossed before the random ones, whatever ``--count`` is.
EDGE_CAP = 1 << 16

#: How often (in vectors) the per-vector paths report progress.
PROGRESS_STEP = 1024

#: What a lane of a batched destination holds (:meth:`Destination.lane_kinds`): fixed bits, any
#: NaN of its format, the destination's shared set; in a packed register also an interval (its
#: ``nan`` flag and whether it is flushed: INTERVAL + nan + 2 flushed) or a set of c members
#: (MEMBERS + c - 1, c <= :data:`MOST_MEMBERS`). Four bits a lane in :meth:`Destination.open_pattern`.
FIXED, OPEN_NAN, SHARED_SET, INTERVAL, MEMBERS = 0, 1, 2, 3, 7
MOST_MEMBERS = 8

#: Warp-level forms: the lanes of a warp, and the default membermask and executing lanes.
WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# What an operand holds
# ---------------------------------------------------------------------------------------------


def operand_kind(form, operand) -> tuple[str, FloatFormat | PackedType | IntegerType | None]:
    """How to read ``operand`` of ``form``: ``("float", fmt)``, ``("packed", PackedType)``,
    ``("int", IntegerType)`` or ``("pred", None)``.

    A bit-size register (``.b32``) that holds a packed or floating-point value of the form's type
    qualifier (``add.rn.f16x2`` declares a, b, d as .b32) is read as that type."""
    name = operand.type
    if name == "pred":
        return "pred", None
    if name in PACKED_TYPES:
        return "packed", PACKED_TYPES[name]
    if name in FORMATS:
        return "float", FORMATS[name]
    width = register_bits(name)
    for _, token in form.choices:
        if token in PACKED_TYPES and PACKED_TYPES[token].register_bits == width and name.startswith("b"):
            return "packed", PACKED_TYPES[token]
        if token in FORMATS and register_bits(token) == width and name.startswith("b") and FORMATS[token].width == width:
            return "float", FORMATS[token]
    return "int", INTEGER_TYPES[name]


def rounding_targets(form) -> list[FloatFormat]:
    """The floating-point formats the form's results are rounded into (its type qualifiers)."""
    out = []
    for _, token in form.choices:
        fmt = FORMATS.get(token) or (FORMATS.get(PACKED_TYPES[token].element) if token in PACKED_TYPES else None)
        if fmt is not None and fmt not in out:
            out.append(fmt)
    return out


# ---------------------------------------------------------------------------------------------
# Edge values (§5.2.1, §5.2.3, IEEE 754 §3.4)
# ---------------------------------------------------------------------------------------------


def _pack(fmt: FloatFormat, sign: int, exponent: int, mantissa: int) -> int:
    from ptxspec.semantics.numerics import pack

    return pack(fmt, sign if fmt.signed else 0, exponent, mantissa)


def _exact(fmt: FloatFormat, value: Fraction) -> int | None:
    """The bits of ``value`` in ``fmt`` if it is exactly representable there, else None."""
    from ptxspec.semantics.numerics import Exact, decode, round_exact, to_fraction

    sign = int(value < 0)
    magnitude = abs(value)
    if sign and not fmt.signed:
        return None
    num, den = magnitude.numerator, magnitude.denominator
    if den & (den - 1):
        return None
    exponent = -(den.bit_length() - 1)
    bits = round_exact(Exact(sign, num, exponent), fmt)
    decoded = decode(fmt, bits)
    if not isinstance(decoded, Exact) or to_fraction(decoded) != value:
        return None
    return bits


def float_edges(fmt: FloatFormat, targets: Sequence[FloatFormat] = ()) -> list[int]:
    """The edge values of ``fmt``, both signs: zeros, subnormals, normals' ends, 1 and its
    neighbours, infinities, NaNs (quiet, signalling, with a payload), and for every format in
    ``targets`` the values halfway between two of its neighbours (ties), just around them, and at
    its overflow and underflow thresholds, where ``fmt`` can hold them."""
    m = fmt.mantissa_bits
    top = (1 << m) - 1
    emax_field, (max_e, max_m) = fmt.exponent_field_max, fmt.max_finite_fields
    magnitudes: list[int] = [_pack(fmt, 0, 0, 0)]
    if fmt.has_subnormals and m:
        magnitudes += [_pack(fmt, 0, 0, 1), _pack(fmt, 0, 0, top)]
    magnitudes += [_pack(fmt, 0, 1, 0), _pack(fmt, 0, max_e, max_m)]
    one = _exact(fmt, Fraction(1))
    if one is not None:
        magnitudes += [one, one - (1 << fmt.shift), one + (1 << fmt.shift), _exact(fmt, Fraction(2)) or one, _exact(fmt, Fraction(3, 2)) or one]
    if fmt.has_infinity:
        magnitudes.append(_pack(fmt, 0, emax_field, 0))
    if fmt.nan is NanEncoding.IEEE and m:
        quiet = 1 << (m - 1)
        magnitudes += [_pack(fmt, 0, emax_field, quiet), _pack(fmt, 0, emax_field, top)]
        if m > 1:
            magnitudes += [_pack(fmt, 0, emax_field, 1), _pack(fmt, 0, emax_field, quiet | 1)]
    elif fmt.nan is NanEncoding.ALL_ONES:
        magnitudes.append(_pack(fmt, 0, emax_field, top))
    for target in targets:
        magnitudes += [b for b in (_exact(fmt, v) for v in _rounding_boundaries(target, fmt)) if b is not None]
    out: list[int] = []
    for magnitude in magnitudes:
        for sign in (0, 1) if fmt.signed else (0,):
            bits = magnitude | (sign << (fmt.exponent_bits + m) << fmt.shift)
            if bits not in out:
                out.append(bits)
    return out


def _rounding_boundaries(target: FloatFormat, source: FloatFormat) -> list[Fraction]:
    """Values where rounding into ``target`` changes its decision: ties next to 1 (to even down and
    up), half and 3/2 of the smallest subnormal (underflow), the smallest normal, the largest
    finite value and the tie above it (the overflow threshold), each with its neighbours one
    ``source`` ulp away."""
    from ptxspec.semantics.numerics import Exact, decode, max_finite, to_fraction

    p, q = target.precision, source.precision
    ulp1 = Fraction(1, 1 << (p - 1))
    max_value = to_fraction(cast(Exact, decode(target, max_finite(target))))
    tiny = Fraction(2) ** (target.min_normal_exponent - p + 1)
    centres = [
        1 + ulp1 / 2,
        1 + 3 * ulp1 / 2,
        tiny / 2,
        3 * tiny / 2,
        Fraction(2) ** target.min_normal_exponent,
        max_value,
        max_value + Fraction(2) ** (target.max_exponent - p),
    ]
    out = []
    for c in centres:
        step = Fraction(2) ** (_floor_log2(c) - q + 1)
        out += [c, c - step, c + step]
    return out


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def integer_edges(kind) -> list[int]:
    """0, 1, 2, -1, the extremes and their neighbours, the sign boundary, and the half-width
    boundaries where a carry crosses into the upper half (as register bit patterns)."""
    n = kind.bits
    mask = (1 << n) - 1
    half = n // 2
    values = [
        0,
        1,
        2,
        -1,
        -2,
        kind.max,
        kind.max - 1,
        kind.min,
        kind.min + 1,
        1 << (n - 1),
        (1 << (n - 1)) - 1,
        (1 << half) - 1,
        1 << half,
        0x55555555_55555555_55555555_55555555,
        0xAAAAAAAA_AAAAAAAA_AAAAAAAA_AAAAAAAA,
    ]
    out: list[int] = []
    for v in values:
        bits = v & mask
        if bits not in out:
            out.append(bits)
    return out


def packed_edges(packed, targets: Sequence[FloatFormat]) -> list[int]:
    """Each element edge value in every lane, the other lanes holding a plain value (1.0 or 1),
    then the same value in all lanes."""
    element = FORMATS.get(packed.element)
    lane_values = float_edges(element, targets) if element else integer_edges(INTEGER_TYPES[packed.element])
    plain = (_exact(element, Fraction(1)) if element else 1) or 0
    out: list[int] = []
    for v in lane_values:
        rows = [[v] * packed.count] + [[v if k == lane else plain for k in range(packed.count)] for lane in range(packed.count)]
        for lanes in rows:
            bits = 0
            for lane in lanes:
                bits = (bits << packed.lane_bits) | lane
            if bits not in out:
                out.append(bits)
    return out


def operand_edges(form, operand) -> list[int]:
    kind, what = operand_kind(form, operand)
    if kind == "pred":
        return [0, 1]
    if kind == "float":
        return float_edges(cast(FloatFormat, what), rounding_targets(form))
    if kind == "packed":
        return packed_edges(what, rounding_targets(form))
    return integer_edges(what)


def edge_vectors(form, cap: int) -> list[tuple[int, ...]]:
    """The edge values crossed: each alone (others at their first plain edge), then every pair of
    operand positions, then every triple, in order, deduplicated, at most ``cap`` vectors."""
    return [tuple(row) for row in edge_matrix(form, cap).tolist()]


def edge_matrix(form, cap: int) -> np.ndarray:
    """:func:`edge_vectors` as a ``(vectors, operands)`` uint64 array (built with numpy: a
    three-operand form crosses tens of thousands of edge vectors)."""
    edges = [np.array(operand_edges(form, o), dtype=np.uint64) for o in form.sources]
    base = np.array([_plain(form, o, e.tolist()) for o, e in zip(form.sources, edges)], dtype=np.uint64)
    k = len(edges)
    unique = np.zeros((0, k), np.uint64)
    blocks: list[np.ndarray] = []
    for size in range(1, min(k, 3) + 1):
        for positions in combinations(range(k), size):
            grids = np.meshgrid(*(edges[i] for i in positions), indexing="ij")
            block = np.repeat(base[None, :], grids[0].size, axis=0)
            for i, grid in zip(positions, grids):
                block[:, i] = grid.ravel()
            blocks.append(block)
        # Keep the first occurrence of each vector, in order; stop once there are enough.
        rows = np.concatenate(blocks)
        unique = rows[_first_occurrences(rows)]
        if len(unique) >= cap:
            break
    return unique[:cap]


def _first_occurrences(rows: np.ndarray) -> np.ndarray:
    """The indices of the first occurrence of each distinct row, in order (what
    ``np.unique(rows, axis=0, return_index=True)`` gives, sorted): a stable lexicographic sort
    puts each row's first occurrence first among its equals."""
    if not len(rows):
        return np.zeros(0, np.intp)
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    new = np.ones(len(rows), bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    return np.sort(order[new])


def _plain(form, operand, edges: list[int]) -> int:
    """A value that leaves the other operands' edge cases visible: 1.0 (or 1) where the type has
    it, else the first edge value."""
    kind, what = operand_kind(form, operand)
    if kind == "float":
        return _exact(cast(FloatFormat, what), Fraction(1)) or edges[0]
    if kind == "packed":
        packed = cast(PackedType, what)
        element = FORMATS.get(packed.element)
        one = (_exact(element, Fraction(1)) if element else 1) or 0
        bits = 0
        for _ in range(packed.count):
            bits = (bits << packed.lane_bits) | one
        return bits
    if kind == "pred":
        return 0
    return 1


# ---------------------------------------------------------------------------------------------
# Random values
# ---------------------------------------------------------------------------------------------


def _random_float(rng: np.random.Generator, fmt: FloatFormat, n: int) -> np.ndarray:
    """Sign, exponent field and mantissa drawn apart: every exponent field (0 and all-ones too)
    equally likely; the mantissa all zeros, all ones, one bit, or uniform."""
    m = fmt.mantissa_bits
    sign = rng.integers(0, 2, n, dtype=np.uint64) if fmt.signed else np.zeros(n, np.uint64)
    exponent = rng.integers(0, fmt.exponent_field_max + 1, n, dtype=np.uint64)
    # 1/4 near 1 so that operands of one vector meet (additions cancel, products stay in range).
    near = rng.integers(max(0, fmt.bias - fmt.precision - 1), min(fmt.exponent_field_max, fmt.bias + fmt.precision + 1) + 1, n, dtype=np.uint64)
    exponent = np.where(rng.random(n) < 0.25, near, exponent)
    uniform = rng.integers(0, 1 << m, n, dtype=np.uint64) if m else np.zeros(n, np.uint64)
    one_bit = np.uint64(1) << rng.integers(0, max(m, 1), n, dtype=np.uint64) if m else np.zeros(n, np.uint64)
    choice = rng.integers(0, 8, n)
    mantissa = np.select([choice == 0, choice == 1, choice == 2], [np.uint64(0), np.uint64((1 << m) - 1), one_bit & np.uint64((1 << m) - 1)], uniform)
    body = (exponent << np.uint64(m)) | mantissa
    if fmt.signed:
        body |= sign << np.uint64(fmt.exponent_bits + m)
    return body << np.uint64(fmt.shift)


def _random_int(rng: np.random.Generator, width: int, n: int) -> np.ndarray:
    """A random bit length (so every magnitude occurs), negated half the time, plus 1/4 uniform
    bit patterns. Widths up to 64 bits."""
    length = rng.integers(0, width + 1, n, dtype=np.uint64)
    raw = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    mask_all = np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    short = np.where(length >= np.uint64(64), raw, raw & ((np.uint64(1) << np.minimum(length, np.uint64(63))) - np.uint64(1)))
    negated = (np.uint64(0) - short) & mask_all
    choice = rng.integers(0, 4, n)
    return np.select([choice == 0, choice == 1], [raw & mask_all, negated], short & mask_all)


def random_operand(rng: np.random.Generator, form, operand, n: int) -> np.ndarray:
    kind, what = operand_kind(form, operand)
    width = register_bits(operand.type)
    if width > 64:
        raise OperandError(f"{form.text}: operand {operand.name} is {width} bits; vectors handle registers of at most 64 bits", where=form.text)
    if kind == "pred":
        return rng.integers(0, 2, n, dtype=np.uint64)
    if kind == "float":
        return _random_float(rng, cast(FloatFormat, what), n)
    if kind == "packed":
        packed = cast(PackedType, what)
        element = FORMATS.get(packed.element)
        out = np.zeros(n, np.uint64)
        for _ in range(packed.count):
            lane = _random_float(rng, element, n) if element else _random_int(rng, packed.lane_bits, n)
            out = (out << np.uint64(packed.lane_bits)) | lane
        return out
    return _random_int(rng, width, n)


def rng_for(form_text: str, seed: int) -> np.random.Generator:
    """The generator of one form: PCG64 seeded with the seed and a CRC-32 of the form text
    (stable across machines and Python runs, unlike ``hash()``)."""
    return np.random.default_rng([seed, zlib.crc32(form_text.encode("utf-8"))])


# ---------------------------------------------------------------------------------------------
# Random values a chunk at a time, the same as drawn at once
# ---------------------------------------------------------------------------------------------

#: Values drawn at a time while a stream is moved past the values of the chunks before.
_SKIP = 1 << 22


class _Recorder:
    """Stands in for a Generator in a draw function: records each call (its method, arguments
    and size) and returns the lowest value it could draw, so that the function runs through."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, int]] = []

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        self.calls.append(("integers", {"low": low, "high": high, "dtype": dtype, "endpoint": endpoint}, _values(size)))
        return np.full(size, low if high is not None else 0, dtype)

    def random(self, size=None, dtype=np.float64):
        self.calls.append(("random", {"dtype": dtype}, _values(size)))
        return np.zeros(size, dtype)


def _values(size) -> int:
    if size is None:
        raise TypeError("a draw function for chunked_draws draws arrays (give every call a size)")
    return int(np.prod(size, dtype=np.int64))


class _Streams:
    """Stands in for a Generator in a draw function: its k-th call draws from the k-th stream,
    which continues where that call left off in the chunk before."""

    def __init__(self, streams: list[np.random.Generator]) -> None:
        self.streams, self.k = streams, 0

    def _next(self) -> np.random.Generator:
        self.k += 1
        return self.streams[self.k - 1]

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._next().integers(low, high, size, dtype=dtype, endpoint=endpoint)

    def random(self, size=None, dtype=np.float64):
        return self._next().random(size, dtype=dtype)


def chunked_draws(rng: np.random.Generator, draw, total: int, chunk: int, *, linear: bool = False, first: int = 0, stop: int | None = None) -> Iterator:
    """``draw(rng, start, stop)`` for the rows ``[start, stop)`` of ``range(total)``, ``chunk`` rows
    at a time, giving the very values that one ``draw(rng, 0, total)`` gives those rows, in memory
    bounded by a chunk: same seed, same bytes, whatever the chunk size.

    ``draw`` makes its calls to ``rng.integers``/``rng.random`` in the same order for any range,
    each call's values for a range being its values for the whole cut to those rows (numpy fills
    an array in order; a chunk's values are the next ones of the call's stream). So the k-th call
    gets its own stream, started where the one-shot run would start it: after the values of every
    call before it, which are drawn and dropped first (the sizes are recorded by running ``draw``
    chunk by chunk on stand-in values; ``linear``: every call draws a fixed number of values per
    row, read off one row).

    ``first`` and ``stop`` (``linear`` draws only): only the rows ``[first, stop)``, each stream
    moved past the values of the rows before them, so that a shard is the same values as those
    rows of the whole."""
    if first or stop is not None:
        if not linear:
            raise ValueError("chunked_draws: a range of rows needs linear draws")
        yield from _draws_from(rng, draw, total, chunk, first, total if stop is None else stop)
        return
    if total <= chunk:
        if total:
            yield draw(rng, 0, total)
        return
    recorder = _Recorder()
    draw(recorder, 0, 1 if linear else min(chunk, total))
    calls = [(method, kwargs) for method, kwargs, _ in recorder.calls]
    if linear:
        totals = [n * total for _, _, n in recorder.calls]
    else:
        totals = [n for _, _, n in recorder.calls]
        for start in range(chunk, total, chunk):
            recorder.calls = []
            draw(recorder, start, min(start + chunk, total))
            if [(m, k) for m, k, _ in recorder.calls] != calls:  # pragma: no cover - a draw function outside the contract
                raise RuntimeError("chunked_draws: the draw function's calls differ between chunks")
            totals = [t + n for t, (_, _, n) in zip(totals, recorder.calls)]
    streams = []
    for (method, kwargs), n in zip(calls, totals):
        streams.append(copy.deepcopy(rng))
        for skip in range(0, n, _SKIP):
            getattr(rng, method)(**kwargs, size=min(_SKIP, n - skip))
    stand_in = _Streams(streams)
    for start in range(0, total, chunk):
        stand_in.k = 0
        yield draw(stand_in, start, min(start + chunk, total))


def _draws_from(rng: np.random.Generator, draw, total: int, chunk: int, first: int, stop: int) -> Iterator:
    """:func:`chunked_draws` of linear draws of rows ``[first, stop)``: the k-th call's stream starts
    after the values of every call before it (over all ``total`` rows) and of its own first rows."""
    recorder = _Recorder()
    draw(recorder, 0, 1)
    streams = []
    for method, kwargs, per_row in recorder.calls:
        streams.append(copy.deepcopy(rng))
        _skip(streams[-1], method, kwargs, per_row * first)
        _skip(rng, method, kwargs, per_row * total)
    stand_in = _Streams(streams)
    for start in range(first, stop, chunk):
        stand_in.k = 0
        yield draw(stand_in, start, min(start + chunk, stop))


def _skip(rng: np.random.Generator, method: str, kwargs: dict, n: int) -> None:
    """Draw and drop ``n`` values of one call's kind."""
    for done in range(0, n, _SKIP):
        getattr(rng, method)(**kwargs, size=min(_SKIP, n - done))


# ---------------------------------------------------------------------------------------------
# Inputs and outputs
# ---------------------------------------------------------------------------------------------


def _form(instr: str, where: str | None = None):
    from ptxspec.conformance import matrix_vectors
    from ptxspec.semantics.instructions import semantic_of
    from ptxspec.spec.catalogue import parse

    matrix = matrix_vectors.matrix_form(instr, where)  # mma, mma.sp, wgmma: conformance/matrix_vectors.py
    if matrix is not None:
        return matrix
    form = parse(instr, where=where or instr)
    try:
        kind = semantic_of(form).operands  # a form without semantics is reported here, located
    except PtxSpecError as error:
        error.where = error.where or where or instr
        raise
    if kind.state:
        from ptxspec.conformance import tcgen05_vectors

        if tcgen05_vectors.writes_vectors(form):  # tcgen05: states in and out, conformance/tcgen05_vectors.py
            return form
        raise PtxSpecError(
            f"{form.text}: no vectors yet for this instruction of state; use ptxspec.semantics.instructions.execute",
            where=where or instr,
            section=form.family.section,
        )
    for o in (*form.sources, *form.destinations):
        if register_bits(o.type) > 64:
            raise PtxSpecError(
                f"{form.text}: operand {o.name} is .{o.type} ({register_bits(o.type)} bits); vectors handle registers of at most 64 bits", where=where or instr
            )
    return form


def check_count_seed(count: int, seed: int) -> None:
    """``--count`` and ``--seed`` as the generators take them: 0 <= count <= :data:`MAX_COUNT`,
    seed >= 0; else a located error."""
    if count < 0:
        raise OperandError(f"--count must be >= 0, got {count}", where="<command line>, --count")
    if count > MAX_COUNT:
        from ptxspec.conformance.check_vectors import shorten

        raise OperandError(
            f"--count must be at most {MAX_COUNT} (2^32) vectors per form, got {shorten(str(count))}; split a larger run by --seed",
            where="<command line>, --count",
        )
    if seed < 0:
        raise OperandError(f"--seed must be >= 0, got {seed}", where="<command line>, --seed")


#: The most vectors of one form in one run (the output streams, so only time bounds it).
MAX_COUNT = 1 << 32


def input_chunks(form, count: int, seed: int, chunk: int | None = None, rows: tuple[int, int] | None = None) -> Iterator[list[np.ndarray]]:
    """The ``count`` input vectors of ``form``, at most ``chunk`` (default :data:`CHUNK`) at a
    time, as one uint64 array per source operand: the edge values first, then the random ones
    (:func:`chunked_draws`: the same values for any chunk size). ``rows=(first, stop)``: only
    those vectors of the ``count``, the same values (a shard of ``vectors --shard-size``)."""
    check_count_seed(count, seed)
    chunk = chunk or CHUNK
    first, stop = rows if rows is not None else (0, count)
    edges = edge_matrix(form, min(count, EDGE_CAP))
    for start in range(first, min(len(edges), stop), chunk):
        yield [np.ascontiguousarray(edges[start : min(start + chunk, stop), k]) for k in range(len(form.sources))]

    def draw(rng, start: int, end: int) -> list[np.ndarray]:
        return [random_operand(rng, form, operand, end - start) for operand in form.sources]

    if rows is None:
        yield from chunked_draws(rng_for(form.text, seed), draw, count - len(edges), chunk, linear=True)
    elif stop > max(first, len(edges)):
        random_rows = {"first": max(first - len(edges), 0), "stop": stop - len(edges)}
        yield from chunked_draws(rng_for(form.text, seed), draw, count - len(edges), chunk, linear=True, **random_rows)


def inputs(form, count: int, seed: int) -> list[np.ndarray]:
    """The ``count`` input vectors of ``form`` as one uint64 array per source operand
    (:func:`input_chunks` at once)."""
    parts = list(input_chunks(form, count, seed, max(count, 1)))
    return [np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.uint64) for k in range(len(form.sources))]


def representative(result) -> int | None:
    """The canonical member of an allowed set, where results.py defines one: the bits themselves,
    the canonical NaN for "any NaN", lane by lane for a packed register; None otherwise."""
    from ptxspec.semantics.numerics import canonical_nan
    from ptxspec.semantics.results import AnyNaN, Lanes

    if isinstance(result, int):
        return result
    if isinstance(result, AnyNaN):
        return canonical_nan(result.format)
    if isinstance(result, Lanes):
        bits = 0
        for lane in result.lanes:
            r = representative(lane)
            if r is None:
                return None
            bits = (bits << result.lane_bits) | r
        return bits
    return None


def vector_dict(form, sources: Sequence[int], results: Sequence, profile: str) -> dict:
    """One vector as the schema writes it, from ``ptxspec eval --json``'s encoding
    (:func:`ptxspec.conformance.cli.to_json`), with open results split into ``outputs``
    (canonical member) and ``allowed`` (the set)."""
    from ptxspec.conformance.cli import Evaluation, _hex, to_json

    obj = to_json(Evaluation(form, tuple(sources), tuple(results), "<vectors>", form.text), profile)
    if any(not isinstance(r, int) for r in results):
        widths = [register_bits(d.type) for d in form.destinations]
        outputs, allowed = [], []
        for r, w, text in zip(results, widths, obj["outputs"]):
            rep = representative(r)
            outputs.append(text if rep is None else _hex(rep, w))
            allowed.append(None if isinstance(r, int) else r.to_json())
        obj = {"instr": obj["instr"], "inputs": obj["inputs"], "outputs": outputs, "allowed": allowed, "profile": profile}
    return obj


def generate(instr: str, count: int, seed: int, profile: str = "spec", *, mask: int = FULL_MASK, active: int = FULL_MASK) -> Iterator[dict]:
    """The vectors of ``instr``, one dict per vector, by the readable semantics one at a time
    (the reference for the batched path of :func:`jsonl_bytes`). ``mask`` (the membermask
    operand) and ``active`` (the executing lanes) apply to warp-level forms only."""
    from ptxspec.conformance.cli import is_warp_form
    from ptxspec.semantics.instructions import evaluate

    form = _form(instr)
    from ptxspec.conformance import matrix_vectors

    if matrix_vectors.kind_of(form):
        yield from matrix_vectors.generate(form, count, seed, profile)
        return
    from ptxspec.conformance import tcgen05_vectors

    if tcgen05_vectors.writes_vectors(form):
        yield from tcgen05_vectors.generate(form, count, seed, profile)
        return
    if is_warp_form(form):
        yield from _warp_vectors(form, count, seed, profile, mask, active)
        return
    columns = [c.tolist() for c in inputs(form, count, seed)]
    for i in range(count):
        sources = [c[i] for c in columns]
        yield vector_dict(form, sources, evaluate(form, sources, profile), profile)


# ---------------------------------------------------------------------------------------------
# Warp-level forms (§9.7.8): per-lane operands as lists of 32 lane values
# ---------------------------------------------------------------------------------------------


def warp_input_chunks(form, count: int, seed: int, mask: int = FULL_MASK, chunk: int | None = None) -> Iterator[list[list]]:
    """Per source operand, ``count`` values, at most ``chunk`` (default :data:`WARP_CHUNK`) vectors
    at a time: the membermask operand is ``mask`` in every vector; every other operand is 32 lane
    values -- first each edge value in all lanes, then the edge values spread over the lanes (lane
    l holds edge (i + l)), then seeded random lanes (:func:`chunked_draws`)."""
    check_count_seed(count, seed)
    chunk = chunk or WARP_CHUNK
    edge_rows: list[list | None] = []
    for operand in form.sources:
        if operand.name == "membermask":
            edge_rows.append(None)
            continue
        edges = operand_edges(form, operand)
        rows = [(e,) * WARP_SIZE for e in edges]
        rows += [tuple(edges[(i + lane) % len(edges)] for lane in range(WARP_SIZE)) for i in range(len(edges))]
        edge_rows.append(rows[:count])

    def draw(rng, start: int, stop: int) -> list[np.ndarray]:
        out = []
        for operand, rows in zip(form.sources, edge_rows):
            if rows is not None:
                n = max(stop, len(rows)) - max(start, len(rows))
                out.append(random_operand(rng, form, operand, n * WARP_SIZE).reshape(n, WARP_SIZE))
        return out

    for start, randoms in zip(range(0, count, chunk), chunked_draws(rng_for(form.text, seed), draw, count, chunk)):
        stop, lanes = min(start + chunk, count), iter(randoms)
        yield [[mask] * (stop - start) if rows is None else rows[start:stop] + [tuple(r) for r in next(lanes).tolist()] for rows in edge_rows]


def warp_inputs(form, count: int, seed: int, mask: int = FULL_MASK) -> list[list]:
    """:func:`warp_input_chunks` at once."""
    parts = list(warp_input_chunks(form, count, seed, mask, max(count, 1)))
    return [sum((p[k] for p in parts), []) for k in range(len(form.sources))]


#: Warp vectors made at a time (each goes through the readable semantics).
WARP_CHUNK = 1 << 10


def _warp_vectors(form, count: int, seed: int, profile: str, mask: int, active: int, progress=None) -> Iterator[dict]:
    """Warp vectors: inputs as lists of 32 lane hex strings (membermask as one), outputs as lists
    of 32 lanes (the canonical member of a lane's set where there is one, else its JSON form),
    ``allowed`` where a lane's result is a set, ``active`` where not every lane executes."""
    widths = [register_bits(o.type) for o in form.sources]
    out_widths = [register_bits(d.type) for d in form.destinations]
    i = 0
    for columns in warp_input_chunks(form, count, seed, mask):
        for sources in zip(*columns):
            if progress is not None and not i % PROGRESS_STEP:
                progress(form.text, i, count)
            i += 1
            yield _warp_vector(form, list(sources), widths, out_widths, profile, active)


def _warp_vector(form, sources: list, widths: list[int], out_widths: list[int], profile: str, active: int) -> dict:
    """One warp vector's line as a dict (:func:`_warp_vectors`)."""
    from ptxspec.conformance.cli import _hex
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import Allowed

    results = evaluate(form, sources, profile, active=active)
    obj: dict = {"instr": form.text}
    obj["inputs"] = [[_hex(v, w) for v in value] if isinstance(value, tuple) else _hex(value, w) for value, w in zip(sources, widths)]
    outputs: list[str | dict | list[str | dict]] = []
    allowed: list[dict | None] = []
    for result, w in zip(results, out_widths):
        lanes = getattr(result, "lanes", None) if not isinstance(result, int) else None
        if lanes is None:  # one value for the warp
            rep = representative(result)
            outputs.append(_hex(rep, w) if rep is not None else cast(Allowed, result).to_json())
            allowed.append(None if isinstance(result, int) else result.to_json())
            continue
        texts: list[str | dict] = []
        for lane in lanes:
            rep = representative(lane)
            texts.append(_hex(rep, w) if rep is not None else lane.to_json())
        outputs.append(texts)
        allowed.append(None if all(isinstance(lane, int) for lane in lanes) else cast(Allowed, result).to_json())
    obj["outputs"] = outputs
    if any(a is not None for a in allowed):
        obj["allowed"] = allowed
    if active != FULL_MASK:
        obj["active"] = _hex(active, 32)
    obj["profile"] = profile
    return obj


@attrs.frozen(eq=False)
class Destination:
    """The results of one destination operand for every vector, as arrays.

    * ``bits``: uint64, the result bits; where the result is a set, its canonical member
      (:func:`representative`; 0 where it has none);
    * ``any_nan``: None, or the batched semantics' mask of lanes whose result is "any NaN of
      ``format``" (:class:`~ptxspec.semantics.batch.BatchResult`): shape ``(n,)`` for one lane,
      ``(n, lanes)`` for a packed register, lane 0 the most significant;
    * ``sets``: every other result that is a set, by vector index (the per-vector path gives all
      of its sets here);
    * ``shared``: None, or the batched semantics' lanes whose result is one set common to them
      all (:class:`~ptxspec.semantics.batch.SharedSet`, ``fma.oob``'s "+0.0 or the NaN"), written
      in bulk like the "any NaN" lanes (:meth:`lane_kinds`)."""

    bits: np.ndarray
    any_nan: np.ndarray | None
    format: FloatFormat | None
    lanes: int
    lane_bits: int
    sets: dict
    #: The batched result's one-lane intervals and member rows (:class:`~ptxspec.semantics.batch.Intervals`,
    #: :class:`~ptxspec.semantics.batch.Members`), written in bulk (:func:`set_groups`).
    batch: object | None = None
    shared: SharedSet | None = None

    def bulk_sets(self) -> np.ndarray:
        """Per vector, whether its result is a set written in bulk by :func:`set_groups`: a
        one-lane interval or a row of members of the batched result (a packed register's are lane
        kinds, :meth:`lane_kinds`)."""
        bulk = np.zeros(len(self.bits), bool)
        if self.lanes > 1:
            return bulk
        iv, members = getattr(self.batch, "intervals", None), getattr(self.batch, "members", None)
        if iv is not None:
            bulk |= iv.mask
        if members is not None:
            bulk |= members.mask
        return bulk

    def result(self, i: int):
        """Vector ``i``'s result as the readable semantics gives it."""
        if i in self.sets:
            return self.sets[i]
        if self.batch is not None:
            return self.batch.result(i)  # type: ignore[attr-defined]
        from ptxspec.semantics.results import AnyNaN, Result, pack_lanes

        kinds = self.lane_kinds()[i]
        if not kinds.any():
            return int(self.bits[i])
        mask, bits = (1 << self.lane_bits) - 1, int(self.bits[i])
        sets: dict[int, Result] = {} if self.format is None else {OPEN_NAN: AnyNaN(self.format)}
        if self.shared is not None:
            sets[SHARED_SET] = self.shared.allowed
        lanes = [sets[kind] if kind else (bits >> ((self.lanes - 1 - lane) * self.lane_bits)) & mask for lane, kind in enumerate(kinds.tolist())]
        return pack_lanes(lanes, self.lane_bits)

    def lane_kinds(self) -> np.ndarray:
        """``(n, lanes)``: what each lane's result is, :data:`FIXED` bits, :data:`OPEN_NAN` (any
        NaN of ``format``) or :data:`SHARED_SET` (the set of :attr:`shared`); FIXED where the
        result is in :attr:`sets` or written in bulk as an interval or member row."""
        kinds = np.zeros((len(self.bits), self.lanes), np.int64)
        for kind, mask in ((OPEN_NAN, self.any_nan), (SHARED_SET, None if self.shared is None else self.shared.mask)):
            if mask is not None:
                kinds[mask.reshape(kinds.shape)] = kind
        if self.lanes > 1:
            iv, members = getattr(self.batch, "intervals", None), getattr(self.batch, "members", None)
            if iv is not None:
                flushed = iv.flushed if iv.flushed is not None else np.zeros(iv.mask.shape, bool)
                kinds = np.where(iv.mask, INTERVAL + iv.nan.astype(np.int64) + 2 * flushed, kinds)
            if members is not None:
                kinds = np.where(members.mask, MEMBERS + np.minimum(_distinct(members.values), MOST_MEMBERS + 1) - 1, kinds)
        return kinds

    def bulk_rows(self) -> np.ndarray:
        """Per vector, whether its line is written from :meth:`open_pattern` (False: a lane with
        more than :data:`MOST_MEMBERS` members, written one line at a time)."""
        return np.asarray((self.lane_kinds() < MEMBERS + MOST_MEMBERS).all(axis=1))

    def open_pattern(self) -> np.ndarray:
        """Per vector, its :meth:`lane_kinds` as one integer, four bits a lane (lane 0 the most
        significant); 0 where the result is fixed bits (or in :attr:`sets`)."""
        code = np.zeros(len(self.bits), np.int64)
        for column in self.lane_kinds().T:
            code = (code << 4) | np.minimum(column, 15)
        return code


def _distinct(values: np.ndarray) -> np.ndarray:
    """How many distinct values each row of the last axis holds."""
    ordered = np.sort(values, axis=-1)
    return 1 + (ordered[..., 1:] != ordered[..., :-1]).sum(axis=-1)


def destinations(form, columns: list[np.ndarray], profile: str, progress=None) -> list[Destination]:
    """The results of ``form`` on the input ``columns``, per destination: from the batched
    semantics where a fast path exists, else from the readable semantics in a loop."""
    from ptxspec.conformance.check_vectors import has_fast_path
    from ptxspec.semantics.batch import evaluate_batch_all
    from ptxspec.semantics.instructions import evaluate

    if has_fast_path(form, profile):
        results = evaluate_batch_all(form, [c.astype(np.uint64) for c in columns], profile)
        if len(results) == 1:  # its intervals and member rows: written in bulk
            (r,) = results
            return [Destination(r.bits.astype(np.uint64), r.any_nan, r.format, r.lanes, r.lane_bits, dict(r.sets), r, r.shared)]
        return [Destination(r.bits.astype(np.uint64), r.any_nan, r.format, r.lanes, r.lane_bits, _sets(r), None, r.shared) for r in results]
    n = len(columns[0]) if columns else 0
    lists = [c.tolist() for c in columns]
    outs = [Destination(np.zeros(n, np.uint64), None, None, 1, register_bits(d.type), {}) for d in form.destinations]
    for i in range(n):
        if progress is not None and not i % PROGRESS_STEP:
            progress(form.text, i, n)
        for dest, value in zip(outs, evaluate(form, [c[i] for c in lists], profile)):
            if isinstance(value, int):
                dest.bits[i] = value
            else:
                dest.sets[i] = value
                rep = representative(value)
                dest.bits[i] = 0 if rep is None else rep
    return outs


def _sets(result) -> dict:
    """A batched result's sets by vector index, its intervals (an .approx bound) and small sets
    of members among them."""
    sets = dict(result.sets)
    for field in (result.intervals, result.members):
        if field is not None:
            mask = field.mask
            sets.update((int(i), result.result(int(i))) for i in np.flatnonzero(mask if mask.ndim == 1 else mask.any(axis=1)))
    return sets


# ---------------------------------------------------------------------------------------------
# JSON Lines text in bulk: a line template per form, hex digits written column by column
# ---------------------------------------------------------------------------------------------

#: Vectors formatted at a time (bounds the memory of the byte matrices).
CHUNK = 1 << 16


def hex_digits(values: np.ndarray, digits: int) -> np.ndarray:
    """``(n, digits)`` ASCII bytes: each value as ``digits`` lower-case hex digits, zero-padded
    (``f"{v:0{digits}x}"``; the values fit in ``4 * digits`` bits)."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    words = [_hex_word(values)] if digits <= 8 else [_hex_word(values >> np.uint64(32)), _hex_word(values)]
    text = np.stack(words, axis=1).astype(">u8").view(np.uint8).reshape(len(values), 8 * len(words))
    return text[:, text.shape[1] - digits :]


def _hex_word(values: np.ndarray) -> np.ndarray:
    """The low 32 bits of each value as eight ASCII hex digits in one 64-bit word, the first digit
    in the most significant byte: each nibble spread into a byte, then '0' or 'a' - 10 added on
    all eight bytes at once."""
    x = values & np.uint64(0xFFFFFFFF)
    x = (x | (x << np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    x = (x | (x << np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    x = (x | (x << np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    letters = ((x + np.uint64(0x7676767676767676)) >> np.uint64(7)) & np.uint64(0x0101010101010101)  # nibble >= 10
    return x + np.uint64(0x3030303030303030) + letters * np.uint64(ord("a") - 10 - ord("0"))


def digits_of(width: int) -> int:
    """Hex digits of a ``width``-bit register in the schema: width/4, rounded up, at least 1."""
    return max(1, (width + 3) // 4)


def render(pieces: Sequence, n: int) -> np.ndarray:
    """``(n, length)`` bytes: the ``pieces`` side by side, a ``str`` the same in every row, a
    ``(values, digits)`` pair the hex digits of each row's value."""
    # One row with the text in place (digits as '0'), copied n times; then the digit columns.
    line = "".join(p if isinstance(p, str) else "0" * p[1] for p in pieces).encode("utf-8")
    matrix = np.tile(np.frombuffer(line, dtype=np.uint8), (n, 1))
    at = 0
    for piece in pieces:
        if isinstance(piece, str):
            at += len(piece.encode("utf-8"))
        else:
            values, digits = piece
            matrix[:, at : at + digits] = hex_digits(values, digits)
            at += digits
    return matrix


def _operand_pieces(fields: Sequence[tuple[np.ndarray, int]]) -> list:
    """``"0x..", "0x.."``: the hex strings of ``(values, width)`` fields, comma-separated."""
    out: list = []
    for k, (values, width) in enumerate(fields):
        out += [", " if k else "", '"0x', (values, digits_of(width)), '"']
    return [p for p in out if p != ""]


def line_template(form, profile: str, columns: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> tuple[list, str]:
    """The pieces of ``form``'s line without ``allowed`` up to the last output's closing quote,
    and the tail after it: ``json.dumps`` of :func:`vector_dict` with the hex digits left open."""
    head = ['{"instr": ' + json.dumps(form.text) + ', "inputs": [']
    head += _operand_pieces([(c, register_bits(o.type)) for c, o in zip(columns, form.sources)])
    head.append('], "outputs": [')
    head += _operand_pieces([(b, register_bits(d.type)) for b, d in zip(outputs, form.destinations)])
    return head, '], "profile": ' + json.dumps(profile) + "}\n"


def pattern_kinds(pattern: int, lanes: int) -> list[int]:
    """The lane kinds (:meth:`Destination.lane_kinds`) of an :meth:`~Destination.open_pattern`
    code, lane 0 first."""
    return [(pattern >> (4 * (lanes - 1 - lane))) & 15 for lane in range(lanes)]


def allowed_pieces(dest: Destination, pattern: int, bits: np.ndarray, rows: np.ndarray | None = None) -> list:
    """The ``allowed`` entry of a fast-path destination whose lane kinds are ``pattern``
    (:meth:`Destination.open_pattern`): ``json.dumps`` of the set's JSON form, the fixed lanes'
    hex digits and the ends and members of the lanes' sets left open (``bits``: the destination
    bits of the rows; ``rows``: their indices in ``dest``, for an interval or member lane). Where
    a lane holds a set without a canonical member (the shared set, an interval, members),
    ``outputs`` holds this text too (:func:`vector_dict`)."""
    from ptxspec.semantics.results import AnyNaN

    texts = {} if dest.format is None else {OPEN_NAN: json.dumps(AnyNaN(dest.format).to_json())}
    if dest.shared is not None:
        texts[SHARED_SET] = json.dumps(dest.shared.allowed.to_json())
    kinds = pattern_kinds(pattern, dest.lanes)
    if dest.lanes == 1:
        return [texts[kinds[0]]]
    pieces: list = ['{"kind": "lanes", "lanes": [']
    mask = np.uint64((1 << dest.lane_bits) - 1)
    for lane, kind in enumerate(kinds):
        if lane:
            pieces.append(", ")
        if kind >= INTERVAL:
            assert rows is not None
            pieces += _lane_set_pieces(dest, kind, lane, rows)
        elif kind:
            pieces.append(texts[kind])
        else:
            shift = dest.lanes - 1 - lane
            pieces += ['"0x', ((bits >> np.uint64(shift * dest.lane_bits)) & mask, digits_of(dest.lane_bits)), '"']
    pieces.append("]}")
    return pieces


def _lane_set_pieces(dest: Destination, kind: int, lane: int, rows: np.ndarray) -> list:
    """The JSON pieces of lane ``lane``'s interval or member set in ``rows`` (all of one
    :meth:`~Destination.lane_kinds` ``kind``): :meth:`Interval.to_json` (inside
    :meth:`Flushed.to_json`), :meth:`OneOf.to_json`, with the lane's digits."""
    digits = digits_of(dest.lane_bits)
    batch = cast("BatchResult", dest.batch)
    if kind < MEMBERS:
        iv = cast("Intervals", batch.intervals)
        nan, flushed = (kind - INTERVAL) & 1, (kind - INTERVAL) >> 1
        name = json.dumps(cast(FloatFormat, dest.format).name)
        inner = ['{"kind": "interval", "format": ' + name + ', "low": "0x', (iv.low[rows, lane].astype(np.uint64), digits), '", "high": "0x']
        inner += [(iv.high[rows, lane].astype(np.uint64), digits), '", "nan": ' + json.dumps(bool(nan)) + "}"]
        return ['{"kind": "flushed", "inner": ', *inner, "}"] if flushed else inner
    count = kind - MEMBERS + 1
    values = np.sort(cast("Members", batch.members).values[rows, lane].astype(np.uint64), axis=1)
    distinct = np.concatenate([np.ones((len(rows), 1), bool), values[:, 1:] != values[:, :-1]], axis=1)
    kept = values[distinct].reshape(len(rows), count)
    pieces: list = ['{"kind": "one-of", "members": [']
    for j in range(count):
        pieces += [", " if j else "", '"0x', (kept[:, j], digits), '"']
    return [*pieces, "]}"]


def set_groups(dest: Destination, rows: np.ndarray) -> Iterator[tuple[np.ndarray, list]]:
    """The ``rows`` of ``dest`` whose result is a one-lane interval or a set of members, in groups
    that share one JSON shape, each with the pieces of the set's JSON form (:func:`render`; the
    text ``json.dumps(result.to_json())`` gives, :meth:`Interval.to_json`, :meth:`Flushed.to_json`,
    :meth:`OneOf.to_json`): ``(positions in rows, pieces)``. Such a set has no canonical member,
    so ``outputs`` and ``allowed`` both hold it (:func:`vector_dict`)."""
    batch = dest.batch
    iv, members = getattr(batch, "intervals", None), getattr(batch, "members", None)
    digits = digits_of(dest.lanes * dest.lane_bits)
    if iv is not None and dest.format is not None:
        name = json.dumps(dest.format.name)
        flushed = iv.flushed[rows] if iv.flushed is not None else np.zeros(len(rows), bool)
        for nan in (False, True):
            for flush in (False, True):
                group = np.flatnonzero(iv.mask[rows] & (iv.nan[rows] == nan) & (flushed == flush))
                if len(group):
                    at = rows[group]
                    inner = ['{"kind": "interval", "format": ' + name + ', "low": "0x', (iv.low[at], digits), '", "high": "0x', (iv.high[at], digits)]
                    inner.append('", "nan": ' + json.dumps(nan) + "}")
                    yield group, (['{"kind": "flushed", "inner": ', *inner, "}"] if flush else inner)
    if members is not None:
        values = np.sort(members.values[rows].astype(np.uint64), axis=1)
        distinct = np.concatenate([np.ones((len(rows), 1), bool), values[:, 1:] != values[:, :-1]], axis=1)
        count = distinct.sum(axis=1)
        for c in np.unique(count[members.mask[rows]]).tolist():
            group = np.flatnonzero(members.mask[rows] & (count == c))
            kept = values[group][distinct[group]].reshape(len(group), c)
            pieces: list = ['{"kind": "one-of", "members": [']
            for j in range(c):
                pieces += [", " if j else "", '"0x', (kept[:, j], digits), '"']
            yield group, [*pieces, "]}"]


def jsonl_chunks(
    instr: str,
    count: int,
    seed: int,
    profile: str = "spec",
    *,
    mask: int = FULL_MASK,
    active: int = FULL_MASK,
    progress=None,
    rows: tuple[int, int] | None = None,
) -> Iterator[bytes]:
    """The JSON Lines text of ``instr``'s vectors, UTF-8, a chunk of lines at a time (at most
    :data:`CHUNK` vectors; memory does not grow with ``count``): the batched semantics, formatted
    in bulk; identical, byte for byte, to ``json.dumps`` of each vector of :func:`generate` plus a
    newline, whatever the chunk size.

    The lines of a form are one template (the hex is zero-padded, so every line of a kind has one
    length) filled in column by column: the lines with fixed results, and for a fast path's "any
    NaN" results one template per pattern of open lanes (``"allowed"`` added). Only the rare other
    sets (and warp-level forms) are formatted one vector at a time, by :func:`vector_dict`.
    ``progress(what, done, total)``, if given, is called as the vectors are computed. ``rows``
    (scalar forms): only the lines of those vectors (:func:`input_chunks`)."""
    from ptxspec.conformance import matrix_vectors
    from ptxspec.conformance.cli import is_warp_form

    form = _form(instr)
    if matrix_vectors.kind_of(form):
        yield from matrix_vectors.jsonl_chunks(form, count, seed, profile, progress)
        return
    from ptxspec.conformance import tcgen05_vectors

    if tcgen05_vectors.writes_vectors(form):
        yield from tcgen05_vectors.jsonl_chunks(form, count, seed, profile, progress)
        return
    if is_warp_form(form):
        lines = (json.dumps(v) + "\n" for v in _warp_vectors(form, count, seed, profile, mask, active, progress))
        while chunk := "".join(itertools.islice(lines, WARP_CHUNK)):
            yield chunk.encode("utf-8")
        return
    done = 0
    for columns in input_chunks(form, count, seed, rows=rows):
        n = len(columns[0]) if columns else 0
        step = None if progress is None else lambda what, i, total, done=done: progress(what, done + i, count)
        yield lines_of(form, columns, profile, step)
        done += n
        if progress is not None:
            progress(form.text, done, count)


def lines_of(form, columns: Sequence[np.ndarray], profile: str = "spec", progress=None) -> bytes:
    """The JSON Lines text of a scalar ``form`` on the input ``columns`` (uint64 arrays, one per
    source), one line per vector, as :func:`jsonl_chunks` writes it: what ``check-vectors``
    compares a golden file's lines with."""
    n = len(columns[0]) if columns else 0
    dests = destinations(form, list(columns), profile, progress)
    # Per vector: 0 fixed results, p > 0 a fast path's open-lane pattern p, -2 an interval or a
    # set of members, -1 one vector at a time.
    kind = dests[0].open_pattern() if len(dests) == 1 else np.zeros(n, np.int64)
    if len(dests) == 1:
        kind[~dests[0].bulk_rows()] = -1
    if len(dests) > 1:  # an open NaN beside another destination: line by line
        kind[np.logical_or.reduce([d.open_pattern() != 0 for d in dests])] = -1
    for dest in dests:
        kind[dest.bulk_sets()] = -2  # an interval or a set of members: in bulk
        if dest.sets:
            kind[np.fromiter(dest.sets, np.int64, len(dest.sets))] = -1
    return _jsonl_chunk(form, profile, columns, dests, kind, 0, n)


def jsonl_bytes(instr: str, count: int, seed: int, profile: str = "spec", *, mask: int = FULL_MASK, active: int = FULL_MASK, progress=None) -> bytes:
    """:func:`jsonl_chunks` joined."""
    return b"".join(jsonl_chunks(instr, count, seed, profile, mask=mask, active=active, progress=progress))


def _jsonl_chunk(form, profile: str, columns, dests: list[Destination], kind: np.ndarray, start: int, stop: int) -> bytes:
    """The lines of vectors ``start`` to ``stop``."""
    part = slice(start, stop)
    head, tail = line_template(form, profile, [c[part] for c in columns], [d.bits[part] for d in dests])
    plain = render([*head, tail], stop - start)
    kinds = kind[part]
    if not kinds.any():
        return plain.tobytes()
    # The other lines, one template per open-lane pattern, spliced in between runs of plain lines.
    prefix, tail_bytes = plain.shape[1] - len(tail), np.frombuffer(tail.encode("utf-8"), np.uint8)
    other: dict[int, bytes] = {}
    for k in np.unique(kinds).tolist():
        rows = np.flatnonzero(kinds == k)
        if k > 0:
            (dest,) = dests
            allowed = allowed_pieces(dest, k, dest.bits[part][rows], start + rows)
            if max(pattern_kinds(k, dest.lanes)) >= SHARED_SET:  # no canonical member: outputs holds the set too
                matrix = render([*_set_line_head(form, columns, part, rows), *allowed, '], "allowed": [', *allowed, tail], len(rows))
            else:
                middle = render(['], "allowed": [', *allowed], len(rows))
                matrix = np.concatenate([plain[rows, :prefix], middle, np.broadcast_to(tail_bytes, (len(rows), len(tail_bytes)))], axis=1)
            # One bytes object per row (no line holds a zero byte, so none is cut short).
            other.update(zip(rows.tolist(), matrix.view(f"S{matrix.shape[1]}").ravel().tolist()))
        elif k == -2:
            (dest,) = dests
            for group, set_json in set_groups(dest, start + rows):
                at = rows[group]
                matrix = render([*_set_line_head(form, columns, part, at), *set_json, '], "allowed": [', *set_json, tail], len(at))
                other.update(zip(at.tolist(), matrix.view(f"S{matrix.shape[1]}").ravel().tolist()))
        elif k < 0:
            other.update((i, _single_line(form, profile, columns, dests, start + i, plain[i], prefix, tail)) for i in rows.tolist())
    flat: Buffer = cast("Buffer", plain.reshape(-1))  # numpy's stubs give ndarray no buffer protocol before Python 3.12
    text, width = memoryview(flat), plain.shape[1]  # sliced without copies
    pieces: list = []
    previous = 0
    for i in sorted(other):
        pieces += [text[previous * width : i * width], other[i]]
        previous = i + 1
    pieces.append(text[previous * width :])
    return b"".join(pieces)


def _set_line_head(form, columns, part: slice, rows: np.ndarray) -> list:
    """The pieces of the ``rows``' lines up to their ``outputs`` entry, for a set with no
    canonical member (which ``outputs`` then holds, :func:`vector_dict`)."""
    head = ['{"instr": ' + json.dumps(form.text) + ', "inputs": [']
    head += _operand_pieces([(c[part][rows], register_bits(o.type)) for c, o in zip(columns, form.sources)])
    return [*head, '], "outputs": [']


def _single_line(form, profile: str, columns, dests: list[Destination], i: int, plain_row: np.ndarray, prefix: int, tail: str) -> bytes:
    """The line of vector ``i`` whose results include a set that is not a fast path's "any NaN"."""
    results = [d.result(i) for d in dests]
    if all(representative(r) is not None for r in results):
        # The row already holds each set's canonical member: add the "allowed" list, the same
        # text vector_dict's json.dumps gives.
        texts = ", ".join("null" if isinstance(r, int) else json.dumps(r.to_json()) for r in results)
        return plain_row[:prefix].tobytes() + f'], "allowed": [{texts}'.encode("utf-8") + tail.encode("utf-8")
    return (json.dumps(vector_dict(form, [int(c[i]) for c in columns], results, profile)) + "\n").encode("utf-8")


def jsonl_lines(instr: str, count: int, seed: int, profile: str = "spec", **lanes) -> list[str]:
    """:func:`jsonl_bytes` as a list of lines (each with its newline)."""
    return jsonl_bytes(instr, count, seed, profile, **lanes).decode("utf-8").splitlines(keepends=True)


def _npz_arrays(form, count: int, seed: int, profile: str) -> Iterator[list[np.ndarray]]:
    """The npz arrays of one instruction (inputs, then per destination its ``out`` and ``open``:
    :func:`_npz_names`), a chunk of vectors at a time."""
    for columns in input_chunks(form, count, seed):
        arrays = [c.astype(np.uint64) for c in columns]
        for dest in destinations(form, columns, profile):
            rep = dest.bits.copy()
            open_ = dest.open_pattern() != 0
            bulk = dest.bulk_sets() | (dest.lane_kinds() >= SHARED_SET).any(axis=1)  # no canonical member: 0, as for the sets below
            rep[bulk], open_[bulk] = 0, True
            for i, r in dest.sets.items():
                open_[i] = True
                value = representative(r)
                rep[i] = 0 if value is None else value
            arrays += [rep, open_]
        yield arrays


def _npz_names(form, k: int) -> list[tuple[str, type]]:
    """The names and types of instruction ``k``'s arrays, in the archive's order."""
    names: list[tuple[str, type]] = [(f"{k}.in{i}", np.uint64) for i in range(len(form.sources))]
    for j in range(len(form.destinations)):
        names += [(f"{k}.out{j}", np.uint64), (f"{k}.open{j}", np.bool_)]
    return names


def write_npz(out, instrs: Sequence[str], count: int, seed: int, profile: str = "spec") -> None:
    """Write the npz archive of the vectors of ``instrs`` (see the module docstring) to the
    seekable binary stream ``out``, byte-stable: each array is computed a chunk at a time into a
    temporary file and copied into its zip member (stored, a fixed timestamp), so that memory does
    not grow with ``count``."""
    from ptxspec.conformance import matrix_vectors
    from ptxspec.conformance.cli import is_warp_form

    forms = []
    for k, instr in enumerate(instrs):
        form = _form(instr)
        if is_warp_form(form) or matrix_vectors.kind_of(form):
            raise PtxSpecError(
                f"{form.text}: --format npz holds scalar forms only; write warp-level and matrix forms as jsonl", where=f"<command line>, INSTR {k + 1}"
            )
        forms.append(form)
    with tempfile.TemporaryDirectory(prefix="ptxspec-npz-") as folder, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for k, form in enumerate(forms):
            names = _npz_names(form, k)
            files = [open(os.path.join(folder, name), "w+b") for name, _ in names]
            try:
                for arrays in _npz_arrays(form, count, seed, profile):
                    for stream, array in zip(files, arrays):
                        stream.write(np.ascontiguousarray(array).tobytes())
                for (name, dtype), stream in zip(names, files):
                    _npz_member(archive, name, dtype, stream.tell() // np.dtype(dtype).itemsize, stream)
            finally:
                for stream in files:
                    stream.close()
        texts = [f.text for f in forms]
        instr_column = np.array(texts, dtype=f"<U{max([1, *map(len, texts)])}")
        _npz_member(archive, "instr", instr_column.dtype, len(instr_column), io.BytesIO(instr_column.tobytes()))


def _npz_member(archive: zipfile.ZipFile, name: str, dtype, rows: int, data) -> None:
    """One ``.npy`` member: the header ``np.save`` writes for a 1-D array of ``rows`` ``dtype``
    values, then the values from the binary stream ``data`` (its whole content)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (rows,)})
    info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
    info.file_size = len(header.getvalue()) + rows * np.dtype(dtype).itemsize  # as writestr sets it: the same zip64 choice
    with archive.open(info, "w") as member:
        member.write(header.getvalue())
        data.seek(0)
        shutil.copyfileobj(data, member, 1 << 22)


def npz_bytes(instrs: Sequence[str], count: int, seed: int, profile: str = "spec") -> bytes:
    """The npz archive of the vectors of ``instrs`` (:func:`write_npz`) as bytes."""
    buffer = io.BytesIO()
    write_npz(buffer, instrs, count, seed, profile)
    return buffer.getvalue()


def testfloat_chunks(instr: str, count: int, seed: int, profile: str = "spec") -> Iterator[bytes]:
    """``instr``'s vectors (the same inputs as the JSON Lines file) in the line layout of Berkeley
    TestFloat's ``testfloat_gen`` (:func:`ptxspec.conformance.testfloat.encode`), a chunk of
    lines at a time. A form without a TestFloat counterpart is a located error."""
    from ptxspec.conformance import testfloat

    form = _form(instr)
    if testfloat.testfloat_function(form) is None:
        raise PtxSpecError(
            f"{form.text} has no TestFloat counterpart: --format testfloat holds IEEE 754 operations (an explicit .rn/.rz/.rm/.rp, "
            "no .ftz/.sat/.relu/.satfinite/.approx) on f16, f32, f64 and 32/64-bit integers",
            where="<command line>, INSTR 1",
        )
    for columns in input_chunks(form, count, seed):
        yield testfloat.encode(form, columns, profile)


def encode_testfloat(instr: str, count: int, seed: int, profile: str = "spec") -> bytes:
    """:func:`testfloat_chunks` joined."""
    return b"".join(testfloat_chunks(instr, count, seed, profile))


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@click.command("vectors")
@click.argument("instrs", nargs=-1, required=True, metavar="INSTR...")
@click.option("--count", type=int, default=1000, show_default=True, help="Vectors per instruction form: its edge values first, then seeded random ones.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random vectors (same arguments, same bytes).")
@click.option(
    "--profile",
    type=click.Choice(PROFILE_NAMES),
    default="spec",
    show_default=True,
    help="spec: open results as allowed sets; sm_90: what an H100/H200 produces, where measured.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "npz", "testfloat"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines (one vector per line), a numpy .npz of uint64 arrays, or Berkeley TestFloat's testfloat_gen lines (one IEEE 754 form per file).",
)
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(allow_dash=True),
    default="-",
    help="Output file ('-': standard output; npz needs a file); with --shard-size, the folder of the shards.",
)
@click.option("--mask", "mask_text", default=None, help="Warp-level forms: the membermask operand [default: 0xffffffff].")
@click.option("--active", "active_text", default=None, help="Warp-level forms: the lanes that execute the instruction [default: 0xffffffff].")
@click.option(
    "--shard-size",
    type=click.IntRange(min=1),
    default=None,
    help="JSON Lines of scalar forms in shards of this many vectors, written by the campaign engine into the folder -o DIR (with manifest.json).",
)
@campaign_engine.options
def vectors_command(
    instrs: tuple[str, ...],
    count: int,
    seed: int,
    profile: str,
    fmt: str,
    output: str,
    mask_text: str | None,
    active_text: str | None,
    shard_size: int | None,
    workers: int | None,
    scheduler: str | None,
    store: Path | None,
) -> None:
    """Write golden vectors of each INSTR (e.g. 'fma.rn.f32'): the manual's edge values crossed,
    then seeded random inputs, with the results the semantics gives them.

    \b
    Examples:
      ptxspec vectors fma.rn.f32 --count 100000 --seed 1 -o fma.jsonl
      ptxspec vectors add.rn.f16x2 mad.wide.s32 --count 1000 --format npz -o v.npz
      ptxspec vectors add.rn.f32 --count 1000 --format testfloat -o add.tf
      ptxspec vectors tcgen05 --count 10 -o tcgen05.jsonl   # every tcgen05 data-movement family: states in and out
      ptxspec vectors fma.rn.f16 --count 1000000000 --shard-size 10000000 -o fma-shards/

    With --shard-size the vectors of each scalar form are written as shards by the campaign
    engine (Dask: --workers, --scheduler, --resume; docs "Campaigns"): DIR/FORM.NNNNNN.jsonl,
    whose concatenation in order is the bytes one file would hold, and DIR/manifest.json listing
    each shard's lines and SHA-256. On a cluster, DIR must be a folder every worker can write.

    A tcgen05 form (tcgen05.ld, .st, .alloc, .cp, ...; 'tcgen05' for a set of every family) writes
    one line per case: the state in, the operands, the results and the state after
    (docs/vectors.rst, "tcgen05: states in and out").
    """
    from ptxspec.conformance import matrix_vectors, tcgen05_vectors
    from ptxspec.conformance.cli import _mask_option, is_warp_form, write_chunks, write_output

    # 'tcgen05' stands for every form of tcgen05_vectors.DEFAULT_FORMS; an error names the INSTR as written.
    named = [(k, text) for k, written in enumerate(instrs, start=1) for text in tcgen05_vectors.expand([written])]
    forms = [_form(text, f"<command line>, INSTR {k}") for k, text in named]
    if fmt != "jsonl":
        stateful = next((k for (k, _), f in zip(named, forms) if tcgen05_vectors.writes_vectors(f)), None)
        if stateful is not None:
            raise OperandError(
                f"--format {fmt}: the vectors of a tcgen05 form carry states (JSON); use --format jsonl", where=f"<command line>, INSTR {stateful}"
            )
    lanes: dict[str, int] = {}
    for name, text in (("mask", mask_text), ("active", active_text)):
        if text is not None:
            if not any(is_warp_form(f) and not matrix_vectors.kind_of(f) for f in forms):  # mma: no membermask
                raise OperandError(f"--{name} is for warp-level instructions; none is given", where=f"<command line>, --{name}")
            lanes[name] = _mask_option(text, f"--{name}")
    check_count_seed(count, seed)
    if shard_size is None and Path(output).is_dir():
        raise OperandError(f"{output} is a folder; give a file (or --shard-size to write shards there)", where="<command line>, --output")
    if shard_size is not None:
        write_shards(Path(output), forms, count, seed, profile, shard_size, fmt=fmt, engine=campaign_engine.settings(workers, scheduler, store))
        return
    if fmt == "testfloat":
        if len(forms) > 1:
            raise OperandError(
                f"--format testfloat holds one form per file, got {len(forms)} INSTRs: run the command once per INSTR (one -o FILE each)",
                where="<command line>, INSTR 2",
            )
        write_chunks(output, testfloat_chunks(forms[0].text, count, seed, profile))
        return
    if fmt == "npz":
        if output == "-":
            raise OperandError("--format npz writes a binary file: give -o FILE", where="<command line>, --output")
        write_output(output, lambda out: write_npz(out, [f.text for f in forms], count, seed, profile))
        return
    # A progress bar on standard error, only when it is a terminal that the lines do not go to
    # (check-vectors' own).
    from ptxspec.conformance.progress import Progress

    progress = Progress()
    progress.on = progress.on and not (output == "-" and sys.stdout.isatty())

    def chunks() -> Iterator[bytes]:
        for k, ((_, written), f) in enumerate(zip(named, forms), start=1):
            label = f"{f.text} ({k}/{len(forms)})"
            progress(label, 0, count)
            # a tcgen05 form keeps its operand template: it alone chooses among forms of one text (A in Tensor Memory, ...)
            text = written.strip() if tcgen05_vectors.writes_vectors(f) else f.text
            step = lambda _, done, total, label=label: progress(label, done, total)  # noqa: E731
            yield from jsonl_chunks(text, count, seed, profile, mask=lanes.get("mask", FULL_MASK), active=lanes.get("active", FULL_MASK), progress=step)

    try:
        write_chunks(output, chunks())
    finally:
        progress.close()


def write_shard(folder: str, name: str, instr: str, count: int, seed: int, profile: str, first: int, stop: int) -> dict:
    """Write the lines of vectors ``first`` to ``stop`` of ``instr`` into ``folder/name`` (written
    whole, then renamed): one task of a sharded ``vectors`` campaign. Returns the shard's file
    name, line count and SHA-256."""
    path = Path(folder) / name
    partial = path.with_suffix(".partial")
    digest = hashlib.sha256()
    try:
        with open(partial, "wb") as stream:
            for chunk in jsonl_chunks(instr, count, seed, profile, rows=(first, stop)):
                stream.write(chunk)
                digest.update(chunk)
        os.replace(partial, path)
    except OSError as error:
        raise PtxSpecError(f"cannot write a shard: {error.strerror or error}", where=str(path)) from None
    return {"file": name, "first": first, "lines": stop - first, "sha256": digest.hexdigest()}


def write_shards(folder: Path, forms: list, count: int, seed: int, profile: str, shard_size: int, *, fmt: str, engine: dict) -> None:
    """The sharded output of ``vectors``: every scalar form's ``count`` vectors in shards of
    ``shard_size`` lines, a task each on the campaign engine, then ``folder/manifest.json``."""
    from ptxspec.conformance import matrix_vectors, tcgen05_vectors
    from ptxspec.conformance.cli import is_warp_form

    if fmt != "jsonl":
        raise OperandError(f"--shard-size writes JSON Lines; --format {fmt} is one file", where="<command line>, --shard-size")
    for k, form in enumerate(forms, start=1):
        if is_warp_form(form) or matrix_vectors.kind_of(form) or tcgen05_vectors.writes_vectors(form):
            raise OperandError(f"--shard-size is for scalar forms; {form.text} is not one", where=f"<command line>, INSTR {k}")
    if str(folder) == "-":
        raise OperandError("--shard-size writes a folder of shards: give -o DIR", where="<command line>, --output")
    seen: dict[str, int] = {}
    for k, form in enumerate(forms, start=1):
        if seen.setdefault(form.text, k) != k:
            raise OperandError(f"{form.text} is given twice (INSTR {seen[form.text]} and {k}); its shards are written once", where=f"<command line>, INSTR {k}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PtxSpecError(f"cannot make the folder of shards: {error.strerror or error}", where=str(folder)) from None
    tasks = [
        campaign_engine.Task(
            f"{form.text}.{j:06d}",
            f"{__name__}:write_shard",
            (str(folder), f"{form.text}.{j:06d}.jsonl", form.text, count, seed, profile, first, min(first + shard_size, count)),
        )
        for form in forms
        for j, first in enumerate(range(0, count, shard_size))
    ]
    from ptxspec.conformance.progress import Progress

    store = engine.get("store")
    if store is not None:  # a shard kept in the store but missing from DIR is written again
        for task in tasks:
            if not (folder / task.arguments[1]).is_file():
                campaign_engine.result_path(store, task.key).unlink(missing_ok=True)
    progress = Progress()
    try:
        results = campaign_engine.run(tasks, **engine, progress=lambda done, total: progress("writing shards", done, total, unit="shards"))
    finally:
        progress.close()
    manifest = {
        "count": count,
        "seed": seed,
        "profile": profile,
        "shard_size": shard_size,
        "forms": {form.text: [results[t.key] for t in tasks if t.arguments[2] == form.text] for form in forms},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


# ---------------------------------------------------------------------------------------------
# Throughput
# ---------------------------------------------------------------------------------------------

BENCH_FORMS = ("fma.rn.f32", "cvt.rn.satfinite.e4m3x2.f32", "add.rn.f16x2", "mad.wide.s32")


def generation_rates(text: str, n: int, loop_n: int, seed: int = 0, profile: str = "spec") -> tuple[float, float]:
    """Vectors/s of ``text``: :func:`jsonl_bytes` on ``n`` vectors (inputs, batched semantics, JSON
    Lines text), and a plain per-vector Python loop (:func:`generate` + ``json.dumps``) on
    ``loop_n`` vectors."""
    start = time.perf_counter()
    jsonl_bytes(text, n, seed, profile)
    fast = n / (time.perf_counter() - start)
    start = time.perf_counter()
    for v in generate(text, loop_n, seed, profile):
        json.dumps(v)
    slow = loop_n / (time.perf_counter() - start)
    return fast, slow


def bench(n: int = 200_000, loop_n: int = 5_000, seed: int = 0, profile: str = "spec") -> list[tuple[str, float, float]]:
    """:func:`generation_rates` of :data:`BENCH_FORMS`; prints one line per form and returns
    ``(form, batched rate, loop rate)``."""
    rows = []
    for text in BENCH_FORMS:
        fast, slow = generation_rates(text, n, loop_n, seed, profile)
        print(f"{text:32} batched {fast:12,.0f} vectors/s ({n:,})   per-vector loop {slow:10,.0f} vectors/s ({loop_n:,})   ratio {fast / slow:7.1f}x")
        rows.append((text, fast, slow))
    return rows


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ptxspec.conformance.vectors", description="Throughput of 'ptxspec vectors'.")
    parser.add_argument("--bench", action="store_true", required=True)
    parser.add_argument("--n", type=int, default=200_000, help="vectors per form, batched (default 200000)")
    parser.add_argument("--loop-n", type=int, default=5_000, help="vectors per form, per-vector loop (default 5000)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="spec")
    args = parser.parse_args(argv)
    bench(args.n, args.loop_n, 0, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
