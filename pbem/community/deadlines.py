"""Move clocks of one game: the clock operations on a GameRow, without I/O.

The arithmetic is ``pbem.clocks``: time controls (``control``), time that does not count
(``counted``), and the clock log in the record (``log``), from which every bank and deadline
follows. Here the game's life meets it: a turn starts when the seat to move changes, ends with the
mover's move (at the time it was received) or without it (an undo, the end of the game), and
moderators pause, resume and set deadlines. Everything is stored in UTC; a player's timezone
matters for reading their vacation dates, for showing times, and for their weekends and nights.

The row's ``deadline_at`` column is the one truth the scheduler queries (``games_due``); it is the
deadline the log gives after its last event. ``record["clock"]`` keeps the scheduler's bookkeeping
for the turn: which turn the clock belongs to, which reminders went out, whether the grace period
was used. Both live in the record so that they travel with the game and are committed with every
other change to it. A running clock of a game from before the clock log is taken into a log on its
first change (``ensure_log``), keeping its deadline.

The moderation commands call ``set_deadline``, ``set_time_control``, ``pause`` and ``resume``; they
raise ``ClockError`` (a ValueError) with a sentence meant for the moderator's reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from engine import State
from pbem.clocks import control as tc
from pbem.clocks import log as cl
from pbem.clocks.control import POLICIES, ClockError
from pbem.clocks.counted import Interval, OffTime, counted, wall_after
from pbem.clocks.counted import merge as merge_intervals
from pbem.clocks.players import (
    allowance_spent,
    days_used,
    entry_interval,
    find_timezone,
    format_span,
    format_when,
    on_vacation,
    player_zone,
    seat_email,
    seat_vacations,
    seat_zone,
    vacation_days,
    vacation_entry,
    vacation_intervals,
    vacations,
)
from pbem.config import DeadlineConfig
from pbem.record import iso
from pbem.store.base import GameRow

GRACE = cl.GRACE
MAX_DAYS_PER_MOVE = tc.MAX_DAYS


def _aware(when: datetime, what: str) -> datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ClockError(f"{what} must be a timezone-aware time, not {when!r}")
    return when.astimezone(UTC)


# --- time arithmetic without weekends and nights (vacations and pauses only) -----------------------------

def running_time(start: datetime, end: datetime, paused: Sequence[Interval] = ()) -> timedelta:
    """How much clock time passes between ``start`` and ``end`` when the clock stops in ``paused``."""
    return counted(OffTime(pauses=tuple(paused)), start, end)


def deadline_after(start: datetime, duration: timedelta, paused: Sequence[Interval] = ()) -> datetime:
    """The moment ``duration`` of clock time has run from ``start``, the clock stopping in ``paused``
    (the inverse of ``running_time``; a duration that runs out as a pause begins lasts past it)."""
    return wall_after(paused, start, duration)


# --- time control ---------------------------------------------------------------------------------------

def time_control(record: Mapping[str, Any], config: DeadlineConfig) -> dict[str, Any]:
    """The game's own control, the server's defaults filling what it does not say."""
    return tc.normalize(record.get("time_control"), config)


def deadline_policy(control: Mapping[str, Any], moderators: Sequence[str]) -> str:
    """What a missed deadline does: the game's policy, except that 'notify' on a server without
    moderators (a default from before, or moderators removed since) is 'forfeit': nobody would
    decide, and the game would wait for ever."""
    policy = str(control.get("policy", "forfeit"))
    return "forfeit" if policy == "notify" and not moderators else policy


def default_time_control(config: DeadlineConfig) -> dict[str, Any]:
    return tc.default_control(config)


def describe_time_control(control: Mapping[str, Any], grace: bool) -> str:
    """In the reader's language (called where the reader's mail is written)."""
    return tc.describe(control, grace)


def set_time_control(row: GameRow, control: Mapping[str, Any], now: datetime | None = None) -> None:
    """Change the game's time control (a checked value, see ``pbem.clocks.control.take``). In a
    running game it applies from the next turn on: the deadline already running stays (move it with
    ``set_deadline``), because a player planned their move around it; every bank starts afresh."""
    checked = tc.check(tc.normalize(control))
    row.record["time_control"] = checked
    if now is not None and any(e.get("event") == "start" for e in cl.events(row.record)):
        cl.append(row.record, {"event": "control", "at": cl.stamp(_aware(now, "now")), "control": checked})


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


def ensure_log(row: GameRow) -> None:
    """A running clock from before the clock log becomes one: its control, its turn's start, and
    its deadline (or the time it had left when paused) kept as they were."""
    state = row.record.get("clock") or {}
    if cl.LOG in row.record or "started" not in state or row.status != "active":
        return
    started = cl.moment(str(state["started"]))
    control = tc.normalize(row.record.get("time_control"))
    row.record[cl.LOG] = []
    cl.append(row.record, {"event": "control", "at": cl.stamp(started), "control": control, "migrated": True})
    cl.append(row.record, {"event": "start", "at": cl.stamp(started), "seat": str(state.get("seat")),
                           "zone": "UTC"})
    paused_at = state.pop("paused_at", None)
    remaining = state.pop("remaining_seconds", None)
    until = (cl.moment(str(paused_at)) + timedelta(seconds=float(remaining)) if remaining is not None
             else row.deadline_at)
    if until is not None:
        cl.append(row.record, {"event": "deadline", "at": cl.stamp(started), "until": cl.stamp(until),
                               "fixed": True})
    if paused_at is not None:
        cl.append(row.record, {"event": "pause", "at": cl.stamp(cl.moment(str(paused_at)))})


def running(row: GameRow) -> cl.Turn | None:
    """The turn whose clock runs (or stands paused), from the clock log."""
    ensure_log(row)
    return cl.running(row.record)


def is_paused(row: GameRow) -> bool:
    now_running = running(row)
    return now_running is not None and now_running.paused_at is not None


def pause_reason(row: GameRow) -> str | None:
    """Why the clock stands paused (``moderator``, ``bounce``, ``tournament``: the ``why`` of the
    pause, which a turn started meanwhile inherits); None when it is not paused."""
    if not is_paused(row):
        return None
    pauses = [e for e in cl.events(row.record) if e.get("event") == "pause"]
    return str(pauses[-1].get("why") or "moderator") if pauses else "moderator"


def _apply(row: GameRow, event: dict[str, Any], fold: cl.Fold | None = None) -> dict[str, Any]:
    stored = cl.append(row.record, event, fold)
    if "deadline" in stored:
        row.deadline_at = cl.deadline_of(stored)
    return stored


def close_turn(row: GameRow, now: datetime, received: datetime | None = None, why: str = "stop") -> None:
    """The running turn ends. Its player's moves since it began (the record's new move entries) are
    charged to their bank: the first at ``received``, when their mail arrived; a reply played at once
    from another seat's queue takes no time. Without a move of theirs it ends unpaid for (``why``:
    an undo, the end of the game)."""
    now = _aware(now, "now")
    ensure_log(row)
    fold = cl.live(row.record)  # (``running``), stepped on by the event that ends the turn
    current = fold.turn
    if current is None:
        return
    moves = [entry for entry in row.record.get("moves", []) if "move" in entry]
    since = (row.record.get("clock") or {}).get("ply")
    new = moves[since:] if isinstance(since, int) and len(moves) > since else []
    at = max(current.started, min(received or now, now))
    if not new:
        taken_back = isinstance(since, int) and len(moves) < since
        _apply(row, {"event": "end", "at": cl.stamp(at if not taken_back else now), "seat": current.seat,
                     "why": "taken back" if taken_back else why}, fold)
        return
    first, *more = new
    if first.get("seat") == current.seat:
        _apply(row, {"event": "move", "at": cl.stamp(at), "seat": current.seat}, fold)
    else:
        _apply(row, {"event": "end", "at": cl.stamp(at), "seat": current.seat, "why": why}, fold)
        more = new
    for entry in more:  # replies from a queue, played in the same step
        seat = str(entry.get("seat"))
        _apply(row, {"event": "start", "at": cl.stamp(now), "seat": seat, "zone": "UTC"})
        _apply(row, {"event": "move", "at": cl.stamp(now), "seat": seat})


def start_clock(row: GameRow, seat: str, now: datetime, zone: str = "UTC",
                away: Sequence[Interval] = ()) -> None:
    """A new turn: the seat to move gets its bank (the control's time per move, or what its Fischer
    or total bank holds), not counting their vacations (``away``), nor weekends and nights of their
    ``zone`` when the control says so. A game that a moderator paused stays paused, with the new
    turn's whole time waiting. The caller ends the previous turn first (``close_turn``)."""
    now = _aware(now, "now")
    ensure_log(row)
    fold = cl.live(row.record)
    if fold.turn is not None:
        close_turn(row, now)
        fold = cl.live(row.record)
    previous = fold.last
    was_paused = previous is not None and previous.paused_at is not None
    log = cl.events(row.record)
    unchanged: cl.Fold | None = fold  # the log as read, for the start event
    if not any(e.get("event") == "control" for e in log):
        cl.append(row.record, {"event": "control", "at": cl.stamp(now),
                               "control": tc.normalize(row.record.get("time_control"))})
        unchanged = None
    state: dict[str, Any] = {"ply": current_ply(row.record), "seat": seat, "started": iso(now),
                             "turn": turn(row) + 1, "reminded": []}
    row.record["clock"] = state
    event: dict[str, Any] = {"event": "start", "at": cl.stamp(now), "seat": seat, "zone": zone}
    ahead = [(a, b) for a, b in merge_intervals(away) if b > now]
    if ahead:
        event["away"] = cl.interval_texts(ahead)
    if was_paused:
        event["paused"] = True
    _apply(row, event, unchanged)


