"""Ending a game by agreement: a draw proposed, accepted and rated; abandon rejected, withdrawn and
lapsing on a move; the refusals, each with the reason and the right form."""

from __future__ import annotations

from pbem.community.standings import compute
from tests.classic.conftest import ANN, BO, CY, Table, flat, only
from tests.server.harness import headline, text_of, to
from tests.server.players import Player, attached_record, follow, mailto_links


def test_draw_proposed_accepted_and_rated(table: Table) -> None:
    game_id = table.start()
    out = table.reply(BO, f"propose {game_id} draw\nI think it is even.")
    assert headline(only(out, BO)) == f"You proposed a draw in {game_id}; waiting for {ANN}"
    offer = only(out, ANN)
    assert headline(offer) == f"Your move (move 1). {BO} proposes a draw in {game_id}"
    assert f"{BO}: I think it is even." in flat(offer)
    assert f"accept {game_id}" in flat(offer) and "does not change whose turn" in flat(offer)
    links = {link["text"]: link for link in mailto_links(offer)}
    assert links["Accept"]["body"] == f"accept {game_id}" and links["Reject"]["body"] == f"reject {game_id}"
    row = table.game(game_id)
    assert row.status == "active" and row.to_move == "black"  # a proposal is not a move
    out = table.send(follow(links["Accept"], ANN))
    assert headline(only(out, ANN)).startswith("Game over: drawn by agreement ")
    assert headline(only(out, BO)).startswith("Game over: drawn by agreement ")
    row = table.game(game_id)
    assert row.status == "over" and row.record["result"]["reason"] == "agreed draw"
    assert sorted(row.record["result"]["winners"]) == ["black", "white"]
    action = row.record["actions"][-1]
    assert (action["action"], action["what"], action["outcome"]) == ("proposal", "draw", "accepted")
    assert attached_record(only(out, BO))["result"]["reason"] == "agreed draw"
    standings = compute([row])["alien-city"]
    assert [(s.player, s.games, s.wins, s.losses, s.draws, round(s.rating)) for s in standings] == [
        (ANN, 1, 0, 0, 1, 1500), (BO, 1, 0, 0, 1, 1500)]
    reply = only(table.mail(ANN, "standings alien-city"), ANN)
    assert "1 drawn" in text_of(reply)


def test_abandon_rejected_then_proposed_again_and_lapsing_on_a_move(table: Table) -> None:
    game_id = table.start()
    out = table.reply(ANN, f"propose {game_id} abandon")
    offer = only(out, BO)
    assert headline(offer) == f"{ANN} proposes to abandon the game in {game_id}"
    out = table.reply(BO, f"reject {game_id}", offer)
    assert headline(only(out, BO)) == f"You rejected {ANN}'s proposal to abandon the game in {game_id}"
    told = only(out, ANN)
    assert headline(told) == (f"Your move (move 1). {BO} rejected your proposal in {game_id}; "
                              "the game goes on")
    out = table.reply(BO, f"accept {game_id}", offer)  # the rejected proposal cannot be accepted
    assert f"{ANN}'s proposal to abandon the game was rejected" in flat(only(out, BO))
    # again, and this time Ann moves instead of waiting: the proposal lapses with the move
    out = table.reply(ANN, f"propose {game_id} abandon", told)
    move = Player(ANN, 3).choose_move(told)
    out = table.reply(ANN, move, told)
    assert f"{ANN}'s proposal to abandon the game lapsed with this move." in flat(only(out, ANN))
    bo = only(out, BO)
    assert headline(bo).startswith("Your move (move 2)")
    assert f"{ANN}'s proposal to abandon the game lapsed with this move." in flat(bo)
    out = table.reply(BO, f"accept {game_id}", offer)
    assert f"lapsed when {ANN} moved" in flat(only(out, BO))
    row = table.game(game_id)
    assert row.status == "active" and "proposal" not in row.record
    outcomes = [a["outcome"] for a in row.record["actions"] if a["action"] == "proposal"]
    assert outcomes == ["rejected", "lapsed"]


def test_withdraw_and_refusals(table: Table) -> None:
    game_id = table.start()
    out = table.reply(BO, f"propose {game_id}")
    assert "propose GAME draw|abandon" in flat(only(out, BO))
    table.reply(BO, f"propose {game_id} draw")
    out = table.reply(BO, f"propose {game_id} abandon")
    assert f"you have already proposed a draw in game {game_id}" in flat(only(out, BO))
    out = table.reply(ANN, f"propose {game_id} abandon")
    assert f"answer it first: accept {game_id} or reject {game_id}" in flat(only(out, ANN))
    out = table.reply(BO, f"accept {game_id}")
    assert "this is your own proposal" in flat(only(out, BO))
    out = table.reply(ANN, f"withdraw {game_id}")
    assert f"only {BO}, who proposed it, can withdraw it" in flat(only(out, ANN))
    out = table.reply(BO, f"withdraw {game_id}")
    assert headline(only(out, BO)) == f"You withdrew your proposal of a draw in {game_id}"
    assert headline(only(out, ANN)) == (f"Your move (move 1). {BO} withdrew the proposal in {game_id}; "
                                        "the game goes on")
    # only the seat's player, with the token: a forged From gets nothing done
    before = table.game(game_id).record
    out = table.mail(BO, f"propose {game_id} draw")
    assert headline(only(out, BO)) == f"A mail about {game_id} from {BO} was not accepted"
    assert table.game(game_id).record == before
    # a finished game
    table.reply(ANN, f"propose {game_id} draw")
    table.reply(BO, f"accept {game_id}", table.latest[BO])
    out = table.reply(BO, f"propose {game_id} abandon")
    assert f"game {game_id} is over; only a running game can end by agreement" in flat(only(out, BO))


def test_abandoned_games_are_not_rated(table: Table) -> None:
    game_id = table.start()
    table.reply(BO, f"propose {game_id} abandon")
    out = table.reply(ANN, f"accept {game_id}")
    assert headline(only(out, ANN)) == "Game over: abandoned by agreement (not rated)"
    row = table.game(game_id)
    assert row.record["result"] == {"reason": "abandoned by agreement", "at": row.record["result"]["at"],
                                    "proposed_by": "white", "winners": []}
    assert compute([row]) == {}


def test_in_a_game_of_three_all_must_accept(table: Table) -> None:
    out = table.mail(ANN, f"new space-truckin with {BO} {CY}")
    game_id = str(to(out, ANN)[0]["X-Pbem-Game"])
    for who_ in (BO, CY):
        table.reply(who_, "accept", to(out, who_)[0])
    out = table.reply(CY, f"propose {game_id} draw")
    assert headline(only(out, CY)).startswith(f"You proposed a draw in {game_id}; waiting for {ANN}, {BO}")
    assert sorted(rcpt for rcpt, _m in out) == [ANN, BO, CY]
    out = table.reply(ANN, f"accept {game_id}")
    assert f"It is agreed when {BO} accepts as well." in flat(only(out, ANN))
    assert table.game(game_id).status == "active"
    out = table.reply(BO, f"accept {game_id}")
    assert sorted(rcpt for rcpt, _m in out) == [ANN, BO, CY]
    row = table.game(game_id)
    assert row.status == "over" and sorted(row.record["result"]["winners"]) == ["blue", "green", "red"]
    assert {s.draws for s in compute([row])["space-truckin"]} == {1}
