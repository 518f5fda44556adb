"""Reading every mail of a game as its recipient would, and checking what a person relies on.

``MailCheck.read(recipient, message)`` is called for each mail as it arrives; it fails the test at
the first mail that is wrong for its reader:

- one subject for the whole game, and an In-Reply-To that names a mail this recipient has (one they
  received or one they sent), so that every client shows one unbroken thread (only the first mail
  of a game the server started by itself, a tournament's, opens a thread without one);
- no text line over 78 columns, and moves numbered one way ("move 12", never "ply");
- "Your move" only to the seat to move, marked "(you)", with an example move in the footer (one of
  its one-tap links, for those who chose them); to anyone else no move links and no "press Reply
  and write your move";
- after the end, never "press Reply" again.
"""

from __future__ import annotations

import re
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
        self.games: set[tuple[str, str]] = set()  # (recipient, game) pairs seen

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
        plies = [line for line in text.split("\n") if re.search(r"\bply\b", line, re.IGNORECASE)]
        assert not plies, f"{where}: moves are numbered one way, 'move N': {plies[:3]}"
        if game:
            subject = str(message["Subject"])
            assert self.subject.setdefault(game, subject) == subject, f"{where}: subject changed"
            parent = message["In-Reply-To"]
            first_of_game = (recipient, game) not in self.games
            self.games.add((recipient, game))
            if parent is None and first_of_game:
                pass  # a game the server started (a tournament's round) opens a thread of its own
            elif self.known[recipient]:
                assert parent and str(parent) in self.known[recipient], \
                    f"{where}: In-Reply-To {parent} is not a mail {recipient} has"
                references = str(message["References"] or "").split()
                assert references and references[0] in self.known[recipient] | {str(parent)}
        self.known[recipient].add(str(message["Message-ID"]))
        links = move_links(message)
        example = text.split("for example:\n", 1)[1].split("\n")[0].strip() if "for example:\n" in text \
            else None
        to_move = "Your move" in first or "your move" in first.lower().split(";")[0]
        reminder = first.startswith(("Reminder", "Final reminder", "Daily digest"))
        if reminder:
            pass  # a reminder of one's move repeats the board, as the "your move" mail did
        elif to_move:
            assert "(you)" in text, f"{where}: the reader is not marked"
            assert example, f"{where}: 'your move' without the footer's example move"
            if links:  # the reader chose one-tap moves: the example is one of them
                assert example in [link["body"] for link in links], f"{where}: {example!r} not a link"
        else:
            assert not links, f"{where}: move links to a player who is not to move"
            assert example is None and "write your move" not in text, \
                f"{where}: told to move while not on turn"
        if game in self.over:
            assert "press Reply" not in text, f"{where}: 'press Reply' after the end"
        if first.startswith("Game over"):
            self.over.add(game)
            assert "press Reply" not in text, f"{where}: 'press Reply' in the result"
