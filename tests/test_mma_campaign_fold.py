"""The mma campaign's rounds as one description (conformance/silicon/mma_campaign.py :class:`Round`).

The rounds ``mma``, ``mma-sp``, ``mma-more`` and ``mma-sp-more`` are each one :class:`Round`
(combinations, kind, storage policy, file names) served by the same prepare, load, verify and fit
code. Tested here without ptxas or a GPU: the rounds read exactly the recorded files of
conformance/data/sm_90 (named here), the storage policy (output files against :data:`FILE_BYTES`
computed here; digest rounds' plan entries), the digest replay against the digest's definition
written here with Python integers (a one-register change is found in the right block and
register), the fit search order, and the command line against the rounds.
"""

from __future__ import annotations

import re
from pathlib import Path

import emulated_gpu
import numpy as np
import pytest

from ptxspec.conformance.silicon import mma_campaign as mc
from ptxspec.conformance.silicon import mma_device as md
from ptxspec.conformance.silicon.campaign import CampaignError

DATA = Path(__file__).resolve().parent.parent / "conformance" / "data" / "sm_90"
M64 = (1 << 64) - 1
ROUNDS = (mc.ROUND_1, mc.SPARSE_ROUND_1, mc.ROUND_2, mc.SPARSE_ROUND_2)


# ---------------------------------------------------------------------------------------------
# The description
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("round_", "meta", "files"),
    [
        (mc.ROUND_1, "meta-mma.json", {"mma-0.npz", "mma-1.npz"}),
        (mc.SPARSE_ROUND_1, "meta-mma-sp.json", {"mma-sp-0.npz"}),
        (mc.ROUND_2, "meta-mma-more.json", {"mma-more-0.npz"}),
        (mc.SPARSE_ROUND_2, "meta-mma-sp-more.json", {"mma-sp-more-0.npz"}),
    ],
    ids=["round-1", "sparse-round-1", "round-2", "sparse-round-2"],
)
def test_rounds_read_their_recorded_files(round_, meta, files):
    """Each round reads its own meta file and npz files of the recording, none of another round's
    (``mma-*`` must not take ``mma-sp-*`` or ``mma-more-*``)."""
    if not (DATA / meta).exists():
        pytest.skip("no recording")
    assert (DATA / f"meta-{round_.recording}.json").name == meta
    assert [f.name for f in round_.recorded_files(DATA)] == sorted(files)


def test_rounds_kind_storage_and_records():
    """Kind and storage decide the inputs and the record class; the bundles and recordings are
    distinct; each round's combinations are the module's table of that round."""
    assert [(r.sparse, r.digests) for r in ROUNDS] == [(False, False), (True, False), (False, True), (True, True)]
    assert [r.combinations for r in ROUNDS] == [mc.COMBINATIONS, mc.SPARSE_COMBINATIONS, mc.MORE_COMBINATIONS, mc.SPARSE_MORE_COMBINATIONS]
    assert [r.record for r in ROUNDS] == [mc.Recording, mc.SparseRecording, mc.MoreRecording, mc.SparseDigestRecording]
    assert [r.inputs for r in ROUNDS] == ["abc", "abce", "abc", "abce"]
    assert len({r.bundle for r in ROUNDS}) == len({r.recording for r in ROUNDS}) == 4
    assert mc.ROUNDS == {r.name: r for r in ROUNDS} and [r.name for r in ROUNDS] == [r.recording for r in ROUNDS]
    assert mc.ROUND_1.instruction(mc.COMBINATIONS[0]) == mc.COMBINATIONS[0].instruction
    assert mc.SPARSE_ROUND_1.instruction(mc.SPARSE_COMBINATIONS[0]) == mc.SPARSE_COMBINATIONS[0].instruction()


