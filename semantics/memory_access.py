"""§9.7.9.8-24: the instructions that load, store and name memory, as pure functions on a
:class:`~ptxspec.semantics.state.State` -- ``(form, state, *sources) -> ((result, ...), new state)``.

Memory is bytes. A state space is a :class:`~ptxspec.semantics.state.Segment` of the state (the
CTA's ``.shared`` memory, the other CTAs' of its cluster, ``.global``, ``.local``, ``.const``,
``.param``); an address names its first byte, and a value of ``n`` bytes occupies ``n`` of them,
least significant first (little-endian, as every sm_90 recording shows). What the litmus model
calls a location is here the bytes an access covers.

One function per manual section; each has the same shape: find the bytes the address names
(:func:`locate`: the state space of the instruction, or generic addressing through the windows of
§6.4.1.1), check the access (§6.4.1: "The address must be naturally aligned to a multiple of the
access size"; the bytes must be in the state), then read or write them.
"""

from __future__ import annotations

import attrs

from ptxspec.profiles import Profile
from ptxspec.semantics.instructions import THREAD_ADDRESSES, THREAD_MEMORY, semantic
from ptxspec.semantics.results import AnyBits, Lanes, Result, only_member
from ptxspec.semantics.state import AddressMap, Segment, State
from ptxspec.spec.catalogue import Form
from ptxspec.spec.errors import OperandError
from ptxspec.spec.types import register_bits

ADDRESSES = "6.4.1"
GENERIC = "6.4.1.1"
LD = "9.7.9.8"
LD_NC = "9.7.9.9"
LDU = "9.7.9.10"
ST = "9.7.9.11"
PREFETCH = "9.7.9.15"
APPLYPRIORITY = "9.7.9.16"
DISCARD = "9.7.9.17"
CREATEPOLICY = "9.7.9.18"
ISSPACEP = "9.7.9.19"
CVTA = "9.7.9.20"
MAPA = "9.7.9.23"
GETCTARANK = "9.7.9.24"

# ---------------------------------------------------------------------------------------------
# Where an address lies: the state spaces and the generic address space (§5.1, §6.4.1.1)
# ---------------------------------------------------------------------------------------------

#: The state space a ``.ss`` token names (``.shared`` is ``.shared::cta``, §5.1.7; ``.param`` is
#: ``.param::entry``, §9.7.9.19-20, and a kernel's parameters are what a State holds).
SPACE_OF = {
    "global": "global",
    "shared": "shared::cta",
    "shared::cta": "shared::cta",
    "shared::cluster": "shared::cluster",
    "local": "local",
    "const": "const",
    "param": "param",
    "param::entry": "param",
    "param::func": "param",
}

#: The segment of the state that holds each space, by attribute.
_SEGMENTS = {"global": "global_memory", "local": "local_memory", "const": "const_memory", "param": "param_memory"}


@attrs.frozen
class Place:
    """Where an access lands: the state space (``global``, ``local``, ``const``, ``param``, or
    ``shared``), the CTA whose shared memory it is (its rank in the cluster), and the address
    within that space's segment (for shared memory: the byte offset in that CTA's shared memory)."""

    space: str
    address: int
    rank: int | None = None


def shared_cluster_address(addresses: AddressMap, rank: int, offset: int) -> int:
    """§5.1.7: the ``.shared::cluster`` address of byte ``offset`` of the shared memory of the CTA
    of rank ``rank`` (its ``.shared::cta`` address too, in that CTA)."""
    return addresses.cluster_base + rank * addresses.cluster_stride + offset


def _shared_place(addresses: AddressMap, address: int, cluster: bool) -> Place | None:
    """The CTA and offset a ``.shared::cluster`` address (``cluster``) or a ``.shared::cta`` one
    names, or None outside its window."""
    relative = address - addresses.cluster_base
    rank, offset = divmod(relative, addresses.cluster_stride)
    if relative < 0 or rank >= addresses.cluster_ctas or (not cluster and rank != addresses.cta_rank):
        return None
    return Place("shared", offset, rank)


def generic_space(addresses: AddressMap, address: int) -> str:
    """§6.4.1.1: the state space a generic address falls in -- ``shared::cluster`` (the shared
    window), ``local``, ``const``, ``param`` (its window lies within the global one), or
    ``global``."""
    for space in ("shared", "local", "const", "param"):
        base, size = addresses.window(space)
        if base <= address < base + size:
            return "shared::cluster" if space == "shared" else space
    return "global"


