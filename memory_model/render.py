"""How a verdict looks: herd7's text, JSON lines, an execution as text, DOT and SVG pictures.

The text follows herd7's output for a test, line for line::

    Test SB Allowed
    States 3
    P0:r0=0; P1:r1=1;
    P0:r0=1; P1:r1=0;
    P0:r0=1; P1:r1=1;
    Ok
    Witnesses
    Positive: 0 Negative: 3
    Condition ~exists (P0:r0 == 0 /\\ P1:r1 == 0)
    Observation SB Never 0 3
    Time SB 0.02

``Required`` replaces ``Allowed`` for a ``forall`` condition. An undecided test prints
``Unknown`` and no states. An answer that holds only within the unrolling bound (a ``No`` for
``exists``, an ``Ok`` for ``~exists`` or ``forall``, when some path was cut; herd7 and Dat3M also
say when a loop bound was reached) prints ``No (bounded)`` or ``Ok (bounded)`` and a ``Bound`` line
before ``Time``; a ``Note`` line says when ``--engine both`` could not cross-check the answer. The pictures show one execution: the events of each thread in program
order (a column per thread, the initial writes above), and the relations po, rf, co and fr (co and
fr drawn between neighbours in coherence order), plus, when given, the edges of the cycle that an
axiom forbids, highlighted. The SVG is laid out here (a fixed grid, no Graphviz needed), so the
same execution always gives the same bytes.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable
from xml.sax.saxutils import escape

import attrs

from .check import Verdict, format_state, term_name
from .engine import Execution
from .program import Constant, Event, Program

Edges = frozenset[tuple[int, int]]


@attrs.frozen
class Cycle:
    """Edges to highlight: the axiom they break, and a label per edge (the axiom's name by default)."""

    axiom: str
    edges: tuple[tuple[int, int], ...]
    labels: tuple[str, ...] = ()

    def label(self, edge: tuple[int, int]) -> str:
        for known, label in zip(self.edges, self.labels):
            if known == edge:
                return label
        return self.axiom


# ---- herd7's text ------------------------------------------------------------------------------------


def condition_text(verdict: Verdict) -> str:
    """The condition as written in the test (herd's ``Condition`` line, without the keyword)."""
    text = " ".join(verdict.condition.text.split())
    if text:
        return text
    return f"{verdict.condition.quantifier} (...)"


def text(verdict: Verdict, *, witness: bool = False, why: bool = False) -> str:
    """herd7's lines for one test (plus, when asked, the witness and the axioms that forbid)."""
    name = verdict.name
    kind = "Required" if verdict.condition.quantifier == "forall" else "Allowed"
    lines = [f"Test {name} {kind}"]
    if verdict.ok is None:
        lines.append("States ?")
        lines.append("Unknown")
        lines.append(f"Condition {condition_text(verdict)}")
        lines.append(f"Observation {name} Unknown")
    else:
        states = verdict.states
        assert states is not None, "a decided verdict has its states"
        lines.append(f"States {len(states)}")
        lines.extend(format_state(verdict.program, state) for state in states)
        lines.append(verdict.verdict_word)
        lines.append("Witnesses")
        lines.append(f"Positive: {verdict.positive} Negative: {verdict.negative}")
        lines.append(f"Condition {condition_text(verdict)}")
        lines.append(f"Observation {name} {verdict.observation} {verdict.positive} {verdict.negative}")
    if verdict.bounded:
        lines.append(bound_line(verdict))
    lines.extend(f"Note {name} {note}" for note in verdict.notes)
    lines.append(f"Time {name} {verdict.time_s:.2f}")
    if why:
        lines.extend(why_lines(verdict))
    if witness:
        lines.extend(witness_lines(verdict))
    return "\n".join(lines)


def _outcome_shown(verdict: Verdict) -> bool:
    """Does some final state show the outcome the condition asks about (so nothing forbids it)?"""
    from .engine import forbidden_outcome, state_holds

    outcome = forbidden_outcome(verdict.condition)
    return any(state_holds(verdict.condition.formula, state) == outcome for state in verdict.states or ())


def bound_line(verdict: Verdict) -> str:
    bound = verdict.program.unroll_bound
    return (
        f"Bound {verdict.name} unroll {bound}: paths that take a loop more than {bound} time(s) were cut; "
        f"the answer holds for the executions within the bound (a larger --unroll may find more states)"
    )


def why_lines(verdict: Verdict) -> list[str]:
    if verdict.ok is None:
        return ["Why: undecided"]
    if verdict.why is None:
        if not _outcome_shown(verdict):
            return ["Why: not determined within the time limit"]
        return ["Why: the outcome is not forbidden (an execution shows it)"]
    if not verdict.why:
        return ["Why: no candidate execution has the outcome (no axiom is needed: the program's paths, values or barriers exclude it)"]
    axioms = axioms_by_name(verdict.model)
    lines = ["Why: the outcome is forbidden by"]
    for name in verdict.why:
        axiom = axioms.get(name)
        where = f" (§{axiom.section}, {axiom.kind})" if axiom is not None else ""
        lines.append(f"  {name}{where}")
        sentence = axiom_sentence(name)
        if sentence:
            lines.extend(textwrap.wrap(sentence, width=100, initial_indent="    ", subsequent_indent="    "))
    example = forbidden_picture(verdict)
    if example is not None:
        execution, cycle = example
        lines.append(f"A candidate execution with the outcome, rejected by {cycle.axiom}:")
        lines.extend("  " + line for line in witness_text(verdict.program, execution, cycle).splitlines())
    return lines


_LAST_PICTURE: list = []
"""The last verdict asked about and its answer (the text and the pictures of one test ask twice)."""


def forbidden_picture(verdict: Verdict, budget_s: float = 5.0) -> tuple[Execution, Cycle] | None:
    """A rejected candidate with the forbidden outcome and the cycle that rejects it, when found
    within ``budget_s`` seconds (the documentation's pictures allow more, so that a busy machine
    draws the same picture as an idle one)."""
    from .check import forbidden_example

    if _LAST_PICTURE and _LAST_PICTURE[0] is verdict:
        return _LAST_PICTURE[1]
    example = forbidden_example(verdict, budget_s=budget_s)
    answer = None
    if example is not None:
        execution, axiom, edges, labels = example
        answer = execution, Cycle(axiom, tuple(edges), tuple(labels))
    _LAST_PICTURE[:] = [verdict, answer]
    return answer


def axiom_sentence(name: str) -> str | None:
    """The manual's sentence for an axiom, where ``ptx.py`` records it."""
    from . import ptx

    return getattr(ptx, "AXIOM_TEXT", {}).get(name)


def axioms_by_name(model_name: str) -> dict:
    from .check import model_named

    try:
        return {axiom.name: axiom for axiom in model_named(model_name).axioms}
    except Exception:  # noqa: BLE001 -- naming the section is a courtesy, not a requirement
        return {}


def witness_lines(verdict: Verdict) -> list[str]:
    if verdict.ok is None:
        return ["Witness: undecided (no engine finished in time)"]
    if verdict.witness is None:
        within = " within the unrolling bound" if verdict.program.truncated else ""
        return [f"Witness: none (no consistent execution{within} shows the outcome)"]
    quantifier = verdict.condition.quantifier
    title = {"exists": "satisfies the condition", "~exists": "refutes the condition", "forall": "refutes the condition"}[quantifier]
    return [f"Witness (an execution that {title}):", *("  " + line for line in witness_text(verdict.program, verdict.witness).splitlines())]


# ---- JSON ----------------------------------------------------------------------------------------------


def json_object(verdict: Verdict, *, witness: bool = False, why: bool = False) -> dict:
    """One test as a JSON object: ``file``, ``name``, ``ok`` (true, false or null), ``observation``,
    ``states`` (a list of ``{term: value}``, or null when undecided), ``time_s`` and each engine's answer."""
    program = verdict.program
    obj: dict = {
        "file": verdict.file,
        "name": verdict.name,
        "model": verdict.model,
        "quantifier": verdict.condition.quantifier,
        "condition": condition_text(verdict),
        "ok": verdict.ok,
        "verdict": verdict.verdict_word,
        "bounded": verdict.bounded,
        "unroll": verdict.program.unroll_bound,
        "truncated": verdict.program.truncated,
        "notes": list(verdict.notes),
        "undefined": verdict.undefined,
        "observation": verdict.observation,
        "positive": verdict.positive,
        "negative": verdict.negative,
        "states": None if verdict.states is None else [state_object(program, state) for state in verdict.states],
        "time_s": round(verdict.time_s, 6),
        "engines": {
            result.engine: {
                "ok": result.ok,
                "states": None if result.states is None else len(result.states),
                "positive": result.positive,
                "negative": result.negative,
                "candidates": result.candidates,
                "time_s": round(result.time_s, 6),
            }
            for result in verdict.results
        },
    }
    if why:
        obj["why"] = None if verdict.why is None else list(verdict.why)
        example = forbidden_picture(verdict) if verdict.why else None
        if example is not None:
            execution, cycle = example
            obj["rejected"] = execution_object(program, execution)
            obj["rejected"]["axiom"] = cycle.axiom
            obj["rejected"]["cycle"] = [[a, b, cycle.label((a, b))] for a, b in cycle.edges]
    if witness:
        # Undecided: null, never an execution that would seem to show something.
        obj["witness"] = None if verdict.ok is None or verdict.witness is None else execution_object(program, verdict.witness)
    return obj


def json_line(verdict: Verdict, *, witness: bool = False, why: bool = False) -> str:
    return json.dumps(json_object(verdict, witness=witness, why=why), sort_keys=False)


def state_object(program: Program, state) -> dict[str, int]:
    return {term_name(program, term): value for term, value in state if not isinstance(term, Constant)}


def execution_object(program: Program, execution: Execution) -> dict:
    """An execution as JSON: its events and the relations po, rf, co, fr (and sc when not empty)."""
    shown = shown_relations(execution, reduce=False)
    return {
        "events": [
            {
                "eid": event.eid,
                "thread": None if event.thread is None else program.threads[event.thread].name,
                "instruction": event.instruction,
                "event": event_label(event),
            }
            for event in ordered_events(execution)
        ],
        "relations": {name: sorted([a, b] for a, b in pairs) for name, pairs in shown.items()},
    }


# ---- the relations shown -------------------------------------------------------------------------------


def ordered_events(execution: Execution) -> list[Event]:
    """Initial writes first, then each thread's events in program order."""
    return sorted(execution.events, key=lambda e: (-1 if e.thread is None else e.thread, e.index, e.eid))


def fr_of(rf: Iterable[tuple[int, int]], co: Iterable[tuple[int, int]]) -> Edges:
    """From-reads (§8.9.7): a read, before every write that follows in coherence order the write it read from."""
    after: dict[int, set[int]] = {}
    for w1, w2 in co:
        after.setdefault(w1, set()).add(w2)
    return frozenset((r, w2) for w, r in rf for w2 in after.get(w, ()) if w2 != r)


def immediate(order: Iterable[tuple[int, int]]) -> Edges:
    """The pairs of a strict order with nothing between them (its transitive reduction)."""
    pairs = set(order)
    succ: dict[int, set[int]] = {}
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    return frozenset((a, b) for a, b in pairs if not any((m, b) in pairs for m in succ.get(a, ()) if m != b))


def shown_relations(execution: Execution, *, reduce: bool = True) -> dict[str, Edges]:
    """po, rf, co, fr (and sc when not empty). With ``reduce``, po and co keep neighbours only and
    fr goes to the next write in coherence order only, as herd draws them."""
    relations = execution.relations
    po = frozenset(relations.get("po", ()))
    rf = frozenset(relations.get("rf", ()))
    co = frozenset(relations.get("co", ()))
    fr = frozenset(relations["fr"]) if "fr" in relations else fr_of(rf, co)
    sc = frozenset(relations.get("sc", ()))
    if reduce:
        po, co, sc = immediate(po), immediate(co), immediate(sc)
        fr = fr_of(rf, co) - {pair for pair in fr_of(rf, co) if pair[0] == pair[1]}
    shown = {"po": po, "rf": rf, "co": co, "fr": fr}
    if sc:
        shown["sc"] = sc
    return shown


# ---- an execution as text --------------------------------------------------------------------------------


def mbarrier_note(event: Event) -> str:
    """For an event of an mbarrier instruction, the object's state it leaves (or reads) in words:
    ``  // {parity 1, pending 2/2, tx 0}``; empty for any other event."""
    if not event.instruction.startswith("mbarrier."):
        return ""
    return "  // " + _mbarrier_value(event.write_value if event.writes else event.read_value)


def _mbarrier_value(value: object) -> str:
    """An mbarrier object's value as its state: ``{parity 1, pending 2/2, tx 0}``, or ``undefined``."""
    from ptxspec.semantics.mbarrier import MbarrierState, MbarrierUndefined

    try:
        state = MbarrierState.decode(int(value))  # type: ignore[call-overload]
    except (MbarrierUndefined, TypeError):
        return f"{value} (undefined)"
    return f"{{parity {state.phase_parity}, pending {state.pending}/{state.expected}, tx {state.tx_count}}}"


def event_label(event: Event) -> str:
    """What an event does: ``W x=1``, ``R y=0``, ``RMW x 0->1``, ``F sc``, ``PF alias``, ``B sync 0``;
    ``R s=0 (x)`` for a read of ``x`` through its alias ``s``."""
    where = event.address.name if event.address is not None else "?"
    # An access through an alias names the location it reaches.
    alias = f" ({event.address.physical})" if event.address is not None and event.address.physical != where else ""
    if event.is_initial:
        return f"W {where}={event.write_value or 0} (initial)"
    if event.atomic and event.writes:
        return f"RMW {where} {event.read_value}->{event.write_value}{alias}"
    if event.reads:
        return f"R {where}={event.read_value}{alias}"
    if event.writes:
        return f"W {where}={event.write_value}{alias}"
    if event.fence is not None:
        return f"F {event.fence}"
    if event.proxy_fence is not None:
        return f"PF {event.proxy_fence}"
    if event.barrier is not None:
        return f"B {event.barrier.op} {event.barrier.barrier_id}"
    return "event"


def thread_title(program: Program, thread: int) -> str:
    t = program.threads[thread]
    place = t.placement
    cluster = "" if place.cluster is None else f", cluster {place.cluster}"
    return f"{t.name} (cta {place.cta}{cluster}, gpu {place.gpu})"


def witness_text(program: Program, execution: Execution, cycle: Cycle | None = None) -> str:
    """An execution as text: the events of each thread, then the relations as ``eA->eB`` lists."""
    events = ordered_events(execution)
    lines = []
    initial = [e for e in events if e.is_initial]
    if initial:
        lines.append("init: " + "; ".join(f"e{e.eid} {event_label(e)}" for e in initial))
    for thread in sorted({e.thread for e in events if e.thread is not None}):
        lines.append(f"{thread_title(program, thread)}:")
        for event in (e for e in events if e.thread == thread):
            lines.append(f"  e{event.eid:<3} {event.instruction:<34} {event_label(event)}{mbarrier_note(event)}")
    for name, pairs in shown_relations(execution).items():
        lines.append(f"{name}: " + (" ".join(f"e{a}->e{b}" for a, b in sorted(pairs)) or "(none)"))
    if cycle is not None:
        lines.append(f"forbidden by {cycle.axiom}: " + " ".join(f"e{a} -{cycle.label((a, b))}-> e{b}" for a, b in cycle.edges))
    return "\n".join(lines)


# ---- pictures --------------------------------------------------------------------------------------------

COLOURS = {"po": "black", "rf": "red", "co": "blue", "fr": "darkorange", "sc": "purple"}
CYCLE_COLOUR = "forestgreen"


def _dot_id(text: str) -> str:
    return json.dumps(text)


def dot(program: Program, execution: Execution, cycle: Cycle | None = None) -> str:
    """A Graphviz DOT picture of ``execution``: a cluster per thread, po/rf/co/fr edges, the cycle bold."""
    events = ordered_events(execution)
    lines = [
        f"digraph {_dot_id(program.name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=9];',
    ]
    initial = [e for e in events if e.is_initial]
    if initial:
        lines.append('  subgraph cluster_init { label="initial writes"; style=dashed;')
        lines.extend(f"    e{e.eid} [label={_dot_id(event_label(e))}];" for e in initial)
        lines.append("  }")
    for thread in sorted({e.thread for e in events if e.thread is not None}):
        lines.append(f"  subgraph cluster_t{thread} {{ label={_dot_id(thread_title(program, thread))};")
        for event in (e for e in events if e.thread == thread):
            lines.append(f"    e{event.eid} [label={_dot_id(f'e{event.eid}: ' + event.instruction + chr(10) + event_label(event))}];")
        lines.append("  }")
    highlighted = set(cycle.edges) if cycle is not None else set()
    shown = shown_relations(execution)
    for name, pairs in shown.items():
        for a, b in sorted(pairs):
            colour, width = (CYCLE_COLOUR, 3) if (a, b) in highlighted else (COLOURS[name], 1)
            constraint = "" if name == "po" else ", constraint=false"
            lines.append(f"  e{a} -> e{b} [label={_dot_id(name)}, color={colour}, fontcolor={colour}, penwidth={width}{constraint}];")
    if cycle is not None:
        drawn = {pair for pairs in shown.values() for pair in pairs}
        for a, b in cycle.edges:
            if (a, b) not in drawn:
                lines.append(
                    f"  e{a} -> e{b} [label={_dot_id(cycle.label((a, b)))}, color={CYCLE_COLOUR}, fontcolor={CYCLE_COLOUR}, penwidth=3, constraint=false];"
                )
        lines.append(f"  label={_dot_id('highlighted: a cycle forbidden by ' + cycle.axiom)}; fontcolor={CYCLE_COLOUR};")
    lines.append("}")
    return "\n".join(lines) + "\n"


@attrs.frozen
class _Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def overlaps(self, other: _Box, pad: float = 0.0) -> bool:
        """Whether the two boxes, each grown by ``pad`` on every side, share any area."""
        return (
            self.x - pad < other.x + other.w + pad
            and other.x - pad < self.x + self.w + pad
            and self.y - pad < other.y + other.h + pad
            and other.y - pad < self.y + self.h + pad
        )


BOX_W, BOX_H, COL_GAP, ROW_GAP, MARGIN, TITLE_H = 250.0, 40.0, 90.0, 45.0, 30.0, 40.0

#: The text metric that keeps labels apart: a monospace font's advance is 0.6 em (DejaVu Sans Mono
#: 0.602, Liberation Mono and Courier 0.6), taken a little wider; a line reaches 0.8 em above its
#: baseline and 0.25 em below.
FONT_SIZE, TITLE_SIZE, ADVANCE, ASCENT, DESCENT = 11.0, 14.0, 0.62, 0.8, 0.25
#: Room kept around a label, and the characters of an event's lines that fit its box.
LABEL_PAD = 2.0
EVENT_TEXT_CHARS = int((BOX_W - 12) / (ADVANCE * FONT_SIZE))

#: What each relation of the picture is (the legend's words; §8.9 for the orders).
RELATION_NAMES = {
    "po": "program order",
    "rf": "reads-from",
    "co": "coherence order",
    "fr": "from-reads (§8.9.7)",
    "sc": "order of the fence.sc (Fence-SC order, §8.9.3)",
}
#: Where along an edge (its parameter, the middle first) a label may sit, and on which side of that point.
LABEL_SPOTS = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.35, 0.65, 0.25, 0.75, 0.15, 0.85)
LABEL_SIDES = ("right", "left", "above", "below")


