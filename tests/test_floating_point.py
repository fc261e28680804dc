"""§9.7.3: the exact floating-point instructions (testp, copysign, add, sub, mul, fma, mad, div.rnd,
abs, neg, min, max, rcp.rnd, sqrt.rnd) on .f32, .f32x2 and .f64.

Oracles, none of them ptxspec's own numerics:

* gmpy2/MPFR with IEEE 754 emulation (tests/oracle_mpfr.py) for add, sub, mul, fma, mad, div,
  rcp, sqrt in every rounding mode, .f32 (with and without .ftz), .f64, .sat and .f32x2;
* numpy's float32/float64 arithmetic for the round-to-nearest forms;
* Python floats and hand-written tables from the manual's sentences for min, max, abs, neg, testp,
  copysign and the NaN rules; ptxas for the legality of the forms;
* Hypothesis properties (commutativity, identities, involutions).

The smoke chunk of each differential form always runs; the ``heavy`` chunks bring every form to
10^5 inputs (``PTXSPEC_HEAVY=all``).
"""

from __future__ import annotations

import itertools
import math
import re
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle_mpfr import F32, F64, MODES, NAN, reference, sample_operands, specials
from ptxspec.semantics.instructions import evaluate, semantic_function
from ptxspec.semantics.results import SM_90, SPEC, AnyNaN, OneOf, contains
from ptxspec.spec.catalogue import CATALOGUE, parse
from ptxspec.spec.errors import IllegalForm, OperandError, PtxSpecError
from ptxspec.spec.types import FORMATS as PTX_FORMATS

FORMATS = {"f32": F32, "f64": F64}
MY_KEYS = {"testp", "copysign", "add.f", "sub.f", "mul.f", "fma.f", "mad.f", "div.rnd", "abs.f", "neg.f", "min.f", "max.f", "rcp.rnd", "sqrt.rnd"}


def run(text: str, *sources: int, profile=SPEC):
    """The result of one form on bit patterns (the semantic function, parsed once per text)."""
    form = _form(text)
    return semantic_function(form)(form, *sources, profile=profile)


_FORMS: dict[str, object] = {}


def _form(text: str):
    if text not in _FORMS:
        _FORMS[text] = parse(text)
    return _FORMS[text]


def is_nan_result(result, fmt) -> bool:
    """Whether every member of ``result`` is a NaN of ``fmt``."""
    if isinstance(result, int):
        return fmt.is_nan(result)
    if isinstance(result, AnyNaN):
        return True
    if isinstance(result, OneOf):
        return all(fmt.is_nan(m) for m in result.members)
    return False


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def as_float(bits: int, fmt) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0] if fmt is F32 else struct.unpack("<d", struct.pack("<Q", bits))[0]


# =============================================================================================
# The catalogue: legal forms, illegal forms with their reasons, targets, ptxas
# =============================================================================================

#: The syntax lines of §9.7.3.1-15 (exact forms), as the manual writes them.
MANUAL_SYNTAX = [
    "testp.op.type",
    "copysign.type",
    *(line for op in ("add", "sub", "mul") for line in (f"{op}{{.rnd}}{{.ftz}}{{.sat}}.f32", f"{op}{{.rnd}}{{.ftz}}.f32x2", f"{op}{{.rnd}}.f64")),
    "fma.rnd{.ftz}{.sat}.f32",
    "fma.rnd{.ftz}.f32x2",
    "fma.rnd.f64",
    "mad.rnd{.ftz}{.sat}.f32",
    "mad.rnd.f64",
    "div.rnd{.ftz}.f32",
    "div.rnd.f64",
    "abs{.ftz}.f32",
    "abs.f64",
    "neg{.ftz}.f32",
    "neg.f64",
    "min{.ftz}{.NaN}{.xorsign.abs}.f32",
    "min.f64",
    "max{.ftz}{.NaN}{.xorsign.abs}.f32",
    "max.f64",
    "rcp.rnd{.ftz}.f32",
    "rcp.rnd.f64",
    "sqrt.rnd{.ftz}.f32",
    "sqrt.rnd.f64",
]
MANUAL_SETS = {
    "rnd": ["rn", "rz", "rm", "rp"],
    "op": ["finite", "infinite", "number", "notanumber", "normal", "subnormal"],
    "type": ["f32", "f64"],
}


def expand(syntax: str) -> list[str]:
    """Every instruction text a syntax line admits: ``{.x}`` optional, ``.x`` required, and the
    names of MANUAL_SETS standing for their alternatives."""
    opcode = re.match(r"\w+", syntax).group()
    parts = re.findall(r"\{\.([\w.]+)\}|\.(\w+)", syntax[len(opcode) :])
    choices: list[list[str | None]] = []
    for optional, required in parts:
        name = optional or required
        alternatives = MANUAL_SETS.get(name, [name])
        choices.append(([None] if optional else []) + alternatives)
    return [".".join([opcode, *(c for c in combo if c)]) for combo in itertools.product(*choices)]


LEGAL = sorted({text for line in MANUAL_SYNTAX for text in expand(line)})


def catalogue_forms() -> set[str]:
    """Every slot combination of this chapter's families that the catalogue accepts."""
    accepted = set()
    for family in CATALOGUE.families():
        if family.key not in MY_KEYS:
            continue
        options = [([None] if not s.required else []) + list(s.tokens) for s in family.slots]
        for combo in itertools.product(*options):
            text = ".".join([family.opcode, *(c for c in combo if c)])
            try:
                form = parse(text)
            except PtxSpecError:
                continue
            if form.family.key in MY_KEYS:
                accepted.add(text)
    return accepted


def test_catalogue_accepts_exactly_the_manual_syntax():
    assert len(LEGAL) > 200
    assert catalogue_forms() == set(LEGAL)


@pytest.mark.parametrize("text", LEGAL[::7])
def test_legal_forms_parse_to_their_family(text):
    form = parse(text)
    assert form.text == text and form.family.key in MY_KEYS


