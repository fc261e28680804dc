"""§9.7.15 Asynchronous warpgroup-level matrix multiply-accumulate: ``wgmma.mma_async{.sp}``.

The instruction is three pieces this package defines elsewhere, put together here:

* where the operands come from (:mod:`ptxspec.semantics.wgmma_layout`): A from the 128 threads'
  registers or from shared memory through its matrix descriptor, B from shared memory through its
  descriptor (canonical layouts, swizzle modes), C from the accumulator registers; for ``.sp`` the
  stored elements of A and the row of B each selects by the metadata
  (:class:`~ptxspec.semantics.sparse.SparseOperand`);
* the arithmetic ``D = A * B + D`` (:mod:`ptxspec.semantics.mma`, :func:`multiply`): exact for
  the integer types; for floating point the spec-level set of
  :func:`~ptxspec.semantics.mma.spec_dot` per element, or, under a profile, the datapath measured
  for the type combination (:func:`datapath_for`, ``profile.wgmma_datapaths``). For ``.sp`` (§9.7.15.6) each row of D is
  that arithmetic on the K/2 products of the row's stored elements with the rows of B they select
  (:func:`ptxspec.semantics.sparse.sparse_mma`, the mechanism mma.sp uses too): B's pruned
  positions are never read, so an infinity or NaN there does not reach D;
* where D goes: the accumulator fragment of the 128 threads.

§9.7.15.5.2: "scale-d ... D = A*B+D if scale-d is true, D = A*B otherwise"; "imm-scale-a and
imm-scale-b ... specify whether to negate matrix A and B" (values 1 and -1, floating-point types
only). Negating a floating-point element flips its sign bit, which is exact.

``D = A*B`` (scale-d false) is computed as ``A*B + C0`` with the zero ``C0`` of
:func:`zero_accumulator`. At the spec level C0 = -0.0: -0 is the identity of IEEE addition in
every rounding direction the accumulation may use (x + -0 = x for every x, including +0 and -0),
so it changes no sign of zero. Whether a chip's tensor core adds a -0, a +0 or nothing is for its
recording to settle (``profile.wgmma_scale_d_false_c``); for the sm_90 datapaths (a zero addend
takes no part in the alignment, every zero result is +0) the three readings give the same bits.

Two entry points with one meaning:

* :func:`wgmma_mma_async`, one instruction, readable: the operands through
  :func:`~ptxspec.semantics.wgmma_layout.wgmma_operands`, then the arithmetic;
* :func:`wgmma_batch`, many instructions of one form at once (the replay of recordings, golden
  vectors, the benchmark): the operands of every instance are read at once
  (:func:`~ptxspec.semantics.wgmma_layout.read_matrix` over a batch: instances that share a
  descriptor value share one address map and one gather), and the arithmetic runs over the whole
  batch. ``tests/test_wgmma.py`` checks that it equals
  :func:`wgmma_mma_async` instance by instance.

Shared memory makes this a function of a memory image as well as registers: the registry of
:mod:`ptxspec.semantics.instructions` reaches it through :func:`wgmma_threads` (operands
:data:`~ptxspec.semantics.instructions.WARPGROUP_MEMORY`: the state's shared memory, each operand
the 128 threads' values), so ``evaluate``/``check`` take wgmma like every other instruction.
"""

from __future__ import annotations

from typing import overload

import attrs
import numpy as np

from ptxspec.semantics import mma
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.numerics import fmt_of
from ptxspec.profiles import SPEC, MatrixKey, Profile, profile_named
from ptxspec.semantics.instructions import WARPGROUP_MEMORY, semantic
from ptxspec.semantics.results import Result, pack_lanes
from ptxspec.semantics.state import State
from ptxspec.semantics.sparse import SparseOperand, sparse_mma
from ptxspec.spec import wgmma as wg
from ptxspec.spec.catalogue import Form, parse
from ptxspec.spec.errors import OperandError

SECTION = "9.7.15.5.2"


