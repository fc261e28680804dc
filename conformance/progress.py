"""The one progress bar of the long commands (check-vectors, vectors, exhaustive-check, litmus-gen
--check): a line on standard error, drawn only where standard error is a terminal, so that what a
pipe or a file receives is the same with or without it."""

from __future__ import annotations

import sys
import time


def _stderr():
    """Standard error as it is now (click.testing swaps ``sys.stderr`` while a command runs)."""
    return sys.stderr


class Progress:
    """A progress bar on standard error (``what: done/total (p%) [####....] about N s left``),
    redrawn at most ten times a second; silent when standard error is not a terminal."""

    WIDTH = 24

    def __init__(self) -> None:
        self.stream = _stderr()
        self.on = self.stream.isatty()
        self.began = time.monotonic()
        self.last = 0.0
        self.drawn = 0

    def __call__(self, what: str, done: int, total: int | None = None, unit: str = "") -> None:
        now = time.monotonic()
        if not self.on or now - self.last < 0.1:
            return
        self.last = now
        if unit == "bytes":
            done_text, total_text = f"{done / 2**20:.1f}", f"{total / 2**20:.1f} MiB" if total else "MiB"
        else:
            done_text, total_text = str(done), f"{total}{' ' + unit if unit else ''}" if total else unit or "lines"
        if total:
            filled = self.WIDTH * min(done, total) // total
            left = f" about {(now - self.began) * (total - done) / done:.0f} s left" if 0 < done < total else ""
            text = f"{what}: {done_text}/{total_text} ({100 * min(done, total) // total}%) [{'#' * filled}{'.' * (self.WIDTH - filled)}]{left}"
        else:
            text = f"{what}: {done_text} {total_text}"
        self.stream.write(f"\r{text:{max(self.drawn, 60)}}")
        self.stream.flush()
        self.drawn = max(self.drawn, len(text), 60)

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0
