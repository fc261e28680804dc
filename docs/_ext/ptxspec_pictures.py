"""Sphinx extension: pictures drawn from the executable layouts when the documentation is built.

Every picture is an inline SVG made by a function that lives next to the code it draws, so the
picture is the specification (nothing is typed into a page by hand); this module only chooses what
to draw and embeds it:

``.. fragment-layouts:: INSTRUCTION`` (``mma``, ``mma.sp``, ``ldmatrix``, ``wgmma``, ``wgmma.sp``)
    one subsection per shape, each with a picture per operand of
    :func:`ptxspec.semantics.matrix_layout.svg_fragment`: which thread holds each element of the
    matrix, in which register (§9.7.14.5, §9.7.14.6.2, §9.7.14.5.15-17, §9.7.15.5.1.1). The shapes
    and types come from the catalogue's fragment tables (``DENSE_AB``, ``SPARSE_AB``,
    ``ACCUMULATORS``, the wgmma syntax blocks), and types whose pictures are the same are drawn once
    (:func:`pictures`).

``.. fragment-picture:: INSTRUCTION INDEX``
    one of those pictures (what ``fragment-layouts`` writes).

``.. swizzle-pattern:: MODE``
    :func:`ptxspec.semantics.wgmma_layout.svg_swizzle`: which 16-byte chunk of each 128-byte row a
    swizzle mode puts where (§9.7.15.5.1.2.1.3, §5.5.7).

``.. litmus-graph:: PATH`` and ``.. litmus-graphs:: FOLDER``
    the test(s) checked now with both engines, and the execution that
    :func:`ptxspec.memory_model.render.svg` draws: the witness of an observable outcome, or a
    candidate with the forbidden outcome and the cycle of the axiom that rejects it (§8.10).

The descriptor bit fields are drawn by ``ptxspec_bit_fields`` (``.. bit-fields::``), which this
extension loads.
"""

from __future__ import annotations

import functools
import re
from html import escape
from pathlib import Path

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from ptxspec.semantics import matrix_data_movement as movement
from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.spec import wgmma as wg

#: The repository root (the parent of docs/): litmus paths are relative to it.
REPO = Path(__file__).resolve().parents[2]

#: Seconds that the search for a rejected candidate may take: far more than any manual test needs
#: (a few seconds), so that a loaded build machine draws the same picture as an idle one.
FORBIDDEN_BUDGET_S = 300.0

# ---------------------------------------------------------------------------------------------
# Which fragment pictures
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class FragmentPicture:
    """One picture of :func:`~ptxspec.semantics.matrix_layout.svg_fragment`: the ``operand`` ("A",
    "B", "C and D", ...) of ``instruction.shape`` for the element types ``types`` (which share it),
    drawn from ``layout``."""

    instruction: str
    shape: str
    operand: str
    types: tuple[str, ...]
    layout: ml.FragmentLayout = attrs.field(eq=False)
    note: str = ""

    @property
    def heading(self) -> str:
        return f"{self.instruction}.{self.shape}"

    @property
    def title(self) -> str:
        return f"{self.heading} {self.operand} ({', '.join(self.types)})"

    def caption(self) -> str:
        """What the picture shows, in words computed from the layout."""
        layout = self.layout
        unit = ml.HOLDERS[layout.threads][1]
        per = layout.per_register
        each = "one element" if per == 1 else f"{per} elements, element 0 in the least significant bits"
        parts = [
            f"<code>{escape(self.heading)}</code> {escape(self.operand)}, "
            + ", ".join(f"<code>{escape(t)}</code>" for t in self.types)
            + f": {layout.registers} x {layout.register_bits}-bit registers per {unit}, {each}; "
            f"{layout.rows} x {layout.stored_cols} elements (§{escape(layout.section)})."
        ]
        if self.note:
            parts.append(escape(self.note))
        return " ".join(parts)

    def svg(self) -> str:
        return ml.svg_fragment(self.layout, self.title)


def signature(layout: ml.FragmentLayout) -> tuple:
    """What a picture of ``layout`` shows: equal signatures, equal pictures (but for the title)."""
    runs = ml.fragment_runs(layout)
    return (layout.rows, layout.stored_cols, ml.block_rows(layout), tuple((run, ml.run_label(layout, run)) for run in runs))


