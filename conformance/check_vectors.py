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

Reading is done in bulk where it can be: a line exactly as ``ptxspec vectors`` writes it
(``json.dumps`` spacing and key order, lower-case hex of the register's width) is one of many
lines of the same length and layout, so such lines are compared with their layout as byte matrices
and their hex columns converted with numpy (:func:`canonical_blocks`). Every other line -- other
spacing, key order, upper-case hex, extra fields, warp-level forms, a malformed line -- is read by
``json`` one line at a time, as before, with the same located errors; the result is the same either
way, to the bit and the message (``tests/test_check_vectors_fast.py``).

Nothing holds a whole file: a file is read :data:`READ_SIZE` bytes of whole lines at a time
(:func:`read_lines`), each chunk's vectors are checked before the next is read
(:func:`check_batches`), and the summary keeps counts and only the mismatches it will print, so a
file of any size is checked in bounded memory (a recording one form at a time). A line is at most
:data:`MAX_LINE` bytes and nests at most :data:`MAX_DEPTH` levels; a malformed line anywhere in the
input is reported (exit 2) even where a vector before it was already checked, as when files were
read whole first.

Hex is read in either case wherever it occurs (``"0x7E800000"`` is ``"0x7e800000"``; so is an
``0X`` prefix): operands, outputs, and the bounds and payloads inside a claimed allowed set.

With ``--testfloat FORM`` every file is in Berkeley TestFloat's ``testfloat_gen`` layout, vectors
of FORM (:mod:`ptxspec.conformance.testfloat`): operands and result are checked as above; the
exception-flag column is compared with the IEEE 754 exceptions of the operation
(:func:`judge_testfloat_flags`).

Exit status: 0 when every supported vector matches, 1 when one does not, 2 on bad input (a located
``file:line:column`` message). A vector whose instruction the catalogue does not know (or whose
semantics is not implemented yet) is counted as unsupported and reported; it does not stop the run.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from fractions import Fraction
from typing import TYPE_CHECKING, cast

import attrs
import click
import numpy as np

from ptxspec.profiles import NAMES as PROFILE_NAMES
from ptxspec.conformance import campaign_engine
from ptxspec.conformance.progress import Progress
from ptxspec.spec.errors import Location, OperandError, PtxSpecError, printable, shorten

if TYPE_CHECKING:
    from ptxspec.conformance.matrix_vectors import MatrixInfo, MatrixMismatch, MatrixVector
    from ptxspec.conformance.tcgen05_vectors import StateInfo
    from ptxspec.spec.catalogue import Form

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2

_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_SCHEMA = '{"instr": "...", "inputs": ["0x...", ...], "outputs": ["0x...", ...]}'
WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF


@attrs.frozen(eq=False)
class _FormInfo:
    """A form and its operands, looked up once per instruction text (the catalogue builds
    ``form.sources`` anew on every access)."""

    form: Form
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
            return re.compile(",".join(f"0[xX][0-9a-fA-F]{{{max(1, (w + 3) // 4)}}}" for w in widths))

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
    """The outcome of checking one or more files, gathered as the vectors stream by: counts per
    instruction, the first unsupported vector of each instruction (``unsupported``) with the
    count of every one (``unsupported_by_instr``), and the mismatches in file and line order --
    all of them, or only the first ``keep`` (the command line keeps what it prints, so that a file
    of any size is checked in bounded memory; ``mismatched`` still counts every one)."""

    profile: str
    by_instr: dict[str, Counts] = attrs.field(factory=dict)
    unsupported: list[Unsupported] = attrs.field(factory=list)
    mismatches: list[Mismatch] = attrs.field(factory=list)
    unsupported_by_instr: dict[str, int] = attrs.field(factory=dict)
    keep: int | None = None
    #: TestFloat blocks whose flags were judged (their order among the flags mismatches).
    flag_blocks: int = 0
    _keys: list = attrs.field(factory=list, repr=False)

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
    def unsupported_count(self) -> int:
        return sum(self.unsupported_by_instr.values())

    @property
    def exit_code(self) -> int:
        return EXIT_MISMATCH if self.mismatched else EXIT_OK

    def add_unsupported(self, item: Unsupported) -> None:
        if item.instr not in self.unsupported_by_instr:
            self.unsupported.append(item)
        self.unsupported_by_instr[item.instr] = self.unsupported_by_instr.get(item.instr, 0) + 1

    def add_mismatches(self, found: Iterable, order: tuple = (0,)) -> None:
        """Keep ``found`` in order: by ``order`` (result mismatches, ``(0,)``, before the
        TestFloat flag mismatches of the n-th flags block, ``(1, n)``), then file and line."""
        for m in found:
            where = m.where if isinstance(m, DescribedMismatch) else m.vector.where
            self._keys.append((*order, where.source, where.line or 0) if order == (0,) else (*order, where.line or 0))
            self.mismatches.append(m)
        if self.keep is not None and len(self.mismatches) > 2 * self.keep + 1024:
            self._sort()

    def _sort(self) -> None:
        order = sorted(range(len(self.mismatches)), key=self._keys.__getitem__)[: self.keep]
        self.mismatches[:] = [self.mismatches[i] for i in order]
        self._keys[:] = [self._keys[i] for i in order]

    def finish(self) -> Summary:
        self._sort()
        return self

    def absorb(self, other: Summary) -> None:
        """Add ``other``'s counts, unsupported instructions and mismatches (kept in their order)."""
        for instr, counts in other.by_instr.items():
            total = self.by_instr.setdefault(instr, Counts())
            total.checked, total.matched, total.mismatched = (
                total.checked + counts.checked,
                total.matched + counts.matched,
                total.mismatched + counts.mismatched,
            )
        self.unsupported += [u for u in other.unsupported if u.instr not in self.unsupported_by_instr]
        for instr, n in other.unsupported_by_instr.items():
            self.unsupported_by_instr[instr] = self.unsupported_by_instr.get(instr, 0) + n
        self.mismatches += other.mismatches
        # TestFloat flag blocks are numbered per summary: the other's come after these.
        self._keys += [key if key[0] == 0 else (1, key[1] + self.flag_blocks, *key[2:]) for key in other._keys]
        self.flag_blocks += other.flag_blocks
        if self.keep is not None:
            self._sort()

    def to_json(self) -> dict:
        return {
            "checked": self.checked,
            "matched": self.matched,
            "mismatched": self.mismatched,
            "unsupported": self.unsupported_count,
            "by_instr": {k: attrs.asdict(c) for k, c in sorted(self.by_instr.items())},
            "unsupported_by_instr": dict(sorted(self.unsupported_by_instr.items())),
        }


# ---------------------------------------------------------------------------------------------
# Reading: every problem is a located error naming what was expected
# ---------------------------------------------------------------------------------------------


def _form_info(instr: str) -> _FormInfo | MatrixInfo | StateInfo | str:
    """The form of ``instr`` and its operand widths, or why ptxspec cannot check it."""
    from ptxspec.conformance.cli import is_warp_form
    from ptxspec.semantics.instructions import semantic_of
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.types import register_bits
    from ptxspec.conformance import matrix_vectors

    matrix = matrix_vectors.form_info(instr)  # mma, mma.sp, wgmma: conformance/matrix_vectors.py
    if matrix is not None:
        return matrix
    try:
        form = parse(instr)
        kind = semantic_of(form).operands
    except PtxSpecError as error:
        return error.message
    if kind.state:  # states in and out (tcgen05): conformance/tcgen05_vectors.py
        from ptxspec.conformance import tcgen05_vectors

        return tcgen05_vectors.form_info(instr) or f"{form.text}: no vectors yet for an instruction that reads memory"
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


def show_value(value) -> str:
    """A JSON value for a message: its JSON text, :func:`shorten`-ed."""
    return shorten(json.dumps(value))


def _bits(text, width: int, what: str, where) -> int:
    """A hex bit pattern of a ``width``-bit register: ``0x`` and exactly width/4 digits."""
    digits = max(1, (width + 3) // 4)
    if not isinstance(text, str) or _HEX.fullmatch(text) is None:
        raise OperandError(f"{what}: expected a hex string '0x' + {digits} digit(s) (a {width}-bit register), got {show_value(text)}", where=where())
    if len(text) != digits + 2:
        raise OperandError(f"{what}: expected {digits} hex digit(s) for a {width}-bit register, got {len(text) - 2} in {shorten(text)!r}", where=where())
    value = int(text, 16)
    if value >> width:
        raise OperandError(f"{what}: {shorten(text)} does not fit in a {width}-bit register", where=where())
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
            raise OperandError(f"field {key!r}: expected a list of hex strings, got {show_value(value)}", where=at(key)())
    expected = len(info.source_widths)
    omitted_mask = info.warp and info.sources and info.sources[-1].name == "membermask" and len(inputs) == expected - 1
    if len(inputs) != expected and not omitted_mask:
        names = ", ".join(o.name for o in info.sources) or "none"
        raise OperandError(f"{form.text} takes {expected} source operand(s) ({names}), got {len(inputs)}", where=at("inputs")(), section=form.family.section)
    if len(outputs) != len(info.destination_widths):
        names = ", ".join(o.name for o in info.destinations)
        raise OperandError(
            f"{form.text} has {len(info.destination_widths)} destination operand(s) ({names}), got {len(outputs)} output(s)",
            where=at("outputs")(),
            section=form.family.section,
        )
    parse_source = _lanes if info.warp else _bits
    sources = [
        parse_source(v, w, f"input {k + 1} ({o.name}, .{o.type})", lambda lane=None, k=k: at("inputs", k)(lane))
        for k, (v, w, o) in enumerate(zip(inputs, info.source_widths, info.sources))
    ]
    if omitted_mask:
        sources.append(FULL_MASK)
    observed: list[dict | tuple[int, ...] | int] = []
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
                raise OperandError(
                    f"field 'allowed': {form.text} has {len(outputs)} destinations; give a list with one entry (or null) per destination", where=at("allowed")()
                )
            allowed = [allowed]
        if not isinstance(allowed, list) or len(allowed) != len(outputs) or not all(a is None or isinstance(a, dict) for a in allowed):
            raise OperandError(f"field 'allowed': expected an object (one destination) or a list of {len(outputs)} objects or nulls", where=at("allowed")())
        vector_profile = obj.get("profile", "spec")
        if not isinstance(vector_profile, str):
            raise OperandError(f"field 'profile': expected a profile name, got {show_value(vector_profile)}", where=at("profile")())
        allowed = (vector_profile, tuple(allowed))
    active = obj.get("active")
    if active is not None:
        if not info.warp:
            raise OperandError(f"field 'active': {form.text} is not a warp-level instruction", where=at("active")())
        active = _bits(active, 32, "field 'active'", lambda: at("active")())
    return Vector(info, tuple(sources), tuple(observed), allowed, active, Location(source, number))


#: The deepest nesting a vector line may have (the schema's deepest, a wgmma line, nests 4 deep):
#: deeper lines are refused before ``json`` reads them, so nothing recurses without bound.
MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(raw: str) -> int | None:
    """The 1-based column where ``raw`` opens its ``MAX_DEPTH + 1``-th nested level (outside
    strings), or None when it nests no deeper than ``MAX_DEPTH``."""
    if raw.count("[") + raw.count("{") <= MAX_DEPTH:
        return None
    skeleton = np.frombuffer(_STRING.sub("", raw).encode("utf-8"), np.uint8)
    depth = np.cumsum(np.isin(skeleton, (91, 123)).astype(np.int64) - np.isin(skeleton, (93, 125)))
    if not len(depth) or depth.max() <= MAX_DEPTH:
        return None
    level = 0
    for token in _STRING_OR_BRACKET.finditer(raw):  # only now, on the error path, walk the line
        c = token.group()
        level += 1 if c in "[{" else -1 if c in "]}" else 0
        if level > MAX_DEPTH:
            return token.start() + 1
    return 1  # pragma: no cover - the skeleton said deeper


def load_json_line(raw: str, where) -> object:
    """``json.loads`` of one line of a vector file, every failure a located
    :class:`~ptxspec.spec.errors.PtxSpecError` (``where(column)`` gives the location): invalid
    JSON, nesting deeper than :data:`MAX_DEPTH`, a number of more digits than Python converts."""
    column = _too_deep(raw)
    if column is not None:
        raise PtxSpecError(f"the line nests deeper than {MAX_DEPTH} levels; expected one vector object per line, {_SCHEMA}", where=where(column))
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise PtxSpecError(f"invalid JSON ({error.msg}); expected one vector object per line, {_SCHEMA}", where=where(error.colno)) from None
    except ValueError:  # json's int(): a number of more digits than sys.get_int_max_str_digits()
        limit = sys.get_int_max_str_digits()
        found = next((m for m in re.finditer(r'"(?:[^"\\]|\\.)*"|(-?\d{%d,})' % (limit + 1), raw) if m.group(1)), None)
        digits = len(found.group(1).lstrip("-")) if found else limit + 1
        raise PtxSpecError(
            f"a number of {digits} digits (at most {limit}); operands are hex strings, {_SCHEMA}", where=where(found.start(1) + 1 if found else 1)
        ) from None


def _parse_line(data: bytes, number: int, source: str, forms: dict) -> Vector | MatrixVector | Unsupported | None:
    """One line read by ``json``: a vector, an unsupported one, or None for a blank line; a located
    :class:`~ptxspec.spec.errors.PtxSpecError` when the line is malformed."""
    try:
        raw = data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as error:
        raise PtxSpecError("the line is not UTF-8 text", where=Location(source, number, error.start + 1)) from None
    if not raw.strip():
        return None
    obj = load_json_line(raw, lambda column: Location(source, number, column))
    if not isinstance(obj, dict):
        raise PtxSpecError(f"expected a JSON object per line, {_SCHEMA}", where=Location(source, number, 1))
    for key in ("instr", "inputs", "outputs"):
        if key not in obj:
            raise PtxSpecError(f"missing field {key!r}; expected {_SCHEMA}", where=Location(source, number, 1))
    instr = obj["instr"]
    if not isinstance(instr, str):
        raise PtxSpecError(
            f"field 'instr': expected an instruction text such as \"fma.rn.f32\", got {show_value(instr)}",
            where=Location(source, number, _column(raw, "instr")),
        )
    info = forms.get(instr)
    if info is None:
        info = forms[instr] = _form_info(instr)
    if isinstance(info, str):
        return Unsupported(instr, info, Location(source, number))
    if getattr(info, "matrix", False):
        return cast("MatrixInfo", info).parse_vector(raw, obj, source, number)
    return _vector(raw, obj, cast(_FormInfo, info), source, number)


# ---------------------------------------------------------------------------------------------
# Reading a file a chunk of whole lines at a time: nothing holds a whole file
# ---------------------------------------------------------------------------------------------

#: Bytes read at a time.
READ_SIZE = 1 << 22
#: The longest line read (a vector line, a wgmma one the longest, is well under a MiB): a file
#: with no line break in this many bytes (``/dev/zero``) is refused there, not read whole.
MAX_LINE = 1 << 24
#: Bytes of lines read by ``json`` (not in bulk) that are parsed before they are checked.
SLOW_BATCH = 1 << 22


@attrs.frozen
class Lines:
    """Whole lines of a file: ``data`` (each line ends in a line break, the file's last maybe
    not), the number of the first, and how many bytes of the file are read so far of ``size``
    (None where unknown: standard input, a pipe)."""

    source: str
    first: int
    data: bytes
    done: int
    size: int | None


LINE_EXPECTED = f"one vector per line, {_SCHEMA}"
"""What a vector file's line should be (for the message when one is too long)."""


def read_lines(path: str, expect: str = LINE_EXPECTED) -> Iterator[Lines]:
    """The lines of ``path`` (``-``: standard input) a chunk of :data:`READ_SIZE` bytes at a
    time, cut after a line break; a line longer than :data:`MAX_LINE` bytes or a file that
    cannot be read is a located error (``expect``: what a line should be, for its message)."""
    source = "<stdin>" if path == "-" else path
    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as error:
        raise PtxSpecError(f"cannot read the file: {error.strerror or error}", where=Location(source)) from None
    try:
        try:
            status = os.fstat(stream.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
        except (OSError, ValueError, io.UnsupportedOperation):
            size = None
        pending, first, done = b"", 1, 0
        while True:
            try:
                block = stream.read(READ_SIZE)
            except OSError as error:
                raise PtxSpecError(f"cannot read the file: {error.strerror or error}", where=Location(source, first)) from None
            done += len(block)
            if not block:
                if pending:
                    yield Lines(source, first, pending, done, size)
                return
            data = pending + block if pending else block
            cut = data.rfind(b"\n") + 1
            pending = data[cut:]
            if len(pending) > MAX_LINE:
                line = first + data.count(b"\n", 0, cut)
                raise PtxSpecError(f"no line break in the first {MAX_LINE} bytes of the line; expected {expect}", where=Location(source, line, MAX_LINE + 1))
            if cut:
                yield Lines(source, first, data[:cut] if pending else data, done, size)
                first += data.count(b"\n", 0, cut)
    finally:
        if path != "-":
            stream.close()


def line_batches(lines: Lines, forms: dict, *, fast: bool = True) -> Iterator[list[Vector | MatrixVector | Unsupported | Block]]:
    """The vectors of a chunk of lines: first the blocks (:class:`Block`) of the lines in the
    canonical layout (read in bulk, :func:`canonical_blocks`), then every other line in file order
    as a :class:`Vector` or :class:`Unsupported` (read by ``json``, :data:`SLOW_BATCH` bytes of
    them a batch). Blank lines are skipped; a malformed line raises a located error."""
    source, data = lines.source, lines.data
    blocks, rest = canonical_blocks(data, source, forms, lines.first) if fast else ([], None)
    if blocks:
        yield list(blocks)
    if rest is not None and not len(rest):
        return
    raws = data.split(b"\n")
    if raws[-1] == b"":
        raws.pop()
    batch: list = []
    size = 0
    for i in range(len(raws)) if rest is None else rest.tolist():
        item = _parse_line(raws[i], lines.first + i, source, forms)
        if item is not None:
            batch.append(item)
            size += len(raws[i])
            if size >= SLOW_BATCH:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def file_batches(path: str, *, fast: bool = True, progress=None) -> Iterator[list[Vector | MatrixVector | Unsupported | Block]]:
    """The vectors of a JSON Lines file, a batch at a time, read as they are needed
    (:func:`read_lines`, :func:`line_batches`). ``progress(what, done, total)`` is told the bytes
    read."""
    forms: dict[str, _FormInfo | MatrixInfo | str] = {}
    for lines in read_lines(path):
        if progress is not None:
            progress(lines.source, lines.done, lines.size, unit="bytes")
        yield from line_batches(lines, forms, fast=fast)


def read_items(path: str, *, fast: bool = True) -> list[Vector | MatrixVector | Unsupported | Block]:
    """Every vector of a JSON Lines file (:func:`file_batches`; a file that fits in one
    :data:`READ_SIZE` chunk: its blocks first, then the other lines in file order). Raises a
    located :class:`~ptxspec.spec.errors.PtxSpecError` at the first malformed line.
    ``fast=False`` reads every line by ``json``. The command checks a file as it reads it, in
    bounded memory; this holds it whole."""
    return [item for batch in file_batches(path, fast=fast) for item in batch]


def read_vectors(path: str) -> Iterable[Vector | MatrixVector | Unsupported]:
    """The vectors of a JSON Lines file, one :class:`Vector` (or :class:`Unsupported`) per
    non-blank line in file order. Raises a located :class:`~ptxspec.spec.errors.PtxSpecError` at
    the first malformed line."""
    items: list[Vector | MatrixVector | Unsupported] = []
    for item in read_items(path):
        items.extend(item.vectors() if isinstance(item, Block) else [item])
    items.sort(key=lambda v: v.where.line or 0)
    return items


def _testfloat_info(instr: str) -> _FormInfo:
    from ptxspec.conformance import testfloat

    info = _form_info(instr)
    if isinstance(info, str):
        raise PtxSpecError(f"--testfloat {instr}: {info}", where=Location("<command line>, --testfloat"))
    if testfloat.testfloat_function(info.form) is None:
        raise PtxSpecError(
            f"--testfloat {instr}: {info.form.text} has no TestFloat counterpart (the testfloat layout holds IEEE 754 operations)",
            where=Location("<command line>, --testfloat"),
        )
    return cast(_FormInfo, info)  # a matrix form has no TestFloat counterpart


def testfloat_batches(path: str, instr: str, progress=None) -> Iterator[list[Block]]:
    """The vectors of a file in TestFloat's ``testfloat_gen`` layout holding ``instr``'s vectors
    (:func:`ptxspec.conformance.testfloat.read`), one block per chunk of lines: operands, then the
    observed result, and the flags column (``Block.flags``), which :func:`judge_testfloat_flags`
    compares with the IEEE 754 exceptions of the operation."""
    from ptxspec.conformance import testfloat

    info = _testfloat_info(instr)
    empty = True
    for lines in read_lines(path, "one test case per line (operands, result, flags in hex)"):
        empty = False
        if progress is not None:
            progress(lines.source, lines.done, lines.size, unit="bytes")
        try:
            sources, outputs, flags = testfloat.read(lines.data, info.form, first_line=lines.first)
        except PtxSpecError as error:  # located in "<bytes>": name the file
            if isinstance(error.where, Location) and error.where.source == "<bytes>":
                raise PtxSpecError(error.message, where=Location(lines.source, error.where.line, error.where.column), section=error.section) from None
            raise
        columns = tuple(np.asarray(s, dtype=np.uint64) for s in sources)
        observed = tuple(np.asarray(o, dtype=np.uint64) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs]))
        numbers = np.arange(lines.first, lines.first + len(observed[0]))
        yield [Block(info, lines.source, numbers, columns, observed, None, "spec", np.asarray(flags, dtype=np.uint8))]
    if empty:  # an empty file: a block of no vectors, counted under its form
        nothing = np.zeros(0, np.uint64)
        yield [
            Block(
                info,
                "<stdin>" if path == "-" else path,
                nothing.astype(np.int64),
                tuple(nothing for _ in info.sources),
                (nothing,),
                None,
                "spec",
                np.zeros(0, np.uint8),
            )
        ]


def read_testfloat(path: str, instr: str) -> list[Block]:
    """Every block of a TestFloat file (:func:`testfloat_batches`)."""
    return [block for batch in testfloat_batches(path, instr) for block in batch]


def judge_testfloat_flags(block: Block, summary: Summary, mismatched_lines: set[int | None], order: int = 0) -> None:
    """Count a TestFloat line whose result matched (its line not in ``mismatched_lines``) but whose
    flags are not the IEEE 754-2019 §7 exceptions of the operation
    (:func:`ptxspec.conformance.testfloat.exceptions`; PTX has no status flags, so these are the
    flags the file's layout promises) as a mismatch of ``summary``, after the result mismatches
    (``order``: the block's place among the flags blocks)."""
    from ptxspec.conformance import testfloat

    flags = block.flags
    assert flags is not None, "judge_testfloat_flags: the block has no flags column"
    counts = summary.by_instr[block.info.form.text]
    found = []
    for i in range(len(block)):
        vector = block.vector(i)
        if vector.where.line in mismatched_lines:
            continue
        expected = int(testfloat.exceptions(block.info.form, vector.sources))
        if int(flags[i]) != expected:
            counts.matched -= 1
            counts.mismatched += 1
            names = "|".join(cast(str, f.name).lower() for f in testfloat.Flags if f & expected) or "none"
            found.append(Mismatch(vector, vector.outputs, f"result matches, but flags {int(flags[i]):02x} where IEEE 754 raises {expected:02x} ({names})"))
    summary.add_mismatches(found, (1, order))


# ---------------------------------------------------------------------------------------------
# Reading in bulk: the lines ``ptxspec vectors`` writes, as numpy byte matrices
# ---------------------------------------------------------------------------------------------


@attrs.frozen(eq=False)
class Block:
    """Vectors of one form read in bulk from lines of one layout: the line numbers, the source and
    observed bits as uint64 arrays, and where the lines carry ``"allowed"``, its text per line
    (``(n, width)`` bytes) with the lines' ``"profile"``."""

    info: _FormInfo
    source: str
    lines: np.ndarray
    sources: tuple
    outputs: tuple
    allowed: np.ndarray | None
    vector_profile: str
    #: A TestFloat file's flags column (:func:`read_testfloat`), judged by :func:`judge_testfloat_flags`.
    flags: np.ndarray | None = None
    #: Lines whose outputs hold a claimed set (a set without a canonical member, which
    #: ``ptxspec vectors`` writes in ``outputs`` and ``allowed`` alike): the lines' bytes, ``(n,
    #: length)``; their ``outputs`` arrays hold zeros. They are judged as text
    #: (:func:`_golden_lines`), and read by ``json`` where the text differs.
    text: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def vector(self, i: int) -> Vector:
        """Line ``i`` of the block as :func:`read_vectors` reads it."""
        if self.text is not None:
            raw = self.text[i].tobytes().decode("utf-8")
            return _vector(raw, json.loads(raw), self.info, self.source, int(self.lines[i]))
        allowed = None
        if self.allowed is not None:
            allowed = (self.vector_profile, tuple(json.loads(self.allowed[i].tobytes())))
        return Vector(
            self.info, tuple(int(c[i]) for c in self.sources), tuple(int(c[i]) for c in self.outputs), allowed, None, Location(self.source, int(self.lines[i]))
        )

    def vectors(self) -> list[Vector]:
        return [self.vector(i) for i in range(len(self))]


#: A hex digit's value (lower case only: other spellings are read by ``json``), 255 elsewhere.
_NIBBLE = np.full(256, 255, dtype=np.uint8)
_NIBBLE[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16, dtype=np.uint8)
_HEX_STRING = re.compile(rb'"0x([0-9a-f]+)"')
_KEYS = (
    ["instr", "inputs", "outputs"],
    ["instr", "inputs", "outputs", "profile"],
    ["instr", "inputs", "outputs", "allowed", "profile"],
    ["instr", "inputs", "outputs", "allowed"],
)

#: Lines per length that may fail to give a layout before the rest of them is read by ``json``.
_MAX_MISSES = 8


@attrs.frozen(eq=False)
class _Layout:
    """A line's layout: its bytes with the hex digit columns open. ``fields``: the (first column,
    digits) of each operand, inputs then outputs; ``free``: every digit column (the operands' and
    those inside ``allowed``); ``allowed``: the columns of the ``allowed`` value, or None."""

    info: _FormInfo
    line: np.ndarray
    fields: tuple
    claim_digits: tuple
    open: np.ndarray
    allowed: tuple[int, int] | None
    vector_profile: str
    #: Whether some output is a claimed set (written in ``outputs`` as in ``allowed``).
    set_outputs: bool = False


def _layout(text: bytes, forms: dict) -> _Layout | None:
    """The layout of ``text`` if it is a scalar vector exactly as ``json.dumps`` writes it (the
    keys in the writer's order, every operand hex of its register's width), else None."""
    try:
        obj = load_json_line(text.decode("utf-8"), lambda column: None)
    except (PtxSpecError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict) or list(obj) not in _KEYS or not isinstance(obj["instr"], str):
        return None
    if json.dumps(obj).encode("utf-8") != text:
        return None
    info = forms.get(obj["instr"])
    if info is None:
        info = forms[obj["instr"]] = _form_info(obj["instr"])
    if isinstance(info, str) or info.warp:
        return None
    info = cast(_FormInfo, info)  # a matrix form is a warp form
    inputs, outputs, allowed = obj["inputs"], obj["outputs"], obj.get("allowed")
    profile = obj.get("profile", "spec")
    widths = info.source_widths + info.destination_widths
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) + len(outputs) != len(widths) or len(inputs) != len(info.source_widths):
        return None
    if profile not in PROFILE_NAMES:
        return None
    if allowed is not None and not (isinstance(allowed, list) and len(allowed) == len(outputs) and all(a is None or isinstance(a, dict) for a in allowed)):
        return None
    # An output that is an object is a claimed set, as ptxspec vectors writes one without a
    # canonical member: the same object in "allowed".
    set_outputs = [isinstance(o, dict) for o in outputs]
    if any(set_outputs) and (allowed is None or any(s and o != a for s, o, a in zip(set_outputs, outputs, allowed))):
        return None
    matches = list(_HEX_STRING.finditer(text))
    spans = []
    if "allowed" in obj:
        if allowed is None:
            return None
        start = text.index(b'"allowed": ') + len(b'"allowed": ')
        spans.append((start, start + len(json.dumps(allowed).encode("utf-8"))))
    if any(set_outputs):
        start = text.index(b'"outputs": ') + len(b'"outputs": ')
        spans.append((start, start + len(json.dumps(outputs).encode("utf-8"))))
    fields = []
    operands = inputs + [o for o, s in zip(outputs, set_outputs) if not s]
    operand_widths = info.source_widths + tuple(w for w, s in zip(info.destination_widths, set_outputs) if not s)
    # The hex strings of the claimed sets in outputs come between the operands' (outputs are in
    # order, a set's strings where it stands): take the operands' in order, skipping those.
    operand_matches = [m for m in matches if not any(a <= m.start() < b for a, b in spans[1:])]
    if any(w > 64 for w in widths):  # a 128-bit operand's digits are read by json
        return None
    for k, width in enumerate(operand_widths):
        # The k-th lower-case hex string of the line must be operand k itself, of its width.
        m = operand_matches[k] if k < len(operand_matches) else None
        if m is None or m.group(0)[1:-1].decode("ascii") != operands[k] or len(m.group(1)) != max(1, (width + 3) // 4):
            return None
        fields.append((m.start(1), len(m.group(1))))
    claim_digits = []
    taken = {start for start, _ in fields}
    for m in matches:
        if m.start(1) in taken:
            continue
        if not any(a <= m.start() < b for a, b in spans) or len(m.group(1)) > 16:
            return None
        claim_digits.append((m.start(1), len(m.group(1))))
    open_ = np.zeros(len(text), bool)
    for start, digits in fields + claim_digits:
        open_[start : start + digits] = True
    span = spans[0] if "allowed" in obj else None
    return _Layout(info, np.frombuffer(text, np.uint8), tuple(fields), tuple(claim_digits), open_, span, profile, any(set_outputs))


def canonical_blocks(data: bytes, source: str, forms: dict, first: int = 1) -> tuple[list[Block], np.ndarray]:
    """The lines of ``data`` in the layout ``ptxspec vectors`` writes, read in bulk, and the
    0-based indices of every other line (for ``json``); ``first`` is the number of the first line.

    Lines are grouped by length; a group's first unread line gives a layout (:func:`_layout`),
    and every line of the group whose bytes equal it outside the hex digit columns, with lower-case
    hex digits there, is read by converting those columns to integers. A line that no layout
    covers, or whose value overflows a register narrower than its digits, is left to ``json``,
    which accepts it or reports where it is malformed."""
    from numpy.lib.stride_tricks import as_strided

    buffer = np.frombuffer(data, np.uint8)
    # Rows are cut 8 bytes at a time (compared as 64-bit words), so the last may run past the end.
    padded = np.concatenate([buffer, np.zeros(8, np.uint8)])
    ends = np.flatnonzero(buffer == 10)
    if len(buffer) and buffer[-1] != 10:
        ends = np.append(ends, len(buffer))
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) if len(ends) else np.zeros(0, np.int64)
    lengths = ends - starts
    slow = np.ones(len(ends), bool)
    blocks: list[Block] = []
    for length in np.unique(lengths).tolist():
        group = np.flatnonzero(lengths == length)
        if length < 2:
            continue
        width = (length + 7) // 8 * 8
        view = as_strided(padded, shape=(len(padded) - width + 1, width), strides=(1, 1), writeable=False)
        matrix = view[starts[group]]
        misses = 0
        remaining = np.arange(len(group))
        while len(remaining) and misses <= _MAX_MISSES:
            layout = _layout(matrix[remaining[0], :length].tobytes(), forms)
            if layout is None:
                misses += 1
                remaining = remaining[1:]
                continue
            rows = matrix if len(remaining) == len(group) else matrix[remaining]
            same = _same_outside_digits(rows, layout, width)
            block, taken = _block(layout, rows[same], group[remaining[same]], source, first)
            remaining = remaining[~same]
            if block is not None:
                slow[block.lines - first] = False
                blocks.append(block)
    return blocks, np.flatnonzero(slow)


