"""sm_90's datapaths of ``mma`` and ``mma.sp`` (§9.7.14.5.14: "The accumulation order, rounding and
handling of subnormal inputs are unspecified"): :class:`~ptxspec.semantics.mma.Datapath` values
fitted to the H100 recordings, keyed by :class:`~ptxspec.profiles.record.MatrixKey`.

Evidence: conformance/data/sm_90/{meta-mma.json, mma-0.npz, mma-1.npz} (round 1),
{meta-mma-more.json, mma-more-0.npz} (round 2: every dense combination), {meta-mma-sp.json,
mma-sp-0.npz} and {meta-mma-sp-more.json, mma-sp-more-0.npz} (mma.sp), sass/ (m8n8k4), recorded by
conformance/silicon/mma_campaign.py and replayed by tests/test_mma.py,
tests/test_mma_more_silicon.py and tests/test_mma_sp_silicon.py; docs/mma.rst gives the fits and
the separating evidence.
"""

from __future__ import annotations

import attrs

from ptxspec.profiles.record import MatrixKey
from ptxspec.semantics.mma import BINARY32, Datapath
from ptxspec.semantics.numerics import Rounding

#: For f16, bf16 and tf32 inputs one fused step -- the K products and C cut at 25 bits below the
#: largest exponent (truncated toward zero), summed exactly, the sum truncated into .f32 (.rz) or
#: rounded to nearest even into .f16; every zero result +0; a result beyond range an infinity
#: (meta-mma.json).
FUSED = Datapath(alignment_bits=25, rounding=Rounding.RZ, zero_sign="positive", overflow="infinity")
#: :data:`FUSED` rounded to nearest even into an .f16 D.
FUSED_F16 = attrs.evolve(FUSED, rounding=Rounding.RN)

#: .f64: a chain of fused multiply-adds ``acc = fma(a_k, b_k, acc)``, k ascending from ``acc = c``,
#: each rounded to .f64 in the form's mode (measured: .rn on m8n8k4, .rz on m16n8k8); NaN results
#: as the sm_90 f64 fma gives them (b's NaN, then the accumulator's, then a's, quieted;
#: 0xfff8000000000000 for an invalid operation).
F64_CHAIN = Datapath(chunk=1, accumulator=(11, 52), accumulator_rounding=Rounding.RN, rounding=Rounding.RN, nan=0xFFF8000000000000, nan_rule="fma-chain")

#: .e4m3/.e5m2 (m16n8k32): two fused steps of 16 products -- the elements in the low half of each
#: 32-bit A/B register word (k % 4 in {0, 1}), then the high half -- each cut 25 bits below its
#: largest exponent and summed exactly; the running sum truncated into .f32 (or rounded to nearest
#: even into .f16 for an .f16 D) between and after them; then C added in a step of its own (any
#: alignment width from 40 bits up fits) and the result rounded to nearest even.
FP8_F32 = Datapath(
    alignment_bits=25,
    chunk=16,
    order="pairs",
    accumulator=(8, 23),
    accumulator_rounding=Rounding.RZ,
    c_step="alone",
    c_alignment_bits=40,
    rounding=Rounding.RN,
    zero_sign="positive",
    overflow="infinity",
    subnormal_reference="normalised",
)
FP8_F16 = attrs.evolve(FP8_F32, accumulator=(5, 10), accumulator_rounding=Rounding.RN)

#: m8n8k4 .f16 (§9.7.14.5.14; docs/mma.rst "m8n8k4 .f16"): sm_90 has no tensor-core instruction for
#: this shape, and ptxas (CUDA 13.0) compiles it into binary32 arithmetic -- the .f16 elements
#: converted exactly (HADD2.F32), products exact in binary32 (FMUL), sums by FFMA and FADD, each
#: rounded to nearest even. For an .f32 D: ``fma`` k ascending from +0, then C added (so every zero
#: result is +0). For an .f16 D: the sum of the products of k = 0, 1 and of k = 2, 3 (FMUL, then
#: FFMA), ``(C + s_01) + s_23`` (FADD), rounded to nearest even into .f16 (F2FP). Measured on H100
#: (meta-mma-more.json), and read from the SASS (sass/).
M8N8K4_F32 = Datapath(chunk=1, c_step="alone", accumulator=BINARY32, accumulator_rounding=Rounding.RN, rounding=Rounding.RN, zero_sign="positive")
M8N8K4_F16 = Datapath(
    chunk=2,
    c_step="tree",
    tree_sum="chain",
    accumulator=BINARY32,
    accumulator_rounding=Rounding.RN,
    rounding=Rounding.RN,
    via=BINARY32,
    via_rounding=Rounding.RN,
)

_FP8 = ("e4m3", "e5m2")


def _key(atype: str, btype: str, ctype: str, dtype: str, shape: str, rounding: Rounding | None = None, sparse: bool = False) -> MatrixKey:
    return MatrixKey(atype, btype, ctype, dtype, shape=shape, rounding=rounding, sparse=sparse)


