"""The one table from catalogue families to semantic functions, and the front doors
:func:`execute`, :func:`evaluate` and :func:`check`.

Every instruction registers the same way: :func:`semantic` puts the decorated function in
:data:`SEMANTICS` under its families' keys, tagged with its :class:`Operands` -- what the function
takes besides the form. There are three kinds of operands, and so three calling conventions:

* :data:`REGISTERS`, one thread's registers (the scalar chapters)::

      fn(form, *sources, profile=...) -> result | (result, ...)

  each source one bit pattern (an ``int``), one result per destination;
* :data:`WARP_LANES`, the registers of every lane of a warp (the warp-level collectives of
  :mod:`ptxspec.semantics.warp`, ``mma``, ``movmatrix``)::

      fn(form, *sources, profile=..., active=...) -> (WarpResult, ...)

  each source a tuple of 32 lane values (an ``int``: the same in every lane), ``active`` the set of
  executing lanes (bit i = lane i);
* a *state* besides the threads' registers: :data:`WARP_MEMORY` (``ldmatrix``, ``stmatrix``, the
  tcgen05 allocation instructions), :data:`WARP_TENSOR_MEMORY` (``tcgen05.ld``/``.st``, which also
  take ``warp=``, the warp's rank in its warpgroup), :data:`WARPGROUP_MEMORY`
  (``wgmma.mma_async``: 128 threads) and :data:`THREAD_MEMORY` (``tcgen05.cp``, ``.shift``: one
  thread, no ``active``)::

      fn(form, state, *sources, profile=..., active=...) -> ((result, ...), new state)

  where the state is a :class:`~ptxspec.semantics.state.State` (the shared-memory image, and what
  the stateful instructions to come add to it): the pure function ``(form, state, operands) ->
  (new state, results)`` of DESIGN.md "State"; nothing is changed in place.

The sources are the form's :attr:`~ptxspec.spec.catalogue.Form.inputs` in the manual's order (its
source operands, and a destination it also reads, such as wgmma's accumulator ``d``).
:func:`check_sources` checks their count and widths -- the one check, used by :func:`execute` and
by the command line, which locates its complaint with :attr:`SourceError.operand`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import TYPE_CHECKING, cast

import attrs

from ptxspec.profiles import Profile, profile_named
from ptxspec.semantics.results import Result, contains
from ptxspec.spec.catalogue import Form, Operand
from ptxspec.spec.errors import OperandError, PtxSpecError
from ptxspec.spec.types import register_bits

if TYPE_CHECKING:  # imported where used: a scalar instruction needs neither the state nor numpy
    from ptxspec.semantics.state import State

SemanticFunction = Callable[..., object]


@attrs.frozen
class Operands:
    """What a semantic function takes besides the form: the registers of ``threads`` threads (1:
    one thread; 32: the lanes of a warp; 128: the threads of a warpgroup), and, when ``state``, a
    :class:`~ptxspec.semantics.state.State` it reads and returns anew."""

    name: str
    threads: int
    state: bool
    #: Whether the function also takes ``warp``, the executing warp's rank in its warpgroup
    #: ("%warpid % 4"), which decides the Tensor Memory lanes it may reach (§9.7.16.8.1).
    warp_rank: bool = False
    #: Whether the default :class:`~ptxspec.semantics.state.State` (no memory, the address windows
    #: an H200 showed) serves where none is given: a function that reads only the address map
    #: (cvta, isspacep, mapa, getctarank) or no state at all (createpolicy, prefetch).
    default_state: bool = False

    @property
    def all_threads(self) -> int:
        """The set of every thread (bit i = thread i): the default execution context."""
        return (1 << self.threads) - 1


REGISTERS = Operands("registers", 1, False)
WARP_LANES = Operands("warp lanes", 32, False)
WARP_MEMORY = Operands("warp lanes and memory", 32, True)
WARPGROUP_MEMORY = Operands("warpgroup threads and memory", 128, True)
THREAD_MEMORY = Operands("one thread and memory", 1, True)
WARP_TENSOR_MEMORY = Operands("warp lanes and Tensor Memory", 32, True, warp_rank=True)
THREAD_ADDRESSES = Operands("one thread and the address windows", 1, True, default_state=True)


@attrs.frozen
class Semantic:
    """One entry of :data:`SEMANTICS`: the function that is a family's meaning, and its operands."""

    function: SemanticFunction
    operands: Operands
    #: Where the manual leaves the new state open (the columns ``tcgen05.alloc`` takes), every
    #: state it allows: ``allowed_states(form, state, *sources) -> collection of State``;
    #: :func:`check` accepts any of them. None: the function's new state is the only one.
    allowed_states: Callable[..., object] | None = None


