"""The tcgen05 matrix descriptors of §9.7.16.4 (semantics/tcgen05_descriptors.py): the shared memory
descriptor (§9.7.16.4.1), the instruction descriptor (§9.7.16.4.2) and the zero-column mask
descriptor (§9.7.16.4.3), checked three ways:

* the manual's worked examples (the LBO/SBO encodings and exact CuTe layouts of §9.7.16.3.3, the
  four zero-column mask examples of §9.7.16.4.3);
* Hypothesis properties: decode inverts encode, every 64/32-bit value is decoded or refused with a
  ptxspec error, and the refusals the manual states;
* an independent oracle: NVIDIA CUTLASS's bit-fields (``include/cute/arch/mma_sm100_desc.hpp`` at
  commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4: ``UMMA::SmemDescriptor``, ``UMMA::InstrDescriptor``,
  ``UMMA::InstrDescriptorBlockScaled``, ``UMMA::MaskAndShiftB`` and the enums ``LayoutType``,
  ``F16F32Format``, ``S8Format``, ``MXF8F6F4Format``, ``MXF4Format``, ``ScaleFormat``, ``CFormat``,
  ``MaxShift``), written below as tables of (bit offset, width) and codes. Encoding random field
  tuples must set exactly the bits CUTLASS's fields give; every place where the manual and
  CUTLASS differ is a :data:`KNOWN` entry with the manual's sentence.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.tcgen05_descriptors import InstrDescriptor, SmemDescriptor, ZeroColumnMaskDescriptor
from ptxspec.spec.errors import OperandError, PtxSpecError

# ---------------------------------------------------------------------------------------------
# CUTLASS, include/cute/arch/mma_sm100_desc.hpp (commit 7107b055): the bit-fields as its unions
# declare them ("// bit [a,b)" comments and the bit-field widths), (lowest bit, width).
# ---------------------------------------------------------------------------------------------

#: union SmemDescriptor: "start_address_ : 14" [0,14), "leading_byte_offset_ : 14" [16,30),
#: "stride_byte_offset_ : 14, version_ : 2" [32,46) [46,48), "base_offset_ : 3, lbo_mode_ : 1"
#: [49,52) [52,53), "layout_type_ : 3" [61,64).
CUTLASS_SMEM = {
    "start_address_": (0, 14),
    "leading_byte_offset_": (16, 14),
    "stride_byte_offset_": (32, 14),
    "version_": (46, 2),
    "base_offset_": (49, 3),
    "lbo_mode_": (52, 1),
    "layout_type_": (61, 3),
}
#: enum class LayoutType: SWIZZLE_NONE = 0, SWIZZLE_128B_BASE32B = 1, SWIZZLE_128B = 2,
#: SWIZZLE_64B = 4, SWIZZLE_32B = 6. make_umma_desc: "desc.version_ = 1; // Set the version for
#: blackwell", "desc.lbo_mode_ = 0; // set to legacy mode by default".
CUTLASS_LAYOUT_TYPE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
CUTLASS_VERSION = 1

#: union InstrDescriptor: sparse_id2_ [0,2), sparse_flag_ [2,3), saturate_ [3,4), c_format_
#: [4,6), a_format_ [7,10), b_format_ [10,13), a_negate_ [13,14), b_negate_ [14,15), a_major_
#: [15,16), b_major_ [16,17), n_dim_ [17,23) "3 LSBs not included", m_dim_ [24,29) "4 LSBs not
#: included", max_shift_ [30,32).
CUTLASS_INSTR = {
    "sparse_id2_": (0, 2),
    "sparse_flag_": (2, 1),
    "saturate_": (3, 1),
    "c_format_": (4, 2),
    "a_format_": (7, 3),
    "b_format_": (10, 3),
    "a_negate_": (13, 1),
    "b_negate_": (14, 1),
    "a_major_": (15, 1),
    "b_major_": (16, 1),
    "n_dim_": (17, 6),
    "m_dim_": (24, 5),
    "max_shift_": (30, 2),
}
#: union InstrDescriptorBlockScaled: sparse_id2_ [0,2), sparse_flag_ [2,3), b_sf_id_ [4,6),
#: a_format_ [7,10), b_format_ [10,13), a_negate_, b_negate_, a_major_, b_major_ [13..17), n_dim_
#: [17,23), scale_format_ [23,24) "0=E4M3, 1=E8M0", m_dim_ [24,29) "4 LSBs not included",
#: a_sf_id_ [29,31), k_size_ [31,32).
CUTLASS_BLOCK_SCALED = {
    "sparse_id2_": (0, 2),
    "sparse_flag_": (2, 1),
    "b_sf_id_": (4, 2),
    "a_format_": (7, 3),
    "b_format_": (10, 3),
    "a_negate_": (13, 1),
    "b_negate_": (14, 1),
    "a_major_": (15, 1),
    "b_major_": (16, 1),
    "n_dim_": (17, 6),
    "scale_format_": (23, 1),
    "m_dim_": (24, 5),
    "a_sf_id_": (29, 2),
    "k_size_": (31, 1),
}
#: The format enums: F16F32Format {F16 0, BF16 1, TF32 2}, S8Format {UINT8 0, INT8 1},
#: MXF8F6F4Format {E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5}, MXF4Format {E2M1 1}; CFormat {F16 0,
#: F32 1, S32 2}; ScaleFormat {UE4M3 0, UE8M0 1}; MaxShift {NoShift 0, MaxShift8 1, MaxShift16 2,
#: MaxShift32 3}.
CUTLASS_FORMAT = {
    "f16": {"f16": 0, "bf16": 1},
    "tf32": {"tf32": 2},
    "i8": {"u8": 0, "s8": 1},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
CUTLASS_C_FORMAT = {"f16": 0, "f32": 1, "s32": 2}
CUTLASS_SCALE_FORMAT = {"ue4m3": 0, "ue8m0": 1}
CUTLASS_MAX_SHIFT = {0: 0, 8: 1, 16: 2, 32: 3}
#: union MaskAndShiftB: "uint8_t start_count_ [4]; // bit [ 0:32) : 8 bits each", "first_span_ :
#: 4 // bit [32:36) : 1 bit each", ": 3", "nzm_ : 1 // bit [39:40)", "skip_span_ : 8 // bit
#: [40:48)", "use_span_ : 8" (after skip_span_: [48,56)), "shift_ : 6 // bit [56:62)".
CUTLASS_MASK = {
    "start_count_[0]": (0, 8),
    "start_count_[1]": (8, 8),
    "start_count_[2]": (16, 8),
    "start_count_[3]": (24, 8),
    "first_span_": (32, 4),
    "nzm_": (39, 1),
    "skip_span_": (40, 8),
    "use_span_": (48, 8),
    "shift_": (56, 6),
}

#: Which ptxspec fields each CUTLASS field corresponds to (the bits of the right-hand fields
#: together against the CUTLASS field's).
SMEM_MAP = {
    "start_address_": ("start_address",),
    "leading_byte_offset_": ("leading_byte_offset",),
    "stride_byte_offset_": ("stride_byte_offset",),
    "version_": ("version",),
    "base_offset_": ("base_offset",),
    "lbo_mode_": ("leading_mode",),
    "layout_type_": ("swizzle",),
}
INSTR_MAP = {
    "sparse_id2_": ("sparsity_selector",),
    "sparse_flag_": ("sparse",),
    "saturate_": ("saturate",),
    "c_format_": ("dtype",),
    "a_format_": ("atype",),
    "b_format_": ("btype",),
    "a_negate_": ("negate_a",),
    "b_negate_": ("negate_b",),
    "a_major_": ("transpose_a",),
    "b_major_": ("transpose_b",),
    "n_dim_": ("n",),
    "m_dim_": ("m",),
    "max_shift_": ("max_shift",),
}
BLOCK_MAP = {
    "sparse_id2_": ("reserved_0",),
    "sparse_flag_": ("sparse",),
    "b_sf_id_": ("scale_b_id",),
    "a_format_": ("atype",),
    "b_format_": ("btype",),
    "a_negate_": ("negate_a",),
    "b_negate_": ("negate_b",),
    "a_major_": ("transpose_a",),
    "b_major_": ("transpose_b",),
    "n_dim_": ("n",),
    "scale_format_": ("scale_type",),
    "m_dim_": ("m",),
    "a_sf_id_": ("scale_a_id",),
}
MASK_MAP = {
    "start_count_[0]": ("sc0",),
    "start_count_[1]": ("sc1",),
    "start_count_[2]": ("sc2",),
    "start_count_[3]": ("sc3",),
    "first_span_": ("fs0", "fs1", "fs2", "fs3"),
    "nzm_": ("non_zero_mask",),
    "skip_span_": ("skip_span",),
    "use_span_": ("use_span",),
    "shift_": ("column_shift",),
}

#: Every difference between the manual (what ptxspec implements) and CUTLASS, keyed by (CUTLASS
#: struct, field, the ptxspec table it is compared with), with the manual's sentence. The bit
#: differences are checked to be real (test_known_bit_differences_are_real) and to be harmless on
#: every descriptor the manual allows (the property tests encode through CUTLASS's tables).
KNOWN = {
    ("SmemDescriptor", "version_", "Table 40"): (
        'Table 40: "46-48 | 3 | Fixed constant value of 0b001". CUTLASS: version_ is 2 bits [46,48), set to 1 '
        "(bit 48 unused): the same bits (46 = 1, 47 = 48 = 0); we refuse a bit 48 that CUTLASS leaves unused."
    ),
    ("InstrDescriptorBlockScaled", "sparse_id2_", "Table 43"): (
        'Table 43: "0-1 | 2 | Reserved | 0"; §9.7.16.10.8.4.5: the sparsity selector "is assumed to be 0 for .kind::mxf8f6f4, '
        '.kind::mxf4 and .kind::mxf4nvf4". CUTLASS: sparse_id2_ at [0,2) (always 0 in its builders).'
    ),
    ("InstrDescriptorBlockScaled", "sparse_id2_", "Table 44"): 'Table 44: "0-1 | 2 | Reserved | 0" (as Table 43).',
    ("InstrDescriptorBlockScaled", "m_dim_", "Table 43"): (
        'Table 43: "24-26 | 3 | Reserved | 0", "27-28 | 2 | M, Dimension of Matrix A (7 LSBs not included) | M >> 7". CUTLASS: '
        'm_dim_ 5 bits [24,29), "4 LSBs not included": for M = 128 and 256, (M >> 4) << 24 == (M >> 7) << 27.'
    ),
    ("InstrDescriptorBlockScaled", "m_dim_", "Table 44"): 'Table 44: "27-28 | 2 | M ... M >> 7" (as Table 43).',
    ("InstrDescriptorBlockScaled", "k_size_", "Table 43"): (
        'Table 43: "31 | 1 | Reserved | 0". CUTLASS: k_size_ [31,32), "MXF8F6F4Format: 0=[dense: K32, sparse: K64]": 0 either way.'
    ),
    ("InstrDescriptorBlockScaled", "b_format_", "Table 44"): (
        'Table 44: "10-11 | 2 | btype (Matrix B type)", "12 | 1 | Reserved | 0". CUTLASS: b_format_ 3 bits [10,13); E2M1 = 1 leaves bit 12 at 0.'
    ),
}
#: Differences of meaning (not of bit positions) between the manual and CUTLASS's comments; ptxspec
#: follows the manual in each, as the named test checks.
KNOWN_MEANING = {
    "nzm_": (
        'Table 45: "Non-Zero Mask: Value 0 indicates generated mask will have all 0s Value 1 indicates the mask has to be '
        'generated". CUTLASS\'s comment: "nzm_ : 0 = Enable the mask. 1 = Disable the mask" (its make_column_zero_mask sets '
        "nzm = 0 where nothing is skipped, as the manual's meaning): test_mask_example_1.",
    ),
    "skip_span_/use_span_": (
        'Table 45: "Skip Span: (Count of consecutive columns where B matrix is used) - 1", "Use Span: (Count of consecutive '
        'columns where 0s ar used) - 1". CUTLASS: "skip_span_ ... consecutive columns where 0 value is used", "use_span_ ... '
        "consecutive columns where B matrix data is used\", as the manual's examples (which we follow): test_mask_examples.",
    ),
    "sparse_flag_": (
        'Table 44 (.kind::mxf4, .kind::mxf4nvf4): "Sparsity: Dense = 0 Sparse = 1", Table 39 "Sparse | K = 128". CUTLASS\'s '
        'comment: "1 value valid only for F32F16/S8/MXF8F6F4": test_instr_refusals (a sparse mxf4 is accepted).',
    ),
    "m_dim_": (
        'Table 39: ".ws | 1 | Dense | ... | 32xNxK" (M = 32, encoded 2). CUTLASS\'s comment: "Valid values are: 4 (M=64), 8 '
        '(M=128), 16 (M=256)": test_instr_refusals (M = 32 is accepted).',
    ),
}

# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

_bytes18 = st.integers(0, (1 << 14) - 1).map(lambda x: x << 4)


@st.composite
def smem_descriptors(draw) -> SmemDescriptor:
    mode = draw(st.sampled_from(["relative", "relative", "absolute"]))
    swizzle = "128B" if mode == "absolute" else draw(st.sampled_from(list(td.SWIZZLE_CODES)))
    return SmemDescriptor(
        start_address=draw(_bytes18),
        leading_byte_offset=draw(_bytes18),
        stride_byte_offset=draw(_bytes18),
        base_offset=0 if mode == "absolute" else draw(st.integers(0, 7)),
        leading_mode=mode,
        swizzle=swizzle,
    )


@st.composite
def instr_descriptors(draw, kind=None) -> InstrDescriptor:
    kind = kind or draw(st.sampled_from(td.KINDS))
    block = kind in td.BLOCK_SCALED
    types = sorted(td.TYPE_CODES[kind])
    args = dict(
        kind=kind,
        m=draw(st.sampled_from(sorted(td.M_VALUES[kind]))),
        n=draw(st.sampled_from(sorted(td.N_VALUES[kind]))),
        atype=draw(st.sampled_from(types)),
        btype=draw(st.sampled_from(types)),
        sparse=draw(st.booleans()),
        negate_a=kind != "i8" and draw(st.booleans()),
        negate_b=kind != "i8" and draw(st.booleans()),
        transpose_a=kind not in ("mxf4", "mxf4nvf4") and draw(st.booleans()),
        transpose_b=kind not in ("mxf4", "mxf4nvf4") and draw(st.booleans()),
    )
    if block:
        scale = draw(st.sampled_from(sorted(td.SCALE_CODES[kind])))
        k96 = kind != "mxf8f6f4" and draw(st.booleans())
        if k96:
            args.update(m=256, sparse=False)
        ids = sorted(td.scale_factor_ids(kind, scale, k96))
        args.update(scale_type=scale, k96=k96, scale_a_id=draw(st.sampled_from(ids)), scale_b_id=draw(st.sampled_from(ids)))
    else:
        args.update(
            dtype=draw(st.sampled_from(sorted(td.DTYPE_CODES[kind]))),
            max_shift=draw(st.sampled_from([0, 8, 16, 32])),
            saturate=kind == "i8" and draw(st.booleans()),
        )
        if args["sparse"] and kind in ("f16", "tf32"):
            args["sparsity_selector"] = draw(st.integers(0, 3))
    try:
        return InstrDescriptor(**args)
    except OperandError:
        assume(False)  # transposed 4/6-bit types, .f16 D with .bf16
        raise


mask_descriptors = st.builds(
    ZeroColumnMaskDescriptor,
    start_counts=st.tuples(*[st.integers(0, 255)] * 4),
    first_spans=st.tuples(*[st.integers(0, 1)] * 4),
    non_zero_mask=st.booleans(),
    skip_span=st.integers(0, 255),
    use_span=st.integers(0, 255),
    column_shift=st.integers(0, 63),
)


def _bits(table, names) -> int:
    return sum(((1 << table[n][1]) - 1) << table[n][0] for n in names)


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.1 The shared memory descriptor
# ---------------------------------------------------------------------------------------------


@given(smem_descriptors())
def test_smem_roundtrip_and_cutlass_bits(d):
    value = d.encode()
    assert 0 <= value < 1 << 64 and SmemDescriptor.decode(value) == d
    cutlass = {
        "start_address_": d.start_address >> 4,
        "leading_byte_offset_": d.leading_byte_offset >> 4,
        "stride_byte_offset_": d.stride_byte_offset >> 4,
        "version_": CUTLASS_VERSION,
        "base_offset_": d.base_offset,
        "lbo_mode_": int(d.leading_mode == "absolute"),
        "layout_type_": CUTLASS_LAYOUT_TYPE[d.swizzle],
    }
    assert value == td.pack(CUTLASS_SMEM, cutlass)


@given(
    st.integers(0, (1 << 64) - 1) | st.builds(lambda d, noise: d.encode() ^ noise, smem_descriptors(), st.sampled_from([0, 1 << 47, 1 << 61, 1 << 14, 1 << 55]))
)
def test_smem_every_value_decodes_or_is_refused(value):
    try:
        d = SmemDescriptor.decode(value)
    except OperandError as e:
        assert e.section in (td.SMEM, td.ABSOLUTE)
        return
    assert d.encode() == value


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        (dict(start_address=8), "16-byte aligned"),
        (dict(start_address=1 << 18), "14-bit field"),
        (dict(start_address=0, stride_byte_offset=24), "16-byte aligned"),
        (dict(start_address=0, base_offset=8), "3-bit"),
        (dict(start_address=0, swizzle="16B"), "no swizzling mode"),
        (dict(start_address=0, leading_mode="absolute", swizzle="64B"), "Only 128B swizzle"),
        (dict(start_address=0, leading_mode="absolute", swizzle="128B_base32B"), "Only 128B swizzle"),
        (dict(start_address=0, leading_mode="absolute", swizzle="128B", base_offset=1), "base offset must be 0"),
        (dict(start_address=True), "14-bit field"),
    ],
)
def test_smem_refusals(kwargs, reason):
    with pytest.raises(OperandError, match=reason):
        SmemDescriptor(**kwargs)


@pytest.mark.parametrize(
    "value, reason",
    [
        (SmemDescriptor(0).encode() | 3 << 61, "Values 3, 5 and 7 are invalid"),
        (SmemDescriptor(0).encode() | 5 << 61, "Values 3, 5 and 7 are invalid"),
        (SmemDescriptor(0).encode() | 7 << 61, "Values 3, 5 and 7 are invalid"),
        (0, "0b001"),  # the fixed version bits missing
        (SmemDescriptor(0).encode() | 1 << 48, "0b001"),
        (SmemDescriptor(0).encode() | 1 << 53, "fixed constant 0"),
        (SmemDescriptor(0).encode() | 1 << 14, "does not define"),
        (SmemDescriptor(0).encode() | 1 << 31, "does not define"),
        (1 << 64, "64-bit"),
        (-1, "64-bit"),
    ],
)
def test_smem_decode_refusals(value, reason):
    with pytest.raises(PtxSpecError, match=reason):
        SmemDescriptor.decode(value)


def test_smem_fixed_bits_and_codes():
    """Table 40: bits 46-48 "0b001"; swizzle codes 0, 1, 2, 4, 6 at bits 61-63; bit 52 the mode."""
    d = SmemDescriptor(start_address=0x10, leading_byte_offset=0x20, stride_byte_offset=0x30, base_offset=5)
    assert d.encode() == 1 | 2 << 16 | 3 << 32 | 1 << 46 | 5 << 49
    for name, code in [("none", 0), ("128B_base32B", 1), ("128B", 2), ("64B", 4), ("32B", 6)]:
        assert SmemDescriptor(0, swizzle=name).encode() >> 61 == code
    assert SmemDescriptor(0, leading_mode="absolute", swizzle="128B").encode() >> 52 & 1 == 1
    assert td.matrix_descriptor_encode(0x40000 | 0x10) == 0x1  # "(x & 0x3FFFF) >> 4"


#: §9.7.16.3.3's examples: (major, swizzle, element bytes, "Encoding of LBO in descriptor",
#: "Encoding of SBO in descriptor", LBO bytes, SBO bytes): "K-Major, no-swizzling and tf32 type:
#: LBO 64*sizeof(tf32), SBO 32*sizeof(tf32), (LBO) >> 4 = 16, (SBO) >> 4 = 8"; "K-Major, 32B
#: swizzling and tf32: LBO NA ... 1 (assumed), SBO 64*sizeof(tf32) ... 16"; "MN-Major,
#: no-swizzling and bf16: LBO 128*sizeof(bf16) ... 16, SBO 64*sizeof(bf16) ... 8"; "MN-Major, 32B
#: swizzling and bf16: 128*sizeof(bf16) ... 16, 256*sizeof(bf16) ... 32"; "MN-Major, 64B swizzling
#: and bf16: 256*sizeof(bf16) ... 32, 512*sizeof(bf16) ... 64".
LAYOUT_EXAMPLES = [
    ("K", "none", 4, 16, 8, 64 * 4, 32 * 4, "((8,2),(4,4)):((4,32),(1,64))"),
    ("K", "32B", 4, 1, 16, 16, 64 * 4, "((8,2),(4,4)):((8,64),(1,4))"),
    ("MN", "none", 2, 16, 8, 128 * 2, 64 * 2, "((8,1,2),(8,2)):((1,8,64),(8,128))"),
    ("MN", "32B", 2, 16, 32, 128 * 2, 256 * 2, "((8,2,2),(8,2)):((1,8,128),(16,256))"),
    ("MN", "64B", 2, 32, 64, 256 * 2, 512 * 2, "((8,4,2),(8,2)):((1,8,256),(32,512))"),
]


def _cute(layout: str):
    """Parse ``(shape):(stride)`` of two modes into lists of (extent, stride) per mode."""
    shape, stride = layout.split(":")
    modes = re.findall(r"\(([^()]*)\)", shape[1:-1]), re.findall(r"\(([^()]*)\)", stride[1:-1])
    return [list(zip(map(int, s.split(",")), map(int, d.split(",")))) for s, d in zip(*modes)]


def _cute_offsets(modes):
    """(index of mode 0, index of mode 1, element offset) of every coordinate of a CuTe layout."""
    out = []
    for c0 in np.ndindex(*[e for e, _ in modes[0]]):
        for c1 in np.ndindex(*[e for e, _ in modes[1]]):
            i = j = 0
            scale = 1
            for (e, _), c in zip(modes[0], c0):
                i, scale = i + c * scale, scale * e
            scale = 1
            for (e, _), c in zip(modes[1], c1):
                j, scale = j + c * scale, scale * e
            offset = sum(c * s for (_, s), c in zip(modes[0], c0)) + sum(c * s for (_, s), c in zip(modes[1], c1))
            out.append((i, j, offset))
    return out


@pytest.mark.parametrize("major, swizzle, size, lbo_code, sbo_code, lbo, sbo, exact", LAYOUT_EXAMPLES)
def test_canonical_layout_examples(major, swizzle, size, lbo_code, sbo_code, lbo, sbo, exact):
    """The encodings and the "Exact layout" of §9.7.16.3.3's examples, through the one layout
    mechanism (wgmma_layout's canonical_offset / swizzle_address)."""
    d = SmemDescriptor(start_address=0, leading_byte_offset=lbo, stride_byte_offset=sbo, swizzle=swizzle)
    fields = td.unpack(td.SMEM_FIELDS, d.encode())
    assert (fields["leading_byte_offset"], fields["stride_byte_offset"]) == (lbo_code, sbo_code)
    mask = {"none": 0, "32B": 1, "64B": 3}[swizzle]
    for i, j, offset in _cute_offsets(_cute(exact)):
        mn, k = (i, j)  # mode 0 is MN, mode 1 is K in both majors' layouts
        if major == "K" and swizzle != "none" and k * size >= 32:
            continue  # wgmma_layout's note: K beyond one swizzle row wraps onto the next row
        byte = offset * size
        expected = byte ^ (((byte >> 7) & mask) << 4)  # Swizzle<B,4,3> on byte addresses
        address, bit = td.element_address(d, 8 * size, mn, k, major)
        assert (int(address), int(bit)) == (expected, 0), (mn, k)


def test_element_address_is_wgmma_mechanism():
    """Same addresses as wgmma's descriptor for the modes both have (one mechanism)."""
    for swizzle in ("none", "32B", "64B", "128B"):
        d = SmemDescriptor(start_address=0x400, leading_byte_offset=0x100, stride_byte_offset=0x400, base_offset=0, swizzle=swizzle)
        w = wl.MatrixDescriptor(start_address=0x400, leading_byte_offset=0x100, stride_byte_offset=0x400, swizzle=swizzle)
        mn, k = np.meshgrid(np.arange(64), np.arange(8), indexing="ij")
        for major in ("K", "MN"):
            ours = td.element_address(d, 16, mn, k, major)
            theirs = wl.element_address(w, "f16", mn, k, major)
            assert np.array_equal(ours[0], theirs[0])


def test_element_address_refusals():
    # 128B_base32B: MN-major 32-bit only (Table 53 "M/N | 8x4", K "–"; Table 52); tests/test_tcgen05_swizzle.py.
    with pytest.raises(OperandError, match="Major-K"):
        td.element_address(SmemDescriptor(0, swizzle="128B_base32B"), 32, 0, 0, "K")
    with pytest.raises(OperandError, match="All except"):
        td.element_address(SmemDescriptor(0, swizzle="128B_base32B"), 16, 0, 0, "MN")
    assert tuple(map(int, td.element_address(SmemDescriptor(0, swizzle="128B_base32B"), 32, 8, 1, "MN"))) == (128 + 0, 0)
    with pytest.raises(OperandError, match="absolute"):
        td.element_address(SmemDescriptor(0, leading_mode="absolute", swizzle="128B"), 8, 0, 0, "K")
    for bits in (6, 12):
        with pytest.raises(OperandError, match=f"{bits}-bit"):
            td.element_address(SmemDescriptor(0), bits, 0, 0, "K")
    # .e2m1 of mxf4: two per byte, K-major, no swizzle: element k = 3 of row 0 is byte 1, bit 4.
    assert tuple(map(int, td.element_address(SmemDescriptor(0x100), 4, 0, 3, "K"))) == (0x101, 4)


def test_base_offset_rule_is_shared():
    """Table 41 / "base offset = (pattern start addr >> 0x7) & 0x7": wgmma's function."""
    assert td.base_offset_for is wl.base_offset_for
    assert td.base_offset_for(0x400, "128B") == 0 and td.base_offset_for(0x480, "128B") == 1


def test_smem_target():
    """§9.7.16.4.1.1: "The byte address mode for the leading dimension stride is supported on sm_103a"."""
    absolute = SmemDescriptor(0, leading_mode="absolute", swizzle="128B")
    td.check_target(absolute, "sm_103a")
    td.check_target(SmemDescriptor(0), "sm_100a")
    with pytest.raises(OperandError, match="sm_103a"):
        td.check_target(absolute, "sm_100a")


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.2 The instruction descriptor
# ---------------------------------------------------------------------------------------------


def _cutlass_instr(d: InstrDescriptor) -> tuple[dict, dict]:
    """The CUTLASS table and field values of ``d`` (CUTLASS's builders: make_instr_desc sets
    "m_dim_ = (M >> 4)", "n_dim_ = (N >> 3)", the format enums, sparse_id2_)."""
    common = {
        "sparse_flag_": int(d.sparse),
        "a_format_": CUTLASS_FORMAT[d.kind][d.atype],
        "b_format_": CUTLASS_FORMAT[d.kind][d.btype],
        "a_negate_": int(d.negate_a),
        "b_negate_": int(d.negate_b),
        "a_major_": int(d.transpose_a),
        "b_major_": int(d.transpose_b),
        "n_dim_": d.n >> 3,
        "m_dim_": d.m >> 4,
    }
    if d.kind in td.BLOCK_SCALED:
        return CUTLASS_BLOCK_SCALED, common | {
            "sparse_id2_": 0,
            "b_sf_id_": d.scale_b_id,
            "scale_format_": CUTLASS_SCALE_FORMAT[d.scale_type],
            "a_sf_id_": d.scale_a_id,
            "k_size_": int(d.k96),
        }
    return CUTLASS_INSTR, common | {
        "sparse_id2_": d.sparsity_selector,
        "saturate_": int(d.saturate),
        "c_format_": CUTLASS_C_FORMAT[d.dtype],
        "max_shift_": CUTLASS_MAX_SHIFT[d.max_shift],
    }


@given(instr_descriptors())
def test_instr_roundtrip_and_cutlass_bits(d):
    value = d.encode()
    assert 0 <= value < 1 << 32 and InstrDescriptor.decode(value, d.kind) == d
    table, fields = _cutlass_instr(d)
    assert value == td.pack(table, fields)


@given(st.sampled_from(td.KINDS), st.integers(0, (1 << 32) - 1))
def test_instr_every_value_decodes_or_is_refused(kind, value):
    try:
        d = InstrDescriptor.decode(value, kind)
    except OperandError as e:
        assert e.section and e.section.startswith(("9.7.16.4.2", "9.7.16.2.1", "9.7.16.10"))
        return
    assert d.encode() == value and d.kind == kind


@given(st.data())
def test_instr_one_bit_flips(data):
    """A descriptor with one bit flipped is decoded to a different descriptor or refused."""
    d = data.draw(instr_descriptors())
    bit = data.draw(st.integers(0, 31))
    try:
        other = InstrDescriptor.decode(d.encode() ^ (1 << bit), d.kind)
    except OperandError:
        return
    assert other != d and other.encode() == d.encode() ^ (1 << bit)


def test_instr_example_values():
    """Hand-computed from Table 42: .kind::f16, D .f32, A/B .bf16, M = 128, N = 256: dtype 1 << 4,
    atype 1 << 7, btype 1 << 10, N >> 3 = 32 << 17, M >> 4 = 8 << 24."""
    d = InstrDescriptor(kind="f16", m=128, n=256, atype="bf16", btype="bf16", dtype="f32")
    assert d.encode() == 1 << 4 | 1 << 7 | 1 << 10 | 32 << 17 | 8 << 24 == 0x08400490
    # Table 44: .kind::mxf4nvf4, E2M1 = 1, UE4M3 = 0, M = 256 (M >> 7 = 2 at 27), N = 128, K = 96.
    e = InstrDescriptor(kind="mxf4nvf4", m=256, n=128, atype="e2m1", btype="e2m1", scale_type="ue4m3", k96=True, scale_a_id=2)
    assert e.encode() == 1 << 7 | 1 << 10 | 16 << 17 | 2 << 27 | 2 << 29 | 1 << 31
    assert (d.k, e.k) == (16, 96)
    assert InstrDescriptor(kind="i8", m=64, n=48, atype="s8", btype="u8", dtype="s32", sparse=True).k == 64


def _instr(**kw):
    base = dict(kind="f16", m=128, n=128, atype="f16", btype="f16", dtype="f32")
    return InstrDescriptor(**(base | kw))


def _mx(kind="mxf4", **kw):
    types = "e4m3" if kind == "mxf8f6f4" else "e2m1"
    return InstrDescriptor(**(dict(kind=kind, m=128, n=128, atype=types, btype=types, scale_type="ue8m0") | kw))


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda: _instr(kind="f32"), "no .kind::f32"),
        (lambda: _instr(atype="tf32"), "no A type .tf32"),
        (lambda: _instr(dtype="s32"), "no D type .s32"),
        (lambda: _instr(dtype="f16", atype="bf16", btype="bf16"), "Table 39"),
        (lambda: _instr(m=48), "M = 48"),
        (lambda: _instr(n=12), "N = 12"),
        (lambda: _instr(kind="i8", atype="s8", btype="s8", dtype="s32", n=40), "N = 40"),
        (lambda: _instr(sparsity_selector=1), "if Sparsity is enabled"),
        (lambda: _instr(sparsity_selector=4, sparse=True), "0-3"),
        (lambda: _instr(kind="f8f6f4", atype="e4m3", btype="e4m3", sparse=True, sparsity_selector=1), "must be 0 for .kind::i8"),
        (lambda: _mx(sparse=True, sparsity_selector=1), "Reserved"),
        (lambda: _instr(saturate=True), "Saturate for integer types"),
        (lambda: _instr(kind="i8", atype="s8", btype="s8", dtype="s32", negate_a=True), "No Negate"),
        (lambda: _mx(transpose_b=True), "No Transpose"),
        (lambda: _instr(kind="f8f6f4", atype="e2m1", btype="e4m3", transpose_a=True), "4-bit and 6-bit"),
        (lambda: _mx("mxf8f6f4", btype="e3m2", transpose_b=True), "4-bit and 6-bit"),
        (lambda: _instr(max_shift=4), "maximum shift 4"),
        (lambda: _mx(max_shift=8), "no such field"),
        (lambda: _mx(scale_type="ue4m3"), "scale matrix type"),
        (lambda: _mx("mxf8f6f4", scale_type=None), "scale matrix type"),
        (lambda: _mx(m=64), "M = 64"),
        (lambda: _mx(k96=True), "256xNxK1"),
        (lambda: _mx(m=256, k96=True, sparse=True), "Dense K=96"),
        (lambda: _mx("mxf8f6f4", m=256, k96=True), "Reserved"),
        (lambda: _mx(scale_a_id=1), "scale factor A ID 1"),
        (lambda: _mx("mxf4nvf4", scale_type="ue4m3", scale_b_id=2), "scale factor B ID 2"),
        (lambda: _mx("mxf4nvf4", m=256, k96=True, scale_type="ue4m3", scale_b_id=3), "scale factor B ID 3"),
        (lambda: _instr(scale_a_id=1), "no scale fields"),
        (lambda: _instr(k96=True), "K Dimension"),
        (lambda: _instr(sparse=1), "bool"),
        (lambda: _instr(m=128.0), "integer"),
    ],
)
def test_instr_refusals(make, reason):
    with pytest.raises(OperandError, match=re.escape(reason)):
        make()


