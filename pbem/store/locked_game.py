"""A game read under its row lock, with what applying a move asks about its seats next, and written
back with only the columns that changed. (``SqlTx.get_game(for_update=True)`` and ``save_game``.)

After reading its game, a move asked about the game's players one statement at a time: each one's
settings (the language and notification level of their mail), whether mail to them bounces, their
thread of the game's mail, and whether anybody observes the game. Here the seats' answers come with
the seats, from the statement that reads them, and the transaction remembers them
(``pbem.store.sql.SqlTx``): of the 17 statements a move sent on SQLite, 4 went
(``bench/processor_cpu.py``).

The save names only the columns whose values differ from those read: an UPDATE rewrites every index
on a column it sets, even to the same value. A move changes the record, the seat to move and the
time; setting every column touched ten pages of SQLite's write-ahead log per move instead of three,
and the COMMIT that writes them is the dearest statement of a move.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from pbem.store.base import GameRow

#: The columns ``save_game`` writes, in the order ``stored_values`` gives their values.
SAVED = ("status", "record", "to_move", "thread_id", "updated_at", "deadline_at", "finished_at",
         "ending")
_GAME = ("id", "game", "status", "record", "created_at", "updated_at", "to_move", "thread_id",
         "deadline_at", "finished_at", "ending")
_SEAT = ("game_id", "seat", "email", "name", "token_hash", "accepted")
#: Per seat: its player's settings, whether mail to them bounces, their thread of the game's mail;
#: and whether the game has observers (read under the lock, as the statements they replace were).
_FACTS = ("p.settings, CASE WHEN b.email IS NULL THEN 0 ELSE 1 END, t.root_id, t.last_id,"
          " (SELECT COUNT(*) FROM observers o WHERE o.game_id = {game})")
_JOINS = (" LEFT JOIN players p ON p.email = s.email LEFT JOIN bouncing b ON b.email = s.email"
          " LEFT JOIN mail_threads t ON t.game_id = s.game_id AND t.email = s.email")
#: SQLite (no row locks: the write transaction holds the only lock): game, seats and facts at once.
_ALL_AT_ONCE = ("SELECT " + ", ".join(f"g.{c}" for c in _GAME) + ", " + ", ".join(f"s.{c}" for c in _SEAT)
                + f", {_FACTS.format(game='g.id')} FROM games g LEFT JOIN seats s ON s.game_id = g.id{_JOINS}"
                " WHERE g.id = ? ORDER BY s.position")
#: PostgreSQL: the row lock first; then the seats, read once it is held (a statement that waited
#: for the lock sees the rows it joins only as they were when it began).
_GAME_ROW = f"SELECT {', '.join(_GAME)} FROM games WHERE id = ?"
_SEATS = ("SELECT " + ", ".join(f"s.{c}" for c in _SEAT) + f", {_FACTS.format(game='s.game_id')}"
          f" FROM seats s{_JOINS}"
          " WHERE s.game_id = ? ORDER BY s.position")


class SeatFacts(NamedTuple):
    """What was read with one seat: its player's settings (JSON text, None without a row), whether
    mail to them bounces, and their thread of the game's mail (root, last) or None."""

    email: str
    settings: str | None
    bouncing: bool
    thread: tuple[str, str] | None


def read_locked(db: Any, game_id: str, lock: str, game_of: Any, seat_of: Any
                ) -> tuple[GameRow, tuple[Any, ...], list[SeatFacts], bool | None] | None:
    """The game (``lock``: the dialect's FOR UPDATE, empty in SQLite), the values of its ``SAVED``
    columns as stored, its seats' facts, and whether it has observers (None: not known, in a game
    without seats on PostgreSQL); None without the game."""
    width = len(_GAME)
    if lock:
        game_row = db.one(_GAME_ROW + lock, (game_id,))
        if game_row is None:
            return None
        rows = [(*game_row, *seat) for seat in db.all(_SEATS, (game_id,))]
        if not rows:
            rows = [(*game_row, *(None,) * (len(_SEAT) + 5))]
    else:
        rows = db.all(_ALL_AT_ONCE, (game_id,))
        if not rows:
            return None
    first = rows[0]
    game = game_of(first)
    facts = []
    for row in rows:
        seat = row[width:]
        if seat[0] is None:  # a game without seats (LEFT JOIN)
            continue
        game.seats.append(seat_of(seat))
        settings, bouncing, root, last = seat[len(_SEAT):len(_SEAT) + 4]
        facts.append(SeatFacts(seat[2], settings, bool(bouncing), (root, last) if root is not None else None))
    observed = None if first[-1] is None else bool(first[-1])
    stored = (first[2], first[3], first[6], first[7], first[5], first[8], first[9], first[10])
    return game, stored, facts, observed


@functools.cache
def update_statement(changed: tuple[int, ...]) -> str:
    """``UPDATE games`` of the ``SAVED`` columns at these positions (a few shapes in practice)."""
    return f"UPDATE games SET {', '.join(f'{SAVED[i]} = ?' for i in changed)} WHERE id = ?"


def changed_columns(stored: Sequence[Any], values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(i for i, (old, new) in enumerate(zip(stored, values, strict=True)) if old != new)
