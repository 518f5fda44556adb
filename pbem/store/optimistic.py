"""Optimistic transactions for a store with one write lock (SQLite): a transaction's work done
outside the lock, only its effect committed inside it.

SQLite lets one transaction write at a time. The processor's transaction (read the game, apply the
move, compose every reply: milliseconds of Python) held that lock from its first statement to its
COMMIT, so the SMTP listener's group commit, and with it every ``250``, waited behind it. Here the
same code runs against a read snapshot with its writes held back (``Attempt``): every read is run
and its rows kept, every write is kept unrun. Then, under the write lock, the kept statements run
again in their order (``Attempt.commit``): each read must return exactly the rows it returned
before, and each write must do what the attempt was told it would. Then the transaction read what
the same code run now, under the lock, would have read, so it made the same decisions and writes
the same rows: it commits. Otherwise the write transaction is rolled back (nothing of the attempt
is left anywhere) and ``Conflict`` tells the caller to do the work again the ordinary way.

A read of rows the attempt itself changed needs no special case: the snapshot did not see the
held-back write, so if the write matters to that read, the read returns other rows at the commit
and the attempt conflicts. What a write tells its caller is predicted and checked at the commit:
the rows an UPDATE or DELETE changes (counted with its WHERE on the snapshot), 1 for a plain
INSERT. Any other use of a write's result (rows it returns, the id it gave), and any statement
that is neither a read nor a write, ends the attempt at once (``NeedsLock``): the caller does that
work under the lock. (A new row's id is not predicted: with two processors, each would predict
the same next id. ``Db.holds_writes`` lets the code that would ask for it do without.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.store.common import StoreError
from pbem.store.sql import Db


class NeedsLock(StoreError):
    """The attempt cannot go on without the write lock (a statement whose effect it cannot
    predict): do the work in an ordinary transaction."""


class Conflict(StoreError):
    """Something the attempt read changed before it could commit: nothing was written; do the work
    again."""


_READ = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_WRITE = re.compile(r"\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_WRITES_INSIDE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_COUNTED = re.compile(r"\s*(?:UPDATE\s+(?P<updated>\w+)\s+SET\s+(?P<set>.*?)"
                      r"|DELETE\s+FROM\s+(?P<deleted>\w+))\s+WHERE\s+(?P<where>.*)",
                      re.IGNORECASE | re.DOTALL)
_PLAIN_INSERT = re.compile(r"\s*INSERT\s+INTO\s+\w+\s*\([^()]*\)\s*VALUES\s*\([^()]*\)\s*$", re.IGNORECASE)


@dataclass
class _Read:
    statement: str
    params: Sequence[Any] | None
    rows: list[Any]


@dataclass
class _Write:
    statement: str
    params: Any
    many: bool = False
    rowcount: int | None = None  # what the caller was told, checked at the commit


class _Rows:
    """A read's rows, handed out as its cursor would."""

    rowcount = -1

    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows
        self._at = 0

    def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Any]:
        rest, self._at = self._rows[self._at:], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _Held:
    """The cursor of a held-back write: its effect as predicted (see ``Attempt``)."""

    def __init__(self, attempt: Attempt, entry: _Write) -> None:
        self._attempt = attempt
        self._entry = entry

    @property
    def rowcount(self) -> int:
        if self._entry.rowcount is None:
            self._entry.rowcount = self._attempt.predicted_rowcount(self._entry)
        return self._entry.rowcount

    def fetchone(self) -> Any:
        raise self._attempt.needs_lock(f"rows returned by {self._entry.statement[:60]!r}")

    fetchall = fetchone

    @property
    def lastrowid(self) -> int:
        raise self._attempt.needs_lock("a held-back write's row id")


class Attempt:
    """The statements of one optimistic transaction, in their order: reads with their rows, writes
    held back. ``db()`` is what the transaction's code writes and reads through."""

    def __init__(self, db: Db) -> None:
        self.snapshot = db  # the connection, inside a read transaction
        self.log: list[_Read | _Write] = []
        self.refused: NeedsLock | None = None  # raised once: never committed, even if caught

    def db(self) -> Db:
        return HeldDb(self)

    @property
    def writes(self) -> int:
        return sum(isinstance(entry, _Write) for entry in self.log)

    # --- while the attempt runs ------------------------------------------------------------

    def needs_lock(self, why: str) -> NeedsLock:
        self.refused = NeedsLock(why)
        return self.refused

    def run(self, statement: str, params: Sequence[Any] | None) -> Any:
        if _WRITE.match(statement):
            entry = _Write(statement, params)
            self.log.append(entry)
            return _Held(self, entry)
        if not _READ.match(statement) or _WRITES_INSIDE.search(statement):
            raise self.needs_lock(f"not a plain read or write: {statement[:60]!r}")
        rows = self.snapshot.run(statement, params).fetchall()
        self.log.append(_Read(statement, params, rows))
        return _Rows(rows)

    def many(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        if not _WRITE.match(statement):
            raise self.needs_lock(f"not a write: {statement[:60]!r}")
        rows = list(rows)
        if rows:
            self.log.append(_Write(statement, rows, many=True))

    def predicted_rowcount(self, entry: _Write) -> int:
        plain = _PLAIN_INSERT.match(entry.statement)
        if plain is not None:
            return 1
        counted = _COUNTED.match(entry.statement)
        if counted is None or "(SELECT" in (counted["set"] or "").upper():
            raise self.needs_lock(f"rows changed by {entry.statement[:60]!r}")
        table = counted["updated"] or counted["deleted"]
        params = list(entry.params or ())[(counted["set"] or "").count("?"):]
        return int(self.snapshot.value(f"SELECT COUNT(*) FROM {table} WHERE {counted['where']}", params))

    # --- under the write lock --------------------------------------------------------------

    def commit(self, db: Db) -> None:
        """Run the statements again inside ``db``'s write transaction; ``Conflict`` (and the
        caller rolls back) when a read returns other rows or a write changes other rows than it
        was told. An attempt that once needed the lock never commits (its code may have caught
        the ``NeedsLock`` and gone on without what it asked for)."""
        if self.refused is not None:
            raise self.refused
        for entry in self.log:
            if isinstance(entry, _Read):
                if db.run(entry.statement, entry.params).fetchall() != entry.rows:
                    raise Conflict(f"changed meanwhile: {entry.statement[:60]!r}")
            elif entry.many:
                db.many(entry.statement, entry.params)
            else:
                cursor = db.run(entry.statement, entry.params)
                cursor.fetchall()  # a statement is done only when read out (RETURNING)
                if entry.rowcount is not None and cursor.rowcount != entry.rowcount:
                    raise Conflict(f"{cursor.rowcount} rows, not {entry.rowcount}: {entry.statement[:60]!r}")


class HeldDb(Db):
    """``Db`` for the code inside an attempt: reads on the snapshot, writes held back."""

    __slots__ = ("attempt",)
    holds_writes = True

    def __init__(self, attempt: Attempt) -> None:
        super().__init__(attempt.snapshot.conn, attempt.snapshot.dialect)
        self.attempt = attempt

    def run(self, statement: str, params: Sequence[Any] | None = None) -> Any:
        return self.attempt.run(statement, params)

    def many(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        self.attempt.many(statement, rows)
