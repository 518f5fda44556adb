"""The mail commands ``history`` and ``standings`` through the in-process server."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.archive.importer import row_from_record
from pbem.archive.names import pseudonym
from pbem.archive.sample import random_record
from pbem.record import replay_record
from pbem.store.secret import server_secret
from tests.server.harness import Server, headline, text_of, to
from tests.server.players import Player

ALICE, BOB, CAROL, DAVE = "alice@example.org", "bob@example.org", "carol@example.org", "dave@example.org"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path)
    yield srv
    srv.close()


def add_game(server: Server, game_id: str, name: str, people: list[str], started: datetime,
             seed: int) -> None:
    record = random_record(name, random.Random(seed), game_id, people, started, resign_chance=0)
    with server.store.transaction() as tx:
        tx.insert_game(row_from_record(record, replay_record(record)))


def play_by_mail(server: Server) -> None:
    """Alice and Bob play a whole Alien City game by mail (ac-1)."""
    players = {ALICE: Player(ALICE, 1), BOB: Player(BOB, 2)}
    pending = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    for _ in range(500):
        if not pending:
            break
        rcpt, message = pending.pop(0)
        if rcpt in players and not headline(message).startswith("Game over"):
            reply = players[rcpt].respond(message)
            if reply is not None:
                pending += server.submit(reply)
    assert server.game("ac-1").status == "over"


def reply_text(server: Server, sender: str, body: str) -> str:
    out = server.submit(server.mail(sender, body))
    mails = to(out, sender)
    assert len(mails) == 1
    return text_of(mails[0])


def test_history_by_mail(server: Server) -> None:
    play_by_mail(server)
    finished = server.game("ac-1")
    assert finished.finished_at == server.clock.now()  # stamped by the archive's hook
    add_game(server, "ac-50", "alien-city", [ALICE, CAROL], datetime(2026, 2, 10, tzinfo=UTC), 3)
    add_game(server, "st-50", "space-truckin", [CAROL, ALICE, DAVE], datetime(2026, 3, 10, tzinfo=UTC), 4)
    add_game(server, "ac-51", "alien-city", [CAROL, DAVE], datetime(2026, 4, 10, tzinfo=UTC), 5)

    text = reply_text(server, ALICE, "history")
    assert "History of alice@example.org" in text
    assert "3 games: player alice@example.org, newest first." in text
    for game_id in ("ac-1", "ac-50", "st-50"):
        assert game_id in text
    assert "ac-51" not in text
    assert "black alice@example.org" in text and "white bob@example.org" in text
    assert text.index("ac-1") < text.index("st-50") < text.index("ac-50")  # newest first

    text = reply_text(server, ALICE, "history space-truckin")
    assert "st-50" in text and "ac-50" not in text and "ac-1 " not in text
    text = reply_text(server, ALICE, "history from 2026-01-01 to 2026-03-01")
    assert "1 game: player alice@example.org, from 2026-01-01, to 2026-03-01" in text
    assert "ac-50" in text and "st-50" not in text
    text = reply_text(server, ALICE, "history alien-city player carol@example.org")
    assert "History of carol@example.org" in text and "ac-51" in text and "ac-50" in text
    assert "st-50" not in text
    text = reply_text(server, DAVE, "history from 2027-01-01")
    assert "0 games" in text and "Usage: history" in text


@pytest.mark.parametrize(("body", "message"), [
    ("history from 2026-02-30", "is not a date"),
    ("history chess", "unknown game 'chess'"),
    ("history player nobody", "takes a mail address"),
    ("history alien-city space-truckin", "do not understand 'space-truckin'"),
    ("history to", "'to' needs a date"),
    ("standings alien-city please", "at most a game name"),
    ("standings go", "unknown game 'go'"),
])
def test_mistakes_are_explained(server: Server, body: str, message: str) -> None:
    text = reply_text(server, ALICE, body)
    assert "Not understood" in text and message in text


def test_standings_by_mail(server: Server) -> None:
    play_by_mail(server)
    add_game(server, "ac-50", "alien-city", [ALICE, CAROL], datetime(2026, 12, 1, tzinfo=UTC), 3)
    add_game(server, "st-50", "space-truckin", [CAROL, ALICE, DAVE], datetime(2026, 12, 2, tzinfo=UTC), 4)
    text = reply_text(server, BOB, "standings")
    assert "Standings: Alien City" in text and "Standings: Space Truckin'" in text
    # anyone may ask: players by the pseudonym the public site gives them, never by address
    key = server_secret(server.store)
    for who in (ALICE, BOB, CAROL):
        assert pseudonym(who, key) in text and who not in text
    assert f"{pseudonym(BOB, key)} (you)" in text
    assert "You are number" in text and "Elo" in text and "K=32" in text

    text = reply_text(server, DAVE, "standings space-truckin")
    assert "Standings: Space Truckin'" in text and "Alien City" not in text
    assert f"{pseudonym(DAVE, key)} (you)" in text and DAVE not in text
    # a nickname is shown as chosen, in the mail as on the site
    with server.store.transaction() as tx:
        tx.set_player(CAROL, {"nickname": "Carol C."})
    assert "Carol C." in reply_text(server, DAVE, "standings space-truckin")

    # The ratings follow from the results: recompute them from the stored games.
    from pbem.community.standings import compute

    expected = compute(server.store.list_games(status="over"), "alien-city")["alien-city"]
    text = reply_text(server, ALICE, "standings alien-city")
    rows = [" ".join(row.split()) for row in text.split("\n")]
    for rank, line in enumerate(expected, 1):
        name = pseudonym(line.player, key) if line.player != CAROL else "Carol C."
        name = f"{name} (you)" if line.player == ALICE else name  # the reader, marked
        assert (f"{rank} {name} {line.games} {line.wins} {line.losses} {line.draws} {line.rating:.0f}"
                in " ".join(rows))


def test_standings_with_no_finished_games(server: Server) -> None:
    text = reply_text(server, ALICE, "standings")
    assert "No finished games yet." in text
