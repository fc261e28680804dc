"""Golden vectors of the matrix instructions: ``mma`` (§9.7.14.5.14), ``mma.sp`` /
``mma.sp::ordered_metadata`` (§9.7.14.6.3) and ``wgmma.mma_async{.sp}`` (§9.7.15.5.2,
§9.7.15.6.3), in the JSON Lines schema of :mod:`ptxspec.conformance.vectors`.

``ptxspec vectors`` and ``ptxspec check-vectors`` send these forms here (small hooks in
``vectors.py`` and ``check_vectors.py``). Nothing here decides a result: the inputs are chosen here,
D comes from :func:`ptxspec.semantics.mma.mma_fragments` (its batched twin
:func:`mma_outputs`, which the tests compare with it) and
:func:`ptxspec.semantics.wgmma.wgmma_mma_async` (batched by ``wgmma_batch``:
:func:`wgmma_outputs`).

One vector per line, the scalar schema's keys in its order (``instr``, ``inputs``, ``outputs``,
``allowed`` where a result is a set, ``profile``)::

    mma / mma.sp:
    {"instr": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
     "inputs": [A, B, C], "outputs": [D], "profile": "sm_90"}
      A, B, C, D: 32 lanes (lane 0 first), each the list of that lane's registers of the operand
      ("0x" + 8 hex digits; 16 for the 64-bit registers of .f64), register 0 first.
      mma.sp: inputs = [A, B, C, e, f]: e the metadata register of the 32 lanes (32 hex strings),
      f the sparsity selector (one hex string, 8 digits).

    wgmma.mma_async{.sp}:
    {"instr": "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16",
     "inputs": {"image": "0x<bytes>", "desc_a": "0x<16 digits>" | A, "desc_b": "0x<16 digits>",
                "sp_meta": [128 x "0x.."], "sp_sel": "0x..", "d": D_in, "scale_d": "0x1",
                "imm_scale_a": "0x00000001", "imm_scale_b": "0xffffffff",
                "imm_trans_a": "0x00000000", "imm_trans_b": "0x00000001"},
     "outputs": [D], "profile": "spec"}
      image: shared memory's bytes in address order (address 0 first, two hex digits a byte);
      desc_a: A's matrix descriptor, or A's registers of the 128 threads (then the form is the
      "d, a, b-desc, ..." line); d and D: the 128 threads' accumulator registers; the immediates
      are present as the form has them (imm-scale-a/b 1 or -1 as .s32, imm-trans-a/b 0 or 1).

A register whose result is a set (under ``--profile spec``, every floating-point D element is
the set that "The accumulation order, rounding and handling of subnormal inputs are unspecified"
leaves; under ``--profile sm_90`` too wherever no datapath was measured for the form's types and
shape, the profile's ``mma_datapaths``) is written as in the scalar schema: ``outputs`` holds the
set's canonical member where there is one (the canonical NaN for "any NaN"), else the set's JSON
form; ``"allowed"`` then holds D with ``null`` for every fixed register and the set's JSON form
for the others.

Inputs are seeded and deterministic (numpy PCG64 seeded with ``(seed, crc32(form text))``), drawn
per vector from one *element class*, vector ``i`` taking class ``i mod len(classes)``:

* floating point: ``bits`` (uniform bit patterns), ``spread`` (normal values of every exponent),
  ``unit`` (normal values within 2^+-3), ``subnormal`` (subnormals and the smallest normals),
  ``zeros`` (mostly +-0), ``special`` (+-infinity, NaNs, the largest finite values among unit
  values), ``cancel`` (dense mma only: products that cancel in pairs, one of them perturbed by
  one unit in the last place);
* integers: ``bits``, ``extremes`` (the types' ends, C near the ends of .s32: overflow and
  .satfinite), ``small`` (-3..3), ``zeros``; ``.b1``: ``bits``, ``ones``, ``sparse``.

Sparse metadata is valid (every 4-bit field one that
:func:`~ptxspec.semantics.matrix_layout.field_defined` accepts, in the lanes the selector names;
0 in the others) unless :func:`mma_inputs` is asked for ``invalid_metadata``.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np

from ptxspec.conformance.check_vectors import hex_lower, shorten, show_value
from ptxspec.conformance.vectors import check_count_seed, chunked_draws, rng_for
from ptxspec.spec.errors import Location, OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS, FloatFormat, NanEncoding

if TYPE_CHECKING:
    from ptxspec.semantics.results import Allowed
    from ptxspec.spec.catalogue import Form

MMA_SECTION = "9.7.14.5.14"
MMA_SP_SECTION = "9.7.14.6.3"
WGMMA_SECTION = "9.7.15.5.2"
WARP = 32
THREADS = 128
#: Vectors formatted at once on the fast path (bounds the memory of one byte matrix).
CHUNK = 2048

FLOAT_CLASSES = ("bits", "spread", "unit", "subnormal", "zeros", "special", "cancel")
INTEGER_CLASSES = ("bits", "extremes", "small", "zeros")
B1_CLASSES = ("bits", "ones", "sparse")
INTEGER_ELEMENTS = {"s8": (8, True), "u8": (8, False), "s4": (4, True), "u4": (4, False), "s32": (32, True), "b1": (1, False)}


# ---------------------------------------------------------------------------------------------
# Which forms are ours
# ---------------------------------------------------------------------------------------------


def kind_of(form) -> str | None:
    """``"mma"`` for an mma/mma.sp form, ``"wgmma"`` for wgmma.mma_async{.sp}, else None."""
    key = form.family.key
    if key.startswith("mma."):
        return "mma"
    if key.startswith("wgmma.") and form.get("mma_async") is not None:
        return "wgmma"
    return None


def matrix_form(instr: str, where=None):
    """The form of ``instr`` if it is a matrix form this module writes, else None (the text is
    then the scalar writer's). An mma form without semantics (the Blackwell ``.kind::`` forms) is
    a located error."""
    from ptxspec.spec.catalogue import parse

    try:
        form = parse(instr, where=where or instr)
    except PtxSpecError:
        return None  # the caller's own parse reports it
    kind = kind_of(form)
    if kind == "mma":
        from ptxspec.semantics.instructions import semantic_function
        from ptxspec.semantics.mma import MMA_FAMILIES

        if form.family.key not in MMA_FAMILIES:  # the sm_120a .kind:: forms take scale operands
            raise PtxSpecError(
                f"{form.text}: no vectors for the sm_120a .kind:: mma forms yet (spec-level semantics: ptxspec.semantics.mma_block_scale)",
                where=where or instr,
                section=form.family.section,
            )
        try:
            semantic_function(form)
        except PtxSpecError as error:
            error.where = error.where or where or instr
            raise
    return form if kind else None


# ---------------------------------------------------------------------------------------------
# Element classes
# ---------------------------------------------------------------------------------------------


def classes_of(element_type: str, dense: bool = True) -> tuple[str, ...]:
    if element_type == "b1":
        return B1_CLASSES
    if element_type in INTEGER_ELEMENTS:
        return INTEGER_CLASSES
    return FLOAT_CLASSES if dense else FLOAT_CLASSES[:-1]


def _u64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.uint64)


def _normals(rng: np.random.Generator, fmt: FloatFormat, shape, low: int, high: int) -> np.ndarray:
    """Finite values with exponent field uniform in ``[low, high]``, random sign, and a mantissa
    all zeros, all ones, one bit, or uniform (so that ties and exact sums occur)."""
    m = fmt.mantissa_bits
    sign = rng.integers(0, 2, shape, dtype=np.uint64)
    exponent = rng.integers(low, high + 1, shape, dtype=np.uint64)
    uniform = rng.integers(0, 1 << m, shape, dtype=np.uint64)
    one_bit = np.uint64(1) << rng.integers(0, m, shape, dtype=np.uint64)
    choice = rng.integers(0, 8, shape)
    mantissa = np.select([choice == 0, choice == 1, choice == 2], [np.uint64(0), np.uint64((1 << m) - 1), one_bit], uniform)
    if fmt.nan is NanEncoding.ALL_ONES:  # e4m3: S.1111.111 is NaN, keep the normals finite
        top = (exponent == np.uint64(fmt.exponent_field_max)) & (mantissa == np.uint64((1 << m) - 1))
        mantissa = np.where(top, mantissa - np.uint64(1), mantissa)
    body = sign << np.uint64(fmt.exponent_bits + m) | exponent << np.uint64(m) | mantissa
    return body << np.uint64(fmt.shift)


def _specials(fmt: FloatFormat) -> list[int]:
    """+-infinity (where the format has it), quiet and signalling NaNs, the largest finite value."""
    from ptxspec.semantics.numerics import pack

    m, top = fmt.mantissa_bits, fmt.exponent_field_max
    out = []
    if fmt.has_infinity:
        out += [pack(fmt, 0, top, 0), pack(fmt, 1, top, 0)]
    if fmt.nan is NanEncoding.IEEE:
        out += [pack(fmt, 0, top, 1 << (m - 1)), pack(fmt, 1, top, 1)]
    elif fmt.nan is NanEncoding.ALL_ONES:
        out.append(pack(fmt, 0, top, (1 << m) - 1))
    max_e, max_m = fmt.max_finite_fields
    out += [pack(fmt, 0, max_e, max_m), pack(fmt, 1, max_e, max_m)]
    return out


def float_elements(rng: np.random.Generator, fmt: FloatFormat, klass: str, shape) -> np.ndarray:
    """Element bit patterns of ``fmt`` (in their register container: .tf32 in the high 19 bits of
    32, its low 13 bits zero) of one element class."""
    top = fmt.exponent_field_max
    finite_top = top if fmt.nan is NanEncoding.ALL_ONES or not fmt.has_infinity and fmt.nan is NanEncoding.NONE else top - 1
    unit_low, unit_high = max(1, fmt.bias - 3), min(finite_top, fmt.bias + 3)
    if klass == "bits":
        bits = rng.integers(0, 1 << (fmt.width - fmt.shift), shape, dtype=np.uint64)
        return bits << np.uint64(fmt.shift)
    if klass == "spread":
        return _normals(rng, fmt, shape, 1, finite_top)
    if klass == "subnormal":
        small = _normals(rng, fmt, shape, 1, min(3, finite_top))
        sub = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(fmt.exponent_bits + fmt.mantissa_bits)
        sub |= rng.integers(1, 1 << fmt.mantissa_bits, shape, dtype=np.uint64)
        return np.where(rng.random(shape) < 0.5, sub << np.uint64(fmt.shift), small)
    unit = _normals(rng, fmt, shape, unit_low, unit_high)
    if klass == "zeros":
        zero = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(fmt.width - 1)
        return np.where(rng.random(shape) < 0.75, zero, unit)
    if klass == "special":
        specials = _u64(_specials(fmt))
        pick = specials[rng.integers(0, len(specials), shape)]
        return np.where(rng.random(shape) < 0.06, pick, unit)
    if klass in ("unit", "cancel"):
        return unit
    raise OperandError(f"no element class {klass!r} for .{fmt.name} (classes: {', '.join(FLOAT_CLASSES)})")


def integer_elements(rng: np.random.Generator, element_type: str, klass: str, shape, *, accumulator: bool = False) -> np.ndarray:
    """Element bit patterns of an integer type (two's complement in ``bits`` bits)."""
    bits, signed = INTEGER_ELEMENTS[element_type]
    mask = (1 << bits) - 1
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, mask)
    if element_type == "b1":
        p = {"bits": 0.5, "ones": 1.0, "sparse": 0.1}.get(klass)
        if p is None:
            raise OperandError(f"no element class {klass!r} for .b1 (classes: {', '.join(B1_CLASSES)})")
        return (rng.random(shape) < p).astype(np.uint64)
    if klass == "bits":
        return rng.integers(0, mask + 1, shape, dtype=np.uint64)
    if klass == "zeros":
        values = np.where(rng.random(shape) < 0.75, 0, rng.integers(-3 if signed else 0, 4, shape))
    elif klass == "small":
        values = rng.integers(-3 if signed else 0, 4, shape)
    elif klass == "extremes":
        if accumulator:  # C near the ends of .s32: sums cross them (wrap, or .satfinite clamps)
            ends = np.array([low, low + 1, high, high - 1, low + (1 << 20), high - (1 << 20)], dtype=np.int64)
        else:
            ends = np.array(sorted({low, low + 1, high, high - 1, 0, -1 if signed else 1, 1}), dtype=np.int64)
        values = ends[rng.integers(0, len(ends), shape)]
    else:
        raise OperandError(f"no element class {klass!r} for .{element_type} (classes: {', '.join(INTEGER_CLASSES)})")
    return (np.asarray(values, dtype=np.int64) & mask).astype(np.uint64)


def elements(rng: np.random.Generator, element_type: str, klass: str, shape, *, accumulator: bool = False) -> np.ndarray:
    if element_type in INTEGER_ELEMENTS:
        if element_type == "s32" and klass in B1_CLASSES[1:]:
            klass = "small"  # .b1's C: small counts
        return integer_elements(rng, element_type, klass, shape, accumulator=accumulator)
    return float_elements(rng, FORMATS[element_type], "unit" if klass == "cancel" else klass, shape)


def _cancel(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, fmt: FloatFormat) -> None:
    """Products that cancel: for even k, column k+1 of A repeats column k and row k+1 of B is row
    k negated, so a_k b_k + a_{k+1} b_{k+1} = 0 exactly; then one A element per row is moved by
    one unit in the last place, leaving a residue far below the products (in place; A
    ``[n, M, K]``, B ``[n, K, N]``)."""
    k = a.shape[-1] - a.shape[-1] % 2
    a[..., 1:k:2] = a[..., 0:k:2]
    b[..., 1:k:2, :] = b[..., 0:k:2, :] ^ np.uint64(1 << (fmt.width - 1))
    column = rng.integers(0, k, a.shape[:-1])
    one_ulp = np.uint64(1 << fmt.shift)
    picked = np.take_along_axis(a, column[..., None], -1)
    np.put_along_axis(a, column[..., None], picked ^ one_ulp, -1)


# ---------------------------------------------------------------------------------------------
# mma / mma.sp inputs
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class MmaBatch:
    """``n`` vectors of one mma form: registers ``a [n, 32, Ra]``, ``b``, ``c`` (uint64), and for
    mma.sp the metadata ``e [n, 32]`` and selectors ``f [n]``."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    e: np.ndarray | None = None
    f: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.a)

    def take(self, rows) -> MmaBatch:
        return MmaBatch(self.a[rows], self.b[rows], self.c[rows], None if self.e is None else self.e[rows], None if self.f is None else self.f[rows])


def is_sparse(form) -> bool:
    return form.get("spvariant") is not None


def layouts(form) -> dict:
    """The fragment layouts of A, B, C, D (:func:`ptxspec.semantics.mma._layouts`)."""
    from ptxspec.semantics.mma import _layouts

    return _layouts(form)


def _metadata(rng: np.random.Generator, form, n: int, selectors: np.ndarray, invalid: bool) -> np.ndarray:
    """The metadata ``e [n, 32]``: in the lanes each vector's selector names, one 4-bit field per
    row and 4-chunk block (§9.7.14.6.1), drawn from the fields the manual defines (or from every
    4-bit value when ``invalid``); 0 in the other lanes."""
    from ptxspec.semantics.matrix_layout import field_defined, metadata_layout

    meta = metadata_layout(form["shape"], form["atype"])
    ordered = form["spvariant"] == "sp::ordered_metadata"
    fields = _u64([f for f in range(16) if invalid or field_defined(f, form["atype"], ordered)])
    e = np.zeros((n, WARP), np.uint64)
    rows = fragment_rows(form)
    for selector in meta.selectors:
        which = np.flatnonzero(selectors == selector)
        for row in range(rows):
            for block in range(meta.blocks):
                lane, bit = meta.field(row, block, selector)
                e[which, lane] |= fields[rng.integers(0, len(fields), len(which))] << np.uint64(bit)
    return e


def fragment_rows(form) -> int:
    return layouts(form)["a"].rows


def _mma_draw(form, invalid_metadata: bool):
    """The draw function of an mma/mma.sp form's vectors ``[start, stop)`` (for
    :func:`~ptxspec.conformance.vectors.chunked_draws`): vector ``i`` takes element class
    ``i mod len(classes)`` and selector ``i mod len(selectors)``; returns the element matrices A,
    B, C and the metadata and selectors (None for a dense form)."""
    L = layouts(form)
    sparse = is_sparse(form)
    atype, btype, ctype = form["atype"], form["btype"], form["ctype"]
    classes = classes_of(atype, dense=not sparse)

    def draw(rng, start: int, stop: int):
        count = stop - start
        klass = np.arange(start, stop) % len(classes)
        A = np.zeros((count, L["a"].rows, L["a"].stored_cols), np.uint64)
        B = np.zeros((count, L["b"].rows, L["b"].cols), np.uint64)
        C = np.zeros((count, L["c"].rows, L["c"].cols), np.uint64)
        for k, name in enumerate(classes):
            rows = np.flatnonzero(klass == k)
            n = len(rows)
            a = elements(rng, atype, name, (n,) + A.shape[1:])
            b = elements(rng, btype, name, (n,) + B.shape[1:])
            c = elements(rng, ctype, name, (n,) + C.shape[1:], accumulator=True)
            if name == "cancel":
                if L["a"].computations == 4:  # the four stacked 8x8x4 products of m8n8k4 .f16
                    a4, b4 = a.reshape(n, 4, 8, 4), b.reshape(n, 4, 4, 8)
                    _cancel(a4, b4, rng, FORMATS[atype])
                    a, b = a4.reshape(a.shape), b4.reshape(b.shape)
                else:
                    _cancel(a, b, rng, FORMATS[atype])
            A[rows], B[rows], C[rows] = a, b, c
        if not sparse:
            return A, B, C, None, None
        from ptxspec.semantics.matrix_layout import metadata_layout

        selectors = _u64(metadata_layout(form["shape"], atype).selectors)
        f = selectors[np.arange(start, stop) % len(selectors)]
        return A, B, C, _metadata(rng, form, count, f, invalid_metadata), f

    return draw


def mma_input_chunks(form, count: int, seed: int, *, invalid_metadata: bool = False, chunk: int | None = None) -> Iterator[MmaBatch]:
    """The ``count`` input vectors of an mma/mma.sp ``form``, at most ``chunk`` (default
    :data:`CHUNK`) at a time: element matrices of each vector's class placed in the lanes'
    registers by the manual's fragment layouts (``from_matrix``); the same vectors for any chunk
    size (:func:`~ptxspec.conformance.vectors.chunked_draws`)."""
    check_count_seed(count, seed)
    L = layouts(form)
    for A, B, C, e, f in chunked_draws(rng_for(form.text, seed), _mma_draw(form, invalid_metadata), count, chunk or CHUNK):
        yield MmaBatch(L["a"].from_matrix(A), L["b"].from_matrix(B), L["c"].from_matrix(C), e, f)


def mma_inputs(form, count: int, seed: int, *, invalid_metadata: bool = False) -> MmaBatch:
    """:func:`mma_input_chunks` at once."""
    for batch in mma_input_chunks(form, count, seed, invalid_metadata=invalid_metadata, chunk=max(count, 1)):
        return batch
    L = layouts(form)  # no vector
    A, B, C, e, f = _mma_draw(form, invalid_metadata)(rng_for(form.text, seed), 0, 0)
    return MmaBatch(L["a"].from_matrix(A), L["b"].from_matrix(B), L["c"].from_matrix(C), e, f)


# ---------------------------------------------------------------------------------------------
# mma / mma.sp outputs
# ---------------------------------------------------------------------------------------------


def mma_reference(form, batch: MmaBatch, profile="spec") -> np.ndarray:
    """D's registers ``[n, 32, Rd]`` one vector at a time by
    :func:`ptxspec.semantics.mma.mma_fragments` (an object array when a register is a set)."""
    from ptxspec.semantics.mma import mma_fragments
    from ptxspec.semantics.results import profile_named

    profile = profile_named(profile)
    L = layouts(form)
    out = np.empty((len(batch), WARP, L["d"].registers), dtype=object)
    for i in range(len(batch)):
        kw = {}
        if batch.e is not None:
            assert batch.f is not None, "an mma.sp batch has selectors with its metadata"
            kw = {"metadata": batch.e[i], "selector": int(batch.f[i])}
        D = mma_fragments(form, batch.a[i], batch.b[i], batch.c[i], profile=profile, **kw)
        out[i] = D if D.dtype == object else [[int(x) for x in lane] for lane in D.tolist()]
    return out


def _datapath(form, profile):
    """The datapath ``profile`` measured for ``form`` (:func:`ptxspec.semantics.mma.datapath_for`;
    for mma.sp the sparse one, where the semantics distinguishes them), or None."""
    from ptxspec.semantics.mma import datapath_for
    from ptxspec.semantics.numerics import Rounding
    from ptxspec.semantics.results import profile_named

    rounding = Rounding(form.get("rnd") or "rn") if form["atype"] == "f64" else None
    args = (profile_named(profile), form["atype"], form["btype"], form["ctype"], form["dtype"], rounding or Rounding.RN, form["shape"])
    if is_sparse(form):
        try:
            return datapath_for(*args, sparse=True)
        except TypeError:  # a semantics without sparse datapaths: mma.sp is spec-level
            return None
    return datapath_for(*args)


def determined(form, profile) -> bool:
    """Whether ``profile`` gives every D element of ``form`` as bits: integer types always; floating
    point where it measured a datapath for the form (mma.sp: a sparse datapath)."""
    from ptxspec.semantics.mma import INTEGER_TYPES

    return form["atype"] in INTEGER_TYPES or _datapath(form, profile) is not None


def mma_outputs(form, batch: MmaBatch, profile="spec") -> np.ndarray:
    """D's registers ``[n, 32, Rd]``: the batched form of :func:`mma_reference` -- the steps of
    :func:`~ptxspec.semantics.mma.mma_fragments` applied to the whole batch (``to_matrix``,
    :func:`~ptxspec.semantics.mma.mma_matrix` or, for mma.sp, ``sparse_rows`` and
    ``sparse_matrix``, then ``from_matrix``) where the profile determines every element (uint64);
    else :func:`mma_reference` (object). A vector whose sparse metadata the manual leaves undefined
    goes through :func:`mma_reference` as well."""
    from ptxspec.semantics import mma as semantics
    from ptxspec.semantics.numerics import Rounding
    from ptxspec.semantics.results import profile_named

    if not determined(form, profile):
        return mma_reference(form, batch, profile)
    profile = profile_named(profile)
    L = layouts(form)
    n = len(batch)
    B, C = L["b"].to_matrix(batch.b), L["c"].to_matrix(batch.c)
    satfinite = form.get("satfinite") is not None
    # The vectorised datapath computes on NaN/inf lanes before it masks them out: numpy's warnings
    # about those lanes say nothing about the result (tests compare it with mma_reference).
    with np.errstate(invalid="ignore", over="ignore"):
        if is_sparse(form):
            assert batch.e is not None and batch.f is not None, "an mma.sp batch has metadata and selectors"
            D = np.zeros((n, L["d"].rows, L["d"].cols), np.uint64)
            undefined = np.zeros(n, bool)
            for selector in np.unique(batch.f).tolist():
                rows = np.flatnonzero(batch.f == selector)
                stored, cols, bad = semantics.sparse_rows(
                    L["a"], batch.a[rows], batch.e[rows], int(selector), ordered=form["spvariant"] == "sp::ordered_metadata"
                )
                D[rows] = semantics.sparse_matrix(
                    form["shape"],
                    form["atype"],
                    form["btype"],
                    form["ctype"],
                    form["dtype"],
                    stored,
                    cols,
                    B[rows],
                    C[rows],
                    profile=profile,
                    satfinite=satfinite,
                )
                undefined[rows] = bad.any(axis=-1)
            if undefined.any():
                out = L["d"].from_matrix(D).astype(object)
                out[undefined] = mma_reference(form, batch.take(np.flatnonzero(undefined)), profile)
                return out
            return L["d"].from_matrix(D)
        A = L["a"].to_matrix(batch.a)
        stacked = L["a"].computations == 4  # m8n8k4 .f16: four 8x8x4 products stacked along the rows
        if stacked:
            A, B, C = A.reshape(n, 4, 8, 4), B.reshape(n, 4, 4, 8), C.reshape(n, 4, 8, 8)
        rounding = Rounding(form.get("rnd") or "rn") if form["atype"] == "f64" else None
        D = semantics.mma_matrix(
            form["atype"],
            form["btype"],
            form["ctype"],
            form["dtype"],
            A,
            B,
            C,
            profile=profile,
            rounding=rounding,
            satfinite=satfinite,
            bit_op=form.get("bitOp"),
        )
    if stacked:
        D = D.reshape(n, 32, 8)
    return L["d"].from_matrix(D)


# ---------------------------------------------------------------------------------------------
# Writing: JSON text
# ---------------------------------------------------------------------------------------------


def _digits(bits: int) -> int:
    return max(1, (bits + 3) // 4)


def _hex(value: int | np.integer, bits: int) -> str:
    return f"0x{int(value):0{_digits(bits)}x}"


def _register_text(result, bits: int):
    """A D register as ``outputs`` writes it: hex, the canonical member of a set, or its JSON."""
    from ptxspec.conformance.vectors import representative

    if isinstance(result, (int, np.integer)):
        return _hex(result, bits)
    rep = representative(result)
    return result.to_json() if rep is None else _hex(rep, bits)


def _registers_json(registers: np.ndarray, bits: int) -> list:
    """Registers ``[lanes, R]`` (bits) as lists of hex strings."""
    text = f"0x{{:0{_digits(bits)}x}}".format
    return [list(map(text, lane)) for lane in np.asarray(registers, dtype=np.uint64).tolist()]


def _outputs_json(d: np.ndarray, bits: int) -> tuple[list, list | None]:
    """``outputs`` and ``allowed`` entries of one D (``[lanes, R]``, ints or results)."""
    if d.dtype != object or all(isinstance(r, (int, np.integer)) for r in d.ravel().tolist()):
        return _registers_json(d.astype(np.uint64), bits), None
    outputs = [[_register_text(r, bits) for r in lane] for lane in d]
    allowed = [[None if isinstance(r, (int, np.integer)) else r.to_json() for r in lane] for lane in d]
    return outputs, allowed


def _line(instr: str, inputs, d: np.ndarray, bits: int, profile: str) -> dict:
    outputs, allowed = _outputs_json(d, bits)
    obj = {"instr": instr, "inputs": inputs, "outputs": [outputs]}
    if allowed is not None:
        obj["allowed"] = [allowed]
    obj["profile"] = profile
    return obj


def mma_inputs_json(form, batch: MmaBatch, i: int) -> list:
    L = layouts(form)
    out: list[list[str] | str] = [
        _registers_json(batch.a[i], L["a"].register_bits),
        _registers_json(batch.b[i], L["b"].register_bits),
        _registers_json(batch.c[i], L["c"].register_bits),
    ]
    if batch.e is not None:
        assert batch.f is not None, "an mma.sp batch has selectors with its metadata"
        out += [[_hex(x, 32) for x in batch.e[i].tolist()], _hex(batch.f[i], 32)]
    return out


def mma_dicts(form, count: int, seed: int, profile: str = "spec", *, batched: bool = True) -> Iterator[dict]:
    """The vectors of an mma form as dicts (``json.dumps`` of each is its line)."""
    batch = mma_inputs(form, count, seed)
    D = (mma_outputs if batched else mma_reference)(form, batch, profile)
    bits = layouts(form)["d"].register_bits
    for i in range(count):
        yield _line(form.text, mma_inputs_json(form, batch, i), D[i], bits, profile)


def _lanes_pieces(registers: np.ndarray, bits: int) -> list:
    """The render pieces of ``[[..], ..]``: registers ``[n, lanes, R]``."""
    from ptxspec.conformance.vectors import digits_of

    out: list = ["["]
    lanes, count = registers.shape[1:]
    for lane in range(lanes):
        out.append("[" if lane == 0 else ", [")
        for r in range(count):
            out += ['"0x' if r == 0 else ', "0x', (registers[:, lane, r], digits_of(bits)), '"']
        out.append("]")
    out.append("]")
    return out


def _fast_lines(form, batch: MmaBatch, D: np.ndarray, profile: str) -> bytes:
    """The lines of vectors whose D registers are all bits, rendered as one byte matrix
    (:func:`ptxspec.conformance.vectors.render`); the same bytes as ``json.dumps`` of
    :func:`mma_dicts` (tests/test_matrix_vectors.py checks)."""
    from ptxspec.conformance.vectors import render

    L = layouts(form)
    pieces: list = ['{"instr": ' + json.dumps(form.text) + ', "inputs": [']
    pieces += _lanes_pieces(batch.a, L["a"].register_bits) + [", "]
    pieces += _lanes_pieces(batch.b, L["b"].register_bits) + [", "]
    pieces += _lanes_pieces(batch.c, L["c"].register_bits)
    if batch.e is not None:
        pieces.append(", [")
        for lane in range(WARP):
            pieces += ['"0x' if lane == 0 else ', "0x', (batch.e[:, lane], 8), '"']
        pieces += ['], "0x', (batch.f, 8), '"']
    pieces.append('], "outputs": [')
    pieces += _lanes_pieces(D, L["d"].register_bits)
    pieces.append('], "profile": ' + json.dumps(profile) + "}\n")
    return render(pieces, len(batch)).tobytes()


def mma_jsonl_chunks(form, count: int, seed: int, profile: str = "spec", progress=None) -> Iterator[bytes]:
    """The JSON Lines text of an mma form's vectors, :data:`CHUNK` vectors at a time: fixed
    results rendered in bulk, the vectors with a set in D written by ``json.dumps`` one at a
    time."""
    bits = layouts(form)["d"].register_bits
    done = 0
    for part in mma_input_chunks(form, count, seed):
        D = mma_outputs(form, part, profile)
        if D.dtype != object:
            yield _fast_lines(form, part, D, profile)
        else:
            yield "".join(json.dumps(_line(form.text, mma_inputs_json(form, part, i), D[i], bits, profile)) + "\n" for i in range(len(part))).encode("utf-8")
        done += len(part)
        if progress is not None:
            progress(form.text, done, count)


# ---------------------------------------------------------------------------------------------
# wgmma inputs: a shared-memory image, descriptors, registers
# ---------------------------------------------------------------------------------------------

SWIZZLES = ("none", "32B", "64B", "128B")


@attrs.frozen(eq=False)
class WgmmaVector:
    """One wgmma execution's operands (see the module docstring for their JSON)."""

    image: bytes
    a: int | np.ndarray  # A's descriptor, or A's registers [128, 4]
    desc_b: int
    d: np.ndarray  # [128, R]
    scale_d: int
    immediates: dict  # imm_scale_a, imm_scale_b, imm_trans_a, imm_trans_b (as the form has them)
    sp_meta: np.ndarray | None = None
    sp_sel: int = 0


