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

Each of the four rounds below (round 1 and round 2, dense ``mma`` and ``mma.sp``) is one
:class:`Round`: its combinations, their kind (dense or sparse) and its storage policy (every D in
full, or D in full for the designed probes and the first random mma and block digests after);
:func:`prepare_round` and :func:`load_round` serve them all, and the commands are thin wrappers
(:data:`COMMANDS`).

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

**mma.sp** (§9.7.14.6), the same way with its own files::

    python -m ptxspec.conformance.silicon.mma_campaign prepare-sparse BUNDLE             # here
    python3 conformance/silicon/mma_device.py run-sparse BUNDLE OUT                    # on the GPU
    python -m ptxspec.conformance.silicon.mma_campaign fit-sparse DIR | verify-sparse DIR | spec-check-sparse DIR

:data:`SPARSE_COMBINATIONS` (one kernel per combination and allowed sparsity selector, an
immediate); random valid metadata (every nibble of every lane one of the fields §9.7.14.6.1
defines, :func:`mma_device.random_metadata`); the designed probes are the dense designs of K/2
products placed on the positions each row's metadata selects (:func:`sparse_probes`). Output:
``mma-sp-*.npz`` and ``meta-mma-sp.json``, read back by :func:`load_sparse`. Each row of an mma.sp
is fitted and checked as a dense mma of one row and K/2 products (:func:`sparse_rows_as_mma`):
the stored elements of A and the rows of B its metadata selects.

**mma.sp round 2** (every other sm_90a form, :data:`SPARSE_MORE_COMBINATIONS`)::

    python -m ptxspec.conformance.silicon.mma_campaign prepare-sparse-more BUNDLE        # here
    python3 conformance/silicon/mma_device.py run-sparse-more BUNDLE OUT               # on the GPU
    python -m ptxspec.conformance.silicon.mma_campaign verify-sparse-more DIR | fit-sparse-more DIR | separate-sparse-more DIR

Output ``mma-sp-more-0.npz`` and ``meta-mma-sp-more.json`` (:func:`load_sparse_more`): D in full for
the designed probes and the first ``mma_device.FULL_RANDOM`` random mma of each entry, the other
random mma as one digest per block of ``mma_device.DIGEST_BLOCK`` (:func:`mma_device.block_digests`);
:func:`verify_sparse_more_entry` names mismatching blocks, :func:`diagnose_sparse_block` the register
that explains one.

**Round 2, dense** (every other sm_90a dense form, :data:`MORE_COMBINATIONS`)::

    python -m ptxspec.conformance.silicon.mma_campaign prepare-more BUNDLE [--random N]  # here (ptxas)
    python3 conformance/silicon/mma_device.py run-more BUNDLE OUT                       # on the GPU
    python -m ptxspec.conformance.silicon.mma_campaign verify-more DIR | fit-more DIR [NAME ...]

Output ``mma-more-0.npz`` and ``meta-mma-more.json`` (:func:`load_more`), stored as mma.sp round 2
is; :func:`replay_more` names mismatching blocks, :func:`diagnose_block` the register that explains
one.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon.record import assemble, command_line
from ptxspec.conformance.silicon import mma_device
from ptxspec.semantics.numerics import Exact, Rounding, canonical_nan, decode, infinity, round_value, to_fraction
from ptxspec.semantics.sparse import row_problems, selected_b, sparse_mma
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

    def descriptions(self) -> dict:
        """Every operand's :func:`operand_description` (what the plan records and the kernel loads)."""
        return {o: operand_description(self, o) for o in "abcd"}

    def probe_registers(self) -> dict:
        """The designed probes (:func:`probes`) as registers of A, B, C, and their counts."""
        p = probes(self)
        ops = self.descriptions()
        out = {o: matrices_to_registers(self, o, p[o]).astype(np.uint64 if ops[o]["register_bits"] == 64 else np.uint32) for o in "abc"}
        return out | {"designed": p["designed"], "available": p["available"]}


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

INTEGER = {"s8": (8, True), "u8": (8, False), "s4": (4, True), "u4": (4, False), "s32": (32, True), "b1": (1, False)}


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


def probes(combo: Combination, cap: int = PROBE_MMA) -> dict[str, np.ndarray]:
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
    slots = cap * per
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

#: Every kernel's start: the warp index of the thread (%t4); a warp at or past ``n`` leaves (so
#: .aligned holds); %q0 is the thread's index, which addresses its registers.
_WARP_PROLOGUE = (
    "  mov.u32 %t0, %tid.x;", "  mov.u32 %t1, %ctaid.x;", "  mov.u32 %t2, %ntid.x;",
    "  mad.lo.u32 %t3, %t1, %t2, %t0;", "  shr.u32 %t4, %t3, 5;", "  ld.param.u32 %t5, [n];",
    "  setp.ge.u32 %p, %t4, %t5;", "  @%p bra DONE;", "  cvt.u64.u32 %q0, %t3;",
)


def _entry(name: str, pointers: str, lines: list[str]) -> str:
    """The kernel ``name``: one .u64 parameter per operand in ``pointers``, then ``n``; ``lines``
    its body (ending at ``DONE``)."""
    params = ",\n  ".join([f".param .u64 p{o}" for o in pointers] + [".param .u32 n"])
    return f".visible .entry {name}(\n  {params}\n)\n{{\n" + "\n".join(lines + ["DONE:", "  ret;"]) + "\n}\n"


def kernel(combo: Combination, name: str, ops: dict | None = None) -> str:
    """One warp per mma: lane L of warp W loads its registers from ``X[W, L, :]``, executes the
    mma and stores D[W, L, :]; a warp past ``n`` leaves as a whole (so .aligned holds). ``ops``:
    the operand descriptions (default :func:`operand_description`)."""
    ops = ops or combo.descriptions()
    lines = [
        "  .reg .pred %p;", "  .reg .b32 %t<8>;", "  .reg .b64 %q<16>;",
        *[f"  .reg .b{ops[o]['register_bits']} %{o}<{max(2, ops[o]['registers'])}>;" for o in "abcd"],
        *_WARP_PROLOGUE,
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
    return _entry(name, "abcd", lines)


# ---------------------------------------------------------------------------------------------
# A round of the campaign: one description, the commands every round shares
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Round:
    """One round of the campaign as data: its combinations, their kind, how D is stored and the
    names of its files. :func:`prepare_round` and :func:`load_round` do the rest; the rounds are
    :data:`ROUND_1`, :data:`SPARSE_ROUND_1`, :data:`ROUND_2` and :data:`SPARSE_ROUND_2`."""

    combinations: tuple
    #: The device side of the round (:class:`mma_device.Campaign`): the bundle's and the
    #: recording's file stems, the inputs of each mma and how D is stored, read from one place.
    device: mma_device.Campaign
    #: Kernel names ``{kernel}00``, ``{kernel}01``, ... (one per combination asked of ptxas).
    kernel: str

    @property
    def sparse(self) -> bool:
        """The combination kind: ``mma.sp`` (inputs A, B, C and the metadata E; one kernel per
        sparsity selector) or dense ``mma`` (A, B, C)."""
        return self.device.inputs is mma_device.sparse_inputs

    @property
    def digests(self) -> bool:
        """The storage policy: D of every mma stored in full (False), or in full for the designed
        probes and the first ``mma_device.FULL_RANDOM`` random mma and as one digest per block of
        ``mma_device.DIGEST_BLOCK`` mma after those (True; the record's ``digests``)."""
        return self.device.kept is not None

    @property
    def bundle(self) -> str:
        """The bundle ``{bundle}.cubin``, ``{bundle}-plan.json``, ``{bundle}-probes.npz``."""
        return self.device.bundle

    @property
    def recording(self) -> str:
        """The recording ``meta-{recording}.json``, ``{recording}-0.npz``, ..."""
        return self.device.out

    @property
    def inputs(self) -> str:
        """The input operands of each mma (registers stored for the designed probes)."""
        return "abce" if self.sparse else "abc"

    def recorded_files(self, directory: Path) -> list[Path]:
        """The recording's npz files under ``directory`` (``mma-0.npz``, not ``mma-sp-0.npz``)."""
        return sorted(directory.glob(f"{self.recording}-[0-9]*.npz"))

    def plan(self, named, random: int) -> tuple[list[dict], dict[str, np.ndarray], list[str]]:
        """The plan entries, probe registers and kernels' PTX of ``named`` ((kernel name,
        combination) pairs that ptxas accepted): :func:`dense_plan`, or :func:`sparse_plan`
        (kernels named anew, one per selector; round 2's probe budget: :func:`sparse_more_plan`),
        with this round's storage policy."""
        if self.sparse:
            combos = [c for _, c in named]
            return sparse_more_plan(combos, random) if self.digests else sparse_plan(combos, random)
        return (*dense_plan(named, random, self.digests), dense_kernels(named))

    @property
    def record(self) -> type:
        """The record class of one plan entry (read back by its ``from_entry``), by kind and storage."""
        if self.sparse:
            return SparseDigestRecording if self.digests else SparseRecording
        return MoreRecording if self.digests else Recording

    def instruction(self, combo) -> str:
        return combo.instruction() if self.sparse else combo.instruction

    def trial_kernel(self, name: str, combo) -> str:
        """The one kernel of ``combo`` that ptxas is asked about (mma.sp: its first selector)."""
        return sparse_kernel(combo, combo.selectors[0], name) if self.sparse else kernel(combo, name, combo.descriptions())

    def device_inputs(self, entry: dict, probes: dict) -> list[np.ndarray]:
        """Every mma's inputs: the designed probes, then the random ones the device generated."""
        return (mma_device.sparse_inputs if self.sparse else mma_device.combination_inputs)(entry, probes)


def prepare_round(round_: Round, bundle: Path, random: int) -> None:
    """Write the bundle of ``round_``: one kernel per combination that ptxas accepts (asked one
    kernel at a time; a refused one is listed under ``rejected`` with ptxas's message), the plan
    and the designed probes' registers."""
    bundle.mkdir(parents=True, exist_ok=True)
    named = [(f"{round_.kernel}{i:02d}", c) for i, c in enumerate(round_.combinations)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda nc: assemble(HEADER + round_.trial_kernel(*nc)), named))
    accepted = [(n, c) for (n, c), (ok, _, _) in zip(named, verdicts) if ok]
    rejected = {round_.instruction(c): msg for (n, c), (ok, msg, _) in zip(named, verdicts) if not ok}
    plan, arrays, kernels = round_.plan(accepted, random)
    ok, msg, cubin = assemble(HEADER + "\n".join(kernels))
    if not ok:
        raise SystemExit(f"the combined {'mma.sp ' if round_.sparse else ''}module did not assemble: {msg}")
    (bundle / f"{round_.bundle}.cubin").write_bytes(cubin)
    (bundle / f"{round_.bundle}-plan.json").write_text(json.dumps({"combinations": plan, "rejected": rejected}, indent=1))
    np.savez_compressed(bundle / f"{round_.bundle}-probes.npz", **arrays)
    if round_.sparse:
        print(f"{len(accepted)} mma.sp combinations ({len(plan)} kernels) assembled, {len(rejected)} rejected by ptxas: {rejected}")
    else:
        print(f"{len(accepted)} combinations assembled, {len(rejected)} rejected by ptxas: {sorted(rejected)}")


