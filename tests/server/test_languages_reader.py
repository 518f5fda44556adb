"""A German and a Slovak player against the computer, each mail read as they read it: one form of
address (du / ty) in pbem's texts and the engine's alike, the seats named in their words wherever
pbem names them (as the board below does), and the example move in their words, which the server
applies as written. The seat is chosen with its name in the language (``als Schwarz``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import get_game
from engine.alien_city.notation import WORDS
from pbem.cli.mailbox import reply_to
from pbem.processing.invitations import seat_named
from tests.computer.test_computer_seats import computer_moves
from tests.formal_address import formal
from tests.server.harness import Server, headline, text_of, to

PLAYER = "hans@example.de"
SEATS = {"de": ("Schwarz", "Weiß"), "sk": ("čierny", "biely")}
PLAYERS_LINE = {"de": "Spieler: Schwarz (du), Weiß (Computer Stufe 1)",
                "sk": "Hráči: čierny (ty), biely (počítač úroveň 1)"}
SCORES = {"de": "Punkte: Schwarz (du) ", "sk": "Body: čierny (ty) "}
EXAMPLE = {"de": "zum Beispiel:\n", "sk": "napríklad:\n"}
ENGLISH_SEAT = re.compile(r"\b(black|white)\b")


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


@pytest.mark.parametrize("lang", ["de", "sk"])
def test_one_voice_and_the_readers_words_for_seats_and_moves(server: Server, lang: str) -> None:
    black, white = SEATS[lang]
    first = server.mail(PLAYER, f"new alien-city with computer:1 as {black}")
    first["Content-Language"] = lang
    mails = to(server.submit(first), PLAYER)
    assert {s.seat: s.email for s in server.game("ac-1").seats}["black"] == PLAYER
    start = text_of(mails[0])
    assert PLAYERS_LINE[lang] in start and SCORES[lang] in start
    assert f"{black}." in start  # the engine's "You play ..." below says the same seat

    written = []
    for _turn in range(4):
        text = text_of(mails[-1])
        move = text.split(EXAMPLE[lang], 1)[1].split("\n")[0].strip()
        assert move.split()[0] in (WORDS[lang]["tower"], WORDS[lang]["dome"]), move
        written.append(move)
        mails += to(server.submit(reply_to(mails[-1], PLAYER, move)), PLAYER)
        raw, _move = computer_moves(server, "ac-1")
        answered = to(server.submit(raw), PLAYER)
        # what the computer played, and its name, in the reader's words too
        assert not re.search(r"\b(tower|dome|claim|computer level)\b", headline(answered[0])), headline(
            answered[0])
        mails += answered
    record = server.game("ac-1").record["moves"]
    mine = [entry["move"] for entry in record if entry.get("seat") == "black"]
    assert len(mine) == 4 and all(m.split()[0] in ("tower", "dome") for m in mine)  # canonical, applied

    game_mails = list(mails)
    for command in ("history ac-1", "board ac-1", "games"):
        game_mails += to(server.submit(reply_to(mails[-1], PLAYER, command)), PLAYER)
    history = text_of(game_mails[-3])
    assert f"{black} ({'du' if lang == 'de' else 'ty'})" in history and white in history
    assert history.count(f" {WORDS[lang]['tower']} ") + history.count(f" {WORDS[lang]['dome']} ") >= 8
    for mail in game_mails:
        text = text_of(mail)
        assert not ENGLISH_SEAT.search(text), (headline(mail), ENGLISH_SEAT.findall(text))
    helps = [to(server.submit(server.mail(PLAYER, command)), PLAYER)[0]
             for command in ("rules alien-city", "help", "help new")]
    for mail in game_mails + helps:
        text = text_of(mail)
        assert formal(lang, text) == [], (headline(mail), formal(lang, text))
        assert max(len(line) for line in text.split("\n")) <= 78, headline(mail)


def test_a_seat_is_chosen_by_its_name_with_or_without_eszett() -> None:
    game = get_game("alien-city")
    for word in ("Weiß", "weiss", "WEISS", "white", "biely"):
        assert seat_named(game, word, ["black", "white"]) == "white", word
