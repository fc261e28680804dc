"""The catalogue campaign: every sm_90a form of the scalar and warp chapters, from the catalogue.

Where :mod:`ptxspec.conformance.silicon.float_cvt_campaign` lists the §9.7.3 and cvt forms by
hand, this module asks the catalogue: every legal form of the integer (§9.7.1), extended-precision (§9.7.2),
half- and mixed-precision (§9.7.4-5), comparison and selection (§9.7.6-7), logic and shift
(§9.7.8), prmt (§9.7.9.7), video (§9.7.18) and warp-collective (§9.7.9.6, §9.7.13) families whose
target sm_90a satisfies, with the operands the catalogue gives it. :func:`plan` makes

* one :class:`PlanEntry` per recorded form: its PTX instruction, its operands, and the *input
  group* whose seeded inputs it reads (forms with the same source operand kinds share one group,
  so that the repository stores those inputs once);
* the inputs of every group (:func:`group_inputs`): the operand kinds' edge classes first, then
  seeded random values, with small integers and near-boundary integers mixed in, so that shift
  counts, bit positions and divisors take interesting values;
* the PTX of each kernel (:func:`kernel`).

The carry flag of §9.7.2 is an operand of the semantics but not of the PTX text: a kernel sets it
from a loaded 0/1 value with ``add.cc`` (``x + 0xffffffff`` carries iff x is 1) right before the
instruction, and reads a carry-out back with ``addc d, 0, 0``. Immediate operands (lop3's
``immLut``) are fixed per recorded form (``lop3.b32#immLut=0x96``) and recorded as a constant input
column. Warp forms (§9.7.9.6, §9.7.13) run on real warps: every per-lane operand is one value per
lane, ``membermask`` is one value per warp, and the lanes that execute the instruction -- the
*active* set, recorded as the last input column -- are the lanes of ``membermask`` (the others
branch around it: an executing thread outside membermask is undefined behaviour, §9.7.13.9).

Everything here is deterministic: the same catalogue and seed give the same bytes.

The campaign has three rounds (:data:`ROUNDS`), each recorded with its own files (``meta-NAME.json``,
``NAME-inputs.npz``, ``NAME-outputs*.npz``, ``rejected-NAME.json``):

* ``integer-half-video-warp``: :func:`plan` (the chapters above), three output files;
* ``fma-oob-probes``: the ``#oob-probes`` entries of :func:`plan` (the OOB-NaN of fma.oob), one file;
* ``remaining-forms``: :func:`rest_plan`, every other sm_90a form, three output files.

Commands::

    python -m ptxspec.conformance.silicon catalogue prepare BUNDLE [--round NAME]   # here (ptxas)
    python3 conformance/silicon/scalar_device.py run BUNDLE OUT [NAME]              # on the GPU
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ptxspec.conformance.silicon.float_cvt_campaign import _bf16_specials, _column, _f16_specials, _specials
from ptxspec.conformance.silicon.campaign import HEADER
from ptxspec.spec.catalogue import CATALOGUE, Form, Operand

#: Vectors per scalar form; video forms (thousands of selector combinations) record fewer, and a
#: warp form records :data:`WARPS` warps of 32 lanes.
SAMPLES = 4096
VIDEO_SAMPLES = 1024
VIDEO_FORMS_PER_FAMILY = 40
WARPS = 512

#: The chapters of the campaign, by the section prefix of their families.
CHAPTERS: dict[str, tuple[str, ...]] = {
    "integer": ("9.7.1.",),
    "extended precision": ("9.7.2.",),
    "half precision": ("9.7.4.",),
    "mixed precision": ("9.7.5.",),
    "comparison and selection": ("9.7.6.", "9.7.7."),
    "logic and shift": ("9.7.8.",),
    "prmt": ("9.7.9.7",),
    "warp collectives": ("9.7.9.6", "9.7.13."),
    "video": ("9.7.18.",),
}

#: lop3's truth tables to record: the named ones of §9.7.8.6 (F = 0xf0, G = 0xcc, H = 0xaa and
#: their combinations), the constant ones, and a seeded sample of the rest.
_NAMED_LUTS = [0x00, 0xFF, 0xF0, 0xCC, 0xAA, 0x0F, 0x33, 0x55, 0x80, 0xFE, 0x96, 0x69, 0xE8, 0xCA, 0xB8, 0xD8, 0xE2, 0x1E, 0x6A, 0x01, 0x7F, 0xC0, 0x3C, 0x5A]
LOP3_LUTS = _NAMED_LUTS + sorted(random.Random("lop3").sample(sorted(set(range(256)) - set(_NAMED_LUTS)), 24))
LOP3_BOOLOP_LUTS = [0x00, 0xFF, 0x96, 0xE8, 0x80, 0xFE, 0xCA, 0x1E]


#: Forms of one 16-bit source recorded on every input (the whole 2^16-entry table), so that a
#: profile can be bit-exact where the manual gives only an error bound.
EXHAUSTIVE = ("tanh.approx.f16", "tanh.approx.bf16", "ex2.approx.f16", "ex2.approx.ftz.bf16")
EXHAUSTIVE_GROUP = "all16@65536"


def chapter_of(section: str) -> str | None:
    """The campaign chapter of a manual section ("9.7.1.3" is integer), or None."""
    for name, prefixes in CHAPTERS.items():
        if any(section == p.rstrip(".") or section.startswith(p.rstrip(".") + ".") for p in prefixes):
            return name
    return None


@dataclass(frozen=True)
class PlanEntry:
    """One recorded form. ``text`` names it (the catalogue form, ``#immLut=..`` for an immediate);
    ``kinds`` are the source operands' value kinds (see :func:`operand_kind`), ``group`` the input
    group it reads, ``immediates`` the value of each immediate operand."""

    text: str
    chapter: str
    kinds: tuple[str, ...]
    group: str
    n: int
    warp: bool = False
    immediates: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def instruction(self) -> str:
        return self.text.split("#")[0]


def _form_float(form: Form, bits: int) -> str | None:
    """The floating-point kind a bit-size register of ``bits`` holds in ``form`` (.f16 in a .b16,
    .bf16x2 in a .b32), from the form's type qualifiers."""
    for _, token in form.choices:
        if token in ("f16", "bf16") and bits == 16:
            return token
        if token in ("f16x2", "bf16x2") and bits == 32:
            return token
    return None


def operand_kind(form: Form, operand: Operand) -> str:
    """How a source operand's values are drawn: ``pred``; a float format (``f32``, ``f16x2``...);
    or an integer ``uN``/``sN`` (bit-size types are drawn as unsigned)."""
    from ptxspec.spec.types import register_bits

    t = operand.type
    if t == "pred":
        return "pred"
    bits = register_bits(t)
    if t in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2"):
        return t
    if t.startswith("b") or t.endswith("x2"):
        guess = _form_float(form, bits)
        if guess:
            return guess
        return f"u{bits}"
    return t


def _integer_column(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Random integers of ``kind``'s width: a quarter uniform over every bit pattern, a quarter
    small (0 .. 2*width+8: shift counts, positions, small divisors), a quarter near the signed
    and unsigned extremes, a quarter with random low bits in a random-length field."""
    bits = int(kind[1:])
    top = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    uniform = _column(f"u{bits}" if bits != 8 else "u8", rng, n)
    small = rng.integers(0, 2 * bits + 9, size=n, dtype=np.uint64)
    delta = rng.integers(0, 17, size=n, dtype=np.uint64)
    half = np.uint64(1 << (bits - 1))
    anchors = np.array([0, half, top], dtype=np.uint64)[rng.integers(0, 3, size=n)]
    near = (anchors - delta) & top
    near = np.where(rng.integers(0, 2, size=n) == 1, (anchors + delta) & top, near)
    lengths = rng.integers(0, bits + 1, size=n)
    masks = np.array([(1 << int(k)) - 1 for k in lengths], dtype=np.uint64)
    field = uniform & masks
    which = rng.integers(0, 4, size=n)
    out = np.where(which == 0, uniform, np.where(which == 1, small, np.where(which == 2, near, field)))
    return out.astype(np.uint64)


def _kind_specials(kind: str) -> list[int]:
    if kind == "pred":
        return [0, 1]
    if kind in ("f16", "bf16"):
        return _f16_specials() if kind == "f16" else _bf16_specials()
    if kind[0] in "us" and kind[1:].isdigit():
        bits = int(kind[1:])
        top = (1 << bits) - 1
        return sorted(
            {0, 1, 2, 3, top, top - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1, bits - 1, bits, bits + 1, 16, 0x55 & top, 0xAAAA & top}
        )
    return _specials(kind)


def column(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "pred":
        return rng.integers(0, 2, size=n, dtype=np.uint64)
    if kind[0] in "us" and kind[1:].isdigit():
        return _integer_column(kind, rng, n)
    return _column(kind, rng, n)


def group_name(kinds: tuple[str, ...], n: int) -> str:
    return f"{'-'.join(kinds) or 'none'}@{n}"


def group_inputs(kinds: tuple[str, ...], n: int) -> list[np.ndarray]:
    """The inputs of one group: every combination of the kinds' edge classes (up to n rows) when
    there are at most three sources, else the edge classes side by side; then seeded values.
    (:data:`EXHAUSTIVE_GROUP`: every 16-bit pattern in order.)"""
    if n == 1 << 16:  # only the exhaustive entries record 2^16 vectors
        assert len(kinds) == 1, kinds
        return [np.arange(1 << 16, dtype=np.uint64)]
    rng = np.random.default_rng(zlib.crc32(group_name(kinds, n).encode()))
    columns = [column(k, rng, n) for k in kinds]
    specials = [_kind_specials(k) for k in kinds]
    if kinds and len(kinds) <= 3:
        grid = np.array(np.meshgrid(*[np.array(s, dtype=np.uint64) for s in specials], indexing="ij")).reshape(len(kinds), -1)
        if grid.shape[1] > n // 2:  # keep half of the rows random
            grid = grid[:, np.random.default_rng(1).permutation(grid.shape[1])[: n // 2]]
        m = grid.shape[1]
        for col, row in zip(columns, grid):
            col[:m] = row
    elif kinds:
        for col, s in zip(columns, specials):
            col[: len(s)] = np.array(s, dtype=np.uint64)
    return columns


# ---------------------------------------------------------------------------------------------
# fma.oob probes: the encodings a chip reads as OOB-NaN
# ---------------------------------------------------------------------------------------------

#: The OOB-NaN probe entries (``fma.rn{.relu}.oob.*#oob-probes``): §5.5.3.3 calls OOB-NaN only
#: "a special NaN", so which encodings fma.oob treats as one is measured. Every probe pattern
#: in each operand position, against ordinary values and specials, then seeded mixtures.
OOB_PROBES = "#oob-probes"
OOB_PROBE_SAMPLES = 4096


def oob_probe_group(kinds: tuple[str, ...]) -> str:
    """The input group of a probe entry (one per operand type; named apart from the
    :func:`group_name` groups, so that no existing group's seed or inputs change)."""
    return "oob-probes:" + group_name(kinds, OOB_PROBE_SAMPLES)


def oob_probe_patterns(kind: str) -> list[int]:
    """0x7ff7 and 0xfff7 (sm_90's OOB-NaN candidates), every one-bit neighbour of 0x7ff7 (NaNs
    and numbers, per format), the low neighbours of 0xfff7, the canonical quiet and a signalling
    NaN of the format, and 0xffff."""
    scalar = kind.removesuffix("x2")
    qnan, snan = (0x7E00, 0x7C01) if scalar == "f16" else (0x7FC0, 0x7F81)
    patterns = [0x7FF7, 0xFFF7] + [0x7FF7 ^ (1 << i) for i in range(15)] + [0xFFF7 ^ (1 << i) for i in range(4)]
    return list(dict.fromkeys(patterns + [qnan, snan, 0xFFFF]))


def _oob_probe_lanes(kind: str, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Three 16-bit columns: each probe pattern in each operand position against every pair of
    the partners (+-1.0, +-0.0, +-Inf, the canonical NaN), then seeded rows whose operands are
    probes, specials or random values of the format."""
    scalar = kind.removesuffix("x2")
    specials = _kind_specials(scalar)
    one, qnan = specials[-4], (0x7E00 if scalar == "f16" else 0x7FC0)
    inf = 0x7C00 if scalar == "f16" else 0x7F80
    partners = [one, one | 0x8000, 0x0000, 0x8000, inf, inf | 0x8000, qnan]
    probes = oob_probe_patterns(kind)
    rows = [
        tuple(p if k == position else (x, y)[k - (k > position)] for k in range(3)) for p in probes for position in range(3) for x in partners for y in partners
    ]
    assert len(rows) <= n, len(rows)
    columns = [np.array([r[k] for r in rows], dtype=np.uint64) for k in range(3)]
    rest = n - len(rows)
    pool = [np.array(probes, dtype=np.uint64), np.array(specials, dtype=np.uint64), column(scalar, rng, rest)]
    for k in range(3):
        which = rng.integers(0, 3, size=rest)
        picked = np.where(
            which == 0, pool[0][rng.integers(0, len(probes), size=rest)], np.where(which == 1, pool[1][rng.integers(0, len(specials), size=rest)], pool[2])
        )
        columns[k] = np.concatenate([columns[k], picked.astype(np.uint64)])
    return columns


def oob_probe_inputs(kinds: tuple[str, ...], n: int = OOB_PROBE_SAMPLES) -> list[np.ndarray]:
    """The inputs of a probe group: for .f16/.bf16 the rows of :func:`_oob_probe_lanes`; for the
    x2 types that table in the lower half-word and a seeded permutation of it in the upper one,
    so that each probe sits in each half against varied values in the other."""
    assert len(kinds) == 3 and len(set(kinds)) == 1, kinds
    rng = np.random.default_rng(zlib.crc32(oob_probe_group(kinds).encode()))
    low = _oob_probe_lanes(kinds[0], rng, n)
    if not kinds[0].endswith("x2"):
        return low
    order = rng.permutation(n)
    return [(col[order] << np.uint64(16)) | col for col in low]


def plan_group_inputs(entry: PlanEntry, kinds: tuple[str, ...]) -> list[np.ndarray]:
    """The inputs of ``entry``'s group (``kinds``: its non-immediate source kinds)."""
    if entry.group.startswith("oob-probes:"):
        return oob_probe_inputs(kinds, entry.n)
    return group_inputs(kinds, entry.n)


# ---------------------------------------------------------------------------------------------
# Warp inputs: one value per lane, membermask per warp
# ---------------------------------------------------------------------------------------------


def _membermasks(rng: np.random.Generator, warps: int) -> np.ndarray:
    """Half full warps; the rest partial: random sets, contiguous ranges, single lanes, halves."""
    out = np.full(warps, 0xFFFFFFFF, dtype=np.uint64)
    for w in range(warps // 2, warps):
        style = w % 5
        if style == 0:
            m = int(rng.integers(1, 1 << 32))
        elif style == 1:
            lo = int(rng.integers(0, 32))
            hi = int(rng.integers(lo, 32))
            m = ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)
        elif style == 2:
            m = 1 << int(rng.integers(0, 32))
        elif style == 3:
            m = [0x0000FFFF, 0xFFFF0000, 0x55555555, 0xAAAAAAAA, 0x0F0F0F0F, 0x80000001, 0x7FFFFFFE][int(rng.integers(0, 7))]
        else:
            m = 0xFFFFFFFF & ~(1 << int(rng.integers(0, 32)))
        out[w] = m
    return out


def _warp_values(kind: str, rng: np.random.Generator, warps: int) -> np.ndarray:
    """Per-lane values: per warp one of random values, a few distinct values (so that match,
    uni and the reductions see equal lanes), one value everywhere, or edge classes."""
    n = warps * 32
    rand = column(kind, rng, n)
    out = rand.copy()
    for w in range(warps):
        style = w % 4
        lanes = slice(32 * w, 32 * w + 32)
        if style == 1:
            pool = rand[32 * w : 32 * w + int(rng.integers(2, 5))]
            out[lanes] = pool[rng.integers(0, len(pool), size=32)]
        elif style == 2:
            out[lanes] = rand[32 * w]
        elif style == 3:
            s = np.array(_kind_specials(kind), dtype=np.uint64)
            out[lanes] = s[rng.integers(0, len(s), size=32)]
    return out


def _shfl_operand(name: str, rng: np.random.Generator, warps: int) -> np.ndarray:
    """shfl.sync's b (lane or offset) and c (clamp value and segment mask, §9.7.9.6): per warp
    uniform in most warps (how CUDA's __shfl_* use them), per lane in the others."""
    n = warps * 32
    out = np.zeros(n, dtype=np.uint64)
    for w in range(warps):
        lanes = slice(32 * w, 32 * w + 32)
        if name == "b":
            choice = rng.integers(0, 40, size=32) if w % 4 == 3 else np.full(32, rng.integers(0, 40))
            out[lanes] = choice
        else:
            common = [0x1F, 0x0, 0x181F, 0x1C1F, 0x1E1F, 0x1F00, 0x101F, 0x0F, 0x0807, 0x1F1F]
            if w % 4 == 3:
                out[lanes] = rng.integers(0, 1 << 13, size=32)
            elif w % 4 == 2:
                out[lanes] = rng.integers(0, 1 << 32)
            else:
                out[lanes] = common[int(rng.integers(0, len(common)))]
    return out


def warp_inputs(entry: PlanEntry, form: Form) -> list[np.ndarray]:
    """The per-lane columns of a warp form's sources (membermask repeated in each lane), then
    the active set (the lanes that execute the instruction), repeated in each lane."""
    rng = np.random.default_rng(zlib.crc32(entry.text.encode()))
    warps = entry.n // 32
    masks = _membermasks(rng, warps)
    per_lane_mask = np.repeat(masks, 32)
    columns = []
    for operand, kind in zip(form.sources, entry.kinds):
        if operand.name == "membermask":
            columns.append(per_lane_mask.copy())
        elif form.opcode == "shfl" and operand.name in ("b", "c"):
            columns.append(_shfl_operand(operand.name, rng, warps))
        else:
            columns.append(_warp_values(kind, rng, warps))
    # The active set: the lanes of membermask execute the instruction (activemask, which has no
    # membermask, executes in the same lanes and reports them).
    columns.append(per_lane_mask.copy())
    return columns


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------


def _sm90_forms(family) -> list[Form]:
    from ptxspec.conformance.ptxas_agreement import _legal_forms

    return [f for f in _legal_forms(family) if f.admits((8, 7), "sm_90a")]


def _immediates(form: Form) -> list[dict]:
    imms = [o for o in form.sources if o.name.startswith("imm")]
    if not imms:
        return [{}]
    assert [o.name for o in imms] == ["immLut"], form.text
    luts = LOP3_BOOLOP_LUTS if form.family.key == "lop3.boolop" else LOP3_LUTS
    return [{"immLut": v} for v in luts]


def plan() -> list[PlanEntry]:
    """Every recorded form of the catalogue campaign, in catalogue order."""
    from ptxspec.semantics.instructions import SEMANTICS, _load_chapters

    _load_chapters()
    out: list[PlanEntry] = []
    for family in CATALOGUE.families():
        chapter = chapter_of(family.section)
        if chapter is None or family.key not in SEMANTICS:
            continue
        forms = _sm90_forms(family)
        video = chapter == "video"
        if video and len(forms) > VIDEO_FORMS_PER_FAMILY:
            forms = random.Random(f"video:{family.key}").sample(forms, VIDEO_FORMS_PER_FAMILY)
        warp = chapter == "warp collectives"
        for form in forms:
            kinds = tuple(operand_kind(form, o) for o in form.sources)
            for imm in _immediates(form):
                text = form.text + "".join(f"#{k}=0x{v:02x}" for k, v in imm.items())
                if warp:
                    out.append(PlanEntry(text, chapter, kinds, "", WARPS * 32, warp=True))
                    continue
                n = VIDEO_SAMPLES if video else SAMPLES
                group_kinds = tuple(k for k, o in zip(kinds, form.sources) if not o.name.startswith("imm"))
                out.append(PlanEntry(text, chapter, kinds, group_name(group_kinds, n), n, immediates=imm))
                if form.text in EXHAUSTIVE:
                    out.append(PlanEntry(text + "#all-inputs", chapter, kinds, EXHAUSTIVE_GROUP, 1 << 16))
                if ("oob", "oob") in form.choices:
                    out.append(PlanEntry(text + OOB_PROBES, chapter, kinds, oob_probe_group(kinds), OOB_PROBE_SAMPLES))
    return out


# ---------------------------------------------------------------------------------------------
# The rest: every other form sm_90a has, recorded apart as ``remaining-forms``
# ---------------------------------------------------------------------------------------------

#: Families the "rest" plan leaves out: video (sampled above: its families have 10^4 to 10^10
#: forms), the matrix chapters (their own campaign), and the vector-operand moves.
REST_EXCLUDED_OPCODES = ("mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma")
REST_EXCLUDED_FAMILIES = ("mov.pack.x2", "mov.unpack.x2", "mov.pack.x4", "mov.unpack.x4")
#: Vectors per form: a comparison's result is one bit of information, so fewer suffice there.
REST_SAMPLES = {"setp": 1024, "set": 1024}


def every_sm90_form(family) -> list[Form]:
    """Every legal form of ``family`` that PTX 8.7 admits on sm_90a: each combination of its
    slots' tokens (an optional slot also absent), parsed by the catalogue; illegal ones dropped."""
    import itertools

    from ptxspec.conformance.strategies import _try

    choices = [list(s.tokens) + ([] if s.required else [None]) for s in family.slots]
    texts: dict[str, Form] = {}
    for combo in itertools.product(*choices):
        form = _try(family, [t for t in combo if t is not None], (8, 7), "sm_90a")
        if form is not None:
            texts.setdefault(form.text, form)
    return list(texts.values())


def rest_plan() -> list[PlanEntry]:
    """Every legal sm_90a form with semantics of registers alone that neither the float-cvt
    campaign (:data:`ptxspec.conformance.silicon.float_cvt_campaign.FORMS`) nor :func:`plan`
    records, outside video and the matrix chapters: what sampling left out of the comparison and
    conversion families (set/setp over every boolean operation and type, cvt over every type pair
    and modifier), cvt.pack, and the spellings without a rounding modifier. The instructions of
    memory have their own rounds (memory, atomic, tma)."""
    from ptxspec.conformance.silicon.float_cvt_campaign import FORMS
    from ptxspec.semantics.instructions import SEMANTICS, _load_chapters

    _load_chapters()
    known = {e.text for e in FORMS} | {e.instruction for e in plan()}
    out: list[PlanEntry] = []
    for family in CATALOGUE.families():
        if (
            family.key not in SEMANTICS
            or SEMANTICS[family.key].operands.state
            or family.opcode in REST_EXCLUDED_OPCODES
            or family.key in REST_EXCLUDED_FAMILIES
            or chapter_of(family.section) in ("video", "warp collectives")
        ):
            continue
        chapter = chapter_of(family.section) or f"§{family.section}"
        n = REST_SAMPLES.get(family.opcode, SAMPLES)
        for form in sorted(every_sm90_form(family), key=lambda f: f.text):
            if form.text in known or [o for o in form.sources if o.name.startswith("imm")]:
                continue
            known.add(form.text)  # two families may spell one form (the recording of 2026-11-21 holds 710 twice)
            kinds = tuple(operand_kind(form, o) for o in form.sources)
            out.append(PlanEntry(form.text, chapter, kinds, group_name(kinds, n), n))
    return out


def entry_for(text: str, n: int) -> PlanEntry:
    """The plan entry of a recorded form, from its text and vector count alone (what :func:`plan`
    makes for it), so that a recording can be checked against the campaign after the catalogue
    has grown."""
    from ptxspec.semantics.instructions import as_form

    form = as_form(text.split("#")[0])
    chapter = chapter_of(form.family.section) or ""
    kinds = tuple(operand_kind(form, o) for o in form.sources)
    immediates = {k: int(v, 16) for k, v in (part.split("=") for part in text.split("#")[1:] if "=" in part)}
    if chapter == "warp collectives":
        return PlanEntry(text, chapter, kinds, "", n, warp=True)
    group_kinds = tuple(k for k, o in zip(kinds, form.sources) if not o.name.startswith("imm"))
    group = EXHAUSTIVE_GROUP if text.endswith("#all-inputs") else oob_probe_group(group_kinds) if text.endswith(OOB_PROBES) else group_name(group_kinds, n)
    return PlanEntry(text, chapter, kinds, group, n, immediates=immediates)


def recorded_inputs(entry: PlanEntry) -> list[np.ndarray]:
    """The inputs :func:`entry_inputs` gives ``entry``, generating its group alone."""
    from ptxspec.semantics.instructions import as_form

    if entry.warp:
        return entry_inputs(entry, {})
    form = as_form(entry.instruction)
    kinds = tuple(k for k, o in zip(entry.kinds, form.sources) if not o.name.startswith("imm"))
    return entry_inputs(entry, {entry.group: plan_group_inputs(entry, kinds)})


def entry_inputs(entry: PlanEntry, groups: dict[str, list[np.ndarray]]) -> list[np.ndarray]:
    """The source columns of ``entry`` in the form's operand order (immediates as constant
    columns; for a warp form, the active set last)."""
    from ptxspec.semantics.instructions import as_form

    form = as_form(entry.instruction)
    if entry.warp:
        return warp_inputs(entry, form)
    shared = iter(groups[entry.group])
    return [np.full(entry.n, entry.immediates[o.name], dtype=np.uint64) if o.name.startswith("imm") else next(shared) for o in form.sources]


# ---------------------------------------------------------------------------------------------
# PTX
# ---------------------------------------------------------------------------------------------

_SELECTOR_TOKEN = re.compile(r"^([a-z])sel_(b[0-7]+|h[0-3]+)$")


def _reg(o: Operand) -> str:
    return "%o_" + o.name.replace(".", "_")


def _width(o: Operand) -> int:
    from ptxspec.spec.types import register_bits

    return register_bits(o.type)


def instruction_text(entry: PlanEntry, form: Form) -> str:
    """The PTX instruction: video selectors moved onto their operands (``dsel_h1`` is ``d.h1``),
    destinations joined by ``|``, the carry flag left implicit, immediates written out."""
    tokens, selectors, negated = [], {}, set()
    for _name, token in form.choices:
        m = _SELECTOR_TOKEN.match(token)
        if m and any(o.name == m.group(1) for o in form.operands):
            selectors[m.group(1)] = "." + m.group(2)
        elif token.startswith("neg_") and form.opcode == "vmad":
            negated.add(token[4:])  # vmad's {-}a: the catalogue's neg_a token is PTX's minus sign
        else:
            tokens.append(token)
    explicit = [o for o in form.operands if not o.name.startswith("CC")]
    dests = "|".join(_reg(o) + selectors.get(o.name, "") for o in explicit if o.destination)
    srcs = [
        str(entry.immediates[o.name]) if o.name.startswith("imm") else ("-" if o.name in negated else "") + _reg(o) + selectors.get(o.name, "")
        for o in explicit
        if not o.destination
    ]
    return ".".join([form.opcode, *tokens]) + " " + ", ".join(([dests] if dests else []) + srcs) + ";"


def kernel(entry: PlanEntry, name: str) -> str:
    """One ``.entry``: load each source (64-bit global arrays, one element per thread), set the
    carry flag if the form reads it, apply the instruction (warp forms: in the active lanes only),
    read the carry flag back if the form writes it, store each destination zero-extended."""
    from ptxspec.semantics.instructions import as_form

    form = as_form(entry.instruction)
    sources = [o for o in form.sources if not o.name.startswith("imm")]
    n_in = len(sources) + (1 if entry.warp else 0)
    dests = list(form.destinations)
    params = [f".param .u64 in{i}" for i in range(n_in)] + [f".param .u64 out{i}" for i in range(len(dests))] + [".param .u32 n"]
    decl = ["  .reg .pred %p<4>;", "  .reg .b32 %r<16>;", "  .reg .b64 %rd<40>;"]
    for o in form.operands:
        if o.name.startswith(("imm", "CC")):
            continue
        decl.append(f"  .reg .pred {_reg(o)};" if o.type == "pred" else f"  .reg .b{_width(o)} {_reg(o)};")
    body = [
        "  mov.u32 %r10, %tid.x;",
        "  mov.u32 %r11, %ctaid.x;",
        "  mov.u32 %r12, %ntid.x;",
        "  mad.lo.u32 %r13, %r11, %r12, %r10;",
        "  ld.param.u32 %r14, [n];",
        "  setp.ge.u32 %p0, %r13, %r14;",
        "  @%p0 bra DONE;",
        "  mul.wide.u32 %rd20, %r13, 8;",
    ]
    carry_in = None
    for i, o in enumerate(sources):
        body += [
            f"  ld.param.u64 %rd21, [in{i}];",
            "  cvta.to.global.u64 %rd21, %rd21;",
            "  add.u64 %rd21, %rd21, %rd20;",
            f"  ld.global.u64 %rd{i + 1}, [%rd21];",
        ]
        w = _width(o)
        if o.name.startswith("CC"):
            carry_in = i + 1
        elif o.type == "pred":
            body += [f"  cvt.u32.u64 %r1, %rd{i + 1};", f"  setp.ne.u32 {_reg(o)}, %r1, 0;"]
        elif w == 64:
            body.append(f"  mov.b64 {_reg(o)}, %rd{i + 1};")
        else:
            body.append(f"  cvt.u{w}.u64 {_reg(o)}, %rd{i + 1};")
    wide = any(_width(o) == 64 for o in form.operands if o.name in ("a", "d"))
    if entry.warp:
        body += [
            f"  ld.param.u64 %rd21, [in{len(sources)}];",
            "  cvta.to.global.u64 %rd21, %rd21;",
            "  add.u64 %rd21, %rd21, %rd20;",
            "  ld.global.u64 %rd30, [%rd21];",
            "  cvt.u32.u64 %r5, %rd30;",
            "  mov.u32 %r6, %laneid;",
            "  shr.u32 %r7, %r5, %r6;",
            "  and.b32 %r7, %r7, 1;",
            "  setp.eq.u32 %p2, %r7, 0;",
        ]
        for o in dests:
            body.append(f"  setp.ne.u32 {_reg(o)}, %r6, %r6;" if o.type == "pred" else f"  mov.b{_width(o)} {_reg(o)}, 0;")
        body.append("  @%p2 bra SKIP;")
    if carry_in is not None:
        # CC.CF = the loaded 0/1 value: x + all-ones carries out exactly when x is 1.
        body += (
            [f"  add.cc.u64 %rd31, %rd{carry_in}, 0xffffffffffffffff;"]
            if wide
            else [f"  cvt.u32.u64 %r2, %rd{carry_in};", "  add.cc.u32 %r3, %r2, 0xffffffff;"]
        )
    body.append("  " + instruction_text(entry, form))
    for o in dests:
        if o.name.startswith("CC"):
            body.append("  addc.u64 %rd32, 0, 0;" if wide else "  addc.u32 %r4, 0, 0;")
    if entry.warp:
        body.append("SKIP:")
    for j, o in enumerate(dests):
        if o.name.startswith("CC"):
            body.append("  mov.b64 %rd10, %rd32;" if wide else "  cvt.u64.u32 %rd10, %r4;")
        elif o.type == "pred":
            body.append(f"  selp.u64 %rd10, 1, 0, {_reg(o)};")
        elif _width(o) == 64:
            body.append(f"  mov.b64 %rd10, {_reg(o)};")
        else:
            body.append(f"  cvt.u64.u{_width(o)} %rd10, {_reg(o)};")
        body += [f"  ld.param.u64 %rd22, [out{j}];", "  cvta.to.global.u64 %rd22, %rd22;", "  add.u64 %rd22, %rd22, %rd20;", "  st.global.u64 [%rd22], %rd10;"]
    body += ["DONE:", "  ret;"]
    return f".visible .entry {name}(\n  " + ",\n  ".join(params) + "\n)\n{\n" + "\n".join(decl + body) + "\n}\n"


def module(entries: list[tuple[str, PlanEntry]]) -> str:
    return HEADER + "\n".join(kernel(e, name) for name, e in entries)


def store_bits(o: Operand) -> int:
    """The width a destination or source is stored with: predicates and the carry as 8 bits."""
    w = _width(o)
    return 8 if w <= 8 else w


# ---------------------------------------------------------------------------------------------
# The rounds and their bundles
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One recording of the campaign: ``name`` is the stem of its files, ``entries`` its plan
    entries, ``output_files`` how many files the device splits its outputs into."""

    name: str
    entries: Callable[[], list[PlanEntry]]
    output_files: int

    @property
    def label(self) -> str:
        """What the recording's meta says made it."""
        return f"catalogue campaign, round {self.name}: conformance/silicon/catalogue_campaign.py, scalar_device.py"


ROUNDS: dict[str, Round] = {
    r.name: r
    for r in (
        Round("integer-half-video-warp", lambda: [e for e in plan() if not e.text.endswith(OOB_PROBES)], 3),
        Round("fma-oob-probes", lambda: [e for e in plan() if e.text.endswith(OOB_PROBES)], 1),
        Round("remaining-forms", rest_plan, 3),
    )
}


def _dtype_name(bits: int) -> str:
    return {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}[8 if bits <= 8 else bits]


def _plan_form(name: str, e: PlanEntry, form: Form, group: int) -> dict:
    """The plan's record of one kernel (what ``scalar_device.py`` reads and the meta keeps)."""
    return {
        "kernel": name,
        "text": e.text,
        "chapter": e.chapter,
        "group": group,
        "n": e.n,
        "warp": e.warp,
        "n_in": sum(1 for o in form.sources if not o.name.startswith("imm")) + (1 if e.warp else 0),
        "immediates": e.immediates,
        "dst_bits": [store_bits(o) for o in form.destinations],
    }


def _group_columns(e: PlanEntry, form: Form) -> list[tuple[np.ndarray, int]]:
    """The stored input columns of ``e``'s group, with the bits each is stored with: a warp form's
    own inputs (its active lanes last), else the group's shared inputs."""
    if e.warp:
        return list(zip(warp_inputs(e, form), [store_bits(o) for o in form.sources] + [32]))
    sources = [o for o in form.sources if not o.name.startswith("imm")]
    kinds = tuple(k for k, o in zip(e.kinds, form.sources) if not o.name.startswith("imm"))
    return list(zip(plan_group_inputs(e, kinds), [store_bits(o) for o in sources]))


def prepare(round_: Round, bundle: Path, ptxas: str = "ptxas") -> None:
    """Here (ptxas, ptxspec): the bundle of ``round_``: ``NAME.cubin`` of every form that ptxas
    assembles alone for sm_90a, ``NAME-plan.json``, the inputs of every input group once
    (``NAME-inputs.npz``) and ``rejected-NAME.json``."""
    from ptxspec.conformance.silicon.campaign import assemble_each, assemble_module, save_arrays, write_json
    from ptxspec.semantics.instructions import as_form

    bundle.mkdir(parents=True, exist_ok=True)
    named = [(f"k{i:04d}", e) for i, e in enumerate(round_.entries())]
    accepted, refused = assemble_each(named, lambda ne: module([ne]), ptxas)
    cubin = assemble_module(module(accepted), ptxas)
    groups: dict[str, int] = {}
    arrays: dict[str, np.ndarray] = {}
    forms = []
    for name, e in accepted:
        form = as_form(e.instruction)
        key = e.text if e.warp else e.group
        if key not in groups:
            groups[key] = len(groups)
            for k, (col, bits) in enumerate(_group_columns(e, form)):
                arrays[f"g{groups[key]}_in{k}"] = col.astype(_dtype_name(bits))
        forms.append(_plan_form(name, e, form, groups[key]))
    (bundle / f"{round_.name}.cubin").write_bytes(cubin)
    plan_content = {"round": round_.name, "campaign": round_.label, "output_files": round_.output_files, "forms": forms}
    (bundle / f"{round_.name}-plan.json").write_text(json.dumps(plan_content, indent=0))
    save_arrays(bundle / f"{round_.name}-inputs.npz", arrays)
    write_json(bundle / f"rejected-{round_.name}.json", dict(sorted((e.text, message) for (_, e), message in refused)))
    print(f"{round_.name}: {len(accepted)} forms assembled ({len(groups)} input groups), {len(refused)} rejected by ptxas")
