"""Sphinx extension: a page per ``ptxspec`` command, made from the command's own ``--help``.

At the start of every build ``cli/generated/`` is written: an index of the commands with their
``ptxspec --help`` summaries (:data:`ptxspec.conformance.cli.SUMMARIES`) and, per command, the text
that ``ptxspec COMMAND --help`` prints, so the page cannot drift from the program.
"""

from __future__ import annotations

from pathlib import Path

import click

OUT_DIR = Path("cli") / "generated"
HELP_WIDTH = 100  # the text is a literal block: wrapped as a 100-column terminal would show it


def command_help(name: str) -> str:
    """What ``ptxspec NAME --help`` prints (``ptxspec --help`` for ``name == ""``)."""
    from ptxspec.conformance.cli import cli

    root = click.Context(cli, info_name="ptxspec", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    if not name:
        return cli.get_help(root)
    command = cli.get_command(root, name)
    assert command is not None, name
    return command.get_help(click.Context(command, info_name=name, parent=root, terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH))


def _literal(text: str) -> str:
    return ".. code-block:: text\n\n" + "\n".join(("   " + line).rstrip() for line in text.splitlines()) + "\n"


def command_page(name: str, summary: str) -> str:
    title = f"ptxspec {name}"
    return "\n".join(
        [
            f".. _cli-{name}:",
            "",
            title,
            "=" * len(title),
            "",
            summary,
            "",
            f"This is what ``ptxspec {name} --help`` prints (made from the program when these pages were built).",
            "",
            _literal(command_help(name)),
        ]
    )


def index_page(summaries: dict[str, str]) -> str:
    lines = [
        "Command line",
        "============",
        "",
        "``ptxspec`` is one program with a command per job; ``ptxspec --help`` lists them:",
        "",
        _literal(command_help("")),
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - command",
        "     - what it does",
    ]
    for name, summary in summaries.items():
        lines += [f"   * - :ref:`ptxspec {name} <cli-{name}>`", f"     - {summary}"]
    lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   {name}" for name in summaries] + [""]
    return "\n".join(lines)


def write_pages(app) -> None:
    from ptxspec.conformance.cli import SUMMARIES

    out = Path(app.srcdir) / OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    pages = {"index": index_page(SUMMARIES)} | {name: command_page(name, summary) for name, summary in SUMMARIES.items()}
    for name, text in pages.items():
        path = out / f"{name}.rst"
        if not path.exists() or path.read_text() != text:  # unchanged pages are not rebuilt
            path.write_text(text)


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"version": "1", "parallel_read_safe": True}
