"""Sphinx configuration of the ptxspec documentation.

Build: ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors). The instruction
reference (reference/generated/) is written at the start of every build by _ext/ptxspec_reference.py
from the catalogue and the semantic functions; its worked examples are checked as they are made.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import ptxspec  # noqa: E402  (the installed package: pip install -e '.[docs]')

project = "ptxspec"
author = "the ptxspec authors"
copyright = "the ptxspec authors"
release = ptxspec.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "ptxspec_reference",
    "ptxspec_litmus_families",
    "ptxspec_silicon",
    "ptxspec_tmem_pictures",
    "ptxspec_tcgen05_operands",
    "ptxspec_dashboard",
    "ptxspec_cli_pages",
    "ptxspec_form_search",
    "ptxspec_pictures",
    "ptxspec_litmus_silicon",
]

root_doc = "index"
exclude_patterns = ["_build"]
templates_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# semantics/instructions.py imports State only for type checking (a scalar `ptxspec eval` does not
# load the state or numpy); the alias lets autodoc resolve its annotations all the same.
autodoc_type_aliases = {"State": "ptxspec.semantics.state.State"}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# Furo: code blocks and tables scroll sideways instead of being clipped, pages use the width of
# the window, and the search box is on every page.
html_theme = "furo"
html_title = f"ptxspec {release}"
html_theme_options = {"navigation_with_keys": True}
html_static_path = ["_static"]
html_css_files = ["ptxspec.css"]
