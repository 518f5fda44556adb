"""Storage behind one small interface (``pbem.store.base``); ``open_store`` picks the backend."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from pathlib import Path

from pbem.store import migrations
from pbem.store.base import Store
from pbem.store.common import SchemaVersionError, StoreClosedError, StoreError, StoreUnavailableError

__all__ = ["SchemaVersionError", "Store", "StoreClosedError", "StoreError", "StoreUnavailableError",
           "UnavailableBackendError", "backend_problem", "database_name", "database_problem",
           "is_postgresql", "open_store", "sqlite_path"]

POSTGRESQL_SCHEMES = ("postgresql", "postgres")
POSTGRESQL_MISSING = ("PostgreSQL support needs the psycopg package: pip install 'pbem[postgres]' "
                      "(or use a SQLite file)")


class UnavailableBackendError(StoreError):
    """The database setting names a kind of database this installation cannot open."""


def sqlite_path(target: str | os.PathLike[str]) -> Path | None:
    """The file a target names, or None when it names another backend.

    URLs follow the SQLAlchemy convention: ``sqlite:///relative/file`` and
    ``sqlite:////absolute/file``; anything without ``://`` is a plain path.
    """
    text = os.fspath(target)
    if "://" not in text:
        return Path(text)
    scheme, _, rest = text.partition("://")
    if scheme.lower() not in ("sqlite", "sqlite3"):
        return None
    if not rest.startswith("/") or rest == "/":
        raise ValueError(f"{text!r}: expected sqlite:///relative/path or sqlite:////absolute/path")
    return Path(rest[1:])


def backend_problem(target: str | os.PathLike[str]) -> str | None:
    """Why this installation has no backend for ``target``, or None when it has one.

    The one place that knows which databases work, so that ``pbem init``, ``check-config``,
    ``serve`` and ``open_store`` agree (a backend added later is switched on here).
    """
    try:
        if sqlite_path(target) is not None:
            return None
    except ValueError as exc:
        return str(exc)
    scheme = os.fspath(target).partition("://")[0].lower()
    if scheme in POSTGRESQL_SCHEMES:
        return None if importlib.util.find_spec("psycopg") else POSTGRESQL_MISSING
    return (f"unsupported database URL scheme {scheme!r}: use a file path, sqlite:///path or "
            "postgresql://user@host/database")


def is_postgresql(target: str | os.PathLike[str]) -> bool:
    return os.fspath(target).partition("://")[0].lower() in POSTGRESQL_SCHEMES


def database_name(target: str | os.PathLike[str]) -> str:
    """The database setting as messages and logs may show it: a PostgreSQL URI without password."""
    if is_postgresql(target):
        from pbem.store.postgres import redacted

        return redacted(os.fspath(target))
    return os.fspath(target)


def database_problem(target: str | os.PathLike[str]) -> str | None:
    """Why opening ``target`` would fail, found without changing it (no file created, no migration),
    or None. A SQLite file that does not exist yet is no problem: the store creates it (whether its
    folder can be created is the caller's to check). A PostgreSQL database is connected to, and its
    schema version read."""
    problem = backend_problem(target)
    if problem is None and is_postgresql(target):
        from pbem.store.postgres import database_problem as postgresql_problem

        return postgresql_problem(os.fspath(target), migrations.latest_version())
    path = sqlite_path(target) if problem is None else None
    if problem is not None or path is None or not path.exists():
        return problem
    if not path.is_file():
        return "not a file"
    if not os.access(path, os.R_OK | os.W_OK):
        return "no permission to read and write it"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            known = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                 " AND name = 'schema_version'").fetchone()
            version = int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
                          .fetchone()[0]) if known else 0
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return str(exc)
    latest = migrations.latest_version()
    if version > latest:
        return (f"schema version {version} was written by a newer pbem (this one knows versions up "
                f"to {latest})")
    return None


def open_store(target: str | os.PathLike[str]) -> Store:
    """Open (and migrate) the store a configuration's ``database`` setting names."""
    path = sqlite_path(target)
    if path is not None:
        from pbem.store.sqlite import SQLiteStore

        return SQLiteStore(path)
    problem = backend_problem(target)
    if problem is None and is_postgresql(target):
        from pbem.store.postgres import PostgresStore

        return PostgresStore(os.fspath(target))
    raise UnavailableBackendError(problem)
