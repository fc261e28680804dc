"""The approximate instructions of §9.7.3, given by the manual's error bounds as allowed sets."""

from __future__ import annotations
