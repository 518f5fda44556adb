"""The PostgreSQL backend: one database shared by any number of ``pbem serve`` workers.

The statements are the shared ones of ``pbem.store.sql``; this module holds what only a server
database has:

* Connections: one per thread (psycopg connections serialise their users), opened lazily, replaced
  when the server dropped them. A process forked from one that has connections leaves the inherited
  ones alone (closing them would end the parent's sessions) and opens its own.
* Durability: ``transaction(durable=False)`` commits with ``synchronous_commit = off``; ``flush()``
  then commits one WAL record synchronously, which makes every earlier commit durable too, since
  the WAL is one sequence. A reply is sent only after such a flush, as with SQLite.
* Row locks: claims use ``FOR UPDATE SKIP LOCKED`` and a move locks its game's row (``FOR UPDATE``);
  a deadlock or a lost connection is ``StoreUnavailableError`` (nothing changed; try again).
* Roles: ``pg_try_advisory_lock`` on a connection of its own. The server frees the lock when that
  session ends, at once when the worker process dies, or within about 30 s (TCP keepalives) when its
  machine or network does.
* Migrations: each in one transaction (PostgreSQL has transactional DDL) under an advisory lock, so
  workers starting at once migrate one after the other.
"""

from __future__ import annotations

import logging
import os
import re
import select
import socket
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import psycopg

from pbem.store.base import AcceptResult
from pbem.store.common import StoreClosedError, StoreError, StoreUnavailableError
from pbem.store.migrations import Migration
from pbem.store.sql import Db, Dialect, SqlStore

log = logging.getLogger(__name__)

#: First key of every advisory lock pbem takes ("pbem" in ASCII), so other users of the database
#: are not disturbed; the second key names the lock.
LOCK_SPACE = 0x7062656D
#: application_name of a worker's role connection, followed by "host:pid"
ROLE_SESSION = "pbem-roles "
#: The channel on which the intake tells every worker of new mail (payload: its game id, or empty).
INBOUND_CHANNEL = "pbem_inbound"
#: How long the watching connection waits for a notification before it looks at ``stop`` again.
WATCH_SECONDS = 1.0
MIGRATION_LOCK = 1

#: Libpq settings of every connection: a dead peer is noticed within about 25 s (keepalives), which
#: bounds how long a role stays with a worker whose machine died.
CONNECT_OPTIONS: dict[str, Any] = {
    "connect_timeout": 10, "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
    "keepalives_count": 3, "tcp_user_timeout": 25000, "application_name": "pbem",
}


def _transient(exc: BaseException) -> bool:
    """OperationalError covers a lost connection, a server shutting down, a deadlock and a
    serialisation failure: all of them leave nothing changed and are worth another try."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


DIALECT = Dialect(
    name="PostgreSQL", for_update=" FOR UPDATE", skip_locked=" FOR UPDATE SKIP LOCKED",
    json_text=lambda column, key: f"(CAST({column} AS jsonb) ->> '{key}')",
    transient=(psycopg.OperationalError, psycopg.InterfaceError), is_transient=_transient,
    reset_identity=lambda table: (f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                                  f" COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"),
    format_params=True, fence=" OFFSET 0")


def role_key(role: str) -> int:
    return zlib.crc32(role.encode()) & 0x7FFFFFFF


def redacted(dsn: str) -> str:
    """The DSN without its password, for messages and logs."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return dsn.split("@")[-1]
    host, port, name = info.get("host", ""), info.get("port", ""), info.get("dbname", "")
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{':' + str(port) if port else ''}/{name}"


