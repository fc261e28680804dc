"""cp.async.bulk in the litmus dialect: its operations are an asynchronous agent of the issuing
thread (§8.9.1.1), performed in the async proxy (§9.7.9.25.2), completing with a release
complete-tx on the mbarrier (§9.7.9.25.4.1). The verdicts are in tests/litmus/manual (TMA-*,
bulk-copy-*); here the dialect and the events."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxspec.memory_model import base, litmus, lowering
from ptxspec.semantics import atomics
from ptxspec.semantics import mbarrier as mb
from ptxspec.spec.errors import PtxSpecError

COPY = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes s, g, 16, bar"


def _test(line: str) -> litmus.LitmusTest:
    line = line.replace(", pol", ", r9")  # the cache-policy operand, a register
    return litmus.parse(f"PTX t\n{{\ng=7; s=0; bar=0;\n}}\n P0@cta 0,gpu 0 ;\n mbarrier.init.shared::cta.b64 [bar], 1 ;\n {line} ;\nexists (s == 0)\n")


def test_bulk_copy_prints_as_it_parses():
    (_, copy) = _test(COPY).code[0]
    assert isinstance(copy, litmus.BulkCopy) and litmus.format_instruction(copy) == COPY


@pytest.mark.parametrize(
    "line, message",
    [
        ("cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [g], [s], 16, [bar]", "completes with .bulk_group"),
        ("cp.async.bulk.shared::cluster.global.bulk_group [s], [g], 16, [bar]", "completes with .mbarrier::complete_tx::bytes"),
        ("cp.async.bulk.global.global.bulk_group [s], [g], 16", "from .global to .global"),
        ("cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4", "size 4 is not a positive multiple of 16"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [g], [s], 24", "size 24 is not a positive multiple of 16"),
        ("cp.async.mbarrier.arrive.global.b64 [bar]", "cp.async.mbarrier.arrive is"),
        ("cp.async.ca.shared.global [s], [g], 4, 8", "src-size 8 is not in 0 .. cp-size"),
        ("cp.async.ca.shared.global [s], [g], 16, 4, 2", "operand"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [g], [s], 16", "require it"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32 [g], [s], 16", "require it"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f32 [g], [s], 16", "takes .redOp.type"),
        ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [g], [bar]", r"takes \[tensorMap, \{coordinates\}\]"),
        ("cp.async.cg.shared.global [s], [g], 4", "cp-size is 4, 8 or 16"),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 16, [bar]", "takes 5 operand"),
    ],
)
def test_other_copies_are_refused_with_the_reason(line, message):
    with pytest.raises(PtxSpecError, match=message):
        _test(line)


def test_the_copy_is_an_agent_after_its_thread_and_outside_its_program_order():
    program = lowering.lower(_test(COPY))
    traces = program.threads[0].traces  # one per value the copy's complete-tx may find in bar
    (trace,) = [t for t in traces if t.events[-1].read_value == mb.init(1).encode()]
    init, read, write, fence, complete = trace.events
    assert init.agent is None and {e.agent for e in (read, write, fence, complete)} == {"1:0"}
    assert (read.proxy, read.order, read.read_value) == ("async", "weak", 7) and (write.proxy, write.write_value) == ("async", 7)
    assert fence.proxy_fence == "async"
    assert (complete.order, complete.scope, complete.atomic) == ("release", "cluster", True)
    assert complete.write_value == mb.complete_tx(mb.init(1), 16).encode()
    pair = lambda name, a, b: base.static_pair(name, a, b, program)  # noqa: E731
    assert pair("async_issue", init, read) and pair("async_issue", init, complete) and not pair("po", init, read)
    assert pair("po", read, write) and pair("po", fence, complete) and not pair("same_thread", init, read)
    assert base.equivalence_key("same_thread", init, program) != base.equivalence_key("same_thread", read, program)


# ---- tcgen05 (§9.7.16.6): the verdicts are tests/litmus/manual/tcgen05-*; here the dialect ----------

TCGEN05_LINES = [
    "tcgen05.st.sync.aligned.32x32b.x1.b32 t, r0",
    "tcgen05.ld.sync.aligned.32x32b.x1.b32 r1, t",
    "tcgen05.cp.cta_group::1.128x256b t, s",
    "tcgen05.mma.cta_group::2.kind::f16 d, a, b, 1",
    "tcgen05.shift.cta_group::1.down t, u",
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 bar",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
    "tcgen05.wait::ld.sync.aligned",
    "tcgen05.wait::st.sync.aligned",
]


@pytest.mark.parametrize("text", TCGEN05_LINES)
def test_tcgen05_instructions_print_as_they_parse(text):
    test = litmus.parse(f"PTX t\n{{\nt=0;\n}}\n P0@cta 0,gpu 0 ;\n {text} ;\nexists (t == 0)\n")
    (instruction,) = test.code[0]
    assert isinstance(instruction, litmus.Tcgen05Op) and litmus.format_instruction(instruction) == text


@pytest.mark.parametrize(
    "line, message",
    [
        ("tcgen05.mma.kind::f16 [d], [a], [b], 1", "needs .cta_group::1 or ::2"),
        ("tcgen05.mma.cta_group::1 [d], [a], [b], 1", "needs .kind::"),
        ("tcgen05.shift.cta_group::1.down [t]", "tcgen05.shift takes 2 operand"),
        ("tcgen05.shift.cta_group::1 [t], [u]", "tcgen05.shift needs .down"),
        ("tcgen05.alloc.cta_group::1 [t]", "tcgen05 in litmus tests is one of"),
        ("tcgen05.mma.cta_group::1.kind::f16.block_scale [d], [a], [b], 1", "unknown qualifier .block_scale"),
        ("tcgen05.ld.sync.aligned.32x32b.x1.b32 [t], r0", "expected a register operand"),
    ],
)
def test_tcgen05_outside_the_dialect_is_refused_with_the_reason(line, message):
    with pytest.raises(PtxSpecError, match=message):
        _test(line.replace("[t]", "[s]"))


def test_tcgen05_pipelines_are_the_manuals_pairs():
    """§9.7.16.6.2: mma -> mma (same N and accumulator), cp -> mma, shift -> mma, shift -> cp.4x256b,
    mma -> shift (same N), mma/cp/shift -> commit."""
    assert base.tcgen05_pipelined("mma/1/d", "mma/1/d") and not base.tcgen05_pipelined("mma/1/d", "mma/1/e")
    assert base.tcgen05_pipelined("cp/2/128x256b", "mma/2/d") and not base.tcgen05_pipelined("cp/1/128x256b", "mma/2/d")
    assert base.tcgen05_pipelined("mma/1/d", "commit/1") and base.tcgen05_pipelined("cp/1/4x256b", "commit/1")
    assert not any(base.tcgen05_pipelined(a, b) for a in ("ld", "st") for b in ("mma/1/d", "ld", "st", "commit/1"))
    assert not base.tcgen05_pipelined("mma/1/d", "cp/1/4x256b")
    # tcgen05.shift: shift -> mma, shift -> cp.4x256b, mma -> shift, shift -> commit (same N)
    assert base.tcgen05_pipelined("shift/1", "mma/1/d") and base.tcgen05_pipelined("mma/2/d", "shift/2")
    assert base.tcgen05_pipelined("shift/1", "cp/1/4x256b") and not base.tcgen05_pipelined("shift/1", "cp/1/128x256b")
    assert base.tcgen05_pipelined("shift/2", "commit/2") and not base.tcgen05_pipelined("shift/1", "commit/2")
    assert not base.tcgen05_pipelined("cp/1/4x256b", "shift/1") and not base.tcgen05_pipelined("shift/1", "shift/1")


@pytest.mark.parametrize(
    "text",
    ["cp.async.ca.shared.global s, g, 4", "cp.async.cg.shared::cta.global s, g, 16", "cp.async.commit_group", "cp.async.wait_group 1", "cp.async.wait_all"],
)
def test_cp_async_prints_as_it_parses(text):
    (_, instruction) = _test(text).code[0]
    assert isinstance(instruction, (litmus.AsyncCopy, litmus.AsyncGroup)) and litmus.format_instruction(instruction) == text


def test_wait_group_completes_the_groups_before_its_newest_n():
    """§9.7.9.25.3.3: wait_group N waits for all but the N most recent groups; wait_all for all."""
    test = _test("cp.async.ca.shared.global [s], [g], 4 ;\n cp.async.commit_group ;\n cp.async.ca.shared.global [s], [g], 4 ;\n cp.async.wait_group 1")
    program = lowering.lower(test)
    events = program.threads[0].traces[0].events
    copies = [e for e in events if e.async_group is not None]
    (wait,) = [e for e in events if e.async_wait is not None]
    assert [e.async_group for e in copies] == [("cp.async", n) for n in (0, 0, 1, 1)]
    assert wait.async_wait == ("cp.async", 0)  # one group committed, one pending allowed
    assert not any(base.static_pair("async_completed", c, wait, program) for c in copies)
    test = _test("cp.async.ca.shared.global [s], [g], 4 ;\n cp.async.wait_all")
    program = lowering.lower(test)
    events = program.threads[0].traces[0].events
    assert all(base.static_pair("async_completed", c, events[-1], program) for c in events if c.async_group is not None)


# ---- .multicast::cluster (§9.7.9.25.4.1, §9.7.16.8.11): one location per destination CTA ---------

MULTICAST_FORMS = [
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{s0, s1}], g, 16, [{bar0, bar1}], 3",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{s0, s1}], [tmap, {0, 0}], [{bar0, bar1}], 5",
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{bar0, bar1}], 3",
]


def _multicast_test(line: str) -> litmus.LitmusTest:
    init = ("tmap=&g; " if "tmap" in line else "") + "g=1; s0=0; s1=0; bar0=0; bar1=0;"
    return litmus.parse(f"PTX t\n{{\n{init}\n}}\n P0@cta 0,gpu 0,cluster 0 ;\n {line} ;\nexists (s0 == 0)\n")


@pytest.mark.parametrize("line", MULTICAST_FORMS)
def test_multicast_forms_print_as_they_parse(line):
    (instruction,) = _multicast_test(line).code[0]
    assert litmus.format_instruction(instruction) == line


@pytest.mark.parametrize("line", MULTICAST_FORMS)
def test_every_multicast_form_is_ptx(ptxas, tmp_path, line):
    """ptxas assembles each form with one address per operand (PTX names the issuing CTA's instance;
    tcgen05.commit takes ctaMask in a register)."""
    import re
    import subprocess

    ptx = line.replace("[{s0, s1}]", "[%s]").replace("[{bar0, bar1}]", "[%bar]").replace(" g,", " [%g],").replace("tmap", "%tmap")
    if ptx.startswith("tcgen05"):
        ptx = re.sub(r", 3$", ", %m", ptx)
    arch = "sm_100a" if ptx.startswith("tcgen05") else "sm_90a"
    source = tmp_path / "k.ptx"
    source.write_text(f".version 8.7\n.target {arch}\n.address_size 64\n.entry k() {{\n.reg .b64 %s, %g, %bar, %tmap;\n.reg .b16 %m;\n{ptx};\nret;\n}}\n")
    done = subprocess.run([ptxas, f"-arch={arch}", str(source), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
    assert done.returncode == 0, (ptx, done.stderr)


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{s0, s1}], [g], 16, [{bar0, bar1}], 1",
            "in each of the 1 destination",
        ),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{s0, s1}], [g], 16, [bar0], 3", "names mbar in each of the 2"),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{s0, s1}], [g], 16, [{bar0, bar1}], 65536",
            "ctaMask is a constant of 16 bits",
        ),
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster [{s0}], [g], 16, [{bar0}], 1",
            "only from .global to .shared::cluster",
        ),
        ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar0], 3", "names mbar in each of the 2"),
    ],
)
def test_bad_multicast_forms_are_refused_with_the_reason(line, message):
    with pytest.raises(PtxSpecError, match=message):
        _multicast_test(line)


def test_each_destination_cta_is_its_own_agent_with_its_own_completion():
    program = lowering.lower(_multicast_test(MULTICAST_FORMS[0]))
    trace = program.threads[0].traces[0]
    by_agent: dict = {}
    for event in trace.events:
        by_agent.setdefault(event.agent, []).append(event)
    first, second = by_agent["0:0"], by_agent["0:0/1"]
    assert [e.address.name for e in first if e.address] == ["g", "s0", "bar0"]
    assert [e.address.name for e in second if e.address] == ["g", "s1", "bar1"]
    assert all(e.proxy == "async" for e in first[:2] + second[:2]) and first[-1].mbarrier == second[-1].mbarrier == "complete_tx"
    assert not base.static_pair("po", first[0], second[-1], program)  # bar1's completion does not follow s0's write


# ---- floating-point cp.reduce.async.bulk through the numerics core, against numpy / ml_dtypes ------


def _flush(x, tiny):
    import numpy as np

    return np.copysign(np.float32(0), x) if x != 0 and abs(x) < tiny else x


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.sampled_from(["spec", "sm_90"]))
def test_f32_add_reduction_rounds_to_nearest_even_and_flushes_subnormals_as_the_manual_says(a, b, profile):
    """§9.7.9.25.4.2: .add.f32 "rounds to nearest even" and (the spec profile) "flushes subnormal
    inputs and results to sign-preserving zero": numpy's float32 sum of the flushed inputs, flushed
    (NaN: any NaN). The sm_90 profile keeps subnormals, as an H100 does (the async round): numpy's
    plain float32 sum (NaN: the canonical one)."""
    import numpy as np

    from ptxspec.semantics.results import contains

    tiny = np.finfo(np.float32).tiny
    flush = (lambda v: _flush(v, tiny)) if profile == "spec" else (lambda v: v)  # noqa: E731
    x, y = (flush(np.array([v], dtype=np.uint32).view(np.float32)[0]) for v in (a, b))
    with np.errstate(all="ignore"):
        expected = flush(np.float32(x + y))
    got = atomics.reduction_value("add", a, b, ("f32",), profile)
    if np.isnan(expected):
        assert not isinstance(got, int) if profile == "spec" else got == 0x7FFFFFFF
    else:
        assert contains(got, int(np.array([expected], dtype=np.float32).view(np.uint32)[0]))
        assert isinstance(got, int)


@given(st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1), st.sampled_from(["f16", "bf16"]), st.sampled_from(["add", "min", "max"]))
def test_half_reductions_keep_subnormals_and_round_to_nearest_even(a, b, kind, op):
    """.add.noftz.f16 / .bf16 preserve subnormals and round to nearest even; .min/.max: the
    smaller/larger (a NaN operand gives the other, §9.7.3 min/max), against numpy and ml_dtypes in
    float64 (exact for these formats) then rounded once."""
    import ml_dtypes
    import numpy as np

    dtype = np.float16 if kind == "f16" else ml_dtypes.bfloat16
    x, y = (np.array([v], dtype=np.uint16).view(dtype)[0] for v in (a, b))
    got = np.array([atomics.reduction_value(op, a, b, (kind,))], dtype=np.uint16).view(dtype)[0]
    with np.errstate(all="ignore"):
        if op == "add":
            expected = dtype(np.float64(x) + np.float64(y))
        elif np.isnan(x) or np.isnan(y):
            expected = y if np.isnan(x) else x
        else:
            expected = (min if op == "min" else max)(x, y, key=np.float64)
    if np.isnan(np.float64(expected)):
        assert np.isnan(np.float64(got))
    elif expected == 0 and got == 0 and op != "add":
        pass  # min/max of +0 and -0 may be either zero (§9.7.3)
    else:
        assert np.array([got]).view(np.uint16)[0] == np.array([expected], dtype=dtype).view(np.uint16)[0], (hex(a), hex(b))


BULK_PTX = [
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [g], [s], 16",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [g], [s], 16",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [g], [s], 32",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [g], [s], 16",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [g], [s], 16",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [g], [s], 16",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32 [g], [s], 16",
    "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.s32 [g], [s], 16, [bar]",
    "cp.async.bulk.global.shared::cta.bulk_group [g], [s], 48",
    "cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [s], [g], 16, [bar], pol",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.u32 [g], [s], 16, pol",
    "cp.async.ca.shared.global.L2::cache_hint.L2::128B [s], [g], 16, pol",
    "cp.async.cg.shared.global.L2::256B [s], [g], 16",
    "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [g], [s], 16",
]


@pytest.mark.parametrize("line", BULK_PTX)
def test_the_dialect_accepts_a_bulk_form_iff_ptxas_does(ptxas, tmp_path, line):
    import subprocess

    try:
        _test(line)
        ours = True
    except PtxSpecError:
        ours = False
    ptx = line.replace("[g]", "[%g]").replace("[s]", "[%s]").replace("[bar]", "[%bar]").replace(", pol", ", %pol")
    source = tmp_path / "k.ptx"
    source.write_text(f".version 8.7\n.target sm_90a\n.address_size 64\n.entry k() {{\n.reg .b64 %g, %s, %bar, %pol;\n{ptx};\nret;\n}}\n")
    theirs = subprocess.run([ptxas, "-arch=sm_90a", str(source), "-o", str(tmp_path / "k.o")], capture_output=True).returncode == 0
    assert ours == theirs, (line, ours, theirs)


def test_a_cache_hint_changes_no_operation():
    """§9.7.9.25: cache-policy "is a hint to the cache subsystem ... It does not change the memory
    consistency behavior of the program": the same events, bar the instruction's text."""
    plain = lowering.lower(_test("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar]"))
    hinted = lowering.lower(_test("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [s], [g], 16, [bar], pol"))

    def shape(program):
        return [[attrs.evolve(e, instruction="") for e in t.events] for th in program.threads for t in th.traces]

    assert shape(plain) == shape(hinted)
    (_, copy) = _test("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [s], [g], 16, [bar], pol").code[0]
    assert isinstance(copy, litmus.BulkCopy) and copy.cache_policy == litmus.Register("r9") and litmus.registers_read(copy) == ("r9",)
