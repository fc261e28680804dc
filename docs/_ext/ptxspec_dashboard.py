"""Sphinx extension: the dashboard, computed from the repository's data at every build.

``.. dashboard-chapters::`` -- per chapter module of the catalogue (the manual's order): its
instruction families (syntax lines), how many of them have a semantic function, and how many have
a form recorded on an H100/H200: the scalar rounds of :func:`ptxspec.conformance.silicon.replay.load`,
the memory and async rounds' plans, the mma, mma.sp, wgmma and movement campaigns' combinations,
the async round's mbarrier programs and the TMA rounds' cases -- each from the round's own texts.

``.. dashboard-agreement::`` -- ptxas's verdicts against the catalogue's (the committed
``conformance/data/ptxas_agreement.json``, by category, with the explained disagreements), and
the manual's litmus tests (``tests/litmus/manual``, checked now by both engines) against the
verdicts the manual gives.
"""

from __future__ import annotations

import csv
import functools
import importlib
import json
from pathlib import Path

from docutils import nodes
from ptxspec_silicon import table
from sphinx.util.docutils import SphinxDirective

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "conformance" / "data"


def _family_key(text: str) -> str | None:
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.errors import PtxSpecError

    try:
        return parse(text.split("#")[0]).family.key
    except PtxSpecError:
        return None


@functools.cache
def recorded_families() -> frozenset[str]:
    """The catalogue families with a form recorded on silicon, from each round's own texts."""
    from ptxspec.conformance.silicon import async_campaign, mma_campaign, movement_campaign, replay, tma_campaign, tma_device, wgmma_campaign
    from ptxspec.spec.catalogue import CATALOGUE

    texts = list(replay.load().forms)  # the scalar rounds
    for plan in ("memory-plan.json", "async-plan.json"):
        texts += [f["instruction"] for f in json.loads((DATA / "sm_90" / plan).read_text())["forms"]]
    mma = mma_campaign.COMBINATIONS + mma_campaign.SPARSE_COMBINATIONS + mma_campaign.SPARSE_MORE_COMBINATIONS + mma_campaign.MORE_COMBINATIONS
    texts += [c.instruction() if callable(c.instruction) else c.instruction for c in mma]  # the mma and mma.sp rounds
    # the async round's mbarrier programs: their steps and the probes recorded after each
    texts += [line.strip().rstrip(";") for line in async_campaign.program_ptx().splitlines() if line.strip().startswith("mbarrier.")]
    for round_name in tma_campaign.ROUNDS:  # the TMA rounds: each case's load, store and tensormap.replace
        plan = DATA / "sm_90" / tma_device.files(round_name)["plan"]
        for case in json.loads(plan.read_text())["cases"] if plan.exists() else []:
            texts.append(
                f"cp.async.bulk.tensor.{tma_campaign.loaded_rank(case)}d.shared::cluster.global.{case.get('mode', 'tile')}.mbarrier::complete_tx::bytes"
            )
            if case.get("mode") != "im2col" and "replace" not in case:
                texts.append(f"cp.async.bulk.tensor.{len(case['global_dims'])}d.global.shared::cta.tile.bulk_group")
            if "replace" in case:
                texts.append(f"tensormap.replace.tile.{case['replace']['field']}.global.b1024.{case['replace']['type']}")
    keys = {_family_key(t) for t in texts} | {f.key for f in movement_campaign.FAMILIES}  # ldmatrix, stmatrix, movmatrix
    for combo in wgmma_campaign.COMBINATIONS + wgmma_campaign.MORE_COMBINATIONS + wgmma_campaign.PRUNED_COMBINATIONS:
        key = _family_key(combo.opcode(256))  # the A-from-registers family of a syntax line is its key + ".a"
        keys.add(f"{key}.a" if key and combo.a_registers else key)
    keys.discard(None)
    missing = keys - {f.key for f in CATALOGUE.families()}
    assert not missing, f"recorded families the catalogue does not name: {sorted(missing)}"  # type: ignore[arg-type]
    return frozenset(keys)  # type: ignore[arg-type]


class DashboardChapters(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        from ptxspec.semantics.instructions import SEMANTICS, _load_chapters
        from ptxspec.spec.catalogue import CHAPTERS

        _load_chapters()
        recorded = recorded_families()
        rows, totals = [], [0, 0, 0]
        for name in CHAPTERS:
            families = importlib.import_module(f"ptxspec.spec.{name}").FAMILIES
            sections = sorted({f.section for f in families}, key=lambda s: [int(p) for p in s.split(".")])
            counts = [len(families), sum(f.key in SEMANTICS for f in families), sum(f.key in recorded for f in families)]
            totals = [t + c for t, c in zip(totals, counts)]
            rows.append([name.replace("_", " "), f"§{sections[0]} - §{sections[-1]}" if len(sections) > 1 else f"§{sections[0]}", *map(str, counts)])
        rows.append(["all", "", *map(str, totals)])
        return [table(["chapter module", "sections", "families (syntax lines)", "with semantics", "recorded on silicon"], rows, [3, 3, 2, 2, 2])]


@functools.cache
def manual_litmus() -> tuple[int, int, list[str]]:
    """(tests, as the manual says, the names of the others) of tests/litmus/manual."""
    from ptxspec.memory_model import lowering
    from ptxspec.memory_model.check import check

    folder = REPO / "tests" / "litmus" / "manual"
    expected = {row["test"]: int(row["expected"]) for row in csv.DictReader((folder / "expected.csv").open())}
    differ = [name for name, want in sorted(expected.items()) if int(bool(check(lowering.load(folder / name), engine="both").ok)) != want]
    return len(expected), len(expected) - len(differ), differ


class DashboardAgreement(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        agreement = json.loads((DATA / "ptxas_agreement.json").read_text())
        rows = [[category, str(c.get("agree", 0)), str(c.get("disagree", 0))] for category, c in sorted(agreement["by_category"].items())]
        rows.append(["all", str(agreement["agree"]), str(agreement["disagree"])])
        known = ", ".join(f"{k} ({v})" for k, v in sorted(agreement["disagree_known"].items()))
        tests, agree, differ = manual_litmus()
        litmus = nodes.paragraph(
            text=f"The manual's litmus tests (tests/litmus/manual): {agree} of {tests} get the verdict the manual gives"
            + (f"; the others: {', '.join(differ)}." if differ else ".")
        )
        note = nodes.paragraph(
            text=f"ptxas {agreement['ptxas_version']} on {agreement['total']:,} instruction texts (a seeded sample per family); "
            f"every disagreement is an explained, known one: {known}."
        )
        return [table(["category of text", "ptxas agrees", "ptxas disagrees"], rows, [4, 2, 2]), note, litmus]


def setup(app):
    app.add_directive("dashboard-chapters", DashboardChapters)
    app.add_directive("dashboard-agreement", DashboardAgreement)
    return {"version": "1", "parallel_read_safe": True}
