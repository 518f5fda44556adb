"""Processes stored inbound mail: each message in exactly one transaction that claims it, applies its
commands, marks it done and queues every reply (a fair round's messages may share one), so a crash
at any point neither loses nor repeats a move, and a second worker on the same database never
processes the same message (it skips what another has claimed; see ``Tx.claim_inbound``). A
database that is unreachable, or that aborted the transaction to break a deadlock, leaves the
message pending for the next pass rather than marking it failed.

Auto-generated mail, bounces and our own mail are logged and never answered. A mail that fails
authentication changes nothing and gets no reply; the seat it named gets at most one notice per
interval at its registered address.

Hostile mail must not stall everybody else: pending mail is taken round-robin by sender (each
sender's oldest first) with a cap per sender and minute, and a mail over one of the limits of
``pbem.reading.limits`` is never parsed in full (a registered player gets one short reply naming
the limit). A mail from an address that plays no game, in which no line starts with a command word, is
not answered: it is spam or carries a forged sender, and an answer would be backscatter. (Nor is
one whose only command words are for a game it would play, which it does not: move, message...)
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engine import get_game
from engine.registry import available_games
from pbem import failpoints
from pbem.clock import Clock, SystemClock
from pbem.commands.parsing import (
    VERBS,
    Command,
    CommandError,
    parse_json,
    parse_text,
    read_commands,
    without_signed_name,
)
from pbem.config import Config
from pbem.i18n import _, ngettext, speaking, speaking_to
from pbem.outbox.compose import Section, quoted, subject_phrase
from pbem.processing import features, hooks
from pbem.processing.context import CONFIRM, NOTICE, REPLY, TURN, MailContext, PlannedMail, StateCache
from pbem.processing.gamemail import board_section, seat_label
from pbem.processing.games import AuthFailed, CommandFailed, mail_tokens, reply_key, retired_seat
from pbem.processing.handlers import HANDLERS
from pbem.processing.homes import Homes
from pbem.processing.languages import sender_language
from pbem.processing.outgoing import Outgoing
from pbem.reading.incoming import IncomingMail, read_headers, read_mail
from pbem.reading.limits import LimitExceeded, check_limits
from pbem.store.base import GameRow, Inbound, Seat, Store, Tx
from pbem.store.common import StoreUnavailableError
from pbem.store.optimistic import Conflict, NeedsLock
from pbem.store.secret import server_secret
from pbem.tokens import token_hash

log = logging.getLogger("pbem.processor")
# Commands whose free text after them is meant for someone (relayed); after others it is reported.
NOTE_VERBS = ("move", "message", "new", "propose", "queue", "note")
QUOTED_LINES = 3  # of a command line quoted back above its answer (the player has the rest)
assert features  # imported for its side effect: feature commands and hooks are registered
_OUR_ID = re.compile(r"<pbem\.([a-z]+-\d+)\.p(\d+)\.", re.IGNORECASE)
#: Pending mail is fetched this many at a time, so that mail arriving meanwhile from other senders
#: gets its turn after at most this many others.
FAIR_CHUNK = 10
#: How long one transaction of a processor alone on SQLite goes on taking the round's messages
#: (``Processor._process_together``); with ~1.3 ms a move, about four moves.
TOGETHER_SECONDS = 0.005
#: How long the mail of a game homed at another worker is left to that worker (``_take_round``).
HANDOFF_SECONDS = 0.25
#: The young generation is collected after this many new container objects, not Python's 700: one
#: mail makes thousands (parse trees, templates, boards) that die with it, and collecting every 700
#: promoted them to the old generations, whose scans of the whole state cache cost about 0.3 ms per
#: move (``bench/processor_cpu.py``). The process that runs a processor runs it alone, so it decides.
GC_YOUNG = 10_000


def _share_of(game_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(game_id.encode(), digest_size=4).digest(), "big")


@functools.cache
def _game_prefixes() -> frozenset[str]:
    return frozenset(get_game(name).id_prefix for name in available_games())


@dataclass
class _Progress:
    """How far one message's processing got: what the handlers of a failure need."""

    inbound: Inbound | None = None
    mail: IncomingMail = field(default_factory=IncomingMail)
    read_ms: float = 0.0
    outcome: str = ""
    game_id: str | None = None
    touched: dict = field(default_factory=dict)


#: A message read before its transaction: as stored, as read (and the first limit it exceeds),
#: and the thread CPU the reading took in ms.
_Ahead = tuple[Inbound, tuple[IncomingMail, LimitExceeded | None], float]


