"""Dropping a seat from a Space Truckin' game (a ``drop`` record entry): the others play on.

Rulings under test (help: rulings 17): the dropped seat leaves the turn order; if it was to move, the
next remaining seat plays the tile already drawn, with its quadrant; its ships and points stay; it
cannot win; with one seat left the game ends with the usual final scoring.
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from engine.alien_city import AlienCity
from engine.base import EngineError, ReplayError, apply_entry, is_move_entry, replay
from engine.space_truckin import SpaceTruckin

GAME = SpaceTruckin()


class Table:
    """A game driven as the server drives it: draws from the hidden pile, every entry logged."""

    def __init__(self, seed: int, players: int):
        self.rng = random.Random(seed)
        self.setup = GAME.create_setup({}, self.rng, players)
        self.state = GAME.start({}, self.setup)
        self.entries: list[dict] = []
        self.draw()

    def draw(self) -> None:
        while self.state.pending_chance():
            value = GAME.draw_chance(self.state, self.setup, self.rng.randrange(60))
            self.state.apply_chance(value)
            self.entries.append({"chance": value})

    def move(self) -> None:
        seat = self.state.to_move
        text = self.state.move_text(self.state.random_move(self.rng))
        self.state.push(text)
        self.entries.append({"seat": seat, "move": text})
        self.draw()

    def drop(self, seat: str) -> list[str]:
        notes = self.state.drop_seat(seat)
        self.entries.append({"drop": seat, "at": "2026-11-28T10:00:00Z", "reason": "forfeit"})
        self.draw()
        return notes

    def replayed(self, **kwargs):
        return replay(GAME, {}, GAME.redact_setup(self.setup), self.entries, **kwargs)


def same(a, b) -> None:
    assert a.render() == b.render()
    assert a.score().totals == b.score().totals and a.score().details == b.score().details
    assert (a.to_move, a.ply, a.is_over, a.dropped_seats) == (b.to_move, b.ply, b.is_over, b.dropped_seats)
    assert (a.drawn_tile, a.quadrant, a.tiles_left) == (b.drawn_tile, b.quadrant, b.tiles_left)
    assert a.legal_placement_texts() == b.legal_placement_texts()


def test_dropping_the_seat_to_move_passes_the_turn_with_the_drawn_tile() -> None:
    table = Table(seed=3, players=3)
    for _ in range(4):
        table.move()
    state = table.state
    late = state.to_move
    seats = list(state.seats)
    after = seats[(seats.index(late) + 1) % 3]
    tile, quadrant, ply, legal = state.drawn_tile, state.quadrant, state.ply, state.legal_placement_texts()
    pools = state.pools()
    notes = table.drop(late)
    assert state.to_move == after and state.dropped_seats == (late,)
    assert (state.drawn_tile, state.quadrant, state.ply) == (tile, quadrant, ply)
    assert state.legal_placement_texts() == legal and state.pending_chance() is None
    assert state.pools() == pools  # ships stay where they are
    assert notes[0].startswith(f"{late} is dropped from the game")
    assert notes[1] == f"{after} plays the tile {late} drew, {tile} (clock quadrant {quadrant})."
    assert f"{late} " in state.render() and "DROPPED" in state.render()
    assert late in state.score().totals
    assert f" {late}*" in state.score().text.splitlines()[0]  # the dropped seat's column is marked
    assert "* dropped from the game" in state.score().text
    table.move()
    assert [e["seat"] for e in table.entries if "seat" in e][-1] == after
    assert state.to_move not in (late, after)


def test_dropping_another_seat_leaves_the_turn_alone() -> None:
    table = Table(seed=8, players=4)
    table.move()
    state = table.state
    mover, seats = state.to_move, list(state.seats)
    other = seats[(seats.index(mover) + 2) % 4]
    assert table.drop(other) == [f"{other} is dropped from the game: their ships stay on the board and "
                                 "still count, their points stay, and they take no more turns."]
    assert state.to_move == mover


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_a_dropped_seat_never_moves_again_and_its_ships_still_score(seed: int) -> None:
    table = Table(seed=seed, players=4)
    state = table.state
    rng = random.Random(seed)
    drop_at = sorted(rng.sample(range(5, 60), 2))
    seen: list[str] = []
    while not state.is_over:
        if drop_at and state.ply == drop_at[0] and not any("drop" in e for e in table.entries[-1:]):
            drop_at.pop(0)
            table.drop(rng.choice([s for s in state.seats if s not in state.dropped_seats]))
            continue
        assert state.to_move not in state.dropped_seats
        assert state.to_move is not None
        seen.append(state.to_move)
        table.move()
    assert len(state.dropped_seats) == 2 and state.tiles_left == 0
    playing = [s for s in state.seats if s not in state.dropped_seats]
    # after the second drop the two seats left alternate
    last = seen[-10:]
    assert set(last) == set(playing) and all(a != b for a, b in pairwise(last))
    score = state.score()
    assert set(score.totals) == set(state.seats)
    assert set(score.winners) <= set(playing) and score.dropped == list(state.dropped_seats)
    # the dropped seats' points still count: features they led kept paying them
    assert sum(score.totals[s] for s in state.dropped_seats) > 0
    same(table.replayed(), state)


def test_replay_with_drops_is_exact_at_every_ply() -> None:
    table = Table(seed=21, players=3)
    snapshots = {}
    while table.state.ply < 30:
        table.move()
        if table.state.ply == 10:
            table.drop(table.state.to_move)
        snapshots[table.state.ply] = table.state.copy()
    same(table.replayed(), table.state)
    assert sum(1 for e in table.entries if is_move_entry(e)) == 30
    for ply in (9, 10, 11, 30):
        # replay up to a ply folds in what follows that move: its draw and a drop
        same(table.replayed(upto_ply=ply), snapshots[ply])
    at_ten = table.replayed(upto_ply=10)
    assert at_ten.dropped_seats == table.state.dropped_seats


def test_bad_drops_do_not_replay_and_change_nothing() -> None:
    table = Table(seed=4, players=3)
    state = table.state
    before = state.render()
    with pytest.raises(EngineError, match="no seat 'purple'"):
        state.drop_seat("purple")
    assert state.render() == before
    table.drop("red")
    with pytest.raises(ReplayError, match="red has already been dropped") as info:
        apply_entry(state, {"drop": "red"}, 7)
    assert info.value.index == 7 and info.value.move == "drop red"
    assert state.dropped_seats == ("red",) and before != state.render()
    # a game that cannot go on without a player refuses the entry
    ac = AlienCity()
    ac_state = ac.start(ac.normalize_options({}), ac.create_setup(ac.normalize_options({}), random.Random(1)))
    with pytest.raises(ReplayError, match="Alien City cannot drop a player"):
        apply_entry(ac_state, {"drop": "black"}, 0)


def test_dropping_down_to_one_seat_ends_the_game_and_the_dropped_cannot_win() -> None:
    table = Table(seed=6, players=2)
    state = table.state

    def leads_after_final_scoring(seat: str) -> bool:
        trial = state.copy()
        trial.drop_seat(seat)
        totals = trial.score().totals
        return all(totals[seat] > v for s, v in totals.items() if s != seat)

    while state.ply < 12 or not any(leads_after_final_scoring(s) for s in state.seats):
        table.move()
    leader = next(s for s in state.seats if leads_after_final_scoring(s))
    other = next(s for s in state.seats if s != leader)
    banked = state.score().totals
    notes = table.drop(leader)
    assert state.is_over and state.to_move is None and state.pending_chance() is None
    assert state.legal_moves() == [] and state.drawn_tile is None
    assert notes[1] == f"Only {other} is left: the game is over. Final scoring of incomplete features:"
    score = state.score()
    assert score.totals[leader] > score.totals[other] and all(score.totals[s] >= banked[s] for s in banked)
    assert score.winners == [other] and score.text.startswith("Final scores ")
    # the totals, but no winner: the server names the winner once, in its mail
    assert notes[-1].startswith("Final totals: ") and "Winner" not in notes[-1]
    finals = [e for e in score.details["events"] if e["final"]]
    assert finals  # the usual final scoring of incomplete features, dropped seat included
    for seat in state.seats:
        assert score.totals[seat] == banked[seat] + sum(e["points"] for e in finals if seat in e["seats"])
    assert "The game is over: see the final scores." in state.render()
    with pytest.raises(EngineError, match="the game is over"):
        state.drop_seat(other)
    same(table.replayed(), state)
    with pytest.raises(ReplayError, match="already over"):
        replay(GAME, {}, table.setup, [*table.entries, {"drop": other}])
