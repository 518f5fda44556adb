"""What each player chose to receive, read from the players table (``set`` writes it).

One place decides, for every kind of planned mail, whether it goes out at once, waits for the
daily digest, or is not sent: handlers plan every mail a move causes and never ask about
preferences themselves.

The default is ``turn``: a player hears from the server when it is their move (that mail opens with
what happened since, their own last move included), when a game starts or ends, and when someone
writes to them; a refused move is always answered at once. A two-player game then costs each player
about twenty mails instead of forty. ``every`` adds a short confirmation of each of one's own moves
and a board after everyone else's; ``digest`` gathers everything into at most one mail a day.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.processing.context import BOARD, CONFIRM, EVENT, NOTICE, REPLY, TURN

NOTIFY_LEVELS = {
    "every": "a mail after every move: yours confirmed at once, others' with the board",
    "turn": "a mail when it is your move, when a game starts or ends, and notes (default)",
    "digest": "at most one mail a day with everything since the last one",
}
DEFAULT_NOTIFY = "turn"
NICKNAME_MAX = 24

# Which of the per-move kinds a level sends at once; the others are not sent.
_AT_ONCE = {"every": {TURN, CONFIRM, BOARD}, "turn": {TURN}}


@dataclass(frozen=True)
class Preferences:
    notify: str = DEFAULT_NOTIFY
    html: bool = True
    nickname: str | None = None

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> Preferences:
        notify = settings.get("notify")
        nickname = settings.get("nickname")
        return cls(notify=notify if notify in NOTIFY_LEVELS else DEFAULT_NOTIFY,
                   html=settings.get("mail") != "text",
                   nickname=nickname if isinstance(nickname, str) and nickname else None)

    def delivery(self, kind: str, *, observer: bool = False) -> str:
        """"now", "digest" or "drop" for a mail of this kind. Observers asked for every move."""
        if kind in (REPLY, NOTICE):
            return "now"
        if self.notify == "digest":
            return "drop" if kind == CONFIRM else "digest"
        if kind == EVENT or observer or kind in _AT_ONCE[self.notify]:
            return "now"
        return "drop"
