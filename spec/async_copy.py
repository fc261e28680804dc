"""Catalogue entries for the asynchronous copies of §9.7.9.25 and ``tensormap.replace`` (§9.7.9.26).

One :class:`~ptxspec.spec.catalogue.Family` per syntax line of the manual (PTX ISA 8.7); the copies
have the opcode ``cp`` (``cp.reduce...`` too) and the words that name the line (``.async``,
``.bulk``, ``.reduce``, ``.prefetch``, ``.tensor``, ``.commit_group``, ...) are required slots of
their own name:

=================================================  ============  ==================================================================
key                                                section       syntax line
=================================================  ============  ==================================================================
``cp.async``                                       9.7.9.25.3.1  ``cp.async.ca.shared{::cta}.global{.level::cache_hint}{.level::prefetch_size}
                                                                 [dst], [src], cp-size{, cache-policy}`` and the ``.cg`` line
                                                                 (``16`` for cp-size)
``cp.async.src_size``                              9.7.9.25.3.1  the same lines with ``{, src-size}``
``cp.async.ignore_src``                            9.7.9.25.3.1  the same lines with ``{, ignore-src}``
``cp.async.commit_group``                          9.7.9.25.3.2  ``cp.async.commit_group``
``cp.async.wait_group``                            9.7.9.25.3.3  ``cp.async.wait_group N``
``cp.async.wait_all``                              9.7.9.25.3.3  ``cp.async.wait_all``
``cp.async.bulk.global_to_shared_cta``             9.7.9.25.4.1  ``cp.async.bulk.dst.src.completion_mechanism{.level::cache_hint}
                                                                 [dstMem], [srcMem], size, [mbar]{, cache-policy}`` (.shared::cta, .global)
``cp.async.bulk.global_to_shared_cluster``         9.7.9.25.4.1  ``cp.async.bulk.dst.src.completion_mechanism{.multicast}{.level::cache_hint}
                                                                 [dstMem], [srcMem], size, [mbar]{, ctaMask}{, cache-policy}``
``cp.async.bulk.shared_to_cluster``                9.7.9.25.4.1  ``cp.async.bulk.dst.src.completion_mechanism [dstMem], [srcMem], size, [mbar]``
                                                                 (.shared::cluster, .shared::cta)
``cp.async.bulk.shared_to_global``                 9.7.9.25.4.1  ``cp.async.bulk.dst.src.completion_mechanism{.level::cache_hint}{.cp_mask}
                                                                 [dstMem], [srcMem], size{, cache-policy}{, byteMask}`` (.bulk_group)
``cp.reduce.async.bulk.shared_to_cluster``         9.7.9.25.4.2  ``cp.reduce.async.bulk.dst.src.completion_mechanism.redOp.type
                                                                 [dstMem], [srcMem], size, [mbar]``
``cp.reduce.async.bulk.shared_to_global``          9.7.9.25.4.2  ``cp.reduce.async.bulk.dst.src.completion_mechanism{.level::cache_hint}.redOp.type
                                                                 [dstMem], [srcMem], size{, cache-policy}``
``cp.reduce.async.bulk.shared_to_global.noftz``    9.7.9.25.4.2  ``cp.reduce.async.bulk.dst.src.completion_mechanism{.level::cache_hint}.add.noftz.type
                                                                 [dstMem], [srcMem], size{, cache-policy}`` (.f16, .bf16)
``cp.async.bulk.prefetch``                         9.7.9.25.4.3  ``cp.async.bulk.prefetch.L2.src{.level::cache_hint} [srcMem], size{, cache-policy}``
``cp.async.bulk.tensor.global_to_shared_cta``      9.7.9.25.5.2  ``cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism{.cta_group}
                                                                 {.level::cache_hint} [dstMem], [tensorMap, tensorCoords], [mbar]{, im2colInfo}
                                                                 {, cache-policy}``
``cp.async.bulk.tensor.global_to_shared_cluster``  9.7.9.25.5.2  ``cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism{.multicast}
                                                                 {.cta_group}{.level::cache_hint} [dstMem], [tensorMap, tensorCoords], [mbar]
                                                                 {, im2colInfo}{, ctaMask}{, cache-policy}``
``cp.async.bulk.tensor.shared_to_global``          9.7.9.25.5.2  ``cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism{.level::cache_hint}
                                                                 [tensorMap, tensorCoords], [srcMem]{, cache-policy}``
``cp.reduce.async.bulk.tensor.shared_to_global``   9.7.9.25.5.3  ``cp.reduce.async.bulk.tensor.dim.dst.src.redOp{.load_mode}.completion_mechanism
                                                                 {.level::cache_hint} [tensorMap, tensorCoords], [srcMem]{, cache-policy}``
``cp.async.bulk.prefetch.tensor``                  9.7.9.25.5.4  ``cp.async.bulk.prefetch.tensor.dim.L2.src{.load_mode}{.level::cache_hint}
                                                                 [tensorMap, tensorCoords]{, im2colInfo}{, cache-policy}``
``cp.async.bulk.commit_group``                     9.7.9.25.6.1  ``cp.async.bulk.commit_group``
``cp.async.bulk.wait_group``                       9.7.9.25.6.2  ``cp.async.bulk.wait_group{.read} N``
``tensormap.replace.tile.field1``                  9.7.9.26      ``tensormap.replace.mode.field1{.ss}.b1024.type [addr], new_val``
``tensormap.replace.tile.field2``                  9.7.9.26      ``tensormap.replace.mode.field2{.ss}.b1024.type [addr], ord, new_val``
``tensormap.replace.tile.field3``                  9.7.9.26      ``tensormap.replace.mode.field3{.ss}.b1024.type [addr], new_val``
                                                                 (new_val an immediate)
=================================================  ============  ==================================================================

Slots: ``dst_ss`` and ``src_ss`` (the state spaces as written: ``shared``, ``shared::cta``,
``shared::cluster``, ``global``), ``completion_mechanism`` (``mbarrier::complete_tx::bytes``,
``bulk_group``), ``multicast`` (``multicast::cluster``), ``cache_hint`` (``L2::cache_hint``),
``cop`` (``ca``, ``cg``), ``prefetch_size``, ``cp_mask``, ``redop``, ``noftz``, ``type``, ``dim``
(``1d`` .. ``5d``), ``load_mode``, ``cta_group``, ``level`` (``L2`` of the prefetches), ``read``;
tensormap.replace has ``mode`` (``tile``), ``field``, ``ss``, ``b1024`` and ``type``.

The destination comes before the source, as ptxas wants it ("State space incorrect"): each
family's ``dst_ss`` and ``src_ss`` slots admit the state spaces of both, so that the parser keeps
them in order, and a rule refuses the reversed direction in the manual's words. Likewise some
slots admit a token that their line does not list, so that a rule refuses it with the manual's
reason: ``.multicast::cluster`` with a ``.shared::cta`` destination, ``.L2::cache_hint`` between
two shared spaces, ``.cta_group`` with ``.bulk_group``.

Operands: the addresses ``dstMem``, ``srcMem`` and ``mbar`` (``u64``, written in brackets:
:attr:`Family.addresses`); cp.async's ``cp_size`` (an integer constant, 4, 8 or 16, and 16 with
``.cg``), ``src_size`` (``u32``) and ``ignore_src`` (``pred``); the bulk ``size`` (``u32``);
``ctaMask`` and ``byteMask`` (``b16``); ``cache_policy`` (``b64``, exactly when ``.L2::cache_hint``
is given); the tensor map ``tensorMap`` (``u64``) and its coordinates ``tensorCoords.0`` ..
(``s32``: "the individual tensor coordinates are of type .s32"), ``dim`` of them or five with
``.tile::gather4``/``.tile::scatter4``; ``im2colInfo.0`` .. (``u16``: .dim - 2 offsets with
``.im2col``, ``wHalo`` and ``wOffset`` with ``.im2col::w`` and ``.im2col::w::128``); the group
count ``N`` (an integer constant); tensormap.replace's ``tmap`` (``u64``, the manual's ``[addr]``),
``ord`` (an integer constant) and ``new_val`` (of ``.type``; an integer constant for .field3).

PTX writes the tensor map and its coordinates in one pair of brackets, ``[tensorMap,
tensorCoords]``; :attr:`Form.template` has no such operand and shows them as ``[tensorMap],
{tensorCoords.0, ...}`` (a vector of one coordinate without braces), and a text with PTX's
``[tensorMap, {...}]`` template does not parse -- parse these forms without a template.
cp.async.src_size and cp.async.ignore_src have operands of the same shape: a template reaches
``cp.async.src_size`` (the first); ``cp.async.ignore_src`` is the family of that key.

What the qualifiers cannot say is left to the semantics: the values of ``cp_size`` (4, 8, 16;
16 with ``.cg``), ``src_size`` (below cp-size), ``size`` (a multiple of 16), ``N``, ``ord`` and
``new_val`` (Table 32; ``.elemtype`` 13 to 15 need PTX ISA 8.7 and sm_100a, sm_101a or sm_120a).
Where the manual and ``ptxas`` (CUDA 13.0) differ, the catalogue follows the manual and the
difference is listed in :data:`ptxspec.conformance.ptxas_agreement.KNOWN`.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import Catalogue, Family, Form, Operand, Rule, Slot, Target, Targets, forbid, on, target_at

CP_ASYNC = "9.7.9.25.3.1"
COMMIT_GROUP = "9.7.9.25.3.2"
WAIT_GROUP = "9.7.9.25.3.3"
BULK = "9.7.9.25.4.1"
REDUCE = "9.7.9.25.4.2"
PREFETCH = "9.7.9.25.4.3"
TENSOR = "9.7.9.25.5.2"
REDUCE_TENSOR = "9.7.9.25.5.3"
PREFETCH_TENSOR = "9.7.9.25.5.4"
BULK_COMMIT = "9.7.9.25.6.1"
BULK_WAIT = "9.7.9.25.6.2"
TENSORMAP_REPLACE = "9.7.9.26"

COMPLETE_TX = "mbarrier::complete_tx::bytes"
BULK_GROUP = "bulk_group"
MULTICAST = "multicast::cluster"
#: ".redOp = { .and, .or, .xor, .add, .inc, .dec, .min, .max }"
REDOPS = ("and", "or", "xor", "add", "inc", "dec", "min", "max")
#: ".dim = { .1d, .2d, .3d, .4d, .5d }"
DIMS = ("1d", "2d", "3d", "4d", "5d")
#: ".load_mode" of the copies to shared memory and of the tensor prefetch.
LOAD_MODES = ("tile", "tile::gather4", "im2col", "im2col::w", "im2col::w::128")
#: ".load_mode" of the copy to global memory.
STORE_MODES = ("tile", "tile::scatter4", "im2col_no_offs")
IM2COL_MODES = ("im2col", "im2col::w", "im2col::w::128", "im2col_no_offs")
FOUR_ROWS = ("tile::gather4", "tile::scatter4")
CTA_GROUPS = ("cta_group::1", "cta_group::2")

CACHE_HINT = Slot("cache_hint", ("L2::cache_hint",))


def _word(name: str) -> Slot:
    """A token that names the line (``.async``, ``.bulk``, ...): a required slot of its own name."""
    return Slot(name, (name,), required=True)


def _slot(name: str, *tokens: str, required: bool = True) -> Slot:
    return Slot(name, tokens, required=required)


ASYNC, BULK_WORD, REDUCE_WORD, TENSOR_WORD, PREFETCH_WORD = (_word(w) for w in ("async", "bulk", "reduce", "tensor", "prefetch"))
DIM = Slot("dim", DIMS, required=True)
L2 = _slot("level", "L2")


def _spaces(dst: str, src: str) -> tuple[Slot, Slot]:
    """The ``.dst`` and ``.src`` slots of a line whose direction is ``dst`` <- ``src``: both admit
    both spaces, so that the parser keeps them in the written order (see :func:`_direction`)."""
    both = (dst, src)
    return Slot("dst_ss", both, required=True), Slot("src_ss", both, required=True)


def _direction(dst: str, src: str, section: str) -> Rule:
    """§9.7.9.25.4.1: "The direction of bulk copy is from the state space specified by the .src
    modifier to the state space specified by the .dst modifier": the destination is written first."""
    return Rule(
        lambda f: f["dst_ss"] != dst or f["src_ss"] != src,
        lambda f: (
            f".{f['dst_ss']}.{f['src_ss']} is not a direction of this line: it copies from .{src} to .{dst}, written .{dst}.{src} "
            '(".dst.src": "The direction of bulk copy is from the state space specified by the .src modifier to the state space '
            'specified by the .dst modifier")'
        ),
        section,
    )


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------


