"""``ptxspec litmus``: herd7's output, JSON, pictures, exit codes, and the manual's own litmus tests.

The manual's examples of §8.10 live in tests/litmus/manual/ (written for this project from the
manual's text; each file quotes the sentence that gives its verdict), with those verdicts in
tests/litmus/manual/expected.csv. Both engines must reach them. The expected final states of SB
below come from the manual's reasoning (§8.10.6), not from the program's output.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from ptxspec.conformance.litmus_cli import litmus_command, load
from ptxspec.memory_model import check as check_module
from ptxspec.memory_model.check import EngineDisagreement, check, model_named
from ptxspec.memory_model.engine import undecided

MANUAL = Path(__file__).resolve().parent / "litmus" / "manual"
MANUAL_CSV = MANUAL / "expected.csv"
SB_SC = MANUAL / "SB-fence.sc.litmus"
SB_ACQ_REL = MANUAL / "SB-fence.acq_rel.litmus"
MP = MANUAL / "MP.litmus"


def expected_rows() -> list[tuple[str, int]]:
    with MANUAL_CSV.open(newline="") as stream:
        return [(row["test"], int(row["expected"])) for row in csv.DictReader(stream)]


def invoke(*args: str):
    return CliRunner().invoke(litmus_command, [str(a) for a in args], catch_exceptions=False)


def json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


# ---- the manual's examples ------------------------------------------------------------------------------


def test_every_manual_file_is_in_the_csv():
    files = sorted(p.name for p in MANUAL.glob("*.litmus"))
    assert files == sorted(name for name, _ in expected_rows())


@pytest.mark.parametrize("engine", ["both", "z3", "explicit"])
@pytest.mark.parametrize("name,expected", expected_rows())
def test_manual_example_has_the_manual_verdict(name, expected, engine):
    verdict = check(load(MANUAL / name), engine=engine)
    assert verdict.ok is not None
    assert int(verdict.ok) == expected, verdict
    assert verdict.undefined is None, verdict.undefined  # the manual's patterns are well defined


def _values(verdict) -> set[tuple[int, ...]]:
    return {tuple(value for _, value in state) for state in verdict.states}


def test_sb_fence_sc_states_are_the_three_the_manual_allows():
    # §8.10.6: either F1 precedes F2 in Fence-SC order (then R2 reads W1) or the reverse (R1 reads
    # W2); so (r0, r1) = (0, 0) is the one pair that cannot happen.
    assert _values(check(load(SB_SC))) == {(0, 1), (1, 0), (1, 1)}


def test_sb_fence_acq_rel_allows_all_four_states():
    # §8.10.6: with fence.acq_rel both reads may return the initial value; the other three pairs
    # are sequentially consistent interleavings.
    assert _values(check(load(SB_ACQ_REL))) == {(0, 0), (0, 1), (1, 0), (1, 1)}


# ---- herd7's text ----------------------------------------------------------------------------------------


def test_text_has_herds_shape():
    result = invoke(SB_SC)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Test SB-fence.sc Allowed"
    assert lines[1] == "States 3"
    assert lines[2:5] == ["P0:r0=0; P1:r1=1;", "P0:r0=1; P1:r1=0;", "P0:r0=1; P1:r1=1;"]
    assert lines[5] == "Ok"
    assert lines[6] == "Witnesses"
    assert lines[7] == "Positive: 0 Negative: 3"
    assert re.fullmatch(r"Condition ~exists \(P0:r0 == 0 /\\ P1:r1 == 0\)", lines[8])
    assert lines[9] == "Observation SB-fence.sc Never 0 3"
    assert re.fullmatch(r"Time SB-fence\.sc \d+\.\d\d", lines[10])


def test_text_sometimes_and_required():
    out = invoke(SB_ACQ_REL).stdout
    assert "Observation SB-fence.acq_rel Sometimes 1 3" in out
    out = invoke(MANUAL / "CoWR-alias.litmus").stdout
    assert out.startswith("Test CoWR-alias Required\n")
    assert "Observation CoWR-alias Always 1 0" in out


def test_directory_is_searched_recursively_in_order(tmp_path):
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    (nested / "one.litmus").write_text(SB_SC.read_text())
    (tmp_path / "two.litmus").write_text(MP.read_text())
    (tmp_path / "notes.txt").write_text("not a test")
    result = invoke(tmp_path)
    assert result.exit_code == 0, result.output
    assert re.findall(r"^Test (\S+)", result.stdout, re.M) == ["SB-fence.sc", "MP"]


# ---- JSON ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manual_run():
    """The manual's corpus checked once with every reporting option (JSON, witnesses, the expected
    verdicts): the three tests below read different parts of one run."""
    return invoke("--json", "--witness", "--expect", MANUAL_CSV, MANUAL)


def test_json_one_object_per_test_with_the_schema(manual_run):
    result = manual_run
    assert result.exit_code == 0, result.output
    objects = json_lines(result.stdout)
    assert len(objects) == len(expected_rows())
    for obj in objects:
        assert set(obj) >= {"file", "name", "ok", "observation", "states", "time_s", "engines"}
        assert obj["ok"] in (True, False)
        assert obj["observation"] in ("Sometimes", "Never", "Always")
        assert isinstance(obj["time_s"], float) and obj["time_s"] >= 0
        assert set(obj["engines"]) == {"explicit", "z3"}
        assert all(engine["ok"] == obj["ok"] for engine in obj["engines"].values())
        assert isinstance(obj["states"], list) and obj["states"]
        assert all(isinstance(v, int) for state in obj["states"] for v in state.values())
        assert obj["positive"] + obj["negative"] == len(obj["states"])
        assert Path(obj["file"]).name.endswith(".litmus")


def test_json_unknown_when_undecided(monkeypatch):
    # An engine that ran out of time answers "undecided"; the verdict is then null, never a guess.
    monkeypatch.setattr(check_module, "engine_run", lambda name: lambda program, model, **kw: undecided(name, 0.5))
    result = invoke("--json", "--timeout", "0.5", SB_SC)
    assert result.exit_code == 0
    (obj,) = json_lines(result.stdout)
    assert obj["ok"] is None and obj["states"] is None and obj["observation"] is None
    text = invoke("--timeout", "0.5", SB_SC).stdout
    assert "\nUnknown\n" in text and "\nOk\n" not in text and "\nNo\n" not in text


def test_one_engine_undecided_takes_the_other(monkeypatch):
    real = check_module.engine_run

    def engine_run(name):
        if name == "z3":
            return lambda program, model, **kw: undecided(name, 0.1)
        return real(name)

    monkeypatch.setattr(check_module, "engine_run", engine_run)
    verdict = check(load(SB_SC))
    assert verdict.ok is True and len(verdict.states) == 3


# ---- engines disagreeing --------------------------------------------------------------------------------


def test_engines_that_disagree_are_an_error_naming_the_test(monkeypatch):
    real = check_module.engine_run

    def engine_run(name):
        def run(program, model, **kw):
            result = real(name)(program, model, **kw)
            if name == "z3":  # a broken engine: loses one final state
                states = frozenset(sorted(result.states, key=str)[1:])
                return attrs.evolve(result, states=states)
            return result

        return run

    monkeypatch.setattr(check_module, "engine_run", engine_run)
    with pytest.raises(EngineDisagreement) as caught:
        check(load(SB_SC))
    message = str(caught.value)
    assert "SB-fence.sc" in message and "explicit:" in message and "z3:" in message
    assert "state only explicit finds" in message
    assert "explicit witness:" in message and "z3 witness:" in message
    result = invoke(SB_SC)
    assert result.exit_code == 3
    assert "disagree" in result.stderr


# ---- --expect and exit codes -----------------------------------------------------------------------------


def test_expect_all_as_expected_exits_0(manual_run):
    result = manual_run
    assert result.exit_code == 0, result.output
    assert f"{len(expected_rows())} of {len(expected_rows())} verdicts as expected" in result.stderr


def test_expect_a_differing_verdict_exits_1_and_names_the_test(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "SB.litmus").write_text(SB_SC.read_text())
    (tmp_path / "MP.litmus").write_text(MP.read_text())
    expect = tmp_path / "expected.csv"
    expect.write_text("test,expected\nt/SB.litmus,0\nMP.litmus,1\n")
    result = invoke("--expect", expect, tmp_path)
    assert result.exit_code == 1
    assert "SB.litmus: expected No (0), got Ok (1)" in result.stderr
    assert "MP.litmus" not in result.stderr.replace("1 of 2", "")


def test_bad_csv_exits_2(tmp_path):
    expect = tmp_path / "e.csv"
    expect.write_text("name,verdict\nx,1\n")
    result = invoke("--expect", expect, SB_SC)
    assert result.exit_code == 2
    assert f"{expect}:1:1:" in result.stderr


BROKEN = """PTX broken
{
x=0;
}
 P0@cta 0,gpu 0         ;
 st.weak x, 1           ;
 frobnicate x           ;
