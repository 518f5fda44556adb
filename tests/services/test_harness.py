"""Smoke tests of the service harness itself: every service really does what the tests rely on.

If these fail, the tests of pbem's mail handling cannot be trusted either, so they check exactly
the behaviours those tests depend on (IDLE wake-ups, kicks, UIDVALIDITY changes, \\Seen not
being set by peeking, a relay that goes away and comes back, temporary SMTP failures).
"""

from __future__ import annotations

import os
import smtplib
import socket
import subprocess
import time
from email.message import EmailMessage

import psycopg
import pytest
from imapclient import IMAPClient

from tests.services import requirements
from tests.services.dovecot import Dovecot, ImapUser
from tests.services.postgres import Postgres
from tests.services.smtp_sink import SmtpSink

pytestmark = pytest.mark.services


def _raw(subject: str, body: str = "Orders for turn 1.\r\n") -> bytes:
    return (
        f"From: player@example.org\r\nTo: game@example.org\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@example.org>\r\n\r\n{body}"
    ).encode()


def _idle_until(client: IMAPClient, want: bytes, timeout: float = 10.0) -> list:
    """Collect IDLE responses until one has ``want`` in it (or the timeout passes)."""
    seen: list = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        responses = client.idle_check(timeout=max(0.1, deadline - time.monotonic()))
        seen.extend(responses)
        if any(want in r for r in responses):
            return seen
    pytest.fail(f"no {want!r} within {timeout}s during IDLE; got {seen}")


# --- requirements ---------------------------------------------------------------------------


def test_missing_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no frobnicator"):
        requirements.missing("no frobnicator")
    requirements.require(True, "never raised")


def test_missing_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no frobnicator"):
        requirements.require(False, "no frobnicator")


def test_free_port_is_bindable_on_loopback() -> None:
    port = requirements.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


# --- Dovecot --------------------------------------------------------------------------------


