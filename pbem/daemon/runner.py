"""``pbem serve``: the long-running server that ties the doors to the processor.

Threads, and the Events that connect them (no sleeps on the hot path, because the goal is a reply
leaving within half a second of the mail arriving):

* intake: the SMTP listener and/or the IMAP watcher store raw messages and call ``wake()``;
* the processor thread waits on the wake Event, runs ``processor.process_pending()`` until it
  returns 0, then tells the IMAP watcher (move what was processed) and the sender (send what
  was queued);
* the sender delivers the outbox;
* the role keeper (``pbem.daemon.roles``) takes the IMAP watcher and the scheduler roles when no other
  worker on the same database holds them, and writes this worker's heartbeat.

With ``processor_process=True`` (what ``pbem serve`` uses) the processor loop runs in a forked child
process instead of a thread, so that its CPU work (parsing, rules, rendering, composing) gets a core
of its own instead of sharing one interpreter lock with the doors and the sender. The two sides share
only the database and two pipes (wake: parent to child; done: child to parent). With ``processors``
above 1 (``[server] processors``) there are that many children, each with its pipes and its share of
the games (``Processor.share``); on SQLite each applies its moves outside the write lock
(``pbem.store.optimistic``), so they work side by side and only their commits take turns. Pipes, not
multiprocessing Events: an Event's set() can block forever once a waiter was killed, and surviving a
killed process is the point; a dead peer is simply end-of-file. The child is forked before any thread
starts and is killed by the kernel if the parent dies. Tests that embed the daemon in a
multi-threaded process keep the default (a thread), since forking such a process is unsafe.

Faults of the surroundings (the database away or its disk full, the outbox folder, the IMAP server,
the relay) go to one tracker (``pbem.faults``): one log line when a fault starts and one when it
ends, instead of a traceback per retry in every thread; the processor process reports its own
through the done pipe. When a fault ends, everything that waited for it is woken. ``pbem status``
asks the tracker through the wake socket (``Daemon.status``).

At start the processor runs once unconditionally and the sender looks at the outbox: whatever a
previous run left pending (a crash between intake and processing, or between queueing and
sending) is handled before new mail. That, plus the store's de-duplication and the watcher's
rescans, is the whole crash-recovery story.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import select
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

from pbem.clock import Clock, SystemClock, wait_either
from pbem.community.scheduler import Scheduler
from pbem.config import Config
from pbem.daemon.roles import Role, RoleKeeper
from pbem.daemon.thinker import Thinker, die_with_parent
from pbem.doors.imap_watcher import ImapWatcher
from pbem.doors.smtp_listener import SmtpListener
from pbem.faults import CONFIRM_SECONDS, Faults, is_fault, reason_of, retry_once
from pbem.outbox.sender import OutboxSender
from pbem.outbox.wake import WakeListener
from pbem.processing.homes import Homes
from pbem.processing.processor import FAIR_CHUNK
from pbem.store.base import Store

log = logging.getLogger(__name__)

MAX_PROCESSOR_BACKOFF_SECONDS = 30.0
#: How soon a processor that found none of its share in a full fair round looks again.
STARVED_LOOK_SECONDS = 0.05


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
                 sender_options: dict[str, object] | None = None,
                 role_options: dict[str, float] | None = None,
                 processor_process: bool = False, processors: int = 1) -> None:
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
        self.faults = Faults(self.clock, confirm_seconds=CONFIRM_SECONDS, on_end=self._fault_ended)

        self.sender = OutboxSender(store, config, self.clock, self._stop, faults=self.faults,
                                   **(sender_options or {}))  # type: ignore[arg-type]
        self.smtp: SmtpListener | None = None
        if config.smtp_enabled:
            self.smtp = SmtpListener(config, store, self.clock, wake=self.wake, faults=self.faults)
        self.imap: ImapWatcher | None = None
        self._imap_stop = threading.Event()  # set when the daemon stops or the IMAP role is lost
        if config.imap.host:
            options: dict[str, object] = {"max_message_bytes": config.max_message_bytes,
                                          "faults": self.faults}
            options.update(imap_options or {})
            self.imap = ImapWatcher(config.imap, store, self.clock, wake=self.wake,
                                    stop=self._imap_stop, **options)  # type: ignore[arg-type]
        self.processed_total = 0
        self._failures = 0  # processing failures in a row, for the back-off
        self.failure: str | None = None  # why the daemon stopped by itself, if it did
        self.processor_process = processor_process
        # Processor processes: each takes its share of the games (``Processor.share``).
        self.processors = max(processors, 1) if processor_process else 1
        self._children: list[multiprocessing.process.BaseProcess] = []
        self._mp = multiprocessing.get_context("fork") if processor_process else None
        self._wake_ws: list[int] = []  # parent's ends of the wake pipes, one per child
        self._pipe_lock = threading.Lock()  # wake() must not write to a descriptor stop() closed
        self._done_rs: list[int] = []  # parent's ends of the done pipes
        # Deadlines, reminders and outage recovery; composes mails with the processor's secret.
        self.scheduler_interval_seconds = scheduler_interval_seconds
        self.scheduler = Scheduler(config, store, self.clock, secret=getattr(processor, "secret", None))
        self._scheduler_wake = threading.Event()
        roles = [Role("scheduler", self._scheduler_wake.set, lambda: None)]
        if self.imap is not None:
            roles.append(Role("imap", self._start_imap, self._stop_imap))
        self.roles = RoleKeeper(store, self.clock, roles, self._stop, faults=self.faults,
                                **(role_options or {}))  # type: ignore[arg-type]
        # Computer players think in worker processes of their own; their moves come in as mail.
        secret = getattr(processor, "secret", None)
        self.thinker = Thinker(config, store, self.clock, secret, self.wake, self._stop,
                               processor_poll_seconds, faults=self.faults,
                               active=lambda: self.roles.holds("scheduler")
                               and not self.faults.active("database")) if secret is not None else None
        # Tools on this machine (``pbem admin``, ``pbem deliver``) that queued or stored mail wake
        # us instead of waiting for a poll; ``pbem status`` asks through the same socket.
        self.waker = WakeListener(config.data_dir, self._woken, status=self.status)

    # --- control --------------------------------------------------------------------------

    def wake(self) -> None:
        """New inbound mail was stored: run the processor now. Safe from any thread."""
        self._wake.set()
        with self._pipe_lock:
            for wake_w in self._wake_ws:
                _poke(wake_w)

    def _woken(self) -> None:
        """Another process queued mail or stored a message, or moved a movable clock: look at both
        queues and the deadlines now."""
        self.wake()
        self.sender.wake()
        self._scheduler_wake.set()

    def _fault_ended(self, kind: str) -> None:
        """What waited for the database, the outbox folder or the relay is done now, not after its
        back-off."""
        if kind == "database":
            self.wake()
            self._scheduler_wake.set()
            self._computer_wake()
        self.sender.wake()

    def status(self) -> dict[str, object]:
        """What ``pbem status`` shows of this server besides the database: its faults now."""
        return {"pid": os.getpid(), "faults": self.faults.snapshot()}

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
        if self._mp is not None:
            # Fork first, while this process has no other threads.
            for share in range(self.processors):
                wake_r, wake_w = os.pipe()
                done_r, done_w = os.pipe()
                os.set_blocking(wake_w, False)
                os.set_blocking(done_w, False)
                parents_ends = (*self._wake_ws, *self._done_rs, wake_w, done_r)
                child = self._mp.Process(target=self._processor_child,
                                         args=(wake_r, done_w, parents_ends, share),
                                         name=f"pbem-processor-{share}", daemon=True)
                child.start()
                self._children.append(child)
                os.close(wake_r)
                os.close(done_w)
                self._wake_ws.append(wake_w)
                self._done_rs.append(done_r)
                _poke(wake_w)  # crash recovery: process whatever is pending right away
            self._spawn(self._processed_bridge, "pbem-processed")
        else:
            self._spawn(self._processor_loop, "pbem-processor")
        self._spawn(self._scheduler_loop, "pbem-scheduler")
        self._threads.append(self.sender.start())
        if not self.store.one_writer:
            self._spawn(self._watch_inbound, "pbem-inbound-watch")
        if self.thinker is not None:
            self._threads.append(self.thinker.start())
        self.waker.start()
        self._imap_stop.clear()
        self.roles.start()  # takes the IMAP and scheduler roles now if no other worker has them
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
        self._scheduler_wake.set()
        self.sender.wake()
        self._computer_wake()
        self.roles.stop()
        self.waker.stop()
        if self._children:
            with self._pipe_lock:
                wake_ws, self._wake_ws = self._wake_ws, []
                for wake_w in wake_ws:
                    os.close(wake_w)  # end-of-file on the wake pipe tells the child to stop
            for child in self._children:
                child.join(timeout)
                if child.is_alive():
                    log.warning("daemon: processor process did not stop within %.0f s", timeout)
                    child.kill()
                    child.join()
            self._children = []
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

    def _drain(self, on_batch: Callable[[int], None], pause: Callable[[float], None],
               fault: Callable[[BaseException | None], None]) -> None:
        """Process until nothing is pending, in the processor thread or the processor process.

        The processor marks a message it cannot handle as failed; an exception here is a store
        problem (locked, disconnected, the disk full): wait with back-off (the pending messages
        are still there) and return, so the caller's loop tries again; never die of it. A fault of
        the surroundings goes to ``fault(exc)`` (the tracker says it once), and ``fault(None)``
        reports the first batch that committed after such failures; anything else is a bug and
        is logged with its traceback.
        """
        while not self._stop.is_set():
            try:
                count = self._process_round()
            except Exception as exc:
                self._failures += 1
                delay = min(self.processor_error_backoff_seconds * 2 ** (self._failures - 1),
                            MAX_PROCESSOR_BACKOFF_SECONDS)
                if is_fault(exc):
                    fault(exc)
                    log.debug("daemon: processing waits for the database (%d in a row): %s",
                              self._failures, exc)
                else:
                    log.exception("daemon: processing pending messages failed (%d in a row); "
                                  "retrying in %.1f s", self._failures, delay)
                pause(delay)
                return
            recovered, self._failures = self._failures > 0, 0
            if count <= 0:
                return
            if recovered:
                fault(None)
            on_batch(count)

    def _process_round(self) -> int:
        # One fair round at a time: its replies can leave while the next round is processed
        # (after a hundred they left in bursts, and the last burst after all).
        return retry_once(lambda: self.processor.process_pending(limit=FAIR_CHUNK))

    def _processor_loop(self) -> None:
        def committed(count: int) -> None:
            self.processed_total += count
            # Each batch committed: its replies can leave and its IMAP messages can move.
            self.sender.wake()
            self._computer_wake()
            if self.imap is not None:
                self.imap.notify_processed()

        def pause(delay: float) -> None:
            wait_either(self._wake, self._stop, delay)  # the end of the fault cuts it short
            self._wake.set()

        def fault(exc: BaseException | None) -> None:
            if exc is None:
                self.faults.ok("database")
            else:
                self.faults.failed("database", "processor", exc)

        while not self._stop.is_set():
            wait_either(self._wake, self._stop, self._idle_seconds())
            self._wake.clear()
            self._drain(committed, pause, fault)

    def _idle_seconds(self) -> float:
        """How long the processor waits for a wake-up: its poll, or less when it left mail to
        another worker for a moment (``Processor.look_again``)."""
        look_again = getattr(self.processor, "look_again", None)
        return min(self.processor_poll_seconds, look_again or self.processor_poll_seconds)

    def _watch_inbound(self) -> None:
        """Mail another worker stored for a game homed here (``pbem.processing.homes``) wakes this
        worker's processor at once, not at its next poll: the worker that stored it leaves it to
        its home for a moment (``Processor._take_round``). Mail about no known game wakes every
        worker, as the intake's own does."""
        name = getattr(getattr(self.processor, "homes", None), "name", None)
        homes = Homes(self.store, name)

        def stored(game_id: str | None) -> None:
            try:
                mine = game_id is None or game_id in homes.own([game_id])
            except Exception:  # cannot tell now: wake it, its processor sorts the mail out
                mine = True
            if mine:
                self.wake()

        self.store.watch_inbound(stored, self._stop)

    # --- the processor process -------------------------------------------------------------

    def _processor_child(self, wake_r: int, done_w: int, parents_ends: tuple[int, ...],
                         share: int = 0) -> None:
        """The processor loop in its own process; ends at end-of-file on the wake pipe (the parent
        closed it, or died). ``share``: which of the ``processors`` shares of the games it takes."""
        for fd in parents_ends:  # inherited through fork; held open here they would hide the EOF
            os.close(fd)
        if self.processors > 1:
            self.processor.share = (share, self.processors)  # type: ignore[attr-defined]
            self.processor.optimistic = self.store.one_writer  # type: ignore[attr-defined]
        # Opened now, while the data folder can be written: one that turns read-only later (a
        # remount) leaves what is open writable, and this processor's share is not stuck.
        with contextlib.suppress(Exception):  # the database away: the first round says so
            self.store.open_now()
        die_with_parent()
        if os.getppid() == 1:  # the parent died before the request above took effect
            os._exit(0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops us
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        def pause(delay: float) -> None:
            select.select([wake_r], [], [], delay)  # a stop (end-of-file) or a wake cuts it short

        def fault(exc: BaseException | None) -> None:
            # to the parent's tracker: "F reason" when failing, "K" when working again
            line = b"K" if exc is None else b"F" + reason_of(exc).replace("\n", " ").encode()[:2000]
            with contextlib.suppress(BlockingIOError, BrokenPipeError):
                os.write(done_w, line + b"\n")

        try:
            while True:
                # A processor that saw a fair round full of the other processors' mail looks
                # again soon: its own may be behind it, and nothing else would wake it for that.
                wait = STARVED_LOOK_SECONDS if getattr(self.processor, "starved", False) \
                    else self._idle_seconds()
                readable, _, _ = select.select([wake_r], [], [], wait)
                if readable and not os.read(wake_r, 4096):
                    break  # end-of-file: stop
                self._drain(lambda _count: _poke(done_w), pause, fault)
        finally:
            try:
                self.store.close()
            finally:
                os._exit(0)  # never run the parent's atexit handlers or finalizers here

    def _processed_bridge(self) -> None:
        """In the parent: a child committed a batch, so replies can leave and IMAP can move."""
        done_rs = list(self._done_rs)
        children = dict(zip(done_rs, self._children, strict=True))
        pending = dict.fromkeys(done_rs, b"")
        try:
            while not self._stop.is_set():
                readable, _, _ = select.select(done_rs, [], [], 0.2)
                batches = 0
                for done_r in readable:
                    data = os.read(done_r, 4096)
                    if not data:  # end-of-file: the child is gone
                        if not self._stop.is_set():
                            self.failure = f"the processor process died (exit {children[done_r].exitcode})"
                            log.error("daemon: %s; stopping", self.failure)
                            self._stop.set()
                        return
                    count, pending[done_r] = self._child_says(pending[done_r] + data)
                    batches += count
                if not batches:
                    continue
                self.sender.wake()
                self._computer_wake()
                if self.imap is not None:
                    self.imap.notify_processed()
        finally:
            self._done_rs = []
            for done_r in done_rs:
                os.close(done_r)

    def _child_says(self, data: bytes) -> tuple[int, bytes]:
        """The processor process's messages: "." a batch committed; "F reason" and "K" a fault of
        the database and its end (lines). Returns the batches and what is not complete yet."""
        batches = 0
        while data:
            if data[:1] == b".":
                batches += 1
                data = data[1:]
                continue
            end = data.find(b"\n")
            if end < 0:
                break
            line, data = data[:end], data[end + 1:]
            if line[:1] == b"F":
                self.faults.failed("database", "processor", line[1:].decode("utf-8", "replace"))
            elif line[:1] == b"K":
                self.faults.ok("database")
        return batches, data

    def _computer_wake(self) -> None:
        """A batch was processed: a computer seat may be to move."""
        if self.thinker is not None:
            self.thinker.wake()

    # --- the scheduler thread ---------------------------------------------------------------

    def _scheduler_loop(self) -> None:
        """While this worker holds the scheduler role: runs when it gains it (recovering from an
        outage first) and then every interval; a failing run is logged and retried at the next
        interval, since every action it takes is once-keyed."""
        while not self._stop.is_set():
            # Not while the database is away (its first steps would each fail with a traceback);
            # the end of the fault wakes this loop.
            if self.roles.holds("scheduler") and not self.faults.active("database"):
                try:
                    if self.scheduler.run_once():
                        self.sender.wake()
                except Exception as exc:
                    if is_fault(exc):
                        self.faults.failed("database", "scheduler", exc)
                    else:
                        log.exception("daemon: scheduler run failed; retrying in %.0f s",
                                      self.scheduler_interval_seconds)
            self._scheduler_wake.wait(self.scheduler_interval_seconds)
            self._scheduler_wake.clear()

    # --- the IMAP role -------------------------------------------------------------------------

    def _start_imap(self) -> None:
        assert self.imap is not None
        self._imap_stop.clear()
        self.imap.start()
        log.info("daemon: IMAP door: watching %s", self.imap.where)

    def _stop_imap(self) -> None:
        """The role went to another worker (or the daemon stops): leave the mailbox to it."""
        assert self.imap is not None
        self._imap_stop.set()
        self.imap.join(30)


def _poke(fd: int) -> None:
    """One byte into a non-blocking pipe; a full pipe already says "wake up"."""
    with contextlib.suppress(BlockingIOError, BrokenPipeError):
        os.write(fd, b".")
