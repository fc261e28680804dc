"""Hypothesis strategies for PTX values, instruction forms, operands and litmus tests.

Another project's test suite can draw from the specification's own view of PTX::

    from hypothesis import given
    from ptxspec.conformance.strategies import forms, litmus_tests, operands, values

Four strategies, each legal by construction:

* :func:`values` -- bit patterns of any PTX type or format (``"f32"``, ``"e4m3"``, ``"f16x2"``,
  ``"s64"``, ``"pred"``, ...), biased towards the edge classes of §5.2 (±0, subnormals, ±inf,
  quiet and signalling NaNs with payloads, the extremes, values at the rounding boundaries of
  every narrower format) while every bit pattern of the type stays reachable;
* :func:`forms` -- instruction forms of the catalogue (:mod:`ptxspec.spec.catalogue`), each one
  :func:`~ptxspec.spec.catalogue.parse` accepts and, when asked, admitted at a PTX ISA version and
  target;
* :func:`operands` -- source bit patterns for a form, in its operand order, as
  :func:`~ptxspec.semantics.instructions.evaluate` takes them;
* :func:`litmus_tests` -- small well-formed litmus tests over ``ld``/``st``/``atom``/``fence``
  with memory orders, scopes and thread placements (§8), as :class:`~ptxspec.memory_model.litmus.LitmusTest`
  or as text.

>>> from hypothesis import given, settings
>>> from ptxspec.semantics.instructions import evaluate
>>> @settings(max_examples=20, derandomize=True)
... @given(forms("add", target="sm_90").flatmap(lambda f: operands(f).map(lambda s: (f, s))))
... def never_crashes(case):
...     form, sources = case
...     evaluate(form, sources)
>>> never_crashes()
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

from hypothesis import strategies as st

from ptxspec.spec.catalogue import CATALOGUE, Family, Form, parse, split_arch
from ptxspec.spec.errors import IllegalForm, PtxSpecError
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, FloatFormat, NanEncoding, register_bits

__all__ = ["values", "classify", "forms", "operands", "litmus_tests", "looping_litmus_tests", "TYPE_NAMES"]

#: Every type name :func:`values` accepts: the formats, the packed types, the integer and bit-size
#: types and ``pred``.
TYPE_NAMES: tuple[str, ...] = (*FORMATS, *PACKED_TYPES, *INTEGER_TYPES, "pred")


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def values(type_name: str) -> st.SearchStrategy[int]:
    """Bit patterns of ``type_name``, as non-negative integers below ``2**register_bits(type_name)``.

    About half of the draws come from the edge classes (see :func:`classify`): for a
    floating-point format ±0, the smallest and largest subnormals, the smallest normal, ±1, the
    largest finite value, ±inf, the quiet NaN, signalling NaNs, NaNs with the smallest and largest
    payloads, exponents at the ends of the range of every other format, and significands at the
    rounding boundaries of every narrower format (just below, at and just above a tie); for an
    integer type 0, ±1, the extremes and the values next to them. The rest are built field by field
    from random parts and uniformly random patterns, so every bit pattern can be drawn.

    A packed type draws each element from its element type (element 0 in the most significant
    position, §5.2.4). ``tf32`` draws the f32 layout with the low 13 bits zero (§5.2.3); the
    sub-byte formats (e2m1, e2m3, e3m2) occupy the low bits of their 8-bit register.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=50, derandomize=True)
    ... @given(values("e4m3"))
    ... def fits(bits):
    ...     assert 0 <= bits < 256
    >>> fits()
    >>> classify("f32", 0x7FC00000)
    'nan'
    """
    return _values(type_name)


@functools.cache
def _values(type_name: str) -> st.SearchStrategy[int]:
    if type_name == "pred":
        return st.integers(0, 1)
    if type_name in INTEGER_TYPES:
        return _integers(INTEGER_TYPES[type_name].bits)
    if type_name in PACKED_TYPES:
        packed = PACKED_TYPES[type_name]
        lane = values(packed.element)
        return st.tuples(*[lane] * packed.count).map(lambda lanes: _pack(lanes, packed.lane_bits))
    if type_name in FORMATS:
        return _floats(FORMATS[type_name])
    raise PtxSpecError(f"unknown PTX type {type_name!r} (known: {', '.join(TYPE_NAMES)})")


def _pack(lanes: Sequence[int], lane_bits: int) -> int:
    """Element 0 goes to the most significant lane (§5.2.4)."""
    bits = 0
    for lane in lanes:
        bits = (bits << lane_bits) | lane
    return bits


def _integers(bits: int) -> st.SearchStrategy[int]:
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    edges = sorted({0, 1, 2, mask, mask - 1, sign, sign - 1, sign + 1, sign - 2})
    # Powers of two and their neighbours: carries, shifts and overflow of narrower types.
    near_powers = st.integers(0, bits - 1).flatmap(lambda k: st.sampled_from(sorted({(1 << k) - 1, 1 << k, ((1 << k) + 1) & mask, (-(1 << k)) & mask})))
    return st.one_of(st.sampled_from(edges), near_powers, st.integers(0, mask))


def _float_edges(fmt: FloatFormat) -> tuple[int, ...]:
    """The edge classes of ``fmt`` as element patterns (before ``fmt.shift``)."""
    m = fmt.mantissa_bits
    sign = 1 << (fmt.exponent_bits + m) if fmt.signed else 0
    max_e, max_m = fmt.max_finite_fields

    def enc(e: int, man: int) -> int:
        return (e << m) | man

    patterns = {
        enc(0, 0),  # zero (2^-127 in ue8m0, which has no zero)
        enc(fmt.bias, 0),  # one
        enc(max_e, max_m),  # the largest finite value
        enc(max_e, max_m - 1) if max_m else enc(max_e - 1, 0),  # just below it
    }
    if fmt.has_subnormals and m:
        patterns |= {enc(0, 1), enc(0, (1 << m) - 1), enc(1, 0)}  # subnormals and the smallest normal
    if fmt.has_infinity:
        patterns.add(enc(fmt.exponent_field_max, 0))
    if fmt.nan is NanEncoding.IEEE:
        quiet = 1 << (m - 1)
        top = fmt.exponent_field_max
        patterns |= {enc(top, quiet), enc(top, (1 << m) - 1), enc(top, 1)}  # quiet, largest payload, signalling
        if m > 1:
            patterns |= {enc(top, quiet - 1), enc(top, quiet + 1)}  # signalling with payload, quiet with payload
    elif fmt.nan is NanEncoding.ALL_ONES:
        patterns.add((1 << (fmt.exponent_bits + m)) - 1)
    both_signs = patterns | ({p | sign for p in patterns} if fmt.signed else set())
    return tuple(sorted(both_signs))


def _exponent_fields(fmt: FloatFormat) -> tuple[int, ...]:
    """Exponent fields at the ends of this format's range and of every other format's range."""
    fields = {0, 1, 2, fmt.bias - 1, fmt.bias, fmt.bias + 1, fmt.exponent_field_max - 1, fmt.exponent_field_max}
    for other in FORMATS.values():
        for e in (
            other.max_exponent,
            other.max_exponent + 1,
            other.min_normal_exponent,
            other.min_normal_exponent - 1,
            other.min_normal_exponent - other.mantissa_bits,
        ):
            field = e + fmt.bias
            if 0 <= field <= fmt.exponent_field_max:
                fields.add(field)
    return tuple(sorted(fields))


def _mantissa_fields(fmt: FloatFormat) -> tuple[int, ...]:
    """Significand fields at the rounding boundaries of every narrower precision: a tie (the
    discarded bits exactly one half), just below and just above it, and a tie after an odd kept
    part (where round-to-nearest-even goes up)."""
    m = fmt.mantissa_bits
    if m == 0:
        return (0,)
    full = (1 << m) - 1
    fields = {0, 1, full, full - 1, 1 << (m - 1), (1 << (m - 1)) - 1}
    for kept in range(m):
        drop = m - kept
        tie = 1 << (drop - 1)
        fields |= {tie, tie - 1, tie + 1, tie | (1 << drop) if drop < m else tie, (1 << drop) - 1}
    return tuple(sorted(f & full for f in fields))


def _floats(fmt: FloatFormat) -> st.SearchStrategy[int]:
    m = fmt.mantissa_bits
    element = (1 << fmt.field_bits) - 1
    sign = st.sampled_from((0, 1 << (fmt.exponent_bits + m))) if fmt.signed else st.just(0)
    exponent = st.one_of(st.sampled_from(_exponent_fields(fmt)), st.integers(0, fmt.exponent_field_max))
    mantissa = st.one_of(st.sampled_from(_mantissa_fields(fmt)), st.integers(0, (1 << m) - 1))
    by_fields = st.builds(lambda s, e, man: s | (e << m) | man, sign, exponent, mantissa)
    edges = st.sampled_from(_float_edges(fmt))
    # Half of the draws are edge patterns; the field-wise and uniform draws reach every pattern.
    patterns = st.sampled_from((edges,) * 5 + (by_fields,) * 3 + (st.integers(0, element),) * 2).flatmap(lambda s: s)
    return patterns.map(lambda bits: bits << fmt.shift) if fmt.shift else patterns


def classify(type_name: str, bits: int) -> str:
    """The edge class of a bit pattern of a floating-point format: ``"zero"``, ``"subnormal"``,
    ``"normal"``, ``"max"`` (±the largest finite value), ``"infinity"``, ``"nan"`` (a quiet NaN,
    or the only NaN of an e4m3-like format) or ``"snan"`` (IEEE formats: a NaN with the quiet bit
    clear). For an integer type: ``"zero"``, ``"min"``, ``"max"`` or ``"other"``.

    >>> classify("f16", 0x0001), classify("f16", 0xFC00), classify("f16", 0x7D00), classify("e4m3", 0x7F)
    ('subnormal', 'infinity', 'snan', 'nan')
    >>> classify("s8", 0x80)
    'min'
    """
    if type_name in INTEGER_TYPES or type_name == "pred":
        if type_name == "pred":
            return "zero" if bits == 0 else "other"
        t = INTEGER_TYPES[type_name]
        signed_value = bits - (1 << t.bits) if t.signed and bits >> (t.bits - 1) else bits
        return {0: "zero", t.min: "min", t.max: "max"}.get(signed_value, "other")
    fmt = FORMATS[type_name]
    element = bits >> fmt.shift
    m = fmt.mantissa_bits
    magnitude = element & ((1 << (fmt.field_bits - 1)) - 1) if fmt.signed else element
    e, man = magnitude >> m, magnitude & ((1 << m) - 1)
    if fmt.nan is NanEncoding.IEEE and e == fmt.exponent_field_max:
        if man == 0:
            return "infinity"
        return "nan" if man >> (m - 1) else "snan"
    if fmt.nan is NanEncoding.ALL_ONES and magnitude == (1 << (fmt.exponent_bits + m)) - 1:
        return "nan"
    if (e, man) == fmt.max_finite_fields:
        return "max"
    if e == 0 and fmt.has_subnormals:
        return "zero" if man == 0 else "subnormal"
    return "normal"


# ---------------------------------------------------------------------------------------------
# Instruction forms
# ---------------------------------------------------------------------------------------------


def _version(ptx: tuple[int, int] | str | None) -> tuple[int, int] | None:
    if ptx is None or isinstance(ptx, tuple):
        return ptx
    major, _, minor = str(ptx).partition(".")
    if not (major.isdigit() and minor.isdigit()):
        raise PtxSpecError(f"not a PTX ISA version: {ptx!r} (write it as '8.7' or (8, 7))")
    return int(major), int(minor)


def _admitted(form: Form, ptx: tuple[int, int] | None, target: str | None) -> bool:
    if target is not None:
        return form.admits(ptx if ptx is not None else (99, 99), target)
    if ptx is not None:
        return any(t.ptx <= ptx for t in form.targets.alternatives)
    return True


def _try(family: Family, tokens: Sequence[str], ptx, target) -> Form | None:
    """The form the tokens spell, if it is legal and admitted (else None)."""
    text = ".".join([family.opcode, *tokens])
    if family.operand_syntax:
        # Families that only their operands tell apart are reached through the manual's template.
        text = f"{text} {family.operand_syntax}"
    try:
        form = parse(text)
    except IllegalForm:
        return None
    return form if _admitted(form, ptx, target) else None


def _random_tokens(family: Family, rng: random.Random) -> list[str]:
    return [rng.choice(s.tokens) for s in family.slots if s.required or rng.random() < 0.5]


@functools.cache
@functools.lru_cache(maxsize=64)
def _witnesses(opcode: str | None, ptx, target) -> tuple[tuple[Family, tuple[Form, ...]], ...]:
    """Per family, a few legal admitted forms found by a seeded search: the families that have
    any, and a fallback when drawing slot by slot keeps hitting a legality rule. (Seeded, so the
    same arguments give the same witnesses: found once per process.)"""
    rng = random.Random(f"{opcode}/{ptx}/{target}")
    found = []
    for family in CATALOGUE.families(opcode):
        forms_found: dict[str, Form] = {}
        for _ in range(400):
            form = _try(family, _random_tokens(family, rng), ptx, target)
            if form is not None:
                forms_found.setdefault(form.text, form)
                if len(forms_found) >= 8:
                    break
        if forms_found:
            found.append((family, tuple(forms_found.values())))
    return tuple(found)


def forms(opcode: str | None = None, *, ptx: tuple[int, int] | str | None = None, target: str | None = None) -> st.SearchStrategy[Form]:
    """Legal instruction forms (:class:`~ptxspec.spec.catalogue.Form`) of the catalogue.

    ``opcode`` restricts them to one opcode (``"cvt"``); ``ptx`` (``"8.0"`` or ``(8, 0)``) and
    ``target`` (``"sm_90"``) to the forms admitted there (:meth:`Form.admits`; with a target and no
    version, at any version). Each drawn form is what :func:`~ptxspec.spec.catalogue.parse` returns
    for its text (and operand template, for the forms that only their operands tell apart): a
    family is drawn, then a token (or none) for each of its slots; a combination that a legality
    rule forbids is redrawn.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=30, derandomize=True)
    ... @given(forms("cvt", ptx="7.8", target="sm_89"))
    ... def legal(form):
    ...     assert form.admits((7, 8), "sm_89") and parse(form.text) == form
    >>> legal()
    """
    version = _version(ptx)
    if target is not None:
        split_arch(target)  # a malformed target fails here, not inside a draw
    if opcode is not None and not CATALOGUE.families(opcode):
        raise IllegalForm(f"unknown opcode {opcode!r}")
    candidates = _witnesses(opcode, version, target)
    if not candidates:
        where = f" at PTX ISA {ptx}" if ptx else ""
        raise PtxSpecError(f"no form of {opcode or 'any opcode'} is admitted{where}{' on ' + target if target else ''}")

    @st.composite
    def draw_form(draw) -> Form:
        family, fallback = draw(st.sampled_from(candidates))
        for _ in range(40):
            tokens = [draw(st.sampled_from(s.tokens)) for s in family.slots if s.required or draw(st.booleans())]
            form = _try(family, tokens, version, target)
            if form is not None:
                return form
        return draw(st.sampled_from(fallback))

    return draw_form()


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------


def _value_type(form: Form, type_name: str) -> str:
    """The type to draw an operand of ``type_name`` as: a bit-size register (``.b32``) that holds a
    format or packed type named by the form (``add.f16x2`` keeps its operands in ``.b32``) is drawn
    as that type, so its edge classes are the format's."""
    if not type_name.startswith("b") or type_name not in INTEGER_TYPES:
        return type_name
    width = register_bits(type_name)
    for _, token in form.choices:
        if (token in FORMATS or token in PACKED_TYPES) and register_bits(token) == width:
            return token
    return type_name


