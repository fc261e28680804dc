"""Tests of §9.7.1 (integer arithmetic) and §9.7.2 (extended precision).

The oracles are Python's unbounded integers and bit-by-bit readings of the manual's pseudo-code
written here, separately from the semantics: two's complement patterns are formed by reducing
modulo 2**n, and high halves by taking bits of the reduced 2n-bit product.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.conformance.cli import cli
from ptxspec.semantics.instructions import check, evaluate
from ptxspec.semantics.results import contains
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import IllegalForm, OperandError

TYPES = ["u16", "u32", "u64", "s16", "s32", "s64"]


def bits_of(t: str) -> int:
    return int(t[1:3])


def signed_of(t: str, x: int) -> int:
    """Independent reading: the value of pattern x in type t."""
    n = bits_of(t)
    if t.startswith("s") and x >= 2 ** (n - 1):
        return x - 2**n
    return x


def one(instr: str, *sources: int):
    (result,) = evaluate(instr, list(sources))
    return result


def patterns(n: int):
    """Random patterns with the edge values 0, 1, -1, MININT, MAXINT favoured."""
    edges = [0, 1, 2**n - 1, 2 ** (n - 1), 2 ** (n - 1) - 1, 2 ** (n - 1) + 1, 2**n - 2]
    return st.one_of(st.sampled_from(edges), st.integers(0, 2**n - 1))


def typed(types=TYPES):
    return st.sampled_from(types).flatmap(lambda t: st.tuples(st.just(t), patterns(bits_of(t)), patterns(bits_of(t)), patterns(bits_of(t))))


# ---------------------------------------------------------------------------------------------
# add, sub
# ---------------------------------------------------------------------------------------------


@given(typed())
def test_add_sub_wrap(case):
    t, a, b, _ = case
    n = bits_of(t)
    assert one(f"add.{t}", a, b) == (a + b) % 2**n
    assert one(f"sub.{t}", a, b) == (a - b) % 2**n


@given(patterns(32), patterns(32))
def test_add_sub_sat_s32_clamps(a, b):
    lo, hi = -(2**31), 2**31 - 1
    for op, exact in (("add", signed_of("s32", a) + signed_of("s32", b)), ("sub", signed_of("s32", a) - signed_of("s32", b))):
        clamped = min(max(exact, lo), hi)
        assert one(f"{op}.sat.s32", a, b) == clamped % 2**32


def test_sat_edges():
    assert one("add.sat.s32", 0x7FFFFFFF, 1) == 0x7FFFFFFF
    assert one("add.sat.s32", 0x80000000, 0xFFFFFFFF) == 0x80000000
    assert one("sub.sat.s32", 0x80000000, 1) == 0x80000000
    assert one("sub.sat.s32", 0x7FFFFFFF, 0xFFFFFFFF) == 0x7FFFFFFF
    assert one("add.s32", 0x7FFFFFFF, 1) == 0x80000000


@given(st.sampled_from(["u16x2", "s16x2"]), patterns(32), patterns(32))
def test_add_packed_halves(t, a, b):
    lo = ((a & 0xFFFF) + (b & 0xFFFF)) & 0xFFFF
    hi = ((a >> 16) + (b >> 16)) & 0xFFFF
    assert one(f"add.{t}", a, b) == (hi << 16) | lo


# ---------------------------------------------------------------------------------------------
# mul, mad, mul24, mad24
# ---------------------------------------------------------------------------------------------


@given(typed())
def test_mul_lo_hi_wide(case):
    t, a, b, _ = case
    n = bits_of(t)
    full = (signed_of(t, a) * signed_of(t, b)) % 2 ** (2 * n)  # the 2n-bit product pattern
    assert one(f"mul.lo.{t}", a, b) == full % 2**n
    assert one(f"mul.hi.{t}", a, b) == full >> n
    if n < 64:
        assert one(f"mul.wide.{t}", a, b) == full


@given(typed())
def test_mad_lo_hi_wide(case):
    t, a, b, c = case
    n = bits_of(t)
    full = (signed_of(t, a) * signed_of(t, b)) % 2 ** (2 * n)
    assert one(f"mad.lo.{t}", a, b, c) == (full + c) % 2**n
    assert one(f"mad.hi.{t}", a, b, c) == ((full >> n) + c) % 2**n
    if n < 64:
        c_wide = (c * 0x10001) % 2 ** (2 * n)  # fill the wide addend's upper half too
        assert one(f"mad.wide.{t}", a, b, c_wide) == (full + c_wide) % 2 ** (2 * n)


@given(patterns(32), patterns(32), patterns(32))
def test_mad_hi_sat_s32(a, b, c):
    full = (signed_of("s32", a) * signed_of("s32", b)) % 2**64
    exact = signed_of("s32", full >> 32) + signed_of("s32", c)
    assert one("mad.hi.sat.s32", a, b, c) == min(max(exact, -(2**31)), 2**31 - 1) % 2**32


def sext24(t: str, x: int) -> int:
    x &= 0xFFFFFF
    return x - 2**24 if t == "s32" and x >= 2**23 else x


@given(st.sampled_from(["u32", "s32"]), patterns(32), patterns(32), patterns(32))
def test_mul24_mad24(t, a, b, c):
    t48 = (sext24(t, a) * sext24(t, b)) % 2**48
    hi, lo = (t48 >> 16) % 2**32, t48 % 2**32
    assert one(f"mul24.hi.{t}", a, b) == hi
    assert one(f"mul24.lo.{t}", a, b) == lo
    assert one(f"mad24.hi.{t}", a, b, c) == (hi + c) % 2**32
    assert one(f"mad24.lo.{t}", a, b, c) == (lo + c) % 2**32
    if t == "s32":
        exact = signed_of("s32", hi) + signed_of("s32", c)
        assert one("mad24.hi.sat.s32", a, b, c) == min(max(exact, -(2**31)), 2**31 - 1) % 2**32


# ---------------------------------------------------------------------------------------------
# sad, div, rem, abs, neg, min, max
# ---------------------------------------------------------------------------------------------


@given(typed())
def test_sad(case):
    t, a, b, c = case
    x, y = signed_of(t, a), signed_of(t, b)
    assert one(f"sad.{t}", a, b, c) == (c + abs(x - y)) % 2 ** bits_of(t)


@given(typed())
def test_div_rem_identity(case):
    t, a, b, _ = case
    n = bits_of(t)
    x, y = signed_of(t, a), signed_of(t, b)
    if y == 0:
        # "Division by zero yields an unspecified, machine-specific value."
        for r in (one(f"div.{t}", a, b), one(f"rem.{t}", a, b)):
            assert contains(r, 0) and contains(r, 2**n - 1) and not contains(r, 2**n)
        return
    q = one(f"div.{t}", a, b)
    assert q == math.trunc(Fraction(x, y)) % 2**n  # C division truncates toward zero
    r_trunc = (x - math.trunc(Fraction(x, y)) * y) % 2**n
    r = one(f"rem.{t}", a, b)
    assert contains(r, r_trunc)
    # a == (a / b) * b + a % b, in the type's width
    assert (signed_of(t, q) * y + signed_of(t, r_trunc)) % 2**n == a
    assert abs(signed_of(t, r_trunc)) < abs(y)
    if x >= 0 and y > 0:
        assert r == x % y  # no machine dependence for non-negative operands


def test_div_edges():
    assert one("div.s32", 0x80000000, 0xFFFFFFFF) == 0x80000000  # MININT / -1 wraps
    assert one("div.s32", 7, 0xFFFFFFFE) == 0xFFFFFFFD  # 7 / -2 == -3
    assert one("div.u32", 7, 0xFFFFFFFE) == 0
    assert check("rem.s32", [0xFFFFFFF9, 2], [0xFFFFFFFF])  # -7 % 2 == -1 (toward zero)
    assert check("rem.s32", [0xFFFFFFF9, 2], [1])  # or 1 (toward -infinity): "machine-dependent"
    assert not check("rem.s32", [0xFFFFFFF9, 2], [0])


@given(st.sampled_from(["s16", "s32", "s64"]).flatmap(lambda t: st.tuples(st.just(t), patterns(bits_of(t)))))
def test_abs_neg(case):
    t, a = case
    n = bits_of(t)
    assert one(f"abs.{t}", a) == abs(signed_of(t, a)) % 2**n
    assert one(f"neg.{t}", a) == (-a) % 2**n


def test_abs_neg_minint():
    assert one("abs.s32", 0x80000000) == 0x80000000
    assert one("neg.s16", 0x8000) == 0x8000
    assert one("abs.s64", 2**64 - 1) == 1


@given(st.sampled_from(["u16", "u32", "u64", "s16", "s32", "s64"]), st.data())
def test_min_max(t, data):
    n = bits_of(t)
    a, b = data.draw(patterns(n)), data.draw(patterns(n))
    x, y = signed_of(t, a), signed_of(t, b)
    assert one(f"min.{t}", a, b) == min(x, y) % 2**n
    assert one(f"max.{t}", a, b) == max(x, y) % 2**n
    if t == "s32":
        assert one("min.relu.s32", a, b) == max(min(x, y), 0)
        assert one("max.relu.s32", a, b) == max(x, y, 0)


@given(st.sampled_from(["u16x2", "s16x2"]), st.booleans(), patterns(32), patterns(32))
def test_min_max_packed(t, relu, a, b):
    if relu and t == "u16x2":
        relu = False
    e = "s16" if t == "s16x2" else "u16"
    q = ".relu" if relu else ""
    for op, pick in (("min", min), ("max", max)):
        expect = 0
        for shift in (0, 16):
            v = pick(signed_of(e, (a >> shift) & 0xFFFF), signed_of(e, (b >> shift) & 0xFFFF))
            v = max(v, 0) if relu else v
            expect |= (v % 2**16) << shift
        assert one(f"{op}{q}.{t}", a, b) == expect


# ---------------------------------------------------------------------------------------------
# popc, clz, bfind, brev, fns: loops transcribed from the pseudo-code
# ---------------------------------------------------------------------------------------------


def wide_patterns():
    return st.sampled_from([32, 64]).flatmap(lambda n: st.tuples(st.just(n), patterns(n)))


@given(wide_patterns())
def test_popc_clz_brev(case):
    n, a = case
    d, x = 0, a
    while x != 0:
        d += x & 1
        x >>= 1
    assert one(f"popc.b{n}", a) == d
    d, x = 0, a
    while d < n and (x & (1 << (n - 1))) == 0:
        d += 1
        x = (x << 1) % 2**n
    assert one(f"clz.b{n}", a) == d
    r = 0
    for i in range(n):
        r |= ((a >> (n - 1 - i)) & 1) << i
    assert one(f"brev.b{n}", a) == r


@given(st.sampled_from(["u32", "u64", "s32", "s64"]).flatmap(lambda t: st.tuples(st.just(t), patterns(bits_of(t)))))
def test_bfind(case):
    t, a = case
    msb = bits_of(t) - 1
    x = a
    if t.startswith("s") and x & (1 << msb):
        x = ~x % 2 ** (msb + 1)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if x & (1 << i):
            d = i
            break
    assert one(f"bfind.{t}", a) == d
    assert one(f"bfind.shiftamt.{t}", a) == (msb - d if d != 0xFFFFFFFF else d)


@given(patterns(32), st.integers(0, 31), st.integers(-40, 40))
def test_fns(mask, base, offset):
    d = 0xFFFFFFFF
    if offset == 0:
        if (mask >> base) & 1:
            d = base
    else:
        pos, count, inc = base, abs(offset) - 1, (1 if offset > 0 else -1)
        while 0 <= pos < 32:
            if (mask >> pos) & 1:
                if count == 0:
                    d = pos
                    break
                count -= 1
            pos += inc
    assert one("fns.b32", mask, base, offset % 2**32) == d


def test_fns_examples_and_undefined_base():
    # The manual's examples (§9.7.1.17).
    assert one("fns.b32", 0xAAAAAAAA, 3, 1) == 3
    assert one("fns.b32", 0xAAAAAAAA, 3, 2**32 - 1) == 3
    assert one("fns.b32", 0xAAAAAAAA, 2, 1) == 3
    assert one("fns.b32", 0xAAAAAAAA, 2, 2**32 - 1) == 1
    # "Operand base must be <= 31, otherwise behavior is undefined."
    r = one("fns.b32", 0xAAAAAAAA, 32, 1)
    assert contains(r, 0) and contains(r, 0xFFFFFFFF)


# ---------------------------------------------------------------------------------------------
# bfe, bfi, szext, bmsk: bit by bit
# ---------------------------------------------------------------------------------------------

field_positions = st.one_of(st.integers(0, 34), st.integers(0, 70), st.integers(0, 2**32 - 1))


def bfe_oracle(t: str, a: int, b: int, c: int) -> int:
    """§9.7.1.19's pseudo-code, bit by bit."""
    msb = bits_of(t) - 1
    pos, length = b & 0xFF, c & 0xFF
    bit = lambda i: (a >> i) & 1  # noqa: E731
    sbit = 0 if (t.startswith("u") or length == 0) else bit(min(pos + length - 1, msb))
    d = 0
    for i in range(msb + 1):
        d |= (bit(pos + i) if (i < length and pos + i <= msb) else sbit) << i
    return d


