"""TLS and AUTH for real: the IMAP watcher against Dovecot with implicit TLS (993-style) and with
STARTTLS, the outbox sender against an aiosmtpd relay that requires STARTTLS and AUTH (PLAIN or
LOGIN). Certificates are made for the test with openssl. A certificate the client does not trust
and a wrong password each fail with one log line that says what to check, and are retried; with TLS
configured nothing is sent (no login either) over a connection without it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.clock import ManualClock
from pbem.config import ImapConfig, RelayConfig
from pbem.doors.imap_watcher import ImapWatcher
from pbem.outbox.sender import OutboxSender
from pbem.store.sqlite import SQLiteStore
from tests.services.dovecot import Dovecot
from tests.services.smtp_sink import SmtpSink
from tests.services.tls import Certificates, make_certificates
from tests.transport import PLAYER, SERVER, make_config, make_message, wait_until


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_dovecot(certificates: Certificates) -> Iterator[Dovecot]:
    with Dovecot(tls=certificates) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "pbem.sqlite3")
    yield s
    s.close()


# --- IMAP ------------------------------------------------------------------------------------------

def _imap(server: Dovecot, user: str, password: str, security: str, ca: Path) -> ImapConfig:
    port = server.ssl_port if security == "ssl" else server.port
    return ImapConfig(host="localhost", port=port, security=security, username=user,
                      password=password, ca_file=str(ca), max_backoff_seconds=0.2)


def _watch(config: ImapConfig, store: SQLiteStore) -> tuple[ImapWatcher, threading.Event]:
    stop = threading.Event()
    watcher = ImapWatcher(config, store, stop=stop, initial_backoff_seconds=0.05)
    watcher.start()
    return watcher, stop


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_imap_over_tls_stores_mail(tls_dovecot: Dovecot, certificates: Certificates,
                                   store: SQLiteStore, security: str) -> None:
    tls_dovecot.add_user(f"tls-{security}", "secret-pw")
    tls_dovecot.deliver(f"tls-{security}", make_message("over tls"))
    watcher, stop = _watch(_imap(tls_dovecot, f"tls-{security}", "secret-pw", security,
                                 certificates.ca), store)
    try:
        wait_until(lambda: watcher.stored == 1 and watcher.connected.is_set(), 10,
                   "the message stored over TLS")
        assert watcher.connections == 1 and watcher.last_error is None
    finally:
        stop.set()
        watcher.join(5)


@pytest.mark.parametrize(("what", "expected"), [
    ("certificate", "TLS certificate not accepted (unable to get local issuer certificate); "
                    "set [imap] ca_file"),
    ("password", "login refused ([AUTHENTICATIONFAILED] Authentication failed.); check [imap] "
                 "username and password"),
])
def test_imap_failure_is_one_clear_line_and_retried(tls_dovecot: Dovecot, certificates: Certificates,
                                                    store: SQLiteStore, caplog: pytest.LogCaptureFixture,
                                                    what: str, expected: str) -> None:
    tls_dovecot.add_user("tls-fail", "right-pw")
    tls_dovecot.deliver("tls-fail", make_message("must not be read"))
    ca = certificates.other_ca if what == "certificate" else certificates.ca
    password = "wrong-pw" if what == "password" else "right-pw"
    caplog.set_level(logging.WARNING, logger="pbem.faults")
    caplog.set_level(logging.DEBUG, logger="pbem.doors.imap_watcher")  # last: sets the handler's

    def retries() -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.name == "pbem.doors.imap_watcher" and "reconnecting in" in r.getMessage()]

    watcher, stop = _watch(_imap(tls_dovecot, "tls-fail", password, "ssl", ca), store)
    try:
        wait_until(lambda: len(retries()) >= 2, 10, "a retry after the failure")
    finally:
        stop.set()
        watcher.join(5)
    assert all(expected in line for line in retries()), retries()
    # one line in the log at the level it is read at, however often it was tried
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith("fault: the IMAP server cannot be used: ") and expected in line
    assert watcher.connections == 0 and watcher.stored == 0
    assert list(store.iter_inbound()) == []


# --- the relay ---------------------------------------------------------------------------------------

def _queue(store: SQLiteStore, clock: ManualClock, count: int = 1) -> None:
    for i in range(count):
        with store.transaction() as tx:
            tx.queue_outbound(message_id=f"<tls-{i}@example.org>", sender=SERVER, recipients=[PLAYER],
                              raw=f"From: {SERVER}\r\nTo: {PLAYER}\r\nSubject: {i}\r\n\r\nhi\r\n".encode(),
                              now=clock.now())


def _relay(tmp_path: Path, sink: SmtpSink, ca: Path, password: str = "relay-pw",
           security: str = "starttls"):
    return make_config(tmp_path, relay=RelayConfig(
        host="localhost", port=sink.port, security=security, username="pbem", password=password,
        timeout_seconds=5, ca_file=str(ca)))


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
def test_relay_with_starttls_and_auth(tmp_path: Path, store: SQLiteStore, certificates: Certificates,
                                      mechanism: str) -> None:
    clock = ManualClock()
    _queue(store, clock, 2)
    with SmtpSink(tls=certificates, users={"pbem": "relay-pw"}, auth_mechanisms=(mechanism,)) as sink:
        sender = OutboxSender(store, _relay(tmp_path, sink, certificates.ca), clock)
        assert sender.send_due_once() == 2
        got = sink.wait_for(2, 5)
    assert all(m.tls and m.user == "pbem" for m in got)
    assert sink.logins == [(mechanism, "pbem")]  # one session, one login for both mails


@pytest.mark.parametrize(("what", "expected"), [
    ("certificate", "TLS certificate not accepted (unable to get local issuer certificate); set [relay] "
                    "ca_file"),
    ("password", "login refused (535 5.7.8 Authentication credentials invalid); check [relay] "
                 "username and password"),
])
def test_relay_failure_is_one_clear_line_and_retried(tmp_path: Path, store: SQLiteStore,
                                                     certificates: Certificates,
                                                     caplog: pytest.LogCaptureFixture,
                                                     what: str, expected: str) -> None:
    clock = ManualClock()
    _queue(store, clock, 3)
    ca = certificates.other_ca if what == "certificate" else certificates.ca
    with SmtpSink(tls=certificates, users={"pbem": "relay-pw"}) as sink:
        config = _relay(tmp_path, sink, ca, password="wrong" if what == "password" else "relay-pw")
        sender = OutboxSender(store, config, clock)
        caplog.set_level(logging.INFO, logger="pbem.outbox.sender")
        assert sender.send_due_once() == 0
        warnings = [r.getMessage() for r in caplog.records
                    if r.levelno >= logging.WARNING and r.name.startswith("pbem")]
        assert len(warnings) == 1, warnings  # one line for the connection, not one per mail
        assert warnings[0].startswith("fault: the relay does not take mail: ")
        assert expected in warnings[0] and "replies wait in the outbox" in warnings[0]
        rows = store.due_outbound(clock.now() + timedelta(days=1))
        assert len(rows) == 3 and all(r.attempts == 1 and expected in (r.last_error or "")
                                      for r in rows)
        clock.advance(seconds=10)  # retried at the next attempt, and still nothing leaves
        assert sender.send_due_once() == 0
        assert sink.messages == []
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING
                    and r.name.startswith("pbem")]) == 1  # still the one line


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # on purpose here
def test_starttls_configured_never_sends_in_clear(tmp_path: Path, store: SQLiteStore,
                                                  certificates: Certificates,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A relay (or a man in the middle) that offers no STARTTLS gets neither mail nor password."""
    clock = ManualClock()
    _queue(store, clock, 1)
    with SmtpSink(users={"pbem": "relay-pw"}) as sink:  # no TLS offered at all
        caplog.set_level(logging.WARNING, logger="pbem.outbox.sender")
        sender = OutboxSender(store, _relay(tmp_path, sink, certificates.ca), clock)
        assert sender.send_due_once() == 0
        assert sink.messages == [] and sink.logins == [] and sink.failed_logins == 0
    (line,) = [r.getMessage() for r in caplog.records if r.name.startswith("pbem")]
    assert "STARTTLS extension not supported by server" in line and "nothing is sent without it" in line
