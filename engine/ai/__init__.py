"""Computer opponents for every game: levels, budgets, a generic Monte Carlo tree search, matches.

The search works through ``engine.base`` only; each game adds its knowledge (evaluation, fast
playouts, candidate moves) in its own ``ai`` module and offers players through ``Game.computer``::

    player = get_game("alien-city").computer(3, budget=2.0, seed=7)
    move = player.choose(state)          # a legal move for state.to_move
    state.push(move)

No clock but the budget's, no global random, no I/O.
"""

from engine.ai.budget import Budget
from engine.ai.knowledge import Knowledge, SearchParams, outcome_rewards
from engine.ai.levels import (
    DEFAULT_LEVEL,
    ENGINE_NAME,
    LEVELS,
    Level,
    level_info,
    levels_help,
    player_entry,
)
from engine.ai.mcts import MoveStat, SearchResult, search
from engine.ai.players import Computer, make_computer

__all__ = [
    "DEFAULT_LEVEL",
    "ENGINE_NAME",
    "LEVELS",
    "Budget",
    "Computer",
    "Knowledge",
    "Level",
    "MoveStat",
    "SearchParams",
    "SearchResult",
    "level_info",
    "levels_help",
    "make_computer",
    "outcome_rewards",
    "player_entry",
    "search",
]
