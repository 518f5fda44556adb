"""Change of address and new tokens by mail: the code goes to the new address and only its answer
from there moves seats, settings and ratings; every running game is re-keyed and old tokens are
refused with a notice; the game goes on from the new address; ``rekey``; the moderator's way."""

from __future__ import annotations

import re

from pbem.cli.mailbox import reply_to
from pbem.processing import features
from pbem.processing.handlers import HANDLERS
from tests.classic.conftest import ANN, BO, CY, DEE, Table, flat, only
from tests.server.harness import headline, text_of, to
from tests.server.players import Player, follow, mailto_links

NEW = "ann@new.example.org"
assert features


def code_of(mail) -> str:
    return re.search(r"confirm address ([A-Z0-9]{8})", text_of(mail)).group(1)


def test_address_change_confirmed_from_the_new_address(table: Table) -> None:
    game_id = table.start()
    ann_board = table.latest[ANN]
    out = table.reply(ANN, "set nickname Annie")
    out = table.reply(ANN, f"set address {NEW}")
    assert headline(only(out, ANN)) == f"Confirmation sent to {NEW}"
    asked = only(out, NEW)
    assert headline(asked) == f"Confirm: {ANN} asks to move to this address"
    assert table.game(game_id).seats[0].email == ANN  # nothing moved yet
    link = mailto_links(asked)[0]
    out = table.send(follow(link, NEW))
    done = to(out, NEW)[0]
    assert headline(done) == f"Your address is now {NEW}: 1 game moved here"
    board = next(m for rcpt, m in out if rcpt == NEW and m["X-Pbem-Game"] == game_id)
    assert headline(board).startswith("Your move (move 1). your games now come to this address")
    notice = only(out, ANN)
    assert headline(notice) == "Your games, settings and ratings have moved to the address you confirmed"
    row = table.game(game_id)
    assert {s.seat: s.email for s in row.seats} == {"black": NEW, "white": BO}
    assert row.record["players"]["black"]["token_generation"] == 1
    assert row.record["actions"][-1]["action"] == "address"
    with table.server.store.transaction() as tx:
        assert tx.get_player(NEW).get("nickname") == "Annie" and tx.get_player(ANN) == {}
    # the old tokens are refused with a notice, from the old address and from the new one
    move = Player(ANN, 2).choose_move(ann_board)
    for sender in (ANN, NEW):
        out = table.send(reply_to(ann_board, sender, move))
        refused = only(out, sender)
        assert headline(refused) == f"Not done: an old token of {game_id}"
        assert "carries an old token of black" in flat(refused)
    assert len([e for e in table.game(game_id).record["moves"] if "move" in e]) == 0
    # the game goes on from the new address
    out = table.reply(NEW, move, board)
    assert headline(only(out, BO)).startswith(f"Your move (move 2). Annie played {move}")
    # the code works once
    out = table.send(follow(link, NEW))
    assert "that code was already used" in flat(only(out, NEW))


def test_bad_codes_and_addresses(table: Table) -> None:
    table.start()
    out = table.reply(ANN, f"set address {BO}")
    assert f"{BO} is already registered to another player" in flat(only(out, ANN))
    out = table.reply(ANN, "set address nobody")
    assert "'nobody' is not a mail address: set address NEW@EXAMPLE.ORG" in flat(only(out, ANN))
    out = table.mail(ANN, f"set address {NEW}")  # a fresh mail: the From address is not proven
    assert headline(only(out, ANN)) == f"Confirm: set address {NEW}" and to(out, NEW) == []
    out = table.reply(ANN, f"set address {NEW}")
    code = code_of(only(out, NEW))
    out = table.mail(NEW, "confirm address ABCDEFGH")
    assert "that code is wrong" in flat(only(out, NEW))
    out = table.mail(CY, f"confirm address {code}")
    assert "this code must come back from the new address" in flat(only(out, CY))
    table.server.clock.advance(hours=49)
    out = table.mail(NEW, f"confirm address {code}")
    expired = flat(only(out, NEW))
    assert "that code expired on" in expired and "codes work for 48 hours" in expired
    assert table.game("ac-1").seats[0].email == ANN


def test_rekey_refuses_the_old_token(table: Table) -> None:
    game_id = table.start()
    old = table.latest[BO]
    out = table.reply(BO, f"rekey {game_id}", old)
    fresh = only(out, BO)
    assert headline(fresh) == f"New token for {game_id}: reply to this mail from now on"
    assert fresh["Reply-To"] != old["Reply-To"]
    out = table.send(reply_to(old, BO, f"message {game_id} hello"))
    assert headline(only(out, BO)) == f"Not done: an old token of {game_id}"
    out = table.reply(BO, f"message {game_id} hello", fresh)
    assert headline(only(out, ANN)) == f"{BO} writes: hello"


def test_moderator_moves_a_player_who_lost_the_mailbox(table: Table) -> None:
    game_id = table.start()
    before = table.latest[BO]
    from pbem.community.addresses import move_by_moderator
    from pbem.community.moderation import Moderation

    moderation = Moderation(table.server.config, table.server.store, table.server.clock, secret=b"s" * 32)
    headline_text, _sections, queued = moderation.run(
        "referee", lambda ctx: move_by_moderator(ctx, BO, DEE, by="referee", why="lost mailbox"))
    assert headline_text == f"Moved {BO} to {DEE}" and queued == 2
    out = table.server.take_outbox()
    assert sorted(headline(m) for rcpt, m in out if rcpt == DEE) == [
        f"A moderator moved your games from {BO} to this address",
        f"Game {game_id}: your games now come to this address; black ({ANN}) is to move"]
    row = table.game(game_id)
    action = row.record["actions"][-1]
    assert (action["action"], action["by"], action["why"], action["moderator"]) == (
        "address", "referee", "lost mailbox", True)
    out = table.send(reply_to(before, BO, f"message {game_id} still me?"))
    assert headline(only(out, BO)) == f"Not done: an old token of {game_id}"
    assert "confirm address" in HANDLERS
