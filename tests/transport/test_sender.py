"""The outbox sender against a real SMTP relay (the aiosmtpd sink) and a real Maildir."""

from __future__ import annotations

import mailbox
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.clock import Clock, ManualClock, SystemClock
from pbem.config import Config, RelayConfig
from pbem.outbox.maildir import Maildir
from pbem.outbox.sender import OutboxSender
from pbem.store.sqlite import SQLiteStore
from tests.services.smtp_sink import SmtpSink
from tests.transport import PLAYER, SERVER, make_config, wait_until


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "pbem.sqlite3")
    yield s
    s.close()


def _queue(store: SQLiteStore, clock: Clock, n: int = 1,
           recipients: list[str] | None = None) -> list[tuple[int, str, bytes]]:
    out = []
    now = clock.now()
    for i in range(n):
        message_id = f"<out-{i}-{time.time_ns()}@example.org>"
        raw = (f"From: {SERVER}\r\nTo: {PLAYER}\r\nSubject: turn {i}\r\n"
               f"Message-ID: {message_id}\r\n\r\nyour move\r\n.\r\nlone dot above\r\n").encode()
        with store.transaction() as tx:
            row_id = tx.queue_outbound(message_id=message_id, sender=SERVER,
                                       recipients=recipients or [PLAYER], raw=raw,
                                       now=now)
        out.append((row_id, message_id, raw))
    return out


def _relay_config(tmp_path: Path, sink: SmtpSink, max_backoff: float = 3600) -> Config:
    return make_config(tmp_path, relay=RelayConfig(host=sink.host, port=sink.port,
                                                   security="none", timeout_seconds=5,
                                                   max_backoff_seconds=max_backoff))


def test_relay_delivers_exact_message(tmp_path: Path, store: SQLiteStore,
                                      smtp_sink: SmtpSink) -> None:
    clock = ManualClock()
    queued = _queue(store, clock, n=3, recipients=[PLAYER, "second@example.net"])
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink), clock)
    assert sender.send_due_once() == 3
    got = smtp_sink.wait_for(3, timeout=5)
    assert [m.message["Message-ID"] for m in got] == [mid for _, mid, _ in queued]
    assert [m.data for m in got] == [raw for _, _, raw in queued]  # byte-exact, dots and all
    assert all(m.mail_from == SERVER and m.rcpt_tos == [PLAYER, "second@example.net"]
               for m in got)
    assert len({m.peer for m in got}) == 1  # one connection for the whole batch
    assert store.outbound_counts() == {"pending": 0, "sent": 3, "given_up": 0}
    assert sender.send_due_once() == 0


def test_relay_down_then_back(tmp_path: Path, store: SQLiteStore, smtp_sink: SmtpSink) -> None:
    clock = ManualClock()
    (_, message_id, _), _ = _queue(store, clock, n=2)
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink, max_backoff=60), clock)
    smtp_sink.stop()
    expected_delays = [5, 10, 20, 40, 60, 60]  # doubling, capped at max_backoff_seconds
    for attempt, delay in enumerate(expected_delays, start=1):
        assert sender.send_due_once() == 0  # connection refused: no crash, rows wait
        (row, _) = store.due_outbound(clock.now() + timedelta(days=1))
        assert row.attempts == attempt
        assert row.next_attempt_at == clock.now() + timedelta(seconds=delay)
        assert "relay" in (row.last_error or "")
        assert store.due_outbound(clock.now()) == []  # not due before its time
        clock.advance(delay)
    smtp_sink.start()
    assert sender.send_due_once() == 2
    got = smtp_sink.wait_for(2, timeout=5)
    assert got[0].message["Message-ID"] == message_id
    assert store.outbound_counts() == {"pending": 0, "sent": 2, "given_up": 0}


def test_relay_451_is_retried(tmp_path: Path, store: SQLiteStore, smtp_sink: SmtpSink) -> None:
    clock = ManualClock()
    _queue(store, clock, n=1)
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink), clock)
    smtp_sink.reject_all = True
    assert sender.send_due_once() == 0
    (row,) = store.due_outbound(clock.now() + timedelta(hours=1))
    assert row.attempts == 1 and "451" in (row.last_error or "")
    smtp_sink.reject_all = False
    assert sender.send_due_once() == 0  # not due yet
    clock.advance(5)
    assert sender.send_due_once() == 1
    assert len(smtp_sink.wait_for(1)) == 1


