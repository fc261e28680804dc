"""Golden vectors of mma, mma.sp and wgmma.mma_async (conformance/matrix_vectors.py): the schema,
determinism, the batched path against the readable semantics (mma_fragments one vector at a
time), the fast text against json.dumps, check-vectors round trips, corruption and malformed-line
detection, and one independent oracle: integer mma against numpy matmul over the manual's
fragment formulas, re-typed here from §9.7.14.5.10 (m16n8k32 .s8/.u8)."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptxspec.conformance import matrix_vectors as mv
from ptxspec.conformance.check_vectors import check_file, check_vectors_command
from ptxspec.conformance.vectors import generate, jsonl_bytes, vectors_command
from ptxspec.semantics.matrix_layout import field_defined, metadata_layout
from ptxspec.spec.catalogue import parse
from ptxspec.spec.errors import PtxSpecError

F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
S8 = "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32"
S8_SAT = "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32"
SP_S8 = "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
WG_I8 = "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8"
WG_F16 = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"

#: Forms whose D the sm_90 profile (or integer arithmetic) determines: the batched path runs.
DETERMINED = [
    (F16, "sm_90"),
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "sm_90"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "sm_90"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "sm_90"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "sm_90"),
    ("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", "sm_90"),
    ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", "sm_90"),
    (S8, "spec"),
    (S8_SAT, "spec"),
    ("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32", "spec"),
    ("mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32", "spec"),
    ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", "spec"),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc", "spec"),
    (SP_S8, "spec"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32", "sm_90"),
]


def run(command, args: list[str]):
    return CliRunner().invoke(command, args, catch_exceptions=False)


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def check(path: str, profile: str = "spec"):
    return run(check_vectors_command, [path, "--profile", profile])


# ---------------------------------------------------------------------------------------------
# The batched path is the readable semantics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,profile", DETERMINED)
def test_batched_outputs_are_mma_fragments(text, profile):
    """mma_outputs (to_matrix -> mma_matrix -> from_matrix over the batch) gives, register for
    register, what mma_fragments gives one vector at a time; every element class appears."""
    form = parse(text)
    batch = mv.mma_inputs(form, 2 * len(mv.classes_of(form["atype"], not mv.is_sparse(form))), 5)
    fast = mv.mma_outputs(form, batch, profile)
    assert fast.dtype == np.uint64
    slow = mv.mma_reference(form, batch, profile)
    assert fast.tolist() == slow.tolist()


def test_spec_profile_floats_are_sets_and_sparse_floats_always():
    form = parse(F16)
    batch = mv.mma_inputs(form, 3, 0)
    d = mv.mma_outputs(form, batch, "spec")
    assert d.dtype == object and any(not isinstance(x, int) for x in d.ravel())
    sp = parse("mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
    assert not mv.determined(sp, "spec") and not mv.determined(form, "spec") and mv.determined(form, "sm_90")


@pytest.mark.parametrize("text,profile", [DETERMINED[0], DETERMINED[4], (S8, "spec"), (SP_S8, "spec")])
def test_fast_text_is_json_dumps(text, profile):
    """The byte-matrix lines equal json.dumps of the readable path's dicts."""
    form = parse(text)
    fast = mv.mma_jsonl(form, 20, 3, profile)
    slow = "".join(json.dumps(d) + "\n" for d in mv.mma_dicts(form, 20, 3, profile, batched=False)).encode()
    assert fast == slow
    assert jsonl_bytes(text, 20, 3, profile) == fast
    assert [json.dumps(d) + "\n" for d in generate(text, 20, 3, profile)] == fast.decode().splitlines(keepends=True)


# ---------------------------------------------------------------------------------------------
# Schema and inputs
# ---------------------------------------------------------------------------------------------


