"""Reference vectors of tcgen05.mma numerics from MMA-Sim, the public bit-accurate model of NVIDIA
tensor-core arithmetic (microsoft/MMA-Sim, MIT; PyPI ``mmasim``): the evidence of the ``sm_100``
profile (:mod:`ptxspec.profiles.sm_100`) -- a public model, not yet silicon.

Run it where the optional extra ``peers`` is installed (MMA-Sim needs torch; CI never installs it)::

    python -m venv /work/venv-peers --system-site-packages
    /work/venv-peers/bin/pip install 'torch==2.13.0' 'mmasim==2.1.1'
    /work/venv-peers/bin/python conformance/peers/mmasim_vectors.py --out conformance/data/sm_100/mmasim

It is deterministic (seeded per combination) and writes one ``<kind>.npz`` per tcgen05 kind and a
``meta.json``. Every combination MMA-Sim's Blackwell model offers (``isa_tcgen05mma.py``:
``blackwell_tcgen05mma_shape_and_type``, ``blackwell_tcgen05mma_block_scale_shape_and_type``; per
kind, D type, A and B types, and for the block-scaled kinds the scale type and vector size) gets:

* ``mat``: whole instructions through MMA-Sim's ``__call__`` (``D = A*B + C`` of the logical
  matrices M x K, K x N, M x N; ``m64n8`` for the dense kinds, ``m128n8`` for the block-scaled ones,
  the smallest shapes MMA-Sim offers): elements of moderate exponent (cancellation), and any
  finite bit pattern (the whole exponent range, subnormals and zeros);
* ``dot``: single elements of D (one row of A, one column of B of the kind's K, one C) through
  MMA-Sim's ``dpa``, adversarial: cancellation, a wide exponent spread, subnormals, zeros next to
  tiny products (MMA-Sim's ``e_zero``), infinities and NaNs, overflow, every bit pattern, and for
  the block-scaled kinds scale factors across their whole range (NaN and zero ue4m3 included).

Arrays (element bit patterns of the logical matrices, never memory layouts; an .e2m1/.e3m2/.e2m3
element is its own 4/6-bit field): ``<combination>/<part>.A|B|C|D`` and, block-scaled,
``.SA`` (M x V scale bytes of A) and ``.SB`` (V x N of B); a ``dot`` part is a batch of 1 x K,
K x 1, 1 x 1 matrices, ``<combination>/dot.case`` naming each one's adversarial class
(``CASES``). ``tests/test_sm100_mmasim.py`` replays them through ptxspec's datapath.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import zlib
from pathlib import Path

import numpy as np
import torch
from mmasim.nv_ptx import TCGen05MMA, TCGen05MMABlockScale
from mmasim.nv_ptx import isa_tcgen05mma

SEED = 20260517
#: The adversarial classes of the ``dot`` part, in the order of their tags.
CASES = ("random", "bits", "cancel", "spread", "subnormal", "zeros", "special", "overflow", "near", "signed-zero", "scales", "zero-grid")

#: MMA-Sim's ``e_zero`` per kind and D type (mmasim/nv_ptx/sim.py): the exponent of a zero addend.
E_ZERO = {"f16": -21, "f32": -133, "mxf4": -139, "mxf4nvf4": -139}

#: (exponent bits, mantissa bits, bit offset in the pattern, has infinity, NaN encoding) per type.
FORMATS = {
    "f32": (8, 23, 0, True, "ieee"),
    "tf32": (8, 10, 13, True, "ieee"),
    "f16": (5, 10, 0, True, "ieee"),
    "bf16": (8, 7, 0, True, "ieee"),
    "e4m3": (4, 3, 0, False, "all-ones"),
    "e5m2": (5, 2, 0, True, "ieee"),
    "e3m2": (3, 2, 0, False, "none"),
    "e2m3": (2, 3, 0, False, "none"),
    "e2m1": (2, 1, 0, False, "none"),
}
WIDTH = {"f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4}
STORE = {32: np.uint32, 16: np.uint16, 8: np.uint8, 6: np.uint8, 4: np.uint8}
TORCH = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


# ---------------------------------------------------------------------------------------------
# Element bit patterns
# ---------------------------------------------------------------------------------------------


class Elements:
    """Bit patterns of one element type, drawn from ``rng``."""

    def __init__(self, t: str, rng: np.random.Generator):
        self.t, self.rng = t, rng
        self.e, self.m, self.shift, self.inf, self.nan = FORMATS[t]
        self.bias = (1 << (self.e - 1)) - 1
        self.top = (1 << self.e) - (2 if self.nan == "ieee" else 1)  # the largest exponent field of a finite value

    def pack(self, sign, exp, man) -> np.ndarray:
        bits = (
            (np.asarray(sign, dtype=np.uint64) << np.uint64(self.e + self.m))
            | (np.asarray(exp, dtype=np.uint64) << np.uint64(self.m))
            | np.asarray(man, dtype=np.uint64)
        )
        return bits << np.uint64(self.shift)

    def _fix_nan(self, exp, man) -> np.ndarray:
        """e4m3's all-ones pattern is its NaN: a finite draw there takes mantissa 6."""
        if self.nan == "all-ones":
            man = np.where((exp == self.top) & (man == (1 << self.m) - 1), (1 << self.m) - 2, man)
        return man

    def finite(self, shape, low: int | None = None, high: int | None = None, sub: float = 0.0) -> np.ndarray:
        """Finite values with exponent fields in [low, high] (default: every one), a fraction
        ``sub`` of them subnormal (exponent field 0)."""
        low = 0 if low is None else max(0, low)
        high = self.top if high is None else min(self.top, high)
        exp = self.rng.integers(low, high + 1, size=shape)
        if sub:
            exp = np.where(self.rng.random(shape) < sub, 0, exp)
        man = self._fix_nan(exp, self.rng.integers(0, 1 << self.m, size=shape))
        return self.pack(self.rng.integers(0, 2, size=shape), exp, man)

    def near(self, shape, spread: int = 3) -> np.ndarray:
        """Values of moderate exponent: 2^-spread .. 2^spread."""
        return self.finite(shape, self.bias - spread, self.bias + spread)

    def with_exponent(self, x) -> np.ndarray:
        """Normal values 2^x * 1.f (x clamped to the normal range), random sign and mantissa."""
        x = np.asarray(x)
        exp = np.clip(x + self.bias, 1, self.top)
        man = self._fix_nan(exp, self.rng.integers(0, 1 << self.m, size=x.shape))
        return self.pack(self.rng.integers(0, 2, size=x.shape), exp, man)

    def subnormal(self, shape) -> np.ndarray:
        man = self.rng.integers(1, 1 << self.m, size=shape)
        return self.pack(self.rng.integers(0, 2, size=shape), np.zeros(shape, dtype=np.int64), man)

    def zero(self, shape) -> np.ndarray:
        return self.pack(self.rng.integers(0, 2, size=shape), 0, 0)

    def biggest(self, shape) -> np.ndarray:
        return self.finite(shape, self.top - 1, self.top)

    def bits(self, shape) -> np.ndarray:
        """Any bit pattern (for tf32 the 13 bits below the field too)."""
        return self.rng.integers(0, 1 << WIDTH[self.t], size=shape, dtype=np.uint64)

    def specials(self, shape) -> np.ndarray:
        """Infinities and NaNs where the type has them, else its largest values."""
        if self.nan == "none":
            return self.biggest(shape)
        sign = self.rng.integers(0, 2, size=shape)
        full = (1 << self.e) - 1
        if self.nan == "all-ones":
            return self.pack(sign, full, (1 << self.m) - 1)
        man = np.where(self.rng.random(shape) < 0.5, 0, self.rng.integers(1, 1 << self.m, size=shape))
        return self.pack(sign, full, man)


