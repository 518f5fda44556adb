"""The storage interface. SQLite is the default; PostgreSQL implements the same interface (both on the
shared SQL of ``pbem.store.sql``).

Everything the server knows lives here: the durable intake queue (raw messages, de-duplicated), the
games (each a full record document plus indexed columns), the seats (addresses and hashed tokens), the
transactional outbox, IMAP progress and rate-limit notices. Applying a move, marking its message done and
queueing the replies happen inside one ``transaction()``.

Several server processes ("workers") may share one database. What keeps them from doing one thing
twice is in here too: a message is processed inside the transaction that claimed it
(``Tx.claim_inbound``), outbox rows are sent under a claim (``Store.claim_outbound``), a game row is
locked while a move is applied (``get_game(for_update=True)``), and the roles only one worker may
hold at a time (the IMAP watcher, the scheduler) are taken with ``hold_role``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

# Inbound statuses: pending -> done | ignored | failed (failed = processing raised; kept for inspection)
INBOUND_STATUSES = ("pending", "done", "ignored", "failed")
# Game statuses: invited (waiting for accepts) -> active -> over; or declined / cancelled. An open
# challenge (``new GAME open``) is a game whose free seats anyone may take: open -> active when the
# last seat is taken, or cancelled when it expires or its author withdraws it.
GAME_STATUSES = ("invited", "active", "over", "declined", "cancelled", "open")
# Endings after which a game counts for nobody: no seat won, lost or drew it (not rated).
UNRATED_ENDINGS = ("abandoned by agreement",)
# How a game can be searched by result (``search_games(result=...)``): a draw for every seat, or the
# way it ended (the result's reason).
RESULT_FILTERS = {"draw": None, "resigned": "resigned", "forfeit": "forfeit",
                  "abandoned": "abandoned by agreement"}


@dataclass
class Inbound:
    id: int
    raw: bytes
    source: str  # "smtp", "imap", "deliver", "cli"; "relay": a report of a refusal at RCPT
    received_at: datetime
    message_id: str | None
    sha256: str
    status: str = "pending"
    outcome: str | None = None
    envelope_from: str | None = None  # SMTP envelope sender: "" for <> (a bounce), None unknown
    original_size: int | None = None  # set when only the header of an oversized mail was kept
    sender: str | None = None  # From address (lower case), set at intake; fairness is by sender
    pruned_at: datetime | None = None  # when its raw mail was dropped (raw is then b""); see pruning


@dataclass
class Outbound:
    id: int
    message_id: str  # fixed at creation, so a resend is recognisable
    sender: str  # envelope sender
    recipients: list[str]
    raw: bytes  # the complete message, headers included
    created_at: datetime
    attempts: int = 0
    next_attempt_at: datetime | None = None
    sent_at: datetime | None = None
    last_error: str | None = None
    given_up_at: datetime | None = None  # refused for good (5xx): never retried
    pruned_at: datetime | None = None  # when its raw mail was dropped (raw is then b""); see pruning


@dataclass
class Seat:
    seat: str
    email: str  # normalised lower-case address
    name: str = ""
    token_hash: str = ""  # hex sha256 of the secret token; the token itself is never stored
    accepted: bool = False


@dataclass
class GameRow:
    id: str  # "ac-17"
    game: str  # "alien-city"
    status: str
    record: dict[str, Any]  # the full pbem-record/1 document (server-side: hidden info included)
    seats: list[Seat] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    to_move: str | None = None  # seat to move, for "games" listings and reminders
    thread_id: str | None = None  # Message-ID of the first mail of the game, for References
    deadline_at: datetime | None = None  # when the seat to move must have moved (None: no clock)
    finished_at: datetime | None = None  # when the game ended, for archive searches


@dataclass
class Worker:
    """A running ``pbem serve`` as its heartbeats describe it (for ``pbem status``)."""

    id: str  # "host:pid:start", unique per process start
    host: str
    pid: int
    started_at: datetime
    seen_at: datetime
    roles: list[str] = field(default_factory=list)


class OutboxBatch(Protocol):
    """Due outbox rows for one pass of a sender (``Store.claim_outbound``). Before sending a row the
    sender takes it (False: another worker's sender has it, or sent it already), then reports its
    fate; where the mark is written (at once, or when the batch ends) is the store's. A row's
    ``raw`` may be read only when it is taken."""

    rows: list[Outbound]

    def take(self, row: Outbound) -> bool: ...
    def sent(self, outbound_id: int) -> None: ...
    def failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None: ...
    def given_up(self, outbound_id: int, error: str, report: bytes | None = None) -> None:
        """Refused for good: never retried. ``report``, a delivery report about the refusal, is
        stored as inbound mail with the mark (null sender, source "relay"): written together, so
        the refusal is handled like a bounce exactly once."""


@dataclass(frozen=True)
class AddressChange:
    """A pending (or done) move of a player to a new address, waiting for the new address's code."""

    old_email: str
    new_email: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None


@dataclass(frozen=True)
class AcceptResult:
    inbound_id: int
    new: bool  # False when the bytes or the Message-ID were already stored
    status: str  # status of the stored message (for a duplicate: the first copy's)
    game_id: str | None = None  # a new message's game, as its token named it at intake


class Tx(Protocol):
    """Operations inside one transaction; all commit together or not at all."""

    @property
    def tournaments(self) -> Any: ...  # a pbem.store.tournaments.TournamentTx: tournaments' statements

    # intake
    def claim_inbound(self, *inbound_ids: int) -> Inbound | None:
        """Take a pending message for processing in this transaction, and read it: None unless it is
        still pending, no other worker holds it, and no earlier message about the same game is still
        pending (so one game's mail is applied in arrival order). The claim ends with the
        transaction. Given several, the oldest of them that can be taken, in one statement: a worker
        whose first choice another has taken loses no round trip finding the next."""
        ...
    def claim_read(self, inbound_id: int) -> bool:
        """``claim_inbound`` of one message its caller read before the transaction (a stored
        message does not change): True when claimed; its raw mail is not read again."""
        ...
    def mark_inbound(self, inbound_id: int, status: str, outcome: str, *,
                     sender: str | None = None, game_id: str | None = None,
                     now: datetime) -> None: ...

    # games
    def next_game_id(self, prefix: str) -> str: ...  # "ac-1", "ac-2", ... never reused
    def insert_game(self, game: GameRow) -> None: ...
    def get_game(self, game_id: str, *, for_update: bool = False) -> GameRow | None: ...
    def save_game(self, game: GameRow) -> None: ...  # status, record, seats, to_move, updated_at
    def games_for_email(self, email: str) -> list[GameRow]: ...
    def seat_by_token_hash(self, token_hash: str) -> tuple[str, Seat] | None: ...  # (game_id, seat)

    # outbox
    def queue_outbound(self, *, message_id: str, sender: str, recipients: list[str], raw: bytes,
                       now: datetime) -> int | None:
        """The new row's id; None inside an optimistic transaction, whose rows get their ids only
        when it commits (``pbem.store.optimistic``)."""
        ...

    # bounces and rate-limited notices
    def record_bounce(self, email: str, now: datetime, detail: str) -> None: ...
    def mark_bouncing(self, email: str, now: datetime, detail: str) -> bool:
        """Our mail to ``email`` bounces; True when it was not marked yet (tell people once)."""
        ...
    def clear_bouncing(self, email: str) -> bool: ...  # True when it was marked
    def is_bouncing(self, email: str) -> bool: ...
    def claim_notice(self, key: str, now: datetime, interval_seconds: int) -> bool:
        """True (and remembers now) when no notice with this key went out within the interval."""
        ...

    # community: observers, players' settings, blocks, exactly-once actions, deadlines
    def add_observer(self, game_id: str, email: str, now: datetime) -> bool: ...  # False if already
    def remove_observer(self, game_id: str, email: str) -> bool: ...
    def observers(self, game_id: str) -> list[str]: ...
    def games_observed(self, email: str) -> list[GameRow]: ...
    def get_player(self, email: str) -> dict[str, Any]: ...  # {} for an unknown address
    def set_player(self, email: str, settings: dict[str, Any]) -> None: ...
    def nickname_owner(self, nickname: str) -> str | None: ...  # the address using it, any case
    def block(self, email: str, now: datetime, by: str, why: str) -> None: ...
    def unblock(self, email: str) -> bool: ...
    def is_blocked(self, email: str) -> bool: ...
    def claim_once(self, key: str, now: datetime) -> bool:
        """True the first time a key is claimed (committed with the action it guards), else False."""
        ...

    # each player's own block list (``block ADDRESS``; pbem.store.player_blocks)
    def add_player_block(self, email: str, blocked: str, now: datetime) -> bool: ...  # False if already
    def remove_player_block(self, email: str, blocked: str) -> bool: ...
    def player_blocks(self, email: str) -> list[tuple[str, datetime]]: ...  # (address, since)
    def blocked_by(self, blocked: str) -> set[str]: ...  # the players whose lists hold it
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def init_meta(self, key: str, value: str) -> str:
        """Store ``value`` unless the key has one; the stored value either way (two workers that
        start at once agree on the first one written)."""
        ...

    # threads per recipient: the first and the latest mail of a game sent to an address
    def mail_thread(self, game_id: str, email: str) -> tuple[str, str] | None: ...  # (root, last)
    def set_mail_thread(self, game_id: str, email: str, root_id: str, last_id: str) -> None: ...

    # the daily digest: lines held for players who chose it, sent and cleared by the scheduler
    def hold_for_digest(self, email: str, game_id: str | None, headline: str, now: datetime) -> None: ...
    def digest_items(self, email: str) -> list[tuple[str | None, str, datetime]]: ...
    def digest_addresses(self) -> list[str]: ...
    def clear_digest(self, email: str) -> None: ...
    def games_due(self, until: datetime) -> list[GameRow]: ...  # active, deadline_at <= until
    def active_games(self) -> list[GameRow]: ...
    def search_games(self, *, player: str | None = None, game: str | None = None,
                     date_from: datetime | None = None, date_to: datetime | None = None,
                     status: str | None = None, limit: int | None = None,
                     offset: int = 0, result: str | None = None, winner: str | None = None,
                     loser: str | None = None) -> list[GameRow]: ...  # as Store's

    # changes of address: pending until the new address answers with the code
    def add_address_change(self, old_email: str, new_email: str, code_hash: str, now: datetime,
                           expires_at: datetime) -> None: ...
    def address_change(self, code_hash: str) -> AddressChange | None: ...
    def use_address_change(self, code_hash: str, now: datetime) -> None: ...
    # the yearly vacation allowance (pbem.store.allowances): days used per player and year
    def allowance_use(self, email: str, year: int) -> tuple[int, int] | None:
        """(vacation days, timeout days) of ``email`` in ``year``; None when nothing was written."""
        ...
    def set_vacation_days(self, email: str, year: int, days: int, now: datetime) -> None: ...
    def add_timeout_days(self, email: str, year: int, days: int, vacation_days: int, now: datetime) -> None:
        """``days`` more spent on timeouts; ``vacation_days`` is written only with a new row."""
        ...

    def move_player(self, old_email: str, new_email: str) -> None:
        """Settings, observed games, held digest lines, the vacation allowance and block lists (both
        the player's own and their place on others') of ``old_email`` go to ``new_email`` (the seats
        are moved by the caller, game by game, since each game's record changes too)."""
        ...


class Store(Protocol):
    #: True when every write transaction excludes all others (SQLite's one write lock): work that
    #: can be done before a transaction should be, or it holds up every other writer.
    one_writer: bool

    def migrate(self) -> int: ...  # bring the schema to the newest version; returns that version
    def close(self) -> None: ...
    def open_now(self) -> None:
        """Open what this thread (and process) writes through now, not at the first write: a
        process started while the data folder could be written keeps writing if it turns
        read-only, as the processes that wrote before it do."""
        ...
    def transaction(self, durable: bool = True) -> AbstractContextManager[Tx]:
        """``durable=False`` commits without waiting for the disk; ``flush()`` later makes every
        commit so far durable. Atomicity and kill -9 safety are the same either way."""
        ...

    def flush(self) -> None: ...

    # intake: durable before returning (the SMTP listener answers 250 only after this returns)
    def accept_inbound(self, raw: bytes, source: str, now: datetime,
                       source_ref: str | None = None, *, envelope_from: str | None = None,
                       original_size: int | None = None) -> AcceptResult:
        """``envelope_from``: the SMTP envelope sender ("" for ``<>``); ``original_size``: the
        full size when ``raw`` is only the header of a message over the size limit."""
        ...
    def accept_inbound_many(self, items: list[tuple[bytes, str, datetime, str | None, str | None]]
                            ) -> list[AcceptResult]:
        """accept_inbound for (raw, source, now, source_ref, envelope_from) items in one
        transaction: one disk flush for all of them (group commit), results in order."""
        ...
    def pending_inbound(self, limit: int = 100) -> list[Inbound]: ...  # oldest first
    def pending_fair(self, now: datetime, per_sender_per_minute: int, limit: int) -> list[int]:
        """Ids of the next pending messages, one per sender (each sender's oldest), oldest first;
        calling again gives the next round, so one sender's flood waits behind everybody's next
        message. A sender who had ``per_sender_per_minute`` messages processed within the minute
        before ``now`` is left out (0: no cap): their mail waits in the store, never dropped. Each
        is then claimed with ``Tx.claim_inbound`` (another worker may have taken it meanwhile)."""
        ...
    def pending_fair_games(self, now: datetime, per_sender_per_minute: int, limit: int
                           ) -> list[tuple[int, str | None, datetime | None]]:
        """``pending_fair``, each id with the game its message is about as far as intake knew it
        (its token's game; None without one) and when it came in: a worker can take first the
        mail of the games whose state it keeps, and leave another's to it for a moment."""
        ...
    def watch_inbound(self, on_stored: Callable[[str | None], None], stop: threading.Event) -> bool:
        """Until ``stop`` is set: ``on_stored(game_id)`` for each message another process stores
        from now on (None: about no game known at intake), where the database tells (PostgreSQL's
        LISTEN). False at once where it does not (SQLite: one processor, woken by its own intake)."""
        ...
    def get_inbound(self, inbound_id: int) -> Inbound | None: ...  # one message, raw included
    def get_inbound_many(self, inbound_ids: Sequence[int]) -> dict[int, Inbound]:
        """``get_inbound`` of several (a round of ``pending_fair``) in one statement, by id."""
        ...
    def inbound_status(self, inbound_id: int) -> str | None: ...
    def inbound_counts(self) -> dict[str, int]: ...  # by status

    # outbox sender
    def due_outbound(self, now: datetime, limit: int = 100) -> list[Outbound]:
        """Round-robin by recipient list, each recipient's mails in queue order."""
        ...
    def mark_sent(self, outbound_id: int, now: datetime) -> None: ...
    def mark_sent_many(self, outbound_ids: list[int], now: datetime) -> None: ...  # one commit
    def mark_send_failed(self, outbound_id: int, error: str, next_attempt_at: datetime) -> None: ...
    def mark_given_up(self, outbound_id: int, error: str, now: datetime) -> None:
        """The relay refused the mail for good (5xx): it is never tried again."""
        ...
    def reset_backoff(self, now: datetime) -> int:
        """The relay is back: every waiting mail is due now (returns how many were waiting)."""
        ...
    def outbound_counts(self) -> dict[str, int]: ...  # {"pending": n, "sent": m, "given_up": k}
    def given_up_outbound(self, limit: int = 50) -> list[Outbound]: ...  # newest first
    def claim_outbound(self, now: datetime, limit: int = 100) -> AbstractContextManager[OutboxBatch]:
        """Due rows, in ``due_outbound``'s order, for one pass of the sender; every mark given to the
        batch is written by the time the block ends, also when it raised."""
        ...

    # workers sharing the database: roles, heartbeats, queue figures
    def hold_role(self, role: str) -> bool:
        """Take, or keep, a role only one worker may hold (``imap``, ``scheduler``); False while
        another process holds it. A role is freed when its holder releases it or dies."""
        ...
    def release_role(self, role: str) -> None: ...
    def heartbeat(self, worker: Worker) -> None: ...  # insert or refresh the worker's row
    def forget_worker(self, worker_id: str) -> None: ...  # a worker that stopped cleanly
    def workers(self) -> list[Worker]: ...  # every row, newest heartbeat first
    def role_sessions(self, roles: Sequence[str]) -> dict[str, list[str]] | None:
        """Where the database itself can tell (PostgreSQL): every worker connected now, as
        "host:pid", with the roles of ``roles`` it holds this instant; None where it cannot
        (SQLite's file locks of other processes are not listed). A killed worker's sessions end
        with it, so this is right at once, while its heartbeat row looks alive for a while."""
        ...
    def queue_figures(self) -> dict[str, Any]:
        """``inbound_pending``, ``oldest_pending`` (datetime or None), ``outbound_pending``,
        ``outbound_due_oldest`` (datetime or None), ``games_active``."""
        ...

    # IMAP progress per mailbox
    def imap_state(self, mailbox: str) -> tuple[int, int] | None: ...  # (uidvalidity, last_uid)
    def set_imap_state(self, mailbox: str, uidvalidity: int, last_uid: int) -> None: ...

    # read-only views used by CLI tools
    def tournament_views(self) -> Any: ...  # a pbem.store.tournaments.TournamentViews
    def mail_pruning(self) -> Any: ...  # a pbem.store.pruning.MailPruning: `pbem admin prune`
    def get_game(self, game_id: str) -> GameRow | None: ...
    def list_games(self, status: str | None = None) -> list[GameRow]: ...
    def active_games_to_move(self, address_like: str) -> list[str]: ...  # ids, oldest first
    def search_games(self, *, player: str | None = None, game: str | None = None,
                     date_from: datetime | None = None, date_to: datetime | None = None,
                     status: str | None = None, limit: int | None = None,
                     offset: int = 0, result: str | None = None, winner: str | None = None,
                     loser: str | None = None) -> list[GameRow]:
        """Games by player address, game name, finish date (creation date while unfinished) and
        result (a key of RESULT_FILTERS; the address that won or lost), newest first."""
        ...
    def iter_inbound(self, status: str | None = None) -> Iterator[Inbound]: ...
    def bouncing_addresses(self) -> list[tuple[str, datetime, str]]: ...  # (email, since, detail)
