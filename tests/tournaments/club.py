"""A club that runs tournaments by mail, for the tests: the real store (SQLite or PostgreSQL), the
real processor and scheduler, a clock the test moves, and players who only ever write mail: they
read what they get, answer their tournament mails, move or resign in their games."""

from __future__ import annotations

import email.policy
import random
import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from pbem.cli.mailbox import new_mail, reply_to
from pbem.clock import ManualClock
from pbem.community.moderation import moderator_token
from pbem.community.scheduler import Scheduler
from pbem.config import config_from_dict
from pbem.processing.processor import Processor
from pbem.store import open_store
from pbem.store.secret import server_secret
from tests.server.mailcheck import MailCheck
from tests.server.players import example_move, headline, parse, text_of

MODERATOR = "mod@example.org"
_RESIGN = re.compile(r"resign ([a-z]+-\d+) confirm ([A-Z]{4})\b")


class Club:
    def __init__(self, tmp_path: Path, target: str | None = None, deadlines: dict | None = None,
                 **tournaments: object):
        self.config = config_from_dict({"server": {"data_dir": str(tmp_path / "data")},
                                        "moderators": {"addresses": [MODERATOR]},
                                        "deadlines": deadlines or {}, "tournaments": tournaments})
        self.store = open_store(target or tmp_path / "pbem.sqlite3")
        self.clock = ManualClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
        secret = server_secret(self.store)  # the store's own, as ``pbem process`` reads it
        self.processor = Processor(self.config, self.store, self.clock, secret=secret)
        self.scheduler = Scheduler(self.config, self.store, self.clock, secret=secret)
        self.inbox: dict[str, list[EmailMessage]] = {}
        self.check = MailCheck()
        self.token = moderator_token(secret, MODERATOR)

    def close(self) -> None:
        self.store.close()

    # --- mail ---------------------------------------------------------------------------------------
    def _take(self) -> list[tuple[str, EmailMessage]]:
        out = []
        for row in self.store.due_outbound(self.clock.now() + timedelta(days=3650)):
            self.store.mark_sent(row.id, self.clock.now())
            message = parse(row.raw)
            rcpt = row.recipients[0]
            self.check.read(rcpt, message, row.raw)
            self.inbox.setdefault(rcpt, []).append(message)
            out.append((rcpt, message))
        return out

    def submit(self, sender: str, message: EmailMessage) -> list[tuple[str, EmailMessage]]:
        self.check.sent(sender, message)
        raw = message.as_bytes(policy=email.policy.SMTP)
        self.store.accept_inbound(raw, "test", self.clock.now())
        self.processor.process_pending()
        return self._take()

    def send(self, sender: str, body: str) -> EmailMessage:
        """A new mail; returns the answer to the sender."""
        out = self.submit(sender, new_mail(sender, self.config.address, body))
        return next(m for rcpt, m in out if rcpt == sender)

    def reply(self, sender: str, message: EmailMessage, body: str) -> list[tuple[str, EmailMessage]]:
        return self.submit(sender, reply_to(message, sender, body))

    def moderate(self, body: str) -> EmailMessage:
        return self.send(MODERATOR, f"{body}\ntoken {self.token}")

    def tick(self, **delta: float) -> list[tuple[str, EmailMessage]]:
        self.clock.advance(**delta)
        self.scheduler.run_once()
        return self._take()

    def last(self, address: str, contains: str = "") -> EmailMessage:
        return [m for m in self.inbox.get(address,
                                          []) if contains in text_of(m) or contains in headline(m)][-1]

    def enter(self, address: str, tournament: str) -> EmailMessage:
        """Enter as a newcomer does: ``enter t-1`` asks to confirm; the reply confirms."""
        answer = self.send(address, f"enter {tournament}")
        assert headline(answer).endswith(f": enter {tournament}"), headline(answer)
        out = self.reply(address, answer, f"enter {tournament}")
        return next(m for rcpt, m in out if rcpt == address)

    # --- playing ------------------------------------------------------------------------------------
    def play(self, rng: random.Random, moves: int = 2, rounds: int = 60) -> None:
        """Every game in play goes on: the player to move plays a legal move (up to ``moves`` each
        game) or resigns; the scheduler runs after each pass. Until no game is left in play."""
        for _ in range(rounds):
            active = self.store.list_games("active")
            if not active:
                return
            for row in active:
                row = self.store.get_game(row.id)
                if row.status != "active":
                    continue
                seat = next(s for s in row.seats if s.seat == row.to_move)
                mail = self.game_mail(seat.email, row.id)
                plies = sum(1 for e in row.record["moves"] if "move" in e)
                if plies < moves and mail["X-Pbem-Game"] == row.id and "for example:" in text_of(mail) \
                        and rng.random() < 0.7:
                    self.reply(seat.email, mail, example_move(mail))
                else:
                    self.resign(seat.email, row.id, mail)
            self.tick(minutes=1)
        raise AssertionError("games still in play")

    def game_mail(self, address: str, game_id: str) -> EmailMessage:
        mails = self.inbox.get(address, [])
        own = [m for m in mails if m["X-Pbem-Game"] == game_id]
        if own:
            return own[-1]
        return [m for m in mails if game_id in text_of(m)][-1]

    def resign(self, address: str, game_id: str, mail: EmailMessage) -> None:
        out = self.reply(address, mail, f"resign {game_id}")
        answer = [m for rcpt, m in out if rcpt == address][-1]
        code = _RESIGN.search(text_of(answer))
        assert code, text_of(answer)
        self.reply(address, answer, f"resign {game_id} confirm {code.group(2)}")