#: (text, the section the error must cite, a word the reason must contain)
ILLEGAL = [
    ("add.sat.f64", "9.7.3.3", ".sat"),
    ("add.ftz.f64", "9.7.3.3", ".ftz"),
    ("add.rn.sat.f32x2", "9.7.3.3", ".sat"),
    ("sub.sat.f64", "9.7.3.4", ".sat"),
    ("mul.ftz.f64", "9.7.3.5", ".ftz"),
    ("fma.f32", "9.7.3.6", ".rn|.rz|.rm|.rp"),
    ("fma.ftz.f32", "9.7.3.6", ".rn|.rz|.rm|.rp"),
    ("fma.f64", "9.7.3.6", ".rn|.rz|.rm|.rp"),
    ("fma.rn.ftz.f64", "9.7.3.6", ".ftz"),
    ("fma.rn.sat.f32x2", "9.7.3.6", ".sat"),
    ("mad.f32", "9.7.3.7", "sm_1x"),
    ("mad.ftz.sat.f32", "9.7.3.7", "sm_1x"),
    ("mad.f64", "9.7.3.7", "rounding modifier"),
    ("mad.rn.sat.f64", "9.7.3.7", ".sat"),
    ("mad.rn.f32x2", "9.7.3.7", "f32x2"),
    ("div.f32", "9.7.3.8", ".rn|.rz|.rm|.rp"),
    ("div.f64", "9.7.3.8", ".rn|.rz|.rm|.rp"),
    ("div.rn.ftz.f64", "9.7.3.8", ".ftz"),
    ("div.rn.sat.f32", "9.7.3.8", "sat"),
    ("abs.ftz.f64", "9.7.3.9", ".ftz"),
    ("neg.ftz.f64", "9.7.3.10", ".ftz"),
    ("min.ftz.f64", "9.7.3.11", ".ftz"),
    ("min.NaN.f64", "9.7.3.11", ".NaN"),
    ("min.xorsign.abs.f64", "9.7.3.11", ".xorsign"),
    ("min.xorsign.f32", "9.7.3.11", "together"),
    ("max.abs.f32", "9.7.3.12", "together"),
    ("max.ftz.f64", "9.7.3.12", ".ftz"),
    ("rcp.f32", "9.7.3.13", ".rn|.rz|.rm|.rp"),
    ("rcp.rn.ftz.f64", "9.7.3.13", ".ftz"),
    ("sqrt.f64", "9.7.3.15", ".rn|.rz|.rm|.rp"),
    ("sqrt.rn.ftz.f64", "9.7.3.15", ".ftz"),
    ("testp.f32", "9.7.3.1", "op"),
    ("testp.normal.ftz.f32", "9.7.3.1", "ftz"),
    ("copysign.ftz.f32", "9.7.3.2", "ftz"),
    ("copysign.f32x2", "9.7.3.2", "f32x2"),
    ("add.rn.rz.f32", "9.7.3.3", ".rz"),
    ("add.rn.f32.f32", "9.7.3.3", ".f32"),
]


@pytest.mark.parametrize("text,section,word", ILLEGAL)
def test_illegal_forms_are_refused_with_the_section(text, section, word):
    with pytest.raises(IllegalForm) as caught:
        parse(text)
    message = caught.value.one_line()
    assert f"§{section}" in message, message
    assert word in message, message


#: (text, PTX ISA version, sm) from the PTX ISA notes and Target ISA notes of each section, with
#: the version raised to the one that introduced the target string (§11.1.2).
TARGETS = [
    ("testp.finite.f32", (2, 0), 20),
    ("copysign.f64", (2, 0), 20),
    ("add.f32", (1, 0), 10),
    ("add.rz.ftz.sat.f32", (1, 0), 10),
    ("add.rm.f32", (2, 0), 20),
    ("sub.rp.f32", (2, 0), 20),
    ("mul.rm.f64", (1, 2), 13),
    ("add.rn.f32x2", (8, 6), 100),
    ("fma.rn.f32", (2, 0), 20),
    ("fma.rn.f64", (1, 4), 13),
    ("fma.rz.ftz.f32x2", (8, 6), 100),
    ("mad.rn.f32", (2, 0), 20),
    ("mad.rp.f64", (1, 4), 13),
    ("div.rn.f32", (2, 0), 20),
    ("div.rn.f64", (1, 4), 13),
    ("div.rz.f64", (2, 0), 20),
    ("rcp.rn.f64", (1, 4), 13),
    ("rcp.rm.f64", (2, 0), 20),
    ("sqrt.rp.ftz.f32", (2, 0), 20),
    ("abs.f32", (1, 0), 10),
    ("neg.f64", (1, 2), 13),
    ("min.f32", (1, 0), 10),
    ("max.f64", (1, 2), 13),
    ("min.NaN.f32", (7, 0), 80),
    ("max.ftz.NaN.f32", (7, 0), 80),
    ("min.xorsign.abs.f32", (7, 2), 86),
    ("max.ftz.NaN.xorsign.abs.f32", (7, 2), 86),
]


@pytest.mark.parametrize("text,ptx,sm", TARGETS)
def test_targets(text, ptx, sm):
    target = parse(text).target
    assert (target.ptx, target.sm, target.suffix) == (ptx, sm, "")


def test_operands():
    testp = parse("testp.subnormal.f64")
    assert [(o.name, o.type, o.destination) for o in testp.operands] == [("p", "pred", True), ("a", "f64", False)]
    fma = parse("fma.rn.f32x2")
    assert [(o.name, o.type) for o in fma.operands] == [("d", "b64"), ("a", "b64"), ("b", "b64"), ("c", "b64")]
    assert [o.name for o in parse("mad.rn.f64").sources] == ["a", "b", "c"]
    assert [o.name for o in parse("sqrt.rn.f32").sources] == ["a"]
    with pytest.raises(OperandError):
        evaluate("add.rn.f32", [1])
    with pytest.raises(OperandError):
        evaluate("add.rn.f32", [1, 1 << 32])


def _operand_regs(form) -> list[str]:
    reg = {"f32": "%f", "f64": "%fd", "b64": "%rd", "pred": "%p"}
    return [f"{reg[o.type]}{i + 1}" for i, o in enumerate(form.operands)]


