"""The catalogue of atom (§9.7.13.5), red (§9.7.13.6) and red.async (§9.7.13.7): the forms it
parses, the operands and templates it gives them, the forms it refuses and why, the targets the
PTX ISA and Target ISA notes give -- and its legality verdicts against ptxas (CUDA 13.0), which skip
when ptxas is not installed (the ``ptxas`` fixture).
"""

from __future__ import annotations

import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import atomics
from ptxspec.spec.catalogue import CATALOGUE, parse
from ptxspec.spec.errors import IllegalForm

KEYS = [f.key for f in atomics.FAMILIES]


def _vec(name: str, n: int) -> str:
    return "{" + ", ".join(f"{name}.{i}" for i in range(n)) + "}"


# ---------------------------------------------------------------------------------------------
# The families
# ---------------------------------------------------------------------------------------------


def test_family_keys():
    assert KEYS == [
        "atom",
        "atom.cas",
        "atom.cas.b16",
        "atom.b128",
        "atom.noftz",
        "atom.vector.f32",
        "atom.vector.half",
        "atom.vector.packed",
        "red",
        "red.noftz",
        "red.vector.f32",
        "red.vector.half",
        "red.vector.packed",
        "red.async.mbarrier.inc_dec",
        "red.async.mbarrier.min_max",
        "red.async.mbarrier.bitwise",
        "red.async.mbarrier.add",
        "red.async.release",
    ]


@pytest.mark.parametrize("family", atomics.FAMILIES, ids=KEYS)
def test_family_is_catalogued_with_section_summary_and_addresses(family):
    assert CATALOGUE.family(family.key) is family
    expected = "9.7.13.7" if family.key.startswith("red.async") else {"atom": "9.7.13.5", "red": "9.7.13.6"}[family.opcode]
    assert family.section == expected
    assert family.summary
    assert family.addresses == (("a", "mbar") if family.key.startswith("red.async.mbarrier") else ("a",))
    names = {s.name for s in family.slots}
    assert {"op", "type"} <= names and names <= {"async", "mmio", "sem", "scope", "ss", "completion_mechanism", "op", "noftz", "cache_hint", "vec", "type"}


# ---------------------------------------------------------------------------------------------
# Legal forms: family, operands, template
# ---------------------------------------------------------------------------------------------

COMPLETE = "mbarrier::complete_tx::bytes"


