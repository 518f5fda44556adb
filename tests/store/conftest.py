from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.store.sqlite import SQLiteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "pbem.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(db_path)
    try:
        yield s
    finally:
        s.close()