def text_box(x: float, y: float, text: str, size: float = FONT_SIZE, anchor: str = "start") -> _Box:
    """The box that ``text`` drawn at ``(x, y)`` (its baseline; ``anchor`` as SVG's text-anchor)
    covers, by the monospace metric above. The layout keeps these boxes apart, and the tests read
    them back from the SVG (tests/test_pictures.py)."""
    width = len(text) * ADVANCE * size
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return _Box(left, y - ASCENT * size, width, (ASCENT + DESCENT) * size)


def layout(program: Program, execution: Execution) -> tuple[dict[int, _Box], dict[int, float], float, float]:
    """A fixed grid: the initial writes in a row at the top, then a column per thread in program order."""
    events = ordered_events(execution)
    threads = sorted({e.thread for e in events if e.thread is not None})
    columns = {thread: i for i, thread in enumerate(threads)}
    boxes: dict[int, _Box] = {}
    initial = [e for e in events if e.is_initial]
    top = MARGIN + TITLE_H
    for i, event in enumerate(initial):
        boxes[event.eid] = _Box(MARGIN + i * (BOX_W + COL_GAP), top, BOX_W, BOX_H)
    first_row = top + (BOX_H + ROW_GAP + TITLE_H / 2 if initial else 0) + TITLE_H / 2
    rows: dict[int, int] = {}
    for event in events:
        if event.thread is None:
            continue
        row = rows.get(event.thread, 0)
        rows[event.thread] = row + 1
        boxes[event.eid] = _Box(MARGIN + columns[event.thread] * (BOX_W + COL_GAP), first_row + row * (BOX_H + ROW_GAP), BOX_W, BOX_H)
    titles = {thread: MARGIN + columns[thread] * (BOX_W + COL_GAP) for thread in threads}
    width = MARGIN * 2 + max(len(threads), len(initial), 1) * (BOX_W + COL_GAP) - COL_GAP
    height = first_row + max(rows.values(), default=1) * (BOX_H + ROW_GAP) - ROW_GAP + MARGIN
    return boxes, titles, width, height


