"""The §9.7.16 catalogue of the tcgen05 instructions (spec/tcgen05.py): parsing, targets, operands,
and its verdicts against two oracles of CUDA 13.0.

* **ptxas**: every legal form of every family is assembled as a tiny kernel at each of its
  alternatives that ptxas knows (``sm_100a`` at PTX ISA 8.6, ``sm_100f``/``sm_103a``/``sm_103f`` at
  8.8, ``sm_110a``/``sm_110f`` at 9.0), at ``sm_100a``, ``sm_103a`` and ``sm_110a`` at the newest
  version, and at ``sm_90a`` and ``sm_120a``, which have no tcgen05; a seeded sample of illegal
  neighbours (one qualifier changed, dropped or added) is tried at ``sm_103a`` with PTX ISA 8.8,
  where every legal tcgen05 form is admitted. Every disagreement must be one of :data:`KNOWN`, each
  quoting the manual sentence the catalogue follows, and each KNOWN example is replayed. The full
  set of neighbours is behind ``@pytest.mark.heavy``. The ptxas tests skip without ptxas.
  tcgen05.mma (1,568 legal forms, 10-30 ms of ptxas CPU a line) is tried with its operands
  (:func:`case_text`): by default a form of each of its 28 families at sm_100a with PTX ISA 9.0
  (where every legal tcgen05.mma form is admitted), 40 sampled (form, request) pairs, 200 of the
  1,200 combinations its rules refuse, and its illegal neighbours and reorderings at sm_100a; under
  ``@pytest.mark.heavy`` all 1,568 forms at sm_100a, all 11,616 other (form, request) pairs and all
  1,200 refused combinations.
* **the cuda::ptx headers** (``include/cccl/cuda/__ptx/instructions/generated/tcgen05_*.h``): every
  ``asm`` string they hold is parsed at test time, with its ``__cccl_ptx_isa`` and
  ``__CUDA_ARCH_FEAT_SM*_ALL`` gates; each must be a legal form here, admitted where the header
  gates it, with the operand vector the header writes, and every form of a family the headers
  cover completely must be in them. The 384 asm strings of tcgen05_mma.h and tcgen05_mma_ws.h are
  parsed with their operands (which pick the family). The tests skip without the headers.

The command line (``ptxspec forms tcgen05``, and an illegal form's located error) is checked too.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ptxas_batch as pb
import pytest

from ptxspec.conformance import ptxas_agreement as pa
from ptxspec.spec import tcgen05 as tc
from ptxspec.spec.catalogue import CATALOGUE, Form, Target, _match
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError

legal_forms = pb.legal_forms

# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

#: "immHalfSplitoff is an immediate argument": the tests write 16 (the half of a 32-lane access);
#: "The optional immediate argument scale-input-d" ("The valid range ... is [0, 15]"): 1.
IMMEDIATE_TEXT = {"immHalfSplitoff": "16", "scale_input_d": "1"}


def instruction_line(form: Form | None, text: str | None = None, **immediates: int | str) -> str:
    """One ``{ }`` block declaring a register per register operand and applying the instruction:
    the register vectors (``r``, ``disable-output-lane``) in braces (even of one register: "a
    brace-enclosed vector expression"), the addresses in brackets
    (:func:`ptxspec.spec.tcgen05.addresses`), the immediates as :data:`IMMEDIATE_TEXT` or as given
    (``nCols=32`` writes nCols as an immediate)."""
    if form is None:
        assert text is not None
        form = operands_for(text)
    text = (text or form.text).split()[0]  # a case's text may carry its operand template
    values = {**IMMEDIATE_TEXT, **{k: str(v) for k, v in immediates.items()}}
    declared = [f".reg .{pa.register_type(o.type)} {pb.reg(o.name)};" for o in form.operands if o.name not in values]
    bracketed = tc.addresses(form)
    parts: list[str] = []
    for group in form.layout:
        if len(group) > 1 or "." in group[0].name:
            parts.append("{" + ", ".join(pb.reg(o.name) for o in group) + "}")
            continue
        written = values.get(group[0].name, pb.reg(group[0].name))
        parts.append(f"[{written}]" if group[0].name in bracketed else written)
    return f"{{ {' '.join(declared)} {text}{' ' + ', '.join(parts) if parts else ''}; }}"


def operands_for(text: str) -> Form:
    """The operands to write for an illegal text: the form that its qualifiers give in a family
    whose slots take them all (rules not applied: ``.16x256b.x64`` gets Table 47's 4 x 64
    registers), else the legal form of the same operation with the most qualifiers in common. A
    text with an operand template (:func:`case_text`) gets the family of that shape."""
    head, _, written = text.partition(" ")
    tokens = head.split(".")[1:]
    wanted = operand_shape(written) if written.strip() else None
    for family in tc.FAMILIES:
        matched = _match(family, tokens)
        if isinstance(matched, Form) and (wanted is None or shape_of(matched) == wanted):
            return matched
    operation = "ld.red" if tokens[:2] == ["ld", "red"] else tokens[0] if tokens else ""
    best, score = None, -1
    for family in tc.FAMILIES:
        for form in legal_forms(family):
            same = tc.operation_of(family) == operation
            s = len(set(tokens) & {t for _, t in form.choices}) + (100 if same else 0)
            if s > score:
                best, score = form, s
    assert best is not None
    return best


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

#: The targets ptxas 13.0 knows that the Target ISA Notes name (it has no sm_101a/sm_101f: "Renamed
#: to sm_110a from PTX ISA version 9.0").
PTXAS_TARGETS = ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")
#: The newest PTX ISA version ptxas 13.0 takes; the seed is the 9.0 manual's §9.7.16.
LATEST = (9, 0)
#: Requests every legal form is tried at besides its own alternatives: the Blackwell targets at
#: the newest version, and two targets without tcgen05 (sm_90a: "Requires sm_100a ..."; sm_120a:
#: another family).
FIXED = (
    pa.Request("sm_100a", LATEST), pa.Request("sm_103a", LATEST), pa.Request("sm_110a", LATEST),
    pa.Request("sm_90a", pa.SPEC_VERSION), pa.Request("sm_90a", LATEST), pa.Request("sm_120a", LATEST),
)  # fmt: skip
#: Where illegal neighbours are tried: sm_103a at PTX ISA 8.8 admits every legal form of the chapter
#: (the sm_100f family, shift's "sm_103a", ld.red's "sm_103f"), so a refusal there is the text's.
ILLEGAL_AT = pa.Request("sm_103a", (8, 8))
#: Where the illegal neighbours of tcgen05.mma are tried: sm_100a at the newest version admits every
#: legal tcgen05.mma form (.kind::i8 and .scale_vec::NX are not on sm_103a).
MMA_ILLEGAL_AT = pa.Request("sm_100a", LATEST)
#: The tcgen05.mma families (§9.7.16.10.9) and the others.
MMA_FAMILIES = tuple(f for f in tc.FAMILIES if tc.operation_of(f).startswith("mma"))
OTHER_FAMILIES = tuple(f for f in tc.FAMILIES if f not in MMA_FAMILIES)


def illegal_at(family) -> pa.Request:
    return MMA_ILLEGAL_AT if family in MMA_FAMILIES else ILLEGAL_AT


def requests(form: Form) -> list[pa.Request]:
    """The form's own alternatives that ptxas knows, each at its version, and :data:`FIXED`."""
    own = [pa.Request(t.arch, t.ptx) for t in form.targets.alternatives if t.arch in PTXAS_TARGETS]
    return sorted(set(own) | set(FIXED))


def catalogue_verdict(text: str, request: pa.Request) -> tuple[bool, str]:
    return pb.catalogue_verdict(tc.parse, text, request)


def all_legal(families=tc.FAMILIES) -> list[Form]:
    return [f for family in families for f in legal_forms(family)]


def case_text(form: Form) -> str:
    """The text of a case: a tcgen05.mma form with its operand template (the manual's names, the
    addresses in brackets), which :func:`ptxspec.spec.tcgen05.parse` needs to reach the families
    that only their operands tell apart; any other form's qualifiers."""
    if not tc.operation_of(form.family).startswith("mma"):
        return form.text
    bracketed = tc.addresses(form)
    parts = []
    for group in form.layout:
        if len(group) > 1 or "." in group[0].name:
            parts.append("{" + ", ".join(o.name for o in group) + "}")
        else:
            parts.append(f"[{group[0].name}]" if group[0].name in bracketed else group[0].name)
    return f"{form.text} {', '.join(parts)}"


def legal_cases(forms=None) -> list[pb.Case]:
    return [(case_text(f), "legal", f, r) for f in (forms if forms is not None else all_legal()) for r in requests(f)]


def rule_cases() -> list[pb.Case]:
    """Every slot combination of a tcgen05.mma family that one of its rules refuses, with the
    family's operands (scale-input-d with .kind::f8f6f4, .ashift with .collector::a::fill, ...),
    at :data:`MMA_ILLEGAL_AT`."""
    return [(case_text(f), "rule", f, MMA_ILLEGAL_AT) for family in MMA_FAMILIES for f in pb.all_forms(family) if not pb.is_legal(f)]


# ---------------------------------------------------------------------------------------------
# Illegal neighbours
# ---------------------------------------------------------------------------------------------

#: Qualifiers of other instructions tried as insertions, besides the other tcgen05 families' own.
_FOREIGN = ("shared", "shared::cluster", "b16", "b64", "f16", "u32", "relaxed", "sync", "aligned", "trans", "x3", "16x16b", "cta_group::4")


def neighbours(family, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Illegal texts one qualifier away from a legal form of ``family``: a slot's token replaced by
    another of the slot ("changed") or by one of another family's slot of that name ("swapped"),
    any qualifier but the operation dropped ("dropped"), or a qualifier of another family (or
    instruction) inserted ("foreign")."""
    out: set[tuple[str, str]] = set()
    forms = legal_forms(family)
    own = {t for s in family.slots for t in s.tokens}
    foreign = sorted(({t for f in tc.FAMILIES for s in f.slots for t in s.tokens} | set(_FOREIGN)) - own)
    kin: dict[str, set[str]] = {}
    for f in tc.FAMILIES:
        for s in f.slots:
            kin.setdefault(s.name, set()).update(s.tokens)
    tries = 0
    while len(out) < count and tries < 60 * count:
        tries += 1
        base = rng.choice(forms)
        chosen = dict(base.choices)
        combo = [chosen.get(s.name, "") for s in family.slots]
        k = rng.randrange(len(family.slots) + 3)
        if k == len(family.slots) + 2:
            # A slot's token replaced by one that another family's slot of that name takes
            # (.16x64b by .128x256b, .b32 by .u32, .shared::cta by .shared::cluster).
            slots = [(i, s) for i, s in enumerate(family.slots) if combo[i] and kin.get(s.name, set()) - s.token_set]
            if not slots:
                continue
            i, slot = rng.choice(slots)
            combo[i] = rng.choice(sorted(kin[slot.name] - slot.token_set))
            text, category = ".".join(["tcgen05", *(t for t in combo if t)]), "swapped"
        elif k >= len(family.slots):
            tokens = [t for t in combo if t]
            if k == len(family.slots):
                tokens.insert(rng.randrange(1, len(tokens) + 1), rng.choice(foreign))
                category = "foreign"
            else:
                if len(tokens) < 2:
                    continue
                tokens.pop(rng.randrange(1, len(tokens)))  # never the operation itself
                category = "dropped"
            text = ".".join(["tcgen05", *tokens])
        else:
            text, category = pb.changed_form(family, combo, k, rng), "changed"
            if text is None:
                continue
        try:
            tc.parse(text)
        except PtxSpecError:
            out.add((text, category))
    return sorted(out)


def illegal_cases(families=tc.FAMILIES, per_family: int = 12, seed: int = 0, per_mma_family: int | None = None) -> list[pb.Case]:
    """``per_family`` illegal neighbours of each family (``per_mma_family`` of a tcgen05.mma family, if given)."""
    out: list[pb.Case] = []
    for family in families:
        rng = random.Random(f"{seed}:{family.key}")
        count = per_mma_family if per_mma_family is not None and family in MMA_FAMILIES else per_family
        out += [(text, category, None, illegal_at(family)) for text, category in neighbours(family, rng, count)]
    return out


def order_cases(seed: int = 0) -> list[pb.Case]:
    """The same qualifiers in another order, at :data:`ILLEGAL_AT`: two neighbouring qualifiers
    swapped (ptxas takes most qualifiers in any order, and so does the catalogue), the
    instruction's name moved (tcgen05.sync.ld..., tcgen05.ld.sync.red...) and the decompression
    formats reversed -- the last two are :data:`KNOWN` catalogue errors."""
    out: dict[str, pa.Request] = {}
    for family in tc.FAMILIES:
        add = lambda text: out.setdefault(text, illegal_at(family))  # noqa: B023, E731
        rng = random.Random(f"{seed}:order:{family.key}")
        forms = legal_forms(family)
        for form in rng.sample(forms, min(1 if family in MMA_FAMILIES else 3, len(forms))):
            tokens = [t for _, t in form.choices]
            named = len(tc.operation_of(family).split("."))
            if len(tokens) > named + 1:
                i = rng.randrange(named, len(tokens) - 1)
                add(".".join(["tcgen05", *tokens[:i], tokens[i + 1], tokens[i], *tokens[i + 2 :]]))
            if len(tokens) > named:
                add(".".join(["tcgen05", *tokens[: named - 1], tokens[named], tokens[named - 1], *tokens[named + 1 :]]))
            if form.get("dst_fmt"):
                add(form.text.replace(f"b8x16.{form['src_fmt']}", f"{form['src_fmt']}.b8x16"))
    return [(text, "order", None, out[text]) for text in sorted(out)]


# ---------------------------------------------------------------------------------------------
# Known disagreements
# ---------------------------------------------------------------------------------------------

#: The tcgen05 instruction names: ptxas reads ``tcgen05.ld.red`` and the other operations as the
#: instruction's name, which no other qualifier may precede.
_NAMED = r"(?:alloc|dealloc|relinquish_alloc_permit|st|cp|shift|commit|wait::ld|wait::st|fence::before_thread_sync|fence::after_thread_sync)"
#: tcgen05.mma's names: tcgen05.mma, tcgen05.mma.sp, tcgen05.mma.ws, tcgen05.mma.ws.sp.
_MMA_NAME = r"mma\.(?:ws\.sp\.|sp\.(?![^ ]*\.ws(?:\.|$))|ws\.(?![^ ]*\.sp(?:\.|$))|(?![^ ]*\.(?:ws|sp)(?:\.|$)))"
_NAME_MISPLACED = rf"tcgen05\.(?!{_NAMED}(?:\.|$)|{_MMA_NAME}|ld\.red\.|ld\.(?![^ ]*\.red(?:\.|$)))[^ ]*"

#: Where ptxas 13.0 and the manual differ (kind "ptxas": the catalogue follows the manual), and the
#: open catalogue errors (kind "catalogue": reported to the owners of spec/catalogue.py; the test of
#: each example skips once it is fixed).
KNOWN: tuple[pa.Known, ...] = (
    pa.Known(
        "ld-st-aligned-optional",
        "ptxas",
        r"tcgen05\.(ld|st)(\.red)?\.sync\.(?!aligned)[^ ]*",
        "illegal",
        '§9.7.16.8.3/§9.7.16.8.4: the syntax lines write "tcgen05.ld.sync.aligned" and "tcgen05.st.sync.aligned", '
        'and "the mandatory .aligned qualifier indicates that all threads in the warp must execute the same '
        'tcgen05.ld instruction"; ptxas 13.0 accepts tcgen05.ld, tcgen05.ld.red and tcgen05.st without .aligned '
        "(it requires .sync, and .aligned for alloc, dealloc, relinquish_alloc_permit and wait).",
        category="dropped",
        example=("tcgen05.ld.sync.32x32b.x2.b32", "sm_103a@8.8", ""),
    ),
    pa.Known(
        "decompression-format-ignored",
        "ptxas",
        r"tcgen05\.(?!cp\.)[^ ]*\.(b8x16|b6x16_p32|b4x16_p64)(\.[^ ]*)?",
        "illegal",
        '§9.7.16.9.2: only tcgen05.cp has the formats, "tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} '
        '[taddr], s-desc; .src_fmt = { .b6x16_p32 , .b4x16_p64 } .dst_fmt = { .b8x16 }"; the other syntax lines '
        "(§9.7.16.7.1, §9.7.16.8.3-5, §9.7.16.9.3, §9.7.16.11.1, §9.7.16.12.1) have none; ptxas 13.0 accepts and "
        "ignores .b8x16, .b6x16_p32 and .b4x16_p64 on every tcgen05 instruction (tcgen05.fence::before_thread_sync.b8x16).",
        category="foreign",
        example=("tcgen05.fence::before_thread_sync.b8x16", "sm_103a@8.8", ""),
    ),
    pa.Known(
        "instruction-name-first",
        "catalogue",
        _NAME_MISPLACED,
        "legal",
        'Each syntax line begins with the instruction\'s name, "tcgen05.ld.sync.aligned.shape1.num{.pack}.b32", '
        '"tcgen05.ld.red.sync.aligned.shape3...", "tcgen05.alloc.cta_group.sync.aligned...", and ptxas 13.0 '
        "refuses the name's parts anywhere else (tcgen05.sync.aligned.ld...: \"Not a name of any known "
        'instruction"). The catalogue places every qualifier by its tokens, in any order, so it accepts them: an '
        "open catalogue error; the fix is a leading slot in spec/catalogue.py's _match (wgmma has the same: the catalogue "
        "accepts wgmma.sync.aligned.fence, ptxas 13.0 refuses it).",
        category="order",
        example=("tcgen05.sync.aligned.ld.32x32b.x2.b32", "sm_103a@8.8", ""),
    ),
    pa.Known(
        "decompression-formats-in-order",
        "catalogue",
        r"tcgen05\.cp\.[^ ]*\.(b6x16_p32|b4x16_p64)\.b8x16(\.[^ ]*)?",
        "legal",
        '§9.7.16.9.2 writes the pair in one order, "{.dst_fmt.src_fmt}" (".b8x16.b6x16_p32" in its example), and '
        'ptxas 13.0 refuses .b6x16_p32.b8x16 ("Illegal modifier"). The catalogue orders only type qualifiers '
        "(spec/catalogue.py's _is_type_slot: names ending in 'type'), so it accepts the formats either way: an open "
        "catalogue error (ldmatrix's .dst_fmt.src_fmt has the same: ptxas 13.0 refuses "
        "ldmatrix.sync.aligned.m16n16.x1.trans.b6x16_p32.b8x16, the catalogue accepts it).",
        category="order",
        example=("tcgen05.cp.cta_group::1.128x256b.b6x16_p32.b8x16", "sm_103a@8.8", ""),
    ),
    pa.Known(
        "mma-scale-input-d-with-i8",
        "ptxas",
        r"tcgen05\.mma(\.sp)?\.cta_group::[12]\.kind::i8[^ ]* .*, enable_input_d, scale_input_d",
        "illegal",
        '§9.7.16.10.9.1/§9.7.16.10.9.2: "The argument scale-input-d is only valid for .kind::tf32 and .kind::f16", '
        'and the integer syntax lines have none ("tcgen05.mma.cta_group.kind::i8 [d-tmem], a-desc, b-desc, idesc, '
        '{ disable-output-lane }, enable-input-d;"); ptxas 13.0 accepts scale-input-d with .kind::i8 (tcgen05.mma and '
        "tcgen05.mma.sp, every collector and .ashift choice), and refuses it with .kind::f8f6f4 as the manual does.",
        category="rule",
        example=("tcgen05.mma.cta_group::1.kind::i8 [d_tmem], a_desc, b_desc, idesc, enable_input_d, scale_input_d", "sm_100a@9.0", ""),
    ),
    pa.Known(
        "mma-mxf8f6f4-default-scale-vector",
        "ptxas",
        r"tcgen05\.mma(\.sp)?\.cta_group::[12]\.kind::mxf8f6f4\.block_scale(\.collector::a::\w+)?( .*)?",
        "legal",
        '§9.7.16.10.9.1/§9.7.16.10.9.2: "tcgen05.mma.cta_group.kind.block_scale{.scale_vectorsize}", "Introduced in PTX '
        'ISA version 8.6", "Qualifiers .block16 and .block32 introduced in PTX ISA version 8.8"; the manual gives a default '
        '.scale_vectorsize only for .kind::mxf4 ("it defaults to .block32"), none for .kind::mxf8f6f4, so the form without '
        "one is a PTX ISA 8.6 form; ptxas 13.0 reads it as .block32 and refuses it below 8.8 (\"Feature '.block32' "
        'requires PTX ISA .version 8.8 or later").',
        category="legal",
        request=r"sm_100a@8\.[67]",
        example=("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale", "sm_100a@8.6", ""),
    ),
)


def compare(ptxas: str, cases: list[pb.Case]) -> list[dict]:
    """Disagreement records of the cases not covered by :data:`KNOWN`."""
    return pb.compare(ptxas, cases, parse=tc.parse, line=instruction_line, known=KNOWN, chunk=150)


# ---------------------------------------------------------------------------------------------
# Without ptxas: the catalogue
# ---------------------------------------------------------------------------------------------

SECTIONS = {
    "tcgen05.alloc": "9.7.16.7.1", "tcgen05.dealloc": "9.7.16.7.1", "tcgen05.relinquish_alloc_permit": "9.7.16.7.1",
    "tcgen05.ld": "9.7.16.8.3", "tcgen05.ld.16x32bx2": "9.7.16.8.3",
    "tcgen05.ld.red.f32": "9.7.16.8.3", "tcgen05.ld.red.f32.16x32bx2": "9.7.16.8.3",
    "tcgen05.ld.red.int": "9.7.16.8.3", "tcgen05.ld.red.int.16x32bx2": "9.7.16.8.3",
    "tcgen05.st": "9.7.16.8.4", "tcgen05.st.16x32bx2": "9.7.16.8.4", "tcgen05.wait": "9.7.16.8.5",
    "tcgen05.cp": "9.7.16.9.2", "tcgen05.shift": "9.7.16.9.3",
    "tcgen05.fence": "9.7.16.11.1", "tcgen05.commit": "9.7.16.12.1",
}  # fmt: skip
#: The tcgen05.mma families: per syntax line, A from a descriptor and then from Tensor Memory
#: (".a_tmem"), and the optional operands each family has (disable-output-lane, scale-input-d;
#: zero-column-mask-desc for .ws).
_PLAIN = ("", ".disable_output_lane", ".scale_input_d", ".disable_output_lane.scale_input_d")
MMA_SECTIONS: dict[str, str] = {}
for sp, section in (("", "9.7.16.10.9.1"), (".sp", "9.7.16.10.9.2")):
    MMA_SECTIONS.update({f"tcgen05.mma{sp}{a}{extra}": section for a in ("", ".a_tmem") for extra in _PLAIN})
    MMA_SECTIONS.update({f"tcgen05.mma{sp}.block_scale{a}": section for a in ("", ".a_tmem")})
for sp, section in (("", "9.7.16.10.9.3"), (".sp", "9.7.16.10.9.4")):
    MMA_SECTIONS.update({f"tcgen05.mma.ws{sp}{a}{z}": section for a in ("", ".a_tmem") for z in ("", ".zero_column_mask")})
SECTIONS = {**SECTIONS, **MMA_SECTIONS}


def test_the_chapter_is_in_the_catalogue_with_its_sections():
    assert [f.key for f in CATALOGUE.families("tcgen05")] == list(SECTIONS)
    assert {f.key: f.section for f in tc.FAMILIES} == SECTIONS
    assert all(f.summary for f in tc.FAMILIES)


def test_every_legal_form_parses_to_its_family():
    """Each legal form parses to its family: from its qualifiers, or, for the tcgen05.mma families
    that only their operands tell apart, from its qualifiers and operand template (:func:`case_text`)."""
    for family in tc.FAMILIES:
        forms = legal_forms(family)
        assert forms, family.key
        for form in forms:
            parsed = tc.parse(case_text(form))
            assert parsed.family.key == family.key and parsed.choices == form.choices, form.text
    # Without operands, the first family of the qualifiers: A from a descriptor, no optional operand.
    assert tc.parse("tcgen05.mma.cta_group::1.kind::f16").family.key == "tcgen05.mma"
    assert tc.parse("tcgen05.mma.cta_group::1.kind::f16.ashift").family.key == "tcgen05.mma.a_tmem"


#: Legal tcgen05.mma forms per family (see :func:`test_mma_form_counts_follow_the_syntax_and_table_54`).
MMA_LEGAL_COUNT = 1568


def test_form_counts_follow_the_syntax_and_table_47():
    """shape1 x .num: 8 + 7 + 6 + 8 (Table 47's NA cut .16x128b.x128, .16x256b.x64/.x128), .16x32bx2
    all 8, each with and without .pack/.unpack; ld.red: .x2 to .x128 x .min/.max x {.abs}{.NaN} (f32)
    or .u32/.s32; cp: 3 plain shapes + 2 .64x128b + 1 .32x128b, x 3 formats x 2 CTA groups."""
    count = {f.key: len(legal_forms(f)) for f in OTHER_FAMILIES}
    assert count == {
        "tcgen05.alloc": 4, "tcgen05.dealloc": 2, "tcgen05.relinquish_alloc_permit": 2,
        "tcgen05.ld": 29 * 2, "tcgen05.ld.16x32bx2": 8 * 2,
        "tcgen05.ld.red.f32": 7 * 2 * 4, "tcgen05.ld.red.f32.16x32bx2": 7 * 2 * 4,
        "tcgen05.ld.red.int": 7 * 2 * 2, "tcgen05.ld.red.int.16x32bx2": 7 * 2 * 2,
        "tcgen05.st": 29 * 2, "tcgen05.st.16x32bx2": 8 * 2, "tcgen05.wait": 2,
        "tcgen05.cp": 6 * 3 * 2, "tcgen05.shift": 2, "tcgen05.fence": 2, "tcgen05.commit": 8,
    }  # fmt: skip
    assert sum(count.values()) == 374


def test_mma_form_counts_follow_the_syntax_and_table_54():
    """Per .cta_group (2) and .kind (4; .kind::f16/.tf32 with scale-input-d): with a-desc no .ashift
    and 5 collector choices (none, ::fill, ::use, ::lastuse, ::discard); with [a-tmem] {.ashift} x 5
    less .ashift with ::use/::fill = 8. Block scaling: Table 54's .kind x .scale_vectorsize pairs --
    .mxf8f6f4 {none, 1X, block32}, .mxf4 {none, 2X, block32}, .mxf4nvf4 {2X, 4X, block16, block32}
    -- x 5 collector choices x 2 CTA groups. .ws: .cta_group::1 x 4 kinds x 17 collector choices."""
    count = {f.key: len(legal_forms(f)) for f in tc.FAMILIES if f.key in MMA_SECTIONS}
    for sp in ("", ".sp"):
        for a, per_kind in (("", 5), (".a_tmem", 8)):
            assert count[f"tcgen05.mma{sp}{a}"] == count[f"tcgen05.mma{sp}{a}.disable_output_lane"] == 2 * 4 * per_kind
            assert count[f"tcgen05.mma{sp}{a}.scale_input_d"] == count[f"tcgen05.mma{sp}{a}.disable_output_lane.scale_input_d"] == 2 * 2 * per_kind
            assert count[f"tcgen05.mma{sp}.block_scale{a}"] == 2 * 10 * 5
        for a in ("", ".a_tmem"):
            for z in ("", ".zero_column_mask"):
                assert count[f"tcgen05.mma.ws{sp}{a}{z}"] == 4 * 17
    assert sum(count.values()) == MMA_LEGAL_COUNT


#: Table 47 as the manual prints it: .num -> (".16x32bx2 / .16x64b / .32x32b", ".16x128b", ".16x256b").
TABLE_47 = {
    "x1": (1, 2, 4), "x2": (2, 4, 8), "x4": (4, 8, 16), "x8": (8, 16, 32), "x16": (16, 32, 64),
    "x32": (32, 64, 128), "x64": (64, 128, None), "x128": (128, None, None),
}  # fmt: skip


@pytest.mark.parametrize("op", ["ld", "st"])
def test_register_vectors_follow_table_47(op):
    columns = {"16x32bx2": 0, "16x64b": 0, "32x32b": 0, "16x128b": 1, "16x256b": 2}
    for shape, column in columns.items():
        for num, sizes in TABLE_47.items():
            text = f"tcgen05.{op}.sync.aligned.{shape}.{num}.b32"
            if sizes[column] is None:
                with pytest.raises(IllegalForm, match=rf"\.{num} is not a \.num of \.{shape}"):
                    tc.parse(text)
                continue
            form = tc.parse(text)
            vector = [o for o in form.operands if o.name.startswith("r.")]
            assert len(vector) == tc.registers(form) == sizes[column], text
            assert all(o.type == "b32" and o.destination == (op == "ld") for o in vector)


@pytest.mark.parametrize(
    ("text", "template"),
    [
        # §9.7.16.7.1: "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sMemAddr1], 32;"
        ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "[dst], nCols"),
        ("tcgen05.dealloc.cta_group::1.sync.aligned.b32", "taddr, nCols"),
        ("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned", ""),
        # §9.7.16.8.3: "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r0, r1}, [taddr1];"
        ("tcgen05.ld.sync.aligned.32x32b.x2.b32", "{r.0, r.1}, [taddr]"),
        # "tcgen05.ld.red.sync.aligned.16x32bx2.x8.u32.max {r0, ..., r7}, redVal, [taddr3], 16;"
        ("tcgen05.ld.red.sync.aligned.16x32bx2.x8.u32.max", "{r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7}, redval, [taddr], immHalfSplitoff"),
        # §9.7.16.8.4: "tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32 [taddr1], {r0, r1};"
        ("tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32", "[taddr], {r.0, r.1}"),
        ("tcgen05.st.sync.aligned.16x32bx2.x1.b32", "[taddr], immHalfSplitoff, {r.0}"),
        ("tcgen05.wait::st.sync.aligned", ""),
        # §9.7.16.9.2: "tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32 [taddr1], sdesc1;"
        ("tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32", "[taddr], s_desc"),
        ("tcgen05.cp.cta_group::1.64x128b.warpx2::02_13", "[taddr], s_desc"),
        # §9.7.16.9.3: "tcgen05.shift.down.cta_group::1 [taddr0];" (qualifiers in either order)
        ("tcgen05.shift.down.cta_group::1", "[taddr]"),
        # §9.7.16.12.1: "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [mbarObj1];"
        ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64", "[mbar]"),
        ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64", "[mbar], ctaMask"),
        ("tcgen05.fence::before_thread_sync", ""),
    ],
)
def test_manual_examples_parse_with_their_operands(text, template):
    form = tc.parse(text)
    line = instruction_line(form, immHalfSplitoff="immHalfSplitoff")
    written = line.split(form.text, 1)[1].removesuffix("; }").strip()
    assert re.sub(r"%r_(\d+)", r"r.\1", written).replace("%", "") == template


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # §9.7.16.10.9.1: "tcgen05.mma.cta_group::1.kind::tf32 [taddr0], adesc, bdesc, idesc, {m0, m1, m2, m3}, p;"
        ("tcgen05.mma.cta_group::1.kind::tf32 [taddr0], adesc, bdesc, idesc, {m0, m1, m2, m3}, p;", "tcgen05.mma.disable_output_lane"),
        # §9.7.16.10.9.2: "tcgen05.mma.sp.cta_group::1.kind::f16 [taddr0], adesc, bdesc, [tmem_spmeta0], idesc, p;"
        ("tcgen05.mma.sp.cta_group::1.kind::f16 [taddr0], adesc, bdesc, [tmem_spmeta0], idesc, p;", "tcgen05.mma.sp"),
        # §9.7.16.10.9.4: "tcgen05.mma.ws.sp.cta_group::1.kind::tf32.collector::b1::fill [taddr1], [taddr0], bdesc, [tmem_spmeta0], idesc, p;"
        ("tcgen05.mma.ws.sp.cta_group::1.kind::tf32.collector::b1::fill [taddr1], [taddr0], bdesc, [tmem_spmeta0], idesc, p;", "tcgen05.mma.ws.sp.a_tmem"),
        # The same with the descriptor operands the CUDA headers write.
        (
            "tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, {%4, %5, %6, %7, %8, %9, %10, %11}, P, %13",
            "tcgen05.mma.a_tmem.disable_output_lane.scale_input_d",
        ),
        ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [d], [a], b, idesc, [sa], [sb], p", "tcgen05.mma.block_scale.a_tmem"),
        ("tcgen05.mma.ws.cta_group::1.kind::i8 [d], a, b, idesc, p, zmask", "tcgen05.mma.ws.zero_column_mask"),
    ],
)
def test_mma_operand_templates_pick_the_family(text, key):
    assert tc.parse(text).family.key == key


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # §9.7.16.10.9.1's example has no .block_scale, which its syntax lines require.
        ("tcgen05.mma.cta_group::1.kind::mxf8f6f4 [taddr2], [taddr1], bdesc, idesc, [tmem_scaleA], [tmem_scaleB], p;", ["missing block_scale qualifier"]),
        # §9.7.16.10.9.2's ".collector::a:fill" and §9.7.16.10.9.3's ".collector::b2:use" (one colon).
        ("tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.block_scale.collector::a:fill [t2], [t1], b, [m], i, [sa], [sb], p;", ["collector::a:fill"]),
        ("tcgen05.mma.ws.cta_group::1.kind::i8.collector::b2:use [taddr2], [taddr1], bdesc, idesc, p;", ["collector::b2:use"]),
    ],
)
def test_mma_manual_examples_that_break_the_syntax(text, words):
    """Three of the manual's examples do not follow its syntax lines; the catalogue follows the lines."""
    with pytest.raises(IllegalForm) as info:
        tc.parse(text)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_mma_operands():
    """The operand lists of §9.7.16.10.9, in the manual's order, with its names."""
    listed = lambda text: [(o.name, o.type) for o in tc.parse(text).operands]  # noqa: E731
    assert listed("tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc, {m0, m1, m2, m3}, p, 3") == [
        ("d_tmem", "b32"), ("a_desc", "b64"), ("b_desc", "b64"), ("idesc", "b32"),
        *((f"disable_output_lane.{i}", "b32") for i in range(4)), ("enable_input_d", "pred"), ("scale_input_d", "u32"),
    ]  # fmt: skip
    assert listed("tcgen05.mma.sp.cta_group::2.kind::mxf4.block_scale [d], [a], b, [m], idesc, [sa], [sb], p") == [
        ("d_tmem", "b32"), ("a_tmem", "b32"), ("b_desc", "b64"), ("sp_meta_tmem", "b32"), ("idesc", "b32"),
        ("scale_A_tmem", "b32"), ("scale_B_tmem", "b32"), ("enable_input_d", "pred"),
    ]  # fmt: skip
    assert listed("tcgen05.mma.ws.sp.cta_group::1.kind::tf32 [d], a, b, [m], idesc, p, z") == [
        ("d_tmem", "b32"), ("a_desc", "b64"), ("b_desc", "b64"), ("sp_meta_tmem", "b32"), ("idesc", "b32"),
        ("enable_input_d", "pred"), ("zero_column_mask_desc", "b64"),
    ]  # fmt: skip
    # "The size of the vector is as follows: ::1 4, ::2 8".
    two = tc.parse("tcgen05.mma.cta_group::2.kind::i8 [d], a, b, idesc, {m0, m1, m2, m3, m4, m5, m6, m7}, p")
    assert len([o for o in two.operands if o.name.startswith("disable_output_lane.")]) == 8
    assert not any(o.destination for f in MMA_FAMILIES for o in legal_forms(f)[0].operands)
    assert tc.addresses(two) == {"d_tmem"}
    # Every family's operand list as the manual writes it.
    assert CATALOGUE.family("tcgen05.mma.sp.a_tmem.disable_output_lane.scale_input_d").operand_syntax == (
        "[d-tmem], [a-tmem], b-desc, [sp-meta-tmem], idesc, { disable-output-lane }, enable-input-d, scale-input-d"
    )


def test_operand_types():
    alloc = tc.parse("tcgen05.alloc.cta_group::1.sync.aligned.b32")
    assert [(o.name, o.type) for o in alloc.operands] == [("dst", "b64"), ("nCols", "u32")]  # generic address
    assert tc.parse("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32").operands[0].type == "b32"
    red = tc.parse("tcgen05.ld.red.sync.aligned.32x32b.x2.max.NaN.f32")
    assert [(o.name, o.type, o.destination) for o in red.operands] == [
        ("r.0", "f32", True),
        ("r.1", "f32", True),
        ("redval", "f32", True),
        ("taddr", "b32", False),
    ]
    cp = tc.parse("tcgen05.cp.cta_group::1.4x256b")
    assert [(o.name, o.type) for o in cp.operands] == [("taddr", "b32"), ("s_desc", "b64")]
    commit = tc.parse("tcgen05.commit.cta_group::1.mbarrier::arrive::one.multicast::cluster.b64")
    assert [(o.name, o.type) for o in commit.operands] == [("mbar", "b64"), ("ctaMask", "b16")]


@pytest.mark.parametrize(
    ("text", "words", "section"),
    [
        ("tcgen05.ld.sync.aligned.16x256b.x64.b32", [".x64 is not a .num of .16x256b", 'Table 47 gives "NA"'], "9.7.16.8.3"),
        ("tcgen05.st.sync.aligned.16x128b.x128.b32", [".x128 is not a .num of .16x128b", "Table 48"], "9.7.16.8.4"),
        ("tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32", ["qualifier .pack::16b is not allowed with tcgen05.st"], "9.7.16.8.4"),
        ("tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32", ["qualifier .unpack::16b is not allowed with tcgen05.ld"], "9.7.16.8.3"),
        ("tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32", [".x1 with .red", "at least .x2"], "9.7.16.8.3"),
        ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.s32", ["qualifier .abs is not allowed"], "9.7.16.8.3"),
        ("tcgen05.ld.red.sync.aligned.16x64b.x2.min.u32", ["shape .16x64b is not a shape of tcgen05.ld.red", ".32x32b, .16x32bx2"], "9.7.16.2.3"),
        ("tcgen05.ld.red.sync.aligned.32x32b.x2.add.u32", ["qualifier .add"], None),
        ("tcgen05.ld.sync.aligned.32x32b.b32", ["missing num"], None),
        ("tcgen05.cp.cta_group::1.64x128b", [".64x128b without .multicast", "requires .warpx2::02_13 or .warpx2::01_23"], "9.7.16.9.2"),
        ("tcgen05.cp.cta_group::1.32x128b.warpx2::01_23", [".warpx2::01_23 with .32x128b", "requires .warpx4"], "9.7.16.9.2"),
        ("tcgen05.cp.cta_group::1.128x256b.warpx4", [".warpx4 with .128x256b"], "9.7.16.9.2"),
        ("tcgen05.cp.cta_group::1.128x256b.b4x16_p64", [".b4x16_p64 without .b8x16"], "9.7.16.9.2"),
        ("tcgen05.cp.cta_group::1.128x256b.sync.aligned", ["qualifier .sync is not allowed"], None),
        ("tcgen05.alloc.sync.aligned.b32", ["missing cta_group"], None),
        ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cluster.b32", [".shared::cluster"], None),
        ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cta.b64", [".shared::cta"], None),
        ("tcgen05.shift.cta_group::1", ["missing down"], None),
        ("tcgen05.frob.cta_group::1", ["unknown tcgen05 operation .frob"], "9.7.16"),
        ("tcgen05.mma.cta_group::1.kind::f16.ashift.collector::a::fill", [".ashift with .collector::a::fill", "It is illegal to specify"], "9.7.16.10.9.1"),
        ("tcgen05.mma.sp.cta_group::2.kind::i8.ashift.collector::a::use", [".ashift with .collector::a::use"], "9.7.16.10.9.2"),
        ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale", ["must be explicitly specified"], "9.7.16.10.9.1"),
        ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X", [".scale_vec::2X with .kind::mxf8f6f4", "Table 54"], "9.7.16.10.7"),
        ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block16", [".block16 with .kind::mxf4", "Table 54"], "9.7.16.10.7"),
        ("tcgen05.mma.ws.cta_group::2.kind::f16", [".cta_group::2 with .ws"], "9.7.16.10.9.3"),
        ("tcgen05.mma.ws.sp.cta_group::1.kind::f16.collector::a::fill", ["collector::a::fill"], None),
        ("tcgen05.mma.cta_group::1.kind::f16.collector::b0::fill", ["collector::b0::fill"], None),
        ("tcgen05.mma.cta_group::1.kind::mxf4", ["kind::mxf4"], None),
        (
            "tcgen05.mma.cta_group::1.kind::i8 [d], a, b, idesc, p, 3",
            ["scale-input-d with .kind::i8", "only valid for .kind::tf32 and .kind::f16"],
            "9.7.16.10.9.1",
        ),
        ("tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc, {m0, m1, m2, m3, m4, m5, m6, m7}, p", ["no form of", "takes operands shaped"], "9.7.16.10.9.1"),
        ("tcgen05.mma.cta_group::1.kind::f16.ashift [d], a, b, idesc, p", ["no form of"], None),
    ],
)
def test_errors_name_the_offending_qualifier(text, words, section):
    with pytest.raises(IllegalForm) as info:
        tc.parse(text)
    for w in words:
        assert w in str(info.value), str(info.value)
    if section is not None:
        assert info.value.section == section


@pytest.mark.parametrize(
    ("text", "alternatives"),
    [
        (
            "tcgen05.alloc.cta_group::1.sync.aligned.b32",
            [
                Target((8, 6), 100, "a"),
                Target((8, 6), 101, "a"),
                Target((9, 0), 110, "a"),
                Target((8, 8), 100, "f"),
                Target((8, 8), 101, "f"),
                Target((9, 0), 110, "f"),
            ],
        ),
        ("tcgen05.shift.cta_group::1.down", [Target((8, 6), 100, "a"), Target((8, 6), 101, "a"), Target((8, 8), 103, "a"), Target((9, 0), 110, "a")]),
        (
            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32",
            [Target((8, 8), 101, "a"), Target((9, 0), 110, "a"), Target((8, 8), 101, "f"), Target((8, 8), 103, "f"), Target((9, 0), 110, "f")],
        ),
    ],
)
def test_targets_follow_the_target_isa_notes(text, alternatives):
    assert list(tc.parse(text).targets.alternatives) == alternatives


@pytest.mark.parametrize(
    ("text", "admitted", "refused"),
    [
        ("tcgen05.fence::before_thread_sync", ["sm_100a@8.6", "sm_101a@8.6", "sm_100f@8.8", "sm_103a@8.8", "sm_103f@8.8", "sm_110a@9.0", "sm_110f@9.0"],
         ["sm_100a@8.5", "sm_100f@8.7", "sm_90a@9.0", "sm_120a@9.0", "sm_100@9.0", "sm_121a@9.0"]),
        ("tcgen05.shift.cta_group::2.down", ["sm_100a@8.6", "sm_103a@8.8", "sm_110a@9.0"], ["sm_100f@8.8", "sm_103f@8.8", "sm_110f@9.0", "sm_120a@9.0"]),
        ("tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.s32", ["sm_103a@8.8", "sm_103f@8.8", "sm_110a@9.0", "sm_110f@9.0", "sm_101a@8.8"],
         ["sm_100a@9.0", "sm_100f@9.0", "sm_101a@8.7", "sm_90a@9.0"]),
    ],
)  # fmt: skip
def test_admitted_targets(text, admitted, refused):
    form = tc.parse(text)
    for where in admitted:
        r = pb.example_request(where)
        assert form.admits(r.version, r.arch), where
    for where in refused:
        r = pb.example_request(where)
        assert not form.admits(r.version, r.arch), where


A86, A87, A88, A90 = ((8, 6), (8, 7), (8, 8), (9, 0))


@pytest.mark.parametrize(
    ("text", "alternatives"),
    [
        # "sm_100a; sm_101a (Renamed to sm_110a ...)", and sm_100f/sm_101f/sm_110f from PTX ISA 8.8.
        ("tcgen05.mma.cta_group::1.kind::f16", [(A86, "sm_100a"), (A86, "sm_101a"), (A90, "sm_110a"), (A88, "sm_100f"), (A88, "sm_101f"), (A90, "sm_110f")]),
        # "Qualifier .kind::i8 is supported on following architectures: sm_100a, sm_101a, sm_110a".
        ("tcgen05.mma.ws.cta_group::1.kind::i8", [(A86, "sm_100a"), (A86, "sm_101a"), (A90, "sm_110a")]),
        # "Argument scale-input-d requires sm_100a and is supported on sm_100f or higher in the same family from PTX ISA version 8.8".
        ("tcgen05.mma.cta_group::1.kind::tf32 [d], a, b, idesc, p, 1", [(A86, "sm_100a"), (A88, "sm_101a"), (A88, "sm_100f"), (A88, "sm_101f")]),
        # ".scale_vec::1X, .scale_vec::2X, .scale_vec::4X requires sm_100a" (read: the architecture-specific
        # targets; see SCALE_VEC_TARGETS); .kind::mxf4nvf4 from PTX ISA 8.7.
        ("tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X", [(A87, "sm_100a"), (A87, "sm_101a"), (A90, "sm_110a"), (A88, "sm_103a")]),
        # "For .kind::mxf4 when the qualifier .scale_vectorsize is not specified, then it defaults to .block32."
        ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale",
         [(A88, "sm_100a"), (A88, "sm_101a"), (A90, "sm_110a"), (A88, "sm_100f"), (A88, "sm_101f"), (A90, "sm_110f")]),
        # ".block16, .block32 requires sm_100f or sm_110f", introduced in PTX ISA 8.8.
        ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32",
         [(A88, "sm_100a"), (A88, "sm_101a"), (A90, "sm_110a"), (A88, "sm_100f"), (A88, "sm_101f"), (A90, "sm_110f")]),
        # tcgen05.mma.sp: ".kind::mxf4nvf4 and .kind::mxf4 are supported on sm_100a, sm_101a, sm_103a, sm_110a".
        ("tcgen05.mma.sp.cta_group::1.kind::mxf4.block_scale.block32", [(A88, "sm_100a"), (A88, "sm_101a"), (A88, "sm_103a"), (A90, "sm_110a")]),
    ],
)  # fmt: skip
def test_mma_targets_follow_the_target_isa_notes(text, alternatives):
    got = [(t.ptx, t.arch) for t in tc.parse(text).targets.alternatives]
    assert got == alternatives


def test_immediates_are_checked():
    alloc = tc.parse("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32")
    for n in (32, 64, 128, 256, 512):
        tc.check_immediates(alloc, nCols=n)
    for n in (0, 16, 48, 1024):
        with pytest.raises(OperandError, match=f"nCols = {n}"):
            tc.check_immediates(alloc, nCols=n)
    with pytest.raises(OperandError, match="no operand immHalfSplitoff"):
        tc.check_immediates(alloc, immHalfSplitoff=16)
    scaled = tc.parse("tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc, p, 3")
    tc.check_immediates(scaled, scale_input_d=15)
    with pytest.raises(OperandError, match="valid range"):
        tc.check_immediates(scaled, scale_input_d=16)
    split = tc.parse("tcgen05.st.sync.aligned.16x32bx2.x2.b32")
    tc.check_immediates(split, immHalfSplitoff=16)
    with pytest.raises(OperandError, match="does not fit"):
        tc.check_immediates(split, immHalfSplitoff=1 << 32)


def test_neighbours_are_illegal_and_seeded():
    family = CATALOGUE.family("tcgen05.cp")
    a = neighbours(family, random.Random(1), 10)
    assert a == neighbours(family, random.Random(1), 10) and len(a) == 10
    for text, _ in a:
        with pytest.raises(IllegalForm):
            tc.parse(text)


def test_instruction_lines_write_vectors_addresses_and_immediates():
    line = instruction_line(tc.parse("tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.u32"))
    assert "{%r_0, %r_1}, %redval, [%taddr], 16;" in line and ".reg .u32 %redval;" in line
    assert instruction_line(tc.parse("tcgen05.dealloc.cta_group::1.sync.aligned.b32"), nCols=32).endswith(
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %taddr, 32; }"
    )
    assert "[%taddr], 16, {%r_0};" in instruction_line(tc.parse("tcgen05.st.sync.aligned.16x32bx2.x1.b32"))
    # An illegal text gets the operands its qualifiers give (Table 47: 4 x 64 registers).
    assert "%r_255}" in instruction_line(None, "tcgen05.ld.sync.aligned.16x256b.x64.b32")


