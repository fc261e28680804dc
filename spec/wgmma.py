"""Catalogue entries for §9.7.15, the asynchronous warpgroup-level matrix instructions:
``wgmma.mma_async`` (§9.7.15.5.2), ``wgmma.mma_async.sp`` (§9.7.15.6.3, the English seed
``003_…``), ``wgmma.fence`` (§9.7.15.7.1), ``wgmma.commit_group`` (§9.7.15.7.2) and
``wgmma.wait_group`` (§9.7.15.7.3).

One family per syntax line of the manual. Each type block has two lines that only their operands
tell apart -- "``d, a-desc, b-desc, ...``" (A in shared memory, through a matrix descriptor) and
"``d, a, b-desc, ...``" (A in registers) -- so each gives two families, the descriptor one first
(:meth:`~ptxspec.spec.catalogue.Catalogue.parse` without an operand template returns it):

=======================  ==============================================================================
key                      syntax
=======================  ==============================================================================
``wgmma.f16``            ``wgmma.mma_async.sync.aligned.shape.dtype.f16.f16 d, a-desc, b-desc, scale-d,
                         imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b``
``wgmma.f16.a``          ``... d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b``
``wgmma.bf16(.a)``       the same with ``.bf16.bf16`` and ``.dtype = {.f32}``
``wgmma.tf32(.a)``       ``...shape.dtype.tf32.tf32 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b``
``wgmma.f8(.a)``         ``...shape.dtype.atype.btype`` with ``.atype/.btype = {.e4m3, .e5m2}``
``wgmma.int(.a)``        ``...shape{.satfinite}.s32.atype.btype d, a-desc, b-desc, scale-d``
``wgmma.b1(.a)``         ``...shape.s32.b1.b1.op.popc d, a-desc, b-desc, scale-d`` (``.op = {.and}``)
``wgmma.sp.*``           §9.7.15.6.3: the same blocks (no .b1) with ``sp-meta, sp-sel`` after ``b-desc``
``wgmma.fence``          ``wgmma.fence.sync.aligned``
``wgmma.commit_group``   ``wgmma.commit_group.sync.aligned``
``wgmma.wait_group``     ``wgmma.wait_group.sync.aligned N``
=======================  ==============================================================================

The immediate operands (``imm-scale-a/b`` in {-1, 1}, ``imm-trans-a/b`` in {0, 1}, ``sp-sel``)
are operands of the form, not qualifiers; :func:`check_immediates` checks their values.

Shapes: every family's ``.shape`` slot admits ``.m64nNk<K>`` of the block's K for every N, and a
rule names the block's list of N.
The lists are those of the shape table of §9.7.15.2 ("Matrix shapes"): the integer syntax line of
§9.7.15.5.2 stops at ``.m64n224k32`` (and misprints ``.m648176k32``) where the table, the
accumulator table of §9.7.15.5.1.1.3 ("N = 8*i where i = {1, 2, 3, 4}, = 16*i where i = {3, 4,
..., 15, 16}") and ptxas 13.0 also have ``.m64n240k32`` and ``.m64n256k32``; we follow the table.

Its families are parsed by the one catalogue (:func:`ptxspec.spec.catalogue.parse`), which asks
:func:`explain_refusal` why a text of this chapter is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Catalogue, Family, Form, Operand, Rule, Slot, Target, on
from ptxspec.spec.errors import OperandError
from ptxspec.spec import matrix
from ptxspec.spec.matrix import register_type

WGMMA = "9.7.15.5.2"
WGMMA_SP = "9.7.15.6.3"
FENCE = "9.7.15.7.1"
COMMIT_GROUP = "9.7.15.7.2"
WAIT_GROUP = "9.7.15.7.3"

#: "Requires sm_90a" (every §9.7.15 instruction).
TARGET_ARCH = "sm_90a"

SYNC = Slot("sync", ("sync",), required=True)
ALIGNED = Slot("aligned", ("aligned",), required=True)

#: §9.7.15.3 ("Matrix data types"): the accumulator of each multiplicand type.
F8 = ("e4m3", "e5m2")
I8 = ("s8", "u8")

#: N of the floating-point shapes: ".m64n8k16, .m64n16k16, ..., .m64n256k16" ("N = 8*i where
#: i = {1, 2, ... , 32}").
N_ALL = tuple(8 * i for i in range(1, 33))
#: N of the integer and single-bit shapes: "N = 8*i where i = {1, 2, 3, 4}, = 16*i where
#: i = {3, 4, ..., 15, 16}" (§9.7.15.5.1.1.3, .s32 accumulators).
N_INTEGER = tuple(8 * i for i in range(1, 5)) + tuple(16 * i for i in range(3, 17))

#: "Elements of the matrix are distributed across the threads in a warpgroup" (§9.7.15.5.1.1).
WARPGROUP = 128


def shape_of(k: int, ns: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(f"m64n{n}k{k}" for n in ns)


def parse_shape(shape: str) -> tuple[int, int, int]:
    """``"m64n128k16"`` -> ``(64, 128, 16)``: the warp-level chapter's reading of a shape."""
    return matrix.parse_shape(shape)


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------

