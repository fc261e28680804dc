"""Catalogue entries for the §9.7.9 memory instructions: loads, stores, prefetches, cache policies
and the address queries and conversions.

One :class:`~ptxspec.spec.catalogue.Family` per syntax line of the manual (PTX ISA 8.7):

=================================  ====================================================================
key                                syntax line (section)
=================================  ====================================================================
``ld``                             ``ld{.weak}{.ss}{.cop}{.level::cache_hint}{.level::prefetch_size}{.vec}.type
                                   d, [a]{.unified}{, cache-policy}`` (§9.7.9.8)
``ld.eviction_priority``           ``ld{.weak}{.ss}{.level::eviction_priority}{.level::cache_hint}
                                   {.level::prefetch_size}{.vec}.type d, [a]{.unified}{, cache-policy}``
``ld.volatile``                    ``ld.volatile{.ss}{.level::prefetch_size}{.vec}.type d, [a]``
``ld.relaxed``, ``ld.acquire``     ``ld.relaxed.scope{.ss}{.level::eviction_priority}{.level::cache_hint}
                                   {.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}`` (and .acquire)
``ld.mmio``                        ``ld.mmio.relaxed.sys{.global}.type d, [a]``
``ld.global.nc``                   ``ld.global{.cop}.nc{.level::cache_hint}{.level::prefetch_size}{.vec}.type
                                   d, [a]{, cache-policy}`` (§9.7.9.9, the scalar and the .vec line)
``ld.global.nc.eviction_priority`` ``ld.global.nc{.level::eviction_priority}{.level::cache_hint}
                                   {.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}``
``ldu``                            ``ldu{.ss}{.vec}.type d, [a]`` (§9.7.9.10, both lines)
``st``                             ``st{.weak}{.ss}{.cop}{.level::cache_hint}{.vec}.type [a], b{, cache-policy}``
                                   (§9.7.9.11)
``st.eviction_priority``           ``st{.weak}{.ss}{.level::eviction_priority}{.level::cache_hint}{.vec}.type
                                   [a], b{, cache-policy}``
``st.volatile``                    ``st.volatile{.ss}{.vec}.type [a], b``
``st.relaxed``, ``st.release``     ``st.relaxed.scope{.ss}{.level::eviction_priority}{.level::cache_hint}{.vec}.type
                                   [a], b{, cache-policy}`` (and .release)
``st.mmio``                        ``st.mmio.relaxed.sys{.global}.type [a], b``
``st.async``                       ``st.async{.sem}{.scope}{.ss}{.completion_mechanism}{.vec}.type [a], b, [mbar]``
                                   (§9.7.9.12, .sem = .weak)
``st.async.release``               ``st.async{.mmio}.sem{.scope}{.ss}{.completion_mechanism}.type [a], b``
                                   (§9.7.9.12, .sem = .release)
``st.bulk``                        ``st.bulk{.weak}{.shared::cta} [a], size, initval`` (§9.7.9.13)
``multimem.ld_reduce``             ``multimem.ld_reduce{.ldsem}{.scope}{.ss}.op.type d, [a]`` (§9.7.9.14, integer)
``multimem.st``                    ``multimem.st{.stsem}{.scope}{.ss}.type [a], b`` (integer)
``multimem.red``                   ``multimem.red{.redsem}{.scope}{.ss}.op.type [a], b`` (integer)
``multimem.ld_reduce.float``       ``multimem.ld_reduce{.ldsem}{.scope}{.ss}.op{.acc_prec}{.vec}.type d, [a]``
``multimem.st.float``              ``multimem.st{.stsem}{.scope}{.ss}{.vec}.type [a], b``
``multimem.red.float``             ``multimem.red{.redsem}{.scope}{.ss}.redop{.vec}.redtype [a], b``
``prefetch``                       ``prefetch{.space}.level [a]`` (§9.7.9.15)
``prefetch.eviction_priority``     ``prefetch.global.level::eviction_priority [a]``
``prefetchu``                      ``prefetchu.L1 [a]``
``prefetch.tensormap``             ``prefetch{.tensormap_space}.tensormap [a]``
``applypriority``                  ``applypriority{.global}.level::eviction_priority [a], size`` (§9.7.9.16)
``discard``                        ``discard{.global}.level [a], size`` (§9.7.9.17)
``createpolicy.range``             ``createpolicy.range{.global}.level::primary_priority{.level::secondary_priority}.b64
                                   cache-policy, [a], primary-size, total-size`` (§9.7.9.18)
``createpolicy.fractional``        ``createpolicy.fractional.level::primary_priority{.level::secondary_priority}.b64
                                   cache-policy{, fraction}``
``createpolicy.cvt``               ``createpolicy.cvt.L2.b64 cache-policy, access-property``
``isspacep``                       ``isspacep.space p, a`` (§9.7.9.19)
``cvta``                           ``cvta.space.size p, a`` (§9.7.9.20)
``cvta.to``                        ``cvta.to.space.size p, a``
``mapa``                           ``mapa{.space}.type d, a, b`` (§9.7.9.23)
``getctarank``                     ``getctarank{.space}.type d, a`` (§9.7.9.24)
=================================  ====================================================================

Slots keep the manual's names where other code reads them: ``sem`` (the memory-ordering qualifier
of the line: .weak, .volatile, .relaxed, .acquire, .release), ``scope``, ``ss`` (every state-space
qualifier, written as the manual writes it: ``shared::cta``, ``param::entry``, ...), ``cop``,
``eviction_priority``, ``cache_hint``, ``prefetch_size``, ``vec``, ``type``, ``unified``, ``op``.
A token that names the line (``.nc``, ``.async``, ``.bulk``, ``.tensormap``, ``.to``,
``.range``, ...) is a required slot of its own name, and so is ``.mmio``: §9.7.9.12 writes it
apart from ``.sem`` (``st.async{.mmio}.sem``), and in ``ld.mmio.relaxed.sys`` the ordering is still
``.relaxed`` (``sem``). ``.unified`` is written after the address in PTX (``[a].unified``); here it
is the last qualifier (``ld.global.f32.unified``).

Operands: the address ``a`` (``u64``, written ``[a]``: :attr:`Family.addresses`); a loaded value
``d`` or, with ``.vN``, ``d.0`` .. ``d.{N-1}``; a stored value ``b`` likewise; ``cache_policy``
(``b64``) exactly when ``.L2::cache_hint`` is present ("the qualifier .level::cache_hint is required
when the optional argument cache-policy is specified", §9.7.9.8). ld and st of 8-bit types move
their value through a 32-bit register of the same kind (``u32`` for ``.u8``): "the destination
register may be wider than the specified type" (§9.7.9.8 Notes; §9.7.9.11 likewise for the
source). st.async has no such note, and ptxas wants a register of the very type there.

Where the manual and ``ptxas`` (CUDA 13.0) differ, the catalogue follows the manual and the
difference is listed in :data:`ptxspec.conformance.ptxas_agreement.KNOWN`.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxspec.spec.catalogue import VARIABLE_OPERANDS, Catalogue, Family, Form, Operand, Rule, Slot, Target, Targets, forbid, on

LD = "9.7.9.8"
LD_NC = "9.7.9.9"
LDU = "9.7.9.10"
ST = "9.7.9.11"
ST_ASYNC = "9.7.9.12"
ST_BULK = "9.7.9.13"
MULTIMEM = "9.7.9.14"
PREFETCH = "9.7.9.15"
APPLYPRIORITY = "9.7.9.16"
DISCARD = "9.7.9.17"
CREATEPOLICY = "9.7.9.18"
ISSPACEP = "9.7.9.19"
CVTA = "9.7.9.20"
MAPA = "9.7.9.23"
GETCTARANK = "9.7.9.24"
VECTORS = "5.4.2"

# ---------------------------------------------------------------------------------------------
# Qualifier sets, as the syntax blocks list them
# ---------------------------------------------------------------------------------------------

#: §9.7.9.8/§9.7.9.11 ".type = { .b8, .b16, .b32, .b64, .b128, .u8, .u16, .u32, .u64, .s8, .s16,
#: .s32, .s64, .f32, .f64 }" (the same for ld.global.nc and ldu).
TYPES = ("b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64")
#: §9.7.9.8 ".ss = { .const, .global, .local, .param{::entry, ::func}, .shared{::cta, ::cluster} }".
LD_SPACES = ("const", "global", "local", "param", "param::entry", "param::func", "shared", "shared::cta", "shared::cluster")
#: §9.7.9.11 ".ss = { .global, .local, .param{::func}, .shared{::cta, ::cluster} }": no .const
#: ("stores to const memory are illegal") and no ::entry.
ST_SPACES = ("global", "local", "param", "param::func", "shared", "shared::cta", "shared::cluster")
SHARED_SPACES = ("shared", "shared::cta", "shared::cluster")
LD_COPS = ("ca", "cg", "cs", "lu", "cv")  # §9.7.9.8 ".cop = { .ca, .cg, .cs, .lu, .cv }"
ST_COPS = ("wb", "cg", "cs", "wt")  # §9.7.9.11 ".cop = { .wb, .cg, .cs, .wt }"
NC_COPS = ("ca", "cg", "cs")  # §9.7.9.9 ".cop = { .ca, .cg, .cs }"
#: §9.7.9.8/§9.7.9.9/§9.7.9.11 ".level::eviction_priority = { .L1::evict_normal,
#: .L1::evict_unchanged, .L1::evict_first, .L1::evict_last, .L1::no_allocate }".
L1_EVICTION = ("L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate")
PREFETCH_SIZES = ("L2::64B", "L2::128B", "L2::256B")  # ".level::prefetch_size = { .L2::64B, .L2::128B, .L2::256B }"
SCOPES = ("cta", "cluster", "gpu", "sys")  # ".scope = { .cta, .cluster, .gpu, .sys }"
VEC = ("v2", "v4")  # ".vec = { .v2, .v4 }"

#: Width in bits of each type of this chapter.
BITS = {
    **{f"{k}{n}": n for k in "bus" for n in (8, 16, 32, 64)},
    "b128": 128,
    "f32": 32,
    "f64": 64,
    "f16": 16,
    "bf16": 16,
    "f16x2": 32,
    "bf16x2": 32,
    "e5m2": 8,
    "e4m3": 8,
    "e5m2x2": 16,
    "e4m3x2": 16,
    "e5m2x4": 32,
    "e4m3x4": 32,
}

CACHE_HINT = Slot("cache_hint", ("L2::cache_hint",))
PREFETCH_SIZE = Slot("prefetch_size", PREFETCH_SIZES)
VEC_SLOT = Slot("vec", VEC)
TYPE = Slot("type", TYPES, required=True)
UNIFIED = Slot("unified", ("unified",))


def lanes(form: Form) -> int:
    """The number of elements the form moves: 2 for ``.v2``, ..., 1 without ``.vec``."""
    vec = form.get("vec")
    return int(vec[1:]) if vec else 1


def _generic_or(*spaces: str) -> Callable[[Form], bool]:
    """Whether the form's state space is not one of ``spaces`` and not generic (no .ss)."""
    return lambda f: f.get("ss") is not None and f["ss"] not in spaces


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------


