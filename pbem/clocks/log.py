"""The clock log: every event of a game's move clocks, kept in the record as ``record["clock_log"]``.

A bank or a deadline is never stored as a bare number to be trusted: it follows from the events,
in order, the same way live and in a replay. Each event holds the time it happened (``at``, UTC,
to the microsecond) and what it was; the values it determines (the bank at a turn's start, the
time a move used and the bank left, the deadline after the event) are written into it as well, so
that ``pbem replay`` can recompute every one of them from the times alone and say whether they
agree (``replay``).

Events (``event``, then its fields):

* ``control`` ``control``: the time control from the next turn on (the first event of a game; a
  moderator's change later resets every bank to the new control's start).
* ``start`` ``seat zone [away] [paused]`` -> ``bank deadline``: a turn begins. ``zone`` is the
  player's timezone (their weekends and nights), ``away`` their vacations as then known.
* ``move`` ``seat`` -> ``used left``: the player's move arrived (``at``: when it was received);
  the turn ends, the bank is charged (and a Fischer bank gets its increment).
* ``end`` ``seat why`` -> ``used left``: the turn ended without the player's move (an undo, a
  rollback, the end of the game): charged, nothing added.
* ``away`` ``intervals`` -> ``deadline``: the player's vacations changed during their turn; they
  count from ``at`` on (what has passed stays as it was).
* ``off`` (and a start's ``off``): ``away`` as a record given to others has it, cut to the
  player's own turn and not saying why (``pbem.clocks.privacy``); read the same way.
* ``spend`` ``from until days left_days`` -> ``deadline``: the time was up (at ``from``, the deadline
  missed) and a day of the player's vacation allowance was spent: the clock does not run from
  ``from`` to ``until``.
* ``pause`` ``why`` / ``resume`` -> ``deadline``: a moderator's (or a bounce's) stop.
* ``outage`` ``from`` -> ``deadline``: the server was down from ``from`` to ``at``; not counted.
* ``deadline`` ``until`` -> ``deadline``: a moderator's deadline (wall-clock time from ``at``,
  moved past vacations and pauses).
* ``grace`` -> ``deadline``: the final reminder: 24 hours after the deadline missed (at least an
  hour from now).
* ``timeout`` ``seat action`` -> ``deadline`` or ``used left``: the time was up and the policy
  applied: ``notify`` stops the clock (a move is still taken); ``forfeit`` and ``drop`` end the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pbem.clocks import control as tc
from pbem.clocks.counted import Interval, OffTime, counted, merge, moment_after, wall_after

LOG = "clock_log"
GRACE = timedelta(hours=24)
ENDING = ("move", "end")  # events that always end a turn (a timeout may, see ``ends_turn``)
_SECOND = timedelta(seconds=1)


class LogError(ValueError):
    """An event that does not fit the log (no turn running, another seat's turn)."""


def stamp(when: datetime) -> str:
    """A time as the log keeps it: UTC, to the microsecond (``2026-11-20T10:00:00Z``)."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise LogError(f"a clock time must be timezone-aware, not {when!r}")
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def seconds(span: timedelta) -> float:
    return tc.number(round(span.total_seconds(), 6))


def zone_of(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def ends_turn(event: Mapping[str, Any]) -> bool:
    return event.get("event") in ENDING or (event.get("event") == "timeout"
                                            and event.get("action") in ("forfeit", "drop"))


def intervals_of(items: Any) -> list[Interval]:
    return [(moment(a), moment(b)) for a, b in items or []]


def after(items: list[Interval], at: datetime) -> list[Interval]:
    """The parts of ``items`` from ``at`` on."""
    return merge((max(a, at), b) for a, b in items if b > at)


def interval_texts(items: list[Interval]) -> list[list[str]]:
    return [[stamp(a), stamp(b)] for a, b in merge(items)]


@dataclass
class Turn:
    """The clock of the seat to move, from its ``start`` event on."""

    seat: str
    started: datetime
    bank: timedelta
    control: dict[str, Any]
    zone: str = "UTC"
    away: list[Interval] = field(default_factory=list)  # the player's vacations
    pauses: list[Interval] = field(default_factory=list)  # closed pauses, outages, spent allowance
    paused_at: datetime | None = None
    override: tuple[datetime, datetime, bool] | None = None  # (at, until, fixed): a set deadline
    expired: bool = False  # the policy 'notify' applied: no deadline until a moderator sets one
    spends: int = 0  # allowance days that stopped this turn's clock (spent for it or for another game)
    graced: bool = False

    def off(self, until: datetime | None = None) -> OffTime:
        """Whatever does not count in this turn, up to ``until`` for a pause still open."""
        pauses = [*self.pauses, *self.away]
        if self.paused_at is not None and until is not None:
            pauses.append((self.paused_at, until))
        return OffTime(zone=zone_of(self.zone), weekends=bool(self.control.get("weekends_off")),
                       nights=bool(self.control.get("nights_off")), pauses=tuple(pauses))

    def used(self, at: datetime) -> timedelta:
        """The clock time this turn has taken by ``at``."""
        return counted(self.off(at), self.started, at)

    def left(self, at: datetime) -> timedelta:
        """What is left of the bank at ``at`` (never below zero)."""
        return max(self.bank - self.used(at), timedelta(0))

    def stands_still(self, at: datetime) -> datetime | None:
        """When the clock does not run at ``at`` (a weekend, a night, a vacation, a day of allowance
        spent): the moment it runs again. None while it runs, and while a moderator's pause is open
        (nobody knows its end yet)."""
        if self.paused_at is not None:
            return None
        off, span = self.off(), timedelta(days=3)
        while span <= timedelta(days=800):
            found = off.intervals(at, at + span)
            if not found or found[0][0] > at:
                return None
            if found[0][1] < at + span:
                return found[0][1]
            span *= 2
        return None

    def deadline(self) -> datetime | None:
        if self.expired or self.paused_at is not None:
            return None
        if self.override is not None:
            at, until, fixed = self.override
            pauses = self.pauses if fixed else [*self.pauses, *self.away]
            return wall_after(pauses, at, until - at)
        return moment_after(self.off(), self.started, self.bank)

    @property
    def late(self) -> bool:
        """The turn went past its own time (allowance spent, final reminder, policy applied)."""
        return bool(self.spends or self.graced or self.expired)


BankLookup = Callable[[str, Mapping[str, Any]], timedelta]


@dataclass
class Fold:
    """Events applied in order: the control in force, every seat's bank, the turn now running.

    ``bank_of`` says what a seat has at the start of a turn; a full replay keeps the banks itself,
    the live server reads them back from the log (``live``)."""

    control: dict[str, Any] | None = None
    banks: dict[str, timedelta] = field(default_factory=dict)
    turn: Turn | None = None
    bank_of: BankLookup | None = None
    last: Turn | None = None  # the latest turn, also once it has ended (was it paused at its end?)

    def _bank(self, seat: str, control: Mapping[str, Any]) -> timedelta:
        if not tc.carries_over(control):
            return tc.initial_bank(control)
        if self.bank_of is not None:
            return self.bank_of(seat, control)
        return self.banks.get(seat, tc.initial_bank(control))

    def step(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Apply one event; returns the values it determines, as the log stores them."""
        kind = event.get("event")
        at = moment(event["at"])
        if kind == "control":
            self.control = tc.normalize(event.get("control"))
            self.banks.clear()
            return {}
        if kind == "start":
            control = self.control or tc.normalize(None)
            turn = Turn(seat=str(event["seat"]), started=at, bank=self._bank(str(event["seat"]), control),
                        control=dict(control), zone=str(event.get("zone") or "UTC"),
                        away=intervals_of(event.get("away", event.get("off"))),
                        paused_at=at if event.get("paused") else None)
            self.turn = self.last = turn
            return {"bank": seconds(turn.bank), "deadline": _text(turn.deadline())}
        turn = self.turn
        if turn is None:
            raise LogError(f"{kind} at {event['at']}: no turn is running")
        if "seat" in event and event["seat"] != turn.seat:
            raise LogError(f"{kind} at {event['at']}: {event['seat']} is not the seat to move ({turn.seat})")
        if ends_turn(event):
            used = turn.used(at)
            closing = tc.after_move if kind == "move" else tc.after_end
            left = closing(turn.control, turn.bank, used)
            self.banks[turn.seat] = left
            self.turn = None
            return {"used": seconds(used), "left": seconds(left)}
        if kind in ("away", "off"):  # from now on; what has passed stays as it was
            past = [(a, min(b, at)) for a, b in turn.away if a < at]
            turn.away = merge([*past, *after(intervals_of(event.get("intervals")), at)])
        elif kind == "spend":
            turn.pauses.append((moment(event.get("from") or event["at"]), moment(event["until"])))
            turn.spends += 1
        elif kind == "pause":
            if turn.paused_at is None:
                turn.paused_at = at
        elif kind == "resume":
            if turn.paused_at is not None:
                turn.pauses.append((turn.paused_at, at))
                turn.paused_at = None
        elif kind == "outage":
            turn.pauses.append((moment(event["from"]), at))
        elif kind == "deadline":
            if turn.paused_at is not None:
                turn.pauses.append((turn.paused_at, at))
                turn.paused_at = None
            turn.override = (at, moment(event["until"]), bool(event.get("fixed")))
            turn.expired = False
        elif kind == "grace":
            missed = turn.deadline() or at
            turn.override = (at, max(missed + GRACE, at + GRACE / 24), True)
            turn.graced = True
        elif kind == "timeout":
            turn.expired = True
        else:
            raise LogError(f"unknown clock event {kind!r}")
        return {"deadline": _text(turn.deadline())}


def _text(when: datetime | None) -> str | None:
    return stamp(when) if when is not None else None


# --- the live server: append events, read the running turn -------------------------------------------------

def events(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    log = record.get(LOG)
    return log if isinstance(log, list) else []


def _last_start(log: list[dict[str, Any]]) -> int | None:
    for index in range(len(log) - 1, -1, -1):
        if log[index].get("event") == "start":
            return index
    return None


def _control_before(log: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    for i in range(index - 1, -1, -1):
        if log[i].get("event") == "control":
            return tc.normalize(log[i].get("control"))
    return None


def live(record: Mapping[str, Any]) -> Fold:
    """The fold as it stands after the last event, read from the log's stored values: the running
    turn is folded from its ``start`` (whose bank was stored), a seat's bank is the ``left`` of its
    latest ended turn. What ``replay`` recomputes from the beginning, this trusts."""
    log = events(record)

    def bank_of(seat: str, control: Mapping[str, Any]) -> timedelta:
        for event in reversed(log):
            if event.get("event") == "control":
                break
            if event.get("seat") == seat and ends_turn(event) and "left" in event:
                return timedelta(seconds=float(event["left"]))
        return tc.initial_bank(control)

    start = _last_start(log)
    fold = Fold(bank_of=bank_of)
    if start is None:
        controls = [e for e in log if e.get("event") == "control"]
        fold.control = tc.normalize(controls[-1].get("control")) if controls else None
        return fold
    fold.control = _control_before(log, start)
    first = log[start]
    fold.turn = Turn(seat=str(first["seat"]), started=moment(first["at"]),
                     bank=timedelta(seconds=float(first.get("bank", 0))),
                     control=dict(fold.control or tc.normalize(None)),
                     zone=str(first.get("zone") or "UTC"), away=intervals_of(first.get("away")),
                     paused_at=moment(first["at"]) if first.get("paused") else None)
    fold.last = fold.turn
    for event in log[start + 1:]:
        fold.step(event)
    return fold


def running(record: Mapping[str, Any]) -> Turn | None:
    return live(record).turn


def append(record: dict[str, Any], event: dict[str, Any], fold: Fold | None = None) -> dict[str, Any]:
    """Add an event (``event`` and ``at`` set by the caller), with the values it determines.
    ``fold``: ``live(record)`` as the caller has just read it, no event added since (it is stepped
    on, so it is used up): a move's clock reads the log once to end the turn, not twice."""
    values = (fold or live(record)).step(event)
    stored = {**event, **values}
    record.setdefault(LOG, []).append(stored)
    return stored


def deadline_of(stored: Mapping[str, Any]) -> datetime | None:
    value = stored.get("deadline")
    return moment(value) if isinstance(value, str) else None


# --- replay: every value recomputed from the times alone ------------------------------------------------

@dataclass
class Checked:
    """One event of a replay: what it stores, what the times give, and where the two differ."""

    index: int
    event: dict[str, Any]
    values: dict[str, Any]
    turn: Turn | None
    differences: dict[str, tuple[Any, Any]]  # key -> (stored, recomputed)


def _same(key: str, stored: Any, computed: Any) -> bool:
    if stored is None or computed is None:
        return stored is computed
    if key == "deadline":
        return moment(stored) == moment(computed)
    return abs(float(stored) - float(computed)) < 1e-6


def replay(record: Mapping[str, Any]) -> Iterator[Checked]:
    """Every event in turn, with the banks and deadlines recomputed from the beginning."""
    fold = Fold()
    for index, event in enumerate(events(record)):
        try:
            values = fold.step(event)
        except (LogError, KeyError, ValueError, TypeError) as exc:
            yield Checked(index, event, {}, fold.turn, {"event": (event.get("event"), f"unreadable: {exc}")})
            continue
        differences = {key: (event.get(key), value) for key, value in values.items()
                       if key in event and not _same(key, event.get(key), value)}
        differences.update({key: (None, value) for key, value in values.items() if key not in event})
        yield Checked(index, event, values, fold.turn, differences)


def check(record: Mapping[str, Any]) -> list[Checked]:
    """The events whose stored values the times do not give (empty: the log is consistent)."""
    return [item for item in replay(record) if item.differences]


def final_deadline(record: Mapping[str, Any]) -> datetime | None:
    """The deadline the whole log gives now, for comparing with the stored ``deadline_at``."""
    turn = None
    for item in replay(record):
        turn = item.turn
    return turn.deadline() if turn is not None else None


def seat_banks(record: Mapping[str, Any]) -> dict[str, timedelta]:
    """Each seat's bank as the replay leaves it (the running turn's at its start)."""
    fold = Fold()
    for event in events(record):
        fold.step(event)
    banks = dict(fold.banks)
    if fold.turn is not None:
        banks[fold.turn.seat] = fold.turn.bank
    return banks


__all__ = ["GRACE", "LOG", "Checked", "Fold", "LogError", "Turn", "after", "append", "check", "deadline_of",
           "ends_turn", "events", "final_deadline", "interval_texts", "intervals_of", "live", "moment",
           "replay", "running", "seat_banks", "seconds", "stamp", "zone_of"]
