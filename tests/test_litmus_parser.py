"""The litmus parser: the whole Dat3M corpus, each syntactic form, located errors, fuzzing."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxspec.memory_model import litmus
from ptxspec.memory_model.litmus import (
    AliasDecl,
    Atomic,
    BarrierOp,
    Branch,
    Fence,
    Immediate,
    Jump,
    Label,
    LitmusTest,
    Load,
    Local,
    LocationInit,
    ProxyFence,
    Register,
    RegisterInit,
    Store,
    ThreadDecl,
)
from ptxspec.memory_model.program import And, Compare, Condition, Constant, LocationTerm, Not, Or, RegisterTerm
from ptxspec.spec.errors import MAX_LINE, Location, PtxSpecError

CORPUS = Path(os.environ.get("PTXSPEC_LITMUS_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "litmus" / "dat3m"))
CORPUS_FILES = sorted(CORPUS.rglob("*.litmus")) if CORPUS.is_dir() else []
ERRORS = Path(__file__).resolve().parent / "litmus" / "errors"


def _without_text(test: LitmusTest) -> LitmusTest:
    return attrs.evolve(test, condition=attrs.evolve(test.condition, text=""))


# ---- the corpus ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS_FILES, reason="litmus corpus not present")
def test_corpus_is_complete():
    assert len(CORPUS_FILES) == 175


@pytest.mark.skipif(not CORPUS_FILES, reason="litmus corpus not present")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file_parses_and_round_trips(path):
    test = litmus.parse_file(path)
    assert test.threads and len(test.code) == len(test.threads)
    again = litmus.parse(litmus.format_test(test))
    assert _without_text(again) == _without_text(test)
    # Every instruction cell of the file became an instruction: count the non-empty cells.
    text = path.read_text()
    body = text[text.index("}", text.index("{")) + 1 :]
    rows = [line for line in body.splitlines() if line.strip().endswith(";")][1:]
    cells = sum(1 for row in rows for cell in row.rstrip().rstrip(";").split("|") if cell.strip())
    assert cells == sum(len(code) for code in test.code)


@pytest.mark.skipif(not CORPUS_FILES, reason="litmus corpus not present")
def test_corpus_instruction_forms_are_all_recognised():
    """Every opcode spelled in the corpus maps to the expected instruction class."""
    kinds = {
        "ld": (Load, Local),
        "st": Store,
        "sust": Store,
        "suld": Load,
        "tld": Load,
        "cold": Load,
        "atom": Atomic,
        "red": Atomic,
        "fence": (Fence, ProxyFence),
        "bar": BarrierOp,
        "goto": Jump,
        "bne": Branch,
        "beq": Branch,
        "add": Local,
    }
    seen = set()
    for path in CORPUS_FILES:
        for code in litmus.parse_file(path).code:
            for ins in code:
                if isinstance(ins, Label):
                    continue
                base = ins.text.split()[0].split(".")[0]
                seen.add(base)
                assert isinstance(ins, kinds[base]), ins
    assert {"ld", "st", "sust", "suld", "tld", "cold", "atom", "red", "fence", "bar", "goto", "bne", "beq"} <= seen


# ---- forms --------------------------------------------------------------------------------------------

MP = """PTX MP
"message passing" "two strings"
{
x=0; y = 0;
P1:r0=0;
}
 P0@cta 0,gpu 0       | P1@cta 1, gpu 0      ;
 st.weak x, 1         | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1  | ld.weak r1, x        ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_message_passing():
    test = litmus.parse(MP, "mp.litmus")
    assert test.arch == "PTX" and test.name == "MP"
    assert test.comments == ("message passing", "two strings")
    assert test.init == (LocationInit("x", 0), LocationInit("y", 0), RegisterInit(1, "r0", 0))
    assert test.threads == (ThreadDecl(0, "P0", 0, 0), ThreadDecl(1, "P1", 1, 0))
    p0, p1 = test.code
    assert p0 == (Store("st", "generic", "weak", None, "x", Immediate(1)), Store("st", "generic", "release", "gpu", "y", Immediate(1)))
    assert p1 == (Load("ld", "generic", "acquire", "gpu", Register("r0"), "y"), Load("ld", "generic", "weak", None, Register("r1"), "x"))
    assert test.condition == Condition(
        "exists",
        And((Compare("==", RegisterTerm(1, "r0"), Constant(1)), Compare("==", RegisterTerm(1, "r1"), Constant(0)))),
        "exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    )
    assert (p1[0].line, p1[0].column) == (8, 25)


@pytest.mark.parametrize(
    "header, expected",
    [
        ("P0@cta 0,gpu 0", (0, 0, None)),
        ("P0@cta 3, cluster 1, gpu 2", (3, 2, 1)),
        ("P0 @ gpu 1 , cta 2", (2, 1, None)),
        ("P0@cluster 4,cta 5", (5, 0, 4)),
    ],
)
def test_thread_placement_any_order(header, expected):
    text = f"PTX t\n{{ x=0; }}\n {header} ;\n st.weak x, 1 ;\nexists (x == 1)\n"
    thread = litmus.parse(text).threads[0]
    assert (thread.cta, thread.gpu, thread.cluster) == expected


def _one(instruction: str, nregs: str = ""):
    text = (
        f"PTX t\n{{ x=0; y=0; s @ surface aliases x; t @ texture aliases x; c @ constant aliases x; }}\n"
        f" P0@cta 0,gpu 0 ;\n LC00: ;\n {instruction} ;\nexists (x == 0)\n"
    )
    return litmus.parse(text).code[0][1]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ld r0, x", Load("ld", "generic", "weak", None, Register("r0"), "x")),
        ("ld.relaxed.cluster r0, [x]", Load("ld", "generic", "relaxed", "cluster", Register("r0"), "x")),
        ("ld.volatile.global.u32 r0, x", Load("ld", "generic", "volatile", "sys", Register("r0"), "x", ("global", "u32"))),
        ("ld.mmio.relaxed.sys r0, x", Load("ld", "generic", "mmio", "sys", Register("r0"), "x")),
        ("tld.weak r0, t", Load("tld", "texture", "weak", None, Register("r0"), "t")),
        ("suld.weak r0, s", Load("suld", "surface", "weak", None, Register("r0"), "s")),
        ("cold.weak r0, c", Load("cold", "constant", "weak", None, Register("r0"), "c")),
        ("ldc.weak r0, c", Load("ldc", "constant", "weak", None, Register("r0"), "c")),
        ("st.release.sys x, r3", Store("st", "generic", "release", "sys", "x", Register("r3"))),
        ("st.volatile x, -1", Store("st", "generic", "volatile", "sys", "x", Immediate(-1))),
        ("sust.weak s, 0x10", Store("sust", "surface", "weak", None, "s", Immediate(16))),
        ("ld r0, 1", Local("mov", Register("r0"), (Immediate(1),))),
        ("mov r0, r1", Local("mov", Register("r0"), (Register("r1"),))),
        ("xor r2, r2, 7", Local("xor", Register("r2"), (Register("r2"), Immediate(7)))),
        ("div r2, 9, r1", Local("div", Register("r2"), (Immediate(9), Register("r1")))),
        ("atom.acq_rel.gpu.add r1, x, 1", Atomic("atom", "generic", "acq_rel", "gpu", "add", Register("r1"), "x", (Immediate(1),))),
        ("atom.cas.b32 r1, [x], 0, r2", Atomic("atom", "generic", "relaxed", "gpu", "cas", Register("r1"), "x", (Immediate(0), Register("r2")), ("b32",))),
        (
            "atom.acquire.cta.global.exch.b64 r1, x, 5",
            Atomic("atom", "generic", "acquire", "cta", "exch", Register("r1"), "x", (Immediate(5),), ("global", "b64")),
        ),
        ("atom.release.sys.inc r1, x, 3", Atomic("atom", "generic", "release", "sys", "inc", Register("r1"), "x", (Immediate(3),))),
        ("red.release.gpu.max x, r4", Atomic("red", "generic", "release", "gpu", "max", None, "x", (Register("r4"),))),
        ("suatom.relaxed.gpu.dec r1, s, 2", Atomic("suatom", "surface", "relaxed", "gpu", "dec", Register("r1"), "s", (Immediate(2),))),
        ("sured.relaxed.cta.and s, 2", Atomic("sured", "surface", "relaxed", "cta", "and", None, "s", (Immediate(2),))),
        ("fence.sc.cluster", Fence("sc", "cluster")),
        ("fence.gpu", Fence("acq_rel", "gpu")),
        ("membar.gl", Fence("sc", "gpu")),
        ("membar.cta", Fence("sc", "cta")),
        ("fence.proxy.alias", ProxyFence("alias")),
        ("membar.proxy.alias", ProxyFence("alias")),
        ("fence.proxy.async.shared::cta", ProxyFence("async")),
        ("fence.proxy.surface", ProxyFence("surface")),
        ("fence.release.gpu", Fence("release", "gpu")),
        ("fence.acquire.cta", Fence("acquire", "cta")),
        ("fence.acquire.sync_restrict::shared::cluster.cluster", Fence("acquire", "cluster", restrict="shared::cluster")),
        ("fence.release.sync_restrict::shared::cta.cluster", Fence("release", "cluster", restrict="shared::cta")),
        ("fence.mbarrier_init.release.cluster", Fence("release", "cluster", restrict="mbarrier_init")),
        (
            "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster",
            ProxyFence("async::generic", sem="acquire", scope="cluster", restrict="shared::cluster"),
        ),
        ("bar.sync 0", BarrierOp("cta", "sync", (Immediate(0),))),
        ("bar.cta.arrive 1, r2", BarrierOp("cta", "arrive", (Immediate(1), Register("r2")))),
        ("barrier.cta.sync.aligned 1, 1, 4", BarrierOp("cta", "sync", (Immediate(1), Immediate(1), Immediate(4)), qualifiers=("aligned",))),
        ("barrier.cluster.arrive.release", BarrierOp("cluster", "arrive", (), qualifiers=("release",))),
        ("barrier.cluster.wait", BarrierOp("cluster", "wait", ())),
        (
            "bar.red.popc.u32 r1, 0, r2",
            BarrierOp("cta", "red", (Immediate(0),), dest=Register("r1"), predicate=Register("r2"), reduction="popc", qualifiers=("popc", "u32")),
        ),
        ("goto LC00", Jump("LC00")),
        ("bge r1, -2, LC00", Branch("bge", Register("r1"), Immediate(-2), "LC00")),
    ],
)
def test_instruction_forms(text, expected):
    assert _one(text) == expected