def test_instr_accepts():
    """What the manual allows and a reader might doubt (see KNOWN_MEANING): a sparse mxf4, M = 32
    (.ws), the K = 96 scale IDs 0-3 of block32, mxf4nvf4 with .ue8m0, mxf8f6f4 IDs 0-3."""
    assert _mx(sparse=True).k == 128
    assert _instr(m=32).encode() >> 24 & 0x1F == 2
    assert _mx(m=256, k96=True, scale_a_id=3, scale_b_id=1).k == 96
    _mx("mxf4nvf4", scale_b_id=2)
    _mx("mxf8f6f4", scale_a_id=3, scale_b_id=1)
    _instr(kind="tf32", atype="tf32", btype="tf32", transpose_a=True, sparse=True, sparsity_selector=3, max_shift=32)


@pytest.mark.parametrize(
    "kind, bit, reason",
    [
        ("f16", 6, "reserved"),
        ("f16", 23, "reserved"),
        ("f16", 29, "reserved"),
        ("mxf8f6f4", 0, "reserved"),
        ("mxf8f6f4", 3, "reserved"),
        ("mxf8f6f4", 25, "reserved"),
        ("mxf8f6f4", 31, "reserved"),
        ("mxf4", 12, "reserved"),
        ("mxf4nvf4", 1, "reserved"),
    ],
)
def test_instr_reserved_bits(kind, bit, reason):
    base = (_mx(kind) if kind in td.BLOCK_SCALED else _instr(kind=kind)).encode()
    with pytest.raises(OperandError, match=reason):
        InstrDescriptor.decode(base | 1 << bit, kind)