# ---------------------------------------------------------------------------------------------
# Pieces shared by the single and the batched evaluation
# ---------------------------------------------------------------------------------------------


def _as_form(form: Form | str) -> Form:
    if isinstance(form, str):
        return parse(form)
    return form


def _is_integer(type_name: str) -> bool:
    return type_name in mma.INTEGER_TYPES  # .s8, .u8 and .b1 (no sign to flip)


@overload
def negate(matrix: np.ndarray, type_name: str) -> np.ndarray: ...
@overload
def negate(matrix: SparseOperand, type_name: str) -> SparseOperand: ...
def negate(matrix: np.ndarray | SparseOperand, type_name: str) -> np.ndarray | SparseOperand:
    """§9.7.15.5.2 imm-scale = -1: every element of a floating-point matrix with its sign bit
    flipped (exact negation); of a sparse A its stored elements."""
    if isinstance(matrix, SparseOperand):
        return matrix.with_stored(negate(matrix.stored, type_name))
    return np.asarray(matrix, dtype=np.uint64) ^ np.uint64(1 << (fmt_of(type_name).width - 1))


@overload
def _scale(matrix: np.ndarray, scale: int, type_name: str, name: str, form: Form) -> np.ndarray: ...
@overload
def _scale(matrix: SparseOperand, scale: int, type_name: str, name: str, form: Form) -> SparseOperand: ...
def _scale(matrix: np.ndarray | SparseOperand, scale: int, type_name: str, name: str, form: Form) -> np.ndarray | SparseOperand:
    """imm-scale-a / imm-scale-b: "specify whether to negate matrix A and B" -- 1 keeps the
    matrix, -1 flips the sign bit of every element (exact negation)."""
    if scale not in (1, -1):
        raise OperandError(f"{name} must be 1 or -1, got {scale}", where=form.text, section=SECTION)
    if scale == 1:
        return matrix
    if _is_integer(type_name):
        raise OperandError(f"{name} = -1 negates a floating-point matrix; {form.text} multiplies .{type_name}", where=form.text, section=SECTION)
    return negate(matrix, type_name)


def zero_accumulator(profile: Profile, dtype: str) -> int:
    """The C that scale-d = false puts in place of D: 0 for .s32 ("D = A*B" exactly); for a
    floating-point D the zero the profile reads "D = A*B" with (``profile.wgmma_scale_d_false_c``:
    "-0", the identity of IEEE addition and the spec-level reading, or "+0")."""
    if _is_integer(dtype):
        return 0
    return fmt_of(dtype).sign_mask if profile.wgmma_scale_d_false_c == "-0" else 0


def datapath_for(profile: Profile, atype: str, btype: str, ctype: str, dtype: str, *, sparse: bool = False) -> mma.Datapath | None:
    """The datapath ``profile`` measured for a ``wgmma.mma_async{.sp}`` of these types
    (``profile.wgmma_datapaths``; sm_90: :mod:`ptxspec.profiles.sm_90.wgmma`), or None: then the
    spec-level sets are the profile's answer too (integer types are exact anyway). The shape does
    not enter: K is fixed by the types (§9.7.15.2), and the recording shows the same datapath for
    every N."""
    return profile.wgmma_datapaths.get(MatrixKey(atype, btype, ctype, dtype, sparse=sparse))


def measured_datapath(profile: Profile, form: Form) -> mma.Datapath | None:
    """:func:`datapath_for` the form's types (C and D are of one type in wgmma)."""
    return datapath_for(profile, form["atype"], form["btype"], form["dtype"], form["dtype"], sparse=wg.is_sparse(form))


