"""Golden vectors of the memory instructions (§9.7.9.8-24: ld, ld.global.nc, ldu, st, st.bulk,
prefetch, applypriority, discard, createpolicy, isspacep, cvta, mapa, getctarank; §9.7.13.5-6: atom,
red): the cases, drawn from a seed.

The lines are those of :mod:`ptxspec.conformance.tcgen05_vectors` (a state in, the operands, the
results and the state out, in the schema of :mod:`ptxspec.conformance.state_json`, whose
``global`` .. ``addresses`` fields hold the memory images); ``ptxspec vectors ld.global.v4.b32``
writes them and ``ptxspec check-vectors`` replays them. Each case gives the CTA 64 bytes of shared
memory and 64 bytes of each other state space at seeded bases, and an address the form may reach:
in the form's state space, or -- for a form without one -- a generic address in the global or
shared window, aligned to the access size. Operands are seeded bit patterns of their registers; a
``cas`` compares equal to the value in memory half of the time. Nothing here decides a result.
"""

from __future__ import annotations

import numpy as np

from ptxspec.semantics.state import AddressMap, Segment, State
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import register_bits

#: Bytes of each state space a case holds.
SPAN = 64
#: The segments' bases: each a multiple of a page, as a driver would place them.
BASES = {"global": 0x7F10_0000_0000, "local": 0xFF_F000, "const": 0, "param": 0}


def covers(form: Form) -> bool:
    """Whether this module draws the cases of ``form`` (a §9.7.9.8-26 or §9.7.13.5-7 form)."""
    from ptxspec.spec import async_copy, atomics, memory_access

    return any(form.family in module.FAMILIES for module in (memory_access, atomics, async_copy))


def _bytes(rng: np.random.Generator, n: int) -> bytes:
    return rng.integers(0, 256, n, dtype=np.uint8).tobytes()


def _state(rng: np.random.Generator) -> State:
    return State(
        shared=_bytes(rng, SPAN),
        global_memory=Segment(BASES["global"], _bytes(rng, SPAN)),
        local_memory=Segment(BASES["local"], _bytes(rng, SPAN)),
        const_memory=Segment(BASES["const"], _bytes(rng, SPAN)),
        param_memory=Segment(BASES["param"], _bytes(rng, SPAN)),
        addresses=AddressMap(),
    )


def _access_size(form: Form) -> int:
    from ptxspec.semantics.atomics import _element
    from ptxspec.semantics.memory_access import type_bytes, vector_count

    if form.opcode in ("atom", "red"):
        return _element(form)[1] * vector_count(form)
    return type_bytes(form["type"]) * vector_count(form)


