"""Sphinx extension: the instruction reference, generated from the catalogue and the semantics.

On ``builder-inited`` it writes one page per opcode into ``docs/reference/generated/`` (ignored by
git): the manual section, every family's syntax line, its qualifiers and operands, its legality
rules with the manual's reason, the targets its forms need, the semantic function (docstring and
source, with the helpers of its module that it calls), and worked examples computed by ptxspec at
build time and CHECKED against expectations obtained independently: values recorded on an H100/H200
(:mod:`ptxspec_recorded_examples`), statements worked out from the manual (:mod:`ptxspec_examples`)
and the exact-value oracle of :mod:`ptxspec_oracle`. A disagreement, a crash of the catalogue or the
semantics on a legal input, or a family with semantics that ends up with no checked example, fails
the build.

An opcode whose chapter names its operations (``operation_of`` in the chapter's module: tcgen05's
alloc, ld, ld.red, ...) gets a page that lists them and a page per operation. Instructions of
memory have worked examples on a state (:data:`ptxspec_examples.STATE_EXAMPLES`): a few
instructions run one after another through :func:`ptxspec.semantics.instructions.execute`, each
step's registers and changed state shown as computed, and statements of the manual about the
outcome checked.

The generator knows nothing about particular instructions: it walks whatever
:data:`ptxspec.spec.catalogue.CATALOGUE` holds.
"""

from __future__ import annotations

import inspect
import itertools
import random
import re
import textwrap
import traceback
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import attrs

import ptxspec_oracle as oracle
from ptxspec_examples import EXAMPLES, STATE_EXAMPLES, WITHOUT_SEMANTICS, Bits, Earlier, Example, Run, StateExample
from ptxspec_recorded_examples import recorded_examples

OUT_DIR = Path("reference") / "generated"
#: Families with more qualifier combinations than this are sampled, not enumerated.
ENUMERATION_LIMIT = 200_000
SAMPLE_SIZE = 4_000
#: Oracle-checked examples: forms checked per family, and rows shown on its page.
CHECKED_FORMS_PER_FAMILY = 5_000
SHOWN_ROWS_PER_FAMILY = 12
HELPERS_PER_FUNCTION = 8
#: How many forms the oracle checked in this build (for the log).
ORACLE_COUNT = [0]
#: How many examples were checked against silicon recordings in this build (for the log).
SILICON_COUNT = [0]


# ---------------------------------------------------------------------------------------------
# reStructuredText helpers
# ---------------------------------------------------------------------------------------------

_SPECIAL = re.compile(r"([\\*_|`<>\[\]])")


def esc(text: str) -> str:
    """Plain text, with every character that reStructuredText would interpret escaped."""
    return _SPECIAL.sub(r"\\\1", text)


def lit(text: str) -> str:
    """Inline literal text."""
    text = str(text)
    if not text.strip():
        return esc(text)
    if "``" in text or text != text.strip():
        return esc(text)
    return f"``{text}``"


def prose(text: str) -> str:
    """Text from the code (a rule's reason, a summary): `x` and ``x`` become literals, the rest
    is escaped."""
    parts = re.split(r"(``[^`]+``|`[^`]+`)", text)
    out = []
    for part in parts:
        if part.startswith("``") and part.endswith("``") and len(part) > 4:
            out.append(lit(part[2:-2]))
        elif part.startswith("`") and part.endswith("`") and len(part) > 2:
            out.append(lit(part[1:-1]))
        else:
            out.append(esc(part))
    return "".join(out)


def heading(text: str, char: str) -> str:
    return f"{text}\n{char * max(len(text), 4)}\n"


def list_table(header: list[str], rows: list[list[str]], widths: list[int] | None = None) -> str:
    lines = [".. list-table::", "   :header-rows: 1", "   :width: 100%"]
    if widths:
        lines.append("   :widths: " + " ".join(str(w) for w in widths))
    lines.append("")
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            cell = cell.replace("\n", " ") if cell else ""
            lines.append(("   * - " if i == 0 else "     - ") + (cell or "\\ "))
    return "\n".join(lines) + "\n"


def code_block(source: str, language: str = "python") -> str:
    return f".. code-block:: {language}\n\n" + textwrap.indent(source.rstrip() + "\n", "   ") + "\n"


def _section_key(section: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.]", section))