def operands(form: Form | str, *, lanes: int = 32) -> st.SearchStrategy[tuple]:
    """Source bit patterns for ``form``, in its operand order (:attr:`Form.inputs`), each of its
    register width: what :func:`~ptxspec.semantics.instructions.evaluate` takes. A warp-level form
    (shfl.sync, vote.sync, mma, ...) gets a tuple of ``lanes`` values for each per-lane operand and
    one value for ``membermask`` (§9.7.13.9: every participating thread gives the same mask); a
    warpgroup form (wgmma) a tuple of 128. (An instruction of memory takes a state as well, which
    this strategy does not draw.)

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, derandomize=True)
    ... @given(operands("fma.rn.f32"))
    ... def three(sources):
    ...     assert len(sources) == 3 and all(0 <= s < 2**32 for s in sources)
    >>> three()
    """
    form = parse(form) if isinstance(form, str) else form
    from ptxspec.semantics.instructions import operands_of

    kind = operands_of(form)
    threads = 1 if kind is None else lanes if kind.threads == 32 else kind.threads
    parts: list[st.SearchStrategy[int] | st.SearchStrategy[tuple[int, ...]]] = []
    for operand in form.inputs:
        if form.opcode == "mma" and operand.name == "f":
            # The sparsity selector: "a 32-bit integer constant", one of the values §9.7.14.6.1 lists.
            parts.append(st.sampled_from(_mma_sp_selectors(form)))
            continue
        strategy = values(_value_type(form, operand.type))
        parts.append(st.tuples(*[strategy] * threads) if threads > 1 and operand.name != "membermask" else strategy)
    return st.tuples(*parts)


