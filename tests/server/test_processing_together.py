"""One processor alone on SQLite applies a fair round's messages several to a transaction (one
COMMIT for them), each claimed, handled and marked as when alone. What must not change: every
message is answered exactly once and marked with its own outcome; one that raises is marked failed
alone while the others of its round are applied once; a round rolled back leaves nothing behind
(no reply, no move, no state in the cache); and a transaction stops taking messages when its time
is up, so the intake's commits are not held back long."""

from __future__ import annotations

import logging
import sqlite3
from email.message import EmailMessage

from pbem.processing import handlers, processor
from pbem.processing.context import StateCache
from tests.server.harness import Server, headline, start_game, to
from tests.server.players import Player
from tests.server.test_optimistic_processing import raw_of

PLAYERS = [(f"a{n}@example.org", f"b{n}@example.org") for n in range(4)]


def moves_stored(server: Server) -> tuple[list[int], list[EmailMessage]]:
    """Every game's first move stored as its mover's reply: the inbound ids, oldest first, and
    the "your move" mails the movers answered."""
    games = [start_game(server, alice, bob)[0] for alice, bob in PLAYERS]
    return [server.store.accept_inbound(raw_of(Player(alice, seed=n).respond(your_move)), "test",
                                        server.clock.now()).inbound_id
            for n, ((alice, _bob), your_move) in enumerate(zip(PLAYERS, games, strict=True))], games


def count_transactions(server: Server) -> list[int]:
    """The number of write transactions the processor opens from now on (one item each)."""
    original = server.store.transaction
    opened: list[int] = []

    def counted(durable: bool = True):
        opened.append(1)
        return original(durable)

    server.store.transaction = counted  # type: ignore[method-assign]
    return opened


def statuses(server: Server, ids: list[int]) -> list[tuple[str, str]]:
    conn = sqlite3.connect(server.store.path)
    try:
        marks = ",".join("?" * len(ids))
        rows = {r[0]: (r[1], r[2]) for r in conn.execute(
            f"SELECT id, status, outcome FROM inbound WHERE id IN ({marks})", ids)}
    finally:
        conn.close()
    return [rows[i] for i in ids]


def plies(server: Server, game_id: str) -> int:
    return len([e for e in server.game(game_id).record["moves"] if "move" in e])


def test_a_round_is_applied_in_one_transaction_and_each_message_answered_once(
        server: Server, monkeypatch, caplog) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 60.0)
    ids, _games = moves_stored(server)
    opened = count_transactions(server)
    caplog.set_level(logging.INFO, logger="pbem.processor")

    assert server.processor.process_pending() == len(ids)

    assert len(opened) == 1
    out = server.take_outbox()
    for _alice, bob in PLAYERS:
        assert [headline(m).split(".")[0] for m in to(out, bob)] == ["Your move (move 2)"]
    assert len(out) == len(PLAYERS)
    assert [status for status, _ in statuses(server, ids)] == ["done"] * len(ids)
    assert caplog.text.count("attempt=together") == len(ids)
    # each game's state after its move is kept for its next move
    for n in range(len(PLAYERS)):
        assert server.processor.cache.get(f"ac-{n + 1}", server.game(f"ac-{n + 1}").record) is not None


def test_a_transaction_takes_no_more_messages_once_its_time_is_up(server: Server, monkeypatch) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 0.0)
    ids, _games = moves_stored(server)
    opened = count_transactions(server)

    assert server.processor.process_pending() == len(ids)

    assert len(opened) == len(ids)  # one message each: the first is always taken
    assert len(server.take_outbox()) == len(PLAYERS)