def test_mma_line_schema():
    (line,) = jsonl_bytes(SP_S8, 1, 0, "spec").decode().splitlines()
    obj = json.loads(line)
    assert list(obj) == ["instr", "inputs", "outputs", "profile"]
    a, b, c, e, f = obj["inputs"]
    assert [len(x) for x in (a, b, c, e)] == [32, 32, 32, 32]
    assert {len(lane) for lane in a} == {2} and {len(lane) for lane in b} == {2} and {len(lane) for lane in c} == {4}
    assert all(len(x) == 10 for lane in a + b + c for x in lane) and len(f) == 10
    (d,) = obj["outputs"]
    assert len(d) == 32 and {len(lane) for lane in d} == {4}
    f64 = json.loads(jsonl_bytes("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 0, "sm_90"))
    assert all(len(x) == 18 for operand in f64["inputs"] + f64["outputs"] for lane in operand for x in lane)


def test_spec_sets_follow_the_scalar_schema():
    """Under spec an f32 D register is an interval (no canonical member: its JSON form in
    outputs) or any NaN (the canonical NaN in outputs); 'allowed' mirrors D."""
    lines = [json.loads(x) for x in jsonl_bytes(F16, 7, 1, "spec").decode().splitlines()]
    kinds = set()
    for obj in lines:
        (d,), (allowed,) = obj["outputs"], obj["allowed"]
        for lane_d, lane_a in zip(d, allowed):
            for out, claim in zip(lane_d, lane_a):
                kinds.add(claim["kind"] if claim else None)
                if claim and claim["kind"] == "interval":
                    assert out == claim
                if claim and claim["kind"] == "any-nan":
                    assert out == "0x7fffffff"
    assert "interval" in kinds and "any-nan" in kinds


@pytest.mark.parametrize(
    "text", [SP_S8, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32"]
)
def test_sparse_metadata_is_valid_and_in_the_selected_lanes(text):
    form = parse(text)
    batch = mv.mma_inputs(form, 16, 2)
    meta = metadata_layout(form["shape"], form["atype"])
    ordered = form["spvariant"] == "sp::ordered_metadata"
    rows = mv.fragment_rows(form)
    for e, f in zip(batch.e, batch.f.tolist()):
        used = set()
        for row in range(rows):
            for block in range(meta.blocks):
                lane, bit = meta.field(row, block, f)
                used.add(lane)
                assert field_defined(int(e[lane]) >> bit & 0xF, form["atype"], ordered)
        assert all(int(e[lane]) == 0 for lane in range(32) if lane not in used)
    assert set(batch.f.tolist()) == set(meta.selectors)


def test_invalid_metadata_gives_undefined_rows():
    form = parse(SP_S8)
    batch = mv.mma_inputs(form, 4, 0, invalid_metadata=True)
    d = mv.mma_outputs(form, batch, "spec")
    assert d.dtype == object
    assert any(not isinstance(x, int) and x.to_json()["kind"] == "undefined" for x in d.ravel())


def test_cancel_class_cancels():
    """The 'cancel' vectors' exact dot products are tiny next to their products."""
    from fractions import Fraction

    form = parse(F16)
    classes = mv.classes_of("f16")
    n = classes.index("cancel") + 1
    batch = mv.mma_inputs(form, n, 0)
    L = mv.layouts(form)
    A, B = L["a"].to_matrix(batch.a[-1]), L["b"].to_matrix(batch.b[-1])
    a = A.astype(np.uint16).view(np.float16).astype(np.float64)
    b = B.astype(np.uint16).view(np.float16).astype(np.float64)
    products = a[:, :, None] * b[None, :, :]  # exact in float64 (11 x 11 bits)
    sums = [sum(Fraction(x) for x in products[i, :, j]) for i in range(16) for j in range(8)]
    scale = [sum(abs(Fraction(x)) for x in products[i, :, j]) for i in range(16) for j in range(8)]
    assert all(s == 0 or abs(s) <= t / 256 for s, t in zip(sums, scale) if t)


def test_determinism_and_seed(tmp_path):
    one = run(vectors_command, [S8, "--count", "30", "--seed", "4"]).stdout_bytes
    two = run(vectors_command, [S8, "--count", "30", "--seed", "4"]).stdout_bytes
    other = run(vectors_command, [S8, "--count", "30", "--seed", "5"]).stdout_bytes
    assert one == two and one != other and len(one.splitlines()) == 30
    wg1 = run(vectors_command, [WG_I8, "--count", "4", "--seed", "4"]).stdout_bytes
    assert wg1 == run(vectors_command, [WG_I8, "--count", "4", "--seed", "4"]).stdout_bytes


# ---------------------------------------------------------------------------------------------
# Independent oracle: numpy matmul over the manual's formulas (§9.7.14.5.10)
# ---------------------------------------------------------------------------------------------


def _group_thread(lane: int) -> tuple[int, int]:
    return lane >> 2, lane % 4


def _a_m16n8k32_i8(lane: int, i: int) -> tuple[int, int]:
    """row = groupID for 0 <= i < 4 || 8 <= i < 12, groupID + 8 otherwise; col = tig*4 + (i & 3)
    (+16 for i >= 8)."""
    g, t = _group_thread(lane)
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    return row, t * 4 + (i & 3) + (16 if i >= 8 else 0)


def _b_m16n8k32_i8(lane: int, i: int) -> tuple[int, int]:
    g, t = _group_thread(lane)
    return t * 4 + (i & 3) + (16 if i >= 4 else 0), g


def _c_m16n8(lane: int, i: int) -> tuple[int, int]:
    g, t = _group_thread(lane)
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def _unpack(registers, shape, formula, per_register: int, bits: int, signed: bool) -> np.ndarray:
    out = np.zeros(shape, np.int64)
    for lane in range(32):
        for r, word in enumerate(registers[lane]):
            word = int(word, 16)
            for k in range(per_register):
                v = word >> (k * bits) & ((1 << bits) - 1)
                if signed and v >> (bits - 1):
                    v -= 1 << bits
                out[formula(lane, r * per_register + k)] = v
    return out


@pytest.mark.parametrize("text", [S8, S8_SAT])
def test_integer_vectors_against_numpy_matmul(text):
    satfinite = "satfinite" in text
    for line in jsonl_bytes(text, 24, 9, "spec").decode().splitlines():
        obj = json.loads(line)
        a, b, c = obj["inputs"]
        A = _unpack(a, (16, 32), _a_m16n8k32_i8, 4, 8, True)
        B = _unpack(b, (32, 8), _b_m16n8k32_i8, 4, 8, False)
        C = _unpack(c, (16, 8), _c_m16n8, 1, 32, True)
        D = _unpack(obj["outputs"][0], (16, 8), _c_m16n8, 1, 32, True)
        exact = A @ B + C
        want = np.clip(exact, -(1 << 31), (1 << 31) - 1) if satfinite else (exact + (1 << 31)) % (1 << 32) - (1 << 31)
        assert (D == want).all()


# ---------------------------------------------------------------------------------------------
# check-vectors: round trips, corruption, malformed lines
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,profile,count",
    [
        (F16, "sm_90", 40),
        (F16, "spec", 3),
        (SP_S8, "sm_90", 20),
        (WG_I8, "spec", 4),
        (WG_F16, "sm_90", 2),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16", "spec", 2),
    ],
)
def test_round_trip(tmp_path, text, profile, count):
    out = tmp_path / "v.jsonl"
    result = run(vectors_command, [text, "--count", str(count), "--seed", "2", "--profile", profile, "-o", str(out)])
    assert result.exit_code == 0
    result = check(str(out), profile)
    assert result.exit_code == 0, result.output
    assert f"checked {count} vector(s) under profile {profile}: {count} matched, 0 mismatched" in result.output


@pytest.mark.parametrize("text", [F16, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"])
def test_sm90_vectors_lie_in_the_spec_sets(tmp_path, text):
    """The measured datapath's D is a member of the manual's allowed sets (checked under spec)."""
    path = write(tmp_path, "v.jsonl", jsonl_bytes(text, 14, 7, "sm_90"))
    result = check(path, "spec")
    assert result.exit_code == 0 and "14 matched, 0 mismatched" in result.output


def _flip(line: str, lane: int, register: int, bit: int) -> str:
    obj = json.loads(line)
    d = obj["outputs"][0]
    value = int(d[lane][register], 16) ^ (1 << bit)
    d[lane][register] = f"0x{value:0{len(d[lane][register]) - 2}x}"
    return json.dumps(obj)


@pytest.mark.parametrize("text,profile", [(S8, "spec"), (F16, "sm_90"), (WG_I8, "spec")])
def test_one_flipped_bit_is_a_mismatch_at_its_line(tmp_path, text, profile):
    lines = jsonl_bytes(text, 6, 1, profile).decode().splitlines()
    lane, register = (37, 1) if text.startswith("wgmma") else (13, 2)
    lines[3] = _flip(lines[3], lane, register, 0)
    path = write(tmp_path, "bad.jsonl", "\n".join(lines) + "\n")
    result = check(path, profile)
    assert result.exit_code == 1
    assert "5 matched, 1 mismatched" in result.output
    unit = "thread" if text.startswith("wgmma") else "lane"
    assert f"bad.jsonl:4: {text}: D:" in result.output
    assert f"first difference: D {unit} {lane}, register {register}" in result.output


def test_a_wrong_set_or_claim_is_a_mismatch(tmp_path):
    (line,) = jsonl_bytes(F16, 1, 1, "spec").decode().splitlines()
    obj = json.loads(line)
    lane, reg = next((l, r) for l, regs in enumerate(obj["allowed"][0]) for r, x in enumerate(regs) if x and x["kind"] == "interval")
    claim = dict(obj["allowed"][0][lane][reg], high=obj["allowed"][0][lane][reg]["low"])
    obj["outputs"][0][lane][reg] = claim
    result = check(write(tmp_path, "set.jsonl", json.dumps(obj) + "\n"))
    assert result.exit_code == 1 and f"first difference: D lane {lane}, register {reg}" in result.output
    # An observed value inside the interval matches; the claim in 'allowed' must be the set.
    obj = json.loads(line)
    obj["outputs"][0][lane][reg] = obj["allowed"][0][lane][reg]["low"]
    assert check(write(tmp_path, "in.jsonl", json.dumps(obj) + "\n")).exit_code == 0
    obj["allowed"][0][lane][reg] = None
    result = check(write(tmp_path, "claim.jsonl", json.dumps(obj) + "\n"))
    assert result.exit_code == 1 and "'allowed' claims fixed" in result.output


def _mutate_mma(obj: dict, how: str) -> dict:
    if how == "lanes":
        obj["inputs"][0] = obj["inputs"][0][:31]
    elif how == "hex":
        obj["inputs"][1][4][0] = "0xzzzzzzzz"
    elif how == "missing":
        del obj["outputs"]
    elif how == "wide":
        obj["inputs"][2][7][3] = "0x0000000100000000"
    elif how == "registers":
        obj["outputs"][0][9] = obj["outputs"][0][9][:3]
    elif how == "operands":
        obj["inputs"] = obj["inputs"][:2]
    return obj


@pytest.mark.parametrize(
    "how,message",
    [
        ("lanes", "expected a list of 32 lanes"),
        ("hex", "is not hexadecimal"),
        ("missing", "missing field 'outputs'"),
        ("wide", "expected 8 hex digit(s) for a 32-bit register"),
        ("registers", "lane 9: expected a list of 4 register(s)"),
        ("operands", "expected [A, B, C] (3 operands)"),
    ],
)
def test_malformed_mma_line_is_one_located_error(tmp_path, how, message):
    lines = jsonl_bytes(S8, 3, 0, "spec").decode().splitlines()
    lines[1] = json.dumps(_mutate_mma(json.loads(lines[1]), how))
    result = check(write(tmp_path, "m.jsonl", "\n".join(lines) + "\n"))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert "m.jsonl:2:" in result.stderr


def test_bad_selector_and_descriptor_are_located_errors(tmp_path):
    (line,) = jsonl_bytes(SP_S8, 1, 0, "spec").decode().splitlines()
    obj = json.loads(line)
    obj["inputs"][4] = "0x00000002"  # m16n8k32 .s8: selector 0 or 1 (§9.7.14.6.1)
    result = check(write(tmp_path, "f.jsonl", "\n" + json.dumps(obj) + "\n"))
    assert result.exit_code == 2 and "f.jsonl:2:" in result.stderr and "sparsity selector 2" in result.stderr
    (line,) = jsonl_bytes(WG_I8, 1, 0, "spec").decode().splitlines()
    obj = json.loads(line)
    obj["inputs"]["desc_b"] = "0x0000801000080080"  # bit 47: outside the descriptor's fields
    result = check(write(tmp_path, "d.jsonl", json.dumps(obj) + "\n"))
    assert result.exit_code == 2 and "d.jsonl:1:" in result.stderr and "outside the fields" in result.stderr


@pytest.mark.parametrize(
    "how,message",
    [
        ("image", "missing 'image'"),
        ("desc", "expected 16 hex digit(s)"),
        ("threads", "expected a list of 128 threads"),
        ("extra", "'sp_meta' is not an operand"),
    ],
)
def test_malformed_wgmma_line_is_one_located_error(tmp_path, how, message):
    (line,) = jsonl_bytes(WG_I8, 1, 0, "spec").decode().splitlines()
    obj = json.loads(line)
    if how == "image":
        del obj["inputs"]["image"]
    elif how == "desc":
        obj["inputs"]["desc_b"] = "0x1"
    elif how == "threads":
        obj["inputs"]["d"] = obj["inputs"]["d"][:64]
    else:
        obj["inputs"]["sp_meta"] = ["0x00000000"] * 128
    result = check(write(tmp_path, "w.jsonl", json.dumps(obj) + "\n"))
    assert result.exit_code == 2 and message in result.stderr and "w.jsonl:1:" in result.stderr


@pytest.mark.parametrize(
    "text,profile,count",
    [
        (WG_I8, "spec", 12),
        ("wgmma.mma_async.sp.sync.aligned.m64n16k64.satfinite.s32.s8.u8", "sm_90", 8),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc", "spec", 6),
        (WG_F16, "sm_90", 5),
    ],
)
def test_wgmma_batched_outputs_are_wgmma_mma_async(text, profile, count):
    """wgmma_outputs (wgmma_batch over groups) gives what wgmma_mma_async gives one by one."""
    pairs = mv.wgmma_inputs(parse(text), count, 1)
    fast = mv.wgmma_outputs(pairs, profile)
    slow = [mv.wgmma_output(f, v, profile) for f, v in pairs]
    assert [x.tolist() for x in fast] == [x.tolist() for x in slow]
    lines = list(mv.wgmma_dicts(parse(text), count, 1, profile))
    assert lines == list(generate(text, count, 1, profile))


def test_wgmma_uses_every_swizzle_and_both_a_sources():
    from ptxspec.semantics.wgmma_layout import MatrixDescriptor
    from ptxspec.spec import wgmma as wg

    pairs = mv.wgmma_inputs(parse(WG_F16), 16, 0)
    swizzles = {MatrixDescriptor.decode(v.desc_b).swizzle for _, v in pairs}
    swizzles |= {MatrixDescriptor.decode(v.a).swizzle for f, v in pairs if not wg.a_in_registers(f)}
    assert swizzles == {"none", "32B", "64B", "128B"}
    assert {wg.a_in_registers(f) for f, _ in pairs} == {True, False}
    assert {v.immediates.get("imm_trans_b") for _, v in pairs} == {0, 1}


def test_matrix_forms_refuse_other_formats_and_unknown_semantics():
    with pytest.raises(PtxSpecError, match="npz holds scalar forms only"):
        CliRunner().invoke(vectors_command, [S8, "--format", "npz", "-o", "/dev/null"], catch_exceptions=False, standalone_mode=False)
    with pytest.raises(PtxSpecError):
        mv.matrix_form("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32")
    with pytest.raises(PtxSpecError, match="--mask is for warp-level instructions"):
        CliRunner().invoke(vectors_command, [S8, "--mask", "0xff"], catch_exceptions=False, standalone_mode=False)


def test_check_file_api(tmp_path):
    path = write(tmp_path, "v.jsonl", jsonl_bytes(SP_S8, 8, 0, "spec") + jsonl_bytes("fma.rn.f32", 5, 0, "spec"))
    summary = check_file(path)
    assert summary.checked == 13 and summary.mismatched == 0


# ---------------------------------------------------------------------------------------------
# Every mma form with semantics (heavy): round trip, and the batched path against mma_fragments
# ---------------------------------------------------------------------------------------------

CHUNKS = 24


@functools.cache
def all_mma_forms() -> tuple[str, ...]:
    """Every legal form of the mma families that have semantics (from the catalogue's slots)."""
    from ptxspec.semantics.mma import MMA_FAMILIES
    from ptxspec.spec import matrix

    out = []
    for family in matrix.FAMILIES:
        if family.key not in MMA_FAMILIES:
            continue
        choices = [list(s.tokens) if s.required else [None, *s.tokens] for s in family.slots]
        for combo in itertools.product(*choices):
            try:
                form = parse("mma." + ".".join(t for t in combo if t))
            except PtxSpecError:
                continue
            if form.family.key == family.key:
                out.append(form.text)
    return tuple(out)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_mma_form_round_trips(tmp_path, chunk):
    forms = all_mma_forms()
    assert len(forms) > 150
    for text in forms[chunk::CHUNKS]:
        form = parse(text)
        n = len(mv.classes_of(form["atype"], not mv.is_sparse(form)))
        for profile in ("sm_90", "spec") if mv.determined(form, "sm_90") else ("sm_90",):
            batch = mv.mma_inputs(form, n, chunk)
            fast = mv.mma_outputs(form, batch, profile)
            slow = mv.mma_reference(form, batch, profile)
            assert fast.tolist() == slow.tolist(), (text, profile)
            path = write(tmp_path, "v.jsonl", jsonl_bytes(text, n, chunk, profile))
            summary = check_file(path, profile)
            assert summary.matched == n and not summary.unsupported, (text, profile)


# ---------------------------------------------------------------------------------------------
# Independent oracle for wgmma: the manual's canonical layouts and D fragment, re-typed here
# ---------------------------------------------------------------------------------------------


def _k_major_8bit_byte(desc: int, mn: int, k: int) -> int:
    """Byte address of element (mn, k) of an 8-bit K-major matrix (T = 16 elements per 16 bytes)
    by §9.7.15.5.1.2.1's canonical layouts: no swizzle ((8,m),(T,2k)):((1T,SBO),(1,LBO)); 32B,
    64B, 128B ((8,m),(T,2k)):((2T|4T|8T,SBO),(1,T)); then Swizzle<1|2|3,4,3> on the address."""
    start, lbo, sbo = (desc & 0x3FFF) << 4, (desc >> 16 & 0x3FFF) << 4, (desc >> 32 & 0x3FFF) << 4
    mode = desc >> 62
    if mode == 0:
        return start + (mn % 8) * 16 + (mn // 8) * sbo + k % 16 + (k // 16) * lbo
    width = {1: 128, 2: 64, 3: 32}[mode]
    address = start + (mn % 8) * width + (mn // 8) * sbo + k
    bits = {1: 3, 2: 2, 3: 1}[mode]
    return address ^ (((address >> 7) & ((1 << bits) - 1)) << 4)


def _wgmma_d(thread: int, i: int) -> tuple[int, int]:
    g, t = _group_thread(thread % 32)
    return 16 * (thread // 32) + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)


def test_integer_wgmma_against_numpy_matmul():
    """wgmma.mma_async .s32.s8.u8 vectors: A from the image (or from registers, each warp's 16
    rows as the m16n8k32 A fragment), B from the image, D = A*B + D (or A*B when scale-d is 0),
    wrapped to 32 bits, compared with the written D."""
    text = "wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.u8"
    n_cols = 16
    for line in jsonl_bytes(text, 8, 3, "spec").decode().splitlines():
        obj = json.loads(line)
        inputs = obj["inputs"]
        image = bytes.fromhex(inputs["image"][2:])
        if isinstance(inputs["desc_a"], list):
            A = np.zeros((64, 32), np.int64)
            for w in range(4):
                A[16 * w : 16 * w + 16] = _unpack(inputs["desc_a"][32 * w : 32 * w + 32], (16, 32), _a_m16n8k32_i8, 4, 8, True)
        else:
            desc_a = int(inputs["desc_a"], 16)
            A = np.array([[image[_k_major_8bit_byte(desc_a, m, k)] for k in range(32)] for m in range(64)], np.int64)
            A = np.where(A >= 128, A - 256, A)
        desc_b = int(inputs["desc_b"], 16)
        B = np.array([[image[_k_major_8bit_byte(desc_b, n, k)] for n in range(n_cols)] for k in range(32)], np.int64)
        C = np.zeros((64, n_cols), np.int64)
        D = np.zeros((64, n_cols), np.int64)
        for thread in range(128):
            for i in range(n_cols // 2):
                C[_wgmma_d(thread, i)] = int(inputs["d"][thread][i], 16)
                D[_wgmma_d(thread, i)] = int(obj["outputs"][0][thread][i], 16)
        want = (A @ B + (C if inputs["scale_d"] == "0x1" else 0)) % (1 << 32)
        assert (D == want).all()


@functools.cache
def wgmma_forms() -> tuple[str, ...]:
    """Every wgmma.mma_async{.sp} type combination of the catalogue at N = 8 and 16 (and N = 256
    for the integer and .b1 lines, whose D is exact and quick)."""
    from ptxspec.spec import wgmma as wg

    out = []
    for family in (*wg.MMA_ASYNC_FAMILIES, *wg.MMA_ASYNC_SP_FAMILIES):
        if family.key.endswith(".a"):
            continue  # the same texts as the descriptor line; vectors take both A sources
        choices = [list(s.tokens) if s.required else [None, *s.tokens] for s in family.slots]
        for combo in itertools.product(*choices):
            text = "wgmma." + ".".join(t for t in combo if t)
            try:
                form = parse(text)
            except PtxSpecError:
                continue
            _, n, _ = wg.parse_shape(form["shape"])
            if form.family.key == family.key and (n in (8, 16) or (n == 256 and form["dtype"] == "s32")):
                out.append(form.text)
    return tuple(out)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_wgmma_type_round_trips(tmp_path, chunk):
    forms = wgmma_forms()
    assert len(forms) > 40
    for text in forms[chunk::CHUNKS]:
        path = write(tmp_path, "w.jsonl", jsonl_bytes(text, 4, chunk, "spec"))
        summary = check_file(path, "spec")
        assert summary.matched == 4 and not summary.unsupported, text
