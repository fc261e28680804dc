"""The SASS ptxas made of a bundle's kernels, recorded on the GPU machine.

This machine's CUDA toolkit has ptxas but no ``cuobjdump``; the GPU machine has both. The listing
is evidence for a datapath that ptxas builds in software rather than a tensor-core instruction
(m8n8k4 .f16 on sm_90: docs/mma.rst, profiles/sm_90/mma.py ``M8N8K4_F32``/``_F16``), so it is
recorded like any other result and never edited by hand::

    python -m ptxspec.conformance.silicon mma prepare-sass BUNDLE     # here: cubin + sass-plan.json
    python3 conformance/silicon/sass_device.py run BUNDLE OUT         # on the GPU machine

``run`` writes ``OUT/sass-KERNEL.txt`` (``cuobjdump -sass -fun KERNEL CUBIN``, unchanged) for
every kernel the plan names and ``OUT/sass-meta.json`` (the cubin's SHA-256, the cuobjdump
version, the kernels). The standard library only.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

CUOBJDUMP_PLACES = ("/usr/local/cuda/bin/cuobjdump", "/usr/local/cuda-13.0/bin/cuobjdump")


class Refused(Exception):
    """What the command line reports in one line, with exit code 2."""


def cuobjdump() -> str:
    """The cuobjdump of this machine; exit 2 with one line when there is none."""
    found = shutil.which("cuobjdump") or next((p for p in CUOBJDUMP_PLACES if Path(p).exists()), None)
    if found is None:
        raise Refused("no cuobjdump on this machine (it runs on the GPU machine)")
    return found


def record(cubin: Path, out: Path, kernels: list[str]) -> dict:
    """Write the SASS of each kernel of ``cubin`` and the meta file under ``out``; return the meta."""
    tool = cuobjdump()
    out.mkdir(parents=True, exist_ok=True)
    for kernel in kernels:
        listing = subprocess.run([tool, "-sass", "-fun", kernel, str(cubin)], capture_output=True, text=True, check=False)
        if listing.returncode != 0 or f"Function : {kernel}" not in listing.stdout:
            raise Refused(f"{cubin}: no kernel {kernel} ({listing.stderr.strip() or 'empty listing'})")
        (out / f"sass-{kernel}.txt").write_text(listing.stdout)
    version = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False).stdout.strip().splitlines()
    meta = {
        "cubin": cubin.name,
        "cubin_sha256": hashlib.sha256(cubin.read_bytes()).hexdigest(),
        "cuobjdump": version[-1] if version else "",
        "kernels": kernels,
    }
    (out / "sass-meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main(argv: list[str]) -> int:
    """``run BUNDLE OUT`` (see the module docstring); ``argv`` without the program name."""
    if len(argv) != 3 or argv[0] != "run":
        print("usage: sass_device.py run BUNDLE OUT", file=sys.stderr)
        return 2
    bundle, out = Path(argv[1]), Path(argv[2])
    try:
        if not (bundle / "sass-plan.json").is_file():
            raise Refused(f"{bundle / 'sass-plan.json'}: no such plan")
        plan = json.loads((bundle / "sass-plan.json").read_text())
        cubin = bundle / plan["cubin"]
        if not cubin.is_file():
            raise Refused(f"{cubin}: no such cubin")
        meta = record(cubin, out, plan["kernels"])
    except Refused as refusal:
        print(f"sass_device: {refusal}", file=sys.stderr)
        return 2
    print(f"recorded the SASS of {len(meta['kernels'])} kernels of {cubin} ({meta['cuobjdump']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
