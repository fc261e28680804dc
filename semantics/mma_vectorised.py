"""The accumulation datapath of :mod:`ptxspec.semantics.mma` on numpy arrays: an optimisation.

A :class:`~ptxspec.semantics.mma.Datapath` has one meaning, :func:`ptxspec.semantics.mma.datapath_dot`:
one element of D from a row of A, a column of B and an element of C, in exact Python integers,
written to be read next to §9.7.14.5.14 "Precision and rounding". This module computes the same
bits for whole batches of matrices; :func:`ptxspec.semantics.mma.datapath_matrix` asks it first.
Nothing here is a definition, and a disagreement with the readable model is a bug here.

**Contract.** Where :func:`datapath_arrays` returns an array, its element ``[..., i, j]`` equals
``datapath_dot(model, atype, btype, ctype, dtype, A[..., i, :], B[..., :, j], C[..., i, j])`` bit
for bit, for every input (NaNs, infinities, zeros of either sign, subnormals, overflow); where it
cannot prove one of its paths exact for the model it returns None, and the readable model is
evaluated element by element. The tests that hold it to the contract compare integer bit patterns
with the readable model's, never floats:

* ``tests/test_mma_vectorised.py`` (Hypothesis over every parameter of the model, every measured
  type combination and every input class): ``test_float64_path_equals_readable``,
  ``test_int64_path_equals_readable``, ``test_float64_path_equals_int64_path``,
  ``test_zero_signs_equal_readable``, ``test_heavy_paths_equal_readable``,
  ``test_measured_datapaths_on_every_class``, ``test_float64_proof_at_its_edge``,
  ``test_batch_shapes_broadcast``, ``test_zero_reference_equals_readable``,
  ``test_block_scaled_float64_path_equals_readable`` (the sm_100 profile's ``zero_reference``,
  block scale factors and ``scale_group``);
* ``tests/test_mma_m8n8k4.py``: ``test_binary32_path_equals_readable``;
* ``tests/test_mma.py``: ``test_vectorised_model_equals_readable``.

**Paths.** The steps of datapath_dot -- the products taken in groups in the model's order, C
joining the first step, the last, a step of its own or a tree's last step, the accumulator rounded
between steps, the last sum rounded into D -- are written once, :func:`_steps`, over three
representations of a step's sum, tried in this order:

1. float64 (:func:`float64_exact`; every measured datapath that aligns its addends): each addend a
   float64 value and a reference exponent, cut by a power-of-two scaling and ``trunc``/``floor``,
   summed as float64; every operation is proven exact.
2. binary32 (:func:`binary32_exact`; ptxas's binary32 code for m8n8k4 .f16 on sm_90): no
   alignment, every step one IEEE 754 binary32 addition, which numpy's float32 addition is.
3. int64 (:func:`vectorisable`): sign, significand, exponent and reference exponent as int64
   arrays, cut by shifts; any alignment width whose sums stay below 2^60.

Every rounding is the numerics core's, batched: :func:`~ptxspec.semantics.batch_rounding.round_bits`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics import batch_rounding
from ptxspec.semantics.mma import BINARY32, Datapath, _fmt, _format, order_indices, per_k_scales
from ptxspec.semantics.numerics import Rounding, canonical_nan

#: Dot products per block of the float64 path: a block's [K, block] temporaries (1 MiB of float64
#: at K = 16) stay in the caches and are reused by the allocator rather than mapped afresh.
BLOCK = 1 << 13
#: Dot products per block of the int64 path (bounds the size of the temporaries).
INT64_BLOCK = 1 << 15


def datapath_arrays(
    model: Datapath, atype: str, btype: str, ctype: str, dtype: str, A: np.ndarray, B: np.ndarray, C: np.ndarray, scales: tuple | None = None
) -> np.ndarray | None:
    """D (element bits, uint64 ``[..., M, N]``) of A ``[..., M, K]``, B ``[..., K, N]``, C
    ``[..., M, N]`` under ``model`` (batch dimensions broadcast): in float64 where
    :func:`float64_exact` proves every operation exact, in float32 where :func:`binary32_exact`
    does, else in int64 where :func:`vectorisable`; None where no path runs ``model`` (block
    scale factors, ``scales``: ``(stype, scale_A [..., M, V], scale_B [..., V, N])``, in float64
    only)."""
    A, B, C = (np.asarray(x, dtype=np.uint64) for x in (A, B, C))
    if scales is not None or model.scale_group is not None:
        if scales is None or not float64_exact(model, atype, btype, ctype, A.shape[-1], stype=scales[0]):
            return None
        stype, SA, SB = scales
        SA, SB = per_k_scales(A.shape[-1], SA, SB)
        m, k = A.shape[-2:]
        n = B.shape[-1]
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2], SA.shape[:-2], SB.shape[:-2])
        A, B, C, SA, SB = (np.broadcast_to(x, batch + x.shape[-2:]).reshape((-1,) + x.shape[-2:]) for x in (A, B, C, SA, SB))
        with np.errstate(invalid="ignore"):  # 0 * inf, inf - inf and NaN scale factors are NaNs on purpose
            return _float64_dots(model, atype, btype, ctype, dtype, A, B, C, scales=(stype, SA, SB)).reshape(batch + (m, n))
    m, k = A.shape[-2:]
    n = B.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2])
    for exact, dots in ((float64_exact(model, atype, btype, ctype, k), _float64_dots), (binary32_exact(model, atype, btype, ctype, dtype, k), _binary32_dots)):
        if exact:
            A, B, C = (np.broadcast_to(x, batch + x.shape[-2:]).reshape((-1,) + x.shape[-2:]) for x in (A, B, C))
            with np.errstate(invalid="ignore"):  # 0 * inf and inf - inf are NaNs on purpose
                return dots(model, atype, btype, ctype, dtype, A, B, C).reshape(batch + (m, n))
    if not vectorisable(model, atype, btype, k):
        return None
    rows = np.broadcast_to(A[..., :, None, :], batch + (m, n, k)).reshape(-1, k)
    cols = np.broadcast_to(np.swapaxes(B, -1, -2)[..., None, :, :], batch + (m, n, k)).reshape(-1, k)
    cs = np.broadcast_to(C, batch + (m, n)).reshape(-1)
    out = np.empty(cs.shape, dtype=np.uint64)
    for start in range(0, cs.size, INT64_BLOCK):
        sl = slice(start, start + INT64_BLOCK)
        out[sl] = _int64_dots(model, atype, btype, ctype, dtype, rows[sl], cols[sl], cs[sl])
    return out.reshape(batch + (m, n))


# ---------------------------------------------------------------------------------------------
# The steps, once for every representation
# ---------------------------------------------------------------------------------------------

#: A step's sum and an addend of a step, in a path's representation.
_Sum = TypeVar("_Sum")
_Addend = TypeVar("_Addend")


def _steps(
    model: Datapath,
    k: int,
    c: _Addend,
    step: Callable[[slice, list[_Addend], int | None], _Sum],
    accumulate: Callable[[_Sum], _Addend],
    final: Callable[[_Sum], np.ndarray],
) -> np.ndarray:
    """The step structure of :func:`~ptxspec.semantics.mma.datapath_dot` (and its ``_tree``) on a
    batch of ``k``-product dot products in any representation: ``step`` sums a step's addends
    (products and ``extras``, C ``c`` among them) as the model aligns and cuts them, ``accumulate``
    rounds a step's sum into the accumulator and gives it back as an addend, ``final`` rounds the
    last step's sum into D's bits."""
    size = model.chunk or k
    groups = [slice(s, min(k, s + size)) for s in range(0, k, size)]
    no_products = slice(0, 0)
    if model.c_step == "tree":  # each group summed on its own, then the partial sums and C
        partials = [accumulate(step(g, [], model.alignment_bits)) for g in groups]
        if model.tree_sum == "one step":
            return final(step(no_products, partials + [c], model.alignment_bits))
        acc = c  # "chain": C, then each partial sum in a step of its own
        for partial in partials[:-1]:
            acc = accumulate(step(no_products, [acc, partial], model.alignment_bits))
        return final(step(no_products, [acc, partials[-1]], model.alignment_bits))
    if model.c_step == "alone":  # C is added to the products' sum in a step of its own
        groups.append(no_products)
    running: list[_Addend] = [c] if model.c_step == "first" else []
    for g in groups[:-1]:
        running = [accumulate(step(g, running, model.alignment_bits))]
    if model.c_step in ("last", "alone"):
        running.append(c)
    width = model.c_step_model().alignment_bits if model.c_step == "alone" else model.alignment_bits
    return final(step(groups[-1], running, width))


def _final_arrays(sign, sig, grid, fd: FloatFormat, model: Datapath, infinite, nan, pos_inf) -> np.ndarray:
    """The last step's sum (sign, integer magnitude, exponent of its last place) into D's bits, as
    ``mma._final`` does: through ``via`` first, an overflow to infinity where the model says so,
    then D's rounding; ``infinite``, ``nan`` and ``pos_inf`` mark the results the specials decide."""
    if model.via is not None:
        vf = _format(model.via, "via")
        bits = batch_rounding.round_bits(sign, sig, grid, vf, model.via_rounding)
        sign, sig, grid, _, vinf = batch_rounding.decode(vf, bits.astype(np.uint64))
        vinf &= ~infinite & ~nan  # a NaN or infinite input decides those results (datapath_dot)
        if vinf.any():
            infinite = infinite | vinf
            pos_inf = pos_inf | (vinf & ~sign)
            sig = np.where(vinf, 0, sig)
    if model.overflow == "infinity":
        beyond = (sig != 0) & (grid + batch_rounding.bit_length(sig) - 1 > fd.max_exponent) & ~infinite & ~nan
        pos_inf = pos_inf | (beyond & ~sign)
        infinite = infinite | beyond
    sign = np.where(infinite, ~pos_inf, sign)
    nan_bits = canonical_nan(fd) if model.nan is None else model.nan
    bits = batch_rounding.round_bits(sign, sig, grid, fd, model.rounding, ftz=model.flush_output, infinite=infinite, nan=nan, nan_bits=nan_bits)
    if model.zero_sign == "positive":
        bits = np.where(bits == fd.sign_mask, 0, bits)
    return bits.astype(np.uint64)


