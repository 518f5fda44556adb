"""A player's reliability: do they finish their games, and do they move in time?

Players ask for a way to avoid opponents who vanish (njudge keeps an on-time ratio, BGA karma, DGS
ladder penalties for timeouts). Per address, from the games themselves (nothing is kept apart):

* ``finished``: games over in which the player had a seat;
* ``lost_on_time``: of those, games they forfeited at a deadline, or were dropped from at one;
* ``moves`` and ``in_time``: turns of theirs that the clock log records (every game, running ones
  too) ended by their move or by their timeout, and how many of those moves came within their
  own time, before any allowance day or final reminder;
* ``time_used``: the share of the time they had that their moves used, on average.

``percent`` (games not lost on time, of the games finished) is what an open challenge may require
(``reliable 90``); a player without a finished game has lost none. The figures come from the
record's clock log (``pbem.clocks.log``, its stored values): games from before it count for
``finished`` and ``lost_on_time`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pbem.i18n import _, ngettext
from pbem.store.base import GameRow


@dataclass
class Reliability:
    player: str
    finished: int = 0
    lost_on_time: int = 0
    moves: int = 0
    in_time: int = 0
    used_share: float = 0.0  # the sum over moves with a bank of used / bank
    shared: int = 0

    @property
    def percent(self) -> float:
        """Of the finished games, the share not lost on time (100 without a finished game)."""
        return 100.0 * (self.finished - self.lost_on_time) / self.finished if self.finished else 100.0

    @property
    def in_time_percent(self) -> float | None:
        return 100.0 * self.in_time / self.moves if self.moves else None

    @property
    def time_used_percent(self) -> float | None:
        return 100.0 * self.used_share / self.shared if self.shared else None

    def as_json(self) -> dict[str, Any]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 1)
        return {"player": self.player, "finished": self.finished, "lost_on_time": self.lost_on_time,
                "reliable_percent": rounded(self.percent), "moves": self.moves, "moves_in_time": self.in_time,
                "in_time_percent": rounded(self.in_time_percent),
                "time_used_percent": rounded(self.time_used_percent)}


def _people(row: GameRow) -> dict[str, str]:
    """Seat -> address of the seats a person holds (computer seats have an engine, not a player)."""
    players = row.record.get("players") or {}
    return {s.seat: s.email for s in row.seats
            if not (isinstance(players.get(s.seat), Mapping) and players[s.seat].get("engine"))}


def _lost_on_time(row: GameRow) -> set[str]:
    result = row.record.get("result") or {}
    forfeited = result.get("forfeited") if result.get("reason") == "forfeit" else None
    seats = {str(forfeited)} if forfeited else set()
    return seats | {str(e["drop"]) for e in row.record.get("moves", [])
                    if isinstance(e, Mapping) and "drop" in e and e.get("reason") == "forfeit"}


def add(table: dict[str, Reliability], row: GameRow) -> None:
    """Count one game for every person in it."""
    people = _people(row)
    if not people:
        return
    for email in set(people.values()):
        table.setdefault(email, Reliability(email))
    if row.status == "over":
        late = _lost_on_time(row)
        for seat, email in people.items():
            table[email].finished += 1
            table[email].lost_on_time += seat in late
    seat: str | None = None
    bank = 0.0
    behind = False
    for event in row.record.get("clock_log") or []:
        kind = event.get("event")
        if kind == "start":
            seat, bank, behind = event.get("seat"), float(event.get("bank") or 0), False
        elif seat is None or seat not in people:
            continue
        elif kind in ("spend", "grace") or (kind == "timeout" and event.get("action") == "notify"):
            behind = True
        elif kind == "move" or (kind == "timeout" and event.get("action") in ("forfeit", "drop")):
            line = table[people[seat]]
            line.moves += 1
            if kind == "move":
                line.in_time += not behind
                if bank > 0:
                    line.used_share += min(1.0, float(event.get("used") or 0) / bank)
                    line.shared += 1
            seat = None


def compute(rows: Iterable[GameRow]) -> dict[str, Reliability]:
    table: dict[str, Reliability] = {}
    for row in rows:
        add(table, row)
    return table


def of_player(rows: Iterable[GameRow], email: str) -> Reliability:
    return compute(rows).get(email.lower(), Reliability(email.lower()))


def short_text(line: Reliability) -> str:
    """For listings: ``reliable 95 % of 20 games``."""
    if not line.finished:
        return _("no finished games yet")
    return ngettext("reliable {percent} % of {n} game", "reliable {percent} % of {n} games",
                    line.finished).format(percent=f"{line.percent:.0f}", n=line.finished)


def long_text(line: Reliability) -> str:
    """Everything, in a sentence or two."""
    if line.finished:
        text = ngettext("{finished} game finished, {lost} of them lost on time ({percent} % reliable).",
                        "{finished} games finished, {lost} of them lost on time ({percent} % reliable).",
                        line.finished).format(finished=line.finished, lost=line.lost_on_time,
                                              percent=f"{line.percent:.0f}")
    else:
        text = _("No finished games yet.")
    if line.moves:  # turns ended by a move or a timeout: "of 1 move" would say one was made
        text += " " + ngettext("{in_time} of {n} turn ended with a move in time ({percent} %)",
                               "{in_time} of {n} turns ended with a move in time ({percent} %)",
                               line.moves).format(
            in_time=line.in_time, n=line.moves, percent=f"{line.in_time_percent:.0f}")
        used = line.time_used_percent
        text += (_("; {percent} % of the time used on average.").format(percent=f"{used:.0f}")
                 if used is not None else ".")
    return text


__all__ = ["Reliability", "add", "compute", "long_text", "of_player", "short_text"]
