"""The profiles package: one record per chip, every choice backed by a recording, and no semantic
module that looks a chip up by its name."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from ptxspec.profiles import NAMES, PROFILES, SPEC, MatrixKey, Profile, profile_named
from ptxspec.profiles.sm_90 import SM_90
from ptxspec.spec.errors import PtxSpecError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "conformance" / "data"


def test_registry():
    assert list(PROFILES) == list(NAMES) == ["spec", "sm_90", "sm_100"]
    assert PROFILES["sm_90"] is SM_90 is profile_named("sm_90")
    assert profile_named("spec") is SPEC and profile_named(SM_90) is SM_90
    with pytest.raises(PtxSpecError, match="unknown profile 'sm_91'"):
        profile_named("sm_91")
    with pytest.raises(KeyError):
        PROFILES["sm_91"]


def test_the_results_module_still_names_the_profiles():
    from ptxspec.semantics import results

    assert results.SPEC is SPEC and results.SM_90 is SM_90 and results.Profile is Profile and results.profile_named is profile_named


def test_spec_makes_no_choice():
    assert SPEC.choices() == () and SPEC.evidence == {}


def test_every_sm90_choice_names_its_recordings():
    assert set(SM_90.choices()) <= set(SM_90.evidence)
    for field, files in SM_90.evidence.items():
        assert files, field
        for name in files:
            assert (DATA / name).exists(), (field, name)


def test_evidence_names_fields():
    with pytest.raises(ValueError, match="no_such_field"):
        Profile("x", evidence={"no_such_field": ("sm_90/meta-float-cvt.json",)})


def test_matrix_key_words():
    key = MatrixKey("f64", "f64", "f64", "f64", shape="m8n8k4", rounding="rn")
    assert key.parts() == ("f64", "f64", "f64", "f64", "rn", "m8n8k4")
    assert MatrixKey("f16", "f16", "f32", "f32", shape="m16n8k32", sparse=True).parts() == ("f16", "f16", "f32", "f32", "m16n8k32", "sp")
    from ptxspec.semantics.numerics import Rounding

    assert MatrixKey("f64", "f64", "f64", "f64", shape="m8n8k4", rounding=Rounding.RN) == key
    assert key in SM_90.mma_datapaths


def test_a_variant_is_a_record():
    variant = attrs.evolve(SM_90, wgmma_scale_d_false_c="+0")
    assert variant.wgmma_scale_d_false_c == "+0" and SM_90.wgmma_scale_d_false_c == "-0"
    with pytest.raises(ValueError):
        attrs.evolve(SM_90, wgmma_scale_d_false_c="0")


#: A look-up of a chip by its name: ``profile.name`` compared, or used as a key.
NAME_LOOKUP = re.compile(r"profile\.name\s*(==|!=|in\b|\))|\[profile\.name\]|\(profile\.name,")


@pytest.mark.parametrize("path", sorted((REPO / "semantics").glob("*.py")) + sorted((REPO / "spec").glob("*.py")), ids=lambda p: p.name)
def test_no_semantic_module_looks_a_chip_up_by_name(path):
    lines = [line for line in path.read_text().splitlines() if NAME_LOOKUP.search(line)]
    assert not lines, lines
