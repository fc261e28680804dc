"""Catalogue entries for §9.7.14, the warp-level matrix instructions: ``mma`` (§9.7.14.5.14),
``mma.sp``/``mma.sp::ordered_metadata`` (§9.7.14.6.3), ``ldmatrix`` (§9.7.14.5.15), ``stmatrix``
(§9.7.14.5.16) and ``movmatrix`` (§9.7.14.5.17).

One family per syntax block of the manual:

=========================  ===========================================================================
key                        syntax
=========================  ===========================================================================
``mma.f16``                ``mma.sync.aligned.{m8n8k4,m16n8k8,m16n8k16}.alayout.blayout.dtype.f16.f16.ctype``
``mma.alt``                ``mma.sync.aligned.{m16n8k4,m16n8k8}.row.col.f32.tf32.tf32.f32``,
                           ``mma.sync.aligned.{m16n8k8,m16n8k16}.row.col.f32.bf16.bf16.f32``
``mma.f8``                 ``mma.sync.aligned.{m16n8k16,m16n8k32}.row.col.dtype.f8type.f8type.ctype``
``mma.f8f6f4``             ``mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.dtype.f8f6f4type.f8f6f4type.ctype``
``mma.block_scale``        the three ``.kind::mxf4``/``.kind::mxf4nvf4``/``.kind::mxf8f6f4 .block_scale`` lines
``mma.f64``                ``mma.sync.aligned.{m8n8k4,m16n8k4,m16n8k8,m16n8k16}.row.col.f64.f64.f64.f64``
``mma.i8``, ``mma.i4``     ``mma.sync.aligned.shape.row.col{.satfinite}.s32.atype.btype.s32``
``mma.b1``                 ``mma.sync.aligned.shape.row.col.s32.b1.b1.s32.bitOp.popc``
``mma.sp.*``               the same blocks of §9.7.14.6.3 with ``.spvariant = {.sp, .sp::ordered_metadata}``
``ldmatrix``               ``ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]``
``ldmatrix.fmt``           ``ldmatrix.sync.aligned.{m8n16,m16n16}.num{.trans}{.ss}.dst_fmt.src_fmt r, [p]``
``stmatrix``               ``stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r``
``movmatrix``              ``movmatrix.sync.aligned.m8n8.trans.b16 d, a``
=========================  ===========================================================================

Every mma family's ``.shape`` slot admits every shape, so that a shape the block does not list is
refused by a rule that names the shape and the block's list (the type qualifiers pick the block).
Operands are vectors (``d.0, d.1, ...``) with as many registers as the fragment layouts of
:mod:`ptxspec.semantics.matrix_layout` give; the sparse forms add the metadata ``e`` (.b32) and
the sparsity selector ``f`` ("a 32-bit integer constant with values in the range 0..3").

Where ptxas (CUDA 13.0) and the manual differ the rules follow the manual; the differences are
listed, with the manual's sentence, in ``KNOWN`` of tests/test_matrix_catalogue.py (which compares
every legal form and a seeded sample of illegal neighbours with ptxas): ptxas also requires
``.dtype == .ctype`` for m16n8k16 ``.f16`` and for every fp8/fp6/fp4 form, and accepts ``.f16``
accumulators of the sparse ``.e4m3/.e5m2`` form only with ``.sp::ordered_metadata``.

Its families are parsed by the one catalogue (:func:`ptxspec.spec.catalogue.parse`), which asks
:func:`explain_refusal` why a text of this chapter is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Catalogue, Family, Form, Operand, Rule, Slot, Target, Targets, forbid, on
from ptxspec.spec.catalogue import _match
from ptxspec.spec.catalogue import SM_INTRODUCED_IN
from ptxspec.spec.catalogue import target_at
from ptxspec.spec.errors import OperandError

MMA = "9.7.14.5.14"
MMA_SP = "9.7.14.6.3"
LDMATRIX = "9.7.14.5.15"
STMATRIX = "9.7.14.5.16"
MOVMATRIX = "9.7.14.5.17"

SYNC = Slot("sync", ("sync",), required=True)
ALIGNED = Slot("aligned", ("aligned",), required=True)

MMA_SHAPES = (
    "m8n8k4",
    "m8n8k16",
    "m8n8k32",
    "m8n8k128",
    "m16n8k4",
    "m16n8k8",
    "m16n8k16",
    "m16n8k32",
    "m16n8k64",
    "m16n8k128",
    "m16n8k256",
)
SHAPE = Slot("shape", MMA_SHAPES, required=True)
ALAYOUT = Slot("alayout", ("row", "col"), required=True)
BLAYOUT = Slot("blayout", ("row", "col"), required=True)
SPVARIANT = Slot("spvariant", ("sp", "sp::ordered_metadata"), required=True)
SATFINITE = Slot("satfinite", ("satfinite",))

F8 = ("e4m3", "e5m2")
F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
I8 = ("u8", "s8")
I4 = ("u4", "s4")
BLACKWELL = ("sm_100a", "sm_101a", "sm_120a")


def _target(ptx: tuple[int, int], sm: int) -> Target:
    """:func:`~ptxspec.spec.catalogue.target_at`, knowing also that "the target string sm_75 was
    introduced in PTX ISA version 6.3" (§11.1.2), which the catalogue's table lacks."""
    if sm in SM_INTRODUCED_IN:
        return target_at(ptx, sm)
    return Target(max(ptx, {75: (6, 3)}[sm]), sm)


def _types(dtype: tuple[str, ...], atype: tuple[str, ...], btype: tuple[str, ...], ctype: tuple[str, ...]) -> tuple[Slot, ...]:
    return (
        Slot("dtype", dtype, required=True),
        Slot("atype", atype, required=True),
        Slot("btype", btype, required=True),
        Slot("ctype", ctype, required=True),
    )