def multiply(
    form: Form | str, A: np.ndarray | SparseOperand, B: np.ndarray, C: np.ndarray, *, profile: Profile | str = "spec", datapath: mma.Datapath | None = None
) -> np.ndarray:
    """§9.7.15.5.2 (§9.7.15.6.3 for ``.sp``) ``D = A*B + C`` over matrices of element bits (A
    ``[..., 64, K]`` or a sparse A, B ``[..., K, N]``, C ``[..., 64, N]``): uint64 where every
    element is determined (integers; the datapath ``datapath`` or the one ``profile`` measured),
    else an object array of spec-level results. A sparse A multiplies only its stored elements,
    each with the row of B it selects (:func:`ptxspec.semantics.sparse.sparse_mma`): the same
    arithmetic on K/2 products per row."""
    form = _as_form(form)
    profile = profile_named(profile)
    atype, btype, dtype = form["atype"], form["btype"], form["dtype"]
    model = None
    if not _is_integer(atype):
        model = datapath if datapath is not None else measured_datapath(profile, form)

    def dense(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
        if model is not None:
            return mma.datapath_matrix(model, atype, btype, dtype, dtype, A, B, C)
        # Integers exact (.satfinite clamps, else wraps; .b1: AND then popc); floats: the spec sets.
        return mma.mma_matrix(
            atype, btype, dtype, dtype, A, B, C, profile=SPEC, satfinite=form.get("satfinite") is not None, bit_op="and" if atype == "b1" else None
        )

    if isinstance(A, SparseOperand):
        return sparse_mma(A.stored, A.k_index, B, C, dense)
    return dense(A, B, C)


def result_registers(form: Form, d: np.ndarray) -> np.ndarray:
    """D (``[..., 64, N]``) in the accumulator registers of the 128 threads (``[..., 128, R]``):
    uint64 bits, or, where some element is a set, an object array whose registers pack their
    elements with :func:`~ptxspec.semantics.results.pack_lanes` (element 0 in the low bits)."""
    if d.dtype != object:
        return wl.wgmma_result_registers(form, d)
    layout = wl.fragment_layout(form["shape"], "d", form["dtype"])
    rows, cols, _ = layout._index
    elements = d[..., rows, cols]  # [..., 128, R, elements per register]
    out = np.empty(elements.shape[:-1], dtype=object)
    for index in np.ndindex(*out.shape):
        values = [int(v) if isinstance(v, (int, np.integer)) else v for v in elements[index]]
        out[index] = pack_lanes(list(reversed(values)), layout.element_bits)
    return out


# ---------------------------------------------------------------------------------------------
# One instruction
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class WgmmaResult:
    """D of one ``wgmma.mma_async``: the 64 x N matrix (uint64 element bits where every element is
    determined, else an object array of allowed sets) and the 128 threads' accumulator registers
    (uint64, or an object array of per-register results, as :func:`result_registers`)."""

    d: np.ndarray
    registers: np.ndarray


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
    datapath: mma.Datapath | None = None,
) -> WgmmaResult:
    """§9.7.15.5.2 ``wgmma.mma_async`` (§9.7.15.6.3 ``.sp``): "perform matrix multiply-and-accumulate
    operation D = A*B+D" over a warpgroup. ``image``: shared memory's bytes (address 0 first);
    ``a``: A's descriptor or the 128 threads' A registers; ``desc_b``: B's descriptor;
    ``d_registers``: the accumulator registers of the 128 threads (``[128, N/2]``, ``N/4`` for
    .f16). ``profile``: "spec" (the allowed sets) or "sm_90" (:func:`measured_datapath`, where
    one is measured); ``datapath``: evaluate floating point with this model instead (fitting,
    benchmarks). Returns D as a matrix and as the threads' registers."""
    form = _as_form(form)
    profile = profile_named(profile)
    if not isinstance(scale_d, (bool, np.bool_)) and scale_d not in (0, 1):
        raise OperandError(f"scale-d is a predicate (True/False or 1/0), got {scale_d!r}", where=form.text, section=SECTION)
    A, B, C = wl.wgmma_operands(form, image, a, desc_b, d_registers, trans_a=imm_trans_a, trans_b=imm_trans_b, sp_meta=sp_meta, sp_sel=sp_sel)
    A = _scale(A, imm_scale_a, form["atype"], "imm-scale-a", form)
    B = _scale(B, imm_scale_b, form["btype"], "imm-scale-b", form)
    if not scale_d:  # "D = A*B otherwise"
        C = np.full(C.shape, zero_accumulator(profile, form["dtype"]), dtype=np.uint64)
    d = multiply(form, A, B, C, profile=profile, datapath=datapath)
    return WgmmaResult(d, result_registers(form, d))