def _anchor(box: _Box, towards: tuple[float, float]) -> tuple[float, float]:
    """The point on the edge of ``box`` where a line to ``towards`` leaves it."""
    cx, cy = box.centre
    dx, dy = towards[0] - cx, towards[1] - cy
    if dx == 0 and dy == 0:
        return (cx, cy)
    scale = min(box.w / 2 / abs(dx) if dx else float("inf"), box.h / 2 / abs(dy) if dy else float("inf"))
    return (cx + dx * scale, cy + dy * scale)


def _num(value: float) -> str:
    return f"{value:.1f}"


@attrs.frozen
class _Edge:
    """One arrow of the picture: its relation (or ``"cycle"`` for a step of the cycle that no
    relation drawn has), its ends, its label, its colour's name, and how far it bends."""

    name: str
    source: int
    target: int
    label: str
    colour_name: str
    bend: int
    bold: bool


@attrs.frozen
class _Label:
    """Where an edge's label went: its text, its baseline, its colour, and, for a label moved to
    the margin, the point of the edge that a dotted leader joins it to."""

    text: str
    x: float
    y: float
    colour: str
    bold: bool
    leader: tuple[float, float] | None = None


def _edges(execution: Execution, boxes: dict[int, _Box], cycle: Cycle | None) -> list[_Edge]:
    """The arrows in drawing order: each relation's pairs sorted, then the steps of the cycle that
    no relation drawn has; parallel arrows between two events bend more each."""
    highlighted = set(cycle.edges) if cycle is not None else set()
    drawn: list[tuple[str, int, int]] = [(name, a, b) for name, pairs in shown_relations(execution).items() for a, b in sorted(pairs)]
    if cycle is not None:
        drawn.extend(("cycle", a, b) for a, b in cycle.edges if not any((a, b) == (x, y) for _, x, y in drawn))
    seen: dict[tuple[int, int], int] = {}
    edges = []
    for name, a, b in drawn:
        if a not in boxes or b not in boxes:
            continue
        key = (min(a, b), max(a, b))
        nth = seen.get(key, 0)
        seen[key] = nth + 1
        label = cycle.label((a, b)) if name == "cycle" and cycle is not None else name
        colour_name = "cycle" if (a, b) in highlighted else name
        edges.append(_Edge(name, a, b, label, colour_name, 0 if name == "po" else 1 + nth, (a, b) in highlighted))
    return edges


