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


@pytest.mark.parametrize("shape", ["MP", "CoWW", "IRIW", "CoWR-alias", "MP-alias", *litmus_gen.ASYNC_FAMILIES])
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
    base = 37 + 4 * 52
    # fence scope: rlx, rel-acq x fence.sc, fence.acq_rel x 4 access scopes x 3 other fence scopes x 4 placements
    fence_scope = 2 * 2 * 4 * 3 * 4
    # mixed orders: both threads have weak, rlx, rel-acq: 9 combinations less 3 uniform, x 4 placements
    mixed = (9 - 3) * 4
    # bar.cluster: weak (1) + 4 orders x 4 scopes, in same-cta and same-cluster
    cluster = (1 + 4 * 4) * 2
    assert enumeration_size(["MP"]) == base + fence_scope + mixed + cluster
    # one-thread CoWW: one placement, no bar, no mixing: weak 9, each of the four others 3 x 4, 48 fence scopes.
    assert enumeration_size(["CoWW"]) == 9 + 4 * 12 + 2 * 2 * 4 * 3
    # SB: a thread W;R has no release or acquire under rel-acq, so its tokens are weak and rlx only.
    assert sum(1 for v, _ in generate_variants(["SB"]) if "_" in v.order) == (4 - 2) * 4
    # proxy shapes: po + 4 proxy fences (x 4 placements for MP)
    assert enumeration_size(["CoWR-surface"]) == 5 and enumeration_size(["MP-texture"]) == 20
    assert enumeration_size(["CoWR-alias"]) == 5 and enumeration_size(["MP-alias"]) == 20
    assert enumeration_size() == sum(enumeration_size([s]) for s in ALL_SHAPES)


def _old_crossing_names():
    """The names of the previous round's crossing, enumerated here from its rules (independently of
    the generator): users refer to them, so they must all still be generated."""
    scopes, placements = ("cta", "cluster", "gpu", "sys"), ("same-cta", "same-cluster", "diff-cta", "diff-gpu")
    names = []
    for shape, s in litmus_gen.SHAPES.items():
        multi = len(s.threads) > 1
        places = placements if multi else ("same-cta",)
        bar = multi and all(len(t) == 2 for t in s.threads)
        for family, orders in ((shape, ("weak", "rlx", "rel-acq")), (shape + "+rmw", ("rlx", "rel-acq"))):
            for order in orders:
                for p in places:
                    names += [f"{family}+{order}+po+{p}"] if order == "weak" else [f"{family}+{order}.{sc}+po+{p}" for sc in scopes]
                    for fence in ("fence.sc", "fence.acq_rel"):
                        names += [f"{family}+{order}{'' if order == 'weak' else '.' + sc}+{fence}.{sc}+{p}" for sc in scopes]
                if bar:
                    names += [f"{family}+weak+bar.cta+same-cta"] if order == "weak" else [f"{family}+{order}.{sc}+bar.cta+same-cta" for sc in scopes]
    for shape in ("CoWR-alias", "MP-alias"):
        for p in placements if shape.startswith("MP") else ("same-cta",):
            order = "rel-acq.gpu" if shape.startswith("MP") else "weak"
            names += [f"{shape}+{order}+po+{p}", f"{shape}+{order}+fence.proxy.alias+{p}"]
    return names


def test_every_name_of_the_previous_round_is_still_generated():
    old = _old_crossing_names()
    assert len(old) == len(set(old)) == 3150  # the size of the previous round's enumeration
    names = {v.name for v, _ in generate_variants()}
    missing = [n for n in old if n not in names]
    assert not missing, missing[:5]


def test_names_are_unique_over_the_whole_crossing():
    names = [v.name for v, _ in generate_variants(limit=None)]
    assert len(names) == len(set(names)) == enumeration_size()


