"""Queued moves and preview by mail: a two-line queue used on the opponent's move, a queued move that
became illegal refused with a notice, the queue hidden from the opponent, a preview that changes
nothing, and Space Truckin's hidden draw respected by both."""

from __future__ import annotations

import random
import re

from engine import get_game
from pbem.record import append_move, replay_record
from tests.classic.conftest import ANN, BO, DEE, Table, flat, only
from tests.server.harness import headline, text_of
from tests.server.players import attached_record, mailto_links


def position(table: Table, game_id: str):
    row = table.game(game_id)
    return replay_record(row.record, get_game(row.game))


def answers(state, count: int = 2) -> list[tuple[str, str]]:
    """(their move, a legal reply after it) for the first ``count`` moves of the seat to move that
    leave the other seat to move."""
    found = []
    for move in state.legal_moves():
        trial = state.copy()
        trial.push(move)
        if trial.is_over or trial.to_move == state.to_move:
            continue
        replies = trial.legal_moves()
        found.append((state.move_text(move), trial.move_text(replies[len(replies) // 2])))
        if len(found) == count:
            return found
    raise AssertionError("no moves to answer")


def test_a_two_line_queue_is_used_on_the_opponents_move(table: Table) -> None:
    game_id = table.start()
    state = position(table, game_id)
    (first, reply_one), (second, reply_two) = answers(state)
    out = table.reply(BO, f"queue {game_id}\nif {first} then {reply_one}\nif {second} then {reply_two}\n"
                          "Thanks")
    confirmation = only(out, BO)
    assert headline(confirmation) == f"Queued for {game_id}: 2 lines, played when {ANN} moves"
    assert f"if {second} then {reply_two}" in text_of(confirmation)
    assert "did not read" not in text_of(confirmation)
    assert "queue" in table.game(game_id).record
    table.mail(DEE, f"observe {game_id}")
    # Ann plays the second line's move: Bo's reply follows in the same step
    out = table.reply(ANN, second)
    watched = only(out, DEE)
    assert headline(watched) == (f"{ANN} played {second} (move 1); {BO} replied {reply_two} (queued); "
                                 f"black ({ANN}) is to move.")
    ann = only(out, ANN)
    assert headline(ann) == (f"Applied: {second} (move 1). {BO} replied {reply_two} (queued). "
                             "Your move (move 3).")
    assert "for example:" in text_of(ann)  # it is Ann's move again: the board and the legal moves
    bo = only(out, BO)
    assert headline(bo) == (f"{ANN} played {second} (move 1); you replied {reply_two} (queued); "
                            f"black ({ANN}) is to move.")
    row = table.game(game_id)
    moves = [e for e in row.record["moves"] if "move" in e]
    assert [(m["seat"], m["move"], m.get("queued", False)) for m in moves] == [
        ("black", second, False), ("white", reply_two, True)]
    assert "queue" not in row.record  # a queue answers one move
    assert replay_record(row.record).ply == 2


def ending_pair(state) -> tuple[str, str] | None:
    """(a move of the seat to move, a reply of the other seat that ends the game), if any."""
    for move in state.legal_moves():
        after = state.copy()
        after.push(move)
        if after.is_over or after.to_move == state.to_move:
            continue
        for reply in after.legal_moves():
            last = after.copy()
            last.push(reply)
            if last.is_over:
                return state.move_text(move), after.move_text(reply)
    return None


def test_a_queued_move_that_ends_the_game_ends_it_normally(table: Table) -> None:
    game_id = table.start()
    players = {"black": ANN, "white": BO}
    rng = random.Random(5)
    with table.server.store.transaction() as tx:  # random play up to a position near the end
        row = tx.get_game(game_id)
        state = replay_record(row.record)
        while (pair := ending_pair(state) if len(state.legal_moves()) < 12 else None) is None:
            move = state.move_text(rng.choice(state.legal_moves()))
            append_move(get_game(row.game), state, row.record, move, table.server.clock.now())
        row.to_move = state.to_move
        tx.save_game(row)
    mover, waiting = players[state.to_move], players["white" if state.to_move == "black" else "black"]
    table.reply(mover, f"board {game_id}")  # the mover's newest mail: the board of this position
    their, mine = pair
    table.reply(waiting, f"queue {game_id}\nif {their} then {mine}")
    out = table.reply(mover, their)
    assert headline(only(out, mover)).startswith("Game over")
    assert headline(only(out, waiting)).startswith("Game over")
    assert f"{waiting} replied {mine} (queued)" in flat(only(out, mover))
    row = table.game(game_id)
    assert row.status == "over" and row.record["result"]["reason"] == "scored"
    assert row.record["moves"][-1] == {"seat": (state.to_move == "black" and "white") or "black",
                                       "move": mine, "at": row.record["moves"][-1]["at"], "queued": True}
    history = text_of(only(table.mail(mover, f"history {game_id}"), mover))
    assert f"{mine} (queued)" in history


def test_the_queue_is_hidden_from_the_opponent(table: Table) -> None:
    game_id = table.start()
    (first, reply_one), _ = answers(position(table, game_id))
    table.reply(BO, f"queue {game_id}\nif {first} then {reply_one}")
    out = table.reply(ANN, f"record {game_id}")
    record = attached_record(only(out, ANN))
    assert record is not None and "queue" not in record
    assert f"then {reply_one}" not in text_of(only(out, ANN))
    shown = only(table.reply(BO, f"queue {game_id}"), BO)
    assert headline(shown) == f"Your queue for {game_id}: 1 line"
    assert f"if {first} then {reply_one}" in text_of(shown)
    # Ann plays something else: nothing is played for Bo, only Bo hears why
    state = position(table, game_id)
    other = next(state.move_text(m) for m in state.legal_moves() if state.move_text(m) != first)
    out = table.reply(ANN, other)
    assert [rcpt for rcpt, _m in out] == [BO]  # Ann learns nothing of a queue
    bo = only(out, BO)
    assert headline(bo).startswith(f"Your move (move 2). {ANN} played {other}")
    assert f"none of its lines answers {ANN}'s {first}" not in flat(bo)
    assert f"dropped: none of its lines answers {ANN}'s {other}" in flat(bo)
    assert "queue" not in table.game(game_id).record


def spoiler(state) -> tuple[str, str]:
    """(their move, a reply of mine that is legal after some of their moves but not after this
    one): in Alien City, a build on the very lot I wanted."""
    trial = state.copy()
    trial.push(state.legal_moves()[0])
    mine = [trial.move_text(m) for m in trial.legal_moves()]
    for move in state.legal_moves():
        after = state.copy()
        after.push(move)
        if after.is_over or after.to_move == state.to_move:
            continue
        legal = {after.move_text(m) for m in after.legal_moves()}
        for reply in mine:
            if reply not in legal:
                return state.move_text(move), reply
    raise AssertionError("every reply stays legal")


def test_a_queued_move_that_became_illegal_is_refused_with_a_notice(table: Table) -> None:
    game_id = table.start()
    their, mine = spoiler(position(table, game_id))
    out = table.reply(BO, f"queue {game_id}\nthen {mine}")
    confirmation = only(out, BO)
    assert headline(confirmation).startswith(f"Queued for {game_id}: 1 line")
    assert f"Note: {mine} would not be legal if they play" in flat(confirmation)
    out = table.reply(ANN, their)
    bo = only(out, BO)
    assert headline(bo).startswith(f"Your move (move 2). {ANN} played {their}")
    assert f"Your queued moves were not played and are dropped: your queued reply {mine} to {their} is " \
           "no longer legal" in flat(bo)
    assert [rcpt for rcpt, _m in out] == [BO]
    row = table.game(game_id)
    assert len([e for e in row.record["moves"] if "move" in e]) == 1 and "queue" not in row.record
    assert "for example:" in text_of(bo)  # Bo moves by hand now


def test_queue_lines_are_checked_when_queued(table: Table) -> None:
    game_id = table.start()
    state = position(table, game_id)
    (first, reply_one), _ = answers(state)
    out = table.reply(ANN, f"queue {game_id}\nif {first} then {reply_one}")
    assert f"it is your turn in game {game_id} now" in flat(only(out, ANN))
    out = table.reply(BO, f"queue {game_id}\nif tower purple Z9 then {reply_one}")
    assert "queue line 1 ('if tower purple Z9" in flat(only(out, BO))
    assert f"is not a move {ANN} can make now" in flat(only(out, BO))
    out = table.reply(BO, f"queue {game_id}\nif {first} then tower purple Z9")
    assert f"after {first}, 'tower purple Z9' would not be legal" in flat(only(out, BO))
    out = table.reply(BO, f"queue {game_id}\nplease play {reply_one}")
    assert "write 'if THEIR-MOVE then MY-MOVE' or 'then MY-MOVE'" in flat(only(out, BO))
    out = table.reply(BO, f"queue {game_id}\nthen tower purple Z9")
    assert f"'tower purple Z9' would not be legal after any move {ANN} can make" in flat(only(out, BO))
    assert "queue" not in table.game(game_id).record  # a refused queue changes nothing
    out = table.reply(BO, f"queue {game_id}\nthen {reply_one}")
    assert headline(only(out, BO)).startswith(f"Queued for {game_id}: 1 line")
    out = table.reply(BO, f"queue {game_id} clear")
    assert headline(only(out, BO)) == f"Your queued moves for {game_id} are cleared"
    assert "queue" not in table.game(game_id).record
    out = table.reply(BO, f"queue {game_id} clear")
    assert f"you have no queued moves in game {game_id}" in flat(only(out, BO))


def test_preview_changes_nothing(table: Table) -> None:
    game_id = table.start()
    state = position(table, game_id)
    (first, _reply), _ = answers(state)
    before = table.game(game_id).record
    out = table.reply(ANN, f"preview {game_id} {first}")
    mail = only(out, ANN)
    assert headline(mail) == f"Preview of your {first} in {game_id} (nothing was played)"
    after = state.copy()
    after.push(after.parse_move(first))
    text = text_of(mail)
    assert after.render("black") in text
    assert after.render_legal("white") in text and "Legal replies of white" in text
    assert f"Nothing was played: game {game_id} is still at move 1" in flat(mail)
    assert table.game(game_id).record == before
    # the opponent's move, previewed by Bo: what Bo could answer
    out = table.reply(BO, f"preview {game_id} {first}")
    mail = only(out, BO)
    assert headline(mail) == f"Preview of {ANN}'s {first} in {game_id} (nothing was played)"
    assert "Legal replies of white (you)" in text_of(mail) and not mailto_links(mail)
    # an illegal move: the error a real move gets
    out = table.reply(ANN, f"preview {game_id} tower purple Z9")
    refused = only(out, ANN)
    real = only(table.reply(ANN, "tower purple Z9"), ANN)
    assert headline(refused).removeprefix("Not possible: ") == headline(real).removeprefix("Not applied: ")
    assert table.game(game_id).record == before
    out = table.mail("eve@example.net", f"preview {game_id} {first}")
    assert "you do not play in game" in flat(only(out, "eve@example.net"))


def test_space_truckin_hides_the_next_draw(table: Table) -> None:
    game_id = table.start("space-truckin", "")
    state = position(table, game_id)
    mover = ANN if table.game(game_id).to_move == table.game(game_id).seats[0].seat else BO
    waiting = BO if mover == ANN else ANN
    their = state.move_text(state.legal_moves()[0])
    out = table.reply(waiting, f"queue {game_id}\nif {their} then pass")
    assert "something is drawn after their move" in flat(only(out, waiting))
    out = table.reply(waiting, f"preview {game_id} {their}")
    mail = only(out, waiting)
    assert "are not shown: they depend on what is drawn after the move" in flat(mail)
    record = table.game(game_id).record
    drawn = {e["chance"]["tile"] for e in record["moves"] if "chance" in e}
    following = next(tile for tile in record["setup"]["pile"] if tile not in drawn)
    assert "Legal replies" not in text_of(mail)
    assert not re.search(rf"(?<![\w-]){re.escape(following)}\b", text_of(mail))  # not cap-straight#3
