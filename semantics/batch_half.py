"""Batched paths of §9.7.4 half-precision instructions: fma, neg and abs on .f16, .f16x2, .bf16
and .bf16x2.

The numpy twins of :mod:`ptxspec.semantics.half_precision`, step by step: split the packed
lanes (lane 0 the upper half-word, as :func:`~ptxspec.semantics.results.split_lanes`), decode each
element exactly (:func:`~ptxspec.semantics.batch_rounding.decode`, flushing subnormal inputs under
``.ftz``), apply the NaN rule, form the exact result in int64 and round it ONCE with
:func:`~ptxspec.semantics.batch_rounding.round_bits`, then pack the lanes back
(:func:`~ptxspec.semantics.batch._lanes_result`).

add, sub, mul, min and max on these types have their paths in :mod:`ptxspec.semantics.batch`
(every legal form); setp and set on them are in :mod:`ptxspec.semantics.batch_comparison` with
the other comparisons (their scalar semantics is in :mod:`ptxspec.semantics.comparison`).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import batch_rounding
from ptxspec.semantics.batch import BatchResult, FastPath, SharedSet, _covered, _lanes_result, _open_nan, _split, batched
from ptxspec.semantics.half_precision import ZeroOrNaN
from ptxspec.semantics.numerics import Rounding, canonical_nan, zero
from ptxspec.semantics.results import Allowed, OneOf
from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat

F16 = FORMATS["f16"]
BF16 = FORMATS["bf16"]


def element_format(form: Form) -> FloatFormat:
    """One element's format: .f16x2 is two .f16, .bf16x2 two .bf16 (§5.2.4.1)."""
    return BF16 if form["type"].startswith("bf16") else F16


def lane_count(form: Form) -> int:
    return 2 if form["type"].endswith("x2") else 1


# ---------------------------------------------------------------------------------------------
# §9.7.4.4 fma
# ---------------------------------------------------------------------------------------------


def _fma_element(form: Form, fmt: FloatFormat, a: np.ndarray, b: np.ndarray, c: np.ndarray, profile: Profile):
    """One element of ``fma.rn{.ftz}{.sat}{.relu}`` (half_precision.arithmetic_element with
    exact_fma): returns the bits and the mask of open-NaN lanes (or None).

    * decode with .ftz flushing subnormal inputs;
    * invalid: a NaN operand, 0 * inf, and inf * x + c with c the opposite infinity;
    * the exact product ``ma * mb 2^(ea + eb)`` (at most 2 x 11 bits: exact in int64), the exact
      sum with c (:func:`~ptxspec.semantics.batch_rounding.exact_sum`, span 22: a precision of 11 bits at most), its
      infinities taking the product's or c's sign;
    * one rounding to nearest even with .ftz (tiny after rounding), .sat ([0.0, 1.0], NaN -> +0.0)
      and .relu (negative -> +0.0, NaN -> the canonical NaN); any other NaN is the chapter's
      unspecified NaN (§9.7.4: "Half-precision instructions return an unspecified NaN").
    """
    ftz, sat, relu = "ftz" in form, "sat" in form, "relu" in form
    sa, ma, ea, na, ia = batch_rounding.decode(fmt, a, ftz=ftz)
    sb, mb, eb, nb, ib = batch_rounding.decode(fmt, b, ftz=ftz)
    sc, mc, ec, nc, ic = batch_rounding.decode(fmt, c, ftz=ftz)
    sp = sa ^ sb
    product_infinite = ia | ib
    zero_times_infinity = (ia & ~ib & (mb == 0)) | (ib & ~ia & (ma == 0))
    invalid = na | nb | nc | zero_times_infinity | (product_infinite & ic & (sp != sc))
    sign, significand, exponent = batch_rounding.exact_sum(sp, ma * mb, ea + eb, sc, mc, ec, span=2 * fmt.precision)
    sign = np.where(product_infinite, sp, np.where(ic, sc, sign))
    nan_bits, open_ = _open_nan(fmt, profile)
    bits = batch_rounding.round_bits(
        sign, significand, exponent, fmt, Rounding.RN,
        ftz=ftz, sat=sat, relu=relu, infinite=product_infinite | ic, nan=invalid, nan_bits=nan_bits,
    )  # fmt: skip
    return bits, (invalid if open_ and not (sat or relu) else None)


def _oob_element(form: Form, fmt: FloatFormat, a: np.ndarray, b: np.ndarray, c: np.ndarray, profile: Profile):
    """One element of ``fma.rn.oob{.relu}`` (half_precision.out_of_bounds): ``(bits, open, in_set)``.

    Under a profile that pins the OOB-NaN (``profile.fma_oob_nan``: its encodings and the operand
    positions where the chip tests them; sm_90: 0x7ff7 and 0xfff7 in a or b) the lane is +0.0
    where one of those operands holds one of those encodings, else fma.rn{.relu}'s result
    (``in_set`` is None).

    Otherwise (spec) a lane with a NaN operand may or may not hold the OOB-NaN: ``in_set`` marks
    those lanes, whose result is the set :func:`_oob_set`; every other lane is fma.rn{.relu}'s.
    """
    bits, open_ = _fma_element(form, fmt, a, b, c, profile)
    measured = profile.fma_oob_nan
    if measured is not None:
        encodings, positions = measured
        operands = (a, b, c)
        oob = np.zeros(a.shape, dtype=bool)
        for i in positions:
            oob |= np.isin(operands[i], np.array(sorted(encodings), dtype=operands[i].dtype))
        return np.where(oob, 0, bits), (open_ & ~oob if open_ is not None else None), None
    in_set = batch_rounding.decode(fmt, a)[3] | batch_rounding.decode(fmt, b)[3] | batch_rounding.decode(fmt, c)[3]
    return np.where(in_set, 0, bits), (open_ & ~in_set if open_ is not None else None), in_set


