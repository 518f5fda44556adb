"""A player's side of the clocks: their timezone (how times are shown to them, where their weekends
and nights fall) and their vacations, kept in their settings.

Everything is stored in UTC; a player's timezone matters for reading the dates they type, for
showing times and for what does not count on their clock. ``settings["vacations"]`` holds the
vacations a player asked for (``vacation FROM..TO``) and the days of allowance spent for them when
their time ran out (``"kind": "allowance"``): both stop every clock of theirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pbem.clocks.counted import Interval
from pbem.i18n import N_, _, ngettext
from pbem.store.base import GameRow, Tx

ALLOWANCE = "allowance"  # the kind of a vacation entry spent on a timeout


def find_timezone(name: str) -> str | None:
    """The canonical IANA name for what a player wrote (any letter case), or None."""
    wanted = name.strip()
    if not wanted:
        return None
    if wanted.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    try:
        ZoneInfo(wanted)
        return wanted
    except (ZoneInfoNotFoundError, ValueError):
        pass
    lowered = wanted.lower()
    return next((tz for tz in sorted(available_timezones()) if tz.lower() == lowered), None)


def player_zone(settings: Mapping[str, Any]) -> ZoneInfo:
    try:
        return ZoneInfo(str(settings.get("timezone") or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


# strftime's names are the C locale's (English) whatever the reader speaks
_WEEKDAYS = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))
_MONTHS = (N_("Jan"), N_("Feb"), N_("Mar"), N_("Apr"), N_("May"), N_("Jun"), N_("Jul"), N_("Aug"),
           N_("Sep"), N_("Oct"), N_("Nov"), N_("Dec"))


def format_when(when: datetime, zone: ZoneInfo, now: datetime | None = None) -> str:
    """A time as the player reads it: their local time, UTC alongside, and how far away it is."""
    local = when.astimezone(zone)
    text = (f"{_(_WEEKDAYS[local.weekday()])} {local:%d} {_(_MONTHS[local.month - 1])} "
            + local.strftime("%Y, %H:%M %Z"))
    if zone.key != "UTC":
        text += when.astimezone(UTC).strftime(" (%H:%M UTC)")
    if now is not None:
        text += f", {format_span(when - now)}"
    return text


def format_span(span: timedelta) -> str:
    seconds = span.total_seconds()
    future = seconds >= 0
    seconds = abs(seconds)
    days, rest = divmod(int(seconds + 30), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = []
    if days:
        parts.append(ngettext("{n} day", "{n} days", days).format(n=days))
    if hours and days < 3:
        parts.append(ngettext("{n} hour", "{n} hours", hours).format(n=hours))
    if not days and hours < 3 and minutes:
        parts.append(ngettext("{n} minute", "{n} minutes", minutes).format(n=minutes))
    amount = " ".join(parts) or _("less than a minute")
    return (_("in {span}") if future else _("{span} ago")).format(span=amount)


# --- vacations ------------------------------------------------------------------------------------------

def vacation_entry(first: date, last: date, zone: ZoneInfo) -> dict[str, Any]:
    """A vacation from the start of ``first`` to the end of ``last``, local days stored as UTC times."""
    start = datetime.combine(first, time(0), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(last + timedelta(days=1), time(0), tzinfo=zone).astimezone(UTC)
    return {"from": first.isoformat(), "to": last.isoformat(), "start": start.isoformat(),
            "end": end.isoformat()}


def allowance_entry(start: datetime, end: datetime, zone: ZoneInfo) -> dict[str, Any]:
    """A day of allowance spent on a timeout: from the deadline missed, 24 hours."""
    return {"kind": ALLOWANCE, "from": start.astimezone(zone).date().isoformat(),
            "to": end.astimezone(zone).date().isoformat(), "start": start.astimezone(UTC).isoformat(),
            "end": end.astimezone(UTC).isoformat()}


def _entries(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [v for v in settings.get("vacations", []) if isinstance(v, dict)]


def vacations(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The vacations the player asked for (not the allowance spent for them)."""
    return [v for v in _entries(settings) if v.get("kind") != ALLOWANCE]


def allowance_spent(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [v for v in _entries(settings) if v.get("kind") == ALLOWANCE]


def entry_interval(entry: Mapping[str, Any]) -> Interval:
    return datetime.fromisoformat(entry["start"]), datetime.fromisoformat(entry["end"])


def vacation_intervals(settings: Mapping[str, Any]) -> list[Interval]:
    """Every stretch in which the player's clocks stop: vacations and allowance days."""
    return [entry_interval(v) for v in _entries(settings)]


def vacation_days(entry: Mapping[str, Any]) -> dict[int, int]:
    """Days of one vacation per calendar year: the allowance is yearly, and a vacation over New Year
    spends some of each."""
    first, last = date.fromisoformat(entry["from"]), date.fromisoformat(entry["to"])
    per_year: dict[int, int] = {}
    day = first
    while day <= last:
        year_end = date(day.year, 12, 31)
        upto = min(last, year_end)
        per_year[day.year] = per_year.get(day.year, 0) + (upto - day).days + 1
        day = upto + timedelta(days=1)
    return per_year


def days_used(settings: Mapping[str, Any], year: int) -> int:
    """Vacation days the player asked for in ``year`` (the allowance spent on timeouts is counted
    apart, see pbem.clocks.allowance)."""
    return sum(vacation_days(v).get(year, 0) for v in vacations(settings))


def on_vacation(settings: Mapping[str, Any], now: datetime) -> bool:
    """On a vacation they asked for (a day of allowance spent on a timeout is no holiday: reminders
    still go out)."""
    return any(start <= now < end for start, end in map(entry_interval, vacations(settings)))


def seat_email(row: GameRow, seat: str | None) -> str | None:
    return next((s.email for s in row.seats if s.seat == seat), None) if seat else None


def seat_vacations(tx: Tx, row: GameRow, seat: str) -> list[Interval]:
    """The vacations of whoever holds ``seat``: their clock does not run during them."""
    email = seat_email(row, seat)
    return vacation_intervals(tx.get_player(email)) if email else []


def seat_zone(tx: Tx, row: GameRow, seat: str) -> str:
    """The timezone of whoever holds ``seat``, by name: where their weekends and nights fall."""
    email = seat_email(row, seat)
    return player_zone(tx.get_player(email) if email else {}).key


__all__ = ["ALLOWANCE", "allowance_entry", "allowance_spent", "days_used", "entry_interval", "find_timezone",
           "format_span", "format_when", "on_vacation", "player_zone", "seat_email", "seat_vacations",
           "seat_zone", "vacation_days", "vacation_entry", "vacation_intervals", "vacations"]