# ---------------------------------------------------------------------------------------------
# Many instructions of one form
# ---------------------------------------------------------------------------------------------


def _descriptor_values(value, n: int, name: str) -> np.ndarray:
    """One 64-bit descriptor per instance (``[n]``) from ``[n]`` values (ints or
    :class:`~ptxspec.semantics.wgmma_layout.MatrixDescriptor`) or the 128 threads' values
    ``[n, 128]``, which must agree within each instance ("the contents of a matrix descriptor must
    be same across all the warps in the warpgroup", §9.7.15.5.2)."""
    array = wl.descriptor_array(value, name)
    if array.shape == (n, wl.THREADS):
        differs = np.flatnonzero(np.any(array != array[:, :1], axis=1))
        if differs.size:
            raise OperandError(
                f"instance {differs[0]}: the matrix descriptor {name} differs between threads of the warpgroup "
                '("the contents of a matrix descriptor must be same across all the warps")',
                section=SECTION,
            )
        array = array[:, 0]
    if array.shape != (n,):
        raise OperandError(f"{name}: a batch of {n} takes [{n}] descriptors (or [{n}, 128]), got shape {array.shape}", section=SECTION)
    return array


def _images(images, n: int) -> np.ndarray:
    """``[n, bytes]`` uint8 (one image per instance) or ``[bytes]`` (one image for all)."""
    array = np.asarray(images)
    if array.dtype != np.uint8 or array.ndim not in (1, 2) or (array.ndim == 2 and array.shape[0] != n):
        raise OperandError(
            f"a batch of {n} takes shared-memory images as uint8 [{n}, bytes] (or one [bytes]), got {array.dtype} of shape {array.shape}", section=wl.LAYOUTS
        )
    return array


def batch_operands(
    form: Form | str,
    images,
    a,
    desc_b,
    d_registers,
    *,
    trans_a: int = 0,
    trans_b: int = 0,
    sp_meta=None,
    sp_sel: int = 0,
) -> tuple[np.ndarray | SparseOperand, np.ndarray, np.ndarray]:
    """:func:`~ptxspec.semantics.wgmma_layout.wgmma_operands` for ``n`` instances of one form:
    (A ``[n, 64, K]``, or for ``.sp`` a :class:`~ptxspec.semantics.sparse.SparseOperand` of
    ``[n, 64, K/2]`` stored elements, B ``[n, K, N]``, C ``[n, 64, N]``). ``images``: ``[n, bytes]`` uint8
    (or one ``[bytes]`` image for all); ``a``: A's descriptors ``[n]`` (``[n, 128]``) for the
    ``a-desc`` forms, A's registers ``[n, 128, 4]`` for the ``a`` forms; ``desc_b``: ``[n]``
    (``[n, 128]``); ``d_registers``: ``[n, 128, R]``; ``sp_meta``: ``[n, 128]`` for ``.sp``."""
    form = _as_form(form)
    c_layout = wl.fragment_layout(form["shape"], "c", form["dtype"])
    d_registers = np.asarray(d_registers, dtype=np.uint64)
    if d_registers.ndim != 3 or d_registers.shape[1:] != (wl.THREADS, c_layout.registers):
        raise OperandError(f"{form.text}: a batch takes accumulator registers [n, 128, {c_layout.registers}], got shape {d_registers.shape}", section=SECTION)
    n = d_registers.shape[0]
    sparse = wg.is_sparse(form)
    # imm-trans 0 is what every form means without the operand (as wgmma_operands checks them)
    immediates = {name: value for name, value in (("imm_trans_a", trans_a), ("imm_trans_b", trans_b)) if value}
    if sparse:
        immediates["sp_sel"] = sp_sel
    wg.check_immediates(form, **immediates)
    m, nn, k = wg.parse_shape(form["shape"])
    atype, btype = form["atype"], form["btype"]
    stored_k = k // 2 if sparse else k
    data = _images(images, n)  # B is always in shared memory
    A: np.ndarray | SparseOperand
    if wg.a_in_registers(form):
        registers = np.asarray(a)
        layout = wl.fragment_layout(form["shape"], "a", atype, sparse=sparse)
        if registers.shape != (n, wl.THREADS, layout.registers):
            raise OperandError(
                f"{form.text} takes A in registers ({form.template}): [{n}, 128, {layout.registers}], got shape {registers.shape}", section=form.family.section
            )
        A = layout.to_matrix(registers.astype(np.uint64))
    else:
        if np.asarray(a).ndim == 3:
            raise OperandError(f"{form.text} takes A's matrix descriptor ({form.template}), got registers", section=form.family.section)
        A = wl.read_matrix(data, _descriptor_values(a, n, "a-desc"), m, stored_k, atype, "MN" if trans_a else "K", operand="a")
    if sparse:
        if sp_meta is None:
            raise OperandError(f"{form.text} needs the sparsity metadata sp-meta of the 128 threads of each instance", section=wl.SPARSE)
        meta = np.asarray(sp_meta, dtype=np.uint64)
        if meta.shape != (n, wl.THREADS):
            raise OperandError(f"{form.text}: a batch of {n} takes sp-meta [{n}, 128], got shape {meta.shape}", section=wl.SPARSE)
        A = wl.sparse_operand(form["shape"], atype, A, meta, sp_sel)
        wl.check_sparse_metadata(A, batch=True)
    B = wl.read_matrix(data, _descriptor_values(desc_b, n, "b-desc"), k, nn, btype, "MN" if trans_b else "K", operand="b")
    C = c_layout.to_matrix(d_registers)
    return A, B, C


