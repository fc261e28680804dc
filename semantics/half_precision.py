"""§9.7.4 Half-precision floating-point instructions on .f16, .f16x2, .bf16 and .bf16x2.

The inner shape is that of §9.7.3 (:mod:`ptxspec.semantics.floating_point`): decode each element
exactly (flushing subnormal inputs under ``.ftz``), apply the NaN rule, compute the exact result
with the same exact operations (:func:`~ptxspec.semantics.floating_point.exact_add` ...), and round
once with :func:`~ptxspec.semantics.numerics.round_value`.

Packed types: "for .f16x2 and .bf16x2 instruction types, input vectors are formed from the
half-word values of the source operands. The half-word operands are then [operated on] in
parallel" -- ``fA[0] = a[0:15]; fA[1] = a[16:31]; ... d[i] = fA[i] + fB[i]``. Each lane is
independent, so the lanes are split and packed back with
:func:`~ptxspec.semantics.results.split_lanes` / :func:`~ptxspec.semantics.results.pack_lanes`
(whose lane 0 is the upper half; the manual's fA[0] is the lower half: the same bits go back
where they came from either way).

NaN results (§9.7.4): "Half-precision instructions return an unspecified NaN", which is
:meth:`Profile.unspecified_nan` (any NaN at spec level; sm_90 returns the canonical 0x7fff).
Where the manual names the canonical NaN (``fma.relu``, ``min``/``max`` with ``.NaN``), it is
the canonical NaN.

Rounding: ".rnd = { .rn }": every form rounds to nearest even; add, sub and mul default to .rn.

Open results: tanh.approx and ex2.approx return every encoding their error bound allows
(:func:`tanh_approx`, :func:`ex2_approx`); ``fma.oob`` with a NaN operand returns +0.0 or the NaN
result, as the manual never gives the OOB-NaN's encoding (:func:`out_of_bounds`). Where an H100 or
H200 was measured, the sm_90 profile pins these (``profile.fma_oob_nan``; for tanh and ex2 the
recorded result of every 16-bit input, ``profile.approx16_tables``, :func:`measured_table`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, FloatFormat
from ptxspec.semantics.floating_point import _less, exact_add, exact_fma, exact_mul, exact_sub, invalid, min_max_element, round_element
from ptxspec.semantics.floating_point_approx import (
    Real,
    add as add_real,
    between,
    exactly,
    exp2,
    multiply,
    negate,
    ordinal,
    power_of_two,
    round_real,
    tanh,
    within_distance,
)
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.numerics import (
    Exact,
    Infinity,
    NaN,
    Rounding,
    Value,
    canonical_nan,
    decode,
    infinity,
    max_finite,
    min_subnormal,
    round_value,
    to_fraction,
    zero,
)
from ptxspec.profiles import Profile
from ptxspec.semantics.results import Allowed, OneOf, Result, pack_lanes, split_lanes


def element_format(form: Form) -> FloatFormat:
    """One element's format: .f16x2 is two .f16, .bf16x2 two .bf16 (§5.2.4.1)."""
    return FORMATS["bf16"] if form["type"] in ("bf16", "bf16x2") else FORMATS["f16"]


def lane_count(form: Form) -> int:
    return 2 if form["type"].endswith("x2") else 1


def per_lane(form: Form, sources: tuple[int, ...], lane: Callable[[FloatFormat, list[int]], Result]) -> Result:
    """Apply ``lane`` to each element of the sources (one element, or the two half-words of an
    x2 type) and pack the lane results back into one register."""
    fmt = element_format(form)
    n = lane_count(form)
    split = [split_lanes(s, n, fmt.width) for s in sources]
    return pack_lanes([lane(fmt, [bits[i] for bits in split]) for i in range(n)], fmt.width)


def arithmetic(form: Form, profile: Profile, sources: tuple[int, ...], op: Callable[..., Value]) -> Result:
    """The exact operation ``op`` on each element, rounded once to nearest even.

    ``.ftz`` flushes subnormal inputs and results to sign-preserving zero; ``.sat`` clamps to
    [0.0, 1.0] with NaN flushed to +0.0 (§9.7.4: "half-precision add, sub, mul and fma support
    saturation of results to the range [0.0, 1.0], with NaNs being flushed to positive zero");
    ``.relu`` "clamps the result to 0 if negative. NaN results are converted to canonical NaN"
    (§9.7.4.4).
    """
    return per_lane(form, sources, arithmetic_element(form, profile, op))


