"""Catalogue entries for §9.7.16, the 5th-generation TensorCore (tcgen05) instructions:
``tcgen05.alloc``/``.dealloc``/``.relinquish_alloc_permit`` (§9.7.16.7.1), ``tcgen05.ld``
(§9.7.16.8.3), ``tcgen05.st`` (§9.7.16.8.4), ``tcgen05.wait`` (§9.7.16.8.5), ``tcgen05.cp``
(§9.7.16.9.2), ``tcgen05.shift`` (§9.7.16.9.3), ``tcgen05.mma``, ``tcgen05.mma.sp``,
``tcgen05.mma.ws`` and ``tcgen05.mma.ws.sp`` (§9.7.16.10.9.1-4), ``tcgen05.fence``
(§9.7.16.11.1) and ``tcgen05.commit`` (§9.7.16.12.1), as the English seed ``000_…`` gives them
(and the pages ``002_…``, tcgen05.mma.sp, and ``004_…``, tcgen05.mma.ws): 44 families, 16 of
allocation, data movement and synchronisation with 374 legal forms, 28 of tcgen05.mma with 1,568.

One family per syntax line of the manual; the operation (``alloc``, ``ld``, ``wait::ld``, ...) is
the first qualifier of ``tcgen05``:

====================================  ===================================================================
key                                   syntax
====================================  ===================================================================
``tcgen05.alloc``                     ``tcgen05.alloc.cta_group.sync.aligned{.shared::cta}.b32 [dst], nCols``
``tcgen05.dealloc``                   ``tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols``
``tcgen05.relinquish_alloc_permit``   ``tcgen05.relinquish_alloc_permit.cta_group.sync.aligned``
``tcgen05.ld``                        ``tcgen05.ld.sync.aligned.shape1.num{.pack}.b32 r, [taddr]``
``tcgen05.ld.16x32bx2``               ``tcgen05.ld.sync.aligned.shape2.num{.pack}.b32 r, [taddr], immHalfSplitoff``
``tcgen05.ld.red.f32``                ``tcgen05.ld.red.sync.aligned.shape3.num.redOp{.abs}{.NaN}.f32 r, redval, [taddr]``
``tcgen05.ld.red.f32.16x32bx2``       ``... shape4 ... .f32 r, redval, [taddr], immHalfSplitoff``
``tcgen05.ld.red.int``                ``tcgen05.ld.red.sync.aligned.shape3.num.redOp.type r, redval, [taddr]``
``tcgen05.ld.red.int.16x32bx2``       ``... shape4 ... .type r, redval, [taddr], immHalfSplitoff``
``tcgen05.st``                        ``tcgen05.st.sync.aligned.shape1.num{.unpack}.b32 [taddr], r``
``tcgen05.st.16x32bx2``               ``tcgen05.st.sync.aligned.shape2.num{.unpack}.b32 [taddr], immHalfSplitoff, r``
``tcgen05.wait``                      ``tcgen05.wait_operation.sync.aligned`` (``.wait::ld``, ``.wait::st``)
``tcgen05.cp``                        ``tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc``
``tcgen05.shift``                     ``tcgen05.shift.cta_group.down [taddr]``
``tcgen05.commit``                    ``tcgen05.commit.cta_group.completion_mechanism{.shared::cluster}{.multicast}.b64
                                      [mbar] {, ctaMask}``
``tcgen05.fence``                     ``tcgen05.fence::before_thread_sync``, ``tcgen05.fence::after_thread_sync``
``tcgen05.mma``                       ``tcgen05.mma.cta_group.kind{.collector_usage} [d-tmem], a-desc, b-desc, idesc,
                                      enable-input-d`` (.kind::f16/.tf32/.f8f6f4/.i8)
``tcgen05.mma.a_tmem``                ``tcgen05.mma.cta_group.kind{.ashift}{.collector_usage} [d-tmem], [a-tmem], b-desc,
                                      idesc, enable-input-d``
``... .disable_output_lane``          the same with ``{ disable-output-lane }`` before ``enable-input-d``
``... .scale_input_d``                the same with ``scale-input-d`` after ``enable-input-d`` (.kind::f16/.tf32)
``tcgen05.mma.block_scale(.a_tmem)``  ``tcgen05.mma.cta_group.kind.block_scale{.scale_vectorsize}{.collector_usage}
                                      [d-tmem], a-desc|[a-tmem], b-desc, idesc, [scale-A-tmem], [scale-B-tmem],
                                      enable-input-d`` (.kind::mxf8f6f4/.mxf4/.mxf4nvf4)
``tcgen05.mma.sp...``                 the same ten with ``.sp`` and ``[sp-meta-tmem]`` before ``idesc``
``tcgen05.mma.ws(.a_tmem)``           ``tcgen05.mma.ws.cta_group::1.kind{.collector_usage} [d-tmem], a-desc|[a-tmem],
                                      b-desc, idesc, enable-input-d`` (``.collector::b0..b3::op``)
``... .zero_column_mask``             the same with ``zero-column-mask-desc`` after ``enable-input-d``
``tcgen05.mma.ws.sp...``              the same four with ``.sp`` and ``[sp-meta-tmem]`` before ``idesc``
====================================  ===================================================================

tcgen05.mma's syntax lines give each qualifier list two operand lists -- A in shared memory
through a descriptor (``a-desc``) or in Tensor Memory (``[a-tmem]``) -- and optional operands
(``{ disable-output-lane }``, ``{, scale-input-d}``, ``{, zero-column-mask-desc}``). A form's
operands follow from its family, so each choice is a family of its own (key suffixes ``.a_tmem``,
``.disable_output_lane``, ``.scale_input_d``, ``.zero_column_mask``), the descriptor one without
optional operands first: :func:`parse` without operands returns it, and with operands
(``"tcgen05.mma.cta_group::1.kind::tf32 [d], [a], b, idesc, {m0, m1, m2, m3}, p"``) the family of
that shape. Operands are named as the manual names them, ``-`` written ``_`` (``d_tmem``,
``a_desc``/``a_tmem``, ``b_desc``, ``sp_meta_tmem``, ``idesc``, ``scale_A_tmem``, ``scale_B_tmem``,
``disable_output_lane.0`` ..., ``enable_input_d`` (.pred), ``scale_input_d`` (an immediate in
[0, 15]), ``zero_column_mask_desc``). The shapes (M, N, K) are in the instruction descriptor, not
in the qualifiers, so the catalogue checks only what the qualifiers say: the rules of the syntax
lines (.ashift only with [a-tmem] and not with .collector::a::use/::fill, .ws with .cta_group::1),
of Table 54 (which .scale_vectorsize goes with which .kind; .kind::mxf4nvf4 needs one) and
"scale-input-d is only valid for .kind::tf32 and .kind::f16".

The register vector ``r`` of tcgen05.ld/st has as many .b32 registers as Table 47/48 give for the
``.shape`` and ``.num`` (:func:`registers`); a ``.num`` that the table marks "NA" for the shape is
refused by a rule that names it. ``immHalfSplitoff`` and ``nCols`` may be immediates;
:func:`check_immediates` checks their values.

Targets ("Target ISA Notes"): ``sm_100a`` and ``sm_101a`` from PTX ISA 8.6, ``sm_101a`` "renamed
to sm_110a from PTX ISA version 9.0", and the family-specific ``sm_100f``/``sm_101f`` (``sm_110f``)
"from PTX ISA version 8.8"; ``tcgen05.shift`` on ``sm_100a, sm_101a, sm_103a, sm_110a`` only;
``tcgen05.ld.red`` ("introduced in PTX ISA version 8.8") on ``sm_101a`` (``sm_110a``) and the
``sm_101f``/``sm_103f``/``sm_110f`` families, not on ``sm_100a``. tcgen05.mma (all four): those
of alloc ... commit, but ``.kind::i8`` on ``sm_100a``/``sm_101a``/``sm_110a`` only ("except
.kind::i8"); ``.kind::mxf4nvf4`` from PTX ISA 8.7; ``.block16``/``.block32`` (and ``.kind::mxf4``
without a .scale_vectorsize: "it defaults to .block32") from 8.8 on ``sm_100f``/``sm_110f``;
``.scale_vec::NX`` on the architecture-specific targets (``SCALE_VEC_TARGETS``); scale-input-d on
``sm_100a``, and ``sm_100f`` from 8.8; tcgen05.mma.sp with ``.kind::mxf4``/``.kind::mxf4nvf4`` on
``sm_100a``, ``sm_101a``, ``sm_103a``, ``sm_110a`` only. ptxas 13.0 knows ``sm_101a`` only
as ``sm_110a``.

Where ptxas (CUDA 13.0) and the manual differ the catalogue follows the manual; the differences,
each with the manual's sentence, are ``KNOWN`` in tests/test_tcgen05_catalogue.py, which compares
every legal form and a seeded sample of illegal neighbours with ptxas and with the forms of CUDA's
``cuda::ptx`` headers: ptxas also takes tcgen05.ld/st without ``.aligned`` and ignores
``.b8x16``/``.b6x16_p32``/``.b4x16_p64`` on every tcgen05 instruction but tcgen05.cp; it takes
scale-input-d with ``.kind::i8`` ("only valid for .kind::tf32 and .kind::f16"), and reads
``.kind::mxf8f6f4.block_scale`` without a .scale_vectorsize as ``.block32`` (PTX ISA 8.8), where the
manual gives no default for that kind. The manual's own examples break its syntax lines three times
(``.kind::mxf8f6f4`` without ``.block_scale``, ``.collector::a:fill``, ``.collector::b2:use``);
ptxas refuses the first and the catalogue follows the lines. Two
differences are the shared parser's (:func:`ptxspec.spec.catalogue.parse` places qualifiers by
their tokens, in any order, and orders only the type qualifiers): it also accepts the instruction's
name after other qualifiers (``tcgen05.sync.aligned.ld...``) and the decompression formats reversed
(``.b6x16_p32.b8x16``), which ptxas refuses.

Operand templates with ``[address]`` operands (``"tcgen05.ld... {r0, r1}, [taddr]"``) are read by
this module's :func:`parse` (by their shape, brackets marking :func:`addresses`), not by the catalogue's, which
reads no brackets. :func:`addresses` says which operands the syntax line writes in brackets.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import ADDRESS_OPERANDS, Catalogue, Family, Form, Operand, Rule, Slot, Target, Targets, forbid, split_arch, target_at
from ptxspec.spec.errors import Location, OperandError
from ptxspec.spec.matrix import superfluous_qualifier

CHAPTER = "9.7.16"
ALLOC = "9.7.16.7.1"
LD = "9.7.16.8.3"
ST = "9.7.16.8.4"
WAIT = "9.7.16.8.5"
CP = "9.7.16.9.2"
SHIFT = "9.7.16.9.3"
FENCE = "9.7.16.11.1"
COMMIT = "9.7.16.12.1"
#: §9.7.16.2.3 "Data Movement Shape".
DATA_MOVEMENT_SHAPE = "9.7.16.2.3"

SYNC = Slot("sync", ("sync",), required=True)
ALIGNED = Slot("aligned", ("aligned",), required=True)
#: ".cta_group = { .cta_group::1, .cta_group::2 }".
CTA_GROUP = Slot("cta_group", ("cta_group::1", "cta_group::2"), required=True)
B32 = Slot("type", ("b32",), required=True)


def _operation(word: str) -> Slot:
    """The operation that follows ``tcgen05`` (``alloc``, ``ld``, ...): a required qualifier."""
    return Slot(word, (word,), required=True)


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------

#: The PTX ISA version that introduced the targets that :func:`ptxspec.spec.catalogue.target_at`
#: does not know: "sm_103a", "sm_100f", "sm_101f", "sm_103f" came with PTX ISA 8.8 (the family-
#: specific targets "from PTX ISA version 8.8"), "sm_110a"/"sm_110f" with 9.0 ("renamed to sm_110a
#: from PTX ISA version 9.0"). ptxas 13.0 agrees: it refuses ``.target sm_103a`` below 8.8 and
#: ``sm_110a`` below 9.0.
INTRODUCED = {(100, "f"): (8, 8), (101, "f"): (8, 8), (103, "a"): (8, 8), (103, "f"): (8, 8), (110, "a"): (9, 0), (110, "f"): (9, 0)}


def _on(ptx: tuple[int, int], *archs: str) -> Targets:
    """ "Introduced in PTX ISA version ``ptx``", "supported on ``archs``": one alternative per
    target, at the later of ``ptx`` and the version that introduced the target."""
    alternatives = []
    for arch in archs:
        sm, suffix = split_arch(arch)
        introduced = INTRODUCED.get((sm, suffix))
        alternatives.append(Target(max(ptx, introduced), sm, suffix) if introduced else target_at(ptx, sm, suffix))
    return Targets(tuple(alternatives))


#: The Target ISA Notes of alloc, ld, st, wait, cp, fence and commit: "Supported on following
#: architectures: sm_100a; sm_101a (Renamed to sm_110a from PTX ISA version 9.0); And is supported
#: on following family-specific architectures from PTX ISA version 8.8: sm_100f or higher in the
#: same family; sm_101f or higher in the same family (Renamed to sm_110f from PTX ISA version 9.0);
#: sm_110f or higher in the same family", with "Introduced in PTX ISA version 8.6".
TCGEN05 = _on((8, 6), "sm_100a", "sm_101a", "sm_110a") | _on((8, 8), "sm_100f", "sm_101f", "sm_110f")

#: tcgen05.shift: "Supported on following architectures: sm_100a; sm_101a (Renamed to sm_110a from
#: PTX ISA version 9.0); sm_103a; sm_110a" -- no family-specific target.
SHIFT_TARGETS = _on((8, 6), "sm_100a", "sm_101a", "sm_103a", "sm_110a")

#: "tcgen05.ld.red is introduced in PTX ISA version 8.8"; "tcgen05.ld.red is supported on following
#: architectures: sm_101a (Renamed to sm_110a from PTX ISA version 9.0); And is supported on
#: following family-specific architectures from PTX ISA version 8.8: sm_101f or higher in the same
#: family (Renamed to sm_110f from PTX ISA version 9.0); sm_103f or higher in the same family;
#: sm_110f or higher in the same family".
LD_RED_TARGETS = _on((8, 8), "sm_101a", "sm_110a", "sm_101f", "sm_103f", "sm_110f")


# ---------------------------------------------------------------------------------------------
# §9.7.16.7.1 tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit
# ---------------------------------------------------------------------------------------------


def _alloc_operands(form: Form) -> tuple[Operand, ...]:
    """``[dst], nCols``: dst is an address in shared memory ("If no state space is specified then
    Generic Addressing is used": a 64-bit generic address; with ``.shared::cta`` a 32-bit shared
    address, as the CUDA headers pass it), nCols "the unsigned 32-bit operand"."""
    return (Operand("dst", "b32" if form.get("ss") else "b64"), Operand("nCols", "u32"))


ALLOC_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.alloc",
    section=ALLOC,
    slots=(_operation("alloc"), CTA_GROUP, SYNC, ALIGNED, Slot("ss", ("shared::cta",)), B32),
    operands=_alloc_operands,
    target=TCGEN05,
    summary="Allocate nCols columns of Tensor Memory and write their address to shared memory.",
)

DEALLOC_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.dealloc",
    section=ALLOC,
    slots=(_operation("dealloc"), CTA_GROUP, SYNC, ALIGNED, B32),
    # "deallocates the Tensor Memory specified by the Tensor Memory address taddr".
    operands=lambda form: (Operand("taddr", "b32"), Operand("nCols", "u32")),
    target=TCGEN05,
    summary="Deallocate nCols columns of Tensor Memory at taddr.",
)

RELINQUISH_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.relinquish_alloc_permit",
    section=ALLOC,
    slots=(_operation("relinquish_alloc_permit"), CTA_GROUP, SYNC, ALIGNED),
    operands=lambda form: (),
    target=TCGEN05,
    summary="Give up the CTA's right to allocate Tensor Memory.",
)

#: "The operand nCols must be within the range [32, 512]"; "the number of columns must be a power of 2".
NCOLS = tuple(1 << k for k in range(5, 10))


# ---------------------------------------------------------------------------------------------
# §9.7.16.8 tcgen05.ld, tcgen05.st, tcgen05.wait
# ---------------------------------------------------------------------------------------------

#: ".shape1 = { .16x64b, .16x128b, .16x256b, .32x32b }", ".shape2 = { .16x32bx2 }".
SHAPE1 = ("16x64b", "16x128b", "16x256b", "32x32b")
SHAPE2 = ("16x32bx2",)
#: ".shape3 = { .32x32b }", ".shape4 = { .16x32bx2 }" (tcgen05.ld.red).
SHAPE3 = ("32x32b",)
SHAPE4 = ("16x32bx2",)
#: ".num = { .x1, .x2, .x4, .x8, .x16, .x32, .x64, .x128 }".
NUM = Slot("num", ("x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"), required=True)

#: Table 47 (tcgen05.ld) and Table 48 (tcgen05.st), "Various-combinations of .num and .shape": the
#: registers per .x1 -- ".16x32bx2 / .16x64b / .32x32b": 1, ".16x128b": 2, ".16x256b": 4 --, each
#: .num multiplying them, and the largest .num of the shape (the rest are "NA").
REGISTERS_PER_X1 = {"16x32bx2": 1, "16x64b": 1, "32x32b": 1, "16x128b": 2, "16x256b": 4}
LARGEST_NUM = {"16x32bx2": 128, "16x64b": 128, "32x32b": 128, "16x128b": 64, "16x256b": 32}


def repeat(form: Form) -> int:
    """.num as a number: ".x8" -> 8 ("the repeat factor on the base dimension")."""
    return int(form["num"][1:])


def registers(form: Form) -> int:
    """The size of the register vector ``r`` of a tcgen05.ld/st form (Table 47/48): "a
    brace-enclosed vector expression consisting of one or more 32-bit registers as per the value of
    .shape and .num"."""
    return REGISTERS_PER_X1[form["shape"]] * repeat(form)