@pytest.mark.parametrize(
    "operands, barrier_id, instance, quorum",
    [
        ("3", Immediate(3), None, None),
        ("1, r2", Register("r2"), Immediate(1), None),
        ("1, 2, 4", Immediate(2), Immediate(1), Immediate(4)),
    ],
)
def test_barrier_operand_reading(operands, barrier_id, instance, quorum):
    """One operand: the barrier; two: instance, barrier; three: instance, barrier, quorum."""
    bar = _one(f"bar.cta.sync {operands}")
    assert (bar.barrier_id, bar.instance, bar.quorum) == (barrier_id, instance, quorum)


def test_label_and_instruction_in_one_cell_and_empty_cells():
    text = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n LC00: ld.weak r0, x | ;\n |  ;\n bne r0, 0, LC00 | st.weak x, 1 ;\nexists (P0:r0 == 1)\n"
    test = litmus.parse(text)
    assert [type(i) for i in test.code[0]] == [Label, Load, Branch]
    assert [type(i) for i in test.code[1]] == [Store]


def test_aliases_and_init_forms():
    text = (
        "PTX t\n{\n x = 5;\n y @ generic aliases x;\n s @ surface aliases y;\n 0:r1 = -3;\n P0:r2=&x;\n"
        " z = &x\n}\n P0@cta 0,gpu 0 ;\n ld.weak r0, y ;\nexists (0:r0 = 5)\n"
    )
    test = litmus.parse(text)
    assert test.init == (
        LocationInit("x", 5),
        AliasDecl("y", "generic", "x"),
        AliasDecl("s", "surface", "y"),
        RegisterInit(0, "r1", -3),
        RegisterInit(0, "r2", None, "x"),
        LocationInit("z", None, "x"),
    )
    assert test.condition.formula == Compare("==", RegisterTerm(0, "r0"), Constant(5))