# ---------------------------------------------------------------------------------------------
# With ptxas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("known", [k for k in KNOWN if k.example], ids=lambda k: k.name)
def test_known_disagreement_is_real(ptxas, known):
    text, where, _ = known.example
    request = pb.example_request(where)
    ours = catalogue_verdict(text, request)
    ((theirs, message),) = pa.ptxas_verdicts(ptxas, request, [instruction_line(None, text)])
    if known.kind == "catalogue" and ours[0] == theirs:
        pytest.skip(f"{known.name}: the reported catalogue error is fixed; drop the entry")
    assert ours[0] != theirs, f"{known.name}: ptxas and the catalogue now agree on {text}"
    assert any(k.covers(pb.record(text, known.category or "legal", request, ours, (theirs, message))) for k in KNOWN)


def test_every_legal_form_agrees_with_ptxas(ptxas):
    """All 374 legal forms of alloc ... commit at every request of :func:`requests` (3,196 kernel lines)."""
    cases = legal_cases(all_legal(OTHER_FAMILIES))
    assert len({(text, r) for text, _, _, r in cases}) == len(cases) > 3000
    assert compare(ptxas, cases) == []


def mma_legal_cases() -> list[pb.Case]:
    """Every legal tcgen05.mma form, with its operands, at :data:`MMA_ILLEGAL_AT` (sm_100a, PTX ISA
    9.0), where each is legal."""
    return [(case_text(f), "legal", f, MMA_ILLEGAL_AT) for f in all_legal(MMA_FAMILIES)]


