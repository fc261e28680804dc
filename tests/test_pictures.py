"""The pictures that the documentation draws from the code (docs/_ext/ptxspec_pictures.py).

Each picture is read back from its SVG and compared with the function it claims to show:

* the fragment layouts (:func:`ptxspec.semantics.matrix_layout.svg_fragment`, docs/mma-layouts.rst):
  every box's thread and elements against :meth:`FragmentLayout.element`, the boxes tiling the
  matrix, a few cells against the manual's own formulas, and every shape and type of the
  catalogue's fragment tables drawn;
* the swizzle patterns (:func:`ptxspec.semantics.wgmma_layout.svg_swizzle`, docs/wgmma.rst) against
  ``swizzle_address`` of the matrix descriptors and of the tensor copies, and the manual's §5.5.7
  table;
* the wgmma matrix descriptor's bit-field strip against ``wgmma_layout.FIELDS``;
* the execution graphs of every test of tests/litmus/manual (:func:`ptxspec.memory_model.render.svg`,
  docs/memory-model.rst, docs/litmus-graphs.rst): no two text labels overlap, and the legend names
  what is drawn.

Every picture must be a valid SVG with width, height and viewBox, and the same bytes every time.
"""

from __future__ import annotations

import itertools
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from ptxspec.memory_model import render
from ptxspec.semantics import matrix_layout as ml
from ptxspec.semantics import tensor_map
from ptxspec.semantics import wgmma_layout as wl
from ptxspec.spec import wgmma as wg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import ptxspec_bit_fields as bit_fields  # noqa: E402
import ptxspec_pictures as pictures  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
FAMILIES = ("mma", "mma.sp", "ldmatrix", "wgmma", "wgmma.sp")
ALL_FRAGMENTS = [picture for family in FAMILIES for picture in pictures.pictures(family)]
MANUAL_LITMUS = sorted((REPO / "tests" / "litmus" / "manual").glob("*.litmus"))


def parse(svg: str) -> ET.Element:
    """The SVG as XML, after checking that a browser can size it (width, height, viewBox)."""
    root = ET.fromstring(svg.removeprefix('<?xml version="1.0" encoding="UTF-8"?>\n'))
    assert root.tag == f"{SVG}svg"
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert width > 0 and height > 0
    return root


# ---------------------------------------------------------------------------------------------
# Fragment layouts
# ---------------------------------------------------------------------------------------------