exists
(x == 1)
"""


def test_parse_error_is_located_and_exits_2(tmp_path):
    bad = tmp_path / "broken.litmus"
    bad.write_text(BROKEN)
    result = invoke(bad)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert re.match(rf"ptxspec: error: {re.escape(str(bad))}:7:\d+: ", line), line


def test_parse_error_in_a_directory_still_checks_the_rest(tmp_path):
    (tmp_path / "a_broken.litmus").write_text(BROKEN)
    (tmp_path / "b_good.litmus").write_text(MP.read_text())
    result = invoke(tmp_path)
    assert result.exit_code == 2
    assert "Test MP Allowed" in result.stdout
    assert "a_broken.litmus:7:" in result.stderr


def test_missing_file_exits_2():
    result = invoke("no/such/file.litmus")
    assert result.exit_code == 2
    assert "no/such/file.litmus" in result.stderr and "no such file" in result.stderr


def test_bad_options_exit_2(tmp_path):
    assert invoke("--model", "ptx-9", SB_SC).exit_code == 2
    assert invoke("--engine", "cvc5", SB_SC).exit_code == 2
    assert invoke("--unroll", "0", SB_SC).exit_code == 2
    assert invoke("--timeout", "-1", SB_SC).exit_code == 2
    # several tests and a picture file without {name}
    assert invoke("--svg", tmp_path / "x.svg", MANUAL).exit_code == 2


# ---- --why, --witness, pictures --------------------------------------------------------------------------


def test_why_names_axioms_that_alone_forbid_sb_with_fence_sc():
    result = invoke("--json", "--why", SB_SC)
    (obj,) = json_lines(result.stdout)
    why = obj["why"]
    model = model_named("ptx-8.7")
    names = {axiom.name for axiom in model.axioms}
    assert why and set(why) <= names
    # The axioms named suffice: the model with only those axioms still forbids the outcome, and
    # the model with none of them allows it (so --why does not name an idle axiom list).
    only = attrs.evolve(model, axioms=[a for a in model.axioms if a.name in why])
    without = attrs.evolve(model, axioms=[a for a in model.axioms if a.name not in why])
    from ptxspec.memory_model import explicit

    program = load(SB_SC)
    assert explicit.run(program, only).ok is True
    assert explicit.run(program, without).ok is False
    text = invoke("--why", SB_SC).stdout
    assert "Why: the outcome is forbidden by" in text
    assert all(name in text for name in why)
    # and a rejected candidate with the outcome: both reads return 0
    assert f"A candidate execution with the outcome, rejected by {why[0]}:" in text
    assert re.search(r"ld\.weak r0, y +R y=0", text) and re.search(r"ld\.weak r1, x +R x=0", text)
    assert re.search(rf"^  forbidden by {why[0]}: (e\d+ -\S+-> e\d+ ?)+$", text, re.M)


def test_why_on_lb_names_no_thin_air_or_no_candidate():
    # §8.10.4: x == y == 0 at the end of LB. The outcome x or y != 0 is either excluded before the
    # model (no value but 0 can be computed) or by No-Thin-Air.
    text = invoke("--why", MANUAL / "LB.litmus").stdout
    assert "Why: no candidate execution has the outcome" in text or "No-Thin-Air" in text


def test_why_on_an_allowed_outcome_says_so():
    text = invoke("--why", SB_ACQ_REL).stdout
    assert "Why: the outcome is not forbidden" in text


def _written(label: str) -> int | None:
    match = re.fullmatch(r"W \S+=(\d+)(?: \(\S+\))?", label) or re.fullmatch(r"RMW \S+ \S+->(\d+)(?: \(\S+\))?", label)
    return None if match is None else int(match.group(1))


def _read(label: str) -> int | None:
    match = re.fullmatch(r"R \S+=(\d+)(?: \(\S+\))?", label) or re.fullmatch(r"RMW \S+ (\d+)->\d+(?: \(\S+\))?", label)
    return None if match is None else int(match.group(1))


def _check_witness(obj: dict) -> None:
    """A witness is an execution: every read reads from one write of its value; po stays in a thread."""
    events = {e["eid"]: e for e in obj["events"]}
    relations = obj["relations"]
    sources: dict[int, list[int]] = {}
    for w, r in relations["rf"]:
        sources.setdefault(r, []).append(w)
        assert _written(events[w]["event"]) == _read(events[r]["event"]) is not None, (events[w], events[r])
    for eid, event in events.items():
        if _read(event["event"]) is not None:
            assert len(sources.get(eid, [])) == 1, event
    for a, b in relations["po"]:
        assert events[a]["thread"] == events[b]["thread"] is not None


def test_witness_shows_the_allowed_outcome():
    result = invoke("--json", "--witness", SB_ACQ_REL)
    (obj,) = json_lines(result.stdout)
    witness = obj["witness"]
    _check_witness(witness)
    reads = sorted(e["event"] for e in witness["events"] if e["event"].startswith("R "))
    assert reads == ["R x=0", "R y=0"]
    text = invoke("--witness", SB_ACQ_REL).stdout
    assert "Witness (an execution that satisfies the condition):" in text
    assert re.search(r"^  rf: ", text, re.M) and re.search(r"^  fr: ", text, re.M)


def test_witness_of_a_refuted_forall(tmp_path):
    # Atomicity 2 (§8.10.3) written as "forall x == 2" is refuted by the lost update.
    test = tmp_path / "A2.litmus"
    test.write_text((MANUAL / "Atomicity-2.litmus").read_text().replace("exists\n(x == 1)", "forall\n(x == 2)"))
    (obj,) = json_lines(invoke("--json", "--witness", test).stdout)
    assert obj["ok"] is False
    _check_witness(obj["witness"])
    assert sorted(e["event"] for e in obj["witness"]["events"] if e["event"].startswith("RMW")) == ["RMW x 0->1", "RMW x 0->1"]


def _check_svg(path: Path, events: int) -> None:
    root = ElementTree.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    groups = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("id", "").startswith("e")]
    assert len(groups) == events


def _check_dot(text: str) -> None:
    assert text.startswith("digraph ")
    assert text.count("{") == text.count("}")
    assert "cluster_t0" in text and "cluster_init" in text
    for line in text.splitlines():
        if "->" in line:
            assert re.fullmatch(r'  e\d+ -> e\d+ \[label="[^"]+", .*\];', line), line


def test_dot_and_svg_of_a_witness(tmp_path):
    dot, svg = tmp_path / "sb.dot", tmp_path / "sb.svg"
    result = invoke("--dot", dot, "--svg", svg, SB_ACQ_REL)
    assert result.exit_code == 0, result.output
    _check_dot(dot.read_text())
    assert re.search(r'label="rf"', dot.read_text()) and re.search(r'label="fr"', dot.read_text())
    _check_svg(svg, events=8)  # 2 initial writes + 3 per thread
    first = svg.read_bytes()
    invoke("--svg", svg, SB_ACQ_REL)
    assert svg.read_bytes() == first  # the same execution, the same bytes


def test_picture_of_a_forbidden_outcome_shows_the_cycle(tmp_path):
    # SB with fence.sc: the picture is a rejected candidate with both reads of 0, and the
    # highlighted edges close a cycle of the axiom that --why names.
    dot, svg = tmp_path / "sb.dot", tmp_path / "sb.svg"
    result = invoke("--dot", dot, "--svg", svg, SB_SC)
    assert result.exit_code == 0, result.output
    text = dot.read_text()
    _check_dot(text)
    (obj,) = json_lines(invoke("--json", "--why", SB_SC).stdout)
    assert f"a cycle forbidden by {obj['why'][0]}" in text
    labels = re.findall(r'label="e\d+: ld\.weak r\d, [xy]\\n(R [xy]=\d)"', text)
    assert sorted(labels) == ["R x=0", "R y=0"]
    bold = [tuple(map(int, m)) for m in re.findall(r"  e(\d+) -> e(\d+) \[.*penwidth=3", text)]
    assert bold
    succ = dict(bold)
    assert len(succ) == len(bold)  # a simple cycle: one way out of each event
    start = bold[0][0]
    node, steps = succ[start], 1
    while node != start:
        node, steps = succ[node], steps + 1
        assert steps <= len(bold)
    _check_svg(svg, events=8)


def test_pictures_for_several_tests_use_name(tmp_path):
    result = invoke("--svg", str(tmp_path / "{name}.svg"), SB_SC, MP)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MP.svg", "SB-fence.sc.svg"]
    for path in tmp_path.iterdir():
        ElementTree.parse(path)


# ---- models and engines ----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["z3", "explicit"])
def test_single_engine_json_reports_that_engine(engine):
    (obj,) = json_lines(invoke("--json", "--engine", engine, MP).stdout)
    assert set(obj["engines"]) == {engine} and obj["ok"] is True


def test_model_ptx_6_0_runs_and_keeps_proxy_free_verdicts():
    # MP and SB use no proxy: the earlier model gives them the same verdicts (§8.10.6).
    result = invoke("--json", "--model", "ptx-6.0", MP, SB_SC, SB_ACQ_REL)
    assert result.exit_code == 0, result.output
    assert [obj["ok"] for obj in json_lines(result.stdout)] == [True, True, True]
    assert all(obj["model"] == "ptx-6.0" for obj in json_lines(result.stdout))


def test_model_ptx_6_0_has_no_proxies():
    # Without proxies, overlap is on the physical location: a thread's read after its own write
    # through another alias sees that write, fence.proxy.alias or not (program order, §8.10.5/6).
    nofence = MANUAL / "CoWR-alias-nofence.litmus"
    assert check(load(nofence), model="ptx-8.7").ok is True
    assert check(load(nofence), model="ptx-6.0").ok is False


def test_unroll_option_is_accepted():
    result = invoke("--unroll", "1", MP)
    assert result.exit_code == 0, result.output


# ---- through the ptxspec console script's entry point ------------------------------------------------------


@pytest.fixture
def ptxspec_main(monkeypatch):
    """``ptxspec.conformance.cli.main`` with the litmus command wired in as the lead wires it."""
    from ptxspec.conformance import cli as cli_module

    if "litmus" not in cli_module.cli.commands:
        monkeypatch.setitem(cli_module.cli.commands, "litmus", litmus_command)

    def run(*args: str) -> int:
        with pytest.raises(SystemExit) as done:
            cli_module.main(["litmus", *map(str, args)])
        return done.value.code

    return run


def test_exit_codes_through_main(ptxspec_main, tmp_path, capsys):
    assert ptxspec_main(MP) == 0
    assert "Test MP Allowed" in capsys.readouterr().out
    expect = tmp_path / "e.csv"
    expect.write_text(f"test,expected\n{MP},0\n")
    assert ptxspec_main("--expect", expect, MP) == 1
    bad = tmp_path / "broken.litmus"
    bad.write_text(BROKEN)
    assert ptxspec_main(bad) == 2
    err = capsys.readouterr().err
    assert f"{bad}:7:" in err and "Traceback" not in err
    assert ptxspec_main("--engine", "nope", MP) == 2


# ---- the documentation's examples are the command's output ------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs" / "memory-model.rst"


def _comparable(lines: list[str]) -> list[str]:
    """Drop what may change without the verdict changing: times, and the manual's sentence under an axiom."""
    kept, in_sentence = [], False
    for line in lines:
        if re.match(r"^  \S+ \(§[\d.]+, \w+\)$", line):
            in_sentence = True
            kept.append(line)
            continue
        if in_sentence and line.startswith("    "):
            continue
        in_sentence = False
        if not line.startswith("Time ") and line.strip():
            kept.append(line)
    return kept


