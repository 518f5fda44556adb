"""The computer player of every level, over a game's Knowledge: what ``Game.computer`` returns."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from engine.ai.budget import Budget
from engine.ai.knowledge import Knowledge
from engine.ai.levels import level_info
from engine.ai.mcts import SearchResult, search
from engine.base import ComputerPlayer, EngineError, Game, State


class Computer(ComputerPlayer):
    """Level 1 and 2 play from the knowledge directly; 3 and 4 search within the budget.

    Each position gets its own generator, seeded from (seed, ply, seat to move), so a player asked
    again about a position (after a crash, on another machine) starts the same search.
    """

    def __init__(self, game: Game, knowledge: Knowledge[Any], level: int, budget: Budget, seed: int):
        self.game = game
        self.knowledge = knowledge
        self.level = level
        self.budget = budget
        self.seed = seed
        self.last: SearchResult | None = None

    def __repr__(self) -> str:
        return f"Computer({self.game.name}, level {self.level}, {self.budget}, seed {self.seed})"

    def rng_for(self, state: State) -> random.Random:
        return random.Random(f"pbem-ai/{self.seed}/{state.ply}/{state.to_move}")

    def choose(self, state: State) -> Any:
        if state.to_move is None:
            raise EngineError("nobody is to move in this position")
        rng = self.rng_for(state)
        if self.level == 1:
            return self.knowledge.random_move(state, rng)
        if self.level == 2:
            return self.knowledge.greedy_move(state, rng)
        result = self.think(state, rng)
        return self.knowledge.engine_move(state, result.move)

    def think(self, state: State, rng: random.Random | None = None, first: Any = None) -> SearchResult:
        """The search behind ``choose`` (at any level: analysis asks it of every position);
        ``first``: a search move to try before the others."""
        budget = self.budget if self.budget.limited else Budget(seconds=1.0, clock=self.budget.clock)
        self.last = search(state, self.knowledge, rng or self.rng_for(state), budget, first)
        return self.last


def make_computer(game: Game, knowledge: Callable[[int], Knowledge[Any]], level: int,
                  budget: float | Budget | None, seed: int) -> Computer:
    """What ``Game.computer`` does for every game: check the level, fill in the default budget."""
    info = level_info(level, game.computer_levels)
    if budget is None:
        budget = Budget(seconds=info.seconds)
    elif not isinstance(budget, Budget):
        budget = Budget(seconds=float(budget))
    return Computer(game, knowledge(level), level, budget, int(seed))