def test_trial_kernels():
    """The kernel ptxas is asked about: dense with the round's operand descriptions (round 2's
    from the fragment layouts: m8n8k4.f16 quad pairs hold 2 A registers per lane), mma.sp with the
    first sparsity selector as the immediate; parameters in the device's launch order."""
    quad = next(c for c in mc.MORE_COMBINATIONS if c.quad_pairs)
    text = mc.ROUND_2.trial_kernel("k0", quad)
    assert text.startswith(".visible .entry k0(\n  .param .u64 pa,\n  .param .u64 pb,\n  .param .u64 pc,\n  .param .u64 pd,\n  .param .u32 n\n)")
    assert f"  .reg .b32 %a<{max(2, mc.more_description(quad, 'a')['registers'])}>;" in text
    assert text.count("  @%p bra DONE;") == 1 and text.rstrip().endswith("DONE:\n  ret;\n}")
    sp = mc.SPARSE_COMBINATIONS[0]
    text = mc.SPARSE_ROUND_1.trial_kernel("s0", sp)
    assert "  .param .u64 pc,\n  .param .u64 pe,\n  .param .u64 pd,\n  .param .u32 n" in text
    assert re.search(rf", %e0, {sp.selectors[0]};\n", text)


# ---------------------------------------------------------------------------------------------
# The storage policy
# ---------------------------------------------------------------------------------------------


def test_output_files_full_storage():
    """Every D stored: a new file where the next entry would pass FILE_BYTES; eight files are
    more than the device returns."""
    half, third = mc.FILE_BYTES // 2, mc.FILE_BYTES // 3
    plan = [{} for _ in range(6)]
    mc.output_files(plan, [half, half, 1, third, third, mc.FILE_BYTES], digests=False)
    assert [e["file"] for e in plan] == [0, 0, 1, 1, 1, 2]
    plan = [{} for _ in range(8)]
    with pytest.raises(CampaignError, match="8 output files"):
        mc.output_files(plan, [mc.FILE_BYTES] * 8, digests=False)


def test_output_files_digests():
    """D as digests: one file, whatever the full sizes would be."""
    plan = [{} for _ in range(9)]
    mc.output_files(plan, [mc.FILE_BYTES] * 9, digests=True)
    assert {e["file"] for e in plan} == {0}


def test_dense_plan_storage_policy():
    """The same dense plan under both policies: digests add the kept and block counts (what
    ``mma_device.py run BUNDLE OUT mma-more`` reads) and keep one file; round ``mma-more`` plans
    with the digest policy."""
    combo = next(c for c in mc.COMBINATIONS if c.a == "s8")
    named = [("k0", combo)]
    full, arrays = mc.dense_plan(named, random=3)
    digest, arrays2 = mc.dense_plan(named, random=3, digests=True)
    assert "full" not in full[0] and "block" not in full[0]
    assert digest[0]["full"] == md.FULL_RANDOM and digest[0]["block"] == md.DIGEST_BLOCK and digest[0]["file"] == 0
    assert {k: v for k, v in digest[0].items() if k not in ("full", "block")} == full[0]
    assert all(np.array_equal(arrays[k], arrays2[k]) for k in arrays)
    assert mc.ROUND_2.plan(named, 3)[0] == digest and mc.ROUND_1.plan(named, 3)[0] == full
    assert full[0]["random"] == 3 * combo.random_scale and full[0]["probes"] == arrays[f"{combo.name}_a"].shape[0]