def _geometry(source: _Box, target: _Box, bend: int) -> tuple[str, Callable[[float], tuple[float, float]]]:
    """An arrow's SVG path data and its point at each parameter 0..1: po straight, the other
    relations curved (more for each parallel edge, so that edges between the same two events do
    not hide each other), a self-loop (an irreflexive axiom broken) a small arc on the box's right."""
    if source is target:
        x, y = source.x + source.w, source.y + source.h / 2
        points = ((x, y - 8), (x + 40, y - 30), (x + 40, y + 30), (x, y + 8))
        path = f"M{_num(x)},{_num(y - 8)} C{_num(x + 40)},{_num(y - 30)} {_num(x + 40)},{_num(y + 30)} {_num(x)},{_num(y + 8)}"
        return path, lambda t: _bezier(points, t)
    (sx, sy), (tx, ty) = source.centre, target.centre
    if bend == 0:
        start, end = _anchor(source, target.centre), _anchor(target, source.centre)
        return f"M{_num(start[0])},{_num(start[1])} L{_num(end[0])},{_num(end[1])}", lambda t: _bezier((start, end), t)
    dx, dy = tx - sx, ty - sy
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    nx, ny = -dy / length, dx / length
    offset = 35.0 * bend + (60.0 if abs(dx) < 1 else 0.0)
    control = ((sx + tx) / 2 + nx * offset, (sy + ty) / 2 + ny * offset)
    start, end = _anchor(source, control), _anchor(target, control)
    path = f"M{_num(start[0])},{_num(start[1])} Q{_num(control[0])},{_num(control[1])} {_num(end[0])},{_num(end[1])}"
    return path, lambda t: _bezier((start, control, end), t)


