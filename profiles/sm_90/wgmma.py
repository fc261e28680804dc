"""sm_90's datapath of ``wgmma.mma_async{.sp}`` (§9.7.15.5.2, §9.7.15.6.3) per type combination.

The manual leaves the floating-point accumulation of wgmma as open as mma's ("The accumulation
order, rounding and handling of subnormal inputs are unspecified", §9.7.15.5.1 "Precision and
rounding", the sentences of §9.7.14.5.14). What a Hopper chip does is a measurement, not a reading
of the manual: this module is the data of that measurement as
:class:`ptxspec.semantics.mma.Datapath` values; :func:`datapath` is the look-up
:mod:`ptxspec.semantics.wgmma` uses for the ``sm_90`` profile.

Evidence: conformance/data/sm_90/{wgmma-0.npz, wgmma-1.npz, meta-wgmma.json}, recorded by
conformance/silicon/wgmma_campaign.py on an NVIDIA H200 (sm_90a, the Hopper tensor core of the
H100; meta-wgmma.json names the chip and driver), replayed by tests/test_wgmma_silicon.py and
docs/wgmma-silicon.rst. Every recorded instance goes through OUR layout model (descriptors,
swizzles, fragments, sparse metadata): the integer kernels (s8/u8, b1, .sp s8, .satfinite; 20
kernels, 0.56 * 10^6 dot products) match exactly, so the layouts are right and a float mismatch
is numerics.

* ``.f16``/``.bf16``/``.tf32`` (dense; .sp f16/bf16/tf32 -> .f32, selectors 0 and 1; imm-trans,
  imm-scale, register A): the dense mma datapath of the same types holds unchanged
  (:data:`ptxspec.profiles.sm_90.mma.FUSED`): one fused step, every product and C cut 25 bits below
  the largest exponent (toward zero), summed exactly, truncated into .f32 or rounded to nearest
  even into .f16; every zero +0; beyond range an infinity. 0 mismatches of 1.37 * 10^6 dot
  products. (For .sp the step takes the K/2 products of the stored elements with the rows of B
  they select, :mod:`ptxspec.semantics.sparse`; B's pruned positions are never read.)
* ``.e4m3``/``.e5m2`` (all four pairs; .sp e4m3.e4m3 -> .f32; imm-scale-b = -1): NOT the mma
  datapath (which rounds two steps of 16 products into full .f32). wgmma takes all K products
  (32; for .sp the 32 stored products of the 64 logical K) and C in ONE fused step, each cut **13** bits below the largest exponent
  (toward zero), summed exactly; into ``.f32`` the sum is truncated to **13 mantissa bits**
  (``via=(8, 13)``, toward zero), into ``.f16`` it is rounded to nearest even. 0 mismatches of
  0.83 * 10^6 dot products; each neighbour of the fit (12 or 14 alignment bits, 12 or 14 mantissa
  bits, a floor truncation, the msb reference, two steps of 16, round-to-nearest into 13 bits)
  misses 4 * 10^3 to 7 * 10^4 of them. This is the reduced fp8 accumulation precision of Hopper:
  the results lie outside the manual's "accumulation ... with at least single precision" for
  these types (see ``wgmma_campaign spec-check``).

Round 2 (conformance/data/sm_90/{wgmma-more-0.npz, meta-wgmma-more.json}, recorded by the same
campaign's part ``more`` on an NVIDIA H100 80GB HBM3) adds every remaining sm_90a combination:
dense e4m3.e5m2/e5m2.e5m2 -> .f16, .sp f16 -> .f16 (selectors 0 and 1), .sp of every fp8 pair
into .f32 and .f16, A from registers for bf16/tf32/fp8/.sp, imm-scale = -1 for bf16 and tf32,
and every integer sign pair with .satfinite (dense and .sp). The fit of every new floating-point
combination, started from the nearest measured datapath, keeps it with 0 mismatches: .sp f16 ->
.f16 is :data:`FUSED_F16`; every fp8 pair, dense or .sp, is :data:`FP8_F32`
into .f32 and :data:`FP8_F16` into .f16 (docs/wgmma-silicon.rst, "Round 2", gives the
counts and the separating evidence). With round 2 every floating-point wgmma/wgmma.sp combination
legal on sm_90a has a measured datapath; none is listed for integer types (exact) or for
combinations the manual does not allow.

The round wgmma-pruned (conformance/data/sm_90/{wgmma-pruned-0.npz, meta-wgmma-pruned.json}, part
``pruned`` of the same campaign, an NVIDIA H100 80GB HBM3) puts infinities, NaNs and the largest
finite numbers in B where the sparse A is pruned (.sp f16, bf16, tf32, e4m3, e5m2; selectors 0
and 1): the .sp datapaths above, fed only the stored products, give every recorded register
(0 mismatches of 329,728); multiplying a zero-expanded A with all of B misses 204 of the 208
instances (docs/wgmma-silicon.rst, "Round 3").
"""