SEMANTICS: dict[str, Semantic] = {}


def semantic(
    *family_keys: str, operands: Operands = REGISTERS, allowed_states: Callable[..., object] | None = None
) -> Callable[[SemanticFunction], SemanticFunction]:
    """Register the decorated function as the meaning of the catalogue families ``family_keys``,
    taking ``operands`` (and, where the new state is one of several, ``allowed_states``: see
    :class:`Semantic`)."""

    def register(fn: SemanticFunction) -> SemanticFunction:
        for key in family_keys:
            if key in SEMANTICS:
                raise ValueError(f"two semantic functions for {key}")
            if _loaded:  # a late registration is checked now; the chapters' own, once they have loaded
                from ptxspec.spec.catalogue import CATALOGUE

                CATALOGUE.family(key)  # the family must exist
            SEMANTICS[key] = Semantic(fn, operands, allowed_states)
        return fn

    return register


def as_form(form: Form | str) -> Form:
    from ptxspec.spec.catalogue import parse

    return parse(form) if isinstance(form, str) else form


def semantic_of(form: Form) -> Semantic:
    """The registered meaning of ``form``'s family (a located error where there is none yet)."""
    if form.family.key not in SEMANTICS:
        _load_chapter_of(form.family.key)
    try:
        return SEMANTICS[form.family.key]
    except KeyError:
        raise PtxSpecError(f"{form.text}: no semantics implemented for this form yet", section=form.family.section) from None


def semantic_function(form: Form) -> SemanticFunction:
    return semantic_of(form).function


def operands_of(form: Form) -> Operands | None:
    """What ``form``'s semantic function takes, or None where the form has no semantics yet."""
    try:
        return semantic_of(form).operands
    except PtxSpecError:
        return None


# ---------------------------------------------------------------------------------------------
# The one check of the source operands
# ---------------------------------------------------------------------------------------------


class SourceError(OperandError):
    """A source operand that does not fit its form; ``operand`` is its index among the form's
    inputs (None when the count is wrong), for a caller that knows where each operand was written."""

    def __init__(self, message: str, *, operand: int | None, where=None, section: str | None = None):
        super().__init__(message, where=where, section=section)
        self.operand = operand


def check_source_count(form: Form, count: int) -> tuple[Operand, ...]:
    """The form's inputs, after checking that ``count`` of them were given."""
    operands = form.inputs
    if count != len(operands):
        names = ", ".join(o.name for o in operands) or "none"
        raise SourceError(
            f"{form.text} takes {len(operands)} source operand(s) ({names}), got {count}", operand=None, where=form.text, section=form.family.section
        )
    return operands