def _bezier(points: tuple[tuple[float, float], ...], t: float) -> tuple[float, float]:
    """The point at ``t`` of the Bézier curve of ``points`` (de Casteljau)."""
    while len(points) > 1:
        points = tuple(((1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1]) for a, b in zip(points, points[1:]))
    return points[0]


def _spot(point: tuple[float, float], text: str, side: str) -> tuple[float, float]:
    """The baseline start of ``text`` put on ``side`` of ``point``."""
    px, py = point
    width = len(text) * ADVANCE * FONT_SIZE
    middle = py + (ASCENT - DESCENT) * FONT_SIZE / 2  # the baseline that centres the line on py
    return {
        "right": (px + 4, middle),
        "left": (px - 4 - width, middle),
        "above": (px - width / 2, py - 4 - DESCENT * FONT_SIZE),
        "below": (px - width / 2, py + 4 + ASCENT * FONT_SIZE),
    }[side]


def _place_labels(
    edges: list[_Edge], points: list[Callable[[float], tuple[float, float]]], taken: list[_Box], width: float, height: float, colours: dict
) -> tuple[list[_Label], float, float]:
    """Each edge's label at the first spot along it (:data:`LABEL_SPOTS`, :data:`LABEL_SIDES`) whose
    box meets no event box and no label placed before, inside the picture; a label with no such spot
    goes to a column right of the picture, joined to its edge by a dotted leader, one line each, so
    that no two labels ever overlap. Returns the labels and the picture's new width and height."""
    labels: list[_Label] = []
    margin: list[tuple[_Edge, tuple[float, float]]] = []
    for edge, point in zip(edges, points):
        spot = _free_spot(edge.label, point, taken, width, height)
        if spot is None:
            margin.append((edge, point(0.5)))
            continue
        taken.append(text_box(*spot, edge.label))
        labels.append(_Label(edge.label, spot[0], spot[1], colours[edge.colour_name], edge.bold))
    if not margin:
        return labels, width, height
    column = width
    widest = max(len(edge.label) for edge, _ in margin) * ADVANCE * FONT_SIZE
    y = MARGIN + TITLE_H
    for edge, joined in margin:
        labels.append(_Label(edge.label, column, y, colours[edge.colour_name], edge.bold, joined))
        y += FONT_SIZE + 2 * LABEL_PAD + 2
    return labels, column + widest + MARGIN, max(height, y + MARGIN)


