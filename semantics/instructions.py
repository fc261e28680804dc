"""The table from catalogue families to semantic functions, and the two front doors
:func:`evaluate` and :func:`check`.

A semantic function is registered with :func:`semantic` under its family's key and called as
``fn(form, *sources, profile=profile)``; it returns one :data:`~ptxspec.semantics.results.Result`
per destination operand (a bare result when there is one destination).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ptxspec.spec.catalogue import CATALOGUE, Form
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import register_bits
from ptxspec.profiles import Profile, profile_named
from ptxspec.semantics.results import Result, contains

SemanticFunction = Callable[..., "Result | tuple[Result, ...]"]

SEMANTICS: dict[str, SemanticFunction] = {}


def semantic(family_key: str) -> Callable[[SemanticFunction], SemanticFunction]:
    """Register the decorated function as the meaning of the catalogue family ``family_key``."""

    def register(fn: SemanticFunction) -> SemanticFunction:
        if family_key in SEMANTICS:
            raise ValueError(f"two semantic functions for {family_key}")
        CATALOGUE.family(family_key)  # the family must exist
        SEMANTICS[family_key] = fn
        return fn

    return register


def as_form(form: Form | str) -> Form:
    from ptxspec.spec.catalogue import parse

    return parse(form) if isinstance(form, str) else form


def semantic_function(form: Form) -> SemanticFunction:
    _load_chapters()
    try:
        return SEMANTICS[form.family.key]
    except KeyError:
        raise PtxSpecError(f"{form.text}: no semantics implemented for this form yet", section=form.family.section) from None


def check_source_count(form: Form, count: int) -> tuple:
    """The form's source operands, after checking that ``count`` of them were given."""
    operands = form.sources
    if count != len(operands):
        names = ", ".join(o.name for o in operands)
        raise OperandError(f"{form.text} takes {len(operands)} source operand(s) ({names}), got {count}", where=form.text)
    return operands


def evaluate(form: Form | str, sources: Sequence, profile: Profile | str = "spec", *, active: int | None = None) -> tuple[Result, ...]:
    """The results of ``form`` applied to the source operands' bit patterns, one per destination.

    A warp-level form (:mod:`ptxspec.semantics.warp`) takes a per-lane operand as a tuple of lane
    values (each lane is checked like a scalar) and ``active``, the set of executing lanes
    (default: all 32)."""
    form = as_form(form)
    fn = semantic_function(form)
    warp = getattr(fn, "warp", False)
    operands = check_source_count(form, len(sources))
    for value, operand in zip(sources, operands):
        width = register_bits(operand.type)
        for lane in value if warp and isinstance(value, tuple) else (value,):
            if not 0 <= lane < (1 << width):
                raise OperandError(f"operand {operand.name} of {form.text} is .{operand.type} ({width} bits); {lane:#x} does not fit", where=form.text)
    if warp:
        if active is not None and not 0 <= active <= 0xFFFFFFFF:
            raise OperandError(f"the active lanes of {form.text} are a 32-bit mask; {active:#x} does not fit", where=form.text)
        out = fn(form, *sources, profile=profile_named(profile), active=0xFFFFFFFF if active is None else active)
    elif active is not None:
        raise OperandError(f"{form.text} is not a warp-level instruction; it takes no set of active lanes", where=form.text)
    else:
        out = fn(form, *sources, profile=profile_named(profile))
    return out if isinstance(out, tuple) else (out,)


def check(form: Form | str, sources: Sequence, observed: Sequence, profile: Profile | str = "spec", *, active: int | None = None) -> bool:
    """Whether the observed destination bits are allowed results of ``form`` on ``sources``
    (for a warp-level form, each observed destination is a tuple of 32 lane values)."""
    expected = evaluate(form, sources, profile, active=active)
    return len(expected) == len(observed) and all(contains(e, o) for e, o in zip(expected, observed))


_loaded = False


def _load_chapters() -> None:
    """Import the chapter modules, whose decorators fill :data:`SEMANTICS`."""
    global _loaded
    if not _loaded:
        import importlib

        from ptxspec.spec.catalogue import CHAPTERS

        for name in CHAPTERS:
            importlib.import_module(f"ptxspec.semantics.{name}")

        _loaded = True
