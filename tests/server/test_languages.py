"""Choosing the language of one's mail: ``set language`` (text and JSON), the server's default, and
the first mail's headers; one move's mails each in its reader's language, observers included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.config import ConfigError, config_from_dict
from pbem.i18n import parse_language_header
from pbem.resources import SchemaError
from tests.server.harness import Server, headline, html_of, start_game, text_of, to
from tests.server.players import follow, mailto_links
from tests.server.test_processor import server  # noqa: F401  (the in-process server fixture)

ANN, BO, OTTO = "ann@example.org", "bo@example.org", "otto@example.org"


def test_set_language_by_text_and_by_json_is_confirmed_then_used(server: Server) -> None:  # noqa: F811
    asked = to(server.submit(server.mail(ANN, "set language sk")), ANN)[0]
    assert headline(asked) == "Confirm: set language sk"  # asked first, in the language it had
    done = to(server.submit(follow(mailto_links(asked)[0], ANN)), ANN)[0]
    assert headline(done) == "Hotovo: language je teraz sk (slovenčina)"  # already in the new one
    assert done["Content-Language"] == "sk" and 'lang="sk"' in html_of(done)
    listing = text_of(to(server.submit(reply_to(done, ANN, "nastavenia")), ANN)[0])
    assert "language  sk (slovenčina)" in listing and "Zmena: set KEY VALUE" in listing

    turn = json.dumps({"command": "set", "key": "language", "value": "de"})
    back = to(server.submit(reply_to(done, ANN, turn)), ANN)[0]
    assert headline(back) == "Erledigt: language ist jetzt de (Deutsch)"
    wrong = to(server.submit(reply_to(back, ANN, "setze language fr")), ANN)[0]
    assert "language nimmt en, de, sk, nicht 'fr'." in text_of(wrong)


def test_the_first_mails_header_picks_the_language_until_the_player_chooses(server: Server) -> None:  # noqa: F811
    first = server.mail(BO, "help")
    first["Accept-Language"] = "fr-CH, de;q=0.8, en;q=0.5"
    answer = to(server.submit(first), BO)[0]
    assert headline(answer) == "Hilfe: Befehle" and answer["Content-Language"] == "de"
    assert "Befehle auf Deutsch" in text_of(answer) and "zug = move" in text_of(answer)
    later = server.mail(BO, "hilfe")
    later["Content-Language"] = "sk"  # another device: it does not switch the language back
    assert headline(to(server.submit(later), BO)[0]) == "Hilfe: Befehle"
    plain = to(server.submit(server.mail(ANN, "help")), ANN)[0]
    assert headline(plain) == "Help: commands" and plain["Content-Language"] == "en"


def test_the_server_default_and_its_validation(tmp_path: Path) -> None:
    slovak = Server(tmp_path, language="sk")
    try:
        answer = to(slovak.submit(slovak.mail(ANN, "games")), ANN)[0]
        assert headline(answer) == "Nemáš žiadne hry"
    finally:
        slovak.close()
    with pytest.raises((ConfigError, SchemaError)):
        config_from_dict({"server": {"language": "fr"}})


def test_one_move_is_told_to_each_reader_in_their_own_language(server: Server) -> None:  # noqa: F811
    with server.store.transaction() as tx:
        tx.set_player(BO, {"language": "sk"})
        tx.set_player(OTTO, {"language": "de"})
    ann_turn, _bo = start_game(server, ANN, BO)
    server.submit(server.mail(OTTO, "sledovať ac-1"))  # Otto watches, in German
    move = text_of(ann_turn).split("for example:\n", 1)[1].split("\n")[0].strip()
    out = server.submit(reply_to(ann_turn, ANN, move))
    bo, otto = to(out, BO)[0], to(out, OTTO)[0]
    assert headline(bo).startswith("Si na ťahu (ťah 2).") and "Body:" in text_of(bo)
    assert headline(otto).endswith("ist am Zug.") and "(Zug 1)" in headline(otto)
    assert [m["Content-Language"] for m in (bo, otto)] == ["sk", "de"]
    # an error in Slovak words, answered in Slovak, with what would be right
    error = to(server.submit(reply_to(bo, BO, "doska ac-1 99")), BO)[0]
    assert headline(error).startswith("Nevykonané: hra ac-1 má ťahy 0 až 1")


def test_language_headers_are_read_as_clients_write_them() -> None:
    assert parse_language_header("de-AT, en;q=0.5") == "de"
    assert parse_language_header("en;q=0.4, sk") == "sk"
    assert parse_language_header("fr, it") is None
    assert parse_language_header("de;q=0, en") == "en"
    assert parse_language_header(None) is None


def test_a_proposal_is_put_to_each_player_in_their_words(server: Server) -> None:  # noqa: F811
    with server.store.transaction() as tx:
        tx.set_player(BO, {"language": "sk"})
    ann_turn, _bo = start_game(server, ANN, BO)
    out = server.submit(reply_to(ann_turn, ANN, "propose ac-1 draw"))
    assert headline(to(out, ANN)[0]).startswith("You proposed a draw in ac-1; waiting for")
    asked = to(out, BO)[0]
    assert headline(asked).startswith(f"{ANN} navrhuje remízu v ac-1")
    assert "Ak súhlasíš, odpovedz: accept ac-1" in text_of(asked)
    out = server.submit(reply_to(asked, BO, "reject"))
    assert headline(to(out, BO)[0]).startswith(f"Odmietol si návrh remízy od {ANN} v ac-1")
    assert headline(to(out, ANN)[0]).startswith(f"Your move (move 1). {BO} rejected your proposal in ac-1")