def _meet(*needs: Target | Targets) -> Target | Targets:
    """The requirement of a form that needs all of ``needs`` at once: per alternative of each, the
    latest PTX ISA version and the highest architecture, where an "a" target (which admits only
    itself) meets a plain one only at or above it and another "a" target only if it is the same."""
    alternatives: list[Target] = [Target((1, 0), 10)]
    for need in needs:
        met = []
        for a in alternatives:
            for b in need.alternatives:
                ptx = max(a.ptx, b.ptx)
                if a.suffix and b.suffix:
                    if a.sm == b.sm:
                        met.append(Target(ptx, a.sm, a.suffix))
                elif a.suffix or b.suffix:
                    fixed, plain = (a, b) if a.suffix else (b, a)
                    if fixed.sm >= plain.sm:
                        met.append(Target(ptx, fixed.sm, fixed.suffix))
                else:
                    met.append(Target(ptx, max(a.sm, b.sm)))
        alternatives = list(dict.fromkeys(met))
    if not alternatives:
        raise ValueError("requirements that no target satisfies")
    return alternatives[0] if len(alternatives) == 1 else Targets(tuple(alternatives))


def _cp_async_target(ignore_src: bool) -> Callable[[Form], Target | Targets]:
    """§9.7.9.25.3.1: "Introduced in PTX ISA version 7.0", "Requires sm_80 or higher"; "Support for
    .level::cache_hint and .level::prefetch_size qualifiers introduced in PTX ISA version 7.4";
    "Support for ignore-src operand introduced in PTX ISA version 7.5"; "Support for sub-qualifier
    ::cta introduced in PTX ISA version 7.8", "Sub-qualifier ::cta requires sm_30 or higher"."""

    def target(form: Form) -> Target | Targets:
        needs = [target_at((7, 0), 80)]
        if form.get("cache_hint") or form.get("prefetch_size"):
            needs.append(Target((7, 4), 80))
        if ignore_src:
            needs.append(Target((7, 5), 80))
        if form.get("dst_ss") == "shared::cta":
            needs.append(Target((7, 8), 30))
        return _meet(*needs)

    return target


