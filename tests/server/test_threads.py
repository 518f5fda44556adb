"""One thread per game, one subject for the whole game: an answer about the game stays in its
thread with its exact subject; an answer about no game (games, vacation, set ...) to a mail of a
game's thread starts a thread of its own, with a subject of its own and nothing chaining it to the
game; an answer about another game joins that game's thread."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, start_game, to
from tests.server.mailcheck import MailCheck
from tests.server.players import parse

ANN, BO, CY = "ann@example.org", "bo@example.org", "cy@example.org"


def chain(message: EmailMessage) -> set[str]:
    """Every Message-ID the mail's threading headers name."""
    return set(f"{message['In-Reply-To'] or ''} {message['References'] or ''}".split())


def game_ids(server: Server, game_id: str, address: str) -> set[str]:
    """The Message-IDs of the mails of ``game_id`` that ``address`` received."""
    out = set()
    for rcpt, raw in server.sent:
        if rcpt == address and f"X-Pbem-Game: {game_id}".encode() in raw:
            out.add(raw.split(b"Message-ID: ", 1)[1].split(b"\r\n", 1)[0].decode())
    return out


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_an_answer_about_no_game_leaves_the_games_thread(server: Server, language: str) -> None:
    with server.store.transaction() as tx:
        tx.set_player(ANN, {"language": language})
    turn, _bo = start_game(server, ANN, BO)
    subject = str(turn["Subject"])
    assert subject == "[pbem ac-1] ann vs bo"
    for command in ("vacation", "games", "settings", "help", f"set language {language}"):
        answer = to(server.submit(reply_to(turn, ANN, command)), ANN)[0]
        assert answer["X-Pbem-Game"] is None, command
        assert str(answer["Subject"]).startswith("[pbem] "), (command, answer["Subject"])
        assert "ann vs bo" not in str(answer["Subject"]), command
        assert not chain(answer), (command, chain(answer))


def test_an_answer_about_the_game_stays_in_its_thread_with_its_subject(server: Server) -> None:
    check = MailCheck()
    turn, _bo = start_game(server, ANN, BO)
    for rcpt, raw in server.sent:  # what Ann has got so far: her challenge's answer, her turn
        if rcpt == ANN:
            check.read(ANN, parse(raw))
    for command in ("board ac-1", "history ac-1", "message ac-1 good luck", "board ac-1 99"):
        mail = reply_to(turn, ANN, command)
        check.sent(ANN, mail)
        out = server.submit(mail)
        answer = to(out, ANN)[0]
        check.read(ANN, answer)  # the same subject, chained to mails Ann has
        assert str(answer["Subject"]) == "[pbem ac-1] ann vs bo", command
        assert str(mail["Message-ID"]) == str(answer["In-Reply-To"]), command
        turn = answer


def test_an_answer_about_another_game_joins_that_games_thread(server: Server) -> None:
    first, _bo = start_game(server, ANN, BO)
    out = server.submit(server.mail(ANN, f"new alien-city with {CY} as black"))
    out = server.submit(reply_to(to(out, CY)[0], CY, "accept"))
    second = to(out, ANN)[0]
    assert headline(second).startswith("Your move") and second["X-Pbem-Game"] == "ac-2"
    answer = to(server.submit(reply_to(first, ANN, "board ac-2")), ANN)[0]
    assert str(answer["Subject"]) == str(second["Subject"]) == "[pbem ac-2] ann vs cy"
    assert chain(answer) and chain(answer) <= game_ids(server, "ac-2", ANN)
    assert not chain(answer) & game_ids(server, "ac-1", ANN)


@pytest.mark.parametrize(("language", "refused"), [("en", "Not done"), ("de", "Nicht erledigt"),
                                                   ("sk", "Nevykonané")])
def test_a_long_refusal_has_a_short_subject_and_its_whole_text_in_the_body(
        server: Server, language: str, refused: str) -> None:
    with server.store.transaction() as tx:
        tx.set_player(ANN, {"language": language})
    start_game(server, ANN, BO)
    answer = to(server.submit(server.mail(ANN, "vacation 2026-12-01..2026-12-05")), ANN)[0]
    assert str(answer["Subject"]) == f"[pbem] {refused}"  # not cut in the middle of the reason
    first = headline(answer)
    assert first.startswith(f"{refused}: ") and "'token YOURTOKEN'" in first and first.endswith(".")
    # a short one stays whole, and a longer one ends where a clause ends
    answer = to(server.submit(server.mail(ANN, "vacation")), ANN)[0]
    assert str(answer["Subject"]) == f"[pbem] {headline(answer)}"
    answer = to(server.submit(server.mail(ANN, "settings\ngames\nvacation\nblocked\nchallenges")), ANN)[0]
    subject = str(answer["Subject"])
    assert len(subject) <= len("[pbem] ") + 60 and headline(answer).startswith(subject[7:])
    assert headline(answer)[len(subject) - 7:].startswith("; "), headline(answer)