@pytest.mark.parametrize(
    ("text", "key", "template"),
    [
        # §9.7.13.5's examples (qualifier order as written there).
        ("atom.global.add.s32", "atom", "d, [a], b"),
        ("atom.shared::cta.max.u32", "atom", "d, [a], b"),
        ("atom.global.cas.b32", "atom.cas", "d, [a], b, c"),
        ("atom.global.sys.add.u32", "atom", "d, [a], b"),
        ("atom.global.acquire.sys.inc.u32", "atom", "d, [a], b"),
        ("atom.add.noftz.f16x2", "atom.noftz", "d, [a], b"),
        ("atom.add.noftz.f16", "atom.noftz", "d, [a], b"),
        ("atom.global.cas.b16", "atom.cas.b16", "d, [a], b, c"),
        ("atom.add.noftz.bf16x2", "atom.noftz", "d, [a], b"),
        ("atom.add.shared::cluster.noftz.f16", "atom.noftz", "d, [a], b"),
        ("atom.shared.b128.cas", "atom.b128", "d, [a], b, c"),
        ("atom.global.b128.exch", "atom.b128", "d, [a], b"),
        ("atom.global.exch.L2::cache_hint.b128", "atom.b128", "d, [a], b, cache_policy"),
        ("atom.global.cluster.relaxed.add.u32", "atom", "d, [a], b"),
        ("atom.global.add.L2::cache_hint.s32", "atom", "d, [a], b, cache_policy"),
        ("atom.global.v8.f16.max.noftz", "atom.vector.half", f"{_vec('d', 8)}, [a], {_vec('b', 8)}"),
        ("atom.global.v2.bf16.add.noftz", "atom.vector.half", f"{_vec('d', 2)}, [a], {_vec('b', 2)}"),
        ("atom.global.v4.f32.add", "atom.vector.f32", f"{_vec('d', 4)}, [a], {_vec('b', 4)}"),
        ("atom.global.v2.bf16x2.max.noftz", "atom.vector.packed", f"{_vec('d', 2)}, [a], {_vec('b', 2)}"),
        ("atom.v2.f32.add.L2::cache_hint", "atom.vector.f32", f"{_vec('d', 2)}, [a], {_vec('b', 2)}, cache_policy"),
        # §9.7.13.6's examples.
        ("red.global.add.s32", "red", "[a], b"),
        ("red.shared::cluster.max.u32", "red", "[a], b"),
        ("red.global.and.b32", "red", "[a], b"),
        ("red.add.noftz.bf16", "red.noftz", "[a], b"),
        ("red.global.and.L2::cache_hint.b32", "red", "[a], b, cache_policy"),
        ("red.global.v8.bf16.min.noftz", "red.vector.half", f"[a], {_vec('b', 8)}"),
        ("red.global.v4.f16x2.max.noftz", "red.vector.packed", f"[a], {_vec('b', 4)}"),
        ("red.global.v4.f32.add", "red.vector.f32", f"[a], {_vec('b', 4)}"),
        # §9.7.13.7's examples.
        (f"red.async.relaxed.cluster.shared::cluster.{COMPLETE}.min.u32", "red.async.mbarrier.min_max", "[a], b, [mbar]"),
        (f"red.async.relaxed.cluster.{COMPLETE}.inc.u32", "red.async.mbarrier.inc_dec", "[a], b, [mbar]"),
        (f"red.async.relaxed.cluster.{COMPLETE}.xor.b32", "red.async.mbarrier.bitwise", "[a], b, [mbar]"),
        (f"red.async.relaxed.cluster.{COMPLETE}.add.u64", "red.async.mbarrier.add", "[a], b, [mbar]"),
        ("red.async.release.sys.global.add.u32", "red.async.release", "[a], b"),
        ("red.async.mmio.release.sys.add.s64", "red.async.release", "[a], b"),
    ],
)
def test_legal_form(text, key, template):
    form = parse(text)
    assert form.family.key == key
    assert form.template == template
    # The form's own template parses back to it.
    assert parse(f"{text} {template}").family.key == key


def test_operand_types():
    cas = parse("atom.global.cas.b64")
    assert [(o.name, o.type, o.destination) for o in cas.operands] == [("d", "b64", True), ("a", "u64", False), ("b", "b64", False), ("c", "b64", False)]
    hinted = parse("red.global.add.L2::cache_hint.f32")
    assert [(o.name, o.type) for o in hinted.operands] == [("a", "u64"), ("b", "f32"), ("cache_policy", "b64")]
    assert not hinted.destinations
    assert {o.type for o in parse("atom.cas.b128").operands if o.name != "a"} == {"b128"}
    vector = parse("atom.global.v2.f16x2.add.noftz")
    assert [o.name for o in vector.destinations] == ["d.0", "d.1"]
    assert {o.type for o in vector.operands if o.name != "a"} == {"f16x2"}
    mbar = parse(f"red.async.relaxed.cluster.{COMPLETE}.add.s32").operands
    assert [(o.name, o.type) for o in mbar] == [("a", "u64"), ("b", "s32"), ("mbar", "u64")]


@pytest.mark.parametrize(
    "text",
    [
        "atom.global.add.u32 _, [a], b",  # "a bit bucket destination operand _"
        "atom.global.cas.b32 %r1, [%rd1], %r2, %r3",
        "atom.global.v2.f32.add {x, y}, [p], {u, v}",
        f"red.async.relaxed.cluster.{COMPLETE}.add.u32 [a], b, [m]",
    ],
)
def test_operand_template_fits(text):
    parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "atom.global.cas.b32 d, [a], b",  # cas has c
        "atom.global.add.u32 d, [a], b, c",  # no cache policy without .L2::cache_hint
        "atom.global.add.u32 [d], a, b",  # brackets, where written, go on the address
        "red.global.add.u32 d, [a], b",  # red has no destination
        "atom.global.v4.f32.add {x, y}, [p], {u, v}",  # .v4 takes four
        f"red.async.relaxed.cluster.{COMPLETE}.add.u32 [a], b, m",
    ],
)
def test_operand_template_misfit(text):
    with pytest.raises(IllegalForm):
        parse(text)


