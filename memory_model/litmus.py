"""The ``.litmus`` text format for PTX (herd7 / Dat3M dialect): text in, a located AST out.

A test reads::

    PTX MP
    "an optional comment in double quotes"
    {
    x=0; y=0;                      (initial values of locations)
    P1:r0=0;                       (initial values of registers)
    s @ surface aliases x;         (a virtual alias of x used through the surface proxy)
    }
     P0@cta 0,gpu 0  | P1@cta 0,gpu 0       ;
     st.weak x, 1    | ld.acquire.gpu r0, y ;
     st.release.gpu y, 1 | ld.weak r1, x   ;
    exists (P1:r0 == 1 /\\ P1:r1 == 0)

The parser is written by hand (no parser generator): a small scanner produces tokens that know
their line and column, and a recursive-descent parser builds the frozen ``attrs`` classes below.
Every bad input raises :class:`~ptxspec.spec.errors.PtxSpecError` located at
``file:line:column`` with a message naming what was expected.

Instructions are the memory operations of §8.4 (``ld``, ``st``, ``atom``, ``red`` and their
texture/surface/constant forms of §9.7.10-§9.7.11: ``tld``, ``suld``, ``sust``, ``suatom``,
``sured``, ``cold``/``ldc``), the fences of §9.7.13.4 (``fence.sc``, ``fence.acq_rel``,
``membar``, ``fence.proxy``), the barriers of §9.7.13.1 and §9.7.13.3, and the control flow and
local arithmetic of the Dat3M dialect (labels ``LC00:``, ``goto``, ``beq``/``bne``/``blt``/
``bgt``/``ble``/``bge``, ``add``/``sub``/``mul``/``div``/``and``/``or``/``xor``/``mov`` on
registers and constants, and ``ld r0, 1`` which moves a constant).

Barrier operands (decided from the Dat3M corpus of PTX litmus tests). PTX writes ``bar{.cta}.sync a{, b}`` with ``a`` the barrier and ``b``
the thread count (§9.7.13.1). The litmus dialect reads the operand list as Dat3M does:

========================  ==========================================================
``bar.cta.sync a``        ``a`` is the barrier id
``bar.cta.sync a, b``     ``a`` is an instance number, ``b`` the barrier id
``bar.cta.sync a, b, c``  instance ``a``, barrier id ``b``, ``c`` threads (quorum)
========================  ==========================================================

The corpus decides the two-operand form: in ``SB+named-bar-sta-reg-const`` the barriers
``bar.cta.sync 1, r2`` (``r2`` loaded, 0 or 1) and ``bar.cta.sync 1, 1`` must synchronize when
``r2 == 1`` for the expected verdict, which holds only if the second operand is the barrier id;
the comments of the ``SB+named-bar-*`` tests say the same ("different ids"). The same reading
applies to every CTA-level spelling (``bar.sync``, ``bar.arrive``, ``barrier.sync``,
``barrier.cta.arrive`` ...), so one dialect has one meaning.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, NamedTuple

import attrs

from ptxspec.memory_model.program import (
    And,
    Compare,
    Condition,
    Constant,
    Formula,
    LocationTerm,
    Not,
    Or,
    RegisterTerm,
    Term,
    TrueFormula,
    WIDTH,
)
from ptxspec.spec.errors import Location, PtxSpecError

# ---- the AST -----------------------------------------------------------------------------------------


def _pos() -> int | None:
    """A position field (line or column): shown, but not part of equality (a round trip through
    text moves it). Typed as the attribute it defines, as ``attrs.field`` itself is."""
    return attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class Register:
    name: str


@attrs.frozen
class Immediate:
    value: int


@attrs.frozen
class Symbol:
    """A location (virtual address) or a label named by an operand."""

    name: str


@attrs.frozen
class TensorOperand:
    """``[tensorMap, {c0, ...}]``: a tensor map and the tensor coordinates of a tensor copy
    (§9.7.9.25.5.2)."""

    tensor_map: str
    coordinates: tuple[Register | Immediate, ...]


@attrs.frozen
class VectorOperand:
    """``{a, b, ...}``: a vector of registers or constants (im2colInfo, §9.7.9.25.5.2)."""

    values: tuple[Register | Immediate, ...]


@attrs.frozen
class LocationList:
    """``[{s0, s1, ...}]``: the dialect's spelling of a multicast operand, "the same CTA-relative
    offset ... in the shared memory of each destination CTA" (§9.7.9.25.4.1): litmus locations are
    not per CTA, so each destination CTA's instance is named, in increasing %cluster_ctarank."""

    names: tuple[str, ...]


Operand = Register | Immediate | Symbol | TensorOperand | LocationList | VectorOperand


@attrs.frozen
class Label:
    name: str
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class Jump:
    """``goto L``."""

    target: str
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


BRANCH_CONDITIONS = {"beq": "==", "bne": "!=", "blt": "<", "bgt": ">", "ble": "<=", "bge": ">="}
"""Conditional branches of the Dat3M dialect: compare two registers/constants, jump when true."""


@attrs.frozen
class Branch:
    opcode: str
    left: Register | Immediate
    right: Register | Immediate
    target: str
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


LOCAL_OPS = ("mov", "add", "sub", "mul", "div", "and", "or", "xor")


@attrs.frozen
class Local:
    """Register arithmetic: ``mov r0, 1`` (also written ``ld r0, 1``), ``add r0, r1, 2`` ..., and
    ``mbarrier.pending_count.b64 r1, r0`` (op ``pending_count``: §9.7.13.15.17 reads a register, the
    state an arrive returned, not the object)."""

    op: str
    dest: Register
    sources: tuple[Register | Immediate, ...]
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class Load:
    opcode: str
    """``ld``, ``tld``, ``suld``, ``cold`` or ``ldc``."""
    proxy: str
    order: str
    scope: str | None
    dest: Register
    address: str
    qualifiers: tuple[str, ...] = ()
    """State-space, type and other qualifiers kept as written (``.global``, ``.u32`` ...)."""
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class Store:
    opcode: str
    """``st`` or ``sust``."""
    proxy: str
    order: str
    scope: str | None
    address: str
    value: Register | Immediate
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


ATOMIC_OPS = ("add", "sub", "and", "or", "xor", "inc", "dec", "min", "max", "exch", "cas")
"""§9.7.13.5 ``.op`` plus ``sub``, which the Dat3M dialect adds (and the corpus uses)."""


@attrs.frozen
class Atomic:
    """``atom`` / ``red`` (and ``suatom`` / ``sured``): one read-modify-write (§9.7.13.5-6)."""

    opcode: str
    """``atom``, ``red``, ``suatom`` or ``sured``."""
    proxy: str
    order: str
    scope: str
    op: str
    dest: Register | None
    """``None`` for ``red`` (a reduction returns nothing)."""
    address: str
    operands: tuple[Register | Immediate, ...]
    """``b`` (and ``c`` for ``cas``)."""
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()

    @property
    def returns(self) -> bool:
        return self.dest is not None


@attrs.frozen
class Fence:
    """``fence{.sem}.scope`` (``.sc``, ``.acq_rel``, ``.acquire``, ``.release``), ``membar.level``,
    and the restricted fences ``fence.mbarrier_init.release.cluster`` and
    ``fence.{acquire,release}.sync_restrict::shared::{cluster,cta}.cluster`` (§9.7.13.4)."""

    sem: str
    scope: str
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    restrict: str | None = None
    """``mbarrier_init`` (``.op_restrict``), ``shared::cta`` or ``shared::cluster``
    (``.sync_restrict``); None for a fence without restriction."""


@attrs.frozen
class ProxyFence:
    """``fence.proxy.kind`` / ``membar.proxy.kind`` (§9.7.13.4, bi-directional), and the
    uni-directional ``fence.proxy.async::generic.{release,acquire}.sync_restrict::...cluster``
    (kind ``async::generic``, with its ``.sem``, scope and restriction)."""

    kind: str
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    sem: str | None = None
    scope: str | None = None
    restrict: str | None = None
    address: str | None = None
    """``fence.proxy.tensormap::generic.acquire.scope [addr], 128``: the tensor map whose range
    [addr, addr+127] the fence orders."""


@attrs.frozen
class BarrierOp:
    """A CTA barrier (§9.7.13.1) or a cluster barrier (§9.7.13.3).

    ``operands`` as written; :attr:`barrier_id`, :attr:`instance` and :attr:`quorum` read them as
    the litmus dialect does (see the module docstring). A cluster barrier has no operands.
    """

    level: str
    op: str
    operands: tuple[Register | Immediate, ...]
    dest: Register | None = None
    """``bar.red``: the destination register."""
    predicate: Register | Immediate | None = None
    """``bar.red``: the source predicate/value ``c``."""
    reduction: str | None = None
    """``bar.red``: ``popc``, ``and`` or ``or``."""
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()

    @property
    def barrier_id(self) -> Register | Immediate:
        if not self.operands:
            return Immediate(0)
        if len(self.operands) == 1:
            return self.operands[0]
        return self.operands[1]

    @property
    def instance(self) -> Register | Immediate | None:
        return self.operands[0] if len(self.operands) >= 2 else None

    @property
    def quorum(self) -> Register | Immediate | None:
        return self.operands[2] if len(self.operands) == 3 else None


MBARRIER_OPS = ("init", "inval", "expect_tx", "complete_tx", "arrive", "arrive_drop", "test_wait", "try_wait")
"""§9.7.13.15.9-16: the mbarrier instructions of the dialect on the object (``pending_count``,
§9.7.13.15.17, reads a state register: a :class:`Local`)."""


@attrs.frozen
class MbarrierOp:
    """An mbarrier instruction (§9.7.13.15): ``init`` and ``inval`` write the object,
    ``expect_tx``, ``complete_tx``, ``arrive`` and ``arrive_drop`` are read-modify-writes of it, and
    ``test_wait`` / ``try_wait`` read it. Their state transitions are
    :mod:`ptxspec.semantics.mbarrier`'s."""

    op: str
    order: str | None
    """``.release``/``.relaxed`` (arrive, arrive_drop), ``.acquire``/``.relaxed`` (the waits),
    ``.relaxed`` (expect_tx, complete_tx); None for init and inval (weak writes)."""
    scope: str | None
    """``.cta`` (the default) or ``.cluster``; None for init and inval."""
    dest: Register | None
    """The state token of an arrive, waitComplete of a wait; None for ``_`` and the others."""
    address: str
    operands: tuple[Register | Immediate, ...]
    """init: count; expect_tx/complete_tx: txCount; arrive: count or (``.expect_tx``) txCount;
    arrive_drop: count; the waits: the state token or (``.parity``) phaseParity."""
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()

    @property
    def proxy(self) -> str:
        return "generic"

    @property
    def returns(self) -> bool:
        return self.dest is not None


@attrs.frozen
class BulkCopy:
    """``cp.async.bulk.dst.src.completion [dstMem], [srcMem], size{, [mbar]}`` (§9.7.9.25.4.1) and
    ``cp.reduce.async.bulk.dst.src.completion.redOp.type [dstMem], [srcMem], size{, [mbar]}``
    (§9.7.9.25.4.2): an asynchronous copy (or reduction), performed in the async proxy, whose
    completion is a complete-tx of ``size`` on the mbarrier ``mbar`` (``.mbarrier::complete_tx::bytes``)
    or the bulk async-group it is committed to (``.bulk_group``, ``mbar`` None). A litmus location is
    one value: the copy reads ``src`` and writes what it read to ``dst``; the reduction combines it
    with ``dst`` by ``reduce_op``."""

    dst: str
    src: str
    size: Register | Immediate
    mbar: str | None
    qualifiers: tuple[str, ...] = ()
    """dst and src state spaces, the completion mechanism, then (a reduction) redOp and type."""
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    reduce_op: str | None = None
    """The ``.redOp`` of cp.reduce.async.bulk; None for a copy."""
    multicast: tuple[tuple[str, str], ...] = ()
    """``.multicast::cluster``: per destination CTA (in increasing rank, one per bit of
    ``cta_mask``) the instance of dstMem and of mbar it writes and signals; empty without."""
    cta_mask: int | None = None
    cache_policy: Register | Immediate | None = None
    """``.L2::cache_hint``'s cache-policy operand: "a hint to the cache subsystem ... It does not change
    the memory consistency behavior of the program" (no effect here)."""


@attrs.frozen
class AsyncStore:
    """``st.async`` (§9.7.9.12) and ``red.async`` (§9.7.13.7): a store or reduction performed
    asynchronously. The ``.weak`` st.async / ``.relaxed`` red.async to ``.shared::cluster``
    complete with a complete-tx on ``mbar`` (of the bytes stored); the ``.release`` forms to
    ``.global`` have no completion mechanism ("the completion of the store is synchronized with the
    end of the CTA")."""

    opcode: str
    """``st`` or ``red``."""
    order: str
    scope: str | None
    address: str
    value: Register | Immediate
    mbar: str | None
    reduce_op: str | None = None
    qualifiers: tuple[str, ...] = ()
    """The state space, completion mechanism, vector and type qualifiers as written."""
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()

    @property
    def bytes(self) -> int:
        """The amount of data stored, the complete-tx's completeCount."""
        width = next(int(q[1:]) for q in self.qualifiers if q[:1] in "bsuf" and q[1:].isdigit())
        vector = next((int(q[1:]) for q in self.qualifiers if q in ("v2", "v4")), 1)
        return width // 8 * vector


TCGEN05_OPS = ("ld", "st", "cp", "mma", "shift", "commit", "fence::before_thread_sync", "fence::after_thread_sync", "wait::ld", "wait::st")
"""§9.7.16: the tcgen05 instructions of the dialect (Tensor Memory and shared memory as litmus
locations of one value each)."""


@attrs.frozen
class Tcgen05Op:
    """A tcgen05 instruction (§9.7.16) as the dialect reads it: ``ld r, [t]``, ``st [t], r``,
    ``cp [t], [s]`` (the shared memory descriptor written as the location it points to),
    ``mma [d], [a], [b], enable-input-d`` (the descriptors as the locations of A and B, no
    instruction descriptor: D = A * B + (enable-input-d ? D : 0) over one element), ``shift
    [t], [u]`` (§9.7.16.9.3: the element ``t`` of a row the shift overwrites and the element
    ``u`` of the adjacent row whose value it takes -- a litmus location is one element, so the
    dialect names both), ``commit [mbar]``, and the synchronous ``fence::before_thread_sync``, ``fence::after_thread_sync``,
    ``wait::ld``, ``wait::st``."""

    op: str
    dest: Register | None
    addresses: tuple[str, ...]
    """ld: (t,); st: (t,); cp: (t, s); mma: (d, a, b); shift: (t, u); commit: (mbar,) or one per
    destination CTA; the others: ()."""
    values: tuple[Register | Immediate, ...]
    """st: (r,); mma: (enable-input-d,); the others: ()."""
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()

    @property
    def cta_group(self) -> str:
        """``1`` or ``2`` from ``.cta_group::N`` (cp, mma, shift, commit), else ``""``."""
        return next((q.split("::")[1] for q in self.qualifiers if q.startswith("cta_group::")), "")


@attrs.frozen
class AsyncCopy:
    """``cp.async.ca|cg.shared{::cta}.global [dst], [src], cp-size{, src-size}`` (§9.7.9.25.3.1): a
    copy performed asynchronously, "treated as a weak memory operation", whose completion a
    ``cp.async.wait_group`` / ``wait_all`` of its thread, or a ``cp.async.mbarrier.arrive``, tracks.
    With ``src-size`` "the remaining bytes of cp-size are filled with zero": the copy writes the low
    src-size bytes of what it read (none read when src-size is 0)."""

    dst: str
    src: str
    size: Register | Immediate
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    src_size: Register | Immediate | None = None
    cache_policy: Register | Immediate | None = None
    """As :attr:`BulkCopy.cache_policy`."""


