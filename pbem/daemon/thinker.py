"""The computer players' thinking, apart from the mail: a thread of the daemon finds the games whose
seat to move is a computer, has worker processes search them (``[computer] workers``; started on
the first such game), and stores each move found as an inbound mail from the computer's seat.
From there it takes the path of every player's move (the processor, one transaction), so the
processing of other mail never waits for a search, and a crash loses nothing:

* killed while it thinks: nothing was stored; at the next start the game is found again (its seat
  to move is still the computer's) and the move is computed again;
* killed after storing the move: the move is in the durable intake and is processed as usual; a
  move computed again for the same position has the same Message-ID and is not stored twice;
* a move that arrives after the game has moved on is refused as stale, like a person's.

The search reads the game as the players see it: the state replayed from the record holds no
hidden information (a Space Truckin' state has no draw pile), and the player searches over the
tiles it could draw.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import multiprocessing
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.pool import Pool
from typing import Any

from engine import get_game
from pbem import failpoints
from pbem.clock import Clock
from pbem.config import Config
from pbem.faults import Faults, is_fault, retry_once
from pbem.processing import computer
from pbem.processing.computer_seats import DOMAIN
from pbem.record import replay_record
from pbem.store.base import GameRow, Store

log = logging.getLogger(__name__)

# A search that has not answered in this many budgets (plus a margin) is given up and started
# again (a worker that died takes its task with it).
STUCK_FACTOR, STUCK_MARGIN_SECONDS = 5, 60.0


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (PR_SET_PDEATHSIG), so a crashed or
    kill -9'd server leaves no worker behind."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _worker_init() -> None:
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops us


def think(game_name: str, record: dict[str, Any], level: int, seconds: float | None,
          seed: int) -> tuple[str, int]:
    """In a worker process: the computer's move for the position of ``record``, as text, and the
    position's ply."""
    game = get_game(game_name)
    state = replay_record(record, game)
    player = game.computer(level, budget=seconds, seed=seed)
    return state.move_text(player.choose(state)), state.ply


def game_seed(game_id: str) -> int:
    """The game's seed: the same position of the same game is searched the same way."""
    return int.from_bytes(hashlib.sha256(game_id.encode()).digest()[:8], "big")


#: The shortest time from one round's start to the next: a computer's move waits at most this
#: much longer to be looked for.
ROUND_GAP_SECONDS = 0.1


class Thinker:
    def __init__(self, config: Config, store: Store, clock: Clock, secret: bytes,
                 wake_processor: Callable[[], None], stop: threading.Event,
                 poll_seconds: float = 5.0, active: Callable[[], bool] = lambda: True,
                 faults: Faults | None = None) -> None:
        self.config, self.store, self.clock, self.secret = config, store, clock, secret
        self.faults = faults or Faults(clock)
        # With many workers on one database only the one holding the scheduler role looks for
        # computer turns, so a position is searched once, not once per worker.
        self.active = active
        self.wake_processor = wake_processor
        self._stop = stop
        self._wake = threading.Event()
        self.poll_seconds = poll_seconds
        self._pool: Pool | None = None
        self._busy: dict[str, float] = {}  # Message-ID -> when its search started
        self._queued: set[str] = set()  # Message-IDs stored and not yet seen processed
        self._done: list[tuple[str, str, Any]] = []  # (Message-ID, game id, move text or exception)
        self._lock = threading.Lock()
        self.moves_stored = 0

    def wake(self) -> None:
        """A batch of mail was processed: a computer may be to move now."""
        self._wake.set()

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="pbem-thinker", daemon=True)
        thread.start()
        return thread

    # --- the loop -----------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._queued = {m.message_id for m in self.store.iter_inbound("pending")
                            if m.message_id and m.message_id.startswith("<pbem-ai.")}
            while not self._stop.is_set():
                self._wake.clear()
                started = time.monotonic()
                try:
                    retry_once(self._round)
                except Exception as exc:
                    if is_fault(exc):  # the database: said once, by the fault tracker
                        self.faults.failed("database", "thinker", exc)
                    else:
                        log.exception("thinker: a round failed; trying again in %.0f s",
                                      self.poll_seconds)
                self._wake.wait(self.poll_seconds)
                # Woken after every processed batch (hundreds a second under load, each a scan of
                # the active games' seats): at most one round per ROUND_GAP_SECONDS.
                self._stop.wait(started + ROUND_GAP_SECONDS - time.monotonic())
        finally:
            if self._pool is not None:
                self._pool.terminate()  # a search under way is simply done again at the next start
                self._pool.join()

    def _round(self) -> None:
        self._store_done()
        if self.active():
            self._scan()

    def _scan(self) -> None:
        """Start a search for every game whose seat to move is a computer's and whose move is
        neither being searched nor waiting in the intake."""
        wanted = set()
        for game_id in self.store.active_games_to_move(f"%@{DOMAIN}"):
            row, seat = self._to_move(game_id)
            if row is None or seat is None:
                continue  # moved on since the query
            key = computer.message_id(row)
            wanted.add(key)
            started = self._busy.get(key)
            if key in self._queued or (started is not None and not self._stuck(seat.email, started)):
                continue
            self._search(row, seat, key)
        self._queued &= wanted  # the others were processed: their games moved on

    def _to_move(self, game_id: str) -> tuple[GameRow | None, Any]:
        """The game as stored now, and its computer seat to move (None when a person is to move
        or the game is no longer active)."""
        row = self.store.get_game(game_id)
        active = row is not None and row.status == "active"
        return row, computer.computer_seat(row) if active else None

    def _stuck(self, email: str, started: float) -> bool:
        seconds = self.config.computer.seconds(computer.level_of(email)) or 1.0
        return time.monotonic() - started > seconds * STUCK_FACTOR + STUCK_MARGIN_SECONDS

    def _search(self, row: GameRow, seat: Any, key: str) -> None:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # safe in a process with threads
            self._pool = context.Pool(self.config.computer.workers, initializer=_worker_init)
        level = computer.level_of(seat.email)
        self._busy[key] = time.monotonic()
        log.info("thinker: %s: %s (level %d) to move", row.id, seat.seat, level)

        def finished(result: Any) -> None:
            with self._lock:
                self._done.append((key, row.id, result))
            self._wake.set()

        self._pool.apply_async(think, (row.game, row.record, level, self.config.computer.seconds(level),
                                       game_seed(row.id)), callback=finished, error_callback=finished)

    def _store_done(self) -> None:
        """Each move found becomes an inbound mail of its seat (if the game is still where it was)."""
        with self._lock:
            done, self._done = self._done, []
        for key, game_id, result in done:
            self._busy.pop(key, None)
            if isinstance(result, BaseException):
                log.error("thinker: the search for %s failed: %r", game_id, result)
                continue
            failpoints.hit("computer-move")
            row, seat = self._to_move(game_id)
            if row is None or seat is None or computer.message_id(row) != key:
                continue  # the game moved on meanwhile (a moderator, a deadline): search again
            move, ply = result
            raw = computer.move_mail(self.config, self.secret, row, seat, ply, move, self.clock.now())
            accepted = self.store.accept_inbound(raw, computer.SOURCE, self.clock.now())
            failpoints.hit("computer-stored")
            self._queued.add(key)
            if accepted.new:
                self.moves_stored += 1
                log.info("thinker: %s: %s plays %s", game_id, seat.seat, move)
            elif accepted.status != "pending":  # processed, yet the game still waits for it
                log.warning("thinker: %s: the computer's move for this position was %s before; "
                            "see inbound %d", game_id, accepted.status, accepted.inbound_id)
            self.wake_processor()
