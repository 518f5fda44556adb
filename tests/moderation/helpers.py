"""The in-process server with moderators configured, and drivers for the games the tests play."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

from pbem.cli.mailbox import reply_to
from pbem.community.moderation import moderator_token
from pbem.config import config_from_dict
from pbem.processing.processor import Processor
from tests.server.harness import Server, to
from tests.server.players import Player

ALICE, BOB, CAROL, DAVE = "alice@example.org", "bob@example.org", "carol@example.org", "dave@example.org"
MOD, MALLORY = "mod@example.org", "mallory@example.net"
SECRET = b"s" * 32

Outbox = list[tuple[str, EmailMessage]]


class ModServer(Server):
    """The harness with ``[moderators] addresses`` set (the harness itself takes server settings only)."""

    def __init__(self, tmp_path: Path, moderators: tuple[str, ...] = (MOD,)):
        super().__init__(tmp_path)
        self.config = config_from_dict({"server": {"data_dir": str(tmp_path / "data")},
                                        "moderators": {"addresses": list(moderators)}})
        self.processor = Processor(self.config, self.store, self.clock, secret=SECRET)

    def admin(self, line: str, sender: str = MOD, token: str | None = None) -> Outbox:
        """A moderator's mail: the command plus the moderator's token line."""
        token = moderator_token(SECRET, sender) if token is None else token
        return self.submit(self.mail(sender, f"{line}\ntoken {token}" if token else line))


def start(server: Server, game: str = "alien-city", first: str = ALICE, second: str = BOB,
          extra: str = "") -> Outbox:
    """``first`` challenges ``second``, who accepts; returns the mails the acceptance caused."""
    command = f"new {game} {extra} with {second}" + (" as black" if game == "alien-city" else "")
    out = server.submit(server.mail(first, " ".join(command.split())))
    invitation = to(out, second)[0]
    return server.submit(reply_to(invitation, second, "accept"))


def latest_your_move(mails: dict[str, EmailMessage]) -> tuple[str, EmailMessage] | None:
    for address, message in mails.items():
        if "Your move" in str(message["Subject"]):
            return address, message
    return None


class Table:
    """Players who answer their newest "Your move" mail with a random legal move."""

    def __init__(self, server: Server, addresses: tuple[str, ...] = (ALICE, BOB), seed: int = 1):
        self.server = server
        self.players = {a: Player(a, seed + i) for i, a in enumerate(addresses)}
        self.newest: dict[str, EmailMessage] = {}
        self.everything: Outbox = []

    def take(self, out: Outbox) -> Outbox:
        self.everything += out
        for address, message in out:
            if address in self.players:
                self.newest[address] = message
        return out

    def to_move(self) -> tuple[str, EmailMessage]:
        found = latest_your_move(self.newest)
        assert found is not None, {a: str(m["Subject"]) for a, m in self.newest.items()}
        return found

    def play(self, moves: int) -> list[str]:
        played = []
        for _ in range(moves):
            address, message = self.to_move()
            move = self.players[address].choose_move(message)
            out = self.take(self.server.submit(reply_to(message, address, move)))
            assert any("Move applied" in str(m["Subject"]) or "Your move" in str(m["Subject"])
                       or "Game over" in str(m["Subject"]) for m in to(out, address)), move
            played.append(move)
        return played
