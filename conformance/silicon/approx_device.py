"""The .approx error scan on the GPU machine (numpy + CuPy only; ptxspec is not imported here).

    python3 conformance/silicon/approx_device.py run BUNDLE OUT [SUBSTRING]

BUNDLE comes from ``python -m ptxspec.conformance.silicon approx prepare BUNDLE`` (here, with
ptxas): ``approx.cubin`` (one kernel per form, assembled for sm_90a), ``approx-plan.json`` (per
form: its kernel, operand layout, input space, and the manual's bound, as numbers for ranking) and
``approx-sample-inputs.npz`` (the seeded sample inputs per form). For every form this

* scans its input space in chunks of 2^28: every f32 bit pattern (``all32``), every upper word of
  the 1.11.20 forms with a hashed lower word (``upper32``), or 2^28 operands from a counter-based
  hash of the index (``pairs``: division; ``f64``: rsqrt.approx.f64). The hash is splitmix64's
  finaliser; :func:`ptxspec.conformance.silicon.approx.hashed_operands` is the same in numpy;
* computes a float64 reference of the exact result on the GPU (CUDA's double-precision sin, cos,
  log2, exp2, tanh, sqrt and division; 1/sqrt for rsqrt: within about 1 ulp of binary64, far below the
  errors measured) and, per input, the error in the manual's metric divided by the bound (``key``),
  whether the result lies outside the bound (ulp forms: more than k steps from the reference
  rounded to nearest), and the error in ulps of the result format (``ulp``);
* keeps the ``K`` inputs with the largest ``key`` and the ``K_ULP`` with the largest ``ulp``
  (index, operands, output, GPU key and ulp), the count of inputs outside the bound and the count
  of special-value mismatches (a NaN or infinity where the reference disagrees);
* runs the sample inputs (and the 16-bit tables: every input of the scalar forms, and 2^16 words
  whose two half-words each take every value for the x2 forms) and keeps the outputs, with the SHA-256 of the inputs (which the CPU regenerates).

Outputs under OUT: ``approx-extremes.npz``, ``approx-sample.npz``, ``meta-approx.json`` (GPU,
driver, CUDA runtime, ptxas version from the bundle, per-form counts and timings). The CPU side
(``approx.py``) recomputes every kept error exactly with MPFR; the GPU reference only ranks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CHUNK = 1 << 28

# f32 <-> f64 by integer arithmetic: CuPy's kernels flush f32 subnormals (a conversion
# (double)float or (float)double of a subnormal gives zero there), which the first H100 scan
# showed as millions of false "outside" results around subnormal inputs and outputs.
_PREAMBLE = r"""
__device__ double f32_value(unsigned int u) {
  unsigned int e = (u >> 23) & 255u, m = u & 0x7FFFFFu;
  double v;
  if (e == 255u) v = m ? __longlong_as_double(0x7FF8000000000000ll) : __longlong_as_double(0x7FF0000000000000ll);
  else if (e == 0u) v = ldexp((double)m, -149);
  else v = ldexp((double)(m | 0x800000u), (int)e - 150);
  return (u >> 31) ? -v : v;
}

