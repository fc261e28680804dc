"""§9.7.16 The 5th-generation TensorCore instructions (tcgen05): no semantic function yet.

The catalogue of the allocation and data-movement instructions is :mod:`ptxspec.spec.tcgen05`;
their meaning (Tensor Memory in the state, the tcgen05.ld/st shapes as layouts) comes with the
Tensor Memory state that is still to be written. This module exists because
:func:`ptxspec.semantics.instructions._load_chapters` imports one semantics module per chapter of
:data:`ptxspec.spec.catalogue.CHAPTERS`; it registers nothing.
"""