def _free_spot(text: str, point: Callable[[float], tuple[float, float]], taken: list[_Box], width: float, height: float) -> tuple[float, float] | None:
    inside = _Box(0, 0, width, height)
    for t in LABEL_SPOTS:
        for side in LABEL_SIDES:
            x, y = _spot(point(t), text, side)
            box = text_box(x, y, text)
            if _within(box, inside) and not any(box.overlaps(other, LABEL_PAD) for other in taken):
                return x, y
    return None


def _within(box: _Box, outer: _Box) -> bool:
    return outer.x <= box.x and box.x + box.w <= outer.x + outer.w and outer.y <= box.y and box.y + box.h <= outer.y + outer.h


def _legend(edges: list[_Edge], cycle: Cycle | None, colours: dict, top: float, width: float, id_prefix: str) -> tuple[list[str], float, float]:
    """The legend below the picture: a sample arrow and the words for each relation drawn, and the
    highlighted cycle's axiom with its steps in herd's notation (``fr ; causality_order``); entries
    left to right, wrapping at ``width`` (widened to the longest entry). Returns its SVG lines and
    the picture's width and height with it."""
    entries = [(name, f"{name}: {words}") for name, words in RELATION_NAMES.items() if any(e.name == name for e in edges)]
    if cycle is not None:
        steps = " ; ".join(cycle.label(edge) for edge in cycle.edges)
        entries.append(("cycle", f"bold: a cycle that {cycle.axiom} forbids ({steps})"))
    width = max([width] + [2 * MARGIN + 34 + len(words) * ADVANCE * FONT_SIZE for _, words in entries])
    out = ['<g class="legend">']
    x, y = MARGIN, top + FONT_SIZE
    for name, words in entries:
        size = 34 + len(words) * ADVANCE * FONT_SIZE
        if x > MARGIN and x + size > width - MARGIN:
            x, y = MARGIN, y + FONT_SIZE + 8
        stroke = 3 if name == "cycle" else 1.3
        out.append(
            f'<path d="M{_num(x)},{_num(y - 4)} L{_num(x + 26)},{_num(y - 4)}" stroke="{colours[name]}" stroke-width="{stroke}" marker-end="url(#{id_prefix}arrow-{name})"/>'
        )
        out.append(f'<text x="{_num(x + 32)}" y="{_num(y)}" fill="{colours[name]}">{escape(words)}</text>')
        x += size + 24
    out.append("</g>")
    return out, width, y + FONT_SIZE + MARGIN / 2


