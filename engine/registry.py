"""Finds a game by name. Games are imported lazily so a broken or slow game cannot slow the others."""

from __future__ import annotations

import difflib
import importlib
from functools import cache

from engine.base import EngineError, Game

# name -> "module:Class"
_GAMES: dict[str, str] = {
    "alien-city": "engine.alien_city:AlienCity",
    "space-truckin": "engine.space_truckin:SpaceTruckin",
}
_ALIASES = {"ac": "alien-city", "aliencity": "alien-city", "st": "space-truckin",
            "spacetruckin": "space-truckin"}


class UnknownGameError(EngineError):
    pass


def available_games() -> list[str]:
    """Names of the games that are installed and import cleanly."""
    names = []
    for name in _GAMES:
        try:
            get_game(name)
        except UnknownGameError:
            continue
        names.append(name)
    return names


@cache
def _load(name: str) -> Game:
    module_name, _, cls_name = _GAMES[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise UnknownGameError(f"game {name!r} is not installed") from exc
        raise
    return getattr(module, cls_name)()


def get_game(name: str) -> Game:
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key.replace("-", ""), key)
    if key not in _GAMES:
        near = difflib.get_close_matches(key, list(_GAMES), n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(near)}?" if near else ""
        raise UnknownGameError(f"unknown game {name!r}; games: {', '.join(_GAMES)}.{hint}")
    return _load(key)
