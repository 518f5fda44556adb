"""How a mail's text is laid out, as its reader sees it: one blank line between the headline and
what follows, whatever the first section holds; the player's own words quoted back within the
width, "> " on every line of the quote."""

from __future__ import annotations

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, start_game, text_of, to
from tests.server.mailcheck import MailCheck
from tests.server.players import parse

ANN, BO = "ann@example.org", "bo@example.org"


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_one_blank_line_after_the_headline_before_a_table(server: Server, language: str) -> None:
    with server.store.transaction() as tx:
        tx.set_player(ANN, {"language": language})
    start_game(server, ANN, BO)
    for command in ("settings", "games", "help settings", "board ac-1"):
        lines = text_of(to(server.submit(server.mail(ANN, command)), ANN)[0]).split("\n")
        assert lines[1] == "" and lines[2].strip(), (command, lines[:4])
        assert "\n\n\n" not in "\n".join(lines).split("\n-- \n")[0], command


def _quote(text: str) -> list[str]:
    """The quoted lines of a mail's text (its first block of "> " lines)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(">"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith(">"))
    return lines[start:end]


def test_a_long_line_is_quoted_back_within_the_width_with_a_mark_on_every_line(server: Server) -> None:
    check = MailCheck()
    turn, _bo = start_game(server, ANN, BO)
    for rcpt, raw in server.sent:  # what Ann has got so far
        if rcpt == ANN:
            check.read(ANN, parse(raw))
    note = "a" * 1100
    mail = reply_to(turn, ANN, f"note ac-1 {note}")
    check.sent(ANN, mail)
    refused = to(server.submit(mail), ANN)[0]
    check.read(ANN, refused)  # no line over 78 columns
    said = _quote(text_of(refused))
    assert len(said) == 3 and all(line.startswith("> ") for line in said), said
    assert said[0] == "> note ac-1 " + "a" * 60 and said[-1].endswith("a…")
    assert "yours has 1100 characters and 1 line" in " ".join(text_of(refused).split())

    words = " ".join(["word"] * 60) + " " + "x" * 150  # kept whole: the player reads all of it
    mail = reply_to(refused, ANN, f"note ac-1 {words}")
    check.sent(ANN, mail)
    kept = to(server.submit(mail), ANN)[0]
    check.read(ANN, kept)
    said = _quote(text_of(kept))
    assert all(line.startswith("> ") for line in said)
    assert "".join(line[2:] + " " for line in said).replace("x ", "x").split() == words.split()

    for line in (f"frobnicate {'y' * 200}", f"vacation {'z' * 100}"):
        answer = to(server.submit(server.mail(ANN, line)), ANN)[0]
        check.read(ANN, answer)
        said = _quote(text_of(answer))
        assert said[0].startswith(f"> {line.split()[0]} ") and all(q.startswith("> ") for q in said)


def test_a_refusal_gives_its_reason_once_and_never_breaks_a_word_at_a_hyphen(server: Server) -> None:
    """The reason opens the mail (the inbox preview); under the quote it was said a second time.
    With two commands, each answer keeps its own reason under its quote."""
    _turn, bo = start_game(server, ANN, BO)
    text = text_of(to(server.submit(reply_to(bo, BO, "queue ac-1\nplease play tower green E1")), BO)[0])
    body = text.split("\n-- \n")[0]
    reason = "write 'if THEIR-MOVE then MY-MOVE' or 'then MY-MOVE'"
    assert body.startswith("Not done: queue line 1"), body
    assert " ".join(body.split()).count(reason) == 1, body
    assert "THEIR-\n" not in body and "MY-\n" not in body
    both = text_of(to(server.submit(server.mail(BO, "undo ac-7\nobserve ac-9")), BO)[0])
    flat = " ".join(both.split("\n-- \n")[0].split())
    assert flat.count("ac-7") >= 2 and flat.count("ac-9") >= 2, both  # each reason under its quote
