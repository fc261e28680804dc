"""Sphinx extension: the table family x variant -> allowed/forbidden of ``ptxspec litmus-gen``.

The table is the committed summary ``conformance/data/litmus_families.csv`` (written by
``ptxspec litmus-gen DIR --check --summary conformance/data/litmus_families.csv``; one row per
generated test: ``family,variant,verdict,time_s``). Checking all the tests takes a few
minutes, too long for every docs build, so the build reads the file instead and refuses it when it
no longer lists exactly the tests the generator makes (same names, same order): a stale file fails
the build. ``tests/test_litmus_families_doc.py`` re-checks its verdicts with both engines.

It adds to reStructuredText

* ``.. litmus-families::`` -- one subsection per family, each a grid: one row per order and
  separator (``rel-acq.gpu+fence.sc.gpu``), one column per placement, cells ``allowed`` or
  **forbidden** (blank where the family has no such test);
* ``.. litmus-family-counts::`` -- one row per family: its tests, allowed, forbidden;
* the role ``:litmus-count:`WHAT``` -- a number read from the file: ``tests``, ``families``,
  ``allowed``, ``forbidden`` or ``unknown``.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

#: The summary, relative to the repository root (the parent of the docs directory).
CSV_PATH = Path("conformance") / "data" / "litmus_families.csv"
HEADER = ["family", "variant", "verdict", "time_s"]
VERDICTS = ("allowed", "forbidden", "unknown")
COUNT_KEYS = ("tests", "families") + VERDICTS


@attrs.frozen
class Entry:
    """One generated test of the summary."""

    family: str
    variant: str
    verdict: str

    @property
    def name(self) -> str:
        """The test's name (and file name, less ``.litmus``): ``FAMILY+VARIANT``."""
        return f"{self.family}+{self.variant}"

    @property
    def placement(self) -> str:
        """The last part of the name (§2.2 placements: ``same-cta``, ..., ``diff-gpu``)."""
        return self.variant.rsplit("+", 1)[1]

    @property
    def row(self) -> str:
        """The variant without its placement: order (with scope) and separator."""
        return self.variant.rsplit("+", 1)[0]


def read_summary(path: Path) -> list[Entry]:
    """The entries of the summary file, checked for shape (header, verdict words, unique names)."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != HEADER:
            raise ValueError(f"{path}: header {header!r}, expected {HEADER!r}")
        entries = []
        for number, fields in enumerate(reader, start=2):
            if len(fields) != len(HEADER) or fields[2] not in VERDICTS or "+" not in fields[1]:
                raise ValueError(f"{path}:{number}: malformed row {fields!r}")
            entries.append(Entry(fields[0], fields[1], fields[2]))
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: a test is listed twice")
    return entries


def generated_names() -> list[str]:
    """The names ``ptxspec litmus-gen`` generates, in its order (the crossing only: no checking)."""
    from ptxspec.conformance.litmus_gen import ALL_SHAPES, _shape_named, variants

    return [v.name for s in ALL_SHAPES for v in variants(_shape_named(s))]


def stale_reason(entries: list[Entry]) -> str | None:
    """Why the summary does not list exactly the generated tests (None when it does)."""
    listed, wanted = [e.name for e in entries], generated_names()
    if listed == wanted:
        return None
    listed_set, wanted_set = set(listed), set(wanted)
    missing = [n for n in wanted if n not in listed_set]
    extra = [n for n in listed if n not in wanted_set]
    if not missing and not extra:
        return "the tests are listed in another order than the generator's"
    return f"{len(missing)} generated test(s) missing (e.g. {missing[:3]}), {len(extra)} unknown (e.g. {extra[:3]})"


def counts(entries: list[Entry]) -> dict[str, int]:
    """``tests``, ``families`` and the number of each verdict."""
    by_verdict = Counter(e.verdict for e in entries)
    result = {"tests": len(entries), "families": len({e.family for e in entries})}
    result.update({v: by_verdict[v] for v in VERDICTS})
    return result


def families(entries: list[Entry]) -> dict[str, list[Entry]]:
    """The entries grouped by family, families in the generator's order."""
    grouped: dict[str, list[Entry]] = {}
    for e in entries:
        grouped.setdefault(e.family, []).append(e)
    return grouped


