"""The mma campaign: which D does sm_90 silicon compute for ``mma.sync.aligned`` and ``mma.sp``?

(§9.7.14.5 and §9.7.14.6: the manual fixes the fragment layouts and leaves the accumulation's
order, internal precision and rounding open; this campaign measures them.) One command line for
every round (:mod:`ptxspec.conformance.silicon.__main__`)::

    python -m ptxspec.conformance.silicon mma prepare BUNDLE [--round ROUND] [--random N]   # here (ptxas)
    python3 conformance/silicon/mma_device.py run BUNDLE OUT [ROUND]                        # on the GPU
    python -m ptxspec.conformance.silicon mma verify DIR [--round ROUND]
    python -m ptxspec.conformance.silicon mma fit DIR [--round ROUND] [NAME ...]
    python -m ptxspec.conformance.silicon mma spec-check DIR [--round ROUND] [--random N]
    python -m ptxspec.conformance.silicon mma separate DIR [--round ROUND] [NAME ...]

The campaign is four rounds, each one :class:`Round` (:data:`ROUNDS`, named by the stem of its
recording): its combinations, their kind (dense ``mma`` or ``mma.sp``) and its storage policy
(every D in full, or D in full for the designed probes and the first random mma and one digest per
block of random mma after those):

* ``mma`` (:data:`COMBINATIONS`): 15 dense combinations, every D stored;
* ``mma-sp`` (:data:`SPARSE_COMBINATIONS`): mma.sp, one kernel per combination and sparsity
  selector, every D stored;
* ``mma-more`` (:data:`MORE_COMBINATIONS`): every other dense combination sm_90a has, digests;
* ``mma-sp-more`` (:data:`SPARSE_MORE_COMBINATIONS`): every other mma.sp combination, digests.

Every command takes the round: :func:`prepare` assembles one kernel per combination for sm_90a (a
combination that ptxas refuses is listed with ptxas's message and left out), builds the designed
probes (matrices of element bit patterns, placed into the lanes' registers with the fragment
layouts of §9.7.14.5) and writes the plan; the random inputs are not stored:
:func:`mma_device.random_registers` regenerates them from the seed, here and on the device, bit
for bit. The recording (``ROUND-<i>.npz``, ``meta-ROUND.json``) goes to conformance/data/sm_90/
unchanged; :func:`load` reads it back as one record per plan entry (:class:`Recording`,
:class:`SparseRecording`, :class:`MoreRecording`, :class:`SparseDigestRecording`, by kind and
storage), and each record answers the same questions: :meth:`verify` (every recorded D, or its
digest, against the sm_90 profile or a candidate datapath), :meth:`outside_spec` (the recorded
results outside the spec-level sets), :meth:`fit_data` (the dot products a datapath is fitted to)
and, for the digest rounds, :meth:`diagnose` (the register that explains a mismatching digest).
:func:`verify`, :func:`fit`, :func:`spec_check` and :func:`separate` run them over a recording.

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

**mma.sp** (§9.7.14.6): random valid metadata (every nibble of every lane one of the fields
§9.7.14.6.1 defines, :func:`mma_device.random_metadata`); the designed probes are the dense
designs of K/2 products placed on the positions each row's metadata selects
(:func:`sparse_probes`). Each row of an mma.sp is fitted and checked as a dense mma of one row and
K/2 products (:func:`sparse_rows_as_mma`): the stored elements of A and the rows of B its metadata
selects.

**The digest rounds** keep D in full for the designed probes and the first
``mma_device.FULL_RANDOM`` random mma of each entry, the other random mma as one digest per block
of ``mma_device.DIGEST_BLOCK`` (:func:`mma_device.block_digests`); the replay recomputes the
model's D there and compares digests (:func:`mismatching_blocks`), and :meth:`diagnose` finds the
single register whose change would give the recorded digest.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ptxspec.conformance.silicon import mma_device
from ptxspec.conformance.silicon.campaign import HEADER, CampaignError, assemble_each, assemble_module, save_arrays, split_files, write_json
from ptxspec.semantics.numerics import Exact, Rounding, canonical_nan, decode, infinity, round_value, to_fraction
from ptxspec.semantics.sparse import row_problems, selected_b, sparse_mma
from ptxspec.spec.types import FORMATS

#: Random mma per combination of the ``mma`` round (besides the designed probes): 1000, i.e. 1.28 *
#: 10^5 dot products for the m16n8 shapes (at least 10^5 per combination); m8n8k4 (64 dot products
#: per mma) records twice as many. The generator is counter-based: a run with more random mma
#: records these first ones and then more (the first H100 run recorded 10^4 of each).
RANDOM = 1000
#: At most this many designed probe mma per combination (8 designs each, and their mirror images).
PROBE_MMA = 1700
#: Raw bytes per output file at most (the device machine returns at most 8 files of 16 MiB).
FILE_BYTES = 13 << 20
#: Random mma.sp per combination of the ``mma-sp`` round, shared out over its sparsity selectors
#: (1.28 * 10^5 dot products).
SPARSE_RANDOM = 1000
#: At most this many designed probe mma per ``mma-sp`` combination (over all its selectors).
SPARSE_PROBE_MMA = 600
#: Random mma per ``mma-more`` combination (times ``random_scale``), a multiple of the digest
#: block: 1024 mma of an m16n8 shape are 131072 dot products; m8n8 shapes (64 dot products) record
#: 2048, m8n8k4.f16 (four 8x8x4 mma per warp, 256 dot products) 1024.
MORE_RANDOM = 1024
#: At most this many designed probe mma (warps) per ``mma-more`` float combination.
MORE_PROBE_MMA = 200
#: Designed probe mma per ``mma-sp-more`` combination at most (over its selectors): the storage budget.
SPARSE_MORE_PROBE_MMA = 256
#: Random mma.sp per ``mma-sp-more`` combination (shared out over its selectors; 2.6 * 10^5 dot products).
SPARSE_MORE_RANDOM = 2048
#: Random mma (after the designed probes) a fit is scored on, besides the probes.
FIT_SAMPLE = 64


# ---------------------------------------------------------------------------------------------
# The combinations of the four rounds
# ---------------------------------------------------------------------------------------------


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
        return self._stem()

    def _stem(self) -> str:
        """The shape, the types of D, A, B, C and the qualifier: the name of a ``.row.col`` form."""
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


def _more(shape: str, d: str, a: str, b: str, c: str, qualifier: str = "", ordered: bool = False) -> SparseCombination:
    return SparseCombination(shape, d, a, b, c, qualifier, ordered)


_I8 = [("s8", "s8"), ("s8", "u8"), ("u8", "s8"), ("u8", "u8")]
_I4 = [("s4", "s4"), ("s4", "u4"), ("u4", "s4"), ("u4", "u4")]

#: The mma.sp forms legal on sm_90a (spec/matrix.py) that ``mma-sp`` did not record; each family
#: has at least one ::ordered_metadata member (the fp8 one, and m16n8k32 .f16, are ``mma-sp``'s).
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


@attrs.frozen
class MoreCombination(Combination):
    """A combination of round ``mma-more``: :class:`Combination` with the layouts of A and B (only m8n8k4 with
    .f16 takes others than .row.col, §9.7.14.5.14) and the .b1 operation (``"and"``/``"xor"``,
    then ``.popc``)."""

    alayout: str = "row"
    blayout: str = "col"
    bit_op: str = ""

    @property
    def name(self) -> str:
        layouts = "" if (self.alayout, self.blayout) == ("row", "col") else f"-{self.alayout}-{self.blayout}"
        op = f"-{self.bit_op}-popc" if self.bit_op else ""
        return self._stem() + layouts + op

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
    out += [
        C("m8n8k4", d, "f16", "f16", c, alayout=al, blayout=bl)
        for d, c in (("f16", "f16"), ("f32", "f32"), ("f32", "f16"))
        for al in ("row", "col")
        for bl in ("row", "col")
    ]
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
    out += [
        C(shape, "s32", "b1", "b1", "s32", bit_op=op, random_scale=2 if shape == "m8n8k128" else 1)
        for shape in ("m16n8k128", "m16n8k256", "m8n8k128")
        for op in ("and", "xor")
    ]
    out = [attrs.evolve(c, random_scale=2) if c.shape == "m8n8k4" and c.a == "f64" else c for c in out]
    return tuple(out)


MORE_COMBINATIONS: tuple[MoreCombination, ...] = _more_combinations()

#: Every combination of every round, by name (the names are unique across the rounds).
_BY_NAME = {c.name: c for c in COMBINATIONS + SPARSE_COMBINATIONS + SPARSE_MORE_COMBINATIONS + MORE_COMBINATIONS}


def combination_named(name: str):
    """The combination (of any round) named ``name``."""
    return _BY_NAME[name]


# ---------------------------------------------------------------------------------------------
# Fragment layouts (§9.7.14.5, §9.7.14.6.2: semantics/matrix_layout.py)
# ---------------------------------------------------------------------------------------------


def layout(shape: str, operand: str, element_type: str):
    """The fragment layout of ``operand`` (:func:`ptxspec.semantics.matrix_layout.fragment_layout`)."""
    from ptxspec.semantics.matrix_layout import fragment_layout

    return fragment_layout(shape, operand, element_type)


def matrices_to_registers(combo: Combination, operand: str, matrices: np.ndarray) -> np.ndarray:
    """``[batch, rows, cols]`` element bits -> ``[batch, 32, registers]`` register words."""
    return np.asarray(layout(combo.shape, operand, getattr(combo, operand)).from_matrix(matrices))


def registers_to_matrices(combo: Combination, operand: str, registers: np.ndarray) -> np.ndarray:
    return np.asarray(layout(combo.shape, operand, getattr(combo, operand)).to_matrix(registers))


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
    q = Fraction(value)
    sign, den = int(q < 0), q.denominator
    if den & (den - 1):
        raise ValueError("not dyadic")
    x = Exact(sign, abs(q.numerator), -(den.bit_length() - 1))
    bits = round_value(x, fmt, Rounding.RN)
    back = decode(fmt, bits)
    if not isinstance(back, Exact) or to_fraction(back) != q:
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
    out: list[Design | None] = []

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
            out.append(terms(product(f_c.min_normal_exponent, s), c=-s * (P2**f_c.min_normal_exponent - P2 ** (e))))
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


#: A design encoded: K (a, b) element bit patterns and c's.
Encoded = tuple[list[tuple[int, int]], int]


def encoded_designs(combo: Combination) -> list[Encoded]:
    """:func:`designs` of ``combo`` encoded in its types, the unrepresentable ones left out."""
    encoded: list[Encoded] = []
    for pairs, c in designs(combo):
        try:
            encoded.append(([(encode(combo.a, a), encode(combo.b, b)) for a, b in pairs], encode(combo.c, c)))
        except (ValueError, ZeroDivisionError):
            continue
    return encoded


def sample_designs(encoded: list[Encoded], slots: int) -> list[Encoded]:
    """At most ``slots`` of ``encoded``: beyond that, a fixed stride, so every family keeps members."""
    return encoded if len(encoded) <= slots else [encoded[(i * len(encoded)) // slots] for i in range(slots)]


def probes(combo: Combination, cap: int = PROBE_MMA) -> dict[str, Any]:
    """The designed probes as A, B, C matrices of element bits ``[mma, rows, cols]``.

    Design s of an mma sits in row r = s (< N) of A, column r of B and C[r, r]; row r + N (M = 2N)
    holds the same design with A and C negated (the mirror image: it tells a rounding toward
    zero from a rounding toward one infinity). Other elements of C are zero.
    """
    m, n, k = combo.mnk
    encoded = encoded_designs(combo)
    per = min(m, n)
    chosen = sample_designs(encoded, cap * per)
    count = (len(chosen) + per - 1) // per
    A = np.zeros((count, m, k), dtype=np.uint64)
    B = np.zeros((count, k, n), dtype=np.uint64)
    C = np.zeros((count, m, n), dtype=np.uint64)
    for s, (codes, code_c) in enumerate(chosen):
        t, r = divmod(s, per)
        for kk, (a, b) in enumerate(codes):
            A[t, r, kk] = a
            B[t, kk, r] = b
            if m > n:
                A[t, r + n, kk] = _negate(combo.a, a)
        C[t, r, r] = code_c
        if m > n:
            C[t, r + n, r] = _negate(combo.c, code_c)
    return {"a": A, "b": B, "c": C, "designed": len(chosen), "available": len(encoded)}


@functools.cache
def half_probes(combo: Combination) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

#: Every kernel's start: the warp index of the thread (%t4); a warp at or past ``n`` leaves (so
#: .aligned holds); %q0 is the thread's index, which addresses its registers.
_WARP_PROLOGUE = (
    "  mov.u32 %t0, %tid.x;",
    "  mov.u32 %t1, %ctaid.x;",
    "  mov.u32 %t2, %ntid.x;",
    "  mad.lo.u32 %t3, %t1, %t2, %t0;",
    "  shr.u32 %t4, %t3, 5;",
    "  ld.param.u32 %t5, [n];",
    "  setp.ge.u32 %p, %t4, %t5;",
    "  @%p bra DONE;",
    "  cvt.u64.u32 %q0, %t3;",
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
        "  .reg .pred %p;",
        "  .reg .b32 %t<8>;",
        "  .reg .b64 %q<16>;",
        *[f"  .reg .b{ops[o]['register_bits']} %{o}<{max(2, ops[o]['registers'])}>;" for o in "abcd"],
        *_WARP_PROLOGUE,
    ]
    for i, o in enumerate("abcd"):
        width = ops[o]["register_bits"] // 8
        lines += [
            f"  ld.param.u64 %q{1 + i}, [p{o}];",
            f"  cvta.to.global.u64 %q{1 + i}, %q{1 + i};",
            f"  mul.lo.u64 %q{5 + i}, %q0, {ops[o]['registers'] * width};",
            f"  add.u64 %q{1 + i}, %q{1 + i}, %q{5 + i};",
        ]
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


def sparse_kernel(combo: SparseCombination, selector: int, name: str) -> str:
    """One warp per mma.sp, as :func:`kernel`, with the metadata E loaded per lane from ``pe`` and
    the sparsity selector as an immediate."""
    ops = sparse_description(combo)
    lines = [
        "  .reg .pred %p;",
        "  .reg .b32 %t<8>;",
        "  .reg .b64 %q<20>;",
        "  .reg .b32 %e0;",
        *[f"  .reg .b32 %{o}<{max(2, ops[o]['registers'])}>;" for o in "abcd"],
        *_WARP_PROLOGUE,
    ]
    for i, o in enumerate("abcde"):
        lines += [
            f"  ld.param.u64 %q{1 + i}, [p{o}];",
            f"  cvta.to.global.u64 %q{1 + i}, %q{1 + i};",
            f"  mul.lo.u64 %q{6 + i}, %q0, {ops[o]['registers'] * 4};",
            f"  add.u64 %q{1 + i}, %q{1 + i}, %q{6 + i};",
        ]
    for i, o in enumerate("abc"):
        for r in range(ops[o]["registers"]):
            lines.append(f"  ld.global.b32 %{o}{r}, [%q{1 + i}+{r * 4}];")
    lines.append("  ld.global.b32 %e0, [%q5];")  # %q1..%q5: A, B, C, D, E
    reg = lambda o: "{" + ", ".join(f"%{o}{r}" for r in range(ops[o]["registers"])) + "}"
    lines.append(f"  {combo.instruction()} {reg('d')}, {reg('a')}, {reg('b')}, {reg('c')}, %e0, {selector};")
    for r in range(ops["d"]["registers"]):
        lines.append(f"  st.global.b32 [%q4+{r * 4}], %d{r};")
    return _entry(name, "abced", lines)


# ---------------------------------------------------------------------------------------------
# Plans: what a round's bundle holds
# ---------------------------------------------------------------------------------------------


def seed_of(combo: Combination) -> int:
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
        plan.append(
            {
                "name": combo.name,
                "kernel": name,
                "instruction": combo.instruction,
                "file": 0,
                "operands": ops,
                "probes": int(p["a"].shape[0]),
                "designed": p["designed"],
                "random": n_random,
                "seed": seed_of(combo),
            }
        )
    output_files(plan, sizes, digests)
    if digests:
        for entry in plan:
            entry |= {"full": mma_device.FULL_RANDOM, "block": mma_device.DIGEST_BLOCK}
    return plan, arrays


def sparse_plan(
    combos, random: int = SPARSE_RANDOM, probe_mma: int = SPARSE_PROBE_MMA, digests: bool = False
) -> tuple[list[dict], dict[str, np.ndarray], list[str]]:
    """The plan entries (one per combination and selector), the probe arrays and the kernels'
    PTX of ``combos`` (no ptxas here); ``digests``: the storage policy (:attr:`Round.digests`,
    :func:`output_files`), with each entry's random mma rounded up to whole blocks of
    ``mma_device.DIGEST_BLOCK`` after the ``mma_device.FULL_RANDOM`` kept ones."""
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
            plan.append(
                {
                    "name": name,
                    "combination": combo.name,
                    "kernel": kname,
                    "instruction": combo.instruction(),
                    "selector": s,
                    "file": 0,
                    "operands": ops,
                    "fields": combo.fields,
                    "probes": int(t),
                    "designed": int(pr[s]["designed"]),
                    "random": per,
                    "seed": zlib.crc32(name.encode()),
                }
            )
    output_files(plan, sizes, digests)
    if digests:
        block, keep = mma_device.DIGEST_BLOCK, mma_device.FULL_RANDOM
        for entry in plan:
            rest = max(entry["random"] - keep, block)
            entry["random"] = keep + -(-rest // block) * block
            entry["keep"] = keep
    return plan, arrays, kernels


def output_files(plan: list[dict], sizes: list[int], digests: bool) -> None:
    """The output file of each plan entry (of ``sizes`` bytes with every D) by the storage policy:
    with ``digests`` the one file; else :func:`~ptxspec.conformance.silicon.campaign.split_files`
    at :data:`FILE_BYTES` (the device returns files of 16 MiB, 7 beside its meta file)."""
    files = [0] * len(plan) if digests else split_files(sizes, FILE_BYTES, 7)
    for entry, file in zip(plan, files):
        entry["file"] = file


# ---------------------------------------------------------------------------------------------
# A round of the campaign: one description, the commands every round shares
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Round:
    """One round of the campaign as data: its combinations, their kind, how D is stored and the
    names of its files. :func:`prepare` and :func:`load` serve every round, and the records
    :func:`load` returns answer :func:`verify`, :func:`fit`, :func:`spec_check` and :func:`separate`;
    the rounds are :data:`ROUND_1`, :data:`SPARSE_ROUND_1`, :data:`ROUND_2` and :data:`SPARSE_ROUND_2`."""

    combinations: tuple
    #: The device side of the round (:class:`mma_device.Campaign`): the bundle's and the
    #: recording's file stems, the inputs of each mma and how D is stored, read from one place.
    device: mma_device.Campaign
    #: Kernel names ``{kernel}00``, ``{kernel}01``, ... (one per combination asked of ptxas).
    kernel: str
    #: Random mma per combination unless ``prepare`` is told otherwise.
    random: int
    #: mma.sp: at most this many designed probe mma per combination (dense combinations carry
    #: their own cap, :meth:`Combination.probe_registers`).
    probe_mma: int | None = None

    @property
    def name(self) -> str:
        """The round's name: the stem of its recording."""
        return self.device.out

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
        (kernels named anew, one per selector), with this round's storage policy."""
        if self.sparse:
            assert self.probe_mma is not None, f"{self.name}: an mma.sp round caps its designed probes"
            return sparse_plan([c for _, c in named], random, self.probe_mma, digests=self.digests)
        return (*dense_plan(named, random, self.digests), [kernel(c, n, c.descriptions()) for n, c in named])

    @property
    def record(self) -> type[Recording] | type[SparseRecording] | type[MoreRecording] | type[SparseDigestRecording]:
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
        return self.device.inputs(entry, probes)


