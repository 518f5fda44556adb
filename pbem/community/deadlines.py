"""Move clocks: deadline arithmetic and clock control on a GameRow, without I/O.

Everything is stored in UTC; a player's timezone matters only for reading their vacation dates and for
showing times. The row's ``deadline_at`` column is the one truth the scheduler queries (``games_due``);
``record["clock"]`` keeps what that column cannot: which turn the clock belongs to, the time left while
paused, which reminders went out, whether the grace period was used. It lives in the record so that it
travels with the game and is committed with every other change to it.

The moderation commands call ``set_deadline``, ``set_time_control``, ``pause`` and ``resume``; they raise
``ClockError`` (a ValueError) with a sentence meant for the moderator's reply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from engine import State
from pbem.config import DeadlineConfig
from pbem.i18n import N_, _, ngettext
from pbem.record import iso
from pbem.store.base import GameRow, Tx

GRACE = timedelta(hours=24)
POLICIES = ("forfeit", "notify")
MAX_DAYS_PER_MOVE = 365

Interval = tuple[datetime, datetime]


class ClockError(ValueError):
    """A clock operation that does not fit the game's state; the message is for a person."""


# --- time arithmetic ----------------------------------------------------------------------------------

def _aware(when: datetime, what: str) -> datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ClockError(f"{what} must be a timezone-aware time, not {when!r}")
    return when.astimezone(UTC)


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping: overlapping vacations must not stop the clock twice."""
    merged: list[Interval] = []
    for start, end in sorted((s, e) for s, e in intervals if e > s):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def running_time(start: datetime, end: datetime, paused: Iterable[Interval] = ()) -> timedelta:
    """How much clock time passes between ``start`` and ``end`` when the clock stops in ``paused``."""
    if end <= start:
        return timedelta(0)
    total = end - start
    for a, b in merge_intervals(paused):
        lo, hi = max(a, start), min(b, end)
        if hi > lo:
            total -= hi - lo
    return total


def deadline_after(start: datetime, duration: timedelta, paused: Iterable[Interval] = ()) -> datetime:
    """The moment ``duration`` of clock time has run from ``start``, the clock stopping in ``paused``
    (the inverse of ``running_time``)."""
    now, left = start, max(duration, timedelta(0))
    for a, b in merge_intervals(paused):
        if b <= now:
            continue
        if a > now:
            if left <= a - now:
                return now + left
            left -= a - now
        now = b
    return now + left


# --- time control --------------------------------------------------------------------------------------

def time_control(record: Mapping[str, Any], config: DeadlineConfig) -> dict[str, Any]:
    """The game's own control, falling back to the server's defaults for what it does not say."""
    own = record.get("time_control") or {}
    return {"days_per_move": own.get("days_per_move", config.default_days),
            "policy": own.get("policy", config.policy)}


def default_time_control(config: DeadlineConfig) -> dict[str, Any]:
    return {"days_per_move": _number(config.default_days), "policy": config.policy}


def move_period(record: Mapping[str, Any], config: DeadlineConfig) -> timedelta:
    return timedelta(days=float(time_control(record, config)["days_per_move"]))


def check_days(days: float) -> float:
    """Days per move as given by a person: positive, at most a year; whole numbers stay whole."""
    try:
        value = float(days)
    except (TypeError, ValueError):
        raise ClockError(_("days per move must be a number, not {days}").format(days=repr(days))) from None
    if not math.isfinite(value) or value <= 0 or value > MAX_DAYS_PER_MOVE:
        raise ClockError(_("days per move must be more than 0 and at most {most}, not {days}").format(
            most=MAX_DAYS_PER_MOVE, days=days))
    if value * 24 < 1:
        raise ClockError(_("a move needs at least one hour, 1/24 of a day ({fraction} days), not "
                           "{days}").format(fraction=f"{1 / 24:.3f}", days=days))
    return _number(value)


def _number(value: float) -> float:
    return int(value) if float(value).is_integer() else float(value)


def set_time_control(row: GameRow, days: float, policy: str | None = None) -> None:
    """Change the game's time control. It applies from the next move on: the deadline already running
    stays (move it with ``set_deadline``), because a player planned their move around it."""
    control = dict(row.record.get("time_control") or {})
    control["days_per_move"] = check_days(days)
    if policy is not None:
        if policy not in POLICIES:
            raise ClockError(_("the policy at a deadline is {policies}, not {policy}").format(
                policies=" or ".join(POLICIES), policy=repr(policy)))
        control["policy"] = policy
    control.setdefault("policy", "forfeit")
    row.record["time_control"] = control


def describe_time_control(control: Mapping[str, Any], grace: bool) -> str:
    """In the reader's language (called where the reader's mail is written)."""
    days = control["days_per_move"]
    count = days if isinstance(days, int) or float(days).is_integer() else 5  # "0.5 days": the plural
    amount = ngettext("{days} day per move", "{days} days per move", int(count)).format(days=days)
    if control.get("policy") == "notify":
        return _("{amount}; at a deadline the moderators decide").format(amount=amount)
    if grace:
        return _("{amount}; a late player gets a final reminder and 24 more hours, then forfeits").format(
            amount=amount)
    return _("{amount}; a late player forfeits").format(amount=amount)


# --- the clock of one game -----------------------------------------------------------------------------

def current_ply(record: Mapping[str, Any]) -> int:
    """Moves made so far (chance entries do not count): the turn a clock and its once-keys belong to."""
    return sum(1 for entry in record.get("moves", []) if "move" in entry)


def clock(row: GameRow) -> dict[str, Any]:
    return row.record.setdefault("clock", {})


def generation(row: GameRow) -> int:
    """Bumped whenever a person re-times the turn, so that reminders for the new deadline may go out
    again; outage extensions keep it, because those reminders were already sent for the same wait."""
    return int((row.record.get("clock") or {}).get("gen", 0))


def turn(row: GameRow) -> int:
    """Counts clock starts in this game. Unlike the ply it never repeats (an undo takes the ply back),
    so once-keys built from it cannot be mistaken for those of an earlier turn at the same ply."""
    return int((row.record.get("clock") or {}).get("turn", 0))


def turn_key(row: GameRow) -> str:
    """``PLY.TURN`` for once-keys, e.g. ``12.13``: readable, and unique per clock start."""
    return f"{current_ply(row.record)}.{turn(row)}"


def is_paused(row: GameRow) -> bool:
    return "remaining_seconds" in (row.record.get("clock") or {})


def start_clock(row: GameRow, seat: str, now: datetime, period: timedelta,
                paused: Sequence[Interval] = ()) -> None:
    """A new turn: the seat to move gets the full period, not counting their vacations. A game that a
    moderator paused stays paused, with the new turn's full period waiting."""
    now = _aware(now, "now")
    was_paused = is_paused(row)
    state: dict[str, Any] = {"ply": current_ply(row.record), "seat": seat, "started": iso(now),
                             "turn": turn(row) + 1, "reminded": []}
    row.record["clock"] = state
    if was_paused:
        state["remaining_seconds"] = period.total_seconds()
        state["paused_at"] = iso(now)
        row.deadline_at = None
    else:
        row.deadline_at = deadline_after(now, period, paused)