def _num_table(section: str, table: str) -> Rule:
    return Rule(
        lambda f: repeat(f) > LARGEST_NUM[f["shape"]],
        lambda f: f'.{f["num"]} is not a .num of .{f["shape"]}: {table} gives "NA" for it (.{f["shape"]} takes .x1 to .x{LARGEST_NUM[f["shape"]]})',
        section,
    )


def _vector(name: str, count: int, type_name: str, destination: bool = False) -> tuple[Operand, ...]:
    return tuple(Operand(f"{name}.{i}", type_name, destination) for i in range(count))


def _taddr() -> Operand:
    """ "the 32-bit address operand taddr" (a Tensor Memory address, §9.7.16.1.1)."""
    return Operand("taddr", "b32")


def _split() -> tuple[Operand, ...]:
    """ "taddr+immHalfSplitoff, where immHalfSplitoff is an immediate argument" (.16x32bx2)."""
    return (Operand("immHalfSplitoff", "u32"),)


def _ld_operands(split: bool, reduce: bool) -> Callable[[Form], tuple[Operand, ...]]:
    """``r, {redval,} [taddr] {, immHalfSplitoff}``: "The destination operand r is a brace-enclosed
    vector expression"; "the result of the reduction operation is written into the corresponding
    thread's 32-bit destination register operand redVal"."""

    def operands(form: Form) -> tuple[Operand, ...]:
        element = form["type"] if reduce else "b32"
        out = _vector("r", registers(form), element, destination=True)
        if reduce:
            out += (Operand("redval", element, destination=True),)
        return out + (_taddr(),) + (_split() if split else ())

    return operands


