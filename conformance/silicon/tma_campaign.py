"""The tensor-copy (TMA) campaign: ``cp.async.bulk.tensor`` in tile mode, global to shared memory
and back (§9.7.9.25.5.2), over tensor maps of §5.5 made by the CUDA driver, recorded on sm_90
silicon and replayed against the semantics (:mod:`ptxspec.semantics.tensor_map`,
:mod:`ptxspec.semantics.async_copy`)::

    python -m ptxspec.conformance.silicon tma prepare BUNDLE     # here (ptxas)
    python3 conformance/silicon/tma_device.py run BUNDLE OUT     # on the GPU
    python -m ptxspec.conformance.silicon tma verify DIR         # here

The cases (:func:`cases`) are seeded tensor maps of every rank 1-5, element types of 1, 2, 4 and 8
bytes, every swizzle mode, traversal strides 1-3, zero and NaN out-of-bound fill, with a box placed
inside the tensor, across its upper and lower bounds, and wholly outside. :func:`verify` runs each
case's copy through :func:`~ptxspec.semantics.instructions.execute` on the bytes the chip had and
compares every byte of shared memory after the load (what the copy did not write keeps its mark)
and of the tensor after the store.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import attrs
import numpy as np

from ptxspec.conformance.silicon import tma_device
from ptxspec.conformance.silicon.campaign import HEADER, assemble_module, ptxas_version
from ptxspec.semantics.state import Segment, State
from ptxspec.spec.async_copy import FIELDS
from ptxspec.semantics.tensor_map import CORNER_BITS, OFFSET_BITS, TensorMap

CASES = 320
TYPES = ("u8", "u16", "u32", "f16", "bf16", "f32", "s32", "u64", "f64")


def _tensor_map(rng: random.Random, base: int):
    """A seeded valid tile-mode tensor map (drawn again until §5.5's rules hold)."""
    from ptxspec.semantics.tensor_map import SWIZZLE_SPAN, TensorMap, element_type
    from ptxspec.spec.errors import OperandError

    while True:
        rank = rng.randint(1, 5)
        kind = rng.choice(TYPES)
        size = element_type(kind).global_bytes
        swizzle = rng.choice(("none", "none", "32B", "64B", "128B"))
        inner_limit = SWIZZLE_SPAN.get(swizzle) or 256 * size
        inner = rng.choice([b for b in (16, 32, 48, 64, 96, 128, 256) if b <= inner_limit and b // size <= 256] or [16])
        box = [inner // size] + [rng.randint(1, 6) for _ in range(rank - 1)]
        dims = [max(1, box[0] + rng.randint(-box[0] + 1, 40))] + [b + rng.randint(-b + 1, 5) for b in box[1:]]
        strides, stride = [], dims[0] * size
        for d in dims[1:]:
            stride = -(-stride // 16) * 16 + 16 * rng.randint(0, 2)
            strides.append(stride)
            stride *= d
        element_strides = [1] + [rng.choice((1, 1, 2, 3)) for _ in range(rank - 1)]
        fill = "nan" if kind in ("f16", "bf16", "f32", "f64") and rng.random() < 0.5 else "zero"
        try:
            tmap = TensorMap(kind, base, dims, strides, box_dims=box, element_strides=element_strides, swizzle=swizzle, oob_fill=fill)
        except OperandError:
            continue
        if tmap.shared_box_bytes() <= tma_device.SMEM // 2:
            return tmap


def _more_tensor_map(rng: random.Random, base: int):
    """A seeded valid tensor map of the second round: an interleaved tile-mode map (rank 3-5, 16B
    or 32B interleave, §5.5.6) or an im2col map (rank 3-5, §5.5.4), drawn until §5.5's rules hold."""
    from ptxspec.semantics.tensor_map import Im2col, TensorMap, element_type
    from ptxspec.spec.errors import OperandError

    while True:
        rank = rng.randint(3, 5)
        kind = rng.choice(TYPES)
        size = element_type(kind).global_bytes
        fill = "nan" if kind in ("f16", "bf16", "f32", "f64") and rng.random() < 0.5 else "zero"
        if rng.random() < 0.5:
            interleave = rng.choice(("16B", "32B"))
            unit = int(interleave[:2]) // size  # the elements of one interleaved slice of dimension 0
            swizzle = "32B" if interleave == "32B" else rng.choice(("none", "32B", "64B", "128B"))
            box = [unit * rng.randint(1, 2)] + [rng.randint(1, 6) for _ in range(rank - 1)]
            dims = [unit * rng.randint(1, 3)] + [b + rng.randint(-b + 1, 5) for b in box[1:]]
            extra: dict = {"box_dims": box, "interleave": interleave}
            element_strides = [1] + [rng.choice((1, 1, 2, 3)) for _ in range(rank - 1)]
        else:
            swizzle = rng.choice(("none", "none", "32B", "64B", "128B"))
            channels = rng.choice([c for c in (8, 16, 32, 64) if (c * size) % 16 == 0 and c * size <= 128] or [16 // size])
            dims = [channels * rng.randint(1, 2)] + [rng.randint(2, 8) for _ in range(rank - 2)] + [rng.randint(1, 3)]
            limit = (1 << (CORNER_BITS[rank] - 1)) - 1
            lower = [rng.randint(-min(2, limit), 0) for _ in range(rank - 2)]
            upper = [rng.randint(-2, min(2, limit)) for _ in range(rank - 2)]
            im2col = Im2col(lower, upper, channels, rng.randint(1, 48))
            extra = {"im2col": im2col}
            element_strides = [1] + [rng.choice((1, 1, 2)) for _ in range(rank - 1)]
        strides, stride = [], dims[0] * size
        for d in dims[1:]:
            stride = -(-stride // 32) * 32 + 32 * rng.randint(0, 1)
            strides.append(stride)
            stride *= d
        try:
            tmap = TensorMap(kind, base, dims, strides, element_strides=element_strides, swizzle=swizzle, oob_fill=fill, **extra)
        except OperandError:
            continue
        if tmap.shared_box_bytes() <= tma_device.SMEM // 2:
            return tmap


def _coordinates(rng: random.Random, tmap) -> list[int]:
    """Where the box starts: inside, across the upper or lower bound, or wholly outside."""
    if tmap.im2col is not None:  # c and n like a tile's; the filter base within the box's W, H, D
        p = tmap.im2col
        # (a filter base outside the bounding box is undefined: "must be within the bounding box")
        spatial = [rng.randint(p.lower_corner[j], tmap.global_dims[1 + j] - 1 + p.upper_corner[j]) for j in range(tmap.rank - 2)]
        return [rng.randint(0, tmap.global_dims[0] - p.channels_per_pixel), *spatial, rng.randint(-1, tmap.global_dims[-1])]
    out = []
    if tmap.interleave != "none":  # dimension 0 whole interleaved slices, mostly inside
        unit = tmap.box_dims[0]
        out.append(rng.choice((0, 0, tmap.global_dims[0] - unit, -unit, tmap.global_dims[0])))
        return out + _coordinates_of(rng, tmap.box_dims[1:], tmap.global_dims[1:])
    return _coordinates_of(rng, tmap.box_dims, tmap.global_dims)


def _coordinates_of(rng: random.Random, boxes, dims) -> list[int]:
    out = []
    for box, dim in zip(boxes, dims):
        where = rng.choice(("inside", "inside", "upper", "lower", "outside"))
        if where == "inside":
            out.append(rng.randint(0, max(0, dim - box)))
        elif where == "upper":
            out.append(rng.randint(max(0, dim - box + 1), dim))
        elif where == "lower":
            out.append(-rng.randint(1, box))
        else:
            out.append(rng.choice((dim + rng.randint(0, 8), -box - rng.randint(0, 8))))
    return out


def _extent(tmap) -> int:
    return tmap.global_dims[0] * tmap.type.global_bytes if tmap.rank == 1 else tmap.global_strides[-1] * tmap.global_dims[-1]


def _reach(tmap) -> int:
    """The bytes from the tensor's start a load through ``tmap`` can read: its extent, or for an
    interleaved map (the sm_90 reading: rows are slices of dimension 0 from each row's start) the
    end of the last row's last slice, which may lie past the extent."""
    from ptxspec.semantics.tensor_map import INTERLEAVE_BYTES

    if tmap.interleave == "none":
        return _extent(tmap)
    return tmap.global_dims[0] * INTERLEAVE_BYTES[tmap.interleave] + sum((d - 1) * g for d, g in zip(tmap.global_dims[1:], tmap.global_strides))


def _case(tmap, index: int, coords: list[int], box_bytes: int, extent: int, seed: int, **extra) -> dict:
    """One case of a plan: the map's fields (its global address 0: the device's buffer replaces
    it), the box's coordinates, the bytes the load's mbarrier expects, the bytes of the tensor's
    buffer, the seed of those bytes (and a round's own fields)."""
    case = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(tmap).items() if k != "im2col"}
    case.update(name=f"case{index:03d}", element_bytes=tmap.type.global_bytes, coords=coords, box_bytes=box_bytes, extent=extent, seed=seed, **extra)
    return case


#: tensormap.replace (§9.7.9.26) fields the replace round changes, with the register type of
#: their new value.
REPLACED_FIELDS = {
    "global_address": "b64",
    "box_dim": "b32",
    "global_dim": "b32",
    "global_stride": "b64",
    "element_stride": "b32",
    "elemtype": "b32",
    "swizzle_mode": "b32",
    "fill_mode": "b32",
}


def _replacement(rng: random.Random, tmap) -> tuple[dict, TensorMap] | None:
    """A field of ``tmap`` and a new value for it that leaves a valid map (or None): the value as
    tensormap.replace takes it (``global_address``: an offset from the tensor's address, added on
    the device), and the map the semantics say it makes."""
    from ptxspec.semantics.async_copy import _replaced
    from ptxspec.semantics.tensor_map import FILL_CODES, SWIZZLE_CODES, element_type
    from ptxspec.spec.errors import OperandError

    # the fields whose changes the load shows less often are drawn more often
    field = rng.choice(sorted(REPLACED_FIELDS) + ["global_stride"] * 4 + ["global_dim", "element_stride", "global_address"] * 2)
    rank, size = tmap.rank, tmap.type.global_bytes
    ord_ = None
    if field == "global_address":
        value = 16 * rng.randint(1, 8)
    elif field == "box_dim":
        ord_ = rng.randrange(rank)
        value = rng.choice((16, 32, 48, 64)) // size if ord_ == 0 else rng.randint(1, 8)
    elif field == "global_dim":
        ord_ = rng.randrange(rank)
        value = max(1, tmap.global_dims[ord_] + rng.randint(-3, 3))
    elif field == "global_stride":
        if rank == 1:
            return None
        ord_ = rng.randint(0, rank - 2)  # the ordinal among the rank - 1 strides
        value = tmap.global_strides[ord_] + 16 * rng.randint(-2, 2)
    elif field == "element_stride":
        ord_ = rng.randint(1, rank - 1) if rank > 1 else 0
        value = rng.randint(1, 4) if ord_ else 1
    elif field == "elemtype":
        same = [n for n in TYPES if element_type(n).global_bytes == size and n != tmap.type.name]
        if not same:
            return None
        value = element_type(rng.choice(same)).code
    elif field == "swizzle_mode":
        value = SWIZZLE_CODES[rng.choice(("none", "32B", "64B", "128B"))]
    else:
        value = FILL_CODES["zero" if tmap.oob_fill == "nan" else "nan"]
    try:
        new = _replaced(tmap, field, ord_, tmap.global_address + value if field == "global_address" else value)
        if new.shared_box_bytes() > tma_device.SMEM // 2:
            return None
    except OperandError:
        return None
    return {"field": field, "ord": ord_, "value": value, "type": REPLACED_FIELDS[field]}, new


def _changes_the_load(old, new, coords: list[int]) -> bool:
    """Whether a tile-mode load at ``coords`` through ``new`` reads other global addresses, puts
    them at other shared offsets, swizzles otherwise or fills out-of-bound elements otherwise than
    through ``old``."""
    from ptxspec.semantics import tensor_map as tm

    base = 0x10000
    boxes = [tm.tile_box(attrs.evolve(m, global_address=m.global_address + base), coords) for m in (old, new)]
    fills = ["nan" if m.oob_fill == "nan" and m.type.nan_format else "zero" for m in (old, new)]
    return not (
        np.array_equal(boxes[0].global_addresses, boxes[1].global_addresses)
        and np.array_equal(boxes[0].shared_offsets, boxes[1].shared_offsets)
        and old.swizzle == new.swizzle
        and (fills[0] == fills[1] or bool((boxes[0].global_addresses >= 0).all()))
    )


def _replace_cases(count: int, seed: int) -> list[dict]:
    rng = random.Random(f"tma-replace:{seed}")
    out: list[dict] = []
    while len(out) < count:
        tmap = _tensor_map(rng, 0)
        drawn = _replacement(rng, tmap)
        if drawn is None:
            continue
        replace, new = drawn
        coords = _coordinates_of(rng, new.box_dims, new.global_dims)
        step = 16 // new.type.global_bytes
        coords[0] -= coords[0] % step  # the box on a 16-byte boundary: the copies that fault are the first round's
        if not _changes_the_load(tmap, new, coords):
            continue  # a change the load cannot show (the box out of bounds, say) tests nothing
        # the buffer holds the changed map's tensor too
        out.append(_case(tmap, len(out), coords, new.shared_box_bytes(), max(_extent(tmap), _extent(new)) + 256, 7000 + len(out), replace=replace))
    return out


def _interleaved_map(rng: random.Random):
    """A seeded interleaved tile map (rank 3-5, 16B or 32B, §5.5.6) the driver takes, and the box
    the sm_90 reading gives it at seeded coordinates: dimension 0's box, size, coordinate and
    traversal stride drawn freely (in the slices that reading counts), boxes along dimension
    rank-2 of several elements (which that reading does not step)."""
    from ptxspec.semantics.tensor_map import INTERLEAVE_BYTES, element_type, interleaved_box
    from ptxspec.spec.errors import OperandError

    while True:
        rank = rng.randint(3, 5)
        kind = rng.choice(TYPES)
        interleave = rng.choice(("16B", "32B"))
        swizzle = "32B" if interleave == "32B" else rng.choice(("none", "32B", "64B", "128B"))
        fill = "nan" if kind in ("f16", "bf16", "f32", "f64") and rng.random() < 0.5 else "zero"
        box = [rng.randint(1, 8) if rng.random() < 0.8 else rng.randint(9, 48)] + [rng.randint(1, 6) for _ in range(rank - 1)]
        dims = [rng.randint(1, 12)] + [rng.randint(1, 8) for _ in range(rank - 1)]
        element_strides = [rng.choice((1, 1, 2, 3))] + [rng.choice((1, 1, 2, 3)) for _ in range(rank - 1)]
        slice_bytes = INTERLEAVE_BYTES[interleave]
        # dimension 1's stride: past the row's elements (the driver's nominal layout), or a few slices
        row = -(-dims[0] * element_type(kind).global_bytes // slice_bytes) * slice_bytes
        strides, stride = [], row + slice_bytes * rng.randint(0, 1) if rng.random() < 0.5 else slice_bytes * rng.randint(1, 4)
        for d in dims[1:]:
            strides.append(stride)
            stride = stride * d + 32 * rng.randint(0, 1)
        try:
            tmap = TensorMap(kind, 0, dims, strides, box_dims=box, element_strides=element_strides, interleave=interleave, swizzle=swizzle, oob_fill=fill)
        except OperandError:
            continue
        coords = [rng.randint(-box[0] - 1, dims[0] + 1)] + _coordinates_of(rng, box[1:], dims[1:])
        shared = interleaved_box(tmap, coords).shared_bytes
        if shared <= tma_device.SMEM or rng.random() < 0.1:  # a few past the kernel's shared memory: faults
            return tmap, coords


def _interleave_cases(count: int, seed: int) -> list[dict]:
    """The tma-interleave round: each case's expect_tx is the bytes the sm_90 reading sends (so the
    phase completes exactly when that reading is right), and its buffer holds every byte the
    reading's rows can reach (rows run on past the tensor's last one)."""
    from ptxspec.semantics.tensor_map import interleaved_box

    rng = random.Random(f"tma-interleave:{seed}")
    out = []
    for i in range(count):
        tmap, coords = _interleaved_map(rng)
        out.append(_case(tmap, i, coords, interleaved_box(tmap, coords).shared_bytes, max(_extent(tmap), _reach(tmap)) + 256, 9000 + i))
    return out


def _replace_interleave_cases(count: int, seed: int) -> list[dict]:
    """The tma-replace-interleave round: ``tensormap.replace.interleave_layout`` (§9.7.9.26, Table 32:
    0 none, 1 16B, 2 32B) on driver-made maps of rank 3-5 -- a non-interleaved map made interleaved,
    an interleaved one made plain or of the other size -- then a load through the changed map, its
    mbarrier armed with the bytes the semantics say that load sends."""
    from ptxspec.semantics.async_copy import _replaced
    from ptxspec.semantics.tensor_map import INTERLEAVE_CODES, interleaved_box, tile_box
    from ptxspec.spec.errors import OperandError

    rng = random.Random(f"tma-replace-interleave:{seed}")
    out: list[dict] = []
    while len(out) < count:
        if rng.random() < 0.5:
            tmap = _tensor_map(rng, 0)
            if tmap.rank < 3:
                continue
        else:
            tmap, _ = _interleaved_map(rng)
        layout = rng.choice([name for name in INTERLEAVE_CODES if name != tmap.interleave])
        try:
            new = _replaced(tmap, "interleave_layout", None, INTERLEAVE_CODES[layout])
        except OperandError:
            continue  # 32B with another swizzle, strides not whole 32 bytes: no valid map
        if new.interleave == "none":
            coords = _coordinates_of(rng, new.box_dims, new.global_dims)
            coords[0] -= coords[0] % (16 // new.type.global_bytes)  # on a 16-byte boundary
            box = tile_box(new, coords)
        else:
            coords = [rng.randint(-new.box_dims[0] - 1, new.global_dims[0] + 1)] + _coordinates_of(rng, new.box_dims[1:], new.global_dims[1:])
            box = interleaved_box(new, coords)
        if box.shared_bytes > tma_device.SMEM:
            continue
        replace = {"field": "interleave_layout", "ord": None, "value": INTERLEAVE_CODES[layout], "type": "b32"}
        out.append(_case(tmap, len(out), coords, box.shared_bytes, max(_reach(tmap), _reach(new)) + 256, 11000 + len(out), replace=replace))
    return out


def _replace_rank_cases(count: int, seed: int) -> list[dict]:
    """The tma-replace-rank round: ``tensormap.replace.rank`` (§9.7.9.26, the rank less one) on
    driver-made tile maps, then a load of the new rank through the changed map. Most cases lower
    the rank (the semantics keep the first dimensions' fields); one in four raises it, which the
    semantics do not evaluate -- those are recorded for what the chip does."""
    from ptxspec.semantics.async_copy import _with_rank
    from ptxspec.semantics.tensor_map import NotModelled

    rng = random.Random(f"tma-replace-rank:{seed}")
    out: list[dict] = []
    while len(out) < count:
        tmap = _tensor_map(rng, 0)
        raise_rank = rng.random() < 0.25
        if tmap.rank == 5 if raise_rank else tmap.rank == 1:
            continue
        rank = rng.randint(tmap.rank + 1, 5) if raise_rank else rng.randint(1, tmap.rank - 1)
        try:
            new = _with_rank(tmap, rank)
        except NotModelled:
            new = None
        boxes, dims = (
            (new.box_dims, new.global_dims) if new is not None else (tmap.box_dims + (1,) * (rank - tmap.rank), tmap.global_dims + (1,) * (rank - tmap.rank))
        )
        coords = _coordinates_of(rng, boxes, dims)
        coords[0] -= coords[0] % (16 // tmap.type.global_bytes)  # the box on a 16-byte boundary
        replace = {"field": "rank", "ord": None, "value": rank - 1, "type": "b32"}
        out.append(_case(tmap, len(out), coords, (new or tmap).shared_box_bytes(), _extent(tmap) + 256, 13000 + len(out), replace=replace))
    return out


#: The rounds, by the stem of their files: how many cases, the seed's tag, the tensor-map drawer
#: (None: the round draws its cases itself).
ROUNDS = {
    "tma": (CASES, "tma", _tensor_map),
    "tma-more": (192, "tma-more", _more_tensor_map),
    "tma-replace": (160, "tma-replace", None),
    "tma-interleave": (192, "tma-interleave", None),
    "tma-replace-interleave": (64, "tma-replace-interleave", None),
    "tma-replace-rank": (64, "tma-replace-rank", None),
}


def cases(count: int = CASES, seed: int = 0, round_name: str = "tma") -> list[dict]:
    """The seeded cases of a round: each a tensor map's fields (its global address 0: the device's
    buffer replaces it), the box's coordinates (and an im2col load's offsets), the box's bytes in
    shared memory, the tensor's extent."""
    _, tag, draw = ROUNDS[round_name]
    if draw is None:
        own = {
            "tma-interleave": _interleave_cases,
            "tma-replace": _replace_cases,
            "tma-replace-interleave": _replace_interleave_cases,
            "tma-replace-rank": _replace_rank_cases,
        }
        return own[round_name](count, seed)
    rng = random.Random(f"{tag}:{seed}")
    out = []
    for i in range(count):
        tmap = draw(rng, 0)
        case = _case(tmap, i, _coordinates(rng, tmap), tmap.shared_box_bytes(), _extent(tmap), 5000 + i)
        if tmap.im2col is not None:
            p = tmap.im2col
            limit = (1 << OFFSET_BITS[tmap.rank]) - 1
            case.update(
                mode="im2col",
                lower_corner=list(p.lower_corner),
                upper_corner=list(p.upper_corner),
                channels_per_pixel=p.channels_per_pixel,
                pixels_per_column=p.pixels_per_column,
                offsets=[rng.randint(0, min(3, limit)) for _ in range(tmap.rank - 2)],
            )
        out.append(case)
    return out


def tensor_map_of(case: dict, address: int):
    from ptxspec.semantics.tensor_map import Im2col, TensorMap

    fields = {
        k: case[k]
        for k in (
            "element_type",
            "global_dims",
            "global_strides",
            "box_dims",
            "element_strides",
            "interleave",
            "swizzle",
            "swizzle_atomicity",
            "oob_fill",
            "l2_promotion",
        )
    }
    if case.get("mode") == "im2col":
        fields["im2col"] = Im2col(case["lower_corner"], case["upper_corner"], case["channels_per_pixel"], case["pixels_per_column"])
    return TensorMap(global_address=address, **fields)


def _load_kernel_ptx(entry: str, rank: int, mode: str = "tile", replace: dict | None = None) -> str:
    """A load kernel (see :mod:`tma_device`): fill shared memory with the mark, run one
    ``cp.async.bulk.tensor`` of ``mode`` into it, wait (bounded) on its mbarrier, write it out. The
    map is a by-value parameter -- or, with ``replace`` (the replace round), a pointer to the map in
    global memory, where thread 0 first runs ``tensormap.replace`` and makes the change visible to
    the tensor-map proxy (§9.7.13.4: ``fence.proxy.tensormap::generic`` release, then acquire on the
    map)."""
    coords = ", ".join(f"%c{i}" for i in range(rank))
    spatial = rank - 2
    offsets = "" if mode == "tile" else ", {" + ", ".join(f"%o{i}" for i in range(spatial)) + "}"
    offset_params = "" if mode == "tile" else "".join(f", .param .u16 po{i}" for i in range(spatial))
    load_offsets = "" if mode == "tile" else " ".join(f"ld.param.u16 %o{i}, [po{i}];" for i in range(spatial))
    params = ", ".join(f".param .u32 pc{i}" for i in range(5))
    load_coords = " ".join(f"ld.param.u32 %c{i}, [pc{i}];" for i in range(5))
    words = tma_device.SMEM // 8
    mark = int.from_bytes(bytes([tma_device.MARK]) * 8, "little")
    if replace is None:
        map_param, value_param = ".param .align 64 .b8 ptmap[128]", ""
        map_setup, replace_lines = "mov.u64 %tm, ptmap; cvta.param.u64 %tm, %tm;", ""
    else:
        ordinal = f"{replace['ord']}, " if replace["ord"] is not None else ""
        # the .field3 values (Table 32 codes) are immediates; the others a register
        value = str(replace["value"]) if replace["field"] in FIELDS["field3"] else "%val" if replace["type"] == "b64" else "%val32"
        map_param, value_param = ".param .u64 ptmap", ", .param .u64 pvalue"
        map_setup = "ld.param.u64 %tm, [ptmap]; cvta.to.global.u64 %tmg, %tm; ld.param.u64 %val, [pvalue]; cvt.u32.u64 %val32, %val;"
        replace_lines = f"""
 tensormap.replace.tile.{replace["field"]}.global.b1024.{replace["type"]} [%tmg], {ordinal}{value};
 fence.proxy.tensormap::generic.release.gpu;
 fence.proxy.tensormap::generic.acquire.gpu [%tm], 128;"""
    return f"""
.visible .entry {entry}({map_param}, .param .u64 pshared, .param .u64 pdone, {params}, .param .u32 pbytes{offset_params}{value_param})
{{
 .reg .b64 %tm, %tmg, %out, %done, %sm, %bar, %st, %a, %v, %val; .reg .b32 %c<5>, %n, %thr, %i, %k, %val32; .reg .b16 %o<3>; .reg .pred %p, %q;
 {map_setup} ld.param.u64 %out, [pshared]; ld.param.u64 %done, [pdone]; ld.param.u32 %n, [pbytes];
 {load_coords} {load_offsets}
 cvta.to.global.u64 %out, %out; cvta.to.global.u64 %done, %done;
 mov.u32 %thr, %tid.x; mov.u64 %sm, tma_smem; mov.u64 %bar, tma_bar;
 mov.u32 %i, %thr;
FILL: setp.ge.u32 %p, %i, {words}; @%p bra FILLED;
 mul.wide.u32 %a, %i, 8; add.s64 %a, %sm, %a; st.shared.u64 [%a], {mark}; add.u32 %i, %i, {tma_device.THREADS}; bra FILL;
FILLED:
 fence.proxy.async.shared::cta;
 bar.sync 0;
 setp.ne.u32 %p, %thr, 0; @%p bra AFTER;{replace_lines}
 mbarrier.init.shared::cta.b64 [%bar], 1;
 fence.mbarrier_init.release.cluster;
 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%bar], %n;
 cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes [%sm], [%tm, {{{coords}}}], [%bar]{offsets};
 mov.u32 %k, 0;
WAIT: mbarrier.try_wait.parity.shared::cta.b64 %q, [%bar], 0; @%q bra GOT;
 add.u32 %k, %k, 1; setp.lt.u32 %p, %k, 4000000; @%p bra WAIT; bra NOTE;
GOT: st.global.u64 [%done], 1;
NOTE: st.global.u64 [%done+8], %sm;
AFTER:
 bar.sync 0;
 mov.u32 %i, %thr;
COPY: setp.ge.u32 %p, %i, {words}; @%p bra DONE;
 mul.wide.u32 %a, %i, 8; add.s64 %v, %sm, %a; ld.shared.u64 %v, [%v]; add.s64 %a, %out, %a; st.global.u64 [%a], %v; add.u32 %i, %i, {tma_device.THREADS}; bra COPY;
DONE:
 ret;
}}
"""


def kernel_ptx(rank: int, mode: str = "tile") -> str:
    """The load and the store kernel of one rank (see :mod:`tma_device`); for ``mode`` im2col the
    load kernel alone (``tma_load_im2col_Nd``), which takes the im2col offsets."""
    load = _load_kernel_ptx(f"tma_load_{'' if mode == 'tile' else 'im2col_'}{rank}d", rank, mode)
    if mode != "tile":
        return load
    coords = ", ".join(f"%c{i}" for i in range(rank))
    params = ", ".join(f".param .u32 pc{i}" for i in range(5))
    load_coords = " ".join(f"ld.param.u32 %c{i}, [pc{i}];" for i in range(5))
    words = tma_device.SMEM // 8
    store = f"""
.visible .entry tma_store_{rank}d(.param .align 64 .b8 ptmap[128], .param .u64 psrc, {params})
{{
 .reg .b64 %tm, %src, %sm, %a, %v; .reg .b32 %c<5>, %thr, %i; .reg .pred %p;
 mov.u64 %tm, ptmap; cvta.param.u64 %tm, %tm; ld.param.u64 %src, [psrc]; cvta.to.global.u64 %src, %src;
 {load_coords}
 mov.u32 %thr, %tid.x; mov.u64 %sm, tma_smem;
 mov.u32 %i, %thr;
FILL: setp.ge.u32 %p, %i, {words}; @%p bra FILLED;
 mul.wide.u32 %a, %i, 8; add.s64 %v, %src, %a; ld.global.u64 %v, [%v]; add.s64 %a, %sm, %a; st.shared.u64 [%a], %v; add.u32 %i, %i, {tma_device.THREADS}; bra FILL;
FILLED:
 fence.proxy.async.shared::cta;
 bar.sync 0;
 setp.ne.u32 %p, %thr, 0; @%p bra DONE;
 cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group [%tm, {{{coords}}}], [%sm];
 cp.async.bulk.commit_group;
 cp.async.bulk.wait_group 0;
DONE:
 ret;
}}
"""
    return load + store


def replace_kernel_ptx(case: dict) -> str:
    """The replace round's kernel of one case (``tma_replace_caseNNN``): the load kernel through a
    map that the case's ``tensormap.replace`` changed first."""
    return _load_kernel_ptx(f"tma_replace_{case['name']}", loaded_rank(case), replace=case["replace"])


def loaded_rank(case: dict) -> int:
    """The rank of a case's load: its map's, or the one a ``tensormap.replace.rank`` set."""
    replace = case.get("replace")
    return replace["value"] + 1 if replace and replace["field"] == "rank" else len(case["global_dims"])


def module_ptx(round_name: str = "tma") -> str:
    """The one module of a round's kernels: the load and store kernels of every rank and mode (and,
    for the replace round, one kernel per case)."""
    head = f".shared .align 1024 .b8 tma_smem[{tma_device.SMEM}];\n.shared .align 8 .b64 tma_bar;\n"
    kernels = "".join(kernel_ptx(rank) for rank in range(1, 6)) + "".join(kernel_ptx(rank, "im2col") for rank in range(3, 6))
    if round_name.startswith("tma-replace"):
        kernels += "".join(replace_kernel_ptx(case) for case in cases(ROUNDS[round_name][0], round_name=round_name))
    return HEADER + head + kernels


def prepare(bundle: Path, ptxas: str = "ptxas", round_name: str = "tma") -> dict:
    """Write the bundle of a round: the kernels (one module) and the plan."""
    source = module_ptx(round_name)
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / tma_device.PTX_FILE).write_text(source)
    (bundle / tma_device.CUBIN_FILE).write_bytes(assemble_module(source, ptxas))
    plan = {"ptxas": ptxas_version(ptxas), "cases": cases(ROUNDS[round_name][0], round_name=round_name)}
    (bundle / tma_device.files(round_name)["plan"]).write_text(json.dumps(plan, indent=1) + "\n")
    return plan


PLAN = "tma-plan.json"
"""The plan a recording was made from, kept beside it (``{round}-plan.json`` for the others)."""


@attrs.frozen
class Replay:
    """One case replayed: the mismatches in words, or -- where the semantics refuse the copy as
    not modelled (an interleaved layout) -- why, and no comparison."""

    name: str
    mismatches: tuple[str, ...]
    not_modelled: str | None = None
    #: Why a load the chip made is not compared: it read bytes past the recorded tensor.
    unrecorded: str | None = None
    #: The load sent more bytes than the kernel's expect_tx: whether the phase completed then
    #: depends on how the chip splits its complete-tx (§9.7.13.15: a phase completes when the
    #: tx-count reaches zero), so completion is not compared.
    completion_open: bool = False


def replay_case(case: dict, data, profile: str = "sm_90") -> Replay:
    """One recorded case through the semantics: the load's shared memory and mbarrier, the store's
    tensor -- or, where the chip faulted, the semantics' refusal (a copy the semantics makes where
    the chip faulted, or a refusal where it did not, is a mismatch)."""
    from ptxspec.semantics import mbarrier
    from ptxspec.semantics.instructions import execute
    from ptxspec.semantics.tensor_map import NotModelled, OutsideImage
    from ptxspec.spec.errors import PtxSpecError

    name = case["name"]
    if f"{name}_refused" in data:
        return Replay(name, (f"the driver refused the tensor map (CUresult {int(data[name + '_refused'][0])}) that the model accepts",))
    out: list[str] = []
    completion_open = False
    address, shared_at = (int(x) for x in data[f"{name}_address"]) if f"{name}_address" in data else (0x7F00_0000_0000, 0)
    shared_at = (shared_at & 0xFFFFFF) or 1024  # the .shared::cta address of the box (this CTA is rank 0; 1024 in every load recorded)
    tmap = tensor_map_of(case, address)
    rank = loaded_rank(case)
    coords = [c % (1 << 32) for c in case["coords"]]
    im2col = case.get("mode") == "im2col"
    mode, offsets = ("im2col", list(case["offsets"])) if im2col else ("tile", [])
    tensor = tma_device.tensor_bytes(case).tobytes()
    barrier_at = shared_at + tma_device.SMEM
    # the kernel's mbarrier.init count 1 and its mbarrier.arrive.expect_tx of the box's bytes
    _, armed = mbarrier.arrive(mbarrier.init(1), tx_count=case["box_bytes"])
    before = bytes([tma_device.MARK]) * barrier_at + armed.encode().to_bytes(8, "little")
    state = State(shared=before, global_memory=Segment(address, tensor), tensor_maps=((0x100, tmap),))
    if "replace" in case:  # the replace rounds: the map changed in place first (§9.7.9.26)
        try:
            state = _replaced_state(case, state, address)
        except NotModelled as error:
            return Replay(name, (), error.one_line())
    try:
        load = execute(
            f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes",
            [shared_at, 0x100, *coords, barrier_at, *offsets],
            profile,
            state=state,
        )
    except NotModelled as error:
        return Replay(name, (), error.one_line())
    except OutsideImage as error:
        if f"{name}_load_fault" not in data:
            return Replay(name, (), unrecorded=error.one_line())
    except PtxSpecError as error:
        if f"{name}_load_fault" not in data:
            out.append(f"load: the semantics refuse a copy the chip made: {error}")
    else:
        if f"{name}_load_fault" in data:
            out.append("load: the chip faulted (illegal instruction) where the semantics copy")
        else:
            out += _compare_load(name, data, load.state, shared_at, barrier_at, before)
            completion_open = _over_delivered(load.state, barrier_at)
    if im2col or "replace" in case:  # the rounds store through unchanged tile-mode maps only
        return Replay(name, tuple(out), completion_open=completion_open)
    source = tma_device.store_bytes(case).tobytes()
    state = State(shared=bytes(shared_at) + source, global_memory=Segment(address, tensor), tensor_maps=((0x100, tmap),))
    try:
        store = execute(f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group", [0x100, *coords, shared_at], profile, state=state)
    except PtxSpecError as error:
        if f"{name}_store_fault" not in data:
            out.append(f"store: the semantics refuse a copy the chip made: {error}")
        return Replay(name, tuple(out), completion_open=completion_open)
    if f"{name}_store_fault" in data:
        out.append("store: the chip faulted (illegal instruction) where the semantics copy")
        return Replay(name, tuple(out), completion_open=completion_open)
    assert store.state is not None
    expected = store.state.global_memory
    if not expected.admits(Segment(expected.base, data[f"{name}_global"].tobytes())):
        open_bytes = set(expected.unknown(expected.base, len(expected.data)))
        differ = [i for i, (x, y) in enumerate(zip(expected.data, data[f"{name}_global"].tobytes())) if x != y and i not in open_bytes]
        out.append(f"store: {len(differ)} byte(s) of the tensor differ, first at offset {differ[0]}")
    return Replay(name, tuple(out), completion_open=completion_open)


def _replaced_state(case: dict, state: State, address: int) -> State:
    """The state after the case's ``tensormap.replace`` on the map at 0x100 (§9.7.9.26)."""
    from ptxspec.semantics.instructions import execute

    replace = case["replace"]
    value = address + replace["value"] if replace["field"] == "global_address" else replace["value"]
    ordinal = [replace["ord"]] if replace["ord"] is not None else []
    operands = "[addr], ord, new_val" if ordinal else "[addr], new_val"
    after = execute(
        f"tensormap.replace.tile.{replace['field']}.global.b1024.{replace['type']} {operands}", [0x100, *ordinal, value], "sm_90", state=state
    ).state
    assert after is not None
    return after


def _barrier(after: State | None, barrier_at: int):
    from ptxspec.semantics import mbarrier

    assert after is not None
    return mbarrier.MbarrierState.decode(int.from_bytes(after.shared[barrier_at : barrier_at + 8], "little"))


def _over_delivered(after: State | None, barrier_at: int) -> bool:
    """Whether the copy's complete-tx took the tx-count below zero (it sent more than expected)."""
    return _barrier(after, barrier_at).tx_count < 0


def _compare_load(name: str, data, after: State | None, shared_at: int, barrier_at: int, before: bytes) -> list[str]:
    assert after is not None
    out = []
    expected = Segment(0, after.shared, after.shared_indeterminate)
    observed = Segment(0, before[:shared_at] + data[f"{name}_shared"].tobytes() + after.shared[barrier_at:])
    # A copy that sends more bytes than expected may complete the phase before its last bytes land;
    # the kernel then reads some bytes as they were: each byte is the copy's or the one before it.
    early = _over_delivered(after, barrier_at) and bool(data[f"{name}_done"][0])
    if not expected.admits(observed):
        differ = [
            i - shared_at
            for i in range(shared_at, barrier_at)
            if expected.data[i] != observed.data[i] and not any(a <= i < b for a, b in expected.indeterminate) and not (early and observed.data[i] == before[i])
        ]
        if differ:
            out.append(f"load: {len(differ)} byte(s) of shared memory differ, first at box offset {differ[0]}")
    completed = _barrier(after, barrier_at).phase_parity == 1
    if bool(data[f"{name}_done"][0]) != completed and not _over_delivered(after, barrier_at):
        out.append(
            f"load: the chip {'completed' if data[name + '_done'][0] else 'did not complete'} the mbarrier phase, the semantics {'do' if completed else 'do not'}"
        )
    return out


def verify(directory: Path, profile: str = "sm_90", round_name: str = "tma", output: str | None = None) -> dict[str, Replay]:
    """Replay a round's recording (its ``ROUND.npz``, or ``output``: a second chip's file)."""
    files = tma_device.files(round_name)
    plan = json.loads((directory / files["plan"]).read_text())
    data = np.load(directory / (output or files["output"]))
    return {case["name"]: replay_case(case, data, profile) for case in plan["cases"]}
