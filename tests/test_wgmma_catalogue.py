"""The §9.7.15 catalogue (spec/wgmma.py): parsing, targets, operands, immediates, and its verdicts
against ptxas (CUDA 13.0).

Every legal form of every family is generated (rules evaluated on the slot choices) and assembled
as a tiny kernel at sm_90a, at the PTX ISA version that introduced it and at 8.7; also one version
too early (where that version can target sm_90a), and at sm_90 and sm_100a, where the manual's
"requires sm_90a" refuses it. A seeded sample of illegal neighbours (one qualifier changed, added
or dropped) is tried at sm_90a with PTX ISA 8.7. Every disagreement must be one of :data:`KNOWN`,
each quoting the manual sentence the catalogue follows, and each KNOWN entry's example is replayed.
The default run samples; ``@pytest.mark.heavy`` runs every form. The ptxas tests skip without
ptxas.
"""

from __future__ import annotations

import random

import ptxas_batch as pb
import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import wgmma as wg
from ptxspec.spec.catalogue import CATALOGUE, Form, parse, Target
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError

# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------


# Slot combinations, legal forms and the ptxas comparison: tests/ptxas_batch.py.
legal_forms = pb.legal_forms


_FOREIGN = ("xor", "row", "col", "satfinite", "sp", "f64", "m16n8k16", "trans", "relu", "rn", "e2m1", "shared", "popc", "and", "s4")


