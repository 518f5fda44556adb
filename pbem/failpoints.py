"""Crash injection for the exactly-once tests: ``PBEM_FAILPOINT=NAME`` makes the process kill itself
with SIGKILL the first time it reaches that point (``NAME:N`` the N-th time). Unset, it costs one
dict lookup. The points: ``claimed`` (a message claimed inside its transaction, before it is read: a
worker that dies holding a claim); ``after-commit`` (a message's transaction committed, before the
IMAP move and before its replies are sent); ``queued-reply`` (inside a message's transaction, after
the opponent's move was applied and before the queued reply is: pbem.community.queued_moves);
``computer-move`` (the computer's move was found, before it is stored as its mail) and
``computer-stored`` (stored, before the processor was woken): pbem.daemon.thinker; ``tournament-paired`` (a
tournament round's games were created, before their transaction commits): pbem.tournaments.running;
``optimistic-commit`` (SQLite: an optimistic transaction's statements ran again under the write lock,
before its COMMIT): pbem.store.sqlite."""

from __future__ import annotations

import multiprocessing
import os
import signal

_counts: dict[str, int] = {}


def hit(name: str) -> None:
    spec = os.environ.get("PBEM_FAILPOINT")
    if not spec:
        return
    wanted, _, nth = spec.partition(":")
    if wanted != name:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] >= int(nth or 1):
        if multiprocessing.parent_process() is not None:
            # In the daemon's processor process: the crash being simulated is the server's.
            os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
