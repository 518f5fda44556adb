"""The computer players: legal moves only, determinism, greedy play, hidden information, fast paths.

Search budgets here are iteration counts (deterministic, machine-independent) and tiny: strength is
measured by bench/ai.py, not asserted here.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import EngineError, get_game
from engine.ai import DEFAULT_LEVEL, LEVELS, Budget, player_entry, search
from engine.ai.match import Tally, elo, play_game
from engine.alien_city import AlienCity, AlienCityState
from engine.alien_city.ai import Board
from engine.alien_city.board import LOT_INDEX, N_LOTS, N_PIECES, PIECE_COLOUR, SEATS
from engine.alien_city.moves import BUILD_MOVES
from engine.alien_city.positions import position
from engine.alien_city.rules import BuildProbe, allowance, can_build
from engine.base import replay
from engine.registry import available_games
from engine.space_truckin import SpaceTruckin

AC = AlienCity()
ST = SpaceTruckin()
TINY = Budget(iterations=6)


def random_position(game, seed: int, seats: int = 2, options: dict | None = None):
    """A position part-way through a random game (with claims and ships), with chance events drawn."""
    rng = random.Random(seed)
    opts = game.normalize_options(options or {})
    setup = game.create_setup(opts, rng, seats)
    state = game.start(opts, setup)
    stop = rng.randrange(0, 30)  # Alien City lasts about 38 plies, Space Truckin' 70 or more
    while True:
        while state.pending_chance() is not None:
            state.apply_chance(game.draw_chance(state, setup, rng.randrange(60)))
        if state.is_over or state.ply >= stop:
            return state, setup
        state.push(state.random_move(rng))


def assert_legal(state, move) -> None:
    """``push`` checks every rule (claims and ships included) and raises on any breach."""
    after = state.copy()
    after.push(move)
    assert after.ply == state.ply + 1


# --- every level plays only legal moves ----------------------------------------------------------

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), level=st.sampled_from([1, 2, 3, 4]),
       variant=st.sampled_from([{}, {"symmetric": True}, {"edition": "1.2"},
                                {"handicap": {"white": {"reach": 3, "extra_claims": 1}}}]))
def test_alien_city_computer_never_plays_an_illegal_move(seed: int, level: int, variant: dict) -> None:
    state, _ = random_position(AC, seed, options=variant)
    if state.is_over:
        return
    move = AC.computer(level, TINY, seed).choose(state)
    assert_legal(state, move)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), level=st.sampled_from([1, 2, 3, 4]), seats=st.integers(2, 4))
def test_space_truckin_computer_never_plays_an_illegal_move(seed: int, level: int, seats: int) -> None:
    state, _ = random_position(ST, seed, seats)
    if state.is_over:
        return
    move = ST.computer(level, Budget(iterations=3), seed).choose(state)
    assert_legal(state, move)


def test_a_whole_game_between_levels_is_legal_and_scored() -> None:
    for game, seats in ((AC, ("black", "white")), (ST, ("red", "blue", "green"))):
        players = {seat: game.computer(level, Budget(iterations=2), k)
                   for k, (seat, level) in enumerate(zip(seats, (3, 2, 1), strict=False))}
        result = play_game(game, {}, players, seed=5)
        assert result.winners and set(result.totals) == set(seats)
        # The entries replay to the same end: every move was legal.
        end = replay(game, {}, result.setup, result.entries)
        assert end.is_over and end.score().totals == result.totals


# --- determinism ---------------------------------------------------------------------------------

@pytest.mark.parametrize("game", [AC, ST], ids=lambda g: g.name)
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_same_seed_same_move_and_another_seed_may_differ(game, level: int) -> None:
    state, _ = random_position(game, 11)
    budget = Budget(seconds=60, iterations=40)  # the iteration cap ends the search, not the clock
    first = [game.computer(level, budget, seed=3).choose(state.copy()) for _ in range(2)]
    assert first[0] == first[1]
    again = game.computer(level, budget, seed=3)
    again.choose(random_position(game, 12)[0])  # what a player did before does not matter
    assert again.choose(state) == first[0]


def test_search_statistics_are_the_same_for_a_seed() -> None:
    state, _ = random_position(AC, 4)
    runs = []
    for _ in range(2):
        player = AC.computer(3, Budget(iterations=50), seed=9)
        result = player.think(state)
        runs.append([(s.move, s.visits, round(s.value, 12)) for s in result.stats])
        assert result.iterations == 50
    assert runs[0] == runs[1]


def test_a_time_budget_only_caps_the_iterations() -> None:
    """With a clock that says time is up at once, the search stops after its first iteration and
    picks what the 1-iteration search picks."""
    state, _ = random_position(AC, 6)
    ticks = iter(range(10**6))
    stopped = Budget(seconds=0.5, clock=lambda: float(next(ticks)))
    player = AC.computer(3, stopped, seed=2)
    move = player.choose(state)
    assert player.last is not None and player.last.iterations == 1
    assert move == AC.computer(3, Budget(iterations=1), seed=2).choose(state)


# --- level 2: the immediately best move ----------------------------------------------------------

def lead_after(state: AlienCityState, move) -> int:
    after = state.copy()
    after.push(move)
    totals = after.totals()
    seat = state.to_move
    return totals[seat] - totals["white" if seat == "black" else "black"]


def every_move(state: AlienCityState) -> list:
    """Every legal move, claims included (none on a game-ending build)."""
    out = []
    for build in state.legal_moves():
        out.append(build)
        if state.caps_left(state.to_move) and not state.is_ending(build):
            targets = state.claimable_towers() + ([build.lot] if build.kind == "tower" else [])
            out += [build.with_claim(t) for t in targets]
    return out


def test_level_2_claims_the_tower_worth_most_now() -> None:
    # C4: a red tower with three customers and the other red tower G4 five lots away (15 points).
    state = position("C4:TR B5:DG C6:TGw D4:DB A4:DR E4:DK G4:TR")
    move = AC.computer(2, seed=1).choose(state)
    best = max(lead_after(state, m) for m in every_move(state))
    assert lead_after(state, move) == best
    assert move.claim == "C4" and best >= 15


def test_level_2_builds_where_it_gains_most_when_it_cannot_claim() -> None:
    # White owns C4 (15 points); black has no caps: its best build is a red tower nearer to C4,
    # which cuts the distance to the competition.
    state = position("C4:TRw B5:DG C6:TGw D4:DB A4:DR E4:DK G4:TR", caps={"black": 0, "white": 2})
    move = AC.computer(2, seed=1).choose(state)
    leads = [lead_after(state, m) for m in state.legal_moves()]
    assert lead_after(state, move) == max(leads) > min(leads)  # the choice matters here
    assert move.kind == "tower" and move.colour == "red"


# --- Space Truckin': the computer never reads the pile -------------------------------------------

def test_space_truckin_choice_does_not_depend_on_the_unseen_order_of_the_pile() -> None:
    rng = random.Random(21)
    setup = ST.create_setup({}, rng, 2)
    state = ST.start({}, setup)
    entries = []
    for _ in range(12):  # play a little, so the pile has been drawn from
        while state.pending_chance() is not None:
            value = ST.draw_chance(state, setup, rng.randrange(60))
            state.apply_chance(value)
            entries.append({"chance": value})
        move = state.random_move(rng)
        entries.append({"seat": state.to_move, "move": state.move_text(move)})
        state.push(move)
    while state.pending_chance() is not None:
        value = ST.draw_chance(state, setup, rng.randrange(60))
        state.apply_chance(value)
        entries.append({"chance": value})
    unseen = [t for t in setup["pile"] if t in set(state.unseen_tiles())]
    seen = [t for t in setup["pile"] if t not in set(unseen)]
    other = dict(setup, pile=seen + list(reversed(unseen)))
    assert other["pile"] != setup["pile"]
    choices = []
    for pile_setup in (setup, other, ST.redact_setup(setup)):
        position_now = replay(ST, {}, pile_setup, entries)
        choices.append(ST.computer(3, Budget(iterations=30), seed=4).choose(position_now))
    assert choices[0] == choices[1] == choices[2]


def test_space_truckin_search_draws_only_unseen_tiles() -> None:
    state, _ = random_position(ST, 8)
    knowledge = ST.computer(3, TINY).knowledge
    unseen = set(state.unseen_tiles())
    rng = random.Random(1)
    for _ in range(200):
        _, value = knowledge.sample_chance(state, rng)
        assert value["tile"] in unseen and value["quadrant"] in ("NE", "SE", "SW", "NW")


# --- the Alien City fast path agrees with the rules ----------------------------------------------

def test_one_lot_at_a_time_answers_as_the_whole_board_analysis() -> None:
    for seed in range(12):
        state, _ = random_position(AC, seed, options={"symmetric": seed % 2 == 0})
        board, _ = state.cells()
        counts = [0] * 20
        for lot in range(N_LOTS):
            if board[lot]:
                counts[lot // 10 // 2 + 4 * ((lot % 10) // 2)] += 1
        allow = allowance(board, counts, state.layout)
        probe = BuildProbe(board, counts, state.layout)
        for piece in range(N_PIECES):
            assert tuple(lot for lot in range(N_LOTS) if probe.allows(piece, lot)) == allow.piece_lots[piece]
        for seat in SEATS:
            assert probe.any_build(state.held(seat)) == can_build(allow, state.held(seat))


def test_fast_playout_moves_are_legal_uniform_and_push_like_push() -> None:
    state, _ = random_position(AC, 3)
    legal = {(m.piece, m.lot_index) for m in state.legal_moves()}
    rng = random.Random(0)
    draws = [state.sample_build(rng) for _ in range(60 * len(legal))]
    assert set(draws) == legal  # every legal build turns up, and nothing else
    most = max(draws.count(d) for d in legal)
    assert most < 3 * len(draws) / len(legal)
    for seed in range(20):  # whole games by the fast path equal the same games through push
        fast, _ = random_position(AC, seed)
        slow = fast.copy()
        rng = random.Random(seed)
        while not fast.is_over:
            piece, lot = fast.sample_build(rng)
            claims = fast.claimable_lots()
            claim = claims[0] if claims and fast.caps_left(fast.to_move) and rng.random() < 0.3 else -1
            move = BUILD_MOVES[piece][lot]
            if claim >= 0 and not slow.is_ending(move):
                move = move.with_claim(next(k for k, v in LOT_INDEX.items() if v == claim))
            fast.push_build(piece, lot, claim)
            slow.push(move)
            assert fast.snapshot() == slow.snapshot()


def test_tower_values_of_the_search_are_the_scores_of_the_rules() -> None:
    for seed in range(15):
        state, _ = random_position(AC, seed)
        board, _ = state.cells()
        view = Board(board)
        details = state.score().details
        for tower in details["towers"]:
            lot = LOT_INDEX[tower["lot"]]
            assert view.tower_points(lot, PIECE_COLOUR[board[lot] - 1], tower["reach"]) == tower["points"]


# --- the interface the server uses ---------------------------------------------------------------

def test_every_game_offers_computer_levels_and_names_them_in_records() -> None:
    assert DEFAULT_LEVEL == 3 and set(LEVELS) == {1, 2, 3, 4}
    for name in available_games():
        game = get_game(name)
        assert DEFAULT_LEVEL in game.computer_levels and {1, 2, 3} <= set(game.computer_levels)
        player = game.computer(DEFAULT_LEVEL)
        assert player.level == DEFAULT_LEVEL and player.budget.seconds == LEVELS[DEFAULT_LEVEL].seconds
        with pytest.raises(EngineError, match="levels are 1"):
            game.computer(7)
    assert player_entry(3) == {"name": "computer (level 3)", "engine": "pbem-ai", "level": 3}


def test_the_search_refuses_a_position_where_nobody_is_to_move() -> None:
    state, _ = random_position(ST, 2)
    state.push(state.random_move(random.Random(0)))  # now a tile must be drawn
    if state.to_move is None:
        with pytest.raises(EngineError, match="nobody"):
            search(state, ST.computer(3).knowledge, random.Random(0), TINY)


def test_match_statistics() -> None:
    tally = Tally(wins=15, draws=0, losses=5)
    low, high = tally.interval()
    assert tally.rate == 0.75 and 0.5 < low < 0.75 < high < 0.92
    assert round(elo(0.75)) == 191 and elo(1.0) == float("inf")
