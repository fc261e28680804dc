"""Sphinx extension: the silicon report, read from the recordings themselves.

The tables are computed at build time from ``conformance/data/sm_90/`` (with the second chip's
digest files) through
:func:`ptxspec.conformance.silicon.replay.load`, so the page cannot drift from the data that CI
replays. It adds to reStructuredText

* ``.. silicon-campaigns::`` -- one row per recorded round: the GPU, driver and CUDA runtime
  that produced it, how many forms and vectors it holds, the forms ptxas refused;
* ``.. silicon-chapters::`` -- one row per chapter of the manual: forms recorded, vectors per
  form (least and most), vectors in all;
* ``.. silicon-second-chip::`` -- which forms a second chip (H100 beside H200) ran, and whether
  its results are bit-identical (the rounds of :data:`SECOND_CHIPS`).
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ptxspec.conformance.silicon import replay
from ptxspec.spec.catalogue import parse

#: The manual's chapters of §9.7, by section prefix (the longest prefix wins).
CHAPTERS = {
    "9.7.1": "integer arithmetic (§9.7.1)",
    "9.7.2": "extended-precision integer arithmetic (§9.7.2)",
    "9.7.3": "floating point (§9.7.3)",
    "9.7.4": "half precision (§9.7.4)",
    "9.7.5": "mixed precision (§9.7.5)",
    "9.7.6": "comparison and selection (§9.7.6)",
    "9.7.7": "half-precision comparison (§9.7.7)",
    "9.7.8": "logic and shift (§9.7.8)",
    "9.7.9": "data movement and conversion (§9.7.9)",
    "9.7.13": "parallel synchronization: warp collectives (§9.7.13)",
    "9.7.18": "video (§9.7.18)",
}


def chapter(text: str) -> str:
    section = parse(text.split("#")[0]).family.section
    best = max((p for p in CHAPTERS if section == p or section.startswith(p + ".")), key=len, default=None)
    return CHAPTERS[best] if best else f"§{section}"


def vectors(recorded: replay.RecordedForm) -> int:
    """Vectors of one recorded form: rows, or warps of 32 lanes for a warp-level form."""
    rows = len(recorded.outputs[0])
    return rows // 32 if recorded.warp else rows


def table(header: list[str], rows: list[list[str]], widths: list[int] | None = None) -> nodes.table:
    tbl = nodes.table()
    group = nodes.tgroup(cols=len(header))
    tbl += group
    for w in widths or [1] * len(header):
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, cells in [(head, header)] + [(body, r) for r in rows]:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=str(cell))
            row += entry
        target += row
    return tbl


#: The scalar rounds a second chip ran, kept as per-form output digests (``ROUND-CHIP-digests.json``).
SECOND_CHIPS = (("float-cvt", "h100"), ("integer-half-video-warp", "h200"), ("remaining-forms", "h200"))


@functools.cache
def _recording() -> replay.Recording:
    return replay.load()


class Campaigns(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        rec = _recording()
        by_campaign: dict[str, list[replay.RecordedForm]] = defaultdict(list)
        for form in rec.forms.values():
            by_campaign[form.campaign].append(form)
        rows = []
        for name, meta in rec.campaigns.items():
            forms = by_campaign.get(name, [])
            path = replay.DATA / "sm_90" / f"rejected-{name}.json"
            refused = len(json.loads(path.read_text())) if path.exists() else 0
            rows.append(
                [
                    name,
                    meta["gpu"],
                    meta.get("nvidia_smi", "").split(", ")[-1],
                    str(meta["cuda_runtime_version"]),
                    f"{len(forms):,}",
                    f"{sum(vectors(f) for f in forms):,}",
                    str(refused),
                ]
            )
        return [table(["round", "GPU", "driver", "CUDA runtime", "forms", "vectors", "refused by ptxas"], rows)]


class Chapters(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        rec = _recording()
        counts: dict[str, list[int]] = defaultdict(list)
        for text, form in rec.forms.items():
            counts[chapter(text)].append(vectors(form))
        rows = [[name, f"{len(v):,}", f"{min(v):,} - {max(v):,}", f"{sum(v):,}"] for name, v in sorted(counts.items())]
        total = [n for v in counts.values() for n in v]
        rows.append(["all", f"{len(total):,}", f"{min(total):,} - {max(total):,}", f"{sum(total):,}"])
        return [table(["chapter", "forms", "vectors per form", "vectors"], rows, [4, 1, 2, 2])]


class SecondChip(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        rec = _recording()
        rows = []
        for name, chip in SECOND_CHIPS:
            path = replay.DATA / "sm_90" / f"{name}-{chip}-digests.json"
            if path.exists():
                other = json.loads(path.read_text())
                same = sum(1 for t, d in other["forms"].items() if t in rec.forms and replay.output_digest(rec.forms[t]) == d)
                rows.append([name, f"{rec.campaigns[name]['gpu']} / {other['gpu']}", f"{len(other['forms']):,}", f"{same:,}"])
        return [table(["round", "chips", "forms both ran", "bit-identical"], rows)]


def setup(app):
    app.add_directive("silicon-campaigns", Campaigns)
    app.add_directive("silicon-chapters", Chapters)
    app.add_directive("silicon-second-chip", SecondChip)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