#: A's registers (§9.7.15.5.1.1, §9.7.15.6.2): "a vector expression containing four .f16x2
#: registers" (.f16/.bf16), "four .b32 registers" (.tf32, .s8/.u8, .e4m3/.e5m2, .b1, and every
#: sparse A: "four .b32 registers, with each register containing two non-zero .f16/.bf16
#: elements", ...).
A_REGISTERS = 4


def d_registers(shape: str, dtype: str) -> int:
    """§9.7.15.5.1.1: the accumulator D is "a vector expression containing N/4 .f16x2 registers"
    for .f16, "N/2 .f32 registers" for .f32 and "N/2 .s32 registers" for .s32."""
    _, n, _ = parse_shape(shape)
    return n // 4 if dtype == "f16" else n // 2


def _vector(name: str, count: int, type_name: str, destination: bool = False, read: bool = False) -> tuple[Operand, ...]:
    return tuple(Operand(f"{name}.{i}", type_name, destination, read) for i in range(count))


def _operands(a_from: str, sparse: bool, floating: bool, transposable: bool) -> Callable[[Form], tuple[Operand, ...]]:
    """The operand list of a syntax line: ``d, a-desc|a, b-desc, {sp-meta, sp-sel,} scale-d`` then,
    for the floating-point lines, ``imm-scale-a, imm-scale-b`` and, for .f16/.bf16,
    ``imm-trans-a`` (only with ``a-desc``) and ``imm-trans-b``: "the transpose operation is only
    supported for the wgmma.mma_async variants with .f16/.bf16 types on matrices accessed from
    shared memory using matrix descriptors" (§9.7.15.5.2)."""

    def operands(form: Form) -> tuple[Operand, ...]:
        # d is read as well: "D = A*B+D" (with scale-d true).
        out = _vector("d", d_registers(form["shape"], form["dtype"]), register_type(form["dtype"]), destination=True, read=True)
        if a_from == "desc":
            out += (Operand("a_desc", "b64"),)
        else:
            out += _vector("a", A_REGISTERS, "b32")
        out += (Operand("b_desc", "b64"),)
        if sparse:
            # "Operand sp-meta is a 32-bit integer and operand sp-sel is a 32-bit integer constant".
            out += (Operand("sp_meta", "b32"), Operand("sp_sel", "b32"))
        out += (Operand("scale_d", "pred"),)
        if floating:
            out += (Operand("imm_scale_a", "s32"), Operand("imm_scale_b", "s32"))
        if transposable:
            if a_from == "desc":
                out += (Operand("imm_trans_a", "s32"),)
            out += (Operand("imm_trans_b", "s32"),)
        return out

    return operands


def selectors(form: Form) -> tuple[int, ...]:
    """The valid sparsity selectors (§9.7.15.6.3's table): "0 (threads T0, T1) or 1 (threads T2,
    T3)" for .tf32 and .f16/.bf16; "0 (all threads contribute)" for .e4m3/.e5m2/.s8/.u8."""
    return (0, 1) if form["atype"] in ("f16", "bf16", "tf32") else (0,)


def check_immediates(form: Form, **values: int) -> None:
    """Check the immediate operands of a wgmma form (keyword names as :func:`_operands` names
    them): "the valid values of imm-scale-a and imm-scale-b are -1 and 1"; "the valid values of
    imm-trans-a and imm-trans-b are 0 and 1" (§9.7.15.5.2); the sparsity selector as
    :func:`selectors` ("any other value results in an undefined behavior", §9.7.15.6.1). An
    immediate that the form does not have is an error too (e.g. ``imm_trans_a`` with A in
    registers)."""
    names = {o.name for o in form.operands}
    for name, value in values.items():
        if name not in names:
            raise OperandError(f"{form.text} has no operand {name.replace('_', '-')} (its operands: {form.template})", section=form.family.section)
        allowed: tuple[int, ...] | None = {"imm_scale_a": (-1, 1), "imm_scale_b": (-1, 1), "imm_trans_a": (0, 1), "imm_trans_b": (0, 1)}.get(name)
        if name == "sp_sel":
            allowed = selectors(form)
        if allowed is not None and value not in allowed:
            raise OperandError(f"{name.replace('_', '-')} = {value} in {form.text}: the valid values are {list(allowed)}", section=form.family.section)


