"""The ``spec`` profile: the PTX manual itself. It makes no choice -- every open result is the
whole set the manual allows, every rule the manual's -- so each field of the record keeps its
default. This is the default of ``ptxspec eval`` and of
:func:`~ptxspec.semantics.instructions.evaluate`, and what
:func:`~ptxspec.semantics.instructions.check` uses to decide whether an observed result conforms
to the manual."""

from __future__ import annotations

from ptxspec.profiles.record import Profile

SPEC = Profile(
    "spec",
    description="the set of results the manual allows",
    # tests/test_batch_exhaustive.py proves the numpy paths of semantics/batch.py under this profile.
    batch_paths=True,
)

PROFILE = SPEC

__all__ = ["PROFILE", "SPEC"]
