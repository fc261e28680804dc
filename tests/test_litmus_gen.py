"""``ptxspec litmus-gen`` (conformance/litmus_gen.py): generated tests parse, lower and round-trip,
generation is deterministic, both engines agree on them, and the textbook verdicts of §8.10 hold."""

from __future__ import annotations

import csv
import re

import pytest
from click.testing import CliRunner

from ptxspec.conformance import litmus_gen
from ptxspec.conformance.litmus_gen import (
    ALL_SHAPES,
    Variant,
    check_text,
    enumeration_size,
    generate,
    generate_variants,
    litmus_gen_command,
)
from ptxspec.memory_model.litmus import format_test, parse
from ptxspec.memory_model.lowering import lower
from ptxspec.spec.errors import PtxSpecError

SAFE = re.compile(r"[A-Za-z0-9.+_-]+")


def verdict(shape: str, order: str, scope: str | None, separator: str, placement: str, rmw: bool = False) -> str:
    """The verdict of the generated test of this variant (which must be in the enumeration)."""
    v = Variant(shape, order, scope, separator, placement, rmw)
    texts = dict(generate([shape]))
    assert v.name in texts, v.name
    return check_text(v, texts[v.name]).verdict


# ---- generation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["MP", "CoWW", "IRIW", "CoWR-alias", "MP-alias"])
def test_every_test_of_a_family_parses_lowers_and_round_trips(shape):
    tests = list(generate([shape]))
    assert tests
    for name, text in tests:
        assert SAFE.fullmatch(name), name
        test = parse(text, f"{name}.litmus")
        assert test.name == name
        assert format_test(test) == text  # canonical text: printing the parse gives the same bytes
        program = lower(test)
        assert program.condition.quantifier == "exists"
    assert len({name for name, _ in tests}) == len(tests)


def test_enumeration_size_of_mp_counted_by_hand():
    # weak: po (no scope) + 2 fences x 4 scopes, x 4 placements, + bar.cta (same CTA only) = 37;
    # rlx, rel-acq, rmw+rlx, rmw+rel-acq: 3 separators x 4 scopes x 4 placements + 4 bar.cta = 52 each.
    assert enumeration_size(["MP"]) == 37 + 4 * 52
    # one-thread CoWW: one placement, no bar: weak 9, each of the four others 3 x 4.
    assert enumeration_size(["CoWW"]) == 9 + 4 * 12
    assert enumeration_size() == sum(enumeration_size([s]) for s in ALL_SHAPES)


def test_names_are_unique_over_the_whole_crossing():
    names = [v.name for v, _ in generate_variants(limit=None)]
    assert len(names) == len(set(names)) == enumeration_size()


def test_same_arguments_same_tests_limit_and_sample():
    assert list(generate(["SB", "LB"])) == list(generate(["SB", "LB"]))
    assert list(generate(["SB"], limit=5)) == list(generate(["SB"]))[:5]
    a = list(generate(sample=30, seed=7))
    assert a == list(generate(sample=30, seed=7)) and len(a) == 30
    assert a != list(generate(sample=30, seed=8))
    order = [name for name, _ in generate()]
    assert [name for name, _ in a] == [n for n in order if n in {m for m, _ in a}]  # kept in generation order


def test_mp_text_is_the_shape():
    text = dict(generate(["MP"]))["MP+rel-acq.gpu+fence.sc.gpu+diff-cta"]
    lines = text.splitlines()
    assert "P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;" in lines
    assert "st.relaxed.gpu x, 1 | ld.acquire.gpu r0, y ;" in lines
    assert "fence.sc.gpu | fence.sc.gpu ;" in lines
    assert "st.release.gpu y, 1 | ld.relaxed.gpu r1, x ;" in lines
    assert lines[-1] == "exists ((P1:r0 == 1 /\\ P1:r1 == 0))"