def test_same_arguments_same_tests_limit_and_sample():
    assert list(generate(["SB", "LB"])) == list(generate(["SB", "LB"]))
    assert list(generate(["SB"], limit=5)) == list(generate(["SB"]))[:5]
    # several shapes: the limit takes them in turn (MP, SB, MP, SB, ...), each in its own order
    both = [name for name, _ in generate(["MP", "SB"], limit=20)]
    assert both[0::2] == [name for name, _ in generate(["MP"])][:10] and both[1::2] == [name for name, _ in generate(["SB"])][:10]
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
        result = runner.invoke(litmus_gen_command, [str(tmp_path / out), "--shapes", "MP,CoRR", "--limit", "40"], standalone_mode=False)
        assert result.exit_code == 0, result.output
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b and len(a) == 40
    assert all(name.endswith(".litmus") for name in a)


@pytest.mark.parametrize("suffix", ["csv", "md"])
def test_command_check_writes_the_summary(tmp_path, suffix):
    summary = tmp_path / f"s.{suffix}"
    result = CliRunner().invoke(
        litmus_gen_command, [str(tmp_path / "t"), "--shapes", "SB", "--limit", "6", "--check", "--summary", str(summary)], standalone_mode=False
    )
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
        runner.invoke(litmus_gen_command, [str(tmp_path), "--summary", "x.csv"], standalone_mode=False, catch_exceptions=False)
    with pytest.raises(PtxSpecError, match=r"\.csv or \.md"):
        runner.invoke(litmus_gen_command, [str(tmp_path), "--check", "--summary", "x.txt"], standalone_mode=False, catch_exceptions=False)


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


SHAPES_BY_NAME = litmus_gen.SHAPES | litmus_gen.ALIAS_SHAPES | litmus_gen.ASYNC_FAMILIES


def _variant(name: str) -> Variant:
    """The variant of the enumeration named ``name`` (found by its name: it must be generated)."""
    found = [v for v in litmus_gen.variants(SHAPES_BY_NAME[name.split("+")[0]]) if v.name == name]
    assert len(found) == 1, name
    return found[0]


def _text(name: str) -> str:
    v = _variant(name)
    return format_test(litmus_gen.build(SHAPES_BY_NAME[v.shape], v))


def _named(name: str) -> str:
    return check_text(_variant(name), _text(name)).verdict


def _all_variants():
    return [v for shape in SHAPES_BY_NAME.values() for v in litmus_gen.variants(shape)]


# ---- the fence-scope axis (§8.7, §8.9.3) --------------------------------------------------------------


def test_fence_scope_is_in_the_name_and_the_text():
    lines = _text("SB+rlx.gpu+fence.sc.cta+diff-cta").splitlines()
    assert "st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;" in lines
    assert "fence.sc.cta | fence.sc.cta ;" in lines
    assert "P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;" in lines


def test_sb_fence_narrower_than_the_other_thread_does_not_forbid():
    # §8.7: morally strong needs "each operation is strong and specifies a scope that includes the
    # thread executing the other operation"; §8.9.3 orders only "morally strong fence.sc
    # operations". fence.sc.cta in two different CTAs: no Fence-SC order between them, so the
    # store buffer shows although the accesses are .relaxed.gpu.
    assert _named("SB+rlx.gpu+fence.sc.cta+diff-cta") == "allowed"
    # the same fences in one CTA include each other: §8.10.6 SB is forbidden again
    assert _named("SB+rlx.gpu+fence.sc.cta+same-cta") == "forbidden"
    # .cluster includes a CTA of the same cluster, not a CTA launched without clusters (§2.2)
    assert _named("SB+rlx.gpu+fence.sc.cluster+same-cluster") == "forbidden"
    assert _named("SB+rlx.gpu+fence.sc.cluster+diff-cta") == "allowed"


def test_sb_fence_wider_than_the_accesses_forbids():
    # The accesses' own scope does not matter for the fences' Fence-SC order: .cta accesses with
    # fence.sc.gpu across CTAs are forbidden as SB+weak+fence.sc.gpu is (§8.10.6 SB).
    assert _named("SB+rlx.cta+fence.sc.gpu+diff-cta") == "forbidden"
    assert _named("SB+rlx.cta+fence.acq_rel.gpu+diff-cta") == "allowed"  # acq_rel has no Fence-SC order