# ---------------------------------------------------------------------------------------------
# Fragment sizes (§9.7.14.5.1-13, §9.7.14.6.2): how many registers each operand has
# ---------------------------------------------------------------------------------------------

WARP = 32

#: §9.7.14.2 element widths; ``.e3m2/.e2m3/.e2m1`` are 8-bit containers except in the 4-bit
#: shapes (see :func:`element_bits_of`).
ELEMENT_BITS = {
    "f64": 64,
    "f32": 32,
    "tf32": 32,
    "s32": 32,
    "f16": 16,
    "bf16": 16,
    "e4m3": 8,
    "e5m2": 8,
    "e3m2": 8,
    "e2m3": 8,
    "e2m1": 8,
    "s8": 8,
    "u8": 8,
    "s4": 4,
    "u4": 4,
    "b1": 1,
}

#: Shapes whose ``.e2m1`` operands are packed 4-bit elements: ``.kind::mxf4``/``.kind::mxf4nvf4``
#: (dense m16n8k64, sparse m16n8k128), "when .kind::mxf4 or .kind::mxf4nvf4 is used, no explicit
#: padding is needed even for .e2m1 elements" (§9.7.14.5.14).
_PACKED_E2M1_SHAPES = {("m16n8k64", False), ("m16n8k128", True)}


def element_bits_of(shape: str, element_type: str, sparse: bool = False) -> int:
    """The width of one element in a register: 4 for ``.e2m1`` in the mxf4 shapes, else
    :data:`ELEMENT_BITS`."""
    if element_type == "e2m1" and (shape, sparse) in _PACKED_E2M1_SHAPES:
        return 4
    try:
        return ELEMENT_BITS[element_type]
    except KeyError:
        raise OperandError(f"no matrix element type .{element_type}", section="9.7.14.2") from None


def parse_shape(shape: str) -> tuple[int, int, int]:
    """``"m16n8k16"`` -> ``(16, 8, 16)``."""
    body = shape.removeprefix(".")
    try:
        m, rest = body.removeprefix("m").split("n")
        n, k = rest.split("k")
        return int(m), int(n), int(k)
    except ValueError:
        raise OperandError(f"not a matrix shape: {shape!r} (expected the manual's spelling, e.g. 'm16n8k16')", section="9.7.14.1") from None


_F8 = F8
_F6F4 = ("e3m2", "e2m3", "e2m1")
_I8 = ("s8", "u8")
_I4 = ("s4", "u4")

#: (shape, A/B element type) -> (A registers, B registers, section), dense mma.
DENSE_AB: dict[tuple[str, str], tuple[int, int, str]] = {
    ("m8n8k4", "f64"): (1, 1, "9.7.14.5.2"),
    **{("m8n8k16", t): (1, 1, "9.7.14.5.3") for t in _I8},
    **{("m8n8k32", t): (1, 1, "9.7.14.5.4") for t in _I4},
    ("m8n8k128", "b1"): (1, 1, "9.7.14.5.5"),
    ("m16n8k4", "tf32"): (2, 1, "9.7.14.5.6"),
    ("m16n8k4", "f64"): (2, 1, "9.7.14.5.6"),
    ("m16n8k8", "f16"): (2, 1, "9.7.14.5.7"),
    ("m16n8k8", "bf16"): (2, 1, "9.7.14.5.7"),
    ("m16n8k8", "tf32"): (4, 2, "9.7.14.5.7"),
    ("m16n8k8", "f64"): (4, 2, "9.7.14.5.7"),
    ("m16n8k16", "f16"): (4, 2, "9.7.14.5.8"),
    ("m16n8k16", "bf16"): (4, 2, "9.7.14.5.8"),
    ("m16n8k16", "f64"): (8, 4, "9.7.14.5.8"),
    **{("m16n8k16", t): (2, 1, "9.7.14.5.9") for t in _I8 + _F8},
    **{("m16n8k32", t): (2, 1, "9.7.14.5.10") for t in _I4},
    **{("m16n8k32", t): (4, 2, "9.7.14.5.10") for t in _I8 + _F8 + _F6F4},
    **{("m16n8k64", t): (4, 2, "9.7.14.5.11") for t in _I4 + ("e2m1",)},
    ("m16n8k128", "b1"): (2, 1, "9.7.14.5.12"),
    ("m16n8k256", "b1"): (4, 2, "9.7.14.5.13"),
}

#: (shape, A/B element type) -> (A registers, B registers, section), mma.sp (§9.7.14.6.2.1-8).
SPARSE_AB: dict[tuple[str, str], tuple[int, int, str]] = {
    **{("m16n8k16", t): (2, 2, "9.7.14.6.2.1") for t in ("f16", "bf16")},
    **{("m16n8k32", t): (4, 4, "9.7.14.6.2.2") for t in ("f16", "bf16")},
    ("m16n8k16", "tf32"): (4, 4, "9.7.14.6.2.3"),
    ("m16n8k8", "tf32"): (2, 2, "9.7.14.6.2.4"),
    **{("m16n8k32", t): (2, 2, "9.7.14.6.2.5") for t in _I8},
    **{("m16n8k64", t): (4, 4, "9.7.14.6.2.6") for t in _I8 + _F8 + _F6F4},
    **{("m16n8k64", t): (2, 2, "9.7.14.6.2.7") for t in _I4},
    **{("m16n8k128", t): (4, 4, "9.7.14.6.2.8") for t in _I4 + ("e2m1",)},
}

