"""The ``ptxspec`` command line. It only orchestrates: the meaning is in semantics/ and spec/.

Every bad input ends in a one-line, located message on standard error and exit code 2.
"""

from __future__ import annotations

import json
import sys

import click

from ptxspec import PTX_ISA_VERSION, __version__
from ptxspec.spec.errors import OperandError, PtxSpecError


def parse_operand(text: str, position: int) -> int:
    """An operand bit pattern: ``0x3f800000``, a decimal integer, or a PTX floating-point hex
    literal ``0f3F800000`` / ``0d3FF0000000000000`` (§4.5.2)."""
    t = text.strip().lower().replace("_", "")
    try:
        if t.startswith(("0f", "0d")) and len(t) > 2:
            return int(t[2:], 16)
        if t.startswith("0x"):
            return int(t[2:], 16)
        if t.startswith("0b"):
            return int(t[2:], 2)
        if t.isdigit():
            return int(t, 10)
    except ValueError:
        pass
    raise OperandError(f"operand {position} {text!r} is not a bit pattern (use 0x..., 0f..., 0d... or a decimal integer)", where="<command line>")


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ptxspec", message=f"%(prog)s %(version)s (PTX ISA {PTX_ISA_VERSION})")
def cli() -> None:
    """ptxspec: an executable formal specification of NVIDIA PTX and a conformance oracle."""


PROFILE_OPTION = click.option(
    "--profile",
    type=click.Choice(["spec", "sm_90"]),
    default="spec",
    show_default=True,
    help="spec: the set of results the manual allows; sm_90: what an H100/H200 produces, where measured.",
)


@cli.command("eval")
@click.argument("instruction")
@click.argument("operands", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of hex lines.")
@PROFILE_OPTION
def eval_command(instruction: str, operands: tuple[str, ...], as_json: bool, profile: str) -> None:
    """Evaluate INSTRUCTION (e.g. 'fma.rn.ftz.f32') on OPERANDS given as bit patterns.

    Prints one line per destination operand: its bits in hex, or, where the manual allows more than
    one result (a NaN of any payload, the error bound of an .approx instruction), the allowed set.

    \b
    Example:
      ptxspec eval fma.rn.ftz.f32 0x3f800000 0x40000000 0x00000000
    """
    from ptxspec.semantics.instructions import as_form, evaluate
    from ptxspec.spec.types import register_bits

    form = as_form(instruction)
    sources = [parse_operand(o, i + 1) for i, o in enumerate(operands)]
    results = evaluate(form, sources, profile)
    widths = [register_bits(d.type) for d in form.destinations]
    if as_json:
        outputs = [_hex(r, w) if isinstance(r, int) else r.to_json() for r, w in zip(results, widths)]
        inputs = [_hex(v, register_bits(o.type)) for v, o in zip(sources, form.sources)]
        click.echo(json.dumps({"instr": form.text, "inputs": inputs, "outputs": outputs, "profile": profile}))
        return
    for r, w in zip(results, widths):
        click.echo(_hex(r, w) if isinstance(r, int) else r.describe())


@cli.command("forms")
@click.argument("opcode", required=False)
def forms_command(opcode: str | None) -> None:
    """List the catalogue's instruction syntaxes (of OPCODE, or all), with their manual sections."""
    from ptxspec.spec.catalogue import CATALOGUE

    families = CATALOGUE.families(opcode)
    if opcode and not families:
        raise PtxSpecError(f"unknown opcode {opcode!r}", where="<command line>")
    for family in families:
        click.echo(f"§{family.section:10} {family.syntax()}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ptxspec`` console script."""
    try:
        cli.main(args=argv, prog_name="ptxspec", standalone_mode=False)
    except PtxSpecError as error:
        click.echo(f"ptxspec: error: {error.one_line()}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("ptxspec: aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        click.echo(f"ptxspec: error: {error.format_message()}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    sys.exit(0)
