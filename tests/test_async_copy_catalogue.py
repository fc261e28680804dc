"""The catalogue of the asynchronous copies (§9.7.9.25: cp.async, cp.async.bulk, cp.reduce.async.bulk,
the prefetches, the tensor copies and their completion instructions) and tensormap.replace
(§9.7.9.26), spec/async_copy.py: the families, the operands and templates of representative forms,
the targets the PTX ISA and Target ISA notes give, and the refusals with the manual's reason and
section. With ptxas (CUDA 13.0; skipped when absent, the ``ptxas`` fixture): every generated legal
form at sm_80, sm_90, sm_90a, sm_100a and sm_120a (each at the PTX ISA version that introduced it and
at 8.7), the rule-refused forms and illegal variants at sm_100a, the families that only a template
reaches, and the version gates in between; every disagreement must be one of
:data:`ptxspec.conformance.ptxas_agreement.KNOWN`.
"""

from __future__ import annotations

import random

import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import async_copy as ac
from ptxspec.spec import catalogue as cat
from ptxspec.spec.catalogue import CATALOGUE, Form, parse
from ptxspec.spec.errors import IllegalForm

KEYS = [f.key for f in ac.FAMILIES]
MBAR = "mbarrier::complete_tx::bytes"


def _vec(name: str, n: int) -> str:
    return "{" + ", ".join(f"{name}.{i}" for i in range(n)) + "}"


# ---------------------------------------------------------------------------------------------
# The families
# ---------------------------------------------------------------------------------------------


def test_family_keys():
    assert KEYS == [
        "cp.async",
        "cp.async.src_size",
        "cp.async.ignore_src",
        "cp.async.commit_group",
        "cp.async.wait_group",
        "cp.async.wait_all",
        "cp.async.bulk.global_to_shared_cta",
        "cp.async.bulk.global_to_shared_cluster",
        "cp.async.bulk.shared_to_cluster",
        "cp.async.bulk.shared_to_global",
        "cp.reduce.async.bulk.shared_to_cluster",
        "cp.reduce.async.bulk.shared_to_global",
        "cp.reduce.async.bulk.shared_to_global.noftz",
        "cp.async.bulk.prefetch",
        "cp.async.bulk.tensor.global_to_shared_cta",
        "cp.async.bulk.tensor.global_to_shared_cluster",
        "cp.async.bulk.tensor.shared_to_global",
        "cp.reduce.async.bulk.tensor.shared_to_global",
        "cp.async.bulk.prefetch.tensor",
        "cp.async.bulk.commit_group",
        "cp.async.bulk.wait_group",
        "tensormap.replace.tile.field1",
        "tensormap.replace.tile.field2",
        "tensormap.replace.tile.field3",
    ]


SECTIONS = {
    "cp.async": "9.7.9.25.3.1",
    "cp.async.commit_group": "9.7.9.25.3.2",
    "cp.async.wait_group": "9.7.9.25.3.3",
    "cp.async.wait_all": "9.7.9.25.3.3",
    "cp.async.bulk.prefetch.tensor": "9.7.9.25.5.4",
    "cp.async.bulk.prefetch": "9.7.9.25.4.3",
    "cp.async.bulk.tensor": "9.7.9.25.5.2",
    "cp.reduce.async.bulk.tensor": "9.7.9.25.5.3",
    "cp.async.bulk.commit_group": "9.7.9.25.6.1",
    "cp.async.bulk.wait_group": "9.7.9.25.6.2",
    "cp.async.bulk": "9.7.9.25.4.1",
    "cp.reduce.async.bulk": "9.7.9.25.4.2",
    "tensormap.replace": "9.7.9.26",
}

#: The bracketed operands of each family, as PTX writes them.
ADDRESSES = {
    "cp.async": ("dstMem", "srcMem"),
    "cp.async.src_size": ("dstMem", "srcMem"),
    "cp.async.ignore_src": ("dstMem", "srcMem"),
    "cp.async.bulk.global_to_shared_cta": ("dstMem", "srcMem", "mbar"),
    "cp.async.bulk.global_to_shared_cluster": ("dstMem", "srcMem", "mbar"),
    "cp.async.bulk.shared_to_cluster": ("dstMem", "srcMem", "mbar"),
    "cp.async.bulk.shared_to_global": ("dstMem", "srcMem"),
    "cp.reduce.async.bulk.shared_to_cluster": ("dstMem", "srcMem", "mbar"),
    "cp.reduce.async.bulk.shared_to_global": ("dstMem", "srcMem"),
    "cp.reduce.async.bulk.shared_to_global.noftz": ("dstMem", "srcMem"),
    "cp.async.bulk.prefetch": ("srcMem",),
    "cp.async.bulk.tensor.global_to_shared_cta": ("dstMem", "tensorMap", "mbar"),
    "cp.async.bulk.tensor.global_to_shared_cluster": ("dstMem", "tensorMap", "mbar"),
    "cp.async.bulk.tensor.shared_to_global": ("tensorMap", "srcMem"),
    "cp.reduce.async.bulk.tensor.shared_to_global": ("tensorMap", "srcMem"),
    "cp.async.bulk.prefetch.tensor": ("tensorMap",),
    "tensormap.replace.tile.field1": ("tmap",),
    "tensormap.replace.tile.field2": ("tmap",),
    "tensormap.replace.tile.field3": ("tmap",),
}


