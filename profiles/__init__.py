"""Profiles: which of the PTX manual's open choices an implementation makes.

Where the manual fixes a result, every profile gives it. Where the manual leaves it open (an
unspecified NaN, the error bound of an ``.approx`` instruction, the accumulation of mma and wgmma,
a value "machine-specific" or "undefined"), the spec-level semantics returns the set of allowed
results, and a profile pins the one a chip produces -- or records where the chip departs from the
manual.

Each profile is one module or package here holding one :class:`~ptxspec.profiles.record.Profile`
record (its ``PROFILE``):

* :mod:`ptxspec.profiles.spec` -- ``spec``, the manual: no choices;
* :mod:`ptxspec.profiles.sm_90` -- ``sm_90``, NVIDIA H100/H200, measured on silicon; every choice
  names the recordings in ``conformance/data/sm_90/`` that pin it;
* :mod:`ptxspec.profiles.sm_100` -- ``sm_100``, NVIDIA Blackwell tcgen05.mma numerics: a public
  model (MMA-Sim), not yet silicon; the vectors MMA-Sim wrote are in ``conformance/data/sm_100/``.

A new chip is a new package beside ``sm_90`` and its name in :data:`NAMES`.

A chip's record holds values of the semantics (mma datapaths, error bounds), so its package
imports :mod:`ptxspec.semantics`, which imports this package for the record type: the chips'
packages are therefore imported on first use (:func:`profile_named`, :data:`PROFILES`, or
``from ptxspec.profiles.sm_90 import SM_90``), not when this package is.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ptxspec.profiles.record import MatrixKey, Profile
from ptxspec.profiles.spec import SPEC

#: Every profile's name; ``ptxspec.profiles.<name>`` holds its record as ``PROFILE``.
NAMES: tuple[str, ...] = ("spec", "sm_90", "sm_100")

_LOADED: dict[str, Profile] = {"spec": SPEC}


def profile_named(name: str | Profile) -> Profile:
    """The profile called ``name`` (a :class:`Profile` is returned as it is)."""
    if isinstance(name, Profile):
        return name
    profile = _LOADED.get(name)
    if profile is None:
        if name not in NAMES:
            from ptxspec.spec.errors import PtxSpecError

            raise PtxSpecError(f"unknown profile {name!r}; known: {', '.join(sorted(NAMES))}")
        profile = _LOADED[name] = importlib.import_module(f"{__name__}.{name}").PROFILE
    return profile


class _Registry(Mapping[str, Profile]):
    """Name -> profile over :data:`NAMES`, each loaded on first use."""

    def __getitem__(self, name: str) -> Profile:
        if name not in NAMES:
            raise KeyError(name)
        return profile_named(name)

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def __repr__(self) -> str:
        return f"PROFILES({', '.join(NAMES)})"


#: Every profile by name (a read-only mapping; iterating it gives the names without loading).
PROFILES: Mapping[str, Profile] = _Registry()


def __getattr__(attribute: str) -> Profile:
    # ``from ptxspec.profiles import SM_90``: the chip's package, loaded on first use (see above).
    if attribute == "SM_90":
        return profile_named("sm_90")
    if attribute == "SM_100":
        return profile_named("sm_100")
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


__all__ = ["NAMES", "PROFILES", "SPEC", "MatrixKey", "Profile", "profile_named"]
