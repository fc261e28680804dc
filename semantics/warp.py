"""Semantic functions of the warp-level collectives: shfl.sync (§9.7.9.6), vote.sync (§9.7.13.9),
match.sync (§9.7.13.10), activemask (§9.7.13.11), redux.sync (§9.7.13.12), elect.sync
(§9.7.13.14).

The API. A warp function is registered like every other semantic function, taking
:data:`~ptxspec.semantics.instructions.WARP_LANES`, so that :func:`~ptxspec.semantics.instructions.evaluate`
passes it the *execution context* ``active``: the 32-bit set of lanes that execute the
instruction (bit i = lane i). It is called as ``fn(form, *sources, profile=..., active=...)``:

- each per-lane source operand is a tuple of 32 lane values (lane 0 first); an ``int`` is the same
  value in every lane;
- ``membermask`` (the last source operand, as in the manual's syntax) is one ``int``: the manual
  requires "the same membermask value" in every participating thread;
- each destination is a :class:`WarpResult`: 32 per-lane results; ``observed in result`` takes a
  tuple of 32 observed lane values.

What the model calls an *exited* thread. A lane of ``membermask`` that is not in ``active`` is
treated as a non-exited thread is not: vote, match and redux reduce over "all non-exited threads in
membermask", which here is ``membermask & active``.

Undefined results are explicit. A lane that does not execute keeps whatever its destination held,
which the instruction does not determine; "if the executing thread is not in membermask, the
behavior of <instr> is undefined" makes every lane's result undefined; shfl.sync reading "a
register from an inactive thread or a thread not in membermask" is undefined. Each is an
:class:`Undefined` set (every value of the register), never an invented number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from ptxspec.semantics.instructions import WARP_LANES, semantic
from ptxspec.semantics.numerics import canonical_nan
from ptxspec.profiles import Profile
from ptxspec.semantics.results import Allowed, Result, _hex, contains
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError

WARP_SIZE = 32
FULL_MASK = (1 << WARP_SIZE) - 1

LaneValues = tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Undefined(Allowed):
    """Every ``width``-bit value: a result the manual calls undefined (or does not write)."""

    width: int

    def __contains__(self, bits: int) -> bool:
        return isinstance(bits, int) and 0 <= bits < (1 << self.width)

    def describe(self) -> str:
        return "undefined"

    def to_json(self) -> dict:
        return {"kind": "undefined", "width": self.width}


@attrs.frozen
class WarpResult(Allowed):
    """One destination operand in each of the 32 lanes: ``lanes[i]`` is lane i's result (bits, or
    an allowed set such as :class:`Undefined`). ``observed in result`` takes 32 lane values."""

    lanes: tuple[Result, ...]
    width: int

    def __contains__(self, observed) -> bool:  # type: ignore[override]
        observed = tuple(observed)
        return len(observed) == len(self.lanes) and all(contains(r, o) for r, o in zip(self.lanes, observed))

    def lane_texts(self) -> list[str]:
        return [_hex(r, self.width) if isinstance(r, int) else r.describe() for r in self.lanes]

    def describe(self) -> str:
        return ",".join(self.lane_texts())

    def to_json(self) -> dict:
        return {"kind": "warp", "lanes": [_hex(r, self.width) if isinstance(r, int) else r.to_json() for r in self.lanes]}


# ---------------------------------------------------------------------------------------------
# Helpers shared by every warp function
# ---------------------------------------------------------------------------------------------


def lanes_of(value: int | Sequence[int], name: str = "operand", threads: int = WARP_SIZE) -> LaneValues:
    """A per-lane operand as ``threads`` lane values (an ``int`` is the same in every lane)."""
    if isinstance(value, int):
        return (value,) * threads
    value = tuple(value)
    if len(value) != threads:
        raise OperandError(f"warp operand {name} needs {threads} lane values, got {len(value)}")
    return value


def one_value(value: int | Sequence[int]) -> int | None:
    """An operand that the manual requires to be the same in every thread (membermask, a sparsity
    selector, an immediate) as that one value; None when the threads' values differ (each caller
    says which rule that breaks)."""
    if isinstance(value, int):
        return value
    values = {int(v) for v in value}
    return values.pop() if len(values) == 1 else None


def uniform(membermask: int | Sequence[int]) -> int:
    """membermask as one value: the threads must execute "with the same membermask value"."""
    value = one_value(membermask)
    if value is None:
        raise OperandError("membermask must have the same value in every lane (the manual: 'the same membermask value')")
    return value


def per_thread(registers, width: int) -> tuple[WarpResult, ...]:
    """One :class:`WarpResult` per register of ``registers`` (``[threads, R]``: bits, or allowed
    sets in an object array): register ``r`` of every thread."""
    if registers.dtype != object:  # bits only: numpy gives Python ints at once
        return tuple(WarpResult(tuple(column), width) for column in registers.T.tolist())
    return tuple(WarpResult(tuple(int(v) if isinstance(v, (int, np.integer)) else v for v in registers[:, r]), width) for r in range(registers.shape[1]))


def in_set(mask: int, lane: int) -> bool:
    return (mask >> lane) & 1 == 1


def undefined_warp(width: int) -> WarpResult:
    return WarpResult((Undefined(width),) * WARP_SIZE, width)


def misplaced(membermask: int, active: int) -> bool:
    """Whether some executing thread is not in membermask: "If the executing thread is not in the
    membermask, the behavior of <instr> is undefined"."""
    membermask = uniform(membermask)
    return active & ~membermask & FULL_MASK != 0


