"""``State.forced_move``: the one move a seat has when it has no choice at all, for every game through
``engine.base`` (what ``set automove on`` plays). A single legal move with optional parts left to
choose (an Alien City claim, a Space Truckin' ship) is a choice, not a forced move."""

from __future__ import annotations

import random

import pytest

from engine import get_game
from engine.base import State


def positions(name: str, games: int, seed: int):
    """Every position of ``games`` random games (chance events drawn), each a copy."""
    game = get_game(name)
    rng = random.Random(seed)
    for _ in range(games):
        options = game.normalize_options({})
        setup = game.create_setup(options, rng, 2)
        state = game.start(options, setup)
        while True:
            while state.pending_chance() is not None and not state.is_over:
                state.apply_chance(game.draw_chance(state, setup, rng.randrange(60)))
            yield state.copy()
            if state.is_over:
                break
            state.push(state.random_move(rng))


def expected(state: State):
    """The definition, spelled out: every complete legal move of the seat to move."""
    if state.is_over or state.to_move is None:
        return []
    return [variant for move in state.legal_moves() for variant in state.move_variants(move)]


@pytest.mark.parametrize("name", ["alien-city", "space-truckin"])
def test_a_forced_move_is_the_only_complete_legal_move(name: str) -> None:
    forced = 0
    for state in positions(name, 12, seed=3):
        complete = expected(state)
        move = state.forced_move()
        if len(complete) == 1:
            assert move == complete[0]
            trial = state.copy()
            trial.push(move)  # legal
            assert trial.ply == state.ply + 1
            forced += 1
        else:
            assert move is None
    assert forced > 0  # the games do reach positions without a choice


@pytest.mark.parametrize("name", ["alien-city", "space-truckin"])
def test_every_variant_is_legal_and_the_first_is_the_move_itself(name: str) -> None:
    rng = random.Random(11)
    for state in positions(name, 4, seed=7):
        if state.is_over:
            continue
        for move in rng.sample(state.legal_moves(), min(3, len(state.legal_moves()))):
            variants = state.move_variants(move)
            assert variants[0] == move
            assert len(set(variants)) == len(variants)
            for variant in variants:
                state.copy().push(variant)


def test_an_alien_city_build_that_may_claim_is_a_choice() -> None:
    """Early in a game every tower may be claimed: one legal build would still leave the claim to
    choose, so it is never played for the player."""
    game = get_game("alien-city")
    setup = game.create_setup(game.normalize_options({}), random.Random(2), 2)
    state = game.start(game.normalize_options({}), setup)
    tower = next(m for m in state.legal_moves() if m.kind == "tower")
    variants = state.move_variants(tower)
    assert len(variants) >= 2 and variants[1].claim == tower.lot
    assert state.forced_move() is None


def test_nothing_is_forced_when_the_game_is_over_or_a_draw_is_pending() -> None:
    game = get_game("space-truckin")
    setup = game.create_setup({}, random.Random(5), 2)
    state = game.start({}, setup)
    assert state.pending_chance() is not None
    assert state.forced_move() is None
    over = next(s for s in positions("alien-city", 1, seed=1) if s.is_over)
    assert over.forced_move() is None
