"""The PTX memory consistency model (chapter 8 of the PTX ISA 8.7), written once as relations.

Each notion of §8 is one :class:`~ptxspec.memory_model.relations.Definition` (its section and the
manual's sentence in ``doc``), each axiom of §8.10 one named
:class:`~ptxspec.memory_model.relations.Axiom`. Both engines (``explicit.py``, ``z3_engine.py``)
interpret exactly these expressions over the base vocabulary of ``relations.py`` (computed in
``base.py``). Notation: ``a | b`` union, ``a & b`` intersection, ``a - b`` difference, ``a >> b``
sequence, ``~a`` inverse, ``a.plus()`` transitive closure, ``S.id()`` the identity on a set.

Two models:

``PTX_8_7``
    §8 of PTX ISA 8.7, with proxies (§8.6) and proxy-preserved base causality order (§8.9.5).
``PTX_6_0``
    the proxy-less model of PTX ISA 6.0: morally strong without the same-proxy condition, the
    overlap condition on physical locations, and causality order built on base causality order
    directly.

Readings that are not literally in the manual are said so in the docstring of the definition
concerned (and listed in the report of issue 4).
"""

from __future__ import annotations

from .relations import Axiom, Definition, Model, Ref, RelExpr, relations, sets

(R, W, M, A, I, F, F_SC, F_ACQ_REL, PF, PF_ALIAS, PF_TEXTURE, PF_SURFACE, PF_CONSTANT, B) = sets(
    "R", "W", "M", "A", "I", "F", "F_SC", "F_ACQ_REL", "PF",
    "PF_ALIAS", "PF_TEXTURE", "PF_SURFACE", "PF_CONSTANT", "B",
)
(WEAK, RELAXED, ACQUIRE, RELEASE, ACQ_REL, VOLATILE, MMIO) = sets(
    "WEAK", "RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL", "VOLATILE", "MMIO"
)
(GEN, TEX, SUR, CON) = sets("GEN", "TEX", "SUR", "CON")
(po, loc, vloc, same_thread, same_cta, scope_incl, same_proxy) = relations(
    "po", "loc", "vloc", "same_thread", "same_cta", "scope_incl", "same_proxy"
)
(data, ctrl, addr, bar_sync, rf, co, sc) = relations("data", "ctrl", "addr", "bar_sync", "rf", "co", "sc")

# ---- §8.4 operation types (sets) ----------------------------------------------------------------

NOT_MEMORY = F | PF | B
"""Operations of a trace that are not memory operations: memory fences, proxy fences, barriers."""
EVENTS = M | NOT_MEMORY
STRONG = F | (M - WEAK)
"""§8.4: "A memory fence operation, or a memory operation with a .relaxed, .acquire, .release,
.acq_rel, .volatile, or .mmio qualifier" (an initial write is weak)."""
RELEASE_OPERATION = M & (RELEASE | ACQ_REL)
"""§8.4: "Memory operation with .release or .acq_rel qualifier"."""
ACQUIRE_OPERATION = M & (ACQUIRE | ACQ_REL)
"""§8.4: "Memory operation with .acquire or .acq_rel qualifier"."""