def prepare(round_: Round, bundle: Path, random: int | None = None, ptxas: str = "ptxas") -> None:
    """Write the bundle of ``round_``: one kernel per combination that ptxas accepts (asked one
    kernel at a time; a refused one is listed under ``rejected`` with ptxas's message), the plan
    and the designed probes' registers; ``random`` mma per combination (default the round's)."""
    random = round_.random if random is None else random
    if round_.digests and (random % mma_device.DIGEST_BLOCK or random <= mma_device.FULL_RANDOM):
        raise CampaignError(
            f"{random} random mma: a digest round takes a multiple of {mma_device.DIGEST_BLOCK} above {mma_device.FULL_RANDOM}", where="--random"
        )
    bundle.mkdir(parents=True, exist_ok=True)
    named = [(f"{round_.kernel}{i:02d}", c) for i, c in enumerate(round_.combinations)]
    accepted, refused = assemble_each(named, lambda nc: HEADER + round_.trial_kernel(*nc), ptxas)
    rejected = {round_.instruction(c): message for (_, c), message in refused}
    plan, arrays, kernels = round_.plan(accepted, random)
    cubin = assemble_module(HEADER + "\n".join(kernels), ptxas)
    (bundle / f"{round_.bundle}.cubin").write_bytes(cubin)
    write_json(bundle / f"{round_.bundle}-plan.json", {"combinations": plan, "rejected": rejected})
    save_arrays(bundle / f"{round_.bundle}-probes.npz", arrays)
    print(f"{round_.name}: {len(accepted)} combinations ({len(plan)} kernels) assembled, {len(rejected)} rejected by ptxas: {sorted(rejected)}")


