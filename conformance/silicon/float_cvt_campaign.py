"""The float-cvt campaign: 381 forms of §9.7.3 (floating point) and cvt (§9.7.9.21) on sm_90.

The first campaign, listed by hand (the catalogue campaign, :mod:`.catalogue_campaign`, asks the
catalogue for the other chapters). An :class:`Entry` names a PTX instruction form, the register
kind of each operand and how its inputs are drawn; :func:`inputs_for` makes the same arrays on
every machine for the same seed, so the device only executes them. :func:`kernel` is the PTX of
one form: each thread reads its source operands from 64-bit global arrays (one element per
thread; the low bits hold the operand), applies the instruction once, and stores each destination
zero-extended to 64 bits (a predicate through ``selp``). Operands are declared as bit-size
registers, which §5.2.1 makes compatible with every fundamental type of the same size.

Commands (the one command line, :mod:`.__main__`, and the device script)::

    python -m ptxspec.conformance.silicon float-cvt prepare BUNDLE     # here: ptxas -arch=sm_90a per form
    python3 conformance/silicon/scalar_device.py run BUNDLE OUT        # on the GPU machine

The recording is ``meta-float-cvt.json``, ``float-cvt-<i>.npz`` (inputs and outputs per form) and
``rejected-float-cvt.json``; :func:`ptxspec.conformance.silicon.replay.load` reads it back.

Only numpy is imported here: this module runs on the device machine too (beside
``scalar_device.py``); :func:`prepare` imports the host side when it is called.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Operand kinds: register width in bits and the value distribution to draw from.
KIND_BITS = {
    "f64": 64,
    "f32": 32,
    "f16": 16,
    "bf16": 16,
    "f16x2": 32,
    "bf16x2": 32,
    "e4m3x2": 16,
    "e5m2x2": 16,
    "b16": 16,
    "u8": 16,
    "s8": 16,
    "u16": 16,
    "s16": 16,
    "u32": 32,
    "s32": 32,
    "u64": 64,
    "s64": 64,
    "pred": 32,
}


@dataclass(frozen=True)
class Entry:
    """One form to record: ``text`` is the PTX instruction, ``dst`` and ``src`` the operand kinds.

    ``dst`` of kind "pred" is stored through ``selp.u32 1, 0``.
    """

    text: str
    dst: tuple[str, ...]
    src: tuple[str, ...]
    #: Record every combination of the operands' special values (for NaN-propagation order and
    #: the other rules that only show when several operands are special at once).
    all_specials: bool = False

    def count(self, n: int) -> int:
        """How many vectors this entry records when a campaign asks for ``n``."""
        if not self.all_specials:
            return n
        total = 1
        for kind in self.src:
            total *= len(_specials(kind))
        return max(n, total)

    @property
    def instruction(self) -> str:
        """The PTX instruction (``text`` may carry a ``#tag`` that tells two entries apart)."""
        return self.text.split("#")[0]

    @property
    def seed(self) -> int:
        return zlib.crc32(self.text.encode())


def _f32_specials() -> list[int]:
    return [
        0x00000000,
        0x80000000,
        0x00000001,
        0x80000001,
        0x007FFFFF,
        0x807FFFFF,
        0x00800000,
        0x80800000,
        0x00800001,
        0x7F7FFFFF,
        0xFF7FFFFF,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC00000,
        0x7FC12345,
        0xFFD54321,
        0x7F800001,
        0xFFA00005,
        0x3F800000,
        0xBF800000,
        0x3F800001,
        0x3F7FFFFF,
        0x40000000,
        0x3F000000,
        0x33800000,
        0x34000000,
        0x4B800000,
        0x477FE000,
        0x477FF000,
        0x477FEFFF,
        0x38800000,
        0x387FC000,
        0x33000000,
        0x33000001,
        0x43E00000,
        0x43F00000,
        0x3C000000,
        0x3B000000,
        0x3A800000,
    ]


def _f64_specials() -> list[int]:
    return [
        0x0,
        0x8000000000000000,
        0x1,
        0x8000000000000001,
        0x000FFFFFFFFFFFFF,
        0x0010000000000000,
        0x8010000000000000,
        0x7FEFFFFFFFFFFFFF,
        0xFFEFFFFFFFFFFFFF,
        0x7FF0000000000000,
        0xFFF0000000000000,
        0x7FF8000000000000,
        0xFFF8000000000000,
        0x7FF8000000012345,
        0xFFF80000ABCDEF01,
        0x7FF0000000000001,
        0xFFF4000000000007,
        0x3FF0000000000000,
        0xBFF0000000000000,
        0x3FF0000000000001,
        0x3FEFFFFFFFFFFFFF,
        0x4000000000000000,
        0x3CA0000000000000,
        0x36A0000000000000,
        0x47EFFFFFE0000000,
        0x47EFFFFFF0000000,
        0x3810000000000000,
        0x380FFFFFFFFFFFFF,
        0x36A0000000000001,
        0x4330000000000000,
    ]


def _f16_specials() -> list[int]:
    return [
        0x0000,
        0x8000,
        0x0001,
        0x8001,
        0x03FF,
        0x0400,
        0x8400,
        0x7BFF,
        0xFBFF,
        0x7C00,
        0xFC00,
        0x7E00,
        0xFE00,
        0x7E55,
        0x7C01,
        0xFD23,
        0x3C00,
        0xBC00,
        0x3C01,
        0x3BFF,
    ]


def _bf16_specials() -> list[int]:
    return [
        0x0000,
        0x8000,
        0x0001,
        0x8001,
        0x007F,
        0x0080,
        0x8080,
        0x7F7F,
        0xFF7F,
        0x7F80,
        0xFF80,
        0x7FC0,
        0xFFC0,
        0x7FD5,
        0x7F81,
        0xFFA3,
        0x3F80,
        0xBF80,
        0x3F81,
        0x3F7F,
    ]


def _random_float_bits(rng: np.random.Generator, n: int, bits: int, exponent_bits: int) -> np.ndarray:
    """Half uniform random bit patterns (every exponent), half with exponents near the middle of
    the range and near the subnormal boundary, where rounding and flushing decide results."""
    dtype = np.uint64
    raw = (
        rng.integers(0, 1 << bits, size=n, dtype=np.uint64)
        if bits < 64
        else rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, size=n, dtype=np.uint64)
    )
    mantissa_bits = bits - 1 - exponent_bits
    bias = (1 << (exponent_bits - 1)) - 1
    half = n // 2
    exps = np.concatenate(
        [
            rng.integers(bias - 8, bias + 8, size=half // 2),
            rng.integers(0, min(mantissa_bits + 3, bias), size=half - half // 2),
        ]
    ).astype(np.uint64)
    mant = raw[:half] & np.uint64((1 << mantissa_bits) - 1)
    sign = (raw[:half] >> np.uint64(bits - 1)) & np.uint64(1)
    shaped = (sign << np.uint64(bits - 1)) | (exps << np.uint64(mantissa_bits)) | mant
    return np.concatenate([shaped, raw[half:]]).astype(dtype)


def _column(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "f32":
        return _random_float_bits(rng, n, 32, 8)
    if kind == "f64":
        return _random_float_bits(rng, n, 64, 11)
    if kind in ("f16", "b16"):
        return _random_float_bits(rng, n, 16, 5)
    if kind == "bf16":
        return _random_float_bits(rng, n, 16, 8)
    if kind == "f16x2":
        return (_column("f16", rng, n) << np.uint64(16)) | _column("f16", rng, n)
    if kind == "bf16x2":
        return (_column("bf16", rng, n) << np.uint64(16)) | _column("bf16", rng, n)
    if kind in ("e4m3x2", "e5m2x2"):
        return rng.integers(0, 1 << 16, size=n, dtype=np.uint64)
    bits = int(kind[1:])
    if kind in ("u8", "s8"):
        bits = 8
    values = rng.integers(0, 1 << min(bits, 63), size=n, dtype=np.uint64)
    if bits == 64:
        values = values * np.uint64(2) + rng.integers(0, 2, size=n, dtype=np.uint64)
    return values


def _specials(kind: str) -> list[int]:
    table = {"f32": _f32_specials, "f64": _f64_specials, "f16": _f16_specials, "b16": _f16_specials, "bf16": _bf16_specials}
    if kind in table:
        return table[kind]()
    if kind == "f16x2":
        s = _f16_specials()
        return [(a << 16) | b for a, b in zip(s, reversed(s))]
    if kind == "bf16x2":
        s = _bf16_specials()
        return [(a << 16) | b for a, b in zip(s, reversed(s))]
    if kind in ("e4m3x2", "e5m2x2"):
        return list(range(0, 1 << 16, 257))  # every byte value in both halves (pairs (k, k))
    bits = 8 if kind in ("u8", "s8") else int(kind[1:])
    return [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]


def inputs_for(entry: Entry, n: int) -> list[np.ndarray]:
    """Seeded inputs: every combination of the kinds' special values first (up to n), then random."""
    rng = np.random.default_rng(entry.seed)
    n = entry.count(n)
    columns = [_column(kind, rng, n) for kind in entry.src]
    specials = [_specials(kind) for kind in entry.src]
    if entry.src and (len(entry.src) <= 2 or entry.all_specials):
        grid = np.array(np.meshgrid(*[np.array(s, dtype=np.uint64) for s in specials], indexing="ij")).reshape(len(entry.src), -1)
        m = min(grid.shape[1], n)
        for col, row in zip(columns, grid):
            col[:m] = row[:m]
    elif entry.src:
        m = min(len(s) for s in specials)
        for col, s in zip(columns, specials):
            col[: min(len(s), n)] = np.array(s[:n], dtype=np.uint64)
    return columns


def _forms() -> list[Entry]:
    out: list[Entry] = []
    rnd = ("rn", "rz", "rm", "rp")
    for op in ("add", "sub", "mul"):
        for r in rnd:
            for ftz in ("", ".ftz"):
                out.append(Entry(f"{op}.{r}{ftz}.f32", ("f32",), ("f32", "f32")))
            out.append(Entry(f"{op}.{r}.f64", ("f64",), ("f64", "f64")))
        out.append(Entry(f"{op}.rn.sat.f32", ("f32",), ("f32", "f32")))
        out.append(Entry(f"{op}.rz.ftz.sat.f32", ("f32",), ("f32", "f32")))
    for r in rnd:
        for ftz in ("", ".ftz"):
            out.append(Entry(f"fma.{r}{ftz}.f32", ("f32",), ("f32", "f32", "f32")))
            out.append(Entry(f"div.{r}{ftz}.f32", ("f32",), ("f32", "f32")))
            out.append(Entry(f"rcp.{r}{ftz}.f32", ("f32",), ("f32",)))
            out.append(Entry(f"sqrt.{r}{ftz}.f32", ("f32",), ("f32",)))
        out.append(Entry(f"fma.{r}.f64", ("f64",), ("f64", "f64", "f64")))
        out.append(Entry(f"div.{r}.f64", ("f64",), ("f64", "f64")))
        out.append(Entry(f"rcp.{r}.f64", ("f64",), ("f64",)))
        out.append(Entry(f"sqrt.{r}.f64", ("f64",), ("f64",)))
    out += [
        Entry("fma.rn.sat.f32", ("f32",), ("f32",) * 3),
        Entry("fma.rn.ftz.sat.f32", ("f32",), ("f32",) * 3),
        Entry("mad.rn.f32", ("f32",), ("f32",) * 3),
        Entry("mad.rz.ftz.sat.f32", ("f32",), ("f32",) * 3),
        Entry("mad.rn.f64", ("f64",), ("f64",) * 3),
    ]
    for ftz in ("", ".ftz"):
        for name in ("div.approx", "div.full"):
            out.append(Entry(f"{name}{ftz}.f32", ("f32",), ("f32", "f32")))
        for fn in ("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2"):
            out.append(Entry(f"{fn}.approx{ftz}.f32", ("f32",), ("f32",)))
        for fn in ("abs", "neg"):
            out.append(Entry(f"{fn}{ftz}.f32", ("f32",), ("f32",)))
        for fn in ("min", "max"):
            out.append(Entry(f"{fn}{ftz}.f32", ("f32",), ("f32", "f32")))
            out.append(Entry(f"{fn}{ftz}.NaN.f32", ("f32",), ("f32", "f32")))
    out += [
        Entry("tanh.approx.f32", ("f32",), ("f32",)),
        Entry("rcp.approx.ftz.f64", ("f64",), ("f64",)),
        Entry("rsqrt.approx.f64", ("f64",), ("f64",)),
        Entry("rsqrt.approx.ftz.f64", ("f64",), ("f64",)),
        Entry("abs.f64", ("f64",), ("f64",)),
        Entry("neg.f64", ("f64",), ("f64",)),
        Entry("min.f64", ("f64",), ("f64", "f64")),
        Entry("max.f64", ("f64",), ("f64", "f64")),
        Entry("min.xorsign.abs.f32", ("f32",), ("f32", "f32")),
        Entry("max.xorsign.abs.f32", ("f32",), ("f32", "f32")),
        Entry("min.NaN.xorsign.abs.f32", ("f32",), ("f32", "f32")),
        Entry("copysign.f32", ("f32",), ("f32", "f32")),
        Entry("copysign.f64", ("f64",), ("f64", "f64")),
    ]
    for cls in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
        out.append(Entry(f"testp.{cls}.f32", ("pred",), ("f32",)))
        out.append(Entry(f"testp.{cls}.f64", ("pred",), ("f64",)))
    # cvt: float <-> float
    for r in rnd:
        for ftz in ("", ".ftz"):
            out.append(Entry(f"cvt.{r}{ftz}.f32.f64", ("f32",), ("f64",)))
            out.append(Entry(f"cvt.{r}{ftz}.f16.f32", ("f16",), ("f32",)))
        out.append(Entry(f"cvt.{r}.f16.f64", ("f16",), ("f64",)))
        out.append(Entry(f"cvt.{r}.bf16.f64", ("bf16",), ("f64",)))
    out += [
        Entry("cvt.f64.f32", ("f64",), ("f32",)),
        Entry("cvt.ftz.f64.f32", ("f64",), ("f32",)),
        Entry("cvt.f32.f16", ("f32",), ("f16",)),
        Entry("cvt.ftz.f32.f16", ("f32",), ("f16",)),
        Entry("cvt.f64.f16", ("f64",), ("f16",)),
        Entry("cvt.f32.bf16", ("f32",), ("bf16",)),
        Entry("cvt.f64.bf16", ("f64",), ("bf16",)),
        Entry("cvt.rn.f16.bf16", ("f16",), ("bf16",)),
        Entry("cvt.rn.bf16.f16", ("bf16",), ("f16",)),
        Entry("cvt.rz.bf16.f16", ("bf16",), ("f16",)),
        Entry("cvt.sat.f32.f32", ("f32",), ("f32",)),
        Entry("cvt.ftz.sat.f32.f32", ("f32",), ("f32",)),
        Entry("cvt.rn.sat.f16.f32", ("f16",), ("f32",)),
        Entry("cvt.rn.sat.f32.f64", ("f32",), ("f64",)),
    ]
    for r in ("rn", "rz"):
        for relu in ("", ".relu"):
            for sf in ("", ".satfinite"):
                out.append(Entry(f"cvt.{r}{relu}{sf}.f16.f32", ("f16",), ("f32",)))
                out.append(Entry(f"cvt.{r}{relu}{sf}.bf16.f32", ("bf16",), ("f32",)))
                out.append(Entry(f"cvt.{r}{relu}{sf}.f16x2.f32", ("f16x2",), ("f32", "f32")))
                out.append(Entry(f"cvt.{r}{relu}{sf}.bf16x2.f32", ("bf16x2",), ("f32", "f32")))
        out.append(Entry(f"cvt.{r}.tf32.f32", ("f32",), ("f32",)))
        out.append(Entry(f"cvt.{r}.relu.tf32.f32", ("f32",), ("f32",)))
        out.append(Entry(f"cvt.{r}.satfinite.tf32.f32", ("f32",), ("f32",)))
    out += [Entry("cvt.rna.tf32.f32", ("f32",), ("f32",)), Entry("cvt.rna.satfinite.tf32.f32", ("f32",), ("f32",))]
    for f8 in ("e4m3x2", "e5m2x2"):
        for relu in ("", ".relu"):
            out.append(Entry(f"cvt.rn.satfinite{relu}.{f8}.f32", (f8,), ("f32", "f32")))
            out.append(Entry(f"cvt.rn.satfinite{relu}.{f8}.f16x2", (f8,), ("f16x2",)))
            out.append(Entry(f"cvt.rn{relu}.f16x2.{f8}", ("f16x2",), (f8,)))
    # cvt: float <-> integer, and integer <-> integer
    for irnd in ("rni", "rzi", "rmi", "rpi"):
        for it in ("s32", "u32", "s64", "u64", "s16", "u16", "s8", "u8"):
            out.append(Entry(f"cvt.{irnd}.{it}.f32", (it,), ("f32",)))
        for it in ("s32", "u64", "s64"):
            out.append(Entry(f"cvt.{irnd}.{it}.f64", (it,), ("f64",)))
        out.append(Entry(f"cvt.{irnd}.s32.f16", ("s32",), ("f16",)))
        out.append(Entry(f"cvt.{irnd}.f32.f32", ("f32",), ("f32",)))
        out.append(Entry(f"cvt.{irnd}.ftz.f32.f32", ("f32",), ("f32",)))
        out.append(Entry(f"cvt.{irnd}.f64.f64", ("f64",), ("f64",)))
        out.append(Entry(f"cvt.{irnd}.ftz.s32.f32", ("s32",), ("f32",)))
    for r in rnd:
        for it in ("s32", "u32", "s64", "u64", "s16", "u8"):
            out.append(Entry(f"cvt.{r}.f32.{it}", ("f32",), (it,)))
            out.append(Entry(f"cvt.{r}.f16.{it}", ("f16",), (it,)))
        for it in ("s64", "u64"):
            out.append(Entry(f"cvt.{r}.f64.{it}", ("f64",), (it,)))
    out += [Entry("cvt.f64.s32", ("f64",), ("s32",)), Entry("cvt.f64.u32", ("f64",), ("u32",))]
    for d, s in (
        ("s16", "s32"),
        ("u16", "u32"),
        ("s32", "s16"),
        ("u32", "s16"),
        ("s64", "s32"),
        ("u64", "s32"),
        ("s32", "u64"),
        ("u8", "s32"),
        ("s8", "u32"),
        ("s32", "s8"),
        ("u32", "u8"),
    ):
        out.append(Entry(f"cvt.{d}.{s}", (d,), (s,)))
        out.append(Entry(f"cvt.sat.{d}.{s}", (d,), (s,)))
    # Every combination of special operands, for the rules of several special operands at once.
    out += [Entry(f"{t}#all-specials", ("f64",), ("f64",) * 3, all_specials=True) for t in ("fma.rn.f64", "fma.rz.f64")]
    out += [Entry(f"{t}#all-specials", ("f32",), ("f32",) * 3, all_specials=True) for t in ("fma.rn.f32", "fma.rm.ftz.f32", "fma.rn.ftz.sat.f32")]
    return out


#: The float-cvt round: every §9.7.3 and cvt form that sm_90 executes.
FORMS: list[Entry] = _forms()


#: The round's name: the stem of its files (``meta-float-cvt.json``, ``float-cvt-<i>.npz``).
NAME = "float-cvt"
#: Vectors per form (an ``all_specials`` entry records at least every combination of specials).
SAMPLES = 4096


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def _reg(kind: str) -> tuple[str, int]:
    bits = KIND_BITS[kind]
    return {16: "%h", 32: "%r", 64: "%rd"}[bits], bits


def kernel(entry: Entry, name: str) -> str:
    """The PTX text of one ``.entry`` named ``name`` for ``entry``."""
    params = [f".param .u64 in{i}" for i in range(len(entry.src))] + [f".param .u64 out{i}" for i in range(len(entry.dst))] + [".param .u32 n"]
    body = [
        "  .reg .pred %p<4>;",
        "  .reg .b16 %h<16>;",
        "  .reg .b32 %r<16>;",
        "  .reg .b64 %rd<32>;",
        "  mov.u32 %r10, %tid.x;",
        "  mov.u32 %r11, %ctaid.x;",
        "  mov.u32 %r12, %ntid.x;",
        "  mad.lo.u32 %r13, %r11, %r12, %r10;",
        "  ld.param.u32 %r14, [n];",
        "  setp.ge.u32 %p0, %r13, %r14;",
        "  @%p0 bra DONE;",
        "  mul.wide.u32 %rd20, %r13, 8;",
    ]
    sources = []
    for i, kind in enumerate(entry.src):
        prefix, bits = _reg(kind)
        body += [
            f"  ld.param.u64 %rd{21}, [in{i}];",
            "  cvta.to.global.u64 %rd21, %rd21;",
            "  add.u64 %rd21, %rd21, %rd20;",
            f"  ld.global.u64 %rd{i + 1}, [%rd21];",
        ]
        if bits == 64:
            sources.append(f"%rd{i + 1}")
        else:
            body.append(f"  cvt.u{bits}.u64 {prefix}{i + 1}, %rd{i + 1};")
            sources.append(f"{prefix}{i + 1}")
    dests = []
    for j, kind in enumerate(entry.dst):
        if kind == "pred":
            dests.append("%p1")
        else:
            prefix, _ = _reg(kind)
            dests.append(f"{prefix}{8 + j}")
    body.append(f"  {entry.instruction} {', '.join(dests + sources)};")
    for j, kind in enumerate(entry.dst):
        if kind == "pred":
            body.append("  selp.u64 %rd10, 1, 0, %p1;")
        elif KIND_BITS[kind] == 64:
            body.append(f"  mov.b64 %rd10, {dests[j]};")
        else:
            body.append(f"  cvt.u64.u{KIND_BITS[kind]} %rd10, {dests[j]};")
        body += [f"  ld.param.u64 %rd22, [out{j}];", "  cvta.to.global.u64 %rd22, %rd22;", "  add.u64 %rd22, %rd22, %rd20;", "  st.global.u64 [%rd22], %rd10;"]
    body += ["DONE:", "  ret;"]
    return f".visible .entry {name}(\n  " + ",\n  ".join(params) + "\n)\n{\n" + "\n".join(body) + "\n}\n"


def module(entries: list[tuple[str, Entry]]) -> str:
    """The PTX module of ``entries`` ((kernel name, entry) pairs)."""
    header = ".version 8.7\n.target sm_90a\n.address_size 64\n"
    return header + "\n".join(kernel(e, name) for name, e in entries)


def kernel_name(index: int) -> str:
    return f"k{index:04d}"


def prepare(bundle: Path, ptxas: str = "ptxas") -> None:
    """Here (ptxas): every form assembled alone (a form ptxas rejects is listed in
    ``rejected.json`` with ptxas's message and left out), then the accepted ones into
    ``campaign.cubin``; ``kernels.json`` names each kernel's form."""
    from ptxspec.conformance.silicon.campaign import assemble_each, assemble_module, write_json

    bundle.mkdir(parents=True, exist_ok=True)
    accepted, refused = assemble_each([(kernel_name(i), e) for i, e in enumerate(FORMS)], lambda ne: module([ne]), ptxas)
    rejected = {e.text: message for (_, e), message in refused}
    (bundle / "campaign.cubin").write_bytes(assemble_module(module(accepted), ptxas))
    (bundle / "kernels.json").write_text(json.dumps({n: e.text for n, e in accepted}, indent=0))
    write_json(bundle / "rejected.json", dict(sorted(rejected.items())))
    print(f"{len(accepted)} forms assembled, {len(rejected)} rejected by ptxas")