# ---------------------------------------------------------------------------------------------
# float64, where that is exact (every measured datapath that aligns)
# ---------------------------------------------------------------------------------------------

#: The reference exponent of an addend that is not live (a zero, an infinity or a NaN): far below
#: every real one (float64_exact keeps those within +-1100), and twice it still fits int16.
NOT_LIVE = -8000


def float64_exact(model: Datapath, atype: str, btype: str, ctype: str, k: int, stype: str | None = None) -> bool:
    """Whether :func:`_float64_dots` computes ``model`` exactly: float64 arithmetic is exact whenever
    its result is representable, and the conditions below make every result representable.

    The addends of a step are products ``a * b``, C and the accumulator. For each kind let its
    values lie in ``[2^low, 2^high)`` (``low`` the last place of its smallest subnormal) with at
    most ``precision`` significant bits; a product has ``precision_a + precision_b`` bits and
    ``low_a + low_b``, ``high_a + high_b``. Then:

    1. inputs, C and the accumulator are float64 numbers (precision <= 53, ``low >= -1022``,
       ``high <= 1024``), and so is every product (the same test on the product's bounds);
    2. a step cuts ``x * 2^-grid`` with ``grid = R - E`` (R the step's largest reference, E its
       alignment bits, ``low - 1 <= R < high``): ``2^-grid`` is a float64 and multiplying by it only moves
       the exponent, exact while the result stays normal: ``x * 2^-grid >= 2^(low - grid)``, so
       ``low - (high - 1 - E) >= -1022`` suffices; trunc and floor are exact;
    3. a live addend is below ``2^(R + 2)`` (a product of two significands below 2 each, its
       reference the sum of theirs), so a cut addend is an integer of magnitude below ``2^(E + 2)``
       and the sum of a step's at most ``k + 1`` of them is below ``2^(E + 2 + bitlen(k + 1))``:
       when that is at most 2^53 every partial sum is an integer float64 represents, and the sum
       is exact in any order.

    With block scale factors of ``stype`` a product is ``a * b * sa * sb`` (bounds and precision
    of four factors, each scale significand below 2 too); with a ``scale_group`` G an addend is
    the sum of G products times the two scale factors, below ``2^(high_a + high_b + bitlen(G))``
    times them, and a step has ``ceil(k / G)`` of them. A ``zero_reference`` is a reference
    exponent too (it must lie in the range), and with one the dead-sum signs of zero_sign "ieee"
    are the readable model's alone.
    """
    if model.alignment_bits is None or not vectorisable(model, atype, btype, k):
        return False
    if (model.scale_group is not None and (stype is None or model.order != "ascending" or model.reference != "exponent" or k % model.scale_group)) or (
        model.zero_reference is not None and model.zero_sign == "ieee"
    ):
        return False
    kinds = []  # (precision, low, high) of each kind of addend
    fa, fb, fc = _fmt(atype), _fmt(btype), _fmt(ctype)
    for f in (fa, fb, fc) + ((_format(model.accumulator),) if model.accumulator is not None else ()):
        if not (f.signed and f.has_subnormals):
            return False  # the batched decoder does not cover it (nor does the int64 path)
    bounds = {f.name: (f.precision, f.min_normal_exponent - f.mantissa_bits, f.max_exponent + 1) for f in (fa, fb, fc)}
    (pa, la, ha), (pb, lb, hb) = bounds[fa.name], bounds[fb.name]
    kinds += [bounds[fa.name], bounds[fb.name], (pa + pb, la + lb, ha + hb), bounds[fc.name]]
    if model.accumulator is not None:
        af = _format(model.accumulator)
        kinds.append((af.precision, af.min_normal_exponent - af.mantissa_bits, af.max_exponent + 1))
    if model.zero_reference is not None:  # a zero's reference exponent may be a step's largest
        kinds.append((1, model.zero_reference, model.zero_reference + 1))
    head, addends = 2, k  # bits of a live addend above its reference; addends of a step
    if stype is not None:
        fs = _fmt(stype)
        ps, ls, hs = fs.precision, fs.min_normal_exponent - fs.mantissa_bits, fs.max_exponent + 1
        wide = 2 if ps > 1 else 0  # two scale significands of more than one bit: below 4
        if model.scale_group is None:
            kinds.append((pa + pb + 2 * ps, la + lb + 2 * ls, ha + hb + 2 * hs))
            head += wide
        else:
            g = model.scale_group.bit_length()
            kinds.append((ha + hb + g - (la + lb) + 2 * ps, la + lb + 2 * ls, ha + hb + g + 2 * hs))
            head, addends = ha + hb + g + wide, -(-k // model.scale_group)
    if any(p > 53 or low < -1022 or high > 1024 for p, low, high in kinds):
        return False
    low, high = min(x[1] for x in kinds), max(x[2] for x in kinds)
    widths = [model.alignment_bits] + ([model.c_alignment_bits] if model.c_step == "alone" and model.c_alignment_bits is not None else [])
    for e in widths:
        if e + head + (addends + 1).bit_length() > 53 or low - (high - 1 - e) < -1022 or not -1022 <= low - 1 - e <= high - 1 - e <= 1022:
            return False
    return True


def _float_addends(fmt: FloatFormat, bits: np.ndarray, ftz: bool, reference: str) -> tuple[np.ndarray, np.ndarray]:
    """Elements as float64 values (exact: float64_exact 1) and their reference exponents (int16;
    NOT_LIVE for zeros, infinities and NaNs)."""
    sign, sig, exp, nan, inf = batch_rounding.decode(fmt, bits, ftz=ftz)
    finite = ~(nan | inf)
    # A NaN's or an infinity's (sig, exp) are its fields read as a finite value: in range too.
    value = np.ldexp(sig.astype(np.float64), exp.astype(np.int32))
    np.putmask(value, inf, np.inf)
    np.putmask(value, nan, np.nan)
    np.negative(value, out=value, where=sign)
    # "exponent": the exponent field's (a subnormal's is the smallest normal exponent); "msb".
    ref = exp + fmt.mantissa_bits if reference == "exponent" else exp + batch_rounding.bit_length(sig) - 1
    return value, np.where(finite & (sig != 0), ref, NOT_LIVE).astype(np.int16)


#: :func:`_float_addends` of every bit pattern of a format up to 16 bits wide, built on first use:
#: reading an element is then one table look-up instead of a dozen array operations.
_ADDEND_TABLES: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def _input_addends(fmt: FloatFormat, bits: np.ndarray, ftz: bool, reference: str = "exponent") -> tuple[np.ndarray, np.ndarray]:
    """:func:`_float_addends` of A's or B's elements (exponent-field references), through a
    table of the whole format where it has at most 2^16 bit patterns."""
    if fmt.width > 16 or (bits.size and int(bits.max()) >> fmt.width):
        return _float_addends(fmt, bits, ftz, reference)
    key = (fmt, ftz, reference)
    if key not in _ADDEND_TABLES:
        table = _float_addends(fmt, np.arange(1 << fmt.width, dtype=np.uint64), ftz, reference)
        for t in table:
            t.flags.writeable = False
        _ADDEND_TABLES[key] = table
    values, refs = _ADDEND_TABLES[key]
    index = bits.astype(np.intp)
    return values[index], refs[index]


def _scale_addends(stype: str, byte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale factor bytes as float64 values (NaN for the NaN byte) and their exponent fields'
    exponents (``mma._reference``; 0 for a NaN, whose products are NaN)."""
    key = ("scale", stype)
    if key not in _ADDEND_TABLES:
        from ptxspec.semantics.mma import _reference
        from ptxspec.semantics.mma_block_scale import scale_factor_value
        from ptxspec.semantics.numerics import Exact

        values, refs = np.empty(256), np.zeros(256, dtype=np.int16)
        for b in range(256):
            v = scale_factor_value(stype, b)
            if isinstance(v, Exact):
                values[b] = np.ldexp(float(v.significand), v.exponent)
                refs[b] = _reference(_fmt(stype), v) if v.significand else 0
            else:
                values[b] = np.nan
        for t in (values, refs):
            t.flags.writeable = False
        _ADDEND_TABLES[key] = (values, refs)
    values, refs = _ADDEND_TABLES[key]
    index = byte.astype(np.intp)
    return values[index], refs[index]


def _float64_dots(
    model: Datapath, atype: str, btype: str, ctype: str, dtype: str, A: np.ndarray, B: np.ndarray, C: np.ndarray, scales: tuple | None = None
) -> np.ndarray:
    """:func:`~ptxspec.semantics.mma.datapath_dot` for a batch of mma (A ``[b, M, K]``, B ``[b, K,
    N]``, C ``[b, M, N]``) in float64, exact by :func:`float64_exact`; D's bits ``[b, M, N]``.

    NaN and infinite inputs are float64 NaNs and infinities, so a step's sum is a NaN or an
    infinity exactly when IEEE 754 says so (a NaN addend, infinities of both signs) and one of the
    sign otherwise, finite addends never overflowing float64 (float64_exact 3.). Products are laid
    out ``[K, dots]``: the max-reduce and the sum over k are then row-wise operations on contiguous
    rows, which numpy runs as fast vector loops."""
    fa, fb, fc, fd = _fmt(atype), _fmt(btype), _fmt(ctype), _fmt(dtype)
    m, k = A.shape[-2:]
    n = B.shape[-1]
    order = order_indices(model.order, k)
    # Each element decoded once (not once per dot product it enters), k first, in the model's order.
    # "msb" of an input is its exponent field's for a normal and its leading bit's for a subnormal.
    input_reference = "msb" if model.subnormal_reference == "normalised" else "exponent"
    va, ra = _input_addends(fa, np.moveaxis(A, -1, 0)[order], model.flush_inputs, input_reference)  # [K, b, M]
    vb, rb = _input_addends(fb, np.moveaxis(B, -2, 0)[order], model.flush_inputs, input_reference)  # [K, b, N]
    vc, rc = _float_addends(fc, C, model.flush_c, model.reference)
    zero_reference = model.zero_reference
    if zero_reference is not None:  # a zero C takes part with the zero's reference exponent
        rc = np.where(vc == 0, zero_reference, rc).astype(np.int16)
    if scales is not None:  # the scale factor of each k: [K, b, M] and [K, b, N]
        sva, sra = _scale_addends(scales[0], np.moveaxis(scales[1], -1, 0)[order])
        svb, srb = _scale_addends(scales[0], np.moveaxis(scales[2], -2, 0)[order])
    out = np.empty(C.shape, dtype=np.uint64)
    per = max(1, BLOCK // (m * n))  # whole mma per block
    for start in range(0, len(C), per):
        sl = slice(start, start + per)
        # Every product once, by broadcasting: [K, b, M, 1] * [K, b, 1, N] -> [K, dots].
        products = (va[:, sl, :, None] * vb[:, sl, None, :]).reshape(k, -1)
        if model.reference == "exponent":  # the sum of the inputs' exponent fields
            refs = (ra[:, sl, :, None] + rb[:, sl, None, :]).reshape(k, -1)
        if scales is not None:  # exact (float64_exact): the scale factors' values and exponents
            scale = (sva[:, sl, :, None] * svb[:, sl, None, :]).reshape(k, -1)
            scale_refs = (sra[:, sl, :, None] + srb[:, sl, None, :]).reshape(k, -1)
            if model.scale_group is not None:  # groups of consecutive k: exact sums, scaled once
                group = model.scale_group
                raw = products.reshape(k // group, group, -1)
                dead = (raw == 0).all(axis=1) | (scale[::group] == 0)
                products = raw.sum(axis=1) * scale[::group]
                if zero_reference is None:  # a zero takes no part, a cancelled group's sum neither
                    refs = np.where(dead | (products == 0), NOT_LIVE, scale_refs[::group]).astype(np.int16)
                else:  # a cancelled group keeps its scale factors' exponent
                    refs = np.where(dead, zero_reference, scale_refs[::group]).astype(np.int16)
            else:
                products = products * scale
                if model.reference == "exponent":
                    refs = refs + scale_refs
        if model.reference != "exponent":  # the product's leading bit: its float64 exponent (products are normal float64s)
            field = ((products.view(np.int64) >> 52) & 0x7FF).astype(np.int16)
            refs = np.where((field == 0) | (field == 0x7FF), np.int16(NOT_LIVE), field - np.int16(1023))
        if zero_reference is not None and (scales is None or model.scale_group is None):
            refs = np.where(products == 0, zero_reference, refs).astype(np.int16)
        c = vc[sl].reshape(-1), rc[sl].reshape(-1)
        out[sl] = _float64_block(model, fd, products, refs, c).reshape(-1, m, n)
    return out


def _float64_block(model: Datapath, fd: FloatFormat, products: np.ndarray, refs: np.ndarray, c: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """:func:`_steps` in float64 on a block of dot products: ``products`` and their reference
    exponents ``[K, dots]`` (in the model's order), ``c`` C's (values, references) ``[dots]``. An
    addend is (value, reference); a step's sum (sum, grid, sign): the sum in units of ``2^grid``.
    ``overflow`` (overflowed, negative) remembers the first accumulator to overflow."""
    af = _format(model.accumulator) if model.accumulator is not None else None
    overflow = np.zeros(products.shape[1], dtype=bool), np.zeros(products.shape[1], dtype=bool)

    def step(group: slice, extras: list, alignment_bits: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _float_step(products[group], refs[group], extras, alignment_bits, model)

    def accumulate(total: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        nonlocal overflow
        value, ref, overflow = _float_accumulate(*total, af, model, overflow)
        return value, ref

    def final(total: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        return _float_final(*total, fd, model, overflow)

    return _steps(model, products.shape[0], c, step, accumulate, final)


def _float_step(products: np.ndarray, refs: np.ndarray, extras: list, alignment_bits: int | None, model: Datapath) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``mma._step`` in float64 for one step: the step's products (``[j, dots]``, cut in place:
    each product belongs to one step) and ``extras`` (C, the accumulator: (value, reference)
    pairs). Returns (sum, grid, sign): the sum of the cut addends in units of ``2^grid``."""
    if alignment_bits is None:
        raise AssertionError("the float64 path runs models that align (float64_exact)")
    dots = products.shape[1]
    if len(refs):
        reference = refs.max(axis=0).astype(np.int64)  # the largest exponent: one max-reduce
    else:
        reference = np.full(dots, NOT_LIVE, dtype=np.int64)
    for _, r in extras:
        reference = np.maximum(reference, r)
    live = reference > NOT_LIVE // 2
    grid = np.where(live, reference - alignment_bits, 0)
    scale = np.ldexp(1.0, (-grid).astype(np.int32))
    cut = np.trunc if model.truncation == "zero" else np.floor  # "floor": two's-complement truncation
    total = np.zeros(dots)
    if len(products):
        np.multiply(products, scale, out=products)
        cut(products, out=products)
        total = products.sum(axis=0)
    for value, _ in extras:
        total = total + cut(value * scale)
    # The sign of a zero sum: +0 after cancellation; with no live addend -0 only when every addend
    # is -0 (zero_sign "ieee"). Dead dot products are rare: look at their addends' signs only.
    sign = total < 0
    dead = np.flatnonzero(~live)
    if model.zero_sign == "ieee" and dead.size:
        negative = np.signbit(products[:, dead]).all(axis=0)
        for value, _ in extras:
            negative &= np.signbit(value[dead])
        sign[dead] = negative
    return total, grid, sign


def _float_split(total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(finite mask, integer magnitude): exact, the sum being an integer below 2^53."""
    finite = np.isfinite(total)
    return finite, np.abs(np.where(finite, total, 0.0)).astype(np.int64)


def _float_accumulate(
    total: np.ndarray, grid: np.ndarray, sign: np.ndarray, af: FloatFormat | None, model: Datapath, overflow: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The step's sum rounded into the accumulator (the core's batched rounding) and read back as
    an addend. A NaN or infinite sum is carried on as it is; the first accumulator that overflows
    makes the result that infinity (datapath_dot returns there), unless an input is a NaN or an
    infinity (datapath_dot's special case comes first, and such sums reach the final step)."""
    if af is None:
        raise AssertionError("a step before the last rounds into the accumulator (vectorisable)")
    finite, sig = _float_split(total)
    bits = batch_rounding.round_bits(sign, sig, grid, af, model.accumulator_rounding)
    # Its reference: its exponent field's in either mode (datapath_dot's _reference(af, ...)).
    value, ref = _float_addends(af, bits.astype(np.uint64), False, "exponent")
    if model.zero_reference is not None:  # a zero accumulator takes part with the zero's exponent
        ref = np.where(value == 0, model.zero_reference, ref).astype(np.int16)
    overflowed, negative = overflow
    new = np.isinf(value) & finite & ~overflowed
    overflow = (overflowed | new, negative | (new & sign))
    value = np.where(finite, np.where(np.isinf(value), 0.0, value), total)
    return value, ref, overflow


def _float_final(
    total: np.ndarray, grid: np.ndarray, sign: np.ndarray, fd: FloatFormat, model: Datapath, overflow: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The last step's sum into D: :func:`_final_arrays` (the core's batched rounding)."""
    finite, sig = _float_split(total)
    overflowed, negative = overflow
    overflowed = overflowed & finite
    infinite = np.isinf(total) | overflowed
    pos_inf = (total == np.inf) | (overflowed & ~negative)
    return _final_arrays(sign, sig, grid, fd, model, infinite, np.isnan(total), pos_inf)


# ---------------------------------------------------------------------------------------------
# binary32, where every step is one IEEE binary32 addition
# ---------------------------------------------------------------------------------------------


def _binary32_holds(fmt: FloatFormat, precision: int | None = None, low: int | None = None, high: int | None = None) -> bool:
    """Whether binary32 holds every value of ``fmt`` (or of the bounds given: significant bits,
    the exponent of the lowest place, and ``2^high`` above the magnitude) exactly."""
    f32 = FORMATS["f32"]
    precision = fmt.precision if precision is None else precision
    low = fmt.min_normal_exponent - fmt.mantissa_bits if low is None else low
    high = fmt.max_exponent + 1 if high is None else high
    return precision <= f32.precision and low >= f32.min_normal_exponent - f32.mantissa_bits and high <= f32.max_exponent + 1


def _host_binary32_is_ieee() -> bool:
    """numpy's float32 addition keeps subnormals (no flush-to-zero mode set in this process)."""
    tiny = np.float32(2.0**-149)
    with np.errstate(all="ignore"):
        return bool(tiny + np.float32(0) == tiny) and bool(np.float32(2.0**-126) - np.float32(2.0**-126 - 2.0**-149) == tiny)


def binary32_exact(model: Datapath, atype: str, btype: str, ctype: str, dtype: str, k: int) -> bool:
    """Whether :func:`_binary32_dots` computes ``model`` exactly: every step keeps every bit of at
    most two addends that binary32 holds (``alignment_bits`` None; the products of A and B exact in
    binary32) and rounds to nearest into binary32 -- such a step is IEEE 754 binary32 addition
    (§6.3's zero signs included), which numpy's float32 addition is -- and the last step rounds
    to nearest into binary32 too (D is .f32, or ``via`` is binary32), the conversion into D then
    being the core's batched rounding. The models of ptxas's binary32 code for m8n8k4 .f16 on
    sm_90 are of this kind."""
    if model.alignment_bits is not None or model.accumulator != BINARY32 or model.accumulator_rounding is not Rounding.RN:
        return False
    if model.nan_rule != "fixed" or model.flush_inputs or model.flush_c or model.flush_output or model.zero_sign not in ("ieee", "positive"):
        return False
    last_rounding = (BINARY32, model.rounding) if model.via is None and dtype == "f32" else (model.via, model.via_rounding)
    if last_rounding != (BINARY32, Rounding.RN):
        return False
    chain = model.c_step in ("first", "alone") and model.chunk == 1  # one product per step
    pairs = model.c_step == "tree" and model.tree_sum == "chain" and model.chunk in (1, 2)
    if not (chain or pairs):
        return False
    fa, fb, fc = _fmt(atype), _fmt(btype), _fmt(ctype)
    for f in (fa, fb, fc):
        if not (f.signed and f.has_subnormals and _binary32_holds(f)):
            return False
    low = lambda f: f.min_normal_exponent - f.mantissa_bits  # noqa: E731
    product = (fa.precision + fb.precision, low(fa) + low(fb), fa.max_exponent + fb.max_exponent + 2)
    return _binary32_holds(fc, *product) and _host_binary32_is_ieee()


def _binary32_dots(model: Datapath, atype: str, btype: str, ctype: str, dtype: str, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """:func:`~ptxspec.semantics.mma.datapath_dot` for a batch of mma (A ``[b, M, K]``, B ``[b, K,
    N]``, C ``[b, M, N]``) in numpy float32 arithmetic, exact by :func:`binary32_exact`; D's bits
    ``[b, M, N]``. An addend and a step's sum are float32 arrays; the accumulator is the sum itself
    (binary32 addition has rounded it). The specials are datapath_dot's (a NaN or infinite input
    decides the result before any step)."""
    fa, fb, fc, fd = _fmt(atype), _fmt(btype), _fmt(ctype), _fmt(dtype)
    k = A.shape[-1]
    order = order_indices(model.order, k)
    va = _input_addends(fa, np.moveaxis(A, -1, 0)[order], False)[0].astype(np.float32)  # [K, b, M]
    vb = _input_addends(fb, np.moveaxis(B, -2, 0)[order], False)[0].astype(np.float32)  # [K, b, N]
    products = (va[:, :, :, None] * vb[:, :, None, :]).reshape(k, -1)  # exact: binary32 holds them
    c = _float_addends(fc, C, False, "exponent")[0].astype(np.float32).reshape(-1)

    def step(group: slice, extras: list[np.ndarray], _alignment_bits: int | None) -> np.ndarray:
        addends = [*products[group], *extras]
        assert len(addends) in (1, 2), "binary32_exact: one or two addends per step"
        total = addends[0] if len(addends) == 1 else addends[0] + addends[1]
        return total + np.float32(0) if model.zero_sign == "positive" else total  # -0 + +0 is +0

    def final(total: np.ndarray) -> np.ndarray:
        sign, sig, exp, nan, infinite = batch_rounding.decode(FORMATS["f32"], total.view(np.uint32))
        pos_inf = infinite & ~sign
        # datapath_dot's specials: a NaN addend, or infinities of both signs, give NaN; else the infinity.
        special_pos = np.isposinf(products).any(axis=0) | np.isposinf(c)
        special_neg = np.isneginf(products).any(axis=0) | np.isneginf(c)
        special_nan = np.isnan(products).any(axis=0) | np.isnan(c) | (special_pos & special_neg)
        special = special_nan | special_pos | special_neg
        nan = np.where(special, special_nan, nan)
        infinite = np.where(special, ~special_nan, infinite)
        pos_inf = np.where(special, special_pos & ~special_nan, pos_inf)
        return _final_arrays(sign, sig, exp, fd, model, infinite, nan, pos_inf)

    return _steps(model, k, c, step, lambda total: total, final).reshape(C.shape)


# ---------------------------------------------------------------------------------------------
# int64 (any alignment width up to 2^60)
# ---------------------------------------------------------------------------------------------


def vectorisable(model: Datapath, atype: str, btype: str, k: int) -> bool:
    """Whether :func:`_int64_dots` can run ``model`` in int64 arithmetic: every cut addend is
    below ``2^(alignment_bits + 2)`` and the sum of ``k + 1`` of them below 2^60. (The float64
    path runs a subset of these models: :func:`float64_exact`.)"""
    if model.alignment_bits is None or atype == "f64" or model.nan_rule != "fixed":
        return False
    if model.zero_sign == "ieee" and Rounding.RM in (model.last_step_rounding(), model.accumulator_rounding):
        return False  # the RM sign of an exact zero sum is the readable model's alone
    # The batched decoder reads a format's bits as int64: a 64-bit accumulator's sign bit is lost.
    if any(fields is not None and 1 + sum(fields) >= 64 for fields in (model.accumulator, model.via)):
        return False
    if model.c_alignment_bits is not None and model.c_alignment_bits + 4 > 60:
        return False
    if model.c_step == "tree" and model.tree_sum != "one step":
        return False  # the int64 and float64 steps cut every addend: a chain's steps are binary32's
    if ((model.chunk is not None and model.chunk < k) or model.c_step in ("alone", "tree")) and model.accumulator is None:
        return False
    return model.alignment_bits + 2 + (k + 1).bit_length() <= 60


#: An addend of the int64 path: (sign, significand, exponent, reference exponent) arrays ``[dots]``.
_Int64Addend = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _int64_dots(model: Datapath, atype: str, btype: str, ctype: str, dtype: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`~ptxspec.semantics.mma.datapath_dot` for a block of dot products (``a``, ``b``:
    ``[n, k]``; ``c``: ``[n]``) in int64, exact by :func:`vectorisable`: an addend is
    ``_Int64Addend``, a step's sum (sign, magnitude, exponent of its last place)."""
    fa, fb, fc, fd = _fmt(atype), _fmt(btype), _fmt(ctype), _fmt(dtype)
    sa, ma, ea, na, ia = batch_rounding.decode(fa, a, ftz=model.flush_inputs)
    sb, mb, eb, nb, ib = batch_rounding.decode(fb, b, ftz=model.flush_inputs)
    sc, mc, ec, nc, ic = batch_rounding.decode(fc, c, ftz=model.flush_c)
    # Products, exact: significands below 2^22 for every input format here.
    sp = sa ^ sb
    mp = np.where(ia | ib | na | nb, 0, ma * mb)
    ep = ea + eb
    zero_a, zero_b = (ma == 0) & ~ia & ~na, (mb == 0) & ~ib & ~nb
    nan_p = na | nb | (ia & zero_b) | (ib & zero_a)
    inf_p = (ia | ib) & ~nan_p
    # Specials: a NaN addend, or infinities of both signs, give NaN; else an infinity wins.
    pos_inf = (inf_p & ~sp).any(axis=1) | (ic & ~sc)
    neg_inf = (inf_p & sp).any(axis=1) | (ic & sc)
    nan = nan_p.any(axis=1) | nc | (pos_inf & neg_inf)
    infinite = (pos_inf | neg_inf) & ~nan
    if model.reference == "msb":
        rp = ep + batch_rounding.bit_length(mp) - 1
        rc = ec + batch_rounding.bit_length(mc) - 1
    elif model.subnormal_reference == "normalised":  # a subnormal input's leading bit
        rp = ea + batch_rounding.bit_length(ma) + eb + batch_rounding.bit_length(mb) - 2
        rc = ec + fc.mantissa_bits
    else:
        rp = ea + eb + fa.mantissa_bits + fb.mantissa_bits
        rc = ec + fc.mantissa_bits
    order = order_indices(model.order, a.shape[1])
    sp, mp, ep, rp = sp[:, order], mp[:, order], ep[:, order], rp[:, order]
    af = _format(model.accumulator) if model.accumulator is not None else None

    def step(group: slice, extras: list[_Int64Addend], alignment_bits: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        members = [(sp[:, j], mp[:, j], ep[:, j], rp[:, j]) for j in range(group.start, group.stop)] + extras
        return _int64_step(members, alignment_bits, model)

    def accumulate(total: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Int64Addend:
        """The step's sum rounded into the accumulator; the first one to overflow makes the result
        that infinity (datapath_dot returns there), unless a special input decided it already."""
        nonlocal pos_inf, neg_inf, infinite
        if af is None:
            raise AssertionError("a step before the last rounds into the accumulator (vectorisable)")
        bits = batch_rounding.round_bits(*total, af, model.accumulator_rounding)
        s2, m2, e2, _, inf2 = batch_rounding.decode(af, bits.astype(np.uint64))
        pos_inf = pos_inf | (inf2 & ~s2 & ~nan & ~infinite)
        neg_inf = neg_inf | (inf2 & s2 & ~nan & ~infinite)
        infinite = (pos_inf | neg_inf) & ~nan
        return s2, np.where(inf2, 0, m2), e2, e2 + af.mantissa_bits  # its own exponent, as datapath_dot

    def final(total: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        return _final_arrays(*total, fd, model, infinite, nan, pos_inf)

    return _steps(model, a.shape[1], (sc, mc, ec, rc), step, accumulate, final)


def _int64_step(members: list[_Int64Addend], alignment_bits: int | None, model: Datapath) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``mma._step`` on arrays: (sign, magnitude, grid exponent) of the exact sum of the cut
    addends; a zero sum is -0 only when every addend is -0 (and zero_sign is "ieee")."""
    if alignment_bits is None:
        raise AssertionError("the int64 path runs models that align (vectorisable)")
    sign = np.stack([x[0] for x in members], axis=1)
    sig = np.stack([x[1] for x in members], axis=1)
    exp = np.stack([x[2] for x in members], axis=1)
    ref = np.stack([x[3] for x in members], axis=1)
    live = sig != 0
    if model.zero_reference is not None:  # every addend takes part, a zero with zero_reference
        big = np.where(live, ref, model.zero_reference).max(axis=1)
    else:
        big = np.where(live, ref, np.iinfo(np.int64).min // 4).max(axis=1)
    grid = big - alignment_bits
    shift = grid[:, None] - exp
    left = np.minimum(np.maximum(-shift, 0), 62)
    right = np.minimum(np.maximum(shift, 0), 62)
    q = np.where(shift <= 0, sig << left, sig >> right)
    if model.truncation == "floor":
        rem = sig - ((sig >> right) << right)
        q = q + ((shift > 0) & sign & (rem != 0))
    q = np.where(live, q, 0)
    total = np.where(sign, -q, q).sum(axis=1)
    every_negative_zero = (sign & ~live).all(axis=1) & (model.zero_sign == "ieee")
    return np.where(total == 0, every_negative_zero, total < 0), np.abs(total), np.where(live.any(axis=1), grid, 0)
