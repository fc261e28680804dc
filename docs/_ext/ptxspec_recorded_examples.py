"""Worked examples checked against silicon, for the instruction reference.

The expectation of each example here is a value an H100 or H200 computed: the recordings under
``conformance/data/sm_90/`` (ground truth, never edited). For a family with recorded forms the
reference shows a few recorded vectors, chosen deterministically for their edge inputs (NaN,
infinities, zeros, subnormals, the largest and smallest integers, shift amounts and bit positions
past the width) and edge results (NaN, zero, saturated), evaluates each with ptxspec while the
page is built, and fails the build where ptxspec's ``sm_90`` result is not the recorded one, or
where the recorded one is not in the set the manual allows (profile ``spec``).

Nothing here decides a result: the values shown as "expected" are read from the recording, and
the values shown as decoded numbers are decoded here with :mod:`struct` (display only; every check
compares bit patterns). Each function returns :class:`Checked` rows; the reference
(:mod:`ptxspec_reference`) shows them and turns their ``problems`` into build failures.

The recordings and where they come from:

* the scalar and warp rounds (:func:`ptxspec.conformance.silicon.replay.load`): integer, float,
  half, comparison, logic, conversion, video and warp-collective forms (:func:`scalar_examples`);
* the memory round (``memory-plan.json``, ``memory.npz``): ld, st, atom, red, replayed through
  :func:`ptxspec.conformance.silicon.memory_campaign.replay_form`; its address-map kernel (cvta,
  cvta.to, mapa, getctarank, isspacep) and its createpolicy probes;
* the async round (``async-plan.json``): cp.async, the bulk copies and reductions, st.async,
  red.async and the mbarrier programs;
* the movement round (ldmatrix, stmatrix, movmatrix), the TMA rounds (cp.async.bulk.tensor,
  tensormap.replace), the mma and mma.sp rounds and the wgmma rounds.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Iterable

import attrs
import numpy as np

#: How many recorded vectors a family's page shows, from how many of its recorded forms.
ROWS_PER_FAMILY = 4
FORMS_PER_FAMILY = 3
#: Of a warp form, the lanes whose values a row shows (every lane is checked).
SHOWN_LANES = (0, 1, 2, 31)


@attrs.frozen
class Checked:
    """One example checked against a recording: what the page shows (``result``: ptxspec's;
    ``expected``: the recording's) and, where ptxspec disagrees, the problems that fail the build."""

    form: str
    inputs: str
    result: str
    expected: str
    why: str
    problems: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Display (hex, and a decoded value where the type is a float or integer): never used to decide
# ---------------------------------------------------------------------------------------------


def hex_of(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


#: struct codes of the IEEE formats that a host decodes exactly (bf16 is the top half of an f32).
_STRUCT_FLOATS = {"f16": ("<e", "<H", 0), "f32": ("<f", "<I", 0), "f64": ("<d", "<Q", 0), "bf16": ("<f", "<I", 16)}


def _float_text(bits: int, type_name: str) -> str:
    code, raw, shift = _STRUCT_FLOATS[type_name]
    value = struct.unpack(code, struct.pack(raw, bits << shift))[0]
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+inf" if value > 0 else "-inf"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "+0.0"
    return f"{value:.6g}"


def value_text(bits: int, type_name: str) -> str:
    """``bits`` of a register of ``type_name``: hex, with the value for the IEEE float types, the
    packed halves and the signed integers (what a reader checks a row with)."""
    from ptxspec.spec.types import INTEGER_TYPES, PACKED_TYPES, register_bits

    width = register_bits(type_name)
    text = hex_of(bits, width)
    if type_name in _STRUCT_FLOATS:
        return f"{text} ({_float_text(bits, type_name)})"
    packed = PACKED_TYPES.get(type_name)
    if packed is not None and packed.element in _STRUCT_FLOATS and packed.count == 2:
        half = width // 2
        return f"{text} ({_float_text(bits >> half, packed.element)}, {_float_text(bits & ((1 << half) - 1), packed.element)})"
    integer = INTEGER_TYPES.get(type_name)
    if integer is not None and integer.signed and bits >> (integer.bits - 1):
        return f"{text} ({bits - (1 << integer.bits)})"
    if integer is not None and not type_name.startswith("b") and bits < 1 << 20:
        return f"{text} ({bits})"
    return text


def result_text(result, type_name: str) -> str:
    """A result of ptxspec's: bits, or the set it allows."""
    return value_text(result, type_name) if isinstance(result, int) else result.describe()


# ---------------------------------------------------------------------------------------------
# Edge classes of recorded operands, to pick the vectors a page shows
# ---------------------------------------------------------------------------------------------
#
# Each recorded vector gets a bit mask of the edge classes its operands and results fall in (one
# bit per operand and class); the page shows, per form, the vectors that add the most classes not
# shown yet, the earliest first. numpy, so that a form of 65,536 recorded vectors costs little.

FLOAT_CLASSES = ("NaN", "infinity", "zero", "subnormal", "largest finite", "negative")
INTEGER_CLASSES = ("zero", "all ones", "sign bit only", "largest signed", "one", "past the width")


def _float_classes(column: np.ndarray, exponent_bits: int, mantissa_bits: int) -> list[np.ndarray]:
    """The IEEE classes of each element (§4.2.1's encodings): one boolean array per FLOAT_CLASSES."""
    column = column.astype(np.uint64)
    exponent = (column >> np.uint64(mantissa_bits)) & np.uint64((1 << exponent_bits) - 1)
    mantissa = column & np.uint64((1 << mantissa_bits) - 1)
    sign = (column >> np.uint64(exponent_bits + mantissa_bits)) & np.uint64(1)
    top = (1 << exponent_bits) - 1
    return [
        (exponent == top) & (mantissa != 0),
        (exponent == top) & (mantissa == 0),
        (exponent == 0) & (mantissa == 0),
        (exponent == 0) & (mantissa != 0),
        (exponent == top - 1) & (mantissa == (1 << mantissa_bits) - 1),
        (sign == 1) & ~((exponent == top) & (mantissa != 0)),
    ]


def _integer_classes(column: np.ndarray, width: int) -> list[np.ndarray]:
    """One boolean array per INTEGER_CLASSES: the values that overflow, wrap or clamp, and small
    values at or past the width (shift amounts and bit positions, §9.7.8.7-8, §9.7.1.18-19)."""
    ones = np.uint64((1 << width) - 1)
    column = column.astype(np.uint64) & ones
    sign = np.uint64(1 << (width - 1))
    return [
        column == 0,
        column == ones,
        column == sign,
        column == sign - np.uint64(1),
        column == 1,
        (column >= 32) & (column < 256) if width >= 8 else np.zeros(column.shape, bool),
    ]


#: The IEEE float formats whose classes are told apart, by their (exponent, mantissa) bits.
_IEEE = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


def operand_classes(column: np.ndarray, type_name: str) -> list[np.ndarray]:
    """The edge classes of a recorded operand of ``type_name`` (a packed pair: of either half)."""
    from ptxspec.spec.types import PACKED_TYPES, register_bits

    if type_name in _IEEE:
        return _float_classes(column, *_IEEE[type_name])
    packed = PACKED_TYPES.get(type_name)
    if packed is not None and packed.element in _IEEE and packed.count == 2:
        half = register_bits(type_name) // 2
        column = column.astype(np.uint64)
        high = _float_classes(column >> np.uint64(half), *_IEEE[packed.element])
        low = _float_classes(column & np.uint64((1 << half) - 1), *_IEEE[packed.element])
        return [a | b for a, b in zip(high, low)]
    if type_name == "pred":
        return []
    return _integer_classes(column, register_bits(type_name))


#: The classes that count double when a vector is picked: the manual's special cases, above the
#: everyday zero, one and negative values.
WEIGHTY = {"NaN", "infinity", "subnormal", "largest finite", "all ones", "sign bit only", "largest signed", "past the width"}


def class_masks(columns: Iterable[tuple[np.ndarray, str]]) -> tuple[np.ndarray, int]:
    """One uint64 mask per recorded vector (bit ``8 * operand + class`` for each edge class it
    falls in), and the mask of the bits of :data:`WEIGHTY` classes."""
    from ptxspec.spec.types import PACKED_TYPES

    masks = None
    weighty = 0
    for position, (column, type_name) in enumerate(columns):
        names = FLOAT_CLASSES if (type_name in _IEEE or type_name in PACKED_TYPES) else INTEGER_CLASSES
        if masks is None:
            masks = np.zeros(len(column), np.uint64)
        for k, members in enumerate(operand_classes(column, type_name)):
            bit = 1 << ((8 * position + k) % 64)
            masks |= np.where(members, np.uint64(bit), np.uint64(0))
            weighty |= bit if names[k] in WEIGHTY else 0
    return (masks if masks is not None else np.zeros(0, np.uint64)), weighty


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.unpackbits(x.astype(">u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1).astype(np.int64)


def pick(masks: np.ndarray, count: int, shown: int = 0, weighty: int = 0) -> list[int]:
    """``count`` vectors, greedily the one whose classes add most to those ``shown`` (and to the
    ones picked before it; a class of ``weighty`` counts twice), the earliest on a tie:
    deterministic, no randomness."""
    picked: list[int] = []
    for _ in range(min(count, len(masks))):
        new = masks & ~np.uint64(shown)
        gain = _popcount(new) + _popcount(new & np.uint64(weighty))
        if picked:
            gain[picked] = -1
        best = int(np.argmax(gain))
        picked.append(best)
        shown |= int(masks[best])
    return picked


# ---------------------------------------------------------------------------------------------
# The scalar and warp rounds (replay.load)
# ---------------------------------------------------------------------------------------------


@functools.cache
def scalar_recording():
    from ptxspec.conformance.silicon import replay

    return replay.load()


@functools.cache
def scalar_forms_by_family() -> dict[str, tuple[str, ...]]:
    """Family key -> its recorded form texts (``#all-inputs`` exhaustive scans after the others)."""
    from ptxspec.spec.catalogue import parse

    found: dict[str, list[str]] = {}
    for text in scalar_recording().forms:
        found.setdefault(parse(text.split("#")[0]).family.key, []).append(text)
    return {key: tuple(sorted(texts, key=lambda t: ("#" in t, t))) for key, texts in found.items()}


#: Qualifiers where the manual's rules are subtle: a form that has them is shown first.
SUBTLE = frozenset(
    {
        "sat",
        "satfinite",
        "NaN",
        "relu",
        "ftz",
        "cc",
        "clamp",
        "wrap",
        "shiftamt",
        "xorsign",
        "abs",
        "hi",
        "wide",
        "rni",
        "rzi",
        "rmi",
        "rpi",
        "f4e",
        "b4e",
        "ecl",
        "ecr",
    }
)


#: Families whose subtle cases live in particular forms: those are shown (where recorded) before
#: the ones :func:`choose_forms` would pick. The unordered and NaN comparisons (§9.7.6.1), the
#: high halves and wide products (§9.7.1.3-4), the carry chain (§9.7.2), the byte selectors of prmt
#: (§9.7.9.7) and the majority, xor and select truth tables of lop3 (§9.7.8.6).
PREFERRED = {
    "set": ("set.equ.ftz.u32.f32", "set.lt.f32.f64", "set.ne.and.s32.s16"),
    "setp": ("setp.nan.f32", "setp.ltu.ftz.f32", "setp.lt.s64"),
    "set.half": ("set.equ.f16x2.f16x2", "set.ltu.and.ftz.u32.f16x2", "set.gt.bf16.bf16"),
    "setp.half": ("setp.equ.f16x2", "setp.ltu.bf16", "setp.num.ftz.f16"),
    "selp": ("selp.f32", "selp.b64", "selp.s16"),
    "slct": ("slct.ftz.f32.f32", "slct.s32.s32", "slct.b64.f32"),
    "mul.int": ("mul.hi.s64", "mul.wide.s32", "mul.lo.u16"),
    "mad.int": ("mad.hi.sat.s32", "mad.wide.u32", "mad.lo.s64"),
    "mul24": ("mul24.hi.s32", "mul24.lo.u32"),
    "mad24": ("mad24.hi.sat.s32", "mad24.lo.u32"),
    "add.cc": ("add.cc.u32", "add.cc.s64"),
    "sub.cc": ("sub.cc.u32", "sub.cc.s64"),
    "addc": ("addc.cc.u32", "addc.u64"),
    "subc": ("subc.cc.u32", "subc.s64"),
    "mad.cc": ("mad.lo.cc.u32", "mad.hi.cc.s64"),
    "madc": ("madc.hi.cc.u32", "madc.lo.s64"),
    "shr": ("shr.s32", "shr.u16", "shr.b64"),
    "lop3": ("lop3.b32#immLut=0x96", "lop3.b32#immLut=0xe8", "lop3.b32#immLut=0xca"),
    "prmt": ("prmt.b32", "prmt.b32.f4e", "prmt.b32.rc8"),
    "dp2a": ("dp2a.hi.s32.u32", "dp2a.lo.u32.u32"),
    "rem": ("rem.s32", "rem.u64"),
    "bfind": ("bfind.shiftamt.u32", "bfind.s64"),
}


def choose_forms(texts: Iterable[str], count: int = FORMS_PER_FAMILY, preferred: Iterable[str] = ()) -> list[str]:
    """``count`` recorded forms of a family: the ``preferred`` ones that are recorded, then the one
    with most subtle qualifiers, then each next one of a type not shown yet where there is one
    (the form text's last token)."""
    texts = list(texts)
    by_interest = sorted(texts, key=lambda t: (-len(SUBTLE & set(t.split("#")[0].split("."))), "#" in t, len(t), t))
    chosen: list[str] = [t for t in preferred if t in texts][:count]
    types: set[str] = {t.split("#")[0].split(".")[-1] for t in chosen}
    for text in by_interest:
        if len(chosen) == count:
            break
        last = text.split("#")[0].split(".")[-1]
        if last not in types:
            chosen.append(text)
            types.add(last)
    for text in by_interest:  # a family of one type: its other forms
        if len(chosen) < count and text not in chosen:
            chosen.append(text)
    return chosen


def _gpu(campaign: str) -> str:
    meta = scalar_recording().campaigns.get(campaign, {})
    return str(meta.get("gpu", "sm_90")).replace("NVIDIA ", "").replace(" 80GB HBM3", "")


def _allowed_text(spec_results: tuple) -> str:
    texts = ["exactly this" if isinstance(r, int) else f"the set {r.describe()}" for r in spec_results]
    return "; ".join(texts) if len(set(texts)) > 1 else texts[0]


@functools.cache
def _departures() -> tuple[tuple[str, object], ...]:
    """The manual with one of the sm_90 profile's choices each: ``(field, profile)`` per choice
    (:meth:`ptxspec.profiles.record.Profile.choices`)."""
    from ptxspec.profiles.sm_90 import SM_90
    from ptxspec.profiles.spec import SPEC

    return tuple((name, attrs.evolve(SPEC, name=f"spec+{name}", **{name: getattr(SM_90, name)})) for name in SM_90.choices())


def explaining_choice(form, sources: tuple, index: int, seen, **context) -> str | None:
    """Where a recorded result lies outside the set the manual allows: the one choice of the sm_90
    profile (a documented departure, ``profiles/sm_90``) that, made alone on top of the manual,
    gives it -- or None, and then the build fails."""
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains

    for name, profile in _departures():
        try:
            result = evaluate(form, sources, profile, **context)[index]
        except Exception:  # noqa: BLE001 - a choice that does not apply to this form
            continue
        if (seen in result) if isinstance(seen, tuple) else contains(result, seen):
            return name
    return None


def _judge(where: str, form, sources: tuple, results: tuple, spec: tuple, observed: tuple, **context) -> tuple[tuple[str, ...], list[str]]:
    """The problems of one recorded vector (ptxspec's sm_90 result is not the recorded one; or the
    recorded one is outside what the manual allows and no documented departure explains it), and
    the departures that do explain one."""
    from ptxspec.semantics.results import contains

    def member(result, value) -> bool:
        return value in result if isinstance(value, tuple) else contains(result, value)

    def text(value) -> str:
        return hex(value) if isinstance(value, int) else str([hex(v) for v in value])

    problems, departures = [], []
    for i, (o, mine, allowed, seen) in enumerate(zip(form.destinations, results, spec, observed)):
        if not member(mine, seen):
            problems.append(f"{where}: {o.name} recorded {text(seen)}, ptxspec (sm_90) gives {mine if isinstance(mine, int) else mine.describe()}")
        if not member(allowed, seen):
            choice = explaining_choice(form, sources, i, seen, **context)
            if choice is None:
                problems.append(f"{where}: {o.name} recorded {text(seen)}, outside what the manual allows and no choice of the sm_90 profile explains it")
            else:
                reading = allowed if isinstance(allowed, int) else allowed.describe()
                departures.append(
                    f"{o.name}: the manual's reading gives {text(reading) if isinstance(reading, int) else reading}; the chip departs from it, as the sm_90 profile's {choice} records"
                )
    return tuple(problems), departures


def scalar_row(text: str, row: int) -> Checked:
    """Recorded vector ``row`` of the scalar form ``text``, evaluated by ptxspec (sm_90 and spec)."""
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.spec.types import register_bits

    recorded = scalar_recording().forms[text]
    form = as_form(text.split("#")[0])
    sources = tuple(int(c[row]) & ((1 << register_bits(o.type)) - 1) for c, o in zip(recorded.inputs, form.sources))
    observed = tuple(int(c[row]) & ((1 << register_bits(o.type)) - 1) for c, o in zip(recorded.outputs, form.destinations))
    where = f"recorded {text} vector {row + 1}"
    try:
        results, spec = evaluate(form, sources, "sm_90"), evaluate(form, sources, "spec")
    except Exception as error:  # noqa: BLE001 - a crash on a recorded vector is a problem to report
        return Checked(form.text, "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",))
    types = [o.type for o in form.destinations]
    problems, departures = _judge(where, form, sources, results, spec, observed)
    allowed = "; ".join(departures) if departures else f"the manual allows {_allowed_text(spec)}"
    return Checked(
        _shown_text(text, form),
        "; ".join(f"{o.name} = {value_text(v, o.type)}" for o, v in zip(form.sources, sources)),
        "; ".join(result_text(r, t) for r, t in zip(results, types)),
        "; ".join(value_text(v, t) for v, t in zip(observed, types)),
        f"recorded on an {_gpu(recorded.campaign)} (round {recorded.campaign}, vector {row + 1} of {len(recorded.outputs[0])}); {allowed}",
        problems,
    )


def _shown_text(text: str, form) -> str:
    """The form as the page names it: with the immediate operand the recording fixed (``#immLut=``)."""
    return form.text + (f" ({text.split('#', 1)[1]})" if "#" in text and "=" in text.split("#", 1)[1] else "")


def _lanes_text(values: tuple, type_name: str) -> str:
    from ptxspec.spec.types import register_bits

    width = register_bits(type_name)
    return ", ".join(f"{lane}: {hex_of(values[lane], width) if isinstance(values[lane], int) else values[lane].describe()}" for lane in SHOWN_LANES)


def warp_row(text: str, warp: int) -> Checked:
    """Recorded warp ``warp`` (32 lanes) of the warp-level form ``text``: every lane checked, the
    lanes of :data:`SHOWN_LANES` shown."""
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.spec.types import register_bits

    recorded = scalar_recording().forms[text]
    form = as_form(text.split("#")[0])
    *columns, active = recorded.inputs
    lanes = slice(32 * warp, 32 * warp + 32)
    operands: list = []
    for operand, column in zip(form.sources, columns):
        values = tuple(int(x) & ((1 << register_bits(operand.type)) - 1) for x in column[lanes])
        operands.append(values[0] if operand.name == "membermask" else values)
    executing = int(active[32 * warp])
    observed = [tuple(int(x) & ((1 << register_bits(o.type)) - 1) for x in c[lanes]) for c, o in zip(recorded.outputs, form.destinations)]
    where = f"recorded {text} warp {warp + 1}"
    try:
        results = evaluate(form, tuple(operands), "sm_90", active=executing)
        spec = evaluate(form, tuple(operands), "spec", active=executing)
    except Exception as error:  # noqa: BLE001
        return Checked(form.text, "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",))
    problems, departures = _judge(where, form, tuple(operands), results, spec, tuple(observed), active=executing)
    inputs = [f"active lanes {executing:#010x}"]
    for o, v in zip(form.sources, operands):
        inputs.append(f"{o.name} = {hex_of(v, register_bits(o.type))}" if isinstance(v, int) else f"{o.name} lanes {_lanes_text(v, o.type)}")
    return Checked(
        form.text,
        "; ".join(inputs),
        "; ".join(f"{o.name} lanes {_lanes_text(r.lanes, o.type)}" for o, r in zip(form.destinations, results)),
        "; ".join(f"{o.name} lanes {_lanes_text(v, o.type)}" for o, v in zip(form.destinations, observed)),
        f"recorded on an {_gpu(recorded.campaign)} (round {recorded.campaign}, warp {warp + 1}); all 32 lanes compared, lanes {', '.join(map(str, SHOWN_LANES))} shown"
        + "".join(f"; {d}" for d in departures),
        problems,
    )


def _scalar_masks(text: str) -> tuple[np.ndarray, int]:
    """The edge-class masks of every recorded vector of ``text``: sources, then destinations."""
    from ptxspec.semantics.instructions import as_form

    recorded = scalar_recording().forms[text]
    form = as_form(text.split("#")[0])
    columns = [(c, o.type) for c, o in zip(recorded.inputs, form.sources)] + [(c, o.type) for c, o in zip(recorded.outputs, form.destinations)]
    return class_masks(columns)


def _warps_to_show(text: str) -> list[int]:
    """A warp with every lane active and one with some inactive (the second half of a recorded
    warp form, :func:`ptxspec.conformance.silicon.replay.sample_rows`)."""
    recorded = scalar_recording().forms[text]
    warps = len(recorded.inputs[-1]) // 32
    return sorted({0, warps // 2}) if warps > 1 else [0]


def scalar_examples(family_key: str) -> list[Checked]:
    """The family's recorded scalar or warp vectors: up to :data:`ROWS_PER_FAMILY` of them, from
    up to :data:`FORMS_PER_FAMILY` recorded forms."""
    texts = scalar_forms_by_family().get(family_key, ())
    if not texts:
        return []
    forms = choose_forms(texts, preferred=PREFERRED.get(family_key, ()))
    recording = scalar_recording()
    if recording.forms[forms[0]].warp:
        return [warp_row(text, w) for text in forms[:2] for w in _warps_to_show(text)][:ROWS_PER_FAMILY]
    per_form = [ROWS_PER_FAMILY // len(forms) + (1 if i < ROWS_PER_FAMILY % len(forms) else 0) for i in range(len(forms))]
    out: list[Checked] = []
    shown = 0
    for text, count in zip(forms, per_form):
        masks, weighty = _scalar_masks(text)
        rows = pick(masks, count, shown, weighty)
        for row in rows:
            shown |= int(masks[row])
        out.extend(scalar_row(text, row) for row in sorted(rows))
    return out


# ---------------------------------------------------------------------------------------------
# Common to the rounds of memory: which rounds, which chip, which entries a family shows
# ---------------------------------------------------------------------------------------------


def _data_dir():
    from ptxspec.conformance.silicon import replay

    return replay.DATA / "sm_90"


@functools.cache
def chip_of(meta_name: str) -> str:
    """The GPU a round ran on, from its meta file (``meta-memory.json``: ``device.gpu``)."""
    import json

    meta = json.loads((_data_dir() / meta_name).read_text())
    gpu = meta.get("gpu") or meta.get("device", {}).get("gpu", "sm_90")
    return str(gpu).replace("NVIDIA ", "").replace(" 80GB HBM3", "")


def _by_family(texts: Iterable[tuple[str, object]]) -> dict[str, list]:
    """``(instruction text, item)`` pairs grouped by the catalogue family of the text."""
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.errors import PtxSpecError

    found: dict[str, list] = {}
    for text, item in texts:
        try:
            key = parse(text).family.key
        except PtxSpecError:
            continue
        found.setdefault(key, []).append(item)
    return found


def _choose_entries(entries: list[dict], preferred: Iterable[str], count: int) -> list[dict]:
    """``count`` plan entries: the ``preferred`` names that are recorded, then the first of each
    state space (the name's prefix) not shown yet, then the rest in plan order."""
    named = {e["name"]: e for e in entries}
    chosen = [named[n] for n in preferred if n in named][:count]
    spaces = {e["name"].split("-")[0] for e in chosen}
    for e in entries:
        if len(chosen) < count and e["name"].split("-")[0] not in spaces:
            chosen.append(e)
            spaces.add(e["name"].split("-")[0])
    for e in entries:
        if len(chosen) < count and e not in chosen:
            chosen.append(e)
    return chosen


def _bytes_text(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)


# ---------------------------------------------------------------------------------------------
# The memory round: ld, st, atom, red (memory-plan.json, memory.npz)
# ---------------------------------------------------------------------------------------------

#: The entries of the memory round a family shows first: the wrapping increments (§9.7.13.5:
#: "inc: ((old >= b) ? 0 : (old+1))"), the signed extremes, compare-and-swap, a sign-extending
#: narrow load, a generic address into shared memory.
PREFERRED_MEMORY = {
    "ld": ("generic-shared-ld.s8", "local-ld.v2.b32"),
    "st": ("generic-local-st.u16", "shared-st.v4.b8"),
    "atom": ("global-atom.inc.u32", "shared-atom.dec.u32", "generic-atom.max.s64"),
    "red": ("shared-red.inc.u32", "global-red.min.s32"),
    "atom.cas": ("shared-atom.cas.b32", "generic-atom.cas.b64"),
}
MEMORY_ENTRIES_PER_FAMILY = 2


@functools.cache
def memory_round():
    """The memory round's plan, records and the address map its CTA saw (as the replay reads it)."""
    import json

    import attrs as _attrs

    from ptxspec.conformance.silicon import memory_campaign

    directory = _data_dir()
    plan = json.loads((directory / memory_campaign.PLAN).read_text())
    data = dict(memory_campaign.records(directory))
    addresses = _attrs.evolve(memory_campaign.address_map_of(data["address_map_0"], 0), cluster_ctas=1)
    return plan, data, addresses


@functools.cache
def memory_entries_by_family() -> dict[str, list]:
    plan, _, _ = memory_round()
    return _by_family((e["instruction"], e) for e in plan["forms"])


def _memory_case(entry: dict, i: int):
    """Record ``i`` of a memory-round entry as the replay rebuilds it
    (:func:`ptxspec.conformance.silicon.memory_campaign.replay_form`): the state the CTA executed
    in, the source operands, the base of the recorded region, and what the chip left."""
    import attrs as _attrs

    from ptxspec.conformance.silicon import memory_campaign, memory_device

    _, data, addresses = memory_round()
    name = entry["name"]
    regions, offsets, operands = memory_device.inputs(entry)
    dst, changed, address = data[f"{name}_dst"], data[f"{name}_changed"], data[f"{name}_address"]
    at = int(address[i])
    if entry["space"] == "generic-param":
        addresses = _attrs.evolve(addresses, param=(at - int(offsets[i]), addresses.param[1]))
    if entry["space"] in ("generic-shared", "generic-local", "generic-const", "generic-param"):
        at -= addresses.window(memory_campaign._space(entry))[0]
    base = at - int(offsets[i])
    state = memory_campaign._state_for(entry, regions[i].tobytes(), base, addresses)
    sources = [int(address[i])]
    sources += [int.from_bytes(operands[i, k, : (bits + 7) // 8].tobytes(), "little") for k, bits in enumerate(entry["sources"])]
    if entry["policy"]:
        sources.append(int.from_bytes(dst[i, 3, :8].tobytes(), "little"))
    recorded = [int.from_bytes(dst[i, k, : bits // 8].tobytes(), "little") for k, bits in enumerate(entry["destinations"])]
    after = (regions[i] ^ changed[i]).tobytes()
    return state, sources, base, int(offsets[i]), recorded, regions[i].tobytes(), after


def memory_row(entry: dict, i: int) -> Checked:
    """Record ``i`` of a memory-round entry through :func:`ptxspec.semantics.instructions.execute`
    (sm_90, and spec for the destinations): every destination and every byte of the recorded
    region compared."""
    from ptxspec.conformance.silicon import memory_campaign
    from ptxspec.semantics.instructions import as_form, execute
    from ptxspec.semantics.results import contains

    state, sources, base, offset, recorded, before, after = _memory_case(entry, i)
    form = as_form(entry["instruction"])
    where = f"memory round {entry['name']} record {i + 1}"
    try:
        outcome = execute(entry["instruction"], sources, "sm_90", state=state)
        spec = execute(entry["instruction"], sources, "spec", state=state).results
    except Exception as error:  # noqa: BLE001 - a refusal or crash on a recorded case is a problem
        return Checked(form.text, "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",))
    mine = memory_campaign._region_after(entry, outcome.state, base)
    problems = [
        f"{where}: destination {k} recorded {v:#x}, ptxspec (sm_90) gives {r!r}"
        for k, (r, v) in enumerate(zip(outcome.results, recorded))
        if not contains(r, v)
    ]
    problems += [
        f"{where}: destination {k} recorded {v:#x}, outside what the manual allows: {r!r}" for k, (r, v) in enumerate(zip(spec, recorded)) if not contains(r, v)
    ]
    if mine != after:
        problems.append(f"{where}: memory after is {after.hex()}, ptxspec leaves {mine.hex()}")
    size = max(entry["size"], 1)
    window = slice(offset, min(offset + size, len(before)))
    operands = [o for o in form.sources][1 : 1 + len(entry["sources"])]
    inputs = [f"address {sources[0]:#x} ({entry['space']}, byte {offset} of the recorded {len(before)}-byte region)"]
    inputs += [f"{o.name} = {hex_of(v, bits)}" for o, v, bits in zip(operands, sources[1:], entry["sources"])]
    inputs.append(f"memory there before: {_bytes_text(before[window])}")
    shown_after = f"memory there after: {_bytes_text(mine[window])}"
    results = [f"{d.name} = {result_text(r, d.type)}" for d, r in zip(form.destinations, outcome.results)]
    expected = [f"{d.name} = {hex_of(v, bits)}" for d, v, bits in zip(form.destinations, recorded, entry["destinations"])]
    return Checked(
        entry["instruction"],
        "; ".join(inputs),
        "; ".join([*results, shown_after]),
        "; ".join([*expected, f"memory there after: {_bytes_text(after[window])}"]),
        f"recorded on an {chip_of('meta-memory.json')} (memory round, {entry['name']}, record {i + 1} of {len(memory_round()[1][entry['name'] + '_address'])}); "
        f"every destination and all {len(before)} bytes of the region compared",
        tuple(problems),
    )


def _memory_masks(entry: dict) -> tuple[np.ndarray, int]:
    """The edge classes of each record of an entry: its old value in memory and first operand."""
    from ptxspec.conformance.silicon import memory_device

    regions, offsets, operands = memory_device.inputs(entry)
    width = min(max(entry["size"], 1) * 8, 64)
    rows = np.arange(len(offsets))
    old = np.array([int.from_bytes(regions[r, o : o + width // 8].tobytes(), "little") for r, o in zip(rows, offsets.tolist())], dtype=np.uint64)
    columns = [(old, f"b{width}" if width in (8, 16, 32, 64) else "b32")]
    if entry["sources"]:
        bits = min(entry["sources"][0], 64)
        first = np.array([int.from_bytes(operands[r, 0, : (bits + 7) // 8].tobytes(), "little") for r in rows], dtype=np.uint64)
        columns.append((first, f"b{bits}" if bits in (8, 16, 32, 64) else "b32"))
    return class_masks(columns)


def memory_examples(family_key: str) -> list[Checked]:
    """A record of each of up to :data:`MEMORY_ENTRIES_PER_FAMILY` recorded forms of the family,
    each adding edge classes the ones before did not show."""
    entries = memory_entries_by_family().get(family_key, [])
    out: list[Checked] = []
    shown = 0
    for entry in _choose_entries(entries, PREFERRED_MEMORY.get(family_key, ()), MEMORY_ENTRIES_PER_FAMILY):
        masks, weighty = _memory_masks(entry)
        (i,) = pick(masks, 1, shown, weighty)
        shown |= int(masks[i])
        out.append(memory_row(entry, i))
    return out


# ---------------------------------------------------------------------------------------------
# The memory round's address-map kernel (cvta, cvta.to, mapa, getctarank, isspacep) and its
# createpolicy probes
# ---------------------------------------------------------------------------------------------

#: Rows of the address-map kernel a family shows: (recorded row, instruction, the row its operand
#: came from, the other operands). Rows from which the address map itself is read (the windows'
#: bases: cvta.local of a local address, ...) are not among them: they would check nothing.
ADDRESS_ROWS = {
    "cvta": (("cvta.shared::cluster", "cvta.shared::cluster.u64", "shared", ()), ("cvta.global", "cvta.global.u64", "cvta.to.global", ())),
    "cvta.to": (
        ("cvta.to.shared::cluster", "cvta.to.shared::cluster.u64", "cvta.shared::cta", ()),
        ("cvta.to.global", "cvta.to.global.u64", "global", ()),
    ),
    "mapa": (("mapa.shared::cluster 1", "mapa.shared::cluster.u64", "shared", (1,)), ("mapa 1", "mapa.u64", "cvta.shared::cta", (1,))),
    "getctarank": (
        ("getctarank mapa 1", "getctarank.u64", "mapa 1", ()),
        ("getctarank.shared::cluster mapa 0", "getctarank.shared::cluster.u64", "mapa.shared::cluster 0", ()),
    ),
}
#: isspacep probes shown: (generic row, own-space row, offset) of memory_campaign.probes() -- the
#: last byte of the shared window (inside) and the first past it, and the first past the local one.
ISSPACEP_PROBES = (("cvta.shared::cta", "shared", (1 << 32) - 1), ("cvta.shared::cta", "shared", 1 << 32), ("cvta.local", "local", 1 << 24))


def _address_rows(rank: int = 0) -> dict[str, int]:
    from ptxspec.conformance.silicon import memory_campaign

    _, data, _ = memory_round()
    rows = data["address_map_0"]
    return {name: int(rows[rank][i]) for i, name in enumerate(memory_campaign.ADDRESS_ROWS)}


def _address_state():
    from ptxspec.semantics.state import State

    _, data, _ = memory_round()
    from ptxspec.conformance.silicon import memory_campaign

    return State(shared=bytes(0x440), addresses=memory_campaign.address_map_of(data["address_map_0"], 0))


def address_examples(family_key: str) -> list[Checked]:
    """cvta, cvta.to, mapa, getctarank: recorded rows of the address-map kernel of CTA 0 (a
    cluster of two), each evaluated on the address map the recording shows (§6.4.1.1)."""
    from ptxspec.semantics.instructions import evaluate

    out = []
    row = _address_rows()
    state = _address_state()
    for name, text, source, extra in ADDRESS_ROWS.get(family_key, ()):
        sources = [row[source], *extra]
        where = f"address-map row {name!r}"
        try:
            (mine,) = evaluate(text, sources, "sm_90", state=state)
        except Exception as error:  # noqa: BLE001
            out.append(Checked(text, "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",)))
            continue
        problems = () if mine == row[name] else (f"{where}: recorded {row[name]:#x}, ptxspec gives {mine!r}",)
        out.append(
            Checked(
                text,
                "; ".join([f"a = {row[source]:#x} (the kernel's {source} address)", *(f"b = {v}" for v in extra)]),
                result_text(mine, "u64"),
                hex_of(row[name], 64),
                f"recorded on an {chip_of('meta-memory.json')} (memory round, address-map kernel, CTA 0 of a cluster of 2, row {name})",
                problems,
            )
        )
    if family_key == "isspacep":
        out.extend(_isspacep_row(*probe) for probe in ISSPACEP_PROBES)
    return out


def _isspacep_row(generic: str, own: str, offset: int) -> Checked:
    """One isspacep probe: the six spaces asked of one generic address (bit i: ISSPACEP[i])."""
    from ptxspec.conformance.silicon import memory_campaign
    from ptxspec.semantics.instructions import evaluate

    _, data, _ = memory_round()
    probes = memory_campaign.probes()
    index = probes.index((generic, own, offset))
    row = _address_rows()
    address = row[generic] - row[own] + offset
    recorded = int(data["address_map_0"][0][len(memory_campaign.ADDRESS_ROWS) + index])
    state = _address_state()
    mine = 0
    for bit, space in enumerate(memory_campaign.ISSPACEP):
        (p,) = evaluate(f"isspacep.{space}", [address], "sm_90", state=state)
        mine |= int(p) << bit
    problems = () if mine == recorded else (f"isspacep probe {generic} {offset:+#x}: recorded {recorded:06b}, ptxspec gives {mine:06b}",)
    return Checked(
        "isspacep." + "/".join(memory_campaign.ISSPACEP),
        f"a = {address:#x} ({own} window base + {offset:#x})",
        f"{mine:06b} (bits 5..0: {', '.join(reversed(memory_campaign.ISSPACEP))})",
        f"{recorded:06b}",
        f"recorded on an {chip_of('meta-memory.json')} (memory round, address-map kernel, CTA 0): each of the six isspacep forms asked of one address",
        problems,
    )


#: createpolicy.fractional probes shown (rows of memory_campaign.createpolicy_rows()).
CREATEPOLICY_SHOWN = (
    "createpolicy.fractional.L2::evict_last.b64 %w, 0f3F000000;",
    "createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %w, 0f3DCCCCCD;",
    "createpolicy.fractional.L2::evict_normal.b64 %w;",
)


def createpolicy_examples(family_key: str) -> list[Checked]:
    """createpolicy.fractional: the opaque policies an H200 wrote, against the sm_90 profile's
    encoding (the manual allows any 64 bits)."""
    from ptxspec.conformance.silicon import memory_campaign
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains
    from ptxspec.semantics.state import State
    from ptxspec.spec.catalogue import parse

    if family_key != "createpolicy.fractional":
        return []
    _, data, _ = memory_round()
    rows = memory_campaign.createpolicy_rows()
    values = data["createpolicy_0"].tolist()
    out = []
    for line in CREATEPOLICY_SHOWN:
        recorded = int(values[rows.index(line)])
        text = line.split(" %w")[0]
        sources = [int(line.split("0f")[1].rstrip(";"), 16)] if "0f" in line else ([0x3F800000] if parse(text).inputs else [])
        (mine,) = evaluate(text, sources, "sm_90", state=State())
        (allowed,) = evaluate(text, sources, "spec", state=State())
        problems = [] if contains(mine, recorded) else [f"createpolicy row {line!r}: recorded {recorded:#x}, ptxspec (sm_90) gives {mine!r}"]
        problems += [] if contains(allowed, recorded) else [f"createpolicy row {line!r}: recorded {recorded:#x}, outside the manual's set"]
        out.append(
            Checked(
                text,
                f"fraction = {value_text(sources[0], 'f32')}" if sources else 'no fraction ("it defaults to 1.0")',
                result_text(mine, "b64"),
                hex_of(recorded, 64),
                f'recorded on an {chip_of("meta-memory.json")} (memory round, createpolicy probe); the manual allows {_allowed_text((allowed,))} ("an opaque 64-bit cache-policy")',
                tuple(problems),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# The async round: cp.async, the bulk copies and reductions, st.async, red.async (a cluster of two
# CTAs, async-plan.json) and the mbarrier programs
# ---------------------------------------------------------------------------------------------

ASYNC_ENTRIES_PER_FAMILY = 2
#: Bytes of a changed run a row shows.
SHOWN_BYTES = 8


@functools.cache
def async_round():
    import json

    from ptxspec.conformance.silicon import async_campaign

    directory = _data_dir()
    plan = json.loads((directory / async_campaign.PLAN).read_text())
    return plan, dict(async_campaign.records(directory))


@functools.cache
def async_entries_by_family() -> dict[str, list]:
    from ptxspec.conformance.silicon import async_campaign

    plan, _ = async_round()
    return _by_family((async_campaign._text(e), e) for e in plan["forms"])


@functools.cache
def _async_inputs(name: str) -> dict:
    from ptxspec.conformance.silicon import async_device

    plan, _ = async_round()
    return async_device.inputs(next(e for e in plan["forms"] if e["name"] == name))


def _changed_run(before: bytes, after: bytes) -> str | None:
    """The first run of bytes that differ, as ``bytes a-b: before -> after`` (at most
    :data:`SHOWN_BYTES` of it shown), or None."""
    changed = [i for i, (x, y) in enumerate(zip(before, after)) if x != y]
    if not changed:
        return None
    start = changed[0]
    end = start
    while end + 1 < len(before) and end + 1 in changed:
        end += 1
    shown = min(end, start + SHOWN_BYTES - 1)
    more = " ..." if shown < end else ""
    return f"bytes {start:#x}-{end:#x}: {_bytes_text(before[start : shown + 1])}{more} → {_bytes_text(after[start : shown + 1])}{more}"


def async_row(entry: dict, i: int) -> Checked:
    """Record ``i`` of an async-round copy form as its replay rebuilds it
    (:func:`ptxspec.conformance.silicon.async_campaign.replay_form`): both CTAs' shared regions, the
    global region and whether each CTA's mbarrier phase 0 completed, compared."""
    from ptxspec.conformance.silicon import async_campaign, async_device
    from ptxspec.semantics import mbarrier
    from ptxspec.semantics.instructions import as_form, execute
    from ptxspec.semantics.state import AddressMap, Segment, State

    region = async_device.REGION
    _, data = async_round()
    name = entry["name"]
    given = _async_inputs(name)
    out, global_after = data[f"{name}_out"], data[f"{name}_changed"] ^ given["global"]
    offsets = [async_campaign._u64(out[i, r], region + 8) & 0xFFFFFF for r in range(2)]
    base = async_campaign._u64(out[i, 0], region + 16)
    tx = given["params"][i, 4:6]
    shared = [async_campaign._shared(offsets[r], given["shared"][i, r].tobytes(), int(tx[r])) for r in range(2)]
    state = State(
        shared=shared[0], global_memory=Segment(base, given["global"][i].tobytes()), cluster=((1, shared[1]),), addresses=AddressMap(cta_rank=0, cluster_ctas=2)
    )
    sources = async_campaign._sources(entry, out[i, 0], given["params"][i], given["values"][i])
    where = f"async round {name} record {i + 1}"
    text = async_campaign._text(entry)
    try:
        new = execute(text, sources, "sm_90", state=state).state
    except Exception as error:  # noqa: BLE001
        return Checked(entry["instruction"], "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",))
    images = [new.shared, dict(new.cluster)[1]]
    regions = []  # (what, before, ptxspec's after, the chip's after)
    for r in range(2):
        regions.append(
            (
                f"CTA {r}'s shared region",
                given["shared"][i, r].tobytes(),
                images[r][offsets[r] : offsets[r] + region],
                (out[i, r, :region] ^ given["shared"][i, r]).tobytes(),
            )
        )
    regions.append(("the global region", given["global"][i].tobytes(), new.global_memory.read(base, region), global_after[i].tobytes()))
    problems = [f"{where}: {what} is {chip.hex()} on the chip, ptxspec leaves {mine.hex()}" for what, _, mine, chip in regions if mine != chip]
    phases = []
    for r in range(2):
        at = offsets[r] + async_device.MBAR_OFFSET
        completed = mbarrier.test_wait(mbarrier.MbarrierState.decode(int.from_bytes(images[r][at : at + 8], "little")), 0)
        chip = bool(out[i, r, region])
        phases.append((completed, chip))
        if completed != chip:
            problems.append(
                f"{where}: CTA {r}'s phase 0 {'completed' if chip else 'did not complete'} on the chip, ptxspec says it {'did' if completed else 'did not'}"
            )

    def summary(which: int) -> str:
        runs = [f"{what} {run}" for what, before, *afters in regions if (run := _changed_run(before, afters[which]))]
        done = ", ".join(f"CTA {r} {'complete' if p[which] else 'not complete'}" for r, p in enumerate(phases))
        return "; ".join([*(runs[:2] or ["no byte changed"]), f"mbarrier phase 0: {done}"])

    operands = ", ".join(f"{o.name} = {v:#x}" for o, v in zip(as_form(text).sources, sources))
    return Checked(
        entry["instruction"],
        operands,
        summary(0),
        summary(1),
        f"recorded on an {chip_of('meta-async.json')} (async round, {name}, record {i + 1} of {len(out)}, a cluster of two CTAs); "
        f"both CTAs' {region}-byte shared regions, the {region}-byte global region and both mbarriers' phase completion compared",
        tuple(problems),
    )


def async_examples(family_key: str) -> list[Checked]:
    """Record 1 of up to :data:`ASYNC_ENTRIES_PER_FAMILY` recorded forms of the family (the edge
    values of the copied elements are spread over every record, :func:`async_device.element_bytes`)."""
    entries = async_entries_by_family().get(family_key, [])
    return [async_row(entry, 0) for entry in _choose_entries(entries, (), ASYNC_ENTRIES_PER_FAMILY)]


#: How many steps of an mbarrier program a row shows (every step of it is checked).
SHOWN_STEPS = 6


@functools.cache
def _program_families() -> dict[str, str]:
    """Each program operation's catalogue family (mbarrier.arrive with a count is
    ``mbarrier.arrive.count``), and the two probes recorded after every step."""
    from ptxspec.conformance.silicon import async_campaign
    from ptxspec.spec.catalogue import parse

    found = {name: parse(line.rstrip(";")).family.key for name, line in async_campaign.PROGRAM_LINES.items()}
    found["pending_count"] = parse("mbarrier.pending_count.b64 %pend, %st").family.key
    found["test_wait.parity"] = parse("mbarrier.test_wait.parity.shared::cta.b64 %w, [%m], %parity").family.key
    return found


def program_row(index: int, upto: int) -> Checked:
    """Steps 0..``upto`` of recorded mbarrier program ``index``, each through the registered
    mbarrier instructions (as :func:`ptxspec.conformance.silicon.async_campaign.replay_program`):
    after each, the pending count of its token and test_wait.parity 0 and 1, against the chip's."""
    from ptxspec.conformance.silicon import async_campaign, async_device
    from ptxspec.semantics.instructions import execute
    from ptxspec.semantics.state import State

    plan, data = async_round()
    steps = plan["programs"][index]
    recorded = data["mbarrier_program"][index]
    names = {code: name for name, code in async_campaign.OPS.items()}
    state, address = State(shared=bytes(16)), 8
    problems, shown_steps, mine_last, chip_last = [], [], "", ""
    for k, (code, arg) in enumerate(steps[: upto + 1]):
        name = names[code]
        outcome = execute(async_campaign.PROGRAM_LINES[name].rstrip(";"), [address, arg], "sm_90", state=state)
        state = outcome.state
        pending = async_device.NO_TOKEN
        if name in async_campaign.TOKENS:
            (pending,) = execute("mbarrier.pending_count.b64 %pend, %st", [outcome.results[0]], "sm_90", state=state).results
        waits = [execute("mbarrier.test_wait.parity.shared::cta.b64 %w, [%m], %parity", [address, p], "sm_90", state=state).results[0] for p in (0, 1)]
        want = int(pending) | int(waits[0]) << 32 | int(waits[1]) << 33
        got = int(recorded[k])
        if want != got:
            problems.append(f"mbarrier program {index + 1} step {k + 1} ({name} {arg}): the chip gave {got:#x}, ptxspec {want:#x}")
        shown_steps.append(f"{name} {arg}")
        mine_last, chip_last = _program_text(want), _program_text(got)
    listed = shown_steps if len(shown_steps) <= SHOWN_STEPS else [*shown_steps[:2], "...", *shown_steps[-(SHOWN_STEPS - 3) :]]
    return Checked(
        "; ".join(dict.fromkeys(n.split(" ")[0] for n in shown_steps)) + " (one mbarrier object)",
        f"program {index + 1}, steps: " + "; ".join(listed),
        f"after step {len(shown_steps)}: {mine_last}",
        f"after step {len(shown_steps)}: {chip_last}",
        f"recorded on an {chip_of('meta-async.json')} (async round, mbarrier program {index + 1}); after every one of its {len(shown_steps)} steps the "
        "token's pending count and test_wait.parity 0 and 1 compared",
        tuple(problems),
    )


def _program_text(word: int) -> str:
    from ptxspec.conformance.silicon import async_device

    pending = word & 0xFFFFFFFF
    count = "no token" if pending == async_device.NO_TOKEN else f"pending count {pending}"
    return f"{count}, test_wait.parity 0 → {word >> 32 & 1}, parity 1 → {word >> 33 & 1}"


def program_examples(family_key: str) -> list[Checked]:
    """The first recorded mbarrier program that uses the family's operation, up to its first use
    (the probes pending_count and test_wait.parity: the first program's first steps)."""
    from ptxspec.conformance.silicon import async_campaign

    operations = [name for name, key in _program_families().items() if key == family_key]
    if not operations:
        return []
    plan, _ = async_round()
    names = {code: name for name, code in async_campaign.OPS.items()}
    if operations[0] in ("pending_count", "test_wait.parity"):
        return [program_row(0, SHOWN_STEPS - 1)]
    for index, steps in enumerate(plan["programs"]):
        for k, (code, _) in enumerate(steps):
            if names[code] in operations and k > 0:
                return [program_row(index, k)]
            if names[code] in operations and k == 0:  # init: a program's first step, and its next ones
                return [program_row(index, 3)]
    return []


# ---------------------------------------------------------------------------------------------
# The movement round: ldmatrix, stmatrix, movmatrix
# ---------------------------------------------------------------------------------------------


@functools.cache
def movement_round():
    from ptxspec.conformance.silicon import movement_campaign

    return movement_campaign.load(_data_dir())


@functools.cache
def movement_by_family() -> dict[str, list]:
    _, recordings = movement_round()
    return _by_family((rec.entry["form"], rec) for rec in recordings.values())


#: Movement forms shown first: a transposing load of four matrices, a transposing store.
PREFERRED_MOVEMENT = ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16")


def movement_row(rec, execution: int = 0) -> Checked:
    """Execution ``execution`` of a movement-round form through the semantics
    (:func:`ptxspec.conformance.silicon.movement_campaign.expected`): every register of the 32
    lanes (ldmatrix, movmatrix) or every byte of the image (stmatrix) compared."""
    from ptxspec.conformance.silicon import movement_campaign

    entry = rec.entry
    want = np.asarray(movement_campaign.expected(entry, rec.known, execution)).astype(np.uint64)
    got = rec.whole[execution].astype(np.uint64)
    bad = np.argwhere(want != got)
    problems = tuple(f"movement round {entry['name']} execution {execution + 1}: {len(bad)} value(s) differ, first at {bad[0].tolist()}" for _ in bad[:1])
    meta, _ = movement_round()
    if entry["opcode"] == "stmatrix":
        before = rec.known["image"][execution].tobytes()
        mine = _changed_run(before, want.astype(np.uint8).tobytes()) or "no byte changed"
        chip = _changed_run(before, got.astype(np.uint8).tobytes()) or "no byte changed"
        compared = f"all {len(before)} bytes of the shared-memory image compared"
        inputs = f"row addresses of lanes 0-3: {', '.join(hex(int(a)) for a in rec.known['addresses'][execution][:4])}; registers of lane 0: {', '.join(hex(int(r)) for r in rec.known['registers'][execution][0])}"
        mine_text, chip_text = f"image {mine}", f"image {chip}"
    else:
        lanes = ", ".join(f"lane {lane}: {hex_of(int(want[lane, 0]), 32)}" for lane in SHOWN_LANES)
        chip_lanes = ", ".join(f"lane {lane}: {hex_of(int(got[lane, 0]), 32)}" for lane in SHOWN_LANES)
        compared = f"all 32 lanes x {want.shape[1]} register(s) compared, register 0 of lanes {', '.join(map(str, SHOWN_LANES))} shown"
        if entry["opcode"] == "ldmatrix":
            inputs = f"a random {entry['image_bytes']}-byte shared-memory image; row addresses of lanes 0-3: {', '.join(hex(int(a)) for a in rec.known['addresses'][execution][:4])}"
        else:
            inputs = f"register of lanes 0-3: {', '.join(hex(int(r)) for r in rec.known['registers'][execution][:4, 0])}"
        mine_text, chip_text = lanes, chip_lanes
    return Checked(
        entry["form"],
        inputs,
        mine_text,
        chip_text,
        f"recorded on an {meta['device']['gpu'].replace('NVIDIA ', '')} (movement round, {entry['name']}, execution {execution + 1}); {compared}",
        problems,
    )


def movement_examples(family_key: str) -> list[Checked]:
    recordings = movement_by_family().get(family_key, [])
    preferred = [r for name in PREFERRED_MOVEMENT for r in recordings if r.entry["form"] == name]
    return [movement_row(rec) for rec in (preferred or recordings)[:1]]


# ---------------------------------------------------------------------------------------------
# The TMA rounds: cp.async.bulk.tensor (tile mode) and tensormap.replace
# ---------------------------------------------------------------------------------------------


@functools.cache
def tma_round(round_name: str):
    import json

    from ptxspec.conformance.silicon import tma_device

    files = tma_device.files(round_name)
    plan = json.loads((_data_dir() / files["plan"]).read_text())
    return plan, np.load(_data_dir() / files["output"])


def _crosses(case: dict) -> bool:
    """Whether the box starts inside the tensor and reaches past it (§5.5.3.3: its out-of-bound
    elements are filled on a load, not written on a store)."""
    inside = all(0 <= x < g for x, g in zip(case["coords"], case["global_dims"]))
    return inside and any(x + b > g for x, b, g in zip(case["coords"], case["box_dims"], case["global_dims"]))


def _tma_case(round_name: str, want) -> dict | None:
    """The first recorded case of a round that neither load nor store faulted on and ``want`` picks."""
    plan, data = tma_round(round_name)
    return next((c for c in plan["cases"] if f"{c['name']}_load_fault" not in data and f"{c['name']}_store_fault" not in data and want(c)), None)


def _tma_map_text(case: dict) -> str:
    return (
        f"tensor map: .{case['element_type']}, dims {case['global_dims']}, box {case['box_dims']}, element strides {case['element_strides']}, "
        f"swizzle {case['swizzle']}, out-of-bound fill {case['oob_fill']}; coordinates {case['coords']}"
    )


def _box_text(image: bytes, at: int, completed: bool | None) -> str:
    """Box bytes 0-7 and the 8 from ``at`` (the first the fill did not write), and the phase."""
    parts = [f"box bytes 0-7: {_bytes_text(image[:8])}"]
    if at:
        parts.append(f"bytes {at}-{at + 7}: {_bytes_text(image[at : at + 8])}")
    if completed is not None:
        parts.append(f"mbarrier phase {'complete' if completed else 'not complete'}")
    return "; ".join(parts)


def tma_row(round_name: str, case: dict, what: str, store: bool = False) -> Checked:
    """One recorded TMA case, replayed by :func:`ptxspec.conformance.silicon.tma_campaign.replay_case`
    (every byte of the box in shared memory and the mbarrier phase after the load, every byte of the
    tensor after the store); the row shows a few of those bytes as ptxspec and the chip left them."""
    from ptxspec.conformance.silicon import tma_campaign, tma_device
    from ptxspec.semantics import mbarrier
    from ptxspec.semantics.instructions import execute
    from ptxspec.semantics.state import Segment, State

    plan, data = tma_round(round_name)
    name = case["name"]
    replayed = tma_campaign.replay_case(case, data)
    problems = [f"{round_name} {name}: {m}" for m in replayed.mismatches]
    if replayed.not_modelled or replayed.unrecorded:
        problems.append(f"{round_name} {name}: not compared ({replayed.not_modelled or replayed.unrecorded})")
    address, shared_at = (int(x) for x in data[f"{name}_address"])
    shared_at = (shared_at & 0xFFFFFF) or 1024
    rank = tma_campaign.loaded_rank(case)
    tensor = tma_device.tensor_bytes(case).tobytes()
    maps = ((0x100, tma_campaign.tensor_map_of(case, address)),)
    coords = [c % (1 << 32) for c in case["coords"]]
    if store:
        text = f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group"
        source = tma_device.store_bytes(case).tobytes()
        after = execute(
            text, [0x100, *coords, shared_at], "sm_90", state=State(shared=bytes(shared_at) + source, global_memory=Segment(address, tensor), tensor_maps=maps)
        ).state
        mine = after.global_memory.read(address, len(tensor))
        chip = data[f"{name}_global"].tobytes()
        shown = (f"tensor {_changed_run(tensor, mine) or 'unchanged'}", f"tensor {_changed_run(tensor, chip) or 'unchanged'}")
        compared = "every byte of the tensor after the store compared (and the load of the same box)"
    else:
        text = f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        barrier_at = shared_at + tma_device.SMEM
        _, armed = mbarrier.arrive(mbarrier.init(1), tx_count=case["box_bytes"])
        before = bytes([tma_device.MARK]) * barrier_at + armed.encode().to_bytes(8, "little")
        state = State(shared=before, global_memory=Segment(address, tensor), tensor_maps=maps)
        if "replace" in case:
            state = tma_campaign._replaced_state(case, state, address)
        after = execute(text, [shared_at, 0x100, *coords, barrier_at], "sm_90", state=state).state
        box = case["box_bytes"]
        mine, chip = after.shared[shared_at : shared_at + box], data[f"{name}_shared"].tobytes()[:box]
        fill = chip.find(b"\xf7\x7f") if case["oob_fill"] != "zero" else -1  # the OOB-NaN, 0x7ff7 in every 16 bits
        at = (fill if fill > 0 else next((i for i in range(box) if chip[i] != chip[0]), 0)) // 8 * 8
        done = mbarrier.MbarrierState.decode(int.from_bytes(after.shared[barrier_at : barrier_at + 8], "little")).phase_parity == 1
        shown = (_box_text(mine, at, done), _box_text(chip, at, bool(data[f"{name}_done"][0])))
        compared = "every byte of the box in shared memory and the mbarrier phase compared" + (
            "" if "replace" in case else ", and every byte of the tensor after a store of the box"
        )
    replace = case.get("replace")
    form = f"tensormap.replace.tile.{replace['field']}.global.b1024.{replace['type']}" if replace else text
    inputs = _tma_map_text(case) + (f"; then tensormap.replace of {replace['field']} with {replace['value']:#x}, then the load" if replace else "")
    return Checked(
        form,
        inputs,
        shown[0],
        shown[1],
        f"recorded on an {chip_of(f'meta-{round_name}.json')} ({round_name} round, {name}); {what}; replayed by tma_campaign.replay_case: {compared}",
        tuple(problems),
    )


def tma_examples(family_key: str) -> list[Checked]:
    """A load whose box reaches past the tensor with NaN fill, the store of such a box back, and a
    tensormap.replace of each field family."""
    from ptxspec.spec.catalogue import parse

    if family_key == "cp.async.bulk.tensor.global_to_shared_cluster":
        case = _tma_case("tma", lambda c: c["oob_fill"] != "zero" and _crosses(c))
        return [tma_row("tma", case, "a box past the tensor's bounds: those elements are filled with the OOB-NaN (§5.5.3.3)")] if case else []
    if family_key == "cp.async.bulk.tensor.shared_to_global":
        case = _tma_case("tma", _crosses)
        return [tma_row("tma", case, "a box past the tensor's upper bounds: only the elements inside are written (§5.5.3.3)", store=True)] if case else []
    if family_key.startswith("tensormap.replace.tile."):
        for round_name in ("tma-replace", "tma-replace-rank", "tma-replace-interleave"):

            def picks(c: dict) -> bool:
                return parse(f"tensormap.replace.tile.{c['replace']['field']}.global.b1024.{c['replace']['type']}").family.key == family_key and not _crosses(c)

            case = _tma_case(round_name, picks)
            if case:
                return [tma_row(round_name, case, f"the map's {case['replace']['field']} replaced in place before the load")]
    return []


# ---------------------------------------------------------------------------------------------
# The mma and mma.sp rounds (§9.7.14.5-6) and the wgmma rounds (§9.7.15.5-6)
# ---------------------------------------------------------------------------------------------

#: Of an mma's D, the registers of lane 0 a row shows (every register of every lane is checked).
SHOWN_REGISTERS = 4
#: The recorded instances examined when choosing the one a page shows (the designed probes first).
CANDIDATE_MMA = 4096


def _destination_masks(d: np.ndarray, types: list[str]) -> tuple[np.ndarray, int]:
    """Per recorded matrix instance (``d``: ``[instances, threads, registers]``), the edge classes
    of any of its D registers: NaN, infinities, subnormals, saturated integers."""
    instances = d.shape[0]
    masks = np.zeros(instances, np.uint64)
    weighty = 0
    for r, type_name in enumerate(types):
        m, w = class_masks([(d[:, :, r].reshape(-1), type_name)])
        masks |= np.bitwise_or.reduce(m.reshape(instances, -1), axis=1)
        weighty |= w
    return masks, weighty


def _register_texts(values, types: list[str], names: list[str]) -> str:
    return ", ".join(
        f"{n} = {hex_of(v, 64 if t.endswith('64') else 32) if isinstance(v, int) else v.describe()}"
        for n, v, t in list(zip(names, values, types))[:SHOWN_REGISTERS]
    )


def matrix_row(form, sources: tuple, recorded: np.ndarray, where: str, chip: str, what: str, evaluate_d) -> Checked:
    """One recorded matrix instance: D of every thread (``recorded``: ``[threads, registers]``)
    against ptxspec's sm_90 result, and inside the set the manual allows (profile spec)."""
    names = [o.name for o in form.destinations]
    types = [o.type for o in form.destinations]
    try:
        mine, allowed = evaluate_d("sm_90"), evaluate_d("spec")
    except Exception as error:  # noqa: BLE001
        return Checked(form.text, "", "", "", "", (f"{where}: ptxspec raises {type(error).__name__}: {error}",))
    threads, registers = recorded.shape
    observed = [tuple(int(x) for x in recorded[:, r]) for r in range(registers)]
    problems = []
    for r, seen in enumerate(observed):
        if seen not in mine[r]:
            lane = next(t for t in range(threads) if not _member(mine[r].lanes[t], seen[t]))
            problems.append(f"{where}: {names[r]} of thread {lane} recorded {seen[lane]:#x}, ptxspec (sm_90) gives {_described(mine[r].lanes[lane])}")
    outside = [r for r, seen in enumerate(observed) if seen not in allowed[r]]
    allowed_text = ""
    if outside:
        choice = _matrix_departure(evaluate_d, observed)
        r = outside[0]
        lane = next(t for t in range(threads) if not _member(allowed[r].lanes[t], observed[r][t]))
        if choice is None:
            problems.append(
                f"{where}: {names[r]} of thread {lane} recorded {observed[r][lane]:#x}, outside the manual's set {_described(allowed[r].lanes[lane])}"
            )
        else:
            allowed_text = (
                f"; {len(outside)} of the {registers} D registers lie outside the set the manual allows (thread {lane}'s {names[r]}: "
                f"{observed[r][lane]:#x}, the manual's reading {_described(allowed[r].lanes[lane])}): the chip departs from it, as the sm_90 profile's {choice} records"
            )
    first = allowed[0].lanes[0]
    if not allowed_text:
        allowed_text = f"; for thread 0's {names[0]} the manual allows {'exactly this' if isinstance(first, int) else _described(first)}"
    return Checked(
        form.text,
        what,
        "thread 0: " + _register_texts([mine[r].lanes[0] for r in range(registers)], types, names),
        "thread 0: " + _register_texts([int(recorded[0, r]) for r in range(registers)], types, names),
        f"recorded on an {chip} ({where}); all {threads} threads x {registers} D registers compared{allowed_text}",
        tuple(problems),
    )


def _matrix_departure(evaluate_d, observed: list[tuple]) -> str | None:
    """The one choice of the sm_90 profile that, made alone on top of the manual, gives every
    recorded D register of a matrix instance (a documented departure), or None. The datapath
    choices (what a matrix instruction's arithmetic is) are tried first: each try evaluates the
    whole instance."""
    for name, profile in sorted(_departures(), key=lambda choice: "datapath" not in choice[0]):
        try:
            result = evaluate_d(profile)
        except Exception:  # noqa: BLE001 - a choice that does not apply to this form
            continue
        if all(seen in r for seen, r in zip(observed, result)):
            return name
    return None


def _member(result, value: int) -> bool:
    from ptxspec.semantics.results import contains

    return contains(result, value)


def _described(result) -> str:
    return f"{result:#x}" if isinstance(result, int) else result.describe()


@functools.cache
def mma_records_by_family() -> dict[str, tuple]:
    """Family key -> (round, record) of its first recorded combination, rounds in order; only the
    entries shown are loaded (the digest rounds regenerate their random inputs on load)."""
    from ptxspec.conformance.silicon import mma_campaign
    from ptxspec.conformance.silicon.campaign import read_json
    from ptxspec.spec.catalogue import parse

    found: dict[str, tuple] = {}
    for round_ in (mma_campaign.ROUND_1, mma_campaign.SPARSE_ROUND_1, mma_campaign.ROUND_2, mma_campaign.SPARSE_ROUND_2):
        meta = read_json(_data_dir() / f"meta-{round_.recording}.json")
        wanted: dict[str, str] = {}
        for entry in meta["combinations"]:
            combo = mma_campaign.combination_named(entry.get("combination", entry["name"]))
            key = parse(round_.instruction(combo)).family.key
            if key not in found and key not in wanted:
                wanted[key] = entry["name"]
        if wanted:
            records = {r.name: r for r in mma_campaign.load(_data_dir(), round_, names=set(wanted.values()))}
            found.update({key: (round_, records[name]) for key, name in wanted.items()})
    return found


def mma_examples(family_key: str) -> list[Checked]:
    """One recorded mma (or mma.sp) of the family: the designed probe whose D holds the most edge
    classes (NaN, infinities, subnormals, saturated integers), through
    :func:`ptxspec.semantics.instructions.evaluate` with the 32 lanes' registers."""
    from ptxspec.semantics.instructions import as_form, evaluate

    found = mma_records_by_family().get(family_key)
    if found is None:
        return []
    round_, record = found
    rec = getattr(record, "recording", record)  # a digest round's record holds the full one
    form = as_form(round_.instruction(rec.combination))
    stored = rec.d.shape[0]
    candidates = min(stored, max(rec.probes, 1), CANDIDATE_MMA)
    masks, weighty = _destination_masks(rec.d[:candidates], [o.type for o in form.destinations])
    (i,) = pick(masks, 1, 0, weighty)

    def lanes(x: np.ndarray) -> list[tuple]:
        return [tuple(int(v) for v in x[:, k]) for k in range(x.shape[1])]

    sources = lanes(rec.a[i]) + lanes(rec.b[i]) + lanes(rec.c[i])
    if round_.sparse:
        sources += [tuple(int(v) for v in rec.e[i]), rec.selector]
    kind = "designed probe" if i < rec.probes else "random"
    what = (
        f"{kind} mma {i + 1} of the recording (A, B, C registers of 32 lanes"
        + (f"; metadata e, sparsity selector {rec.selector}" if round_.sparse else "")
        + ")"
    )
    return [
        matrix_row(
            form,
            tuple(sources),
            rec.d[i],
            f"{round_.name} round, {rec.name}, mma {i + 1}",
            chip_of(f"meta-{round_.recording}.json"),
            what,
            lambda profile: evaluate(form, tuple(sources), profile),
        )
    ]


@functools.cache
def wgmma_records_by_family() -> dict[str, tuple]:
    """Family key -> (part, record) of its recorded kernel with the narrowest N."""
    from ptxspec.conformance.silicon import wgmma_campaign

    found: dict[str, tuple] = {}
    for part in wgmma_campaign.PARTS:
        if not (_data_dir() / f"meta-{wgmma_campaign.part_prefix(part)}.json").exists():
            continue
        for rec in wgmma_campaign.load(_data_dir(), part):
            key = wgmma_campaign.form_of(rec).family.key
            # the narrowest recorded N with D stored: the smallest instance to evaluate twice
            if rec.stored and (key not in found or rec.entry["n"] < found[key][1].entry["n"]):
                found[key] = (part, rec)
    return found


def wgmma_examples(family_key: str) -> list[Checked]:
    """One recorded wgmma.mma_async of the family (the stored instance whose D holds the most edge
    classes), through :func:`ptxspec.semantics.wgmma.wgmma_mma_async` with the shared-memory image,
    descriptors and accumulator registers of the 128 threads the chip had."""
    from ptxspec.conformance.silicon import wgmma_campaign

    found = wgmma_records_by_family().get(family_key)
    if found is None:
        return []
    part, rec = found
    e = rec.entry
    form = wgmma_campaign.form_of(rec)
    candidates = min(rec.stored, CANDIDATE_MMA)
    d_type = "f32" if e["dtype"] == "f32" else "b32"  # .f16 D: two halves a register (their classes as one word)
    masks, weighty = _destination_masks(rec.d[:candidates], [d_type] * rec.d.shape[2])
    (i,) = pick(masks, 1, 0, weighty)

    def evaluate_d(profile) -> list:
        from ptxspec.semantics.warp import WarpResult

        registers = np.asarray(wgmma_campaign.replay(rec, i, profile).registers, dtype=object)
        return [WarpResult(tuple(int(x) if isinstance(x, (int, np.integer)) else x for x in registers[:, r]), 32) for r in range(registers.shape[1])]

    what = (
        f"instance {i + 1} of the recording: a {e['image_bytes']}-byte shared-memory image, "
        + ("A from registers" if e["a_registers"] else "A and B by matrix descriptors")
        + f", scale-d {int(rec.scale[i])}, imm-scale-a {e['scale_a']}, imm-scale-b {e['scale_b']}"
    )
    name = "wgmma" + (f"-{part}" if part else "")
    return [
        _wgmma_row(form, rec.d[i], f"{name} round, {rec.name}, instance {i + 1}", chip_of(f"meta-{wgmma_campaign.part_prefix(part)}.json"), what, evaluate_d)
    ]


def _wgmma_row(form, recorded, where, chip, what, evaluate_d) -> Checked:
    """:func:`matrix_row` for wgmma, whose D registers are named ``d`` in the form (one operand of
    many registers): the rows name them d[0], d[1], ..."""
    import attrs as _attrs

    destination = form.destinations[0]
    proxy = _RegisterNames(form.text, tuple(_attrs.evolve(destination, name=f"d[{r}]") for r in range(recorded.shape[1])))
    return matrix_row(proxy, (), recorded, where, chip, what, evaluate_d)


@attrs.frozen
class _RegisterNames:
    """A form's text and one destination per D register (what :func:`matrix_row` reads)."""

    text: str
    destinations: tuple


# ---------------------------------------------------------------------------------------------
# Every source, by family
# ---------------------------------------------------------------------------------------------

SOURCES: list[Callable[[str], list[Checked]]] = [
    scalar_examples,
    memory_examples,
    address_examples,
    createpolicy_examples,
    async_examples,
    program_examples,
    movement_examples,
    tma_examples,
    mma_examples,
    wgmma_examples,
]


def recorded_examples(family_key: str) -> list[Checked]:
    """Every example checked against a recording that the page of ``family_key`` shows."""
    out: list[Checked] = []
    for source in SOURCES:
        out.extend(source(family_key))
    return out
