"""The ``ptxspec`` command line. It only orchestrates: the meaning is in semantics/ and spec/.

Every bad input ends in a one-line, located message on standard error and exit code 2: a
command-line argument is named by its position (``<command line>, argument 3``), a line of an
``--file`` by ``file:line:column``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import click

from ptxspec import PTX_ISA_VERSION, __version__
from ptxspec.profiles import NAMES as PROFILE_NAMES
from ptxspec.spec.errors import Location, OperandError, PtxSpecError, printable, shorten

if TYPE_CHECKING:
    from ptxspec.semantics.state import State
    from ptxspec.spec.catalogue import Form

# A PTX floating-point hex literal (§4.5.2: "0f" + 8 hex digits for .f32, "0d" + 16 for .f64), a
# hex, binary or decimal integer. Underscores may group digits.
_OPERAND = re.compile(r"(?:0[fFdDxX](?P<hex>[0-9a-fA-F_]+)|0[bB](?P<bin>[01_]+)|(?P<minus>-?)(?P<dec>[0-9][0-9_]*))")


def parse_operand(text: str, position: int | Location | str) -> int:
    """An operand bit pattern: ``0x3f800000``, ``0b101``, a decimal integer, or a PTX
    floating-point hex literal ``0f3F800000`` / ``0d3FF0000000000000`` (§4.5.2). A negative decimal
    stays negative here: :func:`twos_complement` makes it the operand's bits once its width is known.

    ``position`` is the operand's place, for the error message: an operand number on the command
    line, or a :class:`~ptxspec.spec.errors.Location`. A decimal integer of more digits than
    Python converts (``sys.get_int_max_str_digits()``, far more than any register holds) is an
    error here, located like the others.
    """
    where = f"<command line>, operand {position}" if isinstance(position, int) else position
    match = _OPERAND.fullmatch(text.strip())
    if match is None or text.strip().endswith("_"):
        if text.startswith("-") and str(where).startswith("<command line>"):
            raise OperandError(f"{shorten(text)!r} is neither an option of this command nor a bit pattern (see --help)", where=where)
        raise OperandError(f"{shorten(text)!r} is not a bit pattern (use 0x..., 0f..., 0d..., 0b... or a decimal integer)", where=where)
    if match["hex"] is not None:
        return int(match["hex"].replace("_", ""), 16)
    if match["bin"] is not None:
        return int(match["bin"].replace("_", ""), 2)
    digits = match["dec"].replace("_", "").lstrip("0") or "0"
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) > limit:
        raise OperandError(f"{shorten(text)!r} has {len(digits)} decimal digits, more than any register holds (Python converts at most {limit})", where=where)
    return -int(digits, 10) if match["minus"] else int(digits, 10)


def twos_complement(value, bits: int):
    """A negative decimal operand (or lane) as the ``bits``-bit two's complement pattern it names
    (§4.5.1: "-1" of a .s32 operand is 0xffffffff); one that does not fit is left for the
    register check to refuse."""
    if isinstance(value, tuple):
        return tuple(twos_complement(v, bits) for v in value)
    return value + (1 << bits) if -(1 << (bits - 1)) <= value < 0 else value


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


# ---------------------------------------------------------------------------------------------
# Output: a write that fails (a full disk, ``> /dev/full``) is one located error, exit 2
# ---------------------------------------------------------------------------------------------

STDOUT = "<standard output>"


def _output_error(error: OSError, where: str) -> PtxSpecError:
    return PtxSpecError(f"cannot write {'the output' if where == STDOUT else 'the file'}: {error.strerror or error}", where=where)


def echo(text: str) -> None:
    """``click.echo`` to standard output; a failed write is a located error (a closed pipe stays
    a :class:`BrokenPipeError`, which :func:`main` ends quietly)."""
    try:
        click.echo(text)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _output_error(error, STDOUT) from None


def write_output(path: str, write) -> None:
    """Call ``write(stream)`` with a binary stream to ``path`` (``-``: standard output), which
    writes the output as it is made, so that output of any size streams. A failed write (a full
    disk) is a located error, and a file left half-written by an error is removed; a closed pipe
    stays a :class:`BrokenPipeError`, which :func:`main` ends quietly."""
    if path == "-":
        # sys.stdout as it is at the call (click.testing swaps it), not click's stream helpers.
        stream = sys.stdout.buffer
        try:
            write(stream)
            stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _output_error(error, STDOUT) from None
        return
    try:
        out = open(path, "wb")
        regular = stat.S_ISREG(os.fstat(out.fileno()).st_mode)
    except OSError as error:
        raise _output_error(error, path) from None
    try:
        with out:
            write(out)
    except BaseException as error:
        if regular:  # never a device or a pipe named on the command line (-o /dev/full)
            try:
                os.unlink(path)
            except OSError:
                pass
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):
            raise _output_error(error, path) from None
        raise


def write_chunks(path: str, chunks) -> None:
    """:func:`write_output` of the byte strings ``chunks``, each written as it comes."""

    def write(stream) -> None:
        for chunk in chunks:
            stream.write(chunk)

    write_output(path, write)


def _silence_stdout() -> None:
    """Point standard output at the null device, so that what is still buffered for it cannot fail
    again when the interpreter exits (no "Exception ignored" noise after the error line)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # not a file descriptor (a test's captured stream)
        pass


