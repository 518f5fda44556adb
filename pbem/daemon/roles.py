"""The roles only one worker may hold at a time, and the heartbeat that says who is alive.

Any number of ``pbem serve`` workers may share one database: all of them run the SMTP listener, the
processor and the sender (claims keep them from doing one message or one mail twice). Two jobs must
run once: watching the IMAP mailbox (two watchers would fight over moving messages) and the deadline
scheduler (two would work, thanks to its once-keys, but only waste effort). Each is a role, a lock
in the database (``Store.hold_role``: an advisory lock in PostgreSQL, a file lock beside a SQLite
file). Every few seconds each worker tries to take the roles it lacks and checks it still has the
ones it holds; a worker that dies loses its locks with its database session, and a survivor takes
them at its next check, well within 30 s.

The same pass writes the worker's heartbeat (``Store.heartbeat``) with the roles it holds, for
``pbem status``. That write, every few seconds, is also what tells the fault tracker
(``pbem.faults``) that the database is away, and that it works again: a failed check is one line
when the fault starts, not a traceback every two seconds.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

from pbem.clock import Clock
from pbem.faults import Faults, is_fault, retry_once
from pbem.store.base import Store, Worker

log = logging.getLogger(__name__)

#: How often roles are checked and the heartbeat written. A role lost by a dead worker is taken by
#: another within this (plus the time the database needs to notice the death).
CHECK_SECONDS = 2.0


@dataclass
class Role:
    """What the worker does when it gains the role and when it loses it."""

    name: str
    gained: Callable[[], None]
    lost: Callable[[], None]


class RoleKeeper:
    def __init__(self, store: Store, clock: Clock, roles: list[Role], stop: threading.Event, *,
                 check_seconds: float = CHECK_SECONDS, faults: Faults | None = None) -> None:
        self.store = store
        self.faults = faults or Faults(clock)
        self._quiet_regain: set[str] = set()  # lost while the database was away: no news when back
        self.clock = clock
        self.roles = roles
        self.stop_event = stop
        self.check_seconds = check_seconds
        now = clock.now()
        host = socket.gethostname()
        self.worker = Worker(id=f"{host}:{os.getpid()}:{now.strftime('%Y%m%dT%H%M%S.%f')}", host=host,
                             pid=os.getpid(), started_at=now, seen_at=now)
        self.held: set[str] = set()
        self._thread: threading.Thread | None = None

    def holds(self, role: str) -> bool:
        return role in self.held

    def check(self) -> None:
        """One pass: write the heartbeat (which also finds out whether the database works), take
        the free roles, notice lost ones."""
        before = set(self.held)
        self._heartbeat()
        for role in self.roles:
            try:
                held = self.store.hold_role(role.name)
            except Exception as exc:
                self._failed(exc, f"cannot check the {role.name} role")
                held = False
            if held and role.name not in self.held:
                self.held.add(role.name)
                quiet = role.name in self._quiet_regain
                self._quiet_regain.discard(role.name)
                (log.debug if quiet else log.info)("roles: this worker (%s) now holds the %s role",
                                                   self.worker.id, role.name)
                role.gained()
            elif not held and role.name in self.held:
                self.held.discard(role.name)
                if self.faults.active("database"):  # the fault's own line says why
                    self._quiet_regain.add(role.name)
                    log.debug("roles: the %s role was lost with the database", role.name)
                else:
                    log.warning("roles: the %s role was lost (database session ended)", role.name)
                role.lost()
        if self.held != before:
            self._heartbeat()  # say at once which roles this worker holds now

    def _heartbeat(self) -> None:
        self.worker.seen_at = self.clock.now()
        self.worker.roles = sorted(self.held)
        try:
            retry_once(lambda: self.store.heartbeat(self.worker))
        except Exception as exc:
            self._failed(exc, "heartbeat failed")
            return
        self.faults.ok("database")

    def _failed(self, exc: Exception, what: str) -> None:
        if is_fault(exc):
            self.faults.failed("database", "roles", exc)
        else:
            log.error("roles: %s", what, exc_info=exc)

    def start(self) -> threading.Thread:
        """Check once now (so the roles that are free are taken before ``start`` returns), then every
        few seconds in a thread."""
        self.check()
        self._thread = threading.Thread(target=self._run, name="pbem-roles", daemon=True)
        self._thread.start()
        return self._thread

    def _run(self) -> None:
        while not self.stop_event.wait(self.check_seconds):
            self.check()

    def stop(self) -> None:
        """Give up every role (the next worker need not wait for a check to notice) and say goodbye."""
        if self._thread is not None:
            self._thread.join(self.check_seconds + 10)
        for role in self.roles:
            if role.name in self.held:
                self.held.discard(role.name)
                role.lost()
            try:
                self.store.release_role(role.name)
            except Exception as exc:
                self._failed(exc, f"cannot release the {role.name} role")
        try:
            retry_once(lambda: self.store.forget_worker(self.worker.id))
        except Exception as exc:  # its heartbeat ages instead; pbem status calls it silent
            self._failed(exc, "cannot remove this worker's heartbeat")
