"""Space Truckin' as the server sees it: seats, setup with a hidden pile, the server-side draw, help."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from engine.ai import Budget, Computer, make_computer
from engine.base import EngineError, Game, OptionsError, OptionSpec, SetupError
from engine.i18n import _

from .ai import knowledge
from .catalogue import CORNERS, PILE_TILES, TILE_INDEX, TILES
from .help import NOTATION, RULES, RULINGS
from .render import SpaceTruckinRenderer
from .state import SpaceTruckinState

SEAT_COLOURS = ("red", "blue", "green", "yellow", "white")
# Stateless: one renderer serves every game.
_RENDERER = SpaceTruckinRenderer()


def quadrant_of(utc_seconds: int) -> str:
    """The clock quadrant of the rules: 0-14 NE, 15-29 SE, 30-44 SW, 45-59 NW."""
    return CORNERS[(int(utc_seconds) % 60) // 15]


class SpaceTruckin(Game):
    name: ClassVar[str] = "space-truckin"
    title: ClassVar[str] = "Space Truckin'"
    id_prefix: ClassVar[str] = "st"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()

    def seat_names(self, n_players: int) -> list[str]:
        if not isinstance(n_players, int) or not self.min_players <= n_players <= self.max_players:
            raise OptionsError(f"Space Truckin' is for {self.min_players} to {self.max_players} "
                               f"players, not {n_players}.")
        return list(SEAT_COLOURS[:n_players])

    def normalize_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        if options:
            raise OptionsError(f"Space Truckin' has no options; got {', '.join(sorted(options))}.")
        return {}

    def create_setup(self, options: Mapping[str, Any], rng: random.Random,
                     n_players: int | None = None) -> dict[str, Any]:
        seats = self.seat_names(2 if n_players is None else n_players)
        first = rng.choice(seats)
        pile = [TILES[i].id for i in PILE_TILES]
        rng.shuffle(pile)
        return {"seats": seats, "first": first, "pile": pile}

    def redact_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in setup.items() if k != "pile"}

    def _check_setup(self, setup: Mapping[str, Any]) -> tuple[list[str], str]:
        seats = setup.get("seats")
        if not isinstance(seats, list) or not seats:
            raise SetupError("setup needs 'seats', a list of seat colours")
        try:
            expected = self.seat_names(len(seats))
        except OptionsError as exc:
            raise SetupError(str(exc)) from exc
        if seats != expected:
            raise SetupError(f"seats must be {', '.join(expected)} in that order, not {seats}")
        first = setup.get("first")
        if first not in seats:
            raise SetupError(f"setup 'first' must be one of {', '.join(seats)}, not {first!r}")
        pile = setup.get("pile")
        if pile is not None:
            want = sorted(TILES[i].id for i in PILE_TILES)
            if not isinstance(pile, list) or sorted(map(str, pile)) != want:
                raise SetupError(f"setup 'pile' must hold each of the {len(want)} pile tiles once "
                                 "(every catalogue tile but the start tile)")
        return seats, first

    def start(self, options: Mapping[str, Any], setup: Mapping[str, Any]) -> SpaceTruckinState:
        self.normalize_options(options)
        seats, first = self._check_setup(setup)
        return SpaceTruckinState(self, seats, first)

    def draw_chance(self, state: Any, setup: Mapping[str, Any], utc_seconds: int) -> dict[str, Any]:
        if not isinstance(state, SpaceTruckinState) or state.pending_chance() != "draw":
            raise EngineError("no tile is due to be drawn now")
        pile = setup.get("pile")
        if not isinstance(pile, list):
            raise EngineError("this setup has no pile (a redacted copy?); the server draws from "
                              "the full setup")
        tile = state.next_from_pile(pile)
        if tile not in TILE_INDEX:
            raise EngineError(f"unknown tile {tile!r} in the pile")
        return {"tile": tile, "quadrant": quadrant_of(utc_seconds)}

    def help_topics(self) -> dict[str, str]:
        return {"rules": _(RULES), "rulings": _(RULINGS), "notation": _(NOTATION)}

    computer_levels: ClassVar[tuple[int, ...]] = (1, 2, 3, 4)

    def computer(self, level: int, budget: float | Budget | None = None, seed: int = 0) -> Computer:
        return make_computer(self, knowledge, level, budget, seed)

    @property
    def renderer(self) -> SpaceTruckinRenderer:
        return _RENDERER