@pytest.mark.parametrize(
    "condition, quantifier, formula",
    [
        ("~exists (x == 1)", "~exists", Compare("==", LocationTerm("x"), Constant(1))),
        ("~ exists x=1", "~exists", Compare("==", LocationTerm("x"), Constant(1))),
        (
            "forall (P0:r0 != 1 \\/ ~(x == 2) /\\ [x] == P0:r0)",
            "forall",
            Or(
                (
                    Compare("!=", RegisterTerm(0, "r0"), Constant(1)),
                    And((Not(Compare("==", LocationTerm("x"), Constant(2))), Compare("==", LocationTerm("x"), RegisterTerm(0, "r0")))),
                )
            ),
        ),
        (
            "exists ((P0: r0 == 1) /\\ (x == 0 \\/ true))",
            "exists",
            And((Compare("==", RegisterTerm(0, "r0"), Constant(1)), Or((Compare("==", LocationTerm("x"), Constant(0)), litmus.TrueFormula())))),
        ),
    ],
)
def test_conditions(condition, quantifier, formula):
    test = litmus.parse(f"PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n{condition}\n")
    assert (test.condition.quantifier, test.condition.formula) == (quantifier, formula)


def test_locations_line_and_comments():
    text = "PTX t\n(* a herd comment *)\n{ x=0; } // trailing\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nlocations [x; P0:r0;]\nexists (P0:r0 == 0)\n"
    test = litmus.parse(text)
    assert test.locations == (LocationTerm("x"), RegisterTerm(0, "r0"))