def test_unknown_shape_is_a_located_error():
    with pytest.raises(PtxSpecError, match="unknown shape 'XY'"):
        list(generate(["XY"]))


# ---- the command ------------------------------------------------------------------------------------


def _files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_command_writes_identical_files_on_two_runs(tmp_path):
    runner = CliRunner()
    for out in ("a", "b"):
        result = runner.invoke(litmus_gen_command, [str(tmp_path / out), "--shapes", "MP,CoRR", "--limit", "40"],
                               standalone_mode=False)
        assert result.exit_code == 0, result.output
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b and len(a) == 40
    assert all(name.endswith(".litmus") for name in a)


@pytest.mark.parametrize("suffix", ["csv", "md"])
def test_command_check_writes_the_summary(tmp_path, suffix):
    summary = tmp_path / f"s.{suffix}"
    result = CliRunner().invoke(litmus_gen_command, [str(tmp_path / "t"), "--shapes", "SB", "--limit", "6", "--check",
                                                     "--summary", str(summary)], standalone_mode=False)
    assert result.exit_code == 0, result.output
    text = summary.read_text()
    if suffix == "csv":
        rows = list(csv.DictReader(text.splitlines()))
        assert len(rows) == 6 and {r["family"] for r in rows} == {"SB"}
        assert {r["verdict"] for r in rows} <= {"allowed", "forbidden"}
        assert rows[0]["variant"] == "weak+po+same-cta"
    else:
        lines = text.splitlines()
        assert lines[0] == "| variant | SB |" and len(lines) == 2 + 6 + 1
        assert lines[2] == "| weak+po+same-cta | allowed |"  # SB without fences: the store buffer shows
        assert lines[-1].startswith("| time (s) | ")


def test_summary_without_check_and_bad_suffix_are_errors(tmp_path):
    runner = CliRunner()
    with pytest.raises(PtxSpecError, match="--summary needs --check"):
        runner.invoke(litmus_gen_command, [str(tmp_path), "--summary", "x.csv"], standalone_mode=False,
                      catch_exceptions=False)
    with pytest.raises(PtxSpecError, match=r"\.csv or \.md"):
        runner.invoke(litmus_gen_command, [str(tmp_path), "--check", "--summary", "x.txt"], standalone_mode=False,
                      catch_exceptions=False)


# ---- checking: both engines (check() raises on disagreement) and the textbook verdicts -------------


def test_seeded_sample_checked_by_both_engines():
    rows = [check_text(v, text) for v, text in generate_variants(sample=30, seed=2026)]
    assert len(rows) == 30
    assert all(r.verdict in ("allowed", "forbidden") for r in rows)


def test_mp_release_acquire_gpu_across_ctas_forbidden():
    # §8.10.6: "If R1 observes W2, the release pattern 'F1; W2' synchronizes with the acquire pattern
    # 'R1; F2' ... In the absence of any other writes in this example, R2 must read from W1."
    # With st.release.gpu / ld.acquire.gpu the release and acquire patterns are the operations
    # themselves, morally strong at .gpu across two CTAs of one GPU.
    assert verdict("MP", "rel-acq", "gpu", "po", "diff-cta") == "forbidden"
    assert verdict("MP", "rel-acq", "gpu", "fence.sc", "diff-cta") == "forbidden"


def test_mp_weak_allowed():
    # §8.10.6 needs "a release pattern synchronizes with an acquire pattern" for the causality order
    # W1 -> ... -> R2; weak accesses without fences form no such pattern (and are not morally
    # strong, §8.10.5), so nothing forbids R2 reading the initial value.
    assert verdict("MP", "weak", None, "po", "diff-cta") == "allowed"
    assert verdict("MP", "rlx", "gpu", "po", "diff-cta") == "allowed"


def test_mp_cta_scope_across_gpus_allowed():
    # §8.10.6's MP needs the flag operations and fences to be morally strong; .cta-scoped operations
    # of threads in different GPUs are not (their scopes do not include each other).
    assert verdict("MP", "rel-acq", "cta", "po", "diff-gpu") == "allowed"