def stop_clock(row: GameRow, now: datetime | None = None, received: datetime | None = None) -> None:
    """The game is over or not running: the turn ends (with the last move, if it was one), no
    deadline, nothing for the scheduler to find."""
    if now is not None:
        close_turn(row, now, received)
    row.deadline_at = None
    count = turn(row)
    row.record.pop("clock", None)
    if count:
        row.record["clock"] = {"turn": count}


def bank_line(row: GameRow, now: datetime, zone: ZoneInfo) -> str | None:
    """``Your time: ...`` for the seat to move, where the deadline alone does not say it all (a bank
    that carries over, weekends or nights that do not count), and whether their clock stands still
    now, until when (in ``zone``, the reader's); in the reader's language."""
    current = running(row)
    if current is None or (not tc.carries_over(current.control) and tc.counts_all_hours(current.control)):
        return None
    still = current.stands_still(now)
    return tc.bank_line(current.control, current.left(now), format_when(still, zone) if still else None)


def counts_clock_time(row: GameRow) -> bool:
    """The game's time control leaves out weekends or nights, so its reminders count the player's
    clock (read from the control alone: the scheduler asks it of many games each run)."""
    return not tc.counts_all_hours(row.record.get("time_control") or {})


def before_deadline(row: GameRow, now: datetime) -> tuple[timedelta, timedelta]:
    """(the time left before the deadline, the whole turn) as reminders count them: on the player's
    clock where weekends or nights do not count ("12 hours before" is 12 hours of their clock, not a
    Saturday on which it stands still), else on the wall clock."""
    assert row.deadline_at is not None
    current = running(row)
    if current is None:
        return row.deadline_at - now, timedelta(0)
    if tc.counts_all_hours(current.control):
        return row.deadline_at - now, row.deadline_at - current.started
    off = current.off(now)
    return counted(off, now, row.deadline_at), counted(off, current.started, row.deadline_at)


