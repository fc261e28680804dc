"""``ptxspec litmus-run``: litmus tests run on a GPU, and what silicon shows held against the model.

A test becomes a kernel that runs many instances of it at once (:mod:`.litmus_kernel`: placement,
randomised locations, stress, a synchronised start); the device script
(``conformance/silicon/litmus_device.py``, numpy and CuPy only) launches it again and again and
counts each outcome -- the final values of the terms the test's condition names. ``ptxspec
litmus-run`` prepares the kernels here (ptxas, sm_90a) and, where CuPy finds a GPU, runs them::

    ptxspec litmus-run --iterations 100000 tests/litmus/manual/MP.litmus      # on a GPU machine
    ptxspec litmus-run --prepare BUNDLE tests/litmus/manual                    # anywhere
    python3 conformance/silicon/litmus_device.py run BUNDLE OUT                # on the GPU machine
    ptxspec litmus-run --check conformance/data/sm_90/litmus-h100.json         # anywhere

``--generated N`` adds N tests of ``ptxspec litmus-gen`` (a seeded sample taken in turn from its
shapes, those a kernel can express). A recording keeps, per test, where it came from (the
manual's tests of ``tests/litmus/manual``, the Dat3M corpus beside the repository, or a generated
test, whose text the recording keeps) with the text's SHA-256, the observed terms, the number of
iterations and the histogram.

``--check`` is the soundness check: every outcome silicon showed must be a final state of a
consistent execution under the model (:func:`ptxspec.memory_model.check.check`, both engines). It
reports, per test, the outcomes the model allows that silicon never showed (how much weaker the
model is than this chip), and the tests whose condition silicon satisfied -- the weak behaviours
the chip shows, with their rates. Exit status 1 when an observed outcome is forbidden.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
import click

from ptxspec.conformance import litmus_kernel
from ptxspec.memory_model import litmus
from ptxspec.spec.errors import Location, PtxSpecError

REPO = Path(__file__).resolve().parent.parent
MANUAL = REPO / "tests" / "litmus" / "manual"
DAT3M = REPO.parent / "shared" / "litmus" / "dat3m"
#: Where the tests of each corpus lie (a recording names a test by its path below its corpus).
CORPORA = {"manual": MANUAL, "dat3m": DAT3M}


@attrs.frozen
class Source:
    """One test and where it came from: ``origin`` is ``manual``, ``dat3m``, ``generated`` or
    ``file``; ``path`` is relative to its corpus (the test's name for a generated one)."""

    origin: str
    path: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def parse(self) -> litmus.LitmusTest:
        return litmus.parse(self.text, self.where)

    @property
    def where(self) -> str:
        """The test's file as errors name it (a generated test: its name)."""
        root = CORPORA.get(self.origin)
        return str(root / self.path) if root is not None else self.path


def _origin_of(path: Path) -> tuple[str, str]:
    resolved = path.resolve()
    for origin, root in CORPORA.items():
        if resolved.is_relative_to(root.resolve()):
            return origin, str(resolved.relative_to(root.resolve()))
    return "file", str(path)


def file_sources(paths: Iterable[str]) -> list[Source]:
    """The tests of ``paths`` (files, or folders searched for ``*.litmus``), in order."""
    out = []
    for name in paths:
        path = Path(name)
        files = sorted(path.rglob("*.litmus")) if path.is_dir() else [path]
        if path.is_dir() and not files:
            raise PtxSpecError("no .litmus files in this folder", where=Location(name))
        for file in files:
            try:
                text = file.read_text(encoding="utf-8-sig")
            except OSError as error:
                raise PtxSpecError(f"cannot read the litmus file: {error.strerror or error}", where=Location(str(file))) from None
            out.append(Source(*_origin_of(file), text))
    return out


def generated_sources(count: int, seed: int, like: str = "*") -> list[Source]:
    """``count`` tests of litmus-gen that a kernel can express, whose names match the pattern
    ``like`` (``*+diff-gpu``): a seeded sample of them, taken in turn from the shapes (the same
    tests for the same arguments)."""
    import fnmatch
    import random

    from ptxspec.conformance import litmus_gen

    if count == 0:
        return []
    by_shape: dict[str, list[Source]] = {}
    for name, text in litmus_gen.generate():
        if not fnmatch.fnmatchcase(name, like):
            continue
        try:
            litmus_kernel.kernel(litmus.parse(text, name), "k")
        except litmus_kernel.NotRunnable:
            continue
        by_shape.setdefault(litmus_gen.shape_of(name) or name, []).append(Source("generated", name, text))
    rng = random.Random(seed)
    for tests in by_shape.values():
        rng.shuffle(tests)
    out: list[Source] = []
    while len(out) < count and any(by_shape.values()):
        for tests in by_shape.values():
            if tests and len(out) < count:
                out.append(tests.pop())
    return out


# ---------------------------------------------------------------------------------------------
# The bundle
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Settings:
    iterations: int = 100_000
    seed: int = 0
    copies: int = 128
    """Instances per launch: 32 per copy."""
    stress_blocks: int = 132
    stress_rounds: int = 256

    def json(self) -> dict:
        return attrs.asdict(self)


def kernel_name(index: int) -> str:
    return f"litmus_{index}"


def prepare(sources: Sequence[Source], bundle: Path, settings: Settings, ptxas: str = "ptxas") -> tuple[list[Source], list[tuple[Source, str]]]:
    """Write the bundle (kernels assembled for sm_90a, and the plan); the tests kept, and those
    left out with the reason (no kernel form, or ptxas refused the kernel)."""
    from ptxspec.conformance.silicon.campaign import HEADER, assemble_each, assemble_module
    from ptxspec.conformance.silicon.litmus_device import CUBIN_FILE, PLAN_FILE

    kernels, refused = [], []
    for index, source in enumerate(sources):
        try:
            kernels.append((source, litmus_kernel.kernel(source.parse(), kernel_name(index))))
        except litmus_kernel.NotRunnable as error:
            refused.append((source, error.message))
    accepted, rejected = assemble_each(kernels, lambda item: HEADER + item[1].ptx, ptxas)
    refused += [(source, f"ptxas: {message.splitlines()[0] if message else ''}") for (source, _), message in rejected]
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / CUBIN_FILE).write_bytes(assemble_module(HEADER + "".join(k.ptx for _, k in accepted), ptxas) if accepted else b"")
    plan = {
        "run": settings.json(),
        "tests": [
            k.plan() | {"origin": s.origin, "path": s.path, "sha256": s.sha256} | ({"text": s.text} if s.origin == "generated" else {}) for s, k in accepted
        ],
        "refused": [{"origin": s.origin, "path": s.path, "why": why} for s, why in refused],
    }
    (bundle / PLAN_FILE).write_text(json.dumps(plan, indent=1) + "\n")
    return [s for s, _ in accepted], refused


