"""Throughput of the batched paths (ptxspec.semantics.batch) against the readable semantics.

    python bench/throughput.py [--n 1000000] [--loop-n 20000] [--profile spec|sm_90] [--seed 0]

For each form in ``FORMS`` (every fast path's kind: fma, the .f16/.f16x2 arithmetic,
mul.wide/mad.wide, and a form of each family of the exhaustive spaces: .bf16 arithmetic, min/max,
cvt from .f32 to .f16/.bf16/.tf32/integers/packed pairs) it prints:

* the batched path's results/s on ``--n`` seeded input vectors (best of ``--repeat`` runs, one
  thread: numpy's elementwise loops do not use threads), by the wall clock and per second of the
  process's CPU time (the one-core rate where other jobs share the machine);
* the readable semantics' results/s, calling ``evaluate()`` once per vector in a plain Python loop
  on the first ``--loop-n`` vectors only, and the time that loop would take for all ``--n``
  vectors extrapolated linearly from that measurement (labelled as such);
* the ratio of the two rates;
* whether the batched results are identical to the one-at-a-time results on the looped vectors
  (the bits, and the open "any NaN" lanes under the spec profile). Exit status 1 if not.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ptxspec.profiles import NAMES as PROFILE_NAMES
from ptxspec.semantics.batch import FAST_PATHS, evaluate_batch
from ptxspec.semantics.instructions import as_form, evaluate

#: Every input class, mixed into the random inputs: zeros, infinities, NaNs with payloads (quiet
#: and signalling), subnormals, 1 and its neighbours, the largest finite value, e4m3's 448.
SPECIALS = np.array(
    [
        0,
        0x80000000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0xFFC12345,
        0x7F800001,
        0x00000001,
        0x807FFFFF,
        0x00800000,
        0x3F800000,
        0xBF800001,
        0x3F7FFFFF,
        0x7F7FFFFF,
        0x43E00000,
        0x43E80000,
    ],
    dtype=np.uint32,
)


def seeded_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Binary32 bit patterns: 1/2 uniform, 1/2 with exponents near 1 (so that operands interact),
    and 1 in 64 replaced by a special value."""
    uniform = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near = (rng.integers(127 - 24, 127 + 24, n, dtype=np.uint64).astype(np.uint32) << np.uint32(23)) | (uniform & np.uint32(0x807FFFFF))
    out = np.where(rng.random(n) < 0.5, uniform, near)
    special = rng.random(n) < 1 / 64
    out[special] = rng.choice(SPECIALS, int(special.sum()))
    return out


#: .f16 input classes mixed into the random halves: zeros, infinities, NaNs, subnormals, the
#: smallest normal, 1 and neighbours, the largest finite value.
SPECIALS_F16 = np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFD55, 0x0001, 0x83FF, 0x0400, 0x3C00, 0xBC01, 0x3BFF, 0x7BFF], dtype=np.uint16)

#: The forms measured: every fast path's representative (the f16 arithmetic has 48 spellings of
#: one code path; a few stand for them), and one of each family of the exhaustive spaces (issue 6),
#: which share batch_rounding's routine.
FORMS = [
    "fma.rn.f32",
    "cvt.rn.f16.f32",
    "cvt.rn.satfinite.e4m3x2.f32",
    "add.rn.f16x2",
    "sub.rn.f16x2",
    "mul.rn.f16x2",
    "add.rn.f16",
    "mul.rn.ftz.f16",
    "add.rn.ftz.sat.f16x2",
    "mad.wide.s32",
    "mad.wide.u32",
    "mul.wide.s32",
    "mul.wide.u32",
    "add.rn.bf16",
    "sub.rn.bf16",
    "mul.rn.bf16",
    "min.f16",
    "max.NaN.xorsign.abs.bf16",
    "min.ftz.NaN.xorsign.abs.f16",
    "cvt.rz.f16.f32",
    "cvt.rm.ftz.sat.f16.f32",
    "cvt.rn.relu.satfinite.bf16.f32",
    "cvt.rna.satfinite.tf32.f32",
    "cvt.rni.s8.f32",
    "cvt.rmi.ftz.sat.u16.f32",
    "cvt.rn.f16x2.f32",
    "cvt.rz.relu.satfinite.bf16x2.f32",
    "cvt.rn.satfinite.relu.e5m2x2.f32",
]


