"""Our own mail to a player bounces: the address is marked, the other players and the moderators are
told once, that player's move clock stops until mail from them shows it reaches them again, and
the bounce itself is never answered."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli import main
from pbem.cli.admin import status_text
from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, start_game, text_of, to
from tests.server.players import Player

ALICE, BOB, MOD = "alice@example.org", "bob@example.org", "mod@example.org"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    srv.config.moderators = [MOD]
    yield srv
    srv.close()


def dsn(about: str, n: int, diagnostic: str = "") -> bytes:
    said = f"Diagnostic-Code: smtp; {diagnostic}\r\n" if diagnostic else ""
    return (f"From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\r\nTo: pbem@localhost\r\n"
            f"Subject: Undelivered Mail Returned to Sender\r\nMessage-ID: <dsn{n}@mx.example.net>\r\n"
            "MIME-Version: 1.0\r\n"
            'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n'
            f"--B\r\nContent-Type: text/plain\r\n\r\n<{about}>: mailbox unavailable\r\n\r\n"
            "--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n"
            f"\r\nFinal-Recipient: rfc822; {about}\r\nAction: failed\r\nStatus: 5.2.1\r\n{said}"
            "\r\n--B--\r\n").encode()


def start(server: Server) -> tuple[EmailMessage, EmailMessage]:
    return start_game(server, ALICE, BOB)


def test_a_bouncing_player_is_announced_once_and_their_clock_stops(server: Server) -> None:
    alice_board, _bob_mail = start(server)
    running = server.game("ac-1").deadline_at
    assert running is not None and server.game("ac-1").to_move == "black"  # Alice's clock runs
    out = server.submit(dsn(ALICE, 1))
    assert sorted(rcpt for rcpt, _ in out) == [BOB, MOD]  # never the bounce's sender
    to_bob = text_of(to(out, BOB)[0])
    assert "Mail to black (alice@example.org) bounces" in " ".join(to_bob.split())
    assert to(out, BOB)[0]["Subject"].startswith("[pbem ac-1]")
    assert "ac-1 (black, clock stopped)" in " ".join(text_of(to(out, MOD)[0]).split())
    game = server.game("ac-1")
    assert game.deadline_at is None and game.record["clock"]["bounce"] == "black"
    assert "alice@example.org" in status_text(server.store)
    # a second report about the same address tells nobody again
    assert server.submit(dsn(ALICE, 2)) == []
    assert [m.status for m in server.store.iter_inbound()][-2:] == ["ignored", "ignored"]

    # Alice answers her board mail (with her token): mail reaches her, her clock runs on
    server.clock.advance(hours=5)
    move = Player(ALICE, 1).choose_move(alice_board)
    out = server.submit(reply_to(alice_board, ALICE, move))
    assert to(out, ALICE) == [] and "Your move" in headline(to(out, BOB)[0])  # applied
    assert server.store.bouncing_addresses() == []
    assert server.game("ac-1").deadline_at is not None  # Bob's turn now, his clock runs


def test_a_bouncing_players_turn_starts_with_the_clock_stopped(server: Server) -> None:
    alice_board, _ = start(server)
    out = server.submit(dsn(BOB, 1))  # Bob bounces while it is Alice's turn
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, MOD]
    assert server.game("ac-1").deadline_at is not None  # Alice's clock is not touched
    move = Player(ALICE, 1).choose_move(alice_board)
    server.submit(reply_to(alice_board, ALICE, move))
    game = server.game("ac-1")
    assert game.to_move == "white" and game.deadline_at is None  # Bob's turn, clock stopped
    assert game.record["clock"]["bounce"] == "white"


def test_an_invitation_the_invited_address_cannot_receive_is_cancelled(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    invitation = to(out, BOB)[0]
    out = server.submit(dsn(BOB, 1, "550 5.1.1 <bob@example.org>: Recipient address rejected: "
                                    "User unknown in local recipient table"))
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, MOD]  # never the report's sender, nor Bob
    told = to(out, ALICE)[0]
    assert told["Subject"] == invitation["Subject"]  # in the game's thread
    text = " ".join(text_of(told).split())
    assert headline(told) == f"Game ac-1 is cancelled: mail to {BOB} cannot be delivered"
    assert ("Their mail system answered: 550 5.1.1 <bob@example.org>: Recipient address rejected: "
            "User unknown in local recipient table") in text
    assert "new alien-city with ADDRESS" in text and "clock" not in text
    moderator = " ".join(text_of(to(out, MOD)[0]).split())
    assert headline(to(out, MOD)[0]) == f"Mail to {BOB} bounces"
    assert "ac-1 (white, invitation cancelled)" in moderator and "clocks are stopped" not in moderator
    game = server.game("ac-1")
    assert game.status == "cancelled" and game.record["result"]["bounced"] == "white"
    # the invitation is gone: Bob's accept, should one of our mails reach him after all, starts nothing
    out = server.submit(reply_to(invitation, BOB, "accept"))
    assert "ac-1 is cancelled" in headline(to(out, BOB)[0]) and server.game("ac-1").status == "cancelled"
    # an address known to bounce that is invited again: that invitation is cancelled too
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB}"))
    out = server.submit(dsn(BOB, 2))
    assert [headline(m) for m in to(out, ALICE)] == [
        f"Game ac-2 is cancelled: mail to {BOB} cannot be delivered"]
    assert server.game("ac-2").status == "cancelled"


def test_before_the_start_a_bouncing_player_leaves_the_invitation_waiting(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    invitation = to(out, BOB)[0]
    out = server.submit(dsn(ALICE, 1))  # the challenger, who accepted by challenging, bounces
    assert sorted(rcpt for rcpt, _ in out) == [BOB, MOD]
    text = " ".join(text_of(to(out, BOB)[0]).split())
    assert headline(to(out, BOB)[0]) == f"Mail to black ({ALICE}) bounces"
    assert ("Game ac-1 has not started: the invitation waits for every player's answer. Once it "
            "starts, the move clock of black stays stopped until mail reaches them again") in text
    assert "The move clock of black is stopped" not in text
    assert server.game("ac-1").status == "invited"
    out = server.submit(reply_to(invitation, BOB, "accept"))
    game = server.game("ac-1")
    assert game.status == "active" and game.to_move == "black" and game.deadline_at is None
    assert game.record["clock"]["bounce"] == "black"  # her first turn starts stopped


def test_a_report_about_a_stranger_changes_nothing(server: Server) -> None:
    start(server)
    assert server.submit(dsn("carol@example.net", 1)) == []
    assert server.store.bouncing_addresses() == []


def test_admin_status_on_the_command_line(server: Server, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    start(server)
    server.submit(dsn(BOB, 1))
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n'
                      f'database = "{tmp_path / "pbem.sqlite3"}"\n')
    assert main(["admin", "status", "-c", str(config)]) == 0
    out = capsys.readouterr().out
    assert "Outbox: 0 waiting, 6 sent, 0 given up" in out
    assert "Inbound: 0 pending, 2 done, 1 ignored, 0 failed" in out
    assert "Addresses our mail bounces from: 1" in out and "bob@example.org" in out
