"""The Python example of docs/tcgen05.rst runs and its assertions hold (no Sphinx needed)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tcgen05.rst"


def code_blocks(text: str) -> list[str]:
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text):
        blocks.append(textwrap.dedent(match.group(1)))
    return blocks


def test_the_pages_example_runs():
    blocks = code_blocks(PAGE.read_text())
    assert blocks and "execute(" in blocks[0]
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {})


def test_a_wrong_assertion_in_the_example_would_fail():
    block = code_blocks(PAGE.read_text())[0].replace("r[1].lanes[0] == 100", "r[1].lanes[0] == 101")
    try:
        exec(compile(block, str(PAGE), "exec"), {})
    except AssertionError:
        return
    raise AssertionError("the altered example did not fail")
