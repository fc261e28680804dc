"""sm_90's choices for the memory instructions of §9.7.9 (the memory round,
``conformance/data/sm_90/memory.npz``; tests/test_memory_silicon.py replays it)."""

from __future__ import annotations

import math

#: The 2-bit code of each eviction priority in a policy (bits 58-57 primary; bit 56 set for a
#: secondary ``.L2::evict_first``).
_PRIORITY_CODE = {"L2::evict_unchanged": 0, "L2::evict_first": 1, "L2::evict_last": 2, "L2::evict_normal": 3}


def createpolicy_fractional(primary: str, secondary: str, fraction: int) -> int:
    """The policy ``createpolicy.fractional`` writes on an H200 and an H100 (every primary and
    secondary priority, ten fractions and the default 1.0, each the same in two launches): bit 60 set, bit
    59 clear (a range policy sets it), the primary priority's code in bits 58-57, bit 56 for a
    secondary ``.L2::evict_first``, and the fraction in sixteenths in bits 55-52 as
    ``ceil(16 * fraction) - 1`` (1.0 -> 15, 0.5 -> 7, 0.1 -> 1, 2^-23.5 -> 0): the chip applies the
    primary priority to at least the fraction asked, in steps of 1/16."""
    from ptxspec.semantics.numerics import decode, to_fraction
    from ptxspec.spec.types import FORMATS

    value = decode(FORMATS["f32"], fraction)  # createpolicy has checked it is in (0, 1]
    sixteenths = math.ceil(16 * to_fraction(value)) - 1  # type: ignore[arg-type]
    return 1 << 60 | _PRIORITY_CODE[primary] << 57 | (secondary == "L2::evict_first") << 56 | sixteenths << 52