# ---------------------------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------------------------


def _shapes(shapes: tuple[str, ...], block: str, section: str) -> Rule:
    return Rule(
        lambda f: f["shape"] not in shapes,
        lambda f: (
            f"shape .{f['shape']} is not a shape of {block} (§9.7.15.2: .m64nNk{parse_shape(shapes[0])[2]} with N in {{{', '.join(str(parse_shape(s)[1]) for s in shapes)}}})"
        ),
        section,
    )


def _types(dtype: tuple[str, ...], atype: tuple[str, ...], btype: tuple[str, ...]) -> tuple[Slot, ...]:
    return (Slot("dtype", dtype, required=True), Slot("atype", atype, required=True), Slot("btype", btype, required=True))


def _target(sparse: bool) -> Callable[[Form], Target]:
    """ "Introduced in PTX ISA version 8.0" (wgmma.mma_async; 8.2 for wgmma.mma_async.sp), "Support
    for .u8.s8 and .s8.u8 as .atype.btype introduced in PTX ISA version 8.4", "Requires sm_90a".

    (§9.7.15.3 still says "both multiplicands (A and B) must have the same data type, e.g. both
    signed or both unsigned"; the syntax lines, the 8.4 note and the examples ("...s32.s8.u8")
    allow the mixed forms, and so do we.)"""

    def target(form: Form) -> Target:
        ptx = (8, 2) if sparse else (8, 0)
        if form.get("atype") in I8 and form["atype"] != form["btype"]:
            ptx = (8, 4)
        return on(ptx, TARGET_ARCH)  # type: ignore[return-value]

    return target


_BLOCKS: tuple[tuple[str, tuple[Slot, ...], tuple[str, ...], tuple[str, ...], bool, bool, str], ...] = (
    # name, type slots, dense shapes, sparse shapes, floating, transposable, summary
    ("f16", _types(("f16", "f32"), ("f16",), ("f16",)), shape_of(16, N_ALL), shape_of(32, N_ALL), True, True, "half-precision"),
    ("bf16", _types(("f32",), ("bf16",), ("bf16",)), shape_of(16, N_ALL), shape_of(32, N_ALL), True, True, ".bf16"),
    ("tf32", _types(("f32",), ("tf32",), ("tf32",)), shape_of(8, N_ALL), shape_of(16, N_ALL), True, False, ".tf32"),
    ("f8", _types(("f16", "f32"), F8, F8), shape_of(32, N_ALL), shape_of(64, N_ALL), True, False, ".e4m3/.e5m2"),
    ("int", (Slot("satfinite", ("satfinite",)), *_types(("s32",), I8, I8)), shape_of(32, N_INTEGER), shape_of(64, N_INTEGER), False, False, ".s8/.u8"),
    (
        "b1",
        (*_types(("s32",), ("b1",), ("b1",)), Slot("op", ("and",), required=True), Slot("popc", ("popc",), required=True)),
        shape_of(256, N_INTEGER),
        (),
        False,
        False,
        "single-bit",
    ),
)


def _family(
    name: str, types: tuple[Slot, ...], shapes: tuple[str, ...], floating: bool, transposable: bool, summary: str, *, sparse: bool, a_from: str
) -> Family:
    section = WGMMA_SP if sparse else WGMMA
    head = (Slot("mma_async", ("mma_async",), required=True),) + ((Slot("sp", ("sp",), required=True),) if sparse else ())
    opcode = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
    a_text = "a-desc" if a_from == "desc" else "a"
    tail = ", scale-d" + (", imm-scale-a, imm-scale-b" if floating else "")
    if transposable:
        tail += (", imm-trans-a" if a_from == "desc" else "") + ", imm-trans-b"
    return Family(
        opcode="wgmma",
        key=f"wgmma{'.sp' if sparse else ''}.{name}{'' if a_from == 'desc' else '.a'}",
        section=section,
        # The slot admits every N of the block's K, so that an integer N outside "8*i, i = {1..4};
        # 16*i, i = {3..16}" is refused by the rule that names the list.
        slots=(*head, SYNC, ALIGNED, Slot("shape", shape_of(parse_shape(shapes[0])[2], N_ALL), required=True), *types),
        operands=_operands(a_from, sparse, floating, transposable),
        rules=(_shapes(shapes, f"the {summary} {opcode}", section),),
        target=_target(sparse),
        summary=f"Warpgroup {'sparse-A ' if sparse else ''}matrix multiply-accumulate on {summary} inputs, A from {'shared memory (descriptor)' if a_from == 'desc' else 'registers'}.",
        operand_syntax=f"d, {a_text}, b-desc{', sp-meta, sp-sel' if sparse else ''}{tail}",
    )


