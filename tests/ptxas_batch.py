"""Shared helpers of the catalogue-versus-ptxas tests (tests/test_matrix_catalogue.py for §9.7.14,
tests/test_wgmma_catalogue.py for §9.7.15): every slot combination of a family, its legal forms,
the catalogue's verdict on a text at a (target, version) request, and the batched comparison with
ptxas whose disagreements must each be explained by a ``Known`` entry.

A plain module (tests/ has no package): the test files import it as ``import ptxas_batch``, which
pytest's default ("prepend") import mode allows by putting tests/ on ``sys.path``, as for
tests/oracle_mpfr.py. What differs between the chapters -- how a text is parsed, how a kernel line
is written, which disagreements are known, the neighbours tried -- stays in the test files and is
passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ptxspec.conformance import coverage
from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec.catalogue import Family, Form
from ptxspec.spec.errors import PtxSpecError

# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------


choices, form_of, is_legal, all_forms = coverage.choices, coverage.form_of, coverage.is_legal, coverage.all_forms


_LEGAL: dict[tuple[str, str], list[Form]] = {}


def legal_forms(family: Family) -> list[Form]:
    """Every legal form of ``family``, in slot-product order (cached by opcode and family key)."""
    key = (family.opcode, family.key)
    if key not in _LEGAL:
        _LEGAL[key] = [f for f in all_forms(family) if is_legal(f)]
    return _LEGAL[key]


def reg(name: str) -> str:
    """The register of operand ``name`` (``d.0`` -> ``%d_0``)."""
    return "%" + name.replace(".", "_")


# ---------------------------------------------------------------------------------------------
# Verdicts and the comparison
# ---------------------------------------------------------------------------------------------

#: (text, category, form or None, request): one instruction to try; ``form`` gives the operands
#: (None for an illegal text: the line writer picks a legal form's).
Case = tuple[str, str, "Form | None", pa.Request]


def catalogue_verdict(parse: Callable[[str], Form], text: str, request: pa.Request) -> tuple[bool, str]:
    """(legal, why not) as the catalogue says it: parsed, and admitted at the request's target."""
    try:
        form = parse(text)
    except PtxSpecError as error:
        return False, str(error)
    if not form.admits(request.version, request.arch):
        return False, f"needs {form.targets}"
    return True, ""


def record(text: str, category: str, request: pa.Request, ours: tuple[bool, str], theirs: tuple[bool, str]) -> dict:
    """A disagreement as ``Known.covers`` reads it."""
    return {
        "family": "",
        "category": category,
        "text": text,
        "request": str(request),
        "catalogue": "legal" if ours[0] else "illegal",
        "catalogue_reason": ours[1],
        "ptxas": "legal" if theirs[0] else "illegal",
        "ptxas_message": theirs[1],
    }


def compare(
    ptxas: str,
    cases: Sequence[Case],
    *,
    parse: Callable[[str], Form],
    line: Callable[[Form | None, str], str],
    known: Sequence[pa.Known],
    chunk: int,
) -> list[dict]:
    """Disagreement records of ``cases`` not covered by ``known``: the cases are grouped by
    request and assembled ``chunk`` lines at a time (``line(form, text)`` writes each)."""
    by_request: dict[pa.Request, list[tuple[str, str, Form | None]]] = {}
    for text, category, form, request in cases:
        by_request.setdefault(request, []).append((text, category, form))
    out = []
    for request, group in sorted(by_request.items()):
        for i in range(0, len(group), chunk):
            part = group[i : i + chunk]
            verdicts = pa.ptxas_verdicts(ptxas, request, [line(form, text) for text, _, form in part])
            for (text, category, _), theirs in zip(part, verdicts):
                ours = catalogue_verdict(parse, text, request)
                if ours[0] != theirs[0]:
                    found = record(text, category, request, ours, theirs)
                    if not any(k.covers(found) for k in known):
                        out.append(found)
    return out


def example_request(where: str) -> pa.Request:
    """A ``Known`` example's ``"sm_90a@8.7"`` as a Request."""
    arch, version = where.split("@")
    return pa.Request(arch, tuple(int(x) for x in version.split(".")))


def changed_form(family, combo: list, k: int, rng) -> str | None:
    """``combo`` with slot ``k`` replaced by another of the slot's tokens (``combo`` is changed in
    place): the text of that form when it is illegal, else None."""
    options = [t for t in choices(family)[k] if t != combo[k]]
    if not options:
        return None
    combo[k] = rng.choice(options)
    candidate = form_of(family, combo)
    return None if is_legal(candidate) else candidate.text
