"""The mma probe campaign of issue 7: which D does sm_90 silicon compute for mma.sync.aligned?

Two steps, one command each::

    python -m ptxspec.conformance.silicon.mma_campaign prepare BUNDLE [--random N]   # here (ptxas)
    python3 conformance/silicon/mma_device.py run BUNDLE OUT                        # on the GPU

``prepare`` assembles one kernel per :data:`COMBINATIONS` entry for sm_90a (a combination that
ptxas refuses is listed with ptxas's message and left out), builds the designed probes (matrices of
element bit patterns, placed into the lanes' registers with the fragment layouts of §9.7.14.5) and
writes the plan. The random inputs are not stored: :func:`mma_device.random_registers` regenerates
them from the seed, here and on the device, bit for bit. ``OUT`` goes to conformance/data/sm_90/
unchanged (``mma-*.npz``, ``meta-mma.json``); :func:`load` reads it back as registers.

Three more commands read a recording: ``verify DIR`` compares every recorded D with the sm_90
profile, ``fit DIR [NAME ...]`` searches the datapath parameters of
:class:`ptxspec.semantics.mma.Datapath` (coordinate search scored on the designed probes, then
checked on every mma) and ``spec-check DIR`` counts the recorded results outside the spec-level
sets.

The designed probes separate the candidate datapath models of :mod:`ptxspec.semantics.mma`: each
one is a dot product ``sum_k a_k*b_k + c`` whose exact value and whose results under the candidate
models differ (see :func:`designs`):

* ``cancel``: ``2^t - 2^t + 2^(t-d)`` for d = 0..70 (every position of the tiny term, with the big
  pair from products or from C, the tiny term positive, negative or with several bits): the tiny
  term survives exactly when the aligned addends keep d bits below the largest exponent -- this
  measures the alignment width, and a negative tiny term shows whether truncation is toward zero
  or toward minus infinity;
* ``sticky``: ``2^t + 2^(t-24) +- 2^(t-d)``: a tie of the f32 result broken (or not) by a far term;
* ``ties``: sums that land exactly on, just above or just below a rounding boundary of the
  output format, both signs: the final rounding mode;
* ``chain``: ``c = 1`` plus several half-ulp products: one final rounding vs a rounding after each
  group of k products (the group size);
* ``subnormal``, ``overflow``, ``special``, ``zero``: subnormal inputs, products and results;
  overflow of products, of the sum, of the output format; NaN and infinity inputs, inf - inf,
  0 * inf; the sign of exact zeros;
* ``order`` (f64): sums whose result depends on the order of a chain of fused multiply-adds.

Each design takes one row of A, one column of B and one element of C (16 designs per mma: row r
with column r mod 8); the other 112 dot products of the mma are cross terms, recorded as well.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon.record import assemble
from ptxspec.conformance.silicon import mma_device
from ptxspec.semantics.numerics import Exact, Rounding, canonical_nan, decode, infinity, round_value, to_fraction
from ptxspec.spec.types import FORMATS

#: Random mma per combination (besides the designed probes): 1000, i.e. 1.28 * 10^5 dot products
#: for the m16n8 shapes (the issue asks for >= 10^5 per combination); m8n8k4 (64 dot products per
#: mma) records twice as many. The generator is counter-based: a run with more random mma records
#: these first ones and then more (the first H100 run recorded 10^4 of each).
RANDOM = 1000
#: At most this many designed probe mma per combination (8 designs each, and their mirror images).
PROBE_MMA = 1700
#: Raw bytes per output file at most (the device machine returns at most 8 files of 16 MiB).
FILE_BYTES = 13 << 20


@attrs.frozen
class Combination:
    """One ``mma.sync.aligned`` form to record: its shape and the types of D, A, B, C."""

    shape: str
    d: str
    a: str
    b: str
    c: str
    qualifier: str = ""  # ".satfinite", ".rz", ...
    #: Random mma to record: this many times the campaign's count (m8n8k4 has half the dot
    #: products per mma of the m16n8 shapes).
    random_scale: int = 1

    @property
    def name(self) -> str:
        q = self.qualifier.replace(".", "-")
        return f"{self.shape}-{self.d}-{self.a}-{self.b}-{self.c}{q}"

    @property
    def instruction(self) -> str:
        sat = ".satfinite" if self.qualifier == ".satfinite" else ""
        rnd = self.qualifier if self.qualifier in (".rn", ".rz", ".rm", ".rp") else ""
        return f"mma.sync.aligned.{self.shape}.row.col{sat}.{self.d}.{self.a}.{self.b}.{self.c}{rnd}"

    @property
    def mnk(self) -> tuple[int, int, int]:
        m, rest = self.shape[1:].split("n")
        n, k = rest.split("k")
        return int(m), int(n), int(k)


COMBINATIONS: tuple[Combination, ...] = (
    Combination("m16n8k16", "f32", "f16", "f16", "f32"),
    Combination("m16n8k16", "f16", "f16", "f16", "f16"),
    Combination("m16n8k16", "f32", "f16", "f16", "f16"),  # ptxas: .dtype must be .f16 when .ctype is
    Combination("m16n8k16", "f16", "f16", "f16", "f32"),
    Combination("m16n8k16", "f32", "bf16", "bf16", "f32"),
    Combination("m16n8k8", "f32", "tf32", "tf32", "f32"),
    Combination("m16n8k32", "f32", "e4m3", "e4m3", "f32"),
    Combination("m16n8k32", "f32", "e5m2", "e5m2", "f32"),
    Combination("m16n8k32", "f32", "e4m3", "e5m2", "f32"),
    Combination("m16n8k32", "f16", "e4m3", "e4m3", "f16"),
    Combination("m16n8k32", "f16", "e5m2", "e4m3", "f16"),
    Combination("m8n8k4", "f64", "f64", "f64", "f64", random_scale=2),
    Combination("m16n8k8", "f64", "f64", "f64", "f64", ".rz"),
    Combination("m16n8k32", "s32", "s8", "s8", "s32"),
    Combination("m16n8k32", "s32", "s8", "u8", "s32", ".satfinite"),
)

INTEGER = {"s8": (8, True), "u8": (8, False), "s32": (32, True)}


def element_bits(t: str) -> int:
    return INTEGER[t][0] if t in INTEGER else (32 if t == "tf32" else FORMATS[t].width)


def operand_description(combo: Combination, operand: str) -> dict:
    """Registers per lane and element type of one operand, as the device generator reads them."""
    m, n, k = combo.mnk
    t = getattr(combo, operand)
    rows, cols = {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[operand]
    bits = element_bits(t)
    register_bits = 64 if t == "f64" else 32
    registers = rows * cols * bits // (32 * register_bits)
    if t in INTEGER:
        element = {"type": t, "kind": "int", "bits": bits, "signed": INTEGER[t][1]}
    else:
        f = FORMATS[t]
        element = {"type": t, "kind": "float", "bits": bits, "exponent_bits": f.exponent_bits, "mantissa_bits": f.mantissa_bits, "shift": f.shift}
    return {"registers": registers, "register_bits": register_bits, "rows": rows, "cols": cols, "element": element}


# ---------------------------------------------------------------------------------------------
# Fragment layouts
# ---------------------------------------------------------------------------------------------


def _manual_position(shape: str, operand: str, bits: int, lane: int, i: int) -> tuple[int, int]:
    """(row, col) of element ``i`` (in the order a0, a1, ... of §9.7.14.5) held by ``lane``, for the
    shapes of :data:`COMBINATIONS`: the manual's formulas with groupID = %laneid >> 2 and
    threadID_in_group = %laneid % 4. Used only where H7's matrix_layout is not there yet."""
    g, t = lane >> 2, lane % 4
    if operand in "cd":
        if shape == "m8n8k4":
            return g, t * 2 + i
        return g + 8 * (i >= 2), t * 2 + (i & 1)
    if shape == "m8n8k4":
        return (g, t) if operand == "a" else (t, g)
    if shape == "m16n8k16":
        if operand == "a":
            return g + 8 * ((i // 2) % 2), t * 2 + (i & 1) + 8 * (i >= 4)
        return t * 2 + (i & 1) + 8 * (i >= 2), g
    if shape == "m16n8k8":
        if operand == "a":
            return g + 8 * (i % 2), t + 4 * (i >= 2)
        return t + 4 * i, g
    if shape == "m16n8k32" and bits == 8:
        if operand == "a":
            return g + 8 * ((i // 4) % 2), t * 4 + (i & 3) + 16 * (i >= 8)
        return t * 4 + (i & 3) + 16 * (i >= 4), g
    raise KeyError((shape, operand, bits))


@attrs.frozen
class _ManualLayout:
    rows: int
    cols: int
    element_bits: int
    register_bits: int
    registers: int
    positions: tuple  # [lane][register][index] -> (row, col)

    def to_matrix(self, lanes) -> np.ndarray:
        lanes = np.asarray(lanes, dtype=np.uint64)
        out = np.zeros(lanes.shape[:-2] + (self.rows, self.cols), dtype=np.uint64)
        mask = np.uint64((1 << self.element_bits) - 1)
        for lane, regs in enumerate(self.positions):
            for r, elements in enumerate(regs):
                for idx, (row, col) in enumerate(elements):
                    out[..., row, col] = (lanes[..., lane, r] >> np.uint64(idx * self.element_bits)) & mask
        return out

    def from_matrix(self, matrix) -> np.ndarray:
        matrix = np.asarray(matrix, dtype=np.uint64)
        out = np.zeros(matrix.shape[:-2] + (32, self.registers), dtype=np.uint64)
        for lane, regs in enumerate(self.positions):
            for r, elements in enumerate(regs):
                for idx, (row, col) in enumerate(elements):
                    out[..., lane, r] |= matrix[..., row, col] << np.uint64(idx * self.element_bits)
        return out


def _manual_layout(shape: str, operand: str, element_type: str) -> _ManualLayout:
    combo = Combination(shape, element_type, element_type, element_type, element_type)
    desc = operand_description(combo, operand)
    bits = desc["element"]["bits"]
    per = desc["register_bits"] // bits
    positions = tuple(
        tuple(tuple(_manual_position(shape, operand, bits, lane, r * per + idx) for idx in range(per)) for r in range(desc["registers"]))
        for lane in range(32)
    )
    return _ManualLayout(desc["rows"], desc["cols"], bits, desc["register_bits"], desc["registers"], positions)


def layout(shape: str, operand: str, element_type: str):
    """The fragment layout of H7's semantics/matrix_layout.py (the interface of issue 7), or the
    manual's formulas for this campaign's shapes until that module exists."""
    try:
        from ptxspec.semantics.matrix_layout import fragment_layout
    except ImportError:
        return _manual_layout(shape, operand, element_type)
    return fragment_layout(shape, operand, element_type)


def matrices_to_registers(combo: Combination, operand: str, matrices: np.ndarray) -> np.ndarray:
    """``[batch, rows, cols]`` element bits -> ``[batch, 32, registers]`` register words."""
    return np.asarray(layout(combo.shape, operand, getattr(combo, operand)).from_matrix(matrices))


def registers_to_matrices(combo: Combination, operand: str, registers: np.ndarray) -> np.ndarray:
    return np.asarray(layout(combo.shape, operand, getattr(combo, operand)).to_matrix(registers))


# ---------------------------------------------------------------------------------------------
# Designed probes
# ---------------------------------------------------------------------------------------------

#: A design: K (a, b) value pairs and c; a value is a Fraction, or "nan", "inf", "-inf", "-0",
#: or ("bits", n) for a raw encoding.
Design = tuple[tuple[tuple[object, object], ...], object]

P2 = Fraction(2)


def encode(t: str, value) -> int:
    """The exact encoding of ``value`` in type ``t``; ValueError if it is not representable."""
    if isinstance(value, tuple) and value[0] == "bits":
        return value[1]
    if t in INTEGER:
        bits, signed = INTEGER[t]
        v = int(value)
        if not (-(1 << (bits - 1)) if signed else 0) <= v < (1 << (bits - (1 if signed else 0))):
            raise ValueError("out of range")
        return v & ((1 << bits) - 1)
    fmt = FORMATS[t]
    if value == "nan":
        return canonical_nan(fmt)
    if value in ("inf", "-inf"):
        if not fmt.has_infinity:
            raise ValueError("no infinity")
        return infinity(fmt, int(value == "-inf"))
    if value == "-0":
        return round_value(Exact(1, 0), fmt)
    v = Fraction(value)
    sign, den = int(v < 0), v.denominator
    if den & (den - 1):
        raise ValueError("not dyadic")
    x = Exact(sign, abs(v.numerator), -(den.bit_length() - 1))
    bits = round_value(x, fmt, Rounding.RN)
    back = decode(fmt, bits)
    if not isinstance(back, Exact) or to_fraction(back) != v:
        raise ValueError("not representable")
    return bits


def _range(t: str) -> tuple[int, int]:
    """Exponents of the powers of two that type ``t`` represents (subnormals included)."""
    f = FORMATS[t]
    return f.min_normal_exponent - f.mantissa_bits, f.max_exponent


def designs(combo: Combination) -> list[Design]:
    """The designed dot products of ``combo`` (unrepresentable ones are dropped by :func:`probes`)."""
    _, _, k = combo.mnk
    if combo.a in INTEGER:
        return _integer_designs(combo, k)
    lo_a, hi_a = _range(combo.a)
    lo_b, hi_b = _range(combo.b)
    zero = (Fraction(0), Fraction(0))
    out: list[Design] = []

    def product(e: int, sign: int = 1, mant: Fraction = Fraction(1)):
        """(a, b) with a * b = sign * mant * 2^e, or None."""
        lo, hi = lo_a + lo_b, hi_a + hi_b
        if not lo <= e <= hi:
            return None
        ea = max(lo_a, min(hi_a, e - (lo_b + hi_b) // 2))
        eb = e - ea
        if not lo_b <= eb <= hi_b:
            ea = e - max(lo_b, min(hi_b, eb))
            eb = e - ea
        return (sign * mant * P2**ea, P2**eb)

    def terms(*pairs, c=Fraction(0)) -> Design | None:
        if any(p is None for p in pairs):
            return None
        row = list(pairs)[:k] + [zero] * (k - len(pairs))
        return (tuple(row), c)

    # Exponents of interest for the "big" term: the unit, near the top and bottom of the products.
    top = hi_a + hi_b
    bigs = sorted({0, 4, min(top, 15), top - 1, min(top, 30)})
    for t in bigs:
        for d in range(0, 72):
            for tiny_sign, tiny_mant in ((1, Fraction(1)), (-1, Fraction(1)), (1, Fraction(3)), (-1, Fraction(7, 4))):
                tiny = product(t - d, tiny_sign, tiny_mant)
                # cancel: big pair from products
                out.append(terms(product(t), product(t, -1), tiny))
                # cancel: big from C, tiny from a product
                out.append(terms(product(t, -1), tiny, c=P2**t))
                # cancel: big pair from products, tiny from C
                out.append(terms(product(t), product(t, -1), c=tiny_sign * tiny_mant * P2 ** (t - d)))
                # sticky: 2^t + 2^(t-24) (a tie of f32) + tiny, and a tie of f16 (2^(t-11))
                if d > 24:
                    out.append(terms(product(t), product(t - 24), tiny))
                if d > 11:
                    out.append(terms(product(t), product(t - 11), tiny))
            # far C: C = 2^(t+d) and products 2^t: is C aligned with the products?
            out.append(terms(product(t), product(t), c=P2 ** (t + d)))
            out.append(terms(product(t), product(t), c=-(P2 ** (t + d))))
            out.append(terms(product(t), c=P2 ** (t + d) + P2 ** (t + d - 24)))
    # ties at the output format's last place: 1 + j/8 ulp, both signs, from products and C.
    for p in (24, 11):  # f32 and f16 precisions
        for j in range(1, 16):
            for s in (1, -1):
                frac = Fraction(j, 8) * P2 ** (1 - p)
                out.append(terms(product(0, s), product(0, s, frac), c=Fraction(0)))
                out.append(terms(product(-(p + 2), s, Fraction(j)), c=s * Fraction(1)))
                out.append(terms(product(0, s), *[product(-p - 1, s)] * j if j <= k - 1 else [], c=Fraction(0)))
    # chains: c = 1 and n products of half an ulp (and of a quarter): one rounding or several?
    for p in (24, 11):
        for n in range(1, k + 1):
            for e in (-p, -p - 1, -p - 2):
                for s in (1, -1):
                    out.append(terms(*[product(e, s)] * n, c=Fraction(1)))
                    out.append(terms(product(0), *[product(e, s)] * (n - 1), c=Fraction(0)))
                    # the big term last, then first position in k
                    out.append(terms(*[product(e, s)] * (n - 1) + [zero] * (k - n) + [product(0)], c=Fraction(0)))
    # products with full significands: (1 + 2^-m)(1 + 2^-m) and the like, against c = -1.
    fa, fb = FORMATS[combo.a], FORMATS[combo.b]
    for i in range(1, fa.mantissa_bits + 1):
        for j in range(1, fb.mantissa_bits + 1):
            a = 1 + P2**-i + P2**-fa.mantissa_bits
            b = 1 + P2**-j + P2**-fb.mantissa_bits
            out.append(terms((a, b), c=Fraction(-1)))
            out.append(terms((a, b), (-a, b), (a, -b), c=Fraction(1)))
    # subnormals: inputs, products below the output's normal range, results.
    f_c = FORMATS[combo.c]
    for ea in (lo_a, lo_a + 1, lo_a + 3):
        for eb in (0, lo_b, hi_b):
            out.append(terms((P2**ea, P2**eb), c=Fraction(0)))
            out.append(terms((P2**ea, P2**eb), c=Fraction(1)))
            out.append(terms((P2**ea, P2**eb), (P2**ea, P2**eb), c=-(P2 ** (ea + eb))))
    for e in range(f_c.min_normal_exponent - f_c.mantissa_bits - 4, f_c.min_normal_exponent + 2):
        for s in (1, -1):
            out.append(terms(product(e, s), c=Fraction(0)))
            out.append(terms(product(e, s, Fraction(3)), c=Fraction(0)))
            out.append(terms(product(f_c.min_normal_exponent, s), c=-s * (P2 ** f_c.min_normal_exponent - P2 ** (e))))
    c_min = P2 ** (f_c.min_normal_exponent - f_c.mantissa_bits)
    for j in (1, 2, 3, 1 << f_c.mantissa_bits):
        out.append(terms(c=j * c_min))
        out.append(terms(c=-j * c_min))
        out.append(terms(product(0), product(0, -1), c=j * c_min))
    # overflow: products and sums beyond the output's range, cancelled and not.
    f_d = FORMATS[combo.d]
    d_max = (2 - P2**-f_d.mantissa_bits) * P2**f_d.max_exponent
    for e in (f_d.max_exponent - 1, f_d.max_exponent, f_d.max_exponent + 1, top):
        out.append(terms(product(e), product(e), c=Fraction(0)))
        out.append(terms(product(e), product(e, -1), c=Fraction(1)))
        out.append(terms(product(e), product(e), product(e, -1), c=Fraction(0)))
        out.append(terms(product(e, -1), product(e, -1), c=Fraction(0)))
        out.append(terms(product(e), c=-d_max))
    for ulps in (Fraction(1, 2), Fraction(1, 4), Fraction(3, 4), Fraction(1)):
        out.append(terms(product(f_d.max_exponent - f_d.mantissa_bits - 1, 1, ulps * 2), c=d_max))
        out.append(terms(product(f_d.max_exponent - f_d.mantissa_bits - 1, -1, ulps * 2), c=-d_max))
        if combo.c == combo.d:
            out.append(terms(product(0), c=d_max))
    # NaN, infinity, zeros.
    one = (Fraction(1), Fraction(1))
    specials_a = ["nan", "inf", "-inf"]
    for sa in specials_a:
        out.append(terms((sa, Fraction(1)), c=Fraction(0)))
        out.append(terms((Fraction(1), sa), one, c=Fraction(1)))
        out.append(terms((sa, Fraction(0)), c=Fraction(1)))
        out.append(terms((Fraction(0), sa), c=Fraction(1)))
        out.append(terms(one, c=sa))
        out.append(terms((sa, Fraction(1)), c="nan"))
    out.append(terms(("inf", Fraction(1)), ("-inf", Fraction(1)), c=Fraction(0)))
    out.append(terms(("inf", Fraction(1)), ("inf", Fraction(-1)), c=Fraction(0)))
    out.append(terms(("inf", Fraction(1)), c="-inf"))
    out.append(terms(("inf", Fraction(1)), c="inf"))
    out.append(terms(("inf", Fraction(1)), ("inf", Fraction(1)), c=Fraction(0)))
    for pa in _nan_payloads(combo.a):
        out.append(terms((pa, Fraction(1)), c=Fraction(0)))
        out.append(terms(one, (pa, Fraction(1)), c=Fraction(0)))
    for pc in _nan_payloads(combo.c):
        out.append(terms(one, c=pc))
        if _nan_payloads(combo.a):
            out.append(terms((_nan_payloads(combo.a)[0], Fraction(1)), c=pc))
    for c in (Fraction(0), "-0"):
        out.append(terms(c=c))
        out.append(terms(("-0", Fraction(1)), c=c))
        out.append(terms(("-0", Fraction(1)), (Fraction(0), "-0"), c=c))
        out.append(terms((Fraction(0), Fraction(1)), c=c))
        out.append(terms(one, (Fraction(-1), Fraction(1)), c=c))
    if combo.a == "f64":
        out += _order_designs(k)
    return [d for d in out if d is not None]


def _nan_payloads(t: str) -> list:
    """A few NaN encodings of ``t`` besides the canonical one (signalling, negative, payloads)."""
    f = FORMATS[t]
    if f.nan.value != "ieee":
        return []
    top = f.exponent_field_max << f.mantissa_bits
    sign = 1 << (f.exponent_bits + f.mantissa_bits)
    quiet = 1 << (f.mantissa_bits - 1)
    raw = [top | quiet | 1, sign | top | quiet, top | 1, sign | top | (quiet >> 1)]
    return [("bits", r << f.shift) for r in raw if r & ((1 << f.mantissa_bits) - 1)]


def _order_designs(k: int) -> list[Design]:
    """f64: sums whose value depends on the order of a chain of fused multiply-adds."""
    out: list[Design] = []
    big = P2**53
    one = Fraction(1)
    base = [(big, one), (one, one), (-big, one), (one, one)]
    for rot in range(k):
        row = base[rot:] + base[:rot]
        row = (row * ((k + 3) // 4))[:k]
        for c in (Fraction(0), one, big, -big):
            out.append((tuple(row), c))
    for i in range(k):
        for c in (Fraction(0), one):
            row = [(Fraction(0), Fraction(0))] * k
            row[i] = (big, one)
            row[(i + 1) % k] = (one, one)
            out.append((tuple(row), c - big if c else -big + one))
    return out


def _integer_designs(combo: Combination, k: int) -> list[Design]:
    bits_a, signed_a = INTEGER[combo.a]
    bits_b, signed_b = INTEGER[combo.b]
    a_lo, a_hi = (-(1 << (bits_a - 1)), (1 << (bits_a - 1)) - 1) if signed_a else (0, (1 << bits_a) - 1)
    b_lo, b_hi = (-(1 << (bits_b - 1)), (1 << (bits_b - 1)) - 1) if signed_b else (0, (1 << bits_b) - 1)
    out: list[Design] = []
    for pa in (a_lo, a_hi):
        for pb in (b_lo, b_hi):
            for c in (0, 1, -1, (1 << 31) - 1, -(1 << 31), (1 << 31) - 1 - k * pa * pb, -(1 << 31) + 5):
                out.append(((((pa, pb),) * k), c))
                out.append((((pa, pb),) + ((0, 0),) * (k - 1), c))
    return out


def _negate(t: str, bits: int) -> int:
    """``bits`` with the sign flipped (two's complement negation for integers)."""
    if t in INTEGER:
        width = INTEGER[t][0]
        return (-bits) & ((1 << width) - 1)
    f = FORMATS[t]
    return bits ^ f.sign_mask


def probes(combo: Combination) -> dict[str, np.ndarray]:
    """The designed probes as A, B, C matrices of element bits ``[mma, rows, cols]``.

    Design s of an mma sits in row r = s (< N) of A, column r of B and C[r, r]; row r + N (M = 2N)
    holds the same design with A and C negated (the mirror image: it tells a rounding toward
    zero from a rounding toward one infinity). Other elements of C are zero.
    """
    m, n, k = combo.mnk
    encoded = []
    for pairs, c in designs(combo):
        try:
            encoded.append(([(encode(combo.a, a), encode(combo.b, b)) for a, b in pairs], encode(combo.c, c)))
        except (ValueError, ZeroDivisionError):
            continue
    per = min(m, n)
    slots = PROBE_MMA * per
    # Beyond PROBE_MMA mma, sample the designs with a fixed stride, so every family keeps members.
    chosen = encoded if len(encoded) <= slots else [encoded[(i * len(encoded)) // slots] for i in range(slots)]
    count = (len(chosen) + per - 1) // per
    A = np.zeros((count, m, k), dtype=np.uint64)
    B = np.zeros((count, k, n), dtype=np.uint64)
    C = np.zeros((count, m, n), dtype=np.uint64)
    for s, (pairs, c) in enumerate(chosen):
        t, r = divmod(s, per)
        for kk, (a, b) in enumerate(pairs):
            A[t, r, kk] = a
            B[t, kk, r] = b
            if m > n:
                A[t, r + n, kk] = _negate(combo.a, a)
        C[t, r, r] = c
        if m > n:
            C[t, r + n, r] = _negate(combo.c, c)
    return {"a": A, "b": B, "c": C, "designed": len(chosen), "available": len(encoded)}


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def kernel(combo: Combination, name: str) -> str:
    """One warp per mma: lane L of warp W loads its registers from ``X[W, L, :]``, executes the
    mma and stores D[W, L, :]; a warp past ``n`` leaves as a whole (so .aligned holds)."""
    ops = {o: operand_description(combo, o) for o in "abcd"}
    lines = [
        "  .reg .pred %p;", "  .reg .b32 %t<8>;", "  .reg .b64 %q<16>;",
        *[f"  .reg .b{ops[o]['register_bits']} %{o}<{max(2, ops[o]['registers'])}>;" for o in "abcd"],
        "  mov.u32 %t0, %tid.x;", "  mov.u32 %t1, %ctaid.x;", "  mov.u32 %t2, %ntid.x;",
        "  mad.lo.u32 %t3, %t1, %t2, %t0;", "  shr.u32 %t4, %t3, 5;", "  ld.param.u32 %t5, [n];",
        "  setp.ge.u32 %p, %t4, %t5;", "  @%p bra DONE;", "  cvt.u64.u32 %q0, %t3;",
    ]
    for i, o in enumerate("abcd"):
        width = ops[o]["register_bits"] // 8
        lines += [f"  ld.param.u64 %q{1 + i}, [p{o}];", f"  cvta.to.global.u64 %q{1 + i}, %q{1 + i};",
                  f"  mul.lo.u64 %q{5 + i}, %q0, {ops[o]['registers'] * width};", f"  add.u64 %q{1 + i}, %q{1 + i}, %q{5 + i};"]
    for i, o in enumerate("abc"):
        width = ops[o]["register_bits"] // 8
        for r in range(ops[o]["registers"]):
            lines.append(f"  ld.global.b{ops[o]['register_bits']} %{o}{r}, [%q{1 + i}+{r * width}];")
    reg = lambda o: "{" + ", ".join(f"%{o}{r}" for r in range(ops[o]["registers"])) + "}"
    lines.append(f"  {combo.instruction} {reg('d')}, {reg('a')}, {reg('b')}, {reg('c')};")
    width = ops["d"]["register_bits"] // 8
    for r in range(ops["d"]["registers"]):
        lines.append(f"  st.global.b{ops['d']['register_bits']} [%q4+{r * width}], %d{r};")
    lines += ["DONE:", "  ret;"]
    params = ",\n  ".join([f".param .u64 p{o}" for o in "abcd"] + [".param .u32 n"])
    return f".visible .entry {name}(\n  {params}\n)\n{{\n" + "\n".join(lines) + "\n}\n"




def seed_of(combo: Combination) -> int:
    import zlib

    return zlib.crc32(combo.name.encode())


def prepare(bundle: Path, random: int = RANDOM) -> None:
    bundle.mkdir(parents=True, exist_ok=True)
    named = [(f"mma{i:02d}", c) for i, c in enumerate(COMBINATIONS)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda nc: assemble(HEADER + kernel(nc[1], nc[0])), named))
    accepted = [(n, c) for (n, c), (ok, _, _) in zip(named, verdicts) if ok]
    rejected = {c.instruction: msg for (n, c), (ok, msg, _) in zip(named, verdicts) if not ok}
    ok, msg, cubin = assemble(HEADER + "\n".join(kernel(c, n) for n, c in accepted))
    if not ok:
        raise SystemExit(f"the combined module did not assemble: {msg}")
    plan, arrays = [], {}
    file, used = 0, 0
    for name, combo in accepted:
        p = probes(combo)
        n_random = random * combo.random_scale
        ops = {o: operand_description(combo, o) for o in "abcd"}
        size = 0
        for o in "abc":
            regs = matrices_to_registers(combo, o, p[o])
            arrays[f"{combo.name}_{o}"] = regs.astype(np.uint64 if ops[o]["register_bits"] == 64 else np.uint32)
            size += arrays[f"{combo.name}_{o}"].nbytes
        size += (p["a"].shape[0] + n_random) * 32 * ops["d"]["registers"] * ops["d"]["register_bits"] // 8
        if used and used + size > FILE_BYTES:
            file, used = file + 1, 0
        used += size
        plan.append({
            "name": combo.name, "kernel": name, "instruction": combo.instruction, "file": file, "operands": ops,
            "probes": int(p["a"].shape[0]), "designed": p["designed"], "random": n_random, "seed": seed_of(combo),
        })
    if file >= 7:
        raise SystemExit(f"{file + 1} output files: more than the 7 that come back beside the meta file")
    (bundle / "mma.cubin").write_bytes(cubin)
    (bundle / "mma-plan.json").write_text(json.dumps({"combinations": plan, "rejected": rejected}, indent=1))
    np.savez_compressed(bundle / "mma-probes.npz", **arrays)
    print(f"{len(accepted)} combinations assembled, {len(rejected)} rejected by ptxas: {sorted(rejected)}")


# ---------------------------------------------------------------------------------------------
# Reading a recording back
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Recording:
    """One combination's recorded mma: registers ``[mma, 32, registers]`` of A, B, C and D."""

    combination: Combination
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    probes: int


def combination_named(name: str) -> Combination:
    return next(c for c in COMBINATIONS if c.name == name)


def load(directory: Path) -> list[Recording]:
    """Every combination recorded under ``directory`` (``meta-mma.json`` and ``mma-*.npz``)."""
    meta = json.loads((directory / "meta-mma.json").read_text())
    arrays: dict[str, np.ndarray] = {}
    for f in sorted(directory.glob("mma-*.npz")):
        with np.load(f) as z:
            arrays.update({k: z[k] for k in z.files})
    out = []
    for entry in meta["combinations"]:
        probes_ = {f"{entry['name']}_{o}": arrays[f"{entry['name']}_{o}"] for o in "abc"}
        a, b, c = mma_device.combination_inputs(entry, probes_)
        out.append(Recording(combination_named(entry["name"]), a, b, c, arrays[f"{entry['name']}_d"], entry["probes"]))
    return out


# ---------------------------------------------------------------------------------------------
# Fitting the datapath model to a recording
# ---------------------------------------------------------------------------------------------


def matrices(rec: Recording, select=slice(None)) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C, D of the recorded mma ``select`` as matrices of element bits."""
    combo = rec.combination
    return tuple(registers_to_matrices(combo, o, getattr(rec, o)[select]) for o in "abcd")  # type: ignore[return-value]


def model_d(model, combo: Combination, A, B, C) -> np.ndarray:
    from ptxspec.semantics.mma import datapath_matrix

    return datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A, B, C)


def mismatches(model, combo: Combination, A, B, C, D) -> np.ndarray:
    """Indices ``(mma, row, col)`` where the model's D differs from the recorded one."""
    return np.argwhere(model_d(model, combo, A, B, C) != D)


def _dimensions(combo: Combination) -> dict[str, list]:
    from ptxspec.semantics.numerics import Rounding

    _, _, k = combo.mnk
    chunks = [None] + [c for c in (2, 4, 8, 16) if c < k]
    accumulators = [None, (8, 10), (8, 12), (8, 13), (8, 14), (8, 15), (8, 16), (8, 23), (8, 24), (8, 25), (8, 26), (8, 28), (8, 31), (8, 34)]
    return {
        "alignment_bits": list(range(0, 46)),
        "reference": ["exponent", "msb"],
        "truncation": ["zero", "floor"],
        "rounding": [Rounding.RN, Rounding.RZ],
        "chunk": chunks,
        "accumulator": accumulators,
        "accumulator_rounding": [Rounding.RZ, Rounding.RN],
        "c_step": ["first", "last", "alone", "tree"],
        "via": [None, (8, 23)] if combo.d == "f16" else [None],
        "via_rounding": [Rounding.RZ, Rounding.RN],
        "flush_inputs": [False, True],
        "flush_c": [False, True],
        "flush_output": [False, True],
        "zero_sign": ["ieee", "positive"],
        "order": ["ascending", "descending", "pairs"],
        "overflow": ["rounding", "infinity"],
    }


def fit(rec: Recording, sample: int | None = None, start=None, log=print):
    """Coordinate search for a datapath that reproduces the recorded D of ``rec``: from ``start``
    (or a plain one), try every value of one parameter with the others fixed, keep the best, and
    repeat until no parameter improves; scored on the designed probes (and ``sample`` random mma).
    Returns (model, mismatches on the scored mma, the table of scores seen)."""
    import attrs as _attrs

    from ptxspec.semantics.mma import Datapath, vectorisable

    combo = rec.combination
    _, _, k = combo.mnk
    n = rec.probes + (sample or 0)
    A, B, C, D = matrices(rec, slice(0, n))
    seen: dict = {}

    def score(m) -> int:
        if m in seen:
            return seen[m]
        if not vectorisable(m, combo.a, combo.b, k):
            seen[m] = 1 << 62
            return seen[m]
        seen[m] = int(len(mismatches(m, combo, A, B, C, D)))
        return seen[m]

    best = start or Datapath(alignment_bits=24)
    best_score = score(best)
    dims = _dimensions(combo)
    improved = True
    while improved and best_score:
        improved = False
        for name, values in dims.items():
            for v in values:
                candidate = _attrs.evolve(best, **{name: v})
                if ((candidate.chunk is not None and candidate.chunk < k) or candidate.c_step in ("alone", "tree")) and candidate.accumulator is None:
                    candidate = _attrs.evolve(candidate, accumulator=(8, 23))
                s = score(candidate)
                if s < best_score:
                    best, best_score, improved = candidate, s, True
                    log(f"  {combo.name}: {s} mismatches with {best.describe()}")
    return best, best_score, seen


def f64_candidates(rounding) -> list:
    """.f64 datapaths: one rounding of the exact sum, or fused multiply-add chains (steps of 1, 2
    or 4 products, exact inside a step, rounded to f64 in the form's mode between steps), in
    either order, C first or last."""
    from ptxspec.semantics.mma import Datapath

    out = [Datapath(rounding=rounding)]
    for chunk in (1, 2, 4):
        for order in ("ascending", "descending"):
            for c_step in ("first", "last"):
                out.append(Datapath(chunk=chunk, accumulator=(11, 52), accumulator_rounding=rounding, rounding=rounding, order=order, c_step=c_step))
    return out


def fit_f64(rec: Recording, sample: int = 0) -> dict:
    from ptxspec.semantics.numerics import Rounding

    combo = rec.combination
    rounding = Rounding(combo.qualifier.lstrip(".") or "rn")
    A, B, C, D = matrices(rec, slice(0, rec.probes + sample))
    scores = []
    for model in f64_candidates(rounding):
        s = len(mismatches(model, combo, A, B, C, D))
        scores.append((s, model.describe()))
        print(f"  {combo.name}: {s} mismatches with {model.describe()}")
    scores.sort()
    return {"model": scores[0][1], "probe_mismatches": scores[0][0], "candidates": scores}


def fit_all(directory: Path, names: list[str] | None = None) -> dict:
    """Fit every float combination recorded under ``directory``; verify each fit on every mma."""
    results = {}
    for rec in load(directory):
        combo = rec.combination
        if names and combo.name not in names or combo.a in INTEGER:
            continue
        if combo.a == "f64":
            results[combo.name] = fit_f64(rec)
            continue
        best = None
        for bits in (3, 8, 13, 24, 25, 26, 27):
            from ptxspec.semantics.mma import Datapath

            model, s, _ = fit(rec, start=Datapath(alignment_bits=bits))
            if best is None or s < best[1]:
                best = (model, s)
            if s == 0:
                break
        model, s = best
        A, B, C, D = matrices(rec)
        total = len(mismatches(model, combo, A, B, C, D))
        results[combo.name] = {"model": model.describe(), "probe_mismatches": s, "all_mismatches": total, "dots": int(D.size)}
        print(f"{combo.name}: {model.describe()} -> {s} on probes, {total} of {D.size} over all")
    return results


def verify(directory: Path) -> dict:
    """Every recorded D against the sm_90 profile (the measured datapaths, exact integers): per
    combination, the dot products compared and the mismatches (docs/mma.rst's table)."""
    from ptxspec.semantics.mma import datapath_for, datapath_matrix, integer_matrix
    from ptxspec.semantics.numerics import Rounding
    from ptxspec.semantics.results import SM_90

    out = {}
    for rec in load(directory):
        combo = rec.combination
        A, B, C, D = matrices(rec)
        if combo.a in INTEGER:
            expected = integer_matrix(combo.a, combo.b, A, B, C, satfinite=combo.qualifier == ".satfinite")
        else:
            rounding = Rounding(combo.qualifier.lstrip(".")) if combo.qualifier else Rounding.RN
            model = datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, rounding, combo.shape)
            if model is None:
                out[combo.name] = {"dots": int(D.size), "mismatches": None}
                continue
            expected = datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A, B, C)
        bad = np.argwhere(expected != D)
        out[combo.name] = {"dots": int(D.size), "mismatches": len(bad), "first": bad[:5].tolist()}
        print(combo.name, out[combo.name], flush=True)
    return out


def spec_check(directory: Path) -> dict:
    """Whether every recorded float result lies in the spec-level set (:func:`spec_dot`): per
    combination, the number of results checked and those outside."""
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    out = {}
    for rec in load(directory):
        combo = rec.combination
        if combo.a in INTEGER:
            continue
        A, B, C, D = matrices(rec)
        outside = []
        for t, i, j in np.ndindex(*D.shape):
            allowed = spec_dot(combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in B[t, :, j]], int(C[t, i, j]))
            if not contains(allowed, int(D[t, i, j])):
                outside.append([int(t), int(i), int(j)])
        out[combo.name] = {"checked": int(D.size), "outside": len(outside), "first": outside[:5]}
        print(combo.name, out[combo.name], flush=True)
    return out


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        n = int(sys.argv[4]) if len(sys.argv) >= 5 and sys.argv[3] == "--random" else RANDOM
        prepare(Path(sys.argv[2]), n)
    elif len(sys.argv) >= 3 and sys.argv[1] == "verify":
        verify(Path(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "spec-check":
        spec_check(Path(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "fit":
        fit_all(Path(sys.argv[2]), sys.argv[3:] or None)
    else:
        print(__doc__)
        sys.exit(2)