def wgmma_batch(
    form: Form | str,
    images,
    a,
    desc_b,
    d_registers,
    *,
    scale_d=True,
    imm_scale_a: int = 1,
    imm_scale_b: int = 1,
    imm_trans_a: int = 0,
    imm_trans_b: int = 0,
    sp_meta=None,
    sp_sel: int = 0,
    profile: Profile | str = "spec",
    datapath: mma.Datapath | None = None,
    matrices: bool = False,
) -> np.ndarray:
    """``n`` instances of one ``wgmma.mma_async{.sp}`` form, element for element what
    :func:`wgmma_mma_async` gives each. Operands as :func:`batch_operands`; ``scale_d``: one bool
    or ``[n]`` (a predicate register per instance); the immediates (imm-scale-a/b, imm-trans-a/b,
    sp-sel) are part of the instruction and so one value for the batch. Returns the accumulator
    registers ``[n, 128, R]`` (uint64, or an object array where some result is a set; with
    ``matrices`` D itself, ``[n, 64, N]``). A bad operand of instance ``i`` raises
    :class:`~ptxspec.spec.errors.OperandError` naming ``i``."""
    form = _as_form(form)
    profile = profile_named(profile)
    A, B, C = batch_operands(form, images, a, desc_b, d_registers, trans_a=imm_trans_a, trans_b=imm_trans_b, sp_meta=sp_meta, sp_sel=sp_sel)
    n = C.shape[0]
    A = _scale(A, imm_scale_a, form["atype"], "imm-scale-a", form)
    B = _scale(B, imm_scale_b, form["btype"], "imm-scale-b", form)
    keep = np.asarray(scale_d)
    if keep.shape not in ((), (n,)) or not (keep.dtype == np.bool_ or (keep.dtype.kind in "iu" and np.isin(keep, (0, 1)).all())):
        raise OperandError(
            f"scale-d: one predicate or [{n}] predicates (bool, or 0/1) for a batch of {n}, got {keep.dtype} of shape {keep.shape}", section=SECTION
        )
    keep = np.broadcast_to(keep.astype(bool), (n,))
    if not keep.all():  # "D = A*B otherwise"
        C = np.where(keep[:, None, None], C, np.uint64(zero_accumulator(profile, form["dtype"])))
    d = multiply(form, A, B, C, profile=profile, datapath=datapath)
    return d if matrices else result_registers(form, d)