__device__ unsigned int f32_round_nearest(double r) {  // the f32 bits of r rounded to nearest even
  unsigned int sign = (__double_as_longlong(r) < 0) ? 0x80000000u : 0u;
  double a = fabs(r);
  if (isnan(r)) return 0x7FC00000u;
  if (a == 0.0) return sign;
  int e = ilogb(a);
  if (e > 127) return sign | 0x7F800000u;
  if (e < -126) e = -126;
  unsigned long long n = (unsigned long long)rint(ldexp(a, 23 - e));  // exact scaling, one rounding
  if (e == -126 && n < (1ull << 23)) return sign | (unsigned int)n;  // subnormal (or zero)
  return sign | (((unsigned int)(e + 127) << 23) + (unsigned int)(n - (1ull << 23)));  // carries into the exponent
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
"""

# Operands of the hashed spaces: u1 = mix64(2k), u2 = mix64(2k + 1) for the global index k.
_OPERANDS = r"""
unsigned long long u1 = mix64(2ull * k), u2 = mix64(2ull * k + 1ull);
if (space == 0) {            // pairs: a uniform; b uniform, or (3 in 4) its exponent near a's
  unsigned int x = (unsigned int)u1, y = (unsigned int)u2;
  if ((u1 >> 32) & 3ull) {
    int ea = (int)((x >> 23) & 255u);
    int eb = ea + (int)((u1 >> 34) & 63ull) - 32;
    eb = eb < 0 ? 0 : (eb > 254 ? 254 : eb);
    y = (y & 0x807FFFFFu) | ((unsigned int)eb << 23);
  }
  a = x; b = y;
} else if (space == 1) {     // f64: uniform bits, positive 7 times in 8
  a = ((u2 & 7ull) != 0ull) ? (u1 & 0x7FFFFFFFFFFFFFFFull) : u1; b = 0;
} else {                     // upper32: upper word k, lower word hashed
  a = (k << 32) | (u1 & 0xFFFFFFFFull); b = 0;
}
"""

# fn: 0 sin, 1 cos, 2 lg2, 3 ex2, 4 rcp, 5 sqrt, 6 rsqrt, 7 tanh, 8 div, 9 rcp (1.11.20), 10 rsqrt (1.11.20)
# metric: 0 absolute (bound b1; sin/cos: b1 on [-2pi, 2pi], b2 on [-100pi, 100pi]), 1 relative,
# 2 ulps (k = b1), 3 lg2 (absolute on (0.5, 2), relative elsewhere)
_ERROR = r"""
const double TWO_PI = 6.283185307179586, HUNDRED_PI = 314.1592653589793;
double x, y = 0.0, dv;
int p, emin, emax;
if (wide) {
  x = __longlong_as_double((long long)a); dv = __longlong_as_double((long long)d);
  if (fn >= 9) { x = __longlong_as_double((long long)(a & 0xFFFFFFFF00000000ull)); p = 21; }
  else p = 53;
  emin = -1022; emax = 1023;
} else {
  x = f32_value((unsigned int)a); y = f32_value((unsigned int)b);
  dv = f32_value((unsigned int)d);
  p = 24; emin = -126; emax = 127;
}
double tiny = ldexp(1.0, emin);
if (ftz) {
  if (fabs(x) < tiny) x = copysign(0.0, x);
  if (fabs(y) < tiny) y = copysign(0.0, y);
}
double ref;
switch (fn) {
  case 0: ref = sin(x); break;
  case 1: ref = cos(x); break;
  case 2: ref = log2(x); break;
  case 3: ref = exp2(x); break;
  case 4: case 9: ref = 1.0 / x; break;
  case 5: ref = sqrt(x); break;
  case 6: case 10: ref = 1.0 / sqrt(x); break;  // not CUDA's rsqrt(): for .f64 it is this very instruction
  case 7: ref = tanh(x); break;
  default: ref = x / y; break;
}
key = 0.0; ulp = 0.0; outside = 0; special = 0;
double maxfinite = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
// sin/cos beyond 100 pi: no bound; div.approx with |b| > 2^126 (b2): the manual's own rule
bool excluded = (fn <= 1 && fabs(x) > HUNDRED_PI) || isinf(x) || isnan(x)
  || (fn == 8 && (isinf(y) || y == 0.0 || (b2 > 0.0 && fabs(y) > b2)));
if (isnan(ref) || isnan(dv)) {
  if (isnan(ref) != isnan(dv)) { special = 1; key = 1e300; ulp = 1e300; outside = 1; }
} else if (isinf(dv) && fabs(ref) > maxfinite && signbit(dv) == signbit(ref)) {
  // overflow: infinity is the rounding of a reference beyond the format
} else if (isinf(ref) || isinf(dv)) {
  if (!(isinf(ref) && dv == ref) && !excluded) { special = 1; key = 1e300; ulp = 1e300; outside = 1; }
} else if (ftz && dv == 0.0 && fabs(ref) < tiny) {
  // .ftz flushes a subnormal result to zero
} else if (!excluded) {
  double err = fabs(dv - ref);
  int e = (ref == 0.0) ? emin : ilogb(ref);
  if (e < emin) e = emin;
  ulp = err / ldexp(1.0, e - (p - 1));
  if (metric == 0) {
    double bound = (fn <= 1 && fabs(x) > TWO_PI) ? b2 : b1;
    key = err / bound;
    outside = key > 1.0;
  } else if (metric == 1 || (metric == 3 && !(x > 0.5 && x < 2.0))) {
    key = (ref == 0.0) ? 0.0 : err / fabs(ref) / b1;
    outside = key > 1.0;
  } else if (metric == 3) {
    key = err / b1;
    outside = key > 1.0;
  } else {
    // ulps: k steps from the reference rounded to nearest in the result format
    long long od, on;
    if (!wide) {
      unsigned int bd = (unsigned int)d, bn = f32_round_nearest(ref);
      od = (bd & 0x80000000u) ? -(long long)(bd & 0x7FFFFFFFu) : (long long)bd;
      on = (bn & 0x80000000u) ? -(long long)(bn & 0x7FFFFFFFu) : (long long)bn;
    } else {
      unsigned long long br = (unsigned long long)__double_as_longlong(ref);
      unsigned long long rounded = (br + 0x7FFFFFFFull + ((br >> 32) & 1ull)) >> 32;
      unsigned long long bd = ((unsigned long long)d) >> 32;
      od = (bd & 0x80000000ull) ? -(long long)(bd & 0x7FFFFFFFull) : (long long)bd;
      on = (rounded & 0x80000000ull) ? -(long long)(rounded & 0x7FFFFFFFull) : (long long)rounded;
    }
    long long steps = od > on ? od - on : on - od;
    key = ulp / b1;
    outside = (double)steps > b1;
  }
}
"""


def _kernels():
    import cupy as cp

    operands = cp.ElementwiseKernel("uint64 k, int32 space", "uint64 a, uint64 b", _OPERANDS, "approx_operands", preamble=_PREAMBLE)
    error = cp.ElementwiseKernel(
        "T a, T b, T d, int32 fn, int32 metric, int32 ftz, int32 wide, float64 b1, float64 b2",
        "float64 key, float64 ulp, int8 outside, int8 special",
        _ERROR,
        "approx_error",
        preamble=_PREAMBLE,
    )
    return operands, error


def _top(values, k: int, threshold: float):
    """Indices (into this chunk) of the up to k largest values above threshold."""
    import cupy as cp

    candidates = cp.flatnonzero(values > threshold)
    if candidates.size > k:
        order = cp.argsort(-values[candidates])[:k]
        candidates = candidates[order]
    return candidates


class Extremes:
    """The k largest values seen so far, with their rows."""

    def __init__(self, k: int):
        self.k = k
        self.rows: list[tuple] = []

    @property
    def threshold(self) -> float:
        return self.rows[-1][0] if len(self.rows) >= self.k else 0.0

    def merge(self, rows: list[tuple]) -> None:
        self.rows = sorted(self.rows + rows, key=lambda r: -r[0])[: self.k]


def _launch(fn, n: int, args) -> None:
    fn(((n + 255) // 256,), (256,), (*args, np.uint32(n)))


def scan(mod, kernels, form: dict, k: int, k_ulp: int) -> tuple[dict, dict]:
    import cupy as cp

    operands, error = kernels
    wide = form["width"] == 64
    dtype = cp.uint64 if wide else cp.uint32
    space, total = form["space"], form["count"]
    kernel = mod.get_function(form["kernel"])
    by_key, by_ulp = Extremes(k), Extremes(k_ulp)
    outside = special = 0
    start = time.time()
    binary = form["arity"] == 2
    for base in range(0, total, CHUNK):
        n = min(CHUNK, total - base)
        if space == "all32":
            a = cp.arange(base, base + n, dtype=cp.uint64).astype(cp.uint32)
            b = cp.zeros(n, dtype=cp.uint32)
        else:
            index = cp.arange(base, base + n, dtype=cp.uint64)
            a64, b64 = operands(index, np.int32({"pairs": 0, "f64": 1, "upper32": 2}[space]))
            del index
            a = a64 if wide else a64.astype(cp.uint32)
            b = b64.astype(dtype)
            del a64, b64
        d = cp.empty(n, dtype=dtype)
        _launch(kernel, n, (a, b, d) if binary else (a, d))
        key, ulp, out, spec = error(
            a, b, d, np.int32(form["fn"]), np.int32(form["metric"]), np.int32(form["ftz"]), np.int32(wide), np.float64(form["b1"]), np.float64(form["b2"])
        )
        outside += int(out.sum(dtype=cp.int64))
        special += int(spec.sum(dtype=cp.int64))
        for store, values in ((by_key, key), (by_ulp, ulp)):
            idx = _top(values, store.k, store.threshold)
            if idx.size:
                k_, u_, a_, b_, d_ = (cp.asnumpy(x[idx]) for x in (key, ulp, a, b, d))
                index = cp.asnumpy(idx).astype(np.uint64) + np.uint64(base)
                primary = k_ if store is by_key else u_
                store.merge(
                    [
                        (float(primary[j]), int(index[j]), int(a_[j]), int(b_[j]) if binary else 0, int(d_[j]), float(k_[j]), float(u_[j]))
                        for j in range(idx.size)
                    ]
                )
        del a, b, d, key, ulp, out, spec
    cp.cuda.runtime.deviceSynchronize()
    summary = {
        "text": form["text"],
        "space": space,
        "scanned": total,
        "outside": outside,
        "special": special,
        "gpu_max_key": by_key.rows[0][0] if by_key.rows else 0.0,
        "gpu_max_ulp": by_ulp.rows[0][0] if by_ulp.rows else 0.0,
        "seconds": round(time.time() - start, 2),
    }
    np_dtype = np.uint64 if wide else np.uint32
    arrays = {}
    for tag, store in (("e", by_key), ("u", by_ulp)):
        rows = store.rows
        arrays[f"{tag}_index"] = np.array([r[1] for r in rows], dtype=np.uint64)
        arrays[f"{tag}_a"] = np.array([r[2] for r in rows], dtype=np_dtype)
        arrays[f"{tag}_b"] = np.array([r[3] for r in rows], dtype=np_dtype)
        arrays[f"{tag}_d"] = np.array([r[4] for r in rows], dtype=np_dtype)
        arrays[f"{tag}_key"] = np.array([r[5] for r in rows], dtype=np.float64)
        arrays[f"{tag}_ulp"] = np.array([r[6] for r in rows], dtype=np.float64)
    return summary, arrays


def sample(mod, form: dict, inputs: dict) -> tuple[dict, list[str]]:
    """The outputs of the form's sample inputs (``s{j}_d``), and the SHA-256 of each input column
    (the CPU regenerates the inputs and checks them against these)."""
    import hashlib

    import cupy as cp

    j = form["index"]
    cols = [inputs[f"s{j}_a"]] + ([inputs[f"s{j}_b"]] if form["arity"] == 2 else [])
    dev = [cp.asarray(c) for c in cols]
    n = len(cols[0])
    d = cp.empty(n, dtype=cols[0].dtype)
    _launch(mod.get_function(form["kernel"]), n, (*dev, d))
    return {f"s{j}_d": cp.asnumpy(d)}, [hashlib.sha256(np.ascontiguousarray(c).tobytes()).hexdigest() for c in cols]


def _nvidia_smi() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return f"nvidia-smi not run: {e}"


def run(bundle: Path, out: Path, only: str | None = None) -> None:
    import cupy as cp

    plan = json.loads((bundle / "approx-plan.json").read_text())
    with np.load(bundle / "approx-sample-inputs.npz") as z:
        inputs = {name: z[name] for name in z.files}
    mod = cp.RawModule(path=str(bundle / "approx.cubin"))
    kernels = _kernels()
    extremes: dict[str, np.ndarray] = {}
    samples: dict[str, np.ndarray] = {}
    summaries = []
    sample_digests: dict[str, list[str]] = {}
    started = time.time()
    for form in plan["forms"]:
        if only and only not in form["text"]:
            continue
        j = form["index"]
        outputs, digests = sample(mod, form, inputs)
        samples.update(outputs)
        sample_digests[str(j)] = digests
        if form["space"] != "table":
            summary, arrays = scan(mod, kernels, form, plan["k"], plan["k_ulp"])
            extremes.update({f"f{j}_{name}": v for name, v in arrays.items()})
            summary["index"] = j
            summaries.append(summary)
            print(json.dumps(summary), flush=True)
    props = cp.cuda.runtime.getDeviceProperties(0)
    meta = {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver_version": cp.cuda.runtime.driverGetVersion(),
        "cuda_runtime_version": cp.cuda.runtime.runtimeGetVersion(),
        "nvidia_smi": _nvidia_smi(),
        "assembler": plan["assembler"],
        "cupy": cp.__version__,
        "campaign": "approx campaign, round approx: the .approx error scan and 16-bit tables (conformance/silicon/approx.py, approx_device.py)",
        "reference": 2,  # f32 <-> f64 by integer arithmetic; 1/sqrt for rsqrt
        "k": plan["k"],
        "k_ulp": plan["k_ulp"],
        "chunk": CHUNK,
        "forms": [f["text"] for f in plan["forms"]],
        "scans": summaries,
        "sample_input_sha256": sample_digests,
        "seconds": round(time.time() - started, 1),
    }
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "approx-extremes.npz", **extremes)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    np.savez_compressed(out / "approx-sample.npz", **samples)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool
    (out / "meta-approx.json").write_text(json.dumps(meta, indent=1))
    print(f"scanned {len(summaries)} forms on {meta['gpu']} in {meta['seconds']} s")


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT [SUBSTRING]`` (see the module docstring); ``argv`` without the program name."""
    if len(argv) not in (3, 4) or argv[0] != "run":
        print(__doc__)
        return 2
    bundle = Path(argv[1])
    for name in ("approx.cubin", "approx-plan.json", "approx-sample-inputs.npz"):
        if not (bundle / name).is_file():
            print(f"error: {bundle / name}: no such file (prepare the bundle first)", file=sys.stderr)
            return 2
    run(bundle, Path(argv[2]), argv[3] if len(argv) == 4 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