def test_instr_codes_not_in_table():
    with pytest.raises(OperandError, match="atype code 2"):
        InstrDescriptor.decode(_instr(kind="f8f6f4", atype="e4m3", btype="e4m3").encode() | 2 << 7, "f8f6f4")
    with pytest.raises(OperandError, match="dtype code 3"):
        InstrDescriptor.decode(_instr().encode() | 3 << 4, "f16")
    with pytest.raises(OperandError, match="32-bit"):
        InstrDescriptor.decode(1 << 32, "f16")
    assert InstrDescriptor.decode(_instr().encode(), ".kind::f16") == _instr()


def test_instr_target_and_operands():
    """§9.7.16.2.1.1 "K = 96 is only supported for target architecture sm_103a"; §9.7.16.3.1.2.1
    absolute LBO needs transpose bits 0; §9.7.16.10.1 tf32 transposes only with 128B_base32B,
    the other kinds never with it."""
    k96 = _mx(m=256, k96=True)
    td.check_target(k96, "sm_103a")
    with pytest.raises(OperandError, match="sm_103a"):
        td.check_target(k96, "sm_100a")
    absolute = SmemDescriptor(0, leading_mode="absolute", swizzle="128B")
    td.check_operands(_instr(), absolute, absolute)
    with pytest.raises(OperandError, match="must be 0"):
        td.check_operands(_instr(transpose_b=True), absolute, None)
    tf32 = _instr(kind="tf32", atype="tf32", btype="tf32", transpose_a=True)
    td.check_operands(tf32, SmemDescriptor(0, swizzle="128B_base32B"), SmemDescriptor(0, swizzle="none"))
    with pytest.raises(OperandError, match="32B swizzle-atomicity"):
        td.check_operands(tf32, SmemDescriptor(0, swizzle="128B"), None)
    with pytest.raises(OperandError, match="not supported"):
        td.check_operands(_instr(transpose_b=True), None, SmemDescriptor(0, swizzle="128B_base32B"))


