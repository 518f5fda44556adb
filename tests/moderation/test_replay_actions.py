"""Where ``pbem replay`` places the actions of a record."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from engine import get_game
from pbem.community.moderation import record_action, rewind
from pbem.record import describe_action, new_record, positions, positions_with_actions, replay_record
from pbem.store.base import GameRow

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def alien_city_record(moves: int, seed: int = 3) -> dict:
    game = get_game("alien-city")
    options = game.normalize_options({})
    rng = random.Random(seed)
    record = new_record(game, options, game.create_setup(options, rng, 2))
    state = game.start(options, record["setup"])
    for _ in range(moves):
        seat = state.to_move
        move = state.random_move(rng)
        text = state.move_text(move)
        state.push(move)
        record["moves"].append({"seat": seat, "move": text})
    return record


def test_actions_are_placed_by_entries_and_positions_are_unchanged() -> None:
    record = alien_city_record(5)
    row = GameRow(id="ac-1", game="alien-city", status="active", record=record)
    record_action(row, "pause", "mod@x", "", NOW, 5)
    removed = rewind(record, 3)
    record_action(row, "rollback", "mod@x", "oops", NOW, 5, moves=2, removed=removed)
    record["actions"].append({"action": "resend", "by": "mod@x", "ply": 1})  # hand-written: no entries
    placed = {state.ply: [a["action"] for a in actions] for state, actions in positions_with_actions(record)}
    assert placed == {0: [], 1: ["resend"], 2: [], 3: ["pause", "rollback"]}
    assert [s.ply for s in positions(record)] == [0, 1, 2, 3]
    # the pause happened at ply 5 of the abandoned line: when the game grows again, it stays where
    # that line was cut off
    record["moves"] += removed
    placed = {state.ply: [a["action"] for a in actions] for state, actions in positions_with_actions(record)}
    assert placed[3] == ["pause", "rollback"] and placed[5] == []
    assert replay_record(record).ply == 5


def test_describe_action() -> None:
    assert describe_action({"action": "rollback", "moves": 2, "by": "mod@x", "ply": 7, "why": "w"}) == (
        "--- moderator action at ply 7: rollback 2 moves by mod@x: w")
    assert describe_action({"action": "end", "result": {"winners": ["a", "b"]}, "by": "m", "ply": 1}) == (
        "--- moderator action at ply 1: end: draw by m")
    assert describe_action({"action": "undo", "moves": 1, "by": "p@x", "ply": 4,
                            "accepted_by": ["q@x"]}) == (
        "--- players' action at ply 4: undo 1 move by p@x (accepted by q@x)")


def space_truckin_record_with_a_drop(seed: int = 5) -> dict:
    """Three players; the seat to move after ply 2 is dropped; eight moves in all."""
    from pbem.record import append_move, draw_chances, iso

    game = get_game("space-truckin")
    rng = random.Random(seed)
    record = new_record(game, {}, game.create_setup({}, rng, 3))
    state = game.start({}, record["setup"])
    draw_chances(game, state, record, NOW)
    for ply in range(8):
        if ply == 2:
            state.drop_seat(state.to_move)
            record["moves"].append({"drop": state.dropped_seats[0], "at": iso(NOW), "reason": "forfeit"})
            record["dropped"] = list(state.dropped_seats)
        append_move(game, state, record, state.move_text(state.random_move(rng)), NOW)
    return record


def test_drops_are_folded_like_draws_and_a_rewind_past_one_takes_it_back() -> None:
    record = space_truckin_record_with_a_drop()
    dropped = record["dropped"][0]
    assert [s.ply for s in positions(record)] == list(range(9))
    assert [s.dropped_seats for s in positions(record)][1:4] == [(), (dropped,), (dropped,)]
    kept = dict(record, moves=list(record["moves"]))
    rewind(kept, 2)  # back to the position the drop belongs to: it stays
    assert replay_record(kept).dropped_seats == (dropped,) and kept["dropped"] == [dropped]
    assert kept["moves"][-1]["drop"] == dropped
    removed = rewind(record, 1)  # further back: the seat plays again
    assert any("drop" in e for e in removed) and "dropped" not in record
    state = replay_record(record)
    assert state.ply == 1 and state.dropped_seats == ()
