"""`pbem store copy` from the SQLite file of a server that has been playing to a PostgreSQL database: every
game, seat, setting, observer, queued mail and the secret arrive; every game replays the same; running
it again changes nothing, or brings the copy up to date; a server on the copy accepts replies to mails
sent before the move."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli import main
from pbem.cli import store as store_cli
from pbem.cli.store import verify
from pbem.processing.processor import Processor
from pbem.store import open_store
from pbem.store.copy import TABLES
from tests.server.harness import Server, headline
from tests.server.players import Player
from tests.services.postgres import Postgres

ALICE, BOB, CAROL, DAN = "alice@example.org", "bob@example.org", "carol@example.org", "dan@example.org"
SECRET = b"s" * 32  # the harness's; written to DATA_DIR/secret.key as an older server kept it


def play(server: Server, players: dict[str, Player], out: list[tuple[str, EmailMessage]],
         rounds: int) -> dict[str, EmailMessage]:
    """Let the players answer what they got for a few rounds; returns each one's latest mail."""
    latest: dict[str, EmailMessage] = {}
    for _ in range(rounds):
        answers = []
        for rcpt, message in out:
            latest[rcpt] = message
            answer = players[rcpt].respond(message) if rcpt in players else None
            if answer is not None:
                answers.append(answer)
        out = [item for answer in answers for item in server.submit(answer)]
    latest.update(out)
    return latest


@pytest.fixture
def played(tmp_path: Path) -> tuple[Server, dict[str, EmailMessage]]:
    """A server that has played two games a little, with a setting, an observer, a block, a
    player's own block, one mail not yet processed and replies not yet sent."""
    server = Server(tmp_path)
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "secret.key").write_text(SECRET.hex() + "\n")
    players = {a: Player(a, seed) for seed, a in enumerate((ALICE, BOB, CAROL, DAN))}
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB}"))
    out += server.submit(server.mail(CAROL, f"new space-truckin with {DAN}"))
    latest = play(server, players, out, rounds=6)
    server.submit(server.mail(DAN, "set nickname Danny"))
    server.submit(server.mail("eve@example.org", "observe ac-1"))
    now = server.clock.now()
    with server.store.transaction() as tx:
        tx.block("spam@example.net", now, "test", "spam")
        tx.add_player_block(BOB, "pest@example.net", now)  # a player's own list (migration 9)
        tx.mark_bouncing("gone@example.net", now, "550 5.1.1 no such user")
        tx.add_address_change(ALICE, "alice@new.example.org", "c" * 64, now, now + timedelta(days=1))
        refused = tx.queue_outbound(message_id="<refused@pbem>", sender="pbem@localhost",
                                    recipients=["gone@example.net"], raw=b"Subject: x\r\n\r\nx\r\n", now=now)
    server.store.mark_given_up(refused, "550 5.1.1 no such user", now)
    server.store.accept_inbound(server.mail(ALICE, "games").as_bytes(), "test", server.clock.now(),
                                envelope_from=ALICE)
    server.store.accept_inbound(server.mail(BOB, "help").as_bytes(), "test", server.clock.now())
    server.processor.process_pending(1)  # one processed, its reply left in the outbox
    yield server, latest
    server.close()


def copy(tmp_path: Path, source: Path, target: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp_path / "pbem.toml").write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    code = main(["store", "copy", "-c", str(tmp_path / "pbem.toml"), "--from", f"sqlite:///{source}",
                 "--to", target])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def rows(store, table: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(tuple(map(repr, r)) for r in store._db().all(f"SELECT * FROM {table}"))


def test_copy_to_postgresql_verify_rerun_and_play_on(played: tuple[Server, dict[str, EmailMessage]],
                                                      tmp_path: Path, postgres: Postgres,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    server, latest = played
    target = postgres.create_database("copy_target")
    code, text = copy(tmp_path, tmp_path / "pbem.sqlite3", target, capsys)
    assert code == 0, text
    assert "games 2, seats 4," in text
    assert "verified: every one of 2 game(s) replays to the same position" in text

    copied = open_store(target)
    try:
        for table, _key in TABLES:
            assert rows(copied, table) == rows(server.store, table), table
        assert len(list(copied.iter_inbound("pending"))) == 1
        assert copied.outbound_counts()["pending"] >= 1
        with copied.transaction() as tx:
            assert tx.get_meta("server.secret") == SECRET.hex()

        # Again: nothing changes. Then the old server plays on, and a third run catches up.
        code, text = copy(tmp_path, tmp_path / "pbem.sqlite3", target, capsys)
        assert code == 0, text
        assert rows(copied, "games") == rows(server.store, "games")
        game = server.game("ac-1")
        mover = next(s.email for s in game.seats if s.seat == game.to_move)
        out = server.submit(Player(mover, 9).respond(latest[mover]))
        assert out and rows(copied, "games") != rows(server.store, "games")
        code, text = copy(tmp_path, tmp_path / "pbem.sqlite3", target, capsys)
        assert code == 0, text
        for table, _key in TABLES:
            assert rows(copied, table) == rows(server.store, table), table

        # A server on the copy knows the secret: a reply to a mail sent before the copy is a move.
        processor = Processor(server.config, copied, server.clock)
        assert processor.secret == SECRET
        [waiting] = [m for rcpt, m in out if "Your move" in headline(m)]
        rcpt = next(r for r, m in out if m is waiting)
        before = len(copied.get_game("ac-1").record["moves"])  # type: ignore[union-attr]
        copied.accept_inbound(Player(rcpt, 3).respond(waiting).as_bytes(), "test", server.clock.now())
        processor.process_pending()
        assert len(copied.get_game("ac-1").record["moves"]) == before + 1  # type: ignore[union-attr]
    finally:
        copied.close()


def test_a_copy_that_differs_is_reported(played: tuple[Server, dict[str, EmailMessage]], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    server, _latest = played
    code, text = copy(tmp_path, tmp_path / "pbem.sqlite3", str(tmp_path / "copy.sqlite3"), capsys)
    assert code == 0, text
    with open_store(tmp_path / "copy.sqlite3") as copied:
        game = copied.get_game("ac-1")
        assert game is not None and game.record["moves"]
        game.record["moves"].pop()
        with copied.transaction() as tx:
            tx.save_game(game)
        problems = verify(server.store, copied, total=2)
        assert problems == ["ac-1: the stored game differs (status, seats, times or record)"]
        monkeypatch.setattr(store_cli, "_PARALLEL_FROM", 1)  # the same through worker processes
        game.record["moves"].append({"seat": "black", "move": "no such move"})
        with copied.transaction() as tx:
            tx.save_game(game)
        with server.store.transaction() as tx:
            tx.save_game(game)
        [problem] = verify(server.store, copied, total=2, jobs=2)
        assert problem.startswith("ac-1: the source's record does not replay (")
    code, text = copy(tmp_path, tmp_path / "pbem.sqlite3", str(tmp_path / "pbem.sqlite3"), capsys)
    assert code == 2 and "the same database" in text
