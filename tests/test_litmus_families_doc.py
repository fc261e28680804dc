"""The committed table family x variant -> allowed/forbidden (conformance/data/litmus_families.csv)
and the docs extension that renders it (docs/_ext/ptxspec_litmus_families.py).

The file is written by ``ptxspec litmus-gen /tmp/litmus --check --summary
conformance/data/litmus_families.csv``. It must list exactly the tests the generator makes, and its
verdicts must be those both engines give now: a seeded sample is re-checked by default, every row
with ``PTXSPEC_HEAVY=all``. The docs build must show exactly its verdicts and counts.
"""

from __future__ import annotations

import csv
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from ptxspec.conformance.litmus_gen import ALL_SHAPES, check_text, enumeration_size, generate_variants

REPO = Path(__file__).resolve().parent.parent
CSV_FILE = REPO / "conformance" / "data" / "litmus_families.csv"
EXT_DIR = REPO / "docs" / "_ext"
REGENERATE = "ptxspec litmus-gen /tmp/litmus --check --summary conformance/data/litmus_families.csv"

sys.path.insert(0, str(EXT_DIR))
import ptxspec_litmus_families as ext  # noqa: E402


def _rows() -> list[dict[str, str]]:
    with CSV_FILE.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


ROWS = _rows()
VERDICT = {f"{r['family']}+{r['variant']}": r["verdict"] for r in ROWS}


# ---- the file lists exactly the generated tests ------------------------------------------------------


def test_header_and_verdict_words():
    with CSV_FILE.open(encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == ["family", "variant", "verdict", "time_s"]
    # the committed file is complete: every test got a verdict within the default (no) time limit
    assert {r["verdict"] for r in ROWS} == {"allowed", "forbidden"}, f"regenerate: {REGENERATE}"
    assert all(float(r["time_s"]) >= 0 for r in ROWS)


def test_lists_exactly_the_generated_tests_in_order():
    generated = [v.name for v, _ in generate_variants()]
    listed = [f"{r['family']}+{r['variant']}" for r in ROWS]
    assert len(listed) == len(set(listed)) == enumeration_size(), f"stale: {REGENERATE}"
    assert listed == generated, f"stale: {REGENERATE}"
    assert [r["family"] for r in ROWS] == [v.family for v, _ in generate_variants()]
    assert {r["family"].removesuffix("+rmw") for r in ROWS} == set(ALL_SHAPES)


def test_extension_validation_agrees_and_detects_staleness():
    entries = ext.read_summary(CSV_FILE)
    assert ext.stale_reason(entries) is None
    assert "missing" in ext.stale_reason(entries[:-1])
    assert "another order" in ext.stale_reason(entries[1:] + entries[:1])
    renamed = [ext.Entry(e.family, e.variant + "x", e.verdict) if i == 7 else e for i, e in enumerate(entries)]
    assert "1 unknown" in ext.stale_reason(renamed)


# ---- the verdicts are those both engines give now ----------------------------------------------------


def _recheck(pairs):
    checked = 0
    for v, text in pairs:
        row = check_text(v, text)  # check(engine="both"): raises EngineDisagreement if they differ
        assert row.verdict == VERDICT[v.name], f"{v.name}: file says {VERDICT[v.name]}, engines {row.verdict}; {REGENERATE}"
        checked += 1
    return checked


def test_seeded_sample_of_rows_rechecked_with_both_engines():
    assert _recheck(generate_variants(sample=40, seed=20261121)) == 40


CHUNKS = 10


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_row_rechecked_with_both_engines(chunk):
    everything = list(generate_variants())
    assert _recheck(everything[chunk::CHUNKS]) == len(everything[chunk::CHUNKS])


# ---- verdicts the manual states (§8.10), read from the file, not from the engines --------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        # §8.10.6 MP: "the release pattern ... synchronizes with the acquire pattern ... R2 must read from W1"
        ("MP+rel-acq.gpu+po+diff-cta", "forbidden"),
        ("MP+rel-acq.sys+po+diff-gpu", "forbidden"),
        # no release/acquire pattern, no fence: nothing orders the data before the flag
        ("MP+weak+po+diff-cta", "allowed"),
        # .cta-scoped operations in different GPUs are not morally strong (§8.10.5 needs mutual scope)
        ("MP+rel-acq.cta+po+diff-gpu", "allowed"),
        # §8.10.6 SB: "either F1 precedes F2 in Fence-SC order, or vice versa" -- forbidden with fence.sc,
        # "If each fence.sc ... were replaced by a fence.acq_rel ... this outcome is not guaranteed"
        ("SB+weak+fence.sc.sys+diff-gpu", "forbidden"),
        ("SB+weak+fence.acq_rel.sys+diff-gpu", "allowed"),
        # §8.10.5 CoRR: "R2 cannot read the initial value of x"
        ("CoRR+rlx.sys+po+diff-cta", "forbidden"),
        # §8.10.6 CoWR with aliases: "Virtual aliases require an alias proxy fence along the synchronization path"
        ("CoWR-alias+weak+po+same-cta", "allowed"),
        ("CoWR-alias+weak+fence.proxy.alias+same-cta", "forbidden"),
    ],
)
def test_manual_verdicts_in_the_file(name, expected):
    assert VERDICT[name] == expected