def read_boxes(svg: str) -> list[tuple[int, int, int, int, str, str]]:
    """(row, col, rows, cols, thread label, element label) of every box of a fragment picture."""
    root = parse(svg)
    left, top = int(root.get("data-left")), int(root.get("data-top"))
    pitch_x, pitch_y = int(root.get("data-pitch-x")), int(root.get("data-pitch-y"))
    groups = {g.get("class"): g for g in root.findall(f"{SVG}g")}
    rects = groups["cells"].findall(f"{SVG}rect")
    texts = [t.text for t in groups["labels"].findall(f"{SVG}text")]
    assert len(texts) == 2 * len(rects)
    boxes = []
    for rect, thread, elements in zip(rects, texts[0::2], texts[1::2]):
        x, y, w, h = (int(float(rect.get(k))) for k in ("x", "y", "width", "height"))
        assert (x - left) % pitch_x == 0 and (y - top) % pitch_y == 0 and w % pitch_x == 0 and h % pitch_y == 0
        boxes.append(((y - top) // pitch_y, (x - left) // pitch_x, h // pitch_y, w // pitch_x, thread, elements))
    return boxes


def elements_named(layout: ml.FragmentLayout, label: str) -> list[tuple[int, int]]:
    """(register, index) of each element a box's label names, in order: ``a5``, ``a4,a5``,
    ``a0..a7`` (element i = register i // P, index i % P), or ``r1``, ``r0.2``, ``r0.2-3``."""
    per = layout.per_register
    if layout.operand == "x":
        m = re.fullmatch(r"r(\d+)(?:\.(\d+)(?:-(\d+))?)?", label)
        assert m, label
        register = int(m[1])
        first = 0 if m[2] is None else int(m[2])
        last = per - 1 if m[2] is None else int(m[3] or m[2])
        return [(register, index) for index in range(first, last + 1)]
    op = layout.operand
    m = re.fullmatch(rf"{op}(\d+)(?:(,|\.\.){op}(\d+))?", label)
    assert m, label
    first, last = int(m[1]), int(m[3] or m[1])
    return [divmod(i, per) for i in range(first, last + 1)]


@pytest.mark.parametrize("picture", ALL_FRAGMENTS, ids=lambda p: p.title)
def test_fragment_picture_says_what_the_layout_says(picture):
    layout = picture.layout
    boxes = read_boxes(picture.svg())
    covered = np.zeros((layout.rows, layout.stored_cols), dtype=int)
    for row, col, rows, cols, thread_label, label in boxes:
        assert rows == 1 or cols == 1  # a run along a row or down a column
        thread = int(thread_label.removeprefix("T"))
        cells = [(row + i, col) for i in range(rows)] if rows > 1 else [(row, col + j) for j in range(cols)]
        named = elements_named(layout, label)
        assert len(named) == len(cells), (label, cells)
        for (register, index), cell in zip(named, cells):
            assert layout.element(thread, register, index) == cell
            covered[cell] += 1
    assert (covered == 1).all()  # the boxes tile the matrix: each element drawn once


def test_fragment_pictures_agree_with_the_registers_the_semantics_read():
    # to_matrix is what the mma semantics apply to the lanes' registers: a register value whose
    # fields are (thread, register, index) numbers must land where the picture's boxes say.
    layout = ml.fragment_layout("m16n8k16", "a", "f16")
    codes = np.array([[(t << 8 | r << 4 | 0) | (t << 8 | r << 4 | 1) << 16 for r in range(layout.registers)] for t in range(32)], dtype=np.uint64)
    matrix = layout.to_matrix(codes)
    for row, col, rows, cols, thread_label, label in read_boxes(ml.svg_fragment(layout)):
        cells = [(row + i, col) for i in range(rows)] if rows > 1 else [(row, col + j) for j in range(cols)]
        for (register, index), cell in zip(elements_named(layout, label), cells):
            code = int(matrix[cell])
            assert (code >> 8, code >> 4 & 0xF, code & 0xF) == (int(thread_label[1:]), register, index)


def _cell(svg: str, row: int, col: int) -> tuple[str, str]:
    for r, c, rows, cols, thread, label in read_boxes(svg):
        if r <= row < r + rows and c <= col < c + cols:
            return thread, label
    raise AssertionError(f"no box at ({row}, {col})")


def test_fragment_pictures_match_the_manuals_formulas():
    # §9.7.14.5.8 .f16 m16n8k16 A: "row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, groupID + 8
    # otherwise; col = (threadID_in_group * 2) + (i & 0x1) for i < 4, ... + 8 for i >= 4".
    a = ml.svg_fragment(ml.fragment_layout("m16n8k16", "a", "f16"))
    assert _cell(a, 0, 0) == ("T0", "a0,a1")
    assert _cell(a, 9, 2) == ("T5", "a2,a3")  # groupID 1 + 8, threadID_in_group 1
    assert _cell(a, 15, 15) == ("T31", "a6,a7")
    # §9.7.14.5.8 B: "row = (threadID_in_group * 2) + (i & 0x1) (+ 8 for i >= 2); col = groupID".
    b = ml.svg_fragment(ml.fragment_layout("m16n8k16", "b", "f16"))
    assert _cell(b, 10, 3) == ("T13", "b2,b3")
    # C/D .f32: "row = groupID for ci where i < 2, groupID + 8 for i >= 2; col = tig * 2 + (i & 0x1)".
    c = ml.svg_fragment(ml.fragment_layout("m16n8k16", "c", "f32"))
    assert _cell(c, 8, 7) == ("T3", "c3")
    # wgmma D (figure 148): warp 1 holds rows 16-31; d4..d7 in columns 8-15.
    d = wl.fragment_layout("m64n16k16", "d", "f32")
    assert _cell(ml.svg_fragment(d), 16 + 8 + 2, 8 + 2 * 3 + 1) == (f"T{32 + 4 * 2 + 3}", "d7")
    # ldmatrix .m8n8 (figure 103): "a group of four threads loads an entire row".
    assert _cell(ml.svg_fragment(pictures.movement.m8n8_fragment()), 1, 6) == ("T7", "r0")


def test_every_fragment_of_the_catalogue_is_drawn():
    drawn = {(p.instruction, p.shape, p.operand.split()[0], t) for p in ALL_FRAGMENTS for t in p.types}
    for shape, t in ml.DENSE_AB:
        assert {("mma", shape, "A", f".{t}"), ("mma", shape, "B", f".{t}")} <= drawn
    for shape, t in ml.SPARSE_AB:
        assert {("mma.sp", shape, "A", f".{t}"), ("mma.sp", shape, "B", f".{t}")} <= drawn
    for shape, types in ml.ACCUMULATORS.items():
        assert {("mma", shape, "C", f".{t}") for t in types} <= drawn
    for major in ("row", "col"):
        assert {("mma", "m8n8k4", "A", f".f16 .{major}"), ("mma", "m8n8k4", "B", f".f16 .{major}")} <= drawn
    for sparse, instruction in ((False, "wgmma"), (True, "wgmma.sp")):
        for t in pictures.WGMMA_A_TYPES:
            for shape in wg.block_shapes(t, sparse):
                assert (instruction, f"m64nNk{wg.parse_shape(shape)[2]}", "A", f".{t}") in drawn
    assert {("wgmma", "m64nNkK", "D", f".{t}") for t in ("f16", "f32", "s32")} <= drawn
    assert {p.shape for p in pictures.pictures("ldmatrix")} == {"m8n8", "m16n16", "m8n16", "m16n8"}


def test_fragment_labels_fit_their_boxes():
    for picture in ALL_FRAGMENTS:
        root = parse(picture.svg())
        pitch_x = int(root.get("data-pitch-x"))
        for _, _, _, cols, thread, label in read_boxes(picture.svg()):
            assert max(len(thread), len(label)) * ml.CHAR_WIDTH <= cols * pitch_x, (picture.title, label)


def test_types_that_share_a_picture_share_the_layout():
    for picture in ALL_FRAGMENTS:
        if picture.instruction not in ("mma", "mma.sp") or picture.shape == "m8n8k4":
            continue
        operand, sparse = picture.operand[0].lower(), picture.instruction == "mma.sp"
        layouts = [ml.fragment_layout(picture.shape, operand, t.removeprefix("."), sparse=sparse) for t in picture.types]
        assert all(pictures.signature(layout) == pictures.signature(picture.layout) for layout in layouts)


# ---------------------------------------------------------------------------------------------
# Swizzle patterns
# ---------------------------------------------------------------------------------------------

SWIZZLE_MODES = ("32B", "64B", "128B", "128B_base32B")


def read_swizzle(svg: str) -> dict[tuple[int, int], int]:
    root = parse(svg)
    return {(int(g.get("data-row")), int(g.get("data-position"))): int(g.get("data-chunk")) for g in root.iter(f"{SVG}g") if g.get("data-chunk") is not None}


@pytest.mark.parametrize("mode", SWIZZLE_MODES)
def test_swizzle_picture_says_where_swizzle_address_puts_each_chunk(mode):
    cells = read_swizzle(wl.svg_swizzle(mode))
    unit = wl.swizzle_unit(mode)
    assert len(cells) == 8 * (128 // unit)
    for (row, position), chunk in cells.items():
        address = row * 128 + chunk * unit
        assert int(wl.swizzle_address(address, mode)) == row * 128 + position * unit
        if mode != "128B_base32B":  # the tensor copies' 16-byte atomicity is the same swizzle
            assert int(tensor_map.swizzle_address(address, mode)) == row * 128 + position * unit
    if mode == "128B_base32B":
        assert int(tensor_map.swizzle_address(row * 128 + chunk * unit, "128B", "32B")) == row * 128 + position * unit


def test_swizzle_picture_matches_the_manuals_table():
    # §5.5.7, "64-byte swizzle mode": "each element (numbered cell) is 16 bytes, the start address
    # 512-byte aligned": 0 1 2 3 4 5 6 7 / 1 0 3 2 5 4 7 6 / 2 3 0 1 6 7 4 5 / 3 2 1 0 7 6 5 4.
    cells = read_swizzle(wl.svg_swizzle("64B"))
    table = ["01234567", "10325476", "23016745", "32107654"]
    for row in range(8):
        assert "".join(str(cells[(row, p)]) for p in range(8)) == table[row % 4]


# ---------------------------------------------------------------------------------------------
# The wgmma matrix descriptor
# ---------------------------------------------------------------------------------------------


def test_descriptor_picture_is_the_field_table():
    root = parse(bit_fields.svg_bit_fields(wl.FIELDS, 64))
    fields = {g.get("data-name"): g.get("data-bits") for g in root.iter(f"{SVG}g") if g.get("class") == "field"}
    assert fields == {name: bit_fields.bit_range(low, width) for name, (low, width) in wl.FIELDS.items()}
    # the rectangles cover exactly the field's bits: 32 bits a row, bit 0 at the right of the bottom row
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "field":
            continue
        low, width = wl.FIELDS[g.get("data-name")]
        bits = set()
        for rect in g.findall(f"{SVG}rect"):
            x, y, w = float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))
            row = 1 - round((y - bit_fields.MARGIN - 14) / (bit_fields.BOX_HEIGHT + bit_fields.ROW_GAP))
            first = round((x - bit_fields.MARGIN) / bit_fields.BIT_WIDTH)
            bits |= {32 * row + 31 - column for column in range(first, first + round(w / bit_fields.BIT_WIDTH))}
        assert bits == set(range(low, low + width))
    undefined = {g.get("data-bits") for g in root.iter(f"{SVG}g") if g.get("class") == "undefined"}
    assert undefined == {"14-15", "30-31", "46-48", "52-61"}


# ---------------------------------------------------------------------------------------------
# Execution graphs of the litmus tests
# ---------------------------------------------------------------------------------------------


def text_boxes(root: ET.Element) -> list[tuple[str, render._Box]]:
    """Every <text> with the box it covers (font size inherited as SVG does)."""
    out = []

    def walk(node: ET.Element, size: float, anchor: str) -> None:
        size = float(node.get("font-size", size))
        anchor = node.get("text-anchor", anchor)
        for child in node:
            if child.tag == f"{SVG}text":
                child_size = float(child.get("font-size", size))
                child_anchor = child.get("text-anchor", anchor)
                out.append((child.text, render.text_box(float(child.get("x")), float(child.get("y")), child.text, child_size, child_anchor)))
            else:
                walk(child, size, anchor)

    walk(root, 16.0, "start")
    return out


@pytest.mark.parametrize("path", MANUAL_LITMUS, ids=lambda p: p.stem)
def test_litmus_graph_labels_never_overlap(path):
    graph = pictures.litmus_graph(path.relative_to(REPO).as_posix())
    if graph.svg is None:
        assert "no candidate execution" in graph.shows
        return
    root = parse(graph.svg)
    width, height = float(root.get("width")), float(root.get("height"))
    boxes = text_boxes(root)
    for (text_a, a), (text_b, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), f"{path.stem}: {text_a!r} overlaps {text_b!r}"
    for text, box in boxes:
        assert 0 <= box.x and box.x + box.w <= width and 0 <= box.y and box.y + box.h <= height, f"{path.stem}: {text!r} outside"
    legend = [t.text for g in root.iter(f"{SVG}g") if g.get("class") == "legend" for t in g.iter(f"{SVG}text")]
    drawn = {t.text for g in root.iter(f"{SVG}g") if g.get("class") == "edge-labels" for t in g.iter(f"{SVG}text")}
    for name in render.RELATION_NAMES:
        assert (name in drawn) == any(line.startswith(f"{name}: ") for line in legend), (path.stem, name)
    assert ("rejected by" in graph.shows) == any(line.startswith("bold: a cycle") for line in legend)


def test_litmus_graph_ids_are_unique_on_a_page_and_the_bytes_repeat():
    from ptxspec.memory_model import lowering
    from ptxspec.memory_model.check import check

    verdict = check(lowering.load(REPO / "tests/litmus/manual/SB-fence.sc.litmus"), want_witness=True, want_why=True)
    execution, cycle = render.picture(verdict, budget_s=pictures.FORBIDDEN_BUDGET_S)
    first = render.svg(verdict.program, execution, cycle, id_prefix="SB-")
    assert first == render.svg(verdict.program, execution, cycle, id_prefix="SB-")
    ids = re.findall(r'id="([^"]+)"', first)
    assert ids and all(i.startswith("SB-") for i in ids)
    assert set(re.findall(r"url\(#([^)]+)\)", first)) <= set(ids)
    assert "bold: a cycle that Causality forbids (fr ; causality_order)" in first


def test_litmus_graph_does_not_depend_on_what_was_checked_before():
    # A page built alone and the same page in a full build must draw the same execution: Z3's
    # model depends on the process's earlier queries (this test's witness did, as Z3's), the
    # explicit engine's first witness does not.
    from ptxspec.memory_model import lowering
    from ptxspec.memory_model.check import check

    path = "tests/litmus/manual/bulk-copy-multicast-other-cta.litmus"
    first = pictures.litmus_graph.__wrapped__(path)
    for other in ("MP", "CoRR", "mbarrier-1a"):
        check(lowering.load(REPO / f"tests/litmus/manual/{other}.litmus"), engine="both", want_witness=True, want_why=True)
    assert pictures.litmus_graph.__wrapped__(path) == first


def test_a_crowded_graph_moves_labels_to_the_margin_without_overlap():
    # Many parallel edges between two events leave no free spot along some of them: their labels
    # go to the margin column, still apart from every other text.
    boxes = {1: render._Box(30, 70, render.BOX_W, render.BOX_H), 2: render._Box(30, 155, render.BOX_W, render.BOX_H)}
    edges = [render._Edge("rf", 1, 2, f"relation_{n}", "rf", 1 + n, False) for n in range(40)]
    points = [render._geometry(boxes[1], boxes[2], e.bend)[1] for e in edges]
    colours = dict(render.COLOURS, cycle=render.CYCLE_COLOUR)
    labels, width, height = render._place_labels(edges, points, list(boxes.values()), 340.0, 230.0, colours)
    assert any(label.leader is not None for label in labels)
    placed = [render.text_box(label.x, label.y, label.text) for label in labels]
    for a, b in itertools.combinations(placed + list(boxes.values()), 2):
        assert not a.overlaps(b)
    assert all(box.x + box.w <= width and box.y + box.h <= height for box in placed)


def test_pictures_are_the_same_bytes_every_time():
    """The same pictures from another process with another hash seed (no set or dict order leaks
    into a picture)."""
    import hashlib
    import os
    import subprocess

    def digest() -> str:
        svgs = [p.svg() for p in ALL_FRAGMENTS[:5]] + [wl.svg_swizzle(mode) for mode in ("32B", "64B", "128B")]
        return hashlib.sha256("".join(svgs).encode()).hexdigest()

    code = (
        "import sys; sys.path.insert(0, 'docs/_ext'); sys.path.insert(0, '.')\n"
        "from tests.test_pictures import ALL_FRAGMENTS, wl\n"
        "import hashlib\n"
        "svgs = [p.svg() for p in ALL_FRAGMENTS[:5]] + [wl.svg_swizzle(m) for m in ('32B', '64B', '128B')]\n"
        "print(hashlib.sha256(''.join(svgs).encode()).hexdigest())\n"
    )
    root = Path(__file__).resolve().parent.parent
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=os.environ | {"PYTHONHASHSEED": "12345"}, timeout=300)
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == digest()
