"""sm_90's video instructions (§9.7.18.1), where the H100/H200 depart from the manual's pseudo-code.

sm_90 has no video unit: ptxas 13.0 expands each instruction into integer code, which departs from
the manual in the ways :func:`scalar_video` and :func:`vmad` list. Evidence: every vector of the
320 scalar video forms and of the vmad forms recorded in
conformance/data/sm_90/meta-integer-half-video-warp.json (``integer-half-video-warp-inputs.npz``,
``integer-half-video-warp-outputs-*.npz``; an H100, and an H200 with the same outputs,
``integer-half-video-warp-h200-digests.json``) agrees with them (tests/test_silicon_sm90.py, tests/test_video.py).
"""

from __future__ import annotations

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
