"""The §9.7.9 memory instructions of the catalogue (spec/memory_access.py): ld, ld.global.nc, ldu,
st, st.async, st.bulk, multimem.*, prefetch, prefetchu, applypriority, discard, createpolicy,
isspacep, cvta, mapa, getctarank.

Without ptxas: the families the rest of the code relies on, the operands and templates of
representative forms, the targets the PTX ISA and Target ISA notes give, and the refusals with the
manual's reason and section. With ptxas (skipped when absent, the ``ptxas`` fixture): the generated
legal forms, rule-refused forms and illegal variants of every family of the chapter, at sm_75 (the
oldest target CUDA 13.0's ptxas still takes: it has dropped sm_70), sm_80, sm_90, sm_90a and sm_100a,
each at the PTX ISA version that introduced it and at 8.7; every disagreement must be one of
:data:`ptxspec.conformance.ptxas_agreement.KNOWN` (whose examples tests/test_ptxas_agreement.py
replays).
"""

from __future__ import annotations

from collections import Counter

import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import memory_access as ma
from ptxspec.spec.catalogue import CATALOGUE, Operand, Target, parse
from ptxspec.spec.errors import IllegalForm

MEMORY_OPCODES = ("ld", "ldu", "st", "multimem", "prefetch", "prefetchu", "applypriority", "discard", "createpolicy", "isspacep", "cvta", "mapa", "getctarank")
FAMILIES = [f for f in CATALOGUE.families() if f.section.startswith("9.7.9.") and f.opcode in MEMORY_OPCODES]
TARGETS = ("sm_75", "sm_80", "sm_90", "sm_90a", "sm_100a")

#: The family keys other code relies on.
CONTRACT = {
    "ld": "9.7.9.8",
    "ld.eviction_priority": "9.7.9.8",
    "ld.volatile": "9.7.9.8",
    "ld.relaxed": "9.7.9.8",
    "ld.acquire": "9.7.9.8",
    "ld.mmio": "9.7.9.8",
    "ld.global.nc": "9.7.9.9",
    "ld.global.nc.eviction_priority": "9.7.9.9",
    "ldu": "9.7.9.10",
    "st": "9.7.9.11",
    "st.eviction_priority": "9.7.9.11",
    "st.volatile": "9.7.9.11",
    "st.relaxed": "9.7.9.11",
    "st.release": "9.7.9.11",
    "st.mmio": "9.7.9.11",
    "st.async": "9.7.9.12",
    "st.bulk": "9.7.9.13",
    "multimem.ld_reduce": "9.7.9.14",
    "multimem.st": "9.7.9.14",
    "multimem.red": "9.7.9.14",
    "prefetch": "9.7.9.15",
    "prefetch.tensormap": "9.7.9.15",
    "prefetchu": "9.7.9.15",
    "applypriority": "9.7.9.16",
    "discard": "9.7.9.17",
    "createpolicy.fractional": "9.7.9.18",
    "createpolicy.range": "9.7.9.18",
    "createpolicy.cvt": "9.7.9.18",
    "isspacep": "9.7.9.19",
    "cvta": "9.7.9.20",
    "cvta.to": "9.7.9.20",
    "mapa": "9.7.9.23",
    "getctarank": "9.7.9.24",
}


def _names(form):
    return [(o.name, o.type, o.destination) for o in form.operands]


# ---------------------------------------------------------------------------------------------
# The families
# ---------------------------------------------------------------------------------------------


def test_contract_families_exist_with_section_summary_and_addresses():
    keys = {f.key for f in FAMILIES}
    assert keys == {f.key for f in ma.FAMILIES}
    for key, section in CONTRACT.items():
        family = CATALOGUE.family(key)
        assert family.section == section, key
    for family in FAMILIES:
        assert family.summary, family.key
        # Every family whose syntax writes [a] says so; isspacep, cvta, mapa, getctarank take a register.
        bracketed = family.opcode not in ("isspacep", "cvta", "mapa", "getctarank") and family.key not in ("createpolicy.fractional", "createpolicy.cvt")
        assert (family.addresses[:1] == ("a",)) == bracketed, family.key


