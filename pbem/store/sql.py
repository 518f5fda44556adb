"""The store's SQL, written once for SQLite and PostgreSQL.

Both backends run the statements of this module; what truly differs between the two databases is a
``Dialect`` (placeholders, row locks, a JSON lookup, transient errors) and the connection handling
of each backend module (``sqlite.py``: one file, WAL, a process lock; ``postgres.py``: a server,
row locks, advisory locks). Statements are written with ``?`` placeholders; the PostgreSQL dialect
turns them into ``%s`` once per statement.

Row locks: ``FOR UPDATE`` / ``FOR UPDATE SKIP LOCKED`` are empty strings in SQLite, where a write
transaction (``BEGIN IMMEDIATE``) already excludes every other writer, so the same statement is
right in both.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pbem.store import locked_game
from pbem.store import migrations as _migrations
from pbem.store.allowances import AllowanceStatements
from pbem.store.base import (
    GAME_STATUSES,
    INBOUND_STATUSES,
    RESULT_FILTERS,
    AcceptResult,
    AddressChange,
    GameRow,
    Inbound,
    Outbound,
    OutboxBatch,
    Seat,
    Worker,
)
from pbem.store.common import (
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    StoreUnavailableError,
    dt_from_text,
    dt_to_text,
    intake_keys,
    json_dumps,
    json_loads,
    next_counted_id,
    now_utc,
    result_columns,
    sha256_hex,
)
from pbem.store.player_blocks import PlayerBlocksTx
from pbem.store.pruning import MailPruning
from pbem.store.tournaments import TournamentTx, TournamentViews

INBOUND_COLS = ("id, raw, source, received_at, message_id, sha256, status, outcome, envelope_from,"
                " original_size, sender")
OUTBOUND_COLS = ("id, message_id, sender, recipients, raw, created_at, attempts, next_attempt_at,"
                 " sent_at, last_error, given_up_at")
#: ``pruned_at`` (migration 12) comes after ``raw``: read only where a pruned row may be among the
#: rows read (a pending message is never pruned), after these columns
PRUNED = ", pruned_at"
GAME_COLS = ("id, game, status, record, created_at, updated_at, to_move, thread_id, deadline_at,"
             " finished_at")
SEAT_COLS = "game_id, seat, email, name, token_hash, accepted"
WORKER_COLS = "id, host, pid, started_at, seen_at, roles"

SCHEMA_VERSION_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

_INSERT_INBOUND = (
    "INSERT INTO inbound (message_id, sha256, source, source_ref, received_at, status, sender,"
    " envelope_from, original_size, game_id, raw) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?,"
    " (SELECT game_id FROM seats WHERE token_hash = ? AND token_hash <> ''), ?)"
    " ON CONFLICT DO NOTHING RETURNING id, game_id")
_GIVE_UP = ("UPDATE outbound SET attempts = attempts + 1, last_error = ?, given_up_at = ?"
            " WHERE id = ? AND sent_at IS NULL")
#: An address's settings, whether the moderators blocked it and whether our mail to it bounces.
_ADDRESS_FACTS = ("SELECT (SELECT settings FROM players WHERE email = ?),"
                  " CASE WHEN EXISTS (SELECT 1 FROM blocked WHERE email = ?) THEN 1 ELSE 0 END,"
                  " CASE WHEN EXISTS (SELECT 1 FROM bouncing WHERE email = ?) THEN 1 ELSE 0 END")
_FIND_INBOUND = ("SELECT id, status FROM inbound WHERE sha256 = ? OR message_id = ?"
                 " ORDER BY id LIMIT 1")

#: A pending message is free to take when no earlier message of its game is still pending: one
#: game's mail is applied in arrival order, one at a time (the game row lock does the rest). The
#: fence keeps the test a lookup of the message's own game: joined instead, PostgreSQL planned it
#: on statistics from before a backlog as a scan of every pending message per claim.
_CLAIMABLE = ("i.status = 'pending' AND NOT EXISTS (SELECT 1 FROM inbound e WHERE e.game_id = i.game_id"
              " AND e.status = 'pending' AND e.id < i.id{fence})")


@dataclass(frozen=True)
class Dialect:
    """What differs between the two databases in the statements of this module."""

    name: str
    for_update: str  # appended to a SELECT that locks the rows it reads
    skip_locked: str  # ... and skips rows another transaction has locked
    json_text: Callable[[str, str], str]  # SQL for the text of a JSON object's key
    transient: tuple[type[BaseException], ...]  # driver errors worth retrying later
    is_transient: Callable[[BaseException], bool]
    # after rows were inserted with their ids: the statement that moves the id counter past them
    reset_identity: Callable[[str], str | None] = lambda table: None
    fence: str = ""  # ends a subquery the planner must not merge into the query around it
    format_params: bool = False  # "%s" placeholders instead of "?"
    #: The driver's cursor tells the id an INSERT gave (sqlite3's ``lastrowid``): no RETURNING,
    #: whose result rows SQLite collects in a table of their own (3 us of a move's 35 us INSERT).
    last_row_id: bool = False
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def sql(self, statement: str) -> str:
        if not self.format_params:
            return statement
        converted = self._cache.get(statement)
        if converted is None:
            converted = statement.replace("%", "%%").replace("?", "%s")
            self._cache[statement] = converted
        return converted


class Db:
    """A connection seen through a dialect: ``?`` statements, and driver errors that only say
    "try again later" turned into ``StoreUnavailableError``."""

    __slots__ = ("conn", "dialect")
    #: Its writes are held back until a commit under the lock (``pbem.store.optimistic``): what a
    #: write would return (an id) is not known yet.
    holds_writes = False

    def __init__(self, conn: Any, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def run(self, statement: str, params: Sequence[Any] | None = None) -> Any:
        """Without ``params`` the statement goes as it is (and may then be several statements)."""
        try:
            if params is None:
                return self.conn.execute(statement)
            return self.conn.execute(self.dialect.sql(statement), params)
        except self.dialect.transient as exc:
            if self.dialect.is_transient(exc):
                raise StoreUnavailableError(f"{type(exc).__name__}: {exc}".strip()) from exc
            raise

    def many(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        try:
            self.conn.cursor().executemany(self.dialect.sql(statement), rows)
        except self.dialect.transient as exc:
            if self.dialect.is_transient(exc):
                raise StoreUnavailableError(f"{type(exc).__name__}: {exc}".strip()) from exc
            raise

    def one(self, statement: str, params: Sequence[Any] | None = None) -> Any:
        return self.run(statement, params).fetchone()

    def all(self, statement: str, params: Sequence[Any] | None = None) -> list[Any]:
        return self.run(statement, params).fetchall()

    def value(self, statement: str, params: Sequence[Any] | None = None) -> Any:
        row = self.one(statement, params)
        return row[0] if row else None


# --- rows -----------------------------------------------------------------------------------------


def check_status(status: str, allowed: Sequence[str], what: str) -> None:
    if status not in allowed:
        raise ValueError(f"unknown {what} status {status!r}; expected one of {', '.join(allowed)}")


def opt_dt(value: datetime | None) -> str | None:
    return dt_to_text(value) if value is not None else None


def inbound_of(row: Sequence[Any]) -> Inbound:
    return Inbound(id=row[0], raw=bytes(row[1]), source=row[2],
                   received_at=dt_from_text(row[3]),  # type: ignore[arg-type]
                   message_id=row[4], sha256=row[5], status=row[6], outcome=row[7],
                   envelope_from=row[8], original_size=row[9], sender=row[10],
                   pruned_at=dt_from_text(row[11]) if len(row) > 11 else None)


def outbound_of(row: Sequence[Any]) -> Outbound:
    return Outbound(id=row[0], message_id=row[1], sender=row[2], recipients=json_loads(row[3]),
                    raw=b"" if row[4] is None else bytes(row[4]),  # None: not read (yet)
                    created_at=dt_from_text(row[5]),  # type: ignore[arg-type]
                    attempts=row[6], next_attempt_at=dt_from_text(row[7]),
                    sent_at=dt_from_text(row[8]), last_error=row[9],
                    given_up_at=dt_from_text(row[10]),
                    pruned_at=dt_from_text(row[11]) if len(row) > 11 else None)


def seat_of(row: Sequence[Any]) -> Seat:
    return Seat(seat=row[1], email=row[2], name=row[3], token_hash=row[4], accepted=bool(row[5]))


def worker_of(row: Sequence[Any]) -> Worker:
    return Worker(id=row[0], host=row[1], pid=int(row[2]),
                  started_at=dt_from_text(row[3]),  # type: ignore[arg-type]
                  seen_at=dt_from_text(row[4]),  # type: ignore[arg-type]
                  roles=[r for r in str(row[5]).split(",") if r])


def game_of(r: Sequence[Any]) -> GameRow:
    """A game from the ``GAME_COLS`` at the start of a row (its seats come separately)."""
    return GameRow(id=r[0], game=r[1], status=r[2], record=json_loads(r[3]),
                   created_at=dt_from_text(r[4]), updated_at=dt_from_text(r[5]),
                   to_move=r[6], thread_id=r[7], deadline_at=dt_from_text(r[8]),
                   finished_at=dt_from_text(r[9]))


def load_games(db: Db, rows: Iterable[Sequence[Any]]) -> list[GameRow]:
    games = [game_of(r) for r in rows]
    by_id = {g.id: g for g in games}
    ids = list(by_id)
    for i in range(0, len(ids), 500):  # stay well below SQLite's bound-parameter limit
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.all(f"SELECT {SEAT_COLS} FROM seats WHERE game_id IN ({marks})"
                          " ORDER BY game_id, position", chunk):
            by_id[row[0]].seats.append(seat_of(row))
    return games


_N_GAME_COLS = len(GAME_COLS.split(","))
# A game and its seats in one statement (a row per seat, the game's columns repeated): a move reads
# its game several times, and each statement is a round trip to PostgreSQL.
_GAME_AND_SEATS = ("SELECT " + ", ".join(f"g.{c.strip()}" for c in GAME_COLS.split(",")) + ", "
                   + ", ".join(f"s.{c.strip()}" for c in SEAT_COLS.split(","))
                   + " FROM games g LEFT JOIN seats s ON s.game_id = g.id WHERE g.id = ? ORDER BY s.position")


def get_game(db: Db, game_id: str, lock: str = "") -> GameRow | None:
    """With a ``lock`` (PostgreSQL's FOR UPDATE) the seats are read by a statement of their own
    once the lock is held: a statement that waited for the lock sees the game row as its holder
    left it, but the rows it joins only as they were when it began."""
    if lock:
        row = db.one(f"SELECT {GAME_COLS} FROM games WHERE id = ?{lock}", (game_id,))
        return load_games(db, [row])[0] if row else None
    rows = db.all(_GAME_AND_SEATS, (game_id,))
    if not rows:
        return None
    game = game_of(rows[0])
    game.seats = [seat_of(r[_N_GAME_COLS:]) for r in rows if r[_N_GAME_COLS] is not None]
    return game


def search_games(db: Db, *, player: str | None = None, game: str | None = None,
                 date_from: datetime | None = None, date_to: datetime | None = None,
                 status: str | None = None, limit: int | None = None,
                 offset: int = 0, result: str | None = None, winner: str | None = None,
                 loser: str | None = None) -> list[GameRow]:
    """One query for the archive search, shaped to use the indexes of migrations 3 and 6."""
    date = "COALESCE(finished_at, created_at)"
    where, params = [], []
    if player:
        where.append("id IN (SELECT game_id FROM seats WHERE email = ?)")
        params.append(player.strip().lower())
    if game:
        where.append("game = ?")
        params.append(game)
    if status:
        where.append("status = ?")
        params.append(status)
    if result is not None:
        if result not in RESULT_FILTERS:
            raise ValueError(f"unknown result filter {result!r}; expected one of {', '.join(RESULT_FILTERS)}")
        if RESULT_FILTERS[result] is None:
            where.append("id IN (SELECT game_id FROM seats WHERE outcome = 'draw')")
        else:
            where.append("ending = ?")
            params.append(RESULT_FILTERS[result])
    for address, outcome in ((winner, "win"), (loser, "loss")):
        if address:
            where.append(f"id IN (SELECT game_id FROM seats WHERE email = ? AND outcome = '{outcome}')")
            params.append(address.strip().lower())
    if date_from is not None:
        where.append(f"{date} >= ?")
        params.append(dt_to_text(date_from))
    if date_to is not None:
        where.append(f"{date} < ?")
        params.append(dt_to_text(date_to))
    sql = f"SELECT {GAME_COLS} FROM games"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {date} DESC, id DESC"
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return load_games(db, db.all(sql, params))


def filters_of(function: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A method that passes its keywords on to ``function`` (after the connection) shows
    ``function``'s keywords as its own signature: the interface check and help() see them, and
    they are written once."""
    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(function)
        self = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        method.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[self, *list(signature.parameters.values())[1:]])
        return method
    return decorate


