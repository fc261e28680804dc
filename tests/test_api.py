"""The public API at the top of the package (issue 20): ``ptxspec.evaluate``, ``check``,
``execute``, ``parse``, ``State``, ``Segment`` and ``ptxspec.litmus.check`` -- the same objects
as their modules', imported on first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ptxspec
from ptxspec.memory_model.check import Verdict
from ptxspec.semantics import instructions, state
from ptxspec.spec import catalogue
from ptxspec.spec.errors import PtxSpecError

REPO = Path(__file__).resolve().parents[1]


def test_the_names_are_the_modules_own():
    assert ptxspec.evaluate is instructions.evaluate and ptxspec.check is instructions.check and ptxspec.execute is instructions.execute
    assert ptxspec.parse is catalogue.parse and ptxspec.State is state.State and ptxspec.Segment is state.Segment
    assert set(ptxspec.__all__) >= {"evaluate", "check", "execute", "parse", "State", "Segment", "litmus"}


def test_the_docstring_examples():
    assert ptxspec.evaluate("add.rn.f32", [0x3F800000, 0x40000000]) == (0x40400000,)
    assert ptxspec.check("add.rn.f32", [0x7FC00000, 0x3F800000], [0x7FC00001]) is True
    memory = ptxspec.State(global_memory=ptxspec.Segment(0x1000, bytes([1, 2, 3, 4])))
    assert ptxspec.execute("ld.global.u32", [0x1000], state=memory).results == (0x04030201,)
    assert ptxspec.parse("cvt.rn.satfinite.e4m3x2.f32").text == "cvt.rn.satfinite.e4m3x2.f32"


def test_litmus_check_takes_a_path_or_the_text():
    path = REPO / "examples" / "litmus" / "MP.litmus"
    by_path = ptxspec.litmus.check(path)
    by_text = ptxspec.litmus.check(path.read_text(), engine="explicit")
    assert isinstance(by_path, Verdict) and by_path.ok is True and by_text.ok is True and by_path.states == by_text.states
    with pytest.raises(PtxSpecError, match=r"<string>:\d+"):
        ptxspec.litmus.check("PTX bad\n{ x=0; }\nP0@cta 0,gpu 0 ;\nfrob x ;\nexists (x == 1)\n")


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'evalute'"):
        ptxspec.evalute  # noqa: B018


def test_importing_the_package_imports_no_semantics():
    """``import ptxspec`` stays quick: the semantics load when a public name is first used."""
    code = "import sys, ptxspec; print('ptxspec.semantics.instructions' in sys.modules, 'ptxspec.memory_model.check' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.stdout.split() == ["False", "False"], done.stderr
