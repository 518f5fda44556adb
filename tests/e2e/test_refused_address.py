"""An address the relay refuses at RCPT TO ("550 5.1.1 User unknown", issue 22) is handled like a
bounce: the server's own relay (aiosmtpd) refuses it, and the players read what happened.

Before, the refused mail was logged once and listed as given up; nobody was told and an invitation
to a mistyped address stayed "invited" for ever. Now the challenger learns that the invitation is
cancelled and why; in a running game the opponent hears that the player's mail bounces, and that
player's clock stops when their turn comes.
"""

from __future__ import annotations

import smtplib
import time
from collections.abc import Callable
from email.message import EmailMessage

import pytest

from pbem.cli.admin import status_text
from pbem.cli.mailbox import new_mail, reply_to
from tests.e2e.conftest import relay
from tests.server.players import Player, headline, text_of
from tests.services.requirements import free_port

ALICE, BOB, SERVER = "alice@example.org", "bob@example.org", "pbem@localhost"
UNKNOWN = "550 5.1.1 <{address}>: Recipient address rejected: User unknown in local recipient table"


@pytest.fixture
def server(smtp_sink, daemon_for) -> Callable[[EmailMessage], None]:
    """A running server (SMTP listener in, the sink as its relay); returns how players submit."""
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink)})

    def submit(message: EmailMessage) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.send_message(message)

    submit.store = daemon.store  # type: ignore[attr-defined]
    return submit


def mails_to(sink, address: str, count: int, timeout: float = 30) -> list[EmailMessage]:
    """The first ``count`` mails ``address`` received, as its mail client shows them."""
    deadline = time.monotonic() + timeout
    while True:
        got = [m.message for m in sink.messages if m.rcpt_tos == [address]]
        if len(got) >= count or time.monotonic() > deadline:
            assert len(got) >= count, f"{address} got {[headline(m) for m in got]}"
            return got
        time.sleep(0.05)


def test_an_invitation_to_an_address_the_relay_refuses_is_cancelled(smtp_sink, server) -> None:
    smtp_sink.reject_rcpt[BOB] = UNKNOWN.format(address=BOB)
    challenge = new_mail(f"Alice <{ALICE}>", SERVER, f"new alien-city with {BOB} as black")
    server(challenge)
    created, cancelled = mails_to(smtp_sink, ALICE, 2)
    assert headline(created).startswith("Game ac-1 created: waiting for")
    assert headline(cancelled) == f"Game ac-1 is cancelled: mail to {BOB} cannot be delivered"
    assert cancelled["Subject"] == created["Subject"]
    text = " ".join(text_of(cancelled).split())
    assert f"Their mail system answered: {UNKNOWN.format(address=BOB)}" in text
    assert "new alien-city with ADDRESS" in text
    store = server.store
    assert store.get_game("ac-1").status == "cancelled"
    time.sleep(0.5)  # nothing more comes: the report itself is never answered
    assert [m.rcpt_tos for m in smtp_sink.messages] == [[ALICE], [ALICE]]
    status = status_text(store)
    assert "1 given up" in status and f"{BOB}  <" in status and "User unknown" in status
    assert "Addresses our mail bounces from: 1" in status and "delivery report: 550 5.1.1" in status
    assert [m.status for m in store.iter_inbound()] == ["done", "ignored"]


def test_a_player_refused_during_a_game_is_reported_like_a_bounce(smtp_sink, server) -> None:
    server(new_mail(ALICE, SERVER, f"new alien-city with {BOB} as black"))
    invitation = mails_to(smtp_sink, BOB, 1)[0]
    server(reply_to(invitation, BOB, "accept"))
    alice_turn = next(m for m in mails_to(smtp_sink, ALICE, 2) if "Your move" in headline(m))
    smtp_sink.reject_rcpt[BOB] = UNKNOWN.format(address=BOB)  # his mailbox goes away
    server(reply_to(alice_turn, ALICE, Player(ALICE, 1).choose_move(alice_turn)))
    told = mails_to(smtp_sink, ALICE, 3)[2]
    assert headline(told) == f"Mail to white ({BOB}) bounces"
    text = " ".join(text_of(told).split())
    assert "The move clock of white is stopped until mail reaches them again" in text
    deadline = time.monotonic() + 10
    while server.store.get_game("ac-1").record.get("clock", {}).get("bounce") != "white":
        assert time.monotonic() < deadline, "Bob's clock was not stopped"
        time.sleep(0.05)
    game = server.store.get_game("ac-1")
    assert game.status == "active" and game.to_move == "white" and game.deadline_at is None
