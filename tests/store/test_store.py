"""Behaviour of both stores on real databases (a SQLite file, a PostgreSQL server; see conftest.py):
schema versions, durable de-duplicated intake, all-or-nothing transactions, the outbox, and use from
several threads and processes at once. SQLite's own mechanics are in test_sqlite.py, the migrations
in test_migrations.py."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from pbem.store import base, migrations
from pbem.store.base import GameRow, Seat
from pbem.store.common import (
    SchemaVersionError,
    StoreError,
    dt_to_text,
    message_id_of,
    normalise_message_id,
)
from pbem.store.migrations import Migration
from pbem.store.postgres import PostgresStore
from pbem.store.sql import SqlStore, SqlTx
from pbem.store.sqlite import SQLiteStore
from tests.store.conftest import Backend

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def mail(message_id: str | None, body: str = "hello", subject: str = "move") -> bytes:
    head = f"From: a@example.org\r\nTo: pbem@example.org\r\nSubject: {subject}\r\n"
    if message_id is not None:
        head += f"Message-ID: {message_id}\r\n"
    return (head + "\r\n" + body + "\r\n").encode()


def game_row(game_id: str, *, emails: tuple[str, ...] = ("a@x.org", "b@x.org"),
             updated_at: datetime = T0, tokens: tuple[str, ...] = ()) -> GameRow:
    seats = [Seat(seat=f"p{i + 1}", email=e, name=f"Player {i + 1}",
                  token_hash=tokens[i] if i < len(tokens) else "")
             for i, e in enumerate(emails)]
    return GameRow(id=game_id, game="alien-city", status="active",
                   record={"format": "pbem-record/1", "moves": [], "note": "ünïcode"},
                   seats=seats, created_at=T0, updated_at=updated_at, to_move="p1",
                   thread_id=f"<{game_id}@pbem>")


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


# --- schema and migrations (from every earlier version: test_migrations.py) ---------------------


TABLES = {"schema_version", "inbound", "games", "seats", "game_counters", "outbound", "imap_state",
          "notices", "bounces", "observers", "players", "blocked", "once_keys", "meta",
          "digest_items", "mail_threads", "workers", "bouncing", "address_changes", "allowance",
          "player_blocks", "tournaments", "tournament_entrants"}


def tables(backend: Backend) -> set[str]:
    if backend.kind == "sqlite":
        return {r[0] for r in backend.sql("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not r[0].startswith("sqlite_")}
    return {r[0] for r in backend.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def test_migrate_from_empty(store: SqlStore, backend: Backend) -> None:
    latest = migrations.latest_version()
    assert store.schema_version() == latest
    assert store.migrate() == latest  # idempotent
    assert tables(backend) == TABLES
    assert backend.sql("SELECT version, name FROM schema_version ORDER BY version") == [
        (m.version, m.name) for m in migrations.MIGRATIONS]


def test_reopen_keeps_data(backend: Backend) -> None:
    with backend.open() as s:
        first = s.accept_inbound(mail("<keep@x>"), "smtp", T0)
    with backend.open() as s:
        assert s.schema_version() == migrations.latest_version()
        assert [m.id for m in s.pending_inbound()] == [first.inbound_id]
        assert s.accept_inbound(mail("<keep@x>"), "smtp", T0).new is False


def test_older_database_is_migrated(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.open() as s:
        s.accept_inbound(mail("<old@x>"), "smtp", T0)
    nxt = migrations.latest_version() + 1
    script = ("CREATE TABLE extra (x INTEGER); -- a comment; with a semicolon\n"
              "INSERT INTO extra (x) SELECT COUNT(*) FROM inbound;")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS,
                                                   Migration(nxt, "extra", script, script)))
    with backend.open() as s:
        assert s.schema_version() == nxt
        assert backend.sql("SELECT x FROM extra") == [(1,)]
        assert len(s.pending_inbound()) == 1


def test_failed_migration_leaves_previous_version(backend: Backend,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    backend.open().close()
    before = migrations.latest_version()
    script = "CREATE TABLE extra (x INTEGER);\nINSERT INTO no_such VALUES (1);"
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS,
                                                   Migration(before + 1, "bad", script, script)))
    with pytest.raises(Exception, match="no_such"):
        backend.open()
    monkeypatch.undo()
    with backend.open() as s:
        assert s.schema_version() == before
        assert "extra" not in tables(backend)


def test_migration_missing_for_the_dialect(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    backend.open().close()
    nxt = migrations.latest_version() + 1
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS,
                                                   Migration(nxt, "half", None, None)))
    with pytest.raises(StoreError, match=rf"migration {nxt} \(half\) has no (SQLite|PostgreSQL)"):
        backend.open()


def test_newer_database_is_refused(backend: Backend) -> None:
    backend.open().close()
    backend.sql("INSERT INTO schema_version VALUES (99, 'from the future', '2099')")
    latest = migrations.latest_version()
    with pytest.raises(SchemaVersionError, match=rf"version 99.*only versions up to {latest}\b"):
        backend.open()


def test_workers_migrating_at_once(backend: Backend) -> None:
    """Four processes open a new database at the same moment: each migration runs once."""
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_OPEN), backend.target],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert int(out) == migrations.latest_version()
    assert backend.sql("SELECT COUNT(*) FROM schema_version") == [(migrations.latest_version(),)]


_OPEN = """
    import sys
    from pbem.store import open_store
    sys.stdin.readline()
    store = open_store(sys.argv[1])
    print(store.schema_version())
    store.close()
