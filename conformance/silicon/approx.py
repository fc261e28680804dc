"""The approx campaign: the .approx forms on silicon, bit-exact 16-bit tables and measured f32/f64 errors.

Three commands (``python -m ptxspec.conformance.silicon approx ...``, the one command line of
:mod:`ptxspec.conformance.silicon.__main__`):

``tables [--write]``
    Extract, from the catalogue campaign's ``integer-half-video-warp`` recording
    (``conformance/data/sm_90/meta-integer-half-video-warp.json``, the
    ``#all-inputs`` entries: every one of the 2^16 inputs), the result table of each 16-bit
    .approx form into ``semantics/data/approx16-sm90.npz`` (uint16 arrays, one per
    ``(opcode, type)``), which the sm_90 profile of :mod:`ptxspec.semantics.half_precision` reads.
    The file is derived, never edited by hand: without ``--write`` the command checks that the
    file equals a fresh extraction.
``prepare BUNDLE``
    Write the kernels of every f32/f64 .approx form sm_90a has (and the four x2 16-bit forms, as
    2^16-word tables whose two half-words each take every value) and assemble them with
    ``ptxas -arch=sm_90a`` (and the eight 16-bit forms as whole tables: the scalar ones on every
    input, the x2 ones on 2^16 words whose two half-words each take every value); write the scan
    plan and the seeded sample inputs. The bundle is run on
    the GPU machine by ``python3 conformance/silicon/approx_device.py run BUNDLE OUT``.
``report``
    Recompute the error of every recorded extreme exactly (MPFR, 256 bits) and print the table
    of docs/silicon-approx.rst: per form, inputs scanned, maximum error observed (in the manual's
    metric and in ulps), the manual's bound, and the inputs outside it.

The forms come from the catalogue (:func:`forms`); the bounds from
:mod:`ptxspec.semantics.floating_point_approx`.
"""

from __future__ import annotations

import functools
import json
import zlib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from ptxspec.conformance.silicon.campaign import HEADER, assemble_each, assemble_module, ptxas_version, save_arrays
from ptxspec.spec.errors import PtxSpecError

DATA = Path(__file__).resolve().parent.parent / "data" / "sm_90"
TABLES = Path(__file__).resolve().parent.parent.parent / "semantics" / "data" / "approx16-sm90.npz"

#: Families scanned on their whole input space or a hashed sample of it.
SCANNED_FAMILIES = (
    "sin.approx",
    "cos.approx",
    "lg2.approx",
    "ex2.approx",
    "rcp.approx",
    "sqrt.approx",
    "rsqrt.approx",
    "tanh.approx",
    "div.approx",
    "div.full",
    "rcp.approx.ftz.f64",
    "rsqrt.approx.ftz.f64",
    "rsqrt.approx.f64",
)
#: The 16-bit families whose x2 forms are recorded as tables.
TABLE_FAMILIES = ("tanh.approx.half", "ex2.approx.half")
#: The 16-bit forms recorded on every input by the catalogue campaign, and the x2 form of each.
SCALAR_TABLE_FORMS = {
    ("tanh", "f16"): "tanh.approx.f16",
    ("tanh", "bf16"): "tanh.approx.bf16",
    ("ex2", "f16"): "ex2.approx.f16",
    ("ex2", "bf16"): "ex2.approx.ftz.bf16",
}
X2_FORMS = {
    "tanh.approx.f16x2": ("tanh", "f16"),
    "tanh.approx.bf16x2": ("tanh", "bf16"),
    "ex2.approx.f16x2": ("ex2", "f16"),
    "ex2.approx.ftz.bf16x2": ("ex2", "bf16"),
}

#: Inputs kept per form by the largest error in the manual's metric, and by the largest ulp error.
K = 256
K_ULP = 32
SAMPLE = 1 << 16
PAIRS = 1 << 28

FN = {"sin": 0, "cos": 1, "lg2": 2, "ex2": 3, "rcp": 4, "sqrt": 5, "rsqrt": 6, "tanh": 7, "div": 8}
METRIC = {"absolute": 0, "relative": 1, "ulps": 2, "lg2": 3}


@dataclass(frozen=True)
class ScanForm:
    """One scanned form. ``space``: ``all32`` (every f32 bit pattern), ``upper32`` (every upper
    word of an .f64, the lower word hashed), ``pairs`` (2^28 hashed f32 pairs), ``f64`` (2^28
    hashed .f64 values), ``table`` (every 16-bit input of a scalar 16-bit form, or the 2^16 x2
    words of :func:`x2_words`)."""

    text: str
    opcode: str
    width: int
    arity: int
    space: str
    count: int
    metric: str
    ftz: bool


#: How the manual states each opcode's bound: "absolute" (sin, cos), "relative", lg2's mix of the
#: two (absolute on (0.5, 2), relative elsewhere), else "ulps" (div, rcp, ex2).
METRIC_OF = {"sin": "absolute", "cos": "absolute", "lg2": "lg2", "sqrt": "relative", "rsqrt": "relative", "tanh": "relative"}


def forms() -> list[ScanForm]:
    """Every .approx/div.full form that sm_90a has (see :func:`_forms`)."""
    return list(_forms())