def test_sampled_legal_mma_forms_agree_with_ptxas(ptxas):
    """A seeded form of each tcgen05.mma family of :func:`mma_legal_cases` (ptxas takes 10-30 ms of
    CPU a tcgen05.mma line; all 1,568 are heavy)."""
    cases = mma_legal_cases()
    assert len(cases) == MMA_LEGAL_COUNT
    rng = random.Random(0)
    picked = [rng.choice([c for c in cases if c[2].family is family]) for family in MMA_FAMILIES]
    assert compare(ptxas, picked) == []


@pytest.mark.heavy
def test_every_legal_mma_form_agrees_with_ptxas(ptxas):
    assert compare(ptxas, mma_legal_cases()) == []


def mma_request_cases() -> list[pb.Case]:
    """Every legal tcgen05.mma form at every request of :func:`requests` but :data:`MMA_ILLEGAL_AT`."""
    return [c for c in legal_cases(all_legal(MMA_FAMILIES)) if c[3] != MMA_ILLEGAL_AT]


def test_sampled_mma_requests_agree_with_ptxas(ptxas):
    """A seeded sample of 40 (form, request) pairs of :func:`mma_request_cases` (all 11,616 are heavy)."""
    assert compare(ptxas, random.Random(0).sample(mma_request_cases(), 40)) == []


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_every_mma_request_agrees_with_ptxas(ptxas, chunk):
    cases = mma_request_cases()
    assert compare(ptxas, cases[chunk::4]) == []