def stop_clock(row: GameRow) -> None:
    """The game is over or not running: no deadline, nothing for the scheduler to find."""
    row.deadline_at = None
    count = turn(row)
    row.record.pop("clock", None)
    if count:
        row.record["clock"] = {"turn": count}


def _retimed(row: GameRow) -> None:
    state = clock(row)
    state["gen"] = generation(row) + 1
    state["reminded"] = []
    state.pop("expired", None)


def set_deadline(row: GameRow, when: datetime, now: datetime,
                 paused: Sequence[Interval] = ()) -> datetime:
    """A moderator's deadline for the current move; also ends a pause or an expired 'notify' clock.

    ``paused`` are the mover's vacations: the moderator gives the time until ``when``, and as with
    every clock it does not run while the player is away, so the deadline moves past the vacation
    by the time it covers (a moderator cannot forfeit a player who is on leave). Returns the
    deadline that applies."""
    when, now = _aware(when, "the deadline"), _aware(now, "now")
    if row.status != "active":
        raise ClockError(f"game {row.id} is {row.status}; only running games have deadlines")
    if when <= now:
        raise ClockError(f"the new deadline {iso(when)} is not in the future (it is {iso(now)})")
    _retimed(row)
    state = clock(row)
    state.pop("remaining_seconds", None)
    state.pop("paused_at", None)
    row.deadline_at = deadline_after(now, when - now, paused)
    return row.deadline_at