def _docs_examples() -> list[tuple[list[str], list[str]]]:
    examples, lines = [], DOCS.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("   $ ptxspec litmus "):
            args = line.split()[3:]
            block = []
            for following in lines[i + 1 :]:
                if following and not following.startswith("   "):
                    break
                block.append(following[3:])
            examples.append((args, block))
    return examples


def test_docs_examples_are_the_commands_output(monkeypatch):
    monkeypatch.chdir(DOCS.parent.parent)
    examples = _docs_examples()
    assert len(examples) == 2
    for args, block in examples:
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert _comparable(result.stdout.splitlines()) == _comparable(block), args


def test_docs_model_text_is_the_code():
    """The model block of the docs is ``render.model_text(PTX_8_7)``; PTXSPEC_UPDATE_DOCS=1 rewrites it."""
    import os

    from ptxspec.memory_model.render import model_text

    text = DOCS.read_text()
    begin = text.index(".. BEGIN model text")
    start = text.index(".. code-block:: text\n\n", begin) + len(".. code-block:: text\n\n")
    end = text.index("\n\n.. END model text", start)
    current = "\n".join("   " + line for line in model_text(model_named("ptx-8.7")).splitlines())
    if os.environ.get("PTXSPEC_UPDATE_DOCS") == "1" and text[start:end] != current:
        DOCS.write_text(text[:start] + current + text[end:])
        text = DOCS.read_text()
    assert text[start:end] == current, "docs/memory-model.rst shows an old model: rerun with PTXSPEC_UPDATE_DOCS=1"