#: §9.7.9.25.4-6: "Introduced in PTX ISA version 8.0", "Requires sm_90 or higher".
BULK_TARGET = target_at((8, 0), 90)
#: "Support for .shared::cta as destination state space introduced in PTX ISA version 8.6".
SHARED_CTA_DST = Target((8, 6), 90)
#: §9.7.9.25.5.2: "Support for qualifier .cta_group introduced in PTX ISA version 8.6"; "qualifier
#: .cta_group is supported on the following architectures: sm_100a, sm_101a" (and likewise
#: .tile::scatter4 and .im2col::w::128; §9.7.9.25.5.4 says it of .tile::gather4, .im2col::w and
#: .im2col::w::128).
SM_100A_101A = on((8, 6), "sm_100a", "sm_101a")


def _bulk_target(form: Form) -> Target | Targets:
    """§9.7.9.25.4.1: "Introduced in PTX ISA version 8.0", "Requires sm_90 or higher"; "Support for
    .shared::cta as destination state space introduced in PTX ISA version 8.6"; "Support for
    .cp_mask qualifier introduced in PTX ISA version 8.6", "requires sm_100 or higher". (The
    .multicast::cluster qualifier is only "advised" with sm_90a, sm_100a, sm_101a.)"""
    needs: list[Target | Targets] = [BULK_TARGET]
    if form.get("dst_ss") == "shared::cta":
        needs.append(SHARED_CTA_DST)
    if form.get("cp_mask"):
        needs.append(target_at((8, 6), 100))
    return _meet(*needs)


def _tensor_target(form: Form) -> Target | Targets:
    """§9.7.9.25.5.2's notes: "Introduced in PTX ISA version 8.0", "Requires sm_90 or higher";
    .shared::cta as destination, .tile::gather4, .tile::scatter4, .im2col::w, .im2col::w::128 and
    .cta_group "introduced in PTX ISA version 8.6"; ".tile::gather4 and .im2col::w require sm_100a
    when the destination state space is .shared::cluster" and "sm_100 or higher when the
    destination state space is .shared::cta"; .tile::scatter4, .im2col::w::128 and .cta_group are
    "supported on the following architectures: sm_100a, sm_101a"."""
    needs: list[Target | Targets] = [BULK_TARGET]
    mode, dst = form.get("load_mode"), form.get("dst_ss")
    if dst == "shared::cta" and form.get("src_ss") == "global":
        needs.append(SHARED_CTA_DST)
    if mode in ("tile::gather4", "im2col::w"):
        needs.append(target_at((8, 6), 100) if dst == "shared::cta" else on((8, 6), "sm_100a"))
    if mode in ("tile::scatter4", "im2col::w::128") or form.get("cta_group"):
        needs.append(SM_100A_101A)
    return _meet(*needs)


def _prefetch_tensor_target(form: Form) -> Target | Targets:
    """§9.7.9.25.5.4: "Introduced in PTX ISA version 8.0", "Requires sm_90 or higher"; .tile::gather4,
    .im2col::w and .im2col::w::128 "introduced in PTX ISA version 8.6" and "supported on the
    following architectures: sm_100a, sm_101a"."""
    if form.get("load_mode") in ("tile::gather4", "im2col::w", "im2col::w::128"):
        return _meet(BULK_TARGET, SM_100A_101A)
    return BULK_TARGET


#: §9.7.9.26: "Introduced in PTX ISA version 8.3"; "Supported on the following architectures:
#: sm_90a, sm_100a, sm_101a, sm_120a".
TENSORMAP_TARGET = on((8, 3), "sm_90a", "sm_100a", "sm_101a", "sm_120a")


def _tensormap_target(form: Form) -> Target | Targets:
    """And: "Qualifier .swizzle_atomicity introduced in PTX ISA version 8.6", "supported on the
    following architectures: sm_100a, sm_101a, sm_120a"."""
    if form.get("field") == "swizzle_atomicity":
        return on((8, 6), "sm_100a", "sm_101a", "sm_120a")
    return TENSORMAP_TARGET


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------

