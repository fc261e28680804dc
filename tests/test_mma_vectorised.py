"""The vectorised mma datapath (semantics/mma_vectorised.py, behind ``mma.datapath_matrix``) against
the readable one.

``datapath_matrix`` runs a :class:`~ptxspec.semantics.mma.Datapath` in float64 where
``float64_exact`` proves every operation exact, else in int64 (``vectorisable``), else through
``datapath_dot`` element by element. The oracle here is ``datapath_dot`` (exact Python integers,
one element at a time) and, for the float64 path, the int64 path on the same inputs: Hypothesis
draws the datapath's parameters (alignment width, reference, truncation, group size, where C
joins, accumulator format and rounding, final rounding, via, flushing, zero sign, overflow, NaN,
order) and the inputs' make-up (zeros of both signs, subnormals, normals, values near overflow,
infinities, NaNs, random bits, cancelling pairs), on every type combination the sm_90 profile
measured. The recorded H100 data is replayed by tests/test_mma.py.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxspec.semantics import mma, mma_vectorised
from ptxspec.semantics.numerics import Rounding, canonical_nan
from ptxspec.profiles.sm_90 import SM_90
from ptxspec.semantics.results import profile_named
from ptxspec.spec.types import FORMATS, NanEncoding


def _products(key) -> int:
    """The products per dot product of a datapath key: K, or K/2 for mma.sp."""
    k = int(key.shape.split("k")[1])
    return k // 2 if key.sparse else k


#: The sm_90 profile's float datapaths (SM_90.mma_datapaths), .f64 left out: its chain needs
#: 106-bit products, so it is never vectorised (``vectorisable`` says no).
MEASURED = [(key, model) for key, model in SM_90.mma_datapaths.items() if key.atype != "f64"]
#: (A, B, C, D, products per dot) of every measured float combination.
COMBINATIONS = sorted({key.types + (_products(key),) for key, _ in MEASURED})
ROUNDINGS = [Rounding.RN, Rounding.RNA, Rounding.RZ, Rounding.RM, Rounding.RP]


# ---------------------------------------------------------------------------------------------
# Inputs: element bits of every class, drawn from a seeded numpy generator
# ---------------------------------------------------------------------------------------------

CLASSES = ("zero", "subnormal", "normal", "huge", "infinity", "nan", "random")


def elements(t: str, shape: tuple[int, ...], rng: np.random.Generator, weights, spread: int) -> np.ndarray:
    """Bits of ``t`` elements whose class is drawn with ``weights`` (over CLASSES; the classes
    the format lacks are dropped); normals have exponents within 2^+-spread of 1."""
    f = FORMATS[t]
    mb, emax = f.mantissa_bits, f.exponent_field_max
    has = {"infinity": f.has_infinity, "nan": f.nan is not NanEncoding.NONE}
    w = np.array([wt if has.get(c, True) else 0 for c, wt in zip(CLASSES, weights)], dtype=float)
    cls = rng.choice(len(CLASSES), size=shape, p=w / w.sum())
    sign = rng.integers(0, 2, shape, dtype=np.int64)
    mantissa = rng.integers(0, 1 << mb, shape, dtype=np.int64)
    top = emax - 1 if f.nan is NanEncoding.IEEE else emax  # the largest finite field (e4m3: 15)
    normal = np.clip(f.bias + rng.integers(-spread, spread + 1, shape), 1, top)
    huge = rng.integers(max(1, top - 2), top + 1, shape)
    field = np.select([cls == 0, cls == 1, cls == 2, cls == 3, cls == 4, cls == 5], [0, 0, normal, huge, emax, emax], 0)
    mant = np.select([cls == 0, cls == 1, cls == 4, cls == 5], [0, np.maximum(mantissa, 1), 0, (1 << mb) - 1], mantissa)
    if f.nan is NanEncoding.ALL_ONES:  # e4m3: only S.1111.111 is NaN; keep the rest finite
        mant = np.where((field == emax) & (cls != 5), np.minimum(mant, (1 << mb) - 2), mant)
    bits = (sign << (f.exponent_bits + mb)) | (field << mb) | mant
    bits = np.where(cls == 6, rng.integers(0, 1 << (f.exponent_bits + mb + 1), shape), bits)
    bits = bits.astype(np.uint64) << np.uint64(f.shift)
    if f.shift:  # tf32 sits in an f32 register: the low bits are ignored, so fill them
        bits |= rng.integers(0, 1 << f.shift, shape, dtype=np.uint64)
    return bits


@st.composite
def matrices(draw, combination, batch: int = 1):
    """A [batch, 16, K], B [batch, K, 8], C [batch, 16, 8] element bits."""
    a, b, c, _, k = combination
    seed = draw(st.integers(0, 2**32 - 1))
    weights = draw(st.lists(st.integers(0, 8), min_size=len(CLASSES), max_size=len(CLASSES)).filter(lambda w: w[2] + w[6] > 0))
    spread = draw(st.sampled_from([0, 2, 8, 30]))
    rng = np.random.default_rng(seed)
    A = elements(a, (batch, 16, k), rng, weights, spread)
    B = elements(b, (batch, k, 8), rng, weights, spread)
    C = elements(c, (batch, 16, 8), rng, weights, spread)
    if draw(st.booleans()):  # cancelling pairs: a_{k+1} = a_k, b_{k+1} = -b_k
        fb = FORMATS[b]
        for j in range(0, k - 1, 2):
            if rng.random() < 0.7:
                A[..., j + 1] = A[..., j]
                B[..., j + 1, :] = B[..., j, :] ^ np.uint64(1 << (fb.width - 1))
    return A, B, C


@st.composite
def datapaths(draw, k: int, dtype: str, wide: bool = False, f64_accumulator: bool = True):
    """Any parameter set the model supports that the vectorised paths run (an accumulator where
    steps need one); ``wide``: alignment widths beyond float64's exact range (the int64 path);
    ``f64_accumulator``: an (11, 52) accumulator at times (datapath_matrix runs it per element)."""
    exact = 53 - 2 - (k + 1).bit_length()  # the widest alignment float64_exact allows
    alignment = draw(st.integers(exact + 1, exact + 7) if wide else st.integers(0, exact))
    chunk = draw(st.one_of(st.none(), st.integers(1, k)))
    c_step = draw(st.sampled_from(["first", "last", "alone", "tree"]))
    fields = st.tuples(st.integers(4, 8), st.integers(2, 24))
    accumulator = draw(st.one_of(st.none(), fields, st.just((11, 52)))) if f64_accumulator and not wide else draw(st.one_of(st.none(), fields))
    if accumulator is None and ((chunk is not None and chunk < k) or c_step in ("alone", "tree")):
        accumulator = (8, 23)
    order = draw(st.one_of(st.sampled_from(["ascending", "descending", "pairs"]), st.permutations(range(k)).map(tuple)))
    model = mma.Datapath(
        alignment_bits=alignment,
        reference=draw(st.sampled_from(["exponent", "msb"])),
        truncation=draw(st.sampled_from(["zero", "floor"])),
        chunk=chunk,
        c_step=c_step,
        accumulator=accumulator,
        accumulator_rounding=draw(st.sampled_from(ROUNDINGS)),
        rounding=draw(st.sampled_from(ROUNDINGS)),
        via=draw(st.one_of(st.none(), fields)),
        via_rounding=draw(st.sampled_from(ROUNDINGS)),
        flush_inputs=draw(st.booleans()),
        flush_c=draw(st.booleans()),
        flush_output=draw(st.booleans()),
        zero_sign=draw(st.sampled_from(["ieee", "positive"])),
        overflow=draw(st.sampled_from(["rounding", "infinity"])),
        nan=draw(st.sampled_from([None, canonical_nan(dtype) | FORMATS[dtype].sign_mask])),
        order=order,
        c_alignment_bits=draw(st.one_of(st.none(), st.integers(0, 56 if wide else exact))),
        subnormal_reference=draw(st.sampled_from(["field", "normalised"])),
    )
    if model.zero_sign == "ieee" and Rounding.RM in (model.last_step_rounding(), model.accumulator_rounding):
        # The sign of an exact zero sum under .rm is the readable model's alone (never vectorised).
        model = attrs.evolve(model, zero_sign="positive")
    return model


def readable(model, combination, A, B, C) -> np.ndarray:
    a, b, c, d, _ = combination
    out = np.zeros(C.shape, dtype=np.uint64)
    for t in range(A.shape[0]):
        for i in range(A.shape[1]):
            for j in range(B.shape[2]):
                out[t, i, j] = mma.datapath_dot(model, a, b, c, d, [int(x) for x in A[t, i]], [int(y) for y in B[t, :, j]], int(C[t, i, j]))
    return out


def assert_same(D, expected, model) -> None:
    bad = np.argwhere(D != expected)
    assert not bad.size, (
        f"{len(bad)} elements differ, first {tuple(bad[0])}: {int(D[tuple(bad[0])]):#x} != {int(expected[tuple(bad[0])]):#x} ({model.describe()})"
    )


def int64_path(model, combination, A, B, C) -> np.ndarray:
    """The int64 path on its own (datapath_matrix picks float64 whenever it can)."""
    a, b, c, d, k = combination
    m, n = C.shape[-2:]
    rows = np.broadcast_to(A[..., :, None, :], A.shape[:-2] + (m, n, k)).reshape(-1, k)
    cols = np.broadcast_to(np.swapaxes(B, -1, -2)[..., None, :, :], A.shape[:-2] + (m, n, k)).reshape(-1, k)
    with np.errstate(invalid="ignore", over="ignore"):
        return mma_vectorised._int64_dots(model, a, b, c, d, rows, cols, C.reshape(-1)).reshape(C.shape)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

IDS = ["{}.{}.{}.{}.k{}".format(*c) for c in COMBINATIONS]


@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_float64_path_equals_readable(combination, data):
    """datapath_matrix (float64 path) == datapath_dot on every element, any parameter set."""
    model = data.draw(datapaths(combination[4], combination[3]))
    A, B, C = data.draw(matrices(combination))
    # Every drawn model runs on the float64 path but for the (11, 52) accumulator (per element).
    assert mma_vectorised.float64_exact(model, *combination[:3], combination[4]) is (model.accumulator != (11, 52))
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert_same(D, readable(model, combination, A, B, C), model)


@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_int64_path_equals_readable(combination, data):
    """Alignment widths beyond float64's exact range go through the int64 path; == datapath_dot."""
    model = data.draw(datapaths(combination[4], combination[3], wide=True))
    A, B, C = data.draw(matrices(combination))
    assert mma_vectorised.vectorisable(model, combination[0], combination[1], combination[4])
    assert not mma_vectorised.float64_exact(model, combination[0], combination[1], combination[2], combination[4])
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert_same(D, readable(model, combination, A, B, C), model)


