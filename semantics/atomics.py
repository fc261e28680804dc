"""§9.7.13.5-6 atom and red: the read-modify-write of memory, as pure functions on a
:class:`~ptxspec.semantics.state.State` -- and the values they compute, which the litmus engines use
for every atomic of a litmus test (:mod:`ptxspec.memory_model.lowering`): one meaning.

:func:`atomic_op` is the manual's table of operations on integers and bits; a floating-point
``.add`` is the ``add`` instruction of the numerics core that the manual names for the type and
state space (:func:`float_add`); :func:`atom` and :func:`red` find the bytes (the state space or
generic addressing of :mod:`ptxspec.semantics.memory_access`), apply the operation to each element,
and write the result.
"""

from __future__ import annotations

from collections.abc import Iterable

from ptxspec.profiles import Profile, profile_named
from ptxspec.semantics.instructions import THREAD_MEMORY, semantic
from ptxspec.semantics.memory_access import SPACE_OF, Place, locate, read, vector_count, write_element
from ptxspec.semantics.results import Result
from ptxspec.semantics.state import State
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError

ATOM = "9.7.13.5"
RED = "9.7.13.6"


def _width(qualifiers: Iterable[str]) -> tuple[int, bool]:
    """Bit width and signedness of an atomic's ``.type`` (64 and unsigned when absent)."""
    for q in qualifiers:
        if q[0] in "bus" and q[1:].isdigit():
            return int(q[1:]), q[0] == "s"
    return 64, False


def atomic_op(op: str, old: int, operands: tuple[int, ...], qualifiers: Iterable[str] = ()) -> int:
    """The value an atomic leaves in memory (§9.7.13.5 "Semantics")::

        inc(r, s) = (r >= s) ? 0 : r+1;   dec(r, s) = (r==0 || r > s) ? s : r-1;
        exch(r, s) = s;                    cas(r, s, t) = (r == s) ? t : r;

    ``sub`` (a Dat3M addition) is ``r - s``. With a ``.type`` the operation is at that width
    (``min``/``max`` signed for ``.s`` types), the result zero-extended to 64 bits.
    """
    width, signed = _width(qualifiers)
    mask = (1 << width) - 1
    r = old & mask
    s = operands[0] & mask
    if op == "add":
        out = r + s
    elif op == "sub":
        out = r - s
    elif op == "and":
        out = r & s
    elif op == "or":
        out = r | s
    elif op == "xor":
        out = r ^ s
    elif op == "exch":
        out = s
    elif op == "cas":
        out = (operands[1] & mask) if r == s else r
    elif op == "inc":
        out = 0 if r >= s else r + 1
    elif op == "dec":
        out = s if (r == 0 or r > s) else r - 1
    elif op in ("min", "max"):

        def key(v: int) -> int:
            return v - (1 << width) if signed and v >> (width - 1) else v

        pick = min if op == "min" else max
        out = pick(r, s, key=key)
    else:
        raise ValueError(op)
    return out & mask


#: §9.7.9.25.4.2: the floating-point reductions of cp.reduce.async.bulk as the instruction that
#: computes each: "The floating point .add operation rounds to nearest even. The current
#: implementation of cp.reduce.async.bulk.add.f32 flushes subnormal inputs and results to
#: sign-preserving zero. The .add.f16 and .add.bf16 operations require .noftz qualifier. It preserves
#: input and result subnormals, and does not flush them to zero." A profile may name another
#: instruction for an ``.add`` (``Profile.bulk_reduce_add``).
BULK_FLOAT_REDUCTIONS = {
    ("add", "f32"): "add.rn.ftz.f32",
    ("add", "f64"): "add.rn.f64",
    ("add", "f16"): "add.rn.f16",
    ("add", "bf16"): "add.rn.bf16",
    ("min", "f16"): "min.f16",
    ("min", "bf16"): "min.bf16",
    ("max", "f16"): "max.f16",
    ("max", "bf16"): "max.bf16",
}
FLOAT_PROFILE = "sm_90"
"""The profile whose results a floating-point atomic or reduction in a litmus test takes: where the
manual leaves a result open (a NaN's payload, ``semantics.results.AnyNaN``) a value domain cannot
hold every choice, so the one recorded chip's is taken."""


#: §9.7.13.5: "The floating-point operation .add is a rounding to nearest even. The current
#: implementation of atom.add.f32 on global memory flushes subnormal inputs and results to
#: sign-preserving zero; whereas atom.add.f32 on shared memory supports subnormal inputs and results
#: and doesn't flush them to zero. atom.add.f16, atom.add.f16x2, atom.add.bf16 and atom.add.bf16x2
#: operation requires the .noftz qualifier; it preserves subnormal inputs and results". Per type,
#: the instruction that computes the add in each state space (None: any space).
FLOAT_ATOMIC_ADDS: dict[str, dict[str | None, tuple[str, ...]]] = {
    "f32": {"global": ("add.rn.ftz.f32",), "shared": ("add.rn.f32",), None: ("add.rn.ftz.f32", "add.rn.f32")},
    "f64": {None: ("add.rn.f64",)},
    "f16": {None: ("add.rn.f16",)},
    "bf16": {None: ("add.rn.bf16",)},
    "f16x2": {None: ("add.rn.f16x2",)},
    "bf16x2": {None: ("add.rn.bf16x2",)},
}