def _reason(exc: BaseException) -> str:
    """libpq's message in one line: its first line without the address the caller names anyway
    ("Connection refused", "password authentication failed for user ...")."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    line = re.sub(r"^(connection failed: )?(connection to server .*? failed: )?(FATAL: +)?", "", lines[0])
    return line or lines[0]


def connect(dsn: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(dsn, autocommit=True, **CONNECT_OPTIONS)
    except psycopg.OperationalError as exc:
        raise StoreUnavailableError(_reason(exc)) from None
    except psycopg.Error as exc:  # e.g. a malformed URI: not worth another try
        raise StoreError(_reason(exc)) from None


def schema_version_of(conn: psycopg.Connection[Any]) -> int:
    if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:  # type: ignore[index]
        return 0
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
    return int(row[0])  # type: ignore[index]


class PostgresStore(SqlStore):
    """``Store`` on a PostgreSQL database named by a libpq URI (``postgresql://user@host/db``).
    Opening it brings the schema up to date (see ``migrate``)."""

    dialect = DIALECT
    one_writer = False

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.name = redacted(dsn)
        self._role_conn: psycopg.Connection[Any] | None = None
        self._roles: set[str] = set()
        self._role_lock = threading.Lock()
        self._flush_conn: psycopg.Connection[Any] | None = None
        self._flush_lock = threading.Lock()
        self._start()

    # connections

    def _connect(self) -> psycopg.Connection[Any]:
        return connect(self.dsn)

    def _usable(self, conn: Any) -> bool:
        """Closed, or closed by the server meanwhile (a restart, an administrator): the socket of a
        connection at rest is readable then (the server's last word, "terminating connection",
        and the end of the stream). Found here, at the cost of one poll, it is replaced before it
        is used; else every thread's first statement after a database restart failed. (A rare
        notice at rest costs a reconnection, nothing more.)"""
        if conn.closed:
            return False
        if getattr(self._local, "in_tx", False):
            return True
        try:
            readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
        except (psycopg.Error, OSError, ValueError):
            return False
        return not readable

    def _forked(self) -> list[Any]:
        inherited = [c for c in (self._role_conn, self._flush_conn) if c is not None]
        self._role_conn, self._roles, self._role_lock = None, set(), threading.Lock()
        self._flush_conn, self._flush_lock = None, threading.Lock()
        return inherited

    def _closing(self) -> list[Any]:
        with self._role_lock:
            role_conn, self._role_conn, self._roles = self._role_conn, None, set()
        with self._flush_lock:
            flush_conn, self._flush_conn = self._flush_conn, None
        return [c for c in (role_conn, flush_conn) if c is not None]

    @contextmanager
    def _transaction(self, begin: tuple[str, ...], end: str, *, nested_ok: bool = False
                     ) -> Iterator[Db]:
        conn = self._conn()
        if self._local.in_tx:
            if nested_ok:
                yield Db(conn, DIALECT)  # inside a transaction of this thread: see its writes
                return
            raise StoreError("a store write was started inside store.transaction() on the same "
                             "thread; do it through the Tx, or after the transaction")
        db = Db(conn, DIALECT)
        db.run(begin[0])
        self._local.in_tx = True
        try:
            try:
                for statement in begin[1:]:
                    db.run(statement)
                yield db
            except BaseException:
                self._rollback(conn)
                raise
            try:
                db.run(end)
            except BaseException:
                self._rollback(conn)
                raise
        finally:
            self._local.in_tx = False

    def _rollback(self, conn: psycopg.Connection[Any]) -> None:
        try:
            conn.execute("ROLLBACK")
        except Exception:
            self._drop(conn)  # a broken connection cannot roll back; the server already did

    @contextmanager
    def _write(self, durable: bool = True) -> Iterator[Db]:
        # One round trip: several statements without parameters go as one simple query.
        begin = ("BEGIN",) if durable else ("BEGIN; SET LOCAL synchronous_commit = off",)
        with self._transaction(begin, "COMMIT") as db:
            yield db

    def _read(self) -> Any:
        return self._transaction(("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",), "ROLLBACK",
                                 nested_ok=True)

    # schema

    def schema_version(self) -> int:
        """Version of the schema in the database (0 for an empty one)."""
        return schema_version_of(self._conn())

    def _script(self, migration: Migration) -> str | None:
        return migration.postgresql

    def _run_script(self, db: Db, script: str) -> None:
        db.run(script)  # no parameters: several statements in one go

    @contextmanager
    def _migration(self) -> Iterator[Db]:
        with self._write() as db:
            db.run("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_SPACE, MIGRATION_LOCK))
            yield db

    def _announce_inbound(self, db: Db, results: list[AcceptResult]) -> None:
        # Delivered when (and only if) the transaction commits; one per game (PostgreSQL drops
        # the same payload sent twice in one transaction anyway).
        for game in dict.fromkeys(r.game_id or "" for r in results if r.new):
            db.run("SELECT pg_notify(?, ?)", (INBOUND_CHANNEL, game))

    def watch_inbound(self, on_stored: Callable[[str | None], None], stop: threading.Event) -> bool:
        """On a connection of its own, LISTENing; after a failure (the database away) it connects
        again a second later: meanwhile the workers' polls find the mail, as without it. What this
        process stored itself is not passed on: its intake woke its processor already (a single
        worker hears nothing)."""
        while not stop.is_set():
            try:
                with connect(self.dsn) as conn:
                    conn.execute(f"LISTEN {INBOUND_CHANNEL}")
                    while not stop.is_set():
                        for note in conn.notifies(timeout=WATCH_SECONDS):
                            if note.pid not in self._own_sessions():
                                on_stored(note.payload or None)
                            if stop.is_set():
                                break
            except (StoreError, psycopg.Error, OSError) as exc:
                log.debug("watching for new mail: %s; again in a second", exc)
                stop.wait(1.0)
        return True

    def _own_sessions(self) -> set[int]:
        """The server processes (backend pids) of this process's connections now."""
        with self._lock:
            conns = [conn for _, conn in self._conns]
        return {conn.info.backend_pid for conn in conns if not conn.closed}

    def flush(self) -> None:
        """Make every commit so far durable, those of ``transaction(durable=False)`` too: a commit
        that wrote WAL waits for the WAL up to it, which holds every earlier commit of any session.
        On a connection of its own, so the sender can flush inside its claim transaction."""
        if self._closed:
            raise StoreClosedError(f"{self!r} is closed")
        if os.getpid() != self._pid:
            self._after_fork()
        with self._flush_lock:
            for attempt in (1, 2):
                if self._flush_conn is None or self._flush_conn.closed:
                    self._flush_conn = connect(self.dsn)
                try:
                    with self._flush_conn.transaction():
                        self._flush_conn.execute("SELECT pg_logical_emit_message(true, 'pbem', 'flush')")
                    return
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    with suppress(Exception):
                        self._flush_conn.close()
                    self._flush_conn = None
                    if attempt == 2:
                        raise StoreUnavailableError(f"flush: {exc}") from exc

    # roles

    def hold_role(self, role: str) -> bool:
        """Held while the role connection lives: each call checks it, so a worker whose session was
        lost (and with it the lock, perhaps to another worker by now) learns so here."""
        if os.getpid() != self._pid:
            self._after_fork()
        with self._role_lock:
            conn = self._role_conn
            if conn is not None:
                try:
                    conn.execute("SELECT 1")
                except (psycopg.OperationalError, psycopg.InterfaceError):
                    with suppress(Exception):
                        conn.close()
                    conn, self._role_conn, self._roles = None, None, set()
            if role in self._roles:
                return True
            try:
                if conn is None:
                    conn = self._role_conn = connect(self.dsn)
                    # names the worker, so that ``role_sessions`` can tell who holds what
                    conn.execute("SELECT set_config('application_name', %s, false)",
                                 (f"{ROLE_SESSION}{socket.gethostname()}:{os.getpid()}",))
                row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                   (LOCK_SPACE, role_key(role))).fetchone()
            except (StoreUnavailableError, psycopg.OperationalError, psycopg.InterfaceError):
                return False
            if row and row[0]:
                self._roles.add(role)
                return True
            return False

    def role_sessions(self, roles: Sequence[str]) -> dict[str, list[str]] | None:
        keys = {role_key(r): r for r in roles}
        found: dict[str, list[str]] = {}
        with self._read() as db:
            rows = db.all("SELECT a.application_name, l.objid FROM pg_stat_activity a"
                          " LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory'"
                          " AND l.granted AND l.classid = ? AND l.objsubid = 2"
                          " WHERE a.application_name LIKE ?", (LOCK_SPACE, ROLE_SESSION + "%"))
        for name, objid in rows:
            held = found.setdefault(name[len(ROLE_SESSION):], [])
            if objid is not None and int(objid) in keys:
                held.append(keys[int(objid)])
        return {worker: sorted(held) for worker, held in found.items()}

    def release_role(self, role: str) -> None:
        with self._role_lock:
            if role not in self._roles or self._role_conn is None:
                return
            self._roles.discard(role)
            with suppress(psycopg.OperationalError, psycopg.InterfaceError):
                self._role_conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, role_key(role)))


def database_problem(dsn: str, latest: int) -> str | None:
    """Why ``pbem serve`` could not use this database, found by connecting and reading the schema
    version only (nothing is created), or None."""
    try:
        conn = psycopg.connect(dsn, autocommit=True, **CONNECT_OPTIONS)
    except psycopg.Error as exc:
        return _reason(exc)
    try:
        version = schema_version_of(conn)
    except psycopg.Error as exc:
        return _reason(exc)
    finally:
        conn.close()
    if version > latest:
        return (f"schema version {version} was written by a newer pbem (this one knows versions up "
                f"to {latest})")
    return None