def _definitions(proxies: bool) -> list[Definition]:
    same_address = vloc if proxies else loc
    overlap_completely = same_address | (NOT_MEMORY * EVENTS) | (EVENTS * NOT_MEMORY)
    condition_1 = same_thread | scope_incl
    morally_strong = condition_1 & overlap_completely
    if proxies:
        morally_strong = morally_strong & same_proxy
    ms = Ref("morally_strong")
    obs = Ref("observation_order")
    bco = Ref("base_causality_order")
    rf_ms = ms & rf
    definitions = [
        Definition(
            "morally_strong",
            morally_strong - EVENTS.id(),
            "8.7",
            "'Two operations are said to be morally strong relative to each other if they satisfy "
            "all of the following conditions: 1. The operations are related in program order (i.e, "
            "they are both executed by the same thread), or each operation is strong and specifies "
            "a scope that includes the thread executing the other operation. "
            + ("2. Both operations are performed via the same proxy. " if proxies else "")
            + "3. If both are memory operations, then they overlap completely.' "
            + (
                "Overlap completely = the same virtual address (§8.2.1: 'two memory operations are "
                "said to overlap when they specify the same virtual address and the corresponding "
                "memory locations overlap'); memory fences use the generic proxy (§8.6)."
                if proxies
                else "PTX 6.0 has no proxies: overlap is on the physical location."
            ),
        ),
        Definition(
            "observation_order",
            rf_ms | ((rf_ms >> A.id()).plus() >> rf_ms),
            "8.9.2",
            "'A write W precedes a read R in observation order if: 1. R and W are morally strong "
            "and R reads the value written by W, or 2. For some atomic operation Z, W precedes Z "
            "and Z precedes R in observation order.'",
        ),
        Definition(
            "release_pattern",
            (W & RELEASE_OPERATION).id()
            | (RELEASE_OPERATION.id() >> (po & same_address) >> (W & STRONG).id())
            | (F.id() >> po >> (W & STRONG).id()),
            "8.8",
            "Pairs (first operation, write) of a release pattern on a location M: 'a release "
            "operation on M; or a release operation on M followed by a strong write on M in program "
            "order; or a memory fence followed by a strong write on M in program order.' "
            + ("'On M' is read as the same virtual address (aliases behave as different proxies, §8.6)."
               if proxies else ""),
        ),
        Definition(
            "acquire_pattern",
            (R & ACQUIRE_OPERATION).id()
            | ((R & STRONG).id() >> (po & same_address) >> ACQUIRE_OPERATION.id())
            | ((R & STRONG).id() >> po >> F.id()),
            "8.8",
            "Pairs (read, last operation) of an acquire pattern on a location M: 'an acquire "
            "operation on M; or a strong read on M followed by an acquire operation on M in program "
            "order; or a strong read on M followed by a memory fence in program order.'",
        ),
        Definition(
            "release_acquire_synchronization",
            ms & (Ref("release_pattern") >> obs >> Ref("acquire_pattern")),
            "8.9.4",
            "Item 4: 'A release pattern X synchronizes with an acquire pattern Y, if a write "
            "operation in X precedes a read operation in Y in observation order, and the first "
            "operation in X and the last operation in Y are morally strong.'",
        ),
        Definition(
            "fence_sc_order",
            sc & ms,
            "8.9.3",
            "'Fence-SC order is an acyclic partial order, determined at runtime, that relates every "
            "pair of morally strong fence.sc operations.' (sc is a run-time total order on fence.sc "
            "operations; its morally strong pairs are kept.)",
        ),
        Definition(
            "barrier_synchronization",
            bar_sync,
            "8.9.4",
            "Items 2 and 3: 'A bar{.cta}.sync or bar{.cta}.red or bar{.cta}.arrive operation "
            "synchronizes with a bar{.cta}.sync or bar{.cta}.red operation executed on the same "
            "barrier.' 'A barrier.cluster.arrive operation synchronizes with a barrier.cluster.wait "
            "operation.' Which operations are 'on the same barrier' (one use of it) and when "
            "threads block: base.barrier_options (rules in explicit.py's module docstring).",
        ),
        Definition(
            "synchronizes_with",
            Ref("fence_sc_order") | Ref("barrier_synchronization") | Ref("release_acquire_synchronization"),
            "8.9.4",
            "Item 1: 'A fence.sc operation X synchronizes with a fence.sc operation Y if X precedes "
            "Y in Fence-SC order', with items 2-4 above.",
        ),
        Definition(
            "base_causality_order",
            (po | Ref("synchronizes_with")).plus(),
            "8.9.5",
            "'An operation X precedes an operation Y in base causality order if: 1. X precedes Y in "
            "program order, or 2. X synchronizes with Y, or 3. For some operation Z, X precedes Z in "
            "program order and Z precedes Y in base causality order, or X precedes Z in base "
            "causality order and Z precedes Y in program order, or X precedes Z in base causality "
            "order and Z precedes Y in base causality order.' (the transitive closure of po and "
            "synchronizes-with)",
        ),
    ]
    if proxies:
        definitions += _proxy_definitions(bco)
        preserved = Ref("proxy_preserved_base_causality_order")
    else:
        preserved = M.id() >> bco >> M.id()
    definitions += [
        Definition(
            "causality_order",
            preserved | (obs >> preserved) | (F_SC.id() >> bco >> F_SC.id()),
            "8.9.5",
            "'An operation X precedes an operation Y in causality order if: 1. X precedes Y in "
            + ("proxy-preserved " if proxies else "")
            + "base causality order, or 2. For some operation Z, X precedes Z in observation order, "
            "and Z precedes Y in "
            + ("proxy-preserved " if proxies else "")
            + "base causality order.' Reading: proxy preservation is defined for memory operations "
            "only; between fence.sc operations (which the Fence-SC axiom compares) causality order "
            "is base causality order.",
        ),
        Definition(
            "coherence_order",
            (co & ((I * W) | ms | Ref("causality_order"))).plus(),
            "8.9.6",
            "'There exists a partial transitive order that relates overlapping write operations, "
            "determined at runtime, called the coherence order. Two overlapping write operations "
            "are related in coherence order if they are morally strong or if they are related in "
            "causality order. Two overlapping write operations are unrelated in coherence order if "
            "they are in a data-race, which gives rise to the partial nature of coherence order.' "
            "The base relation co is a run-time total order per physical location (initial write "
            "first); coherence order keeps of it the pairs with the initial write (§8.2.6: W0 is "
            "performed before any thread starts), the morally strong pairs and the pairs in "
            "causality order, closed transitively. Every such partial order arises from some total "
            "co (a linear extension), and the final value of a location is the last write of co, a "
            "maximal write of coherence order. (Causality pairs against co are rejected by the "
            "Coherence axiom.)",
        ),
        Definition(
            "fr",
            (~rf >> Ref("coherence_order")) - M.id(),
            "8.9.7",
            "Communication order, item 3: 'A read R precedes an overlapping write W in communication "
            "order if R returns the value of any byte that was written by a write W' that precedes "
            "W in coherence order.' (from-read; an atomic is one event and is not in fr with itself)",
        ),
        Definition(
            "communication_order",
            rf | Ref("coherence_order") | Ref("fr"),
            "8.9.7",
            "'Communication order is a non-transitive order, determined at runtime, that relates "
            "write operations to other overlapping memory operations': rf (item 1), coherence order "
            "(item 2), fr (item 3).",
        ),
    ]
    return definitions