# ---- mixed per-thread orders (§8.8) -------------------------------------------------------------------


def test_mixed_orders_of_mp():
    assert list(litmus_gen.mixed_orders(litmus_gen.SHAPES["MP"])) == ["weak_rlx", "weak_rel-acq", "rlx_weak", "rlx_rel-acq", "rel-acq_weak", "rel-acq_rlx"]
    lines = _text("MP+rel-acq_rlx.gpu+po+diff-cta").splitlines()
    assert "st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;" in lines
    assert "st.release.gpu y, 1 | ld.relaxed.gpu r1, x ;" in lines
    lines = _text("MP+weak_rel-acq.gpu+po+diff-cta").splitlines()
    assert "st.weak x, 1 | ld.acquire.gpu r0, y ;" in lines and "st.weak y, 1 | ld.relaxed.gpu r1, x ;" in lines


def test_mp_needs_both_release_and_acquire():
    # §8.9.4 item 4: a release pattern synchronizes with an acquire pattern. A release writer with a
    # relaxed reader has no acquire pattern (§8.8: "an acquire operation", or a strong read followed
    # by one or by a fence); a weak writer with an acquiring reader has no release pattern.
    assert _named("MP+rel-acq.gpu+po+diff-cta") == "forbidden"
    assert _named("MP+rel-acq_rlx.gpu+po+diff-cta") == "allowed"
    assert _named("MP+weak_rel-acq.gpu+po+diff-cta") == "allowed"
    assert _named("MP+rlx_rel-acq.gpu+po+diff-cta") == "allowed"


def test_isa2_chain_breaks_at_any_relaxed_link():
    # ISA2 uses the causality order across three threads (§8.9.5 is transitive): it is forbidden with
    # release/acquire everywhere and allowed when the middle thread only relaxes.
    assert _named("ISA2+rel-acq.gpu+po+diff-cta") == "forbidden"
    assert _named("ISA2+rlx_rlx_rel-acq.gpu+po+diff-cta") == "allowed"


# ---- cluster barriers (§9.7.13.3, §8.9.4 item 3) -------------------------------------------------------


def test_cluster_barrier_text_and_placements():
    lines = _text("MP+rlx.gpu+bar.cluster+same-cluster").splitlines()
    assert "P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;" in lines
    assert "barrier.cluster.arrive | barrier.cluster.arrive ;" in lines
    assert "barrier.cluster.wait | barrier.cluster.wait ;" in lines
    crossing = [v for v in _all_variants() if isinstance(v, Variant)]
    placements = {v.placement for v in crossing if v.separator == "bar.cluster"}
    assert placements == {"same-cta", "same-cluster"}  # a cluster barrier means nothing across clusters
    shapes = {v.shape for v in crossing if v.separator == "bar.cluster"}
    assert shapes == {"MP", "SB", "LB", "S", "R", "2+2W", "ISA2"}  # two accesses in every thread, as bar.cta


def test_cluster_barrier_orders_the_threads_of_a_cluster():
    # §9.7.13.3: "barrier.cluster.wait ... guarantees that ... memory accesses requested, in program
    # order, prior to the preceding barrier.cluster.arrive by all threads in the cluster are complete
    # and visible to the executing thread"; §8.9.4 item 3: arrive synchronizes with wait.
    assert _named("MP+rlx.gpu+po+same-cluster") == "allowed"
    assert _named("MP+rlx.gpu+bar.cluster+same-cluster") == "forbidden"
    assert _named("SB+weak+bar.cluster+same-cluster") == "forbidden"
    assert _named("LB+rlx.cta+bar.cluster+same-cluster") == "forbidden"


# ---- proxies (§8.2.2, §8.6, §9.7.13.4) ------------------------------------------------------------------