DST = Operand("dstMem", "u64")
SRC = Operand("srcMem", "u64")
MBAR = Operand("mbar", "u64")
SIZE = Operand("size", "u32")
TENSOR_MAP = Operand("tensorMap", "u64")
CTA_MASK = Operand("ctaMask", "b16")
#: "The operand N is an integer constant" (§9.7.9.25.3.3, §9.7.9.25.6.2).
GROUPS = Operand("N", "u32")


def _policy(form: Form) -> tuple[Operand, ...]:
    """The cache policy: "The qualifier .level::cache_hint is required when the optional argument cache-policy is
    specified. The 64-bit operand cache-policy specifies the cache eviction policy"."""
    return (Operand("cache_policy", "b64"),) if form.get("cache_hint") else ()


def _multicast(form: Form) -> tuple[Operand, ...]:
    """The multicast mask: "The operand ctaMask specifies the destination CTAs in the cluster such that each bit
    position in the 16-bit ctaMask operand corresponds to the %ctaid of the destination CTA"."""
    return (CTA_MASK,) if form.get("multicast") else ()


def _cp_async_operands(extra: tuple[Operand, ...]) -> Callable[[Form], tuple[Operand, ...]]:
    """``[dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}``: "The operand cp-size is an
    integer constant"; "a 32-bit integer operand src-size"; "the optional and non-immediate
    predicate argument ignore-src"."""
    return lambda form: (DST, SRC, Operand("cp_size", "u32"), *extra, *_policy(form))


def _bulk_operands(form: Form) -> tuple[Operand, ...]:
    """``[dstMem], [srcMem], size{, [mbar]}{, ctaMask}{, cache-policy}{, byteMask}``: [mbar] with the
    mbarrier-based completion mechanism; byteMask, "the 16-bit wide byteMask operand", with .cp_mask."""
    mbar = (MBAR,) if form.get("completion_mechanism") == COMPLETE_TX else ()
    mask = (Operand("byteMask", "b16"),) if form.get("cp_mask") else ()
    return (DST, SRC, SIZE, *mbar, *_multicast(form), *_policy(form), *mask)


def _prefetch_operands(form: Form) -> tuple[Operand, ...]:
    """``[srcMem], size{, cache-policy}``."""
    return (SRC, SIZE, *_policy(form))


def coordinates(form: Form) -> int:
    """How many tensor coordinates the form takes: "{col_idx, row_idx0, row_idx1, row_idx2,
    row_idx3}", "a fixed length vector of size 5", with .tile::gather4 and .tile::scatter4; else
    "a vector of n elements, where n = .dim"."""
    return 5 if form.get("load_mode") in FOUR_ROWS else int(form["dim"][0])


def im2col_offsets(form: Form) -> int:
    """How many ``im2colInfo`` elements the form takes: with .im2col "a vector of im2col offsets
    whose size is 2 less than the number of dimensions .dim"; with .im2col::w and .im2col::w::128 "a
    vector of 2 arguments containing the wHalo and wOffset arguments"; otherwise none ("The vector
    operand im2colInfo can be specified only when .load_mode is .im2col, .im2col::w or
    .im2col::w::128")."""
    mode = form.get("load_mode")
    if mode == "im2col":
        return max(int(form["dim"][0]) - 2, 0)
    return 2 if mode in ("im2col::w", "im2col::w::128") else 0


def _tensor_map(form: Form) -> tuple[Operand, ...]:
    """``[tensorMap, tensorCoords]``: the tensor map's address and the ``.s32`` coordinates."""
    return (TENSOR_MAP, *(Operand(f"tensorCoords.{i}", "s32") for i in range(coordinates(form))))


def _im2col(form: Form) -> tuple[Operand, ...]:
    """``im2colInfo``: "16-bit unsigned integers" (wHalo, wOffset; the offsets of the examples are
    ``.u16`` registers)."""
    return tuple(Operand(f"im2colInfo.{i}", "u16") for i in range(im2col_offsets(form)))


def _tensor_load_operands(form: Form) -> tuple[Operand, ...]:
    """``[dstMem], [tensorMap, tensorCoords], [mbar]{, im2colInfo}{, ctaMask}{, cache-policy}``."""
    return (DST, *_tensor_map(form), MBAR, *_im2col(form), *_multicast(form), *_policy(form))


def _tensor_store_operands(form: Form) -> tuple[Operand, ...]:
    """``[tensorMap, tensorCoords], [srcMem]{, cache-policy}``."""
    return (*_tensor_map(form), SRC, *_policy(form))


def _prefetch_tensor_operands(form: Form) -> tuple[Operand, ...]:
    """``[tensorMap, tensorCoords]{, im2colInfo}{, cache-policy}``."""
    return (*_tensor_map(form), *_im2col(form), *_policy(form))


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


def _no_cache_hint(section: str) -> Rule:
    """The lines between two shared spaces have no ``{.level::cache_hint}``: "Support for
    .level::cache_hint qualifier is only when at least one of the .src or .dst state spaces is
    .global"."""
    return forbid(
        "cache_hint",
        lambda f: True,
        '.L2::cache_hint is not allowed between .shared::cta and .shared::cluster: "the qualifier .level::cache_hint is only '
        'supported when at least one of the .src or .dst state spaces is the .global state space"',
        section,
    )


def _no_multicast(section: str) -> Rule:
    """Only the lines to .shared::cluster have ``{.multicast}``."""
    return forbid(
        "multicast",
        lambda f: True,
        '.multicast::cluster is not allowed with .shared::cta as the destination: only the ".shared::cluster" destination line '
        'has {.multicast} ("copy data from global memory to shared memory of multiple CTAs in the cluster")',
        section,
    )


def _tensor_rules(section: str) -> tuple[Rule, ...]:
    """The dimensions that a load mode needs."""
    return (
        Rule(
            lambda f: f.get("load_mode") in IM2COL_MODES and int(f["dim"][0]) < 3,
            lambda f: f'.{f["load_mode"]} with .{f["dim"]}: "In .im2col and .im2col::* modes, the tensor has to be at least 3-dimensional"',
            section,
        ),
        Rule(
            lambda f: f.get("load_mode") in FOUR_ROWS and f["dim"] != "2d",
            lambda f: (
                f'.{f["load_mode"]} with .{f["dim"]}: the mode moves "four rows" of "a 2D source tensor" into "a 2D destination tensor" (or back): it takes .2d'
            ),
            section,
        ),
    )


