"""Sphinx extension: the litmus tests run on silicon, from the recording, at build time.

``.. litmus-silicon:: conformance/data/sm_90/litmus-h100.json`` (option ``:summary-only:``: no grid) judges the recording with the
model (:func:`ptxspec.conformance.litmus_run.check_recording`, both engines) and draws:

* a summary (chip, settings, tests, iterations, outcomes the model forbids that silicon showed);
* the tests whose ``exists`` outcome the chip showed, with their rates;
* per family, the grid: for every test each outcome the model allows (seen, with its count and a
  bar of its share; or never seen) and any outcome silicon showed that the model forbids.

Nothing on the page is typed by hand: it is the recording and the model, as of this build.
"""

from __future__ import annotations

import html
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ptxspec.conformance import litmus_run

REPO = Path(__file__).resolve().parents[2]


def _outcome(report, outcome) -> str:
    return ", ".join(f"{name}={value}" for name, value in zip(report.observed, outcome))


def _bar(share: float) -> str:
    width = 0 if share == 0 else max(1.0, 100 * share)
    return f'<span class="litmus-bar" style="width:{width:.1f}%"></span>'


def summary_html(record: dict, reports, skipped) -> str:
    meta, run = record["meta"], record["run"]
    unsound = sum(1 for r in reports if r.forbidden_seen)
    iterations = sum(r.iterations for r in reports)
    ptxas = sum(1 for entry in record.get("refused", []) if entry["why"].startswith("ptxas"))
    rows = [
        ("chip", f"{meta['device']} (sm_{meta['sm']}, {meta['multiprocessors']} SMs, driver {meta['driver']})"),
        ("tests run", f"{len(reports) + len(skipped)} ({len(skipped)} not checked in this build: {'; '.join(sorted({why for _, why in skipped})) or 'none'})"),
        ("iterations", f"{iterations:,} checked ({run['iterations']:,} asked per test, rounded up to whole launches of {32 * run['copies']:,} instances)"),
        ("stress", f"{run['stress_blocks']} blocks, {run['stress_rounds']} store/load rounds per thread; seed {run['seed']}"),
        ("outcomes the model forbids that silicon showed", f"<b>{sum(len(r.forbidden_seen) for r in reports)}</b> (in {unsound} tests)"),
        ("tests left out", f"{len(record.get('refused', []))} ({ptxas} refused by ptxas, the others with no kernel form yet)"),
    ]
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="docutils litmus-summary">{body}</table>'


def conditions_html(reports) -> str:
    seen = sorted((r for r in reports if r.quantifier == "exists" and r.condition_count), key=lambda r: -r.condition_count / r.iterations)
    rows = "".join(
        f"<tr><td><code>{html.escape(r.name)}</code></td><td>{r.condition_count:,} of {r.iterations:,}</td>"
        f'<td>{r.condition_count / r.iterations:.4%}</td><td class="litmus-bar-cell">{_bar(min(1.0, 20 * r.condition_count / r.iterations))}</td></tr>'
        for r in seen
    )
    return f'<table class="docutils litmus-conditions"><thead><tr><th>test</th><th>runs showing its condition</th><th>rate</th><th>(x20)</th></tr></thead><tbody>{rows}</tbody></table>'


def grid_html(reports) -> str:
    families: dict[str, list] = {}
    for r in reports:
        families.setdefault(litmus_run.family_of(r), []).append(r)
    parts = []
    for family, group in sorted(families.items()):
        allowed = sum(len(r.allowed or ()) for r in group)
        never = sum(len(r.never_seen) for r in group)
        rows = []
        for r in sorted(group, key=lambda r: r.name):
            outcomes = sorted(set(r.allowed or ()) | set(r.seen))
            for i, outcome in enumerate(outcomes):
                count = r.seen.get(outcome, 0)
                verdict = "forbidden" if r.allowed is not None and outcome not in r.allowed else "allowed"
                kind = "forbidden-seen" if verdict == "forbidden" else ("seen" if count else "never")
                name = f'<td rowspan="{len(outcomes)}"><code>{html.escape(r.name)}</code><br>{r.iterations:,} runs</td>' if i == 0 else ""
                rows.append(
                    f'<tr class="litmus-{kind}">{name}<td><code>{html.escape(_outcome(r, outcome))}</code></td><td>{verdict}</td>'
                    f'<td>{count:,}</td><td class="litmus-bar-cell">{_bar(count / r.iterations)}</td></tr>'
                )
        table = (
            '<table class="docutils litmus-grid"><thead><tr><th>test</th><th>outcome</th><th>model</th><th>runs</th><th>share</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        parts.append(
            f"<details><summary><b>{html.escape(family)}</b>: {len(group)} tests, {allowed} allowed outcomes, {never} never seen</summary>{table}</details>"
        )
    return "".join(parts)


class LitmusSilicon(SphinxDirective):
    required_arguments = 1
    option_spec = {"summary-only": lambda argument: True}

    def run(self) -> list[nodes.Node]:
        path = REPO / self.arguments[0]
        self.env.note_dependency(str(path))
        record = litmus_run.load_recording(path)
        reports, skipped = litmus_run.check_recording(path)
        if any(r.forbidden_seen for r in reports):
            raise self.error(f"{path.name}: silicon showed outcomes the model forbids; `ptxspec litmus-run --check {self.arguments[0]}` lists them")
        out = [
            summary_html(record, reports, skipped),
            "<p><b>Conditions seen on silicon.</b> Tests whose <code>exists</code> outcome the chip showed (for the classic shapes, the weak outcome), most often first; the bar is twenty times the rate.</p>",
            conditions_html(reports),
        ]
        if "summary-only" not in self.options:
            out += [
                "<p><b>Allowed, observed, forbidden.</b> Per family (open one): every outcome the model allows, with the runs that showed it (a grey row: never seen), and any outcome silicon showed that the model forbids (none).</p>",
                grid_html(reports),
            ]
        return [nodes.raw("", "\n".join(out), format="html")]


def setup(app):
    app.add_directive("litmus-silicon", LitmusSilicon)
    return {"version": "1", "parallel_read_safe": True}