def _proxy_definitions(bco: RelExpr) -> list[Definition]:
    """§8.9.5 proxy-preserved base causality order, with the proxy fences of §9.7.13.4."""
    fence_of_same_proxy = (
        (SUR.id() >> same_cta >> PF_SURFACE.id())
        | (TEX.id() >> same_cta >> PF_TEXTURE.id())
        | (CON.id() >> same_cta >> PF_CONSTANT.id())
    )
    return [
        Definition(
            "proxy_fence_for",
            fence_of_same_proxy,
            "9.7.13.4",
            "Pairs (memory operation X through a non-generic proxy P, proxy fence fence.proxy.P in "
            "X's CTA). 'The .proxykind qualifier indicates a bi-directional proxy ordering "
            "established between the memory accesses done between the generic proxy and the proxy "
            "specified by .proxykind.' Reading (the mixed-proxy model of NVlabs/mixedproxy, also "
            "Dat3M's ptx-v7.5.cat): the fence converts for accesses of its CTA, like condition 2 of "
            "§8.9.5 (same thread block).",
        ),
        Definition(
            "generic_from",
            GEN.id() | (bco & Ref("proxy_fence_for")),
            "8.9.5",
            "Where a base causality path leaves memory operation X with X's effect in the generic "
            "proxy: X itself if X is generic, or a proxy fence for X's proxy that X precedes in base "
            "causality order (§9.7.13.4).",
        ),
        Definition(
            "generic_to",
            GEN.id() | (bco & ~Ref("proxy_fence_for")),
            "8.9.5",
            "Where a base causality path reaches memory operation Y through the generic proxy: Y "
            "itself if Y is generic, or a proxy fence for Y's proxy that precedes Y in base causality order.",
        ),
        Definition(
            "proxy_preserved_base_causality_order",
            (M.id() >> (bco & vloc & same_proxy & same_cta) >> M.id())
            | (vloc & (Ref("generic_from") >> bco.opt() >> Ref("generic_to")) & (M * M) & bco)
            | (
                (loc - vloc)
                & (Ref("generic_from") >> bco.opt() >> PF_ALIAS.id() >> bco.opt() >> Ref("generic_to"))
                & (M * M)
                & bco
            ),
            "8.9.5",
            "'A memory operation X precedes a memory operation Y in proxy-preserved base causality "
            "order if X precedes Y in base causality order, and: 1. X and Y are performed to the "
            "same address, using the generic proxy, or 2. X and Y are performed to the same address, "
            "using the same proxy, and by the same thread block, or 3. X and Y are aliases and there "
            "is an alias proxy fence along the base causality path from X to Y.' Item 1 is extended "
            "by §9.7.13.4: a path through a proxy fence of X's (or Y's) proxy in its CTA counts as "
            "generic at that end (generic_from, generic_to); item 3 likewise needs generic (or "
            "converted) ends, as in the mixed-proxy model.",
        ),
    ]


