"""Fixtures of the classic-commands tests: the in-process server, and two players in a game."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, text_of, to
from tests.server.mailcheck import MailCheck

ANN, BO, CY, DEE = "ann@example.org", "bo@example.org", "cy@example.org", "dee@example.net"


class Table:
    """The server plus what each person has read: every mail goes through ``MailCheck`` (78
    columns, one subject per game, threads, "your move" only to the seat to move)."""

    def __init__(self, server: Server):
        self.server = server
        self.check = MailCheck()
        self.latest: dict[str, EmailMessage] = {}

    def send(self, message: EmailMessage) -> list[tuple[str, EmailMessage]]:
        sender = message["From"].addresses[0].addr_spec
        self.check.sent(sender, message)
        out = self.server.submit(message)
        for rcpt, mail in out:
            if self._answer_to_the_mover(rcpt, mail):
                self._light_check(rcpt, mail)
            else:
                self.check.read(rcpt, mail)
            self.latest[rcpt] = mail
        return out

    def _answer_to_the_mover(self, rcpt: str, mail: EmailMessage) -> bool:
        """A refusal ("Not done: ...", "Not applied: ...") answers the player whose command it
        was, with the board and the legal moves when it is their move although its first line
        says what was wrong: MailCheck's "your move" rules do not fit it."""
        return headline(mail).startswith(("Not done", "Not applied", "Not possible", "Not understood"))

    def _light_check(self, rcpt: str, mail: EmailMessage) -> None:
        """MailCheck's checks of width, subject and thread, without the "your move" rules."""
        assert all(len(line) <= 78 for line in text_of(mail).split("\n")), headline(mail)
        game = mail["X-Pbem-Game"]
        if game:
            assert self.check.subject.setdefault(str(game), str(mail["Subject"])) == str(mail["Subject"])
            if self.check.known[rcpt]:
                assert str(mail["In-Reply-To"]) in self.check.known[rcpt]
        self.check.known[rcpt].add(str(mail["Message-ID"]))

    def mail(self, sender: str, body: str, subject: str = "") -> list[tuple[str, EmailMessage]]:
        return self.send(self.server.mail(sender, body, subject))

    def reply(self, sender: str, body: str, to_mail: EmailMessage | None = None
              ) -> list[tuple[str, EmailMessage]]:
        return self.send(reply_to(to_mail or self.latest[sender], sender, body))

    def start(self, game: str = "alien-city", first: str = "as black") -> str:
        """Ann challenges Bo (Ann moves first in Alien City); returns the game id."""
        out = self.mail(ANN, f"new {game} with {BO} {first}".strip())
        game_id = str(to(out, ANN)[0]["X-Pbem-Game"])
        self.reply(BO, "accept", to(out, BO)[0])
        return game_id

    def game(self, game_id: str):
        return self.server.game(game_id)


def flat(message: EmailMessage) -> str:
    """The text part with its lines joined, for phrases the 72-column wrapping may break."""
    return " ".join(text_of(message).split())


def only(out: list[tuple[str, EmailMessage]], address: str) -> EmailMessage:
    mails = to(out, address)
    assert len(mails) == 1, [headline(m) for m in mails]
    return mails[0]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path)
    yield srv
    srv.close()


@pytest.fixture
def table(server: Server) -> Table:
    return Table(server)
