"""§9.7.14.5.14 ``mma``: ``D = A * B + C`` on the warp's fragments, at two levels of numerics.

"Perform a MxNxK matrix multiply and accumulate operation, D = A*B+C, where the A matrix is MxK,
the B matrix is KxN, and the C and D matrices are MxN" (§9.7.14.5.14). Each element of D is a dot
product ``d = sum_k a_k * b_k + c`` of a row of A, a column of B and an element of C. What the
manual fixes and what it leaves open, quoted from "Precision and rounding" (§9.7.14.5.14):

* ``.f16``: "Element-wise multiplication of matrix A and B is performed with at least single
  precision. When .ctype or .dtype is .f32, accumulation of the intermediate values is performed
  with at least single precision. When both .ctype and .dtype are specified as .f16, the
  accumulation is performed with at least half precision. The accumulation order, rounding and
  handling of subnormal inputs are unspecified."
* ``.e4m3``, ``.e5m2``, ``.e3m2``, ``.e2m3``, ``.e2m1``, ``.bf16``, ``.tf32``: "Element-wise
  multiplication of matrix A and B is performed with specified precision. Accumulation of the
  intermediate values is performed with at least single precision. The accumulation order,
  rounding and handling of subnormal inputs are unspecified."
* ``.f64``: "The precision of the element-wise multiplication and addition operations is identical
  to that of a .f64 precision fused multiply-add. Supported rounding modifiers are: .rn (default),
  .rz, .rm, .rp".
* integers: "The integer mma operation is performed with .s32 accumulators. The .satfinite
  qualifier indicates that on overflow, the accumulated value is limited to the range
  MIN_INT32..MAX_INT32 ... If .satfinite is not specified, the accumulated value is wrapped
  instead." Single bit: "the multiplication is replaced by a sequence of logical operations;
  specifically, mma.xor.popc and mma.and.popc compute the XOR, AND respectively of a k-bit row of A
  with a k-bit column of B, then count the number of set bits in the result (popc). This result is
  added to the corresponding element of C and written into D."

**Spec level** (:func:`spec_dot`). Integer and single-bit results are exact. For floating point
the manual leaves order, rounding and subnormal handling open but bounds the precision; the
checkable predicate we derive from those sentences, for ``n = K + 1`` addends (K products and c):

    products are exact ("specified precision"; an f16 product is exact in single precision);
    every addition is rounded (in any direction) to at least p bits, p = 24 ("at least single
    precision"), 11 for .f16 with .ctype = .dtype = .f16 ("at least half precision"), 53 for .f64;
    so, whatever the order, ``|D - S|`` <= gamma_{n-1} * T + (n - 1) * eta + T_sub, where S is the exact
    sum, T the sum of the magnitudes of the addends, gamma_m = m*u/(1 - m*u) with u = 2^(1-p) (one
    unit in the last place: any rounding direction), eta = 2^emin of the accumulation format (an
    underflowing or flushed partial sum), and T_sub the magnitudes of the addends that involve a
    subnormal input (which may be read as zero). D is then any value of .dtype in
    [round_down(S - bound), round_up(S + bound)].

  NaN inputs, 0 * inf and inf - inf give any NaN; an infinite product or c (of one sign) gives that
  infinity; when T exceeds the largest finite value of the accumulation format a partial sum may
  overflow, and every result (infinities and NaN included) is allowed.

**Profile level** (:class:`Datapath`, a profile's ``mma_datapaths``): a parametrised model of a
tensor-core datapath -- products exact; all addends of a step (the products of a group of ``chunk`` k's and the
running accumulator or C) aligned to the largest reference exponent keeping ``alignment_bits``
bits below it and truncated (toward zero, or toward minus infinity as a two's-complement adder
does); one exact integer sum; the accumulator rounded between steps; one final rounding into D with
the mode the hardware uses. :mod:`ptxspec.profiles.sm_90.mma` holds the parameters fitted to the
sm_90 recordings (docs/mma.rst gives the evidence), looked up by :func:`datapath_for`;
:mod:`ptxspec.profiles.sm_100.tcgen05` those of MMA-Sim's Blackwell model for tcgen05.mma (a
public model, not yet silicon: docs/sm100-profile.rst), which add a zero's reference exponent
(:attr:`Datapath.zero_reference`) and block scale factors (``scales``, :attr:`Datapath.scale_group`).

Every rounding here is the numerics core's :func:`~ptxspec.semantics.numerics.round_value`. This
module is the meaning; :mod:`ptxspec.semantics.mma_vectorised` computes :func:`datapath_dot` on
whole batches of matrices (for :func:`datapath_matrix`) with the core's batched twin
:func:`~ptxspec.semantics.batch_rounding.round_bits`, an optimisation proven equal to it by the
tests that module names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs
import numpy as np

from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    Value,
    canonical_nan,
    decode,
    exact_product,
    infinity,
    round_value,
)
from ptxspec.profiles import SPEC, MatrixKey, Profile
from ptxspec.semantics.instructions import WARP_LANES, semantic
from ptxspec.semantics.results import AnyNaN, Interval, Result
from ptxspec.semantics.sparse import sparse_mma, sparse_operand

MMA_SECTION = "9.7.14.5.14"

#: Integer element types: (bits, signed).
INTEGER_TYPES = {"s8": (8, True), "u8": (8, False), "s4": (4, True), "u4": (4, False), "s32": (32, True), "b1": (1, False)}


# ---------------------------------------------------------------------------------------------
# Elements
# ---------------------------------------------------------------------------------------------


def _fmt(t: str) -> FloatFormat:
    return FORMATS[t]


def integer_value(t: str, bits: int) -> int:
    """The value of an integer element (two's complement for the signed types)."""
    width, signed = INTEGER_TYPES[t]
    return bits - (1 << width) if signed and bits >> (width - 1) else bits


def _msb(x: Exact) -> int:
    return x.exponent + x.significand.bit_length() - 1


def _reference(fmt: FloatFormat, x: Exact) -> int:
    """The exponent an adder aligns on: the exponent field's (the smallest normal exponent for a
    subnormal, whose significand is 0.f)."""
    return max(_msb(x), fmt.min_normal_exponent)


# ---------------------------------------------------------------------------------------------
# The exact reference: the dot product rounded once
# ---------------------------------------------------------------------------------------------


def _special(products: Sequence[Value], c: Value) -> NaN | Infinity | None:
    """The IEEE result of a dot product with a NaN or an infinite addend (None if all are finite):
    NaN for a NaN, 0 * inf (already a NaN product) or infinities of both signs."""
    addends = [*products, c]
    if any(isinstance(v, NaN) for v in addends):
        return next(v for v in addends if isinstance(v, NaN))
    signs = {v.sign for v in addends if isinstance(v, Infinity)}
    if len(signs) == 2:
        return NaN(0, 1, FORMATS["f32"])
    if signs:
        return Infinity(signs.pop())
    return None


def _finite(values: Sequence[Value]) -> list[Exact]:
    """``values`` (addends, or the inputs of products) where :func:`_special` found no special
    addend: every one of them finite."""
    finite = [v for v in values if isinstance(v, Exact)]
    if len(finite) != len(values):
        raise AssertionError("an infinity or a NaN among the addends of a dot product with no special addend")
    return finite


def _product(a: Value, b: Value) -> Value:
    """a * b exactly; 0 * inf is NaN (IEEE 754 §7.2)."""
    if isinstance(a, NaN) or isinstance(b, NaN):
        return a if isinstance(a, NaN) else b
    if isinstance(a, Infinity) or isinstance(b, Infinity):
        other = b if isinstance(a, Infinity) else a
        if isinstance(other, Exact) and other.is_zero:
            return NaN(0, 1, FORMATS["f32"])
        return Infinity(a.sign ^ b.sign)
    return exact_product(a, b)


def _exact_total(values: Sequence[Exact], mode: Rounding = Rounding.RN) -> Exact:
    """The exact sum; an exact zero takes IEEE 754's sign (§6.3): -0 only when every addend is -0
    (or under rounding toward minus infinity)."""
    e = min((v.exponent for v in values if v.significand), default=0)
    total = sum((v.significand << (v.exponent - e)) * (-1 if v.sign else 1) for v in values if v.significand)
    if total == 0:
        all_negative_zeros = all(v.sign for v in values)
        return Exact(int(all_negative_zeros or mode is Rounding.RM), 0)
    return Exact(int(total < 0), abs(total), e)


def exact_dot(
    atype: str, btype: str, ctype: str, dtype: str, a: Sequence[int], b: Sequence[int], c: int, mode: Rounding = Rounding.RN, nan: int | None = None
) -> int:
    """The readable reference: ``sum_k a_k * b_k + c`` computed exactly and rounded ONCE into
    ``dtype`` with ``mode`` (a NaN result gives ``nan``, by default the canonical NaN)."""
    fa, fb, fc = _fmt(atype), _fmt(btype), _fmt(ctype)
    products = [_product(decode(fa, x), decode(fb, y)) for x, y in zip(a, b)]
    cv = decode(fc, c)
    special = _special(products, cv)
    if special is not None:
        return round_value(special, dtype, mode, nan=canonical_nan(dtype) if nan is None else nan)
    return round_value(_exact_total(_finite([*products, cv]), mode), dtype, mode)


# ---------------------------------------------------------------------------------------------
# Spec level: the allowed set
# ---------------------------------------------------------------------------------------------


def accumulation_precision(atype: str, ctype: str, dtype: str) -> int:
    """The least precision (significand bits) the manual guarantees for the accumulation."""
    if atype == "f64":
        return 53
    if atype == "f16" and ctype == "f16" and dtype == "f16":
        return 11  # "When both .ctype and .dtype are specified as .f16, ... at least half precision"
    return 24  # "at least single precision"


def _accumulation_format(p: int) -> FloatFormat:
    return FORMATS["f64"] if p == 53 else FORMATS["f16"] if p == 11 else FORMATS["f32"]


def _to_exact(v: Fraction) -> Exact:
    den = v.denominator
    assert den & (den - 1) == 0, "dyadic values only"
    return Exact(int(v < 0), abs(v.numerator), -(den.bit_length() - 1))


def error_bound(p: int, n: int, total: Fraction, subnormal_part: Fraction, emin: int, addends: Sequence[Fraction] | None = None) -> Fraction:
    """``gamma_{n-1} * T + (n - 1) * eta + T_sub``, with a dyadic upper bound of
    ``gamma_m = m*u/(1 - m*u)``: ``m*u*(1 + 2*m*u)`` (valid while m*u <= 1/2); and 0 where no
    addition can round (:func:`sums_need_no_rounding`: T = 0, or ``addends`` given and every
    partial sum, in any order, representable in the accumulation format)."""
    if total == 0 or (addends is not None and subnormal_part == 0 and sums_need_no_rounding(addends, p, emin)):
        return Fraction(0)
    m = n - 1
    mu = Fraction(m, 1 << (p - 1))
    gamma = mu * (1 + 2 * mu)
    return gamma * total + m * Fraction(2) ** emin + subnormal_part


def _lowest_bit(v: Fraction) -> int:
    """The exponent of a non-zero dyadic value's lowest set bit (its 2-adic valuation)."""
    num, den = abs(v.numerator), v.denominator
    return (num & -num).bit_length() - 1 - (den.bit_length() - 1)


def sums_need_no_rounding(addends: Sequence[Fraction], p: int, emin: int) -> bool:
    """Whether every sum of a subset of ``addends`` -- so every partial sum, in any order or tree --
    is exactly representable as a normal number (or zero) of ``p`` bits with exponents from
    ``emin`` on: true when the non-zero addends lie on the grid ``2^G`` with ``G >= emin`` (the
    lowest set bit among them) and the sum of their magnitudes is below ``2^(G + p)``. Vacuously
    true when every addend is zero; true for one addend that fits.

    §9.7.14.5.14 "Precision and rounding": "Accumulation of the intermediate values is performed
    with at least single precision" (half precision when .ctype and .dtype are .f16), "The
    accumulation order, rounding and handling of subnormal inputs are unspecified." An unspecified
    rounding is still a rounding of the exact result (IEEE 754 §4.3), and in every direction a
    value that the format holds is its own rounding. So an addition whose exact result is
    representable adds no error, and when this holds for every partial sum of every order no
    addition adds any; only the final conversion into .dtype remains. The absolute term
    ``(n - 1) * 2^emin`` of :func:`error_bound` is for partial sums below 2^emin (underflowing, or
    flushed), which this excludes."""
    live = [v for v in addends if v]
    if not live:
        return True
    lowest = min(_lowest_bit(v) for v in live)
    return lowest >= emin and sum(abs(v) for v in live) < Fraction(2) ** (lowest + p)


def spec_sum(products: Sequence[Value], c: Value, subnormal: Sequence[bool], c_subnormal: bool, p: int, fd: FloatFormat) -> Result:
    """The spec-level set of ``sum_k products_k + c`` (the products exact, already decoded), every
    addition rounded to at least ``p`` bits in any order (module docstring), as a set of ``fd``:
    the set builder that :func:`spec_dot` and the block-scaled mma
    (:mod:`ptxspec.semantics.mma_block_scale`) share. ``subnormal``/``c_subnormal``: whether each
    addend involves a subnormal input (which may be read as zero)."""
    special = _special(products, c)
    if isinstance(special, NaN):
        return AnyNaN(fd)
    if isinstance(special, Infinity):
        return round_value(special, fd)
    acc = _accumulation_format(p)
    values = _finite([*products, c])
    flags = [*subnormal, c_subnormal]
    # Everything as integers on one grid 2^E: E is low enough that the exact sum S, the magnitude
    # sum T and each part of the bound are integers there (the bound's divisor 2^(2p-2) included).
    m, emin = len(values) - 1, acc.min_normal_exponent
    grid = min([v.exponent for v in values if v.significand] + [emin]) - (2 * p - 2)
    live = [(v, s) for v, s in zip(values, flags) if v.significand]
    exact = sum((-1 if v.sign else 1) * (v.significand << (v.exponent - grid)) for v, _ in live)
    total = sum(v.significand << (v.exponent - grid) for v, _ in live)
    sub = sum(v.significand << (v.exponent - grid) for v, s in live if s)
    largest = decode(acc, _max_finite(acc))
    assert isinstance(largest, Exact), "the largest finite value is finite"
    if total > largest.significand << (largest.exponent - grid):
        return Interval(fd, infinity(fd, 1), infinity(fd, 0), nan=True)
    # sums_need_no_rounding, on the grid: no addition can round, so D is S converted into .dtype
    # (in any direction). Else gamma_m * T <= (m * 2^(p-1) + 2 m^2) * T / 2^(2p-2) (error_bound, exactly).
    lowest = min((v.exponent + (v.significand & -v.significand).bit_length() - 1 for v, _ in live), default=emin)
    if not sub and lowest >= emin and total < 1 << (lowest - grid + p):
        bound = 0
    else:
        bound = (m * (1 << (p - 1)) + 2 * m * m) * (total >> (2 * p - 2)) + (m << (emin - grid)) + sub
    low = round_value(Exact(int(exact - bound < 0), abs(exact - bound), grid), fd, Rounding.RM)
    high = round_value(Exact(int(exact + bound < 0), abs(exact + bound), grid), fd, Rounding.RP)
    return Interval(fd, low, high)


def spec_dot(atype: str, btype: str, ctype: str, dtype: str, a: Sequence[int], b: Sequence[int], c: int) -> Result:
    """The spec-level result of one element of D: the set §9.7.14.5.14 "Precision and rounding"
    allows (module docstring; :func:`spec_sum`), an :class:`~ptxspec.semantics.results.Interval`
    of ``dtype``, any NaN, or one infinity. Where no addition can round (all addends zero, one
    non-zero addend that the accumulation format holds, or more generally every partial sum
    representable: :func:`sums_need_no_rounding`) the set is the exact sum converted into .dtype --
    for all-zero inputs the zero (either sign: the manual leaves the rounding, which decides the
    sign of an exact zero sum, unspecified)."""
    fa, fb, fc, fd = _fmt(atype), _fmt(btype), _fmt(ctype), _fmt(dtype)
    products = [_product(decode(fa, x), decode(fb, y)) for x, y in zip(a, b)]
    subnormal = [_is_subnormal(fa, x) or _is_subnormal(fb, y) for x, y in zip(a, b)]
    return spec_sum(products, decode(fc, c), subnormal, _is_subnormal(fc, c), accumulation_precision(atype, ctype, dtype), fd)


def _is_subnormal(fmt: FloatFormat, bits: int) -> bool:
    from ptxspec.semantics.numerics import is_subnormal

    return is_subnormal(fmt, bits)


def _max_finite(fmt: FloatFormat) -> int:
    from ptxspec.semantics.numerics import max_finite

    return max_finite(fmt)


def spec_dot_f64(a: Sequence[int], b: Sequence[int], c: int) -> Result:
    """.f64: "The precision of the element-wise multiplication and addition operations is identical
    to that of a .f64 precision fused multiply-add" (§9.7.14.5.14) -- the same predicate with
    p = 53: every multiply-add rounded to f64, in any order. The predicate allows every rounding
    direction (it does not narrow the set to the form's .rn/.rz/.rm/.rp); where no addition can
    round (:func:`sums_need_no_rounding`) the set is the exact sum rounded either way into f64."""
    return spec_dot("f64", "f64", "f64", "f64", a, b, c)


# ---------------------------------------------------------------------------------------------
# The datapath model
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Datapath:
    """A parametrised tensor-core datapath for one type combination (see the module docstring).

    Steps: the products (exact) are taken ``chunk`` k's at a time in order (all K when None); C
    joins the first step (``c_step == "first"``), the last (``"last"``), or is added to the
    products' sum in a step of its own (``"alone"``); with ``"tree"`` each group is summed on its
    own and the groups' sums and C are summed in a last step. In each step every non-zero addend
    (the step's products, and the accumulator or C) has a *reference exponent* -- ``"exponent"``:
    a product's is the sum of its inputs' exponent fields (the smallest normal exponent for a
    subnormal), C's and the accumulator's their own; ``"msb"``: the addend's leading bit -- and is
    cut to a multiple of ``2^(R - alignment_bits)``, R the largest reference exponent of the step:
    by truncation of its magnitude (``"zero"``) or of its two's-complement value (``"floor"``: a
    negative addend moves toward minus infinity). ``alignment_bits = None`` keeps every bit. The
    cut addends are summed exactly. Between steps the sum is rounded to ``accumulator``
    (exponent bits, mantissa bits; None: kept exact) with ``accumulator_rounding``; after the last
    step it is rounded into D with ``rounding`` (through ``via`` first, when set).
    """

    alignment_bits: int | None = None
    reference: str = "exponent"
    truncation: str = "zero"
    chunk: int | None = None
    c_step: str = "first"
    accumulator: tuple[int, int] | None = None
    accumulator_rounding: Rounding = Rounding.RZ
    rounding: Rounding = Rounding.RN
    via: tuple[int, int] | None = None
    via_rounding: Rounding = Rounding.RZ
    flush_inputs: bool = False
    flush_c: bool = False
    flush_output: bool = False
    #: The sign of a zero result: "ieee" (an exact zero sum is -0 only when all addends are -0; a
    #: tiny result keeps its sign) or "positive" (every zero result is +0).
    zero_sign: str = "ieee"
    #: A finite result beyond D's range: "rounding" (what the rounding mode gives: the largest
    #: finite value under .rz) or "infinity" (an infinity whatever the mode, as an adder that
    #: truncates in range but flags an exponent overflow gives).
    overflow: str = "rounding"
    #: The NaN that D holds for a NaN result: None gives the canonical NaN of D's format.
    nan: int | None = None
    #: The order in which the products are grouped into steps (:func:`order_indices`).
    order: str | tuple[int, ...] = "ascending"
    #: Which NaN a NaN result is: "fixed" (``nan``, or the canonical NaN), or "fma-chain": the
    #: NaN a chain of fused multiply-adds ``acc = fma(a_k, b_k, acc)`` from ``acc = c`` returns when
    #: each fma prefers b's quieted NaN, then the accumulator's, then a's, and gives ``nan`` for an
    #: invalid operation (0 * inf, inf - inf) -- the f64 fma rule of the sm_90 profile.
    nan_rule: str = "fixed"
    #: The alignment width of the step that adds C alone (``c_step == "alone"``); None: the same.
    c_alignment_bits: int | None = None
    #: The reference exponent of a subnormal A or B element: "field" (the smallest normal
    #: exponent, as its exponent field reads) or "normalised" (its leading bit's exponent, as an
    #: input converted to a wider format before the multiplier has it). Measured: sm_90 fp8.
    subnormal_reference: str = "field"
    #: How ``c_step == "tree"`` adds the groups' sums and C: "one step" (all of them in one more
    #: step) or "chain" (C first, then each group's sum in a step of its own, in group order: the
    #: accumulator rounded between them, the last into D) -- the order of a chain of IEEE
    #: additions ``(C + s_0) + s_1``, as ptxas's binary32 code for m8n8k4 .f16 on sm_90 adds.
    tree_sum: str = "one step"
    #: The reference exponent of a zero addend (a product with a zero factor, a zero C, a zero
    #: accumulator): None -- a zero takes no part in the alignment; an integer -- every addend of a
    #: step takes part, a zero with this exponent, so that a zero can coarsen the grid of the
    #: step's other addends (MMA-Sim's ``e_zero``: the sm_100 profile, :mod:`ptxspec.profiles.sm_100`).
    zero_reference: int | None = None
    #: Block-scaled kinds (``scales`` of :func:`datapath_dot`): None -- each scaled product
    #: ``(a_k * sa_k) * (b_k * sb_k)`` is an addend, its reference exponent the sum of the four
    #: factors' (exponent fields); G -- the unscaled products of G consecutive k (which share their
    #: scale factors) are summed exactly first, and the group's sum times its two scale factors is
    #: one addend whose reference exponent is the sum of the scale factors' exponents alone (the
    #: ``zero_reference`` when every product of the group is zero or a scale factor is zero; a
    #: group whose products cancel keeps the scales' exponent). MMA-Sim's ``gst_fdpa``, G = 16.
    scale_group: int | None = None

    def last_step_rounding(self) -> Rounding:
        """The rounding the last step's sum goes through first (which decides the sign of an
        exact zero sum): ``via_rounding`` when ``via`` is set, else ``rounding``."""
        return self.via_rounding if self.via is not None else self.rounding

    def c_step_model(self) -> "Datapath":
        """The model of the step that adds C to the products' sum, for ``c_step == "alone"``."""
        if self.c_alignment_bits is None:
            return self
        return attrs.evolve(self, alignment_bits=self.c_alignment_bits)

    def describe(self) -> str:
        parts = [
            f"E={self.alignment_bits}",
            self.reference,
            f"trunc={self.truncation}",
            f"chunk={self.chunk}",
            f"C {self.c_step}",
            f"acc={self.accumulator}/{self.accumulator_rounding.value}",
            f"final={self.rounding.value}",
        ]
        if self.via:
            parts.append(f"via={self.via}/{self.via_rounding.value}")
        for flag in ("flush_inputs", "flush_c", "flush_output"):
            if getattr(self, flag):
                parts.append(flag)
        if self.zero_sign != "ieee":
            parts.append(f"zero={self.zero_sign}")
        if self.order != "ascending":
            parts.append(self.order if isinstance(self.order, str) else "order=" + ",".join(map(str, self.order)))
        if self.overflow != "rounding":
            parts.append(f"overflow={self.overflow}")
        if self.c_alignment_bits is not None:
            parts.append(f"E(C)={self.c_alignment_bits}")
        if self.tree_sum != "one step":
            parts.append(f"tree sum={self.tree_sum}")
        if self.zero_reference is not None:
            parts.append(f"zero ref={self.zero_reference}")
        if self.scale_group is not None:
            parts.append(f"scale group={self.scale_group}")
        return ", ".join(parts)


#: binary32's (exponent bits, mantissa bits), as an ``accumulator`` or ``via`` of a
#: :class:`Datapath` (ptxas's binary32 code for m8n8k4 .f16: :mod:`ptxspec.profiles.sm_90.mma`).
BINARY32 = (8, 23)


def order_indices(order: str | tuple[int, ...], k: int) -> list[int]:
    """The k of each position of the product sequence: ``"ascending"``, ``"descending"``,
    ``"pairs"`` (the k with k % 4 in {0, 1} first, then those with k % 4 in {2, 3}: the low and the
    high half of every 32-bit register of 8-bit elements), or an explicit permutation."""
    if order == "ascending":
        return list(range(k))
    if order == "descending":
        return list(range(k - 1, -1, -1))
    if order == "pairs":
        return [i for i in range(k) if i % 4 < 2] + [i for i in range(k) if i % 4 >= 2]
    if isinstance(order, str):
        raise ValueError(f"unknown product order {order!r}")
    return list(order)


def _format(fields: tuple[int, int], name: str = "acc") -> FloatFormat:
    return FloatFormat(f"{name}{fields[0]}.{fields[1]}", fields[0], fields[1])


def _cut(x: Exact, grid: int, truncation: str) -> int:
    """The signed integer ``x / 2^grid`` truncated as the model says."""
    shift = grid - x.exponent
    if shift <= 0:
        q = x.significand << -shift
    else:
        q = x.significand >> shift
        if truncation == "floor" and x.sign and x.significand & ((1 << shift) - 1):
            q += 1
    return -q if x.sign else q


def _step(addends: list[tuple[Exact, int]], model: Datapath, mode: Rounding = Rounding.RN) -> Exact:
    """One step: align the (value, reference exponent) addends, cut them, sum exactly. ``mode``
    is the rounding the step's sum goes through: with ``zero_sign == "ieee"`` an exact zero sum
    takes IEEE 754 §6.3's sign -- -0 when every addend is -0, or under roundTowardNegative when
    any addend is negative; +0 otherwise."""
    ieee_rm = model.zero_sign == "ieee" and mode is Rounding.RM
    live = [(x, r) for x, r in addends if x.significand]
    if not live:
        signs = [x.sign for x, _ in addends]
        negative = model.zero_sign == "ieee" and (all(signs) or (ieee_rm and any(signs)))
        return Exact(int(negative), 0)
    if model.alignment_bits is None:
        grid = min(x.exponent for x, _ in live)
    else:  # with a zero_reference every addend takes part, a zero with that exponent
        grid = max(r for _, r in (addends if model.zero_reference is not None else live)) - model.alignment_bits
    total = sum(_cut(x, grid, model.truncation) for x, _ in live)
    if total == 0:  # cancellation: +0 (IEEE 754 §6.3 under every mode but .rm, which gives -0)
        return Exact(int(ieee_rm), 0)
    return Exact(int(total < 0), abs(total), grid)


def datapath_dot(
    model: Datapath,
    atype: str,
    btype: str,
    ctype: str,
    dtype: str,
    a: Sequence[int],
    b: Sequence[int],
    c: int,
    scales: tuple[str, Sequence[int], Sequence[int]] | None = None,
) -> int:
    """§9.7.14.5.14 "The accumulation order, rounding and handling of subnormal inputs are
    unspecified": the readable model of a datapath that pins them (:class:`Datapath`), and its
    meaning -- one element of D from a row of A, a column of B and c (element bits).
    :mod:`ptxspec.semantics.mma_vectorised` computes it on arrays, tested equal to this.

    ``scales``: for a block-scaled kind, ``(stype, sa, sb)`` -- the scale factor byte (§5.2.3
    ``.ue8m0``/``.ue4m3``) that applies to each k of ``a`` and of ``b``: §9.7.14.3 "D = (A *
    scale_A) * (B * scale_B) + C", each scaled product exact
    (:func:`ptxspec.semantics.mma_block_scale.scaled_product`); how the datapath aligns them is
    :attr:`Datapath.scale_group`."""
    fa, fb, fc, fd = _fmt(atype), _fmt(btype), _fmt(ctype), _fmt(dtype)
    av = [decode(fa, x, ftz=model.flush_inputs) for x in a]
    bv = [decode(fb, y, ftz=model.flush_inputs) for y in b]
    cv = decode(fc, c, ftz=model.flush_c)
    sav: list[Value | None] = [None] * len(av)
    sbv: list[Value | None] = [None] * len(bv)
    if scales is not None:
        from ptxspec.semantics.mma_block_scale import scale_factor_value, scaled_product

        stype, sa, sb = scales
        sav = [scale_factor_value(stype, s) for s in sa]
        sbv = [scale_factor_value(stype, t) for t in sb]
        products = [scaled_product(x, y, s, t) for x, y, s, t in zip(av, bv, sav, sbv)]
    else:
        products = [_product(x, y) for x, y in zip(av, bv)]
    nan_bits = canonical_nan(fd) if model.nan is None else model.nan
    special = _special(products, cv)
    if isinstance(special, NaN) and model.nan_rule == "fma-chain":
        assert scales is None, "the fma-chain NaN rule is .f64's, which has no scale factors"
        return _fma_chain_nan(av, bv, cv, fd, nan_bits, reverse=model.order == "descending")
    if special is not None:
        return round_value(special, fd, nan=nan_bits)
    # No addend is special, so every input is finite (a NaN or an infinite input makes one so; a
    # NaN scale factor makes its products NaN, and a scale factor has no infinity).
    finite_a, finite_b, finite_p = _finite(av), _finite(bv), _finite(products)
    assert isinstance(cv, Exact), "no addend is special"
    zero_reference = 0 if model.zero_reference is None else model.zero_reference

    def scale_reference(s: Value | None, t: Value | None) -> int:
        if s is None or t is None:
            return 0
        fs = _fmt(scales[0]) if scales is not None else fa
        return _reference(fs, _finite([s])[0]) + _reference(fs, _finite([t])[0])

    def reference_of(x: Exact, y: Exact, p: Exact, s: Value | None, t: Value | None) -> int:
        if model.reference == "msb" or not p.significand:
            return _msb(p) if p.significand else zero_reference
        if model.subnormal_reference == "normalised":
            return _msb(x) + _msb(y) + scale_reference(s, t)
        return _reference(fa, x) + _reference(fb, y) + scale_reference(s, t)

    if model.scale_group is not None:
        terms = _scale_groups(model.scale_group, finite_a, finite_b, sav, sbv, scale_reference, zero_reference)
    else:
        terms = [(p, reference_of(x, y, p, s, t)) for x, y, p, s, t in zip(finite_a, finite_b, finite_p, sav, sbv)]
    terms = [terms[i] for i in order_indices(model.order, len(terms))]
    if not cv.significand:
        c_term = (cv, zero_reference)
    else:
        c_term = (cv, _reference(fc, cv) if model.reference == "exponent" else _msb(cv))
    size = model.chunk or len(terms)
    groups = [terms[i : i + size] for i in range(0, len(terms), size)]
    if model.c_step == "tree":
        return _tree(groups, c_term, fd, model, nan_bits)
    if model.c_step == "alone":  # C is added to the products' sum in a step of its own
        groups.append([])
    acc: tuple[Exact, int] | None = c_term if model.c_step == "first" else None
    for s, group in enumerate(groups):
        last = s == len(groups) - 1
        members = list(group)
        if acc is not None:
            members.append(acc)
        if last and model.c_step in ("last", "alone"):
            members.append(c_term)
        mode = model.accumulator_rounding if not last and model.accumulator is not None else model.last_step_rounding()
        total = _step(members, model.c_step_model() if last and model.c_step == "alone" else model, mode)
        if last:
            return _final(total, fd, model)
        value, reference = _round_accumulator(total, model)
        if not isinstance(value, Exact):  # the accumulator overflowed
            return round_value(value, fd, nan=nan_bits)
        acc = (value, reference)
    raise AssertionError("unreachable")


def _round_accumulator(total: Exact, model: Datapath) -> tuple[Value, int]:
    """The step's sum rounded into the accumulator format, with its reference exponent (a zero's:
    the model's ``zero_reference``)."""
    zero = 0 if model.zero_reference is None else model.zero_reference
    if model.accumulator is None:
        return total, (_msb(total) if total.significand else zero)
    af = _format(model.accumulator)
    rounded = decode(af, round_value(total, af, model.accumulator_rounding))
    reference = _reference(af, rounded) if isinstance(rounded, Exact) and rounded.significand else zero
    return rounded, reference


def _scale_groups(
    size: int, av: list[Exact], bv: list[Exact], sav: list, sbv: list, scale_reference: Callable[[Value | None, Value | None], int], zero_reference: int
) -> list[tuple[Exact, int]]:
    """:attr:`Datapath.scale_group`: the addends of ``size`` consecutive k each -- the exact sum of
    the group's unscaled products times the group's two scale factors, with the sum of the scale
    factors' exponents as its reference (the ``zero_reference`` when every product of the group is
    zero, or a scale factor is)."""
    if sav[0] is None:
        raise ValueError("a datapath with a scale_group takes scale factors (datapath_dot's scales)")
    out = []
    for start in range(0, len(av), size):
        ks = range(start, min(start + size, len(av)))
        s, t = sav[start], sbv[start]
        if any(sav[k] != s or sbv[k] != t for k in ks):
            raise ValueError(f"the k of a scale group ({start}..{ks[-1]}) share one pair of scale factors")
        raw = [exact_product(av[k], bv[k]) for k in ks]
        value = _product(_product(_exact_total(raw), s), t)
        assert isinstance(value, Exact), "finite products times finite scale factors"
        zero = all(not p.significand for p in raw) or not (s.significand and t.significand)
        out.append((value, zero_reference if zero else scale_reference(s, t)))
    return out


def _tree(groups: list, c_term: tuple[Exact, int], fd: FloatFormat, model: Datapath, nan_bits: int) -> int:
    """``c_step == "tree"``: each group of products is summed on its own (cut, summed, rounded into
    the accumulator format); the partial sums and C are then summed in one more step, or with
    ``tree_sum == "chain"`` added to C one at a time, each step rounded into the accumulator."""
    partials = []
    for group in groups:
        mode = model.accumulator_rounding if model.accumulator is not None else model.rounding
        value, reference = _round_accumulator(_step(list(group), model, mode), model)
        if not isinstance(value, Exact):  # a partial sum overflowed
            return round_value(value, fd, nan=nan_bits)
        partials.append((value, reference))
    if model.tree_sum == "one step":
        return _final(_step(partials + [c_term], model, model.last_step_rounding()), fd, model)
    acc = c_term
    for partial in partials[:-1]:
        value, reference = _round_accumulator(_step([acc, partial], model, model.accumulator_rounding), model)
        if not isinstance(value, Exact):  # the running sum overflowed
            return round_value(value, fd, nan=nan_bits)
        acc = (value, reference)
    return _final(_step([acc, partials[-1]], model, model.last_step_rounding()), fd, model)


def _fma_chain_nan(av: list, bv: list, cv: Value, fd: FloatFormat, invalid: int, reverse: bool) -> int:
    """The NaN of a chain ``acc = fma(a_k, b_k, acc)`` (see :attr:`Datapath.nan_rule`)."""
    from ptxspec.semantics.numerics import quiet

    acc: Value | int = quiet(cv) if isinstance(cv, NaN) else cv
    pairs = list(zip(av, bv))
    for a, b in reversed(pairs) if reverse else pairs:
        if isinstance(b, NaN):
            acc = quiet(b)
        elif isinstance(acc, int):
            continue  # the accumulator is a NaN already
        elif isinstance(a, NaN):
            acc = quiet(a)
        else:
            p = _product(a, b)
            if isinstance(p, NaN):
                acc = invalid
            elif isinstance(p, Infinity) and isinstance(acc, Infinity) and p.sign != acc.sign:
                acc = invalid
            elif isinstance(p, Infinity):
                acc = p
    assert isinstance(acc, int), "a NaN result has a NaN in the chain"
    return acc


def _final(total: Exact, fd: FloatFormat, model: Datapath) -> int:
    if model.via is not None:
        vf = _format(model.via, "via")
        rounded = decode(vf, round_value(total, vf, model.via_rounding))
        if isinstance(rounded, Infinity):
            return round_value(rounded, fd)
        assert isinstance(rounded, Exact), "a finite sum rounds to no NaN"
        total = rounded
    if model.overflow == "infinity" and total.significand and _msb(total) > fd.max_exponent:
        return round_value(Infinity(total.sign), fd)
    bits = round_value(total, fd, model.rounding, ftz=model.flush_output)
    if model.zero_sign == "positive" and bits == fd.sign_mask:
        return 0
    return bits


# ---------------------------------------------------------------------------------------------
# The datapath on matrices
# ---------------------------------------------------------------------------------------------


def datapath_matrix(
    model: Datapath,
    atype: str,
    btype: str,
    ctype: str,
    dtype: str,
    A: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    scales: tuple[str, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """§9.7.14.5.14 D of ``D = A*B + C`` (element bits, uint64 ``[..., M, N]``) for A ``[..., M,
    K]``, B ``[..., K, N]`` and C ``[..., M, N]`` under ``model`` (batch dimensions broadcast):
    ``D[..., i, j]`` is :func:`datapath_dot` of row i of A, column j of B and ``C[..., i, j]``.

    ``scales``: for a block-scaled kind, ``(stype, scale_A, scale_B)`` with scale_A ``[..., M, V]``
    and scale_B ``[..., V, N]`` (bytes): §9.7.14.3 "each row of matrix A is divided into SFA_N
    number of blocks and each block of a row is multiplied with the corresponding element (SF_A)
    from the same row of scale_A" (and the columns of B likewise), so k takes block ``k // (K/V)``
    (:func:`ptxspec.semantics.mma_block_scale.block_of`).

    Computed on arrays by :func:`ptxspec.semantics.mma_vectorised.datapath_arrays` wherever one of
    its paths is proven exact for ``model`` (every measured datapath but .f64's): the same bits,
    as the tests that module names check; else element by element."""
    from ptxspec.semantics.mma_vectorised import datapath_arrays

    fast = datapath_arrays(model, atype, btype, ctype, dtype, A, B, C, scales=scales)
    if fast is not None:
        return fast
    if scales is None:
        return _each_element(lambda a, b, c: datapath_dot(model, atype, btype, ctype, dtype, a, b, c), A, B, C, np.uint64)
    stype, SA, SB = scales
    A, B, C = (np.asarray(x, dtype=np.uint64) for x in (A, B, C))
    SA, SB = per_k_scales(A.shape[-1], SA, SB)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2], SA.shape[:-2], SB.shape[:-2])
    shape = batch + C.shape[-2:]
    out = np.empty(shape, dtype=np.uint64)
    A, B, C, SA, SB = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (A, B, C, SA, SB))
    for index in np.ndindex(*shape):
        *at, i, j = index
        a, sa = A[(*at, i)].tolist(), SA[(*at, i)].tolist()
        b, sb = B[(*at, slice(None), j)].tolist(), SB[(*at, slice(None), j)].tolist()
        out[index] = datapath_dot(model, atype, btype, ctype, dtype, a, b, int(C[index]), scales=(stype, sa, sb))
    return out