def block_shapes(atype: str, sparse: bool = False) -> tuple[str, ...]:
    """The shapes of the syntax block whose ``.atype`` is ``atype`` (§9.7.15.2's table); empty for
    a type no block lists."""
    for _, types, dense_shapes, sparse_shapes, _, _, _ in _BLOCKS:
        if any(slot.name == "atype" and atype in slot.tokens for slot in types):
            return sparse_shapes if sparse else dense_shapes
    return ()


MMA_ASYNC_FAMILIES = tuple(
    _family(name, types, shapes, floating, transposable, summary, sparse=False, a_from=a_from)
    for name, types, shapes, _, floating, transposable, summary in _BLOCKS
    for a_from in ("desc", "registers")
)

MMA_ASYNC_SP_FAMILIES = tuple(
    _family(name, types, shapes, floating, transposable, summary, sparse=True, a_from=a_from)
    for name, types, _, shapes, floating, transposable, summary in _BLOCKS
    if shapes
    for a_from in ("desc", "registers")
)


def _group_instruction(word: str, section: str, summary: str, operands: tuple[Operand, ...] = ()) -> Family:
    """``wgmma.fence/commit_group/wait_group.sync.aligned``: "Introduced in PTX ISA version 8.0",
    "Requires sm_90a"."""
    return Family(
        opcode="wgmma",
        key=f"wgmma.{word}",
        section=section,
        slots=(Slot(word, (word,), required=True), SYNC, ALIGNED),
        operands=lambda form: operands,
        target=on((8, 0), TARGET_ARCH),
        summary=summary,
    )


FENCE_FAMILY = _group_instruction("fence", FENCE, "Order register accesses between wgmma.mma_async and other operations.")
COMMIT_GROUP_FAMILY = _group_instruction("commit_group", COMMIT_GROUP, "Commit the pending wgmma.mma_async operations into a wgmma-group.")
# "wgmma.wait_group.sync.aligned N; ... The operand N is an integer constant."
WAIT_GROUP_FAMILY = _group_instruction("wait_group", WAIT_GROUP, "Wait until at most N of the latest wgmma-groups are pending.", (Operand("N", "u32"),))

FAMILIES = (*MMA_ASYNC_FAMILIES, *MMA_ASYNC_SP_FAMILIES, FENCE_FAMILY, COMMIT_GROUP_FAMILY, WAIT_GROUP_FAMILY)


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` of this chapter. A shape whose K
    is not the one of the multiplicand type (".m64n8k32" with ".f16") matches no family's shape
    slot; the error then says which K the type takes (§9.7.15.2) rather than which qualifier the
    nearest family missed."""
    problem = _shape_problem(text)
    return None if problem is None else (problem, "9.7.15.2")


def _shape_problem(text: str) -> str | None:
    """Why the text's shape is not one of its type's, or None."""
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    tokens = head.split(".")[1:]
    shapes = [t for t in tokens if t.startswith("m64n")]
    sparse = "sp" in tokens
    if len(shapes) != 1:
        return None
    blocks = [b for b in _BLOCKS if any(t in {tok for slot in b[1] if slot.name == "atype" for tok in slot.tokens} for t in tokens)]
    if len(blocks) != 1:
        return None
    name, _, dense_shapes, sparse_shapes, _, _, summary = blocks[0]
    listed = sparse_shapes if sparse else dense_shapes
    try:
        k_given = parse_shape(shapes[0])[2]
    except OperandError:
        return None
    k = parse_shape(listed[0])[2] if listed else None
    if k is None or k_given == k:
        return None  # the block's own rule names its N list
    kind = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
    return f"shape .{shapes[0]} is not a shape of the {summary} {kind}: its shapes are .m64nNk{k} (§9.7.15.2)"


def is_sparse(form: Form) -> bool:
    return form.get("sp") is not None


def a_in_registers(form: Form) -> bool:
    """Whether the form's A is "the multiplicand matrix A in registers" (``d, a, b-desc, ...``)."""
    return any(o.name.startswith("a.") for o in form.operands)
