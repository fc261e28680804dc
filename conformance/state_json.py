"""A :class:`~ptxspec.semantics.state.State` as JSON, and what an instruction changed in it.

``ptxspec eval --state FILE.json`` reads a state in this form, ``ptxspec vectors`` writes the states
of the tcgen05 vectors in it (``"state"`` and ``"state_after"``, :mod:`ptxspec.conformance.tcgen05_vectors`),
and ``ptxspec check-vectors`` reads them back. The schema (every field optional)::

    {"shared": "<hex bytes>",
     "tensor_memory": {"cells": [[lane, column, "0x89abcdef"], [lane, column, "0x0000cdef", 1], ...],
                       "allocations": [[column, columns], ...],
                       "relinquished": false,
                       "last_columns": null},
     "cta_group": null,
     "peer": null}

* ``shared``: the CTA's shared memory, two hex digits a byte, address 0 first (an ``0x`` prefix,
  blanks and ``_`` are allowed; default: empty).
* ``tensor_memory.cells``: the cells that hold a value, each ``[lane, column, value]`` with lane
  0-127, column 0-511 and value a hex string of at most 8 digits (or a JSON integer); every cell
  not listed is undefined (it was never written, or was deallocated). A fourth element ``halves``
  says which 16-bit halves hold a value when not both: ``1`` the low half (what
  ``tcgen05.st.unpack::16b`` writes), ``2`` the high half, ``3`` both (the default). The writer
  lists the cells lane by lane, column by column, with the undefined half of a half-defined cell
  written as 0. Default: no cell holds a value.
* ``tensor_memory.allocations``: the live allocations of §9.7.16.1.2, ``[first column, number of
  columns]`` (a multiple of 32 and at least 32; default none); ``relinquished``: whether the CTA
  executed ``tcgen05.relinquish_alloc_permit`` (default false); ``last_columns``: the column count
  of the latest ``tcgen05.alloc`` (default null: none yet).
* ``tensor_memory.allowed``: cells that hold *one of* a set, the spec-level result of a
  ``tcgen05.mma`` element, ``[lane, column, set]`` with the set as results write it
  (``{"kind": "interval", "format": "f32", "low": "0x...", "high": "0x...", "nan": false}``, or
  ``one-of`` / ``any-nan``; default none).
* ``cta_group``: the ``.cta_group`` (1 or 2) of the kernel's tcgen05 instructions once one ran
  (default null).
* ``collectors``: the tcgen05.mma collector buffers holding a valid fill (``"a"``, ``"b0"``..``"b3"``;
  default none).
* ``peer``: the peer CTA's state (the same schema, its own ``peer`` null) for ``.cta_group::2``
  (default null).
* ``global``, ``local``, ``const``, ``param``: the bytes of that state space the memory
  instructions (§9.7.9.8-24, §9.7.13.5-6) may reach, ``{"base": "0x7f0000000000", "bytes": "<hex
  bytes>", "indeterminate": [[start, end], ...]}`` -- the first byte's address, the bytes from it
  on, and the address ranges whose value is indeterminate (what ``discard`` leaves; their bytes
  are written as 0). Default: none of that space.
* ``shared_indeterminate``: ``[[start, end], ...]`` offsets of ``shared`` whose value is
  indeterminate (a value the profile leaves open that an instruction wrote; 0 in ``shared``).
* ``multimem``: the memories a multimem address points to (§9.7.9.14), a list of segments as
  ``global`` writes one, all over the same address range (default none).
* ``tensor_maps``: the tensor maps (§5.5) the tensor copies read, ``[["0x1000", {"element_type":
  "u32", "global_address": "0x7f1000000000", "global_dims": [8, 4], "global_strides": [32],
  "box_dims": [4, 2], ...}], ...]`` -- the address of each map's object and its fields
  (:class:`~ptxspec.semantics.tensor_map.TensorMap`; default none).
* ``cluster``: the shared memory of the other CTAs of the cluster, ``[[rank, "<hex bytes>"], ...]``
  (for ``.shared::cluster`` accesses; default none).
* ``addresses``: where the state spaces lie in the generic address space and the CTA's place in
  its cluster (:class:`~ptxspec.semantics.state.AddressMap`): ``{"shared": ["0x...", size],
  "local": [...], "const": [...], "param": [...], "cluster_base": 0, "cluster_stride": 16777216,
  "cta_rank": 0, "cluster_ctas": 1}``, each field optional (default: the values an H200 showed).

The writer leaves out ``global`` .. ``addresses`` where they hold their defaults.

A key not in the schema, a value of the wrong kind or out of range is a located
:class:`~ptxspec.spec.errors.OperandError`: ``FILE:line:column`` where the text is not JSON,
else the JSON path, as in ``state.json: tensor_memory.cells[3]``.

Two states that this schema writes alike are equal :class:`~ptxspec.semantics.state.State` values
(the bits of an undefined half are 0 in both), and :func:`diff` / :func:`diff_lines` say what
differs -- the cells whose value or definedness changed, the byte
ranges of shared memory, the allocations and flags.
"""