def intake_row(raw: bytes, source: str, now: datetime, ref: str | None,
               envelope_from: str | None = None, original_size: int | None = None) -> tuple[Any, ...]:
    """What ``accept_one`` stores, worked out before the write transaction (which holds the lock
    every writer waits for)."""
    raw = bytes(raw)
    message_id, sender, route = intake_keys(raw)
    return (message_id, sha256_hex(raw), source, ref, dt_to_text(now), sender, envelope_from,
            original_size, route, raw)


def accept_one(db: Db, row: tuple[Any, ...]) -> AcceptResult:
    """Store a message unless its bytes or Message-ID are known. The insert goes first (a conflict
    does nothing), so two workers storing the same message at once both end with the one row."""
    inserted = db.one(_INSERT_INBOUND, row)
    if inserted is not None:
        return AcceptResult(inbound_id=int(inserted[0]), new=True, status="pending", game_id=inserted[1])
    found = db.one(_FIND_INBOUND, (row[1], row[0]))  # sha256, Message-ID
    if found is None:  # a conflict with a row not visible to this transaction yet: try later
        raise StoreUnavailableError("the same message is being stored by another worker")
    return AcceptResult(inbound_id=int(found[0]), new=False, status=found[1])


# --- one transaction ------------------------------------------------------------------------------


