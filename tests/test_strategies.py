"""The public Hypothesis strategies (ptxspec.conformance.strategies), and the properties of this
repository that they drive: every drawn value fits its register, the edge classes come up often
(classified by an independent oracle, numpy and ml_dtypes), drawn forms are legal and admitted,
evaluate() on drawn forms and operands only ever raises PtxSpecError, and the two memory-model
engines agree on drawn litmus tests."""

from __future__ import annotations

import collections

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ptxspec.conformance.strategies import TYPE_NAMES, classify, forms, litmus_tests, operands, values
from ptxspec.memory_model import litmus
from ptxspec.memory_model.check import check
from ptxspec.memory_model.lowering import lower
from ptxspec.semantics.instructions import evaluate, operands_of
from ptxspec.spec.catalogue import CATALOGUE, parse
from ptxspec.spec.errors import IllegalForm, PtxSpecError
from ptxspec.spec.types import FORMATS, INTEGER_TYPES, PACKED_TYPES, NanEncoding, register_bits

FEW = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def collect(strategy, n: int, chunk: int | None = None) -> list:
    """``n`` draws of ``strategy``, deterministic: derandomized, or seeded by ``chunk`` (so that the
    chunks of a heavy run draw different examples)."""
    seen: list = []

    @settings(max_examples=n, deadline=None, derandomize=chunk is None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value):
        seen.append(value)

    if chunk is not None:
        draw = seed(chunk)(draw)

    draw()
    return seen


# ---- (a) values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_values_fit_the_register(type_name):
    width = register_bits(type_name)
    for bits in collect(values(type_name), 60):
        assert isinstance(bits, int) and 0 <= bits < (1 << width), (type_name, hex(bits))
        if type_name in FORMATS:
            fmt = FORMATS[type_name]
            assert bits >> fmt.shift < (1 << fmt.field_bits)  # sub-byte formats: upper bits zero
            assert bits & ((1 << fmt.shift) - 1) == 0  # tf32: the low 13 bits are zero


