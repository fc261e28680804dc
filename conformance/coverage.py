"""How much of §9.7 evaluates: the instruction names of the manual's headings
(:data:`ptxspec.spec.manual_names.NAMES`) that have a catalogue family with a semantic function::

    python -m ptxspec.conformance.coverage            # the share, then the names that do not evaluate
    python -m ptxspec.conformance.coverage --json

A name evaluates when some family of the catalogue whose semantics is registered
(:data:`ptxspec.semantics.instructions.SEMANTICS`) is that instruction: its opcode is the name's
first word and each further word of the name is a qualifier the family takes or the stem of one
(``ld.global.nc``, ``wgmma.mma_async.sp``, ``mma.sp::ordered_metadata``, ``tcgen05.wait`` for
``.wait::ld``; ``add`` for ``add``).
"""

from __future__ import annotations

import argparse
import json

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