def load(directory: Path, round_: Round | None = None, names=None) -> list:
    """Every plan entry recorded under ``directory`` for ``round_`` (default :data:`ROUND_1`; only
    those named in ``names`` when given), as its record class: the recorded arrays, and the
    random inputs regenerated (:meth:`Round.device_inputs`)."""
    from ptxspec.conformance.silicon.campaign import load_arrays, read_json

    round_ = round_ or ROUND_1
    meta = read_json(directory / f"meta-{round_.recording}.json")
    arrays = load_arrays(round_.recorded_files(directory))
    out = []
    for entry in meta["combinations"]:
        name = entry["name"]
        if names is not None and name not in names:
            continue
        inputs = round_.device_inputs(entry, {f"{name}_{o}": arrays[f"{name}_{o}"] for o in round_.inputs})
        out.append(round_.record.from_entry(entry, inputs, arrays))
    return out


# ---------------------------------------------------------------------------------------------
# The records of a recording: one per plan entry, by kind and storage
# ---------------------------------------------------------------------------------------------


def measured_datapath(combo, profile=None):
    """The datapath the profile (default sm_90) pins for the float combination ``combo`` (dense:
    by its rounding and shape; mma.sp: its sparse datapath), None for integers (exact) and where
    the profile pins none (the spec-level sets only)."""
    from ptxspec.semantics.mma import datapath_for
    from ptxspec.semantics.results import SM_90

    if combo.a in INTEGER:
        return None
    if isinstance(combo, SparseCombination):
        return datapath_for(profile or SM_90, combo.a, combo.b, combo.c, combo.d, None, combo.shape, sparse=True)
    rounding = Rounding(combo.qualifier.lstrip(".")) if combo.qualifier else Rounding.RN
    return datapath_for(profile or SM_90, combo.a, combo.b, combo.c, combo.d, rounding, combo.shape)


