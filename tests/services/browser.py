"""Headless Chromium driven over the DevTools protocol, for what its command line cannot do.

``chromium --headless --window-size`` will not lay a page out narrower than 500 px, so a phone's
360 px is emulated with ``Emulation.setDeviceMetricsOverride``, and the page is measured with
``Runtime.evaluate``. The protocol runs over ``--remote-debugging-pipe`` (file descriptors 3 and
4, messages ended by a NUL byte): no port, no websocket library, nothing to leak.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.services.requirements import missing


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        missing("headless Chromium is not installed (Debian package: chromium)")
    return found


def _above(fd: int, low: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium; ``open`` a page at a given viewport, then ``evaluate`` and
    ``screenshot`` it. Use as a context manager: the browser is closed at the end."""

    def __init__(self, profile: Path, timeout: float = 60.0):
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()
        # far from 3 and 4, which the child is about to take over
        commands_r, replies_w = (_above(fd, 10) for fd in (commands_r, replies_w))
        args = [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}", "--remote-debugging-pipe",
                "about:blank"]
        # the shell puts the two pipes on the descriptors Chromium reads and writes, then execs it
        script = f'exec "$@" 3<&{commands_r} 4>&{replies_w} {commands_r}<&- {replies_w}>&-'
        self._proc = subprocess.Popen(["/bin/bash", "-c", script, "chromium", *args],
                                      pass_fds=(commands_r, replies_w),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_r)
        os.close(replies_w)
        self._timeout = timeout
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self._session: str | None = None

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            self._send("Browser.close", session=False)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._commands, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)

    # --- the protocol ------------------------------------------------------------------------------
    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self._timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def _send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
              ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self._session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_for(self, event: str) -> None:
        while True:
            for i, seen in enumerate(self._events):
                if seen.get("method") == event:
                    del self._events[: i + 1]
                    return
            self._events.append(self._read())

    # --- pages ---------------------------------------------------------------------------------------
    def open(self, url: str, width: int = 360, height: int = 780) -> None:
        """Load ``url`` in a fresh tab whose viewport is ``width`` x ``height`` CSS pixels (a
        phone: touch, mobile layout), and wait for its load event."""
        if self._session is None:
            target = self._send("Target.createTarget", {"url": "about:blank"}, session=False)
            attached = self._send("Target.attachToTarget", {"targetId": target["targetId"],
                                                            "flatten": True}, session=False)
            self._session = attached["sessionId"]
            self._send("Page.enable")
        self._send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
        # by way of a blank page, so that a URL differing only in its #fragment loads afresh
        for target in ("about:blank", url):
            self._events.clear()
            self._send("Page.navigate", {"url": target})
            self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self._send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """The whole page (not only the viewport) as a PNG."""
        width, height = self.evaluate("[document.documentElement.scrollWidth,"
                                      " document.documentElement.scrollHeight]")
        shot = self._send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


__all__ = ["Browser", "chromium_path"]
