"""Results that the manual leaves open, and the profiles that pin them.

Where the PTX manual fixes a result, a semantic function returns its bits (an ``int``). Where it
leaves freedom -- "single-precision instructions return an unspecified NaN" (§9.7.3), the error
bounds of the ``.approx`` instructions -- the spec-level result is an :class:`Allowed` set, and a
:class:`Profile` says which member a particular chip produces, where that was measured.
"""

from __future__ import annotations

from fractions import Fraction

import attrs

from ptxspec.spec.types import FloatFormat, NanEncoding
from ptxspec.semantics.numerics import Exact, Infinity, NaN, canonical_nan, decode, fmt_of


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


# ---------------------------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Profile:
    """Which of the manual's open choices a given implementation makes.

    ``spec`` makes none: every open result is the whole allowed set. ``sm_90`` (H100/H200) pins the
    choices that were measured on that silicon; see ``docs/profiles.rst`` for the recordings behind
    each one.
    """

    name: str
    #: Whether an unspecified NaN (f32, f16, bf16 arithmetic) is the canonical NaN (else: any NaN).
    canonical_nan: bool = False
    #: How a format with NaN payloads (f64) picks its NaN result. "any" (spec): one of the quieted
    #: input NaNs, or any NaN for an invalid operation. "ordered": the quieted NaN operand that
    #: ``nan_operand_priority`` ranks first, and ``default_nan`` for an invalid operation.
    payload_nan_rule: str = "any"
    #: Per opcode, the operand positions (0 = a) in the order a chip prefers their NaNs when
    #: several operands are NaN. Opcodes not listed prefer the last operand first.
    nan_operand_priority: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    #: Per format, the NaN an invalid operation (inf - inf, 0 * inf, sqrt(-1)) returns.
    default_nan: dict[str, int] = attrs.field(factory=dict)

    def unspecified_nan(self, fmt: FloatFormat | str) -> Result:
        """The result where the manual says only "a NaN" (an unspecified NaN)."""
        fmt = fmt_of(fmt)
        if self.canonical_nan and fmt.nan is not NanEncoding.NONE:
            return canonical_nan(fmt)
        return AnyNaN(fmt)

    def payload_nan(self, fmt: FloatFormat | str, operands: list[int | None], opcode: str | None = None) -> Result:
        """The NaN result of a format that supports NaN payloads (f64).

        ``operands`` holds, in operand order, each NaN operand made quiet and None for the others.
        """
        fmt = fmt_of(fmt)
        nans = [q for q in operands if q is not None]
        if self.payload_nan_rule == "ordered":
            if not nans:
                return self.default_nan.get(fmt.name, canonical_nan(fmt))
            priority = self.nan_operand_priority.get(opcode or "", tuple(reversed(range(len(operands)))))
            return next(operands[i] for i in priority if i < len(operands) and operands[i] is not None)
        if not nans:
            return AnyNaN(fmt)
        members = frozenset(nans)
        return next(iter(members)) if len(members) == 1 else OneOf(members, fmt.width)


SPEC = Profile("spec")

#: NVIDIA H100/H200 (sm_90). Each choice is backed by the recordings in conformance/data/sm_90/
#: (replayed by tests/test_silicon_sm90.py); docs/profiles.rst lists the measurements. The
#: chapter-specific ones live beside their semantics, keyed by this profile's name: ``MEASURED``
#: in integer.py (division by zero, rem, fns, bfe/bfi, the carry flag) and data_movement.py (cvt),
#: ``MEASURED_NEAR_BOUND`` in floating_point_approx.py, ``SM90_SCALAR_VIDEO`` in video.py, the
#: recorded 16-bit tanh/ex2 tables (semantics/data/approx16-sm90.npz, ``MEASURED_OUTSIDE_BOUND``) in
#: half_precision.py, and the mma datapaths (``MEASURED``) in mma.py.
SM_90 = Profile(
    "sm_90",
    # f32 (and f16, bf16) arithmetic returns 0x7fffffff (0x7fff): the canonical NaN.
    canonical_nan=True,
    payload_nan_rule="ordered",
    # When several f64 operands are NaN: add, sub, mul, min, max return b's; fma and mad prefer b,
    # then c, then a; div returns a's (f64 division runs as a software sequence).
    nan_operand_priority={"fma": (1, 2, 0), "mad": (1, 2, 0), "div": (0, 1)},
    # inf - inf, 0 * inf, sqrt(-1) in f64 give the negative quiet NaN 0xfff8000000000000.
    default_nan={"f64": 0xFFF8000000000000},
)

PROFILES: dict[str, Profile] = {"spec": SPEC, "sm_90": SM_90}


def profile_named(name: str | Profile) -> Profile:
    from ptxspec.spec.errors import PtxSpecError

    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise PtxSpecError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None


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
    if all(isinstance(r, int) for r in results):
        out = 0
        for r in results:
            out = (out << lane_bits) | r
        return out
    return Lanes(tuple(results), lane_bits)


def split_lanes(bits: int, count: int, lane_bits: int) -> list[int]:
    """The lanes of a packed register, lane 0 (the most significant) first."""
    mask = (1 << lane_bits) - 1
    return [(bits >> ((count - 1 - i) * lane_bits)) & mask for i in range(count)]
