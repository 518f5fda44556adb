"""Open challenges by mail: posted, listed with the challenger's rating, joined by a third address
(after proving it), started; withdrawn; expiring unjoined by the scheduler; the refusals."""

from __future__ import annotations

import re

import pytest

from pbem.community.scheduler import Scheduler
from tests.classic.conftest import ANN, BO, CY, DEE, Table, flat, only
from tests.server.harness import headline, text_of, to
from tests.server.players import Player, follow, mailto_links


def test_an_open_challenge_joined_by_a_third_address(table: Table) -> None:
    out = table.mail(ANN, "new alien-city location-bonus open time 3 rating 1000-2000 as black")
    posted = only(out, ANN)
    assert headline(posted) == "Open challenge ac-1 posted: Alien City, waiting for 1 player"
    assert "3 days per move" in flat(posted) and "rated 1000 to 2000" in flat(posted)
    assert table.game("ac-1").status == "open" and len(table.game("ac-1").seats) == 1
    games = flat(only(table.mail(ANN, "games"), ANN))
    assert "ac-1 Alien City vs anyone you play black; an open challenge, waiting for players" in games
    listing = only(table.mail(CY, "challenges"), CY)
    assert headline(listing) == "Open challenges: 1"
    # anyone may ask for the listing: the challenger by the name the public site gives them, not
    # their address; the same name every time; "you" in their own listing
    assert re.search(r"By Player [A-Z2-9]{5} \(rating 1500, no rated games yet\); 1 of 2 seats taken; "
                     r"free: white\.", flat(listing)) and ANN not in flat(listing)
    public = re.search(r"By (Player \w{5})", flat(listing)).group(1)
    assert public in flat(only(table.mail(DEE, "challenges"), DEE))
    assert "By you (rating 1500" in flat(only(table.mail(ANN, "challenges"), ANN))
    assert "location bonus" in flat(listing)
    # the listing says what happens at a deadline, as an invitation does
    assert "3 days per move; a late player" in flat(listing) and "forfeits" in flat(listing)
    join = next(link for link in mailto_links(listing) if link["text"] == "Join ac-1")
    out = table.send(follow(join, CY))  # the listing's Reply-To proves Cy's address
    started = only(out, CY)
    assert headline(started) == "Game ac-1 has started; black (ann@example.org) moves first."
    ann = only(out, ANN)
    assert headline(ann).startswith("Your move (move 1). Game ac-1 has started")
    assert "Deadline for your move" in flat(ann)
    row = table.game("ac-1")
    assert row.status == "active" and {s.seat: s.email for s in row.seats} == {"black": ANN, "white": CY}
    assert row.record["time_control"]["days_per_move"] == 3 and row.record["options"]["location_bonus"]
    assert {str(m["Subject"]) for m in (posted, ann, started)} == {"[pbem ac-1] ann vs anyone"}
    # the joiner plays: the game goes on as any other
    out = table.reply(ANN, Player(ANN, 1).choose_move(ann), ann)
    assert headline(only(out, CY)).startswith(f"Your move (move 2). {ANN} played ")
    # joining again: the challenge is full, the game has started
    out = table.mail(DEE, "join ac-1")
    assert "challenge ac-1 is full: the game has started" in flat(only(out, DEE))


def test_join_needs_proof_and_refuses_ones_own_and_out_of_range(table: Table) -> None:
    table.mail(ANN, "new alien-city open rating 1600-1800")
    out = table.mail(ANN, "join ac-1")
    assert "you already have a seat in ac-1 (it is your own challenge)" in flat(only(out, ANN))
    out = table.mail(BO, "join ac-1")
    assert "ac-1 is for players rated 1600 to 1800 in Alien City; your rating is 1500" in flat(only(out, BO))
    table.mail(CY, "new space-truckin open players 3 as green")
    out = table.mail(BO, "join st-1")  # a fresh mail: From alone proves nothing
    asked = only(out, BO)
    assert headline(asked) == "Confirm: join st-1" and table.game("st-1").status == "open"
    out = table.send(follow(mailto_links(asked)[0], BO))
    assert headline(only(out, BO)) == "You joined st-1 as red; waiting for 1 more player"
    listing = flat(only(table.mail(DEE, "challenges"), DEE))
    assert "(rating 1500, no rated games yet); 2 of 3 seats taken; free: blue." in listing
    assert CY not in listing and BO not in listing
    table.reply(CY, "set nickname Cyrano")  # a nickname is what everyone reads instead
    assert "By Cyrano (rating 1500" in flat(only(table.mail(DEE, "challenges"), DEE))
    out = table.mail(BO, "withdraw st-1")  # only the author withdraws (here without a token too)
    assert table.game("st-1").status == "open"
    out = table.send(follow(mailto_links(only(table.mail(DEE, "join st-1"), DEE))[0], DEE))
    row = table.game("st-1")
    assert row.status == "active" and [s.seat for s in row.seats] == ["red", "blue", "green"]
    assert {s.seat: s.email for s in row.seats} == {"red": BO, "blue": DEE, "green": CY}
    assert sorted(rcpt for rcpt, _m in out) == [BO, CY, DEE]