@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_float64_path_equals_int64_path(combination, data):
    """The float64 path against the integer one on larger batches (both vectorised)."""
    model = data.draw(datapaths(combination[4], combination[3], f64_accumulator=False))
    A, B, C = data.draw(matrices(combination, batch=16))
    assert_same(mma.datapath_matrix(model, *combination[:4], A, B, C), int64_path(model, combination, A, B, C), model)


@st.composite
def signed_zeros(draw, combination):
    """Zeros (and, at times, smallest subnormals, which a flushing datapath reads as zeros) whose
    signs make whole dot products of -0 addends: rows of A all negative against columns of B all
    positive, C mostly negative -- the one case where a zero sum keeps the sign -."""
    a, b, c, _, k = combination
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tiny = draw(st.booleans())

    def zeros(t: str, negative: np.ndarray) -> np.ndarray:
        f = FORMATS[t]
        bits = np.where(negative, np.uint64(f.sign_mask), np.uint64(0))
        if tiny:
            bits |= (rng.random(negative.shape) < 0.3).astype(np.uint64) << np.uint64(f.shift)
        return bits

    rows = rng.random((1, 16, 1)) < 0.5
    A = zeros(a, rows | (rng.random((1, 16, k)) < 0.5))
    B = zeros(b, np.broadcast_to(rng.random((1, 1, 8)) < 0.3, (1, k, 8)))
    C = zeros(c, rng.random((1, 16, 8)) < 0.8)
    return A, B, C


