"""Where feature modules (deadlines, observers, moderation) join the core without editing it.

Each list holds callbacks run by the core at one point; a module appends to them when imported
(``pbem.processing.features`` imports them all). Callbacks run inside the mail's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine import State
    from pbem.processing.context import MailContext
    from pbem.reading.incoming import IncomingMail
    from pbem.store.base import GameRow, Tx

# A game's row is about to be saved after a change of position or status (a move, a start, an end):
# e.g. restart the move clock. Called as hook(ctx, row, state).
GAME_SAVED: list[Callable[[MailContext, GameRow, State], None]] = []

# The players have been sent the board after a move; e.g. observers get it too.
# Called as hook(ctx, row, state, headline).
BOARD_SENT: list[Callable[[MailContext, GameRow, State, str], None]] = []

# A game has ended (last move, resignation, forfeit, a moderator); the players have been told.
# Called as hook(ctx, row, state, headline, note): the result as nobody's seat sees it, and what was
# said about it (a moderator's reason).
GAME_ENDED: list[Callable[[MailContext, GameRow, State, str, list[str]], None]] = []

# Before any command of a mail runs: return a reason to ignore the mail (e.g. a blocked address),
# or None. Called as hook(tx, mail).
SENDER_CHECK: list[Callable[[Tx, IncomingMail], str | None]] = []

# A delivery report says our mail to these addresses failed: hook(ctx, addresses). Bounces are never
# answered; e.g. mark the address bouncing, tell the other players once, stop that player's clock.
BOUNCED: list[Callable[[MailContext, list[str]], None]] = []

# A mail a person wrote passed the sender checks and its game context is known: hook(ctx). E.g.
# mail with the sender's own token shows that our mail reaches them again.
MAIL_READ: list[Callable[[MailContext], None]] = []

# Extra sections for the reply to the "games" command: hook(ctx) -> list of Section.
GAMES_LISTING: list[Callable[[MailContext], list[Any]]] = []

# Options of ``new`` that belong to the server, not the game (e.g. ``time 3``): each hook removes its
# words from the command and returns record keys to add. Called as hook(command) -> dict.
NEW_GAME_OPTIONS: list[Callable[[Any], dict[str, Any]]] = []
