"""The Alien City game as the server and the CLI see it: options, setups, starting positions, help."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from engine.ai import Budget, Computer, make_computer
from engine.alien_city.ai import knowledge
from engine.alien_city.board import SEATS, Layout
from engine.alien_city.help import help_topics
from engine.alien_city.notation import seat_name
from engine.alien_city.render import AlienCityRenderer
from engine.alien_city.state import AlienCityState
from engine.alien_city.variants import (
    OPTION_SPECS,
    create_setup,
    normalize_options,
    parse_handicap_value,
    validate_setup,
)
from engine.base import Game, OptionsError, OptionSpec

# Stateless: one renderer serves every game.
_RENDERER = AlienCityRenderer()


class AlienCity(Game):
    name: ClassVar[str] = "alien-city"
    title: ClassVar[str] = "Alien City"
    id_prefix: ClassVar[str] = "ac"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    option_specs: ClassVar[tuple[OptionSpec, ...]] = OPTION_SPECS

    def seat_names(self, n_players: int) -> list[str]:
        if n_players != 2:
            raise OptionsError(f"Alien City is for exactly 2 players, not {n_players}")
        return list(SEATS)

    def seat_label(self, seat: str) -> str:
        return seat_name(seat)

    def normalize_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        return normalize_options(options)

    def parse_option_value(self, spec: OptionSpec, value: str, options: dict[str, Any]) -> None:
        if spec.name != "handicap":
            raise OptionsError(f"option {spec.name} takes no value")
        seat, entry = parse_handicap_value(value)
        handicap = options.setdefault("handicap", {})
        if not isinstance(handicap, dict):
            raise OptionsError("option handicap was given in two different forms")
        handicap[seat] = entry

    def create_setup(self, options: Mapping[str, Any], rng: random.Random,
                     n_players: int | None = None) -> dict[str, Any]:
        if n_players is not None:
            self.seat_names(n_players)
        return create_setup(self.normalize_options(options), rng)

    def start(self, options: Mapping[str, Any], setup: Mapping[str, Any]) -> AlienCityState:
        options = self.normalize_options(options)
        tiles, first = validate_setup(options, setup)
        dice = setup.get("dice") if isinstance(setup.get("dice"), list) else None
        return AlienCityState(self, options, Layout.from_tiles(tiles), first, dice)

    def help_topics(self) -> dict[str, str]:
        return help_topics()

    computer_levels: ClassVar[tuple[int, ...]] = (1, 2, 3, 4)

    def computer(self, level: int, budget: float | Budget | None = None, seed: int = 0) -> Computer:
        return make_computer(self, knowledge, level, budget, seed)

    @property
    def renderer(self) -> AlienCityRenderer:
        return _RENDERER
