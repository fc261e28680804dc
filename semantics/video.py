"""§9.7.18 Video instructions: the scalar forms of §9.7.18.1 (vmad with its own pseudo-code, see
:func:`vmad`) and the SIMD forms of §9.7.18.2.

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
from ptxspec.spec.video import destination_type, product_negated, selector, signed_final
from ptxspec.semantics.instructions import semantic
from ptxspec.profiles import Profile

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


def scalar_video(form: Form, a: int, b: int, c: int | None, operation: Callable[[int, int], int], profile: Profile | None = None) -> int:
    """The common shape of §9.7.18.1: extract, operate, saturate, secondary operation or merge,
    keep the low 32 bits. ``c`` is read with the sign of dtype ("The sign of the third operand is
    based on dtype"). A chip that departs from the manual's stages gives its own result
    (``profile.scalar_video``: sm_90, :func:`ptxspec.profiles.sm_90.video.scalar_video`)."""
    ta = part_select_sign_extend(a, form["atype"], selector(form, "asel"))
    tb = part_select_sign_extend(b, form["btype"], selector(form, "bsel"))
    if profile is not None and profile.scalar_video is not None:
        return profile.scalar_video(form, operation(ta, tb), c)
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


def negated_terms(form: Form, tmp: int, c: int) -> tuple[int, int, int]:
    """§9.7.18.1.3's negation step, shared by the manual's vmad and sm_90's
    (:func:`ptxspec.profiles.sm_90.video.vmad`):
    ``if (.po) lsb = 1; else if (a.negate ^ b.negate) { tmp = ~tmp; lsb = 1; } else if
    (c.negate) { c = ~c; lsb = 1; }``. Returns (tmp, c, lsb)."""
    if "po" in form:
        return tmp, c, 1
    if product_negated(form):
        return ~tmp, c, 1
    if "neg_c" in form:
        return tmp, ~c & WORD, 1
    return tmp, c, 0


def saturate_final(form: Form, result: int, signed: bool) -> int:
    """vmad's ``if (.sat) CLAMP to S32 or U32 by signedFinal``, then the low word to d."""
    if "sat" in form:
        result = clamp(result, 2**31 - 1, -(2**31)) if signed else clamp(result, WORD, 0)
    return result & WORD


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.1 vadd, vsub, vabsdiff, vmin, vmax
# ---------------------------------------------------------------------------------------------


@semantic("vadd")
def vadd(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vadd: "Integer byte/half-word/word addition": ``tmp = ta + tb``."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta + tb, profile)


@semantic("vsub")
def vsub(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vsub: "Integer byte/half-word/word subtraction": ``tmp = ta - tb``."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta - tb, profile)


@semantic("vabsdiff")
def vabsdiff(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vabsdiff: "Integer byte/half-word/word absolute value of difference":
    ``tmp = | ta - tb |``, exact on the .s33 inputs."""
    return scalar_video(form, a, b, c, lambda ta, tb: abs(ta - tb), profile)


@semantic("vmin")
def vmin(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vmin: "Integer byte/half-word/word minimum": ``tmp = MIN( ta, tb )``, each
    input compared with its own signedness (an .s32 -1 is below a .u32 0)."""
    return scalar_video(form, a, b, c, min, profile)


@semantic("vmax")
def vmax(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.1 vmax: "Integer byte/half-word/word maximum": ``tmp = MAX( ta, tb )``."""
    return scalar_video(form, a, b, c, max, profile)


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
    return scalar_video(form, a, b, c, lambda ta, tb: ta << shift_amount(form, tb), profile)


@semantic("vshr")
def vshr(form: Form, a: int, b: int, c: int | None = None, *, profile: Profile) -> int:
    """§9.7.18.1.2 vshr: "Shift a right by unsigned amount in b ... Signed shift fills with the
    sign bit, unsigned shift fills with zero": ``tmp = ta >> tb`` on the sign- or zero-extended
    input (an arithmetic shift of an .s33 value)."""
    return scalar_video(form, a, b, c, lambda ta, tb: ta >> shift_amount(form, tb), profile)


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.3 vmad
# ---------------------------------------------------------------------------------------------

#: ``& 0xffffffffffffffff`` of the scaled result.
DOUBLEWORD = (1 << 64) - 1


def scale_result(tmp: int, scale: str | None, signed: bool) -> int:
    """``switch( scale ) { case .shr7: result = (tmp >> 7) & 0xffffffffffffffff; case .shr15:
    result = (tmp >> 15) & 0xffffffffffffffff; }`` -- "The intermediate result is optionally
    scaled via right-shift; this result is sign-extended if the final result is signed, and
    zero-extended otherwise": the 64-bit field is read back as a signed or unsigned number.

    Without ``.scale`` the switch assigns nothing and ``result`` is ``tmp`` itself, the exact
    128-bit sum (no 64-bit truncation is written for that case). The two readings differ only
    under ``.sat`` for ``-(u32 * u32) + c`` below -2^63, where the exact value clamps to S32_MIN.
    """
    if scale is None:
        return tmp
    shift = {"shr7": 7, "shr15": 15}[scale]
    # tmp is held exactly, so Python's arithmetic shift is the 128-bit shift; the bits that an
    # arithmetic and a logical 128-bit shift would disagree on are above bit 63 and masked off.
    result = (tmp >> shift) & DOUBLEWORD
    if signed and result >> 63:
        return result - (1 << 64)
    return result


@semantic("vmad")
def vmad(form: Form, a: int, b: int, c: int, *, profile: Profile) -> int:
    """§9.7.18.1.3 vmad: "Calculate (a*b) + c, with optional operand negates, plus one mode, and
    scaling." The manual's pseudo-code, line by line (Python integers hold ``tmp[127:0]``
    exactly)::

        ta = partSelectSignExtend( a, atype, asel );
        tb = partSelectSignExtend( b, btype, bsel );
        signedFinal = isSigned(atype) || isSigned(btype) || (a.negate ^ b.negate) || c.negate;
        tmp[127:0] = ta * tb;
        lsb = 0;
        if ( .po )                  {              lsb = 1; } else
        if ( a.negate ^ b.negate )  { tmp = ~tmp;  lsb = 1; } else
        if ( c.negate )             { c   = ~c;    lsb = 1; }
        c128[127:0] = (signedFinal) sext32( c ) : zext ( c );
        tmp = tmp + c128 + lsb;
        switch( scale ) { ... }                     // scale_result
        if ( .sat ) { CLAMP to S32 or U32 by signedFinal }

    "(a*b) is negated if and only if exactly one of a or b is negated"; ``~tmp`` with ``lsb = 1``
    is the two's-complement negation. A negated c is complemented as a 32-bit word and then
    sign-extended (c.negate makes signedFinal true), so ``-c`` is the negation of c read as .s32:
    the pseudo-code decides this over the table's "(u32 * u32) - u32", whose c would be read
    unsigned (they differ when bit 31 of c is set). ".po computes (a*b) + c + 1". dtype does not
    appear in the pseudo-code; the sign of the final result is signedFinal ("The final result is
    unsigned if the intermediate result is unsigned and c is not negated"). The lower 32 bits of
    the result are written to d.

    A chip that departs from this gives its own result (``profile.vmad``: sm_90,
    :func:`ptxspec.profiles.sm_90.video.vmad`: whole-word sources multiply as signed, c is always
    sign-extended).
    """
    if profile.vmad is not None:
        return profile.vmad(form, a, b, c)
    ta = part_select_sign_extend(a, form["atype"], selector(form, "asel"))
    tb = part_select_sign_extend(b, form["btype"], selector(form, "bsel"))
    signed = signed_final(form)
    tmp, c, lsb = negated_terms(form, ta * tb, c)
    c128 = part_select_sign_extend(c, "s32" if signed else "u32", None)
    tmp = tmp + c128 + lsb
    return saturate_final(form, scale_result(tmp, form.get("scale"), signed), signed)


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
    return scalar_video(form, a, b, c, lambda ta, tb: int(compare(ta, tb)), profile)


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
