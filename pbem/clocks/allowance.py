"""The yearly vacation allowance: ``[deadlines] vacation_days_per_year`` days a player may be away.

Two things spend it, from one count per player and year (table ``allowance``, migration 8): the
vacations a player asks for (``vacation FROM..TO``, every day of it), and their timeouts. When a
player's time runs out and they still have days, a whole day is spent at once instead of the game
being lost: a day from the deadline missed during which none of their clocks run, in every game of
theirs (as on Little Golem, where vacation days are spent for a late player before a game is lost).
Only when the year's days are gone does the deadline's policy apply (the final reminder, then the
forfeit, or the moderators). ``0`` switches both off.

The year of a day is the player's local calendar year; a vacation over New Year spends from both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from pbem.clocks.players import ALLOWANCE, allowance_entry, days_used, player_zone, vacation_days
from pbem.store.base import Tx

DAY = timedelta(days=1)


def used(tx: Tx, email: str, year: int, settings: Mapping[str, Any]) -> tuple[int, int]:
    """(vacation days, timeout days) of ``year``; before anything was written for the year, the
    vacations counted from the settings and no timeouts."""
    row = tx.allowance_use(email, year)
    return row if row is not None else (days_used(settings, year), 0)


def left(tx: Tx, email: str, year: int, allowance: int, settings: Mapping[str, Any]) -> int:
    vacation, timeout = used(tx, email, year, settings)
    return max(0, allowance - vacation - timeout)


def years_of(entries: Iterable[Mapping[str, Any]]) -> set[int]:
    return {year for entry in entries for year in vacation_days(entry)}


def write_vacations(tx: Tx, email: str, settings: Mapping[str, Any], years: Iterable[int],
                    now: datetime) -> None:
    """After the player's vacations changed: the days of each year touched, as the settings now
    have them."""
    for year in sorted(set(years)):
        tx.set_vacation_days(email, year, days_used(settings, year), now)


def spend_day(tx: Tx, email: str, settings: dict[str, Any], missed: datetime, now: datetime,
              allowance: int) -> tuple[datetime, int] | None:
    """A day of the allowance for a player whose time ran out at ``missed``: their clocks stop from
    then for 24 hours (an entry in their settings, which every game of theirs reads). Returns when
    the day ends and the days left, or None when none is left."""
    zone = player_zone(settings)
    year = missed.astimezone(zone).year
    if allowance <= 0 or left(tx, email, year, allowance, settings) < 1:
        return None
    vacation, _timeout = used(tx, email, year, settings)
    tx.add_timeout_days(email, year, 1, vacation, now)
    until = missed + DAY
    keep_from = now - 400 * DAY  # a spent day a year old stops no clock any more
    settings["vacations"] = [v for v in settings.get("vacations", []) if not (
        isinstance(v, dict) and v.get("kind") == ALLOWANCE and datetime.fromisoformat(v["end"]) < keep_from)]
    settings["vacations"].append(allowance_entry(missed, until, zone))
    tx.set_player(email, settings)
    return until, left(tx, email, year, allowance, settings)


def summary(tx: Tx, email: str, year: int, allowance: int,
            settings: Mapping[str, Any]) -> tuple[int, int, int]:
    """(vacation days, timeout days, days left) of ``year``, for ``settings`` and ``vacation``."""
    vacation, timeout = used(tx, email, year, settings)
    return vacation, timeout, max(0, allowance - vacation - timeout)


__all__ = ["DAY", "left", "spend_day", "summary", "used", "write_vacations", "years_of"]