# ---------------------------------------------------------------------------------------------
# §9.7.16.4.3 The zero-column mask descriptor
# ---------------------------------------------------------------------------------------------


@given(mask_descriptors)
def test_mask_roundtrip_and_cutlass_bits(d):
    value = d.encode()
    assert ZeroColumnMaskDescriptor.decode(value) == d
    cutlass = {f"start_count_[{i}]": c for i, c in enumerate(d.start_counts)} | {
        "first_span_": sum(s << i for i, s in enumerate(d.first_spans)),
        "nzm_": int(d.non_zero_mask),
        "skip_span_": d.skip_span,
        "use_span_": d.use_span,
        "shift_": d.column_shift,
    }
    assert value == td.pack(CUTLASS_MASK, cutlass)


@given(st.integers(0, (1 << 64) - 1))
def test_mask_every_value_decodes_or_is_refused(value):
    try:
        d = ZeroColumnMaskDescriptor.decode(value)
    except OperandError as e:
        assert e.section == td.MASK
        return
    assert d.encode() == value


def _example(digits: str) -> tuple[int, int]:
    """An example's "0b … 111 0000 111" as (value, number of bits shown)."""
    bits = digits.replace("0b", "").replace("…", "").replace(" ", "")
    return int(bits, 2), len(bits)


