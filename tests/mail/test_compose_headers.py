"""The shortcuts of ``pbem.outbox.compose`` write exactly what the stdlib and Jinja would."""

from __future__ import annotations

import email.policy
import random
from datetime import UTC, datetime
from email.message import Message

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pbem.outbox.compose import Attachment, Section, build_message, render, subject_phrase, to_bytes
from pbem.resources import data_dir

STDLIB = email.policy.compat32.clone(linesep="\r\n")


def test_headers_are_written_as_the_stdlib_folds_them() -> None:
    rng = random.Random(7)
    alphabet = "ab c\t=?_:;<>@.\"()'-xyz  é"
    for _ in range(300):
        message = Message()
        for name in ("Subject", "To", "X-Pbem-Game", "Message-ID", "References"):
            message[name] = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        message.set_payload("body\r\n")
        assert to_bytes(message) == message.as_bytes(policy=STDLIB)


def test_text_lines_are_wrapped_as_jinja_wraps_them() -> None:
    """The ``wordwrap`` shortcut for lines that fit gives what Jinja's own filter gives."""
    stock = Environment(loader=FileSystemLoader(str(data_dir("templates"))), keep_trailing_newline=True,
                        undefined=StrictUndefined)
    rng = random.Random(5)
    for _ in range(500):
        lines = ["".join(rng.choice("ab -–\t\u00a0é\n.x  ") for _ in range(rng.randint(0, 90)))
                 for _ in range(3)]
        context = {"subject": "s", "headline": lines[0], "sections": [Section(lines=lines[1:])],
                   "footer": lines, "mailto": None, "taps": False}
        assert render("mail.txt.j2", **context) == stock.get_template("mail.txt.j2").render(**context)


def test_whole_mails_are_written_as_the_stdlib_writes_them() -> None:
    """Text and HTML parts, ASCII and not, long lines, every kind of line end, attachments: the
    generator that writes a body in one piece gives what ``Message.as_bytes`` gives."""
    rng = random.Random(11)
    pieces = ["tower red C4", "é ★ ▲ ╔═╗", "x" * 950, "", "  indented", "a\rb", "c\r\nd", "e\nf",
              "<b>bold</b>", "From the start", ".", "=3D", "\t"]
    for i in range(200):
        lines = [rng.choice(pieces) for _ in range(rng.randint(0, 30))]
        attachments = ([Attachment("game.json", bytes(rng.randrange(256) for _ in range(300)))]
                       if i % 3 == 0 else None)
        message = build_message(
            from_addr="pbem@example.org", from_name="pbem", to="ann@example.org",
            subject=rng.choice(["[pbem ac-1] ann vs bo", "[pbem ac-2] é vs ★"]),
            message_id=f"<m{i}@example.org>", date=datetime(2026, 11, 24, tzinfo=UTC),
            headline=rng.choice(pieces), sections=[Section(lines=lines, pre="\n".join(lines))],
            footer=lines[:3], attachments=attachments, html=i % 2 == 0).message()
        assert to_bytes(message) == message.as_bytes(policy=STDLIB)


def test_a_subject_of_its_own_ends_where_a_phrase_ends() -> None:
    assert subject_phrase("Your vacations") == "Your vacations"
    assert subject_phrase("Not done: you have no game ac-9. Send 'games' for the list of yours, "
                          "or 'challenges'.") == "Not done: you have no game ac-9"
    assert subject_phrase("Done: language is now de (Deutsch); Your games: 1; Help: settings and "
                          "more") == "Done: language is now de (Deutsch); Your games: 1"
    assert subject_phrase("Not done: a vacation moves your deadlines, so it needs your token: reply "
                          "to a mail") == "Not done"
    assert subject_phrase("Not done: e.g. this is an example. it goes on and on for longer than a "
                          "subject") == "Not done"  # "e.g. this" ends no sentence
    long = "The open challenge ac-3 (Alien City) expired before enough players joined it"
    assert subject_phrase(long) == "The open challenge ac-3 (Alien City) expired before enough…"