def _address(form: Form, state: State, rng: np.random.Generator, size: int) -> int:
    """A seeded address of ``size`` bytes that ``form`` may reach in ``state``."""
    from ptxspec.semantics.memory_access import SPACE_OF

    offset = int(rng.integers(0, SPAN // size)) * size
    token = form.get("ss")
    space = SPACE_OF[token] if token else ("global" if rng.integers(0, 2) else "generic-shared")
    if space.startswith("shared"):
        return state.addresses.cluster_base + state.addresses.cta_rank * state.addresses.cluster_stride + offset
    if space == "generic-shared":
        return state.addresses.shared[0] + offset
    return BASES[space] + offset


def _operand(rng: np.random.Generator, type_name: str) -> int:
    bits = register_bits(type_name)
    return int.from_bytes(_bytes(rng, (bits + 7) // 8), "little") & ((1 << bits) - 1)


def draw_case(form: Form, rng: np.random.Generator):
    """One seeded case of ``form``."""
    from ptxspec.conformance.tcgen05_vectors import Case

    state = _state(rng)
    key = form.family.key
    inputs = form.inputs
    if key in ("applypriority", "discard"):
        line = state.global_memory
        state = State(global_memory=Segment(BASES["global"], _bytes(rng, 256)), addresses=state.addresses)
        del line
        return Case(state, (BASES["global"] + 128 * int(rng.integers(0, 2)), 128), None, None)
    if key == "st.bulk":
        size = 8 * int(rng.integers(0, SPAN // 8 + 1))
        start = 8 * int(rng.integers(0, (SPAN - size) // 8 + 1))
        address = start if form.get("ss") else state.addresses.shared[0] + start
        return Case(state, (address, size, 0), None, None)
    if key.startswith("createpolicy"):
        return Case(state, tuple(_createpolicy_operand(rng, o.name) for o in inputs), None, None)
    if key in ("isspacep", "cvta.to"):
        return Case(state, (_generic(rng, state),), None, None)
    if key == "cvta":
        space = form["ss"]
        address = _address(form, state, rng, 1) if space.startswith("shared") else int(rng.integers(0, SPAN))
        return Case(state, (address & ((1 << register_bits(form["size"])) - 1),), None, None)
    if key in ("mapa", "getctarank"):
        state = State(addresses=AddressMap(cta_rank=int(rng.integers(0, 2)), cluster_ctas=2))
        offset = int(rng.integers(0, 1 << 16))
        address = state.addresses.cluster_base + state.addresses.cta_rank * state.addresses.cluster_stride + offset
        if form.get("ss") is None:
            address += state.addresses.shared[0]
        rest = (int(rng.integers(0, 2)),) if key == "mapa" else ()
        return Case(state, (address, *rest), None, None)
    if key == "st.async" or key.startswith("red.async.mbarrier"):
        return _remote_case(form, rng)
    if form.opcode == "cp" and ".tensor" in key:
        return _tensor_case(form, rng)
    if form.opcode == "tensormap":
        return _tensormap_replace_case(form, rng)
    if form.opcode == "cp":
        return _copy_case(form, rng, state)
    if form.opcode == "multimem":
        return _multimem_case(form, rng)
    if form.opcode.startswith("prefetch"):
        return Case(state, (_address(form, state, rng, 1),), None, None)
    if form.opcode in ("ld", "ldu", "st", "atom", "red"):  # and st.async / red.async .release on global memory
        size = _access_size(form)
        address = _address(form, state, rng, size)
        values = [_operand(rng, o.type) for o in inputs[1:]]
        if form.get("op") == "cas" and rng.integers(0, 2):
            from ptxspec.semantics.memory_access import locate, read

            old, _ = read(state, locate(form, state, address, size), size)
            values[0] = int.from_bytes(old, "little")
        return Case(state, (address, *values), None, None)
    raise PtxSpecError(f"{form.text}: no vectors yet for this form", where=form.text, section=form.family.section)


#: Where the other CTA's mbarrier object lies in its shared memory, in an asynchronous store's case.
_MBARRIER_OFFSET = SPAN - 8


def _remote_case(form: Form, rng: np.random.Generator):
    """st.async / red.async completing on an mbarrier: the destination and the mbarrier in the
    shared memory of the cluster's other CTA (rank 1; "the CTA they belong to is different from the
    CTA of the executing thread" for red.async), the object initialized and expecting more bytes
    than one access brings."""
    from ptxspec.conformance.tcgen05_vectors import Case
    from ptxspec.semantics import mbarrier

    addresses = AddressMap(cta_rank=0, cluster_ctas=2)
    size = _access_size(form)
    remote = bytearray(_bytes(rng, SPAN))
    remote[_MBARRIER_OFFSET:] = mbarrier.expect_tx(mbarrier.init(1), 1 << 12).encode().to_bytes(8, "little")
    state = State(shared=_bytes(rng, SPAN), cluster=((1, bytes(remote)),), addresses=addresses)
    base = addresses.cluster_base + addresses.cluster_stride
    address = base + int(rng.integers(0, _MBARRIER_OFFSET // size)) * size
    if form.get("ss") is None:
        address, mbar = address + addresses.shared[0], base + _MBARRIER_OFFSET + addresses.shared[0]
    else:
        mbar = base + _MBARRIER_OFFSET
    values = [_operand(rng, o.type) for o in form.inputs[1:-1]]
    return Case(state, (address, *values, mbar), None, None)


def _copy_case(form: Form, rng: np.random.Generator, state: State):
    """A copy of §9.7.9.25 (not the tensor ones): its size, addresses in its spaces within the
    case's 64 bytes, and an mbarrier object (initialized, expecting more bytes than any case copies)
    in the last 8 bytes of the destination CTA's shared memory."""
    from ptxspec.conformance.tcgen05_vectors import Case
    from ptxspec.semantics import mbarrier

    key = form.family.key
    if key.endswith(("commit_group", "wait_group", "wait_all")):
        return Case(state, tuple(int(rng.integers(0, 4)) for _ in form.inputs), None, None)
    barrier = mbarrier.expect_tx(mbarrier.init(1), 1 << 12).encode().to_bytes(8, "little")
    shared = bytearray(state.shared)
    shared[_MBARRIER_OFFSET:] = barrier
    state = State(
        shared=bytes(shared),
        global_memory=state.global_memory,
        addresses=AddressMap(cluster_ctas=2),
        cluster=((1, bytes(_bytes(rng, _MBARRIER_OFFSET)) + barrier),),
    )
    if key in ("cp.async", "cp.async.src_size", "cp.async.ignore_src"):
        size = (4, 8, 16)[int(rng.integers(0, 3))] if form["cop"] == "ca" else 16
        dst, src = int(rng.integers(0, _MBARRIER_OFFSET // size)) * size, BASES["global"] + int(rng.integers(0, SPAN // size)) * size
        extra = (int(rng.integers(0, size + 1)),) if key.endswith("src_size") else (int(rng.integers(0, 2)),) if key.endswith("ignore_src") else ()
        policy = (_operand(rng, "b64"),) if form.get("cache_hint") else ()
        return Case(state, (dst, src, size, *extra, *policy), None, None)
    size = 16 * int(rng.integers(1, 3))
    names = [o.name for o in form.inputs]
    values: dict[str, int] = {"size": size, "mbar": _MBARRIER_OFFSET, "ctaMask": int(rng.integers(1, 4)), "byteMask": _operand(rng, "b16")}
    for name, slot in (("dstMem", "dst_ss"), ("srcMem", "src_ss")):
        token = form.get(slot)
        offset = 16 * int(rng.integers(0, (_MBARRIER_OFFSET - size) // 16 + 1))
        values[name] = BASES["global"] + offset if token in (None, "global") else offset
    if form.get("src_ss") == "global" and form.get("dst_ss") != "global":
        values["srcMem"] = BASES["global"] + 16 * int(rng.integers(0, (SPAN - size) // 16 + 1))
    if form.get("dst_ss") == "shared::cluster" and form.get("src_ss") == "shared::cta":
        values["dstMem"] += state.addresses.cluster_stride  # the cluster's other CTA
        values["mbar"] += state.addresses.cluster_stride
    return Case(state, tuple(values[n] if n in values else _operand(rng, "b64") for n in names), None, None)


_TENSOR_TYPES = ("u8", "u16", "u32", "f16", "f32", "s32", "bf16", "u64")
_TENSOR_MAP_AT = 0x40


def _tensor_map(rng: np.random.Generator, rank: int, base: int, types: tuple[str, ...] = _TENSOR_TYPES):
    """A seeded tile-mode tensor map of ``rank`` dimensions over a small tensor at ``base`` (drawn
    again until §5.5's rules hold)."""
    from ptxspec.semantics.tensor_map import TensorMap, element_type
    from ptxspec.spec.errors import OperandError

    while True:
        kind = types[int(rng.integers(0, len(types)))]
        size = element_type(kind).global_bytes
        dims = [int(rng.integers(1, 9)) * (16 // size if i == 0 else 1) for i in range(rank)]
        strides, stride = [], dims[0] * size
        for d in dims[1:]:
            stride = -(-stride // 16) * 16 + 16 * int(rng.integers(0, 2))
            strides.append(stride)
            stride *= d
        box = [min(dims[0], (16 // size) * int(rng.integers(1, 5)))] + [int(rng.integers(1, min(d, 4) + 1)) for d in dims[1:]]
        swizzle = ("none", "32B", "64B", "128B")[int(rng.integers(0, 4))]
        fill = "nan" if kind in ("f16", "f32", "bf16") and rng.integers(0, 2) else "zero"
        try:
            return TensorMap(kind, base, dims, strides, box_dims=box, swizzle=swizzle, oob_fill=fill)
        except OperandError:
            continue


def _tensor_case(form: Form, rng: np.random.Generator):
    """A tensor copy: a seeded tensor map (held at :data:`_TENSOR_MAP_AT`), the tensor's bytes in
    global memory, coordinates in and across the tensor's bounds, a 1024-byte aligned box in shared
    memory and an mbarrier after it."""
    from ptxspec.conformance.tcgen05_vectors import Case
    from ptxspec.semantics import mbarrier

    from ptxspec.semantics.async_copy import TENSOR_REDUCTIONS

    rank = int(form["dim"][0])
    base = BASES["global"]
    tmap = _tensor_map(rng, rank, base, TENSOR_REDUCTIONS[form["redop"]] if form.get("redop") else _TENSOR_TYPES)
    if form.get("multicast") and tmap.oob_fill == "nan":
        # a NaN fill in another CTA's shared memory would be "one of" the NaNs, which a State holds
        # for the executing CTA only
        import attrs

        tmap = attrs.evolve(tmap, oob_fill="zero")
    extent = tmap.global_dims[0] * tmap.type.global_bytes if rank == 1 else tmap.global_strides[-1] * tmap.global_dims[-1]
    box_bytes = tmap.shared_box_bytes()
    barrier_at = -(-box_bytes // 1024) * 1024  # the swizzle permutes within spans of up to 1024 bytes
    shared = bytearray(_bytes(rng, barrier_at + 8))
    shared[barrier_at:] = mbarrier.expect_tx(mbarrier.init(1), 1 << 19).encode().to_bytes(8, "little")
    state = State(
        shared=bytes(shared),
        global_memory=Segment(base, _bytes(rng, extent)),
        tensor_maps=((_TENSOR_MAP_AT, tmap),),
        addresses=AddressMap(cluster_ctas=2),
        cluster=((1, bytes(shared)),),
    )
    coords = [int(rng.integers(-b, d + 1)) % (1 << 32) for b, d in zip(tmap.box_dims or (), tmap.global_dims)]
    values: dict[str, int] = {"dstMem": 0, "srcMem": 0, "tensorMap": _TENSOR_MAP_AT, "mbar": barrier_at, "ctaMask": int(rng.integers(1, 4))}
    sources = []
    coordinate = iter(coords)
    for operand in form.inputs:
        if operand.name.startswith("tensorCoords"):
            sources.append(next(coordinate))
        else:
            sources.append(values.get(operand.name, _operand(rng, operand.type)))
    return Case(state, tuple(sources), None, None)


def _tensormap_replace_case(form: Form, rng: np.random.Generator):
    """tensormap.replace on a seeded 2-d map: a new global address, a box or tensor dimension, a
    stride, or a Table 32 value that keeps the map valid (an invalid map is refused, which a vector
    does not test)."""
    from ptxspec.conformance.tcgen05_vectors import Case

    tmap = _tensor_map(rng, 2, BASES["global"])
    state = State(tensor_maps=((_TENSOR_MAP_AT, tmap),))
    field = form["field"]
    value = {
        "global_address": BASES["global"] + 16 * int(rng.integers(0, 16)),
        "box_dim": 1,
        "global_dim": int(rng.integers(1, 100)),
        "global_stride": tmap.global_strides[0] + 16 * int(rng.integers(0, 4)),
        "element_stride": int(rng.integers(1, 3)),
        "fill_mode": 0,
        "swizzle_mode": 0,
        "interleave_layout": 0,
        "swizzle_atomicity": 0,
        "elemtype": tmap.type.code,
    }.get(field, 0)
    ord_ = {"box_dim": 1, "global_dim": 1, "global_stride": 1, "element_stride": 1}.get(field)
    return Case(state, (_TENSOR_MAP_AT, *(() if ord_ is None else (ord_,)), value), None, None)


def _multimem_case(form: Form, rng: np.random.Generator):
    """Two to four memories behind a multimem address range of 64 bytes, an aligned address in it
    and seeded operands."""
    from ptxspec.conformance.tcgen05_vectors import Case
    from ptxspec.semantics.memory_access import _element_bytes, vector_count

    base = 0x7F20_0000_0000
    memories = tuple(Segment(base, _bytes(rng, SPAN)) for _ in range(int(rng.integers(2, 5))))
    size = _element_bytes(form["type"]) * vector_count(form)
    address = base + int(rng.integers(0, SPAN // size)) * size
    values = [_operand(rng, o.type) for o in form.inputs[1:]]
    return Case(State(multimem=memories), (address, *values), None, None)


def _generic(rng: np.random.Generator, state: State) -> int:
    """A generic address in a seeded window (or global memory)."""
    space = ("shared", "local", "const", "param", "global")[int(rng.integers(0, 5))]
    if space == "global":
        return BASES["global"] + int(rng.integers(0, SPAN))
    base, size = state.addresses.window(space)
    return base + int(rng.integers(0, min(size, 1 << 20)))


_FRACTIONS = (0x3F800000, 0x3F000000, 0x3E800000, 0x3DCCCCCD, 0x3F7FFFFF, 0x00000001)


def _createpolicy_operand(rng: np.random.Generator, name: str) -> int:
    if name == "fraction":
        return _FRACTIONS[int(rng.integers(0, len(_FRACTIONS)))]
    if name == "a":
        return BASES["global"]
    if name in ("primary_size", "primary-size"):
        return 0x1000
    if name in ("total_size", "total-size"):
        return 0x2000
    return int(rng.integers(0, 1 << 62))