def per_k_scales(k: int, SA, SB) -> tuple[np.ndarray, np.ndarray]:
    """scale_A ``[..., M, V]`` and scale_B ``[..., V, N]`` as the scale factor of every k:
    ``[..., M, K]`` and ``[..., K, N]`` (k in block ``k // (K/V)``, §9.7.14.3)."""
    SA, SB = np.asarray(SA, dtype=np.uint64), np.asarray(SB, dtype=np.uint64)
    vec = SA.shape[-1]
    if SB.shape[-2] != vec or k % vec:
        raise ValueError(f"scale_A has {vec} blocks per row and scale_B {SB.shape[-2]} per column, for K = {k}")
    return np.repeat(SA, k // vec, axis=-1), np.repeat(SB, k // vec, axis=-2)


def _each_element(dot: Callable[[list[int], list[int], int], object], A, B, C, dtype) -> np.ndarray:
    """``D[..., i, j] = dot(row i of A, column j of B, C[..., i, j])``, the elements as Python
    integers, for A ``[..., M, K]``, B ``[..., K, N]`` and C ``[..., M, N]`` (batch dimensions
    broadcast); D of numpy ``dtype``."""
    A, B, C = (np.asarray(x, dtype=np.uint64) for x in (A, B, C))
    m, k = A.shape[-2:]
    n = B.shape[-1]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2]) + (m, n)
    rows = np.broadcast_to(A[..., :, None, :], shape + (k,)).reshape(-1, k).tolist()
    cols = np.broadcast_to(np.swapaxes(B, -1, -2)[..., None, :, :], shape + (k,)).reshape(-1, k).tolist()
    cs = np.broadcast_to(C, shape).reshape(-1).tolist()
    out = np.empty(len(cs), dtype=dtype)
    out[:] = [dot(a, b, c) for a, b, c in zip(rows, cols, cs)]
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------
# Integer and single-bit mma (exact)
# ---------------------------------------------------------------------------------------------


