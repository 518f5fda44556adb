"""What only the PostgreSQL store has: row locks between workers (claims skip what another holds, a
game row makes the second mover wait), roles lost with their session, connections that come back
after the server restarted, a deadlock reported as "try again", the check-config probe, and the
statistics of the inbound table kept fresh."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

from pbem.store import database_problem, migrations, open_store
from pbem.store.base import GameRow
from pbem.store.common import StoreUnavailableError
from pbem.store.postgres import PostgresStore, redacted
from tests.services.postgres import Postgres
from tests.services.requirements import free_port

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def pg(postgres: Postgres) -> str:
    return postgres.create_database(f"pg_{time.monotonic_ns()}")  # the cluster goes at session end


@pytest.fixture
def stores(pg: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two workers' stores on one database."""
    one, other = PostgresStore(pg), PostgresStore(pg)
    yield one, other
    one.close()
    other.close()


def in_thread(func) -> threading.Thread:  # type: ignore[no-untyped-def]
    t = threading.Thread(target=func)
    t.start()
    return t


def test_claims_skip_what_another_worker_holds(stores: tuple[PostgresStore, PostgresStore]) -> None:
    one, two = stores
    ids = [one.accept_inbound(f"Message-ID: <m{i}@x>\r\n\r\n".encode(), "smtp", T0).inbound_id
           for i in range(2)]
    with one.transaction() as tx:
        tx.queue_outbound(message_id="<a@p>", sender="s", recipients=["r"], raw=b"", now=T0)
        tx.queue_outbound(message_id="<b@p>", sender="s", recipients=["r"], raw=b"", now=T0)
    with one.transaction() as tx1:
        assert tx1.claim_inbound(ids[0])
        started = time.monotonic()
        with two.transaction() as tx2:
            assert tx2.claim_inbound(ids[0]) is None  # held: skipped, not waited for
            taken = tx2.claim_inbound(*ids)  # the first held: the next in the same statement
            assert taken is not None and taken.raw.startswith(b"Message-ID: <m1@x>")
        assert time.monotonic() - started < 1
    with one.claim_outbound(T0) as first, two.claim_outbound(T0) as second:
        assert [r.message_id for r in first.rows] == [r.message_id for r in second.rows] == [
            "<a@p>", "<b@p>"]
        assert first.take(first.rows[0])
        assert not second.take(second.rows[0])  # being sent by the first: skipped at once
        assert second.take(second.rows[1])
        second.sent(second.rows[1].id)
        first.sent(first.rows[0].id)
        assert not first.take(first.rows[1])  # the second sent it meanwhile
    assert one.outbound_counts() == {"pending": 0, "sent": 2, "given_up": 0}


def test_a_sender_passes_over_the_rows_others_send_in_one_step(
        stores: tuple[PostgresStore, PostgresStore]) -> None:
    """A take that finds its row another sender's locks the next free row of the batch at once, so
    the rows several senders share cost no round trip each; the row it locked waits for it."""
    one, two = stores
    with one.transaction() as tx:
        ids = [tx.queue_outbound(message_id=f"<{n}@p>", sender="s", recipients=[f"r{n}"],
                                 raw=f"mail {n}".encode(), now=T0) for n in range(3)]
    with one.claim_outbound(T0) as first, two.claim_outbound(T0) as second:
        assert first.take(first.rows[0]) and first.rows[0].raw == b"mail 0"  # read when taken
        assert not second.take(second.rows[0])  # the first's: the second locked the next row
        first.sent(ids[0])
        assert not first.take(first.rows[1])  # the second's: the first locked the last one
        assert second.take(second.rows[1]) and second.rows[1].raw == b"mail 1"
        second.sent(ids[1])
        assert not second.take(second.rows[2])  # locked by the first
        assert first.take(first.rows[2]) and first.rows[2].raw == b"mail 2"
        first.sent(ids[2])
    assert one.outbound_counts() == {"pending": 0, "sent": 3, "given_up": 0}