@pytest.mark.parametrize("combination", COMBINATIONS[:3] + COMBINATIONS[-2:], ids=IDS[:3] + IDS[-2:])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_zero_signs_equal_readable(combination, data):
    """-0 only when every addend is -0 (zero_sign "ieee"), through every step structure."""
    model = data.draw(datapaths(combination[4], combination[3], f64_accumulator=False))
    A, B, C = data.draw(signed_zeros(combination))
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert_same(D, readable(model, combination, A, B, C), model)


@pytest.mark.heavy
@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_heavy_paths_equal_readable(combination, chunk, data):
    """More of test_float64_path_equals_readable and the int64 one (heavy: every chunk of 60)."""
    model = data.draw(datapaths(combination[4], combination[3], wide=data.draw(st.booleans())))
    A, B, C = data.draw(matrices(combination))
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert_same(D, readable(model, combination, A, B, C), model)


# ---------------------------------------------------------------------------------------------
# The measured datapaths, and the edges of the float64 proof
# ---------------------------------------------------------------------------------------------


MEASURED_IDS = [".".join(key.parts()) for key, _ in MEASURED]


@pytest.mark.parametrize("entry", range(len(MEASURED)), ids=MEASURED_IDS)
def test_measured_datapaths_take_a_vectorised_path(entry):
    """Every sm_90 datapath runs in float64, but m8n8k4 .f16's binary32 chains, in float32."""
    key, model = MEASURED[entry]
    if key.shape == "m8n8k4":
        assert mma_vectorised.binary32_exact(model, *key.types, _products(key)) and not mma_vectorised.float64_exact(model, *key.types[:3], _products(key))
    else:
        assert mma_vectorised.float64_exact(model, key.atype, key.btype, key.ctype, _products(key))


