"""Semantic functions (being written)."""

from __future__ import annotations
