"""§9.7.9 Data movement and conversion instructions: cvt (§9.7.9.21) and cvt.pack (§9.7.9.22)."""

from __future__ import annotations