__all__ = [
    "WgmmaResult",
    "batch_operands",
    "datapath_for",
    "measured_datapath",
    "multiply",
    "negate",
    "result_registers",
    "wgmma_batch",
    "wgmma_mma_async",
    "zero_accumulator",
]


# ---------------------------------------------------------------------------------------------
# In the registry's calling convention
# ---------------------------------------------------------------------------------------------


def _uniform(form: Form, name: str, value) -> int:
    """An immediate operand (imm-scale-*, imm-trans-*, sp-sel) or the predicate scale-d: one value
    for the warpgroup."""
    from ptxspec.semantics.warp import one_value

    chosen = one_value(value)
    if chosen is None:
        raise OperandError(f"{form.text}: {name} is one value for the warpgroup, got {len(set(value))} different ones", where=form.text, section=SECTION)
    return chosen


def _signed(bits: int) -> int:
    """A .s32 immediate from its bits (imm-scale 0xffffffff is -1)."""
    return bits - (1 << 32) if bits >> 31 else bits


@semantic(*(f.key for f in (*wg.MMA_ASYNC_FAMILIES, *wg.MMA_ASYNC_SP_FAMILIES)), operands=WARPGROUP_MEMORY)
def wgmma_threads(form: Form, state: State, *inputs, profile: Profile, active: int) -> tuple[tuple[Result, ...], State]:
    """§9.7.15.5.2 :func:`wgmma_mma_async` (§9.7.15.6.3 ``.sp``) in the registry's convention:
    ``inputs`` are the form's inputs in its syntax's order (``d``, the accumulator it reads and
    writes, then ``a-desc`` or ``a``, ``b-desc``, ``sp-meta, sp-sel``, ``scale-d``, the
    immediates), each the 128 threads' values or one for all; A and B are read from ``state``'s
    shared memory, which the instruction leaves as it was. Returns one per-thread result for each
    register of ``d``. "The mandatory .aligned qualifier indicates that all threads in the
    warpgroup must execute the same wgmma.mma_async instruction": with inactive threads every
    register of ``d`` is undefined."""
    from ptxspec.semantics.warp import Undefined, WarpResult, lanes_of, per_thread

    named = dict(zip((o.name for o in form.inputs), inputs))
    d_names = [o.name for o in form.destinations]
    width = 32  # every register of d is 32 bits: .f16x2 for .f16, .f32, .s32 (§9.7.15.5.1.1)
    if active != WARPGROUP_MEMORY.all_threads:
        return tuple(WarpResult((Undefined(width),) * wl.THREADS, width) for _ in d_names), state

    def threads(name: str) -> np.ndarray:  # the 128 threads' values of an operand
        return np.array(lanes_of(named[name], name, wl.THREADS), dtype=np.uint64)

    d_in = np.stack([threads(n) for n in d_names], axis=1)
    a = threads("a_desc") if "a_desc" in named else np.stack([threads(f"a.{i}") for i in range(wg.A_REGISTERS)], axis=1)

    def immediate(name: str, default: int) -> int:
        return _signed(_uniform(form, name.replace("_", "-"), named[name])) if name in named else default

    sparse = "sp_meta" in named
    result = wgmma_mma_async(
        form,
        state.shared_image(),
        a,
        threads("b_desc"),
        d_in,
        scale_d=bool(_uniform(form, "scale-d", named["scale_d"])),
        imm_scale_a=immediate("imm_scale_a", 1),
        imm_scale_b=immediate("imm_scale_b", 1),
        imm_trans_a=immediate("imm_trans_a", 0),
        imm_trans_b=immediate("imm_trans_b", 0),
        sp_meta=threads("sp_meta") if sparse else None,
        sp_sel=immediate("sp_sel", 0),
        profile=profile,
    )
    return per_thread(result.registers, width), state
