"""On SQLite several processors (``[server] processors``) each apply a move outside the write lock
and commit it under the lock only if nothing it read changed meanwhile (pbem.store.optimistic).
When something did, the attempt leaves nothing behind (no reply queued, no half-applied move,
nothing in the state cache) and the move is applied once, in an ordinary transaction, on what is
there now."""

from __future__ import annotations

import email.policy
import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.processing.processor import Processor
from tests.server.harness import Server, headline, start_game, to
from tests.server.players import Player

ALICE, BOB = "alice@example.org", "bob@example.org"


def meddle(server: Server, between: Callable[[], None]) -> list[int]:
    """``between`` runs after each optimistic attempt's work and before its commit (as another
    process's commit would fall there); returns the outbox sizes seen at those moments."""
    original = server.store.optimistic
    seen: list[int] = []

    @contextmanager
    def optimistic(durable: bool = True) -> Iterator[object]:
        with original(durable) as tx:
            yield tx
            seen.append(outbox_rows(server))
            between()

    server.store.optimistic = optimistic  # type: ignore[method-assign]
    return seen


def outbox_rows(server: Server) -> int:
    conn = sqlite3.connect(server.store.path)
    try:
        return conn.execute("SELECT COUNT(*) FROM outbound").fetchone()[0]
    finally:
        conn.close()


def set_language(server: Server, email: str, language: str) -> None:
    """Another process's commit: the player chose a language."""
    conn = sqlite3.connect(server.store.path, isolation_level=None)
    try:
        conn.execute("INSERT INTO players (email, settings) VALUES (?, ?) ON CONFLICT (email)"
                     " DO UPDATE SET settings = excluded.settings",
                     (email, json.dumps({"language": language})))
    finally:
        conn.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    opened = Server(tmp_path)
    opened.processor.optimistic = True  # as each of several processor processes of pbem serve
    yield opened
    opened.close()


def test_a_move_commits_outside_the_lock_when_nothing_changed(server: Server, caplog) -> None:
    your_move, _ = start_game(server, ALICE, BOB)
    caplog.set_level(logging.INFO, logger="pbem.processor")
    out = server.submit(Player(ALICE, seed=1).respond(your_move))
    assert [headline(m).split(".")[0] for m in to(out, BOB)] == ["Your move (move 2)"]
    assert len(out) == 1
    assert "attempt=committed" in caplog.text


def test_a_conflict_leaves_nothing_and_the_move_is_applied_once_on_what_is_there_now(
        server: Server, caplog) -> None:
    your_move, _ = start_game(server, ALICE, BOB)
    before = server.game("ac-1").record
    queued_before = outbox_rows(server)
    cached: list[bool] = []

    def change() -> None:
        # the attempt's state after the move is not in the cache: it still has the one before
        cached.append(server.processor.cache.get("ac-1", before) is not None)
        set_language(server, BOB, "de")

    changes = iter([change])
    seen = meddle(server, lambda: next(changes, lambda: None)())
    caplog.set_level(logging.INFO, logger="pbem.processor")

    out = server.submit(Player(ALICE, seed=1).respond(your_move))

    # the attempt had composed Bob's "Your move" in English; it was never queued, and the move
    # was applied again with Bob's German, which another process set while the attempt ran
    assert seen[0] == queued_before and cached == [True]
    assert [headline(m).split(".")[0] for m in to(out, BOB)] == ["Du bist am Zug (Zug 2)"]
    assert len(out) == 1
    moves = [e for e in server.game("ac-1").record["moves"] if "move" in e]
    assert len(moves) == 1
    assert "attempt=conflict" in caplog.text
    # the state after the one move, put into the cache after the commit
    assert server.processor.cache.get("ac-1", server.game("ac-1").record) is not None


def test_a_message_processed_meanwhile_is_not_processed_again(server: Server) -> None:
    your_move, _ = start_game(server, ALICE, BOB)

    def done_elsewhere() -> None:
        conn = sqlite3.connect(server.store.path, isolation_level=None)
        try:
            conn.execute("UPDATE inbound SET status = 'done', outcome = 'elsewhere' WHERE status = 'pending'")
        finally:
            conn.close()

    meddle(server, done_elsewhere)
    out = server.submit(Player(ALICE, seed=1).respond(your_move))
    assert out == []
    assert [e for e in server.game("ac-1").record["moves"] if "move" in e] == []


def test_two_processors_each_take_their_share_of_the_games_and_apply_each_move_once(
        server: Server) -> None:
    games = [start_game(server, f"a{n}@example.org", f"b{n}@example.org")[0] for n in range(12)]
    first, second = (Processor(server.config, server.store, server.clock, secret=b"s" * 32)
                     for _ in range(2))
    first.share, second.share = (0, 2), (1, 2)
    first.optimistic = second.optimistic = True
    for n, your_move in enumerate(games):
        server.store.accept_inbound(raw_of(Player(f"a{n}@example.org", seed=n).respond(your_move)),
                                    "test", server.clock.now())
    taken = [first.process_pending(), second.process_pending()]
    assert all(0 < count < 12 for count in taken) and sum(taken) == 12
    assert first.process_pending() == second.process_pending() == 0
    out = server.take_outbox()
    assert sorted(rcpt for rcpt, _ in out) == sorted(f"b{n}@example.org" for n in range(12))
    for n in range(12):
        row = server.game(f"ac-{n + 1}")
        assert len([e for e in row.record["moves"] if "move" in e]) == 1


def raw_of(message: EmailMessage) -> bytes:
    return message.as_bytes(policy=email.policy.SMTP)


def test_a_processor_whose_share_is_behind_a_full_round_says_so_and_gets_its_mail_later(
        server: Server) -> None:
    games = {f"ac-{n + 1}": start_game(server, f"a{n}@example.org", f"b{n}@example.org")[0]
             for n in range(8)}
    first, second = (Processor(server.config, server.store, server.clock, secret=b"s" * 32)
                     for _ in range(2))
    first.share, second.share = (0, 2), (1, 2)
    first.optimistic = second.optimistic = True
    firsts = [g for g in games if first.own_share([(1, g, None)])]
    seconds = [g for g in games if g not in firsts]
    assert len(firsts) >= 2 and seconds, "the eight games fall into both shares"
    for game in [*firsts[:2], seconds[0]]:  # the second's mail behind two of the first's
        n = int(game.split("-")[1]) - 1
        server.store.accept_inbound(raw_of(Player(f"a{n}@example.org", seed=n).respond(games[game])),
                                    "test", server.clock.now())
    assert second.process_pending(limit=1) == 0 and second.starved  # a round of two, both not its
    assert first.process_pending(limit=1) == 1 and not first.starved
    # the round (two heads) now holds its mail
    assert second.process_pending(limit=1) == 1 and not second.starved
    assert first.process_pending() == 1 and second.process_pending() == 0
    assert sorted(rcpt for rcpt, _ in server.take_outbox()) == sorted(
        f"b{int(g.split('-')[1]) - 1}@example.org" for g in [*firsts[:2], seconds[0]])
