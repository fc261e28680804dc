"""The tcgen05 documentation: the descriptor pictures and the reference's page per operation.

docs/_ext/ptxspec_bit_fields.py draws each descriptor's bit fields from the tables that its
encode/decode use (SMEM_FIELDS, INSTR_FIELDS, MASK_FIELDS); here the SVG is read back and compared
with the tables bit by bit. docs/_ext/ptxspec_reference.py gives each tcgen05 operation a page whose
worked examples run on a State; here those pages are built (only tcgen05's, so fast) and their
checks must pass, as in tests/test_docs.py, and a wrong expectation must be caught.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ptxspec.semantics import tcgen05_descriptors as td

DOCS = Path(__file__).resolve().parent.parent / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import ptxspec_bit_fields as bit_fields  # noqa: E402
import ptxspec_examples as checked_examples  # noqa: E402
import ptxspec_reference  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"

#: Every distinct field table, with the width of its register.
TABLES = {
    "SMEM_FIELDS": (td.SMEM_FIELDS, 64),
    "MASK_FIELDS": (td.MASK_FIELDS, 64),
    **{f"INSTR_FIELDS[{kind!r}]": (table, 32) for kind, table in td.INSTR_FIELDS.items()},
}

# ---------------------------------------------------------------------------------------------
# The bit-field pictures
# ---------------------------------------------------------------------------------------------


def _bits_of_rect(rect: ET.Element, width: int) -> set[int]:
    """The bits a box of the picture covers, from its position (most significant bit left, 32 a row)."""
    x, y, w = float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))
    rows = (width + bit_fields.ROW_BITS - 1) // bit_fields.ROW_BITS
    row_from_top = round((y - bit_fields.MARGIN - 14) / (bit_fields.BOX_HEIGHT + bit_fields.ROW_GAP))
    row = rows - 1 - row_from_top
    first_column = round((x - bit_fields.MARGIN) / bit_fields.BIT_WIDTH)
    count = round(w / bit_fields.BIT_WIDTH)
    row_width = min(width, bit_fields.ROW_BITS)
    return {row * bit_fields.ROW_BITS + (row_width - 1 - column) for column in range(first_column, first_column + count)}


def _range(bits: set[int]) -> str:
    low, high = min(bits), max(bits)
    assert bits == set(range(low, high + 1))
    return str(low) if low == high else f"{low}-{high}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_picture_draws_every_field_once_at_its_bits(name):
    fields, width = TABLES[name]
    root = ET.fromstring(bit_fields.svg_bit_fields(fields, width))
    drawn: dict[str, set[int]] = {}
    covered: list[int] = []
    for group in root.iter(f"{SVG}g"):
        bits = set().union(*(_bits_of_rect(r, width) for r in group.iter(f"{SVG}rect")))
        covered.extend(b for r in group.iter(f"{SVG}rect") for b in _bits_of_rect(r, width))
        texts = {t.get("class"): t.text for t in group.iter(f"{SVG}text")}
        assert texts["bits"] == group.get("data-bits") == _range(bits)
        if group.get("class") == "field":
            field = group.get("data-name")
            assert field not in drawn, f"{field} drawn twice"
            assert texts["name"] == field
            drawn[field] = bits
        else:
            assert group.get("class") == "undefined" and "name" not in texts
    # Every field once, at exactly its bits; every bit of the register in exactly one box.
    assert drawn == {field: set(range(low, low + w)) for field, (low, w) in fields.items()}
    assert sorted(covered) == list(range(width))
    undefined = set(range(width)) - set().union(*drawn.values())
    assert [b for b in range(width) if not any(b in bits for bits in drawn.values())] == sorted(undefined)


def test_the_range_text_is_the_manuals():
    texts = set(re.findall(r'class="bits"[^>]*>([^<]+)<', bit_fields.svg_bit_fields(td.SMEM_FIELDS, 64)))
    assert {"0-13", "16-29", "32-45", "46-48", "49-51", "52", "53-60", "61-63", "14-15", "30-31"} == texts


def test_the_picture_shows_field_values():
    descriptor = td.SmemDescriptor(start_address=0x400, stride_byte_offset=1024, swizzle="128B")
    svg = bit_fields.svg_bit_fields(td.SMEM_FIELDS, 64, descriptor.fields())
    values = dict(re.findall(r'data-name="(\w+)".*?class="value"[^>]*>([^<]+)<', svg, flags=re.S))
    assert values["start_address"] == "0x40" and values["swizzle"] == "2" and values["version"] == "1"


@pytest.mark.parametrize("fields", [{"a": (0, 4), "b": (3, 2)}, {"a": (30, 4)}])
def test_the_picture_refuses_a_table_that_is_not_one(fields):
    with pytest.raises(ValueError):
        bit_fields.svg_bit_fields(fields, 32)


def test_the_descriptor_page_draws_every_table():
    text = (DOCS / "tcgen05-descriptors.rst").read_text(encoding="utf-8")
    drawn = []
    for path, key in re.findall(r"\.\. bit-fields:: (\S+)\n(?:   :key: (\S+)\n)?", text):
        table = bit_fields.resolve(path)
        drawn.append(table[key] if key else table)
    wanted = [td.SMEM_FIELDS, td.MASK_FIELDS, *{id(t): t for t in td.INSTR_FIELDS.values()}.values()]
    assert all(any(t is d for d in drawn) for t in wanted)
    assert "tcgen05-descriptors" in (DOCS / "index.rst").read_text(encoding="utf-8").split()


# ---------------------------------------------------------------------------------------------
# The reference: a page per tcgen05 operation
# ---------------------------------------------------------------------------------------------

OPERATIONS = (
    "alloc",
    "dealloc",
    "relinquish_alloc_permit",
    "ld",
    "ld.red",
    "st",
    "wait",
    "cp",
    "shift",
    "fence",
    "commit",
    "mma",
    "mma.sp",
    "mma.ws",
    "mma.ws.sp",
)


def _tcgen05_pages(examples=None):
    from ptxspec.semantics import instructions
    from ptxspec.spec.catalogue import CATALOGUE

    instructions._load_chapters()
    semantics = {key: entry.function for key, entry in instructions.SEMANTICS.items()}
    failures = ptxspec_reference.BuildFailure()
    families = CATALOGUE.families("tcgen05")
    facts = {f.key: ptxspec_reference.study(f, failures) for f in families}
    if examples is not None:
        ptxspec_reference.STATE_EXAMPLES[:] = examples
    pages = ptxspec_reference.opcode_pages("tcgen05", families, ptxspec_reference.operations(), facts, semantics, set(semantics.values()), [], failures)
    return pages, failures, semantics


@pytest.fixture(scope="module")
def built():
    return _tcgen05_pages()


def test_a_page_per_operation(built):
    from ptxspec.spec.catalogue import CATALOGUE

    pages, failures, _ = built
    assert not failures, "\n".join(failures)
    assert set(pages) == {"tcgen05.rst"} | {ptxspec_reference._slug(f"tcgen05.{o}") + ".rst" for o in OPERATIONS}
    names = ptxspec_reference.operations()
    for family in CATALOGUE.families("tcgen05"):
        page = pages[ptxspec_reference._slug(names[family.key]) + ".rst"]
        assert f".. _family-{family.key}:" in page
        assert family.syntax() in pages["tcgen05.rst"]
    toctree = pages["tcgen05.rst"].split(".. toctree::")[1]
    assert [line.strip() for line in toctree.splitlines()[4:] if line.strip()] == [ptxspec_reference._slug(f"tcgen05.{o}") for o in OPERATIONS]


def test_each_operation_page_has_its_semantics_and_a_worked_example_on_a_state(built):
    pages, _, semantics = built
    names = ptxspec_reference.operations()
    for operation in OPERATIONS:
        page = pages[ptxspec_reference._slug(f"tcgen05.{operation}") + ".rst"]
        keys = [k for k, o in names.items() if o == f"tcgen05.{operation}"]
        if operation == "commit":
            assert not any(k in semantics for k in keys)
            assert checked_examples.WITHOUT_SEMANTICS["tcgen05.commit"].split(":")[0] in page
            continue
        for key in keys:
            fn = semantics[key]
            assert f".. autofunction:: {fn.__module__}.{fn.__qualname__}" in page
        assert "Targets" in page and "PTX ISA 8." in page
        assert ".. rubric::" in page and "**Step 1.**" in page and "Checked when this page was built" in page, operation


def test_the_st_then_ld_example_shows_computed_registers_and_cells(built):
    pages, _, _ = built
    page = pages["tcgen05_ld.rst"]
    # Thread 31's second register, as stored (STORED) and loaded; cells of lane 31, undefined columns.
    assert page.count(f"``{checked_examples.STORED[1][31]:#010x}``") >= 3
    assert "undefined" in page


def test_a_wrong_state_expectation_is_caught():
    saved = list(ptxspec_reference.STATE_EXAMPLES)
    wrong = checked_examples.StateExample(
        "tcgen05.alloc",
        "wrong on purpose",
        checked_examples._state,
        (checked_examples.Step(checked_examples.ALLOC, (0x10, 64)),),
        lambda run: [(checked_examples._word(run.states[1], 0x10) == 0x40, "the address is column 64")],
        "",
    )
    not_refused = checked_examples.StateExample(
        "tcgen05.dealloc",
        "a step wrongly marked refused",
        checked_examples._state,
        (checked_examples.Step(checked_examples.ALLOC, (0x10, 64), refused=True),),
        lambda run: [],
        "",
    )
    try:
        _, failures, _ = _tcgen05_pages([wrong, not_refused])
    finally:
        ptxspec_reference.STATE_EXAMPLES[:] = saved
    # with only these two state examples, the tcgen05 families they leave without an example fail too
    caught = [f for f in failures if "has semantics but no checked worked example" not in f]
    assert len(caught) == 2
    assert "the address is column 64" in caught[0]
    assert "ptxspec carries it out" in caught[1]