def register_a_form(form):
    """The "``d, a, b-desc, ...``" form (A in registers) with the qualifiers of ``form``."""
    from ptxspec.spec import wgmma as wg
    from ptxspec.spec.catalogue import parse

    if wg.a_in_registers(form):
        return form
    names = {o.name for o in form.operands}
    d = ", ".join(f"d{i}" for i in range(wg.d_registers(form["shape"], form["dtype"])))
    template = f"{{{d}}}, {{a0, a1, a2, a3}}, bdesc"
    template += ", meta, sel" if "sp_meta" in names else ""
    template += ", p" + (", sa, sb" if "imm_scale_a" in names else "") + (", tb" if "imm_trans_b" in names else "")
    return parse(f"{form.text} {template}")


def descriptor_form(form):
    """The "``d, a-desc, b-desc, ...``" form with the qualifiers of ``form``."""
    from ptxspec.spec.catalogue import parse

    return parse(form.text)


def _layout_for(major: str, swizzle: str, mn_bytes: int, k_bytes: int) -> tuple[int, int, int]:
    """(LBO, SBO, size in bytes) of a canonical layout holding ``mn_bytes`` x ``k_bytes``
    (§9.7.15.5.1.2.1: see :func:`~ptxspec.semantics.wgmma_layout.canonical_offset`): the core
    matrices packed one after the other."""
    from ptxspec.semantics.wgmma_layout import SWIZZLE_BYTES

    w = SWIZZLE_BYTES[swizzle]
    if major == "K":
        rows = mn_bytes  # MN index per row of K bytes (mn_bytes here is the MN element count)
        if swizzle == "none":
            chunks = -(-k_bytes // 16)
            sbo = 128 * chunks  # 8 rows x 16 bytes per core matrix, the K chunks side by side
            return 128, sbo, sbo * (-(-rows // 8))
        return 16, 8 * w, 8 * w * (-(-rows // 8))
    k_groups = -(-k_bytes // 8)  # here k_bytes is the K element count: groups of 8 K
    if swizzle == "none":
        chunks = -(-mn_bytes // 16)
        return 128 * chunks, 128, 128 * chunks * k_groups
    atoms = -(-mn_bytes // w)
    return 8 * w * k_groups, 8 * w, 8 * w * k_groups * atoms


def _place(matrix: np.ndarray, element_type: str, major: str, swizzle: str, start: int, operand: str):
    """A descriptor (64-bit value) placing ``matrix`` at ``start`` and the bytes it needs."""
    from ptxspec.semantics.wgmma_layout import MatrixDescriptor, element_bits

    bits = element_bits(element_type)
    rows, cols = matrix.shape
    mn, k = (rows, cols) if operand == "a" else (cols, rows)
    if major == "K":
        lbo, sbo, size = _layout_for("K", swizzle, mn, k * bits // 8)
    else:
        lbo, sbo, size = _layout_for("MN", swizzle, mn * bits // 8, k)
    return MatrixDescriptor(start, lbo, sbo, 0, swizzle), size


def _round_up(x: int, to: int) -> int:
    return -(-x // to) * to


def wgmma_inputs(form, count: int, seed: int) -> list[tuple[object, WgmmaVector]]:
    """:func:`wgmma_input_iter` at once."""
    return list(wgmma_input_iter(form, count, seed))


def wgmma_input_iter(form, count: int, seed: int) -> Iterator[tuple[Form, WgmmaVector]]:
    """``count`` (form, operands) pairs of a wgmma ``form``, one at a time: vector ``i`` takes element class
    ``i mod len(classes)``, A's and B's swizzle modes from :data:`SWIZZLES` (A's the ``i``-th, B's
    the ``i // 4``-th of those that can hold the matrix, :func:`_swizzle`), A from registers in every fourth vector (``i mod 4 == 3``, the
    "d, a, b-desc" line), and random major-ness where the form transposes; the bytes of the
    image that no matrix uses are random."""
    from ptxspec.semantics import wgmma_layout as wl
    from ptxspec.spec import wgmma as wg

    check_count_seed(count, seed)
    rng = rng_for(form.text, seed)
    m, n, k = wg.parse_shape(form["shape"])
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    sparse = wg.is_sparse(form)
    names = {o.name for o in descriptor_form(form).operands}
    classes = classes_of(atype, dense=False)
    d_layout = wl.fragment_layout(form["shape"], "d", dtype)
    for i in range(count):
        klass = classes[i % len(classes)]
        a_regs = i % 4 == 3
        f = register_a_form(form) if a_regs else descriptor_form(form)
        stored_k = k // 2 if sparse else k
        A = elements(rng, atype, klass, (m, stored_k))
        B = elements(rng, btype, klass, (k, n))
        C = elements(rng, dtype, klass, (m, n), accumulator=True)
        imm = {}
        if "imm_scale_a" in names:
            imm["imm_scale_a"] = int(rng.choice([1, -1]))
            imm["imm_scale_b"] = int(rng.choice([1, -1]))
        trans_a = int(rng.integers(0, 2)) if "imm_trans_a" in names and not a_regs else 0
        trans_b = int(rng.integers(0, 2)) if "imm_trans_b" in names else 0
        if "imm_trans_a" in names and not a_regs:
            imm["imm_trans_a"] = trans_a
        if "imm_trans_b" in names:
            imm["imm_trans_b"] = trans_b
        swizzle_a = _swizzle(i, "MN" if trans_a else "K", stored_k, atype)
        swizzle_b = _swizzle(i // 4, "MN" if trans_b else "K", k, btype)
        sp_meta, sp_sel = None, 0
        if sparse:
            sels = wg.selectors(f)
            sp_sel = sels[i % len(sels)]
            sp_meta = _wgmma_metadata(rng, form, sp_sel)
        desc_b, b_size = _place(B, btype, "MN" if trans_b else "K", swizzle_b, 0, "b")
        if a_regs:
            a_value = wl.fragment_layout(form["shape"], "a", atype, sparse=sparse).from_matrix(A)
            image_size = b_size
            start_b = 0
        else:
            desc_a, a_size = _place(A, atype, "MN" if trans_a else "K", swizzle_a, 0, "a")
            start_b = _round_up(a_size, 1024)
            image_size = start_b + b_size
        image = rng.integers(0, 256, _round_up(image_size, 16), dtype=np.uint8)
        if not a_regs:
            image = wl.write_matrix(image, desc_a, A, atype, "MN" if trans_a else "K", operand="a")
            a_value = desc_a.encode()
        desc_b = attrs.evolve(desc_b, start_address=start_b)
        image = wl.write_matrix(image, desc_b, B, btype, "MN" if trans_b else "K", operand="b")
        scale_d = int(rng.random() < 0.85)
        yield f, WgmmaVector(image.tobytes(), a_value, desc_b.encode(), d_layout.from_matrix(C), scale_d, imm, sp_meta, sp_sel)


def _swizzle(i: int, major: str, k: int, element_type: str) -> str:
    """The ``i``-th swizzle mode (cycling through :data:`SWIZZLES`) among those that can hold the
    matrix: a K-major swizzled row holds ``W`` bytes of K (§9.7.15.5.1.2; the sparse forms' B has
    64 bytes of K, which the 32-byte mode cannot hold)."""
    from ptxspec.semantics.wgmma_layout import SWIZZLE_BYTES, element_bits

    k_bytes = k * element_bits(element_type) // 8
    modes = [m for m in SWIZZLES if major != "K" or m == "none" or SWIZZLE_BYTES[m] >= k_bytes]
    return modes[i % len(modes)]


def _wgmma_metadata(rng: np.random.Generator, form, selector: int) -> np.ndarray:
    """sp-meta of the 128 threads: valid fields (§9.7.15.6.1) where the selector reads them."""
    from ptxspec.semantics import wgmma_layout as wl
    from ptxspec.semantics.matrix_layout import field_defined

    meta = wl.warp_metadata_layout(form["shape"], form["atype"])
    fields = [f for f in range(16) if field_defined(f, form["atype"], False)]
    out = np.zeros(THREADS, np.uint64)
    for row in range(64):
        for block in range(meta.blocks):
            thread, bit = wl.metadata_field(form["shape"], form["atype"], row, block, selector)
            out[thread] |= np.uint64(fields[int(rng.integers(0, len(fields)))] << bit)
    return out


def _wgmma_keywords(v: WgmmaVector) -> dict:
    imm = v.immediates
    kw = {
        "imm_scale_a": imm.get("imm_scale_a", 1),
        "imm_scale_b": imm.get("imm_scale_b", 1),
        "imm_trans_a": imm.get("imm_trans_a", 0),
        "imm_trans_b": imm.get("imm_trans_b", 0),
    }
    if v.sp_meta is not None:
        kw["sp_sel"] = v.sp_sel
    return kw


def _registers_of(registers: np.ndarray) -> np.ndarray:
    """uint64 registers, or an object array (ints and sets) where some register is a set."""
    if registers.dtype != object:
        return np.asarray(registers, dtype=np.uint64)
    return np.array(
        [[int(x) if isinstance(x, (int, np.integer)) else x for x in row] for row in registers.reshape(-1, registers.shape[-1])], dtype=object
    ).reshape(registers.shape)


def wgmma_output(form, v: WgmmaVector, profile="spec") -> np.ndarray:
    """D's registers ``[128, R]`` of one wgmma vector by
    :func:`ptxspec.semantics.wgmma.wgmma_mma_async` (uint64, or an object array where D is a
    set)."""
    from ptxspec.semantics.wgmma import wgmma_mma_async

    kw = _wgmma_keywords(v)
    if v.sp_meta is not None:
        kw["sp_meta"] = v.sp_meta
    image = np.frombuffer(v.image, np.uint8)
    result = wgmma_mma_async(form, image, v.a, v.desc_b, v.d, scale_d=bool(v.scale_d), profile=profile, **kw)
    return _registers_of(np.asarray(result.registers))


def wgmma_outputs(pairs: Sequence[tuple[Form, WgmmaVector]], profile="spec") -> list[np.ndarray]:
    """:func:`wgmma_output` of many vectors: those of one syntax line, one set of immediates and
    one image size go through :func:`ptxspec.semantics.wgmma.wgmma_batch` together (where the
    semantics has it; else one at a time)."""
    from ptxspec.semantics import wgmma as semantics

    batch = getattr(semantics, "wgmma_batch", None)
    out: list = [None] * len(pairs)
    if batch is None:
        return [wgmma_output(f, v, profile) for f, v in pairs]
    groups: dict = {}
    for i, (f, v) in enumerate(pairs):
        key = (f.family.key, tuple(sorted(_wgmma_keywords(v).items())), len(v.image))
        groups.setdefault(key, []).append(i)
    for rows in groups.values():
        f = pairs[rows[0]][0]
        vs = [pairs[i][1] for i in rows]
        kw = _wgmma_keywords(vs[0])
        if vs[0].sp_meta is not None:
            kw["sp_meta"] = np.stack([v.sp_meta for v in vs])
        images = np.stack([np.frombuffer(v.image, np.uint8) for v in vs])
        a = np.stack([np.asarray(v.a, dtype=np.uint64) for v in vs])
        registers = batch(
            f,
            images,
            a,
            np.array([v.desc_b for v in vs], np.uint64),
            np.stack([v.d for v in vs]),
            scale_d=np.array([v.scale_d for v in vs], bool),
            profile=profile,
            **kw,
        )
        registers = np.asarray(registers)
        for i, regs in zip(rows, registers):
            out[i] = _registers_of(regs)
    return out


def wgmma_inputs_json(form, v: WgmmaVector) -> dict:
    from ptxspec.spec import wgmma as wg

    obj: dict = {"image": "0x" + v.image.hex()}
    if wg.a_in_registers(form):
        obj["desc_a"] = _registers_json(np.asarray(v.a), 32)
    else:
        assert not isinstance(v.a, np.ndarray), "A in shared memory: v.a is its descriptor, not registers"
        obj["desc_a"] = _hex(v.a, 64)
    obj["desc_b"] = _hex(v.desc_b, 64)
    if v.sp_meta is not None:
        obj["sp_meta"] = [_hex(x, 32) for x in v.sp_meta.tolist()]
        obj["sp_sel"] = _hex(v.sp_sel, 32)
    obj["d"] = _registers_json(v.d, 32)
    obj["scale_d"] = _hex(v.scale_d, 1)
    for name in ("imm_scale_a", "imm_scale_b", "imm_trans_a", "imm_trans_b"):
        if name in v.immediates:
            obj[name] = _hex(v.immediates[name] & 0xFFFFFFFF, 32)
    return obj


def wgmma_dicts(form, count: int, seed: int, profile: str = "spec", *, batched: bool = True) -> Iterator[dict]:
    """The vectors of a wgmma form as dicts, :data:`CHUNK` at a time: D by :func:`wgmma_outputs`
    (``batched``) or :func:`wgmma_output` one vector at a time."""
    pairs = wgmma_input_iter(form, count, seed)
    while part := list(itertools.islice(pairs, CHUNK)):
        outputs = wgmma_outputs(part, profile) if batched else [wgmma_output(f, v, profile) for f, v in part]
        for (f, v), d in zip(part, outputs):
            yield _line(form.text, wgmma_inputs_json(f, v), d, 32, profile)


def wgmma_jsonl_chunks(form, count: int, seed: int, profile: str = "spec", progress=None) -> Iterator[bytes]:
    """The JSON Lines text of a wgmma form's vectors, :data:`CHUNK` lines at a time."""
    lines = (json.dumps(obj) + "\n" for obj in wgmma_dicts(form, count, seed, profile))
    done = 0
    while part := list(itertools.islice(lines, CHUNK)):
        done += len(part)
        if progress is not None:
            progress(form.text, done, count)
        yield "".join(part).encode("utf-8")


def generate(form, count: int, seed: int, profile: str = "spec") -> Iterator[dict]:
    """The vectors of a matrix form as dicts (the readable path: one vector at a time)."""
    if kind_of(form) == "wgmma":
        yield from wgmma_dicts(form, count, seed, profile, batched=False)
    else:
        yield from mma_dicts(form, count, seed, profile, batched=False)


def jsonl_chunks(form, count: int, seed: int, profile: str = "spec", progress=None) -> Iterator[bytes]:
    """The JSON Lines text of a matrix form's vectors (``ptxspec vectors``), a chunk at a time."""
    check_count_seed(count, seed)
    if kind_of(form) == "wgmma":
        return wgmma_jsonl_chunks(form, count, seed, profile, progress)
    return mma_jsonl_chunks(form, count, seed, profile, progress)


def jsonl_bytes(form, count: int, seed: int, profile: str = "spec", progress=None) -> bytes:
    """:func:`jsonl_chunks` joined."""
    return b"".join(jsonl_chunks(form, count, seed, profile, progress))


def mma_jsonl(form, count: int, seed: int, profile: str = "spec", progress=None) -> bytes:
    """:func:`mma_jsonl_chunks` joined."""
    return b"".join(mma_jsonl_chunks(form, count, seed, profile, progress))


# ---------------------------------------------------------------------------------------------
# Reading: located errors
# ---------------------------------------------------------------------------------------------


_HEX = re.compile(r"0[xX][0-9a-fA-F]+")


@functools.cache
def _hex_run(digits: int) -> re.Pattern:
    """Comma-separated hex strings of exactly ``digits`` digits each."""
    one = f"0[xX][0-9a-fA-F]{{{digits}}}"
    return re.compile(f"{one}(?:,{one})*")


def _fast_registers(value, lanes: int, count: int, width: int) -> np.ndarray | None:
    """``lanes`` lists of ``count`` hex strings of a ``width``-bit register read in one go (a
    regular expression over the joined strings), or None when anything differs: then
    :meth:`_Reader.registers` reads them one by one and locates the problem."""
    if width % 4 or not isinstance(value, list) or len(value) != lanes:
        return None
    if not all(type(lane) is list and len(lane) == count for lane in value):
        return None
    flat = _fast_hex([text for lane in value for text in lane], width)
    return None if flat is None else flat.reshape(lanes, count)


def _fast_hex(texts: list, width: int) -> np.ndarray | None:
    """A list of hex strings of a ``width``-bit register (width a multiple of 4) as uint64, or None."""
    try:
        joined = ",".join(texts)
    except TypeError:  # a set's JSON form, or not a string
        return None
    if _hex_run(_digits(width)).fullmatch(joined) is None:
        return None
    return np.array([int(text, 16) for text in texts], dtype=np.uint64)


class _Reader:
    """Parses one line's operands, every problem an :class:`OperandError` at ``file:line:column``
    (the column of the field's key in the line)."""

    def __init__(self, raw: str, source: str, number: int, form) -> None:
        self.raw, self.source, self.number, self.form = raw, source, number, form

    def where(self, key: str) -> Location:
        at = self.raw.find(f'"{key}"')
        return Location(self.source, self.number, at + 1 if at >= 0 else 1)

    def fail(self, key: str, message: str, section: str | None = None) -> OperandError:
        return OperandError(f"{self.form.text}: {message}", where=self.where(key), section=section)

    def bits(self, text, width: int, what: str, key: str) -> int:
        digits = _digits(width)
        if not isinstance(text, str) or not text.lower().startswith("0x") or len(text) < 3:
            raise self.fail(key, f"{what}: expected a hex string '0x' + {digits} digit(s) (a {width}-bit register), got {show_value(text)}")
        if _HEX.fullmatch(text) is None:
            raise self.fail(key, f"{what}: {shorten(text)!r} is not hexadecimal")
        value = int(text, 16)
        if len(text) != digits + 2:
            raise self.fail(key, f"{what}: expected {digits} hex digit(s) for a {width}-bit register, got {len(text) - 2} in {shorten(text)!r}")
        if value >> width:
            raise self.fail(key, f"{what}: {shorten(text)} does not fit in a {width}-bit register")
        return value

    def registers(self, value, lanes: int, count: int, width: int, what: str, key: str, *, claims: bool = False):
        """``lanes`` lists of ``count`` registers: uint64 ``[lanes, count]`` (and, with ``claims``,
        a dict of the (lane, register) whose entry is a set's JSON form)."""
        fast = _fast_registers(value, lanes, count, width)
        if fast is not None:
            return (fast, {}) if claims else fast
        unit = "lanes" if lanes == WARP else "threads"
        if not isinstance(value, list) or len(value) != lanes:
            got = f"{len(value)} entries" if isinstance(value, list) else json.dumps(value)[:40]
            raise self.fail(key, f"{what}: expected a list of {lanes} {unit} (each a list of its {count} register(s)), got {got}")
        out = np.zeros((lanes, count), np.uint64)
        sets = {}
        for lane, regs in enumerate(value):
            if not isinstance(regs, list) or len(regs) != count:
                got = f"{len(regs)}" if isinstance(regs, list) else json.dumps(regs)[:40]
                raise self.fail(key, f"{what}, {unit[:-1]} {lane}: expected a list of {count} register(s), got {got}")
            for r, text in enumerate(regs):
                if claims and isinstance(text, dict):
                    sets[(lane, r)] = text
                    continue
                out[lane, r] = self.bits(text, width, f"{what}, {unit[:-1]} {lane}, register {r}", key)
        return (out, sets) if claims else out

    def allowed(self, obj: dict, lanes: int, count: int) -> list | None:
        allowed = obj.get("allowed")
        if allowed is None:
            return None
        if not isinstance(allowed, list) or len(allowed) != 1:
            raise self.fail("allowed", "field 'allowed': expected a list with one entry for D")
        d = allowed[0]
        if d is None:
            return [[None] * count for _ in range(lanes)]
        if (
            not isinstance(d, list)
            or len(d) != lanes
            or not all(isinstance(x, list) and len(x) == count and all(y is None or isinstance(y, dict) for y in x) for x in d)
        ):
            raise self.fail("allowed", f"field 'allowed': expected D's {lanes} lanes of {count} entries, each null or a set")
        return d


@attrs.frozen(eq=False)
class MatrixVector:
    """One parsed line of a matrix form: its operands (:class:`MmaBatch` of one vector, or a
    :class:`WgmmaVector` with its form), observed D ``[lanes, R]`` with the registers written as a
    set (``claims``), the ``allowed`` claims, and where it is."""

    info: MatrixInfo
    form: Form
    operands: MmaBatch | WgmmaVector
    observed: np.ndarray
    claims: dict
    allowed: list | None
    vector_profile: str
    where: Location
    inputs_json: object = None


@attrs.frozen(eq=False)
class MatrixMismatch:
    vector: MatrixVector
    why: str
    lane: int
    register: int
    expected: int | np.integer | Allowed

    def describe(self) -> list[str]:
        v = self.vector
        unit = "thread" if self.vector.info.kind == "wgmma" else "lane"
        from ptxspec.conformance.check_vectors import decoded

        destinations = v.info.form.destinations
        register_type = destinations[self.register].type if self.register < len(destinations) else "b32"

        def text(bits) -> str:  # hex, and the value where the register holds one number
            return decoded(int(bits), register_type)

        observed = v.claims.get((self.lane, self.register))
        observed = text(v.observed[self.lane, self.register]) if observed is None else json.dumps(observed)
        expected = self.expected
        expected_text = text(expected) if isinstance(expected, (int, np.integer)) else f"{expected.describe()} ({json.dumps(expected.to_json())})"
        return [
            f"{v.where}: {v.form.text}: {self.why}",
            f"    first difference: D {unit} {self.lane}, register {self.register} (d.{self.register})",
            f"    expected = {expected_text}",
            f"    observed = {observed}",
        ]


@attrs.define(eq=False)
class MatrixInfo:
    """check-vectors' view of a matrix form (``warp`` and ``matrix`` are what check_vectors.py
    tests): how to read a line of it and how to check a group of them."""

    form: Form
    kind: str
    d_lanes: int
    d_registers: int
    d_bits: int
    warp: bool = True
    matrix: bool = True

    def parse_vector(self, raw: str, obj: dict, source: str, number: int) -> MatrixVector:
        return parse_vector(self, raw, obj, source, number)

    def check(self, vectors: Sequence[MatrixVector], profile: str) -> list[MatrixMismatch]:
        return check(self, vectors, profile)


def form_info(instr: str) -> MatrixInfo | str | None:
    """The :class:`MatrixInfo` of ``instr`` if it is a matrix form, why ptxspec cannot check it (an
    mma form without semantics), or None for every other text."""
    from ptxspec.spec.catalogue import parse

    try:
        form = parse(instr)
    except PtxSpecError:
        return None
    kind = kind_of(form)
    if kind is None:
        return None
    try:
        matrix_form(instr)
    except PtxSpecError as error:
        return error.message
    if kind == "mma":
        ld = layouts(form)["d"]
        return MatrixInfo(form, kind, WARP, ld.registers, ld.register_bits)
    from ptxspec.spec import wgmma as wg

    return MatrixInfo(form, kind, THREADS, wg.d_registers(form["shape"], form["dtype"]), 32)


def parse_vector(info: MatrixInfo, raw: str, obj: dict, source: str, number: int) -> MatrixVector:
    """One line of a matrix form, checked against the form (counts of operands, lanes, registers
    and hex digits); raises a located :class:`OperandError` at the first problem."""
    form = info.form
    r = _Reader(raw, source, number, form)
    outputs = obj["outputs"]
    if not isinstance(outputs, list) or len(outputs) != 1:
        raise r.fail("outputs", "field 'outputs': expected [D], one destination (D's registers of every lane)")
    observed, claims = r.registers(outputs[0], info.d_lanes, info.d_registers, info.d_bits, "output D", "outputs", claims=True)
    allowed = r.allowed(obj, info.d_lanes, info.d_registers)
    profile = obj.get("profile", "spec")
    if not isinstance(profile, str):
        raise r.fail("profile", f"field 'profile': expected a profile name, got {show_value(profile)}")
    if info.kind == "mma":
        operands, vform = _parse_mma_inputs(r, info, obj["inputs"]), form
    else:
        vform, operands = _parse_wgmma_inputs(r, info, obj["inputs"])
    return MatrixVector(info, vform, operands, observed, claims, allowed, profile, Location(source, number))


def _parse_mma_inputs(r: _Reader, info: MatrixInfo, inputs) -> MmaBatch:
    form = info.form
    L = layouts(form)
    sparse = is_sparse(form)
    names = "A, B, C, e, f" if sparse else "A, B, C"
    expected = 5 if sparse else 3
    if not isinstance(inputs, list) or len(inputs) != expected:
        got = f"{len(inputs)}" if isinstance(inputs, list) else json.dumps(inputs)[:40]
        raise r.fail("inputs", f"field 'inputs': expected [{names}] ({expected} operands), got {got}", MMA_SP_SECTION if sparse else MMA_SECTION)
    regs = [r.registers(inputs[k], WARP, L[o].registers, L[o].register_bits, f"input {o.upper()}", "inputs") for k, o in enumerate("abc")]
    batch = MmaBatch(*(x[None] for x in regs))
    if sparse:
        e = inputs[3]
        if not isinstance(e, list) or len(e) != WARP:
            raise r.fail("inputs", f"input e (the metadata): expected a list of {WARP} lanes' registers, got {json.dumps(e)[:40]}", MMA_SP_SECTION)
        ev = _fast_hex(e, 32)
        if ev is None:
            ev = np.array([r.bits(x, 32, f"input e, lane {k}", "inputs") for k, x in enumerate(e)], np.uint64)
        f = r.bits(inputs[4], 32, "input f (the sparsity selector)", "inputs")
        from ptxspec.semantics.matrix_layout import metadata_layout

        try:
            metadata_layout(form["shape"], form["atype"]).check_selector(f)
        except OperandError as error:
            raise r.fail("inputs", error.message, error.section) from None
        batch = attrs.evolve(batch, e=ev[None], f=_u64([f]))
    return batch


def _parse_wgmma_inputs(r: _Reader, info: MatrixInfo, inputs):
    from ptxspec.semantics import wgmma_layout as wl
    from ptxspec.spec import wgmma as wg

    if not isinstance(inputs, dict):
        raise r.fail("inputs", "field 'inputs': a wgmma vector's inputs are an object {image, desc_a, desc_b, d, scale_d, ...}", WGMMA_SECTION)
    base = info.form
    a_value = inputs.get("desc_a")
    form = register_a_form(base) if isinstance(a_value, list) else descriptor_form(base)
    names = {o.name for o in form.operands}
    keys = ["image", "desc_a", "desc_b", "d", "scale_d"] + [
        n for n in ("sp_meta", "sp_sel", "imm_scale_a", "imm_scale_b", "imm_trans_a", "imm_trans_b") if n in names
    ]
    for key in keys:
        if key not in inputs:
            raise r.fail("inputs", f"field 'inputs': missing {key!r} (this form's inputs: {', '.join(keys)})", WGMMA_SECTION)
    extra = sorted(set(inputs) - set(keys))
    if extra:
        raise r.fail(extra[0], f"field 'inputs': {shorten(extra[0])!r} is not an operand of this form (its inputs: {', '.join(keys)})", WGMMA_SECTION)
    image_text = inputs["image"]
    if not isinstance(image_text, str) or not image_text.startswith("0x") or len(image_text) % 2:
        raise r.fail("image", "input image: expected '0x' and two hex digits per byte of shared memory, address 0 first")
    try:
        image = bytes.fromhex(image_text[2:])
    except ValueError:
        raise r.fail("image", "input image: not hexadecimal (two hex digits per byte, address 0 first)") from None
    if wg.a_in_registers(form):
        a = r.registers(a_value, THREADS, wg.A_REGISTERS, 32, "input desc_a (A's registers)", "desc_a")
    else:
        a = r.bits(a_value, 64, "input desc_a (A's matrix descriptor)", "desc_a")
    desc_b = r.bits(inputs["desc_b"], 64, "input desc_b (B's matrix descriptor)", "desc_b")
    d = r.registers(inputs["d"], THREADS, wg.d_registers(form["shape"], form["dtype"]), 32, "input d (the accumulator)", "d")
    scale_d = r.bits(inputs["scale_d"], 1, "input scale_d (a predicate)", "scale_d")
    imm = {}
    for name in ("imm_scale_a", "imm_scale_b", "imm_trans_a", "imm_trans_b"):
        if name in inputs:
            value = r.bits(inputs[name], 32, f"input {name}", name)
            imm[name] = value - (1 << 32) if value >> 31 else value
    sp_meta, sp_sel = None, 0
    if "sp_meta" in names:
        meta = inputs["sp_meta"]
        if not isinstance(meta, list) or len(meta) != THREADS:
            raise r.fail("sp_meta", f"input sp_meta: expected a list of {THREADS} threads' registers")
        sp_meta = _fast_hex(meta, 32)
        if sp_meta is None:
            sp_meta = np.array([r.bits(x, 32, f"input sp_meta, thread {k}", "sp_meta") for k, x in enumerate(meta)], np.uint64)
        sp_sel = r.bits(inputs["sp_sel"], 32, "input sp_sel", "sp_sel")
    try:
        wg.check_immediates(form, **imm, **({"sp_sel": sp_sel} if sp_meta is not None else {}))
        for _name, value in (("desc_b", desc_b),) + ((("desc_a", a),) if not wg.a_in_registers(form) else ()):
            wl.MatrixDescriptor.decode(value)
    except OperandError as error:
        raise r.fail("inputs", error.message, error.section) from None
    return form, WgmmaVector(image, a, desc_b, d, scale_d, imm, sp_meta, sp_sel)


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------


def _claim_matches(claim: dict, result) -> bool:
    """Whether a claimed set (``eval --json``'s encoding, hex in either case) is ``result``'s."""
    return not isinstance(result, (int, np.integer)) and hex_lower(claim) == result.to_json()


def judge(vector: MatrixVector, expected: np.ndarray, profile: str) -> MatrixMismatch | None:
    """The first register (lane by lane, register by register) whose observed value the expected
    result does not allow, or whose ``allowed`` claim (when the vector's profile is the one
    checked) is not the expected set; None when all agree."""
    from ptxspec.semantics.results import contains

    lanes, count = expected.shape
    checked_claims = vector.allowed if vector.vector_profile == profile else None
    for lane in range(lanes):
        for r in range(count):
            e = expected[lane, r]
            claim = vector.claims.get((lane, r))
            if claim is not None:
                if not _claim_matches(claim, e):
                    return MatrixMismatch(vector, f"D: the vector gives the set {json.dumps(claim)}", lane, r, e)
            elif not contains(int(e) if isinstance(e, (int, np.integer)) else e, int(vector.observed[lane, r])):
                return MatrixMismatch(vector, f"D: {_hex(vector.observed[lane, r], vector.info.d_bits)} is not allowed", lane, r, e)
            if checked_claims is not None:
                a = checked_claims[lane][r]
                fixed = isinstance(e, (int, np.integer))
                if (a is None) != fixed or (a is not None and not _claim_matches(a, e)):
                    said = "fixed" if a is None else json.dumps(a)
                    return MatrixMismatch(
                        vector, f"D: 'allowed' claims {said}; the {profile} profile gives {'a fixed result' if fixed else 'a set'}", lane, r, e
                    )
    return None


def _mma_operands(v: MatrixVector) -> MmaBatch:
    assert isinstance(v.operands, MmaBatch), f"{v.where}: an mma vector's operands are an MmaBatch"
    return v.operands


def _wgmma_operands(v: MatrixVector) -> WgmmaVector:
    assert isinstance(v.operands, WgmmaVector), f"{v.where}: a wgmma vector's operands are a WgmmaVector"
    return v.operands


def _sparse_part(part: np.ndarray | None) -> np.ndarray:
    assert part is not None, "every vector of an mma.sp group has metadata and a selector"
    return part


def _expected_mma(info: MatrixInfo, vectors: Sequence[MatrixVector], profile: str) -> np.ndarray:
    ops = [_mma_operands(v) for v in vectors]
    stack = MmaBatch(
        np.concatenate([o.a for o in ops]),
        np.concatenate([o.b for o in ops]),
        np.concatenate([o.c for o in ops]),
        None if ops[0].e is None else np.concatenate([_sparse_part(o.e) for o in ops]),
        None if ops[0].f is None else np.concatenate([_sparse_part(o.f) for o in ops]),
    )
    return mma_outputs(info.form, stack, profile)


def _locate_failure(info: MatrixInfo, vectors: Sequence[MatrixVector], profile: str) -> None:
    """Raise the semantics' complaint about the first vector it refuses, located at its line."""
    for v in vectors:
        try:
            _expected_mma(info, [v], profile)
        except PtxSpecError as error:
            raise PtxSpecError(error.message, where=v.where, section=error.section) from None


def check(info: MatrixInfo, vectors: Sequence[MatrixVector], profile: str) -> list[MatrixMismatch]:
    """The mismatches among vectors of one matrix form. mma: the whole group recomputed at once
    (:func:`mma_outputs`), the observed registers compared as an array where every result is bits
    and no register is written as a set, else register by register (:func:`judge`). wgmma: in
    groups by :func:`wgmma_outputs`."""
    if not vectors:
        return []
    out = []
    if info.kind == "mma":
        for start in range(0, len(vectors), CHUNK):
            part = vectors[start : start + CHUNK]
            try:
                expected = _expected_mma(info, part, profile)
            except PtxSpecError:
                _locate_failure(info, part, profile)
                raise
            if expected.dtype != object:
                observed = np.stack([v.observed for v in part])
                plain = np.array([not v.claims and (v.allowed is None or v.vector_profile != profile) for v in part])
                bad = ~plain | (observed != expected).any(axis=(1, 2))
            else:
                bad = np.ones(len(part), bool)
            for i in np.flatnonzero(bad).tolist():
                found = judge(part[i], expected[i], profile)
                if found is not None:
                    out.append(found)
        return out
    for start in range(0, len(vectors), CHUNK):
        part = vectors[start : start + CHUNK]
        try:
            expected_d = wgmma_outputs([(v.form, _wgmma_operands(v)) for v in part], profile)
        except PtxSpecError:
            for v in part:  # locate the vector the semantics refuses
                try:
                    wgmma_output(v.form, _wgmma_operands(v), profile)
                except PtxSpecError as error:
                    raise PtxSpecError(error.message, where=v.where, section=error.section) from None
            raise
        for v, e in zip(part, expected_d):
            found = judge(v, e, profile)
            if found is not None:
                out.append(found)
    return out


__all__ = [
    "MmaBatch",
    "WgmmaVector",
    "MatrixInfo",
    "MatrixVector",
    "MatrixMismatch",
    "check",
    "form_info",
    "generate",
    "jsonl_bytes",
    "kind_of",
    "matrix_form",
    "mma_inputs",
    "mma_outputs",
    "mma_reference",
    "parse_vector",
    "wgmma_inputs",
    "wgmma_output",
    "wgmma_outputs",
]