@attrs.frozen
class AsyncGroup:
    """The async-group instructions (§9.7.9.25.1.1), by ``kind`` of group: ``cp.async``:
    ``cp.async.commit_group`` (§9.7.9.25.3.2), ``cp.async.wait_group N``, ``cp.async.wait_all``
    (§9.7.9.25.3.3); ``bulk``: ``cp.async.bulk.commit_group``, ``cp.async.bulk.wait_group{.read} N``
    (§9.7.9.25.6); ``wgmma``: ``wgmma.commit_group.sync.aligned``, ``wgmma.wait_group.sync.aligned N``
    (§9.7.15.7.2-3). Each kind is a separate sequence of groups ("the executing thread must create
    separate async-groups for bulk and non-bulk asynchronous operations")."""

    op: str
    """``commit_group``, ``wait_group`` or ``wait_all``."""
    pending: int | None = None
    """wait_group's N: the most recent groups that may still be pending."""
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    kind: str = "cp.async"
    read: bool = False
    """``cp.async.bulk.wait_group.read``: waits only until the source reads are done."""


@attrs.frozen
class WgmmaOp:
    """``wgmma.fence.sync.aligned`` (§9.7.15.7.1) and, as the dialect reads it,
    ``wgmma.mma_async.sync.aligned.shape.dtype.atype.btype rD, [a], [b], scale-d`` (§9.7.15.5.2):
    the shared memory descriptors written as the locations of A and B, the accumulator as one
    register: D = A * B + (scale-d ? D : 0) over one element, read in the async proxy."""

    op: str
    """``fence`` or ``mma_async``."""
    dest: Register | None = None
    addresses: tuple[str, ...] = ()
    scale_d: Register | Immediate | None = None
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class AsyncArrive:
    """``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]`` (§9.7.13.15.15): "causes an
    arrive-on operation to be triggered by the system on the mbarrier object upon the completion of
    all prior cp.async operations initiated by the executing thread"; without ``.noinc`` "the
    pending count of the mbarrier object is incremented by 1 prior to the asynchronous arrive-on
    operation"."""

    mbar: str
    noinc: bool
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class TensorCopy:
    """``cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion [dstMem], [tensorMap, coords], [mbar]``,
    ``cp.async.bulk.tensor.dim.global.shared::cta{.load_mode}.bulk_group [tensorMap, coords], [srcMem]``
    (§9.7.9.25.5.2) and ``cp.reduce.async.bulk.tensor.dim.global.shared::cta.redOp{.load_mode}.bulk_group
    [tensorMap, coords], [srcMem]`` (§9.7.9.25.5.3). "tensorMap is accessed in the tensormap proxy"; the
    tensor it describes is the location its value points to (the dialect's tensor map holds one field,
    the global address, :class:`TensormapOp`). A litmus tensor is one location: the box of a copy is
    that location, counted as :data:`TENSOR_BOX_BYTES` bytes by the complete-tx."""

    tensor_map: str
    coordinates: tuple[Register | Immediate, ...]
    shared: str
    """dstMem of a copy into shared memory, srcMem of a copy (or reduction) into global memory."""
    mbar: str | None
    qualifiers: tuple[str, ...] = ()
    """.dim, .dst, .src, then .load_mode, the completion mechanism and (a reduction) .redOp."""
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    reduce_op: str | None = None
    multicast: tuple[tuple[str, str], ...] = ()
    """As :attr:`BulkCopy.multicast`."""
    cta_mask: int | None = None
    im2col_info: tuple[Register | Immediate, ...] = ()
    """The im2colInfo vector of the im2col load modes (which elements move: no value effect on a
    one-location tensor)."""
    cache_policy: Register | Immediate | None = None
    """As :attr:`BulkCopy.cache_policy`."""

    @property
    def to_global(self) -> bool:
        """A copy from shared::cta into the tensor (the .bulk_group forms)."""
        return self.qualifiers[1] == "global"


@attrs.frozen
class TensormapOp:
    """``tensormap.replace.tile.global_address{.ss}.b1024.b64 [addr], new_val`` (§9.7.9.26), "treated as
    a weak memory operation on the entire 1024-bit opaque tensor-map object" in the generic proxy, with
    ``new_val`` written as the location whose address it is; and
    ``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst],
    [src], 128`` (§9.7.13.16): a generic copy of the tensor map at ``src`` to ``dst``, then a
    uni-directional release proxy fence from the generic to the tensormap proxy at ``scope``."""

    op: str
    """``replace`` or ``cp_fenceproxy``."""
    address: str
    """The tensor map written (replace's addr, cp_fenceproxy's dst)."""
    source: str
    """replace: the location whose address is the new global address; cp_fenceproxy: src."""
    qualifiers: tuple[str, ...] = ()
    text: str = attrs.field(default="", eq=False)
    line: int | None = _pos()
    column: int | None = _pos()
    scope: str | None = None
    """cp_fenceproxy's .scope."""


Instruction = (
    Label
    | Jump
    | Branch
    | Local
    | Load
    | Store
    | Atomic
    | Fence
    | ProxyFence
    | BarrierOp
    | MbarrierOp
    | BulkCopy
    | Tcgen05Op
    | AsyncCopy
    | AsyncGroup
    | AsyncArrive
    | AsyncStore
    | WgmmaOp
    | TensorCopy
    | TensormapOp
)


@attrs.frozen
class LocationInit:
    """``x = 0`` (``value`` an int) or ``x = &y`` (``pointer`` a location name)."""

    name: str
    value: int | None = None
    pointer: str | None = None
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class RegisterInit:
    """``P0:r0 = 0`` or ``P0:r1 = &x``."""

    thread: int
    register: str
    value: int | None = None
    pointer: str | None = None
    line: int | None = _pos()
    column: int | None = _pos()


ALIAS_PROXIES = ("generic", "surface", "texture", "constant")


@attrs.frozen
class AliasDecl:
    """``y @ generic aliases x``: ``y`` is another virtual address of ``x``'s memory (§8.2.2)."""

    name: str
    proxy: str
    target: str
    line: int | None = _pos()
    column: int | None = _pos()


InitEntry = LocationInit | RegisterInit | AliasDecl


@attrs.frozen
class ThreadDecl:
    """``P0@cta 0,gpu 0`` (a cluster coordinate ``cluster N`` may be given too)."""

    index: int
    name: str
    cta: int = 0
    gpu: int = 0
    cluster: int | None = None
    line: int | None = _pos()
    column: int | None = _pos()


@attrs.frozen
class LitmusTest:
    arch: str
    name: str
    comments: tuple[str, ...]
    init: tuple[InitEntry, ...]
    threads: tuple[ThreadDecl, ...]
    code: tuple[tuple[Instruction, ...], ...]
    """Per thread, its instructions in order (empty cells dropped)."""
    condition: Condition
    locations: tuple[Term, ...] = ()
    source: str = attrs.field(default="<string>", eq=False)

    def locations_used(self) -> tuple[str, ...]:
        """Every location name the test mentions, in order of first appearance."""
        seen: dict[str, None] = {}
        for entry in self.init:
            if isinstance(entry, (LocationInit, AliasDecl)):
                seen.setdefault(entry.name, None)
                if isinstance(entry, LocationInit) and entry.pointer is not None:
                    seen.setdefault(entry.pointer, None)
                if isinstance(entry, AliasDecl):
                    seen.setdefault(entry.target, None)
        for thread in self.code:
            for ins in thread:
                for name in _locations_named(ins):
                    seen.setdefault(name, None)
        return tuple(seen)


# ---- the scanner -------------------------------------------------------------------------------------


class Token(NamedTuple):
    """One token (a named tuple: the scanner makes one per word of the text, so it stays cheap)."""

    kind: str
    """``name``, ``num``, ``str``, ``punct``, ``other`` or ``eof``."""
    text: str
    line: int
    column: int
    offset: int
    end: int