def test_missing_condition_means_exists_true():
    test = litmus.parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n")
    assert test.condition.quantifier == "exists"
    assert isinstance(test.condition.formula, litmus.TrueFormula)


# ---- located errors -----------------------------------------------------------------------------------

ERROR_CASES = {
    "missing_separator": (6, 18, "expected ';' or '|' after instruction, found 'ld'"),
    "unknown_instruction": (6, 2, "unknown instruction 'frob'"),
    "unknown_qualifier": (6, 5, "unknown qualifier .sloppy for ld"),
    "unknown_thread": (7, 23, "unknown thread 'P2' in the condition"),
    "undeclared_alias": (4, 1, "names undeclared location 'q'"),
    "too_many_columns": (6, 33, "more than 2 column(s)"),
    "too_few_columns": (7, 2, "row has 1 column(s), expected 2"),
    "bad_placement": (5, 26, "expected the cta number, found 'zero'"),
    "thread_order": (5, 19, "expected thread P1 in column 2, found 'P2'"),
    "unknown_label": (8, 2, "unknown label 'LC09'"),
    "missing_scope": (6, 2, "ld.acquire needs a scope"),
    "weak_with_scope": (6, 2, "a weak st takes no scope"),
    "unterminated_string": (2, 1, "unterminated string"),
    "bad_condition": (7, 15, "expected '==', '=' or '!=' in the condition, found '1'"),
    "missing_brace": (3, 2, "expected '{' to open the initial state, found 'P0'"),
    "wrong_arch": (1, 1, "expected the architecture 'PTX'"),
    "red_cas": (6, 18, "red has no .cas operation"),
    "bad_membar": (6, 9, "membar needs one level"),
    "barrier_operands": (6, 24, "bar.cta.sync takes 1 to 3 operands"),
    "duplicate_label": (8, 2, "label 'LC00' defined twice"),
    "unclosed_paren": (8, 1, "expected ')'"),
    "init_missing_semicolon": (3, 5, "expected ';' or '}' after an initial-state entry, found 'y'"),
    "operand_kind": (6, 10, "expected a register operand for ld, found 'x'"),
    "unknown_location": (7, 23, "unknown location 'zz' in the condition"),
    "float_atomic": (6, 23, "atom.add.f16: .noftz goes with the .f16, .bf16, .f16x2 and .bf16x2 types, and they require it"),
    "mbarrier_pending_count": (7, 2, "mbarrier.pending_count's state must be the result of a prior mbarrier.arrive.noComplete"),
    "mbarrier_scope": (6, 2, "mbarrier.arrive's scope is .cta or .cluster, not .gpu"),
    "mbarrier_no_op": (6, 11, "mbarrier needs an operation"),
    "fence_sync_restrict": (6, 2, "with .sync_restrict::shared::cta the fence's .sem must be .release"),
    "wgmma_early_read": (9, 2, "register r1 is the accumulator of a wgmma.mma_async whose wgmma-group was not waited for"),
    "wgmma_no_fence": (6, 2, "wgmma.fence must be issued before the first wgmma.mma_async"),
}


def test_every_error_file_has_a_case():
    assert sorted(p.stem for p in ERRORS.glob("*.litmus")) == sorted(ERROR_CASES)


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_located_error(name):
    line, column, fragment = ERROR_CASES[name]
    path = ERRORS / f"{name}.litmus"
    with pytest.raises(PtxSpecError) as info:
        litmus.parse_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}:{column}: "), message
    assert fragment in message