def pause(row: GameRow, now: datetime) -> None:
    """Stop the clock: the time left is kept in ``record["clock"]`` and the deadline is cleared."""
    now = _aware(now, "now")
    if row.status != "active":
        raise ClockError(f"game {row.id} is {row.status}; there is no clock to pause")
    if is_paused(row):
        raise ClockError(f"game {row.id} is already paused")
    if row.deadline_at is None:
        raise ClockError(f"game {row.id} has no running clock to pause")
    state = clock(row)
    state["remaining_seconds"] = max(0.0, (row.deadline_at - now).total_seconds())
    state["paused_at"] = iso(now)
    row.deadline_at = None


def resume(row: GameRow, now: datetime, paused: Sequence[Interval] = ()) -> None:
    """Restart a paused clock with the time it had left (``paused``: the mover's vacations, if the
    caller knows them, so that resuming into a vacation does not eat into the time)."""
    now = _aware(now, "now")
    if row.status != "active":
        raise ClockError(f"game {row.id} is {row.status}; there is no clock to resume")
    if not is_paused(row):
        raise ClockError(f"game {row.id} is not paused")
    state = clock(row)
    remaining = timedelta(seconds=float(state.pop("remaining_seconds")))
    state.pop("paused_at", None)
    _retimed(row)
    row.deadline_at = deadline_after(now, remaining, paused)


def extend(row: GameRow, by: timedelta) -> None:
    """Push the running deadline (after an outage, or for the grace period); a paused clock keeps its
    remaining time, which an outage did not use up either."""
    if row.deadline_at is not None:
        row.deadline_at += by


def retime_for_vacations(row: GameRow, now: datetime, old: Sequence[Interval],
                         new: Sequence[Interval]) -> bool:
    """The mover's vacations changed: keep the clock time they have left, counted against the new
    vacations. Returns True when the deadline moved."""
    if row.deadline_at is None or row.deadline_at <= now:
        return False
    left = running_time(now, row.deadline_at, old)
    moved = deadline_after(now, left, new)
    if moved == row.deadline_at:
        return False
    _retimed(row)
    row.deadline_at = moved
    return True


def dropped_seats(record: Mapping[str, Any]) -> list[str]:
    """Seats dropped from the game so far, in order: the record's drop entries are the truth (a
    rollback takes them back with the moves), not ``record["dropped"]``, which also names the seat
    whose forfeit ended the game."""
    return [str(entry["drop"]) for entry in record.get("moves", []) if "drop" in entry]


def playing_seats(row: GameRow) -> list[str]:
    """Seats still in the game, in seat order."""
    dropped = dropped_seats(row.record)
    return [s.seat for s in row.seats if s.seat not in dropped]


def drop(row: GameRow, state: State, seat: str, now: datetime, reason: str = "forfeit") -> list[str]:
    """Take ``seat`` out of a game that goes on without it (Space Truckin' with three or more players
    left): a drop entry in the record, applied to ``state``, so that replaying the record gives the
    same position. Returns the engine's announcements.

    Raises EngineError (the game cannot go on without a player) before anything is changed. The
    caller restarts the clock for the new seat to move and tells the players.
    """
    now = _aware(now, "now")
    notes = state.drop_seat(seat)
    row.record["moves"].append({"drop": seat, "at": iso(now), "reason": reason})
    dropped = row.record.setdefault("dropped", [])
    if seat not in dropped:
        dropped.append(seat)
    # the position changed: an undo asked for the old one must not be accepted on the new one
    row.record.pop("undo_request", None)
    row.to_move = None if state.is_over else state.to_move
    row.updated_at = now
    return notes