"""


def test_satisfies_the_protocols_exactly() -> None:
    for proto, impl in [(base.Store, SQLiteStore), (base.Store, PostgresStore), (base.Tx, SqlTx)]:
        names = [n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")]
        assert names
        for name in names:
            want = inspect.signature(getattr(proto, name))
            got = inspect.signature(getattr(impl, name))
            assert list(want.parameters) == list(got.parameters), name
            for p in want.parameters.values():
                q = got.parameters[p.name]
                assert (p.kind, p.default) == (q.kind, q.default), (name, p.name)


# --- intake ---------------------------------------------------------------------------------------


def test_message_id_parsing() -> None:
    assert message_id_of(mail("<a@b>")) == "<a@b>"
    assert message_id_of(mail("a@b")) == "<a@b>"
    assert message_id_of(b"Message-ID:\r\n  <folded@b>\r\nSubject: x\r\n\r\nbody") == "<folded@b>"
    assert message_id_of(b"Message-Id: <lower@b>\n\nbody") == "<lower@b>"
    assert message_id_of(mail(None, body="Message-ID: <in-body@b>")) is None
    assert message_id_of(b"no headers at all") is None
    assert message_id_of(b"") is None
    assert message_id_of(b"Message-ID: <\xff\xfe@b>\r\n\r\n") is not None  # no exception
    assert normalise_message_id("  <a@b> (comment) ") == "<a@b>"
    assert normalise_message_id("  ") is None


def test_accept_dedupes_identical_bytes(store: SqlStore) -> None:
    raw = mail("<one@x>")
    first = store.accept_inbound(raw, "smtp", T0, source_ref="s1")
    assert first.new and first.status == "pending"
    again = store.accept_inbound(raw, "imap", T0 + timedelta(seconds=5), source_ref="INBOX:1:7")
    assert (again.inbound_id, again.new, again.status) == (first.inbound_id, False, "pending")
    assert len(store.pending_inbound()) == 1


def test_accept_dedupes_same_message_id_with_other_bytes(store: SqlStore) -> None:
    first = store.accept_inbound(mail("<same@x>", body="via smtp"), "smtp", T0)
    with store.transaction() as tx:
        tx.mark_inbound(first.inbound_id, "done", "move applied", now=T0)
    for variant in ("<same@x>", "same@x", " <same@x> "):
        dup = store.accept_inbound(mail(variant, body="via imap, other headers"), "imap", T0)
        assert (dup.inbound_id, dup.new, dup.status) == (first.inbound_id, False, "done")
    # Exact comparison: case matters in the local part.
    assert store.accept_inbound(mail("<SAME@x>"), "imap", T0).new


def test_accept_without_message_id_dedupes_only_on_bytes(store: SqlStore) -> None:
    a = store.accept_inbound(mail(None, body="one"), "deliver", T0)
    b = store.accept_inbound(mail(None, body="two"), "deliver", T0)
    assert a.new and b.new and a.inbound_id != b.inbound_id
    assert store.accept_inbound(mail(None, body="one"), "deliver", T0).inbound_id == a.inbound_id
    assert [m.message_id for m in store.pending_inbound()] == [None, None]


def test_inbound_fields_and_listing(store: SqlStore) -> None:
    ids = [store.accept_inbound(mail(f"<m{i}@x>"), "smtp", T0 + timedelta(seconds=i)).inbound_id
           for i in range(250)]
    pending = store.pending_inbound(limit=3)
    assert [m.id for m in pending] == ids[:3]
    m = pending[0]
    assert m.raw == mail("<m0@x>") and m.source == "smtp" and m.message_id == "<m0@x>"
    assert m.received_at == T0 and m.received_at.tzinfo is not None
    assert len(m.sha256) == 64 and m.status == "pending" and m.outcome is None
    with store.transaction() as tx:
        tx.mark_inbound(ids[1], "ignored", "auto-reply", sender="a@x.org", now=T0)
        tx.mark_inbound(ids[2], "failed", "Traceback ...", now=T0)
    assert store.inbound_status(ids[1]) == "ignored"
    assert store.inbound_status(10_000) is None
    assert [m.id for m in store.iter_inbound()] == ids
    assert [m.id for m in store.iter_inbound("pending")] == [i for i in ids if i not in ids[1:3]]
    assert [(m.id, m.outcome) for m in store.iter_inbound("ignored")] == [(ids[1], "auto-reply")]
    assert [m.id for m in store.pending_inbound(limit=2)] == [ids[0], ids[3]]
    with pytest.raises(ValueError, match="unknown inbound status"), store.transaction() as tx:
        tx.mark_inbound(ids[0], "weird", "", now=T0)
    with pytest.raises(LookupError), store.transaction() as tx:
        tx.mark_inbound(10_000, "done", "", now=T0)


def test_naive_datetimes_are_refused(store: SqlStore) -> None:
    with pytest.raises(ValueError, match="naive"):
        store.accept_inbound(mail("<n@x>"), "smtp", datetime(2025, 1, 1))
    assert dt_to_text(datetime(2025, 1, 1, 13, tzinfo=UTC).astimezone()) == \
        "2025-01-01T13:00:00.000000Z"


_ACCEPT_THEN_DIE = """
    import os, signal, sys
    from datetime import UTC, datetime
    from pbem.store import open_store
    store = open_store(sys.argv[1])
    r = store.accept_inbound(b"Message-ID: <durable@x>\\r\\n\\r\\nkeep me", "smtp",
                             datetime.now(UTC))
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_accepted_message_survives_sigkill(backend: Backend) -> None:
    proc = run_python(_ACCEPT_THEN_DIE, backend.target)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with backend.open() as s:
        [m] = s.pending_inbound()
        assert (m.message_id, m.raw) == ("<durable@x>", b"Message-ID: <durable@x>\r\n\r\nkeep me")


