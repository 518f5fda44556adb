"""Faults of what pbem runs on: the database, the outbox folder's disk, the IMAP server, the relay.

Each of them fails now and then (PostgreSQL restarts, a disk fills, Dovecot is upgraded, the relay
answers 421), and every thread and process of the server that depends on one meets the failure
on its own, again at every retry. Logging each of those with a traceback buried the one fact an
administrator needs under hundreds of lines. So each failure of the surroundings is reported
here instead, and the log says it once when the fault starts (what fails, why, what pbem does
meanwhile) and once when it ends (after how long). ``pbem status`` asks the running server for
the faults it has now (``Faults.snapshot``, through its socket: that works while the database is
away and while the disk is full or read-only, when neither the database nor a file could say so).

A fault ends at the first success of an operation that needs what failed (a write for the
database, a delivered mail for the relay, a session for the IMAP server). The database's only once
no failure was reported for ``settle_seconds``: right after a restart every thread's and
process's old connection fails once more, and those late echoes must not end and restart the
fault (its heartbeat, every two seconds, ends it then). Failures that are not of the surroundings (a bug) are
not faults: callers still log them with their traceback.

A failure that is mended at once is no fault to tell an administrator of: a relay connection that
drops and works again on the next try, PostgreSQL restarting in under a second. The running
server's tracker (``confirm_seconds``, ``CONFIRM_SECONDS`` in ``pbem serve``) therefore writes the
start line only once a fault has lasted that long; one that ends sooner leaves a DEBUG line.
(``pbem status`` shows a fault from its first failure: it says what fails at that moment.) A
fault that lasts is logged all the same, with the time of its first failure, whether or not
anything tries again meanwhile (a timer confirms it). How long a fault lasted is measured with the
monotonic clock, so a wall clock stepping back or forward meanwhile does not change it.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from pbem.clock import Clock, SystemClock
from pbem.store.common import StoreUnavailableError
from pbem.store.sqlite import is_unavailable as sqlite_unavailable

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long a fault must last in a running server before it is logged (one heartbeat of
#: pbem.daemon.roles): a restart of the database or a dropped connection mended by the next try
#: leaves no fault in the log. 0 (the default of a tracker made by a one-shot command): at once.
CONFIRM_SECONDS = 2.0

#: kind -> (what fails, what pbem does meanwhile), for the log line that starts a fault
KINDS: dict[str, tuple[str, str]] = {
    "database": ("the database cannot be used",
                 "incoming mail is refused with a temporary error (SMTP 451, deliver exit 75) and "
                 "stays with its sender's mail system; pbem retries by itself"),
    "outbox": ("the outbox folder cannot be written",
               "replies wait in the database and are written when it can be"),
    "imap": ("the IMAP server cannot be used",
             "new mail stays in the mailbox; the watcher reconnects by itself"),
    "relay": ("the relay does not take mail",
              "replies wait in the outbox and leave when the relay takes them again"),
}

#: OSError numbers that are the surroundings' fault, not pbem's
_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM,
                     errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT,
                     errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EPIPE, errno.ENOTCONN})


def is_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of the surroundings (worth a retry, no traceback) rather than
    a bug."""
    if isinstance(exc, StoreUnavailableError):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return sqlite_unavailable(exc)  # a full or read-only disk, not a syntax error
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if isinstance(exc, OSError) and exc.errno in _ERRNOS:
        return True
    kind = type(exc)
    return kind.__module__.startswith("psycopg") and kind.__name__ in ("OperationalError",
                                                                       "InterfaceError")


def retry_once(work: Callable[[], T]) -> T:
    """``work()``, and after a failure of the surroundings once more at once: a connection the
    database dropped fails its first use only, and is replaced by then. A second failure is the
    caller's (it reports the fault)."""
    try:
        return work()
    except Exception as exc:
        if not is_fault(exc):
            raise
    return work()


def reason_of(exc: BaseException | str) -> str:
    """One line, with what to do where it is obvious."""
    if isinstance(exc, str):
        return exc
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": {exc.filename}" if exc.filename else "")
    else:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if not isinstance(exc, StoreUnavailableError):
            text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    lowered = text.lower()
    if "full" in lowered or "no space" in lowered or "quota" in lowered:
        text += " (free space on that disk)"
    elif "read-only" in lowered or "readonly" in lowered:
        text += " (the file system is read-only: check its mount and the disk)"
    return text[:400]


@dataclass
class Fault:
    kind: str
    since: datetime
    reason: str
    failures: int = 1
    sources: set[str] = field(default_factory=set)
    last_failure: float = field(default_factory=time.monotonic)
    began: float = field(default_factory=time.monotonic)  # its length, whatever the wall clock does
    first_source: str = ""
    confirmed: bool = False  # its start line was written (it lasted ``confirm_seconds``)
    timer: threading.Timer | None = None


