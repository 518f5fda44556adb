"""The statements of tournaments (migration ``m0010_tournaments``), apart from ``sql.py``.

Inside a transaction they are reached as ``tx.tournaments`` (a ``TournamentTx`` on the
transaction's connection), outside one as ``store.tournament_views()`` (reads only, each in a
consistent snapshot). A tournament row is read ``for_update`` by whoever changes it, so two
workers that end the last two games of a round at once take turns, and only one of them pairs
the next round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pbem.store.common import dt_from_text, dt_to_text, json_dumps, json_loads, next_counted_id

Db = Any  # pbem.store.sql.Db (which imports this module): a connection with run, one, all, value, many

TOURNAMENT_STATUSES = ("open", "running", "paused", "over", "cancelled")
ENTRANT_STATUSES = ("entered", "withdrawn", "removed")
COLUMNS = ("id, game, format, status, organizer, created_at, updated_at, starts_at, due_at,"
           " finished_at, doc")
PREFIX = "t"  # ids t-1, t-2, ...: counted in game_counters beside the games' prefixes


@dataclass
class TournamentRow:
    id: str
    game: str
    format: str
    status: str
    organizer: str
    doc: dict[str, Any]
    created_at: datetime | None = None
    updated_at: datetime | None = None
    starts_at: datetime | None = None
    due_at: datetime | None = None
    finished_at: datetime | None = None
    entrants: list[tuple[str, str, datetime]] = field(default_factory=list)  # (email, status, since)


def _opt(value: datetime | None) -> str | None:
    return dt_to_text(value) if value is not None else None


def _row(r: Sequence[Any]) -> TournamentRow:
    return TournamentRow(id=r[0], game=r[1], format=r[2], status=r[3], organizer=r[4],
                         created_at=dt_from_text(r[5]), updated_at=dt_from_text(r[6]),
                         starts_at=dt_from_text(r[7]), due_at=dt_from_text(r[8]),
                         finished_at=dt_from_text(r[9]), doc=json_loads(r[10]))


def _check(row: TournamentRow) -> None:
    if row.status not in TOURNAMENT_STATUSES:
        raise ValueError(f"unknown tournament status {row.status!r}; expected one of "
                         f"{', '.join(TOURNAMENT_STATUSES)}")
    for _email, status, _since in row.entrants:
        if status not in ENTRANT_STATUSES:
            raise ValueError(f"unknown entrant status {status!r}")


def _with_entrants(db: Db, rows: list[TournamentRow]) -> list[TournamentRow]:
    by_id = {r.id: r for r in rows}
    ids = list(by_id)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        for tid, email, status, since in db.all(
                "SELECT tournament_id, email, status, entered_at FROM tournament_entrants"
                f" WHERE tournament_id IN ({','.join('?' * len(chunk))}) ORDER BY entered_at, email", chunk):
            by_id[tid].entrants.append((email, status, dt_from_text(since)))  # type: ignore[arg-type]
    return rows


def _list(db: Db, *, status: str | Sequence[str] | None = None, email: str | None = None,
          game: str | None = None) -> list[TournamentRow]:
    where, params = [], []
    if status is not None:
        wanted = [status] if isinstance(status, str) else list(status)
        where.append(f"status IN ({','.join('?' * len(wanted))})")
        params += wanted
    if email is not None:
        where.append("id IN (SELECT tournament_id FROM tournament_entrants WHERE email = ?)")
        params.append(email.strip().lower())
    if game is not None:
        where.append("game = ?")
        params.append(game)
    sql = f"SELECT {COLUMNS} FROM tournaments"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at, id"
    return _with_entrants(db, [_row(r) for r in db.all(sql, params)])


class TournamentTx:
    """Tournaments inside one write transaction (``tx.tournaments``)."""

    def __init__(self, db: Callable[[], Db]) -> None:
        self._db = db  # the transaction's connection; refuses once the transaction ended

    def next_id(self) -> str:
        return next_counted_id(self._db(), PREFIX, "tournaments")

    def insert(self, row: TournamentRow) -> None:
        _check(row)
        self._db().run(
            f"INSERT INTO tournaments ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.game, row.format, row.status, row.organizer, _opt(row.created_at),
             _opt(row.updated_at or row.created_at), _opt(row.starts_at), _opt(row.due_at),
             _opt(row.finished_at), json_dumps(row.doc)))
        self._write_entrants(row)

    def get(self, tournament_id: str, *, for_update: bool = False) -> TournamentRow | None:
        db = self._db()
        lock = db.dialect.for_update if for_update else ""
        found = db.one(f"SELECT {COLUMNS} FROM tournaments WHERE id = ?{lock}", (tournament_id,))
        return _with_entrants(db, [_row(found)])[0] if found else None

    def save(self, row: TournamentRow) -> None:
        _check(row)
        cur = self._db().run(
            "UPDATE tournaments SET status = ?, organizer = ?, updated_at = ?, starts_at = ?, due_at = ?,"
            " finished_at = ?, doc = ? WHERE id = ?",
            (row.status, row.organizer, _opt(row.updated_at), _opt(row.starts_at), _opt(row.due_at),
             _opt(row.finished_at), json_dumps(row.doc), row.id))
        if cur.rowcount == 0:
            raise LookupError(f"no tournament {row.id!r}")
        self._write_entrants(row)

    def _write_entrants(self, row: TournamentRow) -> None:
        db = self._db()
        db.run("DELETE FROM tournament_entrants WHERE tournament_id = ?", (row.id,))  # an address may move
        db.many("INSERT INTO tournament_entrants (tournament_id, email, status, entered_at)"
                " VALUES (?, ?, ?, ?)",
                [(row.id, email.lower(), status, dt_to_text(since)) for email, status, since in row.entrants])

    def list(self, *, status: str | Sequence[str] | None = None, email: str | None = None,
             game: str | None = None) -> list[TournamentRow]:
        return _list(self._db(), status=status, email=email, game=game)

    def due(self, until: datetime) -> list[str]:
        """Ids of the open and running tournaments the scheduler must look at by ``until``."""
        return [r[0] for r in self._db().all(
            "SELECT id FROM tournaments WHERE status IN ('open', 'running') AND due_at IS NOT NULL"
            " AND due_at <= ? ORDER BY due_at, id", (dt_to_text(until),))]

    def running(self) -> list[str]:
        return [r[0] for r in self._db().all(
            "SELECT id FROM tournaments WHERE status = 'running' ORDER BY id")]


class TournamentViews:
    """Reads outside a transaction (``store.tournament_views()``): the archive, the CLI."""

    def __init__(self, read: Callable[[], AbstractContextManager[Db]]) -> None:
        self._read = read

    def get(self, tournament_id: str) -> TournamentRow | None:
        with self._read() as db:
            found = db.one(f"SELECT {COLUMNS} FROM tournaments WHERE id = ?", (tournament_id,))
            return _with_entrants(db, [_row(found)])[0] if found else None

    def list(self, *, status: str | Sequence[str] | None = None, email: str | None = None,
             game: str | None = None) -> list[TournamentRow]:
        with self._read() as db:
            return _list(db, status=status, email=email, game=game)

    def __iter__(self) -> Iterator[TournamentRow]:
        return iter(self.list())


__all__ = ["ENTRANT_STATUSES", "TOURNAMENT_STATUSES", "TournamentRow", "TournamentTx", "TournamentViews"]
