"""Batched paths of §9.7.18, the video instructions: the scalar forms of §9.7.18.1 (vadd, vsub,
vabsdiff, vmin, vmax, vshl, vshr, vmad, vset) and the SIMD forms of §9.7.18.2 (vadd2 ... vset2,
vadd4 ... vset4), twins of :mod:`ptxspec.semantics.video` and of sm_90's departures
(:mod:`ptxspec.profiles.sm_90.video`).

Every builder is generic over the form's qualifiers: it reads dtype, atype, btype, ``.sat``, the
secondary operation, the selectors (``asel``/``bsel``/``dsel``, the SIMD ``mask``), vmad's
negations, ``.po`` and ``.scale`` from the :class:`Form` exactly as the scalar functions do, so
one builder serves every spelling of a family (10^10 for the SIMD ones).

Exactness: the sources are 32-bit words, so every extended input (.s33 of the manual) and every
scalar result before the secondary operation lies within +-2^34, far inside int64; the sums,
differences, minima, maxima, comparisons and arithmetic right shifts of numpy's int64 are then the
exact integer operations of the scalar code. The two places where a value can outgrow int64 are
handled explicitly: a left shift (:func:`_shift_left`: numpy wraps modulo 2^64, and the overflow
is detected for the one consumer that needs more than the low bits), and vmad's 128-bit sum
(:func:`_vmad_sum_128`: an exact 65-bit magnitude product split into two 64-bit words).

A chip's departures arrive as the profile's callables ``scalar_video`` and ``vmad``, with their
batched twins ``scalar_video_batch`` and ``vmad_batch`` (for sm_90 in
:mod:`ptxspec.profiles.sm_90.video`, built on this module's stages). A profile with a departure
but no twin leaves every vector undecided (the readable semantics decides them), so an unknown
chip is never computed with another's rules.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxspec.profiles import Profile
from ptxspec.semantics import video
from ptxspec.semantics.batch import BatchResult, FastPath, batched
from ptxspec.spec.catalogue import Form
from ptxspec.spec.video import destination_type, product_negated, selector, signed_final

#: The low 32 bits, as an int64 mask.
WORD = np.int64(0xFFFF_FFFF)
S32_MIN, S32_MAX = -(2**31), 2**31 - 1

#: An int64 operation on extended inputs (exact, or wrapped modulo 2^64 for a left shift).
Operation = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _result(bits: np.ndarray, undecided: np.ndarray | None = None) -> BatchResult:
    """The 32-bit destination d from the int64 ``bits`` (their low 32 bits are written)."""
    return BatchResult((bits & WORD).astype(np.uint32), None, None, 1, 32, undecided=undecided)


def _undecided(n: int) -> BatchResult:
    """Every vector left to the readable semantics (a profile callable with no batched twin)."""
    return _result(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))


# ---------------------------------------------------------------------------------------------
# Stage 1: extraction (partSelectSignExtend, extractAndSignExt)
# ---------------------------------------------------------------------------------------------


def extract(x: np.ndarray, shift: int, width: int, signed: bool) -> np.ndarray:
    """Bits ``shift`` .. ``shift + width - 1`` of the words ``x`` as int64, sign-extended when
    ``signed`` (``(p ^ 2^(w-1)) - 2^(w-1)`` is the two's-complement reading of a w-bit p)."""
    part = (x.astype(np.int64) >> np.int64(shift)) & np.int64((1 << width) - 1)
    if signed:
        half = np.int64(1 << (width - 1))
        part = (part ^ half) - half
    return part


def select(x: np.ndarray, type_name: str, sel: str | None) -> np.ndarray:
    """``partSelectSignExtend(x, type, sel)`` (:func:`ptxspec.semantics.video.part_select_sign_extend`)."""
    shift, width = video.PARTS[sel] if sel is not None else (0, 32)
    return extract(x, shift, width, type_name == "s32")


# ---------------------------------------------------------------------------------------------
# Stage 2: the scalar operations (§9.7.18.1.1, §9.7.18.1.2, §9.7.18.1.4)
# ---------------------------------------------------------------------------------------------


def _shift_amount(form: Form, tb: np.ndarray) -> np.ndarray:
    """:func:`ptxspec.semantics.video.shift_amount`: ``.clamp`` caps at 32, ``.wrap`` keeps 5 bits
    (tb is a zero-extended .u32, so both are exact on int64)."""
    return np.minimum(tb, 32) if form["mode"] == "clamp" else tb & np.int64(0x1F)


def _shift_left(ta: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """``ta << amount`` modulo 2^64 (numpy wraps a signed shift like two's complement), so every
    bit the scalar code reads below bit 64 is exact; :func:`_shift_key` bounds what is lost."""
    return ta << amount


def _shift_key(ta: np.ndarray, amount: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """A stand-in for the exact ``ta << amount`` in signed comparisons with a 32-bit value: the
    wrapped ``tmp`` where it is exact (shifting it back gives ta), else +-2^62, which lies on the
    same side of every 32-bit value as the exact product does (the sign of ``ta << k`` is ta's)."""
    exact = (tmp >> amount) == ta
    return np.where(exact, tmp, np.where(ta < 0, np.int64(-(2**62)), np.int64(2**62)))


def _scalar_operation(form: Form) -> Operation:
    """The operation of a scalar opcode on its extended inputs, as the scalar function's lambda."""
    op = form.opcode
    if op == "vadd":
        return lambda ta, tb: ta + tb
    if op == "vsub":
        return lambda ta, tb: ta - tb
    if op == "vabsdiff":
        return lambda ta, tb: np.abs(ta - tb)
    if op == "vmin":
        return np.minimum
    if op == "vmax":
        return np.maximum
    if op == "vshl":
        return lambda ta, tb: _shift_left(ta, _shift_amount(form, tb))
    if op == "vshr":
        # int64 >> is the arithmetic (floor) shift of Python's >> on the .s33 value; amount <= 32.
        return lambda ta, tb: ta >> _shift_amount(form, tb)
    if op == "vset":
        return _comparison(form["cmp"])
    raise AssertionError(op)


def _comparison(cmp: str) -> Operation:
    """``compare(ta, tb, cmp) ? 1 : 0`` (:data:`ptxspec.semantics.video.COMPARISONS`)."""
    compare = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}[cmp]
    return lambda x, y: compare(x, y).astype(np.int64)


def signed_34(tmp: np.ndarray) -> np.ndarray:
    """:func:`ptxspec.semantics.video.signed_34`: the low 34 bits read as signed (exact from the
    low 64 bits, which is all a wrapped left shift keeps)."""
    half = np.int64(1 << 33)
    return ((tmp & np.int64((1 << 34) - 1)) ^ half) - half


# ---------------------------------------------------------------------------------------------
# Stages 3-4 under the manual (§9.7.18.1) and under sm_90's departures
# ---------------------------------------------------------------------------------------------


def merge(dsel: str, tmp: np.ndarray, c: np.ndarray, placed: np.ndarray) -> np.ndarray:
    """``optMerge``: the part ``dsel`` of the word taken from ``placed`` (tmp moved into place),
    the rest from c (int64 masks on the low 32 bits are exact)."""
    shift, width = video.PARTS[dsel]
    mask = np.int64(((1 << width) - 1) << shift)
    return (placed & mask) | (c & (WORD ^ mask))


def _manual_finish(form: Form, tmp: np.ndarray, c: np.ndarray | None) -> np.ndarray:
    """:func:`ptxspec.semantics.video.scalar_video` after the operation: the .s34 wrap,
    ``optSaturate`` (the subword range under a destination selector), then the merge or
    ``optSecOp`` with c read by dtype. All values stay within +-2^35 (exact on int64)."""
    tmp = signed_34(tmp)
    dsel = selector(form, "dsel")
    dtype = destination_type(form)
    if "sat" in form:
        bits = 32 if dsel is None else video.PARTS[dsel][1]
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dtype == "s32" else (0, (1 << bits) - 1)
        tmp = np.clip(tmp, low, high)
    if c is None:
        return tmp
    tc = select(c, dtype, None)
    if dsel is not None:
        return merge(dsel, tmp, tc, tmp << np.int64(video.PARTS[dsel][0]))
    secop = form.get("secop")
    if secop == "add":
        return tmp + tc
    return np.minimum(tmp, tc) if secop == "min" else np.maximum(tmp, tc)


@batched("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset")
def scalar_video(form: Form) -> FastPath:
    """§9.7.18.1.1 (vadd, vsub, vabsdiff, vmin, vmax), §9.7.18.1.2 (vshl, vshr), §9.7.18.1.4
    (vset): extract and extend (:func:`select`), operate, then the manual's saturation, merge or
    secondary operation (:func:`_manual_finish`) or the profile's (``profile.scalar_video_batch``). Exact
    on int64 as the module docstring says; the left shift keeps its low 64 bits and its sign."""
    atype, btype = form["atype"], form["btype"]
    asel, bsel = selector(form, "asel"), selector(form, "bsel")
    operation = _scalar_operation(form)

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, profile: Profile) -> BatchResult:
        ta, tb = select(a, atype, asel), select(b, btype, bsel)
        tmp = operation(ta, tb)
        if profile.scalar_video is None:
            return _result(_manual_finish(form, tmp, c))
        twin = profile.scalar_video_batch
        if twin is None:
            return _undecided(len(a))
        key = (lambda t: _shift_key(ta, _shift_amount(form, tb), t)) if form.opcode == "vshl" else (lambda t: t)
        return _result(twin(form, tmp, c, key))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.18.1.3 vmad
# ---------------------------------------------------------------------------------------------


def _vmad_sum_128(ta: np.ndarray, tb: np.ndarray, negate: bool, addend: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``+-(ta * tb) + addend`` exactly, as the 128-bit two's complement pair (hi int64, lo
    uint64): value = hi * 2^64 + lo.

    |ta|, |tb| < 2^32, so the magnitude of the product is below 2^64 and uint64 multiplication
    is exact; the product's sign is applied as a 128-bit negation, and the int64 ``addend`` is
    added with a carry out of the low word. The value lies within +-2^65, so hi is in -2..1."""
    magnitude = np.abs(ta).astype(np.uint64) * np.abs(tb).astype(np.uint64)
    negative = ((ta < 0) != (tb < 0)) != negate
    lo = np.where(negative, np.uint64(0) - magnitude, magnitude)
    hi = np.where(negative & (magnitude != 0), np.int64(-1), np.int64(0))
    add_lo = addend.view(np.uint64)
    total = lo + add_lo
    carry = (total < lo).astype(np.int64)
    return hi + np.where(addend < 0, np.int64(-1), np.int64(0)) + carry, total


def _clamp_128(hi: np.ndarray, lo: np.ndarray, signed: bool) -> np.ndarray:
    """``CLAMP`` of the exact 128-bit value (hi, lo) to the .s32 or .u32 range, as int64."""
    if signed:
        fits = hi == (lo.view(np.int64) >> np.int64(63))  # the value is the int64 reading of lo
        return np.where(fits, np.clip(lo.view(np.int64), S32_MIN, S32_MAX), np.where(hi < 0, np.int64(S32_MIN), np.int64(S32_MAX)))
    inside = np.minimum(lo, np.uint64(0xFFFF_FFFF)).astype(np.int64)
    return np.where(hi < 0, np.int64(0), np.where(hi > 0, WORD, inside))


def _vmad_manual(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`ptxspec.semantics.video.vmad`: ``tmp = ta * tb``, the negation step
    (``~tmp`` is ``-tmp - 1``), ``+ c128 + lsb``, ``scale_result`` (bits shift ..
    shift + 63 of the 128-bit pair, read by signedFinal), ``.sat``, the low word."""
    ta = select(a, form["atype"], selector(form, "asel"))
    tb = select(b, form["btype"], selector(form, "bsel"))
    signed = signed_final(form)
    negate, lsb = product_negated(form), int("po" in form or product_negated(form) or "neg_c" in form)
    if "neg_c" in form and "po" not in form and not negate:
        c = c ^ np.uint32(0xFFFF_FFFF)
    # ``~tmp`` is ``-tmp - 1``: the negated product, and one less in the addend.
    addend = select(c, "s32" if signed else "u32", None) + np.int64(lsb - int(negate))
    hi, lo = _vmad_sum_128(ta, tb, negate, addend)
    scale = form.get("scale")
    if scale is not None:
        shift = np.uint64({"shr7": 7, "shr15": 15}[scale])
        field = (lo >> shift) | (hi.view(np.uint64) << (np.uint64(64) - shift))
        if "sat" not in form:
            return field.view(np.int64)
        if signed:
            return np.clip(field.view(np.int64), S32_MIN, S32_MAX)
        return np.minimum(field, np.uint64(0xFFFF_FFFF)).astype(np.int64)
    if "sat" not in form:
        return lo.view(np.int64)
    return _clamp_128(hi, lo, signed)


@batched("vmad")
def vmad(form: Form) -> FastPath:
    """§9.7.18.1.3 vmad: the manual's pseudo-code on an exact 128-bit pair (:func:`_vmad_manual`,
    :func:`_vmad_sum_128`) or the profile's (``profile.vmad_batch``)."""

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        if profile.vmad is None:
            return _result(_vmad_manual(form, a, b, c))
        twin = profile.vmad_batch
        return _undecided(len(a)) if twin is None else _result(twin(form, a, b, c))

    return fast


# ---------------------------------------------------------------------------------------------
# §9.7.18.2 SIMD video instructions
# ---------------------------------------------------------------------------------------------


def _average(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`ptxspec.semantics.video.average`: ``(x + y + 1) >> 1`` for a non-negative sum,
    ``(x + y) >> 1`` otherwise (int64 >> is the floor shift of Python's >>)."""
    total = x + y
    return np.where(total >= 0, total + np.int64(1), total) >> np.int64(1)


def _simd_operation(form: Form) -> Operation:
    """The lane operation of a SIMD opcode (the lambdas of :mod:`ptxspec.semantics.video`)."""
    op = form.opcode[:-1]
    if op == "vset":
        return _comparison(form["cmp"])
    operations: dict[str, Operation] = {
        "vadd": lambda x, y: x + y,
        "vsub": lambda x, y: x - y,
        "vavrg": _average,
        "vabsdiff": lambda x, y: np.abs(x - y),
        "vmin": np.minimum,
        "vmax": np.maximum,
    }
    return operations[op]


def _lanes(a: np.ndarray, b: np.ndarray, choice: str, type_name: str, lanes: int) -> list[np.ndarray]:
    """``extractAndSignExt_2/_4`` (:func:`ptxspec.semantics.video.extract_and_sign_ext`): lane i
    is element ``lane_digits(choice)[i]`` of the pool a (elements 0 .. lanes-1), b (the rest)."""
    width = 32 // lanes
    signed = type_name == "s32"
    return [extract(a if k < lanes else b, width * (k % lanes), width, signed) for k in video.lane_digits(choice)]


@batched("vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4")
def simd_video(form: Form) -> FastPath:
    """§9.7.18.2.1-4: :func:`ptxspec.semantics.video.simd_video` lane by lane (2 or 4 lanes):
    extract, operate, clamp to the lane range of dtype under ``.sat``, then add the masked lanes to
    c (int64 sum, low 32 bits kept: the two's-complement sum) or merge them into c. Lane values
    stay within +-2^17, exact on int64. No profile departs from the manual here."""
    lanes = 2 if form.opcode.endswith("2") else 4
    width = 32 // lanes
    signed = destination_type(form) == "s32"
    asel = video.simd_choice(form, "asel", lanes)
    bsel = video.simd_choice(form, "bsel", lanes)
    mask = {int(ch) for ch in video.simd_choice(form, "mask", lanes)[1:]}
    operation = _simd_operation(form)
    saturate = "sat" in form
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    accumulate = form.get("secop") == "add"
    atype, btype = form["atype"], form["btype"]
    lane_mask = np.int64((1 << width) - 1)

    def fast(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, profile: Profile) -> BatchResult:
        va = _lanes(a, b, asel, atype, lanes)
        vb = _lanes(a, b, bsel, btype, lanes)
        t = [operation(x, y) for x, y in zip(va, vb)]
        if saturate:
            t = [np.clip(v, low, high) for v in t]
        d = c.astype(np.int64)
        for i in sorted(mask):
            if accumulate:
                d = d + t[i]
            else:
                shift = np.int64(width * i)
                d = (d & ~(lane_mask << shift)) | ((t[i] & lane_mask) << shift)
        return _result(d)

    return fast


__all__ = ["scalar_video", "simd_video", "vmad"]
