"""What lets several workers share one database, on both stores: claims of inbound mail (with one
game's mail in arrival order), claims of outbox rows, roles, heartbeats, the shared secret, queue
figures. Where SQLite has nothing to exclude (one writer at a time), the same calls still behave."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.store.base import GameRow, Seat, Worker
from pbem.store.secret import server_secret
from pbem.store.sql import SqlStore
from pbem.tokens import seat_token, token_hash
from tests.store.conftest import Backend

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
SECRET = b"k" * 32


def reply_mail(n: int, token: str | None, move: int = 3) -> bytes:
    to = f"pbem+{token}-{move}@example.org" if token else "pbem@example.org"
    return (f"From: a@x.org\r\nTo: Server <{to}>\r\nMessage-ID: <r{n}@x>\r\n\r\nmove {n}\r\n").encode()


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def add_game(store: SqlStore, game_id: str) -> list[str]:
    tokens = [seat_token(SECRET, game_id, seat) for seat in ("p1", "p2")]
    with store.transaction() as tx:
        tx.insert_game(GameRow(id=game_id, game="alien-city", status="active", record={"moves": []},
                               seats=[Seat("p1", "a@x.org", token_hash=token_hash(tokens[0])),
                                      Seat("p2", "b@x.org", token_hash=token_hash(tokens[1]))],
                               created_at=T0, to_move="p1"))
    return tokens


def test_one_games_mail_is_claimed_in_arrival_order(store: SqlStore) -> None:
    ac1 = add_game(store, "ac-1")
    ac2 = add_game(store, "ac-2")
    first = store.accept_inbound(reply_mail(1, ac1[0]), "smtp", T0).inbound_id
    other_game = store.accept_inbound(reply_mail(2, ac2[1]), "smtp", T0).inbound_id
    second = store.accept_inbound(reply_mail(3, ac1[1].upper(), 4), "smtp", T0).inbound_id  # other seat
    no_token = store.accept_inbound(reply_mail(4, None), "smtp", T0).inbound_id
    unknown = store.accept_inbound(reply_mail(5, "a" * 26), "smtp", T0).inbound_id
    with store.transaction() as tx:
        assert not tx.claim_inbound(second)  # the earlier mail about ac-1 is still pending
        assert tx.claim_inbound(other_game) and tx.claim_inbound(no_token) and tx.claim_inbound(unknown)
        assert tx.claim_inbound(first)
        tx.mark_inbound(first, "done", "applied", now=T0)
        assert not tx.claim_inbound(first)  # no longer pending
        assert tx.claim_inbound(second)  # its turn now
    with store.transaction() as tx:
        assert not tx.claim_inbound(10_000)


def test_a_claim_among_several_takes_the_oldest_that_can_be_taken(store: SqlStore) -> None:
    ac1 = add_game(store, "ac-1")
    first = store.accept_inbound(reply_mail(1, ac1[0]), "smtp", T0).inbound_id
    second = store.accept_inbound(reply_mail(2, ac1[1], 4), "smtp", T0).inbound_id  # the same game
    other = store.accept_inbound(reply_mail(3, None), "smtp", T0).inbound_id
    with store.transaction() as tx:
        assert tx.claim_inbound() is None
        taken = tx.claim_inbound(other, second)  # the second waits for the first: passed over
        assert taken is not None and taken.id == other and taken.raw.startswith(b"From: a@x.org")
        tx.mark_inbound(other, "done", "applied", now=T0)
        taken = tx.claim_inbound(second, other, first)  # in any order: the oldest
        assert taken is not None and taken.id == first
        tx.mark_inbound(first, "done", "applied", now=T0)
        taken = tx.claim_inbound(first, second, other)  # the done ones are passed over
        assert taken is not None and taken.id == second
        tx.mark_inbound(second, "done", "applied", now=T0)
        assert tx.claim_inbound(first, second, other) is None


def test_fair_rounds_take_one_games_mail_in_arrival_order(store: SqlStore) -> None:
    ac1 = add_game(store, "ac-1")
    ids = [store.accept_inbound(reply_mail(n, token), "smtp", T0).inbound_id
           for n, token in enumerate([ac1[0], ac1[1], None, ac1[0]])]
    taken = []
    while heads := store.pending_fair(T0, 0, 10):  # one sender: one message a round
        with store.transaction() as tx:
            for inbound_id in heads:
                inbound = tx.claim_inbound(inbound_id)
                assert inbound is not None and inbound.raw.startswith(b"From: a@x.org")
                taken.append(inbound.id)
                tx.mark_inbound(inbound.id, "done", "applied", now=T0)
    assert taken == ids


def test_claim_outbound_marks_what_was_sent_even_when_the_sender_fails(store: SqlStore) -> None:
    with store.transaction() as tx:
        ids = [tx.queue_outbound(message_id=f"<o{i}@pbem>", sender="pbem@x", recipients=["a@x"],
                                 raw=b"x", now=T0) for i in range(4)]
    with pytest.raises(ConnectionError), store.claim_outbound(T0, limit=3) as batch:
        assert [r.id for r in batch.rows] == ids[:3]
        assert batch.take(batch.rows[0])
        batch.sent(ids[0])
        batch.failed(ids[1], "421 later", T0 + timedelta(minutes=5))  # without take: taken for it
        assert batch.take(batch.rows[2])
        raise ConnectionError("relay went away")  # while sending the third: it stays due
    assert [r.id for r in store.due_outbound(T0)] == [ids[2], ids[3]]
    [retry] = [r for r in store.due_outbound(T0 + timedelta(minutes=5)) if r.id == ids[1]]
    assert (retry.attempts, retry.last_error) == (1, "421 later")
    assert store.outbound_counts() == {"pending": 3, "sent": 1, "given_up": 0}
    with store.claim_outbound(T0, limit=10) as batch:
        for row in batch.rows:
            assert batch.take(row)
            batch.sent(row.id)
    assert store.outbound_counts() == {"pending": 1, "sent": 3, "given_up": 0}
    with store.claim_outbound(T0, limit=10) as batch:
        assert batch.rows == []


def test_roles_are_held_by_one_store_at_a_time(backend: Backend) -> None:
    one, two = backend.open(), backend.open()
    try:
        assert one.hold_role("imap") and one.hold_role("imap")  # holding it again is keeping it
        assert not two.hold_role("imap")
        assert two.hold_role("scheduler") and not one.hold_role("scheduler")
        one.release_role("imap")
        assert two.hold_role("imap") and not one.hold_role("imap")
        two.close()  # closing the store frees its roles (the server's session ends a moment later)
        assert eventually(lambda: one.hold_role("imap") and one.hold_role("scheduler"))
    finally:
        one.close()
        two.close()


_HOLD_AND_WAIT = """
    import sys, time
    from pbem.store import open_store
    store = open_store(sys.argv[1])
    print(store.hold_role("imap"), flush=True)
    time.sleep(60)
