"""Where feature modules (deadlines, observers, moderation) join the core without editing it.

Each list holds callbacks run by the core at one point; a module appends to them when imported
(``pbem.processing.features`` imports them all). Callbacks run inside the mail's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pbem.i18n import Text

if TYPE_CHECKING:
    from engine import State
    from pbem.outbox.compose import Section
    from pbem.processing.context import MailContext, PlannedMail
    from pbem.reading.incoming import IncomingMail
    from pbem.store.base import GameRow, Tx

# A game's row is about to be saved after a change of position or status (a move, a start, an end):
# e.g. restart the move clock. Called as hook(ctx, row, state).
GAME_SAVED: list[Callable[[MailContext, GameRow, State], None]] = []

@dataclass
class AfterMove:
    """What a MOVE_APPLIED hook adds to the mails of a move: ``followed`` are further moves made in
    the same step, as (seat, what it did), e.g. ("white", "replied dome blue D5 (a queued move)");
    ``lines`` are told to every player with the move; ``private`` lines only to one seat (a queue is
    nobody else's business); ``tell`` are seats that must hear of the move even when it is not their
    turn (the one whose queued reply was played)."""

    # texts for several readers: strings, or functions that write them in each reader's language
    followed: list[tuple[str, Text]] = field(default_factory=list)
    lines: list[Text] = field(default_factory=list)
    private: dict[str, list[str]] = field(default_factory=dict)
    tell: list[str] = field(default_factory=list)

    def add(self, other: AfterMove) -> None:
        self.followed += other.followed
        self.lines += other.lines
        for seat, lines in other.private.items():
            self.private.setdefault(seat, []).extend(lines)
        self.tell += [seat for seat in other.tell if seat not in self.tell]


# A player's move has just been applied to the state and the record, before the game is saved: e.g.
# a pending proposal lapses, or the next seat's queued reply is played in this same step (and so
# in the same transaction). Called as hook(ctx, row, state, seat) -> AfterMove | None.
MOVE_APPLIED: list[Callable[[MailContext, GameRow, State, str], AfterMove | None]] = []


def after_move(ctx: MailContext, row: GameRow, state: State, seat: str) -> AfterMove:
    merged = AfterMove()
    for hook in MOVE_APPLIED:
        found = hook(ctx, row, state, seat)
        if found is not None:
            merged.add(found)
    return merged


# The players have been sent the board after a move; e.g. observers get it too.
# Called as hook(ctx, row, state, headline): ``headline()`` writes it in the language then active
# (each recipient's, see pbem.i18n.speaking).
BOARD_SENT: list[Callable[[MailContext, GameRow, State, Callable[[], str]], None]] = []

# A game has ended (last move, resignation, forfeit, a moderator); the players have been told.
# Called as hook(ctx, row, state, headline, note): the result as nobody's seat sees it, and what was
# said about it (a moderator's reason); both are functions, called in each recipient's language.
GAME_ENDED: list[Callable[[MailContext, GameRow, State, Callable[[], str], Callable[[], list[str]]],
                          None]] = []

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
# words from the command and returns record keys to add. Called as hook(ctx, command) -> dict.
NEW_GAME_OPTIONS: list[Callable[[MailContext, Any], dict[str, Any]]] = []

# Lines for the reply to ``settings`` (and ``set``) after the settings themselves, e.g. the vacation
# allowance left this year. Called as hook(ctx) -> list of str, in the reader's language.
SETTINGS_SHOWN: list[Callable[[MailContext], list[str]]] = []

# Sections added at the end of one recipient's mail about a game, as it is composed (in the reader's
# language): e.g. the reader's own private notes on the game. Called as hook(tx, planned, row) ->
# list of Section; ``planned.seat`` is the reader's seat (None: an observer or a moderator).
GAME_MAIL: list[Callable[[Tx, PlannedMail, GameRow], list[Section]]] = []

# The addresses that have shut ``other`` out (each player's own block list). For such a player an
# invitation from ``other`` is declined without a word to them, what ``other`` writes (a message, a
# note after a move) does not reach them, and ``other`` cannot join (or see) their open challenge; a
# game they play together goes on. Called as hook(tx, other) -> set of addresses.
SHUT_OUT: list[Callable[[Tx, str], set[str]]] = []


def shut_out_by(tx: Tx, other: str | None) -> set[str]:
    """Everyone who has shut ``other`` out."""
    if not other:
        return set()
    return set().union(*(hook(tx, other) for hook in SHUT_OUT))


def shut_out(tx: Tx, player: str | None, other: str | None) -> bool:
    """Whether ``player`` has shut ``other`` out (False when either is unknown)."""
    if not player or not other or player == other:
        return False
    return player in shut_out_by(tx, other)

# A player moved to another address (``confirm address``, a moderator's ``admin address``); their
# games have moved. Called as hook(ctx, old, new), e.g. tournaments enter the new address.
ADDRESS_MOVED: list[Callable[[MailContext, str, str], None]] = []

# Work for the scheduler's every run, after deadlines and expiries (e.g. tournaments: start dates,
# round deadlines, games the clock ended). Called as hook(scheduler, now, report); the scheduler's
# ``in_context(report, what, action, now)`` runs ``action(ctx)`` in a transaction of its own with
# a mail context, and queues what it planned.
SCHEDULED: list[Callable[[Any, Any, Any], None]] = []
