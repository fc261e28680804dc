"""How much of §9.7 evaluates: the instruction names of the manual's headings
(:data:`ptxspec.spec.manual_names.NAMES`) that have a catalogue family with a semantic function::

    python -m ptxspec.conformance.coverage            # the share, then the names that do not evaluate
    python -m ptxspec.conformance.coverage --json

It also lists the legal forms of a family (:func:`legal_forms`: every combination of its slots that
no rule of the catalogue forbids) and every scalar form (:func:`scalar_forms`: the forms whose
semantics takes one thread's registers), which the batched paths' tests and ``bench/throughput.py``
go through.

A name evaluates when some family of the catalogue whose semantics is registered
(:data:`ptxspec.semantics.instructions.SEMANTICS`) is that instruction: its opcode is the name's
first word and each further word of the name is a qualifier the family takes or the stem of one
(``ld.global.nc``, ``wgmma.mma_async.sp``, ``mma.sp::ordered_metadata``, ``tcgen05.wait`` for
``.wait::ld``; ``add`` for ``add``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
from collections.abc import Iterator

from ptxspec.spec.catalogue import CHAPTERS
from ptxspec.spec.manual_names import NAMES


def _names(family) -> set[str]:
    """The words a family's forms may be written with: its opcode's, and its slots' tokens."""
    return {*family.opcode.split("."), *(token for slot in family.slots for token in slot.tokens)}


def _evaluates(name: str, families: list) -> bool:
    opcode, *words = name.split(".")
    # a word names a qualifier, or the stem of one (``tcgen05.wait`` for ``.wait::ld``)
    return any(f.opcode.split(".")[0] == opcode and all(any(t == w or t.startswith(w + "::") for t in _names(f)) for w in words) for f in families)


def evaluable(exclude_chapters: tuple[str, ...] = ()) -> dict[str, bool]:
    """Per name of :data:`NAMES`, whether it evaluates (leaving out the semantics registered by the
    chapter modules named in ``exclude_chapters``, to measure what they add)."""
    import importlib

    from ptxspec.semantics.instructions import SEMANTICS, _load_chapters
    from ptxspec.spec.catalogue import CATALOGUE

    _load_chapters()
    excluded = {f.key for chapter in exclude_chapters for f in importlib.import_module(f"ptxspec.spec.{chapter}").FAMILIES}
    families = [CATALOGUE.family(key) for key in SEMANTICS if key not in excluded]
    return {name: _evaluates(name, families) for name, _ in NAMES}


def choices(family) -> list[tuple[str, ...]]:
    """Per slot of ``family``, the tokens it may hold: "" too for an optional slot."""
    return [slot.tokens if slot.required else ("", *slot.tokens) for slot in family.slots]


def form_of(family, combo):
    """The Form of one token per slot (an empty token: the optional slot left out)."""
    from ptxspec.spec.catalogue import Form

    return Form(family, tuple((slot.name, token) for slot, token in zip(family.slots, combo) if token))


def is_legal(form) -> bool:
    """Whether no rule of the family refuses the form (the targets aside)."""
    return not any(rule.illegal(form) for rule in form.family.rules)


def all_forms(family) -> Iterator:
    """Every slot combination of ``family`` as a Form, legal or not (rules not applied)."""
    for combo in itertools.product(*choices(family)):
        yield form_of(family, combo)


#: Families with more slot combinations than this are sampled by :func:`legal_forms` (the SIMD
#: video instructions: their selectors and masks give up to 1.3 * 10^10 spellings).
ENUMERATE_LIMIT = 100_000


def legal_forms(family, *, sample: int = 200, seed: int = 0) -> list:
    """The legal forms of ``family`` in slot-product order; for a family of more than
    :data:`ENUMERATE_LIMIT` combinations, ``sample`` of them drawn with a seeded generator (the
    same ones on every run)."""
    if math.prod(len(c) for c in choices(family)) <= ENUMERATE_LIMIT:
        return [f for f in all_forms(family) if is_legal(f)]
    rng = random.Random(f"{family.key}/{seed}")
    found: dict[str, object] = {}
    for _ in range(sample * 50):
        form = form_of(family, [rng.choice(c) for c in choices(family)])
        if is_legal(form):
            found.setdefault(form.text, form)
            if len(found) == sample:
                break
    return list(found.values())


def scalar_families() -> list:
    """The catalogue families whose semantics takes one thread's registers (REGISTERS), in
    catalogue order: the scalar forms of issue 22."""
    from ptxspec.semantics.instructions import REGISTERS, SEMANTICS, _load_chapters
    from ptxspec.spec.catalogue import CATALOGUE

    _load_chapters()
    return [f for opcode in CATALOGUE.opcodes for f in CATALOGUE.families(opcode) if f.key in SEMANTICS and SEMANTICS[f.key].operands is REGISTERS]


def scalar_forms(*, per_family: int | None = None, seed: int = 0) -> list:
    """Every legal form of every scalar family (:func:`legal_forms`); with ``per_family``, at most
    that many of each family, a seeded sample where it has more (the same ones on every run)."""
    forms = []
    for family in scalar_families():
        legal = legal_forms(family, sample=per_family or 200, seed=seed)
        if per_family is not None and len(legal) > per_family:
            legal = random.Random(f"{family.key}/{seed}").sample(legal, per_family)
        forms += legal
    return forms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ptxspec.conformance.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="One JSON object: the counts and the names that do not evaluate.")
    parser.add_argument("--without", nargs="*", default=(), help="Leave out the semantics of these chapter modules (e.g. memory_access atomics).")
    args = parser.parse_args(argv)
    unknown = [c for c in args.without if c not in CHAPTERS]
    if unknown:
        parser.exit(2, f"ptxspec: error: --without {unknown[0]}: not a chapter module (they are {', '.join(CHAPTERS)})\n")
    table = evaluable(tuple(args.without))
    sections = dict(NAMES)
    missing = [name for name, ok in table.items() if not ok]
    done = len(table) - len(missing)
    if args.json:
        print(json.dumps({"names": len(table), "evaluable": done, "missing": [[n, sections[n]] for n in missing]}, indent=1))
        return
    lines = [f"{done} of {len(table)} instruction names of §9.7 evaluate ({100 * done / len(table):.0f} %)"]
    lines += [f"  §{sections[name]:14} {name}" for name in missing]
    try:
        print("\n".join(lines))
    except BrokenPipeError:  # a reader that stopped early (| head)
        pass


if __name__ == "__main__":
    main()
