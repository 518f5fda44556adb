"""Migrations on both databases: from empty, and from every earlier schema version with the data that
version held, ending at the same schema as a new database and with the old data readable."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pbem.store import migrations
from pbem.store.base import Seat
from tests.store.conftest import Backend

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
STAMP = "2025-03-01T12:00:00.000000Z"
LATEST = migrations.latest_version()


def schema(backend: Backend) -> dict[str, object]:
    """Tables with their columns (in order, with types) and the index names."""
    if backend.kind == "sqlite":
        names = [r[0] for r in backend.sql("SELECT name FROM sqlite_master WHERE type = 'table'"
                                           " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        columns = {n: [(r[1], r[2], r[3]) for r in backend.sql(f"PRAGMA table_info({n})")]
                   for n in names}
        indexes = sorted(r[0] for r in backend.sql("SELECT name FROM sqlite_master WHERE type = 'index'"
                                                   " AND name NOT LIKE 'sqlite_%'"))
    else:
        rows = backend.sql("SELECT table_name, column_name, data_type, is_nullable"
                           " FROM information_schema.columns WHERE table_schema = 'public'"
                           " ORDER BY table_name, ordinal_position")
        columns = {}
        for table, column, kind, nullable in rows:
            columns.setdefault(table, []).append((column, kind, nullable))
        indexes = sorted(r[0] for r in backend.sql("SELECT indexname FROM pg_indexes"
                                                   " WHERE schemaname = 'public'"
                                                   " AND indexname NOT LIKE '%_pkey'"))
    return {"columns": columns, "indexes": indexes}


def fill(backend: Backend, version: int) -> None:
    """What a server at ``version`` had stored, written with that version's columns."""
    run = backend.sql
    run("INSERT INTO inbound (message_id, sha256, source, received_at, status, raw)"
        " VALUES ('<old@x>', 'h1', 'smtp', ?, 'pending', ?)", STAMP, b"Message-ID: <old@x>\r\n\r\nold")
    run("INSERT INTO games (id, game, status, to_move, thread_id, created_at, updated_at, record)"
        " VALUES ('ac-1', 'alien-city', 'active', 'p1', '<t@pbem>', ?, ?, ?)", STAMP, STAMP,
        '{"format":"pbem-record/1","moves":[]}')
    run("INSERT INTO seats (game_id, seat, position, email, name, token_hash, accepted)"
        " VALUES ('ac-1', 'p1', 0, 'a@x.org', 'A', 'th1', 1), ('ac-1', 'p2', 1, 'b@x.org', 'B', '', 0)")
    run("INSERT INTO game_counters (prefix, next) VALUES ('ac', 2)")
    run("INSERT INTO outbound (message_id, sender, recipients, created_at, attempts, next_attempt_at, raw)"
        " VALUES ('<o@pbem>', 'pbem@x', '[\"a@x.org\"]', ?, 0, ?, ?)", STAMP, STAMP, b"reply")
    run("INSERT INTO imap_state (mailbox, uidvalidity, last_uid) VALUES ('INBOX', 4294967295, 7)")
    if version >= 2:
        run("INSERT INTO players (email, settings) VALUES ('a@x.org', '{\"nickname\":\"Ann\"}')")
        run("INSERT INTO observers (game_id, email, since) VALUES ('ac-1', 'o@x.org', ?)", STAMP)
        run("INSERT INTO meta (key, value) VALUES ('scheduler.heartbeat', ?)", STAMP)
    if version >= 4:
        run("INSERT INTO mail_threads (game_id, email, root_id, last_id)"
            " VALUES ('ac-1', 'a@x.org', '<r@pbem>', '<l@pbem>')")
    if version >= 5:
        run("INSERT INTO bouncing (email, since, detail) VALUES ('b@x.org', ?, '550 gone')", STAMP)
    if version >= 6:
        run("INSERT INTO address_changes (old_email, new_email, code_hash, created_at, expires_at)"
            " VALUES ('a@x.org', 'n@x.org', 'h1', ?, ?)", STAMP, STAMP)


@pytest.mark.parametrize("start", range(LATEST))
def test_migrates_from_every_earlier_version(backend: Backend, start: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.open() as fresh:
        assert fresh.schema_version() == LATEST
    expected = schema(backend)
    for table in expected["columns"]:  # type: ignore[attr-defined]
        backend.sql(f"DROP TABLE {table}" + (" CASCADE" if backend.kind == "postgresql" else ""))

    if start:
        monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:start])
        with backend.open() as old:
            assert old.schema_version() == start
        fill(backend, start)
        monkeypatch.undo()
    with backend.open() as store:
        assert store.schema_version() == LATEST
        assert schema(backend) == expected
        if not start:
            return
        game = store.get_game("ac-1")
        assert game is not None and game.to_move == "p1" and game.deadline_at is None
        assert game.seats == [Seat("p1", "a@x.org", "A", "th1", True), Seat("p2", "b@x.org", "B")]
        [pending] = store.pending_inbound()
        assert (pending.message_id, pending.raw) == ("<old@x>", b"Message-ID: <old@x>\r\n\r\nold")
        assert [o.message_id for o in store.due_outbound(T0)] == ["<o@pbem>"]
        assert store.imap_state("INBOX") == (4294967295, 7)
        with store.transaction() as tx:
            assert tx.claim_inbound(pending.id)
            assert tx.next_game_id("ac") == "ac-2"
            assert tx.seat_by_token_hash("th1") == ("ac-1", game.seats[0])
            if start >= 2:
                assert tx.nickname_owner("ann") == "a@x.org"
                assert tx.observers("ac-1") == ["o@x.org"]
            if start >= 4:
                assert tx.mail_thread("ac-1", "a@x.org") == ("<r@pbem>", "<l@pbem>")
            if start >= 6:
                change = tx.address_change("h1")
                assert change is not None and change.new_email == "n@x.org"
            tx.mark_inbound(pending.id, "done", "migrated", now=T0)
        assert store.workers() == []
        assert store.bouncing_addresses() == ([("b@x.org", T0, "550 gone")] if start >= 5 else [])
