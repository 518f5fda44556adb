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

A mail the relay refuses for good (a 5xx reply to its recipient or its data) is marked given up and
never tried again; ``pbem admin status`` lists it. A recipient refused at RCPT TO ("550 5.1.1 User
unknown") is moreover reported as a bounce (``refusal``), stored with the mark, and the running
server is woken to read it. A relay that cannot be reached, or refuses our
TLS or our login, fails the whole batch with one log line that says which; while mail waits, the
relay is tried again every ``relay.probe_seconds``, and the first connection that works makes
every waiting mail due at once (the per-mail back-off would otherwise keep mails queued for up to
an hour after the relay came back). With ``security`` ``ssl`` or ``starttls`` nothing is ever sent
without TLS: a relay that does not offer STARTTLS, or whose certificate does not verify, is a
failed connection like any other.

Faults of the surroundings are told to the fault tracker (``pbem.faults``), which logs one line when
one starts and one when it ends: the relay failing (no connection, a 421, a 4xx to every mail, a
connection dropped mid-batch), the outbox folder that cannot be written (a full or read-only
disk), the database away. A connection that drops after the message data went out but before the
relay answered may mean the relay has the mail: it is sent again, with the same Message-ID (as an
MTA does), so the recipient's mail system or client can drop the copy; nothing is lost. This process
remembers the last ``RECENTLY_SENT`` mails it sent: one that is due again because its mark could
not be written, or was lost (the database went away, crashed, or its disk filled), is only marked,
not sent again. (Another worker, or this one after a restart, sends it again.)

A mail's next attempt is stored as a wall-clock time. When the wall clock steps back (an NTP
correction), every waiting mail is made due at once (``pbem.clock.StepWatch``), or it would wait
out the step on top of its back-off; the sender's own timers run on the monotonic clock.
"""

from __future__ import annotations

import logging
import smtplib
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta

from pbem.clock import Clock, StepWatch, SystemClock, wait_either
from pbem.config import Config, tls_problem
from pbem.faults import Faults, is_fault, retry_once
from pbem.outbox.maildir import Maildir
from pbem.outbox.refusal import refusal_report
from pbem.outbox.wake import notify
from pbem.plainaddress import quoteaddr
from pbem.store.base import Outbound, OutboxBatch, Store

log = logging.getLogger(__name__)

#: How many sent rows a sender remembers (their ids), so as not to send one again whose mark was
#: lost with the database.
RECENTLY_SENT = 10_000


class PlainQuotingSMTP(smtplib.SMTP):
    """smtplib's MAIL FROM and RCPT TO with the address quoted by ``pbem.plainaddress`` (the same
    result: smtplib's ``quoteaddr`` runs the stdlib's address parser twice a command, for addresses
    that are plain nearly always). The commands are otherwise smtplib's own, ESMTP options (SIZE)
    included; with SMTPUTF8 smtplib's own method runs, for its checks and encoding."""

    def mail(self, sender: str, options: Sequence[str] = ()) -> tuple[int, bytes]:
        if any(option.lower() == "smtputf8" for option in options):
            return super().mail(sender, options)
        optionlist = " " + " ".join(options) if options and self.does_esmtp else ""
        self.putcmd("mail", f"FROM:{quoteaddr(sender)}{optionlist}")
        return self.getreply()

    def rcpt(self, recip: str, options: Sequence[str] = ()) -> tuple[int, bytes]:
        optionlist = " " + " ".join(options) if options and self.does_esmtp else ""
        self.putcmd("rcpt", f"TO:{quoteaddr(recip)}{optionlist}")
        return self.getreply()