def _signed(t: str, bits: np.ndarray) -> np.ndarray:
    width, signed = INTEGER_TYPES[t]
    x = bits.astype(np.int64)
    return np.where(x >> (width - 1) == 1, x - (1 << width), x) if signed else x


def integer_matrix(atype: str, btype: str, A: np.ndarray, B: np.ndarray, C: np.ndarray, *, satfinite: bool = False, bit_op: str | None = None) -> np.ndarray:
    """D = A*B + C on integers: "performed with .s32 accumulators"; "the .satfinite qualifier
    indicates that on overflow, the accumulated value is limited to the range MIN_INT32..MAX_INT32
    ... If .satfinite is not specified, the accumulated value is wrapped instead". For ``.b1``,
    ``bit_op`` ("xor"/"and") then popc replaces the products (§9.7.14.5.14). Exact: the sum of at
    most 256 products of 8-bit values, plus c, fits int64."""
    A, B, C = (np.asarray(x, dtype=np.uint64) for x in (A, B, C))
    if atype == "b1":
        a, b = A.astype(np.int64)[..., :, None, :], np.swapaxes(B.astype(np.int64), -1, -2)[..., None, :, :]
        bits = (a ^ b) if bit_op == "xor" else (a & b)
        dot = bits.sum(axis=-1)
    else:
        dot = np.matmul(_signed(atype, A), _signed(btype, B))
    total = dot + _signed("s32", C)
    if satfinite:
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return (total & 0xFFFFFFFF).astype(np.uint64)


