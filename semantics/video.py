"""§9.7.18 Video instructions: the scalar forms of §9.7.18.1 (vmad is not modelled yet) and the
SIMD forms of §9.7.18.2.

Every scalar video function has the manual's four stages (§9.7.18.1): "Extract and sign- or
zero-extend byte, half-word, or word values from its source operands, to produce signed 33-bit
input values. Perform a scalar arithmetic operation to produce a signed 34-bit result. Optionally
clamp the result to the range of the destination type. Optionally perform one of the following:
apply a second operation to the intermediate result and a third operand, or truncate the
intermediate result to a byte or half-word value and merge into a specified position in the third
operand to produce the final result." Then "the lower 32-bits are then written to the destination
operand."

The stages are the manual's pseudo-code functions :func:`part_select_sign_extend`,
:func:`opt_saturate`, :func:`opt_secondary_op` and :func:`opt_merge`, on Python integers (exact,
so the .s33/.s34 widths never wrap). The operand selectors are the form's ``asel``, ``bsel`` and
``dsel`` slots (see :mod:`ptxspec.spec.video`).
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Form
from ptxspec.spec.video import destination_type, selector
from ptxspec.semantics.instructions import semantic
from ptxspec.semantics.results import Profile

WORD = 0xFFFF_FFFF

#: Each selector: the bit position and width of the part it selects.
PARTS: dict[str, tuple[int, int]] = {
    "b0": (0, 8),
    "b1": (8, 8),
    "b2": (16, 8),
    "b3": (24, 8),
    "h0": (0, 16),
    "h1": (16, 16),
}


def part_select_sign_extend(x: int, type_name: str, sel: str | None) -> int:
    """``partSelectSignExtend(x, type, sel)``: the byte, half-word (``sel``) or word (no selector)
    of the 32-bit ``x``, sign-extended when ``type`` is .s32 and zero-extended when .u32.

    "Using the atype/btype and asel/bsel specifiers, the input values are extracted and sign- or
    zero-extended internally to .s33 values."
    """
    shift, width = PARTS[sel] if sel is not None else (0, 32)
    part = (x >> shift) & ((1 << width) - 1)
    if type_name == "s32" and part >> (width - 1):
        return part - (1 << width)
    return part


def signed_34(value: int) -> int:
    """The .s34 intermediate: "Perform a scalar arithmetic operation to produce a signed 34-bit
    result." Sums, differences, minima and maxima of .s33 inputs always fit; a left shift may not,
    and its bits above bit 33 are lost before ``.sat`` clamps (measured on an H200:
    ``vshl.u32.u32.u32.clamp.sat`` of 0x8d97c4df by 9 gives 0, as the wrapped .s34 value is
    negative)."""
    value &= (1 << 34) - 1
    return value - (1 << 34) if value >> 33 else value


def clamp(value: int, high: int, low: int) -> int:
    """``CLAMP(x, MAX, MIN)`` of the pseudo-code."""
    return max(low, min(high, value))


def opt_saturate(tmp: int, sat: bool, sign: bool, dsel: str | None) -> int:
    """``optSaturate``: with ``.sat``, clamp to the signed or unsigned range of the destination,
    "taking into account the subword destination size in the case of optional data merging" --
    8 bits for ``.b0``-``.b3``, 16 for ``.h0``/``.h1``, 32 otherwise."""
    if not sat:
        return tmp
    bits = 32 if dsel is None else PARTS[dsel][1]
    if sign:
        return clamp(tmp, (1 << (bits - 1)) - 1, -(1 << (bits - 1)))
    return clamp(tmp, (1 << bits) - 1, 0)


def opt_secondary_op(secop: str | None, tmp: int, c: int) -> int:
    """``optSecOp``: ``.add`` gives ``tmp + c``, ``.min``/``.max`` the smaller/larger, none ``tmp``.

    No saturation follows: the pseudo-code applies ``optSaturate`` before the secondary operation,
    and the lower 32 bits of ``tmp + c`` are written.
    """
    if secop == "add":
        return tmp + c
    if secop == "min":
        return min(tmp, c)
    if secop == "max":
        return max(tmp, c)
    return tmp


def opt_merge(dsel: str | None, tmp: int, c: int) -> int:
    """``optMerge``: the low byte or half-word of ``tmp`` replaces the part ``dsel`` of ``c``;
    with no destination selector, ``tmp`` itself."""
    if dsel is None:
        return tmp
    shift, width = PARTS[dsel]
    mask = ((1 << width) - 1) << shift
    return ((tmp << shift) & mask) | (c & WORD & ~mask)


def scalar_video(form: Form, a: int, b: int, c: int | None, operation: Callable[[int, int], int]) -> int:
    """The common shape of §9.7.18.1: extract, operate, saturate, secondary operation or merge,
    keep the low 32 bits. ``c`` is read with the sign of dtype ("The sign of the third operand is
    based on dtype")."""
    ta = part_select_sign_extend(a, form["atype"], selector(form, "asel"))
    tb = part_select_sign_extend(b, form["btype"], selector(form, "bsel"))
    tmp = signed_34(operation(ta, tb))
    dsel = selector(form, "dsel")
    dtype = destination_type(form)
    tmp = opt_saturate(tmp, "sat" in form, dtype == "s32", dsel)
    if c is None:
        return tmp & WORD
    tc = part_select_sign_extend(c, dtype, None)
    if dsel is not None:
        return opt_merge(dsel, tmp, tc) & WORD
    return opt_secondary_op(form.get("secop"), tmp, tc) & WORD


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.1 vadd, vsub, vabsdiff, vmin, vmax
# ---------------------------------------------------------------------------------------------


@semantic("vadd")
def vadd(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vadd: "Integer byte/half-word/word addition": ``tmp = ta + tb``."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta + tb)


@semantic("vsub")
def vsub(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vsub: "Integer byte/half-word/word subtraction": ``tmp = ta - tb``."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta - tb)


@semantic("vabsdiff")
def vabsdiff(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vabsdiff: "Integer byte/half-word/word absolute value of difference":
    ``tmp = | ta - tb |``, exact on the .s33 inputs."""
    return scalar_video(form, a, b, c, lambda ta, tb: abs(ta - tb))


@semantic("vmin")
def vmin(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vmin: "Integer byte/half-word/word minimum": ``tmp = MIN( ta, tb )``, each
    input compared with its own signedness (an .s32 -1 is below a .u32 0)."""
    return scalar_video(form, a, b, c, min)


@semantic("vmax")
def vmax(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vmax: "Integer byte/half-word/word maximum": ``tmp = MAX( ta, tb )``."""
    return scalar_video(form, a, b, c, max)


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.2 vshl, vshr
# ---------------------------------------------------------------------------------------------


def shift_amount(form: Form, tb: int) -> int:
    """``.clamp``: "if ( mode == .clamp && tb > 32 ) tb = 32"; ``.wrap``: "tb = tb & 0x1f"."""
    if form["mode"] == "clamp":
        return min(tb, 32)
    return tb & 0x1F


@semantic("vshl")
def vshl(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.2 vshl: "Shift a left by unsigned amount in b ... Left shift fills with zero":
    ``tmp = ta << tb``, with b read as .u32 ("tb = partSelectSignExtend( b, .u32, bsel )").

    The shifted value is the .s34 intermediate of §9.7.18.1 (:func:`signed_34`): bits shifted
    beyond bit 33 are lost before ``.sat`` clamps, so ``.sat`` does not catch every overflow.
    """
    return scalar_video(form, a, b, c, lambda ta, tb: ta << shift_amount(form, tb))


@semantic("vshr")
def vshr(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.2 vshr: "Shift a right by unsigned amount in b ... Signed shift fills with the
    sign bit, unsigned shift fills with zero": ``tmp = ta >> tb`` on the sign- or zero-extended
    input (an arithmetic shift of an .s33 value)."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta >> shift_amount(form, tb))


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.4 vset
# ---------------------------------------------------------------------------------------------

#: The six comparisons of ``.cmp``, on the extended (exact) input values.
COMPARISONS: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
}


@semantic("vset")
def vset(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.4 vset: "Compare input values using specified comparison":
    ``tmp = compare( ta, tb, cmp ) ? 1 : 0``, then the secondary operation or merge. "The
    intermediate result of the comparison is always unsigned, and therefore destination d and
    operand c are also unsigned"; vset has no ``.sat``."""
    compare = COMPARISONS[form["cmp"]]
    return scalar_video(form, a, b, c, lambda ta, tb: int(compare(ta, tb)))


# ---------------------------------------------------------------------------------------------
# §9.7.18.2 SIMD video instructions
# ---------------------------------------------------------------------------------------------

#: The manual's defaults: "mask ... defaults to .h10", ".asel defaults to .h10", ".bsel defaults
#: to .h32" (2-way); ".b3210", ".b3210", ".b7654" (4-way).
SIMD_DEFAULTS: dict[int, dict[str, str]] = {
    2: {"mask": "h10", "asel": "h10", "bsel": "h32"},
    4: {"mask": "b3210", "asel": "b3210", "bsel": "b7654"},
}


def simd_choice(form: Form, slot: str, lanes: int) -> str:
    """The form's mask/asel/bsel (``"h32"``, ``"b7654"``, ...), or the manual's default."""
    token = form.get(slot)
    return SIMD_DEFAULTS[lanes][slot] if token is None else token.split("_", 1)[1]


def lane_digits(choice: str) -> list[int]:
    """The digits of ``.hxy``/``.bxyzw`` from lane 0 up: the last digit picks lane 0, as the
    defaults ``.h10`` (lane 0 from half-word 0 of a) and ``.b7654`` (bytes of b) show."""
    return [int(ch) for ch in reversed(choice[1:])]


def extract_and_sign_ext(a: int, b: int, choice: str, type_name: str, lanes: int) -> list[int]:
    """``extractAndSignExt_2/_4( a, b, sel, type )``: "Elements ... are selected from any of the
    four half-words [eight bytes] in the two source operands a and b" -- a holds elements 0-1
    [0-3], b elements 2-3 [4-7] -- and sign- or zero-extended by ``type``."""
    width = 32 // lanes
    pool = (b << 32) | a
    return [part_select(pool >> (width * k), width, type_name == "s32") for k in lane_digits(choice)]


def part_select(x: int, width: int, signed: bool) -> int:
    """The low ``width`` bits of ``x``, sign-extended when ``signed``."""
    part = x & ((1 << width) - 1)
    return part - (1 << width) if signed and part >> (width - 1) else part


def average(x: int, y: int) -> int:
    """vavrg: "if ( ( Va[i] + Vb[i] ) >= 0 ) t[i] = ( Va[i] + Vb[i] + 1 ) >> 1; else t[i] =
    ( Va[i] + Vb[i] ) >> 1" (halves round up for non-negative sums, down for negative ones)."""
    total = x + y
    return (total + 1) >> 1 if total >= 0 else total >> 1


def simd_video(form: Form, a: int, b: int, c: int, lanes: int, operation: Callable[[int, int], int]) -> int:
    """The common shape of §9.7.18.2: extract lanes, operate on each, optionally clamp to the lane
    range of dtype, then accumulate into c (``.add``) or merge with c under the mask.

    The merge pseudo-code reads ``d |= mask[i] ? t[i] : Vc[i]``; the prose says which lane goes
    where: "For half-word [byte] positions indicated in mask, the selected half-word results are
    copied into destination d. For all other positions, the corresponding half-word from source
    operand c is copied to d", so lane i is truncated to its width and placed at position i. The
    accumulate adds the lane results, at full width (they are not truncated to a lane), to c:
    "the selected half-word results are added to operand c, producing a result in d" (the low
    32 bits kept). ptxas 13.0 agrees with the catalogue here: it rejects ``.sat`` with ``.add``
    and the manual's example masks ``.b00`` and secondary op ``.max`` on vset4.
    """
    width = 32 // lanes
    signed = destination_type(form) == "s32"
    va = extract_and_sign_ext(a, b, simd_choice(form, "asel", lanes), form["atype"], lanes)
    vb = extract_and_sign_ext(a, b, simd_choice(form, "bsel", lanes), form["btype"], lanes)
    t = [operation(x, y) for x, y in zip(va, vb)]
    if "sat" in form:
        low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        t = [clamp(v, high, low) for v in t]
    mask = {int(ch) for ch in simd_choice(form, "mask", lanes)[1:]}
    if form.get("secop") == "add":
        return (c + sum(t[i] for i in range(lanes) if i in mask)) & WORD
    lane_bits = (1 << width) - 1
    d = 0
    for i in range(lanes):
        part = t[i] if i in mask else c >> (width * i)
        d |= (part & lane_bits) << (width * i)
    return d


@semantic("vadd2")
def vadd2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vadd2: ``t[i] = Va[i] + Vb[i]`` on each half-word lane."""
    return simd_video(form, a, b, c, 2, lambda x, y: x + y)


@semantic("vsub2")
def vsub2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vsub2: ``t[i] = Va[i] - Vb[i]`` on each half-word lane."""
    return simd_video(form, a, b, c, 2, lambda x, y: x - y)


@semantic("vavrg2")
def vavrg2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vavrg2: the rounded average (see :func:`average`) on each half-word lane."""
    return simd_video(form, a, b, c, 2, average)


@semantic("vabsdiff2")
def vabsdiff2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vabsdiff2: ``t[i] = | Va[i] - Vb[i] |`` on each half-word lane."""
    return simd_video(form, a, b, c, 2, lambda x, y: abs(x - y))


@semantic("vmin2")
def vmin2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vmin2: ``t[i] = MIN( Va[i], Vb[i] )`` on each half-word lane."""
    return simd_video(form, a, b, c, 2, min)


@semantic("vmax2")
def vmax2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.1 vmax2: ``t[i] = MAX( Va[i], Vb[i] )`` on each half-word lane."""
    return simd_video(form, a, b, c, 2, max)


@semantic("vset2")
def vset2(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.2 vset2: ``t[i] = compare( Va[i], Vb[i], cmp ) ? 1 : 0``; "The intermediate
    result of the comparison is always unsigned, and therefore the half-words of destination d
    and operand c are also unsigned". The merge takes the unselected lanes from c, as the
    pseudo-code says (``Vc[i]``), not from b as the description's sentence has it."""
    compare = COMPARISONS[form["cmp"]]
    return simd_video(form, a, b, c, 2, lambda x, y: int(compare(x, y)))


@semantic("vadd4")
def vadd4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vadd4: ``t[i] = Va[i] + Vb[i]`` on each byte lane."""
    return simd_video(form, a, b, c, 4, lambda x, y: x + y)


@semantic("vsub4")
def vsub4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vsub4: ``t[i] = Va[i] - Vb[i]`` on each byte lane."""
    return simd_video(form, a, b, c, 4, lambda x, y: x - y)


@semantic("vavrg4")
def vavrg4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vavrg4: the rounded average (see :func:`average`) on each byte lane."""
    return simd_video(form, a, b, c, 4, average)


@semantic("vabsdiff4")
def vabsdiff4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vabsdiff4: ``t[i] = | Va[i] - Vb[i] |`` on each byte lane."""
    return simd_video(form, a, b, c, 4, lambda x, y: abs(x - y))


@semantic("vmin4")
def vmin4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vmin4: ``t[i] = MIN( Va[i], Vb[i] )`` on each byte lane."""
    return simd_video(form, a, b, c, 4, min)


@semantic("vmax4")
def vmax4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.3 vmax4: ``t[i] = MAX( Va[i], Vb[i] )`` on each byte lane."""
    return simd_video(form, a, b, c, 4, max)


@semantic("vset4")
def vset4(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.2.4 vset4: ``t[i] = compare( Va[i], Vb[i], cmp ) ? 1 : 0``; "The intermediate
    result of the comparison is always unsigned, and therefore the bytes of destination d
    and operand c are also unsigned". The merge takes the unselected lanes from c, as the
    pseudo-code says (``Vc[i]``), not from b as the description's sentence has it."""
    compare = COMPARISONS[form["cmp"]]
    return simd_video(form, a, b, c, 4, lambda x, y: int(compare(x, y)))