def test_thread_sends_on_wake_and_retries_when_due(tmp_path: Path, store: SQLiteStore,
                                                  smtp_sink: SmtpSink) -> None:
    """The running thread: wake() sends at once; after a failure it sleeps only until the
    retry is due (a small base back-off here) and then delivers without being woken."""
    stop = threading.Event()
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink), stop=stop,
                          base_backoff_seconds=0.3, idle_poll_seconds=60)
    sender.start()
    try:
        time.sleep(0.1)  # let it do its first (empty) pass and go to sleep
        _queue(store, SystemClock(), n=1)
        started = time.monotonic()
        sender.wake()
        smtp_sink.wait_for(1, timeout=5)
        latency = time.monotonic() - started
        assert latency < 0.5, f"wake-to-delivered took {latency:.3f}s"

        smtp_sink.stop()
        _queue(store, SystemClock(), n=1)
        sender.wake()
        far = SystemClock().now() + timedelta(days=1)
        wait_until(lambda: store.due_outbound(far)[0].attempts >= 1, 5, "a failed attempt")
        smtp_sink.start()
        smtp_sink.wait_for(2, timeout=5)  # no wake(): the retry timer did it
    finally:
        stop.set()
        sender.join(5)
    assert not sender._thread or not sender._thread.is_alive()


def test_maildir_one_file_per_mail_and_no_duplicates(tmp_path: Path,
                                                     store: SQLiteStore) -> None:
    clock = ManualClock()
    queued = _queue(store, clock, n=3)
    config = make_config(tmp_path)  # no relay host: Maildir outbox
    sender = OutboxSender(store, config, clock)
    assert sender.send_due_once() == 3
    box = mailbox.Maildir(config.outbox_maildir, create=False)
    assert sorted(m["Message-ID"] for m in box) == sorted(mid for _, mid, _ in queued)
    files = sorted((config.outbox_maildir / "new").iterdir())
    assert [f.read_bytes() for f in files] == [raw for _, _, raw in queued]
    assert list((config.outbox_maildir / "tmp").iterdir()) == []
    assert sender.send_due_once() == 0

    # A crash between writing the file and mark_sent: the same row is delivered again.
    row_id, _, raw = queued[0]
    maildir = Maildir(config.outbox_maildir)
    maildir.deliver(row_id, raw)
    maildir.deliver(row_id, raw)
    assert len(list((config.outbox_maildir / "new").iterdir())) == 3

    # A reader took one into cur/: a re-delivery must not bring it back into new/.
    target = maildir.path_for(row_id)
    target.rename(config.outbox_maildir / "cur" / f"{target.name}:2,S")
    maildir.deliver(row_id, raw)
    assert len(list((config.outbox_maildir / "new").iterdir())) == 2
    assert len(list(mailbox.Maildir(config.outbox_maildir, create=False))) == 3


def test_maildir_write_failure_is_retried(tmp_path: Path, store: SQLiteStore) -> None:
    clock = ManualClock()
    _queue(store, clock, n=1)
    config = make_config(tmp_path / "data")
    config.data_dir.mkdir()
    config.outbox_maildir.write_text("a file where the Maildir should be")
    sender = OutboxSender(store, config, clock)
    assert sender.send_due_once() == 0
    (row,) = store.due_outbound(clock.now() + timedelta(hours=1))
    assert row.attempts == 1 and "maildir" in (row.last_error or "")
    config.outbox_maildir.unlink()
    clock.advance(5)
    assert sender.send_due_once() == 1


def test_thread_keeps_relay_connection_and_survives_its_loss(tmp_path: Path, store: SQLiteStore,
                                                             smtp_sink: SmtpSink) -> None:
    """Between batches the connection stays open (no reconnect per reply); when the relay drops
    it meanwhile, the next mail goes out on a new connection at once, with no failed attempt."""
    stop = threading.Event()
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink), stop=stop,
                          keep_connection_seconds=30)
    sender.start()
    try:
        for n in (1, 2):
            _queue(store, SystemClock(), n=1)
            sender.wake()
            smtp_sink.wait_for(n, timeout=5)
        first, second = smtp_sink.messages
        assert first.peer == second.peer  # the same connection

        smtp_sink.stop()  # the relay restarts: the open connection is dead
        smtp_sink.start()
        _queue(store, SystemClock(), n=1)
        started = time.monotonic()
        sender.wake()
        third = smtp_sink.wait_for(3, timeout=5)[-1]
        assert time.monotonic() - started < 1.0
        assert third.peer != first.peer
        wait_until(lambda: store.outbound_counts() == {"pending": 0, "sent": 3, "given_up": 0}, 2,
                   "mark_sent")
        far = SystemClock().now() + timedelta(days=1)
        assert store.due_outbound(far) == []
    finally:
        stop.set()
        sender.join(5)


def test_idle_relay_connection_is_closed(tmp_path: Path, store: SQLiteStore,
                                         smtp_sink: SmtpSink) -> None:
    stop = threading.Event()
    sender = OutboxSender(store, _relay_config(tmp_path, smtp_sink), stop=stop,
                          keep_connection_seconds=0.2)
    sender.start()
    try:
        _queue(store, SystemClock(), n=1)
        sender.wake()
        smtp_sink.wait_for(1, timeout=5)
        wait_until(lambda: sender._smtp is None, 2, "the idle connection to be closed")
    finally:
        stop.set()
        sender.join(5)
