"""An in-process server for tests: the real SQLite store, the real reader and processor, a clock the
test moves. Outbound rows are taken from the store as the sender would take them."""

from __future__ import annotations

import email.policy
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from pbem.cli.mailbox import new_mail, reply_to
from pbem.clock import ManualClock
from pbem.config import config_from_dict
from pbem.processing.processor import Processor
from pbem.store import open_store
from tests.server.players import headline, html_of, parse, text_of

__all__ = ["Server", "headline", "html_of", "text_of", "to"]


class Server:
    def __init__(self, tmp_path: Path, **server_settings: object):
        settings = {"data_dir": str(tmp_path / "data"), **server_settings}
        self.config = config_from_dict({"server": settings})
        self.store = open_store(tmp_path / "pbem.sqlite3")
        self.clock = ManualClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
        self.processor = Processor(self.config, self.store, self.clock, secret=b"s" * 32)
        self.raw_sent: list[bytes] = []  # every outbound mail exactly as it would go on the wire
        self.sent: list[tuple[str, bytes]] = []  # (recipient, raw) in the order they were sent

    def submit(self, message: EmailMessage | bytes) -> list[tuple[str, EmailMessage]]:
        """Store a mail, process it, and return the mails it caused as (recipient, message)."""
        raw = message if isinstance(message, bytes) else message.as_bytes(policy=email.policy.SMTP)
        self.store.accept_inbound(raw, "test", self.clock.now())
        self.processor.process_pending()
        return self.take_outbox()

    def take_outbox(self) -> list[tuple[str, EmailMessage]]:
        rows = self.store.due_outbound(self.clock.now() + timedelta(days=3650))
        out = []
        for row in rows:
            self.store.mark_sent(row.id, self.clock.now())
            self.raw_sent.append(row.raw)
            self.sent.append((row.recipients[0], row.raw))
            out.append((row.recipients[0], parse(row.raw)))
        return out

    def mail(self, sender: str, body: str, subject: str = "") -> EmailMessage:
        return new_mail(sender, self.config.address, body, subject)

    def game(self, game_id: str):
        return self.store.get_game(game_id)

    def close(self) -> None:
        self.store.close()


def start_game(server: Server, alice: str, bob: str) -> tuple[EmailMessage, EmailMessage]:
    """``alice`` challenges ``bob`` to Alien City (she plays black, who moves first) and he
    accepts: (her "your move" mail, his last mail)."""
    out = server.submit(server.mail(alice, f"new alien-city with {bob} as black"))
    out = server.submit(reply_to(to(out, bob)[0], bob, "accept"))
    return to(out, alice)[0], to(out, bob)[0]


def to(outbox: list[tuple[str, EmailMessage]], address: str) -> list[EmailMessage]:
    return [m for rcpt, m in outbox if rcpt == address]