def grouped(instruction: str, shape: str, operand: str, candidates: list[tuple[str, ml.FragmentLayout]], note: str = "") -> list[FragmentPicture]:
    """One picture per distinct layout among ``candidates`` (type name, layout), naming every type
    that has it, in the order the types first appear."""
    groups: dict[tuple, list] = {}
    for name, layout in candidates:
        groups.setdefault(signature(layout), [layout, []])[1].append(name)
    return [FragmentPicture(instruction, shape, operand, tuple(names), layout, note) for layout, names in groups.values()]


def _shapes(table: dict) -> list[str]:
    """The shapes of a fragment table, by M, N and K."""
    return sorted({shape for shape, _ in table}, key=ml.parse_shape)


def mma_pictures() -> list[FragmentPicture]:
    """``mma``: A, B and C/D of every shape and type of §9.7.14.5.1-13. ``m8n8k4`` .f16 has its own
    row/column-major A and B (§9.7.14.5.1), which ``DENSE_AB`` does not list."""
    out: list[FragmentPicture] = []
    for shape in dict.fromkeys(["m8n8k4", *_shapes(ml.DENSE_AB)]):
        types = [t for s, t in ml.DENSE_AB if s == shape]
        a = [(f".{t}", ml.fragment_layout(shape, "a", t)) for t in types]
        b = [(f".{t}", ml.fragment_layout(shape, "b", t)) for t in types]
        if shape == "m8n8k4":
            a = [(f".f16 .{major}", ml.fragment_layout(shape, "a", "f16", layout=major)) for major in ("row", "col")] + a
            b = [(f".f16 .{major}", ml.fragment_layout(shape, "b", "f16", layout=major)) for major in ("row", "col")] + b
        c = [(f".{t}", ml.fragment_layout(shape, "c", t)) for t in ml.ACCUMULATORS[shape]]
        stacked = "The four MMA computations of the warp are stacked (rows of computation q after heavy line q)." if shape == "m8n8k4" else ""
        out += grouped("mma", shape, "A", a, stacked) + grouped("mma", shape, "B", b, stacked) + grouped("mma", shape, "C and D", c, stacked)
    return out


def mma_sp_pictures() -> list[FragmentPicture]:
    """``mma.sp``: the stored (non-zero) half of A and B of every shape and type of §9.7.14.6.2;
    C and D are those of the dense ``mma`` of the same M x N."""
    out: list[FragmentPicture] = []
    note = "A is drawn as the registers hold it: the M x K/2 stored elements of each row, which the metadata places in the dense row."
    for shape in _shapes(ml.SPARSE_AB):
        types = [t for s, t in ml.SPARSE_AB if s == shape]
        out += grouped("mma.sp", shape, "A (stored half)", [(f".{t}", ml.fragment_layout(shape, "a", t, sparse=True)) for t in types], note)
        out += grouped("mma.sp", shape, "B", [(f".{t}", ml.fragment_layout(shape, "b", t, sparse=True)) for t in types])
    return out


#: The fragments of the data-movement instructions (§9.7.14.5.15-17): the instructions that have
#: the shape, and the forms that use the fragment.
MOVEMENT = (
    ("ldmatrix/stmatrix/movmatrix", "m8n8", movement.m8n8_fragment, ("ldmatrix .m8n8 .b16", "stmatrix .m8n8 .b16", "movmatrix .m8n8 .trans .b16")),
    ("ldmatrix", "m16n16", movement.m16n16_fragment, ("ldmatrix .m16n16 .trans .b8", "ldmatrix .m16n16 .trans .b8x16.*")),
    ("ldmatrix", "m8n16", movement.m8n16_fragment, ("ldmatrix .m8n16 .b8x16.*",)),
    ("stmatrix", "m16n8", movement.m16n8_fragment, ("stmatrix .m16n8 .trans .b8",)),
)


def movement_pictures() -> list[FragmentPicture]:
    """``ldmatrix``/``stmatrix``/``movmatrix``: the fragment of one matrix; with ``.x2``/``.x4``
    each further matrix is the next register(s) of the vector, laid out the same."""
    note = "Per matrix: with .x2/.x4, matrix m is held the same way by the next register(s) of the vector; .trans transposes the matrix in memory."
    return [FragmentPicture(instruction, shape, "registers", forms, make(), note) for instruction, shape, make, forms in MOVEMENT]


def _wgmma_ks(types: tuple[str, ...], sparse: bool) -> dict[int, list[str]]:
    """K of each A type's syntax block (§9.7.15.2): one K per type."""
    ks: dict[int, list[str]] = {}
    for t in types:
        for k in sorted({wg.parse_shape(shape)[2] for shape in wg.block_shapes(t, sparse)}):
            ks.setdefault(k, []).append(t)
    return ks