def per_active_lane(width: int, active: int, value: Callable[[int], Result]) -> WarpResult:
    """``value(lane)`` in every executing lane; :class:`Undefined` in the others (they write
    nothing, so the register keeps a value the instruction does not determine)."""
    return WarpResult(tuple(value(lane) if in_set(active, lane) else Undefined(width) for lane in range(WARP_SIZE)), width)


def participants(membermask: int, active: int) -> list[int]:
    """The "non-exited threads in membermask", lane order."""
    return [lane for lane in range(WARP_SIZE) if in_set(uniform(membermask) & active, lane)]


def mask_of(lanes: list[int]) -> int:
    return sum(1 << lane for lane in lanes)


# ---------------------------------------------------------------------------------------------
# §9.7.9.6 shfl.sync
# ---------------------------------------------------------------------------------------------


def shfl_source_lane(mode: str, lane: int, b: int, c: int) -> tuple[int, bool]:
    """The source lane j and the predicate pval, exactly as §9.7.9.6's pseudo-code computes them.

    "maxLane = (lane[4:0] & segmask[4:0]) | (cval[4:0] & ~segmask[4:0]);
    minLane = (lane[4:0] & segmask[4:0]); ... if (!pval) j = lane;"
    """
    bval = b & 0x1F
    cval = c & 0x1F
    segmask = (c >> 8) & 0x1F
    max_lane = (lane & segmask) | (cval & ~segmask & 0x1F)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - bval
        pval = j >= max_lane
    elif mode == "down":
        j = lane + bval
        pval = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        pval = j <= max_lane
    else:  # idx
        j = min_lane | (bval & ~segmask & 0x1F)
        pval = j <= max_lane
    return (j if pval else lane), pval