def test_sparse_plan_storage_policy():
    """mma.sp with digests: each entry's random mma after the kept ones are whole digest blocks,
    at least the share asked for; one file."""
    combo = next(c for c in mc.SPARSE_MORE_COMBINATIONS if c.a in mc.INTEGER)
    plan, _, kernels = mc.sparse_plan([combo], random=300, probe_mma=8, digests=True)
    share = -(-300 // len(combo.selectors))
    assert len(plan) == len(kernels) == len(combo.selectors)
    for entry in plan:
        rest = entry["random"] - entry["keep"]
        assert entry["keep"] == md.FULL_RANDOM and entry["file"] == 0
        assert rest > 0 and rest % md.DIGEST_BLOCK == 0 and entry["random"] >= share and rest - md.DIGEST_BLOCK < max(share - md.FULL_RANDOM, 1)
    full, _, _ = mc.sparse_plan([combo], random=300, probe_mma=8)
    assert [e["random"] for e in full] == [share] * len(combo.selectors) and all("keep" not in e for e in full)


# ---------------------------------------------------------------------------------------------
# Digest replay (both digest rounds)
# ---------------------------------------------------------------------------------------------


_splitmix64 = emulated_gpu.splitmix64  # the shared Python-integer oracle


def _digest(block: np.ndarray) -> int:
    """sum_i r_i * (splitmix64(i) | 1) mod 2^64 over the block's registers in [mma, lane, register] order."""
    return sum(int(r) * (_splitmix64(i) | 1) for i, r in enumerate(block.reshape(-1).tolist())) & M64


@pytest.fixture(scope="module")
def registers():
    rng = np.random.default_rng(7)
    return rng.integers(0, 1 << 32, size=(2 + 4 * 4, 32, 2), dtype=np.uint64).astype(np.uint32)


def test_mismatching_blocks(registers):
    """Blocks of 4 mma after the first 2: recorded digests (computed here) against the model's D
    with one register changed in block 2; a subset of blocks is replayed alone."""
    block, first = 4, 2
    digests = np.array([_digest(registers[first + i * block : first + (i + 1) * block]) for i in range(4)], dtype=np.uint64)
    model = registers.copy()
    assert mc.mismatching_blocks(lambda s: model[s], first, digests, block) == []
    model[first + 2 * block + 1, 5, 1] ^= 1 << 20
    assert mc.mismatching_blocks(lambda s: model[s], first, digests, block) == [2]
    assert mc.mismatching_blocks(lambda s: model[s], first, digests, block, range(2)) == []
    assert mc.mismatching_blocks(lambda s: model[s], first, digests, block, [1, 2]) == [2]
    assert mc.mismatching_blocks(lambda s: model[s], first, digests, block, range(0)) == []


def test_one_register_changes(registers):
    """From a block's digest alone: the one register that differs, with the silicon's value."""
    block = registers[2:6]
    silicon = block.copy()
    silicon[3, 17, 0] = 12345
    found = list(mc.one_register_changes(block, _digest(silicon)))
    assert (3, 17, 0, int(block[3, 17, 0]), 12345) in found
    assert all(0 <= value < 1 << 32 for *_, value in found)
    assert list(mc.one_register_changes(block, _digest(block))) == []


# ---------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------


def test_best_fit_order(monkeypatch):
    """The starts in order; the first of equal scores kept; the search stops at a model that
    reproduces every D."""
    scores = {"a": 5, "b": 3, "c": 3, "d": 0, "e": 0}
    tried = []

    def fake_search(start, data, combo, log=print):
        tried.append(start)
        return start.upper(), scores[start]

    monkeypatch.setattr(mc, "search", fake_search)
    assert mc.best_fit("abc", None, None) == ("B", 3, "b") and tried == list("abc")
    tried.clear()
    assert mc.best_fit("abdec", None, None) == ("D", 0, "d") and tried == list("abd")


def test_float_groups():
    """Records grouped by combination in order; integer combinations and unnamed ones left out."""

    class R:
        def __init__(self, combo):
            self.combination = combo

    f, g = mc.SPARSE_COMBINATIONS[0], mc.SPARSE_COMBINATIONS[3]
    i = next(c for c in mc.SPARSE_COMBINATIONS if c.a in mc.INTEGER)
    recs = [R(f), R(i), R(g), R(f)]
    groups = mc.float_groups(recs)
    assert list(groups) == [f.name, g.name] and groups[f.name] == [recs[0], recs[3]]
    assert list(mc.float_groups(recs, [g.name])) == [g.name]
    assert list(mc.by_combination(recs)) == [f.name, i.name, g.name]


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def test_commands_take_the_round(monkeypatch):
    """``python -m ptxspec.conformance.silicon mma COMMAND DIR --round NAME`` calls the one generic
    function of COMMAND with the round named NAME (no function per round)."""
    from ptxspec.conformance.silicon.__main__ import main

    calls = []
    for name in ("verify", "fit", "spec_check", "separate"):
        monkeypatch.setattr(mc, name, lambda directory, round_, *rest, name=name: calls.append((name, round_)) or {})
    for command in ("verify", "fit", "spec-check", "separate"):
        for round_ in ROUNDS:
            assert main(["mma", command, str(DATA), "--round", round_.name]) == 0
    assert calls == [(c, r) for c in ("verify", "fit", "spec_check", "separate") for r in ROUNDS]
    assert not [
        n
        for n in dir(mc)
        if n.startswith(("prepare_", "load_", "verify_", "fit_", "spec_check_", "separate_")) and n not in ("prepare_sass", "fit_group", "fit_starts")
    ]
