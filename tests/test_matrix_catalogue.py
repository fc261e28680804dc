"""The §9.7.14 catalogue (spec/matrix.py): parsing, targets, operand counts, and its verdicts
against ptxas (CUDA 13.0).

Every legal form of every family is generated (rules evaluated directly on the slot choices) and
assembled as a tiny kernel at sm_80, sm_89 and sm_90a (each at the PTX ISA version that introduced
it and at 8.7), and sm_120a for the Blackwell-only forms; a seeded sample of illegal neighbours
(one qualifier changed) is tried at sm_120a with PTX ISA 8.7. Every disagreement must be one of
:data:`KNOWN` -- each quoting the manual sentence the catalogue follows -- and each KNOWN entry's
example is replayed, so a stale entry fails. The ptxas tests skip without ptxas.
"""

from __future__ import annotations

import random

import ptxas_batch as pb
import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import matrix as mx
from ptxspec.spec.catalogue import Form, is_vector, parse, Target
from ptxspec.spec.errors import IllegalForm, PtxSpecError

# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------


# Slot combinations, legal forms and the ptxas comparison: tests/ptxas_batch.py.
all_forms, legal_forms = pb.all_forms, pb.legal_forms


def neighbours(family, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Illegal texts one qualifier away from a legal form: a slot's token replaced by another of
    the slot, an optional qualifier added or dropped, or a qualifier of another family added."""
    out: set[tuple[str, str]] = set()
    forms = legal_forms(family)
    foreign = sorted({t for f in mx.FAMILIES for s in f.slots for t in s.tokens} - {t for s in family.slots for t in s.tokens})
    tries = 0
    while len(out) < count and tries < 50 * count:
        tries += 1
        base = rng.choice(forms)
        chosen = dict(base.choices)
        combo = [chosen.get(s.name, "") for s in family.slots]
        k = rng.randrange(len(family.slots) + 1)
        if k == len(family.slots):
            tokens = [t for t in combo if t]
            tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(foreign))
            text, category = ".".join([family.opcode, *tokens]), "foreign"
        else:
            text, category = pb.changed_form(family, combo, k, rng), "changed"
            if text is None:
                continue
        try:
            parse(text)
        except PtxSpecError:
            out.add((text, category))
    return sorted(out)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def instruction_line(form: Form | None, text: str | None = None) -> str:
    """One ``{ }`` block declaring a register per operand and applying the instruction: vectors in
    braces, the address operand ``p`` as ``[%p]``, the sparsity selector ``f`` and the block-scale
    selectors as the constant 0."""
    if form is None:
        form = _closest(text)
    text = text or form.text
    declared = []
    for o in form.operands:
        if o.name == "f" or o.name.startswith("id_"):
            continue
        declared.append(f".reg .{pa.register_type(o.type)} {pb.reg(o.name)};")

    def operand(group) -> str:
        names = [o.name for o in group]
        if names == ["p"]:
            return "[%p]"
        if names == ["f"] or names[0].startswith("id_"):
            return "{0, 0}" if names[0].startswith("id_") else "0"
        # A fragment is a vector even of one register ("{%Rb0}" in §9.7.14.5.14's examples).
        return "{" + ", ".join(pb.reg(n) for n in names) + "}" if is_vector(group) or "." in names[0] else pb.reg(names[0])

    written = ", ".join(operand(g) for g in form.layout)
    return f"{{ {' '.join(declared)} {text} {written}; }}"


def _closest(text: str) -> Form:
    """Operands for an illegal text: those of a legal form of the same family with the most tokens in common."""
    tokens = set(text.split(".")[1:])
    best, score = None, -1
    for family in mx.FAMILIES:
        if family.opcode != text.split(".")[0]:
            continue
        for form in legal_forms(family)[:: max(1, len(legal_forms(family)) // 60)] + legal_forms(family)[:5]:
            s = len(tokens & {t for _, t in form.choices})
            if s > score:
                best, score = form, s
    assert best is not None
    return best


REQUESTS = [pa.Request(arch, version) for arch in ("sm_80", "sm_89", "sm_90a") for version in sorted({pa.TARGET_INTRODUCED[arch], pa.SPEC_VERSION})]
BLACKWELL = pa.Request("sm_120a", pa.SPEC_VERSION)
ILLEGAL_AT = BLACKWELL


def _requests(form: Form) -> list[pa.Request]:
    """sm_80, sm_89, sm_90a at both versions; also sm_120a for forms that only Blackwell has."""
    blackwell = all(t.suffix == "a" and t.sm >= 100 for t in form.targets.alternatives)
    return REQUESTS + ([BLACKWELL] if blackwell else [])


def catalogue_verdict(text: str, request: pa.Request) -> tuple[bool, str]:
    return pb.catalogue_verdict(parse, text, request)


# ---------------------------------------------------------------------------------------------
# Known disagreements
# ---------------------------------------------------------------------------------------------

_F8 = r"(e4m3|e5m2|e3m2|e2m3|e2m1)"

#: Where ptxas 13.0 and the manual differ; the catalogue follows the manual.
KNOWN: tuple[pa.Known, ...] = (
    pa.Known(
        "mma-f16-m16n8k16-dtype-ctype",
        "ptxas",
        r"mma\.sync\.aligned\.m16n8k16\.row\.col\.(f16\.f16\.f16\.f32|f32\.f16\.f16\.f16)",
        "legal",
        '§9.7.14.5.14 lists the type restrictions per shape: ".m8n8k4: when .ctype is .f32, .dtype must '
        'also be .f32" and ".m16n8k8: .dtype must be the same as .ctype"; m16n8k16 has none '
        "(.ctype = {.f16, .f32}, .dtype = {.f16, .f32}); ptxas 13.0 requires .dtype == .ctype for m16n8k16.",
        example=("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32", "sm_80@7.0", ""),
    ),
    pa.Known(
        "mma-fp8-dtype-ctype",
        "ptxas",
        rf"mma(\.sp(::ordered_metadata)?)?\.sync\.aligned\.m16n8k(16|32|64)\.row\.col(\.kind::f8f6f4)?\.(f16\.{_F8}\.{_F8}\.f32|f32\.{_F8}\.{_F8}\.f16)",
        "legal",
        '§9.7.14.5.14: "mma.sync.aligned.shape.row.col.dtype.f8type.f8type.ctype ... .ctype = {.f16, .f32}; '
        '.dtype = {.f16, .f32}" (and the .kind::f8f6f4 line alike) with no restriction between them -- the '
        "restrictions are listed per shape and name only m8n8k4 and m16n8k8; §9.7.14.6.3 restricts only "
        '"shapes .m16n8k16 and .m16n8k32". ptxas 13.0 rejects .dtype != .ctype for every fp8/fp6/fp4 form.',
        example=("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f32", "sm_89@8.7", ""),
    ),
    pa.Known(
        "mma-sp-fp8-f16-accumulator-plain-sp",
        "ptxas",
        rf"mma\.sp\.sync\.aligned\.m16n8k64\.row\.col\.f16\.{_F8}\.{_F8}\.f16",
        "legal",
        '§9.7.14.6.3: the .e4m3/.e5m2 line is "mma.spvariant.sync.aligned.m16n8k64..." with ".spvariant = '
        '{.sp, .sp::ordered_metadata}", and "support for ... .f16 dtype/ctype with .e4m3/.e5m2 ... requires '
        'sm_120a" names no variant; ptxas 13.0 accepts the .f16 accumulators only with .sp::ordered_metadata.',
        example=("mma.sp.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16", "sm_120a@8.7", ""),
    ),
    pa.Known(
        "foreign-qualifier-ignored",
        "ptxas",
        r".*",
        "illegal",
        "A qualifier is legal only where the family's syntax line lists it (\"mma.sync.aligned.shape.row.col"
        '..." has no .b4x16_p64, "movmatrix.sync.aligned.shape.trans.type" no .row); ptxas 13.0 silently '
        "accepts some tokens it knows from other instructions.",
        category="foreign",
        example=("movmatrix.sync.row.aligned.m8n8.trans.b16", "sm_120a@8.7", ""),
    ),
)


def compare(ptxas: str, cases: list[tuple[str, str, Form | None, pa.Request]]) -> list[dict]:
    """Disagreement records of ``(text, category, form, request)`` cases not covered by KNOWN."""
    return pb.compare(ptxas, cases, parse=parse, line=instruction_line, known=KNOWN, chunk=200)


def legal_cases(families=mx.FAMILIES) -> list[tuple[str, str, Form, pa.Request]]:
    return [(f.text, "legal", f, r) for family in families for f in legal_forms(family) for r in _requests(f)]


def illegal_cases(families=mx.FAMILIES, per_family: int = 12, seed: int = 0) -> list[tuple[str, str, None, pa.Request]]:
    out = []
    for family in families:
        rng = random.Random(f"{seed}:{family.key}")
        out += [(text, category, None, ILLEGAL_AT) for text, category in neighbours(family, rng, per_family)]
    return out


# ---------------------------------------------------------------------------------------------
# Without ptxas
# ---------------------------------------------------------------------------------------------


def test_every_legal_form_parses_to_its_family():
    for family in mx.FAMILIES:
        forms = legal_forms(family)
        assert forms, family.key
        for form in forms:
            parsed = parse(form.text)
            assert parsed.family.key == family.key and parsed.choices == form.choices, form.text


@pytest.mark.parametrize(
    ("text", "operands"),
    [
        # §9.7.14.5.14 examples: "{%Rd0, %Rd1, %Rd2, %Rd3}, {%Ra0, %Ra1, %Ra2, %Ra3}, {%Rb0, %Rb1}, {%Rc0, ...}"
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (4, 4, 2, 4)),
        ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", (2, 4, 2, 2)),
        ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16", (8, 2, 2, 4)),
        ("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16", (4, 2, 2, 4)),
        ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", (4, 2, 1, 4)),
        ("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", (4, 2, 1, 4)),
        ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", (4, 4, 2, 4)),
        ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", (4, 4, 2, 4)),
        ("mma.sync.aligned.m16n8k16.row.col.f32.e5m2.e4m3.f32", (4, 2, 1, 4)),
        ("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.s8.u8.s32", (2, 1, 1, 2)),
        ("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.u4.s32", (4, 4, 2, 4)),
        ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", (4, 4, 2, 4)),
        ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", (2, 1, 1, 2)),
        ("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64.rn", (4, 8, 4, 4)),
        # §9.7.14.6.3 examples
        ("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", (2, 2, 2, 2)),
        ("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", (4, 4, 4, 4)),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.satfinite.s32.u8.u8.s32", (4, 4, 4, 4)),
    ],
)
def test_fragment_register_counts_follow_the_manual(text, operands):
    form = parse(text)
    counts = tuple(sum(1 for o in form.operands if o.name.startswith(p + ".")) for p in "dabc")
    assert counts == operands


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("mma.sync.aligned.m16n8k4.row.col.f32.f16.f16.f32", ".m16n8k4"),
        ("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f32", ".m16n8k8: .dtype must be the same as .ctype"),
        ("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32", "when .ctype is .f32"),
        ("mma.sync.aligned.m16n8k16.col.row.f32.bf16.bf16.f32", ".col.row"),
        ("mma.sync.aligned.m16n8k8.row.col.f32.bf16.tf32.f32", ".atype must be the same as .btype"),
        ("mma.sync.aligned.m16n8k16.row.col.s32.b1.b1.s32.popc", "missing bitOp"),
        (
            "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32",
            "qualifier .satfinite is not allowed with mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        ),
        ("mma.sync.aligned.m16n8k32.row.col.f32.e3m2.e2m1.f32", ".e3m2"),
        ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue4m3", "scale_vec_size must be provided"),
        ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue4m3", ".scale_vec::2X is not valid"),
        ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue4m3", ".ue4m3"),
        ("mma.sp.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32", "ordered_metadata"),
        ("mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f32", "must be the same as .ctype"),
        ("ldmatrix.sync.aligned.m16n16.x4.trans.b8", "only .x1 and .x2"),
        ("ldmatrix.sync.aligned.m16n16.x2.b8", ".trans is mandatory"),
        ("ldmatrix.sync.aligned.m8n8.x1.b8", ".m8n8 with .b8"),
        ("ldmatrix.sync.aligned.m8n16.x1.trans.b8x16.b4x16_p64", ".trans"),
        ("stmatrix.sync.aligned.m16n8.x1.b8", ".trans is mandatory"),
        ("movmatrix.sync.aligned.m8n8.b16", "missing trans"),
    ],
)
def test_errors_name_the_offending_qualifier(text, words):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("text", "qualifier", "form", "section"),
    [
        # "mma.sync.aligned.m16n8k16.row.col.dtype.f16.f16.ctype": no {.satfinite} (only the integer lines have it)
        ("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32", "satfinite", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", mx.MMA),
        ("mma.sync.aligned.m16n8k32.row.col.satfinite.f32.e4m3.e4m3.f32", "satfinite", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", mx.MMA),
        ("mma.sync.aligned.m8n8k4.row.col.satfinite.f64.f64.f64.f64", "satfinite", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", mx.MMA),
        # only the .f64 line has "{.rnd}"
        ("mma.sync.aligned.m8n8k4.row.row.rn.f32.f16.f16.f32", "rn", "mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32", mx.MMA),
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32.rn", "rn", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", mx.MMA),
        ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32.xor.popc", "xor", None, mx.MMA),
        ("mma.sp.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32", "satfinite", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", mx.MMA_SP),
        ("ldmatrix.sync.aligned.m8n8.x1.global.b16", "global", "ldmatrix.sync.aligned.m8n8.x1.b16", mx.LDMATRIX),
        ("movmatrix.sync.row.aligned.m8n8.trans.b16", "row", "movmatrix.sync.aligned.m8n8.trans.b16", mx.MOVMATRIX),
    ],
)
def test_a_qualifier_the_form_does_not_take_is_named(text, qualifier, form, section):
    """A legal form plus one qualifier its syntax line lacks: the refusal names that qualifier and
    the form's section -- not the token where the nearest family (the integer one, for .satfinite)
    stopped matching."""
    with pytest.raises(IllegalForm) as info:
        parse(text)
    message = info.value.message.split(": ", 1)[1]
    assert message.startswith(f"qualifier .{qualifier} is not allowed with {form or 'mma'}"), message
    assert info.value.section == section
    assert f"§{section}" in info.value.one_line()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("mma.sync.aligned.m16n8k16.row.col.row.f32.f16.f16.f32", "qualifier .row is repeated"),  # not ".col"
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32", "qualifier .bf16 is not allowed with mma;"),  # a wrong token, not an extra one
        ("mma.sync.aligned.m16n8k16.row.col.satfinite.rn.f32.f16.f16.f32", "is not allowed with mma;"),  # two extra: no single culprit
    ],
)
def test_other_refusals_keep_their_messages(text, words):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert words in str(info.value)


def test_an_inserted_qualifier_is_the_one_named():
    """Seeded: a qualifier of another mma/ldmatrix/... family inserted anywhere into a legal form
    is what the refusal names (except .sp/.sp::ordered_metadata, which make the text a sparse
    mma whose own rules then speak)."""
    rng = random.Random(3)
    checked = 0
    for family in mx.FAMILIES:
        mine = {t for s in family.slots for t in s.tokens}
        foreign = sorted({t for f in mx.FAMILIES if f.opcode == family.opcode for s in f.slots for t in s.tokens} - mine - {"sp", "sp::ordered_metadata"})
        for _ in range(15 if foreign else 0):
            tokens = [t for _, t in rng.choice(legal_forms(family)).choices]
            token = rng.choice(foreign)
            tokens.insert(rng.randrange(1, len(tokens) + 1), token)
            text = ".".join([family.opcode, *tokens])
            with pytest.raises(IllegalForm) as info:
                parse(text)
            assert info.value.message.split(": ", 1)[1].startswith(f"qualifier .{token} is not allowed with {family.opcode}."), info.value.message[:300]
            checked += 1
    assert checked > 150


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16", Target((6, 4), 70)),
        ("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", Target((6, 5), 75)),
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Target((7, 0), 80)),
        ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", Target((8, 4), 89)),
        ("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32", Target((8, 7), 89)),
        ("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", Target((7, 8), 90)),
        ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", Target((7, 0), 75)),
        ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc", Target((7, 1), 80)),
        ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Target((7, 1), 80)),
        ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Target((8, 5), 80)),
        ("mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32", Target((8, 4), 89)),
        ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e2m1.f32", Target((8, 7), 120, "a")),
        ("ldmatrix.sync.aligned.m8n8.x4.b16", Target((6, 5), 75)),
        ("ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16", Target((7, 8), 75)),
        ("stmatrix.sync.aligned.m8n8.x2.trans.b16", Target((7, 8), 90)),
        ("movmatrix.sync.aligned.m8n8.trans.b16", Target((7, 8), 75)),
    ],
)
def test_targets_follow_the_target_isa_notes(text, target):
    assert parse(text).targets.alternatives == (target,)


def test_blackwell_forms_are_a_targets_only():
    form = parse("ldmatrix.sync.aligned.m16n16.x1.trans.b8")
    assert [t.arch for t in form.targets.alternatives] == ["sm_100a", "sm_101a", "sm_120a"]
    assert not form.admits((8, 7), "sm_90a") and form.admits((8, 7), "sm_120a")


def test_instruction_lines_write_vectors_addresses_and_selectors():
    line = instruction_line(parse("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"))
    assert "{%d_0, %d_1}, {%a_0, %a_1}, {%b_0, %b_1}, {%c_0, %c_1}, %e, 0;" in line
    assert "{%r_0}, [%p];" in instruction_line(parse("ldmatrix.sync.aligned.m8n8.x1.b16"))
    assert "[%p], {%r_0, %r_1};" in instruction_line(parse("stmatrix.sync.aligned.m8n8.x2.b16"))


def test_neighbours_are_illegal_and_seeded():
    family = mx.MMA_F16
    a = neighbours(family, random.Random(1), 10)
    assert a == neighbours(family, random.Random(1), 10) and len(a) == 10
    assert {c for _, c in a} == {"changed", "foreign"}
    for text, _ in a:
        with pytest.raises(IllegalForm):
            parse(text)


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("known", KNOWN, ids=lambda k: k.name)
def test_known_disagreement_is_real(ptxas, known):
    text, where, _ = known.example
    request = pb.example_request(where)
    ours = catalogue_verdict(text, request)
    form = parse(text) if ours[0] else None
    ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [instruction_line(form, text)])
    assert ours[0] != theirs, f"{known.name}: ptxas and the catalogue now agree on {text}"
    assert known.covers(pb.record(text, known.category or "legal", request, ours, (theirs, message)))


def test_sampled_forms_agree_with_ptxas(ptxas):
    """A seeded sample: 40 legal forms at their requests and 3 neighbours per family."""
    rng = random.Random(7)
    cases = legal_cases()
    forms = sorted({c[0] for c in cases})
    chosen = set(rng.sample(forms, 40))
    sample = [c for c in cases if c[0] in chosen] + illegal_cases(per_family=3, seed=7)
    assert compare(ptxas, sample) == []


def test_comparison_detects_a_wrong_verdict(ptxas):
    """A catalogue that wrongly allowed .m16n8k4 .f16 would be caught."""
    line = instruction_line(parse("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32")).replace("m16n8k8", "m16n8k4")
    ((ok, message),) = pa.ptxas_verdicts(ptxas, pa.Request("sm_90a", (8, 7)), [line])
    assert not ok and message


_CHUNKS = 6


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_every_legal_form_and_neighbour_agrees_with_ptxas(ptxas, chunk):
    families = [f for i, f in enumerate(mx.FAMILIES) if i % _CHUNKS == chunk]
    assert compare(ptxas, legal_cases(families) + illegal_cases(families)) == []
