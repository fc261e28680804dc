"""sm_90's choices for ``cvt`` (§9.7.9.21) where the manual leaves the NaN open, and where an H100
was measured to depart from the manual (float-to-integer NaN, ``.ftz`` on ``cvt.f16.f32``, a
``cvt.rna.tf32.f32`` NaN that comes out as infinity).

Evidence, in ``conformance/data/sm_90/``: ``meta-float-cvt.json``, ``float-cvt-*.npz`` (381 forms of
§9.7.3 and §9.7.9.21); ``meta-remaining-forms.json``, ``remaining-forms-*.npz`` (every cvt form);
``meta-exhaustive-*.json``, ``exhaustive-*.npz`` (every .f32 input of the .f32 conversions); replayed by
tests/test_silicon_sm90.py, tests/test_silicon_exhaustive.py and tests/test_cvt.py.
"""

from __future__ import annotations

import numpy as np

from ptxspec.spec.catalogue import Form
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, FloatFormat
from ptxspec.semantics.numerics import NaN, canonical_nan, encode_nan

F64 = FORMATS["f64"]
F32 = FORMATS["f32"]
TF32 = FORMATS["tf32"]
BF16 = FORMATS["bf16"]


def cvt_nan(form: Form, src: FloatFormat, dst: FloatFormat, nan: NaN, bits: int) -> int:
    """The NaN an H100 (sm_90) writes where §9.7.9.21 leaves it open, as recorded in
    conformance/data/sm_90 (replayed by tests/test_silicon_sm90.py):

    * to .f64: the input's sign and payload, made quiet (IEEE 754 §6.2.3) -- but with .ftz the
      .f32 input goes through the single-precision unit first and arrives as 0x7fffffffe0000000,
      the canonical .f32 NaN widened;
    * from .f64: sign and leading payload bits, made quiet (0xfff4000000000007 -> .f16 0xff00);
    * .bf16 to .f32: the bits shifted up unchanged, a signalling NaN staying signalling -- but with
      .ftz the canonical .f32 NaN 0x7fffffff (the remaining-forms recording);
    * ``cvt.f32.f32`` and ``cvt.f64.f64`` with no qualifier at all: the input bits unchanged, even a
      signalling NaN (0x7ff0000000000001 stays as it is; the remaining-forms recording);
    * .rna to .tf32: the low 13 bits cleared (so 0x7f800001 becomes +inf); with .satfinite one
      .tf32 unit is then taken off the magnitude (0x7fc00000 -> 0x7fbfe000, 0x7f800001 ->
      0x7f7fe000, the largest finite value);
    * everything else: the canonical NaN of the destination (0x7fff, 0x7fffffff, 0x7fffe000, 0x7f).
    """
    if src is dst and src in (F32, F64) and form.text == f"cvt.{dst.name}.{src.name}":
        return bits
    if dst is F64:
        if "ftz" in form:
            return encode_nan(F64, NaN(0, (1 << F32.mantissa_bits) - 1, F32))
        return encode_nan(F64, nan)
    if src is F64:
        return encode_nan(dst, nan)
    if src is BF16 and dst is F32:
        return canonical_nan(F32) if "ftz" in form else bits << 16
    if dst is TF32 and form.get("rnd") == "rna":
        sign, magnitude = bits & 0x8000_0000, bits & 0x7FFF_E000
        if "satfinite" in form:
            magnitude -= 1 << TF32.shift
        return sign | magnitude
    return canonical_nan(dst)


def cvt_nan_from_f32_batch(form: Form, dst: FloatFormat, a: np.ndarray) -> int | np.ndarray:
    """:func:`cvt_nan` for an .f32 source over a batch of inputs ``a`` (the numpy paths of
    :mod:`ptxspec.semantics.batch` convert .f32 into .f16, .bf16, .tf32 and their pairs): the
    canonical NaN of ``dst``, except that .rna to .tf32 clears the low 13 bits of the input (and
    .satfinite then takes one .tf32 unit off the magnitude)."""
    if dst is TF32 and form.get("rnd") == "rna":
        sign = a.astype(np.uint64) & np.uint64(0x8000_0000)
        magnitude = a.astype(np.uint64) & np.uint64(0x7FFF_E000)
        if "satfinite" in form:
            magnitude = magnitude - np.uint64(1 << TF32.shift)
        return sign | magnitude
    return canonical_nan(dst)


def cvt_integer_nan(form: Form) -> int:
    """NaN to integer on an H100 (conformance/data/sm_90, every pair recorded by the float-cvt,
    integer-half-video-warp and remaining-forms rounds): 0, as §9.7.9.21 says, from .f16, .bf16 and .f32 into 8- to 32-bit
    integers; but the most negative value's bit pattern, 1 << (bits - 1), from .f64 into every
    integer type (0x80 for .s8 and .u8 ... 0x80000000 for .u32) and from every float type into .s64
    and .u64 (0x8000000000000000) -- the hardware departs from the manual there."""
    bits = INTEGER_TYPES[form["dtype"]].bits
    if form["atype"] == "f64" or bits == 64:
        return 1 << (bits - 1)
    return 0


def cvt_ftz_flushes_input(form: Form) -> bool:
    """Whether .ftz flushes a subnormal .f32 input: not for a conversion to .f16 --
    cvt.rm.ftz.f16.f32 of -2^-149 gives -2^-24 (0x8001) and cvt.rp.ftz.f16.f32 of 2^-149 gives
    0x0001 on an H100."""
    return form["dtype"] != "f16"


EVIDENCE = (
    "sm_90/meta-float-cvt.json",
    "sm_90/float-cvt-0.npz",
    "sm_90/float-cvt-1.npz",
    "sm_90/float-cvt-2.npz",
    "sm_90/float-cvt-3.npz",
    "sm_90/meta-remaining-forms.json",
    "sm_90/remaining-forms-inputs.npz",
    "sm_90/remaining-forms-outputs-0.npz",
    "sm_90/remaining-forms-outputs-1.npz",
    "sm_90/remaining-forms-outputs-2.npz",
)

__all__ = ["EVIDENCE", "cvt_ftz_flushes_input", "cvt_integer_nan", "cvt_nan", "cvt_nan_from_f32_batch"]
