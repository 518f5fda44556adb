"""What a moderator's action, an address change and a bouncing address cause, read by a German and
a Slovak player: each gets their own language (du / ty) whoever caused the mail, and no line of it
is longer than 78 columns."""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

import pytest

from engine import get_game
from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.classic.test_queue_preview import answers
from tests.moderation.helpers import ALICE, BOB, DAVE, MOD, ModServer
from tests.server.harness import headline, start_game, text_of, to
from tests.server.players import follow, mailto_links
from tests.server.test_bounces import dsn

NEW = "bob@new.example.org"


@pytest.fixture
def server(tmp_path: Path):
    srv = ModServer(tmp_path)
    with srv.store.transaction() as tx:
        tx.set_player(ALICE, {"language": "sk"})
        tx.set_player(BOB, {"language": "de"})
        tx.set_player(DAVE, {"language": "de"})
    yield srv
    srv.close()


def read(mail: EmailMessage) -> str:
    """The mail as its reader sees it, checked for width on the way."""
    text = text_of(mail)
    assert max(len(line) for line in text.splitlines()) <= 78, text
    return text


def test_a_moderators_actions_reach_each_player_in_their_language(server: ModServer) -> None:
    start_game(server, ALICE, BOB)
    out = server.admin("admin pause ac-1 Serverwartung")
    assert headline(to(out, MOD)[0]) == "Paused ac-1"  # the moderator's own language
    alice, bob = to(out, ALICE)[0], to(out, BOB)[0]
    assert headline(alice) == "Moderátor pozastavil ac-1"
    assert "Hodiny ťahu stoja, kým sa hra neobnoví. Dôvod: Serverwartung" in " ".join(read(alice).split())
    assert headline(bob) == "Ein Moderator hat ac-1 angehalten"
    assert "Die Zuguhr steht, bis das Spiel fortgesetzt wird." in read(bob)
    out = server.admin("admin resume ac-1")
    assert "Die Zuguhr läuft wieder. Schwarz muss bis" in " ".join(read(to(out, BOB)[0]).split())
    out = server.admin("admin replace ac-1 white dave@example.org weg")
    assert headline(to(out, BOB)[0]) == "Du spielst nicht mehr Weiß in ac-1"
    assert headline(to(out, DAVE)[0]).startswith("Du spielst jetzt Weiß in ac-1; ")
    assert "übernimmst von bob@example.org. Grund: weg" in " ".join(read(to(out, DAVE)[0]).split())
    assert headline(to(out, ALICE)[0]) == "biely v ac-1 má nového hráča"
    out = server.admin("admin end ac-1 draw")
    assert "Ein Moderator hat das Spiel ac-1 beendet." in read(to(out, DAVE)[0])
    assert "Moderátor ukončil hru ac-1." in read(to(out, ALICE)[0])


def test_an_address_change_is_written_in_the_players_language(server: ModServer) -> None:
    _alice, bob_mail = start_game(server, ALICE, BOB)
    out = server.submit(reply_to(bob_mail, BOB, f"set address {NEW}"))
    assert headline(to(out, BOB)[0]) == f"Bestätigung an {NEW} geschickt"
    asked = to(out, NEW)[0]
    assert headline(asked) == f"Bestätigen: {BOB} will an diese Adresse umziehen"
    assert "Warst du es nicht, dann ignoriere diese Mail" in read(asked)
    out = server.submit(follow(mailto_links(asked)[0], NEW))
    done = next(m for m in to(out, NEW) if m["X-Pbem-Game"] is None)
    assert headline(done) == f"Deine Adresse ist jetzt {NEW}: 1 Spiel ist hierher umgezogen"
    assert "deine Spiele kommen jetzt an diese Adresse" in headline(
        next(m for m in to(out, NEW) if m["X-Pbem-Game"] == "ac-1"))
    assert headline(to(out, BOB)[0]).startswith("Deine Spiele, Einstellungen und Wertungen")
    wrong = server.submit(server.mail(NEW, "confirm address ABCDEFGH"))
    assert "dieser Code ist falsch" in read(to(wrong, NEW)[0])


def test_a_bounce_is_told_to_the_others_in_their_language(server: ModServer) -> None:
    with server.store.transaction() as tx:
        tx.set_player(MOD, {"language": "sk"})
    start_game(server, ALICE, BOB)
    out = server.submit(dsn(ALICE, 1))
    bob, moderator = to(out, BOB)[0], to(out, MOD)[0]
    assert re.match(r"Mail an .* kommt zurück$", headline(bob))
    assert "Die Zuguhr von Schwarz steht" in read(bob)
    assert headline(moderator) == f"Mail na {ALICE} sa vracia: hodiny sú zastavené"
    assert "ac-1 (čierny, hodiny zastavené)" in " ".join(read(moderator).split())


def test_queues_time_control_and_seats_in_the_readers_words(server: ModServer) -> None:
    alice_turn, bob_mail = start_game(server, ALICE, BOB)
    state = replay_record(server.game("ac-1").record, get_game("alien-city"))
    (first, reply), (second, _reply) = answers(state)
    out = server.submit(reply_to(bob_mail, BOB, f"queue ac-1\nif {first} then {reply}"))
    assert headline(to(out, BOB)[0]).startswith("Vorgemerkt für ac-1: 1 Zeile, gespielt, wenn ")
    assert "Niemand sonst sieht deine Warteschlange." in " ".join(read(to(out, BOB)[0]).split())
    out = server.submit(reply_to(bob_mail, BOB, "timecontrol ac-1"))
    assert "Bedenkzeit von ac-1: 7 Tage pro Zug; wer zu spät ist" in read(to(out, BOB)[0])
    out = server.submit(reply_to(bob_mail, BOB, "timecontrol ac-1 5"))
    assert "die Bedenkzeit wird gewählt, bevor die anderen" in " ".join(read(to(out, BOB)[0]).split())
    # Alice (Slovak) plays another move: Bob reads why his queue was dropped in German
    out = server.submit(reply_to(alice_turn, ALICE, second))
    assert "Deine vorgemerkten Züge wurden nicht gespielt und verworfen: keine Zeile antwortet" in " ".join(
        read(to(out, BOB)[0]).split())
    refused = server.submit(server.mail(ALICE, f"new alien-city with {DAVE} as zelený"))
    assert "'as zelený': miesta sú čierny, biely." in read(to(refused, ALICE)[0])
    with server.store.transaction() as tx:
        tx.set_player(MOD, {"language": "sk"})
    assert headline(to(server.admin("admin pause ac-1"), MOD)[0]) == "ac-1 pozastavená"  # in the moderator's
    shown = " ".join(read(to(server.admin("admin show ac-1"), MOD)[0]).split())
    assert f"--- zásah moderátora pri polťahu 1: pozastavenie, urobil {MOD}" in shown