from __future__ import annotations

import json
import re
from numbers import Integral
from typing import Any, NoReturn

import attrs
import numpy as np

from ptxspec.semantics.results import allowed_from_json
from ptxspec.semantics.state import COLUMNS, HIGH_HALF, LANES, LOW_HALF, WHOLE, AddressMap, Allocation, Segment, State, TensorMemory
from ptxspec.spec.errors import Location, OperandError, PtxSpecError

SCHEMA = (
    '{"shared": "<hex bytes>", "tensor_memory": {"cells": [[lane, column, "0x........"(, halves)], ...], '
    '"allocations": [[column, columns], ...], "relinquished": false, "last_columns": null}, "cta_group": null, "peer": null}'
)
_STATE_KEYS = (
    "shared",
    "tensor_memory",
    "cta_group",
    "collectors",
    "peer",
    "global",
    "local",
    "const",
    "param",
    "cluster",
    "addresses",
    "shared_indeterminate",
    "multimem",
    "tensor_maps",
)
#: The state spaces a State holds as segments, by their JSON key and attribute.
_SEGMENT_KEYS = {"global": "global_memory", "local": "local_memory", "const": "const_memory", "param": "param_memory"}
_SEGMENT_FIELDS = ("base", "bytes", "indeterminate")
_ADDRESS_FIELDS = ("shared", "local", "const", "param", "cluster_base", "cluster_stride", "cta_rank", "cluster_ctas")
_TM_KEYS = ("cells", "allocations", "relinquished", "last_columns", "allowed")
_HEX_BYTES = re.compile(r"[0-9a-fA-F]*")
#: The bits of a cell that its halves flags say hold a value.
_HALF_MASK = np.array([0, 0xFFFF, 0xFFFF0000, 0xFFFFFFFF], dtype=np.uint32)


# ---------------------------------------------------------------------------------------------
# State -> JSON
# ---------------------------------------------------------------------------------------------


def cells_json(tm: TensorMemory) -> list[list]:
    """The defined cells of ``tm`` as the schema writes them (lane-major; undefined halves 0)."""
    defined = tm.defined()
    lanes, columns = np.nonzero(defined)
    flags = defined[lanes, columns]
    values = tm.words()[lanes, columns] & _HALF_MASK[flags]
    out: list[list] = []
    for lane, column, value, flag in zip(lanes.tolist(), columns.tolist(), values.tolist(), flags.tolist()):
        cell: list = [lane, column, f"0x{value:08x}"]
        if flag != WHOLE:
            cell.append(flag)
        out.append(cell)
    return out


def state_to_json(state: State) -> dict:
    """``state`` in the schema of this module, every field written."""
    tm = state.tensor_memory
    return {
        "shared": state.shared.hex(),
        "tensor_memory": {
            "cells": cells_json(tm),
            "allocations": [[a.column, a.columns] for a in tm.allocations],
            "relinquished": tm.relinquished,
            "last_columns": tm.last_columns,
            "allowed": [[lane, column, allowed.to_json()] for lane, column, allowed in tm.allowed],  # type: ignore[attr-defined]
        },
        "cta_group": state.cta_group,
        "collectors": sorted(state.collectors),
        "peer": None if state.peer is None else state_to_json(state.peer),
        **memory_json(state),
    }


def _segment_json(segment: Segment) -> dict:
    return {"base": f"{segment.base:#x}", "bytes": segment.data.hex(), "indeterminate": [[f"{a:#x}", f"{b:#x}"] for a, b in segment.indeterminate]}


def _tensor_map_json(tmap) -> dict:
    """A tensor map's fields (:class:`~ptxspec.semantics.tensor_map.TensorMap`), the global address
    in hex and an im2col map's parameters as an object."""
    fields = attrs.asdict(tmap, recurse=True)
    fields["global_address"] = f"{tmap.global_address:#x}"
    return {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}