@functools.cache
def _forms() -> tuple[ScanForm, ...]:
    """Every .approx/div.full form that sm_90a has, in catalogue order, then the 16-bit forms
    recorded as whole tables (the scalar ones again, so that each chip's run holds its tables)."""
    from ptxspec.conformance.ptxas_agreement import _legal_forms
    from ptxspec.spec.catalogue import CATALOGUE

    scanned, tables = [], []
    for family in CATALOGUE.families():
        if family.key not in SCANNED_FAMILIES + TABLE_FAMILIES:
            continue
        for form in _legal_forms(family):
            if not form.admits((8, 7), "sm_90a"):
                continue
            if family.key in TABLE_FAMILIES:
                if form.text in X2_FORMS or form.text in SCALAR_TABLE_FORMS.values():
                    width = 32 if form.text in X2_FORMS else 16
                    tables.append(ScanForm(form.text, form.opcode, width, 1, "table", 1 << 16, "table", "ftz" in form.text))
                continue
            width = 64 if form.text.endswith("f64") else 32
            arity = len(form.sources)
            if form.opcode == "div":
                space, count = "pairs", PAIRS
            elif form.text == "rsqrt.approx.f64":
                space, count = "f64", PAIRS
            elif width == 64:
                space, count = "upper32", 1 << 32
            else:
                space, count = "all32", 1 << 32
            # The 1.11.20 rsqrt has our 1-ulp bound (the manual gives it none), not rsqrt's relative one.
            metric = "ulps" if form.text == "rsqrt.approx.ftz.f64" else METRIC_OF.get(form.opcode, "ulps")
            scanned.append(ScanForm(form.text, form.opcode, width, arity, space, count, metric, "ftz" in form.text))
    return tuple(scanned + tables)


# ---------------------------------------------------------------------------------------------
# The manual's bounds, per form
# ---------------------------------------------------------------------------------------------


def bounds(form: ScanForm) -> tuple[Fraction | int, Fraction | int | None, str]:
    """The bound(s) of ``form`` in its metric, from the semantics, and how the manual states them:
    (near bound, far bound or None, description). sin/cos: 2^-20.5 on [-2pi, 2pi] and 2^-14.7 on
    [-100pi, 100pi]; div.approx: the divisor limit 2^126 as the second value."""
    from ptxspec.semantics import floating_point_approx as fa

    op, text = form.opcode, form.text
    if op in ("sin", "cos"):
        return _real(fa.SIN_COS_NEAR), _real(fa.SIN_COS_FAR), "abs 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]"
    if op == "lg2":
        return _real(fa.LG2_BOUND), None, "abs 2^-22 on (0.5, 2), rel 2^-22 elsewhere"
    if op == "ex2":
        return fa.ULPS_EX2, None, "2 ulp"
    if op == "div":
        return fa.ULPS_DIV, (Fraction(2) ** 126 if "approx" in text else None), "2 ulp" + (" for |b| in [2^-126, 2^126]" if "approx" in text else "")
    if text == "rcp.approx.ftz.f64" or text == "rsqrt.approx.ftz.f64":
        return fa.ULPS_UPPER_WORD, None, "1 ulp of 1.11.20 (ours: the manual gives none)"
    if op == "rcp":
        return fa.ULPS_RCP, None, "1 ulp"
    if op == "sqrt":
        return _real(fa.SQRT_RELATIVE), None, "rel 2^-23"
    if op == "rsqrt":
        return _real(fa.RSQRT_RELATIVE), None, "rel 2^-22.9" + (" (the .f32 bound; none for .f64)" if text.endswith("f64") else "")
    if op == "tanh":
        return _real(fa.TANH_RELATIVE), None, "rel 2^-11"
    raise PtxSpecError(f"no bound for {text}", where="approx")


def _real(x) -> Fraction:
    """A bound given as a :class:`~ptxspec.semantics.floating_point_approx.Real`, to 200 bits."""
    if x.exact is not None:
        return x.exact
    lo, hi, s = x.enclose(200)
    return Fraction(lo + hi, 2 << s)


# ---------------------------------------------------------------------------------------------
# Operands: the hashed spaces (the numpy twin of approx_device.py's CUDA code) and the samples
# ---------------------------------------------------------------------------------------------

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic, as in approx_device.py)."""
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hashed_operands(space: str, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The operands (a, b) of the scan at the global indices ``index`` (uint64)."""
    k = index.astype(np.uint64)
    with np.errstate(over="ignore"):
        u1, u2 = mix64(np.uint64(2) * k), mix64(np.uint64(2) * k + np.uint64(1))
    if space == "pairs":
        x, y = u1 & np.uint64(0xFFFFFFFF), u2 & np.uint64(0xFFFFFFFF)
        near = ((u1 >> np.uint64(32)) & np.uint64(3)) != 0
        ea = ((x >> np.uint64(23)) & np.uint64(255)).astype(np.int64)
        eb = np.clip(ea + ((u1 >> np.uint64(34)) & np.uint64(63)).astype(np.int64) - 32, 0, 254).astype(np.uint64)
        y = np.where(near, (y & np.uint64(0x807FFFFF)) | (eb << np.uint64(23)), y)
        return x, y
    if space == "f64":
        return np.where((u2 & np.uint64(7)) != 0, u1 & np.uint64(0x7FFFFFFFFFFFFFFF), u1), np.zeros_like(k)
    if space == "upper32":
        return (k << np.uint64(32)) | (u1 & np.uint64(0xFFFFFFFF)), np.zeros_like(k)
    if space == "all32":
        return k, np.zeros_like(k)
    raise PtxSpecError(f"unknown input space {space!r}", where="approx")