# ---------------------------------------------------------------------------------------------
# A profile's datapaths
# ---------------------------------------------------------------------------------------------


def datapath_for(
    profile: Profile, atype: str, btype: str, ctype: str, dtype: str, rounding: Rounding | None = None, shape: str | None = None, *, sparse: bool = False
) -> Datapath | None:
    """The datapath ``profile`` measured for these types, .f64 rounding modifier and shape
    (``profile.mma_datapaths``; sm_90: :mod:`ptxspec.profiles.sm_90.mma`), or None: then the
    spec-level sets. With ``sparse`` the one measured for ``mma.sp`` of that shape, which sums the
    K/2 products of the stored half of each row of A (see :func:`mma_fragments`). A combination
    not measured -- another shape, another rounding modifier -- is evaluated at the spec level:
    the recordings say nothing about it."""
    key = MatrixKey(atype, btype, ctype, dtype, shape=shape, rounding=(rounding or Rounding.RN) if atype == "f64" else None, sparse=sparse)
    return profile.mma_datapaths.get(key)


def mma_matrix(
    atype: str,
    btype: str,
    ctype: str,
    dtype: str,
    A,
    B,
    C,
    *,
    profile: Profile,
    rounding: Rounding | None = None,
    satfinite: bool = False,
    bit_op: str | None = None,
):
    """See :func:`mma_matrix_shape`; the shape is read from the matrices (M x K, K x N)."""
    A = np.asarray(A, dtype=np.uint64)
    m, k = A.shape[-2:]
    n = np.asarray(B).shape[-1]
    return mma_matrix_shape(f"m{m}n{n}k{k}", atype, btype, ctype, dtype, A, B, C, profile=profile, rounding=rounding, satfinite=satfinite, bit_op=bit_op)


