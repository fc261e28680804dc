"""tcgen05.mma lines of ``ptxspec vectors`` / ``check-vectors`` (conformance/tcgen05_vectors.py).

The lines are written and replayed in-process; the checks are that a replay of what was written
finds zero mismatches (under ``sm_100``, and at the spec level for a small sample), that one
changed cell of D is found, that the bytes depend on the seed alone, and that the cases cover what
the generator promises (every kind, both ``.cta_group``, A from both places, enable-input-d both
ways, negate, transpose, swizzles).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ptxspec.spec.catalogue as catalogue
import ptxspec.spec.tcgen05 as spec_tcgen05
from ptxspec.conformance import tcgen05_vectors as tv
from ptxspec.conformance.check_vectors import check_file
from ptxspec.semantics import tcgen05_descriptors as td
from ptxspec.spec.catalogue import parse

catalogue.ADDRESS_OPERANDS.setdefault("tcgen05", spec_tcgen05.addresses)

ALL_MMA = tv.MMA_FORMS + tv.MMA_TEMPLATE_FORMS
#: Small forms for the spec-level replay (sets: slower).
SMALL = ("tcgen05.mma.cta_group::1.kind::f16", "tcgen05.mma.sp.cta_group::1.kind::f16", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32")


def write(path: Path, forms, count: int, seed: int) -> Path:
    with path.open("wb") as out:
        for text in forms:
            for chunk in tv.jsonl_chunks(parse(text), count, seed):
                out.write(chunk)
    return path


@pytest.fixture(scope="module")
def mma_lines(tmp_path_factory) -> Path:
    """One line of every tcgen05.mma form of DEFAULT_FORMS."""
    return write(tmp_path_factory.mktemp("mma") / "mma.jsonl", ALL_MMA, 1, 11)


def test_every_mma_default_form_is_a_form_of_vectors():
    assert set(tv.MMA_FORMS) <= set(tv.DEFAULT_FORMS) and not set(tv.MMA_TEMPLATE_FORMS) & set(tv.DEFAULT_FORMS)
    kinds, families = set(), set()
    for text in ALL_MMA:
        form = parse(text)
        assert tv.writes_vectors(form) and tv.family_of(form) == "mma"
        assert tv.line_text(form) == text  # the instr of its lines names its family
        kinds.add(form["kind"])
        families.add(form.family.key)
    assert kinds == {f"kind::{k}" for k in td.KINDS}
    assert {"tcgen05.mma.a_tmem", "tcgen05.mma.block_scale.a_tmem", "tcgen05.mma.disable_output_lane", "tcgen05.mma.scale_input_d"} <= families
    assert all(parse(text).text == text for text in tv.MMA_FORMS)  # the bare text names the family


def test_mma_lines_replay_with_zero_mismatches_under_sm_100(mma_lines):
    lines = [json.loads(line) for line in mma_lines.read_text().splitlines()]
    assert [o["instr"] for o in lines] == list(ALL_MMA)
    # the sm_100 profile computes the lines it has a datapath for; sparse A and .kind::i8 stay at the spec level
    assert {o["instr"]: o["profile"] for o in lines}["tcgen05.mma.cta_group::1.kind::f16"] == "sm_100"
    assert all(o["profile"] == ("spec" if ".sp." in o["instr"] or "kind::i8" in o["instr"] else "sm_100") for o in lines)
    assert all(list(o) == ["instr", "state", "inputs", "outputs", "state_after", "profile"] and o["outputs"] == [] for o in lines)
    summary = check_file(str(mma_lines), "sm_100")
    assert summary.checked == len(ALL_MMA) and summary.mismatched == 0 and not summary.unsupported


def test_mma_lines_replay_at_the_spec_level(tmp_path):
    path = write(tmp_path / "small.jsonl", SMALL, 2, 3)
    summary = check_file(str(path), "spec")
    assert summary.checked == 2 * len(SMALL) and summary.mismatched == 0


def _finite(cell: list) -> bool:
    value = int(cell[2], 16)
    exponent = (value >> 10) & 0x1F if len(cell) > 3 else (value >> 23) & 0xFF  # a .f16 D: the lower half
    return exponent not in (0, 0x1F if len(cell) > 3 else 0xFF)


def _d_cell(obj: dict) -> int:
    """The index (in state_after's cells) of a cell that the instruction wrote with a normal value."""
    before = {(c[0], c[1]): c for c in obj["state"]["tensor_memory"]["cells"]}
    cells = obj["state_after"]["tensor_memory"]["cells"]
    return next(k for k, c in enumerate(cells) if before.get((c[0], c[1])) != c and _finite(c))


@pytest.mark.parametrize("profile", ["sm_100", "spec"])
def test_a_corrupted_d_cell_is_found(tmp_path, profile):
    obj = json.loads(write(tmp_path / "one.jsonl", ["tcgen05.mma.cta_group::1.kind::f16"], 1, 5).read_text())
    k = _d_cell(obj)
    cell = obj["state_after"]["tensor_memory"]["cells"][k]
    # the last bit (sm_100: one value) or the top exponent bit (spec: no rounding of the sum reaches it)
    flip = 1 if profile == "sm_100" else 0x4000 if len(cell) > 3 else 0x40000000
    cell[2] = f"0x{int(cell[2], 16) ^ flip:08x}"
    (tmp_path / "bad.jsonl").write_text(json.dumps(obj) + "\n")
    summary = check_file(str(tmp_path / "bad.jsonl"), profile)
    assert summary.mismatched == 1
    mismatch = tv.judge(tv.load_line(json.dumps(obj)), profile)
    assert mismatch is not None and "state_after" in mismatch.why
    assert any(f"lane {cell[0]:3d}" in d or f"lane {cell[0]}" in d for d in mismatch.details), mismatch.details


def test_mma_lines_are_deterministic(tmp_path):
    forms = tv.MMA_FORMS[:4]
    a, b, c = (write(tmp_path / f"{k}.jsonl", forms, 2, seed) for k, seed in enumerate((8, 8, 9)))
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def _decoded(form, case) -> tuple[dict, td.InstrDescriptor]:
    named = {o.name.lower(): v for o, v in zip(form.inputs, case.sources)}
    return named, td.InstrDescriptor.decode(named["idesc"], form["kind"].split("::")[1])


def test_mma_cases_vary_what_they_promise():
    seen: dict[str, set] = {key: set() for key in ("enable", "negate", "transpose", "swizzle", "m", "types", "disabled", "scale_type")}
    for text in (
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.mma.cta_group::2.kind::f8f6f4",
        "tcgen05.mma.cta_group::2.kind::f16 [d_tmem], a_desc, b_desc, idesc, {m0, m1, m2, m3, m4, m5, m6, m7}, enable_input_d",
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16",
        "tcgen05.mma.ws.cta_group::1.kind::tf32",
    ):
        form = parse(text)
        for case in tv.cases(form, 24, 1):
            named, instr = _decoded(form, case)
            seen["enable"].add(named["enable_input_d"])
            seen["negate"].add((instr.negate_a, instr.negate_b))
            seen["transpose"].add((instr.transpose_a, instr.transpose_b))
            seen["swizzle"].add(td.SmemDescriptor.decode(named["b_desc"]).swizzle)
            seen["m"].add((form["cta_group"], ".ws" in form.family.key, instr.m))
            seen["types"].add((instr.atype, instr.btype, instr.dtype))
            seen["disabled"].add(any(v for name, v in named.items() if name.startswith("disable_output_lane")))
            seen["scale_type"].add(instr.scale_type)
            if case.state.peer is not None:
                assert form["cta_group"] == "cta_group::2"
    assert seen["enable"] == {0, 1}
    assert len(seen["negate"]) == 4 and (True, True) in seen["transpose"] or (True, False) in seen["transpose"]
    assert {"none", "32B", "64B", "128B"} <= seen["swizzle"]
    assert {("cta_group::2", False, 128), ("cta_group::2", False, 256), ("cta_group::1", True, 32), ("cta_group::1", True, 128)} <= seen["m"]
    assert {("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f16"), ("e4m3", "e5m2", "f32")} <= seen["types"]
    assert seen["disabled"] == {False, True} and {"ue8m0", "ue4m3"} <= seen["scale_type"]


def test_a_tmem_cases_put_a_in_tensor_memory():
    form = parse("tcgen05.mma.cta_group::2.kind::f16 [d_tmem], [a_tmem], b_desc, idesc, enable_input_d")
    for case in tv.cases(form, 4, 2):
        named, instr = _decoded(form, case)
        column = named["a_tmem"] & 0xFFFF
        # Layout B (M = 128, .cta_group::2) keeps two copies of A, in both CTAs
        for state in (case.state, case.state.peer):
            assert (state.tensor_memory.defined()[:, column] == 3).sum() >= (128 if instr.m == 128 else 128)
        assert not instr.transpose_a


def test_mma_line_sizes_stay_modest(mma_lines):
    sizes = [len(line) for line in mma_lines.read_text().splitlines()]
    assert max(sizes) < 1_500_000 and np.median(sizes) < 400_000, sizes
