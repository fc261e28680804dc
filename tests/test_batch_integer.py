"""The batched paths of §9.7.1 integer and §9.7.2 extended-precision arithmetic
(:mod:`ptxspec.semantics.batch_integer`).

* Agreement: every legal form of the 30 families, under the spec and sm_90 profiles, gives on the
  vectors generator's inputs (integer extremes, sign and carry boundaries crossed pairwise, then
  seeded random) exactly what the readable semantics gives -- the bits, and the open sets
  (div/rem by zero, rem of operands of opposite signs, fns with base > 31) as the same sets.
* Oracle: every legal form against Python integers written here from the manual's pseudo-code
  (sm_90, where every result is fixed bits), independently of semantics/integer.py.
* Every legal form has a batched path (none falls back to the per-vector loop).
"""

from __future__ import annotations

import random

import batch_agreement
import numpy as np
import pytest

from ptxspec.conformance import vectors
from ptxspec.semantics import batch
from ptxspec.semantics.batch_integer import _swar_count
from ptxspec.semantics.instructions import as_form

PROFILES = ("spec", "sm_90")

FAMILIES = (
    "add.int",
    "sub.int",
    "mul.int",
    "mad.int",
    "mul24",
    "mad24",
    "sad",
    "div.int",
    "rem",
    "abs.int",
    "neg.int",
    "min.int",
    "max.int",
    "popc",
    "clz",
    "bfind",
    "fns",
    "brev",
    "bfe",
    "bfi",
    "bmsk",
    "szext",
    "dp4a",
    "dp2a",
    "add.cc",
    "addc",
    "sub.cc",
    "subc",
    "mad.cc",
    "madc",
)

FORMS = [form for family in FAMILIES for form in batch_agreement.legal_forms(family)]


# ---------------------------------------------------------------------------------------------
# Agreement with the readable semantics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", FORMS)
def test_agrees(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=2000)


@pytest.mark.heavy
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", FORMS)
def test_agrees_heavy(form: str, profile: str) -> None:
    batch_agreement.assert_agrees(form, profile, count=40000, seed=1)


@pytest.mark.parametrize("form", ["rem.s32", "div.u16", "fns.b32"])
def test_open_sets_across_blocks(form: str) -> None:
    """More vectors than one block (batch.BLOCK): the open sets of every block keep their
    vector's index."""
    batch_agreement.assert_agrees(form, "spec", count=batch.BLOCK + 3000, seed=2)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("form", ["rem.s32", "div.s64", "fns.b32", "addc.cc.u64", "sub.cc.s32", "add.s16x2"])
def test_contains(form: str, profile: str) -> None:
    """The batched check accepts and refuses what the scalar check does, open sets included."""
    batch_agreement.contains_agrees(form, profile, count=500)


@pytest.mark.parametrize("profile", PROFILES)
def test_registers_split_as_the_fallback(profile: str) -> None:
    """Every destination has the dtype and lanes that the per-vector loop gives it (so that the
    front door can merge and join them)."""
    for text in FORMS:
        form = as_form(text)
        sources = vectors.inputs(form, 8, 0)
        fast = batch.evaluate_batch_all(form, sources, profile)
        loop = batch._loop(form, sources, batch.profile_named(profile))
        for got, want in zip(fast, loop):
            assert (got.bits.dtype, got.lanes, got.lane_bits, got.format) == (want.bits.dtype, want.lanes, want.lane_bits, want.format), text


@pytest.mark.parametrize("profile", PROFILES)
def test_every_form_has_a_path(profile: str) -> None:
    missing = [form for form in FORMS if not batch.has_fast_path(form, profile)]
    assert not missing


# ---------------------------------------------------------------------------------------------
# An independent oracle: Python integers from the manual's pseudo-code (sm_90 choices)
# ---------------------------------------------------------------------------------------------


def width(type_name: str) -> int:
    return int(type_name[1:].removesuffix("x2"))


def signed(type_name: str, bits: int, n: int) -> int:
    bits &= (1 << n) - 1
    return bits - (1 << n) if type_name[0] == "s" and bits >> (n - 1) else bits


def lanes(form, values, op):
    """Apply op to each 16-bit half of a packed type, or to the whole register."""
    name = form["type"]
    n = width(name)
    count = 2 if name.endswith("x2") else 1
    out = 0
    for k in range(count):
        out |= (op(n, *(signed(name, v >> (k * n), n) for v in values)) % (1 << n)) << (k * n)
    return out


def clamp(n: int, x: int) -> int:
    return min(max(x, -(1 << (n - 1))), (1 << (n - 1)) - 1)


