"""The embedded SMTP listener against real SMTP clients (smtplib) and a real SQLite store."""

from __future__ import annotations

import smtplib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.doors.smtp_listener import SmtpListener, is_server_address
from pbem.store.sqlite import SQLiteStore
from tests.transport import PLAYER, SERVER, inbound_rows, make_config, make_message


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "pbem.sqlite3")
    yield s
    s.close()


@pytest.fixture
def wakes() -> list[int]:
    return []


@pytest.fixture
def listener(tmp_path: Path, store: SQLiteStore, wakes: list[int]) -> Iterator[SmtpListener]:
    config = make_config(tmp_path, max_message_bytes=20_000)
    smtp = SmtpListener(config, store, wake=lambda: wakes.append(1))
    smtp.start()
    yield smtp
    smtp.stop()


def _client(listener: SmtpListener) -> smtplib.SMTP:
    return smtplib.SMTP(listener.host, listener.port, timeout=10)


def _send_data(listener: SmtpListener, raw: bytes, rcpt: str = SERVER) -> tuple[int, bytes]:
    """One transaction; returns the reply to the final dot."""
    with _client(listener) as client:
        client.ehlo()
        assert client.mail(PLAYER)[0] == 250
        code, _ = client.rcpt(rcpt)
        assert code == 250
        return client.data(raw)


def test_is_server_address() -> None:
    assert is_server_address(SERVER, "pbem@example.org")
    assert is_server_address(SERVER, "PBEM@Example.ORG")
    assert is_server_address(SERVER, "pbem+Tok3n_x@example.org")
    assert is_server_address(SERVER, "PbEm+tok@EXAMPLE.org")
    assert not is_server_address(SERVER, "pbem+@example.org")
    assert not is_server_address(SERVER, "pbemx@example.org")
    assert not is_server_address(SERVER, "other+pbem@example.org")
    assert not is_server_address(SERVER, "pbem@example.org.evil")
    assert not is_server_address(SERVER, "pbem")


def test_message_is_stored_before_250(listener: SmtpListener, store: SQLiteStore,
                                      wakes: list[int]) -> None:
    raw = make_message("first")
    code, text = _send_data(listener, raw)
    assert code == 250
    # The reply arrived, so the row must already be there: nothing to wait for.
    (inbound,) = list(store.iter_inbound())
    assert text.decode() == f"2.0.0 queued as {inbound.id}"
    assert inbound.raw == raw  # byte-exact
    assert inbound.source == "smtp" and inbound.status == "pending"
    assert wakes == [1]


def test_plus_address_and_mixed_case_accepted(listener: SmtpListener,
                                              store: SQLiteStore) -> None:
    with _client(listener) as client:
        refused = client.sendmail(PLAYER, ["pbem+s3cretTOKEN@example.org"], make_message("a"))
        assert refused == {}
        client.sendmail(PLAYER, ["PBEM@EXAMPLE.ORG"], make_message("b"))
    assert len(inbound_rows(store)) == 2


def test_unknown_recipient_gets_550(listener: SmtpListener, store: SQLiteStore) -> None:
    with _client(listener) as client:
        client.ehlo()
        client.mail(PLAYER)
        code, text = client.rcpt("someone@example.org")
        assert code == 550
        assert text.decode() == "5.1.1 <someone@example.org>: no such mailbox here"
        client.rset()
        # mixed: the good recipient still goes through
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            client.sendmail(PLAYER, ["nobody@example.org"], make_message())
        refused = client.sendmail(PLAYER, ["nobody@example.org", SERVER], make_message())
        assert list(refused) == ["nobody@example.org"]
    assert len(inbound_rows(store)) == 1


TOO_BIG = ("5.3.4 Message too big for pbem@example.org: the limit is 20 KB (20000 bytes); moves "
           "need no attachments, send the move as plain text")


def test_oversized_gets_552_with_what_to_do(listener: SmtpListener, store: SQLiteStore) -> None:
    """One line the sender can act on, in their MTA's bounce: the limit and what to send."""
    raw = make_message(size=30_000)
    # smtplib announces SIZE=, so the refusal already comes at MAIL FROM ...
    with _client(listener) as client, pytest.raises(smtplib.SMTPSenderRefused) as info:
        client.sendmail(PLAYER, [SERVER], raw)
    assert (info.value.smtp_code, info.value.smtp_error.decode()) == (552, TOO_BIG)
    # ... and without SIZE= the DATA phase refuses it, reading it to the end without keeping it;
    # the session goes on.
    with _client(listener) as client:
        client.ehlo()
        client.mail(PLAYER)
        client.rcpt(SERVER)
        assert client.data(raw) == (552, TOO_BIG.encode())
        client.mail(PLAYER)
        client.rcpt(SERVER)
        assert client.data(make_message("after the big one"))[0] == 250
    (stored,) = list(store.iter_inbound())
    assert b"after the big one" in stored.raw


