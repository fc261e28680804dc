"""sm_90's video instructions (§9.7.18.1), where the H100/H200 depart from the manual's pseudo-code.

sm_90 has no video unit: ptxas 13.0 expands each instruction into integer code, which departs from
the manual in the ways :func:`scalar_video` and :func:`vmad` list. Evidence: every vector of the
320 scalar video forms and of the vmad forms recorded in
conformance/data/sm_90/meta-integer-half-video-warp.json (``integer-half-video-warp-inputs.npz``,
``integer-half-video-warp-outputs-*.npz``; an H100, and an H200 with the same outputs,
``integer-half-video-warp-h200-digests.json``) agrees with them (tests/test_silicon_sm90.py, tests/test_video.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ptxspec.spec.catalogue import Form
from ptxspec.spec.video import destination_type, selector, signed_final
from ptxspec.semantics.video import (
    DOUBLEWORD,
    PARTS,
    WORD,
    clamp,
    negated_terms,
    part_select,
    part_select_sign_extend,
    saturate_final,
    signed_34,
)

if TYPE_CHECKING:
    import numpy as np


def scalar_video(form: Form, tmp: int, c: int | None) -> int:
    """The sm_90 result of a scalar video instruction (vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr,
    vset) from the exact result ``tmp`` of its operation on the extended inputs (recorded on an
    H100 and an H200, ptxas 13.0):

    1. ``.sat`` of vshl and vshr clamps the .s34 value (:func:`~ptxspec.semantics.video.signed_34`) to the 32-bit range of
       dtype, also under a byte or half-word destination selector, whose merge then keeps the low
       bits of the clamped word (vshr.u32.s32.u32.sat.clamp with ``d.h0`` of 0x10000 >> 0 writes
       0x0000 there; the manual: 0xffff).
    2. ``.sat`` of the other operations under a byte or half-word destination selector compares
       without sign: ``min(u, MAX)``, u = tmp when 0 <= tmp <= 0xffffffff, else 0xffffffff, and
       MAX = 0x7f, 0xff, 0x7fff or 0xffff by dtype and size -- a negative result becomes MAX
       (vadd.s32.s32.s32.sat with ``d.b3`` of -1 writes 0x7f; the manual: 0x80). Without a
       selector, .s32 clamps as the manual says and .u32 only raises a negative result to 0: a
       result beyond 0xffffffff wraps (vadd.u32.u32.u32.sat of 0xffffffff and 0x10 gives 0xf).
    3. The merge into ``d.h1`` writes bits 31..16 of the result in place (a PRMT with selector
       0x3254), not its low half-word (vadd.u32.u32.s32 with ``d.h1`` of 127 writes 0x0000 there);
       the other selectors place the low byte or half-word as the manual says.
    4. The secondary ``.min``/``.max`` compares 64-bit integers, signed for an .s32 dtype and
       unsigned for .u32 (vset: the sign of atype), with c sign- or zero-extended to match; the
       result enters exactly for vabsdiff, vmin, vmax, vshr, vset and vshl without .sat, but as its
       low 32 bits sign-extended for vadd, vsub and vshl with .sat (vadd.u32.u32.u32.max of
       0x80000001 and c = 0xfffffffe writes 0x80000001). ``.add`` keeps the low 32 bits of
       ``tmp + c``, as the manual says.
    """
    op = form.opcode
    dsel = selector(form, "dsel")
    dtype = form["atype"] if op == "vset" else destination_type(form)
    signed = dtype == "s32"
    if "sat" in form:
        if op in ("vshl", "vshr"):
            tmp = clamp(signed_34(tmp), 2**31 - 1, -(2**31)) if signed else clamp(signed_34(tmp), WORD, 0)
        elif dsel is not None:
            bits = PARTS[dsel][1]
            unsigned = tmp if 0 <= tmp <= WORD else WORD
            tmp = min(unsigned, (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1)
        elif signed:
            tmp = clamp(tmp, 2**31 - 1, -(2**31))
        else:
            tmp = 0 if tmp < 0 else tmp & WORD
    if c is None:
        return tmp & WORD
    if dsel is not None:
        shift, width = PARTS[dsel]
        mask = ((1 << width) - 1) << shift
        placed = tmp if dsel == "h1" else tmp << shift
        return ((placed & mask) | (c & ~mask)) & WORD
    secop = form.get("secop")
    if secop == "add":
        return (tmp + c) & WORD
    if op in ("vadd", "vsub") or (op == "vshl" and "sat" in form):
        tmp = part_select_sign_extend(tmp & WORD, "s32", None)
    tc = part_select_sign_extend(c, "s32" if signed else "u32", None)
    key = (lambda v: v) if signed else (lambda v: v % (1 << 64))
    return (min if secop == "min" else max)(tmp, tc, key=key) & WORD


def vmad(form: Form, a: int, b: int, c: int) -> int:
    """The sm_90 result of vmad (recorded on an H100 and an H200, ptxas 13.0), which departs from
    §9.7.18.1.3's pseudo-code in three ways; the rest (negation, .po, scaling, the sign of the
    final result) is the manual's:

    1. A source without a selector (a whole word) enters the product as a signed 32-bit value,
       whatever its type (a .u32 0x80000001 is -2147483647): the product is a signed 32 x 32-bit
       multiply. Bytes and half-words are extended by their type as the manual says.
    2. c is sign-extended even when the final result is unsigned (the manual: zero-extended).
    3. The sum is kept to 64 bits (the manual: 128); .shr7/.shr15 shift it arithmetically when
       the final result is signed and logically otherwise, and .sat clamps the 64-bit value, read
       as signed, to the .s32 or .u32 range.
    """
    asel, bsel = selector(form, "asel"), selector(form, "bsel")
    ta = part_select_sign_extend(a, form["atype"] if asel else "s32", asel)
    tb = part_select_sign_extend(b, form["btype"] if bsel else "s32", bsel)
    signed = signed_final(form)
    tmp, c, lsb = negated_terms(form, ta * tb, c)
    tmp = (tmp + part_select_sign_extend(c, "s32", None) + lsb) & DOUBLEWORD
    scale = form.get("scale")
    if scale is not None:
        shift = {"shr7": 7, "shr15": 15}[scale]
        tmp = (part_select(tmp, 64, True) >> shift) & DOUBLEWORD if signed else tmp >> shift
    return saturate_final(form, part_select(tmp, 64, True), signed)


EVIDENCE = (
    "sm_90/meta-integer-half-video-warp.json",
    "sm_90/integer-half-video-warp-inputs.npz",
    "sm_90/integer-half-video-warp-outputs-0.npz",
    "sm_90/integer-half-video-warp-outputs-1.npz",
    "sm_90/integer-half-video-warp-outputs-2.npz",
    "sm_90/integer-half-video-warp-h200-digests.json",
)

__all__ = ["EVIDENCE", "scalar_video", "vmad"]


# ---------------------------------------------------------------------------------------------
# The batched twins (the numpy paths of ptxspec.semantics.batch_video; tests/test_batch_video.py
# proves them equal to the functions above on every qualifier)
# ---------------------------------------------------------------------------------------------


def scalar_video_batch(form: Form, tmp: np.ndarray, c: np.ndarray | None, key: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """:func:`ptxspec.profiles.sm_90.video.scalar_video`, step by step, from the exact ``tmp``
    (wrapped modulo 2^64 only for an unsaturated left shift, whose low bits are all that its
    consumers read except a signed ``.min``/``.max``, which compares ``key(tmp)`` instead)."""
    import numpy as np

    from ptxspec.semantics import batch_video as bv

    op = form.opcode
    dsel = selector(form, "dsel")
    dtype = form["atype"] if op == "vset" else destination_type(form)
    signed = dtype == "s32"
    saturated = "sat" in form
    if saturated:
        if op in ("vshl", "vshr"):
            tmp = np.clip(bv.signed_34(tmp), bv.S32_MIN, bv.S32_MAX) if signed else np.clip(bv.signed_34(tmp), 0, 0xFFFF_FFFF)
        elif dsel is not None:
            bits = PARTS[dsel][1]
            unsigned = np.where((tmp >= 0) & (tmp <= bv.WORD), tmp, bv.WORD)
            tmp = np.minimum(unsigned, (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1)
        elif signed:
            tmp = np.clip(tmp, bv.S32_MIN, bv.S32_MAX)
        else:
            tmp = np.where(tmp < 0, np.int64(0), tmp & bv.WORD)
    if c is None:
        return tmp
    c = c.astype(np.int64)
    if dsel is not None:
        placed = tmp if dsel == "h1" else tmp << np.int64(PARTS[dsel][0])
        return bv.merge(dsel, tmp, c, placed)
    secop = form.get("secop")
    if secop == "add":
        return tmp + c
    exact_key = saturated or op != "vshl"
    if op in ("vadd", "vsub") or (op == "vshl" and saturated):
        tmp = bv.extract(tmp, 0, 32, True)
    tc = bv.select(c, dtype, None)
    if signed:
        # Signed 64-bit comparison of exact values (an unsaturated left shift: its stand-in key).
        left = tmp if exact_key else key(tmp)
        first = left < tc if secop == "min" else left > tc
    else:
        # ``v % 2^64``: the uint64 reading of the int64 bits (exact also for a wrapped shift).
        left, right = tmp.view(np.uint64), tc.view(np.uint64)
        first = left < right if secop == "min" else left > right
    # Python's min/max return the first argument on a tie, which is the same value here.
    return np.where(first, tmp, tc)


def vmad_batch(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`ptxspec.profiles.sm_90.video.vmad`: whole words enter as .s32, so |ta * tb| <=
    2^62 and the 64-bit sum of the profile is plain int64 arithmetic (nothing wraps); the scale
    is an arithmetic (signed) or logical shift of the 64-bit pattern, then the clamp of the
    signed 64-bit reading."""
    import numpy as np

    from ptxspec.semantics import batch_video as bv
    from ptxspec.spec.video import product_negated

    asel, bsel = selector(form, "asel"), selector(form, "bsel")
    ta = bv.select(a, form["atype"] if asel else "s32", asel)
    tb = bv.select(b, form["btype"] if bsel else "s32", bsel)
    signed = signed_final(form)
    tmp = ta * tb
    if "po" in form:
        lsb = 1
    elif product_negated(form):
        tmp, lsb = ~tmp, 1
    elif "neg_c" in form:
        c, lsb = c ^ np.uint32(0xFFFF_FFFF), 1
    else:
        lsb = 0
    tmp = tmp + bv.select(c, "s32", None) + np.int64(lsb)
    scale = form.get("scale")
    if scale is not None:
        shift = {"shr7": 7, "shr15": 15}[scale]
        tmp = tmp >> np.int64(shift) if signed else (tmp.view(np.uint64) >> np.uint64(shift)).view(np.int64)
    if "sat" in form:
        tmp = np.clip(tmp, bv.S32_MIN, bv.S32_MAX) if signed else np.clip(tmp, 0, 0xFFFF_FFFF)
    return tmp