#: Accumulator types per shape (§9.7.14.5.14 syntax, and the C/D tables of §9.7.14.5.1-13).
ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "m8n8k4": ("f16", "f32", "f64"),
    "m8n8k16": ("s32",),
    "m8n8k32": ("s32",),
    "m8n8k128": ("s32",),
    "m16n8k4": ("f32", "f64"),
    "m16n8k8": ("f16", "f32", "f64"),
    "m16n8k16": ("f16", "f32", "s32", "f64"),
    "m16n8k32": ("f16", "f32", "s32"),
    "m16n8k64": ("f16", "f32", "s32"),
    "m16n8k128": ("f32", "s32"),
    "m16n8k256": ("s32",),
}


def fragment_registers(shape: str, operand: str, element_type: str, *, sparse: bool = False) -> tuple[int, int]:
    """(registers per lane, bits per register) of ``operand`` ("a", "b", "c", "d") of the mma (or
    mma.sp, for ``sparse``) of ``shape`` with elements of ``element_type``, as the fragment tables
    of §9.7.14.5.1-13 and §9.7.14.6.2 list them ("a vector expression containing four .b32
    registers", ...). Raises :class:`~ptxspec.spec.errors.OperandError` for a combination that no
    table lists."""
    register_bits = 64 if element_type == "f64" else 32
    m, n, k = parse_shape(shape)
    where = " (mma.sp)" if sparse else ""
    if operand in ("c", "d"):
        if element_type not in ACCUMULATORS.get(shape, ()):
            raise OperandError(f"no {operand.upper()} fragment of .{element_type} for {shape}{where}", section="9.7.14.5")
        if shape == "m8n8k4" and element_type in ("f16", "f32"):
            # §9.7.14.5.1: ".f16: four .f16x2 registers"; ".f32: eight .f32 registers".
            return (4 if element_type == "f16" else 8), 32
        per = register_bits // ELEMENT_BITS[element_type]
        return m * n // (WARP * per), register_bits
    if operand not in ("a", "b"):
        raise OperandError(f"no matrix operand {operand!r} (expected 'a', 'b', 'c' or 'd')", section="9.7.14.5")
    if shape == "m8n8k4" and element_type == "f16" and not sparse:
        return 2, 32  # "two .f16x2 registers"
    table = SPARSE_AB if sparse else DENSE_AB
    if (shape, element_type) not in table:
        raise OperandError(f"no {operand.upper()} fragment of .{element_type} for {shape}{where}", section="9.7.14.6.2" if sparse else "9.7.14.5")
    a, b, _ = table[(shape, element_type)]
    return (a if operand == "a" else b), register_bits


# ---------------------------------------------------------------------------------------------
# Operands: vectors sized by the fragment layouts
# ---------------------------------------------------------------------------------------------


def register_type(element_type: str) -> str:
    """The register type of a fragment register: .f32/.s32/.f64 elements one per register, every
    packed fragment (.f16x2, four .s8, eight .s4, thirty-two .b1, ...) a .b32 (§9.7.14.5: "a vector
    expression of two .f16x2 registers", "of .b32 registers, each containing four .s8 elements")."""
    return {"f32": "f32", "s32": "s32", "f64": "f64"}.get(element_type, "b32")


def _vector(name: str, count: int, type_name: str, destination: bool = False) -> tuple[Operand, ...]:
    return tuple(Operand(f"{name}.{i}", type_name, destination) for i in range(count))


def mma_operands(form: Form) -> tuple[Operand, ...]:
    """``d, a, b, c`` (and ``e, f`` for mma.sp; then ``scale-a-data, {byte-id-a, thread-id-a},
    scale-b-data, {byte-id-b, thread-id-b}`` with ``.block_scale``), each fragment a vector of the
    registers its layout has."""
    shape, sparse = form["shape"], form.get("spvariant") is not None
    count = {}
    for operand, slot in (("d", "dtype"), ("a", "atype"), ("b", "btype"), ("c", "ctype")):
        count[operand] = fragment_registers(shape, operand, form[slot], sparse=sparse)[0]
    out = _vector("d", count["d"], register_type(form["dtype"]), True)
    out += _vector("a", count["a"], register_type(form["atype"]))
    out += _vector("b", count["b"], register_type(form["btype"]))
    out += _vector("c", count["c"], register_type(form["ctype"]))
    if sparse:
        out += (Operand("e", "b32"), Operand("f", "b32"))
    if "block_scale" in form:
        out += (Operand("scale_a_data", "b32"), Operand("id_a.byte", "u16"), Operand("id_a.thread", "u16"))
        out += (Operand("scale_b_data", "b32"), Operand("id_b.byte", "u16"), Operand("id_b.thread", "u16"))
    return out


# ---------------------------------------------------------------------------------------------
# Rules shared by the mma blocks
# ---------------------------------------------------------------------------------------------


def _shapes(shapes: dict[str, tuple[str, ...]] | tuple[str, ...], block: str, section: str, type_slot: str = "atype") -> Rule:
    """The block's ``.shape = {...}``: a dict from the A type to its shapes, or one tuple."""

    def allowed(form: Form) -> tuple[str, ...]:
        return shapes[form[type_slot]] if isinstance(shapes, dict) else shapes

    return Rule(
        lambda f: f["shape"] not in allowed(f),
        lambda f: f"shape .{f['shape']} is not a shape of {block} with .{f[type_slot]} (.shape = {{{', '.join('.' + s for s in allowed(f))}}})",
        section,
    )


def _row_col(section: str, unless: Callable[[Form], bool] = lambda f: False) -> Rule:
    """Every syntax line but ``m8n8k4 .f16`` writes ``.row.col``."""
    return Rule(
        lambda f: not unless(f) and (f["alayout"], f["blayout"]) != ("row", "col"),
        lambda f: (
            f'layouts .{f["alayout"]}.{f["blayout"]}: this form\'s syntax line is "...{f["shape"]}.row.col..." (only mma.m8n8k4 with .f16 has .alayout/.blayout)'
        ),
        section,
    )