class PlainQuotingSMTPSSL(PlainQuotingSMTP, smtplib.SMTP_SSL):
    """``PlainQuotingSMTP`` over implicit TLS."""


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
                 keep_connection_seconds: float = 10.0, faults: Faults | None = None) -> None:
        self.store = store
        self.faults = faults or Faults(clock)
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
        self._retry_at: dict[int, float] = {}  # row id -> next attempt (monotonic), rows failed here
        self._steps = StepWatch()  # the wall clock stepping back
        self._maildir: Maildir | None = None
        self._thread: threading.Thread | None = None
        self._batch: OutboxBatch | None = None  # the claim being sent
        self._recently_sent: OrderedDict[int, None] = OrderedDict()  # ids, oldest first
        self._reset_due = False  # the relay came back during a batch: reset the back-off after it
        self._relay_failing = False  # the last connection attempt failed
        self._reported = False  # a refusal was stored as a bounce: wake the processor after the batch
        self._last_probe = 0.0  # time.monotonic() of the last connection attempt while failing
        self.last_relay_error: str | None = None

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
                    total = self._pass()
                except Exception as exc:
                    # A store error (database locked, connection lost, disk full) must not end the
                    # thread; try again after a short pause (or when the fault ends).
                    if is_fault(exc):
                        self.faults.failed("database", "sender", exc)
                    else:
                        log.exception("sender: pass over the outbox failed")
                    self._wait(min(self.base_backoff_seconds, self.idle_poll_seconds))
                    continue
                full = total >= self.batch_size
                if full:
                    continue  # more rows may be due right away
                self._wait(self._seconds_to_next_due())
        finally:
            self.close()

    def _pass(self) -> int:
        """One batch; rows looked at. After a fault of the database once more at once: a
        connection the database dropped (a restart) fails its first use only."""
        total = retry_once(self._send_batch)[1]
        if total:
            self.faults.ok("database")  # the batch's marks were written
        return total

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
            until = min(self._retry_at.values()) - time.monotonic()
            timeout = min(timeout, max(until, 0.0))
        if self._relay_failing:
            probe = self._last_probe + self.config.relay.probe_seconds - time.monotonic()
            timeout = min(timeout, max(probe, 0.0))
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
        back = self._steps.back(now)
        if back is not None:
            self._clock_went_back(back, now)
        mono = time.monotonic()
        for row_id in [i for i, when in self._retry_at.items() if when <= mono]:
            del self._retry_at[row_id]
        sent, total = self._send_due(now)
        if not total and self._probe_due():
            sent, total = self._send_due(self.clock.now())
        return sent, total

    def _clock_went_back(self, back: timedelta, now: datetime) -> None:
        """The wall clock stepped back: a mail's next attempt is a wall-clock time, and would wait
        out the step on top of its back-off (an hour, for an NTP correction of an hour). Every
        waiting mail is due now instead, as when the relay comes back."""
        self._retry_at.clear()
        count = self.store.reset_backoff(now)
        log.warning("sender: the clock went back by %s; %d waiting mail(s) are due now instead of "
                    "after it", _span(back), count)

    def _send_due(self, now: datetime) -> tuple[int, int]:
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
        if self._reported:  # the reports are stored now: the processor reads them at once
            self._reported = False
            notify(self.config.data_dir)
        if self._reset_due:  # not inside the batch: a row claim may hold a transaction open
            self._reset_due = False
            count = self.store.reset_backoff(self.clock.now())
            log.debug("sender: %d waiting mail(s) due now", count)
        return sent, len(rows)

    def _backoff(self, row: Outbound, first: bool = False) -> timedelta:
        cap = self.config.relay.max_backoff_seconds
        exponent = 0 if first else min(max(row.attempts, 0), 32)  # 2**32 * 5 s: beyond any cap
        return timedelta(seconds=min(self.base_backoff_seconds * (2 ** exponent), cap))

    def _failed(self, row: Outbound, error: str, quiet: bool = False,
                backoff: timedelta | None = None) -> None:
        delay = backoff if backoff is not None else self._backoff(row)
        when = self.clock.now() + delay
        assert self._batch is not None
        self._batch.failed(row.id, error[:1000], when)
        self._retry_at[row.id] = time.monotonic() + delay.total_seconds()
        (log.debug if quiet else log.warning)(
            "sender: outbound %d (%s) not sent, attempt %d, next at %s: %s", row.id,
            row.message_id, row.attempts + 1, when.isoformat(timespec="seconds"), error)

    def _given_up(self, row: Outbound, error: str,
                  refused: dict[str, tuple[int, str]] | None = None) -> None:
        assert self._batch is not None
        report = None
        if refused:  # an address that takes no mail: a bounce, for the games to know
            relay = self.config.relay
            domain = self.config.address.rpartition("@")[2] or socket.gethostname()
            report = refusal_report(row, refused, f"{relay.host}:{relay.effective_port}", domain,
                                    self.clock.now())
            self._reported = True
        self._batch.given_up(row.id, error[:1000], report)
        self._retry_at.pop(row.id, None)
        log.error("sender: outbound %d (%s) to %s given up, the relay refused it for good: %s",
                  row.id, row.message_id, ", ".join(row.recipients), error)

    # --- the relay's health ---------------------------------------------------------------

    def _probe_due(self) -> bool:
        """While the relay fails and mail waits, connect every ``probe_seconds``; when that works,
        every waiting mail is due now (True)."""
        if not self._relay_failing or not self.config.relay.host:
            return False
        if time.monotonic() - self._last_probe < self.config.relay.probe_seconds:
            return False
        if not self.store.outbound_counts().get("pending"):
            return False
        try:
            self._smtp = self._connect()
        except (OSError, smtplib.SMTPException) as exc:
            self._connection_failed(exc, waiting=None)
            return False
        self._smtp_used = time.monotonic()
        self._relay_back()
        return True

    def _connection_failed(self, exc: BaseException, waiting: int | None) -> str:
        """The relay cannot be reached (or refuses our TLS or login): one fault for the tracker,
        saying why (not a line per attempt or per waiting mail)."""
        relay = self.config.relay
        error = f"relay {relay.host}:{relay.effective_port}: {_describe(exc)}"
        self._relay_failing = True
        self._last_probe = time.monotonic()
        self.last_relay_error = error
        self.faults.failed("relay", "sender", f"{error}; tried again every "
                                              f"{self.config.relay.probe_seconds:g} s")
        log.debug("sender: %s; %s", error,
                  f"{waiting} mail(s) wait" if waiting is not None else "mail waits")
        return error

    def _relay_trouble(self, error: str) -> None:
        """The relay answered 421, a temporary refusal of the transaction, or dropped the
        connection: the mail waits (quietly), the tracker hears of the relay's fault, and the
        relay is probed again like one that cannot be reached."""
        self._relay_failing = True
        self._last_probe = time.monotonic()
        self.last_relay_error = error
        self.faults.failed("relay", "sender", error)

    def _relay_back(self) -> None:
        if not self._relay_failing:
            return
        self._relay_failing = False
        self.last_relay_error = None
        self._retry_at.clear()
        if self._batch is not None:
            self._reset_due = True
            return
        count = self.store.reset_backoff(self.clock.now())
        log.debug("sender: relay %s reachable again; %d waiting mail(s) due now",
                  self.config.relay.host, count)

    def _take(self, row: Outbound) -> bool:
        """Take the row for sending; False when it is not to be sent now: another worker's
        sender has it, or it left already and only its mark was not written (it is marked now)."""
        assert self._batch is not None
        if not self._batch.take(row):
            return False
        if row.id in self._recently_sent:
            self._batch.sent(row.id)
            self._retry_at.pop(row.id, None)
            log.debug("sender: outbound %d %s left before; marked sent now", row.id, row.message_id)
            return False
        return True

    def _sent(self, row: Outbound, how: str) -> None:
        assert self._batch is not None
        self._recently_sent[row.id] = None  # before the mark, which may fail
        if len(self._recently_sent) > RECENTLY_SENT:
            self._recently_sent.popitem(last=False)
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
                error = f"maildir {self.config.outbox_maildir}: {exc}"
                if is_fault(exc):  # a full or read-only disk: one line from the tracker, and
                    # a try every few seconds, not after a back-off grown while it lasted
                    self.faults.failed("outbox", "sender", exc)
                    self._failed(row, error, quiet=True, backoff=self._backoff(row, first=True))
                else:
                    self._failed(row, error)
                continue
            self._sent(row, "maildir")
            self.faults.ok("outbox")
            sent += 1
        return sent

    # --- SMTP relay -----------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        # Built once: loading the CA bundle takes ~20 ms, far more than a local SMTP exchange.
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context(cafile=self.config.relay.ca_file or None)
        return self._ssl_context

    def _connect(self) -> smtplib.SMTP:
        relay = self.config.relay
        assert relay.host
        local_name = self.config.address.rpartition("@")[2] or socket.gethostname()
        smtp: smtplib.SMTP
        if relay.security == "ssl":
            smtp = PlainQuotingSMTPSSL(relay.host, relay.effective_port, local_hostname=local_name,
                                   timeout=relay.timeout_seconds, context=self._context())
        else:
            smtp = PlainQuotingSMTP(relay.host, relay.effective_port, local_hostname=local_name,
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
                        # The relay is unreachable (or refuses our TLS or login): every row of
                        # this batch waits for the next attempt rather than each trying (and
                        # timing out) on its own.
                        error = self._connection_failed(exc, len(rows) - index)
                        for waiting in rows[index:]:
                            self._failed(waiting, error, quiet=True)
                        return sent
                    self._relay_back()
                try:
                    refused = self._smtp.sendmail(row.sender, row.recipients, row.raw,
                                                  mail_options=options)
                except (smtplib.SMTPResponseException, smtplib.SMTPRecipientsRefused) as exc:
                    # The relay answered and refused this mail. (Checked before OSError, which
                    # every smtplib exception is a subclass of.)
                    self._smtp_used = time.monotonic()
                    if _permanent(exc):
                        self._given_up(row, f"relay refused: {_describe(exc)}",
                                       _refused_at_rcpt(exc))
                    elif _relay_wide(exc):
                        # 421 (closing), or 4xx at MAIL or DATA: the relay's trouble, not this
                        # mail's; it and the rest of the batch wait for the relay's return
                        error = f"relay refused: {_describe(exc)}"
                        self._relay_trouble(error)
                        if isinstance(exc, smtplib.SMTPResponseException) and exc.smtp_code == 421:
                            self.close()
                        for waiting in rows[index:]:
                            self._failed(waiting, error, quiet=True)
                        return sent
                    else:
                        self._failed(row, f"relay refused: {_describe(exc)}")
                except OSError as exc:  # disconnected, timed out, or a protocol error
                    self.close()
                    if reused and retry_on_fresh:
                        continue  # the relay closed the idle connection: retry on a new one
                    # Dropped mid-transaction, perhaps after the data went out and before the
                    # answer: the relay may have the mail. It is sent again later with the same
                    # Message-ID (see the module docstring).
                    error = f"relay: {_describe(exc)}"
                    self._relay_trouble(error)
                    self._failed(row, error, quiet=True)
                else:
                    self._smtp_used = time.monotonic()
                    if refused:
                        log.warning("sender: outbound %d: relay refused some recipients: %s",
                                    row.id, refused)
                    self._sent(row, "relay")
                    self.faults.ok("relay")
                    sent += 1
                break
        return sent


#: 5xx replies that are about our own login, not about the mail: retried, never given up.
_AUTH_CODES = (530, 534, 535, 538)


def _permanent(exc: smtplib.SMTPException) -> bool:
    """A 5xx reply about this mail (its recipients, its sender, its content): retrying cannot help."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _message in exc.recipients.values()]
        return bool(codes) and all(500 <= code < 600 for code in codes)
    if isinstance(exc, smtplib.SMTPResponseException):
        return 500 <= exc.smtp_code < 600 and exc.smtp_code not in _AUTH_CODES
    return False


def _relay_wide(exc: smtplib.SMTPException) -> bool:
    """A temporary refusal that is about the relay, not about one recipient: 421 (the relay is
    closing the connection), or 4xx to MAIL FROM or to the data."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return False
    if isinstance(exc, smtplib.SMTPResponseException):
        return exc.smtp_code == 421 or isinstance(exc, smtplib.SMTPSenderRefused
                                                  | smtplib.SMTPDataError)
    return False


def _refused_at_rcpt(exc: smtplib.SMTPException) -> dict[str, tuple[int, str]]:
    """The recipients a 5xx reply to RCPT TO refused (code, words): addresses that take no mail."""
    if not isinstance(exc, smtplib.SMTPRecipientsRefused):
        return {}
    return {rcpt: (code, _text(message)) for rcpt, (code, message) in exc.recipients.items()
            if 500 <= code < 600}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return (f"login refused ({exc.smtp_code} {_text(exc.smtp_error)}); check [relay] username "
                "and password")
    tls = tls_problem(exc, "relay")
    if tls:
        return tls
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return f"{exc}; nothing is sent without it"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        parts = []
        for rcpt, (code, message) in exc.recipients.items():
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
            parts.append(f"<{rcpt}>: {code} {text}")
        return "; ".join(parts)
    return f"{type(exc).__name__}: {exc}"


def _span(delta: timedelta) -> str:
    """``1:00:00`` for a step of an hour, to the second."""
    return str(timedelta(seconds=round(delta.total_seconds())))


def _text(message: bytes | str) -> str:
    return message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)


def _needs_smtputf8(row: Outbound) -> bool:
    return not all(addr.isascii() for addr in [row.sender, *row.recipients])
