"""§9.7.9.25 the asynchronous copies as functions on memory images -- ``(form, state, *sources) ->
((), new state)``: the bytes each copy moves where, and the complete-tx it signals.

A copy here is the state once it has completed: the functions write its destination bytes (and
perform the complete-tx of ``.mbarrier::complete_tx::bytes`` on the mbarrier object through
:func:`ptxspec.semantics.mbarrier.complete_tx_on`). When the copy's writes become visible to other
threads, and what the commit/wait instructions order, is the memory model's (§8, the async proxy:
:mod:`ptxspec.memory_model`); for the state of one thread they change nothing.
"""

from __future__ import annotations

from ptxspec.profiles import Profile
from ptxspec.semantics.instructions import THREAD_ADDRESSES, THREAD_MEMORY, semantic
from ptxspec.semantics.memory_access import Place, locate, read, write, write_element
from ptxspec.semantics.results import Result
from ptxspec.semantics.state import State
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError

CP_ASYNC = "9.7.9.25.3.1"
BULK = "9.7.9.25.4.1"
REDUCE_BULK = "9.7.9.25.4.2"

#: §9.7.9.25.4.1: "the operand size ... must be a multiple of 16", and the addresses "must be
#: aligned to 16 bytes".
BULK_ALIGNMENT = 16


def _copy(form: Form, state: State, dst: int, src: int, size: int, *, alignment: int | None = None) -> tuple[State, Place]:
    """The state with the ``size`` bytes at ``src`` (the form's ``src_ss``) written at ``dst`` (its
    ``dst_ss``), and where they went. An indeterminate source byte stays indeterminate."""
    source = locate(form, state, src, size, slot="src_ss", alignment=alignment)
    target = locate(form, state, dst, size, slot="dst_ss", alignment=alignment)
    data, unknown = read(state, source, size)
    new = write(state, target, data)
    for i in unknown:
        new = write(new, Place(target.space, target.address + i, target.rank), b"\0", indeterminate=True)
    return new, target