# ---------------------------------------------------------------------------------------------
# Refused forms: the manual's reason and section
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "section", "words"),
    [
        ("atom.inc.s32", "9.7.13.5", "atom.inc takes .u32"),
        ("atom.global.dec.u64", "9.7.13.5", "takes .u32"),
        ("atom.global.and.u32", "9.7.13.5", "bit-size operations"),
        ("atom.global.xor.s64", "9.7.13.5", "bit-size operations"),
        ("atom.global.exch.f32", "9.7.13.5", "bit-size operations"),
        ("atom.global.cas.u32", "9.7.13.5", "bit-size operations"),
        ("atom.global.min.b32", "9.7.13.5", "integer operations"),
        ("atom.global.max.f32", "9.7.13.5", "9.7.9.25.4.2"),
        ("atom.global.add.s64", "9.7.13.5", "9.7.9.25.4.2"),
        ("red.global.or.u32", "9.7.13.6", "bit-size operations"),
        ("atom.add.f16", "9.7.13.5", "require the .noftz qualifier"),
        ("atom.global.add.bf16x2", "9.7.13.5", "require the .noftz qualifier"),
        ("red.add.f16x2", "9.7.13.6", "require the .noftz qualifier"),
        ("atom.global.v2.f16.add", "9.7.13.5", "require the .noftz qualifier"),
        ("red.acquire.global.add.u32", "9.7.13.6", ".sem = { .relaxed, .release }"),
        ("red.acq_rel.gpu.global.add.u32", "9.7.13.6", ".sem = { .relaxed, .release }"),
        ("red.global.cas.b32", "9.7.13.6", "red has no .cas"),
        ("atom.shared.add.L2::cache_hint.u32", "9.7.13.5", "only supported for .global"),
        ("red.shared::cta.add.L2::cache_hint.f32", "9.7.13.6", "only supported for .global"),
        ("atom.global.cas.L2::cache_hint.b128", "9.7.13.5", "has no {.level::cache_hint}"),
        ("atom.global.cas.L2::cache_hint.b32", "9.7.13.5", "L2::cache_hint"),
        ("atom.global.add.b128", "9.7.13.5", "does not take .b128"),
        ("atom.global.exch.b16", "9.7.13.5", "does not take .b16"),
        ("atom.shared.v2.f32.add", "9.7.13.5", "can only be used with .global"),
        ("red.shared::cluster.v2.f16.add.noftz", "9.7.13.6", "can only be used with .global"),
        ("atom.global.v8.f32.add", "9.7.13.5", ".v8 of .f32 is not supported"),
        ("atom.global.v8.f16x2.add.noftz", "9.7.13.5", ".v8 of .f16x2 is not supported"),
        ("atom.global.v2.f32.max", "9.7.13.5", "support only .add"),
        ("atom.global.min.noftz.f16", "9.7.13.5", "missing vec qualifier"),
        ("red.async.mmio.release.gpu.add.u32", "9.7.13.7", "must be .sys"),
        ("red.async.release.cluster.global.add.u32", "9.7.13.7", ".gpu or .sys"),
        (f"red.async.release.sys.{COMPLETE}.add.u32", "9.7.13.7", "must not be specified"),
        ("red.async.release.global.add.u32", "9.7.13.7", "missing scope"),
        (f"red.async.relaxed.{COMPLETE}.add.u32", "9.7.13.7", "missing scope"),
        ("red.async.relaxed.cluster.add.u32", "9.7.13.7", "missing completion_mechanism"),
        (f"red.async.relaxed.cluster.{COMPLETE}.and.b64", "9.7.13.7", ".b64"),
    ],
)
def test_refused(text, section, words):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert info.value.section == section
    assert words in str(info.value)


