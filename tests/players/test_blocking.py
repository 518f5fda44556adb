"""A player's own block list by mail: a blocked address's invitation is declined without a word to the
player (the challenger reads an ordinary decline), its messages and notes after its moves do not
reach the player while the game plays on, it neither sees nor joins the player's open challenge,
invitations waiting for an answer are declined by the block, and a change needs the address's
token."""

from __future__ import annotations

from tests.classic.conftest import ANN, BO, CY, Table, flat, only
from tests.server.harness import headline, text_of
from tests.server.players import Player


def block(table: Table, player: str, address: str) -> None:
    """``player`` blocks ``address``, proving their own address with a token (a reply to any mail
    of the server: the first ``block`` mail gets the line to confirm)."""
    asked = only(table.mail(player, f"block {address}"), player)
    assert headline(asked) == f"Confirm: block {address}"
    done = only(table.reply(player, f"block {address}", asked), player)
    assert headline(done) == f"Blocked: {address}"


def test_a_blocked_invitation_is_declined_without_a_word_to_the_player(table: Table) -> None:
    assert headline(only(table.mail(ANN, "blocked"), ANN)) == "You block no addresses"
    block(table, ANN, BO)
    listing = only(table.mail(ANN, "blocked"), ANN)
    assert headline(listing) == "You block 1 address"
    assert f"{BO}  since 2026-11-20" in text_of(listing)
    out = table.mail(BO, f"new alien-city with {ANN}\nFancy a game?")
    assert [rcpt for rcpt, _mail in out] == [BO]  # nothing at all to Ann
    answer = only(out, BO)
    assert headline(answer) == f"{ANN} declined; game ac-1 is cancelled"  # the words of any decline
    assert "block" not in flat(answer).lower()
    row = table.game("ac-1")
    assert row.status == "declined" and row.record["result"]["reason"] == "declined"
    # nor does her list of games show it (it did: "ac-1 Alien City vs bo ... declined"); his does
    assert headline(only(table.mail(ANN, "games"), ANN)) == "You have no games"
    assert "ac-1" in text_of(only(table.mail(BO, "games"), BO))
    # once unblocked, Bo's invitations reach her again
    asked = only(table.reply(ANN, f"unblock {BO}"), ANN)
    assert headline(asked) == f"Unblocked: {BO}"
    out = table.server.submit(table.server.mail(BO, f"new alien-city with {ANN}"))  # a new thread
    assert headline(only(out, ANN)) == f"{BO} invites you to Alien City"


def test_a_game_in_progress_plays_on_without_the_blocked_players_words(table: Table) -> None:
    game_id = table.start()  # Ann (black) moves first
    ann_turn = table.latest[ANN]
    block(table, BO, ANN)
    # Ann's move reaches Bo, her note after it does not; she is told it went to him, as ever
    move = Player(ANN, 1).choose_move(ann_turn)
    out = table.reply(ANN, f"{move}\nYou will never see this coming!", ann_turn)
    bo = only(out, BO)
    assert headline(bo).startswith(f"Your move (move 2). {ANN} played ")
    assert "never see this" not in flat(bo)
    assert f"Your note went to white ({BO})." in flat(only(out, ANN))
    # a message is not relayed either, and the sender's confirmation does not say so
    out = table.reply(ANN, f"message {game_id} Hello?")
    assert [rcpt for rcpt, _mail in out] == [ANN]
    assert headline(only(out, ANN)) == f"Your message went to {BO}"
    # Bo's own words still reach Ann: the block is his, not hers
    out = table.reply(BO, f"message {game_id} Good luck")
    assert headline(only(out, ANN)) == f"{BO} writes: Good luck"
    # the game goes on: Bo moves, Ann hears of it
    out = table.reply(BO, Player(BO, 2).choose_move(bo), bo)
    assert headline(only(out, ANN)).startswith("Your move (move 3).")


def test_the_blocked_address_can_neither_see_nor_join_an_open_challenge(table: Table) -> None:
    block(table, ANN, BO)
    posted = only(table.mail(ANN, "new alien-city open as black"), ANN)
    assert headline(posted).startswith("Open challenge ac-1 posted")
    assert headline(only(table.mail(BO, "challenges"), BO)) == "No open challenges"
    assert headline(only(table.mail(CY, "challenges"), CY)) == "Open challenges: 1"
    refused = only(table.reply(BO, "join ac-1", only(table.mail(BO, "challenges"), BO)), BO)
    assert headline(refused) == ("Not done: challenge ac-1 is not open to you. Send 'challenges' for the "
                                 "open ones.")
    assert table.game("ac-1").status == "open"


def test_blocking_declines_the_invitations_waiting_for_an_answer(table: Table) -> None:
    out = table.mail(BO, f"new alien-city with {ANN}")
    invitation = only(out, ANN)
    asked = only(table.reply(ANN, f"block {BO}", invitation), ANN)  # the invitation proves her address
    assert headline(asked) == f"Blocked: {BO}"
    assert "Its invitation ac-1 is declined." in flat(asked)
    assert table.game("ac-1").status == "declined"
    out = table.latest[BO]
    assert headline(out) == f"{ANN} declined; game ac-1 is cancelled"


def test_wrong_block_commands_say_what_is_right(table: Table) -> None:
    assert headline(only(table.mail(ANN, "block bo"), ANN)) == (
        "Not done: 'bo' is not a mail address: block NAME@EXAMPLE.ORG")
    assert headline(only(table.mail(ANN, f"block {ANN}"), ANN)) == f"Not done: {ANN} is your own address."
    assert headline(only(table.mail(ANN, "block pbem@localhost"), ANN)) == (
        "Not done: pbem@localhost is the server, not a player.")
    assert headline(only(table.mail(ANN, f"unblock {BO}"), ANN)) == (
        f"Not done: {BO} is not on your block list (send 'blocked' for the list).")
    block(table, ANN, BO)
    assert headline(only(table.mail(ANN, f"block <{BO.upper()}>"), ANN)) == (
        f"Not done: {BO} is already on your block list (send 'blocked' for the list).")
    assert "block takes one mail address" in flat(only(table.mail(ANN, "block a@x.org b@x.org"), ANN))
    # a forged unblock changes nothing: the line goes to the address itself
    asked = only(table.mail(ANN, f"unblock {BO}"), ANN)
    assert headline(asked) == f"Confirm: unblock {BO}"
    with table.server.store.transaction() as tx:
        assert tx.blocked_by(BO) == {ANN}