def _same_outside_digits(rows: np.ndarray, layout: _Layout, width: int) -> np.ndarray:
    """Which ``rows`` (``(n, width)`` bytes, ``width`` a multiple of 8) equal the layout's line
    outside its digit columns: XOR, masked, compared as 64-bit words."""
    line = np.zeros(width, np.uint8)
    line[: len(layout.line)] = layout.line
    closed = np.zeros(width, np.uint8)
    closed[: len(layout.open)] = np.where(layout.open, 0, 0xFF)
    words = rows.view(np.uint64)
    line_words, closed_words = line.view(np.uint64), closed.view(np.uint64)
    differ = np.zeros(len(rows), np.uint64)
    for j in range(words.shape[1]):
        if closed_words[j]:
            differ |= (words[:, j] ^ line_words[j]) & closed_words[j]
    return differ == 0


def _repeat(byte: int) -> np.uint64:
    return np.uint64(byte * 0x0101010101010101)


_TOP, _LOW4, _ONE = _repeat(0x80), _repeat(0x0F), _repeat(0x01)


def _in_range(x: np.ndarray, low: int, high: int) -> np.ndarray:
    """Per byte of the words ``x`` (each byte below 0x80): 0x80 where ``low <= byte <= high``."""
    return ((x | _TOP) - _repeat(low)) & ~((x | _TOP) - _repeat(high + 1)) & _TOP


