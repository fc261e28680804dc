"""Catalogue entries for §9.7.9, the data movement and conversion instructions (cvt, cvt.pack)."""

from __future__ import annotations

from ptxspec.spec.catalogue import Family

FAMILIES: list[Family] = []