def _unpinned(combo, model) -> bool:
    """A float combination without a datapath to compare with (none given, none measured)."""
    return combo.a not in INTEGER and model is None and measured_datapath(combo) is None


@attrs.frozen
class Recording:
    """A dense combination recorded in full (round ``mma``): registers ``[mma, 32, registers]`` of
    A, B, C and D; the first ``probes`` mma are the designed probes."""

    combination: Combination
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    probes: int

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> Recording:
        a, b, c = inputs
        return cls(combination_named(entry["name"]), a, b, c, arrays[f"{entry['name']}_d"], entry["probes"])

    @property
    def name(self) -> str:
        return self.combination.name

    @property
    def problem(self) -> Combination:
        """The dense problem whose dot products D holds."""
        return self.combination

    def verify(self, model=None) -> dict:
        """Every recorded D against ``model`` (default: the sm_90 profile; exact integers): the dot
        products compared, the mismatching elements ``[mma, row, col]`` (None: nothing pinned)."""
        combo = self.combination
        A, B, C, D = matrices(self)
        if _unpinned(combo, model):
            return {"dots": int(D.size), "mismatches": None}
        if combo.a in INTEGER:
            from ptxspec.semantics.mma import integer_matrix

            expected = integer_matrix(combo.a, combo.b, A, B, C, satfinite=combo.qualifier == ".satfinite")
        else:
            expected = model_d(model or measured_datapath(combo), combo, A, B, C)
        bad = np.argwhere(expected != D)
        return {"dots": int(D.size), "mismatches": len(bad), "first": bad[:5].tolist()}

    def fit_data(self, sample: int) -> tuple[np.ndarray, ...]:
        """A, B, C, D of the designed probes and the first ``sample`` random mma."""
        return matrices(self, slice(0, self.probes + sample))

    def outside_spec(self, random: int | None = None) -> dict:
        """:func:`outside_spec` of every recorded mma (``random``: the probes and so many random mma)."""
        A, B, C, D = matrices(self, slice(None) if random is None else slice(0, self.probes + random))
        return outside_spec(self.combination, A, lambda t, i, j: B[t, :, j], C, D)