def _same(slot1: str, slot2: str, when: Callable[[Form], bool], why: str, section: str) -> Rule:
    return Rule(
        lambda f: when(f) and f[slot1] != f[slot2],
        lambda f: f".{slot1[0]}type .{f[slot1]} differs from .{slot2[0]}type .{f[slot2]}: {why}",
        section,
    )


# ---------------------------------------------------------------------------------------------
# §9.7.14.5.14 mma
# ---------------------------------------------------------------------------------------------


def _f16_target(form: Form) -> Target:
    """ "mma with .f16 floating point type with shape .m8n8k4 introduced in PTX ISA version 6.4",
    "requires sm_70"; ".m16n8k8: PTX ISA 6.5, sm_75"; ".m16n8k16: PTX ISA 7.0, sm_80"."""
    return {"m8n8k4": _target((6, 4), 70), "m16n8k8": _target((6, 5), 75)}.get(form["shape"], _target((7, 0), 80))


MMA_F16 = Family(
    opcode="mma",
    key="mma.f16",
    section=MMA,
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f16", "f32"), ("f16",), ("f16",), ("f16", "f32"))),
    operands=mma_operands,
    rules=(
        _shapes(("m8n8k4", "m16n8k8", "m16n8k16"), "the half-precision mma", MMA),
        _row_col(MMA, unless=lambda f: f["shape"] == "m8n8k4"),
        # "Specific shapes have type restrictions: .m8n8k4: when .ctype is .f32, .dtype must also be .f32."
        Rule(lambda f: f["shape"] == "m8n8k4" and f["ctype"] == "f32" and f["dtype"] != "f32", '".m8n8k4: when .ctype is .f32, .dtype must also be .f32"', MMA),
        # ".m16n8k8: .dtype must be the same as .ctype."
        _same("dtype", "ctype", lambda f: f["shape"] == "m16n8k8", '".m16n8k8: .dtype must be the same as .ctype"', MMA),
    ),
    target=_f16_target,
    summary="Warp-level matrix multiply-accumulate on .f16 inputs.",
)


MMA_ALT = Family(
    opcode="mma",
    key="mma.alt",
    section=MMA,
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f32",), ("bf16", "tf32"), ("bf16", "tf32"), ("f32",))),
    operands=mma_operands,
    rules=(
        _shapes({"tf32": ("m16n8k4", "m16n8k8"), "bf16": ("m16n8k8", "m16n8k16")}, "the alternate floating-point mma", MMA),
        _row_col(MMA),
        # ".m16n8k8: .atype must be the same as .btype"; the other lines write .tf32.tf32 / .bf16.bf16.
        _same("atype", "btype", lambda f: True, '".atype must be the same as .btype" (the other lines write .tf32.tf32 and .bf16.bf16)', MMA),
    ),
    # "Introduced in PTX ISA 7.0 ... .bf16 with .m16n8k8/.m16n8k16, .tf32 with .m16n8k4/.m16n8k8"; "requires sm_80".
    target=_target((7, 0), 80),
    summary="Warp-level matrix multiply-accumulate on .bf16 and .tf32 inputs.",
)


def _f8_target(form: Form) -> Target:
    """ "Support for .e4m3 and .e5m2 alternate floating point type mma operation introduced in PTX
    ISA version 8.4"; "support for shape .m16n8k16 and .f16 dtype/ctype with .e4m3/.e5m2 ...
    introduced in PTX ISA version 8.7"; ".e4m3 and .e5m2 ... requires sm_89 or higher"."""
    if form["shape"] == "m16n8k16" or "f16" in (form["dtype"], form["ctype"]):
        return _target((8, 7), 89)
    return _target((8, 4), 89)


MMA_F8 = Family(
    opcode="mma",
    key="mma.f8",
    section=MMA,
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f16", "f32"), F8, F8, ("f16", "f32"))),
    operands=mma_operands,
    rules=(_shapes(("m16n8k16", "m16n8k32"), "the .e4m3/.e5m2 mma", MMA), _row_col(MMA)),
    target=_f8_target,
    summary="Warp-level matrix multiply-accumulate on .e4m3/.e5m2 inputs.",
)

KIND_F8F6F4 = Slot("kind", ("kind::f8f6f4",), required=True)

MMA_F8F6F4 = Family(
    opcode="mma",
    key="mma.f8f6f4",
    section=MMA,
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, KIND_F8F6F4, *_types(("f16", "f32"), F8F6F4, F8F6F4, ("f16", "f32"))),
    operands=mma_operands,
    rules=(_shapes(("m16n8k32",), "mma.kind::f8f6f4", MMA), _row_col(MMA)),
    # "Support for .e3m2, .e2m3, .e2m1 ... introduced in PTX ISA 8.7"; ".kind ... requires sm_120a".
    target=on((8, 7), "sm_120a"),
    summary="Warp-level matrix multiply-accumulate on fp8/fp6/fp4 inputs (.kind::f8f6f4).",
)


#: Table 35, "valid combinations of .scale_vec_size and .kind": kind -> (A/B types, {stype: scale_vec}).
#: The default .scale_vec_size: "for mma.kind::mxf4, when .scale_vec_size is not specified it
#: defaults to 2X; ... for .kind::mxf8f6f4 it defaults to 1X; for .kind::mxf4nvf4 a valid
#: .scale_vec_size must be given".
BLOCK_SCALE_KINDS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]], str | None]] = {
    "kind::mxf8f6f4": (F8F6F4, {"ue8m0": ("scale_vec::1X",)}, "scale_vec::1X"),
    "kind::mxf4": (("e2m1",), {"ue8m0": ("scale_vec::2X",)}, "scale_vec::2X"),
    "kind::mxf4nvf4": (("e2m1",), {"ue8m0": ("scale_vec::2X",), "ue4m3": ("scale_vec::4X",)}, None),
}