def test_mma_rules_agree_with_ptxas(ptxas):
    """A seeded sample of 200 of the 1,200 slot combinations that a tcgen05.mma rule refuses, with
    their family's operands (all of them are heavy)."""
    cases = rule_cases()
    assert len(cases) == 1200
    assert compare(ptxas, random.Random(0).sample(cases, 200)) == []


@pytest.mark.heavy
def test_every_mma_rule_agrees_with_ptxas(ptxas):
    assert compare(ptxas, rule_cases()) == []


def test_sampled_neighbours_agree_with_ptxas(ptxas):
    """A seeded sample of 8 illegal neighbours per family (4 per tcgen05.mma family) at :data:`ILLEGAL_AT`
    (:data:`MMA_ILLEGAL_AT`)."""
    assert compare(ptxas, illegal_cases(per_family=8, seed=7, per_mma_family=4)) == []


def test_qualifier_orders_agree_with_ptxas(ptxas):
    """Reordered qualifiers (:func:`order_cases`): every disagreement is a KNOWN catalogue error."""
    cases = order_cases()
    assert len(cases) > 60
    assert compare(ptxas, cases) == []


def test_comparison_detects_a_wrong_verdict(ptxas):
    """A catalogue that allowed .16x256b.x64, tcgen05.shift on sm_100f or tcgen05.ld.red on
    sm_100a would be caught: ptxas refuses each."""
    checks = [
        (pa.Request("sm_103a", (8, 8)), instruction_line(None, "tcgen05.ld.sync.aligned.16x256b.x64.b32")),
        (pa.Request("sm_100f", (8, 8)), instruction_line(tc.parse("tcgen05.shift.cta_group::1.down"))),
        (pa.Request("sm_100a", LATEST), instruction_line(tc.parse("tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32"))),
    ]
    for request, line in checks:
        ((ok, message),) = pa.ptxas_verdicts(ptxas, request, [line])
        assert not ok and message, line


