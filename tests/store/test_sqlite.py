"""What only the SQLite store has: connection settings, its statement splitter, file targets, the
query plans its indexes are made for, and role locks as file locks."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.store import UnavailableBackendError, open_store, sqlite_path
from pbem.store.sqlite import SQLiteStore, split_statements

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def sqlite_store(tmp_path: Path):
    s = SQLiteStore(tmp_path / "pbem.sqlite3")
    try:
        yield s
    finally:
        s.close()


def test_connection_settings_in_every_thread(sqlite_store: SQLiteStore) -> None:
    def settings() -> tuple[object, ...]:
        conn = sqlite_store._conn()
        return tuple(conn.execute(f"PRAGMA {p}").fetchone()[0]
                     for p in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout"))

    expected = ("wal", 2, 1, 30000)  # synchronous 2 = FULL
    assert settings() == expected
    seen: list[tuple[object, ...]] = []
    t = threading.Thread(target=lambda: seen.append(settings()))
    t.start()
    t.join()
    assert seen == [expected]
    with sqlite_store.transaction(durable=False) as tx:
        tx.set_meta("k", "v")
        assert settings()[1] == 1  # NORMAL: the commit does not wait for the disk
    # the connection keeps that mode until a durable transaction needs FULL, which it then has
    with sqlite_store.transaction() as tx:
        tx.set_meta("k", "w")
        assert settings() == expected


def test_every_migration_splits_into_statements() -> None:
    from pbem.store import migrations

    for m in migrations.MIGRATIONS:
        assert m.sqlite and split_statements(m.sqlite)


def test_split_statements_respects_strings_and_triggers() -> None:
    script = """
        CREATE TABLE t (x TEXT); -- trailing comment
        INSERT INTO t VALUES ('a;b');
        CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = x || ';'; END;
        -- only a comment at the end
    """
    parts = split_statements(script)
    assert len(parts) == 3
    assert parts[1].endswith("\n        INSERT INTO t VALUES ('a;b');")
    assert parts[2].endswith("END;")
    with pytest.raises(ValueError, match="incomplete"):
        split_statements("CREATE TABLE t (x TEXT); SELECT 1")


def test_open_store_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for target, expected in [(tmp_path / "a.db", tmp_path / "a.db"),
                             (str(tmp_path / "b.db"), tmp_path / "b.db"),
                             ("sqlite:///rel.db", Path("rel.db")),
                             (f"sqlite:///{tmp_path}/abs.db", tmp_path / "abs.db")]:
        assert sqlite_path(target) == expected
        s = open_store(target)
        assert isinstance(s, SQLiteStore)
        s.close()
        assert expected.exists()
    assert sqlite_path("postgresql://pbem@localhost/pbem") is None
    with pytest.raises(UnavailableBackendError, match="unsupported"):
        open_store("mysql://x/y")
    with pytest.raises(ValueError):
        SQLiteStore(":memory:")


def test_token_lookup_uses_the_partial_index(sqlite_store: SQLiteStore) -> None:
    plan = sqlite_store._conn().execute("EXPLAIN QUERY PLAN SELECT * FROM seats WHERE token_hash = ?"
                                        " AND token_hash <> ''", ("aa",)).fetchall()
    assert "seats_token_hash" in str(plan)
    plan = sqlite_store._conn().execute(
        "EXPLAIN QUERY PLAN SELECT 1 FROM inbound e WHERE e.game_id = ? AND e.status = 'pending'"
        " AND e.id < ?", ("ac-1", 5)).fetchall()
    assert "inbound_pending_game" in str(plan)


def test_integrity_after_use(sqlite_store: SQLiteStore) -> None:
    sqlite_store.accept_inbound(b"Message-ID: <i@x>\r\n\r\nx", "smtp", T0)
    assert sqlite_store._conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert isinstance(sqlite_store._conn(), sqlite3.Connection)
