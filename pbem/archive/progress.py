"""A progress bar for long archive runs: drawn only on a terminal, silent in pipes, cron and tests.

A bar in a log file is noise (one carriage-return line per update), so nothing is written unless the
stream is a TTY. Redraws are throttled: a run of 100 000 small steps must not spend its time printing.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

_WIDTH = 30
_INTERVAL = 0.1  # seconds between redraws


class Progress:
    """``with Progress(total, "exporting") as bar: ... bar.advance()``; ``total`` 0 means unknown."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.done = 0
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw >= _INTERVAL or self.done == self.total:
            self._draw(now)

    def line(self) -> str:
        """The bar as text (without the carriage return), e.g. for tests."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = self.done / elapsed
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            filled = int(fraction * _WIDTH)
            bar = "#" * filled + "-" * (_WIDTH - filled)
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            return (f"{self.label} [{bar}] {self.done}/{self.total} {fraction:4.0%} "
                    f"{rate:.0f}/s eta {left:.0f}s")
        return f"{self.label} {self.done} {rate:.0f}/s"

    def _draw(self, now: float) -> None:
        self._last_draw = now
        self._drawn = True
        self.stream.write("\r" + self.line() + "\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        """Finish the bar's line so the summary that follows starts on a fresh one."""
        if self.enabled and self._drawn:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


__all__ = ["Progress"]