def test_slot_names():
    """The slot names other code reads: sem, scope, ss, cop, eviction_priority, cache_hint,
    prefetch_size, vec, type, unified, op, size."""
    form = parse("ld.relaxed.gpu.global.L1::evict_last.L2::cache_hint.L2::128B.v2.f32")
    assert dict(form.choices) == {
        "sem": "relaxed",
        "scope": "gpu",
        "ss": "global",
        "eviction_priority": "L1::evict_last",
        "cache_hint": "L2::cache_hint",
        "prefetch_size": "L2::128B",
        "vec": "v2",
        "type": "f32",
    }
    assert dict(parse("ld.global.cg.u32.unified").choices) == {"ss": "global", "cop": "cg", "type": "u32", "unified": "unified"}
    assert dict(parse("st.volatile.shared::cta.b16").choices) == {"sem": "volatile", "ss": "shared::cta", "type": "b16"}
    assert parse("ld.mmio.relaxed.sys.global.u32").get("sem") == "relaxed"
    assert parse("multimem.red.release.gpu.global.max.s32")["op"] == "max"
    assert dict(parse("cvta.to.shared::cluster.u64").choices) == {"to": "to", "ss": "shared::cluster", "size": "u64"}
    assert parse("isspacep.param::entry")["ss"] == "param::entry"
    assert parse("prefetch.global.L2")["ss"] == "global"
    # The parser takes the qualifiers in any order and writes them in the manual's.
    assert parse("ld.unified.global.f32").text == "ld.global.f32.unified"


# ---------------------------------------------------------------------------------------------
# Operands and templates
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "template"),
    [
        ("ld.global.v4.f32", "ld", "{d.0, d.1, d.2, d.3}, [a]"),
        ("ld.f64", "ld", "d, [a]"),
        ("ld.global.L2::cache_hint.b64", "ld", "d, [a], cache_policy"),
        ("ld.global.L1::evict_last.L2::cache_hint.v2.b32", "ld.eviction_priority", "{d.0, d.1}, [a], cache_policy"),
        ("ld.acquire.cluster.shared::cluster.b128", "ld.acquire", "d, [a]"),
        ("ld.global.nc.L1::no_allocate.v4.u8", "ld.global.nc.eviction_priority", "{d.0, d.1, d.2, d.3}, [a]"),
        ("ld.global.cs.nc.L2::256B.f32", "ld.global.nc", "d, [a]"),
        ("ldu.global.v2.f64", "ldu", "{d.0, d.1}, [a]"),
        ("st.global.v4.s32", "st", "[a], {b.0, b.1, b.2, b.3}"),
        ("st.release.sys.L2::cache_hint.u64", "st.release", "[a], b, cache_policy"),
        ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64", "st.async", "[a], {b.0, b.1}, [mbar]"),
        ("st.async.release.sys.global.u8", "st.async.release", "[a], b"),
        ("st.bulk.weak.shared::cta", "st.bulk", "[a], size, initval"),
        ("multimem.ld_reduce.relaxed.cta.add.v4.e4m3", "multimem.ld_reduce.float", "{d.0, d.1, d.2, d.3}, [a]"),
        ("multimem.red.release.gpu.add.v2.bf16x2", "multimem.red.float", "[a], {b.0, b.1}"),
        ("multimem.st.relaxed.gpu.b32", "multimem.st", "[a], b"),
        ("prefetch.global.L2::evict_last", "prefetch.eviction_priority", "[a]"),
        ("prefetch.const.tensormap", "prefetch.tensormap", "[a]"),
        ("prefetchu.L1", "prefetchu", "[a]"),
        ("applypriority.global.L2::evict_normal", "applypriority", "[a], size"),
        ("discard.global.L2", "discard", "[a], size"),
        ("createpolicy.range.global.L2::evict_last.L2::evict_first.b64", "createpolicy.range", "cache_policy, [a], primary_size, total_size"),
        ("createpolicy.fractional.L2::evict_last.b64", "createpolicy.fractional", "cache_policy, fraction"),
        ("createpolicy.cvt.L2.b64", "createpolicy.cvt", "cache_policy, access_property"),
        ("isspacep.shared::cluster", "isspacep", "p, a"),
        ("cvta.to.global.u64", "cvta.to", "p, a"),
        ("mapa.shared::cluster.u32", "mapa", "d, a, b"),
        ("getctarank.u64", "getctarank", "d, a"),
    ],
)
def test_forms_and_templates(text, key, template):
    form = parse(text)
    assert form.family.key == key
    assert form.template == template
    assert parse(f"{text} {template}").family.key == key  # the template picks the same family