# ---------------------------------------------------------------------------------------------
# One evaluation request: an instruction and its operands, each with where it came from
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Request:
    """An instruction text and its operand texts, with the location of each (for error messages)
    and the location just past the last operand (where a missing operand would go)."""

    instruction: str
    instruction_at: Location | str
    operands: tuple[tuple[str, Location | str], ...]
    end: Location | str
    line: Location | str


@attrs.frozen
class Evaluation:
    form: Form
    sources: tuple[int, ...]
    results: tuple[object, ...]
    line: Location | str
    #: The instruction as printed: the form's canonical text, followed by its operand template
    #: (``mov.b64 d, {a.x, a.y}``) when the request wrote one.
    instruction: str = ""
    #: For a form of state (tcgen05): the state it read and the state it left, and the warp rank.
    state: State | None = None
    state_after: State | None = None
    warp: int | None = None


def has_template(instruction: str) -> bool:
    """Whether an instruction text carries an operand template (``"mov.b64 d, {a, b}"``)."""
    return len(instruction.split(None, 1)) > 1


def is_warp_form(form) -> bool:
    """Whether ``form``'s operands are the lanes of a warp (the warp-level collectives of
    :mod:`ptxspec.semantics.warp`, mma, movmatrix: :data:`~ptxspec.semantics.instructions.WARP_LANES`)."""
    from ptxspec.semantics.instructions import WARP_LANES, operands_of

    return operands_of(form) == WARP_LANES


def parse_warp_operand(text: str, where: Location | str, threads: int = 32) -> int | tuple[int, ...]:
    """A warp operand: 32 comma-separated lane values (lane 0 first), or one value for every lane."""
    if "," not in text:
        return parse_operand(text, where)
    lanes = text.split(",")
    if len(lanes) != threads:
        raise OperandError(f"a warp operand is {threads} comma-separated lane values (or one value for all lanes), got {len(lanes)}", where=where)
    return tuple(parse_operand(lane, where) for lane in lanes)


def prepare(request: Request, mask: int | None = None, *, has_state: bool = False):
    """Parse the instruction and operands of ``request`` and check them with
    :func:`~ptxspec.semantics.instructions.check_sources` (the check ``evaluate`` makes), locating
    whatever is wrong at the operand's text.

    For a warp-level form, an operand may be 32 comma-separated lane values, and a missing last
    operand ``membermask`` is ``mask`` (default 0xffffffff). A form whose semantics takes a state
    (tcgen05, ldmatrix, ...) needs one (``has_state``: ``--state FILE.json`` was given)."""
    from ptxspec.semantics.instructions import REGISTERS, SourceError, check_sources, semantic_of, with_offsets
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.types import register_bits

    form = parse(request.instruction, where=request.instruction_at)
    kind = semantic_of(form).operands
    if kind.state and not has_state and not kind.default_state:
        raise OperandError(
            f"{form.text} reads memory (a state: shared or global memory, Tensor Memory): without --state FILE.json `ptxspec eval` takes register operands only; "
            "give the state with --state FILE.json (the schema: docs/vectors.rst, 'State files'; examples: examples/memory/state.json, examples/tcgen05/state.json)",
            where=request.instruction_at,
            section=form.family.section,
        )
    warp = kind != REGISTERS and kind.threads > 1
    if kind.state and mask is not None:
        raise OperandError(f"{form.text} has no membermask operand; --mask is for warp-level collectives", where="<command line>, --mask")
    if warp:
        sources = tuple(parse_warp_operand(text, where, kind.threads) for text, where in request.operands)
    else:
        if mask is not None:
            raise OperandError(f"{form.text} has no membermask operand; --mask is for warp-level instructions", where="<command line>, --mask")
        sources = tuple(parse_operand(text, where) for text, where in request.operands)
    warp = warp and not kind.state  # the membermask rule below is the collectives'
    expected = form.inputs
    sources = tuple(twos_complement(v, register_bits(o.type)) for v, o in zip(sources, expected)) + sources[len(expected) :]
    if warp and expected and expected[-1].name == "membermask" and len(sources) == len(expected) - 1:
        sources = (*sources, 0xFFFFFFFF if mask is None else mask)
    elif warp and mask is not None:
        raise OperandError(
            f"{form.text}: give membermask either as the last operand or as --mask, not both (or the form has none)", where="<command line>, --mask"
        )
    try:
        return form, with_offsets(form, request.instruction, check_sources(form, sources, kind))
    except SourceError as error:
        if error.operand is None:  # the count: located at the first operand too many, or past the last
            error.where = request.operands[len(expected)][1] if len(sources) > len(expected) else request.end
        else:
            error.where = request.operands[error.operand][1]
        raise


