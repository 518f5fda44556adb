"""The SQLite backend: the default store, one file next to the server's other data.

Durability: WAL with ``synchronous=FULL`` makes every COMMIT fsync the log, so a message is on disk
once ``accept_inbound`` returns (the SMTP listener answers 250 only then) and survives kill -9 and
power loss.

Concurrency: several threads of the daemon (SMTP listener, processor, sender) and other processes
(``pbem deliver``, CLI tools) use one file. Each thread gets its own connection, because a sqlite3
connection serialises its users and one thread's open transaction would be visible to the others.
Across processes SQLite's file locks do the work. Every write starts with ``BEGIN IMMEDIATE``: a
transaction that starts as a reader and later wants to write can fail at once with SQLITE_BUSY
(the busy timeout does not apply to that upgrade), while ``BEGIN IMMEDIATE`` simply waits for the
write lock. Readers never wait in WAL mode.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pbem.store import migrations as _migrations
from pbem.store.base import (
    GAME_STATUSES,
    INBOUND_STATUSES,
    RESULT_FILTERS,
    AcceptResult,
    AddressChange,
    GameRow,
    Inbound,
    Outbound,
    Seat,
)
from pbem.store.common import (
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    dt_from_text,
    dt_to_text,
    header_facts,
    json_dumps,
    json_loads,
    now_utc,
    result_columns,
    sha256_hex,
)

_SCHEMA_VERSION_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

_INBOUND_COLS = ("id, raw, source, received_at, message_id, sha256, status, outcome, envelope_from,"
                 " original_size, sender")
_OUTBOUND_COLS = ("id, message_id, sender, recipients, raw, created_at, attempts, next_attempt_at,"
                  " sent_at, last_error, given_up_at")
_INSERT_INBOUND = ("INSERT INTO inbound (message_id, sha256, source, source_ref, received_at, status,"
                   " sender, envelope_from, original_size, raw)"
                   " VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)")
_GAME_COLS = ("id, game, status, record, created_at, updated_at, to_move, thread_id, deadline_at,"
              " finished_at")
_SEAT_COLS = "game_id, seat, email, name, token_hash, accepted"

# Connections inherited through fork(): never used and never closed in the child, because closing
# an inherited SQLite handle can drop POSIX locks and corrupt the parent's view of the file.
_INHERITED: list[sqlite3.Connection] = []


def split_statements(script: str) -> list[str]:
    """``executescript`` would COMMIT the migration's transaction before running, so the script is
    cut into single statements; ``complete_statement`` knows about semicolons in strings and
    trigger bodies."""
    statements: list[str] = []
    start = 0
    pos = script.find(";")
    while pos != -1:
        candidate = script[start : pos + 1]
        if sqlite3.complete_statement(candidate):
            statements.append(candidate.strip())
            start = pos + 1
        pos = script.find(";", pos + 1)
    rest = script[start:]
    if any(line.strip() and not line.strip().startswith("--") for line in rest.splitlines()):
        raise ValueError(f"incomplete SQL statement at the end of a migration: {rest.strip()!r}")
    return statements


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _check_status(status: str, allowed: Sequence[str], what: str) -> None:
    if status not in allowed:
        raise ValueError(f"unknown {what} status {status!r}; expected one of {', '.join(allowed)}")


def _inbound(row: Sequence[Any]) -> Inbound:
    return Inbound(id=row[0], raw=bytes(row[1]), source=row[2],
                   received_at=dt_from_text(row[3]),  # type: ignore[arg-type]
                   message_id=row[4], sha256=row[5], status=row[6], outcome=row[7],
                   envelope_from=row[8], original_size=row[9], sender=row[10])


def _outbound(row: Sequence[Any]) -> Outbound:
    return Outbound(id=row[0], message_id=row[1], sender=row[2], recipients=json_loads(row[3]),
                    raw=bytes(row[4]), created_at=dt_from_text(row[5]),  # type: ignore[arg-type]
                    attempts=row[6], next_attempt_at=dt_from_text(row[7]),
                    sent_at=dt_from_text(row[8]), last_error=row[9],
                    given_up_at=dt_from_text(row[10]))


def _seat(row: Sequence[Any]) -> Seat:
    return Seat(seat=row[1], email=row[2], name=row[3], token_hash=row[4], accepted=bool(row[5]))


def _load_games(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> list[GameRow]:
    games = [GameRow(id=r[0], game=r[1], status=r[2], record=json_loads(r[3]),
                     created_at=dt_from_text(r[4]), updated_at=dt_from_text(r[5]),
                     to_move=r[6], thread_id=r[7], deadline_at=dt_from_text(r[8]),
                     finished_at=dt_from_text(r[9])) for r in rows]
    by_id = {g.id: g for g in games}
    ids = list(by_id)
    for i in range(0, len(ids), 500):  # stay well below SQLite's bound-parameter limit
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {_SEAT_COLS} FROM seats WHERE game_id IN ({marks})"
                                " ORDER BY game_id, position", chunk):
            by_id[row[0]].seats.append(_seat(row))
    return games


def _get_game(conn: sqlite3.Connection, game_id: str) -> GameRow | None:
    row = conn.execute(f"SELECT {_GAME_COLS} FROM games WHERE id = ?", (game_id,)).fetchone()
    return _load_games(conn, [row])[0] if row else None


class SQLiteTx:
    """One open ``BEGIN IMMEDIATE`` transaction; unusable once its ``with`` block has ended, so a
    leaked reference cannot write outside the transaction it was meant for."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn: sqlite3.Connection | None = conn

    @property
    def _c(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("transaction already ended; use the Tx only inside its with-block")
        return self._conn

    def _end(self) -> None:
        self._conn = None

    # intake

    def mark_inbound(self, inbound_id: int, status: str, outcome: str, *,
                     sender: str | None = None, game_id: str | None = None,
                     now: datetime) -> None:
        _check_status(status, INBOUND_STATUSES, "inbound")
        cur = self._c.execute(
            "UPDATE inbound SET status = ?, outcome = ?, sender = COALESCE(?, sender),"
            " game_id = COALESCE(?, game_id), processed_at = ? WHERE id = ?",
            (status, outcome, sender, game_id, dt_to_text(now), inbound_id))
        if cur.rowcount == 0:
            raise LookupError(f"no inbound message {inbound_id}")

    # games

    def next_game_id(self, prefix: str) -> str:
        if not prefix:
            raise ValueError("empty game id prefix")
        conn = self._c
        row = conn.execute("SELECT next FROM game_counters WHERE prefix = ?", (prefix,)).fetchone()
        number = row[0] if row else 1
        # Skip ids taken by games inserted with explicit ids (imports, tests).
        while conn.execute("SELECT 1 FROM games WHERE id = ?", (f"{prefix}-{number}",)).fetchone():
            number += 1
        conn.execute("INSERT INTO game_counters (prefix, next) VALUES (?, ?)"
                     " ON CONFLICT (prefix) DO UPDATE SET next = excluded.next",
                     (prefix, number + 1))
        return f"{prefix}-{number}"

    def insert_game(self, game: GameRow) -> None:
        _check_status(game.status, GAME_STATUSES, "game")
        if game.created_at is None:
            game.created_at = now_utc()
        if game.updated_at is None:
            game.updated_at = game.created_at
        conn = self._c
        ending, _outcomes = result_columns(game.status, game.record, [s.seat for s in game.seats])
        conn.execute(
            "INSERT INTO games (id, game, status, to_move, thread_id, created_at, updated_at,"
            " deadline_at, finished_at, ending, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (game.id, game.game, game.status, game.to_move, game.thread_id,
             dt_to_text(game.created_at), dt_to_text(game.updated_at), _opt_dt(game.deadline_at),
             _opt_dt(game.finished_at), ending, json_dumps(game.record)))
        self._insert_seats(game)

    def get_game(self, game_id: str, *, for_update: bool = False) -> GameRow | None:
        # for_update needs nothing here: BEGIN IMMEDIATE already excludes every other writer.
        return _get_game(self._c, game_id)

    def save_game(self, game: GameRow) -> None:
        _check_status(game.status, GAME_STATUSES, "game")
        if game.updated_at is None:
            game.updated_at = now_utc()
        conn = self._c
        ending, _outcomes = result_columns(game.status, game.record, [s.seat for s in game.seats])
        cur = conn.execute(
            "UPDATE games SET status = ?, record = ?, to_move = ?, thread_id = ?, updated_at = ?,"
            " deadline_at = ?, finished_at = ?, ending = ? WHERE id = ?",
            (game.status, json_dumps(game.record), game.to_move, game.thread_id,
             dt_to_text(game.updated_at), _opt_dt(game.deadline_at), _opt_dt(game.finished_at),
             ending, game.id))
        if cur.rowcount == 0:
            raise LookupError(f"no game {game.id!r}")
        conn.execute("DELETE FROM seats WHERE game_id = ?", (game.id,))
        self._insert_seats(game)

    def _insert_seats(self, game: GameRow) -> None:
        _ending, outcomes = result_columns(game.status, game.record, [s.seat for s in game.seats])
        self._c.executemany(
            "INSERT INTO seats (game_id, seat, position, email, name, token_hash, accepted, outcome)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(game.id, s.seat, i, s.email, s.name, s.token_hash, int(s.accepted), outcomes.get(s.seat))
             for i, s in enumerate(game.seats)])

    def games_for_email(self, email: str) -> list[GameRow]:
        conn = self._c
        rows = conn.execute(
            f"SELECT {_GAME_COLS} FROM games"
            " WHERE id IN (SELECT game_id FROM seats WHERE email = ?)"
            " ORDER BY updated_at DESC, id DESC", (email.strip().lower(),)).fetchall()
        return _load_games(conn, rows)

    def seat_by_token_hash(self, token_hash: str) -> tuple[str, Seat] | None:
        if not token_hash:
            return None
        # The repeated "<> ''" lets SQLite use the partial unique index.
        row = self._c.execute(
            f"SELECT {_SEAT_COLS} FROM seats WHERE token_hash = ? AND token_hash <> ''",
            (token_hash,)).fetchone()
        return (row[0], _seat(row)) if row else None

    # outbox

    def queue_outbound(self, *, message_id: str, sender: str, recipients: list[str], raw: bytes,
                       now: datetime) -> int:
        if not recipients:
            raise ValueError(f"outbound message {message_id} has no recipients")
        stamp = dt_to_text(now)
        cur = self._c.execute(
            "INSERT INTO outbound (message_id, sender, recipients, created_at, attempts,"
            " next_attempt_at, raw) VALUES (?, ?, ?, ?, 0, ?, ?)",
            (message_id, sender, json_dumps(list(recipients)), stamp, stamp, bytes(raw)))
        return int(cur.lastrowid)  # type: ignore[arg-type]

    # bounces and rate-limited notices

    def record_bounce(self, email: str, now: datetime, detail: str) -> None:
        self._c.execute("INSERT INTO bounces (email, at, detail) VALUES (?, ?, ?)",
                        (email, dt_to_text(now), detail))

    def mark_bouncing(self, email: str, now: datetime, detail: str) -> bool:
        cur = self._c.execute("INSERT INTO bouncing (email, since, detail) VALUES (?, ?, ?)"
                              " ON CONFLICT (email) DO NOTHING",
                              (email.lower(), dt_to_text(now), detail[:500]))
        return cur.rowcount == 1

    def clear_bouncing(self, email: str) -> bool:
        return self._c.execute("DELETE FROM bouncing WHERE email = ?",
                               (email.lower(),)).rowcount == 1

    def is_bouncing(self, email: str) -> bool:
        return self._c.execute("SELECT 1 FROM bouncing WHERE email = ?",
                               (email.lower(),)).fetchone() is not None

    def claim_notice(self, key: str, now: datetime, interval_seconds: int) -> bool:
        """True (and remembers now) when no notice with this key went out within the interval."""
        conn = self._c
        row = conn.execute("SELECT last_at FROM notices WHERE key = ?", (key,)).fetchone()
        if row is not None:
            last = dt_from_text(row[0])
            # A clock that went backwards also counts as "too soon": better one notice too few.
            if last is not None and now - last < timedelta(seconds=interval_seconds):
                return False
        conn.execute("INSERT INTO notices (key, last_at) VALUES (?, ?)"
                     " ON CONFLICT (key) DO UPDATE SET last_at = excluded.last_at",
                     (key, dt_to_text(now)))
        return True


    # community

    def add_observer(self, game_id: str, email: str, now: datetime) -> bool:
        cur = self._c.execute("INSERT INTO observers (game_id, email, since) VALUES (?, ?, ?)"
                              " ON CONFLICT DO NOTHING", (game_id, email.lower(), dt_to_text(now)))
        return cur.rowcount == 1

    def remove_observer(self, game_id: str, email: str) -> bool:
        cur = self._c.execute("DELETE FROM observers WHERE game_id = ? AND email = ?",
                              (game_id, email.lower()))
        return cur.rowcount == 1

    def observers(self, game_id: str) -> list[str]:
        return [r[0] for r in self._c.execute(
            "SELECT email FROM observers WHERE game_id = ? ORDER BY since, email", (game_id,))]

    def games_observed(self, email: str) -> list[GameRow]:
        conn = self._c
        rows = conn.execute(f"SELECT {_GAME_COLS} FROM games WHERE id IN"
                            " (SELECT game_id FROM observers WHERE email = ?)"
                            " ORDER BY updated_at DESC, id DESC", (email.lower(),)).fetchall()
        return _load_games(conn, rows)

    def get_player(self, email: str) -> dict[str, Any]:
        row = self._c.execute("SELECT settings FROM players WHERE email = ?",
                              (email.lower(),)).fetchone()
        return json_loads(row[0]) if row else {}

    def set_player(self, email: str, settings: dict[str, Any]) -> None:
        self._c.execute("INSERT INTO players (email, settings) VALUES (?, ?) ON CONFLICT (email)"
                        " DO UPDATE SET settings = excluded.settings",
                        (email.lower(), json_dumps(settings)))

    def nickname_owner(self, nickname: str) -> str | None:
        row = self._c.execute("SELECT email FROM players WHERE lower(json_extract(settings, '$.nickname'))"
                              " = lower(?) LIMIT 1", (nickname,)).fetchone()
        return row[0] if row else None

    def block(self, email: str, now: datetime, by: str, why: str) -> None:
        self._c.execute("INSERT INTO blocked (email, at, by, why) VALUES (?, ?, ?, ?) ON CONFLICT"
                        " (email) DO UPDATE SET at = excluded.at, by = excluded.by, why = excluded.why",
                        (email.lower(), dt_to_text(now), by, why))

    def unblock(self, email: str) -> bool:
        return self._c.execute("DELETE FROM blocked WHERE email = ?", (email.lower(),)).rowcount == 1

    def is_blocked(self, email: str) -> bool:
        return self._c.execute("SELECT 1 FROM blocked WHERE email = ?",
                               (email.lower(),)).fetchone() is not None

    def claim_once(self, key: str, now: datetime) -> bool:
        cur = self._c.execute("INSERT INTO once_keys (key, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                              (key, dt_to_text(now)))
        return cur.rowcount == 1

    def mail_thread(self, game_id: str, email: str) -> tuple[str, str] | None:
        row = self._c.execute("SELECT root_id, last_id FROM mail_threads WHERE game_id = ? AND email = ?",
                              (game_id, email.lower())).fetchone()
        return (row[0], row[1]) if row else None

    def set_mail_thread(self, game_id: str, email: str, root_id: str, last_id: str) -> None:
        self._c.execute("INSERT INTO mail_threads (game_id, email, root_id, last_id) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT (game_id, email) DO UPDATE SET last_id = excluded.last_id",
                        (game_id, email.lower(), root_id, last_id))

    def hold_for_digest(self, email: str, game_id: str | None, headline: str, now: datetime) -> None:
        self._c.execute("INSERT INTO digest_items (email, game_id, headline, created_at)"
                        " VALUES (?, ?, ?, ?)", (email.lower(), game_id, headline, dt_to_text(now)))

    def digest_items(self, email: str) -> list[tuple[str | None, str, datetime]]:
        rows = self._c.execute("SELECT game_id, headline, created_at FROM digest_items WHERE email = ?"
                               " ORDER BY id", (email.lower(),)).fetchall()
        return [(r[0], r[1], dt_from_text(r[2])) for r in rows]

    def digest_addresses(self) -> list[str]:
        return [r[0] for r in self._c.execute("SELECT DISTINCT email FROM digest_items ORDER BY email")]

    def clear_digest(self, email: str) -> None:
        self._c.execute("DELETE FROM digest_items WHERE email = ?", (email.lower(),))

    def get_meta(self, key: str) -> str | None:
        row = self._c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                        " DO UPDATE SET value = excluded.value", (key, value))

    def games_due(self, until: datetime) -> list[GameRow]:
        conn = self._c
        rows = conn.execute(f"SELECT {_GAME_COLS} FROM games WHERE deadline_at IS NOT NULL"
                            " AND deadline_at <= ? AND status = 'active' ORDER BY deadline_at, id",
                            (dt_to_text(until),)).fetchall()
        return _load_games(conn, rows)

    def search_games(self, *, player: str | None = None, game: str | None = None,
                     date_from: datetime | None = None, date_to: datetime | None = None,
                     status: str | None = None, limit: int | None = None,
                     offset: int = 0, result: str | None = None, winner: str | None = None,
                     loser: str | None = None) -> list[GameRow]:
        return _search_games(self._c, player=player, game=game, date_from=date_from, date_to=date_to,
                             status=status, limit=limit, offset=offset, result=result, winner=winner,
                             loser=loser)

    def add_address_change(self, old_email: str, new_email: str, code_hash: str, now: datetime,
                           expires_at: datetime) -> None:
        self._c.execute("INSERT INTO address_changes (old_email, new_email, code_hash, created_at,"
                        " expires_at) VALUES (?, ?, ?, ?, ?)",
                        (old_email.lower(), new_email.lower(), code_hash, dt_to_text(now),
                         dt_to_text(expires_at)))

    def address_change(self, code_hash: str) -> AddressChange | None:
        row = self._c.execute("SELECT old_email, new_email, created_at, expires_at, used_at"
                              " FROM address_changes WHERE code_hash = ?", (code_hash,)).fetchone()
        if row is None:
            return None
        return AddressChange(row[0], row[1], dt_from_text(row[2]), dt_from_text(row[3]),  # type: ignore[arg-type]
                             dt_from_text(row[4]))

    def use_address_change(self, code_hash: str, now: datetime) -> None:
        cur = self._c.execute("UPDATE address_changes SET used_at = ? WHERE code_hash = ?"
                              " AND used_at IS NULL", (dt_to_text(now), code_hash))
        if cur.rowcount == 0:
            raise LookupError("no pending address change with that code")

    def move_player(self, old_email: str, new_email: str) -> None:
        old, new = old_email.lower(), new_email.lower()
        conn = self._c
        settings = conn.execute("SELECT settings FROM players WHERE email = ?", (old,)).fetchone()
        if settings is not None:
            conn.execute("DELETE FROM players WHERE email = ?", (old,))
            conn.execute("INSERT INTO players (email, settings) VALUES (?, ?) ON CONFLICT (email)"
                         " DO UPDATE SET settings = excluded.settings", (new, settings[0]))
        conn.execute("UPDATE OR IGNORE observers SET email = ? WHERE email = ?", (new, old))
        conn.execute("DELETE FROM observers WHERE email = ?", (old,))
        conn.execute("UPDATE digest_items SET email = ? WHERE email = ?", (new, old))

    def active_games(self) -> list[GameRow]:
        conn = self._c
        rows = conn.execute(f"SELECT {_GAME_COLS} FROM games WHERE status = 'active'"
                            " ORDER BY id").fetchall()
        return _load_games(conn, rows)