def test_operand_types():
    """8-bit values go through 32-bit registers of their kind; .b128 is a .b128 register; the
    cache policy is .b64 and there only with .L2::cache_hint; the address is .u64."""
    assert _names(parse("ld.global.v4.f32")) == [*((f"d.{i}", "f32", True) for i in range(4)), ("a", "u64", False)]
    assert _names(parse("ld.global.s8")) == [("d", "s32", True), ("a", "u64", False)]
    assert _names(parse("ld.global.L2::cache_hint.v2.b8")) == [("d.0", "b32", True), ("d.1", "b32", True), ("a", "u64", False), ("cache_policy", "b64", False)]
    assert _names(parse("st.shared.u8")) == [("a", "u64", False), ("b", "u32", False)]
    assert _names(parse("st.global.b128")) == [("a", "u64", False), ("b", "b128", False)]
    # st.async's b has the very type (no wider registers), and .release has no mbarrier.
    assert _names(parse("st.async.release.gpu.u16")) == [("a", "u64", False), ("b", "u16", False)]
    assert _names(parse("multimem.ld_reduce.min.v2.e5m2x2")) == [("d.0", "b16", True), ("d.1", "b16", True), ("a", "u64", False)]
    assert _names(parse("getctarank.shared::cluster.u64")) == [("d", "u32", True), ("a", "u64", False)]
    assert _names(parse("mapa.u64")) == [("d", "u64", True), ("a", "u64", False), ("b", "u32", False)]
    assert _names(parse("cvta.shared.u32")) == [("p", "u32", True), ("a", "u32", False)]
    assert _names(parse("isspacep.global")) == [("p", "pred", True), ("a", "u64", False)]


def test_ptxas_writer_puts_unified_after_the_address_and_writes_immediates():
    def line(text, key=None):
        form = parse(text)
        return pa.instruction_line(pa.Case(key or form.family.key, "legal", text, form.operands))

    assert "ld.global.f32 %d, [%a].unified;" in line("ld.global.f32.unified")
    assert "ld.global.v4.f32 {%d_0, %d_1, %d_2, %d_3}, [%a];" in line("ld.global.v4.f32")
    assert "st.global.L2::cache_hint.v2.u8 [%a], {%b_0, %b_1}, %cache_policy;" in line("st.global.L2::cache_hint.v2.u8")
    assert ".reg .u32 %b_0;" in line("st.global.v2.u8")
    assert "st.bulk.weak [%a], %size, 0;" in line("st.bulk.weak")
    assert "applypriority.global.L2::evict_normal [%a], 128;" in line("applypriority.global.L2::evict_normal")
    assert "discard.L2 [%a], 128;" in line("discard.L2")
    assert ".reg" not in line("discard.L2").split("discard")[1]
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%a], %b, [%mbar];" in line("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32")
    assert "createpolicy.range.L2::evict_last.b64 %cache_policy, [%a], %primary_size, %total_size;" in line("createpolicy.range.L2::evict_last.b64")


def test_rule_refused_forms_keep_their_operands():
    """A text that only a legality rule refuses is written to ptxas with the operands its slots give
    it (the vector and the cache policy of ``ld.shared.L2::cache_hint.v2.f32``), so that ptxas
    judges the rule and not an operand count."""
    family = CATALOGUE.family("ld")
    operands = pa._fallback_operands(family, ["shared", "L2::cache_hint", "v2", "f32"])
    assert [o.name for o in operands] == ["d.0", "d.1", "a", "cache_policy"]