class Faults:
    """The faults one server has now. Thread-safe; one per ``pbem serve`` (its processor process
    reports through the daemon's pipe, see pbem/daemon/runner.py).

    ``on_end(kind)`` is called (outside the lock) when a fault ends: the daemon wakes its processor
    and sender then, so what waited is done at once instead of after its back-off.
    """

    def __init__(self, clock: Clock | None = None, *, settle_seconds: float = 1.0,
                 confirm_seconds: float = 0.0,
                 on_end: Callable[[str], None] | None = None) -> None:
        self.clock = clock or SystemClock()
        self.settle_seconds = settle_seconds
        self.confirm_seconds = confirm_seconds
        self.on_end = on_end
        self._faults: dict[str, Fault] = {}
        self._lock = threading.Lock()

    def failed(self, kind: str, source: str, exc: BaseException | str) -> bool:
        """``source`` (a door, the processor, ...) met ``kind`` failing; True when this started
        the fault's log line (it has lasted ``confirm_seconds``)."""
        reason = reason_of(exc)
        confirm = arm = False
        with self._lock:
            fault = self._faults.get(kind)
            if fault is not None:
                fault.failures += 1
                fault.sources.add(source)
                fault.last_failure = time.monotonic()
                fault.reason = reason
            else:
                fault = Fault(kind, self.clock.now(), reason, sources={source}, first_source=source)
                self._faults[kind] = fault
                arm = self.confirm_seconds > 0
            if not fault.confirmed and time.monotonic() - fault.began >= self.confirm_seconds:
                fault.confirmed = confirm = True
                arm = False
            if arm:
                fault.timer = threading.Timer(self.confirm_seconds, self._confirm, (fault,))
                fault.timer.daemon = True
                fault.timer.name = f"pbem-fault-{kind}"
                fault.timer.start()
        if confirm:
            self._started(fault)
        else:
            log.debug("fault: %s, %s (%s): %s", _what(kind),
                      "again" if fault.confirmed else "not (yet) lasting", source, reason)
        return confirm

    def _confirm(self, fault: Fault) -> None:
        """The timer: the fault has lasted ``confirm_seconds`` without being mended."""
        with self._lock:
            if self._faults.get(fault.kind) is not fault or fault.confirmed:
                return
            fault.confirmed = True
        self._started(fault)

    @staticmethod
    def _started(fault: Fault) -> None:
        meanwhile = KINDS.get(fault.kind, ("", "pbem retries by itself"))[1]
        log.error("fault: %s: %s (seen by %s); %s", _what(fault.kind), fault.reason,
                  fault.first_source, meanwhile)

    def ok(self, kind: str) -> bool:
        """An operation that needs ``kind`` succeeded; True when this ended the fault."""
        if kind not in self._faults:  # the common case, without the lock
            return False
        with self._lock:
            fault = self._faults.get(kind)
            if fault is None:
                return False
            if (fault.confirmed and kind == "database"
                    and time.monotonic() - fault.last_failure < self.settle_seconds):
                return False
            del self._faults[kind]
            if fault.timer is not None:
                fault.timer.cancel()
        lasted = time.monotonic() - fault.began
        what = _what(kind).replace(" cannot be used", "").replace(
            " cannot be written", "").replace(" does not take mail", "")
        if fault.confirmed:
            log.warning("fault over: %s works again after %.1f s (%d failed attempt(s) meanwhile)",
                        what, lasted, fault.failures)
        else:
            log.debug("fault: %s works again after %.1f s, mended before it counted as a fault "
                      "(%d failed attempt(s))", what, lasted, fault.failures)
        if self.on_end is not None:
            try:
                self.on_end(kind)
            except Exception:
                log.exception("fault: the callback after the end of a fault failed")
        return True

    def active(self, kind: str) -> bool:
        return kind in self._faults

    def snapshot(self) -> list[dict[str, object]]:
        """The faults now, oldest first, as ``pbem status`` shows them."""
        with self._lock:
            faults = sorted(self._faults.values(), key=lambda f: f.since)
            return [{"kind": f.kind, "what": KINDS.get(f.kind, (f.kind,))[0],
                     "since": f.since.isoformat(timespec="seconds"), "reason": f.reason,
                     "failures": f.failures, "sources": sorted(f.sources)} for f in faults]


def _what(kind: str) -> str:
    return KINDS.get(kind, (f"{kind} fails",))[0]


__all__ = ["CONFIRM_SECONDS", "KINDS", "Fault", "Faults", "is_fault", "reason_of", "retry_once"]