def svg(program: Program, execution: Execution, cycle: Cycle | None = None, *, id_prefix: str = "") -> str:
    """An SVG picture of ``execution`` (the same content as :func:`dot`), laid out on a fixed grid,
    with a legend of the relations drawn and of the highlighted cycle. No two texts overlap: the
    events' lines fit their boxes, and each edge's label is placed where it meets no other text or
    box (:func:`_place_labels`). ``id_prefix`` starts every ``id`` of the picture, so that several
    pictures can share one HTML page."""
    boxes, titles, width, height = layout(program, execution)
    colours = dict(COLOURS, cycle=CYCLE_COLOUR)
    events = {e.eid: e for e in execution.events}
    texts = _fixed_texts(program, boxes, titles, events)
    taken = [text_box(x, y, text, float(extra.get("font-size", FONT_SIZE))) for x, y, text, extra in texts] + list(boxes.values())
    edges = _edges(execution, boxes, cycle)
    geometry = [_geometry(boxes[e.source], boxes[e.target], e.bend) for e in edges]
    labels, width, height = _place_labels(edges, [point for _, point in geometry], taken, width, height, colours)
    legend, width, height = _legend(edges, cycle, colours, height, width, id_prefix)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" class="execution" width="{_num(width)}" height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" font-family="monospace" font-size="{FONT_SIZE:g}">',
        f"<title>{escape(program.name)}: an execution{'' if cycle is None else ', with a cycle that ' + escape(cycle.axiom) + ' forbids'}</title>",
        "<defs>",
    ]
    for name, colour in colours.items():
        out.append(
            f'<marker id="{id_prefix}arrow-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )
    out.append("</defs>")
    for x, y, text, extra in texts:
        attributes = "".join(f' {key}="{value}"' for key, value in extra.items())
        out.append(f'<text x="{_num(x)}" y="{_num(y)}"{attributes}>{escape(text)}</text>')
    out.extend(_svg_events(boxes, events, id_prefix))
    for edge, (path, _) in zip(edges, geometry):
        out.append(
            f'<path d="{path}" fill="none" stroke="{colours[edge.colour_name]}" stroke-width="{3 if edge.bold else 1.3}" marker-end="url(#{id_prefix}arrow-{edge.colour_name})"/>'
        )
    out.extend(_svg_labels(labels))
    out.extend(legend)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _fixed_texts(
    program: Program, boxes: dict[int, _Box], titles: dict[int, float], events: dict[int, Event]
) -> list[tuple[float, float, str, dict[str, str]]]:
    """The texts that do not move: the test's name, "initial writes", each thread's title above its
    first event; as (x, baseline, text, extra attributes)."""
    texts: list[tuple[float, float, str, dict[str, str]]] = [(MARGIN, MARGIN, program.name, {"font-size": f"{TITLE_SIZE:g}", "font-weight": "bold"})]
    if any(e.is_initial for e in events.values()):
        texts.append((MARGIN, MARGIN + TITLE_H - 8, "initial writes", {"font-style": "italic"}))
    for thread, x in titles.items():
        first = min((b.y for eid, b in boxes.items() if events[eid].thread == thread), default=MARGIN + TITLE_H)
        texts.append((x, first - 8, thread_title(program, thread), {"font-weight": "bold"}))
    return texts


def _svg_events(boxes: dict[int, _Box], events: dict[int, Event], id_prefix: str) -> list[str]:
    """One box per event, with its instruction and what it does, each cut to fit the box."""
    out = []
    for eid, box in sorted(boxes.items()):
        event = events[eid]
        out.append(
            f'<g id="{id_prefix}e{eid}"><rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.w)}" height="{_num(box.h)}" rx="4" fill="white" stroke="black"/>'
        )
        label = "initial write" if event.is_initial else f"e{eid}: {event.instruction}"
        out.append(f'<text x="{_num(box.x + 6)}" y="{_num(box.y + 16)}">{escape(label[:EVENT_TEXT_CHARS])}</text>')
        out.append(f'<text x="{_num(box.x + 6)}" y="{_num(box.y + 31)}" fill="dimgray">{escape(event_label(event)[:EVENT_TEXT_CHARS])}</text></g>')
    return out


def _svg_labels(labels: list[_Label]) -> list[str]:
    """The edges' labels, drawn last with a white halo so that lines under them do not hide them;
    a label in the margin with its dotted leader."""
    out = ['<g class="edge-labels" stroke="white" stroke-width="3" paint-order="stroke">']
    for label in labels:
        if label.leader is not None:
            lx, ly = label.leader
            out.append(
                f'<path d="M{_num(lx)},{_num(ly)} L{_num(label.x - 2)},{_num(label.y - 4)}" stroke="{label.colour}" stroke-width="0.8" stroke-dasharray="2,2" fill="none"/>'
            )
        weight = ' font-weight="bold"' if label.bold else ""
        out.append(f'<text x="{_num(label.x)}" y="{_num(label.y)}" fill="{label.colour}"{weight}>{escape(label.text)}</text>')
    out.append("</g>")
    return out


def find_cycle(edges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...] | None:
    """Some cycle of a relation, as its edges in order (a self-loop is a cycle of one edge); None if acyclic."""
    succ: dict[int, list[int]] = {}
    for a, b in sorted(set(edges)):
        succ.setdefault(a, []).append(b)
    colour: dict[int, int] = {}
    stack_path: list[int] = []

    def visit(node: int) -> tuple[tuple[int, int], ...] | None:
        colour[node] = 1
        stack_path.append(node)
        for nxt in succ.get(node, ()):
            if colour.get(nxt) == 1:
                loop = stack_path[stack_path.index(nxt) :] + [nxt]
                return tuple(zip(loop, loop[1:]))
            if nxt not in colour:
                found = visit(nxt)
                if found:
                    return found
        stack_path.pop()
        colour[node] = 2
        return None

    for start in sorted(succ):
        if start not in colour:
            found = visit(start)
            if found:
                return found
    return None


def picture(verdict: Verdict, budget_s: float = 5.0) -> tuple[Execution | None, Cycle | None]:
    """The execution to draw for a verdict, and the cycle to highlight.

    When an execution shows the outcome (the witness), that one. When the outcome is forbidden, a
    candidate execution with the outcome that the model rejects, with the edges of a cycle of the
    relation of an axiom it breaks (from :func:`~.check.forbidden_example`), when one is found
    within ``budget_s`` seconds.
    """
    if verdict.witness is not None:
        return verdict.witness, None
    example = forbidden_picture(verdict, budget_s)
    return (None, None) if example is None else example


def empty_picture(program: Program, as_svg: bool) -> str:
    """A picture saying that there is no execution to draw (the test has no consistent execution
    with the outcome, and none rejected by the model was found)."""
    note = f"{program.name}: no execution to draw"
    if not as_svg:
        return f"digraph {_dot_id(program.name)} {{\n  note [shape=plaintext, label={_dot_id(note)}];\n}}\n"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="60" viewBox="0 0 400 60" font-family="monospace" font-size="12">\n'
        f'<text x="10" y="30">{escape(note)}</text>\n</svg>\n'
    )


