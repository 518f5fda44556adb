"""Pure game rules for pbem: no I/O, no clock, no global random.

Games plug in through ``engine.base.Game``/``State`` and are found by name in ``engine.registry``.
"""

from engine.base import (
    ComputerPlayer,
    EngineError,
    Game,
    IllegalMoveError,
    MoveError,
    NotationError,
    OptionsError,
    Renderer,
    ReplayError,
    Score,
    SetupError,
    State,
    is_move_entry,
    replay,
)
from engine.registry import available_games, get_game

__all__ = [
    "ComputerPlayer",
    "EngineError",
    "Game",
    "IllegalMoveError",
    "MoveError",
    "NotationError",
    "OptionsError",
    "Renderer",
    "ReplayError",
    "Score",
    "SetupError",
    "State",
    "available_games",
    "get_game",
    "is_move_entry",
    "replay",
]