def mma_matrix_shape(
    shape: str,
    atype: str,
    btype: str,
    ctype: str,
    dtype: str,
    A,
    B,
    C,
    *,
    profile: Profile,
    rounding: Rounding | None = None,
    satfinite: bool = False,
    bit_op: str | None = None,
):
    """D of ``D = A*B + C`` for matrices of element bits (``[..., M, K]``, ``[..., K, N]``,
    ``[..., M, N]``): uint64 bits where the result is determined (integers; a measured datapath of
    ``profile``), else an object array of spec-level results (:func:`spec_dot`)."""
    A, B, C = (np.asarray(x, dtype=np.uint64) for x in (A, B, C))
    if atype in INTEGER_TYPES:
        return integer_matrix(atype, btype, A, B, C, satfinite=satfinite, bit_op=bit_op)
    model = datapath_for(profile, atype, btype, ctype, dtype, rounding or Rounding.RN, shape)
    if model is not None:
        return datapath_matrix(model, atype, btype, ctype, dtype, A, B, C)
    return _each_element(lambda a, b, c: spec_dot(atype, btype, ctype, dtype, a, b, c), A, B, C, object)


# ---------------------------------------------------------------------------------------------
# The semantic function: fragments in, fragments out
# ---------------------------------------------------------------------------------------------


