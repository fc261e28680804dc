"""A small relational language, in the manner of herd's ``.cat`` files, in which §8 is written once.

Expressions denote sets of events or binary relations over the events of a candidate execution.
The model (``ptx.py``) is a list of named definitions and named axioms over these expressions;
each engine interprets the same expressions: ``explicit.py`` over concrete sets of pairs,
``z3_engine.py`` over matrices of Z3 Booleans. Python operators give the usual notation:

======================  ====================================
``a | b``               union
``a & b``               intersection
``a - b``               difference
``a >> b``              sequence (herd's ``a ; b``)
``~a``                  inverse (herd's ``a^-1``)
``a.plus()``            transitive closure (``a+``)
``a.opt()``             reflexive (``a?``), the identity on the events of the execution
``S.id()``              ``[S]``, the identity on a set
``S * T``               cartesian product of two sets
======================  ====================================

A :class:`Definition` may itself be used as an operand: inside an expression it stands for a
reference to its name (:class:`Ref`), which the engine resolves in the model being evaluated.

Base names (what an engine provides):

sets
    ``R`` ``W`` ``M`` (read, write, memory operations), ``A`` (atomic), ``I`` (initial writes),
    ``F`` (memory fences), ``F_SC`` (fence.sc/membar), ``F_ACQ_REL``, ``PF`` (proxy fences),
    ``PF_ALIAS`` ``PF_TEXTURE`` ``PF_SURFACE`` ``PF_CONSTANT`` ``PF_ASYNC``, ``B`` (barrier
    operations), the orders ``WEAK`` ``RELAXED`` ``ACQUIRE`` ``RELEASE`` ``ACQ_REL`` ``VOLATILE``
    ``MMIO``, the proxies ``GEN`` ``TEX`` ``SUR`` ``CON``.
static relations
    ``po`` (program order), ``loc`` (same physical location), ``vloc`` (same virtual address),
    ``same_thread``, ``same_cta``, ``scope_incl`` (both operations strong-capable with scopes
    that include each other's thread, §8.7 condition 1 second half), ``same_proxy``,
    ``data`` ``ctrl`` ``addr`` (dependencies), ``bar_sync`` (§8.9.4 items 2 and 3: barrier
    operations that synchronize, given the traces chosen).
run-time relations
    ``rf`` (reads-from), ``co`` (coherence order, a strict total order per physical location,
    initial write first), ``sc`` (Fence-SC order: a strict total order on ``F_SC`` events).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs


class SetExpr:
    """An expression denoting a set of events."""

    def __or__(self, other: SetExpr) -> SetExpr:
        return SetUnion(self, other)

    def __and__(self, other: SetExpr) -> SetExpr:
        return SetInter(self, other)

    def __sub__(self, other: SetExpr) -> SetExpr:
        return SetDiff(self, other)

    def __mul__(self, other: SetExpr) -> RelExpr:
        return Product(self, other)

    def id(self) -> RelExpr:
        return Identity(self)


@attrs.frozen
class SetBase(SetExpr):
    name: str


@attrs.frozen
class SetUnion(SetExpr):
    left: SetExpr
    right: SetExpr


@attrs.frozen
class SetInter(SetExpr):
    left: SetExpr
    right: SetExpr


@attrs.frozen
class SetDiff(SetExpr):
    left: SetExpr
    right: SetExpr


@attrs.frozen
class Domain(SetExpr):
    """The events a relation starts from (herd's ``domain(r)``)."""

    relation: RelExpr


@attrs.frozen
class Range(SetExpr):
    """The events a relation ends at (herd's ``range(r)``)."""

    relation: RelExpr


class RelExpr:
    """An expression denoting a binary relation on events."""

    def __or__(self, other: RelExpr) -> RelExpr:
        return Union(_operand(self), _operand(other))

    def __and__(self, other: RelExpr) -> RelExpr:
        return Inter(_operand(self), _operand(other))

    def __sub__(self, other: RelExpr) -> RelExpr:
        return Diff(_operand(self), _operand(other))

    def __rshift__(self, other: RelExpr) -> RelExpr:
        return Seq(_operand(self), _operand(other))

    def __invert__(self) -> RelExpr:
        return Inverse(_operand(self))

    def plus(self) -> RelExpr:
        return Plus(_operand(self))

    def opt(self) -> RelExpr:
        return Optional(_operand(self))


def _operand(expr: RelExpr) -> RelExpr:
    """What ``expr`` stands for inside an expression: a :class:`Definition` is a reference to its
    name (so expressions stay trees of the classes below, which the engines interpret)."""
    return expr.ref if isinstance(expr, Definition) else expr


@attrs.frozen
class Base(RelExpr):
    name: str


@attrs.frozen
class Ref(RelExpr):
    """A named definition of the model (resolved by the engine through :class:`Model`). Using a
    :class:`Definition` in an expression makes one."""

    name: str


@attrs.frozen
class Union(RelExpr):
    left: RelExpr
    right: RelExpr


@attrs.frozen
class Inter(RelExpr):
    left: RelExpr
    right: RelExpr


@attrs.frozen
class Diff(RelExpr):
    left: RelExpr
    right: RelExpr


@attrs.frozen
class Seq(RelExpr):
    left: RelExpr
    right: RelExpr


@attrs.frozen
class Inverse(RelExpr):
    operand: RelExpr


@attrs.frozen
class Plus(RelExpr):
    operand: RelExpr


@attrs.frozen
class Optional(RelExpr):
    operand: RelExpr


@attrs.frozen
class Identity(RelExpr):
    over: SetExpr


@attrs.frozen
class Product(RelExpr):
    left: SetExpr
    right: SetExpr


@attrs.frozen
class Empty(RelExpr):
    pass


def operands(expr: RelExpr | SetExpr) -> dict[str, RelExpr | SetExpr]:
    """The sub-expressions of ``expr`` by field name (none for a base relation, set or reference)."""
    cls = type(expr)
    if not attrs.has(cls):  # every expression class above is an attrs class; RelExpr and SetExpr are bases
        raise attrs.exceptions.NotAnAttrsClassError(f"{cls!r} is not an attrs-decorated class.")
    parts = {field.name: getattr(expr, field.name) for field in attrs.fields(cls)}
    return {name: part for name, part in parts.items() if isinstance(part, (RelExpr, SetExpr))}


AXIOM_KINDS = ("acyclic", "irreflexive", "empty")


@attrs.frozen
class Axiom:
    """``kind`` (one of AXIOM_KINDS) of ``relation`` must hold; ``name`` is what ``--why`` prints."""

    name: str
    kind: str
    relation: RelExpr = attrs.field(converter=_operand)
    section: str
    """The manual's section, e.g. ``"8.10.1"``."""
    doc: str = ""
    """The manual's sentence (``--why`` prints it)."""

    def __attrs_post_init__(self) -> None:
        if self.kind not in AXIOM_KINDS:
            raise ValueError(f"axiom kind must be one of {AXIOM_KINDS}, not {self.kind!r}")


@attrs.frozen
class Definition(RelExpr):
    """``name`` stands for ``relation`` (herd's ``let name = relation``). Used as an operand of
    another expression it is :attr:`ref`, a reference to its name, so that a model which replaces
    the definition of that name (``ptx.PTX_6_0``) changes every expression that uses it."""

    name: str
    relation: RelExpr = attrs.field(converter=_operand)
    section: str
    doc: str = ""

    @property
    def ref(self) -> Ref:
        """This definition inside an expression: a reference to its name."""
        return Ref(self.name)


@attrs.frozen
class Model:
    """A memory model: definitions in order (each may refer to earlier ones, by :class:`Ref` or by
    using the earlier :class:`Definition` itself) and axioms."""

    name: str
    definitions: Sequence[Definition]
    axioms: Sequence[Axiom]

    def definition(self, name: str) -> Definition:
        for item in self.definitions:
            if item.name == name:
                return item
        raise KeyError(name)


def sets(*names: str) -> tuple[SetBase, ...]:
    return tuple(SetBase(name) for name in names)


def relations(*names: str) -> tuple[Base, ...]:
    return tuple(Base(name) for name in names)
