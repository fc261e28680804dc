"""The wgmma campaign: do our shared-memory layouts, fragments and numerics of
``wgmma.mma_async{.sp}`` (§9.7.15.5.2, §9.7.15.6.3) reproduce sm_90a silicon?

Commands (the one command line, :mod:`ptxspec.conformance.silicon.__main__`)::

    python -m ptxspec.conformance.silicon wgmma prepare BUNDLE [--round ROUND]   # here (ptxas)
    python3 BUNDLE/wgmma_device.py selfcheck BUNDLE OUT                         # GPU: the quick check
    python3 BUNDLE/wgmma_device.py run BUNDLE OUT                               # GPU: the campaign
    python -m ptxspec.conformance.silicon wgmma verify DIR [--round ROUND] [NAME ...]       # replay
    python -m ptxspec.conformance.silicon wgmma fit DIR [--round ROUND] [NAME ...]          # datapath search
    python -m ptxspec.conformance.silicon wgmma spec-check DIR [--round ROUND] [NAME ...]   # manual's sets
    python -m ptxspec.conformance.silicon wgmma separate DIR [--round ROUND] NAME ...       # one-part changes
    python -m ptxspec.conformance.silicon wgmma digests DIR                                 # SHA-256 per kernel

The campaign is three rounds (:data:`ROUNDS`, named by the stem of their files; a round's
``part`` is what its bundle plan and the device script call it):

* ``wgmma`` (part ``""``, :data:`COMBINATIONS`): every instance's D stored;
* ``wgmma-more`` (part ``more``, :data:`MORE_COMBINATIONS`): every sm_90a combination ``wgmma``
  did not record. To keep the repository small it stores D in full only for the designed probes and
  the random instances at N <= 64; every random instance at N = 256 is recorded as ONE 64-bit
  digest of its D registers, computed on the device with :mod:`exhaustive_device`'s scheme
  (:func:`wgmma_device.instance_digests`); the replay digests our D the same way
  (:func:`digest_mismatches`), so a mismatch names the instance (block), not the element;
* ``wgmma-pruned`` (part ``pruned``, :data:`PRUNED_COMBINATIONS`, :func:`pruned_matrices`):
  infinities, NaNs and the largest finite numbers in B where a sparse A is pruned, every instance
  stored.

What is tested is the whole chain of the model, not only the arithmetic: each recorded instance is
a shared-memory byte image, two matrix descriptors (start address relative to the image), the
threads' accumulator registers (A's registers for the register-A forms, the metadata for .sp) and
scale-d; the host reads A and B out of the image with OUR descriptor and swizzle model
(:func:`ptxspec.semantics.wgmma_layout.read_matrix`), C out of the registers with our accumulator
fragment, computes D and puts it back into registers with the same fragment. A wrong layout
reading (a swizzle, LBO/SBO, a fragment, the metadata) shows as integer mismatches, where the
arithmetic is exact.

Instances of one kernel (one form and N):

* designed probes (stored in the bundle and in the recording): images built with
  :func:`~ptxspec.semantics.wgmma_layout.write_matrix` from matrices holding the dot products of
  :func:`ptxspec.conformance.silicon.mma_campaign.designs` (a fake ``m16n8k{K}`` combination of the
  same types): design ``s`` in row ``r = s mod 32`` of A and column ``r`` of B with ``C[r, r]``, and
  its mirror image (A's row and C negated) in row ``r + 32``; for ``.sp`` the design's K/2 pairs
  sit on the positions a fixed 2:4 (1:2 for .tf32) pattern keeps;
* random instances (regenerated from the seed here and on the device, never stored): A's and B's
  shared-memory regions filled element after element with random elements of their types
  (:func:`wgmma_device.random_instance`; classes bits/unit/spread/short), random accumulators, A
  registers, valid random metadata, scale-d false in every fifth instance.

Each instance takes its descriptors from :func:`layout_plan`: the swizzle modes none/32B/64B/128B
for A and B, packed and padded LBO/SBO, start addresses advanced by 32-byte K blocks inside a
swizzle row, both majors where the form allows them (MN-major: .f16/.bf16 with imm-trans).
"""

from __future__ import annotations

import functools
import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ptxspec.conformance.silicon import mma_campaign, wgmma_device
from ptxspec.conformance.silicon.campaign import HEADER as _HEADER
from ptxspec.conformance.silicon.campaign import assemble_each, assemble_module, ptxas_version, save_arrays, split_files, write_json
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.semantics.mma_vectorised import vectorisable
from ptxspec.semantics.sparse import SparseOperand, row_problems, selected_b
from ptxspec.spec import wgmma as wg
from ptxspec.spec.types import FORMATS

#: Dot products per main combination at least (10^5): random instances at
#: N = 256 (16384 each) are added to the designed probes and the other N until there are this many.
DOTS = 100_000
#: Random instances of the variant combinations (imm-trans, imm-scale, sparsity selector 1, ...).
RANDOM_VARIANT = 2
#: Designed-probe instances per floating-point combination at most (32 designs each).
PROBE_INSTANCES = 16
#: Other N (each main combination records two of them, in turn, RANDOM_OTHER_N instances each).
OTHER_N = (8, 16, 24, 64, 128, 200)
RANDOM_OTHER_N = 3
#: Raw output bytes per file at most (three files at most).
FILE_BYTES = 7 << 20
PROBE_N = 32
SWIZZLES = ("none", "32B", "64B", "128B")


@attrs.frozen
class Combination:
    """One wgmma form to record (the N is chosen per kernel)."""

    atype: str
    btype: str
    dtype: str
    a_registers: bool = False
    sparse: bool = False
    sp_sel: int = 0
    trans_a: int = 0
    trans_b: int = 0
    scale_a: int = 1
    scale_b: int = 1
    satfinite: bool = False
    main: bool = True  # main: RANDOM instances, other N, probes; else a variant: RANDOM_VARIANT
    tag: str = ""  # appended to the name (wgmma-more: a form that wgmma recorded as a variant)
    scale_probe: bool = False  # wgmma-more: only the designed scale-d-false instances (:func:`scale_d_matrices`)
    pruned: bool = False  # wgmma-pruned: only the designed pruned-position instances (:func:`pruned_matrices`)

    @property
    def k(self) -> int:
        dense = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}[self.atype]
        return 2 * dense if self.sparse else dense

    @property
    def integer(self) -> bool:
        return self.dtype == "s32"

    @property
    def name(self) -> str:
        parts = [self.dtype, self.atype, self.btype]
        if self.sparse:
            parts.insert(0, f"sp{self.sp_sel}")
        if self.a_registers:
            parts.append("regA")
        if self.trans_a or self.trans_b:
            parts.append(f"t{self.trans_a}{self.trans_b}")
        if self.scale_a != 1 or self.scale_b != 1:
            parts.append(f"s{'n' if self.scale_a < 0 else 'p'}{'n' if self.scale_b < 0 else 'p'}")
        if self.satfinite:
            parts.append("sat")
        if self.scale_probe:
            parts.append("scaled")
        if self.pruned:
            parts.append("pruned")
        if self.tag:
            parts.append(self.tag)
        return "-".join(parts)

    def opcode(self, n: int) -> str:
        sp = ".sp" if self.sparse else ""
        sat = ".satfinite" if self.satfinite else ""
        tail = ".and.popc" if self.atype == "b1" else ""
        return f"wgmma.mma_async{sp}.sync.aligned.m64n{n}k{self.k}{sat}.{self.dtype}.{self.atype}.{self.btype}{tail}"

    def immediates(self) -> str:
        """The immediate operands after scale-d, as the form's syntax line lists them."""
        if self.integer:
            return ""
        out = f", {self.scale_a}, {self.scale_b}"
        if self.atype in ("f16", "bf16"):
            out += f", {self.trans_b}" if self.a_registers else f", {self.trans_a}, {self.trans_b}"
        return out

    def ns(self, index: int) -> tuple[int, ...]:
        if not self.main:
            return (256,)
        others = tuple(n if n in wg.N_INTEGER or not self.integer else 208 for n in OTHER_N)
        return (256, others[(2 * index) % 6], others[(2 * index + 1) % 6])