def scale_vec_size(form: Form) -> str | None:
    """The form's .scale_vec_size, the default filled in (None for mxf4nvf4 without one)."""
    return form.get("scale_vec") or BLOCK_SCALE_KINDS[form["kind"]][2]


def _block_scale_rules(section: str, sparse: bool) -> tuple[Rule, ...]:
    shapes = {
        "kind::mxf8f6f4": "m16n8k64" if sparse else "m16n8k32",
        "kind::mxf4": "m16n8k128" if sparse else "m16n8k64",
        "kind::mxf4nvf4": "m16n8k128" if sparse else "m16n8k64",
    }
    return (
        Rule(lambda f: f["shape"] != shapes[f["kind"]], lambda f: f"shape .{f['shape']}: the .{f['kind']} syntax line has .{shapes[f['kind']]}", section),
        Rule(
            lambda f: f["atype"] not in BLOCK_SCALE_KINDS[f["kind"]][0] or f["btype"] not in BLOCK_SCALE_KINDS[f["kind"]][0],
            lambda f: f".{f['kind']} takes A and B of {', '.join('.' + t for t in BLOCK_SCALE_KINDS[f['kind']][0])} (Table 35)",
            section,
        ),
        Rule(
            lambda f: f["stype"] not in BLOCK_SCALE_KINDS[f["kind"]][1],
            lambda f: f".stype .{f['stype']} is not valid with .{f['kind']} (Table 35: {', '.join('.' + s for s in BLOCK_SCALE_KINDS[f['kind']][1])})",
            section,
        ),
        Rule(lambda f: f["kind"] == "kind::mxf4nvf4" and f.get("scale_vec") is None, '"for .kind::mxf4nvf4 a valid .scale_vec_size must be provided"', section),
        Rule(
            lambda f: (
                f["stype"] in BLOCK_SCALE_KINDS[f["kind"]][1]
                and scale_vec_size(f) is not None
                and scale_vec_size(f) not in BLOCK_SCALE_KINDS[f["kind"]][1][f["stype"]]
            ),
            lambda f: f".{scale_vec_size(f)} is not valid with .{f['kind']} and .{f['stype']} (Table 35: {BLOCK_SCALE_KINDS[f['kind']][1][f['stype']][0]})",
            section,
        ),
        _row_col(section),
    )


def _block_scale_slots() -> tuple[Slot, ...]:
    return (
        Slot("kind", tuple(BLOCK_SCALE_KINDS), required=True),
        Slot("block_scale", ("block_scale",), required=True),
        Slot("scale_vec", ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X")),
        *_types(("f32",), F8F6F4, F8F6F4, ("f32",)),
        Slot("stype", ("ue8m0", "ue4m3"), required=True),
    )


MMA_BLOCK_SCALE = Family(
    opcode="mma",
    key="mma.block_scale",
    section=MMA,
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_block_scale_slots()),
    operands=mma_operands,
    rules=_block_scale_rules(MMA, sparse=False),
    # "Support for .kind, .block_scale, .scale_vec_size qualifiers introduced in PTX ISA 8.7", "requires sm_120a".
    target=on((8, 7), "sm_120a"),
    summary="Warp-level matrix multiply-accumulate with block scaling (§9.7.14.3).",
)


def _f64_target(form: Form) -> Target:
    """ ".f64 with shape .m8n8k4 introduced in PTX ISA 7.0", "requires sm_80"; ".f64 with shapes
    .m16n8k4, .m16n8k8, .m16n8k16 introduced in PTX ISA 7.8", "requires sm_90"."""
    return _target((7, 0), 80) if form["shape"] == "m8n8k4" else _target((7, 8), 90)


MMA_F64 = Family(
    opcode="mma",
    key="mma.f64",
    section=MMA,
    # "mma.sync.aligned.shape.row.col.f64.f64.f64.f64 d, a, b, c; .shape = {.m8n84, .m16n8k4,
    # .m16n8k8, .m16n8k16}" (".m8n84" is the manual's misprint of .m8n8k4). "Precision and
    # rounding, .f64: ... The supported rounding modifiers are .rn (the default), .rz, .rm, .rp",
    # and the examples write "...f64.f64.f64.f64.rn": an optional rounding qualifier.
    slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f64",), ("f64",), ("f64",), ("f64",)), Slot("rnd", ("rn", "rz", "rm", "rp"))),
    operands=mma_operands,
    rules=(_shapes(("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"), "the .f64 mma", MMA), _row_col(MMA)),
    target=_f64_target,
    summary="Warp-level matrix multiply-accumulate on .f64 inputs.",
)


def _integer_target(small: str) -> Callable[[Form], Target]:
    """ ".u8/.s8 with .m8n8k16 (.u4/.s4 with .m8n8k32) introduced in PTX ISA 6.5", "requires
    sm_75"; the m16n8 shapes "introduced in PTX ISA 7.0", "require sm_80"."""
    return lambda form: _target((6, 5), 75) if form["shape"] == small else _target((7, 0), 80)


def _integer(key: str, types: tuple[str, ...], shapes: tuple[str, ...], summary: str) -> Family:
    return Family(
        opcode="mma",
        key=key,
        section=MMA,
        slots=(SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, SATFINITE, *_types(("s32",), types, types, ("s32",))),
        operands=mma_operands,
        rules=(_shapes(shapes, f"the .{types[1]}/.{types[0]} mma", MMA), _row_col(MMA)),
        target=_integer_target(shapes[0]),
        summary=summary,
    )


MMA_I8 = _integer("mma.i8", I8, ("m8n8k16", "m16n8k16", "m16n8k32"), "Warp-level matrix multiply-accumulate on 8-bit integers.")
MMA_I4 = _integer("mma.i4", I4, ("m8n8k32", "m16n8k32", "m16n8k64"), "Warp-level matrix multiply-accumulate on 4-bit integers.")


