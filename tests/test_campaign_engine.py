"""The campaign engine (conformance/campaign_engine.py): the same results here, on a LocalCluster
of several processes, and after a killed run resumed from its store; and exhaustive-check on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptxspec.conformance import campaign_engine as engine


def square_and_key(x: int, label: str) -> list:
    """A task function (importable by name, as a worker needs)."""
    return [x * x, label]


def tasks(n: int = 12) -> list[engine.Task]:
    return [engine.Task(f"t{i:03d}", f"{__name__}:square_and_key", (i, f"k{i}")) for i in range(n)]


def test_results_come_in_the_tasks_order_whatever_the_workers():
    here = engine.run(tasks())
    assert list(here) == [t.key for t in tasks()] and here["t005"] == [25, "k5"]
    on_cluster = engine.run(tasks(), workers=2)
    assert json.dumps(on_cluster) == json.dumps(here)  # the same bytes


def test_a_killed_run_resumes_from_its_store(tmp_path: Path):
    store = tmp_path / "store"
    calls: list[int] = []

    def count(done: int, total: int) -> None:
        calls.append(done)

    engine.run(tasks(5), store=store)  # a first run that got as far as task 4
    engine.result_path(store, "t002").unlink()  # ... one chunk lost, another half-written when it was killed
    engine.result_path(store, "t003").with_suffix(".partial").write_text('{"key": "t003"')
    engine.result_path(store, "t003").unlink()
    engine.result_path(store, "t004").write_text('{"key": "t00')  # a file cut short (not by the engine)
    resumed = engine.run(tasks(8), store=store, progress=count)
    assert calls[0] == 2  # two results were read back, not recomputed
    assert resumed == engine.run(tasks(8))
    assert sorted(p.name for p in store.glob("*.json")) == sorted(engine.result_path(store, f"t{i:03d}").name for i in range(8))


def test_a_stored_result_is_taken_only_for_the_same_work(tmp_path: Path):
    """Same key, other arguments or another function: recomputed, not the stored result."""
    store = tmp_path / "store"
    engine.run(tasks(2), store=store)
    assert engine.run(tasks(2), store=store)["t000"] == [0, "k0"]
    other = [engine.Task("t000", f"{__name__}:square_and_key", (7, "x"))]
    assert engine.run(other, store=store)["t000"] == [49, "x"]
    renamed = [engine.Task("t000", "math:pow", (2, 3))]
    assert engine.run(renamed, store=store)["t000"] == 8.0


def test_two_tasks_with_one_key_are_refused():
    from ptxspec.spec.errors import PtxSpecError

    with pytest.raises(PtxSpecError, match="one key"):
        engine.run([tasks(1)[0], tasks(1)[0]])


def test_exhaustive_check_on_a_local_cluster_resumes(tmp_path: Path):
    """exhaustive-check's chunks on a LocalCluster of two processes, then resumed: the same digests."""
    from ptxspec.conformance.silicon import exhaustive as ex

    text = "cvt.rn.f16.f32"
    recordings = ex.load_recordings(ex.DATA, "all")
    if not any(text in digests for _, digests in recordings.values()):
        pytest.skip("no exhaustive recording of cvt.rn.f16.f32")
    chunks = [0, 1, 4095]
    store = tmp_path / "digests"
    on_cluster = ex.check_forms({text: chunks}, recordings, workers=2, store=store)[text]
    assert all(n == len(chunks) for n in on_cluster.matched.values()) and not any(on_cluster.mismatched.values())
    assert len(list(store.glob("*.json"))) == len(chunks)
    resumed = ex.check_forms({text: chunks}, recordings, store=store)[text]
    assert resumed.semantic == on_cluster.semantic


# ---------------------------------------------------------------------------------------------
# vectors --shard-size: shards written by the engine, their concatenation the one file's bytes
# ---------------------------------------------------------------------------------------------


def _ptxspec(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "ptxspec", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("forms", "count", "shard", "workers"),
    [
        (["fma.rn.f16", "add.cc.u32"], 9000, 2500, "0"),  # shards across the edge vectors and the random ones
        (["cvt.rn.f16.f32"], 200, 7, "0"),  # every shard inside the edge vectors
        (["mad.lo.s32", "sin.approx.f32"], 5000, 1200, "2"),  # on a LocalCluster of two processes
    ],
)
def test_vector_shards_join_into_the_one_file(tmp_path: Path, forms, count, shard, workers):
    done = _ptxspec("vectors", *forms, "--count", str(count), "--seed", "5", "--shard-size", str(shard), "-o", str(tmp_path / "shards"), "--workers", workers)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "shards" / "manifest.json").read_text())
    for form in forms:
        whole = _ptxspec("vectors", form, "--count", str(count), "--seed", "5")
        shards = manifest["forms"][form]
        assert [s["first"] for s in shards] == list(range(0, count, shard)) and sum(s["lines"] for s in shards) == count
        joined = "".join((tmp_path / "shards" / s["file"]).read_text() for s in shards)
        assert joined == whole.stdout


def test_vector_shards_refuse_what_is_not_one_scalar_form(tmp_path: Path):
    for args, where in (
        (["shfl.sync.idx.b32", "--shard-size", "10", "-o", str(tmp_path)], "INSTR 1"),
        (["add.s32", "--shard-size", "10", "--format", "npz", "-o", str(tmp_path / "x.npz")], "--shard-size"),
        (["add.s32", "--shard-size", "10"], "--output"),
    ):
        done = _ptxspec("vectors", *args, "--workers", "0")
        assert done.returncode == 2 and where in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_vector_shards_resume_and_rewrite_a_lost_shard(tmp_path: Path):
    """A resumed sharded run takes the shards it has, writes again one deleted since, and gives
    the same bytes; an INSTR given twice is refused."""
    args = ["vectors", "add.rn.f16", "--count", "3000", "--seed", "2", "--shard-size", "1000", "-o", str(tmp_path / "s"), "--workers", "0"]
    args += ["--resume", str(tmp_path / "store")]
    assert _ptxspec(*args).returncode == 0
    first = {p.name: p.read_bytes() for p in (tmp_path / "s").iterdir()}
    (tmp_path / "s" / "add.rn.f16.000001.jsonl").unlink()
    assert _ptxspec(*args).returncode == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "s").iterdir()} == first
    twice = _ptxspec("vectors", "add.s32", "add.s32", "--shard-size", "5", "-o", str(tmp_path / "t"), "--workers", "0")
    assert twice.returncode == 2 and "INSTR 2" in twice.stderr and "given twice" in twice.stderr