@given(st.sampled_from(["u32", "u64", "s32", "s64"]), st.data(), field_positions, field_positions)
def test_bfe(t, data, b, c):
    a = data.draw(patterns(bits_of(t)))
    assert one(f"bfe.{t}", a, b, c) == bfe_oracle(t, a, b, c)


@pytest.mark.parametrize("t", ["u32", "s32", "s64"])
def test_bfe_all_small_fields(t):
    """Every start and length up to just past the msb, on patterns with alternating bits."""
    form = parse(f"bfe.{t}")
    n = bits_of(t)
    for a in (0x5A5A5A5A5A5A5A5A % 2**n, 0xA5A5A5A5A5A5A5A5 % 2**n, 2 ** (n - 1)):
        for pos in range(0, n + 2, 1 if n == 32 else 3):
            for length in range(0, n + 2, 1 if n == 32 else 3):
                assert evaluate(form, [a, pos, length]) == (bfe_oracle(t, a, pos, length),), (a, pos, length)


@given(st.sampled_from([32, 64]), st.data(), field_positions, field_positions)
def test_bfi(n, data, c, d):
    a, b = data.draw(patterns(n)), data.draw(patterns(n))
    msb = n - 1
    pos, length = c & 0xFF, d & 0xFF
    f = [(b >> i) & 1 for i in range(n)]
    i = 0
    while i < length and pos + i <= msb:
        f[pos + i] = (a >> i) & 1
        i += 1
    assert one(f"bfi.b{n}", a, b, c, d) == sum(bit << i for i, bit in enumerate(f))