def _ld_family(key: str, shapes: tuple[str, ...], summary: str) -> Family:
    split = shapes == SHAPE2
    return Family(
        opcode="tcgen05",
        key=key,
        section=LD,
        slots=(_operation("ld"), SYNC, ALIGNED, Slot("shape", shapes, required=True), NUM, Slot("pack", ("pack::16b",)), B32),
        operands=_ld_operands(split, reduce=False),
        rules=(_num_table(LD, "Table 47"),),
        target=TCGEN05,
        summary=summary,
    )


LD_FAMILY = _ld_family("tcgen05.ld", SHAPE1, "Load from Tensor Memory into registers, collectively across a warp.")
LD_SPLIT_FAMILY = _ld_family("tcgen05.ld.16x32bx2", SHAPE2, "Load two .16x32b halves (taddr and taddr+immHalfSplitoff) from Tensor Memory into registers.")

#: ".redOp = { .min, .max }", ".type = { .u32, .s32 }".
RED_OP = Slot("redOp", ("min", "max"), required=True)
#: "When .red qualifier is specified, .num modifier must be at least .x2."
_RED_NUM = Rule(lambda f: f["num"] == "x1", '.x1 with .red: "when .red qualifier is specified, .num modifier must be at least .x2"', LD)


def _ld_red_family(key: str, shapes: tuple[str, ...], floating: bool) -> Family:
    split = shapes == SHAPE4
    tail = (Slot("abs", ("abs",)), Slot("NaN", ("NaN",)), Slot("type", ("f32",), required=True)) if floating else (Slot("type", ("u32", "s32"), required=True),)
    return Family(
        opcode="tcgen05",
        key=key,
        section=LD,
        slots=(_operation("ld"), _operation("red"), SYNC, ALIGNED, Slot("shape", shapes, required=True), NUM, RED_OP, *tail),
        operands=_ld_operands(split, reduce=True),
        rules=(_RED_NUM,),
        target=LD_RED_TARGETS,
        summary=f"Load from Tensor Memory and reduce ({'.f32' if floating else '.u32/.s32'}) across the columns of each lane{', in two .16x32b halves' if split else ''}.",
    )


