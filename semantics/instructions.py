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
from ptxspec.semantics.results import Profile, Result, contains, profile_named

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


def evaluate(form: Form | str, sources: Sequence[int], profile: Profile | str = "spec") -> tuple[Result, ...]:
    """The results of ``form`` applied to the source operands' bit patterns, one per destination."""
    form = as_form(form)
    fn = semantic_function(form)
    operands = check_source_count(form, len(sources))
    for value, operand in zip(sources, operands):
        width = register_bits(operand.type)
        if not 0 <= value < (1 << width):
            raise OperandError(f"operand {operand.name} of {form.text} is .{operand.type} ({width} bits); {value:#x} does not fit", where=form.text)
    out = fn(form, *sources, profile=profile_named(profile))
    return out if isinstance(out, tuple) else (out,)


def check(form: Form | str, sources: Sequence[int], observed: Sequence[int], profile: Profile | str = "spec") -> bool:
    """Whether the observed destination bits are allowed results of ``form`` on ``sources``."""
    expected = evaluate(form, sources, profile)
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