@given(st.sampled_from(["u32", "s32"]), st.sampled_from(["clamp", "wrap"]), patterns(32), st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1)))
def test_szext(t, mode, a, b):
    # Description: "the value in a is treated as an N-bit (signed) value"; N == 0 gives 0;
    # N >= 32 gives a under .clamp and uses the wrapped N under .wrap.
    if b >= 32 and mode == "clamp":
        expect = a
    else:
        n = b % 32
        if n == 0:
            expect = 0
        else:
            field = a % 2**n
            if t == "s32" and field >= 2 ** (n - 1):
                field -= 2**n
            expect = field % 2**32
    assert one(f"szext.{mode}.{t}", a, b) == expect


@given(st.sampled_from(["clamp", "wrap"]), st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1)), st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1)))
def test_bmsk(mode, a, b):
    # Description: a mask of width b (clamped to 0..32, or wrapped to 0..31) from bit position a;
    # 0 when a >= 32 under .clamp; bits past bit 31 do not exist.
    if mode == "clamp":
        start, width = a, min(b, 32)
    else:
        start, width = a % 32, b % 32
    expect = sum(1 << i for i in range(32) if start <= i < start + width)
    assert one(f"bmsk.{mode}.b32", a, b) == expect


def test_bmsk_szext_examples():
    assert one("bmsk.wrap.b32", 1, 2) == 0x00000006
    assert one("szext.wrap.u32", 0xFFFFFFFF, 0) == 0


