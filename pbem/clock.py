"""Where the server gets the time from.

Every timestamp the server writes (received_at, next_attempt_at, deadlines) comes from an injected
``Clock`` rather than from ``datetime.now()`` scattered around the code, so that tests can move time
forward instead of sleeping through a retry back-off or a reminder interval.

Waiting is never done with ``time.sleep``: threads wait on a ``threading.Event`` with a timeout, so a
wake-up (new mail, stop request) ends the wait at once. ``wait_until`` and ``wait_either`` are the
helpers for that.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

#: A reading of the wall clock this much earlier than one already seen is the clock stepping back
#: (an NTP correction, ``date -s``), not two threads reading it in the other order.
STEP_TOLERANCE = timedelta(seconds=1)


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current time as a timezone-aware UTC datetime."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to; for tests of back-off and deadlines.

    Thread-safe, because the server's threads read it while the test thread advances it.
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2025, 1, 1, tzinfo=UTC)
        if start.tzinfo is None or start.utcoffset() is None:
            raise ValueError("ManualClock needs a timezone-aware start time")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float = 0.0, **delta: float) -> datetime:
        """Move forward by ``seconds`` (plus any ``timedelta`` keywords); returns the new time."""
        with self._lock:
            self._now += timedelta(seconds=seconds, **delta)
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when.astimezone(UTC)


class StepWatch:
    """Notices the wall clock stepping back (an NTP correction of an hour, say).

    Most of the server follows the wall clock as it is, backwards too: deadlines and reminders are
    once-keyed, so going through a time again repeats nothing. What does not is a time that was
    stored as "not before" (a mail's next attempt in the outbox): after a step back it would wait
    out the step as well. ``back(now)``, fed with each reading, says by how much the clock went
    back when it did (the time since the latest reading counted by the monotonic clock, which no
    correction moves), once per step; None otherwise. Thread-safe.
    """

    def __init__(self, tolerance: timedelta = STEP_TOLERANCE) -> None:
        self.tolerance = tolerance
        self._latest: tuple[datetime, float] | None = None  # the latest wall time seen, monotonic then
        self._lock = threading.Lock()

    def back(self, now: datetime) -> timedelta | None:
        mono = time.monotonic()
        with self._lock:
            latest = self._latest
            if latest is None or now >= latest[0]:
                self._latest = (now, mono)
                return None
            if now >= latest[0] - self.tolerance:
                return None
            self._latest = (now, mono)  # the new timeline: the same step is reported once
            return latest[0] + timedelta(seconds=mono - latest[1]) - now


def wait_until(event: threading.Event, timeout: float | None) -> bool:
    """Wait on ``event`` for at most ``timeout`` seconds (None: forever, <= 0: don't wait).

    Returns True when the event is set. A negative timeout (a deadline already passed) is
    treated as zero, so callers can pass ``deadline - now`` without clamping it themselves.
    """
    if timeout is not None and timeout <= 0:
        return event.is_set()
    return event.wait(timeout)


def wait_either(event: threading.Event, stop: threading.Event, timeout: float | None,
                slice_seconds: float = 0.2) -> bool:
    """Wait until ``event`` is set (True), or ``stop`` is set or ``timeout`` passes (False).

    ``event`` ends the wait at once; ``stop`` is looked at every ``slice_seconds``, which bounds
    how long a thread takes to notice a shutdown that nobody announced on ``event``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while not stop.is_set():
        remaining = slice_seconds if deadline is None else min(slice_seconds,
                                                               deadline - time.monotonic())
        if remaining <= 0:
            return event.is_set()
        if event.wait(remaining):
            return True
    return event.is_set()