LD_RED_F32 = _ld_red_family("tcgen05.ld.red.f32", SHAPE3, floating=True)
LD_RED_F32_SPLIT = _ld_red_family("tcgen05.ld.red.f32.16x32bx2", SHAPE4, floating=True)
LD_RED_INT = _ld_red_family("tcgen05.ld.red.int", SHAPE3, floating=False)
LD_RED_INT_SPLIT = _ld_red_family("tcgen05.ld.red.int.16x32bx2", SHAPE4, floating=False)


def _st_family(key: str, shapes: tuple[str, ...], summary: str) -> Family:
    split = shapes == SHAPE2
    return Family(
        opcode="tcgen05",
        key=key,
        section=ST,
        slots=(_operation("st"), SYNC, ALIGNED, Slot("shape", shapes, required=True), NUM, Slot("unpack", ("unpack::16b",)), B32),
        # "[taddr], {immHalfSplitoff,} r": "The source operand r is a brace-enclosed vector expression".
        operands=lambda form: (_taddr(), *(_split() if split else ()), *_vector("r", registers(form), "b32")),
        rules=(_num_table(ST, "Table 48"),),
        target=TCGEN05,
        summary=summary,
    )


ST_FAMILY = _st_family("tcgen05.st", SHAPE1, "Store registers into Tensor Memory, collectively across a warp.")
ST_SPLIT_FAMILY = _st_family("tcgen05.st.16x32bx2", SHAPE2, "Store registers into two .16x32b halves of Tensor Memory (taddr and taddr+immHalfSplitoff).")

WAIT_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.wait",
    section=WAIT,
    # "tcgen05.wait_operation.sync.aligned; .wait_operation = { .wait::ld, .wait::st }".
    slots=(Slot("wait_operation", ("wait::ld", "wait::st"), required=True), SYNC, ALIGNED),
    operands=lambda form: (),
    target=TCGEN05,
    summary="Wait until the executing thread's prior tcgen05.ld (or tcgen05.st) operations have completed.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.16.9 tcgen05.cp, tcgen05.shift
# ---------------------------------------------------------------------------------------------

#: ".shape = { .128x256b, .4x256b, .128x128b, .64x128b**, .32x128b*** }",
#: ".multicast = { .warpx2::02_13** , .warpx2::01_23**, .warpx4*** }": the stars pair them.
CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
CP_MULTICAST = {"64x128b": ("warpx2::02_13", "warpx2::01_23"), "32x128b": ("warpx4",)}


def _cp_multicast(form: Form) -> str | None:
    """Why the form's .shape and .multicast do not go together, or None: ".64x128b requires
    .warpx2::02_13 or .warpx2::01_23", ".32x128b requires .warpx4", and a .multicast belongs to the
    shape its stars mark."""
    shape, multicast = form["shape"], form.get("multicast")
    needed = CP_MULTICAST.get(shape, ())
    if needed and multicast not in needed:
        wanted = " or ".join("." + m for m in needed)
        if multicast is None:
            return f'.{shape} without .multicast: ".{shape} requires {wanted}"'
        return f'.{multicast} with .{shape}: ".{shape} requires {wanted}"'
    if not needed and multicast is not None:
        return f".{multicast} with .{shape}: .multicast qualifiers go with .64x128b (.warpx2::02_13, .warpx2::01_23) and .32x128b (.warpx4) only"
    return None


CP_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.cp",
    section=CP,
    slots=(
        _operation("cp"),
        CTA_GROUP,
        Slot("shape", CP_SHAPES, required=True),
        Slot("multicast", ("warpx2::02_13", "warpx2::01_23", "warpx4")),
        # ".dst_fmt = { .b8x16 }", ".src_fmt = { .b6x16_p32 , .b4x16_p64 }" (§9.7.16.9.1).
        Slot("dst_fmt", ("b8x16",)),
        Slot("src_fmt", ("b6x16_p32", "b4x16_p64")),
    ),
    # "[taddr], s-desc": "The 64-bit register operand s-desc is the matrix descriptor".
    operands=lambda form: (_taddr(), Operand("s_desc", "b64")),
    rules=(
        Rule(lambda f: _cp_multicast(f) is not None, lambda f: _cp_multicast(f) or "", CP),
        # "{.dst_fmt.src_fmt}": "When the qualifiers .dst_fmt and .src_fmt are specified, the data is decompressed".
        forbid(
            "dst_fmt",
            lambda f: f.get("src_fmt") is None,
            ".b8x16 without a .src_fmt: the syntax gives the pair {.dst_fmt.src_fmt} (.src_fmt = { .b6x16_p32, .b4x16_p64 })",
            CP,
        ),
        forbid(
            "src_fmt",
            lambda f: f.get("dst_fmt") is None,
            lambda f: f".{f['src_fmt']} without .b8x16: the syntax gives the pair {{.dst_fmt.src_fmt}} (.dst_fmt = {{ .b8x16 }})",
            CP,
        ),
    ),
    target=TCGEN05,
    summary="Copy a matrix from shared memory (through a descriptor) to Tensor Memory, optionally decompressing 4/6-bit elements to 8 bits.",
)

