"""A post-mortem of a game: the computer's judgement of every move and where the game turned.

Each position where a move was played is searched with the played move tried first, so one search
values both the computer's choice and the move played (the mover's expected result after each:
1 a sure win, 1/2 even, 0 a sure loss). Their difference is what the move cost; judging both in one
search keeps them comparable (the best of many noisy estimates is always a little flattering).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.ai.players import Computer
from engine.base import Game, apply_entry, is_move_entry


@dataclass(frozen=True)
class MoveReview:
    ply: int  # 1-based: the n-th move of the game
    seat: str
    move: str  # as played
    best: str | None  # the computer's choice there (None: the move was forced)
    before: float | None  # the mover's expected result after the computer's choice (None: forced)
    after: float | None  # ... after the move played

    @property
    def change(self) -> float:
        return 0.0 if self.before is None or self.after is None else self.after - self.before


def review(game: Game, options: Mapping[str, Any] | None, setup: Mapping[str, Any],
           entries: Iterable[Mapping[str, Any]], player: Computer) -> list[MoveReview]:
    """Review every move of a record (its ``options``, ``setup`` and entries) with ``player``'s
    search. Works from positions only: a setup with the pile removed (``Game.redact_setup``) gives
    the same review."""
    state = game.start(game.normalize_options(options), setup)
    out: list[MoveReview] = []
    knowledge = player.knowledge
    for index, entry in enumerate(entries):
        if is_move_entry(entry) and not state.is_over:
            seat = str(entry.get("seat") or state.to_move)
            move = state.parse_move(str(entry["move"]))
            text = state.move_text(move)
            played = knowledge.search_move(state, move)
            result = player.think(state, first=played)
            mine = next((s for s in result.stats if s.move == played), None)
            if mine is None:  # a forced move: nothing was searched
                out.append(MoveReview(state.ply + 1, seat, text, None, None, None))
            else:
                best = result.stats[0]
                out.append(MoveReview(state.ply + 1, seat, text,
                                      state.move_text(knowledge.engine_move(state, best.move)),
                                      best.value, mine.value))
        apply_entry(state, entry, index)
    return out


def swings(reviews: list[MoveReview], count: int = 5) -> list[MoveReview]:
    """The moves that cost their mover most against the computer's choice, biggest first."""
    return sorted((r for r in reviews if r.change < 0), key=lambda r: (r.change, r.ply))[:count]