def _axioms(proxies: bool) -> list[Axiom]:
    ms = Ref("morally_strong")
    cause = Ref("causality_order")
    fr = Ref("fr")
    dependency = data | ctrl | addr
    return [
        Axiom(
            "Coherence",
            "empty",
            ((W.id() >> cause >> W.id()) & loc) - Ref("coherence_order"),
            "8.10.1",
        ),
        Axiom(
            "Fence-SC",
            "empty",
            ((F_SC.id() >> cause >> F_SC.id()) & ms) - sc,
            "8.10.2",
        ),
        Axiom(
            "Atomicity-single-copy",
            "irreflexive",
            (ms & rf) >> (ms & fr),
            "8.10.3",
        ),
        Axiom(
            "Atomicity-RMW",
            "irreflexive",
            A.id() >> (ms & fr) >> (ms & Ref("coherence_order")),
            "8.10.3",
        ),
        Axiom(
            "No-Thin-Air",
            "acyclic",
            rf | dependency,
            "8.10.4",
        ),
        Axiom(
            "SC-per-location",
            "acyclic",
            # ms & coherence_order = ms & co: morally strong writes keep co's orientation.
            M.id() >> (ms & (po | rf | co | fr)) >> M.id(),
            "8.10.5",
        ),
        Axiom(
            "Causality",
            "irreflexive",
            (rf | fr) >> cause,
            "8.10.6",
        ),
    ]


AXIOM_TEXT = {
    "Coherence": "§8.10.1: 'If a write W precedes an overlapping write W' in causality order, then W "
    "must precede W' in coherence order.'",
    "Fence-SC": "§8.10.2: 'Fence-SC order cannot contradict causality order. For a pair of morally "
    "strong fence.sc operations F1 and F2, if F1 precedes F2 in causality order, then F1 must "
    "precede F2 in Fence-SC order.'",
    "Atomicity-single-copy": "§8.10.3: 'When a read R and a write W are morally strong, then the "
    "following two communications cannot both exist in the same execution, for the set of bytes "
    "accessed by both R and W: R reads any byte from W; R reads any byte from any write W' which "
    "precedes W in coherence order.' (A read returns one write's value here, so this never fails; "
    "kept for the reader.)",
    "Atomicity-RMW": "§8.10.3: 'When an atomic operation A and a write W overlap and are morally "
    "strong, then the following two communications cannot both exist in the same execution, for "
    "the set of bytes accessed by both A and W: A reads any byte from a write W' that precedes W in "
    "coherence order; A follows W in coherence order.'",
    "No-Thin-Air": "§8.10.4: 'Values may not appear out of thin air: an execution cannot "
    "speculatively produce a value in such a way that the speculation becomes self-satisfying "
    "through chains of instruction dependencies and inter-thread communication.'",
    "SC-per-location": "§8.10.5: 'Within any set of overlapping memory operations that are pairwise "
    "morally strong, communication order cannot contradict program order, i.e., a concatenation "
    "of program order between overlapping operations and morally strong relations in "
    "communication order cannot result in a cycle.' (Read as: a cycle of memory operations each "
    "morally strong with the next.)",
    "Causality": "§8.10.6: 'Relations in communication order cannot contradict causality order: 1. If "
    "a read R precedes an overlapping write W in causality order, then R cannot read from W. 2. If "
    "a write W precedes an overlapping read R in causality order, then for any byte accessed by "
    "both R and W, R cannot read from any write W' that precedes W in coherence order.'",
}
"""The manual's sentence for each axiom (``--why`` prints it)."""


def build(name: str, *, proxies: bool) -> Model:
    """The model of §8, with (PTX 7.5 and later) or without (PTX 6.0) proxies."""
    return Model(name=name, definitions=tuple(_definitions(proxies)), axioms=tuple(_axioms(proxies)))


PTX_8_7 = build("ptx-8.7", proxies=True)
"""§8 of PTX ISA 8.7."""

PTX_6_0 = build("ptx-6.0", proxies=False)
"""The proxy-less model of PTX ISA 6.0."""

MODELS = {"ptx-8.7": PTX_8_7, "ptx-6.0": PTX_6_0}