SHIFT_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.shift",
    section=SHIFT,
    slots=(_operation("shift"), CTA_GROUP, Slot("down", ("down",), required=True)),
    operands=lambda form: (_taddr(),),
    target=SHIFT_TARGETS,
    summary="Shift the rows of a Tensor Memory matrix down by one row.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.16.11.1 tcgen05.fence, §9.7.16.12.1 tcgen05.commit
# ---------------------------------------------------------------------------------------------

FENCE_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.fence",
    section=FENCE,
    # "tcgen05.fence::before_thread_sync ; tcgen05.fence::after_thread_sync ;"
    slots=(Slot("fence", ("fence::before_thread_sync", "fence::after_thread_sync"), required=True),),
    operands=lambda form: (),
    target=TCGEN05,
    summary="Order asynchronous tcgen05 operations with respect to thread synchronisation.",
)


def _commit_operands(form: Form) -> tuple[Operand, ...]:
    """``[mbar] {, ctaMask}``: mbar the mbarrier's address (generic, 64-bit, unless
    ``.shared::cluster``: "If no state space is specified then Generic Addressing is used"), and,
    with ``.multicast::cluster``, "the 16-bit ctaMask operand"."""
    mbar = Operand("mbar", "b32" if form.get("ss") else "b64")
    return (mbar, Operand("ctaMask", "b16")) if form.get("multicast") else (mbar,)


