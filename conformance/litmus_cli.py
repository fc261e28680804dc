"""``ptxspec litmus``: check litmus tests against the PTX memory model (§8) and print herd7's verdict.

The command only orchestrates: parsing is ``memory_model/litmus.py`` and ``lowering.py``, the model
``memory_model/ptx.py``, its interpreters ``explicit.py`` and ``z3_engine.py``, the comparison of
the two ``memory_model/check.py`` and the output ``memory_model/render.py``.

Exit status: 0 when every test was checked; 1 when ``--expect`` was given and some verdict differs
from the expected one; 2 on bad input (an unreadable or malformed litmus file, a bad option or
CSV), printed as one located line per problem while the other files are still checked; 3 when the two
engines disagree on a test (a bug in one of them, reported with both answers).
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

import click

from ptxspec.memory_model.check import ENGINE_CHOICES, MODELS, EngineDisagreement, Verdict, check_file
from ptxspec.spec.errors import Location, PtxSpecError

EXIT_OK, EXIT_EXPECT, EXIT_BAD_INPUT, EXIT_DISAGREEMENT = 0, 1, 2, 3


def load(path: Path, unroll: int | None = None):
    """Parse and lower one litmus file (``memory_model/litmus.py`` and ``lowering.py``) to a Program."""
    from ptxspec.memory_model.lowering import load as load_program

    if unroll is None:
        return load_program(Path(path))
    return load_program(Path(path), unroll_bound=unroll)


def litmus_files(paths: tuple[str, ...]) -> tuple[list[Path], list[PtxSpecError]]:
    """The litmus files named: each FILE, and every ``*.litmus`` under each DIR (recursively, sorted).
    A path that does not exist, or a directory without litmus files, is a located error."""
    files: list[Path] = []
    errors: list[PtxSpecError] = []
    for i, text in enumerate(paths, start=1):
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.litmus") if p.is_file())
            if not found:
                errors.append(PtxSpecError("the directory holds no *.litmus file", where=Location(text)))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            errors.append(PtxSpecError("no such file or directory", where=f"<command line>, argument {i} ({text})"))
    return files, errors


def read_expectations(csv_path: str) -> dict[Path, int]:
    """``test,expected`` rows (paths relative to the CSV's folder; 1 = Ok, 0 = No), by resolved path."""
    path = Path(csv_path)
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            rows = list(csv.reader(stream))
    except (OSError, UnicodeDecodeError) as error:
        raise PtxSpecError(f"cannot read the CSV: {getattr(error, 'strerror', None) or error}", where=Location(csv_path)) from None
    if not rows or [cell.strip() for cell in rows[0][:2]] != ["test", "expected"]:
        raise PtxSpecError("the first line must be the header 'test,expected'", where=Location(csv_path, 1, 1))
    expected: dict[Path, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2 or row[1].strip() not in ("0", "1"):
            raise PtxSpecError("expected 'TEST,0' or 'TEST,1'", where=Location(csv_path, number, 1))
        expected[(path.parent / row[0].strip()).resolve()] = int(row[1].strip())
    return expected


def picture_path(template: str, name: str) -> str:
    """Where a test's picture goes: ``template``, with ``{name}`` replaced by the test's name."""
    return template.replace("{name}", _safe(name))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+=-]", "_", name) or "test"


def _error(error: PtxSpecError) -> None:
    click.echo(f"ptxspec: error: {error.one_line()}", err=True)


def _verdict_word(ok: bool | None) -> str:
    return {True: "Ok (1)", False: "No (0)", None: "Unknown"}[ok]


def _timeout(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """``--timeout``: seconds > 0; ``inf`` means no limit (None); ``nan`` is refused."""
    if value is not None and math.isnan(value):
        raise click.BadParameter("expected a number of seconds > 0 (or inf for no limit), found nan", ctx, param)
    return None if value == math.inf else value


def _checked(path: Path, unroll: int | None, **options) -> Verdict:
    """Load and check one file. Whatever goes wrong on the way is a :class:`PtxSpecError` located
    at the file, so that one bad file never stops the others."""
    try:
        return check_file(path, unroll_bound=unroll, **options)
    except PtxSpecError:
        raise
    except RecursionError:
        message = "the test nests too deeply for the stack"
    except MemoryError:
        message = "out of memory while reading or checking the test"
    except OSError as error:
        message = f"cannot read the file: {error.strerror or error}"
    except UnicodeError as error:
        message = f"cannot decode the file: {error}"
    except Exception as error:  # noqa: BLE001 - reported, with its type, as a bug of ptxspec
        message = f"internal error (a bug in ptxspec, please report it): {type(error).__name__}: {error}"
    raise PtxSpecError(message, where=Location(str(path)))


@click.command("litmus")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per test per line instead of herd's text.")
@click.option("--witness", is_flag=True, help="Show an execution with the outcome (events and po, rf, co, fr).")
@click.option("--why", is_flag=True, help="For a forbidden outcome: the axioms of the model that rule it out.")
@click.option("--dot", "dot_path", default=None, metavar="FILE", help="Write a Graphviz picture of the execution (several tests: FILE must contain {name}).")
@click.option("--svg", "svg_path", default=None, metavar="FILE", help="Write an SVG picture of the execution (several tests: FILE must contain {name}).")
@click.option(
    "--model",
    "model_name",
    type=click.Choice(list(MODELS)),
    default="ptx-8.7",
    show_default=True,
    help="ptx-8.7: the model of §8; ptx-6.0: the earlier model, without proxies.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    callback=_timeout,
    default=None,
    metavar="S",
    help="Seconds per engine and test (a number > 0; 'inf': no limit, as without the option); an undecided test prints Unknown.",
)
@click.option("--engine", type=click.Choice(list(ENGINE_CHOICES)), default="both", show_default=True, help="z3, explicit, or both (which must agree).")
@click.option(
    "--expect",
    "expect_path",
    default=None,
    metavar="CSV",
    help="A CSV 'test,expected' (paths relative to the CSV's folder; 1 = Ok); exit 1 when a verdict differs.",
)
@click.option(
    "--unroll",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Loop unrolling bound: backward jumps per thread (default 2); an answer that rests on cut paths prints as bounded.",
)
def litmus_command(
    paths: tuple[str, ...],
    as_json: bool,
    witness: bool,
    why: bool,
    dot_path: str | None,
    svg_path: str | None,
    model_name: str,
    timeout_s: float | None,
    engine: str,
    expect_path: str | None,
    unroll: int | None,
) -> None:
    """Check litmus tests (FILE, or every *.litmus under DIR) against the PTX memory model.

    For each test it prints herd7's verdict: 'Test NAME Allowed|Required', the final states of the
    consistent executions, 'Ok' when the final condition holds under the model ('No' when it
    does not, 'Unknown' when undecided within --timeout), the number of states satisfying and not
    satisfying the condition, the 'Observation' and the time taken.

    \b
    Examples:
      ptxspec litmus examples/litmus/MP.litmus --witness --svg mp.svg
      ptxspec litmus tests/litmus/manual --why          (the manual's tests, in a clone)
      ptxspec litmus --json --expect DIR/expected.csv DIR   (a corpus and its verdicts, 'test,expected')

    Exit status: 0 every test checked; 1 a verdict differs from --expect; 2 bad input;
    3 the two engines disagree.
    """
    files, errors = litmus_files(paths)
    several = len(files) > 1 or len(paths) > 1 or any(Path(p).is_dir() for p in paths)
    for option, template in (("--dot", dot_path), ("--svg", svg_path)):
        if template is not None and several and "{name}" not in template:
            raise click.BadParameter(f"with several tests, FILE must contain {{name}} (got {template!r})", param_hint=option)
    expectations: dict[Path, int] | None = None
    if expect_path is not None:
        try:
            expectations = read_expectations(expect_path)
        except PtxSpecError as error:
            _error(error)
            sys.exit(EXIT_BAD_INPUT)
    status = EXIT_OK
    for file_error in errors:
        _error(file_error)
        status = EXIT_BAD_INPUT
    differ: list[str] = []
    compared = unlisted = 0
    pictures = dot_path is not None or svg_path is not None
    want_witness = witness or pictures
    for path in files:
        try:
            verdict = _checked(path, unroll, model=model_name, engine=engine, timeout_s=timeout_s, want_witness=want_witness, want_why=why or pictures)
            _print(verdict, as_json=as_json, witness=witness, why=why)
            _pictures(verdict, dot_path, svg_path)
        except EngineDisagreement as error:
            _error(error)
            if status != EXIT_BAD_INPUT:
                status = EXIT_DISAGREEMENT
            continue
        except PtxSpecError as error:
            if error.where is None:
                error.where = Location(str(path))
            _error(error)
            status = EXIT_BAD_INPUT
            continue
        if expectations is not None:
            expected = expectations.get(path.resolve())
            unlisted += expected is None
            if expected is not None:
                compared += 1
                if verdict.ok is None or int(verdict.ok) != expected:
                    differ.append(f"{path}: expected {_verdict_word(bool(expected))}, got {_verdict_word(verdict.ok)}")
    if expectations is not None:
        for line in differ:
            click.echo(f"ptxspec: differs from {expect_path}: {line}", err=True)
        note = f"; {unlisted} test(s) not in it" if unlisted else ""
        click.echo(f"ptxspec: {compared - len(differ)} of {compared} verdicts as expected ({expect_path}){note}", err=True)
        if differ and status == EXIT_OK:
            status = EXIT_EXPECT
    if status != EXIT_OK:
        # SystemExit, not ctx.exit: ``ptxspec``'s main runs click with standalone_mode=False, where
        # click turns ctx.exit(code) into a return value that would be lost.
        sys.exit(status)


def _print(verdict: Verdict, *, as_json: bool, witness: bool, why: bool) -> None:
    from ptxspec.memory_model import render

    if as_json:
        click.echo(render.json_line(verdict, witness=witness, why=why))
    else:
        click.echo(render.text(verdict, witness=witness, why=why))
        click.echo()


def _pictures(verdict: Verdict, dot_path: str | None, svg_path: str | None) -> None:
    if dot_path is None and svg_path is None:
        return
    from ptxspec.memory_model import render

    execution, cycle = render.picture(verdict)
    for template, draw in ((dot_path, render.dot), (svg_path, render.svg)):
        if template is None:
            continue
        target = Path(picture_path(template, verdict.name))
        if execution is None:
            content = render.empty_picture(verdict.program, draw is render.svg)
        else:
            content = draw(verdict.program, execution, cycle)
        try:
            target.write_text(content, encoding="utf-8")
        except OSError as error:
            raise PtxSpecError(f"cannot write the picture: {error.strerror or error}", where=Location(str(target))) from None