class SqlTx(AllowanceStatements, PlayerBlocksTx):
    """One open write transaction; unusable once its ``with`` block has ended, so a leaked reference
    cannot write outside the transaction it was meant for.

    Within it, what it read and nobody else can change until it ends is remembered: a player's
    settings, whether the address is blocked or bounces (one mail asks for the same players'
    settings a dozen times; every question to PostgreSQL is a round trip), and for a game it
    locked: the seats (so saving a move, which never changes them, does not rewrite them), the
    columns as stored (the save writes only those that changed), the seats' threads of its mail,
    and whether it has no observers (``pbem.store.locked_game``). What it writes itself it
    remembers as written."""

    def __init__(self, db: Db) -> None:
        self._db: Db | None = db
        self._players: dict[str, str | None] = {}  # email -> settings JSON read or written here
        self._blocked: dict[str, bool] = {}  # email -> in the moderators' blocked table
        self._bouncing: dict[str, bool] = {}  # email -> marked bouncing
        # game id -> seats (and their outcomes) as read under its row lock
        self._seats: dict[str, tuple[list[Seat], dict[str, str | None]]] = {}
        self._stored: dict[str, tuple[Any, ...]] = {}  # game id -> its SAVED columns as stored
        self._threads: dict[tuple[str, str], tuple[str, str] | None] = {}  # (game, email) -> thread
        self._unobserved: set[str] = set()  # games known to have no observers

    @property
    def _c(self) -> Db:
        if self._db is None:
            raise StoreError("transaction already ended; use the Tx only inside its with-block")
        return self._db

    def _end(self) -> None:
        self._db = None

    @property
    def tournaments(self) -> TournamentTx:
        """The tournaments' statements (``pbem.store.tournaments``) in this transaction."""
        return TournamentTx(lambda: self._c)

    # intake

    def claim_inbound(self, *inbound_ids: int) -> Inbound | None:
        if not inbound_ids:
            return None
        db = self._c
        marks = ",".join("?" * len(inbound_ids))
        # PostgreSQL locks the rows in this order, skipping those another transaction holds.
        claimable = _CLAIMABLE.format(fence=db.dialect.fence)
        row = db.one(f"SELECT {INBOUND_COLS} FROM inbound i WHERE i.id IN ({marks}) AND {claimable}"
                     f" ORDER BY i.id LIMIT 1{db.dialect.skip_locked}", inbound_ids)
        return inbound_of(row) if row else None

    def claim_read(self, inbound_id: int) -> bool:
        db = self._c
        claimable = _CLAIMABLE.format(fence=db.dialect.fence)
        return db.one(f"SELECT i.id FROM inbound i WHERE i.id = ? AND {claimable}{db.dialect.skip_locked}",
                      (inbound_id,)) is not None

    def mark_inbound(self, inbound_id: int, status: str, outcome: str, *,
                     sender: str | None = None, game_id: str | None = None,
                     now: datetime) -> None:
        check_status(status, INBOUND_STATUSES, "inbound")
        cur = self._c.run(
            "UPDATE inbound SET status = ?, outcome = ?, sender = COALESCE(?, sender),"
            " game_id = COALESCE(?, game_id), processed_at = ? WHERE id = ?",
            (status, outcome, sender, game_id, dt_to_text(now), inbound_id))
        if cur.rowcount == 0:
            raise LookupError(f"no inbound message {inbound_id}")

    # games

    def next_game_id(self, prefix: str) -> str:
        if not prefix:
            raise ValueError("empty game id prefix")
        return next_counted_id(self._c, prefix, "games")

    def insert_game(self, game: GameRow) -> None:
        check_status(game.status, GAME_STATUSES, "game")
        if game.created_at is None:
            game.created_at = now_utc()
        if game.updated_at is None:
            game.updated_at = game.created_at
        ending, outcomes = _results(game)
        self._c.run(
            "INSERT INTO games (id, game, status, to_move, thread_id, created_at, updated_at,"
            " deadline_at, finished_at, ending, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (game.id, game.game, game.status, game.to_move, game.thread_id,
             dt_to_text(game.created_at), dt_to_text(game.updated_at), opt_dt(game.deadline_at),
             opt_dt(game.finished_at), ending, json_dumps(game.record)))
        self._insert_seats(game, outcomes)

    def get_game(self, game_id: str, *, for_update: bool = False) -> GameRow | None:
        db = self._c
        if not for_update:
            return get_game(db, game_id)
        found = locked_game.read_locked(db, game_id, db.dialect.for_update, game_of, seat_of)
        if found is None:
            return None
        game, stored, facts, observed = found
        self._seats[game.id] = ([dataclasses.replace(s) for s in game.seats], _results(game)[1])
        self._stored[game.id] = stored
        for seat in facts:
            # What this transaction wrote itself stays (an optimistic one reads a snapshot that
            # does not show its own held-back writes).
            if seat.email == seat.email.lower():  # the key every lookup uses
                self._players.setdefault(seat.email, seat.settings)
                self._bouncing.setdefault(seat.email, seat.bouncing)
                self._threads.setdefault((game.id, seat.email), seat.thread)
        if observed is False:
            self._unobserved.add(game.id)
        return game

    def save_game(self, game: GameRow) -> None:
        check_status(game.status, GAME_STATUSES, "game")
        if game.updated_at is None:
            game.updated_at = now_utc()
        db = self._c
        ending, outcomes = _results(game)
        values = (game.status, json_dumps(game.record), game.to_move, game.thread_id,
                  dt_to_text(game.updated_at), opt_dt(game.deadline_at), opt_dt(game.finished_at), ending)
        stored = self._stored.get(game.id)
        changed = (tuple(range(len(values))) if stored is None
                   else locked_game.changed_columns(stored, values))
        if changed:  # (none: the row read under the lock in this transaction is as it would write)
            cur = db.run(locked_game.update_statement(changed), (*(values[i] for i in changed), game.id))
            if cur.rowcount == 0:
                raise LookupError(f"no game {game.id!r}")
            if stored is not None:
                self._stored[game.id] = values
        if self._seats.get(game.id) != (game.seats, outcomes):
            db.run("DELETE FROM seats WHERE game_id = ?", (game.id,))
            self._insert_seats(game, outcomes)
            self._seats.pop(game.id, None)

    def _insert_seats(self, game: GameRow, outcomes: dict[str, str | None]) -> None:
        self._c.many(
            "INSERT INTO seats (game_id, seat, position, email, name, token_hash, accepted, outcome)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(game.id, s.seat, i, s.email, s.name, s.token_hash, int(s.accepted), outcomes.get(s.seat))
             for i, s in enumerate(game.seats)])

    def games_for_email(self, email: str) -> list[GameRow]:
        db = self._c
        rows = db.all(f"SELECT {GAME_COLS} FROM games"
                      " WHERE id IN (SELECT game_id FROM seats WHERE email = ?)"
                      " ORDER BY updated_at DESC, id DESC", (email.strip().lower(),))
        return load_games(db, rows)

    def seat_by_token_hash(self, token_hash: str) -> tuple[str, Seat] | None:
        if not token_hash:
            return None
        # The repeated "<> ''" lets the database use the partial unique index.
        row = self._c.one(f"SELECT {SEAT_COLS} FROM seats WHERE token_hash = ? AND token_hash <> ''",
                          (token_hash,))
        return (row[0], seat_of(row)) if row else None

    # outbox

    def queue_outbound(self, *, message_id: str, sender: str, recipients: list[str], raw: bytes,
                       now: datetime) -> int | None:
        if not recipients:
            raise ValueError(f"outbound message {message_id} has no recipients")
        stamp = dt_to_text(now)
        db = self._c
        insert = ("INSERT INTO outbound (message_id, sender, recipients, created_at, attempts,"
                  " next_attempt_at, raw) VALUES (?, ?, ?, ?, 0, ?, ?)")
        params = (message_id, sender, json_dumps(list(recipients)), stamp, stamp, bytes(raw))
        if db.holds_writes:  # its id is given at the commit (and another processor's may come first)
            db.run(insert, params)
            return None
        if db.dialect.last_row_id:
            return int(db.run(insert, params).lastrowid)
        return int(db.value(insert + " RETURNING id", params))

    # bounces and rate-limited notices

    def record_bounce(self, email: str, now: datetime, detail: str) -> None:
        self._c.run("INSERT INTO bounces (email, at, detail) VALUES (?, ?, ?)",
                    (email, dt_to_text(now), detail))

    def mark_bouncing(self, email: str, now: datetime, detail: str) -> bool:
        email = email.lower()
        cur = self._c.run("INSERT INTO bouncing (email, since, detail) VALUES (?, ?, ?)"
                          " ON CONFLICT (email) DO NOTHING", (email, dt_to_text(now), detail[:500]))
        self._bouncing[email] = True
        return cur.rowcount == 1

    def clear_bouncing(self, email: str) -> bool:
        email = email.lower()
        if self._bouncing.get(email) is False:  # known not marked: nothing to delete
            return False
        cleared = self._c.run("DELETE FROM bouncing WHERE email = ?", (email,)).rowcount == 1
        self._bouncing[email] = False
        return cleared

    def is_bouncing(self, email: str) -> bool:
        email = email.lower()
        if email not in self._bouncing:
            self._address_facts(email)
        return self._bouncing[email]

    def claim_notice(self, key: str, now: datetime, interval_seconds: int) -> bool:
        """True (and remembers now) when no notice with this key went out within the interval."""
        db = self._c
        last = dt_from_text(db.value(f"SELECT last_at FROM notices WHERE key = ?{db.dialect.for_update}",
                                     (key,)))
        # A clock that went backwards also counts as "too soon": better one notice too few.
        if last is not None and now - last < timedelta(seconds=interval_seconds):
            return False
        db.run("INSERT INTO notices (key, last_at) VALUES (?, ?)"
               " ON CONFLICT (key) DO UPDATE SET last_at = excluded.last_at", (key, dt_to_text(now)))
        return True

    # community

    def add_observer(self, game_id: str, email: str, now: datetime) -> bool:
        self._unobserved.discard(game_id)
        cur = self._c.run("INSERT INTO observers (game_id, email, since) VALUES (?, ?, ?)"
                          " ON CONFLICT DO NOTHING", (game_id, email.lower(), dt_to_text(now)))
        return cur.rowcount == 1

    def remove_observer(self, game_id: str, email: str) -> bool:
        cur = self._c.run("DELETE FROM observers WHERE game_id = ? AND email = ?",
                          (game_id, email.lower()))
        return cur.rowcount == 1

    def observers(self, game_id: str) -> list[str]:
        if game_id in self._unobserved:
            return []
        return [r[0] for r in self._c.all(
            "SELECT email FROM observers WHERE game_id = ? ORDER BY since, email", (game_id,))]

    def games_observed(self, email: str) -> list[GameRow]:
        db = self._c
        rows = db.all(f"SELECT {GAME_COLS} FROM games WHERE id IN"
                      " (SELECT game_id FROM observers WHERE email = ?)"
                      " ORDER BY updated_at DESC, id DESC", (email.lower(),))
        return load_games(db, rows)

    def get_player(self, email: str) -> dict[str, Any]:
        email = email.lower()
        if email not in self._players:
            self._address_facts(email)
        value = self._players[email]
        return json_loads(value) if value is not None else {}  # a fresh copy each time

    def _address_facts(self, email: str) -> None:
        """An address's settings, whether it is blocked and whether it bounces, in one statement: a
        mail's sender is asked all three, one after the other (its language, the moderators'
        block, a bounce its mail clears). What this transaction already knows stays."""
        settings, blocked, bouncing = self._c.one(_ADDRESS_FACTS, (email, email, email))
        self._players.setdefault(email, settings)
        self._blocked.setdefault(email, bool(blocked))
        self._bouncing.setdefault(email, bool(bouncing))

    def set_player(self, email: str, settings: dict[str, Any]) -> None:
        text = json_dumps(settings)
        self._c.run("INSERT INTO players (email, settings) VALUES (?, ?) ON CONFLICT (email)"
                    " DO UPDATE SET settings = excluded.settings", (email.lower(), text))
        self._players[email.lower()] = text

    def nickname_owner(self, nickname: str) -> str | None:
        db = self._c
        nick = db.dialect.json_text("settings", "nickname")
        return db.value(f"SELECT email FROM players WHERE lower({nick}) = lower(?) LIMIT 1", (nickname,))

    def block(self, email: str, now: datetime, by: str, why: str) -> None:
        self._blocked[email.lower()] = True
        self._c.run("INSERT INTO blocked (email, at, by, why) VALUES (?, ?, ?, ?) ON CONFLICT"
                    " (email) DO UPDATE SET at = excluded.at, by = excluded.by, why = excluded.why",
                    (email.lower(), dt_to_text(now), by, why))

    def unblock(self, email: str) -> bool:
        unblocked = self._c.run("DELETE FROM blocked WHERE email = ?", (email.lower(),)).rowcount == 1
        self._blocked[email.lower()] = False
        return unblocked

    def is_blocked(self, email: str) -> bool:
        email = email.lower()
        if email not in self._blocked:
            self._address_facts(email)
        return self._blocked[email]

    def claim_once(self, key: str, now: datetime) -> bool:
        cur = self._c.run("INSERT INTO once_keys (key, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                          (key, dt_to_text(now)))
        return cur.rowcount == 1

    def mail_thread(self, game_id: str, email: str) -> tuple[str, str] | None:
        key = (game_id, email.lower())
        if key in self._threads:
            return self._threads[key]
        row = self._c.one("SELECT root_id, last_id FROM mail_threads WHERE game_id = ? AND email = ?", key)
        return (row[0], row[1]) if row else None

    def set_mail_thread(self, game_id: str, email: str, root_id: str, last_id: str) -> None:
        key = (game_id, email.lower())
        self._c.run("INSERT INTO mail_threads (game_id, email, root_id, last_id) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (game_id, email) DO UPDATE SET last_id = excluded.last_id",
                    (*key, root_id, last_id))
        if key in self._threads:  # the root stays as it was, if there was one
            known = self._threads[key]
            self._threads[key] = (known[0] if known else root_id, last_id)

    def hold_for_digest(self, email: str, game_id: str | None, headline: str, now: datetime) -> None:
        self._c.run("INSERT INTO digest_items (email, game_id, headline, created_at)"
                    " VALUES (?, ?, ?, ?)", (email.lower(), game_id, headline, dt_to_text(now)))

    def digest_items(self, email: str) -> list[tuple[str | None, str, datetime]]:
        rows = self._c.all("SELECT game_id, headline, created_at FROM digest_items WHERE email = ?"
                           " ORDER BY id", (email.lower(),))
        return [(r[0], r[1], dt_from_text(r[2])) for r in rows]  # type: ignore[misc]

    def digest_addresses(self) -> list[str]:
        return [r[0] for r in self._c.all("SELECT DISTINCT email FROM digest_items ORDER BY email")]

    def clear_digest(self, email: str) -> None:
        self._c.run("DELETE FROM digest_items WHERE email = ?", (email.lower(),))

    def get_meta(self, key: str) -> str | None:
        return self._c.value("SELECT value FROM meta WHERE key = ?", (key,))

    def set_meta(self, key: str, value: str) -> None:
        self._c.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                    " DO UPDATE SET value = excluded.value", (key, value))

    def init_meta(self, key: str, value: str) -> str:
        db = self._c
        db.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING", (key, value))
        return str(db.value("SELECT value FROM meta WHERE key = ?", (key,)))

    def games_due(self, until: datetime) -> list[GameRow]:
        db = self._c
        rows = db.all(f"SELECT {GAME_COLS} FROM games WHERE deadline_at IS NOT NULL"
                      " AND deadline_at <= ? AND status = 'active' ORDER BY deadline_at, id",
                      (dt_to_text(until),))
        return load_games(db, rows)

    @filters_of(search_games)
    def search_games(self, **filters: Any) -> list[GameRow]:
        return search_games(self._c, **filters)

    def add_address_change(self, old_email: str, new_email: str, code_hash: str, now: datetime,
                           expires_at: datetime) -> None:
        self._c.run("INSERT INTO address_changes (old_email, new_email, code_hash, created_at,"
                    " expires_at) VALUES (?, ?, ?, ?, ?)",
                    (old_email.lower(), new_email.lower(), code_hash, dt_to_text(now),
                     dt_to_text(expires_at)))

    def address_change(self, code_hash: str) -> AddressChange | None:
        row = self._c.one("SELECT old_email, new_email, created_at, expires_at, used_at"
                          " FROM address_changes WHERE code_hash = ?", (code_hash,))
        if row is None:
            return None
        return AddressChange(row[0], row[1], dt_from_text(row[2]), dt_from_text(row[3]),  # type: ignore[arg-type]
                             dt_from_text(row[4]))

    def use_address_change(self, code_hash: str, now: datetime) -> None:
        cur = self._c.run("UPDATE address_changes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL",
                          (dt_to_text(now), code_hash))
        if cur.rowcount == 0:
            raise LookupError("no pending address change with that code")

    def move_player(self, old_email: str, new_email: str) -> None:
        old, new = old_email.lower(), new_email.lower()
        db = self._c
        settings = db.value("SELECT settings FROM players WHERE email = ?", (old,))
        if settings is not None:
            db.run("DELETE FROM players WHERE email = ?", (old,))
            db.run("INSERT INTO players (email, settings) VALUES (?, ?) ON CONFLICT (email)"
                   " DO UPDATE SET settings = excluded.settings", (new, settings))
        self._players.pop(old, None)
        self._players.pop(new, None)
        self._unobserved.clear()
        # A game the new address watches already keeps that row; the old one goes.
        db.run("UPDATE observers SET email = ? WHERE email = ? AND NOT EXISTS (SELECT 1 FROM observers"
               " AS o WHERE o.game_id = observers.game_id AND o.email = ?)", (new, old, new))
        db.run("DELETE FROM observers WHERE email = ?", (old,))
        db.run("UPDATE digest_items SET email = ? WHERE email = ?", (new, old))
        self.move_allowance(old, new)
        self.move_player_blocks(old, new)

    def active_games(self) -> list[GameRow]:
        db = self._c
        return load_games(db, db.all(f"SELECT {GAME_COLS} FROM games WHERE status = 'active'"
                                     " ORDER BY id"))