def x2_words() -> np.ndarray:
    """2^16 words for the x2 tables: the lower half-word is i, the upper (40503 i + 12345) mod 2^16
    (an odd multiplier: a bijection), so that each half takes every 16-bit value once."""
    i = np.arange(1 << 16, dtype=np.uint64)
    return ((i * np.uint64(40503) + np.uint64(12345)) & np.uint64(0xFFFF)) << np.uint64(16) | i


def _f32(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


F32_SPECIALS = sorted(
    {
        0x00000000,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC00000,
        0x7F800001,
        0x7FFFFFFF,
        0x00000001,
        0x80000001,
        0x007FFFFF,
        0x807FFFFF,
        0x00800000,
        0x80800000,
        0x7F7FFFFF,
        0xFF7FFFFF,
        0x3F800000,
        0xBF800000,
        0x3F000000,
        0x40000000,
        0x3F000001,
        0x3FFFFFFF,
        0x3F7FFFFF,
        0x3F800001,
        0x7E800000,
        0x7E800001,
        0x7F000000,
        0x02800000,
        0x01000000,
        _f32(6.2831855),
        _f32(6.283185),
        _f32(-6.2831855),
        _f32(314.15927),
        _f32(314.15924),
        _f32(-314.15927),
        _f32(128.0),
        _f32(127.99999),
        _f32(-126.0),
        _f32(-149.0),
        _f32(-150.0),
        _f32(-151.99998),
        _f32(-152.0),
        _f32(1.5707964),
        _f32(3.1415927),
        _f32(0.7853982),
        _f32(9.0),
        _f32(-9.0),
        _f32(0.5),
        _f32(-0.5),
    }
)


def _specials(form: ScanForm) -> list[tuple[int, ...]]:
    if form.width == 32 and form.arity == 1:
        return [(s,) for s in F32_SPECIALS]
    if form.arity == 2:
        few = [
            0,
            0x80000000,
            0x7F800000,
            0xFF800000,
            0x7FC00000,
            1,
            0x807FFFFF,
            0x00800000,
            0x3F800000,
            0xBF800000,
            0x40400000,
            0x7F7FFFFF,
            0x7E800000,
            0x7E800001,
            0x7F000000,
            0x01000000,
            0x3EAAAAAB,
        ]
        return [(a, b) for a in few for b in few]
    f64 = [
        0,
        1 << 63,
        0x7FF0000000000000,
        0xFFF0000000000000,
        0x7FF8000000000000,
        0x7FF0000000000001,
        1,
        0x000FFFFFFFFFFFFF,
        0x0010000000000000,
        0x3FF0000000000000,
        0xBFF0000000000000,
        0x7FEFFFFFFFFFFFFF,
        0x4010000000000000,
        0x3FE0000000000000,
        0x7FF0000000000000 | 1 << 32,
        0x00000000FFFFFFFF,
    ]
    f64 += [(0x3FF00000 | i) << 32 | 0xDEADBEEF for i in (0, 1, 0xFFFFF)] + [u << 32 for u in (0x00100000, 0x000FFFFF, 0x80000001, 0x7FEFFFFF)]
    return [(s,) for s in f64]


def sample_inputs(form: ScanForm) -> list[np.ndarray]:
    """The recorded sample of ``form``: its edge classes first, then values from the counter hash
    (so that they can be regenerated anywhere, with no random generator's stream to trust), seeded
    by the form's name: for an .f32 half uniform bit patterns, half of magnitude 2^-17 .. 2^9; for
    an .f64 half uniform, half positive of magnitude 2^-63 .. 2^64; for a pair the hashed pairs
    of indices past the scanned ones. x2 forms: :func:`x2_words`."""
    dtype = np.uint64 if form.width == 64 else np.uint32
    if form.space == "table":
        return [x2_words().astype(np.uint32) if form.width == 32 else np.arange(1 << 16, dtype=np.uint16)]
    specials = _specials(form)
    n = SAMPLE - len(specials)
    seed = np.uint64(zlib.crc32(form.text.encode()) | 1) << np.uint64(32)
    idx = np.arange(n, dtype=np.uint64)
    u = mix64(seed | idx)
    odd = (idx & np.uint64(1)) == 1
    if form.arity == 2:
        cols = list(hashed_operands("pairs", seed | idx))
    elif form.width == 64:
        moderate = (np.uint64(0x3C0) + (u >> np.uint64(52)) % np.uint64(128)) << np.uint64(52) | (u & np.uint64((1 << 52) - 1))
        cols = [np.where(odd, moderate, u)]
    else:
        low = u & np.uint64(0xFFFFFFFF)
        moderate = (u >> np.uint64(63)) << np.uint64(31) | (np.uint64(110) + (u >> np.uint64(32)) % np.uint64(26)) << np.uint64(23) | (u & np.uint64(0x7FFFFF))
        cols = [np.where(odd, moderate, low)]
    head = np.array(specials, dtype=np.uint64).reshape(len(specials), -1)
    return [np.concatenate([head[:, k], col]).astype(dtype) for k, col in enumerate(cols)]


def digest(column: np.ndarray) -> str:
    """The SHA-256 of a column's bytes (little-endian), as approx_device.py records it."""
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(column.astype(column.dtype.newbyteorder("<"))).tobytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# PTX and the bundle
# ---------------------------------------------------------------------------------------------


def kernel(form: ScanForm, name: str) -> str:
    """One ``.entry``: d[i] = op(a[i] (, b[i])) for i < n, operands as raw words of the form's
    register width (x2 forms: one .b32 holding both half-words)."""
    w, size = form.width, form.width // 8
    names = ["pa", "pb"][: form.arity] + ["pd"]
    params = ", ".join(f".param .u64 {p}" for p in names) + ", .param .u32 n"
    body = [
        "  .reg .pred %p;",
        "  .reg .b32 %r<6>;",
        "  .reg .b64 %rd<8>;",
        f"  .reg .b{w} %va, %vb, %vd;",
        "  mov.u32 %r1, %tid.x;",
        "  mov.u32 %r2, %ctaid.x;",
        "  mov.u32 %r3, %ntid.x;",
        "  mad.lo.u32 %r4, %r2, %r3, %r1;",
        "  ld.param.u32 %r5, [n];",
        "  setp.ge.u32 %p, %r4, %r5;",
        "  @%p bra DONE;",
        f"  mul.wide.u32 %rd1, %r4, {size};",
    ]
    for reg, p in zip(["%va", "%vb"], names[:-1]):
        body += [f"  ld.param.u64 %rd2, [{p}];", "  cvta.to.global.u64 %rd2, %rd2;", "  add.u64 %rd2, %rd2, %rd1;", f"  ld.global.b{w} {reg}, [%rd2];"]
    body.append(f"  {form.text} %vd, " + ", ".join(["%va", "%vb"][: form.arity]) + ";")
    body += [
        "  ld.param.u64 %rd3, [pd];",
        "  cvta.to.global.u64 %rd3, %rd3;",
        "  add.u64 %rd3, %rd3, %rd1;",
        f"  st.global.b{w} [%rd3], %vd;",
        "DONE:",
        "  ret;",
    ]
    return f".visible .entry {name}({params})\n{{\n" + "\n".join(body) + "\n}\n"


def plan_entry(form: ScanForm, index: int) -> dict:
    """What approx_device.py needs of a form: kernel, layout, space, and the bound as floats
    (for ranking on the GPU only; the report recomputes everything exactly)."""
    entry = {
        "index": index,
        "kernel": f"a{index:03d}",
        "text": form.text,
        "width": form.width,
        "arity": form.arity,
        "space": form.space,
        "count": form.count,
        "ftz": int(form.ftz),
    }
    if form.space == "table":
        return {**entry, "fn": -1, "metric": -1, "b1": 0.0, "b2": 0.0}
    near, far, _ = bounds(form)
    fn = {"rcp": 9, "rsqrt": 10}[form.opcode] if form.space == "upper32" else FN[form.opcode]
    return {**entry, "fn": fn, "metric": METRIC[form.metric], "b1": float(near), "b2": float(far or 0)}


def prepare(bundle: Path, ptxas: str = "ptxas") -> None:
    """Assemble every form alone (ptxas must accept each), then all in one cubin; write the plan
    and the sample inputs."""
    bundle.mkdir(parents=True, exist_ok=True)
    scan = forms()
    named = [(f"a{i:03d}", f) for i, f in enumerate(scan)]
    _, refused = assemble_each(named, lambda nf: HEADER + kernel(nf[1], nf[0]), ptxas)
    if refused:
        raise PtxSpecError(f"ptxas rejected {sorted(f.text for (_, f), _ in refused)}: {refused[0][1]}", where="approx prepare")
    cubin = assemble_module(HEADER + "\n".join(kernel(f, n) for n, f in named), ptxas)
    version = ptxas_version(ptxas)
    plan = {"k": K, "k_ulp": K_ULP, "assembler": f"ptxas -arch=sm_90a ({version})", "forms": [plan_entry(f, i) for i, f in enumerate(scan)]}
    arrays = {}
    for i, f in enumerate(scan):
        cols = sample_inputs(f)
        arrays[f"s{i}_a"] = cols[0]
        if f.arity == 2:
            arrays[f"s{i}_b"] = cols[1]
    (bundle / "approx.cubin").write_bytes(cubin)
    (bundle / "approx-plan.json").write_text(json.dumps(plan, indent=1))
    save_arrays(bundle / "approx-sample-inputs.npz", arrays)
    print(f"{len(scan)} forms assembled into {bundle}")


# ---------------------------------------------------------------------------------------------
# The 16-bit tables (the integer-half-video-warp recording, "#all-inputs" entries)
# ---------------------------------------------------------------------------------------------

#: The recorded entry of each table, by the key :mod:`ptxspec.semantics.half_precision` reads.
TABLE_SOURCES = {
    "tanh.f16": "tanh.approx.f16#all-inputs",
    "tanh.bf16": "tanh.approx.bf16#all-inputs",
    "ex2.f16": "ex2.approx.f16#all-inputs",
    "ex2.ftz.bf16": "ex2.approx.ftz.bf16#all-inputs",
}


#: The catalogue round that recorded the ``#all-inputs`` entries.
TABLE_ROUND = "integer-half-video-warp"


def _plan_recording(directory: Path, name: str = TABLE_ROUND) -> tuple[dict, dict[str, np.ndarray]]:
    from ptxspec.conformance.silicon.campaign import load_arrays

    meta = json.loads((directory / f"meta-{name}.json").read_text())
    return meta, load_arrays(directory / file for file in meta["files"])


def recorded(directory: Path, texts: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(input, output) columns of one-source entries of the :data:`TABLE_ROUND` recording, by their text."""
    meta, arrays = _plan_recording(directory)
    out = {}
    for text in texts:
        if text not in meta["forms"]:
            raise PtxSpecError(f"{text} is not in the {TABLE_ROUND} recording", where=str(directory))
        i = meta["forms"].index(text)
        out[text] = arrays[f"g{meta['groups'][i]}_in0"], arrays[f"f{i}_out0"]
    return out


def extract_tables(directory: Path = DATA) -> dict[str, np.ndarray]:
    """The sm_90 result of every 16-bit input, per table: ``table[a]`` is what the chip returned
    for the input word a. Every input must have been recorded exactly once."""
    tables = {}
    for key, (inputs, outputs) in zip(TABLE_SOURCES, recorded(directory, list(TABLE_SOURCES.values())).values()):
        if not np.array_equal(np.sort(inputs.astype(np.int64)), np.arange(1 << 16)):
            raise PtxSpecError(f"{TABLE_SOURCES[key]} does not hold every 16-bit input once", where=str(directory))
        if int(outputs.max()) >> 16:
            raise PtxSpecError(f"{TABLE_SOURCES[key]} has a result wider than 16 bits", where=str(directory))
        table = np.zeros(1 << 16, dtype=np.uint16)
        table[inputs.astype(np.int64)] = outputs.astype(np.uint16)
        tables[key] = table
    return tables


def stored_tables(path: Path | None = None) -> dict[str, np.ndarray]:
    """The tables in ``path`` (default: :data:`TABLES`, read when called)."""
    with np.load(path or TABLES) as z:
        return {k: z[k] for k in z.files}


def x2_lanes(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper half-words of 32-bit words (the manual's fA[0] and fA[1])."""
    w = words.astype(np.uint64)
    return (w & np.uint64(0xFFFF)).astype(np.int64), ((w >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.int64)


def x2_coverage(words: np.ndarray, outputs: np.ndarray, table: np.ndarray) -> dict:
    """How an x2 form's recording determines its two lanes: the distinct inputs each lane saw,
    and the rows where a lane's output differs from the scalar table's entry."""
    (lo_in, hi_in), (lo_out, hi_out) = x2_lanes(words), x2_lanes(outputs)
    return {
        "rows": int(len(words)),
        "low_inputs": int(len(np.unique(lo_in))),
        "high_inputs": int(len(np.unique(hi_in))),
        "low_disagree": np.flatnonzero(table[lo_in] != lo_out).tolist(),
        "high_disagree": np.flatnonzero(table[hi_in] != hi_out).tolist(),
    }


# ---------------------------------------------------------------------------------------------
# The recorded scan, and its errors recomputed exactly (MPFR)
# ---------------------------------------------------------------------------------------------


@dataclass
class Scan:
    """One chip's scan: its meta, the extremes (``f{j}_e_*`` by the manual's metric, ``f{j}_u_*``
    by ulps) and the sample outputs (``s{j}_d``)."""

    chip: str
    meta: dict
    extremes: dict[str, np.ndarray]
    samples: dict[str, np.ndarray]
    #: For a chip whose sample outputs are kept as digests only (``approx-sample-<chip>-digests.json``:
    #: the SHA-256 of each array), those digests; its ``samples`` are then empty.
    sample_digests: dict[str, str] | None = None

    @property
    def reference(self) -> int:
        """The version of the GPU reference: 1 converted f32 through CuPy's flushing float<->double
        conversions, so its counts and keys are wrong around f32 subnormals (and its rsqrt.approx.f64
        reference was the instruction itself); 2 converts by integer arithmetic."""
        return int(self.meta.get("reference", 1))


def load_scans(directory: Path = DATA) -> list[Scan]:
    """Every chip's scan under ``directory``: ``meta-approx-<chip>.json``, its extremes, and its
    sample outputs (``approx-sample-<chip>.npz``, or their digests)."""
    scans = []
    for meta_path in sorted(directory.glob("meta-approx-*.json")):
        chip = meta_path.stem.removeprefix("meta-approx-")
        with np.load(directory / f"approx-extremes-{chip}.npz") as z:
            extremes = {k: z[k] for k in z.files}
        samples, digests = {}, None
        if (directory / f"approx-sample-{chip}.npz").exists():
            with np.load(directory / f"approx-sample-{chip}.npz") as z:
                samples = {k: z[k] for k in z.files}
        else:
            digests = json.loads((directory / f"approx-sample-{chip}-digests.json").read_text())["arrays"]
        scans.append(Scan(chip, json.loads(meta_path.read_text()), extremes, samples, digests))
    return scans


def array_digest(array: np.ndarray) -> str:
    """The SHA-256 of an array's bytes (how a second chip's sample outputs are kept)."""
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def form_of(text: str) -> ScanForm:
    return next(f for f in forms() if f.text == text)


def kept_rows(scan: Scan, j: int, width: int) -> list[tuple[int, int, int, int]]:
    """The distinct kept inputs of form ``j``: (index, a, b, d), both lists."""
    rows: dict[int, tuple[int, int, int, int]] = {}
    for tag in ("e", "u"):
        if f"f{j}_{tag}_index" not in scan.extremes:
            continue
        cols = [scan.extremes[f"f{j}_{tag}_{c}"] for c in ("index", "a", "b", "d")]
        for r in zip(*cols):
            index, a, b, d = (int(x) for x in r)
            rows[index] = (index, a, b, d)
    return [rows[k] for k in sorted(rows)]


def _mpfr_of(bits: int, width: int):
    import struct

    import gmpy2

    x = struct.unpack("<f", struct.pack("<I", bits))[0] if width == 32 else struct.unpack("<d", struct.pack("<Q", bits))[0]
    return gmpy2.mpfr(x, 64 if width == 32 else 64)


#: (precision, smallest normal exponent, MPFR emin, emax) of the result formats.
_RESULT_FORMATS = {"f32": (24, -126, -148, 128), "f64": (53, -1022, -1073, 1024), "1.11.20": (21, -1022, -1041, 1024)}


def _result_format(form: ScanForm) -> str:
    return "f32" if form.width == 32 else ("1.11.20" if form.space == "upper32" else "f64")


def _ordinal(bits: int, width: int) -> int:
    sign = 1 << (width - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def _round_nearest_bits(y, fmt: str) -> int:
    """The bits of y rounded to nearest even in ``fmt`` (MPFR with the format's exponent range)."""
    import struct

    import gmpy2

    p, _, emin, emax = _RESULT_FORMATS[fmt]
    with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=gmpy2.RoundToNearest):
        r = y + 0
    if fmt == "f32":
        return struct.unpack("<I", struct.pack("<f", float(r)))[0]
    bits = struct.unpack("<Q", struct.pack("<d", float(r)))[0]
    return bits >> 32 if fmt == "1.11.20" else bits


@dataclass(frozen=True)
class ExactError:
    """The error of one recorded result against the exact value y (MPFR, 256 bits): ``metric``
    the error in the manual's metric for this input (``absolute`` or ``relative``, or ulps),
    ``ratio`` metric / bound (for an ulp bound: steps / k), ``ulps`` ``|d - y| / ulp(y)`` in the result format, ``steps`` the
    encodings between d and rn(y), ``outside`` whether the manual's bound is broken."""

    metric: str
    error: float
    ratio: float
    ulps: float
    steps: int
    outside: bool


def exact_error(form: ScanForm, a: int, b: int, d: int) -> ExactError | None:
    """The exact error of result ``d`` for operands ``a`` (, ``b``); None where the manual's bound
    does not apply (a NaN or infinite operand or result, sin/cos beyond 100 pi, div.approx with
    ``|b| > 2^126``, a zero divisor) or the result is a flushed subnormal under .ftz."""
    try:
        import gmpy2
        from gmpy2 import mpfr
    except ImportError:
        raise PtxSpecError(
            "the exact errors of the .approx forms are computed with gmpy2 (MPFR), which is not installed: pip install gmpy2 (or the test extras, pip install '.[test]')"
        ) from None

    fmt = _result_format(form)
    p, emin_normal, _, _ = _RESULT_FORMATS[fmt]
    in_width = form.width
    x_bits = (a >> 32) << 32 if form.space == "upper32" else a
    with gmpy2.context(precision=256, emin=-(1 << 20), emax=1 << 20):
        x = _mpfr_of(x_bits, in_width)
        y_in = _mpfr_of(b, in_width) if form.arity == 2 else mpfr(1)
        tiny = mpfr(2) ** (-126 if in_width == 32 else -1022)
        if form.ftz:
            x = gmpy2.copy_sign(mpfr(0), x) if abs(x) < tiny else x
            y_in = gmpy2.copy_sign(mpfr(0), y_in) if abs(y_in) < tiny else y_in
        out_bits = d >> 32 if fmt == "1.11.20" else d
        dv = _mpfr_of(d, 64) if fmt != "f32" else _mpfr_of(d, 32)
        if not (gmpy2.is_finite(x) and gmpy2.is_finite(y_in) and gmpy2.is_finite(dv)):
            return None
        op = form.opcode
        if op in ("sin", "cos") and abs(x) > 100 * gmpy2.const_pi():
            return None
        if op == "div" and (y_in == 0 or ("approx" in form.text and abs(y_in) > mpfr(2) ** 126)):
            return None
        outside_domain = x < 0 if op == "sqrt" else x <= 0 if op in ("lg2", "rsqrt") else x == 0 if op == "rcp" else False
        if outside_domain:  # NaN or an infinity: the special-value tables, not the bound
            return None
        y = {
            "sin": lambda: gmpy2.sin(x),
            "cos": lambda: gmpy2.cos(x),
            "lg2": lambda: gmpy2.log2(x),
            "ex2": lambda: gmpy2.exp2(x),
            "rcp": lambda: 1 / x,
            "sqrt": lambda: gmpy2.sqrt(x),
            "rsqrt": lambda: gmpy2.rec_sqrt(x),
            "tanh": lambda: gmpy2.tanh(x),
            "div": lambda: x / y_in,
        }[op]()
        if form.ftz and dv == 0 and abs(y) < mpfr(2) ** emin_normal:
            return None
        err = abs(dv - y)
        e = max(gmpy2.get_exp(y) - 1 if y != 0 else emin_normal, emin_normal)
        ulps = err / mpfr(2) ** (e - (p - 1))
        near, far, _ = bounds(form)
        width = 64 if fmt == "f64" else 32
        steps = abs(_ordinal(out_bits, width) - _ordinal(_round_nearest_bits(y, fmt), width))
        if form.metric == "ulps":
            assert isinstance(near, int), f"{form.text}: an ulp bound is a whole number of ulps (bounds)"
            return ExactError("ulps", float(ulps), steps / near, float(ulps), steps, steps > near)
        if form.metric == "absolute" or (form.metric == "lg2" and mpfr(0.5) < x < 2):
            far_range = form.opcode in ("sin", "cos") and abs(x) > 2 * gmpy2.const_pi()
            bound, metric, error = gmpy2.mpq(far if far_range else near), "absolute", err
        else:
            bound, metric, error = gmpy2.mpq(near), "relative", err / abs(y)
        return ExactError(metric, float(error), float(error / bound), float(ulps), steps, bool(error > bound))


def sample_columns(scan: Scan, j: int, form: ScanForm) -> list[np.ndarray] | None:
    """The regenerated sample inputs of form ``j`` and its recorded outputs, after checking the
    inputs' SHA-256 against what the chip read; None where the scan did not run the form."""
    if f"s{j}_d" not in scan.samples:
        return None
    cols = sample_inputs(form)
    recorded = scan.meta["sample_input_sha256"][str(j)]
    if [digest(c) for c in cols] != recorded:
        raise PtxSpecError(f"the regenerated sample inputs of {form.text} differ from those recorded", where=scan.chip)
    return [*cols, scan.samples[f"s{j}_d"]]


def gpu_reference_reliable(scan: Scan, form: ScanForm) -> bool:
    """Whether the GPU-side numbers of ``form`` in ``scan`` (the count outside the bound, the keys)
    can be trusted everywhere. A version-1 reference flushed f32 subnormals, which only a .ftz
    form's own flushing hides, and took CUDA's rsqrt(double) -- rsqrt.approx.f64 itself -- as the
    reference of rsqrt.approx.f64. (The kept extremes are recomputed exactly either way.)"""
    if scan.reference >= 2:
        return True
    return (form.ftz and form.width == 32) or form.space == "upper32"


@dataclass
class Row:
    """One line of the report."""

    chip: str
    text: str
    scanned: int
    metric: str
    max_error: float
    max_ratio: float
    max_steps: int
    max_ulps: float | None
    bound: str
    outside_gpu: int | None
    special_gpu: int
    outside_exact: int
    kept: int


def report_rows(scans: list[Scan]) -> list[Row]:
    """Per chip and scanned form: the largest error of the kept inputs, recomputed exactly, in the
    manual's metric (and / bound), the largest ulp error where the metric is relative or in ulps
    (near a zero of sin, cos or lg2 an absolute bound allows any number of ulps), and the counts."""
    rows = []
    for scan in scans:
        for summary in scan.meta["scans"]:
            form = form_of(summary["text"])
            kept = kept_rows(scan, summary["index"], form.width)
            errors = [e for e in (exact_error(form, a, b, d) for _, a, b, d in kept) if e]
            worst = max(errors, key=lambda e: (e.ratio, e.ulps), default=None)
            ulps = [e.ulps for e in errors if e.metric != "absolute"]
            reliable = gpu_reference_reliable(scan, form)
            rows.append(
                Row(
                    scan.chip,
                    form.text,
                    summary["scanned"],
                    worst.metric if worst else form.metric,
                    worst.error if worst else 0.0,
                    worst.ratio if worst else 0.0,
                    worst.steps if worst else 0,
                    max(ulps) if ulps else None,
                    bounds(form)[2],
                    summary["outside"] if reliable else None,
                    summary["special"],
                    sum(e.outside for e in errors),
                    len(kept),
                )
            )
    return rows


def _log2(x: float) -> str:
    import math

    return "0" if x == 0 else f"2^{math.log2(x):.3f}"


def _error_cell(r: Row) -> str:
    if r.metric == "ulps":  # the manual's ulp: "2 ulp from correctly rounded result" (§9.7.3.21)
        return f"{r.max_steps} ulp from the rounded result"
    return f"{_log2(r.max_error)} {'abs' if r.metric == 'absolute' else 'rel'}"


REPORT_HEAD = (
    "chip",
    "form",
    "inputs scanned",
    "max error (manual's metric)",
    "error / bound",
    "max ulps (rel./ulp metrics)",
    "manual's bound",
    "outside the bound (GPU reference, whole scan)",
    "outside the bound (exact, kept inputs)",
)


def report_cells(rows: list[Row]) -> list[list[str]]:
    """The report's rows as cells under :data:`REPORT_HEAD` (chips with the same line share it)."""
    merged: dict[tuple, list[str]] = {}
    for r in rows:
        merged.setdefault(tuple(v for k, v in vars(r).items() if k != "chip"), []).append(r.chip)
    rows = [Row(", ".join(chips), *key) for key, chips in merged.items()]
    return [
        [
            r.chip,
            r.text,
            f"{r.scanned:,}",
            _error_cell(r),
            f"{r.max_ratio:.4f}",
            "--" if r.max_ulps is None else f"{r.max_ulps:.3f}",
            r.bound,
            "n/a (version-1 reference)" if r.outside_gpu is None else f"{r.outside_gpu:,}" + (f" ({r.special_gpu:,} special)" if r.special_gpu else ""),
            f"{r.outside_exact} of {r.kept}",
        ]
        for r in rows
    ]


def report_table(rows: list[Row]) -> str:
    """The report as an RST list-table (what docs/silicon-approx.rst includes)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for cells in [list(REPORT_HEAD)] + [[c[0], f"``{c[1]}``", *c[2:6], c[6].replace("|", "\\|"), *c[7:]] for c in report_cells(rows)]:  # |b| is no substitution
        lines.append("   * - " + cells[0])
        lines += [f"     - {c}" for c in cells[1:]]
    return "\n".join(lines) + "\n"


def report_text(rows: list[Row]) -> str:
    """The report for a terminal: one block per form, a field a line."""
    blocks = []
    for cells in report_cells(rows):
        width = max(len(h) for h in REPORT_HEAD[2:])
        lines = [f"{cells[1]}  ({cells[0]})"] + [f"  {h:<{width}}  {c}" for h, c in zip(REPORT_HEAD[2:], cells[2:])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "silicon-approx.rst"
DOC_BEGIN = ".. BEGIN approx report (generated by `python -m ptxspec.conformance.silicon approx report --write-docs`)"
DOC_END = ".. END approx report"


NOT_RECORDED = "The scan has not been recorded yet.\n"


def generated_section(directory: Path = DATA) -> str:
    """What docs/silicon-approx.rst holds between its markers for the recording in ``directory``."""
    scans = load_scans(directory)
    body = report_table(report_rows(scans)) if scans else NOT_RECORDED
    return f"{DOC_BEGIN}\n\n{body}\n{DOC_END}"


def current_doc_section(text: str) -> str:
    start, end = text.index(DOC_BEGIN), text.index(DOC_END) + len(DOC_END)
    return text[start:end]


# ---------------------------------------------------------------------------------------------
# The commands (``python -m ptxspec.conformance.silicon approx tables|report``)
# ---------------------------------------------------------------------------------------------


def tables(write: bool = False) -> str:
    """Extract the 16-bit .approx tables from the :data:`TABLE_ROUND` recording into :data:`TABLES`
    (``write``), or check that the stored file equals a fresh extraction. Returns what was done."""
    extracted = extract_tables()
    if write:
        TABLES.parent.mkdir(parents=True, exist_ok=True)
        save_arrays(TABLES, extracted)
        return f"wrote {len(extracted)} tables to {TABLES}"
    if not TABLES.exists():
        raise PtxSpecError(f"{TABLES} is missing; run `approx tables --write`", where="approx tables")
    stored = stored_tables()
    stale = sorted(k for k in set(extracted) | set(stored) if k not in stored or k not in extracted or not np.array_equal(stored[k], extracted[k]))
    if stale:
        raise PtxSpecError(f"{TABLES.name} differs from the recording in {stale}; run `approx tables --write`", where="approx tables")
    return f"{TABLES.name}: {len(extracted)} tables, equal to the recording"


def report(write_docs: bool = False, data: Path = DATA) -> str:
    """Recompute the kept extremes exactly: the table of the .approx scan, or (``write_docs``) that
    table written into docs/silicon-approx.rst."""
    if write_docs:
        text = DOC.read_text()
        DOC.write_text(text.replace(current_doc_section(text), generated_section(data)))
        return f"rewrote the table in {DOC}"
    scans = load_scans(data)
    if not scans:
        raise PtxSpecError(f"no meta-approx-*.json under {data}: the scan has not been recorded yet", where="approx report")
    return report_text(report_rows(scans))
