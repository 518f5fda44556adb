"""``pbem serve``: the long-running server that ties the doors to the processor.

Threads, and the Events that connect them (no sleeps on the hot path, because the goal is a reply
leaving within half a second of the mail arriving):

* intake: the SMTP listener and/or the IMAP watcher store raw messages and call ``wake()``;
* the processor thread waits on the wake Event, runs ``processor.process_pending()`` until it
  returns 0, then tells the IMAP watcher (move what was processed) and the sender (send what
  was queued);
* the sender delivers the outbox.

At start the processor runs once unconditionally and the sender looks at the outbox: whatever a
previous run left pending (a crash between intake and processing, or between queueing and
sending) is handled before new mail. That, plus the store's de-duplication and the watcher's
rescans, is the whole crash-recovery story.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import Protocol

from pbem.clock import Clock, SystemClock, wait_either
from pbem.config import Config
from pbem.scheduler import Scheduler
from pbem.store.base import Store
from pbem.transport.imap_watcher import ImapWatcher
from pbem.transport.sender import OutboxSender
from pbem.transport.smtp_listener import SmtpListener

log = logging.getLogger(__name__)

MAX_PROCESSOR_BACKOFF_SECONDS = 30.0


class Processor(Protocol):
    def process_pending(self, limit: int = 100) -> int:
        """Process up to ``limit`` pending inbound messages; return how many were processed."""
        ...


class Daemon:
    """The server: ``start()`` and ``stop()`` for embedding and tests, ``run_forever()`` for the CLI.

    ``processor_poll_seconds`` is a safety net: the processor also runs that often without a
    wake-up (for messages another process, such as ``pbem deliver``, stored). The keyword
    arguments ``imap_options`` and ``sender_options`` pass tuning knobs through to
    ``ImapWatcher`` and ``OutboxSender``.
    """

    def __init__(self, config: Config, store: Store, processor: Processor,
                 clock: Clock | None = None, *, processor_poll_seconds: float = 5.0,
                 processor_error_backoff_seconds: float = 1.0,
                 scheduler_interval_seconds: float = 60.0,
                 imap_options: dict[str, object] | None = None,
                 sender_options: dict[str, object] | None = None) -> None:
        self.config = config
        self.store = store
        self.processor = processor
        self.clock = clock or SystemClock()
        self.processor_poll_seconds = processor_poll_seconds
        self.processor_error_backoff_seconds = processor_error_backoff_seconds
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started = False

        self.sender = OutboxSender(store, config, self.clock, self._stop,
                                   **(sender_options or {}))  # type: ignore[arg-type]
        self.smtp: SmtpListener | None = None
        if config.smtp_enabled:
            self.smtp = SmtpListener(config, store, self.clock, wake=self.wake)
        self.imap: ImapWatcher | None = None
        if config.imap.host:
            options: dict[str, object] = {"max_message_bytes": config.max_message_bytes}
            options.update(imap_options or {})
            self.imap = ImapWatcher(config.imap, store, self.clock, wake=self.wake,
                                    stop=self._stop, **options)  # type: ignore[arg-type]
        self.processed_total = 0
        # Deadlines, reminders and outage recovery; composes mails with the processor's secret.
        self.scheduler_interval_seconds = scheduler_interval_seconds
        self.scheduler = Scheduler(config, store, self.clock, secret=getattr(processor, "secret", None))

    # --- control --------------------------------------------------------------------------

    def wake(self) -> None:
        """New inbound mail was stored: run the processor now. Safe from any thread."""
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def start(self) -> None:
        """Open the doors and start the threads; returns once the SMTP port is listening."""
        if self._started:
            return
        self._started = True
        self._stop.clear()
        self._wake.set()  # crash recovery: process whatever is pending right away
        self._spawn(self._processor_loop, "pbem-processor")
        self._spawn(self._scheduler_loop, "pbem-scheduler")
        self._threads.append(self.sender.start())
        if self.imap is not None:
            self._threads.append(self.imap.start())
            log.info("daemon: IMAP door: watching %s", self.imap.where)
        if self.smtp is not None:
            try:
                self.smtp.start()
            except BaseException:
                self.stop()
                raise
            log.info("daemon: SMTP door open on %s:%d for <%s>", self.smtp.host, self.smtp.port,
                     self.config.address)
        log.info("daemon: started")

    def stop(self, timeout: float = 10.0) -> None:
        """Close the doors first (no new intake), then let the threads finish what they do."""
        if self.smtp is not None:
            self.smtp.stop()
        self._stop.set()
        self._wake.set()
        self.sender.wake()
        for thread in self._threads:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("daemon: thread %s did not stop within %.0f s", thread.name, timeout)
        self._threads.clear()
        self._started = False
        log.info("daemon: stopped")

    def run_forever(self) -> None:
        """Start, then serve until SIGTERM or SIGINT (or ``stop()`` from another thread).

        Must be called from the main thread, where Python delivers signals.
        """
        def on_signal(signum: int, frame: FrameType | None) -> None:
            log.info("daemon: %s received, stopping", signal.Signals(signum).name)
            self._stop.set()
            self._wake.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            while not self._stop.wait(1.0):
                pass
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _spawn(self, target: object, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    # --- the processor thread ---------------------------------------------------------------

    def _processor_loop(self) -> None:
        failures = 0
        while not self._stop.is_set():
            wait_either(self._wake, self._stop, self.processor_poll_seconds)
            self._wake.clear()
            while not self._stop.is_set():
                try:
                    count = self.processor.process_pending()
                except Exception:
                    # The processor marks a message it cannot handle as failed; an exception
                    # here is a store problem (locked, disconnected): retry with back-off (the
                    # pending messages are still there), don't die.
                    failures += 1
                    delay = min(self.processor_error_backoff_seconds * 2 ** (failures - 1),
                                MAX_PROCESSOR_BACKOFF_SECONDS)
                    log.exception("daemon: processing pending messages failed (%d in a row); "
                                  "retrying in %.1f s", failures, delay)
                    self._stop.wait(delay)
                    self._wake.set()
                    break
                failures = 0
                if count <= 0:
                    break
                self.processed_total += count
                # Each batch committed: its replies can leave and its IMAP messages can move.
                self.sender.wake()
                if self.imap is not None:
                    self.imap.notify_processed()

    # --- the scheduler thread ---------------------------------------------------------------

    def _scheduler_loop(self) -> None:
        """Runs at start (recovering from an outage first) and then every interval; a failing run
        is logged and retried at the next interval, since every action it takes is once-keyed."""
        while not self._stop.is_set():
            try:
                if self.scheduler.run_once():
                    self.sender.wake()
            except Exception:
                log.exception("daemon: scheduler run failed; retrying in %.0f s",
                              self.scheduler_interval_seconds)
            self._stop.wait(self.scheduler_interval_seconds)
