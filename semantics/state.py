"""The state an instruction reads and writes besides registers (DESIGN.md "State").

An instruction of memory is still a pure function ``(form, state, operands) -> (results, new
state)`` (:mod:`ptxspec.semantics.instructions`): the state is a frozen value, and an instruction
that writes returns a new one that shares what it did not change.

Now it holds the ``.shared`` state space of one CTA (§5.1.5, "shared memory"), as bytes in address
order -- what ``ldmatrix``/``stmatrix`` (§9.7.14.5.15-16) and the matrix descriptors of
``wgmma.mma_async`` (§9.7.15.5.1.2) address. The stateful instructions to come add their parts here
(Tensor Memory and its allocation record, mbarrier objects) as fields of their own.
"""

from __future__ import annotations

import attrs
import numpy as np


def _as_bytes(image: object) -> bytes:
    if isinstance(image, np.ndarray):
        return np.ascontiguousarray(image, dtype=np.uint8).tobytes()
    return bytes(image)  # type: ignore[call-overload]


@attrs.frozen
class State:
    """The state of one CTA that the instructions here read and write: ``shared``, the bytes of its
    shared memory (address 0 first)."""

    shared: bytes = attrs.field(default=b"", converter=_as_bytes)

    def shared_image(self) -> np.ndarray:
        """``shared`` as a read-only uint8 array (no copy)."""
        return np.frombuffer(self.shared, dtype=np.uint8)

    def with_shared(self, image: object) -> State:
        """The same state with shared memory replaced by ``image`` (bytes or a uint8 array)."""
        return attrs.evolve(self, shared=image)
