"""The outbox sender: delivers the rows the processor queued in the transactional outbox.

Replies are never sent from inside processing; the processor only queues them in the same
transaction that applies the move. This thread then looks at the due rows
(``Store.claim_outbound``), takes each one before sending it (a second worker's sender skips a row
this one has taken), sends it, and marks it sent, or schedules its next attempt with exponential
back-off. A crash between the relay's acceptance and the mark re-sends the mail after restart (or at
once from another worker); that is the at-least-once half of the design, and the row's fixed
Message-ID lets the recipient's mail system (or the Maildir file name) recognise the repeat.

With ``config.relay.host`` mail goes to that SMTP relay (one connection, kept open while mail keeps
coming); without it, each mail becomes one file in the Maildir ``config.outbox_maildir`` for a
local MTA or a human.
"""

from __future__ import annotations

import logging
import smtplib
import socket
import ssl
import threading
import time
from datetime import datetime, timedelta

from pbem.clock import Clock, SystemClock, wait_either
from pbem.config import Config
from pbem.outbox.maildir import Maildir
from pbem.store.base import Outbound, OutboxBatch, Store

log = logging.getLogger(__name__)


class OutboxSender:
    """Send due outbound rows; ``run()`` is the thread body, ``send_due_once()`` one pass.

    ``base_backoff_seconds`` is the delay after the first failure; each further failure doubles
    it, up to ``config.relay.max_backoff_seconds``. ``idle_poll_seconds`` bounds how long the
    thread sleeps without a ``wake()``: rows another process queued, or rows whose retry time was
    set before this process started, are picked up at least that often.

    The thread keeps its relay connection open between batches for ``keep_connection_seconds``
    of inactivity: connecting (TLS handshake, AUTH) is most of the cost of a single reply to a
    remote relay. A connection the relay closed meanwhile is replaced at once, without counting a
    failed attempt. ``send_due_once()`` closes its connection before returning.
    """

    def __init__(self, store: Store, config: Config, clock: Clock | None = None,
                 stop: threading.Event | None = None, *, base_backoff_seconds: float = 5.0,
                 idle_poll_seconds: float = 30.0, batch_size: int = 100,
                 keep_connection_seconds: float = 10.0) -> None:
        self.store = store
        self.config = config
        self.clock = clock or SystemClock()
        self.stop_event = stop or threading.Event()
        self.base_backoff_seconds = base_backoff_seconds
        self.idle_poll_seconds = idle_poll_seconds
        self.batch_size = batch_size
        self.keep_connection_seconds = keep_connection_seconds
        self._smtp: smtplib.SMTP | None = None
        self._smtp_used = 0.0  # time.monotonic() of the last use of _smtp
        self._ssl_context: ssl.SSLContext | None = None
        self._wake = threading.Event()
        self._retry_at: dict[int, datetime] = {}  # row id -> next attempt, for rows failed here
        self._maildir: Maildir | None = None
        self._thread: threading.Thread | None = None
        self._batch: OutboxBatch | None = None  # the claim being sent

    # --- thread control -------------------------------------------------------------------

    def wake(self) -> None:
        """Something was queued (or the relay may be back): look at the outbox now."""
        self._wake.set()

    def start(self) -> threading.Thread:
        """Run ``run()`` in a daemon thread named ``pbem-sender``."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self.run, name="pbem-sender", daemon=True)
            self._thread.start()
        return self._thread

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread after the ``stop`` event was set."""
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        """Until ``stop`` is set: send what is due, then wait for a wake-up or the next retry."""
        where = (f"relay {self.config.relay.host}:{self.config.relay.effective_port}"
                 if self.config.relay.host else f"Maildir {self.config.outbox_maildir}")
        log.info("sender: delivering outgoing mail to %s", where)
        try:
            while not self.stop_event.is_set():
                self._wake.clear()
                try:
                    full = self._send_batch()[1] >= self.batch_size
                except Exception:
                    # A store error (database locked, connection lost) must not end the thread;
                    # try again after a short pause.
                    log.exception("sender: pass over the outbox failed")
                    self._wait(min(self.base_backoff_seconds, self.idle_poll_seconds))
                    continue
                if full:
                    continue  # more rows may be due right away
                self._wait(self._seconds_to_next_due())
        finally:
            self.close()

    def close(self) -> None:
        """Close the relay connection, if one is open."""
        smtp, self._smtp = self._smtp, None
        self._close(smtp)

    def _wait(self, timeout: float) -> None:
        if self._smtp is not None:
            idle_left = self._smtp_used + self.keep_connection_seconds - time.monotonic()
            if idle_left <= 0:
                self.close()
            elif idle_left < timeout:
                if wait_either(self._wake, self.stop_event, idle_left):
                    return
                self.close()
                timeout -= idle_left
        wait_either(self._wake, self.stop_event, timeout)

    def _seconds_to_next_due(self) -> float:
        timeout = self.idle_poll_seconds
        if self._retry_at:
            until = (min(self._retry_at.values()) - self.clock.now()).total_seconds()
            timeout = min(timeout, max(until, 0.0))
        return timeout

    # --- one pass ---------------------------------------------------------------------------

    def send_due_once(self) -> int:
        """Send the rows due now (one batch); return how many were sent successfully."""
        try:
            return self._send_batch()[0]
        finally:
            self.close()

    def _send_batch(self) -> tuple[int, int]:
        """(sent, rows looked at)."""
        now = self.clock.now()
        for row_id in [i for i, when in self._retry_at.items() if when <= now]:
            del self._retry_at[row_id]
        with self.store.claim_outbound(now, limit=self.batch_size) as batch:
            rows = batch.rows
            if not rows:
                return 0, 0
            # The processor commits without fsync; no reply leaves before its move is on disk.
            self.store.flush()
            self._batch = batch
            try:
                if self.config.relay.host:
                    sent = self._send_via_relay(rows)
                else:
                    sent = self._send_to_maildir(rows)
            finally:
                self._batch = None
        return sent, len(rows)

    def _backoff(self, row: Outbound) -> timedelta:
        cap = self.config.relay.max_backoff_seconds
        exponent = min(max(row.attempts, 0), 32)  # 2**32 * 5 s is far beyond any sane cap
        return timedelta(seconds=min(self.base_backoff_seconds * (2 ** exponent), cap))

    def _failed(self, row: Outbound, error: str) -> None:
        when = self.clock.now() + self._backoff(row)
        assert self._batch is not None
        self._batch.failed(row.id, error[:1000], when)
        self._retry_at[row.id] = when
        log.warning("sender: outbound %d (%s) not sent, attempt %d, next at %s: %s",
                    row.id, row.message_id, row.attempts + 1, when.isoformat(timespec="seconds"),
                    error)

    def _take(self, row: Outbound) -> bool:
        assert self._batch is not None
        return self._batch.take(row)

    def _sent(self, row: Outbound, how: str) -> None:
        assert self._batch is not None
        self._batch.sent(row.id)
        self._retry_at.pop(row.id, None)
        log.info("sender: outbound %d %s to %s via %s", row.id, row.message_id,
                 ", ".join(row.recipients), how)

    # --- Maildir ------------------------------------------------------------------------------

    def _send_to_maildir(self, rows: list[Outbound]) -> int:
        sent = 0
        for row in rows:
            if self.stop_event.is_set():
                break
            if not self._take(row):
                continue
            try:
                if self._maildir is None:
                    self._maildir = Maildir(self.config.outbox_maildir)
                self._maildir.deliver(row.id, row.raw)
            except OSError as exc:
                self._failed(row, f"maildir {self.config.outbox_maildir}: {exc}")
                continue
            self._sent(row, "maildir")
            sent += 1
        return sent

    # --- SMTP relay -----------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        # Built once: loading the CA bundle takes ~20 ms, far more than a local SMTP exchange.
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def _connect(self) -> smtplib.SMTP:
        relay = self.config.relay
        assert relay.host
        local_name = self.config.address.rpartition("@")[2] or socket.gethostname()
        smtp: smtplib.SMTP
        if relay.security == "ssl":
            smtp = smtplib.SMTP_SSL(relay.host, relay.effective_port, local_hostname=local_name,
                                    timeout=relay.timeout_seconds, context=self._context())
        else:
            smtp = smtplib.SMTP(relay.host, relay.effective_port, local_hostname=local_name,
                                timeout=relay.timeout_seconds)
        try:
            smtp.ehlo()
            if relay.security == "starttls":
                smtp.starttls(context=self._context())
                smtp.ehlo()
            if relay.username:
                smtp.login(relay.username, relay.password)
        except BaseException:
            smtp.close()
            raise
        return smtp

    @staticmethod
    def _close(smtp: smtplib.SMTP | None) -> None:
        if smtp is None:
            return
        try:
            smtp.quit()
        except Exception:
            smtp.close()

    def _send_via_relay(self, rows: list[Outbound]) -> int:
        sent = 0
        for index, row in enumerate(rows):
            if self.stop_event.is_set():
                break
            if not self._take(row):
                continue
            options = ["SMTPUTF8"] if _needs_smtputf8(row) else []
            for retry_on_fresh in (True, False):
                reused = self._smtp is not None
                if self._smtp is None:
                    try:
                        self._smtp = self._connect()
                    except (OSError, smtplib.SMTPException) as exc:
                        # The relay is unreachable: every row of this batch waits for the
                        # next attempt rather than each trying (and timing out) on its own.
                        error = f"relay {self.config.relay.host}: {_describe(exc)}"
                        for waiting in rows[index:]:
                            self._failed(waiting, error)
                        return sent
                try:
                    refused = self._smtp.sendmail(row.sender, row.recipients, row.raw,
                                                  mail_options=options)
                except (smtplib.SMTPServerDisconnected, OSError) as exc:
                    self.close()
                    if reused and retry_on_fresh:
                        continue  # the relay closed the idle connection: retry on a new one
                    self._failed(row, f"relay: {_describe(exc)}")
                except smtplib.SMTPException as exc:
                    self._smtp_used = time.monotonic()
                    self._failed(row, f"relay refused: {_describe(exc)}")
                else:
                    self._smtp_used = time.monotonic()
                    if refused:
                        log.warning("sender: outbound %d: relay refused some recipients: %s",
                                    row.id, refused)
                    self._sent(row, "relay")
                    sent += 1
                break
        return sent


def _describe(exc: BaseException) -> str:
    if isinstance(exc, smtplib.SMTPResponseException):
        message = exc.smtp_error
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        return f"{exc.smtp_code} {text}"
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        parts = []
        for rcpt, (code, message) in exc.recipients.items():
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
            parts.append(f"<{rcpt}>: {code} {text}")
        return "; ".join(parts)
    return f"{type(exc).__name__}: {exc}"


def _needs_smtputf8(row: Outbound) -> bool:
    return not all(addr.isascii() for addr in [row.sender, *row.recipients])
