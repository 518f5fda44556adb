"""Players as the tests drive them: people with a mail client who read the mail they get, pick a
legal move (by tapping one of the HTML part's links, or by pressing Reply and typing it) and send.
"""

from __future__ import annotations

import email
import email.policy
import json
import random
from email.message import EmailMessage
from html.parser import HTMLParser
from urllib.parse import parse_qs, unquote, urlsplit

from pbem.cli.mailbox import new_mail, reply_to
from pbem.commands.parsing import looks_like_command
from pbem.processing import features


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def attached_record(message: EmailMessage) -> dict | None:
    for part in message.iter_attachments():
        if part.get_content_type() == "application/json":
            content = part.get_content()
            return json.loads(content if isinstance(content, str) else content.decode())
    return None


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    return body.get_content().replace("\r\n", "\n") if body is not None else ""


def html_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("html",))
    return body.get_content() if body is not None and body.get_content_type() == "text/html" else ""


def headline(message: EmailMessage) -> str:
    """The body's first line (as the mail client shows it in the inbox), unwrapped."""
    first = text_of(message).split("\n\n", 1)[0]
    return " ".join(first.split())


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip()))
            self._href = None


def mailto_links(message: EmailMessage) -> list[dict[str, str]]:
    """Every one-tap link of the HTML part, as a mail client would open it (RFC 6068)."""
    parser = _Links()
    parser.feed(html_of(message))
    found = []
    for href, text in parser.links:
        if not href.startswith("mailto:"):
            continue
        parts = urlsplit(href)
        fields = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        found.append({"to": unquote(parts.path), "subject": fields.get("subject", ""),
                      "body": fields.get("body", ""), "text": text})
    return found


assert features  # every command word registered, so that commands and moves can be told apart


def move_links(message: EmailMessage) -> list[dict[str, str]]:
    """The links that play a legal move (the others accept, decline, confirm, ...)."""
    return [link for link in mailto_links(message) if not looks_like_command(link["body"], near=False)]


def example_move(message: EmailMessage) -> str:
    """The legal move the footer of a "your move" mail gives as its example."""
    text = text_of(message)
    assert "for example:\n" in text, f"no example move in {headline(message)!r}"
    return text.split("for example:\n", 1)[1].split("\n")[0].strip()


def follow(link: dict[str, str], sender: str) -> EmailMessage:
    """The mail a client composes from a tapped link and sends unchanged."""
    return new_mail(sender, link["to"], link["body"], link["subject"])


def with_taps(server, address: str, mail: EmailMessage, game_id: str) -> EmailMessage:
    """The player chooses one-tap moves (a reply to one of the server's mails proves the address)
    and asks for the board again: returns that mail, whose legal moves are links if it is their
    move."""
    outbox = server.submit(reply_to(mail, address, f"set mail tap\nboard {game_id}"))
    return [m for rcpt, m in outbox if rcpt == address][-1]


class Player:
    def __init__(self, address: str, seed: int = 0):
        self.address = address
        self.rng = random.Random(seed)
        self.inbox: list[EmailMessage] = []

    def receive(self, message: EmailMessage) -> None:
        self.inbox.append(message)

    def choose_move(self, message: EmailMessage) -> str:
        """A random legal move from the mail's one-tap links (``set mail tap``), else the move the
        footer suggests ("for example: ..."), which is always a legal one."""
        links = move_links(message)
        if links:
            return self.rng.choice(links)["body"]
        return example_move(message)

    def respond(self, message: EmailMessage) -> EmailMessage | None:
        """The mail a person would send after reading this one, or None: accept an invitation;
        on "your move", tap a legal move's link or press Reply and type it (half the time each)."""
        first = headline(message)
        if "invites you" in first:
            return reply_to(message, self.address, "accept")
        if "Your move" in first or "your move" in first:
            links = move_links(message)
            if links and self.rng.random() < 0.5:
                return follow(self.rng.choice(links), self.address)
            return reply_to(message, self.address, self.choose_move(message))
        return None
