"""ptxspec: an executable formal specification of NVIDIA PTX (ISA 8.7) and a conformance oracle.

The import namespace has four parts that mirror the repository's top-level folders:

* :mod:`ptxspec.spec` -- the PTX language as data (types, formats, the instruction catalogue, the parser);
* :mod:`ptxspec.semantics` -- pure, bit-exact semantic functions, one per instruction;
* :mod:`ptxspec.memory_model` -- the memory consistency model (chapter 8);
* :mod:`ptxspec.conformance` -- the harness and the user-facing tools (the ``ptxspec`` command).
"""

__version__ = "0.1.0"
PTX_ISA_VERSION = "8.7"