@pytest.mark.parametrize("family", ac.FAMILIES, ids=KEYS)
def test_family_is_catalogued_with_section_summary_and_addresses(family):
    assert CATALOGUE.family(family.key) is family
    prefix = max((p for p in SECTIONS if family.key == p or family.key.startswith(p + ".")), key=len)
    section = SECTIONS[prefix]
    assert family.section == section
    assert family.summary
    assert family.addresses == ADDRESSES.get(family.key, ())
    assert family.opcode == ("tensormap" if family.key.startswith("tensormap") else "cp")


def test_slot_names():
    """The slot names the semantics read."""
    assert dict(parse("cp.async.cg.shared::cta.global.L2::cache_hint.L2::256B").choices) == {
        "async": "async",
        "cop": "cg",
        "dst_ss": "shared::cta",
        "src_ss": "global",
        "cache_hint": "L2::cache_hint",
        "prefetch_size": "L2::256B",
    }
    bulk = parse(f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster.L2::cache_hint")
    assert dict(bulk.choices) == {
        "async": "async",
        "bulk": "bulk",
        "dst_ss": "shared::cluster",
        "src_ss": "global",
        "completion_mechanism": MBAR,
        "multicast": "multicast::cluster",
        "cache_hint": "L2::cache_hint",
    }
    assert parse("cp.async.bulk.global.shared::cta.bulk_group.cp_mask")["cp_mask"] == "cp_mask"
    reduce = parse("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16")
    assert (reduce["redop"], reduce["noftz"], reduce["type"]) == ("add", "noftz", "bf16")
    tensor = parse(f"cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.{MBAR}.cta_group::2")
    assert (tensor["dim"], tensor["load_mode"], tensor["cta_group"], tensor["dst_ss"]) == ("3d", "im2col::w", "cta_group::2", "shared::cluster")
    assert parse("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4")["level"] == "L2"
    assert parse("cp.async.bulk.prefetch.L2.global")["src_ss"] == "global"
    assert parse("cp.async.bulk.wait_group.read")["read"] == "read"
    replace = parse("tensormap.replace.tile.global_stride.shared::cta.b1024.b64")
    assert dict(replace.choices) == {"replace": "replace", "mode": "tile", "field": "global_stride", "ss": "shared::cta", "b1024": "b1024", "type": "b64"}
    # The parser takes the modifiers in any order (the manual's examples do) and writes them in the line's.
    assert parse(f"cp.async.bulk.tensor.3d.im2col.shared::cluster.global.{MBAR}.L2::cache_hint").text == (
        f"cp.async.bulk.tensor.3d.shared::cluster.global.im2col.{MBAR}.L2::cache_hint"
    )


# ---------------------------------------------------------------------------------------------
# Legal forms: family, operands, template
# ---------------------------------------------------------------------------------------------

COORDS = "tensorCoords"


@pytest.mark.parametrize(
    ("text", "key", "template"),
    [
        # §9.7.9.25.3's examples.
        ("cp.async.ca.shared.global", "cp.async", "[dstMem], [srcMem], cp_size"),
        ("cp.async.ca.shared::cta.global", "cp.async", "[dstMem], [srcMem], cp_size"),
        ("cp.async.cg.shared.global.L2::64B", "cp.async", "[dstMem], [srcMem], cp_size"),
        ("cp.async.ca.shared.global.L2::cache_hint", "cp.async", "[dstMem], [srcMem], cp_size, cache_policy"),
        ("cp.async.ca.shared.global [shrd], [gbl], 4, p", "cp.async.src_size", "[dstMem], [srcMem], cp_size, src_size"),
        ("cp.async.cg.shared.global.L2::cache_hint [r0], [r2], 16, q, policy", "cp.async.src_size", "[dstMem], [srcMem], cp_size, src_size, cache_policy"),
        ("cp.async.commit_group", "cp.async.commit_group", ""),
        ("cp.async.wait_group", "cp.async.wait_group", "N"),
        ("cp.async.wait_all", "cp.async.wait_all", ""),
        # §9.7.9.25.4's examples.
        (f"cp.async.bulk.shared::cta.global.{MBAR}", "cp.async.bulk.global_to_shared_cta", "[dstMem], [srcMem], size, [mbar]"),
        (f"cp.async.bulk.shared::cta.global.{MBAR}.L2::cache_hint", "cp.async.bulk.global_to_shared_cta", "[dstMem], [srcMem], size, [mbar], cache_policy"),
        (f"cp.async.bulk.shared::cluster.global.{MBAR}", "cp.async.bulk.global_to_shared_cluster", "[dstMem], [srcMem], size, [mbar]"),
        (
            f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster",
            "cp.async.bulk.global_to_shared_cluster",
            "[dstMem], [srcMem], size, [mbar], ctaMask",
        ),
        (
            f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster.L2::cache_hint",
            "cp.async.bulk.global_to_shared_cluster",
            "[dstMem], [srcMem], size, [mbar], ctaMask, cache_policy",
        ),
        (f"cp.async.bulk.shared::cluster.shared::cta.{MBAR}", "cp.async.bulk.shared_to_cluster", "[dstMem], [srcMem], size, [mbar]"),
        ("cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.shared_to_global", "[dstMem], [srcMem], size"),
        (
            "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.cp_mask",
            "cp.async.bulk.shared_to_global",
            "[dstMem], [srcMem], size, cache_policy, byteMask",
        ),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.add.u64", "cp.reduce.async.bulk.shared_to_cluster", "[dstMem], [srcMem], size, [mbar]"),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.min.s32", "cp.reduce.async.bulk.shared_to_cluster", "[dstMem], [srcMem], size, [mbar]"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16", "cp.reduce.async.bulk.shared_to_global", "[dstMem], [srcMem], size"),
        (
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.xor.b64",
            "cp.reduce.async.bulk.shared_to_global",
            "[dstMem], [srcMem], size, cache_policy",
        ),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16", "cp.reduce.async.bulk.shared_to_global.noftz", "[dstMem], [srcMem], size"),
        ("cp.async.bulk.prefetch.L2.global", "cp.async.bulk.prefetch", "[srcMem], size"),
        ("cp.async.bulk.prefetch.L2.global.L2::cache_hint", "cp.async.bulk.prefetch", "[srcMem], size, cache_policy"),
        # §9.7.9.25.5's examples (a one-coordinate vector has no braces in the catalogue's template).
        (f"cp.async.bulk.tensor.1d.shared::cta.global.{MBAR}.tile", "cp.async.bulk.tensor.global_to_shared_cta", f"[dstMem], [tensorMap], {COORDS}.0, [mbar]"),
        (
            f"cp.async.bulk.tensor.5d.shared::cta.global.im2col.{MBAR}",
            "cp.async.bulk.tensor.global_to_shared_cta",
            f"[dstMem], [tensorMap], {_vec(COORDS, 5)}, [mbar], {_vec('im2colInfo', 3)}",
        ),
        (
            f"cp.async.bulk.tensor.2d.shared::cluster.global.{MBAR}.multicast::cluster",
            "cp.async.bulk.tensor.global_to_shared_cluster",
            f"[dstMem], [tensorMap], {_vec(COORDS, 2)}, [mbar], ctaMask",
        ),
        (
            f"cp.async.bulk.tensor.3d.im2col.shared::cluster.global.{MBAR}.L2::cache_hint",
            "cp.async.bulk.tensor.global_to_shared_cluster",
            f"[dstMem], [tensorMap], {_vec(COORDS, 3)}, [mbar], im2colInfo.0, cache_policy",
        ),
        (
            f"cp.async.bulk.tensor.2d.tile::gather4.shared::cluster.global.{MBAR}",
            "cp.async.bulk.tensor.global_to_shared_cluster",
            f"[dstMem], [tensorMap], {_vec(COORDS, 5)}, [mbar]",
        ),
        (
            f"cp.async.bulk.tensor.3d.im2col::w.shared::cluster.global.{MBAR}",
            "cp.async.bulk.tensor.global_to_shared_cluster",
            f"[dstMem], [tensorMap], {_vec(COORDS, 3)}, [mbar], {_vec('im2colInfo', 2)}",
        ),
        ("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group", "cp.async.bulk.tensor.shared_to_global", f"[tensorMap], {COORDS}.0, [srcMem]"),
        (
            "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group",
            "cp.async.bulk.tensor.shared_to_global",
            f"[tensorMap], {_vec(COORDS, 5)}, [srcMem]",
        ),
        (
            "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group",
            "cp.reduce.async.bulk.tensor.shared_to_global",
            f"[tensorMap], {COORDS}.0, [srcMem]",
        ),
        (
            "cp.reduce.async.bulk.tensor.2d.global.shared::cta.and.bulk_group.L2::cache_hint",
            "cp.reduce.async.bulk.tensor.shared_to_global",
            f"[tensorMap], {_vec(COORDS, 2)}, [srcMem], cache_policy",
        ),
        (
            "cp.reduce.async.bulk.tensor.3d.global.shared::cta.xor.im2col_no_offs.bulk_group",
            "cp.reduce.async.bulk.tensor.shared_to_global",
            f"[tensorMap], {_vec(COORDS, 3)}, [srcMem]",
        ),
        ("cp.async.bulk.prefetch.tensor.1d.L2.global.tile", "cp.async.bulk.prefetch.tensor", f"[tensorMap], {COORDS}.0"),
        ("cp.async.bulk.prefetch.tensor.5d.L2.global.im2col", "cp.async.bulk.prefetch.tensor", f"[tensorMap], {_vec(COORDS, 5)}, {_vec('im2colInfo', 3)}"),
        (
            "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col.L2::cache_hint",
            "cp.async.bulk.prefetch.tensor",
            f"[tensorMap], {_vec(COORDS, 3)}, im2colInfo.0, cache_policy",
        ),
        ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4", "cp.async.bulk.prefetch.tensor", f"[tensorMap], {_vec(COORDS, 5)}"),
        (
            "cp.async.bulk.prefetch.tensor.4d.L2.global.im2col::w::128",
            "cp.async.bulk.prefetch.tensor",
            f"[tensorMap], {_vec(COORDS, 4)}, {_vec('im2colInfo', 2)}",
        ),
        ("cp.async.bulk.commit_group", "cp.async.bulk.commit_group", ""),
        ("cp.async.bulk.wait_group.read", "cp.async.bulk.wait_group", "N"),
        # §9.7.9.26.
        ("tensormap.replace.tile.global_address.shared::cta.b1024.b64", "tensormap.replace.tile.field1", "[tmap], new_val"),
        ("tensormap.replace.tile.rank.b1024.b32", "tensormap.replace.tile.field1", "[tmap], new_val"),
        ("tensormap.replace.tile.box_dim.global.b1024.b32", "tensormap.replace.tile.field2", "[tmap], ord, new_val"),
        ("tensormap.replace.tile.swizzle_mode.b1024.b32", "tensormap.replace.tile.field3", "[tmap], new_val"),
    ],
)
def test_legal_form(text, key, template):
    form = parse(text)
    assert form.family.key == key
    assert form.template == template
    if template:
        head = text.split()[0]
        assert parse(f"{head} {template}").family.key == key  # the form's own template parses back to it


def _names(form: Form) -> list[tuple[str, str]]:
    return [(o.name, o.type) for o in form.operands]


def _family_form(key: str, tokens: list[str]) -> Form:
    """The form of ``key``'s family that ``tokens`` spell (a family that only its operands tell apart)."""
    form = cat._match(CATALOGUE.family(key), tokens)
    assert isinstance(form, Form), form
    return form


def test_operand_types():
    assert _names(parse("cp.async.ca.shared.global.L2::cache_hint")) == [("dstMem", "u64"), ("srcMem", "u64"), ("cp_size", "u32"), ("cache_policy", "b64")]
    assert _names(parse("cp.async.ca.shared.global [d], [s], 4, n"))[3] == ("src_size", "u32")
    ignore = _family_form("cp.async.ignore_src", ["async", "cg", "shared", "global", "L2::cache_hint"])
    assert _names(ignore) == [("dstMem", "u64"), ("srcMem", "u64"), ("cp_size", "u32"), ("ignore_src", "pred"), ("cache_policy", "b64")]
    assert not ignore.destinations and not parse("cp.async.bulk.global.shared::cta.bulk_group").destinations
    assert _names(parse(f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster")) == [
        ("dstMem", "u64"),
        ("srcMem", "u64"),
        ("size", "u32"),
        ("mbar", "u64"),
        ("ctaMask", "b16"),
    ]
    assert _names(parse("cp.async.bulk.global.shared::cta.bulk_group.cp_mask"))[-1] == ("byteMask", "b16")
    tensor = parse(f"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.{MBAR}")
    assert _names(tensor) == [
        ("dstMem", "u64"),
        ("tensorMap", "u64"),
        *((f"tensorCoords.{i}", "s32") for i in range(4)),
        ("mbar", "u64"),
        ("im2colInfo.0", "u16"),
        ("im2colInfo.1", "u16"),
    ]
    assert (ac.coordinates(tensor), ac.im2col_offsets(tensor)) == (4, 2)
    assert _names(parse("cp.async.wait_group")) == [("N", "u32")]
    assert _names(parse("tensormap.replace.tile.global_stride.b1024.b64")) == [("tmap", "u64"), ("ord", "u32"), ("new_val", "b64")]
    assert _names(parse("tensormap.replace.tile.fill_mode.global.b1024.b32")) == [("tmap", "u64"), ("new_val", "b32")]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("cp.async.ca.shared.global [%r1], [%rd2], 8", "cp.async"),
        ("cp.async.ca.shared.global [%r1], [%rd2], 8, %r3", "cp.async.src_size"),  # src-size and ignore-src: the first
        ("cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd2], 16, %rd9", "cp.async"),
        ("cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd2], 16, %p, %rd9", "cp.async.src_size"),
        (f"cp.async.bulk.shared::cluster.global.{MBAR} [d], [s], n, [m];", "cp.async.bulk.global_to_shared_cluster"),
        ("cp.async.wait_group 1", "cp.async.wait_group"),
        ("cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group"),
        ("tensormap.replace.tile.box_dim.global.b1024.b32 [t], 0, v", "tensormap.replace.tile.field2"),
    ],
)
def test_operand_template_picks_the_family(text, key):
    assert parse(text).family.key == key