def scale_bytes(stype: str, rng: np.random.Generator, shape, mode: str) -> np.ndarray:
    """Scale factor bytes: ``near`` 2^-8 .. 2^8, ``wide`` the whole range, ``special`` with NaNs
    (and ue4m3 zeros and subnormals). A ue4m3 byte keeps its MSB zero (§5.2.3)."""
    if stype == "ue8m0":
        if mode == "near":
            return rng.integers(127 - 8, 127 + 9, size=shape).astype(np.uint8)
        if mode == "wide":
            out = rng.integers(0, 255, size=shape)
            pick = rng.random(shape)
            out = np.where(pick < 0.1, 0, np.where(pick < 0.2, 254, out))
            return out.astype(np.uint8)
        return np.where(rng.random(shape) < 0.3, 255, rng.integers(0, 255, size=shape)).astype(np.uint8)
    # ue4m3: 0x00 zero, 0x01-0x07 subnormal, 0x7f NaN
    if mode == "near":
        return rng.integers(0x30, 0x48, size=shape).astype(np.uint8)
    if mode == "wide":
        out = rng.integers(0, 0x7F, size=shape)
        pick = rng.random(shape)
        out = np.where(pick < 0.1, 0, np.where(pick < 0.2, rng.integers(1, 8, size=shape), np.where(pick < 0.25, 0x7E, out)))
        return out.astype(np.uint8)
    return np.where(rng.random(shape) < 0.3, 0x7F, rng.integers(0, 0x7F, size=shape)).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# MMA-Sim's inputs and outputs