def _b1_target(form: Form) -> Target:
    """ ".b1 with .m8n8k128 ... requires sm_75", ".m16n8k128/.m16n8k256 ... sm_80", all "introduced
    in PTX ISA 7.0"; "support for .and in single-bit mma introduced in PTX ISA 7.1", ".and ...
    requires sm_80"."""
    if form["bitOp"] == "and":
        return _target((7, 1), 80)
    return _target((7, 0), 75) if form["shape"] == "m8n8k128" else _target((7, 0), 80)


MMA_B1 = Family(
    opcode="mma",
    key="mma.b1",
    section=MMA,
    slots=(
        SYNC,
        ALIGNED,
        SHAPE,
        ALAYOUT,
        BLAYOUT,
        *_types(("s32",), ("b1",), ("b1",), ("s32",)),
        Slot("bitOp", ("xor", "and"), required=True),
        Slot("popc", ("popc",), required=True),
    ),
    operands=mma_operands,
    rules=(_shapes(("m8n8k128", "m16n8k128", "m16n8k256"), "the single-bit mma", MMA), _row_col(MMA)),
    target=_b1_target,
    summary="Warp-level single-bit matrix multiply-accumulate (.xor/.and then .popc).",
)


# ---------------------------------------------------------------------------------------------
# §9.7.14.6.3 mma.sp / mma.sp::ordered_metadata
# ---------------------------------------------------------------------------------------------


def _ordered(form: Form) -> bool:
    return form["spvariant"] == "sp::ordered_metadata"


def _sp_target(base: Target) -> Callable[[Form], Target]:
    """ "Introduced in PTX ISA version 7.1", "requires sm_80"; "mma.sp::ordered_metadata introduced
    in PTX ISA version 8.5", "requires sm_80"."""
    return lambda form: Target(max(base.ptx, (8, 5)), base.sm, base.suffix) if _ordered(form) else base


def _only_ordered(section: str) -> Rule:
    return Rule(lambda f: not _ordered(f), 'this syntax line has "mma.sp::ordered_metadata" only (.spvariant = {.sp::ordered_metadata})', section)


def _sparse_dtype_ctype(section: str) -> Rule:
    """ "For shapes .m16n8k16 and .m16n8k32, .dtype must be the same as .ctype.\""""
    return _same(
        "dtype", "ctype", lambda f: f["shape"] in ("m16n8k16", "m16n8k32"), '"for shapes .m16n8k16 and .m16n8k32, .dtype must be the same as .ctype"', section
    )


MMA_SP_F16 = Family(
    opcode="mma",
    key="mma.sp.f16",
    section=MMA_SP,
    slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f16", "f32"), ("f16",), ("f16",), ("f16", "f32"))),
    operands=mma_operands,
    rules=(_shapes(("m16n8k16", "m16n8k32"), "the half-precision mma.sp", MMA_SP), _row_col(MMA_SP), _sparse_dtype_ctype(MMA_SP)),
    target=_sp_target(_target((7, 1), 80)),
    summary="Warp-level sparse-A matrix multiply-accumulate on .f16 inputs.",
)

MMA_SP_ALT = Family(
    opcode="mma",
    key="mma.sp.alt",
    section=MMA_SP,
    slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f32",), ("bf16", "tf32"), ("bf16", "tf32"), ("f32",))),
    operands=mma_operands,
    rules=(
        _shapes({"bf16": ("m16n8k16", "m16n8k32"), "tf32": ("m16n8k8", "m16n8k16")}, "the alternate floating-point mma.sp", MMA_SP),
        _row_col(MMA_SP),
        _same("atype", "btype", lambda f: True, "the syntax lines write .bf16.bf16 and .tf32.tf32", MMA_SP),
    ),
    target=_sp_target(_target((7, 1), 80)),
    summary="Warp-level sparse-A matrix multiply-accumulate on .bf16/.tf32 inputs.",
)


def _sp_f8_target(form: Form) -> Target | Targets:
    """ ".e4m3 and .e5m2 ... introduced in PTX ISA version 8.4", "requires sm_89"; the
    ordered-metadata variant came with PTX ISA 8.5. The .f16 accumulators: "support for shape
    .m16n8k32 and .f16 dtype/ctype with .e4m3/.e5m2 ... introduced in PTX ISA 8.7", "requires
    sm_120a" (the syntax line itself writes .f32 ... .f32; see the module's ambiguity notes)."""
    if "f16" in (form["dtype"], form["ctype"]):
        return on((8, 7), "sm_120a")
    return _target((8, 5) if _ordered(form) else (8, 4), 89)


MMA_SP_F8 = Family(
    opcode="mma",
    key="mma.sp.f8",
    section=MMA_SP,
    slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_types(("f16", "f32"), F8, F8, ("f16", "f32"))),
    operands=mma_operands,
    rules=(_shapes(("m16n8k64",), "the .e4m3/.e5m2 mma.sp", MMA_SP), _row_col(MMA_SP)),
    target=_sp_f8_target,
    summary="Warp-level sparse-A matrix multiply-accumulate on .e4m3/.e5m2 inputs.",
)

MMA_SP_F8F6F4 = Family(
    opcode="mma",
    key="mma.sp.f8f6f4",
    section=MMA_SP,
    slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, KIND_F8F6F4, *_types(("f16", "f32"), F8F6F4, F8F6F4, ("f16", "f32"))),
    operands=mma_operands,
    rules=(_only_ordered(MMA_SP), _shapes(("m16n8k64",), "mma.sp::ordered_metadata.kind::f8f6f4", MMA_SP), _row_col(MMA_SP)),
    target=on((8, 7), "sm_120a"),
    summary="Warp-level sparse-A matrix multiply-accumulate on fp8/fp6/fp4 inputs (.kind::f8f6f4).",
)

