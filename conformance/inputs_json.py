"""``ptxspec eval --inputs FILE.json``: an instruction's source operands from a JSON file, matrix
operands as matrices.

The file is one JSON object. Its keys name the form's source operands as ``ptxspec eval`` lists
them (``a``, ``b``, ``membermask``; the registers of a fragment ``a.0``, ``a.1``, ...), and, for
``mma`` and ``mma.sp`` (§9.7.14.5.14, §9.7.14.6.3), the matrices ``"A"``, ``"B"`` and ``"C"``::

    {"A": [[1.0, 2.0, ...], ...],          M rows of K elements (row 0 first)
     "B": [["0x3c00", ...], ...],          K rows of N elements
     "C": [[0, 0, ...], ...]}              M rows of N elements

A matrix is placed in its registers by the manual's fragment layout
(:meth:`~ptxspec.semantics.matrix_layout.FragmentLayout.from_matrix`), so it stands for all of its
registers (``A`` for ``a.0``, ``a.1``, ...). An element is a JSON number, its value: of a
floating-point type one the type holds exactly (``1.5``, ``-2``; ``0.1`` is refused: give its bits),
of an integer type an integer of the type (a negative one is its two's complement). Or a string,
the element's bit pattern as ``ptxspec eval`` reads an operand (``"0x3c00"``, ``"0b1"``), or
``"inf"``, ``"-inf"``, ``"nan"`` (the canonical NaN) of a floating-point type.

For ``mma.sp`` ``A`` is either the M x K/2 matrix that A's registers hold (then give the metadata
``e``), or the whole M x K matrix, which must follow the sparsity pattern (§9.7.14.6.1): it is
compressed with :func:`~ptxspec.semantics.matrix_layout.compress_sparse` and ``e`` computed for the
selector ``f`` (default 0).

A register operand is one value (every lane, for a warp-level form) or, for a warp-level form, a
list of 32 lane values (lane 0 first). Nothing here decides a result: the operands become the
texts of a :class:`~ptxspec.conformance.cli.Request`, checked and evaluated as the command line's.
"""

from __future__ import annotations

import math

import numpy as np

from ptxspec.conformance.state_json import load_json_file
from ptxspec.spec.errors import Location, OperandError, shorten

SCHEMA = (
    "an inputs file is one JSON object: a key per source operand ('a', 'a.0', ...), and for mma the matrices 'A', 'B', 'C' (docs/vectors.rst, 'Input files')"
)
MATRICES = {"A": "a", "B": "b", "C": "c"}
FLOAT_WORDS = {"inf": 0, "+inf": 0, "-inf": 1}


def load_inputs(path: str, form) -> list[tuple[str, str]]:
    """The source operands of ``form`` read from the inputs file ``path``: one ``(text, where)``
    per source, in the form's order, each text as the command line would give it."""
    from ptxspec.semantics.instructions import REGISTERS, operands_of

    source = "<stdin>" if path == "-" else path
    value = load_json_file(path, "inputs file", SCHEMA)
    if not isinstance(value, dict):
        raise OperandError(f"{SCHEMA}; got {type(value).__name__}", where=Location(source))
    kind = operands_of(form)
    lanes = kind is not None and kind != REGISTERS and kind.threads > 1
    registers = _matrix_registers(form, value, source)
    names = [o.name for o in form.inputs]
    unknown = [key for key in value if key not in names and not (key in MATRICES and registers)]
    if unknown:
        accepted = ", ".join(names + ([m for m in MATRICES if m in value] if registers else []))
        raise OperandError(f"{form.text} has no source operand {unknown[0]!r}; it takes {accepted}", where=f"{source}: {shorten(unknown[0])}")
    out = []
    for name in names:
        where = f"{source}: {name}"
        if name in value and name in registers:
            raise OperandError(f"{name} is given twice: by itself and by its matrix", where=where)
        if name in registers:
            out.append((registers[name], where))
        elif name in value:
            out.append((_register_text(value[name], where, lanes), where))
        elif name == "membermask" and lanes:
            continue  # the default, as on the command line
        else:
            raise OperandError(f"{form.text} needs the source operand {name}; the file does not give it", where=Location(source))
    return out


def _register_text(value, where: str, lanes: bool) -> str:
    """One register operand as the command line writes it: a value, or 32 comma-separated lanes."""
    if isinstance(value, list):
        if not lanes:
            raise OperandError("a list gives the 32 lanes of a warp-level operand; this form's operands are single registers", where=where)
        return ",".join(_scalar_text(v, f"{where}, lane {i}") for i, v in enumerate(value))
    return _scalar_text(value, where)