# ---------------------------------------------------------------------------------------------
# Targets: the PTX ISA notes and Target ISA notes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("ld.global.f32", Target((1, 0), 10)),
        ("ld.f32", Target((2, 0), 20)),  # generic addressing
        ("ld.global.f64", Target((1, 0), 13)),
        ("ld.volatile.global.u32", Target((1, 1), 10)),
        ("ld.global.ca.u32", Target((2, 0), 20)),
        ("ld.weak.global.u32", Target((6, 0), 70)),
        ("ld.relaxed.gpu.global.u32", Target((6, 0), 70)),
        ("ld.relaxed.cluster.global.u32", Target((7, 8), 90)),
        ("ld.global.L1::evict_last.u32", Target((7, 4), 70)),
        ("ld.global.L2::64B.u32", Target((7, 4), 75)),
        ("ld.global.L2::256B.u32", Target((7, 4), 80)),
        ("ld.global.L2::cache_hint.u32", Target((7, 4), 80)),
        ("ld.shared::cta.u32", Target((7, 8), 30)),
        ("ld.shared::cluster.u32", Target((7, 8), 90)),
        ("ld.param::entry.u32", Target((8, 3), 10)),
        ("ld.global.u32.unified", Target((8, 0), 90)),
        ("ld.mmio.relaxed.sys.global.u32", Target((8, 2), 70)),
        ("ld.global.b128", Target((8, 3), 70)),
        ("ld.acquire.sys.global.b128", Target((8, 4), 70)),
        ("ld.acquire.gpu.global.b128", Target((8, 3), 70)),
        ("st.global.L2::cache_hint.u32", Target((7, 4), 80)),
        ("st.param::func.u32", Target((8, 3), 10)),
        ("st.release.cluster.shared::cluster.u32", Target((7, 8), 90)),
        ("ld.global.nc.f32", Target((3, 1), 32)),
        ("ld.global.nc.L2::256B.f32", Target((7, 4), 80)),
        ("ld.global.nc.L1::no_allocate.f32", Target((7, 4), 70)),
        ("ldu.global.f32", Target((2, 0), 20)),
        ("ldu.global.b128", Target((8, 3), 70)),
        ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32", Target((8, 1), 90)),
        ("st.async.release.sys.global.u32", Target((8, 7), 100)),
        ("st.bulk.weak.shared::cta", Target((8, 6), 100)),
        ("multimem.ld_reduce.and.b32", Target((8, 1), 90)),
        ("multimem.ld_reduce.add.acc::f32.v2.f16x2", Target((8, 2), 90)),
        ("prefetch.global.L1", Target((2, 0), 20)),
        ("prefetch.global.L2::evict_normal", Target((7, 4), 80)),
        ("prefetch.tensormap", Target((8, 0), 90)),
        ("applypriority.L2::evict_normal", Target((7, 4), 80)),
        ("createpolicy.cvt.L2.b64", Target((7, 4), 80)),
        ("isspacep.const", Target((3, 1), 20)),
        ("isspacep.param", Target((7, 7), 70)),
        ("isspacep.param::entry", Target((8, 3), 70)),
        ("cvta.to.shared::cluster.u64", Target((7, 8), 90)),
        ("mapa.u64", Target((7, 8), 90)),
        ("getctarank.shared::cluster.u32", Target((7, 8), 90)),
    ],
)
def test_targets(text, target):
    assert parse(text).target == target


def test_fp8_multimem_is_architecture_specific():
    """ "The types .e5m2, .e5m2x2, .e5m2x4, .e4m3, .e4m3x2, .e4m3x4 are supported on the following
    architectures: sm_100a, sm_101a, sm_120a", and so is .acc::f16."""
    for text in ("multimem.ld_reduce.add.v4.e4m3", "multimem.ld_reduce.add.acc::f16.e5m2x4", "multimem.st.relaxed.sys.e4m3x4"):
        form = parse(text)
        assert [t.arch for t in form.targets.alternatives] == ["sm_100a", "sm_101a", "sm_120a"]
        assert form.admits((8, 6), "sm_100a") and form.admits((8, 7), "sm_120a")
        assert not form.admits((8, 7), "sm_90a") and not form.admits((8, 7), "sm_100")


