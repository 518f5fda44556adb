"""The SQLite backend: the default store, one file next to the server's other data.

Durability: WAL with ``synchronous=FULL`` makes every COMMIT fsync the log, so a message is on disk
once ``accept_inbound`` returns (the SMTP listener answers 250 only then) and survives kill -9 and
power loss. ``accept_inbound_many`` (the listener's group commit) commits without the fsync and then
fsyncs the log itself (``flush``), after the write lock is released: as durable, without holding
up the processor for the disk.

Concurrency: several threads of the daemon (SMTP listener, processor, sender) and other processes
(``pbem deliver``, CLI tools) use one file. Each thread gets its own connection, because a sqlite3
connection serialises its users and one thread's open transaction would be visible to the others.
Across processes SQLite's file locks do the work. Every write starts with ``BEGIN IMMEDIATE``: a
transaction that starts as a reader and later wants to write can fail at once with SQLITE_BUSY
(the busy timeout does not apply to that upgrade), while ``BEGIN IMMEDIATE`` simply waits for the
write lock. Readers never wait in WAL mode. With several processor processes (``[server]
processors``) their transactions do their work outside the lock and take it only to commit
(``optimistic``, ``pbem.store.optimistic``), so they work side by side.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from pbem import failpoints
from pbem.store.common import StoreError, StoreUnavailableError
from pbem.store.migrations import Migration
from pbem.store.optimistic import Attempt
from pbem.store.sql import Db, Dialect, SqlStore, SqlTx

SQLiteTx = SqlTx  # the transaction object is the shared one (pbem.store.sql)


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


#: Besides busy: a disk that is full, read-only or failing, or a file that cannot be opened. Each
#: leaves the transaction undone, and the same work succeeds once the disk is fixed, so it is
#: ``StoreUnavailableError`` (try again later), never a reason to mark a message failed.
_UNAVAILABLE_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL,
                      sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN)


def is_unavailable(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _UNAVAILABLE_CODES
    text = str(exc)
    return any(word in text for word in ("locked", "busy", "disk is full", "readonly",
                                         "disk I/O error", "unable to open"))


DIALECT = Dialect(
    name="SQLite", for_update="", skip_locked="",
    json_text=lambda column, key: f"json_extract({column}, '$.{key}')",
    transient=(sqlite3.OperationalError,), is_transient=is_unavailable,  # AUTOINCREMENT follows given ids
    last_row_id=True)


class SQLiteStore(SqlStore):
    """``Store`` on one SQLite file. Opening it brings the schema up to date (see ``migrate``)."""

    dialect = DIALECT
    one_writer = True

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        text = os.fspath(path)
        if text == ":memory:" or text.startswith("file:") or not text:
            # Each thread has its own connection, so an in-memory database would be a different
            # one in every thread; tests use a file in a temporary directory instead.
            raise ValueError(f"SQLiteStore needs a file path, not {text!r}")
        self.path = Path(text)
        self.name = str(self.path)
        self.busy_timeout = busy_timeout
        self._write_lock = threading.Lock()
        self._lock_file: Any = None
        self._lock_file_pid = 0
        self._roles: dict[str, Any] = {}  # role -> the open file its flock is held on
        self._start()

    # connections

    def _prepare(self) -> None:
        self._ensure_wal(self._conn())

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

    def _forked(self) -> list[Any]:
        self._write_lock = threading.Lock()
        self._roles = {}  # the parent's: closing our copies would not free them anyway
        return []

    def _closing(self) -> list[Any]:
        for role in list(self._roles):
            self.release_role(role)
        if self._lock_file is not None and self._lock_file_pid == os.getpid():
            self._lock_file.close()
        self._lock_file, self._lock_file_pid = None, 0
        return []

    def open_now(self) -> None:
        super().open_now()
        self._lock_fd()

    def _lock_fd(self) -> int:
        """DB-lock, opened once per process: after a fork the inherited descriptor would share its
        lock with the parent and exclude nothing."""
        if self._lock_file_pid != os.getpid():
            self._lock_file = open(self.path.with_name(self.path.name + "-lock"), "a+b")  # noqa: SIM115
            self._lock_file_pid = os.getpid()
        return self._lock_file.fileno()

    @contextmanager
    def _process_lock(self) -> Iterator[None]:
        """An exclusive flock on DB-lock (``_lock_fd``)."""
        fd = self._lock_fd()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _vacuum(self) -> None:  # type: ignore[override]
        """``VACUUM`` (``pbem admin prune --vacuum``) runs outside a transaction, so it takes the
        writers' locks itself: the server's writers wait for it instead of failing busy."""
        conn = self._conn()
        with self._write_lock, self._process_lock():
            conn.execute("VACUUM")
            # the rewritten pages are in the WAL until a checkpoint: only then is the file smaller
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

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
    def _write(self, durable: bool = True) -> Iterator[Db]:
        """``durable=False``: COMMIT without fsync (synchronous=NORMAL); ``flush()`` makes it durable
        later. Atomicity and crash (kill -9) safety are the same; only a power loss may undo it."""
        conn = self._conn()
        if self._local.in_tx:
            raise StoreError("a store write was started inside store.transaction() on the same "
                             "thread; do it through the Tx, or after the transaction")
        # The connection keeps its mode between transactions (every write of this store goes through
        # here, so each BEGIN runs in the mode its caller asked for): a thread that only processes,
        # or only takes in mail, sets it once instead of twice per transaction.
        mode = (conn, "FULL" if durable else "NORMAL")
        if getattr(self._local, "synchronous", None) != mode:
            conn.execute(f"PRAGMA synchronous = {mode[1]}")
            self._local.synchronous = mode
        # Writers queue on locks, threads of this process on a mutex and processes (the daemon's
        # processor process, pbem deliver) on an flock beside the database: SQLite's own busy
        # handler would make them sleep 1-100 ms between retries, far longer than a write takes.
        try:
            with self._write_lock, self._process_lock():
                conn.execute("BEGIN IMMEDIATE")
                self._local.in_tx = True
                try:
                    try:
                        yield Db(conn, DIALECT)
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
        except BaseException as exc:
            self._local.synchronous = None  # unknown: set again by the next transaction
            cause = exc if isinstance(exc, sqlite3.Error) else exc.__cause__
            if (getattr(cause, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_READONLY:
                # Opened while the file could not be written (a read-only folder or mount), the
                # connection stays read-only for good: the next write opens a new one.
                self._drop(conn)
            if isinstance(exc, sqlite3.OperationalError) and is_unavailable(exc):
                # BEGIN or COMMIT on a full or read-only disk: nothing was written
                raise StoreUnavailableError(f"{type(exc).__name__}: {exc}") from exc
            raise

    @contextmanager
    def optimistic(self, durable: bool = True) -> Iterator[SqlTx]:
        """A transaction whose code runs outside the write lock, on a snapshot, with its writes
        held back; at the end of the with-block they are committed under the lock if nothing it
        read changed meanwhile, else ``Conflict`` (nothing written) or, as soon as the code does
        what cannot be held back, ``NeedsLock``: see ``pbem.store.optimistic``."""
        conn = self._conn()
        if self._local.in_tx:
            raise StoreError("store.optimistic() inside a transaction of the same thread")
        attempt = Attempt(Db(conn, DIALECT))
        conn.execute("BEGIN")  # one snapshot for every read of the attempt, no lock
        self._local.in_tx = True
        tx = SqlTx(attempt.db())
        try:
            yield tx
        finally:
            tx._end()
            self._local.in_tx = False
            self._rollback(conn)
        if attempt.refused is not None:  # caught by the code inside, yet the attempt is void
            raise attempt.refused
        if attempt.writes:
            with self._write(durable) as db:
                attempt.commit(db)
                failpoints.hit("optimistic-commit")

    @contextmanager
    def _read(self) -> Iterator[Db]:
        """A snapshot for reads that take several statements (a game and its seats)."""
        conn = self._conn()
        if self._local.in_tx:
            yield Db(conn, DIALECT)  # inside a transaction of this thread: see its uncommitted writes
            return
        conn.execute("BEGIN")
        try:
            yield Db(conn, DIALECT)
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

    def _script(self, migration: Migration) -> str | None:
        return migration.sqlite

    def _run_script(self, db: Db, script: str) -> None:
        for statement in split_statements(script):
            db.run(statement)

    def _migration(self) -> Any:
        return self._write()

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

    # roles

    def role_sessions(self, roles: Sequence[str]) -> dict[str, list[str]] | None:
        return None  # another process's flock is not listed anywhere we can read portably

    def hold_role(self, role: str) -> bool:
        """An flock on a file beside the database: held while this process keeps the file open,
        freed by the kernel when the process dies."""
        if role in self._roles:
            return True
        handle = open(self.path.with_name(f"{self.path.name}-role-{role}"), "a+b")  # noqa: SIM115
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._roles[role] = handle
        return True

    def release_role(self, role: str) -> None:
        handle = self._roles.pop(role, None)
        if handle is not None:
            handle.close()
