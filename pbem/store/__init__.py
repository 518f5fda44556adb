"""Storage behind one small interface (``pbem.store.base``); ``open_store`` picks the backend."""

from __future__ import annotations

import os
from pathlib import Path

from pbem.store.base import Store
from pbem.store.common import SchemaVersionError, StoreClosedError, StoreError

__all__ = ["SchemaVersionError", "Store", "StoreClosedError", "StoreError", "open_store",
           "sqlite_path"]


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


def open_store(target: str | os.PathLike[str]) -> Store:
    """Open (and migrate) the store a configuration's ``database`` setting names."""
    path = sqlite_path(target)
    if path is not None:
        from pbem.store.sqlite import SQLiteStore

        return SQLiteStore(path)
    scheme = os.fspath(target).partition("://")[0].lower()
    if scheme in ("postgresql", "postgres"):
        raise NotImplementedError("PostgreSQL backend: not yet")
    raise ValueError(f"unsupported database URL scheme {scheme!r}: use a file path, "
                     "sqlite:///path or postgresql://...")