def memory_json(state: State) -> dict:
    """The fields of the memory instructions (``global`` .. ``addresses``) that differ from their
    defaults."""
    out: dict[str, Any] = {}
    for key, attribute in _SEGMENT_KEYS.items():
        segment = getattr(state, attribute)
        if segment != Segment():
            out[key] = _segment_json(segment)
    if state.cluster:
        out["cluster"] = [[rank, image.hex()] for rank, image in state.cluster]
    if state.shared_indeterminate:
        out["shared_indeterminate"] = [[a, b] for a, b in state.shared_indeterminate]
    if state.multimem:
        out["multimem"] = [_segment_json(m) for m in state.multimem]
    if state.tensor_maps:
        out["tensor_maps"] = [[f"{address:#x}", _tensor_map_json(tmap)] for address, tmap in state.tensor_maps]
    if state.addresses != AddressMap():
        a = state.addresses
        out["addresses"] = {
            **{space: [f"{getattr(a, space)[0]:#x}", getattr(a, space)[1]] for space in ("shared", "local", "const", "param")},
            **{key: getattr(a, key) for key in ("cluster_base", "cluster_stride", "cta_rank", "cluster_ctas")},
        }
    return out


# ---------------------------------------------------------------------------------------------
# JSON -> State
# ---------------------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, (bytes, set)) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Reader:
    """Reads one state object, each complaint located at ``source: path``."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, path: str, message: str, section: str | None = None) -> NoReturn:
        raise OperandError(
            f"{message} (the state schema: docs/vectors.rst, 'State files')", where=f"{self.source}: {path or '(the top level)'}", section=section
        )

    def members(self, value: object, path: str, keys: tuple[str, ...]) -> dict:
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {_shown(value)}")
        for key in value:
            if key not in keys:
                self.fail(f"{path}.{key}" if path else key, f"unknown field {key!r} (the fields are {', '.join(keys)})")
        return value

    def integer(self, value: object, path: str, low: int, high: int, what: str) -> int:
        if not _is_int(value) or not low <= value <= high:  # type: ignore[operator]
            self.fail(path, f"{what} is an integer {low}-{high}, got {_shown(value)}")
        return int(value)  # type: ignore[call-overload]

    def state(self, value: object, path: str = "", peer_allowed: bool = True) -> State:
        obj = self.members(value, path, _STATE_KEYS)
        here = (path + ".") if path else ""
        shared = self.shared(obj.get("shared", ""), here + "shared")
        tm = self.tensor_memory(obj.get("tensor_memory", {}), here + "tensor_memory")
        group = obj.get("cta_group")
        if group is not None and (not _is_int(group) or group not in (1, 2)):
            self.fail(here + "cta_group", f"cta_group is null, 1 or 2, got {_shown(group)}", section="9.7.16.5.1")
        peer = obj.get("peer")
        if peer is not None and not peer_allowed:
            self.fail(here + "peer", "a peer CTA's state has no peer of its own (null)")
        collectors = obj.get("collectors", [])
        if not isinstance(collectors, list) or any(c not in ("a", "b0", "b1", "b2", "b3") for c in collectors):
            self.fail(
                here + "collectors",
                f'collectors is a list of the buffers holding a valid fill ("a", "b0".."b3"), got {_shown(collectors)}',
                section="9.7.16.10.9.1",
            )
        memory: dict[str, Any] = {}
        for key, attribute in _SEGMENT_KEYS.items():
            if key in obj:
                memory[attribute] = self.segment(obj[key], here + key)
        if "cluster" in obj:
            memory["cluster"] = self.cluster(obj["cluster"], here + "cluster")
        if "addresses" in obj:
            memory["addresses"] = self.addresses(obj["addresses"], here + "addresses")
        if "multimem" in obj:
            if not isinstance(obj["multimem"], list):
                self.fail(here + "multimem", f"multimem is a list of segments, one per memory behind the multimem address, got {_shown(obj['multimem'])}")
            memory["multimem"] = tuple(self.segment(m, f"{here}multimem[{i}]") for i, m in enumerate(obj["multimem"]))
        if "tensor_maps" in obj:
            memory["tensor_maps"] = self.tensor_maps(obj["tensor_maps"], here + "tensor_maps")
        if "shared_indeterminate" in obj:
            ranges = self.segment({"bytes": shared.hex(), "indeterminate": obj["shared_indeterminate"]}, here + "shared_indeterminate")
            memory["shared_indeterminate"] = ranges.indeterminate
        return State(shared, tm, group, None if peer is None else self.state(peer, here + "peer", False), frozenset(collectors), **memory)

    def address(self, value: object, path: str) -> int:
        """An address: a JSON integer or a hex string (``"0x7f00..."``), 0 .. 2^64 - 1."""
        if isinstance(value, str):
            try:
                value = int(value, 16)
            except ValueError:
                self.fail(path, f"an address is an integer or a hex string, got {_shown(value)}")
        return self.integer(value, path, 0, (1 << 64) - 1, "an address")

    def segment(self, value: object, path: str) -> Segment:
        obj = self.members(value, path, _SEGMENT_FIELDS)
        base = self.address(obj.get("base", 0), path + ".base")
        data = self.shared(obj.get("bytes", ""), path + ".bytes")
        ranges = obj.get("indeterminate", [])
        if not isinstance(ranges, list):
            self.fail(path + ".indeterminate", f"indeterminate is a list of [start, end] address ranges, got {_shown(ranges)}")
        pairs = []
        for i, pair in enumerate(ranges):
            where = f"{path}.indeterminate[{i}]"
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail(where, f"an indeterminate range is [start, end], got {_shown(pair)}")
            start, end = self.address(pair[0], where), self.address(pair[1], where)
            if not base <= start < end <= base + len(data):
                self.fail(where, f"the range {start:#x}-{end:#x} is not within the segment's bytes {base:#x}-{base + len(data):#x}")
            pairs.append((start, end))
        return Segment(base, data, tuple(pairs))

    def tensor_maps(self, value: object, path: str) -> tuple[tuple[int, object], ...]:
        from ptxspec.semantics.tensor_map import Im2col, TensorMap

        if not isinstance(value, list):
            self.fail(path, f"tensor_maps is a list of [address, fields], got {_shown(value)}")
        out = []
        names = [f.name for f in attrs.fields(TensorMap)]
        for i, item in enumerate(value):
            where = f"{path}[{i}]"
            if not isinstance(item, list) or len(item) != 2:
                self.fail(where, f"a tensor map is [address, fields], got {_shown(item)}")
            fields = dict(self.members(item[1], where + "[1]", tuple(names)))
            self.required(fields, where + "[1]", ("element_type", "global_dims", "global_strides"), "a tensor map")
            fields["global_address"] = self.address(fields.get("global_address", 0), where + "[1].global_address")
            for name in ("global_dims", "global_strides", "box_dims", "element_strides"):
                if fields.get(name) is not None or name in ("global_dims", "global_strides"):
                    fields[name] = self.integers(fields[name], f"{where}[1].{name}", name)
            for name in ("element_type", "interleave", "swizzle", "swizzle_atomicity", "oob_fill", "l2_promotion"):
                if name in fields and not isinstance(fields[name], str):
                    self.fail(f"{where}[1].{name}", f"{name} is a string (its name in §5.5), got {_shown(fields[name])}")
            if fields.get("im2col") is not None:
                at = where + "[1].im2col"
                im2col_fields = dict(self.members(fields["im2col"], at, tuple(f.name for f in attrs.fields(Im2col))))
                self.required(im2col_fields, at, ("lower_corner", "upper_corner", "channels_per_pixel", "pixels_per_column"), "im2col")
                for name in ("lower_corner", "upper_corner"):
                    im2col_fields[name] = self.integers(im2col_fields[name], f"{at}.{name}", name)
                for name in ("channels_per_pixel", "pixels_per_column"):
                    im2col_fields[name] = self.integer(im2col_fields[name], f"{at}.{name}", 1, 1 << 16, name)
                if im2col_fields.get("wide") not in (None, "w", "w128"):
                    self.fail(f"{at}.wide", f'wide is null, "w" or "w128", got {_shown(im2col_fields["wide"])}')
                fields["im2col"] = Im2col(**im2col_fields)
            try:
                out.append((self.address(item[0], where + "[0]"), TensorMap(**fields)))
            except PtxSpecError as error:
                self.fail(where + "[1]", f"not a tensor map: {error}", section="5.5.8")
        return tuple(out)

    def required(self, fields: dict, path: str, names: tuple[str, ...], what: str) -> None:
        missing = [name for name in names if name not in fields]
        if missing:
            self.fail(path, f"{what} needs the field(s) {', '.join(missing)}")

    def integers(self, value: object, path: str, what: str) -> tuple[int, ...]:
        if not isinstance(value, list) or not all(_is_int(v) for v in value):
            self.fail(path, f"{what} is a list of integers, got {_shown(value)}")
        return tuple(int(v) for v in value)  # type: ignore[call-overload]

    def cluster(self, value: object, path: str) -> tuple[tuple[int, bytes], ...]:
        if not isinstance(value, list):
            self.fail(path, f"cluster is a list of [rank, hex bytes], got {_shown(value)}")
        out = []
        for i, item in enumerate(value):
            where = f"{path}[{i}]"
            if not isinstance(item, list) or len(item) != 2:
                self.fail(where, f"a CTA of the cluster is [rank, hex bytes], got {_shown(item)}")
            out.append((self.integer(item[0], where, 0, 15, "a CTA's rank"), self.shared(item[1], where)))
        return tuple(out)

    def addresses(self, value: object, path: str) -> AddressMap:
        obj = self.members(value, path, _ADDRESS_FIELDS)
        fields: dict[str, Any] = {}
        for space in ("shared", "local", "const", "param"):
            if space in obj:
                window = obj[space]
                if not isinstance(window, list) or len(window) != 2:
                    self.fail(f"{path}.{space}", f"a window is [base, size], got {_shown(window)}", section="6.4.1.1")
                fields[space] = (self.address(window[0], f"{path}.{space}"), self.address(window[1], f"{path}.{space}"))
        for key in ("cluster_base", "cluster_stride"):
            if key in obj:
                fields[key] = self.address(obj[key], f"{path}.{key}")
        if "cta_rank" in obj:
            fields["cta_rank"] = self.integer(obj["cta_rank"], f"{path}.cta_rank", 0, 15, "cta_rank")
        if "cluster_ctas" in obj:
            fields["cluster_ctas"] = self.integer(obj["cluster_ctas"], f"{path}.cluster_ctas", 1, 16, "cluster_ctas")
        result = attrs.evolve(AddressMap(), **fields)
        if result.cta_rank >= result.cluster_ctas:
            self.fail(f"{path}.cta_rank", f"cta_rank {result.cta_rank} is not a rank of a cluster of {result.cluster_ctas} CTAs")
        return result

    def shared(self, value: object, path: str) -> bytes:
        if not isinstance(value, str):
            self.fail(path, f"shared memory is a string of hex digits, two a byte, got {_shown(value)}")
        text = re.sub(r"[\s_]", "", value)  # type: ignore[call-overload]
        if text[:2] in ("0x", "0X"):
            text = text[2:]
        if not _HEX_BYTES.fullmatch(text):
            bad = next(c for c in text if c not in "0123456789abcdefABCDEF")
            self.fail(path, f"shared memory is hex digits, two a byte; {bad!r} is not a hex digit")
        if len(text) % 2:
            self.fail(path, f"shared memory is two hex digits a byte; got an odd number ({len(text)})")
        return bytes.fromhex(text)

    def tensor_memory(self, value: object, path: str) -> TensorMemory:
        obj = self.members(value, path, _TM_KEYS)
        cells = obj.get("cells", [])
        if not isinstance(cells, list):
            self.fail(path + ".cells", f"cells is a list of [lane, column, value(, halves)], got {_shown(cells)}")
        words = np.zeros((LANES, COLUMNS), dtype=np.uint32)
        written = np.zeros((LANES, COLUMNS), dtype=np.uint8)
        for k, cell in enumerate(cells):
            where = f"{path}.cells[{k}]"
            if not isinstance(cell, list) or len(cell) not in (3, 4):
                self.fail(where, f"a cell is [lane, column, value] or [lane, column, value, halves], got {_shown(cell)}")
            lane = self.integer(cell[0], where, 0, LANES - 1, "the lane")
            column = self.integer(cell[1], where, 0, COLUMNS - 1, "the column")
            bits = self.cell_value(cell[2], where)
            halves = (
                WHOLE if len(cell) == 3 else self.integer(cell[3], where, LOW_HALF, WHOLE, "halves (1: the low 16 bits hold a value, 2: the high, 3: both)")
            )
            if written[lane, column]:
                self.fail(where, f"cell (lane {lane}, column {column}) is listed twice")
            if bits & ~int(_HALF_MASK[halves]):
                self.fail(where, f"value {bits:#010x} has bits in the half that halves = {halves} says holds no value")
            words[lane, column], written[lane, column] = bits, halves
        allocations_value = obj.get("allocations", [])
        if not isinstance(allocations_value, list):
            self.fail(path + ".allocations", f"allocations is a list of [column, columns], got {_shown(allocations_value)}")
        allocations = []
        for k, item in enumerate(allocations_value):
            where = f"{path}.allocations[{k}]"
            if not isinstance(item, list) or len(item) != 2:
                self.fail(where, f"an allocation is [first column, number of columns], got {_shown(item)}")
            allocations.append(
                Allocation(self.integer(item[0], where, 0, COLUMNS - 1, "the first column"), self.integer(item[1], where, 1, COLUMNS, "the number of columns"))
            )
        relinquished = obj.get("relinquished", False)
        if not isinstance(relinquished, bool):
            self.fail(path + ".relinquished", f"relinquished is true or false, got {_shown(relinquished)}")
        last = obj.get("last_columns")
        if last is not None:
            last = self.integer(last, path + ".last_columns", 1, COLUMNS, "last_columns (null or a column count)")
        allowed = []
        for k, item in enumerate(obj.get("allowed", [])):
            where = f"{path}.allowed[{k}]"
            if not isinstance(item, list) or len(item) != 3:
                self.fail(where, f"an allowed cell is [lane, column, allowed set], got {_shown(item)}")
            lane, column = self.integer(item[0], where, 0, LANES - 1, "the lane"), self.integer(item[1], where, 0, COLUMNS - 1, "the column")
            if written[lane, column]:
                self.fail(where, f"cell (lane {lane}, column {column}) holds a value and one of a set")
            try:
                allowed.append((lane, column, allowed_from_json(item[2])))
            except (ValueError, KeyError, TypeError) as error:
                self.fail(where, f"not an allowed set: {error}")
        try:
            return TensorMemory(words.tobytes(), written.tobytes(), tuple(allocations), relinquished, last, tuple(sorted(allowed, key=lambda e: e[:2])))
        except PtxSpecError as error:  # the allocations' own rules (units of 32 columns, no overlap)
            raise OperandError(error.message, where=f"{self.source}: {path}.allocations", section=error.section) from None

    def cell_value(self, value: object, where: str) -> int:
        if _is_int(value):
            bits = int(value)  # type: ignore[call-overload]
        elif isinstance(value, str) and re.fullmatch(r"0[xX][0-9a-fA-F_]+", value.strip()):
            bits = int(value.strip()[2:].replace("_", ""), 16)
        else:
            self.fail(where, f'a cell\'s value is a hex string such as "0x3f800000" (or an integer), got {_shown(value)}')
        if not 0 <= bits < 1 << 32:
            self.fail(where, f"a cell holds 32 bits; {bits:#x} does not fit")
        return bits


def state_from_json(value: object, source: str = "<state>", path: str = "") -> State:
    """The :class:`State` that ``value`` (a decoded JSON value) describes; a located
    :class:`~ptxspec.spec.errors.OperandError` (``source: path.json.path``) where it is not one.
    ``path``: where ``value`` sits in a larger document (``"state"`` in a vector line)."""
    return _Reader(source).state(value, path)


def load_state(path: str) -> State:
    """The state in the JSON file ``path`` (``-``: standard input); every problem located, at
    ``file:line:column`` for text that is not JSON, else at the JSON path."""
    source = "<stdin>" if path == "-" else path
    return state_from_json(load_json_file(path, "state file", f"a state is {SCHEMA}"), source)


def load_json_file(path: str, what: str, schema: str) -> object:
    """The JSON value in the file ``path`` (``-``: standard input), read for ``--state`` or
    ``--inputs`` (``what`` names the file in messages, ``schema`` says what it should hold); a
    file that cannot be read, is not UTF-8 or not JSON is an error at ``file:line:column``."""
    import sys

    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as stream:
                data = stream.read()
    except OSError as error:
        raise OperandError(f"cannot read the {what}: {error.strerror or error}", where=Location(source)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise OperandError(f"the {what} is not UTF-8 text", where=Location(source, line, error.start - data.rfind(b"\n", 0, error.start))) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise OperandError(f"invalid JSON ({error.msg}); {schema}", where=Location(source, error.lineno, error.colno)) from None
    except (ValueError, RecursionError) as error:  # a number of too many digits; nesting too deep
        raise OperandError(f"invalid JSON ({error}); {schema}", where=Location(source)) from None


# ---------------------------------------------------------------------------------------------
# What changed
# ---------------------------------------------------------------------------------------------


def _cell_text(value: int, flag: int) -> str:
    if flag == 0:
        return "undefined"
    masked = value & int(_HALF_MASK[flag])
    if flag == LOW_HALF:
        return f"0x????{masked & 0xFFFF:04x} (low half)"
    if flag == HIGH_HALF:
        return f"0x{masked >> 16:04x}???? (high half)"
    return f"0x{masked:08x}"


def _cell_json(value: int, flag: int) -> object:
    if flag == 0:
        return None
    masked = value & int(_HALF_MASK[flag])
    return f"0x{masked:08x}" if flag == WHOLE else [f"0x{masked:08x}", flag]


def changed_cells(before: TensorMemory, after: TensorMemory) -> list[tuple[int, int, int, int, int, int]]:
    """``(lane, column, old value, old halves, new value, new halves)`` of every cell whose defined
    bits or definedness differ (the bits of an undefined half do not count)."""
    old_w, old_d = before.words(), before.defined()
    new_w, new_d = after.words(), after.defined()
    differ = (old_d != new_d) | ((old_w & _HALF_MASK[old_d]) != (new_w & _HALF_MASK[new_d]))
    lanes, columns = np.nonzero(differ)
    return [
        (int(lane), int(column), int(old_w[lane, column]), int(old_d[lane, column]), int(new_w[lane, column]), int(new_d[lane, column]))
        for lane, column in zip(lanes.tolist(), columns.tolist())
    ]


def changed_bytes(before: bytes, after: bytes) -> list[tuple[int, bytes, bytes]]:
    """``(first address, old bytes, new bytes)`` of every run of shared-memory bytes that differ
    (a byte only one of the images has counts as changed)."""
    n = max(len(before), len(after))
    old = np.zeros(n, np.int16) - 1
    new = np.zeros(n, np.int16) - 1
    old[: len(before)] = np.frombuffer(before, np.uint8)
    new[: len(after)] = np.frombuffer(after, np.uint8)
    differ = np.flatnonzero(old != new)
    runs: list[tuple[int, bytes, bytes]] = []
    indices = differ.tolist()
    start = 0
    for k in range(1, len(indices) + 1):
        if k == len(indices) or indices[k] != indices[k - 1] + 1:
            first, last = indices[start], indices[k - 1]
            runs.append((first, before[first : last + 1], after[first : last + 1]))
            start = k
    return runs


def _allocations_text(tm: TensorMemory) -> str:
    return ", ".join(f"columns {a.column}-{a.end - 1}" for a in tm.allocations) or "none"


def _memory_runs(before: State, after: State) -> list[tuple[str, int, bytes, bytes]]:
    """``(space, first address, old bytes, new bytes)`` per run of changed bytes of the state
    spaces the memory instructions write (an indeterminate byte shows as 0), and of the other
    CTAs' shared memory (``"cluster CTA r"``, offsets)."""
    out = []
    for key, attribute in _SEGMENT_KEYS.items():
        a, b = getattr(before, attribute), getattr(after, attribute)
        if a != b:
            # a byte that became indeterminate is reported with the ranges, not as a new 0
            shown = bytearray(b.data)
            for start, end in b.indeterminate:
                lo, hi = max(start, a.base, b.base) - b.base, min(end, a.end, b.end) - b.base
                shown[lo:hi] = a.data[lo + b.base - a.base : hi + b.base - a.base]
            out += [(key, a.base + start, old, new) for start, old, new in changed_bytes(a.data, bytes(shown))]
    for k, (a, b) in enumerate(zip(before.multimem, after.multimem)):
        out += [(f"multimem[{k}]", a.base + start, old, new) for start, old, new in changed_bytes(a.data, b.data)]
    old_cluster, new_cluster = dict(before.cluster), dict(after.cluster)
    for rank in sorted(set(old_cluster) | set(new_cluster)):
        out += [(f"cluster CTA {rank} shared", start, old, new) for start, old, new in changed_bytes(old_cluster.get(rank, b""), new_cluster.get(rank, b""))]
    return out


