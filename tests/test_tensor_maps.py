"""Tensor maps in the litmus dialect: cp.async.bulk.tensor / cp.reduce.async.bulk.tensor read their
tensor map in the tensormap proxy (§9.7.9.25.5.2), tensormap.replace and tensormap.cp_fenceproxy
write it in the generic proxy (§9.7.9.26, §9.7.13.16), and fence.proxy.tensormap::generic orders the
two (§9.7.13.4). The verdicts are in tests/litmus/manual (tensor-*); here the dialect, its errors,
the events, and ptxas's word that every accepted form is PTX."""

from __future__ import annotations

import re
import subprocess

import pytest

from ptxspec.memory_model import base, litmus, lowering
from ptxspec.spec.errors import PtxSpecError

FORMS = [
    "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes s, [tmap, {0}], bar",
    "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes s, [tmap, {r0, 3}], bar",
    "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], s",
    "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [tmap, {0, 1, 2}], s",
    "cp.reduce.async.bulk.tensor.1d.global.shared::cta.xor.tile.bulk_group [tmap, {0}], s",
    "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes s, [tmap, {0, 0, 0}], bar, {1}",
    "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w::128.mbarrier::complete_tx::bytes s, [tmap, {0, 0, 0}], bar, {1, 2}",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.cta_group::2 s, [tmap, {0, 1, 2, 3, 4}], bar",
    "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [tmap, {0, 1, 2, 3, 4}], s",
    "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col_no_offs.bulk_group [tmap, {0, 0, 0}], s",
    "tensormap.replace.tile.global_address.global.b1024.b64 tmap, y",
    "tensormap.replace.tile.global_address.shared::cta.b1024.b64 smap, y",
    "tensormap.replace.tile.global_address.b1024.b64 tmap, y",
    "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned tmap, smap, 128",
    "fence.proxy.tensormap::generic.release.cluster",
    "fence.proxy.tensormap::generic.acquire.gpu tmap, 128",
]


def _test(line: str, init: str | None = None, condition: str = "s == 0") -> litmus.LitmusTest:
    if init is None:
        init = "".join(f"{m}=&x; " for m in ("tmap", "smap") if m in line) + "x=1; y=2; s=0; bar=0;"
    return litmus.parse(f"PTX t\n{{\n{init}\n}}\n P0@cta 0,gpu 0 ;\n {line} ;\nexists ({condition})\n")


@pytest.mark.parametrize("line", FORMS)
def test_tensor_forms_print_as_they_parse(line):
    (instruction,) = _test(line).code[0]
    assert litmus.format_instruction(instruction) == line
    assert litmus.parse(litmus.format_test(_test(line))) == _test(line)


