"""The clock log as the others see it: every counted time kept, a player's reasons and dates not.

A turn's ``start`` event holds the mover's vacations as then known (``away``), and an ``away`` event
their vacations changed during the turn: their holiday dates, planned ones too, and the days of
allowance spent when their time ran out in another game. A ``spend`` event holds how many allowance
days the player has left. None of it is the opponents' business, nor the public's, yet a record
given out must still replay: ``pbem replay --clock`` recomputes every bank and deadline from it.

So a record given to anyone but the moderators (the attachment of a game mail, ``pbem archive
export --public``, the archive site's JSON) carries ``public_log`` instead:

* each turn keeps, of its player's absences, only the stretches inside the turn as the server
  showed it, from its start to the later of its end and the latest deadline it announced (everyone
  in the game could see the clock stand still then: their ``games`` listing shows the deadline).
  Vacations before or after, and planned ones beyond that deadline, are gone. What is kept is
  named ``off`` (the start's field, and the event that was ``away``), time that did not count on
  the player's clock, without saying why;
* a ``spend`` event keeps when the clock stopped, not the days spent or left (a day spent for
  another game would tell of a timeout there);
* a ``start`` event keeps the player's timezone only where it decides what counts (weekends or
  nights off): elsewhere it says where the player lives, and nothing more.

Every value the log stores follows from the absences up to that turn's latest time, so each one
replays as it was: the check still agrees, the counted time is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pbem.clocks import control as tc
from pbem.clocks import log as cl
from pbem.clocks.counted import Interval

PRIVATE_SPEND = ("days", "left_days")


def _clip(items: list[Interval], start: datetime, end: datetime) -> list[Interval]:
    return [(max(a, start), min(b, end)) for a, b in items if b > start and a < end]


def _window(turn: Sequence[Mapping[str, Any]]) -> tuple[datetime, datetime]:
    """From the turn's start to the latest moment any of its stored values depends on."""
    times = [cl.moment(str(e["at"])) for e in turn]
    times += [cl.moment(e["deadline"]) for e in turn if isinstance(e.get("deadline"), str)]
    return times[0], max(times)


def _turns(log: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """(first, last) index of each turn: its ``start`` up to the event that ends it, or to the
    event before the next start (a turn still running)."""
    starts = [i for i, e in enumerate(log) if e.get("event") == "start"]
    spans = []
    for n, first in enumerate(starts):
        bound = starts[n + 1] if n + 1 < len(starts) else len(log)
        last = next((i for i in range(first + 1, bound) if cl.ends_turn(log[i])), bound - 1)
        spans.append((first, last))
    return spans


def _control_at(log: Sequence[Mapping[str, Any]], index: int) -> dict[str, Any]:
    for i in range(index - 1, -1, -1):
        if log[i].get("event") == "control":
            return tc.normalize(log[i].get("control"))
    return tc.normalize(None)


def public_log(log: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The log with every player's absences cut to their own turns, unnamed (see the module)."""
    out = [dict(event) for event in log]
    for event in out:
        if event.get("event") == "spend":
            for key in PRIVATE_SPEND:
                event.pop(key, None)
    for first, last in _turns(out):
        turn = out[first:last + 1]
        try:
            start, end = _window(turn)
        except (KeyError, TypeError, ValueError):
            start = end = None  # an unreadable turn: its absences go, the replay says what is wrong
        for event in turn:
            if event.get("event") == "start":
                away = event.pop("away", None)
                if tc.counts_all_hours(_control_at(out, first)):
                    event.pop("zone", None)
                kept = _kept(away, start, end)
                if kept:
                    event["off"] = kept
            elif event.get("event") == "away":
                event["event"] = "off"
                event["intervals"] = _kept(event.get("intervals"), start, end)
    for event in out:  # outside any turn (a log that does not begin with one): nothing to keep
        if event.get("event") == "away":
            event["event"] = "off"
            event["intervals"] = []
    return out


def _kept(items: Any, start: datetime | None, end: datetime | None) -> list[list[str]]:
    if start is None or end is None:
        return []
    try:
        return cl.interval_texts(_clip(cl.intervals_of(items), start, end))
    except (TypeError, ValueError):
        return []


def others_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """``view`` (a record already stripped of its private keys) with its clock log as the others
    see it; a new dict, ``view`` itself unchanged."""
    shown = dict(view)
    if isinstance(view.get(cl.LOG), list):
        shown[cl.LOG] = public_log(view[cl.LOG])
    return shown


__all__ = ["others_view", "public_log"]