#: The A types of wgmma (§9.7.15.2), in the manual's order.
WGMMA_A_TYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1")
#: N of the accumulator pictures: the layout of each 8 columns repeats for every N (§9.7.15.5.1.1).
WGMMA_D_N = 16


def wgmma_pictures(sparse: bool = False) -> list[FragmentPicture]:
    """``wgmma.mma_async`` (``.sp``): A in registers for each K (its layout does not depend on N),
    and, for the dense form, the accumulator D drawn at N = 16 for each ``.dtype``."""
    instruction = "wgmma.sp" if sparse else "wgmma"
    out: list[FragmentPicture] = []
    note = "Heavy lines between the warps of the warpgroup (thread = 32 x warp rank + lane)."
    for k, types in _wgmma_ks(WGMMA_A_TYPES, sparse).items():
        candidates = [(f".{t}", wl.fragment_layout(f"m64n8k{k}", "a", t, sparse=sparse)) for t in types]
        what = "A (stored half)" if sparse else "A"
        out += grouped(instruction, f"m64nNk{k}", what, candidates, note)
    if not sparse:
        dtypes = {"f16": 16, "f32": 16, "s32": 32}
        candidates = [(f".{t}", wl.fragment_layout(f"m64n{WGMMA_D_N}k{k}", "d", t)) for t, k in dtypes.items()]
        d_note = f"{note} Drawn for N = {WGMMA_D_N}: each further 8 columns continue the register numbering the same way."
        out += grouped(instruction, "m64nNkK", "D", candidates, d_note)
    return out


@functools.cache
def pictures(instruction: str) -> tuple[FragmentPicture, ...]:
    """The fragment pictures of an instruction, in page order."""
    makers = {
        "mma": mma_pictures,
        "mma.sp": mma_sp_pictures,
        "ldmatrix": movement_pictures,
        "wgmma": wgmma_pictures,
        "wgmma.sp": lambda: wgmma_pictures(sparse=True),
    }
    if instruction not in makers:
        raise ValueError(f"no fragment pictures of {instruction!r} (expected one of {', '.join(makers)})")
    return tuple(makers[instruction]())


# ---------------------------------------------------------------------------------------------
# The litmus tests
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class LitmusGraph:
    """A manual litmus test checked now: its herd7 verdict line, what the picture shows, the SVG
    (None when there is no execution to draw), and the test's own comment lines."""

    name: str
    verdict: str
    shows: str
    svg: str | None
    comments: tuple[str, ...]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", name)


@functools.cache
def litmus_graph(path: str) -> LitmusGraph:
    """Check the test at ``path`` (relative to the repository) with both engines, and draw its
    execution: a witness when the outcome is observable, else a candidate with the outcome and the
    cycle of the first axiom that ``--why`` names (§8.10).

    The witness is the explicit engine's first (its enumeration order is fixed), not Z3's model:
    which model Z3 returns depends on what the process asked it before, so a page built alone and
    the same page in a full build would draw different (equally valid) executions. The rejected
    candidate is the explicit engine's too (:func:`~ptxspec.memory_model.check.forbidden_example`),
    with a budget no manual test comes near."""
    from ptxspec.memory_model import litmus, lowering, render
    from ptxspec.memory_model.check import check

    file = REPO / path
    verdict = check(lowering.load(file), engine="both", want_why=True)
    comments = tuple(litmus.parse_file(file).comments)
    word = f"{verdict.verdict_word} ({verdict.observation}: {verdict.positive} of {verdict.positive + verdict.negative} final states show the outcome)"
    explicit = check(lowering.load(file), engine="explicit", want_witness=True)
    if explicit.witness is not None:
        program, execution, cycle = explicit.program, explicit.witness, None
    else:
        program, (execution, cycle) = verdict.program, render.picture(verdict, budget_s=FORBIDDEN_BUDGET_S)
    if execution is None:
        shows = "No picture: no candidate execution has the outcome (the program's paths, values or barriers exclude it; no axiom is needed)."
        return LitmusGraph(verdict.name, word, shows, None, comments)
    if cycle is None:
        shows = "An execution that shows the outcome (a witness)."
    else:
        shows = f"A candidate execution with the outcome, rejected by {cycle.axiom}: the bold edges close its forbidden cycle."
    picture = render.svg(program, execution, cycle, id_prefix=f"{_slug(verdict.name)}-")
    return LitmusGraph(verdict.name, word, shows, picture.removeprefix('<?xml version="1.0" encoding="UTF-8"?>\n'), comments)