HEAD = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists "


def _error(text: str, source: str = "t") -> str:
    with pytest.raises(PtxSpecError) as info:
        litmus.parse(text, source)
    return str(info.value)


@pytest.mark.parametrize("opening", ["(", "~", "!", "~(", "(x == 0 /\\ ", "(x == 0 \\/ ~"])
def test_deep_nesting_is_a_located_error(opening):
    """Nesting is bounded (so that no recursion overflows) and the error points at the level too many."""
    deep = HEAD + opening * 5000 + "x == 1" + ")" * (5000 * opening.count("("))
    message = _error(deep)
    column = len("exists ") + len(opening) * litmus.MAX_NESTING // opening.count("(" if "(" in opening else opening[0])
    assert message.startswith("t:5:"), message
    assert "nests more than 100 deep" in message
    if opening in ("(", "~", "!"):
        assert message.startswith(f"t:5:{column + 1}: "), message


def test_nesting_up_to_the_bound_parses():
    formula = litmus.parse(HEAD + "~(" * 50 + "x == 1" + ")" * 50).condition.formula
    for _ in range(50):
        assert isinstance(formula, Not)
        formula = formula.operand
    assert formula == Compare("==", LocationTerm("x"), Constant(1))


def test_unreadable_file_is_a_ptxspec_error(tmp_path):
    with pytest.raises(PtxSpecError, match="cannot read"):
        litmus.parse_file(tmp_path / "absent.litmus")
    with pytest.raises(PtxSpecError, match=rf"^{re.escape(str(tmp_path))}: cannot read the litmus file: Is a directory"):
        litmus.parse_file(tmp_path)


@pytest.mark.parametrize(
    "data,line,column,byte",
    [
        (b"PTX t\n{ x=\xff0; }", 2, 5, "0xff"),
        (b"\xc3PTX t", 1, 1, "0xc3"),
        ("PTX t\n(* \u00e9\u00e9 *) \n\n  \u20ac x".encode() + b"\xe2\x82", 4, 6, "0xe2"),
        (b"PTX t\r\n{ \xed\xa0\x80 }", 2, 3, "0xed"),
    ],
    ids=["init", "first byte", "after multi-byte characters", "surrogate"],
)
def test_non_utf8_file_is_located_at_the_first_bad_byte(tmp_path, data, line, column, byte):
    path = tmp_path / "t.litmus"
    path.write_bytes(data)
    with pytest.raises(PtxSpecError) as info:
        litmus.parse_file(path)
    assert str(info.value).startswith(f"{path}:{line}:{column}: the file is not UTF-8: byte {byte} "), str(info.value)


def test_byte_order_mark_is_allowed(tmp_path):
    path = tmp_path / "t.litmus"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + "x == 1").encode())
    assert litmus.parse_file(path).name == "t"


# ---- numbers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,expected",
    [
        ("18446744073709551615", 2**64 - 1),
        ("0xFFFFFFFFFFFFFFFF", 2**64 - 1),
        ("-9223372036854775808", -(2**63)),
        ("0x" + "0" * 5000 + "1", 1),
        ("0" * 5000 + "7", 7),
        ("-0", 0),
    ],
    ids=["2**64-1", "hex 2**64-1", "-2**63", "hex with 5000 zeros", "5000 zeros", "-0"],
)
def test_64_bit_values(value, expected):
    test = litmus.parse(HEAD.replace("x=0", f"x={value}") + "x == 1")
    assert test.init[0].value == expected


@pytest.mark.parametrize(
    "value", ["18446744073709551616", "0x10000000000000000", "-9223372036854775809", "1" * 4301, "0x" + "f" * 5000, "-" + "9" * 10**5], ids=lambda v: v[:24]
)
@pytest.mark.parametrize("place", ["init", "register init", "operand", "condition", "placement"])
def test_values_beyond_64_bits_are_located_errors(value, place):
    texts = {
        "init": (HEAD.replace("x=0", f"x={value}") + "x == 1", "t:2:5: "),
        "register init": (HEAD.replace("x=0;", f"x=0; P0:r1={value};") + "x == 1", "t:2:14: "),
        "operand": (HEAD.replace("st.weak x, 1", f"st.weak x, {value}") + "x == 1", "t:4:13: "),
        "condition": (HEAD + f"x == {value}", "t:5:13: "),
        "placement": (HEAD.replace("cta 0", f"cta {value}") + "x == 1", "t:3:9: "),
    }
    text, where = texts[place]
    message = _error(text)
    assert message.startswith(where) and "does not fit in 64 bits" in message, message
    assert len(message) < 300