def test_data_is_read_exactly(listener: SmtpListener, store: SQLiteStore) -> None:
    """Dot-stuffing undone, bare line ends and long lines kept, an empty message stored as empty:
    byte for byte what the client meant."""
    bodies = [b"", b".\r\n", b"..\r\n.x\r\nend.\r\n", b"no final line end", b"a\nbare\rends\r\n",
              b"y" * 5000 + b"\r\n.\r\n.."]
    with _client(listener) as client:
        client.ehlo()
        for n, body in enumerate(bodies):
            client.mail(PLAYER)
            client.rcpt(SERVER)
            raw = f"Message-ID: <exact{n}@x>\r\n\r\n".encode() + body
            assert client.data(raw)[0] == 250
    stored = [m.raw for m in store.iter_inbound()]
    # smtplib ends the data with CRLF when it does not, and stuffs leading dots; both undone here
    expected = [f"Message-ID: <exact{n}@x>\r\n\r\n".encode() + body for n, body in enumerate(bodies)]
    expected = [e if e.endswith(b"\r\n") else e + b"\r\n" for e in expected]
    assert stored == expected


def test_envelope_sender_is_kept(listener: SmtpListener, store: SQLiteStore) -> None:
    with _client(listener) as client:
        client.sendmail("<>", [SERVER], make_message("a bounce"))
        client.sendmail("Bounces@Relay.example", [SERVER], make_message("from a relay"))
    assert [m.envelope_from for m in store.iter_inbound()] == ["", "Bounces@Relay.example"]


def test_a_session_holds_one_buffer_not_a_line_list(listener: SmtpListener, store: SQLiteStore) -> None:
    """19,000 empty lines: stored whole, quickly (aiosmtpd's own DATA kept an object per line)."""
    raw = make_message("many lines", body="\r\n" * 9_000)
    with _client(listener) as client:
        client.sendmail(PLAYER, [SERVER], raw)
    (stored,) = list(store.iter_inbound())
    assert stored.raw == raw


def test_duplicate_is_250_and_stored_once(listener: SmtpListener, store: SQLiteStore) -> None:
    raw = make_message("twice")
    first = _send_data(listener, raw)
    second = _send_data(listener, raw)
    assert first[0] == second[0] == 250
    assert first[1] == second[1]  # same "queued as N"
    assert len(inbound_rows(store)) == 1


def test_locked_database_gets_451(tmp_path: Path) -> None:
    """The store cannot write (another process holds the write lock): 451, and the client keeps
    the message; once the lock is gone the retry is stored."""
    db = tmp_path / "pbem.sqlite3"
    store = SQLiteStore(db, busy_timeout=0.2)
    config = make_config(tmp_path)
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        with SmtpListener(config, store) as smtp:
            blocker.execute("BEGIN IMMEDIATE")
            raw = make_message("locked")
            code, text = _send_data(smtp, raw)
            assert (code, text) == (451, b"4.3.0 try again later")
            blocker.execute("ROLLBACK")
            assert _send_data(smtp, raw)[0] == 250
        assert len(inbound_rows(store)) == 1
    finally:
        blocker.close()
        store.close()


def test_closed_store_gets_451(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "pbem.sqlite3")
    with SmtpListener(make_config(tmp_path), store) as smtp:
        store.close()
        assert _send_data(smtp, make_message())[0] == 451


def test_listener_stays_responsive_while_store_is_slow(tmp_path: Path) -> None:
    """A store call blocked on a lock runs in the worker thread: another client still gets its
    greeting and RCPT answers meanwhile (the event loop is not blocked)."""
    db = tmp_path / "pbem.sqlite3"
    store = SQLiteStore(db, busy_timeout=3.0)
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        with SmtpListener(make_config(tmp_path), store) as smtp:
            blocker.execute("BEGIN IMMEDIATE")
            result: list[tuple[int, bytes]] = []
            t = threading.Thread(target=lambda: result.append(_send_data(smtp, make_message())))
            t.start()
            with _client(smtp) as other:
                assert other.ehlo()[0] == 250
                other.mail(PLAYER)
                assert other.rcpt(SERVER)[0] == 250
            blocker.execute("ROLLBACK")
            t.join(10)
            assert result and result[0][0] == 250
    finally:
        blocker.close()
        store.close()


def test_stop_and_restart_on_same_port(tmp_path: Path, store: SQLiteStore) -> None:
    smtp = SmtpListener(make_config(tmp_path), store)
    smtp.start()
    port = smtp.port
    assert port != 0
    smtp.stop()
    with pytest.raises(ConnectionRefusedError):
        smtplib.SMTP("127.0.0.1", port, timeout=2)
    smtp.start()
    try:
        assert smtp.port == port
        assert _send_data(smtp, make_message())[0] == 250
    finally:
        smtp.stop()
