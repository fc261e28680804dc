"""``ptxspec check-vectors``: replay golden vectors from any source and say which ones the
specification allows.

A vector file is JSON Lines, one vector per line (the schema of ``ptxspec vectors``)::

    {"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"], "outputs": ["0x40000000"]}

* ``inputs``: the source operands in the form's operand order, each a hex bit pattern of its
  register width (``0x`` and exactly width/4 digits, rounded up: predicates and the carry flag are
  ``"0x0"``/``"0x1"``). A warp-level collective takes a per-lane operand as a list of 32 hex strings
  (lane 0 first; one string is the same value in every lane; ``ptxspec eval --json``'s
  comma-separated text is accepted too), and may leave out the last operand ``membermask``
  (``0xffffffff``). Optional ``"active"``: the executing lanes of a warp-level form.
* ``outputs``: one per destination operand: the observed bits (a hex string; a list of 32 for a
  warp-level form), or an allowed set as ``ptxspec eval --json`` prints one
  (``{"kind": "any-nan", "format": "f32"}``), which must then be the set the profile gives.
* optional ``allowed``: the allowed set the writer claims for the destination (one object, or a
  list with one entry per destination, ``null`` for a fixed one), in ``eval --json``'s encoding or
  the short forms ``{"interval": ["0x..", "0x.."]}`` and ``{"any_nan": true}``. It is compared
  with the profile's set when the vector's ``"profile"`` (default ``spec``) is the profile checked.
* other fields (``"where"``, ``"profile"``) are informational.

A hex output is checked with :func:`~ptxspec.semantics.instructions.check`'s rule: membership in
the set of results the profile allows (bit-exact for a fixed result, inside the interval for an
``.approx`` bound, any NaN for an unspecified NaN). Forms with a batched fast path
(:mod:`ptxspec.semantics.batch`) are checked a block at a time; every other form vector by vector.

Exit status: 0 when every supported vector matches, 1 when one does not, 2 on bad input (a located
``file:line:column`` message). A vector whose instruction the catalogue does not know (or whose
semantics is not implemented yet) is counted as unsupported and reported; it does not stop the run.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterable, Sequence
from fractions import Fraction

import attrs
import click

from ptxspec.spec.errors import Location, OperandError, PtxSpecError

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_SCHEMA = '{"instr": "...", "inputs": ["0x...", ...], "outputs": ["0x...", ...]}'
WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF


@attrs.frozen(eq=False)
class _FormInfo:
    """A form and its operands, looked up once per instruction text (the catalogue builds
    ``form.sources`` anew on every access)."""

    form: object
    warp: bool
    sources: tuple
    destinations: tuple
    source_widths: tuple[int, ...]
    destination_widths: tuple[int, ...]
    inputs_pattern: re.Pattern = attrs.field(init=False)
    outputs_pattern: re.Pattern = attrs.field(init=False)
    odd_widths: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # The common line, all hex strings of the right widths, is recognised by one regular
        # expression over the joined operands; anything else takes the checking path.
        def pattern(widths):
            return re.compile(",".join(f"0x[0-9a-fA-F]{{{max(1, (w + 3) // 4)}}}" for w in widths))

        object.__setattr__(self, "inputs_pattern", pattern(self.source_widths))
        object.__setattr__(self, "outputs_pattern", pattern(self.destination_widths))
        object.__setattr__(self, "odd_widths", any(w % 4 for w in self.source_widths + self.destination_widths))


# ---------------------------------------------------------------------------------------------
# What a vector file holds
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class Vector:
    """One parsed line: the form, its source bits, what the writer observed (bits, 32 lane bits,
    or a claimed allowed set as a JSON object) and the allowed sets it claims, per destination."""

    info: _FormInfo
    sources: tuple
    outputs: tuple
    allowed: tuple | None
    active: int | None
    where: Location

    @property
    def form(self):
        return self.info.form


@attrs.frozen
class Unsupported:
    """A vector whose instruction ptxspec cannot check, and why."""

    instr: str
    reason: str
    where: Location


@attrs.frozen
class Mismatch:
    vector: Vector
    expected: tuple
    why: str


@attrs.define
class Counts:
    checked: int = 0
    matched: int = 0
    mismatched: int = 0


@attrs.define
class Summary:
    """The outcome of checking one or more files."""

    profile: str
    by_instr: dict[str, Counts] = attrs.field(factory=dict)
    unsupported: list[Unsupported] = attrs.field(factory=list)
    mismatches: list[Mismatch] = attrs.field(factory=list)

    @property
    def checked(self) -> int:
        return sum(c.checked for c in self.by_instr.values())

    @property
    def matched(self) -> int:
        return sum(c.matched for c in self.by_instr.values())

    @property
    def mismatched(self) -> int:
        return sum(c.mismatched for c in self.by_instr.values())

    @property
    def exit_code(self) -> int:
        return EXIT_MISMATCH if self.mismatched else EXIT_OK

    def to_json(self) -> dict:
        unsupported: dict[str, int] = {}
        for u in self.unsupported:
            unsupported[u.instr] = unsupported.get(u.instr, 0) + 1
        return {
            "checked": self.checked,
            "matched": self.matched,
            "mismatched": self.mismatched,
            "unsupported": len(self.unsupported),
            "by_instr": {k: attrs.asdict(c) for k, c in sorted(self.by_instr.items())},
            "unsupported_by_instr": dict(sorted(unsupported.items())),
        }


# ---------------------------------------------------------------------------------------------
# Reading: every problem is a located error naming what was expected
# ---------------------------------------------------------------------------------------------




def _form_info(instr: str) -> _FormInfo | str:
    """The form of ``instr`` and its operand widths, or why ptxspec cannot check it."""
    from ptxspec.conformance.cli import is_warp_form
    from ptxspec.semantics.instructions import semantic_function
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.types import register_bits

    try:
        form = parse(instr)
        fn = semantic_function(form)
    except PtxSpecError as error:
        return error.message
    del fn
    sources, destinations = tuple(form.sources), tuple(form.destinations)
    return _FormInfo(
        form,
        is_warp_form(form),
        sources,
        destinations,
        tuple(register_bits(o.type) for o in sources),
        tuple(register_bits(o.type) for o in destinations),
    )


def _column(raw: str, key: str, index: int | None = None, lane: int | None = None) -> int:
    """The 1-based column of field ``key`` in the line ``raw``: of its element ``index`` (and of
    that element's ``lane``) where the text can be found, else of the key."""
    start = raw.find(f'"{key}"')
    if start == -1:
        return 1
    if index is None:
        return start + 1
    try:
        value = json.loads(raw)[key]
        pos = raw.index("[", start) + 1
        for j, element in enumerate(value[: index + 1]):
            nested = isinstance(element, list)
            found = raw.find("[" if nested else json.dumps(element), pos)
            if found == -1:
                return start + 1
            pos = found if j == index else (raw.index("]", found) + 1 if nested else found + len(json.dumps(element)))
        if lane is not None and isinstance(value[index], list):
            for j, element in enumerate(value[index][: lane + 1]):
                pos = raw.index(json.dumps(element), pos + 1) + (0 if j == lane else len(json.dumps(element)) - 1)
        return pos + 1
    except (ValueError, KeyError, TypeError, IndexError):
        return start + 1


def _bits(text, width: int, what: str, where) -> int:
    """A hex bit pattern of a ``width``-bit register: ``0x`` and exactly width/4 digits."""
    digits = max(1, (width + 3) // 4)
    if not isinstance(text, str) or _HEX.fullmatch(text) is None:
        raise OperandError(f"{what}: expected a hex string '0x' + {digits} digit(s) (a {width}-bit register), got {json.dumps(text)}", where=where())
    if len(text) != digits + 2:
        raise OperandError(f"{what}: expected {digits} hex digit(s) for a {width}-bit register, got {len(text) - 2} in {text!r}", where=where())
    value = int(text, 16)
    if value >> width:
        raise OperandError(f"{what}: {text} does not fit in a {width}-bit register", where=where())
    return value


def _lanes(value, width: int, what: str, where) -> int | tuple[int, ...]:
    """A warp operand: 32 hex strings (a list, or comma-separated text) or one for every lane."""
    if isinstance(value, str) and "," in value:
        value = value.split(",")
    if not isinstance(value, list):
        return _bits(value, width, what, where)
    if len(value) != WARP_SIZE:
        raise OperandError(f"{what}: a warp operand is a list of {WARP_SIZE} lane values (lane 0 first), got {len(value)}", where=where())
    return tuple(_bits(v, width, f"{what}, lane {i}", lambda i=i: where(i)) for i, v in enumerate(value))


def _fast_vector(obj: dict, info: _FormInfo, source: str, number: int) -> Vector | None:
    """The common line parsed quickly: a scalar form, only ``instr``, ``inputs`` and ``outputs``
    (and informational fields), every operand a hex string of its register's width. None when
    anything else is there; :func:`_vector` then checks the line and locates what is wrong."""
    if info.warp or "allowed" in obj or "active" in obj:
        return None
    inputs, outputs = obj["inputs"], obj["outputs"]
    try:
        if info.inputs_pattern.fullmatch(",".join(inputs)) is None or info.outputs_pattern.fullmatch(",".join(outputs)) is None:
            return None
    except TypeError:  # not a list of strings
        return None
    sources = tuple(int(t, 16) for t in inputs)
    observed = tuple(int(t, 16) for t in outputs)
    if info.odd_widths and any(v >> w for v, w in zip(sources + observed, info.source_widths + info.destination_widths)):
        return None
    return Vector(info, sources, observed, None, None, Location(source, number))


def _vector(raw: str, obj: dict, info: _FormInfo, source: str, number: int) -> Vector:
    """Check one vector's operands against its form (count and register width) and parse them."""
    fast = _fast_vector(obj, info, source, number)
    if fast is not None:
        return fast
    form = info.form

    def at(key: str, index: int | None = None):
        return lambda lane=None: Location(source, number, _column(raw, key, index, lane))

    inputs, outputs = obj["inputs"], obj["outputs"]
    for key, value in (("inputs", inputs), ("outputs", outputs)):
        if not isinstance(value, list):
            raise OperandError(f"field {key!r}: expected a list of hex strings, got {json.dumps(value)}", where=at(key)())
    expected = len(info.source_widths)
    omitted_mask = info.warp and info.sources and info.sources[-1].name == "membermask" and len(inputs) == expected - 1
    if len(inputs) != expected and not omitted_mask:
        names = ", ".join(o.name for o in info.sources) or "none"
        raise OperandError(f"{form.text} takes {expected} source operand(s) ({names}), got {len(inputs)}", where=at("inputs")(), section=form.family.section)
    if len(outputs) != len(info.destination_widths):
        names = ", ".join(o.name for o in info.destinations)
        raise OperandError(f"{form.text} has {len(info.destination_widths)} destination operand(s) ({names}), got {len(outputs)} output(s)", where=at("outputs")(), section=form.family.section)
    parse_source = _lanes if info.warp else _bits
    sources = [parse_source(v, w, f"input {k + 1} ({o.name}, .{o.type})", lambda lane=None, k=k: at("inputs", k)(lane))
               for k, (v, w, o) in enumerate(zip(inputs, info.source_widths, info.sources))]
    if omitted_mask:
        sources.append(FULL_MASK)
    observed = []
    for k, (v, w, o) in enumerate(zip(outputs, info.destination_widths, info.destinations)):
        what = f"output {k + 1} ({o.name}, .{o.type})"
        if isinstance(v, dict):
            observed.append(v)
        elif info.warp:
            lanes = _lanes(v, w, what, lambda lane=None, k=k: at("outputs", k)(lane))
            observed.append(lanes if isinstance(lanes, tuple) else (lanes,) * WARP_SIZE)
        else:
            observed.append(_bits(v, w, what, lambda k=k: at("outputs", k)()))
    allowed = obj.get("allowed")
    if allowed is not None:
        if isinstance(allowed, dict):
            if len(outputs) != 1:
                raise OperandError(f"field 'allowed': {form.text} has {len(outputs)} destinations; give a list with one entry (or null) per destination", where=at("allowed")())
            allowed = [allowed]
        if not isinstance(allowed, list) or len(allowed) != len(outputs) or not all(a is None or isinstance(a, dict) for a in allowed):
            raise OperandError(f"field 'allowed': expected an object (one destination) or a list of {len(outputs)} objects or nulls", where=at("allowed")())
        vector_profile = obj.get("profile", "spec")
        if not isinstance(vector_profile, str):
            raise OperandError(f"field 'profile': expected a profile name, got {json.dumps(vector_profile)}", where=at("profile")())
        allowed = (vector_profile, tuple(allowed))
    active = obj.get("active")
    if active is not None:
        if not info.warp:
            raise OperandError(f"field 'active': {form.text} is not a warp-level instruction", where=at("active")())
        active = _bits(active, 32, "field 'active'", lambda: at("active")())
    return Vector(info, tuple(sources), tuple(observed), allowed, active, Location(source, number))


def read_vectors(path: str, on_line=None) -> Iterable[Vector | Unsupported]:
    """The vectors of a JSON Lines file, in order; blank lines are skipped. Raises a located
    :class:`~ptxspec.spec.errors.PtxSpecError` at the first malformed line."""
    source = "<stdin>" if path == "-" else path
    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    except OSError as error:
        raise PtxSpecError(f"cannot read the file: {error.strerror or error}", where=Location(source)) from None
    forms: dict[str, _FormInfo | str] = {}
    try:
        for number, data in enumerate(stream, start=1):
            if on_line is not None and number % 4096 == 0:
                on_line(number)
            try:
                raw = data.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise PtxSpecError("the line is not UTF-8 text", where=Location(source, number, error.start + 1)) from None
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as error:
                raise PtxSpecError(f"invalid JSON ({error.msg}); expected one vector object per line, {_SCHEMA}", where=Location(source, number, error.colno)) from None
            if not isinstance(obj, dict):
                raise PtxSpecError(f"expected a JSON object per line, {_SCHEMA}", where=Location(source, number, 1))
            for key in ("instr", "inputs", "outputs"):
                if key not in obj:
                    raise PtxSpecError(f"missing field {key!r}; expected {_SCHEMA}", where=Location(source, number, 1))
            instr = obj["instr"]
            if not isinstance(instr, str):
                raise PtxSpecError(f"field 'instr': expected an instruction text such as \"fma.rn.f32\", got {json.dumps(instr)}", where=Location(source, number, _column(raw, "instr")))
            info = forms.get(instr)
            if info is None:
                info = forms[instr] = _form_info(instr)
            if isinstance(info, str):
                yield Unsupported(instr, info, Location(source, number))
                continue
            yield _vector(raw, obj, info, source, number)
    finally:
        if path != "-":
            stream.close()


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------


def _claim_matches(claim: dict | str, result) -> bool:
    """Whether a claimed allowed set (``eval --json``'s encoding, or a short form) is ``result``."""
    from ptxspec.semantics.results import AnyNaN, Interval

    if "kind" in claim:
        return not isinstance(result, int) and claim == result.to_json()
    if "any_nan" in claim:
        return isinstance(result, AnyNaN) and claim["any_nan"] is True
    if "interval" in claim:
        bounds = claim["interval"]
        if not isinstance(result, Interval) or not isinstance(bounds, list) or len(bounds) != 2:
            return False
        w = result.format.width
        same = [b.lower() if isinstance(b, str) else b for b in bounds] == [_hex(result.low, w), _hex(result.high, w)]
        return same and claim.get("nan", result.nan) == result.nan
    return False


def judge(vector: Vector, expected: tuple, profile: str) -> str | None:
    """None when the vector's outputs are what ``expected`` (the profile's results) allows; else
    what is wrong, naming the destination."""
    from ptxspec.semantics.results import contains

    destinations = vector.info.destinations
    for k, (observed, result) in enumerate(zip(vector.outputs, expected)):
        name = destinations[k].name
        if isinstance(observed, dict):
            if not _claim_matches(observed, result):
                return f"{name}: the vector gives the allowed set {json.dumps(observed)}"
        elif isinstance(observed, tuple):
            if isinstance(result, int) or observed not in result:
                return f"{name}: lane(s) outside the allowed results"
        elif not contains(result, observed):
            return f"{name}: {_hex(observed, vector.info.destination_widths[k])} is not allowed"
    if vector.allowed is not None:
        claimed_profile, claims = vector.allowed
        if claimed_profile == profile:
            for k, (claim, result) in enumerate(zip(claims, expected)):
                if claim is None:
                    if not isinstance(result, int):
                        return f"{destinations[k].name}: 'allowed' says the result is fixed; the {profile} profile allows a set"
                elif not _claim_matches(claim, result):
                    return f"{destinations[k].name}: 'allowed' claims {json.dumps(claim)}"
    return None


def _evaluate(vector: Vector, profile: str) -> tuple:
    from ptxspec.semantics.instructions import evaluate

    try:
        return evaluate(vector.form, vector.sources, profile, active=vector.active)
    except PtxSpecError as error:
        raise PtxSpecError(error.message, where=vector.where, section=error.section) from None


def check_one(vector: Vector, profile: str) -> Mismatch | None:
    """The per-vector path: evaluate the readable semantics and judge the outputs."""
    expected = _evaluate(vector, profile)
    why = judge(vector, expected, profile)
    return None if why is None else Mismatch(vector, expected, why)


def check_group(vectors: Sequence[Vector], profile: str) -> list[Mismatch]:
    """The mismatches among vectors of one form. Where the form has a batched fast path, the
    vectors whose outputs are plain bits are checked by :class:`~ptxspec.semantics.batch.BatchResult`
    (the mismatches among them re-checked one by one, for the report); the rest one by one."""
    import numpy as np

    from ptxspec.semantics.batch import FAST_PATHS, _dtype, evaluate_batch

    if not vectors:
        return []
    info = vectors[0].info
    form = info.form
    batchable: list[Vector] = []
    rest: list[Vector] = []
    if form.text in FAST_PATHS and len(info.destinations) == 1:
        for v in vectors:
            (batchable if v.allowed is None and isinstance(v.outputs[0], int) else rest).append(v)
    else:
        rest = list(vectors)
    mismatches: list[Mismatch] = []
    if batchable:
        columns = [np.fromiter((v.sources[k] for v in batchable), dtype=_dtype(w), count=len(batchable)) for k, w in enumerate(info.source_widths)]
        observed = np.fromiter((v.outputs[0] for v in batchable), dtype=_dtype(info.destination_widths[0]), count=len(batchable))
        ok = evaluate_batch(form, columns, profile).contains(observed)
        for i in np.flatnonzero(~ok):
            found = check_one(batchable[int(i)], profile)
            if found is None:  # pragma: no cover - the batch and the readable semantics disagree
                raise PtxSpecError(f"{form.text}: the batched fast path and the readable semantics disagree", where=batchable[int(i)].where)
            mismatches.append(found)
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains

    for v in rest:
        # The common case first: plain bits, and every one allowed (judge() explains the others).
        if v.allowed is None and v.active is None:
            try:
                expected = evaluate(form, v.sources, profile)
            except PtxSpecError:
                expected = None
            if expected is not None and all(type(o) is int and contains(e, o) for e, o in zip(expected, v.outputs)):
                continue
        found = check_one(v, profile)
        if found is not None:
            mismatches.append(found)
    return mismatches


def check_vectors(items: Iterable[Vector | Unsupported], profile: str = "spec", *, progress=None) -> Summary:
    """Check parsed vectors (all of them read first, so that a malformed line stops the run before
    anything is reported) and summarise."""
    summary = Summary(profile)
    groups: dict[str, list[Vector]] = {}
    for item in items:
        if isinstance(item, Unsupported):
            summary.unsupported.append(item)
        else:
            groups.setdefault(item.form.text, []).append(item)
    total = sum(len(g) for g in groups.values())
    done = 0
    for text, group in groups.items():
        found: list[Mismatch] = []
        for start in range(0, len(group), 1 << 16):
            chunk = group[start : start + (1 << 16)]
            found += check_group(chunk, profile)
            done += len(chunk)
            if progress is not None:
                progress("checking", done, total)
        summary.by_instr[text] = Counts(len(group), len(group) - len(found), len(found))
        summary.mismatches += found
    summary.mismatches.sort(key=lambda m: (m.vector.where.source, m.vector.where.line or 0))
    return summary


def check_file(path: str, profile: str = "spec") -> Summary:
    """The Python API: check every vector of the JSON Lines file ``path`` under ``profile``."""
    return check_vectors(list(read_vectors(path)), profile)


# ---------------------------------------------------------------------------------------------
# Printing: hex and decoded values
# ---------------------------------------------------------------------------------------------


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


def _width(type_name: str) -> int:
    from ptxspec.spec.types import register_bits

    return register_bits(type_name)


def decoded(bits: int, type_name: str) -> str:
    """``bits`` of a register of ``type_name``: hex, and the value for float and integer types."""
    from ptxspec.semantics.numerics import Exact, Infinity, NaN, decode
    from ptxspec.spec.types import FORMATS, INTEGER_TYPES

    text = _hex(bits, _width(type_name))
    if type_name in FORMATS:
        v = decode(type_name, bits)
        if isinstance(v, NaN):
            return f"{text} (NaN)"
        if isinstance(v, Infinity):
            return f"{text} ({'-' if v.sign else '+'}inf)"
        assert isinstance(v, Exact)
        magnitude = Fraction(v.significand) * Fraction(2) ** v.exponent
        # For display only; the check itself compares bits.
        return f"{text} ({'-' if v.sign else ''}{float(magnitude)!r})"
    integer = INTEGER_TYPES.get(type_name)
    if integer is not None and integer.signed:
        return f"{text} ({bits - (1 << integer.bits) if bits >> (integer.bits - 1) else bits})"
    if integer is not None or type_name == "pred":
        return f"{text} ({bits})"
    return text


def _value_text(value, type_name: str) -> str:
    if isinstance(value, int):
        return decoded(value, type_name)
    if isinstance(value, tuple):
        return "[" + ",".join(_hex(v, _width(type_name)) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value)
    from ptxspec.semantics.results import Interval

    if isinstance(value, Interval):
        return f"{value.describe()} ({decoded(value.low, value.format.name)} to {decoded(value.high, value.format.name)})"
    return value.describe()


def describe_mismatch(m: Mismatch) -> list[str]:
    info = m.vector.info
    lines = [f"{m.vector.where}: {info.form.text}: {m.why}"]
    for value, o in zip(m.vector.sources, info.sources):
        lines.append(f"    input    {o.name:10} = {_value_text(value, o.type)}")
    for e, observed, o in zip(m.expected, m.vector.outputs, info.destinations):
        lines.append(f"    expected {o.name:10} = {_value_text(e, o.type)}")
        lines.append(f"    observed {o.name:10} = {_value_text(observed, o.type)}")
    return lines


def report(summary: Summary, max_mismatches: int) -> list[str]:
    lines = [f"checked {summary.checked} vector(s) under profile {summary.profile}: {summary.matched} matched, {summary.mismatched} mismatched, {len(summary.unsupported)} unsupported"]
    if summary.by_instr:
        width = max(len(k) for k in summary.by_instr)
        for k, c in sorted(summary.by_instr.items()):
            lines.append(f"  {k:{width}}  checked {c.checked:8}  matched {c.matched:8}  mismatched {c.mismatched:8}")
    if summary.unsupported:
        firsts: dict[str, list[Unsupported]] = {}
        for u in summary.unsupported:
            firsts.setdefault(u.instr, []).append(u)
        lines.append("unsupported (not checked):")
        for instr, us in sorted(firsts.items()):
            lines.append(f"  {instr}: {len(us)} vector(s), first at {us[0].where}: {us[0].reason}")
    if summary.mismatches and max_mismatches:
        shown = summary.mismatches[:max_mismatches]
        lines.append(f"first {len(shown)} of {len(summary.mismatches)} mismatch(es):")
        for m in shown:
            lines += describe_mismatch(m)
    return lines


class _Progress:
    """A plain-text progress line on standard error, redrawn at most ten times a second; silent
    when standard error is not a terminal."""

    def __init__(self) -> None:
        self.stream = click.get_text_stream("stderr")
        self.on = self.stream.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, what: str, done: int, total: int | None = None) -> None:
        now = time.monotonic()
        if not self.on or now - self.last < 0.1:
            return
        self.last = now
        text = f"{what}: {done}/{total} ({100 * done // max(total, 1)}%)" if total else f"{what}: {done} lines"
        self.stream.write(f"\r{text:60}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------
# The silicon recordings as vectors
# ---------------------------------------------------------------------------------------------


def recorded_vectors(recorded, rows: Sequence[int] | None = None) -> Iterable[dict]:
    """The vectors of one form recorded on an H100/H200 (:mod:`ptxspec.conformance.silicon.replay`)
    in this module's JSON Lines schema, with ``"profile": "sm_90"``: ``rows`` are row indices (warp
    indices for a warp-level form; default all). A recorded register wider than its operand (a
    narrow result stored extended) is cut to the operand's width, as the replay reads it."""
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.types import register_bits

    instr = recorded.text.split("#")[0]
    form = parse(instr)
    in_widths = [register_bits(o.type) for o in form.sources]
    out_widths = [register_bits(o.type) for o in form.destinations]
    if recorded.warp:
        *sources, active = recorded.inputs
        for w in range(len(active) // WARP_SIZE) if rows is None else rows:
            lanes = slice(WARP_SIZE * w, WARP_SIZE * (w + 1))
            inputs = []
            for operand, col, width in zip(form.sources, sources, in_widths):
                values = [_hex(int(x) & ((1 << width) - 1), width) for x in col[lanes]]
                inputs.append(values[0] if operand.name == "membermask" else values)
            outputs = [[_hex(int(x) & ((1 << width) - 1), width) for x in col[lanes]] for col, width in zip(recorded.outputs, out_widths)]
            yield {"instr": instr, "inputs": inputs, "outputs": outputs, "active": _hex(int(active[WARP_SIZE * w]), 32), "profile": "sm_90"}
        return
    for i in range(len(recorded.outputs[0])) if rows is None else rows:
        inputs = [_hex(int(col[i]) & ((1 << w) - 1), w) for col, w in zip(recorded.inputs, in_widths)]
        outputs = [_hex(int(col[i]) & ((1 << w) - 1), w) for col, w in zip(recorded.outputs, out_widths)]
        yield {"instr": instr, "inputs": inputs, "outputs": outputs, "profile": "sm_90"}


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@click.command("check-vectors")
@click.argument("paths", metavar="FILE...", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--profile", type=click.Choice(["spec", "sm_90"]), default="spec", show_default=True,
              help="spec: accept every result the manual allows; sm_90: only what an H100/H200 produces, where measured.")
@click.option("--json", "as_json", is_flag=True, help="Print one summary object instead of text.")
@click.option("--max-mismatches", type=click.IntRange(min=0), default=10, show_default=True, help="How many mismatches to print in full.")
def check_vectors_command(paths: tuple[str, ...], profile: str, as_json: bool, max_mismatches: int) -> None:
    """Check golden vectors (JSON Lines, one vector per line, from any source) against the
    specification and summarise.

    \b
    A line:  {"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"],
              "outputs": ["0x40000000"]}

    Exit status 0 when every vector matches, 1 when one does not (the first ones are printed with
    their decoded values), 2 on a malformed line (reported as file:line:column). Vectors of an
    instruction ptxspec does not know are counted as unsupported and do not stop the run.
    """
    progress = _Progress()
    try:
        items: list[Vector | Unsupported] = []
        for path in paths:
            items.extend(read_vectors(path, on_line=lambda n: progress(f"reading {path}", n)))
        summary = check_vectors(items, profile, progress=progress)
    except PtxSpecError as error:
        progress.close()
        click.echo(f"ptxspec: error: {error.one_line()}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    progress.close()
    if as_json:
        click.echo(json.dumps(summary.to_json()))
        if summary.mismatches and max_mismatches:
            for m in summary.mismatches[:max_mismatches]:
                click.echo("\n".join(describe_mismatch(m)), err=True)
    else:
        for line in report(summary, max_mismatches):
            click.echo(line)
    if summary.checked == 0:
        click.echo("ptxspec: warning: no vector was checked", err=True)
    sys.exit(summary.exit_code)


__all__ = ["Summary", "Vector", "check_file", "check_vectors", "check_vectors_command", "read_vectors", "recorded_vectors"]
