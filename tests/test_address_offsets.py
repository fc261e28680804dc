"""Address operands with an immediate offset (§6.4.1 "[reg+imm]", "[var+imm]"; §9.7.9.20 cvta's
"p, var+imm", §9.7.9.23 mapa's "d, sh + imm, b", §9.7.9.24 getctarank's "d, var + imm"): an
instruction text's operand template may write them, a variable's name standing for its address
(given as the operand's value). Checked against the same instruction at the summed address, and
against ptxas for what the syntax admits."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.semantics.instructions import execute
from ptxspec.semantics.state import Segment, State
from ptxspec.spec.catalogue import parse, parse_template, template_offsets
from ptxspec.spec.errors import IllegalForm

BASE = 0x7F00_0000_1000


@pytest.mark.parametrize(
    ("template", "offset"),
    [("r, [a+4]", 4), ("r, [a + 0x10]", 16), ("r, [a+-8]", -8), ("r, [a]", 0), ("p, var+12", 12), ("d, sh + 16, b", 16)],
)
def test_the_template_reads_the_offset(template, offset):
    items = parse_template(template)
    assert [item.displacement for item in items][1] == offset


def test_reg_minus_imm_is_not_ptx():
    """ptxas takes "[a+-4]" but not "[a-4]" ("Parsing error near '-'"); the template neither."""
    with pytest.raises(IllegalForm, match="expected ','"):
        parse("cvta.global.u64 p, var-4")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 15), st.integers(-3, 3), st.binary(min_size=128, max_size=128))
def test_ld_and_st_at_reg_plus_imm_are_the_summed_address(index, words, image):
    """``ld [a+imm]`` is ``ld`` at ``a + imm``; ``st [a+imm]`` the same for the store."""
    state = State(global_memory=Segment(BASE, image))
    start = BASE + 32 + 4 * index
    offset = 4 * words
    text = f"r, [a+{offset}]"  # "+-8" for a negative offset, as PTX writes it
    assert execute(f"ld.global.u32 {text}", [start], state=state).results == execute("ld.global.u32", [start + offset], state=state).results
    stored = execute(f"st.global.u32 [a+{offset}], b", [start, 0xDEADBEEF], state=state).state
    assert stored == execute("st.global.u32", [start + offset, 0xDEADBEEF], state=state).state


def test_cvta_of_a_variable_plus_offset_wraps_in_its_register():
    assert execute("cvta.global.u64 p, var+4", [0x1000]).results == execute("cvta.global.u64", [0x1004]).results
    assert execute("cvta.global.u32 p, var+8", [0xFFFF_FFFC]).results == execute("cvta.global.u32", [0x4]).results
    assert template_offsets(parse("getctarank.shared::cluster.u32"), "getctarank.shared::cluster.u32 d, var + 4") == {"a": 4}


@pytest.mark.parametrize(
    "text",
    [
        "add.s32 d, a+4, b",  # a register operand takes no offset
        "mapa.u64 d, a+4, b",  # the generic mapa takes "a register a" only
        "cvta.to.global.u64 p, var+4",  # "cvta.to.space.size p, a" (ptxas takes it; the manual does not write it)
        "mov.b64 d, {a+4, b}",  # nor a vector element
    ],
)
def test_an_offset_anywhere_else_is_refused(text):
    with pytest.raises(IllegalForm, match=r"offset|expected|vector"):
        parse(text)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on this machine")
def test_ptxas_takes_the_offset_forms(tmp_path):
    """The templates above, as ptxas assembles them in a kernel for sm_90a."""
    lines = [
        ("cvta.global.u64 %rd1, gvar+4;", "cvta.global.u64 p, var+4"),
        ("mapa.shared::cluster.u32 %r1, sh + 8, %r2;", "mapa.shared::cluster.u32 d, sh + 8, b"),
        ("getctarank.shared::cluster.u32 %r3, sh + 4;", "getctarank.shared::cluster.u32 d, var + 4"),
        ("ld.global.u32 %r4, [%rd1+-4];", "ld.global.u32 r, [a+-4]"),
        ("st.global.u32 [%rd1+8], %r4;", "st.global.u32 [a+8], b"),
    ]
    body = "\n".join(f" {ptx}" for ptx, _ in lines)
    source = f""".version 8.7
.target sm_90a
.address_size 64
.global .align 4 .u32 gvar[4];
.shared .align 4 .u32 sh[4];
.visible .entry k()
{{
 .reg .b64 %rd<4>; .reg .b32 %r<6>;
 mov.u32 %r2, 0;
{body}
 ret;
}}
"""
    (tmp_path / "k.ptx").write_text(source)
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for _, template in lines:
        parse(template)
