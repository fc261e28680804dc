"""What every silicon campaign shares: ptxas, bundles, recordings and the second chip's digests.

A campaign records PTX instruction forms on an H100/H200 in two steps. ``prepare`` (here, with
ptxas) writes a *bundle*: the kernels, assembled for sm_90a into one cubin, a plan that says what
each kernel reads and writes, and the inputs that are stored rather than regenerated. The
campaign's device script (``*_device.py``: numpy and CuPy only, no ptxspec) runs the bundle on the
GPU machine and writes the *recording*, which is copied unchanged into ``conformance/data/sm_90/``
(recorded data is ground truth: it is re-recorded, never edited). The replay reads it back and
compares it with the semantics under the ``sm_90`` profile.

A campaign is one or more *rounds*; a round is a description (its forms, the names of its files,
how its outputs are stored) and the campaign's functions take the round. The rounds, by the stem
of their files in ``conformance/data/sm_90/``:

* float-cvt (:mod:`.float_cvt_campaign`): ``float-cvt``, 381 forms of §9.7.3 and cvt (§9.7.9.21);
* catalogue (:mod:`.catalogue_campaign`): ``integer-half-video-warp`` (§9.7.1-2, §9.7.4-8, prmt,
  video, warp collectives), ``fma-oob-probes`` (the OOB-NaN of fma.oob) and ``remaining-forms``
  (every other sm_90a form outside video and the matrix chapters);
* mma (:mod:`.mma_campaign`, §9.7.14): ``mma``, ``mma-sp``, ``mma-more``, ``mma-sp-more``;
* wgmma (:mod:`.wgmma_campaign`, §9.7.15): ``wgmma``, ``wgmma-more``, ``wgmma-pruned``;
* movement (:mod:`.movement_campaign`): ``movement``, ldmatrix, stmatrix and movmatrix (§9.7.14.5.15-17);
* atomic, memory, tma, async (:mod:`.atomic_campaign`, :mod:`.memory_campaign`,
  :mod:`.tma_campaign`, :mod:`.async_campaign`): the instructions of memory on memory images;
* approx (:mod:`.approx`): ``approx``, the error scan of the .approx forms and their 16-bit tables;
* exhaustive (:mod:`.exhaustive`): ``exhaustive``, every input of the small forms, as digests.

``python -m ptxspec.conformance.silicon CAMPAIGN COMMAND ...`` (:mod:`.__main__`) is the one
command line. This module holds the plumbing the campaigns share: ptxas on each kernel alone and
on the combined module (:func:`assemble_each`, :func:`assemble_module`), the output-file policy
(:func:`split_files`), bundle and recording files, the digests that stand for a second chip's
run (:func:`array_digests`), and :class:`CampaignError`, which the command line reports in one
line with exit status 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

from ptxspec.spec.errors import PtxSpecError

#: The recordings of the sm_90 profile (H100 and H200).
DATA = Path(__file__).resolve().parent.parent / "data" / "sm_90"
#: The start of every campaign's PTX module (§11: PTX 8.7, sm_90a, 64-bit addresses).
HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"

T = TypeVar("T")


class CampaignError(PtxSpecError):
    """A campaign command that cannot go on (ptxas refused the combined module, a plan needs more
    files than come back from the device, an option out of range): one line, exit status 2."""


# ---------------------------------------------------------------------------------------------
# ptxas
# ---------------------------------------------------------------------------------------------


def kernel_name(prefix: str, name: str) -> str:
    """A PTX entry name for a form's kernel: ``prefix`` and the form's name, each character that
    is not a letter or digit an underscore."""
    return prefix + "".join(c if c.isalnum() else "_" for c in name)


def assemble(ptx: str, ptxas: str = "ptxas", arch: str = "sm_90a") -> tuple[bool, str, bytes]:
    """``ptxas -arch=ARCH`` on ``ptx``: (accepted, ptxas's message, cubin)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "k.ptx"), Path(tmp, "k.cubin")
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(out)], capture_output=True, text=True)
        if proc.returncode != 0:  # the message without the temporary folder: same input, same bytes
            return False, proc.stderr.strip().replace(str(src), src.name), b""
        return True, "", out.read_bytes()


def ptxas_version(ptxas: str = "ptxas") -> str:
    """The release line of ``ptxas --version`` (recorded in each campaign's plan or meta)."""
    lines = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return next((line for line in lines if "release" in line), lines[-1] if lines else "unknown")