def locate(form: Form, state: State, address: int, size: int, *, slot: str | None = "ss", alignment: int | None = None) -> Place:
    """The bytes ``[address, address + size)`` of ``form``'s state space name, after the checks of
    §6.4.1 (alignment) and of the state (the bytes must be in it). Generic addressing where the
    form names no space (§6.4.1.1: "within each window, a generic address maps to an address in
    the underlying state space by subtracting the window base").

    ``slot``: the slot that names the space (``ss``; ``dst_ss`` / ``src_ss`` for a copy), or
    None for generic addressing; ``alignment``: the alignment the instruction asks, where it is
    not the access size (a bulk copy's 16 bytes), checked by the caller's section."""
    if alignment is not None and address % alignment:
        raise OperandError(f"address {address:#x} is not aligned to {alignment} bytes", where=form.text, section=form.family.section)
    if alignment is None and address % size:
        raise OperandError(
            f"address {address:#x} is not aligned to the access size of {size} bytes "
            '("The address must be naturally aligned to a multiple of the access size. If an address is not properly aligned, the resulting behavior is undefined")',
            where=form.text,
            section=ADDRESSES,
        )
    token = form.get(slot) if slot is not None else None
    addresses = state.addresses
    if token is None:
        space = generic_space(addresses, address)
        if space != "global":
            address -= addresses.window("shared" if space == "shared::cluster" else space)[0]
    else:
        space = SPACE_OF[token]
    if space.startswith("shared"):
        place = _shared_place(addresses, address, space == "shared::cluster")
        if place is None:
            raise OperandError(
                f"address {address:#x} is not in the {space} window of this CTA (rank {addresses.cta_rank} of {addresses.cluster_ctas})",
                where=form.text,
                section="5.1.7",
            )
    else:
        place = Place(space, address)
    if not _holds(state, place, size):
        raise OperandError(f"the {size} bytes at {_where(place)} are not in the state ({_extent(state, place)})", where=form.text, section=form.family.section)
    return place


def _shared_bytes(state: State, rank: int | None) -> bytes | None:
    if rank == state.addresses.cta_rank:
        return state.shared
    return dict(state.cluster).get(rank)  # type: ignore[arg-type]


def _segment(state: State, place: Place) -> Segment:
    if place.space == "shared":
        if place.rank == state.addresses.cta_rank:
            return Segment(0, state.shared, state.shared_indeterminate)
        data = _shared_bytes(state, place.rank)
        return Segment(0, data if data is not None else b"")
    return getattr(state, _SEGMENTS[place.space])


def _holds(state: State, place: Place, size: int) -> bool:
    return _segment(state, place).holds(place.address, size)


def _where(place: Place) -> str:
    if place.space == "shared":
        return f"offset {place.address:#x} of the shared memory of the CTA of rank {place.rank}"
    return f"{place.space} address {place.address:#x}"


def _extent(state: State, place: Place) -> str:
    segment = _segment(state, place)
    if not segment.data:
        return f"it holds no {place.space} memory" if place.space != "shared" else f"it holds no shared memory of the CTA of rank {place.rank}"
    return f"its {place.space} memory is {segment.base:#x}-{segment.end - 1:#x}"


def read(state: State, place: Place, size: int) -> tuple[bytes, list[int]]:
    """The ``size`` bytes at ``place``, and which of them are indeterminate."""
    segment = _segment(state, place)
    return segment.read(place.address, size), segment.unknown(place.address, size)


def write(state: State, place: Place, data: bytes, *, indeterminate: bool = False) -> State:
    """The state with ``data`` at ``place`` (or those bytes indeterminate)."""
    if place.space == "shared":
        if place.rank == state.addresses.cta_rank:
            segment = Segment(0, state.shared, state.shared_indeterminate).written(place.address, data, indeterminate=indeterminate)
            return attrs.evolve(state, shared=segment.data, shared_indeterminate=segment.indeterminate)
        if indeterminate:
            raise OperandError("an indeterminate value in another CTA's shared memory is not held by a State", section="5.1.7")
        image = Segment(0, _shared_bytes(state, place.rank) or b"").written(place.address, data).data
        return attrs.evolve(state, cluster=tuple((r, image if r == place.rank else b) for r, b in state.cluster))
    segment = getattr(state, _SEGMENTS[place.space]).written(place.address, data, indeterminate=indeterminate)
    return attrs.evolve(state, **{_SEGMENTS[place.space]: segment})


# ---------------------------------------------------------------------------------------------
# Values in memory and in registers
# ---------------------------------------------------------------------------------------------


#: The bytes of each ``.type`` of ld/st (§9.7.9.8: ".type = { .b8, .b16, .b32, .b64, .b128, .u8,
#: .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f32, .f64 }").
def type_bytes(type_name: str) -> int:
    return register_bits(type_name) // 8 if type_name not in ("b8", "u8", "s8") else 1


def vector_count(form: Form) -> int:
    """The elements of a ``.v2``/``.v4``/``.v8`` access (1 for a scalar one)."""
    vec = form.get("vec")
    return int(vec[1:]) if vec else 1