def _shown_shared(before: State, after: State) -> bytes:
    """``after.shared`` with the bytes that became indeterminate showing their old value (the change
    is reported with the ranges, not as a new 0)."""
    shown = bytearray(after.shared)
    for start, end in after.shared_indeterminate:
        shown[start:end] = before.shared[start:end].ljust(end - start, b"\0")
    return bytes(shown)


def _indeterminate_changes(before: State, after: State) -> list[tuple[str, list[str], list[str]]]:
    """Per state space whose indeterminate ranges changed: its key and the ranges before and after."""
    out = []
    if before.shared_indeterminate != after.shared_indeterminate:
        show = lambda ranges: [f"{x:#x}-{y - 1:#x}" for x, y in ranges]  # noqa: E731
        out.append(("shared", show(before.shared_indeterminate), show(after.shared_indeterminate)))
    for key, attribute in _SEGMENT_KEYS.items():
        a, b = getattr(before, attribute).indeterminate, getattr(after, attribute).indeterminate
        if a != b:
            out.append((key, [f"{x:#x}-{y - 1:#x}" for x, y in a], [f"{x:#x}-{y - 1:#x}" for x, y in b]))
    return out


def diff(before: State, after: State) -> dict:
    """What changed from ``before`` to ``after``, as JSON: only the parts that changed, among
    ``tensor_memory.cells`` (``[lane, column, old, new]``, a value ``null`` where undefined, ``[value,
    halves]`` where one half is defined), ``tensor_memory.allocations`` / ``relinquished`` /
    ``last_columns`` (``{"before": ..., "after": ...}``), ``shared`` (``[first address, "old hex",
    "new hex"]`` per run of bytes), ``cta_group`` and ``peer`` (its own diff)."""
    out: dict[str, Any] = {}
    a, b = before.tensor_memory, after.tensor_memory
    tm: dict[str, Any] = {}
    cells = changed_cells(a, b)
    if cells:
        tm["cells"] = [[lane, column, _cell_json(ov, od), _cell_json(nv, nd)] for lane, column, ov, od, nv, nd in cells]
    for key in ("allocations", "relinquished", "last_columns"):
        old, new = getattr(a, key), getattr(b, key)
        if old != new:
            shown = (lambda v: [[x.column, x.columns] for x in v]) if key == "allocations" else (lambda v: v)
            tm[key] = {"before": shown(old), "after": shown(new)}
    if tm:
        out["tensor_memory"] = tm
    runs = changed_bytes(before.shared, _shown_shared(before, after))
    if runs:
        out["shared"] = [[start, old.hex(), new.hex()] for start, old, new in runs]
    if before.cta_group != after.cta_group:
        out["cta_group"] = {"before": before.cta_group, "after": after.cta_group}
    for key, start, old, new in _memory_runs(before, after):
        out.setdefault(key, []).append([start, old.hex(), new.hex()])
    for key, old_ranges, new_ranges in _indeterminate_changes(before, after):
        out[f"{key}.indeterminate"] = {"before": old_ranges, "after": new_ranges}
    if before.peer != after.peer:
        if before.peer is None or after.peer is None:
            out["peer"] = {
                "before": None if before.peer is None else state_to_json(before.peer),
                "after": None if after.peer is None else state_to_json(after.peer),
            }
        else:
            inner = diff(before.peer, after.peer)
            if inner:
                out["peer"] = inner
    return out


