"""The relay refuses a mail for good, or goes away for a while: what the sender does about it.

A 5xx for a recipient gives that mail up (never retried, listed by ``pbem admin status``); a 4xx
keeps it waiting. During an outage the rows' own back-off grows towards an hour, so the sender
tries the relay every ``probe_seconds`` while mail waits, and once the relay answers every waiting
mail is due at once: everything queued leaves within one probe interval of the relay's return (30 s
by default, within the one minute promised; 0.3 s here to keep the test short), not after each
row's own back-off (10 minutes here). On both stores: with PostgreSQL each row is claimed (a row
lock) while it is sent, and its mark is written under that claim.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.cli.admin import status_text
from pbem.clock import ManualClock, SystemClock
from pbem.config import RelayConfig
from pbem.outbox.sender import OutboxSender
from pbem.store.sql import SqlStore
from tests.services.smtp_sink import SmtpSink
from tests.store.conftest import Backend, backend  # noqa: F401  (backend: a fixture, both stores)
from tests.transport import PLAYER, SERVER, make_config, wait_until


@pytest.fixture
def store(backend: Backend) -> Iterator[SqlStore]:  # noqa: F811
    s = backend.open()
    yield s
    s.close()


def _queue(store: SqlStore, now, recipients: list[str]) -> None:
    for i, rcpt in enumerate(recipients):
        with store.transaction() as tx:
            tx.queue_outbound(message_id=f"<o{i}.{time.time_ns()}@example.org>", sender=SERVER,
                              recipients=[rcpt], raw=f"To: {rcpt}\r\nSubject: {i}\r\n\r\nx\r\n".encode(),
                              now=now)


def _config(tmp_path: Path, sink: SmtpSink, probe: float = 30.0):
    return make_config(tmp_path, relay=RelayConfig(host=sink.host, port=sink.port, security="none",
                                                   timeout_seconds=5, probe_seconds=probe))


def test_permanent_refusal_is_given_up_and_shown(tmp_path: Path, store: SqlStore,
                                                 smtp_sink: SmtpSink,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock()
    smtp_sink.reject_rcpt["gone@example.net"] = "550 5.1.1 <gone@example.net>: no such user"
    smtp_sink.reject_rcpt["full@example.net"] = "452 4.2.2 mailbox full, try later"
    _queue(store, clock.now(), [PLAYER, "gone@example.net", "full@example.net"])
    caplog.set_level(logging.ERROR, logger="pbem.outbox.sender")
    sender = OutboxSender(store, _config(tmp_path, smtp_sink), clock)
    assert sender.send_due_once() == 1
    assert [m.rcpt_tos for m in smtp_sink.messages] == [[PLAYER]]
    assert store.outbound_counts() == {"pending": 1, "sent": 1, "given_up": 1}
    (given_up,) = store.given_up_outbound()
    assert given_up.recipients == ["gone@example.net"] and given_up.given_up_at == clock.now()
    assert "550 5.1.1" in (given_up.last_error or "")
    assert any("given up" in r.getMessage() and "gone@example.net" in r.getMessage()
               for r in caplog.records)
    # never tried again, however long one waits; the 4xx one is
    clock.advance(days=30)
    smtp_sink.reject_rcpt.clear()
    assert sender.send_due_once() == 1
    assert [m.rcpt_tos for m in smtp_sink.messages][1:] == [["full@example.net"]]
    assert store.due_outbound(clock.now() + timedelta(days=365)) == []
    report = status_text(store)
    assert "Outbox: 0 waiting, 2 sent, 1 given up" in report
    assert "gone@example.net" in report and "550 5.1.1 <gone@example.net>: no such user" in report


def test_relay_back_sends_everything_at_once(tmp_path: Path, store: SqlStore,
                                            smtp_sink: SmtpSink,
                                            caplog: pytest.LogCaptureFixture) -> None:
    smtp_sink.stop()
    clock = SystemClock()
    _queue(store, clock.now(), [f"p{i}@example.net" for i in range(5)])
    stop = threading.Event()
    caplog.set_level(logging.WARNING, logger="pbem.faults")
    caplog.set_level(logging.DEBUG, logger="pbem.outbox.sender")  # last: it sets the handler's too
    sender = OutboxSender(store, _config(tmp_path, smtp_sink, probe=0.3), clock, stop,
                          base_backoff_seconds=600)
    thread = sender.start()
    try:
        wait_until(lambda: all(r.attempts >= 1 for r in store.due_outbound(
            clock.now() + timedelta(hours=1))), 5, "the first failed attempt")
        time.sleep(1.0)  # an outage of a few probes
        probes = [r for r in caplog.records if r.name == "pbem.outbox.sender"
                  and "Connection refused" in r.getMessage() and "not sent" not in r.getMessage()]
        assert 2 <= len(probes) <= 6  # one try per probe, not one per waiting mail
        assert all(r.levelno == logging.DEBUG for r in probes)
        # the log says it once: the relay's fault started
        (started,) = [r.getMessage() for r in caplog.records if r.name == "pbem.faults"]
        assert started.startswith("fault: the relay does not take mail: relay ")
        assert "Connection refused" in started and "replies wait in the outbox" in started
        assert store.due_outbound(clock.now()) == []  # each row waits its own 600 s back-off
        smtp_sink.start()
        back = time.monotonic()
        smtp_sink.wait_for(5, timeout=5)
        took = time.monotonic() - back
    finally:
        stop.set()
        sender.wake()
        thread.join(5)
    assert took < 2.0  # one probe interval (0.3 s) and the sending, not 600 s
    assert store.outbound_counts() == {"pending": 0, "sent": 5, "given_up": 0}
    faults = [r.getMessage() for r in caplog.records if r.name == "pbem.faults"]
    assert len(faults) == 2 and faults[1].startswith("fault over: the relay works again after ")