def _mma_sp_selectors(form: Form) -> tuple[int, ...]:
    from ptxspec.semantics.matrix_layout import metadata_layout

    return metadata_layout(form["shape"], form["atype"]).selectors


# ---------------------------------------------------------------------------------------------
# Litmus tests
# ---------------------------------------------------------------------------------------------

_SCOPES = ("cta", "cluster", "gpu", "sys")
_LOAD_ORDERS = ("weak", "relaxed", "acquire", "volatile")
_STORE_ORDERS = ("weak", "relaxed", "release", "volatile")
_ATOM_ORDERS = ("relaxed", "acquire", "release", "acq_rel")
_ATOM_OPS = ("add", "exch", "cas", "max")
_FENCES = ("sc", "acq_rel")
_PROXIES = ("generic", "surface", "texture", "constant")
"""§8.6 proxies an alias can be declared with (``y @ surface aliases x``, the litmus dialect)."""
_PROXY_LOAD = {"surface": "suld", "texture": "tld", "constant": "cold"}
"""The load through each non-generic proxy (the dialect's opcodes; they take no order: ``.weak``)."""
_PROXY_FENCES = ("alias", "surface", "texture", "constant")
"""``fence.proxy.kind`` (§9.7.13.4; ``surface``/``texture``/``constant`` as in the dialect)."""