def load_round(round_: Round, directory: Path, names=None) -> list:
    """Every plan entry recorded under ``directory`` for ``round_`` (only those named in
    ``names`` when given), as its record class: the recorded arrays, and the random inputs
    regenerated (:func:`Round.device_inputs`)."""
    meta = json.loads((directory / f"meta-{round_.recording}.json").read_text())
    arrays: dict[str, np.ndarray] = {}
    for f in round_.recorded_files(directory):
        with np.load(f) as z:
            arrays.update({k: z[k] for k in z.files})
    out = []
    for entry in meta["combinations"]:
        name = entry["name"]
        if names is not None and name not in names:
            continue
        inputs = round_.device_inputs(entry, {f"{name}_{o}": arrays[f"{name}_{o}"] for o in round_.inputs})
        out.append(round_.record.from_entry(entry, inputs, arrays))
    return out


def mismatching_blocks(model_d, first: int, digests: np.ndarray, block: int, blocks=None) -> list[int]:
    """A round with digests: the blocks ``blocks`` (default all) whose recorded digest differs
    from the digest of the model's D. Block ``i`` holds the ``block`` mma from ``first + i * block``
    on; ``model_d(select)`` gives the model's D registers of the mma ``select`` (one call, over
    the span of ``blocks``)."""
    blocks = range(len(digests)) if blocks is None else blocks
    if not len(blocks):
        return []
    lo, hi = min(blocks), max(blocks) + 1
    mine = mma_device.block_digests(np, model_d(slice(first + lo * block, first + hi * block)), block)
    return [int(i) for i in blocks if mine[i - lo] != digests[i]]


def one_register_changes(expected: np.ndarray, digest: int):
    """The single registers of one digest block's model D ``expected`` ``[mma, 32, registers]``
    whose change would give the recorded ``digest`` (the digest is all there is of the silicon's D
    there): :func:`exhaustive_device.one_value_changes`, as (mma in the block, lane, register,
    model value, implied silicon value)."""
    from ptxspec.conformance.silicon.exhaustive_device import one_value_changes

    for (t, lane, register), model, silicon in one_value_changes(expected, digest):
        yield t, lane, register, model, silicon


def seed_of(combo: Combination) -> int:
    import zlib

    return zlib.crc32(combo.name.encode())


def dense_plan(named, random: int = RANDOM, digests: bool = False) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The plan entries and probe registers of ``named`` ((kernel name, combination) pairs; no
    ptxas here); ``digests``: the storage policy (:attr:`Round.digests`, :func:`output_files`)."""
    plan, arrays, sizes = [], {}, []
    for name, combo in named:
        p = combo.probe_registers()
        ops = combo.descriptions()
        arrays.update({f"{combo.name}_{o}": p[o] for o in "abc"})
        n_random = random * combo.random_scale
        d_bytes = (p["a"].shape[0] + n_random) * 32 * ops["d"]["registers"] * ops["d"]["register_bits"] // 8
        sizes.append(sum(p[o].nbytes for o in "abc") + d_bytes)
        plan.append({
            "name": combo.name, "kernel": name, "instruction": combo.instruction, "file": 0, "operands": ops,
            "probes": int(p["a"].shape[0]), "designed": p["designed"], "random": n_random, "seed": seed_of(combo),
        })
    output_files(plan, sizes, digests)
    if digests:
        for entry in plan:
            entry |= {"full": mma_device.FULL_RANDOM, "block": mma_device.DIGEST_BLOCK}
    return plan, arrays


def dense_kernels(named) -> list[str]:
    """The kernels of ``named`` ((kernel name, combination) pairs)."""
    return [kernel(c, n, c.descriptions()) for n, c in named]


def output_files(plan: list[dict], sizes: list[int], digests: bool) -> None:
    """The output file of each plan entry (of ``sizes`` bytes with every D) by the storage policy:
    with ``digests`` the one file; else a new file where the next entry would take the current
    one past :data:`FILE_BYTES` (the device returns files of 16 MiB, 7 beside its meta file)."""
    file, used = 0, 0
    for entry, size in zip(plan, sizes):
        if not digests and used and used + size > FILE_BYTES:
            file, used = file + 1, 0
        used += size
        entry["file"] = file
    if file >= 7:
        raise SystemExit(f"{file + 1} output files: more than the 7 that come back beside the meta file")


def prepare(bundle: Path, random: int = RANDOM) -> None:
    """The round-1 bundle: ``mma.cubin``, ``mma-plan.json``, ``mma-probes.npz`` (for
    ``mma_device.py run``; :func:`prepare_round` of :data:`ROUND_1`)."""
    prepare_round(ROUND_1, bundle, random)


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

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> Recording:
        return cls(combination_named(entry["name"]), *inputs, arrays[f"{entry['name']}_d"], entry["probes"])


def combination_named(name: str) -> Combination:
    return next(c for c in COMBINATIONS if c.name == name)


def load(directory: Path) -> list[Recording]:
    """Every combination recorded under ``directory`` (``meta-mma.json`` and ``mma-*.npz``)."""
    return load_round(ROUND_1, directory)


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


def fit(rec: Recording | None, sample: int | None = None, start=None, log=print, *, data=None, combo: Combination | None = None):
    """Coordinate search for a datapath that reproduces the recorded D of ``rec``: from ``start``
    (or a plain one), try every value of one parameter with the others fixed, keep the best, and
    repeat until no parameter improves; scored on the designed probes (and ``sample`` random mma).
    ``data`` (A, B, C, D matrices) and ``combo`` score other mma instead (mma.sp's per-row
    problems: :func:`sparse_rows_as_mma`). Returns (model, mismatches on the scored mma, the table
    of scores seen)."""
    import attrs as _attrs

    from ptxspec.semantics.mma import Datapath, vectorisable

    if data is None:
        combo = rec.combination
        n = rec.probes + (sample or 0)
        A, B, C, D = matrices(rec, slice(0, n))
    else:
        A, B, C, D = data
    _, _, k = combo.mnk
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


def best_fit(starts, data, combo: Combination):
    """:func:`fit` to ``data`` (A, B, C, D matrices of ``combo``) from each of ``starts`` in turn,
    up to the first that reproduces every D: the best model, its mismatches and its start."""
    best = None
    for start in starts:
        model, s, _ = fit(None, start=start, data=data, combo=combo)
        if best is None or s < best[1]:
            best = (model, s, start)
        if s == 0:
            break
    return best


def by_combination(records) -> dict[str, list]:
    """``records`` (mma.sp: one per selector) grouped by their combination's name, in order."""
    out: dict[str, list] = {}
    for r in records:
        out.setdefault(r.combination.name, []).append(r)
    return out


def float_groups(records, names: list[str] | None = None) -> dict[str, list]:
    """:func:`by_combination` of the records of float combinations (the ones a datapath is
    fitted to), only those named in ``names`` unless it is empty."""
    groups = by_combination(records).items()
    return {name: recs for name, recs in groups if not (names and name not in names) and recs[0].combination.a not in INTEGER}


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
    from ptxspec.semantics.mma import Datapath

    results = {}
    for rec, in float_groups(load(directory), names).values():
        combo = rec.combination
        if combo.a == "f64":
            results[combo.name] = fit_f64(rec)
            continue
        starts = [Datapath(alignment_bits=bits) for bits in (3, 8, 13, 24, 25, 26, 27)]
        model, s, _ = best_fit(starts, matrices(rec, slice(0, rec.probes)), combo)
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
    out = {}
    for rec in load(directory):
        combo = rec.combination
        if combo.a in INTEGER:
            continue
        A, B, C, D = matrices(rec)
        out[combo.name] = outside_spec(combo, A, lambda t, i, j: B[t, :, j], C, D)
        print(combo.name, out[combo.name], flush=True)
    return out