def _hex_word(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eight ASCII hex digits per big-endian 64-bit word (the first digit the most significant
    byte): their value, and whether all eight are lower-case hex digits (done on all eight bytes at
    once, SWAR: a byte's high bit carries its comparison)."""
    valid = ((_in_range(x, 0x30, 0x39) | _in_range(x, 0x61, 0x66)) & ~x) == _TOP
    v = (x & _LOW4) + np.uint64(9) * ((x >> np.uint64(6)) & _ONE)  # '0'..'9' -> 0..9, 'a'..'f' -> 10..15
    v = ((v >> np.uint64(4)) | v) & np.uint64(0x00FF00FF00FF00FF)
    v = ((v >> np.uint64(8)) | v) & np.uint64(0x0000FFFF0000FFFF)
    v = ((v >> np.uint64(16)) | v) & np.uint64(0x00000000FFFFFFFF)
    return v, valid


def _hex_columns(digits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values of ``(n, d)`` ASCII hex digit columns (uint64, d <= 16), and which rows hold only
    lower-case hex digits."""
    n, d = digits.shape
    size = 8 if d <= 8 else 16
    text = np.full((n, size), ord("0"), np.uint8)
    text[:, size - d :] = digits
    words = text.view(">u8").astype(np.uint64)
    value, valid = _hex_word(words[:, -1])
    if size == 16:
        high, high_valid = _hex_word(words[:, 0])
        value |= high << np.uint64(32)
        valid &= high_valid
    return value, valid


def _block(layout: _Layout, rows: np.ndarray, numbers: np.ndarray, source: str, first: int = 1) -> tuple[Block | None, np.ndarray]:
    """The block of ``rows`` (lines with ``layout``'s bytes outside the digit columns) that hold
    lower-case hex digits in every digit column and values that fit their registers (the others
    are left to ``json``, which locates what is wrong), and which rows it holds."""
    info = layout.info
    values = []
    keep = np.ones(len(rows), bool)
    widths = info.source_widths if layout.set_outputs else info.source_widths + info.destination_widths
    for (start, digits), width in zip(layout.fields, widths):
        value, valid = _hex_columns(rows[:, start : start + digits])
        keep &= valid
        if width < 4 * digits:
            keep &= (value >> np.uint64(width)) == 0
        values.append(value)
    for start, digits in layout.claim_digits:
        keep &= _hex_columns(rows[:, start : start + digits])[1]
    taken = np.flatnonzero(keep)
    if not len(taken):
        return None, taken
    k = len(info.source_widths)
    allowed = rows[taken, layout.allowed[0] : layout.allowed[1]] if layout.allowed is not None else None
    sources = tuple(v[taken] for v in values[:k])
    if layout.set_outputs:  # judged as text (the outputs' bits are not read)
        zeros = tuple(np.zeros(len(taken), np.uint64) for _ in info.destination_widths)
        text = rows[taken, : len(layout.line)]
        return Block(info, source, numbers[taken] + first, sources, zeros, allowed, layout.vector_profile, text=text), taken
    block = Block(info, source, numbers[taken] + first, sources, tuple(v[taken] for v in values[k:]), allowed, layout.vector_profile)
    return block, taken


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------


def hex_lower(value):
    """``value`` (parsed JSON) with every hex string (``0x``/``0X`` and hex digits) in lower case,
    as ptxspec writes them: hex is compared without regard to case."""
    if isinstance(value, str):
        return value.lower() if _HEX.fullmatch(value) else value
    if isinstance(value, list):
        return [hex_lower(v) for v in value]
    if isinstance(value, dict):
        return {k: hex_lower(v) for k, v in value.items()}
    return value


def _claim_matches(claim: dict, result) -> bool:
    """Whether a claimed allowed set (``eval --json``'s encoding, or a short form) is ``result``
    (hex in either case)."""
    from ptxspec.semantics.results import AnyNaN, Interval

    if "kind" in claim:
        return not isinstance(result, int) and hex_lower(claim) == result.to_json()
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
    (the mismatches among them re-checked one by one, for the report), and the vectors that claim
    sets are judged against its results element by element (:func:`judge`); the rest, and every
    vector of a form without a path, one by one."""
    import numpy as np

    from ptxspec.semantics.batch import _dtype, evaluate_batch_all

    if not vectors:
        return []
    info = vectors[0].info
    form = info.form
    batchable: list[Vector] = []
    rest: list[Vector] = []
    if has_fast_path(form, profile):
        for v in vectors:
            (batchable if v.allowed is None and all(isinstance(o, int) for o in v.outputs) else rest).append(v)
    else:
        rest = list(vectors)
    mismatches: list[Mismatch] = []
    if batchable:
        columns = [np.fromiter((v.sources[k] for v in batchable), dtype=_dtype(w), count=len(batchable)) for k, w in enumerate(info.source_widths)]
        results = evaluate_batch_all(form, columns, profile)
        ok = np.ones(len(batchable), bool)
        for k, (result, width) in enumerate(zip(results, info.destination_widths)):
            ok &= result.contains(np.fromiter((v.outputs[k] for v in batchable), dtype=_dtype(width), count=len(batchable)))
        for i in np.flatnonzero(~ok):
            found = check_one(batchable[int(i)], profile)
            if found is None:  # pragma: no cover - the batch and the readable semantics disagree
                raise PtxSpecError(f"{form.text}: the batched fast path and the readable semantics disagree", where=batchable[int(i)].where)
            mismatches.append(found)
    if rest and has_fast_path(form, profile) and not info.warp:
        # Claimed sets (a golden file's intervals, member sets): judged against the batched
        # results, element by element; a vector judged wrong is re-checked by check_one, which
        # evaluates the readable semantics and explains.
        columns = [np.fromiter((v.sources[k] for v in rest), dtype=_dtype(w), count=len(rest)) for k, w in enumerate(info.source_widths)]
        results = evaluate_batch_all(form, columns, profile)
        for j, v in enumerate(rest):
            if judge(v, tuple(r.result(j) for r in results), profile) is None:
                continue
            found = check_one(v, profile)
            if found is None:  # pragma: no cover - the batch and the readable semantics disagree
                raise PtxSpecError(f"{form.text}: the batched fast path and the readable semantics disagree", where=v.where)
            mismatches.append(found)
        return mismatches
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


def has_fast_path(form, profile: str) -> bool:
    """Whether :func:`~ptxspec.semantics.batch.evaluate_batch` has a batched path for ``form``
    under ``profile`` (else it loops the readable semantics)."""
    from ptxspec.semantics import batch

    try:
        return batch.has_fast_path(form, profile)
    except TypeError:  # batch.has_fast_path without the profile argument: one table for all
        return batch.has_fast_path(form)


def _batchable(v: Vector) -> bool:
    """Plain bits of registers that a uint64 block holds (a 128-bit one goes to check_group)."""
    widths = v.info.source_widths + v.info.destination_widths
    return v.allowed is None and v.active is None and all(isinstance(o, int) for o in v.outputs) and max(widths, default=0) <= 64


def check_form(info: _FormInfo, blocks: Sequence[Block], vectors: Sequence[Vector], profile: str) -> list[Mismatch]:
    """The mismatches among the vectors of one form. Where the form has a batched fast path, the
    blocks and the vectors whose outputs are plain bits are checked together by one
    :class:`~ptxspec.semantics.batch.BatchResult` (a block's ``"allowed"`` texts compared with
    the ones the results give, as ``ptxspec vectors`` writes them); every vector that does not pass
    there is re-checked by :func:`check_one`, which decides and explains. Everything else goes
    vector by vector (:func:`check_group`)."""
    from ptxspec.semantics.batch import evaluate_batch_all

    form = info.form
    if not has_fast_path(form, profile):
        return check_group([v for b in blocks for v in b.vectors()] + list(vectors), profile)
    single = [v for v in vectors if _batchable(v)]
    rest = [v for v in vectors if not _batchable(v)]
    for block in (b for b in blocks if b.text is not None):
        rest += [block.vector(i) for i in np.flatnonzero(~_golden_lines(block, profile)).tolist()]
    parts: list[Block] = [b for b in blocks if b.text is None]
    owners: list[list[Vector] | None] = [None] * len(parts)
    if single:
        owners.append(single)
        parts.append(
            Block(
                info,
                "",
                np.arange(len(single)),
                tuple(np.fromiter((v.sources[k] for v in single), np.uint64, len(single)) for k in range(len(info.sources))),
                tuple(np.fromiter((v.outputs[k] for v in single), np.uint64, len(single)) for k in range(len(info.destinations))),
                None,
                "spec",
            )
        )
    mismatches: list[Mismatch] = []
    if parts:
        sources = [np.concatenate([p.sources[k] for p in parts]) for k in range(len(info.sources))]
        results = evaluate_batch_all(form, sources, profile)
        ok = np.ones(len(sources[0]) if sources else sum(len(p) for p in parts), bool)
        for k, result in enumerate(results):
            ok &= result.contains(np.concatenate([p.outputs[k] for p in parts]))
        offset = 0
        for p, owner in zip(parts, owners):
            part = slice(offset, offset + len(p))
            if p.allowed is not None and p.vector_profile == profile:
                # A claim of allowed sets: compared as text for one destination; else decided vector by vector.
                ok[part] &= _allowed_texts_agree(results[0], part, p.allowed) if len(results) == 1 else False
            for i in np.flatnonzero(~ok[part]).tolist():
                vector = owner[i] if owner is not None else p.vector(i)
                found = check_one(vector, profile)
                if found is not None:
                    mismatches.append(found)
                elif p.allowed is None:  # pragma: no cover - the batch and the readable semantics disagree
                    raise PtxSpecError(f"{form.text}: the batched fast path and the readable semantics disagree", where=vector.where)
            offset += len(p)
    return mismatches + check_group(rest, profile)


def _golden_lines(block: Block, profile: str) -> np.ndarray:
    """Per line of a block that claims sets in ``outputs``: whether it is, byte for byte, the line
    ``ptxspec vectors`` writes for its inputs under ``profile`` (:func:`~ptxspec.conformance.vectors.lines_of`),
    so that every claim in it is the profile's own set (what :func:`judge` asks). False for every
    other line, which :func:`check_one` then decides."""
    from ptxspec.conformance.vectors import lines_of

    assert block.text is not None
    ok = np.zeros(len(block), bool)
    if block.vector_profile != profile:
        return ok
    expected = np.frombuffer(lines_of(block.info.form, [c.astype(np.uint64) for c in block.sources], profile), np.uint8)
    ends = np.flatnonzero(expected == 10)
    starts = np.concatenate([[0], ends[:-1] + 1])
    length = block.text.shape[1]
    same_length = np.flatnonzero(ends - starts == length)
    if len(same_length):
        from numpy.lib.stride_tricks import as_strided

        # Every line start as a row of `length` bytes (a strided view; only the rows taken are copied).
        view = as_strided(expected, shape=(len(expected) - length + 1, length), strides=(1, 1), writeable=False)
        ok[same_length] = (view[starts[same_length]] == block.text[same_length]).all(axis=1)
    return ok


def _allowed_texts_agree(result, part: slice, texts: np.ndarray) -> np.ndarray:
    """Per vector of ``part``: whether the ``"allowed"`` text (``json.dumps`` of the list) is the
    one ``ptxspec vectors`` writes for ``result``'s set; False for every other text (a claim
    in other words, a wrong claim: :func:`check_one` then decides)."""
    from ptxspec.conformance.vectors import Destination, allowed_pieces, render

    shared = None if result.shared is None else attrs.evolve(result.shared, mask=result.shared.mask[part])
    dest = Destination(
        result.bits[part].astype(np.uint64),
        None if result.any_nan is None else result.any_nan[part],
        result.format,
        result.lanes,
        result.lane_bits,
        {},
        None,
        shared,
    )
    pattern = dest.open_pattern()
    ok = np.zeros(len(pattern), bool)
    for p in np.unique(pattern).tolist():
        rows = np.flatnonzero(pattern == p)
        pieces = ["[", *(allowed_pieces(dest, p, dest.bits[rows]) if p else ["null"]), "]"]
        expected = render(pieces, len(rows))
        if expected.shape[1] == texts.shape[1]:
            ok[rows] = (expected == texts[rows]).all(axis=1)
    # An interval or a member set is written in outputs, never as bits with this text: a claim
    # beside bits there is decided by judge(), vector by vector.
    for field in (result.intervals, result.members):
        if field is not None:
            mask = field.mask[part]
            ok &= ~(mask if mask.ndim == 1 else mask.any(axis=1))
    start = part.start or 0
    for i in result.sets:
        if part.start <= i < part.stop:
            ok[i - start] = False
    return ok


def check_batch(items: Sequence[Vector | MatrixVector | Unsupported | Block], summary: Summary) -> None:
    """Check one batch of vectors, grouped by form, and add what is found to ``summary``; the
    flags of a TestFloat block are judged after its results (:func:`judge_testfloat_flags`)."""
    profile = summary.profile
    groups: dict[str, tuple[_FormInfo | MatrixInfo, list[Block], list[Vector | MatrixVector]]] = {}
    for item in items:
        if isinstance(item, Unsupported):
            summary.add_unsupported(item)
            continue
        group = groups.get(item.info.form.text)
        if group is None:
            group = groups[item.info.form.text] = (item.info, [], [])
        if isinstance(item, Block):
            group[1].append(item)
        else:
            group[2].append(item)
    for text, (info, blocks, vectors) in groups.items():
        found: Sequence[Mismatch | MatrixMismatch] = (
            cast("MatrixInfo", info).check(cast("list[MatrixVector]", vectors), profile)
            if getattr(info, "matrix", False)
            else check_form(cast(_FormInfo, info), blocks, cast("list[Vector]", vectors), profile)
        )
        n = sum(map(len, blocks)) + len(vectors)
        counts = summary.by_instr.setdefault(text, Counts())
        counts.checked += n
        counts.matched += n - len(found)
        counts.mismatched += len(found)
        summary.add_mismatches(found)
        for block in blocks:
            if block.flags is not None:
                summary.flag_blocks += 1
                lines = {m.vector.where.line for m in found if m.vector.where.source == block.source}
                judge_testfloat_flags(block, summary, lines, summary.flag_blocks)


def check_batches(batches: Iterable[Sequence[Vector | MatrixVector | Unsupported | Block]], profile: str = "spec", *, keep: int | None = None) -> Summary:
    """Check the vectors of ``batches`` as they come (:func:`check_batch`) and summarise, keeping
    the first ``keep`` mismatches (all when None). A malformed line anywhere (an error raised
    while the batches are read) is reported in preference to an error of the semantics on a
    vector before it: after such an error the rest is still read, not checked."""
    summary = Summary(profile, keep=keep)
    failed: PtxSpecError | None = None
    for batch in batches:
        if failed is None:
            try:
                check_batch(batch, summary)
            except PtxSpecError as error:
                failed = error
    if failed is not None:
        raise failed
    return summary.finish()


def check_vectors(items: Iterable[Vector | MatrixVector | Unsupported | Block], profile: str = "spec", *, keep: int | None = None) -> Summary:
    """Check parsed vectors and summarise (:func:`check_batches`, :data:`SLOW_BATCH` of them, or
    a block, at a time)."""

    def batches():
        batch: list = []
        for item in items:
            batch.append(item)
            if isinstance(item, Block) or len(batch) >= SLOW_BATCH // 256:
                yield batch
                batch = []
        if batch:
            yield batch

    return check_batches(batches(), profile, keep=keep)


def check_file(path: str, profile: str = "spec", *, keep: int | None = None) -> Summary:
    """The Python API: check every vector of the JSON Lines file ``path`` under ``profile``, as it
    is read (bounded memory where ``keep`` bounds the mismatches kept)."""
    return check_batches(file_batches(path), profile, keep=keep)


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
    if not isinstance(m, Mismatch):  # a matrix form's (conformance/matrix_vectors.py)
        return m.describe()
    info = m.vector.info
    lines = [f"{m.vector.where}: {info.form.text}: {m.why}"]
    for value, o in zip(m.vector.sources, info.sources):
        lines.append(f"    input    {o.name:10} = {_value_text(value, o.type)}")
    for e, observed, o in zip(m.expected, m.vector.outputs, info.destinations):
        lines.append(f"    expected {o.name:10} = {_value_text(e, o.type)}")
        lines.append(f"    observed {o.name:10} = {_value_text(observed, o.type)}")
    return lines


def report(summary: Summary, max_mismatches: int) -> list[str]:
    lines = [
        f"checked {summary.checked} vector(s) under profile {summary.profile}: {summary.matched} matched, {summary.mismatched} mismatched, "
        f"{summary.unsupported_count} unsupported"
    ]
    if summary.by_instr:
        width = max(len(k) for k in summary.by_instr)
        for k, c in sorted(summary.by_instr.items()):
            lines.append(f"  {k:{width}}  checked {c.checked:8}  matched {c.matched:8}  mismatched {c.mismatched:8}")
    if summary.unsupported:
        lines.append("unsupported (not checked):")
        for first in sorted(summary.unsupported, key=lambda u: u.instr):
            count = summary.unsupported_by_instr[first.instr]
            lines.append(f"  {shorten(printable(first.instr), 120)}: {count} vector(s), first at {first.where}: {printable(first.reason)}")
    if summary.mismatches and max_mismatches:
        shown = summary.mismatches[:max_mismatches]
        lines.append(f"first {len(shown)} of {summary.mismatched} mismatch(es):")
        for m in shown:
            lines += describe_mismatch(m)
    return lines


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
            inputs: list[str | list[str]] = []
            for operand, col, width in zip(form.sources, sources, in_widths):
                values = [_hex(int(x) & ((1 << width) - 1), width) for x in col[lanes]]
                inputs.append(values[0] if operand.name == "membermask" else values)
            lane_outputs = [[_hex(int(x) & ((1 << width) - 1), width) for x in col[lanes]] for col, width in zip(recorded.outputs, out_widths)]
            yield {"instr": instr, "inputs": inputs, "outputs": lane_outputs, "active": _hex(int(active[WARP_SIZE * w]), 32), "profile": "sm_90"}
        return
    for i in range(len(recorded.outputs[0])) if rows is None else rows:
        inputs = [_hex(int(col[i]) & ((1 << w) - 1), w) for col, w in zip(recorded.inputs, in_widths)]
        outputs = [_hex(int(col[i]) & ((1 << w) - 1), w) for col, w in zip(recorded.outputs, out_widths)]
        yield {"instr": instr, "inputs": inputs, "outputs": outputs, "profile": "sm_90"}


#: The recordings that ship with the package (its data folder), by name.
SHIPPED = Path(__file__).resolve().parent / "data"


def recording_folder(name_or_folder: str) -> Path:
    """The folder of a recording: ``name_or_folder`` where it is a folder, else the recording of
    that name that ships with ptxspec (``sm_90``), from wherever the command runs."""
    folder = Path(name_or_folder)
    if folder.is_dir():
        return folder
    shipped = SHIPPED / name_or_folder
    if "/" not in name_or_folder and shipped.is_dir() and any(shipped.glob("meta-*.json")):
        return shipped
    names = sorted(p.name for p in SHIPPED.iterdir() if p.is_dir() and any(p.glob("meta-*.json"))) if SHIPPED.is_dir() else []
    raise PtxSpecError(
        f"{name_or_folder!r} is neither a folder nor a recording that ships with ptxspec ({', '.join(names) or 'none installed'})",
        where="<command line>, --recording",
    )


def recording_batches(directory=None, select=None, progress=None, *, root: str | None = None) -> Iterator[list[Vector | MatrixVector | Unsupported | Block]]:
    """Every vector of a silicon recording (:func:`ptxspec.conformance.silicon.replay.load`; default
    ``conformance/data/sm_90``) as check-vectors items, one recorded form after another (a form's
    vectors made only when they are checked): a scalar form with a batched fast path as one
    :class:`Block` of its columns, any other form vector by vector through this module's JSON
    schema (:func:`recorded_vectors`, at most :data:`RECORDED_BATCH` at a time), each located as
    ``DIR/CAMPAIGN:FORM`` and the vector's number. ``select``, if given, picks the recorded forms
    (a predicate on their text); ``progress(what, done, total)`` is told the vectors made.
    ``directory`` may be a recording already loaded (``root``: the folder it was read from)."""
    from ptxspec.conformance.silicon import replay

    if isinstance(directory, replay.Recording):  # already loaded
        recording, root = directory, root or "conformance/data/sm_90"
    else:
        recording = replay.load(directory) if directory is not None else replay.load()
        root = str(directory) if directory is not None else "conformance/data/sm_90"
    chosen = [(text, recorded) for text, recorded in recording.forms.items() if select is None or select(text)]
    total = sum(len(r.outputs[0]) // (WARP_SIZE if r.warp else 1) for _, r in chosen)
    done = 0
    for text, recorded in chosen:
        instr = text.split("#")[0]
        source = f"{root}/{recorded.campaign}:{text}"
        info = _form_info(instr)
        if isinstance(info, str):
            yield [Unsupported(instr, info, Location(source, 1))]
            continue
        n = len(recorded.outputs[0]) // (WARP_SIZE if recorded.warp else 1)
        scalar = not recorded.warp and not getattr(info, "matrix", False)
        plain = cast(_FormInfo, info)  # Block, Vector and _vector take a non-matrix form's info
        # A recorded register wider than its operand (a narrow result stored extended) is cut to
        # the operand's width, as the replay reads it.
        sources = tuple(_cut(c, w) for c, w in zip(recorded.inputs, plain.source_widths)) if scalar else ()
        outputs = tuple(_cut(c, w) for c, w in zip(recorded.outputs, plain.destination_widths)) if scalar else ()
        if scalar and has_fast_path(info.form, "sm_90"):
            yield [Block(plain, source, np.arange(1, n + 1), sources, outputs, None, "sm_90")]
        elif scalar:  # vector by vector, made straight from the columns (what _vector reads from their JSON)
            for start in range(0, n, RECORDED_BATCH):
                part = slice(start, min(start + RECORDED_BATCH, n))
                pairs = zip(zip(*(c[part].tolist() for c in sources)), zip(*(c[part].tolist() for c in outputs)))
                yield [Vector(plain, ins, outs, None, None, Location(source, number)) for number, (ins, outs) in enumerate(pairs, start + 1)]
        else:
            for start in range(0, n, RECORDED_BATCH):
                rows = range(start, min(start + RECORDED_BATCH, n))
                yield [_vector(json.dumps(obj), obj, plain, source, number) for number, obj in enumerate(recorded_vectors(recorded, rows), start + 1)]
        done += n
        if progress is not None:
            progress(root, done, total, unit="vectors")


#: Recorded vectors of a form without a batched fast path made at a time.
RECORDED_BATCH = 1 << 14


def _cut(column, width: int) -> np.ndarray:
    """A recorded column as uint64 bit patterns of a ``width``-bit operand."""
    return np.asarray(column).astype(np.uint64) & np.uint64((1 << width) - 1)


def recording_items(directory: str | Path | None = None, select=None) -> list[Vector | MatrixVector | Unsupported | Block]:
    """Every item of :func:`recording_batches`, held at once."""
    return [item for batch in recording_batches(directory, select) for item in batch]


# ---------------------------------------------------------------------------------------------
# A recording as a campaign: chunks of recorded forms on the campaign engine
# ---------------------------------------------------------------------------------------------

#: Recorded forms per chunk of ``check-vectors --recording`` (the sm_90 recording's 6,520 forms
#: make 51 chunks: enough to spread over a cluster, few enough that reading the recording in each
#: chunk costs little).
RECORDING_CHUNK = 128


@attrs.frozen
class DescribedMismatch:
    """A mismatch found by a campaign worker: its place and the lines that describe it."""

    where: Location
    lines: tuple[str, ...]

    def describe(self) -> list[str]:
        return list(self.lines)


def check_recording_chunk(folder: str, start: int, stop: int, profile: str, keep: int | None, digest: str = "") -> dict:
    """Check the recorded forms ``start`` to ``stop`` (in the recording's order) of the recording
    in ``folder``: one task of the campaign (a JSON value: the counts, the unsupported forms, and
    the first ``keep`` mismatches described). ``digest`` (:func:`_folder_digest`) only tells the
    campaign's store which recording the chunk was checked in."""
    from ptxspec.conformance.silicon import replay

    recording = replay.load(folder)
    chosen = set(list(recording.forms)[start:stop])
    summary = check_batches(recording_batches(recording, select=chosen.__contains__, root=folder), profile, keep=keep)
    summary.finish()
    return {
        "by_instr": {k: attrs.asdict(c) for k, c in summary.by_instr.items()},
        "unsupported": [[u.instr, u.reason, u.where.source, u.where.line] for u in summary.unsupported],
        "unsupported_by_instr": summary.unsupported_by_instr,
        "mismatches": [[m.vector.where.source, m.vector.where.line, describe_mismatch(m)] for m in summary.mismatches],
    }


def _folder_digest(folder: Path) -> str:
    """SHA-256 of every file of a recording's folder, names and bytes, in name order."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _chunk_summary(result: dict, profile: str) -> Summary:
    """A chunk's JSON result (:func:`check_recording_chunk`) as a Summary."""
    summary = Summary(profile)
    summary.by_instr = {k: Counts(**c) for k, c in result["by_instr"].items()}
    summary.unsupported = [Unsupported(instr, reason, Location(source, line)) for instr, reason, source, line in result["unsupported"]]
    summary.unsupported_by_instr = dict(result["unsupported_by_instr"])
    summary.add_mismatches(DescribedMismatch(Location(source, line), tuple(lines)) for source, line, lines in result["mismatches"])
    return summary


def check_recording(folder: str, profile: str, *, keep: int | None, engine: dict, progress=None) -> Summary:
    """Check every vector of the recording in ``folder`` as a campaign on the engine
    (:mod:`ptxspec.conformance.campaign_engine`: here, on a LocalCluster, or on a running
    cluster, resumable), :data:`RECORDING_CHUNK` recorded forms per task; the summary is the same
    whatever the workers (chunks combined in their order)."""
    from ptxspec.conformance import campaign_engine
    from ptxspec.conformance.silicon import replay

    count = len(replay.load(folder).forms)
    # The recording's bytes are part of each task, so that --resume never takes a chunk checked
    # in a recording since re-recorded.
    digest = _folder_digest(Path(folder))
    tasks = [
        campaign_engine.Task(
            f"recording-{start:06d}", f"{__name__}:check_recording_chunk", (folder, start, min(start + RECORDING_CHUNK, count), profile, keep, digest)
        )
        for start in range(0, count, RECORDING_CHUNK)
    ]
    results = campaign_engine.run(tasks, **engine, progress=progress)
    summary = Summary(profile, keep=keep)
    for result in results.values():
        assert isinstance(result, dict)
        summary.absorb(_chunk_summary(result, profile))
    return summary.finish()


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@click.command("check-vectors")
@click.argument("paths", metavar="FILE...", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--recording",
    "recording",
    metavar="NAME|DIR",
    default=None,
    help="Also check every vector of a silicon recording: one that ships with ptxspec by NAME (sm_90), or the one in DIR.",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILE_NAMES),
    default="spec",
    show_default=True,
    help="spec: accept every result the manual allows; sm_90: only what an H100/H200 produces, where measured.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one summary object instead of text.")
@click.option("--max-mismatches", type=click.IntRange(min=0), default=10, show_default=True, help="How many mismatches to print in full.")
@click.option(
    "--testfloat",
    "testfloat_form",
    metavar="FORM",
    default=None,
    help="Every FILE is in TestFloat's testfloat_gen layout, vectors of FORM (e.g. 'add.rn.f32'); results and IEEE 754 flags are checked.",
)
@campaign_engine.options
def check_vectors_command(
    paths: tuple[str, ...],
    recording: str | None,
    profile: str,
    as_json: bool,
    max_mismatches: int,
    testfloat_form: str | None,
    workers: int | None,
    scheduler: str | None,
    store: Path | None,
) -> None:
    """Check golden vectors (JSON Lines, one vector per line, from any source) against the
    specification and summarise.

    \b
    A line:  {"instr": "fma.rn.f32", "inputs": ["0x3f800000", "0x40000000", "0x00000000"],
              "outputs": ["0x40000000"]}

    Exit status 0 when every vector matches, 1 when one does not (the first ones are printed with
    their decoded values), 2 on a malformed line (reported as file:line:column). Vectors of an
    instruction ptxspec does not know are counted as unsupported and do not stop the run.

    Files are read and checked a chunk at a time, in bounded memory whatever their size; on a
    terminal, standard error shows a progress bar.

    \b
    TestFloat files (one form per file, as 'ptxspec vectors --format testfloat' writes them):
      ptxspec check-vectors --testfloat add.rn.f32 add.tf
    A GPU recording (every vector it holds; compare with --profile sm_90), checked as a campaign
    of chunks of recorded forms on Dask (--workers, --scheduler, --resume: see 'Campaigns'):
      ptxspec check-vectors --recording sm_90 --profile sm_90
    """
    if not paths and recording is None:
        click.echo("ptxspec: error: <command line>: give FILE... or --recording NAME|DIR", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if recording is not None:
        try:
            recording = str(recording_folder(recording))
        except PtxSpecError as error:
            click.echo(f"ptxspec: error: {error.one_line()}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    progress = Progress()

    def batches():
        for path in paths:
            if testfloat_form is not None:
                yield from testfloat_batches(path, testfloat_form, progress)
            else:
                yield from file_batches(path, progress=progress)

    try:
        summary = Summary(profile, keep=max_mismatches)
        if recording is not None:
            engine = campaign_engine.settings(workers, scheduler, store)
            summary.absorb(
                check_recording(
                    recording,
                    profile,
                    keep=max_mismatches,
                    engine=engine,
                    progress=lambda done, total: progress(f"checking {recording}", done, total, unit="chunks"),
                )
            )
        if paths:
            summary.absorb(check_batches(batches(), profile, keep=max_mismatches))
    except PtxSpecError as error:
        progress.close()
        click.echo(f"ptxspec: error: {error.one_line()}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    progress.close()
    from ptxspec.conformance.cli import echo

    if as_json:
        echo(json.dumps(summary.to_json()))
        if summary.mismatches and max_mismatches:
            for m in summary.mismatches[:max_mismatches]:
                click.echo("\n".join(describe_mismatch(m)), err=True)
    else:
        for line in report(summary, max_mismatches):
            echo(line)
    if summary.checked == 0:
        click.echo("ptxspec: warning: no vector was checked", err=True)
    sys.exit(summary.exit_code)


__all__ = [
    "Block",
    "Lines",
    "Summary",
    "Vector",
    "canonical_blocks",
    "check_batch",
    "check_batches",
    "check_file",
    "check_form",
    "check_vectors",
    "check_vectors_command",
    "file_batches",
    "load_json_line",
    "read_items",
    "read_lines",
    "read_testfloat",
    "read_vectors",
    "recorded_vectors",
    "recording_batches",
    "recording_items",
    "testfloat_batches",
]