@pytest.mark.parametrize(
    "text,where,fragment",
    [
        (HEAD.replace("x=0;", "x=0; 0x1:r0=0;") + "x == 1", "t:2:8: ", "a thread index is decimal ('1' or 'P1'), found '0x1'"),
        (HEAD + "0x0:r0 == 1", "t:5:8: ", "a thread index is decimal"),
        (HEAD.replace("x=0;", "x=0; P" + "9" * 5000 + ":r0=0;") + "x == 1", "t:2:8: ", "unknown thread 'P999"),
        (HEAD + "P" + "9" * 5000 + ":r0 == 1", "t:5:8: ", "unknown thread 'P999"),
        (HEAD.replace("P0@", "P" + "0" * 5000 + "1@") + "x == 1", "t:3:2: ", "expected thread P0 in column 1"),
    ],
    ids=["hex in init", "hex in condition", "huge in init", "huge in condition", "huge in header"],
)
def test_thread_indices_are_decimal_and_small(text, where, fragment):
    message = _error(text)
    assert message.startswith(where) and fragment in message, message


def test_thread_index_with_leading_zeros_still_counts():
    test = litmus.parse(HEAD.replace("x=0;", "x=0; 00:r0=5;") + "P00:r0 == 5")
    assert test.init[1].thread == 0


# ---- the scanner ----------------------------------------------------------------------------------------


def test_positions_after_multi_line_comments_strings_and_crlf():
    text = 'PTX t\r\n"a\nb"\r\n{ (* one\ntwo *) x=0; // c\n }\n P0@cta 0,gpu 0 ;\n\t st.weak x, 1 ;\nexists (x == 1)'
    test = litmus.parse(text)
    assert test.comments == ("a\nb",)
    assert (test.init[0].line, test.init[0].column) == (5, 8)
    store = test.code[0][0]
    assert (store.line, store.column) == (8, 3)
    assert _error(text.replace("st.weak", "st.nope")).startswith("t:8:6: ")
    assert _error(text + "\n\n  ?").startswith("t:11:3: ")
    assert _error("PTX t\n{ x=0; }\n  (* open\n").startswith("t:3:3: unterminated comment")
    assert _error('PTX t\n{ x=0; }\n   "open\n').startswith("t:3:4: unterminated string")


def test_a_megabyte_condition_parses_in_linear_time():
    """The scanner keeps its line and column as it goes (it once recounted the line breaks before
    every token: 1 MB took minutes)."""
    text = HEAD + "(" + " /\\\n ".join(["x == 1"] * 91_000) + ")\n"
    assert len(text) > 1_000_000
    start = time.process_time()
    test = litmus.parse(text)
    seconds = time.process_time() - start
    assert len(test.condition.formula.operands) == 91_000
    assert seconds < 15, f"{seconds:.1f} s of CPU"


def test_a_megabyte_token_makes_a_short_message():
    message = _error(HEAD + "x == 1 " + "y" * 1_000_000)
    assert message.startswith("t:5:15: ") and "(1000000 characters)" in message and len(message) < 200


# ---- error lines are printable --------------------------------------------------------------------------


def test_error_line_escapes_control_characters():
    error = PtxSpecError("bad \x1b[2J\r\n\t\u2028\x00 end", where=Location("a\x07.litmus", 1, 2))
    assert error.one_line() == "a\\x07.litmus:1:2: bad \\x1b[2J\\r\\n\\t\\u2028\\x00 end"
    assert str(error) == error.one_line() and error.one_line().isprintable()


def test_error_line_keeps_printable_text_and_cuts_a_huge_one():
    assert PtxSpecError("é ∀ 'quoted' \\ ok").one_line() == "é ∀ 'quoted' \\ ok"
    line = PtxSpecError("x" * 10**6 + " the end").one_line()
    assert len(line) < MAX_LINE + 100 and line.endswith("the end") and "characters cut" in line