COMMIT_FAMILY = Family(
    opcode="tcgen05",
    key="tcgen05.commit",
    section=COMMIT,
    slots=(
        _operation("commit"),
        CTA_GROUP,
        Slot("completion_mechanism", ("mbarrier::arrive::one",), required=True),
        Slot("ss", ("shared::cluster",)),
        Slot("multicast", ("multicast::cluster",)),
        Slot("type", ("b64",), required=True),
    ),
    operands=_commit_operands,
    target=TCGEN05,
    summary="Make an mbarrier track the completion of the executing thread's prior asynchronous tcgen05 operations.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.16.10.9 tcgen05.mma, tcgen05.mma.sp, tcgen05.mma.ws, tcgen05.mma.ws.sp
# ---------------------------------------------------------------------------------------------

MMA = "9.7.16.10.9.1"
MMA_SP = "9.7.16.10.9.2"
MMA_WS = "9.7.16.10.9.3"
MMA_WS_SP = "9.7.16.10.9.4"
#: §9.7.16.10.7 "Block Scaling" (Table 54 in §9.7.16.10.7.1).
BLOCK_SCALING = "9.7.16.10.7"
#: §9.7.16.2.1 "Matrix Shape" (Table 39).
MATRIX_SHAPE = "9.7.16.2.1"

#: ".kind = { .kind::f16, .kind::tf32, .kind::f8f6f4 }" and the integer lines' ".kind::i8".
MMA_KINDS = ("kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8")
#: The block-scaling lines: ".kind = { .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4 }".
BLOCK_SCALE_KINDS = ("kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4")
#: ".scale_vectorsize = { .scale_vec::1X, .scale_vec::2X, .scale_vec::4X, .block16, .block32 }".
SCALE_VECTORSIZES = ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32")
#: ".collector_usage = { .collector::buffer::op }; ::buffer = { ::a }; ::op = { ::fill, ::use,
#: ::lastuse, ::discard* }" (tcgen05.mma, .sp) and "::buffer = { ::b0, ::b1, ::b2, ::b3 }" (.ws).
COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")
COLLECTOR_A = tuple(f"collector::a::{op}" for op in COLLECTOR_OPS)
COLLECTOR_B = tuple(f"collector::b{n}::{op}" for n in range(4) for op in COLLECTOR_OPS)

#: Table 54, "Valid combinations of scale_vectorsize and shapes": the kinds of each .scale_vectorsize.
SCALE_VECTOR_KINDS = {
    "scale_vec::1X": ("kind::mxf8f6f4",),
    "scale_vec::2X": ("kind::mxf4", "kind::mxf4nvf4"),
    "scale_vec::4X": ("kind::mxf4nvf4",),
    "block16": ("kind::mxf4nvf4",),
    "block32": ("kind::mxf4", "kind::mxf4nvf4", "kind::mxf8f6f4"),
}

#: The Tensor Memory addresses of tcgen05.mma that the syntax lines write in brackets.
MMA_ADDRESSES = ("d_tmem", "a_tmem", "sp_meta_tmem", "scale_A_tmem", "scale_B_tmem")


def _meet(a: Target, b: Target) -> Target | None:
    """The target that satisfies both ``a`` and ``b``, or None: the same target, or an
    architecture-specific (or later family-specific) target inside a family-specific one, at the
    later PTX ISA version."""
    ptx = max(a.ptx, b.ptx)
    if (a.sm, a.suffix) == (b.sm, b.suffix):
        return Target(ptx, a.sm, a.suffix)
    for x, y in ((a, b), (b, a)):
        if y.suffix == "f" and x.suffix in ("a", "f") and x.sm // 10 == y.sm // 10 and x.sm >= y.sm:
            return Target(ptx, x.sm, x.suffix)
    return None


def _both(first: Target | Targets, second: Target | Targets) -> Targets:
    """The alternatives that satisfy both requirements (each pair of alternatives met); an
    alternative that another one of the same target at an earlier version covers is dropped."""
    met = [m for a in first.alternatives for b in second.alternatives if (m := _meet(a, b)) is not None]
    kept = [t for t in dict.fromkeys(met) if not any(u != t and (u.sm, u.suffix) == (t.sm, t.suffix) and u.ptx <= t.ptx for u in met)]
    return Targets(tuple(kept))


def _from(ptx: tuple[int, int], targets: Targets) -> Targets:
    """``targets`` at PTX ISA ``ptx`` or later ("Qualifier .kind::mxf4nvf4 introduced in PTX ISA version 8.7")."""
    return Targets(tuple(Target(max(t.ptx, ptx), t.sm, t.suffix) for t in targets.alternatives))


#: "Qualifier .kind::i8 is supported on following architectures: sm_100a; sm_101a (Renamed to
#: sm_110a from PTX ISA version 9.0); sm_110a" -- the family-specific targets are "except .kind::i8".
I8_TARGETS = _on((8, 6), "sm_100a", "sm_101a", "sm_110a")
#: tcgen05.mma.sp: "Qualifiers .kind::mxf4nvf4 and .kind::mxf4 are supported on following
#: architectures: sm_100a; sm_101a (Renamed to sm_110a from PTX ISA version 9.0); sm_103a; sm_110a"
#: (the family-specific targets are "except .kind::i8/.kind::mxf4nvf4/.kind::mxf4").
SP_MXF4_TARGETS = _on((8, 6), "sm_100a", "sm_101a", "sm_103a", "sm_110a")
#: "Argument scale-input-d requires sm_100a and is supported on sm_100f or higher in the same
#: family from PTX ISA version 8.8."
SCALE_INPUT_D_TARGETS = _on((8, 6), "sm_100a") | _on((8, 8), "sm_100f")
#: ".scale_vec::1X, .scale_vec::2X, .scale_vec::4X requires sm_100a", beside ".block16, .block32
#: requires sm_100f or sm_110f": we read the first as the architecture-specific targets (sm_100a,
#: sm_101a renamed sm_110a, and sm_103a, the "a" target of the sm_100f family), not the
#: family-specific ones. ptxas 13.0 reads it so: it takes .scale_vec::NX on sm_100a, sm_103a and
#: sm_110a and refuses it on sm_100f, sm_103f and sm_110f ("Feature '.scale_vec::1X' not supported
#: on .target 'sm_100f'").
SCALE_VEC_TARGETS = _on((8, 6), "sm_100a", "sm_101a", "sm_103a", "sm_110a")
#: ".block16, .block32 requires sm_100f or sm_110f"; "Qualifiers .block16 and .block32 introduced
#: in PTX ISA version 8.8".
BLOCK_N_TARGETS = _on((8, 8), "sm_100f", "sm_110f")


def _mma_target(sparse: bool, scale_input_d: bool) -> Callable[[Form], Targets]:
    """The Target ISA Notes of §9.7.16.10.9.1-4 -- every form from PTX ISA 8.6 on sm_100a, and the
    refinements below: "Introduced in PTX ISA version 8.6"; sm_100a,
    sm_101a (sm_110a), and "sm_100f or higher in the same family", "sm_101f" (sm_110f) from PTX
    ISA version 8.8 "except .kind::i8" (tcgen05.mma.sp: "except .kind::i8/.kind::mxf4nvf4/
    .kind::mxf4"); "Qualifier .kind::mxf4nvf4 introduced in PTX ISA version 8.7"; then what the
    notes say of scale-input-d and of each .scale_vectorsize (see the constants above)."""

    def target(form: Form) -> Targets:
        kind = form["kind"]
        targets: Targets = TCGEN05
        if kind == "kind::i8":
            targets = I8_TARGETS
        elif sparse and kind in ("kind::mxf4", "kind::mxf4nvf4"):
            targets = SP_MXF4_TARGETS
        if kind == "kind::mxf4nvf4":
            targets = _from((8, 7), targets)
        if scale_input_d:
            targets = _both(targets, SCALE_INPUT_D_TARGETS)
        vector = form.get("scale_vectorsize")
        if vector is None and kind == "kind::mxf4":
            vector = "block32"  # "For .kind::mxf4 when the qualifier .scale_vectorsize is not specified, then it defaults to .block32."
        if vector in ("block16", "block32"):
            targets = _both(targets, BLOCK_N_TARGETS)
        elif vector is not None:
            targets = _both(targets, SCALE_VEC_TARGETS)
        return targets

    target.__doc__ = _mma_target.__doc__
    return target


def _mma_operands(*, sparse: bool, block_scale: bool, ws: bool, a_tmem: bool, disable_output_lane: bool, scale_input_d: bool, zero_column_mask: bool):
    """The operand list of a syntax line, in the manual's order and with its names (``-`` as
    ``_``): ``[d-tmem], a-desc | [a-tmem], b-desc, {[sp-meta-tmem],} idesc`` and then

    * tcgen05.mma{.sp}: ``{ disable-output-lane }, enable-input-d {, scale-input-d}`` -- "The
      vector operand disable-output-lane": 4 elements with .cta_group::1, 8 with ::2 (.b32: "each
      bit corresponds to a lane of the Tensor Memory"); "the input predicate argument
      enable-input-d"; "The optional immediate argument scale-input-d";
    * with .block_scale: ``[scale-A-tmem], [scale-B-tmem], enable-input-d``;
    * .ws: ``enable-input-d {, zero-column-mask-desc}`` -- "a 64-bit register".

    "The address operand d-tmem" and the other ``-tmem`` operands are Tensor Memory addresses
    (.b32, §9.7.16.1.1); "The 64-bit register operand a-desc and b-desc"; "The 32-bit register
    operand idesc". D is written in Tensor Memory, not in a register: no operand is a destination.
    """

    def operands(form: Form) -> tuple[Operand, ...]:
        out = [Operand("d_tmem", "b32"), Operand("a_tmem", "b32") if a_tmem else Operand("a_desc", "b64"), Operand("b_desc", "b64")]
        if sparse:
            out.append(Operand("sp_meta_tmem", "b32"))
        out.append(Operand("idesc", "b32"))
        if block_scale:
            out += [Operand("scale_A_tmem", "b32"), Operand("scale_B_tmem", "b32")]
        if disable_output_lane:
            out += _vector("disable_output_lane", 4 * cta_group(form), "b32")
        out.append(Operand("enable_input_d", "pred"))
        if scale_input_d:
            out.append(Operand("scale_input_d", "u32"))
        if zero_column_mask:
            out.append(Operand("zero_column_mask_desc", "b64"))
        return tuple(out)

    return operands


def cta_group(form: Form) -> int:
    """.cta_group as a number: ".cta_group::2" -> 2."""
    return int(form["cta_group"].rsplit("::", 1)[1])


def _mma_syntax(*, sparse: bool, block_scale: bool, ws: bool, a_tmem: bool, disable_output_lane: bool, scale_input_d: bool, zero_column_mask: bool) -> str:
    """The operand list as the manual writes it (``"[d-tmem], a-desc, b-desc, idesc, enable-input-d"``)."""
    parts = ["[d-tmem]", "[a-tmem]" if a_tmem else "a-desc", "b-desc", *(["[sp-meta-tmem]"] if sparse else []), "idesc"]
    if block_scale:
        parts += ["[scale-A-tmem]", "[scale-B-tmem]"]
    if disable_output_lane:
        parts.append("{ disable-output-lane }")
    parts.append("enable-input-d")
    if scale_input_d:
        parts.append("scale-input-d")
    if zero_column_mask:
        parts.append("zero-column-mask-desc")
    return ", ".join(parts)


#: "It is illegal to specify either of .collector::a::use or .collector::a::fill along with .ashift."
_ASHIFT_COLLECTOR = Rule(
    lambda f: f.get("ashift") is not None and f.get("collector_usage") in ("collector::a::use", "collector::a::fill"),
    lambda f: f'.ashift with .{f["collector_usage"]}: "It is illegal to specify either of .collector::a::use or .collector::a::fill along with .ashift"',
)


def _scale_input_d_kind(section: str) -> Rule:
    return Rule(
        lambda f: f["kind"] not in ("kind::f16", "kind::tf32"),
        lambda f: f'scale-input-d with .{f["kind"]}: "The argument scale-input-d is only valid for .kind::tf32 and .kind::f16"',
        section,
    )


def _scale_vector_kind(section: str) -> Rule:
    """Table 54: the kinds each .scale_vectorsize goes with."""

    def why(f: Form) -> str:
        vector = f["scale_vectorsize"]
        kinds = ", ".join("." + k for k in SCALE_VECTOR_KINDS[vector])
        return f".{vector} with .{f['kind']}: Table 54 (valid combinations of scale_vectorsize and shapes) gives .{vector} for {kinds} only"

    return Rule(lambda f: f.get("scale_vectorsize") is not None and f["kind"] not in SCALE_VECTOR_KINDS[f["scale_vectorsize"]], why, BLOCK_SCALING)


def _scale_vector_explicit(section: str) -> Rule:
    return Rule(
        lambda f: f["kind"] == "kind::mxf4nvf4" and f.get("scale_vectorsize") is None,
        '.kind::mxf4nvf4 without .scale_vectorsize: "For .kind::mxf4nvf4, the qualifier .scale_vectorsize must be explicitly specified"',
        section,
    )


#: ".ws": "tcgen05.mma.ws.cta_group::1.kind..." -- Table 39 has no .ws shape with CTA group 2 ("Invalid").
def _ws_cta_group(section: str) -> Rule:
    return Rule(
        lambda f: f["cta_group"] != "cta_group::1",
        lambda f: f'.{f["cta_group"]} with .ws: the syntax lines are "tcgen05.mma.ws.cta_group::1.kind..." (Table 39: .ws with CTA group 2 is "Invalid")',
        section,
    )


def _mma_family(*, sparse: bool = False, block_scale: bool = False, ws: bool = False, a_tmem: bool = False, disable_output_lane: bool = False,
                scale_input_d: bool = False, zero_column_mask: bool = False) -> Family:  # fmt: skip
    """One syntax line of §9.7.16.10.9 with one choice of its operands (see the module docstring)."""
    variant = dict(sparse=sparse, block_scale=block_scale, ws=ws, a_tmem=a_tmem, disable_output_lane=disable_output_lane,
                   scale_input_d=scale_input_d, zero_column_mask=zero_column_mask)  # fmt: skip
    section = (MMA_WS_SP if sparse else MMA_WS) if ws else (MMA_SP if sparse else MMA)
    head = [_operation("mma")]
    if ws:
        head.append(Slot("ws", ("ws",), required=True))
    if sparse:
        head.append(Slot("sp", ("sp",), required=True))
    slots: list[Slot] = [*head, CTA_GROUP]
    rules: list[Rule] = []
    if ws:
        slots += [Slot("kind", MMA_KINDS, required=True), Slot("collector_usage", COLLECTOR_B)]
        rules.append(_ws_cta_group(section))
    elif block_scale:
        slots += [
            Slot("kind", BLOCK_SCALE_KINDS, required=True),
            Slot("block_scale", ("block_scale",), required=True),
            Slot("scale_vectorsize", SCALE_VECTORSIZES),
            Slot("collector_usage", COLLECTOR_A),
        ]
        rules += [_scale_vector_kind(section), _scale_vector_explicit(section)]
    else:
        slots.append(Slot("kind", MMA_KINDS, required=True))
        # ".ashift" only on the lines with [a-tmem]: "tcgen05.mma.cta_group.kind{.ashift}.collector_usage [d-tmem], [a-tmem], ...".
        if a_tmem:
            slots.append(Slot("ashift", ("ashift",)))
            rules.append(Rule(_ASHIFT_COLLECTOR.illegal, _ASHIFT_COLLECTOR.message, section))
        slots.append(Slot("collector_usage", COLLECTOR_A))
        if scale_input_d:
            rules.append(_scale_input_d_kind(section))
    key = "tcgen05.mma" + (".ws" if ws else "") + (".sp" if sparse else "") + (".block_scale" if block_scale else "")
    key += ".a_tmem" if a_tmem else ""
    key += (".disable_output_lane" if disable_output_lane else "") + (".scale_input_d" if scale_input_d else "")
    key += ".zero_column_mask" if zero_column_mask else ""
    what = "weight-stationary " if ws else ""
    what += "sparse-A " if sparse else ""
    what += "block-scaled " if block_scale else ""
    extras = [
        text
        for flag, text in (
            (disable_output_lane, "disabled output lanes"),
            (scale_input_d, "D scaled by 2^-scale-input-d"),
            (zero_column_mask, "a zero-column mask"),
        )
        if flag
    ]
    return Family(
        opcode="tcgen05",
        key=key,
        section=section,
        slots=tuple(slots),
        operands=_mma_operands(**variant),
        rules=tuple(rules),
        target=_mma_target(sparse, scale_input_d),
        summary=(
            f"Issue a {what}MxNxK matrix multiply-accumulate D = A*B+D on the Tensor Memory (one thread), "
            f"A from {'Tensor Memory' if a_tmem else 'shared memory (descriptor)'}{', with ' + ', '.join(extras) if extras else ''}."
        ),
        operand_syntax=_mma_syntax(**variant),
    )


def _mma_families(*, sparse: bool) -> tuple[Family, ...]:
    """tcgen05.mma{.sp}: per A (a-desc first), the operand choices of the non-block-scaling lines
    (none, disable-output-lane, scale-input-d, both), then the block-scaling line."""
    out = []
    for a_tmem in (False, True):
        for disable, scale in ((False, False), (True, False), (False, True), (True, True)):
            out.append(_mma_family(sparse=sparse, a_tmem=a_tmem, disable_output_lane=disable, scale_input_d=scale))
    out += [_mma_family(sparse=sparse, block_scale=True, a_tmem=a_tmem) for a_tmem in (False, True)]
    return tuple(out)


MMA_FAMILIES = _mma_families(sparse=False)
MMA_SP_FAMILIES = _mma_families(sparse=True)
MMA_WS_FAMILIES = tuple(_mma_family(ws=True, a_tmem=a, zero_column_mask=z) for a in (False, True) for z in (False, True))
MMA_WS_SP_FAMILIES = tuple(_mma_family(ws=True, sparse=True, a_tmem=a, zero_column_mask=z) for a in (False, True) for z in (False, True))


FAMILIES = (
    ALLOC_FAMILY, DEALLOC_FAMILY, RELINQUISH_FAMILY,
    LD_FAMILY, LD_SPLIT_FAMILY, LD_RED_F32, LD_RED_F32_SPLIT, LD_RED_INT, LD_RED_INT_SPLIT,
    ST_FAMILY, ST_SPLIT_FAMILY, WAIT_FAMILY,
    CP_FAMILY, SHIFT_FAMILY,
    FENCE_FAMILY, COMMIT_FAMILY,
    *MMA_FAMILIES, *MMA_SP_FAMILIES, *MMA_WS_FAMILIES, *MMA_WS_SP_FAMILIES,
)  # fmt: skip

#: The operations of the catalogued families (the first qualifier after ``tcgen05``).
OPERATIONS = tuple(dict.fromkeys(t for f in FAMILIES for t in f.slots[0].tokens))
#: The §9.7.16 operations that are not catalogued yet, with their sections.
NOT_YET: dict[str, str] = {}


# ---------------------------------------------------------------------------------------------
# Operands as PTX writes them
# ---------------------------------------------------------------------------------------------


def addresses(form: Form) -> frozenset[str]:
    """The operands that the form's syntax line writes in brackets, as addresses: ``[dst]``
    (tcgen05.alloc), ``[mbar]`` (tcgen05.commit), ``[taddr]`` (tcgen05.ld, .st, .cp, .shift), and
    tcgen05.mma's Tensor Memory addresses ``[d-tmem]``, ``[a-tmem]``, ``[sp-meta-tmem]``,
    ``[scale-A-tmem]``, ``[scale-B-tmem]``; tcgen05.dealloc writes its ``taddr`` bare
    ("tcgen05.dealloc... taddr, nCols")."""
    key = form.family.key
    if key == "tcgen05.dealloc":
        return frozenset()
    return frozenset(o.name for o in form.operands if o.name in ("dst", "mbar", "taddr", *MMA_ADDRESSES))


# ---------------------------------------------------------------------------------------------
# Immediate operands
# ---------------------------------------------------------------------------------------------


def check_immediates(form: Form, **values: int) -> None:
    """Check the values of a tcgen05 form's operands given as immediates (keyword names as the
    operands are named): ``nCols`` -- "The operand nCols must be within the range [32, 512]", "the
    number of columns must be a power of 2" (§9.7.16.7.1) -- and any other operand the form has
    (``immHalfSplitoff``, ``ctaMask``: a value of its width). An operand that the form does not
    have is an error too."""
    operands = {o.name: o for o in form.operands}
    for name, value in values.items():
        if name not in operands:
            raise OperandError(f"{form.text} has no operand {name} (its operands: {form.template or 'none'})", section=form.family.section)
        if name == "nCols" and value not in NCOLS:
            raise OperandError(f"nCols = {value} in {form.text}: the number of columns must be a power of 2 within [32, 512]", section=ALLOC)
        if name == "scale_input_d" and not 0 <= value <= 15:
            raise OperandError(
                f'scale-input-d = {value} in {form.text}: "The valid range of values for argument scale-input-d is [0, 15]"', section=form.family.section
            )
        width = int(operands[name].type[1:])
        if not 0 <= value < 1 << width:
            raise OperandError(f"{name} = {value} in {form.text} does not fit its {width} bits", section=form.family.section)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def parse(text: str, *, where: Location | str | None = None) -> Form:
    """Parse a §9.7.16 instruction (see :meth:`Catalogue.parse`). The text may carry its operands
    as PTX writes them, ``[...]`` addresses included (``"tcgen05.mma.cta_group::1.kind::tf32
    [taddr0], [taddr1], bdesc, idesc, p"``): the form is then the first whose operands have that
    shape -- the way to reach the tcgen05.mma families that only their operands tell apart (A in
    Tensor Memory, the optional operands); :func:`addresses` says which operands are brackets
    (registered as the catalogue's :data:`~ptxspec.spec.catalogue.ADDRESS_OPERANDS`)."""
    return CATALOGUE.parse(text, where=where)


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` of this chapter: an operation that
    is not one of §9.7.16's (``tcgen05.frob``) or not catalogued yet (``tcgen05.mma``) is named as
    such; a text that is a legal form plus one qualifier its syntax line lacks
    (``tcgen05.st....pack::16b.b32``) names that qualifier
    (:func:`ptxspec.spec.matrix.superfluous_qualifier`); a shape that is not one of the operation's
    names the operation's shapes (§9.7.16.2.3)."""
    head = text.split()[0] if text.split() else ""
    tokens = head.split(".")[1:]
    if not tokens:
        return None
    operation = tokens[0]
    if operation in NOT_YET:
        return (
            f"tcgen05.{operation} (§{NOT_YET[operation]}) is not in the catalogue yet; the catalogued operations are {', '.join('.' + o for o in OPERATIONS)}",
            NOT_YET[operation],
        )
    if operation not in OPERATIONS:
        return f"unknown tcgen05 operation .{operation}; the operations are {', '.join('.' + o for o in OPERATIONS)}", CHAPTER
    found = superfluous_qualifier(catalogue, text)
    if found is not None:
        return found
    return _shape_problem(catalogue, tokens)


def operation_of(family: Family) -> str:
    """The family's operation as the manual names it: ``"ld"``, ``"ld.red"``, ``"cp"``, ``"mma"``,
    ``"mma.sp"``, ``"mma.ws"``, ``"mma.ws.sp"``, ..."""
    head = family.slots[0].tokens[0]
    names = {s.name for s in family.slots}
    return head + "".join(f".{word}" for word in ("red", "ws", "sp") if word in names)


def _shape_problem(catalogue: Catalogue, tokens: list[str]) -> tuple[str, str] | None:
    """A data-movement shape that the operation does not take (".16x64b" with tcgen05.ld.red)."""
    operation = "ld.red" if tokens[:2] == ["ld", "red"] else tokens[0]
    every = catalogue.families("tcgen05")
    shapes = list(dict.fromkeys(t for f in every if operation_of(f) == operation for s in f.slots if s.name == "shape" for t in s.tokens))
    known = {t for f in every for s in f.slots if s.name == "shape" for t in s.tokens}
    given = [t for t in tokens if t in known]
    if len(given) != 1 or not shapes or given[0] in shapes:
        return None
    return f"shape .{given[0]} is not a shape of tcgen05.{operation}: its shapes are {', '.join('.' + s for s in shapes)}", DATA_MOVEMENT_SHAPE


CATALOGUE = Catalogue(FAMILIES, {"tcgen05": explain_refusal})


ADDRESS_OPERANDS["tcgen05"] = addresses
