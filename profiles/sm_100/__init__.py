"""The ``sm_100`` profile: NVIDIA Blackwell (B200) tensor-core numerics -- a **public model
(MMA-Sim), not yet silicon**.

There is no Blackwell GPU in this project. Until there is, this profile pins the one thing the
public bit-accurate model of Blackwell tensor-core arithmetic, MMA-Sim (microsoft/MMA-Sim, MIT;
PyPI ``mmasim``, validated by its authors on Blackwell silicon), gives: the datapath of
``tcgen05.mma`` per kind and types (:mod:`.tcgen05`). Every other open choice stays at the
manual (the spec-level sets): nothing of sm_90's measurements carries over. The evidence is the
vectors MMA-Sim wrote into ``conformance/data/sm_100/mmasim/`` (``conformance/peers/mmasim_vectors.py``),
replayed by ``tests/test_sm100_mmasim.py``; docs/sm100-profile.rst describes both.
"""

from __future__ import annotations

from ptxspec.profiles.record import Profile
from ptxspec.profiles.sm_100 import tcgen05

SM_100 = Profile(
    "sm_100",
    description=f"NVIDIA Blackwell (sm_100) tcgen05.mma numerics: {tcgen05.LABEL} (MMA-Sim {tcgen05.MMASIM_VERSION})",
    # --- tcgen05.mma (tests/test_sm100_mmasim.py) ---
    tcgen05_datapaths=tcgen05.DATAPATHS,
    evidence={"tcgen05_datapaths": tcgen05.EVIDENCE},
)

PROFILE = SM_100

__all__ = ["PROFILE", "SM_100"]