def _scalar_text(value, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise OperandError(f"a register value is a bit pattern (a string such as '0x3f800000', or an integer), got {shorten(repr(value))}", where=where)
    return str(value)


# ---------------------------------------------------------------------------------------------
# Matrices (mma, mma.sp): elements to fragment registers
# ---------------------------------------------------------------------------------------------


def _matrix_registers(form, value: dict, source: str) -> dict[str, str]:
    """The register texts (``"a.0"`` -> 32 lanes) of the matrices the file gives."""
    given = [m for m in MATRICES if m in value]
    if not given:
        return {}
    if form.opcode != "mma":
        raise OperandError(f"matrices ('A', 'B', 'C') are the operands of mma and mma.sp; {form.text} is not one", where=f"{source}: {given[0]}")
    from ptxspec.semantics.matrix_layout import compress_sparse
    from ptxspec.semantics.mma import _layouts

    layouts = _layouts(form)
    types = {"A": form["atype"], "B": form["btype"], "C": form["ctype"]}
    out: dict[str, str] = {}
    for matrix in given:
        layout = layouts[MATRICES[matrix]]
        where = f"{source}: {matrix}"
        dense = matrix == "A" and layout.sparse and _rows_of(value[matrix]) and len(value[matrix][0]) == layout.cols
        cols = layout.cols if dense else layout.stored_cols
        elements = _elements(value[matrix], layout.rows, cols, types[matrix], layout.element_bits, where)
        if dense:
            if "e" in value:
                raise OperandError("give the metadata e with A's stored half (M x K/2), not with the whole A: it is computed from A", where=f"{source}: e")
            selector = element_bits(value.get("f", 0), "b32", 32, f"{source}: f")
            try:
                registers, metadata = compress_sparse(layout, elements, selector)
            except OperandError as error:
                raise OperandError(str(error.message), where=where, section=error.section) from None
            out["e"] = ",".join(f"0x{int(v):08x}" for v in metadata)
            if "f" not in value:
                out["f"] = "0"  # the selector the metadata was made for
        else:
            registers = layout.from_matrix(elements)
        digits = layout.register_bits // 4
        for r in range(layout.registers):
            out[f"{MATRICES[matrix]}.{r}"] = ",".join(f"0x{int(v):0{digits}x}" for v in registers[:, r])
    return out


def _rows_of(value) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], list)


def _elements(value, rows: int, cols: int, element_type: str, bits: int, where: str) -> np.ndarray:
    """A matrix of ``rows`` x ``cols`` element bit patterns of ``element_type``."""
    if not (isinstance(value, list) and len(value) == rows and all(isinstance(row, list) and len(row) == cols for row in value)):
        raise OperandError(f"this matrix is {rows} rows of {cols} .{element_type} elements (a list of lists)", where=where)
    out = np.zeros((rows, cols), dtype=np.uint64)
    for i, row in enumerate(value):
        for j, element in enumerate(row):
            out[i, j] = element_bits(element, element_type, bits, f"{where}, row {i}, column {j}")
    return out


def element_bits(value, element_type: str, bits: int, where: str) -> int:
    """One matrix element as its ``bits``-bit pattern of ``element_type``: a number is a value (of a
    floating-point type, one it holds exactly; of an integer type, two's complement when negative),
    a string a bit pattern (or inf/nan of a floating-point type)."""
    from ptxspec.conformance.cli import parse_operand, twos_complement
    from ptxspec.spec.types import FORMATS

    fmt = FORMATS.get(element_type)
    if (
        fmt is not None
        and not isinstance(value, bool)
        and (isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().lower() in (*FLOAT_WORDS, "nan")))
    ):
        return _float_bits(value, fmt, where)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise OperandError(f"a .{element_type} element is a bit pattern or a number, got {shorten(repr(value))}", where=where)
    number = twos_complement(value if isinstance(value, int) else parse_operand(value, where), bits)
    if not 0 <= number < 1 << bits:
        raise OperandError(f"{shorten(str(value))} does not fit a {bits}-bit .{element_type} element", where=where)
    return number


def _float_bits(value, fmt, where: str) -> int:
    """A number as the bits of ``fmt`` that hold it exactly; refused where ``fmt`` would round it."""
    from fractions import Fraction

    from ptxspec.semantics import numerics

    if isinstance(value, float) and not math.isfinite(value):  # JSON's NaN, Infinity, 1e400
        raise OperandError(f'{value!r} is not a number a matrix element takes; write "nan", "inf" or "-inf", or the bits', where=where)

    if isinstance(value, str):
        word = value.strip().lower()
        if word == "nan":
            return numerics.canonical_nan(fmt)
        if not fmt.has_infinity:
            raise OperandError(f".{fmt.name} has no infinity", where=where)
        return numerics.infinity(fmt, FLOAT_WORDS[word])
    exact = Fraction(value)
    shift = exact.denominator.bit_length() - 1  # a float's denominator is a power of two
    negative = value < 0 if isinstance(value, int) else math.copysign(1.0, value) < 0  # -0.0 too
    bits = numerics.round_exact(numerics.Exact(int(negative), abs(exact.numerator), -shift), fmt)
    decoded = numerics.decode(fmt, bits)
    if not isinstance(decoded, numerics.Exact) or numerics.to_fraction(decoded) != exact:
        raise OperandError(f"{value!r} is not exactly a .{fmt.name} value (it would round); give its bit pattern", where=where)
    return bits