_PUNCT = (
    "/\\",
    "\\/",
    "==",
    "!=",
    "::",
    "{",
    "}",
    ";",
    "|",
    ",",
    ":",
    "=",
    "@",
    "&",
    "(",
    ")",
    "[",
    "]",
    ".",
    "~",
    "-",
    "+",
    "!",
    "<",
    ">",
    "*",
    "/",
    "\\",
    "#",
    "'",
    "?",
    "^",
    "$",
)
_TOKEN = re.compile(
    r"[ \t\r\n\f\v]*(?:"  # blanks before a token are part of its match
    r"(?P<comment>\(\*(?:.*?\*\)|.*))"  # to the first '*)'; without one, to the end (an error)
    r"|(?P<line_comment>//[^\n]*)"
    r'|(?P<str>"[^"]*"?)'  # without its closing quote: an error
    r"|(?P<name>[A-Za-z_%][A-Za-z0-9_]*)"
    r"|(?P<num>0[xX][0-9a-fA-F]+|[0-9]+)"
    r"|(?P<punct>" + "|".join(re.escape(p) for p in _PUNCT) + ")"
    r"|(?P<other>[^ \t\r\n\f\v]))",  # trailing blanks match nothing
    re.DOTALL,
)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """The line and column of ``offset`` (counts from the start: for one-off use, not per token)."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _where(text: str, source: str, offset: int) -> Location:
    """The place of ``offset`` (counts from the start: for one-off use, not per token)."""
    return Location(source, *_line_column(text, offset))


class Scanner:
    """Splits text into tokens, skipping blanks, ``(* ... *)`` and ``// ...`` comments.

    The line and column are kept up to date as the scan moves (the line breaks of each stretch of
    text are counted once, when the scan passes over it), so scanning is linear in the size of the
    text.
    """

    def __init__(self, text: str, source: str, start: int = 0):
        self.text = text
        self.source = source
        line, column = _line_column(text, start)
        self.line, self.line_start = line, start - column + 1
        self.tokens = list(self._scan(start))

    def _pass(self, i: int, j: int) -> None:
        """Count the line breaks of ``text[i:j]``, which the scan has just passed over."""
        if breaks := self.text.count("\n", i, j):
            self.line += breaks
            self.line_start = self.text.rfind("\n", i, j) + 1

    def _scan(self, start: int) -> Iterator[Token]:
        end = start
        for m in _TOKEN.finditer(self.text, start):
            kind = m.lastgroup
            assert kind is not None, "every alternative of _TOKEN is a named group"
            i, end = m.start(kind), m.end()
            self._pass(m.start(), i)
            column = i - self.line_start + 1
            if kind in ("str", "comment"):
                self._check_closed(kind, m.group(kind), column)
            if kind == "str":
                yield Token(kind, m.group(kind)[1:-1], self.line, column, i, end)
            elif kind != "comment" and kind != "line_comment":
                yield Token(kind, m.group(kind), self.line, column, i, end)
            self._pass(i, end)
        n = len(self.text)
        self._pass(end, n)
        yield Token("eof", "", self.line, n - self.line_start + 1, n, n)

    def _check_closed(self, kind: str, text: str, column: int) -> None:
        """A string ends with '"' and a comment with '*)' (the token pattern runs an unclosed one to
        the end of the text)."""
        where = Location(self.source, self.line, column)
        if kind == "str" and (len(text) < 2 or not text.endswith('"')):
            raise PtxSpecError("unterminated string: expected a closing '\"'", where=where)
        if kind == "comment" and (len(text) < 4 or not text.endswith("*)")):
            raise PtxSpecError("unterminated comment '(*': expected '*)'", where=where)


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "end of input"
    if tok.kind == "str":
        return "a string"
    return _quoted(tok.text)


def _quoted(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message, cut after ``limit`` characters (a token may be huge)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def _numeral(text: str, bits: int) -> int | None:
    """The value of a numeral (decimal, or hexadecimal after ``0x``), or None when it needs more
    than ``bits`` bits. The digits are counted before any conversion: Python refuses to convert
    more than 4300 decimal digits, and a long numeral could not fit anyway."""
    hexadecimal = text[:2] in ("0x", "0X")
    digits = (text[2:] if hexadecimal else text).lstrip("0") or "0"
    if len(digits) > (len(f"{(1 << bits) - 1:x}") if hexadecimal else len(str((1 << bits) - 1))):
        return None
    value = int(digits, 16 if hexadecimal else 10)
    return value if value < 1 << bits else None


_REGISTER = re.compile(r"(r[0-9]+|%[A-Za-z_][A-Za-z0-9_]*)$")
_THREAD = re.compile(r"P([0-9]+)$")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")

SCOPES = ("cta", "cluster", "gpu", "sys")
_MEMBAR_LEVELS = {"cta": "cta", "gl": "gpu", "sys": "sys"}
_STATE_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "generic")
_TYPES = tuple(f"{k}{w}" for k in "bus" for w in (8, 16, 32, 64)) + ("b128", "f32", "f64", "pred")
_CONDITION_START = ("exists", "forall", "locations", "filter", "~")
MAX_NESTING = 100
"""Deepest nesting of '(' and '~' in a condition (herd's tests use a handful of levels)."""


def is_register(name: str) -> bool:
    return bool(_REGISTER.match(name))


class Parser:
    def __init__(self, text: str, source: str = "<string>"):
        self.text = text
        self.source = source
        arch, name, start = self._header()
        self.arch = arch
        self.name = name
        self.scanner = Scanner(text, source, start)
        self.toks = self.scanner.tokens
        self.i = 0
        self.condition_locations: list[Token] = []

    # -- helpers

    def _header(self) -> tuple[str, str, int]:
        offset = 0
        for raw in self.text.splitlines(keepends=True):
            line = raw.strip()
            if line:
                parts = line.split(None, 1)
                where = _where(self.text, self.source, offset + raw.index(parts[0]))
                if parts[0].upper() != "PTX":
                    raise PtxSpecError(f"expected the architecture 'PTX' at the start of the test, found {_quoted(parts[0])}", where=where)
                if len(parts) < 2:
                    raise PtxSpecError("expected a test name after 'PTX'", where=where)
                return parts[0], parts[1].strip(), offset + len(raw)
            offset += len(raw)
        raise PtxSpecError("empty test: expected 'PTX <name>'", where=Location(self.source, 1, 1))

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def at(self, text: str, kind: str | None = None) -> bool:
        tok = self.tok
        return tok.text == text and tok.kind != "str" and (kind is None or tok.kind == kind)

    def loc(self, tok: Token | None = None) -> Location:
        tok = tok or self.tok
        return Location(self.source, tok.line, tok.column)

    def fail(self, expected: str, tok: Token | None = None) -> PtxSpecError:
        tok = tok or self.tok
        return PtxSpecError(f"expected {expected}, found {_describe(tok)}", where=self.loc(tok))

    def error(self, message: str, tok: Token | None = None, line: int | None = None, column: int | None = None):
        if tok is not None:
            where = self.loc(tok)
        else:
            where = Location(self.source, line, column)
        return PtxSpecError(message, where=where)

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            raise self.fail(what or repr(text))
        return self.advance()

    def expect_name(self, what: str) -> Token:
        if self.tok.kind != "name":
            raise self.fail(what)
        return self.advance()

    def integer(self, what: str = "an integer") -> int:
        """An optionally signed numeral, a 64-bit value: from -2**63 to 2**64 - 1 (§8's litmus
        values are 64-bit; a negative one is its two's complement)."""
        first = self.tok
        sign = 1
        if self.at("-", "punct"):
            self.advance()
            sign = -1
        elif self.at("+", "punct"):
            self.advance()
        if self.tok.kind != "num":
            raise self.fail(what)
        text = self.advance().text
        value = _numeral(text, WIDTH)
        if value is None or sign * value < -(1 << (WIDTH - 1)):
            numeral = "-" + text if sign < 0 else text
            raise self.error(f"integer {_quoted(numeral)} does not fit in {WIDTH} bits (a litmus value is from -2**63 to 2**64 - 1)", first)
        return sign * value

    def source_text(self, first: Token, last: Token) -> str:
        return " ".join(self.text[first.offset : last.end].split())

    # -- the test

    def parse(self) -> LitmusTest:
        comments: list[str] = []
        stray: Token | None = None
        while not self.at("{", "punct"):
            if self.tok.kind == "eof":
                raise self.fail("'{' to open the initial state", stray)
            tok = self.advance()
            if tok.kind == "str":
                comments.append(tok.text)
            elif stray is None:
                stray = tok  # herd and Dat3M skip what precedes '{'; name it if '{' never comes
        init = self.init_section()
        threads = self.thread_header()
        code = self.rows(threads)
        locations: tuple[Term, ...] = ()
        if self.at("locations", "name"):
            locations = self.locations_line(len(threads))
        if self.at("filter", "name"):
            raise self.error("'filter' conditions are not supported", self.tok)
        if self.tok.kind == "eof":
            condition = Condition("exists", TrueFormula(), "")
        else:
            condition = self.condition(len(threads))
        if self.tok.kind != "eof":
            raise self.fail("end of input after the condition")
        test = LitmusTest(
            arch=self.arch,
            name=self.name,
            comments=tuple(comments),
            init=tuple(init),
            threads=tuple(threads),
            code=code,
            condition=condition,
            locations=locations,
            source=self.source,
        )
        _check(test, self)
        return test

    # -- { init }

    def init_section(self) -> list[InitEntry]:
        self.expect("{")
        entries: list[InitEntry] = []
        while not self.at("}", "punct"):
            if self.at(";", "punct"):
                self.advance()
                continue
            entries.append(self.init_entry())
            if not (self.at(";", "punct") or self.at("}", "punct")):
                raise self.fail("';' or '}' after an initial-state entry")
        self.advance()
        if self.at(";", "punct"):
            self.advance()
        return entries

    def thread_register(self, nthreads: int | None = None) -> tuple[int, str] | None:
        """``P1:r0`` (or ``1:r0``): the thread's index and the register, consumed; None, with
        nothing consumed, when the next tokens are not a thread and ':'. With ``nthreads``, a
        thread the test does not have is an error."""
        tok = self.tok
        if not (self.peek().text == ":" and self.peek().kind == "punct"):
            return None
        m = _THREAD.match(tok.text) if tok.kind == "name" else None
        if tok.kind != "num" and not m:
            return None
        digits = m.group(1) if m else tok.text
        if not digits.isdigit():
            raise self.error(f"a thread index is decimal ('1' or 'P1'), found {_quoted(tok.text)}", tok)
        index = _numeral(digits, 31)
        if index is None or (nthreads is not None and index >= nthreads):
            where = "" if nthreads is None else f" in the condition (the test has {nthreads})"
            raise self.error(f"unknown thread {_quoted(tok.text)}{where}", tok)
        self.advance()
        self.advance()
        reg = self.expect_name("a register after ':'")
        if not is_register(reg.text):
            raise self.error(f"expected a register (r0, r1, ...), found {_quoted(reg.text)}", reg)
        return index, reg.text

    def init_entry(self) -> InitEntry:
        first = self.tok
        found = self.thread_register()
        if found is not None:
            self.expect("=", "'=' after the register")
            value, pointer = self.init_value()
            return RegisterInit(*found, value, pointer, first.line, first.column)
        name = self.expect_name("a location, a register 'P0:r0' or '}'")
        if self.at("@", "punct"):
            self.advance()
            proxy = self.expect_name("a proxy: generic, surface, texture or constant")
            if proxy.text not in ALIAS_PROXIES:
                raise self.error(f"expected a proxy: generic, surface, texture or constant, found {_quoted(proxy.text)}", proxy)
            if not self.at("aliases", "name"):
                raise self.fail("'aliases'")
            self.advance()
            target = self.expect_name("the aliased location")
            return AliasDecl(name.text, proxy.text, target.text, name.line, name.column)
        if is_register(name.text):
            raise self.error(f"register {_quoted(name.text)} needs its thread: write 'P0:{name.text}'", name)
        self.expect("=", "'=' or '@' after the location")
        value, pointer = self.init_value()
        return LocationInit(name.text, value, pointer, name.line, name.column)

    def init_value(self) -> tuple[int | None, str | None]:
        if self.at("&", "punct"):
            self.advance()
            return None, self.expect_name("a location after '&'").text
        if self.tok.kind == "name":
            return None, self.advance().text
        return self.integer("an integer, '&location' or a location"), None

    # -- P0@cta 0,gpu 0 | ... ;

    def thread_header(self) -> list[ThreadDecl]:
        threads: list[ThreadDecl] = []
        while True:
            tok = self.tok
            m = _THREAD.match(tok.text) if tok.kind == "name" else None
            if not m:
                raise self.fail(f"thread P{len(threads)} in the thread header")
            if _numeral(m.group(1), 31) != len(threads):
                raise self.error(f"expected thread P{len(threads)} in column {len(threads) + 1}, found {_quoted(tok.text)}", tok)
            self.advance()
            coords: dict[str, int] = {}
            if self.at("@", "punct"):
                self.advance()
                while True:
                    key = self.expect_name("'cta', 'cluster' or 'gpu'")
                    if key.text not in ("cta", "cluster", "gpu"):
                        raise self.error(f"expected 'cta', 'cluster' or 'gpu', found {_quoted(key.text)}", key)
                    if key.text in coords:
                        raise self.error(f"{key.text} given twice for {tok.text}", key)
                    coords[key.text] = self.integer(f"the {key.text} number")
                    if not self.at(",", "punct"):
                        break
                    self.advance()
                if "cta" not in coords:
                    raise self.error(f"thread {tok.text} needs a CTA: 'cta N'", tok)
            threads.append(ThreadDecl(len(threads), tok.text, coords.get("cta", 0), coords.get("gpu", 0), coords.get("cluster"), tok.line, tok.column))
            if self.at("|", "punct"):
                self.advance()
                continue
            if self.at(";", "punct"):
                self.advance()
                return threads
            raise self.fail("'|' or ';' in the thread header")

    # -- instruction rows

    def at_condition(self) -> bool:
        tok = self.tok
        return tok.kind == "eof" or (tok.kind in ("name", "punct") and tok.text in _CONDITION_START)

    def rows(self, threads: list[ThreadDecl]) -> tuple[tuple[Instruction, ...], ...]:
        code: list[list[Instruction]] = [[] for _ in threads]
        while not self.at_condition():
            row_start = self.tok
            column = 0
            while True:
                if column >= len(threads):
                    raise self.error(
                        f"row has more than {len(threads)} column(s): the header declares {len(threads)} thread(s)",
                        self.tok,
                    )
                code[column].extend(self.cell())
                column += 1
                if self.at("|", "punct"):
                    self.advance()
                    continue
                if self.at(";", "punct"):
                    break
                raise self.fail("';' or '|' after instruction")
            if column != len(threads):
                raise self.error(f"row has {column} column(s), expected {len(threads)} (one per thread)", row_start)
            self.advance()
        return tuple(tuple(c) for c in code)

    def cell(self) -> list[Instruction]:
        out: list[Instruction] = []
        if self.at("|", "punct") or self.at(";", "punct"):
            return out
        tok = self.tok
        if tok.kind == "name" and self.peek().text == ":" and self.peek().kind == "punct":
            self.advance()
            self.advance()
            out.append(Label(tok.text, f"{tok.text}:", tok.line, tok.column))
            if self.at("|", "punct") or self.at(";", "punct"):
                return out
        out.append(self.instruction())
        return out

    def opcode(self) -> tuple[list[tuple[str, Token]], Token]:
        first = self.expect_name("an instruction")
        parts = [(first.text, first)]
        last = first
        while self.at(".", "punct") and self.tok.offset == last.end:
            self.advance()
            q = self.tok
            if q.kind not in ("name", "num"):
                raise self.fail("a qualifier after '.'")
            self.advance()
            text = q.text
            last = q
            while self.tok.kind in ("name", "num") and self.tok.offset == last.end:  # a shape such as 32x32b: a number then a name
                text += self.tok.text
                last = self.tok
                self.advance()
            while self.at("::", "punct") and self.tok.offset == last.end:
                self.advance()
                nxt = self.tok
                if nxt.kind not in ("name", "num"):
                    raise self.fail("a name after '::'")
                self.advance()
                text += "::" + nxt.text
                last = nxt
                while self.tok.kind in ("name", "num") and self.tok.offset == last.end:  # L2::128B: a number then a name
                    text += self.tok.text
                    last = self.tok
                    self.advance()
            parts.append((text, q))
        return parts, last

    def operand(self) -> tuple[Operand, Token]:
        tok = self.tok
        if self.at("[", "punct"):
            self.advance()
            if self.at("{", "punct"):  # [{s0, s1}]: one location per destination CTA of a multicast
                self.advance()
                names = [self.expect_name("a location in '[{ }]'").text]
                while self.at(",", "punct"):
                    self.advance()
                    names.append(self.expect_name("a location in '[{ }]'").text)
                self.expect("}", "'}' after the locations")
                self.expect("]", "']'")
                return LocationList(tuple(names)), tok
            name = self.expect_name("a location inside '[ ]'")
            if self.at(",", "punct"):  # [tensorMap, {c0, ...}] of a tensor copy
                self.advance()
                self.expect("{", "'{' before the tensor coordinates")
                coordinates = self.values_until("}")
                self.expect("]", "']'")
                return TensorOperand(name.text, coordinates), tok
            self.expect("]", "']'")
            return Symbol(name.text), tok
        if self.at("&", "punct"):
            self.advance()
            name = self.expect_name("a location after '&'")
            return Symbol(name.text), tok
        if self.at("{", "punct"):  # {a, b}: a vector operand (im2colInfo)
            self.advance()
            return VectorOperand(self.values_until("}")), tok
        if tok.kind == "name":
            self.advance()
            return (Register(tok.text) if is_register(tok.text) else Symbol(tok.text)), tok
        if tok.kind == "num" or self.at("-", "punct") or self.at("+", "punct"):
            return Immediate(self.integer("an operand")), tok
        raise self.fail("an operand (a register, a location or a constant)")

    def values_until(self, close: str) -> tuple[Register | Immediate, ...]:
        """``a, b, ...`` then ``close``: registers or constants (after an opening brace)."""
        values: list[Register | Immediate] = []
        while True:
            tok = self.tok
            value = self.operand()[0]
            if not isinstance(value, (Register, Immediate)):
                raise self.error(f"expected a register or a constant in '{{ }}', found {_quoted(tok.text)}", tok)
            values.append(value)
            if not self.at(",", "punct"):
                break
            self.advance()
        self.expect(close, f"'{close}' after the values")
        return tuple(values)

    def instruction(self) -> Instruction:
        first = self.tok
        parts, last = self.opcode()
        operands: list[tuple[Operand, Token]] = []
        if not (self.at("|", "punct") or self.at(";", "punct")) and not self.at_condition():
            while True:
                operands.append(self.operand())
                last = self.toks[self.i - 1]
                if not self.at(",", "punct"):
                    break
                self.advance()
        text = self.source_text(first, last)
        return _build(self, parts, operands, text, first)

    # -- locations [...] and the condition

    def term(self, nthreads: int) -> Term:
        tok = self.tok
        found = self.thread_register(nthreads)
        if found is not None:
            return RegisterTerm(*found)
        if self.at("[", "punct"):
            self.advance()
            name = self.expect_name("a location inside '[ ]'")
            self.expect("]", "']'")
            self.condition_locations.append(name)
            return LocationTerm(name.text)
        if tok.kind == "name":
            if is_register(tok.text):
                raise self.error(f"register {_quoted(tok.text)} needs its thread: write 'P0:{tok.text}'", tok)
            self.advance()
            self.condition_locations.append(tok)
            return LocationTerm(tok.text)
        if tok.kind == "num" or self.at("-", "punct"):
            return Constant(self.integer("a value"))
        raise self.fail("a register 'P0:r0', a location or a constant")

    def locations_line(self, nthreads: int) -> tuple[Term, ...]:
        self.advance()
        self.expect("[", "'[' after 'locations'")
        terms: list[Term] = []
        while not self.at("]", "punct"):
            if self.at(";", "punct"):
                self.advance()
                continue
            term = self.term(nthreads)
            if isinstance(term, Constant):
                raise self.error("expected a register or a location in 'locations', found a constant", self.toks[self.i - 1])
            terms.append(term)
            if not (self.at(";", "punct") or self.at("]", "punct")):
                raise self.fail("';' or ']' in 'locations'")
        self.advance()
        return tuple(terms)

    def condition(self, nthreads: int) -> Condition:
        if self.at("~", "punct"):
            self.advance()
            if not self.at("exists", "name"):
                raise self.fail("'exists' after '~'")
            self.advance()
            quantifier = "~exists"
        elif self.at("exists", "name") or self.at("forall", "name"):
            quantifier = self.advance().text
        else:
            raise self.fail("'exists', '~exists' or 'forall'")
        body_start = self.tok
        formula = self.disjunction(nthreads)
        last = self.toks[self.i - 1]
        if self.at(";", "punct"):
            self.advance()
        text = f"{quantifier} {self.source_text(body_start, last)}" if last.offset >= body_start.offset else quantifier
        return Condition(quantifier, formula, text)

    def disjunction(self, nthreads: int, depth: int = 0) -> Formula:
        items = [self.conjunction(nthreads, depth)]
        while self.at("\\/", "punct"):
            self.advance()
            items.append(self.conjunction(nthreads, depth))
        return items[0] if len(items) == 1 else Or(tuple(items))

    def conjunction(self, nthreads: int, depth: int) -> Formula:
        items = [self.unary(nthreads, depth)]
        while self.at("/\\", "punct"):
            self.advance()
            items.append(self.unary(nthreads, depth))
        return items[0] if len(items) == 1 else And(tuple(items))

    def deeper(self, depth: int) -> int:
        """One more level of '(' or '~': at most :data:`MAX_NESTING`, so that neither this
        recursive parser nor the engines that walk the formula run out of stack."""
        if depth >= MAX_NESTING:
            raise self.error(f"the condition nests more than {MAX_NESTING} deep ('(', '~' or '!')", self.tok)
        return depth + 1

    def unary(self, nthreads: int, depth: int) -> Formula:
        if self.at("~", "punct") or self.at("!", "punct"):
            depth = self.deeper(depth)
            self.advance()
            return Not(self.unary(nthreads, depth))
        if self.at("(", "punct"):
            depth = self.deeper(depth)
            self.advance()
            inner = self.disjunction(nthreads, depth)
            self.expect(")", "')' or a connective '/\\' or '\\/'")
            return inner
        if self.at("true", "name"):
            self.advance()
            return TrueFormula()
        if self.at("false", "name"):
            self.advance()
            return Not(TrueFormula())
        left = self.term(nthreads)
        if self.at("==", "punct") or self.at("=", "punct"):
            op = "=="
        elif self.at("!=", "punct"):
            op = "!="
        else:
            raise self.fail("'==', '=' or '!=' in the condition")
        self.advance()
        right = self.term(nthreads)
        return Compare(op, left, right)


# ---- instruction semantics from the opcode and operands ---------------------------------------------

_ORDERS_LD = ("weak", "relaxed", "acquire", "volatile", "mmio")
_ORDERS_ST = ("weak", "relaxed", "release", "volatile", "mmio")
_ORDERS_ATOM = ("relaxed", "acquire", "release", "acq_rel")
# red has .relaxed and .release in §9.7.13.6; the Dat3M dialect (and the corpus) also writes
# red.acq_rel, which is kept as written.
_ORDERS_RED = ("relaxed", "release", "acq_rel")
_IGNORED_QUALIFIERS = ("ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "aligned", "noftz", "v2", "v4")


def _build(p: Parser, parts: list[tuple[str, Token]], operands: list[tuple[Operand, Token]], text: str, first: Token) -> Instruction:
    base = parts[0][0]
    quals = parts[1:]
    pos = (first.line, first.column)
    if base == "goto" or base == "bra":
        _no_quals(p, base, quals, allowed=("uni",))
        target = _label_operand(p, base, operands, 0, 1)
        return Jump(target, text, *pos)
    if base in BRANCH_CONDITIONS:
        _no_quals(p, base, quals)
        _count(p, base, operands, 3, first)
        left = _value(p, base, operands[0])
        right = _value(p, base, operands[1])
        target = _label_operand(p, base, operands, 2, 3)
        return Branch(base, left, right, target, text, *pos)
    if base in LOCAL_OPS:
        return _local(p, base, quals, operands, text, first)
    if base in ("ld", "tld", "suld", "cold", "ldc"):
        if base == "ld" and not quals and len(operands) == 2 and not isinstance(operands[1][0], Symbol):
            # Dat3M's ``ld r0, 1``: a register move, no memory operation.
            _count(p, base, operands, 2, first)
            return Local("mov", _register(p, base, operands[0]), (_value(p, base, operands[1]),), text, *pos)
        return _load(p, base, quals, operands, text, first)
    if base in ("st", "red") and quals[:1] and quals[0][0] == "async":
        return _async_store(p, base, quals[1:], operands, text, first)
    if base in ("st", "sust"):
        return _store(p, base, quals, operands, text, first)
    if base in ("atom", "red", "suatom", "sured"):
        return _atomic(p, base, quals, operands, text, first)
    if base in ("fence", "membar"):
        return _fence(p, base, quals, operands, text, first)
    if base in ("bar", "barrier"):
        return _barrier(p, base, quals, operands, text, first)
    if base == "mbarrier":
        return _mbarrier(p, quals, operands, text, first)
    if base == "cp":
        return _bulk_copy(p, quals, operands, text, first)
    if base == "tcgen05":
        return _tcgen05(p, quals, operands, text, first)
    if base == "wgmma":
        return _wgmma(p, quals, operands, text, first)
    if base == "tensormap":
        return _tensormap(p, quals, operands, text, first)
    raise p.error(f"unknown instruction {_quoted(base)}", first)


def _no_quals(p: Parser, base: str, quals: list[tuple[str, Token]], allowed: tuple[str, ...] = ()) -> None:
    for q, tok in quals:
        if q not in allowed:
            raise p.error(f"unknown qualifier .{q} for {base}", tok)


def _count(p: Parser, base: str, operands: list, n: int | tuple[int, ...], first: Token) -> None:
    ns = (n,) if isinstance(n, int) else n
    if len(operands) not in ns:
        where = operands[len(operands) - 1][1] if operands else first
        want = " or ".join(str(k) for k in ns)
        raise p.error(f"{base} takes {want} operand(s), found {len(operands)}", where)


def _register(p: Parser, base: str, op: tuple[Operand, Token]) -> Register:
    if not isinstance(op[0], Register):
        raise p.error(f"expected a register operand for {base}, found {_quoted(op[1].text)}", op[1])
    return op[0]


def _value(p: Parser, base: str, op: tuple[Operand, Token]) -> Register | Immediate:
    if isinstance(op[0], Symbol):
        raise p.error(f"expected a register or a constant for {base}, found location {_quoted(op[0].name)}", op[1])
    if isinstance(op[0], (TensorOperand, LocationList, VectorOperand)):
        raise p.error(f"expected a register or a constant for {base}, found {_quoted(op[1].text)}", op[1])
    return op[0]


def _address(p: Parser, base: str, op: tuple[Operand, Token]) -> str:
    if not isinstance(op[0], Symbol):
        raise p.error(f"expected a location for {base}, found {_quoted(op[1].text)}", op[1])
    return op[0].name


def _label_operand(p: Parser, base: str, operands: list, index: int, count: int) -> str:
    if len(operands) != count:
        raise p.error(f"{base} takes {count} operand(s), found {len(operands)}", operands[-1][1] if operands else None, p.tok.line, p.tok.column)
    op, tok = operands[index]
    if not isinstance(op, Symbol) or not _LABEL.match(op.name) or tok.text in ("[", "&"):
        raise p.error(f"expected a label for {base}, found {_quoted(tok.text)}", tok)
    return op.name


def _local(p, base, quals, operands, text, first) -> Local:
    for q, tok in quals:
        if q not in _TYPES:
            raise p.error(f"unknown qualifier .{q} for {base}", tok)
    if base == "mov":
        _count(p, base, operands, 2, first)
        return Local("mov", _register(p, base, operands[0]), (_value(p, base, operands[1]),), text, first.line, first.column)
    _count(p, base, operands, 3, first)
    return Local(base, _register(p, base, operands[0]), (_value(p, base, operands[1]), _value(p, base, operands[2])), text, first.line, first.column)


def _memory_quals(p: Parser, base: str, quals, orders: tuple[str, ...], extra: tuple[str, ...] = ()):
    """Split qualifiers into order, scope, the rest; reject unknown or repeated ones."""
    order = scope = None
    rest: list[str] = []
    mmio = False
    for q, tok in quals:
        if q == "mmio" and "mmio" in orders:
            if mmio:
                raise p.error(f"qualifier .{q} given twice", tok)
            mmio = True
        elif q in orders:
            if order is not None:
                raise p.error(f"{base} has two memory orders: .{order} and .{q}", tok)
            order = q
        elif q in SCOPES:
            if scope is not None:
                raise p.error(f"{base} has two scopes: .{scope} and .{q}", tok)
            scope = q
        elif q in _STATE_SPACES or q in _TYPES or q in _IGNORED_QUALIFIERS or q in extra or q.startswith(("L1::", "L2::")):
            rest.append(q)
        else:
            raise p.error(f"unknown qualifier .{q} for {base}", tok)
    return order, scope, rest, mmio


def _check_order_scope(p: Parser, base: str, order: str, scope: str | None, first: Token) -> str | None:
    """§9.7.9.8/§9.7.9.11: ``.relaxed``/``.acquire``/``.release`` need a scope; weak and volatile
    take none; volatile is relaxed at system scope (§8.4.2), mmio is ``.mmio.relaxed.sys`` (§8.4.1)."""
    if order in ("relaxed", "acquire", "release", "acq_rel"):
        if scope is None:
            raise p.error(f"{base}.{order} needs a scope (.cta, .cluster, .gpu or .sys)", first)
        return scope
    if order == "weak" and scope is not None:
        raise p.error(f"a weak {base} takes no scope (found .{scope})", first)
    if order == "volatile":
        if scope is not None:
            raise p.error(f"{base}.volatile takes no scope (found .{scope})", first)
        return "sys"
    if order == "mmio":
        if scope not in (None, "sys"):
            raise p.error(f"{base}.mmio is only at .sys scope (found .{scope})", first)
        return "sys"
    return scope


_LOAD_PROXY = {"ld": "generic", "tld": "texture", "suld": "surface", "cold": "constant", "ldc": "constant"}


def _load(p, base, quals, operands, text, first) -> Load:
    order, scope, rest, mmio = _memory_quals(p, base, quals, _ORDERS_LD)
    if mmio:
        if order not in (None, "relaxed"):
            raise p.error(f"{base}.mmio goes with .relaxed only (found .{order})", first)
        order = "mmio"
    order = order or "weak"
    scope = _check_order_scope(p, base, order, scope, first)
    _count(p, base, operands, 2, first)
    return Load(
        base, _LOAD_PROXY[base], order, scope, _register(p, base, operands[0]), _address(p, base, operands[1]), tuple(rest), text, first.line, first.column
    )


def _store(p, base, quals, operands, text, first) -> Store:
    order, scope, rest, mmio = _memory_quals(p, base, quals, _ORDERS_ST)
    if mmio:
        if order not in (None, "relaxed"):
            raise p.error(f"{base}.mmio goes with .relaxed only (found .{order})", first)
        order = "mmio"
    order = order or "weak"
    scope = _check_order_scope(p, base, order, scope, first)
    _count(p, base, operands, 2, first)
    return Store(
        base,
        "surface" if base == "sust" else "generic",
        order,
        scope,
        _address(p, base, operands[0]),
        _value(p, base, operands[1]),
        tuple(rest),
        text,
        first.line,
        first.column,
    )


#: §9.7.13.5-6: the floating-point types of the scalar atom and red (.add only; the half types with
#: .noftz): a location holds the value's bits in its low bytes.
FLOAT_ATOMIC_TYPES = ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2")


def _check_float_atomic(p, base: str, op: str, op_tok, floats, noftz: bool) -> None:
    """§9.7.13.5: ``atom.add.f32``, ``.add.f64``, ``.add.noftz.{f16,f16x2,bf16,bf16x2}`` ("The
    atom.add.f16, atom.add.f16x2, atom.add.bf16 and atom.add.bf16x2 operation requires the .noftz
    qualifier"); the float .min/.max are vector forms, not in the dialect."""
    (q, tok), *_ = floats
    if op != "add":
        raise p.error(f"a floating-point {base} is .add only (.{op}.{q} is not PTX)", op_tok)
    if noftz != (q not in ("f32", "f64")):
        raise p.error(f"{base}.add.{q}: .noftz goes with the .f16, .bf16, .f16x2 and .bf16x2 types, and they require it", tok)


def _atomic(p, base, quals, operands, text, first) -> Atomic:
    """§9.7.13.5-6: without ``.sem`` an atomic is ``.relaxed``; without ``.scope`` it is ``.gpu``."""
    is_red = base in ("red", "sured")
    ops = [(q, tok) for q, tok in quals if q in ATOMIC_OPS]
    if not ops:
        raise p.error(f"{base} needs an operation (.add, .cas, .exch ...)", first)
    if len(ops) > 1:
        raise p.error(f"{base} has two operations: .{ops[0][0]} and .{ops[1][0]}", ops[1][1])
    op = ops[0][0]
    if is_red and op in ("cas", "exch"):
        raise p.error(f"red has no .{op} operation (§9.7.13.6)", ops[0][1])
    others = [(q, tok) for q, tok in quals if q not in ATOMIC_OPS]
    floats = [(q, tok) for q, tok in others if q in FLOAT_ATOMIC_TYPES]
    if floats:
        _check_float_atomic(p, base, op, ops[0][1], floats, any(q == "noftz" for q, _ in others))
    order, scope, rest, _ = _memory_quals(p, base, others, _ORDERS_RED if is_red else _ORDERS_ATOM, FLOAT_ATOMIC_TYPES)
    order = order or "relaxed"
    scope = scope or "gpu"
    if is_red:
        _count(p, base, operands, 2, first)
        return Atomic(
            base,
            "surface" if base == "sured" else "generic",
            order,
            scope,
            op,
            None,
            _address(p, base, operands[0]),
            (_value(p, base, operands[1]),),
            tuple(rest),
            text,
            first.line,
            first.column,
        )
    _count(p, base, operands, 4 if op == "cas" else 3, first)
    return Atomic(
        base,
        "surface" if base == "suatom" else "generic",
        order,
        scope,
        op,
        _register(p, base, operands[0]),
        _address(p, base, operands[1]),
        tuple(_value(p, base, o) for o in operands[2:]),
        tuple(rest),
        text,
        first.line,
        first.column,
    )


#: §9.7.13.15.11-16: each mbarrier operation's ``.sem`` values, the first its default.
_MBARRIER_ORDERS = {
    "expect_tx": ("relaxed",),
    "complete_tx": ("relaxed",),
    "arrive": ("release", "relaxed"),
    "arrive_drop": ("release", "relaxed"),
    "test_wait": ("acquire", "relaxed"),
    "try_wait": ("acquire", "relaxed"),
}


#: How many operands each mbarrier operation takes (the destination or sink included).
_MBARRIER_OPERANDS: dict[str, int | tuple[int, ...]] = {
    "init": 2,
    "inval": 1,
    "expect_tx": 2,
    "complete_tx": 2,
    "arrive": (2, 3),
    "arrive_drop": (2, 3),
    "test_wait": 3,
    "try_wait": (3, 4),
}


def _mbarrier(p, quals, operands, text, first) -> MbarrierOp | Local:
    """§9.7.13.15.9-16. ``.sem`` defaults to ``.release`` (arrive, arrive_drop) or ``.acquire``
    (test_wait, try_wait), ``.scope`` to ``.cta``; expect_tx and complete_tx are ``.relaxed``. The
    destination of an arrive may be the sink ``_``; try_wait's suspendTimeHint is accepted and has
    no effect on the outcome (the wait returns what the object's phase says when it reads it)."""
    if quals and quals[0][0] == "pending_count":
        _no_quals(p, "mbarrier.pending_count", quals[1:], allowed=("b64",))
        _count(p, "mbarrier.pending_count", operands, 2, first)
        count, state = (_register(p, "mbarrier.pending_count", o) for o in operands)
        return Local("pending_count", count, (state,), text, first.line, first.column)
    if not quals or quals[0][0] not in MBARRIER_OPS:
        where = quals[0][1] if quals else first
        raise p.error(f"mbarrier needs an operation ({', '.join('.' + o for o in MBARRIER_OPS)})", where)
    op = quals[0][0]
    extra = {"arrive": ("expect_tx", "noComplete"), "arrive_drop": ("noComplete",), "test_wait": ("parity",), "try_wait": ("parity",)}.get(op, ())
    order, scope, rest, _ = _memory_quals(p, f"mbarrier.{op}", quals[1:], _MBARRIER_ORDERS.get(op, ()), extra)
    if op in ("init", "inval"):
        if scope is not None:
            raise p.error(f"mbarrier.{op} takes no scope (found .{scope})", first)
    else:
        order = order or _MBARRIER_ORDERS[op][0]
        scope = scope or "cta"
        if scope not in ("cta", "cluster"):
            raise p.error(f"mbarrier.{op}'s scope is .cta or .cluster, not .{scope}", first)
    _count(p, f"mbarrier.{op}", operands, _MBARRIER_OPERANDS[op], first)
    dest: Register | None = None
    if op in ("arrive", "arrive_drop", "test_wait", "try_wait"):
        sink = isinstance(operands[0][0], Symbol) and operands[0][0].name == "_" and op.startswith("arrive")
        dest = None if sink else _register(p, f"mbarrier.{op}", operands[0])
        operands = operands[1:]
    if ("expect_tx" in rest or "noComplete" in rest) and len(operands) != 2:
        raise p.error(f"mbarrier.{op}.{'expect_tx' if 'expect_tx' in rest else 'noComplete'} takes its count operand", first)
    values = tuple(_value(p, f"mbarrier.{op}", o) for o in operands[1:])
    if op == "try_wait":
        values = values[:1]  # suspendTimeHint: a time limit, no value
    return MbarrierOp(op, order, scope, dest, _address(p, f"mbarrier.{op}", operands[0]), values, tuple(rest), text, first.line, first.column)


#: §9.7.9.25.4.1-2: the (destination, source) state spaces of cp{.reduce}.async.bulk and the
#: completion mechanism of each.
_BULK_SPACES = {
    ("shared::cluster", "global"): "mbarrier::complete_tx::bytes",
    ("shared::cta", "global"): "mbarrier::complete_tx::bytes",
    ("shared::cluster", "shared::cta"): "mbarrier::complete_tx::bytes",
    ("global", "shared::cta"): "bulk_group",
}
#: §9.7.9.25.4.2: the .redOp of cp.reduce.async.bulk and its types (a floating-point value is
#: the bits of the location's low bytes; ``add.f16``/``add.bf16`` are written ``.add.noftz``).
_BULK_REDUCE = {
    "and": ("b32", "b64"),
    "or": ("b32", "b64"),
    "xor": ("b32", "b64"),
    "add": ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"),
    "inc": ("u32",),
    "dec": ("u32",),
    "min": ("u32", "s32", "u64", "s64", "f16", "bf16"),
    "max": ("u32", "s32", "u64", "s64", "f16", "bf16"),
}
#: §9.7.9.25.4.2: "The .add.f16 and .add.bf16 operations require .noftz qualifier."
_NOFTZ_TYPES = ("f16", "bf16")


def _async_copy(p, quals, operands, text, first) -> AsyncCopy | AsyncGroup | AsyncArrive:
    """§9.7.9.25.3: ``cp.async.ca|cg.shared{::cta}.global [dst], [src], cp-size{, src-size}``,
    ``cp.async.commit_group``, ``cp.async.wait_group N``, ``cp.async.wait_all``; §9.7.13.15.15
    ``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]``. The ``ignore-src`` predicate
    form is not in the dialect (it has no predicate registers): write src-size 0."""
    names = [q for q, _ in quals]
    if names[1:] in (["commit_group"], ["wait_all"]):
        _count(p, f"cp.async.{names[1]}", operands, 0, first)
        return AsyncGroup(names[1], None, text, first.line, first.column)
    if names[1:] == ["wait_group"]:
        return AsyncGroup("wait_group", _group_count(p, "cp.async.wait_group", operands, first), text, first.line, first.column)
    if names[1:2] == ["mbarrier"] and names[2:3] == ["arrive"]:
        rest = names[3:]
        noinc = rest[:1] == ["noinc"]
        rest = rest[1:] if noinc else rest
        if rest not in (["b64"], ["shared", "b64"], ["shared::cta", "b64"]):
            raise p.error("cp.async.mbarrier.arrive is cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]", first)
        _count(p, "cp.async.mbarrier.arrive", operands, 1, first)
        return AsyncArrive(_address(p, "cp.async.mbarrier.arrive", operands[0]), noinc, tuple(names[3:]), text, first.line, first.column)
    if len(names) in (4, 5) and names[1] in ("ca", "cg") and names[2] in ("shared", "shared::cta") and names[3] == "global" and names[4:] in ([], *_PREFETCH):
        _count(p, "cp.async", operands, (3, 4), first)
        size = _value(p, "cp.async", operands[2])
        if not isinstance(size, Immediate) or size.value not in (4, 8, 16) or (names[1] == "cg" and size.value != 16):
            raise p.error("cp.async's cp-size is 4, 8 or 16 (.cg: 16)", operands[2][1])
        src_size = _value(p, "cp.async", operands[3]) if len(operands) == 4 else None
        if isinstance(src_size, Immediate) and not 0 <= src_size.value <= size.value:
            raise p.error(f"cp.async's src-size {src_size.value} is not in 0 .. cp-size ({size.value})", operands[3][1])
        return AsyncCopy(
            _address(p, "cp.async", operands[0]), _address(p, "cp.async", operands[1]), size, tuple(names[1:]), text, first.line, first.column, src_size
        )
    raise p.error(
        "of cp.async only cp.async.ca|cg.shared.global [dst], [src], size{, src-size}, commit_group, wait_group, wait_all and "
        "cp.async.mbarrier.arrive are supported in litmus tests",
        first,
    )


#: §9.7.9.25.3.1 ``.level::prefetch_size``: "a hint to fetch additional data of the specified size
#: into the respective cache level" (no effect on the memory model).
_PREFETCH = (["L2::64B"], ["L2::128B"], ["L2::256B"])


def _group_count(p, base: str, operands, first) -> int:
    _count(p, base, operands, 1, first)
    n = operands[0][0]
    if not isinstance(n, Immediate) or n.value < 0:
        raise p.error(f"{base} takes a constant N >= 0", operands[0][1])
    return n.value


def _bulk_copy(p, quals, operands, text, first) -> BulkCopy | TensorCopy | AsyncCopy | AsyncGroup | AsyncArrive:
    """§9.7.9.25.4.1 ``cp.async.bulk.dst.src.completion`` and §9.7.9.25.4.2
    ``cp.reduce.async.bulk.dst.src.completion.redOp.type`` (the state spaces and completion of
    :data:`_BULK_SPACES`), §9.7.9.25.6 ``cp.async.bulk.commit_group`` and
    ``cp.async.bulk.wait_group{.read} N``; the non-bulk ``cp.async`` forms are :func:`_async_copy`'s.
    ``.L2::cache_hint`` takes its cache-policy operand last (:attr:`BulkCopy.cache_policy`)."""
    hint = next((tok for q, tok in quals if q == CACHE_HINT), None)
    if hint is None:
        return _bulk_copy_hinted(p, quals, operands, text, first)
    instruction = _bulk_copy_hinted(p, [q for q in quals if q[0] != CACHE_HINT], operands[:-1], text, first)
    if not isinstance(instruction, (BulkCopy, TensorCopy, AsyncCopy)) or not operands:
        raise p.error(".L2::cache_hint goes with cp.async, cp.async.bulk{.tensor} and cp.reduce.async.bulk{.tensor}", hint)
    return attrs.evolve(instruction, cache_policy=_value(p, "cache-policy", operands[-1]))


CACHE_HINT = "L2::cache_hint"
"""§9.7.9.25: ``.level::cache_hint`` with a 64-bit cache-policy operand, the last one."""


def _bulk_copy_hinted(p, quals, operands, text, first) -> BulkCopy | TensorCopy | AsyncCopy | AsyncGroup | AsyncArrive:
    """:func:`_bulk_copy` without ``.L2::cache_hint`` and its cache-policy operand."""
    names = [q for q, _ in quals]
    if names[:1] == ["async"] and names[1:2] != ["bulk"]:
        return _async_copy(p, quals, operands, text, first)
    if names[:3] == ["async", "bulk", "commit_group"] and len(names) == 3:
        _count(p, "cp.async.bulk.commit_group", operands, 0, first)
        return AsyncGroup("commit_group", None, text, first.line, first.column, kind="bulk")
    if names[:3] == ["async", "bulk", "wait_group"] and names[3:] in ([], ["read"]):
        n = _group_count(p, "cp.async.bulk.wait_group", operands, first)
        return AsyncGroup("wait_group", n, text, first.line, first.column, kind="bulk", read=names[3:] == ["read"])
    reduce = names[:3] == ["reduce", "async", "bulk"]
    base = "cp.reduce.async.bulk" if reduce else "cp.async.bulk"
    if not (reduce or names[:2] == ["async", "bulk"]):
        raise p.error("of the cp instructions the dialect has cp.async, cp.async.bulk and cp.reduce.async.bulk", first)
    quals = quals[3:] if reduce else quals[2:]
    names = [q for q, _ in quals]
    if names[:1] == ["tensor"]:
        return _tensor_copy(p, base + ".tensor", quals[1:], operands, text, first, reduce)
    if len(names) < 3:
        raise p.error(f"{base} needs .dst.src.completion_mechanism", first)
    spaces = (names[0], names[1])
    if spaces not in _BULK_SPACES:
        raise p.error(f"{base} from .{names[1]} to .{names[0]}: the copies are " + ", ".join(f".{s} to .{d}" for d, s in _BULK_SPACES), quals[0][1])
    completion = _BULK_SPACES[spaces]
    if names[2] != completion:
        raise p.error(f"{base} from .{names[1]} to .{names[0]} completes with .{completion}, not .{names[2]}", quals[2][1])
    reduce_op = None
    rest = quals[3:]
    if reduce:
        kept = [q for q, _ in rest]
        noftz = kept[1:2] == ["noftz"]
        if noftz:
            kept = kept[:1] + kept[2:]
        if len(kept) != 2 or kept[0] not in _BULK_REDUCE or kept[1] not in _BULK_REDUCE[kept[0]]:
            where = rest[0][1] if rest else first
            raise p.error(
                f"{base} takes .redOp.type (" + "; ".join(f".{o}: " + ", ".join("." + t for t in ts) for o, ts in _BULK_REDUCE.items()) + ")",
                where,
            )
        if noftz != (kept[0] == "add" and kept[1] in _NOFTZ_TYPES):
            raise p.error(f"{base}: .noftz goes with .add.f16 and .add.bf16 only, and they require it (§9.7.9.25.4.2)", rest[0][1])
        reduce_op = rest[0][0]
        rest = []
    multicast = bool(rest) and rest[0][0] == "multicast::cluster" and not reduce and spaces == ("shared::cluster", "global")
    for q, tok in rest[1:] if multicast else rest:
        raise p.error(f"unknown qualifier .{q} for {base} (.multicast::cluster only from .global to .shared::cluster)", tok)
    mbarrier = completion.startswith("mbarrier")
    size_at = 2
    if len(operands) > size_at:
        _check_bulk_size(p, base, operands[size_at])
    if multicast:
        _count(p, base, operands, 5, first)
        pairs, mask = _multicast(p, base, operands[0], operands[3], operands[4])
        return BulkCopy(
            pairs[0][0],
            _address(p, base, operands[1]),
            _value(p, base, operands[2]),
            pairs[0][1],
            tuple(names),
            text,
            first.line,
            first.column,
            multicast=pairs,
            cta_mask=mask,
        )
    _count(p, base, operands, 4 if mbarrier else 3, first)
    return BulkCopy(
        _address(p, base, operands[0]),
        _address(p, base, operands[1]),
        _value(p, base, operands[2]),
        _address(p, base, operands[3]) if mbarrier else None,
        tuple(names),
        text,
        first.line,
        first.column,
        reduce_op,
    )


def _check_bulk_size(p, base: str, op) -> None:
    """§9.7.9.25.4.1-2: "size must be a multiple of 16. If the value is not a multiple of 16, then
    the behavior is undefined" (a constant here; a register's value when the test is lowered)."""
    size = _value(p, base, op)
    if isinstance(size, Immediate) and (size.value <= 0 or size.value % 16):
        raise p.error(f"{base}'s size {size.value} is not a positive multiple of 16: the behavior is undefined", op[1])


def _multicast(p, base: str, dst, mbar, mask) -> tuple[tuple[tuple[str, str], ...], int]:
    """§9.7.9.25.4.1 ``.multicast::cluster``: "Operand ctaMask specifies the destination CTAs in the
    cluster such that each bit position in the 16-bit ctaMask operand corresponds to the %ctarank of
    the destination CTA. The source data is multicast to the same CTA-relative offset as dstMem in
    the shared memory of each destination CTA. The mbarrier signal is also multicast to the same
    CTA-relative offset as mbar". The dialect names each CTA's instance: ``[{s0, s1}]`` and
    ``[{bar0, bar1}]``, one per set bit of the constant ctaMask, in increasing rank."""
    cta_mask = _cta_mask(p, base, mask)
    dsts, mbars = (_per_cta(p, base, op, cta_mask, what) for op, what in ((dst, "dstMem"), (mbar, "mbar")))
    return tuple(zip(dsts, mbars)), cta_mask


def _cta_mask(p, base: str, mask) -> int:
    value = _value(p, base, mask)
    if not isinstance(value, Immediate) or not 0 < value.value < 1 << 16:
        raise p.error(f"{base}'s ctaMask is a constant of 16 bits with at least one bit set", mask[1])
    return value.value


def _per_cta(p, base: str, op, cta_mask: int, what: str) -> tuple[str, ...]:
    """The locations of ``[{a, b, ...}]``: one per destination CTA of ``cta_mask``."""
    count = bin(cta_mask).count("1")
    if not isinstance(op[0], LocationList) or len(op[0].names) != count:
        raise p.error(f"{base}.multicast::cluster names {what} in each of the {count} destination CTA(s) of ctaMask: [{{a, b, ...}}]", op[1])
    return op[0].names


TENSOR_BOX_BYTES = 16
"""The bytes a tensor copy of the dialect moves (its complete-tx count): a litmus tensor is one
location, and its box is counted as the smallest a tensor map describes (the inner box dimension
in bytes is a multiple of 16)."""
#: §9.7.9.25.5.2: the directions of cp.async.bulk.tensor, with their completion mechanism and load modes.
_TENSOR_SPACES = {
    ("shared::cluster", "global"): ("mbarrier::complete_tx::bytes", ("tile", "tile::gather4", "im2col", "im2col::w", "im2col::w::128")),
    ("shared::cta", "global"): ("mbarrier::complete_tx::bytes", ("tile", "tile::gather4", "im2col", "im2col::w", "im2col::w::128")),
    ("global", "shared::cta"): ("bulk_group", ("tile", "tile::scatter4", "im2col_no_offs")),
}
#: §9.7.9.25.5.3: the .redOp of cp.reduce.async.bulk.tensor (the element type is the tensor map's;
#: the dialect's tensor element is .u32, .b32 for the bitwise operations).
TENSOR_REDUCE_TYPES = {"add": "u32", "min": "u32", "max": "u32", "inc": "u32", "dec": "u32", "and": "b32", "or": "b32", "xor": "b32"}


#: §9.7.9.25.5.2: per load mode, the tensor coordinates it takes (None: .dim's count) and the
#: im2colInfo vector it takes (None: none; "dim-2": one offset per dimension but two).
_LOAD_MODES = {
    "tile": (None, None),
    "tile::gather4": (5, None),
    "tile::scatter4": (5, None),
    "im2col": (None, "dim-2"),
    "im2col::w": (None, 2),
    "im2col::w::128": (None, 2),
    "im2col_no_offs": (None, None),
}


def _tensor_copy(p, base, quals, operands, text, first, reduce: bool) -> TensorCopy:
    """§9.7.9.25.5.2 ``cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion{.multicast}{.cta_group}
    [dstMem], [tensorMap, tensorCoords], [mbar]{, im2colInfo}{, ctaMask}`` (or into global memory
    ``[tensorMap, tensorCoords], [srcMem]``) and §9.7.9.25.5.3 ``cp.reduce.async.bulk.tensor.dim.global
    .shared::cta.redOp{.load_mode}.bulk_group``. The load mode decides which elements of the tensor a
    copy moves; a litmus tensor is one location, so every mode moves that location (the operands each
    mode takes are checked: "the tensor must be at least 3-dimensional" for im2col, four rows of a
    2-D tensor for gather4/scatter4). ``.cta_group::2`` lets the mbarrier be in the peer CTA (litmus
    locations are not per CTA). ``.multicast::cluster`` is :func:`_multicast`'s, ``.L2::cache_hint``
    :func:`_bulk_copy`'s."""
    names = [q for q, _ in quals]
    if len(names) < 3 or names[0] not in ("1d", "2d", "3d", "4d", "5d"):
        raise p.error(f"{base} needs .dim.dst.src (.dim one of .1d .. .5d)", quals[0][1] if quals else first)
    dim = int(names[0][0])
    spaces = (names[1], names[2])
    if spaces not in _TENSOR_SPACES or (reduce and spaces != ("global", "shared::cta")):
        allowed = [("global", "shared::cta")] if reduce else list(_TENSOR_SPACES)
        raise p.error(f"{base} from .{names[2]} to .{names[1]}: the copies are " + ", ".join(f".{s} to .{d}" for d, s in allowed), quals[1][1])
    completion, modes = _TENSOR_SPACES[spaces]
    rest = quals[3:]
    reduce_op = None
    if reduce:
        if not rest or rest[0][0] not in TENSOR_REDUCE_TYPES:
            raise p.error(f"{base} takes .redOp (" + ", ".join("." + o for o in TENSOR_REDUCE_TYPES) + ")", rest[0][1] if rest else first)
        reduce_op = rest[0][0]
        rest = rest[1:]
        modes = ("tile", "im2col_no_offs")
    mode = "tile"
    if rest and rest[0][0] in _LOAD_MODES:
        mode, tok = rest[0]
        rest = rest[1:]
        if mode not in modes:
            raise p.error(f"{base} from .{names[2]} to .{names[1]} has no load mode .{mode}", tok)
        if mode.startswith("im2col") and dim < 3:
            raise p.error(f"{base}.{mode}: 'the tensor must be at least 3-dimensional', not .{names[0]}", tok)
        if mode.startswith("tile::") and dim != 2:
            raise p.error(f"{base}.{mode} moves four rows of a 2-D tensor (.2d), not .{names[0]}", tok)
    if not rest or rest[0][0] != completion:
        raise p.error(f"{base} from .{names[2]} to .{names[1]} completes with .{completion}", rest[0][1] if rest else first)
    extras = [q for q, _ in rest[1:]]
    multicast = extras[:1] == ["multicast::cluster"] and spaces == ("shared::cluster", "global")
    extras = extras[1:] if multicast else extras
    cta_group = extras[:1] if extras[:1] in (["cta_group::1"], ["cta_group::2"]) and completion != "bulk_group" else []
    for q, tok in rest[1 + multicast + len(cta_group) :]:
        raise p.error(
            f"unknown qualifier .{q} for {base} (.multicast::cluster only from .global to .shared::cluster, then .cta_group::1/2 with the mbarrier completion)",
            tok,
        )
    mbarrier = completion != "bulk_group"
    coordinates_count, info = _LOAD_MODES[mode]
    info_count = dim - 2 if info == "dim-2" else info
    _count(p, base, operands, (3 if mbarrier else 2) + (info_count is not None) + multicast, first)
    tensor_op, tensor_tok = operands[1 if mbarrier else 0]
    if not isinstance(tensor_op, TensorOperand):
        raise p.error(f"{base} takes [tensorMap, {{coordinates}}] as its {'second' if mbarrier else 'first'} operand", tensor_tok)
    coordinates = dim if coordinates_count is None else coordinates_count
    if len(tensor_op.coordinates) != coordinates:
        raise p.error(f"{base}.{names[0]}.{mode} takes {coordinates} tensor coordinate(s), found {len(tensor_op.coordinates)}", tensor_tok)
    im2col_info: tuple[Register | Immediate, ...] = ()
    if info_count is not None:
        vector, vector_tok = operands[3]
        if not isinstance(vector, VectorOperand) or len(vector.values) != info_count:
            raise p.error(f"{base}.{mode} takes im2colInfo, a vector of {info_count} value(s): {{a, ...}}", vector_tok)
        im2col_info = vector.values
    pairs, mask = _multicast(p, base, operands[0], operands[2], operands[-1]) if multicast else ((), None)
    shared = pairs[0][0] if pairs else _address(p, base, operands[0] if mbarrier else operands[1])
    return TensorCopy(
        tensor_op.tensor_map,
        tensor_op.coordinates,
        shared,
        pairs[0][1] if pairs else _address(p, base, operands[2]) if mbarrier else None,
        (names[0], names[1], names[2], mode, completion) + (("multicast::cluster",) if pairs else ()) + tuple(cta_group) + ((reduce_op,) if reduce_op else ()),
        text,
        first.line,
        first.column,
        reduce_op,
        pairs,
        mask,
        im2col_info,
    )


#: §9.7.9.26: the fields of tensormap.replace, by operand form (.field1 new_val; .field2 ord, new_val;
#: .field3 new_val); the dialect's tensor map holds the global address only.
_TENSORMAP_FIELDS = (
    "global_address",
    "rank",
    "box_dim",
    "global_dim",
    "global_stride",
    "element_stride",
    "elemtype",
    "interleave_layout",
    "swizzle_mode",
    "swizzle_atomicity",
    "fill_mode",
)


def _tensormap(p, quals, operands, text, first) -> TensormapOp:
    """§9.7.9.26 ``tensormap.replace.tile.global_address{.global,.shared::cta}.b1024.b64 [addr], new_val``
    (``new_val`` written as the location it is the address of) and §9.7.13.16
    ``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst],
    [src], 128``. The other fields of tensormap.replace are refused: the dialect's tensor map has one
    field, the tensor's address."""
    names = [q for q, _ in quals]
    if names[:1] == ["replace"]:
        base = "tensormap.replace"
        if len(names) < 2 or names[1] != "tile":
            raise p.error(f"{base} needs .mode .tile", quals[1][1] if len(quals) > 1 else first)
        if len(names) < 3 or names[2] not in _TENSORMAP_FIELDS:
            raise p.error(f"{base}.tile needs a .field (" + ", ".join("." + f for f in _TENSORMAP_FIELDS) + ")", quals[2][1] if len(quals) > 2 else first)
        if names[2] != "global_address":
            raise p.error(f"{base}.{names[2]} is not supported in litmus tests: the dialect's tensor map has one field, .global_address", quals[2][1])
        tail = names[3:]
        if tail not in (["b1024", "b64"], ["global", "b1024", "b64"], ["shared::cta", "b1024", "b64"]):
            raise p.error(f"{base}.tile.global_address is {base}.tile.global_address{{.global,.shared::cta}}.b1024.b64 [addr], new_val", first)
        _count(p, base, operands, 2, first)
        return TensormapOp("replace", _address(p, base, operands[0]), _address(p, base, operands[1]), tuple(names[1:]), text, first.line, first.column)
    if names[:1] == ["cp_fenceproxy"]:
        base = "tensormap.cp_fenceproxy"
        scope = names[5] if len(names) == 8 else None
        if scope not in SCOPES or names[:5] + names[6:] != ["cp_fenceproxy", "global", "shared::cta", "tensormap::generic", "release", "sync", "aligned"]:
            raise p.error(f"{base} is {base}.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128", first)
        _count(p, base, operands, 3, first)
        size = _value(p, base, operands[2])
        if not isinstance(size, Immediate) or size.value != 128:
            raise p.error(f"{base}'s size is 128 (a tensor map's bytes)", operands[2][1])
        return TensormapOp(
            "cp_fenceproxy", _address(p, base, operands[0]), _address(p, base, operands[1]), tuple(names[1:]), text, first.line, first.column, scope
        )
    raise p.error("of the tensormap instructions the dialect has tensormap.replace and tensormap.cp_fenceproxy", quals[0][1] if quals else first)


#: §9.7.9.12, §9.7.13.7: per (opcode, .sem): the default .sem first, the scopes (the default
#: first), the state space, and the types of the dialect (a location is one integer; .v2/.v4
#: vectors of st.async count their bytes only).
_ASYNC_STORE_FORMS = {
    ("st", "weak"): (("cluster",), "shared::cluster", ("b32", "b64", "u32", "u64", "s32", "s64")),
    ("st", "release"): (("sys", "gpu"), "global", ("b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")),
    ("red", "relaxed"): (("cluster",), "shared::cluster", ("u32", "s32", "u64", "b32")),
    # The syntax lists .gpu and .cluster, the conditions .gpu and .sys: all three are accepted.
    ("red", "release"): (("sys", "gpu", "cluster"), "global", ("u32", "s32", "u64", "s64")),
}
#: §9.7.13.7: the .op of red.async and its types.
_RED_ASYNC_OPS = {
    "inc": ("u32",),
    "dec": ("u32",),
    "min": ("u32", "s32"),
    "max": ("u32", "s32"),
    "and": ("b32",),
    "or": ("b32",),
    "xor": ("b32",),
    "add": ("u32", "s32", "u64", "s64"),
}


def _async_store(p, base, quals, operands, text, first) -> AsyncStore:
    """§9.7.9.12 ``st.async{.weak}{.cluster}{.shared::cluster}{.mbarrier::complete_tx::bytes}{.vec}.type
    [a], b, [mbar]`` and ``st.async.release{.scope}{.global}.type [a], b``; §9.7.13.7
    ``red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type [a], b, [mbar]``
    and ``red.async.release.scope{.global}.add.type [a], b``. ``.mmio`` is refused."""
    name = f"{base}.async"
    sems = {"st": ("weak", "release"), "red": ("relaxed", "release")}[base]
    sem = next((q for q, _ in quals if q in sems), sems[0] if base == "st" else None)
    if sem is None:
        raise p.error(f"{name} needs .relaxed or .release", first)
    scopes, space, types = _ASYNC_STORE_FORMS[(base, sem)]
    scope = next((q for q, _ in quals if q in SCOPES), scopes[0])
    if scope not in scopes:
        raise p.error(f"{name}.{sem}'s scope is " + " or ".join("." + s for s in scopes) + f", not .{scope}", first)
    mbarrier = space == "shared::cluster"
    op = None
    kept: list[str] = []
    for q, tok in quals:
        if q in sems or q == scope:
            continue
        if q in _STATE_SPACES and q != space:
            raise p.error(f"{name}.{sem} is to .{space}, not .{q}", tok)
        if q == "mbarrier::complete_tx::bytes" and not mbarrier:
            raise p.error(f"{name}.{sem} has no completion mechanism", tok)
        if base == "red" and q in _RED_ASYNC_OPS and op is None:
            op = q
            continue
        if not (q == space or q == "mbarrier::complete_tx::bytes" or q in types or (base == "st" and mbarrier and q in ("v2", "v4"))):
            raise p.error(f"unknown qualifier .{q} for {name}.{sem}", tok)
        kept.append(q)
    if not any(q in types for q in kept):
        raise p.error(f"{name}.{sem} needs a type (" + ", ".join("." + t for t in types) + ")", first)
    if base == "red":
        if op is None or (sem == "release" and op != "add"):
            raise p.error(f"{name}.{sem} needs an operation (" + (".add" if sem == "release" else ", ".join("." + o for o in _RED_ASYNC_OPS)) + ")", first)
        if not any(q in _RED_ASYNC_OPS[op] for q in kept):
            raise p.error(f"{name}.{op} takes " + ", ".join("." + t for t in _RED_ASYNC_OPS[op]), first)
    _count(p, name, operands, 3 if mbarrier else 2, first)
    return AsyncStore(
        base,
        sem,
        scope,
        _address(p, name, operands[0]),
        _value(p, name, operands[1]),
        _address(p, name, operands[2]) if mbarrier else None,
        op,
        tuple(kept),
        text,
        first.line,
        first.column,
    )


#: Per tcgen05 operation: (operand kinds: "r" register, "a" location, "v" value; qualifiers it
#: requires; qualifiers it accepts besides).
TCGEN05_CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
"""§9.7.16.8.5: the .shape of tcgen05.cp (``4x256b`` forms a pipeline after tcgen05.shift)."""
_TCGEN05_FORMS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "ld": ("ra", ("sync", "aligned"), ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2", "x1", "b32", "pack::16b")),
    "st": ("av", ("sync", "aligned"), ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2", "x1", "b32", "unpack::16b")),
    "cp": ("aa", (), TCGEN05_CP_SHAPES + ("warpx2::02_13", "warpx2::01_23", "warpx4")),
    "mma": ("aaav", (), ()),
    "shift": ("aa", ("down",), ()),
    "commit": ("a", ("mbarrier::arrive::one",), ("b64", "shared::cluster", "multicast::cluster")),
    "fence::before_thread_sync": ("", (), ()),
    "fence::after_thread_sync": ("", (), ()),
    "wait::ld": ("", (), ("sync", "aligned")),
    "wait::st": ("", (), ("sync", "aligned")),
}
_KINDS = ("kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4")


def _tcgen05(p, quals, operands, text, first) -> Tcgen05Op:
    """§9.7.16: the tcgen05 instructions of :data:`TCGEN05_OPS`; ``.cta_group::1/2`` is required on
    cp, mma, shift and commit, and mma needs its ``.kind``. Block scaling, ``.sp``, ``.ws``,
    alloc/dealloc and the tcgen05.cp ``.multicast`` forms are not in the dialect; tcgen05.commit
    takes ``.multicast::cluster`` ([{bar0, bar1}], ctaMask)."""
    if not quals or quals[0][0] not in TCGEN05_OPS:
        where = quals[0][1] if quals else first
        raise p.error(f"tcgen05 in litmus tests is one of {', '.join('.' + o for o in TCGEN05_OPS)}", where)
    op = quals[0][0]
    kinds, required, accepted = _TCGEN05_FORMS[op]
    names = [q for q, _ in quals[1:]]
    if op in ("cp", "mma", "shift", "commit"):
        required = required + (next((q for q in names if q in ("cta_group::1", "cta_group::2")), "cta_group::1 or ::2"),)
    if op == "mma":
        required = required + (next((q for q in names if q in _KINDS), "kind::<f16, tf32, f8f6f4, i8, ...>"),)
    for q in required:
        if q not in names:
            raise p.error(f"tcgen05.{op} needs .{q}", first)
    for q, tok in quals[1:]:
        if q not in required and q not in accepted:
            raise p.error(f"unknown qualifier .{q} for tcgen05.{op} in litmus tests", tok)
    if op == "commit" and "multicast::cluster" in names:
        # "signal the mbarrier objects in multiple CTAs of the cluster ... ctaMask" (§9.7.16.8.11):
        # [{bar0, bar1}], ctaMask, as for the bulk copies' multicast.
        _count(p, "tcgen05.commit", operands, 2, first)
        cta_mask = _cta_mask(p, "tcgen05.commit", operands[1])
        mbars = _per_cta(p, "tcgen05.commit", operands[0], cta_mask, "mbar")
        return Tcgen05Op(op, None, mbars, (Immediate(cta_mask),), tuple(names), text, first.line, first.column)
    _count(p, f"tcgen05.{op}", operands, len(kinds), first)
    dest = _register(p, f"tcgen05.{op}", operands[0]) if kinds.startswith("r") else None
    addresses = tuple(_address(p, f"tcgen05.{op}", o) for o, k in zip(operands, kinds) if k == "a")
    values = tuple(_value(p, f"tcgen05.{op}", o) for o, k in zip(operands, kinds) if k == "v")
    return Tcgen05Op(op, dest, addresses, values, tuple(names), text, first.line, first.column)


def _wgmma(p, quals, operands, text, first) -> WgmmaOp | AsyncGroup:
    """§9.7.15.7 ``wgmma.fence.sync.aligned``, ``wgmma.commit_group.sync.aligned``,
    ``wgmma.wait_group.sync.aligned N``; §9.7.15.5.2 ``wgmma.mma_async.sync.aligned.shape.dtype.atype.btype
    rD, [a], [b], scale-d`` (the dialect's one-element reading, :class:`WgmmaOp`; the shape and
    types are kept as written, the scale and transpose immediates of the real instruction left out)."""
    names = [q for q, _ in quals]
    if not names or names[0] not in ("fence", "commit_group", "wait_group", "mma_async"):
        raise p.error("wgmma in litmus tests is wgmma.fence, wgmma.commit_group, wgmma.wait_group or wgmma.mma_async", quals[0][1] if quals else first)
    op = names[0]
    if names[1:3] != ["sync", "aligned"]:
        raise p.error(f"wgmma.{op} needs .sync.aligned", first)
    base = f"wgmma.{op}"
    if op == "mma_async":
        if len(names) != 7:
            raise p.error(f"{base} is {base}.sync.aligned.shape.dtype.atype.btype rD, [a], [b], scale-d in litmus tests", first)
        _count(p, base, operands, 4, first)
        return WgmmaOp(
            op,
            _register(p, base, operands[0]),
            (_address(p, base, operands[1]), _address(p, base, operands[2])),
            _value(p, base, operands[3]),
            tuple(names[1:]),
            text,
            first.line,
            first.column,
        )
    _no_quals(p, base, quals[3:])
    if op == "fence":
        _count(p, base, operands, 0, first)
        return WgmmaOp(op, text=text, line=first.line, column=first.column)
    if op == "commit_group":
        _count(p, base, operands, 0, first)
        return AsyncGroup(op, None, text, first.line, first.column, kind="wgmma")
    return AsyncGroup(op, _group_count(p, base, operands, first), text, first.line, first.column, kind="wgmma")


_PROXY_KINDS = ("alias", "texture", "surface", "constant", "async")


#: §9.7.13.4: each ``.sync_restrict`` state space and the one ``.sem`` it goes with.
_SYNC_RESTRICT = {"sync_restrict::shared::cta": "release", "sync_restrict::shared::cluster": "acquire"}


def _fence(p, base, quals, operands, text, first) -> Fence | ProxyFence:
    """§9.7.13.4: ``fence{.sem}.scope`` (``.acq_rel`` when no ``.sem``), ``membar.level`` (a
    synonym of ``fence.sc`` with ``.gl`` meaning ``.gpu``), ``fence.proxy.kind``,
    ``fence.mbarrier_init.release.cluster``, ``fence.{acquire,release}.sync_restrict::...``,
    ``fence.proxy.async::generic.{acquire,release}.sync_restrict::...``. "When .sync_restrict is
    .sync_restrict::shared::cta, .sem must be .release ... .sync_restrict::shared::cluster, .sem must
    be .acquire ... .scope must be specified as .cluster"."""
    names = [q for q, _ in quals]
    if base == "fence" and names[:2] == ["proxy", "tensormap::generic"]:
        return _tensormap_fence(p, quals[2:], operands, text, first)
    if operands:
        raise p.error(f"{base} takes no operands", operands[0][1])
    if names[:1] == ["proxy"]:
        if len(quals) < 2:
            raise p.error(f"{base}.proxy needs a proxy kind (.alias, .texture, .surface, .constant, .async, .async::generic)", first)
        kind, tok = quals[1]
        if kind == "tensormap::generic":
            raise p.error("membar.proxy has no .tensormap::generic (write fence.proxy.tensormap::generic)", tok)
        if kind == "async::generic" and base == "fence":
            sem, scope, restrict = _fence_quals(p, base + ".proxy.async::generic", quals[2:], first)
            if restrict not in ("shared::cta", "shared::cluster"):
                raise p.error("fence.proxy.async::generic needs .sync_restrict::shared::cta (release) or ::shared::cluster (acquire)", first)
            return ProxyFence(kind, text, first.line, first.column, sem, scope, restrict)
        if kind not in _PROXY_KINDS:
            raise p.error(f"unknown proxy kind .{kind} for {base}.proxy", tok)
        for q, qtok in quals[2:]:
            if not (kind == "async" and q in ("global", "shared::cta", "shared::cluster", "shared")):
                raise p.error(f"unknown qualifier .{q} for {base}.proxy.{kind}", qtok)
        return ProxyFence(kind, text, first.line, first.column)
    if base == "membar":
        if len(quals) != 1 or quals[0][0] not in _MEMBAR_LEVELS:
            tok = quals[0][1] if quals else first
            raise p.error("membar needs one level: .cta, .gl or .sys", tok)
        return Fence("sc", _MEMBAR_LEVELS[quals[0][0]], text, first.line, first.column)
    sem, scope, restrict = _fence_quals(p, base, quals, first)
    return Fence(sem, scope, text, first.line, first.column, restrict)


def _tensormap_fence(p, quals, operands, text, first) -> ProxyFence:
    """§9.7.13.4 ``fence.proxy.tensormap::generic.release.scope`` and
    ``fence.proxy.tensormap::generic.acquire.scope [addr], 128``: a uni-directional proxy fence from
    the generic proxy to the tensormap proxy. "The only supported value for the size operand is 128"
    and the acquire form names the tensor map it orders."""
    base = "fence.proxy.tensormap::generic"
    names = [q for q, _ in quals]
    if len(names) != 2 or names[0] not in ("release", "acquire") or names[1] not in SCOPES:
        raise p.error(f"{base} is {base}.release.scope or {base}.acquire.scope [addr], 128", quals[0][1] if quals else first)
    sem, scope = names
    if sem == "release":
        if operands:
            raise p.error(f"{base}.release takes no operands", operands[0][1])
        return ProxyFence("tensormap::generic", text, first.line, first.column, sem, scope)
    _count(p, base + ".acquire", operands, 2, first)
    size = _value(p, base, operands[1])
    if not isinstance(size, Immediate) or size.value != 128:
        raise p.error(f"{base}.acquire's size is 128", operands[1][1])
    return ProxyFence("tensormap::generic", text, first.line, first.column, sem, scope, address=_address(p, base, operands[0]))


def _fence_quals(p: Parser, base: str, quals, first: Token) -> tuple[str, str, str | None]:
    """The ``.sem`` (default ``.acq_rel``), ``.scope`` and restriction of a fence, checked."""
    sem = scope = restrict = None
    for q, tok in quals:
        if q in ("sc", "acq_rel", "acquire", "release"):
            if sem is not None:
                raise p.error(f"{base} has two semantics: .{sem} and .{q}", tok)
            sem = q
        elif q in SCOPES:
            if scope is not None:
                raise p.error(f"{base} has two scopes: .{scope} and .{q}", tok)
            scope = q
        elif q in _SYNC_RESTRICT or q == "mbarrier_init":
            if restrict is not None:
                raise p.error(f"{base} has two restrictions: .{restrict} and .{q}", tok)
            restrict = q
        else:
            raise p.error(f"unknown qualifier .{q} for {base}", tok)
    if scope is None:
        raise p.error(f"{base} needs a scope (.cta, .cluster, .gpu or .sys)", first)
    if restrict == "mbarrier_init" and (sem, scope) != ("release", "cluster"):
        raise p.error("fence.mbarrier_init is .release.cluster only (§9.7.13.4)", first)
    if restrict in _SYNC_RESTRICT:
        if sem != _SYNC_RESTRICT[restrict]:
            raise p.error(f"with .{restrict} the fence's .sem must be .{_SYNC_RESTRICT[restrict]} (§9.7.13.4)", first)
        if scope != "cluster":
            raise p.error(f"with .{restrict} the fence's .scope must be .cluster (§9.7.13.4)", first)
    if restrict is not None:
        restrict = restrict.removeprefix("sync_restrict::")
    return sem or "acq_rel", scope, restrict


def _barrier(p, base, quals, operands, text, first) -> BarrierOp:
    """§9.7.13.1 ``bar{.cta}.{sync,arrive,red}``, ``barrier{.cta}.{sync,arrive,red}{.aligned}``;
    §9.7.13.3 ``barrier.cluster.{arrive,wait}``. Operand reading: see the module docstring."""
    names = [q for q, _ in quals]
    level = "cta"
    i = 0
    if names[:1] == ["cluster"]:
        if base != "barrier":
            raise p.error("the cluster barrier is spelled barrier.cluster", quals[0][1])
        level = "cluster"
        i = 1
    elif names[:1] == ["cta"]:
        i = 1
    if i >= len(quals):
        raise p.error(f"{base} needs an operation (.sync, .arrive{', .red' if level == 'cta' else ', .wait'})", first)
    op, optok = quals[i]
    allowed_ops = ("sync", "arrive", "red") if level == "cta" else ("arrive", "wait")
    if op not in allowed_ops:
        raise p.error(f"unknown {level} barrier operation .{op} (expected " + ", ".join("." + a for a in allowed_ops) + ")", optok)
    rest = quals[i + 1 :]
    if level == "cluster":
        for q, tok in rest:
            allowed = ("aligned", "relaxed", "release") if op == "arrive" else ("aligned", "acquire")
            if q not in allowed:
                raise p.error(f"unknown qualifier .{q} for barrier.cluster.{op}", tok)
        if operands:
            raise p.error(f"barrier.cluster.{op} takes no operands", operands[0][1])
        return BarrierOp("cluster", op, (), qualifiers=tuple(q for q, _ in rest), text=text, line=first.line, column=first.column)
    if op == "red":
        red = [q for q, _ in rest if q in ("popc", "and", "or")]
        for q, tok in rest:
            if q not in ("popc", "and", "or", "u32", "pred", "aligned"):
                raise p.error(f"unknown qualifier .{q} for {base}.red", tok)
        if len(red) != 1:
            raise p.error(f"{base}.red needs one reduction: .popc, .and or .or", optok)
        if not 3 <= len(operands) <= 5:
            raise p.error(
                f"{base}.red takes a destination, 1 to 3 barrier operands and a source, found {len(operands)} operand(s)",
                operands[-1][1] if operands else first,
            )
        return BarrierOp(
            "cta",
            "red",
            tuple(_value(p, base, o) for o in operands[1:-1]),
            dest=_register(p, base, operands[0]),
            predicate=_value(p, base, operands[-1]),
            reduction=red[0],
            qualifiers=tuple(q for q, _ in rest),
            text=text,
            line=first.line,
            column=first.column,
        )
    for q, tok in rest:
        if q != "aligned":
            raise p.error(f"unknown qualifier .{q} for {base}.{op}", tok)
    if not 1 <= len(operands) <= 3:
        raise p.error(
            f"{text.split()[0]} takes 1 to 3 operands (barrier; instance, barrier; instance, barrier, quorum), found {len(operands)}",
            operands[-1][1] if operands else first,
        )
    return BarrierOp(
        "cta", op, tuple(_value(p, base, o) for o in operands), qualifiers=tuple(q for q, _ in rest), text=text, line=first.line, column=first.column
    )


# ---- checks that need the whole test ----------------------------------------------------------------


def _check(test: LitmusTest, p: Parser) -> None:
    nthreads = len(test.threads)
    declared: dict[str, InitEntry] = {}
    for entry in test.init:
        if isinstance(entry, RegisterInit):
            if entry.thread >= nthreads:
                raise p.error(f"unknown thread P{entry.thread} in the initial state (the test has {nthreads})", line=entry.line, column=entry.column)
            continue
        if isinstance(entry, AliasDecl):
            if entry.target not in declared:
                raise p.error(
                    f"alias {_quoted(entry.name)} names undeclared location {_quoted(entry.target)} (declare it before the alias)",
                    line=entry.line,
                    column=entry.column,
                )
            if entry.name == entry.target:
                raise p.error(f"location {_quoted(entry.name)} cannot alias itself", line=entry.line, column=entry.column)
        if entry.name in declared:
            raise p.error(f"location {_quoted(entry.name)} declared twice in the initial state", line=entry.line, column=entry.column)
        declared[entry.name] = entry
    for code in test.code:
        labels: dict[str, Label] = {}
        for ins in code:
            if isinstance(ins, Label):
                if ins.name in labels:
                    raise p.error(f"label {_quoted(ins.name)} defined twice in this thread", line=ins.line, column=ins.column)
                labels[ins.name] = ins
        for ins in code:
            if isinstance(ins, (Jump, Branch)) and ins.target not in labels:
                raise p.error(f"unknown label {_quoted(ins.target)} (not defined in this thread)", line=ins.line, column=ins.column)
    for code in test.code:
        _check_pending_counts(code, p)
        _check_wgmma_registers(code, p)
    maps = _check_tensor_maps(test, p)
    known = set(test.locations_used())
    for tok in p.condition_locations:
        if tok.text not in known:
            raise p.error(f"unknown location {_quoted(tok.text)} in the condition: no initial value and no instruction names it", tok)
        if tok.text in maps:
            raise p.error(f"{_quoted(tok.text)} is a tensor map: its value is opaque (§5.5.8) and not in the condition", tok)


def tensor_maps(test: LitmusTest) -> tuple[str, ...]:
    """The locations a test uses as tensor maps (§5.5.8): the tensorMap of its tensor copies, what
    tensormap.replace and tensormap.cp_fenceproxy write and copy, what
    fence.proxy.tensormap::generic.acquire names."""
    seen: dict[str, None] = {}
    for code in test.code:
        for ins in code:
            if isinstance(ins, TensorCopy):
                seen.setdefault(ins.tensor_map, None)
            elif isinstance(ins, TensormapOp):
                seen.setdefault(ins.address, None)
                if ins.op == "cp_fenceproxy":
                    seen.setdefault(ins.source, None)
            elif isinstance(ins, ProxyFence) and ins.address is not None:
                seen.setdefault(ins.address, None)
    return tuple(seen)


def _check_tensor_maps(test: LitmusTest, p: Parser) -> frozenset[str]:
    """A tensor map is "a 128-byte opaque object" (§5.5.8) that the dialect gives one field, the
    address of the tensor it describes: it starts as ``tmap = &x`` and only the tensor instructions
    touch it (another access would read or write an opaque object as a number). Every other pointer
    value is refused by the lowering (litmus locations hold numbers)."""
    maps = frozenset(tensor_maps(test))
    for entry in test.init:
        if isinstance(entry, LocationInit) and entry.pointer is not None:
            # Other pointer values parse (herd's syntax) and are refused when the test is lowered.
            if entry.name in maps and entry.pointer in maps:
                raise p.error(
                    f"tensor map {_quoted(entry.name)} describes tensor map {_quoted(entry.pointer)}, not a tensor", line=entry.line, column=entry.column
                )
        if isinstance(entry, AliasDecl) and (entry.target in maps or entry.name in maps):
            raise p.error(f"{_quoted(entry.name)}: aliases of tensor maps are not supported in litmus tests", line=entry.line, column=entry.column)
    described = {e.name for e in test.init if isinstance(e, LocationInit) and e.pointer is not None}
    for code in test.code:
        for ins in code:
            for name in _tensor_map_operands(ins):
                if name not in described:
                    raise p.error(
                        f"tensor map {_quoted(name)} needs an initial value {name}=&tensor (the tensor it describes, §5.5.8)",
                        line=getattr(ins, "line", None),
                        column=getattr(ins, "column", None),
                    )
    for code in test.code:
        for ins in code:
            own = _tensor_map_operands(ins)
            for name in _locations_named(ins):
                if name in maps and name not in own:
                    raise p.error(
                        f"{_quoted(name)} is a tensor map: only cp.async.bulk.tensor, tensormap.replace, tensormap.cp_fenceproxy and "
                        "fence.proxy.tensormap::generic access it",
                        line=getattr(ins, "line", None),
                        column=getattr(ins, "column", None),
                    )
            if isinstance(ins, TensormapOp) and ins.op == "replace" and ins.source in maps:
                raise p.error(f"tensormap.replace's new address {_quoted(ins.source)} is a tensor map, not a tensor", line=ins.line, column=ins.column)
    return maps


def _tensor_map_operands(ins: Instruction) -> tuple[str, ...]:
    if isinstance(ins, TensorCopy):
        return (ins.tensor_map,)
    if isinstance(ins, TensormapOp):
        return (ins.address, ins.source) if ins.op == "cp_fenceproxy" else (ins.address,)
    if isinstance(ins, ProxyFence) and ins.address is not None:
        return (ins.address,)
    return ()


def _locations_named(ins: Instruction) -> tuple[str, ...]:
    """Every location an instruction names (its address operands)."""
    names: list[str] = []
    for field in ("dst", "src", "tensor_map", "shared", "mbar", "source", "address"):
        value = getattr(ins, field, None)
        if isinstance(value, str):
            names.append(value)
    names.extend(getattr(ins, "addresses", ()))
    for pair in getattr(ins, "multicast", ()):
        names.extend(pair)
    return tuple(names)


def _check_pending_counts(code: tuple[Instruction, ...], p: Parser) -> None:
    """§9.7.13.15.17: "The state operand ... must be the result of a prior mbarrier.arrive.noComplete
    or mbarrier.arrive_drop.noComplete instruction. Otherwise, the behavior is undefined": every
    instruction of the thread that writes the register pending_count reads must be such an arrive,
    and one must come before it."""
    for n, ins in enumerate(code):
        if not (isinstance(ins, Local) and ins.op == "pending_count"):
            continue
        state = ins.sources[0]
        writers = [w for w in code if state.name in registers_written(w)] if isinstance(state, Register) else []
        good = all(isinstance(w, MbarrierOp) and w.op in ("arrive", "arrive_drop") and "noComplete" in w.qualifiers for w in writers)
        if not writers or not good or not any(w in writers for w in code[:n]):
            raise p.error(
                "mbarrier.pending_count's state must be the result of a prior mbarrier.arrive.noComplete or arrive_drop.noComplete "
                "(and of nothing else in the thread); otherwise the behavior is undefined (§9.7.13.15.17)",
                line=ins.line,
                column=ins.column,
            )


def _check_wgmma_registers(code: tuple[Instruction, ...], p: Parser) -> None:
    """§9.7.15.7.1 and §9.7.15.7.3, read along the thread's code in order (the dialect's threads are
    short; a loop is checked once around): wgmma.fence must be issued "before the first
    wgmma.mma_async operation" and "between a register access by a thread in the warpgroup and any
    wgmma.mma_async instruction that accesses the same registers ... except when these are
    accumulator register accesses across multiple wgmma.mma_async instructions of the same shape";
    and "accessing the accumulator register ... of a wgmma.mma_async instruction without first
    performing a wgmma.wait_group instruction that waits on a wgmma-group including that
    wgmma.mma_async instruction is undefined behavior"."""
    fenced = False
    touched: set[str] = set()  # registers accessed by other instructions since the last wgmma.fence
    pending: dict[str, int | None] = {}  # accumulator -> its wgmma-group (None: not yet committed)
    shapes: dict[str, str] = {}
    committed = 0

    def fail(ins: Instruction, message: str) -> PtxSpecError:
        return p.error(message, line=ins.line, column=ins.column)

    for ins in code:
        if isinstance(ins, WgmmaOp) and ins.op == "fence":
            fenced, touched = True, set()
            continue
        if isinstance(ins, AsyncGroup) and ins.kind == "wgmma":
            if ins.op == "commit_group":
                pending = {r: committed if g is None else g for r, g in pending.items()}
                committed += 1
            else:
                done = committed - (ins.pending or 0)
                pending = {r: g for r, g in pending.items() if g is None or g >= done}
            continue
        if isinstance(ins, WgmmaOp):
            assert ins.dest is not None, "wgmma.mma_async has an accumulator"
            d = ins.dest.name
            if not fenced:
                raise fail(ins, "wgmma.fence must be issued before the first wgmma.mma_async (§9.7.15.7.1); otherwise the behavior is undefined")
            if d in touched:
                raise fail(ins, f"register {d} was accessed since the last wgmma.fence: issue wgmma.fence before this wgmma.mma_async (§9.7.15.7.1)")
            if d in pending and shapes.get(d) != ins.qualifiers[2]:
                raise fail(ins, f"accumulator {d} of a pending wgmma.mma_async of another shape: issue wgmma.wait_group and wgmma.fence first (§9.7.15.7.1)")
            pending[d], shapes[d] = None, ins.qualifiers[2]
            continue
        used = set(registers_written(ins)) | set(registers_read(ins))
        for r in used & set(pending):
            raise fail(ins, f"register {r} is the accumulator of a wgmma.mma_async whose wgmma-group was not waited for (§9.7.15.7.3: undefined behavior)")
        touched |= used


def registers_read(ins: Instruction) -> tuple[str, ...]:
    """The registers an instruction reads (its register operands), in operand order."""
    names = []
    for field in ("left", "right", "value", "predicate", "size", "src_size", "scale_d", "sources", "operands", "coordinates", "im2col_info", "cache_policy"):
        value = getattr(ins, field, None)
        for op in value if isinstance(value, tuple) else (value,):
            if isinstance(op, Register):
                names.append(op.name)
    return tuple(names)


def registers_written(ins: Instruction) -> tuple[str, ...]:
    """The register an instruction writes (its destination), if any."""
    dest = getattr(ins, "dest", None)
    return (dest.name,) if isinstance(dest, Register) else ()


def _terms(formula: Formula) -> tuple[Term, ...]:
    if isinstance(formula, Compare):
        return (formula.left, formula.right)
    if isinstance(formula, Not):
        return _terms(formula.operand)
    if isinstance(formula, (And, Or)):
        return tuple(t for f in formula.operands for t in _terms(f))
    return ()


def condition_terms(condition: Condition) -> tuple[Term, ...]:
    """The terms of a condition, left to right (duplicates kept)."""
    return _terms(condition.formula)


# ---- entry points ------------------------------------------------------------------------------------


def parse(text: str, source: str = "<string>") -> LitmusTest:
    """Parse the text of one litmus test; ``source`` names it in error locations."""
    if not isinstance(text, str):
        raise PtxSpecError("litmus text must be a string", where=Location(source))
    parser = Parser(text, source)
    try:
        return parser.parse()
    except RecursionError:  # only when called with little stack left: the condition's depth is bounded
        raise PtxSpecError("the test nests too deeply for the stack left", where=parser.loc()) from None


def parse_file(path: str | Path) -> LitmusTest:
    """Read and parse one ``.litmus`` file (UTF-8; a byte-order mark is allowed)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PtxSpecError(f"cannot read the litmus file: {exc.strerror or exc}", where=Location(str(path))) from None
    return parse(decode(data, str(path)), str(path))


def decode(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text; a byte that is not UTF-8 is an error at its line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8-sig")) + 1
        where = Location(source, data.count(b"\n", 0, exc.start) + 1, column)
        raise PtxSpecError(f"the file is not UTF-8: byte 0x{data[exc.start]:02x} ({exc.reason})", where=where) from None


# ---- back to text ------------------------------------------------------------------------------------


def _operand_text(op: Operand) -> str:
    if isinstance(op, Register):
        return op.name
    if isinstance(op, Immediate):
        return str(op.value)
    if isinstance(op, TensorOperand):
        return f"[{op.tensor_map}, {{" + ", ".join(_operand_text(c) for c in op.coordinates) + "}]"
    if isinstance(op, LocationList):
        return "[{" + ", ".join(op.names) + "}]"
    if isinstance(op, VectorOperand):
        return "{" + ", ".join(_operand_text(v) for v in op.values) + "}"
    return op.name


def format_instruction(ins: Instruction) -> str:
    """Canonical text of one instruction (parses back to an equal instruction)."""
    if isinstance(ins, Label):
        return f"{ins.name}:"
    if isinstance(ins, Jump):
        return f"goto {ins.target}"
    if isinstance(ins, Branch):
        return f"{ins.opcode} {_operand_text(ins.left)}, {_operand_text(ins.right)}, {ins.target}"
    if isinstance(ins, Local) and ins.op == "pending_count":
        return f"mbarrier.pending_count.b64 {ins.dest.name}, {_operand_text(ins.sources[0])}"
    if isinstance(ins, Local):
        return f"{ins.op} {ins.dest.name}, " + ", ".join(_operand_text(s) for s in ins.sources)
    if isinstance(ins, Load):
        quals = _order_text(ins.order, ins.scope) + "".join("." + q for q in ins.qualifiers)
        return f"{ins.opcode}{quals} {ins.dest.name}, {ins.address}"
    if isinstance(ins, Store):
        quals = _order_text(ins.order, ins.scope) + "".join("." + q for q in ins.qualifiers)
        return f"{ins.opcode}{quals} {ins.address}, {_operand_text(ins.value)}"
    if isinstance(ins, Atomic):
        quals = f".{ins.order}.{ins.scope}" + "".join("." + q for q in ins.qualifiers) + f".{ins.op}"
        ops = ([ins.dest.name] if ins.dest else []) + [ins.address] + [_operand_text(o) for o in ins.operands]
        return f"{ins.opcode}{quals} " + ", ".join(ops)
    if isinstance(ins, MbarrierOp):
        quals = (f".{ins.order}.{ins.scope}" if ins.order else "") + "".join("." + q for q in ins.qualifiers)
        dest = [ins.dest.name if ins.dest else "_"] if ins.op in ("arrive", "arrive_drop", "test_wait", "try_wait") else []
        return f"mbarrier.{ins.op}{quals} " + ", ".join(dest + [ins.address] + [_operand_text(o) for o in ins.operands])
    if isinstance(ins, Tcgen05Op):
        operands = ([ins.dest.name] if ins.dest else []) + list(ins.addresses) + [_operand_text(v) for v in ins.values]
        if ins.op == "st":
            operands = [ins.addresses[0], _operand_text(ins.values[0])]
        if "multicast::cluster" in ins.qualifiers:
            operands = [_operand_text(LocationList(ins.addresses)), _operand_text(ins.values[0])]
        return f"tcgen05.{ins.op}" + "".join("." + q for q in ins.qualifiers) + (" " + ", ".join(operands) if operands else "")
    if isinstance(ins, AsyncCopy):
        extra = "" if ins.src_size is None else f", {_operand_text(ins.src_size)}"
        quals = ".".join(ins.qualifiers[:3]) + _hint_text(ins.cache_policy) + "".join("." + q for q in ins.qualifiers[3:])
        return f"cp.async.{quals} {ins.dst}, {ins.src}, {_operand_text(ins.size)}{extra}{_policy_text(ins.cache_policy)}"
    if isinstance(ins, AsyncGroup):
        name = {"cp.async": "cp.async", "bulk": "cp.async.bulk", "wgmma": "wgmma"}[ins.kind]
        suffix = ".sync.aligned" if ins.kind == "wgmma" else ""
        return f"{name}.{ins.op}" + (".read" if ins.read else "") + suffix + ("" if ins.pending is None else f" {ins.pending}")
    if isinstance(ins, WgmmaOp):
        if ins.op == "fence":
            return "wgmma.fence.sync.aligned"
        assert ins.dest is not None and ins.scale_d is not None, "wgmma.mma_async has an accumulator and scale-d"
        operands = [ins.dest.name, *ins.addresses, _operand_text(ins.scale_d)]
        return "wgmma.mma_async" + "".join("." + q for q in ins.qualifiers) + " " + ", ".join(operands)
    if isinstance(ins, AsyncArrive):
        return "cp.async.mbarrier.arrive" + "".join("." + q for q in ins.qualifiers) + f" {ins.mbar}"
    if isinstance(ins, AsyncStore):
        quals = f".{ins.order}.{ins.scope}" + "".join("." + q for q in ins.qualifiers if q in _STATE_SPACES or q.startswith("mbarrier"))
        quals += "".join(f".{q}" for q in (ins.reduce_op,) if q) + "".join(
            "." + q for q in ins.qualifiers if not (q in _STATE_SPACES or q.startswith("mbarrier"))
        )
        operands = [ins.address, _operand_text(ins.value)] + ([ins.mbar] if ins.mbar is not None else [])
        return f"{ins.opcode}.async{quals} " + ", ".join(operands)
    if isinstance(ins, TensorCopy):
        name = "cp.async.bulk.tensor" if ins.reduce_op is None else "cp.reduce.async.bulk.tensor"
        dim, dst, src, mode, completion = ins.qualifiers[:5]
        extras = "".join("." + q for q in ins.qualifiers[5:] if q != ins.reduce_op)
        quals = f".{dim}.{dst}.{src}" + (f".{ins.reduce_op}" if ins.reduce_op else "") + f".{mode}.{completion}{extras}"
        tensor = _operand_text(TensorOperand(ins.tensor_map, ins.coordinates))
        info = [_operand_text(VectorOperand(ins.im2col_info))] if ins.im2col_info else []
        if ins.to_global:
            operands = [tensor, ins.shared]
        elif ins.multicast:
            operands = [_multicast_text(ins.multicast, 0), tensor, _multicast_text(ins.multicast, 1), *info, str(ins.cta_mask)]
        else:
            operands = [ins.shared, tensor] + ([ins.mbar] if ins.mbar is not None else []) + info
        return f"{name}{quals}{_hint_text(ins.cache_policy)} " + ", ".join(operands) + _policy_text(ins.cache_policy)
    if isinstance(ins, TensormapOp):
        if ins.op == "replace":
            return "tensormap.replace" + "".join("." + q for q in ins.qualifiers) + f" {ins.address}, {ins.source}"
        return "tensormap.cp_fenceproxy" + "".join("." + q for q in ins.qualifiers) + f" {ins.address}, {ins.source}, 128"
    if isinstance(ins, BulkCopy):
        name = "cp.async.bulk" if ins.reduce_op is None else "cp.reduce.async.bulk"
        operands = [ins.dst, ins.src, _operand_text(ins.size)] + ([ins.mbar] if ins.mbar is not None else [])
        if ins.multicast:
            operands = [_multicast_text(ins.multicast, 0), ins.src, _operand_text(ins.size), _multicast_text(ins.multicast, 1), str(ins.cta_mask)]
        # .level::cache_hint after the completion mechanism (and multicast), before .redOp.type
        at = 3 if ins.reduce_op is not None else len(ins.qualifiers)
        quals = "".join("." + q for q in ins.qualifiers[:at]) + _hint_text(ins.cache_policy) + "".join("." + q for q in ins.qualifiers[at:])
        return f"{name}{quals} " + ", ".join(operands) + _policy_text(ins.cache_policy)
    if isinstance(ins, Fence):
        if ins.restrict == "mbarrier_init":
            return f"fence.mbarrier_init.{ins.sem}.{ins.scope}"
        return f"fence.{ins.sem}" + _restrict_text(ins.restrict) + f".{ins.scope}"
    if isinstance(ins, ProxyFence):
        if ins.sem is None:
            return f"fence.proxy.{ins.kind}"
        if ins.address is not None:
            return f"fence.proxy.{ins.kind}.{ins.sem}.{ins.scope} {ins.address}, 128"
        return f"fence.proxy.{ins.kind}.{ins.sem}" + _restrict_text(ins.restrict) + f".{ins.scope}"
    if isinstance(ins, BarrierOp):
        if ins.level == "cluster":
            return f"barrier.cluster.{ins.op}" + "".join("." + q for q in ins.qualifiers)
        quals = "".join("." + q for q in ins.qualifiers)
        if ins.op == "red":
            assert ins.dest is not None and ins.predicate is not None, "bar.red has a destination and a predicate"
            ops = [ins.dest.name] + [_operand_text(o) for o in ins.operands] + [_operand_text(ins.predicate)]
            return f"bar.cta.red{quals} " + ", ".join(ops)
        return f"bar.cta.{ins.op}{quals} " + ", ".join(_operand_text(o) for o in ins.operands)
    raise TypeError(ins)


def _hint_text(policy: Register | Immediate | None) -> str:
    return "" if policy is None else f".{CACHE_HINT}"


def _policy_text(policy: Register | Immediate | None) -> str:
    return "" if policy is None else f", {_operand_text(policy)}"


def _multicast_text(pairs: tuple[tuple[str, str], ...], index: int) -> str:
    return "[{" + ", ".join(pair[index] for pair in pairs) + "}]"


def _restrict_text(restrict: str | None) -> str:
    return "" if restrict is None else f".sync_restrict::{restrict}"


def _order_text(order: str, scope: str | None) -> str:
    if order == "volatile":
        return ".volatile"
    if order == "mmio":
        return ".mmio.relaxed.sys"
    return f".{order}" + (f".{scope}" if scope else "")


def _term_text(term: Term) -> str:
    if isinstance(term, RegisterTerm):
        return f"P{term.thread}:{term.register}"
    if isinstance(term, LocationTerm):
        return term.name
    return str(term.value)


def format_formula(formula: Formula) -> str:
    if isinstance(formula, Compare):
        return f"{_term_text(formula.left)} {formula.op} {_term_text(formula.right)}"
    if isinstance(formula, Not):
        return f"~({format_formula(formula.operand)})"
    if isinstance(formula, And):
        return "(" + " /\\ ".join(format_formula(f) for f in formula.operands) + ")"
    if isinstance(formula, Or):
        return "(" + " \\/ ".join(format_formula(f) for f in formula.operands) + ")"
    return "true"


def format_test(test: LitmusTest) -> str:
    """The test as ``.litmus`` text (parses back to an equal :class:`LitmusTest`)."""
    lines = [f"{test.arch} {test.name}"]
    lines += [f'"{c}"' for c in test.comments]
    lines.append("{")
    for entry in test.init:
        if isinstance(entry, AliasDecl):
            lines.append(f"{entry.name} @ {entry.proxy} aliases {entry.target};")
        else:
            value = f"&{entry.pointer}" if entry.pointer is not None else str(entry.value)
            head = entry.name if isinstance(entry, LocationInit) else f"P{entry.thread}:{entry.register}"
            lines.append(f"{head}={value};")
    lines.append("}")
    heads = []
    for t in test.threads:
        where = f"cta {t.cta}," + (f"cluster {t.cluster}," if t.cluster is not None else "") + f"gpu {t.gpu}"
        heads.append(f"{t.name}@{where}")
    lines.append(" | ".join(heads) + " ;")
    height = max((len(c) for c in test.code), default=0)
    for row in range(height):
        cells = [format_instruction(c[row]) if row < len(c) else "" for c in test.code]
        lines.append(" | ".join(cells) + " ;")
    if test.locations:
        lines.append("locations [" + "; ".join(_term_text(t) for t in test.locations) + ";]")
    lines.append(f"{test.condition.quantifier} ({format_formula(test.condition.formula)})")
    return "\n".join(lines) + "\n"