def test_sb_fence_sc_forbidden_and_fence_acq_rel_allowed():
    # §8.10.6 SB: "In any execution, either F1 precedes F2 in Fence-SC order, or vice versa ... R2 must
    # read from W1 ... similarly, if F2 precedes F1 in Fence-SC order, R1 must read from W2."
    assert verdict("SB", "weak", "gpu", "fence.sc", "diff-cta") == "forbidden"
    assert verdict("SB", "weak", "sys", "fence.sc", "diff-gpu") == "forbidden"
    # "If each fence.sc in this example were replaced by a fence.acq_rel instruction, this outcome is
    # not guaranteed ... R1 and R2 may both return the initial value 0 of y and x respectively."
    assert verdict("SB", "weak", "sys", "fence.acq_rel", "diff-gpu") == "allowed"


def test_corr_forbidden():
    # §8.10.5 CoRR: "If R1 reads from W1, then the subsequent read R2 must also observe the same value
    # ... Therefore R2 cannot read the initial value of x in such an execution."
    assert verdict("CoRR", "rlx", "sys", "po", "diff-cta") == "forbidden"


def test_lb_relaxed_no_out_of_thin_air_but_outcome_one_one_allowed():
    # §8.10.4 forbids only values "out of thin air"; LB with constants 1 (no dependency cycle) is the
    # classic allowed outcome of a relaxed model; with release/acquire (causality order) it is not.
    assert verdict("LB", "rlx", "gpu", "po", "diff-cta") == "allowed"
    assert verdict("LB", "rel-acq", "gpu", "po", "diff-cta") == "forbidden"


def test_alias_needs_proxy_fence():
    # §8.10.6 CoWR: "Virtual aliases require an alias proxy fence along the synchronization path."
    assert verdict("CoWR-alias", "weak", None, "po", "same-cta") == "allowed"
    assert verdict("CoWR-alias", "weak", None, "fence.proxy.alias", "same-cta") == "forbidden"


# ---- the full run (heavy: split into chunks so CI samples a fraction) -------------------------------

CHUNKS = 8


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_full_enumeration_both_engines(chunk):
    tests = list(generate_variants())
    for v, text in tests[chunk::CHUNKS]:
        assert check_text(v, text).verdict in ("allowed", "forbidden"), v.name


# ---- the shapes' outcomes are the relaxed ones: Sequential Consistency never shows them -------------


def _sc_outcomes(shape):
    """Every final state under Sequential Consistency (all interleavings), by brute force."""
    from itertools import permutations

    slots = [(t, i) for t, accesses in enumerate(shape.threads) for i in range(len(accesses))]
    states = set()
    for order in set(permutations(slots)):
        if any(order.index((t, i)) > order.index((t, i + 1)) for t, i in slots if (t, i + 1) in slots):
            continue  # not program order
        memory, regs = {}, {}
        for t, i in order:
            access = shape.threads[t][i]
            if isinstance(access, litmus_gen.W):
                memory[access.loc] = access.value
            else:
                regs[f"P{t}:{access.reg}"] = memory.get(access.loc, 0)
        states.add(tuple((term, regs.get(term, memory.get(term, 0))) for term, _ in shape.outcome))
    return states


@pytest.mark.parametrize("shape", list(litmus_gen.SHAPES) + list(litmus_gen.ALIAS_SHAPES))
def test_outcome_is_not_sequentially_consistent(shape):
    # The diy7 convention: a family asks for the outcome that Sequential Consistency forbids (an
    # alias reads the same memory as the location it names, §8.2.2), and SC's other outcomes exist.
    s = (litmus_gen.SHAPES | litmus_gen.ALIAS_SHAPES)[shape]
    outcomes = _sc_outcomes(s)
    assert s.outcome not in outcomes
    assert len(outcomes) >= 1
