"""``ptxspec litmus-run``: litmus tests as kernels (conformance/litmus_kernel.py), the device script
on a GPU stand-in, and the recording from an H100 held against the model (the soundness check:
every outcome silicon showed must be a final state of a consistent execution)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxspec.conformance import litmus_kernel, litmus_run
from ptxspec.memory_model import litmus

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import emulated_gpu  # noqa: E402

from ptxspec.conformance.silicon import litmus_device  # noqa: E402

RECORDING = REPO / "conformance" / "data" / "sm_90" / "litmus-h100.json"
MANUAL = REPO / "tests" / "litmus" / "manual"


def _test(body: str, header: str = "P0@cta 0,gpu 0 | P1@cta 1,gpu 0", init: str = "x=0; y=0;", condition: str = "exists (P1:r0 == 1 /\\ P1:r1 == 0)"):
    return litmus.parse(f"PTX t\n{{ {init} }}\n {header} ;\n{body}\n{condition}\n")


MP = " st.weak x, 1 | ld.acquire.gpu r0, y ;\n st.release.gpu y, 1 | ld.weak r1, x ;"


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def test_a_kernel_places_threads_and_names_what_it_observes():
    k = litmus_kernel.kernel(_test(MP), "litmus_0")
    assert k.roles == ((0,), (1,)) and not k.cluster
    assert [(o.kind, o.thread, o.name, o.slot) for o in k.observed] == [("register", 1, "r0", 0), ("register", 1, "r1", 1)]
    assert [loc.name for loc in k.locations] == ["x", "y"] and all(loc.bits == 64 for loc in k.locations)
    assert "st.release.gpu.global.u64 [%addr_1], 0x1;" in k.ptx and "ld.acquire.gpu.global.u64 %t1_r0, [%addr_1];" in k.ptx
    same_cta = litmus_kernel.kernel(_test(MP, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 0"), "litmus_0")
    assert same_cta.roles == ((0, 1),)
    cluster = litmus_kernel.kernel(_test(MP, header="P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0"), "litmus_0")
    assert cluster.cluster and ".reqnctapercluster 2, 1, 1" in cluster.ptx


@pytest.mark.parametrize(
    "body, header, init, why",
    [
        (
            " st.weak x, 1 | ld.weak r0, x ;\n st.weak y, 1 | ld.weak r1, y ;",
            "P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 1",
            "x=0; y=0;",
            "a cluster is on one GPU",
        ),
        (" sust.weak s, 1 | ld.weak r0, x ;\n st.weak y, 1 | ld.weak r1, y ;", None, "x=0; y=0; s @ surface aliases x;", "surface proxy"),
        (" st.weak x, 1 | ld.weak r0, xa ;\n st.weak y, 1 | ld.weak r1, y ;", None, "x=0; y=0; xa @ generic aliases x;", "alias of x"),
        (" LC00: | ld.weak r0, x ;\n ld.weak r0, y | ld.weak r1, y ;\n beq r0, 0, LC00 | ;", None, "x=0; y=0;", "jumps back"),
        (" bar.cta.sync 1 | bar.cta.sync 2 ;\n ld.weak r0, y | ld.weak r1, y ;", "P0@cta 0,gpu 0 | P1@cta 0,gpu 0", "x=0; y=0;", "different barriers"),
        (" st.weak.shared::cta x, 1 | ld.weak r0, x ;\n st.weak y, 1 | ld.weak r1, y ;", None, "x=0; y=0;", ".shared::cta"),
    ],
)
def test_what_a_kernel_cannot_express_is_refused(body, header, init, why):
    with pytest.raises(litmus_kernel.NotRunnable, match=why.replace(".", r"\.")):
        litmus_kernel.kernel(_test(body, header or "P0@cta 0,gpu 0 | P1@cta 1,gpu 0", init), "k")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_every_runnable_manual_test_assembles(tmp_path: Path):
    """The kernels of the manual's runnable tests pass ptxas for sm_90a (the bundle is written)."""
    sources = litmus_run.file_sources([str(MANUAL)])
    kept, refused = litmus_run.prepare(sources, tmp_path, litmus_run.Settings(iterations=10))
    assert len(kept) >= 12 and not [why for _, why in refused if why.startswith("ptxas")]
    plan = json.loads((tmp_path / litmus_device.PLAN_FILE).read_text())
    assert [t["test"] for t in plan["tests"]] == [s.parse().name for s in kept] and (tmp_path / litmus_device.CUBIN_FILE).stat().st_size > 0