@attrs.frozen
class SparseRecording:
    """One recorded mma.sp entry (a combination and one sparsity selector; round ``mma-sp``):
    registers ``[mma, 32, registers]`` of A (stored half), B, C, D and the metadata E ``[mma, 32]``."""

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
        a, b, c, e = inputs
        return cls(combination_named(entry["combination"]), entry["selector"], entry["name"], a, b, c, e, arrays[f"{entry['name']}_d"], entry["probes"])

    @property
    def problem(self) -> Combination:
        """The dense problem each row of D is (§9.7.14.6): K/2 products of the stored elements."""
        return self.combination.half

    def verify(self, model=None) -> dict:
        """Every recorded D against ``model`` (default: the sm_90 profile, through the semantics'
        sparse path): the dot products compared and the mismatching elements (None: nothing pinned)."""
        D = sparse_layout(self.combination, "d").to_matrix(self.d)
        if _unpinned(self.combination, model):
            return {"dots": int(D.size), "mismatches": None}
        expected = sparse_expected(self) if model is None else sparse_layout(self.combination, "d").to_matrix(sparse_model_registers(self, model))
        bad = np.argwhere(expected != D)
        return {"dots": int(D.size), "mismatches": len(bad), "first": bad[:5].tolist()}

    def fit_data(self, sample: int) -> tuple[np.ndarray, ...]:
        """The probes and the first ``sample`` random mma as dense problems of one row (:func:`sparse_rows_as_mma`)."""
        return sparse_rows_as_mma(self, slice(0, self.probes + sample))

    def outside_spec(self, random: int | None = None) -> dict:
        """:func:`outside_spec` of the K/2 selected products of every recorded mma (``random``: the
        probes and so many random mma)."""
        A, G, C, D = sparse_matrices(self, slice(None) if random is None else slice(0, self.probes + random))
        return outside_spec(self.combination, A, lambda t, i, j: G[t, i, :, j], C, D)

    def zeros_multiplied(self, model, select=slice(None)) -> int:
        """The recorded dot products (of the mma ``select``) that change when the dense K-wide row
        -- A expanded with its zeros, every row of B multiplied (``0 * inf`` a NaN) -- goes through
        ``model`` instead of the K/2 selected products: what tells the two readings apart."""
        from ptxspec.semantics.matrix_layout import expand_sparse
        from ptxspec.semantics.mma import datapath_matrix

        combo = self.combination
        A, _ = expand_sparse(sparse_layout(combo, "a"), self.a[select], self.e[select], self.selector, ordered=combo.ordered)
        B = sparse_layout(combo, "b").to_matrix(self.b[select])
        C = sparse_layout(combo, "c").to_matrix(self.c[select])
        D = datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A, B, C)
        return int((np.asarray(D, dtype=np.uint64) != sparse_layout(combo, "d").to_matrix(self.d[select])).sum())


@attrs.frozen
class MoreRecording:
    """A dense combination of round ``mma-more``: registers ``[mma, 32, registers]`` of A, B, C for
    every mma (the random ones regenerated), D of the first ``full`` mma (the probes and the first
    random ones) and one digest per block of ``block`` mma after those."""

    combination: MoreCombination
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    digests: np.ndarray
    probes: int
    block: int

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> MoreRecording:
        name = entry["name"]
        a, b, c = inputs
        return cls(combination_named(name), a, b, c, arrays[f"{name}_d"], arrays[f"{name}_digests"], entry["probes"], entry["block"])

    @property
    def name(self) -> str:
        return self.combination.name

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

    @property
    def problem(self) -> Combination:
        """The dense problem of one computation (m8n8k4.f16: one of the four a warp computes)."""
        combo = self.combination
        return Combination(combo.shape, combo.d, combo.a, combo.b, combo.c, combo.qualifier)

    def verify(self, model=None, blocks=None) -> dict:
        """Compare with ``model`` (default: the sm_90 profile): every stored D register, and the
        digests of the blocks ``blocks`` (default all). Returns the dot products compared, the
        mismatching elements of the stored part (``[mma, row, col]`` of the computation matrices),
        the indices of the blocks whose digest differs, and their sum (None: nothing pinned)."""
        combo, full = self.combination, self.full
        if _unpinned(combo, model):
            return {"dots": self.dots, "mismatches": None}
        expected = more_expected(combo, self.a[:full], self.b[:full], self.c[:full], model)
        got = more_matrices(combo, self.a[:full], self.b[:full], self.c[:full], self.d)[3]
        want = more_matrices(combo, self.a[:full], self.b[:full], self.c[:full], expected)[3]
        bad = np.argwhere(got != want)
        blocks = range(len(self.digests)) if blocks is None else blocks
        registers = lambda select: more_expected(combo, self.a[select], self.b[select], self.c[select], model)
        bad_blocks = mismatching_blocks(registers, full, self.digests, self.block, blocks)
        dots = int(got.size) + len(blocks) * self.block * self.dots_per_mma
        return {"dots": dots, "mismatches": len(bad) + len(bad_blocks), "stored_mismatches": len(bad), "first": bad[:5].tolist(), "bad_blocks": bad_blocks}

    def diagnose(self, block: int, model=None) -> list[dict]:
        """Which D register of digest block ``block`` differs, from the digest alone
        (:func:`one_register_changes`): (mma index, lane, register, model value, implied silicon value)."""
        lo = self.full + block * self.block
        sel = slice(lo, lo + self.block)
        expected = more_expected(self.combination, self.a[sel], self.b[sel], self.c[sel], model)
        return _candidates(expected, int(self.digests[block]), lo)

    def fit_data(self, sample: int) -> tuple[np.ndarray, ...]:
        """A, B, C, D of the probes and the first ``sample`` random mma (at most the stored ones)."""
        n = min(self.full, self.probes + sample)
        return more_matrices(self.combination, self.a[:n], self.b[:n], self.c[:n], self.d[:n])

    def outside_spec(self, random: int | None = None) -> dict:
        """:func:`outside_spec` of the stored D (``random``: the probes and so many random mma)."""
        n = self.full if random is None else min(self.full, self.probes + random)
        A, B, C, D = more_matrices(self.combination, self.a[:n], self.b[:n], self.c[:n], self.d[:n])
        return outside_spec(self.problem, A, lambda t, i, j: B[t, :, j], C, D)