def arithmetic_element(form: Form, profile: Profile, op: Callable[..., Value]) -> Callable[[FloatFormat, list[int]], Result]:
    """The per-element function of :func:`arithmetic`."""
    ftz, sat, relu = "ftz" in form, "sat" in form, "relu" in form
    mode = Rounding.RN

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        operands = [decode(fmt, b, ftz=ftz) for b in bits]
        value = invalid(fmt) if any(isinstance(v, NaN) for v in operands) else op(mode, *operands)
        if relu:
            if isinstance(value, NaN):
                return canonical_nan(fmt)
            return round_value(value, fmt, mode, ftz=ftz, relu=True)
        return round_element(fmt, profile, operands, value, mode, ftz=ftz, sat=sat, opcode=form.opcode)

    return lane


# ---------------------------------------------------------------------------------------------
# §9.7.4.1-4 add, sub, mul, fma
# ---------------------------------------------------------------------------------------------


@semantic("add.h")
def add(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.4.1 add: "performs addition and writes the resulting value into a destination
    register", ``d = a + b`` per element; ".rn: mantissa LSB rounds to nearest even", "the default
    value of rounding modifier is .rn"; "add.ftz.{f16, f16x2} flushes subnormal inputs and results
    to sign-preserving zero"; "add.sat.{f16, f16x2} clamps the result to [0.0, 1.0]. NaN results
    are flushed to +0.0f"."""
    return arithmetic(form, profile, (a, b), exact_add)


@semantic("sub.h")
def sub(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.4.2 sub: "performs subtraction", ``d = a - b`` per element; .rn, .ftz and .sat as for
    add. An exact zero difference is +0.0 under round to nearest (IEEE 754 §6.3)."""
    return arithmetic(form, profile, (a, b), exact_sub)


@semantic("mul.h")
def mul(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.4.3 mul: "performs multiplication", ``d = a * b`` per element; .rn, .ftz and .sat as
    for add; 0 * inf is invalid (a NaN)."""
    return arithmetic(form, profile, (a, b), exact_mul)


@semantic("fma.h")
def fma(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.4.4 fma: "performs a fused multiply-add with no loss of precision in the intermediate
    product and addition", ``d = a * b + c`` per element, rounded once (.rn, required).
    "fma.ftz.{f16, f16x2} flushes subnormal inputs and results to sign-preserving zero";
    "fma.sat.{f16, f16x2} clamps the result to [0.0, 1.0]. NaN results are flushed to +0.0f";
    "fma.relu.{f16, f16x2, bf16, bf16x2} clamps the result to 0 if negative. NaN results are
    converted to canonical NaN." A -0.0 result becomes +0.0 under .relu (the core's reading,
    which sm_90 shows for cvt.relu). ``.oob``: see :func:`out_of_bounds`."""
    if "oob" in form:
        return out_of_bounds(form, profile, (a, b, c))
    return arithmetic(form, profile, (a, b, c), exact_fma)


@attrs.frozen
class ZeroOrNaN(Allowed):
    """+0.0 or any NaN of ``format`` (not -0.0): the result of ``fma.oob`` with a NaN operand
    at spec level (see :func:`out_of_bounds`)."""

    format: FloatFormat

    def __contains__(self, bits: int) -> bool:
        return bits == zero(self.format, 0) or isinstance(decode(self.format, bits), NaN)

    def describe(self) -> str:
        return f"+0.0 or any {self.format.name} NaN"

    def to_json(self) -> dict:
        return {"kind": "zero-or-nan", "format": self.format.name}


def out_of_bounds(form: Form, profile: Profile, sources: tuple[int, int, int]) -> Result:
    """``fma.rn.oob{.relu}``: "fma.oob.{f16, f16x2, bf16, bf16x2} clamps the result to 0 if any
    of the operands is an OOB NaN value (defined under tensors). The test for the special NaN
    value and the forcing of the result to +0.0 are performed independently for each SIMD
    operation" (§9.7.4.4).

    "OOB-NaN" is defined in §5.5.3.3 only as "a special NaN" that tensor operations write into
    the elements of a bounding box that fall outside the tensor; the manual gives no encoding.
    So, per element:

    * no operand is a NaN: no operand is the OOB-NaN, and the result is that of ``fma.rn{.relu}``;
    * some operand is a NaN: it may or may not be the OOB-NaN, so the allowed results are +0.0
      and the NaN result of ``fma.rn{.relu}`` -- the chapter's unspecified NaN (any NaN at spec
      level; the canonical NaN under a profile that pins it), or the canonical NaN 0x7fff under
      ``.relu`` ("NaN results are converted to canonical NaN").

    Which NaN encodings a chip treats as OOB-NaN is a hardware fact the manual leaves out; a
    profile pins it in ``profile.fma_oob_nan`` (sm_90: 0x7ff7 of either sign, in a or b only).
    """
    fma_element = arithmetic_element(form, profile, exact_fma)
    measured = profile.fma_oob_nan

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        if measured is not None:
            encodings, positions = measured
            return zero(fmt, 0) if any(bits[i] in encodings for i in positions) else fma_element(fmt, bits)
        if not any(isinstance(decode(fmt, b), NaN) for b in bits):
            return fma_element(fmt, bits)
        nan = fma_element(fmt, bits)  # the NaN result of fma.rn{.relu}
        if isinstance(nan, int):
            return OneOf(frozenset({zero(fmt, 0), nan}), fmt.width)
        return ZeroOrNaN(fmt)

    return per_lane(form, sources, lane)


# ---------------------------------------------------------------------------------------------
# §9.7.4.5 neg, §9.7.4.6 abs
# ---------------------------------------------------------------------------------------------


def _sign_op(form: Form, profile: Profile, a: int, op: Callable[[Exact | Infinity], Exact | Infinity]) -> Result:
    """neg and abs: "NaN inputs yield an unspecified NaN" (§9.7.4.5-6); under ``.ftz`` a subnormal
    input is first flushed to a zero of its sign."""
    ftz = "ftz" in form

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        x = decode(fmt, bits[0], ftz=ftz)
        if isinstance(x, NaN):
            return profile.unspecified_nan(fmt)
        return round_value(op(x), fmt, ftz=ftz)

    return per_lane(form, (a,), lane)


@semantic("neg.h")
def neg(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.4.5 neg: "negate the sign of a and store the result in d"; "neg.ftz.{f16, f16x2}
    flushes subnormal inputs and results to sign-preserving zero"; "NaN inputs yield an
    unspecified NaN. Future implementations may comply with the IEEE 754 standard by preserving
    payload and modifying only the sign bit." """
    return _sign_op(form, profile, a, lambda x: x.negate())


@semantic("abs.h")
def abs_(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.4.6 abs: "take absolute value of a and store the result in d"; "abs.ftz.{f16, f16x2}
    flushes subnormal inputs and results to sign-preserving zero"; "NaN inputs yield an
    unspecified NaN." """
    return _sign_op(form, profile, a, lambda x: x.magnitude() if isinstance(x, Exact) else Infinity(0))


# ---------------------------------------------------------------------------------------------
# §9.7.4.7 min, §9.7.4.8 max
# ---------------------------------------------------------------------------------------------


def _min_max(form: Form, profile: Profile, a: int, b: int, pick_a: Callable[[Exact | Infinity, Exact | Infinity], bool]) -> Result:
    """The pseudo-code of §9.7.4.7-8, per element::

        if (.xorsign) { xorsign = getSignBit(a) ^ getSignBit(b); if (.abs) { a = |a|; b = |b|; } }
        if (isNaN(a) && isNaN(b))              d = NaN;
        if (.NaN && (isNaN(a) || isNaN(b)))    d = NaN;
        else if (isNaN(a))                     d = b;
        else if (isNaN(b))                     d = a;
        else                                   d = (a < b) ? a : b;     // max: (a > b)
        if (.xorsign && !isNaN(d)) { setSignBit(d, xorsign); }

    "If .NaN modifier is specified, the result is canonical NaN if either of the inputs is NaN";
    two NaN inputs without .NaN give the chapter's unspecified NaN. "If both inputs are 0.0,
    +0.0 > -0.0."
    """
    ftz = "ftz" in form

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        x, y = decode(fmt, bits[0], ftz=ftz), decode(fmt, bits[1], ftz=ftz)
        return min_max_element(form, fmt, x, y, pick_a, lambda: profile.unspecified_nan(fmt))

    return per_lane(form, (a, b), lane)


@semantic("min.h")
def min_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.4.7 min: "store the minimum of a and b in d" (pseudo-code in :func:`_min_max`);
    ".xorsign.abs": "the magnitude of d is the minimum of the absolute values of both inputs",
    "the sign bit of d is the XOR of the sign bits of both inputs", "ignored if the result of min
    is NaN"; "min.ftz.{f16, f16x2} flushes subnormal inputs and results to sign-preserving zero"."""
    return _min_max(form, profile, a, b, lambda x, y: _less(x, y))


@semantic("max.h")
def max_(form: Form, a: int, b: int, *, profile: Profile) -> Result:
    """§9.7.4.8 max: "store the maximum of a and b in d"; .NaN, .xorsign.abs and .ftz as for min
    with (a > b). The .f16x2 pseudo-code tests ``!isNaN(fA[i])`` before setting the xorsign where
    the scalar one (and min) test ``!isNaN(d)``; both agree except when fA[i] is NaN and the
    result is fB[i], and "if the result of max is NaN, .xorsign.abs is ignored" (the description)
    decides for ``!isNaN(d)`` -- taken here for both."""
    return _min_max(form, profile, a, b, lambda x, y: _less(y, x))


# ---------------------------------------------------------------------------------------------
# §9.7.4.9 tanh.approx
# ---------------------------------------------------------------------------------------------


def _remembered(x: Real) -> Real:
    """``x`` (irrational) with its enclosures remembered, for a bound asked for at the same few
    precisions again and again."""
    assert x.bounds is not None, "an irrational bound is known by its enclosures"
    return Real(bounds=functools.lru_cache(maxsize=None)(x.bounds))


#: "The maximum absolute error for .f16 type is 2^-10.987. The maximum absolute error for .bf16
#: type is 2^-8." (§9.7.4.9)
TANH_ABSOLUTE = {"f16": power_of_two(-10987, 1000), "bf16": power_of_two(-8, 1)}
# 2^-10.987 is irrational: its enclosures (1000th integer roots) are costly, and the same few
# precisions are asked for again and again, so they are remembered.
TANH_ABSOLUTE["f16"] = _remembered(TANH_ABSOLUTE["f16"])


@functools.cache
def _table_file(name: str) -> dict:
    import importlib.resources

    import numpy as np

    with importlib.resources.files("ptxspec.semantics").joinpath("data", name).open("rb") as f, np.load(f) as z:
        return {key: z[key] for key in z.files}


def measured_table(profile: Profile, key: str):
    """The table of ``key`` (``tanh.f16``, ``tanh.bf16``, ``ex2.f16``, ``ex2.ftz.bf16``) that
    ``profile`` pins (the file ``profile.approx16_tables``), as a uint16 array indexed by the input
    word; None where the profile measured none (``spec``). Loaded once, on first use."""
    name = profile.approx16_tables
    return None if name is None else _table_file(name).get(key)


def _table_key(form: Form, fmt: FloatFormat) -> str:
    return ".".join([form.opcode, *(["ftz"] if "ftz" in form else []), fmt.name])


@semantic("tanh.approx.half")
def tanh_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.4.9 tanh.approx: ``d = tanh(a)`` per element, "an approximate hyperbolic tangent in
    the target format"; every encoding within the maximum absolute error of tanh(a) is allowed.
    "Subnormal numbers are supported."

    Table: -Inf -> -1.0, -0.0 -> -0.0, +0.0 -> +0.0, +Inf -> 1.0, NaN -> NaN (the chapter's
    unspecified NaN).

    A profile that recorded every input (sm_90: :func:`measured_table`) returns the recorded
    result, in each lane of an x2 form; the spec returns the set.
    """

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        table = measured_table(profile, _table_key(form, fmt))
        if table is not None:
            return int(table[bits[0]])
        x = decode(fmt, bits[0])
        if isinstance(x, NaN):
            return profile.unspecified_nan(fmt)
        if isinstance(x, Infinity):
            return round_value(Exact(x.sign, 1), fmt)
        if x.is_zero:
            return bits[0]
        return within_distance(fmt, tanh(to_fraction(x)), TANH_ABSOLUTE[fmt.name], ftz=False)

    return per_lane(form, (a,), lane)


# ---------------------------------------------------------------------------------------------
# §9.7.4.10 ex2.approx
# ---------------------------------------------------------------------------------------------

#: "The maximum relative error for .f16 type is 2^-9.9. The maximum relative error for .bf16 type
#: is 2^-7." (§9.7.4.10)
EX2_RELATIVE = {"f16": power_of_two(-99, 10), "bf16": power_of_two(-7, 1)}
# 2^-9.9 is irrational; its enclosures (10th integer roots) are remembered as for tanh's bound.
EX2_RELATIVE["f16"] = _remembered(EX2_RELATIVE["f16"])


def ex2_bounds(fmt: FloatFormat) -> tuple[int, int]:
    """The inputs beyond which 2^a need not be enclosed. For ``a >= max_exponent + 2``, 2^a (1 -
    eps) is above the largest finite value (which is below 2^(max_exponent + 1)): the set is the
    largest finite value and +Inf. For ``a <= m - 1``, m the exponent of the smallest subnormal,
    2^a (1 + eps) is below the smallest subnormal: the set is +0.0 and the smallest subnormal."""
    smallest_subnormal = fmt.min_normal_exponent - fmt.mantissa_bits
    return fmt.max_exponent + 2, smallest_subnormal - 1


def faithful_to_bound(fmt: FloatFormat, low: Real | int, high: Real | int, *, ftz: bool) -> Result:
    """For ``0 <= low <= high``: every encoding that is the rounding, down or up, of some real in
    [low, high] -- from ``RD(low)`` to ``RU(high)`` -- with each subnormal member flushed to +0.0
    under ``.ftz``. ``low``/``high`` may be given as encodings already rounded.

    A set that reaches +0.0 is listed member by member (it has a few): an
    :class:`~ptxspec.semantics.results.Interval` counts -0.0 equal to +0.0, and no rounding of a
    positive real is -0.0.
    """
    bottom = low if isinstance(low, int) else round_real(low, fmt, Rounding.RM)
    top = high if isinstance(high, int) else round_real(high, fmt, Rounding.RP)
    first, last = ordinal(fmt, bottom), ordinal(fmt, top)
    if first > 0:
        return between(fmt, first, last, ftz=ftz)
    members = {fmt_flush(fmt, n, ftz) for n in range(0, last + 1)}
    return next(iter(members)) if len(members) == 1 else OneOf(frozenset(members), fmt.width)


def fmt_flush(fmt: FloatFormat, n: int, ftz: bool) -> int:
    """The encoding of the non-negative ordinal ``n``; under ``.ftz`` a subnormal is +0.0."""
    return zero(fmt, 0) if ftz and 0 < n < (1 << fmt.mantissa_bits) else n


@semantic("ex2.approx.half")
def ex2_approx(form: Form, a: int, *, profile: Profile) -> Result:
    """§9.7.4.10 ex2.approx: ``d = 2 ^ a`` per element, "a fast approximation to 2^a". "The
    maximum relative error for .f16 type is 2^-9.9. The maximum relative error for .bf16 type is
    2^-7."

    **The allowed set** (:func:`faithful_to_bound`): the result is an approximation y' of y = 2^a
    with ``|y' - y| <= eps * y``, delivered in the target format; the manual names no rounding for
    .approx results, so y' may reach the format rounded down or up. The set is every encoding
    from ``RD(y (1 - eps))`` to ``RU(y (1 + eps))``: the encodings within the bound and, at each
    end, the nearest encoding beyond it. This reading

    * always holds the correctly rounded 2^a, so it is never empty -- a relative bound read alone
      allows nothing where the format cannot come that close: for subnormal results (the .f16
      spacing 2^-24 is wider than 2^-9.9 of the value) and beyond the largest finite value, where
      +Inf is at no finite relative distance;
    * overflows the way a rounding does: past the largest finite value the set is that value and
      +Inf (the table's "+Inf -> +Inf" is exact); far below the smallest subnormal it is +0.0 and
      the smallest subnormal;
    * holds what an H200 (sm_90) returns for every one of the 2^16 inputs of .f16 and .bf16
      (measured for this reading: 399 .f16 subnormal results are one step from the correctly
      rounded value and outside the bound itself, so a narrower rule would reject the chip).

    Subnormals: "For .f16 type, subnormal inputs are supported. ex2.approx.ftz.bf16 flushes
    subnormal inputs and results to sign-preserving zero" -- under .ftz a subnormal input is a
    zero (2^0 = 1.0, as the table says: "-subnormal -> +1.0", "+subnormal -> +1.0") and each
    subnormal member of the set becomes +0.0 (2^a is positive). .f16 results may be subnormal.

    Tables: -Inf -> +0.0, -0.0 -> +1.0, +0.0 -> +1.0, +Inf -> +Inf, NaN -> NaN (the chapter's
    unspecified NaN).

    A profile that recorded every input (sm_90: :func:`measured_table`) returns the recorded
    result, in each lane of an x2 form; the spec returns the set.
    """
    ftz = "ftz" in form

    def lane(fmt: FloatFormat, bits: list[int]) -> Result:
        table = measured_table(profile, _table_key(form, fmt))
        if table is not None:
            return int(table[bits[0]])
        x = decode(fmt, bits[0], ftz=ftz)
        if isinstance(x, NaN):
            return profile.unspecified_nan(fmt)
        if isinstance(x, Infinity):
            return zero(fmt, 0) if x.sign else infinity(fmt, 0)
        if x.is_zero:
            return round_value(Exact(0, 1), fmt)
        value = to_fraction(x)
        overflow, underflow = ex2_bounds(fmt)
        if value >= overflow:
            return faithful_to_bound(fmt, max_finite(fmt), infinity(fmt), ftz=ftz)
        if value <= underflow:
            return faithful_to_bound(fmt, zero(fmt), min_subnormal(fmt), ftz=ftz)
        y, eps, one = exp2(value), EX2_RELATIVE[fmt.name], exactly(1)
        return faithful_to_bound(fmt, multiply(y, add_real(one, negate(eps))), multiply(y, add_real(one, eps)), ftz=ftz)

    return per_lane(form, (a,), lane)


# ---------------------------------------------------------------------------------------------
# §9.7.5 mixed precision: add, sub, fma with .f32 result
# ---------------------------------------------------------------------------------------------

F32 = FORMATS["f32"]


def convert(fmt: FloatFormat, bits: int) -> Value:
    """ "convert(a)": the .f16/.bf16 input "converted to .f32 type" (§9.7.5.1). Every f16 and bf16
    value is an f32 value, so the conversion is exact: the decoded value is the converted one."""
    return decode(fmt, bits)


def mixed(form: Form, profile: Profile, narrow: tuple[int, ...], c: int, op: Callable[..., Value]) -> Result:
    """``op(convert(a), [convert(b),] c)`` computed exactly and rounded once to .f32 by ``.rnd``;
    ``.sat`` clamps to [0.0, 1.0] with "NaN results flushed to +0.0f" (§9.7.5). The result is an
    .f32 one, so a NaN result is single precision's unspecified NaN (§9.7.3)."""
    fmt = FORMATS[form["atype"]]
    sat = "sat" in form
    token = form.get("rnd")
    mode = Rounding(token) if token else Rounding.RN
    operands = [convert(fmt, x) for x in narrow] + [decode(F32, c)]
    value = invalid() if any(isinstance(v, NaN) for v in operands) else op(mode, *operands)
    # A NaN operand keeps its own format in ``operands``; only "is it NaN" matters to the f32 rule.
    return round_element(F32, profile, operands, value, mode, ftz=False, sat=sat, opcode=form.opcode)


@semantic("add.mixed")
def add_mixed(form: Form, a: int, c: int, *, profile: Profile) -> Result:
    """§9.7.5.1 add: "converts the input operand a from .atype to .f32 type. The converted value is
    then used for the addition. The resulting value is stored in the destination operand d":
    ``d = convert(a) + c``; .rnd (default .rn) is any of .rn, .rz, .rm, .rp; "subnormal numbers
    are supported by default"; "add.sat clamps the result to [0.0, 1.0]. NaN results are flushed
    to +0.0f"."""
    return mixed(form, profile, (a,), c, exact_add)


@semantic("sub.mixed")
def sub_mixed(form: Form, a: int, c: int, *, profile: Profile) -> Result:
    """§9.7.5.2 sub: ``d = convert(a) - c``; .rnd and .sat as for the mixed-precision add."""
    return mixed(form, profile, (a,), c, exact_sub)


@semantic("fma.mixed")
def fma_mixed(form: Form, a: int, b: int, c: int, *, profile: Profile) -> Result:
    """§9.7.5.3 fma: ``d = convert(a) * convert(b) + c``; "fma.f32.{f16/bf16} computes the product
    of a and b to infinite precision and then adds c to this product, again in infinite precision.
    The resulting value is then rounded to single precision using the rounding mode specified by
    .rnd" (no default). "Subnormal numbers are supported by default"; ``.ftz`` is refused by the
    catalogue (see :mod:`ptxspec.spec.half_precision`)."""
    return mixed(form, profile, (a, b), c, exact_fma)
