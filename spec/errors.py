"""The one error type of ptxspec.

Every bad input -- an unknown opcode or qualifier, an illegal combination, a wrong operand count or
width, a malformed file -- is a :class:`PtxSpecError`. It carries where the problem is (a file, line
and column, or the offending qualifier) and, where the manual decides the matter, the section that
does. The command line prints :meth:`PtxSpecError.one_line` and exits with code 2.
"""

from __future__ import annotations

import attrs

MAX_LINE = 2000
"""Longest error line: an input can make a message echo a huge token; its middle is cut."""


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
        """``where: message (§section)`` as one printable line, whatever the input held (see
        :func:`printable`)."""
        text = self.message
        if self.section and f"§{self.section}" not in text:
            text = f"{text} (§{self.section})"
        if self.where is not None:
            text = f"{self.where}: {text}"
        return printable(text)

    def __str__(self) -> str:
        return self.one_line()


class IllegalForm(PtxSpecError):
    """An instruction text that is not a legal PTX instruction form."""


class OperandError(PtxSpecError):
    """An operand that does not fit the instruction form (count, width, syntax)."""


def printable(text: str) -> str:
    """``text`` as one printable line: every character that would not print as itself (control
    characters such as ESC, line breaks, tabs, unassigned or lone surrogate code points) is written
    as Python writes it in a string literal (``\\x1b``, ``\\r``, ``\\u2028``), and a text
    longer than :data:`MAX_LINE` loses its middle."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(text) > MAX_LINE:
        cut = len(text) - MAX_LINE
        text = f"{text[: MAX_LINE * 3 // 4]} ... [{cut} characters cut] ... {text[len(text) - MAX_LINE // 4 :]}"
    return text


def shorten(text: str, limit: int = 60) -> str:
    """``text`` for a message, cut to about ``limit`` characters: a 5,000-digit operand is named
    by its ends and length, not echoed."""
    return text if len(text) <= limit else f"{text[: limit - 20]}...{text[-12:]} ({len(text)} characters)"