# ---------------------------------------------------------------------------------------------
# Directives
# ---------------------------------------------------------------------------------------------


def figure(css: str, svg: str, caption: str) -> nodes.raw:
    """An inline SVG in a figure that scrolls sideways when wider than the page."""
    html = f'<figure class="ptxspec-picture {css}"><div class="ptxspec-picture-scroll">{svg}</div><figcaption>{caption}</figcaption></figure>'
    return nodes.raw("", html, format="html")


class FragmentLayouts(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        instruction = self.arguments[0]
        try:
            chosen = pictures(instruction)
        except Exception as error:  # noqa: BLE001 - a ptxspec error names the layout it refuses
            raise self.error(f"fragment-layouts {instruction}: {type(error).__name__}: {error}") from error
        lines: list[str] = []
        heading = None
        for index, picture in enumerate(chosen):
            if picture.heading != heading:
                heading = picture.heading
                lines += [heading, "~" * len(heading), ""]
            lines += [f".. fragment-picture:: {instruction} {index}", ""]
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=self.get_source_info()[0]), container)
        return container.children


class FragmentPictureDirective(SphinxDirective):
    required_arguments = 2

    def run(self) -> list[nodes.Node]:
        instruction, index = self.arguments[0], int(self.arguments[1])
        picture = pictures(instruction)[index]
        return [figure("fragment-layout", picture.svg(), picture.caption())]


class SwizzlePattern(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        mode = self.arguments[0]
        try:
            svg = wl.svg_swizzle(mode)
        except Exception as error:  # noqa: BLE001
            raise self.error(f"swizzle-pattern {mode}: {type(error).__name__}: {error}") from error
        unit = wl.swizzle_unit(mode)
        caption = (
            f"The <code>{escape(mode)}</code> swizzle (<code>Swizzle&lt;{','.join(map(str, wl.SWIZZLES[mode]))}&gt;</code>): "
            f"each cell is {unit} bytes of shared memory and says which {unit}-byte chunk of the unswizzled row lands there; "
            f"the pattern repeats every {wl.PATTERN_BYTES[mode]} bytes (heavy line)."
        )
        return [figure("swizzle", svg, caption)]


def _litmus_nodes(directive: SphinxDirective, path: str, heading: bool) -> list[nodes.Node]:
    try:
        graph = litmus_graph(path)
    except Exception as error:  # noqa: BLE001 - a ptxspec error names the test and the line
        raise directive.error(f"litmus-graph {path}: {type(error).__name__}: {error}") from error
    text = f"<code>{escape(path)}</code>: {escape(graph.verdict)}. {escape(graph.shows)}"
    out: list[nodes.Node] = []
    if heading:
        out += [nodes.paragraph("", "", nodes.literal(text=" ".join(graph.comments) or graph.name))]
    if graph.svg is None:
        out.append(nodes.raw("", f'<p class="litmus-graph-none">{text}</p>', format="html"))
    else:
        out.append(figure("litmus-graph", graph.svg, text))
    return out


class LitmusGraphDirective(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        return _litmus_nodes(self, self.arguments[0], heading=False)


class LitmusGraphs(SphinxDirective):
    """Every ``*.litmus`` of a folder, in name order, one subsection each."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        folder = REPO / self.arguments[0]
        lines: list[str] = []
        for file in sorted(folder.glob("*.litmus")):
            name = file.stem
            lines += [name, "-" * len(name), "", f".. litmus-graph-entry:: {file.relative_to(REPO).as_posix()}", ""]
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=self.get_source_info()[0]), container)
        return container.children


class LitmusGraphEntry(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        return _litmus_nodes(self, self.arguments[0], heading=True)


def setup(app):
    app.setup_extension("ptxspec_bit_fields")  # the descriptor strips (``.. bit-fields::``)
    app.add_directive("fragment-layouts", FragmentLayouts)
    app.add_directive("fragment-picture", FragmentPictureDirective)
    app.add_directive("swizzle-pattern", SwizzlePattern)
    app.add_directive("litmus-graph", LitmusGraphDirective)
    app.add_directive("litmus-graphs", LitmusGraphs)
    app.add_directive("litmus-graph-entry", LitmusGraphEntry)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