# ---------------------------------------------------------------------------------------------
# Targets: the PTX ISA notes and Target ISA notes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ptx", "arch", "allowed"),
    [
        ("atom.global.add.u32", (1, 1), "sm_11", True),  # "32-bit atom.global ... PTX ISA 1.1", "sm_11"
        ("atom.shared.add.u32", (1, 2), "sm_11", False),  # "atom.shared requires sm_12"
        ("atom.add.u32", (2, 0), "sm_13", False),  # "generic addressing requires sm_20"
        ("atom.global.cas.b64", (1, 2), "sm_12", True),
        ("atom.shared.cas.b64", (1, 2), "sm_13", False),  # "64-bit atom.shared.{add,cas,exch} ... PTX ISA 2.0", "sm_20"
        ("atom.global.and.b64", (3, 0), "sm_50", False),  # "64-bit atom.{and,or,xor,min,max} ... PTX ISA 3.1"
        ("atom.global.and.b64", (3, 1), "sm_32", True),
        ("atom.global.add.f64", (5, 0), "sm_60", True),
        ("atom.global.add.f64", (8, 7), "sm_53", False),
        ("atom.global.gpu.add.u32", (4, 3), "sm_60", False),  # ".scope ... PTX ISA 5.0"
        ("atom.global.relaxed.add.u32", (5, 0), "sm_70", False),  # ".sem ... PTX ISA 6.0"
        ("atom.global.relaxed.add.u32", (6, 0), "sm_60", False),  # ".sem requires sm_70"
        ("atom.add.noftz.f16x2", (6, 2), "sm_60", True),
        ("atom.add.noftz.f16", (6, 2), "sm_70", False),
        ("atom.add.noftz.f16", (6, 3), "sm_70", True),
        ("atom.cas.b16", (6, 3), "sm_60", False),
        ("red.add.noftz.bf16", (7, 8), "sm_89", False),
        ("red.add.noftz.bf16", (7, 8), "sm_90", True),
        ("atom.global.add.L2::cache_hint.u32", (7, 3), "sm_80", False),
        ("atom.global.add.L2::cache_hint.u32", (7, 4), "sm_80", True),
        ("atom.shared::cta.add.u32", (7, 8), "sm_75", True),
        ("atom.shared::cluster.add.u32", (7, 8), "sm_89", False),
        ("atom.cluster.add.u32", (7, 8), "sm_90", True),
        ("atom.cas.b128", (8, 3), "sm_90", True),
        ("atom.sys.cas.b128", (8, 3), "sm_90", False),  # ".sys scope with .b128 ... PTX ISA 8.4"
        ("atom.sys.cas.b128", (8, 4), "sm_90", True),
        ("atom.global.v2.f32.add", (8, 0), "sm_90", False),  # "vector types ... PTX ISA 8.1"
        ("red.global.v8.f16.add.noftz", (8, 1), "sm_90", True),
        ("red.global.v8.f16.add.noftz", (8, 7), "sm_89", False),
        (f"red.async.relaxed.cluster.{COMPLETE}.add.u32", (8, 1), "sm_90", True),
        (f"red.async.relaxed.cluster.{COMPLETE}.add.u32", (8, 0), "sm_90", False),
        ("red.async.release.gpu.add.u32", (8, 6), "sm_100a", False),  # ".release ... PTX ISA 8.7"
        ("red.async.release.gpu.add.u32", (8, 7), "sm_90a", False),  # "... require sm_100"
        ("red.async.release.gpu.add.u32", (8, 7), "sm_100", True),
        ("red.async.release.gpu.add.u32", (8, 7), "sm_120a", True),
    ],
)
def test_target(text, ptx, arch, allowed):
    assert parse(text).admits(ptx, arch) is allowed


# ---------------------------------------------------------------------------------------------
# The generator writes these forms as PTX
# ---------------------------------------------------------------------------------------------


