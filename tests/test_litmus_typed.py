"""Typed memory accesses in litmus tests: a location holds the bits its ld/st/atom/red ``.type``
moves (§9.7.9.8 ld, §9.7.9.9 st, §9.7.13.5 atom), a store keeps the low bits of its value, a load
zero- or sign-extends them into the dialect's 64-bit register as ``ld`` does
(:func:`ptxspec.semantics.instructions.execute` is the oracle), and a constant compared with the
location is taken at its width. Accesses of two sizes to one location partially overlap (§8.2.1),
which the engines do not model: such a test is refused, never answered."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ptxspec.memory_model import lowering
from ptxspec.memory_model.check import check
from ptxspec.semantics.instructions import execute
from ptxspec.semantics.state import Segment, State
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import register_bits


def _verdict(text: str):
    return check(lowering.load(textwrap.dedent(text)), engine="both")


def _one_thread(store: str, load: str, init: str = "x=0;", condition: str = "") -> str:
    return f"""PTX typed
    {{ {init} P0:r0=0; P0:r1=0; }}
    P0@cta 0,gpu 0 ;
    {store} ;
    {load} ;
    exists ({condition})
    """


@pytest.mark.parametrize(
    ("store_type", "load_type", "value"),
    [("u16", "u16", 0x10001), ("u8", "s8", 0xFF), ("b32", "s32", 0x1_8000_0000), ("u32", "u32", -1), ("b16", "s16", 0x7FFF), ("u64", "s64", -5)],
)
def test_a_load_after_a_store_gives_what_ld_gives(store_type, load_type, value):
    """The store's low bits, extended by the load as the semantics of st then ld do on bytes."""
    source = value & ((1 << register_bits(store_type)) - 1)  # st's source register holds the value's low bits
    memory = execute(f"st.global.{store_type}", [0x1000, source], state=State(global_memory=Segment(0x1000, bytes(8)))).state
    (loaded,) = execute(f"ld.global.{load_type}", [0x1000], state=memory).results
    bits = register_bits(next(o for o in parse(f"ld.global.{load_type}").operands if o.destination).type)  # ld's destination register
    register = loaded - (1 << bits) if load_type.startswith("s") and loaded >> (bits - 1) else loaded  # the integer it holds
    text = _one_thread(f"mov r1, {value} ;\n    st.global.{store_type} [x], r1", f"ld.global.{load_type} r0, [x]", condition=f"P0:r0 == {register}")
    verdict = _verdict(text)
    assert verdict.ok is True and verdict.positive and not verdict.negative


def test_a_constant_compared_with_a_location_is_taken_at_its_width():
    text = _one_thread("mov r1, -1 ;\n    st.global.u32 [x], r1", "ld.global.u32 r0, [x]", condition="x == -1 /\\ P0:r0 == 4294967295")
    assert _verdict(text).ok is True


def test_a_typed_atomic_wraps_and_extends():
    """atom.add.u32 on 0xffffffff leaves 0 and returns 0xffffffff; atom.add.s32 returns -1."""
    text = _one_thread(
        "atom.global.add.u32 r0, [x], 1", "atom.global.add.s32 r1, [x], -1", init="x=4294967295;", condition="P0:r0 == 4294967295 /\\ P0:r1 == 0 /\\ x == -1"
    )
    assert _verdict(text).ok is True


def test_message_passing_on_16_bit_locations_keeps_its_verdicts():
    """MP with .u16 accesses: the relaxed outcome allowed, the release/acquire one forbidden."""
    mp = """PTX MP16
    {{ x=0; y=0; P1:r0=0; P1:r1=0; }}
    P0@cta 0,gpu 0            | P1@cta 1,gpu 0            ;
    st.global.{w}.u16 [x], 1 | ld.global.{r}.u16 r0, [y] ;
    st.global.{w2}.u16 [y], 1 | ld.global.{r2}.u16 r1, [x] ;
    exists (P1:r0 == 1 /\\ P1:r1 == 0)
    """
    assert _verdict(mp.format(w="weak", w2="weak", r="weak", r2="weak")).ok is True
    assert _verdict(mp.format(w="weak", w2="release.gpu", r="acquire.gpu", r2="weak")).ok is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_one_thread("st.global.u32 [x], 65537", "ld.global.u16 r0, [x]", condition="P0:r0 == 1"), "mixed-size tests are not supported"),
        (_one_thread("st.global.u8 [x], 1", "ld.global.u8 r0, [x]", init="x=256;", condition="P0:r0 == 1"), "does not fit the 8-bit accesses"),
        (_one_thread("st.global.b128 [x], 1", "ld.global.u8 r0, [y]", condition="P0:r0 == 1"), "128-bit access"),
    ],
)
def test_what_a_location_cannot_hold_is_refused(text, message):
    with pytest.raises(PtxSpecError, match=message):
        lowering.load(textwrap.dedent(text))


def test_the_command_line_refuses_a_mixed_size_test_with_exit_2(tmp_path):
    path = tmp_path / "mixed.litmus"
    path.write_text(textwrap.dedent(_one_thread("st.global.u32 [x], 65537", "ld.global.u16 r0, [x]", condition="P0:r0 == 1")))
    done = subprocess.run([sys.executable, "-m", "ptxspec", "litmus", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "mixed.litmus:" in done.stderr and "partially overlap" in done.stderr