def _qualified(order: str, scope: str) -> str:
    """§9.7.9.8: ``.relaxed``/``.acquire``/``.release`` need a scope; ``.weak`` and ``.volatile`` take none."""
    return f".{order}" if order in ("weak", "volatile") else f".{order}.{scope}"


@st.composite
def _instruction(draw, register: str, locations: Sequence[str], kinds: Sequence[str], scopes: Sequence[str], aliases: dict[str, str]) -> tuple[str, str | None]:
    """One instruction's text and the register it writes (or None). ``aliases``: alias name ->
    proxy; loads may read through any alias, stores write through generic or surface ones (texture
    and constant memory are read-only, §8.6), and a fence may be a proxy fence."""
    kind = draw(st.sampled_from(kinds))
    if kind == "ld":
        where = draw(st.sampled_from(tuple(locations) + tuple(aliases)))
    elif kind == "st":
        writable = tuple(a for a, proxy in aliases.items() if proxy in ("generic", "surface"))
        where = draw(st.sampled_from(tuple(locations) + writable))
    else:
        where = draw(st.sampled_from(locations))
    scope = draw(st.sampled_from(scopes))
    if kind == "ld":
        if aliases.get(where, "generic") != "generic":
            return f"{_PROXY_LOAD[aliases[where]]}.weak {register}, {where}", register
        return f"ld{_qualified(draw(st.sampled_from(_LOAD_ORDERS)), scope)} {register}, {where}", register
    if kind == "st":
        if aliases.get(where) == "surface":
            return f"sust.weak {where}, {draw(st.integers(1, 2))}", None
        return f"st{_qualified(draw(st.sampled_from(_STORE_ORDERS)), scope)} {where}, {draw(st.integers(1, 2))}", None
    if kind == "atom":
        op = draw(st.sampled_from(_ATOM_OPS))
        order = draw(st.sampled_from(_ATOM_ORDERS))
        args = "0, 1" if op == "cas" else str(draw(st.integers(1, 2)))
        return f"atom.{order}.{scope}.{op} {register}, {where}, {args}", register
    if aliases and draw(st.booleans()):
        return f"fence.proxy.{draw(st.sampled_from(_PROXY_FENCES))}", None
    return f"fence.{draw(st.sampled_from(_FENCES))}.{scope}", None


