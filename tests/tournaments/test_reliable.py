"""``tournament new ... reliable 90``: only players who lost at most 10 % of their finished games on
time may enter (their record as ``pbem.clocks.reliability`` counts it, as for an open challenge's
``join``); a refused ``enter`` says why with the player's own figures, in their language; the
listing, the table and the site say what the tournament asks for; the JSON twin says the same."""

from __future__ import annotations

import json
from pathlib import Path

from pbem.archive.search import Filters
from pbem.archive.site import write_site
from pbem.tournaments import site as tournament_pages
from tests.server.players import example_move, headline, text_of
from tests.store.conftest import Backend
from tests.tournaments.club import Club

LATE, KEEN, NEW = "late@example.org", "keen@example.org", "new@example.org"


def flat(message: object) -> str:
    """The text with its lines joined, as a reader reads a wrapped sentence."""
    return " ".join(text_of(message).split())  # type: ignore[arg-type]


def lose_on_time(club: Club) -> None:
    """``LATE`` loses a game of a first tournament on time (a day a move, forfeit)."""
    club.moderate("tournament new alien-city swiss rounds 1 max 2 time 1 forfeit starts 2026-12-10")
    for player in (KEEN, LATE):
        club.send(player, "help")
        club.enter(player, "t-1")  # full: it starts at once
    row = club.store.list_games("active")[0]
    for _ in range(3 * 24 * 2):  # KEEN answers each turn at once; LATE never does
        club.tick(minutes=30)
        if club.store.tournament_views().get("t-1").status == "over":
            break
        row = club.store.get_game(row.id)
        if row.status == "active" and next(s.email for s in row.seats if s.seat == row.to_move) == KEEN:
            mail = club.game_mail(KEEN, row.id)
            club.reply(KEEN, mail, example_move(mail))
    game = club.store.get_game(row.id)
    assert game.status == "over" and game.record["result"]["reason"] == "forfeit", game.record["result"]


def test_a_tournament_for_reliable_players(backend: Backend, tmp_path: Path) -> None:
    club = Club(tmp_path, backend.target, deadlines={"vacation_days_per_year": 0})
    try:
        lose_on_time(club)
        answer = club.moderate("tournament new alien-city swiss rounds 2 reliable 90 starts 2026-12-30")
        assert "For players who lost at most 10 % of their finished games on time (reliable 90)." in \
            flat(answer), flat(answer)
        refused = club.send(LATE, "enter t-2")
        assert headline(refused).startswith("Not done"), headline(refused)
        said = flat(refused)
        assert ("t-2 is for players who lost at most 10 % of their finished games on time (reliable 90); "
                "you lost 1 of 1 on time, so you are 0 % reliable.") in said, said
        assert "'tournaments' lists the others" in said
        assert club.store.tournament_views().get("t-2").doc["entrants"] == []
        # the winner (no game lost on time) and a newcomer (no finished game) may enter
        assert headline(club.enter(KEEN, "t-2")).startswith("You entered t-2")
        club.send(NEW, "help")
        assert headline(club.enter(NEW, "t-2")).startswith("You entered t-2")
        # in German, with the same figures
        club.reply(LATE, club.send(LATE, "set language de"), "set language de")
        german = flat(club.send(LATE, "enter t-2"))
        assert "t-2 ist für Spieler" in german and "(reliable 90)" in german and "1 von 1" in german, german
        listing = flat(club.send(NEW, "tournaments"))
        assert "(reliable 90)" in listing, listing
        table = flat(club.send(NEW, "tournament t-2"))
        assert "(reliable 90)" in table
        twin = {"command": "tournament", "action": "new", "game": "alien-city", "format": "round-robin",
                "settings": ["reliable", "95%", "starts", "2026-12-30"]}
        answer = club.send("mod@example.org", json.dumps({"commands": [twin], "token": club.token}))
        assert "(reliable 95)" in flat(answer), flat(answer)
        assert club.store.tournament_views().get("t-3").doc["settings"]["reliable"] == 95
        bad = club.moderate("tournament new alien-city swiss reliable 101")
        assert "'reliable 101': a whole number from 1 to 100, e.g. reliable 90" in flat(bad)
        assert tournament_pages
        write_site(club.store, tmp_path / "site", Filters(), now=club.clock.now())
        page = (tmp_path / "site" / "tournaments" / "t-2.html").read_text()
        assert "(reliable 90)" in page
    finally:
        club.close()
