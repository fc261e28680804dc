"""The ``campaign`` label that conformance/silicon/wgmma_device.py writes into a recording's meta
comes from the part being recorded (the rounds ``wgmma``, ``wgmma-more`` and ``wgmma-pruned``),
not from one string for every part. The recordings already in conformance/data keep the meta they
were recorded with; this checks what the next run writes, with stand-ins for the GPU."""

from __future__ import annotations

import json

import pytest
from ptxspec.conformance.silicon import wgmma_campaign, wgmma_device


def test_every_part_of_the_campaign_has_its_label():
    assert set(wgmma_campaign.PARTS) <= set(wgmma_device.CAMPAIGNS)
    assert wgmma_device.campaign_label({"part": "pruned"}).startswith("wgmma campaign, round wgmma-pruned:")
    assert wgmma_device.campaign_label({"part": ""}).startswith("wgmma campaign, round wgmma:")
    assert all(f"round {name}:" in wgmma_device.campaign_label({"part": r.part}) for name, r in wgmma_campaign.ROUNDS.items())
    assert wgmma_device.campaign_label({}) == wgmma_device.campaign_label({"part": None}) == wgmma_device.CAMPAIGNS[""]
    assert len({wgmma_device.campaign_label({"part": p}) for p in wgmma_campaign.PARTS}) == len(wgmma_campaign.PARTS)


@pytest.mark.parametrize("part", sorted(wgmma_campaign.PARTS))
def test_run_writes_the_label_of_its_part(part, tmp_path, monkeypatch):
    plan = {"kernels": [], "selfcheck": [], "rejected": [], "assembler": "ptxas (stand-in)", "part": part}
    monkeypatch.setattr(wgmma_device, "_load_bundle", lambda bundle: (plan, {}))
    monkeypatch.setattr(wgmma_device, "_load_module", lambda bundle: None)
    monkeypatch.setattr(wgmma_device, "_device_meta", lambda: {"gpu": "stand-in"})
    wgmma_device.run(tmp_path / "bundle", tmp_path)
    meta = json.loads((tmp_path / f"meta-{wgmma_campaign.part_prefix(part)}.json").read_text())
    assert meta["campaign"] == wgmma_device.CAMPAIGNS[part]


def test_an_unknown_part_is_refused_before_any_kernel_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(wgmma_device, "_load_bundle", lambda bundle: ({"kernels": [], "part": "later"}, {}))

    def no_module(bundle):
        raise AssertionError("a kernel module was loaded for a part without a label")

    monkeypatch.setattr(wgmma_device, "_load_module", no_module)
    with pytest.raises(ValueError, match="later"):
        wgmma_device.run(tmp_path / "bundle", tmp_path)
