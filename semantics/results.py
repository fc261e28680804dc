"""Results that the manual leaves open.

Where the PTX manual fixes a result, a semantic function returns its bits (an ``int``). Where it
leaves freedom -- "single-precision instructions return an unspecified NaN" (§9.7.3), the error
bounds of the ``.approx`` instructions -- the spec-level result is an :class:`Allowed` set, and a
profile (:class:`ptxspec.profiles.Profile`, one package per chip in :mod:`ptxspec.profiles`) says
which member a particular chip produces, where that was measured.

``Profile``, ``SPEC``, ``SM_90``, ``PROFILES`` and ``profile_named`` are still importable from here;
they live in :mod:`ptxspec.profiles`, which imports this module (so they are looked up on first use).
"""

from __future__ import annotations

from fractions import Fraction

import attrs

from ptxspec.spec.types import FloatFormat
from ptxspec.semantics.numerics import Exact, Infinity, NaN, decode


class Allowed:
    """A set of bit patterns, any of which a conforming implementation may produce."""

    def __contains__(self, bits: int) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


@attrs.frozen
class AnyNaN(Allowed):
    """Every NaN encoding of ``format``."""

    format: FloatFormat

    def __contains__(self, bits: int) -> bool:
        return isinstance(decode(self.format, bits), NaN)

    def describe(self) -> str:
        return f"any {self.format.name} NaN"

    def to_json(self) -> dict:
        return {"kind": "any-nan", "format": self.format.name}


@attrs.frozen
class OneOf(Allowed):
    """A finite set of bit patterns."""

    members: frozenset[int]
    width: int

    def __contains__(self, bits: int) -> bool:
        return bits in self.members

    def describe(self) -> str:
        return "one of " + ", ".join(_hex(b, self.width) for b in sorted(self.members))

    def to_json(self) -> dict:
        return {"kind": "one-of", "members": [_hex(b, self.width) for b in sorted(self.members)]}


@attrs.frozen
class AnyBits(Allowed):
    """Every ``width``-bit pattern: a value the manual leaves indeterminate (the bytes ``discard``
    leaves, §9.7.9.17) or opaque (the cache policy ``createpolicy`` writes, §9.7.9.18)."""

    width: int

    def __contains__(self, bits: int) -> bool:
        return 0 <= bits < (1 << self.width)

    def describe(self) -> str:
        return f"any {self.width}-bit value"

    def to_json(self) -> dict:
        return {"kind": "any-bits", "width": self.width}


def _order_key(fmt: FloatFormat, bits: int) -> Fraction:
    v = decode(fmt, bits)
    if isinstance(v, Infinity):
        return Fraction(-(10**400)) if v.sign else Fraction(10**400)
    assert isinstance(v, Exact)
    mag = Fraction(v.significand) * Fraction(2) ** v.exponent
    return -mag if v.sign else mag