def to_register(form: Form, element: bytes, unknown: list[int], register_type: str) -> Result:
    """The register value of one loaded element. §9.7.9.8: "A destination register wider than the
    specified type may be used. The value loaded is sign-extended to the destination register
    width for signed integers, and is zero-extended to the destination register width for
    unsigned and bit-size types." An element with indeterminate bytes is those bytes, any value (an extension of
    an indeterminate sign is any value too)."""
    width = register_bits(register_type)
    bits = len(element) * 8
    value = int.from_bytes(element, "little")
    signed = form["type"].startswith("s")
    if unknown:
        if (signed and width > bits and (len(element) - 1) in unknown) or (len(unknown) == len(element) and width == bits):
            return AnyBits(width)
        lanes: list[Result] = [0] * ((width - bits) // 8) if not (signed and value >> (bits - 1)) else [0xFF] * ((width - bits) // 8)
        lanes += [AnyBits(8) if i in unknown else element[i] for i in reversed(range(len(element)))]
        return Lanes(tuple(lanes), 8)
    if signed and width > bits and value >> (bits - 1):
        value -= 1 << bits
    return value & ((1 << width) - 1)


def write_element(state: State, place: Place, value: Result, size: int) -> State:
    """The state with one element's ``size`` bytes at ``place``: the register's low bytes, or --
    where the manual leaves the value open (a set of values) -- those bytes indeterminate."""
    bits = only_member(value)
    if bits is None:
        return write(state, place, bytes(size), indeterminate=True)
    return write(state, place, from_register(bits, size))


def from_register(value: int, size: int) -> bytes:
    """The ``size`` bytes a store writes of a register: its low bytes ("the register is truncated
    to the size of .type" where it is wider)."""
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


# ---------------------------------------------------------------------------------------------
# §9.7.9.8-11 ld, ld.global.nc, ldu, st
# ---------------------------------------------------------------------------------------------


def load(form: Form, state: State, a: int) -> tuple[tuple[Result, ...], State]:
    """The registers a load of ``form`` at ``a`` writes (:func:`ld`), and the unchanged state."""
    count = vector_count(form)
    size = type_bytes(form["type"])
    place = locate(form, state, a, size * count)
    data, unknown = read(state, place, size * count)
    results = tuple(
        to_register(form, data[i * size : (i + 1) * size], [u - i * size for u in unknown if i * size <= u < (i + 1) * size], d.type)
        for i, d in enumerate(form.destinations)
    )
    return results, state


def store(form: Form, state: State, a: int, values: tuple[int, ...]) -> State:
    """The state after a store of ``form`` at ``a`` of ``values`` (:func:`st`)."""
    count = vector_count(form)
    size = type_bytes(form["type"])
    place = locate(form, state, a, size * count)
    return write(state, place, b"".join(from_register(v, size) for v in values[:count]))


@semantic("ld", "ld.eviction_priority", "ld.volatile", "ld.relaxed", "ld.acquire", "ld.mmio", operands=THREAD_MEMORY)
def ld(form: Form, state: State, a: int, *cache_policy: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.8 ld: "Load register variable d from the location specified by the source address
    operand a in specified state space" -- ``d = a;`` for a scalar, and for a vector ``d.x = a[0];
    d.y = a[1]; ...``, consecutive elements of ``.type`` from the address on.

    The memory-consistency qualifiers (``.weak``, ``.volatile``, ``.relaxed``, ``.acquire``,
    ``.mmio``), the cache operators (§9.7.9.1), eviction priorities (§9.7.9.2), ``.L2::cache_hint``
    with its ``cache-policy`` and the prefetch sizes order or place the access but do not change
    the value it reads: cache operators "are treated as performance hints only" (§9.7.9.1), as are
    eviction priorities (§9.7.9.2), ``.level::prefetch_size`` and ``cache-policy`` ("treated as a
    performance hint only, and does not change the memory consistency behavior of the program").
    """
    return load(form, state, a)


@semantic("ld.global.nc", "ld.global.nc.eviction_priority", operands=THREAD_MEMORY)
def ld_global_nc(form: Form, state: State, a: int, *cache_policy: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.9 ld.global.nc: "Load register variable d from the location specified by the source
    address operand a in the global state space, and optionally cache in non-coherent read-only
    cache" -- the value of :func:`ld` from ``.global`` (the cache is a path, not a value)."""
    return load(form, state, a)


@semantic("ldu", operands=THREAD_MEMORY)
def ldu(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.10 ldu: "Load read-only data from an address that is common across threads in the
    warp" -- for one thread, the value of :func:`ld` at ``a``."""
    return load(form, state, a)


@semantic("st", "st.eviction_priority", "st.volatile", "st.relaxed", "st.release", "st.mmio", operands=THREAD_MEMORY)
def st(form: Form, state: State, a: int, *values: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.11 st: "Store the value of operand b in the location specified by the destination
    address operand a in specified state space" -- ``a = b;`` for a scalar, and for a vector
    ``a[0] = b.x; a[1] = b.y; ...``, each element the low ``.type`` bytes of its register.

    As for :func:`ld`, the consistency qualifiers, cache operators, eviction priorities and
    ``.L2::cache_hint`` do not change the bytes written."""
    return (), store(form, state, a, values)


# ---------------------------------------------------------------------------------------------
# §9.7.9.15-18 prefetch, prefetchu, applypriority, discard, createpolicy
# ---------------------------------------------------------------------------------------------


@semantic("prefetch", "prefetch.eviction_priority", "prefetch.tensormap", "prefetchu", operands=THREAD_ADDRESSES)
def prefetch(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.15 prefetch, prefetchu: "bring the cache line containing the specified address ...
    into the specified cache level" (and "A prefetch to a shared memory location performs no
    operation"). A cache holds no value of its own here: the state is unchanged and nothing is
    written -- not even a check of the address, since a prefetch reads nothing the program sees."""
    return (), state


#: §9.7.9.16-17: "The only supported value for the size operand is 128", and "a must be aligned
#: to 128 bytes".
LINE = 128


def _global_line(form: Form, state: State, a: int, size: int) -> Place:
    """The 128 bytes at ``a`` that applypriority and discard name: "If no state space is given,
    generic addressing is used. If the specified address does not fall within the address window
    of the .global state space then the behavior is undefined" -- refused here, as is a size or
    alignment the manual does not allow."""
    if size != LINE:
        raise OperandError(f"size is {size}; the only supported value is {LINE}", where=form.text, section=form.family.section)
    if form.get("ss") is None and generic_space(state.addresses, a) != "global":
        raise OperandError(
            f"generic address {a:#x} is not in the .global window (it is in {generic_space(state.addresses, a)}): the behavior is undefined",
            where=form.text,
            section=form.family.section,
        )
    return locate(form, state, a, LINE)


@semantic("applypriority", operands=THREAD_MEMORY)
def applypriority(form: Form, state: State, a: int, size: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.16 applypriority: "apply the cache eviction priority ... to the address range
    [a..a+size) in the specified cache level" -- an eviction priority, which changes no value; the
    address must still be a 128-byte line of global memory (:func:`_global_line`)."""
    _global_line(form, state, a, size)
    return (), state


@semantic("discard", operands=THREAD_MEMORY)
def discard(form: Form, state: State, a: int, size: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.17 discard: "invalidate the data in the cache at the specified address range [a ..
    a + (size - 1)] ... without writing back the data in the cache to the memory. Therefore after
    the discard operation, the data at the address range [a .. a+ (size - 1)] has undetermined
    value." The 128 bytes become indeterminate: a later load of them reads any value
    (:class:`~ptxspec.semantics.results.AnyBits`) until a store gives them one."""
    place = _global_line(form, state, a, size)
    return (), write(state, place, bytes(LINE), indeterminate=True)


#: §9.7.9.18: ".level::primary_priority = { .L2::evict_last, .L2::evict_normal, .L2::evict_first,
#: .L2::evict_unchanged }; .level::secondary_priority = { .L2::evict_first, .L2::evict_unchanged }".
PRIMARY_PRIORITIES = ("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged")


def _priorities(form: Form) -> tuple[str, str]:
    """The primary and secondary priorities of a createpolicy form: "If .L2::secondary_priority is
    not specified, then it defaults to .L2::evict_unchanged"."""
    chosen = [token for _, token in form.choices if token.startswith("L2::evict")]
    return chosen[0], chosen[1] if len(chosen) > 1 else "L2::evict_unchanged"


def fraction_of(form: Form, sources: tuple[int, ...]) -> int:
    """The f32 bits of createpolicy.fractional's fraction: "The valid range of values for the
    operand fraction is (0.0,.., 1.0]. If the operand fraction is not specified, it defaults to
    1.0." A value outside that range is refused."""
    from fractions import Fraction

    from ptxspec.semantics.numerics import Exact, decode, to_fraction
    from ptxspec.spec.types import FORMATS

    bits = sources[0] if sources else 0x3F800000
    value = decode(FORMATS["f32"], bits)
    if not (isinstance(value, Exact) and 0 < to_fraction(value) <= Fraction(1)):
        raise OperandError(f"fraction {bits:#010x} is not in (0.0, 1.0]", where=form.text, section=CREATEPOLICY)
    return bits


@semantic("createpolicy.fractional", "createpolicy.range", "createpolicy.cvt", operands=THREAD_ADDRESSES)
def createpolicy(form: Form, state: State, *sources: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.18 createpolicy: "create a cache eviction policy for the specified cache level in an
    opaque 64-bit register specified by the destination operand cache-policy". Its bits are the
    implementation's: any 64-bit value, unless the profile pins how the chip encodes a fractional
    policy (:attr:`~ptxspec.profiles.Profile.createpolicy_fractional`). A range policy's bits
    depend on where the range lies and are left open everywhere; ``createpolicy.cvt`` converts an
    opaque access property of the CUDA API."""
    key = form.family.key
    if key == "createpolicy.fractional":
        fraction = fraction_of(form, sources)
        if profile.createpolicy_fractional is not None:
            return (profile.createpolicy_fractional(*_priorities(form), fraction),), state
    elif key == "createpolicy.range":
        a, primary, total = sources
        if primary > total:
            raise OperandError(f"primary-size {primary} exceeds total-size {total}", where=form.text, section=CREATEPOLICY)
        if form.get("ss") is None and generic_space(state.addresses, a) != "global":
            raise OperandError(f"generic address {a:#x} is not in the .global window: the behavior is undefined", where=form.text, section=CREATEPOLICY)
    return (AnyBits(64),), state


# ---------------------------------------------------------------------------------------------
# §9.7.9.19-20, 23-24 isspacep, cvta, mapa, getctarank
# ---------------------------------------------------------------------------------------------


def _in_window(addresses: AddressMap, space: str, address: int) -> bool:
    """Whether generic ``address`` falls in the window of ``space`` (§6.4.1.1, §9.7.9.19)."""
    where = generic_space(addresses, address)
    if space == "global":
        # "isspacep.global returns 1 for Kernel Function Parameters as .param window is contained
        # within the .global window"
        return where in ("global", "param")
    if space == "shared::cluster":
        return where == "shared::cluster"
    if space == "shared::cta":
        return where == "shared::cluster" and _shared_place(addresses, address - addresses.shared[0], False) is not None
    return where == space


@semantic("isspacep", operands=THREAD_ADDRESSES)
def isspacep(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.19 isspacep: "Write predicate register p with 1 if generic address a falls within the
    specified state space window and with 0 otherwise." ``.shared`` is ``.shared::cta`` and
    ``.param`` is ``.param::entry``; "isspacep.shared::cluster will return 1 for every shared
    memory address that is accessible to the threads in the cluster, whereas isspacep.shared::cta
    will return 1 only if the address is of a variable declared in the executing CTA"."""
    return (int(_in_window(state.addresses, SPACE_OF[form["ss"]], a)),), state


def _size_mask(form: Form) -> int:
    return (1 << register_bits(form["size"])) - 1


@semantic("cvta", operands=THREAD_ADDRESSES)
def cvta(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.20 cvta.space: "Convert a const, Kernel Function Parameters (.param), global, local,
    or shared address to a generic address" -- the window's base plus the address (§6.4.1.1); a
    ``.shared::cta`` address is a ``.shared::cluster`` one of this CTA (§5.1.7). "For cvta with
    .shared state space, the address must belong to the space specified by ::cta or ::cluster
    sub-qualifier, otherwise the behavior is undefined": refused."""
    space = SPACE_OF[form["ss"]]
    addresses = state.addresses
    if space.startswith("shared") and _shared_place(addresses, a, space == "shared::cluster") is None:
        raise OperandError(f"{a:#x} is not a {space} address: the behavior is undefined", where=form.text, section=CVTA)
    base = addresses.window("shared" if space.startswith("shared") else space)[0]
    return ((base + a) & _size_mask(form),), state


@semantic("cvta.to", operands=THREAD_ADDRESSES)
def cvta_to(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.20 cvta.to.space: a generic address to an address of the space -- "When converting a
    generic address into a const, Kernel Function Parameters (.param), global, local, or shared
    address, the resulting address is undefined in cases where the generic address does not fall
    within the address window of the specified state space" (any value then)."""
    space = SPACE_OF[form["ss"]]
    addresses = state.addresses
    if not _in_window(addresses, space, a):
        return (AnyBits(register_bits(form["size"])),), state
    base = addresses.window("shared" if space.startswith("shared") else space)[0]
    return ((a - base) & _size_mask(form),), state


def _shared_of(form: Form, state: State, a: int) -> tuple[Place, int]:
    """The CTA and offset a mapa/getctarank source names, and the base to give its result: a
    ``.shared::cluster`` address, or (no space) a generic address in the shared window."""
    addresses = state.addresses
    base = 0
    if form.get("ss") is None:
        if generic_space(addresses, a) != "shared::cluster":
            raise OperandError(f"generic address {a:#x} is not in the shared window", where=form.text, section=form.family.section)
        base = addresses.shared[0]
    place = _shared_place(addresses, a - base, True)
    if place is None:
        raise OperandError(f"{a:#x} is not a shared memory address of the cluster", where=form.text, section=form.family.section)
    return place, base


@semantic("mapa", operands=THREAD_ADDRESSES)
def mapa(form: Form, state: State, a: int, b: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.23 mapa: "Get address in the CTA specified by operand b which corresponds to the
    address specified by operand a" -- the same offset in the shared memory of CTA ``b``, as a
    ``.shared::cluster`` address (or, without a space, a generic one)."""
    place, base = _shared_of(form, state, a)
    if b >= state.addresses.cluster_ctas:
        raise OperandError(f"CTA rank {b} is not in the cluster of {state.addresses.cluster_ctas} CTAs", where=form.text, section=MAPA)
    return ((base + shared_cluster_address(state.addresses, b, place.address)) & ((1 << register_bits(form["type"])) - 1),), state


@semantic("getctarank", operands=THREAD_ADDRESSES)
def getctarank(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.24 getctarank: "Write the destination register d with the rank of the CTA which
    contains the address specified in operand a"."""
    place, _ = _shared_of(form, state, a)
    assert place.rank is not None, "a shared place names its CTA"
    return (place.rank,), state


# ---------------------------------------------------------------------------------------------
# §9.7.9.13 st.bulk
# ---------------------------------------------------------------------------------------------

ST_BULK = "9.7.9.13"


@semantic("st.bulk", operands=THREAD_MEMORY)
def st_bulk(form: Form, state: State, a: int, size: int, initval: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.13 st.bulk: "initialize a region of shared memory starting from the location
    specified by destination address operand a", ``size`` bytes of it, to ``initval`` -- "The only
    numeric value allowed for operand initval is 0"; "size must be a multiple of 8. If the value is
    not a multiple of 8, then the behavior is undefined" (refused). "If no state space is
    specified then Generic Addressing is used. If the address specified by a does not fall within
    the address window of .shared state space, then the behavior is undefined" (refused)."""
    if initval != 0:
        raise OperandError(f"initval is {initval}; the only value allowed is 0", where=form.text, section=ST_BULK)
    if size % 8:
        raise OperandError(f"size {size} is not a multiple of 8", where=form.text, section=ST_BULK)
    if size == 0:
        return (), state
    place = locate(form, state, a, 1) if form.get("ss") else _generic_shared(form, state, a)
    if not _holds(state, place, size):
        raise OperandError(f"the {size} bytes at {_where(place)} are not in the state ({_extent(state, place)})", where=form.text, section=ST_BULK)
    return (), write(state, place, bytes(size))


def _generic_shared(form: Form, state: State, a: int) -> Place:
    place = locate(form, state, a, 1)
    if place.space != "shared" or place.rank != state.addresses.cta_rank:
        raise OperandError(f"generic address {a:#x} is not in the executing CTA's shared memory", where=form.text, section=ST_BULK)
    return place


# ---------------------------------------------------------------------------------------------
# §9.7.9.12 st.async
# ---------------------------------------------------------------------------------------------


@semantic("st.async", "st.async.release", operands=THREAD_MEMORY)
def st_async(form: Form, state: State, a: int, *operands: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.12 st.async: "a non-blocking instruction which initiates an asynchronous store
    operation that stores the value specified by source operand b to the destination memory
    location specified by operand a" -- the bytes of :func:`st`. With
    ``.mbarrier::complete_tx::bytes``, "upon the completion of the asynchronous operation, a
    complete-tx operation, with completeCount argument equal to amount of data stored in bytes,
    will be performed on the mbarrier object specified by the operand mbar"
    (:func:`~ptxspec.semantics.mbarrier.complete_tx_on`). The state is the one after the store
    completes: when it becomes visible is the memory model's matter (§8)."""
    from ptxspec.semantics import mbarrier

    count = vector_count(form)
    if form.family.key == "st.async":
        # "The shared memory addresses of destination operand a and the mbarrier object mbar belong
        # to the same CTA within the same cluster as the executing thread. The number of CTAs
        # within the cluster is strictly greater than one ... Otherwise, the behavior is undefined."
        same_cta(form, state, a, operands[count], other_cta=False)
        if state.addresses.cluster_ctas < 2:
            raise OperandError(
                "the cluster has one CTA (%cluster_nctarank > 1 must be true): the behavior is undefined", where=form.text, section=form.family.section
            )
    new_state = store(form, state, a, operands[:count])
    if form.family.key == "st.async":
        new_state = mbarrier.complete_tx_on(form, new_state, operands[count], type_bytes(form["type"]) * count)
    return (), new_state


def same_cta(form: Form, state: State, a: int, mbar: int, *, other_cta: bool) -> None:
    """Refuse an asynchronous store or reduction whose destination ``a`` and mbarrier ``mbar`` are
    not in the shared memory of one CTA of the cluster (and, with ``other_cta``, a CTA other than
    the executing one): the manual makes that undefined (§9.7.9.12, §9.7.13.7)."""
    target = locate(form, state, a, 1)
    barrier = locate(form, state, mbar, 8)
    if target.space != "shared" or barrier.space != "shared" or target.rank != barrier.rank:
        raise OperandError(
            f"a ({_where(target)}) and mbar ({_where(barrier)}) are not in the shared memory of one CTA: the behavior is undefined",
            where=form.text,
            section=form.family.section,
        )
    if other_cta and target.rank == state.addresses.cta_rank:
        raise OperandError(
            f"a and mbar are in the executing CTA's shared memory (rank {target.rank}); they must be in another CTA of the cluster: the behavior is undefined",
            where=form.text,
            section=form.family.section,
        )


# ---------------------------------------------------------------------------------------------
# §9.7.9.14 multimem.ld_reduce, multimem.st, multimem.red
# ---------------------------------------------------------------------------------------------

MULTIMEM = "9.7.9.14"
#: At most this many memories behind one multimem address: the allowed results of a
#: floating-point ld_reduce are taken over every order of reduction, which grows fast.
MULTIMEM_MAX = 6


def _multimem_places(form: Form, state: State, a: int, size: int) -> list[int]:
    """Check a multimem access: "The address operand a must be a multimem address. Otherwise, the
    behavior is undefined" -- it must lie in the memories the state holds behind multimem
    addresses, each over the same range -- and return the offset of the access in them."""
    if a % size:
        raise OperandError(f"address {a:#x} is not aligned to the access size of {size} bytes", where=form.text, section=ADDRESSES)
    if not state.multimem:
        raise OperandError("the state holds no memory behind a multimem address (its multimem field)", where=form.text, section=MULTIMEM)
    first = state.multimem[0]
    if any((m.base, len(m.data)) != (first.base, len(first.data)) for m in state.multimem):
        raise OperandError("the memories behind the multimem address do not cover one range", where=form.text, section=MULTIMEM)
    if not first.holds(a, size):
        raise OperandError(
            f"{a:#x} is not a multimem address of the state ({first.base:#x}-{first.end - 1:#x}): the behavior is undefined", where=form.text, section=MULTIMEM
        )
    if len(state.multimem) > MULTIMEM_MAX:
        raise OperandError(
            f"{len(state.multimem)} memories behind one multimem address; this specification evaluates at most {MULTIMEM_MAX}",
            where=form.text,
            section=MULTIMEM,
        )
    return [a - m.base for m in state.multimem]


#: The element type and lanes of each multimem ``.type`` (a packed type reduces lane by lane).
_MULTIMEM_LANES = {"f16x2": ("f16", 2), "bf16x2": ("bf16", 2), **{f"{f}x{n}": (f, n) for f in ("e4m3", "e5m2") for n in (2, 4)}}
#: The 8-bit floating-point types of multimem (sm_100a and later): no add, min or max instruction
#: of §9.7 computes in them, so their reductions go through the one rounding routine directly.
_FP8 = ("e4m3", "e5m2")


def _element_bytes(kind: str) -> int:
    base, lanes = _MULTIMEM_LANES.get(kind, (kind, 1))
    return {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1}.get(base, register_bits(base) // 8 if base[1:].isdigit() else 0) * lanes


def _converted(value: int, source: str, target: str) -> int | None:
    """``value`` (bits of ``source``) in ``target`` by the one rounding routine (round to nearest
    even); None for a NaN, whose bits the manual leaves open."""
    from ptxspec.semantics.numerics import NaN, decode, round_value

    decoded = decode(source, value)
    return None if isinstance(decoded, NaN) else round_value(decoded, target)


def _added(precision: str, x: int, y: int) -> int | None:
    """``x + y`` in ``precision`` rounded to nearest even: the ``add.rn`` of §9.7.3/§9.7.4 where the
    type has one, else (the 8-bit types) the exact sum through the one rounding routine -- an
    overflow of .e4m3, which has no infinity, becomes its NaN as in every unsaturated rounding of
    the numerics core. None for a NaN result (its bits are open)."""
    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.numerics import Exact, Infinity, NaN, decode, exact_sum, round_value

    if precision not in _FP8:
        (r,) = evaluate(f"add.rn.{precision}", [x, y])
        return r if isinstance(r, int) else None
    a, b = decode(precision, x), decode(precision, y)
    if isinstance(a, NaN) or isinstance(b, NaN) or (isinstance(a, Infinity) and isinstance(b, Infinity) and a.sign != b.sign):
        return None
    total = a if isinstance(a, Infinity) else b if isinstance(b, Infinity) else exact_sum(a, b)
    assert isinstance(total, (Exact, Infinity))
    bits = round_value(total, precision)
    return None if isinstance(decode(precision, bits), NaN) else bits


def _float_reductions(op: str, kind: str, acc: str | None, values: list[int]) -> Result:
    """The allowed results of reducing ``values`` (bits of ``kind``, one lane) with ``op``: "the
    reduction operation specified by .op on the multiple data loaded", at "the default precision of
    the intermediate accumulation ... same as the specified type", or ``.acc::f32``, rounding to
    nearest even. The manual gives no order, so every reduction tree is allowed (each value met
    once): one value, or a :class:`~ptxspec.semantics.results.OneOf`. min and max are exact. Where
    a NaN arises, which NaN the reduction gives is not the manual's to say, nor a chip profile's
    (the reduction is not the SM's ``add``): any NaN."""
    from itertools import combinations

    from ptxspec.semantics.instructions import evaluate
    from ptxspec.semantics.results import AnyNaN, OneOf
    from ptxspec.spec.types import FORMATS

    def one(text: str, operands: list[int]) -> int | None:
        (r,) = evaluate(text, operands)
        return r if isinstance(r, int) else None  # a NaN the manual leaves open

    if op in ("min", "max"):
        # an 8-bit value is exactly an .f16 one: min/max.f16 picks one of them, exactly converted back
        compare = "f16" if kind in _FP8 else kind
        out: int | None = _converted(values[0], kind, compare) if kind in _FP8 else values[0]
        for v in values[1:]:
            w = _converted(v, kind, compare) if kind in _FP8 else v
            out = one(f"{op}.{compare}", [out, w]) if out is not None and w is not None else None
        if out is not None and kind in _FP8:
            out = _converted(out, compare, kind)
        return out if out is not None else AnyNaN(FORMATS[kind])
    # "the default precision of the intermediate accumulation is same as the specified type";
    # .acc::f32 (the 16-bit types) and .acc::f16 (the 8-bit ones) change it
    precision = {"acc::f32": "f32", "acc::f16": "f16"}.get(acc or "", kind)
    reach: dict[frozenset[int], set[int | None]] = {frozenset([i]): {v if precision == kind else _converted(v, kind, precision)} for i, v in enumerate(values)}
    indices = list(range(len(values)))
    for size in range(2, len(values) + 1):
        for subset in combinations(indices, size):
            whole = frozenset(subset)
            results: set[int | None] = set()
            for left_size in range(1, size):
                for left in combinations(subset, left_size):
                    right = whole - frozenset(left)
                    if min(left) > min(right):
                        continue  # each split once
                    results |= {_added(precision, x, y) if x is not None and y is not None else None for x in reach[frozenset(left)] for y in reach[right]}
            reach[whole] = results
    final = reach[frozenset(indices)]
    if precision != kind:
        final = {_converted(v, precision, kind) if v is not None else None for v in final}
    from ptxspec.semantics.numerics import NaN, decode

    if None in final or any(isinstance(decode(FORMATS[kind], v), NaN) for v in final if v is not None):
        return AnyNaN(FORMATS[kind])
    members = {v for v in final if v is not None}
    return members.pop() if len(members) == 1 else OneOf(frozenset(members), FORMATS[kind].width)


def _reduce_element(form: Form, kind: str, values: list[int]) -> Result:
    """One element of multimem.ld_reduce over the memories' ``values``."""
    from ptxspec.semantics.atomics import atomic_op
    from ptxspec.semantics.results import pack_lanes

    op = form["op"]
    if kind[0] in "bus" and kind[1:].isdigit():
        out = values[0]
        for v in values[1:]:
            out = atomic_op(op, out, (v,), (kind,))
        return out
    base, lanes = _MULTIMEM_LANES.get(kind, (kind, 1))
    width = _element_bytes(kind) * 8 // lanes
    per_lane: list[Result] = []
    for lane in reversed(range(lanes)):  # pack_lanes puts lane 0 in the most significant bits
        lane_values = [(v >> (lane * width)) & ((1 << width) - 1) for v in values]
        per_lane.append(_float_reductions(op, base, form.get("acc_prec"), lane_values))
    return pack_lanes(per_lane, width)


@semantic("multimem.ld_reduce", "multimem.ld_reduce.float", operands=THREAD_MEMORY)
def multimem_ld_reduce(form: Form, state: State, a: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.14 multimem.ld_reduce: "Performs load operation on the multimem address a, which
    involves loading of data from all of the multiple memory locations pointed to by the multimem
    address a, [and] performs the reduction operation specified by .op on the multiple data loaded
    from the multimem address a. The result of the reduction operation in returned in register d."
    Each element (``.vec``) and each lane of a packed type reduces on its own; integer operations
    are atom's (:func:`~ptxspec.semantics.atomics.atomic_op`), floating-point ones the numerics
    core's, at the accumulation precision, over every order the manual leaves open."""
    kind = form["type"]
    size = _element_bytes(kind)
    count = vector_count(form)
    offsets = _multimem_places(form, state, a, size * count)
    results = []
    for i in range(count):
        values = [int.from_bytes(m.data[o + i * size : o + (i + 1) * size], "little") for m, o in zip(state.multimem, offsets)]
        results.append(_reduce_element(form, kind, values))
    return tuple(results), state


def _each_memory(state: State, a: int, offsets: list[int], new_bytes: list[bytes]) -> State:
    memories = tuple(m.written(m.base + o, data) for m, o, data in zip(state.multimem, offsets, new_bytes))
    return attrs.evolve(state, multimem=memories)


@semantic("multimem.st", "multimem.st.float", operands=THREAD_MEMORY)
def multimem_st(form: Form, state: State, a: int, *values: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.14 multimem.st: "performs a store operation of the input operand b to all the memory
    locations pointed to by the multimem address a"."""
    size = _element_bytes(form["type"])
    count = vector_count(form)
    offsets = _multimem_places(form, state, a, size * count)
    data = b"".join(from_register(v, size) for v in values[:count])
    return (), _each_memory(state, a, offsets, [data] * len(offsets))


@semantic("multimem.red", "multimem.red.float", operands=THREAD_MEMORY)
def multimem_red(form: Form, state: State, a: int, *values: int, profile: Profile) -> tuple[tuple[Result, ...], State]:
    """§9.7.9.14 multimem.red: "performs a reduction operation on all the memory locations pointed
    to by the multimem address a, with operand b" -- in each memory, ``*a = op(*a, b)`` element by
    element (:func:`_reduce_element` of the two values); a result the manual leaves open leaves
    those bytes indeterminate."""
    kind = form["type"]
    size = _element_bytes(kind)
    count = vector_count(form)
    offsets = _multimem_places(form, state, a, size * count)
    new_state = state
    for k, (memory, offset) in enumerate(zip(state.multimem, offsets)):
        for i in range(count):
            old = int.from_bytes(memory.data[offset + i * size : offset + (i + 1) * size], "little")
            new = _reduce_element(form, kind, [old, values[i]])
            address = memory.base + offset + i * size
            bits = new if isinstance(new, int) else None
            memories = list(new_state.multimem)
            memories[k] = memories[k].written(address, from_register(bits or 0, size), indeterminate=bits is None)
            new_state = attrs.evolve(new_state, multimem=tuple(memories))
    return (), new_state