def value_register(type_name: str) -> str:
    """The register of an ld/st value: the type itself, except that an 8-bit value goes through a
    32-bit register of its kind (§9.7.9.8 Notes: "the destination register may be wider than the
    specified type"; §9.7.9.11: "a source register wider than the specified type may be used")."""
    return f"{type_name[0]}32" if BITS.get(type_name) == 8 and type_name[0] in "bus" else type_name


def _values(name: str, register: str, count: int, destination: bool) -> tuple[Operand, ...]:
    """``name`` or, for a vector of ``count`` elements, ``name.0`` .. ``name.{count-1}``."""
    if count == 1:
        return (Operand(name, register, destination=destination),)
    return tuple(Operand(f"{name}.{i}", register, destination=destination) for i in range(count))


def _policy(form: Form) -> tuple[Operand, ...]:
    """The 64-bit cache-policy operand, there exactly when .L2::cache_hint is."""
    return (Operand("cache_policy", "b64"),) if form.get("cache_hint") else ()


def _load_operands(form: Form) -> tuple[Operand, ...]:
    """``d, [a]{, cache-policy}``; ``d`` a vector of ``.vN`` elements."""
    return (*_values("d", value_register(form["type"]), lanes(form), True), Operand("a", "u64"), *_policy(form))


def _store_operands(form: Form) -> tuple[Operand, ...]:
    """``[a], b{, cache-policy}``; ``b`` a vector of ``.vN`` elements."""
    return (Operand("a", "u64"), *_values("b", value_register(form["type"]), lanes(form), False), *_policy(form))


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------


class _Need:
    """The latest of several (PTX ISA version, sm) requirements: a form needs all that apply."""

    def __init__(self, ptx: tuple[int, int] = (1, 0), sm: int = 10):
        self.ptx, self.sm = ptx, sm

    def __call__(self, ptx: tuple[int, int], sm: int = 10) -> None:
        self.ptx, self.sm = max(self.ptx, ptx), max(self.sm, sm)

    @property
    def target(self) -> Target:
        return Target(self.ptx, self.sm)


def _space_needs(need: _Need, ss: str | None) -> None:
    """The notes on state spaces that several sections share (§9.7.9.8, §9.7.9.11, §9.7.9.19,
    §9.7.9.20): "Generic addressing ... introduced in PTX ISA version 2.0" and "requires sm_20";
    "Support for ::cta and ::cluster sub-qualifiers introduced in PTX ISA version 7.8"; "Sub-qualifier
    ::cta requires sm_30 or higher"; "Sub-qualifier ::cluster requires sm_90 or higher"; "Support for
    ::entry and ::func sub-qualifiers on .param space introduced in PTX ISA version 8.3"."""
    if ss is None:
        need((2, 0), 20)
    elif ss == "shared::cta":
        need((7, 8), 30)
    elif ss == "shared::cluster":
        need((7, 8), 90)
    elif ss in ("param::entry", "param::func"):
        need((8, 3))