def _ptxas_errors(ptxas: str, lines: list[str], target: str = "sm_100a") -> dict[int, str]:
    """ptxas's complaints per instruction line (index into ``lines``)."""
    head = f".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
    regs = ".reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<8>;\n"
    text = head + regs + "\n".join(lines) + "\nret;\n}\n"
    first = text.count("\n", 0, text.index(lines[0])) + 1
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "k.ptx")
        src.write_text(text)
        proc = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", str(Path(tmp, "k.cubin"))], capture_output=True, text=True)
    errors: dict[int, str] = {}
    for m in re.finditer(r"line (\d+); error\s*: (.*)", proc.stderr):
        errors[int(m.group(1)) - first] = m.group(2)
    return errors


#: Forms the manual's syntax excludes but ptxas (CUDA 13.0) assembles: the catalogue follows the
#: manual ("rcp.rnd.f64 d, a;" has no .ftz; only rcp.approx.ftz.f64 has one).
PTXAS_LENIENT = {"rcp.rn.ftz.f64", "rcp.rz.ftz.f64", "rcp.rm.ftz.f64", "rcp.rp.ftz.f64"}


def test_ptxas_accepts_every_legal_form(ptxas):
    forms = [parse(t) for t in LEGAL]
    lines = [f"{f.text} {', '.join(_operand_regs(f))};" for f in forms]
    errors = _ptxas_errors(ptxas, lines)
    assert not errors, {LEGAL[i]: e for i, e in errors.items()}


def refused_slot_combinations() -> list[str]:
    """Every slot combination of this chapter's families that is not a manual syntax."""
    texts = set()
    for family in CATALOGUE.families():
        if family.key in MY_KEYS:
            options = [([None] if not s.required else []) + list(s.tokens) for s in family.slots]
            texts |= {".".join([family.opcode, *(c for c in combo if c)]) for combo in itertools.product(*options)}
    return sorted(texts - set(LEGAL))


def test_catalogue_refuses_every_other_slot_combination():
    refused = refused_slot_combinations()
    assert len(refused) > 100
    for text in refused:
        with pytest.raises(PtxSpecError):
            parse(text)


def test_ptxas_refuses_the_forms_the_catalogue_refuses(ptxas):
    refused = [t for t in refused_slot_combinations() if t not in PTXAS_LENIENT]

    def operands(text: str) -> str:
        t = text.rsplit(".", 1)[1]
        reg = {"f32": "%f", "f64": "%fd", "f32x2": "%rd"}[t]
        opcode = text.split(".")[0]
        count = {"testp": 1, "abs": 1, "neg": 1, "rcp": 1, "sqrt": 1, "fma": 3, "mad": 3}.get(opcode, 2)
        dest = "%p1" if opcode == "testp" else f"{reg}0"
        return ", ".join([dest] + [f"{reg}{i + 1}" for i in range(count)])

    errors = _ptxas_errors(ptxas, [f"{t} {operands(t)};" for t in refused])
    accepted = [t for i, t in enumerate(refused) if i not in errors]
    assert not accepted, f"ptxas assembles forms the catalogue refuses: {accepted}"


# =============================================================================================
# Differential tests against MPFR
# =============================================================================================

OPS = ("add", "sub", "mul", "fma", "div", "rcp", "sqrt")
VARIANTS = ("f32", "ftz.f32", "f64")
SMOKE = 2000
HEAVY_CHUNKS = 4
HEAVY_CHUNK = 25_000  # 4 x 25 000 + the smoke chunk: more than 10^5 inputs per form


def form_text(op: str, mode: str, variant: str, sat: bool = False) -> str:
    """``op.mode{.ftz}{.sat}.type`` for a variant "f32", "ftz.f32" or "f64"."""
    ftz = variant.startswith("ftz")
    return ".".join([op, mode, *(["ftz"] if ftz else []), *(["sat"] if sat else []), variant.split(".")[-1]])


def differential(op: str, mode: str, variant: str, seed: int, n: int, *, sat: bool = False) -> None:
    fmt = F64 if variant.endswith("f64") else F32
    ftz = variant.startswith("ftz")
    text = form_text(op, mode, variant, sat)
    mismatches = []
    for operands in sample_operands(op, fmt, seed, n):
        expected = reference(op, fmt, mode, operands, ftz=ftz, sat=sat)
        got = run(text, *operands)
        ok = is_nan_result(got, fmt) if expected == NAN else got == expected
        if not ok:
            mismatches.append(
                f"{text} {' '.join(hex(x) for x in operands)}: expected {expected if expected == NAN else hex(expected)}, got {got if not isinstance(got, int) else hex(got)}"
            )
            if len(mismatches) >= 5:
                break
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", OPS)
def test_mpfr_smoke(op, mode, variant):
    differential(op, mode, variant, seed=0, n=SMOKE)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(1, HEAVY_CHUNKS + 1))
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", OPS)
def test_mpfr_heavy(op, mode, variant, chunk):
    differential(op, mode, variant, seed=chunk, n=HEAVY_CHUNK)


@pytest.mark.parametrize("variant", ("f32", "ftz.f32", "f64"))
@pytest.mark.parametrize("mode", MODES)
def test_mad_is_fma(mode, variant):
    """ "mad.{f32,f64} is the same as fma.{f32,f64}" (§9.7.3.7), checked against MPFR's fma."""
    differential("mad", mode, variant, seed=7, n=500)


@pytest.mark.parametrize("variant", ("f32", "ftz.f32"))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma", "mad"))
def test_mpfr_sat(op, mode, variant):
    differential(op, mode, variant, seed=11, n=400, sat=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma"))
@pytest.mark.parametrize("ftz", (False, True))
def test_mpfr_f32x2(op, mode, ftz):
    """.f32x2: "fA[0] = a[0:31]; fA[1] = a[32:63]; ... d[i] = fA[i] op fB[i]" (§9.7.3.3-6)."""
    text = ".".join([op, mode, *(["ftz"] if ftz else []), "f32x2"])
    lanes = [sample_operands(op, F32, 21 + lane, 300) for lane in range(2)]
    for lo, hi in zip(*lanes):
        packed = [(h << 32) | l for l, h in zip(lo, hi)]
        got = run(text, *packed)
        expected = [reference(op, F32, mode, t, ftz=ftz) for t in (hi, lo)]
        # A NaN lane is any NaN at spec level: a quiet NaN stands in for it.
        candidate = [F32.quiet_nan() if e == NAN else e for e in expected]
        bits = (candidate[0] << 32) | candidate[1]
        if NAN in expected:
            assert contains(got, bits), (text, [hex(x) for x in packed], got)
        else:
            assert got == bits, (text, [hex(x) for x in packed], hex(bits), got)


# =============================================================================================
# numpy as a second oracle for round-to-nearest
# =============================================================================================

NUMPY_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "sqrt": lambda a: np.sqrt(a),
}