def product(form, a, b):
    """(the exact product, the operand width)."""
    name = form["type"]
    n = width(name)
    return signed(name, a, n) * signed(name, b, n), n


def part(form, a, b):
    p, n = product(form, a, b)
    if form["mode"] == "wide":
        return p, 2 * n
    return (p >> n if form["mode"] == "hi" else p) % (1 << n), n


def c_quotient(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def o_add(form, a, b):
    return lanes(form, (a, b), lambda n, x, y: clamp(n, x + y) if "sat" in form else x + y)


def o_sub(form, a, b):
    return lanes(form, (a, b), lambda n, x, y: clamp(n, x - y) if "sat" in form else x - y)


def o_mul(form, a, b):
    p, n = part(form, a, b)
    return p % (1 << n)


def o_mad(form, a, b, c):
    p, n = part(form, a, b)
    if "sat" in form:
        return clamp(n, signed("s", p, n) + signed("s", c, n)) % (1 << n)
    return (p + c) % (1 << n)


def o_mul24(form, a, b):
    s = "s" if form["type"] == "s32" else "u"
    p = signed(s, a, 24) * signed(s, b, 24)
    return (p >> 16 if form["mode"] == "hi" else p) % (1 << 32)


def o_mad24(form, a, b, c):
    s = form["type"][0]
    total = signed(s, o_mul24(form, a, b), 32) + signed(s, c, 32)
    return (clamp(32, total) if "sat" in form else total) % (1 << 32)


def o_sad(form, a, b, c):
    return lanes(form, (a, b, c), lambda n, x, y, z: z + abs(x - y))


def o_div(form, a, b):
    n = width(form["type"])
    x, y = signed(form["type"], a, n), signed(form["type"], b, n)
    return (1 << n) - 1 if y == 0 else c_quotient(x, y) % (1 << n)


def o_rem(form, a, b):
    n = width(form["type"])
    x, y = signed(form["type"], a, n), signed(form["type"], b, n)
    return (1 << n) - 1 if y == 0 else (x - c_quotient(x, y) * y) % (1 << n)


def o_abs(form, a):
    return lanes(form, (a,), lambda n, x: abs(x))


def o_neg(form, a):
    return lanes(form, (a,), lambda n, x: -x)


def o_min(form, a, b):
    return lanes(form, (a, b), lambda n, x, y: max(min(x, y), 0) if "relu" in form else min(x, y))


def o_max(form, a, b):
    return lanes(form, (a, b), lambda n, x, y: max(x, y, 0) if "relu" in form else max(x, y))


def o_popc(form, a):
    return bin(a).count("1")


def o_clz(form, a):
    text = format(a, f"0{width(form['type'])}b")
    return len(text) - len(text.lstrip("0"))


def o_bfind(form, a):
    n = width(form["type"])
    text = format(a, f"0{n}b")
    if form["type"][0] == "s" and text[0] == "1":
        text = text.translate(str.maketrans("01", "10"))
    if "1" not in text:
        return 0xFFFFFFFF
    leading = text.index("1")  # = msb - (position of the highest one bit)
    return leading if "shiftamt" in form else n - 1 - leading


def o_fns(form, mask, base, offset):
    n = signed("s", offset, 32)
    if n == -(1 << 31):
        return 0  # sm_90
    if base > 31:
        return 0xFFFFFFFF  # sm_90
    step = 1 if n > 0 else -1
    count = max(abs(n), 1)
    p = base
    while 0 <= p <= 31:
        if (mask >> p) & 1:
            count -= 1
            if count == 0:
                return p
        if n == 0:
            break
        p += step
    return 0xFFFFFFFF


def o_brev(form, a):
    return int(format(a, f"0{width(form['type'])}b")[::-1], 2)


def o_bfe(form, a, b, c):
    """The field a[pos .. pos+len-1], each position beyond the msb (and every bit above the
    field) holding the sign bit: 0 (.u), else a's msb when the field extends beyond it, the
    field's msb otherwise; 0 when len = 0."""
    n = width(form["type"])
    mask = 0xFF if n == 32 else 0xFFFFFFFF  # sm_90 reads 64-bit operands whole
    pos, length = b & mask, c & mask
    if length == 0:
        return 0
    sign = 0 if form["type"][0] == "u" else (a >> min(pos + length - 1, n - 1)) & 1
    bits = [(a >> (pos + i)) & 1 if i < length and pos + i < n else sign for i in range(n)]
    return sum(bit << i for i, bit in enumerate(bits))


def o_bfi(form, a, b, c, d):
    n = width(form["type"])
    mask = 0xFF if n == 32 else 0xFFFFFFFF
    pos, length = c & mask, d & mask
    f = b
    for i in range(min(length, max(n - pos, 0))):
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
    return f


def o_szext(form, a, b):
    """Extend the low N bits of a: N = min(b, 32) (.clamp) or b mod 32 (.wrap); N = 0 gives 0."""
    count = min(b, 32) if form["mode"] == "clamp" else b % 32
    if count == 32:
        return a
    return signed(form["type"], a, count) % (1 << 32) if count else 0


def o_bmsk(form, a, b):
    if form["mode"] == "clamp":
        if a >= 32:
            return 0
        start, size = a, min(b, 32)
    else:
        start, size = a % 32, b % 32
    return sum(1 << i for i in range(start, min(start + size, 32)))


def o_dot(form, a, b, c):
    count = 4 if form.family.key == "dp4a" else 2
    fields_a = [signed(form["atype"], a >> (i * 32 // count), 32 // count) for i in range(count)]
    fields_b = [signed(form["btype"], b >> (8 * i), 8) for i in range(4)]
    if count == 2:
        fields_b = fields_b[2:] if form["mode"] == "hi" else fields_b[:2]
    return (c + sum(x * y for x, y in zip(fields_a, fields_b))) % (1 << 32)


def o_carry(form, a, b, *rest):
    n = width(form["type"])
    key = form.family.key
    if key in ("mad.cc", "madc"):
        half = part(form, a, b)[0]
        a, b, rest = half, rest[0], rest[1:]
    cf = rest[0] if rest else 0
    if key in ("sub.cc", "subc"):
        total = a - b - (1 - cf if key == "subc" else 0)  # sm_90: the flag holds not-borrow
        out = 0 if total < 0 else 1
    else:
        total = a + b + cf
        out = total >> n
    d = total % (1 << n)
    return (d, out) if "cc" in form else d


ORACLES = {
    "add.int": o_add,
    "sub.int": o_sub,
    "mul.int": o_mul,
    "mad.int": o_mad,
    "mul24": o_mul24,
    "mad24": o_mad24,
    "sad": o_sad,
    "div.int": o_div,
    "rem": o_rem,
    "abs.int": o_abs,
    "neg.int": o_neg,
    "min.int": o_min,
    "max.int": o_max,
    "popc": o_popc,
    "clz": o_clz,
    "bfind": o_bfind,
    "fns": o_fns,
    "brev": o_brev,
    "bfe": o_bfe,
    "bfi": o_bfi,
    "bmsk": o_bmsk,
    "szext": o_szext,
    "dp4a": o_dot,
    "dp2a": o_dot,
    "add.cc": o_carry,
    "addc": o_carry,
    "sub.cc": o_carry,
    "subc": o_carry,
    "mad.cc": o_carry,
    "madc": o_carry,
}


class OracleForm:
    """The form's qualifiers as the oracle reads them: ``form["type"]``, ``"sat" in form``."""

    def __init__(self, text: str) -> None:
        self.form = as_form(text)
        self.family = self.form.family
        self.choices_dict = dict(self.form.choices)

    def __getitem__(self, key: str) -> str:
        return self.choices_dict[key]

    def __contains__(self, flag: str) -> bool:
        return flag in self.choices_dict.values()


@pytest.mark.parametrize("form", FORMS)
def test_oracle(form: str) -> None:
    oracle = OracleForm(form)
    sources = vectors.inputs(oracle.form, 600, 3)
    results = batch.evaluate_batch_all(oracle.form, sources, "sm_90")
    columns = [s.tolist() for s in sources]
    for i in range(len(columns[0])):
        vector = [c[i] for c in columns]
        want = ORACLES[oracle.family.key](oracle, *vector)
        want = want if isinstance(want, tuple) else (want,)
        got = tuple(int(r.bits[i]) for r in results)
        assert got == want, f"{form} on {[hex(v) for v in vector]}: batched {got}, oracle {want}"


def test_swar_count() -> None:
    """The popcount used without numpy's bitwise_count (numpy < 2.0) counts as Python does."""
    rng = random.Random(11)
    words = [0, 1, (1 << 64) - 1, 1 << 63, 0x5555555555555555] + [rng.getrandbits(rng.randint(1, 64)) for _ in range(4000)]
    got = _swar_count(np.array(words, dtype=np.uint64)).tolist()
    assert got == [w.bit_count() for w in words]
