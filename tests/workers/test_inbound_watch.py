"""On PostgreSQL the intake tells every worker of a new message, with the game its token names, in
the transaction that stores it (``NOTIFY``); each worker watches (``Store.watch_inbound``: what it
stored itself is not news to it), and the
worker that is the game's home processes it at once, while the worker that stored it leaves it to
that home for a moment (``HANDOFF_SECONDS``): the home has the game's state, the other would
replay it from its record."""

from __future__ import annotations

import email.policy
import itertools
import queue
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.cli.mailbox import new_mail, reply_to
from pbem.clock import ManualClock
from pbem.processing.processor import Processor
from pbem.store import open_store
from pbem.store.common import now_utc
from pbem.store.sql import SqlStore
from tests.server.players import Player
from tests.services.postgres import Postgres
from tests.transport import SERVER, make_config
from tests.workers.test_fair_claims import help_mail

_numbers = itertools.count(1)
ALICE, BOB = "alice@example.org", "bob@example.org"


@pytest.fixture
def stores(postgres: Postgres) -> Iterator[tuple[SqlStore, SqlStore]]:
    """Two workers' stores on one database."""
    dsn = postgres.create_database(f"watch_{next(_numbers)}")
    opened: list[SqlStore] = [open_store(dsn), open_store(dsn)]  # type: ignore[list-item]
    yield opened[0], opened[1]
    for store in opened:
        store.close()


def watching(store: SqlStore) -> tuple[queue.Queue, threading.Event, threading.Thread]:
    heard: queue.Queue = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=store.watch_inbound, args=(heard.put, stop), daemon=True)
    thread.start()
    return heard, stop, thread


def game_move(tmp_path: Path, store: SqlStore) -> bytes:
    """A game started through ``store`` (Alice moves first); her move, as she would send it."""
    clock = ManualClock(now_utc())
    processor = Processor(make_config(tmp_path), store, clock, secret=b"s" * 32)

    def submit(message) -> list:
        store.accept_inbound(message.as_bytes(policy=email.policy.SMTP), "test", clock.now())
        processor.process_pending()
        rows = store.due_outbound(clock.now() + timedelta(days=1))
        for row in rows:
            store.mark_sent(row.id, clock.now())
        return [(row.recipients[0], email.message_from_bytes(row.raw, policy=email.policy.default))
                for row in rows]

    out = submit(new_mail(ALICE, SERVER, f"new alien-city with {BOB} as black"))
    invitation = next(m for rcpt, m in out if rcpt == BOB)
    out = submit(reply_to(invitation, BOB, "accept"))
    your_move = next(m for rcpt, m in out if rcpt == ALICE)
    return Player(ALICE, seed=1).respond(your_move).as_bytes(policy=email.policy.SMTP)


def test_every_worker_hears_of_new_mail_with_its_game(tmp_path: Path, stores) -> None:
    first, second = stores
    move = game_move(tmp_path, first)
    heard, stop, thread = watching(first)
    try:
        # the watch is listening once a message stored meanwhile is heard of
        while True:
            second.accept_inbound(help_mail("ping@example.org"), "smtp", now_utc())
            try:
                if heard.get(timeout=1.0) is None:
                    break
            except queue.Empty:
                continue
        while not heard.empty():
            heard.get_nowait()
        # what this worker stores itself is not news to it: its intake woke its processor
        first.accept_inbound(help_mail("self@example.org"), "smtp", now_utc())
        stored = second.accept_inbound(move, "smtp", now_utc())  # stored by the other worker
        assert stored.new and stored.game_id == "ac-1"
        assert heard.get(timeout=5.0) == "ac-1"
        # the same message again is no news
        assert not second.accept_inbound(move, "smtp", now_utc()).new
        second.accept_inbound(help_mail("carol@example.org"), "smtp", now_utc())
        assert heard.get(timeout=5.0) is None  # the help mail, about no game; nothing before it
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_sqlite_has_nothing_to_watch(tmp_path: Path) -> None:
    store = open_store(tmp_path / "pbem.sqlite3")
    try:
        assert store.watch_inbound(lambda game: None, threading.Event()) is False
    finally:
        store.close()
