"""§9.7.14 Warp-level matrix multiply-accumulate instructions.

The chapter's semantics live in three modules: :mod:`ptxspec.semantics.mma` (mma and mma.sp: the
numerics at spec level and the measured sm_90 datapaths, registered for the catalogue's mma
families), :mod:`ptxspec.semantics.mma_block_scale` (the sm_120a ``.kind::f8f6f4`` and block-scaled
forms, spec level) and :mod:`ptxspec.semantics.matrix_data_movement` (ldmatrix, stmatrix, movmatrix: pure
functions of a shared-memory image and the lanes' addresses). The fragment layouts both use are in
:mod:`ptxspec.semantics.matrix_layout`. This module is the chapter's entry point for the registry
(:func:`ptxspec.semantics.instructions._load_chapters` imports one module per chapter).
"""

from ptxspec.semantics import matrix_data_movement, mma, mma_block_scale  # noqa: F401  (registers the mma families)