# ---------------------------------------------------------------------------------------------
# The device script on a stand-in GPU: each "kernel" runs the instances one thread after another
# ---------------------------------------------------------------------------------------------


def _sequential(plan: dict, test: litmus.LitmusTest):
    """A kernel stand-in: every instance runs P0 to the end, then P1 ... (one sequentially
    consistent execution), reading and writing the buffer at the instance's slots."""
    names = [loc["name"] for loc in plan["locations"]]

    def launch(grid, block, args):
        mem, slots, roles, out, sync, test_blocks = args[:6]
        registers = max(1, plan["registers"])
        slots = np.asarray(slots).reshape(-1, len(names))
        for instance in range(len(slots)):
            regs: dict[tuple[int, str], int] = {}
            for t, code in enumerate(test.code):
                for ins in code:
                    at = int(slots[instance, names.index(ins.address)]) if hasattr(ins, "address") else None
                    if isinstance(ins, litmus.Store):
                        mem[at : at + 8] = np.frombuffer(int(ins.value.value).to_bytes(8, "little"), dtype=np.uint8)
                    elif isinstance(ins, litmus.Load):
                        regs[(t, ins.dest.name)] = int.from_bytes(bytes(mem[at : at + 8]), "little")
            for o in plan["observed"]:
                if o["kind"] == "register":
                    out[instance * registers + o["slot"]] = regs.get((o["thread"], o["name"]), 0)

    return launch


def test_the_device_script_counts_each_outcome(tmp_path: Path):
    test = _test(MP)
    kernel = litmus_kernel.kernel(test, "litmus_0")
    plan = kernel.plan()
    cp = emulated_gpu.emulated_cupy(lambda name: _sequential(plan, test))
    run = litmus_run.Settings(iterations=100, copies=2).json()
    result = litmus_device.run_test(cp, [cp.RawModule(None)], plan, 0, run)
    assert result["iterations"] == 128 and result["observed"] == ["P1:r0", "P1:r1"]
    assert result["outcomes"] == [["1", "1", 128]]  # P0 ran first in every instance


