"""ptxspec: an executable formal specification of NVIDIA PTX (ISA 8.7) and a conformance oracle.

The public API, at the top of the package (each name imported on first use, so that ``import
ptxspec`` stays quick)::

    import ptxspec

    ptxspec.evaluate("add.rn.f32", [0x3F800000, 0x40000000])            # (0x40400000,)
    ptxspec.check("add.rn.f32", [0x7FC00000, 0x3F800000], [0x7FC00001])  # True: any NaN
    ptxspec.execute("ld.global.u32", [0x1000], state=ptxspec.State(global_memory=ptxspec.Segment(0x1000, bytes(4))))
    ptxspec.parse("cvt.rn.satfinite.e4m3x2.f32")                         # the catalogue's Form
    ptxspec.litmus.check("examples/litmus/MP.litmus").ok                 # True: "~exists" holds

* :func:`evaluate`, :func:`check`, :func:`execute` -- an instruction's semantics
  (:mod:`ptxspec.semantics.instructions`); :func:`parse` -- the instruction catalogue
  (:mod:`ptxspec.spec.catalogue`); :class:`State`, :class:`Segment` -- memory for the forms that
  read it (:mod:`ptxspec.semantics.state`); :mod:`ptxspec.litmus` -- litmus tests against the
  memory model.

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

#: The public names and where they live.
_PUBLIC = {
    "evaluate": "ptxspec.semantics.instructions",
    "check": "ptxspec.semantics.instructions",
    "execute": "ptxspec.semantics.instructions",
    "parse": "ptxspec.spec.catalogue",
    "State": "ptxspec.semantics.state",
    "Segment": "ptxspec.semantics.state",
    "litmus": None,  # the submodule ptxspec.litmus
}

__all__ = ["PTX_ISA_VERSION", "__version__", *_PUBLIC]


def __getattr__(name: str):
    import importlib

    if name not in _PUBLIC:
        raise AttributeError(f"module 'ptxspec' has no attribute {name!r}")
    module = _PUBLIC[name]
    value = importlib.import_module(f"ptxspec.{name}") if module is None else getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