MMA_SP_BLOCK_SCALE = Family(
    opcode="mma",
    key="mma.sp.block_scale",
    section=MMA_SP,
    slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, *_block_scale_slots()),
    operands=mma_operands,
    rules=(_only_ordered(MMA_SP), *_block_scale_rules(MMA_SP, sparse=True)),
    target=on((8, 7), "sm_120a"),
    summary="Warp-level sparse-A matrix multiply-accumulate with block scaling.",
)


def _sp_integer(key: str, types: tuple[str, ...], shapes: tuple[str, ...]) -> Family:
    return Family(
        opcode="mma",
        key=key,
        section=MMA_SP,
        slots=(SPVARIANT, SYNC, ALIGNED, SHAPE, ALAYOUT, BLAYOUT, SATFINITE, *_types(("s32",), types, types, ("s32",))),
        operands=mma_operands,
        rules=(_shapes(shapes, f"the .{types[1]}/.{types[0]} mma.sp", MMA_SP), _row_col(MMA_SP)),
        target=_sp_target(_target((7, 1), 80)),
        summary=f"Warp-level sparse-A matrix multiply-accumulate on .{types[1]}/.{types[0]}.",
    )


MMA_SP_I8 = _sp_integer("mma.sp.i8", I8, ("m16n8k32", "m16n8k64"))
MMA_SP_I4 = _sp_integer("mma.sp.i4", I4, ("m16n8k64", "m16n8k128"))


# ---------------------------------------------------------------------------------------------
# §9.7.14.5.15 ldmatrix, §9.7.14.5.16 stmatrix, §9.7.14.5.17 movmatrix
# ---------------------------------------------------------------------------------------------

NUM = Slot("num", ("x1", "x2", "x4"), required=True)
TRANS = Slot("trans", ("trans",))
SS = Slot("ss", ("shared", "shared::cta"))


def matrices(form: Form) -> int:
    """ ".num: the values .x1, .x2 and .x4 indicate one, two or four matrices"."""
    return {"x1": 1, "x2": 2, "x4": 4}[form["num"]]


def ldmatrix_registers(form: Form) -> int:
    """ "The destination operand r is a brace-enclosed vector expression of 1, 2 or 4 32-bit
    registers as per the value of .num"; "for the 16x16 matrix shape, two destination registers
    r0 and r1 of type .b32 must be specified" (per matrix); "for the 8x16 matrix shape, one
    destination register r0 of type .b32"."""
    return matrices(form) * (2 if form["shape"] == "m16n16" else 1)


def _ldmatrix_operands(form: Form) -> tuple[Operand, ...]:
    return (*_vector("r", ldmatrix_registers(form), "b32", True), Operand("p", "b64"))


def _cta_target(base: Target | Targets) -> Callable[[Form], Target | Targets]:
    """ "Support for ::cta sub-qualifier introduced in PTX ISA version 7.8"."""

    def target(form: Form) -> Target | Targets:
        if form.get("ss") != "shared::cta":
            return base
        raised = tuple(Target(max(t.ptx, (7, 8)), t.sm, t.suffix) for t in base.alternatives)
        return raised[0] if len(raised) == 1 else Targets(raised)

    return target


def _ldmatrix_target(form: Form) -> Target | Targets:
    """ "Introduced in PTX ISA version 6.5", "requires sm_75"; ".m16n16, .m8n16 shapes", "the .b8
    type" and ".src_fmt, .dst_fmt" "introduced in PTX ISA 8.6", "supported on sm_100a, sm_101a,
    sm_120a"."""
    if form["shape"] != "m8n8" or form.get("type") == "b8" or form.get("src_fmt") is not None:
        return _cta_target(on((8, 6), *BLACKWELL))(form)
    return _cta_target(_target((6, 5), 75))(form)


def _m16n16_rules(section: str) -> tuple[Rule, ...]:
    return (
        Rule(lambda f: f["shape"] == "m16n16" and "trans" not in f, '".trans is mandatory for the 16x16 matrix"', section),
        Rule(lambda f: f["shape"] == "m16n16" and f["num"] == "x4", '"when .shape is .m16n16, only .x1 and .x2 are valid values for .num"', section),
    )


LDMATRIX_FAMILY = Family(
    opcode="ldmatrix",
    key="ldmatrix",
    section=LDMATRIX,
    slots=(SYNC, ALIGNED, Slot("shape", ("m8n8", "m16n16"), required=True), NUM, TRANS, SS, Slot("type", ("b16", "b8"), required=True)),
    operands=_ldmatrix_operands,
    rules=(
        *_m16n16_rules(LDMATRIX),
        # The shape table: ".m8n8: 8x8, 16-bit; .m16n16: 16x16, 8-bit, 6-bit or 4-bit".
        Rule(
            lambda f: (f["shape"] == "m8n8") != (f["type"] == "b16"),
            lambda f: f".{f['shape']} with .{f['type']}: the shape table gives .m8n8 16-bit elements and .m16n16 8-bit ones",
            LDMATRIX,
        ),
    ),
    target=_ldmatrix_target,
    summary="Collectively load 8x8 (or 16x16) matrices from shared memory into mma fragments.",
)

LDMATRIX_FMT = Family(
    opcode="ldmatrix",
    key="ldmatrix.fmt",
    section=LDMATRIX,
    # "ldmatrix.sync.aligned.m8n16.num{.ss}.dst_fmt.src_fmt r, [p];
    #  ldmatrix.sync.aligned.m16n16.num.trans{.ss}.dst_fmt.src_fmt r, [p];"
    slots=(
        SYNC,
        ALIGNED,
        Slot("shape", ("m8n16", "m16n16"), required=True),
        NUM,
        TRANS,
        SS,
        Slot("dst_fmt", ("b8x16",), required=True),
        Slot("src_fmt", ("b6x16_p32", "b4x16_p64"), required=True),
    ),
    operands=_ldmatrix_operands,
    rules=(
        *_m16n16_rules(LDMATRIX),
        forbid(
            "trans",
            lambda f: f["shape"] == "m8n16",
            '`.trans` is not allowed with .m8n16: its syntax line is "ldmatrix.sync.aligned.m8n16.num{.ss}.dst_fmt.src_fmt"',
            LDMATRIX,
        ),
    ),
    target=_ldmatrix_target,
    summary="Collectively load 6-bit/4-bit matrices from shared memory, unpacked to 8-bit elements.",
)


