"""sm_100's datapaths of ``tcgen05.mma`` (§9.7.16.10.9) per kind and type combination -- a
**public model, not yet silicon**.

The manual leaves the floating-point accumulation of tcgen05.mma as open as mma's and wgmma's
("The accumulation order, rounding and handling of subnormal inputs are unspecified",
§9.7.14.5.14). There is no Blackwell GPU in this project: these parameters are those of MMA-Sim
(microsoft/MMA-Sim, MIT; PyPI ``mmasim`` 2.1.1), the public bit-accurate model of NVIDIA tensor-core
arithmetic whose authors validated its Blackwell (B200, sm_100) model on silicon. Each value below
names the MMA-Sim source it restates; the vectors in ``conformance/data/sm_100/mmasim/`` (written
by ``conformance/peers/mmasim_vectors.py`` from MMA-Sim itself) are replayed by
``tests/test_sm100_mmasim.py`` with zero mismatches. docs/sm100-profile.rst gives the parameters
and the evidence.

MMA-Sim's Blackwell tcgen05.mma (``mmasim/nv_ptx/sim.py``, class ``TCGen05MMA``) is
``arithmetic/fdpa.py``'s ``MMA_T_FDPA`` with ``F = 25``, ``L_max = 32 bytes / element size`` (8
tf32, 16 f16/bf16, 32 fp8/fp6/fp4: the kind's K, so one instruction is ONE step),
``e_zero = -133`` for an .f32 D and ``-21`` for an .f16 D, and ``rho`` "RZ-FP32" (.f32) or
"RNE-FP16" (.f16). ``t_fdpa``: every product's significand times 2^(e_a + e_b) with e the exponent
field's (``frexp_and_normalize``: a subnormal's is the smallest normal exponent), C likewise; a
zero product or a zero C gets exponent ``e_zero``; ``truncated_fused_sum`` cuts every addend toward
zero at 2^(e_max - 25) and sums exactly; ``ldexp_and_normalize`` truncates the sum into .f32
(subnormals kept; 2^128 and beyond: infinity) or rounds it to nearest even into .f16; a NaN is
0x7fffffff / 0x7fff; ``+ 0.0`` makes every zero +0. In :class:`~ptxspec.semantics.mma.Datapath`
words that is sm_90's fused datapath (:data:`ptxspec.profiles.sm_90.mma.FUSED`) with
``zero_reference`` -133 (.f32) or -21 (.f16).

Block scaling (class ``TCGen05MMABlockScale``):

* ``.kind::mxf8f6f4`` (K = 32): ``MMA_ST_FDPA`` (``st_fdpa``) -- ``F = 25``, RZ-FP32, ``L_max``
  32, ``e_zero = -133``; each product is ``(a * SF_A) * (b * SF_B)``, its exponent e_a + e_b +
  e_SFA + e_SFB: the .f32 datapath above with the scale factors' exponents in the products'
  references (:func:`ptxspec.semantics.mma.datapath_dot`'s ``scales``).
* ``.kind::mxf4`` and ``.kind::mxf4nvf4`` (K = 64): ``MMA_GST_FDPA`` (``gst_fdpa``) -- ``G = 16,
  F = 35``, RZ-FP32, ``L_max`` 64, ``e_zero = -139``: the 16 products of each group summed exactly
  (unscaled), each group's sum times its scale factors one addend whose exponent is e_SFA + e_SFB
  alone (e_zero when every product of the group is zero or a scale factor is zero), cut toward zero
  at 2^(e_max - 35) with C, summed exactly, truncated into .f32 (``scale_group=16``).

What MMA-Sim does not model (its ``isa_tcgen05mma.py``: "TODO: support tcgen05mma with .ws and
.cta_group::2", "TODO: support sm_103/sm_107"; it has no ``.sp`` and no ``.kind::i8``):

* ``.kind::i8`` is exact by the manual (.s32 accumulators, wrapped or saturated): no datapath.
* ``.ws`` and ``.cta_group::2``: every element of D is still one dot product of the kind's K
  products and C, so the dense datapath of the kind applies, DERIVED, not modelled: the keys below
  do not name ``.ws`` or the CTA group.
* ``.sp``: left at the spec level (no key with ``sparse``): whether the pruned positions enter the
  step as zero products (which, with ``e_zero``, can coarsen the grid) is not in the model.
* K = 96 (mxf4/mxf4nvf4 with the K Dimension bit, sm_103a only): spec level (the keys name K).
"""

from __future__ import annotations

