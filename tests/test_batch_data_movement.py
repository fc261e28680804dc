"""The batched paths of the register forms of §9.7.9 data movement
(semantics/batch_data_movement.py): mov, mov's vector pack and unpack forms, prmt. Every legal form
has a fast path, agrees with the readable semantics under both batched profiles, and agrees with
Python-integer oracles written from the manual (the byte orders of §9.7.9.4, the selector codes
and mode tables of §9.7.9.7)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import batch_agreement
from ptxspec.semantics import batch
from ptxspec.semantics.instructions import as_form, evaluate
from ptxspec.spec.types import register_bits

FAMILIES = ("mov", "mov.pack.x2", "mov.pack.x4", "mov.unpack.x2", "mov.unpack.x4", "prmt")
FORMS = [text for family in FAMILIES for text in batch_agreement.legal_forms(family)]
PROFILES = ("spec", "sm_90")


def _wide_source(form_text: str) -> bool:
    """Whether a source is a .b128 register (the vectors generator draws at most 64 bits)."""
    return any(register_bits(o.type) > 64 for o in as_form(form_text).inputs)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", [t for t in FORMS if not _wide_source(t)])
def test_agrees_with_the_readable_semantics(form_text: str, profile: str) -> None:
    batch_agreement.assert_agrees(form_text, profile, count=3000, seed=0)


def _words128(count: int, seed: int) -> list[int]:
    """.b128 words: every field boundary of the x2 and x4 unpackings, then seeded random."""
    rng = random.Random(seed)
    edges = [0, 1, (1 << 128) - 1, 1 << 127, (1 << 127) - 1]
    for k in (32, 64, 96):
        edges += [1 << k, (1 << k) - 1, ((1 << 128) - 1) ^ (1 << k)]
    return edges + [rng.getrandbits(128) for _ in range(count - len(edges))]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form_text", [t for t in FORMS if _wide_source(t)])
def test_b128_sources_agree_with_the_readable_semantics(form_text: str, profile: str) -> None:
    """mov.b128 {d.x, d.y}, a and its x4 twin on an object array of 128-bit Python ints (the
    register's batched representation), every destination compared."""
    form = as_form(form_text)
    assert batch.has_fast_path(form, profile)
    words = _words128(2000, 1)
    results = batch.evaluate_batch_all(form, [np.array(words, dtype=object)], profile)
    for i, word in enumerate(words):
        assert tuple(r.result(i) for r in results) == evaluate(form, [word], profile)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_form_has_a_fast_path(profile: str) -> None:
    missing = [text for text in FORMS if not batch.has_fast_path(text, profile)]
    assert not missing
    assert len(FORMS) == 12 + 4 + 3 + 4 + 3 + 7


def test_forms_of_one_text_keep_their_own_paths() -> None:
    """``mov.b32 d, a``, ``mov.b32 d, {a.x, a.y}`` and ``mov.b32 {d.x, d.y}, a`` have the same form
    text and different families: each must get its own path, whichever was asked first."""
    texts = ["mov.b32 d, a", "mov.b32 d, {a.x, a.y, a.z, a.w}", "mov.b32 {d.x, d.y}, a", "mov.b32 {d.x, d.y, d.z, d.w}, a", "mov.b32 d, {a.x, a.y}"]
    for text in texts:
        form = as_form(text)
        sources = [
            np.array([0x9ABC_DEF0 >> k, 0x1234_5678 >> k], dtype=np.uint64) & np.uint64((1 << register_bits(o.type)) - 1) for k, o in enumerate(form.inputs)
        ]
        results = batch.evaluate_batch_all(form, sources, "spec")
        want = [evaluate(form, [int(s[i]) for s in sources], "spec") for i in range(2)]
        assert [tuple(r.result(i) for r in results) for i in range(2)] == want, text


# ---------------------------------------------------------------------------------------------
# Python-integer oracles
# ---------------------------------------------------------------------------------------------


def _run(form_text: str, *sources: list[int]) -> list[tuple[int, ...]]:
    """The batched results of ``form_text`` on the vectors ``zip(*sources)``, as integer tuples."""
    form = as_form(form_text)
    arrays = [np.array(s, dtype=object if register_bits(o.type) > 64 else np.uint64) for s, o in zip(sources, form.inputs)]
    results = batch.evaluate_batch_all(form, arrays, "spec")
    return [tuple(int(r.bits[i]) for r in results) for i in range(len(sources[0]))]


def _fields(width: int, count: int, n: int, seed: int) -> list[list[int]]:
    """``count`` columns of ``n`` random ``width``-bit fields, edge fields first."""
    rng = random.Random(seed)
    top = (1 << width) - 1
    edges = [0, 1, top, 1 << (width - 1), top >> 1]
    return [(edges[k:] + edges[:k] + [rng.getrandbits(width) for _ in range(n)])[:n] for k in range(count)]


@pytest.mark.parametrize(("width", "count"), [(16, 2), (32, 2), (64, 2), (128, 2), (32, 4), (64, 4), (128, 4)])
def test_pack_and_unpack_against_python_integers(width: int, count: int) -> None:
    """§9.7.9.4: ``d = a.x | (a.y << n) | (a.z << 2n) | (a.w << 3n)`` with n = width / count (the
    first element least significant), and unpack the inverse."""
    n = width // count
    columns = _fields(n, count, 1000, width + count)
    names = "{a.x, a.y}" if count == 2 else "{a.x, a.y, a.z, a.w}"
    packed = [sum(x << (i * n) for i, x in enumerate(row)) for row in zip(*columns)]
    assert _run(f"mov.b{width} d, {names}", *columns) == [(d,) for d in packed]
    targets = names.replace("a.", "d.")
    assert _run(f"mov.b{width} {targets}, a", packed) == list(zip(*columns))


def test_mov_keeps_every_bit_pattern() -> None:
    """§9.7.9.3 ``d = a;`` -- NaN payloads, negative zeros and signed extremes unchanged."""
    words = [0, 1, 0x7FC0_0001, 0xFF80_0001, 0x8000_0000, 0xFFFF_FFFF, 0x7FF8_0000_0000_0001, 0xFFF0_0000_0000_0001, 1 << 63]
    for kind in ("b64", "u64", "s64", "f64"):
        assert _run(f"mov.{kind} d, a", words) == [(w,) for w in words]
    short = [w for w in words if w < 1 << 32]
    for kind in ("b32", "u32", "s32", "f32"):
        assert _run(f"mov.{kind} d, a", short) == [(w,) for w in short]
    assert _run("mov.pred d, a", [0, 1]) == [(0,), (1,)]


#: §9.7.9.7's mode tables, as the pattern each row follows: the source byte of d.b_j for the
#: selector r = c[1:0] (f4e: bytes r..r+3 forward; b4e: r, r-1, r-2, r-3 of the 8 bytes,
#: wrapping; rc8: byte r replicated; ecl/ecr: clamped at byte r on the left/right; rc16: the
#: half-word r & 1 replicated).
PRMT_MODES = {
    "f4e": lambda r, j: r + j,
    "b4e": lambda r, j: (r - j) % 8,
    "rc8": lambda r, j: r,
    "ecl": lambda r, j: max(j, r),
    "ecr": lambda r, j: min(j, r),
    "rc16": lambda r, j: 2 * (r & 1) + (j & 1),
}


def _prmt_oracle(mode: str | None, a: int, b: int, c: int) -> int:
    source = ((b << 32) | a).to_bytes(8, "little")  # {b, a} = {{b7, b6, b5, b4}, {b3, b2, b1, b0}}
    out = bytearray(4)
    for j in range(4):
        if mode is None:
            selector = (c >> (4 * j)) & 0xF
            byte = source[selector & 7]
            out[j] = (0xFF if byte & 0x80 else 0) if selector & 8 else byte
        else:
            out[j] = source[PRMT_MODES[mode](c & 3, j)]
    return int.from_bytes(out, "little")


@pytest.mark.parametrize("mode", [None, *PRMT_MODES])
def test_prmt_against_python_integers(mode: str | None) -> None:
    """§9.7.9.7: every selector code of every destination byte (the generic form's 16-bit c runs
    over all 65536 codes) and every mode row, on bytes with and without their sign bit."""
    rng = random.Random(19)
    n = 1 << 16
    a = [rng.getrandbits(32) | 0x0080_0080 for _ in range(n)]  # bytes 0, 2 negative, 1, 3 random
    b = [rng.getrandbits(32) & 0x7F7F_FF7F for _ in range(n)]
    c = [k | (rng.getrandbits(16) << 16) for k in range(n)]  # the upper half is not read
    form = "prmt.b32" if mode is None else f"prmt.b32.{mode}"
    assert _run(form, a, b, c) == [(_prmt_oracle(mode, x, y, z),) for x, y, z in zip(a, b, c)]