@attrs.frozen
class SparseDigestRecording:
    """An mma.sp entry of round ``mma-sp-more``: ``recording`` holds every input and the kept D
    (the designed probes and the first ``keep`` random mma); ``digests`` the other random mma,
    one per block of ``mma_device.DIGEST_BLOCK``."""

    recording: SparseRecording
    keep: int
    digests: np.ndarray

    @classmethod
    def from_entry(cls, entry: dict, inputs: list[np.ndarray], arrays: dict) -> SparseDigestRecording:
        return cls(SparseRecording.from_entry(entry, inputs, arrays), entry["keep"], arrays[f"{entry['name']}_digests"])

    @property
    def kept(self) -> int:
        return self.recording.probes + self.keep

    @property
    def combination(self) -> SparseCombination:
        return self.recording.combination

    @property
    def name(self) -> str:
        return self.recording.name

    @property
    def problem(self) -> Combination:
        return self.recording.problem

    def verify(self, model=None) -> dict:
        """The kept D element by element (mismatching mma indices and elements), the rest by digest
        (mismatching block indices), against ``model`` (default: the sm_90 profile; None: nothing pinned)."""
        rec, combo = self.recording, self.combination
        if _unpinned(combo, model):
            return {"mismatches": None}
        expected = sparse_model_registers(rec, model)
        kept_bad = np.nonzero((expected[: self.kept] != rec.d).reshape(self.kept, -1).any(axis=1))[0]
        layout_d = sparse_layout(combo, "d")
        elements = int((layout_d.to_matrix(expected[: self.kept]) != layout_d.to_matrix(rec.d)).sum())
        bad_blocks = mismatching_blocks(lambda select: expected[select], self.kept, self.digests, mma_device.DIGEST_BLOCK)
        dots = int(expected.shape[0]) * combo.mnk[0] * combo.mnk[1]
        return {
            "dots": dots,
            "mma": int(expected.shape[0]),
            "mismatches": elements + len(bad_blocks),
            "kept_mismatching_mma": kept_bad.tolist()[:10],
            "kept_mismatches": len(kept_bad),
            "digest_blocks": len(self.digests),
            "mismatching_blocks": bad_blocks,
        }

    def diagnose(self, block: int, model=None) -> list[dict]:
        """Which D register of digest block ``block`` differs, from the digest alone
        (:func:`one_register_changes`): (mma index, lane, register, model value, implied silicon value)."""
        lo = self.kept + block * mma_device.DIGEST_BLOCK
        expected = sparse_model_registers(self.recording, model, slice(lo, lo + mma_device.DIGEST_BLOCK))
        return _candidates(expected, int(self.digests[block]), lo)

    def fit_data(self, sample: int) -> tuple[np.ndarray, ...]:
        return self.recording.fit_data(min(sample, self.keep))

    def outside_spec(self, random: int | None = None) -> dict:
        return self.recording.outside_spec(self.keep if random is None else min(random, self.keep))

    def zeros_multiplied(self, model) -> int:
        return self.recording.zeros_multiplied(model, slice(0, self.kept))


# ---------------------------------------------------------------------------------------------
# Digests: the blocks that differ, and the one register that explains one
# ---------------------------------------------------------------------------------------------


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
    there): with one wrong register i, the difference of the digests is ``delta * w_i mod 2^64``
    (w_i odd, invertible), so ``delta = diff * w_i^-1``; the candidates are the i whose delta gives
    a value that fits the register (:func:`exhaustive_device.one_value_changes`). Yields (mma in
    the block, lane, register, model value, implied silicon value)."""
    from ptxspec.conformance.silicon.exhaustive_device import one_value_changes

    for (t, lane, register), model, silicon in one_value_changes(expected, digest):
        yield t, lane, register, model, silicon


def _candidates(expected: np.ndarray, digest: int, first: int) -> list[dict]:
    return [
        {"mma": first + t, "lane": lane, "register": reg, "model": value, "silicon": silicon}
        for t, lane, reg, value, silicon in one_register_changes(expected, digest)
    ]


# ---------------------------------------------------------------------------------------------
# The model's D of recorded inputs
# ---------------------------------------------------------------------------------------------


def matrices(rec: Recording, select=slice(None)) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C, D of the recorded mma ``select`` (round ``mma``) as matrices of element bits."""
    combo = rec.combination
    return tuple(registers_to_matrices(combo, o, getattr(rec, o)[select]) for o in "abcd")  # type: ignore[return-value]


def model_d(model, combo: Combination, A, B, C) -> np.ndarray:
    """D ``[mma, M, N]`` of the matrices under the datapath ``model`` (:mod:`ptxspec.semantics.mma`)."""
    from ptxspec.semantics.mma import datapath_matrix

    return datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A, B, C)


def mismatches(model, combo: Combination, A, B, C, D) -> np.ndarray:
    """Indices ``(mma, row, col)`` where the model's D differs from the recorded one."""
    return np.argwhere(model_d(model, combo, A, B, C) != D)


def more_matrices(combo: MoreCombination, *registers) -> tuple[np.ndarray, ...]:
    """Registers of A, B, C (and D) -> the matrices of element bits of each mma computation
    (``[mma, M, K]``...; the four computations of an m8n8k4.f16 warp as four mma)."""
    out = tuple(np.asarray(more_layout(combo, o).to_matrix(x)) for o, x in zip("abcd", registers))
    return _unstack(combo, *out) if combo.quad_pairs else out


