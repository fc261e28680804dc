"""Sphinx extension: the site's search finds an instruction by its full form.

Sphinx's search splits ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` into words and finds
every page that has them. Here each family of the catalogue becomes a regular expression made
from its syntax (``{.x|.y}`` optional, ``(.x|.y)`` one of), written with the family's page and
anchor into ``_static/ptx-families.js``; ``_static/ptxspec-search.js`` puts the families whose
expression matches the query (its first word: operands may follow) above the search results.
The matching is a look-up, not a legality check: ``ptxspec eval`` decides that.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

DATA = "ptx-families.js"


def syntax_pattern(full_syntax: str) -> str:
    """The family's syntax as an anchored regular expression (JavaScript's dialect too); an operand
    template after it (``mov.b64 d, {a, b}``) is left out: the query's first word is matched."""
    out = []
    for char in full_syntax.split()[0]:
        if char == "{":
            out.append("(?:")
        elif char == "}":
            out.append(")?")
        elif char == "(":
            out.append("(?:")
        elif char in ")|":
            out.append(char)
        else:
            out.append(re.escape(char))
    return "^" + "".join(out) + "$"


def family_entries(labels: dict) -> list[list[str]]:
    """[pattern, page, anchor, syntax, section] of every family with a page (``labels``: the std
    domain's ``name -> (docname, anchor, title)``)."""
    from ptxspec.spec.catalogue import CATALOGUE

    entries = []
    for family in CATALOGUE.families():
        label = labels.get(f"family-{family.key}".lower())
        if label is None:
            continue
        docname, anchor, _ = label
        entries.append([syntax_pattern(family.full_syntax()), docname, anchor, family.syntax(), family.section])
    return entries


def write_data(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    labels = app.env.domaindata["std"]["labels"]
    entries = family_entries(labels)
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / DATA).write_text("const PTX_FAMILIES = " + json.dumps(entries, separators=(",", ":")) + ";\n")


def setup(app):
    app.add_js_file(DATA)
    app.add_js_file("ptxspec-search.js")
    app.connect("build-finished", write_data)
    return {"version": "1", "parallel_read_safe": True}