def recording_from(bundle: Path, device_output: dict) -> dict:
    """The recording kept in the repository: the device's histograms with each test's origin,
    path, text hash (and a generated test's text), from the bundle's plan."""
    from ptxspec.conformance.silicon.litmus_device import PLAN_FILE

    plan = json.loads((bundle / PLAN_FILE).read_text())
    planned = {test["kernel"]: test for test in plan["tests"]}
    tests = []
    for measured in device_output["tests"]:
        keep = {key: planned[measured["kernel"]][key] for key in ("origin", "path", "sha256", "text") if key in planned[measured["kernel"]]}
        tests.append(keep | {key: measured[key] for key in ("test", "iterations", "observed", "outcomes", "seconds")})
    skipped = [{"test": s["test"], "why": s["why"]} for s in device_output.get("skipped", [])]
    return {"run": device_output["run"], "meta": device_output["meta"], "refused": plan["refused"], "skipped": skipped, "tests": tests}


# ---------------------------------------------------------------------------------------------
# Checking a recording against the model
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class TestReport:
    name: str
    origin: str
    path: str
    iterations: int
    observed: tuple[str, ...]
    seen: dict  # outcome (tuple of ints) -> count
    allowed: frozenset | None  # None: the model did not decide
    condition_count: int  # outcomes satisfying the test's condition formula
    quantifier: str  # exists / ~exists / forall

    @property
    def forbidden_seen(self) -> dict:
        return {} if self.allowed is None else {o: n for o, n in self.seen.items() if o not in self.allowed}

    @property
    def never_seen(self) -> frozenset:
        return frozenset() if self.allowed is None else self.allowed - frozenset(self.seen)


def source_of(entry: dict) -> Source | str:
    """The test a recording entry names, or why it cannot be had (the Dat3M corpus is absent, or
    the file changed since the recording)."""
    if entry["origin"] == "generated":
        source = Source("generated", entry["path"], entry["text"])
    else:
        path = Path(Source(entry["origin"], entry["path"], "").where)
        if not path.is_file():
            return f"{path} is absent"
        source = Source(entry["origin"], entry["path"], path.read_text(encoding="utf-8-sig"))
    if source.sha256 != entry["sha256"]:
        return f"{entry['path']} changed since it was recorded (SHA-256 differs)"
    return source


def _normalised(values: Sequence[int], widths: Sequence[int]) -> tuple[int, ...]:
    return tuple(v & ((1 << w) - 1) for v, w in zip(values, widths))


