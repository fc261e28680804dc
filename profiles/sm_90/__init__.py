"""The ``sm_90`` profile: NVIDIA Hopper (H100, H200), every choice measured on silicon.

Every open result becomes the bit pattern the chip produces, where that was measured; choices that
were not measured stay sets. Each choice below names, in :attr:`~ptxspec.profiles.record.Profile.evidence`,
the recordings in ``conformance/data/sm_90/`` that pin it (the test suite replays them on machines
without a GPU; docs/profiles.rst lists the measurements). The parts with code or long tables live
beside this file: :mod:`.cvt` (conversions), :mod:`.video` (the video instructions), :mod:`.mma`
and :mod:`.wgmma` (the tensor-core datapaths). The recorded 16-bit tanh/ex2 tables stay in
``semantics/data/approx16-sm90.npz`` (written by ``python -m ptxspec.conformance.silicon approx
tables --write``, never by hand).
"""

from __future__ import annotations

from fractions import Fraction

from ptxspec.profiles.record import Profile
from ptxspec.profiles.sm_90 import cvt, memory, mma, video, wgmma
from ptxspec.semantics.floating_point_approx import exactly, power_of_two
from ptxspec.spec.types import IntegerType

#: The float-cvt round: 381 forms of §9.7.3 and §9.7.9.21 on an H200, 4096 vectors each; an H100
#: gave byte-identical files (float-cvt-h100-digests.json).
_FLOAT_CVT = (
    "sm_90/meta-float-cvt.json",
    "sm_90/float-cvt-0.npz",
    "sm_90/float-cvt-1.npz",
    "sm_90/float-cvt-2.npz",
    "sm_90/float-cvt-3.npz",
    "sm_90/float-cvt-h100-digests.json",
)
#: The atomic round: atom and red .add on .f32, .f64, .f16, .bf16, .f16x2, .bf16x2, on global and
#: shared memory, on an H200 (every pair of edge values and 4096 random pairs per form).
_ATOMIC = ("sm_90/meta-atomic.json", "sm_90/atomic.npz")
#: The memory round: ld/st/atom/red on memory images, the address windows, createpolicy (an H200;
#: an earlier H200 and an H100 recording agree bit for bit, memory-h200/h100-digests.json).
_MEMORY = ("sm_90/meta-memory.json", "sm_90/memory.npz")
#: The TMA round: cp.async.bulk.tensor loads and stores over driver-made tensor maps (an H100).
_TMA = ("sm_90/meta-tma.json", "sm_90/tma.npz")
#: The TMA rounds of interleaved tile maps: tma-more's 105 maps and tma-interleave's 192 (each on an
#: H100 and an H200), tma-replace-interleave's 64 changed by tensormap.replace (an H100).
_TMA_INTERLEAVE = (
    "sm_90/meta-tma-more.json",
    "sm_90/tma-more.npz",
    "sm_90/tma-more-h200.npz",
    "sm_90/meta-tma-interleave.json",
    "sm_90/tma-interleave.npz",
    "sm_90/tma-interleave-h100.npz",
    "sm_90/tma-replace-interleave.npz",
)
#: The async round: cp.async, the bulk copies and reductions, st.async, red.async and mbarrier
#: programs on an H100 (conformance/silicon/async_campaign.py).
_ASYNC = ("sm_90/meta-async.json", "sm_90/async.npz")
#: The integer-half-video-warp round: every sm_90a form of the integer, half-precision, video, ...
#: families on an H100; an H200 agrees bit for bit (integer-half-video-warp-h200-digests.json).
_INTEGER_HALF_VIDEO_WARP = (
    "sm_90/meta-integer-half-video-warp.json",
    "sm_90/integer-half-video-warp-inputs.npz",
    "sm_90/integer-half-video-warp-outputs-0.npz",
    "sm_90/integer-half-video-warp-outputs-1.npz",
    "sm_90/integer-half-video-warp-outputs-2.npz",
    "sm_90/integer-half-video-warp-h200-digests.json",
)
#: The .approx scan: every input of each one-operand .f32 form on an H100 and an H200.
_APPROX = ("sm_90/meta-approx-h100.json", "sm_90/meta-approx-h200.json", "sm_90/approx-extremes-h100.npz", "sm_90/approx-extremes-h200.npz")
#: The fma-oob-probes round (on an H200).
_FMA_OOB_PROBES = ("sm_90/meta-fma-oob-probes.json", "sm_90/fma-oob-probes-inputs.npz", "sm_90/fma-oob-probes-outputs.npz")
#: Every .f32 input of the .f32 conversions and the 16-bit arithmetic (the exhaustive round), on an H100 and an H200.
_EXHAUSTIVE = ("sm_90/meta-exhaustive-h100.json", "sm_90/meta-exhaustive-h200.json", "sm_90/exhaustive-h100.npz", "sm_90/exhaustive-h200.npz")