def assemble_each(items: Sequence[T], ptx: Callable[[T], str], ptxas: str = "ptxas") -> tuple[list[T], list[tuple[T, str]]]:
    """ptxas on each item's module ``ptx(item)`` alone, in parallel: the items it accepted, and
    (item, ptxas's message) for those it refused, both in the order given. A campaign lists the
    refused ones in its plan and leaves them out of the combined module."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        verdicts = list(pool.map(lambda item: assemble(ptx(item), ptxas), items))
    accepted = [item for item, (ok, _, _) in zip(items, verdicts) if ok]
    refused = [(item, message) for item, (ok, message, _) in zip(items, verdicts) if not ok]
    return accepted, refused


def assemble_module(source: str, ptxas: str = "ptxas") -> bytes:
    """The cubin of the combined module; :class:`CampaignError` with ptxas's message if the kernels
    that each assembled alone do not assemble together."""
    ok, message, cubin = assemble(source, ptxas)
    if not ok:
        raise CampaignError(f"the combined module did not assemble: {message}", where="ptxas")
    return cubin


# ---------------------------------------------------------------------------------------------
# Bundle and recording files
# ---------------------------------------------------------------------------------------------


def split_files(sizes: Iterable[int], limit: int, most: int) -> list[int]:
    """The output file of each plan entry (``sizes``: its bytes): a new file where the next entry
    would take the current one past ``limit`` bytes (the device machine returns files of at most
    16 MiB). :class:`CampaignError` if that makes more than ``most`` files."""
    files, file, used = [], 0, 0
    for size in sizes:
        if used and used + size > limit:
            file, used = file + 1, 0
        used += size
        files.append(file)
    if file >= most:
        raise CampaignError(f"{file + 1} output files: more than the {most} that come back from the device", where="plan")
    return files


def write_json(path: Path, content: object, indent: int = 1) -> None:
    path.write_text(json.dumps(content, indent=indent))


def read_json(path: Path) -> dict:
    """A plan or meta file (a missing one raises OSError naming it: the command line's one line)."""
    return json.loads(Path(path).read_text())


def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` into one compressed ``.npz``, in the order given."""
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds clashes with allow_pickle: bool


def load_arrays(paths: Iterable[Path]) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` files ``paths``, by name."""
    arrays: dict[str, np.ndarray] = {}
    for path in paths:
        with np.load(path) as z:
            arrays.update({k: z[k] for k in z.files})
    return arrays


# ---------------------------------------------------------------------------------------------
# A second chip's run, kept as digests
# ---------------------------------------------------------------------------------------------

#: The fields of a recording's meta that name the chip and its software: what a second chip's
#: digest record keeps of its run.
CHIP_FIELDS = ("gpu", "compute_capability", "driver_version", "cuda_runtime_version", "nvidia_smi", "assembler")


def chip_meta(meta: dict) -> dict:
    """The chip's fields of a recording's meta: at its top level, or under ``device``."""
    return {**meta, **meta.get("device", {})}


def chip_fields(meta: dict) -> dict:
    """:data:`CHIP_FIELDS` of a recording's meta."""
    meta = chip_meta(meta)
    return {k: meta.get(k) for k in CHIP_FIELDS}


def file_digests(directory: Path) -> dict[str, str]:
    """File name -> SHA-256 of every ``.npz`` and ``.json`` file of ``directory``."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(directory.iterdir()) if f.suffix in (".npz", ".json")}


def recorded_array_digests(directory: Path, pattern: str) -> dict[str, str]:
    """Array name -> SHA-256 of its bytes, over the ``.npz`` files of ``directory`` matching ``pattern``."""
    out = {}
    for f in sorted(directory.glob(pattern)):
        with np.load(f) as z:
            out.update({k: hashlib.sha256(np.ascontiguousarray(z[k]).tobytes()).hexdigest() for k in z.files})
    return dict(sorted(out.items()))


def array_digests(directory: Path, meta_name: str, pattern: str) -> dict:
    """A second chip's run of a round, kept as digests instead of data: the chip's meta (from
    ``meta_name``), the SHA-256 of every file, and of every array (its bytes in order) of the files
    matching ``pattern``. ``arrays`` is compared with :func:`recorded_array_digests` of the first
    chip's files (tests/test_second_chip.py)."""
    meta = read_json(directory / meta_name)
    return {**chip_fields(meta), "meta": meta_name, "pattern": pattern, "files": file_digests(directory), "arrays": recorded_array_digests(directory, pattern)}