#: §9.7.9.25.4.2, the table of the valid combinations of .redOp and element type.
REDUCTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "shared::cluster": {
        "add": ("u32", "s32", "u64"),
        "min": ("u32", "s32"),
        "max": ("u32", "s32"),
        "inc": ("u32",),
        "dec": ("u32",),
        "and": ("b32",),
        "or": ("b32",),
        "xor": ("b32",),
    },
    "global": {
        "add": ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"),
        "min": ("u32", "s32", "u64", "s64", "f16", "bf16"),
        "max": ("u32", "s32", "u64", "s64", "f16", "bf16"),
        "inc": ("u32",),
        "dec": ("u32",),
        "and": ("b32", "b64"),
        "or": ("b32", "b64"),
        "xor": ("b32", "b64"),
    },
}


def _reduction_rules(dst: str) -> tuple[Rule, ...]:
    table = REDUCTIONS[dst]

    def allowed(f: Form) -> tuple[str, ...]:
        return table[f["redop"]]

    rules = [
        Rule(
            lambda f: f["type"] not in allowed(f),
            lambda f: (
                f".{f['redop']} does not take .{f['type']} with .{dst} as the destination: the table of valid .redOp and element "
                f"type combinations gives .{f['redop']} {', '.join('.' + t for t in allowed(f))}"
            ),
            REDUCE,
        )
    ]
    if dst == "global":
        rules.insert(
            0,
            Rule(
                lambda f: f["redop"] == "add" and f["type"] in ("f16", "bf16"),
                lambda f: (
                    f'.add.{f["type"]} needs .noftz: "cp.reduce.async.bulk.add.f16 and cp.reduce.async.bulk.add.bf16 operations require '
                    '.noftz qualifier" (cp.reduce.async.bulk.dst.src.completion_mechanism{.level::cache_hint}.add.noftz.type)'
                ),
                REDUCE,
            ),
        )
    return tuple(rules)


def _replace_type_rule() -> Rule:
    """§9.7.9.26: "When .field is specified as .global_address or .global_stride, .type must be
    .b64. Otherwise, .type must be .b32"."""
    wide = ("global_address", "global_stride")
    return Rule(
        lambda f: f["type"] != ("b64" if f["field"] in wide else "b32"),
        lambda f: (
            f'.{f["field"]} with .{f["type"]}: "When .field is specified as .global_address or .global_stride, .type must be .b64. '
            'Otherwise, .type must be .b32"'
        ),
        TENSORMAP_REPLACE,
    )


# ---------------------------------------------------------------------------------------------
# §9.7.9.25.3 cp.async, commit_group, wait_group, wait_all
# ---------------------------------------------------------------------------------------------

CP_ASYNC_SLOTS = (
    ASYNC,
    Slot("cop", ("ca", "cg"), required=True),
    # ".shared{::cta}.global": both slots admit the three spaces, so that the parser keeps their order.
    Slot("dst_ss", ("shared", "shared::cta", "global"), required=True),
    Slot("src_ss", ("shared", "shared::cta", "global"), required=True),
    CACHE_HINT,
    Slot("prefetch_size", ("L2::64B", "L2::128B", "L2::256B")),
)
#: ".shared{::cta}": the destination is .shared or .shared::cta, the source .global.
CP_ASYNC_DIRECTION = Rule(
    lambda f: f["dst_ss"] == "global" or f["src_ss"] != "global",
    lambda f: (
        f".{f['dst_ss']}.{f['src_ss']}: cp.async copies from .global to .shared{{::cta}}, written .shared{{::cta}}.global "
        '("The operand src specifies a location in the global state space and dst specifies a location in the shared state space")'
    ),
    CP_ASYNC,
)


def _cp_async_family(key: str, extra: tuple[Operand, ...], summary: str, syntax: str = "") -> Family:
    return Family(
        opcode="cp",
        key=key,
        section=CP_ASYNC,
        slots=CP_ASYNC_SLOTS,
        operands=_cp_async_operands(extra),
        rules=(CP_ASYNC_DIRECTION,),
        target=_cp_async_target("ignore_src" in key),
        summary=summary,
        operand_syntax=syntax,
        addresses=("dstMem", "srcMem"),
    )


CP_ASYNC_FAMILIES = [
    _cp_async_family("cp.async", (), "Start copying cp-size bytes from global [srcMem] to shared [dstMem] asynchronously (.ca: cached in L1; .cg: L2 only)."),
    _cp_async_family(
        "cp.async.src_size",
        (Operand("src_size", "u32"),),
        "Start copying src-size bytes from global [srcMem] to shared [dstMem] asynchronously, zero-filling up to cp-size bytes.",
        "[dstMem], [srcMem], cp_size, src_size",
    ),
    _cp_async_family(
        "cp.async.ignore_src",
        (Operand("ignore_src", "pred"),),
        "Start copying cp-size bytes from global [srcMem] to shared [dstMem] asynchronously, or cp-size zero bytes if ignore-src.",
        "[dstMem], [srcMem], cp_size, ignore_src",
    ),
]

CP_ASYNC_COMMIT_GROUP = Family(
    opcode="cp",
    key="cp.async.commit_group",
    section=COMMIT_GROUP,
    slots=(ASYNC, _word("commit_group")),
    operands=lambda f: (),
    # "Introduced in PTX ISA version 7.0", "Requires sm_80 or higher" (and for wait_group, wait_all).
    target=target_at((7, 0), 80),
    summary="Commit the thread's uncommitted cp.async operations as a new cp.async-group.",
)

CP_ASYNC_WAIT_GROUP = Family(
    opcode="cp",
    key="cp.async.wait_group",
    section=WAIT_GROUP,
    slots=(ASYNC, _word("wait_group")),
    operands=lambda f: (GROUPS,),
    target=target_at((7, 0), 80),
    summary="Wait until at most N of the thread's most recent cp.async-groups are pending.",
)