# ---------------------------------------------------------------------------------------------
# Refusals: the reason and the section
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason", "section"),
    [
        ("ld.relaxed.f32", "missing scope", "9.7.9.8"),
        ("ld.acquire.global.u32", "missing scope", "9.7.9.8"),
        ("st.acquire.gpu.global.u32", ".acquire is not an ordering of st", "9.7.9.11"),
        ("ld.release.gpu.global.u32", ".release is not an ordering of ld", "9.7.9.8"),
        ("ld.weak.volatile.global.u32", "mutually exclusive", "9.7.9.8"),
        ("ld.global.v8.b64", "no .v8 for ld", "9.7.9.8"),
        ("st.global.v8.b32", "no .v8 for st", "9.7.9.11"),
        ("ld.global.v4.f64", "cannot exceed 128 bits", "5.4.2"),
        ("st.global.v2.b128", "cannot exceed 128 bits", "5.4.2"),
        ("ld.relaxed.gpu.global.cg.u32", "Cache operations are not permitted", "9.7.9.8"),
        ("st.volatile.global.wb.u32", "Cache operations are not permitted", "9.7.9.11"),
        ("ld.global.ca.L1::evict_last.u32", "different syntax lines", "9.7.9.8"),
        ("ld.volatile.local.u32", "only with .global and .shared", "9.7.9.8"),
        ("st.release.gpu.param.u32", "only with .global and .shared", "9.7.9.11"),
        ("ld.local.L2::64B.u32", ".level::prefetch_size", "9.7.9.8"),
        ("ld.shared.L2::cache_hint.u32", ".level::cache_hint", "9.7.9.8"),
        ("ld.shared.u32.unified", ".unified", "9.7.9.8"),
        ("st.local.L2::cache_hint.u32", ".level::cache_hint", "9.7.9.11"),
        ("ld.shared.L1::evict_last.u32", "§9.7.9.2", "9.7.9.8"),
        ("st.local.L1::no_allocate.u32", "§9.7.9.2", "9.7.9.11"),
        ("ld.mmio.relaxed.gpu.global.u32", "Only .sys thread scope", "9.7.9.8"),
        ("st.mmio.global.u32", "together with .relaxed", "9.7.9.11"),
        ("ld.global.f16", "not allowed", "9.7.9.8"),
        ("st.const.u32", "not allowed", "9.7.9.11"),
        ("st.global.lu.u32", "not allowed", "9.7.9.11"),
        ("ld.global.nc.lu.u32", "not allowed", "9.7.9.9"),
        ("ldu.shared.u32", "not allowed", "9.7.9.10"),
        ("st.async.mmio.release.gpu.global.u32", "must be .sys", "9.7.9.12"),
        ("st.async.v4.b64", "cannot exceed 128 bits", "5.4.2"),
        ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u8", "not allowed", "9.7.9.12"),
        ("multimem.st.relaxed.gpu.v8.f32", "32-bits or 64-bits or 128-bits", "9.7.9.14"),
        ("multimem.ld_reduce.add.f16", "32-bits or 64-bits or 128-bits", "9.7.9.14"),
        ("multimem.st.v2.f64", ".f64 cannot be used with .vec", "9.7.9.14"),
        ("multimem.ld_reduce.min.f32", ".min does not take .f32", "9.7.9.14"),
        ("multimem.red.add.s64", ".add does not take .s64", "9.7.9.14"),
        ("multimem.ld_reduce.and.u32", ".and does not take .u32", "9.7.9.14"),
        ("multimem.ld_reduce.add.acc::f16.f16x2", ".acc::f16", "9.7.9.14"),
        ("multimem.ld_reduce.relaxed.add.u32", "must specify a scope", "9.7.9.14"),
        ("multimem.st.gpu.b32", "needs .relaxed or .release", "9.7.9.14"),
        ("multimem.red.max.f64", "not allowed", "9.7.9.14"),
        ("prefetch.shared.L1", "not allowed", "9.7.9.15"),
        ("applypriority.global.L2::evict_last", "not allowed", "9.7.9.16"),
        ("createpolicy.fractional.L2::evict_first.L2::evict_last.b64", "primary_priority", "9.7.9.18"),  # secondary: .L2::evict_first, .L2::evict_unchanged
        ("cvta.to.global.u16", "not allowed", "9.7.9.20"),
        ("isspacep.u64", "not allowed", "9.7.9.19"),
    ],
)
def test_refused_with_reason_and_section(text, reason, section):
    with pytest.raises(IllegalForm) as error:
        parse(text)
    assert reason in str(error.value)
    assert error.value.section == section


@pytest.mark.parametrize(
    "text",
    [
        "ld.global.relaxed.gpu.u32",  # §9.7.9.8's examples, qualifiers in their order
        "ld.shared.acquire.gpu.u32",
        "ld.shared::cta.acquire.gpu.u32",
        "ld.shared::cluster.u32",
        "ld.global.mmio.relaxed.sys.u32",
        "ld.global.L1::evict_last.u32",
        "ld.L2::128B.f64",
        "ld.param::entry.b32",
        "ld.global.nc.L2::cache_hint.f32",
        "ldu.global.v4.f32",
        "st.shared::cta.release.cta.u32",
        "st.global.L1::no_allocate.f32",
        "st.param::func.b64",
        "st.async.release.global.u32",
        "st.bulk",
        "multimem.ld_reduce.acquire.gpu.global.add.u32",
        "multimem.red.release.cta.global.add.v4.f32",
        "multimem.ld_reduce.add.acc::f32.v2.f16x2",
        "multimem.ld_reduce.relaxed.cta.min.v2.e4m3x2",
        "multimem.red.add.u32",  # .relaxed and .sys by default
        "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64",
        "cvta.shared::cta.u32",
        "cvta.to.param::entry.u64",
        "mapa.shared::cluster.u32",
    ],
)
def test_manual_examples_parse(text):
    parse(text)


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------