def run(
    request: Request, profile: str, mask: int | None = None, active: int | None = None, *, state: State | None = None, warp: int | None = None
) -> Evaluation:
    """Evaluate one request; an error from the semantics is located at the request's line.
    ``mask`` and ``active`` are the membermask and the executing lanes of a warp-level form;
    ``state`` the state that a form of state (tcgen05) reads, ``warp`` its warp rank (tcgen05.ld/st)."""
    from ptxspec.semantics.instructions import evaluate, execute, operands_of

    form, sources = prepare(request, mask, has_state=state is not None)
    kind = operands_of(form)
    if warp is not None and not (kind is not None and kind.warp_rank):
        raise OperandError(
            f"{form.text} does not depend on the warp's rank in its warpgroup; --warp is for tcgen05.ld, tcgen05.ld.red and tcgen05.st",
            where="<command line>, --warp",
        )
    if kind is not None and kind.state:
        if state is None and kind.default_state:
            from ptxspec.semantics.state import State

            state = State()
        if active is not None and kind.threads == 1:
            raise OperandError(f"{form.text} is executed by one thread; --active is for warp-level instructions", where="<command line>, --active")
        try:
            outcome = execute(form, sources, profile, active=active, state=state, warp=warp)
        except PtxSpecError as error:
            if error.where is None or error.where == form.text:
                error.where = f"{request.line}: {form.text}"
            raise
        return Evaluation(form, sources, outcome.results, request.line, form.text, state, outcome.state, warp)
    if active is not None and not is_warp_form(form):
        raise OperandError(f"{form.text} is not a warp-level instruction; --active is for warp-level instructions", where="<command line>, --active")
    try:
        results = evaluate(form, sources, profile, active=active)
    except PtxSpecError as error:
        if error.where is None or error.where == form.text:
            error.where = request.line
        raise
    text = f"{form.text} {form.template}" if has_template(request.instruction) else form.text
    return Evaluation(form, sources, results, request.line, text)


def _outputs(evaluation: Evaluation) -> list:
    from ptxspec.spec.types import register_bits

    widths = [register_bits(d.type) for d in evaluation.form.destinations]
    return [_hex(r, w) if isinstance(r, int) else r for r, w in zip(evaluation.results, widths)]


def to_json(evaluation: Evaluation, profile: str, *, where: bool = False) -> dict:
    """The ``--json`` object: ``instr``, ``inputs`` and ``outputs`` (hex strings, or an allowed set's
    JSON form), ``profile``; ``where`` (``file:line``) in ``--file`` mode."""
    from ptxspec.spec.types import register_bits

    inputs = [
        _operand_text(v, register_bits(o.type)) if isinstance(v, tuple) else _hex(v, register_bits(o.type))
        for v, o in zip(evaluation.sources, evaluation.form.sources)
    ]
    outputs = [o if isinstance(o, str) else o.to_json() for o in _outputs(evaluation)]
    obj = {"instr": evaluation.instruction or evaluation.form.text, "inputs": inputs, "outputs": outputs, "profile": profile}
    if where:
        obj["where"] = str(evaluation.line)
    return obj


def _operand_text(value: int | tuple[int, ...], width: int) -> str:
    """An operand as text: its bits in hex, or a warp operand's 32 lanes separated by commas."""
    return ",".join(_hex(v, width) for v in value) if isinstance(value, tuple) else _hex(value, width)