_ACCEPT_FOREVER = """
    import sys
    from datetime import UTC, datetime
    from pbem.store import open_store
    store = open_store(sys.argv[1])
    i = 0
    while True:
        r = store.accept_inbound(b"Message-ID: <k%d@x>\\r\\n\\r\\n" % i + b"x" * 5000, "smtp",
                                 datetime.now(UTC))
        print(r.inbound_id, flush=True)  # the SMTP 250: only after accept_inbound returned
        i += 1
"""


def test_every_acknowledged_message_survives_kill_in_the_middle(backend: Backend) -> None:
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_ACCEPT_FOREVER),
                             backend.target], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acknowledged = [int(proc.stdout.readline()) for _ in range(60)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with backend.open() as s:
        stored = {m.id for m in s.iter_inbound()}
        assert set(acknowledged) <= stored
        if backend.kind == "sqlite":
            assert backend.sql("PRAGMA integrity_check") == [("ok",)]


# --- transactions and games ---------------------------------------------------------------------


def test_transaction_rollback_leaves_nothing(store: SqlStore) -> None:
    msg = store.accept_inbound(mail("<rb@x>"), "smtp", T0)

    class Boom(Exception):
        pass

    with pytest.raises(Boom), store.transaction() as tx:
        game_id = tx.next_game_id("ac")
        assert game_id == "ac-1"
        tx.insert_game(game_row(game_id, tokens=("t1", "t2")))
        tx.mark_inbound(msg.inbound_id, "done", "created", game_id=game_id, now=T0)
        tx.queue_outbound(message_id="<out@pbem>", sender="pbem@x", recipients=["a@x.org"],
                          raw=b"mail", now=T0)
        tx.record_bounce("a@x.org", T0, "550")
        assert tx.claim_notice("auth:a", T0, 3600)
        assert tx.get_game(game_id) is not None  # visible inside its own transaction
        assert store.get_game(game_id) is not None  # ... also through the store, same thread
        raise Boom

    assert store.get_game("ac-1") is None
    assert store.list_games() == []
    assert store.inbound_status(msg.inbound_id) == "pending"
    assert store.outbound_counts() == {"pending": 0, "sent": 0, "given_up": 0}
    assert store.due_outbound(T0 + timedelta(days=1)) == []
    with store.transaction() as tx:
        assert tx.seat_by_token_hash("t1") is None
        assert tx.claim_notice("auth:a", T0, 3600)  # the rolled-back claim did not count
        assert tx.next_game_id("ac") == "ac-1"  # nothing was committed, so the id is free
    assert store._db().value("SELECT COUNT(*) FROM bounces") == 0


def test_transaction_commits_everything(store: SqlStore) -> None:
    msg = store.accept_inbound(mail("<c@x>"), "smtp", T0)
    with store.transaction() as tx:
        game_id = tx.next_game_id("ac")
        tx.insert_game(game_row(game_id, emails=("c@x.org", "a@x.org", "b@x.org")))
        tx.mark_inbound(msg.inbound_id, "done", "created", sender="a@x.org", game_id=game_id,
                        now=T0)
        tx.queue_outbound(message_id="<o1@pbem>", sender="pbem@x", recipients=["a@x.org"],
                          raw=b"one", now=T0)
    assert store.inbound_status(msg.inbound_id) == "done"
    g = store.get_game(game_id)
    assert g == game_row(game_id, emails=("c@x.org", "a@x.org", "b@x.org"))
    assert [s.seat for s in g.seats] == ["p1", "p2", "p3"]  # order kept, not sorted by email
    assert store.outbound_counts() == {"pending": 1, "sent": 0, "given_up": 0}


def test_tx_is_dead_after_its_block_and_writes_do_not_nest(store: SqlStore) -> None:
    with store.transaction() as tx:
        with pytest.raises(StoreError, match=r"inside store\.transaction"):
            store.accept_inbound(mail("<nest@x>"), "smtp", T0)
        with pytest.raises(StoreError), store.transaction():
            pass
        tx.record_bounce("a@x", T0, "still usable")
    with pytest.raises(StoreError, match="already ended"):
        tx.record_bounce("a@x", T0, "too late")
    assert store.accept_inbound(mail("<nest@x>"), "smtp", T0).new


def test_active_games_to_move_finds_games_by_the_address_of_the_seat_to_move(store: SqlStore) -> None:
    with store.transaction() as tx:
        tx.insert_game(game_row("ac-1", emails=("ai-3-ab@computer.invalid", "b@x.org")))  # p1 to move
        tx.insert_game(game_row("ac-2", emails=("a@x.org", "ai-1-cd@computer.invalid")))  # p2 waits
        tx.insert_game(game_row("ac-3", emails=("ai-2-ef@computer.invalid", "b@x.org")))
        over = game_row("ac-4", emails=("ai-2-gh@computer.invalid", "b@x.org"))
        tx.insert_game(over)
        over.status = "over"
        tx.save_game(over)
    assert store.active_games_to_move("%@computer.invalid") == ["ac-1", "ac-3"]
    with store.transaction() as tx:
        g = tx.get_game("ac-2", for_update=True)
        assert g is not None
        g.to_move = "p2"
        tx.save_game(g)
    assert store.active_games_to_move("%@computer.invalid") == ["ac-1", "ac-2", "ac-3"]
    assert store.active_games_to_move("%@nowhere.invalid") == []


def test_save_game_replaces_seats_and_fields(store: SqlStore) -> None:
    with store.transaction() as tx:
        tx.insert_game(game_row("ac-1", tokens=("h1", "h2")))
    with store.transaction() as tx:
        g = tx.get_game("ac-1", for_update=True)
        assert g is not None
        g.status = "over"
        g.to_move = None
        g.record["moves"].append({"seat": "p1", "move": "build"})
        g.seats = [Seat("p2", "b@x.org", "B", "h2", True), Seat("p1", "new@x.org", "N", "h3")]
        g.updated_at = T0 + timedelta(hours=1)
        tx.save_game(g)
    got = store.get_game("ac-1")
    assert got is not None
    assert (got.status, got.to_move, got.record["moves"]) == ("over", None,
                                                              [{"seat": "p1", "move": "build"}])
    assert got.seats == [Seat("p2", "b@x.org", "B", "h2", True), Seat("p1", "new@x.org", "N", "h3")]
    assert got.updated_at == T0 + timedelta(hours=1) and got.created_at == T0
    assert [g.id for g in store.list_games("over")] == ["ac-1"]
    assert store.list_games("active") == []
    with store.transaction() as tx:
        assert tx.seat_by_token_hash("h1") is None
        assert tx.seat_by_token_hash("h3") == ("ac-1", Seat("p1", "new@x.org", "N", "h3"))
        with pytest.raises(LookupError):
            tx.save_game(game_row("ac-404"))
        with pytest.raises(ValueError, match="unknown game status"):
            tx.save_game(GameRow("ac-1", "alien-city", "paused", {}))


def test_game_ids_per_prefix_never_collide(store: SqlStore, backend: Backend) -> None:
    with store.transaction() as tx:
        tx.insert_game(game_row("ac-2"))  # e.g. imported with its old id
        assert [tx.next_game_id("ac") for _ in range(3)] == ["ac-1", "ac-3", "ac-4"]
        assert tx.next_game_id("st") == "st-1"
    with store.transaction() as tx:
        assert tx.next_game_id("ac") == "ac-5"
    with pytest.raises(backend.integrity_error), store.transaction() as tx:
        tx.insert_game(game_row("ac-2"))


def test_games_for_email_newest_activity_first(store: SqlStore) -> None:
    with store.transaction() as tx:
        tx.insert_game(game_row("ac-1", emails=("a@x.org", "b@x.org"), updated_at=T0))
        tx.insert_game(game_row("ac-2", emails=("c@x.org", "a@x.org"),
                                updated_at=T0 + timedelta(hours=2)))
        tx.insert_game(game_row("ac-3", emails=("b@x.org", "c@x.org"),
                                updated_at=T0 + timedelta(hours=3)))
        tx.insert_game(game_row("ac-4", emails=("a@x.org", "a@x.org"),  # solo test game
                                updated_at=T0 + timedelta(hours=1)))
    with store.transaction() as tx:
        assert [g.id for g in tx.games_for_email("a@x.org")] == ["ac-2", "ac-4", "ac-1"]
        assert [g.id for g in tx.games_for_email(" A@X.org ")] == ["ac-2", "ac-4", "ac-1"]
        assert [len(g.seats) for g in tx.games_for_email("a@x.org")] == [2, 2, 2]
        assert tx.games_for_email("nobody@x.org") == []


def test_seat_by_token_hash(store: SqlStore, backend: Backend) -> None:
    with store.transaction() as tx:
        tx.insert_game(game_row("ac-1", tokens=("aa", "")))
        tx.insert_game(game_row("ac-2", tokens=("", "")))  # empty hashes may repeat
    with store.transaction() as tx:
        assert tx.seat_by_token_hash("aa") == ("ac-1", Seat("p1", "a@x.org", "Player 1", "aa"))
        assert tx.seat_by_token_hash("") is None
        assert tx.seat_by_token_hash("zz") is None
    with pytest.raises(backend.integrity_error), store.transaction() as tx:
        tx.insert_game(game_row("ac-3", tokens=("aa",)))


# --- outbox, notices, IMAP state ------------------------------------------------------------------


def test_outbox_due_failed_backoff_sent(store: SqlStore, backend: Backend) -> None:
    with store.transaction() as tx:
        ids = [tx.queue_outbound(message_id=f"<o{i}@pbem>", sender="pbem@x",
                                 recipients=["a@x.org", "b@x.org"], raw=f"mail {i}".encode(),
                                 now=T0 + timedelta(seconds=i)) for i in range(3)]
        with pytest.raises(ValueError, match="no recipients"):
            tx.queue_outbound(message_id="<none@pbem>", sender="pbem@x", recipients=[],
                              raw=b"", now=T0)
    assert store.due_outbound(T0 - timedelta(seconds=1)) == []
    assert [o.id for o in store.due_outbound(T0 + timedelta(seconds=1))] == ids[:2]
    due = store.due_outbound(T0 + timedelta(minutes=1))
    assert [o.id for o in due] == ids
    o = due[0]
    assert (o.message_id, o.sender, o.recipients, o.raw, o.attempts) == (
        "<o0@pbem>", "pbem@x", ["a@x.org", "b@x.org"], b"mail 0", 0)
    assert o.created_at == T0 == o.next_attempt_at and o.sent_at is None and o.last_error is None

    later = T0 + timedelta(minutes=10)
    store.mark_send_failed(ids[0], "421 try later", later)
    store.mark_sent(ids[1], T0 + timedelta(minutes=1))
    assert [o.id for o in store.due_outbound(T0 + timedelta(minutes=2))] == [ids[2]]
    assert [o.id for o in store.due_outbound(T0 + timedelta(minutes=2), limit=0)] == []
    retry = store.due_outbound(later)
    assert [o.id for o in retry] == [ids[0], ids[2]]  # queue order, not retry time
    assert (retry[0].attempts, retry[0].last_error, retry[0].next_attempt_at) == (
        1, "421 try later", later)
    store.mark_send_failed(ids[0], "421 again", later + timedelta(minutes=20))
    assert store.due_outbound(later)[0].id == ids[2]
    assert store.outbound_counts() == {"pending": 2, "sent": 1, "given_up": 0}
    store.mark_sent(ids[0], later)
    store.mark_sent(ids[2], later)
    assert store.due_outbound(later + timedelta(days=1)) == []
    assert store.outbound_counts() == {"pending": 0, "sent": 3, "given_up": 0}
    with pytest.raises(LookupError):
        store.mark_sent(999, later)
    with pytest.raises(backend.integrity_error), store.transaction() as tx:  # ids are fixed
        tx.queue_outbound(message_id="<o0@pbem>", sender="s", recipients=["a"], raw=b"", now=T0)


def test_claim_notice_rate_limit(store: SqlStore) -> None:
    with store.transaction() as tx:
        assert tx.claim_notice("auth:ac-1:p1", T0, 3600) is True
        assert tx.claim_notice("auth:ac-1:p1", T0 + timedelta(minutes=59), 3600) is False
        assert tx.claim_notice("auth:ac-1:p2", T0 + timedelta(minutes=1), 3600) is True
    with store.transaction() as tx:
        assert tx.claim_notice("auth:ac-1:p1", T0 - timedelta(minutes=5), 3600) is False
        assert tx.claim_notice("auth:ac-1:p1", T0 + timedelta(hours=1), 3600) is True
        assert tx.claim_notice("auth:ac-1:p1", T0 + timedelta(hours=1, minutes=30), 3600) is False
        assert tx.claim_notice("auth:ac-1:p1", T0 + timedelta(hours=2), 3600) is True


def test_imap_state(store: SqlStore) -> None:
    assert store.imap_state("INBOX") is None
    store.set_imap_state("INBOX", 1234, 17)
    store.set_imap_state("INBOX", 1234, 18)
    store.set_imap_state("Other", 1, 2)
    assert store.imap_state("INBOX") == (1234, 18)
    assert store.imap_state("Other") == (1, 2)


def test_closed_store_refuses_use(backend: Backend) -> None:
    s = backend.open()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.pending_inbound()


# --- concurrency ----------------------------------------------------------------------------------


_WORKER = """
    import json, sys
    from datetime import UTC, datetime
    from pbem.store import open_store
    path, tag, n, shared = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sys.stdin.readline()  # start together: both also migrate the fresh database at the same time
    store = open_store(path)
    new_shared = 0
    errors = []
    for i in range(n):
        raw = b"Message-ID: <%s-%d@x>\\r\\n\\r\\n%s" % (tag.encode(), i, b"y" * 3000)
        if not store.accept_inbound(raw, "deliver", datetime.now(UTC)).new:
            errors.append(i)
        if i < shared:
            other = b"Message-ID: <shared-%d@x>\\r\\nX-From: %s\\r\\n\\r\\n" % (i, tag.encode())
            new_shared += store.accept_inbound(other, "deliver", datetime.now(UTC)).new
    store.close()
    print(json.dumps({"new_shared": new_shared, "errors": errors}))
"""


def test_two_processes_accepting_concurrently(backend: Backend) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_WORKER), backend.target,
                               tag, "200", "50"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("p1", "p2")]
    time.sleep(0.3)
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert [r["errors"] for r in results] == [[], []]
    assert sum(r["new_shared"] for r in results) == 50  # each shared id accepted exactly once
    with backend.open() as s:
        ids = {m.message_id for m in s.iter_inbound()}
        assert len(ids) == 450
        assert {f"<p{k}-{i}@x>" for k in (1, 2) for i in range(200)} <= ids


