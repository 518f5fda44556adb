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
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.alien_city import AlienCity, AlienCityState
from engine.alien_city.board import N_LOTS
from engine.alien_city.scoring import score_details, score_text
from engine.alien_city.streets import (
    analyse,
    analyse_by_tarjan,
    empty_bits,
    locally_simple,
    lots_of,
)
from engine.i18n import using
from pbem.i18n import translations

GAME = AlienCity()
DEFAULT_LAYOUT = GAME.start(GAME.normalize_options({}),
                            GAME.create_setup(GAME.normalize_options({}), random.Random(1))).layout
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


def _same_streets(board: list[int], icons: int) -> None:
    fast, plain = analyse(board, icons), analyse_by_tarjan(board, icons)
    for name in ("empty", "n_empty", "critical", "articulation", "block", "street_ok", "buildable",
                 "connected", "empty_bits", "street_ok_bits", "buildable_bits"):
        assert getattr(fast, name) == getattr(plain, name), name
    empty = list(plain.empty)
    assert fast.simple == plain.simple == sum(
        1 << m for m in plain.street_ok if locally_simple(m, empty, -1))


def test_street_analysis_on_bitboards_equals_the_tarjan_pass_in_played_positions() -> None:
    seen = 0
    for state in positions(24, seed=300):
        board, _cap = state.cells()
        _same_streets(list(board), state.layout.icon_bits)
        seen += 1
    assert seen > 500


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=N_LOTS, max_size=N_LOTS),
       st.integers(0, (1 << N_LOTS) - 1))
def test_street_analysis_on_bitboards_equals_the_tarjan_pass_on_any_board(board, icons) -> None:
    """Boards no game reaches too: split street networks, walled-in structures, no empty lot."""
    _same_streets(board, icons)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << N_LOTS) - 1), st.integers(0, 2**32))
def test_street_analysis_on_bitboards_equals_the_tarjan_pass_on_sparse_and_full_boards(
        built, seed) -> None:
    """Mostly empty and mostly built boards, where the networks and their cuts are long."""
    rng = random.Random(seed)
    keep = rng.choice((0.1, 0.5, 0.9))
    board = [rng.randint(1, 7) if built >> i & 1 and rng.random() < keep else 0
             for i in range(N_LOTS)]
    _same_streets(board, DEFAULT_LAYOUT.icon_bits)


def test_lots_of_and_empty_bits_equal_their_loops() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        bits = rng.getrandbits(N_LOTS) & rng.getrandbits(N_LOTS) if rng.random() < 0.5 else \
            rng.getrandbits(N_LOTS)
        assert lots_of(bits) == [i for i in range(N_LOTS) if bits >> i & 1]
        board = [rng.randint(0, 7) if bits >> i & 1 else 0 for i in range(N_LOTS)]
        assert empty_bits(board) == sum(1 << i for i in range(N_LOTS) if board[i] == 0)