C = Combination
COMBINATIONS: tuple[Combination, ...] = (
    C("f16", "f16", "f16"),
    C("f16", "f16", "f32"),
    C("f16", "f16", "f32", a_registers=True),
    C("bf16", "bf16", "f32"),
    C("tf32", "tf32", "f32"),
    *(C(a, b, "f32") for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")),
    C("e4m3", "e4m3", "f16"),
    C("e5m2", "e4m3", "f16"),
    C("s8", "s8", "s32"),
    C("u8", "s8", "s32"),
    C("s8", "u8", "s32"),
    C("b1", "b1", "s32"),
    C("f16", "f16", "f32", sparse=True),
    C("bf16", "bf16", "f32", sparse=True),
    C("tf32", "tf32", "f32", sparse=True),
    C("e4m3", "e4m3", "f32", sparse=True),
    C("s8", "s8", "s32", sparse=True),
    # variants: immediates that need a kernel of their own
    C("s8", "s8", "s32", satfinite=True, main=False),
    C("f16", "f16", "f32", trans_a=1, main=False),
    C("f16", "f16", "f32", trans_b=1, main=False),
    C("f16", "f16", "f32", trans_a=1, trans_b=1, main=False),
    C("bf16", "bf16", "f32", trans_a=1, trans_b=1, main=False),
    C("f16", "f16", "f16", trans_b=1, a_registers=True, main=False),
    C("f16", "f16", "f32", scale_a=-1, scale_b=1, main=False),
    C("e4m3", "e5m2", "f32", scale_a=1, scale_b=-1, main=False),
    C("f16", "f16", "f32", sparse=True, sp_sel=1, main=False),
    C("bf16", "bf16", "f32", sparse=True, sp_sel=1, main=False),
    C("tf32", "tf32", "f32", sparse=True, sp_sel=1, main=False),
)


#: The round ``wgmma-more`` (the part ``more``; files ``wgmma-more-*.npz``, ``meta-wgmma-more.json``):
#: every sm_90a combination ``wgmma`` did not record. Random D of N = 256 is kept as one digest per instance
#: (:mod:`exhaustive_device`'s scheme), D of the designed probes and of the random instances at
#: the small other N in full.
_FP8S = ("e4m3", "e5m2")
_I8 = ("s8", "u8")
MORE_COMBINATIONS: tuple[Combination, ...] = (
    C("e4m3", "e5m2", "f16"),
    C("e5m2", "e5m2", "f16"),
    C("u8", "u8", "s32"),
    *(C(a, b, "s32", satfinite=True, tag="x" if a == b == "s8" else "") for a in _I8 for b in _I8),
    C("bf16", "bf16", "f32", a_registers=True),
    C("tf32", "tf32", "f32", a_registers=True),
    *(C(a, b, "f32", a_registers=True) for a in _FP8S for b in _FP8S),
    C("e4m3", "e4m3", "f16", a_registers=True),
    C("e5m2", "e5m2", "f16", a_registers=True, main=False),
    C("s8", "s8", "s32", a_registers=True),
    C("u8", "s8", "s32", a_registers=True, satfinite=True, main=False),
    C("b1", "b1", "s32", a_registers=True, main=False),
    C("bf16", "bf16", "f32", scale_a=-1, scale_b=-1, main=False),
    C("bf16", "bf16", "f32", scale_a=-1, scale_b=1, main=False),
    C("tf32", "tf32", "f32", scale_a=-1, scale_b=-1, main=False),
    C("tf32", "tf32", "f32", scale_a=1, scale_b=-1, main=False),
    # sparse
    C("f16", "f16", "f16", sparse=True),
    C("f16", "f16", "f16", sparse=True, sp_sel=1, main=False),
    *(C(t, t, "f32", sparse=True, sp_sel=1, tag="x") for t in ("f16", "bf16", "tf32")),
    *(C(a, b, "f32", sparse=True) for a in _FP8S for b in _FP8S if (a, b) != ("e4m3", "e4m3")),
    *(C(a, b, "f16", sparse=True) for a in _FP8S for b in _FP8S),
    *(C(a, b, "s32", sparse=True) for a in _I8 for b in _I8 if (a, b) != ("s8", "s8")),
    *(C(a, b, "s32", sparse=True, satfinite=True) for a in _I8 for b in _I8),
    C("f16", "f16", "f32", sparse=True, a_registers=True),
    C("bf16", "bf16", "f32", sparse=True, a_registers=True, main=False),
    C("tf32", "tf32", "f32", sparse=True, a_registers=True, main=False),
    C("e4m3", "e4m3", "f32", sparse=True, a_registers=True),
    C("s8", "s8", "s32", sparse=True, a_registers=True),
    C("f16", "f16", "f32", sparse=True, sp_sel=1, a_registers=True, main=False),
    C("f16", "f16", "f16", sparse=True, a_registers=True, main=False),
    C("e5m2", "e4m3", "f16", sparse=True, a_registers=True, main=False),
    # scale-d false: how does C enter (the profile's wgmma_scale_d_false_c)?
    C("f16", "f16", "f32", scale_probe=True, main=False),
    C("e4m3", "e4m3", "f32", scale_probe=True, main=False),
    C("f16", "f16", "f16", scale_probe=True, main=False),
)

#: The round ``wgmma-pruned`` (the part ``pruned``; files ``wgmma-pruned-*.npz``, ``meta-wgmma-pruned.json``):
#: does wgmma.sp read B where A is pruned? Designed instances only (:func:`pruned_matrices`): B holds
#: infinities, NaNs and the largest finite numbers at the K positions the rows of A prune, A and C
#: ordinary and special values; every floating-point wgmma.sp multiplicand type, both sparsity
#: selectors where the manual allows them, A from shared memory and from registers, N = 16 and 40.
PRUNED_COMBINATIONS: tuple[Combination, ...] = tuple(
    C(a, b, d, sparse=True, sp_sel=sel, a_registers=regs, main=False, pruned=True)
    for a, b, d, sel, regs in (
        ("f16", "f16", "f32", 0, False),
        ("f16", "f16", "f32", 1, False),
        ("f16", "f16", "f16", 0, False),
        ("f16", "f16", "f16", 1, False),
        ("bf16", "bf16", "f32", 0, False),
        ("bf16", "bf16", "f32", 1, False),
        ("tf32", "tf32", "f32", 0, False),
        ("tf32", "tf32", "f32", 1, False),
        ("e4m3", "e4m3", "f32", 0, False),
        ("e5m2", "e5m2", "f32", 0, False),
        ("e4m3", "e5m2", "f16", 0, False),
        ("f16", "f16", "f32", 1, True),
        ("e4m3", "e4m3", "f32", 0, True),
    )
)
PRUNED_N = (16, 40)
#: Instances per pruned kernel: the four designs of :func:`pruned_matrices`, twice.
PRUNED_INSTANCES = 8

#: wgmma-more: the other N (powers of two: one digest covers 2^k registers) and the largest N whose
#: random instances are kept in full.
MORE_OTHER_N = (8, 16, 64)
FULL_N = 64
#: wgmma-more: random instances of a variant at N = FULL_N (in full) and at N = 256 (digests).
MORE_VARIANT = 2


def part_prefix(part: str) -> str:
    """The name of the round whose part is ``part``: the stem of its files."""
    return "wgmma" + (f"-{part}" if part else "")


def element(t: str) -> dict:
    """The element description the device generator reads (``mma_device`` conventions)."""
    if t in ("s8", "u8", "s32"):
        bits, signed = {"s8": (8, True), "u8": (8, False), "s32": (32, True)}[t]
        return {"type": t, "kind": "int", "bits": bits, "signed": signed}
    if t == "b1":  # filled and held a byte at a time
        return {"type": t, "kind": "int", "bits": 8, "signed": False}
    f = FORMATS[t]
    bits = 32 if t == "tf32" else f.width
    return {"type": t, "kind": "float", "bits": bits, "exponent_bits": f.exponent_bits, "mantissa_bits": f.mantissa_bits, "shift": f.shift}


def type_bits(t: str) -> int:
    return wl.element_bits(t)


# ---------------------------------------------------------------------------------------------
# Layouts: the descriptors of each instance
# ---------------------------------------------------------------------------------------------


def _align(x: int, to: int = 1024) -> int:
    return (x + to - 1) // to * to


def place(major: str, swizzle: str, variant: int, mn: int, kbytes: int, kelements: int, offset: int) -> tuple[wl.MatrixDescriptor, int]:
    """A descriptor (start address relative to its region) of an ``mn`` x K matrix (K ``kbytes``
    bytes, ``kelements`` elements) and the bytes of region it needs. ``variant`` 0: packed; 1: the
    other order of the two strides, or a gap of one atom; ``offset``: K blocks of 32 bytes into a
    K-major swizzle row (the start address moves, the pattern stays)."""
    if major == "K":
        if swizzle == "none":
            kchunks, groups = -(-kbytes // 16), -(-mn // 8)
            lbo, sbo = [(128, 128 * kchunks), (128 * groups, 128), (256, 256 * kchunks)][variant % 3]
            size = (kchunks - 1) * lbo + (groups - 1) * sbo + 128
            return wl.MatrixDescriptor(0, lbo, sbo, 0, "none"), size
        width = wl.SWIZZLE_BYTES[swizzle]
        sbo = 8 * width * (1 + variant % 2)
        size = sbo * (-(-mn // 8) - 1) + 8 * width
        start = 32 * offset if kbytes + 32 * offset <= width else 0
        return wl.MatrixDescriptor(start, 16, sbo, 0, swizzle), size
    kgroups = -(-kelements // 8)
    if swizzle == "none":
        groups = -(-mn * 2 // 16)
        lbo, sbo = [(128 * groups, 128), (128, 128 * kgroups)][variant % 2]
        return wl.MatrixDescriptor(0, lbo, sbo, 0, "none"), (kgroups - 1) * lbo + (groups - 1) * sbo + 128
    width = wl.SWIZZLE_BYTES[swizzle]
    blocks = -(-mn * 2 // width)
    atom = 8 * width
    lbo, sbo = [(atom, atom * blocks), (atom * kgroups, atom)][variant % 2]
    return wl.MatrixDescriptor(0, lbo, sbo, 0, swizzle), (blocks - 1) * lbo + (kgroups - 1) * sbo + atom


def layout_plan(combo: Combination, n: int, count: int) -> list[dict]:
    """Per instance: A's and B's (major, swizzle, variant, offset)."""
    out = []
    kbytes_b = combo.k * type_bits(combo.btype) // 8
    b_swizzles = [s for s in SWIZZLES if combo.trans_b or s == "none" or wl.SWIZZLE_BYTES[s] >= kbytes_b]
    for i in range(count):
        a = {"major": "MN" if combo.trans_a else "K", "swizzle": SWIZZLES[i % 4], "variant": (i // 4) % 3, "offset": (i // 2) % 4}
        b = {
            "major": "MN" if combo.trans_b else "K",
            "swizzle": b_swizzles[(i + 1 + i // 4) % len(b_swizzles)],
            "variant": (i // 3) % 3,
            "offset": (i // 3) % 4,
        }
        out.append({"a": a, "b": b})
    return out


def regions(combo: Combination, n: int, layouts: list[dict]) -> tuple[list[tuple[wl.MatrixDescriptor | None, wl.MatrixDescriptor]], dict]:
    """The descriptors of every instance (relative to the image) and the image's regions."""
    stored_k = combo.k // 2 if combo.sparse else combo.k
    bits_a, bits_b = type_bits(combo.atype), type_bits(combo.btype)
    a_list: list[wl.MatrixDescriptor | None] = []
    b_list: list[wl.MatrixDescriptor] = []
    a_size, b_size = 0, 0
    for lay in layouts:
        if combo.a_registers:
            a_list.append(None)
        else:
            la = lay["a"]
            d, size = place(la["major"], la["swizzle"], la["variant"], 64, stored_k * bits_a // 8, stored_k, la["offset"])
            a_list.append(d)
            a_size = max(a_size, size)
        lb = lay["b"]
        d, size = place(lb["major"], lb["swizzle"], lb["variant"], n, combo.k * bits_b // 8, combo.k, lb["offset"])
        b_list.append(d)
        b_size = max(b_size, size)
    a_size = _align(a_size)
    b_size = _align(b_size)
    descs = [(a, attrs.evolve(b, start_address=b.start_address + a_size)) for a, b in zip(a_list, b_list)]
    return descs, {"a_region": [0, a_size], "b_region": [a_size, b_size], "image_bytes": a_size + b_size}


# ---------------------------------------------------------------------------------------------
# Designed probes
# ---------------------------------------------------------------------------------------------


def _kept_positions(combo: Combination) -> np.ndarray:
    """Dense K positions a fixed sparsity pattern keeps: the first half of each group (2 of 4
    16-bit or 8-bit elements, 1 of 2 .tf32 elements)."""
    group = {32: 2, 16: 4, 8: 4}[type_bits(combo.atype)]
    k = np.arange(combo.k)
    return k[(k % group) < group // 2]


@functools.cache
def designed_matrices(combo: Combination) -> dict[str, Any] | None:
    """Designed probes as dense A ``[P, 64, K]``, B ``[P, K, N]``, C ``[P, 64, N]`` (N = 32)."""
    if combo.atype == "b1":
        return None
    stored_k = combo.k // 2 if combo.sparse else combo.k
    fake = mma_campaign.Combination(f"m16n8k{stored_k}", combo.dtype, combo.atype, combo.btype, combo.dtype)
    encoded = mma_campaign.encoded_designs(fake)
    per = 32
    chosen = mma_campaign.sample_designs(encoded, PROBE_INSTANCES * per)
    count = -(-len(chosen) // per)
    positions = _kept_positions(combo) if combo.sparse else np.arange(combo.k)
    A = np.zeros((count, 64, combo.k), dtype=np.uint64)
    B = np.zeros((count, combo.k, PROBE_N), dtype=np.uint64)
    Cm = np.zeros((count, 64, PROBE_N), dtype=np.uint64)
    for s, (codes, code_c) in enumerate(chosen):
        t, r = divmod(s, per)
        for kk, (a, b) in enumerate(codes):
            A[t, r, positions[kk]] = a
            A[t, r + 32, positions[kk]] = mma_campaign._negate(fake.a, a)
            B[t, positions[kk], r] = b
        Cm[t, r, r] = code_c
        Cm[t, r + 32, r] = mma_campaign._negate(fake.c, code_c)
    return {"A": A, "B": B, "C": Cm, "designed": len(chosen), "available": len(encoded)}


def scale_d_matrices(combo: Combination) -> dict[str, np.ndarray]:
    """The scale-d probe (wgmma-more): how does C enter when scale-d is false ("D = A*B", §9.7.15.5.2)?
    Three instances of the same A and B (N = 32): scale-d false with C holding NaN, infinities,
    +-0 and numbers; scale-d true with C = +0; scale-d true with C = -0. Rows of A: 0-15 all -0,
    16-31 all +0, 32-47 one tiny negative element (the smallest subnormal) and -0 elsewhere, 48-63
    one tiny positive element and -0 elsewhere; columns of B: 0-15 positive numbers, 16-23 +0,
    24-31 negative numbers. So row/column pairs give an exact zero sum of -0 products, of +0
    products, of mixed zeros, and a tiny negative or positive sum; D of the first instance equals
    D of the second (C enters as +0) or of the third (as -0) or neither (C is left out)."""
    from fractions import Fraction

    fa, fc = FORMATS[combo.atype], FORMATS[combo.dtype]
    enc = mma_campaign.encode
    neg = lambda t, bits: bits ^ FORMATS[t].sign_mask
    K = combo.k
    A = np.zeros((64, K), dtype=np.uint64)
    A[0:16] = fa.sign_mask
    tiny = 1  # the smallest subnormal
    A[32:48] = fa.sign_mask
    A[48:64] = fa.sign_mask
    for r in range(16):
        A[32 + r, r % K] = neg(combo.atype, tiny)
        A[48 + r, r % K] = tiny
    rng = np.random.default_rng(20261121)
    B = np.zeros((K, PROBE_N), dtype=np.uint64)
    values = [Fraction(1), Fraction(3, 2), Fraction(3, 4), Fraction(1, 8), Fraction(5, 4), Fraction(7, 8)]
    for k in range(K):
        for c in range(PROBE_N):
            v = enc(combo.btype, values[int(rng.integers(len(values)))])
            B[k, c] = v if c < 16 else (0 if c < 24 else neg(combo.btype, v))
    infinity = ((1 << fc.exponent_bits) - 1) << fc.mantissa_bits
    specials = [
        enc(combo.dtype, "nan"),
        enc(combo.dtype, Fraction(1)),
        0,
        fc.sign_mask,
        infinity | fc.sign_mask,
        enc(combo.dtype, Fraction(-3, 2)),
        enc(combo.dtype, Fraction(1, 1024)),
    ]
    Cf = np.array([[specials[(r + 3 * c) % len(specials)] for c in range(PROBE_N)] for r in range(64)], dtype=np.uint64)
    Cf[::7, ::5] = infinity
    Cp = np.zeros((64, PROBE_N), dtype=np.uint64)
    Cn = np.full((64, PROBE_N), fc.sign_mask, dtype=np.uint64)
    return {"A": np.stack([A, A, A]), "B": np.stack([B, B, B]), "C": np.stack([Cf, Cp, Cn]), "scale": np.array([0, 1, 1], dtype=np.uint32)}


def _ordinary(rng, t: str, shape) -> np.ndarray:
    """Element bits of float type ``t``: random sign and mantissa, exponent within 4 of the bias."""
    f = FORMATS[t]
    e, m = f.exponent_bits, f.mantissa_bits
    sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(e + m)
    exponent = rng.integers(f.bias - 4, f.bias + 5, shape, dtype=np.uint64) << np.uint64(m)
    return (sign | exponent | rng.integers(0, 1 << m, shape, dtype=np.uint64)) << np.uint64(f.shift)


def special_values(t: str) -> dict[str, int]:
    """The special elements of float type ``t`` the pruned probe uses: +-infinity (.e4m3 has none:
    its NaNs), NaNs (the canonical one and the smallest payload), the largest finite numbers, +-0
    and the smallest subnormals."""
    f = FORMATS[t]
    enc = mma_campaign.encode
    top = ((1 << f.exponent_bits) - 1) << f.mantissa_bits << f.shift
    nan = enc(t, "nan")
    inf = enc(t, "inf") if f.has_infinity else nan
    huge = (top - (1 << f.shift)) if f.has_infinity else nan - (1 << f.shift)  # all ones below the top field / below the NaN
    snan = (top | (1 << f.shift)) if f.has_infinity else nan  # the smallest NaN payload (signalling in IEEE's reading)
    return {
        "inf": inf,
        "-inf": inf | f.sign_mask,
        "nan": nan,
        "-nan": nan | f.sign_mask,
        "snan": snan,
        "huge": huge,
        "-huge": huge | f.sign_mask,
        "+0": 0,
        "-0": f.sign_mask,
        "tiny": 1 << f.shift,
        "-tiny": (1 << f.shift) | f.sign_mask,
    }


def _with_specials(rng, t: str, values: np.ndarray, rate: float, names=None) -> np.ndarray:
    """``values`` with a fraction ``rate`` replaced by special elements (of ``names``, default all)."""
    table = special_values(t)
    pool = np.array([table[k] for k in (names or table)], dtype=np.uint64)
    return np.where(rng.random(values.shape) < rate, pool[rng.integers(0, pool.size, values.shape)], values).astype(np.uint64)


def _kept_pattern(rng, combo: Combination, rows: int, per_row: bool) -> np.ndarray:
    """Which K positions each row of A keeps ``[rows, K]``: in each block of 4 (2 for .tf32) two
    (one) positions, drawn per row, or once for every row."""
    group, keep = (2, 1) if combo.atype == "tf32" else (4, 2)
    out = np.zeros((rows, combo.k), dtype=bool)
    for r in range(rows):
        if per_row or r == 0:
            row = np.zeros(combo.k, dtype=bool)
            for start in range(0, combo.k, group):
                row[start + rng.choice(group, size=keep, replace=False)] = True
        out[r] = row
    return out


PRUNED_SPECIALS = ("inf", "-inf", "nan", "snan", "huge", "-huge")


@functools.cache
def pruned_matrices(combo: Combination, n: int) -> dict[str, np.ndarray]:
    """The pruned-position probe (wgmma-pruned): does wgmma.sp read B where A is pruned?
    PRUNED_INSTANCES instances, design ``t % 4``:

    * design 0: every row keeps the same positions P; B holds +-infinity, NaN or +-the largest
      finite number at every other position (pruned by every row), ordinary numbers at P; A and
      C ordinary -- every D element is finite where B's pruned positions are not read, NaN where
      they are multiplied by A's zeros;
    * design 1: rows 0-31 keep P, rows 32-63 the other positions; B as in design 0 -- rows 0-31
      prune the specials, rows 32-63 multiply them (infinities, NaN, overflow); A and C with a
      tenth special elements;
    * design 2: each row keeps its own positions; a quarter of B special, anywhere; A and C
      ordinary;
    * design 3: as design 0, with a quarter of A's stored elements special (zeros, infinities,
      NaN, subnormals...), a quarter of C special, and a tenth of B's kept positions special; the
      last instance has scale-d false.

    Returns the stored A ``[P, 64, K/2]``, the metadata ``[P, 128]`` (of the kept positions,
    through :func:`~ptxspec.semantics.wgmma_layout.compress_sparse`), the kept positions
    ``[P, 64, K]``, B ``[P, K, N]``, C ``[P, 64, N]`` and scale-d ``[P]``."""
    rng = np.random.default_rng(seed_of(f"{combo.name}-n{n}"))
    shape, half = f"m64n{n}k{combo.k}", combo.k // 2
    out: dict[str, list] = {"stored": [], "meta": [], "kept": [], "B": [], "C": []}
    for t in range(PRUNED_INSTANCES):
        design = t % 4
        kept = _kept_pattern(rng, combo, 64, per_row=design == 2)
        if design == 1:
            kept[32:] = ~kept[0]
        _, meta = wl.compress_sparse(shape, combo.atype, kept.astype(np.uint64), combo.sp_sel)
        stored = _ordinary(rng, combo.atype, (64, half))
        Cm = _ordinary(rng, combo.dtype, (64, n))
        B = _ordinary(rng, combo.btype, (combo.k, n))
        specials = _with_specials(rng, combo.btype, B, 1.0, PRUNED_SPECIALS)
        if design == 2:
            B = _with_specials(rng, combo.btype, B, 0.25)
        else:
            B = np.where(kept[0][:, None], B, specials)
        if design == 1:
            stored, Cm = _with_specials(rng, combo.atype, stored, 0.1), _with_specials(rng, combo.dtype, Cm, 0.1)
        if design == 3:
            stored, Cm = _with_specials(rng, combo.atype, stored, 0.25), _with_specials(rng, combo.dtype, Cm, 0.25)
            B = np.where(kept[0][:, None], _with_specials(rng, combo.btype, B, 0.1), B)
        for k, v in (("stored", stored), ("meta", meta), ("kept", kept), ("B", B), ("C", Cm)):
            out[k].append(v)
    arrays = {k: np.stack(v) for k, v in out.items()}
    arrays["scale"] = np.array([0 if t == PRUNED_INSTANCES - 1 else 1 for t in range(PRUNED_INSTANCES)], dtype=np.uint32)
    return arrays


def build_instances(combo: Combination, n: int, A, B, Cm, descs, image_bytes: int, sparse_a=None) -> dict[str, np.ndarray]:
    """Stored inputs (image, A registers, accumulators, metadata, scale-d) of instances holding the
    matrices ``A`` (dense), ``B``, ``C``, written with our layout model; ``sparse_a``: a sparse A
    given as its stored elements ``[P, 64, K/2]`` and metadata ``[P, 128]`` instead of ``A``."""
    shape = f"m64n{n}k{combo.k}"
    count = B.shape[0]
    out: dict[str, list] = {"image": [], "a": [], "d": [], "meta": [], "scale": []}
    for t in range(count):
        if sparse_a is not None:
            stored, meta = sparse_a[0][t], sparse_a[1][t]
        elif combo.sparse:
            stored, meta = wl.compress_sparse(shape, combo.atype, A[t], combo.sp_sel)
        else:
            stored, meta = A[t], np.zeros(128, dtype=np.uint64)
        da, db = descs[t]
        image = np.zeros(image_bytes, dtype=np.uint8)
        if combo.a_registers:
            regs = wl.fragment_layout(shape, "a", combo.atype, sparse=combo.sparse).from_matrix(stored)
        else:
            image = wl.write_matrix(image, da, stored, combo.atype, "MN" if combo.trans_a else "K", operand="a")
            regs = np.zeros((128, 4), dtype=np.uint64)
        image = wl.write_matrix(image, db, B[t], combo.btype, "MN" if combo.trans_b else "K", operand="b")
        out["image"].append(image)
        out["a"].append(regs.astype(np.uint32))
        out["d"].append(wl.fragment_layout(shape, "c", combo.dtype).from_matrix(Cm[t]).astype(np.uint32))
        out["meta"].append(np.asarray(meta, dtype=np.uint32))
        out["scale"].append(np.uint32(1))
    return {k: np.stack(v) for k, v in out.items()}


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

HEADER = _HEADER + "\n.extern .shared .align 1024 .b8 smem[];\n"


def kernel(combo: Combination, n: int, name: str, image_bytes: int) -> str:
    """One CTA (one warpgroup) per instance: copy the image into shared memory, fence the async
    proxy, barrier, relocate the descriptors, load the registers, one wgmma, store D."""
    nd = wg.d_registers(f"m64n{n}k{combo.k}", combo.dtype)
    dreg = ".f32" if combo.dtype == "f32" else ".b32"
    lines = [
        "  .reg .pred %p<4>;",
        "  .reg .b32 %r<16>;",
        "  .reg .b64 %rd<32>;",
        f"  .reg {dreg} %d<{nd}>;",
        "  .reg .b32 %a<4>;",
        "  mov.u32 %r0, %tid.x;",
        "  mov.u32 %r1, %ctaid.x;",
        "  ld.param.u64 %rd0, [p_img];",
        "  cvta.to.global.u64 %rd0, %rd0;",
        f"  mul.wide.u32 %rd1, %r1, {image_bytes};",
        "  add.u64 %rd0, %rd0, %rd1;",
        "  mov.u64 %rd2, smem;",
        "  cvt.u32.u64 %r2, %rd2;",
        "  shl.b32 %r3, %r0, 4;",
        "COPY:",
        f"  setp.ge.u32 %p0, %r3, {image_bytes};",
        "  @%p0 bra COPIED;",
        "  cvt.u64.u32 %rd3, %r3;",
        "  add.u64 %rd4, %rd0, %rd3;",
        "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd4];",
        "  add.u64 %rd5, %rd2, %rd3;",
        "  st.shared.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};",
        "  add.u32 %r3, %r3, 2048;",
        "  bra COPY;",
        "COPIED:",
        "  fence.proxy.async.shared::cta;",
        "  bar.sync 0;",
        # descriptors: the start address is relative to the image; add the base (>> 4)
        "  ld.param.u64 %rd6, [p_desc];",
        "  cvta.to.global.u64 %rd6, %rd6;",
        "  mul.wide.u32 %rd7, %r1, 16;",
        "  add.u64 %rd6, %rd6, %rd7;",
        "  ld.global.u64 %rd8, [%rd6];",
        "  ld.global.u64 %rd9, [%rd6+8];",
        "  shr.u32 %r8, %r2, 4;",
        "  cvt.u64.u32 %rd10, %r8;",
        "  add.u64 %rd8, %rd8, %rd10;",
        "  add.u64 %rd9, %rd9, %rd10;",
        "  ld.param.u64 %rd11, [p_scale];",
        "  cvta.to.global.u64 %rd11, %rd11;",
        "  mul.wide.u32 %rd12, %r1, 4;",
        "  add.u64 %rd11, %rd11, %rd12;",
        "  ld.global.u32 %r9, [%rd11];",
        "  setp.ne.u32 %p1, %r9, 0;",
        "  mad.lo.u32 %r10, %r1, 128, %r0;",
        "  ld.param.u64 %rd13, [p_d];",
        "  cvta.to.global.u64 %rd13, %rd13;",
        f"  mul.wide.u32 %rd14, %r10, {4 * nd};",
        "  add.u64 %rd13, %rd13, %rd14;",
        "  ld.param.u64 %rd15, [p_out];",
        "  cvta.to.global.u64 %rd15, %rd15;",
        "  add.u64 %rd15, %rd15, %rd14;",
        "  ld.param.u64 %rd16, [p_a];",
        "  cvta.to.global.u64 %rd16, %rd16;",
        "  mul.wide.u32 %rd17, %r10, 16;",
        "  add.u64 %rd16, %rd16, %rd17;",
        "  ld.param.u64 %rd18, [p_meta];",
        "  cvta.to.global.u64 %rd18, %rd18;",
        "  mul.wide.u32 %rd19, %r10, 4;",
        "  add.u64 %rd18, %rd18, %rd19;",
        "  ld.global.u32 %r11, [%rd18];",
    ]
    lines += [f"  ld.global{dreg} %d{i}, [%rd13+{4 * i}];" for i in range(nd)]
    if combo.a_registers:
        lines += [f"  ld.global.b32 %a{i}, [%rd16+{4 * i}];" for i in range(4)]
    d = "{" + ", ".join(f"%d{i}" for i in range(nd)) + "}"
    a = "{%a0, %a1, %a2, %a3}" if combo.a_registers else "%rd8"
    sp = f", %r11, {combo.sp_sel}" if combo.sparse else ""
    lines += [
        "  wgmma.fence.sync.aligned;",
        f"  {combo.opcode(n)} {d}, {a}, %rd9{sp}, %p1{combo.immediates()};",
        "  wgmma.commit_group.sync.aligned;",
        "  wgmma.wait_group.sync.aligned 0;",
    ]
    lines += [f"  st.global{dreg} [%rd15+{4 * i}], %d{i};" for i in range(nd)]
    lines += [
        "  setp.ne.u32 %p2, %r0, 0;",
        "  @%p2 bra DONE;",
        "  ld.param.u64 %rd20, [p_base];",
        "  cvta.to.global.u64 %rd20, %rd20;",
        "  add.u64 %rd20, %rd20, %rd12;",
        "  st.global.u32 [%rd20], %r2;",
        "DONE:",
        "  ret;",
    ]
    params = ",\n  ".join(f".param .u64 p_{p}" for p in ("img", "desc", "a", "d", "scale", "meta", "out", "base"))
    return f".visible .entry {name}(\n  {params}\n)\n{{\n" + "\n".join(lines) + "\n}\n"


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def metadata_kind(combo: Combination) -> str | None:
    if not combo.sparse:
        return None
    return "tf32" if combo.atype == "tf32" else "pairs"


def kernel_entry(combo: Combination, n: int, kname: str, probes: int, random: int, layouts: list[dict], descs, region: dict) -> dict:
    name = f"{combo.name}-n{n}"
    enc = lambda d: 0 if d is None else d.encode()
    return {
        "name": name,
        "kernel": kname,
        "combination": combo.name,
        "instruction": combo.opcode(n),
        "n": n,
        "k": combo.k,
        "atype": combo.atype,
        "btype": combo.btype,
        "dtype": combo.dtype,
        "a_registers": combo.a_registers,
        "sparse": combo.sparse,
        "sp_sel": combo.sp_sel,
        "trans_a": combo.trans_a,
        "trans_b": combo.trans_b,
        "scale_a": combo.scale_a,
        "scale_b": combo.scale_b,
        "satfinite": combo.satfinite,
        "d_registers": wg.d_registers(f"m64n{n}k{combo.k}", combo.dtype),
        "elements": {"a": element(combo.atype), "b": element(combo.btype), "d": element(combo.dtype)},
        "fill": {"a": element(combo.atype), "b": element(combo.btype)},
        "metadata": metadata_kind(combo),
        "probes": probes,
        "random": random,
        "seed": seed_of(name),
        "descriptors": [[str(enc(a)), str(enc(b))] for a, b in descs],
        "layouts": layouts,
        **region,
    }


def probe_instances(combo: Combination) -> int:
    """Designed-probe instances of a main combination (floating point: every type has more than
    PROBE_INSTANCES * 32 designs, :func:`_make` checks it)."""
    if combo.atype == "b1":
        return 0
    if combo.integer:
        designed = designed_matrices(combo)
        assert designed is not None, f"{combo.name}: an integer combination has designed probes"
        return designed["A"].shape[0]
    return PROBE_INSTANCES


def plan_kernels(part: str = "") -> list[tuple[Combination, int, int, int]]:
    """(combination, N, probe instances wanted (0/1 flag), random instances) of every kernel of
    the round whose part is ``part``."""
    return ROUND_OF_PART[part].kernels()


def _plan_first() -> list[tuple[Combination, int, int, int]]:
    """wgmma: a main combination records enough random instances at N = 256 for DOTS (with its
    designed probes at N = 32 and RANDOM_OTHER_N at two other N); a variant RANDOM_VARIANT at N = 256
    (the imm-trans variants four, so that MN-major meets every swizzle mode)."""
    out = []
    for i, combo in enumerate(COMBINATIONS):
        ns = combo.ns(i)
        # the imm-trans variants: four instances, so that MN-major meets every swizzle mode
        random = RANDOM_VARIANT if not (combo.trans_a or combo.trans_b) else 4
        if combo.main:  # enough at N = 256 for DOTS with the designed probes and the other N
            designed = probe_instances(combo) * 64 * PROBE_N
            others = RANDOM_OTHER_N * 64 * sum(ns[1:])
            random = max(2, -(-(DOTS - designed - others) // (64 * 256)))
        for j, n in enumerate(ns):
            out.append((combo, n, 0, random) if j == 0 else (combo, n, 0, RANDOM_OTHER_N))
        if combo.main and combo.atype != "b1":
            out.append((combo, PROBE_N, 1, 0))
    return out


def _plan_more() -> list[tuple[Combination, int, int, int]]:
    """wgmma-more: a main combination records its designed probes (N = 32), RANDOM_OTHER_N random
    instances at one small N (kept in full) and enough at N = 256 (digests) for DOTS; a variant
    MORE_VARIANT random instances at N = FULL_N (in full) and at N = 256 (digests); a scale-d probe
    its three designed instances."""
    out = []
    for i, combo in enumerate(MORE_COMBINATIONS):
        if combo.scale_probe:
            out.append((combo, PROBE_N, 1, 0))
        elif not combo.main:
            out += [(combo, FULL_N, 0, MORE_VARIANT), (combo, 256, 0, MORE_VARIANT)]
        else:
            other = MORE_OTHER_N[i % len(MORE_OTHER_N)]
            designed = probe_instances(combo) * 64 * PROBE_N
            random = max(2, -(-(DOTS - designed - RANDOM_OTHER_N * 64 * other) // (64 * 256)))
            out += [(combo, 256, 0, random), (combo, other, 0, RANDOM_OTHER_N), (combo, PROBE_N, 1, 0)]
    return out


def _plan_pruned() -> list[tuple[Combination, int, int, int]]:
    """wgmma-pruned: the designed instances of :func:`pruned_matrices` at each of PRUNED_N."""
    return [(combo, n, 1, 0) for combo in PRUNED_COMBINATIONS for n in PRUNED_N]


@attrs.frozen
class Round:
    """One round of the campaign as data: its ``part`` (what its bundle plan and wgmma_device.py
    call it), its combinations and the kernels it plans; :func:`prepare`, :func:`load` and the
    commands take the round's part."""

    part: str
    combinations: tuple[Combination, ...]
    kernels: Callable[[], list[tuple[Combination, int, int, int]]]

    @property
    def name(self) -> str:
        """The stem of the round's files: ``wgmma{-part}-<i>.npz``, ``meta-wgmma{-part}.json``."""
        return part_prefix(self.part)

    @property
    def digests(self) -> bool:
        """Whether random instances past N = FULL_N keep their D as one digest each (every round
        after the first)."""
        return bool(self.part)


#: The rounds, by name.
ROUNDS: dict[str, Round] = {
    r.name: r for r in (Round("", COMBINATIONS, _plan_first), Round("more", MORE_COMBINATIONS, _plan_more), Round("pruned", PRUNED_COMBINATIONS, _plan_pruned))
}
ROUND_OF_PART: dict[str, Round] = {r.part: r for r in ROUNDS.values()}
#: Each round's combinations, by part.
PARTS: dict[str, tuple[Combination, ...]] = {r.part: r.combinations for r in ROUNDS.values()}


def _make(combo: Combination, n: int, probe: int, random: int, kname: str):
    """(plan entry, stored arrays, PTX) of one kernel."""
    arrays: dict[str, np.ndarray] = {}
    if combo.scale_probe:
        return _make_scale_probe(combo, kname)
    if combo.pruned:
        return _make_pruned(combo, n, kname)
    designed = designed_matrices(combo) if probe and n == PROBE_N else None
    probes = 0 if designed is None else designed["A"].shape[0]
    if designed is not None and probes != probe_instances(combo):
        raise AssertionError(f"{combo.name}: {probes} designed-probe instances, planned {probe_instances(combo)}")
    layouts = layout_plan(combo, n, probes + random)
    descs, region = regions(combo, n, layouts)
    if designed is not None and probes:
        built = build_instances(combo, n, designed["A"], designed["B"], designed["C"], descs, region["image_bytes"])
        name = f"{combo.name}-n{n}"
        for k, v in built.items():
            arrays[f"{name}_p{k}"] = v
    entry = kernel_entry(combo, n, kname, probes, random, layouts, descs, region)
    if designed is not None:
        entry["designed"], entry["available"] = designed["designed"], designed["available"]
    return entry, arrays, kernel(combo, n, kname, region["image_bytes"])


def _make_scale_probe(combo: Combination, kname: str):
    """(plan entry, stored arrays, PTX) of a scale-d probe kernel (:func:`scale_d_matrices`)."""
    m = scale_d_matrices(combo)
    layouts = layout_plan(combo, PROBE_N, 3)
    descs, region = regions(combo, PROBE_N, layouts)
    built = build_instances(combo, PROBE_N, m["A"], m["B"], m["C"], descs, region["image_bytes"])
    built["scale"] = m["scale"]
    name = f"{combo.name}-n{PROBE_N}"
    entry = kernel_entry(combo, PROBE_N, kname, 3, 0, layouts, descs, region)
    return entry, {f"{name}_p{k}": v for k, v in built.items()}, kernel(combo, PROBE_N, kname, region["image_bytes"])


def _make_pruned(combo: Combination, n: int, kname: str):
    """(plan entry, stored arrays, PTX) of a pruned-position probe kernel (:func:`pruned_matrices`)."""
    m = pruned_matrices(combo, n)
    count = m["B"].shape[0]
    layouts = layout_plan(combo, n, count)
    descs, region = regions(combo, n, layouts)
    built = build_instances(combo, n, None, m["B"], m["C"], descs, region["image_bytes"], sparse_a=(m["stored"], m["meta"]))
    built["scale"] = m["scale"]
    name = f"{combo.name}-n{n}"
    entry = kernel_entry(combo, n, kname, count, 0, layouts, descs, region)
    entry["designs"] = [t % 4 for t in range(count)]
    return entry, {f"{name}_p{k}": v for k, v in built.items()}, kernel(combo, n, kname, region["image_bytes"])


def selfcheck_kernels() -> list[tuple[dict, dict, str]]:
    """One s8 wgmma (m64n64k32) per swizzle mode, with the matrices the image was built from and
    the accumulator fragment's (row, col) of every register, for a check on the device."""
    combo = Combination("s8", "s8", "s32")
    n = 64
    shape = f"m64n{n}k32"
    rng = np.random.default_rng(7)
    out = []
    for s, swizzle in enumerate(SWIZZLES):
        layouts = [{"a": {"major": "K", "swizzle": swizzle, "variant": 0, "offset": 0}, "b": {"major": "K", "swizzle": swizzle, "variant": 0, "offset": 0}}]
        descs, region = regions(combo, n, layouts)
        A = rng.integers(-128, 128, (1, 64, 32))
        B = rng.integers(-128, 128, (1, 32, n))
        Cm = rng.integers(-(1 << 20), 1 << 20, (1, 64, n))
        built = build_instances(combo, n, A & 0xFF, B & 0xFF, Cm & 0xFFFFFFFF, descs, region["image_bytes"])
        kname = f"wgself{s}"
        entry = kernel_entry(combo, n, kname, 1, 0, layouts, descs, region)
        entry["name"] = f"selfcheck-{swizzle}"
        entry["layout"] = f"A and B K-major, {swizzle} swizzle"
        arrays = {f"{entry['name']}_p{k}": v for k, v in built.items()}
        layout = wl.fragment_layout(shape, "d", "s32")
        rows, cols, _ = layout._index
        arrays.update(
            {
                f"{entry['name']}_A": A[0].astype(np.int32),
                f"{entry['name']}_B": B[0].astype(np.int32),
                f"{entry['name']}_C": Cm[0].astype(np.int32),
                f"{entry['name']}_rows": rows[..., 0].astype(np.int16),
                f"{entry['name']}_cols": cols[..., 0].astype(np.int16),
            }
        )
        out.append((entry, arrays, kernel(combo, n, kname, region["image_bytes"])))
    return out


def digest_bits(entry: dict) -> int:
    """log2 of the D registers of one instance (128 threads): one digest covers one instance."""
    size = 128 * entry["d_registers"]
    if size & (size - 1):
        raise ValueError(f"{entry['name']}: {size} D registers per instance, not a power of two")
    return size.bit_length() - 1


def prepare(bundle: Path, part: str = "", ptxas: str = "ptxas") -> None:
    """The bundle of the round whose part is ``part``: every kernel of :func:`plan_kernels` that
    ptxas assembles alone (a refused one listed under ``rejected``), and the self-check kernels, in
    ``wgmma.cubin`` (its source ``wgmma.ptx.gz``); ``wgmma-plan.json``; the stored instances in
    ``wgmma-probes.npz``; and the device scripts, which run from the bundle."""
    round_ = ROUND_OF_PART[part]
    bundle.mkdir(parents=True, exist_ok=True)
    prefix = "wm" if part else "wg"
    made = [_make(c, n, p, r, f"{prefix}{i:03d}") for i, (c, n, p, r) in enumerate(round_.kernels())]
    if round_.digests:  # random D in full only up to N = FULL_N, else one digest per instance
        for entry, _, _ in made:
            entry["full_random"] = entry["random"] if entry["n"] <= FULL_N else 0
            if entry["random"] > entry["full_random"]:
                entry["digest_bits"] = digest_bits(entry)
    accepted, refused = assemble_each(made + selfcheck_kernels(), lambda m: HEADER + m[2], ptxas)
    rejected = {entry["instruction"] + f" ({entry['name']})": message for (entry, _, _), message in refused}
    kernels = [entry for entry, _, _ in accepted if not entry["kernel"].startswith("wgself")]
    selfcheck = [entry for entry, _, _ in accepted if entry["kernel"].startswith("wgself")]
    arrays = {k: v for _, arr, _ in accepted for k, v in arr.items()}
    source = HEADER + "\n".join(text for _, _, text in accepted)
    cubin = assemble_module(source, ptxas)
    # output files: D registers (4 bytes each) of every instance, stored probe inputs
    sizes = [(e["probes"] + e.get("full_random", e["random"])) * 128 * e["d_registers"] * 4 + 8 * e["random"] for e in kernels]
    for entry, file in zip(kernels, split_files(sizes, FILE_BYTES, 3)):
        entry["file"] = file
    (bundle / "wgmma.cubin").write_bytes(cubin)
    (bundle / "wgmma.ptx.gz").write_bytes(gzip.compress(source.encode()))
    write_json(
        bundle / "wgmma-plan.json",
        {"kernels": kernels, "selfcheck": selfcheck, "rejected": rejected, "assembler": f"ptxas -arch=sm_90a ({ptxas_version(ptxas)})", "part": part},
    )
    save_arrays(bundle / "wgmma-probes.npz", arrays)
    for name in ("mma_device.py", "wgmma_device.py", "exhaustive_device.py"):
        (bundle / name).write_text((Path(__file__).parent / name).read_text())
    dots = sum((e["probes"] + e["random"]) * 64 * e["n"] for e in kernels)
    files = max((e["file"] for e in kernels), default=0) + 1
    print(
        f"{round_.name}: {len(kernels)} kernels + {len(selfcheck)} self-check kernels assembled, {len(rejected)} rejected: {sorted(rejected)}; "
        f"{dots} dot products; {files} output files"
    )


# ---------------------------------------------------------------------------------------------
# Reading a recording back
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class Recording:
    """One kernel's recorded instances: inputs (stored or regenerated) and D registers."""

    entry: dict
    image: np.ndarray  # [instances, bytes] uint8
    desc: np.ndarray  # [instances, 2] uint64 (relative to the image)
    a: np.ndarray  # [instances, 128, 4] uint32
    c: np.ndarray  # [instances, 128, d_registers] uint32
    meta: np.ndarray  # [instances, 128] uint32
    scale: np.ndarray  # [instances] uint32
    d: np.ndarray  # [stored instances, 128, d_registers] uint32 (recorded; wgmma: every instance)
    base: np.ndarray  # [instances] shared-memory base address seen on the device
    digests: np.ndarray | None = None  # wgmma-more: [instances - stored] uint64, one per remaining instance

    @property
    def name(self) -> str:
        return self.entry["name"]

    @property
    def form_text(self) -> str:
        return self.entry["instruction"]

    @property
    def count(self) -> int:
        return self.image.shape[0]

    @property
    def dots(self) -> int:
        return self.count * 64 * self.entry["n"]

    @property
    def stored(self) -> int:
        """Instances whose D is recorded in full (the first ones); the rest have digests."""
        return self.d.shape[0]


DATA = Path(__file__).resolve().parents[1] / "data" / "sm_90"


def load(directory: Path = DATA, part: str = "") -> list[Recording]:
    """Every kernel recorded under ``directory`` for the round whose part is ``part``
    (``meta-wgmma{-part}.json`` and ``wgmma{-part}-<i>.npz``)."""
    from ptxspec.conformance.silicon.campaign import load_arrays, read_json

    prefix = part_prefix(part)
    meta = read_json(directory / f"meta-{prefix}.json")
    arrays = load_arrays(sorted(directory.glob(f"{prefix}-[0-9]*.npz")))
    out = []
    for entry in meta["kernels"]:
        if f"{entry['name']}_out" not in arrays:
            continue
        probes = {k: v for k, v in arrays.items() if k.startswith(entry["name"] + "_p")}
        x = wgmma_device.kernel_inputs(entry, probes)
        out.append(
            Recording(
                entry,
                x["image"],
                x["desc"],
                x["a"],
                x["d"],
                x["meta"],
                x["scale"],
                arrays[f"{entry['name']}_out"],
                arrays[f"{entry['name']}_base"],
                arrays.get(f"{entry['name']}_digest"),
            )
        )
    return out


def load_all(directory: Path = DATA) -> list[Recording]:
    """The recordings of every part present under ``directory``."""
    return [r for part in PARTS if (directory / f"meta-{part_prefix(part)}.json").exists() for r in load(directory, part)]


def form_of(rec: Recording):
    """The recorded form; the register-A forms are the ``.a`` families (the text without operands
    parses as the descriptor form)."""
    from ptxspec.spec.catalogue import CATALOGUE, Form, parse

    form = parse(rec.form_text)
    return Form(CATALOGUE.family(form.family.key + ".a"), form.choices) if rec.entry["a_registers"] else form


def replay(rec: Recording, i: int, profile):
    """Instance ``i`` through the semantic function
    (:func:`ptxspec.semantics.wgmma.wgmma_mma_async`): its shared-memory image, A's descriptor or
    registers, B's descriptor, the accumulator registers and the kernel's immediates, as the chip
    had them; ``profile`` a profile or its name."""
    from ptxspec.semantics.wgmma import wgmma_mma_async

    e = rec.entry
    return wgmma_mma_async(
        form_of(rec),
        rec.image[i],
        rec.a[i] if e["a_registers"] else int(rec.desc[i, 0]),
        int(rec.desc[i, 1]),
        rec.c[i],
        scale_d=bool(rec.scale[i]),
        imm_scale_a=e["scale_a"],
        imm_scale_b=e["scale_b"],
        imm_trans_a=e["trans_a"],
        imm_trans_b=e["trans_b"],
        sp_meta=rec.meta[i] if e["sparse"] else None,
        sp_sel=e["sp_sel"],
        profile=profile,
    )


def matrices(rec: Recording, i: int) -> tuple[Any, np.ndarray, np.ndarray, Any]:
    """A, B, C, D of instance ``i`` as element-bit matrices, read with OUR layout model (for .sp A
    is the :class:`~ptxspec.semantics.sparse.SparseOperand`: the stored elements and the row of B
    each selects; D is None for an instance recorded only as a digest)."""
    e = rec.entry
    form = form_of(rec)
    a = rec.a[i] if e["a_registers"] else int(rec.desc[i, 0])
    A, B, Cm = wl.wgmma_operands(
        form,
        rec.image[i],
        a,
        int(rec.desc[i, 1]),
        rec.c[i],
        trans_a=e["trans_a"],
        trans_b=e["trans_b"],
        sp_meta=rec.meta[i] if e["sparse"] else None,
        sp_sel=e["sp_sel"],
    )
    # wgmma-more: an instance recorded only as a digest has no D to read
    D = wl.fragment_layout(form["shape"], "d", e["dtype"]).to_matrix(rec.d[i]) if i < rec.stored else None
    return A, B, Cm, D


def effective(rec: Recording, i: int, A, B, Cm):
    """A, B, C as the arithmetic sees them: imm-scale negation, scale-d false -> C = the zero of
    :func:`ptxspec.semantics.wgmma.zero_accumulator` (sm_90: its ``wgmma_scale_d_false_c``, -0; 0)."""
    from ptxspec.semantics.wgmma import negate

    e = rec.entry
    if e["scale_a"] == -1:
        A = negate(A, e["atype"])
    if e["scale_b"] == -1:
        B = negate(B, e["btype"])
    if not rec.scale[i]:  # the zero the sm_90 profile puts in place of C (semantics/wgmma.py)
        from ptxspec.semantics.results import profile_named
        from ptxspec.semantics.wgmma import zero_accumulator

        Cm = np.full(Cm.shape, zero_accumulator(profile_named("sm_90"), e["dtype"]), dtype=np.uint64)
    return A, B, Cm


def model_d(rec: Recording, i: int, model=None) -> np.ndarray:
    """Our D of instance ``i``: exact for integers; the datapath ``model`` (default: the sm_90
    datapath of :mod:`ptxspec.profiles.sm_90.wgmma`) for floats -- through the semantics'
    :func:`ptxspec.semantics.wgmma.multiply` (for .sp: the stored elements times the rows of B they
    select, never B's pruned positions)."""
    from ptxspec.semantics import wgmma
    from ptxspec.semantics.results import SM_90

    e = rec.entry
    A, B, Cm, _ = matrices(rec, i)
    A, B, Cm = effective(rec, i, A, B, Cm)
    if e["dtype"] != "s32":
        model = model or wgmma.datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"])
        if model is None:
            raise LookupError(f"no sm_90 datapath for {rec.name}")
    return wgmma.multiply(form_of(rec), A, B, Cm, profile="sm_90", datapath=model)


def model_registers(rec: Recording, i: int, model=None) -> np.ndarray:
    """Our D of instance ``i`` as the threads' registers ``[128, d_registers]`` uint32."""
    e = rec.entry
    return wl.fragment_layout(f"m64n{e['n']}k{e['k']}", "d", e["dtype"]).from_matrix(model_d(rec, i, model)).astype(np.uint32)


def model_digests(rec: Recording, model=None) -> np.ndarray:
    """The digests of our D of the instances recorded only as digests (wgmma-more), computed with
    the device's :func:`wgmma_device.instance_digests`."""
    regs = [model_registers(rec, i, model) for i in range(rec.stored, rec.count)]
    if not regs:
        return np.zeros(0, dtype=np.uint64)
    return wgmma_device.instance_digests(np.stack(regs), rec.entry["digest_bits"])


def digest_mismatches(rec: Recording, model=None) -> list[int]:
    """Instance numbers (of ``rec``, counting the stored ones) whose recorded digest differs from
    the digest of our D."""
    if rec.digests is None:
        return []
    return [rec.stored + j for j in np.nonzero(model_digests(rec, model) != rec.digests)[0].tolist()]


def verify(directory: Path = DATA, names: list[str] | None = None, log=print, part: str = "") -> dict[str, dict]:
    """Per kernel: instances, dot products, mismatching elements (instances in full) and
    mismatching digests (wgmma-more's other instances) against our model."""
    report = {}
    for rec in load(directory, part):
        if names and rec.name not in names and rec.entry["combination"] not in names:
            continue
        bad, first = 0, None
        try:
            for i in range(rec.stored):
                _, _, _, D = matrices(rec, i)
                diff = np.argwhere(model_d(rec, i) != D)
                bad += len(diff)
                if len(diff) and first is None:
                    first = (i, *map(int, diff[0]))
            blocks = digest_mismatches(rec)
        except LookupError as error:
            report[rec.name] = {"dots": rec.dots, "skipped": str(error)}
            log(f"{rec.name}: skipped ({error})")
            continue
        report[rec.name] = {
            "instances": rec.count,
            "stored": rec.stored,
            "dots": rec.dots,
            "mismatches": bad + len(blocks),
            "first": first,
            "element_mismatches": bad,
            "digest_mismatches": blocks,
        }
        log(
            f"{rec.name}: {rec.count} instances ({rec.count - rec.stored} as digests), {rec.dots} dot products, {bad} mismatching elements"
            + (f" (first at instance/row/col {first})" if first else "")
            + f", {len(blocks)} mismatching digests"
            + (f" (instances {blocks})" if blocks else "")
        )
        if bad or blocks:
            for d in diagnose(rec):
                log(f"    {d}")
    return report


def diagnose(rec: Recording, model=None) -> list[dict]:
    """Per mismatching instance: how many elements, how many distinct rows and columns of D they
    touch (a wrong A layout spoils whole rows, a wrong B layout whole columns, a wrong fragment a
    pattern of threads), and the instance's layouts and scale-d."""
    out = []
    for i in range(rec.stored):
        _, _, _, D = matrices(rec, i)
        bad = model_d(rec, i, model) != D
        if bad.any():
            rows, cols = np.nonzero(bad)
            out.append(
                {
                    "instance": i,
                    "mismatches": int(bad.sum()),
                    "rows": int(np.unique(rows).size),
                    "cols": int(np.unique(cols).size),
                    "layout": rec.entry["layouts"][i],
                    "scale_d": int(rec.scale[i]),
                    "stored": i < rec.entry["probes"],
                }
            )
    # wgmma-more: an instance recorded as a digest says only THAT it differs; our D of it is
    # recomputed element by element, but there is nothing to compare the elements with
    if rec.digests is not None:
        ours = model_digests(rec, model)
        for j in np.nonzero(ours != rec.digests)[0].tolist():
            i = rec.stored + j
            out.append(
                {
                    "instance": i,
                    "digest_block": j,
                    "recorded_digest": f"{int(rec.digests[j]):#018x}",
                    "model_digest": f"{int(ours[j]):#018x}",
                    "layout": rec.entry["layouts"][i],
                    "scale_d": int(rec.scale[i]),
                    "note": "recorded as a digest only: the block differs somewhere; no element can be named",
                }
            )
    return out


def outside_spec(rec: Recording, instances=None, per_instance: int = 256, seed: int = 0) -> tuple[int, int]:
    """(results checked, results outside the spec-level set) of the floating-point kernel ``rec``:
    every designed probe's diagonal element (its design and mirror image) and ``per_instance``
    random elements of every other instance, each against
    :func:`ptxspec.semantics.mma.spec_dot` of its row of A, column of B and C (the manual's
    guarantee, §9.7.15.5.1 "Precision and rounding" = §9.7.14.5.14)."""
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    e = rec.entry
    rng = np.random.default_rng(seed)
    checked = outside = 0
    for i in range(rec.stored) if instances is None else instances:
        A, B, Cm, D = matrices(rec, i)
        A, B, Cm = effective(rec, i, A, B, Cm)
        if i < e["probes"] and "designs" not in e:  # designed probes (wgmma-pruned's designs: random cells too)
            cells = [(r, r) for r in range(32)] + [(r + 32, r) for r in range(32)]
        else:
            cells = list(zip(rng.integers(0, 64, per_instance), rng.integers(0, e["n"], per_instance)))
        # .sp: each row's stored elements and the rows of B they select (B's pruned positions are not read)
        rows_of_b = selected_b(B, A.k_index) if isinstance(A, SparseOperand) else None
        for r, c in cells:
            a, b = (A.stored[r], rows_of_b[r, :, c]) if rows_of_b is not None else (A[r], B[:, c])
            result = spec_dot(e["atype"], e["btype"], e["dtype"], e["dtype"], [int(x) for x in a], [int(x) for x in b], int(Cm[r, c]))
            checked += 1
            outside += not contains(result, int(D[r, c]))
    return checked, outside


def output_digests(directory: Path) -> dict:
    """A small record of a wgmma recording made on another chip: per kernel, the SHA-256 of its D
    registers (``<name>_out``, bytes in order), with the chip's meta (as ``scalar_device.py
    digest`` does for the scalar rounds); compare
    with :func:`output_digests` of conformance/data/sm_90."""
    import hashlib

    meta = json.loads((directory / "meta-wgmma.json").read_text())
    digests = {}
    for f in sorted(directory.glob("wgmma-[0-9]*.npz")):  # the wgmma round's files only
        with np.load(f) as z:
            for k in z.files:
                if k.endswith("_out"):
                    digests[k[: -len("_out")]] = hashlib.sha256(np.ascontiguousarray(z[k]).tobytes()).hexdigest()
    from ptxspec.conformance.silicon.campaign import chip_fields

    return {**chip_fields(meta), "kernels": dict(sorted(digests.items()))}


def as_mma_recording(recs: list[Recording], limit: int | None = None):
    """The float instances of ``recs`` (one combination) as mma problems for :func:`fit_group`:
    A, B, C, D matrices per instance (.sp: one problem of K/2 products per row,
    :func:`ptxspec.semantics.sparse.row_problems`), with the first plan entry."""
    e = recs[0].entry
    mats = []
    for rec in recs:
        for i in range(rec.stored):  # the instances in full (digests: :func:`digest_mismatches`)
            A, B, Cm, D = matrices(rec, i)
            A, B, Cm = effective(rec, i, A, B, Cm)
            if isinstance(A, SparseOperand):
                A, B, Cm = row_problems(A.stored, A.k_index, B, Cm)
                D = D.reshape(Cm.shape)
            mats.append((A, B, Cm, D))
            if limit and len(mats) >= limit:
                break
    return e, mats


def nearest_measured(atype: str, btype: str, dtype: str, sparse: bool):
    """The measured datapath of these types, else of the nearest measured combination (the dense
    form of the same types; then the same A/B family and D type: e4m3.e4m3 for fp8, f16.f16 for
    16-bit types) -- where the fit starts."""
    from ptxspec.semantics.results import SM_90
    from ptxspec.semantics.wgmma import datapath_for

    family = {"e4m3": "e4m3", "e5m2": "e4m3", "bf16": "f16"}.get(atype, atype)
    for key in ((atype, btype, sparse), (atype, btype, False), (family, family, sparse), (family, family, False)):
        found = datapath_for(SM_90, key[0], key[1], dtype, dtype, sparse=key[2])
        if found is not None:
            return found
    return None


def _dimensions(e: dict) -> dict[str, list]:
    """The datapath parameters the wgmma fit varies: those of the mma fit
    (:func:`mma_campaign._dimensions` of the same types), and a reduced-precision sum (the fp8
    wgmma's 13 mantissa bits) rounded "via" a narrow format."""
    fake = mma_campaign.Combination(f"m16n8k{e['k']}", e["dtype"], e["atype"], e["btype"], e["dtype"])
    dims = mma_campaign._dimensions(fake)
    dims["via"] = [None] + [(8, m) for m in (10, 12, 13, 14, 16, 23)]
    return dims


def fit_group(recs: list[Recording], start=None, log=print):
    """The datapath that reproduces every recorded float D of one combination (``recs``: its
    kernels): :func:`mma_campaign.coordinate_search` over :func:`_dimensions` from ``start`` (default
    :func:`nearest_measured`), scored on every instance stored in full; the instances recorded only
    as digests judge the result too (an instance, not an element). Returns (model, mismatches)."""
    from ptxspec.semantics import mma

    e, mats = as_mma_recording(recs)
    score = mma_campaign.mismatch_score(mats, e["atype"], e["btype"], e["dtype"], e["dtype"], e["k"])
    start = start or nearest_measured(e["atype"], e["btype"], e["dtype"], e["sparse"]) or mma.Datapath(alignment_bits=24)
    log(f"  {e['combination']}: start {score(start)} mismatches with {start.describe()}")
    best, best_score = mma_campaign.coordinate_search(start, score, _dimensions(e), e["k"], log, e["combination"])
    blocks = [(r.name, i) for r in recs for i in digest_mismatches(r, best)]
    if any(r.digests is not None for r in recs):
        log(
            f"  {e['combination']}: {len(blocks)} of {sum(len(r.digests) for r in recs if r.digests is not None)} digest instances differ with the fit"
            + (f" ({blocks[:5]})" if blocks else "")
        )
    return best, best_score


def separating_evidence(
    recs: list[Recording], model, names=("alignment_bits", "rounding", "via", "via_rounding", "zero_sign", "chunk", "c_step")
) -> list[tuple[str, int]]:
    """The separating evidence of a fit: for each neighbour of ``model`` (one parameter changed to
    another value :func:`fit_group` searches), the mismatching elements of the recorded instances
    in full. A fit is pinned only where every neighbour misses some."""
    from ptxspec.semantics import mma

    e, mats = as_mma_recording(recs)
    dims = _dimensions(e)
    dims["alignment_bits"] = [model.alignment_bits + d for d in (-2, -1, 1, 2)]  # the nearest widths
    out = []
    for name in names:
        for v in dims.get(name, []):
            if getattr(model, name) == v:
                continue
            candidate = attrs.evolve(model, **{name: v})
            if not vectorisable(candidate, e["atype"], e["btype"], e["k"]):
                continue
            try:
                bad = sum(
                    int(np.count_nonzero(mma.datapath_matrix(candidate, e["atype"], e["btype"], e["dtype"], e["dtype"], A, B, Cm) != D)) for A, B, Cm, D in mats
                )
            except Exception as error:  # a combination of parameters the datapath does not take
                out.append((f"{name}={v!r}: not evaluable ({type(error).__name__})", -1))
                continue
            out.append((f"{name}={v!r}", bad))
    return out


# ---------------------------------------------------------------------------------------------
# The commands (``python -m ptxspec.conformance.silicon wgmma ...``): a round's part and a recording
# ---------------------------------------------------------------------------------------------


def _float_groups(recs: list[Recording], names: list[str] | None) -> dict[str, list[Recording]]:
    """The kernels of ``recs`` grouped by float combination, only those in ``names`` unless it is empty."""
    groups: dict[str, list[Recording]] = {}
    for rec in recs:
        if rec.entry["dtype"] != "s32" and (not names or rec.entry["combination"] in names):
            groups.setdefault(rec.entry["combination"], []).append(rec)
    return groups


def fit(directory: Path = DATA, names: list[str] | None = None, log=print, part: str = "") -> dict[str, dict]:
    """:func:`fit_group` of every float combination of the round (only those in ``names``)."""
    out = {}
    for name, group in _float_groups(load(directory, part), names).items():
        model, bad = fit_group(group, log=log)
        out[name] = {"model": model.describe(), "datapath": model, "mismatches": bad}
        log(f"{name}: {bad} mismatches with {model.describe()}")
    return out


def spec_check(directory: Path = DATA, names: list[str] | None = None, log=print, part: str = "", per_instance: int = 64) -> dict[str, dict]:
    """:func:`outside_spec` of every float kernel of the round (only the combinations in ``names``):
    per kernel, the results checked against the spec-level sets and those outside."""
    out = {}
    for group in _float_groups(load(directory, part), names).values():
        for rec in group:
            checked, outside = outside_spec(rec, per_instance=per_instance)
            out[rec.name] = {"checked": checked, "outside": outside}
            log(f"{rec.name}: {checked} results checked against the spec-level sets, {outside} outside")
    return out


def separate(directory: Path = DATA, names: list[str] | None = None, log=print, part: str = "") -> dict[str, list[tuple[str, int]]]:
    """:func:`separating_evidence` of the sm_90 datapath of each float combination of the round
    (only those in ``names``) that the profile pins."""
    from ptxspec.semantics.results import SM_90
    from ptxspec.semantics.wgmma import datapath_for

    out = {}
    for name, group in _float_groups(load(directory, part), names).items():
        e = group[0].entry
        model = datapath_for(SM_90, e["atype"], e["btype"], e["dtype"], e["dtype"], sparse=e["sparse"])
        if model is None:
            continue
        out[name] = separating_evidence(group, model)
        for text, bad in out[name]:
            log(f"{name}: {text}: {bad} mismatches")
    return out
