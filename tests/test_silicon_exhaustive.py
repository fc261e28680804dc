"""The exhaustive silicon spaces: digest, plan, kernels, device run and checker.

The digest is tested against a plain-Python transcription of its definition; the device script
(numpy + CuPy on the GPU machine) runs here on a numpy stand-in for CuPy whose "kernels" are the
semantics, so that its batching, digests and files are exercised without a GPU; the checker is
tested on a recording made that way with one result changed. Once the H100/H200 recordings exist
(conformance/data/sm_90/exhaustive-<gpu>.npz), each form is checked on seeded chunks: two per
form in the heavy cases, one chunk of a few forms in the default run.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import emulated_gpu
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.conformance.silicon import exhaustive as ex
from ptxspec.conformance.silicon import exhaustive_device as device
from ptxspec.spec.errors import PtxSpecError

M64 = (1 << 64) - 1


splitmix64_reference = emulated_gpu.splitmix64  # the shared Python-integer oracle


def digest_reference(results: list[int], start: int) -> int:
    return sum(r * (splitmix64_reference(start + k) | 1) for k, r in enumerate(results)) & M64


# ---------------------------------------------------------------------------------------------
# The digest
# ---------------------------------------------------------------------------------------------


def test_splitmix64_known_values():
    # The first outputs of the reference splitmix64 generator seeded with 0 (Vigna's
    # splitmix64.c: state += golden; mix(state)) are splitmix64(0), splitmix64(golden), ...
    assert splitmix64_reference(0) == 0xE220A8397B1DCDAF
    assert splitmix64_reference(0x9E3779B97F4A7C15) == 0x6E789E6AA1B965F4


def test_splitmix64_numpy_equals_reference():
    rng = random.Random(1)
    xs = [0, 1, 2, 0xFFFF, 0x10000, (1 << 32) - 1, 1 << 31] + [rng.randrange(1 << 32) for _ in range(200)]
    got = device.splitmix64(np, np.array(xs, dtype=np.uint64))
    assert [int(v) for v in got] == [splitmix64_reference(x) for x in xs]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_chunk_digests_equal_reference(dtype):
    rng = np.random.default_rng(2)
    chunk_bits, start = 5, 0xFFFF_FF00
    results = rng.integers(0, np.iinfo(dtype).max, size=4 << chunk_bits, endpoint=True, dtype=dtype)
    got = device.digests_of(np, results, start, chunk_bits)
    size = 1 << chunk_bits
    want = [digest_reference([int(r) for r in results[c * size : (c + 1) * size]], start + c * size) for c in range(4)]
    assert [int(d) for d in got] == want


def test_chunk_digests_refuse_partial_chunks():
    with pytest.raises(ValueError):
        device.chunk_digests(np, np.zeros(10, dtype=np.uint16), device.weights(np, 0, 10), 3)


@given(st.integers(0, (1 << 32) - 1), st.integers(1, (1 << 32) - 1), st.booleans())
def test_one_changed_result_always_changes_the_digest(index, magnitude, negative):
    """A wrong result r' = r + delta (0 < |delta| < 2^32) moves the digest by delta * w(i), never
    0 mod 2^64 since w(i) is odd."""
    delta = -magnitude if negative else magnitude
    assert (delta * (splitmix64_reference(index) | 1)) & M64 != 0


@settings(max_examples=25)
@given(st.data())
def test_changed_result_changes_digest_and_is_located(data):
    """In a whole 2^20 chunk: change one result; the digest changes, and single_difference names
    exactly that index and the new value."""
    width = data.draw(st.sampled_from([16, 32]))
    chunk = data.draw(st.integers(0, device.CHUNKS - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 1 << 30)))
    size = 1 << device.CHUNK_BITS
    results = rng.integers(0, 1 << width, size=size, dtype=np.uint64)
    k = data.draw(st.integers(0, size - 1))
    new = data.draw(st.integers(0, (1 << width) - 1).filter(lambda v: v != int(results[k])))
    w = device.weights(np, chunk * size, size)
    before = int(device.chunk_digests(np, results, w)[0])
    changed = results.copy()
    changed[k] = new
    after = int(device.chunk_digests(np, changed, w)[0])
    assert after != before
    assert ex.single_difference(after - before, results, w, width) == [(k, new)]


def test_inverse_mod_2_64():
    w = device.weights(np, 12345, 1000)
    assert np.all(w * ex.inverse_mod_2_64(w) == np.uint64(1))


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------

PLAN = ex.plan()
TEXTS = [e.text for e in PLAN]


def test_plan_covers_both_spaces():
    spaces = {e.space for e in PLAN}
    assert spaces == set(ex.SPACES)
    assert len(TEXTS) == len(set(TEXTS))
    expected = {
        "binary16": [
            "add.rn.f16",
            "add.rn.bf16",
            "sub.rn.f16",
            "sub.rn.bf16",
            "mul.rn.f16",
            "mul.rn.bf16",
            "add.rn.ftz.sat.f16",
            "min.f16",
            "min.bf16",
            "max.NaN.xorsign.abs.bf16",
            "min.ftz.NaN.xorsign.abs.f16",
            "max.ftz.f16",
        ],
        "cvt32": [
            "cvt.rn.f16.f32",
            "cvt.rz.f16.f32",
            "cvt.rm.f16.f32",
            "cvt.rp.f16.f32",
            "cvt.rn.bf16.f32",
            "cvt.rz.relu.satfinite.bf16.f32",
            "cvt.rna.tf32.f32",
            "cvt.rn.satfinite.f16.f32",
            "cvt.rni.s8.f32",
            "cvt.rzi.sat.u8.f32",
            "cvt.rmi.s16.f32",
            "cvt.rpi.ftz.u16.f32",
            "cvt.rn.f16x2.f32",
            "cvt.rz.relu.bf16x2.f32",
            "cvt.rn.satfinite.e4m3x2.f32",
            "cvt.rn.satfinite.relu.e5m2x2.f32",
        ],
    }
    by_text = ex.plan_by_text()
    for space, texts in expected.items():
        for text in texts:
            assert text in by_text and by_text[text].space == space, text


def test_plan_forms_are_legal_and_in_scope():
    for e in PLAN:
        form = e.form
        assert form.admits((8, 7), "sm_90a"), e.text
        if e.space == "binary16":
            assert form.opcode in ("add", "sub", "mul", "min", "max") and len(form.sources) == 2
            assert form.get("type") in ("f16", "bf16"), e.text
            if form.opcode in ("add", "sub", "mul"):
                assert form.get("rnd") is not None, f"{e.text}: the implicit-rounding spelling is the same operation"
        else:
            assert form.opcode == "cvt" and form.get("atype") == "f32", e.text
            assert form.get("dtype") in ex.CVT32_DESTINATIONS + ex.CVT32_PACKED, e.text
        assert e.width == (32 if form.get("dtype") in ("tf32", "f16x2", "bf16x2") else 16), e.text


def test_plan_has_every_min_max_combination():
    """min/max: every combination of .ftz, .NaN, .xorsign.abs sm_90a admits, for f16 (bf16 has
    no .ftz, §9.7.4.7)."""
    for op in ("min", "max"):
        f16 = {t for t in TEXTS if t.startswith(op + ".") and t.endswith(".f16")}
        assert len(f16) == 8, sorted(f16)
        bf16 = {t for t in TEXTS if t.startswith(op + ".") and t.endswith(".bf16")}
        assert len(bf16) == 4 and not any("ftz" in t for t in bf16), sorted(bf16)


def test_sources_follow_the_index_definition():
    a, b = ex.sources("binary16", 0x3C00_0000 + 5, 3)
    assert a.tolist() == [0x3C00] * 3 and b.tolist() == [5, 6, 7]
    (x,) = ex.sources("cvt32", 0xFFFF_FFFE, 2)
    assert x.dtype == np.uint32 and x.tolist() == [0xFFFF_FFFE, 0xFFFF_FFFF]


def test_eight_bit_results_are_sign_extended_in_the_register():
    entry = ex.plan_by_text()["cvt.rni.s8.f32"]
    bits, open_count = ex.semantic_results(entry, 0xBF800000, 1)  # -1.0
    assert open_count == 0 and int(bits[0]) == 0xFFFF
    bits, _ = ex.semantic_results(ex.plan_by_text()["cvt.rni.u8.f32"], 0x437F0000, 1)  # 255.0
    assert int(bits[0]) == 0x00FF


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

KERNEL_SAMPLE = [
    "add.rn.f16",
    "min.NaN.xorsign.abs.bf16",
    "cvt.rni.s8.f32",
    "cvt.rna.satfinite.tf32.f32",
    "cvt.rz.relu.bf16x2.f32",
    "cvt.rn.satfinite.e5m2x2.f32",
]


def test_kernels_assemble(ptxas):
    by_text = ex.plan_by_text()
    named = [(ex.kernel_name(i), by_text[t]) for i, t in enumerate(KERNEL_SAMPLE)]
    ok, message, cubin = ex.assemble(ex.module(named), ptxas)
    assert ok, message
    assert len(cubin) > 1000


def test_prepare_lists_what_ptxas_refuses(ptxas, tmp_path, monkeypatch):
    """A form ptxas refuses for sm_90a is listed with its message, the rest assembled."""
    refused = ex.ExhaustiveForm("cvt.rn.satfinite.e2m3x2.f32", "cvt32")  # sm_100a and later
    kept = ex.plan_by_text()["cvt.rn.f16.f32"]
    monkeypatch.setattr(ex, "plan", lambda: [kept, refused])
    content = ex.prepare(tmp_path, ptxas=ptxas)
    assert [f["text"] for f in content["forms"]] == ["cvt.rn.f16.f32"]
    assert "cvt.rn.satfinite.e2m3x2.f32" in content["rejected"] and content["rejected"]["cvt.rn.satfinite.e2m3x2.f32"]
    plan = json.loads((tmp_path / device.PLAN_FILE).read_text())
    assert plan["forms"][0] == {"kernel": "x0000", "text": "cvt.rn.f16.f32", "space": "cvt32", "width": 16}
    assert "release" in plan["ptxas"] and (tmp_path / device.CUBIN_FILE).stat().st_size > 0


# ---------------------------------------------------------------------------------------------
# The device script on a numpy stand-in for CuPy
# ---------------------------------------------------------------------------------------------


class _Event:
    def record(self):
        pass

    def synchronize(self):
        pass


class FakeCupy:
    """numpy with the parts of CuPy that exhaustive_device uses; a "kernel" writes the semantics'
    register values of indices [base, base + n) into its output buffer."""

    uint16, uint32, uint64 = np.uint16, np.uint32, np.uint64
    empty, zeros, arange = staticmethod(np.empty), staticmethod(np.zeros), staticmethod(np.arange)

    def __init__(self, plan_path: Path, tamper: dict | None = None):
        self.kernels = {f["kernel"]: ex.ExhaustiveForm(f["text"], f["space"]) for f in json.loads(plan_path.read_text())["forms"]}
        self.tamper = tamper or {}
        self.launches = []
        fake = self

        class cuda:
            Event = _Event

            @staticmethod
            def get_elapsed_time(a, b):
                return 1.0

            class runtime:
                getDeviceProperties = staticmethod(lambda i: {"name": b"Fake H100", "major": 9, "minor": 0})
                driverGetVersion = staticmethod(lambda: 13000)
                runtimeGetVersion = staticmethod(lambda: 13000)

        class RawModule:
            def __init__(self, path):
                self.path = path

            def get_function(self, name):
                def launch(grid, block, args):
                    buffer, base, n = args
                    entry = fake.kernels[name]
                    bits, _ = ex.semantic_results(entry, int(base), int(n))
                    for index, value in fake.tamper.get(entry.text, {}).items():
                        if int(base) <= index < int(base) + int(n):
                            bits[index - int(base)] = value
                    buffer[: int(n)] = bits.astype(buffer.dtype)
                    fake.launches.append((entry.text, int(base), int(n)))

                return launch

        self.cuda, self.RawModule = cuda, RawModule

    @staticmethod
    def asnumpy(a):
        return np.asarray(a)


def _bundle(tmp_path: Path, texts: list[str], expected: dict | None = None) -> Path:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    by_text = ex.plan_by_text()
    forms = [{"kernel": ex.kernel_name(i), "text": t, "space": by_text[t].space, "width": by_text[t].width} for i, t in enumerate(texts)]
    (bundle / device.PLAN_FILE).write_text(json.dumps({"ptxas": "test", "forms": forms, "rejected": {}, "expected": expected or {}}))
    return bundle


def test_device_run_on_a_stand_in(tmp_path):
    """The batch loop, the digests and the files, on 2^21 indices in batches of 2^20."""
    texts = ["add.rn.f16", "cvt.rn.f16.f32"]
    bundle = _bundle(tmp_path, texts)
    cp = FakeCupy(bundle / device.PLAN_FILE)
    meta = device.run(bundle, tmp_path / "out", batch_bits=20, index_bits=21, cp=cp)
    assert meta["forms"] == texts and meta["gpu"] == "Fake H100" and meta["widths"] == {t: 16 for t in texts}
    assert sorted(cp.launches) == sorted((t, b, 1 << 20) for t in texts for b in (0, 1 << 20))
    with np.load(tmp_path / "out" / device.DIGEST_FILE) as z:
        for t in texts:
            entry = ex.plan_by_text()[t]
            assert z[t].dtype == np.uint64 and [int(d) for d in z[t]] == [ex.semantic_digest(entry, c)[0] for c in (0, 1)]
    assert json.loads((tmp_path / "out" / device.META_FILE).read_text())["gpu_seconds"] == {t: 0.002 for t in texts}


def test_device_self_check_and_values(tmp_path, capsys):
    entry = ex.plan_by_text()["cvt.rn.f16.f32"]
    chunk = 0x3F8
    good = str(ex.semantic_digest(entry, chunk)[0])
    bundle = _bundle(tmp_path, [entry.text], {entry.text: {str(chunk): good}})
    digests = {entry.text: np.zeros(device.CHUNKS, dtype=np.uint64)}
    digests[entry.text][chunk] = np.uint64(int(good))
    plan = json.loads((bundle / device.PLAN_FILE).read_text())
    assert device._self_check(plan, digests, device.CHUNK_BITS) == {entry.text: True}
    digests[entry.text][chunk] += np.uint64(1)
    assert device._self_check(plan, digests, device.CHUNK_BITS) == {entry.text: False}
    assert "DIFFER" in capsys.readouterr().out
    device.values(bundle, tmp_path / "v", entry.text, chunk, cp=FakeCupy(bundle / device.PLAN_FILE))
    with np.load(tmp_path / "v" / device.VALUES_FILE) as z:
        assert str(z["form"]) == entry.text and int(z["chunk"]) == chunk and str(z["digest"]) == good
        assert z["results"].dtype == np.uint16 and int(z["results"][0]) == 0x3C00  # 1.0f -> 1.0h


# ---------------------------------------------------------------------------------------------
# The checker, on a recording made here with one result changed
# ---------------------------------------------------------------------------------------------

CHECK_FORMS = ["add.rn.f16", "cvt.rn.f16.f32"]


@pytest.fixture(scope="module")
def fake_recording(tmp_path_factory):
    """exhaustive-h100.npz whose chunk sampled by --chunks 1 --seed 0 holds the semantics' digest
    (the others are 0: never compared), except one changed result in add.rn.f16."""
    directory = tmp_path_factory.mktemp("recording")
    digests = {}
    changed = {}
    for text in CHECK_FORMS:
        entry = ex.plan_by_text()[text]
        (chunk,) = ex.sample_chunks(text, 1, 0)
        size = 1 << device.CHUNK_BITS
        bits, _ = ex.semantic_results(entry, chunk * size, size)
        if text == "add.rn.f16":
            k = 12345
            bits[k] ^= np.uint64(0x0001)
            changed = {"index": chunk * size + k, "value": int(bits[k])}
        digests[text] = np.zeros(device.CHUNKS, dtype=np.uint64)
        digests[text][chunk] = device.digests_of(np, bits, chunk * size)[0]
    np.savez(directory / "exhaustive-h100.npz", **digests)
    (directory / "meta-exhaustive-h100.json").write_text(json.dumps({"gpu": "Fake H100", "forms": CHECK_FORMS}))
    return directory, changed


def _invoke(*args):
    return CliRunner().invoke(ex.exhaustive_check_command, list(args))


def test_checker_finds_the_changed_result(fake_recording):
    directory, changed = fake_recording
    result = _invoke("--data", str(directory), "--chunks", "1", "--gpu", "h100")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("cvt.rn.f16.f32") and "h100 1/1 match" in line for line in lines), result.output
    assert any(line.startswith("add.rn.f16") and "h100 0/1 match" in line for line in lines), result.output
    assert f"it is index {changed['index']:#010x}" in result.output
    assert f"h100: {changed['value']:#06x}" in result.output
    assert "exhaustive_device.py values BUNDLE OUT --form add.rn.f16" in result.output


def test_checker_passes_a_matching_form(fake_recording):
    directory, _ = fake_recording
    result = _invoke("--data", str(directory), "--chunks", "1", "--forms", "cvt.*", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "1 forms, 1 chunk digests compared, 0 mismatched" in result.output


def test_checker_values_file_names_every_difference(tmp_path):
    entry = ex.plan_by_text()["add.rn.f16"]
    chunk, size = 0x3C0, 1 << device.CHUNK_BITS
    bits, _ = ex.semantic_results(entry, chunk * size, size)
    values = bits.astype(np.uint16)
    path = tmp_path / "v.npz"
    np.savez(path, results=values, form=np.array(entry.text), chunk=np.array(chunk))
    assert _invoke("--values", str(path)).exit_code == 0
    values[[7, 70000]] ^= np.uint16(0x8000)
    np.savez(path, results=values, form=np.array(entry.text), chunk=np.array(chunk))
    result = _invoke("--values", str(path))
    assert result.exit_code == 1 and "2 of 1048576 results differ" in result.output
    assert f"{chunk * size + 7:#010x}: a=0x3c00 (1.0), b=0x0007" in result.output


@pytest.mark.parametrize(
    "args, where",
    [
        (["--chunks", "0"], "--chunks"),
        (["--chunks", "many"], "--chunks"),
        (["--chunks", "5:2"], "--chunks"),
        (["--chunks", "0:4097"], "--chunks"),
        (["--chunks", "3:3"], "--chunks"),
        (["--forms", "nothing.*"], "--forms"),
        (["--gpu", "h200"], "--gpu"),
    ],
)
def test_checker_bad_input(fake_recording, args, where):
    directory, _ = fake_recording
    result = _invoke("--data", str(directory), *args)
    assert isinstance(result.exception, PtxSpecError) and result.exception.where == where, result.output


def test_chunk_ranges_split_a_full_check():
    """``--chunks A:B`` names chunks A..B-1 of every form; ranges that tile 0:4096 cover every chunk once."""
    parts = [ex._parse_chunks(r) for r in ("0:1400", "1400:2750", "2750:4096")]
    assert [c for part in parts for c in part] == list(range(device.CHUNKS))
    assert ex._parse_chunks("all") is None and ex._parse_chunks("7") == 7


def test_sample_chunks_is_deterministic():
    assert ex.sample_chunks("add.rn.f16", 5, 3) == ex.sample_chunks("add.rn.f16", 5, 3)
    assert ex.sample_chunks("add.rn.f16", 5, 3) != ex.sample_chunks("add.rn.f16", 5, 4)
    assert ex.sample_chunks("add.rn.f16", device.CHUNKS, 0) == list(range(device.CHUNKS))


# ---------------------------------------------------------------------------------------------
# The H100/H200 recordings (once they exist)
# ---------------------------------------------------------------------------------------------

RECORDINGS = {g: ex.DATA / f"exhaustive-{g}.npz" for g in ex.GPUS}


def test_both_recordings_are_present():
    assert all(p.exists() for p in RECORDINGS.values()), RECORDINGS


@functools.cache
def _recordings():
    return ex.load_recordings(ex.DATA, "all")


def test_recordings_name_their_hardware_and_cover_the_plan():
    recordings = _recordings()
    for gpu, (meta, digests) in recordings.items():
        assert gpu.upper() in meta["gpu"] and meta["compute_capability"] == "9.0", meta["gpu"]
        assert meta["chunk_bits"] == device.CHUNK_BITS and meta["index_bits"] == device.INDEX_BITS
        missing = set(TEXTS) - set(digests) - set(meta.get("rejected", {}))
        assert not missing, f"{gpu}: forms of the plan not recorded: {sorted(missing)[:10]}"
        assert all(d.shape == (device.CHUNKS,) and d.dtype == np.uint64 for d in digests.values())


def test_h100_and_h200_agree():
    recordings = _recordings()
    if len(recordings) < 2:
        pytest.skip("only one GPU recorded")
    (_, first), (_, second) = recordings.values()
    differ = [t for t in first if t in second and not np.array_equal(first[t], second[t])]
    assert not differ, f"H100 and H200 digests differ for {differ}"


def _check_sample(text: str, count: int) -> None:
    recordings = _recordings()
    entry = ex.plan_by_text()[text]
    result = ex.check_form(entry, ex.sample_chunks(text, count, 0), recordings)
    assert result.open_results == 0, f"{text}: the sm_90 profile leaves {result.open_results} results open"
    bad = {g: c for g, c in result.mismatched.items() if c}
    if bad:
        gpu, chunks = next(iter(bad.items()))
        pytest.fail("\n".join([f"{text}: chunks {chunks} differ on {gpu}"] + ex.diagnose(entry, chunks[0], int(recordings[gpu][1][text][chunks[0]]), gpu)))


#: A few forms that have a fast batched path today, checked on one chunk in the default run.
QUICK = ["add.rn.f16", "cvt.rn.f16.f32", "cvt.rn.satfinite.e4m3x2.f32"]


@pytest.mark.parametrize("text", QUICK)
def test_recording_one_chunk(text):
    _check_sample(text, 1)


@pytest.mark.heavy
@pytest.mark.parametrize("text", TEXTS)
def test_recording_two_chunks_per_form(text):
    _check_sample(text, 2)


def test_device_script_stands_alone():
    """The device script imports numpy (and CuPy when it runs), nothing of ptxspec, and prints
    its usage without arguments."""
    import subprocess
    import sys

    path = Path(device.__file__)
    source = path.read_text()
    assert "import ptxspec" not in source and "from ptxspec" not in source
    assert "import attrs" not in source and "import click" not in source
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 2 and "exhaustive_device.py run BUNDLE OUT" in proc.stdout