# ---------------------------------------------------------------------------------------------
# dp4a, dp2a
# ---------------------------------------------------------------------------------------------


def pieces(x: int, count: int, width: int, signed: bool) -> list[int]:
    out = []
    for i in range(count):
        v = (x >> (width * i)) % 2**width
        out.append(v - 2**width if signed and v >= 2 ** (width - 1) else v)
    return out


@given(st.sampled_from(["u32", "s32"]), st.sampled_from(["u32", "s32"]), patterns(32), patterns(32), patterns(32))
def test_dp4a_dp2a(at, bt, a, b, c):
    va = pieces(a, 4, 8, at == "s32")
    vb = pieces(b, 4, 8, bt == "s32")
    explicit = c + va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2] + va[3] * vb[3]
    assert one(f"dp4a.{at}.{bt}", a, b, c) == explicit % 2**32
    wa = pieces(a, 2, 16, at == "s32")
    assert one(f"dp2a.lo.{at}.{bt}", a, b, c) == (c + wa[0] * vb[0] + wa[1] * vb[1]) % 2**32
    assert one(f"dp2a.hi.{at}.{bt}", a, b, c) == (c + wa[0] * vb[2] + wa[1] * vb[3]) % 2**32


def test_dp_operand_types():
    assert [o.type for o in parse("dp4a.u32.s32").operands] == ["s32", "u32", "s32", "s32"]
    assert [o.type for o in parse("dp4a.u32.u32").operands] == ["u32"] * 4