#: Every measured combination. A combination not listed -- another shape, another rounding
#: modifier, a sparse form not recorded -- is evaluated at the spec level (the allowed sets) under
#: sm_90 too: the recordings say nothing about it.
DATAPATHS: dict[MatrixKey, Datapath] = {
    # Round 1 (meta-mma.json, mma-0.npz, mma-1.npz).
    _key("f16", "f16", "f32", "f32", "m16n8k16"): FUSED,
    _key("bf16", "bf16", "f32", "f32", "m16n8k16"): FUSED,
    _key("tf32", "tf32", "f32", "f32", "m16n8k8"): FUSED,
    _key("f16", "f16", "f16", "f16", "m16n8k16"): FUSED_F16,
    **{_key(a, b, "f32", "f32", "m16n8k32"): FP8_F32 for a in _FP8 for b in _FP8},
    **{_key(a, b, "f16", "f16", "m16n8k32"): FP8_F16 for a in _FP8 for b in _FP8},
    _key("f64", "f64", "f64", "f64", "m8n8k4", Rounding.RN): F64_CHAIN,
    _key("f64", "f64", "f64", "f64", "m16n8k8", Rounding.RZ): attrs.evolve(F64_CHAIN, accumulator_rounding=Rounding.RZ, rounding=Rounding.RZ),
    # Round 2 (meta-mma-more.json, mma-more-0.npz; docs/mma.rst "Every dense combination"): the
    # datapath measured on round 1's shape for the same types reproduces every recorded result of
    # the other shapes; fp8 m16n8k16 takes two steps of 8 products (the low, then the high halves
    # of the register words), as m16n8k32 takes two of 16; .f64 the fma chain in the form's
    # rounding mode (.rm is left out: silicon gives -0 for an exact zero sum there, which the
    # model's zero-sign rule does not say).
    _key("f16", "f16", "f32", "f32", "m16n8k8"): FUSED,
    _key("f16", "f16", "f16", "f16", "m16n8k8"): FUSED_F16,
    _key("bf16", "bf16", "f32", "f32", "m16n8k8"): FUSED,
    _key("tf32", "tf32", "f32", "f32", "m16n8k4"): FUSED,
    **{_key(a, b, "f32", "f32", "m16n8k16"): attrs.evolve(FP8_F32, chunk=8) for a in _FP8 for b in _FP8},
    **{_key(a, b, "f16", "f16", "m16n8k16"): attrs.evolve(FP8_F16, chunk=8) for a in _FP8 for b in _FP8},
    **{
        _key("f64", "f64", "f64", "f64", shape, r): attrs.evolve(F64_CHAIN, accumulator_rounding=r, rounding=r)
        for shape in ("m16n8k4", "m16n8k8", "m16n8k16")
        for r in (Rounding.RN, Rounding.RZ, Rounding.RM, Rounding.RP)
        if (r, shape) != (Rounding.RZ, "m16n8k8")
    },
    _key("f16", "f16", "f32", "f32", "m8n8k4"): M8N8K4_F32,
    _key("f16", "f16", "f16", "f32", "m8n8k4"): M8N8K4_F32,
    _key("f16", "f16", "f16", "f16", "m8n8k4"): M8N8K4_F16,
    # mma.sp (meta-mma-sp.json, mma-sp-0.npz; docs/mma.rst "Sparse mma"): each row of D is the
    # dense datapath of K/2 products -- the stored elements of A and the rows of B the metadata
    # selects -- with and without ::ordered_metadata, both sparsity selectors.
    _key("f16", "f16", "f32", "f32", "m16n8k32", sparse=True): FUSED,
    _key("bf16", "bf16", "f32", "f32", "m16n8k32", sparse=True): FUSED,
    _key("tf32", "tf32", "f32", "f32", "m16n8k16", sparse=True): FUSED,
    _key("f16", "f16", "f16", "f16", "m16n8k32", sparse=True): FUSED_F16,
    _key("e4m3", "e4m3", "f32", "f32", "m16n8k64", sparse=True): FP8_F32,
    _key("e5m2", "e4m3", "f32", "f32", "m16n8k64", sparse=True): FP8_F32,
    # mma.sp round 2 (meta-mma-sp-more.json, mma-sp-more-0.npz; docs/mma.rst "Sparse mma, every
    # remaining sm_90a form"): the same datapaths again, every sparsity selector, with and without
    # ::ordered_metadata -- ``mma fit --round mma-sp-more`` stops at its first start with no mismatch.
    _key("f16", "f16", "f32", "f32", "m16n8k16", sparse=True): FUSED,
    _key("f16", "f16", "f16", "f16", "m16n8k16", sparse=True): FUSED_F16,
    _key("bf16", "bf16", "f32", "f32", "m16n8k16", sparse=True): FUSED,
    _key("tf32", "tf32", "f32", "f32", "m16n8k8", sparse=True): FUSED,
    _key("e4m3", "e5m2", "f32", "f32", "m16n8k64", sparse=True): FP8_F32,
    _key("e5m2", "e5m2", "f32", "f32", "m16n8k64", sparse=True): FP8_F32,
}

EVIDENCE = (
    "sm_90/meta-mma.json",
    "sm_90/mma-0.npz",
    "sm_90/mma-1.npz",
    "sm_90/meta-mma-more.json",
    "sm_90/mma-more-0.npz",
    "sm_90/meta-mma-sp.json",
    "sm_90/mma-sp-0.npz",
    "sm_90/meta-mma-sp-more.json",
    "sm_90/mma-sp-more-0.npz",
    "sm_90/sass",
)

__all__ = ["DATAPATHS", "EVIDENCE", "F64_CHAIN", "FP8_F16", "FP8_F32", "FUSED", "FUSED_F16", "M8N8K4_F16", "M8N8K4_F32"]
