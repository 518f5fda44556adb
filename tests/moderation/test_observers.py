"""Observers: boards after every move, never hidden information, listed by ``games``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from tests.moderation.helpers import ALICE, BOB, CAROL, ModServer, Table, seat_token_in, start
from tests.server.harness import headline, text_of, to
from tests.server.players import attached_record


@pytest.fixture
def server(tmp_path: Path):
    srv = ModServer(tmp_path)
    yield srv
    srv.close()


def json_parts(message) -> list[str]:
    parts = []
    for part in message.walk():
        if part.get_content_type() == "application/json":
            content = part.get_content()
            parts.append(content if isinstance(content, str) else content.decode())
    return parts


def test_observers_of_space_truckin_never_see_the_pile(server: ModServer) -> None:
    out = server.submit(server.mail(ALICE, f"new space-truckin with {BOB}"))
    game_id = server.store.list_games()[0].id
    watched = to(server.submit(server.mail(CAROL, f"observe {game_id}")), CAROL)
    assert "observing" in text_of(watched[0]).lower() and "not started" in text_of(watched[0])
    invitation = to(out, BOB)[0]
    table = Table(server)
    started = table.take(server.submit(reply_to(invitation, BOB, "accept")))
    observer_mails = to(started, CAROL)
    table.play(8)
    observer_mails += [m for rcpt, m in table.everything if rcpt == CAROL and m not in observer_mails]
    # one board at the start and one after every move
    assert len(observer_mails) == 1 + 8
    assert headline(observer_mails[0]).startswith(f"Game {game_id} has started;")
    for number, message in enumerate(observer_mails[1:], 1):
        assert f"(move {number}); " in headline(message) and headline(message).endswith("is to move.")
    # the record an observer may ask for is the players' view too
    asked = to(server.submit(reply_to(observer_mails[-1], CAROL, f"record {game_id}")), CAROL)
    observer_mails += asked
    assert attached_record(asked[0])["id"] == game_id
    pile = server.game(game_id).record["setup"]["pile"]
    for message in observer_mails:
        raw = message.as_bytes()
        assert seat_token_in(server, message) is None, "an observer never gets a seat's token"
        for part in json_parts(message):
            assert '"pile"' not in part
        record = attached_record(message)
        assert record is None or "pile" not in record["setup"]
        # no run of the hidden draw order appears anywhere in the mail
        assert json.dumps(pile[-3:]).encode() not in raw
        assert "Tiles left" in text_of(message) or message in asked


def test_observe_games_listing_and_unobserve(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server))
    reply = to(server.submit(server.mail(CAROL, "observe ac-1")), CAROL)[0]
    text = text_of(reply)
    assert headline(reply) == "You are now observing ac-1" and "Legal builds" not in text
    assert str(reply["Subject"]) == "[pbem ac-1] alice vs bob" and reply["X-Pbem-Game"] == "ac-1"
    again = to(server.submit(server.mail(CAROL, "observe ac-1")), CAROL)[0]
    assert headline(again) == "You were already observing ac-1"
    listing = text_of(to(server.submit(server.mail(CAROL, "games")), CAROL)[0])
    assert "Games you watch" in listing and "ac-1" in listing
    table.play(1)
    assert len([m for rcpt, m in table.everything if rcpt == CAROL]) == 1
    out = server.submit(server.mail(CAROL, "unobserve ac-1"))
    assert headline(to(out, CAROL)[0]) == "You no longer observe ac-1; no more mail about it"
    table.play(1)
    assert len([m for rcpt, m in table.everything if rcpt == CAROL]) == 1
    listing = text_of(to(server.submit(server.mail(CAROL, "games")), CAROL)[0])
    assert "Games you watch" not in listing
    refused = text_of(to(server.submit(server.mail(CAROL, "unobserve ac-1")), CAROL)[0])
    assert "not observing" in refused


def test_players_cannot_observe_their_own_game_and_unknown_games_are_refused(server: ModServer) -> None:
    start(server)
    text = text_of(to(server.submit(server.mail(ALICE, "observe ac-1")), ALICE)[0])
    assert "you play in game ac-1" in text
    text = text_of(to(server.submit(server.mail(CAROL, "observe ac-99")), CAROL)[0])
    assert "there is no game ac-99" in text
    text = text_of(to(server.submit(server.mail(CAROL, "observe nonsense words")), CAROL)[0])
    assert "observe takes a game id" in text
