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

from pbem.i18n import N_
from pbem.processing.context import BOARD, CONFIRM, EVENT, NOTICE, REPLY, TURN

NOTIFY_LEVELS = {
    "every": N_("a mail after every move: yours confirmed at once, others' with the board"),
    "turn": N_("a mail when it is your move, when a game starts or ends, and notes (default)"),
    "digest": N_("at most one mail a day with everything since the last one"),
}
DEFAULT_NOTIFY = "turn"
NICKNAME_MAX = 24

# Which of the per-move kinds a level sends at once; the others are not sent.
_AT_ONCE = {"every": {TURN, CONFIRM, BOARD}, "turn": {TURN}}


MAIL_FORMATS = {
    "text": N_("plain text only"),
    "html": N_("plain text and HTML with a drawn board (default)"),
    "tap": N_("as html, and every legal move a one-tap link: on a phone, tap a move and press Send"),
}
DEFAULT_MAIL = "html"


@dataclass(frozen=True)
class Preferences:
    """Why the one-tap move links are a choice, not the default: a link repeats the address and the
    subject, and an Alien City turn has about seventy legal builds, so the links alone would double
    every "your move" mail (about 9 KB of 18): a whole game would cost each player some 350 KB
    instead of about 190 KB. Accept, decline and confirmations are links in every HTML mail."""

    notify: str = DEFAULT_NOTIFY
    mail: str = DEFAULT_MAIL
    nickname: str | None = None

    @property
    def html(self) -> bool:
        return self.mail != "text"

    @property
    def taps(self) -> bool:
        return self.mail == "tap"

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> Preferences:
        notify, mail = settings.get("notify"), settings.get("mail")
        nickname = settings.get("nickname")
        return cls(notify=notify if notify in NOTIFY_LEVELS else DEFAULT_NOTIFY,
                   mail=mail if mail in MAIL_FORMATS else DEFAULT_MAIL,
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