def litmus_tests(
    threads: int | tuple[int, int] = (2, 3),
    *,
    instructions: int | tuple[int, int] = (1, 3),
    locations: Sequence[str] = ("x", "y"),
    kinds: Sequence[str] = ("ld", "st", "atom", "fence"),
    scopes: Sequence[str] = _SCOPES,
    gpus: int = 2,
    barriers: bool = False,
    proxies: bool = False,
    text: bool = False,
) -> st.SearchStrategy:
    """Small well-formed litmus tests (§8) over ``ld``, ``st``, ``atom`` and ``fence``.

    ``threads`` and ``instructions`` (per thread) are a number or an inclusive range. Each memory
    operation draws a memory order that its instruction admits (``ld``: weak, relaxed, acquire,
    volatile; ``st``: weak, relaxed, release, volatile; ``atom``: relaxed, acquire, release,
    acq_rel with .add, .exch, .cas or .max), a scope from ``scopes`` where the order takes one, and
    each thread a placement (a CTA, and a GPU below ``gpus``). Every location starts at 0; the
    condition is an ``exists`` over the values the registers read and the final values of the
    locations. Tests come as :class:`~ptxspec.memory_model.litmus.LitmusTest` (parsed from their
    text, so each one parses), or as ``.litmus`` text with ``text=True``.

    ``barriers=True``: some tests place every thread in one CTA and give each thread one
    ``bar.cta.sync 0`` at a drawn point (§9.7.13.1; each thread arrives once, so the barrier
    completes). ``proxies=True``: some tests declare aliases of a location through the generic,
    surface, texture or constant proxy (§8.2.2, §8.6: ``x_surface @ surface aliases x``); loads
    may read through them (``ld``, or ``suld``/``tld``/``cold`` ``.weak``), stores may write
    through the generic and surface ones (``st``, ``sust.weak``), and fences may be proxy fences
    (``fence.proxy.alias`` ... ``fence.proxy.constant``, §9.7.13.4).

    >>> from hypothesis import given, settings
    >>> from ptxspec.memory_model.lowering import lower
    >>> @settings(max_examples=10, derandomize=True)
    ... @given(litmus_tests(threads=2, instructions=2))
    ... def lowers(test):
    ...     assert len(test.threads) == 2 and lower(test).threads
    >>> lowers()
    >>> from ptxspec.memory_model.litmus import parse
    >>> @settings(max_examples=10, derandomize=True)
    ... @given(litmus_tests(threads=2, barriers=True, proxies=True, text=True))
    ... def parses(source):
    ...     assert lower(parse(source)).threads
    >>> parses()
    """
    lo_t, hi_t = (threads, threads) if isinstance(threads, int) else threads
    lo_i, hi_i = (instructions, instructions) if isinstance(instructions, int) else instructions
    if not (1 <= lo_t <= hi_t and 1 <= lo_i <= hi_i and locations and kinds and scopes and gpus >= 1):
        raise PtxSpecError("litmus_tests: empty ranges, locations, kinds or scopes")
    unknown = set(kinds) - {"ld", "st", "atom", "fence"}
    if unknown:
        raise PtxSpecError(f"litmus_tests: unknown instruction kinds {sorted(unknown)} (ld, st, atom, fence)")

    @st.composite
    def draw_test(draw):
        n = draw(st.integers(lo_t, hi_t))
        used = draw(st.lists(st.sampled_from(tuple(locations)), min_size=1, max_size=len(locations), unique=True))
        aliases: dict[str, str] = {}
        if proxies and draw(st.booleans()):
            target = used[0]
            for proxy in draw(st.lists(st.sampled_from(_PROXIES), min_size=1, max_size=len(_PROXIES), unique=True)):
                aliases[f"{target}_{proxy}"] = proxy
        code: list[list[str]] = []
        observed: list[str] = []
        registers: list[str] = []
        for t in range(n):
            cells = []
            for i in range(draw(st.integers(lo_i, hi_i))):
                ins, reg = draw(_instruction(f"r{i}", used, kinds, scopes, aliases))
                cells.append(ins)
                if reg is not None:
                    registers.append(f"P{t}:{reg}")
            code.append(cells)
        one_cta = barriers and draw(st.booleans())
        if one_cta:
            # §9.7.13.1: bar.cta synchronizes the threads of one CTA; one use per thread completes.
            for cells in code:
                cells.insert(draw(st.integers(0, len(cells))), "bar.cta.sync 0")
            placements = [(0, 0) for _ in range(n)]
        else:
            placements = [(draw(st.integers(0, n - 1)), draw(st.integers(0, gpus - 1))) for _ in range(n)]
        for r in registers:
            observed.append(f"{r} == {draw(st.integers(0, 2))}")
        if not observed or draw(st.booleans()):
            observed.append(f"{draw(st.sampled_from(used))} == {draw(st.integers(0, 2))}")
        chosen = draw(st.lists(st.sampled_from(observed), min_size=1, max_size=3, unique=True))
        lines = ["PTX strategies", "{", " ".join(f"{x}=0;" for x in used)]
        lines += [f"{alias} @ {proxy} aliases {used[0]};" for alias, proxy in aliases.items()]
        lines += [" ".join(f"{r}=0;" for r in registers)] if registers else []
        lines.append("}")
        lines.append(" | ".join(f"P{t}@cta {c},gpu {g}" for t, (c, g) in enumerate(placements)) + " ;")
        for row in range(max(len(c) for c in code)):
            lines.append(" | ".join(c[row] if row < len(c) else "" for c in code) + " ;")
        lines.append("exists (" + " /\\ ".join(chosen) + ")")
        source = "\n".join(lines) + "\n"
        if text:
            return source
        from ptxspec.memory_model.litmus import parse as parse_litmus

        return parse_litmus(source, "<strategies>")

    return draw_test()