def test_immediate_values_agree_with_ptxas(ptxas):
    """ptxas checks an immediate nCols as :func:`~ptxspec.spec.tcgen05.check_immediates` does."""
    base = tc.parse("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32")
    values = (16, 32, 48, 64, 96, 128, 256, 512, 1024)
    lines, ours = [], []
    for n in values:
        lines.append(instruction_line(base, nCols=n))
        try:
            tc.check_immediates(base, nCols=n)
            ours.append(True)
        except OperandError:
            ours.append(False)
    theirs = [ok for ok, _ in pa.ptxas_verdicts(ptxas, pa.Request("sm_100a", (8, 6)), lines)]
    assert theirs == ours


@pytest.mark.parametrize(
    "text",
    [
        "tcgen05.ld.sync.aligned.16x128b.x2.b32",
        "tcgen05.ld.red.sync.aligned.16x32bx2.x4.max.abs.f32",
        "tcgen05.st.sync.aligned.16x32bx2.x8.unpack::16b.b32",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
        "tcgen05.alloc.cta_group::2.sync.aligned.b32",
    ],
)
def test_operand_lists_are_exact_for_ptxas(ptxas, text):
    """Each form's operand list is accepted, and the list with one more operand or one fewer (a
    register vector one short, no ctaMask, no immHalfSplitoff) is refused."""
    form = tc.parse(text)
    line = instruction_line(form)
    longer = line.replace("; }", ", %x; }").replace("{ ", "{ .reg .b32 %x; ", 1)
    shorter = line.rsplit(",", 1)[0] + "; }"
    verdicts = [ok for ok, _ in pa.ptxas_verdicts(ptxas, ILLEGAL_AT, [line, longer, shorter])]
    assert verdicts == [True, False, False]