#: §9.7.16.4.3's examples: (M, Start count {sc0..}, First span {fs0..}, Non-Zero Mask, Skip Span,
#: Use Span, Shift, the output masks as printed).
MASK_EXAMPLES = [
    (128, (0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0, ["0b … 111 0000 111 0000"]),  # Example 2
    (64, (0, 0, 0, 0), (1, 0, 0, 0), 1, 2, 3, 0, ["0b … 111 0000 111 0000 111", "0b … 0000 111 0000 111 0000"]),  # Example 3
    (
        32,
        (0, 1, 2, 1),
        (1, 1, 0, 0),
        1,
        2,
        3,
        2,  # Example 4 ("{sc3, sc2, sc1, sc0} = {1, 2, 1, 0}", "{fs3..fs0} = {0, 0, 1, 1}")
        ["0b … 0000 111 0000 111", "0b … 0000 111 0000 11", "0b … 111 0000 111 00", "0b … 111 0000 111 000"],
    ),
]


@pytest.mark.parametrize("m, sc, fs, nzm, skip, use, shift, outputs", MASK_EXAMPLES)
@pytest.mark.parametrize("n", [64, 128, 256])
def test_mask_examples(m, sc, fs, nzm, skip, use, shift, outputs, n):
    d = ZeroColumnMaskDescriptor(start_counts=sc, first_spans=fs, non_zero_mask=bool(nzm), skip_span=skip, use_span=use, column_shift=shift)
    masks = td.sub_masks(d, m, n)
    assert len(masks) == len(outputs)
    for mask, printed in zip(masks, outputs):
        value, shown = _example(printed)
        assert mask & ((1 << shown) - 1) == value
    width = n // len(masks)
    assert td.zero_column_mask(d, m, n) == sum(mask << (i * width) for i, mask in enumerate(masks))


def test_mask_prose_reading_contradicts_example_2():
    """The prose ("Skip Span: (Count of consecutive columns where B matrix is used) - 1") would
    give Example 2 runs of 3 used (0) and 4 zeroed (1) columns: 0b...1111 000 1111 000, not the
    printed 0b...111 0000 111 0000. We follow the example (and CUTLASS's MaskAndShiftB)."""
    used, zeroed = 2 + 1, 3 + 1  # the prose's reading of Skip Span 2, Use Span 3
    prose = sum(1 << j for j in range(14) if j % (used + zeroed) >= used)
    value, shown = _example("0b … 111 0000 111 0000")
    assert prose & ((1 << shown) - 1) != value
    d = ZeroColumnMaskDescriptor(non_zero_mask=True, skip_span=2, use_span=3)
    assert td.sub_masks(d, 128, 16)[0] & ((1 << shown) - 1) == value


def test_mask_example_1():
    """Example 1: "As Non-Zero Mask field is 0, the mask is 0x0" (Skip Span 4, Use Span 3)."""
    d = ZeroColumnMaskDescriptor(non_zero_mask=False, skip_span=4, use_span=3)
    assert td.zero_column_mask(d, 128, 256) == 0 and td.sub_masks(d, 32, 64) == (0, 0, 0, 0)


def test_mask_example_4_shift():
    """Example 4: "If N = 128 then B Matrix with columns from 2 to 129 will be used ... due to the
    shift of 2"."""
    d = ZeroColumnMaskDescriptor(non_zero_mask=True, column_shift=2)
    assert list(td.b_column(d, np.arange(128), 32)[[0, -1]]) == [2, 129]
    assert td.b_column(d, 5) == 7


@given(mask_descriptors, st.sampled_from([(128, 1), (64, 2), (32, 4)]), st.integers(1, 64))
def test_mask_runs(d, m_parts, width):
    """Our reading as a property: a sub-mask is the periodic pattern of Use Span + 1 zeros (B
    used) and Skip Span + 1 ones, starting with a run of First Span, Start Count bits dropped."""
    m, parts = m_parts
    assume(d.column_shift <= (16 if m == 32 else 32))
    masks = td.sub_masks(d, m, width * parts)
    for i, mask in enumerate(masks):
        if not d.non_zero_mask:
            assert mask == 0
            continue
        first = d.first_spans[i]
        runs = [d.use_span + 1, d.skip_span + 1]
        pattern = ([first] * runs[first] + [1 - first] * runs[1 - first]) * (2 + (width + 255) // (sum(runs)))
        bits = pattern[d.start_counts[i] % sum(runs) :][:width]
        assert mask == sum(b << j for j, b in enumerate(bits))


@pytest.mark.parametrize(
    "call, reason",
    [
        (lambda: td.sub_masks(ZeroColumnMaskDescriptor(), 256, 256), "M = 256"),
        (lambda: td.sub_masks(ZeroColumnMaskDescriptor(), 32, 66), "N = 66"),
        (lambda: td.sub_masks(ZeroColumnMaskDescriptor(column_shift=17), 32, 64), "Max shift amount = 16"),
        (lambda: td.sub_masks(ZeroColumnMaskDescriptor(column_shift=33), 64, 64), "Max shift amount"),
        (lambda: ZeroColumnMaskDescriptor(skip_span=256), "8-bit"),
        (lambda: ZeroColumnMaskDescriptor(start_counts=(0, 0, 0)), "four 8-bit"),
        (lambda: ZeroColumnMaskDescriptor(first_spans=(0, 2, 0, 0)), "four 1-bit"),
        (lambda: ZeroColumnMaskDescriptor.decode(1 << 37), "reserved"),
        (lambda: ZeroColumnMaskDescriptor.decode(1 << 62), "reserved"),
    ],
)
def test_mask_refusals(call, reason):
    with pytest.raises(OperandError, match=reason):
        call()


# ---------------------------------------------------------------------------------------------
# The CUTLASS tables against ptxspec's: every difference is KNOWN, every KNOWN is a difference
# ---------------------------------------------------------------------------------------------

PAIRS = [
    ("SmemDescriptor", "Table 40", CUTLASS_SMEM, SMEM_MAP, td.SMEM_FIELDS),
    ("InstrDescriptor", "Table 42", CUTLASS_INSTR, INSTR_MAP, td.TABLE_42),
    ("InstrDescriptorBlockScaled", "Table 43", CUTLASS_BLOCK_SCALED, BLOCK_MAP | {"k_size_": ("reserved_31",)}, td.TABLE_43),
    ("InstrDescriptorBlockScaled", "Table 44", CUTLASS_BLOCK_SCALED, BLOCK_MAP | {"k_size_": ("k96",)}, td.TABLE_44),
    ("MaskAndShiftB", "Table 45", CUTLASS_MASK, MASK_MAP, td.MASK_FIELDS),
]


def test_known_bit_differences_are_real():
    found = set()
    for struct, table, cutlass, mapping, ours in PAIRS:
        assert set(mapping) == set(cutlass)
        for field, names in mapping.items():
            # a different bit range, or a CUTLASS field where the manual's table says "Reserved"
            if _bits(cutlass, [field]) != _bits(ours, names) or any(n.startswith("reserved") for n in names):
                found.add((struct, field, table))
    assert found == set(KNOWN)


def test_known_differences_agree_on_allowed_values():
    """Each KNOWN bit difference gives the same register on what the manual allows (the property
    tests above check it on random descriptors; here the fixed values)."""
    for m in (128, 256):
        assert (m >> 4) << 24 == (m >> 7) << 27
    assert CUTLASS_VERSION << 46 == td.VERSION << 46
    assert CUTLASS_FORMAT["mxf4"]["e2m1"] < 1 << 2
    assert set(KNOWN_MEANING) == {"nzm_", "skip_span_/use_span_", "sparse_flag_", "m_dim_"}


# ---------------------------------------------------------------------------------------------
# Table 39 / Table 50: the shape against the form's .cta_group and .ws
# ---------------------------------------------------------------------------------------------


def test_shape_table_union_is_the_descriptor_rule():
    """The constructor's M / N rule is the union of Table 39's rows of the kind."""
    for kind in td.KINDS:
        rows = td.SHAPE_TABLE[kind].values()
        assert frozenset().union(*(m for m, _ in rows)) == td.M_VALUES[kind]
        assert frozenset().union(*(n for _, n in rows)) == td.N_VALUES[kind]


@pytest.mark.parametrize(
    "make, cta_group, ws, reason",
    [
        (lambda: _instr(m=256), 1, False, "M = 256"),
        (lambda: _instr(m=64, n=24), 2, False, "M = 64"),
        (lambda: _instr(n=24), 2, False, "N = 24"),
        (lambda: _instr(m=32, n=64), 2, True, "Invalid"),
        (lambda: _instr(m=32, n=256, sparse=True), 1, True, "N = 256"),
        (lambda: _instr(kind="i8", atype="s8", btype="s8", dtype="s32", n=48), 2, False, "N = 48"),
        (lambda: _mx(m=128, sparse=True), 2, False, "M = 128"),
        (lambda: _mx(m=128), 1, True, "Invalid"),
        (lambda: _mx(m=256, k96=True), 1, False, "M = 256"),
        (lambda: _instr(kind="f8f6f4", atype="e4m3", btype="e4m3", n=24, transpose_b=True), 1, False, "Table 50"),
        (lambda: _instr(kind="i8", atype="s8", btype="u8", dtype="s32", n=48, m=128, transpose_b=True), 1, False, None),
        (lambda: _instr(kind="i8", atype="s8", btype="u8", dtype="s32", n=48, m=128, transpose_b=True), 2, False, "N = 48"),
        (lambda: _instr(max_shift=8), 1, False, "without .ws"),
        (lambda: _instr(m=32, n=64, max_shift=8), 1, True, None),
        (lambda: _instr(n=24, transpose_b=True), 1, False, None),  # 16-bit B: Table 50 is for 8-bit
        (lambda: _mx(m=256, k96=True), 2, False, None),
        (lambda: _instr(), 3, False, "cta_group"),
    ],
)
def test_check_shape(make, cta_group, ws, reason):
    d = make()
    if reason is None:
        td.check_shape(d, cta_group=cta_group, ws=ws)
    else:
        with pytest.raises(OperandError, match=re.escape(reason)):
            td.check_shape(d, cta_group=cta_group, ws=ws)