def _access_target(form: Form) -> Target:
    """The PTX ISA notes and Target ISA notes of ld (§9.7.9.8) and st (§9.7.9.11), the latest
    requirement that applies:

    * "ld/st introduced in PTX ISA version 1.0. ld.volatile/st.volatile introduced in PTX ISA
      version 1.1." "ld.f64/st.f64 requires sm_13 or higher."
    * "Generic addressing and cache operations introduced in PTX ISA version 2.0", "require sm_20".
    * "Support for scope qualifier, .relaxed, .acquire, .release, .weak qualifiers introduced in
      PTX ISA version 6.0", "require sm_70 or higher".
    * ".level::eviction_priority, .level::prefetch_size and .level::cache_hint qualifiers
      introduced in PTX ISA version 7.4"; eviction priority "requires sm_70", prefetch size
      "sm_75", ".L2::256B and .L2::cache_hint require sm_80".
    * ".cluster scope qualifier introduced in PTX ISA version 7.8", "requires sm_90".
    * ".unified qualifier introduced in PTX ISA version 8.0", "requires sm_90".
    * ".mmio qualifier introduced in PTX ISA version 8.2", "requires sm_70".
    * ".b128 type introduced in PTX ISA version 8.3", "requires sm_70"; ".sys scope with .b128
      type introduced in PTX ISA version 8.4".
    """
    need = _Need()
    _space_needs(need, form.get("ss"))
    sem, scope, t = form.get("sem"), form.get("scope"), form["type"]
    if t == "f64":
        need((1, 0), 13)
    if sem == "volatile":
        need((1, 1))
    elif sem is not None or scope is not None:
        need((6, 0), 70)
    if form.get("cop"):
        need((2, 0), 20)
    if form.get("eviction_priority"):
        need((7, 4), 70)
    size = form.get("prefetch_size")
    if size:
        need((7, 4), 80 if size == "L2::256B" else 75)
    if form.get("cache_hint"):
        need((7, 4), 80)
    if scope == "cluster":
        need((7, 8), 90)
    if form.get("unified"):
        need((8, 0), 90)
    if form.get("mmio"):
        need((8, 2), 70)
    if t == "b128":
        need((8, 4) if scope == "sys" else (8, 3), 70)
    return need.target


def _nc_target(form: Form) -> Target:
    """§9.7.9.9: "Introduced in PTX ISA version 3.1", "requires sm_32 or higher"; eviction
    priority, prefetch size and cache hint "introduced in PTX ISA version 7.4", requiring sm_70,
    sm_75 and sm_80; ".b128 type introduced in PTX ISA version 8.3", "requires sm_70".

    §9.7.9.9 gives .level::prefetch_size sm_75 without singling out .L2::256B; §9.7.9.8 says
    ".L2::256B ... requires sm_80 or higher" of the same qualifier, and so do ptxas and CCCL's
    ``ld.global.nc.L2::256B`` (``SM_80``): the .L2::256B gate of ld applies here too."""
    need = _Need((3, 1), 32)
    if form.get("eviction_priority"):
        need((7, 4), 70)
    size = form.get("prefetch_size")
    if size:
        need((7, 4), 80 if size == "L2::256B" else 75)
    if form.get("cache_hint"):
        need((7, 4), 80)
    if form["type"] == "b128":
        need((8, 3), 70)
    return need.target


def _ldu_target(form: Form) -> Target:
    """§9.7.9.10: "Introduced in PTX ISA version 2.0"; "ldu.f64 requires sm_13" (sm_20 for any
    ldu: generic addressing, and ldu is of PTX ISA 2.0); ".b128 type introduced in PTX ISA version
    8.3", "requires sm_70"."""
    return Target((8, 3), 70) if form["type"] == "b128" else Target((2, 0), 20)


# ---------------------------------------------------------------------------------------------
# Rules shared by ld and st
# ---------------------------------------------------------------------------------------------


def _vector_limit(section: str = VECTORS) -> Rule:
    """§5.4.2: "The length of a vector cannot exceed 128 bits; e.g., .v4 .f64 is not allowed"."""
    return Rule(
        lambda f: lanes(f) * BITS[f["type"]] > 128,
        lambda f: (
            f'.{f["vec"]}.{f["type"]} is {lanes(f) * BITS[f["type"]]} bits: "the length of a vector cannot exceed 128 bits; e.g., .v4 .f64 is not allowed" (§5.4.2)'
        ),
        section,
    )


def _strong_spaces(section: str) -> Rule:
    """§9.7.9.8/§9.7.9.11: "The .volatile, .relaxed and .acquire/.release qualifiers may be used
    only with .global and .shared spaces and with generic addressing, where the address points to
    .global or .shared space."""
    return Rule(
        _generic_or("global", *SHARED_SPACES),
        lambda f: f".{f['sem']} may be used only with .global and .shared spaces and with generic addressing, not .{f['ss']}",
        section,
    )


def _global_only(slot: str, what: str, section: str, source: str) -> Rule:
    """A qualifier that "is supported only with .global state space and generic addressing"."""
    return forbid(slot, _generic_or("global"), lambda f: f"{what} {source}, not .{f['ss']}", section)


_PREFETCH_GLOBAL = _global_only(
    "prefetch_size",
    ".level::prefetch_size",
    LD,
    '"may be used only with .global state space and with generic addressing where the address points to .global state space"',
)
_UNIFIED_GLOBAL = _global_only(
    "unified", ".unified", LD, '"the qualifiers .unified and .level::cache_hint are only supported for .global state space and for generic addressing"'
)
_LD_HINT_GLOBAL = _global_only(
    "cache_hint",
    ".level::cache_hint",
    LD,
    '"the qualifiers .unified and .level::cache_hint are only supported for .global state space and for generic addressing"',
)
_ST_HINT_GLOBAL = _global_only(
    "cache_hint", ".level::cache_hint", ST, '"the qualifier .level::cache_hint is only supported for .global state space and for generic addressing"'
)


def _eviction_global(section: str) -> Rule:
    """§9.7.9.2: "The cache eviction priority on a load or store instruction ... is supported for
    the .global state space and generic addresses where the address points to the .global state
    space"."""
    return _global_only(
        "eviction_priority", ".level::eviction_priority", section, '"is supported for the .global state space and generic addresses" (§9.7.9.2)'
    )


# ---------------------------------------------------------------------------------------------
# §9.7.9.8 ld
# ---------------------------------------------------------------------------------------------

_LD_SUMMARY = "Load a register (or a vector) from an addressable state space."


def _ld(
    key: str, sem: Slot, middle: tuple[Slot, ...], *, scoped: bool = False, unified: bool = False, rules: tuple[Rule, ...] = (), summary: str = ""
) -> Family:
    """An ld line: ``ld`` sem ``{.scope}`` ``{.ss}`` middle ``{.vec}.type``."""
    slots = (sem, *((Slot("scope", SCOPES, required=True),) if scoped else ()), Slot("ss", LD_SPACES), *middle, VEC_SLOT, TYPE)
    return Family(
        opcode="ld",
        key=key,
        section=LD,
        slots=slots + ((UNIFIED,) if unified else ()),
        operands=_load_operands,
        rules=(_vector_limit(), *rules),
        target=_access_target,
        summary=summary or _LD_SUMMARY,
        addresses=("a",),
    )


