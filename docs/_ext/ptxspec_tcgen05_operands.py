"""Sphinx extension: pictures of where tcgen05.mma finds its scale factors and sparsity metadata.

``.. tcgen05-scale-factors:: KIND SCALE_VEC K`` (options ``:operand: a|b``, ``:rows: M or N``,
``:id: scale factor ID``) and ``.. tcgen05-metadata:: KIND`` (options ``:selector:``, ``:lanes:``)
draw, at build time, the Tensor Memory cells (lanes down, columns across, each 32-bit cell split
into its bytes or 4-bit fields) that :func:`ptxspec.semantics.tcgen05_operands.scale_factor_cells`
and :func:`~ptxspec.semantics.tcgen05_operands.metadata_cells` give, each labelled with the scale
factor ``row.block`` or the metadata ``row.chunk`` it holds. No data is drawn by hand.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ptxspec.semantics import tcgen05_operands as ops


def svg_cells(labels: dict[tuple[int, int, int], str], parts: int, title: str) -> str:
    """A grid of lanes (down) by columns (across), each column split into ``parts`` sub-cells
    (bytes, 4-bit fields), labelled from ``labels[(lane, column, part)]``."""
    lanes = max(k[0] for k in labels) + 1
    columns = max(k[1] for k in labels) + 1
    cw, ch, left, top = (30 if parts <= 4 else 26), 16, 34, 34
    width, height = left + columns * parts * cw + 2, top + lanes * ch + 2
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="8" role="img">',
        f"<title>{escape(title)}</title>",
    ]
    for c in range(columns):
        x = left + c * parts * cw
        out.append(f'<text x="{x + parts * cw / 2}" y="12" text-anchor="middle" font-size="10">column {c}</text>')
        for p in range(parts):
            out.append(f'<text x="{x + p * cw + cw / 2}" y="{top - 6}" text-anchor="middle">{p}</text>')
    for lane in range(lanes):
        y = top + lane * ch
        out.append(f'<text x="{left - 4}" y="{y + ch / 2 + 3}" text-anchor="end">l{lane}</text>')
        for c in range(columns):
            for p in range(parts):
                x = left + (c * parts + p) * cw
                label = labels.get((lane, c, p))
                if label is None:
                    out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="#fff" stroke="#ccc"/>')
                    continue
                first = int(label.split(".")[0])
                hue = (first * 47) % 360
                out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="hsl({hue},65%,85%)" stroke="#555"/>')
                out.append(f'<text x="{x + cw / 2}" y="{y + ch / 2 + 3}" text-anchor="middle">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _figure(svg: str, caption: str) -> list[nodes.Node]:
    html = f'<figure class="tmem-map"><div style="overflow-x:auto">{svg}</div><figcaption>{escape(caption)}</figcaption></figure>'
    return [nodes.raw("", html, format="html")]


class ScaleFactors(SphinxDirective):
    required_arguments = 3
    option_spec = {"operand": directives.unchanged, "rows": directives.positive_int, "id": directives.nonnegative_int}

    def run(self) -> list[nodes.Node]:
        kind, scale_vec, k = self.arguments[0], self.arguments[1], int(self.arguments[2])
        operand = self.options.get("operand", "a")
        rows = self.options.get("rows", 128)
        sf_id = self.options.get("id", 0)
        try:
            _, lane, column, byte = ops.scale_factor_cells(operand, kind, scale_vec, rows, k, sf_id)
        except Exception as e:
            raise self.error(f"tcgen05-scale-factors {kind} {scale_vec} K={k}: {e}") from e
        labels = {}
        for r in range(lane.shape[0]):
            for j in range(lane.shape[1]):
                labels[(int(lane[r, j, 0]), int(column[r, j, 0]), int(byte[r, j, 0]))] = f"{r}.{j}"
        name = "scale_A [M, block]" if operand == "a" else "scale_B [N, block]"
        caption = (
            f".kind::{kind} .{scale_vec}, K = {k}, {name}, ID {sf_id}: lanes 0-31 and the bytes of each column "
            "(lanes 32-63, 64-95, 96-127 hold the same copies)"
        )
        return _figure(svg_cells(labels, 4, caption), caption)


class Metadata(SphinxDirective):
    required_arguments = 1
    option_spec = {"selector": directives.nonnegative_int, "lanes": directives.positive_int}

    def run(self) -> list[nodes.Node]:
        kind = self.arguments[0]
        selector = self.options.get("selector", 0)
        shown = self.options.get("lanes", 32)
        try:
            _, lane, column, bit = ops.metadata_cells(kind, 128, ops.td.K_VALUES[kind.removeprefix("kind::")][1], selector=selector)
        except Exception as e:
            raise self.error(f"tcgen05-metadata {kind}: {e}") from e
        labels = {}
        for i in range(lane.shape[0]):
            for g in range(lane.shape[1]):
                if lane[i, g] < shown:
                    labels[(int(lane[i, g]), int(column[i, g]), int(bit[i, g]) // 4)] = f"{i}.{g}"
        caption = (
            f".kind::{kind} sparsity metadata (M = 128, selector {selector}): lanes 0-{shown - 1}, each column as eight 4-bit fields "
            "(bits 0-3 first), labelled row.chunk"
        )
        return _figure(svg_cells(labels, 8, caption), caption)


def setup(app):
    app.add_directive("tcgen05-scale-factors", ScaleFactors)
    app.add_directive("tcgen05-metadata", Metadata)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
