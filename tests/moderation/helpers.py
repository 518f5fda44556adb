"""The in-process server with moderators configured, and drivers for the games the tests play."""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import parseaddr
from pathlib import Path

from pbem.cli.mailbox import reply_to
from pbem.community.moderation import moderator_token
from pbem.config import config_from_dict
from pbem.processing.games import reply_key
from pbem.processing.processor import Processor
from pbem.tokens import token_hash
from tests.server.harness import Server, headline, to
from tests.server.players import Player

ALICE, BOB, CAROL, DAVE = "alice@example.org", "bob@example.org", "carol@example.org", "dave@example.org"
MOD, MALLORY = "mod@example.org", "mallory@example.net"
SECRET = b"s" * 32

Outbox = list[tuple[str, EmailMessage]]
MOVE_NUMBER = re.compile(r" \(move (\d+)\)$")


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


def seat_token_in(server: Server, message: EmailMessage) -> tuple[str, str] | None:
    """The (game, seat) whose token the mail's Reply-To carries, or None (no token, or a token that
    only proves the recipient's address)."""
    reply_to_address = parseaddr(str(message.get("Reply-To", "")))[1]
    local = reply_to_address.split("@")[0]
    if "+" not in local:
        return None
    with server.store.transaction() as tx:
        found = tx.seat_by_token_hash(token_hash(reply_key(local.split("+", 1)[1])[0]))
    return (found[0], found[1].seat) if found else None


def start(server: Server, game: str = "alien-city", first: str = ALICE, second: str = BOB,
          extra: str = "") -> Outbox:
    """``first`` challenges ``second``, who accepts; returns the mails the acceptance caused."""
    command = f"new {game} {extra} with {second}" + (" as black" if game == "alien-city" else "")
    out = server.submit(server.mail(first, " ".join(command.split())))
    invitation = to(out, second)[0]
    return server.submit(reply_to(invitation, second, "accept"))


def is_your_move(message: EmailMessage) -> bool:
    """The mail opens with "Your move (move N)" or "...: your move (move N)" for its reader."""
    return "your move" in headline(message).lower()


def latest_your_move(mails: dict[str, EmailMessage]) -> tuple[str, EmailMessage] | None:
    found = [(address, message) for address, message in mails.items() if is_your_move(message)]
    assert len(found) <= 1, {a: headline(m) for a, m in found}  # one seat is to move
    return found[0] if found else None


def canonical(move_line: str) -> str:
    """The move a one-tap line plays, as the record writes it (a link may carry ``(move N)``)."""
    return MOVE_NUMBER.sub("", move_line)


class Table:
    """Players who answer their newest "your move" mail with a random legal move."""

    def __init__(self, server: Server, addresses: tuple[str, ...] = (ALICE, BOB), seed: int = 1):
        self.server = server
        self.players = {a: Player(a, seed + i) for i, a in enumerate(addresses)}
        self.newest: dict[str, EmailMessage] = {}
        self.answered: set[str] = set()  # Message-IDs of "your move" mails already answered
        self.everything: Outbox = []

    def take(self, out: Outbox) -> Outbox:
        self.everything += out
        for address, message in out:
            if address in self.players:
                self.newest[address] = message
        return out

    def to_move(self) -> tuple[str, EmailMessage]:
        found = latest_your_move({a: m for a, m in self.newest.items()
                                  if str(m["Message-ID"]) not in self.answered})
        assert found is not None, {a: headline(m) for a, m in self.newest.items()}
        return found

    def play(self, moves: int) -> list[str]:
        """Each move is applied (the record grows by it) and answered as the default notification
        level wants: the mover gets nothing unless the game ends or it is their move again; the seat
        to move next gets "Your move (move N+1). X played MOVE."
        """
        played = []
        for _ in range(moves):
            address, message = self.to_move()
            line = self.players[address].choose_move(message)
            game_id = str(message["X-Pbem-Game"])
            number = 1 + sum(1 for e in self.server.game(game_id).record["moves"] if "move" in e)
            self.answered.add(str(message["Message-ID"]))  # the mover's next turn comes in a new mail
            out = self.take(self.server.submit(reply_to(message, address, line)))
            move = canonical(line)
            entries = [e for e in self.server.game(game_id).record["moves"] if "move" in e]
            assert len(entries) == number and entries[-1]["move"] == move, (line, headline(message))
            mine = [headline(m) for m in to(out, address)]
            assert all(h.startswith(("Game over", f"Applied: {move} (move {number}). Your move again"))
                       for h in mine), mine  # no confirmation by default, and no refusal
            announced = [headline(m) for _, m in out]
            assert any((h.startswith(f"Your move (move {number + 1}). ") and h.endswith(f" played {move}."))
                       or h.startswith(f"Applied: {move} (move {number}). Your move again")
                       or h.startswith("Game over") for h in announced), announced
            played.append(move)
        return played
