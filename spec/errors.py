"""The one error type of ptxspec.

Every bad input -- an unknown opcode or qualifier, an illegal combination, a wrong operand count or
width, a malformed file -- is a :class:`PtxSpecError`. It carries where the problem is (a file, line
and column, or the offending qualifier) and, where the manual decides the matter, the section that
does. The command line prints :meth:`PtxSpecError.one_line` and exits with code 2.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Location:
    """Where in an input a problem is: a file (or ``<command line>``), a 1-based line and column."""

    source: str = "<input>"
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.source]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class PtxSpecError(Exception):
    """A located, specific complaint about an input.

    ``where`` names the place (a :class:`Location`, or a string such as ``"qualifier .sat"``);
    ``section`` is the PTX ISA section whose rule the input breaks, when there is one.
    """

    def __init__(self, message: str, *, where: Location | str | None = None, section: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.section = section

    def one_line(self) -> str:
        text = self.message
        if self.section and f"§{self.section}" not in text:
            text = f"{text} (§{self.section})"
        if self.where is not None:
            text = f"{self.where}: {text}"
        return text

    def __str__(self) -> str:
        return self.one_line()


class IllegalForm(PtxSpecError):
    """An instruction text that is not a legal PTX instruction form."""


class OperandError(PtxSpecError):
    """An operand that does not fit the instruction form (count, width, syntax)."""