def test_docs_name_every_definition_and_axiom_of_the_model():
    text = DOCS.read_text()
    model = model_named("ptx-8.7")
    for item in list(model.definitions) + list(model.axioms):
        assert f"``{item.name}``" in text, item.name


# ---- the pieces of render.py ---------------------------------------------------------------------------------


def test_find_cycle():
    from ptxspec.memory_model.render import find_cycle

    assert find_cycle([(1, 2), (2, 3)]) is None
    assert find_cycle([(4, 4)]) == ((4, 4),)
    cycle = find_cycle([(1, 2), (2, 3), (3, 1), (3, 4)])
    assert sorted(cycle) == [(1, 2), (2, 3), (3, 1)]
    assert all(b == cycle[(i + 1) % len(cycle)][0] for i, (_, b) in enumerate(cycle))


def test_immediate_and_fr():
    from ptxspec.memory_model.render import fr_of, immediate

    order = {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}  # 0 < 1 < 2 < 3
    assert immediate(order) == {(0, 1), (1, 2), (2, 3)}
    # read 9 reads from write 1: it is before every write after 1 in coherence order
    assert fr_of({(1, 9)}, order) == {(9, 2), (9, 3)}


def test_expression_text_brackets_only_where_needed():
    from ptxspec.memory_model import relations as rel
    from ptxspec.memory_model.render import expression_text

    R, W = rel.sets("R", "W")
    po, rf, co = rel.relations("po", "rf", "co")
    assert expression_text(po | rf | co) == "po | rf | co"
    assert expression_text((po | rf) >> co) == "(po | rf) ; co"
    assert expression_text(((po >> rf) & co).plus()) == "((po ; rf) & co)+"
    assert expression_text(~rf >> R.id() >> (R * W)) == "rf^-1 ; [R] ; (R * W)"


