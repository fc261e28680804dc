"""Golden vectors in the line layout of Berkeley TestFloat's ``testfloat_gen``.

Berkeley TestFloat (John R. Hauser, Release 3e) tests an IEEE 754 implementation with two
programs that talk through text: ``testfloat_gen <function>`` writes test cases, and
``testfloat_ver <function>`` reads the cases together with the results of the implementation
under test and compares. This module writes and reads that text for the scalar PTX forms that are
IEEE 754 operations, so a TestFloat-based harness can consume ptxspec's golden vectors.

The layout relied on (TestFloat documentation, ``doc/testfloat_gen.html``, section "Output
Format", and the option list of the same page):

* one test case per line; every value is a raw hexadecimal number, without ``0x``, as wide as its
  type (4 digits for f16, 8 for f32, i32 and ui32, 16 for f64, i64 and ui64; upper-case, as the
  examples of that page are), the sign and exponent at the most significant end; values separated
  by one space;
* for a ``<function>``: its operands in order, then the expected result, then the exception flags
  as two hex digits, one bit per flag: bit 0 inexact, bit 1 underflow, bit 2 overflow, bit 3
  infinite (division by zero), bit 4 invalid (:class:`~ptxspec.semantics.numerics.Flags`);
* options ``-rnear_even``, ``-rminMag``, ``-rmin``, ``-rmax`` choose the rounding of a function
  that rounds; tininess is detected after rounding unless ``-tininessbefore`` is given; a
  conversion to an integer (and ``roundToInt``) raises no *inexact* unless ``-exact`` is given
  (the default ``-notexact``).

One file holds one PTX form, which is one TestFloat function under one rounding mode
(:func:`testfloat_function`, :func:`testfloat_options`): ``.rn``/``.rni`` is ``-rnear_even``,
``.rz``/``.rzi`` ``-rminMag``, ``.rm``/``.rmi`` ``-rmin``, ``.rp``/``.rpi`` ``-rmax``. Only forms
that *are* an IEEE 754 operation have a counterpart: an explicit IEEE rounding modifier and none of
``.ftz``, ``.sat``, ``.relu``, ``.satfinite``, ``.approx`` (which change the result away from
IEEE's), on f16, f32 or f64 (TestFloat has no bf16 or tf32) and 32/64-bit integers (TestFloat has
no 8- or 16-bit ones). Covered: ``add``, ``sub``, ``mul``, ``fma``/``mad`` (``mulAdd``), ``div``
and ``sqrt`` with ``.rn``/``.rz``/``.rm``/``.rp`` on f32 and f64, and ``add``/``sub``/``mul``/
``fma`` ``.rn`` on f16 (PTX has no IEEE-rounded f16 division or square root); ``cvt`` between
f16, f32 and f64 both ways, float to ``.s32``/``.u32``/``.s64``/``.u64`` with ``.rni``/``.rzi``/
``.rmi``/``.rpi``, those integers to float, and ``cvt.rni.f32.f32``-style rounding to an integral
value (``roundToInt``).

The result column always holds PTX's result (:mod:`ptxspec.semantics`, under the chosen profile);
the flag column holds the exceptions IEEE 754-2019 §7 has that operation raise under default
handling -- PTX has no status flags, so they are what an IEEE implementation computing the same
result would signal (:func:`exceptions`). Where PTX's result departs from SoftFloat's conventions:

* NaN results: PTX's NaN, not SoftFloat's default NaN or its payload propagation. At spec level an
  f32 or f16 NaN is "an unspecified NaN" (§9.7.3, §9.7.4): the file holds the canonical NaN
  (0x7FFFFFFF, 0x7FFF), the representative that ``ptxspec vectors`` writes; a set of allowed f64
  payloads is written as its numerically smallest member. Under ``--profile sm_90`` it is what an
  H100 returns. ``testfloat_ver`` accepts any NaN for a NaN unless ``-checkNaNs`` is given, so
  read these files without ``-checkNaNs``.
* Float to integer: "In float-to-integer conversions, NaN inputs are converted to 0" and "the
  result is clamped to the destination range by default" (§9.7.9.21) -- NaN gives 0 (on sm_90 some
  pairs give the most negative value, as measured), infinities and out-of-range values saturate.
  SoftFloat returns its own integers for these invalid cases; ``testfloat_ver`` checks them only
  with ``-checkInvInts``, so read these files without it. The invalid flag is set as IEEE 754 §7.2
  says.
* Inexact on conversions to integer and ``roundToInt``: not raised (IEEE 754 §5.8 signals inexact
  only for the ``convertToIntegerExact`` operations; TestFloat's default ``-notexact``).
* fma(0, inf, qNaN): IEEE 754 §7.2 leaves it to the implementation whether invalid is signalled;
  the flags here signal it, as SoftFloat does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

import numpy as np

from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import Location, PtxSpecError
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, register_bits
from ptxspec.semantics.numerics import (
    Exact,
    Flags,
    Infinity,
    NaN,
    Rounding,
    Value,
    decode,
    round_to_integer,
    rounding_flags,
)

#: TestFloat's names of the types it tests (f16, f32, f64; i32, ui32, i64, ui64).
TESTFLOAT_TYPES = {"f16": "f16", "f32": "f32", "f64": "f64", "s32": "i32", "u32": "ui32", "s64": "i64", "u64": "ui64"}

#: The catalogue families of the arithmetic forms, and the TestFloat operation each one is.
ARITHMETIC = {
    "add.f": "add",
    "add.h": "add",
    "sub.f": "sub",
    "sub.h": "sub",
    "mul.f": "mul",
    "mul.h": "mul",
    "fma.f": "mulAdd",
    "fma.h": "mulAdd",
    "mad.f": "mulAdd",
    "div.rnd": "div",
    "sqrt.rnd": "sqrt",
}

#: PTX's rounding modifiers (§6.5.2, Tables 16 and 17) as TestFloat's rounding options.
ROUNDING_OPTIONS = {
    "rn": "-rnear_even",
    "rz": "-rminMag",
    "rm": "-rmin",
    "rp": "-rmax",
    "rni": "-rnear_even",
    "rzi": "-rminMag",
    "rmi": "-rmin",
    "rpi": "-rmax",
}
FLOAT_ROUNDING = {"rn": Rounding.RN, "rz": Rounding.RZ, "rm": Rounding.RM, "rp": Rounding.RP}
INTEGER_ROUNDING = {"rni": Rounding.RN, "rzi": Rounding.RZ, "rmi": Rounding.RM, "rpi": Rounding.RP}

#: The qualifier slots an IEEE-conformant form may have: anything else (.ftz, .sat, .relu,
#: .satfinite, .oob, .approx, packed types ...) changes the result away from IEEE 754's.
_ARITHMETIC_SLOTS = {"rnd", "type"}
_CVT_SLOTS = {"rnd", "dtype", "atype"}
_FLOATS = ("f16", "f32", "f64")


def _as_form(form: Form | str) -> Form:
    from ptxspec.semantics.instructions import as_form

    return as_form(form)


def _kind(form: Form) -> str | None:
    """Which kind of TestFloat function ``form`` is: "arithmetic", "float-float", "float-int",
    "int-float", "round-to-int", or None when it has no counterpart."""
    slots = {slot for slot, _ in form.choices}
    rnd = form.get("rnd")
    if form.family.key in ARITHMETIC:
        if slots <= _ARITHMETIC_SLOTS and rnd in FLOAT_ROUNDING and form["type"] in _FLOATS:
            return "arithmetic"
        return None
    if form.family.key != "cvt" or not slots <= _CVT_SLOTS:
        return None
    dtype, atype = form["dtype"], form["atype"]
    if dtype in _FLOATS and atype in _FLOATS:
        if dtype == atype:
            return "round-to-int" if rnd in INTEGER_ROUNDING else None
        if FORMATS[dtype].width > FORMATS[atype].width:
            return "float-float"  # a widening: exact, and the catalogue refuses a rounding modifier
        return "float-float" if rnd in FLOAT_ROUNDING else None
    if dtype in TESTFLOAT_TYPES and atype in _FLOATS:
        return "float-int" if rnd in INTEGER_ROUNDING else None
    if dtype in _FLOATS and atype in TESTFLOAT_TYPES:
        return "int-float" if rnd in FLOAT_ROUNDING else None
    return None


def testfloat_function(form: Form | str) -> str | None:
    """The TestFloat function that ``form`` computes (``"f32_add"``, ``"f64_mulAdd"``,
    ``"f32_to_f16"``, ``"f32_to_i32"``, ``"i32_to_f32"``, ``"f64_roundToInt"``), or None when the
    form is not an IEEE 754 operation TestFloat knows (see the module docstring)."""
    form = _as_form(form)
    kind = _kind(form)
    if kind is None:
        return None
    if kind == "arithmetic":
        return f"{form['type']}_{ARITHMETIC[form.family.key]}"
    if kind == "round-to-int":
        return f"{form['atype']}_roundToInt"
    return f"{TESTFLOAT_TYPES[form['atype']]}_to_{TESTFLOAT_TYPES[form['dtype']]}"


def testfloat_options(form: Form | str) -> list[str]:
    """The ``testfloat_gen``/``testfloat_ver`` options under which TestFloat's expectations are
    this form's: its rounding mode where the function rounds, and ``-tininessafter`` (the flags'
    tininess rule; TestFloat's default, given explicitly). ``-notexact`` is the default and matches
    the flags of conversions to integer."""
    form = _as_form(form)
    kind = _kind(form)
    if kind is None:
        raise PtxSpecError(f"{form.text} has no TestFloat counterpart", where=form.text)
    rnd = form.get("rnd")
    options = [ROUNDING_OPTIONS[rnd]] if rnd else []
    if kind in ("arithmetic", "float-float", "int-float"):
        options.append("-tininessafter")
    return options


# ---------------------------------------------------------------------------------------------
# The exceptions an IEEE 754 operation raises (IEEE 754-2019 §7)
# ---------------------------------------------------------------------------------------------


def _is_zero(v: Value) -> bool:
    return isinstance(v, Exact) and v.is_zero


def _signalling(operands: Sequence[Value]) -> bool:
    return any(isinstance(v, NaN) and v.is_signalling for v in operands)


def _nan_operand_flags(operands: Sequence[Value]) -> Flags:
    """IEEE 754 §7.2 (a) and §6.2: an operation on a signalling NaN is invalid; quiet NaNs
    propagate silently."""
    return Flags.INVALID if _signalling(operands) else Flags(0)


def _arithmetic_exceptions(form: Form) -> Callable[[Sequence[int]], Flags]:
    """IEEE 754-2019 §7.2-7.6 for add, sub, mul, fusedMultiplyAdd, division and squareRoot.

    The exact result comes from the same exact operations the semantics rounds
    (:mod:`ptxspec.semantics.floating_point`: ``exact_add`` ... ``exact_root``), which return the
    invalid marker for IEEE's invalid cases (§7.2 (b) 0 * inf, (d) inf - inf, (e) 0/0 and inf/inf,
    (f) the square root of a number below zero); division of a finite nonzero number by zero is
    §7.3's division by zero; everything else is decided by the one rounding
    (:func:`~ptxspec.semantics.numerics.rounding_flags`).
    """
    from ptxspec.semantics.floating_point import exact_add, exact_div, exact_fma, exact_mul, exact_root, exact_sub

    fmt = FORMATS[form["type"]]
    mode = FLOAT_ROUNDING[form["rnd"]]
    operation = ARITHMETIC[form.family.key]
    exact_ops: dict[str, Callable[..., Value]] = {
        "add": exact_add,
        "sub": exact_sub,
        "mul": exact_mul,
        "mulAdd": exact_fma,
        "div": exact_div(fmt),
        "sqrt": exact_root(fmt),
    }
    exact_op = exact_ops[operation]

    def flags(sources: Sequence[int]) -> Flags:
        operands = [decode(fmt, s) for s in sources]
        if operation == "mulAdd":
            a, b = operands[0], operands[1]
            # §7.2 (c): fusedMultiplyAdd(0, inf, c) is invalid; for a quiet-NaN c the standard
            # leaves it to the implementation -- signalled here, as SoftFloat does.
            if (_is_zero(a) and isinstance(b, Infinity)) or (isinstance(a, Infinity) and _is_zero(b)):
                return Flags.INVALID
        if any(isinstance(v, NaN) for v in operands):
            return _nan_operand_flags(operands)
        value = exact_op(mode, *operands)
        if isinstance(value, NaN):
            return Flags.INVALID
        if operation == "div" and _is_zero(operands[1]) and isinstance(operands[0], Exact):
            return Flags.DIVIDE_BY_ZERO  # §7.3: a finite nonzero dividend (0/0 was invalid above)
        return rounding_flags(value, fmt, mode)

    return flags


def _integer_value(type_name: str, bits: int) -> int:
    t = INTEGER_TYPES[type_name]
    return bits - (1 << t.bits) if t.signed and bits >> (t.bits - 1) else bits


def _conversion_exceptions(form: Form, kind: str) -> Callable[[Sequence[int]], Flags]:
    """IEEE 754-2019 §5.4.2 and §5.8 conversions:

    * float to float (formatOf-convertFormat): a signalling NaN is invalid, a quiet one propagates;
      otherwise the rounding decides (a widening is exact);
    * float to integer (convertToInteger{TiesToEven, TowardZero, TowardNegative, TowardPositive}):
      "when a NaN or infinite operand cannot be represented in the destination format", or the
      rounded value lies outside the destination's range, the invalid operation exception is
      signalled (§5.8, §7.2 (h)); inexact is not (only the *Exact* variants signal it);
    * integer to float (convertFromInt): the rounding decides;
    * roundToIntegral{TiesToEven, TowardZero, ...} (§5.3.1, §5.9): invalid for a signalling NaN
      only; inexact is signalled by roundToIntegralExact alone.
    """
    dtype, atype, rnd = form["dtype"], form["atype"], form.get("rnd")

    def int_to_float(sources: Sequence[int]) -> Flags:
        n = _integer_value(atype, sources[0])
        assert rnd is not None, "an int-float form has a float rounding (testfloat_kind)"
        return rounding_flags(Exact(int(n < 0), abs(n)), FORMATS[dtype], FLOAT_ROUNDING[rnd])

    def from_float(sources: Sequence[int]) -> Flags:
        value = decode(FORMATS[atype], sources[0])
        if isinstance(value, NaN):
            return Flags.INVALID if kind == "float-int" else _nan_operand_flags([value])
        if kind == "float-float":
            return rounding_flags(value, FORMATS[dtype], FLOAT_ROUNDING[rnd] if rnd else Rounding.RN)
        if kind == "round-to-int":
            return Flags(0)
        if isinstance(value, Infinity):
            return Flags.INVALID
        assert rnd is not None, "a float-int form has an integer rounding (testfloat_kind)"
        n = round_to_integer(value, INTEGER_ROUNDING[rnd])
        t = INTEGER_TYPES[dtype]
        return Flags.INVALID if not t.min <= n <= t.max else Flags(0)

    return int_to_float if kind == "int-float" else from_float


def _exceptions_of(form: Form) -> Callable[[Sequence[int]], Flags]:
    """:func:`exceptions` for one form, prepared once (the form's qualifiers read once)."""
    kind = _kind(form)
    if kind is None:
        raise PtxSpecError(f"{form.text} has no TestFloat counterpart (not an IEEE 754 operation on f16/f32/f64)", where=form.text)
    if kind == "arithmetic":
        return _arithmetic_exceptions(form)
    return _conversion_exceptions(form, kind)


def exceptions(form: Form | str, sources: Sequence[int]) -> Flags:
    """The IEEE 754-2019 §7 exceptions that the operation ``form`` computes raises on the source
    bit patterns ``sources`` (default exception handling, tininess after rounding)."""
    return _exceptions_of(_as_form(form))(sources)


# ---------------------------------------------------------------------------------------------
# Writing and reading the lines
# ---------------------------------------------------------------------------------------------


def _representative(result) -> int:
    """One bit pattern for a result: the bits, the canonical NaN for "any NaN", the smallest
    member of a finite set of NaN payloads."""
    from ptxspec.semantics.numerics import canonical_nan
    from ptxspec.semantics.results import AnyNaN, OneOf

    if isinstance(result, int):
        return result
    if isinstance(result, AnyNaN):
        return canonical_nan(result.format)
    if isinstance(result, OneOf):
        return min(result.members)
    raise PtxSpecError(f"no single TestFloat result for the allowed set {result.describe()}")


def _digits(type_name: str) -> int:
    return register_bits(type_name) // 4


def _widths(form: Form) -> list[int]:
    """The hex digits of each field of a line: the operands, the result, the flags."""
    return [_digits(o.type) for o in form.sources] + [_digits(form.destinations[0].type), 2]


def _format(widths: Sequence[int], values: Sequence[int]) -> str:
    return " ".join(f"{int(v):0{w}X}" for v, w in zip(values, widths))


def line(form: Form | str, sources: Sequence[int], result: int, flags: int) -> str:
    """One test case as ``testfloat_gen`` writes it (without the newline)."""
    return _format(_widths(_as_form(form)), [*sources, result, flags])


def encode(form: Form | str, sources: list[np.ndarray], profile="spec") -> bytes:
    """The test cases of ``form`` on the vectors ``sources`` (``sources[k][i]`` is operand ``k`` of
    vector ``i``), one line each: operands, PTX's result under ``profile``, IEEE's flags.

    Results come from :func:`ptxspec.semantics.batch.evaluate_batch` (its fast path where one
    exists); the flags from :func:`exceptions`.
    """
    from ptxspec.semantics.batch import evaluate_batch

    form = _as_form(form)
    if testfloat_function(form) is None:
        raise PtxSpecError(
            f"{form.text} has no TestFloat counterpart: the testfloat format holds IEEE 754 operations "
            "(an explicit .rn/.rz/.rm/.rp, no .ftz/.sat/.relu/.satfinite/.approx) on f16, f32, f64 and "
            "32/64-bit integers",
            where=form.text,
        )
    batch = evaluate_batch(form, sources, profile)
    results = batch.bits.tolist()
    for i, allowed in batch.sets.items():
        results[i] = _representative(allowed)
    columns = [np.asarray(s).tolist() for s in sources]
    flags_of, widths = _exceptions_of(form), _widths(form)
    out = []
    for i, result in enumerate(results):
        vector = [int(col[i]) for col in columns]
        out.append(_format(widths, [*vector, result, flags_of(vector)]))
    return "".join(text + "\n" for text in out).encode("ascii")


_HEX = re.compile(r"[0-9A-Fa-f]+")


def read(path_or_bytes: str | os.PathLike | bytes, form: Form | str, *, first_line: int = 1) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Parse a testfloat file of ``form``: returns ``(sources, outputs, flags)`` -- one uint64 array
    per source operand, the results, and the flag bytes (uint8).

    Every field must be hexadecimal of exactly its type's width (either case), fields separated by
    single spaces, flags below 0x20. A malformed line raises :class:`PtxSpecError` located at
    ``file:line:column`` (``<bytes>`` for in-memory data, whose first line is number
    ``first_line``: a chunk of a file read a piece at a time).
    """
    form = _as_form(form)
    if testfloat_function(form) is None:
        raise PtxSpecError(f"{form.text} has no TestFloat counterpart", where=form.text)
    if isinstance(path_or_bytes, bytes):
        name, data = "<bytes>", path_or_bytes
    else:
        name = os.fspath(path_or_bytes)
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as e:
            raise PtxSpecError(f"cannot read {name}: {e.strerror}", where=Location(name)) from None
    widths = _widths(form)
    names = [f"operand {o.name}" for o in form.sources] + [f"result {form.destinations[0].name}", "flags"]
    columns: list[list[int]] = [[] for _ in widths]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=first_line):
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError as e:
            raise PtxSpecError("not ASCII text", where=Location(name, number, e.start + 1)) from None
        text = text.removesuffix("\r")
        fields = text.split(" ")
        if len(fields) != len(widths):
            raise PtxSpecError(
                f"expected {len(widths)} space-separated fields for {testfloat_function(form)} ({', '.join(names)}), found {len(fields)}",
                where=Location(name, number, 1),
            )
        column = 1
        for k, (field, width) in enumerate(zip(fields, widths)):
            if len(field) != width or not _HEX.fullmatch(field):
                shown = field if len(field) <= 40 else f"{field[:20]}...{field[-8:]} ({len(field)} characters)"
                raise PtxSpecError(f"{names[k]}: expected {width} hex digits, found {shown!r}", where=Location(name, number, column))
            value = int(field, 16)
            if k == len(widths) - 1 and value >= 0x20:
                raise PtxSpecError(f"flags {field}: only bits 0-4 are exception flags", where=Location(name, number, column))
            columns[k].append(value)
            column += len(field) + 1
    arrays = [np.array(c, dtype=np.uint64) for c in columns[:-1]]
    return arrays[:-1], arrays[-1], np.array(columns[-1], dtype=np.uint8)


__all__ = [
    "Flags",
    "encode",
    "exceptions",
    "line",
    "read",
    "testfloat_function",
    "testfloat_options",
]
