"""Sphinx extension: pictures of the tcgen05.ld / tcgen05.st Tensor Memory maps.

``.. tmem-map:: SHAPE`` (options ``:num: N``, ``:packed:``) draws, at build time, the grid of
Tensor Memory lanes (down) and columns (across) that ``tcgen05{.ld,.st}.SHAPE.xN`` touches, each
cell labelled with the thread and register that hold it. The SVG is made by
:func:`ptxspec.semantics.tcgen05_layout.svg_map` from the executable maps, so the picture is the
specification (no hand-drawn data), and is put inline in the HTML.

``.. tmem-datapath:: M N`` (options ``:cta-group: 1|2``, ``:sparse:``, ``:ws:``,
``:lane-alignment: 0|16``) draws, the same way, where D of a ``tcgen05.mma`` of that shape lands in
the 128 lanes of Tensor Memory (§9.7.16.10.5), from
:func:`ptxspec.semantics.tcgen05_datapath.svg_datapath`.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ptxspec.semantics import tcgen05_datapath, tcgen05_layout


class TmemMap(SphinxDirective):
    required_arguments = 1
    option_spec = {"num": directives.positive_int, "packed": directives.flag}

    def run(self) -> list[nodes.Node]:
        shape = self.arguments[0].lstrip(".")
        num = self.options.get("num", 1)
        packed = "packed" in self.options
        try:
            svg = tcgen05_layout.svg_map(shape, num, packed=packed)
        except Exception as e:  # a ptxspec error names the bad shape or .num
            raise self.error(f"tmem-map {shape} x{num}: {e}") from e
        title = f"tcgen05{{.ld,.st}}.{shape}.x{num}" + (" with .pack::16b / .unpack::16b" if packed else "")
        html = f'<figure class="tmem-map"><div style="overflow-x:auto">{svg}</div><figcaption><code>{title}</code></figcaption></figure>'
        return [nodes.raw("", html, format="html")]


class TmemDatapath(SphinxDirective):
    required_arguments = 2
    option_spec = {
        "cta-group": directives.positive_int,
        "sparse": directives.flag,
        "ws": directives.flag,
        "lane-alignment": directives.nonnegative_int,
    }

    def run(self) -> list[nodes.Node]:
        try:
            m, n = (int(a) for a in self.arguments)
        except ValueError as e:
            raise self.error(f"tmem-datapath takes M and N as integers, not {' '.join(self.arguments)!r}") from e
        cta_group = self.options.get("cta-group", 1)
        sparse, ws = "sparse" in self.options, "ws" in self.options
        alignment = self.options.get("lane-alignment", 0)
        try:
            svg = tcgen05_datapath.svg_datapath(m, n, cta_group, sparse, ws, alignment)
            layout = tcgen05_datapath.layout_id(m, cta_group, sparse, ws)
        except Exception as e:  # a ptxspec error names the combination that has no layout
            raise self.error(f"tmem-datapath M={m} N={n}: {e}") from e
        title = f"tcgen05.mma{'.sp' if sparse else ''}{'.ws' if ws else ''}.cta_group::{cta_group}, M = {m}, N = {n}: Layout {layout}"
        if alignment:
            title += f", lane alignment {alignment}"
        html = f'<figure class="tmem-datapath"><div style="overflow-x:auto">{svg}</div><figcaption><code>{title}</code></figcaption></figure>'
        return [nodes.raw("", html, format="html")]


def setup(app):
    app.add_directive("tmem-map", TmemMap)
    app.add_directive("tmem-datapath", TmemDatapath)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
