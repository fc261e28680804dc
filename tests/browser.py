"""A headless Chromium driven over the DevTools protocol, for the test of the built site
(tests/test_site.py): standard library only.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol commands from its file
descriptor 3 and writes replies and events to 4, each a JSON object ended by a NUL byte. One page
target is opened and attached (``flatten``), and commands go to its session.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # the machine's network is closed: no update or sync calls
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1000",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium executable (Debian's package installs /usr/bin/chromium), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; :meth:`call` sends a command to the page."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="ptxspec-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # bash puts the two pipe ends on descriptors 3 and 4, where Chromium looks for them.
        command = " ".join([executable, *FLAGS, f"--user-data-dir={self.profile}", f"3<&{to_chrome_r}", f"4>&{from_chrome_w}"])
        self.process = subprocess.Popen(
            ["bash", "-c", "exec " + command],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    # -- the protocol ----------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe (exit status {self.process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def call(self, method: str, params: dict | None = None) -> dict:
        return self._send(method, params, self.session)

    def wait_for_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    # -- what the tests use ----------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event (scripts have run)."""
        self.events.clear()
        self.call("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(
                f"{expression[:60]}...: {result['exceptionDetails'].get('text')} {result['exceptionDetails'].get('exception', {}).get('description', '')}"
            )
        return result["result"].get("value")

    def screenshot(self, x: float, y: float, width: float, height: float) -> bytes:
        """A PNG of a region of the whole page (document coordinates, CSS pixels)."""
        clip = {"x": x, "y": y, "width": max(1, width), "height": max(1, height), "scale": 1}
        data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        try:
            self._send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def file_url(path: Path) -> str:
    return path.resolve().as_uri()


# ---------------------------------------------------------------------------------------------
# PNG pixels (8-bit RGB or RGBA, as Chromium writes screenshots)
# ---------------------------------------------------------------------------------------------


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows) of an 8-bit RGB/RGBA PNG, each row its unfiltered bytes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"PNG of bit depth {depth}, colour type {colour}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for r in range(height):
        kind = raw[r * (stride + 1)]
        line = bytearray(raw[r * (stride + 1) + 1 : (r + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line[j] for k in range(0, stride, channels) for j in range(k, k + 3)))
        previous = line
    return width, height, rows


def ink(data: bytes) -> float:
    """The share of a PNG's pixels that differ from its most common colour (the background)."""
    width, height, rows = png_pixels(data)
    counts: dict[bytes, int] = {}
    for row in rows:
        for i in range(0, len(row), 3):
            pixel = row[i : i + 3]
            counts[pixel] = counts.get(pixel, 0) + 1
    return 1 - max(counts.values()) / (width * height)