def _process_pending(store: SqlStore, expected: int, deadline: float) -> int:
    """A stand-in for the processor: one transaction per message, as the server will do."""
    done = 0
    while done < expected and time.monotonic() < deadline:
        batch = store.pending_inbound(limit=20)
        if not batch:
            time.sleep(0.005)
            continue
        for m in batch:
            with store.transaction() as tx:
                game_id = tx.next_game_id("ac")
                tx.insert_game(game_row(game_id))
                tx.mark_inbound(m.id, "done", "created", game_id=game_id, now=datetime.now(UTC))
                for k in range(2):
                    tx.queue_outbound(message_id=f"<{game_id}-{k}@pbem>", sender="pbem@x",
                                      recipients=["a@x.org"], raw=b"reply",
                                      now=datetime.now(UTC))
            done += 1
    return done


def test_deliver_process_while_daemon_processes(backend: Backend) -> None:
    store = backend.open()
    try:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_WORKER), backend.target,
                                 "d", "200", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        done = _process_pending(store, 200, time.monotonic() + 240)
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert json.loads(out)["errors"] == []
        assert done == 200
        assert store.pending_inbound() == []
        assert len(store.list_games()) == 200
        assert store.outbound_counts() == {"pending": 400, "sent": 0, "given_up": 0}
    finally:
        store.close()