# ---------------------------------------------------------------------------------------------
# Litmus tests with loops: spin loops, spin locks, CAS loops, forward branches
# ---------------------------------------------------------------------------------------------

_STRONG_LOADS = ("relaxed", "acquire")
_STRONG_STORES = ("relaxed", "release")
_RED_ORDERS = ("relaxed", "release", "acq_rel")
_RMW_OPS = ("add", "sub", "and", "or", "xor", "inc", "dec", "min", "max", "exch", "cas")
"""§9.7.13.5 ``.op`` (integer) plus the dialect's ``sub``."""
_LOOP_BLOCKS = ("ld", "st", "atom", "red", "fence", "spin", "lock", "goto_lock", "cas_lock", "cas_add", "branch", "store_reg")
_RMW_TYPES = {
    # §9.7.13.5 .type per operation: bit-size operations take .b, the others .u/.s.
    32: {
        "and": ("b32",),
        "or": ("b32",),
        "xor": ("b32",),
        "exch": ("b32",),
        "cas": ("b32",),
        "add": ("u32", "s32"),
        "sub": ("u32", "s32"),
        "inc": ("u32",),
        "dec": ("u32",),
        "min": ("u32", "s32"),
        "max": ("u32", "s32"),
    },
    64: {
        "and": ("b64",),
        "or": ("b64",),
        "xor": ("b64",),
        "exch": ("b64",),
        "cas": ("b64",),
        "add": ("u64",),
        "sub": ("u64",),
        "inc": (),
        "dec": (),
        "min": ("u64", "s64"),
        "max": ("u64", "s64"),
    },
}


