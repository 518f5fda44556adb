"""Which worker a game's mail should go to first: the one that keeps the game's state.

Every worker keeps the states it replayed (``StateCache``); a move that reaches another worker
replays the game from its record, which late in an Alien City game costs more than the whole rest of
the move. So each game has a home among the workers alive now: the highest of a hash of (worker,
game) over the workers (rendezvous hashing: when a worker comes or goes, only the games homed at it
move). A worker takes the mail of its home games first and another game's only when a fair round
holds none of its own that is free (``Processor.process_pending``): nothing waits for a busy or dead
home, and a round full of one worker's games is shared out.

The workers alive are the sessions that hold or seek the roles (``Store.role_sessions``: on
PostgreSQL those connected now, so a killed worker's games get new homes at once), read again every
few seconds. Where there is no such list (SQLite: one processor) or this worker is not on it yet,
every game is its own, as without homes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from collections.abc import Iterable

from pbem.store.base import Store

log = logging.getLogger(__name__)

#: How often the list of workers alive is read again.
REFRESH_SECONDS = 2.0


def worker_name(pid: int | None = None) -> str:
    """How a worker's role session names it (``pbem.store.postgres``): host and the pid of the
    ``pbem serve`` process."""
    return f"{socket.gethostname()}:{pid if pid is not None else os.getpid()}"


def _score(worker: str, game_id: str) -> bytes:
    return hashlib.blake2b(f"{worker}\0{game_id}".encode(), digest_size=8).digest()


def _home_of(workers: tuple[str, ...], game_id: str) -> str:
    return max(workers, key=lambda worker: _score(worker, game_id))


class Homes:
    """The games homed at the worker ``name`` (by default this process's: built in ``pbem serve``
    before its processor process is forked, so the serve process's pid)."""

    def __init__(self, store: Store, name: str | None = None) -> None:
        self.store = store
        self.name = name or worker_name()
        self._workers: tuple[str, ...] = ()
        self._read_at = -REFRESH_SECONDS
        self._home: dict[str, bool] = {}

    def _alive(self) -> tuple[str, ...]:
        now = time.monotonic()
        if now - self._read_at >= REFRESH_SECONDS:
            self._read_at = now
            try:
                sessions = self.store.role_sessions(())
            except Exception as exc:  # the database away: the claims will say so; keep the last list
                log.debug("homes: workers not read: %s", exc)
                return self._workers
            workers = tuple(sorted(sessions or ()))
            if workers != self._workers:
                self._workers, self._home = workers, {}
        return self._workers

    def count(self) -> int:
        """How many workers share the mail (at least 1)."""
        return max(len(self._alive()), 1)

    def own(self, game_ids: Iterable[str | None]) -> set[str | None]:
        """Of these games, those homed here; None (mail about no known game) is anybody's."""
        workers = self._alive()
        games = set(game_ids)
        if len(workers) < 2 or self.name not in workers:
            return games
        if len(self._home) > 100_000:
            self._home = {}
        found: set[str | None] = {None}
        for game in games:
            if game is None:
                continue
            home = self._home.get(game)
            if home is None:
                home = self._home[game] = _home_of(workers, game) == self.name
            if home:
                found.add(game)
        return found