def _slug(opcode: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", opcode)


# ---------------------------------------------------------------------------------------------
# What the catalogue says about a family
# ---------------------------------------------------------------------------------------------


class BuildFailure(list):
    """Problems that must fail the build (collected so that one build reports them all)."""


@attrs.define
class FamilyFacts:
    family: object
    combinations: int
    sampled: bool
    legal: list = attrs.field(factory=list)
    forbidden: dict = attrs.field(factory=lambda: defaultdict(list))  # rule index -> [form text]
    messages: dict = attrs.field(factory=lambda: defaultdict(list))  # rule index -> [reason]
    shadowed: dict = attrs.field(factory=dict)  # text -> family key that parses it first


def _combinations(family) -> Iterator[tuple]:
    choices = [(tuple(slot.tokens) if slot.required else (None, *slot.tokens)) for slot in family.slots]
    return itertools.product(*choices)


def _combination_at(family, index: int) -> tuple:
    """The ``index``-th combination in the order of :func:`_combinations` (mixed radix)."""
    choices = [(tuple(slot.tokens) if slot.required else (None, *slot.tokens)) for slot in family.slots]
    picked = []
    for options in reversed(choices):
        index, digit = divmod(index, len(options))
        picked.append(options[digit])
    return tuple(reversed(picked))


def _combination_count(family) -> int:
    n = 1
    for slot in family.slots:
        n *= len(slot.tokens) + (0 if slot.required else 1)
    return n


def study(family, failures: BuildFailure) -> FamilyFacts:
    """Enumerate (or sample) the family's qualifier combinations; classify each by the rules."""
    from ptxspec.spec.catalogue import CATALOGUE, Form
    from ptxspec.spec.errors import PtxSpecError

    count = _combination_count(family)
    combos = _combinations(family)
    sampled = count > ENUMERATION_LIMIT
    if sampled:
        picks = sorted(random.Random(0).sample(range(count), SAMPLE_SIZE))
        combos = (_combination_at(family, i) for i in picks)
    facts = FamilyFacts(family, count, sampled)
    for combo in combos:
        choices = tuple((slot.name, token) for slot, token in zip(family.slots, combo) if token is not None)
        form = Form(family, choices)
        fired = []
        for index, rule in enumerate(family.rules):
            try:
                if rule.illegal(form):
                    fired.append(index)
                    facts.forbidden[index].append(form.text)
                    reason = rule.reason(form)
                    if reason not in facts.messages[index]:
                        facts.messages[index].append(reason)
            except Exception:  # noqa: BLE001 - reported through parse() below when reachable
                fired.append(index)
        # A family that only its operands tell apart (the vector mov) is reached with its template.
        text = f"{form.text} {family.operand_syntax}" if family.operand_syntax else form.text
        try:
            parsed = CATALOGUE.parse(text)
        except PtxSpecError:
            continue
        except Exception as error:  # noqa: BLE001
            failures.append(f"parse({form.text!r}) raises {type(error).__name__}: {error} (a traceback for user input)")
            continue
        if parsed.family.key != family.key:
            facts.shadowed[form.text] = parsed.family.key
            continue
        if fired or parsed.choices != form.choices:
            continue
        facts.legal.append(parsed)
    return facts


def _shown(form) -> str:
    """A legal form as the reader writes it: with its operand template where only the operands
    tell its family apart (``mov.b64 {d.x, d.y}, a``)."""
    from ptxspec.spec.catalogue import CATALOGUE
    from ptxspec.spec.errors import PtxSpecError

    try:
        reached = CATALOGUE.parse(form.text).family.key == form.family.key
    except PtxSpecError:
        reached = False
    return form.text if reached else f"{form.text} {form.template}"


def _operand_signature(form) -> str:
    return ", ".join(f"{o.name}{' (written)' if o.destination else ''}: .{o.type}" for o in form.operands)


# ---------------------------------------------------------------------------------------------
# Checked examples
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Row:
    form: str
    inputs: str
    result: str
    expected: str
    source: str
    #: The catalogue family the row belongs to, where its text alone parses as another (a form told
    #: apart by its operands: ``mov.b16 d, {a.x, a.y}``); None: the family its text parses as.
    family: str | None = None


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


def _describe_result(result, width: int) -> str:
    return _hex(result, width) if isinstance(result, int) else result.describe()


def _lanes_of(type_name: str, form) -> tuple[str, int] | None:
    """(element kind, lane count) of a register of ``type_name`` in ``form``: a float format or
    integer type, a packed type, or a .bN register that holds the form's one float type of that
    width that no other operand names."""
    from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, register_bits

    if type_name in FORMATS:
        return type_name, 1
    if type_name in PACKED_TYPES:
        packed = PACKED_TYPES[type_name]
        return packed.element, packed.count
    if type_name in INTEGER_TYPES and not type_name.startswith("b"):
        return type_name, 1
    if type_name.startswith("b") and type_name in INTEGER_TYPES:
        width = INTEGER_TYPES[type_name].bits
        named = {o.type for o in form.operands}
        tokens = [t for _, t in form.choices if (t in FORMATS or t in PACKED_TYPES) and t not in named]
        fitting = [t for t in tokens if register_bits(t) == width]
        if len(set(fitting)) == 1:
            return _lanes_of(fitting[0], form)
    return None


def oracle_rows(form, failures: BuildFailure, limit: int = 2) -> tuple[list[Row], str | None]:
    """Evaluate ``form`` on inputs whose result the oracle works out exactly, and compare. Returns
    the checked rows, or why the oracle does not apply to this form."""
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains
    from ptxspec.spec.errors import PtxSpecError
    from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, register_bits

    operation = oracle.OPERATIONS.get(form.opcode)
    if operation is None:
        return [], "no oracle for this opcode"
    qualifiers = {t for _, t in form.choices}
    unknown = qualifiers - oracle.KNOWN_QUALIFIERS - set(FORMATS) - set(INTEGER_TYPES) - set(PACKED_TYPES)
    if unknown:
        return [], "qualifiers the oracle does not model: " + ", ".join("." + t for t in sorted(unknown))
    sources, destinations = form.sources, form.destinations
    if len(destinations) != 1:
        return [], "not one destination"
    dest = _lanes_of(destinations[0].type, form)
    srcs = [_lanes_of(o.type, form) for o in sources]
    if dest is None or any(s is None for s in srcs):
        return [], "operand types the oracle does not model"
    arity = len(inspect.signature(operation).parameters)
    dest_kind, dest_lanes = dest
    if len(srcs) == arity and all(n == dest_lanes for _, n in srcs):
        layout = "elementwise"
    elif arity == 1 and len(srcs) == dest_lanes and all(n == 1 for _, n in srcs):
        layout = "gather"  # source i becomes lane i of the packed destination (lane 0 on top)
    else:
        return [], "operand layout the oracle does not model"
    ftz = "ftz" in qualifiers
    dest_width = register_bits(destinations[0].type)

    def pack(kind: str, values: list[Fraction], register: int) -> int | None:
        word = 0
        for value in values:
            bits = oracle.encode(kind, value)
            if bits is None or (ftz and kind in FORMATS and oracle.is_subnormal_value(FORMATS[kind], value)):
                return None
            word = (word << (register // len(values))) | bits
        return word

    rows: list[Row] = []
    candidates = oracle.CANDIDATES[form.opcode]
    for attempt in range(len(candidates)):
        lanes = [tuple(Fraction(v) for v in candidates[(attempt + lane) % len(candidates)]) for lane in range(dest_lanes)]
        if layout == "gather":
            per_source = [[lanes[i][0]] for i in range(len(srcs))]
        else:
            per_source = [[lanes[lane][i] for lane in range(dest_lanes)] for i in range(len(srcs))]
        results = []
        for values in lanes if layout == "elementwise" else [(v[0],) for v in per_source]:
            result = operation(*values)
            result = None if result is None else oracle.apply_modifiers(result, qualifiers, dest_kind)
            results.append(result)
        if any(r is None or r == 0 for r in results):
            continue
        encoded = [pack(kind, values, register_bits(o.type)) for (kind, _), values, o in zip(srcs, per_source, sources)]
        expected = pack(dest_kind, results, dest_width)
        if expected is None or any(e is None for e in encoded):
            continue
        try:
            (got,) = evaluate(form, encoded, "spec")
        except PtxSpecError as error:
            return rows, f"ptxspec: {error.one_line()}"
        except Exception as error:  # noqa: BLE001
            failures.append(f"evaluate({form.text!r}, {[hex(e) for e in encoded]}) crashed: {type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}")
            return rows, "crashed"
        values_text = "; ".join(", ".join(oracle.describe_value(v) for v in vs) for vs in per_source)
        results_text = ", ".join(oracle.describe_value(r) for r in results)
        if not contains(got, expected):
            failures.append(
                f"{form.text} {' '.join(hex(e) for e in encoded)} (values {values_text}): ptxspec gives "
                f"{_describe_result(got, dest_width)}, the exact-value oracle expects {_hex(expected, dest_width)} ({results_text})"
            )
        inputs = "; ".join(
            f"{_hex(bits, register_bits(o.type))} ({', '.join(oracle.describe_value(v) for v in vs)})" for bits, o, vs in zip(encoded, sources, per_source)
        )
        how = f"exact value {results_text}" + ("" if isinstance(got, int) else ", inside the allowed set")
        rows.append(Row(form.text, inputs, _describe_result(got, dest_width), _hex(expected, dest_width), how))
        if len(rows) >= limit:
            break
    return rows, None if rows else "no candidate input with an exactly representable result"


def stated_rows(examples: list[Example], failures: BuildFailure) -> list[Row]:
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import contains
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.errors import PtxSpecError
    from ptxspec.spec.types import register_bits

    rows = []
    for example in examples:
        try:
            form = parse(example.instruction)
            results = evaluate(form, example.sources, example.profile)
        except PtxSpecError as error:
            failures.append(f"stated example {example.instruction}: {error.one_line()}")
            continue
        except Exception as error:  # noqa: BLE001
            failures.append(f"stated example {example.instruction} crashed: {type(error).__name__}: {error}")
            continue
        widths = [register_bits(d.type) for d in form.destinations]
        if len(results) != len(example.expect):
            failures.append(f"stated example {example.instruction}: {len(results)} results, {len(example.expect)} expected")
            continue
        shown_expect = []
        for got, want, width in zip(results, example.expect, widths):
            if isinstance(want, Bits):
                shown_expect.append(_hex(want.bits, width))
                if got != want.bits:
                    failures.append(
                        f"stated example {example.instruction} {[hex(s) for s in example.sources]}: ptxspec gives {_describe_result(got, width)}, expected {_hex(want.bits, width)} ({example.why})"
                    )
            else:
                shown_expect.append("a set containing " + ", ".join(_hex(m, width) for m in want.members))
                if isinstance(got, int) or not all(contains(got, m) for m in want.members):
                    failures.append(
                        f"stated example {example.instruction} {[hex(s) for s in example.sources]}: ptxspec gives {_describe_result(got, width)}, expected {shown_expect[-1]} ({example.why})"
                    )
        inputs = "; ".join(_hex(s, register_bits(o.type)) for s, o in zip(example.sources, form.sources))
        profile = f" (profile {example.profile})" if example.profile != "spec" else ""
        rows.append(
            Row(
                _shown(form),
                inputs,
                "; ".join(_describe_result(r, w) for r, w in zip(results, widths)),
                "; ".join(shown_expect),
                example.why + profile,
                form.family.key,
            )
        )
    return rows


def silicon_rows(family_key: str, failures: BuildFailure) -> list[Row]:
    """The family's examples checked against values recorded on silicon
    (:func:`ptxspec_recorded_examples.recorded_examples`); a disagreement fails the build."""
    rows = []
    for checked in recorded_examples(family_key):
        failures.extend(checked.problems)
        rows.append(Row(checked.form, checked.inputs, checked.result, checked.expected, checked.why))
        SILICON_COUNT[0] += 1
    return rows


# ---------------------------------------------------------------------------------------------
# Worked examples on a state (instructions of memory: ptxspec_examples.STATE_EXAMPLES)
# ---------------------------------------------------------------------------------------------

#: What a state example's page shows of 32 threads, of Tensor Memory's changed cells, of registers.
SHOWN_THREADS = (0, 1, 2, 31)
SHOWN_LANES = 4
SHOWN_COLUMNS = 8
SHOWN_REGISTERS = 8
SHOWN_BYTE_RUNS = 3


def _thread_values(result) -> tuple:
    """A destination's values, one per thread: bits; the one member of a set that has one (an
    exact sum the spec level stores as an interval); None where any bits are allowed (undefined,
    opaque, indeterminate); else the set itself."""
    from ptxspec.semantics.results import AnyBits, only_member
    from ptxspec.semantics.warp import Undefined

    def value(v):
        if isinstance(v, int) or v is None:
            return v
        if isinstance(v, (AnyBits, Undefined)):
            return None
        member = only_member(v)
        return v if member is None else member

    lanes = getattr(result, "lanes", None)
    return tuple(value(v) for v in (lanes if lanes is not None else (result,)))


def _value_text(value, width: int) -> str:
    if value is None:
        return "undefined"
    return _hex(value, width) if isinstance(value, int) else value.describe()


def _allocations_text(tensor_memory) -> str:
    return ", ".join(f"columns {a.column}-{a.end - 1}" for a in tensor_memory.allocations) or "none"


def _describe_state(state) -> str:
    """The start state of an example, in words."""
    shared = state.shared
    if not shared:
        memory = "no shared memory"
    elif len(set(shared)) == 1:
        memory = f"{len(shared)} bytes of shared memory, each {shared[0]:#04x}"
    else:
        memory = f"{len(shared)} bytes of shared memory ({' '.join(f'{b:02x}' for b in shared[:8])} ...)"
    return f"{memory}; Tensor Memory with live allocations: {_allocations_text(state.tensor_memory)}, no cell written"


def _byte_runs(before: bytes, after: bytes) -> list[tuple[int, int]]:
    """The runs [start, end) of byte addresses whose value differs."""
    runs: list[tuple[int, int]] = []
    for address, (a, b) in enumerate(zip(before, after)):
        if a != b:
            if runs and runs[-1][1] == address:
                runs[-1] = (runs[-1][0], address + 1)
            else:
                runs.append((address, address + 1))
    return runs


def _cell_text(words, defined, lane: int, column: int) -> str:
    from ptxspec.semantics.state import LOW_HALF, WHOLE

    flags, value = int(defined[lane, column]), int(words[lane, column])
    if flags == WHOLE:
        return f"``{value:#010x}``"
    if flags == LOW_HALF:
        return f"``0x????{value & 0xFFFF:04x}``"
    return "undefined" if flags == 0 else f"``0x{value >> 16:04x}????``"


def _state_changes(before, after) -> list[str]:
    """What changed from ``before`` to ``after``: reStructuredText blocks."""
    out: list[str] = []
    for start, end in _byte_runs(before.shared, after.shared)[:SHOWN_BYTE_RUNS]:
        shown = min(end, start + 16)
        more = " ..." if shown < end else ""
        out.append(
            f"* shared memory bytes {start:#x}-{end - 1:#x}: {lit(' '.join(f'{b:02x}' for b in before.shared[start:shown]) + more)} "
            f"→ {lit(' '.join(f'{b:02x}' for b in after.shared[start:shown]) + more)}"
        )
    tm_before, tm_after = before.tensor_memory, after.tensor_memory
    if tm_before.allocations != tm_after.allocations:
        out.append(f"* live allocations: {_allocations_text(tm_before)} → {_allocations_text(tm_after)}")
    for name in ("relinquished", "last_columns"):
        if getattr(tm_before, name) != getattr(tm_after, name):
            out.append(f"* Tensor Memory's {lit(name)}: {lit(repr(getattr(tm_before, name)))} → {lit(repr(getattr(tm_after, name)))}")
    if before.cta_group != after.cta_group:
        out.append(f"* the kernel's {lit('.cta_group')}: {lit(repr(before.cta_group))} → {lit(repr(after.cta_group))}")
    changed = tm_after.changed_cells(tm_before)
    if changed:
        lanes = sorted({lane for lane, _, _ in changed})
        columns = sorted({column for _, column, _ in changed})
        shown_lanes = lanes if len(lanes) <= SHOWN_LANES + 1 else [*lanes[:SHOWN_LANES], lanes[-1]]
        shown_columns = columns[:SHOWN_COLUMNS]
        out.append(
            f"* Tensor Memory: {len(changed)} cell(s) changed, in lanes {lanes[0]}-{lanes[-1]} and columns {columns[0]}-{columns[-1]}; "
            f"{'some of them' if (shown_lanes != lanes or shown_columns != columns) else 'all of them'} (lanes down, columns across):"
        )
        words, defined = tm_after.words(), tm_after.defined()
        rows = [[f"lane {lane}", *[_cell_text(words, defined, lane, c) for c in shown_columns]] for lane in shown_lanes]
        out.append("\n" + list_table(["", *[f"column {c}" for c in shown_columns]], rows))
        if any("????" in cell for row in rows for cell in row):
            out.append("(``????``: a 16-bit half of the cell that holds no value.)\n")
    if not out and before != after:
        out.append("* the state changed (in its peer CTA)")
    return out or ["* the state is unchanged"]


def _register_table(form, sources: tuple, results: tuple) -> str | None:
    """Per-thread sources and results, for the threads of :data:`SHOWN_THREADS`."""
    from ptxspec.spec.types import register_bits

    columns: list[tuple[str, tuple, int]] = []
    for operand, value in zip(form.inputs, sources):
        if not isinstance(value, int):
            columns.append((operand.name, tuple(value), register_bits(operand.type)))
    for operand, values in zip(form.destinations, results):
        if len(values) > 1:
            columns.append((f"{operand.name} (result)", values, register_bits(operand.type)))
    if not columns:
        return None
    shown = columns[:SHOWN_REGISTERS]
    rows = [[f"thread {t}", *[_cell(_value_text(values[t], width)) for _, values, width in shown]] for t in SHOWN_THREADS]
    more = f"\n({len(columns) - len(shown)} more register(s) not shown.)\n" if len(columns) > len(shown) else ""
    return list_table(["", *[esc(name) for name, _, _ in shown]], rows) + more


def state_example_block(example: StateExample, failures: BuildFailure) -> str:
    """Run ``example``'s steps through :func:`ptxspec.semantics.instructions.execute` from its start
    state, and show what each computed; check its expectations (a failure fails the build)."""
    from ptxspec.semantics.instructions import execute
    from ptxspec.spec.catalogue import parse
    from ptxspec.spec.errors import PtxSpecError
    from ptxspec.spec.types import register_bits

    where = f"state example {example.title!r} ({example.family})"
    state = example.start()
    states, registers = [state], []
    out = [f".. rubric:: {esc(example.title)}\n", prose(example.why) + "\n", f"Start: {esc(_describe_state(state))}.\n"]
    for number, step in enumerate(example.steps, 1):
        # a source taken from an earlier step's result (an mbarrier state token): thread 0's value
        sources = tuple(registers[s.step][s.destination][0] if isinstance(s, Earlier) else s for s in step.sources)
        step = attrs.evolve(step, sources=sources)
        try:
            form = parse(step.instruction)
        except PtxSpecError as error:
            failures.append(f"{where}, step {number}: {error.one_line()}")
            return ""
        out.append(f"**Step {number}.** {lit(_written(form))}\n")
        scalars = [
            f"{esc(o.name)} = {lit(_hex(v, register_bits(o.type)))}" + (f" ({v})" if o.type.startswith("u") else "")
            for o, v in zip(form.inputs, step.sources)
            if isinstance(v, int)
        ]
        if scalars:
            out.append(
                "Sources: "
                + ", ".join(scalars)
                + (" (every thread)" if any(not isinstance(v, int) for v in step.sources) or _threads(form) > 1 else "")
                + ".\n"
            )
        try:
            # a form of no memory (a register-only step of the example, mma.sync) takes no state
            outcome = execute(form, step.sources, state=state if _takes_state(form) else None, warp=step.warp)
        except PtxSpecError as error:
            if not step.refused:
                failures.append(f"{where}, step {number} ({form.text}): {error.one_line()}")
            out.append(f"ptxspec refuses it: {esc(error.one_line())}\n")
            states.append(state)
            registers.append(())
            continue
        except Exception as error:  # noqa: BLE001
            failures.append(f"{where}, step {number} ({form.text}) crashed: {type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}")
            return ""
        if step.refused:
            failures.append(f"{where}, step {number} ({form.text}): the manual forbids it, but ptxspec carries it out")
        results = tuple(_thread_values(r) for r in outcome.results)
        if outcome.state is None:
            outcome = attrs.evolve(outcome, state=state)
        table = _register_table(form, step.sources, results)
        if table:
            out.append(f"Registers of threads {', '.join(str(t) for t in SHOWN_THREADS)}:\n")
            out.append(table)
        elif results:
            out.append(
                "Results: "
                + ", ".join(f"{esc(o.name)} = {_cell(_value_text(v[0], register_bits(o.type)))}" for o, v in zip(form.destinations, results))
                + ".\n"
            )
        out.append("\n".join(_state_changes(state, outcome.state)) + "\n")
        state = outcome.state
        states.append(state)
        registers.append(results)
    try:
        checks = example.expect(Run(states, registers))
    except Exception as error:  # noqa: BLE001
        failures.append(f"{where}: its expectation crashed: {type(error).__name__}: {error}")
        return ""
    for holds, statement in checks:
        if not holds:
            failures.append(f"{where}: expected {statement}, which ptxspec's result does not satisfy")
    out.append(
        "Checked when this page was built (``docs/_ext/ptxspec_examples.py`` states it from the manual): " + "; ".join(prose(s) for _, s in checks) + ".\n"
    )
    return "\n".join(out) + "\n"


def _takes_state(form) -> bool:
    from ptxspec.semantics.instructions import operands_of

    kind = operands_of(form)
    return kind is None or kind.state


def _threads(form) -> int:
    from ptxspec.semantics.instructions import operands_of

    kind = operands_of(form)
    return kind.threads if kind is not None else 1


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------


def _helpers(fn, semantic_functions: set) -> list:
    """Module-level functions of ``fn``'s module that it calls, transitively (breadth first)."""
    found: list = []
    queue = [fn]
    seen = {fn}
    while queue and len(found) < HELPERS_PER_FUNCTION:
        current = queue.pop(0)
        for name in _names(current.__code__):
            obj = current.__globals__.get(name)
            if inspect.isfunction(obj) and obj.__module__ == fn.__module__ and obj not in seen and obj not in semantic_functions:
                seen.add(obj)
                found.append(obj)
                queue.append(obj)
    return found[:HELPERS_PER_FUNCTION]


def _core_functions(fn, helpers: list) -> list[str]:
    """Functions of the numerics core and the results module that ``fn`` or its helpers call."""
    names = []
    for f in [fn, *helpers]:
        for name in _names(f.__code__):
            obj = f.__globals__.get(name)
            module = getattr(obj, "__module__", "") or ""
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and module in ("ptxspec.semantics.numerics", "ptxspec.semantics.results"):
                ref = f"{module}.{obj.__qualname__}"
                if ref not in names:
                    names.append(ref)
    return names


def _names(code) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names.extend(_names(const))
    return names


def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return f"# source of {obj!r} is not available"


def family_section(family, facts: FamilyFacts, semantics: dict, semantic_functions: set, stated: list[Row], failures: BuildFailure) -> str:
    from ptxspec.spec.catalogue import Target, Targets

    out: list[str] = []
    syntax = family.syntax()
    title = syntax if len(syntax) <= 90 else f"{family.opcode} (catalogue key {family.key})"
    out.append(f".. _family-{family.key}:\n")
    out.append(heading(title, "-"))
    meta = [f"Manual section: §{family.section}", f"catalogue key {lit(family.key)}"]
    out.append(" · ".join(meta) + "\n")
    if family.summary:
        out.append(prose(family.summary) + "\n")

    # Syntax, qualifiers, operands.
    out.append(heading("Syntax", "~"))
    operand_list = facts.legal[0].template if facts.legal else family.operand_syntax
    out.append(code_block(family.syntax() + " " + operand_list + ";", "none"))
    if family.slots:
        rows = [[lit(s.name), " ".join(lit("." + t) for t in s.tokens), "required" if s.required else "optional"] for s in family.slots]
        out.append(list_table(["slot", "qualifiers", ""], rows, [15, 70, 15]))
    sample_note = f" (a seeded sample of {SAMPLE_SIZE} of them)" if facts.sampled else ""
    out.append(f"The slots give {facts.combinations} qualifier combinations{sample_note}; {len(facts.legal)} of those examined are legal.\n")
    signatures: dict[str, list[str]] = defaultdict(list)
    for form in facts.legal:
        try:
            signatures[_operand_signature(form)].append(_shown(form))
        except Exception as error:  # noqa: BLE001
            failures.append(f"{form.text}: the operands of a legal form cannot be computed: {type(error).__name__}: {error}")
    if signatures and len(signatures) <= 12:
        out.append(heading("Operands", "~"))
        rows = [[esc(sig), f"{len(forms)} form(s), e.g. {lit(forms[0])}"] for sig, forms in signatures.items()]
        out.append(list_table(["operands", "forms"], rows, [60, 40]))
    elif signatures:
        out.append(heading("Operands", "~"))
        out.append(f"The legal forms have {len(signatures)} different operand signatures; by position:\n")
        positions: dict[int, tuple[str, set]] = {}
        for form in facts.legal:
            for i, operand in enumerate(form.operands):
                name = f"{operand.name}{' (written)' if operand.destination else ''}"
                positions.setdefault(i, (name, set()))[1].add(operand.type)
        rows = [[esc(name), " ".join(lit("." + t) for t in sorted(types))] for name, types in positions.values()]
        out.append(list_table(["operand", "register types"], rows, [20, 80]))

    # Legality rules.
    out.append(heading("Legality rules", "~"))
    if not family.rules:
        out.append("Beyond the slots above (each qualifier in its place, at most once), no further rule.\n")
    for index, rule in enumerate(family.rules):
        section = f" (§{rule.section})" if rule.section else ""
        if isinstance(rule.message, str):
            text = prose(rule.message)
        elif facts.messages.get(index):
            shown = facts.messages[index][:4]
            more = len(facts.messages[index]) - len(shown)
            text = "; ".join(prose(m) for m in shown) + (f"; and {more} more" if more > 0 else "")
        else:
            doc = inspect.getdoc(rule.message) or ""
            text = prose(doc) if doc else "(the reason depends on the form)"
        forbidden = facts.forbidden.get(index, [])
        example = f" Forbids {len(forbidden)} combination(s), e.g. {lit(forbidden[0])}." if forbidden else ""
        out.append(f"* {text}{section}.{example}\n" if not text.endswith(".") else f"* {text}{section}{example}\n")
    out.append("")

    # Targets.
    out.append(heading("Targets", "~"))
    if isinstance(family.target, Targets) and len(family.target.alternatives) > 1:
        out.append("Every form, on any of these targets from the PTX ISA version beside it:\n")
        rows = [[lit(t.arch), f"PTX ISA {t.ptx[0]}.{t.ptx[1]}"] for t in family.target.alternatives]
        out.append(list_table(["target", "from"], rows, [50, 50]))
    elif isinstance(family.target, (Target, Targets)):
        out.append(f"Every form: {esc(str(family.target))}.\n")
    else:
        doc = inspect.getdoc(family.target)
        if doc:
            out.append(prose(doc).replace("\n", " ") + "\n")
        by_target: dict[str, list[str]] = defaultdict(list)
        for form in facts.legal:
            try:
                by_target[str(form.targets)].append(_shown(form))
            except Exception as error:  # noqa: BLE001
                failures.append(f"{form.text}: the target of a legal form cannot be computed: {type(error).__name__}: {error}")
        if by_target:
            rows = [[esc(t), str(len(forms)), ", ".join(lit(f) for f in forms[:3])] for t, forms in sorted(by_target.items())]
            out.append(list_table(["needs", "forms", "for example"], rows, [35, 10, 55]))
    if facts.shadowed:
        texts = list(facts.shadowed.items())[:3]
        out.append(
            ".. note::\n\n   "
            + f"{len(facts.shadowed)} combination(s) of this family are parsed as another family first, e.g. "
            + ", ".join(f"{lit(t)} (as {lit(k)})" for t, k in texts)
            + ".\n"
        )

    # Semantics.
    out.append(heading("Semantics", "~"))
    fn = semantics.get(family.key)
    if fn is None and family.key in WITHOUT_SEMANTICS:
        out.append(prose(WITHOUT_SEMANTICS[family.key]) + "\n")
    elif fn is None:
        out.append("Not yet implemented: ``ptxspec eval`` reports this form as unsupported.\n")
    else:
        out.append(f".. autofunction:: {fn.__module__}.{fn.__qualname__}\n   :no-index:\n")
        out.append(f"Defined in :mod:`{fn.__module__}`:\n")
        out.append(code_block(_source(fn)))
        helpers = _helpers(fn, semantic_functions)
        core = _core_functions(fn, helpers)
        if helpers:
            out.append("It calls these functions of its module:\n")
            for helper in helpers:
                out.append(f".. rubric:: {helper.__name__}\n")
                out.append(code_block(_source(helper)))
        if core:
            out.append("and, from the numerics core and the results module: " + ", ".join(f":py:obj:`{c.rsplit('.', 1)[1]} <{c}>`" for c in core) + ".\n")

    # Examples.
    if fn is not None:
        out.append(heading("Worked examples (checked at build time)", "~"))
        rows: list[Row] = [r for r in stated if (r.family or _family_of(r.form)) == family.key]
        checked_forms = 0
        skipped: dict[str, int] = defaultdict(int)
        oracle_shown: list[Row] = []
        per_type: dict[str, int] = defaultdict(int)
        for form in _spread(facts.legal)[:CHECKED_FORMS_PER_FAMILY]:
            got, why_not = oracle_rows(form, failures)
            if got:
                checked_forms += 1
                ORACLE_COUNT[0] += 1
                key = form.choices[-1][1] if form.choices else ""
                if len(oracle_shown) < SHOWN_ROWS_PER_FAMILY and per_type[key] < 3:
                    per_type[key] += 1
                    oracle_shown.append(got[0])
            elif why_not:
                skipped[why_not] += 1
        rows.extend(oracle_shown)
        silicon = silicon_rows(family.key, failures)
        rows.extend(silicon)
        on_state = [e for e in STATE_EXAMPLES if e.family == family.key]
        if on_state:
            out.append(
                "Each example below runs its instructions one after another through "
                ":func:`ptxspec.semantics.instructions.execute` on a :class:`~ptxspec.semantics.state.State`, "
                "while this page was built; every value shown was computed then.\n"
            )
            out.extend(state_example_block(example, failures) for example in on_state)
        if rows:
            out.append(
                "Each result below was computed by ptxspec while this page was built and compared with an expectation "
                "obtained independently: a value recorded on an H100 or H200 (``conformance/data/sm_90``, "
                "``docs/_ext/ptxspec_recorded_examples.py``: ptxspec's ``sm_90`` result must be the recorded one, and the "
                "recorded one must be in the set the manual allows), a statement worked out by hand from the manual in "
                "``docs/_ext/ptxspec_examples.py`` (rounding, overflow, NaN), or the exact value of the operation on exactly "
                "representable inputs (``docs/_ext/ptxspec_oracle.py``). The build fails if any disagree.\n"
            )
            table = [[lit(r.form), _cell(r.inputs), _cell(r.result), _cell(r.expected), _cell(r.source)] for r in rows]
            out.append(list_table(["instruction", "sources", "ptxspec", "expected", "why"], table, [15, 22, 14, 14, 35]))
        elif not on_state:
            out.append("No checked example for this family yet.\n")
            failures.append(f"{family.key}: the family has semantics but no checked worked example (add one to docs/_ext/ptxspec_examples.py)")
        if checked_forms:
            out.append(f"The exact-value oracle checked {checked_forms} legal form(s) of this family in this build.\n")
        unchecked = len(facts.legal) - checked_forms
        if unchecked:
            reasons = "; ".join(f"{esc(reason)} ({n})" for reason, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
            out.append(f"{unchecked} legal form(s) have no oracle-checked example: {reasons or 'not examined'}.\n")
        out.append("")
    return "\n".join(out) + "\n"


def _short(syntax: str, limit: int = 90) -> str:
    return syntax if len(syntax) <= limit else syntax[: limit - 3] + "..."


_HEX_WORD = re.compile(r"(0x[0-9a-f?]+)")


def _cell(text: str) -> str:
    """A table cell: each hex value an inline literal (never broken mid-number), the rest escaped."""
    return "".join(lit(part) if _HEX_WORD.fullmatch(part) else esc(part) for part in _HEX_WORD.split(text))


def _spread(forms: list) -> list:
    """Legal forms in an order that reaches every type early: round-robin over the last token."""
    groups: dict[str, list] = defaultdict(list)
    for form in sorted(forms, key=lambda f: (len(f.choices), f.text)):
        groups[form.choices[-1][1] if form.choices else ""].append(form)
    out = []
    for batch in itertools.zip_longest(*groups.values()):
        out.extend(f for f in batch if f is not None)
    return out


def _family_of(text: str) -> str | None:
    from ptxspec.spec.catalogue import parse

    try:
        return parse(text).family.key
    except Exception:  # noqa: BLE001
        return None


def _chapter_of(family):
    """The module of :data:`ptxspec.spec.catalogue.CHAPTERS` that defines ``family``."""
    import importlib

    from ptxspec.spec.catalogue import CHAPTERS

    for name in CHAPTERS:
        module = importlib.import_module(f"ptxspec.spec.{name}")
        if any(f.key == family.key for f in getattr(module, "FAMILIES", ())):
            return module
    return None


def _written(form) -> str:
    """The form with its operands as PTX writes them: those its chapter's ``addresses(form)``
    names in brackets (``[taddr]``)."""
    template = form.template or ""
    addresses = getattr(_chapter_of(form.family), "addresses", None)
    for name in addresses(form) if addresses else ():
        template = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.])", f"[{name}]", template)
    return f"{form.text} {template}".strip()


def operations() -> dict[str, str]:
    """Family key -> the operation it belongs to (``tcgen05.ld.red``), for the families of every
    chapter of the catalogue that names its operations (a module of
    :data:`ptxspec.spec.catalogue.CHAPTERS` with ``operation_of``: the first qualifier, as the
    manual names the instruction, ``wait::ld`` and ``wait::st`` both ``wait``). Such an opcode gets a
    page per operation, under a page of the opcode that lists them."""
    import importlib

    from ptxspec.spec.catalogue import CHAPTERS

    found: dict[str, str] = {}
    for name in CHAPTERS:
        module = importlib.import_module(f"ptxspec.spec.{name}")
        operation_of = getattr(module, "operation_of", None)
        if operation_of is None:
            continue
        for family in module.FAMILIES:
            found[family.key] = f"{family.opcode}.{operation_of(family).split('::')[0]}"
    return found


def _page_of(family, operation_names: dict[str, str]) -> str:
    """The name of the page that shows ``family``: its operation's, or its opcode's."""
    return operation_names.get(family.key, family.opcode)


def operations_page(opcode: str, by_operation: dict[str, list], semantics: dict) -> str:
    """The page of an opcode whose families have a page per operation: a table of them."""
    families = [f for group in by_operation.values() for f in group]
    sections = sorted({f.section for f in families}, key=_section_key)
    out = [
        f".. _opcode-{_slug(opcode)}:\n",
        heading(opcode, "="),
        "Manual sections: " + ", ".join(f"§{s}" for s in sections) + ".\n",
        "This page and the page of each operation are generated from the catalogue (:mod:`ptxspec.spec.catalogue`) and the "
        "semantic functions (:mod:`ptxspec.semantics.instructions`) each time the documentation is built. "
        f"{opcode} has {len(by_operation)} operations in the catalogue, one page each:\n",
    ]
    rows = []
    for operation, group in by_operation.items():
        for family in group:
            rows.append(
                [
                    f":ref:`{esc(operation)} <opcode-{_slug(operation)}>`",
                    f"§{family.section}",
                    lit(family.syntax()),
                    "yes" if family.key in semantics else ("none (ordering only)" if family.key in WITHOUT_SEMANTICS else "not yet"),
                    prose(family.summary),
                ]
            )
    out.append(list_table(["operation", "section", "syntax", "semantics", "summary"], rows, [14, 11, 42, 10, 23]))
    out.append(".. toctree::\n   :maxdepth: 1\n   :hidden:\n\n" + "\n".join(f"   {_slug(o)}" for o in by_operation) + "\n")
    return "\n".join(out)


def opcode_page(opcode: str, families: list, facts: dict, semantics: dict, semantic_functions: set, stated: list[Row], failures: BuildFailure) -> str:
    """The page of an opcode, or of one operation of an opcode (``opcode`` is then its name,
    ``tcgen05.ld``): every family's section."""
    sections = sorted({f.section for f in families}, key=_section_key)
    out = [
        f".. _opcode-{_slug(opcode)}:\n",
        heading(opcode, "="),
        f"Manual section{'s' if len(sections) > 1 else ''}: " + ", ".join(f"§{s}" for s in sections) + ".\n",
    ]
    out.append(
        "This page is generated from the catalogue (:mod:`ptxspec.spec.catalogue`) and the semantic functions "
        "(:mod:`ptxspec.semantics.instructions`) each time the documentation is built.\n"
    )
    if len(families) > 1:
        out.append("Syntax lines:\n")
        for family in families:
            out.append(f"* :ref:`{esc(_short(family.syntax()))} <family-{family.key}>`")
        out.append("")
    for family in families:
        out.append(family_section(family, facts[family.key], semantics, semantic_functions, stated, failures))
    return "\n".join(out)


def opcode_pages(
    opcode: str,
    families: list,
    operation_names: dict[str, str],
    facts: dict,
    semantics: dict,
    semantic_functions: set,
    stated: list[Row],
    failures: BuildFailure,
) -> dict[str, str]:
    """The pages of one opcode (file name -> reStructuredText): its page, and where its chapter
    names operations (:func:`operations`), a page per operation, which its page lists."""
    by_operation: dict[str, list] = defaultdict(list)
    for family in families:
        if family.key in operation_names:
            by_operation[operation_names[family.key]].append(family)
    if not by_operation:
        return {f"{_slug(opcode)}.rst": opcode_page(opcode, families, facts, semantics, semantic_functions, stated, failures)}
    for family in families:
        if family.key not in operation_names:
            failures.append(f"{family.key}: its chapter names the operations of {opcode}, but not this family's")
    pages = {f"{_slug(opcode)}.rst": operations_page(opcode, by_operation, semantics)}
    for operation, group in by_operation.items():
        pages[f"{_slug(operation)}.rst"] = opcode_page(operation, group, facts, semantics, semantic_functions, stated, failures)
    return pages


def index_page(opcodes: list[str], catalogue, semantics: dict, operation_names: dict[str, str] | None = None) -> str:
    out = [heading("Instruction reference", "=")]
    out.append(
        "One page per opcode, generated from the catalogue and the semantic functions at build time. "
        "Every worked example on these pages was computed by ptxspec during the build and checked against "
        "an independently stated expectation.\n"
    )
    families = sorted(catalogue.families(), key=lambda f: (_section_key(f.section), f.opcode, f.key))
    implemented = sum(1 for f in families if f.key in semantics)
    out.append(f"The catalogue holds {len(families)} syntax lines of {len(opcodes)} opcodes; {implemented} have semantics.\n")
    rows = [
        [
            f":ref:`{esc(_page_of(f, operation_names or {}))} <opcode-{_slug(_page_of(f, operation_names or {}))}>`",
            f"§{f.section}",
            lit(f.syntax()),
            "yes" if f.key in semantics else "not yet",
            prose(f.summary),
        ]
        for f in families
    ]
    out.append(list_table(["opcode", "section", "syntax", "semantics", "summary"], rows, [11, 12, 44, 10, 23]))
    out.append(".. toctree::\n   :maxdepth: 1\n   :hidden:\n\n" + "\n".join(f"   {_slug(o)}" for o in opcodes) + "\n")
    return "\n".join(out)


def build_pages() -> tuple[dict[str, str], BuildFailure, dict]:
    """Every page of the reference (file name -> reStructuredText), the problems that must fail
    the build, and counts for the log. Needs ptxspec, not Sphinx (tests/test_docs.py calls it)."""
    from ptxspec.semantics import instructions
    from ptxspec.spec.catalogue import CATALOGUE

    instructions._load_chapters()
    SILICON_COUNT[0] = 0
    semantics = {key: entry.function for key, entry in instructions.SEMANTICS.items()}
    semantic_functions = set(semantics.values())
    failures = BuildFailure()

    opcodes = sorted(CATALOGUE.opcodes, key=lambda o: (min(_section_key(f.section) for f in CATALOGUE.families(o)), o))
    facts = {f.key: study(f, failures) for f in CATALOGUE.families()}
    known = set(CATALOGUE.opcodes)
    for example in EXAMPLES:
        if example.instruction.split(".")[0] not in known:
            failures.append(f"stated example {example.instruction}: the catalogue has no such opcode")
    stated = stated_rows(EXAMPLES, failures)

    for example in STATE_EXAMPLES:
        if example.family not in {f.key for f in CATALOGUE.families()}:
            failures.append(f"state example {example.title!r}: the catalogue has no family {example.family}")
        elif example.family not in {_family_of(step.instruction) for step in example.steps}:
            failures.append(f"state example {example.title!r}: none of its steps is a form of {example.family}, the family it is shown for")

    operation_names = operations()
    pages = {"index.rst": index_page(opcodes, CATALOGUE, semantics, operation_names)}
    for opcode in opcodes:
        pages.update(opcode_pages(opcode, CATALOGUE.families(opcode), operation_names, facts, semantics, semantic_functions, stated, failures))
    counts = {
        "opcodes": len(opcodes),
        "operations": len({o for o in operation_names.values()}),
        "stated": len(stated),
        "state_examples": len(STATE_EXAMPLES),
        "oracle_forms": ORACLE_COUNT[0],
        "silicon": SILICON_COUNT[0],
    }
    return pages, failures, counts


def generate(app) -> None:
    from sphinx.errors import ExtensionError
    from sphinx.util import logging

    ORACLE_COUNT[0] = 0
    SILICON_COUNT[0] = 0
    pages, failures, counts = build_pages()
    if failures:
        shown = "\n  - ".join(failures[:25])
        more = f"\n  ... and {len(failures) - 25} more" if len(failures) > 25 else ""
        raise ExtensionError(f"instruction reference: {len(failures)} problem(s):\n  - {shown}{more}")

    out_dir = Path(app.srcdir) / OUT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.rst"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        path = out_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    logging.getLogger(__name__).info(
        f"[ptxspec] instruction reference: {counts['opcodes']} opcode page(s) and {counts['operations']} operation page(s); "
        f"checked {counts['stated']} stated example(s), {counts['silicon']} against silicon recordings, {counts['state_examples']} example(s) on a state and "
        f"{counts['oracle_forms']} form(s) against the exact-value oracle"
    )


def setup(app) -> dict:
    app.connect("builder-inited", generate)
    # The descriptor pictures (docs/tcgen05-descriptors.rst) come with the reference.
    app.setup_extension("ptxspec_bit_fields")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