def _space_of(qualifiers: tuple[str, ...]) -> str | None:
    space = next((SPACE_OF[q] for q in qualifiers if q in SPACE_OF), None)
    return "shared" if space is not None and space.startswith("shared") else space


def atomic_values(op: str, old: int, operands: tuple[int, ...], qualifiers: Iterable[str] = (), profile: Profile | str = FLOAT_PROFILE) -> tuple[Result, ...]:
    """The values an atom or red may leave: :func:`atomic_op`'s for the integer types; for a
    floating-point ``.add`` :func:`float_add` in the state space the qualifiers name (``.global``
    flushes .f32 subnormals, ``.shared`` keeps them), and either where they name none (generic
    addressing: the location may be in either)."""
    qualifiers = tuple(qualifiers)
    kind = next((q for q in qualifiers if q in FLOAT_ATOMIC_ADDS), None)
    if kind is None:
        return (atomic_op(op, old, operands, qualifiers),)
    space = _space_of(qualifiers)
    spaces = (space,) if space else ("global", "shared")
    results = (float_add(kind, where, old, operands[0], profile) for where in spaces)
    return tuple(dict.fromkeys(results))


def float_add(kind: str, space: str, a: int, b: int, profile: Profile | str = FLOAT_PROFILE) -> Result:
    """The ``.add`` of a floating-point atomic of type ``kind`` on ``space`` memory: the result of
    the instruction :data:`FLOAT_ATOMIC_ADDS` names for it, unless an operand is a NaN and the
    profile pins the atomic's own NaN rule there (``Profile.atomic_add_nan``)."""
    profile = profile_named(profile)
    by_space = FLOAT_ATOMIC_ADDS[kind]
    return _add_with_nan_rule((by_space.get(space) or by_space[None])[0], kind, profile.atomic_add_nan.get((space, kind)), a, b, profile)


def _add_with_nan_rule(form: str, kind: str, rule: tuple[tuple[int, ...], bool] | None, a: int, b: int, profile: Profile) -> Result:
    """``form`` on ``a`` (the value in memory) and ``b``, unless an operand is a NaN and ``rule``
    (operand order, whether a signalling NaN is quieted) says which NaN the result is."""
    from ptxspec.semantics.numerics import NaN, decode, fmt_of, quiet

    if rule is None:
        return _float_result(form, a, b, profile)
    fmt = fmt_of(kind)
    order, quiets = rule
    operands = (a & ((1 << fmt.width) - 1), b & ((1 << fmt.width) - 1))
    nans = [operands[i] for i in order if isinstance(decode(fmt, operands[i]), NaN)]
    if not nans:
        return _float_result(form, a, b, profile)
    first = decode(fmt, nans[0])
    assert isinstance(first, NaN), "a NaN operand decodes to a NaN"
    return quiet(first) if quiets else nans[0]


def _float_result(form: str, a: int, b: int, profile: Profile | str = FLOAT_PROFILE) -> Result:
    """``form`` (an instruction of the numerics core) on the low bits of ``a`` and ``b``."""
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.numerics import fmt_of

    element = form.rsplit(".", 1)[1]
    bits = fmt_of(element.removesuffix("x2")).width * (2 if element.endswith("x2") else 1)
    mask = (1 << bits) - 1
    (result,) = evaluate(form, [a & mask, b & mask], profile)
    return result


def reduction_value(op: str, old: int, value: int, element: Iterable[str], profile: Profile | str = FLOAT_PROFILE) -> Result:
    """The value a reduction ``old op value`` leaves (cp.reduce.async.bulk): an integer one by
    :func:`atomic_op`, a floating-point one through the semantics of the instruction of
    :data:`BULK_FLOAT_REDUCTIONS` (the one numerics core) under ``profile``, on the element's low
    bits -- an ``.add`` as the profile pins it (``Profile.bulk_reduce_add``, and its NaN rule
    ``Profile.atomic_add_nan[("bulk", type)]``)."""
    element = tuple(element)
    form = BULK_FLOAT_REDUCTIONS.get((op, element[-1])) if element else None
    if form is None:
        return atomic_op(op, old, (value,), element)
    profile = profile_named(profile)
    kind = element[-1]
    if op == "add":
        return _add_with_nan_rule(profile.bulk_reduce_add.get(kind, form), kind, profile.atomic_add_nan.get(("bulk", kind)), old, value, profile)
    return _float_result(form, old, value, profile)


# ---------------------------------------------------------------------------------------------
# The instructions
# ---------------------------------------------------------------------------------------------


def _element(form: Form) -> tuple[str, int]:
    """The element type of an atomic form and its bytes (``.f16x2``: 4; ``.b128``: 16)."""
    kind = form["type"]
    if kind in ("f16x2", "bf16x2"):
        return kind, 4
    if kind in ("f16", "bf16"):
        return kind, 2
    return kind, int(kind[1:]) // 8