def _layouts(form) -> dict:
    from ptxspec.semantics.matrix_layout import fragment_layout

    shape = form["shape"]
    sparse = form.get("spvariant") is not None
    out = {}
    for operand, slot in (("a", "atype"), ("b", "btype"), ("c", "ctype"), ("d", "dtype")):
        kw = {}
        if shape == "m8n8k4" and form[slot] == "f16" and operand in "ab":
            kw["layout"] = form["alayout" if operand == "a" else "blayout"]
        if sparse and operand in "ab":  # A: its stored half; B: the mma.sp fragment tables (§9.7.14.6.2)
            kw["sparse"] = True
        out[operand] = fragment_layout(shape, operand, form[slot], **kw)
    return out


def _lanes(value, name: str, bits: int | None = None) -> list:
    """A per-lane register operand: 32 lane values, or one int for every lane; each an integer
    bit pattern that fits the ``bits``-bit register (when ``bits`` is given)."""
    if isinstance(value, (int, np.integer)):
        value = [value] * 32
    try:
        value = list(value)
    except TypeError:
        raise OperandError(f"mma operand {name} is one integer or 32 lane values, got {value!r}", section=MMA_SECTION) from None
    if len(value) != 32:
        raise OperandError(f"mma operand {name} needs 32 lane values (a warp), got {len(value)}", section=MMA_SECTION)
    for lane, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise OperandError(f"mma operand {name}, lane {lane}: a register holds an integer bit pattern, got {v!r}", section=MMA_SECTION)
        if bits is not None and not 0 <= int(v) < 1 << bits:
            raise OperandError(f"mma operand {name}, lane {lane}: {int(v):#x} does not fit its {bits}-bit register", section=MMA_SECTION)
    return [int(v) for v in value]