"""


def test_a_killed_holders_role_is_free_at_once(backend: Backend) -> None:
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_HOLD_AND_WAIT), backend.target],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        with backend.open() as other:
            assert not other.hold_role("imap")
            holder.send_signal(signal.SIGKILL)
            holder.wait(30)
            # PostgreSQL ends the session as soon as it sees the socket close
            assert eventually(lambda: other.hold_role("imap")), "role still held after its holder died"
    finally:
        holder.kill()
        holder.wait()


def test_role_sessions_show_who_holds_what_and_forget_the_killed_at_once(backend: Backend) -> None:
    """What ``pbem status`` trusts over heartbeats where the database can tell (PostgreSQL)."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_HOLD_AND_WAIT), backend.target],
                              stdout=subprocess.PIPE, text=True)
    name = f"{socket.gethostname()}:{holder.pid}"
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        with backend.open() as other:
            if backend.kind == "sqlite":
                assert other.role_sessions(("imap", "scheduler")) is None  # heartbeats decide
                return
            assert other.hold_role("scheduler")
            sessions = other.role_sessions(("imap", "scheduler"))
            assert sessions is not None and sessions[name] == ["imap"]
            assert sessions[f"{socket.gethostname()}:{os.getpid()}"] == ["scheduler"]
            holder.send_signal(signal.SIGKILL)
            holder.wait(30)
            assert eventually(lambda: name not in (other.role_sessions(("imap",)) or {}))
    finally:
        holder.kill()
        holder.wait()