LD_WEAK = _ld(
    "ld",
    Slot("sem", ("weak",)),
    (Slot("cop", LD_COPS), CACHE_HINT, PREFETCH_SIZE),
    unified=True,
    rules=(_PREFETCH_GLOBAL, _UNIFIED_GLOBAL, _LD_HINT_GLOBAL),
    summary="Load (weak, the default) with an optional cache operator: d = [a].",
)
LD_EVICTION = _ld(
    "ld.eviction_priority",
    Slot("sem", ("weak",)),
    (Slot("eviction_priority", L1_EVICTION), CACHE_HINT, PREFETCH_SIZE),
    unified=True,
    rules=(_eviction_global(LD), _PREFETCH_GLOBAL, _UNIFIED_GLOBAL, _LD_HINT_GLOBAL),
    summary="Load (weak) with an L1 cache eviction priority: d = [a].",
)
LD_VOLATILE = _ld(
    "ld.volatile",
    Slot("sem", ("volatile",), required=True),
    (PREFETCH_SIZE,),
    rules=(_strong_spaces(LD), _PREFETCH_GLOBAL),
    summary="Volatile load: a relaxed load at system scope that the compiler keeps as written.",
)
LD_RELAXED, LD_ACQUIRE = (
    _ld(
        f"ld.{sem}",
        Slot("sem", (sem,), required=True),
        (Slot("eviction_priority", L1_EVICTION), CACHE_HINT, PREFETCH_SIZE),
        scoped=True,
        rules=(_strong_spaces(LD), _eviction_global(LD), _PREFETCH_GLOBAL, _LD_HINT_GLOBAL),
        summary=f"Strong load with .{sem} semantics at the given scope: d = [a].",
    )
    for sem in ("relaxed", "acquire")
)
LD_MMIO = Family(
    opcode="ld",
    key="ld.mmio",
    section=LD,
    slots=(
        Slot("mmio", ("mmio",), required=True),
        # "The .mmio qualifier must be specified together with .relaxed"; "Only .sys thread
        # scope is valid for ld.mmio operation"; ".mmio ... only with .global space and generic
        # addressing": the line is ld.mmio.relaxed.sys{.global}.type.
        Slot("sem", ("relaxed",), required=True),
        Slot("scope", ("sys",), required=True),
        Slot("ss", ("global",)),
        TYPE,
    ),
    operands=_load_operands,
    target=_access_target,
    summary="MMIO load: a strong relaxed load at system scope, performed exactly once and never cached.",
    addresses=("a",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.9 ld.global.nc and §9.7.9.10 ldu
# ---------------------------------------------------------------------------------------------


def _nc(key: str, middle: tuple[Slot, ...], summary: str) -> Family:
    return Family(
        opcode="ld",
        key=key,
        section=LD_NC,
        slots=(Slot("ss", ("global",), required=True), *middle, CACHE_HINT, PREFETCH_SIZE, VEC_SLOT, TYPE),
        operands=_load_operands,
        rules=(_vector_limit(),),
        target=_nc_target,
        summary=summary,
        addresses=("a",),
    )


# "ld.global{.cop}.nc{...}.type" and "ld.global{.cop}.nc{...}.vec.type": one family, .vec optional.
LD_NC_COP = _nc(
    "ld.global.nc",
    (Slot("cop", NC_COPS), Slot("nc", ("nc",), required=True)),
    "Load from the global state space through the non-coherent (read-only) cache.",
)
LD_NC_EVICTION = _nc(
    "ld.global.nc.eviction_priority",
    (Slot("nc", ("nc",), required=True), Slot("eviction_priority", L1_EVICTION)),
    "Load through the non-coherent cache with an L1 cache eviction priority.",
)

# "ldu{.ss}.type d, [a];" and "ldu{.ss}.vec.type d, [a];" with ".ss = { .global }".
LDU_FAMILY = Family(
    opcode="ldu",
    key="ldu",
    section=LDU,
    slots=(Slot("ss", ("global",)), VEC_SLOT, TYPE),
    operands=_load_operands,
    rules=(_vector_limit(),),
    target=_ldu_target,
    summary="Load read-only data from an address that is the same for every thread of the warp.",
    addresses=("a",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.11 st
# ---------------------------------------------------------------------------------------------


def _st(key: str, sem: Slot, middle: tuple[Slot, ...], *, scoped: bool = False, rules: tuple[Rule, ...] = (), summary: str = "") -> Family:
    """A st line: ``st`` sem ``{.scope}`` ``{.ss}`` middle ``{.vec}.type``."""
    return Family(
        opcode="st",
        key=key,
        section=ST,
        slots=(sem, *((Slot("scope", SCOPES, required=True),) if scoped else ()), Slot("ss", ST_SPACES), *middle, VEC_SLOT, TYPE),
        operands=_store_operands,
        rules=(_vector_limit(), *rules),
        target=_access_target,
        summary=summary,
        addresses=("a",),
    )


ST_WEAK = _st(
    "st",
    Slot("sem", ("weak",)),
    (Slot("cop", ST_COPS), CACHE_HINT),
    rules=(_ST_HINT_GLOBAL,),
    summary="Store (weak, the default) with an optional cache operator: [a] = b.",
)
ST_EVICTION = _st(
    "st.eviction_priority",
    Slot("sem", ("weak",)),
    (Slot("eviction_priority", L1_EVICTION), CACHE_HINT),
    rules=(_eviction_global(ST), _ST_HINT_GLOBAL),
    summary="Store (weak) with an L1 cache eviction priority: [a] = b.",
)
ST_VOLATILE = _st(
    "st.volatile",
    Slot("sem", ("volatile",), required=True),
    (),
    rules=(_strong_spaces(ST),),
    summary="Volatile store: a relaxed store at system scope that the compiler keeps as written.",
)
ST_RELAXED, ST_RELEASE = (
    _st(
        f"st.{sem}",
        Slot("sem", (sem,), required=True),
        (Slot("eviction_priority", L1_EVICTION), CACHE_HINT),
        scoped=True,
        rules=(_strong_spaces(ST), _eviction_global(ST), _ST_HINT_GLOBAL),
        summary=f"Strong store with .{sem} semantics at the given scope: [a] = b.",
    )
    for sem in ("relaxed", "release")
)
ST_MMIO = Family(
    opcode="st",
    key="st.mmio",
    section=ST,
    slots=(
        Slot("mmio", ("mmio",), required=True),
        Slot("sem", ("relaxed",), required=True),
        Slot("scope", ("sys",), required=True),
        Slot("ss", ("global",)),
        TYPE,
    ),
    operands=_store_operands,
    target=_access_target,
    summary="MMIO store: a strong relaxed store at system scope, performed exactly once.",
    addresses=("a",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.12 st.async and §9.7.9.13 st.bulk
# ---------------------------------------------------------------------------------------------

ASYNC = Slot("async", ("async",), required=True)


def _async_operands(form: Form) -> tuple[Operand, ...]:
    """``[a], b, [mbar]`` (the .weak line) or ``[a], b`` (the .release line): "b is the source
    value, of the type indicated by qualifier .type" -- a register of that very type (no note on
    wider registers, and ptxas wants the type)."""
    values = _values("b", form["type"], lanes(form), False)
    mbar = (Operand("mbar", "u64"),) if form.get("sem") != "release" else ()
    return (Operand("a", "u64"), *values, *mbar)


ST_ASYNC_WEAK = Family(
    opcode="st",
    key="st.async",
    section=ST_ASYNC,
    # ".sem = { .weak }; .scope = { .cluster }; .ss = { .shared::cluster }; .vec = { .v2, .v4 };
    # .completion_mechanism = { .mbarrier::complete_tx::bytes }; .type = { .b32, .b64, .u32,
    # .u64, .s32, .s64, .f32, .f64 }"
    slots=(
        ASYNC,
        Slot("sem", ("weak",)),
        Slot("scope", ("cluster",)),
        Slot("ss", ("shared::cluster",)),
        Slot("completion_mechanism", ("mbarrier::complete_tx::bytes",)),
        VEC_SLOT,
        Slot("type", ("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"), required=True),
    ),
    operands=_async_operands,
    rules=(_vector_limit(),),
    # "Introduced in PTX ISA version 8.1." "Requires sm_90 or higher." The notes' "Support for .mmio
    # qualifier, .release semantics, .global state space and .scope qualifier introduced in PTX ISA
    # version 8.7" (sm_100) name the features of the .release line; its .gpu/.sys scopes are new,
    # this line's .cluster is not (ptxas takes it at PTX ISA 8.1 on sm_90).
    target=Target((8, 1), 90),
    summary="Asynchronous weak store to the shared memory of another CTA of the cluster; completion is signalled on the mbarrier.",
    addresses=("a", "mbar"),
)

ST_ASYNC_RELEASE = Family(
    opcode="st",
    key="st.async.release",
    section=ST_ASYNC,
    # "st.async{.mmio}.sem{.scope}{.ss}{.completion_mechanism}.type [a], b; .sem = { .release };
    # .scope = { .gpu, .sys }; .ss = { .global }; .completion_mechanism = { };" -- an empty
    # completion mechanism: "The .completion_mechanism must not be specified."
    slots=(
        ASYNC,
        Slot("mmio", ("mmio",)),
        Slot("sem", ("release",), required=True),
        Slot("scope", ("gpu", "sys")),
        Slot("ss", ("global",)),
        Slot("type", ("b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64"), required=True),
    ),
    operands=_async_operands,
    rules=(forbid("mmio", lambda f: f.get("scope") == "gpu", '"If .mmio is specified, then .scope must be .sys"', ST_ASYNC),),
    # "Support for .mmio qualifier, .release semantics, .global state space and .scope qualifier
    # introduced in PTX ISA version 8.7" and "require sm_100 or higher".
    target=Target((8, 7), 100),
    summary="Asynchronous release store to global memory (optionally an MMIO store).",
    addresses=("a",),
)

ST_BULK_FAMILY = Family(
    opcode="st",
    key="st.bulk",
    section=ST_BULK,
    slots=(Slot("bulk", ("bulk",), required=True), Slot("sem", ("weak",)), Slot("ss", ("shared::cta",))),
    # "The 64-bit integer operand size specifies the amount of memory to be initialized in
    # bytes"; "The integer immediate operand initval ... The only numeric value allowed for operand
    # initval is 0."
    operands=lambda f: (Operand("a", "u64"), Operand("size", "u64"), Operand("initval", "u64")),
    # "Introduced in PTX ISA version 8.6." "Requires sm_100 or higher."
    target=Target((8, 6), 100),
    summary="Initialize size bytes of shared memory at [a] to zero.",
    addresses=("a",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.14 multimem.ld_reduce, multimem.st, multimem.red
# ---------------------------------------------------------------------------------------------

INT_TYPES = ("b32", "b64", "u32", "u64", "s32", "s64")
FP8_TYPES = ("e5m2", "e5m2x2", "e5m2x4", "e4m3", "e4m3x2", "e4m3x4")
FLOAT_TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64", *FP8_TYPES)
RED_TYPES = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64")
HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")

#: The valid .op and base-type combinations (§9.7.9.14's table): ".add: .u32, .u64, .s32, .f16,
#: .f16x2, .bf16, .bf16x2, .f32, .f64, .e5m2, .e5m2x2, .e5m2x4, .e4m3, .e4m3x2, .e4m3x4";
#: ".and, .or, .xor: .b32, .b64"; ".min, .max: .u32, .s32, .u64, .s64, .f16, .f16x2, .bf16,
#: .bf16x2, .e5m2, .e5m2x2, .e5m2x4, .e4m3, .e4m3x2, .e4m3x4".
MULTIMEM_OPS: dict[str, tuple[str, ...]] = {
    "add": ("u32", "u64", "s32", *RED_TYPES, *FP8_TYPES),
    "and": ("b32", "b64"),
    "or": ("b32", "b64"),
    "xor": ("b32", "b64"),
    "min": ("u32", "s32", "u64", "s64", *HALF_TYPES, *FP8_TYPES),
    "max": ("u32", "s32", "u64", "s64", *HALF_TYPES, *FP8_TYPES),
}

#: The register of one multimem value: .f16 and .f16x2 registers as themselves, .bf16/.bf16x2
#: in .b16/.b32 (:func:`ptxspec.conformance.ptxas_agreement.register_type`), and the fp8 types in
#: bit-size registers of their width.
MULTIMEM_REGISTER = {"e5m2": "b8", "e4m3": "b8", "e5m2x2": "b16", "e4m3x2": "b16", "e5m2x4": "b32", "e4m3x4": "b32"}

MULTIMEM_SS = Slot("ss", ("global",))  # ".ss = { .global }"
MULTIMEM_VEC = Slot("vec", ("v2", "v4", "v8"))  # ".vec = { .v2, .v4, .v8 }"
MULTIMEM_SEMS = {"ld_reduce": ("weak", "relaxed", "acquire"), "st": ("weak", "relaxed", "release"), "red": ("relaxed", "release")}


def _multimem_operands(form: Form) -> tuple[Operand, ...]:
    register = MULTIMEM_REGISTER.get(form["type"], form["type"])
    if form.get("ld_reduce"):
        return (*_values("d", register, lanes(form), True), Operand("a", "u64"))
    return (Operand("a", "u64"), *_values("b", register, lanes(form), False))


def _op_type_rule() -> Rule:
    return Rule(
        lambda f: f["type"] not in MULTIMEM_OPS[f["op"]],
        lambda f: (
            f".{f['op']} does not take .{f['type']} (the valid .op and base type combinations: .{f['op']} with {', '.join('.' + t for t in MULTIMEM_OPS[f['op']])})"
        ),
        MULTIMEM,
    )


def _multimem_scope_rules(operation: str) -> tuple[Rule, ...]:
    """§8.5: "Every strong operation must specify a scope"; a weak operation has none to specify
    (ld and st give .scope only to their .relaxed/.acquire/.release lines). multimem.ld_reduce and
    multimem.st default to .weak ("If no explicit semantics qualifier is specified, then
    multimem.ld_reduce and multimem.st default to .weak"): a .scope needs an explicit strong
    semantics, which needs a .scope. multimem.red is strong by default (".relaxed") and "if the
    .scope qualifier is not specified for multimem.red then .sys scope is assumed by default": any
    combination is complete."""
    if operation == "red":
        return ()
    return (
        Rule(
            lambda f: f.get("sem") in ("relaxed", "acquire", "release") and f.get("scope") is None,
            lambda f: f'.{f["sem"]} is a strong operation and "every strong operation must specify a scope" (§8.5)',
            MULTIMEM,
        ),
        Rule(
            lambda f: f.get("scope") is not None and f.get("sem") in (None, "weak"),
            lambda f: (
                f".{f['scope']} needs .relaxed or .{'acquire' if operation == 'ld_reduce' else 'release'}: without one, multimem.{operation} is .weak, and a scope belongs to strong operations (§8.5)"
            ),
            MULTIMEM,
        ),
    )


def _float_vector_rules() -> tuple[Rule, ...]:
    """The manual: "For floating-point type multi- operations, the size of the specified type along
    with .vec must equal either 32-bits or 64-bits or 128-bits. No other combinations of .vec and
    type are allowed. Type .f64 cannot be used with .vec qualifier." (§9.7.9.14)"""
    return (
        Rule(
            lambda f: lanes(f) * BITS[f["type"]] not in (32, 64, 128),
            lambda f: (
                f'{(f.get("vec") and "." + f["vec"] + " of ") or ""}.{f["type"]} is {lanes(f) * BITS[f["type"]]} bits: "the size of the specified type along with .vec must equal either 32-bits or 64-bits or 128-bits"'
            ),
            MULTIMEM,
        ),
        forbid("vec", lambda f: f["type"] == "f64", '"Type .f64 cannot be used with .vec qualifier"', MULTIMEM),
    )


_ACC_TYPES = {"acc::f32": HALF_TYPES, "acc::f16": FP8_TYPES}


def _multimem_target(form: Form) -> Target | Targets:
    """§9.7.9.14: "Introduced in PTX ISA version 8.1", "Requires sm_90 or higher"; ".acc::f32
    qualifier introduced in PTX ISA version 8.2"; "types .e5m2, .e5m2x2, .e5m2x4, .e4m3, .e4m3x2,
    .e4m3x4" and ".acc::f16" "introduced in PTX ISA version 8.6" and "supported on the following
    architectures: sm_100a, sm_101a, sm_120a"."""
    if form["type"] in FP8_TYPES or form.get("acc_prec") == "acc::f16":
        return on((8, 6), "sm_100a", "sm_101a", "sm_120a")
    return Target((8, 2), 90) if form.get("acc_prec") else Target((8, 1), 90)


def _multimem(operation: str, floating: bool) -> Family:
    """One of the six lines: ``multimem.{operation}`` on integer or floating-point types."""
    op: tuple[Slot, ...] = ()
    if operation != "st":
        ops = ("add",) if operation == "red" and floating else ("min", "max", "add") if floating else ("min", "max", "add", "and", "or", "xor")
        op = (Slot("op", ops, required=True),)
    acc = (Slot("acc_prec", tuple(_ACC_TYPES)),) if operation == "ld_reduce" and floating else ()
    vec = (MULTIMEM_VEC,) if floating else ()
    types = (RED_TYPES if operation == "red" else FLOAT_TYPES) if floating else INT_TYPES
    rules: list[Rule] = [*_multimem_scope_rules(operation)]
    if operation != "st":
        rules.append(_op_type_rule())
    if floating:
        rules += _float_vector_rules()
    if acc:
        # ".acc::f32: .f16, .f16x2, .bf16, .bf16x2 -> .f32"; ".acc::f16: .e5m2, .e4m3, .e5m2x2,
        # .e4m3x2, .e4m3x4, .e5m2x4 -> .f16" (the table of .acc::prec).
        rules.append(
            forbid(
                "acc_prec",
                lambda f: f["type"] not in _ACC_TYPES[f["acc_prec"]],
                lambda f: (
                    f".{f['acc_prec']} changes the accumulation precision of {', '.join('.' + t for t in _ACC_TYPES[f['acc_prec']])} only, not .{f['type']}"
                ),
                MULTIMEM,
            )
        )
    kind = "floating-point" if floating else "integer"
    summaries = {
        "ld_reduce": "Load from every location a multimem address points to and reduce the values with .op",
        "st": "Store b to every location a multimem address points to",
        "red": "Reduce b into every location a multimem address points to with .op",
    }
    return Family(
        opcode="multimem",
        key=f"multimem.{operation}" + (".float" if floating else ""),
        section=MULTIMEM,
        slots=(
            Slot(operation, (operation,), required=True),
            Slot("sem", MULTIMEM_SEMS[operation]),
            Slot("scope", SCOPES),
            MULTIMEM_SS,
            *op,
            *acc,
            *vec,
            Slot("type", types, required=True),
        ),
        operands=_multimem_operands,
        rules=tuple(rules),
        target=_multimem_target,
        summary=f"{summaries[operation]} ({kind} types).",
        addresses=("a",),
    )


MULTIMEM_FAMILIES = [_multimem(operation, floating) for floating in (False, True) for operation in ("ld_reduce", "st", "red")]


# ---------------------------------------------------------------------------------------------
# §9.7.9.15 prefetch, prefetchu; §9.7.9.16 applypriority; §9.7.9.17 discard
# ---------------------------------------------------------------------------------------------


def _address_only(form: Form) -> tuple[Operand, ...]:
    return (Operand("a", "u64"),)


def _address_and_size(form: Form) -> tuple[Operand, ...]:
    """``[a], size``: "size is an integer constant ... The only supported value for the size
    operand is 128" (§9.7.9.16, §9.7.9.17)."""
    return (Operand("a", "u64"), Operand("size", "u32"))


PREFETCH_FAMILY = Family(
    opcode="prefetch",
    key="prefetch",
    section=PREFETCH,
    # "prefetch{.space}.level [a]; .space = { .global, .local }; .level = { .L1, .L2 }"
    slots=(Slot("ss", ("global", "local")), Slot("level", ("L1", "L2"), required=True)),
    operands=_address_only,
    # "Introduced in PTX ISA version 2.0." "prefetch and prefetchu require sm_20 or higher."
    target=Target((2, 0), 20),
    summary="Bring the line containing the address into the given cache level.",
    addresses=("a",),
)

PREFETCH_EVICTION = Family(
    opcode="prefetch",
    key="prefetch.eviction_priority",
    section=PREFETCH,
    # "prefetch.global.level::eviction_priority [a]; .level::eviction_priority = { .L2::evict_last,
    # .L2::evict_normal }"
    slots=(Slot("ss", ("global",), required=True), Slot("eviction_priority", ("L2::evict_last", "L2::evict_normal"), required=True)),
    operands=_address_only,
    # ".level::eviction_priority qualifier introduced in PTX ISA version 7.4", "requires sm_80".
    target=Target((7, 4), 80),
    summary="Prefetch the line containing the address into L2 with the given eviction priority.",
    addresses=("a",),
)

PREFETCHU = Family(
    opcode="prefetchu",
    key="prefetchu",
    section=PREFETCH,
    slots=(Slot("level", ("L1",), required=True),),  # "prefetchu.L1 [a]"
    operands=_address_only,
    target=Target((2, 0), 20),
    summary="Bring the line containing the generic address into the uniform cache.",
    addresses=("a",),
)

PREFETCH_TENSORMAP = Family(
    opcode="prefetch",
    key="prefetch.tensormap",
    section=PREFETCH,
    # "prefetch{.tensormap_space}.tensormap [a]; .tensormap_space = { .const, .param }"
    slots=(Slot("ss", ("const", "param")), Slot("tensormap", ("tensormap",), required=True)),
    operands=_address_only,
    # ".tensormap qualifier introduced in PTX ISA version 8.0", "requires sm_90 or higher".
    target=Target((8, 0), 90),
    summary="Prefetch the tensor map at the address for later use by cp.async.bulk.tensor.",
    addresses=("a",),
)

APPLYPRIORITY_FAMILY = Family(
    opcode="applypriority",
    key="applypriority",
    section=APPLYPRIORITY,
    # "applypriority{.global}.level::eviction_priority [a], size; .level::eviction_priority =
    # { .L2::evict_normal }"
    slots=(Slot("ss", ("global",)), Slot("eviction_priority", ("L2::evict_normal",), required=True)),
    operands=_address_and_size,
    # "Introduced in PTX ISA version 7.4." "Requires sm_80 or higher."
    target=Target((7, 4), 80),
    summary="Apply the eviction priority to the 128 bytes at [a] in L2 (fetching them first if absent).",
    addresses=("a",),
)

DISCARD_FAMILY = Family(
    opcode="discard",
    key="discard",
    section=DISCARD,
    slots=(Slot("ss", ("global",)), Slot("level", ("L2",), required=True)),  # "discard{.global}.level [a], size; .level = { .L2 }"
    operands=_address_and_size,
    target=Target((7, 4), 80),  # "Introduced in PTX ISA version 7.4." "Requires sm_80 or higher."
    summary="Invalidate the 128 bytes at [a] in L2 without writing them back; they become indeterminate.",
    addresses=("a",),
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.18 createpolicy
# ---------------------------------------------------------------------------------------------

PRIMARY = Slot("primary_priority", ("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"), required=True)
SECONDARY = Slot("secondary_priority", ("L2::evict_first", "L2::evict_unchanged"))
B64 = Slot("type", ("b64",), required=True)
POLICY = Operand("cache_policy", "b64", destination=True)
# "Introduced in PTX ISA version 7.4." "Requires sm_80 or higher."
POLICY_TARGET = Target((7, 4), 80)

CREATEPOLICY_RANGE = Family(
    opcode="createpolicy",
    key="createpolicy.range",
    section=CREATEPOLICY,
    slots=(Slot("range", ("range",), required=True), Slot("ss", ("global",)), PRIMARY, SECONDARY, B64),
    # "The 32-bit operand primary-size ... The 32-bit operand total-size ..."
    operands=lambda f: (POLICY, Operand("a", "u64"), Operand("primary_size", "u32"), Operand("total_size", "u32")),
    target=POLICY_TARGET,
    summary="Create a range-based L2 eviction policy: primary priority on [a, a+primary-size), secondary around it.",
    addresses=("a",),
)

CREATEPOLICY_FRACTIONAL = Family(
    opcode="createpolicy",
    key="createpolicy.fractional",
    section=CREATEPOLICY,
    slots=(Slot("fractional", ("fractional",), required=True), PRIMARY, SECONDARY, B64),
    # "the 32-bit floating point operand fraction"; the manual writes it as optional
    # ("cache-policy{, fraction}", "If the fraction operand is not specified, it defaults to 1.0"):
    # the form lists it, as its examples do.
    operands=lambda f: (POLICY, Operand("fraction", "f32")),
    target=POLICY_TARGET,
    summary="Create a fraction-based L2 eviction policy: the primary priority for that fraction of accesses.",
)

CREATEPOLICY_CVT = Family(
    opcode="createpolicy",
    key="createpolicy.cvt",
    section=CREATEPOLICY,
    slots=(Slot("cvt", ("cvt",), required=True), Slot("level", ("L2",), required=True), B64),  # "createpolicy.cvt.L2.b64"
    # "The source operand access-property is a 64-bit opaque register."
    operands=lambda f: (POLICY, Operand("access_property", "b64")),
    target=POLICY_TARGET,
    summary="Convert an access property created by the CUDA APIs into a cache eviction policy.",
)


# ---------------------------------------------------------------------------------------------
# §9.7.9.19 isspacep, §9.7.9.20 cvta, §9.7.9.23 mapa, §9.7.9.24 getctarank
# ---------------------------------------------------------------------------------------------

#: §9.7.9.19/§9.7.9.20 ".space = { .const, .global, .local, .shared{::cta, ::cluster},
#: .param{::entry} }" (§9.7.9.19 writes "const" without its dot).
ADDRESS_SPACES = ("const", "global", "local", "shared", "shared::cta", "shared::cluster", "param", "param::entry")


def _window_target(form: Form) -> Target:
    """isspacep (§9.7.9.19) and cvta (§9.7.9.20): "Introduced in PTX ISA version 2.0", "requires
    sm_20"; ".const introduced in PTX ISA version 3.1"; ".param introduced in PTX ISA version 7.7"
    and "isspacep.param{::entry}/cvta.param{::entry} require sm_70"; ::cta (sm_30), ::cluster
    (sm_90) "introduced in PTX ISA version 7.8"; "::entry on .param introduced in PTX ISA version
    8.3"."""
    need = _Need((2, 0), 20)
    ss = form["ss"]
    _space_needs(need, ss)
    if ss == "const":
        need((3, 1))
    if ss in ("param", "param::entry"):
        need((7, 7), 70)
    return need.target


ISSPACEP_FAMILY = Family(
    opcode="isspacep",
    key="isspacep",
    section=ISSPACEP,
    slots=(Slot("ss", ADDRESS_SPACES, required=True),),
    # "The destination p has type .pred; the source address operand must be of type .u32 or
    # .u64": a 64-bit generic address here (.u32 in the 32-bit addressing mode of old).
    operands=lambda f: (Operand("p", "pred", destination=True), Operand("a", "u64")),
    target=_window_target,
    summary="Set p when the generic address a falls in the window of the state space.",
)


def _cvta(key: str, lead: tuple[Slot, ...], summary: str) -> Family:
    return Family(
        opcode="cvta",
        key=key,
        section=CVTA,
        slots=(*lead, Slot("ss", ADDRESS_SPACES, required=True), Slot("size", ("u32", "u64"), required=True)),
        # "The source and destination addresses must be the same size."
        operands=lambda f: (Operand("p", f["size"], destination=True), Operand("a", f["size"])),
        target=_window_target,
        summary=summary,
    )


CVTA_FAMILY = _cvta("cvta", (), "Convert an address of the state space to a generic address.")
CVTA_TO = _cvta("cvta.to", (Slot("to", ("to",), required=True),), "Convert a generic address to an address of the state space.")

# §9.7.9.20 "cvta.space.size p, var; // get generic address of var", "p, var+imm"; §9.7.9.23
# "mapa.shared::cluster.type d, sh + imm, b"; §9.7.9.24 "getctarank.shared::cluster.type d, var +
# imm": operand a may name a variable (its address) with an offset; cvta.to and the generic forms
# take a register only.
VARIABLE_OPERANDS["cvta"] = lambda f: frozenset() if f.get("to") else frozenset({"a"})
VARIABLE_OPERANDS["mapa"] = VARIABLE_OPERANDS["getctarank"] = lambda f: frozenset({"a"}) if f.get("ss") else frozenset()

CLUSTER_SPACE = Slot("ss", ("shared::cluster",))  # ".space = { .shared::cluster }"
ADDRESS_TYPE = Slot("type", ("u32", "u64"), required=True)  # ".type = { .u32, .u64 }"

MAPA_FAMILY = Family(
    opcode="mapa",
    key="mapa",
    section=MAPA,
    slots=(CLUSTER_SPACE, ADDRESS_TYPE),
    # "The instruction type .type indicates the type of the destination operand d and the source
    # operand a." "b is a 32-bit integer operand representing the rank of the target CTA."
    operands=lambda f: (Operand("d", f["type"], destination=True), Operand("a", f["type"]), Operand("b", "u32")),
    target=Target((7, 8), 90),  # "Introduced in PTX ISA version 7.8." "Requires sm_90 or higher."
    summary="Map the shared memory address a to the corresponding address in CTA b of the cluster.",
)

GETCTARANK_FAMILY = Family(
    opcode="getctarank",
    key="getctarank",
    section=GETCTARANK,
    slots=(CLUSTER_SPACE, ADDRESS_TYPE),
    # "The instruction type .type indicates the type of source operand a." "The destination d is
    # always a 32-bit register which holds the rank of the CTA."
    operands=lambda f: (Operand("d", "u32", destination=True), Operand("a", f["type"])),
    target=Target((7, 8), 90),
    summary="The rank of the CTA of the cluster whose shared memory holds the address a.",
)


# ---------------------------------------------------------------------------------------------
# Refusals of ld and st: the manual's words for the texts that no syntax line takes
# ---------------------------------------------------------------------------------------------

_ORDERINGS = ("weak", "volatile", "relaxed", "acquire", "release")


def explain_refusal(catalogue: Catalogue, text: str) -> tuple[str, str] | None:
    """The catalogue's :data:`~ptxspec.spec.catalogue.Explainer` of this chapter, for ld, ld.global.nc,
    ldu and st (their syntax lines split the qualifiers that may not meet, so a refused text would
    otherwise be blamed on whichever line matched furthest): two orderings, an ordering that the
    instruction does not have, a .vec that is not .v2 or .v4, a cache operator with an ordering
    other than .weak or with an eviction priority, and .mmio without .relaxed.sys. None for the
    other refusals (the family's own message stands)."""
    head = text.split()[0] if text.split() else ""
    opcode, *tokens = head.split(".")
    if opcode not in ("ld", "ldu", "st") or "async" in tokens or "bulk" in tokens:
        return None
    section = LD_NC if "nc" in tokens else {"ld": LD, "ldu": LDU, "st": ST}[opcode]
    orderings = [t for t in tokens if t in _ORDERINGS]
    own = {"ld": ("weak", "volatile", "relaxed", "acquire"), "st": ("weak", "volatile", "relaxed", "release"), "ldu": ()}[opcode]
    if len(orderings) > 1:
        listed = ", ".join("." + t for t in own)
        return f"{' and '.join('.' + t for t in orderings)} together: the {listed} qualifiers are mutually exclusive", section
    if orderings and orderings[0] not in own:
        if not own:
            return f".{orderings[0]} is not a qualifier of ldu (ldu{{.ss}}{{.vec}}.type)", section
        return f".{orderings[0]} is not an ordering of {opcode}: its lines are {opcode}{{.weak}}, {', '.join(f'{opcode}.' + t for t in own[1:])}", section
    for token in tokens:
        if token[:1] == "v" and token[1:].isdigit() and token not in VEC:
            return f'.{token}: ".vec = {{ .v2, .v4 }}" -- PTX ISA 8.7 has no .{token} for {opcode}', section
    cops = set(LD_COPS + ST_COPS)
    cop = next((t for t in tokens if t in cops), None)
    if cop is not None:
        if "mmio" in tokens or (orderings and orderings[0] != "weak"):
            ordering = "mmio" if "mmio" in tokens else orderings[0]
            return f'.{cop} with .{ordering}: "Cache operations are not permitted with these qualifiers" (.volatile, .relaxed, .{own[-1]})', section
        eviction = next((t for t in tokens if t in L1_EVICTION), None)
        if eviction is not None:
            return (
                f".{cop} and .{eviction}: a cache operator and an eviction priority are on different syntax lines (one of {{.cop}} or {{.level::eviction_priority}})",
                section,
            )
    if "mmio" in tokens:
        scope = next((t for t in tokens if t in SCOPES), None)
        if scope not in (None, "sys"):
            return f'.mmio.{scope}: "Only .sys thread scope is valid for {opcode}.mmio operation"', section
        if "relaxed" not in tokens or scope is None:
            return f'"The .mmio qualifier must be specified together with .relaxed" at .sys scope: {opcode}.mmio.relaxed.sys{{.global}}.type', section
    return None


FAMILIES: list[Family] = [
    LD_WEAK,
    LD_EVICTION,
    LD_VOLATILE,
    LD_RELAXED,
    LD_ACQUIRE,
    LD_MMIO,
    LD_NC_COP,
    LD_NC_EVICTION,
    LDU_FAMILY,
    ST_WEAK,
    ST_EVICTION,
    ST_VOLATILE,
    ST_RELAXED,
    ST_RELEASE,
    ST_MMIO,
    ST_ASYNC_WEAK,
    ST_ASYNC_RELEASE,
    ST_BULK_FAMILY,
    *MULTIMEM_FAMILIES,
    PREFETCH_FAMILY,
    PREFETCH_EVICTION,
    PREFETCHU,
    PREFETCH_TENSORMAP,
    APPLYPRIORITY_FAMILY,
    DISCARD_FAMILY,
    CREATEPOLICY_RANGE,
    CREATEPOLICY_FRACTIONAL,
    CREATEPOLICY_CVT,
    ISSPACEP_FAMILY,
    CVTA_FAMILY,
    CVTA_TO,
    MAPA_FAMILY,
    GETCTARANK_FAMILY,
]