def _search_games(conn: sqlite3.Connection, *, player: str | None = None, game: str | None = None,
                  date_from: datetime | None = None, date_to: datetime | None = None,
                  status: str | None = None, limit: int | None = None,
                  offset: int = 0, result: str | None = None, winner: str | None = None,
                  loser: str | None = None) -> list[GameRow]:
    """One query for the archive search, shaped to use the indexes of migrations 3 and 5."""
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
    sql = f"SELECT {_GAME_COLS} FROM games"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {date} DESC, id DESC"
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return _load_games(conn, conn.execute(sql, params).fetchall())


def _opt_dt(value: datetime | None) -> str | None:
    return dt_to_text(value) if value is not None else None


class SQLiteStore:
    """``Store`` on one SQLite file. Opening it brings the schema up to date (see ``migrate``)."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        text = os.fspath(path)
        if text == ":memory:" or text.startswith("file:") or not text:
            # Each thread has its own connection, so an in-memory database would be a different
            # one in every thread; tests use a file in a temporary directory instead.
            raise ValueError(f"SQLiteStore needs a file path, not {text!r}")
        self.path = Path(text)
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._lock_file: Any = None
        self._lock_file_pid = 0
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._pid = os.getpid()
        self._closed = False
        try:
            self._ensure_wal(self._conn())
            self.migrate()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = FULL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreClosedError(f"{self!r} is closed")
        if os.getpid() != self._pid:
            self._after_fork()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            self._local.in_tx = False
            with self._lock:
                self._close_dead_threads()
                self._conns.append((threading.current_thread(), conn))
        return conn

    def _close_dead_threads(self) -> None:
        """A short-lived worker thread leaves its connection behind; close those so a long-running
        daemon does not collect open file handles."""
        alive = []
        for thread, conn in self._conns:
            if thread.is_alive():
                alive.append((thread, conn))
            else:
                conn.close()
        self._conns = alive

    def _after_fork(self) -> None:
        _INHERITED.extend(conn for _, conn in self._conns)
        self._conns = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()

    @contextmanager
    def _process_lock(self) -> Iterator[None]:
        """An exclusive flock on DB-lock, opened once per process: after a fork the inherited
        descriptor would share its lock with the parent and exclude nothing."""
        if self._lock_file_pid != os.getpid():
            self._lock_file = open(self.path.with_name(self.path.name + "-lock"), "a+b")  # noqa: SIM115
            self._lock_file_pid = os.getpid()
        fd = self._lock_file.fileno()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _ensure_wal(self, conn: sqlite3.Connection) -> None:
        """The journal mode is stored in the file, so only the first opener switches it; that
        switch needs an exclusive lock and may report busy without waiting, hence the retry."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise StoreError(f"{self.path}: cannot use WAL journal mode (got {mode!r})")
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        if self._local.in_tx:
            raise StoreError("a store write was started inside store.transaction() on the same "
                             "thread; do it through the Tx, or after the transaction")
        # Writers queue on locks, threads of this process on a mutex and processes (the daemon's
        # processor process, pbem deliver) on an flock beside the database: SQLite's own busy
        # handler would make them sleep 1-100 ms between retries, far longer than a write takes.
        with self._write_lock, self._process_lock():
            conn.execute("BEGIN IMMEDIATE")
            self._local.in_tx = True
            try:
                try:
                    yield conn
                except BaseException:
                    self._rollback(conn)
                    raise
                try:
                    conn.execute("COMMIT")
                except BaseException:
                    self._rollback(conn)
                    raise
            finally:
                self._local.in_tx = False

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A snapshot for reads that take several statements (a game and its seats)."""
        conn = self._conn()
        if self._local.in_tx:
            yield conn  # inside a transaction of this thread: see its uncommitted writes
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            self._rollback(conn)

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            # SQLite may already have rolled back by itself (e.g. after SQLITE_FULL).
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    # schema

    def schema_version(self) -> int:
        """Version of the schema in the file (0 for an empty file)."""
        conn = self._conn()
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                              " AND name = 'schema_version'").fetchone()
        if not exists:
            return 0
        return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
                   .fetchone()[0])

    def _check_not_newer(self, version: int, latest: int) -> None:
        if version > latest:
            raise SchemaVersionError(
                f"{self.path}: the database has schema version {version}, but this pbem knows "
                f"only versions up to {latest}; it was written by a newer pbem. Upgrade pbem "
                f"(or restore a backup) rather than run the older code on it.")

    def migrate(self) -> int:
        migrations = _migrations.MIGRATIONS
        _migrations.check_sequence(migrations)
        latest = _migrations.latest_version(migrations)
        version = self.schema_version()
        self._check_not_newer(version, latest)
        while version < latest:
            # One transaction per migration; the version is read again under the write lock
            # because another process may be migrating the same file right now.
            with self._write() as conn:
                conn.execute(_SCHEMA_VERSION_DDL)
                version = int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
                              .fetchone()[0])
                self._check_not_newer(version, latest)
                if version >= latest:
                    break
                migration = migrations[version]  # versions are 1..n, checked above
                if migration.sqlite is None:
                    raise StoreError(f"migration {migration.version} ({migration.name}) has no "
                                     "SQLite version")
                for statement in split_statements(migration.sqlite):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version, name, applied_at)"
                             " VALUES (?, ?, ?)",
                             (migration.version, migration.name, dt_to_text(now_utc())))
                version = migration.version
        return version

    def close(self) -> None:
        if os.getpid() != self._pid:
            self._after_fork()
        with self._lock:
            self._closed = True
            conns, self._conns = self._conns, []
        for _, conn in conns:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
        if self._lock_file is not None and self._lock_file_pid == os.getpid():
            self._lock_file.close()
        self._lock_file, self._lock_file_pid = None, 0

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[SQLiteTx]:
        """``durable=False``: COMMIT without fsync (synchronous=NORMAL); ``flush()`` makes it durable
        later. Atomicity and crash (kill -9) safety are the same; only a power loss may undo it."""
        conn = self._conn()
        if not durable:
            conn.execute("PRAGMA synchronous = NORMAL")
        try:
            with self._write() as conn:
                tx = SQLiteTx(conn)
                try:
                    yield tx
                finally:
                    tx._end()
        finally:
            if not durable:
                conn.execute("PRAGMA synchronous = FULL")

    def flush(self) -> None:
        """Make every commit so far durable, those of ``transaction(durable=False)`` too: one fsync
        of the WAL file covers all of them."""
        try:
            fd = os.open(self.path.with_name(self.path.name + "-wal"), os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # intake

    def accept_inbound(self, raw: bytes, source: str, now: datetime,
                       source_ref: str | None = None, *, envelope_from: str | None = None,
                       original_size: int | None = None) -> AcceptResult:
        raw = bytes(raw)
        digest = sha256_hex(raw)
        message_id, sender = header_facts(raw)
        received = dt_to_text(now)
        with self._write() as conn:
            row = conn.execute("SELECT id, status FROM inbound"
                               " WHERE sha256 = ? OR message_id = ? ORDER BY id LIMIT 1",
                               (digest, message_id)).fetchone()
            if row is not None:
                return AcceptResult(inbound_id=row[0], new=False, status=row[1])
            cur = conn.execute(_INSERT_INBOUND, (message_id, digest, source, source_ref, received,
                                                 sender, envelope_from, original_size, raw))
            inbound_id = int(cur.lastrowid)  # type: ignore[arg-type]
        # Reached only after COMMIT returned, i.e. after the WAL was fsynced.
        return AcceptResult(inbound_id=inbound_id, new=True, status="pending")

    def accept_inbound_many(self, items: list[tuple[bytes, str, datetime, str | None, str | None]]
                            ) -> list[AcceptResult]:
        """``accept_inbound`` for several messages in one transaction: one fsync for all (group
        commit); results in the order of ``items``."""
        prepared = [(bytes(raw), sha256_hex(raw), *header_facts(raw), source, dt_to_text(now), ref,
                     envelope_from) for raw, source, now, ref, envelope_from in items]
        results: list[AcceptResult] = []
        with self._write() as conn:
            for raw, digest, message_id, sender, source, received, ref, envelope_from in prepared:
                row = conn.execute("SELECT id, status FROM inbound"
                                   " WHERE sha256 = ? OR message_id = ? ORDER BY id LIMIT 1",
                                   (digest, message_id)).fetchone()
                if row is not None:
                    results.append(AcceptResult(inbound_id=row[0], new=False, status=row[1]))
                    continue
                cur = conn.execute(_INSERT_INBOUND, (message_id, digest, source, ref, received,
                                                     sender, envelope_from, None, raw))
                results.append(AcceptResult(inbound_id=int(cur.lastrowid),  # type: ignore[arg-type]
                                            new=True, status="pending"))
        return results

    def pending_inbound(self, limit: int = 100) -> list[Inbound]:
        rows = self._conn().execute(f"SELECT {_INBOUND_COLS} FROM inbound WHERE status = 'pending'"
                                    " ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [_inbound(r) for r in rows]

    def pending_fair(self, now: datetime, per_sender_per_minute: int, limit: int) -> list[int]:
        # The head of each sender's queue (one index scan over the pending rows, in C), leaving
        # out senders who had their cap processed within the minute (one index lookup per
        # sender). One message per sender per call: the caller's next call starts the next round.
        since = dt_to_text(now - timedelta(minutes=1))
        rows = self._conn().execute(
            "SELECT head FROM (SELECT MIN(id) AS head, sender FROM inbound WHERE status = 'pending'"
            "  GROUP BY sender) AS heads"
            " WHERE ? = 0 OR (SELECT COUNT(*) FROM inbound AS done WHERE done.sender IS heads.sender"
            "  AND done.processed_at >= ?) < ?"
            " ORDER BY head LIMIT ?",
            (per_sender_per_minute, since, per_sender_per_minute, limit)).fetchall()
        return [int(r[0]) for r in rows]

    def get_inbound(self, inbound_id: int) -> Inbound | None:
        row = self._conn().execute(f"SELECT {_INBOUND_COLS} FROM inbound WHERE id = ?",
                                   (inbound_id,)).fetchone()
        return _inbound(row) if row else None

    def inbound_counts(self) -> dict[str, int]:
        rows = self._conn().execute("SELECT status, COUNT(*) FROM inbound GROUP BY status").fetchall()
        counts = dict.fromkeys(INBOUND_STATUSES, 0)
        counts.update({str(status): int(n) for status, n in rows})
        return counts

    def bouncing_addresses(self) -> list[tuple[str, datetime, str]]:
        rows = self._conn().execute("SELECT email, since, detail FROM bouncing ORDER BY since, email"
                                    ).fetchall()
        return [(r[0], dt_from_text(r[1]), r[2]) for r in rows]  # type: ignore[misc]

    def inbound_status(self, inbound_id: int) -> str | None:
        row = self._conn().execute("SELECT status FROM inbound WHERE id = ?",
                                   (inbound_id,)).fetchone()
        return row[0] if row else None

    def iter_inbound(self, status: str | None = None) -> Iterator[Inbound]:
        """Pages by id instead of holding one cursor open, so a slow consumer neither pins a WAL
        snapshot nor blocks this thread from starting a transaction meanwhile."""
        last = 0
        while True:
            if status is None:
                rows = self._conn().execute(f"SELECT {_INBOUND_COLS} FROM inbound WHERE id > ?"
                                            " ORDER BY id LIMIT 100", (last,)).fetchall()
            else:
                rows = self._conn().execute(f"SELECT {_INBOUND_COLS} FROM inbound"
                                            " WHERE status = ? AND id > ? ORDER BY id LIMIT 100",
                                            (status, last)).fetchall()
            if not rows:
                return
            for row in rows:
                yield _inbound(row)
            last = rows[-1][0]

    # outbox sender

    def due_outbound(self, now: datetime, limit: int = 100) -> list[Outbound]:
        # Round-robin by recipient, each recipient's mails oldest first: one player's mails arrive
        # in move order, and two thousand answers to one flooding address do not hold up the
        # next player's board. The ids are chosen on the small columns (and the index of
        # migration 4) before the rows, raw messages included, are read.
        conn = self._conn()
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY recipients ORDER BY id) AS k"
            "  FROM outbound WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ?)"
            " ORDER BY k, id LIMIT ?", (dt_to_text(now), limit))]
        if not ids:
            return []
        rows = conn.execute(f"SELECT {_OUTBOUND_COLS} FROM outbound WHERE id IN"
                            f" ({','.join('?' * len(ids))})", ids).fetchall()
        by_id = {r[0]: r for r in rows}
        return [_outbound(by_id[i]) for i in ids if i in by_id]

    def mark_sent(self, outbound_id: int, now: datetime) -> None:
        with self._write() as conn:
            cur = conn.execute("UPDATE outbound SET sent_at = COALESCE(sent_at, ?) WHERE id = ?",
                               (dt_to_text(now), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no outbound message {outbound_id}")

    def mark_sent_many(self, outbound_ids: list[int], now: datetime) -> None:
        """``mark_sent`` for several rows in one transaction (one fsync instead of one each)."""
        if not outbound_ids:
            return
        with self._write() as conn:
            conn.executemany("UPDATE outbound SET sent_at = COALESCE(sent_at, ?) WHERE id = ?",
                             [(dt_to_text(now), i) for i in outbound_ids])

    def mark_send_failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None:
        with self._write() as conn:
            cur = conn.execute("UPDATE outbound SET attempts = attempts + 1, last_error = ?,"
                               " next_attempt_at = ? WHERE id = ?",
                               (error, dt_to_text(next_attempt_at), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no outbound message {outbound_id}")

    def mark_given_up(self, outbound_id: int, error: str, now: datetime) -> None:
        with self._write() as conn:
            cur = conn.execute("UPDATE outbound SET attempts = attempts + 1, last_error = ?,"
                               " given_up_at = ? WHERE id = ? AND sent_at IS NULL",
                               (error, dt_to_text(now), outbound_id))
            if cur.rowcount == 0:
                raise LookupError(f"no unsent outbound message {outbound_id}")

    def reset_backoff(self, now: datetime) -> int:
        stamp = dt_to_text(now)
        with self._write() as conn:
            return conn.execute("UPDATE outbound SET next_attempt_at = ?, attempts = 0"
                                " WHERE sent_at IS NULL AND given_up_at IS NULL"
                                " AND next_attempt_at > ?", (stamp, stamp)).rowcount

    def outbound_counts(self) -> dict[str, int]:
        with self._read() as conn:
            total = conn.execute("SELECT COUNT(*) FROM outbound").fetchone()[0]
            pending = conn.execute("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL"
                                   " AND given_up_at IS NULL").fetchone()[0]
            given_up = conn.execute("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL"
                                    " AND given_up_at IS NOT NULL").fetchone()[0]
        return {"pending": int(pending), "sent": int(total - pending - given_up),
                "given_up": int(given_up)}

    def given_up_outbound(self, limit: int = 50) -> list[Outbound]:
        rows = self._conn().execute(
            f"SELECT {_OUTBOUND_COLS} FROM outbound WHERE sent_at IS NULL"
            " AND given_up_at IS NOT NULL ORDER BY given_up_at DESC, id DESC LIMIT ?",
            (limit,)).fetchall()
        return [_outbound(r) for r in rows]

    # IMAP progress

    def imap_state(self, mailbox: str) -> tuple[int, int] | None:
        row = self._conn().execute("SELECT uidvalidity, last_uid FROM imap_state"
                                   " WHERE mailbox = ?", (mailbox,)).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def set_imap_state(self, mailbox: str, uidvalidity: int, last_uid: int) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO imap_state (mailbox, uidvalidity, last_uid) VALUES (?, ?, ?)"
                         " ON CONFLICT (mailbox) DO UPDATE SET uidvalidity = excluded.uidvalidity,"
                         " last_uid = excluded.last_uid", (mailbox, uidvalidity, last_uid))

    # read-only views

    def get_game(self, game_id: str) -> GameRow | None:
        with self._read() as conn:
            return _get_game(conn, game_id)

    def search_games(self, *, player: str | None = None, game: str | None = None,
                     date_from: datetime | None = None, date_to: datetime | None = None,
                     status: str | None = None, limit: int | None = None,
                     offset: int = 0, result: str | None = None, winner: str | None = None,
                     loser: str | None = None) -> list[GameRow]:
        with self._read() as conn:
            return _search_games(conn, player=player, game=game, date_from=date_from, date_to=date_to,
                                 status=status, limit=limit, offset=offset, result=result,
                                 winner=winner, loser=loser)

    def list_games(self, status: str | None = None) -> list[GameRow]:
        with self._read() as conn:
            if status is None:
                rows = conn.execute(f"SELECT {_GAME_COLS} FROM games ORDER BY created_at, id"
                                    ).fetchall()
            else:
                rows = conn.execute(f"SELECT {_GAME_COLS} FROM games WHERE status = ?"
                                    " ORDER BY created_at, id", (status,)).fetchall()
            return _load_games(conn, rows)