@semantic("cp.async", "cp.async.src_size", "cp.async.ignore_src", operands=THREAD_MEMORY)
def cp_async(form: Form, state: State, dst: int, src: int, cp_size: int, *rest: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.3.1 cp.async: "initiates an asynchronous copy operation from the location specified
    by source address operand src to the location specified by destination address operand dst.
    Operand src specifies a location in the global state space and dst specifies a location in the
    shared state space." "cp-size ... can only be 4, 8 and 16"; with src-size, "the remaining bytes
    in the destination dst are filled with zeros. Specifying src-size larger than cp-size results in
    undefined behavior" (refused); with ignore-src true, "zeros are copied to destination dst".
    ``.ca``/``.cg``, prefetch sizes and the cache policy are hints."""
    if cp_size not in (4, 8, 16):
        raise OperandError(f"cp-size is {cp_size}; it can only be 4, 8 and 16", where=form.text, section=CP_ASYNC)
    if form["cop"] == "cg" and cp_size != 16:
        raise OperandError('.cg with cp-size {cp_size}: "cp-size ... must be 16" with .cg', where=form.text, section=CP_ASYNC)
    copied = cp_size
    if form.family.key == "cp.async.src_size":
        copied = rest[0]
        if copied > cp_size:
            raise OperandError(f"src-size {copied} is larger than cp-size {cp_size}: the behavior is undefined", where=form.text, section=CP_ASYNC)
    elif form.family.key == "cp.async.ignore_src" and rest[0]:
        copied = 0
    target = locate(form, state, dst, cp_size, slot="dst_ss")
    if copied:
        state, _ = _copy(form, state, dst, src, copied, alignment=cp_size)
    return (), write(state, Place(target.space, target.address + copied, target.rank), bytes(cp_size - copied))


@semantic(
    "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", operands=THREAD_ADDRESSES
)
def async_group(form: Form, state: State, *n: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.3.2-3, §9.7.9.25.6.1-2: commit_group "commits all prior initiated but uncommitted
    ... operations into a ... group", wait_group "will cause the executing thread to wait until
    only N or fewer of the most recent ... groups are pending and all the prior ... groups
    committed by the executing threads are complete". A copy here is complete when it is issued, so
    for one thread's state these change nothing; what they order is the memory model's."""
    return (), state


def _bulk_size(form: Form, size: int) -> None:
    if size % BULK_ALIGNMENT or size == 0:
        raise OperandError(f"size is {size}; it must be a positive multiple of 16", where=form.text, section=form.family.section)


def _mbarrier_complete(form: Form, state: State, mbar: int, size: int) -> State:
    from ptxspec.semantics import mbarrier

    return mbarrier.complete_tx_on(form, state, mbar, size, slot="dst_ss")


def _cta_address(state: State, address: int, rank: int) -> int:
    """The .shared::cluster address of the same offset in the shared memory of the CTA of ``rank``
    ("each destination CTA ... at the same CTA-relative offset as dstMem", §9.7.9.25.4.1)."""
    stride = state.addresses.cluster_stride
    return state.addresses.cluster_base + rank * stride + (address - state.addresses.cluster_base) % stride


@semantic(
    "cp.async.bulk.global_to_shared_cta",
    "cp.async.bulk.global_to_shared_cluster",
    "cp.async.bulk.shared_to_cluster",
    "cp.async.bulk.shared_to_global",
    operands=THREAD_MEMORY,
)
def cp_async_bulk(form: Form, state: State, dst: int, src: int, size: int, *rest: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.4.1 cp.async.bulk: "initiates an asynchronous copy operation from the location
    specified by source address operand srcMem to the location specified by destination address
    operand dstMem", ``size`` bytes (a multiple of 16, both addresses aligned to 16). With
    ``.mbarrier::complete_tx::bytes`` the copy then "performs a complete-tx operation on the
    mbarrier object ... with completeCount equal to the amount of data copied in bytes"; with
    ``.multicast::cluster`` the bytes are "copied to the same CTA-relative offset as dstMem in the
    shared memory of each destination CTA" named by ``ctaMask``, and "the mbarrier signal is also
    multicast to the same CTA-relative offset as mbar". With ``.cp_mask``, "the i-th bit in the
    16-bit wide byteMask operand specifies whether the i-th byte of each 16-byte wide chunk of
    source data is copied to the destination". ``.bulk_group`` completion changes no byte."""
    _bulk_size(form, size)
    key = form.family.key
    if key == "cp.async.bulk.shared_to_global":
        if form.get("cp_mask"):
            return (), _masked_copy(form, state, dst, src, size, rest[0])
        new, _ = _copy(form, state, dst, src, size, alignment=BULK_ALIGNMENT)
        return (), new
    mbar = rest[0]
    if form.get("multicast"):
        mask = rest[1]
        ranks = [r for r in range(16) if mask >> r & 1]
        if not ranks or max(ranks) >= state.addresses.cluster_ctas:
            raise OperandError(
                f"ctaMask {mask:#06x} names no CTA or a CTA outside the cluster of {state.addresses.cluster_ctas}", where=form.text, section=BULK
            )
        for rank in ranks:
            state, _ = _copy(form, state, _cta_address(state, dst, rank), src, size, alignment=BULK_ALIGNMENT)
            state = _mbarrier_complete(form, state, _cta_address(state, mbar, rank), size)
        return (), state
    state, _ = _copy(form, state, dst, src, size, alignment=BULK_ALIGNMENT)
    return (), _mbarrier_complete(form, state, mbar, size)


def _masked_copy(form: Form, state: State, dst: int, src: int, size: int, mask: int) -> State:
    source = locate(form, state, src, size, slot="src_ss", alignment=BULK_ALIGNMENT)
    target = locate(form, state, dst, size, slot="dst_ss", alignment=BULK_ALIGNMENT)
    data, unknown = read(state, source, size)
    for i in range(size):
        if mask >> (i % 16) & 1:
            state = write(state, Place(target.space, target.address + i, target.rank), data[i : i + 1], indeterminate=i in unknown)
    return state


def _reduce_element(form: Form) -> tuple[str, int]:
    kind = form["type"]
    return kind, 16 if kind == "b128" else (2 if kind in ("f16", "bf16") else int(kind[1:]) // 8)


@semantic(
    "cp.reduce.async.bulk.shared_to_cluster", "cp.reduce.async.bulk.shared_to_global", "cp.reduce.async.bulk.shared_to_global.noftz", operands=THREAD_MEMORY
)
def cp_reduce_async_bulk(form: Form, state: State, dst: int, src: int, size: int, *rest: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.4.2 cp.reduce.async.bulk: "initiates an element-wise asynchronous reduction
    operation with elements from source memory location specified by srcMem and destination memory
    location specified by dstMem ... dstMem[i] = dstMem[i] op srcMem[i]" for each ``.type`` element
    of the ``size`` bytes, through the operations of atom/red
    (:func:`ptxspec.semantics.atomics.reduction_value`: the integer table; ``.add.f32`` "flushes
    subnormal inputs and results to sign-preserving zero" -- the sm_90 profile keeps them, as the
    H100 does --, the half types "preserve input and result subnormals"). A value the manual leaves
    open (an f32 NaN) leaves its bytes indeterminate. "Each reduction operation performed by
    cp.reduce.async.bulk has individually .relaxed.gpu memory ordering semantics." With an mbarrier
    the complete-tx counts the bytes."""
    from ptxspec.semantics.atomics import reduction_value

    _bulk_size(form, size)
    kind, width = _reduce_element(form)
    source = locate(form, state, src, size, slot="src_ss", alignment=BULK_ALIGNMENT)
    target = locate(form, state, dst, size, slot="dst_ss", alignment=BULK_ALIGNMENT)
    values, unknown_source = read(state, source, size)
    olds, unknown_target = read(state, target, size)
    if unknown_source or unknown_target:
        raise OperandError("the reduction reads an indeterminate value", where=form.text, section=REDUCE_BULK)
    for i in range(0, size, width):
        old = int.from_bytes(olds[i : i + width], "little")
        value = int.from_bytes(values[i : i + width], "little")
        state = write_element(state, Place(target.space, target.address + i, target.rank), reduction_value(form["redop"], old, value, (kind,), profile), width)
    if (form.get("completion_mechanism") or "").startswith("mbarrier"):
        state = _mbarrier_complete(form, state, rest[0], size)
    return (), state


@semantic("cp.async.bulk.prefetch", operands=THREAD_ADDRESSES)
def cp_async_bulk_prefetch(form: Form, state: State, src: int, size: int, *cache_policy: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.4.3 cp.async.bulk.prefetch: "initiates an asynchronous prefetch of data from the
    location specified by source address operand srcMem, in .global state space, to the L2 cache"
    -- a cache holds no value of its own here: nothing changes."""
    return (), state


# ---------------------------------------------------------------------------------------------
# §9.7.9.25.5 the tensor copies, §9.7.9.26 tensormap.replace
# ---------------------------------------------------------------------------------------------

TENSOR_COPY = "9.7.9.25.5.2"
TENSOR_REDUCE = "9.7.9.25.5.3"
TENSORMAP_REPLACE = "9.7.9.26"


def tensor_map_at(form: Form, state: State, address: int):
    """The tensor map whose object lies at ``address`` (§5.5.8: "the tensor-map is a 128-byte
    opaque object"), as the state holds it; refused where it holds none there."""
    for at, tmap in state.tensor_maps:
        if at == address:
            return tmap
    held = ", ".join(f"{a:#x}" for a, _ in state.tensor_maps) or "none"
    raise OperandError(f"the state holds no tensor map at {address:#x} (its tensor maps are at: {held})", where=form.text, section="5.5.8")


def _named(form: Form, sources: tuple[int, ...]) -> dict[str, int | tuple[int, ...]]:
    """The sources by operand name, a braced vector (``tensorCoords``, ``im2colInfo``) as a tuple."""
    out: dict[str, list[int] | int] = {}
    for operand, value in zip(form.inputs, sources):
        stem, _, index = operand.name.partition(".")
        if index:
            out.setdefault(stem, []).append(value)  # type: ignore[union-attr]
        else:
            out[operand.name] = value
    return {k: tuple(v) if isinstance(v, list) else v for k, v in out.items()}


def _signed32(values) -> tuple[int, ...]:
    return tuple(v - (1 << 32) if v >> 31 else v for v in values)


def _box(form: Form, tmap, named: dict, profile: Profile) -> object:
    """The elements a tensor copy moves (§9.7.9.25.5.2: the load mode names how the coordinates
    select them): ``.tile`` (the default) and ``.tile::gather4`` / ``::scatter4`` boxes, ``.im2col``
    with its offsets, ``.im2col_no_offs``."""
    from ptxspec.semantics import tensor_map as tm

    coords = _signed32(named["tensorCoords"])
    mode = form.get("load_mode") or "tile"
    if mode == "tile":
        if tmap.interleave == "none":
            return tm.tile_box(tmap, coords)
        if profile.tensor_interleaved_slices:
            return tm.interleaved_box(tmap, coords)
        # §5.5.6 names the interleaved layouts (NC/8DHWC8, NC/16HWC16) but gives no address of
        # an element; the non-interleaved formula is what an H100 refutes (other bytes, other byte
        # counts, other faults: the tma-more round), so only a chip's profile evaluates these.
        raise tm.NotModelled(
            f"a tile-mode copy with {tmap.interleave} interleave: the manual gives no element address for interleaved layouts "
            f"(profile {profile.name} pins none)",
            where=form.text,
            section=tm.INTERLEAVE,
        )
    if mode in ("tile::gather4", "tile::scatter4"):
        return tm.gather4_box(tmap, coords)
    if mode == "im2col":
        return tm.im2col_box(tmap, coords, tuple(named.get("im2colInfo", ())))
    if mode == "im2col_no_offs":
        return tm.im2col_store_box(tmap, coords)
    return tm.im2col_w_box(tmap, coords, *tuple(named.get("im2colInfo", ())))


def _shared_segment(state: State, rank: int | None):
    from ptxspec.semantics.state import Segment

    if rank == state.addresses.cta_rank:
        return Segment(0, state.shared, state.shared_indeterminate)
    return Segment(0, dict(state.cluster).get(rank, b""))  # type: ignore[arg-type]


def _with_shared_segment(state: State, rank: int | None, segment) -> State:
    import attrs

    if rank == state.addresses.cta_rank:
        return attrs.evolve(state, shared=segment.data, shared_indeterminate=segment.indeterminate)
    if segment.indeterminate:
        raise OperandError("an indeterminate value in another CTA's shared memory is not held by a State", section="5.1.7")
    return attrs.evolve(state, cluster=tuple((r, segment.data if r == rank else b) for r, b in state.cluster))


@semantic("cp.async.bulk.tensor.global_to_shared_cta", "cp.async.bulk.tensor.global_to_shared_cluster", operands=THREAD_MEMORY)
def cp_async_bulk_tensor_load(form: Form, state: State, *sources: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.5.2 cp.async.bulk.tensor, global to shared memory: "initiates an asynchronous copy
    operation on the tensor data from the location in .global state space to the location in the
    .shared::cluster state space", the box that the tensor map (§5.5) and ``tensorCoords`` select
    (:mod:`ptxspec.semantics.tensor_map`: bounding box, traversal strides, swizzle, the
    out-of-bound fill -- the OOB-NaN any NaN, or the one the profile pins,
    :attr:`~ptxspec.profiles.Profile.tensor_oob_nan`), to ``dstMem``; then the complete-tx of the box's bytes on ``mbar``, and with
    ``.multicast::cluster`` the same in each CTA of ``ctaMask`` at the same CTA-relative offsets."""
    from ptxspec.semantics import tensor_map as tm

    named = _named(form, sources)
    tmap = tensor_map_at(form, state, int(named["tensorMap"]))  # type: ignore[arg-type]
    box = _box(form, tmap, named, profile)
    dst, mbar = int(named["dstMem"]), int(named["mbar"])  # type: ignore[arg-type]
    ranks: list[int | None] = [None]
    if form.get("multicast"):
        mask = int(named["ctaMask"])  # type: ignore[arg-type]
        members = [r for r in range(16) if mask >> r & 1]
        if not members or max(members) >= state.addresses.cluster_ctas:
            raise OperandError(
                f"ctaMask {mask:#06x} names no CTA or a CTA outside the cluster of {state.addresses.cluster_ctas}", where=form.text, section=TENSOR_COPY
            )
        ranks = list(members)
    size = box.shared_bytes  # type: ignore[attr-defined]
    for rank in ranks:
        target = dst if rank is None else _cta_address(state, dst, rank)
        place = locate(form, state, target, 1, slot="dst_ss", alignment=1)
        written = tm.load(tmap, box, state.global_memory, place.address)  # type: ignore[arg-type]
        nan = profile.tensor_oob_nan.get(written.nan.format.name) if written.nan is not None else None
        state = _with_shared_segment(state, place.rank, written.written_to(_shared_segment(state, place.rank), nan))
        state = _mbarrier_complete(form, state, mbar if rank is None else _cta_address(state, mbar, rank), size)
    return (), state


@semantic("cp.async.bulk.tensor.shared_to_global", operands=THREAD_MEMORY)
def cp_async_bulk_tensor_store(form: Form, state: State, *sources: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.5.2 cp.async.bulk.tensor, shared to global memory: the box in shared memory at
    ``srcMem`` written to the tensor's elements that ``tensorCoords`` select -- "the out-of-bound
    elements are not written" (:func:`ptxspec.semantics.tensor_map.store`). A chip's profile may
    say otherwise: sm_90 faults on a negative coordinate and writes dimension 0 up to the row's
    bytes rounded up to 16 (:attr:`~ptxspec.profiles.Profile.tensor_store_row_granule`)."""
    import attrs

    from ptxspec.semantics import tensor_map as tm

    named = _named(form, sources)
    tmap = tensor_map_at(form, state, int(named["tensorMap"]))  # type: ignore[arg-type]
    if profile.tensor_store_below_bounds_faults and any(c >> 31 for c in named["tensorCoords"]):  # type: ignore[union-attr]
        raise OperandError(
            f"a tensor coordinate is negative: on {profile.name} this store faults (illegal instruction), where the manual writes the in-bound elements",
            where=form.text,
            section=TENSOR_COPY,
        )
    if profile.tensor_store_row_granule and tmap.rank > 1 and tmap.interleave == "none":
        # the chip bounds dimension 0 a chunk at a time: the row as long as its bytes rounded up
        granule = profile.tensor_store_row_granule * tmap.type.values // tmap.type.global_bytes
        tmap = attrs.evolve(tmap, global_dims=(-(-tmap.global_dims[0] // granule) * granule, *tmap.global_dims[1:]))
    box = _box(form, tmap, named, profile)
    place = locate(form, state, int(named["srcMem"]), 1, slot="src_ss", alignment=1)  # type: ignore[arg-type]
    written = tm.store(tmap, box, _shared_segment(state, place.rank), place.address)  # type: ignore[arg-type]
    return (), attrs.evolve(state, global_memory=written.written_to(state.global_memory))


#: §9.7.9.25.5.3: "the valid combinations of .redOp and element type" (the and/or/xor and inc/dec
#: rows as cp.reduce.async.bulk's table gives them for these types).
TENSOR_REDUCTIONS = {
    "add": ("u32", "s32", "u64", "f32", "f16", "bf16"),
    "min": ("u32", "s32", "u64", "s64", "f16", "bf16"),
    "max": ("u32", "s32", "u64", "s64", "f16", "bf16"),
    "inc": ("u32",),
    "dec": ("u32",),
    "and": ("u32", "s32", "u64", "s64"),
    "or": ("u32", "s32", "u64", "s64"),
    "xor": ("u32", "s32", "u64", "s64"),
}


@semantic("cp.reduce.async.bulk.tensor.shared_to_global", operands=THREAD_MEMORY)
def cp_reduce_async_bulk_tensor(form: Form, state: State, *sources: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.5.3 cp.reduce.async.bulk.tensor: "initiates an asynchronous reduction operation of
    tensor data in the .global state space with tensor data in the .shared::cta state space" --
    each in-bound element of the box: ``global = global op shared``, by the operations of
    cp.reduce.async.bulk (:func:`ptxspec.semantics.atomics.reduction_value`) on the tensor map's
    element type."""
    import numpy as np

    from ptxspec.semantics import tensor_map as tm
    from ptxspec.semantics.atomics import reduction_value

    named = _named(form, sources)
    tmap = tensor_map_at(form, state, int(named["tensorMap"]))  # type: ignore[arg-type]
    kind = tmap.type.name
    if kind not in TENSOR_REDUCTIONS[form["redop"]]:
        allowed = ", ".join("." + t for t in TENSOR_REDUCTIONS[form["redop"]])
        raise OperandError(f".{form['redop']} on a tensor of .{kind}: the valid element types are {allowed}", where=form.text, section=TENSOR_REDUCE)
    box = _box(form, tmap, named, profile)
    place = locate(form, state, int(named["srcMem"]), 1, slot="src_ss", alignment=1)  # type: ignore[arg-type]
    written = tm.store(tmap, box, _shared_segment(state, place.rank), place.address)  # type: ignore[arg-type]
    width = tmap.type.global_bytes
    if written.overlapping:  # each element a read-modify-write: their order would decide the value
        raise OperandError(
            "two elements of the box name the same global bytes; the manual does not order their reductions", where=form.text, section=TENSOR_REDUCE
        )
    if np.asarray(written.undefined).any():
        raise OperandError("the reduction reads an indeterminate value of shared memory", where=form.text, section=TENSOR_REDUCE)
    data = np.asarray(written.data, dtype=np.uint8).reshape(-1, width)
    for address, value in zip(np.asarray(written.addresses).tolist(), data):
        old = int.from_bytes(state.global_memory.read(address, width), "little")
        new = reduction_value(form["redop"], old, int.from_bytes(value.tobytes(), "little"), (kind,), profile)
        state = write_element(state, Place("global", address), new, width)
    return (), state


@semantic("cp.async.bulk.prefetch.tensor", operands=THREAD_ADDRESSES)
def cp_async_bulk_prefetch_tensor(form: Form, state: State, *sources: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.25.5.4 cp.async.bulk.prefetch.tensor: "initiates an asynchronous prefetch operation
    on the tensor data from the location in .global state space into the L2 cache" -- nothing a
    thread can read changes."""
    return (), state


def _replaced(tmap, field: str, ord_: int | None, value: int):
    """``tmap`` with one field replaced (Table 32 maps a ``.field3`` value to its meaning)."""
    import attrs

    from ptxspec.semantics import tensor_map as tm

    def at(values: tuple[int, ...], index: int) -> tuple[int, ...]:
        if not 0 <= index < len(values):
            raise OperandError(f"ord {ord_} is not a dimension of this {tmap.rank}-dimensional tensor map's .{field}", section=TENSORMAP_REPLACE)
        return values[:index] + (value,) + values[index + 1 :]

    def decode(codes: dict[str, int]) -> str:
        names = [name for name, code in codes.items() if code == value]
        if not names:
            raise OperandError(f".{field} value {value} is not in Table 32", section=TENSORMAP_REPLACE)
        return names[0]

    if field == "global_address":
        return attrs.evolve(tmap, global_address=value)
    if field == "box_dim":
        if tmap.box_dims is None:
            raise OperandError(".box_dim of an im2col tensor map", section=TENSORMAP_REPLACE)
        return attrs.evolve(tmap, box_dims=at(tmap.box_dims, ord_))  # type: ignore[arg-type]
    if field == "global_dim":
        return attrs.evolve(tmap, global_dims=at(tmap.global_dims, ord_))  # type: ignore[arg-type]
    if field == "global_stride":
        # ord is the ordinal among the map's rank - 1 byte strides: ord k is the stride of dimension
        # k + 1 (dimension 0 has none). An H100 does so: every case of the tma-replace round where
        # this and the reading "ord names the dimension" differ follows this one.
        return attrs.evolve(tmap, global_strides=at(tmap.global_strides, ord_))  # type: ignore[arg-type]
    if field == "element_stride":
        return attrs.evolve(tmap, element_strides=at(tmap.strides, ord_))  # type: ignore[arg-type]
    if field == "elemtype":
        return attrs.evolve(tmap, element_type=tm.element_type_for_code(value).name)
    if field == "interleave_layout":
        return attrs.evolve(tmap, interleave=decode(tm.INTERLEAVE_CODES))
    if field == "swizzle_mode":
        return attrs.evolve(tmap, swizzle=decode(tm.SWIZZLE_CODES))
    if field == "swizzle_atomicity":
        return attrs.evolve(tmap, swizzle_atomicity=decode(tm.ATOMICITY_CODES))
    if field == "fill_mode":
        return attrs.evolve(tmap, oob_fill=decode(tm.FILL_CODES))
    assert field == "rank"
    return _with_rank(tmap, value + 1)  # "this field uses zero-based numbering"


def _with_rank(tmap, rank: int):
    """``tmap`` of ``rank`` dimensions (``tensormap.replace .rank``): a lower rank keeps the fields of
    its dimensions -- the map then reads as the first ``rank`` of the old one (an H100: the
    tma-replace-rank round) -- and a higher one is not evaluated: the fields of the dimensions past
    the old rank hold what the map's encoding left there, which the manual does not say."""
    import attrs

    from ptxspec.semantics import tensor_map as tm

    if not 1 <= rank <= 5:
        raise OperandError(f".rank {rank - 1} names a tensor of {rank} dimensions; a tensor map has 1 to 5 (§5.5.1)", section=TENSORMAP_REPLACE)
    if rank > tmap.rank:
        raise tm.NotModelled(
            f".rank {rank - 1} raises the rank from {tmap.rank} to {rank}: the fields of the dimensions past {tmap.rank - 1} hold what the map's "
            "encoding left there, which the manual does not give",
            section=TENSORMAP_REPLACE,
        )
    cut = {"global_dims": tmap.global_dims[:rank], "global_strides": tmap.global_strides[: rank - 1], "element_strides": tmap.strides[:rank]}
    if tmap.box_dims is not None:
        return attrs.evolve(tmap, box_dims=tmap.box_dims[:rank], **cut)
    assert tmap.im2col is not None
    corners = {"lower_corner": tmap.im2col.lower_corner[: rank - 2], "upper_corner": tmap.im2col.upper_corner[: rank - 2]}
    return attrs.evolve(tmap, im2col=attrs.evolve(tmap.im2col, **corners), **cut)


@semantic("tensormap.replace.tile.field1", "tensormap.replace.tile.field2", "tensormap.replace.tile.field3", operands=THREAD_MEMORY)
def tensormap_replace(form: Form, state: State, addr: int, *operands: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.26 tensormap.replace: "replaces the field, specified by .field qualifier, of the
    tensor-map object at the location specified by the address operand addr with a new value" --
    the state's tensor map at ``addr`` with that field changed ("The immediate integer operand ord
    specifies the ordinal of the field across the rank of the tensor which needs to be replaced";
    ``.field3`` values by Table 32). A change that leaves no valid tensor map (§5.5's rules) is
    refused with the rule: the state holds tensor maps as values, so a sequence of replaces that
    passes through an invalid map is not evaluated."""
    import attrs

    tmap = tensor_map_at(form, state, addr)
    ord_ = operands[0] if len(operands) == 2 else None
    try:
        new = _replaced(tmap, form["field"], ord_, operands[-1])
    except OperandError as error:
        error.where = error.where or form.text
        raise
    maps = tuple((at, new if at == addr else m) for at, m in state.tensor_maps)
    return (), attrs.evolve(state, tensor_maps=maps)