# ---------------------------------------------------------------------------------------------
# §9.7.2 carry chains
# ---------------------------------------------------------------------------------------------


def limbs(x: int, n: int, k: int) -> list[int]:
    return [(x >> (n * i)) % 2**n for i in range(k)]


@given(st.sampled_from([32, 64]), st.sampled_from(["u", "s"]), st.integers(0, 2**256 - 1), st.integers(0, 2**256 - 1))
def test_multiword_add_sub(n, sign, x, y):
    """A 128-bit (or 256-bit) addition from add.cc, addc.cc ..., addc equals Python's."""
    k = 128 // n * (2 if n == 64 else 1)
    x, y = x % 2 ** (n * k), y % 2 ** (n * k)
    t = f"{sign}{n}"
    xs, ys = limbs(x, n, k), limbs(y, n, k)
    for first, middle, last, expect in (("add.cc", "addc.cc", "addc", x + y), ("sub.cc", "subc.cc", "subc", x - y)):
        out = []
        d, cf = evaluate(f"{first}.{t}", [xs[0], ys[0]])
        out.append(d)
        for i in range(1, k - 1):
            d, cf = evaluate(f"{middle}.{t}", [xs[i], ys[i], cf])
            out.append(d)
        (d,) = evaluate(f"{last}.{t}", [xs[k - 1], ys[k - 1], cf])
        out.append(d)
        assert sum(v << (n * i) for i, v in enumerate(out)) == expect % 2 ** (n * k)


@given(st.sampled_from(["u32", "s32", "u64", "s64"]), st.sampled_from(["hi", "lo"]), st.data(), st.integers(0, 1))
def test_mad_cc_madc_carry(t, mode, data, cf):
    n = bits_of(t)
    a, b, c = (data.draw(patterns(n)) for _ in range(3))
    full = (signed_of(t, a) * signed_of(t, b)) % 2 ** (2 * n)
    half = full >> n if mode == "hi" else full % 2**n
    d, carry = evaluate(f"mad.{mode}.cc.{t}", [a, b, c])
    assert d + (carry << n) == half + c
    d, carry = evaluate(f"madc.{mode}.cc.{t}", [a, b, c, cf])
    assert d + (carry << n) == half + c + cf
    assert evaluate(f"madc.{mode}.{t}", [a, b, c, cf]) == ((half + c + cf) % 2**n,)