def outside_spec(combo, A, column, C, D) -> dict:
    """The recorded results ``D`` outside the spec-level sets (:func:`spec_dot` of row ``A[t, i]``,
    ``column(t, i, j)`` and ``C[t, i, j]``): the count checked, the count outside, the first few."""
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    outside = []
    for t, i, j in np.ndindex(*D.shape):
        allowed = spec_dot(combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in column(t, i, j)], int(C[t, i, j]))
        if not contains(allowed, int(D[t, i, j])):
            outside.append([int(t), int(i), int(j)])
    return {"checked": int(D.size), "outside": len(outside), "first": outside[:5]}


# ---------------------------------------------------------------------------------------------
# mma.sp: the sparse campaign (§9.7.14.6)
# ---------------------------------------------------------------------------------------------

#: Random mma.sp per combination, shared out over its sparsity selectors (1.28 * 10^5 dot products).
SPARSE_RANDOM = 1000
#: At most this many designed probe mma per combination (over all its selectors).
SPARSE_PROBE_MMA = 600


@attrs.frozen
class SparseCombination:
    """One ``mma.sp{::ordered_metadata}.sync.aligned`` form to record (row.col, sm_90a)."""

    shape: str
    d: str
    a: str
    b: str
    c: str
    qualifier: str = ""  # ".satfinite"
    ordered: bool = False

    @property
    def spelling(self) -> str:
        return "mma.sp::ordered_metadata" if self.ordered else "mma.sp"

    @property
    def name(self) -> str:
        q = self.qualifier.replace(".", "-")
        return f"{'spo' if self.ordered else 'sp'}-{self.shape}-{self.d}-{self.a}-{self.b}-{self.c}{q}"

    def instruction(self) -> str:
        sat = ".satfinite" if self.qualifier == ".satfinite" else ""
        return f"{self.spelling}.sync.aligned.{self.shape}.row.col{sat}.{self.d}.{self.a}.{self.b}.{self.c}"

    @property
    def mnk(self) -> tuple[int, int, int]:
        return Combination(self.shape, self.d, self.a, self.b, self.c).mnk

    @property
    def half(self) -> Combination:
        """The dense combination of the same types with K/2: the products one row of D sums."""
        m, n, k = self.mnk
        return Combination(f"m{m}n{n}k{k // 2}", self.d, self.a, self.b, self.c, self.qualifier)

    @property
    def selectors(self) -> tuple[int, ...]:
        """The sparsity selectors the manual allows for the shape and type (§9.7.14.6.1)."""
        from ptxspec.semantics.matrix_layout import metadata_layout

        return metadata_layout(self.shape, self.a).selectors

    @property
    def fields(self) -> list[int]:
        """The 4-bit metadata fields with a defined meaning (§9.7.14.6.1). For the 8-bit float
        types the manual lists only the ordered index pairs as meaningful, with or without
        ::ordered_metadata."""
        from ptxspec.semantics.matrix_layout import field_defined

        ordered = self.ordered or self.a in ("e4m3", "e5m2")
        return [f for f in range(16) if field_defined(f, self.a, ordered)]


SPARSE_COMBINATIONS: tuple[SparseCombination, ...] = (
    SparseCombination("m16n8k32", "f32", "f16", "f16", "f32"),
    SparseCombination("m16n8k32", "f16", "f16", "f16", "f16"),
    SparseCombination("m16n8k32", "f32", "bf16", "bf16", "f32"),
    SparseCombination("m16n8k16", "f32", "tf32", "tf32", "f32"),
    SparseCombination("m16n8k64", "f32", "e4m3", "e4m3", "f32"),
    SparseCombination("m16n8k64", "f32", "e5m2", "e4m3", "f32"),
    SparseCombination("m16n8k64", "f16", "e4m3", "e4m3", "f16"),  # refused: f16 accumulators need ::ordered_metadata
    SparseCombination("m16n8k64", "f16", "e4m3", "e4m3", "f16", ordered=True),
    SparseCombination("m16n8k64", "s32", "s8", "s8", "s32"),
    SparseCombination("m16n8k64", "s32", "u8", "s8", "s32", ".satfinite"),
    SparseCombination("m16n8k32", "f32", "f16", "f16", "f32", ordered=True),
)


def sparse_layout(combo: SparseCombination, operand: str):
    """The fragment layout of ``operand`` of ``combo`` (A: its stored M x K/2 half)."""
    from ptxspec.semantics.matrix_layout import fragment_layout

    t = getattr(combo, operand)
    return fragment_layout(combo.shape, operand, t, sparse=operand in "ab")


def sparse_description(combo: SparseCombination) -> dict:
    """Registers per lane and element type of A (the stored half), B, C, D and the metadata E."""
    half = combo.half
    ops = {"a": operand_description(half, "a")}
    full = Combination(combo.shape, combo.d, combo.a, combo.b, combo.c)
    ops.update({o: operand_description(full, o) for o in "bcd"})
    ops["e"] = {"registers": 1, "register_bits": 32, "element": {"type": "b32", "kind": "metadata"}}
    return ops


def sparse_positions(combo: SparseCombination, e_lanes: np.ndarray, selector: int) -> tuple[np.ndarray, np.ndarray]:
    """For metadata ``e_lanes`` ``[..., 32]``: the dense column of each stored element of A
    ``[..., M, K/2]`` and the rows whose metadata is undefined ``[..., M]``
    (:func:`ptxspec.semantics.mma.sparse_rows`)."""
    from ptxspec.semantics.mma import sparse_rows

    la = sparse_layout(combo, "a")
    e_lanes = np.asarray(e_lanes, dtype=np.uint64)
    zeros = np.zeros(e_lanes.shape[:-1] + (32, la.registers), dtype=np.uint64)
    _, cols, undefined = sparse_rows(la, zeros, e_lanes, selector, ordered=combo.ordered)
    return cols, undefined


def _random_fields(rng, fields: list[int], shape) -> np.ndarray:
    return np.asarray(fields, dtype=np.uint64)[rng.integers(0, len(fields), size=shape)]


@functools.cache
def half_probes(combo: Combination) -> dict[str, np.ndarray]:
    """:func:`probes` of a dense combination, computed once (read-only use)."""
    return probes(combo)