@semantic("shfl.sync", operands=WARP_LANES)
def shfl_sync(form: Form, a, b, c, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> tuple[WarpResult, WarpResult]:
    """§9.7.9.6 shfl.sync: "Each thread in the currently executing warp will compute a source lane
    index j based on input operands b and c and the mode. If the computed source lane index j is in
    range, the thread will copy the input operand a from lane j into its own destination register
    d; otherwise, the thread will simply copy its own input a to destination d. The optional
    destination predicate p is set to True if the computed source lane is in range, and otherwise
    set to False."

    "If a thread sources a register from an inactive thread or a thread that is not in
    membermask, the value is undefined." "If the executing thread is not in the membermask, the
    behavior of shfl.sync is undefined." (Whole warp undefined.)
    """
    a, b, c = lanes_of(a, "a"), lanes_of(b, "b"), lanes_of(c, "c")
    if misplaced(membermask, active):
        return undefined_warp(32), undefined_warp(1)
    readable = uniform(membermask) & active
    sources = [shfl_source_lane(form["mode"], lane, b[lane], c[lane]) for lane in range(WARP_SIZE)]

    def d(lane: int) -> Result:
        j, _ = sources[lane]
        return a[j] if in_set(readable, j) else Undefined(32)

    return per_active_lane(32, active, d), per_active_lane(1, active, lambda lane: int(sources[lane][1]))


# ---------------------------------------------------------------------------------------------
# §9.7.13.9 vote.sync
# ---------------------------------------------------------------------------------------------


@semantic("vote.sync", operands=WARP_LANES)
def vote_sync(form: Form, a, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> WarpResult:
    """§9.7.13.9 vote.sync (mode form): "vote.sync performs a reduction of the source predicate
    across all non-exited threads in membermask. The destination operand d is a predicate register
    and its value is the same across all threads in membermask."

    ".all: True if source predicates are True for all non-exited threads in membermask. .any: True
    if source predicates are True for some thread in membermask. .uni: True if source predicates
    are the same for all non-exited threads in membermask."
    """
    a = lanes_of(a, "a")
    if misplaced(membermask, active):
        return undefined_warp(1)
    votes = [a[lane] for lane in participants(membermask, active)]
    mode = form["mode"]
    if mode == "all":
        d = all(votes)
    elif mode == "any":
        d = any(votes)
    else:  # uni
        d = len(set(votes)) <= 1
    return per_active_lane(1, active, lambda lane: int(d))


@semantic("vote.sync.ballot", operands=WARP_LANES)
def vote_sync_ballot(form: Form, a, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> WarpResult:
    """§9.7.13.9 vote.sync.ballot.b32: "vote.sync.ballot.b32 simply copies the predicate from each
    thread in membermask into the corresponding bit position of destination register d, where the
    bit position corresponds to the thread's lane id. A thread not specified in membermask will
    contribute a 0 for its entry in vote.sync.ballot.b32."

    An exited (here: inactive) member has no predicate; it contributes 0, as activemask says of
    exited threads.
    """
    a = lanes_of(a, "a")
    if misplaced(membermask, active):
        return undefined_warp(32)
    d = mask_of([lane for lane in participants(membermask, active) if a[lane]])
    return per_active_lane(32, active, lambda lane: d)


# ---------------------------------------------------------------------------------------------
# §9.7.13.10 match.sync
# ---------------------------------------------------------------------------------------------


@semantic("match.sync", operands=WARP_LANES)
def match_sync(form: Form, a, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> WarpResult | tuple[WarpResult, WarpResult]:
    """§9.7.13.10 match.sync: ".all: d is set to mask corresponding to non-exited threads in
    membermask if all non-exited threads in membermask have same value of operand a; otherwise d is
    set to 0. Optionally predicate p is set to true if all non-exited threads in membermask have
    same value of operand a; otherwise p is set to false." ".any: d is set to mask of non-exited
    threads in membermask that have same value of operand a."
    """
    a = lanes_of(a, "a")
    if form["mode"] == "all":
        if misplaced(membermask, active):
            return undefined_warp(32), undefined_warp(1)
        members = participants(membermask, active)
        same = len({a[lane] for lane in members}) <= 1
        d = mask_of(members) if same else 0
        return per_active_lane(32, active, lambda lane: d), per_active_lane(1, active, lambda lane: int(same))
    if misplaced(membermask, active):
        return undefined_warp(32)
    members = participants(membermask, active)
    return per_active_lane(32, active, lambda lane: mask_of([m for m in members if a[m] == a[lane]]))


# ---------------------------------------------------------------------------------------------
# §9.7.13.11 activemask
# ---------------------------------------------------------------------------------------------


@semantic("activemask", operands=WARP_LANES)
def activemask(form: Form, *, profile: Profile, active: int = FULL_MASK) -> WarpResult:
    """§9.7.13.11 activemask: "activemask queries predicated-on active threads from the executing
    warp and sets the destination d with 32-bit integer mask where bit position in the mask
    corresponds to the thread's laneid." "An active thread will contribute 1 for its entry in the
    result and exited or inactive or predicated-off thread will contribute 0"."""
    return per_active_lane(32, active, lambda lane: active)


# ---------------------------------------------------------------------------------------------
# §9.7.13.12 redux.sync
# ---------------------------------------------------------------------------------------------


def _signed(value: int) -> int:
    return value - (1 << 32) if value >> 31 else value


def _f32_is_nan(bits: int) -> bool:
    return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0


def _f32_order(bits: int) -> int:
    """An integer key in the order of the f32 values, with "+0.0 > -0.0" (§9.7.13.12): magnitude
    bits for positive numbers, below every positive number (and below -0.0 < +0.0) for negative."""
    return -(bits & 0x7FFFFFFF) - 1 if bits >> 31 else bits


def redux_f32(op: str, values: list[int], absolute: bool, nan_propagates: bool) -> int:
    """The .f32 min/max reduction: "If .abs qualifier is specified, the absolute value of the input
    is considered for the reduction operation. If .NaN qualifier is specified, the result of the
    reduction operation is canonical NaN if the input to the reduction operation from any
    participating thread is NaN. In the absence of .NaN qualifier, only non-NaN values are
    considered for the reduction operation and the result will be canonical NaN when all inputs are
    NaNs." "For .f32 instruction type, if input value is 0.0 then +0.0 > -0.0." """
    if absolute:
        # The reduction runs on the absolute values, so the result is one of them (sign clear).
        values = [v & 0x7FFFFFFF for v in values]
    numbers = [v for v in values if not _f32_is_nan(v)]
    if not numbers or (nan_propagates and len(numbers) != len(values)):
        return canonical_nan("f32")
    pick = min if op == "min" else max
    return pick(numbers, key=_f32_order)


def redux_integer(op: str, type_name: str, values: list[int]) -> int:
    """ "For .add operation result is truncated to 32 bits."; min and max compare as the type."""
    if op == "add":
        return sum(values) & FULL_MASK
    if op in ("min", "max"):
        key = _signed if type_name == "s32" else None
        return (min if op == "min" else max)(values, key=key)
    out = {"and": FULL_MASK, "or": 0, "xor": 0}[op]
    for v in values:
        out = out & v if op == "and" else out | v if op == "or" else out ^ v
    return out


@semantic("redux.sync", operands=WARP_LANES)
def redux_sync(form: Form, src, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> WarpResult:
    """§9.7.13.12 redux.sync: "redux.sync performs a reduction operation .op of the 32 bit source
    register src across all non-exited threads in the membermask. The result of the reduction
    operation is written to the 32 bit destination register dst." "If the executing thread is not
    in the membermask, the behavior of redux.sync is undefined."
    """
    src = lanes_of(src, "src")
    if misplaced(membermask, active):
        return undefined_warp(32)
    values = [src[lane] for lane in participants(membermask, active)]
    if form["type"] == "f32":
        result = redux_f32(form["op"], values, "abs" in form, "NaN" in form)
    else:
        result = redux_integer(form["op"], form["type"], values)
    return per_active_lane(32, active, lambda lane: result)


# ---------------------------------------------------------------------------------------------
# §9.7.13.14 elect.sync
# ---------------------------------------------------------------------------------------------


@semantic("elect.sync", operands=WARP_LANES)
def elect_sync(form: Form, membermask: int, *, profile: Profile, active: int = FULL_MASK) -> tuple[WarpResult, WarpResult]:
    """§9.7.13.14 elect.sync: "elect.sync elects one predicated active leader thread from among a
    set of threads specified by membermask. laneid of the elected thread is returned in the 32-bit
    destination operand d. ... Predicate destination p is set to True for the leader thread, and
    False for all other threads." "The leader thread is elected in a deterministic manner" -- this
    model elects the lowest active lane of membermask (the manual fixes only determinism; the
    choice is the one CUDA documents for elect.sync and is for silicon to confirm).
    "If executing thread is not in membermask, the behavior is undefined."
    """
    candidates = participants(membermask, active)
    if misplaced(membermask, active) or not candidates:
        return undefined_warp(32), undefined_warp(1)
    leader = candidates[0]
    return per_active_lane(32, active, lambda lane: leader), per_active_lane(1, active, lambda lane: int(lane == leader))