def _results(game: GameRow) -> tuple[str | None, dict[str, str | None]]:
    return result_columns(game.status, game.record, [s.seat for s in game.seats])


# --- the store ------------------------------------------------------------------------------------


#: Connections inherited through fork(), of either backend: never used, closed or collected in the
#: child. Closing an inherited SQLite handle can drop the parent's POSIX locks; closing a PostgreSQL
#: one would end the parent's session.
INHERITED: list[Any] = []


class SqlStore:
    """What both stores do the same way. A backend provides the connections: ``_connect()`` (a new
    one; this class keeps one per thread), ``_write()`` (a write transaction), ``_read()`` (a
    consistent snapshot), and the schema steps ``schema_version()``, ``_migration()``,
    ``_run_script()``."""

    dialect: Dialect
    one_writer: bool  # see Store.one_writer
    name: str = "store"

    # connections: one per thread, since a connection serialises its users and one thread's open
    # transaction must not be another's

    def _start(self) -> None:
        """Set up the connection bookkeeping, then migrate (and close again if that fails)."""
        self._lock = threading.Lock()
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, Any]] = []
        self._pid = os.getpid()
        self._closed = False
        try:
            self._prepare()
            self.migrate()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _conn(self) -> Any:
        if self._closed:
            raise StoreClosedError(f"{self!r} is closed")
        if os.getpid() != self._pid:
            self._after_fork()
        conn = getattr(self._local, "conn", None)
        if conn is not None and not self._usable(conn):
            self._drop(conn)
            conn = None
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            self._local.in_tx = False
            with self._lock:
                self._close_dead_threads()
                self._conns.append((threading.current_thread(), conn))
        return conn

    def _db(self) -> Db:
        return Db(self._conn(), self.dialect)

    def open_now(self) -> None:
        self._conn()

    def _drop(self, conn: Any) -> None:
        """Forget a connection the server dropped; the next use opens a new one."""
        with suppress(Exception):
            conn.close()
        with self._lock:
            self._conns = [(t, c) for t, c in self._conns if c is not conn]
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
            self._local.in_tx = False

    def _close_dead_threads(self) -> None:
        """A short-lived worker thread leaves its connection behind; close those so a long-running
        daemon does not collect open handles."""
        alive = []
        for thread, conn in self._conns:
            if thread.is_alive():
                alive.append((thread, conn))
            else:
                with suppress(Exception):
                    conn.close()
        self._conns = alive

    def _after_fork(self) -> None:
        INHERITED.extend(conn for _, conn in self._conns)
        INHERITED.extend(self._forked())
        self._conns = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()

    def close(self) -> None:
        if os.getpid() != self._pid:
            self._after_fork()
        with self._lock:
            self._closed = True
            conns, self._conns = self._conns, []
        for conn in [c for _, c in conns] + self._closing():
            with suppress(Exception):
                conn.close()
        self._local = threading.local()

    # backend hooks

    def _prepare(self) -> None:
        """What opening needs before the migration (SQLite: the journal mode)."""

    def _connect(self) -> Any:
        raise NotImplementedError

    def _usable(self, conn: Any) -> bool:
        return True

    def _forked(self) -> list[Any]:
        """In a forked child: reset the backend's own handles; return those to leave alone."""
        return []

    def _closing(self) -> list[Any]:
        """At close: release the backend's own resources; return connections to close."""
        return []

    def _write(self, durable: bool = True) -> AbstractContextManager[Db]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Db]:
        raise NotImplementedError

    def _migration(self) -> AbstractContextManager[Db]:
        """A transaction in which one migration runs, taken by one process at a time."""
        raise NotImplementedError

    def _run_script(self, db: Db, script: str) -> None:
        raise NotImplementedError

    def _script(self, migration: _migrations.Migration) -> str | None:
        raise NotImplementedError

    def schema_version(self) -> int:
        raise NotImplementedError

    # schema

    def _check_not_newer(self, version: int, latest: int) -> None:
        if version > latest:
            raise SchemaVersionError(
                f"{self.name}: the database has schema version {version}, but this pbem knows "
                f"only versions up to {latest}; it was written by a newer pbem. Upgrade pbem "
                f"(or restore a backup) rather than run the older code on it.")

    def migrate(self) -> int:
        migrations = _migrations.MIGRATIONS
        _migrations.check_sequence(migrations)
        latest = _migrations.latest_version(migrations)
        version = self.schema_version()
        self._check_not_newer(version, latest)
        while version < latest:
            # One transaction per migration; the version is read again inside it because another
            # process may be migrating the same database right now.
            with self._migration() as db:
                db.run(SCHEMA_VERSION_DDL)
                version = int(db.value("SELECT COALESCE(MAX(version), 0) FROM schema_version"))
                self._check_not_newer(version, latest)
                if version >= latest:
                    break
                migration = migrations[version]  # versions are 1..n, checked above
                script = self._script(migration)
                if script is None:
                    raise StoreError(f"migration {migration.version} ({migration.name}) has no "
                                     f"{self.dialect.name} version")
                self._run_script(db, script)
                db.run("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                       (migration.version, migration.name, dt_to_text(now_utc())))
                version = migration.version
        return version

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[SqlTx]:
        with self._write(durable) as db:
            tx = SqlTx(db)
            try:
                yield tx
            finally:
                tx._end()

    # intake

    def accept_inbound(self, raw: bytes, source: str, now: datetime,
                       source_ref: str | None = None, *, envelope_from: str | None = None,
                       original_size: int | None = None) -> AcceptResult:
        prepared = intake_row(raw, source, now, source_ref, envelope_from, original_size)
        with self._write() as db:
            result = accept_one(db, prepared)
            self._announce_inbound(db, [result])
        # Reached only after COMMIT returned, i.e. after the message is on disk.
        return result

    def accept_inbound_many(self, items: list[tuple[bytes, str, datetime, str | None, str | None]]
                            ) -> list[AcceptResult]:
        """``accept_inbound`` for several messages in one transaction: one flush to disk for all
        (group commit); results in the order of ``items``."""
        prepared = [intake_row(*item) for item in items]
        if not self.one_writer:
            with self._write() as db:
                results = [accept_one(db, row) for row in prepared]
                self._announce_inbound(db, results)
                return results
        # One write lock for the whole file: wait for the disk after releasing it, so the processor
        # is not held up by the fsync. The callers answer "250" only after this returns, on disk.
        with self._write(durable=False) as db:
            results = [accept_one(db, row) for row in prepared]
        self.flush()
        return results

    def _announce_inbound(self, db: Db, results: list[AcceptResult]) -> None:
        """Tell the other workers, with the transaction that stores them, of new messages (see
        ``watch_inbound``); nothing where one process does all the processing (SQLite)."""

    def watch_inbound(self, on_stored: Callable[[str | None], None], stop: threading.Event) -> bool:
        return False

    def pending_inbound(self, limit: int = 100) -> list[Inbound]:
        rows = self._db().all(f"SELECT {INBOUND_COLS} FROM inbound WHERE status = 'pending'"
                              " ORDER BY id LIMIT ?", (limit,))
        return [inbound_of(r) for r in rows]

    def pending_fair(self, now: datetime, per_sender_per_minute: int, limit: int) -> list[int]:
        return [head for head, _game, _at in self.pending_fair_games(now, per_sender_per_minute, limit)]

    def pending_fair_games(self, now: datetime, per_sender_per_minute: int, limit: int
                           ) -> list[tuple[int, str | None, datetime | None]]:
        # The head of each sender's queue (one pass over the pending rows' sender index), oldest
        # first; then, only as far as the limit needs, leaving out senders who had their cap
        # processed within the minute (one index lookup per head looked at; NULL, no sender, is one
        # sender too). The fence keeps PostgreSQL from counting every pending sender's recent mail
        # before it sorts: with 600 moves waiting that was ~1 ms a call, and several workers call
        # this up to once per message. (Walking the pending rows in id order and probing each
        # for an earlier one of its sender is cheaper while the statistics know about the
        # backlog, but quadratic when they do not, as after a burst or an outage.) One message
        # per sender per call: the caller's next call starts the next round. The minute is
        # bounded on both sides: after the wall clock stepped back, the mail processed before the
        # step (stamped "in the future") is not the last minute's, or a busy sender would wait out
        # the whole step.
        since, until = dt_to_text(now - timedelta(minutes=1)), dt_to_text(now)
        recent = ("SELECT COUNT(*) FROM inbound AS done WHERE done.sender {}"
                  " AND done.processed_at >= ? AND done.processed_at <= ?")
        db = self._db()
        # Then the game each head is about (known at intake from its token), for the worker that
        # keeps that game's state: looked up by key only for the heads taken.
        rows = db.all(
            "SELECT taken.head, g.game_id, g.received_at FROM (SELECT head FROM"
            " (SELECT MIN(id) AS head, sender FROM inbound WHERE status = 'pending'"
            f"  GROUP BY sender ORDER BY head{db.dialect.fence}) AS heads"
            f" WHERE ? = 0 OR CASE WHEN heads.sender IS NULL THEN ({recent.format('IS NULL')})"
            f"  ELSE ({recent.format('= heads.sender')}) END < ?"
            " ORDER BY head LIMIT ?) AS taken JOIN inbound g ON g.id = taken.head ORDER BY taken.head",
            (per_sender_per_minute, since, until, since, until, per_sender_per_minute, limit))
        return [(int(r[0]), r[1], dt_from_text(r[2])) for r in rows]

    def get_inbound(self, inbound_id: int) -> Inbound | None:
        row = self._db().one(f"SELECT {INBOUND_COLS}{PRUNED} FROM inbound WHERE id = ?", (inbound_id,))
        return inbound_of(row) if row else None

    def get_inbound_many(self, inbound_ids: Sequence[int]) -> dict[int, Inbound]:
        found: dict[int, Inbound] = {}
        ids = list(inbound_ids)
        for i in range(0, len(ids), 500):  # stay well below SQLite's bound-parameter limit
            chunk = ids[i : i + 500]
            for row in self._db().all(f"SELECT {INBOUND_COLS}{PRUNED} FROM inbound"
                                      f" WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                found[row[0]] = inbound_of(row)
        return found

    def inbound_status(self, inbound_id: int) -> str | None:
        return self._db().value("SELECT status FROM inbound WHERE id = ?", (inbound_id,))

    def inbound_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(INBOUND_STATUSES, 0)
        counts.update({str(status): int(n) for status, n in self._db().all(
            "SELECT status, COUNT(*) FROM inbound GROUP BY status")})
        return counts

    def bouncing_addresses(self) -> list[tuple[str, datetime, str]]:
        rows = self._db().all("SELECT email, since, detail FROM bouncing ORDER BY since, email")
        return [(r[0], dt_from_text(r[1]), r[2]) for r in rows]  # type: ignore[misc]

    def iter_inbound(self, status: str | None = None) -> Iterator[Inbound]:
        """Pages by id instead of holding one cursor open, so a slow consumer neither pins a
        snapshot nor blocks this thread from starting a transaction meanwhile."""
        last = 0
        while True:
            if status is None:
                rows = self._db().all(f"SELECT {INBOUND_COLS}{PRUNED} FROM inbound WHERE id > ?"
                                      " ORDER BY id LIMIT 100", (last,))
            else:
                rows = self._db().all(f"SELECT {INBOUND_COLS}{PRUNED} FROM inbound"
                                      " WHERE status = ? AND id > ? ORDER BY id LIMIT 100",
                                      (status, last))
            if not rows:
                return
            for row in rows:
                yield inbound_of(row)
            last = rows[-1][0]

    # outbox sender

    def due_outbound(self, now: datetime, limit: int = 100) -> list[Outbound]:
        return self._due_outbound(now, limit, raw=True)

    def _due_outbound(self, now: datetime, limit: int, raw: bool) -> list[Outbound]:
        # Round-robin by recipient, each recipient's mails oldest first: one player's mails arrive
        # in move order, and two thousand answers to one flooding address do not hold up the
        # next player's board. The ids are chosen on the small columns (and the partial index of
        # migration 7) before the rows, raw messages included unless ``raw`` is False, are read.
        db = self._db()
        ids = [r[0] for r in db.all(
            "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY recipients ORDER BY id) AS k"
            "  FROM outbound WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ?)"
            " AS due ORDER BY k, id LIMIT ?", (dt_to_text(now), limit))]
        if not ids:
            return []
        columns = OUTBOUND_COLS if raw else OUTBOUND_COLS.replace(" raw,", " NULL AS raw,")
        rows = db.all(f"SELECT {columns} FROM outbound WHERE id IN ({','.join('?' * len(ids))})", ids)
        by_id = {r[0]: r for r in rows}
        return [outbound_of(by_id[i]) for i in ids if i in by_id]

    def mark_sent(self, outbound_id: int, now: datetime) -> None:
        with self._write() as db:
            cur = db.run("UPDATE outbound SET sent_at = COALESCE(sent_at, ?) WHERE id = ?",
                         (dt_to_text(now), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no outbound message {outbound_id}")

    def mark_sent_many(self, outbound_ids: list[int], now: datetime) -> None:
        """``mark_sent`` for several rows in one transaction (one flush instead of one each)."""
        if outbound_ids:
            with self._write() as db:
                _mark_outbound(db, outbound_ids, [], now)

    def mark_send_failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None:
        with self._write() as db:
            cur = db.run("UPDATE outbound SET attempts = attempts + 1, last_error = ?,"
                         " next_attempt_at = ? WHERE id = ?",
                         (error, dt_to_text(next_attempt_at), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no outbound message {outbound_id}")

    def mark_given_up(self, outbound_id: int, error: str, now: datetime) -> None:
        with self._write() as db:
            cur = db.run(_GIVE_UP, (error, dt_to_text(now), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no unsent outbound message {outbound_id}")

    def reset_backoff(self, now: datetime) -> int:
        stamp = dt_to_text(now)
        with self._write() as db:
            return int(db.run("UPDATE outbound SET next_attempt_at = ?, attempts = 0"
                              " WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at > ?",
                              (stamp, stamp)).rowcount)

    def outbound_counts(self) -> dict[str, int]:
        with self._read() as db:
            total = db.value("SELECT COUNT(*) FROM outbound")
            pending = db.value("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL AND given_up_at IS NULL")
            given_up = db.value("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL"
                                " AND given_up_at IS NOT NULL")
        return {"pending": int(pending), "sent": int(total - pending - given_up), "given_up": int(given_up)}

    def given_up_outbound(self, limit: int = 50) -> list[Outbound]:
        rows = self._db().all(f"SELECT {OUTBOUND_COLS}{PRUNED} FROM outbound WHERE sent_at IS NULL"
                              " AND given_up_at IS NOT NULL ORDER BY given_up_at DESC, id DESC LIMIT ?",
                              (limit,))
        return [outbound_of(r) for r in rows]

    @contextmanager
    def claim_outbound(self, now: datetime, limit: int = 100) -> Iterator[OutboxBatch]:
        """With row locks (PostgreSQL, several senders) each row is claimed on its own just before it
        is sent and marked right after, in one short transaction: a second sender skips it, a dead
        sender's row is free again at once, and a sender killed between the relay's "250" and the
        mark re-sends one mail at most. Without them (SQLite: one sender per file) the marks are
        written together when the batch ends: one commit for the batch, and no write lock held while
        mails are sent, since that would stop the processor for as long. With row locks a row's
        raw message is read when it is taken: every sender looks at the same due rows, and most of
        them another sender sends."""
        batch: _MarkLater | _MarkEach
        if self.dialect.skip_locked:
            batch = _MarkEach(self, self._due_outbound(now, limit, raw=False), now)
        else:
            batch = _MarkLater(self.due_outbound(now, limit))
        try:
            yield batch
        finally:
            batch.close(self, now)

    # IMAP progress

    def imap_state(self, mailbox: str) -> tuple[int, int] | None:
        row = self._db().one("SELECT uidvalidity, last_uid FROM imap_state WHERE mailbox = ?",
                             (mailbox,))
        return (int(row[0]), int(row[1])) if row else None

    def set_imap_state(self, mailbox: str, uidvalidity: int, last_uid: int) -> None:
        with self._write() as db:
            db.run("INSERT INTO imap_state (mailbox, uidvalidity, last_uid) VALUES (?, ?, ?)"
                   " ON CONFLICT (mailbox) DO UPDATE SET uidvalidity = excluded.uidvalidity,"
                   " last_uid = excluded.last_uid", (mailbox, uidvalidity, last_uid))

    # workers

    def heartbeat(self, worker: Worker) -> None:
        with self._write(durable=False) as db:  # the next beat comes in seconds anyway
            db.run(f"INSERT INTO workers ({WORKER_COLS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id)"
                   " DO UPDATE SET seen_at = excluded.seen_at, roles = excluded.roles",
                   (worker.id, worker.host, worker.pid, dt_to_text(worker.started_at),
                    dt_to_text(worker.seen_at), ",".join(worker.roles)))

    def forget_worker(self, worker_id: str) -> None:
        with self._write() as db:
            db.run("DELETE FROM workers WHERE id = ?", (worker_id,))

    def workers(self) -> list[Worker]:
        return [worker_of(r) for r in self._db().all(
            f"SELECT {WORKER_COLS} FROM workers ORDER BY seen_at DESC, id")]

    def queue_figures(self) -> dict[str, Any]:
        with self._read() as db:
            pending, oldest = db.one("SELECT COUNT(*), MIN(received_at) FROM inbound"
                                     " WHERE status = 'pending'")
            waiting, due = db.one("SELECT COUNT(*), MIN(next_attempt_at) FROM outbound"
                                  " WHERE sent_at IS NULL AND given_up_at IS NULL")
            active = db.value("SELECT COUNT(*) FROM games WHERE status = 'active'")
        return {"inbound_pending": int(pending), "oldest_pending": dt_from_text(oldest),
                "outbound_pending": int(waiting), "outbound_due_oldest": dt_from_text(due),
                "games_active": int(active)}

    # read-only views

    def tournament_views(self) -> TournamentViews:
        """Tournaments read outside a transaction (``pbem.store.tournaments``)."""
        return TournamentViews(self._read)

    def mail_pruning(self) -> MailPruning:
        """Dropping the raw mail of finished messages (``pbem.store.pruning``)."""
        return MailPruning(self._write, self._read, indexed_by=self.dialect.name == "SQLite",
                           vacuum=self._vacuum)

    _vacuum: Callable[[], None] | None = None  # the backend's VACUUM, where it shrinks the file

    def get_game(self, game_id: str) -> GameRow | None:
        with self._read() as db:
            return get_game(db, game_id)

    @filters_of(search_games)
    def search_games(self, **filters: Any) -> list[GameRow]:
        with self._read() as db:
            return search_games(db, **filters)

    def list_games(self, status: str | None = None) -> list[GameRow]:
        with self._read() as db:
            if status is None:
                rows = db.all(f"SELECT {GAME_COLS} FROM games ORDER BY created_at, id")
            else:
                rows = db.all(f"SELECT {GAME_COLS} FROM games WHERE status = ?"
                              " ORDER BY created_at, id", (status,))
            return load_games(db, rows)

    def active_games_to_move(self, address_like: str) -> list[str]:
        """The active games whose seat to move has an address LIKE this pattern: found on the
        small columns, so a caller woken after every batch (the computer's thinker) does not read
        every active game's record to find the few it wants."""
        return [r[0] for r in self._db().all(
            "SELECT g.id FROM games AS g JOIN seats AS s ON s.game_id = g.id AND s.seat = g.to_move"
            " WHERE g.status = 'active' AND s.email LIKE ? ORDER BY g.created_at, g.id",
            (address_like,))]


class _MarkLater:
    """Marks kept until the batch ends, then written in one transaction."""

    def __init__(self, rows: list[Outbound]) -> None:
        self.rows = rows
        self.sent_ids: list[int] = []
        self.failures: list[tuple[int, str, datetime]] = []
        self.given_ups: list[tuple[int, str]] = []
        self.reports: list[bytes] = []

    def take(self, row: Outbound) -> bool:
        return True

    def sent(self, outbound_id: int) -> None:
        self.sent_ids.append(outbound_id)

    def failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None:
        self.failures.append((outbound_id, error, next_attempt_at))

    def given_up(self, outbound_id: int, error: str, report: bytes | None = None) -> None:
        self.given_ups.append((outbound_id, error))
        if report is not None:
            self.reports.append(report)

    def close(self, store: SqlStore, now: datetime) -> None:
        # Not waiting for the disk: a mark lost to a power cut means a mail sent again, never lost.
        # (A report lost with it is written again: the mail is refused again, with the same report.)
        if self.sent_ids or self.failures or self.given_ups:
            reports = [_report_row(report, now) for report in self.reports]
            with store._write(durable=False) as db:
                _mark_outbound(db, self.sent_ids, self.failures, now, self.given_ups, reports)


class _MarkEach:
    """One transaction per row: take it (locked, still due), send, mark, commit. The marks commit
    without waiting for the disk: after a power loss a mail is sent again, never lost.

    Every sender reads the same due rows, so with several workers most rows a sender comes to are
    being sent, or were sent, by another. A take looks at the row and the next few in the batch's
    order at once and locks the first of them still free: the rows before it are passed over
    without another round trip each, and the one locked is the sender's when it comes to it."""

    #: Rows one take looks at: a bound on the statement's size (and on the statements prepared).
    LOOKAHEAD = 10

    def __init__(self, store: SqlStore, rows: list[Outbound], now: datetime) -> None:
        self.rows = rows
        self.now = now
        self._store = store
        self._open: tuple[int, AbstractContextManager[Db], Db] | None = None
        self._passed: set[int] = set()  # rows another sender had: taken or done

    def take(self, row: Outbound) -> bool:
        if self._open is not None and self._open[0] == row.id:
            return True  # locked by the take that passed over the rows before it
        if row.id in self._passed:
            return False
        self._finish()
        start = next(i for i, r in enumerate(self.rows) if r.id == row.id)
        ahead = [r.id for r in self.rows[start:] if r.id not in self._passed][: self.LOOKAHEAD]
        manager = self._store._write(durable=False)
        db = manager.__enter__()
        try:
            # in the batch's order (round-robin by recipient), not by id
            order = " ".join(f"WHEN ? THEN {k}" for k in range(len(ahead)))
            found = db.one(f"SELECT id, raw FROM outbound WHERE id IN ({','.join('?' * len(ahead))})"
                           " AND sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ?"
                           f" ORDER BY CASE id {order} END LIMIT 1{db.dialect.skip_locked}",
                           (*ahead, dt_to_text(self.now), *ahead))
        except BaseException as exc:
            manager.__exit__(type(exc), exc, exc.__traceback__)
            raise
        taken = int(found[0]) if found else None
        self._passed.update(ahead[: ahead.index(taken)] if taken is not None else ahead)
        if taken is None:
            manager.__exit__(None, None, None)
            return False
        self._open = (taken, manager, db)
        next(r for r in self.rows if r.id == taken).raw = bytes(found[1])
        return taken == row.id

    def sent(self, outbound_id: int) -> None:
        self._mark(outbound_id, [outbound_id], [])

    def failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None:
        self._mark(outbound_id, [], [(outbound_id, error, next_attempt_at)])

    def given_up(self, outbound_id: int, error: str, report: bytes | None = None) -> None:
        reports = [] if report is None else [_report_row(report, self.now)]
        self._mark(outbound_id, [], [], [(outbound_id, error)], reports)

    def _mark(self, outbound_id: int, sent: list[int], failures: list[tuple[int, str, datetime]],
              given_ups: tuple[tuple[int, str], ...] | list[tuple[int, str]] = (),
              reports: Sequence[tuple[Any, ...]] = ()) -> None:
        taken = self._open is not None and self._open[0] == outbound_id
        if not taken and not self.take(next(r for r in self.rows if r.id == outbound_id)):
            return  # another sender has it: its fate is that sender's to report
        assert self._open is not None
        _mark_outbound(self._open[2], sent, failures, self.now, given_ups, reports)
        self._finish()

    def _finish(self) -> None:
        if self._open is not None:
            _, manager, _ = self._open
            self._open = None
            manager.__exit__(None, None, None)

    def close(self, store: SqlStore, now: datetime) -> None:
        self._finish()  # a row taken but never marked: its claim simply ends


def _mark_outbound(db: Db, sent: list[int], failures: list[tuple[int, str, datetime]],
                   now: datetime, given_ups: Sequence[tuple[int, str]] = (),
                   reports: Sequence[tuple[Any, ...]] = ()) -> None:
    db.many("UPDATE outbound SET sent_at = COALESCE(sent_at, ?) WHERE id = ?",
            [(dt_to_text(now), i) for i in sent])
    db.many("UPDATE outbound SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?"
            " WHERE id = ?", [(error, dt_to_text(when), i) for i, error, when in failures])
    db.many(_GIVE_UP, [(error, dt_to_text(now), i) for i, error in given_ups])
    for report in reports:
        accept_one(db, report)


def _report_row(report: bytes, now: datetime) -> tuple[Any, ...]:
    """A delivery report the sender wrote, as the intake stores it (from the null sender)."""
    return intake_row(report, "relay", now, None, "")


def worker_id(host: str, started_at: datetime) -> str:
    return f"{host}:{os.getpid()}:{started_at.strftime('%Y%m%dT%H%M%S')}"