@pytest.mark.parametrize("proxy, opcode", [("surface", "suld"), ("texture", "tld"), ("constant", "cold")])
def test_proxy_shapes_text(proxy, opcode):
    alias = litmus_gen.PROXY_ALIASES[proxy]
    lines = _text(f"MP-{proxy}+rel-acq.gpu+fence.proxy.{proxy}+same-cta").splitlines()
    assert f"{alias} @ {proxy} aliases x;" in lines
    assert f"fence.proxy.{proxy} | fence.proxy.{proxy} ;" in lines
    assert f"st.release.gpu y, 1 | {opcode}.weak r1, {alias} ;" in lines


@pytest.mark.parametrize("proxy", ["surface", "texture", "constant"])
def test_proxy_read_needs_the_fence_of_its_proxy(proxy):
    # §8.6: "Proxy fences are required to synchronize memory operations across different proxies";
    # §9.7.13.4: .proxykind orders "between the generic proxy and the proxy specified by .proxykind",
    # so a fence of another kind does not help.
    assert _named(f"CoWR-{proxy}+weak+po+same-cta") == "allowed"
    assert _named(f"CoWR-{proxy}+weak+fence.proxy.{proxy}+same-cta") == "forbidden"
    for other in ("alias", "surface", "texture", "constant"):
        if other != proxy:
            assert _named(f"CoWR-{proxy}+weak+fence.proxy.{other}+same-cta") == "allowed", other
    assert _named(f"MP-{proxy}+rel-acq.gpu+po+diff-cta") == "allowed"
    assert _named(f"MP-{proxy}+rel-acq.gpu+fence.proxy.{proxy}+diff-cta") == "forbidden"
    # .gpu release/acquire across GPUs is not morally strong: no proxy fence can restore MP
    assert _named(f"MP-{proxy}+rel-acq.gpu+fence.proxy.{proxy}+diff-gpu") == "allowed"


def test_generic_alias_is_not_helped_by_other_proxy_fences():
    assert _named("CoWR-alias+weak+fence.proxy.surface+same-cta") == "allowed"
    assert _named("MP-alias+rel-acq.gpu+fence.proxy.alias+diff-cta") == "forbidden"


# ---- asynchronous families (§9.7.13.15, §9.7.9.25, §9.7.16.6.4) ----------------------------------------

ASYNC = litmus_gen.ASYNC_FAMILIES


def test_async_families_come_last_and_keep_the_old_order():
    old = tuple(litmus_gen.SHAPES) + tuple(litmus_gen.ALIAS_SHAPES)
    assert ALL_SHAPES == old + tuple(ASYNC)
    assert tuple(ASYNC) == (
        "MP-mbarrier",
        "TMA-load",
        "bulk-copy-source",
        "tcgen05-mma-ld",
        "tcgen05-cp-mma",
        "cp-async",
        "mbarrier-init-cluster",
        "MP-sync-restrict",
        "st-async",
        "wgmma",
        "bulk-group",
        "red-async",
        "bulk-reduce",
        "cp-async-mbarrier-arrive",
        "bar-red",
        "tensor-map-update",
    )