# The independent classifier: numpy / ml_dtypes decode the pattern.
ORACLE_DTYPES = {
    "f64": (np.float64, np.uint64),
    "f32": (np.float32, np.uint32),
    "f16": (np.float16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "e4m3": (ml_dtypes.float8_e4m3fn, np.uint8),
    "e5m2": (ml_dtypes.float8_e5m2, np.uint8),
    "e2m3": (ml_dtypes.float6_e2m3fn, np.uint8),
    "e3m2": (ml_dtypes.float6_e3m2fn, np.uint8),
    "e2m1": (ml_dtypes.float4_e2m1fn, np.uint8),
    "ue8m0": (ml_dtypes.float8_e8m0fnu, np.uint8),
}


def oracle_class(type_name: str, bits: int) -> str:
    dtype, raw = ORACLE_DTYPES[type_name]
    with np.errstate(invalid="ignore"):
        x = np.array([bits], dtype=raw).view(dtype).astype(np.float64)[0]
    info = ml_dtypes.finfo(dtype)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "infinity"
    if x == 0:
        return "zero"
    if abs(x) == float(info.max):
        return "max"
    if abs(x) < float(info.smallest_normal):
        return "subnormal"
    return "normal"


@pytest.mark.parametrize("type_name", sorted(ORACLE_DTYPES))
def test_classify_agrees_with_numpy_and_ml_dtypes(type_name):
    width = FORMATS[type_name].width
    if width <= 16:
        patterns = range(1 << width)
    else:
        patterns = collect(values(type_name), 400) + collect(st.integers(0, (1 << width) - 1), 200)
    for bits in patterns:
        ours = classify(type_name, bits)
        assert ("nan" if ours == "snan" else ours) == oracle_class(type_name, bits), (type_name, hex(bits))


def expected_classes(type_name: str) -> set[str]:
    fmt = FORMATS[type_name]
    classes = {"normal", "max"}
    if fmt.has_subnormals:
        classes |= {"zero"} | ({"subnormal"} if fmt.mantissa_bits else set())
    if fmt.has_infinity:
        classes.add("infinity")
    if fmt.nan is not NanEncoding.NONE:
        classes.add("nan")
    if fmt.nan is NanEncoding.IEEE:
        classes.add("snan")
    return classes


@pytest.mark.parametrize("type_name", sorted(FORMATS))
def test_values_reach_every_edge_class_often(type_name):
    draws = collect(values(type_name), 300)
    counts = collections.Counter(classify(type_name, b) for b in draws)
    missing = expected_classes(type_name) - set(counts)
    assert not missing, (type_name, missing, counts)
    edges = sum(n for c, n in counts.items() if c != "normal")
    # Far more often than uniform patterns would give them (f32: 0.8% of the patterns are special).
    width = FORMATS[type_name].width - FORMATS[type_name].shift
    special = sum(1 for b in range(1 << min(width, 16)) if classify(type_name, b << FORMATS[type_name].shift) != "normal")
    uniform_share = special / (1 << min(width, 16))
    assert edges / len(draws) >= min(0.15, 5 * uniform_share), (type_name, counts)
    if FORMATS[type_name].signed:
        sign = FORMATS[type_name].sign_mask
        assert {b & sign for b in draws} == {0, sign}


@pytest.mark.parametrize("type_name", sorted(INTEGER_TYPES))
def test_integer_extremes_are_drawn(type_name):
    t = INTEGER_TYPES[type_name]
    mask = (1 << t.bits) - 1
    draws = set(collect(values(type_name), 150))
    assert {0, 1, mask, 1 << (t.bits - 1), (1 << (t.bits - 1)) - 1} <= draws


@pytest.mark.parametrize("type_name", ["e2m1", "e2m3", "e3m2", "pred"])
def test_small_types_reach_every_bit_pattern(type_name):
    width = FORMATS[type_name].width if type_name in FORMATS else register_bits(type_name)
    assert set(collect(values(type_name), 800)) == set(range(1 << width))


@pytest.mark.parametrize("type_name", ["f32", "f64", "b128", "f16x2"])
def test_every_bit_position_takes_both_values(type_name):
    draws = collect(values(type_name), 200)
    for k in range(register_bits(type_name)):
        assert {(b >> k) & 1 for b in draws} == {0, 1}, (type_name, k)


@pytest.mark.parametrize("type_name", ["f16x2", "e4m3x4", "bf16x2"])
def test_packed_lanes_reach_the_element_edge_classes(type_name):
    packed = PACKED_TYPES[type_name]
    lane_mask = (1 << packed.lane_bits) - 1
    for lane in range(packed.count):
        shift = (packed.count - 1 - lane) * packed.lane_bits
        classes = {classify(packed.element, (b >> shift) & lane_mask) for b in collect(values(type_name), 300)}
        assert expected_classes(packed.element) <= classes, (type_name, lane, classes)


def test_unknown_type_is_an_error():
    with pytest.raises(PtxSpecError, match="unknown PTX type"):
        values("f17")


# ---- (b) forms ------------------------------------------------------------------------------------------


def reparse(form):
    """The form's text, with its operand template where the family needs one to be told apart."""
    template = f" {form.family.operand_syntax}" if form.family.operand_syntax else ""
    return parse(form.text + template)


@FEW
@given(forms())
def test_drawn_forms_parse_back(form):
    assert reparse(form) == form


@FEW
@given(forms(ptx="8.0", target="sm_90"))
def test_drawn_forms_are_admitted_at_the_target(form):
    assert reparse(form) == form
    assert form.admits((8, 0), "sm_90")


@FEW
@given(forms(target="sm_70"))
def test_drawn_forms_are_admitted_on_an_older_target(form):
    assert any(t.admits((99, 99), "sm_70") for t in form.targets.alternatives)
    assert not form.text.startswith("cvt") or "e4m3x2" not in form.text  # sm_89/sm_90 only (§9.7.9.21)


@FEW
@given(forms(ptx=(6, 0)))
def test_drawn_forms_exist_at_the_ptx_version(form):
    assert min(t.ptx for t in form.targets.alternatives) <= (6, 0)


@pytest.mark.parametrize("opcode", CATALOGUE.opcodes)
def test_every_opcode_has_drawable_forms(opcode):
    drawn = collect(forms(opcode), 5)
    assert drawn and all(f.opcode == opcode and reparse(f) == f for f in drawn)


def test_forms_reach_most_families():
    families = {f.family.key for f in collect(forms(), 600)}
    assert len(families) >= 0.5 * len(CATALOGUE.families())


def test_forms_arguments_are_checked():
    with pytest.raises(IllegalForm, match="unknown opcode"):
        forms("frobnicate")
    with pytest.raises(PtxSpecError, match="not a PTX ISA version"):
        forms(ptx="eight")
    with pytest.raises(PtxSpecError, match="no form"):
        forms("elect", ptx="1.0", target="sm_10")


# ---- (c) evaluate on drawn forms and operands ---------------------------------------------------------


def cases(**kw):
    return forms(**kw).flatmap(lambda f: operands(f).map(lambda sources: (f, sources)))


def test_operands_have_the_register_widths():
    for form, sources in collect(cases(), 100):
        assert len(sources) == len(form.inputs)
        for value, operand in zip(sources, form.inputs):
            for lane in value if isinstance(value, tuple) else (value,):
                assert 0 <= lane < (1 << register_bits(operand.type)), (form.text, operand)


def test_evaluate_on_drawn_cases_returns():
    failures = collections.Counter()
    drawn = collect(cases(), 200)
    for form, sources in drawn:
        kind = operands_of(form)
        if kind is None or kind.state:
            continue  # no semantics yet, or an instruction of memory (tests/test_front_door.py gives those a state)
        try:
            results = evaluate(form, sources)
        except PtxSpecError as exc:  # anything else fails the test with its traceback
            failures[f"{form.text}: {exc}"] += 1
            continue
        assert len(results) == len(form.destinations), form.text
    assert sum(failures.values()) <= len(drawn) // 20, failures


@pytest.mark.heavy
@pytest.mark.parametrize("target", ["sm_90", "sm_80", "sm_100a"])
def test_evaluate_on_many_drawn_cases_heavy(target):
    for form, sources in collect(cases(target=target), 500, chunk=len(target)):
        try:
            evaluate(form, sources)
            evaluate(form, sources, "sm_90")
        except PtxSpecError:
            pass


# ---- (d) litmus tests ------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, derandomize=True)
@given(litmus_tests())
def test_drawn_litmus_tests_round_trip_and_engines_agree(test):
    again = litmus.parse(litmus.format_test(test))
    assert (again.init, again.threads, again.code, again.condition.formula) == (test.init, test.threads, test.code, test.condition.formula)
    verdict = check(lower(test), engine="both", timeout_s=5)  # EngineDisagreement fails the test
    assert verdict.ok is not None


@settings(max_examples=10, deadline=None, derandomize=True)
@given(litmus_tests(threads=2, instructions=(1, 2), kinds=("ld", "st"), scopes=("gpu",), text=True))
def test_litmus_text_parses(text):
    test = litmus.parse(text)
    assert len(test.threads) == 2
    assert all(type(i).__name__ in ("Load", "Store") for thread in test.code for i in thread)


def test_litmus_tests_reach_every_kind_order_and_scope():
    seen = set()
    for test in collect(litmus_tests(), 150):
        for thread in test.code:
            for ins in thread:
                seen.add((type(ins).__name__, getattr(ins, "order", getattr(ins, "sem", None))))
                seen.add(getattr(ins, "scope", None))
    for want in [
        ("Load", "acquire"),
        ("Load", "weak"),
        ("Store", "release"),
        ("Store", "volatile"),
        ("Atomic", "acq_rel"),
        ("Fence", "sc"),
        ("Fence", "acq_rel"),
        "cta",
        "cluster",
        "gpu",
        "sys",
    ]:
        assert want in seen, want


@settings(max_examples=25, deadline=None, derandomize=True)
@given(litmus_tests(barriers=True, proxies=True))
def test_drawn_litmus_tests_with_barriers_and_proxies_round_trip_and_engines_agree(test):
    again = litmus.parse(litmus.format_test(test))
    assert (again.init, again.threads, again.code, again.condition.formula) == (test.init, test.threads, test.code, test.condition.formula)
    verdict = check(lower(test), engine="both", timeout_s=5)  # EngineDisagreement fails the test
    assert verdict.ok is not None


def _barrier_uses(test) -> list[int]:
    return [sum(isinstance(i, litmus.BarrierOp) for i in thread) for thread in test.code]


def test_litmus_tests_reach_barriers_and_every_proxy():
    seen = set()
    wanted = [
        "bar.cta",
        ("alias", "generic"),
        ("alias", "surface"),
        ("alias", "texture"),
        ("alias", "constant"),
        ("fence.proxy", "alias"),
        ("fence.proxy", "surface"),
        ("fence.proxy", "texture"),
        ("fence.proxy", "constant"),
        ("Load", "surface"),
        ("Load", "texture"),
        ("Load", "constant"),
        ("Load", "generic"),
        ("Store", "surface"),
        ("Store", "generic"),
    ]
    # Draw in seeded batches until every feature has appeared (at most 8 x 150 tests): how many
    # draws that takes depends on Hypothesis's version, whether every feature is reachable does not.
    tests = []
    for batch in range(8):
        tests = collect(litmus_tests(barriers=True, proxies=True), 150, chunk=batch)
        _features(tests, seen)
        if all(w in seen for w in wanted):
            break
    for want in wanted:
        assert want in seen, want
    # switched off (the default), neither barriers nor aliases nor proxy fences are drawn
    for test in collect(litmus_tests(), 60):
        assert not any(_barrier_uses(test))
        assert not any(isinstance(e, litmus.AliasDecl) for e in test.init)
        assert not any(isinstance(i, litmus.ProxyFence) for thread in test.code for i in thread)


def _features(tests, seen: set) -> None:
    """Add to ``seen`` the barrier and proxy features of ``tests``, checking each as it goes."""
    for test in tests:
        uses = _barrier_uses(test)
        if any(uses):
            # §9.7.13.1: bar.cta synchronizes one CTA: every thread in CTA 0 of GPU 0, one use each
            assert uses == [1] * len(test.threads), litmus.format_test(test)
            assert {(t.cta, t.gpu) for t in test.threads} == {(0, 0)}
            seen.add("bar.cta")
        aliases = {e.name: e.proxy for e in test.init if isinstance(e, litmus.AliasDecl)}
        seen.update(("alias", p) for p in aliases.values())
        for thread in test.code:
            for ins in thread:
                if isinstance(ins, litmus.ProxyFence):
                    seen.add(("fence.proxy", ins.kind))
                if isinstance(ins, (litmus.Load, litmus.Store)) and ins.address in aliases:
                    # the access goes through the proxy its alias was declared with (§8.6)
                    assert ins.proxy == aliases[ins.address] or (ins.proxy == "generic" and aliases[ins.address] == "generic")
                    seen.add((type(ins).__name__, ins.proxy))


def test_a_barrier_changes_a_verdict():
    # The barrier is not decoration: MP over one CTA is allowed with weak accesses and forbidden
    # once bar.cta.sync separates the writes from the reads (§8.9.4 item 2).
    text = (
        "PTX mp\n{\nx=0; y=0;\nP1:r0=0; P1:r1=0;\n}\nP0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n"
        "st.weak x, 1 | ld.weak r0, y ;\n{bar}st.weak y, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n"
    )
    assert check(lower(litmus.parse(text.replace("{bar}", ""))), engine="both", full_cross_check=True).ok is True
    barrier = text.replace("{bar}", "bar.cta.sync 0 | bar.cta.sync 0 ;\n")
    assert check(lower(litmus.parse(barrier)), engine="both", full_cross_check=True).ok is False


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(8))
def test_engines_agree_on_larger_litmus_tests_heavy(chunk):
    for test in collect(litmus_tests(threads=(2, 3), instructions=(1, 4), locations=("x", "y", "z")), 25, chunk):
        verdict = check(lower(test), engine="both", timeout_s=20, full_cross_check=True)
        assert verdict.ok is not None, litmus.format_test(test)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
def test_engines_agree_on_litmus_tests_with_barriers_and_proxies_heavy(chunk):
    strategy = litmus_tests(threads=(2, 3), instructions=(1, 3), locations=("x", "y", "z"), barriers=True, proxies=True)
    for test in collect(strategy, 20, chunk):
        verdict = check(lower(test), engine="both", timeout_s=20, full_cross_check=True)
        assert verdict.ok is not None, litmus.format_test(test)


# ---- the documented examples run ---------------------------------------------------------------------


def test_docstring_examples_run():
    import doctest

    from ptxspec.conformance import strategies

    result = doctest.testmod(strategies, raise_on_error=False)
    assert result.attempted >= 10 and result.failed == 0


def test_docs_page_examples_run():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "strategies.rst"
    result = doctest.testfile(str(page), module_relative=False, raise_on_error=False)
    assert result.attempted >= 5 and result.failed == 0