def check_sources(form: Form, sources: Sequence, operands: Operands) -> tuple:
    """``sources`` checked against ``form``'s inputs: their count, and that each value fits its
    register (for several threads, each operand one ``int`` for every thread or a sequence of
    ``operands.threads`` values). Returns them, thread values as tuples."""
    checked = []
    for index, (value, operand) in enumerate(zip(sources, check_source_count(form, len(sources)))):
        width = register_bits(operand.type)
        if operands.threads > 1 and not isinstance(value, Integral):
            try:
                value = tuple(value)
            except TypeError:
                raise SourceError(
                    f"operand {operand.name} is one integer or {operands.threads} lane values, got {value!r} ({form.text})", operand=index, where=form.text
                ) from None
            if len(value) != operands.threads:
                raise SourceError(
                    f"operand {operand.name} needs {operands.threads} lane values, got {len(value)} ({form.text})", operand=index, where=form.text
                )
        if operands.threads > 1 and _all_fit(value, width):
            pass  # the common case, without the per-lane messages below
        elif operands.threads > 1:
            for lane, bits in enumerate((value,) if isinstance(value, Integral) else value):
                if not isinstance(bits, Integral):
                    raise SourceError(
                        f"operand {operand.name}, lane {lane}: a register holds an integer bit pattern, got {bits!r} ({form.text})",
                        operand=index,
                        where=form.text,
                    )
                if not _fits(bits, width):
                    raise SourceError(
                        f"operand {operand.name}, lane {lane}: {_shown(bits)} does not fit its {width}-bit register (.{operand.type}) of {form.text}",
                        operand=index,
                        where=form.text,
                    )
        elif not _fits(value, width):
            raise SourceError(
                f"operand {operand.name} of {form.text} is a .{operand.type} register ({width} bits); {_shown(value)} does not fit",
                operand=index,
                where=form.text,
            )
        checked.append(value)
    return tuple(checked)


def with_offsets(form: Form, text: str, sources: tuple) -> tuple:
    """``sources`` with the offsets that ``text`` writes on address operands added (``[a+imm]``,
    ``var+imm``: :func:`~ptxspec.spec.catalogue.template_offsets`), each sum wrapping in its
    operand's register as the address arithmetic does (§6.4.1)."""
    from ptxspec.spec.catalogue import template_offsets

    offsets = template_offsets(form, text)
    if not offsets:
        return sources
    out = list(sources)
    for index, operand in enumerate(form.inputs):
        if operand.name in offsets:
            mask = (1 << register_bits(operand.type)) - 1
            add = offsets[operand.name]
            out[index] = (out[index] + add) & mask if isinstance(out[index], Integral) else tuple((v + add) & mask for v in out[index])
    return tuple(out)


def _all_fit(values: object, width: int) -> bool:
    """Whether every value is a plain ``int`` of ``width`` bits (a quick check, before the per-lane one)."""
    if type(values) is int:
        return 0 <= values < (1 << width)
    return isinstance(values, tuple) and all(type(v) is int for v in values) and 0 <= min(values) and max(values) < (1 << width)


def _fits(bits: object, width: int) -> bool:
    return isinstance(bits, Integral) and 0 <= int(bits) < (1 << width)


def _shown(bits: object) -> str:
    return f"{int(bits):#x}" if isinstance(bits, Integral) else repr(bits)


# ---------------------------------------------------------------------------------------------
# The front doors
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Outcome:
    """What one instruction did: one result per destination, and the new state (None for an
    instruction that takes no state)."""

    results: tuple[Result, ...]
    state: State | None = None


def execute(
    form: Form | str,
    sources: Sequence,
    profile: Profile | str = "spec",
    *,
    active: int | None = None,
    state: State | None = None,
    warp: int | None = None,
) -> Outcome:
    """``form`` applied to its source operands (and, for an instruction of memory, to ``state``).

    ``sources``: the bit patterns of the form's inputs (for a warp or warpgroup form, each a tuple
    of the threads' values, or one ``int`` for all); ``active``: the executing threads of a warp or
    warpgroup form (default: all); ``warp``: for ``tcgen05.ld``/``.st``, the executing warp's rank
    in its warpgroup (default: the warp whose lanes the address names, §9.7.16.8.1)."""
    text = form if isinstance(form, str) else None
    form = as_form(form)
    meaning = semantic_of(form)
    kind = meaning.operands
    sources = check_sources(form, sources, kind)
    if text is not None:
        sources = with_offsets(form, text, sources)
    if warp is not None and not kind.warp_rank:
        raise OperandError(f"{form.text} does not depend on the warp's rank in its warpgroup; it takes no warp", where=form.text)
    if kind.threads == 1:
        if active is not None:
            raise OperandError(f"{form.text} is not a warp-level instruction; it takes no set of active lanes", where=form.text)
        context: dict[str, int | None] = {}
    else:
        if active is not None and not 0 <= active <= kind.all_threads:
            raise OperandError(f"the active lanes of {form.text} are a {kind.threads}-bit mask; {active:#x} does not fit", where=form.text)
        context = {"active": kind.all_threads if active is None else active}
    if kind.warp_rank:
        if warp is not None and warp not in range(4):
            raise OperandError(f"warp is the warp's rank in its warpgroup (%warpid % 4): 0..3, not {warp!r}", where=form.text)
        context["warp"] = warp
    if kind.state:
        from ptxspec.semantics.state import State

        if state is None and kind.default_state:
            state = State()
        if not isinstance(state, State):
            raise OperandError(
                f"{form.text} reads memory: give its state (a ptxspec.semantics.state.State), got {type(state).__name__}",
                where=form.text,
                section=form.family.section,
            )
        results, new_state = cast("tuple[Sequence[Result], State]", meaning.function(form, state, *sources, profile=profile_named(profile), **context))
        return Outcome(tuple(results), new_state)
    if state is not None:
        raise OperandError(f"{form.text} reads no memory; it takes no state", where=form.text)
    out = cast("Result | tuple[Result, ...]", meaning.function(form, *sources, profile=profile_named(profile), **context))
    return Outcome(out if isinstance(out, tuple) else (out,))