_CHUNKS = 4


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_many_neighbours_agree_with_ptxas(ptxas, chunk):
    families = [f for i, f in enumerate(tc.FAMILIES) if i % _CHUNKS == chunk]
    assert compare(ptxas, illegal_cases(families, per_family=60, seed=0)) == []


# ---------------------------------------------------------------------------------------------
# The cuda::ptx headers
# ---------------------------------------------------------------------------------------------


def _headers() -> Path | None:
    candidates = [Path("/usr/local/cuda-13.0"), Path("/usr/local/cuda")]
    found = shutil.which("nvcc")
    if found:
        candidates.insert(0, Path(found).resolve().parent.parent)
    for root in candidates:
        where = root / "include/cccl/cuda/__ptx/instructions/generated"
        if (where / "tcgen05_ld.h").exists():
            return where
    return None


HEADERS = _headers()
#: The headers of this chapter's operations (tcgen05_mma*.h are the later issue's).
HEADER_FILES = ("alloc", "commit", "cp", "fence", "ld", "shift", "st", "wait")

_ASM = re.compile(r'\basm\s*(?:volatile\s*)?\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PTX_GATE = re.compile(r"^#\s*if __cccl_ptx_isa >= (\d+)\s*$", re.M)
_ARCH_GATE = re.compile(r"^#\s*(?:el)?if _CCCL_CUDA_COMPILER\(NVHPC\) \|\|(.*)$", re.M)


def gate_targets(condition: str) -> list[str]:
    """The targets of an ``#if`` condition of the headers: ``__CUDA_ARCH_FEAT_SM100_ALL`` is
    ``sm_100a``, ``__CUDA_ARCH__ >= 900`` is ``sm_90``. An unknown term fails: a new kind of gate
    must be read, not ignored."""
    out = []
    for term in (t.strip() for t in condition.split("||")):
        if m := re.fullmatch(r"__CUDA_ARCH_FEAT_SM(\d+)_ALL", term):
            out.append(f"sm_{m.group(1)}a")
        elif m := re.fullmatch(r"__CUDA_ARCH__ >= (\d+)", term):
            out.append(f"sm_{int(m.group(1)) // 10}")
        else:
            raise ValueError(f"unknown gate term {term!r}")
    return out


def header_forms(directory: Path) -> list[tuple[str, str, tuple[int, int], list[str], str]]:
    """Every ``asm`` string of the tcgen05 headers of this chapter: (instruction, operands as
    written, PTX ISA gate, target gates, file)."""
    out = []
    for name in HEADER_FILES:
        path = directory / f"tcgen05_{name}.h"
        text = path.read_text().replace("\\\n", " ")
        for m in _ASM.finditer(text):
            asm = "".join(_LITERAL.findall(m.group(1))).strip()
            head, _, rest = asm.partition(" ")
            ptx = [g for g in _PTX_GATE.finditer(text, 0, m.start())][-1].group(1)
            arch = [g for g in _ARCH_GATE.finditer(text, 0, m.start())][-1].group(1)
            out.append((head.removesuffix(";"), rest.strip().removesuffix(";").strip(), (int(ptx) // 100, int(ptx) // 10 % 10), gate_targets(arch), path.name))
    return out


def operand_shape(written: str) -> list[str]:
    """``"{%0, %1}, [%2], %3"`` -> ``["{2}", "[]", "x"]``: each operand a vector of n, an address,
    or a scalar."""
    out, depth, current = [], 0, ""
    for c in written + ",":
        if c == "," and depth == 0:
            item = current.strip()
            if item:
                out.append(f"{{{item.count(',') + 1}}}" if item.startswith("{") else "[]" if item.startswith("[") else "x")
            current = ""
            continue
        depth += c in "{[" and 1 or 0
        depth -= c in "}]" and 1 or 0
        current += c
    return out


def shape_of(form: Form) -> list[str]:
    """The shape (:func:`operand_shape`) of the form's operand list as its syntax line writes it:
    the register vectors in braces (even of one register), the addresses in brackets."""
    bracketed = tc.addresses(form)
    out = []
    for group in form.layout:
        if len(group) > 1 or "." in group[0].name:
            out.append(f"{{{len(group)}}}")
        else:
            out.append("[]" if group[0].name in bracketed else "x")
    return out


def _header_forms():
    if HEADERS is None:
        pytest.skip("the cuda::ptx headers (include/cccl/cuda/__ptx/instructions/generated) are not installed")
    return header_forms(HEADERS)


#: The forms of this chapter that the CUDA 13.0 headers do not list, and why: the headers give
#: the state space always (a generic [dst] of tcgen05.alloc and a generic [mbar] of tcgen05.commit
#: are legal: "If no state space is specified then Generic Addressing is used"), and predate
#: tcgen05.ld.red ("introduced in PTX ISA version 8.8"; the headers stop at 8.6).
HEADER_OMITS = {
    "tcgen05.alloc": lambda f: f.get("ss") is None,
    "tcgen05.commit": lambda f: f.get("ss") is None,
    "tcgen05.ld.red.f32": lambda f: True,
    "tcgen05.ld.red.f32.16x32bx2": lambda f: True,
    "tcgen05.ld.red.int": lambda f: True,
    "tcgen05.ld.red.int.16x32bx2": lambda f: True,
}


def test_every_header_form_is_legal_where_the_header_gates_it():
    forms = _header_forms()
    assert len(forms) == 200
    for head, written, ptx, archs, source in forms:
        form = tc.parse(head)  # raises for a form the catalogue lacks
        assert archs, (source, head)
        for arch in archs:
            assert form.admits(ptx, arch), (source, head, ptx, arch)
        assert not form.admits(ptx, "sm_90a") and not form.admits(ptx, "sm_120a")
        # The operands as the header writes them: the same vector sizes, addresses, scalars.
        ours = operand_shape(instruction_line(form).split(head, 1)[1].removesuffix("; }"))
        assert operand_shape(written) == ours, (source, head, written)


def test_every_catalogued_form_is_in_the_headers_or_a_known_omission():
    listed = {tc.parse(head).text for head, *_ in _header_forms()}
    for family in OTHER_FAMILIES:
        omitted = HEADER_OMITS.get(family.key, lambda f: False)
        for form in legal_forms(family):
            assert (form.text in listed) != omitted(form), (family.key, form.text)


_MMA_LINE = re.compile(r"(tcgen05\.mma[^;]*);")


def mma_header_forms(directory: Path) -> list[tuple[str, tuple[int, int], list[str], str]]:
    """Every ``asm`` string of tcgen05_mma.h and tcgen05_mma_ws.h: (the tcgen05.mma instruction
    with its operands as written, PTX ISA gate, target gates, file). Each string sets the predicate
    ``PRED_enable_input_d`` first and then issues one tcgen05.mma."""
    out = []
    for name in ("tcgen05_mma.h", "tcgen05_mma_ws.h"):
        text = (directory / name).read_text().replace("\\\n", " ")
        for m in _ASM.finditer(text):
            asm = "".join(_LITERAL.findall(m.group(1))).replace("\\n", " ").replace("\\t", " ")
            (line,) = _MMA_LINE.findall(asm)
            ptx = [g for g in _PTX_GATE.finditer(text, 0, m.start())][-1].group(1)
            arch = [g for g in _ARCH_GATE.finditer(text, 0, m.start())][-1].group(1)
            out.append((" ".join(line.split()), (int(ptx) // 100, int(ptx) // 10 % 10), gate_targets(arch), name))
    return out


#: Where the headers' gates and the manual differ: the headers gate every tcgen05.mma at PTX ISA 8.6
#: (``__cccl_ptx_isa >= 860``), also .kind::mxf4nvf4, which the manual introduces in 8.7
#: ("Qualifier .kind::mxf4nvf4 introduced in PTX ISA version 8.7"); the catalogue follows the manual.
HEADER_GATE_KNOWN = {"kind::mxf4nvf4": (8, 7)}


def test_every_mma_header_form_is_legal_where_the_header_gates_it():
    """The 384 asm strings of the tcgen05.mma headers (tcgen05.mma and .ws; the headers have no .sp):
    each parses, with its operands, to a legal form, admitted where the header gates it."""
    if HEADERS is None:
        pytest.skip("the cuda::ptx headers (include/cccl/cuda/__ptx/instructions/generated) are not installed")
    forms = mma_header_forms(HEADERS)
    assert len(forms) == 384
    reached: dict[str, int] = {}
    for line, ptx, archs, source in forms:
        form = tc.parse(line)
        reached[form.family.key] = reached.get(form.family.key, 0) + 1
        assert shape_of(form) == operand_shape(line.split(None, 1)[1])
        gate = max([ptx, *(v for k, v in HEADER_GATE_KNOWN.items() if k in form.text.split("."))])
        for arch in archs:
            assert form.admits(gate, arch), (source, line, ptx, arch)
        assert not form.admits(ptx, "sm_90a") and not form.admits(ptx, "sm_120a")
    # The headers cover tcgen05.mma and tcgen05.mma.ws, not .sp, .ws.sp or .ashift.
    assert set(reached) == {
        "tcgen05.mma", "tcgen05.mma.a_tmem", "tcgen05.mma.disable_output_lane", "tcgen05.mma.a_tmem.disable_output_lane",
        "tcgen05.mma.scale_input_d", "tcgen05.mma.a_tmem.scale_input_d", "tcgen05.mma.disable_output_lane.scale_input_d",
        "tcgen05.mma.a_tmem.disable_output_lane.scale_input_d", "tcgen05.mma.block_scale",
        "tcgen05.mma.ws", "tcgen05.mma.ws.a_tmem", "tcgen05.mma.ws.zero_column_mask", "tcgen05.mma.ws.a_tmem.zero_column_mask",
    }  # fmt: skip
    # .ws: every legal form of the four families is in the headers.
    listed = {tc.parse(line).family.key + " " + tc.parse(line).text for line, *_ in forms}
    for family in MMA_FAMILIES:
        if tc.operation_of(family) == "mma.ws":
            for form in legal_forms(family):
                if form.get("collector_usage"):
                    assert f"{family.key} {form.text}" in listed, form.text


def test_header_gates_are_read():
    assert gate_targets(" __CUDA_ARCH_FEAT_SM100_ALL || __CUDA_ARCH_FEAT_SM101_ALL") == ["sm_100a", "sm_101a"]
    assert gate_targets(" __CUDA_ARCH__ >= 900") == ["sm_90"]
    with pytest.raises(ValueError, match="unknown gate term"):
        gate_targets(" __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000")
    assert operand_shape("{%0, %1}, [%2], %3") == ["{2}", "[]", "x"]
    assert operand_shape("[%0], %1, {%2}") == ["[]", "x", "{1}"]


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def _ptxspec(*args: str) -> subprocess.CompletedProcess:
    beside = Path(sys.executable).with_name("ptxspec")
    script = [str(beside)] if beside.exists() else [shutil.which("ptxspec") or "ptxspec"]
    return subprocess.run([*script, *args], capture_output=True, text=True, timeout=120)


def test_cli_lists_the_families():
    done = _ptxspec("forms", "tcgen05")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(tc.FAMILIES)
    assert "§9.7.16.7.1 tcgen05.alloc(.cta_group::1|.cta_group::2).sync.aligned{.shared::cta}.b32" in lines
    assert any(line.startswith("§9.7.16.8.3") and "tcgen05.ld.red.sync.aligned.16x32bx2" in line for line in lines)
    assert any(line.startswith("§9.7.16.12.1") and "{.multicast::cluster}.b64" in line for line in lines)


@pytest.mark.parametrize(
    ("instruction", "needles"),
    [
        ("tcgen05.ld.sync.aligned.16x256b.x64.b32", [".x64 is not a .num of .16x256b", "§9.7.16.8.3"]),
        ("tcgen05.cp.cta_group::1.32x128b", [".32x128b without .multicast", "§9.7.16.9.2"]),
    ],
)
def test_cli_locates_an_illegal_form(instruction, needles):
    done = _ptxspec("eval", instruction, "0")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("ptxspec: error: <command line>, INSTRUCTION: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