def more_expected(combo: MoreCombination, a, b, c, model=None) -> np.ndarray:
    """D registers ``[mma, 32, registers]`` of the inputs under ``model`` (default: the sm_90
    datapath; exact :func:`integer_matrix` for integers); LookupError where nothing is pinned."""
    from ptxspec.semantics.mma import datapath_matrix, integer_matrix

    A, B, C = more_matrices(combo, a, b, c)
    if combo.a in INTEGER:
        D = integer_matrix(combo.a, combo.b, A, B, C, satfinite=combo.qualifier == ".satfinite", bit_op=combo.bit_op or None)
    else:
        model = model or measured_datapath(combo)
        if model is None:
            raise LookupError(f"{combo.name}: no measured datapath")
        D = datapath_matrix(model, combo.a, combo.b, combo.c, combo.d, A, B, C)
    D = np.asarray(D, dtype=np.uint64)
    if combo.quad_pairs:
        D = D.reshape(-1, 4 * D.shape[-2], D.shape[-1])
    lay = more_layout(combo, "d")
    return np.asarray(lay.from_matrix(D)).astype(np.uint64 if lay.register_bits == 64 else np.uint32)


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
    ``[mma*M, 1, N]`` twice (the shapes :func:`search` and :func:`mismatches` take)."""
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
    return sparse_matrix(
        combo.shape, combo.a, combo.b, combo.c, combo.d, stored, cols, B, C, profile=profile or SM_90, satfinite=combo.qualifier == ".satfinite"
    )


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


def outside_spec(combo, A, column, C, D) -> dict:
    """The recorded results ``D`` outside the spec-level sets (:func:`spec_dot` of row ``A[t, i]``,
    ``column(t, i, j)`` and ``C[t, i, j]``; §9.7.14.5.14 leaves the order and precision of the sum
    open): the count checked, the count outside, the first few."""
    from ptxspec.semantics.mma import spec_dot
    from ptxspec.semantics.results import contains

    outside = []
    for t, i, j in np.ndindex(*D.shape):
        allowed = spec_dot(combo.a, combo.b, combo.c, combo.d, [int(x) for x in A[t, i]], [int(y) for y in column(t, i, j)], int(C[t, i, j]))
        if not contains(allowed, int(D[t, i, j])):
            outside.append([int(t), int(i), int(j)])
    return {"checked": int(D.size), "outside": len(outside), "first": outside[:5]}


# ---------------------------------------------------------------------------------------------
# Fitting a datapath to recorded dot products
# ---------------------------------------------------------------------------------------------


def _dimensions(combo: Combination) -> dict[str, list]:
    """The parameters of :class:`ptxspec.semantics.mma.Datapath` the search varies, and their values."""
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


def coordinate_search(start, score: Callable[[Any], int], dims: dict[str, list], k: int, log=print, label: str = ""):
    """From ``start``, try every value of one parameter of ``dims`` with the others fixed, keep
    the best by ``score`` (mismatching results), and repeat until no parameter improves or nothing
    mismatches; a K-chunked or C-apart datapath gets an accumulator when it has none. Returns
    (model, score). The mma and wgmma fits share it."""
    best, best_score = start, score(start)
    improved = True
    while improved and best_score:
        improved = False
        for name, values in dims.items():
            for v in values:
                candidate = attrs.evolve(best, **{name: v})
                if ((candidate.chunk is not None and candidate.chunk < k) or candidate.c_step in ("alone", "tree")) and candidate.accumulator is None:
                    candidate = attrs.evolve(candidate, accumulator=(8, 23))
                s = score(candidate)
                if s < best_score:
                    best, best_score, improved = candidate, s, True
                    log(f"  {label}: {s} mismatches with {best.describe()}")
    return best, best_score


def mismatch_score(problems, atype: str, btype: str, ctype: str, dtype: str, k: int) -> Callable[[Any], int]:
    """The score of a candidate datapath: its mismatching elements over ``problems`` ((A, B, C, D)
    matrices, one element-bit problem each), remembered per datapath; one the vectorised datapath
    cannot evaluate scores 2^62."""
    from ptxspec.semantics.mma import datapath_matrix
    from ptxspec.semantics.mma_vectorised import vectorisable

    seen: dict = {}

    def score(m) -> int:
        if m not in seen:
            if not vectorisable(m, atype, btype, k):
                seen[m] = 1 << 62
            else:
                seen[m] = sum(int(np.count_nonzero(datapath_matrix(m, atype, btype, ctype, dtype, A, B, C) != D)) for A, B, C, D in problems)
        return seen[m]

    return score


def search(start, data, combo: Combination, log=print):
    """:func:`coordinate_search` for the datapath that reproduces ``data`` (A, B, C, D matrices of
    the dense problem ``combo``) from ``start`` (default a plain one): (model, mismatches)."""
    from ptxspec.semantics.mma import Datapath

    score = mismatch_score([data], combo.a, combo.b, combo.c, combo.d, combo.mnk[2])
    return coordinate_search(start or Datapath(alignment_bits=24), score, _dimensions(combo), combo.mnk[2], log, combo.name)


def best_fit(starts, data, combo: Combination):
    """:func:`search` on ``data`` (A, B, C, D matrices of ``combo``) from each of ``starts`` in turn,
    up to the first that reproduces every D: the best model, its mismatches and its start."""
    best = None
    for start in starts:
        model, s = search(start, data, combo)
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


def fit_starts(combo, plain: bool = True) -> list:
    """Where the search for ``combo``'s datapath starts: the measured sm_90 datapaths nearest to it
    (mma.sp: the dense one of its K/2 shape; then the same types of its kind and of the other
    kind, the same A, B, C, the same C and D of the same multiplicand family; .f64: the measured
    m8n8k4 chain in the form's rounding), then (``plain``) datapaths of several alignment widths."""
    from ptxspec.profiles import MatrixKey
    from ptxspec.semantics.mma import Datapath, datapath_for
    from ptxspec.semantics.results import SM_90

    table = SM_90.mma_datapaths
    sparse = isinstance(combo, SparseCombination)
    types = (combo.a, combo.b, combo.c, combo.d)
    fp8 = ("e4m3", "e5m2")
    near = [datapath_for(SM_90, *types, None, combo.half.shape)] if sparse else []
    if combo.a == "f64":
        rounding = Rounding(combo.qualifier.lstrip(".") or "rn")
        base = table[MatrixKey("f64", "f64", "f64", "f64", shape="m8n8k4", rounding="rn")]
        near.append(attrs.evolve(base, accumulator_rounding=rounding, rounding=rounding))
    near += [m for key, m in table.items() if key.types == types and key.sparse == sparse]
    near += [m for key, m in table.items() if key.types == types]
    near += [m for key, m in table.items() if key.types[:3] == types[:3]]
    near += [m for key, m in table.items() if key.types[2:] == types[2:] and (key.atype in fp8) == (combo.a in fp8)]
    widths = [Datapath(alignment_bits=b) for b in (24, 25, 26, 27, 13, 8, 3)] if plain else []
    return list(dict.fromkeys(m for m in near + widths if m is not None))


def fit_group(recs: list, log=print) -> dict:
    """The datapath of one float combination (``recs``: its records, mma.sp: one per selector):
    scored on the designed probes and the first :data:`FIT_SAMPLE` random mma of each record, from
    :func:`fit_starts` (.f64: the best of those and of :func:`f64_candidates`, no search); then
    checked on every recorded mma (:meth:`Recording.verify` and the like: digests included)."""
    combo, problem = recs[0].combination, recs[0].problem
    parts = [r.fit_data(FIT_SAMPLE) for r in recs]
    data = tuple(np.concatenate([p[i] for p in parts]) for i in range(4))
    if combo.a == "f64":
        candidates = fit_starts(combo, plain=False) + f64_candidates(Rounding(combo.qualifier.lstrip(".") or "rn"))
        scores = [len(mismatches(m, problem, *data)) for m in candidates]
        score = min(scores)
        model = start = candidates[scores.index(score)]
    else:
        model, score, start = best_fit(fit_starts(combo), data, problem)
    checks = [r.verify(model) for r in recs]
    result = {
        "model": model.describe(),
        "datapath": model,
        "start": start.describe(),
        "scored_mismatches": score,
        "mismatches": sum(c["mismatches"] for c in checks),
        "dots": sum(c["dots"] for c in checks),
    }
    log(f"{combo.name}: {model.describe()} -> {score} mismatches on the probes and first random mma, {result['mismatches']} over all")
    return result


def variants(model) -> dict:
    """One-part changes of a datapath (:func:`separate`): the alignment one bit narrower and wider
    and on the leading bit, the final rounding flipped; for a chunked sum, C with the first step,
    the products in index order, one step of all products."""
    out = {f"alignment {model.alignment_bits + d} bits": attrs.evolve(model, alignment_bits=model.alignment_bits + d) for d in (-1, 1)}
    out["alignment on the leading bit"] = attrs.evolve(model, reference="msb" if model.reference == "exponent" else "exponent")
    out["final rounding flipped"] = attrs.evolve(model, rounding=Rounding.RN if model.rounding == Rounding.RZ else Rounding.RZ)
    if model.chunk is not None:
        out["C with the first step"] = attrs.evolve(model, c_step="first")
        out["products in index order"] = attrs.evolve(model, order="ascending")
        out["one step of all products"] = attrs.evolve(model, chunk=None)
    return out


# ---------------------------------------------------------------------------------------------
# The commands every round shares
# ---------------------------------------------------------------------------------------------


def verify(directory: Path, round_: Round | None = None, log=print) -> dict:
    """Every recorded D of ``round_`` (default ``mma``), or its digest, against the sm_90 profile:
    per plan entry, the dot products compared and the mismatches (docs/mma.rst's tables); None
    where the profile pins no datapath for the combination."""
    out = {}
    for rec in load(directory, round_):
        out[rec.name] = rec.verify()
        log(f"{rec.name}: {out[rec.name]}")
    return out


def spec_check(directory: Path, round_: Round | None = None, random: int | None = None, log=print) -> dict:
    """Whether the recorded float results lie in the spec-level sets (:func:`outside_spec`): per
    plan entry, over every stored D (``random``: the designed probes and so many random mma), the
    results checked and those outside."""
    out = {}
    for rec in load(directory, round_):
        if rec.combination.a not in INTEGER:
            out[rec.name] = rec.outside_spec(random)
            log(f"{rec.name}: {out[rec.name]}")
    return out


def fit(directory: Path, round_: Round | None = None, names: list[str] | None = None, log=print) -> dict:
    """:func:`fit_group` of every float combination recorded under ``directory`` for ``round_``
    (only those named in ``names`` unless it is empty)."""
    return {name: fit_group(recs, log) for name, recs in float_groups(load(directory, round_), names).items()}


def separate(directory: Path, round_: Round | None = None, names: list[str] | None = None, log=print) -> dict:
    """The separating evidence of each pinned float datapath: its mismatches (none, where it is
    pinned right) and those of each one-part change (:func:`variants`) over every recorded mma;
    for mma.sp also the dot products that change when A's zeros are multiplied (the dense K-wide
    row, :meth:`SparseRecording.zeros_multiplied`)."""
    out = {}
    for name, recs in float_groups(load(directory, round_), names).items():
        model = measured_datapath(recs[0].combination)
        if model is None:
            continue
        pinned = [r.verify(model) for r in recs]
        row = {"pinned datapath": sum(c["mismatches"] for c in pinned), "dots": sum(c["dots"] for c in pinned)}
        row |= {label: sum(r.verify(variant)["mismatches"] for r in recs) for label, variant in variants(model).items()}
        if isinstance(recs[0].combination, SparseCombination):
            row["zeros of A multiplied (dense row)"] = sum(r.zeros_multiplied(model) for r in recs)
        out[name] = row
        log(f"{name}: {row}")
    return out


# ---------------------------------------------------------------------------------------------
# The SASS of the m8n8k4 .f16 kernels
# ---------------------------------------------------------------------------------------------


def sass_plan(plan: dict) -> dict:
    """The SASS plan of an ``mma-more`` bundle plan: its cubin and the kernels of the m8n8k4 .f16
    forms, which sm_90 runs as binary32 code (docs/mma.rst "m8n8k4 .f16 on sm_90")."""
    kernels = [e["kernel"] for e in plan["combinations"] if combination_named(e["name"]).quad_pairs]
    return {"cubin": f"{ROUND_2.bundle}.cubin", "kernels": kernels}


def prepare_sass(bundle: Path, ptxas: str = "ptxas") -> None:
    """Here (ptxas): the ``mma-more`` bundle into ``bundle`` and ``sass-plan.json`` naming its cubin
    and the kernels whose SASS ``sass_device.py run`` records."""
    prepare(ROUND_2, bundle, ptxas=ptxas)
    plan = json.loads((bundle / f"{ROUND_2.bundle}-plan.json").read_text())
    (bundle / "sass-plan.json").write_text(json.dumps(sass_plan(plan), indent=1) + "\n")


# ---------------------------------------------------------------------------------------------
# The campaign's rounds (:class:`Round`)
# ---------------------------------------------------------------------------------------------

#: ``mma``: 15 dense combinations, every D in full.
ROUND_1 = Round(COMBINATIONS, mma_device.DENSE, kernel="mma", random=RANDOM)
#: ``mma-sp``: mma.sp, every D in full.
SPARSE_ROUND_1 = Round(SPARSE_COMBINATIONS, mma_device.SPARSE, kernel="msp", random=SPARSE_RANDOM, probe_mma=SPARSE_PROBE_MMA)
#: ``mma-more``: every other dense combination; the random D after the first ones as block digests.
ROUND_2 = Round(MORE_COMBINATIONS, mma_device.MORE, kernel="mmx", random=MORE_RANDOM)
#: ``mma-sp-more``: every other mma.sp combination; likewise.
SPARSE_ROUND_2 = Round(SPARSE_MORE_COMBINATIONS, mma_device.SPARSE_MORE, kernel="msp", random=SPARSE_MORE_RANDOM, probe_mma=SPARSE_MORE_PROBE_MMA)
#: Every round, by name (the stem of its recording).
ROUNDS: dict[str, Round] = {r.name: r for r in (ROUND_1, SPARSE_ROUND_1, ROUND_2, SPARSE_ROUND_2)}