def mma_fragments(form, a, b, c, *, profile: Profile, metadata=None, selector: int = 0):
    """D's registers (``[32, registers]``: uint64 bits, or an object array of per-register
    results) from the lanes' A, B, C registers (``[32, registers]`` arrays); for ``mma.sp`` also
    the metadata register of each lane (``[32]``) and the sparsity selector.

    mma.sp (§9.7.14.6): "For each K-wide row of matrix A, 50% elements are zeros and the remaining
    K/2 non-zero elements are packed in the operand representing matrix A. The mapping of these K/2
    elements to the corresponding K-wide row is provided explicitly as metadata": row i of D is
    the dot product of the K/2 stored elements of row i of A with the rows of B that the metadata
    names (:func:`sparse_rows`, :func:`sparse_matrix`); a row whose metadata the manual calls
    undefined gives undefined D elements."""
    L = _layouts(form)
    undefined_rows = None
    if form.get("spvariant") is not None:
        stored, cols, undefined_rows = sparse_rows(L["a"], a, metadata, selector, ordered=form["spvariant"] == "sp::ordered_metadata")
        D = sparse_matrix(
            form["shape"],
            form["atype"],
            form["btype"],
            form["ctype"],
            form["dtype"],
            stored,
            cols,
            L["b"].to_matrix(b),
            L["c"].to_matrix(c),
            profile=profile,
            satfinite=form.get("satfinite") is not None,
        )
        return _d_registers(L["d"], D, undefined_rows)
    A = L["a"].to_matrix(a)
    B, C = L["b"].to_matrix(b), L["c"].to_matrix(c)
    if L["a"].computations == 4:  # m8n8k4 .f16: four 8x8x4 mma stacked along the rows
        A = A.reshape(4, 8, 4)
        B = B.reshape(4, 4, 8)
        C = C.reshape(4, 8, 8)
    rounding = Rounding(form.get("rnd") or "rn") if form["atype"] == "f64" else None
    D = mma_matrix(
        form["atype"],
        form["btype"],
        form["ctype"],
        form["dtype"],
        A,
        B,
        C,
        profile=profile,
        rounding=rounding,
        satfinite=form.get("satfinite") is not None,
        bit_op=form.get("bitOp"),
    )
    if L["a"].computations == 4:
        D = D.reshape(32, 8)
    return _d_registers(L["d"], D, undefined_rows)


