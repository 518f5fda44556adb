"""Real replies from real mail clients (mailgun/talon's fixtures, in the shared corpus).

Each reply is rewritten the way a player would use it: a move where the reply text is, the client's
quote of our previous mail kept below (with a legal-move listing slipped into it), and our subject.
Exactly that move must come out, and nothing of the quote.
"""

from __future__ import annotations

import os
import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest

from pbem.reading.incoming import read_mail

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "mail-corpus"
REPLIES = CORPUS / "replies"

NAMES = [
    "android", "aol", "apple_mail", "apple_mail_2", "comcast", "gmail", "hotmail", "iphone",
    "outlook", "sparrow", "thunderbird", "yahoo",
]
MOVE = "tower red C4 claim C4"
OUR_SUBJECT = "Re: [pbem ac-1] Your move (ply 3)"
LISTING = ["red tower: C4 C5 D6", "red scout: B2 B3"]
#: The reply in the HTML part, where it differs from the plain-text one.
HTML_REPLY = {"outlook": "Allo! Follow up MIME!"}


def replies_dir() -> Path:
    if REPLIES.is_dir():
        return REPLIES
    reason = (
        f"shared mail corpus not found at {REPLIES}; it is read from the checkout's sibling "
        "directory shared/mail-corpus and never copied into the project"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def load(name: str) -> tuple[bytes, str]:
    """The raw reply and its expected reply text."""
    folder = replies_dir()
    expected = folder / f"{name}_reply_text"
    text = expected.read_text(encoding="utf-8") if expected.exists() else "Hello"
    return (folder / f"{name}.eml").read_bytes(), text


def parse(raw: bytes) -> EmailMessage:
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    return msg


def set_text(part: EmailMessage, text: str) -> None:
    """Replace a text part's content, keeping its charset, transfer encoding and format."""
    cte = str(part.get("Content-Transfer-Encoding", "7bit")).strip().lower()
    flowed = str(part.get_param("format", "")).lower() == "flowed"
    disposition = part.get_content_disposition()
    part.set_content(
        text,
        subtype=part.get_content_subtype(),
        charset=part.get_content_charset() or "us-ascii",
        cte=cte,
        disposition=disposition,
    )
    if flowed:
        part.set_param("format", "flowed")


def text_parts(msg: EmailMessage, subtype: str) -> list[EmailMessage]:
    return [
        p for p in msg.walk()
        if p.get_content_type() == f"text/{subtype}" and isinstance(p, EmailMessage)
    ]


def add_listing(text: str) -> str:
    """Slip a legal-move listing into the quoted mail, quoted the way its last line is."""
    lines = text.split("\n")
    at = max(i for i, line in enumerate(lines) if re.match(r"^[>\s]*Hi\b", line))
    prefix = re.match(r"^[>\s]*", lines[at]).group(0)  # type: ignore[union-attr]
    lines[at + 1 : at + 1] = [prefix + entry for entry in LISTING]
    return "\n".join(lines)


def rewrite(raw: bytes, reply_text: str, *, subject: str | None = OUR_SUBJECT) -> bytes:
    msg = parse(raw)
    [plain] = text_parts(msg, "plain")
    body = plain.get_content().replace("\r\n", "\n")
    assert body.count(reply_text.strip()) >= 1, "the corpus reply text must be in the body"
    reply = reply_text.strip()
    body = body.replace(reply, reply.replace("Hello", MOVE, 1), 1)
    set_text(plain, add_listing(body))
    if subject is not None:
        del msg["Subject"]
        msg["Subject"] = subject
    return msg.as_bytes()


def test_the_corpus_is_the_expected_twelve() -> None:
    assert sorted(p.stem for p in replies_dir().glob("*.eml")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_unmodified_reply_text(name: str) -> None:
    raw, expected = load(name)
    mail = read_mail(raw)
    assert mail.reply_text == expected.strip()
    # where talon's reply text keeps a signature ("Sent from my iPhone", "-- "), commands do not
    assert mail.command_text == "Hello"
    assert mail.auto is None
    assert mail.from_addr


@pytest.mark.parametrize("name", NAMES)
def test_move_above_quote_is_the_only_command(name: str) -> None:
    raw, expected = load(name)
    mail = read_mail(rewrite(raw, expected))
    assert mail.command_lines == [MOVE]
    assert mail.subject_tag == "ac-1"
    assert mail.subject_ply == 3
    assert mail.clean_subject == "Your move (ply 3)"
    # the listing really is in the mail, only not among the commands
    assert all(entry in mail.text for entry in LISTING)


@pytest.mark.parametrize("name", NAMES)
def test_foreign_subject_becomes_a_command(name: str) -> None:
    raw, expected = load(name)
    mail = read_mail(rewrite(raw, expected, subject=None))
    original = parse(raw)["Subject"]
    clean = re.sub(r"^(?:re|fwd?)\s*:\s*", "", str(original), flags=re.I)
    assert mail.command_lines == [clean, MOVE]


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("apple_mail", "apple_mail_2",
                                                                "iphone", "thunderbird", "yahoo")])
def test_html_only_version(name: str) -> None:
    """The same replies as HTML-only mail: the client's HTML quoting must be recognised too."""
    raw, _expected = load(name)
    msg = parse(raw)
    [plain] = text_parts(msg, "plain")
    [html] = text_parts(msg, "html")
    parent = next(p for p in msg.walk() if p.is_multipart() and plain in p.get_payload())
    parent.get_payload().remove(plain)
    markup = html.get_content()
    reply = HTML_REPLY.get(name, "Hello")
    assert reply in markup
    set_text(html, markup.replace(reply, MOVE, 1))
    del msg["Subject"]
    msg["Subject"] = OUR_SUBJECT
    mail = read_mail(msg.as_bytes())
    assert mail.command_lines == [MOVE]