@pytest.mark.parametrize("entry", range(len(MEASURED)), ids=MEASURED_IDS)
@pytest.mark.parametrize("seed", range(2))
def test_measured_datapaths_on_every_class(entry, seed):
    """The sm_90 datapaths on inputs of every class: vectorised == readable element by element."""
    key, model = MEASURED[entry]
    combination = key.types + (_products(key),)
    a, b, c, d, k = combination
    rng = np.random.default_rng(seed)
    weights = [2, 2, 8, 1, 1, 1, 2]
    A, B, C = (elements(t, s, rng, weights, 8) for t, s in ((a, (2, 16, k)), (b, (2, k, 8)), (c, (2, 16, 8))))
    assert_same(mma.datapath_matrix(model, a, b, c, d, A, B, C), readable(model, combination, A, B, C), model)


def _largest(t: str, exponent: int | None = None) -> int:
    """The largest finite ``t`` element (with an exponent of at most ``exponent``)."""
    f = FORMATS[t]
    top = f.exponent_field_max - 1 if f.nan is NanEncoding.IEEE else f.exponent_field_max
    if exponent is not None:
        top = min(top, exponent + f.bias)
    mant = (1 << f.mantissa_bits) - (2 if f.nan is NanEncoding.ALL_ONES else 1)
    return ((top << f.mantissa_bits) | mant) << f.shift