def grid(entries: list[Entry]) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """Rows (order+separator), columns (placements) and cells ``(row, placement) -> verdict``
    of one family, rows and columns in the generator's order."""
    rows = list(dict.fromkeys(e.row for e in entries))
    columns = list(dict.fromkeys(e.placement for e in entries))
    cells = {(e.row, e.placement): e.verdict for e in entries}
    return rows, columns, cells


def _cell(verdict: str | None) -> str:
    if verdict is None:
        return ""
    return f"**{verdict}**" if verdict == "forbidden" else verdict


def family_rst(family: str, entries: list[Entry], underline: str) -> list[str]:
    """A subsection with the grid of one family, as reStructuredText lines."""
    rows, columns, cells = grid(entries)
    c = Counter(e.verdict for e in entries)
    title = f"{family}"
    lines = [
        title,
        underline * len(title),
        "",
        f"{len(entries)} tests: {c['allowed']} allowed, {c['forbidden']} forbidden" + (f", {c['unknown']} unknown" if c["unknown"] else "") + ".",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :stub-columns: 1",
        "",
        "   * - order + separator",
    ]
    lines += [f"     - ``{col}``" for col in columns]
    for row in rows:
        lines.append(f"   * - ``{row}``")
        lines += [f"     - {_cell(cells.get((row, col)))}" for col in columns]
    return lines + [""]


class _Summary:
    """Shared by the directives and the role: the summary of this build, read and validated once."""

    def entries(self, env) -> list[Entry]:
        path = Path(env.srcdir).parent / CSV_PATH
        env.note_dependency(str(path))
        cached = getattr(env, "_ptxspec_litmus_families", None)
        if cached is not None and cached[0] == path.stat().st_mtime_ns:
            return cached[1]
        try:
            entries = read_summary(path)
        except (OSError, ValueError) as error:
            raise ExtensionError(f"litmus families: {error}") from None
        reason = stale_reason(entries)
        if reason is not None:
            raise ExtensionError(
                f"litmus families: {CSV_PATH} is stale ({reason}); regenerate it with `ptxspec litmus-gen /tmp/litmus --check --summary {CSV_PATH}`"
            )
        env._ptxspec_litmus_families = (path.stat().st_mtime_ns, entries)
        return entries


SUMMARY = _Summary()


class LitmusFamilies(SphinxDirective):
    """``.. litmus-families::`` (option ``:underline:``, the title character of the family
    subsections, ``~`` by default)."""

    has_content = False
    option_spec = {"underline": lambda arg: (arg or "~").strip()[:1] or "~"}

    def run(self) -> list[nodes.Node]:
        underline = self.options.get("underline", "~")
        lines: list[str] = []
        for family, entries in families(SUMMARY.entries(self.env)).items():
            lines += family_rst(family, entries, underline)
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=str(CSV_PATH)), container)
        return container.children


class LitmusFamilyCounts(SphinxDirective):
    """``.. litmus-family-counts::``: a table with the verdict counts of every family."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        entries = SUMMARY.entries(self.env)
        lines = [".. list-table::", "   :header-rows: 1", "   :stub-columns: 1", "", "   * - family", "     - tests", "     - allowed", "     - forbidden"]
        for family, group in list(families(entries).items()) + [("all", entries)]:
            c = counts(group)
            lines += [f"   * - {family}", f"     - {c['tests']}", f"     - {c['allowed']}", f"     - {c['forbidden']}"]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=str(CSV_PATH)), self.content_offset, container)
        return container.children


def litmus_count_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``:litmus-count:`allowed``` -> the number of allowed tests in the summary."""
    key = text.strip()
    if key not in COUNT_KEYS:
        message = inliner.reporter.error(f"litmus-count: {key!r} is not one of {', '.join(COUNT_KEYS)}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    env = inliner.document.settings.env
    return [nodes.Text(str(counts(SUMMARY.entries(env))[key]))], []


def setup(app) -> dict:
    app.add_directive("litmus-families", LitmusFamilies)
    app.add_directive("litmus-family-counts", LitmusFamilyCounts)
    app.add_role("litmus-count", litmus_count_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