def test_heartbeats_and_queue_figures(store: SqlStore) -> None:
    w = Worker(id="h1:10:1", host="h1", pid=10, started_at=T0, seen_at=T0, roles=[])
    store.heartbeat(w)
    w.seen_at, w.roles = T0 + timedelta(seconds=5), ["imap", "scheduler"]
    store.heartbeat(w)
    store.heartbeat(Worker(id="h2:11:1", host="h2", pid=11, started_at=T0, seen_at=T0 + timedelta(1)))
    assert [(x.id, x.roles, x.seen_at) for x in store.workers()] == [
        ("h2:11:1", [], T0 + timedelta(1)), ("h1:10:1", ["imap", "scheduler"], T0 + timedelta(seconds=5))]
    store.forget_worker("h2:11:1")
    assert [x.id for x in store.workers()] == ["h1:10:1"]

    assert store.queue_figures() == {"inbound_pending": 0, "oldest_pending": None, "outbound_pending": 0,
                                     "outbound_due_oldest": None, "games_active": 0}
    add_game(store, "ac-1")
    store.accept_inbound(reply_mail(1, None), "smtp", T0 + timedelta(minutes=1))
    store.accept_inbound(reply_mail(2, None), "smtp", T0)
    with store.transaction() as tx:
        tx.queue_outbound(message_id="<q@pbem>", sender="s", recipients=["a"], raw=b"", now=T0)
    figures = store.queue_figures()
    assert (figures["inbound_pending"], figures["oldest_pending"], figures["outbound_pending"],
            figures["games_active"]) == (2, T0, 1, 1)


def test_init_meta_keeps_the_first_value(store: SqlStore) -> None:
    with store.transaction() as tx:
        assert tx.init_meta("secret", "first") == "first"
        assert tx.init_meta("secret", "second") == "first"
        assert tx.get_meta("secret") == "first"


def test_game_numbers_from_many_threads_never_collide(store: SqlStore) -> None:
    got: list[str] = []
    errors: list[BaseException] = []

    def make() -> None:
        try:
            for _ in range(15):
                with store.transaction() as tx:
                    game_id = tx.next_game_id("ac")
                    tx.insert_game(GameRow(id=game_id, game="alien-city", status="active", record={}))
                got.append(game_id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(got, key=lambda g: int(g[3:])) == [f"ac-{n}" for n in range(1, 61)]


def test_every_worker_gets_the_same_secret(backend: Backend, tmp_path: Path) -> None:
    """A new installation makes one secret in the database; a second worker (another process, another
    machine: no shared files) reads the same one, so a token written by one is accepted by the other."""
    one, two = backend.open(), backend.open()
    try:
        secret = server_secret(one, tmp_path / "worker-1")
        assert len(secret) == 32
        assert server_secret(two, tmp_path / "worker-2") == secret
        assert server_secret(one) == secret
        assert not (tmp_path / "worker-1" / "secret.key").exists()  # no file is written any more
    finally:
        one.close()
        two.close()


def test_an_existing_secret_file_is_taken_into_the_database(backend: Backend, tmp_path: Path) -> None:
    """The upgrade of an installation whose tokens came from DATA_DIR/secret.key: they stay valid."""
    old = bytes(range(32))
    (tmp_path / "secret.key").write_text(old.hex() + "\n")
    with backend.open() as store:
        assert server_secret(store, tmp_path) == old
    (tmp_path / "secret.key").write_text(bytes(32).hex())  # a stray file later changes nothing
    with backend.open() as store:
        assert server_secret(store, tmp_path) == old
        with store.transaction() as tx:
            assert tx.get_meta("server.secret") == old.hex()