def test_placements_differ_between_launches_and_repeat_with_the_seed():
    plan = litmus_kernel.kernel(_test(MP), "litmus_0").plan()
    a = litmus_device.draw(np.random.default_rng([0, 0, 0]), plan, 4)
    b = litmus_device.draw(np.random.default_rng([0, 0, 1]), plan, 4)
    again = litmus_device.draw(np.random.default_rng([0, 0, 0]), plan, 4)
    assert all(np.array_equal(x, y) for x, y in zip(a, again)) and not np.array_equal(a[0], b[0])
    slots, (roles,), stress = a
    assert len(np.unique(slots)) == slots.size and not set(slots.ravel()) & set(stress)  # stress never touches a location
    assert sorted(roles.tolist()) == sorted(r << 16 | c for r in range(2) for c in range(4))
    two_gpus = litmus_kernel.kernel(_test(MP, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 1"), "litmus_0").plan()
    assert two_gpus["gpus"] == 2 and two_gpus["role_gpus"] == [0, 1]
    _, (on_0, on_1), _ = litmus_device.draw(np.random.default_rng(0), two_gpus, 4)
    assert sorted(on_0.tolist()) == [c for c in range(4)] and sorted(on_1.tolist()) == [1 << 16 | c for c in range(4)]


# ---------------------------------------------------------------------------------------------
# The recording from an H100 against the model
# ---------------------------------------------------------------------------------------------


def test_the_recording_is_large_enough():
    record = json.loads(RECORDING.read_text())
    assert len(record["tests"]) >= 500 and min(t["iterations"] for t in record["tests"]) >= 100_000
    assert record["meta"]["sm"] == "90"


@pytest.mark.parametrize(
    "name, weak", [("litmus-h100", "SB+rlx.gpu+po+diff-cta"), ("litmus-h100-b", "SB+rlx.gpu+po+diff-cta"), ("litmus-h100-x4", "SB+rlx.cluster+po+diff-gpu")]
)
def test_every_outcome_silicon_showed_is_allowed_by_the_model(name: str, weak: str):
    """Soundness against the chip: no recorded outcome is forbidden (a Dat3M test is skipped when
    the corpus is not beside the repository)."""
    path = RECORDING.with_name(f"{name}.json")
    reports, skipped = litmus_run.check_recording(path)
    assert len(reports) + len(skipped) == len(json.loads(path.read_text())["tests"])
    assert all("is absent" in why for _, why in skipped), skipped
    assert not [r.name for r in reports if r.allowed is None]
    assert not {r.name: r.forbidden_seen for r in reports if r.forbidden_seen}
    seen = {r.name: r for r in reports}
    assert seen[weak].condition_count > 0  # store buffering shows on H100s


def test_a_forbidden_outcome_would_be_caught(tmp_path: Path):
    """The check can fail: the manual's MP with its forbidden outcome added to the histogram."""
    record = json.loads(RECORDING.read_text())
    entry = next(t for t in record["tests"] if t["origin"] == "manual" and t["path"] == "MP.litmus")
    forged = dict(entry, outcomes=entry["outcomes"] + [["1", "0", 1]])
    report = litmus_run.judge(forged, litmus_run.source_of(forged))
    assert report.forbidden_seen == {(1, 0): 1}
    changed = dict(entry, sha256="0" * 64)
    assert "changed since it was recorded" in litmus_run.source_of(changed)


def test_the_check_command_reports(tmp_path: Path):
    from click.testing import CliRunner

    record = json.loads(RECORDING.read_text())
    record["tests"] = [t for t in record["tests"] if t["origin"] == "manual"]
    path = tmp_path / "manual.json"
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(litmus_run.litmus_run_command, ["--check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{len(record['tests'])} tests, ") and "0 show an outcome the model forbids" in result.output
    for t in record["tests"]:
        if t["path"] == "MP.litmus":
            t["outcomes"].append(["1", "0", 1])
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(litmus_run.litmus_run_command, ["--check", str(path)])
    assert result.exit_code == 1 and "FORBIDDEN but seen: MP: P1:r0=1, P1:r1=0 (1 of" in result.output


def test_a_test_on_two_gpus_launches_its_roles_on_each(monkeypatch):
    """Each device launches the blocks of its roles (and its stress blocks); all of them count
    towards the start barrier's total; the buffer is GPU 0's."""
    import contextlib

    plan = litmus_kernel.kernel(_test(MP, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 1"), "litmus_0").plan()
    launches: list[tuple[int, tuple]] = []
    current = [0]

    @contextlib.contextmanager
    def device(g):
        before, current[0] = current[0], g
        yield
        current[0] = before

    cp = emulated_gpu.emulated_cupy(lambda name: lambda grid, block, args: launches.append((current[0], grid, args)))
    cp.cuda.Device = device
    run = litmus_run.Settings(iterations=64, copies=2, stress_blocks=3).json()
    litmus_device.run_test(cp, [cp.RawModule(None), cp.RawModule(None)], plan, 0, run)
    assert [(g, grid) for g, grid, _ in launches] == [(0, (2 + 3,)), (1, (2 + 3,))]
    for g, _, args in launches:
        assert int(args[5]) == 2 and int(args[6]) == 2 * 2 + 2 * 3  # its test blocks; all blocks of both
        assert args[0] is launches[0][2][0] and args[3] is launches[0][2][3]  # one buffer, one output
        assert all(int(word) >> 16 == g for word in args[2])  # role g runs on GPU g


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"tests": [', "invalid JSON"),
        ("[1, 2]", 'a list "tests"'),
        ('{"tests": [{"test": "x"}]}', "tests[0]: 'origin' is missing"),
    ],
)
def test_a_bad_recording_is_one_located_error(tmp_path: Path, text: str, message: str):
    from tests.test_cli import ptxspec

    path = tmp_path / "bad.json"
    path.write_text(text)
    done = ptxspec("litmus-run", "--check", str(path))
    assert done.returncode == 2 and message in done.stderr and str(path) in done.stderr and "Traceback" not in done.stderr


def test_a_bad_test_file_is_located_at_its_file(tmp_path: Path):
    from tests.test_cli import ptxspec

    path = tmp_path / "bad.litmus"
    path.write_text("PTX x\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, ;\nexists (x == 1)\n")
    done = ptxspec("litmus-run", "--prepare", str(tmp_path / "b"), str(path))
    assert done.returncode == 2 and f"{path}:4:13:" in done.stderr and "Traceback" not in done.stderr


def test_a_bundle_runs_what_the_machine_has_gpus_for(tmp_path: Path):
    """run_bundle (the device script's loop, and litmus-run's on a GPU machine): a test on two GPUs
    is listed as skipped on a machine of one; the recording keeps the tests' origins."""
    one = litmus_kernel.kernel(_test(MP), "litmus_0")
    two = litmus_kernel.kernel(_test(MP, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 1"), "litmus_1")
    plan = {"run": litmus_run.Settings(iterations=64, copies=2).json(), "tests": [], "refused": []}
    for k in (one, two):
        plan["tests"].append(k.plan() | {"origin": "generated", "path": k.test, "sha256": "0" * 64, "text": "..."})
    (tmp_path / litmus_device.PLAN_FILE).write_text(json.dumps(plan))
    (tmp_path / litmus_device.CUBIN_FILE).write_bytes(b"")
    cp = emulated_gpu.emulated_cupy(lambda name: _sequential(one.plan(), _test(MP)))
    cp.cuda.runtime.getDeviceCount = lambda: 1
    cp.cuda.runtime.getDevice = lambda: 0
    cp.cuda.runtime.getDeviceProperties = lambda i: {"name": b"emulated", "major": 9, "minor": 0, "multiProcessorCount": 1}
    said: list[str] = []
    kept: list[dict] = []
    record = litmus_device.run_bundle(cp, tmp_path, kept.append, said.append)
    assert [t["kernel"] for t in record["tests"]] == ["litmus_0"] and record["skipped"][0]["why"] == "needs 2 GPUs; this machine has 1"
    assert len(kept) == 1 and said == ["1/2 t: 1 outcomes, " + said[0].split("outcomes, ")[1]]
    recording = litmus_run.recording_from(tmp_path, record)
    assert recording["tests"][0]["origin"] == "generated" and recording["skipped"] == [{"test": "t", "why": "needs 2 GPUs; this machine has 1"}]


#: Each instruction of the dialect and the PTX its kernel runs (P0's registers are %t0_NAME).
MAPPING = [
    ("ld.weak r0, x", "ld.weak.global.u64 %t0_r0, [%addr_0];"),
    ("ld.acquire.cta r0, x", "ld.acquire.cta.global.u64 %t0_r0, [%addr_0];"),
    ("ld.volatile r0, x", "ld.volatile.global.u64 %t0_r0, [%addr_0];"),
    ("ld.relaxed.sys.s32 r0, x", "ld.relaxed.sys.global.s32 %t0_tmp1, [%addr_0];\n\tcvt.s64.s32 %t0_r0, %t0_tmp1;"),
    ("st.release.gpu x, 1", "st.release.gpu.global.u64 [%addr_0], 0x1;"),
    ("st.relaxed.cluster.u32 x, r1", "cvt.u32.u64 %t0_tmp1, %t0_r1;\n\tst.relaxed.cluster.global.u32 [%addr_0], %t0_tmp1;"),
    ("st.weak.f32 x, 0x3f800000", "st.weak.global.f32 [%addr_0], 0f3F800000;"),
    ("atom.acq_rel.gpu.add r0, x, 1", "atom.acq_rel.gpu.global.add.u64 %t0_r0, [%addr_0], 0x1;"),
    ("atom.relaxed.gpu.sub r0, x, 1", "atom.relaxed.gpu.global.add.u64 %t0_r0, [%addr_0], 0xffffffffffffffff;"),
    ("atom.relaxed.gpu.cas r0, x, 0, 1", "atom.relaxed.gpu.global.cas.b64 %t0_r0, [%addr_0], 0x0, 0x1;"),
    ("atom.relaxed.sys.inc r0, x, 100", "atom.relaxed.sys.global.inc.u32 %t0_tmp1, [%addr_0], 0x64;\n\tcvt.u64.u32 %t0_r0, %t0_tmp1;"),
    ("red.release.gpu.add x, 2", "red.release.gpu.global.add.u64 [%addr_0], 0x2;"),
    ("red.acq_rel.gpu.add x, 2", "atom.acq_rel.gpu.global.add.u64 %t0_tmp1, [%addr_0], 0x2;"),
    ("fence.sc.cluster", "fence.sc.cluster;"),
    ("fence.acq_rel.sys", "fence.acq_rel.sys;"),
    ("add r0, r1, 3", "add.s64 %t0_r0, %t0_r1, 0x3;"),
    ("mov r0, 5", "mov.b64 %t0_r0, 0x5;"),
]


@pytest.mark.parametrize("instruction, ptx", MAPPING)
def test_each_instruction_becomes_the_ptx_of_its_meaning(instruction: str, ptx: str):
    test = litmus.parse(f"PTX t\n{{ x=0; P0:r1=0; }}\n P0@cta 0,gpu 0 ;\n {instruction} ;\nexists (x == 0)\n")
    k = litmus_kernel.kernel(test, "k")
    assert "\t" + ptx in k.ptx, k.ptx


def test_control_flow_and_barriers_become_labels_branches_and_counted_barriers():
    body = " bar.cta.sync 1 | bar.cta.sync 1 ;\n ld.weak %a, x | ld.weak r0, y ;\n bne %a, 0, END | st.weak x, 1 ;\n st.weak y, 1 | ;\n END: | ;"
    with pytest.raises(litmus_kernel.NotRunnable, match="a barrier and a branch"):
        litmus_kernel.kernel(_test(body, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 0"), "k")
    k = litmus_kernel.kernel(_test(body.replace("bar.cta.sync 1", "mov r9, 0"), header="P0@cta 0,gpu 0 | P1@cta 0,gpu 0"), "k")
    assert "\tsetp.ne.s64 %p_branch, %t0_$a, 0x0;\n\t@%p_branch bra T0_END;" in k.ptx and "T0_END:" in k.ptx and "T0$END:" in k.ptx
    barrier = litmus_kernel.kernel(_test(" bar.cta.sync 2 | bar.cta.sync 2 ;\n ld.weak r0, x | ld.weak r1, y ;", header="P0@cta 0,gpu 0 | P1@cta 0,gpu 0"), "k")
    assert "\tbarrier.cta.sync.aligned 3, %cta_threads;" in barrier.ptx and "mov.u32 %cta_threads, 64;" in barrier.ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_the_mapped_instructions_assemble(tmp_path: Path):
    """Every kernel of the mapping table and the control-flow test passes ptxas (sm_90a)."""
    from ptxspec.conformance.silicon.campaign import HEADER, assemble

    texts = [f"PTX t\n{{ x=0; P0:r1=0; }}\n P0@cta 0,gpu 0 ;\n {instruction} ;\nexists (x == 0)\n" for instruction, _ in MAPPING]
    for text in texts:
        ok, message, _ = assemble(HEADER + litmus_kernel.kernel(litmus.parse(text), "k").ptx)
        assert ok, (text, message)
    body = " ld.weak %a, x | ld.weak r0, y ;\n bne %a, 0, END | st.weak x, 1 ;\n st.weak y, 1 | ;\n END: | ;"
    ok, message, _ = assemble(HEADER + litmus_kernel.kernel(_test(body, header="P0@cta 0,gpu 0 | P1@cta 0,gpu 0"), "k").ptx)
    assert ok, message
