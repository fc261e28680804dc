"""The exhaustive campaign: every input of the small forms on silicon, checked by digest.

Two spaces, enumerated from the catalogue (every form that ``form.admits((8, 7), "sm_90a")``):

* ``binary16``: add, sub, mul, min and max on scalar ``.f16``/``.bf16`` with two sources. For
  add/sub/mul only the spellings with an explicit rounding modifier (``add.rn.f16``; ``add.f16``
  is the same operation); for min/max every qualifier combination (``.ftz``, ``.NaN``,
  ``.xorsign.abs``). Index ``i`` in ``[0, 2^32)`` gives ``a = i >> 16`` and ``b = i & 0xFFFF``.
* ``cvt32``: cvt with one ``.f32`` source into ``.f16``, ``.bf16``, ``.tf32``, ``.s8``, ``.u8``,
  ``.s16``, ``.u16`` (every rounding, ``.ftz``, ``.sat``, ``.relu`` and ``.satfinite`` combination),
  and the packed forms of two ``.f32`` sources (``.f16x2``, ``.bf16x2``, ``.e4m3x2``, ``.e5m2x2``)
  with both sources ``i``. Index ``i`` is the f32 bit pattern.

The result ``r_i`` is the destination register's bits zero-extended to 64 (an 8-bit integer
destination lives in a 16-bit register, extended by its signedness as §6.5.1 says). The GPU runs
all 2^32 indices of every form; the repository keeps, per form, the digest of each chunk of 2^20
results (:mod:`ptxspec.conformance.silicon.exhaustive_device` defines it and says why a wrong
result always shows); ``ptxspec exhaustive-check`` recomputes the digests from the semantics
(profile ``sm_90``) and compares.

Commands (the one command line, :mod:`ptxspec.conformance.silicon.__main__`; the check is also
``ptxspec exhaustive-check``)::

    python -m ptxspec.conformance.silicon exhaustive prepare BUNDLE [--forms GLOB]   # here: ptxas -arch=sm_90a
    python3 conformance/silicon/exhaustive_device.py run BUNDLE OUT                  # there: numpy + CuPy
    python -m ptxspec.conformance.silicon exhaustive verify [--forms GLOB] [--chunks all|N|A:B] [--seed S] [--workers N] [--scheduler ADDR] [--resume DIR] [--gpu h100|h200|all]
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import itertools
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np

from ptxspec.conformance import campaign_engine
from ptxspec.conformance.progress import Progress
from ptxspec.conformance.silicon import exhaustive_device as device
from ptxspec.conformance.silicon.exhaustive_device import CHUNK_BITS, CHUNKS
from ptxspec.spec.catalogue import CATALOGUE, Form
from ptxspec.conformance.silicon.campaign import HEADER, assemble, assemble_each, assemble_module, ptxas_version  # noqa: F401  (assemble: part of this module's API)
from ptxspec.spec.errors import PtxSpecError
from ptxspec.spec.types import register_bits

DATA = Path(__file__).resolve().parent.parent / "data" / "sm_90"
GPUS = ("h100", "h200")
SPACES = ("binary16", "cvt32")


# ---------------------------------------------------------------------------------------------
# The plan: the forms of both spaces, from the catalogue
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExhaustiveForm:
    """One form of a space. ``width`` is the bits of the register the GPU writes (16 or 32);
    ``bits`` those of the destination type in the semantics (8 for .s8/.u8)."""

    text: str
    space: str

    @property
    def form(self) -> Form:
        from ptxspec.semantics.instructions import as_form

        return as_form(self.text)

    @property
    def bits(self) -> int:
        return register_bits(self.form.destinations[0].type)

    @property
    def width(self) -> int:
        return 16 if self.bits <= 16 else 32

    @property
    def signed(self) -> bool:
        return self.form.destinations[0].type.startswith("s")


def _family_forms(key: str, restrict: dict[str, tuple[str, ...]]) -> list[Form]:
    """Every form of family ``key`` whose slots take the tokens ``restrict`` allows (all tokens of
    the other slots; optional slots may also be left out) that sm_90a admits."""
    family = CATALOGUE.family(key)
    choices = []
    for slot in family.slots:
        tokens = tuple(t for t in slot.tokens if t in restrict.get(slot.name, slot.tokens))
        choices.append(tokens if slot.required else ("", *tokens))
    out = []
    for combo in itertools.product(*choices):
        text = ".".join([family.opcode, *(t for t in combo if t)])
        try:
            form = CATALOGUE.parse(text)
        except PtxSpecError:
            continue
        if form.family.key == key and form.admits((8, 7), "sm_90a"):
            out.append(form)
    return out


#: The narrow destinations of the scalar cvt32 forms and the packed ones sm_90 has.
CVT32_DESTINATIONS = ("f16", "bf16", "tf32", "s8", "u8", "s16", "u16")
CVT32_PACKED = ("f16x2", "bf16x2", "e4m3x2", "e5m2x2")


def plan() -> list[ExhaustiveForm]:
    """Every form of both spaces, in a fixed order (binary16 first)."""
    return list(_plan())


@functools.cache
def _plan() -> tuple[ExhaustiveForm, ...]:
    forms: list[ExhaustiveForm] = []
    for op in ("add", "sub", "mul"):
        # add.f16 computes add.rn.f16 (§9.7.4.1: "the default value of the rounding modifier is
        # .rn"; without it the optimizer may fuse mul/add): only the explicit spellings.
        explicit = [f for f in _family_forms(f"{op}.h", {"type": ("f16", "bf16")}) if f.get("rnd") is not None]
        forms += [ExhaustiveForm(f.text, "binary16") for f in explicit]
    for op in ("min", "max"):
        forms += [ExhaustiveForm(f.text, "binary16") for f in _family_forms(f"{op}.h", {"type": ("f16", "bf16")})]
    forms += [ExhaustiveForm(f.text, "cvt32") for f in _family_forms("cvt", {"dtype": CVT32_DESTINATIONS, "atype": ("f32",)})]
    for key in ("cvt.x2.f32", "cvt.f8x2.f32"):
        forms += [ExhaustiveForm(f.text, "cvt32") for f in _family_forms(key, {"dtype": CVT32_PACKED, "atype": ("f32",)})]
    return tuple(forms)


def plan_by_text() -> dict[str, ExhaustiveForm]:
    # Through the module attribute, so that a test can substitute the plan.
    return {f.text: f for f in plan()}


def sources(space: str, start: int, count: int) -> list[np.ndarray]:
    """The source operands of indices ``[start, start + count)`` (the definitions above)."""
    i = np.arange(start, start + count, dtype=np.uint64)
    if space == "binary16":
        return [(i >> np.uint64(16)).astype(np.uint16), (i & np.uint64(0xFFFF)).astype(np.uint16)]
    return [i.astype(np.uint32)]


# ---------------------------------------------------------------------------------------------
# Kernels: the form applied to operands made from the global index, no input arrays
# ---------------------------------------------------------------------------------------------


def kernel(entry: ExhaustiveForm, name: str) -> str:
    """One ``.entry`` ``name(out, base, n)``: a grid-stride loop over ``k`` in ``[0, n)`` that
    makes the operands of index ``i = base + k`` and stores the destination register at
    ``out[k]`` (16 or 32 bits). Operands sit in bit-size registers, which §5.2.1 makes compatible
    with every fundamental type of the same size."""
    form = entry.form
    if entry.space == "binary16":
        make = ["  shr.u32 %r10, %r9, 16;", "  cvt.u16.u32 %h1, %r10;", "  cvt.u16.u32 %h2, %r9;"]
        operands = "%h1, %h2"
    else:
        make = []
        operands = ", ".join(["%r9"] * len(form.sources))
    dest = "%h3" if entry.width == 16 else "%r11"
    body = [
        "  .reg .pred %p<4>;",
        "  .reg .b16 %h<8>;",
        "  .reg .b32 %r<16>;",
        "  .reg .b64 %rd<8>;",
        "  mov.u32 %r1, %tid.x;",
        "  mov.u32 %r2, %ctaid.x;",
        "  mov.u32 %r3, %ntid.x;",
        "  mov.u32 %r4, %nctaid.x;",
        "  mad.lo.u32 %r5, %r2, %r3, %r1;",
        "  mul.lo.u32 %r6, %r3, %r4;",
        "  ld.param.u32 %r7, [base];",
        "  ld.param.u32 %r8, [n];",
        "  ld.param.u64 %rd1, [out];",
        "  cvta.to.global.u64 %rd1, %rd1;",
        "  setp.ge.u32 %p0, %r5, %r8;",
        "  @%p0 bra DONE;",
        "LOOP:",
        "  add.u32 %r9, %r7, %r5;",
        *make,
        f"  {entry.text} {dest}, {operands};",
        f"  mul.wide.u32 %rd2, %r5, {entry.width // 8};",
        "  add.u64 %rd3, %rd1, %rd2;",
        f"  st.global.b{entry.width} [%rd3], {dest};",
        "  add.u32 %r5, %r5, %r6;",
        "  setp.lt.u32 %p1, %r5, %r8;",
        "  @%p1 bra LOOP;",
        "DONE:",
        "  ret;",
    ]
    params = "  .param .u64 out,\n  .param .u32 base,\n  .param .u32 n"
    return f".visible .entry {name}(\n{params}\n)\n{{\n" + "\n".join(body) + "\n}\n"


def module(named: list[tuple[str, ExhaustiveForm]]) -> str:
    return HEADER + "\n".join(kernel(e, name) for name, e in named)


def kernel_name(index: int) -> str:
    return f"x{index:04d}"


#: The chunks of the device run's self-check: around 1.0 (a = 0x3c00.., x = 0x3f800000..) and in
#: the infinities and NaNs (a = 0x7c00.., x = 0x7f800000..).
SELF_CHECK_CHUNKS = {"binary16": (0x3C0, 0x7C0), "cvt32": (0x3F8, 0x7F8)}
SELF_CHECK_FORMS = 6


def expected_digests(entries: list[ExhaustiveForm]) -> dict[str, dict[str, str]]:
    """A few chunk digests from the semantics, for the device run to compare at once: up to
    :data:`SELF_CHECK_FORMS` forms (half of each space) that have a fast batched path (the slow loop takes minutes per
    chunk). Digests are kept as decimal strings (JSON numbers lose bits beyond 2^53)."""
    from ptxspec.semantics.batch import has_fast_path

    fast: list[ExhaustiveForm] = []
    seen = set()
    for e in entries:  # one form per opcode and result type, for variety
        key = (e.form.opcode, result_kind(e))
        room = sum(f.space == e.space for f in fast) < SELF_CHECK_FORMS // 2
        if key not in seen and room and has_fast_path(e.text):
            seen.add(key)
            fast.append(e)
    return {e.text: {str(c): str(semantic_digest(e, c)[0]) for c in SELF_CHECK_CHUNKS[e.space]} for e in fast}


def prepare(bundle: Path, pattern: str | None = None, ptxas: str = "ptxas") -> dict:
    """Here: assemble each form of :func:`plan` alone (a form ptxas refuses is listed with its
    message), then every accepted one into ``exhaustive.cubin``; write the plan JSON."""
    entries = [e for e in plan() if pattern is None or fnmatch.fnmatchcase(e.text, pattern)]
    named = [(kernel_name(i), e) for i, e in enumerate(entries)]
    accepted, refused = assemble_each(named, lambda ne: module([ne]), ptxas)
    rejected = {e.text: message for (_, e), message in refused}
    cubin = assemble_module(module(accepted), ptxas)
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / device.CUBIN_FILE).write_bytes(cubin)
    (bundle / "exhaustive.ptx").write_text(module(accepted))
    content = {
        "ptxas": ptxas_version(ptxas),
        "forms": [{"kernel": n, "text": e.text, "space": e.space, "width": e.width} for n, e in accepted],
        "rejected": rejected,
        "expected": expected_digests([e for _, e in accepted]),
    }
    (bundle / device.PLAN_FILE).write_text(json.dumps(content, indent=1))
    print(
        f"{len(accepted)} forms assembled ({sum(e.space == 'binary16' for _, e in accepted)} binary16, "
        f"{sum(e.space == 'cvt32' for _, e in accepted)} cvt32), {len(rejected)} rejected by ptxas"
    )
    for text, message in rejected.items():
        print(f"  rejected {text}: {message.splitlines()[0] if message else ''}")
    return content


# ---------------------------------------------------------------------------------------------
# The semantics side of the digests
# ---------------------------------------------------------------------------------------------


def semantic_results(entry: ExhaustiveForm, start: int, count: int, operands: list[np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """The results of indices ``[start, start + count)`` under the ``sm_90`` profile, as the
    register the GPU writes (uint64), and how many of them the profile leaves open (an allowed
    set rather than bits: those hold one member, and the digest cannot vouch for them).
    ``operands``: :func:`sources` of the same indices, when the caller has them already."""
    from ptxspec.semantics.batch import evaluate_batch

    srcs = sources(entry.space, start, count) if operands is None else operands
    srcs = srcs * len(entry.form.sources) if entry.space == "cvt32" else srcs
    result = evaluate_batch(entry.form, srcs, "sm_90")
    bits = result.bits.astype(np.uint64)
    if entry.bits < entry.width and entry.signed:
        # §6.5.1: a narrow result is extended to the destination register width by its type.
        top = np.uint64(1 << (entry.bits - 1))
        bits = np.where(bits & top, bits | np.uint64(((1 << entry.width) - 1) ^ ((1 << entry.bits) - 1)), bits)
    return bits, int(result.open_mask().sum())


def semantic_digest(entry: ExhaustiveForm, chunk: int, chunk_bits: int = CHUNK_BITS) -> tuple[int, int]:
    """(digest of chunk ``chunk`` from the semantics, results left open in it)."""
    size = 1 << chunk_bits
    bits, open_count = semantic_results(entry, chunk * size, size)
    return int(device.digests_of(np, bits, chunk * size, chunk_bits)[0]), open_count


def chunk_task(chunk: int, forms: Sequence[Sequence[str]]) -> list[tuple[str, int, int, int, float]]:
    """The semantic digests of one chunk for several forms ((text, space) pairs): the chunk's
    weights and operands are made once and shared. Per form: (text, chunk, digest, open results,
    seconds)."""
    size = 1 << CHUNK_BITS
    start = chunk * size
    w = device.weights(np, start, size)
    operands = {space: sources(space, start, size) for space in {space for _, space in forms}}
    out = []
    for text, space in forms:
        began = time.perf_counter()
        bits, open_count = semantic_results(ExhaustiveForm(text, space), start, size, operands[space])
        digest = int(device.chunk_digests(np, bits, w)[0])
        out.append((text, chunk, digest, open_count, time.perf_counter() - began))
    return out


def inverse_mod_2_64(w: np.ndarray) -> np.ndarray:
    """The inverse modulo 2^64 of each odd uint64 in ``w``: Newton's iteration ``x <- x(2 - wx)``
    doubles the correct low bits, and ``x = w`` is right to 3 bits (odd squares are 1 mod 8)."""
    x = w.copy()
    for _ in range(5):  # 3 -> 6 -> 12 -> 24 -> 48 -> 96 bits
        x = x * (np.uint64(2) - w * x)
    return x


def single_difference(difference: int, results: np.ndarray, w: np.ndarray, width: int) -> list[tuple[int, int]]:
    """Where one wrong result would explain a chunk's digest ``difference`` (GPU minus semantics,
    mod 2^64): the offsets ``k`` in the chunk, with the GPU value ``r'_k``, for which
    ``(r'_k - r_k) * w_k = difference`` and ``r'_k`` fits the register. With exactly one wrong
    result this names it (its ``delta = difference / w_k`` is unique); with several, a false
    candidate needs a 64-bit product to land in a ``width``-bit range: about ``2^(20+width-64)``."""
    delta = np.uint64(difference % (1 << 64)) * inverse_mod_2_64(w)
    gpu = results + delta
    hits = np.flatnonzero(gpu < np.uint64(1) << np.uint64(width))
    return [(int(k), int(gpu[k])) for k in hits]


# ---------------------------------------------------------------------------------------------
# Showing values
# ---------------------------------------------------------------------------------------------


def _float(kind: str, bits: int) -> str:
    import ml_dtypes

    dtype = {
        "f16": (np.uint16, np.float16),
        "bf16": (np.uint16, ml_dtypes.bfloat16),
        "f32": (np.uint32, np.float32),
        "e4m3": (np.uint8, ml_dtypes.float8_e4m3fn),
        "e5m2": (np.uint8, ml_dtypes.float8_e5m2),
    }[kind]
    return repr(float(np.array([bits], dtype=dtype[0]).view(dtype[1])[0]))


def describe(kind: str, bits: int) -> str:
    """``0x3c00 (1.0)``: a register value with its meaning in ``kind`` (for messages only)."""
    if kind in ("f16", "bf16", "f32", "e4m3", "e5m2"):
        return f"{bits:#0{2 + _bits(kind) // 4}x} ({_float(kind, bits)})"
    if kind == "tf32":
        return f"{bits:#010x} ({_float('f32', bits)})"
    if kind.endswith("x2"):
        lane = kind[:-2]
        size = 16 if lane in ("f16", "bf16") else 8
        hi, lo = bits >> size, bits & ((1 << size) - 1)
        return f"{bits:#0{2 + size // 2}x} ({_float(lane, hi)}, {_float(lane, lo)})"
    if kind[0] in "su":
        size = 16  # the register
        value = bits - (1 << size) if kind[0] == "s" and bits >> (size - 1) & 1 else bits
        return f"{bits:#06x} ({value})"
    return hex(bits)


def _bits(kind: str) -> int:
    return {"f16": 16, "bf16": 16, "f32": 32, "e4m3": 8, "e5m2": 8}[kind]


def operand_text(entry: ExhaustiveForm, index: int) -> str:
    if entry.space == "binary16":
        kind = "bf16" if "bf16" in entry.form else "f16"
        return f"a={describe(kind, index >> 16)}, b={describe(kind, index & 0xFFFF)}"
    return f"a={describe('f32', index)}"


def result_kind(entry: ExhaustiveForm) -> str:
    form = entry.form
    return form.get("dtype") or form.get("type") or "b16"


# ---------------------------------------------------------------------------------------------
# Recordings and the check
# ---------------------------------------------------------------------------------------------


def load_recordings(directory: Path, gpu: str) -> dict[str, tuple[dict, dict[str, np.ndarray]]]:
    """``{gpu: (meta, {form text: uint64[4096]})}`` for the recordings present."""
    out = {}
    for name in GPUS if gpu == "all" else (gpu,):
        npz, meta = directory / f"exhaustive-{name}.npz", directory / f"meta-exhaustive-{name}.json"
        if npz.exists() and meta.exists():
            with np.load(npz) as z:
                out[name] = (json.loads(meta.read_text()), {k: z[k] for k in z.files})
            info, digests = out[name]
            if info.get("chunk_bits", CHUNK_BITS) != CHUNK_BITS or any(d.shape != (CHUNKS,) or d.dtype != np.uint64 for d in digests.values()):
                raise PtxSpecError(f"not a recording of {CHUNKS} uint64 chunk digests of 2^{CHUNK_BITS} results per form", where=str(npz))
    if not out:
        raise PtxSpecError(f"no exhaustive recording for --gpu {gpu} in {directory} (exhaustive-<gpu>.npz and meta-exhaustive-<gpu>.json)", where="--gpu")
    return out


def sample_chunks(text: str, count: int, seed: int) -> list[int]:
    """A deterministic sample of ``count`` chunks of form ``text``."""
    return sorted(random.Random(f"{seed}:{text}").sample(range(CHUNKS), count))


def _parse_chunks(value: str) -> int | range | None:
    """``all`` (None), ``N`` (a seeded sample of N chunks per form) or ``A:B`` (chunks A to B-1 of
    every form: a full check split over several machines or runs)."""
    if value == "all":
        return None
    if value.isdigit() and 1 <= int(value) <= CHUNKS:
        return int(value)
    start, colon, stop = value.partition(":")
    if colon and start.isdigit() and stop.isdigit() and 0 <= int(start) < int(stop) <= CHUNKS:
        return range(int(start), int(stop))
    raise PtxSpecError(f"{value!r} is not 'all', a chunk count in 1..{CHUNKS} or a range A:B within 0:{CHUNKS}", where="--chunks")


def _describe_chunks(count: int | range | None, seed: int) -> str:
    if count is None:
        return f"all {CHUNKS}"
    if isinstance(count, range):
        return f"chunks {count.start}..{count.stop - 1} of the {CHUNKS}"
    return f"{count} sampled (seed {seed})"


@dataclass
class FormCheck:
    text: str
    chunks: int
    matched: dict[str, int]
    mismatched: dict[str, list[int]]
    open_results: int
    #: Time spent on this form's chunks (semantics and digest), summed over the processes.
    seconds: float
    #: Chunks where the recordings of two GPUs disagree.
    gpus_disagree: list[int]
    semantic: dict[int, int]


def check_forms(
    wanted: dict[str, list[int]], recordings: dict, *, workers: int = 0, scheduler: str | None = None, store: Path | None = None, progress=None
) -> dict[str, FormCheck]:
    """Recompute the digests of ``wanted`` (form text -> chunks) and compare them with every
    recording of each form. Work is grouped by chunk, so that a chunk's weights and operands are
    made once for all the forms that need it; the groups are the tasks of the campaign engine
    (:func:`ptxspec.conformance.campaign_engine.run`: here, on ``workers`` processes of a
    LocalCluster, or on the cluster of ``scheduler``; with ``store`` a killed check resumes),
    ``progress`` is called with (groups done, groups)."""
    by_text = plan_by_text()
    groups: dict[int, list[tuple[str, str]]] = {}
    for text, chunks in wanted.items():
        for c in chunks:
            groups.setdefault(c, []).append((text, by_text[text].space))
    tasks = [
        campaign_engine.Task(f"exhaustive-{c}-{hashlib.sha256(repr(forms).encode()).hexdigest()[:16]}", f"{__name__}:chunk_task", (c, forms))
        for c, forms in sorted(groups.items())
    ]
    results = campaign_engine.run(tasks, workers=workers, scheduler=scheduler, store=store, progress=progress).values()
    semantic: dict[str, dict[int, int]] = {t: {} for t in wanted}
    open_results = dict.fromkeys(wanted, 0)
    seconds = dict.fromkeys(wanted, 0.0)
    for group in results:
        for text, chunk, digest, open_count, spent in group:  # type: ignore[attr-defined]
            semantic[text][chunk] = digest
            open_results[text] += open_count
            seconds[text] += spent
    checks = {}
    for text, chunks in wanted.items():
        matched, mismatched = {}, {}
        recorded = {gpu: digests[text] for gpu, (_, digests) in recordings.items() if text in digests}
        for gpu, digests in recorded.items():
            bad = [c for c in chunks if int(digests[c]) != semantic[text][c]]
            matched[gpu], mismatched[gpu] = len(chunks) - len(bad), bad
        disagree: list[int] = []
        if len(recorded) > 1:
            first, *rest = recorded.values()
            disagree = sorted({int(c) for other in rest for c in np.flatnonzero(first != other)})
        checks[text] = FormCheck(text, len(chunks), matched, mismatched, open_results[text], seconds[text], disagree, semantic[text])
    return checks


def check_form(entry: ExhaustiveForm, chunks: list[int], recordings: dict, **engine) -> FormCheck:
    """:func:`check_forms` for one form."""
    return check_forms({entry.text: chunks}, recordings, **engine)[entry.text]


def diagnose(entry: ExhaustiveForm, chunk: int, recorded_digest: int, gpu: str, shown: int = 5) -> list[str]:
    """What can be said about a mismatching chunk without the GPU's values: the single result
    that would explain the digest difference (exact when only one result differs), and how to
    re-record the chunk's values to name every differing index."""
    size = 1 << CHUNK_BITS
    start = chunk * size
    results, _ = semantic_results(entry, start, size)
    w = device.weights(np, start, size)
    semantic = int(device.chunk_digests(np, results, w)[0])
    difference = (recorded_digest - semantic) % (1 << 64)
    lines = [f"  chunk {chunk} (indices {start:#010x}..{start + size - 1:#010x}), {gpu}: recorded digest {recorded_digest:#018x}, semantics {semantic:#018x}"]
    candidates = single_difference(difference, results, w, entry.width)
    kind = result_kind(entry)
    if len(candidates) == 1:
        k, gpu_value = candidates[0]
        lines.append(f"    if exactly one result of the chunk differs, it is index {start + k:#010x}: {operand_text(entry, start + k)}")
        lines.append(f"      {gpu}: {describe(kind, gpu_value)}   semantics (sm_90): {describe(kind, int(results[k]))}")
    else:
        why = "no single wrong result explains the difference" if not candidates else f"{len(candidates)} indices could each explain it alone"
        lines.append(f"    several results differ ({why}); the digest cannot name them. The semantics' first results of the chunk:")
        for k in range(min(shown, size)):
            lines.append(f"      semantics at {start + k:#010x}: {operand_text(entry, start + k)} -> {describe(kind, int(results[k]))}")
    lines.append("    to name every differing index, record the chunk's values on a GPU and pass them with --values:")
    lines.append(f"      python3 conformance/silicon/exhaustive_device.py values BUNDLE OUT --form {entry.text} --chunk {chunk}")
    return lines


def compare_values(path: Path, shown: int = 10) -> tuple[int, list[str]]:
    """Compare a chunk's recorded values (``exhaustive_device.py values``) with the semantics:
    (differing results, report lines naming the first ``shown``)."""
    with np.load(path) as z:
        text, chunk, values = str(z["form"]), int(z["chunk"]), z["results"].astype(np.uint64)
    entry = plan_by_text().get(text)
    if entry is None:
        raise PtxSpecError(f"form {text!r} is not in the exhaustive plan", where=str(path))
    size = 1 << CHUNK_BITS
    if len(values) != size:
        raise PtxSpecError(f"{len(values)} values, expected {size}", where=str(path))
    start = chunk * size
    results, open_count = semantic_results(entry, start, size)
    bad = np.flatnonzero(values != results)
    kind = result_kind(entry)
    lines = [f"{text} chunk {chunk}: {len(bad)} of {size} results differ" + (f" ({open_count} left open by the profile)" if open_count else "")]
    for k in bad[:shown]:
        lines.append(
            f"  {start + int(k):#010x}: {operand_text(entry, start + int(k))}  GPU {describe(kind, int(values[k]))}  semantics {describe(kind, int(results[k]))}"
        )
    return len(bad), lines


@click.command("exhaustive-check")
@click.option("--forms", "pattern", default="*", show_default=True, help="Glob over the instruction texts (add.rn.*, cvt.r?.f16.f32).")
@click.option(
    "--chunks",
    "chunks_text",
    default="4",
    show_default=True,
    help="N: a seeded sample of N of the 4096 chunks per form (the default: under a minute); A:B: chunks A to B-1 of every form; "
    "all: every chunk of every form -- about 6.4 CPU-hours, so give --workers, --scheduler and --resume.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the chunk sample.")
@campaign_engine.options
@click.option("--gpu", type=click.Choice(["h100", "h200", "all"]), default="all", show_default=True, help="Which recording(s) to compare with.")
@click.option(
    "--data",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DATA,
    show_default=False,
    help="Directory of the recordings (default: conformance/data/sm_90).",
)
@click.option(
    "--values",
    "values_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A chunk's values recorded by 'exhaustive_device.py values': name every differing result.",
)
def exhaustive_check_command(
    pattern: str,
    chunks_text: str,
    seed: int,
    workers: int | None,
    scheduler: str | None,
    store: Path | None,
    gpu: str,
    data_dir: Path,
    values_file: Path | None,
) -> None:
    """Recompute the per-chunk digests of the exhaustive spaces from the semantics (profile
    sm_90) and compare them with the H100/H200 recordings.

    \b
    Each form was run on the GPU over all 2^32 indices (binary16: a = i >> 16, b = i & 0xffff;
    cvt32: the f32 bit pattern i); the recording keeps one digest per chunk of 2^20 results.
    Exit status 0 when every checked chunk matches, 1 when one does not (or the GPUs disagree,
    or the profile leaves results open), 2 on bad input.
    """
    if values_file is not None:
        if not values_file.exists():
            raise PtxSpecError("no such file", where=str(values_file))
        differing, lines = compare_values(values_file)
        for line in lines:
            click.echo(line)
        sys.exit(1 if differing else 0)
    count = _parse_chunks(chunks_text)
    recordings = load_recordings(data_dir, gpu)
    by_text = plan_by_text()
    recorded_texts = list(dict.fromkeys(t for _, (_, digests) in recordings.items() for t in digests))
    texts = [t for t in recorded_texts if fnmatch.fnmatchcase(t, pattern)]
    if not texts:
        raise PtxSpecError(f"no recorded form matches {pattern!r} ({len(recorded_texts)} recorded)", where="--forms")
    unknown = [t for t in texts if t not in by_text]
    if unknown:
        raise PtxSpecError(f"recorded forms that are not in the exhaustive plan: {unknown[:5]}", where=str(data_dir))
    gpus = ", ".join(f"{name}: {meta.get('gpu', '?')}" for name, (meta, _) in recordings.items())
    click.echo(f"exhaustive check of {len(texts)} forms against {gpus}; {_describe_chunks(count, seed)} chunks of 2^{CHUNK_BITS} per form")
    began = time.perf_counter()
    summary = _check_all(texts, by_text, count, seed, recordings, campaign_engine.settings(workers, scheduler, store))
    click.echo(f"{len(texts)} forms, {summary['chunks']} chunk digests compared, {summary['mismatched']} mismatched, {time.perf_counter() - began:.1f} s wall")
    sys.exit(1 if summary["failed"] else 0)


def _check_all(texts: list[str], by_text: dict, count: int | range | None, seed: int, recordings: dict, engine: dict) -> dict:
    """Check every form, then print a line per form and the diagnosis of its first mismatching
    chunks; the totals and whether anything failed."""

    def chosen(text: str) -> list[int]:
        if count is None:
            return list(range(CHUNKS))
        return list(count) if isinstance(count, range) else sample_chunks(text, count, seed)

    wanted = {t: chosen(t) for t in texts}
    bar = Progress()
    checks = check_forms(wanted, recordings, **engine, progress=lambda done, total: bar("chunks evaluated", done, total))
    bar.close()
    failed = False
    totals = {"chunks": 0, "mismatched": 0}
    for text in texts:
        entry, result = by_text[text], checks[text]
        parts = [
            f"{g} {result.matched[g]}/{result.chunks} match" + (f" ({len(result.mismatched[g])} mismatched)" if result.mismatched[g] else "")
            for g in result.matched
        ]
        extra = ""
        if result.open_results:
            extra += f", {result.open_results} results left open by the profile"
        if result.gpus_disagree:
            extra += f", GPUs disagree on {len(result.gpus_disagree)} chunks (first {result.gpus_disagree[0]})"
        click.echo(f"{text:<36} {'; '.join(parts)}{extra}  [{result.seconds:.1f} s]")
        totals["chunks"] += result.chunks * len(result.matched)
        for g, bad in result.mismatched.items():
            totals["mismatched"] += len(bad)
            for c in bad[:2]:
                for line in diagnose(entry, c, int(recordings[g][1][text][c]), g):
                    click.echo(line)
            if len(bad) > 2:
                click.echo(f"  ... and {len(bad) - 2} more mismatching chunks on {g}: {bad[2:12]}")
        failed |= any(result.mismatched.values()) or bool(result.gpus_disagree) or result.open_results > 0
    return {**totals, "failed": failed}