def diff_lines(before: State, after: State, indent: str = "") -> list[str]:
    """:func:`diff` as text, one line per changed cell, run of shared-memory bytes or field;
    ``["no change"]`` where nothing changed."""
    lines: list[str] = []
    a, b = before.tensor_memory, after.tensor_memory
    cells = changed_cells(a, b)
    if cells:
        lines.append(f"{indent}tensor memory: {len(cells)} cell(s) changed")
        # Column by column; a run of lanes whose cells changed alike is one line.
        # (Defined cells that take one new value -- a value stored to all, undefined after a
        # dealloc -- group whatever values they held: "values"; --json / diff() keep each.)
        runs: list[list] = []
        for lane, column, ov, od, nv, nd in sorted(cells, key=lambda c: (c[1], c[0])):
            change = (_cell_text(ov, od), _cell_text(nv, nd))
            last = runs[-1] if runs else None
            alike = last is not None and (last[3] == change or (last[3][1] == change[1] and "undefined" not in (last[3][0], change[0])))
            if last is not None and alike and last[0] == column and last[2] == lane - 1:
                last[2] = lane
                if last[3] != change:
                    last[3] = ("values", change[1])
            else:
                runs.append([column, lane, lane, change])
        for column, first, final, (old, new) in runs:
            lanes = f"lane {first:3}" if first == final else f"lanes {first}-{final}"
            lines.append(f"{indent}  column {column:3}, {lanes}: {old} -> {new}")
    if a.allocations != b.allocations:
        lines.append(f"{indent}allocations: {_allocations_text(a)} -> {_allocations_text(b)}")
    if a.relinquished != b.relinquished:
        lines.append(f"{indent}relinquished: {str(a.relinquished).lower()} -> {str(b.relinquished).lower()}")
    if a.last_columns != b.last_columns:
        lines.append(f"{indent}last_columns: {a.last_columns} -> {b.last_columns}")
    for start, old, new in changed_bytes(before.shared, _shown_shared(before, after)):
        span = max(len(old), len(new))
        where = f"byte {start:#x}" if span == 1 else f"bytes {start:#x}-{start + span - 1:#x}"
        lines.append(f"{indent}shared memory {where}: {old.hex() or '(none)'} -> {new.hex() or '(none)'}")
    for key, start, old, new in _memory_runs(before, after):
        span = max(len(old), len(new))
        where = f"byte {start:#x}" if span == 1 else f"bytes {start:#x}-{start + span - 1:#x}"
        lines.append(f"{indent}{key} memory {where}: {old.hex() or '(none)'} -> {new.hex() or '(none)'}")
    for key, old_ranges, new_ranges in _indeterminate_changes(before, after):
        lines.append(f"{indent}{key} memory indeterminate: {', '.join(old_ranges) or 'none'} -> {', '.join(new_ranges) or 'none'}")
    if before.cta_group != after.cta_group:
        lines.append(f"{indent}cta_group: {before.cta_group} -> {after.cta_group}")
    if before.peer != after.peer:
        if before.peer is None or after.peer is None:
            lines.append(f"{indent}peer: {'none' if before.peer is None else 'a state'} -> {'none' if after.peer is None else 'a state'}")
        else:
            inner = diff_lines(before.peer, after.peer, indent + "  ")
            if inner != [f"{indent}  no change"]:
                lines.append(f"{indent}peer CTA:")
                lines += inner
    return lines or [f"{indent}no change"]


def dumps(state: State) -> str:
    """``state`` as one line of JSON (keys in the schema's order)."""
    return json.dumps(state_to_json(state))


__all__ = ["SCHEMA", "diff", "diff_lines", "dumps", "load_state", "state_from_json", "state_to_json"]