# ---------------------------------------------------------------------------------------------


def to_torch(t: str, bits: np.ndarray, container: str = "byte") -> torch.Tensor:
    """Element bits as MMA-Sim takes them: a torch float of the type; fp6/fp4 in a uint8 container
    (.e3m2/.e2m3 in bits 5:0, .e2m1 in bits 5:2: isa ``decode_uint8_to_fp6_fp4``), or for
    ``container="packed"`` (mxf4, mxf4nvf4) two .e2m1 per byte along the last axis, the earlier k
    in the high half (``unpack_uint8_to_fp4``)."""
    bits = np.asarray(bits, dtype=np.uint64)
    if t in ("e3m2", "e2m3"):
        return torch.from_numpy(bits.astype(np.uint8))
    if t == "e2m1":
        if container == "packed":
            pairs = bits.reshape(bits.shape[:-1] + (-1, 2))
            return torch.from_numpy(((pairs[..., 0] << np.uint64(4)) | pairs[..., 1]).astype(np.uint8))
        return torch.from_numpy((bits << np.uint64(2)).astype(np.uint8))
    width = WIDTH[t]
    signed = {32: np.int32, 16: np.int16, 8: np.uint8}[width]
    raw = bits.astype({32: np.uint32, 16: np.uint16, 8: np.uint8}[width]).view(signed)
    return torch.from_numpy(np.ascontiguousarray(raw)).view(TORCH[t])


def scales_to_torch(stype: str, byte: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(byte.astype(np.uint8))).view(torch.float8_e8m0fnu if stype == "ue8m0" else torch.float8_e4m3fn)


def from_torch(t: str, x: torch.Tensor) -> np.ndarray:
    if t == "f32":
        return x.contiguous().view(torch.int32).numpy().view(np.uint32).copy()
    return x.contiguous().view(torch.int16).numpy().view(np.uint16).copy()


# ---------------------------------------------------------------------------------------------
# The combinations MMA-Sim offers
# ---------------------------------------------------------------------------------------------