def test_a_message_that_raises_is_marked_failed_alone_and_the_others_are_applied_once(
        server: Server, monkeypatch) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 60.0)
    ids, games = moves_stored(server)
    broken = PLAYERS[2][0]
    original = handlers.HANDLERS["move"]

    def move(ctx, command):  # a bug that only this player's mail meets, after work was done
        original(ctx, command)
        if ctx.mail.from_addr == broken:
            raise RuntimeError("bug in the move handler")

    monkeypatch.setitem(handlers.HANDLERS, "move", move)
    opened = count_transactions(server)
    logging.getLogger("pbem.processor").disabled = True  # the traceback is expected
    try:
        assert server.processor.process_pending() == len(ids)
    finally:
        logging.getLogger("pbem.processor").disabled = False

    # the round's transaction was rolled back, then each message was done alone
    assert len(opened) == 1 + len(ids) + 1  # the round, each alone, the failed one's mark
    marked = statuses(server, ids)
    assert marked[2] == ("failed", "failed: RuntimeError: bug in the move handler")
    assert [status for status, _ in marked[:2] + marked[3:]] == ["done"] * 3
    out = server.take_outbox()
    assert sorted(rcpt for rcpt, _ in out) == sorted(bob for alice, bob in PLAYERS if alice != broken)
    assert [plies(server, f"ac-{n + 1}") for n in range(len(PLAYERS))] == [1, 1, 0, 1]
    # nothing of the rolled-back move is served from the cache: what it keeps for the game is
    # the position stored, before any move, and the move is then applied on it
    kept = server.processor.cache.get("ac-3", server.game("ac-3").record)
    assert kept is None or kept.ply == 0
    monkeypatch.setitem(handlers.HANDLERS, "move", original)
    out = server.submit(Player(broken, seed=2).respond(games[2]))
    assert [headline(m).split(".")[0] for m in to(out, "b2@example.org")] == ["Your move (move 2)"]


def test_a_failed_authentication_in_a_round_changes_nothing_else(server: Server, monkeypatch) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 60.0)
    games = [start_game(server, alice, bob)[0] for alice, bob in PLAYERS]
    forged = Player(PLAYERS[1][0], seed=1).respond(games[1])
    del forged["From"]
    forged["From"] = "mallory@example.net"  # Alice's token from another address
    mails = [Player(alice, seed=n).respond(your_move)
             for n, ((alice, _bob), your_move) in enumerate(zip(PLAYERS, games, strict=True))]
    mails[1] = forged
    ids = [server.store.accept_inbound(raw_of(m), "test", server.clock.now()).inbound_id for m in mails]

    assert server.processor.process_pending() == len(ids)

    marked = statuses(server, ids)
    assert marked[1] == ("ignored", "ignored: authentication failed for ac-2")
    assert [status for status, _ in marked[:1] + marked[2:]] == ["done"] * 3
    out = server.take_outbox()
    assert [plies(server, f"ac-{n + 1}") for n in range(len(PLAYERS))] == [1, 0, 1, 1]
    # the seat named is told once, at its registered address; the forger gets nothing
    assert [headline(m) for m in to(out, PLAYERS[1][0])] == [
        "A mail about ac-2 from mallory@example.net was not accepted"]
    assert to(out, "mallory@example.net") == []
    assert len(out) == 3 + 1


def test_two_messages_of_one_game_in_a_round_both_count(server: Server, monkeypatch) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 60.0)
    alice, bob = PLAYERS[0]
    your_move, _bobs = start_game(server, alice, bob)
    first = server.store.accept_inbound(raw_of(Player(alice, seed=1).respond(your_move)), "test",
                                        server.clock.now()).inbound_id
    chat = server.mail(bob, "message good luck", subject="ac-1")
    second = server.store.accept_inbound(raw_of(chat), "test", server.clock.now()).inbound_id

    assert server.processor.process_pending() == 2

    assert [status for status, _ in statuses(server, [first, second])] == ["done", "done"]
    assert plies(server, "ac-1") == 1
    record = server.game("ac-1").record
    assert server.processor.cache.get("ac-1", record) is not None
    texts = [m.get_body(("plain",)).get_content() for _rcpt, m in server.take_outbox()]
    assert any("good luck" in text for text in texts)


def test_each_message_of_a_round_logs_the_games_it_replayed(server: Server, monkeypatch, caplog) -> None:
    monkeypatch.setattr(processor, "TOGETHER_SECONDS", 60.0)
    ids, _games = moves_stored(server)
    server.processor.cache = StateCache()  # as on a worker that did not process these games before
    caplog.set_level(logging.INFO, logger="pbem.processor")

    assert server.processor.process_pending() == len(ids)

    lines = [line for line in caplog.text.splitlines() if "attempt=together" in line]
    assert len(lines) == len(ids) and all("replayed=1 " in line for line in lines)
