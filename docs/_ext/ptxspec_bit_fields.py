"""Sphinx extension: pictures of descriptor bit fields, drawn from the executable field tables.

Every descriptor of :mod:`ptxspec.semantics.tcgen05_descriptors` is a table of bit fields,
``FIELDS[name] = (lowest bit, width)`` (``SMEM_FIELDS``, ``INSTR_FIELDS[kind]``, ``MASK_FIELDS``),
that its ``encode``/``decode`` pack and unpack. :func:`svg_bit_fields` draws such a table as an SVG
register diagram (most significant bit on the left, 32 bits a row), so the picture is the table
that the code uses: no field name or bit range is typed into the documentation. Bits that no field
covers are drawn hatched, as "undefined".

Directives:

``.. bit-fields:: module.NAME`` (options ``:width: 32|64``, ``:key: K`` to pick ``NAME[K]``)
    the diagram of the field table, and a table of its fields (name, bits, width).

``.. descriptor-example::`` (content: a Python expression, evaluated in the namespace of
:mod:`ptxspec.semantics.tcgen05_descriptors`, then further expressions with ``d`` bound to the
first's value; option ``:width:``)
    computed when the page is built: the descriptor, its ``encode()`` value, the diagram with each
    field's value, and ``decode`` of that value, which must give the descriptor back (the build
    fails otherwise). An expression that ptxspec refuses shows the refusal.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from html import escape

#: Drawing metrics (pixels).
BIT_WIDTH = 26
ROW_BITS = 32
BOX_HEIGHT = 124
ROW_GAP = 34
MARGIN = 12
CHAR_WIDTH = 7.0  # of the 11 px monospace label font (with room), for deciding horizontal or vertical names


def bit_range(low: int, width: int) -> str:
    """The manual's way of writing a field's bits: ``"13"`` or ``"16-29"`` (low to high)."""
    return str(low) if width == 1 else f"{low}-{low + width - 1}"


def _check(fields: Mapping[str, tuple[int, int]], width: int) -> list[int | None]:
    """Which field (its index) holds each bit, None where none; refuses overlap or overflow."""
    owner: list[int | None] = [None] * width
    for index, (name, (low, bits)) in enumerate(fields.items()):
        if bits < 1 or low < 0 or low + bits > width:
            raise ValueError(f"field {name} = ({low}, {bits}) does not fit a {width}-bit value")
        for bit in range(low, low + bits):
            if owner[bit] is not None:
                raise ValueError(f"fields {list(fields)[owner[bit]]} and {name} overlap at bit {bit}")
            owner[bit] = index
    return owner


def _segments(low: int, bits: int) -> list[tuple[int, int, int]]:
    """The pieces of bits ``low .. low+bits-1`` per row: (row, x of the piece's left edge, bits)."""
    pieces = []
    bit = low
    end = low + bits
    while bit < end:
        row_low = bit - bit % ROW_BITS
        top = min(end, row_low + ROW_BITS)  # exclusive
        pieces.append((bit, top - bit))
        bit = top
    return [(piece_low // ROW_BITS, piece_low, count) for piece_low, count in pieces]


def _x(bit_high: int, row_width: int) -> float:
    """The left edge of bit ``bit_high`` (most significant on the left)."""
    column = (row_width - 1) - bit_high % ROW_BITS
    return MARGIN + column * BIT_WIDTH


def svg_bit_fields(fields: Mapping[str, tuple[int, int]], width: int, values: Mapping[str, int] | None = None) -> str:
    """An SVG register diagram of ``fields`` (``name -> (lowest bit, width)``) in a ``width``-bit
    value: one box per field, labelled with its name and its bits (``"16-29"``), and with its value
    where ``values`` gives one; one hatched box per run of bits that no field covers.

    Each field is one ``<g class="field" data-name=... data-bits=...>`` (a field that crosses a row
    boundary has a box in each row and its labels once), each uncovered run one
    ``<g class="undefined" data-bits=...>``, so the picture can be read back and compared with the
    table (tests/test_tcgen05_docs.py)."""
    owner = _check(fields, width)
    rows = (width + ROW_BITS - 1) // ROW_BITS
    row_width = min(width, ROW_BITS)
    total_width = 2 * MARGIN + row_width * BIT_WIDTH
    total_height = MARGIN + rows * (BOX_HEIGHT + ROW_GAP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bit-fields" width="{total_width}" height="{total_height}" '
        f'viewBox="0 0 {total_width} {total_height}" font-family="monospace" font-size="11">',
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="2"/></pattern></defs>',
    ]

    def row_top(row_from_top: int) -> float:
        return MARGIN + row_from_top * (BOX_HEIGHT + ROW_GAP) + 14

    # Bit numbers above each row: the row's ends and every field boundary.
    for row in range(rows):
        top = row_top(rows - 1 - row)
        edges = {row * ROW_BITS, min(width, (row + 1) * ROW_BITS) - 1}
        for low, bits in fields.values():
            for bit in (low, low + bits - 1):
                if row * ROW_BITS <= bit < (row + 1) * ROW_BITS:
                    edges.add(bit)
        for bit in sorted(edges):
            x = _x(bit, row_width) + BIT_WIDTH / 2
            out.append(f'<text class="bit-number" x="{x:.1f}" y="{top - 3:.1f}" text-anchor="middle" font-size="9" fill="#666">{bit}</text>')

    def boxes(low: int, bits: int, css: str, fill: str, label: list[str], data: str) -> None:
        out.append(f'<g class="{css}" {data}>')
        pieces = _segments(low, bits)
        widest = max(pieces, key=lambda p: p[2])
        for row, piece_low, count in pieces:
            top = row_top(rows - 1 - row)
            left = _x(piece_low + count - 1, row_width)
            box_width = count * BIT_WIDTH
            out.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{box_width}" height="{BOX_HEIGHT}" fill="{fill}" stroke="#333"/>')
            if (row, piece_low, count) != widest:
                continue
            centre = left + box_width / 2
            name, range_text, value_text = label
            out.append(f'<text class="bits" x="{centre:.1f}" y="{top + BOX_HEIGHT - 6:.1f}" text-anchor="middle" font-size="10">{escape(range_text)}</text>')
            if value_text:
                out.append(
                    f'<text class="value" x="{centre:.1f}" y="{top + BOX_HEIGHT - 20:.1f}" text-anchor="middle" font-size="10" fill="#a00">{escape(value_text)}</text>'
                )
            if not name:
                continue
            if len(name) * CHAR_WIDTH <= box_width - 4:
                out.append(f'<text class="name" x="{centre:.1f}" y="{top + 40:.1f}" text-anchor="middle">{escape(name)}</text>')
            else:  # vertical, reading upwards
                middle = top + (BOX_HEIGHT - 30) / 2 + 2
                out.append(
                    f'<text class="name" x="{centre + 4:.1f}" y="{middle:.1f}" text-anchor="middle" font-size="10" '
                    f'transform="rotate(-90 {centre + 4:.1f} {middle:.1f})">{escape(name)}</text>'
                )
        out.append("</g>")

    for name, (low, bits) in fields.items():
        value = None if values is None or name not in values else values[name]
        value_text = "" if value is None else (f"{value}" if value < 10 else f"{value:#x}")
        fill = "#f3f3f3" if name.startswith("reserved") else "#e8f0fb"
        data = f'data-name="{escape(name)}" data-bits="{bit_range(low, bits)}"'
        boxes(low, bits, "field", fill, [name, bit_range(low, bits), value_text], data)

    # Runs of bits that no field covers.
    bit = 0
    while bit < width:
        if owner[bit] is not None:
            bit += 1
            continue
        start = bit
        while bit < width and owner[bit] is None:
            bit += 1
        boxes(start, bit - start, "undefined", "url(#hatch)", ["", bit_range(start, bit - start), ""], f'data-bits="{bit_range(start, bit - start)}"')
    out.append("</svg>")
    return "\n".join(out)


def field_rows(fields: Mapping[str, tuple[int, int]]) -> list[tuple[str, str, int]]:
    """(name, bits, width) of each field, lowest bit first."""
    return [(name, bit_range(low, bits), bits) for name, (low, bits) in sorted(fields.items(), key=lambda kv: kv[1][0])]


def resolve(path: str) -> object:
    """``package.module.NAME`` -> the object."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------------------------------------
# Directives
# ---------------------------------------------------------------------------------------------


def _figure(svg: str, caption: str) -> str:
    return f'<figure class="bit-fields"><div style="overflow-x:auto">{svg}</div><figcaption>{caption}</figcaption></figure>'


def _rst_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            lines.append(("   * - " if i == 0 else "     - ") + (cell or "\\ "))
    return lines + [""]


def _plain(value: object) -> object:
    """numpy integers (and tuples or lists of them) as Python ints, for a readable repr."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return int(value) if hasattr(value, "dtype") and getattr(value, "shape", None) == () else value


def _literal(text: str) -> str:
    return f"``{text}``"


def setup(app):
    from docutils import nodes
    from docutils.parsers.rst import directives
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    def parse_rst(directive, lines: list[str]) -> list:
        container = nodes.container()
        directive.state.nested_parse(StringList(lines, source=directive.get_source_info()[0]), directive.content_offset, container)
        return container.children

    class BitFields(SphinxDirective):
        required_arguments = 1
        option_spec = {"width": directives.positive_int, "key": directives.unchanged}

        def run(self) -> list:
            path = self.arguments[0]
            try:
                table = resolve(path)
                key = self.options.get("key")
                fields = table[key] if key is not None else table
                width = self.options.get("width", 64)
                svg = svg_bit_fields(fields, width)
            except Exception as error:  # noqa: BLE001 - reported as the directive's error
                raise self.error(f"bit-fields {path}: {type(error).__name__}: {error}") from error
            name = path.rpartition(".")[2]
            caption = f"<code>{escape(name)}</code>"
            if key is not None:
                sharing = [k for k, v in table.items() if v is fields]
                caption = f"<code>{escape(name)}[{escape(key)!r}]</code>, the fields of " + ", ".join(f"<code>.kind::{escape(k)}</code>" for k in sharing)
            caption += f" ({width} bits, drawn from the table when this page was built)"
            rows = [[_literal(n), b, str(w)] for n, b, w in field_rows(fields)]
            return [nodes.raw("", _figure(svg, caption), format="html"), *parse_rst(self, _rst_table(["field", "bits", "width"], rows))]

    class DescriptorExample(SphinxDirective):
        has_content = True
        option_spec = {"width": directives.positive_int}

        def run(self) -> list:
            from ptxspec.semantics import tcgen05_descriptors as td
            from ptxspec.spec.errors import PtxSpecError

            lines = [line.strip() for line in self.content if line.strip()]
            if not lines:
                raise self.error("descriptor-example needs an expression")
            namespace = dict(vars(td))
            out: list[str] = [".. code-block:: python", "", f"   d = {lines[0]}", ""]
            try:
                d = eval(lines[0], namespace)  # noqa: S307 - the documentation's own text
            except PtxSpecError as error:
                return parse_rst(self, [*out, f"ptxspec refuses it: {error.one_line()}", ""])
            except Exception as error:  # noqa: BLE001
                raise self.error(f"descriptor-example {lines[0]}: {type(error).__name__}: {error}") from error
            namespace["d"] = d
            result: list = []
            if hasattr(d, "encode"):
                value = d.encode()
                kind = getattr(d, "kind", None)
                table = td.INSTR_FIELDS[kind] if kind is not None else (td.SMEM_FIELDS if isinstance(d, td.SmemDescriptor) else td.MASK_FIELDS)
                width = self.options.get("width", 32 if kind is not None else 64)
                back = type(d).decode(value, kind) if kind is not None else type(d).decode(value)
                if back != d:
                    raise self.error(f"descriptor-example: decode(encode(d)) = {back!r}, not d = {d!r}")
                fields = d.fields()
                digits = width // 4
                decode_call = f"{type(d).__name__}.decode({value:#0{digits + 2}x}{', ' + repr(kind) if kind else ''})"
                out += [
                    f"``d.encode()`` = ``{value:#0{digits + 2}x}`` (binary ``{value:0{width}b}``), the fields of the table holding:",
                    "",
                    *_rst_table(["field", "bits", "value"], [[_literal(n), b, str(fields[n])] for n, b, _ in field_rows(table)]),
                    f"and ``{decode_call}`` gives ``d`` back (checked when this page was built):",
                    "",
                    ".. code-block:: python",
                    "",
                    f"   {back!r}",
                    "",
                ]
                result.append(
                    nodes.raw(
                        "",
                        _figure(svg_bit_fields(table, width, fields), f"the fields of <code>d</code>, <code>d.encode()</code> = <code>{value:#x}</code>"),
                        format="html",
                    )
                )
            for expression in lines[1:]:
                try:
                    shown = repr(_plain(eval(expression, namespace)))  # noqa: S307
                except PtxSpecError as error:
                    shown = f"refused: {error.one_line()}"
                out += [f"``{expression}``:", "", ".. code-block:: none", "", f"   {shown}", ""]
            nodes_out = parse_rst(self, out)
            return nodes_out[:1] + result + nodes_out[1:] if result else nodes_out

    app.add_directive("bit-fields", BitFields)
    app.add_directive("descriptor-example", DescriptorExample)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
