"""The site's own extensions that are not pictures or examples: the search by full form
(docs/_ext/ptxspec_form_search.py) and the page per command (docs/_ext/ptxspec_cli_pages.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given

from ptxspec.conformance.strategies import forms

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "_ext"))
import ptxspec_cli_pages  # noqa: E402
import ptxspec_form_search  # noqa: E402


@given(forms())
def test_a_legal_form_matches_its_family_pattern(form):
    """The search's pattern of a family admits every legal form of it, as written canonically."""
    assert re.match(ptxspec_form_search.syntax_pattern(form.family.full_syntax()), form.text), (form.text, form.family.full_syntax())


def test_a_pattern_is_anchored_and_exact():
    pattern = ptxspec_form_search.syntax_pattern("add{.sat}(.s32|.u32)")
    assert pattern == r"^add(?:\.sat)?(?:\.s32|\.u32)$"
    assert re.match(pattern, "add.sat.s32") and re.match(pattern, "add.u32")
    assert not re.match(pattern, "add.sat") and not re.match(pattern, "add.s32x") and not re.match(pattern, "xadd.s32")


def test_the_entries_link_each_family_to_its_label():
    labels = {"family-add.int": ("reference/generated/add", "family-add-int", "add")}
    entries = ptxspec_form_search.family_entries(labels)
    assert [e[1:3] for e in entries] == [["reference/generated/add", "family-add-int"]]
    assert re.match(entries[0][0], "add.sat.s32")


def test_every_command_has_a_page_made_from_its_help():
    from ptxspec.conformance.cli import SUMMARIES

    index = ptxspec_cli_pages.index_page(SUMMARIES)
    for name, summary in SUMMARIES.items():
        page = ptxspec_cli_pages.command_page(name, summary)
        assert page.startswith(f".. _cli-{name}:\n\nptxspec {name}\n") and f"   Usage: ptxspec {name}" in page
        assert f":ref:`ptxspec {name} <cli-{name}>`" in index
    assert "--inputs" in ptxspec_cli_pages.command_help("eval")
