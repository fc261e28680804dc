"""The batched paths of §9.7.8 logic and shift (semantics/batch_logic_shift.py): every legal form
of and, or, xor, not, cnot, lop3, lop3.BoolOp, shf, shl, shr has a fast path, it agrees with the
readable semantics on the vectors generator's inputs under both batched profiles, and it agrees
with Python-integer oracles written from the manual on the inputs where these instructions have
their edges (every shift amount around the width, every immLut)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import batch_agreement
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import as_form

FAMILIES = ("and", "or", "xor", "not", "cnot", "lop3", "lop3.boolop", "shf", "shl", "shr")
FORMS = [text for family in FAMILIES for text in batch_agreement.legal_forms(family)]
PROFILES = ("spec", "sm_90")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", FORMS)
def test_agrees_with_the_readable_semantics(form_text: str, profile: str) -> None:
    batch_agreement.assert_agrees(form_text, profile, count=3000, seed=0)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_form_has_a_fast_path(profile: str) -> None:
    missing = [text for text in FORMS if not batch.has_fast_path(text, profile)]
    assert not missing
    assert len(FORMS) == 38  # 4 x and/or/xor/not, 3 cnot, 1 lop3, 2 lop3.BoolOp, 4 shf, 3 shl, 9 shr


# ---------------------------------------------------------------------------------------------
# Python-integer oracles
# ---------------------------------------------------------------------------------------------


def _run(form_text: str, *sources: list[int]) -> list[tuple[int, ...]]:
    """The batched results of ``form_text`` on the vectors ``zip(*sources)``, as integer tuples."""
    form = as_form(form_text)
    arrays = [np.array(s, dtype=np.uint64) for s in sources]
    results = batch.evaluate_batch_all(form, arrays, "spec")
    return [tuple(int(r.bits[i]) for r in results) for i in range(len(sources[0]))]


def _words(width: int, count: int, seed: int) -> list[int]:
    """Edge words of ``width`` bits, then seeded random ones."""
    rng = random.Random(seed)
    top = (1 << width) - 1
    edges = [0, 1, 2, top, top - 1, 1 << (width - 1), (1 << (width - 1)) - 1, 0x5555_5555_5555_5555 & top, 0xAAAA_AAAA_AAAA_AAAA & top]
    return (edges + [rng.getrandbits(width) for _ in range(count)])[:count]


def _amounts(width: int, count: int, seed: int) -> list[int]:
    """Unsigned 32-bit shift amounts: every amount up to past the width, the largest ones, then
    seeded random ones."""
    rng = random.Random(seed)
    edges = list(range(0, 2 * width + 3)) + [0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 0x1_0000 + width]
    return (edges + [rng.getrandbits(32) for _ in range(count)])[:count]


def _signed(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) else value


@pytest.mark.parametrize("width", [16, 32, 64])
def test_shifts_against_python_integers(width: int) -> None:
    """§9.7.8.8-9: ``d = a << b``, ``d = a >> b``, amounts above the width N clamped to N, signed
    shifts filling with the sign."""
    n = 3000
    a, b = _words(width, n, 1), _amounts(width, n, 2)
    random.Random(3).shuffle(a)
    top = (1 << width) - 1
    assert _run(f"shl.b{width}", a, b) == [((x << min(s, width)) & top,) for x, s in zip(a, b)]
    for kind in ("b", "u"):
        assert _run(f"shr.{kind}{width}", a, b) == [(x >> min(s, width),) for x, s in zip(a, b)]
    assert _run(f"shr.s{width}", a, b) == [((_signed(x, width) >> min(s, width)) & top,) for x, s in zip(a, b)]


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@pytest.mark.parametrize("direction", ["l", "r"])
def test_shf_against_python_integers(direction: str, mode: str) -> None:
    """§9.7.8.7: the 64-bit ``[b, a]`` shifted by n (clamp: ``min(c, 32)``, wrap: ``c & 0x1f``);
    shf.l writes the 32 msbs of the result, shf.r the 32 lsbs."""
    n = 3000
    a, b, c = _words(32, n, 4), _words(32, n, 5), _amounts(32, n, 6)
    random.Random(7).shuffle(b)
    want = []
    for x, y, s in zip(a, b, c):
        k = min(s, 32) if mode == "clamp" else s % 32
        wide = (y << 32) | x
        want.append((((wide << k) >> 32) & 0xFFFF_FFFF if direction == "l" else (wide >> k) & 0xFFFF_FFFF,))
    assert _run(f"shf.{direction}.{mode}.b32", a, b, c) == want
    # Rotations (a == b, the manual's examples): by n, n = 32 being the identity.
    amounts = [(min(s, 32) if mode == "clamp" else s % 32) % 32 for s in c[:200]]
    rotate = (lambda x, k: x << k | x >> (32 - k)) if direction == "l" else (lambda x, k: x >> k | x << (32 - k))
    assert [d for (d,) in _run(f"shf.{direction}.{mode}.b32", a[:200], a[:200], c[:200])] == [rotate(x, k) & 0xFFFF_FFFF for x, k in zip(a, amounts)]


#: The manual's examples of §9.7.8.6: F and its immLut.
LOP3_EXAMPLES = {
    0x80: lambda a, b, c: a & b & c,
    0xFE: lambda a, b, c: a | b | c,
    0x40: lambda a, b, c: a & b & ~c,
    0x1A: lambda a, b, c: (a & b | c) ^ a,
}


def test_lop3_table_identity() -> None:
    """§9.7.8.6: "immLut = F(ta, tb, tc)" with ta = 0xF0, tb = 0xCC, tc = 0xAA -- so lop3 applied
    to those three words gives back its table, for every one of the 256 tables."""
    tables = list(range(256))
    got = _run("lop3.b32", [0xF0] * 256, [0xCC] * 256, [0xAA] * 256, tables)
    assert [d & 0xFF for (d,) in got] == tables
    assert [d >> 8 for (d,) in got] == [0xFFFFFF if t & 1 else 0 for t in tables]  # bits with a = b = c = 0


def test_lop3_manual_examples() -> None:
    n = 2000
    a, b, c = _words(32, n, 8), _words(32, n, 9), _words(32, n, 10)
    random.Random(11).shuffle(b)
    for table, function in LOP3_EXAMPLES.items():
        assert _run("lop3.b32", a, b, c, [table] * n) == [(function(x, y, z) & 0xFFFF_FFFF,) for x, y, z in zip(a, b, c)]


@pytest.mark.parametrize("boolop", ["or", "and"])
def test_lop3_boolop_against_python_integers(boolop: str) -> None:
    """``p = (d != 0) BoolOp q``, with every table (so d is zero and nonzero) and both q."""
    rng = random.Random(12)
    n = 4096
    a, b, c = _words(32, n, 13), _words(32, n, 14), _words(32, n, 15)
    tables = [i % 256 for i in range(n)]
    q = [rng.getrandbits(1) for _ in range(n)]
    want = []
    for x, y, z, t, r in zip(a, b, c, tables, q):
        d = sum(((t >> ((x >> i & 1) << 2 | (y >> i & 1) << 1 | (z >> i & 1))) & 1) << i for i in range(32))
        want.append((d, (int(d != 0) | r) if boolop == "or" else (int(d != 0) & r)))
    assert _run(f"lop3.{boolop}.b32", a, b, c, tables, q) == want


def test_predicates_against_python_integers() -> None:
    """and, or, xor, not on .pred: every combination of the two one-bit operands."""
    a, b = [0, 0, 1, 1], [0, 1, 0, 1]
    assert _run("and.pred", a, b) == [(x & y,) for x, y in zip(a, b)]
    assert _run("or.pred", a, b) == [(x | y,) for x, y in zip(a, b)]
    assert _run("xor.pred", a, b) == [(x ^ y,) for x, y in zip(a, b)]
    assert _run("not.pred", a) == [(1 - x,) for x in a]


@pytest.mark.parametrize("width", [16, 32, 64])
def test_bitwise_and_cnot_against_python_integers(width: int) -> None:
    n = 2000
    a, b = _words(width, n, 16), _words(width, n, 17)
    random.Random(18).shuffle(b)
    top = (1 << width) - 1
    assert _run(f"and.b{width}", a, b) == [(x & y,) for x, y in zip(a, b)]
    assert _run(f"or.b{width}", a, b) == [(x | y,) for x, y in zip(a, b)]
    assert _run(f"xor.b{width}", a, b) == [(x ^ y,) for x, y in zip(a, b)]
    assert _run(f"not.b{width}", a) == [(top - x,) for x in a]
    if width > 8:
        assert _run(f"cnot.b{width}", a) == [(int(x == 0),) for x in a]
