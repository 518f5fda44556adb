"""Games between computer players, and the arithmetic of a match result.

The referee here plays the server's part: it holds the setup (with Space Truckin's pile) and draws
the chance events; the players are given only the position. Used by ``pbem selfplay --levels`` and by
``bench/ai.py``. No clock: callers that report time wrap the players.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.base import ComputerPlayer, Game, State


@dataclass
class GameResult:
    """One finished game: ``entries`` are the record's moves and chance events, in order."""

    setup: dict[str, Any]
    entries: list[dict[str, Any]]
    totals: dict[str, int]
    winners: list[str]
    plies: int


def play_game(game: Game, options: Mapping[str, Any], players: Mapping[str, ComputerPlayer], seed: int,
              on_move: Callable[[State, str, str], None] | None = None) -> GameResult:
    """Play one game from a fresh setup drawn with ``seed``; ``players`` maps every seat of
    ``game.seat_names(len(players))`` to its player. ``on_move(state, seat, move_text)`` is called
    after each move is applied."""
    rng = random.Random(f"pbem-match/{seed}")
    options = game.normalize_options(options)
    seats = game.seat_names(len(players))
    setup = game.create_setup(options, rng, len(seats))
    state = game.start(options, setup)
    entries: list[dict[str, Any]] = []

    def draw() -> None:
        while state.pending_chance() is not None:
            value = game.draw_chance(state, setup, rng.randrange(60))
            state.apply_chance(value)
            entries.append({"chance": value})

    draw()
    while not state.is_over:
        seat = state.to_move
        assert seat is not None
        move = players[seat].choose(state)
        text = state.move_text(move)
        state.push(move)
        entries.append({"seat": seat, "move": text})
        if on_move is not None:
            on_move(state, seat, text)
        draw()
    score = state.score()
    return GameResult(setup, entries, dict(score.totals), list(score.winners), state.ply)


@dataclass
class Tally:
    """Results of one side of a match (wins, draws, losses), with the statistics people quote."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: list[int] = field(default_factory=list)  # (own total - best other total) per game

    def add(self, result: GameResult, seat: str) -> None:
        winners = result.winners
        if seat in winners:
            if len(winners) == 1:
                self.wins += 1
            else:
                self.draws += 1
        else:
            self.losses += 1
        others = [v for s, v in result.totals.items() if s != seat]
        self.points.append(result.totals[seat] - max(others))

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def rate(self) -> float:
        """Score rate: wins count 1, draws 1/2."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson score interval of the score rate (95 % by default); draws make it conservative."""
        n = self.games
        if not n:
            return 0.0, 1.0
        p = self.rate
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)


def elo(rate: float) -> float:
    """The Elo difference a score rate implies (infinite at 0 and 1)."""
    if rate <= 1e-9:
        return -math.inf
    if rate >= 1 - 1e-9:
        return math.inf
    return -400.0 * math.log10(1.0 / rate - 1.0)


def elo_text(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.0f}"


def tally_line(label: str, tally: Tally) -> str:
    """One row of a results table (see ``TABLE_HEADER``), at most 78 columns."""
    low, high = tally.interval()
    return (f"{label:<11}{tally.games:>6}{tally.wins:>5}{tally.draws:>6}{tally.losses:>5} "
            f"{tally.rate:>6.1%} [{low:5.1%},{high:6.1%}] {elo_text(elo(tally.rate)):>5} "
            f"[{elo_text(elo(low))}, {elo_text(elo(high))}]")


TABLE_HEADER = (f"{'':<11}{'games':>6}{'won':>5}{'drawn':>6}{'lost':>5} {'score':>6} "
                f"{'95 % interval':<15} {'Elo':>5} interval")