def looping_litmus_tests(
    threads: int | tuple[int, int] = (1, 3),
    *,
    locations: Sequence[str] = ("x", "y", "z"),
    blocks: int | tuple[int, int] = (1, 3),
    kinds: Sequence[str] = _LOOP_BLOCKS,
    barriers: bool = True,
    weak: bool = False,
    text: bool = False,
) -> st.SearchStrategy:
    """Small litmus tests with control flow (§8, and the Dat3M dialect's labels and branches).

    Each thread is 1-3 (``blocks``) of: a load (``ld.relaxed``/``ld.acquire``), a store
    (``st.relaxed``/``st.release``), an ``atom`` (every ``.op`` of §9.7.13.5 and ``sub``, with or
    without a ``.type``) or a ``red``, a fence (``fence.sc``, ``fence.acq_rel``), a spin loop
    (``L: ld r, x; beq r, 0, L``), an ``exch`` spin lock (``L: atom.acquire.exch r, x, 1; bne r, 0, L``,
    or with ``goto``) around a critical section closed by ``st.release x, 0``, a ``cas`` lock, a
    ``cas`` increment loop (``L: ld r, x; add s, r, 1; atom.cas t, x, r, s; bne t, r, L``), a forward
    branch over a store, or a store of a loaded register (a data dependency). Every memory
    operation is strong, at a scope that includes every thread (all threads on GPU 0; ``.cta``
    only when they share a CTA), so all conflicting accesses are morally strong (§8.7). Atomics on
    a test's locations all use one width (64 bits, untyped or ``.b64``/``.u64``/``.s64``; or 32 bits,
    ``.b32``/``.u32``/``.s32``) so that no value is written at one width and read at another. The
    condition is an ``exists`` over 1-3 of the registers and locations, compared with values the
    test writes (or 0); sometimes a ``locations`` line shows more. Locations start at 0, 1 or 2.
    Tests come parsed, or as text with ``text=True``; 1-3 threads and 1-3 locations by default.

    ``barriers=True``: when the threads share a CTA, some tests give each thread one
    ``bar.cta.sync 0`` between two of its blocks (§9.7.13.1). ``weak=True``: loads and stores may
    also be ``.weak`` (then not every access is morally strong).

    >>> from hypothesis import given, settings
    >>> from ptxspec.memory_model.lowering import lower
    >>> @settings(max_examples=10, derandomize=True, deadline=None)
    ... @given(looping_litmus_tests())
    ... def lowers(test):
    ...     assert lower(test, unroll_bound=1).threads
    >>> lowers()
    """
    lo_t, hi_t = (threads, threads) if isinstance(threads, int) else threads
    lo_b, hi_b = (blocks, blocks) if isinstance(blocks, int) else blocks
    if not (1 <= lo_t <= hi_t and 1 <= lo_b <= hi_b and locations and kinds):
        raise PtxSpecError("looping_litmus_tests: empty ranges, locations or kinds")
    unknown = set(kinds) - set(_LOOP_BLOCKS)
    if unknown:
        raise PtxSpecError(f"looping_litmus_tests: unknown kinds {sorted(unknown)} ({', '.join(_LOOP_BLOCKS)})")

    @st.composite
    def draw_test(draw):
        n = draw(st.integers(lo_t, hi_t))
        used = draw(st.lists(st.sampled_from(tuple(locations)), min_size=1, max_size=len(locations), unique=True))
        one_cta = draw(st.booleans())
        scopes = ("cta", "gpu", "sys") if one_cta else ("gpu", "sys")
        width = draw(st.sampled_from((None, 32, 64)))
        load_orders = _STRONG_LOADS + (("weak",) if weak else ())
        store_orders = _STRONG_STORES + (("weak",) if weak else ())

        def scope():
            return draw(st.sampled_from(scopes))

        def loc():
            return draw(st.sampled_from(used))

        def ld():
            order = draw(st.sampled_from(load_orders))
            return "ld.weak" if order == "weak" else f"ld.{order}.{scope()}"

        def st_():
            order = draw(st.sampled_from(store_orders))
            return "st.weak" if order == "weak" else f"st.{order}.{scope()}"

        def typed(op):
            if width is None or not _RMW_TYPES[width][op]:
                return ""
            return "." + draw(st.sampled_from(_RMW_TYPES[width][op]))

        barrier = barriers and one_cta and draw(st.booleans())
        initial = {x: draw(st.sampled_from((0, 0, 1, 2))) for x in used}
        constants = {0} | set(initial.values())
        code: list[list[str]] = []
        registers: list[str] = []
        for t in range(n):
            lines: list[str] = []
            loaded: list[str] = []
            ends: list[int] = []
            count = 0

            def fresh(t=t):
                nonlocal count
                count += 1
                registers.append(f"P{t}:r{count}")
                return f"r{count}"

            for b in range(draw(st.integers(lo_b, hi_b))):
                kind = draw(st.sampled_from(tuple(kinds)))
                label = f"L{t}_{b}"
                if kind == "store_reg" and not loaded:
                    kind = "st"
                if kind == "ld":
                    r = fresh()
                    lines.append(f"{ld()} {r}, {loc()}")
                    loaded.append(r)
                elif kind == "st":
                    v = draw(st.integers(0, 3))
                    constants.add(v)
                    lines.append(f"{st_()} {loc()}, {v}")
                elif kind == "store_reg":
                    lines.append(f"{st_()} {loc()}, {draw(st.sampled_from(loaded))}")
                elif kind == "atom":
                    op = draw(st.sampled_from(_RMW_OPS))
                    r = fresh()
                    b1 = draw(st.integers(0, 3))
                    args = f"{b1}, {draw(st.integers(0, 3))}" if op == "cas" else str(b1)
                    constants.add(b1)
                    lines.append(f"atom.{draw(st.sampled_from(_ATOM_ORDERS))}.{scope()}.{op}{typed(op)} {r}, {loc()}, {args}")
                    loaded.append(r)
                elif kind == "red":
                    op = draw(st.sampled_from(tuple(o for o in _RMW_OPS if o not in ("exch", "cas"))))
                    lines.append(f"red.{draw(st.sampled_from(_RED_ORDERS))}.{scope()}.{op}{typed(op)} {loc()}, {draw(st.integers(1, 2))}")
                elif kind == "fence":
                    lines.append(f"fence.{draw(st.sampled_from(_FENCES))}.{scope()}")
                elif kind == "spin":
                    r = fresh()
                    x = loc()
                    branch = draw(st.sampled_from(("beq {r}, 0", "bne {r}, 1")))
                    lines += [f"{label}:", f"{ld()} {r}, {x}", branch.format(r=r) + f", {label}"]
                    constants.add(1)
                    loaded.append(r)
                elif kind in ("lock", "goto_lock", "cas_lock"):
                    r = fresh()
                    lock = loc()
                    s = scope()
                    if kind == "cas_lock":
                        lines += [f"{label}:", f"atom.acquire.{s}.cas{typed('cas')} {r}, {lock}, 0, 1", f"bne {r}, 0, {label}"]
                    elif kind == "lock":
                        lines += [f"{label}:", f"atom.acquire.{s}.exch{typed('exch')} {r}, {lock}, 1", f"bne {r}, 0, {label}"]
                    else:
                        order = draw(st.sampled_from(("relaxed", "acquire")))
                        lines += [f"{label}:", f"atom.{order}.{s}.exch{typed('exch')} {r}, {lock}, 1", f"beq {r}, 0, E{label}", f"goto {label}", f"E{label}:"]
                    others = [x for x in used if x != lock]
                    if others and draw(st.booleans()):
                        c = fresh()
                        lines.append(f"ld.relaxed.{s} {c}, {draw(st.sampled_from(others))}")
                        loaded.append(c)
                    if others and draw(st.booleans()):
                        v = draw(st.integers(1, 3))
                        constants.add(v)
                        lines.append(f"st.relaxed.{s} {draw(st.sampled_from(others))}, {v}")
                    lines.append(f"st.release.{s} {lock}, 0")
                    constants.add(1)
                elif kind == "cas_add":
                    a, c, d = fresh(), fresh(), fresh()
                    x = loc()
                    lines += [
                        f"{label}:",
                        f"ld.relaxed.{scope()} {a}, {x}",
                        f"add {c}, {a}, 1",
                        f"atom.{draw(st.sampled_from(_ATOM_ORDERS))}.{scope()}.cas{typed('cas')} {d}, {x}, {a}, {c}",
                        f"bne {d}, {a}, {label}",
                    ]
                    constants.update((1, 2))
                    loaded.append(a)
                else:  # branch: skip a store when a loaded value is (or is not) v
                    r = fresh()
                    v = draw(st.integers(0, 2))
                    lines += [
                        f"{ld()} {r}, {loc()}",
                        f"{draw(st.sampled_from(('beq', 'bne')))} {r}, {v}, S{label}",
                        f"{st_()} {loc()}, {draw(st.integers(1, 3))}",
                        f"S{label}:",
                    ]
                    loaded.append(r)
                ends.append(len(lines))
            if one_cta and barrier:
                # §9.7.13.1: one use of barrier 0 per thread, between two blocks (not in a loop).
                at = draw(st.sampled_from([0] + ends))
                lines.insert(at, "bar.cta.sync 0")
            code.append(lines)
        terms = registers + list(used)
        chosen = draw(st.lists(st.sampled_from(terms), min_size=1, max_size=min(3, len(terms)), unique=True))
        values_ = sorted(constants)
        formula = " /\\ ".join(f"{term} == {draw(st.sampled_from(values_))}" for term in chosen)
        extra = draw(st.lists(st.sampled_from(terms), max_size=2, unique=True))
        lines = ["PTX looping", "{", " ".join(f"{x}={initial[x]};" for x in used), "}"]
        lines.append(" | ".join(f"P{t}@cta {0 if one_cta else t},gpu 0" for t in range(n)) + " ;")
        for row in range(max(len(c) for c in code)):
            lines.append(" | ".join(c[row] if row < len(c) else "" for c in code) + " ;")
        if extra:
            lines.append("locations [" + "; ".join(extra) + ";]")
        lines.append(f"exists ({formula})")
        source = "\n".join(lines)
        if text:
            return source
        from ptxspec.memory_model.litmus import parse as parse_litmus

        return parse_litmus(source, "<strategies>")

    return draw_test()
