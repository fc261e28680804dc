"""ptxspec: an executable formal specification of NVIDIA PTX (ISA 8.7) and a conformance oracle.

The import namespace has four parts that mirror the repository's top-level folders:

* :mod:`ptxspec.spec` -- the PTX language as data (types, formats, the instruction catalogue, the parser);
* :mod:`ptxspec.semantics` -- pure, bit-exact semantic functions, one per instruction;
* :mod:`ptxspec.memory_model` -- the memory consistency model (chapter 8);
* :mod:`ptxspec.conformance` -- the harness and the user-facing tools (the ``ptxspec`` command).
"""

from pathlib import Path as _Path

__version__ = "0.1.0"
PTX_ISA_VERSION = "8.7"

# Run from a checkout (this folder beside spec/, semantics/, ... and pyproject.toml, as in the
# repository; Python puts the current folder first on sys.path), the subpackages are the
# checkout's top-level folders, as the installed package maps them (pyproject.toml's package-dir):
# `from ptxspec.semantics.instructions import evaluate` works from the clone's root as from
# anywhere else. An installed copy has no such siblings and is left as it is.
_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "semantics" / "instructions.py").is_file():
    __path__.append(str(_checkout))