def test_a_locked_game_makes_the_second_mover_wait(stores: tuple[PostgresStore, PostgresStore]) -> None:
    one, two = stores
    with one.transaction() as tx:
        tx.insert_game(GameRow(id="ac-1", game="alien-city", status="active", record={"moves": []}))
    order: list[str] = []
    with one.transaction() as tx1:
        row = tx1.get_game("ac-1", for_update=True)
        assert row is not None

        def second() -> None:
            with two.transaction() as tx2:
                seen = tx2.get_game("ac-1", for_update=True)
                assert seen is not None
                order.append(f"second saw {len(seen.record['moves'])} move(s)")

        waiter = in_thread(second)
        time.sleep(0.3)
        assert order == []  # still waiting for the row
        row.record["moves"].append("m1")
        tx1.save_game(row)
        order.append("first saved")
    waiter.join(10)
    assert order == ["first saved", "second saw 1 move(s)"]


def test_a_deadlock_is_reported_as_try_again(stores: tuple[PostgresStore, PostgresStore]) -> None:
    one, two = stores
    with one.transaction() as tx:
        for game_id in ("ac-1", "ac-2"):
            tx.insert_game(GameRow(id=game_id, game="alien-city", status="active", record={}))
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def lock(store: PostgresStore, first: str, then: str) -> None:
        try:
            with store.transaction() as tx:
                tx.get_game(first, for_update=True)
                barrier.wait()
                tx.get_game(then, for_update=True)
        except BaseException as exc:
            errors.append(exc)

    threads = [in_thread(lambda: lock(one, "ac-1", "ac-2")), in_thread(lambda: lock(two, "ac-2", "ac-1"))]
    for t in threads:
        t.join(30)
    assert [type(e) for e in errors] == [StoreUnavailableError]
    assert "deadlock" in str(errors[0]).lower()
    with one.transaction() as tx:  # the connection is still usable
        assert tx.get_game("ac-1") is not None


def test_a_role_is_lost_with_its_session(stores: tuple[PostgresStore, PostgresStore]) -> None:
    one, two = stores
    assert one.hold_role("scheduler")
    with psycopg.connect(one.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks"
                      " WHERE locktype = 'advisory' AND granted")
    assert two.hold_role("scheduler")
    assert not one.hold_role("scheduler")  # it notices, and the role stays with the other


def test_connections_come_back_after_a_server_restart() -> None:
    with Postgres() as server:
        store = open_store(server.dsn)
        try:
            store.accept_inbound(b"Message-ID: <before@x>\r\n\r\n", "smtp", T0)
            store.hold_role("imap")
            server.stop()
            with pytest.raises(StoreUnavailableError):
                store.accept_inbound(b"Message-ID: <down@x>\r\n\r\n", "smtp", T0)
            assert not store.hold_role("imap")
            server.start()
            attempts = 0
            while True:  # the first use after the restart may still find the old connection
                attempts += 1
                try:
                    assert store.accept_inbound(b"Message-ID: <after@x>\r\n\r\n", "smtp", T0).new
                    break
                except StoreUnavailableError:
                    assert attempts < 3
            assert [m.message_id for m in store.iter_inbound()] == ["<before@x>", "<after@x>"]
            assert store.hold_role("imap")
            store.flush()
        finally:
            store.close()


def test_check_config_probe(pg: str) -> None:
    assert database_problem(pg) is None  # an empty database is fine: serve creates the tables
    open_store(pg).close()
    assert database_problem(pg) is None
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'future', '2099')")
    assert "schema version 99 was written by a newer pbem" in (database_problem(pg) or "")
    assert migrations.latest_version() < 99
    nobody = f"postgresql://pbem@127.0.0.1:{free_port()}/pbem"
    problem = database_problem(nobody)
    assert problem and "\n" not in problem and "refused" in problem.lower()
    assert redacted("postgresql://u:secret@h:5/db") == "postgresql://u@h:5/db"


def test_inbound_is_analysed_after_a_few_hundred_changes_not_a_tenth(pg: str) -> None:
    """Migration 11: the planner hears of a backlog of waiting mail while it lasts, however many
    messages the table holds."""
    store = open_store(pg)
    try:
        options = store._db().value("SELECT reloptions FROM pg_class WHERE relname = 'inbound'")
    finally:
        store.close()
    assert {"autovacuum_analyze_scale_factor=0", "autovacuum_analyze_threshold=500"} <= set(options)