def test_withdraw_and_expiry_unjoined(table: Table) -> None:
    out = table.mail(ANN, "new space-truckin open players 3")
    posted = only(out, ANN)
    assert headline(posted) == "Open challenge st-1 posted: Space Truckin', waiting for 2 players"
    out = table.mail(BO, "withdraw st-1")  # not the author: refused without a word (no token)
    assert to(out, BO) == [] and table.game("st-1").status == "open"
    out = table.send(follow(next(a for a in mailto_links(posted) if a["text"] == "Withdraw"), ANN))
    assert headline(only(out, ANN)) == "Your open challenge st-1 is withdrawn"
    assert table.game("st-1").record["result"]["reason"] == "withdrawn"
    out = table.mail(BO, "join st-1")
    assert "challenge st-1 was withdrawn by its author" in flat(only(out, BO))

    table.mail(DEE, "new alien-city open")
    listing = only(table.mail(BO, "challenges"), BO)
    out = table.send(follow(mailto_links(listing)[0], BO))  # joins ac-1... of two seats
    assert table.game("ac-1").status == "active"
    table.mail(DEE, "new alien-city open")
    scheduler = Scheduler(table.server.config, table.server.store, table.server.clock, secret=b"s" * 32)
    table.server.clock.advance(days=13)
    assert scheduler.run_once().expired == 0
    table.server.clock.advance(days=1, minutes=1)
    report = scheduler.run_once()
    assert report.expired == 1
    mails = [m for rcpt, m in table.server.take_outbox() if rcpt == DEE and "ac-2" in headline(m)]
    assert [headline(m) for m in mails] == ["The open challenge ac-2 (Alien City) expired before enough "
                                            "players joined"]
    row = table.game("ac-2")
    assert row.status == "cancelled" and row.record["result"]["reason"] == "expired"
    assert scheduler.run_once().expired == 0  # once
    out = table.mail(CY, "join ac-2")
    assert "challenge ac-2 expired unjoined" in flat(only(out, CY))
    assert headline(only(table.mail(CY, "challenges"), CY)) == "No open challenges"


def test_bad_open_challenges(table: Table) -> None:
    out = table.mail(ANN, "new space-truckin open players 9")
    assert "Space Truckin' is for 2 to 5 players, not '9'" in flat(only(out, ANN))
    out = table.mail(ANN, "new alien-city open rating 1800-1200")
    assert "a rating range is two numbers, low first" in flat(only(out, ANN))
    out = table.mail(ANN, "new alien-city")
    assert flat(only(out, ANN)).count("for anyone") == 1  # the usage says it, once
    assert "or 'new GAME [OPTIONS] open' for anyone" in flat(only(out, ANN))
    assert "'new GAME [OPTIONS] open'" in text_of(only(table.mail(ANN, "help"), ANN))


CANNOT_JOIN = {"en": "You cannot join it: your rating in Alien City is 1500.",
               "de": "Du kannst nicht beitreten: deine Wertung in Alien City ist 1500.",
               "sk": "Nemôžeš sa pridať: tvoje hodnotenie v Alien City je 1500."}


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_the_listing_says_which_challenges_the_reader_cannot_join(table: Table, language: str) -> None:
    """Bo (rated 1500) reads the challenges: the one for players rated 1600-1800 is listed with why
    he cannot join it and no tap to join; the one he may join keeps its tap."""
    with table.server.store.transaction() as tx:
        tx.set_player(BO, {"language": language})
    table.mail(ANN, "new alien-city open rating 1600-1800")
    table.mail(CY, "new alien-city open rating 1400-1600")
    listing = only(table.mail(BO, "challenges"), BO)
    sections = text_of(listing).split("== ")[1:]
    high = next(s for s in sections if s.startswith("ac-1 =="))
    low = next(s for s in sections if s.startswith("ac-2 =="))
    assert CANNOT_JOIN[language] in " ".join(high.split()) and "join ac-1" not in high
    assert CANNOT_JOIN[language] not in " ".join(low.split()) and "join ac-2" in low
    assert [link["body"] for link in mailto_links(listing)] == ["join ac-2"]
    # the refusal, had he tried, says the same rating
    out = table.mail(BO, "join ac-1")
    assert "1600" in flat(only(out, BO)) and "1500" in flat(only(out, BO))