def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_litmus", Path(__file__).resolve().parent.parent / "bench" / "litmus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_real_timeout_prints_unknown(tmp_path):
    # Store buffering around a ring of 8 threads with fence.sc: the explicit engine enumerates 8!
    # Fence-SC orders (bench/litmus.py: it stops scaling at 7), far beyond 0.3 s.
    test = tmp_path / "ring.litmus"
    test.write_text(_bench().sb_ring(8))
    result = invoke("--engine", "explicit", "--timeout", "0.3", "--json", test)
    assert result.exit_code == 0, result.output
    (obj,) = json_lines(result.stdout)
    assert obj["ok"] is None and obj["engines"]["explicit"]["time_s"] < 5


@pytest.mark.parametrize("n", [2, 3, 4])
def test_bench_families_have_the_expected_verdicts(n, tmp_path):
    # Message passing along a chain of release/acquire fences and SB around a ring with fence.sc
    # are both forbidden outcomes (§8.10.6: causality order is transitive through synchronization).
    bench = _bench()
    for text in (bench.mp_chain(n), bench.sb_ring(n)):
        test = tmp_path / "t.litmus"
        test.write_text(text)
        assert check(load(test)).ok is True


def test_every_manual_witness_is_an_execution(manual_run):
    objects = json_lines(manual_run.stdout)
    shown = [obj for obj in objects if obj["witness"] is not None]
    assert {obj["name"] for obj in shown} >= {"SB-fence.acq_rel", "Atomicity-2", "CoWR-alias-nofence"}
    for obj in shown:
        _check_witness(obj["witness"])
    (alias,) = [obj for obj in shown if obj["name"] == "CoWR-alias-nofence"]
    assert [e["event"] for e in alias["witness"]["events"] if e["event"].startswith("R ")] == ["R data_alias_2=0 (data_alias_1)"]
