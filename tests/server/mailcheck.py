"""Reading every mail of a game as its recipient would, and checking what a person relies on.

``MailCheck.read(recipient, message)`` is called for each mail as it arrives; it fails the test at
the first mail that is wrong for its reader:

- one subject for the whole game, and an In-Reply-To that names a mail this recipient has (one they
  received or one they sent), so that every client shows one unbroken thread;
- no text line over 78 columns;
- "Your move" only to the seat to move, with the board, the legal list and one-tap links; to anyone
  else no legal list, no move links, no "press Reply and write your move";
- the footer's example move is a move of this game (one of the mail's own move links);
- after the end, never "press Reply" again.
"""

from __future__ import annotations

from collections import defaultdict
from email.message import EmailMessage

from tests.server.players import headline, move_links, text_of

MAX_COLUMNS = 78


class MailCheck:
    def __init__(self) -> None:
        self.subject: dict[str, str] = {}  # game id -> the one subject
        self.known: dict[str, set[str]] = defaultdict(set)  # recipient -> Message-IDs they have
        self.over: set[str] = set()  # games whose end was announced
        self.count: dict[str, int] = defaultdict(int)
        self.bytes: dict[str, int] = defaultdict(int)

    def sent(self, sender: str, message: EmailMessage) -> None:
        """A mail the person sent: it is part of their thread too."""
        if message["Message-ID"]:
            self.known[sender].add(str(message["Message-ID"]))

    def read(self, recipient: str, message: EmailMessage, raw: bytes | None = None) -> None:
        self.count[recipient] += 1
        self.bytes[recipient] += len(raw if raw is not None else message.as_bytes())
        game = message["X-Pbem-Game"]
        first = headline(message)
        text = text_of(message)
        where = f"mail to {recipient}: {first!r}"
        wide = [line for line in text.split("\n") if len(line) > MAX_COLUMNS]
        assert not wide, f"{where}: lines over {MAX_COLUMNS} columns: {wide[:3]}"
        if game:
            subject = str(message["Subject"])
            assert self.subject.setdefault(game, subject) == subject, f"{where}: subject changed"
            parent = message["In-Reply-To"]
            if self.known[recipient]:
                assert parent and str(parent) in self.known[recipient], \
                    f"{where}: In-Reply-To {parent} is not a mail {recipient} has"
                references = str(message["References"] or "").split()
                assert references and references[0] in self.known[recipient] | {str(parent)}
        self.known[recipient].add(str(message["Message-ID"]))
        links = move_links(message)
        to_move = "Your move" in first or "your move" in first.lower().split(";")[0]
        if to_move and not first.startswith(("Reminder", "Final reminder", "Daily digest")):
            assert links, f"{where}: 'your move' without one-tap moves"
            assert "(you)" in text, f"{where}: the reader is not marked"
        else:
            assert not links, f"{where}: move links to a player who is not to move"
            assert "write your move" not in text, f"{where}: told to move while not on turn"
        if "for example: " in text:
            example = text.split("for example: ", 1)[1].split("\n")[0].strip()
            bodies = [link["body"] for link in links]
            assert example in bodies, f"{where}: the footer's example {example!r} is no move here"
        if game in self.over:
            assert "press Reply" not in text, f"{where}: 'press Reply' after the end"
        if first.startswith("Game over"):
            self.over.add(game)
            assert "press Reply" not in text, f"{where}: 'press Reply' in the result"