def neighbours(family, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Illegal texts one qualifier away from a legal form of ``family``: a slot's token replaced by
    another token of the slot, an optional qualifier added or dropped, a required one dropped, or a
    qualifier of another instruction inserted."""
    out: set[tuple[str, str]] = set()
    forms = legal_forms(family)
    tries = 0
    while len(out) < count and tries < 60 * count:
        tries += 1
        base = rng.choice(forms)
        chosen = dict(base.choices)
        combo = [chosen.get(s.name, "") for s in family.slots]
        k = rng.randrange(len(family.slots) + 2)
        if k >= len(family.slots):
            tokens = [t for t in combo if t]
            if k == len(family.slots):
                tokens.insert(rng.randrange(1, len(tokens) + 1), rng.choice(_FOREIGN))
            else:
                tokens.pop(rng.randrange(len(tokens)))
            text, category = ".".join(["wgmma", *tokens]), "foreign" if k == len(family.slots) else "dropped"
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

#: The immediate operands as the tests write them: "imm-scale-a/b: -1 or 1", "imm-trans: 0 or 1",
#: "sp-sel: 0", "N: an integer constant".
IMMEDIATE_TEXT = {"imm_scale_a": "-1", "imm_scale_b": "1", "imm_trans_a": "0", "imm_trans_b": "1", "sp_sel": "0", "N": "0"}


def instruction_line(form: Form, text: str | None = None, **immediates: int) -> str:
    """One ``{ }`` block declaring a register per register operand and applying the instruction;
    vectors in braces, immediates as :data:`IMMEDIATE_TEXT` or as given."""
    text = text or form.text
    values = dict(IMMEDIATE_TEXT, **{k: str(v) for k, v in immediates.items()})
    declared = [f".reg .{pa.register_type(o.type)} {pb.reg(o.name)};" for o in form.operands if o.name not in IMMEDIATE_TEXT]

    def operand(group) -> str:
        if len(group) == 1 and "." not in group[0].name:
            return values.get(group[0].name, pb.reg(group[0].name))
        return "{" + ", ".join(pb.reg(o.name) for o in group) + "}"

    written = ", ".join(operand(g) for g in form.layout)
    return f"{{ {' '.join(declared)} {text}{' ' + written if written else ''}; }}"


def _closest(text: str) -> Form:
    """Operands for an illegal text: a legal form of the family with the most tokens in common."""
    tokens = set(text.split(".")[1:])
    best, score = None, -1
    for family in wg.FAMILIES:
        forms = legal_forms(family)
        for form in forms[:: max(1, len(forms) // 40)]:
            s = len(tokens & {t for _, t in form.choices})
            if s > score:
                best, score = form, s
    assert best is not None
    return best


LATEST = pa.SPEC_VERSION


def _requests(form: Form) -> list[tuple[pa.Request, bool]]:
    """(request, whether the catalogue should admit it): sm_90a at the form's version and at 8.7,
    sm_90a one minor version earlier where sm_90a exists there, sm_90 and sm_100a at 8.7."""
    (target,) = form.targets.alternatives
    out = [pa.Request("sm_90a", target.ptx), pa.Request("sm_90a", LATEST), pa.Request("sm_90", LATEST), pa.Request("sm_100a", LATEST)]
    earlier = (target.ptx[0], target.ptx[1] - 1)
    if earlier >= (8, 0):
        out.append(pa.Request("sm_90a", earlier))
    return [(r, form.admits(r.version, r.arch)) for r in out]


def catalogue_verdict(text: str, request: pa.Request) -> tuple[bool, str]:
    return pb.catalogue_verdict(parse, text, request)


# ---------------------------------------------------------------------------------------------
# Known disagreements
# ---------------------------------------------------------------------------------------------

#: Where ptxas 13.0 and the manual differ; the catalogue follows the manual.
KNOWN: tuple[pa.Known, ...] = (
    pa.Known(
        "aligned-optional",
        "ptxas",
        r"wgmma(\.mma_async(\.sp)?|\.fence|\.commit_group|\.wait_group)\.sync\.(?!aligned)[^ ]*|wgmma\.(fence|commit_group|wait_group)\.sync",
        "illegal",
        '§9.7.15.5.2 and §9.7.15.7.1-3: every syntax line writes ".sync.aligned", and "the mandatory .aligned '
        'qualifier indicates that all threads in the warpgroup must execute the same ... instruction"; ptxas '
        "13.0 accepts the instructions without .aligned (it requires .sync).",
        category="dropped",
        example=("wgmma.commit_group.sync", "sm_90a@8.7", ""),
    ),
    pa.Known(
        "foreign-qualifier-ignored",
        "ptxas",
        r".*",
        "illegal",
        "A qualifier is legal only where the family's syntax line lists it; ptxas 13.0 silently accepts some tokens it knows from other instructions.",
        category="foreign",
    ),
)


def compare(ptxas: str, cases: list[tuple[str, str, Form | None, pa.Request]]) -> list[dict]:
    """Disagreement records of ``(text, category, form, request)`` cases not covered by KNOWN."""
    line = lambda form, text: instruction_line(form or _closest(text), text)  # noqa: E731
    return pb.compare(ptxas, cases, parse=parse, line=line, known=KNOWN, chunk=150)


def legal_cases(families=wg.FAMILIES) -> list[tuple[str, str, Form, pa.Request]]:
    return [(f.text, "legal", f, r) for family in families for f in legal_forms(family) for r, _ in _requests(f)]


def illegal_cases(families=wg.FAMILIES, per_family: int = 10, seed: int = 0) -> list[tuple[str, str, None, pa.Request]]:
    out = []
    for family in families:
        rng = random.Random(f"{seed}:{family.key}")
        out += [(text, category, None, pa.Request("sm_90a", LATEST)) for text, category in neighbours(family, rng, per_family)]
    return out


# ---------------------------------------------------------------------------------------------
# Without ptxas
# ---------------------------------------------------------------------------------------------


def test_every_legal_form_parses_to_a_family_with_its_qualifiers():
    for family in wg.FAMILIES:
        forms = legal_forms(family)
        assert forms, family.key
        for form in forms:
            parsed = parse(form.text)
            # The A-in-registers line has the qualifiers of the a-desc line: text alone gives the latter.
            assert parsed.choices == form.choices and parsed.family.key == family.key.removesuffix(".a"), form.text


def test_form_counts_follow_the_shape_table():
    """§9.7.15.2: 32 N for the floating-point shapes, 18 for the integer and single-bit ones."""
    count = {f.key: len(legal_forms(f)) for f in wg.FAMILIES}
    assert count["wgmma.f16"] == 32 * 2 and count["wgmma.bf16"] == 32 and count["wgmma.tf32"] == 32
    assert count["wgmma.f8"] == 32 * 2 * 4 and count["wgmma.int"] == 18 * 2 * 4 and count["wgmma.b1"] == 18
    assert count["wgmma.sp.f16.a"] == 64 and count["wgmma.sp.int"] == 144 and "wgmma.sp.b1" not in count


def test_templates_select_the_a_in_registers_line():
    form = parse("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, {a0, a1, a2, a3}, descB, p, sa, sb, tb")
    assert form.family.key == "wgmma.f16.a" and wg.a_in_registers(form)
    form = parse("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, descA, descB, p, sa, sb, ta, tb")
    assert form.family.key == "wgmma.f16" and not wg.a_in_registers(form)
    with pytest.raises(IllegalForm, match="operands"):
        # "imm-trans-a" is not an operand of the A-in-registers line.
        parse("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, {a0, a1, a2, a3}, descB, p, sa, sb, ta, tb")


@pytest.mark.parametrize(
    ("text", "d", "a", "tail"),
    [
        # §9.7.15.5.2 examples: "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {f32d0, f32d1, f32d2,
        # f32d3}, {f16a0, f16a1, f16a2, f16a3}, descB, 1, -1, -1, 1;"
        ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", 4, 4, 4),
        # "wgmma.mma_async.sync.aligned.m64n72k16.f16.f16.f16 {f16d0, ..., f16d17}, descA, descB, scaleD, -1, 1, 1, 0;"
        ("wgmma.mma_async.sync.aligned.m64n72k16.f16.f16.f16", 18, 0, 5),
        # "m64n120k16.f32.bf16.bf16 {f32d0, ..., f32d59}, {bf16a0, ..., bf16a3}, descB, scaleD, -1, -1, 0;"
        ("wgmma.mma_async.sync.aligned.m64n120k16.f32.bf16.bf16", 60, 4, 4),
        # "m64n16k8.f32.tf32.tf32 {f32d0, ..., f32d7}, descA, descB, 0, -1, -1;"
        ("wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32", 8, 0, 3),
        # "m64n8k32.f16.e4m3.e5m2 {f16d0, f16d1}, descA, descB, scaleD, -1, 1;"
        ("wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e5m2", 2, 0, 3),
        # "m64n8k32.s32.s8.s8.satfinite {s32d0, ..., s32d3}, {s32a0, ..., s32a3}, descB, 1;"
        ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8.satfinite", 4, 4, 1),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc", 4, 4, 1),
        # §9.7.15.6.3: "m64n8k64.s32.u8.u8 {s32d0, ..., s32d3}, descA, descB, spMeta, 0, scaleD;"
        ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.u8", 4, 0, 3),
    ],
)
def test_operand_counts_follow_the_manual_examples(text, d, a, tail):
    family = parse(text).family
    key = family.key + ".a" if a else family.key
    form = Form(CATALOGUE.family(key), parse(text).choices)
    names = [o.name for o in form.operands]
    assert sum(n.startswith("d.") for n in names) == d
    assert sum(n.startswith("a.") for n in names) == a
    rest = [n for n in names if not n.startswith(("d.", "a.")) and n not in ("a_desc", "b_desc")]
    assert len(rest) == tail, rest


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8", "N in {8, 16, 24, 32, 48"),
        ("wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16", ".bf16"),
        ("wgmma.mma_async.sync.aligned.m64n8k32.f32.f16.f16", "its shapes are .m64nNk16"),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k8.f32.tf32.tf32", "its shapes are .m64nNk16"),
        ("wgmma.mma_async.sync.aligned.m64n8k16.satfinite.f32.f16.f16", ".satfinite"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.xor.popc", ".xor"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and", "missing popc"),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k256.s32.b1.b1.and.popc", "not allowed"),
        ("wgmma.mma_async.sync.m64n8k16.f32.f16.f16", "missing aligned"),
        ("wgmma.fence.aligned", "missing sync"),
    ],
)
def test_errors_name_the_offending_qualifier(text, words):
    with pytest.raises(IllegalForm) as info:
        parse(text)
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", Target((8, 0), 90, "a")),
        ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8", Target((8, 0), 90, "a")),
        ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8", Target((8, 4), 90, "a")),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16", Target((8, 2), 90, "a")),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.s8", Target((8, 4), 90, "a")),
        ("wgmma.fence.sync.aligned", Target((8, 0), 90, "a")),
        ("wgmma.wait_group.sync.aligned", Target((8, 0), 90, "a")),
    ],
)
def test_targets_follow_the_notes(text, target):
    form = parse(text)
    assert form.targets.alternatives == (target,)
    assert not form.admits((8, 7), "sm_90") and not form.admits((8, 7), "sm_100a")


def test_immediates_are_checked():
    f16 = parse("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16")
    wg.check_immediates(f16, imm_scale_a=-1, imm_scale_b=1, imm_trans_a=1, imm_trans_b=0)
    with pytest.raises(OperandError, match="valid values are \\[-1, 1\\]"):
        wg.check_immediates(f16, imm_scale_a=0)
    with pytest.raises(OperandError, match="valid values are \\[0, 1\\]"):
        wg.check_immediates(f16, imm_trans_b=2)
    f16_regs = Form(CATALOGUE.family("wgmma.f16.a"), f16.choices)
    with pytest.raises(OperandError, match="no operand imm-trans-a"):
        wg.check_immediates(f16_regs, imm_trans_a=0)
    tf32 = parse("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32")
    with pytest.raises(OperandError, match="no operand imm-trans-b"):
        wg.check_immediates(tf32, imm_trans_b=0)
    sp = parse("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8")
    wg.check_immediates(sp, sp_sel=0)
    with pytest.raises(OperandError, match="sp-sel = 1"):
        wg.check_immediates(sp, sp_sel=1)
    wg.check_immediates(parse("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32"), sp_sel=1)


def test_instruction_lines_write_vectors_and_immediates():
    form = Form(CATALOGUE.family("wgmma.sp.f16.a"), parse("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16").choices)
    line = instruction_line(form)
    assert "{%d_0, %d_1, %d_2, %d_3}, {%a_0, %a_1, %a_2, %a_3}, %b_desc, %sp_meta, 0, %scale_d, -1, 1, 1;" in line
    assert "wgmma.wait_group.sync.aligned 0;" in instruction_line(parse("wgmma.wait_group.sync.aligned"))


def test_neighbours_are_illegal_and_seeded():
    family = CATALOGUE.family("wgmma.int")
    a = neighbours(family, random.Random(1), 10)
    assert a == neighbours(family, random.Random(1), 10) and len(a) == 10
    for text, _ in a:
        with pytest.raises(IllegalForm):
            parse(text)


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("known", [k for k in KNOWN if k.example], ids=lambda k: k.name)
def test_known_disagreement_is_real(ptxas, known):
    text, where, _ = known.example
    request = pb.example_request(where)
    ours = catalogue_verdict(text, request)
    ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [instruction_line(parse(text) if ours[0] else _closest(text), text)])
    assert ours[0] != theirs, f"{known.name}: ptxas and the catalogue now agree on {text}"


def test_sampled_forms_agree_with_ptxas(ptxas):
    """A seeded sample: 3 legal forms per family at all their requests and 4 neighbours per family."""
    rng = random.Random(7)
    sample = []
    for family in wg.FAMILIES:
        forms = legal_forms(family)
        for form in rng.sample(forms, min(3, len(forms))):
            sample += [(form.text, "legal", form, r) for r, _ in _requests(form)]
    sample += illegal_cases(per_family=4, seed=7)
    assert compare(ptxas, sample) == []


def test_comparison_detects_a_wrong_verdict(ptxas):
    """A catalogue that allowed .m64n40k32 for .s8 (or wgmma on sm_90) would be caught."""
    line = instruction_line(parse("wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.s8")).replace("m64n48k32", "m64n40k32")
    ((ok, message),) = pa.ptxas_verdicts(ptxas, pa.Request("sm_90a", LATEST), [line])
    assert not ok and message
    line = instruction_line(parse("wgmma.fence.sync.aligned"))
    ((ok, message),) = pa.ptxas_verdicts(ptxas, pa.Request("sm_90", LATEST), [line])
    assert not ok and "sm_90" in message


def test_immediate_values_agree_with_ptxas(ptxas):
    """ptxas checks the immediates as :func:`check_immediates` does."""
    base = parse("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16")
    cases = [("sp_sel", v) for v in (0, 1, 2, 3)] + [("imm_scale_a", v) for v in (-1, 0, 1, 2)] + [("imm_trans_b", v) for v in (0, 1, 2)]
    lines, ours = [], []
    for name, value in cases:
        lines.append(instruction_line(base, **{name: value}))
        try:
            wg.check_immediates(base, **{name: value})
            ours.append(True)
        except OperandError:
            ours.append(False)
    theirs = [ok for ok, _ in pa.ptxas_verdicts(ptxas, pa.Request("sm_90a", LATEST), lines)]
    assert theirs == ours


_CHUNKS = 8


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_every_legal_form_and_neighbour_agrees_with_ptxas(ptxas, chunk):
    families = [f for i, f in enumerate(wg.FAMILIES) if i % _CHUNKS == chunk]
    assert compare(ptxas, legal_cases(families) + illegal_cases(families)) == []


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("wgmma.f16.a", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"),
        ("wgmma.tf32", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32"),
        ("wgmma.f8.a", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"),
        ("wgmma.int", "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8"),
        ("wgmma.sp.bf16.a", "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16"),
    ],
)
def test_operand_lists_are_exact_for_ptxas(ptxas, key, text):
    """Each form's operand list is accepted, and the list with one more immediate (an
    imm-trans-a where "the transpose operation is only supported for .f16/.bf16 ... using matrix
    descriptors", or an imm-scale for the integer forms) or one fewer is refused."""
    form = Form(CATALOGUE.family(key), parse(text).choices)
    line = instruction_line(form)
    longer = line.replace("; }", ", 1; }")
    shorter = line.rsplit(",", 1)[0] + "; }"
    verdicts = [ok for ok, _ in pa.ptxas_verdicts(ptxas, pa.Request("sm_90a", LATEST), [line, longer, shorter])]
    assert verdicts == [True, False, False]