def test_generated_cases_are_written_as_ptx():
    cases = pa.generate(40, seed=0, families=atomics.FAMILIES)
    legal = [c for c in cases if c.category == "legal"]
    assert {c.family for c in legal} == set(KEYS)
    for case in legal:
        assert parse(case.text).family.key == case.family
    lines = {c.text: pa.instruction_line(c) for c in legal}
    vector = next(t for t in lines if parse(t).family.key == "atom.vector.half" and ".v2." in f".{t}.")
    assert "{%d_0, %d_1}, [%a], {%b_0, %b_1}" in lines[vector]
    mbarrier = next(t for t in lines if parse(t).family.key.startswith("red.async.mbarrier"))
    assert lines[mbarrier].endswith("[%a], %b, [%mbar]; }")
    hinted = next(t for t in lines if "L2::cache_hint" in t and parse(t).family.key == "red")
    assert lines[hinted].endswith("[%a], %b, %cache_policy; }")
    # No lane-type variants: a typed vector's elements have its type (§9.7.13.5).
    assert not [c for c in cases if c.category == "lane_type"]


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------

#: sm_70 is the manual's .sem target; CUDA 13.0's ptxas no longer assembles for it (it is skipped).
TARGETS = ("sm_70", "sm_75", "sm_80", "sm_90", "sm_90a", "sm_100a")


def _unexplained(outcomes):
    return [r for r in (pa.record(o) for o in outcomes if not o.agree) if pa.explain(r) is None]


@pytest.mark.parametrize("limit", [pytest.param(60, id="sample"), pytest.param(600, id="full", marks=pytest.mark.heavy)])
@pytest.mark.parametrize("opcode", ["atom", "red"])
def test_generated_forms_agree_with_ptxas(ptxas, opcode, limit):
    """Every family's legal combinations (up to ``limit`` per family: 60 by default, 600 as a
    heavy case) at every target, and its illegal variants; every disagreement is a documented
    :data:`~ptxspec.conformance.ptxas_agreement.KNOWN`."""
    families = [f for f in atomics.FAMILIES if f.opcode == opcode]
    outcomes, skipped = pa.compare(pa.generate(limit, seed=0, families=families), TARGETS, ptxas)
    assert set(skipped) <= {"sm_70"}
    assert len(outcomes) > 5 * limit
    assert _unexplained(outcomes) == []


#: (text, target, PTX ISA versions) where a PTX ISA note puts a version gate between the versions
#: that introduced the targets (which the generated comparison tries).
GATES = [
    ("atom.sys.cas.b128", "sm_90", [(8, 3), (8, 4)]),
    ("atom.gpu.cas.b128", "sm_90", [(8, 2), (8, 3)]),
    ("atom.global.add.L2::cache_hint.u32", "sm_80", [(7, 3), (7, 4)]),
    ("red.global.add.L2::cache_hint.u32", "sm_80", [(7, 3), (7, 4)]),
    ("atom.global.v2.f32.add", "sm_90", [(8, 0), (8, 1)]),
    ("red.global.v8.bf16.add.noftz", "sm_90", [(8, 0), (8, 1)]),
    ("atom.cas.b16", "sm_75", [(6, 3)]),
    ("atom.global.add.noftz.bf16", "sm_90", [(7, 8)]),
    ("atom.global.add.noftz.bf16", "sm_89", [(8, 7)]),
    ("atom.shared::cta.add.u32", "sm_75", [(7, 7), (7, 8)]),
    ("atom.shared::cluster.add.u32", "sm_89", [(8, 7)]),
    ("atom.cluster.add.u32", "sm_89", [(8, 7)]),
    ("atom.cas.b128", "sm_89", [(8, 7)]),
    (f"red.async.relaxed.cluster.{COMPLETE}.add.u32", "sm_90", [(8, 0), (8, 1)]),
    (f"red.async.relaxed.cluster.{COMPLETE}.add.u32", "sm_89", [(8, 7)]),
    ("red.async.release.sys.add.u32", "sm_100a", [(8, 6), (8, 7)]),
    ("red.async.release.sys.add.u32", "sm_90a", [(8, 7)]),
    ("red.async.release.sys.add.u32", "sm_120a", [(8, 7)]),
]


def test_version_gates_agree_with_ptxas(ptxas):
    for text, arch, versions in GATES:
        form = parse(text)
        case = pa.Case(form.family.key, "legal", text, form.operands)
        for version in versions:
            request = pa.Request(arch, version)
            ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [pa.instruction_line(case)])
            ours, why = pa.catalogue_verdict(text, request)
            assert ours == theirs, f"{text} @ {request}: catalogue {ours} ({why}); ptxas {theirs} ({message})"
