"""Catalogue entries (being written)."""

from __future__ import annotations

from ptxspec.spec.catalogue import Family

FAMILIES: list[Family] = []
