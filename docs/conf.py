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
]

root_doc = "index"
exclude_patterns = ["_build"]
templates_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_title = f"ptxspec {release}"
html_theme_options = {
    "description": f"An executable specification of NVIDIA PTX ISA {ptxspec.PTX_ISA_VERSION}",
    "fixed_sidebar": True,
    "page_width": "1280px",
    "sidebar_width": "240px",
}
html_static_path = ["_static"]
html_css_files = ["ptxspec.css"]