from ptxspec.profiles.record import MatrixKey
from ptxspec.semantics.mma import Datapath
from ptxspec.semantics.numerics import Rounding

#: MMA-Sim's version whose Blackwell model these restate (``pip install mmasim==2.1.1``).
MMASIM_VERSION = "2.1.1"
#: The label every appearance of this profile carries.
LABEL = "public model (MMA-Sim), not yet silicon"

#: ``MMA_T_FDPA(F=25, rho="RZ-FP32", e_zero=-133)`` (mmasim/nv_ptx/sim.py ``TCGen05MMA``;
#: mmasim/arithmetic/fdpa.py ``t_fdpa``, ``truncated_fused_sum``, ``ldexp_and_normalize``): one
#: step of the K products and C, each cut toward zero 25 bits below the largest exponent (a zero's
#: exponent -133), summed exactly, truncated into .f32; every zero +0; 2^128 and beyond infinity.
#: Also ``MMA_ST_FDPA`` of ``.kind::mxf8f6f4`` with the scale factors (``st_fdpa``).
F32 = Datapath(alignment_bits=25, rounding=Rounding.RZ, zero_sign="positive", overflow="infinity", zero_reference=-133)
#: ``MMA_T_FDPA(F=25, rho="RNE-FP16", e_zero=-21)``: the same step rounded to nearest even into .f16.
F16 = Datapath(alignment_bits=25, rounding=Rounding.RN, zero_sign="positive", overflow="infinity", zero_reference=-21)
#: ``MMA_GST_FDPA(G=16, F=35, rho="RZ-FP32", e_zero=-139)`` (``gst_fdpa``): groups of 16 products
#: summed exactly, each group's sum times its scale factors one addend with the scales' exponent.
MXF4 = Datapath(alignment_bits=35, rounding=Rounding.RZ, zero_sign="positive", overflow="infinity", zero_reference=-139, scale_group=16)

#: .e4m3/.e5m2/.e3m2/.e2m3/.e2m1 (mmasim/nv_ptx/isa_common.py ``f8f6f4_types``).
F8F6F4_TYPES = ("e5m2", "e4m3", "e3m2", "e2m3", "e2m1")

#: The K of each kind's dense instruction (§9.7.16.2.2), as the keys name it.
K_OF_KIND = {"tf32": 8, "f16": 16, "f8f6f4": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


def key(kind: str, atype: str, btype: str, dtype: str) -> MatrixKey:
    """The key of a dense tcgen05.mma datapath: C is D (``D = A*B + D``), the shape the kind's K."""
    return MatrixKey(atype, btype, dtype, dtype, shape=f"k{K_OF_KIND[kind]}", kind=kind)


#: Every combination MMA-Sim's Blackwell model offers (isa_tcgen05mma.py
#: ``blackwell_tcgen05mma_shape_and_type`` and ``blackwell_tcgen05mma_block_scale_shape_and_type``).
DATAPATHS: dict[MatrixKey, Datapath] = {
    key("tf32", "tf32", "tf32", "f32"): F32,
    key("f16", "f16", "f16", "f32"): F32,
    key("f16", "bf16", "bf16", "f32"): F32,
    key("f16", "f16", "f16", "f16"): F16,
    **{key("f8f6f4", a, b, "f32"): F32 for a in F8F6F4_TYPES for b in F8F6F4_TYPES},
    **{key("f8f6f4", a, b, "f16"): F16 for a in F8F6F4_TYPES for b in F8F6F4_TYPES},
    **{key("mxf8f6f4", a, b, "f32"): F32 for a in F8F6F4_TYPES for b in F8F6F4_TYPES},
    key("mxf4", "e2m1", "e2m1", "f32"): MXF4,
    key("mxf4nvf4", "e2m1", "e2m1", "f32"): MXF4,
}

#: The vectors MMA-Sim wrote (conformance/data/sm_100/mmasim/, replayed by tests/test_sm100_mmasim.py).
EVIDENCE = (
    "sm_100/mmasim/meta.json",
    "sm_100/mmasim/tf32.npz",
    "sm_100/mmasim/f16.npz",
    "sm_100/mmasim/f8f6f4.npz",
    "sm_100/mmasim/mxf8f6f4.npz",
    "sm_100/mmasim/mxf4.npz",
    "sm_100/mmasim/mxf4nvf4.npz",
)

__all__ = ["DATAPATHS", "EVIDENCE", "F16", "F32", "F8F6F4_TYPES", "K_OF_KIND", "LABEL", "MMASIM_VERSION", "MXF4", "key"]
