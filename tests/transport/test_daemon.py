"""The daemon end to end: real SMTP in, real IMAP in, processing, real SMTP relay out."""

from __future__ import annotations

import os
import signal
import smtplib
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.config import Config, RelayConfig
from pbem.daemon.runner import Daemon
from pbem.store.sqlite import SQLiteStore
from tests.services.dovecot import Dovecot
from tests.services.smtp_sink import SmtpSink
from tests.transport import (
    PLAYER,
    SERVER,
    EchoProcessor,
    imap_config,
    make_config,
    make_message,
    wait_until,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "pbem.sqlite3")
    yield s
    s.close()


def _inbox_count(dovecot: Dovecot, user: str) -> int:
    """STATUS is atomic; search-then-fetch would race with the watcher's moves."""
    with dovecot.connect(user) as client:
        return int(client.folder_status("INBOX", ["MESSAGES"])[b"MESSAGES"])


def _config(tmp_path: Path, sink: SmtpSink, **kw: object) -> Config:
    relay = RelayConfig(host=sink.host, port=sink.port, security="none", timeout_seconds=5)
    return make_config(tmp_path, relay=relay, **kw)  # type: ignore[arg-type]


def test_smtp_in_reply_out(tmp_path: Path, store: SQLiteStore, smtp_sink: SmtpSink) -> None:
    config = _config(tmp_path, smtp_sink)
    processor = EchoProcessor(store)
    daemon = Daemon(config, store, processor)
    daemon.start()
    try:
        assert daemon.smtp is not None and daemon.imap is None
        latencies = []
        for i in range(10):
            raw = make_message(f"turn {i}")
            started = time.monotonic()
            with smtplib.SMTP("127.0.0.1", daemon.smtp.port, timeout=10) as client:
                client.sendmail(PLAYER, [SERVER], raw)
            got = smtp_sink.wait_for(i + 1, timeout=5)
            latencies.append(time.monotonic() - started)
            assert got[-1].message["Message-ID"] == processor.reply_id(processor.processed[-1])
            assert got[-1].rcpt_tos == [PLAYER]
    finally:
        daemon.stop()
    median = statistics.median(latencies)
    print(f"\nSMTP in -> reply at relay: median {median * 1000:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms")
    assert median < 0.5
    assert store.outbound_counts() == {"pending": 0, "sent": 10, "given_up": 0}


def test_pending_work_is_recovered_at_start(tmp_path: Path, store: SQLiteStore,
                                            smtp_sink: SmtpSink) -> None:
    """Mail stored by a previous run (or by ``pbem deliver``) is processed and answered at
    start, without any new mail arriving."""
    store.accept_inbound(make_message("left over"), "deliver", EchoProcessor(store).clock.now())
    config = _config(tmp_path, smtp_sink)
    config.smtp_enabled = False
    daemon = Daemon(config, store, EchoProcessor(store))
    daemon.start()
    try:
        assert daemon.smtp is None
        smtp_sink.wait_for(1, timeout=5)
    finally:
        daemon.stop()


@pytest.mark.services
def test_imap_in_reply_out(tmp_path: Path, store: SQLiteStore, smtp_sink: SmtpSink,
                           dovecot: Dovecot, imap_user) -> None:
    user, password = imap_user
    config = _config(tmp_path, smtp_sink,
                     imap=imap_config(dovecot.host, dovecot.port, user, password))
    config.smtp_enabled = False
    dovecot.deliver(user, make_message("waiting before start"))
    processor = EchoProcessor(store)
    daemon = Daemon(config, store, processor)
    daemon.start()
    latencies = []
    try:
        smtp_sink.wait_for(1, timeout=10)
        assert daemon.imap is not None
        wait_until(daemon.imap.connected.is_set, 5, "IMAP session")
        for i in range(10):
            time.sleep(0.05 + 0.037 * i)  # spread arrivals over the watcher's cycle
            dovecot.deliver(user, make_message(f"live {i}"))
            started = time.monotonic()
            smtp_sink.wait_for(i + 2, timeout=5)
            latencies.append(time.monotonic() - started)
        wait_until(lambda: _inbox_count(dovecot, user) == 0, 5, "moves")
    finally:
        daemon.stop()
    assert len(dovecot.list_messages(user, "processed")) == 11
    assert len(processor.processed) == len(set(processor.processed)) == 11
    median = statistics.median(latencies)
    print(f"\nIMAP delivery -> reply at relay: median {median * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms (after doveadm save returned)")
    assert median < 0.5


def test_processor_error_does_not_kill_the_daemon(tmp_path: Path, store: SQLiteStore,
                                                  smtp_sink: SmtpSink) -> None:
    class Flaky(EchoProcessor):
        failures = 2

        def process_pending(self, limit: int = 100) -> int:
            if self.failures:
                self.failures -= 1
                raise RuntimeError("database is locked (simulated)")
            return super().process_pending(limit)

    config = _config(tmp_path, smtp_sink)
    daemon = Daemon(config, store, Flaky(store), processor_error_backoff_seconds=0.05)
    daemon.start()
    try:
        assert daemon.smtp is not None
        with smtplib.SMTP("127.0.0.1", daemon.smtp.port, timeout=10) as client:
            client.sendmail(PLAYER, [SERVER], make_message())
        smtp_sink.wait_for(1, timeout=5)
    finally:
        daemon.stop()


def test_run_forever_stops_on_sigterm(tmp_path: Path, store: SQLiteStore,
                                      smtp_sink: SmtpSink) -> None:
    daemon = Daemon(_config(tmp_path, smtp_sink), store, EchoProcessor(store))
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    previous = signal.getsignal(signal.SIGTERM)
    started = time.monotonic()
    daemon.run_forever()  # main thread: installs the handler, returns after SIGTERM
    assert time.monotonic() - started < 5
    assert daemon.stopping
    assert signal.getsignal(signal.SIGTERM) is previous
    assert daemon.smtp is not None and not daemon.smtp.running