def test_imap_append_and_peek_leaves_unseen(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, password = imap_user
    raw = _raw("append test")
    with IMAPClient(dovecot.host, port=dovecot.port, ssl=False, timeout=10) as client:
        client.login(user, password)
        assert {b"IDLE", b"MOVE", b"UIDPLUS"} <= set(client.capabilities())
        client.append("INBOX", raw)
        client.select_folder("INBOX")
        (uid,) = client.search("ALL")
        data = client.fetch([uid], ["BODY.PEEK[]", "FLAGS"])[uid]
        assert data[b"BODY[]"] == raw
        assert b"\\Seen" not in data[b"FLAGS"]
        assert b"\\Seen" not in client.get_flags([uid])[uid]
    assert dovecot.list_messages(user) == [raw]


def test_wrong_password_is_refused(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, _ = imap_user
    client = dovecot.connect()
    with pytest.raises(IMAPClient.Error):
        client.login(user, "not the password")
    client.shutdown()


def test_add_user_takes_effect_at_once_and_password_change(dovecot: Dovecot) -> None:
    user = f"player.{time.monotonic_ns()}@example.org"
    dovecot.add_user(user, "first")
    dovecot.connect(user, "first").logout()  # right away, no reload
    dovecot.add_user(user, "second")
    dovecot.connect(user, "second").logout()
    client = dovecot.connect()
    with pytest.raises(IMAPClient.Error):
        client.login(user, "first")
    client.shutdown()


def test_idle_sees_delivery(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, password = imap_user
    client = dovecot.connect(user, password)
    try:
        client.select_folder("INBOX")
        client.idle()
        started = time.monotonic()
        dovecot.deliver(user, _raw("delivered during idle"))
        responses = _idle_until(client, b"EXISTS")
        assert (1, b"EXISTS") in responses
        # inotify, not the 1 s fallback poll, should wake IDLE
        assert time.monotonic() - started < 5
        client.idle_done()
    finally:
        client.logout()
    assert dovecot.list_messages(user) == [_raw("delivered during idle")]


def test_kick_ends_idle_with_bye(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, password = imap_user
    client = dovecot.connect(user, password)
    client.select_folder("INBOX")
    client.idle()
    dovecot.kick(user)
    responses = _idle_until(client, b"BYE")
    assert any(r[0] == b"BYE" for r in responses)
    client.shutdown()


def test_uidvalidity_change_is_visible(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, password = imap_user
    dovecot.deliver(user, _raw("before rebuild"))
    with dovecot.connect(user, password) as client:
        before = client.select_folder("INBOX", readonly=True)[b"UIDVALIDITY"]
    dovecot.set_uidvalidity(user, before + 1000)
    with dovecot.connect(user, password) as client:
        assert client.select_folder("INBOX", readonly=True)[b"UIDVALIDITY"] == before + 1000


def test_create_mailbox_and_deliver_there(dovecot: Dovecot, imap_user: ImapUser) -> None:
    user, _ = imap_user
    dovecot.create_mailbox(user, "Processed")
    dovecot.create_mailbox(user, "Processed")  # idempotent
    dovecot.deliver(user, _raw("one"), mailbox="Processed")
    dovecot.deliver(user, _raw("two"), mailbox="Processed")
    assert dovecot.list_messages(user, "Processed") == [_raw("one"), _raw("two")]
    assert dovecot.list_messages(user) == []


def test_dovecot_stop_start_same_port_and_cleanup() -> None:
    """A private instance (not the session one): stop refuses, start restores users and mail,
    close removes processes and files."""
    t0 = time.monotonic()
    with Dovecot() as server:
        startup = time.monotonic() - t0
        assert startup < 2, f"Dovecot took {startup:.2f}s to start"
        server.add_user("alice", "secret")
        server.deliver("alice", _raw("kept across restart"))
        port, tmp = server.port, server.tmp
        server.stop()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((server.host, port), timeout=2).close()
        server.start()
        assert server.port == port
        assert server.list_messages("alice") == [_raw("kept across restart")]
    assert not tmp.exists()
    assert not server.running
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(tmp) not in ps


# --- PostgreSQL -----------------------------------------------------------------------------


def test_postgres_roundtrip(postgres: Postgres) -> None:
    assert postgres.dsn.endswith("/pbem_test")
    with psycopg.connect(postgres.dsn) as conn:
        conn.execute("CREATE TABLE harness_smoke (id serial PRIMARY KEY, note text NOT NULL)")
        conn.execute("INSERT INTO harness_smoke (note) VALUES (%s), (%s)", ("a", "b"))
        rows = conn.execute("SELECT note FROM harness_smoke ORDER BY id").fetchall()
        assert rows == [("a",), ("b",)]
        # PostgreSQL 15 is the project's target (the harness takes the newest one installed)
        assert int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 150000
        conn.execute("DROP TABLE harness_smoke")


def test_postgres_create_database(postgres: Postgres) -> None:
    dsn = postgres.create_database("harness_extra")
    try:
        assert dsn == f"postgresql://pbemtest@127.0.0.1:{postgres.port}/harness_extra"
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("harness_extra",)
    finally:
        postgres.drop_database("harness_extra")


def test_postgres_listens_on_loopback_only(postgres: Postgres) -> None:
    with psycopg.connect(postgres.dsn) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("SHOW fsync").fetchone() == ("off",)


def test_postgres_stop_start_same_port(postgres: Postgres) -> None:
    port = postgres.port
    postgres.stop()
    try:
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(postgres.dsn, connect_timeout=2)
    finally:
        postgres.start()
    assert postgres.port == port
    with psycopg.connect(postgres.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


# --- SMTP sink ------------------------------------------------------------------------------


def _send(sink: SmtpSink, subject: str) -> None:
    msg = EmailMessage()
    msg["From"] = "game@example.org"
    msg["To"] = "player@example.org"
    msg["Subject"] = subject
    msg.set_content("Your turn report.\n.\nA line with a lone dot above.\n")
    with smtplib.SMTP(sink.host, sink.port, timeout=10) as client:
        client.send_message(msg)


def test_smtp_sink_receives(smtp_sink: SmtpSink) -> None:
    _send(smtp_sink, "turn 1")
    (msg,) = smtp_sink.wait_for(1, timeout=5)
    assert msg.mail_from == "game@example.org"
    assert msg.rcpt_tos == ["player@example.org"]
    assert msg.message["Subject"] == "turn 1"
    assert b"\r\n.\r\nA line with a lone dot" in msg.data  # dot-stuffing undone
    assert smtp_sink.messages == [msg]


def test_smtp_sink_stop_and_restart_on_same_port(smtp_sink: SmtpSink) -> None:
    port = smtp_sink.port
    smtp_sink.stop()
    with pytest.raises(ConnectionRefusedError):
        smtplib.SMTP(smtp_sink.host, port, timeout=5)
    smtp_sink.start()
    assert smtp_sink.port == port
    _send(smtp_sink, "after restart")
    assert [m.message["Subject"] for m in smtp_sink.wait_for(1)] == ["after restart"]


def test_smtp_sink_reject_all_is_temporary_failure(smtp_sink: SmtpSink) -> None:
    smtp_sink.reject_all = True
    with pytest.raises(smtplib.SMTPResponseException) as info:
        _send(smtp_sink, "refused")
    assert info.value.smtp_code == 451
    assert smtp_sink.messages == []
    smtp_sink.reject_all = False
    _send(smtp_sink, "accepted")
    assert len(smtp_sink.wait_for(1)) == 1


def test_smtp_sink_wait_for_times_out(smtp_sink: SmtpSink) -> None:
    with pytest.raises(AssertionError, match="got 0 of 1"):
        smtp_sink.wait_for(1, timeout=0.1)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the servers as pbemtest")
def test_servers_run_unprivileged(dovecot: Dovecot, postgres: Postgres) -> None:
    ps = subprocess.run(["ps", "-ww", "-eo", "user:32,args"], capture_output=True, text=True).stdout
    pg = [line for line in ps.splitlines() if f"postgres -D {postgres.data}" in line]
    assert pg and all(line.split()[0] == "pbemtest" for line in pg)
    dv = [line for line in ps.splitlines() if f"pbem-test-{dovecot.port}/auth" in line]
    assert dv and all(line.split()[0] == "pbemtest" for line in dv)