CP_ASYNC_WAIT_ALL = Family(
    opcode="cp",
    key="cp.async.wait_all",
    section=WAIT_GROUP,
    slots=(ASYNC, _word("wait_all")),
    operands=lambda f: (),
    target=target_at((7, 0), 80),
    summary="Wait for all the thread's prior cp.async operations (cp.async.commit_group; cp.async.wait_group 0).",
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.25.4 cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch
# ---------------------------------------------------------------------------------------------

MBARRIER_COMPLETION = _slot("completion_mechanism", COMPLETE_TX)
GROUP_COMPLETION = _slot("completion_mechanism", BULK_GROUP)
MULTICAST_SLOT = Slot("multicast", (MULTICAST,))

BULK_GLOBAL_TO_SHARED_CTA = Family(
    opcode="cp",
    key="cp.async.bulk.global_to_shared_cta",
    section=BULK,
    slots=(ASYNC, BULK_WORD, *_spaces("shared::cta", "global"), MBARRIER_COMPLETION, MULTICAST_SLOT, CACHE_HINT),
    operands=_bulk_operands,
    rules=(_direction("shared::cta", "global", BULK), _no_multicast(BULK)),
    target=_bulk_target,
    summary="Start copying size bytes from global [srcMem] to the executing CTA's shared [dstMem]; complete-tx on [mbar].",
    addresses=("dstMem", "srcMem", "mbar"),
)

BULK_GLOBAL_TO_SHARED_CLUSTER = Family(
    opcode="cp",
    key="cp.async.bulk.global_to_shared_cluster",
    section=BULK,
    slots=(ASYNC, BULK_WORD, *_spaces("shared::cluster", "global"), MBARRIER_COMPLETION, MULTICAST_SLOT, CACHE_HINT),
    operands=_bulk_operands,
    rules=(_direction("shared::cluster", "global", BULK),),
    target=_bulk_target,
    summary="Start copying size bytes from global [srcMem] to cluster shared [dstMem] (of each CTA of ctaMask with .multicast::cluster); complete-tx on [mbar].",
    addresses=("dstMem", "srcMem", "mbar"),
)

BULK_SHARED_TO_CLUSTER = Family(
    opcode="cp",
    key="cp.async.bulk.shared_to_cluster",
    section=BULK,
    slots=(ASYNC, BULK_WORD, *_spaces("shared::cluster", "shared::cta"), MBARRIER_COMPLETION, CACHE_HINT),
    operands=_bulk_operands,
    rules=(_direction("shared::cluster", "shared::cta", BULK), _no_cache_hint(BULK)),
    target=_bulk_target,
    summary="Start copying size bytes from the CTA's shared [srcMem] to another CTA's shared [dstMem] in the cluster; complete-tx on [mbar].",
    addresses=("dstMem", "srcMem", "mbar"),
)

BULK_SHARED_TO_GLOBAL = Family(
    opcode="cp",
    key="cp.async.bulk.shared_to_global",
    section=BULK,
    slots=(ASYNC, BULK_WORD, *_spaces("global", "shared::cta"), GROUP_COMPLETION, CACHE_HINT, _slot("cp_mask", "cp_mask", required=False)),
    operands=_bulk_operands,
    rules=(_direction("global", "shared::cta", BULK),),
    target=_bulk_target,
    summary="Start copying size bytes from the CTA's shared [srcMem] to global [dstMem] (the bytes byteMask selects of each 16, with .cp_mask), in a bulk async-group.",
    addresses=("dstMem", "srcMem"),
)

REDUCE_SHARED_TO_CLUSTER = Family(
    opcode="cp",
    key="cp.reduce.async.bulk.shared_to_cluster",
    section=REDUCE,
    slots=(
        REDUCE_WORD,
        ASYNC,
        BULK_WORD,
        *_spaces("shared::cluster", "shared::cta"),
        MBARRIER_COMPLETION,
        CACHE_HINT,
        Slot("redop", REDOPS, required=True),
        _slot("type", "b32", "u32", "s32", "b64", "u64"),
    ),
    operands=_bulk_operands,
    rules=(_direction("shared::cluster", "shared::cta", REDUCE), _no_cache_hint(REDUCE), *_reduction_rules("shared::cluster")),
    target=BULK_TARGET,
    summary="Start reducing (.redOp) the size bytes of .type elements of the CTA's shared [srcMem] into another CTA's shared [dstMem]; complete-tx on [mbar].",
    addresses=("dstMem", "srcMem", "mbar"),
)

REDUCE_SHARED_TO_GLOBAL = Family(
    opcode="cp",
    key="cp.reduce.async.bulk.shared_to_global",
    section=REDUCE,
    slots=(
        REDUCE_WORD,
        ASYNC,
        BULK_WORD,
        *_spaces("global", "shared::cta"),
        GROUP_COMPLETION,
        CACHE_HINT,
        Slot("redop", REDOPS, required=True),
        _slot("type", "f16", "bf16", "b32", "u32", "s32", "b64", "u64", "s64", "f32", "f64"),
    ),
    operands=_bulk_operands,
    rules=(_direction("global", "shared::cta", REDUCE), *_reduction_rules("global")),
    target=BULK_TARGET,
    summary="Start reducing (.redOp) the size bytes of .type elements of the CTA's shared [srcMem] into global [dstMem], in a bulk async-group.",
    addresses=("dstMem", "srcMem"),
)

REDUCE_SHARED_TO_GLOBAL_NOFTZ = Family(
    opcode="cp",
    key="cp.reduce.async.bulk.shared_to_global.noftz",
    section=REDUCE,
    slots=(
        REDUCE_WORD,
        ASYNC,
        BULK_WORD,
        *_spaces("global", "shared::cta"),
        GROUP_COMPLETION,
        CACHE_HINT,
        _slot("redop", "add"),
        _word("noftz"),
        _slot("type", "f16", "bf16"),
    ),
    operands=_bulk_operands,
    rules=(_direction("global", "shared::cta", REDUCE),),
    target=BULK_TARGET,
    summary="Start adding the .f16 or .bf16 elements of the CTA's shared [srcMem] into global [dstMem], keeping subnormals, in a bulk async-group.",
    addresses=("dstMem", "srcMem"),
)

BULK_PREFETCH = Family(
    opcode="cp",
    key="cp.async.bulk.prefetch",
    section=PREFETCH,
    slots=(ASYNC, BULK_WORD, PREFETCH_WORD, L2, _slot("src_ss", "global"), CACHE_HINT),
    operands=_prefetch_operands,
    target=BULK_TARGET,
    summary="Hint: start prefetching size bytes of global [srcMem] into the L2 cache.",
    addresses=("srcMem",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.25.5 tensor copies
# ---------------------------------------------------------------------------------------------

LOAD_MODE = Slot("load_mode", LOAD_MODES)
CTA_GROUP = Slot("cta_group", CTA_GROUPS)

TENSOR_GLOBAL_TO_SHARED_CTA = Family(
    opcode="cp",
    key="cp.async.bulk.tensor.global_to_shared_cta",
    section=TENSOR,
    slots=(ASYNC, BULK_WORD, TENSOR_WORD, DIM, *_spaces("shared::cta", "global"), LOAD_MODE, MBARRIER_COMPLETION, MULTICAST_SLOT, CTA_GROUP, CACHE_HINT),
    operands=_tensor_load_operands,
    rules=(_direction("shared::cta", "global", TENSOR), _no_multicast(TENSOR), *_tensor_rules(TENSOR)),
    target=_tensor_target,
    summary="Start copying the box of the tensor tensorMap at tensorCoords from global memory to the executing CTA's shared [dstMem]; complete-tx on [mbar].",
    addresses=("dstMem", "tensorMap", "mbar"),
)

TENSOR_GLOBAL_TO_SHARED_CLUSTER = Family(
    opcode="cp",
    key="cp.async.bulk.tensor.global_to_shared_cluster",
    section=TENSOR,
    slots=(ASYNC, BULK_WORD, TENSOR_WORD, DIM, *_spaces("shared::cluster", "global"), LOAD_MODE, MBARRIER_COMPLETION, MULTICAST_SLOT, CTA_GROUP, CACHE_HINT),
    operands=_tensor_load_operands,
    rules=(_direction("shared::cluster", "global", TENSOR), *_tensor_rules(TENSOR)),
    target=_tensor_target,
    summary="Start copying the box of the tensor tensorMap at tensorCoords from global memory to cluster shared [dstMem] (of each CTA of ctaMask with .multicast::cluster); complete-tx on [mbar].",
    addresses=("dstMem", "tensorMap", "mbar"),
)

TENSOR_SHARED_TO_GLOBAL = Family(
    opcode="cp",
    key="cp.async.bulk.tensor.shared_to_global",
    section=TENSOR,
    slots=(ASYNC, BULK_WORD, TENSOR_WORD, DIM, *_spaces("global", "shared::cta"), Slot("load_mode", STORE_MODES), GROUP_COMPLETION, CTA_GROUP, CACHE_HINT),
    operands=_tensor_store_operands,
    rules=(
        _direction("global", "shared::cta", TENSOR),
        forbid(
            "cta_group",
            lambda f: True,
            lambda f: (
                f'.{f["cta_group"]} is not allowed with .bulk_group: "The modifier .cta_group can only be specified with the mbarrier based completion mechanism"'
            ),
            TENSOR,
        ),
        *_tensor_rules(TENSOR),
    ),
    target=_tensor_target,
    summary="Start copying the CTA's shared [srcMem] to the box of the tensor tensorMap at tensorCoords in global memory, in a bulk async-group.",
    addresses=("tensorMap", "srcMem"),
)

REDUCE_TENSOR_SHARED_TO_GLOBAL = Family(
    opcode="cp",
    key="cp.reduce.async.bulk.tensor.shared_to_global",
    section=REDUCE_TENSOR,
    slots=(
        REDUCE_WORD,
        ASYNC,
        BULK_WORD,
        TENSOR_WORD,
        DIM,
        *_spaces("global", "shared::cta"),
        # ".redOp = { .add, .min, .max, .inc, .dec, .and, .or, .xor }": the element type is the tensor map's.
        Slot("redop", ("add", "min", "max", "inc", "dec", "and", "or", "xor"), required=True),
        Slot("load_mode", ("tile", "im2col_no_offs")),
        GROUP_COMPLETION,
        CACHE_HINT,
    ),
    operands=_tensor_store_operands,
    rules=(_direction("global", "shared::cta", REDUCE_TENSOR), *_tensor_rules(REDUCE_TENSOR)),
    target=BULK_TARGET,
    summary="Start reducing (.redOp) the CTA's shared [srcMem] into the box of the tensor tensorMap at tensorCoords in global memory, in a bulk async-group.",
    addresses=("tensorMap", "srcMem"),
)

PREFETCH_TENSOR_FAMILY = Family(
    opcode="cp",
    key="cp.async.bulk.prefetch.tensor",
    section=PREFETCH_TENSOR,
    slots=(ASYNC, BULK_WORD, PREFETCH_WORD, TENSOR_WORD, DIM, L2, _slot("src_ss", "global"), LOAD_MODE, CACHE_HINT),
    operands=_prefetch_tensor_operands,
    rules=_tensor_rules(PREFETCH_TENSOR),
    target=_prefetch_tensor_target,
    summary="Hint: start prefetching the box of the tensor tensorMap at tensorCoords into the L2 cache.",
    addresses=("tensorMap",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.25.6 cp.async.bulk.commit_group, cp.async.bulk.wait_group
# ---------------------------------------------------------------------------------------------

BULK_COMMIT_GROUP = Family(
    opcode="cp",
    key="cp.async.bulk.commit_group",
    section=BULK_COMMIT,
    slots=(ASYNC, BULK_WORD, _word("commit_group")),
    operands=lambda f: (),
    target=BULK_TARGET,
    summary="Commit the thread's uncommitted bulk_group copies, reductions and prefetches as a new bulk async-group.",
)

BULK_WAIT_GROUP = Family(
    opcode="cp",
    key="cp.async.bulk.wait_group",
    section=BULK_WAIT,
    slots=(ASYNC, BULK_WORD, _word("wait_group"), _slot("read", "read", required=False)),
    operands=lambda f: (GROUPS,),
    target=BULK_TARGET,
    summary="Wait until at most N of the thread's most recent bulk async-groups are pending (with .read: until their sources have been read).",
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.26 tensormap.replace
# ---------------------------------------------------------------------------------------------

#: ".field1 = { .global_address, .rank }"; ".field2 = { .box_dim, .global_dim, .global_stride,
#: .element_stride }"; ".field3 = { .elemtype, .interleave_layout, .swizzle_mode,
#: .swizzle_atomicity, .fill_mode }".
FIELDS = {
    "field1": ("global_address", "rank"),
    "field2": ("box_dim", "global_dim", "global_stride", "element_stride"),
    "field3": ("elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"),
}
TMAP = Operand("tmap", "u64")


def _replace_operands(ordinal: bool) -> Callable[[Form], tuple[Operand, ...]]:
    """``[addr], {ord, }new_val``: "The immediate integer operand ord specifies the ordinal of the
    field across the rank of the tensor"; "The operand new_val has the type .type"."""
    return lambda f: (TMAP, *((Operand("ord", "u32"),) if ordinal else ()), Operand("new_val", f["type"]))


def _replace_family(name: str) -> Family:
    meaning = {
        "field1": "the tensor's global address or rank",
        "field2": "the ord-th dimension's box size, size, stride or element stride",
        "field3": "an enumerated field (new_val an immediate of Table 32)",
    }[name]
    return Family(
        opcode="tensormap",
        key=f"tensormap.replace.tile.{name}",
        section=TENSORMAP_REPLACE,
        slots=(
            _word("replace"),
            _slot("mode", "tile"),
            Slot("field", FIELDS[name], required=True),
            Slot("ss", ("global", "shared::cta")),
            _word("b1024"),
            _slot("type", "b32", "b64"),
        ),
        operands=_replace_operands(name == "field2"),
        rules=(_replace_type_rule(),),
        target=_tensormap_target,
        summary=f"Replace {meaning} of the 1024-bit tile-mode tensor map at [tmap] with new_val.",
        addresses=("tmap",),
    )


TENSORMAP_REPLACE_FAMILIES = [_replace_family(name) for name in FIELDS]


FAMILIES: list[Family] = [
    *CP_ASYNC_FAMILIES,
    CP_ASYNC_COMMIT_GROUP,
    CP_ASYNC_WAIT_GROUP,
    CP_ASYNC_WAIT_ALL,
    BULK_GLOBAL_TO_SHARED_CTA,
    BULK_GLOBAL_TO_SHARED_CLUSTER,
    BULK_SHARED_TO_CLUSTER,
    BULK_SHARED_TO_GLOBAL,
    REDUCE_SHARED_TO_CLUSTER,
    REDUCE_SHARED_TO_GLOBAL,
    REDUCE_SHARED_TO_GLOBAL_NOFTZ,
    BULK_PREFETCH,
    TENSOR_GLOBAL_TO_SHARED_CTA,
    TENSOR_GLOBAL_TO_SHARED_CLUSTER,
    TENSOR_SHARED_TO_GLOBAL,
    REDUCE_TENSOR_SHARED_TO_GLOBAL,
    PREFETCH_TENSOR_FAMILY,
    BULK_COMMIT_GROUP,
    BULK_WAIT_GROUP,
    *TENSORMAP_REPLACE_FAMILIES,
]


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


#: The directions (.dst, .src) of the bulk copies, the bulk reductions, the tensor copies and the
#: tensor reductions (keyed by whether the text has .reduce and .tensor), with their completion
#: mechanisms (the tables of §9.7.9.25.4.1, §9.7.9.25.4.2 and §9.7.9.25.5.2).
DIRECTIONS: dict[tuple[bool, bool], dict[tuple[str, str], str]] = {
    (False, False): {
        ("shared::cta", "global"): COMPLETE_TX,
        ("shared::cluster", "global"): COMPLETE_TX,
        ("shared::cluster", "shared::cta"): COMPLETE_TX,
        ("global", "shared::cta"): BULK_GROUP,
    },
    (True, False): {("shared::cluster", "shared::cta"): COMPLETE_TX, ("global", "shared::cta"): BULK_GROUP},
    (False, True): {("shared::cta", "global"): COMPLETE_TX, ("shared::cluster", "global"): COMPLETE_TX, ("global", "shared::cta"): BULK_GROUP},
    (True, True): {("global", "shared::cta"): BULK_GROUP},
}


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` for ``cp`` and ``tensormap``, in
    the manual's words where the nearest line would only say which qualifier it does not take:

    * ``.noftz`` with another operation than ``.add``, or ``.add.noftz`` of another type than
      ``.f16``/``.bf16``: the line is ``...add.noftz.type``, ".type = { .f16, .bf16 }";
    * a type qualifier on cp.reduce.async.bulk.tensor: "The type of each tensor data element ... is
      specified in Tensor-map";
    * a bulk or tensor copy with the completion mechanism of another direction;
    * ``tensormap.replace`` with a field of another line's operands is the family's own message.

    Texts of cp.async.mbarrier.arrive (§9.7.13.15.15) get None."""
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    opcode, *tokens = head.split(".")
    if opcode != "cp" or "mbarrier" in tokens or "async" not in tokens:
        return None
    if "reduce" in tokens and "noftz" in tokens:
        others = [t for t in tokens if t in REDOPS and t != "add"]
        if others:
            return (
                f'.noftz is not allowed with .{others[0]}: the .noftz line is "cp.reduce.async.bulk.dst.src.completion_mechanism'
                '{.level::cache_hint}.add.noftz.type" (.add only)',
                REDUCE,
            )
        wrong = [t for t in tokens if (t[:1] in "bsuf" and t[1:].isdigit()) or t in ("f16x2", "bf16x2")]
        if wrong:
            return f'.add.noftz does not take .{wrong[0]}: ".type = {{ .f16, .bf16 }}" on the .noftz line', REDUCE
    if "reduce" in tokens and "tensor" in tokens:
        types = [t for t in tokens if (t[:1] in "bsuf" and t[1:].isdigit()) or t == "bf16"]
        if types:
            return (
                f'.{types[0]} is not a qualifier of cp.reduce.async.bulk.tensor: "The type of each tensor data element in the source and '
                'the destination tensor is specified in Tensor-map"',
                REDUCE_TENSOR,
            )
    if "bulk" in tokens and "prefetch" not in tokens:
        spaces = [t for t in tokens if t in ("global", "shared::cta", "shared::cluster")]
        mechanism = COMPLETE_TX if COMPLETE_TX in tokens else BULK_GROUP if BULK_GROUP in tokens else None
        kind = ("reduce" in tokens, "tensor" in tokens)
        wanted = DIRECTIONS[kind].get((spaces[0], spaces[1])) if len(spaces) == 2 else None
        if wanted is not None and mechanism is not None and mechanism != wanted:
            section = {(False, False): BULK, (True, False): REDUCE, (False, True): TENSOR, (True, True): REDUCE_TENSOR}[kind]
            return (
                f".{mechanism} is not the completion mechanism of .{spaces[0]}.{spaces[1]}: the copies to .global complete with .bulk_group, "
                "those to shared memory with .mbarrier::complete_tx::bytes (the table of completion mechanisms)",
                section,
            )
    return None
