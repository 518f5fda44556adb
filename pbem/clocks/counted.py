"""Counted time: how much of a stretch of wall-clock time a player's clock runs, and the moment a
given amount of it has run.

A clock does not run in the player's vacations, in a moderator's pause, in a server outage, in a day
of vacation allowance spent on a timeout, and, when the time control says so, at weekends (Saturday
00:00 to Monday 00:00) and at night (23:00 to 07:00), both in the player's own timezone. The
weekends and nights are generated from the local calendar as they are needed (a clock may run for
weeks), so a change to or from summer time moves them with the player's day.

All times are timezone-aware; everything returned is UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

Interval = tuple[datetime, datetime]

NIGHT_STARTS = time(23)
NIGHT_ENDS = time(7)
SATURDAY = 5
UTC_ZONE = ZoneInfo("UTC")
_WINDOW = timedelta(days=14)
_MAX_WINDOWS = 2000  # about 77 years of windows: a bank is at most a year, weekends and nights included


class NeverError(ValueError):
    """The clock never runs (nothing counts): no moment ends the amount."""


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping: a night inside a vacation must not stop the clock twice."""
    merged: list[Interval] = []
    for start, end in sorted((s, e) for s, e in intervals if e > s):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _local(day: date, at: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC)


@dataclass(frozen=True)
class OffTime:
    """When a clock does not run: ``pauses`` (vacations, pauses, outages, spent allowance), and the
    weekends and nights of ``zone`` if asked for."""

    zone: ZoneInfo = UTC_ZONE
    weekends: bool = False
    nights: bool = False
    pauses: tuple[Interval, ...] = ()

    def intervals(self, start: datetime, end: datetime) -> list[Interval]:
        """The stretches of [start, end) in which the clock does not run, merged and clipped."""
        found = [(max(a, start), min(b, end)) for a, b in self.pauses if b > start and a < end]
        if self.weekends or self.nights:
            first = start.astimezone(self.zone).date() - timedelta(days=2)
            last = end.astimezone(self.zone).date() + timedelta(days=1)
            day = first
            while day <= last:
                if self.nights:
                    found.append((_local(day, NIGHT_STARTS, self.zone),
                                  _local(day + timedelta(days=1), NIGHT_ENDS, self.zone)))
                if self.weekends and day.weekday() == SATURDAY:
                    found.append((_local(day, time(0), self.zone),
                                  _local(day + timedelta(days=2), time(0), self.zone)))
                day += timedelta(days=1)
            found = [(max(a, start), min(b, end)) for a, b in found if b > start and a < end]
        return merge(found)


def counted(off: OffTime, start: datetime, end: datetime) -> timedelta:
    """The clock time that runs from ``start`` to ``end``."""
    if end <= start:
        return timedelta(0)
    return (end - start) - sum((b - a for a, b in off.intervals(start, end)), timedelta(0))


def moment_after(off: OffTime, start: datetime, amount: timedelta) -> datetime:
    """The moment ``amount`` of clock time has run from ``start`` (the inverse of ``counted``): the
    last such moment, so a bank that runs out just as a night, a weekend or a pause begins lasts
    until it ends (the clock has not run over while it stood still)."""
    cursor, left = start, max(amount, timedelta(0))
    for _window in range(_MAX_WINDOWS):
        end = cursor + _WINDOW
        for a, b in off.intervals(cursor, end):
            if a > cursor:
                if left < a - cursor:
                    return cursor + left
                left -= a - cursor
            cursor = max(cursor, b)
        if left < end - cursor:
            return cursor + left
        left -= end - cursor
        cursor = end
    raise NeverError(f"the clock does not run after {start.isoformat()}")


def wall_after(pauses: Iterable[Interval], start: datetime, amount: timedelta) -> datetime:
    """``moment_after`` with only the given pauses (no weekends or nights): a moderator's deadline
    is wall-clock time that moves past vacations and pauses, not past nights."""
    return moment_after(OffTime(pauses=tuple(pauses)), start, amount)


__all__ = ["Interval", "NeverError", "OffTime", "counted", "merge", "moment_after", "wall_after"]