@functools.cache
def sparse_probes(combo: SparseCombination, limit: int = SPARSE_PROBE_MMA) -> dict[int, dict[str, np.ndarray]]:
    """The designed probes of ``combo`` per sparsity selector: registers of A (stored half), B, C
    and the metadata E. The designs are the dense ones of K/2 products (:func:`designs` of
    :attr:`SparseCombination.half`); design ``s`` of an mma sits in row ``r = s`` of A (its
    mirror image in row ``r + 8``, with the same metadata), its pairs on the stored elements of
    that row and on the rows of column ``r`` of B that the row's random valid metadata selects
    (for the shapes whose four lanes all hold metadata, one random field for every block of the
    mma);
    the other rows of B's column ``r`` are zero, or -- in every fourth probe mma -- an infinity
    (a NaN for .e4m3, which has none), which a datapath that multiplies the zero elements of A
    would turn into a NaN."""
    m, n, k = combo.mnk
    p = half_probes(combo.half)
    total = p["a"].shape[0]
    count = min(total, limit)
    # Beyond ``limit`` (SPARSE_PROBE_MMA), sample the probe mma with a fixed stride (every family keeps members).
    chosen = (np.arange(count) * total) // count
    p = {o: p[o][chosen] for o in "abc"} | {"designed": p["designed"]}
    selectors = combo.selectors
    rng = np.random.default_rng(seed_of(combo.half) ^ 0x5A5A)
    out = {}
    from ptxspec.semantics.matrix_layout import metadata_layout

    meta = metadata_layout(combo.shape, combo.a)
    for s in selectors:
        index = np.arange(s, count, len(selectors))
        A, B2, C = p["a"][index], p["b"][index], p["c"][index]
        t = len(index)
        e = _random_fields(rng, combo.fields, (t, 32, 8))
        if meta.lanes == 4:
            # All four lanes of a group hold metadata: one field in every nibble of an mma, so the
            # designs land where claimed whatever the placement of the fields (the first H100 run
            # showed that ours was wrong there; the random mma measure the placement).
            e = np.broadcast_to(e[:, :1, :1], e.shape)
        words = np.zeros((t, 32), dtype=np.uint64)
        for i in range(8):
            words |= e[..., i] << np.uint64(4 * i)
        # rows r and r + 8 share a group of lanes and bits: give row r + 8 row r's fields.
        for row in range(8):
            for block in range(meta.blocks):
                lane, bit = meta.field(row, block, s)
                lane8, bit8 = meta.field(row + 8, block, s)
                f = (words[:, lane] >> np.uint64(bit)) & np.uint64(0xF)
                words[:, lane8] = (words[:, lane8] & ~np.uint64(0xF << bit8)) | (f << np.uint64(bit8))
        cols, undefined = sparse_positions(combo, words, s)
        assert not undefined.any()
        B = np.zeros((t, k, n), dtype=np.uint64)
        if combo.a not in INTEGER:
            fill = encode(combo.b, "inf") if FORMATS[combo.b].has_infinity else encode(combo.b, "nan")
            for j in range(n):
                B[3::4, :, j] = fill
        for j in range(n):
            tt = np.arange(t)[:, None]
            B[tt, cols[:, j, :], j] = B2[:, :, j]
        out[s] = {
            "a": sparse_layout(combo, "a").from_matrix(A).astype(np.uint32),
            "b": sparse_layout(combo, "b").from_matrix(B).astype(np.uint32),
            "c": sparse_layout(combo, "c").from_matrix(C).astype(np.uint32),
            "e": words.astype(np.uint32),
            "designed": min(p["designed"] * t // count, t * min(m, n)),
        }
    return out


def sparse_kernel(combo: SparseCombination, selector: int, name: str) -> str:
    """One warp per mma.sp, as :func:`kernel`, with the metadata E loaded per lane from ``pe`` and
    the sparsity selector as an immediate."""
    ops = sparse_description(combo)
    lines = [
        "  .reg .pred %p;", "  .reg .b32 %t<8>;", "  .reg .b64 %q<20>;", "  .reg .b32 %e0;",
        *[f"  .reg .b32 %{o}<{max(2, ops[o]['registers'])}>;" for o in "abcd"],
        *_WARP_PROLOGUE,
    ]
    for i, o in enumerate("abcde"):
        lines += [f"  ld.param.u64 %q{1 + i}, [p{o}];", f"  cvta.to.global.u64 %q{1 + i}, %q{1 + i};",
                  f"  mul.lo.u64 %q{6 + i}, %q0, {ops[o]['registers'] * 4};", f"  add.u64 %q{1 + i}, %q{1 + i}, %q{6 + i};"]
    for i, o in enumerate("abc"):
        for r in range(ops[o]["registers"]):
            lines.append(f"  ld.global.b32 %{o}{r}, [%q{1 + i}+{r * 4}];")
    lines.append("  ld.global.b32 %e0, [%q5];")  # %q1..%q5: A, B, C, D, E
    reg = lambda o: "{" + ", ".join(f"%{o}{r}" for r in range(ops[o]["registers"])) + "}"
    lines.append(f"  {combo.instruction()} {reg('d')}, {reg('a')}, {reg('b')}, {reg('c')}, %e0, {selector};")
    for r in range(ops["d"]["registers"]):
        lines.append(f"  st.global.b32 [%q4+{r * 4}], %d{r};")
    return _entry(name, "abced", lines)


def sparse_plan(combos, random: int = SPARSE_RANDOM, probe_mma: int = SPARSE_PROBE_MMA,
                digests: bool = False) -> tuple[list[dict], dict[str, np.ndarray], list[str]]:
    """The plan entries (one per combination and selector), the probe arrays and the kernels'
    PTX of ``combos`` (no ptxas here); ``digests``: the storage policy (:attr:`Round.digests`,
    :func:`output_files`), with each entry's random mma rounded up to whole blocks of
    ``mma_device.DIGEST_BLOCK`` after the ``mma_device.FULL_RANDOM`` kept ones."""
    import zlib

    plan, arrays, kernels, sizes = [], {}, [], []
    for i, combo in enumerate(combos):
        ops = sparse_description(combo)
        pr = sparse_probes(combo, probe_mma)
        per = -(-random // len(combo.selectors))
        for s in combo.selectors:
            name = f"{combo.name}-f{s}"
            kname = f"msp{i:02d}f{s}"
            kernels.append(sparse_kernel(combo, s, kname))
            for o in "abce":
                arrays[f"{name}_{o}"] = pr[s][o]
            t = pr[s]["a"].shape[0]
            sizes.append(sum(pr[s][o].nbytes for o in "abce") + (t + per) * 32 * ops["d"]["registers"] * 4)
            plan.append({
                "name": name, "combination": combo.name, "kernel": kname, "instruction": combo.instruction(), "selector": s,
                "file": 0, "operands": ops, "fields": combo.fields, "probes": int(t), "designed": int(pr[s]["designed"]),
                "random": per, "seed": zlib.crc32(name.encode()),
            })
    output_files(plan, sizes, digests)
    if digests:
        block, keep = mma_device.DIGEST_BLOCK, mma_device.FULL_RANDOM
        for entry in plan:
            rest = max(entry["random"] - keep, block)
            entry["random"] = keep + -(-rest // block) * block
            entry["keep"] = keep
    return plan, arrays, kernels


def prepare_sparse(bundle: Path, random: int = SPARSE_RANDOM) -> None:
    """The mma.sp bundle: ``sparse.cubin`` (one kernel per combination and selector),
    ``sparse-plan.json`` and ``sparse-probes.npz`` (for ``mma_device.py run-sparse``;
    :func:`prepare_round` of :data:`SPARSE_ROUND_1`)."""
    prepare_round(SPARSE_ROUND_1, bundle, random)


@attrs.frozen
class SparseRecording:
    """One recorded mma.sp entry (a combination and one sparsity selector): registers
    ``[mma, 32, registers]`` of A (stored half), B, C, D and the metadata E ``[mma, 32]``."""

    combination: SparseCombination
    selector: int
    name: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    e: np.ndarray
    d: np.ndarray
    probes: int

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> SparseRecording:
        return cls(sparse_combination_named(entry["combination"]), entry["selector"], entry["name"], *inputs,
                   arrays[f"{entry['name']}_d"], entry["probes"])


def sparse_combination_named(name: str) -> SparseCombination:
    return next(c for c in SPARSE_COMBINATIONS + SPARSE_MORE_COMBINATIONS if c.name == name)


def load_sparse(directory: Path) -> list[SparseRecording]:
    """Every mma.sp entry recorded under ``directory`` (``meta-mma-sp.json``, ``mma-sp-*.npz``);
    the random inputs regenerated by :func:`mma_device.sparse_inputs`."""
    return load_round(SPARSE_ROUND_1, directory)


def sparse_operands(rec: SparseRecording, select=slice(None)):
    """The inputs of the recorded mma ``select``: A's stored rows ``[mma, M, K/2]``, the dense
    column of each stored element, the rows whose metadata is undefined ``[mma, M]``
    (:func:`ptxspec.semantics.mma.sparse_rows`), and B and C as matrices (element bits)."""
    from ptxspec.semantics.mma import sparse_rows

    combo = rec.combination
    stored, cols, undefined = sparse_rows(sparse_layout(combo, "a"), rec.a[select], rec.e[select], rec.selector, ordered=combo.ordered)
    B = sparse_layout(combo, "b").to_matrix(rec.b[select])
    C = sparse_layout(combo, "c").to_matrix(rec.c[select])
    return stored, cols, undefined, B, C


def sparse_matrices(rec: SparseRecording, select=slice(None)):
    """The recorded mma ``select`` as per-row problems: A's stored rows ``[mma, M, K/2]``, the rows
    of B they meet ``[mma, M, K/2, N]``, C and D ``[mma, M, N]`` (element bits)."""
    stored, cols, B, C, D = _defined_operands(rec, select)
    return stored, selected_b(B, cols), C, D


def _defined_operands(rec: SparseRecording, select=slice(None)):
    """:func:`sparse_operands` without the undefined rows (a recording never has them) and with
    the recorded D ``[mma, M, N]``."""
    stored, cols, undefined, B, C = sparse_operands(rec, select)
    if undefined.any():
        raise ValueError(f"{rec.name}: recorded metadata the manual leaves undefined")
    return stored, cols, B, C, sparse_layout(rec.combination, "d").to_matrix(rec.d[select])


def sparse_rows_as_mma(rec: SparseRecording, select=slice(None)):
    """The recorded mma as dense mma of one row and K/2 products each
    (:func:`ptxspec.semantics.sparse.row_problems`): ``[mma*M, 1, K/2]``, ``[mma*M, K/2, N]``,
    ``[mma*M, 1, N]`` twice (the shapes :func:`fit` and :func:`mismatches` take)."""
    stored, cols, B, C, D = _defined_operands(rec, select)
    A1, G1, C1 = row_problems(stored, cols, B, C)
    return A1, G1, C1, D.reshape(C1.shape)


def sparse_expected(rec: SparseRecording, profile=None, select=slice(None)) -> np.ndarray:
    """D ``[mma, M, N]`` of the recorded inputs under ``profile`` (default sm_90), through the
    semantics' :func:`ptxspec.semantics.mma.sparse_matrix` (the path :func:`mma_fragments` takes)."""
    from ptxspec.semantics.mma import sparse_matrix
    from ptxspec.semantics.results import SM_90

    combo = rec.combination
    stored, cols, _, B, C = sparse_operands(rec, select)
    return sparse_matrix(combo.shape, combo.a, combo.b, combo.c, combo.d, stored, cols, B, C, profile=profile or SM_90,
                         satfinite=combo.qualifier == ".satfinite")


def fit_sparse(directory: Path, names: list[str] | None = None, starts=None, from_dense: bool = True, sample: int = 64) -> dict:
    """Fit each float mma.sp combination (its selectors pooled) with :func:`fit`: the per-row
    problems of K/2 products, scored on the designed probes and the first ``sample`` random mma
    of each selector (the probes alone let a wrong fp8 step structure through); then every mma
    checked. The search
    starts from the dense datapath of the K/2 shape (unless ``from_dense`` is false), then from
    ``starts`` (default: plain datapaths of several alignment widths)."""
    from ptxspec.semantics.mma import Datapath, datapath_for
    from ptxspec.semantics.results import SM_90

    results = {}
    for name, recs in float_groups(load_sparse(directory), names).items():
        combo = recs[0].combination
        probe_parts = [sparse_rows_as_mma(r, slice(0, r.probes + sample)) for r in recs]
        data = tuple(np.concatenate([p[i] for p in probe_parts]) for i in range(4))
        dense = datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, None, combo.half.shape)
        begin = [dense] if dense is not None and from_dense else []
        begin += [Datapath(alignment_bits=b) for b in (25, 24, 26, 13, 8)] if starts is None else list(starts)
        model, s, _ = best_fit(begin, data, combo.half)
        total, dots = 0, 0
        for r in recs:
            A, G, C, D = sparse_rows_as_mma(r)
            total += len(mismatches(model, combo.half, A, G, C, D))
            dots += int(D.size)
        results[name] = {"model": model.describe(), "datapath": model, "probe_mismatches": s, "all_mismatches": total, "dots": dots,
                         "dense_model_same": model == dense}
        print(f"{name}: {model.describe()} -> {s} on probes, {total} of {dots} over all (same as dense: {model == dense})", flush=True)
    return results


def sparse_model(combo: SparseCombination):
    """The sm_90 datapath measured for the float mma.sp ``combo``, None where there is none (the
    spec-level sets only)."""
    from ptxspec.semantics.mma import datapath_for
    from ptxspec.semantics.results import SM_90

    return datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, None, combo.shape, sparse=True)


def verify_sparse(directory: Path) -> dict:
    """Every recorded mma.sp D against the sm_90 profile: per entry, dot products and mismatches."""
    out = {}
    for rec in load_sparse(directory):
        combo = rec.combination
        D = sparse_layout(combo, "d").to_matrix(rec.d)
        if combo.a not in INTEGER and sparse_model(combo) is None:
            out[rec.name] = {"dots": int(D.size), "mismatches": None}
            continue
        bad = np.argwhere(sparse_expected(rec) != D)
        out[rec.name] = {"dots": int(D.size), "mismatches": len(bad), "first": bad[:5].tolist()}
        print(rec.name, out[rec.name], flush=True)
    return out


def spec_check_sparse(directory: Path, random: int = 0) -> dict:
    """Whether the recorded mma.sp float results lie in the spec-level sets (:func:`spec_dot` of
    the K/2 selected products): per entry, over the designed probes and the first ``random``
    random mma, the results checked and those outside."""
    out = {}
    for rec in load_sparse(directory):
        combo = rec.combination
        if combo.a in INTEGER:
            continue
        A, G, C, D = sparse_matrices(rec, slice(0, rec.probes + random))
        out[rec.name] = outside_spec(combo, A, lambda t, i, j: G[t, i, :, j], C, D)
        print(rec.name, out[rec.name], flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# mma.sp round 2: every remaining sm_90a type combination (mma-sp-more-*.npz, digests)
# ---------------------------------------------------------------------------------------------

#: Designed probe mma per round-2 combination at most (over its selectors): the storage budget.
SPARSE_MORE_PROBE_MMA = 256
#: Random mma.sp per round-2 combination (shared out over its selectors; 2.6 * 10^5 dot products).
SPARSE_MORE_RANDOM = 2048


def _more(shape: str, d: str, a: str, b: str, c: str, qualifier: str = "", ordered: bool = False) -> SparseCombination:
    return SparseCombination(shape, d, a, b, c, qualifier, ordered)


_I8 = [("s8", "s8"), ("s8", "u8"), ("u8", "s8"), ("u8", "u8")]
_I4 = [("s4", "s4"), ("s4", "u4"), ("u4", "s4"), ("u4", "u4")]

#: The mma.sp forms legal on sm_90a (spec/matrix.py) that round 1 did not record; each family
#: has at least one ::ordered_metadata member (the fp8 one, and m16n8k32 .f16, are round 1's).
SPARSE_MORE_COMBINATIONS: tuple[SparseCombination, ...] = (
    _more("m16n8k16", "f32", "f16", "f16", "f32"),
    _more("m16n8k16", "f16", "f16", "f16", "f16"),
    _more("m16n8k16", "f32", "bf16", "bf16", "f32"),
    _more("m16n8k16", "f32", "bf16", "bf16", "f32", ordered=True),
    _more("m16n8k8", "f32", "tf32", "tf32", "f32"),
    _more("m16n8k8", "f32", "tf32", "tf32", "f32", ordered=True),
    _more("m16n8k64", "f32", "e4m3", "e5m2", "f32"),
    _more("m16n8k64", "f32", "e5m2", "e5m2", "f32"),
    *[_more("m16n8k32", "s32", a, b, "s32") for a, b in _I8],
    _more("m16n8k32", "s32", "s8", "s8", "s32", ".satfinite"),
    _more("m16n8k32", "s32", "u8", "u8", "s32", ordered=True),
    _more("m16n8k64", "s32", "s8", "u8", "s32"),
    _more("m16n8k64", "s32", "u8", "u8", "s32"),
    _more("m16n8k64", "s32", "s8", "s8", "s32", ".satfinite", ordered=True),
    *[_more("m16n8k64", "s32", a, b, "s32") for a, b in _I4],
    *[_more("m16n8k128", "s32", a, b, "s32") for a, b in _I4],
    _more("m16n8k128", "s32", "s4", "s4", "s32", ".satfinite"),
    _more("m16n8k128", "s32", "u4", "s4", "s32", ordered=True),
)


def sparse_more_plan(combos, random: int = SPARSE_MORE_RANDOM) -> tuple[list[dict], dict[str, np.ndarray], list[str]]:
    """:func:`sparse_plan` of ``combos`` with the round-2 storage: at most
    :data:`SPARSE_MORE_PROBE_MMA` probe mma per combination; each entry's random mma rounded up
    to whole blocks of ``mma_device.DIGEST_BLOCK`` after the ``mma_device.FULL_RANDOM`` kept ones (at least
    ``random`` (:data:`SPARSE_MORE_RANDOM`: >= 2.6 * 10^5 dot products) per combination); one output file."""
    return sparse_plan(combos, random, SPARSE_MORE_PROBE_MMA, digests=True)


def prepare_sparse_more(bundle: Path) -> None:
    """The round-2 mma.sp bundle: ``sparse-more.cubin``, ``sparse-more-plan.json``,
    ``sparse-more-probes.npz`` (for ``mma_device.py run-sparse-more``; :func:`prepare_round` of
    :data:`SPARSE_ROUND_2`)."""
    prepare_round(SPARSE_ROUND_2, bundle, SPARSE_MORE_RANDOM)


@attrs.frozen
class SparseDigestRecording:
    """A round-2 mma.sp entry: ``recording`` holds every input and the kept D (the designed
    probes and the first ``keep`` random mma); ``digests`` the other random mma, one per block."""

    recording: SparseRecording
    keep: int
    digests: np.ndarray

    @property
    def kept(self) -> int:
        return self.recording.probes + self.keep

    @property
    def combination(self) -> SparseCombination:
        return self.recording.combination

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> SparseDigestRecording:
        return cls(SparseRecording.from_entry(entry, inputs, arrays), entry["keep"], arrays[f"{entry['name']}_digests"])


def load_sparse_more(directory: Path) -> list[SparseDigestRecording]:
    """Every round-2 mma.sp entry under ``directory`` (``meta-mma-sp-more.json``,
    ``mma-sp-more-*.npz``); the random inputs regenerated by :func:`mma_device.sparse_inputs`."""
    return load_round(SPARSE_ROUND_2, directory)


def sparse_model_registers(rec: SparseRecording, model=None, select=slice(None)) -> np.ndarray:
    """D registers ``[mma, 32, registers]`` of the recorded inputs ``select``: under the sm_90
    profile (``model`` None; :func:`sparse_expected`) or the candidate datapath ``model``."""
    combo = rec.combination
    if model is None:
        D = sparse_expected(rec, select=select)
    else:
        from ptxspec.semantics.mma import datapath_matrix

        stored, cols, _, B, C = sparse_operands(rec, select)
        D = sparse_mma(stored, cols, B, C, lambda A1, G1, C1: datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A1, G1, C1))
    if np.asarray(D).dtype == object:
        raise ValueError(f"{rec.name}: the sm_90 profile pins no datapath for this mma.sp form (spec-level sets only)")
    return np.asarray(sparse_layout(combo, "d").from_matrix(np.asarray(D, dtype=np.uint64))).astype(np.uint32)


def verify_sparse_more_entry(r: SparseDigestRecording, model=None) -> dict:
    """One round-2 entry against the sm_90 profile (or ``model``): the kept D element by element
    (mismatching mma indices), the rest by digest (mismatching block indices)."""
    rec = r.recording
    expected = sparse_model_registers(rec, model)
    kept_bad = np.nonzero((expected[: r.kept] != rec.d).reshape(r.kept, -1).any(axis=1))[0]
    bad_blocks = mismatching_blocks(lambda select: expected[select], r.kept, r.digests, mma_device.DIGEST_BLOCK)
    dots = int(expected.shape[0]) * rec.combination.mnk[0] * rec.combination.mnk[1]
    return {"dots": dots, "mma": int(expected.shape[0]), "kept_mismatching_mma": kept_bad.tolist()[:10], "kept_mismatches": len(kept_bad),
            "digest_blocks": len(r.digests), "mismatching_blocks": bad_blocks}


def verify_sparse_more(directory: Path) -> dict:
    """Every round-2 entry (:func:`verify_sparse_more_entry`) under the sm_90 profile; entries of
    a float combination without a measured sparse datapath are reported with ``None``."""
    out = {}
    for r in load_sparse_more(directory):
        combo = r.combination
        if combo.a not in INTEGER and sparse_model(combo) is None:
            out[r.recording.name] = {"mismatches": None}
        else:
            out[r.recording.name] = verify_sparse_more_entry(r)
        print(r.recording.name, out[r.recording.name], flush=True)
    return out


def diagnose_sparse_block(r: SparseDigestRecording, block: int, model=None) -> dict:
    """A mismatching digest block: recomputes the block's D and, element by element, finds which
    single register change would explain the recorded digest (the digest is all there is of the
    silicon's D there). Returns the block, the expected and recorded digests and, where one wrong
    register explains the difference, its (mma, lane, register) and the silicon's value."""
    rec = r.recording
    block_size = mma_device.DIGEST_BLOCK
    lo = r.kept + block * block_size
    expected = sparse_model_registers(rec, model, slice(lo, lo + block_size))
    want = int(mma_device.block_digests(np, expected, block_size)[0])
    got = int(r.digests[block])
    out = {"entry": rec.name, "block": block, "mma": [lo, lo + block_size], "expected_digest": want, "recorded_digest": got}
    if want == got:
        return out | {"explained": "no difference"}
    for t, lane, reg, value, silicon in one_register_changes(expected, got):
        return out | {"explained": "one register", "mma_index": lo + t, "lane": lane, "register": reg, "expected": value, "recorded": silicon}
    return out | {"explained": "more than one register differs"}


def sparse_more_variants(model) -> dict:
    """One-part changes of a fitted mma.sp datapath (:func:`separate_sparse_more`)."""
    from ptxspec.semantics.numerics import Rounding

    out = {f"alignment {model.alignment_bits + d} bits": attrs.evolve(model, alignment_bits=model.alignment_bits + d) for d in (-1, 1)}
    out["alignment on the leading bit"] = attrs.evolve(model, reference="msb" if model.reference == "exponent" else "exponent")
    out["final rounding flipped"] = attrs.evolve(model, rounding=Rounding.RN if model.rounding == Rounding.RZ else Rounding.RZ)
    if model.chunk is not None:
        out["C with the first step"] = attrs.evolve(model, c_step="first")
        out["products in index order"] = attrs.evolve(model, order="ascending")
        out["one step of all products"] = attrs.evolve(model, chunk=None)
    return out


def separate_sparse_more(directory: Path, names: list[str] | None = None) -> dict:
    """The separating evidence of each pinned round-2 float datapath: per one-part change
    (:func:`sparse_more_variants`), the kept dot products that change (designed probes and the
    first random mma) and the digest blocks that no longer match; and, for the elements of B that
    meet A's zeros, the kept dot products that change when the dense K-wide row (zeros multiplied:
    ``0 * inf`` a NaN) goes through the datapath instead of the K/2 selected products."""
    from ptxspec.semantics.matrix_layout import expand_sparse
    from ptxspec.semantics.mma import datapath_matrix

    out = {}
    for name, recs in float_groups(load_sparse_more(directory), names).items():
        combo = recs[0].combination
        model = sparse_model(combo)
        if model is None:
            continue
        row = {}
        for label, variant in sparse_more_variants(model).items():
            checks = [verify_sparse_more_entry(r, variant) for r in recs]
            kept = 0
            for r in recs:
                rec = r.recording
                expected = sparse_layout(combo, "d").to_matrix(sparse_model_registers(rec, variant, slice(0, r.kept)))
                kept += int((expected != sparse_layout(combo, "d").to_matrix(rec.d)).sum())
            row[label] = {"kept_dots": kept, "blocks": sum(len(c["mismatching_blocks"]) for c in checks)}
        dense_kept = 0
        for r in recs:
            rec = r.recording
            sel = slice(0, r.kept)
            A, _ = expand_sparse(sparse_layout(combo, "a"), rec.a[sel], rec.e[sel], rec.selector, ordered=combo.ordered)
            B = sparse_layout(combo, "b").to_matrix(rec.b[sel])
            C = sparse_layout(combo, "c").to_matrix(rec.c[sel])
            dense = attrs.evolve(model, order="pairs") if model.order == "pairs" else model
            D = datapath_matrix(dense, combo.a, combo.b, combo.c, combo.d, A, B, C)
            dense_kept += int((np.asarray(D, dtype=np.uint64) != sparse_layout(combo, "d").to_matrix(rec.d)).sum())
        row["zeros of A multiplied (dense row)"] = {"kept_dots": dense_kept, "blocks": None}
        row["kept dot products"] = sum(r.kept for r in recs) * 128
        out[name] = row
        print(name, row, flush=True)
    return out


def fit_sparse_more(directory: Path, names: list[str] | None = None, sample: int = 64) -> dict:
    """:func:`fit_sparse` for the round-2 float combinations: scored on the probes and the first
    ``sample`` kept random mma of each selector, starting from the measured datapath of the nearest
    measured combination (the dense one of the K/2 shape, then round 1's sparse one of the same
    types), then plain datapaths; each candidate then checked on every mma (kept D and digests)."""
    from ptxspec.semantics.mma import Datapath, datapath_for
    from ptxspec.semantics.results import SM_90

    results = {}
    for name, recs in float_groups(load_sparse_more(directory), names).items():
        combo = recs[0].combination
        parts = [sparse_rows_as_mma(r.recording, slice(0, r.kept if sample is None else r.recording.probes + sample)) for r in recs]
        data = tuple(np.concatenate([p[i] for p in parts]) for i in range(4))
        begin = [datapath_for(SM_90, combo.a, combo.b, combo.c, combo.d, None, combo.half.shape)]
        begin += [v for k, v in SM_90.mma_datapaths.items() if k.types == (combo.a, combo.b, combo.c, combo.d) and k.sparse]
        begin += [v for k, v in SM_90.mma_datapaths.items() if k.types[2:] == (combo.c, combo.d) and k.rounding is None and k.sparse]
        begin += [Datapath(alignment_bits=b) for b in (25, 24, 26, 13, 8)]
        model, s, start = best_fit([b for b in begin if b is not None], data, combo.half)
        checks = [verify_sparse_more_entry(r, model) for r in recs]
        results[name] = {"model": model.describe(), "datapath": model, "start": start.describe(), "probe_mismatches": s,
                         "kept_mismatches": sum(c["kept_mismatches"] for c in checks),
                         "mismatching_blocks": sum(len(c["mismatching_blocks"]) for c in checks), "dots": sum(c["dots"] for c in checks)}
        print(name, {k: v for k, v in results[name].items() if k != "datapath"}, flush=True)
    return results



# ---------------------------------------------------------------------------------------------
# Round 2: every remaining dense combination (mma-more-*.npz, meta-mma-more.json)
# ---------------------------------------------------------------------------------------------
#
# (Commands: the module docstring, "Round 2, dense".) The same probes, kernels and counter-based random inputs as round 1, for every dense
# combination legal on sm_90a that round 1 did not record (:data:`MORE_COMBINATIONS`). To keep the
# repository small, D is stored in full only for the designed probes and the first
# ``mma_device.FULL_RANDOM`` random mma; the other random mma are stored as one digest per block
# of ``mma_device.DIGEST_BLOCK`` mma (exhaustive_device's digest; :func:`mma_device.block_digests`),
# which the replay recomputes from the model's D.

#: Random mma per round-2 combination (times ``random_scale``), a multiple of the digest block:
#: 1024 mma of an m16n8 shape are 131072 dot products; m8n8 shapes (64 dot products) record 2048,
#: m8n8k4.f16 (four 8x8x4 mma per warp, 256 dot products) 1024.
MORE_RANDOM = 1024
#: At most this many designed probe mma (warps) per round-2 float combination.
MORE_PROBE_MMA = 200


@attrs.frozen
class MoreCombination(Combination):
    """A round-2 combination: :class:`Combination` with the layouts of A and B (only m8n8k4 with
    .f16 takes others than .row.col, §9.7.14.5.14) and the .b1 operation (``"and"``/``"xor"``,
    then ``.popc``)."""

    alayout: str = "row"
    blayout: str = "col"
    bit_op: str = ""

    @property
    def name(self) -> str:
        layouts = "" if (self.alayout, self.blayout) == ("row", "col") else f"-{self.alayout}-{self.blayout}"
        op = f"-{self.bit_op}-popc" if self.bit_op else ""
        return Combination.name.fget(self) + layouts + op

    @property
    def instruction(self) -> str:
        sat = ".satfinite" if self.qualifier == ".satfinite" else ""
        rnd = self.qualifier if self.qualifier in (".rn", ".rz", ".rm", ".rp") else ""
        op = f".{self.bit_op}.popc" if self.bit_op else ""
        return f"mma.sync.aligned.{self.shape}.{self.alayout}.{self.blayout}{sat}.{self.d}.{self.a}.{self.b}.{self.c}{rnd}{op}"

    @property
    def quad_pairs(self) -> bool:
        """§9.7.14.5.1: "a warp executing mma.m8n8k4 with .f16 computes 4 MMA operations"."""
        return self.shape == "m8n8k4" and self.a == "f16"

    def descriptions(self) -> dict:
        """Every operand's :func:`more_description`."""
        return {o: more_description(self, o) for o in "abcd"}

    def probe_registers(self) -> dict:
        return more_probes(self)


def _more_combinations() -> tuple[MoreCombination, ...]:
    C = MoreCombination
    out = [C("m16n8k8", d, "f16", "f16", c) for d, c in (("f32", "f32"), ("f16", "f16"), ("f32", "f16"), ("f16", "f32"))]
    out += [C("m8n8k4", d, "f16", "f16", c, alayout=al, blayout=bl)
            for d, c in (("f16", "f16"), ("f32", "f32"), ("f32", "f16")) for al in ("row", "col") for bl in ("row", "col")]
    out += [C("m16n8k8", "f32", "bf16", "bf16", "f32"), C("m16n8k4", "f32", "tf32", "tf32", "f32")]
    out += [C(shape, "f64", "f64", "f64", "f64", q) for shape in ("m16n8k4", "m16n8k16") for q in (".rn", ".rz", ".rm", ".rp")]
    out += [C("m16n8k8", "f64", "f64", "f64", "f64", q) for q in (".rn", ".rm", ".rp")]
    fp8 = ("e4m3", "e5m2")
    out += [C("m16n8k16", d, a, b, d) for d in ("f32", "f16") for a in fp8 for b in fp8]
    out += [C("m16n8k32", "f32", "e5m2", "e4m3", "f32"), C("m16n8k32", "f16", "e5m2", "e5m2", "f16"), C("m16n8k32", "f16", "e4m3", "e5m2", "f16")]
    taken = {c.name for c in COMBINATIONS}
    for shapes, types in ((("m16n8k16", "m16n8k32", "m8n8k16"), ("s8", "u8")), (("m16n8k32", "m16n8k64", "m8n8k32"), ("s4", "u4"))):
        for shape in shapes:
            scale = 2 if shape.startswith("m8n8") else 1
            for a in types:
                for b in types:
                    for q in ("", ".satfinite"):
                        # i4: .satfinite on one shape (m16n8k64), every sign pair.
                        if q and types[0] == "s4" and shape != "m16n8k64":
                            continue
                        c = C(shape, "s32", a, b, "s32", q, random_scale=scale)
                        if Combination(shape, "s32", a, b, "s32", q).name not in taken:
                            out.append(c)
    out += [C(shape, "s32", "b1", "b1", "s32", bit_op=op, random_scale=2 if shape == "m8n8k128" else 1)
            for shape in ("m16n8k128", "m16n8k256", "m8n8k128") for op in ("and", "xor")]
    out = [attrs.evolve(c, random_scale=2) if c.shape == "m8n8k4" and c.a == "f64" else c for c in out]
    return tuple(out)


MORE_COMBINATIONS: tuple[MoreCombination, ...] = _more_combinations()


def more_layout(combo: MoreCombination, operand: str):
    """The fragment layout (semantics/matrix_layout.py) of ``operand`` of ``combo``; for
    m8n8k4.f16 the four computations' matrices are stacked along the rows."""
    from ptxspec.semantics.matrix_layout import fragment_layout

    chosen = {"a": combo.alayout, "b": combo.blayout}.get(operand) if combo.quad_pairs else None
    return fragment_layout(combo.shape, operand, getattr(combo, operand), layout=chosen)


def more_description(combo: MoreCombination, operand: str) -> dict:
    """:func:`operand_description` from the fragment layouts (registers of sub-byte, .b1 and
    quad-pair operands included), as the device generator reads it."""
    lay = more_layout(combo, operand)
    t = getattr(combo, operand)
    if t in INTEGER:
        element = {"type": t, "kind": "int", "bits": lay.element_bits, "signed": INTEGER[t][1]}
    else:
        f = FORMATS[t]
        element = {"type": t, "kind": "float", "bits": lay.element_bits, "exponent_bits": f.exponent_bits, "mantissa_bits": f.mantissa_bits, "shift": f.shift}
    return {"registers": lay.registers, "register_bits": lay.register_bits, "rows": lay.rows, "cols": lay.cols, "element": element}


def _stack(combo: MoreCombination, A, B, C):
    """m8n8k4.f16: four consecutive 8x8x4 problems -> one warp's stacked matrices (padded)."""
    m, n, k = combo.mnk
    pad = -len(A) % 4
    A, B, C = (np.concatenate([x, np.zeros((pad,) + x.shape[1:], dtype=x.dtype)]) for x in (A, B, C))
    return A.reshape(-1, 4 * m, k), B.reshape(-1, 4 * k, n), C.reshape(-1, 4 * m, n)


def _unstack(combo: MoreCombination, *xs):
    """The inverse of :func:`_stack`: ``[warp, 4*R, cols]`` -> ``[4*warp, R, cols]``."""
    return tuple(x.reshape(-1, x.shape[-2] // 4, x.shape[-1]) for x in xs)


def more_probes(combo: MoreCombination) -> dict:
    """The designed probes (:func:`probes`) of ``combo`` as registers, at most
    :data:`MORE_PROBE_MMA` warps for a float combination."""
    cap = MORE_PROBE_MMA * (4 if combo.quad_pairs else 1) if combo.a not in INTEGER else PROBE_MMA
    p = probes(combo, cap)
    A, B, C = p["a"], p["b"], p["c"]
    if combo.quad_pairs:
        A, B, C = _stack(combo, A, B, C)
    out = {}
    for o, x in zip("abc", (A, B, C)):
        lay = more_layout(combo, o)
        out[o] = np.asarray(lay.from_matrix(x)).astype(np.uint64 if lay.register_bits == 64 else np.uint32)
    return out | {"designed": p["designed"], "available": p["available"]}


def more_plan(named, random: int = MORE_RANDOM) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The round-2 plan entries and probe registers of ``named`` ((kernel name, combination)
    pairs; no ptxas here): :func:`dense_plan` with digests."""
    return dense_plan(named, random, digests=True)


def prepare_more(bundle: Path, random: int = MORE_RANDOM) -> None:
    """The round-2 bundle: ``more.cubin`` (one kernel per combination ptxas accepts),
    ``more-plan.json`` and ``more-probes.npz`` (for ``mma_device.py run-more``; :func:`prepare_round`
    of :data:`ROUND_2`)."""
    block = mma_device.DIGEST_BLOCK
    if random % block or random <= mma_device.FULL_RANDOM:
        raise SystemExit(f"--random must be a multiple of {block} above {mma_device.FULL_RANDOM}")
    prepare_round(ROUND_2, bundle, random)


@attrs.frozen
class MoreRecording:
    """One round-2 combination: registers ``[mma, 32, registers]`` of A, B, C for every mma (the
    random ones regenerated), D of the first ``full`` mma (the probes and the first random ones)
    and one digest per block of ``block`` mma after those."""

    combination: MoreCombination
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    digests: np.ndarray
    probes: int
    block: int

    @property
    def full(self) -> int:
        return self.d.shape[0]

    @property
    def dots_per_mma(self) -> int:
        m, n, _ = self.combination.mnk
        return m * n * (4 if self.combination.quad_pairs else 1)

    @property
    def dots(self) -> int:
        return (self.full - self.probes + len(self.digests) * self.block) * self.dots_per_mma

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> MoreRecording:
        name = entry["name"]
        return cls(more_combination_named(name), *inputs, arrays[f"{name}_d"], arrays[f"{name}_digests"], entry["probes"], entry["block"])


def more_combination_named(name: str) -> MoreCombination:
    return next(c for c in MORE_COMBINATIONS if c.name == name)


def load_more(directory: Path, names=None) -> list[MoreRecording]:
    """Every round-2 combination recorded under ``directory`` (``meta-mma-more.json``,
    ``mma-more-*.npz``), or those named in ``names``."""
    return load_round(ROUND_2, directory, names)


def more_matrices(combo: MoreCombination, *registers) -> tuple[np.ndarray, ...]:
    """Registers of A, B, C (and D) -> the matrices of element bits of each mma computation
    (``[mma, M, K]``...; the four computations of an m8n8k4.f16 warp as four mma)."""
    out = tuple(np.asarray(more_layout(combo, o).to_matrix(x)) for o, x in zip("abcd", registers))
    return _unstack(combo, *out) if combo.quad_pairs else out


def more_model(combo: MoreCombination, profile=None):
    """The datapath ``profile`` (default sm_90) gives ``combo``, None for integers; raises
    LookupError if the profile has none (the combination is not pinned)."""
    from ptxspec.semantics.mma import datapath_for
    from ptxspec.semantics.numerics import Rounding
    from ptxspec.semantics.results import SM_90

    if combo.a in INTEGER:
        return None
    rounding = Rounding(combo.qualifier.lstrip(".")) if combo.qualifier else Rounding.RN
    model = datapath_for(profile or SM_90, combo.a, combo.b, combo.c, combo.d, rounding, combo.shape)
    if model is None:
        raise LookupError(f"{combo.name}: no measured datapath")
    return model


def more_expected(combo: MoreCombination, a, b, c, model=None) -> np.ndarray:
    """D registers ``[mma, 32, registers]`` of the inputs under ``model`` (default: the sm_90
    datapath; exact :func:`integer_matrix` for integers)."""
    from ptxspec.semantics.mma import datapath_matrix, integer_matrix

    A, B, C = more_matrices(combo, a, b, c)
    if combo.a in INTEGER:
        D = integer_matrix(combo.a, combo.b, A, B, C, satfinite=combo.qualifier == ".satfinite", bit_op=combo.bit_op or None)
    else:
        D = datapath_matrix(model or more_model(combo), combo.a, combo.b, combo.c, combo.d, A, B, C)
    D = np.asarray(D, dtype=np.uint64)
    if combo.quad_pairs:
        D = D.reshape(-1, 4 * D.shape[-2], D.shape[-1])
    lay = more_layout(combo, "d")
    return np.asarray(lay.from_matrix(D)).astype(np.uint64 if lay.register_bits == 64 else np.uint32)


def replay_more(rec: MoreRecording, model=None, blocks=None) -> dict:
    """Compare ``rec`` with ``model``: every stored D register, and the digests of the blocks
    ``blocks`` (default all). Returns the dot products compared, the mismatching elements of the
    stored part (``[mma, row, col]`` of the computation matrices) and the indices of the blocks
    whose digest differs."""
    full = rec.full
    expected = more_expected(rec.combination, rec.a[:full], rec.b[:full], rec.c[:full], model)
    got_m = more_matrices(rec.combination, rec.a[:full], rec.b[:full], rec.c[:full], rec.d)[3]
    want_m = more_matrices(rec.combination, rec.a[:full], rec.b[:full], rec.c[:full], expected)[3]
    bad = np.argwhere(got_m != want_m)
    blocks = range(len(rec.digests)) if blocks is None else blocks
    model_d = lambda select: more_expected(rec.combination, rec.a[select], rec.b[select], rec.c[select], model)
    bad_blocks = mismatching_blocks(model_d, full, rec.digests, rec.block, blocks)
    dots = (int(got_m.size) + len(blocks) * rec.block * rec.dots_per_mma)
    return {"dots": dots, "stored_mismatches": len(bad), "first": bad[:5].tolist(), "bad_blocks": bad_blocks}


def diagnose_block(rec: MoreRecording, block: int, model=None) -> list[dict]:
    """Which D register of digest block ``block`` differs, from the digest alone: with one wrong
    register i, the difference of the digests is ``delta * w_i mod 2^64`` (w_i odd, invertible),
    so ``delta = diff * w_i^-1``; the candidates are the i whose delta gives a value that fits
    the register. Returns them (mma index, lane, register, model value, implied silicon value)."""
    lo = rec.full + block * rec.block
    sel = slice(lo, lo + rec.block)
    d = more_expected(rec.combination, rec.a[sel], rec.b[sel], rec.c[sel], model)
    return [{"mma": lo + t, "lane": lane, "register": reg, "model": value, "silicon": silicon}
            for t, lane, reg, value, silicon in one_register_changes(d, int(rec.digests[block]))]


def verify_more(directory: Path, blocks: int | None = None) -> dict:
    """Every round-2 recording against the sm_90 profile (``blocks``: only the first so many
    digest blocks of each)."""
    out = {}
    for rec in load_more(directory):
        try:
            model = more_model(rec.combination)
        except LookupError:
            out[rec.combination.name] = {"dots": rec.dots, "mismatches": None}
            print(rec.combination.name, "not pinned", flush=True)
            continue
        r = replay_more(rec, model, None if blocks is None else range(min(blocks, len(rec.digests))))
        out[rec.combination.name] = r
        print(rec.combination.name, r, flush=True)
    return out


def nearest_measured(combo: MoreCombination):
    """The measured sm_90 datapath of the nearest round-1 combination: same types, the measured
    shape of that type family (the search for ``combo`` starts there)."""
    from ptxspec.profiles import MatrixKey
    from ptxspec.semantics.numerics import Rounding
    from ptxspec.semantics.results import SM_90

    table = SM_90.mma_datapaths
    if combo.a == "f64":
        rounding = Rounding(combo.qualifier.lstrip(".") or "rn")
        base = table[MatrixKey("f64", "f64", "f64", "f64", shape="m8n8k4", rounding="rn")]
        return attrs.evolve(base, accumulator_rounding=rounding, rounding=rounding)
    for key, model in table.items():
        if key.types == (combo.a, combo.b, combo.c, combo.d) and not key.sparse:
            return model
    for key, model in table.items():
        if key.types[:3] == (combo.a, combo.b, combo.c) and not key.sparse:
            return model
    for key, model in table.items():
        if key.types[2:] == (combo.c, combo.d) and not key.sparse and (combo.a in ("e4m3", "e5m2")) == (key.atype in ("e4m3", "e5m2")):
            return model
    return None


def fit_more(directory: Path, names: list[str] | None = None) -> dict:
    """Fit each round-2 float combination: the nearest measured datapath first
    (:func:`nearest_measured`), scored on the stored D (probes and the first random mma); if it
    does not reproduce them, :func:`fit`'s coordinate search from it (f64: the candidates of
    :func:`f64_candidates`). Each result is then replayed on every mma (digests included)."""
    from ptxspec.semantics.numerics import Rounding

    results = {}
    for rec, in float_groups(load_more(directory), names).values():
        combo = rec.combination
        full = rec.full
        data = more_matrices(combo, rec.a[:full], rec.b[:full], rec.c[:full], rec.d)
        start = nearest_measured(combo)
        logical = Combination(combo.shape, combo.d, combo.a, combo.b, combo.c, combo.qualifier)
        start_score = len(mismatches(start, logical, *data)) if start is not None else None
        if start_score == 0:
            model, score = start, 0
        elif combo.a == "f64":
            rounding = Rounding(combo.qualifier.lstrip(".") or "rn")
            model, score = min(((m, len(mismatches(m, logical, *data))) for m in f64_candidates(rounding)), key=lambda t: t[1])
        else:
            model, score, _ = fit(None, start=start, data=data, combo=logical)
        r = replay_more(rec, model)
        results[combo.name] = {"start": start.describe() if start is not None else None, "start_mismatches": start_score, "model": model.describe(),
                               "datapath": model, "stored_mismatches": score, **r}
        print(f"{combo.name}: start {start_score} -> {model.describe()}: {score} stored, bad blocks {r['bad_blocks'][:10]}", flush=True)
    return results

# ---------------------------------------------------------------------------------------------
# The campaign's rounds (:class:`Round`)
# ---------------------------------------------------------------------------------------------

#: Round 1, dense: every D in full (``prepare``, ``mma_device.py run``).
ROUND_1 = Round(COMBINATIONS, mma_device.DENSE, kernel="mma")
#: Round 1, mma.sp: every D in full (``prepare-sparse``, ``run-sparse``).
SPARSE_ROUND_1 = Round(SPARSE_COMBINATIONS, mma_device.SPARSE, kernel="msp")
#: Round 2, dense: the random D after the first ones as block digests (``prepare-more``, ``run-more``).
ROUND_2 = Round(MORE_COMBINATIONS, mma_device.MORE, kernel="mmx")
#: Round 2, mma.sp: likewise (``prepare-sparse-more``, ``run-sparse-more``).
SPARSE_ROUND_2 = Round(SPARSE_MORE_COMBINATIONS, mma_device.SPARSE_MORE, kernel="msp")


def _random_option(args: list[str], default: int) -> int:
    """``BUNDLE --random N``: N, else ``default``."""
    return int(args[2]) if len(args) >= 3 and args[1] == "--random" else default


#: The command line: command -> what it does with its arguments (``DIR`` or ``BUNDLE`` first).
COMMANDS = {
    "prepare": lambda args: prepare(Path(args[0]), _random_option(args, RANDOM)),
    "prepare-sparse": lambda args: prepare_sparse(Path(args[0]), _random_option(args, SPARSE_RANDOM)),
    "prepare-more": lambda args: prepare_more(Path(args[0]), _random_option(args, MORE_RANDOM)),
    "prepare-sparse-more": lambda args: prepare_sparse_more(Path(args[0])),
    "verify": lambda args: verify(Path(args[0])),
    "verify-sparse": lambda args: verify_sparse(Path(args[0])),
    "verify-more": lambda args: verify_more(Path(args[0])),
    "verify-sparse-more": lambda args: verify_sparse_more(Path(args[0])),
    "spec-check": lambda args: spec_check(Path(args[0])),
    "spec-check-sparse": lambda args: spec_check_sparse(Path(args[0])),
    "fit": lambda args: fit_all(Path(args[0]), args[1:] or None),
    "fit-sparse": lambda args: fit_sparse(Path(args[0]), args[1:] or None),
    "fit-more": lambda args: fit_more(Path(args[0]), args[1:] or None),
    "fit-sparse-more": lambda args: fit_sparse_more(Path(args[0]), args[1:] or None),
    "separate-sparse-more": lambda args: separate_sparse_more(Path(args[0]), args[1:] or None),
}


def main() -> int:
    """The command line (see the module docstring); ``sys.argv`` as given."""
    command = COMMANDS.get(sys.argv[1]) if len(sys.argv) >= 3 else None
    if command is None:
        print(__doc__)
        return 2
    command(sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(command_line(main))
