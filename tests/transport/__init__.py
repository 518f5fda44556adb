"""Shared helpers for the transport tests: messages, configurations and a tiny processor.

The processor here is deliberately game-agnostic and trivial (mark done, queue one reply), but it
uses the real store transaction exactly like the real processor does, so the tests exercise the
real hand-offs between intake, processing, moving and sending.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pbem.clock import Clock, SystemClock
from pbem.config import Config, ImapConfig, RelayConfig
from pbem.store.base import Store

SERVER = "pbem@example.org"
PLAYER = "player@example.net"

_counter = itertools.count(1)


def make_message(subject: str = "orders", *, to: str = SERVER, sender: str = PLAYER,
                 message_id: str | None = None, body: str = "move e2 e4\r\n",
                 size: int | None = None) -> bytes:
    """A small RFC 5322 message with CRLF line ends and a unique Message-ID."""
    n = next(_counter)
    message_id = message_id or f"<t{n}.{time.time_ns()}@example.net>"
    if size is not None:
        line = "x" * 76 + "\r\n"
        body = line * (size // len(line) + 1)
    return (f"From: Player <{sender}>\r\nTo: {to}\r\nSubject: {subject}\r\n"
            f"Date: Mon, 06 Jan 2025 10:00:00 +0000\r\nMessage-ID: {message_id}\r\n"
            f"\r\n{body}").encode()


def make_config(tmp_path: Path, *, smtp_port: int = 0, imap: ImapConfig | None = None,
                relay: RelayConfig | None = None, max_message_bytes: int = 100_000) -> Config:
    return Config(address=SERVER, data_dir=tmp_path, max_message_bytes=max_message_bytes,
                  smtp_enabled=True, smtp_host="127.0.0.1", smtp_port=smtp_port,
                  imap=imap or ImapConfig(), relay=relay or RelayConfig())


def imap_config(host: str, port: int, user: str, password: str, *, idle: bool = True,
                poll_seconds: float = 0.3) -> ImapConfig:
    return ImapConfig(host=host, port=port, security="none", username=user, password=password,
                      mailbox="INBOX", processed_folder="processed", poll_seconds=poll_seconds,
                      idle=idle, idle_renew_seconds=30.0, max_backoff_seconds=1.0)


def wait_until(predicate: Callable[[], object], timeout: float = 10.0,
               what: str = "condition") -> float:
    """Poll ``predicate`` until true; return the seconds it took. (Tests may poll; the server
    may not.)"""
    started = time.monotonic()
    deadline = started + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.005)
    return time.monotonic() - started


class EchoProcessor:
    """Marks each pending message done and queues one reply to its sender, in one transaction.

    ``processed`` lists the inbound ids handled, in order, so tests can assert that nothing was
    processed twice. ``on_processed`` is called after each committed batch.
    """

    def __init__(self, store: Store, clock: Clock | None = None, *, sender: str = SERVER,
                 on_processed: Callable[[], None] | None = None) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self.sender = sender
        self.on_processed = on_processed
        self.processed: list[int] = []
        self.lock = threading.Lock()

    def reply_id(self, inbound_id: int) -> str:
        return f"<reply-{inbound_id}@example.org>"

    def process_pending(self, limit: int = 100) -> int:
        with self.lock:
            count = 0
            for inbound in self.store.pending_inbound(limit):
                msg = email.message_from_bytes(inbound.raw, policy=email.policy.default)
                to = email.utils.parseaddr(str(msg.get("From", "")))[1] or PLAYER
                reply = (f"From: {self.sender}\r\nTo: {to}\r\nSubject: Re: {msg.get('Subject')}"
                         f"\r\nMessage-ID: {self.reply_id(inbound.id)}\r\n"
                         f"In-Reply-To: {msg.get('Message-ID')}\r\n\r\nok\r\n").encode()
                now = self.clock.now()
                with self.store.transaction() as tx:
                    tx.mark_inbound(inbound.id, "done", "echo", now=now)
                    tx.queue_outbound(message_id=self.reply_id(inbound.id), sender=self.sender,
                                      recipients=[to], raw=reply, now=now)
                self.processed.append(inbound.id)
                count += 1
        if count and self.on_processed is not None:
            self.on_processed()
        return count


def inbound_rows(store: Store) -> list[tuple[int, str, str]]:
    """(id, source, status) of every stored inbound message."""
    return [(m.id, m.source, m.status) for m in store.iter_inbound()]
