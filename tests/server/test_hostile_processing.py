"""Hostile or odd mail in the processor: header injection through what a reply copies, strangers'
junk (never answered: that would be backscatter to a forged sender), a mail with thousands of
command lines, and the per-message reading time in the log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.server.harness import Server, text_of, to

ALICE = "alice@example.org"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


@pytest.mark.parametrize("subject", [
    "=?utf-8?q?games=0D=0ABcc:_victim@example.net?=",
    "=?utf-8?b?Z2FtZXMLQmNjOiB2aWN0aW1AZXhhbXBsZS5uZXQ=?=",  # \v: a line end to str.splitlines
    "=?utf-8?q?games=E2=80=A8Bcc:_victim@example.net?=",  # U+2028 LINE SEPARATOR
    "=?utf-8?q?games=1CBcc:_victim@example.net?=",
])
def test_nothing_injected_through_the_subject(server: Server, subject: str) -> None:
    raw = (f"From: {ALICE}\r\nTo: pbem@localhost\r\nSubject: {subject}\r\n"
           "Message-ID: <inj@example.org>\r\n\r\nhelp\r\n").encode()
    out = server.submit(raw)
    assert [rcpt for rcpt, _ in out] == [ALICE]
    (sent,) = server.raw_sent
    head = sent.partition(b"\r\n\r\n")[0]
    assert not any(line.lower().startswith(b"bcc:") for line in head.split(b"\r\n"))
    names = [line.split(b":")[0].lower() for line in head.split(b"\r\n") if line[:1] not in (b" ", b"\t")]
    assert b"bcc" not in names and names.count(b"subject") == 1 and names.count(b"to") == 1
    assert [m.status for m in server.store.iter_inbound()] == ["done"]


def test_from_with_line_breaks_is_no_address(server: Server) -> None:
    raw = (b"From: =?utf-8?q?alice@example.org=0D=0ABcc:_victim@example.net?=\r\nTo: pbem@localhost\r\n"
           b"Subject: help\r\nMessage-ID: <inj2@example.org>\r\n\r\nhelp\r\n")
    assert server.submit(raw) == []


def test_strangers_junk_is_not_answered_but_a_command_is(server: Server) -> None:
    assert server.submit(server.mail("spam@example.net", "Hello, cheap watches!", "Great offer")) == []
    assert server.submit(server.mail("spam@example.net", "")) == []
    assert server.submit(server.mail("spam@example.net", "gmaes")) == []  # typos: only for players
    stored = list(server.store.iter_inbound())
    assert [m.status for m in stored] == ["ignored"] * 3 and "plays no game" in (stored[0].outcome or "")
    # A header line broken by junk and read as the body's first line starts with "Message": no
    # command for an address without a game (as none of move, message, resign, rematch is).
    assert server.submit(server.mail("spam@example.net", "Message\t\t\t-ID: <x@example.net>")) == []
    assert server.submit(server.mail("spam@example.net", "resign ac-1\nmove tower red C4")) == []
    out = server.submit(server.mail("newbie@example.net", "help"))
    assert len(to(out, "newbie@example.net")) == 1
    out = server.submit(server.mail("newbie@example.net", "games please\nfoo"))
    text = " ".join(text_of(to(out, "newbie@example.net")[0]).split())
    assert "games takes" in text or "unknown command" in text  # a command word: answered in full


def test_a_player_still_hears_what_was_not_understood(server: Server) -> None:
    server.submit(server.mail(ALICE, "new alien-city with bob@example.org"))
    out = server.submit(server.mail(ALICE, "Hello there"))  # a greeting, and nothing else
    assert text_of(to(out, ALICE)[0]).startswith("I found no command in your mail")
    out = server.submit(server.mail(ALICE, "Frobnicate"))
    assert "unknown command 'Frobnicate'" in text_of(to(out, ALICE)[0])
    out = server.submit(server.mail(ALICE, "gmaes"))
    assert "Did you mean games" in " ".join(text_of(to(out, ALICE)[0]).split())


def test_thousands_of_commands_are_cut_with_a_note(server: Server) -> None:
    out = server.submit(server.mail(ALICE, "games\n" * 3000))
    text = " ".join(text_of(to(out, ALICE)[0]).split())
    assert "Your mail has 3000 command lines; the first 50 were read, the other 2950 were not." in text
    assert text.count("You have no games") == 50


def test_the_log_line_says_how_long_reading_took(server: Server,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pbem.processor")
    server.submit(server.mail(ALICE, "help"))
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("message id=")]
    assert " read_ms=" in line and " ms=" in line
