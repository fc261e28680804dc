"""§9.7.15 Asynchronous warpgroup-level matrix multiply-accumulate: ``wgmma.mma_async{.sp}``.

The instruction is three pieces this package defines elsewhere, put together here:

* where the operands come from (:mod:`ptxspec.semantics.wgmma_layout`): A from the 128 threads'
  registers or from shared memory through its matrix descriptor, B from shared memory through its
  descriptor (canonical layouts, swizzle modes), C from the accumulator registers; for ``.sp`` the
  sparse A expanded by its metadata;
* the arithmetic ``D = A * B + D`` (:mod:`ptxspec.semantics.mma`: exact for the integer types, the
  spec-level set of :func:`~ptxspec.semantics.mma.spec_dot` for floating point, or a datapath a
  profile has measured for the shape);
* where D goes: the accumulator fragment of the 128 threads.

§9.7.15.5.2: "scale-d ... D = A*B+D if scale-d is true, D = A*B otherwise"; "imm-scale-a and
imm-scale-b ... specify whether to negate matrix A and B" (values 1 and -1, floating-point types
only). Negating a floating-point element flips its sign bit, which is exact. ``D = A*B`` is
computed as ``A*B + (-0.0)``: -0 is the identity of IEEE addition in every rounding direction the
accumulation may use (x + -0 = x for every x, including +0 and -0), so no sign of zero changes.

Shared memory makes this a function of a memory image as well as registers, so it is not in the
register-operand registry of :mod:`ptxspec.semantics.instructions` (like ``ldmatrix``); call
:func:`wgmma_mma_async` directly.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptxspec.semantics import wgmma_layout
from ptxspec.semantics.mma import mma_matrix_shape
from ptxspec.semantics.numerics import fmt_of
from ptxspec.semantics.results import Profile, profile_named
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import INTEGER_TYPES

SECTION = "9.7.15.5.2"


@attrs.frozen(eq=False)
class WgmmaResult:
    """D of one ``wgmma.mma_async``: the 64 x N matrix (uint64 element bits where every element is
    determined, else an object array of allowed sets), and the 128 threads' accumulator registers
    where the matrix is determined (None otherwise)."""

    d: np.ndarray
    registers: np.ndarray | None


def _negated(matrix: np.ndarray, type_name: str) -> np.ndarray:
    """Every element with its sign bit flipped (exact negation of a floating-point element)."""
    width = fmt_of(type_name).width
    return matrix ^ np.uint64(1 << (width - 1))


def _scale(matrix: np.ndarray, scale: int, type_name: str, name: str, form: Form) -> np.ndarray:
    if scale not in (1, -1):
        raise OperandError(f"{name} must be 1 or -1, got {scale}", where=form.text, section=SECTION)
    if scale == 1:
        return matrix
    if type_name in INTEGER_TYPES or type_name == "b1":
        raise OperandError(f"{name} = -1 negates a floating-point matrix; {form.text} multiplies .{type_name}", where=form.text, section=SECTION)
    return _negated(matrix, type_name)


def wgmma_mma_async(
    form: Form | str,
    image,
    a,
    desc_b,
    d_registers,
    *,
    scale_d: bool = True,
    imm_scale_a: int = 1,
    imm_scale_b: int = 1,
    imm_trans_a: int = 0,
    imm_trans_b: int = 0,
    sp_meta=None,
    sp_sel: int = 0,
    profile: Profile | str = "spec",
) -> WgmmaResult:
    """§9.7.15.5.2 ``wgmma.mma_async`` (§9.7.15.6.3 ``.sp``): "perform matrix multiply-and-accumulate
    operation D = A*B+D" over a warpgroup. ``image``: shared memory's bytes (address 0 first);
    ``a``: A's descriptor or the 128 threads' A registers; ``desc_b``: B's descriptor;
    ``d_registers``: the accumulator registers of the 128 threads (``[128, N/2]``, ``N/4`` for
    .f16). Returns D as a matrix and, where it is determined, as the threads' registers."""
    if isinstance(form, str):
        from ptxspec.spec.wgmma import parse

        form = parse(form)
    profile = profile_named(profile)
    A, B, C = wgmma_layout.wgmma_operands(form, image, a, desc_b, d_registers, trans_a=imm_trans_a, trans_b=imm_trans_b,
                                          sp_meta=sp_meta, sp_sel=sp_sel)
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    A = _scale(A, imm_scale_a, atype, "imm-scale-a", form)
    B = _scale(B, imm_scale_b, btype, "imm-scale-b", form)
    if not scale_d:
        identity = 0 if dtype in INTEGER_TYPES else 1 << (fmt_of(dtype).width - 1)  # 0, or -0.0
        C = np.full(C.shape, identity, dtype=np.uint64)
    d = mma_matrix_shape(form["shape"], atype, btype, dtype, dtype, A, B, C, profile=profile,
                         satfinite=form.get("satfinite") is not None, bit_op="and" if atype == "b1" else None)
    registers = wgmma_layout.wgmma_result_registers(form, d) if d.dtype != object else None
    return WgmmaResult(d, registers)


__all__ = ["WgmmaResult", "wgmma_mma_async"]