def sparse_rows(layout, a, metadata, selector: int, *, ordered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """§9.7.14.6 mma.sp's A as the rows' stored elements ``[..., M, K/2]``, the K position (row of
    B) that each of them takes ``[..., M, K/2]`` (§9.7.14.6.1's metadata, as
    :func:`~ptxspec.semantics.matrix_layout.expand_sparse` places them: the one sparse mechanism,
    :func:`ptxspec.semantics.sparse.selected_k`), and the rows whose metadata is undefined
    ``[..., M]``."""
    from ptxspec.semantics.matrix_layout import expand_sparse, metadata_layout

    e = np.asarray(metadata, dtype=np.uint64)
    stored = layout.to_matrix(a)

    def place(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return expand_sparse(layout, layout.from_matrix(numbers), e, selector, ordered=ordered)

    operand = sparse_operand(stored, place, metadata_layout(layout.shape, layout.element_type).blocks, layout.cols)
    return operand.stored, operand.k_index, operand.undefined


def sparse_matrix(shape: str, atype: str, btype: str, ctype: str, dtype: str, stored, cols, B, C, *, profile: Profile, satfinite: bool = False):
    """§9.7.14.6 D of mma.sp from the rows' stored elements of A and their K positions
    (:func:`sparse_rows`): D[i, j] sums the K/2 products ``stored[i, s] * B[cols[i, s], j]`` and
    C[i, j] (:func:`ptxspec.semantics.sparse.sparse_mma`: the elements of B at A's pruned positions
    are never read). Integers exactly; floats through the datapath ``profile`` measured for mma.sp
    of this shape, else the spec-level sets of those K/2 products (:func:`spec_dot`)."""
    half = np.shape(stored)[-1]
    n = np.shape(B)[-1]

    def dense(A1: np.ndarray, G1: np.ndarray, C1: np.ndarray) -> np.ndarray:
        if atype in INTEGER_TYPES:
            return integer_matrix(atype, btype, A1, G1, C1, satfinite=satfinite)
        model = datapath_for(profile, atype, btype, ctype, dtype, None, shape, sparse=True)
        if model is not None:
            return datapath_matrix(model, atype, btype, ctype, dtype, A1, G1, C1)
        return mma_matrix_shape(f"m1n{n}k{half}", atype, btype, ctype, dtype, A1, G1, C1, profile=SPEC)

    return sparse_mma(stored, cols, B, C, dense)


def _d_registers(ld, D, undefined_rows):
    """D's registers from the matrix D (undefined rows marked undefined)."""
    if undefined_rows is not None and undefined_rows.any():
        from ptxspec.semantics.warp import Undefined

        D = D.astype(object)
        D[undefined_rows, :] = Undefined(ld.element_bits)
    if D.dtype != object:
        return ld.from_matrix(D)
    # Per-element results: each register packs its elements, element 0 in the low bits.
    rows, cols, _ = ld._index
    out = np.empty((32, ld.registers), dtype=object)
    from ptxspec.semantics.results import pack_lanes

    for lane in range(32):
        for r in range(ld.registers):
            elements = [D[rows[lane, r, i], cols[lane, r, i]] for i in range(ld.per_register)]
            out[lane, r] = pack_lanes(list(reversed(elements)), ld.element_bits)
    return out


#: The families :func:`mma` is the meaning of (mma_block_scale.py has the .kind:: and .block_scale ones).
MMA_FAMILIES = ("mma.f16", "mma.alt", "mma.f8", "mma.f64", "mma.i8", "mma.i4", "mma.b1", "mma.sp.f16", "mma.sp.alt", "mma.sp.f8", "mma.sp.i8", "mma.sp.i4")


@semantic(*MMA_FAMILIES, operands=WARP_LANES)
def mma(form, *registers, profile: Profile, active: int = 0xFFFFFFFF):
    """§9.7.14.5.14 ``mma.sync.aligned``: "Perform a MxNxK matrix multiply and accumulate operation,
    D = A*B+C". ``registers`` are the source operands in the form's order (``a.0, a.1, ...,
    b.0, ..., c.0, ...``), each 32 lane values; returns one
    :class:`~ptxspec.semantics.warp.WarpResult` per register of D.

    "The mandatory .aligned qualifier indicates that all threads in the warp must execute the same
    mma instruction ... the behavior is undefined" otherwise: a warp with inactive lanes gives
    undefined registers. Numerics: the module docstring (spec level) and :func:`datapath_for`.
    """
    from ptxspec.semantics.warp import one_value, per_thread, undefined_warp

    L = _layouts(form)
    counts = [L[o].registers for o in "abc"]
    sparse = form.get("spvariant") is not None
    extra = 2 if sparse else 0  # mma.sp: the metadata e and the sparsity selector f
    if len(registers) != sum(counts) + extra:
        raise OperandError(f"{form.text} takes {sum(counts) + extra} source registers, got {len(registers)}", section=MMA_SECTION)
    width = L["d"].register_bits
    if active != 0xFFFFFFFF:
        return tuple(undefined_warp(width) for _ in range(L["d"].registers))
    arrays, at = [], 0
    for o, count in zip("abc", counts):
        regs = [_lanes(registers[at + r], f"{o}.{r}", L[o].register_bits) for r in range(count)]
        arrays.append(np.array(regs, dtype=np.uint64).T.reshape(32, count))
        at += count
    metadata, selector = None, 0  # mma_fragments' defaults: a dense mma
    if sparse:
        metadata = _lanes(registers[at], "e", 32)  # "operand e is a 32-bit integer"
        chosen = one_value(_lanes(registers[at + 1], "f"))
        if chosen is None:
            raise OperandError("the sparsity selector f is a constant: one value for the warp", section="9.7.14.6.3")
        selector = chosen
    D = mma_fragments(form, *arrays, profile=profile, metadata=metadata, selector=selector)
    return per_thread(D, width)