def evaluate(
    form: Form | str,
    sources: Sequence,
    profile: Profile | str = "spec",
    *,
    active: int | None = None,
    state: State | None = None,
    warp: int | None = None,
) -> tuple[Result, ...]:
    """The results of ``form`` on ``sources``, one per destination (see :func:`execute`)."""
    return execute(form, sources, profile, active=active, state=state, warp=warp).results


def check(
    form: Form | str,
    sources: Sequence,
    observed: Sequence,
    profile: Profile | str = "spec",
    *,
    active: int | None = None,
    state: State | None = None,
    observed_state: State | None = None,
    warp: int | None = None,
) -> bool:
    """Whether the observed destination bits are allowed results of ``form`` on ``sources`` (for a
    warp-level form, each observed destination is a tuple of the lanes' values), and, where
    ``observed_state`` is given, whether it is the state the instruction leaves."""
    form = as_form(form)
    outcome = execute(form, sources, profile, active=active, state=state, warp=warp)
    if observed_state is not None and not state_allowed(form, sources, state, outcome.state, observed_state):
        return False
    return len(outcome.results) == len(observed) and all(contains(e, o) for e, o in zip(outcome.results, observed))


def state_allowed(form: Form, sources: Sequence, state: State | None, expected: State | None, observed: State) -> bool:
    """Whether ``observed`` is a state that ``form`` on ``sources`` may leave behind ``state``:
    ``expected`` (what :func:`execute` gave), where a Tensor Memory cell that holds one of a set
    admits any member (:meth:`State.admits`), or -- where the manual leaves the new state open, as
    the columns ``tcgen05.alloc`` takes -- one of the states the semantic's ``allowed_states``
    lists. The one test of an observed state, for ``check`` and ``check-vectors`` alike."""
    if expected is not None and expected.admits(observed):
        return True
    meaning = semantic_of(form)
    if meaning.allowed_states is None or state is None:
        return False
    return observed in cast("tuple[State, ...]", meaning.allowed_states(form, state, *check_sources(form, sources, meaning.operands)))


_loaded = False


def _load_chapter_of(key: str) -> None:
    """Import the chapter module that states the family ``key`` (a command that evaluates one
    instruction loads one chapter), or every chapter where that one does not register it."""
    import importlib

    from ptxspec.spec.catalogue import CATALOGUE

    chapter = CATALOGUE.chapter_of(key)
    if chapter is not None:
        importlib.import_module(f"ptxspec.semantics.{chapter}")
    if key not in SEMANTICS:
        _load_chapters()


def _load_chapters() -> None:
    """Import the chapter modules, whose decorators fill :data:`SEMANTICS`."""
    global _loaded
    if not _loaded:
        import importlib

        from ptxspec.spec.catalogue import CHAPTERS

        from ptxspec.spec.catalogue import CATALOGUE

        for name in CHAPTERS:
            importlib.import_module(f"ptxspec.semantics.{name}")
        for key in SEMANTICS:
            CATALOGUE.family(key)  # every registered family exists (a KeyError names a stale key)
        _loaded = True