@pytest.mark.parametrize(
    "text",
    [
        "cp.async.ca.shared.global [d], [s], 4, n, m",  # no cache-policy without .L2::cache_hint
        "cp.async.ca.shared.global d, [s], 4",  # the destination is an address
        f"cp.async.bulk.shared::cluster.global.{MBAR} [d], [s], n, m",  # [mbar]
        f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster [d], [s], n, [m]",  # ctaMask
        "cp.async.bulk.global.shared::cta.bulk_group [d], [s], n, [m]",  # no mbarrier with .bulk_group
        "cp.async.commit_group n",
        "tensormap.replace.tile.rank.b1024.b32 [t], 0, v",  # ord only with .field2
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
        ("cp.async.ca.global.shared", "9.7.9.25.3.1", "written .shared{::cta}.global"),
        ("cp.async.ca.shared::cluster.global", "9.7.9.25.3.1", "qualifier .shared::cluster is not allowed"),
        ("cp.async.shared.global", "9.7.9.25.3.1", "missing cop"),
        ("cp.async.ca.shared.global.L2::evict_last", "9.7.9.25.3.1", "not allowed"),
        ("cp.async.wait_all.read", "9.7.9.25.3.3", "not allowed"),
        (f"cp.async.bulk.global.shared::cluster.{MBAR}", "9.7.9.25.4.1", "is not a direction of this line"),
        (f"cp.async.bulk.shared::cta.shared::cluster.{MBAR}", "9.7.9.25.4.1", "written .shared::cluster.shared::cta"),
        (f"cp.async.bulk.global.shared::cta.{MBAR}", "9.7.9.25.4.1", "is not the completion mechanism of .global.shared::cta"),
        ("cp.async.bulk.shared::cluster.global.bulk_group", "9.7.9.25.4.1", "is not the completion mechanism"),
        ("cp.async.bulk.shared::cta.global", "9.7.9.25.4.1", "missing completion_mechanism"),
        (f"cp.async.bulk.shared::cta.global.{MBAR}.multicast::cluster", "9.7.9.25.4.1", "has {.multicast}"),
        (f"cp.async.bulk.shared::cluster.shared::cta.{MBAR}.L2::cache_hint", "9.7.9.25.4.1", "at least one of the .src or .dst"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16", "9.7.9.25.4.2", "require .noftz qualifier"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.bf16", "9.7.9.25.4.2", "require .noftz qualifier"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.noftz.f16", "9.7.9.25.4.2", ".noftz is not allowed with .min"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32", "9.7.9.25.4.2", "does not take .f32"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s64", "9.7.9.25.4.2", "gives .add .u32, .s32, .u64, .f32, .f64"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.s32", "9.7.9.25.4.2", "gives .xor .b32, .b64"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.u64", "9.7.9.25.4.2", "gives .inc .u32"),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.min.u64", "9.7.9.25.4.2", "gives .min .u32, .s32"),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.and.b64", "9.7.9.25.4.2", "gives .and .b32"),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.L2::cache_hint.add.u32", "9.7.9.25.4.2", "at least one of the .src or .dst"),
        (f"cp.reduce.async.bulk.shared::cluster.shared::cta.{MBAR}.add.f32", "9.7.9.25.4.2", "not allowed"),
        ("cp.async.bulk.prefetch.L2.shared::cta", "9.7.9.25.4.3", "not allowed"),
        (f"cp.async.bulk.tensor.2d.shared::cta.global.im2col.{MBAR}", "9.7.9.25.5.2", "at least 3-dimensional"),
        (f"cp.async.bulk.tensor.2d.shared::cluster.global.im2col::w::128.{MBAR}", "9.7.9.25.5.2", "at least 3-dimensional"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.im2col_no_offs.bulk_group", "9.7.9.25.5.2", "at least 3-dimensional"),
        (f"cp.async.bulk.tensor.3d.shared::cluster.global.tile::gather4.{MBAR}", "9.7.9.25.5.2", "it takes .2d"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.tile::scatter4.bulk_group", "9.7.9.25.5.2", "it takes .2d"),
        (f"cp.async.bulk.tensor.1d.shared::cta.global.{MBAR}.multicast::cluster", "9.7.9.25.5.2", "has {.multicast}"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group.cta_group::2", "9.7.9.25.5.2", "mbarrier based completion mechanism"),
        (f"cp.async.bulk.tensor.1d.global.shared::cta.{MBAR}", "9.7.9.25.5.2", "is not the completion mechanism"),
        (f"cp.async.bulk.tensor.1d.shared::cta.global.tile::scatter4.{MBAR}", "9.7.9.25.5.2", "not allowed"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.im2col.bulk_group", "9.7.9.25.5.2", "not allowed"),
        (
            "cp.async.bulk.tensor.1d.shared::cluster.global.tile.cta_group::2",
            "9.7.9.25.5.2",
            "missing completion_mechanism",
        ),  # the manual's example lacks .completion_mechanism too
        ("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.f32.bulk_group", "9.7.9.25.5.3", "specified in Tensor-map"),
        ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.im2col_no_offs.bulk_group", "9.7.9.25.5.3", "at least 3-dimensional"),
        ("cp.async.bulk.prefetch.tensor.1d.L2.global.im2col", "9.7.9.25.5.4", "at least 3-dimensional"),
        ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::scatter4", "9.7.9.25.5.4", "not allowed"),
        ("tensormap.replace.tile.rank.global.b1024.b64", "9.7.9.26", ".type must be .b32"),
        ("tensormap.replace.tile.global_address.b1024.b32", "9.7.9.26", ".type must be .b64"),
        ("tensormap.replace.tile.global_stride.b1024.b32", "9.7.9.26", ".type must be .b64"),
        ("tensormap.replace.tile.elemtype.b1024.b64", "9.7.9.26", ".type must be .b32"),
        ("tensormap.replace.tile.rank.shared::cluster.b1024.b32", "9.7.9.26", "not allowed"),
        ("tensormap.replace.tile.rank.b32", "9.7.9.26", "missing b1024"),
        ("tensormap.replace.im2col.rank.b1024.b32", "9.7.9.26", "not allowed"),
    ],
)
def test_refused(text, section, words):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert info.value.section == section
    assert words in str(info.value)


def test_cp_async_mbarrier_arrive_keeps_its_chapter():
    """cp.async.mbarrier.arrive (§9.7.13.15.15) shares the opcode: this chapter explains none of it."""
    assert parse("cp.async.mbarrier.arrive.noinc.shared::cta.b64").family.key == "cp.async.mbarrier.arrive"
    with pytest.raises(IllegalForm) as info:
        parse("cp.async.mbarrier.arrive.shared::cluster.b64")
    assert info.value.section == "9.7.13.15.15"
    assert ac.explain_refusal(CATALOGUE, "cp.async.mbarrier.arrive.shared::cluster.b64") is None


# ---------------------------------------------------------------------------------------------
# Targets: the PTX ISA notes and Target ISA notes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ptx", "arch", "allowed"),
    [
        ("cp.async.ca.shared.global", (7, 0), "sm_80", True),  # "Introduced in PTX ISA version 7.0", "Requires sm_80"
        ("cp.async.ca.shared.global", (8, 7), "sm_75", False),
        ("cp.async.ca.shared.global.L2::128B", (7, 3), "sm_80", False),  # ".level::prefetch_size ... PTX ISA 7.4"
        ("cp.async.ca.shared.global.L2::cache_hint", (7, 4), "sm_80", True),
        ("cp.async.ca.shared::cta.global", (7, 7), "sm_86", False),  # "sub-qualifier ::cta ... PTX ISA 7.8"
        ("cp.async.wait_all", (7, 0), "sm_80", True),
        (f"cp.async.bulk.shared::cluster.global.{MBAR}", (8, 0), "sm_90", True),
        (f"cp.async.bulk.shared::cluster.global.{MBAR}", (8, 7), "sm_89", False),
        (f"cp.async.bulk.shared::cluster.global.{MBAR}.multicast::cluster", (8, 0), "sm_90", True),  # sm_90a is only advised
        (f"cp.async.bulk.shared::cta.global.{MBAR}", (8, 5), "sm_90", False),  # ".shared::cta as destination ... PTX ISA 8.6"
        (f"cp.async.bulk.shared::cta.global.{MBAR}", (8, 6), "sm_90", True),
        ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask", (8, 7), "sm_90a", False),  # ".cp_mask ... requires sm_100"
        ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask", (8, 6), "sm_100", True),
        ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask", (8, 7), "sm_120a", True),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16", (8, 0), "sm_90", True),
        ("cp.async.bulk.prefetch.L2.global", (7, 8), "sm_90", False),
        ("cp.async.bulk.wait_group.read", (8, 0), "sm_90", True),
        (f"cp.async.bulk.tensor.1d.shared::cluster.global.{MBAR}", (8, 0), "sm_90", True),
        (f"cp.async.bulk.tensor.1d.shared::cta.global.{MBAR}", (8, 5), "sm_90", False),
        (f"cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.{MBAR}", (8, 6), "sm_100", True),  # ".shared::cta: sm_100 or higher"
        (f"cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.{MBAR}", (8, 7), "sm_90a", False),
        (f"cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.{MBAR}", (8, 6), "sm_100", False),  # ".shared::cluster: sm_100a"
        (f"cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.{MBAR}", (8, 6), "sm_100a", True),
        (f"cp.async.bulk.tensor.3d.shared::cta.global.im2col::w::128.{MBAR}", (8, 6), "sm_101a", True),
        (f"cp.async.bulk.tensor.3d.shared::cta.global.im2col::w::128.{MBAR}", (8, 7), "sm_120a", False),
        (f"cp.async.bulk.tensor.1d.shared::cluster.global.{MBAR}.cta_group::1", (8, 6), "sm_100a", True),
        (f"cp.async.bulk.tensor.1d.shared::cluster.global.{MBAR}.cta_group::1", (8, 7), "sm_100", False),
        ("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group", (8, 6), "sm_101a", True),
        ("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group", (8, 7), "sm_90a", False),
        ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4", (8, 6), "sm_100a", True),
        ("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col::w", (8, 7), "sm_100", False),
        ("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col", (8, 0), "sm_90", True),
        ("tensormap.replace.tile.rank.b1024.b32", (8, 3), "sm_90a", True),
        ("tensormap.replace.tile.rank.b1024.b32", (8, 2), "sm_90a", False),
        ("tensormap.replace.tile.rank.b1024.b32", (8, 7), "sm_90", False),
        ("tensormap.replace.tile.rank.b1024.b32", (8, 7), "sm_120a", True),
        ("tensormap.replace.tile.swizzle_atomicity.b1024.b32", (8, 7), "sm_90a", False),
        ("tensormap.replace.tile.swizzle_atomicity.b1024.b32", (8, 6), "sm_100a", True),
    ],
)
def test_target(text, ptx, arch, allowed):
    assert parse(text).admits(ptx, arch) is allowed


def test_ignore_src_needs_ptx_7_5():
    """§9.7.9.25.3.1: "Support for ignore-src operand introduced in PTX ISA version 7.5"."""
    form = _family_form("cp.async.ignore_src", ["async", "ca", "shared", "global"])
    assert not form.admits((7, 4), "sm_80") and form.admits((7, 5), "sm_80")


# ---------------------------------------------------------------------------------------------
# The generator writes these forms as PTX
# ---------------------------------------------------------------------------------------------


def _line(text: str) -> str:
    form = parse(text)
    written = f"{form.text} {form.template}" if form.family.operand_syntax else form.text
    return pa.instruction_line(pa.Case(form.family.key, "legal", written, form.operands))


def test_ptxas_writer_writes_tensor_operands_and_immediates():
    assert "cp.async.ca.shared.global [%dstMem], [%srcMem], 16;" in _line("cp.async.ca.shared.global")
    assert "cp.async.cg.shared.global [%dstMem], [%srcMem], 16, %src_size;" in _line("cp.async.cg.shared.global [d], [s], 16, n")
    assert ".reg .u32 %cp_size" not in _line("cp.async.cg.shared.global [d], [s], 16, n")
    assert "cp.async.wait_group 0;" in _line("cp.async.wait_group")
    assert "cp.async.bulk.wait_group.read 0;" in _line("cp.async.bulk.wait_group.read")
    tensor = _line(f"cp.async.bulk.tensor.3d.shared::cluster.global.im2col.{MBAR}.multicast::cluster")
    assert "[%dstMem], [%tensorMap, {%tensorCoords_0, %tensorCoords_1, %tensorCoords_2}], [%mbar], {%im2colInfo_0}, %ctaMask;" in tensor
    assert "[%tensorMap, {%tensorCoords_0}], [%srcMem];" in _line("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group")
    prefetch = _line("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col::w.L2::cache_hint")
    assert "[%tensorMap, {%tensorCoords_0, %tensorCoords_1, %tensorCoords_2}], {%im2colInfo_0, %im2colInfo_1}, %cache_policy;" in prefetch
    assert "tensormap.replace.tile.box_dim.b1024.b32 [%tmap], 0, %new_val;" in _line("tensormap.replace.tile.box_dim.b1024.b32")
    assert "tensormap.replace.tile.elemtype.b1024.b32 [%tmap], 0;" in _line("tensormap.replace.tile.elemtype.b1024.b32")


def test_generated_cases_cover_the_chapter():
    cases = pa.generate(60, seed=0, families=ac.FAMILIES)
    legal = {c.family for c in cases if c.category == "legal"}
    # cp.async.ignore_src has the operands' shape of cp.async.src_size: the manual's operand names
    # in the generated text tell them apart.
    assert legal == set(KEYS)
    for case in cases:
        if case.category == "legal":
            assert parse(case.text).family.key == case.family


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------

#: sm_80 for cp.async, sm_90 and sm_90a for the bulk copies and tensormap.replace, sm_100a for the
#: PTX ISA 8.6 qualifiers, sm_120a for tensormap.replace's last target.
TARGETS = ("sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120a")


def _unexplained(outcomes):
    return [r for r in (pa.record(o) for o in outcomes if not o.agree) if pa.explain(r) is None]


@pytest.mark.parametrize("limit", [pytest.param(40, id="sample"), pytest.param(3000, id="full", marks=pytest.mark.heavy)])
@pytest.mark.parametrize("part", ["copies", "tensor"])
def test_generated_forms_agree_with_ptxas(ptxas, part, limit):
    """The legal combinations of every family (up to ``limit``: 40 by default, every one as a
    heavy case) at every target (the rule-refused ones and the illegal variants at sm_100a);
    every disagreement is a documented :data:`~ptxspec.conformance.ptxas_agreement.KNOWN`."""
    families = [f for f in ac.FAMILIES if ("tensor" in f.key) == (part == "tensor")]
    outcomes, skipped = pa.compare(pa.generate(limit, seed=0, families=families), TARGETS, ptxas)
    assert not skipped
    assert len(outcomes) > min(2000, 15 * limit)
    assert sum(o.case.category == "legal" and o.ours for o in outcomes) > min(200, 2 * limit)
    assert _unexplained(outcomes) == []


def test_template_families_agree_with_ptxas(ptxas):
    """cp.async.src_size and cp.async.ignore_src, which the generator reaches only in part (their
    operands have one shape): every combination of their qualifiers, written with their own
    operands, at PTX ISA 7.4, 7.5 and 8.7 on sm_80 and sm_90."""
    rng = random.Random(0)
    for key in ("cp.async.src_size", "cp.async.ignore_src"):
        family = CATALOGUE.family(key)
        forms, lines = [], []
        for combo in pa._combinations(family, 1000, rng):
            form = cat._match(family, list(combo))
            if isinstance(form, Form):
                forms.append(form)
                lines.append(pa.instruction_line(pa.Case(key, "legal", form.text, form.operands)))
        assert len(forms) > 50
        for request in (pa.Request("sm_80", (7, 4)), pa.Request("sm_80", (7, 5)), pa.Request("sm_90", (8, 7))):
            verdicts = pa.ptxas_verdicts(ptxas, request, lines)
            for form, (theirs, message) in zip(forms, verdicts):
                ours = not any(rule.illegal(form) for rule in family.rules) and form.admits(request.version, request.arch)
                record = {"text": form.text, "catalogue": "legal" if ours else "illegal", "category": "legal", "request": str(request)}
                assert ours == theirs or pa.explain(record), f"{key} {form.text} @ {request}: catalogue {ours}; ptxas {theirs} ({message})"


#: (text, target, PTX ISA versions) where a PTX ISA note puts a version gate between the versions
#: that introduced the targets (which the generated comparison tries).
GATES = [
    ("cp.async.ca.shared.global.L2::cache_hint", "sm_80", [(7, 3), (7, 4)]),
    ("cp.async.cg.shared.global.L2::256B", "sm_80", [(7, 3), (7, 4)]),
    (f"cp.async.bulk.shared::cta.global.{MBAR}", "sm_90", [(8, 5), (8, 6)]),
    (f"cp.async.bulk.tensor.1d.shared::cta.global.{MBAR}", "sm_90", [(8, 5), (8, 6)]),
    (f"cp.async.bulk.shared::cluster.global.{MBAR}", "sm_90", [(8, 0)]),
    (f"cp.async.bulk.tensor.5d.shared::cluster.global.im2col.{MBAR}.multicast::cluster", "sm_90", [(8, 0)]),
    ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask", "sm_100a", [(8, 6)]),
    ("tensormap.replace.tile.rank.global.b1024.b32", "sm_90a", [(8, 2), (8, 3)]),
    ("tensormap.replace.tile.swizzle_atomicity.b1024.b32", "sm_100a", [(8, 6)]),
    ("tensormap.replace.tile.swizzle_atomicity.b1024.b32", "sm_120a", [(8, 7)]),
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


def test_operand_names_tell_forms_of_one_shape_apart():
    """cp.async's src-size and ignore-src forms take four scalar operands each: the manual's operand
    name picks the form; other names take the first (the src-size form)."""
    assert parse("cp.async.ca.shared.global [dstMem], [srcMem], cp_size, ignore_src").family.key == "cp.async.ignore_src"
    assert parse("cp.async.ca.shared.global [dstMem], [srcMem], cp_size, src_size").family.key == "cp.async.src_size"
    assert parse("cp.async.ca.shared.global [d], [s], 4, p").family.key == "cp.async.src_size"
