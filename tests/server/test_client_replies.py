"""Replies written by twelve real mail clients, with their reply text replaced by a move: exactly that
move is applied, and nothing from the quoted part is read as a command."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.server.harness import Server, headline, text_of, to
from tests.server.players import Player
from tests.server.test_processor import ALICE, BOB, start_game
from tests.services.requirements import missing

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "mail-corpus" / "replies"
CLIENTS = sorted(p.stem for p in CORPUS.glob("*.eml")) if CORPUS.is_dir() else ["(corpus missing)"]


def reply_text(name: str) -> str:
    special = CORPUS / f"{name}_reply_text"
    return special.read_text().strip().splitlines()[0].strip() if special.exists() else "Hello"


def with_move(raw: bytes, old: str, move: str) -> EmailMessage:
    """Put the move where the client's reply text is, in every text part, keeping each part's
    charset and the client's quoting below it."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    replaced = 0
    for part in message.walk():
        if part.get_content_maintype() != "text" or part.is_attachment():
            continue
        content = part.get_content()
        if old not in content:
            continue
        subtype = part.get_content_subtype()
        cte = part.get("Content-Transfer-Encoding", "7bit").lower()
        part.set_content(content.replace(old, move, 1), subtype=subtype,
                         charset=part.get_content_charset() or "us-ascii",
                         cte="quoted-printable" if cte == "quoted-printable" else
                         ("base64" if cte == "base64" else None))
        replaced += 1
    assert replaced, "the reply text was not found"
    return message  # type: ignore[return-value]


@pytest.mark.parametrize("client", CLIENTS)
def test_client_reply_applies_exactly_the_move(tmp_path: Path, client: str) -> None:
    if not CORPUS.is_dir():
        missing(f"mail corpus not found at {CORPUS}")
    server = Server(tmp_path)
    try:
        board, _ = start_game(server)
        move = Player(ALICE, 3).choose_move(board)
        message = with_move((CORPUS / f"{client}.eml").read_bytes(), reply_text(client), move)
        for header in ("From", "To", "Cc", "Subject", "In-Reply-To", "References", "Reply-To",
                       "Message-ID", "Message-Id"):
            del message[header]
        message["From"] = f"Alice <{ALICE}>"
        message["To"] = board["Reply-To"]
        message["Subject"] = "Re: " + board["Subject"]
        message["In-Reply-To"] = board["Message-ID"]
        message["Message-ID"] = f"<{client}-test@example.org>"
        out = server.submit(message)
        # applied, and nothing from the quote was read: no answer to Alice, "your move" to Bob
        texts = [text_of(m) for _rcpt, m in out]
        assert [m["move"] for m in server.game("ac-1").record["moves"]] == [move], texts
        assert to(out, ALICE) == [], texts
        assert len(to(out, BOB)) == 1 and "Your move" in headline(to(out, BOB)[0])
    finally:
        server.close()
