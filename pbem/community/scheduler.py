"""The scheduler: reminders before deadlines, what happens at them, and recovery after an outage.

``run_once()`` is called every minute or so (by the daemon's scheduler thread, or by hand). It keeps
no state of its own between runs: everything it needs is in the store, so a restarted scheduler - or a
second one - continues where the last one stopped.

Exactly once: every action claims a once-key (``Tx.claim_once``) in the same transaction that changes
the game and queues the mails, e.g. ``remind:ac-1:12.13:48``, ``digest:bob@x:2026-11-22``,
``grace:ac-1:12.13``, ``forfeit:ac-1:12.13`` (``PLY.TURN``: the turn counts clock starts, so a ply
that comes back after an undo gets fresh keys). A crash before the commit leaves neither the key nor
the mails, so the next run does it; after the commit the key stops any repeat. ``record["clock"]``
tells the same story in readable form (reminders sent, grace given) and is committed with it.

Reminders: at most one reminder mail per player per day (the player's local day), listing every game
where they are to move, sent when any of those games reaches a reminder time. A reminder that falls on a
day whose digest already went out is covered when that digest listed the game, otherwise it waits for the
next day's digest. Players on vacation get none. Grace notices, forfeits and moderator calls are events,
not reminders: they go out when they happen.

Allowance: when a player's time is up and they have days of their yearly vacation allowance left
(``pbem.clocks.allowance``), a whole day is spent first (``spend:ac-1:12.13:DEADLINE``), from the
deadline missed: none of their clocks run in it, in any game of theirs, and a game of theirs that ran
out within it is covered by it. Only with no day left does the policy below apply.

Forfeits: in a game that can go on without the late player (Space Truckin' with three or more players
still in it) the player is dropped - a ``drop`` entry in the record, so replaying gives the same position -
and the clock starts for the next seat to move; otherwise the game ends and the others win.

Faults of the surroundings (the database away, its disk full): an action that meets one is tried
once more at once (a connection the database dropped fails its first use only); if it fails again
the run stops there and raises it, so the daemon's fault tracker (``pbem.faults``) says it in one
line instead of a traceback for every game left, and the run after the fault's end does the rest
(everything is once-keyed). Anything else is a bug of one game's or one player's: logged with its
traceback, and the others go on.

The wall clock stepping back (an NTP correction) repeats nothing: a deadline, a reminder and a
digest passed again are found claimed by their once-keys, and the heartbeat below is not moved
back, so the time until the clock has caught up is no outage either.

Kept mail: with ``[server] keep_mail_days`` the scheduler drops the raw mail of messages finished
longer ago once a day (``prune-mail:DATE``), keeping their rows (``pbem.store.pruning``).

Outages: the scheduler writes a heartbeat to ``meta`` on every run. When the last one is older than the
threshold, the server was down (or the scheduler stuck), and players could not have known their moves
were not being read: every running deadline is extended by the outage, once (the key names the stale
heartbeat), instead of everyone forfeiting in the first minute after the restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from engine import EngineError, State, get_game
from pbem.clock import Clock, SystemClock
from pbem.clocks import allowance
from pbem.community import challenges
from pbem.community import deadlines as dl
from pbem.config import Config
from pbem.faults import is_fault, retry_once
from pbem.i18n import _, ngettext, speaking_to
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.computer_seats import is_computer
from pbem.processing.context import EVENT, NOTICE, TURN, MailContext, PlannedMail, StateCache
from pbem.processing.gamemail import (
    board_section,
    game_names,
    players_line,
    result_headline,
    result_section,
    scores_line,
    who,
)
from pbem.processing.outgoing import Outgoing
from pbem.reading.incoming import IncomingMail
from pbem.record import iso, replay_record
from pbem.store.base import GameRow, Store, Tx
from pbem.store.secret import server_secret

log = logging.getLogger("pbem.community.scheduler")

HEARTBEAT = "scheduler.heartbeat"
DIGEST_HOUR = 7  # local time from which a player's daily digest goes out
LAST_OUTAGE = "scheduler.last_outage"
PRUNE_PER_RUN = 20_000  # messages whose raw mail one run prunes at most (some seconds on SQLite)


@dataclass
class RunReport:
    """What one run did, for logs and tests."""

    outage: timedelta | None = None
    extended: int = 0
    graces: int = 0
    spent: int = 0  # days of vacation allowance spent for late players
    forfeits: int = 0
    drops: int = 0  # forfeits after which the game went on without the late player
    notified: int = 0
    digests: int = 0
    reminders: int = 0
    daily: int = 0  # daily digests of players who chose ``set notify digest``
    expired: int = 0  # open challenges nobody filled in time
    pruned: int = 0  # messages whose raw mail ``[server] keep_mail_days`` dropped
    mails: int = 0
    errors: int = 0

    def __bool__(self) -> bool:
        """True when the run did something worth a log line (and the sender a wake-up)."""
        return any((self.outage, self.mails, self.errors))


class Scheduler:
    def __init__(self, config: Config, store: Store, clock: Clock | None = None, *,
                 secret: bytes | None = None) -> None:
        self.config = config
        self.store = store
        self.clock = clock or SystemClock()
        self._secret = secret
        self._outgoing: Outgoing | None = None
        self._queued = 0  # mails queued in committed or pending transactions, for RunReport.mails
        self._prune_more = False  # the last prune stopped at PRUNE_PER_RUN: go on in the next run

    @property
    def outgoing(self) -> Outgoing:
        """The server's mail composition (tokens in Reply-To, threading, footers), built on first
        use so that a scheduler with nothing to say never touches the secret file."""
        if self._outgoing is None:
            secret = self._secret if self._secret is not None else server_secret(
                self.store, self.config.data_dir)
            self._outgoing = Outgoing(self.config, secret)
        return self._outgoing

    # --- the run -------------------------------------------------------------------------------------

    def run_once(self) -> RunReport:
        now = self.clock.now()
        report = RunReport()
        queued_before = self._queued
        try:
            retry_once(lambda: self._check_outage(now, report))
        except Exception as exc:
            if is_fault(exc):
                raise  # the database is away: the daemon's fault tracker says it once
            log.exception("scheduler: outage check failed")
            report.errors += 1
        with self.store.transaction() as tx:
            due = [row.id for row in tx.games_due(now)]
        for game_id in due:
            self._guarded(report, f"deadline of {game_id}", self._deadline, game_id, now, report)
        with self.store.transaction() as tx:
            unfilled = challenges.expired(tx, now)
        for game_id in unfilled:
            self._guarded(report, f"expiry of {game_id}", self._expire, game_id, now, report)
        for extra in hooks.SCHEDULED:  # e.g. tournaments (pbem.tournaments.steps)
            try:
                extra(self, now, report)
            except Exception:
                log.exception("scheduler: %s failed", getattr(extra, "__module__", extra))
                report.errors += 1
        hours = [h for h in self.config.deadlines.reminders_hours if h > 0]
        if hours:
            # A clock that stops at night and at weekends runs 16 hours a weekday: N hours of it
            # take at most 1.5 N hours and a weekend of wall time (its reminders count clock time);
            # every other game is due for one within N hours of the wall clock, as always.
            ahead = timedelta(hours=max(hours) * 1.5) + timedelta(days=2)
            soonest = now + timedelta(hours=max(hours))
            with self.store.transaction() as tx:
                soon = [row for row in tx.games_due(now + ahead) if row.deadline_at is not None and (
                        row.deadline_at <= soonest or dl.counts_clock_time(row))]
            # Only the players with a reminder due in one of these games are looked at again (in a
            # transaction of their own): with many games, most are near a deadline and already
            # reminded, and a run once a minute must not read every such player's games again.
            emails = sorted({e for row in soon
                             if (e := dl.seat_email(row, row.to_move)) and self._due_reminders(row, now)})
            for email in emails:
                self._guarded(report, f"reminders for {email}", self._remind, email, now, report)
        with self.store.transaction() as tx:
            waiting = tx.digest_addresses()
        for email in waiting:
            self._guarded(report, f"daily digest for {email}", self._daily, email, now, report)
        if self.config.keep_mail_days:
            try:
                retry_once(lambda: self._prune_mail(now, report))
            except Exception as exc:
                if is_fault(exc):
                    raise
                log.exception("scheduler: pruning the kept mail failed")
                report.errors += 1
        report.mails = self._queued - queued_before
        at = now.isoformat(timespec="seconds")
        if report:
            log.info("scheduler: ran at %s: %s", at, report)
        else:
            log.debug("scheduler: ran at %s: nothing due", at)
        return report

    def _guarded(self, report: RunReport, what: str, action: Any, *args: Any) -> None:
        """One game's or one player's trouble must not stop the others' deadlines; a fault of the
        surroundings, tried once more, stops the run (see the module docstring)."""
        queued = self._queued

        def attempt() -> None:
            self._queued = queued  # what a failed attempt queued was rolled back with it
            with self.store.transaction() as tx:
                action(tx, *args)

        try:
            retry_once(attempt)
        except Exception as exc:
            self._queued = queued
            if is_fault(exc):
                raise
            log.exception("scheduler: %s failed", what)
            report.errors += 1

    def in_context(self, report: RunReport, what: str, action: Callable[[MailContext], None],
                   now: datetime) -> None:
        """``action(ctx)`` in a transaction of its own with a mail context like a moderator's
        command line has (the server's address as sender); the mails it plans are queued with it."""
        def run(tx: Tx) -> None:
            ctx = MailContext(config=self.config, tx=tx, now=now,
                              mail=IncomingMail(from_addr=self.config.address),
                              secret=self.outgoing.secret, cache=StateCache(),
                              token_for=self.outgoing.token_for)
            action(ctx)
            for planned in ctx.planned:
                row, state = ctx.touched.get(planned.game_id or "", (None, None))
                self._send(tx, planned, row, state, now)
        self._guarded(report, what, run)

    # --- kept mail -------------------------------------------------------------------------------------

    def _prune_mail(self, now: datetime, report: RunReport) -> None:
        """``[server] keep_mail_days``: the raw mail of what finished before then goes, once a day
        (``pbem.store.pruning``). At most ``PRUNE_PER_RUN`` messages a run, so the deadlines of
        this run never wait long behind it: a backlog (the first prune of a server with years of
        mail) goes on in the runs after, a minute apart, until it is done."""
        if not self._prune_more:
            with self.store.transaction() as tx:
                if not tx.claim_once(f"prune-mail:{now.date()}", now):
                    return
        before = now - timedelta(days=self.config.keep_mail_days or 0)
        pruned = self.store.mail_pruning().prune(before, now, limit=PRUNE_PER_RUN)
        done = pruned.received + pruned.sent
        self._prune_more = done >= PRUNE_PER_RUN
        report.pruned += done
        if done:
            log.info("scheduler: %s (keep_mail_days = %d)", pruned.line(), self.config.keep_mail_days)

    # --- outages ---------------------------------------------------------------------------------------

    def _check_outage(self, now: datetime, report: RunReport) -> None:
        threshold = timedelta(minutes=self.config.deadlines.outage_threshold_minutes)
        with self.store.transaction() as tx:
            beat = tx.get_meta(HEARTBEAT)
            last = datetime.fromisoformat(beat) if beat else None
            if last is not None and now - last > threshold and tx.claim_once(f"outage:{beat}", now):
                gap = now - last
                for row in tx.active_games():
                    started = (row.record.get("clock") or {}).get("started")
                    if row.deadline_at is None or (started and datetime.fromisoformat(
                            started.replace("Z", "+00:00")) > last):
                        continue  # no clock, or a turn that began after the outage (pbem process)
                    if dl.outage(row, last, now):
                        tx.save_game(row)
                        report.extended += 1
                tx.set_meta(LAST_OUTAGE, f"{beat} {now.isoformat()}")
                report.outage = gap
                log.warning("scheduler: no run since %s (%s): extended %d deadlines by the outage",
                            beat, gap, report.extended)
            if last is None or now > last:
                tx.set_meta(HEARTBEAT, now.isoformat())

    # --- deadlines -------------------------------------------------------------------------------------

    def _deadline(self, tx: Tx, game_id: str, now: datetime, report: RunReport) -> None:
        row = tx.get_game(game_id, for_update=True)
        if row is None or row.status != "active" or row.deadline_at is None or row.deadline_at > now:
            return  # moved or re-timed since the list was read
        seat = row.to_move
        ply = dl.current_ply(row.record)
        control = dl.time_control(row.record, self.config.deadlines)
        state = replay_record(row.record, get_game(row.game))
        if seat is None or state.is_over:
            dl.stop_clock(row)
            tx.save_game(row)
            return
        clock = dl.clock(row)
        policy = dl.deadline_policy(control, self.config.moderators)
        if policy != control["policy"]:
            log.warning("scheduler: %s passed its deadline under policy '%s', but no moderators are "
                        "configured: applying '%s'", row.id, control["policy"], policy)
        spent, given = self._spend(tx, row, state, seat, now)
        report.spent += spent
        if given and row.deadline_at is not None and row.deadline_at > now:
            # the allowance bought time: the policy waits, and the mail about it is the reminder of
            # the reminders already due for the new deadline
            due = {h for h in self.config.deadlines.reminders_hours
                   if row.deadline_at - timedelta(hours=h) <= now}
            clock["reminded"] = sorted({*clock.get("reminded", []), *due}, reverse=True)
        elif policy == "notify":
            if tx.claim_once(f"notify:{row.id}:{dl.turn_key(row)}:{dl.generation(row)}", now):
                self._notify_moderators(tx, row, state, seat, now)
                report.notified += 1
            clock["expired"] = iso(now)
            dl.expire(row, now)
        elif (self.config.deadlines.grace_reminder and "grace" not in clock
              and tx.claim_once(f"grace:{row.id}:{dl.turn_key(row)}", now)):
            missed = row.deadline_at
            clock["grace"] = iso(now)
            # the final reminder is the last one: no 48- or 12-hour reminders for the grace period
            clock["reminded"] = sorted({*clock.get("reminded", []), *self.config.deadlines.reminders_hours},
                                       reverse=True)
            dl.grace(row, now)
            self._announce_grace(tx, row, state, seat, missed, now)
            report.graces += 1
        elif tx.claim_once(f"forfeit:{row.id}:{dl.turn_key(row)}", now):
            graced = "grace" in clock
            if self._drop(tx, row, state, seat, graced, now):
                report.drops += 1
            else:
                result = dl.forfeit(row, state.score().totals, seat, now)
                self._announce_forfeit(tx, row, state, seat, result, graced, now)
            report.forfeits += 1
        else:
            log.warning("scheduler: %s ply %d was forfeited before but is still running; clock stopped",
                        row.id, ply)
            clock["expired"] = iso(now)
            dl.expire(row, now)
        tx.save_game(row)

    def _spend(self, tx: Tx, row: GameRow, state: State, seat: str, now: datetime) -> tuple[int, bool]:
        """The late player's vacation allowance, before the deadline's policy: whole days, each from
        the deadline missed, in which none of their clocks run (in this game and every other game of
        theirs), as many as it take to bring the deadline past ``now`` while days are left (one,
        unless the scheduler was behind). A day already spent for another game that covers the
        deadline missed serves this game too. Returns (days spent, whether time was given); (0,
        False), with nothing changed, when no day is left or the seat is the computer's."""
        days_a_year = self.config.deadlines.vacation_days_per_year
        email = dl.seat_email(row, seat)
        if days_a_year <= 0 or email is None or is_computer(email):
            return 0, False
        settings = tx.get_player(email)
        before = dl.vacation_intervals(settings)
        current = dl.running(row)
        first = current is None or not current.spends
        spent, given, missed, until, left = 0, False, row.deadline_at, row.deadline_at, 0
        while row.deadline_at is not None and row.deadline_at <= now:
            late = row.deadline_at
            year = late.astimezone(dl.player_zone(settings)).year
            left = allowance.left(tx, email, year, days_a_year, settings)
            covering = max((end for start, end in map(dl.entry_interval, dl.allowance_spent(settings))
                            if start <= late < end), default=None)
            if covering is not None:  # spent when another game of theirs ran out: it stops this clock too
                until = covering
                dl.spend(row, now, late, until, left, days=0)
                given = True
                continue
            if left < 1 or not tx.claim_once(f"spend:{row.id}:{dl.turn_key(row)}:{iso(late)}", now):
                break
            day = allowance.spend_day(tx, email, settings, late, now, days_a_year)
            if day is None:
                break
            until, left = day
            dl.spend(row, now, late, until, left)
            spent, given = spent + 1, True
        if not given or missed is None or until is None:
            return 0, False
        for other in tx.games_for_email(email):
            to_move = other.status == "active" and dl.seat_email(other, other.to_move) == email
            if (other.id != row.id and to_move
                    and dl.retime_for_vacations(other, now, before, dl.vacation_intervals(settings))):
                tx.save_game(other)
        self._announce_spend(tx, row, state, seat, spent, missed, until, left, first, now)
        return spent, True

    def _expire(self, tx: Tx, game_id: str, now: datetime, report: RunReport) -> None:
        """An open challenge nobody filled in time is cancelled, once, and its players told."""
        row = tx.get_game(game_id, for_update=True)
        if row is None or row.status != "open" or not tx.claim_once(f"expire:{game_id}", now):
            return
        for planned in challenges.close(tx, row, now, "expired"):
            self._send(tx, planned, None, None, now)
        report.expired += 1

    def _drop(self, tx: Tx, row: GameRow, state: State, seat: str, graced: bool, now: datetime) -> bool:
        """A forfeit in a game that goes on without the late player (Space Truckin' with more than two
        players left): the drop is written into the record and applied to ``state``, the clock starts
        for the new seat to move, and everyone is told. False, with nothing changed, when the game
        ends instead: only one player would be left, or the game cannot drop a player.
        """
        if len(dl.playing_seats(row)) <= 2:
            return False
        trial = state.copy()
        try:
            trial.drop_seat(seat)
        except EngineError:
            return False
        if trial.is_over or trial.to_move is None:
            return False  # nobody could move at once (e.g. a draw is due): end the game as before
        notes = dl.drop(row, state, seat, now)
        mover = state.to_move
        assert mover is not None
        dl.start_clock(row, mover, now, dl.seat_zone(tx, row, mover), dl.seat_vacations(tx, row, mover))
        self._announce_drop(tx, row, state, seat, notes, graced, now)
        return True

    def _speaking_to(self, tx: Tx, email: str | None) -> AbstractContextManager[str]:
        return speaking_to(tx, email, self.config.language)

    def _send(self, tx: Tx, planned: PlannedMail, row: GameRow | None, state: State | None,
              now: datetime) -> None:
        """Through the server's one mail path, as the recipient chose."""
        if self.outgoing.deliver(tx, planned, row, state, now) == "now":
            self._queued += 1

    def _observers(self, tx: Tx, row: GameRow) -> list[str]:
        seats = {s.email for s in row.seats}
        return [e for e in tx.observers(row.id) if e not in seats and not tx.is_blocked(e)]

    def _zone(self, tx: Tx, email: str) -> ZoneInfo:
        return dl.player_zone(tx.get_player(email))

    def _policy_note(self, row: GameRow) -> list[str]:
        """In the reader's language, where a missed deadline applies 'forfeit' to a game whose
        policy is 'notify' because this server has no moderators (``deadlines.deadline_policy``)."""
        control = dl.time_control(row.record, self.config.deadlines)
        if dl.deadline_policy(control, self.config.moderators) == control["policy"]:
            return []
        return [_("This game's time control leaves a late player to the moderators ('notify'), but "
                  "this server has none, so nobody would decide: the late player forfeits, as with "
                  "'forfeit'.")]

    def _announce_grace(self, tx: Tx, row: GameRow, state: Any, seat: str, missed: datetime,
                        now: datetime) -> None:
        names = game_names(tx, row)
        for other in row.seats:
            zone = self._zone(tx, other.email)
            until = dl.format_when(row.deadline_at, zone, now)
            with self._speaking_to(tx, other.email):
                if other.seat == seat:
                    lines = [_("The deadline for your move passed at {missed}. This is your final reminder: "
                               "move by {until}, or you forfeit the game.").format(
                                   missed=dl.format_when(missed, zone), until=until),
                             *self._policy_note(row), scores_line(state, other.seat, names)]
                    planned = PlannedMail(
                        to=other.email, seat=other.seat, game_id=row.id, kind=NOTICE,
                        headline=_("Final reminder: your move in {id} (move {number}) by {until}").format(
                            id=row.id, number=state.ply + 1, until=until),
                        sections=[board_section(state, other.seat, lines)])
                else:
                    planned = PlannedMail(
                        to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                        headline=_("{player} missed the deadline in {id}").format(
                            player=who(seat, other.seat, names), id=row.id),
                        sections=[Section(lines=[_("They have 24 more hours, until {until}; then they "
                                                   "forfeit.").format(until=until),
                                                 *self._policy_note(row)])])
            self._send(tx, planned, row, state, now)

    def _announce_spend(self, tx: Tx, row: GameRow, state: State, seat: str, days: int, missed: datetime,
                        until: datetime, left: int, first: bool, now: datetime) -> None:
        """One line to the late player (each time: it is their reminder too), and the news to the
        others on the first day spent in the turn."""
        names = game_names(tx, row)
        deadline = row.deadline_at
        for other in row.seats:
            if (other.seat != seat and not first) or (other.seat == seat and not days):
                continue  # the others hear of it once a turn; the player of each day spent
            zone = self._zone(tx, other.email)
            with self._speaking_to(tx, other.email):
                new = dl.format_when(deadline, zone, now) if deadline else _("no deadline")
                if other.seat == seat:
                    planned = PlannedMail(
                        to=other.email, seat=other.seat, game_id=row.id, kind=NOTICE,
                        headline=ngettext("Your time ran out in {id}: a vacation day was spent for you",
                                          "Your time ran out in {id}: {n} vacation days were spent for you",
                                          days).format(id=row.id, n=days),
                        sections=[Section(lines=[ngettext(
                            "Your time ran out at {missed}, so {n} day of your vacation allowance was spent: "
                            "your clocks in all your games stop until {until} ({left} left this year). Move "
                            "in {id} by {deadline}.",
                            "Your time ran out at {missed}, so {n} days of your vacation allowance were "
                            "spent: your clocks in all your games stop until {until} ({left} left this "
                            "year). Move in {id} by {deadline}.", days).format(
                                missed=dl.format_when(missed, zone), n=days,
                                until=dl.format_when(until, zone), left=left, id=row.id, deadline=new)])])
                else:
                    planned = PlannedMail(
                        to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                        headline=_("{player} ran out of time in {id}: a vacation day of theirs was "
                                   "spent").format(player=who(seat, other.seat, names), id=row.id),
                        sections=[Section(lines=[_(
                            "Their clocks stop for a day at a time while their yearly allowance lasts; they "
                            "must now move by {deadline}.").format(deadline=new)])])
            self._send(tx, planned, row, state, now)

    def _announce_drop(self, tx: Tx, row: GameRow, state: State, seat: str, notes: list[str],
                       graced: bool, now: datetime) -> None:
        """Like a move's mails: "your move" (board, legal moves, deadline) for the new seat to move,
        the news for the others, and for the dropped player why they take no more turns."""
        names = game_names(tx, row)
        playing = dl.playing_seats(row)
        mover = state.to_move
        assert mover is not None and row.deadline_at is not None
        for other in row.seats:
            zone = self._zone(tx, other.email)
            dropped = who(seat, other.seat, names)
            with self._speaking_to(tx, other.email):
                late = _late(graced)
                lines = [_("{player} did not move by {late} and is dropped; the game goes on with {players}."
                           ).format(player=dropped, late=late, players=", ".join(playing)),
                         *self._policy_note(row), *notes]
                if other.seat == mover:
                    headline = _("Your move (move {number}). {player} is dropped from {id}.").format(
                        number=state.ply + 1, player=dropped, id=row.id)
                    lines.append(_("Deadline for your move: {when}.").format(
                        when=dl.format_when(row.deadline_at, zone, now)))
                    kind = TURN
                elif other.seat == seat:
                    headline = _("You are dropped from {id}: you did not move by {late}").format(
                        id=row.id, late=late)
                    lines = [_("You take no more turns; your ships and points stay in the game, but you "
                               "cannot win. You will get the result when the game ends ('board {id}' "
                               "shows it meanwhile).").format(id=row.id)]
                    kind = EVENT
                else:
                    headline = _("{player} is dropped from {id}; {mover} is to move").format(
                        player=dropped, id=row.id, mover=who(mover, other.seat, names))
                    kind = EVENT
                planned = PlannedMail(
                    to=other.email, seat=other.seat, game_id=row.id, kind=kind, headline=headline,
                    sections=[board_section(state, other.seat, lines, with_legal=other.seat != seat)])
            self._send(tx, planned, row, state, now)
        for email in self._observers(tx, row):
            with self._speaking_to(tx, email):
                planned = PlannedMail(
                    to=email, game_id=row.id, kind=EVENT, observer=True,
                    headline=_("{player} is dropped from {id} (missed {late})").format(
                        player=names.get(seat, seat), id=row.id, late=_late(graced)),
                    sections=[board_section(state, None, notes, with_legal=False)])
            self._send(tx, planned, row, state, now)

    def _announce_forfeit(self, tx: Tx, row: GameRow, state: Any, seat: str, result: dict[str, Any],
                          graced: bool, now: datetime) -> None:
        names = game_names(tx, row)

        def ranking() -> list[str]:
            if "ranking" not in result:
                return []
            totals = result.get("totals") or {}
            earlier = [s for s in dl.dropped_seats(row.record) if s != seat]
            left = [s for s in result["ranking"] if s != seat and s not in earlier]
            if earlier and len(left) == 1:
                first = _("The game ends here: only {seat} is left.").format(seat=names.label(left[0]))
            else:
                first = _("The game ends here: {game} cannot go on without a player.").format(
                    game=get_game(row.game).title)
            return [first, _("Ranking: {ranking}").format(ranking=", ".join(
                _("{seat} (forfeited)").format(seat=names.label(s)) if s == seat
                else _("{seat} {points} (dropped)").format(seat=names.label(s), points=totals.get(s, 0))
                if s in earlier else f"{names.label(s)} {totals.get(s, 0)}" for s in result["ranking"]))]

        def why(reader: str | None) -> list[str]:
            return [_("{player} did not move by {late} and forfeits game {id}.").format(
                player=who(seat, reader, names), late=_late(graced), id=row.id),
                *self._policy_note(row), *ranking()]

        for email, reader in [*((s.email, s.seat) for s in row.seats),
                              *((e, None) for e in self._observers(tx, row))]:
            with self._speaking_to(tx, email):
                planned = PlannedMail(
                    to=email, seat=reader, game_id=row.id, kind=EVENT, attach_record=reader is not None,
                    observer=reader is None, headline=result_headline(row, state, reader, names),
                    sections=[board_section(state, reader, why(reader), with_legal=False, ended=True),
                              result_section(row, state)])
            self._send(tx, planned, row, state, now)

    def _notify_moderators(self, tx: Tx, row: GameRow, state: Any, seat: str, now: datetime) -> None:
        missed = row.deadline_at
        assert missed is not None
        names = game_names(tx, row)
        for moderator in self.config.moderators:
            with self._speaking_to(tx, moderator):
                when = dl.format_when(missed, self._zone(tx, moderator))
                lines = [_("In {id} ({title}, move {number}) {player} did not move by {when}.").format(
                             id=row.id, title=get_game(row.game).title, number=state.ply + 1,
                             player=who(seat, None, names), when=when),
                         players_line(row, None, names),
                         _("The game's policy is 'notify': its clock is stopped until a moderator decides "
                           "(a new deadline, a pause, or a forfeit).")]
                self._send(tx, PlannedMail(
                    to=moderator, game_id=row.id, kind=NOTICE,
                    headline=_("Deadline passed in {id}: {seat} to move").format(
                        id=row.id, seat=get_game(row.game).seat_label(seat)),
                    sections=[Section(lines=lines)]), row, state, now)
        for other in row.seats:
            with self._speaking_to(tx, other.email):
                planned = PlannedMail(
                    to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                    headline=(_("You did not move by the deadline in {id}") if other.seat == seat
                              else _("{player} did not move by the deadline in {id}")).format(
                        player=who(seat, other.seat, names), id=row.id),
                    sections=[Section(lines=[
                        _("The moderators have been told and will decide how the game goes on; until "
                          "then a move is still accepted.")])])
            self._send(tx, planned, row, state, now)

    # --- daily digests --------------------------------------------------------------------------------

    def _daily(self, tx: Tx, email: str, now: datetime, report: RunReport) -> None:
        with self._speaking_to(tx, email):
            self._daily_mail(tx, email, now, report)

    def _daily_mail(self, tx: Tx, email: str, now: datetime, report: RunReport) -> None:
        """At most one mail a day, from DIGEST_HOUR in the player's timezone: what happened in their
        games since the last one, and the board of every game in which it is their move. The held
        lines are deleted in the same transaction as the mail is queued."""
        settings = tx.get_player(email)
        local = now.astimezone(dl.player_zone(settings))
        if local.hour < DIGEST_HOUR or not tx.claim_once(f"daily:{email}:{local.date()}", now):
            return
        items = tx.digest_items(email)
        if not items:
            return
        tx.clear_digest(email)
        by_game: dict[str, list[str]] = {}
        for game_id, headline, _when in items:
            by_game.setdefault(game_id or "", []).append(headline)
        sections = [Section(title=game_id or _("Other news"), lines=lines)
                    for game_id, lines in by_game.items()]
        yours = [row for row in tx.games_for_email(email)
                 if row.status == "active" and dl.seat_email(row, row.to_move) == email]
        for row in yours:
            state = replay_record(row.record, get_game(row.game))
            seat = row.to_move or ""
            section = board_section(state, seat, [_("Your move in {id} (move {number}); write: move {id} MOVE"
                                                    ).format(id=row.id, number=state.ply + 1)],
                                    title=_("Your move: {id}").format(id=row.id))
            number = f"(move {state.ply + 1})"  # the digest's Reply-To serves every game
            section.actions = [ActionGroup(group.label, [Action(text, f"move {row.id} {line} {number}")
                                                         for text, line in group.items], moves=group.moves)
                               for group in section.actions]
            sections.append(section)
        headline = (_("Daily digest: your move in {games}").format(games=", ".join(r.id for r in yours))
                    if yours
                    else ngettext("Daily digest: news from {n} game", "Daily digest: news from {n} games",
                                  len(by_game)).format(n=len(by_game)))
        self._send(tx, PlannedMail(to=email, kind=NOTICE, subject=f"[pbem] {headline}",
                                   headline=headline, sections=sections), None, None, now)
        report.daily += 1

    # --- reminders -------------------------------------------------------------------------------------

    def _remind(self, tx: Tx, email: str, now: datetime, report: RunReport) -> None:
        settings = tx.get_player(email)
        games = [row for row in tx.games_for_email(email)
                 if row.status == "active" and dl.seat_email(row, row.to_move) == email]
        due = [(row, hours) for row in games for hours in self._due_reminders(row, now)]
        if not due or dl.on_vacation(settings, now):
            return
        zone = dl.player_zone(settings)
        today = now.astimezone(zone).date().isoformat()
        last = settings.get("digest") or {}
        if last.get("date") == today:
            listed = last.get("games") or {}
            covered = [(row, h) for row, h in due if listed.get(row.id) == dl.turn_key(row)]
            self._mark_reminded(tx, covered, now)
            return  # the rest waits for tomorrow's digest: one reminder mail a day
        if not tx.claim_once(f"digest:{email}:{today}", now):
            return
        report.reminders += self._mark_reminded(tx, due, now)
        games.sort(key=lambda r: (r.deadline_at is None, r.deadline_at or now, r.id))
        self._send_digest(tx, email, games, zone, now)
        settings["digest"] = {"date": today, "at": now.isoformat(),
                              "games": {row.id: dl.turn_key(row) for row in games}}
        tx.set_player(email, settings)
        report.digests += 1

    def _due_reminders(self, row: GameRow, now: datetime) -> list[float]:
        if row.deadline_at is None or row.deadline_at <= now:
            return []
        sent = (row.record.get("clock") or {}).get("reminded") or []
        before, turn = dl.before_deadline(row, now)
        return [h for h in sorted(self.config.deadlines.reminders_hours, reverse=True)
                if h not in sent and timedelta(hours=h) < turn and before <= timedelta(hours=h)]

    def _mark_reminded(self, tx: Tx, due: list[tuple[GameRow, float]], now: datetime) -> int:
        done = 0
        for row, hours in due:
            gen = dl.generation(row)
            key = f"remind:{row.id}:{dl.turn_key(row)}:{hours:g}" + (f":{gen}" if gen else "")
            if tx.claim_once(key, now):
                done += 1
            sent = dl.clock(row).setdefault("reminded", [])
            if hours not in sent:
                sent.append(hours)
        for row in {id(r): r for r, _h in due}.values():
            tx.save_game(row)
        return done

    def _send_digest(self, tx: Tx, email: str, games: list[GameRow], zone: ZoneInfo, now: datetime) -> None:
        with self._speaking_to(tx, email):
            planned, row, state = self._digest_mail(tx, email, games, zone, now)
        self._send(tx, planned, row, state, now)

    def _digest_mail(self, tx: Tx, email: str, games: list[GameRow], zone: ZoneInfo, now: datetime):
        lines = []
        for row in games:
            when = (_("deadline {when}").format(when=dl.format_when(row.deadline_at, zone, now))
                    if row.deadline_at else _("clock paused") if dl.is_paused(row) else _("no deadline"))
            names = game_names(tx, row)
            others = ", ".join(names.get(s.seat, s.seat) for s in row.seats if s.seat != row.to_move)
            lines.append(_("{id} ({game}, you play {seat} against {players}), move {number}: {when}.").format(
                id=row.id, game=get_game(row.game).title, seat=names.label(row.to_move or ""), players=others,
                number=dl.current_ply(row.record) + 1, when=when))
            bank = dl.bank_line(row, now, zone)
            if bank:
                lines.append(bank)
        lines.append(_("Times are in your timezone, {zone} (change it with: timezone Area/City). Away? "
                       "'vacation FROM..TO' stops your clocks.").format(zone=zone.key))
        if len(games) == 1:
            row = games[0]
            seat = row.to_move or ""
            state = replay_record(row.record, get_game(row.game))
            return PlannedMail(
                to=email, seat=seat, game_id=row.id, kind=NOTICE,
                headline=_("Reminder: your move in {id} (move {number})").format(
                    id=row.id, number=state.ply + 1),
                sections=[board_section(state, seat, lines)]), row, state
        lines.append(_("To move, reply to the latest mail of the game, or send 'board GAME' to get it "
                       "again."))
        headline = ngettext("Reminder: your move in {n} game", "Reminder: your move in {n} games",
                            len(games)).format(n=len(games))
        return PlannedMail(to=email, kind=NOTICE, subject=f"[pbem] {headline}", headline=headline,
                           sections=[Section(lines=lines)]), None, None


def _late(graced: bool) -> str:
    return _("the deadline and the 24-hour grace period") if graced else _("the deadline")


__all__ = ["HEARTBEAT", "RunReport", "Scheduler"]