def judge(entry: dict, source: Source, *, engine: str = "both", timeout_s: float | None = None) -> TestReport:
    """The model's final states of the test beside the recorded outcomes."""
    from ptxspec.memory_model.check import check, term_name
    from ptxspec.memory_model.engine import holds
    from ptxspec.memory_model.lowering import lower
    from ptxspec.memory_model.program import LocationTerm

    test = source.parse()
    program = lower(test)
    kernel = litmus_kernel.kernel(test, "k")
    bits = {loc.name: loc.bits for loc in kernel.locations}
    terms = {term_name(program, t): t for t in program.observed}
    if sorted(entry["observed"]) != sorted(terms):
        raise PtxSpecError(f"{entry['test']}: the recording observes {entry['observed']}, the test {sorted(terms)}", where=source.where)
    order = [terms[name] for name in entry["observed"]]
    widths = [bits[t.name] if isinstance(t, LocationTerm) else 64 for t in order]
    verdict = check(program, engine=engine, timeout_s=timeout_s, report_undefined=False)
    allowed = None
    if verdict.states is not None:
        allowed = frozenset(_normalised([dict(state)[t] for t in order], widths) for state in verdict.states)
    seen: dict[tuple[int, ...], int] = {}
    for row in entry["outcomes"]:
        key = _normalised([int(v) for v in row[:-1]], widths)
        seen[key] = seen.get(key, 0) + int(row[-1])
    satisfying = sum(n for o, n in seen.items() if holds(program.condition.formula, dict(zip(order, o))))
    return TestReport(
        entry["test"], entry["origin"], entry["path"], entry["iterations"], tuple(entry["observed"]), seen, allowed, satisfying, program.condition.quantifier
    )


ENTRY_KEYS = {"test": str, "origin": str, "path": str, "sha256": str, "iterations": int, "observed": list, "outcomes": list}


def load_recording(path: Path) -> dict:
    """A recording (``litmus-*.json``), its shape checked: a located error for a file that is not
    JSON or lacks what a recording holds, never a traceback."""
    from ptxspec.conformance.state_json import load_json_file

    record = load_json_file(str(path), "recording", 'a recording is {"run": ..., "meta": ..., "tests": [...]} (ptxspec litmus-run --out)')
    if not isinstance(record, dict) or not isinstance(record.get("tests"), list):
        raise PtxSpecError('a recording is one JSON object with a list "tests" (ptxspec litmus-run --out)', where=Location(str(path)))
    for i, entry in enumerate(record["tests"]):
        for key, kind in ENTRY_KEYS.items():
            if not isinstance(entry, dict) or not isinstance(entry.get(key), kind):
                raise PtxSpecError(f"tests[{i}]: {key!r} is missing or not a {kind.__name__}", where=Location(str(path)))
        width = len(entry["observed"]) + 1  # the observed values, then the count
        if any(not isinstance(row, list) or len(row) != width or not all(_is_count(v) for v in row) for row in entry["outcomes"]):
            raise PtxSpecError(f"tests[{i}]: each outcome is {width - 1} values and a count, all whole numbers", where=Location(str(path)))
        if entry["origin"] == "generated" and not isinstance(entry.get("text"), str):
            raise PtxSpecError(f"tests[{i}]: a generated test keeps its 'text'", where=Location(str(path)))
    return record


def _is_count(value) -> bool:
    """A recorded value or count: a whole number, as a JSON integer or a decimal string."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def check_recording(path: Path, *, engine: str = "both", timeout_s: float | None = None, select=None) -> tuple[list[TestReport], list[tuple[str, str]]]:
    """Every test of the recording judged (``select(entry)`` picks some), and those that could not
    be (name, why)."""
    record = load_recording(Path(path))
    reports, skipped = [], []
    for entry in record["tests"]:
        if select is not None and not select(entry):
            continue
        source = source_of(entry)
        if isinstance(source, str):
            skipped.append((entry["test"], source))
            continue
        reports.append(judge(entry, source, engine=engine, timeout_s=timeout_s))
    return reports, skipped


def family_of(report: TestReport) -> str:
    """A test's family for the report: a generated test's shape; a Dat3M test's folder; the
    manual's tests together."""
    from ptxspec.conformance.litmus_gen import shape_of

    if report.origin == "generated":
        return shape_of(report.name) or report.name
    if report.origin == "dat3m":
        return "Dat3M " + report.path.split("/")[0]
    return {"manual": "the manual's tests (tests/litmus/manual)"}.get(report.origin, report.origin)