def _stmatrix_target(form: Form) -> Target | Targets:
    """ "Introduced in PTX ISA version 7.8", "requires sm_90"; ".m16n8" and ".b8" "introduced in PTX
    ISA 8.6", "supported on sm_100a, sm_101a, sm_120a"."""
    if form["shape"] == "m16n8" or form["type"] == "b8":
        return on((8, 6), *BLACKWELL)
    return _target((7, 8), 90)


STMATRIX_FAMILY = Family(
    opcode="stmatrix",
    key="stmatrix",
    section=STMATRIX,
    slots=(SYNC, ALIGNED, Slot("shape", ("m8n8", "m16n8"), required=True), NUM, TRANS, SS, Slot("type", ("b16", "b8"), required=True)),
    operands=lambda form: (Operand("p", "b64"), *_vector("r", matrices(form), "b32")),
    rules=(
        Rule(lambda f: f["shape"] == "m16n8" and f["type"] != "b8", '"the .m16n8 shape is valid only for .b8"', STMATRIX),
        # "Each matrix element holds 16-bit or 8-bit data as indicated by the .type qualifier";
        # the 8x8 matrix is the one "with 16-bit elements" (figure 106).
        Rule(
            lambda f: f["shape"] == "m8n8" and f["type"] != "b16",
            '".m8n8" stores 8x8 matrices of 16-bit elements (figure 106); 8-bit elements are the .m16n8 shape\'s',
            STMATRIX,
        ),
        Rule(lambda f: f["shape"] == "m16n8" and "trans" not in f, '".trans is mandatory for the 16x8 matrix"', STMATRIX),
    ),
    target=_stmatrix_target,
    summary="Collectively store 8x8 (or 16x8) matrices from mma fragments to shared memory.",
)

MOVMATRIX_FAMILY = Family(
    opcode="movmatrix",
    key="movmatrix",
    section=MOVMATRIX,
    slots=(SYNC, ALIGNED, Slot("shape", ("m8n8",), required=True), Slot("trans", ("trans",), required=True), Slot("type", ("b16",), required=True)),
    operands=lambda form: (Operand("d", "b32", True), Operand("a", "b32")),
    # "Introduced in PTX ISA version 7.8", "requires sm_75 or higher".
    target=_target((7, 8), 75),
    summary="Transpose an 8x8 matrix of 16-bit elements across the registers of a warp.",
)


FAMILIES = (
    MMA_F16,
    MMA_ALT,
    MMA_F8,
    MMA_F8F6F4,
    MMA_BLOCK_SCALE,
    MMA_F64,
    MMA_I8,
    MMA_I4,
    MMA_B1,
    MMA_SP_F16,
    MMA_SP_ALT,
    MMA_SP_F8,
    MMA_SP_F8F6F4,
    MMA_SP_BLOCK_SCALE,
    MMA_SP_I8,
    MMA_SP_I4,
    LDMATRIX_FAMILY,
    LDMATRIX_FMT,
    STMATRIX_FAMILY,
    MOVMATRIX_FAMILY,
)


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` of this chapter. A text that is a
    legal form plus one qualifier its syntax line does not take
    (``mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32``) is refused naming that
    qualifier (:func:`superfluous_qualifier`), not the token where the nearest family -- here the
    integer one, which takes ``.satfinite`` -- stopped matching."""
    return superfluous_qualifier(catalogue, text)


def superfluous_qualifier(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """(message, section) when the qualifiers of ``text`` match no family but do once exactly one
    of them is dropped: that qualifier is one the form does not take. The syntax line of each
    family lists its qualifiers ("mma.sync.aligned.shape.alayout.blayout.dtype.f16.f16.ctype" has
    no .satfinite, §9.7.14.5.14), so the message names the qualifier, the form it was added to,
    and the forms whose syntax lines do list it. None when the qualifiers match a family (a rule
    or the operands refused the form), when no single qualifier explains the refusal, or when the
    qualifier is repeated (the catalogue says so already)."""
    head = text.split()[0] if text.split() else ""
    opcode, *tokens = head.split(".")
    families = catalogue.families(opcode)
    if not families or any(isinstance(_match(f, tokens), Form) for f in families):
        return None
    found: dict[int, tuple[Family, Form]] = {}
    for i, token in enumerate(tokens):
        rest = tokens[:i] + tokens[i + 1 :]
        if token in rest:
            continue
        for family in families:
            form = _match(family, rest)
            # Only a qualifier that the family's syntax line lacks is to blame (not a second .row).
            if isinstance(form, Form) and all(token not in slot.token_set for slot in family.slots):
                found.setdefault(i, (family, form))
                break
    if len(found) != 1:
        return None
    ((i, (family, form)),) = found.items()
    token = tokens[i]
    sparse = any(s.name == "spvariant" for s in family.slots)
    taking = [f.syntax() for f in families if any(token in s.token_set for s in f.slots) and any(s.name == "spvariant" for s in f.slots) == sparse]
    where_listed = f"; the forms with .{token}: {' | '.join(taking)}" if taking else ""
    return f"qualifier .{token} is not allowed with {form.text}: its syntax line {family.syntax()} has no .{token}{where_listed}", family.section
