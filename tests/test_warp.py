"""Tests of the warp-level collectives (spec/warp.py, semantics/warp.py) against oracles written
here from the manual, independently of the code under test."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from ptxspec.conformance.cli import cli
from ptxspec.semantics.instructions import check, evaluate
from ptxspec.semantics.warp import Undefined, WarpResult
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import IllegalForm, OperandError

FULL = 0xFFFFFFFF
LANES = range(32)


def bits(mask: int) -> list[int]:
    return [i for i in LANES if mask >> i & 1]


def lane_values(result: WarpResult) -> list:
    """Each lane as an int, or None where the result is Undefined."""
    assert isinstance(result, WarpResult) and len(result.lanes) == 32
    out = []
    for r in result.lanes:
        assert isinstance(r, int) or isinstance(r, Undefined), r
        out.append(r if isinstance(r, int) else None)
    return out


def random_masks(rng: random.Random) -> tuple[int, int]:
    """(membermask, active) with active inside membermask, sometimes sparse, sometimes full."""
    kind = rng.randrange(4)
    member = FULL if kind == 0 else rng.getrandbits(32) | (1 << rng.randrange(32))
    active = member if kind < 2 else member & rng.getrandbits(32)
    return member, active


# ---------------------------------------------------------------------------------------------
# shfl.sync: an independent transcription of the pseudo-code of §9.7.9.6
# ---------------------------------------------------------------------------------------------


def shfl_oracle(mode, a, b, c, member, active):
    """Written from the manual's pseudo-code, lane by lane; None = undefined (source inactive or
    not in membermask, or the lane does not execute)."""
    d_out, p_out = [], []
    for lane in LANES:
        if not active >> lane & 1:
            d_out.append(None)
            p_out.append(None)
            continue
        bval, cval, segmask = b[lane] % 32, c[lane] % 32, (c[lane] >> 8) % 32
        max_lane = (lane & segmask) | (cval & (31 - segmask))
        min_lane = lane & segmask
        j = {"up": lane - bval, "down": lane + bval, "bfly": lane ^ bval, "idx": min_lane | (bval & (31 - segmask))}[mode]
        in_range = j >= max_lane if mode == "up" else j <= max_lane
        source = j if in_range else lane
        readable = (member & active) >> source & 1
        d_out.append(a[source] if readable else None)
        p_out.append(int(in_range))
    return d_out, p_out


@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
def test_shfl_against_the_pseudo_code(mode):
    rng = random.Random(f"shfl-{mode}")
    for _ in range(150):
        member, active = random_masks(rng)
        a = tuple(rng.getrandbits(32) for _ in LANES)
        # b: offsets in and beyond 0..31; c: clamp and segment mask, the common warpSize forms too.
        uniform_b = rng.random() < 0.5
        b0 = rng.choice([0, 1, 2, 5, 16, 31, 32, 33, rng.getrandbits(32)])
        b = (b0,) * 32 if uniform_b else tuple(rng.getrandbits(32) for _ in LANES)
        c0 = rng.choice([0x1F, 0x0, 0x1C1F if mode != "up" else 0x1C00, 0x181F, 0x1F00, rng.getrandbits(13), rng.getrandbits(32)])
        c = (c0,) * 32 if rng.random() < 0.8 else tuple(rng.getrandbits(32) for _ in LANES)
        d, p = evaluate(f"shfl.sync.{mode}.b32", [a, b, c, member], active=active)
        want_d, want_p = shfl_oracle(mode, a, b, c, member, active)
        assert lane_values(d) == want_d
        assert lane_values(p) == want_p


def test_shfl_familiar_cases():
    a = tuple(100 + i for i in LANES)
    # __shfl_down_sync(full, x, 1): lane i reads lane i + 1; lane 31 keeps its own value, p false.
    d, p = evaluate("shfl.sync.down.b32", [a, 1, 0x1F, FULL])
    assert lane_values(d) == [100 + min(i + 1, 31) for i in LANES]
    assert lane_values(p) == [1] * 31 + [0]
    # __shfl_up_sync with width 8 (c = ((32 - 8) << 8)): no crossing of 8-lane segments.
    d, p = evaluate("shfl.sync.up.b32", [a, 2, 0x1800, FULL])
    assert lane_values(d) == [100 + (i - 2 if i % 8 >= 2 else i) for i in LANES]
    # __shfl_xor_sync(full, x, 16): butterfly between halves.
    d, _ = evaluate("shfl.sync.bfly.b32", [a, 16, 0x1F, FULL])
    assert lane_values(d) == [100 + (i ^ 16) for i in LANES]
    # idx broadcast of lane 5 in segments of 16: lane 5 and lane 21.
    d, _ = evaluate("shfl.sync.idx.b32", [a, 5, 0x101F, FULL])
    assert lane_values(d) == [105 if i < 16 else 121 for i in LANES]


def test_shfl_undefined_cases():
    a = tuple(LANES)
    # Source lane 0 is inactive: every lane reading it is undefined.
    d, p = evaluate("shfl.sync.idx.b32", [a, 0, 0x1F, 0xFFFFFFFE], active=0xFFFFFFFE)
    assert all(isinstance(r, Undefined) for r in d.lanes)
    assert lane_values(p) == [None] + [1] * 31
    # An executing lane outside membermask: the behaviour is undefined, in every lane.
    d, p = evaluate("shfl.sync.idx.b32", [a, 0, 0x1F, 0x0000FFFF], active=FULL)
    assert all(isinstance(r, Undefined) for r in d.lanes + p.lanes)
    assert Undefined(32).describe() == "undefined" and 0 in Undefined(32) and FULL in Undefined(32)


# ---------------------------------------------------------------------------------------------
# vote.sync, match.sync, redux.sync, activemask, elect.sync: straightforward Python
# ---------------------------------------------------------------------------------------------


def broadcast(value, active):
    return [value if active >> lane & 1 else None for lane in LANES]


@pytest.mark.parametrize("mode", ["all", "any", "uni", "ballot"])
def test_vote(mode):
    rng = random.Random(f"vote-{mode}")
    for _ in range(200):
        member, active = random_masks(rng)
        density = rng.choice([0.0, 0.5, 0.97, 1.0])
        a = tuple(int(rng.random() < density) for _ in LANES)
        votes = [a[i] for i in bits(member & active)]
        want = {
            "all": int(all(votes)),
            "any": int(any(votes)),
            "uni": int(all(v == votes[0] for v in votes)),
            "ballot": sum(1 << i for i in bits(member & active) if a[i]),
        }[mode]
        text = "vote.sync.ballot.b32" if mode == "ballot" else f"vote.sync.{mode}.pred"
        (d,) = evaluate(text, [a, member], active=active)
        assert lane_values(d) == broadcast(want, active)


@pytest.mark.parametrize("type_name", ["b32", "b64"])
def test_match(type_name):
    rng = random.Random(f"match-{type_name}")
    width = 32 if type_name == "b32" else 64
    for _ in range(200):
        member, active = random_masks(rng)
        pool = [rng.getrandbits(width) for _ in range(rng.choice([1, 2, 5]))]
        a = tuple(rng.choice(pool) for _ in LANES)
        group = bits(member & active)
        (d_any,) = evaluate(f"match.any.sync.{type_name}", [a, member], active=active)
        assert lane_values(d_any) == [sum(1 << j for j in group if a[j] == a[i]) if i in group else None for i in LANES]
        d_all, p_all = evaluate(f"match.all.sync.{type_name}", [a, member], active=active)
        same = len({a[j] for j in group}) == 1
        assert lane_values(d_all) == broadcast(sum(1 << j for j in group) if same else 0, active)
        assert lane_values(p_all) == broadcast(int(same), active)


def to_signed(x):
    return x - (1 << 32) if x >= 1 << 31 else x


@pytest.mark.parametrize(
    "op,type_name",
    [("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")],
)
def test_redux_integer(op, type_name):
    rng = random.Random(f"redux-{op}-{type_name}")
    for _ in range(150):
        member, active = random_masks(rng)
        src = tuple(rng.choice([0, 1, 0x7FFFFFFF, 0x80000000, FULL, rng.getrandbits(32)]) for _ in LANES)
        values = [src[i] for i in bits(member & active)]
        signed = [to_signed(v) for v in values]
        if op == "add":
            want = sum(values) % (1 << 32)
        elif op in ("min", "max"):
            pick = min if op == "min" else max
            want = pick(signed) % (1 << 32) if type_name == "s32" else pick(values)
        else:
            want = {"and": FULL, "or": 0, "xor": 0}[op]
            for v in values:
                want = {"and": want & v, "or": want | v, "xor": want ^ v}[op]
        (d,) = evaluate(f"redux.sync.{op}.{type_name}", [src, member], active=active)
        assert lane_values(d) == broadcast(want, active)


def test_redux_f32():
    import numpy as np

    rng = random.Random("redux-f32")
    specials = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000]
    for _ in range(300):
        member, active = random_masks(rng)
        nan_density = rng.choice([0.0, 0.1, 1.0])
        src = tuple((rng.choice([0x7FC00000, 0xFF800001]) if rng.random() < nan_density else rng.choice(specials + [rng.getrandbits(32)])) for _ in LANES)
        for op in ("min", "max"):
            for mods in ("", ".abs", ".NaN", ".abs.NaN"):
                values = [src[i] & (0x7FFFFFFF if "abs" in mods else FULL) for i in bits(member & active)]
                floats = np.array(values, dtype=np.uint32).view(np.float32)
                nan = np.isnan(floats)
                if nan.all() or ("NaN" in mods and nan.any()):
                    want = 0x7FFFFFFF
                else:
                    numbers = [v for v, n in zip(values, nan) if not n]
                    # numpy orders -0.0 == +0.0; the manual: "+0.0 > -0.0".
                    best = (np.min if op == "min" else np.max)(np.array(numbers, dtype=np.uint32).view(np.float32))
                    ties = [v for v in numbers if np.array([v], dtype=np.uint32).view(np.float32)[0] == best]
                    want = (max if op == "min" else min)(ties) if best == 0 else ties[0]
                (d,) = evaluate(f"redux.sync.{op}{mods}.f32", [src, member], active=active)
                assert lane_values(d) == broadcast(want, active), (op, mods)


def test_activemask_and_elect():
    rng = random.Random("elect")
    for _ in range(100):
        member, active = random_masks(rng)
        (d,) = evaluate("activemask.b32", [], active=active)
        assert lane_values(d) == broadcast(active, active)
        d, p = evaluate("elect.sync", [member], active=active)
        group = bits(member & active)
        if not group:
            assert all(isinstance(r, Undefined) for r in d.lanes)
            continue
        assert lane_values(d) == broadcast(group[0], active)
        assert lane_values(p) == [int(i == group[0]) if active >> i & 1 else None for i in LANES]


def test_executing_lane_outside_membermask_is_undefined():
    for text, sources in [
        ("vote.sync.any.pred", [1, 0xFF]),
        ("vote.sync.ballot.b32", [1, 0xFF]),
        ("match.any.sync.b32", [7, 0xFF]),
        ("redux.sync.add.u32", [7, 0xFF]),
        ("elect.sync", [0xFF]),
    ]:
        out = evaluate(text, sources, active=0x1FF)
        assert all(isinstance(r, Undefined) for result in out for r in result.lanes), text


def test_check_takes_observed_lane_tuples():
    a = tuple(LANES)
    observed_d = tuple((i + 1) % 32 for i in LANES)
    observed_p = tuple(1 for _ in LANES)
    assert check("shfl.sync.idx.b32", [a, tuple((i + 1) % 32 for i in LANES), 0x1F, FULL], [observed_d, observed_p])
    assert not check("shfl.sync.idx.b32", [a, tuple((i + 1) % 32 for i in LANES), 0x1F, FULL], [observed_d[::-1], observed_p])
    # An undefined lane admits anything; a defined one only its value.
    d, _ = evaluate("shfl.sync.up.b32", [a, 1, 0, FULL], active=0xFFFFFFFE)
    assert (12345,) + observed_d[1:] not in d  # lane 1 reads inactive lane 0, but lane 2 must be 1
    assert (12345, 999) + tuple(range(1, 31)) in d


def test_operand_errors():
    with pytest.raises(OperandError, match="does not fit"):
        evaluate("shfl.sync.idx.b32", [(1 << 32,) + (0,) * 31, 0, 0x1F, FULL])
    with pytest.raises(OperandError, match="32 lane values"):
        evaluate("redux.sync.add.u32", [(1, 2, 3), FULL])
    with pytest.raises(OperandError, match="not a warp-level"):
        evaluate("add.rn.f32", [0, 0], active=1)
    with pytest.raises(OperandError, match="same membermask"):
        evaluate("vote.sync.all.pred", [1, tuple(range(32))])


# ---------------------------------------------------------------------------------------------
# Legality, with reasons; targets
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        "shfl.sync.idx.b32",
        "vote.sync.all.pred",
        "vote.sync.any.pred",
        "vote.sync.uni.pred",
        "vote.sync.ballot.b32",
        "match.any.sync.b32",
        "match.all.sync.b64",
        "activemask.b32",
        "elect.sync",
        "redux.sync.add.u32",
        "redux.sync.min.s32",
        "redux.sync.max.u32",
        "redux.sync.xor.b32",
        "redux.sync.min.f32",
        "redux.sync.max.abs.NaN.f32",
        "redux.sync.min.NaN.f32",
    ],
)
def test_legal_forms(text):
    assert parse(text).text == text


@pytest.mark.parametrize(
    "text,reason",
    [
        ("shfl.sync.b32", "missing mode"),
        ("shfl.sync.idx.b64", "not allowed"),
        ("shfl.idx.b32", "missing sync"),
        ("vote.sync.ballot.pred", "not allowed"),
        ("vote.sync.all.b32", "not allowed"),
        ("redux.sync.add.f32", "no `.f32` form"),
        ("redux.sync.and.u32", "takes only `.b32`"),
        ("redux.sync.add.b32", "not `.b32`"),
        ("redux.sync.min.abs.s32", "`.abs` is allowed only with `.f32`"),
        ("redux.sync.max.NaN.u32", "`.NaN` is allowed only with `.f32`"),
        ("match.any.sync.u32", "not allowed"),
        ("elect.sync.b32", "not allowed"),
    ],
)
def test_illegal_forms_say_why(text, reason):
    with pytest.raises(IllegalForm, match=reason.replace(".", r"\.").replace("`", "`")):
        parse(text)


def test_targets():
    assert (parse("redux.sync.min.f32").target.sm, parse("redux.sync.min.f32").target.suffix) == (100, "a")
    assert parse("redux.sync.add.u32").target.ptx == (7, 0)
    assert parse("elect.sync").target.sm == 90
    assert parse("match.any.sync.b32").target.sm == 70


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def test_cli_round_trip_json():
    a = ",".join(str(10 * i) for i in LANES)
    runner = CliRunner()
    out = runner.invoke(cli, ["eval", "--json", "--mask", "0xffff", "--active", "0xffff", "shfl.sync.down.b32", a, "2", "0x1f"])
    assert out.exit_code == 0, out.output
    obj = json.loads(out.output)
    d, p = obj["outputs"]
    want_d, want_p = shfl_oracle("down", [10 * i for i in LANES], [2] * 32, [0x1F] * 32, 0xFFFF, 0xFFFF)
    assert [int(x, 16) if isinstance(x, str) else None for x in d["lanes"]] == want_d
    assert [x["kind"] for x in d["lanes"][16:]] == ["undefined"] * 16
    assert [int(x, 16) if isinstance(x, str) else None for x in p["lanes"]] == want_p
    assert obj["inputs"][-1] == "0x0000ffff"
    text = runner.invoke(cli, ["eval", "--mask", "0xffff", "--active", "0xffff", "shfl.sync.down.b32", a, "2", "0x1f"])
    table = [line.split() for line in text.output.splitlines()]  # a lane a row: lane, d, p
    assert table[0] == ["lane", "d", "p"] and len(table) == 33
    assert table[1][:2] == ["0", "0x00000014"] and table[15][:2] == ["14", "undefined"]


def test_cli_errors():
    runner = CliRunner()
    out = runner.invoke(cli, ["eval", "redux.sync.add.u32", "1,2,3"])
    assert out.exit_code != 0 and "32 comma-separated" in str(out.exception)


# ---------------------------------------------------------------------------------------------
# The catalogue agrees with ptxas (skipped where ptxas is not installed)
# ---------------------------------------------------------------------------------------------

_PTXAS_CASES = [
    ("shfl.sync.bfly.b32", "%r1|%p1, %r2, %r3, %r4, %r5"),
    ("shfl.sync.b32", "%r1, %r2, %r3, %r4, %r5"),
    ("vote.sync.uni.pred", "%p1, !%p2, %r5"),
    ("vote.sync.ballot.b32", "%r1, %p2, %r5"),
    ("vote.sync.ballot.pred", "%p1, %p2, %r5"),
    ("match.all.sync.b64", "%r1|%p1, %rd1, %r5"),
    ("activemask.b32", "%r1"),
    ("redux.sync.max.s32", "%r1, %r2, %r5"),
    ("redux.sync.or.b32", "%r1, %r2, %r5"),
    ("redux.sync.or.u32", "%r1, %r2, %r5"),
    ("redux.sync.add.b32", "%r1, %r2, %r5"),
    ("redux.sync.max.abs.NaN.f32", "%f1, %f2, %r5"),
    ("redux.sync.add.f32", "%f1, %f2, %r5"),
    ("elect.sync", "%r1|%p1, %r5"),
]


@pytest.mark.parametrize("text,operands", _PTXAS_CASES)
def test_catalogue_agrees_with_ptxas(text, operands, tmp_path):
    import shutil
    import subprocess

    from ptxspec.spec.errors import PtxSpecError

    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    try:
        form = parse(text)
        target = f"sm_{form.target.sm}{form.target.suffix}" if form.target.sm > 90 else "sm_90"
        ours = True
    except PtxSpecError:
        target, ours = "sm_100a", False
    kernel = tmp_path / "k.ptx"
    kernel.write_text(
        f".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k() {{\n"
        " .reg .b32 %r<8>; .reg .pred %p<4>; .reg .b64 %rd<3>; .reg .f32 %f<3>;\n"
        f" {text} {operands};\n ret;\n}}\n"
    )
    done = subprocess.run([ptxas, "-arch", target, str(kernel), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
    assert (done.returncode == 0) == ours, done.stderr