@pytest.mark.parametrize("type_name", ("f32", "f64"))
@pytest.mark.parametrize("op", sorted(NUMPY_OPS))
def test_numpy_round_to_nearest(op, type_name):
    fmt = FORMATS[type_name]
    uint, flt = (np.uint32, np.float32) if fmt is F32 else (np.uint64, np.float64)
    samples = sample_operands(op, fmt, 3, SMOKE)
    columns = [np.array([t[i] for t in samples], dtype=uint).view(flt) for i in range(len(samples[0]))]
    with np.errstate(all="ignore"):
        expected = NUMPY_OPS[op](*columns)
    nan = np.isnan(expected)
    bits = expected.view(uint)
    text = f"{op}.rn.{type_name}"
    for i, operands in enumerate(samples):
        got = run(text, *operands)
        if nan[i]:
            assert is_nan_result(got, fmt), (text, operands, got)
        else:
            assert got == int(bits[i]), (text, [hex(x) for x in operands], hex(int(bits[i])), got)


# =============================================================================================
# Special values, NaN rules, .sat, .ftz, zero signs, single rounding of fma
# =============================================================================================


def _special_grid(fmt, arity: int, limit: int | None = None) -> list[tuple[int, ...]]:
    values = specials(fmt)
    if limit:
        values = values[:: max(1, len(values) // limit)]
    return list(itertools.product(values, repeat=arity))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("op", OPS)
def test_special_value_grid(op, variant):
    """Every pair (every triple for fma, from a thinned set) of special values, all four modes."""
    fmt = F64 if variant.endswith("f64") else F32
    ftz = variant.startswith("ftz")
    arity = {"fma": 3, "rcp": 1, "sqrt": 1}.get(op, 2)
    grid = _special_grid(fmt, arity, limit=12 if arity == 3 else None)
    for mode in MODES:
        text = form_text(op, mode, variant)
        for operands in grid:
            expected = reference(op, fmt, mode, operands, ftz=ftz)
            got = run(text, *operands)
            if expected == NAN:
                assert is_nan_result(got, fmt), (text, [hex(x) for x in operands], got)
            else:
                assert got == expected, (text, [hex(x) for x in operands], hex(expected), got)


Q32, S32 = 0x7FC12345, 0x7F800001  # quiet and signalling f32 NaNs with payloads
Q64, S64 = 0x7FF8000000012345, 0xFFF4000000000007
ONE32, ONE64 = f32(1.0), f64(1.0)
INF32, INF64 = 0x7F800000, 0x7FF0000000000000


@pytest.mark.parametrize(
    "text,operands",
    [
        ("add.rn.f32", (Q32, ONE32)),
        ("sub.rz.f32", (ONE32, S32)),
        ("mul.rm.f32", (S32, Q32)),
        ("fma.rn.f32", (ONE32, ONE32, Q32)),
        ("div.rp.f32", (Q32, 0)),
        ("sqrt.rn.f32", (S32,)),
        ("rcp.rn.ftz.f32", (Q32,)),
        ("abs.f32", (S32,)),
        ("neg.ftz.f32", (Q32 | 0x80000000,)),
        ("add.rn.f32", (INF32, INF32 | 0x80000000)),
        ("mul.rn.f32", (INF32, 0)),
        ("sqrt.rz.f32", (f32(-2.0),)),
        ("div.rn.f32", (0, 0x80000000)),
        ("fma.rn.f32", (0, INF32, ONE32)),
    ],
)
def test_f32_nan_results_are_unspecified(text, operands):
    """ "Single-precision instructions return an unspecified NaN" (§9.7.3): any NaN at spec level;
    sm_90 returns the canonical NaN 0x7fffffff (conformance/data/sm_90)."""
    assert run(text, *operands) == AnyNaN(PTX_FORMATS["f32"])
    assert run(text, *operands, profile=SM_90) == 0x7FFFFFFF


@pytest.mark.parametrize(
    "text,operands,expected",
    [
        # One NaN operand: its payload, made quiet (IEEE 754 §6.2.3).
        ("add.rn.f64", (Q64, ONE64), Q64),
        ("add.rn.f64", (ONE64, S64), 0xFFFC000000000007),
        ("mul.rz.f64", (S64, 0), 0xFFFC000000000007),
        ("fma.rn.f64", (ONE64, Q64, INF64), Q64),
        ("div.rm.f64", (0, S64), 0xFFFC000000000007),
        ("rcp.rn.f64", (S64,), 0xFFFC000000000007),
        ("sqrt.rp.f64", (Q64 | (1 << 63),), Q64 | (1 << 63)),
        ("abs.f64", (S64,), 0xFFFC000000000007),
        ("neg.f64", (Q64,), Q64),
    ],
)
def test_f64_nan_payloads(text, operands, expected):
    """ "Double-precision instructions support NaN payloads" (§9.7.3)."""
    assert run(text, *operands) == expected
    assert run(text, *operands, profile=SM_90) == expected


def test_f64_nan_choice_between_two_payloads():
    both = run("add.rn.f64", S64, Q64)
    assert isinstance(both, OneOf) and both.members == {0xFFFC000000000007, Q64}
    # sm_90 returns the second NaN operand, except for div, which returns the first.
    assert run("add.rn.f64", S64, Q64, profile=SM_90) == Q64
    assert run("div.rn.f64", S64, Q64, profile=SM_90) == 0xFFFC000000000007
    assert run("min.f64", Q64, S64, profile=SM_90) == 0xFFFC000000000007


@pytest.mark.parametrize(
    "text,operands",
    [
        ("add.rn.f64", (INF64, INF64 | (1 << 63))),
        ("mul.rz.f64", (0, INF64)),
        ("fma.rn.f64", (INF64, 0, ONE64)),
        ("div.rn.f64", (INF64, INF64)),
        ("div.rp.f64", (0, 0)),
        ("sqrt.rn.f64", (f64(-1.0),)),
        ("sqrt.rn.f64", (INF64 | (1 << 63),)),
    ],
)
def test_f64_invalid_operations(text, operands):
    """An invalid operation has no NaN operand to propagate: any NaN at spec level; sm_90 gives
    0xfff8000000000000."""
    assert isinstance(run(text, *operands), AnyNaN)
    assert run(text, *operands, profile=SM_90) == 0xFFF8000000000000


@pytest.mark.parametrize(
    "text,a,b,expected",
    [
        ("add.rn.sat.f32", 0.75, 0.5, 1.0),
        ("add.rn.sat.f32", 0.25, 0.25, 0.5),
        ("add.rn.sat.f32", -1.0, 0.5, 0.0),
        ("sub.rz.sat.f32", 0.5, 2.0, 0.0),
        ("mul.rn.sat.f32", math.inf, 1.0, 1.0),
        ("mul.rn.sat.f32", -math.inf, 1.0, 0.0),
        ("mul.rp.sat.f32", 0.5, 0.5, 0.25),
        ("add.rn.sat.f32", 1.0, 1e-30, 1.0),
    ],
)
def test_sat_clamps(text, a, b, expected):
    """ ".sat clamps the result to [0.0, 1.0]" (§9.7.3.3)."""
    assert run(text, f32(a), f32(b)) == f32(expected)


@pytest.mark.parametrize(
    "text,operands",
    [
        ("add.rn.sat.f32", (Q32, ONE32)),
        ("add.rn.sat.f32", (INF32, INF32 | 0x80000000)),
        ("mul.rz.ftz.sat.f32", (0, INF32)),
        ("fma.rn.sat.f32", (ONE32, S32, ONE32)),
        ("mad.rm.sat.f32", (Q32, Q32, Q32)),
        # -0.0 results come out as +0.0 too (sm_90: add.rn.sat.f32 of -0.0, -0.0 is 0x00000000).
        ("add.rn.sat.f32", (0x80000000, 0x80000000)),
        ("mul.rn.sat.f32", (0x80000000, ONE32)),
        ("fma.rz.sat.f32", (0x80000000, ONE32, 0x80000000)),
        # A negative result that .ftz flushes to -0.0 is then clamped to +0.0.
        ("mul.rn.ftz.sat.f32", (f32(-(2.0**-100)), f32(2.0**-30))),
    ],
)
def test_sat_flushes_nan_and_negative_zero_to_positive_zero(text, operands):
    """ "NaN results are flushed to +0.0f" (§9.7.3.3)."""
    assert run(text, *operands) == 0
    assert run(text, *operands, profile=SM_90) == 0


@pytest.mark.parametrize(
    "text,operands,expected",
    [
        # Subnormal inputs read as zeros of their sign...
        ("add.rn.ftz.f32", (0x00000001, 0x00000000), 0x00000000),
        ("add.rn.ftz.f32", (0x80000001, 0x80000000), 0x80000000),
        ("mul.rn.ftz.f32", (0x007FFFFF, f32(2.0**30)), 0x00000000),
        ("sqrt.rn.ftz.f32", (0x80000001,), 0x80000000),
        ("rcp.rn.ftz.f32", (0x00000001,), INF32),
        ("div.rz.ftz.f32", (ONE32, 0x807FFFFF), INF32 | 0x80000000),
        ("abs.ftz.f32", (0x80000001,), 0x00000000),
        ("neg.ftz.f32", (0x00000001,), 0x80000000),
        ("min.ftz.f32", (0x00000001, 0x80000000), 0x80000000),
        ("max.ftz.f32", (0x80000001, 0x00000000), 0x00000000),
        # ... and so do subnormal results: "flushes subnormal inputs and results to sign-preserving zero".
        ("mul.rn.ftz.f32", (f32(2.0**-100), f32(2.0**-30)), 0x00000000),
        ("mul.rn.ftz.f32", (f32(-(2.0**-100)), f32(2.0**-30)), 0x80000000),
        ("sub.rz.ftz.f32", (f32(1.5 * 2.0**-126), f32(2.0**-126)), 0x00000000),
        # Tininess after rounding (sm_90): exactly 2^-126 - 2^-150 is a tie on the subnormal grid
        # but representable at 24 bits with an unbounded exponent -- tiny, so flushed.
        ("mul.rn.ftz.f32", (0x3F7FFFFF, 0x00800000), 0x00000000),
        ("mul.rn.f32", (0x3F7FFFFF, 0x00800000), 0x00800000),
        # 2^-126 - 2^-173 rounds to 2^-126 at 24 bits: not tiny (probe on an H200).
        ("mul.rn.ftz.f32", (0x3F21E58F, 0x00CA6691), 0x00800000),
        ("mul.rm.ftz.f32", (0x3F21E58F, 0x00CA6691), 0x00000000),
        ("mul.rp.ftz.f32", (0xBF21E58F, 0x00CA6691), 0x80000000),
        ("fma.rn.ftz.f32", (0x3F21E58F, 0x014A6691, 0x80800000), 0x00800000),
    ],
)
def test_ftz(text, operands, expected):
    assert run(text, *operands) == expected


@pytest.mark.parametrize(
    "text,a,b,expected",
    [
        # "When the sum of two operands with opposite signs is exactly zero, the sign of that sum
        # shall be +0 in all rounding-direction attributes except roundTowardNegative" (IEEE 754 §6.3).
        ("sub.rn.f32", 1.0, 1.0, 0x00000000),
        ("sub.rz.f32", 1.0, 1.0, 0x00000000),
        ("sub.rp.f32", 1.0, 1.0, 0x00000000),
        ("sub.rm.f32", 1.0, 1.0, 0x80000000),
        ("sub.rm.f64", 3.5, 3.5, 1 << 63),
        ("add.rm.f32", -0.0, 0.0, 0x80000000),
        ("add.rn.f32", -0.0, 0.0, 0x00000000),
        ("add.rn.f32", -0.0, -0.0, 0x80000000),
        ("sub.rn.f32", -0.0, 0.0, 0x80000000),
        ("sub.rp.f32", 0.0, 0.0, 0x00000000),
        ("mul.rn.f32", -0.0, 5.0, 0x80000000),
    ],
)
def test_exact_zero_signs(text, a, b, expected):
    conv = f32 if text.endswith("f32") else f64
    assert run(text, conv(a), conv(b)) == expected


@pytest.mark.parametrize("mode,expected", [("rn", 0x00000000), ("rz", 0x00000000), ("rp", 0x00000000), ("rm", 0x80000000)])
def test_fma_zero_signs(mode, expected):
    """(+0 * -1) + (+0): -0 + +0, an exact zero sum of opposite signs."""
    assert run(f"fma.{mode}.f32", 0, f32(-1.0), 0) == expected
    # Same signs keep theirs: (-0) + (-0) = -0 in every mode.
    assert run(f"fma.{mode}.f32", 0, f32(-1.0), 0x80000000) == 0x80000000
    # x*y - x*y cancels exactly to a zero sum: +0, or -0 under .rm.
    assert run(f"fma.{mode}.f32", f32(3.0), f32(7.0), f32(-21.0)) == expected


def test_fma_rounds_once():
    """fma: "without loss of precision in the intermediate product and addition" (§9.7.3.6).
    a = 1 + 2^-12: a*a = 1 + 2^-11 + 2^-24 exactly; rounding it first would lose 2^-24."""
    a = f32(1 + 2.0**-12)
    c = f32(-(1 + 2.0**-11))
    assert run("fma.rn.f32", a, a, c) == f32(2.0**-24)
    assert run("mad.rn.f32", a, a, c) == f32(2.0**-24)
    assert run("add.rn.f32", run("mul.rn.f32", a, a), c) == 0
    d = f64(1 + 2.0**-27)
    assert run("fma.rn.f64", d, d, f64(-(1 + 2.0**-26))) == f64(2.0**-54)


@pytest.mark.parametrize(
    "text,operands,expected",
    [
        ("sqrt.rn.f32", (0x80000000,), 0x80000000),
        ("sqrt.rz.f32", (0x00000000,), 0x00000000),
        ("sqrt.rn.f32", (INF32,), INF32),
        ("sqrt.rn.f32", (f32(4.0),), f32(2.0)),
        ("sqrt.rn.f64", (1 << 63,), 1 << 63),
        ("rcp.rn.f32", (0x80000000,), INF32 | 0x80000000),
        ("rcp.rz.f32", (INF32,), 0x00000000),
        ("rcp.rn.f64", (INF64 | (1 << 63),), 1 << 63),
        ("rcp.rn.f32", (f32(4.0),), f32(0.25)),
        ("div.rn.f32", (f32(-1.0), 0), INF32 | 0x80000000),
        ("div.rn.f32", (f32(1.0), 0x80000000), INF32 | 0x80000000),
        ("div.rz.f32", (0x80000000, f32(3.0)), 0x80000000),
        ("div.rn.f64", (f64(1.0), INF64 | (1 << 63)), 1 << 63),
        ("div.rn.f64", (INF64, f64(-2.0)), INF64 | (1 << 63)),
        # Overflow: .rz and the mode toward zero give the largest finite value (IEEE 754 §7.4).
        ("mul.rz.f32", (0x7F7FFFFF, f32(2.0)), 0x7F7FFFFF),
        ("mul.rm.f32", (0x7F7FFFFF, f32(2.0)), 0x7F7FFFFF),
        ("mul.rp.f32", (0x7F7FFFFF, f32(2.0)), INF32),
        ("mul.rp.f32", (0xFF7FFFFF, f32(2.0)), 0xFF7FFFFF),
        # Half an ulp of the largest finite f64 is 2^970 (0x7c90000000000000): below it the sum stays
        # finite; at it the tie rounds to even, up, and overflows.
        ("add.rn.f64", (0x7FEFFFFFFFFFFFFF, 0x7C8FFFFFFFFFFFFF), 0x7FEFFFFFFFFFFFFF),
        ("add.rn.f64", (0x7FEFFFFFFFFFFFFF, 0x7C90000000000000), INF64),
        ("add.rz.f64", (0x7FEFFFFFFFFFFFFF, 0x7C90000000000000), 0x7FEFFFFFFFFFFFFF),
    ],
)
def test_special_cases(text, operands, expected):
    """The special-case tables of §9.7.3.13 and §9.7.3.15 and IEEE 754's division and overflow."""
    assert run(text, *operands) == expected


# =============================================================================================
# min, max
# =============================================================================================


def reference_min_max(opcode: str, fmt, a: int, b: int, *, ftz=False, nan_mode=False, xorsign=False):
    """§9.7.3.11/12 written independently with Python floats: returns bits, "canonical", or "nan"."""
    if ftz:
        a, b = fmt.flush(a), fmt.flush(b)
    sign = (a ^ b) >> (fmt.width - 1)
    if xorsign:
        a, b = a & ~fmt.sign_bit, b & ~fmt.sign_bit
    an, bn = fmt.is_nan(a), fmt.is_nan(b)
    if nan_mode and (an or bn):
        return "canonical"
    if an and bn:
        return "nan"
    if an or bn:
        d = b if an else a
    else:
        x, y = as_float(a, fmt), as_float(b, fmt)
        if x == y == 0:
            # "If both inputs are 0.0, +0.0 > -0.0."
            neg_a = bool(a & fmt.sign_bit)
            d = (a if neg_a else b) if opcode == "min" else (b if neg_a else a)
        elif opcode == "min":
            d = a if x < y else b
        else:
            d = a if x > y else b
    if xorsign:
        d = (d & ~fmt.sign_bit) | (sign << (fmt.width - 1))
    return d


MIN_MAX_FORMS = [
    "min.f32",
    "max.f32",
    "min.ftz.f32",
    "max.ftz.f32",
    "min.NaN.f32",
    "max.ftz.NaN.f32",
    "min.xorsign.abs.f32",
    "max.xorsign.abs.f32",
    "min.ftz.NaN.xorsign.abs.f32",
    "max.NaN.xorsign.abs.f32",
    "min.f64",
    "max.f64",
]


@pytest.mark.parametrize("text", MIN_MAX_FORMS)
def test_min_max_against_reference(text):
    form = parse(text)
    fmt = F64 if text.endswith("f64") else F32
    opcode = form.opcode
    pairs = _special_grid(fmt, 2) + sample_operands("add", fmt, 5, 1500)
    for a, b in pairs:
        expected = reference_min_max(opcode, fmt, a, b, ftz="ftz" in form, nan_mode="NaN" in form, xorsign="xorsign" in form)
        got = run(text, a, b)
        if expected == "canonical":
            assert got == 0x7FFFFFFF, (text, hex(a), hex(b), got)
        elif expected == "nan":
            assert is_nan_result(got, fmt), (text, hex(a), hex(b), got)
        else:
            assert got == expected, (text, hex(a), hex(b), hex(expected), got)


@pytest.mark.parametrize(
    "text,a,b,expected",
    [
        ("min.f32", 0x80000000, 0x00000000, 0x80000000),
        ("min.f32", 0x00000000, 0x80000000, 0x80000000),
        ("max.f32", 0x80000000, 0x00000000, 0x00000000),
        ("max.f32", 0x00000000, 0x80000000, 0x00000000),
        ("min.f64", 1 << 63, 0, 1 << 63),
        ("max.f64", 0, 1 << 63, 0),
        ("min.f32", Q32, ONE32, ONE32),
        ("min.f32", ONE32, S32, ONE32),
        ("max.f32", S32 | 0x80000000, 0xFF800000, 0xFF800000),
        ("max.f64", Q64, ONE64, ONE64),
        ("min.NaN.f32", Q32, ONE32, 0x7FFFFFFF),
        ("max.NaN.f32", ONE32, S32, 0x7FFFFFFF),
        ("min.xorsign.abs.f32", f32(-2.0), f32(3.0), f32(-2.0)),
        ("min.xorsign.abs.f32", f32(-2.0), f32(-3.0), f32(2.0)),
        ("max.xorsign.abs.f32", f32(-2.0), f32(3.0), f32(-3.0)),
        ("max.xorsign.abs.f32", f32(-2.0), f32(-3.0), f32(3.0)),
        # The NaN's sign bit counts in the XOR; the other input is the result (sm_90 agrees).
        ("min.xorsign.abs.f32", 0x00000000, 0xFFC00000, 0x80000000),
        ("max.xorsign.abs.f32", Q32 | 0x80000000, f32(5.0), f32(-5.0)),
        ("min.NaN.xorsign.abs.f32", f32(1.0), Q32 | 0x80000000, 0x7FFFFFFF),
    ],
)
def test_min_max_rules(text, a, b, expected):
    """ "If .NaN modifier is specified, the result is canonical NaN if either of the inputs is NaN";
    otherwise a NaN input gives the other; "+0.0 > -0.0"; .xorsign.abs (§9.7.3.11-12)."""
    assert run(text, a, b) == expected
    assert run(text, a, b, profile=SM_90) == expected


def test_min_max_both_nan():
    assert isinstance(run("min.f32", Q32, S32), AnyNaN)
    assert run("min.f32", Q32, S32, profile=SM_90) == 0x7FFFFFFF
    assert run("max.xorsign.abs.f32", Q32, S32, profile=SM_90) == 0x7FFFFFFF  # xorsign ignored for a NaN
    assert run("min.f64", Q64, S64) == OneOf(frozenset({Q64, 0xFFFC000000000007}), 64)


# =============================================================================================
# abs, neg, copysign, testp
# =============================================================================================


@pytest.mark.parametrize("text", ["abs.f32", "abs.ftz.f32", "abs.f64", "neg.f32", "neg.ftz.f32", "neg.f64"])
def test_abs_neg_against_floats(text):
    form = parse(text)
    fmt = F64 if text.endswith("f64") else F32
    values = [v for v in specials(fmt) + [t[0] for t in sample_operands("sqrt", fmt, 9, 2000)]]
    for a in values:
        got = run(text, a)
        if fmt.is_nan(a):
            if fmt is F32:
                assert isinstance(got, AnyNaN)
                assert run(text, a, profile=SM_90) == 0x7FFFFFFF
            else:
                # abs.f64: "NaN input is passed through unchanged" (quieted, sign kept, on sm_90 too).
                assert got == F64.quieted(a)
            continue
        x = as_float(fmt.flush(a) if "ftz" in form else a, fmt)
        y = math.fabs(x) if form.opcode == "abs" else -x
        assert got == (f32(y) if fmt is F32 else f64(y)), (text, hex(a), got)


@pytest.mark.parametrize("type_name", ["f32", "f64"])
def test_copysign(type_name):
    """ "Copies the sign bit of a into the value of b" (§9.7.3.2): math.copysign for numbers; a NaN b
    keeps its payload and signalling bit (sm_90: copysign.f32 of -0.0, 0x7f800001 is 0xff800001)."""
    fmt = FORMATS[type_name]
    conv = f32 if fmt is F32 else f64
    values = specials(fmt) + [t[0] for t in sample_operands("add", fmt, 13, 300)]
    for a, b in itertools.product(values[::3], values):
        got = run(f"copysign.{type_name}", a, b)
        if fmt.is_nan(b):
            assert got == (b & ~fmt.sign_bit) | (a & fmt.sign_bit)
        else:
            sign_source = -1.0 if a & fmt.sign_bit else 1.0
            assert got == conv(math.copysign(as_float(b, fmt), sign_source)), (hex(a), hex(b), got)
    assert run("copysign.f32", 0x80000000, S32) == 0xFF800001
    assert run("copysign.f64", 0, 0xFFF4000000000007) == 0x7FF4000000000007


def classify(fmt, bits: int) -> set[str]:
    """testp's classes from Python's float classification (an independent reading)."""
    x = as_float(bits, fmt) if not fmt.is_nan(bits) else math.nan
    tiny = 2.0**fmt.emin
    out = set()
    if math.isnan(x):
        out.add("notanumber")
    else:
        out.add("number")
        if math.isinf(x):
            out.add("infinite")
        else:
            out.add("finite")
            # "positive and negative zero are considered normal numbers"
            out.add("subnormal" if 0 < abs(x) < tiny else "normal")
    return out


@pytest.mark.parametrize("type_name", ["f32", "f64"])
def test_testp_every_class(type_name):
    fmt = FORMATS[type_name]
    values = specials(fmt) + [t[0] for t in sample_operands("add", fmt, 17, 1000)]
    seen = set()
    for a in values:
        expected = classify(fmt, a)
        seen |= expected
        for op in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            got = run(f"testp.{op}.{type_name}", a)
            assert got == int(op in expected), (op, hex(a), got)
    assert seen == {"finite", "infinite", "number", "notanumber", "normal", "subnormal"}


def test_testp_zero_is_normal():
    assert run("testp.normal.f32", 0x80000000) == 1
    assert run("testp.subnormal.f32", 0x00000001) == 1
    assert run("testp.normal.f64", 0x0000000000000001) == 0


# =============================================================================================
# Hypothesis properties
# =============================================================================================


def bits_of(fmt):
    return st.one_of(st.sampled_from(specials(fmt)), st.integers(0, (1 << fmt.width) - 1))


any_type = st.sampled_from(["f32", "f64"])
any_mode = st.sampled_from(MODES)


def not_nan(fmt, *xs):
    return not any(fmt.is_nan(x) for x in xs)


@given(st.data(), any_type, any_mode, st.sampled_from(["add", "mul"]))
def test_commutative(data, type_name, mode, op):
    fmt = FORMATS[type_name]
    a, b = data.draw(bits_of(fmt)), data.draw(bits_of(fmt))
    if not_nan(fmt, a, b):
        assert run(f"{op}.{mode}.{type_name}", a, b) == run(f"{op}.{mode}.{type_name}", b, a)


@given(st.data(), any_type, any_mode)
def test_adding_zero(data, type_name, mode):
    """x + (-0) = x and x + (+0) = x, except for the exact zero sum of +0 and -0, which is +0, or
    -0 under .rm (IEEE 754 §6.3)."""
    fmt = FORMATS[type_name]
    x = data.draw(bits_of(fmt))
    if fmt.is_nan(x):
        return
    for zero in (fmt.zero(0), fmt.zero(1)):
        expected = x
        if fmt.is_zero(x) and x != zero:
            expected = fmt.zero(1 if mode == "rm" else 0)
        assert run(f"add.{mode}.{type_name}", x, zero) == expected


@given(st.data(), any_type, st.booleans())
def test_neg_is_an_involution(data, type_name, ftz):
    fmt = FORMATS[type_name]
    ftz = ftz and fmt is F32
    x = data.draw(bits_of(fmt))
    if fmt.is_nan(x):
        return
    text = f"neg.{'ftz.' if ftz else ''}{type_name}"
    assert run(text, run(text, x)) == (fmt.flush(x) if ftz else x)


@given(st.data(), any_type)
def test_abs_clears_the_sign(data, type_name):
    fmt = FORMATS[type_name]
    x = data.draw(bits_of(fmt))
    if not fmt.is_nan(x):
        assert run(f"abs.{type_name}", x) == x & ~fmt.sign_bit


@given(st.data(), any_type, any_mode)
def test_sub_is_add_of_the_negation(data, type_name, mode):
    fmt = FORMATS[type_name]
    a, b = data.draw(bits_of(fmt)), data.draw(bits_of(fmt))
    if not_nan(fmt, a, b):
        assert run(f"sub.{mode}.{type_name}", a, b) == run(f"add.{mode}.{type_name}", a, b ^ fmt.sign_bit)


@given(st.data(), any_type, any_mode)
def test_fma_with_zero_addend_is_mul(data, type_name, mode):
    """a*b + z = a*b when z is the zero that cannot change an exact zero product's sign."""
    fmt = FORMATS[type_name]
    a, b = data.draw(bits_of(fmt)), data.draw(bits_of(fmt))
    if not_nan(fmt, a, b):
        z = fmt.zero(0 if mode == "rm" else 1)
        assert run(f"fma.{mode}.{type_name}", a, b, z) == run(f"mul.{mode}.{type_name}", a, b)


@given(st.data(), any_type, any_mode)
def test_rcp_is_division_of_one(data, type_name, mode):
    fmt = FORMATS[type_name]
    x = data.draw(bits_of(fmt))
    if not fmt.is_nan(x):
        assert run(f"rcp.{mode}.{type_name}", x) == run(f"div.{mode}.{type_name}", fmt.one(), x)


@given(st.data(), any_type, st.sampled_from(["min", "max"]))
def test_min_max_symmetric(data, type_name, opcode):
    fmt = FORMATS[type_name]
    a, b = data.draw(bits_of(fmt)), data.draw(bits_of(fmt))
    if not (fmt.is_nan(a) and fmt.is_nan(b)):
        d = run(f"{opcode}.{type_name}", a, b)
        assert d == run(f"{opcode}.{type_name}", b, a)
        assert d in (a, b)


@given(st.data(), st.sampled_from(["add", "sub", "mul"]), any_mode)
def test_f32x2_is_two_f32_lanes(data, op, mode):
    a = [data.draw(bits_of(F32)) for _ in range(4)]
    if not not_nan(F32, *a):
        return
    lane_hi = run(f"{op}.{mode}.f32", a[0], a[2])
    lane_lo = run(f"{op}.{mode}.f32", a[1], a[3])
    if isinstance(lane_hi, int) and isinstance(lane_lo, int):
        assert run(f"{op}.{mode}.f32x2", (a[0] << 32) | a[1], (a[2] << 32) | a[3]) == (lane_hi << 32) | lane_lo


def test_eval_front_door_and_cli():
    """The public entry points reach these semantics (profile names, several destinations)."""
    assert evaluate("fma.rn.ftz.f32", [0x3F800000, 0x40000000, 0]) == (0x40000000,)
    assert evaluate("testp.notanumber.f64", [Q64]) == (1,)
    from ptxspec.conformance.cli import main

    with pytest.raises(SystemExit) as done:
        main(["eval", "mad.f32", "0x0", "0x0", "0x0"])
    assert done.value.code == 2