def test_threads_sharing_one_store(store: SqlStore) -> None:
    errors: list[BaseException] = []
    new_shared: list[bool] = []

    def accept(tag: str) -> None:
        try:
            for i in range(100):
                assert store.accept_inbound(mail(f"<{tag}-{i}@x>"), "smtp", datetime.now(UTC)).new
                if i < 25:
                    other = mail(f"<shared-{i}@x>", body=tag)
                    new_shared.append(store.accept_inbound(other, "imap", datetime.now(UTC)).new)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=accept, args=(f"t{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    done = _process_pending(store, 425, time.monotonic() + 240)
    for t in threads:
        t.join()
    assert errors == []
    assert sum(new_shared) == 25
    assert done == 425
    assert sum(1 for _ in store.iter_inbound("done")) == 425
    assert len(store.list_games("active")) == 425


def test_store_opened_before_fork_works_in_the_child(store: SqlStore) -> None:
    store.accept_inbound(mail("<parent@x>"), "smtp", T0)
    pid = os.fork()
    if pid == 0:  # child: must not touch the parent's connection, must get its own
        code = 1
        try:
            code = 0 if store.accept_inbound(mail("<child@x>"), "smtp", T0).new else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert [m.message_id for m in store.iter_inbound()] == ["<parent@x>", "<child@x>"]


# --- throughput (printed, not asserted) -----------------------------------------------------------


def test_throughput_report(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    store = backend.open()
    try:
        n = 300
        body = "x" * 2000
        t = time.perf_counter()
        ids = [store.accept_inbound(mail(f"<b{i}@x>", body=body), "smtp", datetime.now(UTC))
               .inbound_id for i in range(n)]
        accept_s = (time.perf_counter() - t) / n
        with store.transaction() as tx:
            tx.insert_game(game_row("ac-1"))
        record_size = 0
        t = time.perf_counter()
        for i, inbound_id in enumerate(ids):
            with store.transaction() as tx:
                g = tx.get_game("ac-1", for_update=True)
                assert g is not None
                g.record["moves"].append({"seat": "p1", "move": f"build {i}", "n": i})
                g.updated_at = datetime.now(UTC)
                tx.save_game(g)
                tx.mark_inbound(inbound_id, "done", "move applied", now=datetime.now(UTC))
                for k in range(2):
                    tx.queue_outbound(message_id=f"<r{i}-{k}@pbem>", sender="pbem@x",
                                      recipients=["a@x.org"], raw=body.encode(),
                                      now=datetime.now(UTC))
            record_size = len(json.dumps(g.record))
        tx_s = (time.perf_counter() - t) / n
    finally:
        store.close()
    with capsys.disabled():
        print(f"\n[{backend.kind} store throughput] accept_inbound: {1 / accept_s:.0f}/s "
              f"({accept_s * 1000:.2f} ms each); move transaction (get+save game, mark inbound, "
              f"2 outbound): {1 / tx_s:.0f}/s ({tx_s * 1000:.2f} ms each, record up to "
              f"{record_size} bytes)")


def test_mark_sent_many_and_non_durable_transactions(store: SqlStore, backend: Backend) -> None:
    with store.transaction(durable=False) as tx:
        ids = [tx.queue_outbound(message_id=f"<m{i}@x>", sender="s@x", recipients=["r@x"], raw=b"x",
                                 now=T0) for i in range(3)]
    # the commit is visible at once, to other connections too, before any flush
    assert backend.sql("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL") == [(3,)]
    store.flush()
    store.mark_sent_many(ids[:2], T0 + timedelta(seconds=5))
    assert [o.id for o in store.due_outbound(T0 + timedelta(hours=1))] == [ids[2]]
    assert store.outbound_counts() == {"pending": 1, "sent": 2, "given_up": 0}
    store.mark_sent_many([], T0)  # nothing to do, no error