def integer_division_by_zero(t: IntegerType) -> int:
    """x / 0 and x % 0 write all ones, whatever x and the type (H200 and H100 recordings)."""
    return (1 << t.bits) - 1


SM_90 = Profile(
    "sm_90",
    description="what an H100/H200 produces, where measured",
    # --- NaN results (float-cvt; tests/test_silicon_sm90.py) ---
    # f32 (and f16, bf16) arithmetic returns 0x7fffffff (0x7fff): the canonical NaN.
    canonical_nan=True,
    payload_nan_rule="ordered",
    # When several f64 operands are NaN: add, sub, mul, min, max return b's; fma and mad prefer b,
    # then c, then a; div returns a's (f64 division runs as a software sequence).
    nan_operand_priority={"fma": (1, 2, 0), "mad": (1, 2, 0), "div": (0, 1)},
    # inf - inf, 0 * inf, sqrt(-1) in f64 give the negative quiet NaN 0xfff8000000000000.
    default_nan={"f64": 0xFFF8000000000000},
    # --- atom/red (atomic; tests/test_atomic_silicon.py) ---
    # atom/red.add.f64 with a NaN operand: on global memory b's NaN first, then the memory's, a
    # signalling NaN left as it is; on shared memory the memory's NaN first, quieted. The f32 and
    # half-type adds follow the add instruction (and the manual's flush rule for .f32 on .global).
    # cp.reduce.async.bulk .add.f64 into global memory (async round; tests/test_async_silicon.py)
    # takes the same rule as atom's on global memory: the source element's NaN first, then the
    # destination's, a signalling NaN left as it is (all 784 NaN elements of the round).
    atomic_add_nan={("global", "f64"): ((1, 0), False), ("shared", "f64"): ((0, 1), True), ("bulk", "f64"): ((1, 0), False)},
    # --- cp.reduce.async.bulk (async; tests/test_async_silicon.py) ---
    # .add.f32 into global memory keeps subnormal inputs and results on an H100 (every subnormal
    # element of the async round: e.g. 0x55 + 0x1 = 0x56, 0x807fffff + 0x800000 = 0x1), though the
    # manual says "the current implementation of cp.reduce.async.bulk.add.f32 flushes subnormal
    # inputs and results to sign-preserving zero" -- atom.add.f32 on global memory does flush.
    bulk_reduce_add={"f32": "add.rn.f32"},
    # --- tensor copies (tma; tests/test_tma_silicon.py) ---
    # cp.async.bulk.tensor from shared to global memory with any negative tensor coordinate faults
    # (illegal instruction) on an H100: all 57 such cases of the TMA round whose boxes are 16-byte
    # aligned (their loads do not fault); the manual: out-of-bound elements are not written.
    tensor_store_below_bounds_faults=True,
    # A store writes the elements of dimension 0 up to the row's bytes rounded up to 16: the ten
    # stores of the TMA round whose box passes a row end that is not a multiple of 16 bytes wrote
    # exactly those extra elements (x = 2, 3 of an .s32 row of 2; x = 121-127 of an .f16 row of
    # 121; x = 21-31 of a .u8 row of 21), the other 44 stores nothing outside the tensor -- among
    # them rank-1 stores past a row end of 164 bytes, which the chip bounds exactly.
    tensor_store_row_granule=16,
    # The OOB-NaN an H100 writes: 0x7ff7 in every 16 bits (f16 and bf16 0x7ff7, f32 0x7ff77ff7,
    # f64 0x7ff77ff77ff77ff7; 982 filled elements of the TMA round) -- the 16-bit pattern of the
    # fma_oob_nan below.
    tensor_oob_nan={"f16": 0x7FF7, "bf16": 0x7FF7, "f32": 0x7FF77FF7, "f64": 0x7FF77FF77FF77FF7},
    # Interleaved tile maps (§5.5.6 gives no element address): every load and store of the
    # tma-more round (105 maps, an H100 and an H200) and of the tma-interleave round (192 maps
    # drawn to test it, each load armed with the bytes it predicts; an H200 twice and an H100, the
    # same bytes) replays under this reading -- bytes, fills, faults, mbarrier completion.
    tensor_interleaved_slices=True,
    # --- createpolicy (memory; tests/test_memory_silicon.py) ---
    createpolicy_fractional=memory.createpolicy_fractional,
    # --- integer (integer-half-video-warp; tests/test_silicon_sm90.py, tests/test_integer.py) ---
    integer_division_by_zero=integer_division_by_zero,
    # -7 % 2 is -1: the remainder of the quotient rounded toward zero.
    integer_remainder_toward_zero=True,
    fns_base_beyond_31=0xFFFFFFFF,
    # fns.b32 with offset 0x80000000 writes 0 for every mask and base (the manual: the 2^31-th set
    # bit is never found, 0xffffffff).
    fns_most_negative_offset=0,
    # bfe.u64/.s64 and bfi.b64 read position and length as whole .u32 values (the field runs to the
    # msb when they exceed it); the .32 forms mask them to 8 bits as the manual says.
    bit_field_operand_mask={32: 0xFF, 64: 0xFFFF_FFFF},
    # sub.cc.u32 0 - 0 sets CC.CF = 1 (read back with addc 0, 0); subc.u32 0 - 0 after a carry of 0
    # gives 0xffffffff, after a carry of 1 gives 0.
    carry_flag_holds_not_borrow=True,
    # --- sin.approx, cos.approx (the approx scan; tests/test_silicon_approx.py) ---
    # cos.approx.f32 on [-2 pi, 2 pi] errs by up to 2^-20.427, beyond the manual's 2^-20.5, for 4698
    # of the 2^32 inputs (4.74 <= |a| <= 5.05; every f32 input on an H200, with and without .ftz,
    # and again on an H100 and an H200: 4698 inputs, 2^-20.427 recomputed exactly with MPFR, the same
    # on both chips). sin.approx.f32 and the wider range keep to the manual.
    sin_cos_near_bound={"cos": power_of_two(-204, 10)},  # 2^-20.4
    # --- half precision (integer-half-video-warp; tests/test_half_precision.py, tests/test_silicon_approx.py) ---
    # fma.oob (an H200, ptxas 13.0; every 16-bit a, b, c alone with the others 1.0, and 16^3 triples
    # of NaNs, zeros, infinities and numbers for .f16/.bf16 and their x2 lanes, .relu or not):
    # 0x7ff7 and 0xfff7 -- for .f16 and .bf16 alike -- in a or b give +0.0; in c, and every other
    # NaN anywhere, give the ordinary (canonical) NaN result. So the chip does not test c, where the
    # manual says "any of the operands".
    fma_oob_nan=(frozenset({0x7FF7, 0xFFF7}), (0, 1)),
    # Every one of the 2^16 inputs of tanh.approx.f16/.bf16, ex2.approx.f16 and ex2.approx.ftz.bf16,
    # recorded on an H100 ("#all-inputs" in meta-integer-half-video-warp.json) and extracted by
    # ``python -m ptxspec.conformance.silicon approx tables --write``. The x2 forms use the same
    # table in each lane: every lane of their integer-half-video-warp recordings agrees with it.
    approx16_tables="approx16-sm90.npz",
    # tanh.approx.bf16 of +-0.74609375 (0x3f3f, 0xbf3f) gives +-0.62890625 (0x3f21, 0xbf21),
    # 2^-7.99991 from tanh -- beyond the manual's 2^-8; every other .bf16 and .f16 input keeps to
    # the manual. 2^-8 (1 + 2^-13) covers it.
    tanh_absolute={"bf16": exactly(Fraction(2**13 + 1, 2**21))},
    approx16_outside_bound={"tanh.bf16": frozenset({0x3F3F, 0xBF3F})},
    # --- cvt (float-cvt, remaining-forms and exhaustive; tests/test_cvt.py, tests/test_silicon_exhaustive.py) ---
    cvt_nan=cvt.cvt_nan,
    cvt_nan_from_f32_batch=cvt.cvt_nan_from_f32_batch,
    cvt_integer_nan=cvt.cvt_integer_nan,
    cvt_ftz_flushes_input=cvt.cvt_ftz_flushes_input,
    # --- mma, wgmma (tests/test_mma*.py, tests/test_wgmma_silicon.py) ---
    mma_datapaths=mma.DATAPATHS,
    wgmma_datapaths=wgmma.DATAPATHS,
    # The spec-level reading -0 (the identity of IEEE addition), kept because the recording cannot
    # separate it from +0 or from leaving C out: round 2's scale-d probe (f16 -> f32, e4m3 -> f32,
    # f16 -> f16; rows of A all -0, all +0, or one tiny element; B positive, +0 or negative) gives
    # bit-identical D for scale-d false (C registers holding NaN, infinities, numbers), scale-d true
    # with C = +0, and scale-d true with C = -0: every zero result is +0 on sm_90, even a negative
    # sum that underflows to zero in .f16.
    wgmma_scale_d_false_c="-0",
    # --- video (integer-half-video-warp; tests/test_video.py) ---
    scalar_video=video.scalar_video,
    vmad=video.vmad,
    scalar_video_batch=video.scalar_video_batch,
    vmad_batch=video.vmad_batch,
    # tests/test_batch_exhaustive.py proves the numpy paths of semantics/batch.py under this profile.
    batch_paths=True,
    evidence={
        "atomic_add_nan": _ATOMIC + _ASYNC,
        "bulk_reduce_add": _ASYNC,
        "createpolicy_fractional": _MEMORY,
        "tensor_store_below_bounds_faults": _TMA,
        "tensor_oob_nan": _TMA,
        "tensor_store_row_granule": _TMA,
        "tensor_interleaved_slices": _TMA_INTERLEAVE,
        "canonical_nan": _FLOAT_CVT + _INTEGER_HALF_VIDEO_WARP,
        "payload_nan_rule": _FLOAT_CVT,
        "nan_operand_priority": _FLOAT_CVT,
        "default_nan": _FLOAT_CVT,
        "integer_division_by_zero": _INTEGER_HALF_VIDEO_WARP,
        "integer_remainder_toward_zero": _INTEGER_HALF_VIDEO_WARP,
        "fns_base_beyond_31": _INTEGER_HALF_VIDEO_WARP,
        "fns_most_negative_offset": _INTEGER_HALF_VIDEO_WARP,
        "bit_field_operand_mask": _INTEGER_HALF_VIDEO_WARP,
        "carry_flag_holds_not_borrow": _INTEGER_HALF_VIDEO_WARP,
        "sin_cos_near_bound": _APPROX,
        "fma_oob_nan": _FMA_OOB_PROBES,
        "approx16_tables": _INTEGER_HALF_VIDEO_WARP,
        "tanh_absolute": _INTEGER_HALF_VIDEO_WARP,
        "approx16_outside_bound": _INTEGER_HALF_VIDEO_WARP,
        "cvt_nan": cvt.EVIDENCE,
        "cvt_nan_from_f32_batch": cvt.EVIDENCE + _EXHAUSTIVE,
        "cvt_integer_nan": cvt.EVIDENCE + _INTEGER_HALF_VIDEO_WARP,
        "cvt_ftz_flushes_input": cvt.EVIDENCE,
        "mma_datapaths": mma.EVIDENCE,
        "wgmma_datapaths": wgmma.EVIDENCE,
        "wgmma_scale_d_false_c": ("sm_90/meta-wgmma-more.json", "sm_90/wgmma-more-0.npz"),
        "scalar_video": video.EVIDENCE,
        "vmad": video.EVIDENCE,
        "scalar_video_batch": video.EVIDENCE,
        "vmad_batch": video.EVIDENCE,
    },
)

PROFILE = SM_90

__all__ = ["PROFILE", "SM_90"]