def test_async_enumeration_sizes_counted_by_hand():
    # MP-mbarrier: 2 scopes x (release, relaxed, fence + relaxed) arrive x (acquire, relaxed, relaxed + fence) wait x 2 placements
    assert enumeration_size(["MP-mbarrier"]) == 2 * 3 * 3 * 2
    # TMA-load: 2 consumers x (expect_tx, plain) arrive x (acquire, relaxed, relaxed + fence) wait
    assert enumeration_size(["TMA-load"]) == 2 * 2 * 3
    # bulk-copy-source: 2 consumers x (none, proxy.async, proxy.alias, acq_rel) x (acquire, relaxed)
    assert enumeration_size(["bulk-copy-source"]) == 2 * 4 * 2
    # tcgen05-mma-ld: 2 consumers x (nothing, commit, commit + 2 waits) x after_thread_sync or not
    assert enumeration_size(["tcgen05-mma-ld"]) == 2 * 4 * 2
    # tcgen05-cp-mma: 2 arrive x 2 wait semantics x before x after fence
    assert enumeration_size(["tcgen05-cp-mma"]) == 2 * 2 * 2 * 2
    # cp-async: 2 consumers x commit_group or not x (nothing, wait_group 0, wait_group 1, wait_all)
    assert enumeration_size(["cp-async"]) == 2 * 2 * 4
    # mbarrier-init-cluster: (none, mbarrier_init, acq_rel.cluster, release.sync_restrict, acq_rel.cta) x 2 cluster arrives
    assert enumeration_size(["mbarrier-init-cluster"]) == 5 * 2
    # MP-sync-restrict: 2 data spaces x 3 release fences x 3 acquire fences
    assert enumeration_size(["MP-sync-restrict"]) == 2 * 3 * 3
    # st-async: (x, y) read x (acquire, relaxed, relaxed + fence) wait
    assert enumeration_size(["st-async"]) == 2 * 3
    # wgmma: (none, fence.proxy.async, fence.acq_rel.cta) x (no wait, wait_group 0, wait_group 1) before the overwrite
    assert enumeration_size(["wgmma"]) == 3 * 3
    # bulk-group: commit_group or not x (no wait, wait_group 0, wait_group.read 0)
    assert enumeration_size(["bulk-group"]) == 2 * 3
    # red-async: .relaxed.cluster form (expect_tx or plain arrive) x (acquire, relaxed, relaxed + fence) wait,
    # and the .release.gpu form x (acquire, relaxed, relaxed + fence) load of the flag
    assert enumeration_size(["red-async"]) == 2 * 3 + 3
    # bulk-reduce: 2 forms x fence.proxy.async or not x 3 waits (mbarrier: acquire, relaxed, none;
    # bulk_group: wait_group 0, wait_group.read 0, none)
    assert enumeration_size(["bulk-reduce"]) == 2 * 2 * 3
    # cp-async-mbarrier-arrive: 2 consumers x (none, after or before the copy x .noinc or not) x (acquire, relaxed, no) wait
    assert enumeration_size(["cp-async-mbarrier-arrive"]) == 2 * (1 + 2 * 2) * 3
    # bar-red: 2 placements x (no barrier, bar.red.popc, .and, .or)
    assert enumeration_size(["bar-red"]) == 2 * 4
    # tensor-map-update: 2 consumers x (none, release.cta, release.gpu) x (none, acquire.cta, acquire.gpu, acquire of another map)
    assert enumeration_size(["tensor-map-update"]) == 2 * 3 * 4


def test_mp_mbarrier_text_same_cluster():
    lines = _text("MP-mbarrier+fence.acq_rel.cluster+arrive.relaxed.cluster+try_wait.acquire.cluster+same-cluster").splitlines()
    assert "P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;" in lines
    assert "barrier.cluster.arrive | mbarrier.init.shared::cta.b64 bar, 1 ;" in lines
    assert "fence.acq_rel.cluster | mbarrier.try_wait.acquire.cluster.parity.shared::cta.b64 r1, bar, 0 ;" in lines
    assert "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, bar | ld.weak r2, x ;" in lines  # the remote arrive
    assert lines[-1] == "exists ((P1:r1 == 1 /\\ P1:r2 == 0))"
    lines = _text("MP-mbarrier+arrive.release.cta+try_wait.relaxed.cta+fence.acq_rel.cta+same-cta").splitlines()
    assert "P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;" in lines
    assert "bar.cta.sync 0 | mbarrier.init.shared::cta.b64 bar, 1 ;" in lines
    assert "mbarrier.arrive.release.cta.shared::cta.b64 _, bar | mbarrier.try_wait.relaxed.cta.parity.shared::cta.b64 r1, bar, 0 ;" in lines
    assert " | fence.acq_rel.cta ;" in lines and lines[-2] == " | ld.weak r2, x ;"