def _retimed(row: GameRow) -> None:
    state = clock(row)
    state["gen"] = generation(row) + 1
    state["reminded"] = []
    state.pop("expired", None)


def _sync_away(row: GameRow, now: datetime, away: Sequence[Interval]) -> None:
    """The mover's vacations as the caller knows them now, if they differ from the log's."""
    current = running(row)
    if current is None:
        return
    ahead = cl.after(list(away), now)
    if ahead != cl.after(current.away, now):
        _apply(row, {"event": "away", "at": cl.stamp(now), "seat": current.seat,
                     "intervals": cl.interval_texts(ahead)})


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
    if running(row) is None:
        raise ClockError(f"game {row.id} has no move clock (nobody is to move)")
    _retimed(row)
    _sync_away(row, now, paused)
    _apply(row, {"event": "deadline", "at": cl.stamp(now), "until": cl.stamp(when)})
    assert row.deadline_at is not None
    return row.deadline_at


def pause(row: GameRow, now: datetime, why: str = "moderator") -> None:
    """Stop the clock: the turn's time is kept (the log knows how much ran) and the deadline is
    cleared. ``why``: ``moderator`` or ``bounce`` (the player's mail does not reach them)."""
    now = _aware(now, "now")
    if row.status != "active":
        raise ClockError(f"game {row.id} is {row.status}; there is no clock to pause")
    if is_paused(row):
        raise ClockError(f"game {row.id} is already paused")
    if row.deadline_at is None or running(row) is None:
        raise ClockError(f"game {row.id} has no running clock to pause")
    _apply(row, {"event": "pause", "at": cl.stamp(now), "why": why})