def describe(evaluation: Evaluation, *, table: bool = True) -> list[str]:
    """One text per destination: its bits in hex, or the allowed set described. A warp's results
    (mma, shfl, ...) are a table (``table``, for a terminal): a lane a row, a destination register
    a column (or one line per register that holds the same in every lane); else, as a ``--file``
    line gives them, each destination's 32 lanes comma-separated."""
    outputs = _outputs(evaluation)
    lanes = [getattr(o, "lanes", None) for o in outputs]
    if not table or not outputs or any(lane is None for lane in lanes):
        return [o if isinstance(o, str) else o.describe() for o in outputs]
    names = [d.name for d in evaluation.form.destinations]
    columns = [o.lane_texts() for o in outputs]
    if all(len(set(column)) == 1 for column in columns):
        return [f"{name}: {column[0]} in every lane" for name, column in zip(names, columns)]
    widths = [max(len(name), *(len(t) for t in column)) for name, column in zip(names, columns)]
    head = "lane  " + "  ".join(f"{name:<{w}}" for name, w in zip(names, widths))
    rows = [f"{lane:<4}  " + "  ".join(f"{column[lane]:<{w}}" for column, w in zip(columns, widths)) for lane in range(len(columns[0]))]
    return [head.rstrip()] + [row.rstrip() for row in rows]


# ---------------------------------------------------------------------------------------------
# Forms of state (tcgen05): the results lane by lane, and what changed in the state
# ---------------------------------------------------------------------------------------------


