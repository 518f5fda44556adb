"""A German and a Slovak player play a whole game of Alien City by mail, through the embedded SMTP
listener and a real relay, each reading only their own language.

Nobody configures anything: the Slovak player's first mail carries ``Content-Language: sk`` (her
client writes in Slovak), the German player's ``Accept-Language: de-AT``; from then on every mail to
each is in their language, the invitation that the German's challenge causes included. They write
commands in their own words (``neu``, ``prijať``, ``zug``, ``ťah``), make one mistake each, and get
the error in their language. They write their moves in their own words too (``Turm grün E5``,
``veža zelená E8``), copied from the example their mail gives, and the server applies them.
"""

from __future__ import annotations

import smtplib
import time
from email.message import EmailMessage

from engine.alien_city.notation import WORDS as PIECE_WORDS
from pbem.cli.mailbox import new_mail, reply_to
from tests.e2e.conftest import raw, relay
from tests.server.players import attached_record, headline, html_of, text_of
from tests.services.requirements import free_port

HANS, ZUZANA, SERVER = "hans@example.de", "zuzana@example.sk", "pbem@localhost"
LANGUAGE = {HANS: "de", ZUZANA: "sk"}
# What a reader of each language sees instead of the English (headlines, footers, results, errors).
WORDS = {
    "de": {"turn": "Du bist am Zug", "example": "zum Beispiel:", "over": "Spiel vorbei",
           "refused": "Nicht ausgeführt", "invited": "lädt dich", "final": "Endstand"},
    "sk": {"turn": "Si na ťahu", "example": "napríklad:", "over": "Koniec hry",
           "refused": "Nevykonané", "invited": "ťa pozýva", "final": "Konečné skóre"},
}
# pbem's English that must never reach them (the engine's own texts come with its catalogs)
ENGLISH = ["Your move", "Players:", "Scores:", "Commands:", "press Reply", "for example", "Game over:",
           "Not applied", "Not done", "is to move", "== Final scores ==", "invites you", "Write commands",
           "Keep the Reply-To", "The attached", "This game is over", "Applied:"]


def example(message: EmailMessage, lang: str) -> str:
    text = text_of(message)
    marker = WORDS[lang]["example"] + "\n"
    assert marker in text, f"no example move in {headline(message)!r}"
    move = text.split(marker, 1)[1].split("\n")[0].strip()
    assert move.split()[0] in (PIECE_WORDS[lang]["tower"], PIECE_WORDS[lang]["dome"]), move  # their words
    return move


def read(recipient: str, message: EmailMessage) -> None:
    """Every mail as its reader sees it: their language only, and lines that fit the screen."""
    lang = LANGUAGE[recipient]
    text = text_of(message)
    where = f"mail to {recipient}: {headline(message)!r}"
    assert message["Content-Language"] == lang, where
    assert f'lang="{lang}"' in html_of(message), where
    english = [phrase for phrase in ENGLISH if phrase in text]
    assert not english, f"{where}: English in a {lang} mail: {english}"
    other = "sk" if lang == "de" else "de"
    foreign = [w for w in WORDS[other].values() if w in text]
    assert not foreign, f"{where}: {other} words in a {lang} mail: {foreign}"
    wide = [line for line in text.split("\n") if len(line) > 78]
    assert not wide, f"{where}: lines over 78 columns: {wide[:3]}"


def test_a_german_and_a_slovak_player_each_read_only_their_language(smtp_sink, daemon_for) -> None:
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink)})
    seen = 0

    def send(message: EmailMessage) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(message["From"].addresses[0].addr_spec,
                          [message["To"].addresses[0].addr_spec], raw(message))

    def arrived(count: int = 1) -> list[tuple[str, EmailMessage]]:
        nonlocal seen
        received = smtp_sink.wait_for(seen + count, timeout=60)
        new = [(item.rcpt_tos[0], item.message) for item in received[seen:]]
        seen = len(received)
        for rcpt, message in new:
            read(rcpt, message)
        return new

    # Zuzana's client says it writes Slovak; her first mail asks for help in Slovak words
    first = new_mail(ZUZANA, SERVER, "pomoc")
    first["Content-Language"] = "sk"
    send(first)
    [(_to, helped)] = arrived()
    assert headline(helped) == "Pomoc: príkazy"
    assert "Príkazy po slovensky" in text_of(helped) and "ťah = move" in text_of(helped)

    # Hans challenges her in German words; his client accepts German
    challenge = new_mail(HANS, SERVER, f"neu alien-city mit {ZUZANA} als black")
    challenge["Accept-Language"] = "de-AT, de;q=0.9, en;q=0.5"
    send(challenge)
    mails = dict(arrived(2))
    assert headline(mails[HANS]).startswith("Spiel ac-1 erstellt")
    invitation = mails[ZUZANA]
    assert WORDS["sk"]["invited"] in headline(invitation)
    send(reply_to(invitation, ZUZANA, "prijať"))

    mistakes = {HANS: "zug b9 nirgendwo", ZUZANA: "ťah nikde"}
    finished: dict[str, EmailMessage] = {}
    deadline = time.monotonic() + 300
    pending = arrived(2)
    while True:
        assert time.monotonic() < deadline, "game not over after 300 s"
        for rcpt, message in pending:
            words = WORDS[LANGUAGE[rcpt]]
            first_line = headline(message)
            if first_line.startswith(words["over"]):
                assert words["final"] in text_of(message) and attached_record(message)
                finished[rcpt] = message
            elif first_line.startswith(words["refused"]):
                assert "nirgendwo" in first_line or "nikde" in first_line
            elif words["turn"] in first_line:
                if rcpt in mistakes:  # once each: a move that is no move, answered in their language
                    send(reply_to(message, rcpt, mistakes.pop(rcpt)))
                    pending_error = arrived()
                    assert [r for r, _m in pending_error] == [rcpt]
                    assert headline(pending_error[0][1]).startswith(words["refused"])
                send(reply_to(message, rcpt, example(message, LANGUAGE[rcpt])))
        if len(finished) == 2:
            break
        pending = arrived()
    assert not mistakes, "a player never had a 'your move' mail"
    row = daemon.store.get_game("ac-1")
    assert row.status == "over" and len([m for m in row.record["moves"] if "move" in m]) > 10
    # written in German and Slovak words, applied: the record keeps each move's canonical text
    assert all(m["move"].split()[0] in ("tower", "dome") for m in row.record["moves"] if "move" in m)
    # their choice was remembered from the headers, as a setting each can change ('set language')
    with daemon.store.transaction() as tx:
        assert [tx.get_player(a).get("language") for a in (HANS, ZUZANA)] == ["de", "sk"]
