"""What one inbound mail's processing carries around: the transaction, the reader's view of the mail,
the reply being assembled and the other mails it causes. Handlers only add to it; the processor
turns it into outbound rows inside the same transaction."""

from __future__ import annotations

from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from engine import State, get_game
from pbem.config import Config
from pbem.i18n import speaking_to
from pbem.outbox.compose import Section
from pbem.reading.incoming import IncomingMail
from pbem.record import replay_record
from pbem.store.base import GameRow, Tx

if TYPE_CHECKING:
    from collections.abc import Callable


# What a planned mail is, so that each recipient's notification level can decide whether it goes
# out now, waits for the daily digest, or is not sent at all (see pbem.processing.preferences).
TURN = "turn"          # it is the recipient's move: board, scores, legal moves
CONFIRM = "confirm"    # the recipient's own move was applied
BOARD = "board"        # someone else moved and the recipient waits (or observes)
EVENT = "event"        # start, end, resignation, invitation, notes: always sent (or digested)
REPLY = "reply"        # the answer to the recipient's own mail: always sent at once
NOTICE = "notice"      # moderators' and the server's notices: always sent at once


@dataclass
class PlannedMail:
    """A mail to one address; about a game when ``game_id`` is set (then it joins that game's
    thread: one subject, chained to the mails this recipient got before).

    ``headline`` is the body's first line: what changed, as the inbox preview shows it. ``seat`` is
    the recipient's seat (its token goes into the Reply-To; None for observers and strangers).
    ``subject`` is only for mails outside a game's thread. ``answering`` is the mail this one
    answers; it is chained to it unless ``own_thread`` (the answered mail is in another game's
    thread, or in a game's thread while this answer is about no game: one thread per game)."""

    to: str
    headline: str
    sections: list[Section] = field(default_factory=list)
    game_id: str | None = None
    seat: str | None = None
    kind: str = EVENT
    subject: str | None = None
    answering: IncomingMail | None = None
    own_thread: bool = False
    auto_submitted: str = "auto-generated"
    attach_record: bool = False
    observer: bool = False  # the recipient watches the game (``observe``); no seat, no token


class StateCache:
    """Replayed states by game id and the moves that made them; a state kept from a transaction is
    forgotten if the transaction is rolled back, so a rolled-back move can never be served from it
    (``Processor._process_together``). Keyed by the moves themselves, not their number:
    another worker (or ``pbem admin rollback``) may have taken a move back and played another one,
    leaving as many moves as this process saw. One state per game, its latest: an earlier one is
    wanted again only after a move was taken back, and kept it would push other games' current
    states out (with 600 games waiting for a move, 1024 states were 600 first positions and the
    positions after the moves made so far, so the games still waiting lost theirs)."""

    def __init__(self, size: int = 2048):  # about 30 MB: an Alien City state is ~15 kB
        self._items: OrderedDict[str, tuple[list, State]] = OrderedDict()
        self._size = size
        self.misses = 0  # states asked for and not kept here (each then replayed): logged per mail

    @staticmethod
    def _moves(record: dict) -> list:
        """The record's moves as kept with the state: each entry copied (one level), so that what
        is done to the record's own entries later cannot change what the state is said to be made
        of. Compared with ``==``: a few microseconds for a long game, where a digest of their JSON
        took 50 us at 40 moves, twice a move."""
        return [dict(m) if isinstance(m, dict) else m for m in record.get("moves", [])]

    def get(self, game_id: str, record: dict) -> State | None:
        kept = self._items.get(game_id)
        moves = record.get("moves", [])
        if kept is None or len(kept[0]) != len(moves) or kept[0] != moves:
            self.misses += 1
            return None
        self._items.move_to_end(game_id)
        return kept[1].copy()

    def forget(self, game_id: str) -> None:
        """The game's state was kept from a transaction that was then rolled back."""
        self._items.pop(game_id, None)

    def put(self, game_id: str, record: dict, state: State) -> None:
        self._items[game_id] = (self._moves(record), state.copy())
        self._items.move_to_end(game_id)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


@dataclass
class MailContext:
    config: Config
    tx: Tx
    now: datetime
    mail: IncomingMail
    secret: bytes
    cache: StateCache
    token_for: Callable[[str, str], str]
    received: datetime | None = None  # when the mail was stored (a move's time is charged up to then)
    context_game: str | None = None  # game named by the token or subject
    context_tag: str | None = None  # the subject's tag when it names no game (a tournament: t-3)
    context_seat: str | None = None  # seat named by a valid token
    context_seat_email: str | None = None  # that seat's registered address (who the token is for)
    reply_sections: list[Section] = field(default_factory=list)
    reply_games: list[str] = field(default_factory=list)
    reply_headlines: list[str] = field(default_factory=list)  # what the reply's first line says
    reply_kinds: set[str] = field(default_factory=set)  # CONFIRM/TURN only: the level may drop it
    planned: list[PlannedMail] = field(default_factory=list)
    auth_failures: list[tuple[str, str | None]] = field(default_factory=list)  # (game_id, seat named)
    touched: dict[str, tuple[GameRow, State]] = field(default_factory=dict)
    expected_ply: dict[str, int] = field(default_factory=dict)  # ply of the board the mail answers
    outcomes: list[str] = field(default_factory=list)
    attach_record: bool = False  # the answer carries the game record (game over, ``record``)

    def load(self, game_id: str) -> tuple[GameRow, State] | None:
        """The game and its current state (replayed, or from the cache), once per mail."""
        if game_id in self.touched:
            return self.touched[game_id]
        row = self.tx.get_game(game_id, for_update=True)
        if row is None:
            return None
        state = self.cache.get(game_id, row.record)
        if state is None:
            state = replay_record(row.record, get_game(row.game))
        self.touched[game_id] = (row, state)
        return row, state

    def speaking_to(self, email: str | None) -> AbstractContextManager[str]:
        """Around the text of a mail to someone other than the sender: in their language."""
        return speaking_to(self.tx, email, self.config.language)

    def reply(self, section: Section | None, game_id: str | None = None, *, headline: str | None = None,
              kind: str = REPLY) -> None:
        """Add to the answer to this mail. ``kind`` CONFIRM or TURN marks a part that only confirms a
        move: when nothing else is in the answer, the sender's notification level decides whether
        it is sent."""
        if section is not None:
            if headline is None and section.title and not self.reply_headlines:
                headline, section.title = section.title, None  # a titled section opens the answer
            self.reply_sections.append(section)
        if headline:
            self.reply_headlines.append(headline)
        self.reply_kinds.add(kind)
        if game_id and game_id not in self.reply_games:
            self.reply_games.append(game_id)