def combinations() -> list[dict]:
    """Every (kind, D, A, B[, scale type, vector size]) of MMA-Sim's Blackwell tcgen05.mma, at the
    smallest shape it offers (N = 8)."""
    out = []
    for text in isa_tcgen05mma.tcgen05mma_shape_and_type["Blackwell"]:
        shape, kind, d, a, b = text.split(".")
        if shape.startswith("m64n8k"):
            out.append({"text": text, "kind": kind.removeprefix("kind::"), "dtype": d, "atype": a, "btype": b, "m": 64, "n": 8, "k": int(shape.split("k")[1])})
    for text in isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type["Blackwell"]:
        shape, kind, block, d, a, b, s = text.split(".")
        if shape.startswith("m128n8k"):
            k = int(shape.split("k")[1])
            size = int(block.removeprefix("block"))
            out.append(
                {"text": text, "kind": kind.removeprefix("kind::"), "dtype": d, "atype": a, "btype": b, "stype": s, "block": size, "vec": k // size}
                | {"m": 128, "n": 8, "k": k}
            )
    return out


def name_of(combo: dict) -> str:
    parts = [combo["atype"], combo["btype"], combo["dtype"]]
    if "stype" in combo:
        parts += [combo["stype"], f"block{combo['block']}"]
    return ".".join(parts)


#: (matrices, dot products) per combination, by kind: the dense 16/32-bit kinds and the fp4 kinds
#: get more (few combinations), the 50 f8f6f4 and 25 mxf8f6f4 combinations fewer each.
BUDGET = {"tf32": (4, 2048), "f16": (4, 2048), "f8f6f4": (1, 320), "mxf8f6f4": (1, 320), "mxf4": (2, 1536), "mxf4nvf4": (2, 1536)}


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


def matrices(combo: dict, rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """``count`` whole instructions: the first half of moderate exponents, the rest any finite
    pattern (C likewise)."""
    ea, eb, ec = Elements(combo["atype"], rng), Elements(combo["btype"], rng), Elements(combo["dtype"], rng)
    m, n, k = combo["m"], combo["n"], combo["k"]
    out: dict[str, list] = {"A": [], "B": [], "C": [], "SA": [], "SB": []}
    for i in range(count):
        moderate = i < (count + 1) // 2
        if moderate:
            out["A"].append(ea.near((m, k)))
            out["B"].append(eb.near((k, n)))
            out["C"].append(ec.near((m, n), spread=4))
        else:
            out["A"].append(ea.finite((m, k), sub=0.1))
            out["B"].append(eb.finite((k, n), sub=0.1))
            out["C"].append(ec.finite((m, n), sub=0.05))
        if "stype" in combo:
            mode = "near" if moderate else "wide"
            out["SA"].append(scale_bytes(combo["stype"], rng, (m, combo["vec"]), mode))
            out["SB"].append(scale_bytes(combo["stype"], rng, (combo["vec"], n), mode))
    return {key: np.stack(v) for key, v in out.items() if v}


def dots(combo: dict, rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """``count`` adversarial dot products, ``count // len(CASES)`` of each class (the rest random)."""
    ea, eb, ec = Elements(combo["atype"], rng), Elements(combo["btype"], rng), Elements(combo["dtype"], rng)
    k = combo["k"]
    per = count // len(CASES)
    tags = np.concatenate([np.full(per, i) for i in range(len(CASES))] + [np.zeros(count - per * len(CASES), dtype=np.int64)])
    a = ea.near((count, k))
    b = eb.near((count, k))
    c = ec.near((count,), spread=4)
    scaled = "stype" in combo
    vec = combo.get("vec", 1)
    no_scales = np.zeros((count, vec), dtype=np.uint8)  # unscaled kinds: never stored
    sa = scale_bytes(combo["stype"], rng, (count, vec), "near") if scaled else no_scales
    sb = scale_bytes(combo["stype"], rng, (count, vec), "near") if scaled else no_scales.copy()
    for row in range(count):
        case = CASES[tags[row]]
        if case == "random":
            a[row], b[row], c[row] = ea.finite(k, sub=0.1), eb.finite(k, sub=0.1), ec.finite((), sub=0.1)
        elif case == "bits":
            a[row], b[row], c[row] = ea.bits(k), eb.bits(k), ec.bits(())
        elif case == "cancel":
            # Pairs of products that cancel exactly (a_j = -a_i, b_j = b_i), a few left over, C near
            # them or zero: the result is what the cut left of the leftovers.
            half = k // 2
            perm = rng.permutation(k)
            left, right = perm[:half], perm[half : 2 * half]
            a[row, right] = a[row, left] ^ np.uint64(1 << (ea.e + ea.m + ea.shift))
            b[row, right] = b[row, left]
            keep = rng.integers(0, 3)
            for j in rng.choice(k, size=keep, replace=False):
                a[row, j], b[row, j] = ea.finite((), sub=0.2), eb.finite((), sub=0.2)
            c[row] = ec.near((), spread=2) if rng.random() < 0.6 else ec.zero(())
        elif case == "spread":
            # One product at the top of the range, the others (and maybe C) at the bottom, or C at
            # the top and every product tiny.
            a[row], b[row] = ea.finite(k, 0, 2, sub=0.5), eb.finite(k, 0, 2, sub=0.5)
            j = rng.integers(0, k)
            if rng.random() < 0.5:
                a[row, j], b[row, j] = ea.finite((), ea.top - 3, ea.top), eb.finite((), eb.top - 3, eb.top)
                c[row] = ec.finite((), 0, 3, sub=0.5)
            else:
                c[row] = ec.finite((), ec.bias - 2, ec.top)
        elif case == "subnormal":
            a[row], b[row] = ea.subnormal(k), eb.subnormal(k)
            pick = rng.random(k)
            a[row] = np.where(pick < 0.3, ea.finite(k, 0, 2), a[row])
            c[row] = ec.subnormal(()) if rng.random() < 0.5 else ec.finite((), 0, 2, sub=0.5)
        elif case == "zeros":
            # Most products zero, the rest tiny: a zero's exponent (MMA-Sim's e_zero) may be the
            # largest of the step.
            a[row], b[row] = ea.finite(k, 0, 2, sub=0.5), eb.finite(k, 0, 2, sub=0.5)
            zero = rng.random(k) < 0.7
            a[row] = np.where(zero & (rng.random(k) < 0.5), ea.zero(k), a[row])
            b[row] = np.where(zero & (rng.random(k) < 0.5), eb.zero(k), b[row])
            c[row] = ec.zero(()) if rng.random() < 0.6 else ec.subnormal(())
        elif case == "special":
            for j in rng.choice(k, size=rng.integers(1, 3), replace=False):
                if rng.random() < 0.5:
                    a[row, j] = ea.specials(())
                else:
                    b[row, j] = eb.specials(())
                if rng.random() < 0.3:  # an infinity or a NaN times zero
                    if a[row, j] == ea.specials(()) or rng.random() < 0.5:
                        b[row, j] = eb.zero(())
                    else:
                        a[row, j] = ea.zero(())
            if rng.random() < 0.4:
                c[row] = ec.specials(())
        elif case == "overflow":
            a[row], b[row] = ea.biggest(k), eb.biggest(k)
            sign = rng.integers(0, 2)
            top = np.uint64(1 << (ea.e + ea.m + ea.shift))
            a[row] = (a[row] & ~top) | (top if sign else np.uint64(0))
            b[row] = b[row] & ~np.uint64(1 << (eb.e + eb.m + eb.shift))
            c[row] = ec.biggest(()) if rng.random() < 0.5 else ec.near(())
        elif case == "near":
            a[row], b[row], c[row] = ea.near(k, 1), eb.near(k, 1), ec.near((), 1)
        elif case == "signed-zero":
            a[row], b[row], c[row] = ea.zero(k), eb.finite(k), ec.zero(())
            if rng.random() < 0.5:
                a[row], b[row] = ea.finite(k), eb.zero(k)
        elif case == "scales" and scaled:
            a[row], b[row], c[row] = ea.finite(k, sub=0.1), eb.finite(k, sub=0.1), ec.finite((), sub=0.1)
            mode = "special" if rng.random() < 0.25 else "wide"
            sa[row] = scale_bytes(combo["stype"], rng, vec, mode)
            sb[row] = scale_bytes(combo["stype"], rng, vec, "wide")
        elif case == "zero-grid":
            # Addends whose exponents lie just below and around the exponent MMA-Sim gives a zero
            # (e_zero), of both signs, next to zero products and a zero C: whether a zero takes
            # part in the alignment decides how much of them the cut keeps.
            e_zero = E_ZERO.get(combo["kind"], E_ZERO[combo["dtype"]])
            lo_a, hi_a = 1 - ea.bias, ea.top - ea.bias
            lo_b, hi_b = 1 - eb.bias, eb.top - eb.bias
            if rng.random() < 0.5 and (not scaled or vec == 1):
                # One product just below e_zero, the others 26 to 40 binades below it and of the
                # other sign: cut at 2^(e_zero - 25) they vanish, cut 25 bits below the largest
                # live product they would take its last place.
                target = int(rng.integers(e_zero - 12, e_zero))
                shift = 0
                if scaled:  # the elements' exponents from the top of their range, the scales the rest
                    shift = target - (hi_a + hi_b)
                    first = int(np.clip(rng.integers(shift - 127, shift + 128), -127, 127))
                    sa[row, 0], sb[row, 0] = first + 127, int(np.clip(shift - first, -127, 127)) + 127
                    shift = first + int(np.clip(shift - first, -127, 127))
                small = target - rng.integers(26, 41, size=k) - shift
                x = np.clip(small - rng.integers(lo_b, hi_b + 1, size=k), lo_a, hi_a)
                a[row], b[row] = ea.with_exponent(x), eb.with_exponent(np.clip(small - x, lo_b, hi_b))
                j = int(rng.integers(0, k))
                xa = int(np.clip(target - shift - hi_b, lo_a, hi_a))
                a[row, j], b[row, j] = ea.with_exponent(np.array(xa)), eb.with_exponent(np.array(np.clip(target - shift - xa, lo_b, hi_b)))
                sign_a, sign_b = np.uint64(1 << (ea.e + ea.m + ea.shift)), np.uint64(1 << (eb.e + eb.m + eb.shift))
                b[row] &= ~sign_b
                a[row] = np.where((a[row] & sign_a) == (a[row, j] & sign_a), a[row] ^ sign_a, a[row])
                a[row, j] ^= sign_a
                zero = rng.random(k) < 0.3
                zero[j] = False
                a[row] = np.where(zero, ea.zero(k), a[row])
                c[row] = ec.zero(())
            elif scaled:
                a[row], b[row] = ea.near(k, 1), eb.near(k, 1)
                if combo["stype"] == "ue8m0":
                    for v in range(vec):
                        target = int(rng.integers(e_zero - 45, e_zero + 4))
                        first = int(rng.integers(max(-127, target - 127), min(127, target + 127) + 1))
                        sa[row, v], sb[row, v] = first + 127, target - first + 127
                a[row] = np.where(rng.random(k) < 0.5, ea.zero(k), a[row])
                c[row] = ec.zero(())
            else:
                target = rng.integers(e_zero - 40, e_zero + 4, size=k)
                x = np.clip(target - rng.integers(lo_b, hi_b + 1, size=k), lo_a, hi_a)
                a[row], b[row] = ea.with_exponent(x), eb.with_exponent(np.clip(target - x, lo_b, hi_b))
                a[row] = np.where(rng.random(k) < 0.5, ea.zero(k), a[row])
                c[row] = ec.zero(())
            if combo["dtype"] == "f16" and combo["atype"] == "f16" and combo["btype"] == "f16" and rng.random() < 0.4:
                # 2^-25 (a tie between 0 and the smallest .f16 subnormal) and 2^-48 beside zeros:
                # the cut at 2^(e_zero - 25) = 2^-46 drops 2^-48, and the tie rounds to even.
                a[row], b[row] = ea.zero(k), eb.zero(k)
                a[row, :2], b[row, :2] = (0x0C00, 0x0001), (0x0800, 0x0001)
        if scaled and case in ("random", "bits", "spread", "subnormal", "zeros", "overflow"):
            sa[row] = scale_bytes(combo["stype"], rng, vec, "wide")
            sb[row] = scale_bytes(combo["stype"], rng, vec, "wide")
    out = {"A": a[:, None, :], "B": b[:, :, None], "C": c[:, None, None], "case": tags.astype(np.uint8)}
    if scaled:
        out |= {"SA": sa[:, None, :], "SB": sb[:, :, None]}
    return out


# ---------------------------------------------------------------------------------------------
# MMA-Sim
# ---------------------------------------------------------------------------------------------


def run_mmasim(combo: dict, part: str, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """D (bits) of each instance of ``arrays`` from MMA-Sim: ``__call__`` for whole matrices,
    ``dpa`` for the dot products."""
    at, bt, dt = combo["atype"], combo["btype"], combo["dtype"]
    scaled = "stype" in combo
    op = (TCGen05MMABlockScale if scaled else TCGen05MMA)("Blackwell", combo["text"])
    packed = "packed" if combo["kind"] in ("mxf4", "mxf4nvf4") else "byte"
    if part == "dot":
        a = to_torch(at, arrays["A"][:, 0, :], packed)
        b = to_torch(bt, arrays["B"][:, :, 0], packed)
        c = to_torch(dt, arrays["C"][:, 0, 0])
        if scaled:
            d = op.dpa(a, b, c, scales_to_torch(combo["stype"], arrays["SA"][:, 0, :]), scales_to_torch(combo["stype"], arrays["SB"][:, :, 0]))
        else:
            d = op.dpa(a, b, c)
        return from_torch(dt, d)[:, None, None]
    out = []
    for i in range(len(arrays["A"])):
        a = to_torch(at, arrays["A"][i], packed)
        # B is K x N: MMA-Sim packs fp4 pairs along K, the rows of B
        b = to_torch(bt, arrays["B"][i].T, packed).T if packed == "packed" else to_torch(bt, arrays["B"][i])
        c = to_torch(dt, arrays["C"][i])
        if scaled:
            d = op(a, b, c, scales_to_torch(combo["stype"], arrays["SA"][i]), scales_to_torch(combo["stype"], arrays["SB"][i]))
        else:
            d = op(a, b, c)
        out.append(from_torch(dt, d))
    return np.stack(out)


def store(arrays: dict[str, np.ndarray], combo: dict) -> dict[str, np.ndarray]:
    """The arrays at the narrowest width their types need."""
    width = {"A": WIDTH[combo["atype"]], "B": WIDTH[combo["btype"]], "C": WIDTH[combo["dtype"]], "D": WIDTH[combo["dtype"]], "SA": 8, "SB": 8, "case": 8}
    return {key: np.ascontiguousarray(v.astype(STORE[width[key]])) for key, v in arrays.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for <kind>.npz and meta.json")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case count (a quick look: 0.1)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    files: dict[str, dict[str, np.ndarray]] = {}
    meta: dict = {
        "label": "public model (MMA-Sim), not yet silicon",
        "generator": "conformance/peers/mmasim_vectors.py",
        "mmasim": importlib.metadata.version("mmasim"),
        "torch": torch.__version__,
        "seed": SEED,
        "cases": list(CASES),
        "combinations": {},
    }
    for combo in combinations():
        name = name_of(combo)
        rng = np.random.default_rng([SEED, zlib.crc32(f"{combo['kind']}/{name}".encode())])
        n_mat, n_dot = (max(1, round(x * args.scale)) for x in BUDGET[combo["kind"]])
        parts = {"mat": matrices(combo, rng, n_mat), "dot": dots(combo, rng, n_dot)}
        target = files.setdefault(combo["kind"], {})
        entry = {"mmasim": combo["text"], "class": "TCGen05MMABlockScale" if "stype" in combo else "TCGen05MMA"}
        for part, arrays in parts.items():
            arrays["D"] = run_mmasim(combo, part, arrays)
            for key, value in store(arrays, combo).items():
                target[f"{name}/{part}.{key}"] = value
            entry[part] = int(arrays["D"].size)
        meta["combinations"][f"{combo['kind']}/{name}"] = entry
        print(f"{combo['kind']:9s} {name:28s} {entry['mat']:6d} matrix elements, {entry['dot']:5d} dot products", flush=True)
    for kind, arrays in files.items():
        np.savez_compressed(args.out / f"{kind}.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    meta["elements"] = sum(e["mat"] + e["dot"] for e in meta["combinations"].values())
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"{meta['elements']} elements of D in {len(files)} files under {args.out}")


if __name__ == "__main__":
    main()