def _oob_set(form: Form, fmt: FloatFormat, profile: Profile) -> Allowed:
    """The result of an ``fma.oob`` lane with a NaN operand when no profile pins the OOB-NaN:
    +0.0 or fma.rn{.relu}'s NaN result -- the canonical NaN under .relu ("NaN results are
    converted to canonical NaN"), else the chapter's unspecified NaN (half_precision.out_of_bounds)."""
    nan = canonical_nan(fmt) if "relu" in form else profile.unspecified_nan(fmt)
    if isinstance(nan, int):
        return OneOf(frozenset({zero(fmt, 0), nan}), fmt.width)
    return ZeroOrNaN(fmt)


@batched("fma.h")
def half_fma(form: Form) -> FastPath | None:
    """§9.7.4.4 ``fma.rn{.ftz}{.sat}{.relu}{.oob}.{f16,f16x2,bf16,bf16x2}``: "performs a fused
    multiply-add with no loss of precision in the intermediate product and addition", ``d = a * b
    + c`` per element, rounded once. Exact: the product of two significands of at most 11 bits is
    an int64 product, the sum is aligned exactly up to a sticky unit that cannot change the
    rounding (:func:`~ptxspec.semantics.batch_rounding.exact_sum`), and :func:`~batch_rounding.round_bits` is the one
    rounding. Per lane :func:`_fma_element`.

    ``.oob`` (:func:`_oob_element`): where no profile pins the OOB-NaN, a lane with a NaN operand
    has a set result ({+0.0, the NaN}, :func:`_oob_set`) that the any-NaN mask cannot hold; those
    lanes are marked in one :class:`~ptxspec.semantics.batch.SharedSet` (the set is the same for
    every such lane of the form) rather than left undecided or built as a set object per vector,
    because a NaN operand is frequent on the generator's inputs (one edge class of each operand,
    1/32 of random .f16 encodings, in any of three operands and two lanes: 10-20% of the
    vectors).
    """
    if form.get("rnd", "rn") != "rn":
        return None
    fmt, lanes = element_format(form), lane_count(form)
    oob = "oob" in form

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        profile = _covered(profile)
        parts, in_set = [], []
        for x, y, z in zip(_split(a, lanes, 16), _split(b, lanes, 16), _split(c, lanes, 16)):
            if not oob:
                parts.append(_fma_element(form, fmt, x, y, z, profile))
                continue
            bits, open_, marked = _oob_element(form, fmt, x, y, z, profile)
            parts.append((bits, open_))
            if marked is not None:
                in_set.append(marked)
        result = _lanes_result(parts, fmt, 16)
        if not in_set:
            return result
        mask = in_set[0] if lanes == 1 else np.stack(in_set, axis=1)
        return attrs.evolve(result, shared=SharedSet(mask, _oob_set(form, fmt, profile)))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.4.5 neg, §9.7.4.6 abs
# ---------------------------------------------------------------------------------------------


def _sign_element(form: Form, fmt: FloatFormat, a: np.ndarray, profile: Profile):
    """One element of neg or abs (half_precision._sign_op): .ftz reads a subnormal as a zero of
    its sign; a NaN gives the chapter's unspecified NaN ("NaN inputs yield an unspecified NaN");
    otherwise the value with its sign flipped (neg) or cleared (abs). No rounding: the negated or
    absolute value of an encoding is an encoding of the same exponent and significand, which
    round_value re-encodes as is (a flushed zero stays a zero)."""
    sign_bit = 1 << (fmt.width - 1)
    magnitude_mask = sign_bit - 1
    exponent_mask = fmt.exponent_field_max << fmt.mantissa_bits
    a = a.astype(np.int64)
    if "ftz" in form:
        a = np.where((a & exponent_mask) == 0, a & sign_bit, a)
    nan = (a & magnitude_mask) > exponent_mask
    d = a ^ sign_bit if form.opcode == "neg" else a & magnitude_mask
    nan_bits, open_ = _open_nan(fmt, profile)
    return np.where(nan, nan_bits, d), (nan if open_ else None)


@batched("neg.h", "abs.h")
def half_sign(form: Form) -> FastPath:
    """§9.7.4.5 ``neg{.ftz}.{f16,f16x2,bf16,bf16x2}`` ("negate the sign of a") and §9.7.4.6
    ``abs{.ftz}...`` ("take absolute value of a"): integer bit operations on the encodings, exact
    by construction (per lane :func:`_sign_element`)."""
    fmt, lanes = element_format(form), lane_count(form)

    def fast(a: np.ndarray, *, profile: Profile) -> BatchResult:
        profile = _covered(profile)
        return _lanes_result([_sign_element(form, fmt, x, profile) for x in _split(a, lanes, 16)], fmt, 16)

    return fast


__all__ = ["half_fma", "half_sign"]
