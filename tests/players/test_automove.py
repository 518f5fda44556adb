"""One-move turns by mail (``set automove on``): the only legal move is played for the player in the
same step as the move that brought their turn, mailed as "played for you: the only legal move",
recorded as an automatic move that replays identically; never when there is a choice, never for a
player who did not ask; after a queued reply; and after a move of the computer opponent."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine import State, get_game
from pbem.processing.computer import move_mail
from pbem.record import append_move, replay_record
from tests.classic.conftest import ANN, BO, Table, flat, only
from tests.server.harness import headline, text_of

SEATS = {"black": ANN, "white": BO}


def random_play(store: Any, game_id: str, found: Callable[[State], Any], now: datetime) -> Any:
    """Random moves (claims too: a claim left to make is a choice), written into the game as moves
    by mail would be, until ``found`` names what to play next; a game that ends first is played
    again from where it stood with other moves."""
    with store.transaction() as tx:
        row = tx.get_game(game_id, for_update=True)
        game = get_game(row.game)
        start = list(row.record["moves"])
        for attempt in range(40):
            rng = random.Random(attempt)
            row.record["moves"] = list(start)
            state = replay_record(row.record, game)
            while not state.is_over:
                wanted = found(state)
                if wanted is not None:
                    row.to_move = state.to_move
                    tx.save_game(row)
                    return wanted
                append_move(game, state, row.record, state.move_text(state.random_move(rng)), now)
    raise AssertionError("no such position in 40 random games")


def advance(table: Table, game_id: str, found: Callable[[State], Any]) -> Any:
    return random_play(table.server.store, game_id, found, table.server.clock.now())


def after(state: State, move: Any) -> State:
    trial = state.copy()
    trial.push(move)
    return trial


def forced_reply(state: State) -> tuple[str, str] | None:
    """Black to move, and a move of black that leaves white a forced move, the last of the game."""
    if state.to_move != "black":
        return None
    for move in state.legal_moves():
        trial = after(state, move)
        forced = trial.forced_move() if not trial.is_over and trial.to_move == "white" else None
        if forced is not None and after(trial, forced).is_over:
            return state.move_text(move), trial.move_text(forced)
    return None


def forced_going_on(state: State) -> tuple[str, str, str] | None:
    """(the seat to move, a move of it, the other seat's forced move after it) where the game goes on
    after the forced move."""
    for move in state.legal_moves():
        trial = after(state, move)
        if trial.is_over or trial.to_move == state.to_move:
            continue
        forced = trial.forced_move()
        if forced is not None and not after(trial, forced).is_over:
            return state.to_move, state.move_text(move), trial.move_text(forced)
    return None


def automove(table: Table, player: str) -> None:
    out = table.reply(player, "set automove on")
    assert headline(only(out, player)) == "Done: automove is now on: your only legal move is played for you"


def board_mail(table: Table, player: str, game_id: str):
    """A fresh board of the game: the mail a player replies to with a move."""
    return only(table.reply(player, f"board {game_id}"), player)


def test_the_only_legal_move_is_played_for_a_player_who_asked(table: Table) -> None:
    game_id = table.start()
    settings = only(table.reply(BO, "settings"), BO)
    assert "automove  off: you choose every move yourself" in text_of(settings)
    automove(table, BO)
    assert "automove  on: your only legal move is played for you" in text_of(
        only(table.reply(BO, "settings"), BO))
    theirs, forced = advance(table, game_id, forced_reply)
    out = table.reply(ANN, theirs, board_mail(table, ANN, game_id))
    row = table.game(game_id)
    last = row.record["moves"][-1]
    assert (last["seat"], last["move"], last.get("automatic")) == ("white", forced, True)
    ann, bo = only(out, ANN), only(out, BO)
    number = len([e for e in row.record["moves"] if "move" in e])
    assert row.status == "over"  # the game's last move: the game-over mails tell it
    assert headline(ann).startswith("Game over") and headline(bo).startswith("Game over")
    assert f"{BO} played {forced} automatically (the only legal move)." in flat(ann)
    assert f"{BO} played {forced} automatically (the only legal move)." in flat(bo)
    assert f"Played for you: the only legal move, {forced} (move {number})." in flat(bo)
    assert "To choose every move yourself: set automove off" in flat(bo)
    # recorded like any move: it replays to the same position, and the history marks it
    assert replay_record(row.record).ply == number
    history = text_of(only(table.mail(ANN, f"history {game_id}"), ANN))
    assert f"{forced} (automatic)" in history


def test_after_the_move_played_for_them_the_game_goes_on(table: Table) -> None:
    game_id = table.start()
    seat, theirs, forced = advance(table, game_id, forced_going_on)
    mover, other = SEATS[seat], SEATS["white" if seat == "black" else "black"]
    automove(table, other)
    out = table.reply(mover, theirs, board_mail(table, mover, game_id))
    number = len([e for e in table.game(game_id).record["moves"] if "move" in e])
    mine, theirs_mail = only(out, mover), only(out, other)
    assert headline(mine) == (f"Applied: {theirs} (move {number - 1}). {other} played {forced} "
                              f"automatically (the only legal move). Your move (move {number + 1}).")
    assert headline(theirs_mail) == (f"{mover} played {theirs} (move {number - 1}); you played {forced} "
                                     f"automatically (the only legal move); {seat} ({mover}) is to move.")
    body = text_of(theirs_mail).split("\n\n", 1)[1]
    assert body.startswith(f"Played for you: the only legal move, {forced} (move {number}).")


def two_forced(state: State) -> tuple[str, str, str, str] | None:
    """(the seat to move, a move of it, the other seat's forced move, then the mover's forced move)."""
    for move in state.legal_moves():
        trial = after(state, move)
        first = trial.forced_move() if not trial.is_over and trial.to_move != state.to_move else None
        if first is None:
            continue
        then = after(trial, first)
        second = then.forced_move() if not then.is_over and then.to_move == state.to_move else None
        if second is not None:
            return state.to_move, state.move_text(move), trial.move_text(first), then.move_text(second)
    return None


def test_forced_moves_are_played_in_a_chain(table: Table) -> None:
    """Both chose automove: the move that leaves the opponent one move leaves the mover one move
    after it too; both are played in the same step, each told what was played for them."""
    game_id = table.start()
    seat, move, first, second = advance(table, game_id, two_forced)
    mover, other = SEATS[seat], SEATS["white" if seat == "black" else "black"]
    automove(table, mover)
    automove(table, other)
    out = table.reply(mover, move, board_mail(table, mover, game_id))
    moves = [e for e in table.game(game_id).record["moves"] if "move" in e]
    at = max(i for i, m in enumerate(moves) if (m["seat"], m["move"]) == (seat, move))
    played = [(m["seat"], m["move"], m.get("automatic", False)) for m in moves[at:at + 3]]
    assert played == [(seat, move, False), (played[1][0], first, True), (seat, second, True)]
    assert all(m.get("automatic") for m in moves[at + 1:])  # and any more the chain brought
    mine, theirs = only(out, mover), only(out, other)
    assert (f"{other} played {first} automatically (the only legal move). You played {second} "
            "automatically (the only legal move).") in flat(mine)
    assert f"Played for you: the only legal move, {second}" in flat(mine)
    assert f"Played for you: the only legal move, {first}" in flat(theirs)
    assert f"Played for you: the only legal move, {second}" not in flat(theirs)
    assert replay_record(table.game(game_id).record).ply == len(moves)


def test_nothing_is_played_when_there_is_a_choice(table: Table) -> None:
    game_id = table.start()
    automove(table, BO)
    turn = board_mail(table, ANN, game_id)
    state = replay_record(table.game(game_id).record)
    move = state.move_text(state.legal_moves()[0])
    out = table.reply(ANN, move, turn)  # Bo has dozens of builds: his turn waits for him
    assert headline(only(out, BO)).startswith("Your move (move 2).")
    assert not any(e.get("automatic") for e in table.game(game_id).record["moves"])


def test_nothing_is_played_for_a_player_who_did_not_ask(table: Table) -> None:
    game_id = table.start()
    automove(table, BO)
    off = only(table.reply(BO, "set automove off"), BO)
    assert headline(off) == "Done: automove is now off: you choose every move yourself"
    theirs, _forced = advance(table, game_id, forced_reply)
    out = table.reply(ANN, theirs, board_mail(table, ANN, game_id))
    assert headline(only(out, BO)).startswith("Your move")
    assert "Played for you" not in flat(only(out, BO))
    assert not any(e.get("automatic") for e in table.game(game_id).record["moves"])
    wrong = only(table.reply(BO, "set automove sometimes"), BO)
    assert headline(wrong) == "Not done: automove takes on or off, not 'sometimes': e.g. set automove on"


def queued_then_forced(state: State) -> tuple[str, str, str] | None:
    """White to move; a move of white, a reply of black, and then white's forced move, after which
    the game goes on (so that white's answer is an ordinary confirmation, which must not be
    dropped: it says what was played for them)."""
    if state.to_move != "white" or len(state.legal_moves()) > 20:
        return None
    for theirs in state.legal_moves():
        trial = after(state, theirs)
        if trial.is_over or trial.to_move != "black":
            continue
        for mine in trial.legal_moves():
            then = after(trial, mine)
            forced = then.forced_move() if not then.is_over and then.to_move == "white" else None
            if forced is not None and not after(then, forced).is_over:
                return state.move_text(theirs), trial.move_text(mine), then.move_text(forced)
    return None


def test_a_forced_move_follows_a_queued_reply(table: Table) -> None:
    game_id = table.start()
    automove(table, BO)
    theirs, mine, forced = advance(table, game_id, queued_then_forced)
    queued = table.reply(ANN, f"queue {game_id}\nif {theirs} then {mine}", board_mail(table, ANN, game_id))
    assert headline(only(queued, ANN)).startswith(f"Queued for {game_id}: 1 line")
    out = table.reply(BO, theirs, board_mail(table, BO, game_id))
    moves = [e for e in table.game(game_id).record["moves"] if "move" in e][-3:]
    assert [(m["seat"], m["move"], bool(m.get("queued")), bool(m.get("automatic"))) for m in moves] == [
        ("white", theirs, False, False), ("black", mine, True, False), ("white", forced, False, True)]
    bo = only(out, BO)  # sent although Bo chose no confirmations of his own moves (notify turn)
    number = len([e for e in table.game(game_id).record["moves"] if "move" in e])  # Bo's forced one
    assert headline(bo) == (f"Applied: {theirs} (move {number - 2}). {ANN} replied {mine} (queued). You "
                            f"played {forced} automatically (the only legal move). black ({ANN}) is next.")
    assert f"Played for you: the only legal move, {forced}" in flat(bo)
    assert f"you replied {mine} (queued); {BO} played {forced} automatically" in flat(only(out, ANN))
    assert replay_record(table.game(game_id).record).ply == len(
        [e for e in table.game(game_id).record["moves"] if "move" in e])


def test_a_forced_move_follows_the_computers_move(table: Table) -> None:
    out = table.mail(ANN, "new alien-city with computer:1 as white")
    game_id = str(only(out, ANN)["X-Pbem-Game"])
    automove(table, ANN)

    def computer_then_forced(state: State) -> str | None:
        if state.to_move != "black":
            return None
        for move in state.legal_moves():
            trial = after(state, move)
            if not trial.is_over and trial.to_move == "white" and trial.forced_move() is not None:
                return state.move_text(move)
        return None

    move = advance(table, game_id, computer_then_forced)
    row = table.game(game_id)
    seat = next(s for s in row.seats if s.seat == "black")
    state = replay_record(row.record)
    raw = move_mail(table.server.config, table.server.processor.secret, row, seat, state.ply, move,
                    table.server.clock.now())
    out = table.server.submit(raw)
    ann = only(out, ANN)
    moves = table.game(game_id).record["moves"]
    assert moves[-1]["seat"] == "white" and moves[-1]["automatic"] is True
    assert f"Played for you: the only legal move, {moves[-1]['move']}" in flat(ann)
    assert "computer level 1 played" in headline(ann) or headline(ann).startswith("Game over")
