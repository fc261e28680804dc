"""Sphinx extension: pictures of the tcgen05.ld / tcgen05.st Tensor Memory maps.

``.. tmem-map:: SHAPE`` (options ``:num: N``, ``:packed:``) draws, at build time, the grid of
Tensor Memory lanes (down) and columns (across) that ``tcgen05{.ld,.st}.SHAPE.xN`` touches, each
cell labelled with the thread and register that hold it. The SVG is made by
:func:`ptxspec.semantics.tcgen05_layout.svg_map` from the executable maps, so the picture is the
specification (no hand-drawn data), and is put inline in the HTML.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ptxspec.semantics import tcgen05_layout


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


def setup(app):
    app.add_directive("tmem-map", TmemMap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
