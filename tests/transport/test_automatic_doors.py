"""Bounces, vacation replies, read receipts and complaints get no answer, through every door (the
SMTP listener, ``pbem deliver``, the IMAP watcher), with a null envelope sender and without one:
with ``<>`` the envelope alone says "bounce"; without it the headers must."""

from __future__ import annotations

import io
import smtplib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.config import ImapConfig
from pbem.doors.deliver import EX_OK, deliver
from pbem.doors.imap_watcher import ImapWatcher
from pbem.doors.smtp_listener import SmtpListener
from pbem.store import open_store
from tests.server.harness import Server, start_game
from tests.services.dovecot import Dovecot
from tests.transport import wait_until
from tests.transport.automatic_fixtures import FIXTURES, render

ALICE, BOB = "alice@example.org", "bob@example.org"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path)
    yield srv
    srv.close()


def seat_address(server: Server) -> str:
    """Bob's reply address in a running game: what a bounce of a mail to Bob would be sent to."""
    board, _ = start_game(server, ALICE, BOB)
    address = str(board["Reply-To"]).rpartition("<")[2].rstrip(">")
    assert "+" in address
    return address


def check_nothing_answered(server: Server, expected: int) -> None:
    server.processor.process_pending(10_000)
    stored = list(server.store.iter_inbound())[2:]  # after the game's setup
    assert len(stored) == expected
    assert [m.status for m in stored] == ["ignored"] * expected, [(m.status, m.outcome) for m in stored]
    sent = server.take_outbox()
    assert sent == [], [(rcpt, m["Subject"], str(m.get_body().get_content())[:300]) for rcpt, m in sent]


def test_through_the_smtp_listener(server: Server) -> None:
    to_seat = seat_address(server)
    listener = SmtpListener(server.config, server.store, port=0)
    listener.start()
    try:
        with smtplib.SMTP(listener.host, listener.port, timeout=10) as smtp:
            for n, template in enumerate(FIXTURES.values()):
                smtp.sendmail("<>", [to_seat], render(template, to_seat, n))
                smtp.sendmail("bob@example.org", [to_seat], render(template, to_seat, 100 + n))
    finally:
        listener.stop()
    envelopes = [m.envelope_from for m in list(server.store.iter_inbound())[2:]]
    assert envelopes == ["", "bob@example.org"] * len(FIXTURES)
    check_nothing_answered(server, 2 * len(FIXTURES))


def test_through_deliver(server: Server, tmp_path: Path) -> None:
    to_seat = seat_address(server)
    for n, template in enumerate(FIXTURES.values()):
        for envelope, number in (("", n), (None, 100 + n), ("MAILER-DAEMON", 200 + n)):
            raw = render(template, to_seat, number, crlf=False)
            code = deliver(server.config, raw, lambda: open_store(tmp_path / "pbem.sqlite3"),
                           envelope_from=envelope, stderr=io.StringIO())
            assert code == EX_OK
    check_nothing_answered(server, 3 * len(FIXTURES))


def test_through_imap(server: Server, dovecot: Dovecot, imap_user) -> None:
    user, password = imap_user
    to_seat = seat_address(server)
    for n, template in enumerate(FIXTURES.values()):
        dovecot.deliver(user, b"Return-Path: <>\n" + render(template, to_seat, n, crlf=False))
        dovecot.deliver(user, render(template, to_seat, 100 + n, crlf=False))
    stop = threading.Event()
    watcher = ImapWatcher(ImapConfig(host=dovecot.host, port=dovecot.port, security="none",
                                     username=user, password=password), server.store, stop=stop)
    watcher.start()
    try:
        wait_until(lambda: watcher.stored == 2 * len(FIXTURES), 15, "every message stored")
    finally:
        stop.set()
        watcher.join(5)
    envelopes = sorted("-" if m.envelope_from is None else m.envelope_from
                       for m in list(server.store.iter_inbound())[2:])
    assert envelopes == [""] * len(FIXTURES) + ["-"] * len(FIXTURES)  # Return-Path kept or absent
    check_nothing_answered(server, 2 * len(FIXTURES))