# ---- the model as text, in the manner of a herd .cat file ----------------------------------------------------


def expression_text(expr) -> str:
    """A relational expression in herd's notation: ``|`` ``&`` ``\\`` ``;`` ``*``, ``r+``, ``r?``,
    ``r^-1``, ``[S]``, ``domain(r)``, ``range(r)``, ``0`` (the empty relation)."""
    from . import relations as rel

    binary = {
        rel.Union: "|",
        rel.SetUnion: "|",
        rel.Inter: "&",
        rel.SetInter: "&",
        rel.Diff: "\\",
        rel.SetDiff: "\\",
        rel.Seq: ";",
        rel.Product: "*",
    }
    if isinstance(expr, (rel.Base, rel.SetBase, rel.Ref)):
        return expr.name
    if isinstance(expr, rel.Empty):
        return "0"
    if isinstance(expr, rel.Identity):
        return f"[{expression_text(expr.over)}]"
    if isinstance(expr, rel.Domain):
        return f"domain({expression_text(expr.relation)})"
    if isinstance(expr, rel.Range):
        return f"range({expression_text(expr.relation)})"
    postfix = {rel.Plus: "+", rel.Optional: "?", rel.Inverse: "^-1"}
    if type(expr) in postfix:
        inner = expr.operand
        text = expression_text(inner)
        if type(inner) in binary:
            text = f"({text})"
        return text + postfix[type(expr)]
    if type(expr) in binary:
        op = binary[type(expr)]
        parts = []
        for side in (expr.left, expr.right):
            text = expression_text(side)
            # Same associative operator: no parentheses (a | b | c); anything else binary: parenthesise.
            if type(side) in binary and not (binary[type(side)] == op and op in "|&;"):
                text = f"({text})"
            parts.append(text)
        return f" {op} ".join(parts)
    raise TypeError(f"not a relational expression: {expr!r}")


def model_text(model) -> str:
    """The whole model as ``let NAME = EXPR`` lines and axioms, each with its manual section."""
    lines = [f"(* {model.name} *)"]
    for definition in model.definitions:
        lines.append(f"let {definition.name} = {expression_text(definition.relation)}  (* §{definition.section} *)")
    for axiom in model.axioms:
        lines.append(f"{axiom.kind} {expression_text(axiom.relation)} as {axiom.name}  (* §{axiom.section} *)")
    return "\n".join(lines)