def _operation(form: Form) -> str:
    return form["op"]


def read_modify_write(form: Form, state: State, a: int, operands: tuple[int, ...], profile: Profile) -> tuple[tuple[Result, ...], State]:
    """The one read-modify-write of atom and red: the old elements at ``a`` (one, or ``.vN``
    consecutive ones), each combined with its operand by the form's operation; the old values are
    the results. A new value the manual leaves open (a NaN payload under the spec profile) leaves
    its bytes holding one of the allowed values -- kept as indeterminate."""
    kind, size = _element(form)
    count = vector_count(form)
    place = locate(form, state, a, size * count)
    data, unknown = read(state, place, size * count)
    if unknown:
        raise OperandError("the memory it updates holds an indeterminate value", where=form.text, section=form.family.section)
    op = _operation(form)
    olds = [int.from_bytes(data[i * size : (i + 1) * size], "little") for i in range(count)]
    new_state = state
    for i, old in enumerate(olds):
        element_place = Place(place.space, place.address + i * size, place.rank)
        new_state = write_element(new_state, element_place, _new_value(form, kind, op, old, operands, i, count, place, profile), size)
    return tuple(olds), new_state


def _new_value(form: Form, kind: str, op: str, old: int, operands: tuple[int, ...], i: int, count: int, place: Place, profile: Profile) -> Result:
    if kind in FLOAT_ATOMIC_ADDS and op == "add":
        return float_add(kind, "shared" if place.space == "shared" else place.space, old, operands[i], profile)
    if kind in FLOAT_ATOMIC_ADDS and op in ("min", "max"):
        # the floating-point min and max of the vector and half-type forms: the min/max
        # instruction of §9.7.3 / §9.7.4 on the element
        return _float_result(f"{op}.{kind}", old, operands[i], profile)
    return atomic_op(op, old, operands[i : i + 2] if op == "cas" else operands[i:], (kind,))


@semantic("atom", "atom.cas", "atom.cas.b16", "atom.b128", "atom.noftz", "atom.vector.f32", "atom.vector.half", "atom.vector.packed", operands=THREAD_MEMORY)
def atom(form: Form, state: State, a: int, *operands: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.13.5 atom: "Atomically loads the original value at location a into destination register
    d, performs a reduction operation with operand b and the value in location a, and stores the
    result of the specified operation at location a, overwriting the original value" -- ``d =
    *a; *a = (operation)(*a, b);`` (``cas``: ``(*a == b) ? c : *a``), the operations of
    :func:`atomic_op` and :func:`float_add`. A vector form does it for each element ("each element
    ... is performed independently"). The consistency qualifiers and ``.L2::cache_hint`` do not
    change the values."""
    count = vector_count(form)
    values = operands[: 2 if form["op"] == "cas" else count]
    return read_modify_write(form, state, a, values, profile)


@semantic("red", "red.noftz", "red.vector.f32", "red.vector.half", "red.vector.packed", operands=THREAD_MEMORY)
def red(form: Form, state: State, a: int, *operands: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.13.6 red: "Performs a reduction operation with operand b and the value in location a,
    and stores the result of the specified operation at location a, overwriting the original value"
    -- :func:`atom` without its result."""
    _, new_state = read_modify_write(form, state, a, operands[: vector_count(form)], profile)
    return (), new_state


# ---------------------------------------------------------------------------------------------
# §9.7.13.7 red.async
# ---------------------------------------------------------------------------------------------

RED_ASYNC = "9.7.13.7"


@semantic(
    "red.async.mbarrier.add",
    "red.async.mbarrier.min_max",
    "red.async.mbarrier.bitwise",
    "red.async.mbarrier.inc_dec",
    "red.async.release",
    operands=THREAD_MEMORY,
)
def red_async(form: Form, state: State, a: int, b: int, *mbar: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.13.7 red.async: "a non-blocking instruction which initiates an asynchronous reduction
    operation specified by .op, with the operand b and the value at destination shared memory
    location specified by operand a" -- the read-modify-write of :func:`red`; with
    ``.mbarrier::complete_tx::bytes``, "upon the completion of the asynchronous operation, a
    complete-tx operation is performed on the mbarrier object specified by the operand mbar, with
    completeCount argument equal to amount of data stored in bytes"
    (:func:`~ptxspec.semantics.mbarrier.complete_tx_on`)."""
    from ptxspec.semantics import mbarrier
    from ptxspec.semantics.memory_access import same_cta

    if mbar:
        # "The shared memory addresses of destination operand a and the mbarrier operand mbar must
        # meet all of the following conditions: they belong to the same CTA; the CTA they belong to
        # is different from the CTA of the executing thread but must be within the same cluster.
        # Otherwise, the behavior is undefined."
        same_cta(form, state, a, mbar[0], other_cta=True)
    _, new_state = read_modify_write(form, state, a, (b,), profile)
    if mbar:
        new_state = mbarrier.complete_tx_on(form, new_state, mbar[0], _element(form)[1])
    return (), new_state
