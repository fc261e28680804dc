"""Catalogue entries for the warp-level collectives: shfl.sync (§9.7.9.6), vote.sync (§9.7.13.9),
match.sync (§9.7.13.10), activemask (§9.7.13.11), redux.sync (§9.7.13.12) and elect.sync
(§9.7.13.14).

Every source operand except ``membermask`` is a per-lane register (in the semantics: a tuple of
32 lane values); ``membermask`` is the last source operand, as the manual's syntax writes it
(``shfl.sync.mode.b32 d[|p], a, b, c, membermask;``). An optional predicate destination
(``d|p``) is always listed as a destination: the semantics computes both.

The deprecated forms without ``.sync`` (§9.7.9.5 shfl, §9.7.13.8 vote) are not catalogued.
"""

from __future__ import annotations

from ptxspec.spec.catalogue import Family, Form, Operand, Rule, Slot, Target, forbid

SYNC = Slot("sync", ("sync",), required=True)


def _operands(*spec: tuple[str, str, bool]):
    return lambda form: tuple(Operand(name, type_name, destination=dest) for name, type_name, dest in spec)


# §9.7.9.6: "shfl.sync.mode.b32  d[|p], a, b, c, membermask;  .mode = { .up, .down, .bfly, .idx };"
SHFL_SYNC = Family(
    opcode="shfl",
    key="shfl.sync",
    section="9.7.9.6",
    slots=(SYNC, Slot("mode", ("up", "down", "bfly", "idx"), required=True), Slot("type", ("b32",), required=True)),
    operands=_operands(("d", "b32", True), ("p", "pred", True), ("a", "b32", False), ("b", "b32", False), ("c", "b32", False), ("membermask", "b32", False)),
    # "Introduced in PTX ISA version 6.0." "Requires sm_30 or higher."
    target=Target((6, 0), 30),
    summary="Register data shuffle between the threads of a warp.",
)

# §9.7.13.9: "vote.sync.mode.pred d, {!}a, membermask;  .mode = { .all, .any, .uni };"
VOTE_SYNC = Family(
    opcode="vote",
    key="vote.sync",
    section="9.7.13.9",
    slots=(SYNC, Slot("mode", ("all", "any", "uni"), required=True), Slot("type", ("pred",), required=True)),
    operands=_operands(("d", "pred", True), ("a", "pred", False), ("membermask", "b32", False)),
    target=Target((6, 0), 30),
    summary="Vote across a group of threads.",
)

# §9.7.13.9: "vote.sync.ballot.b32 d, {!}a, membermask;  // 'ballot' form, returns bitmask"
VOTE_SYNC_BALLOT = Family(
    opcode="vote",
    key="vote.sync.ballot",
    section="9.7.13.9",
    slots=(SYNC, Slot("mode", ("ballot",), required=True), Slot("type", ("b32",), required=True)),
    operands=_operands(("d", "b32", True), ("a", "pred", False), ("membermask", "b32", False)),
    target=Target((6, 0), 30),
    summary="Ballot: each member thread's predicate in the bit of its lane id.",
)

# §9.7.13.10: "match.any.sync.type d, a, membermask;  match.all.sync.type d[|p], a, membermask;
# .type = { .b32, .b64 };"  "Operand a has the instruction type, d has .b32 type."


def _match_operands(form: Form) -> tuple[Operand, ...]:
    destinations = [Operand("d", "b32", destination=True)]
    if form["mode"] == "all":
        destinations.append(Operand("p", "pred", destination=True))
    return (*destinations, Operand("a", form["type"]), Operand("membermask", "b32"))


MATCH_SYNC = Family(
    opcode="match",
    key="match.sync",
    section="9.7.13.10",
    slots=(Slot("mode", ("any", "all"), required=True), SYNC, Slot("type", ("b32", "b64"), required=True)),
    operands=_match_operands,
    # "Introduced in PTX ISA version 6.0." "Requires sm_70 or higher."
    target=Target((6, 0), 70),
    summary="Broadcast and compare a value across the threads of a warp.",
)

# §9.7.13.11: "activemask.b32 d;"
ACTIVEMASK = Family(
    opcode="activemask",
    key="activemask",
    section="9.7.13.11",
    slots=(Slot("type", ("b32",), required=True),),
    operands=_operands(("d", "b32", True)),
    # "Introduced in PTX ISA version 6.2." "Requires sm_30 or higher."
    target=Target((6, 2), 30),
    summary="Query the active threads of the warp.",
)

# §9.7.13.12: three syntax lines, one family so that a wrong pairing names its reason:
#   redux.sync.op.type dst, src, membermask;  .op = {.add, .min, .max}  .type = {.u32, .s32}
#   redux.sync.op.b32 dst, src, membermask;   .op = {.and, .or, .xor}
#   redux.sync.op{.abs.}{.NaN}.f32 dst, src, membermask;  .op = { .min, .max }
_BITWISE = ("and", "or", "xor")


def _redux_target(form: Form) -> Target:
    # "Support for .f32 type was introduced in PTX ISA version 8.6." ".f32 type requires sm_100a."
    # (the same two sentences for .abs and .NaN); otherwise "PTX ISA version 7.0", "sm_80".
    if form["type"] == "f32" or "abs" in form or "NaN" in form:
        return Target((8, 6), 100, "a")
    return Target((7, 0), 80)


REDUX_SYNC = Family(
    opcode="redux",
    key="redux.sync",
    section="9.7.13.12",
    slots=(
        SYNC,
        Slot("op", ("add", "min", "max", "and", "or", "xor"), required=True),
        Slot("abs", ("abs",)),
        Slot("NaN", ("NaN",)),
        Slot("type", ("u32", "s32", "b32", "f32"), required=True),
    ),
    operands=lambda form: (Operand("dst", form["type"], destination=True), Operand("src", form["type"]), Operand("membermask", "b32")),
    rules=(
        Rule(
            lambda f: f["op"] in _BITWISE and f["type"] != "b32",
            lambda f: f"`.{f['op']}` takes only `.b32` (redux.sync.op.b32 with .op = {{.and, .or, .xor}})",
        ),
        Rule(
            lambda f: f["op"] not in _BITWISE and f["type"] == "b32",
            lambda f: f"`.{f['op']}` takes `.u32` or `.s32` (or `.f32` for min/max), not `.b32`",
        ),
        Rule(lambda f: f["op"] == "add" and f["type"] == "f32", "`.add` has no `.f32` form (the .f32 syntax line has .op = { .min, .max })"),
        forbid("abs", lambda f: f["type"] != "f32", "`.abs` is allowed only with `.f32` (redux.sync.op{.abs.}{.NaN}.f32)"),
        forbid("NaN", lambda f: f["type"] != "f32", "`.NaN` is allowed only with `.f32` (redux.sync.op{.abs.}{.NaN}.f32)"),
    ),
    target=_redux_target,
    summary="Reduction across the threads of a warp.",
)

# §9.7.13.14: "elect.sync d|p, membermask;"
ELECT_SYNC = Family(
    opcode="elect",
    key="elect.sync",
    section="9.7.13.14",
    slots=(SYNC,),
    operands=_operands(("d", "b32", True), ("p", "pred", True), ("membermask", "b32", False)),
    # "Introduced in PTX ISA version 8.0." "Requires sm_90 or higher."
    target=Target((8, 0), 90),
    summary="Elect a leader thread from a set of threads.",
)

FAMILIES: list[Family] = [SHFL_SYNC, VOTE_SYNC, VOTE_SYNC_BALLOT, MATCH_SYNC, ACTIVEMASK, REDUX_SYNC, ELECT_SYNC]
