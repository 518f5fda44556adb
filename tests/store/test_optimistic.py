"""SQLite's optimistic transactions (pbem.store.optimistic): the work outside the write lock, the
effect committed under it only when nothing it read changed; otherwise nothing of it is left."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.store.optimistic import Conflict, NeedsLock
from pbem.store.sqlite import SQLiteStore

NOW = datetime(2026, 11, 27, 2, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "pbem.sqlite3") as opened:
        yield opened


def other(store: SQLiteStore, statement: str, *params: object) -> list[tuple]:
    """A statement from another connection (another process, as far as SQLite knows), committed."""
    conn = sqlite3.connect(store.path, isolation_level=None)
    try:
        return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def outbound_count(store: SQLiteStore) -> int:
    return other(store, "SELECT COUNT(*) FROM outbound")[0][0]


def player(store: SQLiteStore, email: str) -> dict:
    with store.transaction() as tx:
        return tx.get_player(email)


def queue(tx, message_id: str) -> int:
    return tx.queue_outbound(message_id=message_id, sender="pbem@example.org",
                             recipients=["a@example.org"], raw=b"Subject: x\r\n\r\nx\r\n", now=NOW)


def test_an_attempt_commits_its_writes_and_held_back_rows_get_their_ids_then(store: SQLiteStore) -> None:
    with store.transaction() as tx:
        first = queue(tx, "<1@x>")
    with store.optimistic() as tx:
        tx.set_player("a@example.org", {"language": "de"})
        assert tx.get_player("a@example.org") == {"language": "de"}  # its own write, as remembered
        assert (queue(tx, "<2@x>"), queue(tx, "<3@x>")) == (None, None)  # known at the commit
        assert other(store, "SELECT COUNT(*) FROM players") == [(0,)]  # held back until the end
    assert other(store, "SELECT id, message_id FROM outbound ORDER BY id") == [
        (first, "<1@x>"), (first + 1, "<2@x>"), (first + 2, "<3@x>")]
    assert player(store, "a@example.org") == {"language": "de"}


def test_a_read_that_changed_meanwhile_leaves_nothing_behind(store: SQLiteStore) -> None:
    with pytest.raises(Conflict), store.optimistic() as tx:
        assert tx.get_player("a@example.org") == {}
        other(store, "INSERT INTO players (email, settings) VALUES (?, ?)", "a@example.org",
              '{"language": "sk"}')
        tx.set_player("b@example.org", {"language": "de"})
        queue(tx, "<1@x>")
    assert outbound_count(store) == 0
    assert player(store, "b@example.org") == {}
    assert player(store, "a@example.org") == {"language": "sk"}  # the other writer's, untouched
    with store.transaction() as tx:  # the connection is usable again, outside any transaction
        queue(tx, "<2@x>")
    assert outbound_count(store) == 1


def test_rows_another_writer_added_meanwhile_are_no_conflict(store: SQLiteStore) -> None:
    """Two processors both queue replies: neither read the other's, so both commit."""
    with store.optimistic() as tx:
        queue(tx, "<1@x>")
        other(store, "INSERT INTO outbound (message_id, sender, recipients, created_at, raw)"
                     " VALUES ('<o@x>', 's', '[]', 'now', x'00')")
    assert other(store, "SELECT message_id FROM outbound ORDER BY id") == [("<o@x>",), ("<1@x>",)]


def test_rows_changed_are_predicted_and_checked(store: SQLiteStore) -> None:
    other(store, "INSERT INTO bouncing (email, since, detail) VALUES ('a@example.org', 'now', 'x')")
    with store.optimistic() as tx:
        assert tx.clear_bouncing("a@example.org") is True
        assert tx.clear_bouncing("nobody@example.org") is False
    assert other(store, "SELECT COUNT(*) FROM bouncing") == [(0,)]
    other(store, "INSERT INTO bouncing (email, since, detail) VALUES ('a@example.org', 'now', 'x')")
    with pytest.raises(Conflict), store.optimistic() as tx:
        assert tx.clear_bouncing("a@example.org") is True
        other(store, "DELETE FROM bouncing")  # it was told one row; at the commit there is none
        queue(tx, "<1@x>")
    assert outbound_count(store) == 0


def test_a_read_of_its_own_held_back_write_conflicts_when_it_differs(store: SQLiteStore) -> None:
    with pytest.raises(Conflict), store.optimistic() as tx:
        tx.record_bounce("a@example.org", NOW, "x")
        # the snapshot does not see the held-back insert; run under the lock, it would
        assert tx._c.value("SELECT COUNT(*) FROM bounces") == 0
    assert other(store, "SELECT COUNT(*) FROM bounces") == [(0,)]
    with store.optimistic() as tx:  # a read its write does not touch is fine
        tx.record_bounce("a@example.org", NOW, "x")
        assert tx._c.value("SELECT COUNT(*) FROM bounces WHERE email = 'b@example.org'") == 0
    assert other(store, "SELECT COUNT(*) FROM bounces") == [(1,)]


def test_what_cannot_be_held_back_needs_the_lock(store: SQLiteStore) -> None:
    with pytest.raises(NeedsLock), store.optimistic() as tx:
        queue(tx, "<1@x>")
        tx.next_game_id("ac")  # an upsert whose RETURNING value cannot be predicted
    with pytest.raises(NeedsLock), store.optimistic() as tx:
        tx._c.run("PRAGMA user_version = 3")
    with pytest.raises(NeedsLock), store.optimistic() as tx:
        _ = tx._c.run("INSERT INTO bounces (email, at, detail) VALUES ('a', 'now', 'x')").lastrowid
    with pytest.raises(NeedsLock), store.optimistic() as tx:
        tx._c.value("INSERT INTO bounces (email, at, detail) VALUES ('a', 'now', 'x') RETURNING id")
    assert outbound_count(store) == 0 and other(store, "SELECT COUNT(*) FROM bounces") == [(0,)]


def test_an_error_inside_writes_nothing_and_other_writers_never_waited(store: SQLiteStore) -> None:
    inside, go_on = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            with store.optimistic() as tx:
                queue(tx, "<1@x>")
                inside.set()
                go_on.wait(10)
                raise RuntimeError("a bug in the handler")
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=attempt)
    thread.start()
    assert inside.wait(10)
    with store.transaction() as tx:  # the attempt holds no lock: this does not wait for it
        queue(tx, "<2@x>")
    go_on.set()
    thread.join(10)
    assert [type(e) for e in errors] == [RuntimeError]
    assert other(store, "SELECT message_id FROM outbound") == [("<2@x>",)]


def test_an_attempt_inside_a_transaction_is_refused(store: SQLiteStore) -> None:
    from pbem.store.common import StoreError

    with store.transaction(), pytest.raises(StoreError), store.optimistic():
        pass


def test_an_attempt_that_swallowed_needs_lock_never_commits(store: SQLiteStore) -> None:
    with pytest.raises(NeedsLock), store.optimistic() as tx:
        queue(tx, "<1@x>")
        with pytest.raises(NeedsLock):  # code that catches it and goes on regardless
            tx.next_game_id("ac")
    assert outbound_count(store) == 0