def test_multiword_multiply_example():
    """§9.7.2.6's example: [r3,r2,r1,r0] = [r5,r4] * [r7,r6], completed with addc."""
    x, y = 0xFFFFFFFF_FFFFFFFE, 0xFFFFFFFF_FFFFFFFD
    r4, r5, r6, r7 = x % 2**32, x >> 32, y % 2**32, y >> 32
    (r0,) = evaluate("mul.lo.u32", [r4, r6])
    (r1,) = evaluate("mul.hi.u32", [r4, r6])
    r1, cf = evaluate("mad.lo.cc.u32", [r5, r6, r1])
    (r2,) = evaluate("madc.hi.u32", [r5, r6, 0, cf])
    r1, cf = evaluate("mad.lo.cc.u32", [r4, r7, r1])
    r2, cf = evaluate("madc.hi.cc.u32", [r4, r7, r2, cf])
    (r3,) = evaluate("addc.u32", [0, 0, cf])
    r2, cf = evaluate("mad.lo.cc.u32", [r5, r7, r2])
    (r3,) = evaluate("madc.hi.u32", [r5, r7, r3, cf])
    assert r0 | r1 << 32 | r2 << 64 | r3 << 96 == x * y


def test_carry_operands_and_cli():
    form = parse("addc.cc.u32")
    assert [o.name for o in form.destinations] == ["d", "CC.CF"]
    assert [o.name for o in form.sources] == ["a", "b", "CC.CF"]
    assert [o.name for o in parse("add.cc.s64").sources] == ["a", "b"]
    result = CliRunner().invoke(cli, ["eval", "addc.cc.u32", "1", "2", "1"])
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["0x00000004", "0x0"]
    with pytest.raises(OperandError):
        evaluate("addc.u32", [1, 2, 2])  # the carry flag is one bit


# ---------------------------------------------------------------------------------------------
# Legality and targets
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, reason",
    [
        ("mul.wide.s64", ".wide"),
        ("mad.wide.u64", ".wide"),
        ("add.sat.u32", ".sat"),
        ("sub.sat.s16", ".sat"),
        ("add.sat.s16x2", ".sat"),
        ("mad.lo.sat.s32", ".sat"),
        ("mad.hi.sat.u32", ".sat"),
        ("mad24.lo.sat.s32", ".sat"),
        ("min.relu.u32", ".relu"),
        ("max.relu.s64", ".relu"),
        ("abs.u32", "not allowed"),
        ("neg.u16", "not allowed"),
        ("popc.u32", "not allowed"),
        ("mul.u32", "missing mode"),
        ("mul24.wide.s32", "not allowed"),
        ("sub.u16x2", "not allowed"),
        ("add.cc.u16", "not allowed"),
        ("addc.s16", "not allowed"),
        ("mad.cc.u32", "missing mode"),
        ("bfe.b32", "not allowed"),
        ("szext.s32", "missing mode"),
        ("dp4a.u32", "missing btype"),
    ],
)
def test_illegal_forms(text, reason):
    with pytest.raises(IllegalForm, match=reason):
        parse(text)


@pytest.mark.parametrize(
    "text, ptx, sm",
    [
        ("add.u32", (1, 0), 10),
        ("add.s16x2", (8, 0), 90),
        ("min.relu.s32", (8, 0), 90),
        ("max.u16x2", (8, 0), 90),
        ("popc.b64", (2, 0), 20),
        ("fns.b32", (6, 0), 30),
        ("szext.wrap.u32", (7, 6), 70),
        ("bmsk.clamp.b32", (7, 6), 70),
        ("dp4a.s32.u32", (5, 0), 61),
        ("add.cc.u32", (1, 2), 10),
        ("addc.cc.s64", (4, 3), 20),
        ("mad.lo.cc.u32", (3, 0), 20),
        ("madc.hi.u64", (4, 3), 20),
    ],
)
def test_targets(text, ptx, sm):
    target = parse(text).target
    assert (target.ptx, target.sm) == (ptx, sm)


def test_floating_point_forms_still_parse():
    assert parse("add.rn.f32").family.key == "add.f"
    assert parse("mad.rn.f64").family.key == "mad.f"
    assert parse("min.f32").family.key == "min.f"