def resume(row: GameRow, now: datetime, paused: Sequence[Interval] = ()) -> None:
    """Restart a paused clock with the time it had left (``paused``: the mover's vacations, if the
    caller knows them, so that resuming into a vacation does not eat into the time)."""
    now = _aware(now, "now")
    if row.status != "active":
        raise ClockError(f"game {row.id} is {row.status}; there is no clock to resume")
    if not is_paused(row):
        raise ClockError(f"game {row.id} is not paused")
    _retimed(row)
    if paused:
        _sync_away(row, now, paused)
    _apply(row, {"event": "resume", "at": cl.stamp(now)})


def outage(row: GameRow, since: datetime, now: datetime) -> bool:
    """The server was down from ``since`` to ``now``: that time does not count (a paused clock keeps
    its time anyway). True when the deadline moved."""
    if running(row) is None:
        return False
    before = row.deadline_at
    _apply(row, {"event": "outage", "at": cl.stamp(_aware(now, "now")), "from": cl.stamp(since)})
    return row.deadline_at != before


def retime_for_vacations(row: GameRow, now: datetime, old: Sequence[Interval],
                         new: Sequence[Interval]) -> bool:
    """The mover's vacations changed: their clock keeps the time it has left, counted against the
    new vacations. Returns True when the deadline moved."""
    if row.deadline_at is None or row.deadline_at <= now or running(row) is None:
        return False
    before = row.deadline_at
    _sync_away(row, now, new)
    if row.deadline_at == before:
        return False
    _retimed(row)
    return True


def spend(row: GameRow, now: datetime, missed: datetime, until: datetime, left_days: int,
          days: int = 1) -> datetime | None:
    """A day of the mover's allowance, spent because their time ran out at ``missed`` (``days=0``:
    a day spent for another game of theirs that covers it): the clock does not run until
    ``until``. Returns the new deadline."""
    current = running(row)
    if current is None:
        return None
    _apply(row, {"event": "spend", "at": cl.stamp(now), "seat": current.seat, "from": cl.stamp(missed),
                 "until": cl.stamp(until), "days": days, "left_days": left_days})
    return row.deadline_at


def grace(row: GameRow, now: datetime) -> datetime | None:
    """The final reminder's 24 hours after the deadline missed (at least an hour from ``now``)."""
    if running(row) is None:
        return None
    _apply(row, {"event": "grace", "at": cl.stamp(now)})
    return row.deadline_at


def expire(row: GameRow, now: datetime) -> None:
    """The policy 'notify' applied: the clock stands until a moderator decides; a move still counts."""
    current = running(row)
    if current is not None:
        _apply(row, {"event": "timeout", "at": cl.stamp(now), "seat": current.seat, "action": "notify"})
    row.deadline_at = None


def _timed_out(row: GameRow, seat: str, now: datetime, action: str) -> None:
    current = running(row)
    if current is not None and current.seat == seat:
        _apply(row, {"event": "timeout", "at": cl.stamp(now), "seat": seat, "action": action})


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
    _timed_out(row, seat, now, "drop")
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
    _timed_out(row, seat, now, "forfeit")
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


__all__ = [
    "GRACE", "POLICIES", "ClockError", "Interval", "allowance_spent", "bank_line", "before_deadline",
    "clock", "close_turn", "counts_clock_time", "current_ply", "days_used", "deadline_after",
    "deadline_policy", "default_time_control", "describe_time_control", "drop", "dropped_seats",
    "ensure_log", "entry_interval", "expire", "find_timezone", "forfeit", "format_span", "format_when",
    "generation", "grace", "is_paused", "merge_intervals", "on_vacation", "outage", "pause", "pause_reason",
    "player_zone", "playing_seats", "resume", "retime_for_vacations", "running", "running_time",
    "seat_email", "seat_vacations", "seat_zone", "set_deadline", "set_time_control", "spend", "start_clock",
    "stop_clock", "time_control", "turn", "turn_key", "vacation_days", "vacation_entry",
    "vacation_intervals", "vacations",
]