@pytest.mark.parametrize("line", FORMS)
def test_every_accepted_form_is_ptx(ptxas, tmp_path, line):
    """ptxas -arch=sm_100a (the gather4, scatter4, im2col::w and .cta_group forms are sm_100a's) assembles each form, its locations spelled as address registers."""
    ptx = re.sub(r"\b(tmap|smap|s|bar|y)\b", r"%\1", line)
    ptx = re.sub(r"(?<![\[\w])(%(?:tmap|smap|s|bar))\b(?!,\s*\{)", r"[\1]", ptx)
    ptx = ptx.replace("[%tmap, {", "[%tmap, {").replace("r0", "%c")
    source = tmp_path / "k.ptx"
    source.write_text(
        f".version 8.7\n.target sm_100a\n.address_size 64\n.entry k() {{\n.reg .b64 %tmap, %smap, %s, %bar, %y;\n.reg .b32 %c;\n{ptx};\nret;\n}}\n"
    )
    done = subprocess.run([ptxas, "-arch=sm_100a", str(source), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
    assert done.returncode == 0, (ptx, done.stderr)


@pytest.mark.parametrize(
    "line, message",
    [
        ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [tmap, {0, 1}], [bar]", "takes 1 tensor coordinate"),
        ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [tmap], [bar]", r"\[tensorMap, \{coordinates\}\]"),
        ("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [s], [tmap, {0, 0, 0}], [bar]", "takes 4 operand"),
        ("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [s], [tmap, {0, 0, 0, 0}], [bar], {1}", "vector of 2 value"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [s], [tmap, {0, 0}], [bar], {1}", "at least 3-dimensional"),
        ("cp.async.bulk.tensor.3d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [s], [tmap, {0, 0, 0}], [bar]", "four rows of a 2-D"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [s], [tmap, {0, 0}], [bar]", "takes 5 tensor coordinate"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group.cta_group::1 [tmap, {0}], [s]", "unknown qualifier .cta_group::1"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.tile.mbarrier::complete_tx::bytes [tmap, {0}], [s]", "completes with .bulk_group"),
        ("cp.async.bulk.tensor.1d.global.shared::cta.tile::gather4.bulk_group [tmap, {0}], [s]", "no load mode .tile::gather4"),
        ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [s], [tmap, {0}], [bar]", "takes 4 operand"),
        (
            "cp.async.bulk.tensor.1d.shared::cta.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [s], [tmap, {0}], [bar], 1",
            "only from .global to .shared::cluster",
        ),
        ("cp.async.bulk.tensor.6d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [tmap, {0}], [bar]", "needs .dim.dst.src"),
        (
            "cp.reduce.async.bulk.tensor.1d.shared::cluster.global.add.tile.mbarrier::complete_tx::bytes [s], [tmap, {0}], [bar]",
            "the copies are .shared::cta to .global",
        ),
        ("cp.reduce.async.bulk.tensor.1d.global.shared::cta.mul.tile.bulk_group [tmap, {0}], [s]", "takes .redOp"),
        ("tensormap.replace.tile.rank.global.b1024.b32 [tmap], 2", "one field, .global_address"),
        ("tensormap.replace.tile.global_address.global.b1024.b32 [tmap], y", "global_address"),
        ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [tmap], [smap], 64", "size is 128"),
        ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.acquire.gpu.sync.aligned [tmap], [smap], 128", "tensormap.cp_fenceproxy is"),
        ("fence.proxy.tensormap::generic.acquire.gpu", "takes 2 operand"),
        ("fence.proxy.tensormap::generic.release.gpu [tmap], 128", "release takes no operands"),
        ("fence.proxy.tensormap::generic.acq_rel.gpu", "fence.proxy.tensormap::generic is"),
        ("membar.proxy.tensormap::generic", "membar.proxy has no"),
        ("ld.weak r0, tmap ; cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], [s]", "is a tensor map: only"),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{s, tmap}], [x], 16, [{b0, b1}], 3 ; "
            "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], [s]",
            "is a tensor map: only",
        ),
    ],
)
def test_other_tensor_forms_are_refused_with_the_reason(line, message):
    if ";" in line:  # two rows
        first, second = line.split(" ; ")
        text = f"PTX t\n{{\ntmap=&x; x=1; s=0;\n}}\n P0@cta 0,gpu 0 ;\n {first} ;\n {second} ;\nexists (s == 0)\n"
        with pytest.raises(PtxSpecError, match=message):
            litmus.parse(text)
        return
    with pytest.raises(PtxSpecError, match=message):
        _test(line)


@pytest.mark.parametrize(
    "init, condition, message",
    [
        ("x=1; s=0;", "s == 0", "tensor map 'tmap' needs an initial value tmap=&tensor"),
        ("tmap=&x; p=&x; x=1; s=0;", "s == 0", "pointer values are for tensor maps only"),
        ("tmap=&smap; smap=&x; x=1; s=0;", "s == 0", "describes tensor map 'smap'"),
        ("tmap=&x; x=1; s=0;", "tmap == 0", "is a tensor map: its value is opaque"),
    ],
)
def test_tensor_maps_start_as_pointers_and_stay_opaque(init, condition, message):
    line = "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], [s]"
    if "smap" in init:
        line += " ;\n tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [tmap], [smap], 128"
    with pytest.raises(PtxSpecError, match=message) as caught:
        lowering.lower(_test(line, init, condition))
    assert caught.value.where is not None and caught.value.where.line is not None


def test_the_tensor_copy_reads_its_map_in_the_tensormap_proxy_then_the_tensor_it_points_to():
    test = _test(
        "tensormap.replace.tile.global_address.global.b1024.b64 [tmap], y ;\n cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], [s]"
    )
    program = lowering.lower(test)
    assert {e.instruction for e in program.initial if e.address.name == "tmap"} == {"init tmap=&x"}
    (initial,) = [e for e in program.initial if e.address.name == "tmap"]
    tensors = {}
    for trace in program.threads[0].traces:
        replace, map_read, read, write, fence = trace.events
        assert (replace.proxy, replace.order, replace.writes) == ("generic", "weak", True)
        assert (map_read.proxy, map_read.reads, map_read.address.name, map_read.async_group) == ("tensormap", True, "tmap", ("bulk", 0))
        assert map_read.agent == read.agent == write.agent == fence.agent is not None
        assert (read.address.name, read.proxy, write.proxy) == ("s", "async", "async")
        assert fence.proxy_fence == "async" and base.static_pair("async_issue", replace, map_read, program)
        tensors[map_read.read_value] = write.address.name
    # The map may be read before (the initial map: x) or after (the replaced one: y) the replace.
    assert tensors[initial.write_value] == "x" and tensors[replace.write_value] == "y" and len(tensors) == 2


def test_the_acquire_proxy_fence_orders_only_its_tensor_maps_range():
    test = _test(
        "fence.proxy.tensormap::generic.acquire.gpu [tmap], 128 ;\n"
        " cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [smap, {0}], [s] ;\n"
        " cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {0}], [s]"
    )
    program = lowering.lower(test)
    trace = program.threads[0].traces[0]
    fence = trace.events[0]
    map_reads = [e for e in trace.events if e.proxy == "tensormap"]
    assert [base.static_pair("proxy_fence_range", fence, e, program) for e in map_reads] == [False, True]
    assert "PF_TO_TENSORMAP" in base.event_sets(fence) and "ACQUIRE" in base.event_sets(fence) and "F" not in base.event_sets(fence)