from __future__ import annotations

import attrs

from ptxspec.profiles.record import MatrixKey
from ptxspec.profiles.sm_90.mma import FUSED
from ptxspec.semantics.mma import Datapath
from ptxspec.semantics.numerics import Rounding

#: .f16/.bf16/.tf32: the fused datapath of the sm_90 mma, confirmed on wgmma.
FUSED_F32 = FUSED
FUSED_F16 = attrs.evolve(FUSED, rounding=Rounding.RN)

#: .e4m3/.e5m2 into .f32: one fused step of all products and C cut 13 bits below the largest
#: exponent, the exact sum truncated to 13 mantissa bits (then exactly into .f32).
FP8_F32 = Datapath(alignment_bits=13, rounding=Rounding.RZ, via=(8, 13), via_rounding=Rounding.RZ, zero_sign="positive", overflow="infinity")
#: .e4m3/.e5m2 into .f16: the same step, the exact sum rounded to nearest even into .f16.
FP8_F16 = Datapath(alignment_bits=13, rounding=Rounding.RN, zero_sign="positive", overflow="infinity")

_FP8 = ("e4m3", "e5m2")


def _key(atype: str, btype: str, ctype: str, dtype: str, sparse: bool) -> MatrixKey:
    return MatrixKey(atype, btype, ctype, dtype, sparse=sparse)


#: Every measured combination (A, B, C, D types; dense or .sp); only what the recording covers.
DATAPATHS: dict[MatrixKey, Datapath] = {
    _key("f16", "f16", "f16", "f16", False): FUSED_F16,
    _key("f16", "f16", "f32", "f32", False): FUSED_F32,
    _key("bf16", "bf16", "f32", "f32", False): FUSED_F32,
    _key("tf32", "tf32", "f32", "f32", False): FUSED_F32,
    _key("f16", "f16", "f32", "f32", True): FUSED_F32,
    _key("bf16", "bf16", "f32", "f32", True): FUSED_F32,
    _key("tf32", "tf32", "f32", "f32", True): FUSED_F32,
    **{_key(a, b, "f32", "f32", False): FP8_F32 for a in _FP8 for b in _FP8},
    _key("e4m3", "e4m3", "f16", "f16", False): FP8_F16,
    _key("e5m2", "e4m3", "f16", "f16", False): FP8_F16,
    _key("e4m3", "e4m3", "f32", "f32", True): FP8_F32,
    # round 2 (wgmma-more-0.npz, meta-wgmma-more.json): the rest of the sm_90a combinations
    _key("e4m3", "e5m2", "f16", "f16", False): FP8_F16,
    _key("e5m2", "e5m2", "f16", "f16", False): FP8_F16,
    _key("f16", "f16", "f16", "f16", True): FUSED_F16,
    **{_key(a, b, "f32", "f32", True): FP8_F32 for a in _FP8 for b in _FP8},
    **{_key(a, b, "f16", "f16", True): FP8_F16 for a in _FP8 for b in _FP8},
}

EVIDENCE = (
    "sm_90/meta-wgmma.json",
    "sm_90/wgmma-0.npz",
    "sm_90/wgmma-1.npz",
    "sm_90/meta-wgmma-more.json",
    "sm_90/wgmma-more-0.npz",
    "sm_90/meta-wgmma-pruned.json",
    "sm_90/wgmma-pruned-0.npz",
)

__all__ = ["DATAPATHS", "EVIDENCE", "FP8_F16", "FP8_F32", "FUSED_F16", "FUSED_F32"]
