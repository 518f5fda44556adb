"""The injected clock and the Event-based waits the server threads use instead of sleeping."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from pbem.clock import ManualClock, SystemClock, wait_either, wait_until


def test_system_clock_is_aware_utc() -> None:
    now = SystemClock().now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - now).total_seconds()) < 5


def test_manual_clock_moves_only_when_told() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = ManualClock(start)
    assert clock.now() == start
    assert clock.advance(90) == start + timedelta(seconds=90)
    clock.advance(hours=1)
    assert clock.now() == start + timedelta(seconds=90, hours=1)
    with pytest.raises(ValueError):
        ManualClock(datetime(2026, 1, 1))  # naive


def test_wait_until_and_wait_either() -> None:
    event, stop = threading.Event(), threading.Event()
    assert wait_until(event, -1) is False  # a deadline in the past does not wait
    threading.Timer(0.05, event.set).start()
    started = time.monotonic()
    assert wait_either(event, stop, 5) is True
    assert time.monotonic() - started < 1
    event.clear()
    threading.Timer(0.05, stop.set).start()
    started = time.monotonic()
    assert wait_either(event, stop, 5, slice_seconds=0.05) is False
    assert time.monotonic() - started < 1
    stop.clear()
    started = time.monotonic()
    assert wait_either(event, stop, 0.1) is False
    assert 0.09 <= time.monotonic() - started < 1