def forfeit(row: GameRow, scores: Mapping[str, int], seat: str, now: datetime) -> dict[str, Any]:
    """End the game with ``seat`` as the loser and return the result stored in the record.

    With two seats the other one wins. With more (Space Truckin'), the scheduler ends the game only
    when the late seat is one of the last two still playing (else it drops the seat and the game goes
    on, see ``drop``) or when the game cannot drop a seat: the seats still playing are ranked by their
    scores, then the late seat, then the seats dropped earlier, the last one dropped first.
    ``record["dropped"]`` names the late seat and those dropped before it.
    """
    now = _aware(now, "now")
    earlier = [s for s in dropped_seats(row.record) if s != seat]
    others = [s.seat for s in row.seats if s.seat != seat and s.seat not in earlier]
    result: dict[str, Any] = {"reason": "forfeit", "forfeited": seat, "at": iso(now)}
    if len(row.seats) <= 2:
        result["winners"] = others
    else:
        ranking = sorted(others, key=lambda s: (-scores.get(s, 0), others.index(s)))
        best = scores.get(ranking[0], 0)
        result["winners"] = [s for s in ranking if scores.get(s, 0) == best]
        result["ranking"] = [*ranking, seat, *reversed(earlier)]
        result["totals"] = dict(scores)
        dropped = row.record.setdefault("dropped", [])
        if seat not in dropped:
            dropped.append(seat)
    row.record["result"] = result
    row.status = "over"
    row.to_move = None
    row.finished_at = now
    stop_clock(row)
    return result


# --- players: timezone and vacations ---------------------------------------------------------------------

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


def vacation_entry(first: date, last: date, zone: ZoneInfo) -> dict[str, Any]:
    """A vacation from the start of ``first`` to the end of ``last``, local days stored as UTC times."""
    start = datetime.combine(first, time(0), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(last + timedelta(days=1), time(0), tzinfo=zone).astimezone(UTC)
    return {"from": first.isoformat(), "to": last.isoformat(), "start": start.isoformat(),
            "end": end.isoformat()}


def vacations(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [v for v in settings.get("vacations", []) if isinstance(v, dict)]


def vacation_intervals(settings: Mapping[str, Any]) -> list[Interval]:
    return [(datetime.fromisoformat(v["start"]), datetime.fromisoformat(v["end"]))
            for v in vacations(settings)]


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
    return sum(vacation_days(v).get(year, 0) for v in vacations(settings))


def on_vacation(settings: Mapping[str, Any], now: datetime) -> bool:
    return any(start <= now < end for start, end in vacation_intervals(settings))


def seat_email(row: GameRow, seat: str | None) -> str | None:
    return next((s.email for s in row.seats if s.seat == seat), None) if seat else None


def seat_vacations(tx: Tx, row: GameRow, seat: str) -> list[Interval]:
    """The vacations of whoever holds ``seat``: their clock does not run during them."""
    email = seat_email(row, seat)
    return vacation_intervals(tx.get_player(email)) if email else []


__all__ = [
    "GRACE", "POLICIES", "ClockError", "Interval", "check_days", "clock", "current_ply", "days_used",
    "deadline_after", "default_time_control", "describe_time_control", "drop", "dropped_seats", "extend",
    "find_timezone", "forfeit", "format_span", "format_when", "generation", "is_paused", "merge_intervals",
    "move_period", "on_vacation", "pause", "player_zone", "playing_seats", "resume", "retime_for_vacations",
    "running_time", "seat_email", "seat_vacations", "set_deadline", "set_time_control", "start_clock",
    "stop_clock", "time_control", "turn", "turn_key", "vacation_days", "vacation_entry", "vacation_intervals",
    "vacations",
]