def matrix_view(evaluation: Evaluation) -> list[str]:
    """The destination matrix D of an ``mma`` / ``mma.sp`` as a matrix (``eval --matrix``): each
    element where the fragment layout of §9.7.14.5 puts it (lane, register and position in the
    register: :meth:`~ptxspec.semantics.matrix_layout.FragmentLayout.element`), its bits in hex,
    or the set of values the manual allows ('*' where a packed register's set does not split by
    element)."""
    from ptxspec.semantics.mma import _layouts

    form = evaluation.form
    if form.opcode != "mma" or not all(hasattr(r, "lanes") for r in evaluation.results):
        raise OperandError(f"--matrix shows the D matrix of mma and mma.sp; {form.text} is not one", where="<command line>, --matrix")
    layout = _layouts(form)["d"]
    cells = [["" for _ in range(layout.cols)] for _ in range(layout.rows)]
    digits = max(1, (layout.element_bits + 3) // 4)
    for register, result in enumerate(evaluation.results):
        for lane, value in enumerate(result.lanes):  # type: ignore[attr-defined]
            for index in range(layout.per_register):
                row, col = layout.element(lane, register, index)
                element = value
                if isinstance(value, int):
                    element = value >> (index * layout.element_bits) & ((1 << layout.element_bits) - 1)
                elif layout.per_register > 1:  # a packed register of sets: element 0 in the low bits, Lanes' last lane
                    parts = getattr(value, "lanes", None)
                    element = parts[len(parts) - 1 - index] if parts is not None and len(parts) == layout.per_register else None
                cells[row][col] = f"0x{element:0{digits}x}" if isinstance(element, int) else "*" if element is None else element.describe()
    width = max(len(c) for row in cells for c in row)
    head = "row\\col " + " ".join(f"{c:<{width}}" for c in range(layout.cols))
    return [head.rstrip()] + [f"{r:<7} " + " ".join(f"{c:<{width}}" for c in row).rstrip() for r, row in enumerate(cells)]


def _lanes_text(result, width: int) -> str:
    """A destination of a warp form of state: one value when every lane holds it, else the 32
    lanes, comma-separated ('undefined' where the manual leaves a lane's value undefined)."""
    lanes = getattr(result, "lanes", None)
    if lanes is None:
        return _hex(result, width) if isinstance(result, int) else result.describe()
    texts = [_hex(v, width) if isinstance(v, int) else v.describe() for v in lanes]
    return f"{texts[0]} in every lane" if len(set(texts)) == 1 else ",".join(texts)


def describe_state(evaluation: Evaluation) -> list[str]:
    """The lines ``ptxspec eval --state`` prints: ``NAME: lanes`` per destination register, then
    what changed in the state (:func:`~ptxspec.conformance.state_json.diff_lines`)."""
    from ptxspec.conformance.state_json import diff_lines

    lines = [f"{d.name}: {_lanes_text(r, _width(d.type))}" for r, d in zip(evaluation.results, evaluation.form.destinations)]
    assert evaluation.state is not None and evaluation.state_after is not None
    return lines + diff_lines(evaluation.state, evaluation.state_after)


def state_to_json_object(evaluation: Evaluation, profile: str, *, where: bool = False) -> dict:
    """The ``--json`` object of a form of state: ``instr``, ``inputs`` (as a vector line writes
    them), ``warp`` (ld/st), ``outputs`` (per destination the 32 lanes: hex, or a set's JSON form),
    ``changes`` (:func:`~ptxspec.conformance.state_json.diff`), ``state_after`` (the whole new
    state), ``profile``; ``where`` in ``--file`` mode."""
    from ptxspec.conformance.state_json import diff, state_to_json
    from ptxspec.conformance.tcgen05_vectors import inputs_json, outputs_json

    assert evaluation.state is not None and evaluation.state_after is not None
    form = evaluation.form
    obj: dict = {"instr": form.text, "inputs": inputs_json(form, evaluation.sources)}
    if evaluation.warp is not None:
        obj["warp"] = evaluation.warp
    outputs, allowed = outputs_json(form, evaluation.results)
    obj["outputs"] = outputs
    if allowed is not None:
        obj["allowed"] = allowed
    obj["changes"] = diff(evaluation.state, evaluation.state_after)
    obj["state_after"] = state_to_json(evaluation.state_after)
    obj["profile"] = profile
    if where:
        obj["where"] = str(evaluation.line)
    return obj


# ---------------------------------------------------------------------------------------------
# --file: one "INSTRUCTION OPERAND..." per line
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\S+")


def read_requests(path: str) -> list[Request]:
    """The requests of an eval file: one ``INSTRUCTION [TEMPLATE] OPERAND...`` per line, separated
    by blanks (commas are allowed too, as in PTX); ``#`` or ``//`` starts a comment; blank lines are
    skipped. An operand template (``mov.b64 d, {a, b} 0x1 0x2``) is the register names and braces
    after the instruction, up to the first operand value (which starts with a digit)."""
    from ptxspec.conformance.check_vectors import read_lines

    source = "<stdin>" if path == "-" else path
    requests = []
    for lines in read_lines(path, "lines 'INSTRUCTION OPERAND...'"):  # no line break in 16 MiB (/dev/zero): an error there
        try:
            text = lines.data.decode("utf-8")
        except UnicodeDecodeError as error:
            data = lines.data
            line = lines.first + data[: error.start].count(b"\n")
            column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
            raise PtxSpecError("the file is not UTF-8 text", where=Location(source, line, column)) from None
        requests += _requests_of(text, source, lines.first)
    if not requests:
        raise PtxSpecError("the file holds no instruction (expected lines 'INSTRUCTION OPERAND...')", where=Location(source))
    return requests


def _requests_of(text: str, source: str, first: int) -> list[Request]:
    """The requests of the lines ``text`` of an eval file, the first of them line ``first``."""
    requests = []
    for number, raw in enumerate(text.split("\n"), start=first):
        code = _strip_comment(raw)
        start = _TOKEN.search(code)
        if start is None:
            continue
        head_end = _template_end(code, start.end())
        instruction = code[start.start() : head_end].rstrip().rstrip(",").rstrip()
        # Commas separate operand values as blanks do; columns stay those of the line.
        rest = " " * head_end + code[head_end:].replace(",", " ")
        operands = [(m.group(), Location(source, number, m.start() + 1)) for m in _TOKEN.finditer(rest)]
        end = Location(source, number, len(rest.rstrip()) + 2)
        requests.append(Request(instruction, Location(source, number, start.start() + 1), tuple(operands), end, Location(source, number)))
    return requests


def _template_end(line: str, start: int) -> int:
    """Where the operand template that may follow the instruction at ``line[:start]`` ends: it is
    made of register names (a letter, ``%``, ``_`` or ``$`` first), ``|``, commas and braced
    vectors; the operand values start with a digit."""
    k, end, n = start, start, len(line)
    while True:
        while k < n and (line[k].isspace() or line[k] == ","):
            k += 1
        if k >= n:
            return end
        c = line[k]
        if c == "{":
            close = line.find("}", k)
            k = n if close == -1 else close + 1
        elif c.isalpha() or c in "%_$|":
            while k < n and not line[k].isspace() and line[k] not in ",{":
                k += 1
        else:
            return end
        end = k


def _strip_comment(line: str) -> str:
    cut = len(line)
    for marker in ("#", "//"):
        i = line.find(marker)
        if i != -1:
            cut = min(cut, i)
    return line[:cut]


def command_line_request(instruction: str, operands: Sequence[str]) -> Request:
    """The request of ``ptxspec eval INSTRUCTION OPERAND...``."""
    return Request(
        instruction,
        "<command line>, INSTRUCTION",
        tuple((text, f"<command line>, operand {i}") for i, text in enumerate(operands, start=1)),
        f"<command line>, operand {len(operands) + 1}",
        "<command line>",
    )


def inputs_file_request(instruction: str, path: str) -> Request:
    """The request of ``ptxspec eval --inputs FILE.json INSTRUCTION``: the operands from the file
    (:mod:`ptxspec.conformance.inputs_json`), each located at its key."""
    from ptxspec.conformance.inputs_json import load_inputs
    from ptxspec.spec.catalogue import parse

    form = parse(instruction, where="<command line>, INSTRUCTION")
    operands = tuple(load_inputs(path, form))
    source = "<stdin>" if path == "-" else path
    return Request(instruction, "<command line>, INSTRUCTION", operands, source, source)


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------


#: The commands that live in their own modules, imported only when run or listed with their
#: help (``ptxspec --version`` and ``eval`` do not pay for them): name -> (module, command).
LAZY_COMMANDS = {
    "litmus": ("ptxspec.conformance.litmus_cli", "litmus_command"),
    "litmus-gen": ("ptxspec.conformance.litmus_gen", "litmus_gen_command"),
    "litmus-run": ("ptxspec.conformance.litmus_run", "litmus_run_command"),
    "check-vectors": ("ptxspec.conformance.check_vectors", "check_vectors_command"),
    "vectors": ("ptxspec.conformance.vectors", "vectors_command"),
    "exhaustive-check": ("ptxspec.conformance.silicon.exhaustive", "exhaustive_check_command"),
}

#: Each command's line in ``ptxspec --help``: whole, where click would cut the docstring's first
#: sentence at its first period ("e.g.") or at the terminal's width.
SUMMARIES = {
    "eval": "Evaluate one instruction on operand bit patterns.",
    "forms": "List the catalogue's instruction syntaxes.",
    "litmus": "Check litmus tests against the PTX memory model.",
    "litmus-gen": "Generate families of litmus tests.",
    "litmus-run": "Run litmus tests on a GPU, or check a recording of them.",
    "vectors": "Write golden vectors of instructions.",
    "check-vectors": "Check golden vectors or a GPU recording.",
    "exhaustive-check": "Replay the exhaustive GPU digests (long).",
}


class _Commands(click.Group):
    """The command group: the :data:`LAZY_COMMANDS` imported on first use, every command listed
    with its :data:`SUMMARIES` line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in LAZY_COMMANDS:
            import importlib

            module, attribute = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        command = self.commands.get(name)
        if command is not None and name in SUMMARIES:
            command.short_help = SUMMARIES[name]
        return command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ptxspec", message=f"%(prog)s %(version)s (PTX ISA {PTX_ISA_VERSION})")
def cli() -> None:
    """ptxspec: an executable formal specification of NVIDIA PTX and a conformance oracle."""


PROFILE_OPTION = click.option(
    "--profile",
    type=click.Choice(PROFILE_NAMES),
    default="spec",
    show_default=True,
    help="spec: the set of results the manual allows; sm_90: what an H100/H200 produces, where measured.",
)


@cli.command("eval", context_settings={"ignore_unknown_options": True})  # '-1' is an operand, not an option
@click.argument("instruction", required=False)
@click.argument("operands", nargs=-1)
@click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Evaluate every line 'INSTRUCTION OPERAND...' of this file ('-': standard input; '#' starts a comment).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object; with --file, one object per line) instead of hex.")
@click.option("--mask", "mask_text", default=None, help="Warp-level forms: the membermask operand when it is not given last [default: 0xffffffff].")
@click.option("--active", "active_text", default=None, help="Warp-level forms: the lanes that execute the instruction, a 32-bit mask [default: 0xffffffff].")
@click.option(
    "--state",
    "state_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="tcgen05 (and other forms of state): the JSON file of the state it reads -- Tensor Memory, shared memory (docs/vectors.rst, 'State files').",
)
@click.option(
    "--warp", "warp_text", default=None, help="tcgen05.ld/.ld.red/.st: the warp's rank in its warpgroup, 0-3 [default: the warp whose lanes taddr names]."
)
@click.option(
    "--state-out",
    "state_out",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="With --state: write the state after the instruction (after the last line, with --file) to this JSON file.",
)
@click.option("--matrix", "as_matrix", is_flag=True, help="mma, mma.sp: print the result as the D matrix (row by row) instead of lane by lane.")
@click.option(
    "--inputs",
    "inputs_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Read the source operands from this JSON file, one key per operand; mma and mma.sp take the matrices A, B, C (docs/vectors.rst, 'Input files').",
)
@PROFILE_OPTION
def eval_command(
    instruction: str | None,
    operands: tuple[str, ...],
    path: str | None,
    as_json: bool,
    mask_text: str | None,
    active_text: str | None,
    state_path: str | None,
    warp_text: str | None,
    state_out: str | None,
    as_matrix: bool,
    inputs_path: str | None,
    profile: str,
) -> None:
    """Evaluate INSTRUCTION (e.g. 'fma.rn.ftz.f32') on OPERANDS given as bit patterns.

    An operand is hex (0x3f800000), binary (0b101), a PTX float literal (0f3F800000, 0d...), or a
    decimal integer; a negative decimal is its two's complement at the operand's width (-1 of a
    .s32 operand is 0xffffffff).

    Prints one line per destination operand: its bits in hex, or, where the manual allows more than
    one result (a NaN of any payload, the error bound of an .approx instruction), the allowed set.

    With --file, every line of the file is checked first and then evaluated; each prints as
    'INSTRUCTION INPUTS -> OUTPUTS' (or one JSON object with --json).

    INSTRUCTION may carry an operand template after the qualifiers, as PTX writes the operands:
    the register names are ignored, braces mark a vector operand. It picks among forms that only
    their operands tell apart, such as the vector mov of §9.7.9.4: 'mov.b64 d, {a, b}' packs a
    (low) and b (high), 'mov.b64 {a, b}, d' unpacks ('_' may stand for an element it discards).
    An address may carry an offset, 'ld.global.u32 r, [a+4]' or 'cvta.global.u64 p, var+8': it is
    added to the operand's value.
    In a --file line the template follows the instruction, before the first operand value.

    \b
    Examples:
      ptxspec eval add.rn.f32 0x3f800000 0x40000000
      ptxspec eval --json --profile sm_90 add.f32 0x7fc00000 0x3f800000
      ptxspec eval --file examples/golden.txt
      ptxspec eval 'mov.b64 d, {a, b}' 0x1 0x2
      ptxspec eval 'mov.b32 {x, y, z, w}, d' 0x04030201
      ptxspec eval --mask 0xffff --active 0xffff shfl.sync.down.b32 0,1,...,31 1 0x1f

    A warp-level form takes a per-lane operand as 32 comma-separated lane values (lane 0 first) or
    one value for every lane, and prints its destinations as a table, a lane a row and a
    destination register a column ('undefined' where the manual leaves the lane's result
    undefined), or 'NAME: VALUE in every lane' where the lanes agree.

    A tcgen05 form (tcgen05.alloc, .dealloc, .ld, .ld.red, .st, .cp, .shift, .wait, .fence) acts
    on a state, read from --state FILE.json: it prints each destination register ('NAME: VALUE in
    every lane' or the 32 lanes) and then what changed -- Tensor Memory cells ('column C, lanes
    A-B: old -> new'), shared-memory bytes, allocations. With --file the lines run in order, each on the state
    the line before left.

    \b
      ptxspec eval --state examples/tcgen05/state.json tcgen05.ld.sync.aligned.32x32b.x2.b32 0x00000000
      ptxspec eval --state examples/tcgen05/state.json --warp 1 tcgen05.st.sync.aligned.16x64b.x1.b32 0x00200000 0x3f800000

    With --inputs FILE.json the operands come from a file, one key per operand name; an mma takes
    its matrices A, B and C as rows of elements (numbers, or bit patterns), placed in the lanes'
    registers by the manual's fragment layout:

    \b
      ptxspec eval --matrix --inputs examples/mma/inputs.json mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    """
    mask = None if mask_text is None else _mask_option(mask_text, "--mask")
    active = None if active_text is None else _mask_option(active_text, "--active")
    warp = None if warp_text is None else _warp_option(warp_text)
    state: State | None = None
    if state_path is not None:
        from ptxspec.conformance.state_json import load_state

        state = load_state(state_path)
    elif state_out is not None:
        raise OperandError("--state-out needs --state FILE.json (the state the instruction reads)", where="<command line>, --state-out")

    def show(evaluation: Evaluation, file_mode: bool) -> None:
        if evaluation.state_after is not None:
            if as_json:
                echo(json.dumps(state_to_json_object(evaluation, profile, where=file_mode)))
            elif file_mode:
                inputs = " ".join(_operand_text(v, _width(o.type)) for v, o in zip(evaluation.sources, evaluation.form.inputs))
                echo(f"{evaluation.instruction} {inputs}".rstrip() + " ->")
                for text in describe_state(evaluation):
                    echo(f"  {text}")
            else:
                for text in describe_state(evaluation):
                    echo(text)
        elif as_json:
            echo(json.dumps(to_json(evaluation, profile, where=file_mode)))
        elif file_mode:
            inputs = " ".join(_operand_text(v, _width(o.type)) for v, o in zip(evaluation.sources, evaluation.form.sources))
            echo(f"{evaluation.instruction} {inputs} -> {'; '.join(describe(evaluation, table=False))}")
        else:
            for text in matrix_view(evaluation) if as_matrix else describe(evaluation):
                echo(text)

    if as_matrix and (as_json or path is not None):
        raise click.UsageError("--matrix prints one evaluation's D matrix: not with --json or --file")
    if path is not None:
        if instruction is not None:
            raise click.UsageError("give either INSTRUCTION OPERANDS... or --file, not both")
        if inputs_path is not None:
            raise click.UsageError("--inputs gives one instruction's operands: not with --file")
        requests = read_requests(path)
        if state is None:
            evaluations = [run(request, profile, mask, active, warp=warp) for request in requests]
        else:  # each line acts on the state the line before left, so each runs before the next is read
            evaluations = []
            for request in requests:
                evaluation = run(request, profile, mask, active, state=state, warp=warp)
                state = evaluation.state_after if evaluation.state_after is not None else state
                evaluations.append(evaluation)
        for evaluation in evaluations:
            show(evaluation, True)
    else:
        if instruction is None:
            raise click.UsageError("missing INSTRUCTION (or --file)")
        if inputs_path is not None and operands:
            raise click.UsageError("give the operands either on the command line or with --inputs FILE.json, not both")
        request = command_line_request(instruction, operands) if inputs_path is None else inputs_file_request(instruction, inputs_path)
        evaluation = run(request, profile, mask, active, state=state, warp=warp)
        if evaluation.state_after is not None:
            state = evaluation.state_after
        elif state is not None:
            raise OperandError(f"{evaluation.form.text} reads no state; --state is for tcgen05 and the other forms of state", where="<command line>, --state")
        show(evaluation, False)
    if state_out is not None and state is not None:
        from ptxspec.conformance.state_json import dumps

        final = dumps(state) + "\n"
        write_output(state_out, lambda out: out.write(final.encode("utf-8")))


def _warp_option(text: str) -> int:
    value = parse_operand(text, "<command line>, --warp")
    if value > 3:
        raise OperandError(f"--warp is the warp's rank in its warpgroup (%warpid % 4): 0-3, not {shorten(text)}", where="<command line>, --warp")
    return value


def _mask_option(text: str, option: str) -> int:
    value = parse_operand(text, f"<command line>, {option}")
    if value >> 32:
        raise OperandError(f"{shorten(text)} is not a 32-bit lane mask", where=f"<command line>, {option}")
    return value


def _width(type_name: str) -> int:
    from ptxspec.spec.types import register_bits

    return register_bits(type_name)


@cli.command("forms")
@click.argument("opcode", required=False)
def forms_command(opcode: str | None) -> None:
    """List the catalogue's instruction syntaxes (of OPCODE, or all), with their manual sections."""
    from ptxspec.spec.catalogue import CATALOGUE

    families = CATALOGUE.families(opcode)
    if opcode and not families:
        raise PtxSpecError(f"unknown opcode {opcode!r}", where="<command line>, OPCODE")
    for family in families:
        echo(f"§{family.section:10} {family.full_syntax()}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ptxspec`` console script. Every failure ends in one line on standard
    error: a located ``ptxspec: error: ...`` and exit 2 for bad input and for output that cannot be
    written (a full disk), exit 130 on Ctrl-C, exit 1 quietly when the reader of a pipe left."""
    try:
        try:
            cli.main(args=argv, prog_name="ptxspec", standalone_mode=False)
        except click.exceptions.Exit as done:
            _flush_stdout()
            sys.exit(done.exit_code)
        except SystemExit:  # a command's own exit status (check-vectors: 0, 1 or 2)
            _flush_stdout()
            raise
        _flush_stdout()
    except PtxSpecError as error:
        click.echo(f"ptxspec: error: {error.one_line()}", err=True)
        if error.where == STDOUT:
            _silence_stdout()
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("ptxspec: aborted", err=True)
        sys.exit(130)
    except click.UsageError as error:
        command = error.ctx.command_path if error.ctx is not None else "ptxspec"
        click.echo(f"ptxspec: error: {printable(f'<command line>: {error.format_message()}')} (see '{command} --help')", err=True)
        sys.exit(2)
    except click.ClickException as error:
        click.echo(f"ptxspec: error: {printable(error.format_message())}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        # The reader (`| head`) went away: stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except OSError as error:
        # A write that failed outside the helpers above (click's own, a buffer flushed late).
        click.echo(f"ptxspec: error: {printable(f'{error.filename or STDOUT}: cannot write: {error.strerror or error}')}", err=True)
        _silence_stdout()
        sys.exit(2)
    sys.exit(0)


def _flush_stdout() -> None:
    """Flush standard output now, inside :func:`main`'s handlers, rather than at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _output_error(error, STDOUT) from None