def _unexplained(outcomes):
    return [r for r in (pa.record(o) for o in outcomes if not o.agree) if pa.explain(r) is None]


@pytest.mark.parametrize("limit", [pytest.param(10, id="sample"), pytest.param(40, id="full", marks=pytest.mark.heavy)])
def test_generated_forms_agree_with_ptxas(ptxas, limit):
    """Every family's generated cases (``limit`` combinations each at most, seeded: 10 by
    default, 40 as a heavy case), the legal ones at each target and version, the refused ones at
    sm_100a with PTX ISA 8.7."""
    cases = pa.generate(limit=limit, seed=0, families=FAMILIES)
    assert {c.family for c in cases if c.category == "legal"} == {f.key for f in FAMILIES}
    categories = Counter(c.category for c in cases)
    assert categories["legal"] > 10 * limit and categories["rule"] > 2 * limit and categories["wrong_type"] > limit
    outcomes, skipped = pa.compare(cases, TARGETS, ptxas)
    assert not skipped
    assert len(outcomes) > 100 * limit
    assert _unexplained(outcomes) == []
    # The allow-list does not swallow the chapter: most verdicts agree outright.
    assert sum(o.agree for o in outcomes) > 0.9 * len(outcomes)


@pytest.mark.parametrize(
    ("text", "request_", "operands", "legal"),
    [
        # Each gate on both sides of its target or version (the generated cases sample them).
        ("ld.global.L2::256B.f32", "sm_75@8.7", "d:f32,a:u64", False),
        ("ld.global.L2::128B.f32", "sm_75@8.7", "d:f32,a:u64", True),
        ("ld.global.L2::128B.f32", "sm_75@6.3", "d:f32,a:u64", False),
        ("ld.global.nc.L2::256B.f32", "sm_80@7.4", "d:f32,a:u64", True),
        ("ld.relaxed.sys.global.b128", "sm_90@8.3", "d:b128,a:u64", False),
        ("ld.relaxed.sys.global.b128", "sm_90@8.4", "d:b128,a:u64", True),
        ("ld.relaxed.cluster.global.b32", "sm_80@8.7", "d:b32,a:u64", False),
        ("st.shared::cluster.b32", "sm_90@7.8", "a:u64,b:b32", True),
        ("st.shared::cluster.b32", "sm_80@8.7", "a:u64,b:b32", False),
        ("st.mmio.relaxed.sys.global.u32", "sm_90@8.1", "a:u64,b:u32", False),
        ("st.mmio.relaxed.sys.global.u32", "sm_90@8.2", "a:u64,b:u32", True),
        ("multimem.ld_reduce.add.acc::f32.f16x2", "sm_90@8.1", "d:f16x2,a:u64", False),
        ("multimem.ld_reduce.add.acc::f32.f16x2", "sm_90@8.2", "d:f16x2,a:u64", True),
        ("multimem.st.relaxed.sys.e4m3x4", "sm_90a@8.7", "a:u64,b:b32", False),
        ("multimem.st.relaxed.sys.e4m3x4", "sm_100a@8.6", "a:u64,b:b32", True),
        ("st.bulk.weak.shared::cta", "sm_90a@8.7", "a:u64,size:u64,initval:u64", False),
        ("st.bulk.weak.shared::cta", "sm_100a@8.6", "a:u64,size:u64,initval:u64", True),
    ],
)
def test_gates_agree_with_ptxas(ptxas, text, request_, operands, legal):
    arch, version = request_.split("@")
    request = pa.Request(arch, tuple(int(x) for x in version.split(".")))
    form = parse(text)
    spec = [tuple(x.split(":")) for x in operands.split(",")]
    ops = tuple(Operand(n, t, destination=any(n == o.name and o.destination for o in form.operands)) for n, t in spec)
    ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [pa.instruction_line(pa.Case(form.family.key, "legal", text, ops))])
    ours, why = pa.catalogue_verdict(text, request)
    assert (ours, theirs) == (legal, legal), (why, message)