@attrs.frozen
class Interval(Allowed):
    """Every non-NaN encoding of ``format`` whose value lies between those of ``low`` and ``high``
    (inclusive; -0.0 and +0.0 are equal), plus any NaN when ``nan`` is set.

    Ordered by value, the encodings of a binary format form a contiguous run on each side of zero,
    so this is an interval of bit patterns (two runs if it spans zero).
    """

    format: FloatFormat
    low: int
    high: int
    nan: bool = False

    def __contains__(self, bits: int) -> bool:
        v = decode(self.format, bits)
        if isinstance(v, NaN):
            return self.nan
        k = _order_key(self.format, bits)
        return _order_key(self.format, self.low) <= k <= _order_key(self.format, self.high)

    def describe(self) -> str:
        w = self.format.width
        if self.low == self.high and self.low & ~self.format.sign_mask:  # one encoding
            text = _hex(self.low, w)
        elif self.format.signed and self.low & ~self.format.sign_mask == 0 == self.high & ~self.format.sign_mask:  # zero, of either sign
            text = f"{_hex(0, w)} or {_hex(self.format.sign_mask, w)}"
        else:
            text = f"[{_hex(self.low, w)}, {_hex(self.high, w)}]"
        return text + " or any NaN" if self.nan else text

    def to_json(self) -> dict:
        w = self.format.width
        return {"kind": "interval", "format": self.format.name, "low": _hex(self.low, w), "high": _hex(self.high, w), "nan": self.nan}


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{max(1, (width + 3) // 4)}x}"


Result = int | Allowed


def contains(result: Result, bits: int) -> bool:
    """Whether ``bits`` is an allowed outcome for ``result``."""
    return bits == result if isinstance(result, int) else bits in result


def allowed_from_json(obj: dict) -> Allowed:
    """The inverse of ``to_json`` for :class:`Interval`, :class:`OneOf` and :class:`AnyNaN` (a
    ValueError names what is wrong)."""
    from ptxspec.spec.types import FORMATS

    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind == "interval":
        return Interval(FORMATS[obj["format"]], int(obj["low"], 16), int(obj["high"], 16), bool(obj.get("nan", False)))
    if kind == "one-of":
        members = [int(m, 16) for m in obj["members"]]
        return OneOf(frozenset(members), 4 * max(len(m) - 2 for m in obj["members"]))
    if kind == "any-nan":
        return AnyNaN(FORMATS[obj["format"]])
    if kind == "any-bits":
        return AnyBits(int(obj["width"]))
    raise ValueError(f"an allowed set is an interval, one-of, any-nan or any-bits object, got {obj!r}")


def only_member(result: Result) -> int | None:
    """The one bit pattern ``result`` allows, or None where it allows several (an :class:`Interval`
    whose ends are one non-zero value allows just it; at zero both signs)."""
    if isinstance(result, int):
        return result
    if isinstance(result, OneOf) and len(result.members) == 1:
        return next(iter(result.members))
    if isinstance(result, Interval) and result.low == result.high and not result.nan and result.low & ~result.format.sign_mask:
        return result.low
    return None


@attrs.frozen
class Lanes(Allowed):
    """A packed register whose lanes are results of their own (lane 0 in the most significant bits,
    as §5.2.4 packs the first operand into the upper half)."""

    lanes: tuple[Result, ...]
    lane_bits: int

    def __contains__(self, bits: int) -> bool:
        n = len(self.lanes)
        mask = (1 << self.lane_bits) - 1
        return all(contains(r, (bits >> ((n - 1 - i) * self.lane_bits)) & mask) for i, r in enumerate(self.lanes))

    def describe(self) -> str:
        parts = [_hex(r, self.lane_bits) if isinstance(r, int) else r.describe() for r in self.lanes]
        return "lanes (" + "; ".join(parts) + ")"

    def to_json(self) -> dict:
        return {"kind": "lanes", "lanes": [_hex(r, self.lane_bits) if isinstance(r, int) else r.to_json() for r in self.lanes]}


def pack_lanes(results: list[Result] | tuple[Result, ...], lane_bits: int) -> Result:
    """Pack per-lane results into one register: bits when every lane is fixed, else :class:`Lanes`."""
    if len(results) == 1:
        return results[0]
    fixed = [r for r in results if isinstance(r, int)]
    if len(fixed) == len(results):
        out = 0
        for r in fixed:
            out = (out << lane_bits) | r
        return out
    return Lanes(tuple(results), lane_bits)


def split_lanes(bits: int, count: int, lane_bits: int) -> list[int]:
    """The lanes of a packed register, lane 0 (the most significant) first."""
    mask = (1 << lane_bits) - 1
    return [(bits >> ((count - 1 - i) * lane_bits)) & mask for i in range(count)]


#: The names of ptxspec.profiles that this module still answers to (the profiles import this
#: module for the sets they build, so they are looked up on first use).
_PROFILE_NAMES = frozenset({"Profile", "MatrixKey", "SPEC", "SM_90", "PROFILES", "profile_named"})


def __getattr__(name: str):
    if name in _PROFILE_NAMES:
        import ptxspec.profiles

        return getattr(ptxspec.profiles, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