def report_lines(reports: Sequence[TestReport], skipped: Sequence[tuple[str, str]]) -> list[str]:
    lines = []
    unsound = [r for r in reports if r.forbidden_seen]
    undecided = [r for r in reports if r.allowed is None]
    iterations = sum(r.iterations for r in reports)
    lines.append(
        f"{len(reports)} tests, {iterations:,} iterations; {len(unsound)} show an outcome the model forbids; {len(undecided)} undecided; {len(skipped)} not checked"
    )
    for r in unsound:
        for outcome, n in sorted(r.forbidden_seen.items()):
            shown = ", ".join(f"{name}={value}" for name, value in zip(r.observed, outcome))
            lines.append(f"  FORBIDDEN but seen: {r.name}: {shown} ({n} of {r.iterations})")
    for name, why in skipped:
        lines.append(f"  not checked: {name}: {why}")
    weak = [r for r in reports if r.quantifier == "exists" and r.condition_count]
    lines.append(f"conditions seen on silicon ({len(weak)} tests whose 'exists' outcome the chip showed; for the classic shapes, their weak outcome):")
    for r in sorted(weak, key=lambda r: -r.condition_count / r.iterations):
        lines.append(f"  {r.name}: {r.condition_count} of {r.iterations} ({r.condition_count / r.iterations:.3%})")
    families: dict[str, list[TestReport]] = {}
    for r in reports:
        families.setdefault(family_of(r), []).append(r)
    lines.append("allowed outcomes never seen, per family (allowed / never seen):")
    for family, group in sorted(families.items()):
        allowed = sum(len(r.allowed or ()) for r in group)
        never = sum(len(r.never_seen) for r in group)
        lines.append(f"  {family}: {len(group)} tests, {allowed} allowed outcomes, {never} never seen")
    return lines


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


def run_on_this_machine(bundle: Path) -> dict:
    """Run the bundle with CuPy here (a GPU machine with ptxspec installed)."""
    try:
        import cupy as cp
    except ImportError:
        raise PtxSpecError("running needs CuPy and a GPU; use --prepare BUNDLE here and run conformance/silicon/litmus_device.py on the GPU machine") from None
    from ptxspec.conformance.silicon import litmus_device

    return litmus_device.run_bundle(cp, bundle)


@click.command("litmus-run")
@click.argument("tests", nargs=-1)
@click.option("--iterations", type=click.IntRange(1, 10**9), default=100_000, show_default=True, help="Runs of each test (rounded up to whole launches).")
@click.option(
    "--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True, help="Seeds the placements of every launch (and the --generated sample)."
)
@click.option("--generated", type=click.IntRange(0, None), default=0, help="Add this many litmus-gen tests (a seeded sample that a kernel can express).")
@click.option("--generated-like", "like", default="*", show_default=True, help="Only generated tests whose name matches this pattern ('*+diff-gpu').")
@click.option("--prepare", "bundle", type=click.Path(file_okay=False), default=None, help="Only write the bundle (kernels and plan) for litmus_device.py.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the recording (JSON) here.")
@click.option("--check", "recording", type=click.Path(dir_okay=False, exists=True), default=None, help="Check a recording against the model instead.")
@click.option("--engine", type=click.Choice(["both", "z3", "explicit"]), default="both", show_default=True, help="With --check: the model's engines.")
def litmus_run_command(tests, iterations, seed, generated, like, bundle, out, recording, engine) -> None:
    """Run litmus tests on a GPU and histogram their outcomes, or --check a recording.

    \b
    Examples:
      ptxspec litmus-run --prepare /tmp/bundle --generated 100 tests/litmus/manual
      ptxspec litmus-run --check conformance/data/sm_90/litmus-h100.json
    """
    if recording is not None:
        if tests or generated or bundle or out:
            raise click.UsageError("--check reads a recording: give no tests, --generated, --prepare or --out with it")
        reports, skipped = check_recording(Path(recording), engine=engine)
        for line in report_lines(reports, skipped):
            click.echo(line)
        raise SystemExit(1 if any(r.forbidden_seen for r in reports) else 0)
    if engine != "both":
        raise click.UsageError("--engine is for --check")
    if bundle is not None and out is not None:
        raise click.UsageError("--prepare only writes the bundle; --out is the recording of a run")
    sources = file_sources(tests) + generated_sources(generated, seed, like)
    if not sources:
        raise click.UsageError("give litmus tests (files or folders), --generated N, or --check RECORDING")
    settings = Settings(iterations=iterations, seed=seed)
    target = Path(bundle) if bundle is not None else Path(tempfile.mkdtemp(prefix="ptxspec-litmus-"))
    kept, refused = prepare(sources, target, settings)
    for source, why in refused:
        click.echo(f"not run: {source.origin}:{source.path}: {why}", err=True)
    click.echo(f"{len(kept)} tests in the bundle {target}", err=True)
    if bundle is not None:
        return
    record = recording_from(target, run_on_this_machine(target))
    text = json.dumps(record, indent=1) + "\n"
    if out is not None:
        from ptxspec.conformance.cli import write_output

        write_output(out, lambda stream: stream.write(text.encode()))
    else:
        click.echo(text, nl=False)
