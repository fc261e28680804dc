"""Floating-point atom and red in the litmus dialect (§9.7.13.5-6): the value an atomic leaves is
computed by the numerics core (``semantics.atomics.atomic_values``), "one meaning" for the litmus engines and
the instruction semantics. Checked against ptxas (which forms are PTX), numpy and ml_dtypes (the
values), and the litmus engines (tests/litmus/manual/atom-add-f32-*)."""

from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.memory_model import litmus
from ptxspec.semantics import atomics
from ptxspec.spec.errors import PtxSpecError

TYPES = ("f16", "bf16", "f16x2", "bf16x2", "f32", "f64")
REGISTER = {"f16": "h", "bf16": "h", "f16x2": "r", "bf16x2": "r", "f32": "r", "f64": "l"}


@pytest.mark.parametrize("opcode", ["atom", "red"])
def test_the_dialect_accepts_a_float_atomic_iff_ptxas_does(ptxas, tmp_path, opcode):
    for kind in TYPES:
        for op in ("add", "min", "max", "exch"):
            for noftz in ("", ".noftz"):
                if opcode == "red" and op == "exch":
                    continue
                form = f"{opcode}.global.{op}{noftz}.{kind}"
                try:
                    dest = "r0, " if opcode == "atom" else ""
                    litmus.parse(f"PTX t\n{{\nx=0;\n}}\n P0@cta 0,gpu 0 ;\n {form} {dest}x, 1 ;\nexists (x == 1)\n")
                    ours = True
                except PtxSpecError:
                    ours = False
                reg = REGISTER[kind]
                operands = f"%{reg}, [%a], %{reg}" if opcode == "atom" else f"[%a], %{reg}"
                source = tmp_path / "k.ptx"
                source.write_text(
                    f".version 8.7\n.target sm_90a\n.address_size 64\n.entry k() {{\n.reg .b64 %a, %l;\n.reg .b32 %r;\n.reg .b16 %h;\n{form} {operands};\nret;\n}}\n"
                )
                theirs = subprocess.run([ptxas, "-arch=sm_90a", str(source), "-o", str(tmp_path / "k.o")], capture_output=True).returncode == 0
                assert ours == theirs, (form, ours, theirs)


def _f32(bits: int) -> np.float32:
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def _bits32(value) -> int:
    return int(np.array([value], dtype=np.float32).view(np.uint32)[0])


def _flushed(value: np.float32) -> np.float32:
    tiny = np.finfo(np.float32).tiny
    return np.copysign(np.float32(0), value) if value != 0 and abs(value) < tiny else value


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_f32_add_flushes_on_global_keeps_subnormals_on_shared_and_may_do_either_unnamed(a, b):
    """§9.7.13.5: atom.add.f32 rounds to nearest even; on global memory it "flushes subnormal inputs
    and results to sign-preserving zero", on shared memory it "supports subnormal inputs and
    results"; with generic addressing the location may be in either (numpy float32 is the oracle)."""
    x, y = _f32(a), _f32(b)
    with np.errstate(all="ignore"):
        kept = np.float32(x + y)
        flushed = _flushed(np.float32(_flushed(x) + _flushed(y)))
    (on_global,) = atomics.atomic_values("add", a, (b,), ("global", "f32"))
    (on_shared,) = atomics.atomic_values("add", a, (b,), ("shared", "f32"))
    unnamed = atomics.atomic_values("add", a, (b,), ("f32",))
    for got, expected in ((on_global, flushed), (on_shared, kept)):
        assert np.isnan(_f32(got)) if np.isnan(expected) else got == _bits32(expected)
    assert set(unnamed) == {on_global, on_shared}


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.sampled_from(["f16x2", "bf16x2"]))
def test_packed_half_adds_are_two_independent_rounded_adds(a, b, kind):
    """.add.noftz.f16x2 / .bf16x2: each half added and rounded to nearest even, subnormals kept
    (numpy float16, ml_dtypes bfloat16; float64 is exact for the sum of two such values)."""
    dtype = np.float16 if kind == "f16x2" else ml_dtypes.bfloat16
    (got,) = atomics.atomic_values("add", a, (b,), ("noftz", kind))
    for shift in (0, 16):
        x, y, z = (np.array([(v >> shift) & 0xFFFF], dtype=np.uint16).view(dtype)[0] for v in (a, b, got))
        with np.errstate(all="ignore"):
            expected = dtype(np.float64(x) + np.float64(y))
        if np.isnan(np.float64(expected)):
            assert np.isnan(np.float64(z))
        else:
            assert np.array([z]).view(np.uint16)[0] == np.array([expected], dtype=dtype).view(np.uint16)[0]
