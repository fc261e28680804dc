"""The PTX language as data: types, floating-point formats, the instruction catalogue and its parser."""
