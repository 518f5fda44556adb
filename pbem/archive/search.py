"""Finding archived games: the filters shared by export, html, search and the ``history`` mail
command, and the one-line summaries all of them print.

Dates are whole UTC days (``YYYY-MM-DD``) and both ends are inclusive, because that is how people
ask ("games from 2026-01-01 to 2026-01-31"); the store's upper bound is exclusive, hence the extra day.
A game's date is when it finished, or when it was created while it has not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from engine import get_game
from engine.registry import UnknownGameError, available_games
from pbem.i18n import _, status_word
from pbem.record import place_order
from pbem.store.base import GAME_STATUSES, RESULT_FILTERS, GameRow, Store
from pbem.store.common import result_columns

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
PAGE = 1000  # rows per store query when walking a large result


class FilterError(ValueError):
    """A filter the user typed that cannot mean anything (bad date, unknown game or status)."""


@dataclass(frozen=True)
class Filters:
    player: str | None = None
    game: str | None = None
    date_from: date | None = None
    date_to: date | None = None  # inclusive
    status: str | None = None
    result: str | None = None  # a key of RESULT_FILTERS: draw, resigned, forfeit, abandoned
    winner: str | None = None  # an address that won
    loser: str | None = None  # an address that lost

    def store_args(self) -> dict[str, Any]:
        """Keyword arguments for ``Store.search_games``."""
        return {
            "player": self.player,
            "game": self.game,
            "status": self.status,
            "result": self.result,
            "winner": self.winner,
            "loser": self.loser,
            "date_from": _midnight(self.date_from) if self.date_from else None,
            "date_to": _midnight(self.date_to + timedelta(days=1)) if self.date_to else None,
        }

    def matches(self, row: GameRow) -> bool:
        """The same test in Python, for rows obtained some other way (a Tx has no search)."""
        if self.player and not any(s.email == self.player for s in row.seats):
            return False
        if self.game and row.game != self.game:
            return False
        if self.status and row.status != self.status:
            return False
        if not self._result_matches(row):
            return False
        when = game_date(row)
        if self.date_from and (when is None or when < _midnight(self.date_from)):
            return False
        return not (self.date_to and (when is None or when >= _midnight(self.date_to + timedelta(days=1))))

    def _result_matches(self, row: GameRow) -> bool:
        ending, outcomes = result_columns(row.status, row.record, [s.seat for s in row.seats])
        emails = {s.seat: s.email for s in row.seats}
        if self.result == "draw" and set(outcomes.values()) != {"draw"}:
            return False
        if self.result and self.result != "draw" and ending != RESULT_FILTERS[self.result]:
            return False
        for address, wanted in ((self.winner, "win"), (self.loser, "loss")):
            if address and not any(emails[s] == address and o == wanted for s, o in outcomes.items()):
                return False
        return True

    def describe(self) -> str:
        parts = [self.game, _("player {address}").format(address=self.player) if self.player else None,
                 _("from {day}").format(day=self.date_from.isoformat()) if self.date_from else None,
                 _("to {day}").format(day=self.date_to.isoformat()) if self.date_to else None,
                 _("status {status}").format(status=self.status) if self.status else None,
                 _("result {result}").format(result=self.result) if self.result else None,
                 _("won by {address}").format(address=self.winner) if self.winner else None,
                 _("lost by {address}").format(address=self.loser) if self.loser else None]
        return ", ".join(p for p in parts if p) or _("all games")


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def parse_date(text: str) -> date:
    text = text.strip()
    if not _DATE.match(text):
        raise FilterError(_("{text} is not a date: write YYYY-MM-DD, e.g. 2026-01-31").format(
            text=repr(text)))
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise FilterError(_("{text} is not a date: {error}").format(text=repr(text), error=exc)) from None


def check_game(name: str) -> str:
    """A game name as the store keeps it (``alien-city``), from the name or the title."""
    try:
        return get_game(name.strip().lower()).name
    except UnknownGameError:
        raise FilterError(_("unknown game {name}: games are {games}").format(
            name=repr(name), games=", ".join(available_games()))) from None


def make_filters(*, player: str | None = None, game: str | None = None, date_from: str | None = None,
                 date_to: str | None = None, status: str | None = None, result: str | None = None,
                 winner: str | None = None, loser: str | None = None) -> Filters:
    """Filters from user text, each checked with a message that says what would do."""
    if status is not None and status not in GAME_STATUSES:
        raise FilterError(f"unknown status {status!r}: statuses are {', '.join(GAME_STATUSES)}")
    if result is not None and result not in RESULT_FILTERS:
        raise FilterError(f"unknown result {result!r}: results are {', '.join(RESULT_FILTERS)}")
    for what, address in (("winner", winner), ("loser", loser)):
        if address is not None and "@" not in address:
            raise FilterError(f"--{what} takes a mail address, not {address!r}")
    start = parse_date(date_from) if date_from else None
    end = parse_date(date_to) if date_to else None
    if start and end and end < start:
        raise FilterError(_("the range {start} to {end} is empty (the end is before the start)").format(
            start=start.isoformat(), end=end.isoformat()))
    return Filters(player=player.strip().lower() if player else None,
                   game=check_game(game) if game else None, date_from=start, date_to=end,
                   status=status, result=result, winner=winner.strip().lower() if winner else None,
                   loser=loser.strip().lower() if loser else None)


def search(store: Store, filters: Filters, limit: int | None = None) -> list[GameRow]:
    """Newest first; ``limit`` None means every match."""
    return store.search_games(**filters.store_args(), limit=limit)


def iter_games(store: Store, filters: Filters) -> Iterator[GameRow]:
    """Every match, newest first, a page at a time, so exporting 100 000 games never holds them all.

    Pages are cut by date (keyset), not by offset: a game finishing during a long export would
    shift every later offset and show one game twice. Games sharing the boundary instant are
    skipped by counting them, since the store orders them by id after the date.
    """
    args = filters.store_args()
    upper = args.pop("date_to")
    edge: datetime | None = None  # date of the last game yielded
    at_edge = 0  # games yielded with exactly that date
    while True:
        bound = upper if edge is None else edge + timedelta(microseconds=1)
        rows = store.search_games(**args, date_to=bound, limit=PAGE, offset=at_edge)
        for row in rows:
            when = row.finished_at or row.created_at
            if when is not None and when == edge:
                at_edge += 1
            else:
                edge, at_edge = when, 1
            yield row
        if len(rows) < PAGE or edge is None:
            return


# --- what a game looks like in a listing -----------------------------------------------------------

def game_date(row: GameRow) -> datetime | None:
    return row.finished_at or finished_at(row.record) or row.created_at


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def finished_at(record: Mapping[str, Any]) -> datetime | None:
    """When a record's game ended: its result's time, else the time of its last logged entry."""
    result = record.get("result")
    if isinstance(result, Mapping):
        when = parse_time(result.get("at"))
        if when is not None:
            return when
    for entry in reversed(record.get("moves") or []):
        when = parse_time(entry.get("at")) if isinstance(entry, Mapping) else None
        if when is not None:
            return when
    return None


def players_of(row: GameRow) -> dict[str, str]:
    """Seat -> address, from the seats (the record's copy for rows without seats)."""
    if row.seats:
        return {s.seat: s.email for s in row.seats}
    players = row.record.get("players") or {}
    return {seat: str(info.get("email", "")) for seat, info in players.items()}


def result_text(record: Mapping[str, Any], status: str) -> str:
    """E.g. "black wins", "draw (black, white)", "red resigned; blue, green win", "active"."""
    result = record.get("result")
    if not isinstance(result, Mapping):
        return status
    reason = str(result.get("reason", ""))
    winners = [str(w) for w in result.get("winners") or []]
    if reason in ("declined", "cancelled"):
        by = result.get("by")
        word = status_word(reason)
        if result.get("bounced"):
            return _("cancelled: mail to {player} bounced").format(player=result["bounced"])
        return _("{what} by {player}").format(what=word, player=by) if by else word
    if not winners:
        text = _("no winner")
    elif len(winners) == 1:
        text = _("{player} wins").format(player=winners[0])
    else:
        players = record.get("players") or {}
        everyone = len(players) and set(winners) == set(players)
        text = (_("draw: {players}") if everyone or len(players) == 2 else _("shared win: {players}")).format(
            players=", ".join(winners))
    if reason == "resigned" and result.get("resigned"):
        text = _("{player} resigned; {result}").format(player=result["resigned"], result=text)
    elif reason == "abandoned by agreement":
        text = _("abandoned by agreement")
    elif reason == "agreed draw":
        text = _("agreed draw: {players}").format(players=", ".join(winners))
    elif reason == "forfeit" and result.get("forfeited"):
        text = _("{player} forfeited; {result}").format(player=result["forfeited"], result=text)
    elif reason and reason not in ("scored", "resigned"):
        text = f"{text} ({reason})"
    totals = result.get("totals")
    if isinstance(totals, Mapping) and totals:  # in place order, the winners' first
        order = place_order(totals, winners, result.get("ranking"))
        text += " [" + " ".join(f"{s} {totals[s]}" for s in order) + "]"
    return text


def summary(row: GameRow) -> dict[str, Any]:
    """The JSON form of a listed game (``search --json``, ``index.json``)."""
    ended = row.status in ("over", "declined", "cancelled")
    when = row.finished_at or (finished_at(row.record) if ended else None)
    return {
        "id": row.id,
        "game": row.game,
        "status": row.status,
        "players": players_of(row),
        "result": row.record.get("result"),
        "result_text": result_text(row.record, row.status),
        "created": _iso(row.created_at),
        "finished": _iso(when),
        "plies": sum(1 for e in row.record.get("moves", []) if "move" in e),
    }


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def _cells(cells: list[str], indent: int, width: int = 78) -> str:
    """Comma-separated cells on indented lines of at most ``width`` columns, never splitting a cell
    (a player's seat and address stay together)."""
    lines = [" " * indent]
    for n, cell in enumerate(cells):
        text = cell + ("," if n < len(cells) - 1 else "")
        if lines[-1].strip() and len(lines[-1]) + 1 + len(text) > width:
            lines.append(" " * indent)
        lines[-1] += ("" if not lines[-1].strip() else " ") + text
    return "\n".join(lines)


def table(rows: Iterable[GameRow]) -> str:
    """A plain-text table that survives mail clients (ASCII, fixed columns, long cells last)."""
    lines = []
    for row in rows:
        when = game_date(row)
        day = when.strftime("%Y-%m-%d") if when else "-"
        players = _cells([f"{seat} {email}" for seat, email in players_of(row).items()], 10)
        lines.append(f"{row.id:<9} {row.game:<14} {day:<10} {result_text(row.record, row.status)}"
                     f"\n{players}")
    if not lines:
        return "(no games)"
    head = f"{'ID':<9} {'GAME':<14} {'DATE':<10} RESULT\n{'':<9} PLAYERS"
    return head + "\n" + "\n".join(lines)


__all__ = ["FilterError", "Filters", "check_game", "finished_at", "game_date", "iter_games",
           "make_filters", "parse_date", "parse_time", "players_of", "result_text", "search",
           "summary", "table"]
