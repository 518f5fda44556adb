"""Alien City's speed shortcuts, each held equal to the plain way of getting the same answer.

The engine's CPU per move in the processor was cut by fast paths beside slower, simpler code: a
score whose text is written only when read, street analysis on bitboards, boards and listings
drawn without ``textwrap``. Each test here plays seeded random games (every edition and variant)
and compares the fast answer with the plain one on every position.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine.alien_city import AlienCity, AlienCityState
from engine.alien_city.scoring import score_details, score_text
from engine.i18n import using
from pbem.i18n import translations

GAME = AlienCity()
VARIANTS = ({"edition": "2.2"}, {"edition": "1.2", "location_bonus": True},
            {"edition": "2.2", "symmetric": True},
            {"edition": "1.2", "handicap": {"white": {"reach": 3, "extra_claims": 1}}})


def positions(games: int, seed: int = 0) -> Iterator[AlienCityState]:
    """Every position of ``games`` random games (random claims), as copies."""
    for number in range(games):
        rng = random.Random(seed + number)
        options = GAME.normalize_options(VARIANTS[number % len(VARIANTS)])
        state = GAME.start(options, GAME.create_setup(options, rng))
        yield state.copy()
        while not state.is_over:
            state.push(state.random_move(rng, claim_chance=0.7))
            yield state.copy()


@pytest.mark.parametrize("lang", ["en", "de", "sk"])
def test_a_score_text_written_when_read_is_the_text_of_its_position_and_language(lang) -> None:
    """The text is written later, in another language, after the state moved on: still the
    breakdown of the position and language it was asked for."""
    rng = random.Random(7)
    checked = 0
    for state in positions(8, seed=100):
        with using(translations(lang, "engine")):
            score = state.score()
            expected = score_text(score_details(*state.cells(), state.layout, state.options),
                                  state.options, state.is_over)
        if not state.is_over:
            state.push(state.random_move(rng))
        with using(translations("sk" if lang != "sk" else "de", "engine")):
            assert score.text == expected
        checked += 1
    assert checked > 100