def test_bar_red_outcome_checks_the_reduction_of_each_placement():
    # §9.7.13.1: .popc counts the true predicates, .and/.or whether all/any are true, over the
    # threads of the CTA (each CTA has its own barriers): P0's predicate is true, P1's false.
    lines = _text("bar-red+bar.red.and+same-cta").splitlines()
    assert "st.weak x, 1 | bar.cta.red.and.pred r0, 0, 0 ;" in lines
    assert "bar.cta.red.and.pred r0, 0, 1 | ld.weak r1, x ;" in lines
    assert lines[-1] == "exists ((P0:r0 != 0 \\/ P1:r0 != 0 \\/ P1:r1 == 0))"
    assert _text("bar-red+bar.red.popc+diff-cta").splitlines()[-1] == "exists ((P0:r0 != 1 \\/ P1:r0 != 0 \\/ P1:r1 == 0))"
    assert _text("bar-red+po+same-cta").splitlines()[-1] == "exists (P1:r1 == 0)"


#: Generated tests that are, instruction for instruction, tests of tests/litmus/manual (whose
#: expected.csv says 1: the outcome is allowed, 0: forbidden).
MANUAL = {
    "TMA-load": "TMA-load+two-threads+arrive.expect_tx.release.cta+try_wait.acquire.cta+same-cta",
    "TMA-load-relaxed-wait": "TMA-load+two-threads+arrive.expect_tx.release.cta+try_wait.relaxed.cta+same-cta",
    "bulk-copy-proxy-fence": "bulk-copy-source+two-threads+fence.proxy.async+try_wait.acquire.cta+same-cta",
    "bulk-copy-no-proxy-fence": "bulk-copy-source+two-threads+try_wait.acquire.cta+same-cta",
    "tcgen05-commit-same-thread": "tcgen05-mma-ld+one-thread+commit+try_wait.relaxed.cluster+after_thread_sync+same-cta",
    "tcgen05-commit-same-thread-no-fence": "tcgen05-mma-ld+one-thread+commit+try_wait.relaxed.cluster+same-cta",
    "tcgen05-commit-cross-thread": "tcgen05-mma-ld+two-threads+commit+try_wait.relaxed.cluster+after_thread_sync+same-cta",
    "tcgen05-commit-cross-thread-no-fence": "tcgen05-mma-ld+two-threads+commit+try_wait.relaxed.cluster+same-cta",
    "tcgen05-pipelined-cross-thread": "tcgen05-cp-mma+before_thread_sync+arrive.relaxed.cluster+try_wait.relaxed.cluster+after_thread_sync+same-cta",
    "tcgen05-pipelined-cross-thread-no-fence": "tcgen05-cp-mma+arrive.relaxed.cluster+try_wait.relaxed.cluster+after_thread_sync+same-cta",
    "cp-async-wait-all": "cp-async+one-thread+wait_all+same-cta",
    "cp-async-no-wait": "cp-async+one-thread+po+same-cta",
    "mbarrier-init-fence": "mbarrier-init-cluster+fence.mbarrier_init.release.cluster+barrier.cluster.arrive.relaxed+same-cluster",
    "mbarrier-init-no-fence": "mbarrier-init-cluster+barrier.cluster.arrive.relaxed+same-cluster",
    "red-async": "red-async+red.async.relaxed.cluster+arrive.expect_tx.release.cta+try_wait.acquire.cluster+same-cluster",
    "cp-async-mbarrier-arrive": "cp-async-mbarrier-arrive+two-threads+ca+mbarrier.arrive+arrive.release.cta+try_wait.acquire.cta+same-cta",
    "cp-async-mbarrier-arrive-before-copy": "cp-async-mbarrier-arrive+two-threads+mbarrier.arrive+ca+arrive.release.cta+try_wait.acquire.cta+same-cta",
    "cp-async-mbarrier-arrive-noinc": "cp-async-mbarrier-arrive+two-threads+ca+mbarrier.arrive.noinc+try_wait.acquire.cta+same-cta",
    "bar-red": "bar-red+bar.red.popc+same-cta",
    "tensor-map-replace": "tensor-map-update+one-thread+release.gpu+acquire.gpu+same-cta",
    "tensor-map-replace-no-acquire": "tensor-map-update+one-thread+release.gpu+same-cta",
    "tensor-map-replace-no-release": "tensor-map-update+one-thread+acquire.gpu+same-cta",
    "tensor-map-cross-thread": "tensor-map-update+two-threads+release.gpu+acquire.gpu+diff-cta",
    "tensor-map-cross-thread-cta-scope": "tensor-map-update+two-threads+release.cta+acquire.gpu+diff-cta",
}