@pytest.mark.parametrize("combination", COMBINATIONS, ids=IDS)
@pytest.mark.parametrize("truncation", ["zero", "floor"])
def test_float64_proof_at_its_edge(combination, truncation):
    """At the widest alignment float64_exact allows (E + 2 + bitlen(K + 1) = 53) the sums of the
    cut addends come within a factor of two of 2^53 (2^51.6 .. 2^52.04 here): the largest products
    and C, all of one sign, with small ones below them to cut; one bit wider, the int64 path takes
    over. Both agree with datapath_dot."""
    a, b, c, d, k = combination
    edge = 53 - 2 - (k + 1).bit_length()
    for width, fast in ((edge, True), (edge + 1, False)):
        model = mma.Datapath(alignment_bits=width, truncation=truncation, rounding=Rounding.RZ)
        assert mma_vectorised.float64_exact(model, a, b, c, k) is fast
        A = np.full((1, 16, k), _largest(a), dtype=np.uint64)
        B = np.full((1, k, 8), _largest(b), dtype=np.uint64)
        C = np.full((1, 16, 8), _largest(c, 2 * FORMATS[a].max_exponent), dtype=np.uint64)  # as large as a product
        B[0, :, 1::2] |= np.uint64(FORMATS[b].sign_mask)  # negative columns: floor vs trunc
        A[0, 1::2, ::3] = np.uint64(1 << FORMATS[a].shift)  # the smallest subnormal: cut away
        D = mma.datapath_matrix(model, a, b, c, d, A, B, C)
        assert_same(D, readable(model, combination, A, B, C), model)


def test_float64_exact_refuses_what_it_cannot_prove():
    f16 = ("f16", "f16", "f32")
    assert mma_vectorised.float64_exact(mma.Datapath(alignment_bits=46), *f16, 16)
    assert not mma_vectorised.float64_exact(mma.Datapath(alignment_bits=47), *f16, 16)
    # An f64-sized accumulator has subnormals below float64's normal range.
    assert not mma_vectorised.float64_exact(mma.Datapath(alignment_bits=25, chunk=4, accumulator=(11, 52)), *f16, 16)
    assert not mma_vectorised.float64_exact(mma.Datapath(alignment_bits=25, c_step="alone", accumulator=(8, 23), c_alignment_bits=50), *f16, 16)
    assert not mma_vectorised.float64_exact(mma.Datapath(alignment_bits=None), *f16, 16)


def test_batch_shapes_broadcast():
    """Unbatched and broadcast operands give what the batched call gives."""
    combination = ("f16", "f16", "f32", "f32", 16)
    model = mma.datapath_for(profile_named("sm_90"), "f16", "f16", "f32", "f32", None, "m16n8k16")
    rng = np.random.default_rng(5)
    A = elements("f16", (3, 16, 16), rng, [1, 1, 8, 0, 0, 0, 1], 8)
    B = elements("f16", (16, 8), rng, [1, 1, 8, 0, 0, 0, 1], 8)
    C = elements("f32", (3, 16, 8), rng, [1, 1, 8, 0, 0, 0, 1], 8)
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert D.shape == (3, 16, 8)
    for t in range(3):
        assert_same(mma.datapath_matrix(model, *combination[:4], A[t], B, C[t]), D[t], model)
    assert_same(D, readable(model, combination, A, np.broadcast_to(B, (3, 16, 8)), C), model)


# ---------------------------------------------------------------------------------------------
# zero_reference and block scale factors (the sm_100 profile's datapaths, MMA-Sim's e_zero)
# ---------------------------------------------------------------------------------------------

#: (A, B, C, D, K) of the sm_100 tcgen05 combinations with the paths' edge cases: bf16/tf32 reach
#: far below e_zero, f16 -> f16 has e_zero -21 inside the products' range.
ZERO_REFERENCE_COMBINATIONS = [
    ("bf16", "bf16", "f32", "f32", 16),
    ("tf32", "tf32", "f32", "f32", 8),
    ("f16", "f16", "f16", "f16", 16),
    ("e5m2", "e4m3", "f16", "f16", 32),
]


