"""Catalogue entries for the approximate forms of §9.7.3 (.approx and div.full)."""

from __future__ import annotations

from ptxspec.spec.catalogue import Family

FAMILIES: list[Family] = []