def test_async_templates_are_the_manual_tests():
    from pathlib import Path

    from ptxspec.memory_model.litmus import parse_file

    folder = Path(__file__).parent / "litmus" / "manual"
    with (folder / "expected.csv").open(newline="") as f:
        expected = {row["test"].removesuffix(".litmus"): row["expected"] for row in csv.DictReader(f)}
    for manual, name in MANUAL.items():
        written, generated = parse_file(folder / f"{manual}.litmus"), parse(_text(name), f"{name}.litmus")
        assert (written.init, written.threads, written.code, written.condition) == (
            generated.init,
            generated.threads,
            generated.code,
            generated.condition,
        ), manual
        v = _variant(name)
        assert ASYNC[v.shape].expected(v) == {"1": "allowed", "0": "forbidden"}[expected[manual]], manual


def test_every_requirement_is_needed_and_the_rule_has_both_answers():
    # For each required element there is a variant that lacks only it: the rule names no element
    # that the family could do without (the engines' verdict on those is checked below).
    for family in ASYNC.values():
        missing = [family.missing(v) for v in litmus_gen.variants(family)]
        assert () in missing, family.name
        for r in family.requirements:
            assert (r.name,) in missing, (family.name, r.name)


def _rule_mismatches(family: str) -> list[str]:
    out = []
    for v in litmus_gen.variants(ASYNC[family]):
        text = _text(v.name)
        row = check_text(v, text)  # both engines; EngineDisagreement if they differ
        rule = ASYNC[family].expected(v)
        if row.verdict != rule:
            out.append(f"{v.name}: engines {row.verdict}, rule {rule} (missing {ASYNC[family].missing(v)})\n{text}")
    return out


@pytest.mark.parametrize("family", list(ASYNC))
def test_async_family_verdicts_follow_the_manuals_rule(family):
    # Each family declares from the manual the elements required for its stale outcome to be
    # forbidden (module docstring, "Asynchronous families"): forbidden iff all are present.
    mismatches = _rule_mismatches(family)
    assert not mismatches, "\n".join(mismatches)


def test_command_generates_and_checks_async_families(tmp_path):
    summary = tmp_path / "s.csv"
    args = [str(tmp_path / "t"), "--shapes", "cp-async,tcgen05-cp-mma", "--check", "--summary", str(summary)]
    result = CliRunner().invoke(litmus_gen_command, args, standalone_mode=False)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(summary.read_text().splitlines()))
    assert [r["family"] for r in rows] == ["cp-async"] * 16 + ["tcgen05-cp-mma"] * 16
    assert rows[0]["variant"] == "one-thread+po+same-cta" and rows[0]["verdict"] == "allowed"
    assert len(list((tmp_path / "t").iterdir())) == 32


# ---- the full run (heavy: split into chunks so CI samples a fraction) -------------------------------

CHUNKS = 16


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_full_enumeration_both_engines(chunk):
    for v in _all_variants()[chunk::CHUNKS]:  # only this chunk's tests are printed and checked
        text = format_test(litmus_gen.build(SHAPES_BY_NAME[v.shape], v))
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


def test_check_draws_its_progress_on_a_terminal_only(tmp_path, monkeypatch):
    """``litmus-gen --check`` shows a progress bar on standard error where that is a terminal, and
    clears it; the summary lines are the same either way."""
    import io

    from click.testing import CliRunner

    import ptxspec.conformance.progress as progress
    from ptxspec.conformance.litmus_gen import litmus_gen_command

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(progress, "_stderr", lambda: terminal)
    result = CliRunner().invoke(litmus_gen_command, [str(tmp_path / "t"), "--shapes", "MP", "--limit", "2", "--check"])
    assert result.exit_code == 0, result.output
    assert "checking: 0/2 tests (0%)" in terminal.getvalue() and terminal.getvalue().endswith("\r")
    assert "checked 2 test(s) with both engines" in result.output