@pytest.mark.parametrize("combination", ZERO_REFERENCE_COMBINATIONS, ids=lambda c: ".".join(map(str, c)))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_zero_reference_equals_readable(combination, data):
    """A zero's reference exponent (``zero_reference``), anywhere from below every product to above
    them, through the float64 path (zero_sign "positive") and the int64 path ("ieee", or wide)."""
    model = data.draw(datapaths(combination[4], combination[3], wide=data.draw(st.booleans()), f64_accumulator=False))
    model = attrs.evolve(model, zero_reference=data.draw(st.integers(-300, 40)))
    A, B, C = data.draw(matrices(combination))
    D = mma.datapath_matrix(model, *combination[:4], A, B, C)
    assert_same(D, readable(model, combination, A, B, C), model)


#: (A, B, K, scale type, scale vector size, scale group) of the block-scaled tcgen05 kinds.
SCALED = [
    ("e4m3", "e5m2", 32, "ue8m0", 1, None),
    ("e2m3", "e3m2", 32, "ue8m0", 1, None),
    ("e2m1", "e2m1", 64, "ue8m0", 2, 16),
    ("e2m1", "e2m1", 64, "ue8m0", 4, 16),
    ("e2m1", "e2m1", 64, "ue4m3", 4, 16),
]


def scaled_readable(model, a, b, A, B, C, stype, SA, SB) -> np.ndarray:
    SAk, SBk = mma.per_k_scales(A.shape[-1], SA, SB)
    out = np.zeros(C.shape, dtype=np.uint64)
    for t in range(A.shape[0]):
        for i in range(A.shape[1]):
            for j in range(B.shape[2]):
                scales = (stype, SAk[t, i].tolist(), SBk[t, :, j].tolist())
                out[t, i, j] = mma.datapath_dot(model, a, b, "f32", "f32", A[t, i].tolist(), B[t, :, j].tolist(), int(C[t, i, j]), scales=scales)
    return out


@pytest.mark.parametrize("case", SCALED, ids=lambda c: ".".join(map(str, c)))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_block_scaled_float64_path_equals_readable(case, data):
    """Block scale factors (every byte, NaN and zero included) with or without a scale group, and a
    zero_reference: the float64 path == datapath_dot with ``scales``."""
    a, b, k, stype, vec, group = case
    model = mma.Datapath(
        alignment_bits=data.draw(st.integers(0, 35)),
        truncation=data.draw(st.sampled_from(["zero", "floor"])),
        rounding=data.draw(st.sampled_from(ROUNDINGS)),
        zero_sign="positive",
        overflow=data.draw(st.sampled_from(["rounding", "infinity"])),
        zero_reference=data.draw(st.one_of(st.none(), st.integers(-300, 40))),
        scale_group=group,
    )
    A, B, C = data.draw(matrices((a, b, "f32", "f32", k)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    top = 256 if stype == "ue8m0" else 128
    SA = rng.integers(0, top, (1, 16, vec)).astype(np.uint64)
    SB = rng.integers(0, top, (1, vec, 8)).astype(np.uint64)
    if data.draw(st.booleans()):  # scales near 1, so that the products meet C
        SA = rng.integers(0, 4, (1, 16, vec)).astype(np.uint64) + np.uint64(126 if stype == "ue8m0" else 0x38)
        SB = rng.integers(0, 4, (1, vec, 8)).astype(np.uint64) + np.uint64(126 if stype == "ue8m0" else 0x38)
    assert mma_vectorised.float64_exact(model, a, b, "f32", k, stype=stype)
    D = mma.datapath_matrix(model, a, b, "f32", "f32", A, B, C, scales=(stype, SA, SB))
    assert_same(D, scaled_readable(model, a, b, A, B, C, stype, SA, SB), model)