def test_comment_inside_an_instruction_is_escaped_in_the_error():
    message = _error(HEAD.replace("st.weak x, 1", "st.weak (* \x1b[31m *) x") + "x == 1")
    assert message.isprintable(), message


# ---- fuzzing and round trips --------------------------------------------------------------------------

_PIECES = [
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
    '"',
    "\n",
    " ",
    "/\\",
    "\\/",
    "==",
    "!=",
    "(*",
    "*)",
    "P0",
    "P1",
    "r0",
    "x",
    "LC00",
    "exists",
    "forall",
    "cta",
    "gpu",
    "0",
    "1",
    "ld",
    "st",
    "atom",
    ".weak",
    ".gpu",
    ".cas",
    "bar.cta.sync",
    "goto",
    "bne",
    "aliases",
    "surface",
    "PTX",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=40))
def test_garbage_raises_only_ptxspec_errors(pieces):
    try:
        litmus.parse("".join(pieces))
    except PtxSpecError:
        pass


@pytest.mark.skipif(not CORPUS_FILES, reason="litmus corpus not present")
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_corpus_raises_only_ptxspec_errors(data):
    path = data.draw(st.sampled_from(CORPUS_FILES))
    text = path.read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 4))
        text = text[:at] + data.draw(st.sampled_from(_PIECES)) + text[at + cut :]
    try:
        litmus.parse(text, "mutant")
    except PtxSpecError as exc:
        assert re.match(r"mutant(:\d+:\d+)?: ", str(exc)), str(exc)


_registers = st.sampled_from(["r0", "r1", "r2"]).map(Register)
_values = _registers | st.integers(-5, 5).map(Immediate)
_locations = st.sampled_from(["x", "y", "s"])
_instructions = st.one_of(
    st.builds(
        lambda r, a, o, sc: Load("ld", "generic", o, sc if o != "weak" else None, r, a),
        _registers,
        _locations,
        st.sampled_from(["weak", "relaxed", "acquire"]),
        st.sampled_from(litmus.SCOPES),
    ),
    st.builds(
        lambda a, v, o, sc: Store("st", "generic", o, sc if o != "weak" else None, a, v),
        _locations,
        _values,
        st.sampled_from(["weak", "relaxed", "release"]),
        st.sampled_from(litmus.SCOPES),
    ),
    st.builds(
        lambda r, a, op, v: Atomic("atom", "generic", "relaxed", "gpu", op, r, a, (v, Immediate(1)) if op == "cas" else (v,)),
        _registers,
        _locations,
        st.sampled_from(litmus.ATOMIC_OPS),
        _values,
    ),
    st.builds(lambda a, op, v: Atomic("red", "generic", "release", "sys", op, None, a, (v,)), _locations, st.sampled_from(["add", "and", "min"]), _values),
    st.builds(Fence, st.sampled_from(["sc", "acq_rel", "acquire", "release"]), st.sampled_from(litmus.SCOPES)),
    st.builds(ProxyFence, st.sampled_from(["alias", "texture", "surface", "constant"])),
    st.builds(lambda ops: BarrierOp("cta", "sync", tuple(ops)), st.lists(_values, min_size=1, max_size=3)),
    st.builds(lambda op, r, a, b: Local(op, r, (a, b)), st.sampled_from(["add", "sub", "mul", "and"]), _registers, _values, _values),
)


MANUAL_FILES = sorted((Path(__file__).resolve().parent / "litmus" / "manual").glob("*.litmus"))


@pytest.mark.parametrize("path", MANUAL_FILES, ids=lambda p: p.stem)
def test_manual_file_round_trips(path):
    """Every instruction of the dialect (the manual's tests use them all) prints back to itself."""
    test = litmus.parse_file(path)
    assert _without_text(litmus.parse(litmus.format_test(test))) == _without_text(test)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_instructions, max_size=4), min_size=1, max_size=3))
def test_generated_tests_round_trip(code):
    test = LitmusTest(
        arch="PTX",
        name="gen",
        comments=("generated",),
        init=(LocationInit("x", 0), LocationInit("y", 1), AliasDecl("s", "surface", "x")),
        threads=tuple(ThreadDecl(i, f"P{i}", i % 2, 0, None) for i in range(len(code))),
        code=tuple(tuple(c) for c in code),
        condition=Condition("exists", Compare("==", LocationTerm("x"), Constant(1))),
    )
    again = litmus.parse(litmus.format_test(test))
    assert _without_text(again) == test