def seeded_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    """Binary16 bit patterns: 1/2 uniform, 1/2 with exponents near 1, 1 in 64 a special value."""
    uniform = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16)
    near = (rng.integers(15 - 6, 15 + 6, n, dtype=np.uint64).astype(np.uint16) << np.uint16(10)) | (uniform & np.uint16(0x83FF))
    out = np.where(rng.random(n) < 0.5, uniform, near)
    special = rng.random(n) < 1 / 64
    out[special] = rng.choice(SPECIALS_F16, int(special.sum()))
    return out


def seeded_bf16(rng: np.random.Generator, n: int) -> np.ndarray:
    """Bfloat16 bit patterns: the top halves of :func:`seeded_f32` (its specials truncated)."""
    return (seeded_f32(rng, n) >> np.uint32(16)).astype(np.uint16)


def seeded_operand(rng: np.random.Generator, n: int, form_text: str, operand_type: str) -> np.ndarray:
    """Seeded bit patterns for one source operand of the form, by what its register holds."""
    if operand_type == "f16":
        return seeded_f16(rng, n)
    if operand_type == "b16" and form_text.endswith("bf16"):
        return seeded_bf16(rng, n)
    if operand_type == "b32" and form_text.endswith("f16x2"):
        return (seeded_f16(rng, n).astype(np.uint32) << np.uint32(16)) | seeded_f16(rng, n).astype(np.uint32)
    if operand_type in ("s32", "u32"):
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if operand_type in ("s64", "u64"):
        return rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True)
    return seeded_f32(rng, n)


def measure(text: str, n: int, loop_n: int, profile: str, repeat: int, rng: np.random.Generator) -> bool:
    form = as_form(text)
    assert text in FAST_PATHS, text
    sources = [seeded_operand(rng, n, text, o.type) for o in form.sources]

    best = best_cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = evaluate_batch(form, sources, profile)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    batched_rate = n / best

    loop_n = min(loop_n, n)
    columns = [s[:loop_n].tolist() for s in sources]
    start = time.perf_counter()
    scalar = [evaluate(form, [col[i] for col in columns], profile)[0] for i in range(loop_n)]
    loop_seconds = time.perf_counter() - start
    loop_rate = loop_n / loop_seconds

    identical = all(result.result(i) == want for i, want in enumerate(scalar))
    print(f"{text}  (profile {profile})")
    print(f"  batched:           {batched_rate:14,.0f} results/s   ({n:,} vectors in {best * 1e3:.1f} ms, best of {repeat})")
    print(
        f"  batched, CPU time: {n / max(best_cpu, 1e-9):14,.0f} results/s   (per second of this process's CPU time: one core,"
        " not slowed by other jobs on a shared machine)"
    )
    print(
        f"  one at a time:     {loop_rate:14,.0f} results/s   (evaluate() in a Python loop, measured on {loop_n:,} vectors:"
        f" {loop_seconds:.2f} s; extrapolated to {n:,}: {n / loop_rate:.0f} s)"
    )
    print(f"  ratio:             {batched_rate / loop_rate:14,.0f} x")
    print(f"  identical: {'yes' if identical else 'no'}   (batched vs one at a time on the {loop_n:,} looped vectors)")
    return identical


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="vectors per batch (default 10^6)")
    parser.add_argument("--loop-n", type=int, default=20_000, help="vectors evaluated one at a time (default 20000)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="spec")
    parser.add_argument("--repeat", type=int, default=3, help="batched runs; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    ok = True
    for text in FORMS:
        ok &= measure(text, args.n, args.loop_n, args.profile, args.repeat, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
