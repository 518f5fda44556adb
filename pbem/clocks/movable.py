"""The movable clock, for end-to-end checks and demos: a running ``pbem serve`` whose time an
administrator moves forward, so that deadlines, banks running out, weekends and reminders can be
shown by mail in seconds against the real daemon.

Only with ``[server] clock = "movable"`` in pbem.toml (never the default; ``pbem check-config``
warns). The offset from the system clock lives in one small file in the data directory,
``DATA_DIR/clock-offset`` (seconds, as text), because every process of the server reads the time:
the SMTP listener (when a mail arrived), the processor process (moves), the scheduler (deadlines).
Each reads the file again when it changed (one ``stat`` per reading of the time), so ``pbem admin
clock +2d`` takes effect everywhere at once; it then wakes the server through its wake socket so that
the scheduler runs at the new time. The offset only moves forward: what the server did at a time
cannot be undone by going back before it (a smaller offset written into the file by hand is
ignored). The system clock under it is followed as it is, also when it steps back (an NTP
correction): standing still until the system clock caught up again, as this clock once did, stopped
every deadline, reminder and digest for as long as the step, stamped all mail of that while with
one instant (so the per-minute limit of a sender's mail never ended), and left the commands started
meanwhile (``pbem deliver``) an hour apart from the server. The server copes with its clock going
back (README, "When things around pbem fail").
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from datetime import datetime, timedelta
from pathlib import Path

from pbem.clock import Clock, SystemClock
from pbem.config import Config

OFFSET_FILE = "clock-offset"
MOVABLE = "movable"
_SHIFT = re.compile(r"^\+?\s*((?:\d+(?:\.\d+)?\s*[wdhms]\s*)+)$", re.IGNORECASE)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([wdhms])", re.IGNORECASE)
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
MAX_SHIFT = timedelta(days=366)  # a demo's year at a time; far beyond, dates stop being dates


class ClockMoveError(ValueError):
    """The clock cannot be moved as asked; the message is one line for the administrator."""


def offset_path(data_dir: Path) -> Path:
    return Path(data_dir) / OFFSET_FILE


def read_offset(data_dir: Path) -> timedelta:
    try:
        text = offset_path(data_dir).read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return timedelta(0)
    try:
        return timedelta(seconds=float(text or 0))
    except ValueError:
        return timedelta(0)


def parse_span(text: str) -> timedelta | None:
    """``2d``, ``+36h``, ``1w``, ``1d12h``, ``90m``, ``30s`` as a span of time; None when it is not
    one (a minus sign included). Also the ages of ``pbem admin prune --older-than``."""
    match = _SHIFT.match(text.strip())
    if not match:
        return None
    try:
        return sum((timedelta(**{_UNITS[unit.lower()]: float(amount)})
                    for amount, unit in _PART.findall(match.group(1))), timedelta(0))
    except OverflowError:
        return timedelta.max


def parse_shift(text: str) -> timedelta:
    """``+2d``, ``36h``, ``1w``, ``1d12h``, ``90m``: forward only, a year at most at a time."""
    if text.strip().startswith("-"):
        raise ClockMoveError(f"{text!r} would move the clock back; it only moves forward (what the server "
                             "did at a time cannot be undone): write it like +2d")
    shift = parse_span(text)
    if shift is None:
        raise ClockMoveError(f"{text!r} is not a time to move forward by: write it like +2d, +36h, "
                             "+1w, +1d12h or +90m")
    if shift <= timedelta(0):
        raise ClockMoveError(f"{text!r} does not move the clock: give a time greater than zero")
    if shift > MAX_SHIFT:
        raise ClockMoveError(f"{text!r} is more than a year: move the clock at most +{MAX_SHIFT.days}d at a "
                             "time (and again for more)")
    return shift


def move(data_dir: Path, by: timedelta) -> timedelta:
    """Move the clock ``by`` forward (written atomically, so a reader sees the old offset or the
    new one); returns the new offset."""
    if by <= timedelta(0):
        raise ClockMoveError("the clock only moves forward")
    offset = read_offset(data_dir) + by
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{OFFSET_FILE}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(f"{offset.total_seconds():.6f}\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, offset_path(folder))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return offset


class MovableClock:
    """The system clock plus the offset in ``DATA_DIR/clock-offset``, read again whenever the file
    changes. The offset never shrinks; the system clock is followed as it is."""

    def __init__(self, data_dir: Path, base: Clock | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.base = base or SystemClock()
        self._seen: tuple[int, int] | None = None
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    def offset(self) -> timedelta:
        with self._lock:
            try:
                info = offset_path(self.data_dir).stat()
                seen: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
            except FileNotFoundError:
                seen = None
            if seen != self._seen:
                if seen:
                    self._offset = max(self._offset, read_offset(self.data_dir))
                self._seen = seen
            return self._offset

    def now(self) -> datetime:
        return self.base.now() + self.offset()

    def __repr__(self) -> str:
        return f"MovableClock({self.data_dir})"


def configured_clock(config: Config) -> Clock:
    """The clock the configuration asks for: the system's, or the movable one."""
    return MovableClock(config.data_dir) if config.clock == MOVABLE else SystemClock()


__all__ = ["MAX_SHIFT", "MOVABLE", "OFFSET_FILE", "ClockMoveError", "MovableClock", "configured_clock",
           "move", "offset_path", "parse_shift", "parse_span", "read_offset"]
