"""Every storage test runs against both stores: a SQLite file in a temporary directory, and a fresh
database on the session's throw-away PostgreSQL (tests/services/postgres.py)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pbem.store import open_store
from pbem.store.sql import SqlStore

_numbers = itertools.count(1)


@dataclass
class Backend:
    """One of the two databases, as a test sees it: where it is (``target``, what ``open_store``
    takes), how to open it, the driver's IntegrityError, and plain SQL beside the store."""

    kind: str  # "sqlite" | "postgresql"
    target: str
    integrity_error: type[Exception]
    _sql: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]

    def open(self) -> SqlStore:
        return open_store(self.target)  # type: ignore[return-value]

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run one statement on a connection of its own (autocommit); ``?`` placeholders."""
        return self._sql(statement, params)


def sqlite_backend(path: Path) -> Backend:
    def run(statement: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            return conn.execute(statement, params).fetchall()
        finally:
            conn.close()

    return Backend("sqlite", str(path), sqlite3.IntegrityError, run)


def postgresql_backend(dsn: str) -> Backend:
    import psycopg

    def run(statement: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            cur = (conn.execute(statement.replace("%", "%%").replace("?", "%s"), params) if params
                   else conn.execute(statement))
            return cur.fetchall() if cur.description else []

    return Backend("postgresql", dsn, psycopg.IntegrityError, run)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield sqlite_backend(tmp_path / "pbem.sqlite3")
        return
    postgres = request.getfixturevalue("postgres")
    # Not dropped afterwards: DROP DATABASE waits for a checkpoint (seconds), and the whole
    # throw-away cluster is deleted at the end of the session anyway.
    yield postgresql_backend(postgres.create_database(f"store_{next(_numbers)}"))


@pytest.fixture
def store(backend: Backend) -> Iterator[SqlStore]:
    s = backend.open()
    try:
        yield s
    finally:
        s.close()