class _AuthAbort(Exception):
    def __init__(self, failure: AuthFailed, sender: str):
        super().__init__(failure.game_id)
        self.failure = failure
        self.sender = sender


#: Commands for a game the sender plays: from an address that plays none they can only be refused,
#: so they do not make a stranger's mail look meant. (A broken header line read as the body's
#: first line, "Message<tabs>-ID: <...>", was answered as a ``message`` command.)
SEAT_VERBS = frozenset({"move", "message", "resign", "rematch", "note"})


def _looks_meant(results: list) -> bool:
    """A line of the mail starts with a command word a stranger could use. Only exact words count:
    mutated junk came close to a command word far too often ("Delive" is near "decline", a
    bounce's "Action:" near "vacation") for a nearness test to tell a newcomer from backscatter."""
    for item in results:
        if isinstance(item, Command):
            if item.verb not in SEAT_VERBS:
                return True
            continue
        words = item.line.lower().split()
        two = " ".join(words[:2])
        word = two if two in VERBS else words[0].rstrip(":") if words else ""
        if word in VERBS and word not in SEAT_VERBS:
            return True
    return False


class Processor:
    def __init__(self, config: Config, store: Store, clock: Clock | None = None,
                 secret: bytes | None = None):
        self.config = config
        self.store = store
        self.clock = clock or SystemClock()
        self.secret = secret if secret is not None else server_secret(store, config.data_dir)
        self.cache = StateCache()
        self.homes = Homes(store)
        #: (k, n): this processor takes the k-th of n shares of the games, the others the rest (``pbem
        #: serve`` on SQLite runs several processor processes; see ``own_share``).
        self.share = (0, 1)
        #: The last fair round was full and held none of this share (its mail may be behind it).
        self.starved = False
        #: Seconds after which mail left to another worker (``_take_round``) may be taken here.
        self.look_again: float | None = None
        #: Apply each message outside SQLite's write lock first (``_process``): worth its cost (the
        #: reads run again at the commit) only where several processors share the file's one lock.
        self.optimistic = False
        self.outgoing = Outgoing(config, self.secret)
        young, *older = gc.get_threshold()
        if 0 < young < GC_YOUNG:
            gc.set_threshold(GC_YOUNG, *older)

    def token_for(self, game_id: str, seat: str, record: dict | None = None) -> str:
        return self.outgoing.token_for(game_id, seat, record)

    # --- the runner --------------------------------------------------------------------------------
    def process_pending(self, limit: int = 100) -> int:
        """Process up to ``limit`` pending messages, round-robin by sender, one at a time in memory;
        the number processed here (not counting what other workers took meanwhile). Each round's
        candidates are claimed one by one: one another worker holds, or that waits behind an earlier
        message of its game, is left for a later round."""
        done = 0
        cap = self.config.limits.sender_messages_per_minute
        while done < limit:
            if self.store.one_writer:  # each is read before the write lock, and applied optimistically
                chunk = min(FAIR_CHUNK, limit - done)
                if self.share[1] == 1:
                    ids = self.store.pending_fair(self.clock.now(), cap, chunk)
                else:
                    window = chunk * self.share[1]
                    heads = self.store.pending_fair_games(self.clock.now(), cap, window)
                    ids = self.own_share(heads)[:chunk]
                    self.starved = not ids and len(heads) == window
                stored = self.store.get_inbound_many(ids)  # the round's mail, in one statement
                if self.share[1] == 1 and not self.optimistic and len(ids) > 1:
                    taken = self._process_together(ids, stored)
                else:
                    taken = sum(self._process(inbound_id, stored=stored.get(inbound_id)) is not None
                                for inbound_id in ids)
            else:
                # The workers share the next round of each: this one takes its own part of it
                # (and its own only while there are any).
                window = FAIR_CHUNK * self.homes.count()
                heads = self.store.pending_fair_games(self.clock.now(), cap, window)
                taken = self._take_round(heads, limit - done)
            if not taken:
                break
            done += taken
        return done

    def own_share(self, heads: list[tuple[int, str | None, datetime | None]]) -> list[int]:
        """Of a fair round, the messages of this processor's share of the games (a mail about no
        game known at intake by its id): each game's mail goes to one processor, which keeps its
        state and applies its moves in order, and two processors rarely work on one game at once
        (when they do, the optimistic commit of the second conflicts and it is done again)."""
        k, n = self.share
        return [inbound_id for inbound_id, game, _at in heads
                if (_share_of(game) if game else inbound_id) % n == k]

    def _take_round(self, heads: list[tuple[int, str | None, datetime | None]], limit: int) -> int:
        """Up to ``limit`` messages of a fair round shared with other workers (a round of each):
        first those of the games homed here (whose states this worker keeps;
        ``pbem.processing.homes``), each claim the oldest still free (those another worker holds,
        or has done meanwhile, are passed over in the same statement); when the round holds none
        of those free, the oldest free one of any game, one only, so that the next round can bring
        this worker's own again. (A worker held back for a moment finds its games waiting for it,
        not replayed elsewhere, unless the others have nothing else to do.)

        Another worker's game is left to it for ``HANDOFF_SECONDS`` after its mail came in: the
        database told its home of the mail at once (``Store.watch_inbound``), and the home has the
        game's state (taken here at once, three moves in four at four workers were replayed from
        their records: the slowest moves of a quiet server). This worker looks again when that
        time is up (``look_again``), and takes the mail if it is still there: its home is busy,
        or gone."""
        self.look_again = None
        own_games = self.homes.own(game for _id, game, _at in heads)
        own = [inbound_id for inbound_id, game, _at in heads if game in own_games]
        taken = 0
        while taken < min(len(own), limit) and self._process(*own) is not None:
            taken += 1
        if not taken and len(own) < len(heads):
            since = self.clock.now() - timedelta(seconds=HANDOFF_SECONDS)
            ready = [inbound_id for inbound_id, game, at in heads
                     if game in own_games or at is None or at <= since]
            left = [at for _id, game, at in heads if game not in own_games and at is not None and at > since]
            if left:
                self.look_again = max((min(left) - since).total_seconds(), 0.01)
            if ready and self._process(*ready) is not None:
                taken = 1
        return taken

    def read(self, inbound: Inbound) -> tuple[IncomingMail, LimitExceeded | None]:
        """The mail, and the first limit it exceeds (then only its header block is read)."""
        own = [self.config.address]
        if inbound.original_size is not None:  # only the header of an oversized mail was kept
            exceeded: LimitExceeded | None = LimitExceeded(
                "max_message_bytes", inbound.original_size, self.config.max_message_bytes)
        else:
            exceeded = check_limits(inbound.raw, self.config.limits, self.config.max_message_bytes)
        if exceeded is not None:
            return read_headers(inbound.raw, own_addresses=own,
                                envelope_from=inbound.envelope_from), exceeded
        return read_mail(inbound.raw, own_addresses=own, envelope_from=inbound.envelope_from), None

    def _timed_read(self, inbound: Inbound) -> tuple[tuple[IncomingMail, LimitExceeded | None], float]:
        """``read``, and the thread CPU it took in ms (logged with each message)."""
        started = time.thread_time()
        return self.read(inbound), (time.thread_time() - started) * 1000

    def process_one(self, inbound: Inbound) -> str | None:
        """Process this message; None when it could not be claimed (see ``Tx.claim_inbound``)."""
        processed = self._process(inbound.id, stored=inbound)
        return processed[1] if processed else None

    def _process(self, inbound_id: int, *later: int, stored: Inbound | None = None
                 ) -> tuple[int, str] | None:
        """One message in one transaction that claims it, then reads it (a message another worker
        holds is not read twice). With ``later`` candidates, the oldest of all that can be claimed
        (``Tx.claim_inbound``). The message processed and its outcome, or None when none could be
        claimed.

        With one write lock for everybody (SQLite), the message is read before the transaction. With
        ``optimistic`` (several processor processes on SQLite) it is then processed first outside
        the lock (``Store.optimistic``), on a snapshot, and committed under the lock only if nothing
        it read changed meanwhile, so the processors work side by side and the intake's commits
        (and their ``250``) do not wait for the processing. When that attempt conflicts, or does
        what cannot be held back, it left nothing behind and the message is processed again in an
        ordinary transaction. ``stored``: the message as the caller read it (else it is read here).
        """
        started = time.perf_counter()
        misses = self.cache.misses
        now = self.clock.now()
        done = _Progress()
        ahead = None
        attempt = "-"
        if self.store.one_writer and not later:
            # Read the mail before the write lock is taken: meanwhile the intake can commit (a
            # stored message does not change, so what was read is what is claimed).
            if stored is None or stored.id != inbound_id:
                stored = self.store.get_inbound(inbound_id)
            if stored is not None and stored.status == "pending":
                with contextlib.suppress(Exception):  # read again below, where a failure is marked
                    ahead = stored, *self._timed_read(stored)
        if ahead is not None and self.optimistic:
            attempt = self._attempt(inbound_id, ahead, now, done)
            if attempt == "nothing":
                return None
        if attempt != "committed":
            done = _Progress()
            try:
                with self.store.transaction(durable=False) as tx:
                    if not self._apply(tx, done, inbound_id, later, ahead, now):
                        return None
            except _AuthAbort as abort:
                assert done.inbound is not None  # raised only once the message was claimed and read
                outcome = self._auth_failed(done.inbound, done.mail, abort, now)
                if outcome is None:
                    return None
                done.outcome, done.game_id, done.touched = outcome, abort.failure.game_id, {}
            except StoreUnavailableError:
                raise  # nothing changed: the message stays pending for the next pass
            except Exception as exc:  # a bug must not stop the server or lose the message
                if done.inbound is None:
                    raise  # the claim itself failed: nothing to mark
                log.exception("inbound %s failed", done.inbound.id)
                done.outcome, done.game_id, done.touched = f"failed: {type(exc).__name__}: {exc}", None, {}
                with self.store.transaction() as tx:
                    if not tx.claim_read(done.inbound.id):  # meanwhile taken by another worker
                        return None
                    tx.mark_inbound(done.inbound.id, "failed", done.outcome[:500],
                                    sender=done.mail.from_addr or None, now=now)
        for gid, (row, state) in done.touched.items():
            self.cache.put(gid, row.record, state)
        failpoints.hit("after-commit")
        return self._logged(done, attempt, self.cache.misses - misses,
                            (time.perf_counter() - started) * 1000)

    def _process_together(self, ids: list[int], stored: dict[int, Inbound]) -> int:
        """A fair round of one processor alone on SQLite: every message read first, outside the
        write lock, then applied several to a transaction, each claimed, handled and marked as
        ``_process`` does. One COMMIT for several messages instead of one each: the WAL pages they
        share (the inbound, outbound and game tables' indexes) are written once, and the lock
        changes hands once. A transaction takes no more messages once it has held the lock for
        ``TOGETHER_SECONDS``, so that the intake's commits (and the ``250`` each sender waits for)
        are not held back long. The replies do not wait longer: the sender is woken once a round
        anyway (``Daemon._drain``).

        A failure keeps its isolation: when a message raises (a bug, a failed authentication), its
        transaction is rolled back whole and each of its messages is done again in a transaction
        of its own (``_process``), which marks only that one failed; the database unavailable
        leaves them all pending, as it leaves one. The state cache
        holds each game's state as soon as its message was applied, so that a later message of the
        round starts from it, and forgets those games again if the transaction is rolled back."""
        now = self.clock.now()
        aheads: list[tuple[int, _Ahead]] = []
        alone: list[int] = []  # not stored, not pending or not readable: done alone, as before
        for inbound_id in ids:
            inbound = stored.get(inbound_id)
            ahead = None
            if inbound is not None and inbound.status == "pending":
                with contextlib.suppress(Exception):
                    ahead = inbound, *self._timed_read(inbound)
            if ahead is None:
                alone.append(inbound_id)
            else:
                aheads.append((inbound_id, ahead))
        taken = 0
        while aheads:
            taken += self._together(aheads, stored, now)
        return taken + sum(self._process(inbound_id, stored=stored.get(inbound_id)) is not None
                           for inbound_id in alone)

    def _together(self, aheads: list[tuple[int, _Ahead]], stored: dict[int, Inbound],
                  now: datetime) -> int:
        """One transaction of ``_process_together``: takes messages off the front of ``aheads``
        until the time is up; the number processed."""
        part: list[int] = []
        finished: list[tuple[_Progress, int, float]] = []  # each message, games replayed, its ms
        cached: set[str] = set()
        try:
            with self.store.transaction(durable=False) as tx:
                opened = time.perf_counter()
                while aheads and (not part or time.perf_counter() - opened < TOGETHER_SECONDS):
                    inbound_id, ahead = aheads.pop(0)
                    part.append(inbound_id)
                    started, misses = time.perf_counter(), self.cache.misses
                    done = _Progress()
                    if not self._apply(tx, done, inbound_id, (), ahead, now):
                        continue
                    for gid, (row, state) in done.touched.items():
                        self.cache.put(gid, row.record, state)
                        cached.add(gid)
                    finished.append((done, self.cache.misses - misses,
                                     (time.perf_counter() - started) * 1000))
        except Exception as exc:
            for gid in cached:
                self.cache.forget(gid)
            if isinstance(exc, StoreUnavailableError):
                raise  # nothing changed: the messages stay pending for the next pass
            log.debug("%d messages in one transaction: %s raised; each is done again alone",
                      len(part), type(exc).__name__)
            return sum(self._process(inbound_id, stored=stored.get(inbound_id)) is not None
                       for inbound_id in part)
        failpoints.hit("after-commit")
        for done, replayed, elapsed in finished:
            self._logged(done, "together", replayed, elapsed)
        return len(finished)

    def _logged(self, done: _Progress, attempt: str, replayed: int, elapsed: float) -> tuple[int, str]:
        inbound, mail = done.inbound, done.mail
        assert inbound is not None
        log.info("message id=%s msgid=%s from=%s game=%s outcome=%s replayed=%d attempt=%s "
                 "read_ms=%.1f ms=%.1f", inbound.id, mail.message_id or "-", mail.from_addr or "-",
                 done.game_id or "-", done.outcome, replayed, attempt, done.read_ms, elapsed)
        return inbound.id, done.outcome

    def _attempt(self, inbound_id: int, ahead: _Ahead, now: datetime, done: _Progress) -> str:
        """The optimistic attempt (see ``_process``): "committed", "nothing" (the message cannot be
        claimed), or why it must be done again under the lock ("conflict", "needs-lock", or
        "raised": the ordinary transaction meets the same error and handles it)."""
        try:
            with self.store.optimistic(durable=False) as tx:
                if not self._apply(tx, done, inbound_id, (), ahead, now):
                    return "nothing"
        except Conflict as exc:
            log.debug("inbound %s: optimistic attempt conflicted: %s", inbound_id, exc)
            return "conflict"
        except NeedsLock as exc:
            log.debug("inbound %s: optimistic attempt needs the lock: %s", inbound_id, exc)
            return "needs-lock"
        except StoreUnavailableError:
            raise  # nothing changed: the message stays pending for the next pass
        except Exception as exc:
            log.debug("inbound %s: optimistic attempt raised %s: %s", inbound_id, type(exc).__name__, exc)
            return "raised"
        return "committed"

    def _apply(self, tx: Tx, done: _Progress, inbound_id: int, later: tuple[int, ...],
               ahead: _Ahead | None, now: datetime) -> bool:
        """Claim, read and handle the message inside ``tx``, and mark it; what is known so far is
        kept in ``done`` (also when this raises). False when no message could be claimed."""
        if ahead is not None and not later:  # read before the transaction: not read again
            inbound = done.inbound = ahead[0] if tx.claim_read(inbound_id) else None
        else:
            inbound = done.inbound = tx.claim_inbound(inbound_id, *later)
        if inbound is None:
            return False
        failpoints.hit("claimed")
        (done.mail, exceeded), done.read_ms = ahead[1:] if ahead else self._timed_read(inbound)
        with speaking(sender_language(tx, done.mail, self.config)):  # the sender's answer
            done.outcome, done.game_id, done.touched = self._handle(tx, inbound, done.mail, now, exceeded)
        status = "ignored" if done.outcome.startswith("ignored") else "done"
        tx.mark_inbound(inbound.id, status, done.outcome[:500], sender=done.mail.from_addr or None,
                        game_id=done.game_id, now=now)
        return True

    def _auth_failed(self, inbound: Inbound, mail: IncomingMail, abort: _AuthAbort,
                     now: datetime) -> str | None:
        failure = abort.failure
        with self.store.transaction() as tx:
            if not tx.claim_read(inbound.id):  # the first transaction's claim ended with it
                return None
            tx.mark_inbound(inbound.id, "ignored", f"ignored: authentication failed for {failure.game_id}",
                            sender=mail.from_addr or None, game_id=failure.game_id, now=now)
            row = tx.get_game(failure.game_id)
            seat = next((s for s in row.seats if s.seat == failure.seat), None) if row else None
            if row and seat and tx.claim_notice(f"auth:{row.id}:{seat.seat}", now,
                                                self.config.auth_notice_interval_seconds):
                with speaking_to(tx, seat.email, self.config.language):
                    planned = self._auth_notice(row, seat, mail)
                self.outgoing.deliver(tx, planned, row, None, now)
        return f"ignored: authentication failed for {failure.game_id}"

    @staticmethod
    def _auth_notice(row: GameRow, seat: Seat, mail: IncomingMail) -> PlannedMail:
        return PlannedMail(
            to=seat.email, seat=seat.seat, game_id=row.id, kind=NOTICE,
            headline=_("A mail about {game} from {sender} was not accepted").format(
                game=row.id, sender=mail.from_addr or _("an unknown sender")),
            sections=[Section(lines=[
                _("It was not applied: moves and game commands for your seat ({seat}) are accepted "
                  "only from your registered address together with your token.").format(
                    seat=seat_label(row.game, seat.seat)),
                _("If it was you: reply to this mail (its Reply-To carries your token). If it was not "
                  "you, nothing changed."),
                _("You will get at most one such notice per hour.")])])

    # --- one mail ----------------------------------------------------------------------------------
    def _handle(self, tx: Tx, inbound: Inbound, mail: IncomingMail, now: datetime,
                exceeded: LimitExceeded | None = None):
        if mail.auto:
            if mail.auto == "bounce":
                return self._bounce(tx, inbound, mail, now)
            return f"ignored: {mail.auto}", None, {}
        if not mail.from_addr:
            return "ignored: no From address", None, {}
        for check in hooks.SENDER_CHECK:
            reason = check(tx, mail)
            if reason:
                return f"ignored: {reason}", None, {}
        ctx = self._context(tx, mail, now)
        ctx.received = inbound.received_at
        if exceeded is not None:
            return self._over_limit(ctx, inbound, exceeded)
        turn = mail.json_turn
        if isinstance(turn, dict) and str(turn.get("format", "")).startswith("pbem-record/"):
            turn = None  # our own game record, re-attached by the client's reply: not a turn file
        # Lines past the most a mail may hold are not even parsed (thousands of junk lines would
        # each cost a search for similar command words); the reply says how many were left.
        most = self.config.limits.max_commands
        lines = without_signed_name(mail.command_lines[:most], mail.from_addr, mail.from_name)
        if turn is not None:
            results = parse_json(turn)
        else:  # the subject is read only where it adds a command (see read_commands)
            lines, results = read_commands(lines, subject_first=mail.subject_is_command,
                                           in_game_reply=ctx.context_game is not None)
        if mail.json_error:
            results = [CommandError("(JSON turn file)", mail.json_error)]
        def plain() -> list:
            """Read again without the game context: there any bare line passes for a move. (Only
            when asked: it looks for command words near each bare line, and most mails never ask.)"""
            return results if turn is not None else parse_text(lines, in_game_reply=False)

        if mail.dsn_subject and turn is None and not any(isinstance(r, Command) for r in plain()):
            # A report's subject and no command word anywhere: a plain-text bounce.
            return self._bounce(tx, inbound, mail, now)
        holder = mail.from_addr == ctx.context_seat_email  # the token's own player: no stranger
        if not holder and not _looks_meant(plain()) and self._stranger(ctx) and not self._old_token(ctx):
            # Junk from an address that plays no game is not answered: it is spam or carries a
            # forged sender. (Its bare lines are not taken for moves, whatever game a token or
            # subject names.) If it carried a seat's token, that seat is told as for any failed
            # authentication, at its own address.
            if ctx.context_game and ctx.context_seat:
                raise _AuthAbort(AuthFailed(ctx.context_game, ctx.context_seat), mail.from_addr)
            return "ignored: nothing understood, from an address that plays no game", None, {}
        for hook in hooks.MAIL_READ:
            hook(ctx)
        unread = max(len(mail.command_lines) - most, 0) if turn is None else len(results) - most
        if unread > 0:
            ctx.reply(Section(title=_("Too many commands"), lines=[
                ngettext("Your mail has {total} command lines; the first {read} were read, the other "
                         "{unread} was not. Send the rest in another mail.",
                         "Your mail has {total} command lines; the first {read} were read, the other "
                         "{unread} were not. Send the rest in another mail.", unread).format(
                    total=most + unread, read=most, unread=unread)]))
            results = results[:most]
        if not results:
            self._nothing_found(ctx)
        outcomes = []
        for item in results:
            if isinstance(item, CommandError):
                ctx.reply(Section(lines=[*quoted(item.line.strip(), most=QUOTED_LINES), item.message]),
                          ctx.context_game,
                          headline=_("Not understood: {line}").format(line=item.line.strip()[:60]))
                outcomes.append("error")
                continue
            first_new, said = len(ctx.reply_sections), len(ctx.reply_headlines)
            try:
                HANDLERS[item.verb](ctx, item)
                outcomes.append(item.verb)
                if item.note and item.verb not in NOTE_VERBS:
                    ctx.reply(Section(lines=[_("I did not read these lines as commands:"),
                                             *(f"  {line}" for line in item.note)]))
                if len(results) > 1 and len(ctx.reply_sections) > first_new:
                    first = ctx.reply_sections[first_new]
                    first.lines[:0] = quoted(item.line.strip(), most=QUOTED_LINES)
                    if len(ctx.reply_headlines) == said and first.title:
                        # every command's answer is in the first line (the inbox preview), also
                        # one that came as a titled section after another command's answer
                        ctx.reply_headlines.append(first.title)
                        first.title = None
            except CommandFailed as failed:
                # The reason opens the mail ("Not done: ..."); said again under the quote only when
                # the first line is about something else (another command, a headline of its own).
                again = [failed.message] if failed.headline or len(results) > 1 else []
                ctx.reply(Section(lines=[*quoted(item.line.strip(), most=QUOTED_LINES), *again]),
                          item.game or ctx.context_game,
                          headline=failed.headline or _("Not done: {reason}").format(reason=failed.message))
                for extra in failed.extra:
                    ctx.reply(extra)
                outcomes.append(f"{item.verb} refused")
            except AuthFailed as failure:
                raise _AuthAbort(failure, mail.from_addr) from None
        self._send_all(ctx, inbound)
        game_id = ctx.reply_games[0] if ctx.reply_games else ctx.context_game
        outcome = "; ".join(ctx.outcomes) or ", ".join(outcomes) or "nothing"
        return outcome, game_id, ctx.touched

    def _context(self, tx: Tx, mail: IncomingMail, now: datetime) -> MailContext:
        ctx = MailContext(config=self.config, tx=tx, now=now, mail=mail, secret=self.secret,
                          cache=self.cache, token_for=self.token_for)
        self._find_context(ctx)
        return ctx

    def _stranger(self, ctx: MailContext) -> bool:
        """The sender plays no game, watches none and moderates nothing. (A token proves nothing
        about the sender: it may be someone else's, copied into a forged mail.)"""
        email = ctx.mail.from_addr
        if email and email == ctx.context_seat_email:  # holds the seat of the token: plays a game
            return False
        return (email not in self.config.moderators and not ctx.tx.games_for_email(email)
                and not ctx.tx.games_observed(email))

    def _old_token(self, ctx: MailContext) -> bool:
        """The mail carries an earlier token of a seat of the game its subject names, from the
        address that seat's player moved away from (``set address``): the same person, who is told
        why nothing happened rather than ignored. (A player a moderator replaced is not answered.)"""
        loaded = ctx.load(ctx.context_game) if ctx.context_game else None
        if loaded is None or retired_seat(ctx, loaded[0], mail_tokens(ctx)) is None:
            return False
        return any(action.get("action") == "address" and action.get("old") == ctx.mail.from_addr
                   for action in loaded[0].record.get("actions") or [])

    def _bounce(self, tx: Tx, inbound: Inbound, mail: IncomingMail, now: datetime):
        """Never answered; the addresses it reports failed are recorded, and the features decide
        what our mail bouncing means for the games (``hooks.BOUNCED``)."""
        for address in mail.bounce_for:
            tx.record_bounce(address, now, f"bounce in inbound {inbound.id}")
        ctx = self._context(tx, mail, now)
        if mail.bounce_for:
            for hook in hooks.BOUNCED:
                hook(ctx, mail.bounce_for)
        self.outgoing.queue_planned(ctx)
        return "ignored: bounce", None, ctx.touched

    def _over_limit(self, ctx: MailContext, inbound: Inbound, exceeded: LimitExceeded):
        """Stored as ignored with the reason; a player (an address with a game) gets one short reply
        naming the limit (at most one per address and notice interval, so a loop cannot feed on it)."""
        reason = f"ignored: over the limit {exceeded.name} ({exceeded.value} > {exceeded.limit})"
        email = ctx.mail.from_addr
        if self._stranger(ctx) or not ctx.tx.claim_notice(f"limit:{email}", ctx.now,
                                                      self.config.auth_notice_interval_seconds):
            return reason, None, {}
        loaded = ctx.load(ctx.context_game) if ctx.context_game else None
        plays = loaded is not None and any(seat.email == email for seat in loaded[0].seats)
        sentence = exceeded.sentence()
        ctx.reply(Section(title=_("Your mail was not read"), lines=[sentence[0].upper() + sentence[1:]]),
                  ctx.context_game if plays else None)  # in that game's thread if it is theirs
        self._send_all(ctx, inbound)
        return reason + "; sender told", ctx.context_game, ctx.touched

    def _find_context(self, ctx: MailContext) -> None:
        """The game a reply is about: from a valid token, else from the subject tag; and the move
        it was meant for, from the Reply-To key, else from the mail it answers."""
        mail = ctx.mail
        for tag in [*mail.plus_tokens, mail.body_token]:
            if not tag:
                continue
            token, move = reply_key(tag)
            found = ctx.tx.seat_by_token_hash(token_hash(token))
            if found:
                ctx.context_game, ctx.context_seat = found[0], found[1].seat
                ctx.context_seat_email = found[1].email
                if move is not None:
                    ctx.expected_ply[found[0]] = move - 1
                break
        if ctx.context_game is None and mail.subject_tag and re.match(r"^[a-z]+-\d+$", mail.subject_tag):
            tag = mail.subject_tag.lower()
            if tag.split("-")[0] in _game_prefixes():
                ctx.context_game = tag
            else:  # another thing with an id (a tournament): its lines are commands, never moves
                ctx.context_tag = tag
        for ref in [mail.in_reply_to, *reversed(mail.references)]:
            match = _OUR_ID.match(ref or "")
            if match:
                ctx.expected_ply.setdefault(match.group(1).lower(), int(match.group(2)))
                break
        if ctx.context_game and mail.subject_ply is not None:
            ctx.expected_ply.setdefault(ctx.context_game, mail.subject_ply)

    # --- mail out ----------------------------------------------------------------------------------
    def _nothing_found(self, ctx: MailContext) -> None:
        """An empty reply to a game mail is answered in that game's thread, with the board when it
        is the sender's move, so that replying to the answer works."""
        loaded = ctx.load(ctx.context_game) if ctx.context_game else None
        if loaded is None:
            ctx.reply(Section(lines=[_("Send 'help' for the list of commands, or 'games' for yours.")]),
                      headline=_("I found no command in your mail"))
            return
        row, state = loaded
        mine = next((s for s in row.seats if s.email == ctx.mail.from_addr), None)
        viewer = mine.seat if mine else None
        if row.status == "active" and viewer is not None and state.to_move == viewer:
            ctx.reply(board_section(state, viewer), row.id,
                      headline=_("I found no move in your mail; it is your move (move {number})").format(
                          number=state.ply + 1))
        else:
            ctx.reply(Section(lines=[_("Send 'board {id}' for the board or 'help' for the commands."
                                       ).format(id=row.id)]),
                      row.id, headline=_("I found no command in your mail about {id}").format(id=row.id))

    def _send_all(self, ctx: MailContext, inbound: Inbound) -> None:
        """The answer to the sender (in the game's thread when it is about one game), then every mail
        the commands planned, each as its recipient chose."""
        mail = ctx.mail
        if ctx.reply_sections or ctx.reply_headlines:
            game_id = ctx.reply_games[0] if len(ctx.reply_games) == 1 else None
            row, state = ctx.touched.get(game_id or "", (None, None))
            if row is None and game_id:
                loaded = ctx.load(game_id)
                row, state = loaded if loaded else (None, None)
            seat = next((s.seat for s in row.seats if s.email == mail.from_addr), None) if row else None
            kinds = ctx.reply_kinds - {REPLY}
            kind = REPLY if REPLY in ctx.reply_kinds or not kinds else (TURN if TURN in kinds else CONFIRM)
            # one line for several answers: "Applied: ... is next; Your message went to ..."
            parts = ctx.reply_headlines
            headline = "; ".join([h.rstrip(".") for h in parts[:-1]] + parts[-1:]) or _("Your commands")
            # One thread per game: an answer about no game to a mail of a game's thread (games,
            # vacation, set ...) starts a thread of its own; an answer about another game than the
            # one answered joins that game's thread, not the answered one's.
            own_thread = ctx.context_game is not None and ctx.context_game != (row.id if row else None)
            subject = None
            if row is None:
                subject = (f"Re: {mail.clean_subject}" if mail.clean_subject and not mail.subject_is_command
                           and not own_thread else "[pbem] " + subject_phrase(headline))
            planned = PlannedMail(to=mail.from_addr, headline=headline, sections=ctx.reply_sections,
                                  game_id=row.id if row else None, seat=seat, kind=kind,
                                  subject=subject, answering=mail, own_thread=own_thread,
                                  attach_record=ctx.attach_record)
            self.outgoing.deliver(ctx.tx, planned, row, state, ctx.now)
        self.outgoing.queue_planned(ctx)