# ---- the rendering -----------------------------------------------------------------------------------


def test_grid_puts_every_test_in_exactly_one_cell():
    entries = ext.read_summary(CSV_FILE)
    grouped = ext.families(entries)
    assert sum(len(g) for g in grouped.values()) == len(ROWS)
    for family, group in grouped.items():
        rows, columns, cells = ext.grid(group)
        assert len(cells) == len(group), family  # no two tests share a cell
        for e in group:
            assert cells[(e.row, e.placement)] == VERDICT[f"{family}+{e.row}+{e.placement}"]
            assert e.variant == f"{e.row}+{e.placement}"
        assert set(columns) <= {"same-cta", "same-cluster", "diff-cta", "diff-gpu"}
        assert len(rows) * len(columns) >= len(cells)


def _build(tmp_path: Path, csv_text: str) -> Path:
    """A small Sphinx project beside a copy of the summary, using the directives and the role."""
    from sphinx.application import Sphinx

    (tmp_path / "conformance" / "data").mkdir(parents=True)
    (tmp_path / "conformance" / "data" / "litmus_families.csv").write_text(csv_text, encoding="utf-8")
    src = tmp_path / "docs"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXT_DIR)!r})\nextensions = ['ptxspec_litmus_families']\nhtml_theme = 'basic'\n", encoding="utf-8"
    )
    (src / "index.rst").write_text(
        "Page\n====\n\nTESTS :litmus-count:`tests` FAMILIES :litmus-count:`families` "
        "ALLOWED :litmus-count:`allowed` FORBIDDEN :litmus-count:`forbidden` UNKNOWN :litmus-count:`unknown`\n\n"
        "Counts\n------\n\n.. litmus-family-counts::\n\nGrids\n-----\n\n.. litmus-families::\n",
        encoding="utf-8",
    )
    out = tmp_path / "html"
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None, warning=None, warningiserror=True, freshenv=True)
    app.build()
    return out / "index.html"


def test_docs_render_the_file(tmp_path):
    html = _build(tmp_path, CSV_FILE.read_text(encoding="utf-8")).read_text(encoding="utf-8")
    c = Counter(r["verdict"] for r in ROWS)
    families = list(dict.fromkeys(r["family"] for r in ROWS))
    assert f"TESTS {len(ROWS)} FAMILIES {len(families)} ALLOWED {c['allowed']} FORBIDDEN {c['forbidden']} UNKNOWN {c['unknown']}" in html
    # one cell per test: forbidden cells are bold, allowed ones plain
    assert html.count("<strong>forbidden</strong>") == c["forbidden"]
    assert len(re.findall(r"<td><p>allowed</p></td>", html)) == c["allowed"]
    for family in families:  # a subsection per family, in the file's order
        assert re.search(rf"<h3>{re.escape(family)}<a ", html), family
    positions = [html.index(f">{f}<a ") for f in families]
    assert positions == sorted(positions)
    # the per-family counts table: the MP row, counted here from the file
    mp = Counter(r["verdict"] for r in ROWS if r["family"] == "MP")
    row = re.search(
        r"<th class=\"stub\"><p>MP</p></th>\s*<td><p>(\d+)</p></td>\s*<td><p>(\d+)</p></td>\s*"
        r"<td><p>(\d+)</p></td>",
        html,
    )
    assert row and tuple(map(int, row.groups())) == (mp.total(), mp["allowed"], mp["forbidden"])


def test_docs_build_fails_on_a_stale_file(tmp_path):
    from sphinx.errors import SphinxError

    lines = CSV_FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    with pytest.raises(SphinxError, match="stale"):
        _build(tmp_path, "".join(lines[:-1]))  # the last generated test is missing


def test_docs_build_fails_on_a_malformed_file(tmp_path):
    from sphinx.errors import SphinxError

    lines = CSV_FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = lines[5].replace("allowed", "maybe").replace("forbidden", "maybe")
    with pytest.raises(SphinxError, match="malformed"):
        _build(tmp_path, "".join(lines))
